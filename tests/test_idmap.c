/* SPDX-License-Identifier: MIT */
/*
 * test_idmap.c - ark_idmap: every function, special keys, a randomized
 * differential test against an array model, colliding keys, floods of keys
 * chosen against a known seed, seeds and reproducibility, allocation
 * failure during growth, reserve and churn.
 */
#include "ark/idmap.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The group after g on a probe sequence at step (1, 2, ...). */
static size_t next_group(const ark_idmap *m, size_t g, size_t step) {
    return (g + step) & m->gmask;
}

/* Check the table invariants: count, tags, and that every key lies within
 * ARK_IDMAP_MAX_PROBE groups of its probe sequence with the overflow bit
 * set in every group it passes. Returns the longest probe (in groups) seen,
 * or SIZE_MAX when an invariant fails. */
static size_t validate(const ark_idmap *m) {
    size_t full = 0, worst = 0;
    if (ark_idmap_validate(m) != ARK_OK) {
        return SIZE_MAX;
    }
    if (m->groups == 0) {
        return m->count == 0 && m->gmask == 0 ? 0 : SIZE_MAX;
    }
    if (m->gmask != m->groups - 1 || (m->groups & m->gmask) != 0 ||
        m->count > m->max_load || m->mul != ark__idmap_mul(m->seed)) {
        return SIZE_MAX;
    }
    for (size_t i = 0; i < m->groups * ARK__IDMAP_SLOTS; i++) {
        size_t g = i / ARK__IDMAP_SLOTS;
        uint8_t c = m->ctrl[g * 16 + i % ARK__IDMAP_SLOTS];
        if (c == 0) {
            continue;
        }
        full++;
        uint64_t h = ark__idmap_hash_in(m, m->slots[i].key);
        if (c != ark__idmap_tag(h)) {
            return SIZE_MAX;
        }
        size_t p = (size_t)h & m->gmask, probes = 1;
        for (size_t step = 1; p != g; step++) {
            if ((m->ctrl[p * 16 + 15] & ark__idmap_ofw(h)) == 0 ||
                probes == ARK_IDMAP_MAX_PROBE) {
                return SIZE_MAX;
            }
            p = next_group(m, p, step);
            probes++;
        }
        if (ark__idmap_find(m, m->slots[i].key) != &m->slots[i]) {
            return SIZE_MAX;
        }
        worst = probes > worst ? probes : worst;
    }
    return full == m->count ? worst : SIZE_MAX;
}

/* Return n distinct keys whose home group is 0 in every table of at most
 * 2^bits groups under seed. */
static uint64_t *colliding_keys(uint64_t seed, size_t n, unsigned bits,
                                uint64_t *state) {
    uint64_t *keys = malloc(n * sizeof *keys);
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    size_t got = 0;
    uint64_t k = harness_rand(state);
    while (got < n) {
        k++;
        if ((ark__idmap_hash(seed, ark__idmap_mul(seed), k) & mask) == 0) {
            keys[got++] = k;
        }
    }
    return keys;
}

