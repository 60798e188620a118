/* SPDX-License-Identifier: MIT */
/*
 * test_entity_snapshot.c - a saved world (entity pool, keyed pool, keyed
 * table, tag sets, one stream) under damage: every truncation and every
 * changed byte (as it is, and with the checksums recomputed so that the
 * change reaches the structural checks behind them) loads as a status,
 * never a crash or a leak, and a world that loads is valid and keeps
 * working. Snapshots taken at different times and loaded together are
 * checked against each other: a keyed element or a tag of an entity the
 * loaded entity pool does not hold is refused.
 */
#include "ark/ark.h"
#include "entity_world.h"
#include "harness.h"
#include "snapshot/snapshot.h"

#include <stdlib.h>
#include <string.h>

/* A small index space keeps every container's storage small, and each of
 * the thousands of loads below quick. */
#define SNAP_INDEX_BITS 6
#define SNAP_GEN_BITS 4

/* A world with some of everything a snapshot carries: removed entities
 * (free slots, reused ones), marked entities and components, rows moved
 * by removals, tags. */
static int build_saved_world(ew *w, const ark_allocator *a) {
    ew_init(w, SNAP_INDEX_BITS, SNAP_GEN_BITS);
    REQ(ew_create(w, a));
    for (uint64_t k = 0; k < 36; k++) {
        REQ(ew_spawn(w, k * 11, k % 2 == 0, k % 3 != 1, (unsigned)(k % 4),
                     NULL));
    }
    for (uint64_t k = 0; k < 36; k += 4) {
        REQ(ark_pool_remove(w->units, w->known[k]) == ARK_OK);
    }
    /* Past the 63 indices: freed ones come back at newer generations. */
    for (uint64_t k = 0; k < 60; k++) {
        ark_handle h;
        REQ(ew_spawn(w, k, k % 5 == 0, k % 7 == 0, k % 3 == 0 ? 2 : 0, &h));
        if (k % 3 != 0) {
            REQ(ark_pool_remove(w->units, h) == ARK_OK);
        }
    }
    REQ(ark_pool_remove_later(w->units, w->known[2]) == ARK_OK);
    REQ(ark_pool_remove_later(w->units, w->known[9]) == ARK_OK);
    REQ(ark_pool_remove_later(w->pos, w->known[6]) == ARK_OK);
    REQ(ark_table_remove_later(w->vel, w->known[3]) == ARK_OK);
    return 1;
}

/* Where each container's snapshot starts and ends in the stream, and the
 * bytes of its descriptor (before the descriptor's checksum). */
typedef struct segment {
    size_t off, len, desc;
} segment;

#define NSEG (3 + EW_TAGS)

static int save_segments(const ew *w, membuf *m, segment *seg) {
    ark_writer wr = mem_writer(m);
    for (int k = 0; k < NSEG; k++) {
        size_t off = m->len;
        ark_status st = k == 0   ? ark_pool_save(w->units, &wr)
                        : k == 1 ? ark_pool_save(w->pos, &wr)
                        : k == 2 ? ark_table_save(w->vel, &wr)
                                 : ark_idset_save(w->tag[k - 3], &wr);
        REQ(st == ARK_OK);
        seg[k].off = off;
        seg[k].len = m->len - off;
        /* a table's descriptor carries its column sizes */
        seg[k].desc = ARK__SNAP_HEADER_BYTES + (k == 2 ? 2 * 8 : 0);
        REQ(seg[k].len >= seg[k].desc + 16);
    }
    return 1;
}

static void put_le64(unsigned char *p, uint64_t v) {
    for (int k = 0; k < 8; k++) {
        p[k] = (unsigned char)(v >> (8 * k));
    }
}

/* Recompute both checksums of a segment after a change inside it. */
static void fix_sums(unsigned char *data, const segment *s) {
    unsigned char *p = data + s->off;
    ark__snap_sum h;
    ark__snap_sum_init(&h);
    ark__snap_sum_update(&h, p, s->desc);
    put_le64(p + s->desc, ark__snap_sum_digest(&h));
    ark__snap_sum_init(&h);
    ark__snap_sum_update(&h, p, s->len - 8);
    put_le64(p + s->len - 8, ark__snap_sum_digest(&h));
}

