/*
 * idset.c - ark_idset: seed 002's sorted id sequence in 256-id groups.
 *
 * Group k holds positions [256k, 256k + 256). Its header stores the slot of
 * position 0 (head); position j is at slot (head + j) & 255. Full groups
 * are full circular queues, so moving one id across a group boundary is
 * O(1): the group loses one end and gains the other by moving head.
 *
 * Dense groups: base is the centre of a 64K window [base - 32768, base +
 * 32767]; slot s holds (int16)(id - base). A new base is chosen centred on
 * the group's range and clamped so that base - 32768 >= 0 and base + 32767
 * <= UINT32_MAX, so no window wraps. When a value leaves the window but the
 * group's range still fits 64K, the group is rebased (256 int16 rewrites,
 * a vectorised loop; no allocation). When the range exceeds 65535 the
 * group is promoted to sparse.
 *
 * Nodes: 1024 bytes, 1024-aligned, so a dense group's node is its data
 * pointer rounded down and its half is bit 9. Groups 2k and 2k+1 are
 * buddies: when both are dense they share one node (invariant). A promoted
 * group whose buddy shares its node takes a fresh node from the freelist
 * and leaves the buddy single; a single group promotes in place.
 *
 * Why demotion is lazy (no thrash): promotion is forced (a value does not
 * fit), demotion is not. During single inserts and removes, a sparse group
 * is demoted only after DEMOTE_CREDIT consecutive touches (cascade steps
 * included) in which its range stayed at or below DEMOTE_SPAN (3/4 of the
 * dense limit). A group therefore re-encodes at most twice (one demotion,
 * one promotion) per DEMOTE_CREDIT touches: O(1) amortized per touch, even
 * against an adversary who flips its range across 64K on every cascade.
 * remove_sorted rewrites whole groups anyway, so it picks each rewritten
 * group's best form at once (its cost is already O(count)).
 *
 * Allocation and atomicity: an operation first computes how many nodes its
 * promotions and new groups can need (a read-only pre-pass), takes them
 * from the allocator onto the freelist, grows the header arrays, and only
 * then mutates; the mutation itself never allocates. The freelist is
 * trimmed to FREE_KEEP nodes at the end of each call.
 *
 * Joining buddies: an odd group joins its even buddy's free half (never the
 * reverse). Cascades process groups in increasing order, so the sharing
 * state the pre-pass saw for a group cannot gain a buddy before the group
 * itself is processed.
 */
#include "ark/idset.h"

#include "core_internal.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

/* The one external definition of each inline function of idset.h. */
ARK_API extern inline uint32_t ark_idset_at(const ark_idset *s, size_t pos);
ARK_API extern inline ark_status ark_idset_insert(ark_idset *s, uint32_t id);
ARK_API extern inline size_t ark__idset_group_of(const ark_idset *s,
                                                 uint32_t id);
ARK_API extern inline size_t ark__idset_group_lower(const ark__idset_group *g,
                                                    size_t len, uint32_t id);
ARK_API extern inline size_t ark__idset_group_len(const ark_idset *s, size_t k);
ARK_API extern inline size_t ark_idset_lower_bound(const ark_idset *s,
                                                   uint32_t id);
ARK_API extern inline size_t ark_idset_find(const ark_idset *s, uint32_t id);
ARK_API extern inline bool ark_idset_contains(const ark_idset *s, uint32_t id);
ARK_API extern inline size_t ark_idset_count(const ark_idset *s);

#define GSIZE 256u
#define NODE_BYTES 1024u
#define HALF_BYTES 512u
#define DENSE_SPAN 65535u  /* a dense group's max - min is at most this */
#define DEMOTE_SPAN 49151u /* demotion hysteresis: 3/4 of the limit */
#define DEMOTE_CREDIT 256u /* touches in a row before a lazy demotion */
#define FREE_KEEP 8u       /* nodes kept on the freelist between calls */
#define HDR_BYTES (sizeof(ark__idset_group) + sizeof(uint32_t))

typedef ark__idset_group grp;

/* ---- slots and values ---------------------------------------------------- */

static inline uint32_t slot_get(const grp *h, unsigned slot) {
    if (h->dense) {
        return h->base + (uint32_t)(int32_t)((const int16_t *)h->data)[slot];
    }
    return ((const uint32_t *)h->data)[slot];
}

/* The int16 delta of v in the window centred on base; v must fit (values
 * outside wrap harmlessly: they are only ever written to dead slots). */
static inline int16_t enc(uint32_t base, uint32_t v) {
    return (int16_t)((int32_t)((v - (base - 32768u)) & 0xffffu) - 32768);
}

static inline int fits(const grp *h, uint32_t v) {
    return v - (h->base - 32768u) <= 65535u;
}

static inline void slot_set(grp *h, unsigned slot, uint32_t v) {
    if (h->dense) {
        ((int16_t *)h->data)[slot] = enc(h->base, v);
    } else {
        ((uint32_t *)h->data)[slot] = v;
    }
}

static inline uint32_t pos_get(const grp *h, unsigned j) {
    return slot_get(h, (h->head + j) & 255u);
}

static inline grp *G(ark_idset *s, size_t k) { return &s->groups_w[k]; }

static inline size_t glen(const ark_idset *s, size_t k) {
    return ark__idset_group_len(s, k);
}

/* The centre of a 64K window covering [mn, mx] (mx - mn <= 65535). */
static uint32_t centre_for(uint32_t mn, uint32_t mx) {
    uint32_t slack = (DENSE_SPAN - (mx - mn)) / 2;
    uint32_t lo = mn >= slack ? mn - slack : 0;
    if (lo > UINT32_MAX - DENSE_SPAN) {
        lo = UINT32_MAX - DENSE_SPAN;
    }
    return lo + 32768u;
}