TEST(create_destroy) {
    ark_idmap *m = NULL;
    CHECK_OK(ark_idmap_create(&m, NULL));
    CHECK(m != NULL);
    CHECK_EQ(ark_idmap_count(m), 0);
    CHECK(!ark_idmap_get(m, 0, NULL));
    CHECK(!ark_idmap_remove(m, 7));
    ark_idmap_destroy(m);
    ark_idmap_destroy(NULL);

    ark_allocator half = {NULL, NULL, NULL};
    m = NULL;
    CHECK_STATUS(ark_idmap_create(&m, &half), ARK_EINVAL);
    CHECK(m == NULL);

    test_allocator ta;
    test_allocator_init(&ta);
    test_allocator_fail_at(&ta, 1);
    CHECK_STATUS(ark_idmap_create(&m, &ta.base), ARK_ENOMEM);
    CHECK(m == NULL);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_OK(ark_idmap_create(&m, &ta.base));
    CHECK_EQ(ta.live_blocks, 1);
    CHECK_OK(ark_idmap_put(m, 1, 2));
    ark_idmap_destroy(m);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

TEST(put_get_overwrite) {
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    for (uint64_t k = 0; k < 1000; k++) {
        CHECK_OK(ark_idmap_put(m, k * 7919, k + 100));
    }
    CHECK_EQ(ark_idmap_count(m), 1000);
    for (uint64_t k = 0; k < 1000; k++) {
        uint64_t v = 0;
        CHECK(ark_idmap_get(m, k * 7919, &v));
        CHECK_EQ(v, k + 100);
        CHECK(ark_idmap_get(m, k * 7919, NULL));
        CHECK(!ark_idmap_get(m, k * 7919 + 1, &v));
        CHECK_EQ(v, k + 100); /* untouched on a miss */
    }
    for (uint64_t k = 0; k < 1000; k += 2) {
        CHECK_OK(ark_idmap_put(m, k * 7919, k));
    }
    CHECK_EQ(ark_idmap_count(m), 1000);
    for (uint64_t k = 0; k < 1000; k++) {
        uint64_t v;
        CHECK(ark_idmap_get(m, k * 7919, &v));
        CHECK_EQ(v, k % 2 == 0 ? k : k + 100);
    }
    CHECK(validate(m) != SIZE_MAX);
    ark_idmap_destroy(m);
}

TEST(get_ptr) {
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    CHECK(ark_idmap_get_ptr(m, 5) == NULL);
    CHECK_OK(ark_idmap_put(m, 5, 50));
    uint64_t *p = ark_idmap_get_ptr(m, 5);
    CHECK(p != NULL);
    CHECK_EQ(*p, 50);
    *p = 51;
    uint64_t v;
    CHECK(ark_idmap_get(m, 5, &v));
    CHECK_EQ(v, 51);
    CHECK(ark_idmap_get_ptr(m, 6) == NULL);
    ark_idmap_destroy(m);
}

/* find returns the address get_ptr returns, through a const map, and
 * NULL for an absent key: in an empty map, past the home group, after a
 * removal and after growth. */
TEST(find) {
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    const ark_idmap *cm = m;
    CHECK(ark_idmap_find(cm, 0) == NULL);
    CHECK(ark_idmap_find(cm, UINT64_MAX) == NULL);
    for (uint64_t k = 0; k < 5000; k++) {
        CHECK_OK(ark_idmap_put(m, k * 0x9e3779b97f4a7c15ull, k + 1));
    }
    for (uint64_t k = 0; k < 5000; k++) {
        uint64_t key = k * 0x9e3779b97f4a7c15ull;
        const uint64_t *p = ark_idmap_find(cm, key);
        CHECK(p != NULL && p == ark_idmap_get_ptr(m, key));
        CHECK_EQ(p != NULL ? *p : 0, k + 1);
        CHECK(ark_idmap_find(cm, key + 1) == NULL);
    }
    CHECK(ark_idmap_remove(m, 0x9e3779b97f4a7c15ull));
    CHECK(ark_idmap_find(cm, 0x9e3779b97f4a7c15ull) == NULL);
    ark_idmap_destroy(m);
}

TEST(special_keys) {
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    const uint64_t keys[] = {0, UINT64_MAX, 1, UINT64_MAX - 1,
                             (uint64_t)1 << 63};
    for (size_t i = 0; i < 5; i++) {
        CHECK(!ark_idmap_get(m, keys[i], NULL));
        CHECK_OK(ark_idmap_put(m, keys[i], ~keys[i]));
    }
    CHECK_EQ(ark_idmap_count(m), 5);
    for (size_t i = 0; i < 5; i++) {
        uint64_t v;
        CHECK(ark_idmap_get(m, keys[i], &v));
        CHECK_EQ(v, ~keys[i]);
    }
    /* Values may be anything too, the "empty" junk included. */
    CHECK_OK(ark_idmap_put(m, 0, 0));
    uint64_t v = 1;
    CHECK(ark_idmap_get(m, 0, &v));
    CHECK_EQ(v, 0);
    size_t seen = 0;
    for (ark_idmap_iter it = ark_idmap_iter_begin(m); ark_idmap_iter_valid(&it);
         ark_idmap_iter_next(&it)) {
        seen++;
    }
    CHECK_EQ(seen, 5);
    CHECK(ark_idmap_remove(m, 0));
    CHECK(!ark_idmap_get(m, 0, NULL));
    CHECK(ark_idmap_remove(m, UINT64_MAX));
    CHECK(!ark_idmap_remove(m, UINT64_MAX));
    CHECK(!ark_idmap_get(m, UINT64_MAX, NULL));
    CHECK(ark_idmap_get(m, 1, NULL));
    CHECK_EQ(ark_idmap_count(m), 3);
    CHECK(validate(m) != SIZE_MAX);
    ark_idmap_destroy(m);
}

/* The tag words and the group compare: entry t of the table is four
 * copies of the control byte of a hash with top byte t (t, or 1 for 0),
 * and matching a group with a word finds exactly the bytes equal to its
 * byte, against a byte-by-byte model on random groups. */
TEST(tag_words) {
    for (unsigned t = 0; t < 256; t++) {
        uint32_t w = ark__idmap_tagword[t];
        uint8_t c = (uint8_t)(t == 0 ? 1 : t);
        CHECK_EQ(w, c * 0x01010101u);
        CHECK_EQ(ark__idmap_tag((uint64_t)t << 56), c);
        CHECK_EQ(ark__idmap_tagw(((uint64_t)t << 56) | 0xabcdefu), w);
    }
    uint64_t state = harness_seed();
    for (int round = 0; round < 2000; round++) {
        _Alignas(16) uint8_t g[16]; /* as control words are */
        for (int i = 0; i < 16; i++) {
            /* few distinct bytes, so that matches are common */
            g[i] = (uint8_t)(harness_rand(&state) % 4);
        }
        for (unsigned c = 0; c < 4; c++) {
            ark__idmap_mask want = 0;
            for (int i = 0; i < 16; i++) {
                want |= (ark__idmap_mask)(g[i] == c) << i;
            }
            uint32_t w = c == 0 ? 0 : ark__idmap_tagword[c];
            CHECK_EQ(ark__idmap_match(ark__idmap_load(g), w), want);
        }
    }
}

/* Keys sharing one home group spill along its probe sequence: get, take
 * and remove find them there (the out-of-line part of a lookup) and clear
 * the right control byte, against a model of which keys are left. */
TEST(take_past_home) {
    uint64_t state = harness_seed();
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    ark_idmap_set_seed(m, harness_rand(&state));
    CHECK_OK(ark_idmap_reserve(m, 1000)); /* 128 groups */
    const size_t n = 50;                  /* four groups' worth */
    uint64_t *keys = colliding_keys(m->seed, n, 7, &state);
    bool *in = calloc(n, sizeof *in);
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(ark_idmap_insert(m, keys[i], i + 1));
        in[i] = true;
    }
    CHECK(validate(m) >= 4);
    for (size_t round = 0; round < 4 * n; round++) {
        size_t i = (size_t)(harness_rand(&state) % n);
        uint64_t v = 0;
        if (in[i]) {
            if (round % 2 == 0) {
                CHECK(ark_idmap_take(m, keys[i], &v));
                CHECK_EQ(v, i + 1);
            } else {
                CHECK(ark_idmap_remove(m, keys[i]));
            }
            in[i] = false;
        } else {
            CHECK(!ark_idmap_take(m, keys[i], &v));
            CHECK_OK(ark_idmap_insert(m, keys[i], i + 1));
            in[i] = true;
        }
        for (size_t j = 0; j < n; j++) {
            CHECK_EQ(ark_idmap_get(m, keys[j], &v), in[j]);
            CHECK(!in[j] || v == j + 1);
        }
        CHECK(validate(m) != SIZE_MAX);
    }
    free(in);
    free(keys);
    ark_idmap_destroy(m);
}