/* Load the world in data[0, len); *st the first failure. A world that
 * loads must be valid and survive use: every entity removed, some with
 * remove_later and a flush, components added to new ones, a query.
 * Nothing may stay allocated after. */
static int load_and_use(const unsigned char *data, size_t len, ark_status *st) {
    test_allocator ta;
    test_allocator_init(&ta);
    membuf m = {(unsigned char *)data, len, len, 0};
    ark_reader r = mem_reader(&m);
    ew w;
    ew_init(&w, SNAP_INDEX_BITS, SNAP_GEN_BITS);
    *st = ew_load(&w, &ta.base, &r);
    if (*st == ARK_OK) {
        REQ(ew_valid(&w));
        ark_query q;
        ark_query_init(&q, w.units);
        REQ(ark_query_with_pool(&q, w.pos, NULL) == ARK_OK);
        REQ(ark_query_without_tag(&q, w.tag[1], NULL) == ARK_OK);
        for (ark_query_iter it = ark_query_iter_begin(&q);
             ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
            ark_handle h = ark_query_iter_handle(&it);
            REQ(ark_pool_get(w.pos, h) == ark_query_iter_elem(&it, 0));
            REQ(!ark_pool_has_tag(w.units, w.tag[1], h));
        }
        for (uint32_t id = 1; id < 1u << SNAP_INDEX_BITS; id++) {
            ark_handle h = ark_pool_handle_by_id(w.units, id);
            if (h != ARK_NULL_HANDLE) {
                REQ((id % 3 == 0 ? ark_pool_remove_later(w.units, h)
                                 : ark_pool_remove(w.units, h)) == ARK_OK);
            }
        }
        (void)ark_pool_flush(w.units);
        (void)ark_pool_flush(w.pos);
        (void)ark_table_flush(w.vel);
        REQ(ark_pool_count(w.units) == 0 && ark_pool_count(w.pos) == 0 &&
            ark_table_count(w.vel) == 0);
        for (int t = 0; t < EW_TAGS; t++) {
            REQ(ark_idset_count(w.tag[t]) == 0);
        }
        for (uint64_t k = 0; k < 20; k++) {
            ark_handle h;
            uint64_t v = k;
            ark_status s = ark_pool_insert(w.units, &v, &h);
            REQ(s == ARK_OK || s == ARK_EFULL);
            if (s == ARK_OK) {
                REQ(ark_pool_insert_at(w.pos, h, &(ew_pos){k, k}) == ARK_OK);
                REQ(ark_table_insert_at(w.vel, h, NULL) == ARK_OK);
                REQ(ark_pool_tag(w.units, w.tag[0], h) == ARK_OK);
            }
        }
        REQ(ew_valid(&w));
    } else {
        REQ(*st == ARK_ECORRUPT || *st == ARK_EINVAL);
    }
    ew_destroy(&w);
    REQ(ta.live_blocks == 0 && ta.bad_frees == 0);
    return 1;
}

TEST(a_saved_world_loads_and_saves_the_same_bytes) {
    ew w;
    CHECK(build_saved_world(&w, NULL));
    membuf m = {0};
    segment seg[NSEG];
    CHECK(save_segments(&w, &m, seg));
    ew l;
    ew_init(&l, SNAP_INDEX_BITS, SNAP_GEN_BITS);
    ark_reader r = mem_reader(&m);
    CHECK_OK(ew_load(&l, NULL, &r));
    CHECK_EQ(m.pos, m.len);
    CHECK(ew_valid(&l));
    membuf again = {0};
    segment seg2[NSEG];
    CHECK(save_segments(&l, &again, seg2));
    CHECK_EQ(again.len, m.len);
    CHECK(memcmp(again.data, m.data, m.len) == 0);
    /* What every known handle finds is the same. */
    l.known = w.known;
    l.nknown = w.nknown;
    CHECK_EQ(ew_fingerprint(&l), ew_fingerprint(&w));
    l.known = NULL;
    l.nknown = 0;
    ark_status st;
    CHECK(load_and_use(m.data, m.len, &st));
    CHECK_OK(st);
    mem_free(&again);
    mem_free(&m);
    ew_destroy(&l);
    ew_destroy(&w);
}

