/* SPDX-License-Identifier: MIT */
/*
 * group.c - the group encoding: dense windows, the form changes
 * (rebase, promotion, demotion), in-group shifts and decoding.
 *
 * Why demotion is lazy (no thrash): promotion is forced (a value does not
 * fit), demotion is not. During single inserts and removes, a sparse group
 * is demoted only after DEMOTE_CREDIT consecutive touches (cascade steps
 * included) in which its range stayed at or below DEMOTE_SPAN (3/4 of the
 * dense limit). A group therefore re-encodes at most twice (one demotion,
 * one promotion) per DEMOTE_CREDIT touches: O(1) amortized per touch, even
 * against an adversary who flips its range across 64K on every cascade.
 * remove_sorted and the set algebra write whole groups anyway, so they pick
 * each written group's best form at once.
 */
#include "idset/idset.h"

/* Rewrite dense group k's deltas around a new centre. */
static void rebase(ark_idset *s, size_t k, uint32_t base) {
    grp *h = G(s, k);
    int16_t *d = (int16_t *)h->data;
    uint32_t old = h->base;
    for (unsigned i = 0; i < GROUP_SIZE; i++) {
        d[i] = enc(base, ark__idset_dense_id(old, d, i));
    }
    h->base = base;
    window_sync(s, k);
}

/* Turn dense group k sparse, keeping its contents. Takes a node from the
 * freelist when the group shares its node (the caller reserved it). */
void ark__idset_promote(ark_idset *s, size_t k) {
    grp *h = G(s, k);
    uint32_t tmp[GROUP_SIZE];
    /* Every slot, dead ones included, widened in one vectorised loop (a
     * slot_get per slot cost 8-9 instructions each). */
    const int16_t *d = (const int16_t *)h->data;
    uint32_t base = h->base;
    for (size_t i = 0; i < GROUP_SIZE; i++) {
        tmp[i] = ark__idset_dense_id(base, d, i);
    }
    char *n =
        ark__idset_shares(s, k) ? ark__idset_node_take(s) : node_of(h->data);
    memcpy(n, tmp, sizeof(tmp));
    h->data = n;
    h->dense = 0;
    h->base = 0;
    h->credit = 0;
    window_sync(s, k);
    hot_sync(s, k);
    s->ndense--;
    STAT_ADD(s, promotions, 1);
}

/* Turn sparse group k (range mn..mx <= DENSE_SPAN) dense. Never
 * allocates: an odd group joins its even buddy's free half when there is
 * one, else the group re-encodes into the first half of its own node; an
 * even group then takes in its odd buddy when that one is dense and
 * single. The odd buddy may already be behind a cascade walking towards
 * the front, so this join cannot wait for its step; and a join gives a
 * node back, the one the odd group would need if it were promoted later
 * in the same call. */
void ark__idset_demote(ark_idset *s, size_t k, uint32_t mn, uint32_t mx) {
    grp *h = G(s, k);
    uint32_t tmp[GROUP_SIZE];
    memcpy(tmp, h->data, sizeof(tmp));
    char *own = (char *)h->data;
    char *dst = ark__idset_free_half(s, even_buddy(s, k));
    uint32_t base = ark__idset_centre(mn, mx);
    int16_t *d = (int16_t *)(void *)(dst != NULL ? dst : own);
    for (unsigned i = 0; i < GROUP_SIZE; i++) {
        d[i] = enc(base, tmp[i]);
    }
    h->data = d;
    h->base = base;
    h->dense = 1;
    h->credit = 0;
    window_sync(s, k);
    hot_sync(s, k);
    s->ndense++;
    if (dst != NULL) {
        ark__idset_node_give(s, own);
    }
    size_t odd = k + 1;
    if (!is_odd(s, k) && odd < s->v.ngroups && G(s, odd)->dense &&
        !ark__idset_shares(s, odd)) {
        ark__idset_join(s, odd);
    }
    STAT_ADD(s, demotions, 1);
}

/* Make group k able to store every value in [mn, mx] (its contents after
 * the current step): rebase or promote a dense group as needed. */
void ark__idset_ensure(ark_idset *s, size_t k, uint32_t mn, uint32_t mx) {
    grp *h = G(s, k);
    if (!h->dense) {
        return;
    }
    if (mx - mn > DENSE_SPAN) {
        ark__idset_promote(s, k);
    } else if (!fits(h, mn) || !fits(h, mx)) {
        rebase(s, k, ark__idset_centre(mn, mx));
    }
}

/* Count the lazy demotion credit of sparse group k, now spanning mn..mx. */
void ark__idset_credit(ark_idset *s, size_t k, uint32_t mn, uint32_t mx) {
    grp *h = G(s, k);
    if (mx - mn > DEMOTE_SPAN) {
        h->credit = 0;
    } else if (++h->credit >= DEMOTE_CREDIT) {
        ark__idset_demote(s, k, mn, mx);
    }
}