/* ---- nodes ----------------------------------------------------------------
 */

static inline char *node_of(const void *data) {
    return (char *)((uintptr_t)data & ~(uintptr_t)(NODE_BYTES - 1));
}

/* Whether dense group k shares its node with its (dense) buddy. */
static int shares(const ark_idset *s, size_t k) {
    size_t b = k ^ 1u;
    const grp *h = &s->groups[k];
    if (!h->dense || b >= s->ngroups || !s->groups[b].dense) {
        return 0;
    }
    return node_of(h->data) == node_of(s->groups[b].data);
}

static void *node_take(ark_idset *s) {
    void *n = s->free_nodes;
    assert(n != NULL);
    memcpy(&s->free_nodes, n, sizeof(void *));
    s->nfree--;
    return n;
}

static void node_give(ark_idset *s, void *n) {
    memcpy(n, &s->free_nodes, sizeof(void *));
    s->free_nodes = n;
    s->nfree++;
}

/* Allocate nodes onto the freelist until it holds need; on failure free
 * the ones this call added and return ARK_ENOMEM. *added says how many
 * were added, for node_unreserve. */
static ark_status node_reserve(ark_idset *s, size_t need, size_t *added) {
    *added = 0;
    while (s->nfree < need) {
        void *n = ark__alloc(&s->alloc, NODE_BYTES, NODE_BYTES);
        if (n == NULL) {
            while (*added > 0) {
                ark__free(&s->alloc, node_take(s), NODE_BYTES);
                s->nnodes--;
                (*added)--;
            }
            return ARK_ENOMEM;
        }
        memset(n, 0, NODE_BYTES);
        s->stat_allocs++;
        s->nnodes++;
        node_give(s, n);
        (*added)++;
    }
    return ARK_OK;
}

static void node_unreserve(ark_idset *s, size_t added) {
    while (added-- > 0) {
        ark__free(&s->alloc, node_take(s), NODE_BYTES);
        s->nnodes--;
    }
}

static void node_trim(ark_idset *s) {
    while (s->nfree > FREE_KEEP) {
        ark__free(&s->alloc, node_take(s), NODE_BYTES);
        s->nnodes--;
    }
}

/* ---- headers ----------------------------------------------------------- */

/* Grow the header and key arrays to hold at least want groups. */
static ark_status headers_grow(ark_idset *s, size_t want) {
    if (want <= s->cap) {
        return ARK_OK;
    }
    size_t cap = s->cap ? s->cap * 2 : 4;
    while (cap < want) {
        cap *= 2;
    }
    size_t bytes;
    if (ark__mul_overflows(cap, HDR_BYTES, &bytes)) {
        return ARK_ENOMEM;
    }
    char *block = ark__alloc(&s->alloc, bytes, _Alignof(ark__idset_group));
    if (block == NULL) {
        return ARK_ENOMEM;
    }
    s->stat_allocs++;
    grp *g = (grp *)(void *)block;
    uint32_t *k = (uint32_t *)(void *)(block + cap * sizeof(grp));
    if (s->ngroups > 0) {
        memcpy(g, s->groups_w, s->ngroups * sizeof(grp));
        memcpy(k, s->keys_w, s->ngroups * sizeof(uint32_t));
    }
    ark__free(&s->alloc, s->groups_w, s->cap * HDR_BYTES);
    s->groups_w = g;
    s->groups = g;
    s->keys_w = k;
    s->keys = k;
    s->cap = cap;
    return ARK_OK;
}

/* ---- forms ------------------------------------------------------------- */

/* Rewrite a dense group's deltas around a new centre. */
static void rebase(ark_idset *s, grp *h, uint32_t base) {
    int16_t *d = (int16_t *)h->data;
    uint32_t old = h->base;
    for (unsigned i = 0; i < GSIZE; i++) {
        d[i] = enc(base, old + (uint32_t)(int32_t)d[i]);
    }
    h->base = base;
    s->stat_rebases++;
}

/* Turn dense group k sparse, keeping its contents. Takes a node from the
 * freelist when the group shares its node (the caller reserved it). */
static void promote(ark_idset *s, size_t k) {
    grp *h = G(s, k);
    uint32_t tmp[GSIZE];
    for (unsigned i = 0; i < GSIZE; i++) {
        tmp[i] = slot_get(h, i);
    }
    char *n = shares(s, k) ? node_take(s) : node_of(h->data);
    memcpy(n, tmp, sizeof(tmp));
    h->data = n;
    h->dense = 0;
    h->base = 0;
    h->credit = 0;
    s->ndense--;
    s->stat_promotions++;
}

/* The free half of dense group k's node when k is single, else NULL. */
static char *free_half(const ark_idset *s, size_t k) {
    const grp *h = &s->groups[k];
    if (k >= s->ngroups || !h->dense || shares(s, k)) {
        return NULL;
    }
    char *n = node_of(h->data);
    return (char *)h->data == n ? n + HALF_BYTES : n;
}

/* Move single dense odd group k into its single dense even buddy's node. */
static void join(ark_idset *s, size_t k) {
    grp *h = G(s, k);
    char *dst = free_half(s, k - 1);
    char *own = node_of(h->data);
    memcpy(dst, h->data, HALF_BYTES);
    h->data = dst;
    node_give(s, own);
}

/* Turn sparse group k (range mn..mx <= DENSE_SPAN) dense. Never
 * allocates: an odd group joins its even buddy's free half when there is
 * one, else the group re-encodes into the first half of its own node. */