TEST(every_truncation_of_a_saved_world_is_refused) {
    ew w;
    CHECK(build_saved_world(&w, NULL));
    membuf m = {0};
    segment seg[NSEG];
    CHECK(save_segments(&w, &m, seg));
    ew_destroy(&w);
    /* every length; under valgrind a tenth of them */
    size_t stride = m.len / harness_scaled(m.len);
    for (size_t len = harness_seed() % stride; len < m.len; len += stride) {
        ark_status st;
        CHECK(load_and_use(m.data, len, &st));
        if (st != ARK_ECORRUPT) {
            harness_fail(__FILE__, __LINE__, "%zu of %zu bytes: %s", len, m.len,
                         ark_strerror(st));
            break;
        }
    }
    mem_free(&m);
}

/* Each byte changed (every byte; under valgrind a tenth of them, from an
 * offset the seed picks): all its bits as it is, which the checksum
 * refuses; its low bit and all its bits with the segment's checksums
 * recomputed, which the structural checks must take care of. */
TEST(every_changed_byte_of_a_saved_world_loads_as_a_status) {
    ew w;
    CHECK(build_saved_world(&w, NULL));
    membuf m = {0};
    segment seg[NSEG];
    CHECK(save_segments(&w, &m, seg));
    ew_destroy(&w);
    unsigned char *copy = malloc(m.len);
    CHECK(copy != NULL);
    static const unsigned char masks[] = {0x01, 0xff};
    size_t stride = m.len / harness_scaled(m.len);
    size_t loaded = 0, refused = 0;
    for (size_t p = harness_seed() % stride; p < m.len; p += stride) {
        int s = 0;
        while (p >= seg[s].off + seg[s].len) {
            s++;
        }
        for (size_t k = 0; k < sizeof masks; k++) {
            for (int fix = k == 0; fix < 2; fix++) {
                memcpy(copy, m.data, m.len);
                copy[p] ^= masks[k];
                if (fix) {
                    fix_sums(copy, &seg[s]);
                }
                ark_status st;
                CHECK(load_and_use(copy, m.len, &st));
                if (!fix && st != ARK_ECORRUPT) {
                    harness_fail(__FILE__, __LINE__,
                                 "byte %zu ^ %#x passed the checksum: %s", p,
                                 masks[k], ark_strerror(st));
                    return;
                }
                loaded += st == ARK_OK;
                refused += st != ARK_OK;
            }
        }
    }
    /* With the checksums right, some changes are only new values (an
     * element's bytes), others break the structure. */
    CHECK(loaded > 0 && refused > loaded);
    free(copy);
    mem_free(&m);
}

/* ---- snapshots of different moments, loaded together -------------------- */

enum { FATE_REMOVED, FATE_REUSED, FATE_MARKED, FATE_ALIVE, FATE_UNBORN };

/* The keyed containers and tag sets saved while entity e (with pos, vel
 * and both tags) lives, each in its own buffer; the entity pool saved
 * after its fate. */
typedef struct moments {
    membuf pos, vel, tag[EW_TAGS], units;
} moments;