/* After a step on group k (now spanning mn..mx): count the demotion credit
 * of a sparse group (a demotion joins buddies itself). */
void ark__idset_settle(ark_idset *s, size_t k, uint32_t mn, uint32_t mx) {
    if (!G(s, k)->dense) {
        ark__idset_credit(s, k, mn, mx);
    }
}

/* Encode len sorted ids (range <= DENSE_SPAN) as int16 deltas. The full
 * group has a constant trip count, so it is vectorised. */
static void encode_dense(int16_t *d, uint32_t base, const uint32_t *v,
                         size_t len) {
    if (len == GROUP_SIZE) {
        for (size_t i = 0; i < GROUP_SIZE; i++) {
            d[i] = enc(base, v[i]);
        }
        return;
    }
    for (size_t i = 0; i < len; i++) {
        d[i] = enc(base, v[i]);
    }
}

/* Write len (1..256) sorted ids as the whole content of existing group k,
 * in the form its range asks for. The writer rewrites every group anyway,
 * so it demotes at once (no credit) and joins odd dense groups to their
 * even buddy's free half. Never allocates: a promotion takes a reserved
 * node. */
void ark__idset_write_group(ark_idset *s, size_t k, const uint32_t *v,
                            size_t len) {
    grp *h = G(s, k);
    uint32_t mn = v[0], mx = v[len - 1];
    head_set(s, k, 0);
    h->credit = 0;
    s->v.keys[k] = mn;
    if (mx - mn > DENSE_SPAN || (!h->dense && mx - mn > DEMOTE_SPAN)) {
        if (h->dense) {
            h->data = ark__idset_shares(s, k) ? ark__idset_node_take(s)
                                              : node_of(h->data);
            h->dense = 0;
            h->base = 0;
            window_sync(s, k);
            s->ndense--;
            STAT_ADD(s, promotions, 1);
        }
        memcpy(h->data, v, len * sizeof(uint32_t));
        hot_sync(s, k);
        return;
    }
    char *dst = !ark__idset_shares(s, k)
                    ? ark__idset_free_half(s, even_buddy(s, k))
                    : NULL;
    if (dst != NULL) {
        ark__idset_node_give(s, node_of(h->data)); /* k owned it alone */
    } else {
        dst = h->dense ? (char *)h->data : node_of(h->data);
    }
    if (!h->dense) {
        STAT_ADD(s, demotions, 1);
        s->ndense++;
    }
    uint32_t base = ark__idset_centre(mn, mx);
    encode_dense((int16_t *)(void *)dst, base, v, len);
    h->data = dst;
    h->dense = 1;
    h->base = base;
    window_sync(s, k);
    hot_sync(s, k);
}

/* ---- decoding ----------------------------------------------------------- */

/* out[i] = base + d[i] for i < n, in blocks of 8 with a constant trip
 * count so that -O2 vectorises them (the unknown-length loop it won't). */
static void widen(uint32_t *out, const int16_t *d, size_t n, uint32_t base) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (size_t q = 0; q < 8; q++) {
            out[i + q] = ark__idset_dense_id(base, d, i + q);
        }
    }
    for (; i < n; i++) {
        out[i] = ark__idset_dense_id(base, d, i);
    }
}

/* Decode positions [j, j + n) of group k (within the group) into out: at
 * most two contiguous slot runs, each a tight loop. */