static void demote(ark_idset *s, size_t k, uint32_t mn, uint32_t mx) {
    grp *h = G(s, k);
    uint32_t tmp[GSIZE];
    memcpy(tmp, h->data, sizeof(tmp));
    char *own = (char *)h->data;
    char *dst = (k & 1u) ? free_half(s, k - 1) : NULL;
    uint32_t base = centre_for(mn, mx);
    int16_t *d = (int16_t *)(void *)(dst != NULL ? dst : own);
    for (unsigned i = 0; i < GSIZE; i++) {
        d[i] = enc(base, tmp[i]);
    }
    h->data = d;
    h->base = base;
    h->dense = 1;
    h->credit = 0;
    s->ndense++;
    if (dst != NULL) {
        node_give(s, own);
    }
    s->stat_demotions++;
}

/* Would group k, about to hold values in [mn, mx], need a fresh node? */
static size_t need_node(const ark_idset *s, size_t k, uint32_t mn,
                        uint32_t mx) {
    return s->groups[k].dense && mx - mn > DENSE_SPAN && shares(s, k);
}

/* Make group k able to store every value in [mn, mx] (its contents after
 * the current step): rebase or promote a dense group as needed. */
static void ensure(ark_idset *s, size_t k, uint32_t mn, uint32_t mx) {
    grp *h = G(s, k);
    if (!h->dense) {
        return;
    }
    if (mx - mn > DENSE_SPAN) {
        promote(s, k);
    } else if (!fits(h, mn) || !fits(h, mx)) {
        rebase(s, h, centre_for(mn, mx));
    }
}

/* After a single-op step on group k (now spanning mn..mx): count the lazy
 * demotion credit of a sparse group and join single dense buddies. */
static void settle(ark_idset *s, size_t k, uint32_t mn, uint32_t mx) {
    grp *h = G(s, k);
    if (!h->dense) {
        if (mx - mn <= DEMOTE_SPAN) {
            if (++h->credit >= DEMOTE_CREDIT) {
                demote(s, k, mn, mx);
            }
        } else {
            h->credit = 0;
        }
    }
    if ((k & 1u) && h->dense && free_half(s, k - 1) != NULL && !shares(s, k)) {
        join(s, k);
    }
}

/* Release the storage of the last group (it is being dropped). */
static void drop_last(ark_idset *s) {
    size_t k = s->ngroups - 1;
    if (!shares(s, k)) {
        node_give(s, node_of(s->groups[k].data));
    }
    s->ndense -= s->groups[k].dense;
    s->ngroups--;
}

/* Create group k = ngroups holding the single id v; the caller reserved a
 * node unless the even buddy has a free half, and the header capacity. */
static void add_group(ark_idset *s, uint32_t v) {
    size_t k = s->ngroups;
    char *half = (k & 1u) ? free_half(s, k - 1) : NULL;
    grp *h = G(s, k);
    h->data = half != NULL ? half : node_take(s);
    h->base = centre_for(v, v);
    h->head = 0;
    h->dense = 1;
    h->credit = 0;
    ((int16_t *)h->data)[0] = enc(h->base, v);
    s->keys_w[k] = v;
    s->ngroups++;
    s->ndense++;
}

/* ---- in-group shifts (each moves at most 127 ids) ---------------------- */

/* Move the ids at positions [a, b) one slot later (towards the tail). */
static void shift_up(grp *h, unsigned a, unsigned b) {
    unsigned hd = h->head;
    if (h->dense) {
        int16_t *d = (int16_t *)h->data;
        for (unsigned p = b; p-- > a;) {
            d[(hd + p + 1) & 255u] = d[(hd + p) & 255u];
        }
    } else {
        uint32_t *d = (uint32_t *)h->data;
        for (unsigned p = b; p-- > a;) {
            d[(hd + p + 1) & 255u] = d[(hd + p) & 255u];
        }
    }
}

/* Move the ids at positions [a, b) one slot earlier (towards the head). */
static void shift_down(grp *h, unsigned a, unsigned b) {
    unsigned hd = h->head;
    if (h->dense) {
        int16_t *d = (int16_t *)h->data;
        for (unsigned p = a; p < b; p++) {
            d[(hd + p - 1) & 255u] = d[(hd + p) & 255u];
        }
    } else {
        uint32_t *d = (uint32_t *)h->data;
        for (unsigned p = a; p < b; p++) {
            d[(hd + p - 1) & 255u] = d[(hd + p) & 255u];
        }
    }
}

/* Insert v at position j of a group holding len < 256 ids (len becomes
 * len + 1), shifting whichever side is shorter. */
static size_t put_open(grp *h, unsigned len, unsigned j, uint32_t v) {
    if (j < len - j) {
        shift_down(h, 0, j);
        h->head = (uint8_t)(h->head - 1);
        slot_set(h, (h->head + j) & 255u, v);
        return j;
    }
    shift_up(h, j, len);
    slot_set(h, (h->head + j) & 255u, v);
    return len - j;
}

/* Insert v at position j < 256 of a full group whose last id has already
 * been saved by the caller (it leaves the group). */
static size_t put_full(grp *h, unsigned j, uint32_t v) {
    if (j < 255u - j) {
        shift_down(h, 0, j);
        h->head = (uint8_t)(h->head - 1);
        slot_set(h, (h->head + j) & 255u, v);
        return j;
    }
    shift_up(h, j, 255u);
    slot_set(h, (h->head + j) & 255u, v);
    return 255u - j;
}

/* Remove position j of a group holding len ids; the slot of the old last
 * position becomes free (position len - 1 after the call is dead). */
