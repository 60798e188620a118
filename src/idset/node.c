/* SPDX-License-Identifier: MIT */
/*
 * node.c - storage: the freelist of 1024-byte nodes, buddy sharing,
 * and the contiguous header and key arrays.
 *
 * Allocation and atomicity: an operation first computes how many nodes it
 * can need (a read-only pre-pass), takes them from the allocator onto the
 * freelist and grows the header arrays (acquire), and only then mutates;
 * the mutation itself never allocates. Nodes come from the allocator in
 * slabs (see "slabs" below); at the end of each call, slabs whose nodes are
 * all free go back while FREE_KEEP other free nodes remain.
 *
 * Joining buddies: an odd group joins its even buddy's free half (never
 * the reverse), when either of them is demoted (ark__idset_demote). A
 * group the pre-pass saw single may so come to share its node before a
 * cascade reaches it; the join gave its node back to the freelist, which
 * covers the node a promotion of that group then takes.
 */
#include "idset/idset.h"

/* Whether dense group k shares its node with its (dense) buddy. */
int ark__idset_shares(const ark_idset *s, size_t k) {
    size_t b = buddy_of(s, k);
    const grp *h = &s->v.groups[k];
    if (!h->dense || b >= s->v.ngroups || !s->v.groups[b].dense) {
        return 0;
    }
    return node_of(h->data) == node_of(s->v.groups[b].data);
}

/* The free half of dense group k's node when k is single, else NULL. */
char *ark__idset_free_half(const ark_idset *s, size_t k) {
    if (k >= s->v.ngroups) {
        return NULL;
    }
    const grp *h = &s->v.groups[k];
    if (!h->dense || ark__idset_shares(s, k)) {
        return NULL;
    }
    char *n = node_of(h->data);
    return (char *)h->data == n ? n + HALF_BYTES : n;
}

/* Move single dense odd group k into its single dense even buddy's node. */
void ark__idset_join(ark_idset *s, size_t k) {
    grp *h = G(s, k);
    char *dst = ark__idset_free_half(s, even_buddy(s, k));
    char *own = node_of(h->data);
    memcpy(dst, h->data, HALF_BYTES);
    h->data = dst;
    hot_sync(s, k);
    ark__idset_node_give(s, own);
}

/* ---- slabs ---------------------------------------------------------------
 *
 * Nodes come from the allocator in slabs of 1..SLAB_MAX contiguous nodes.
 * A set with n nodes takes slabs of about n / 64 nodes, so at most about
 * 1/64 of its nodes sit unused in its newest slab, and a small set still
 * takes one node at a time. Why: a 1024-aligned 1024-byte block costs a
 * C library allocator about 2048 bytes of address space (glibc), so nodes
 * taken one by one spread a set's memory over twice as many pages; a
 * cascade step or an at() then misses the TLB about twice as often, which
 * on a virtual machine dominates a sparse set's cascade (measured in
 * docs/idset.md). A slab goes back to the allocator when all of its nodes
 * are free and FREE_KEEP other free nodes remain. */

/* The slab holding node n: the last one whose memory starts at or below n
 * (slabs are sorted by address). */
static idset_slab *slab_of(const ark_idset *s, const void *n) {
    const idset_slab *b = s->slabs;
    size_t cnt = s->nslabs;
    uintptr_t a = (uintptr_t)n;
    while (cnt > 1) {
        size_t half = cnt >> 1;
        b = (uintptr_t)b[half].mem <= a ? b + half : b;
        cnt -= half;
    }
    return (idset_slab *)b;
}

void *ark__idset_node_take(ark_idset *s) {
    void *n = s->free_nodes;
    assert(n != NULL);
    memcpy(&s->free_nodes, n, sizeof(void *));
    s->nfree--;
    idset_slab *sl = slab_of(s, n);
    s->nempty -= sl->used++ == 0;
    return n;
}

static void node_push(ark_idset *s, void *n) {
    memcpy(n, &s->free_nodes, sizeof(void *));
    s->free_nodes = n;
    s->nfree++;
}

