/* SPDX-License-Identifier: MIT */
/*
 * test_snapshot_sets.c - ark_idset_save/load and ark_idmap_save/load:
 * round trips, continuation after a load, malformed input, allocation
 * failure.
 */
#include "ark/ark.h"
#include "harness.h"
#include "snapshot_mem.h"

#include <stdlib.h>

/* ---- id sets ------------------------------------------------------------ */

/* Fill s with n ids of a shape: 0 dense (gaps 1-3), 1 sparse random, 2
 * runs of consecutive ids far apart, 3 extremes (0 and UINT32_MAX). */
static void fill_set(ark_idset *s, int shape, size_t n, uint64_t *state) {
    uint32_t id = 1000;
    for (size_t k = 0; k < n; k++) {
        switch (shape) {
        case 0:
            id += 1 + (uint32_t)harness_below(state, 3);
            (void)ark_idset_insert(s, id);
            break;
        case 1:
            (void)ark_idset_insert(s, (uint32_t)harness_rand(state));
            break;
        case 2:
            id += k % 500 == 0 ? 1u << 20 : 1;
            (void)ark_idset_insert(s, id);
            break;
        default:
            (void)ark_idset_insert(s, k % 2 ? UINT32_MAX - (uint32_t)k
                                            : (uint32_t)k);
            break;
        }
    }
}

static bool same_set(const ark_idset *a, const ark_idset *b) {
    if (ark_idset_count(a) != ark_idset_count(b)) {
        return false;
    }
    for (size_t i = 0; i < ark_idset_count(a); i++) {
        if (ark_idset_at(a, i) != ark_idset_at(b, i)) {
            return false;
        }
    }
    return true;
}

TEST(idset_round_trip_and_continuation) {
    uint64_t state = harness_seed();
    for (int shape = 0; shape < 4; shape++) {
        for (size_t n = 0; n <= 3000; n += 1000) {
            ark_idset *a, *b;
            CHECK_OK(ark_idset_create(&a, NULL));
            fill_set(a, shape, n, &state);
            membuf m = {0};
            ark_writer w = mem_writer(&m);
            CHECK_OK(ark_idset_save(a, &w));
            ark_reader r = mem_reader(&m);
            CHECK_OK(ark_idset_load(&b, NULL, &r));
            CHECK_EQ(m.pos, m.len); /* exactly the snapshot's bytes */
            CHECK(same_set(a, b));
            if (shape == 0 && n > 0) {
                /* dense ids: about one byte each */
                CHECK(m.len < 200 + n * 2);
            }
            /* The same operations on both keep them equal. */
            for (int k = 0; k < 500; k++) {
                uint32_t id = (uint32_t)harness_below(&state, 10000);
                if (k % 2) {
                    CHECK_EQ(ark_idset_insert(a, id), ark_idset_insert(b, id));
                } else {
                    CHECK_EQ(ark_idset_remove(a, id), ark_idset_remove(b, id));
                }
            }
            CHECK(same_set(a, b));
            mem_free(&m);
            ark_idset_destroy(a);
            ark_idset_destroy(b);
        }
    }
}

/* ---- id maps ------------------------------------------------------------ */

static bool same_map(const ark_idmap *a, const ark_idmap *b) {
    if (ark_idmap_count(a) != ark_idmap_count(b)) {
        return false;
    }
    for (ark_idmap_iter it = ark_idmap_iter_begin(a); ark_idmap_iter_valid(&it);
         ark_idmap_iter_next(&it)) {
        uint64_t v;
        if (!ark_idmap_get(b, it.key, &v) || v != it.value) {
            return false;
        }
    }
    return true;
}

TEST(idmap_round_trip_and_continuation) {
    uint64_t state = harness_seed();
    for (size_t n = 0; n <= 4000; n += 2000) {
        ark_idmap *a, *b;
        CHECK_OK(ark_idmap_create(&a, NULL));
        CHECK_OK(ark_idmap_put(a, 0, 7));
        CHECK_OK(ark_idmap_put(a, UINT64_MAX, 8));
        for (size_t k = 0; k < n; k++) {
            CHECK_OK(ark_idmap_put(a, harness_rand(&state), k));
        }
        membuf m = {0};
        ark_writer w = mem_writer(&m);
        CHECK_OK(ark_idmap_save(a, &w));
        ark_reader r = mem_reader(&m);
        CHECK_OK(ark_idmap_load(&b, NULL, &r));
        CHECK_EQ(m.pos, m.len);
        CHECK(same_map(a, b) && same_map(b, a));
        for (int k = 0; k < 500; k++) {
            uint64_t key = harness_below(&state, 64);
            CHECK_EQ(ark_idmap_insert(a, key, k), ark_idmap_insert(b, key, k));
            CHECK_EQ(ark_idmap_remove(a, key + 1),
                     ark_idmap_remove(b, key + 1));
        }
        CHECK(same_map(a, b) && same_map(b, a));
        mem_free(&m);
        ark_idmap_destroy(a);
        ark_idmap_destroy(b);
    }
}

