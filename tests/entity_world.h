/* SPDX-License-Identifier: MIT */
/*
 * entity_world.h - a small world for the entity tests that fail
 * allocations and damage snapshots: an entity pool, a keyed pool, a keyed
 * table and two tag sets; a fingerprint of everything observable in it
 * (to show that a failed call changed nothing); the whole world saved to
 * one stream and loaded back in the order ark/entity.h gives.
 */
#ifndef ARK_TEST_ENTITY_WORLD_H
#define ARK_TEST_ENTITY_WORLD_H

#include "ark/ark.h"
#include "harness.h"
#include "snapshot_mem.h"

#include <stdlib.h>
#include <string.h>

#define EW_TAGS 2

typedef struct ew_pos {
    uint64_t x, y;
} ew_pos;

/* vel's columns: a value and its square, so a row's bytes can be told
 * from another's. */
static const size_t ew_vel_cols[2] = {sizeof(uint64_t), sizeof(uint64_t)};

typedef struct ew {
    ark_pool *units; /* the entities; elements: uint64_t */
    ark_pool *pos;   /* keyed by units */
    ark_table *vel;  /* keyed by units */
    ark_idset *tag[EW_TAGS];
    unsigned index_bits, gen_bits;
    const ark_allocator *alloc; /* what the containers were made with */
    /* Every handle units ever gave (or a test made up), for the
     * fingerprint: a failed call must not change what any of them finds. */
    ark_handle *known;
    size_t nknown, known_cap;
} ew;

static inline ark_pool_config ew_units_cfg(const ew *w,
                                           const ark_allocator *a) {
    ark_pool_config c = {ARK_POOL_ELEM(uint64_t), .index_bits = w->index_bits,
                         .gen_bits = w->gen_bits, .allocator = a};
    return c;
}

static inline ark_pool_config ew_pos_cfg(const ew *w, const ark_allocator *a) {
    ark_pool_config c = {ARK_POOL_ELEM(ew_pos), .allocator = a,
                         .keys = w->units};
    return c;
}

static inline ark_table_config ew_vel_cfg(const ew *w, const ark_allocator *a) {
    ark_table_config c = {.column_sizes = ew_vel_cols,
                          .ncolumns = 2,
                          .allocator = a,
                          .keys = w->units};
    return c;
}

/* An empty world (no containers yet) with this entity layout. */
static inline void ew_init(ew *w, unsigned index_bits, unsigned gen_bits) {
    memset(w, 0, sizeof *w);
    w->index_bits = index_bits;
    w->gen_bits = gen_bits;
}

static inline int ew_create(ew *w, const ark_allocator *a) {
    w->alloc = a;
    ark_pool_config uc = ew_units_cfg(w, a);
    REQ(ark_pool_create(&w->units, &uc) == ARK_OK);
    ark_pool_config pc = ew_pos_cfg(w, a);
    REQ(ark_pool_create(&w->pos, &pc) == ARK_OK);
    ark_table_config vc = ew_vel_cfg(w, a);
    REQ(ark_table_create(&w->vel, &vc) == ARK_OK);
    for (int t = 0; t < EW_TAGS; t++) {
        REQ(ark_idset_create(&w->tag[t], a) == ARK_OK);
        REQ(ark_pool_attach_idset(w->units, w->tag[t]) == ARK_OK);
    }
    return 1;
}

/* Destroy the containers (components first, as a game would; the tests
 * that need another order do it themselves). */
static inline void ew_destroy(ew *w) {
    ark_table_destroy(w->vel);
    ark_pool_destroy(w->pos);
    for (int t = 0; t < EW_TAGS; t++) {
        ark_idset_destroy(w->tag[t]);
    }
    ark_pool_destroy(w->units);
    free(w->known);
    memset(w, 0, sizeof *w);
}

static inline void ew_know(ew *w, ark_handle h) {
    if (w->nknown == w->known_cap) {
        size_t cap = w->known_cap ? w->known_cap * 2 : 256;
        ark_handle *k = realloc(w->known, cap * sizeof *k);
        if (k == NULL) {
            abort();
        }
        w->known = k;
        w->known_cap = cap;
    }
    w->known[w->nknown++] = h;
}

static inline uint64_t *ew_vel_col(const ew *w, size_t col) {
    return ark_table_column(w->vel, col);
}

/* Spawn an entity with value v; with_pos / with_vel add those
 * components (from v), tags is a bit mask of the tag sets. */
static inline int ew_spawn(ew *w, uint64_t v, bool with_pos, bool with_vel,
                           unsigned tags, ark_handle *out) {
    ark_handle h;
    REQ(ark_pool_insert(w->units, &v, &h) == ARK_OK);
    ew_know(w, h);
    if (with_pos) {
        REQ(ark_pool_insert_at(w->pos, h, &(ew_pos){v, ~v}) == ARK_OK);
    }
    if (with_vel) {
        size_t r;
        REQ(ark_table_insert_at(w->vel, h, &r) == ARK_OK);
        ew_vel_col(w, 0)[r] = v;
        ew_vel_col(w, 1)[r] = v * v;
    }
    for (int t = 0; t < EW_TAGS; t++) {
        if (tags >> t & 1) {
            REQ(ark_pool_tag(w->units, w->tag[t], h) == ARK_OK);
        }
    }
    if (out != NULL) {
        *out = h;
    }
    return 1;
}