void ark__idset_node_give(ark_idset *s, void *n) {
    node_push(s, n);
    idset_slab *sl = slab_of(s, n);
    s->nempty += --sl->used == 0;
}

/* Nodes per new slab for a set holding nnodes: about nnodes / 64, a power
 * of two in [1, SLAB_MAX]. */
static size_t slab_size(const ark_idset *s) {
    size_t n = 1;
    while (n < SLAB_MAX && n * 64 <= s->nnodes) {
        n *= 2;
    }
    return n;
}

/* What slab_add changed, for slab_undo: the new slab's memory and, when
 * the slab array grew, the previous array (freed once the call holds). */
typedef struct slab_txn {
    char *mem;
    idset_slab *old;
    size_t oldcap;
    int grew;
} slab_txn;

/* Allocate a slab of at least want nodes (the slab array may grow) and
 * put its nodes on the freelist. ARK_ENOMEM leaves everything as it was. */
static ark_status slab_add(ark_idset *s, size_t want, slab_txn *t) {
    *t = (slab_txn){NULL, NULL, 0, 0};
    size_t nodes = slab_size(s);
    nodes = nodes > want ? nodes : want;
    size_t bytes;
    if (nodes > UINT32_MAX || ark__mul_overflows(nodes, NODE_BYTES, &bytes)) {
        return ARK_ENOMEM;
    }
    char *mem = ark__alloc(&s->alloc, bytes, NODE_BYTES);
    if (mem == NULL) {
        return ARK_ENOMEM;
    }
    if (s->nslabs == s->slabcap) {
        size_t cap = s->slabcap ? s->slabcap * 2 : 4;
        idset_slab *a = ark__alloc(&s->alloc, cap * sizeof(idset_slab),
                                   _Alignof(idset_slab));
        if (a == NULL) {
            ark__free(&s->alloc, mem, bytes);
            return ARK_ENOMEM;
        }
        if (s->nslabs > 0) {
            memcpy(a, s->slabs, s->nslabs * sizeof(idset_slab));
        }
        *t = (slab_txn){NULL, s->slabs, s->slabcap, 1};
        s->slabs = a;
        s->slabcap = cap;
    }
    size_t at = s->nslabs;
    while (at > 0 && (uintptr_t)s->slabs[at - 1].mem > (uintptr_t)mem) {
        at--;
    }
    memmove(s->slabs + at + 1, s->slabs + at,
            (s->nslabs - at) * sizeof(idset_slab));
    s->slabs[at] = (idset_slab){mem, (uint32_t)nodes, 0};
    s->nslabs++;
    s->nempty++;
    s->nnodes += nodes;
    memset(mem, 0, bytes);
    for (size_t i = nodes; i-- > 0;) {
        node_push(s, mem + i * NODE_BYTES);
    }
    t->mem = mem;
    return ARK_OK;
}

/* The call that made t holds: free the slab array it replaced. */
static void slab_commit(ark_idset *s, const slab_txn *t) {
    if (t->grew) {
        ark__free(&s->alloc, t->old, t->oldcap * sizeof(idset_slab));
    }
}

/* Undo slab_add: the new slab's nodes are the freelist's first ones
 * (nothing was taken since), and the slab array goes back to the old one. */
static void slab_undo(ark_idset *s, const slab_txn *t) {
    if (t->mem == NULL) {
        return;
    }
    idset_slab *sl = slab_of(s, t->mem);
    for (uint32_t i = 0; i < sl->nodes; i++) {
        memcpy(&s->free_nodes, s->free_nodes, sizeof(void *));
    }
    s->nfree -= sl->nodes;
    s->nnodes -= sl->nodes;
    s->nempty--;
    ark__free(&s->alloc, t->mem, (size_t)sl->nodes * NODE_BYTES);
    size_t after = (size_t)(s->slabs + s->nslabs - (sl + 1));
    memmove(sl, sl + 1, after * sizeof(idset_slab));
    s->nslabs--;
    if (t->grew) {
        ark__free(&s->alloc, s->slabs, s->slabcap * sizeof(idset_slab));
        s->slabs = t->old;
        s->slabcap = t->oldcap;
    }
}

