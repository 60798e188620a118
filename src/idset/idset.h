/* SPDX-License-Identifier: MIT */
/*
 * idset/idset.h - the private side of ark_idset, shared by its files, each
 * calling only those listed above it:
 *
 *   node.c     the node freelist, buddies, header arrays, adding and
 *              dropping whole groups
 *   group.c    the group encoding: slots, dense windows, forms
 *   cascade.c  single insert and remove: the in-group shift and the
 *              cascade across later groups
 *   sweep.c    remove_sorted (the frame-end sweep) and copy
 *   algebra.c  intersect, union, difference, intersect_count
 *   idset.c    create, destroy, memory, validate; the inline twins
 *
 * Group k holds positions [256k, 256k + 256). Its hot word (hot[k], see
 * ark__idset_view) stores the slot of position 0 (head), beside a copy of
 * its header's data and dense; position j is at slot (head + j) &
 * SLOT_MASK. Full groups are full circular queues, so moving one id across
 * a group boundary is O(1): the group loses one end and gains the other by
 * moving head.
 *
 * Dense groups: base is the centre of a 64K window [base - DENSE_HALF,
 * base + DENSE_HALF - 1]; slot s holds (int16)(id - base). A new base is
 * chosen centred on the group's range and clamped so that no window wraps.
 * When a value leaves the window but the group's range still fits 64K, the
 * group is rebased (256 int16 rewrites; no allocation). When the range
 * exceeds DENSE_SPAN the group is promoted to sparse.
 *
 * Nodes: NODE_BYTES, NODE_BYTES-aligned, so a dense group's node is its
 * data pointer rounded down and its half is bit 9. Groups 2k and 2k+1 are
 * buddies: when both are dense they share one node (invariant).
 */
#ifndef ARK_IDSET_IDSET_H
#define ARK_IDSET_IDSET_H

#include "ark/idset.h"

#include "base/base.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

/* Debug statistics of the last mutating call (ids moved, form changes),
 * read by the tests. Compiled in unless NDEBUG, or as ARK_IDSET_STATS says;
 * nothing in the algorithm reads them. */
#ifndef ARK_IDSET_STATS
#ifdef NDEBUG
#define ARK_IDSET_STATS 0
#else
#define ARK_IDSET_STATS 1
#endif
#endif

#define GROUP_SIZE ARK__IDSET_GROUP /* ids per group */
#define SLOT_MASK ARK__IDSET_MASK   /* slot arithmetic is modulo GROUP_SIZE */
#define LAST_SLOT (GROUP_SIZE - 1u) /* the last position of a full group */
#define NODE_BYTES 1024u
#define HALF_BYTES 512u            /* one dense group: 256 int16 */
#define LINE_BYTES 64u             /* a cache line, for prefetches */
#define DENSE_HALF ARK__IDSET_HALF /* a dense window is base +- this */
#define DENSE_SPAN ARK__IDSET_SPAN /* a dense group's max - min, at most */
#define DEMOTE_SPAN ARK__IDSET_DEMOTE_SPAN /* hysteresis: 3/4 of the limit */
#define DEMOTE_CREDIT ARK__IDSET_DEMOTE_CREDIT /* touches before demoting */
#define FREE_KEEP 8u /* nodes kept on the freelist between calls */
#define SLAB_MAX 64u /* nodes per slab, at most (see node.c) */
/* Per group: the header, the hot word, the key, and the window bounds. */
#define HDR_BYTES                                                              \
    (sizeof(ark__idset_group) + sizeof(uintptr_t) + 3 * sizeof(uint32_t))

typedef ark__idset_group grp;

#if ARK_IDSET_STATS
typedef struct idset_stats {
    size_t moves;      /* ids moved between slots or groups */
    size_t promotions; /* groups turned dense -> sparse */
    size_t demotions;  /* groups turned sparse -> dense */
    size_t hdr_moved;  /* group entries the header arrays moved */
} idset_stats;
#define STAT_ADD(s, field, n) ((s)->stats.field += (n))
#else
#define STAT_ADD(s, field, n) ((void)(s), (void)(n))
#endif

/* A block of nodes taken from the allocator at once (node.c). */
typedef struct idset_slab {
    char *mem;      /* nodes NODE_BYTES each, NODE_BYTES-aligned */
    uint32_t nodes; /* nodes in the slab */
    uint32_t used;  /* of them, not on the freelist */
} idset_slab;