static inline void ew_mix(uint64_t *d, uint64_t v) {
    *d = (*d ^ v) * 0x100000001b3ull;
    *d ^= *d >> 29;
}

/* Everything a caller can observe through the known handles, the tag
 * sets' ids and the table's rows, hashed. */
static inline uint64_t ew_fingerprint(const ew *w) {
    uint64_t d = 0xcbf29ce484222325ull;
    ew_mix(&d, ark_pool_count(w->units));
    ew_mix(&d, w->pos != NULL ? ark_pool_count(w->pos) : 0);
    ew_mix(&d, w->vel != NULL ? ark_table_count(w->vel) : 0);
    ew_mix(&d, w->vel != NULL ? ark_table_rows(w->vel) : 0);
    for (size_t k = 0; k < w->nknown; k++) {
        ark_handle h = w->known[k];
        ew_mix(&d, (uint64_t)ark_pool_check(w->units, h));
        const uint64_t *u = ark_pool_get(w->units, h);
        ew_mix(&d, u != NULL ? *u : 0xdeadull);
        const ew_pos *p = w->pos != NULL ? ark_pool_get(w->pos, h) : NULL;
        ew_mix(&d, p != NULL ? p->x ^ p->y << 1 : 0xdeadull);
        size_t r = w->vel != NULL ? ark_table_row(w->vel, h) : ARK_NO_ROW;
        ew_mix(&d, r);
        if (r != ARK_NO_ROW) {
            ew_mix(&d, ew_vel_col(w, 0)[r]);
            ew_mix(&d, ew_vel_col(w, 1)[r]);
        }
        for (int t = 0; t < EW_TAGS; t++) {
            if (w->tag[t] != NULL) {
                ew_mix(&d, ark_pool_has_tag(w->units, w->tag[t], h));
            }
        }
    }
    for (int t = 0; t < EW_TAGS; t++) {
        if (w->tag[t] == NULL) {
            continue;
        }
        ew_mix(&d, ark_idset_count(w->tag[t]));
        for (ark_idset_iter it = ark_idset_iter_begin(w->tag[t], 0);
             ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
            ew_mix(&d, it.id);
        }
    }
    for (size_t r = 0; w->vel != NULL && r < ark_table_rows(w->vel); r++) {
        ew_mix(&d, ark_table_handle_at(w->vel, r));
    }
    return d;
}

static inline int ew_valid(const ew *w) {
    REQ(ark_pool_validate(w->units) == ARK_OK);
    REQ(w->pos == NULL || ark_pool_validate(w->pos) == ARK_OK);
    REQ(w->vel == NULL || ark_table_validate(w->vel) == ARK_OK);
    for (int t = 0; t < EW_TAGS; t++) {
        REQ(w->tag[t] == NULL || ark_idset_validate(w->tag[t]) == ARK_OK);
    }
    return 1;
}

/* Save the world: entity pool, keyed pool, keyed table, tag sets. */
static inline ark_status ew_save(const ew *w, membuf *m) {
    ark_writer wr = mem_writer(m);
    ark_status st = ark_pool_save(w->units, &wr);
    st = st == ARK_OK ? ark_pool_save(w->pos, &wr) : st;
    st = st == ARK_OK ? ark_table_save(w->vel, &wr) : st;
    for (int t = 0; t < EW_TAGS && st == ARK_OK; t++) {
        st = ark_idset_save(w->tag[t], &wr);
    }
    return st;
}

/* Load a world saved by ew_save into w (ew_init'ed, layout as saved):
 * the first status that is not ARK_OK, with what was made so far in w
 * (ew_destroy frees it). */
static inline ark_status ew_load(ew *w, const ark_allocator *a,
                                 const ark_reader *r) {
    w->alloc = a;
    ark_pool_config uc = ew_units_cfg(w, a);
    ark_status st = ark_pool_load(&w->units, &uc, r);
    if (st != ARK_OK) {
        return st;
    }
    ark_pool_config pc = ew_pos_cfg(w, a);
    st = ark_pool_load(&w->pos, &pc, r);
    if (st != ARK_OK) {
        return st;
    }
    ark_table_config vc = ew_vel_cfg(w, a);
    st = ark_table_load(&w->vel, &vc, r);
    for (int t = 0; t < EW_TAGS && st == ARK_OK; t++) {
        st = ark_idset_load(&w->tag[t], a, r);
        if (st == ARK_OK) {
            st = ark_pool_attach_idset(w->units, w->tag[t]);
        }
    }
    return st;
}

#endif /* ARK_TEST_ENTITY_WORLD_H */