TEST(remove_and_count) {
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    for (uint64_t k = 1; k <= 500; k++) {
        CHECK_OK(ark_idmap_put(m, k, k));
    }
    for (uint64_t k = 1; k <= 500; k += 3) {
        CHECK(ark_idmap_remove(m, k));
        CHECK(!ark_idmap_remove(m, k));
    }
    CHECK(!ark_idmap_remove(m, 501));
    CHECK_EQ(ark_idmap_count(m), 500 - 167);
    for (uint64_t k = 1; k <= 500; k++) {
        CHECK_EQ(ark_idmap_get(m, k, NULL), (k - 1) % 3 != 0);
    }
    CHECK(validate(m) != SIZE_MAX);
    ark_idmap_destroy(m);
}

TEST(clear_keeps_table) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, &ta.base));
    ark_idmap_clear(m); /* nothing allocated yet */
    CHECK_EQ(ark_idmap_count(m), 0);
    for (uint64_t k = 0; k < 3000; k++) {
        CHECK_OK(ark_idmap_put(m, k, k));
    }
    uint64_t allocs = ta.allocs;
    ark_idmap_clear(m);
    CHECK_EQ(ark_idmap_count(m), 0);
    ark_idmap_iter it = ark_idmap_iter_begin(m);
    CHECK(!ark_idmap_iter_valid(&it));
    for (uint64_t k = 0; k < 3000; k++) {
        CHECK(!ark_idmap_get(m, k, NULL));
    }
    for (uint64_t k = 5000; k < 8000; k++) {
        CHECK_OK(ark_idmap_put(m, k, k));
    }
    CHECK_EQ(ta.allocs, allocs); /* the table was reused */
    CHECK_EQ(ark_idmap_count(m), 3000);
    CHECK(validate(m) != SIZE_MAX);
    ark_idmap_destroy(m);
    CHECK_EQ(ta.live_blocks, 0);
}

TEST(reserve_prevents_allocation) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, &ta.base));
    const size_t sizes[] = {1, 14, 15, 100, 1000, 4096, 10000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        ark_idmap_clear(m);
        CHECK_OK(ark_idmap_reserve(m, n));
        uint64_t allocs = ta.allocs;
        size_t cap = m->groups;
        CHECK_OK(ark_idmap_reserve(m, n / 2)); /* smaller: no-op */
        for (size_t k = 0; k < n; k++) {
            CHECK_OK(ark_idmap_put(m, k * 0x9e3779b97f4a7c15ull, k));
        }
        CHECK_EQ(ta.allocs, allocs);
        CHECK_EQ(m->groups, cap);
        CHECK_EQ(ark_idmap_count(m), n);
    }
    /* Reserve on a full map keeps the entries. */
    CHECK_OK(ark_idmap_reserve(m, 50000));
    CHECK_EQ(ark_idmap_count(m), 10000);
    for (size_t k = 0; k < 10000; k++) {
        uint64_t v;
        CHECK(ark_idmap_get(m, k * 0x9e3779b97f4a7c15ull, &v));
        CHECK_EQ(v, k);
    }
    /* Impossible sizes fail cleanly. */
    size_t cap = m->groups;
    CHECK_STATUS(ark_idmap_reserve(m, SIZE_MAX), ARK_ENOMEM);
    CHECK_STATUS(ark_idmap_reserve(m, SIZE_MAX / 8), ARK_ENOMEM);
    CHECK_EQ(m->groups, cap);
    CHECK_EQ(ark_idmap_count(m), 10000);
    /* An allocation failure in reserve leaves the map unchanged. */
    test_allocator_fail_at(&ta, 1);
    CHECK_STATUS(ark_idmap_reserve(m, 200000), ARK_ENOMEM);
    CHECK_EQ(m->groups, cap);
    CHECK(ark_idmap_get(m, 0, NULL));
    CHECK(validate(m) != SIZE_MAX);
    ark_idmap_destroy(m);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

typedef struct visit_ctx {
    const uint64_t *keys;
    uint8_t *seen;
    size_t n, calls, stop_after;
    int bad;
} visit_ctx;

static bool visit(uint64_t key, uint64_t value, void *ud) {
    visit_ctx *c = ud;
    c->calls++;
    /* keys[i] = i * 3 + 1 maps to value i. */
    if (value >= c->n || c->keys[value] != key || c->seen[value]++ != 0) {
        c->bad = 1;
    }
    return c->calls != c->stop_after;
}

TEST(iteration_visits_each_once) {
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    ark_idmap_iter it0 = ark_idmap_iter_begin(m);
    CHECK(!ark_idmap_iter_valid(&it0));
    const size_t n = 5000;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint8_t *seen = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        keys[i] = i == 0 ? 0 : i == 1 ? UINT64_MAX : i * 3 + 1;
        CHECK_OK(ark_idmap_put(m, keys[i], i));
    }
    for (size_t i = 0; i < n; i += 7) { /* holes and shifted runs */
        CHECK(ark_idmap_remove(m, keys[i]));
        seen[i] = 1;
    }
    size_t live = ark_idmap_count(m), calls = 0;
    for (ark_idmap_iter it = ark_idmap_iter_begin(m); ark_idmap_iter_valid(&it);
         ark_idmap_iter_next(&it)) {
        CHECK(it.value < n);
        CHECK_EQ(keys[it.value], it.key);
        CHECK_EQ(seen[it.value], 0);
        seen[it.value] = 2;
        calls++;
    }
    CHECK_EQ(calls, live);
    for (size_t i = 0; i < n; i++) {
        seen[i] = i % 7 == 0;
    }
    visit_ctx c = {keys, seen, n, 0, 0, 0};
    ark_idmap_each(m, visit, &c);
    CHECK_EQ(c.calls, live);
    CHECK_EQ(c.bad, 0);
    memset(seen, 0, n);
    visit_ctx stop = {keys, seen, n, 0, 10, 0};
    ark_idmap_each(m, visit, &stop);
    CHECK_EQ(stop.calls, 10);
    CHECK_EQ(stop.bad, 0);
    free(keys);
    free(seen);
    ark_idmap_destroy(m);
}