struct ark_idset {
    ark__idset_view v; /* first member: what the inline functions read */
    /* The header, hot, key and window arrays share one block (hdr) of
     * cap entries each; group 0 is entry lead of each, so that prepending
     * or dropping group 0 moves a pointer, not the arrays (see headers_grow
     * in node.c). */
    char *hdr;
    size_t cap;  /* entries of each array */
    size_t lead; /* unused entries before group 0 */
    /* Each group's dense window [win_lo, win_hi] (sparse: [0, UINT32_MAX]),
     * kept beside the keys so that the pre-pass of a cascade can ask "does
     * any group need a form change?" with one vectorised sweep over two
     * contiguous arrays instead of a walk over the headers. */
    uint32_t *win_lo, *win_hi;
    void *free_nodes;  /* freelist of NODE_BYTES nodes */
    size_t nfree;      /* nodes on the freelist */
    size_t nnodes;     /* nodes allocated (in use + free) */
    size_t ndense;     /* dense groups */
    idset_slab *slabs; /* the slabs holding the nodes, by address */
    size_t nslabs;     /* slabs held */
    size_t slabcap;    /* slabs the array has room for */
    size_t nempty;     /* slabs whose nodes are all free */
    /* Buddies are groups 2m and 2m + 1 of an absolute numbering whose
     * group 0 has parity odd0: adding or dropping a group at the front
     * flips odd0 instead of re-pairing every group. */
    unsigned odd0;
    ark_allocator alloc;
    /* Set while the set holds the tags of an entity pool (src/entity.c):
     * destroy calls detach, and the set algebra keeps it when it replaces
     * the contents. */
    void (*detach)(void *ctx, ark_idset *s);
    void *detach_ctx;
    uint64_t *epoch;      /* the entity pool's epoch, bumped by removals */
    size_t present_words; /* words allocated for v.present */
#if ARK_IDSET_STATS
    idset_stats stats;
#endif
};

/* ---- slots and values (group.c holds the rest) ------------------ */

static inline uint32_t slot_get(const grp *h, unsigned slot) {
    if (h->dense) {
        return ark__idset_dense_id(h->base, h->data, slot);
    }
    return ((const uint32_t *)h->data)[slot];
}

/* The int16 delta of v in the window centred on base; v must fit (values
 * outside wrap harmlessly: they are only ever written to dead slots). */
static inline int16_t enc(uint32_t base, uint32_t v) {
    return (int16_t)((int32_t)((v - (base - DENSE_HALF)) & DENSE_SPAN) -
                     (int32_t)DENSE_HALF);
}

static inline int fits(const grp *h, uint32_t v) {
    return v - (h->base - DENSE_HALF) <= DENSE_SPAN;
}

static inline void slot_set(grp *h, unsigned slot, uint32_t v) {
    if (h->dense) {
        ((int16_t *)h->data)[slot] = enc(h->base, v);
    } else {
        ((uint32_t *)h->data)[slot] = v;
    }
}

static inline grp *G(ark_idset *s, size_t k) { return &s->v.groups[k]; }

/* The slot holding group k's first id (kept in its hot word only). */
static inline unsigned head_of(const ark_idset *s, size_t k) {
    return (unsigned)(s->v.hot[k] & SLOT_MASK);
}

static inline void head_set(ark_idset *s, size_t k, unsigned head) {
    s->v.hot[k] = (s->v.hot[k] & ~(uintptr_t)SLOT_MASK) | (head & SLOT_MASK);
}

/* The id at position j of group k. */
static inline uint32_t pos_get(const ark_idset *s, size_t k, unsigned j) {
    return ark__idset_group_id(&s->v, k, j);
}

/* The position of group k's first id. */
static inline size_t group_start(const ark_idset *s, size_t k) {
    return k != 0 ? k * GROUP_SIZE - s->v.front : 0;
}

/* Ids held by group k. */
static inline size_t glen(const ark_idset *s, size_t k) {
    size_t end =
        k + 1 < s->v.ngroups ? (k + 1) * GROUP_SIZE - s->v.front : s->v.count;
    return end - group_start(s, k);
}

/* The group holding position pos, and the index inside it. */
static inline size_t locate(const ark_idset *s, size_t pos, unsigned *j) {
    size_t at = pos + s->v.front;
    size_t k = at / GROUP_SIZE;
    *j = (unsigned)(k != 0 ? at & SLOT_MASK : pos);
    return k;
}

static inline char *node_of(const void *data) {
    return (char *)((uintptr_t)data & ~(uintptr_t)(NODE_BYTES - 1));
}

static inline int is_odd(const ark_idset *s, size_t k) {
    return (int)((k + s->odd0) & 1u);
}

/* The even buddy of group k when k is odd (and not group 0), else
 * SIZE_MAX (no group). */
static inline size_t even_buddy(const ark_idset *s, size_t k) {
    return is_odd(s, k) && k > 0 ? k - 1 : SIZE_MAX;
}

/* Group k's buddy index (may be past the last group, or SIZE_MAX). */
static inline size_t buddy_of(const ark_idset *s, size_t k) {
    return is_odd(s, k) ? even_buddy(s, k) : k + 1;
}

/* The hot word of a group with these slots, form and head (see
 * ark__idset_view in idset.h); slots are at least HALF_BYTES-aligned, so
 * the low bits are free. */