/* Free the slabs marked (used == UINT32_MAX): their nodes leave the
 * freelist, the slabs go back to the allocator. */
static void slabs_release(ark_idset *s) {
    void *keep = NULL, *tail = NULL;
    for (void *n = s->free_nodes; n != NULL;) {
        void *next;
        memcpy(&next, n, sizeof(void *));
        if (slab_of(s, n)->used == UINT32_MAX) {
            s->nfree--;
        } else if (tail == NULL) {
            keep = tail = n;
        } else {
            memcpy(tail, &n, sizeof(void *));
            tail = n;
        }
        n = next;
    }
    if (tail != NULL) {
        memset(tail, 0, sizeof(void *));
    }
    s->free_nodes = keep;
    size_t w = 0;
    for (size_t i = 0; i < s->nslabs; i++) {
        idset_slab *sl = &s->slabs[i];
        if (sl->used == UINT32_MAX) {
            ark__free(&s->alloc, sl->mem, (size_t)sl->nodes * NODE_BYTES);
            s->nnodes -= sl->nodes;
            s->nempty--;
        } else {
            s->slabs[w++] = *sl;
        }
    }
    s->nslabs = w;
}

/* Give back every slab whose nodes are all free while FREE_KEEP other
 * free nodes remain. */
void ark__idset_node_trim(ark_idset *s) {
    if (s->nempty == 0 || s->nfree <= FREE_KEEP) {
        return;
    }
    size_t left = s->nfree, marked = 0;
    for (size_t i = 0; i < s->nslabs; i++) {
        idset_slab *sl = &s->slabs[i];
        if (sl->used == 0 && left >= FREE_KEEP + (size_t)sl->nodes) {
            sl->used = UINT32_MAX;
            left -= sl->nodes;
            marked++;
        }
    }
    if (marked > 0) {
        slabs_release(s);
    }
}

/* Point the header, hot, key and window arrays into block (cap entries
 * each), group 0 at entry lead. */
static void headers_place(ark_idset *s, char *block, size_t cap, size_t lead) {
    grp *g = (grp *)(void *)block;
    uintptr_t *hot = (uintptr_t *)(void *)(block + cap * sizeof(grp));
    uint32_t *k = (uint32_t *)(void *)(hot + cap);
    s->hdr = block;
    s->cap = cap;
    s->lead = lead;
    s->v.groups = g + lead;
    s->v.hot = hot + lead;
    s->v.keys = k + lead;
    s->win_lo = k + cap + lead;
    s->win_hi = k + 2 * cap + lead;
}

/* Move the ngroups entries of each array from where they are to block,
 * group 0 at entry lead (block may be the current one: memmove). */
static void headers_move(ark_idset *s, char *block, size_t cap, size_t lead) {
    ark__idset_view old = s->v;
    uint32_t *lo = s->win_lo, *hi = s->win_hi;
    size_t ng = old.ngroups;
    headers_place(s, block, cap, lead);
    STAT_ADD(s, hdr_moved, ng);
    if (ng > 0) {
        memmove(s->v.groups, old.groups, ng * sizeof(grp));
        memmove(s->v.hot, old.hot, ng * sizeof(uintptr_t));
        memmove(s->v.keys, old.keys, ng * sizeof(uint32_t));
        memmove(s->win_lo, lo, ng * sizeof(uint32_t));
        memmove(s->win_hi, hi, ng * sizeof(uint32_t));
    }
}

/* Make the arrays hold want groups from group 0 on and, when front, one
 * more entry before group 0 (a prepend). Group 0 sits lead entries into
 * the block, so dropping it advances a pointer and prepending steps one
 * back: O(1), where shifting every array cost O(groups) once per 256
 * front inserts or removes (a set of 64M ids churned oldest first took
 * 1.3 us an operation). When the room runs out the arrays move, in place
 * or to a doubled block: a prepend leaves want / 2 + 1 entries in front,
 * and a move to the back (after drops at the front) keeps a quarter of
 * want spare at the back, so each O(groups) move pays for that many
 * operations. Sets that only grow at the back keep lead 0 and double. */