/* One phase of the differential test: keys drawn from keys[0..n), the
 * model is present[] and value[] indexed like keys. */
static void run_model(ark_idmap *m, const uint64_t *keys, size_t n, size_t ops,
                      uint64_t *state) {
    uint8_t *present = calloc(n, 1);
    uint64_t *value = calloc(n, sizeof *value);
    size_t count = 0;
    ark_idmap_clear(m);
    for (size_t op = 0; op < ops; op++) {
        size_t r = (size_t)harness_below(state, n);
        uint64_t k = keys[r];
        unsigned what = (unsigned)harness_below(state, 100);
        if (what < 25) {
            uint64_t v = harness_rand(state);
            CHECK_OK(ark_idmap_put(m, k, v));
            count += !present[r];
            present[r] = 1;
            value[r] = v;
        } else if (what < 40) {
            uint64_t v = harness_rand(state);
            CHECK_STATUS(ark_idmap_insert(m, k, v),
                         present[r] ? ARK_EEXIST : ARK_OK);
            if (!present[r]) { /* a present key keeps its value */
                count++;
                present[r] = 1;
                value[r] = v;
            }
        } else if (what < 55) {
            CHECK_EQ(ark_idmap_remove(m, k), present[r]);
            count -= present[r];
            present[r] = 0;
        } else if (what < 70) {
            uint64_t old = 12345;
            bool got = ark_idmap_take(m, k, what % 2 ? &old : NULL);
            CHECK_EQ(got, present[r]);
            if (what % 2) {
                CHECK_EQ(old, present[r] ? value[r] : 12345);
            }
            count -= present[r];
            present[r] = 0;
        } else if (what < 99) {
            uint64_t v = 0;
            CHECK_EQ(ark_idmap_get(m, k, &v), present[r]);
            if (present[r]) {
                CHECK_EQ(v, value[r]);
            }
        } else if (harness_below(state, 100) == 0) {
            CHECK(validate(m) != SIZE_MAX);
            size_t seen = 0;
            for (ark_idmap_iter it = ark_idmap_iter_begin(m);
                 ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {
                seen++;
                uint64_t *p = ark_idmap_get_ptr(m, it.key);
                CHECK(p != NULL && *p == it.value);
            }
            CHECK_EQ(seen, count);
        } else if (harness_below(state, 1000) == 0) {
            ark_idmap_clear(m);
            memset(present, 0, n);
            count = 0;
        } else {
            CHECK_OK(ark_idmap_reserve(m, (size_t)harness_below(state, n)));
        }
        CHECK_EQ(ark_idmap_count(m), count);
    }
    for (size_t r = 0; r < n; r++) {
        uint64_t v = 0;
        CHECK_EQ(ark_idmap_get(m, keys[r], &v), present[r]);
        const uint64_t *p = ark_idmap_find(m, keys[r]);
        CHECK_EQ(p != NULL, present[r]);
        if (present[r]) {
            CHECK_EQ(v, value[r]);
            CHECK_EQ(p != NULL ? *p : 0, value[r]);
        }
    }
    CHECK(validate(m) != SIZE_MAX);
    free(present);
    free(value);
}

TEST(differential_vs_model) {
    uint64_t state = harness_seed();
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    const size_t n = 4096;
    uint64_t *keys = malloc(n * sizeof *keys);
    /* Sequential keys from 0, random keys with the extremes, strided keys,
     * and keys that all share one home slot under the initial seed. */
    for (size_t i = 0; i < n; i++) {
        keys[i] = i;
    }
    run_model(m, keys, n, 400000, &state);
    for (size_t i = 0; i < n; i++) {
        keys[i] = harness_rand(&state);
    }
    keys[0] = 0;
    keys[1] = UINT64_MAX;
    run_model(m, keys, n, 300000, &state);
    for (size_t i = 0; i < n; i++) {
        keys[i] = (uint64_t)i << 40;
    }
    run_model(m, keys, n, 200000, &state);
    free(keys);
    ark_idmap_clear(m);
    keys = colliding_keys(m->seed, 384, 12, &state);
    run_model(m, keys, 384, 150000, &state);
    free(keys);
    ark_idmap_destroy(m);
}

/* Growth in place: with the C library's allocator and virtual memory, a
 * table past 64 KiB of slots lies in a reservation and grows there. Every
 * entry keeps its value through each growth, the invariants hold after
 * it, and the slots stay where they are; then the model test on a map
 * that grows in place as it fills (and by reserve). */
TEST(growth_in_place) {
    uint64_t state = harness_seed();
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    ark_idmap_set_seed(m, harness_rand(&state));
    const size_t n = 60000; /* 8192 groups: 512 -> 8192 in place */
    uint64_t *keys = malloc(n * sizeof *keys);
    uint64_t salt = harness_rand(&state);
    size_t groups = 0, in_place = 0;
    const ark__idmap_slot *slots = NULL;
    for (size_t i = 0; i < n; i++) {
        keys[i] = (i * 0x9e3779b97f4a7c15ull) ^ salt; /* distinct */
        CHECK_OK(ark_idmap_insert(m, keys[i], i));
        if (m->groups == groups) {
            continue;
        }
        in_place += m->region != NULL && m->slots == slots;
        groups = m->groups;
        slots = m->slots;
        CHECK(validate(m) != SIZE_MAX);
        for (size_t j = 0; j <= i; j++) {
            uint64_t v = 0;
            CHECK(ark_idmap_get(m, keys[j], &v));
            CHECK_EQ(v, j);
        }
    }
    CHECK_EQ(ark_idmap_count(m), n);
    if (m->use_region) {
        CHECK(in_place >= 3);
    }
    ark_idmap_destroy(m);
    CHECK_OK(ark_idmap_create(&m, NULL));
    for (size_t i = 0; i < 40000; i++) {
        keys[i] = harness_rand(&state);
    }
    run_model(m, keys, 40000, harness_scaled(200000), &state);
    ark_idmap_destroy(m);
    free(keys);
}

TEST(colliding_keys_reseed) {
    uint64_t state = harness_seed();
    test_allocator ta;
    test_allocator_init(&ta);
    ark_idmap *m, *a, *b;
    CHECK_OK(ark_idmap_create(&m, &ta.base));
    CHECK_OK(ark_idmap_create(&a, NULL));
    CHECK_OK(ark_idmap_create(&b, NULL));
    const uint64_t seed0 = 0x243f6a8885a308d3ull;
    ark_idmap_set_seed(m, seed0);
    ark_idmap_set_seed(a, seed0);
    ark_idmap_set_seed(b, seed0);
    const size_t n = 2000;
    uint64_t *keys = colliding_keys(seed0, n, 12, &state);
    CHECK_OK(ark_idmap_reserve(m, n)); /* 256 groups: one home group */
    CHECK_OK(ark_idmap_reserve(a, n));
    CHECK_OK(ark_idmap_reserve(b, n));
    CHECK_EQ(m->groups, 256);
    /* With memory, the map re-seeds once the keys probe far more often
     * than random keys would: soon after 8 groups' worth. */
    size_t changed_at = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(ark_idmap_insert(a, keys[i], i));
        CHECK_OK(ark_idmap_insert(b, keys[i], i));
        if (changed_at == SIZE_MAX && a->seed != seed0) {
            changed_at = i;
        }
    }
    CHECK(changed_at < 2 * ARK__IDMAP_SLOTS * 8);
    CHECK_EQ(a->groups, 256); /* re-seeded, not grown */
    CHECK(validate(a) <= 8);
    /* A fixed seed re-seeds reproducibly: b made the same choices. */
    CHECK_EQ(a->seed, b->seed);
    ark_idmap_iter ia = ark_idmap_iter_begin(a), ib = ark_idmap_iter_begin(b);
    for (; ark_idmap_iter_valid(&ia); ark_idmap_iter_next(&ia)) {
        CHECK(ark_idmap_iter_valid(&ib));
        CHECK_EQ(ia.key, ib.key);
        ark_idmap_iter_next(&ib);
    }
    CHECK(!ark_idmap_iter_valid(&ib));
    /* Without memory the re-seeds fail: the map keeps its seed and stays
     * correct until a key finds no slot within the hard bound; that insert
     * fails and leaves the map as it was, and its retry re-seeds. */
    size_t failed_at = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (failed_at == SIZE_MAX) {
            test_allocator_fail_at(&ta, 1);
        }
        ark_status s = ark_idmap_insert(m, keys[i], i);
        test_allocator_fail_at(&ta, 0);
        if (s == ARK_ENOMEM) {
            CHECK_EQ(failed_at, SIZE_MAX);
            failed_at = i;
            CHECK_EQ(m->seed, seed0);
            CHECK_EQ(ark_idmap_count(m), i);
            CHECK_EQ(validate(m), ARK_IDMAP_MAX_PROBE);
            CHECK(!ark_idmap_get(m, keys[i], NULL));
            s = ark_idmap_insert(m, keys[i], i);
            CHECK(m->seed != seed0);
        }
        CHECK_OK(s);
    }
    CHECK_EQ(failed_at, ARK__IDMAP_SLOTS * ARK_IDMAP_MAX_PROBE);
    CHECK(validate(m) <= 8);
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        CHECK(ark_idmap_get(m, keys[i], &v));
        CHECK_EQ(v, i);
    }
    for (size_t i = 0; i < n; i += 2) {
        CHECK(ark_idmap_remove(m, keys[i]));
    }
    CHECK_EQ(ark_idmap_count(m), n / 2);
    CHECK(validate(m) != SIZE_MAX);
    free(keys);
    ark_idmap_destroy(m);
    ark_idmap_destroy(a);
    ark_idmap_destroy(b);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