static size_t take(grp *h, unsigned len, unsigned j) {
    if (j < len - 1u - j) {
        shift_up(h, 0, j);
        h->head = (uint8_t)(h->head + 1);
        return j;
    }
    shift_down(h, j + 1u, len);
    return len - 1u - j;
}

/* ---- create / destroy -------------------------------------------------- */

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
    while (s->ngroups > 0) {
        drop_last(s);
    }
    while (s->nfree > 0) {
        ark__free(&s->alloc, node_take(s), NODE_BYTES);
    }
    ark__free(&s->alloc, s->groups_w, s->cap * HDR_BYTES);
    ark_allocator al = s->alloc;
    ark__free(&al, s, sizeof(*s));
}

size_t ark_idset_memory(const ark_idset *s) {
    assert(s != NULL);
    return sizeof(*s) + s->cap * HDR_BYTES + s->nnodes * NODE_BYTES;
}

static void stats_reset(ark_idset *s) {
    s->stat_moves = 0;
    s->stat_promotions = 0;
    s->stat_demotions = 0;
    s->stat_rebases = 0;
    s->stat_allocs = 0;
}

/* Reserve nodes, then header capacity for want groups; all or nothing. */
static ark_status acquire(ark_idset *s, size_t nodes, size_t want) {
    size_t added;
    if (node_reserve(s, nodes, &added) != ARK_OK) {
        return ARK_ENOMEM;
    }
    if (headers_grow(s, want) != ARK_OK) {
        node_unreserve(s, added);
        return ARK_ENOMEM;
    }
    return ARK_OK;
}

/* ---- insert ----------------------------------------------------------------
 */

/* After a demotion in this call, an odd dense group may have to join its
 * even buddy (see the top); cheap when nothing was demoted. */
static inline void maybe_join(ark_idset *s, size_t i) {
    if (s->stat_demotions != 0 && (i & 1u) && s->groups[i].dense &&
        !shares(s, i) && free_half(s, i - 1) != NULL) {
        join(s, i);
    }
}

/* Lazy demotion credit of a sparse group now spanning mn..mx. */
static inline void credit(ark_idset *s, size_t i, uint32_t mn, uint32_t mx) {
    grp *h = G(s, i);
    if (mx - mn > DEMOTE_SPAN) {
        h->credit = 0;
    } else if (++h->credit >= DEMOTE_CREDIT) {
        demote(s, i, mn, mx);
    }
}

/* Cascade steps look this many groups ahead to prefetch the slot they
 * will touch: at large sizes each step is a cache miss on a node, and the
 * headers say where the next ones are. */
#define PREFETCH_AHEAD 8

/* Prefetch the slot at head + delta of group g (for writing). The shift
 * is 1 for dense (int16) and 2 for sparse (uint32) slots. */
static inline void prefetch_slot(const grp *g, int delta) {
#if defined(__GNUC__)
    unsigned slot = (unsigned)(g->head + delta) & 255u;
    __builtin_prefetch((const char *)g->data + (slot << (2u - g->dense)), 1);
#else
    (void)g;
    (void)delta;
#endif
}

/* Prefetching pays once the nodes outgrow the caches. */
#define PREFETCH_MIN_GROUPS 1024u

/* One general insert-cascade step: x enters group i (holding len ids) at
 * the front; return the id that leaves at the back when it was full. */
static uint32_t step_in(ark_idset *s, size_t i, size_t len, uint32_t x) {
    grp *h = G(s, i);
    unsigned ns = (h->head - 1u) & 255u;
    int full = len == GSIZE;
    uint32_t out = full ? slot_get(h, ns) : 0;
    uint32_t mx = pos_get(h, (unsigned)len - (full ? 2u : 1u));
    ensure(s, i, x, mx);
    slot_set(h, ns, x);
    h->head = (uint8_t)ns;
    if (!h->dense) {
        credit(s, i, x, mx);
    }
    maybe_join(s, i);
    s->keys_w[i] = x;
    return out;
}

/* One general remove-cascade step on a full middle group i: its first id
 * leaves, y (the next group's first) enters at the back. */
static void step_out(ark_idset *s, size_t i, uint32_t y) {
    grp *h = G(s, i);
    unsigned hd = h->head;
    uint32_t mn = pos_get(h, 1);
    ensure(s, i, mn, y);
    slot_set(h, hd, y);
    h->head = (uint8_t)(hd + 1u);
    if (!h->dense) {
        credit(s, i, mn, y);
    }
    maybe_join(s, i);
    s->keys_w[i] = mn;
}