static int save_moments(moments *mo, int fate) {
    ew w;
    ew_init(&w, 10, 8);
    REQ(ew_create(&w, NULL));
    memset(mo, 0, sizeof *mo);
    if (fate == FATE_UNBORN) { /* the pool saved before e was made */
        for (uint64_t k = 0; k < 10; k++) {
            REQ(ew_spawn(&w, k, true, true, 3, NULL));
        }
        ark_writer wu = mem_writer(&mo->units);
        REQ(ark_pool_save(w.units, &wu) == ARK_OK);
    }
    for (uint64_t k = w.nknown; k < 40; k++) {
        REQ(ew_spawn(&w, k, true, true, 3, NULL));
    }
    ark_handle e = w.known[fate == FATE_UNBORN ? 30 : 17];
    ark_writer wp = mem_writer(&mo->pos), wv = mem_writer(&mo->vel);
    REQ(ark_pool_save(w.pos, &wp) == ARK_OK);
    REQ(ark_table_save(w.vel, &wv) == ARK_OK);
    for (int t = 0; t < EW_TAGS; t++) {
        ark_writer wt = mem_writer(&mo->tag[t]);
        REQ(ark_idset_save(w.tag[t], &wt) == ARK_OK);
    }
    uint32_t id = ark_pool_id(w.units, e);
    switch (fate) {
    case FATE_REMOVED:
        REQ(ark_pool_remove(w.units, e) == ARK_OK);
        break;
    case FATE_REUSED: /* removed, its index taken by a newer generation */
        REQ(ark_pool_remove(w.units, e) == ARK_OK);
        for (uint64_t k = 0; k < 500; k++) {
            ark_handle h;
            REQ(ew_spawn(&w, k, false, false, 0, &h));
            if (ark_pool_id(w.units, h) == id) {
                break;
            }
            REQ(ark_pool_remove(w.units, h) == ARK_OK);
        }
        REQ(ark_pool_handle_by_id(w.units, id) != ARK_NULL_HANDLE);
        REQ(ark_pool_handle_by_id(w.units, id) != e);
        break;
    case FATE_MARKED:
        REQ(ark_pool_remove_later(w.units, e) == ARK_OK);
        break;
    default:
        break;
    }
    if (fate != FATE_UNBORN) {
        ark_writer wu = mem_writer(&mo->units);
        REQ(ark_pool_save(w.units, &wu) == ARK_OK);
    }
    ew_destroy(&w);
    return 1;
}

static void free_moments(moments *mo) {
    mem_free(&mo->pos);
    mem_free(&mo->vel);
    for (int t = 0; t < EW_TAGS; t++) {
        mem_free(&mo->tag[t]);
    }
    mem_free(&mo->units);
}

/* Load the entity pool, then the keyed pool, the keyed table and the tag
 * sets (loaded, then attached) against it: want[] the statuses of the
 * four, which must leave nothing behind when they fail, and a world that
 * works when they do not. */
static int load_moments(moments *mo, const ark_status want[4]) {
    test_allocator ta;
    test_allocator_init(&ta);
    ew w;
    ew_init(&w, 10, 8);
    ark_pool_config uc = ew_units_cfg(&w, &ta.base);
    ark_reader ru = mem_reader(&mo->units);
    REQ(ark_pool_load(&w.units, &uc, &ru) == ARK_OK);
    ark_pool_config pc = ew_pos_cfg(&w, &ta.base);
    ark_reader rp = mem_reader(&mo->pos);
    ark_status st = ark_pool_load(&w.pos, &pc, &rp);
    REQ(st == want[0] && (st == ARK_OK) == (w.pos != NULL));
    ark_table_config vc = ew_vel_cfg(&w, &ta.base);
    ark_reader rv = mem_reader(&mo->vel);
    st = ark_table_load(&w.vel, &vc, &rv);
    REQ(st == want[1] && (st == ARK_OK) == (w.vel != NULL));
    for (int t = 0; t < EW_TAGS; t++) {
        ark_reader rt = mem_reader(&mo->tag[t]);
        REQ(ark_idset_load(&w.tag[t], &ta.base, &rt) == ARK_OK);
        size_t n = ark_idset_count(w.tag[t]);
        st = ark_pool_attach_idset(w.units, w.tag[t]);
        REQ(st == want[2 + t]);
        if (st != ARK_OK) { /* refused: not attached, ids kept */
            REQ(ark_idset_count(w.tag[t]) == n);
            REQ(ark_pool_tag(w.units, w.tag[t],
                             ark_pool_handle_by_id(w.units, 1)) == ARK_EINVAL);
            ark_idset_destroy(w.tag[t]);
            w.tag[t] = NULL;
        }
    }
    /* What loaded works: every entity goes, with its elements. */
    for (uint32_t id = 1; id < 1024; id++) {
        ark_handle h = ark_pool_handle_by_id(w.units, id);
        REQ(h == ARK_NULL_HANDLE || ark_pool_remove(w.units, h) == ARK_OK);
    }
    (void)ark_pool_flush(w.units);
    REQ(w.pos == NULL || ark_pool_count(w.pos) == 0);
    REQ(w.vel == NULL || ark_table_count(w.vel) == 0);
    for (int t = 0; t < EW_TAGS; t++) {
        REQ(w.tag[t] == NULL || ark_idset_count(w.tag[t]) == 0);
    }
    REQ(ew_valid(&w));
    ew_destroy(&w);
    REQ(ta.live_blocks == 0 && ta.bad_frees == 0);
    return 1;
}