TEST(colliding_keys_known_to_attacker) {
    /* Keys that collide under the seed a fixed-seed map re-seeds to, as
     * well as under its own: the second re-seed draws from the OS. */
    uint64_t state = harness_seed();
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    const uint64_t seed0 = 77;
    ark_idmap_set_seed(m, seed0);
    CHECK_OK(ark_idmap_reserve(m, 1000));
    size_t per = ARK__IDMAP_SLOTS * ARK_IDMAP_MAX_PROBE + 1;
    uint64_t *first = colliding_keys(seed0, per, 12, &state);
    for (size_t i = 0; i < per; i++) {
        CHECK_OK(ark_idmap_put(m, first[i], i));
    }
    uint64_t seed1 = m->seed;
    CHECK(seed1 != seed0);
    uint64_t *second = colliding_keys(seed1, per, 12, &state);
    for (size_t i = 0; i < per; i++) {
        CHECK_OK(ark_idmap_put(m, second[i], i));
    }
    CHECK(m->seed != seed1 && m->seed != seed0);
    CHECK(validate(m) <= 8);
    CHECK_EQ(ark_idmap_count(m), 2 * per);
    free(first);
    free(second);
    ark_idmap_destroy(m);
}

/* Nanoseconds from a monotonic clock. */
static double now_ns(void) { return harness_now_ns(); }

/* Keys chosen against seed in a table of `groups` groups: quota[g] keys
 * whose home group is g, for every g below nq, listed group by group. Half
 * of each group's keys go to present[], the other half to absent[]. */