static ark_status insert_at(ark_idset *s, size_t k, unsigned j, uint32_t id) {
    size_t last = s->ngroups - 1;
    size_t L = glen(s, last);
    int grows = L == GSIZE; /* the last group spills into a new one */
    /* Pre-pass: the nodes this insert can need (promotions, new group).
     * Group i > k receives x, the old last id of group i - 1, with
     * keys[i-1] <= x < keys[i]; when keys[i-1] fits group i's window so
     * does x, and the group cannot promote: no node is read then. */
    size_t need = 0;
    int last_promotes = 0;
    /* No scan when the freelist already covers every dense group (and a
     * new group), or when no group is dense (sparse ids: then only a new
     * group can need a node). */
    int scan = s->ndense != 0 && s->ndense + (size_t)grows > s->nfree;
    if (s->ndense == 0) {
        need = (size_t)grows;
    }
    for (size_t i = k; scan && i <= last; i++) {
        const grp *h = &s->groups[i];
        if (!h->dense || fits(h, i == k ? id : s->keys[i - 1])) {
            continue;
        }
        size_t len = glen(s, i);
        uint32_t mn, mx;
        if (i == k) {
            mn = j == 0 ? id : pos_get(h, 0);
            if (len == GSIZE) {
                mx = j == 255 ? id : pos_get(h, 254);
            } else {
                mx = j == len ? id : pos_get(h, (unsigned)len - 1);
            }
        } else {
            mn = pos_get(&s->groups[i - 1], 255);
            mx = pos_get(h, (unsigned)len - (len == GSIZE ? 2u : 1u));
        }
        int p = mx - mn > DENSE_SPAN;
        need += (size_t)p && shares(s, i);
        if (i == last) {
            last_promotes = p;
        }
    }
    if (grows && scan) {
        size_t g = s->ngroups;
        int half = (g & 1u) && free_half(s, g - 1) != NULL && !last_promotes;
        need += !half;
    }
    if (acquire(s, need, s->ngroups + (size_t)grows) != ARK_OK) {
        return ARK_ENOMEM;
    }
    /* Mutation: never fails from here on. */
    grp *h = G(s, k);
    size_t len = glen(s, k);
    if (len < GSIZE) {
        uint32_t mn = j == 0 ? id : pos_get(h, 0);
        uint32_t mx = j == len ? id : pos_get(h, (unsigned)len - 1);
        ensure(s, k, mn, mx);
        s->stat_moves += put_open(h, (unsigned)len, j, id);
        s->keys_w[k] = mn;
        s->count++;
        settle(s, k, mn, mx);
        return ARK_OK;
    }
    uint32_t x = pos_get(h, 255);
    {
        uint32_t mn = j == 0 ? id : pos_get(h, 0);
        uint32_t mx = j == 255 ? id : pos_get(h, 254);
        ensure(s, k, mn, mx);
        s->stat_moves += put_full(h, j, id);
        s->keys_w[k] = mn;
        settle(s, k, mn, mx);
    }
    /* The cascade: each later group takes x at its front and, if full,
     * gives its last id on. In a full circular queue the slot before head
     * is the last position, so both happen in one slot: read it, write x
     * there, move head back. The common case (x fits the dense window, or
     * a sparse group stays wide) is inline; the rest goes to step_in. */
    grp *gw = s->groups_w;
    uint32_t *keys = s->keys_w;
    size_t i = k + 1;
    /* Fast loop while nothing was demoted in this call (a demotion may
     * call for a join, which step_in handles). */
    int pf = s->ngroups >= PREFETCH_MIN_GROUPS;
    int calm = s->stat_demotions == 0;
    size_t pf_end = last > PREFETCH_AHEAD ? last - PREFETCH_AHEAD : 0;
    for (; i < last && calm; i++) {
        h = &gw[i];
        if (pf && i < pf_end) {
            prefetch_slot(&gw[i + PREFETCH_AHEAD], -1);
        }
        unsigned ns = (h->head - 1u) & 255u;
        uint32_t out;
        if (h->dense) {
            int16_t *d = (int16_t *)h->data;
            uint32_t off = x - (h->base - 32768u);
            if (off > 65535u) {
                x = step_in(s, i, GSIZE, x);
                calm = s->stat_demotions == 0;
                continue;
            }
            out = h->base + (uint32_t)(int32_t)d[ns];
            d[ns] = (int16_t)((int32_t)off - 32768);
        } else {
            uint32_t *d = (uint32_t *)h->data;
            if (d[(ns - 1u) & 255u] - x <= DEMOTE_SPAN) {
                x = step_in(s, i, GSIZE, x);
                calm = s->stat_demotions == 0;
                continue;
            }
            out = d[ns];
            d[ns] = x;
            h->credit = 0;
        }
        h->head = (uint8_t)ns;
        keys[i] = x;
        x = out;
    }
    for (; i < last; i++) {
        x = step_in(s, i, GSIZE, x);
    }
    if (i == last) {
        x = step_in(s, last, L, x);
    }
    s->stat_moves += last - k;
    s->count++;
    if (grows) {
        add_group(s, x);
        s->stat_moves++;
    }
    return ARK_OK;
}

static ark_status insert_first(ark_idset *s, uint32_t id) {
    if (acquire(s, 1, 1) != ARK_OK) {
        return ARK_ENOMEM;
    }
    add_group(s, id);
    s->count = 1;
    return ARK_OK;
}

ark_status ark__idset_insert(ark_idset *s, uint32_t id) {
    assert(s != NULL);
    stats_reset(s);
    if (s->count == 0) {
        return insert_first(s, id);
    }
    size_t last = s->ngroups - 1;
    size_t L = glen(s, last);
    grp *lh = G(s, last);
    ark_status st;
    if (L < GSIZE) {
        /* Append fast path: a free slot after the last id, no cascade. */
        unsigned slot = (lh->head + (unsigned)L) & 255u;
        if (lh->dense) {
            int16_t *d = (int16_t *)lh->data;
            if (id > lh->base + (uint32_t)(int32_t)d[(slot - 1u) & 255u] &&
                fits(lh, id)) {
                d[slot] = enc(lh->base, id);
                s->count++;
                return ARK_OK;
            }
        } else {
            uint32_t *d = (uint32_t *)lh->data;
            if (id > d[(slot - 1u) & 255u]) {
                d[slot] = id;
                s->count++;
                credit(s, last, s->keys[last], id);
                return ARK_OK;
            }
        }
    }
    if (id > pos_get(lh, (unsigned)L - 1)) {
        /* Append: the entity-creation path, O(1) amortized. */
        if (L < GSIZE) {
            st = insert_at(s, last, (unsigned)L, id);
        } else {
            size_t g = s->ngroups;
            int half = (g & 1u) && free_half(s, g - 1) != NULL;
            st = acquire(s, !half, g + 1);
            if (st == ARK_OK) {
                add_group(s, id);
                s->count++;
            }
        }
    } else {
        size_t k = id < s->keys[0] ? 0 : ark__idset_group_of(s, id);
        size_t len = glen(s, k);
        size_t j = ark__idset_group_lower(&s->groups[k], len, id);
        if (j < len && pos_get(&s->groups[k], (unsigned)j) == id) {
            return ARK_EEXIST;
        }
        if (j == len) { /* between groups: the next group's front */
            k++;
            j = 0;
        }
        st = insert_at(s, k, (unsigned)j, id);
    }
    node_trim(s);
    return st;
}