static int check_fate(int fate, ark_status keyed, ark_status tags) {
    moments mo;
    REQ(save_moments(&mo, fate));
    ark_status want[4] = {keyed, keyed, tags, tags};
    int ok = load_moments(&mo, want);
    free_moments(&mo);
    return ok;
}

/* A keyed snapshot whose element belongs to an entity the loaded entity
 * pool does not hold (removed; removed and its index reused; never made)
 * is corrupt; a tag set holding such an id is refused by attach. An
 * entity marked by remove_later still holds its elements and tags. */
TEST(a_keyed_element_or_tag_of_a_dead_entity_is_refused) {
    CHECK(check_fate(FATE_ALIVE, ARK_OK, ARK_OK));
    CHECK(check_fate(FATE_MARKED, ARK_OK, ARK_OK));
    CHECK(check_fate(FATE_REMOVED, ARK_ECORRUPT, ARK_EINVAL));
    CHECK(check_fate(FATE_UNBORN, ARK_ECORRUPT, ARK_EINVAL));
    /* A tag holds an id, not a handle: the id is a live entity's again,
     * so the set attaches (and tags the new entity). The elements carry
     * the generation and are refused. */
    CHECK(check_fate(FATE_REUSED, ARK_ECORRUPT, ARK_OK));
}

/* A keyed snapshot is not a plain one, and the other way round. */
TEST(keyed_and_plain_snapshots_do_not_mix) {
    ew w;
    ew_init(&w, 10, 8);
    CHECK(ew_create(&w, NULL));
    for (uint64_t k = 0; k < 10; k++) {
        CHECK(ew_spawn(&w, k, true, true, 1, NULL));
    }
    membuf keyed = {0}, plain = {0};
    ark_writer wk = mem_writer(&keyed), wp = mem_writer(&plain);
    CHECK_OK(ark_pool_save(w.pos, &wk));
    ark_pool *loose;
    ark_pool_config lc = {ARK_POOL_ELEM(ew_pos), .index_bits = 10,
                          .gen_bits = 8};
    CHECK_OK(ark_pool_create(&loose, &lc));
    CHECK_OK(ark_pool_insert(loose, &(ew_pos){1, 2}, NULL));
    CHECK_OK(ark_pool_save(loose, &wp));
    ark_pool *p = NULL;
    ark_reader r = mem_reader(&keyed);
    CHECK(ark_pool_load(&p, &lc, &r) != ARK_OK && p == NULL);
    ark_pool_config kc = ew_pos_cfg(&w, NULL);
    r = mem_reader(&plain);
    CHECK(ark_pool_load(&p, &kc, &r) != ARK_OK && p == NULL);
    /* A keyed container's config takes no handle fields. */
    kc.index_bits = 10;
    r = mem_reader(&keyed);
    CHECK_STATUS(ark_pool_load(&p, &kc, &r), ARK_EINVAL);
    CHECK(p == NULL);
    ark_pool_destroy(loose);
    mem_free(&keyed);
    mem_free(&plain);
    ew_destroy(&w);
}