static void keys_for_homes(uint64_t seed, size_t groups, const size_t *quota,
                           size_t nq, uint64_t *present, uint64_t *absent,
                           uint64_t *state) {
    size_t total = 0, *got = calloc(nq, sizeof *got);
    size_t *start = malloc(nq * sizeof *start);
    for (size_t g = 0; g < nq; g++) {
        start[g] = total;
        total += quota[g];
    }
    uint64_t *all = malloc(total * sizeof *all);
    for (size_t placed = 0; placed < total;) {
        uint64_t k = harness_rand(state);
        size_t g = (size_t)ark__idmap_hash(seed, ark__idmap_mul(seed), k) &
                   (groups - 1);
        if (g < nq && got[g] < quota[g]) {
            all[start[g] + got[g]++] = k;
            placed++;
        }
    }
    size_t np = 0, na = 0;
    for (size_t g = 0; g < nq; g++) {
        for (size_t i = 0; i < quota[g]; i++) {
            uint64_t k = all[start[g] + i];
            if (i % 2 == 0) {
                present[np++] = k;
            } else {
                absent[na++] = k;
            }
        }
    }
    free(all);
    free(start);
    free(got);
}

enum { FLOOD_INSERT, FLOOD_HIT, FLOOD_MISS, FLOOD_REMOVE, FLOOD_NWORK };

/* Time n inserts of present[] into a fresh map with the given seed and
 * reserve(n), n lookups of present[], n of absent[], and n removes. */