/* ---- remove ------------------------------------------------------------ */

static ark_status remove_pos(ark_idset *s, size_t k, unsigned j) {
    size_t last = s->ngroups - 1;
    /* Pre-pass: groups before the last gain y = keys[i+1] at the back;
     * when y fits the window the group cannot promote. */
    size_t need = 0;
    /* No scan when no group is dense or the freelist covers them all. */
    int scan = s->ndense != 0 && s->ndense > s->nfree;
    for (size_t i = k; scan && i < last; i++) {
        const grp *h = &s->groups[i];
        if (h->dense && !fits(h, s->keys[i + 1])) {
            uint32_t mn = pos_get(h, (i > k || j == 0) ? 1u : 0u);
            need += need_node(s, i, mn, s->keys[i + 1]);
        }
    }
    if (acquire(s, need, s->ngroups) != ARK_OK) {
        return ARK_ENOMEM;
    }
    grp *h = G(s, k);
    size_t len = glen(s, k);
    if (k == last) {
        s->stat_moves += take(h, (unsigned)len, j);
        s->count--;
        if (len == 1) {
            drop_last(s);
        } else {
            uint32_t mn = pos_get(h, 0);
            s->keys_w[k] = mn;
            settle(s, k, mn, pos_get(h, (unsigned)len - 2));
        }
        return ARK_OK;
    }
    {
        uint32_t y = s->keys[k + 1];
        uint32_t mn = pos_get(h, j == 0 ? 1 : 0);
        ensure(s, k, mn, y);
        s->stat_moves += take(h, GSIZE, j);
        slot_set(h, (h->head + 255u) & 255u, y);
        s->keys_w[k] = mn;
        settle(s, k, mn, y);
    }
    /* The cascade: each middle group gives its first id back and takes
     * the next group's first id (still keys[i+1]) in the same slot. */
    grp *gw = s->groups_w;
    uint32_t *keys = s->keys_w;
    size_t i = k + 1;
    int pf = s->ngroups >= PREFETCH_MIN_GROUPS;
    int calm = s->stat_demotions == 0;
    size_t pf_end = last > PREFETCH_AHEAD ? last - PREFETCH_AHEAD : 0;
    for (; i < last && calm; i++) {
        h = &gw[i];
        if (pf && i < pf_end) {
            prefetch_slot(&gw[i + PREFETCH_AHEAD], 0);
        }
        uint32_t y = keys[i + 1];
        unsigned hd = h->head, nh = (hd + 1u) & 255u;
        uint32_t mn;
        if (h->dense) {
            int16_t *d = (int16_t *)h->data;
            uint32_t off = y - (h->base - 32768u);
            if (off > 65535u) {
                step_out(s, i, y);
                calm = s->stat_demotions == 0;
                continue;
            }
            d[hd] = (int16_t)((int32_t)off - 32768);
            mn = h->base + (uint32_t)(int32_t)d[nh];
        } else {
            uint32_t *d = (uint32_t *)h->data;
            mn = d[nh];
            if (y - mn <= DEMOTE_SPAN) {
                step_out(s, i, y);
                calm = s->stat_demotions == 0;
                continue;
            }
            d[hd] = y;
            h->credit = 0;
        }
        h->head = (uint8_t)nh;
        keys[i] = mn;
    }
    for (; i < last; i++) {
        step_out(s, i, keys[i + 1]);
    }
    s->stat_moves += last - k;
    h = G(s, last);
    len = glen(s, last);
    s->count--;
    if (len == 1) {
        drop_last(s);
    } else {
        h->head = (uint8_t)(h->head + 1);
        uint32_t mn = pos_get(h, 0);
        s->keys_w[last] = mn;
        settle(s, last, mn, pos_get(h, (unsigned)len - 2));
    }
    return ARK_OK;
}

ark_status ark_idset_remove(ark_idset *s, uint32_t id) {
    assert(s != NULL);
    stats_reset(s);
    size_t p = ark_idset_find(s, id);
    if (p == ARK_NOT_FOUND) {
        return ARK_ENOTFOUND;
    }
    ark_status st = remove_pos(s, p >> 8, (unsigned)(p & 255u));
    node_trim(s);
    return st;
}

ark_status ark_idset_remove_at(ark_idset *s, size_t pos) {
    assert(s != NULL);
    stats_reset(s);
    if (pos >= s->count) {
        return ARK_ERANGE;
    }
    ark_status st = remove_pos(s, pos >> 8, (unsigned)(pos & 255u));
    node_trim(s);
    return st;
}

/* out[i] = base + d[i] for i < n, in blocks of 8 with a constant trip
 * count so that -O2 vectorises them (the unknown-length loop it won't). */
static void widen(uint32_t *out, const int16_t *d, size_t n, uint32_t base) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (size_t q = 0; q < 8; q++) {
            out[i + q] = base + (uint32_t)(int32_t)d[i + q];
        }
    }
    for (; i < n; i++) {
        out[i] = base + (uint32_t)(int32_t)d[i];
    }
}