static inline uintptr_t hot_word(const void *data, unsigned dense,
                                 unsigned head) {
    assert(((uintptr_t)data & ~ARK__IDSET_HOT_ADDR) == 0);
    return (uintptr_t)data | (dense ? ARK__IDSET_HOT_DENSE : 0u) | head;
}

/* Copy group k's slots and form from its header into its hot word after
 * either changed (head stays). Every such change is followed by this;
 * validate checks the words. */
static inline void hot_sync(ark_idset *s, size_t k) {
    const grp *h = &s->v.groups[k];
    s->v.hot[k] = hot_word(h->data, h->dense, head_of(s, k));
}

/* Refresh the window bounds of group k after its base or form changed. */
static inline void window_sync(ark_idset *s, size_t k) {
    const grp *h = &s->v.groups[k];
    s->win_lo[k] = h->dense ? h->base - DENSE_HALF : 0;
    s->win_hi[k] = h->dense ? h->base + (DENSE_HALF - 1u) : UINT32_MAX;
}

static inline void stats_reset(ark_idset *s) {
#if ARK_IDSET_STATS
    memset(&s->stats, 0, sizeof(s->stats));
#else
    (void)s;
#endif
}

/* The centre of a 64K window covering [mn, mx] (mx - mn <= DENSE_SPAN). */
static inline uint32_t ark__idset_centre(uint32_t mn, uint32_t mx) {
    uint32_t slack = (DENSE_SPAN - (mx - mn)) / 2;
    uint32_t lo = mn >= slack ? mn - slack : 0;
    if (lo > UINT32_MAX - DENSE_SPAN) {
        lo = UINT32_MAX - DENSE_SPAN;
    }
    return lo + DENSE_HALF;
}

/* ---- group encoding (group.c) ----------------------------------------- */

void ark__idset_promote(ark_idset *s, size_t k);
void ark__idset_demote(ark_idset *s, size_t k, uint32_t mn, uint32_t mx);
void ark__idset_ensure(ark_idset *s, size_t k, uint32_t mn, uint32_t mx);
void ark__idset_credit(ark_idset *s, size_t k, uint32_t mn, uint32_t mx);
void ark__idset_settle(ark_idset *s, size_t k, uint32_t mn, uint32_t mx);
void ark__idset_write_group(ark_idset *s, size_t k, const uint32_t *v,
                            size_t len);
void ark__idset_decode(const ark_idset *s, size_t k, size_t j, size_t n,
                       uint32_t *out);
void ark__idset_decode_group(const ark_idset *s, size_t k, size_t len,
                             uint32_t *out);
size_t ark__idset_put(ark_idset *s, size_t k, unsigned len, unsigned j,
                      uint32_t v);
size_t ark__idset_take(ark_idset *s, size_t k, unsigned len, unsigned j);
size_t ark__idset_put_front(ark_idset *s, size_t k, unsigned j, uint32_t v);
size_t ark__idset_take_front(ark_idset *s, size_t k, unsigned j);

/* ---- removal in two steps (cascade.c), for a removal that must not
 * fail once started (an entity's tags) ----------------------------------- */

/* Take the nodes removing id may need (nothing when id is absent), so that
 * ark_idset_remove(s, id) cannot fail until s changes. Errors:
 * ARK_ENOMEM (the ids are unchanged). */
ark_status ark__idset_remove_prepare(ark_idset *s, uint32_t id);

/* Take the nodes ark_idset_remove_sorted(s, ids, n) may need, so that it
 * cannot fail until s changes (sweep.c). Errors: ARK_ENOMEM (the ids are
 * unchanged). */
ark_status ark__idset_remove_sorted_prepare(ark_idset *s, const uint32_t *ids,
                                            size_t n);

/* ---- nodes, buddies, headers, the list of groups (node.c) ------------- */

int ark__idset_shares(const ark_idset *s, size_t k);
char *ark__idset_free_half(const ark_idset *s, size_t k);
void ark__idset_join(ark_idset *s, size_t k);
void *ark__idset_node_take(ark_idset *s);
void ark__idset_node_give(ark_idset *s, void *n);
void ark__idset_drop_front(ark_idset *s, size_t d);
void ark__idset_node_trim(ark_idset *s);
ark_status ark__idset_acquire(ark_idset *s, size_t nodes, size_t want);
ark_status ark__idset_acquire_front(ark_idset *s, size_t nodes);
void ark__idset_drop_last(ark_idset *s);
void ark__idset_add_group(ark_idset *s, uint32_t v);
void ark__idset_add_sparse_group(ark_idset *s, uint32_t v);
void ark__idset_prepend_group(ark_idset *s, uint32_t v);
void ark__idset_free_all(ark_idset *s);

#endif /* ARK_IDSET_IDSET_H */