void ark__idset_decode(const ark_idset *s, size_t k, size_t j, size_t n,
                       uint32_t *out) {
    const grp *h = &s->v.groups[k];
    unsigned slot = (head_of(s, k) + (unsigned)j) & SLOT_MASK;
    size_t first = GROUP_SIZE - slot < n ? GROUP_SIZE - slot : n;
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

/* Decode the len ids of group k in position order. A full group is
 * widened whole (constant trip count: vectorised), then rotated. */
void ark__idset_decode_group(const ark_idset *s, size_t k, size_t len,
                             uint32_t *out) {
    if (len < GROUP_SIZE) {
        ark__idset_decode(s, k, 0, len, out);
        return;
    }
    const grp *h = &s->v.groups[k];
    uint32_t tmp[GROUP_SIZE];
    const uint32_t *src = (const uint32_t *)h->data;
    if (h->dense) {
        const int16_t *d = (const int16_t *)h->data;
        uint32_t base = h->base;
        for (size_t i = 0; i < GROUP_SIZE; i++) {
            tmp[i] = ark__idset_dense_id(base, d, i);
        }
        src = tmp;
    }
    unsigned hd = head_of(s, k);
    memcpy(out, src + hd, (GROUP_SIZE - hd) * sizeof(uint32_t));
    memcpy(out + (GROUP_SIZE - hd), src, hd * sizeof(uint32_t));
}

/* ---- in-group shifts (each moves at most 127 ids) ---------------------- */

/* The shifts below move n <= 127 consecutive slots of one circular array
 * of 256 elements of esz bytes by one slot, as at most two memmove calls
 * plus one element across the wrap, in the order that keeps overlapping
 * runs intact. */
static inline void elem_copy(char *d, size_t esz, unsigned to, unsigned from) {
    memcpy(d + to * esz, d + from * esz, esz);
}

/* Slots [from, from + n) (mod 256) move one slot later. */
static void ring_up(char *d, size_t esz, unsigned from, unsigned n) {
    unsigned end = from + n; /* one past the last source slot, unmasked */
    if (end < GROUP_SIZE) {
        memmove(d + (from + 1u) * esz, d + from * esz, n * esz);
        return;
    }
    if (end > GROUP_SIZE) { /* the source wraps: its low run goes first */
        memmove(d + esz, d, (end - GROUP_SIZE) * esz);
    }
    elem_copy(d, esz, 0, LAST_SLOT);
    memmove(d + (from + 1u) * esz, d + from * esz, (LAST_SLOT - from) * esz);
}

/* Slots [from, from + n) (mod 256) move one slot earlier. */
static void ring_down(char *d, size_t esz, unsigned from, unsigned n) {
    unsigned end = from + n;
    if (from > 0 && end <= GROUP_SIZE) {
        memmove(d + (from - 1u) * esz, d + from * esz, n * esz);
        return;
    }
    if (from == 0) {
        elem_copy(d, esz, LAST_SLOT, 0);
        memmove(d, d + esz, (n - 1u) * esz);
        return;
    }
    memmove(d + (from - 1u) * esz, d + from * esz, (GROUP_SIZE - from) * esz);
    elem_copy(d, esz, LAST_SLOT, 0);
    memmove(d, d + esz, (end - GROUP_SIZE - 1u) * esz);
}

/* Move the ids at positions [a, b) of group h (first id in slot head) one
 * slot later (towards the tail). */
static void shift_up(grp *h, unsigned head, unsigned a, unsigned b) {
    if (b > a) {
        size_t esz = h->dense ? sizeof(int16_t) : sizeof(uint32_t);
        ring_up((char *)h->data, esz, (head + a) & SLOT_MASK, b - a);
    }
}

/* Move the ids at positions [a, b) one slot earlier (towards the head). */
static void shift_down(grp *h, unsigned head, unsigned a, unsigned b) {
    if (b > a) {
        size_t esz = h->dense ? sizeof(int16_t) : sizeof(uint32_t);
        ring_down((char *)h->data, esz, (head + a) & SLOT_MASK, b - a);
    }
}

/* Insert v at position j of group k holding len < 256 live ids (len
 * becomes len + 1), shifting whichever side is shorter; return the ids
 * moved. A full group whose last id the caller saved counts as len 255:
 * its last slot is the one overwritten. */
size_t ark__idset_put(ark_idset *s, size_t k, unsigned len, unsigned j,
                      uint32_t v) {
    grp *h = G(s, k);
    unsigned head = head_of(s, k);
    if (j < len - j) {
        shift_down(h, head, 0, j);
        head = (head - 1u) & SLOT_MASK;
        head_set(s, k, head);
        slot_set(h, (head + j) & SLOT_MASK, v);
        return j;
    }
    shift_up(h, head, j, len);
    slot_set(h, (head + j) & SLOT_MASK, v);
    return len - j;
}

/* Insert v before position j (1..255) of full group k whose first id the
 * caller saved (it leaves the group), v landing at position j - 1. The
 * shorter side moves: positions [1, j) one slot earlier, or positions
 * [j, 256) one slot later (the last into the first id's slot, which
 * becomes the tail: head + 1). Returns the ids moved (at most 127). */
size_t ark__idset_put_front(ark_idset *s, size_t k, unsigned j, uint32_t v) {
    grp *h = G(s, k);
    unsigned head = head_of(s, k);
    if (j - 1u <= GROUP_SIZE - j) {
        shift_down(h, head, 1, j);
        slot_set(h, (head + j - 1u) & SLOT_MASK, v);
        return j - 1u;
    }
    shift_up(h, head, j, GROUP_SIZE);
    slot_set(h, (head + j) & SLOT_MASK, v);
    head_set(s, k, head + 1u);
    return GROUP_SIZE - j;
}

/* Remove position j of full group k, moving the shorter side: the group
 * keeps 255 ids and the slot before its head is free (the slot of its
 * old last position, as ark__idset_take leaves it). Returns the ids
 * moved. */
size_t ark__idset_take_front(ark_idset *s, size_t k, unsigned j) {
    return ark__idset_take(s, k, GROUP_SIZE, j);
}

/* Remove position j of group k holding len ids; the slot of the old last
 * position becomes free (position len - 1 after the call is dead). */
size_t ark__idset_take(ark_idset *s, size_t k, unsigned len, unsigned j) {
    grp *h = G(s, k);
    unsigned head = head_of(s, k);
    if (j < len - 1u - j) {
        shift_up(h, head, 0, j);
        head_set(s, k, head + 1u);
        return j;
    }
    shift_down(h, head, j + 1u, len);
    return len - 1u - j;
}