/* Decode positions [j, j + n) of group h (n <= 256 - j... within the
 * group) into out: at most two contiguous slot runs, each a tight loop. */
static void decode(const grp *h, size_t j, size_t n, uint32_t *out) {
    unsigned slot = (h->head + (unsigned)j) & 255u;
    size_t first = GSIZE - slot < n ? GSIZE - slot : n;
    if (h->dense) {
        const int16_t *d = (const int16_t *)h->data;
        widen(out, d + slot, first, h->base);
        widen(out + first, d, n - first, h->base);
    } else {
        const uint32_t *d = (const uint32_t *)h->data;
        memcpy(out, d + slot, first * sizeof(uint32_t));
        memcpy(out + first, d, (n - first) * sizeof(uint32_t));
    }
}

/* ---- remove_sorted ----------------------------------------------------- */

/* Write len (1..256) sorted ids as the whole content of group k, in the
 * form its range asks for. The sweep rewrites every group anyway, so it
 * demotes at once (no credit) and joins odd dense groups to their even
 * buddy's free half. Never allocates: a promotion takes a reserved node. */
static void write_group(ark_idset *s, size_t k, const uint32_t *v, size_t len) {
    grp *h = G(s, k);
    uint32_t mn = v[0], mx = v[len - 1];
    h->head = 0;
    h->credit = 0;
    s->keys_w[k] = mn;
    if (mx - mn > DENSE_SPAN || (!h->dense && mx - mn > DEMOTE_SPAN)) {
        if (h->dense) {
            h->data = shares(s, k) ? node_take(s) : node_of(h->data);
            h->dense = 0;
            h->base = 0;
            s->ndense--;
            s->stat_promotions++;
        }
        memcpy(h->data, v, len * sizeof(uint32_t));
        return;
    }
    char *dst = (k & 1u) && !shares(s, k) ? free_half(s, k - 1) : NULL;
    if (dst != NULL) {
        node_give(s, node_of(h->data)); /* k owned its node alone */
    } else {
        dst = h->dense ? (char *)h->data : node_of(h->data);
    }
    if (!h->dense) {
        s->stat_demotions++;
        s->ndense++;
    }
    uint32_t base = centre_for(mn, mx);
    int16_t *d = (int16_t *)(void *)dst;
    if (len == GSIZE) {
        for (size_t i = 0; i < GSIZE; i++) { /* constant trip: vectorised */
            d[i] = enc(base, v[i]);
        }
    } else {
        for (size_t i = 0; i < len; i++) {
            d[i] = enc(base, v[i]);
        }
    }
    h->data = d;
    h->dense = 1;
    h->base = base;
}

/* Decode the len ids of group h in position order. */
static void decode_group(const grp *h, size_t len, uint32_t *out) {
    if (len < GSIZE) {
        decode(h, 0, len, out);
        return;
    }
    uint32_t tmp[GSIZE];
    const uint32_t *src = (const uint32_t *)h->data;
    if (h->dense) {
        const int16_t *d = (const int16_t *)h->data;
        uint32_t base = h->base;
        for (size_t i = 0; i < GSIZE; i++) { /* constant trip: vectorised */
            tmp[i] = base + (uint32_t)(int32_t)d[i];
        }
        src = tmp;
    }
    unsigned hd = h->head;
    memcpy(out, src + hd, (GSIZE - hd) * sizeof(uint32_t));
    memcpy(out + (GSIZE - hd), src, hd * sizeof(uint32_t));
}

/* The first index in v[0, n) (n >= 1) whose value is >= id, or n. */
static size_t lower_u32(const uint32_t *v, size_t n, uint32_t id) {
    const uint32_t *b = v;
    while (n > 1) {
        size_t half = n >> 1;
        b = b[half] < id ? b + half : b;
        n -= half;
    }
    return (size_t)(b - v) + (*b < id);
}

/* The output side of the sweep: a buffer of up to 256 kept ids, flushed
 * into group k. */
typedef struct rs_out {
    uint32_t buf[GSIZE];
    size_t len, k;
} rs_out;

static void rs_emit(ark_idset *s, rs_out *o, const uint32_t *v, size_t n) {
    while (n > 0) {
        size_t c = GSIZE - o->len < n ? GSIZE - o->len : n;
        memcpy(o->buf + o->len, v, c * sizeof(uint32_t));
        o->len += c;
        v += c;
        n -= c;
        if (o->len == GSIZE) {
            write_group(s, o->k++, o->buf, GSIZE);
            o->len = 0;
        }
    }
}

