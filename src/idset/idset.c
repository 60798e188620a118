/* SPDX-License-Identifier: MIT */
/*
 * idset.c - ark_idset's life cycle and its invariant checker, and the one
 * external definition of each inline function of idset.h. The structure
 * and the split across files are described in idset/idset.h.
 */
#include "idset/idset.h"

ARK_API extern inline uint32_t ark_idset_at(const ark_idset *s, size_t pos);
ARK_API extern inline ark_status ark_idset_insert(ark_idset *s, uint32_t id);
ARK__INLINE_API extern inline uint32_t
ark__idset_dense_id(uint32_t base, const void *data, size_t slot);
ARK__INLINE_API extern inline const ark__idset_view *
ark__idset_view_of(const ark_idset *s);
ARK__INLINE_API extern inline uint32_t
ark__idset_group_id(const ark__idset_view *v, size_t k, size_t j);
ARK__INLINE_API extern inline size_t
ark__idset_add_if_le(size_t i, size_t s, uint32_t a, uint32_t key);
ARK__INLINE_API extern inline size_t
ark__idset_add_if_lt(size_t i, size_t s, uint32_t a, uint32_t key);
ARK__INLINE_API extern inline size_t
ark__idset_add_if_lt16(size_t i, size_t s, int16_t a, int16_t key);
ARK__INLINE_API extern inline size_t
ark__idset_group_of(const ark__idset_view *v, uint32_t id);
ARK__INLINE_API extern inline size_t ark__idset_lower32(const uint32_t *b,
                                                        size_t n, uint32_t key);
ARK__INLINE_API extern inline size_t ark__idset_lower16(const int16_t *b,
                                                        size_t n, int16_t key);
ARK__INLINE_API extern inline size_t
ark__idset_full_lower(const ark__idset_group *g, unsigned head, uint32_t id);
ARK__INLINE_API extern inline size_t
ark__idset_group_lower(const ark__idset_group *g, unsigned head, size_t len,
                       uint32_t id);
ARK_API extern inline size_t ark_idset_lower_bound(const ark_idset *s,
                                                   uint32_t id);
ARK_API extern inline size_t ark_idset_find(const ark_idset *s, uint32_t id);
ARK_API extern inline bool ark_idset_contains(const ark_idset *s, uint32_t id);
ARK_API extern inline size_t ark_idset_count(const ark_idset *s);
ARK__INLINE_API extern inline void ark__idset_iter_load(ark_idset_iter *it);
ARK_API extern inline ark_idset_iter ark_idset_iter_begin(const ark_idset *s,
                                                          size_t pos);
ARK_API extern inline bool ark_idset_iter_valid(const ark_idset_iter *it);
ARK_API extern inline void ark_idset_iter_next(ark_idset_iter *it);

ark_status ark_idset_create(ark_idset **out, const ark_allocator *a) {
    assert(out != NULL);
    ark_allocator al;
    ark_status st = ark__allocator_init(&al, a);
    if (st != ARK_OK) {
        return st;
    }
    ark_idset *s = ark__alloc(&al, sizeof(*s), 0);
    if (s == NULL) {
        return ARK_ENOMEM;
    }
    memset(s, 0, sizeof(*s));
    s->alloc = al;
    *out = s;
    return ARK_OK;
}

void ark_idset_destroy(ark_idset *s) {
    if (s == NULL) {
        return;
    }
    if (s->detach != NULL) {
        s->detach(s->detach_ctx, s); /* frees the membership bits */
    }
    ark__idset_free_all(s);
    ark_allocator al = s->alloc;
    ark__free(&al, s, sizeof(*s));
}

size_t ark_idset_memory(const ark_idset *s) {
    assert(s != NULL);
    return sizeof(*s) + s->cap * HDR_BYTES + s->nnodes * NODE_BYTES +
           s->slabcap * sizeof(idset_slab);
}

/* ---- validate ------------------------------------------------------------ */

/* The header of group k: alignment, hot word, base, credit and buddy
 * sharing. Adds the nodes the group accounts for to *used. */