static void time_ops(uint64_t seed, const uint64_t *present,
                     const uint64_t *absent, size_t n, double *ns) {
    ark_idmap *m;
    if (ark_idmap_create(&m, NULL) != ARK_OK) {
        return;
    }
    ark_idmap_set_seed(m, seed);
    uint64_t sum = 0;
    if (ark_idmap_reserve(m, n) == ARK_OK) {
        double t0 = now_ns();
        for (size_t i = 0; i < n; i++) {
            sum += ark_idmap_insert(m, present[i], i) == ARK_OK;
        }
        double t1 = now_ns();
        for (size_t i = 0; i < n; i++) {
            sum += ark_idmap_get(m, present[i], NULL);
        }
        double t2 = now_ns();
        for (size_t i = 0; i < n; i++) {
            sum += ark_idmap_get(m, absent[i], NULL);
        }
        double t3 = now_ns();
        for (size_t i = 0; i < n; i++) {
            sum += ark_idmap_remove(m, present[i]);
        }
        double t4 = now_ns();
        ns[FLOOD_INSERT] = t1 - t0;
        ns[FLOOD_HIT] = t2 - t1;
        ns[FLOOD_MISS] = t3 - t2;
        ns[FLOOD_REMOVE] = t4 - t3;
    }
    ark_idmap_destroy(m);
    if (sum != 3 * n) { /* every insert, hit and remove succeeded */
        ns[FLOOD_INSERT] = 1e18;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One measurement for check_flood: medians of 7 alternating runs of the
 * random and the chosen keys; returns the largest ratio of the four. */
static double flood_ratio(const char *what, uint64_t seed,
                          const uint64_t *chosen, const uint64_t *random,
                          size_t n) {
    enum { REPS = 7 };
    double t[2][FLOOD_NWORK][REPS];
    for (int r = 0; r < REPS; r++) {
        double ns[FLOOD_NWORK];
        time_ops(seed, random, random + n, n, ns);
        for (int w = 0; w < FLOOD_NWORK; w++) {
            t[0][w][r] = ns[w];
        }
        time_ops(seed, chosen, chosen + n, n, ns);
        for (int w = 0; w < FLOOD_NWORK; w++) {
            t[1][w][r] = ns[w];
        }
    }
    static const char *const names[] = {"insert", "present lookup",
                                        "absent lookup", "remove"};
    double worst = 0;
    for (int w = 0; w < FLOOD_NWORK; w++) {
        qsort(t[0][w], REPS, sizeof(double), cmp_double);
        qsort(t[1][w], REPS, sizeof(double), cmp_double);
        double ratio = t[1][w][REPS / 2] / t[0][w][REPS / 2];
        printf("flood %s, %zu keys, %s: %.2fx random keys\n", what, n, names[w],
               ratio);
        worst = ratio > worst ? ratio : worst;
    }
    return worst;
}

/* Check that each operation on chosen keys takes at most 4x the time it
 * takes on random keys. The chosen keys have quota[g] homes in group g (see
 * keys_for_homes) in the table that reserve(n) makes, under a seed fixed
 * for the test. A complexity check on a shared machine: a quadratic cost
 * fails every measurement, so one of three passing is enough. */
static void check_flood(const char *what, const size_t *quota, size_t nq,
                        size_t n) {
    uint64_t state = harness_seed();
    const uint64_t seed = 0x9e3779b97f4a7c15ull ^ state;
    ark_idmap *probe;
    CHECK_OK(ark_idmap_create(&probe, NULL));
    CHECK_OK(ark_idmap_reserve(probe, n));
    size_t groups = probe->groups;
    ark_idmap_destroy(probe);
    uint64_t *chosen = malloc(2 * n * sizeof *chosen);
    uint64_t *random = malloc(2 * n * sizeof *random);
    keys_for_homes(seed, groups, quota, nq, chosen, chosen + n, &state);
    for (size_t i = 0; i < 2 * n; i++) {
        random[i] = harness_rand(&state);
    }
    double best = 1e18;
    for (int attempt = 0; attempt < 3 && best > 4.0; attempt++) {
        double worst = flood_ratio(what, seed, chosen, random, n);
        best = worst < best ? worst : best;
    }
    free(chosen);
    free(random);
    CHECK(best <= 4.0);
}

TEST(flood_one_home) {
    /* Every key, present or absent, has home group 0 under the seed. */
    size_t n = (size_t)harness_scaled(50000);
    size_t quota = 2 * n;
    check_flood("one home", &quota, 1, n);
}

TEST(flood_consecutive_homes) {
    /* One long run: homes fill consecutive groups from 0, exactly as many
     * keys as a group holds, then as many absent keys with the same
     * homes. */
    size_t n =
        (size_t)harness_scaled(50000) / ARK__IDMAP_SLOTS * ARK__IDMAP_SLOTS;
    size_t nq = n / ARK__IDMAP_SLOTS;
    size_t *quota = malloc(nq * sizeof *quota);
    for (size_t g = 0; g < nq; g++) {
        quota[g] = 2 * ARK__IDMAP_SLOTS;
    }
    check_flood("consecutive homes", quota, nq, n);
    free(quota);
}

TEST(flood_overflowing_homes) {
    /* One more key per home group than a group holds, over consecutive
     * groups: every group overflows into the next probe. */
    size_t n = (size_t)harness_scaled(50000) / 16 * 16;
    size_t nq = n / 16;
    size_t *quota = malloc(nq * sizeof *quota);
    for (size_t g = 0; g < nq; g++) {
        quota[g] = 2 * 16;
    }
    check_flood("overflowing homes", quota, nq, n);
    free(quota);
}

/* Keys that take every value of three aligned bit fields (7 bits at 14, 7
 * at 42, 6 at 55: 2^20 keys), placed by their hash in the 2^17 groups a
 * map of 1M keys has: how many land past the 15 their home group holds,
 * per thousand keys. Xor with a seed only permutes each field's values,
 * so with a constant multiplier this family piled up the same way under
 * every seed (about 280 per thousand; random keys about 1). */
static uint64_t field_family_overflow(uint64_t seed) {
    enum { GROUP_BITS = 17, KEYS = 1 << 20 };
    uint16_t *load = calloc((size_t)1 << GROUP_BITS, sizeof *load);
    uint64_t mask = ((uint64_t)1 << GROUP_BITS) - 1, over = 0;
    for (uint64_t i = 0; i < KEYS; i++) {
        uint64_t k = (i & 127) << 14 ^ ((i >> 7) & 127) << 42 ^ (i >> 14) << 55;
        over += ++load[ark__idmap_hash(seed, ark__idmap_mul(seed), k) & mask] >
                ARK__IDMAP_SLOTS;
    }
    free(load);
    return over * 1000 / KEYS;
}

/* The seed now changes the multiplier too, so the family's pile-up
 * depends on the seed: under most seeds it spreads like random keys.
 * Some multipliers still suit a lattice badly (a few seeds in a hundred
 * put 1-30% of it past home); an insert then re-seeds, which now helps.
 * So the test asks for the median of seven seeds, not each one. */
TEST(hash_field_family_spreads_under_most_seeds) {
    enum { NSEEDS = 7 };
    uint64_t state = harness_seed();
    uint64_t per_mille[NSEEDS];
    for (int s = 0; s < NSEEDS; s++) {
        per_mille[s] = field_family_overflow(harness_rand(&state));
    }
    qsort(per_mille, NSEEDS, sizeof per_mille[0], harness_cmp_u64);
    printf("field family past home, per mille, 7 seeds: min %llu median "
           "%llu max %llu\n",
           (unsigned long long)per_mille[0],
           (unsigned long long)per_mille[NSEEDS / 2],
           (unsigned long long)per_mille[NSEEDS - 1]);
    CHECK(per_mille[NSEEDS / 2] <= 2);
}

TEST(seeds) {
    /* Two default maps draw different seeds. */
    ark_idmap *a, *b;
    CHECK_OK(ark_idmap_create(&a, NULL));
    CHECK_OK(ark_idmap_create(&b, NULL));
    CHECK(a->seed != b->seed);
    /* set_seed takes effect on an empty map only. */
    ark_idmap_set_seed(a, 5);
    CHECK_EQ(a->seed, 5);
    CHECK_OK(ark_idmap_put(a, 1, 1));
    ark_idmap_set_seed(a, 6);
    CHECK_EQ(a->seed, 5);
    CHECK(ark_idmap_remove(a, 1));
    ark_idmap_set_seed(a, 7); /* empty again, with a table */
    CHECK_EQ(a->seed, 7);
    CHECK(validate(a) != SIZE_MAX);
    /* Same seed, same calls: same iteration order, through growth,
     * removals and clear. */
    uint64_t state = harness_seed();
    ark_idmap_set_seed(b, 7);
    for (size_t i = 0; i < 20000; i++) {
        uint64_t k = harness_rand(&state) % 30000;
        if (i % 3 == 2) {
            CHECK_EQ(ark_idmap_remove(a, k), ark_idmap_remove(b, k));
        } else {
            CHECK_OK(ark_idmap_put(a, k, i));
            CHECK_OK(ark_idmap_put(b, k, i));
        }
        if (i == 10000) {
            ark_idmap_clear(a);
            ark_idmap_clear(b);
        }
    }
    CHECK_EQ(a->seed, 7);
    ark_idmap_iter ia = ark_idmap_iter_begin(a), ib = ark_idmap_iter_begin(b);
    size_t seen = 0;
    for (; ark_idmap_iter_valid(&ia); ark_idmap_iter_next(&ia)) {
        CHECK(ark_idmap_iter_valid(&ib));
        CHECK_EQ(ia.key, ib.key);
        CHECK_EQ(ia.value, ib.value);
        ark_idmap_iter_next(&ib);
        seen++;
    }
    CHECK(!ark_idmap_iter_valid(&ib));
    CHECK_EQ(seen, ark_idmap_count(a));
    ark_idmap_destroy(a);
    ark_idmap_destroy(b);
}

TEST(insert_take) {
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, NULL));
    const uint64_t keys[] = {0, UINT64_MAX, 1, 42};
    for (size_t i = 0; i < 4; i++) {
        CHECK_OK(ark_idmap_insert(m, keys[i], 100 + i));
        CHECK_STATUS(ark_idmap_insert(m, keys[i], 7), ARK_EEXIST);
    }
    uint64_t v = 0;
    CHECK(ark_idmap_get(m, UINT64_MAX, &v));
    CHECK_EQ(v, 101); /* insert left it alone */
    CHECK(ark_idmap_take(m, UINT64_MAX, &v));
    CHECK_EQ(v, 101);
    v = 9;
    CHECK(!ark_idmap_take(m, UINT64_MAX, &v));
    CHECK_EQ(v, 9); /* untouched on a miss */
    CHECK(ark_idmap_take(m, 0, NULL));
    CHECK(!ark_idmap_get(m, 0, NULL));
    CHECK_EQ(ark_idmap_count(m), 2);
    /* Removing the entry an iterator is at is allowed: nothing moves. */
    for (uint64_t k = 1000; k < 3000; k++) {
        CHECK_OK(ark_idmap_insert(m, k, k));
    }
    size_t seen = 0;
    for (ark_idmap_iter it = ark_idmap_iter_begin(m); ark_idmap_iter_valid(&it);
         ark_idmap_iter_next(&it)) {
        CHECK(ark_idmap_take(m, it.key, &v));
        CHECK_EQ(v, it.value);
        seen++;
    }
    CHECK_EQ(seen, 2002);
    CHECK_EQ(ark_idmap_count(m), 0);
    ark_idmap_destroy(m);
}