ark_status ark_idset_remove_sorted(ark_idset *s, const uint32_t *ids,
                                   size_t n) {
    assert(s != NULL);
    stats_reset(s);
    if (n == 0) {
        return ARK_OK;
    }
    if (ids == NULL) {
        return ARK_EINVAL;
    }
    for (size_t i = 1; i < n; i++) {
        if (ids[i] < ids[i - 1]) {
            return ARK_EINVAL;
        }
    }
    if (s->count == 0) {
        return ARK_OK;
    }
    /* Groups before the one holding the first batch id are untouched. */
    size_t p0 = ark_idset_lower_bound(s, ids[0]);
    if (p0 >= s->count) {
        return ARK_OK;
    }
    size_t k0 = p0 >> 8, oldng = s->ngroups, oldcount = s->count;
    /* Nodes for promotions, bounded without finding the batch: output
     * group k holds kept ids from input positions [256k, 256k + 255 + n],
     * so its values lie in [keys[k], keys[(256k + 255 + n) / 256 + 1]]
     * (or the maximum). A dense group whose window holds both ends cannot
     * promote; any other dense group that shares its node may. */
    size_t need = 0;
    uint32_t top = ark_idset_at(s, oldcount - 1);
    for (size_t k = k0; k < oldng; k++) {
        const grp *h = &s->groups[k];
        if (!h->dense || !shares(s, k)) {
            continue;
        }
        size_t hi = (k << 8) + 255u + (n < oldcount ? n : oldcount);
        size_t g = hi / GSIZE + 1;
        uint32_t up = hi >= oldcount - 1 || g >= oldng ? top : s->keys[g];
        need += !fits(h, s->keys[k]) || !fits(h, up);
    }
    if (acquire(s, need, s->ngroups) != ARK_OK) {
        return ARK_ENOMEM;
    }
    /* Decode each group from k0, copy the runs between batch ids to the
     * output buffer, rewrite output groups in order. Output group k is
     * written only after input group k was decoded (writes lag reads). */
    rs_out o = {{0}, 0, k0};
    size_t b = 0;
    for (size_t i = k0; i < oldng; i++) {
        uint32_t in[GSIZE];
        size_t len = i + 1 < oldng ? GSIZE : oldcount - (i << 8);
        decode_group(&s->groups[i], len, in);
        size_t t = 0;
        while (t < len && b < n && ids[b] <= in[len - 1]) {
            uint32_t id = ids[b++];
            if (id < in[t]) {
                continue; /* absent, or a repeat */
            }
            size_t p = t + lower_u32(in + t, len - t, id);
            rs_emit(s, &o, in + t, p - t);
            t = p + (in[p] == id);
        }
        rs_emit(s, &o, in + t, len - t);
    }
    if (o.len > 0) {
        write_group(s, o.k++, o.buf, o.len);
    }
    size_t newcount = ((o.k - 1) << 8) + (o.len ? o.len : GSIZE);
    if (o.k == k0) {
        newcount = k0 << 8;
    }
    size_t newng = o.k;
    s->stat_moves = oldcount - (k0 << 8);
    /* Drop the groups past the new end; count first so glen sees it. */
    s->count = newcount;
    while (s->ngroups > newng) {
        drop_last(s);
    }
    node_trim(s);
    return ARK_OK;
}

/* ---- copy -------------------------------------------------------------- */

size_t ark_idset_copy(const ark_idset *s, size_t pos, uint32_t *out, size_t n) {
    assert(s != NULL);
    if (pos >= s->count || n == 0) {
        return 0;
    }
    if (n > s->count - pos) {
        n = s->count - pos;
    }
    size_t done = 0;
    while (done < n) {
        size_t k = pos >> 8;
        unsigned j = (unsigned)(pos & 255u);
        const grp *h = &s->groups[k];
        size_t seg = ark__idset_group_len(s, k) - j;
        if (seg > n - done) {
            seg = n - done;
        }
        decode(h, j, seg, out + done);
        done += seg;
        pos += seg;
    }
    return n;
}

/* ---- validate ---------------------------------------------------------- */

ark_status ark_idset_validate(const ark_idset *s) {
    if (s == NULL) {
        return ARK_ECORRUPT;
    }
    size_t ng = (s->count + GSIZE - 1) / GSIZE;
    if (s->ngroups != ng || s->cap < ng || s->groups != s->groups_w ||
        s->keys != s->keys_w || (ng > 0 && s->groups == NULL)) {
        return ARK_ECORRUPT;
    }
    size_t used = 0;
    int have_prev = 0;
    uint32_t prev = 0;
    for (size_t k = 0; k < ng; k++) {
        const grp *h = &s->groups[k];
        size_t len = glen(s, k);
        uintptr_t addr = (uintptr_t)h->data;
        if (h->data == NULL || len == 0 || len > GSIZE) {
            return ARK_ECORRUPT;
        }
        if (h->dense) {
            if (h->dense != 1 || addr % HALF_BYTES != 0 || h->base < 32768u ||
                h->base > UINT32_MAX - 32767u || h->credit != 0) {
                return ARK_ECORRUPT;
            }
            size_t b = k ^ 1u;
            if (b < ng && s->groups[b].dense &&
                node_of(s->groups[b].data) != node_of(h->data)) {
                return ARK_ECORRUPT; /* dense buddies must share */
            }
            if (b < ng && s->groups[b].dense && s->groups[b].data == h->data) {
                return ARK_ECORRUPT; /* same half twice */
            }
            used += shares(s, k) ? (k & 1u) == 0 : 1;
        } else {
            if (addr % NODE_BYTES != 0 || h->base != 0 ||
                h->credit >= DEMOTE_CREDIT) {
                return ARK_ECORRUPT;
            }
            used++;
        }
        uint32_t first = pos_get(h, 0);
        if (s->keys[k] != first) {
            return ARK_ECORRUPT;
        }
        for (unsigned j = 0; j < len; j++) {
            uint32_t v = pos_get(h, j);
            if (have_prev && v <= prev) {
                return ARK_ECORRUPT;
            }
            have_prev = 1;
            prev = v;
        }
        if (h->dense && prev - first > DENSE_SPAN) {
            return ARK_ECORRUPT;
        }
    }
    size_t nf = 0;
    for (const void *n = s->free_nodes; n != NULL && nf <= s->nfree; nf++) {
        memcpy(&n, n, sizeof(void *));
    }
    size_t nd = 0;
    for (size_t k = 0; k < ng; k++) {
        nd += s->groups[k].dense;
    }
    if (nf != s->nfree || used + s->nfree != s->nnodes || nd != s->ndense) {
        return ARK_ECORRUPT;
    }
    return ARK_OK;
}