static ark_status headers_grow(ark_idset *s, size_t want, int front) {
    if (s->lead + want <= s->cap && (!front || s->lead > 0)) {
        return ARK_OK;
    }
    size_t lead = front ? want / 2 + 1 : 0;
    size_t spare = front || s->lead == 0 ? 0 : want / 4;
    size_t need = lead + want + spare;
    if (want > SIZE_MAX / 4) {
        return ARK_ENOMEM; /* never reached: want counts groups of nodes */
    }
    if (need <= s->cap) {
        headers_move(s, s->hdr, s->cap, lead);
        return ARK_OK;
    }
    size_t cap = s->cap ? s->cap * 2 : 4, bytes;
    while (cap < need) {
        cap *= 2;
    }
    if (ark__mul_overflows(cap, HDR_BYTES, &bytes)) {
        return ARK_ENOMEM;
    }
    char *block = ark__alloc(&s->alloc, bytes, _Alignof(ark__idset_group));
    if (block == NULL) {
        return ARK_ENOMEM;
    }
    char *old = s->hdr;
    size_t old_cap = s->cap;
    headers_move(s, block, cap, lead);
    ark__free(&s->alloc, old, old_cap * HDR_BYTES);
    return ARK_OK;
}

/* Reserve nodes, then header room for want groups (and one entry before
 * group 0 when front); all or nothing. */
static ark_status acquire(ark_idset *s, size_t nodes, size_t want, int front) {
    slab_txn t = {NULL, NULL, 0, 0};
    if (s->nfree < nodes && slab_add(s, nodes - s->nfree, &t) != ARK_OK) {
        return ARK_ENOMEM;
    }
    if (headers_grow(s, want, front) != ARK_OK) {
        slab_undo(s, &t);
        return ARK_ENOMEM;
    }
    slab_commit(s, &t);
    return ARK_OK;
}

/* Reserve nodes, then header capacity for want groups; all or nothing. */
ark_status ark__idset_acquire(ark_idset *s, size_t nodes, size_t want) {
    return acquire(s, nodes, want, 0);
}

/* Reserve nodes and room for a new group 0 (ark__idset_prepend_group). */
ark_status ark__idset_acquire_front(ark_idset *s, size_t nodes) {
    return acquire(s, nodes, s->v.ngroups, 1);
}

/* Release the storage of the last group (it is being dropped). */
void ark__idset_drop_last(ark_idset *s) {
    size_t k = s->v.ngroups - 1;
    if (!ark__idset_shares(s, k)) {
        ark__idset_node_give(s, node_of(s->v.groups[k].data));
    }
    s->ndense -= s->v.groups[k].dense;
    s->v.ngroups--;
    if (s->v.ngroups <= 1) {
        s->v.front = 0; /* a lone group is both first and last */
    }
}

/* Make group k hold the single id v in data (a node, or a dense group's
 * free half). A sparse group's creation counts as one touch towards a
 * lazy demotion, so a group whose 256 ids turn out narrow is demoted by
 * the step that fills it. */
static void group_one(ark_idset *s, size_t k, void *data, uint32_t v,
                      int sparse) {
    grp *h = G(s, k);
    h->data = data;
    h->base = sparse ? 0 : ark__idset_centre(v, v);
    h->dense = (uint8_t)!sparse;
    h->credit = (uint16_t)sparse;
    if (sparse) {
        ((uint32_t *)data)[0] = v;
    } else {
        ((int16_t *)data)[0] = enc(h->base, v);
    }
    s->v.keys[k] = v;
    window_sync(s, k);
    s->v.hot[k] = hot_word(data, h->dense, 0);
    s->ndense += (size_t)!sparse;
}

/* Create group k = ngroups holding the single id v; the caller reserved a
 * node unless the even buddy has a free half, and the header capacity. */
void ark__idset_add_group(ark_idset *s, uint32_t v) {
    size_t k = s->v.ngroups;
    char *half = ark__idset_free_half(s, even_buddy(s, k));
    group_one(s, k, half != NULL ? half : ark__idset_node_take(s), v, 0);
    s->v.ngroups++;
}