TEST(size_limits) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, &ta.base));
    uint64_t attempts = ta.allocs;
    /* Refused from the size alone: the allocator is never asked. */
    test_allocator_fail_at(&ta, 0);
    if ((uint64_t)SIZE_MAX >> 44 != 0) { /* only a 64-bit size_t holds it */
        CHECK_STATUS(ark_idmap_reserve(m, (size_t)((uint64_t)1 << 44)),
                     ARK_ENOMEM);
    }
    CHECK_STATUS(ark_idmap_reserve(m, ARK_IDMAP_MAX_COUNT + 1), ARK_ENOMEM);
    CHECK_STATUS(ark_idmap_reserve(m, SIZE_MAX), ARK_ENOMEM);
    CHECK_EQ(ta.attempts, 0);
    CHECK_EQ(ta.allocs, attempts);
    CHECK_EQ(m->groups, 0);
    CHECK_OK(ark_idmap_put(m, 3, 4));
    ark_idmap_destroy(m);
    CHECK_EQ(ta.live_blocks, 0);
}

TEST(alloc_failure_during_growth) {
    const size_t n = 3000; /* 9 growths: 1 .. 256 groups */
    uint64_t state = harness_seed();
    uint64_t *keys = malloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        keys[i] = i % 2 ? harness_rand(&state) : i;
    }
    for (uint64_t k = 1;; k++) {
        test_allocator ta;
        test_allocator_init(&ta);
        ark_idmap *m;
        CHECK_OK(ark_idmap_create(&m, &ta.base));
        test_allocator_fail_at(&ta, k);
        size_t failed_at = SIZE_MAX;
        for (size_t i = 0; i < n; i++) {
            ark_status s = i % 2 ? ark_idmap_insert(m, keys[i], i)
                                 : ark_idmap_put(m, keys[i], i);
            if (s == ARK_ENOMEM) {
                failed_at = i;
                /* Unchanged: same count, the new key absent, old ones in. */
                CHECK_EQ(ark_idmap_count(m), i);
                CHECK(!ark_idmap_get(m, keys[i], NULL));
                for (size_t j = 0; j < i; j++) {
                    uint64_t v;
                    CHECK(ark_idmap_get(m, keys[j], &v));
                    CHECK_EQ(v, j);
                }
                /* Overwriting needs no memory. */
                if (i > 0) {
                    CHECK_OK(ark_idmap_put(m, keys[0], 0));
                }
                CHECK(validate(m) != SIZE_MAX);
                s = ark_idmap_put(m, keys[i], i); /* retry succeeds */
            }
            CHECK_OK(s);
        }
        CHECK_EQ(ark_idmap_count(m), n);
        CHECK(validate(m) != SIZE_MAX);
        ark_idmap_destroy(m);
        CHECK_EQ(ta.live_blocks, 0);
        CHECK_EQ(ta.bad_frees, 0);
        if (ta.failures == 0) {
            CHECK(failed_at == SIZE_MAX);
            CHECK(k > 9);
            break;
        }
        CHECK(failed_at != SIZE_MAX);
    }
    free(keys);
}

TEST(churn_keeps_table_small) {
    /* Remove-and-insert forever at a steady count: removal leaves no
     * tombstones and moves nothing, and stale overflow bits are recomputed
     * in place, so the table grows at most once and probes stay short. */
    uint64_t state = harness_seed();
    test_allocator ta;
    test_allocator_init(&ta);
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, &ta.base));
    const size_t live = 3000;
    uint64_t *ring = malloc(live * sizeof *ring);
    for (size_t i = 0; i < live; i++) {
        ring[i] = harness_rand(&state);
        CHECK_OK(ark_idmap_put(m, ring[i], i));
    }
    uint64_t allocs = ta.allocs;
    for (size_t round = 0; round < 200000; round++) {
        size_t r = round % live;
        uint64_t v;
        CHECK(ark_idmap_take(m, ring[r], &v));
        CHECK_EQ(v, r);
        ring[r] = harness_rand(&state);
        CHECK_OK(ark_idmap_insert(m, ring[r], r));
    }
    CHECK(ta.allocs <= allocs + 1);
    CHECK_EQ(ark_idmap_count(m), live);
    size_t worst = validate(m);
    CHECK(worst != SIZE_MAX);
    CHECK(worst <= 8);
    size_t overflowed = 0;
    for (size_t g = 0; g < m->groups; g++) {
        overflowed += m->ctrl[g * 16 + 15] != 0;
    }
    CHECK(overflowed <= m->groups / 4);
    for (size_t i = 0; i < live; i++) {
        uint64_t v;
        CHECK(ark_idmap_get(m, ring[i], &v));
        CHECK_EQ(v, i);
    }
    free(ring);
    ark_idmap_destroy(m);
}