static int header_ok(const ark_idset *s, size_t k, size_t *used) {
    const grp *h = &s->v.groups[k];
    size_t ng = s->v.ngroups, b = buddy_of(s, k);
    uintptr_t addr = (uintptr_t)h->data;
    if (h->data == NULL) {
        return 0;
    }
    if (s->win_lo[k] != (h->dense ? h->base - DENSE_HALF : 0) ||
        s->win_hi[k] != (h->dense ? h->base + (DENSE_HALF - 1u) : UINT32_MAX)) {
        return 0;
    }
    if (addr % HALF_BYTES != 0 ||
        (s->v.hot[k] & ~(uintptr_t)SLOT_MASK) !=
            (addr | (h->dense ? ARK__IDSET_HOT_DENSE : 0u))) {
        return 0; /* the hot word repeats data and dense */
    }
    if (!h->dense) {
        *used += 1;
        return addr % NODE_BYTES == 0 && h->base == 0 &&
               h->credit < DEMOTE_CREDIT;
    }
    if (h->dense != 1 || h->base < DENSE_HALF ||
        h->base > UINT32_MAX - (DENSE_HALF - 1u) || h->credit != 0) {
        return 0;
    }
    if (b < ng && s->v.groups[b].dense &&
        (node_of(s->v.groups[b].data) != node_of(h->data) ||
         s->v.groups[b].data == h->data)) {
        return 0; /* dense buddies must share, in different halves */
    }
    *used += ark__idset_shares(s, k) ? !is_odd(s, k) : 1;
    return 1;
}

/* The ids of group k: strictly above *prev, key, dense range. */
static int ids_ok(const ark_idset *s, size_t k, int *have_prev,
                  uint32_t *prev) {
    const grp *h = &s->v.groups[k];
    size_t len = glen(s, k);
    uint32_t first = pos_get(s, k, 0);
    if (len == 0 || len > GROUP_SIZE || s->v.keys[k] != first) {
        return 0;
    }
    for (unsigned j = 0; j < len; j++) {
        uint32_t v = pos_get(s, k, j);
        if (*have_prev && v <= *prev) {
            return 0;
        }
        *have_prev = 1;
        *prev = v;
    }
    /* A sparse group without demotion credit is wide (the inline append
     * relies on it). */
    if (!h->dense) {
        return h->credit != 0 || *prev - first > DEMOTE_SPAN;
    }
    return *prev - first <= DENSE_SPAN;
}

/* The slabs: sorted and disjoint, their node counts adding up to nnodes
 * and their in-use counts to used, nempty counting the unused ones. */
static int slabs_ok(const ark_idset *s, size_t used) {
    size_t nodes = 0, inuse = 0, empty = 0;
    for (size_t i = 0; i < s->nslabs; i++) {
        const idset_slab *sl = &s->slabs[i];
        uintptr_t a = (uintptr_t)sl->mem;
        if (a % NODE_BYTES != 0 || sl->nodes == 0 || sl->used > sl->nodes ||
            (i > 0 && a < (uintptr_t)s->slabs[i - 1].mem +
                              (uintptr_t)s->slabs[i - 1].nodes * NODE_BYTES)) {
            return 0;
        }
        nodes += sl->nodes;
        inuse += sl->used;
        empty += sl->used == 0;
    }
    return s->nslabs <= s->slabcap && nodes == s->nnodes && inuse == used &&
           empty == s->nempty;
}

ark_status ark_idset_validate(const ark_idset *s) {
    if (s == NULL) {
        return ARK_ECORRUPT;
    }
    size_t front = s->v.front, count = s->v.count;
    size_t ng = count ? (count + front + GROUP_SIZE - 1) / GROUP_SIZE : 0;
    if (s->v.ngroups != ng || s->cap < s->lead || s->cap - s->lead < ng ||
        front >= GROUP_SIZE || (ng <= 1 && front != 0) ||
        (ng > 0 && s->v.groups == NULL)) {
        return ARK_ECORRUPT;
    }
    size_t used = 0, nd = 0;
    int have_prev = 0;
    uint32_t prev = 0;
    for (size_t k = 0; k < ng; k++) {
        if (!header_ok(s, k, &used) || !ids_ok(s, k, &have_prev, &prev)) {
            return ARK_ECORRUPT;
        }
        nd += s->v.groups[k].dense;
    }
    size_t nf = 0;
    for (const void *n = s->free_nodes; n != NULL && nf <= s->nfree; nf++) {
        memcpy(&n, n, sizeof(void *));
    }
    if (nf != s->nfree || used + s->nfree != s->nnodes || nd != s->ndense) {
        return ARK_ECORRUPT;
    }
    return slabs_ok(s, used) ? ARK_OK : ARK_ECORRUPT;
}