/* ---- malformed input ----------------------------------------------------- */

/* Load m's bytes as an idset (kind 0) or an idmap (kind 1); true on
 * ARK_OK (the container is checked and freed). Any other status must be
 * one a loader may give. */
static bool try_load(membuf *m, int kind, ark_status *st) {
    ark_reader r = mem_reader(m);
    if (kind == 0) {
        ark_idset *s = NULL;
        *st = ark_idset_load(&s, NULL, &r);
        if (*st == ARK_OK) {
            for (size_t i = 1; i < ark_idset_count(s); i++) {
                if (ark_idset_at(s, i - 1) >= ark_idset_at(s, i)) {
                    *st = ARK_EINVAL; /* flags an unsorted load */
                }
            }
            ark_idset_destroy(s);
        }
    } else {
        ark_idmap *mp = NULL;
        *st = ark_idmap_load(&mp, NULL, &r);
        ark_idmap_destroy(mp);
    }
    return *st == ARK_OK;
}

static void small_snapshots(membuf *set, membuf *map) {
    ark_idset *s;
    ark_idmap *m;
    if (ark_idset_create(&s, NULL) != ARK_OK ||
        ark_idmap_create(&m, NULL) != ARK_OK) {
        return;
    }
    for (uint32_t id = 5; id < 400; id += 1 + id % 3) {
        (void)ark_idset_insert(s, id);
        (void)ark_idmap_put(m, id, (uint64_t)id * 3);
    }
    (void)ark_idset_insert(s, 1u << 30);
    ark_writer w1 = mem_writer(set), w2 = mem_writer(map);
    (void)ark_idset_save(s, &w1);
    (void)ark_idmap_save(m, &w2);
    ark_idset_destroy(s);
    ark_idmap_destroy(m);
}

TEST(malformed_input_gives_a_status) {
    membuf snap[2] = {{0}, {0}};
    small_snapshots(&snap[0], &snap[1]);
    CHECK(snap[0].len > 0 && snap[1].len > 0);
    uint64_t state = harness_seed();
    for (int kind = 0; kind < 2; kind++) {
        membuf *m = &snap[kind];
        ark_status st;
        CHECK(try_load(m, kind, &st));
        /* Every truncation. */
        size_t full = m->len;
        for (size_t len = 0; len < full; len++) {
            m->len = len;
            CHECK(!try_load(m, kind, &st));
            CHECK_STATUS(st, ARK_ECORRUPT);
        }
        m->len = full;
        /* Every byte flipped: caught (the checksums), never a crash. */
        for (size_t i = 0; i < full; i++) {
            unsigned char bit = (unsigned char)(1u << harness_below(&state, 8));
            m->data[i] ^= bit;
            CHECK(!try_load(m, kind, &st));
            CHECK_STATUS(st, ARK_ECORRUPT);
            m->data[i] ^= bit;
        }
        /* The other kind's snapshot. */
        CHECK(!try_load(&snap[1 - kind], kind, &st));
        CHECK_STATUS(st, ARK_ECORRUPT);
    }
    /* Random bytes. */
    membuf junk = {0};
    unsigned char buf[300];
    for (int k = 0; k < 2000; k++) {
        size_t n = harness_below(&state, sizeof buf);
        for (size_t i = 0; i < n; i++) {
            buf[i] = (unsigned char)harness_rand(&state);
        }
        junk.len = 0;
        ark_writer w = mem_writer(&junk);
        CHECK_OK(w.write(w.ctx, buf, n));
        ark_status st;
        CHECK(!try_load(&junk, k % 2, &st));
    }
    mem_free(&junk);
    mem_free(&snap[0]);
    mem_free(&snap[1]);
}

TEST(allocation_failure_leaves_nothing) {
    membuf snap[2] = {{0}, {0}};
    small_snapshots(&snap[0], &snap[1]);
    for (int kind = 0; kind < 2; kind++) {
        uint64_t failures = 0;
        for (uint64_t k = 1;; k++) {
            test_allocator ta;
            test_allocator_init(&ta);
            test_allocator_fail_at(&ta, k);
            ark_reader r = mem_reader(&snap[kind]);
            ark_status st;
            if (kind == 0) {
                ark_idset *s = NULL;
                st = ark_idset_load(&s, &ta.base, &r);
                CHECK(st == ARK_OK || s == NULL);
                ark_idset_destroy(s);
            } else {
                ark_idmap *m = NULL;
                st = ark_idmap_load(&m, &ta.base, &r);
                CHECK(st == ARK_OK || m == NULL);
                ark_idmap_destroy(m);
            }
            CHECK_EQ(ta.live_blocks, 0);
            if (ta.failures == 0) {
                CHECK_OK(st);
                break;
            }
            CHECK_STATUS(st, ARK_ENOMEM);
            failures++;
        }
        CHECK(failures > 0);
    }
    mem_free(&snap[0]);
    mem_free(&snap[1]);
}