/* Create group k = ngroups as a sparse group holding the single id v (an
 * append after a wide gap, see append in cascade.c); the caller
 * reserved a node and the header capacity. */
void ark__idset_add_sparse_group(ark_idset *s, uint32_t v) {
    group_one(s, s->v.ngroups, ark__idset_node_take(s), v, 1);
    s->v.ngroups++;
}

/* Create a new group 0 holding the single id v, in front of a full group
 * 0: positions keep their groups through front = 255. The caller reserved
 * a node and the header capacity. Every other group keeps its absolute
 * number (odd0 flips), so buddy pairs stay; when the new group is the even
 * buddy of a single dense group 1, the two share a node. The caller made
 * room before group 0 (ark__idset_acquire_front): O(1). */
void ark__idset_prepend_group(ark_idset *s, uint32_t v) {
    headers_place(s, s->hdr, s->cap, s->lead - 1);
    s->v.ngroups++;
    s->odd0 ^= 1u;
    /* Before a sparse group 1 whose first id is more than 257 above v
     * (256 such gaps exceed 65535), the new group starts sparse, as an
     * append after a wide gap does: a dense one would be promoted by the
     * ids group 1 passes it next. */
    int sparse = !G(s, 1)->dense && s->v.keys[1] - v > DENSE_SPAN / LAST_SLOT;
    group_one(s, 0, ark__idset_node_take(s), v, sparse);
    s->v.front = LAST_SLOT;
    if (!sparse && !is_odd(s, 0) && s->v.groups[1].dense &&
        !ark__idset_shares(s, 1) && ark__idset_free_half(s, 0) != NULL) {
        ark__idset_join(s, 1);
    }
}

/* Drop groups [0, d), whose ids are gone (a front remove emptied group
 * 0, or the backward sweep): their nodes go back to the freelist except a
 * half still used by group d. Every other group keeps its absolute number
 * (odd0 flips with d), so buddy pairs stay. O(d): group d becomes group 0
 * where it lies. */
void ark__idset_drop_front(ark_idset *s, size_t d) {
    if (d == 0) {
        return;
    }
    for (size_t k = 0; k < d; k++) {
        int shared = ark__idset_shares(s, k);
        if (!shared || (buddy_of(s, k) < d && !is_odd(s, k))) {
            ark__idset_node_give(s, node_of(s->v.groups[k].data));
        }
        s->ndense -= s->v.groups[k].dense;
    }
    headers_place(s, s->hdr, s->cap, s->lead + d);
    s->v.ngroups -= d;
    s->odd0 ^= (unsigned)(d & 1u);
    s->v.front = 0;
}

/* Free every node and the header arrays; the set is left empty. */
void ark__idset_free_all(ark_idset *s) {
    while (s->v.ngroups > 0) {
        ark__idset_drop_last(s);
    }
    for (size_t i = 0; i < s->nslabs; i++) {
        ark__free(&s->alloc, s->slabs[i].mem,
                  (size_t)s->slabs[i].nodes * NODE_BYTES);
    }
    ark__free(&s->alloc, s->slabs, s->slabcap * sizeof(idset_slab));
    s->slabs = NULL;
    s->nslabs = 0;
    s->slabcap = 0;
    s->nempty = 0;
    s->free_nodes = NULL;
    s->nfree = 0;
    s->nnodes = 0;
    ark__free(&s->alloc, s->hdr, s->cap * HDR_BYTES);
    s->hdr = NULL;
    s->lead = 0;
    s->v.groups = NULL;
    s->v.hot = NULL;
    s->v.keys = NULL;
    s->v.front = 0;
    s->odd0 = 0;
    s->win_lo = NULL;
    s->win_hi = NULL;
    s->v.count = 0;
    s->cap = 0;
    if (s->v.present != NULL) {
        memset(s->v.present, 0, s->present_words * 8);
        if (s->epoch != NULL) {
            (*s->epoch)++;
        }
    }
}
