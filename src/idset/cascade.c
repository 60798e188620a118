/* SPDX-License-Identifier: MIT */
/*
 * cascade.c - single inserts and removes.
 *
 * An insert at position j of group k shifts at most 127 ids inside group
 * k (whichever side is shorter); when k was full its last id then enters
 * group k + 1 at the front, whose last id enters group k + 2, and so on:
 * the cascade. A remove is the reverse: each later group gives its first id
 * to the previous group's back. In a full circular queue both ends are
 * adjacent slots, so a step is one slot write and a head move:
 *
 *   direction IN  (insert): slot = head - 1 holds the last id; read it (it
 *                 moves on), write the incoming id there, head = slot.
 *   direction OUT (remove): slot = head holds the first id (already given
 *                 to the previous group); write the next group's first id
 *                 there, head = slot + 1.
 *
 * One loop runs both directions. Its common step (the incoming id fits a
 * dense group's window, or a sparse group stays wide) is a handful of
 * instructions; anything else (rebase, promotion, demotion credit, buddy
 * join) goes through the general step.
 */
#include "idset/idset.h"

enum cascade_dir { CASCADE_IN, CASCADE_OUT };

/* Cascade steps prefetch the slot of the group this many ahead: at large
 * sizes each step is a cache miss on a node, and the hot words say where
 * the next ones are. Prefetching pays once the nodes outgrow the caches.
 * Since head moved to the hot words (2026-11-24) 4 ahead beats 8: random
 * removes from 1M sparse ids, walks of 1792-2048 groups, 90th percentile
 * 13.5-14.0 -> 9.6-10.3 us (medians even; 16 ahead doubled the medians,
 * the prefetches' misses crowding out the steps' own). Earlier, 8 ahead
 * beat 16 walking up (1M sparse ids: 3.2 -> 3.1 ns IN, 3.6 -> 3.0 ns
 * OUT; dense even), measured per step on this project's VM (paired
 * batches of random inserts and removes, median of 96). Walking
 * down, only OUT steps on mostly sparse sets gain (4.7 -> 3.4 ns): an IN
 * step walking down already reads the next group's last id, and on 1M
 * dense ids (2 MB of nodes) a down walk was slower with prefetches.
 * Mostly sparse sets prefetch from 256 groups (64K ids, 256 KB of nodes):
 * bench_idset --pair at 64K sparse ids, 5 alternating runs, p99 per
 * operation 582-713 -> 524-549 ns (inserts), 530-556 -> 482-515 ns
 * (removes), for 8 more instructions a step; at 32K sparse ids (128 KB)
 * and 64K dense ids (128 KB) prefetching was slower. */
#define PREFETCH_AHEAD 4u
#define PREFETCH_MIN_GROUPS 1024u
#define PREFETCH_MIN_SPARSE 256u

/* Prefetch slot head + delta of the group with hot word w. */
static inline void prefetch_slot(uintptr_t w, unsigned delta) {
    unsigned slot = (unsigned)(w + delta) & SLOT_MASK;
    unsigned shift = w & ARK__IDSET_HOT_DENSE ? 1u : 2u;
    ARK__PREFETCH_W((const char *)(w & ARK__IDSET_HOT_ADDR) + (slot << shift));
}

/* The general step on full group i in direction dir with incoming id x:
 * make the group fit its new range, write x, move head, count credit, join
 * buddies. Returns the id that left (IN: the group's old last id). */
static uint32_t step_general(ark_idset *s, size_t i, int dir, uint32_t x) {
    grp *h = G(s, i);
    unsigned head = head_of(s, i);
    unsigned slot = dir == CASCADE_IN ? (head - 1u) & SLOT_MASK : head;
    uint32_t out = slot_get(h, slot);
    /* The group's far end after the step: IN its new last id (position
     * 254), OUT its new first id (position 1). */
    uint32_t far_id = pos_get(s, i, dir == CASCADE_IN ? LAST_SLOT - 1u : 1u);
    uint32_t mn = dir == CASCADE_IN ? x : far_id;
    uint32_t mx = dir == CASCADE_IN ? far_id : x;
    ark__idset_ensure(s, i, mn, mx);
    slot_set(h, slot, x);
    head_set(s, i, dir == CASCADE_IN ? slot : slot + 1u);
    if (!h->dense) {
        ark__idset_credit(s, i, mn, mx);
    }
    s->v.keys[i] = mn;
    return out;
}

/* The common step on full group h (hot word *hw) in direction dir with
 * incoming id x, or 0 when the general one is needed: write x, set *out
 * to the id that left (IN: the old last, OUT: the old first) and *key to
 * the group's new first id. */
static ARK__ALWAYS_INLINE inline int step_fast(grp *h, uintptr_t *hw, int dir,
                                               uint32_t x, uint32_t *out,
                                               uint32_t *key) {
    uintptr_t w = *hw;
    unsigned head = (unsigned)w & SLOT_MASK;
    unsigned slot = dir == CASCADE_IN ? (head - 1u) & SLOT_MASK : head;
    unsigned next = dir == CASCADE_IN ? slot : (head + 1u) & SLOT_MASK;
    if (w & ARK__IDSET_HOT_DENSE) {
        int16_t *d = (int16_t *)(w & ARK__IDSET_HOT_ADDR);
        uint32_t base = h->base;
        uint32_t off = x - (base - DENSE_HALF);
        if (off > DENSE_SPAN) {
            return 0;
        }
        *out = ark__idset_dense_id(base, d, slot);
        *key = dir == CASCADE_IN ? x : ark__idset_dense_id(base, d, next);
        d[slot] = (int16_t)((int32_t)off - (int32_t)DENSE_HALF);
    } else {
        uint32_t *d = (uint32_t *)(w & ARK__IDSET_HOT_ADDR);
        /* IN: the new last id is at slot - 1; OUT: the new first at next. */
        uint32_t far_id = d[dir == CASCADE_IN ? (slot - 1u) & SLOT_MASK : next];
        if ((dir == CASCADE_IN ? far_id - x : x - far_id) <= DEMOTE_SPAN) {
            return 0; /* narrow: count towards a demotion */
        }
        *out = d[slot];
        *key = dir == CASCADE_IN ? x : far_id;
        d[slot] = x;
        /* Tested first: the step reads nothing else of the header, and
         * a store to a line not read misses (2x slower on 1M ids). */
        if (h->credit != 0) {
            h->credit = 0;
        }
    }
    *hw = (w & ~(uintptr_t)SLOT_MASK) | next;
    return 1;
}

/* The id entering group i: the carried id when it travels the way the
 * walk goes (IN walking up, OUT walking down); walking up with OUT, the
 * next group's first id; walking down with IN, the previous group's last
 * id (neither has been changed yet). That walk ends at group 1 and never
 * reaches the last group, so group i - 1 is full, or it is group 0
 * holding 256 - front ids: its last id is at position 255 - front
 * (calling glen here cost a third of the step). */
static ARK__ALWAYS_INLINE inline uint32_t
incoming(const ark_idset *s, size_t i, int dir, int down, uint32_t x) {
    if ((dir == CASCADE_IN) != down) {
        return x;
    }
    if (!down) {
        return s->v.keys[i + 1];
    }
    unsigned gap = i == 1 ? (unsigned)s->v.front : 0u;
    return pos_get(s, i - 1, LAST_SLOT - gap);
}

/* Common steps t, t + 1, ... up to stop of the walk from group from, each
 * prefetching the group PREFETCH_AHEAD further on when pf is set; stops
 * early at a step that needs the general one. Returns the next t. */
static ARK__ALWAYS_INLINE inline size_t fast_steps(ark_idset *s, size_t from,
                                                   size_t t, size_t stop,
                                                   int dir, int down, int pf,
                                                   uint32_t *x) {
    grp *gs = s->v.groups;
    uint32_t *keys = s->v.keys;
    unsigned pf_delta = dir == CASCADE_IN ? SLOT_MASK : 0u;
    uintptr_t *hot = s->v.hot;
    for (; t < stop; t++) {
        size_t i = down ? from - t : from + t;
        if (pf) {
            size_t ahead = down ? i - PREFETCH_AHEAD : i + PREFETCH_AHEAD;
            prefetch_slot(hot[ahead], pf_delta);
        }
        uint32_t in = incoming(s, i, dir, down, *x);
        if (!step_fast(&gs[i], &hot[i], dir, in, x, &keys[i])) {
            break;
        }
    }
    return t;
}

/* The cascade over n full groups from group from, walking up (from, from
 * + 1, ...) or down (from, from - 1, ...), each a step in direction dir
 * (IN: the incoming id enters at the front, the last leaves; OUT: the
 * first leaves, the incoming id enters at the back). Returns the id that
 * left the last group walked. The common steps run in tight loops (one
 * with prefetches while groups lie PREFETCH_AHEAD on, one without), left
 * for a general step and re-entered after it. */
static ARK__ALWAYS_INLINE inline uint32_t
cascade(ark_idset *s, size_t from, size_t n, int dir, int down, uint32_t x) {
    size_t pf_n = 0; /* steps that prefetch PREFETCH_AHEAD groups on */
    int sparse = 2 * s->ndense < s->v.ngroups; /* mostly sparse groups */
    int pf_walk = !down || (dir == CASCADE_OUT && sparse);
    size_t pf_min = sparse ? PREFETCH_MIN_SPARSE : PREFETCH_MIN_GROUPS;
    if (pf_walk && s->v.ngroups >= pf_min && n > PREFETCH_AHEAD) {
        pf_n = n - PREFETCH_AHEAD;
    }
    size_t t = 0;
    while (t < n) {
        if (t < pf_n) {
            t = fast_steps(s, from, t, pf_n, dir, down, 1, &x);
        }
        if (t >= pf_n) {
            t = fast_steps(s, from, t, n, dir, down, 0, &x);
        }
        if (t < n) {
            size_t i = down ? from - t : from + t;
            x = step_general(s, i, dir, incoming(s, i, dir, down, x));
            t++;
        }
    }
    STAT_ADD(s, moves, n);
    return x;
}

/* Insert towards the back: groups [from, end) each take x at the front. */
static ARK__NOINLINE uint32_t cascade_in(ark_idset *s, size_t from, size_t end,
                                         uint32_t x) {
    return cascade(s, from, end > from ? end - from : 0, CASCADE_IN, 0, x);
}

/* Remove towards the back: groups [from, end) each take the next group's
 * first id at the back. */
static ARK__NOINLINE void cascade_out(ark_idset *s, size_t from, size_t end) {
    cascade(s, from, end > from ? end - from : 0, CASCADE_OUT, 0, 0);
}

/* Insert towards the front: groups k - 1 down to 1 each take x at the
 * back and give their first id on; returns the id leaving group 1 (x
 * itself when k is 1). */
static ARK__NOINLINE uint32_t cascade_front_out(ark_idset *s, size_t k,
                                                uint32_t x) {
    return cascade(s, k - 1, k - 1, CASCADE_OUT, 1, x);
}

/* Remove towards the front: groups k down to 1 each take the previous
 * group's last id at the front (group k has a free slot there; the others'
 * last ids have already moved on). */
static ARK__NOINLINE void cascade_front_in(ark_idset *s, size_t k) {
    cascade(s, k, k, CASCADE_IN, 1, 0);
}

/* ---- insert ------------------------------------------------------------- */

/* The range [*mn, *mx] of group k (len ids) after id enters at position
 * j; a full group loses its last id. */
static void range_after_put(const ark_idset *s, size_t k, size_t len,
                            unsigned j, uint32_t id, uint32_t *mn,
                            uint32_t *mx) {
    *mn = j == 0 ? id : pos_get(s, k, 0);
    if (len == GROUP_SIZE) {
        *mx = j == LAST_SLOT ? id : pos_get(s, k, LAST_SLOT - 1u);
    } else {
        *mx = j == len ? id : pos_get(s, k, (unsigned)len - 1u);
    }
}

/* How many i < n have v[i] < lo[i] (below) or v[i] > hi[i] (above): the
 * vectorised sweeps of the pre-passes (blocks of 8 with a constant trip
 * count, which -O2 vectorises). An incoming id outside its group's window
 * is the only way a cascade step can change a group's form. */
static size_t count_below(const uint32_t *v, const uint32_t *lo, size_t n) {
    size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint32_t b = 0;
        for (size_t q = 0; q < 8; q++) {
            b += (uint32_t)(v[i + q] < lo[i + q]);
        }
        c += b;
    }
    for (; i < n; i++) {
        c += v[i] < lo[i];
    }
    return c;
}

static size_t count_above(const uint32_t *v, const uint32_t *hi, size_t n) {
    size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint32_t b = 0;
        for (size_t q = 0; q < 8; q++) {
            b += (uint32_t)(v[i + q] > hi[i + q]);
        }
        c += b;
    }
    for (; i < n; i++) {
        c += v[i] > hi[i];
    }
    return c;
}

/* Pre-pass of an insert at (k, j) into group k of klen ids: the nodes its
 * promotions and a new group can need. Group i > k receives x, the old last id
 * of group i - 1, with keys[i-1] <= x < keys[i]; when keys[i-1] fits group i's
 * window so does x, and the group cannot promote: no node is read then. An
 * insert into a group with room (a partial group 0) cascades nowhere: only
 * group k is looked at, so front inserts stay O(1). */
static size_t insert_need(const ark_idset *s, size_t k, size_t klen, unsigned j,
                          uint32_t id, int grows) {
    if (s->ndense == 0) {
        return (size_t)grows; /* only a new group can need a node */
    }
    if (s->ndense + (size_t)grows <= s->nfree) {
        return 0; /* the freelist covers every dense group and a new one */
    }
    size_t last = s->v.ngroups - 1, need = 0;
    size_t end = klen < GROUP_SIZE ? k : last; /* the groups it changes */
    int last_promotes = 0;
    int calm = id >= s->win_lo[k] && id <= s->win_hi[k] &&
               count_below(s->v.keys + k, s->win_lo + k + 1, end - k) == 0;
    for (size_t i = k; i <= end && !calm; i++) {
        const grp *h = &s->v.groups[i];
        if (!h->dense || fits(h, i == k ? id : s->v.keys[i - 1])) {
            continue;
        }
        size_t len = glen(s, i);
        uint32_t mn, mx;
        if (i == k) {
            range_after_put(s, i, len, j, id, &mn, &mx);
        } else {
            mn = pos_get(s, i - 1, LAST_SLOT);
            mx = pos_get(s, i, (unsigned)len - (len == GROUP_SIZE ? 2u : 1u));
        }
        int p = mx - mn > DENSE_SPAN;
        need += (size_t)(p && ark__idset_shares(s, i));
        last_promotes = i == last ? p : last_promotes;
    }
    if (grows) {
        size_t g = s->v.ngroups;
        int half =
            ark__idset_free_half(s, even_buddy(s, g)) != NULL && !last_promotes;
        need += !half;
    }
    return need;
}

/* x enters the last group (L ids) at the front; returns the id that left
 * when it was full (it starts a new group). */
static uint32_t last_in(ark_idset *s, size_t last, size_t L, uint32_t x) {
    if (L == GROUP_SIZE) {
        return step_general(s, last, CASCADE_IN, x);
    }
    grp *h = G(s, last);
    uint32_t mx = pos_get(s, last, (unsigned)L - 1u);
    ark__idset_ensure(s, last, x, mx);
    unsigned slot = (head_of(s, last) - 1u) & SLOT_MASK;
    slot_set(h, slot, x);
    head_set(s, last, slot);
    if (!h->dense) {
        ark__idset_credit(s, last, x, mx);
    }
    s->v.keys[last] = x;
    return 0;
}

/* Insert at (k, j), the cascade (if any) running towards the back. */
static ark_status insert_back(ark_idset *s, size_t k, unsigned j, uint32_t id) {
    size_t last = s->v.ngroups - 1;
    size_t L = glen(s, last), len = glen(s, k);
    /* The last group spills into a new one when the insert reaches it
     * full (a partial group 0 takes the id itself). */
    int grows = L == GROUP_SIZE && len == GROUP_SIZE;
    size_t need = insert_need(s, k, len, j, id, grows);
    if (ark__idset_acquire(s, need, s->v.ngroups + (size_t)grows) != ARK_OK) {
        return ARK_ENOMEM;
    }
    /* Mutation: never fails from here on. */
    uint32_t mn, mx;
    range_after_put(s, k, len, j, id, &mn, &mx);
    uint32_t x = len == GROUP_SIZE ? pos_get(s, k, LAST_SLOT) : 0;
    ark__idset_ensure(s, k, mn, mx);
    unsigned live = len == GROUP_SIZE ? LAST_SLOT : (unsigned)len;
    STAT_ADD(s, moves, ark__idset_put(s, k, live, j, id));
    s->v.keys[k] = mn;
    s->v.count++;
    if (len < GROUP_SIZE && k < last) {
        s->v.front--; /* a partial group 0 grew */
    }
    ark__idset_settle(s, k, mn, mx);
    if (len < GROUP_SIZE) {
        return ARK_OK;
    }
    x = cascade_in(s, k + 1, last, x);
    if (k < last) {
        x = last_in(s, last, L, x);
        STAT_ADD(s, moves, 1);
    }
    if (grows) {
        ark__idset_add_group(s, x);
        STAT_ADD(s, moves, 1);
    }
    return ARK_OK;
}

/* ---- towards the front -------------------------------------------------- */

/* Nodes an insert towards the front may need: one per dense group whose
 * window the incoming id can leave (group i < k receives the first id of
 * group i + 1, keys[i + 1]), one for group k itself, and one for a new
 * group 0. Counted without asking whether the group shares its node:
 * a join during the downward cascade could make it share. */
static size_t front_insert_need(const ark_idset *s, size_t k, uint32_t mn,
                                uint32_t mx) {
    if (s->ndense == 0) {
        return s->v.front == 0; /* only a new group 0 can need a node */
    }
    const grp *h = &s->v.groups[k];
    size_t need = h->dense && (!fits(h, mn) || !fits(h, mx));
    need += count_above(s->v.keys + 1, s->win_hi, k);
    return need + (s->v.front == 0);
}

/* Insert at (k, j) of full group k, the cascade running towards the
 * front: group k's first id leaves (or id itself when j is 0), each group
 * down to 1 passes one id on, and group 0 takes the last one at its back
 * (a new group 0 starts when it was full). For k = 0 the id that leaves
 * starts the new group 0 at once: an insert below the minimum, or into a
 * full group 0, moves at most 127 ids whatever the number of groups. */
static ark_status insert_front(ark_idset *s, size_t k, unsigned j,
                               uint32_t id) {
    uint32_t mn = j <= 1 ? id : pos_get(s, k, 1), mx = pos_get(s, k, LAST_SLOT);
    size_t need = front_insert_need(s, k, mn, mx);
    int full0 = s->v.front == 0; /* then a new group 0 is prepended */
    if ((full0 ? ark__idset_acquire_front(s, need)
               : ark__idset_acquire(s, need, s->v.ngroups)) != ARK_OK) {
        return ARK_ENOMEM;
    }
    uint32_t x = id;
    if (j > 0) {
        x = pos_get(s, k, 0);
        ark__idset_ensure(s, k, mn, mx);
        STAT_ADD(s, moves, ark__idset_put_front(s, k, j, id));
        s->v.keys[k] = mn;
        ark__idset_settle(s, k, mn, mx);
    }
    s->v.count++;
    if (k == 0) {
        ark__idset_prepend_group(s, x);
        STAT_ADD(s, moves, 1);
        return ARK_OK;
    }
    x = cascade_front_out(s, k, x);
    STAT_ADD(s, moves, 1); /* group 0 takes the last one */
    if (!full0) {
        grp *g0 = G(s, 0);
        uint32_t first = s->v.keys[0];
        ark__idset_ensure(s, 0, first, x);
        slot_set(g0, (head_of(s, 0) + (unsigned)glen(s, 0)) & SLOT_MASK, x);
        s->v.front--;
        ark__idset_settle(s, 0, first, x);
        return ARK_OK;
    }
    x = step_general(s, 0, CASCADE_OUT, x); /* group 0's first leaves */
    ark__idset_prepend_group(s, x);
    return ARK_OK;
}

/* Insert at (k, j): the cascade runs towards whichever end moves fewer
 * ids (the in-group shift plus one per group crossed). Either way the
 * shift moves the shorter side of group k (at most 127 ids, a memmove),
 * so the groups crossed decide; a full group 0 crosses none towards the
 * front (a new group 0 takes its first id), so ids inserted in
 * descending order cost O(1) moves each, not one per group. */
static ark_status insert_at(ark_idset *s, size_t k, unsigned j, uint32_t id) {
    size_t last = s->v.ngroups - 1;
    if (k == last || glen(s, k) < GROUP_SIZE) {
        return insert_back(s, k, j, id);
    }
    if (k == 0) {
        return insert_front(s, 0, j, id);
    }
    size_t back = (j < LAST_SLOT - j ? j : LAST_SLOT - j) + (last - k);
    size_t shift = j == 0                    ? 0
                   : j - 1u < GROUP_SIZE - j ? j - 1u
                                             : GROUP_SIZE - j;
    size_t front = shift + k;
    return front < back ? insert_front(s, k, j, id) : insert_back(s, k, j, id);
}

static ark_status insert_first(ark_idset *s, uint32_t id) {
    if (ark__idset_acquire(s, 1, 1) != ARK_OK) {
        return ARK_ENOMEM;
    }
    ark__idset_add_group(s, id);
    s->v.count = 1;
    return ARK_OK;
}

/* An id above the maximum: a free slot after the last id, or a new group
 * (the entity-creation path, O(1) amortized). */
static ark_status append(ark_idset *s, uint32_t id) {
    size_t last = s->v.ngroups - 1, L = glen(s, last);
    if (L < GROUP_SIZE) {
        grp *h = G(s, last);
        if (!h->dense) { /* the inline path declined: credit counts */
            ((uint32_t *)h->data)[(head_of(s, last) + L) & SLOT_MASK] = id;
            s->v.count++;
            ark__idset_credit(s, last, s->v.keys[last], id);
            return ARK_OK;
        }
        return insert_at(s, last, (unsigned)L, id);
    }
    /* A new group. After a sparse group, an id more than 257 above the
     * last one predicts a sparse group (256 such gaps exceed 65535): it
     * starts sparse instead of starting dense, being rebased and then
     * promoted a few appends later. */
    size_t g = s->v.ngroups;
    uint32_t gap = id - pos_get(s, last, LAST_SLOT);
    int sparse = !G(s, last)->dense && gap > DENSE_SPAN / LAST_SLOT;
    int half = !sparse && ark__idset_free_half(s, even_buddy(s, g)) != NULL;
    if (ark__idset_acquire(s, !half, g + 1) != ARK_OK) {
        return ARK_ENOMEM;
    }
    if (sparse) {
        ark__idset_add_sparse_group(s, id);
    } else {
        ark__idset_add_group(s, id);
    }
    s->v.count++;
    return ARK_OK;
}

/* The group that may hold id, its length, and the first index j there
 * whose id is >= id. Before the in-group search (8 dependent probes over
 * the group's 8 or 16 cache lines) every line of the group is prefetched:
 * on a set whose nodes have left the caches since the group was last
 * searched, the probes then wait for one miss instead of a chain of them,
 * and the in-group shift that follows finds its lines too. */
static size_t search(const ark_idset *s, uint32_t id, size_t *len, size_t *j) {
    size_t k = id < s->v.keys[0] ? 0 : ark__idset_group_of(&s->v, id);
    const grp *h = &s->v.groups[k];
    const char *d = (const char *)h->data;
    size_t bytes = h->dense ? HALF_BYTES : NODE_BYTES;
    for (size_t o = 0; o < bytes; o += 4 * LINE_BYTES) {
        ARK__PREFETCH_W(d + o);
        ARK__PREFETCH_W(d + o + LINE_BYTES);
        ARK__PREFETCH_W(d + o + 2 * LINE_BYTES);
        ARK__PREFETCH_W(d + o + 3 * LINE_BYTES);
    }
    *len = glen(s, k);
    *j = ark__idset_group_lower(h, head_of(s, k), *len, id);
    return k;
}

static ark_status insert_any(ark_idset *s, uint32_t id);

ark_status ark__idset_insert(ark_idset *s, uint32_t id) {
    ark_status st = insert_any(s, id);
    if (st == ARK_OK) {
        ark__idset_mark(&s->v, id, true);
    }
    return st;
}

/* A removal just made: the membership bit, and the queries over the
 * entity pool the set is attached to. */
static void removed(ark_idset *s, uint32_t id) {
    ark__idset_mark(&s->v, id, false);
    if (s->epoch != NULL) {
        (*s->epoch)++;
    }
}

static ark_status insert_any(ark_idset *s, uint32_t id) {
    assert(s != NULL);
    stats_reset(s);
    if (s->v.count == 0) {
        return insert_first(s, id);
    }
    size_t last = s->v.ngroups - 1;
    ark_status st;
    if (id > pos_get(s, last, (unsigned)glen(s, last) - 1u)) {
        st = append(s, id);
    } else {
        size_t len, j, k = search(s, id, &len, &j);
        if (j < len && pos_get(s, k, (unsigned)j) == id) {
            return ARK_EEXIST;
        }
        if (j == len && len == GROUP_SIZE) { /* the next group's front */
            k++;
            j = 0;
        }
        st = insert_at(s, k, (unsigned)j, id);
    }
    ark__idset_node_trim(s);
    return st;
}

/* ---- remove ------------------------------------------------------------- */

/* Pre-pass of a remove at (k, j): groups before the last gain y =
 * keys[i+1] at the back; when y fits the window the group cannot promote. */
static size_t remove_need(const ark_idset *s, size_t k, unsigned j) {
    if (s->ndense == 0 || s->ndense <= s->nfree) {
        return 0;
    }
    size_t last = s->v.ngroups - 1, need = 0;
    if (count_above(s->v.keys + k + 1, s->win_hi + k, last - k) == 0) {
        return 0; /* every y fits its group's window */
    }
    for (size_t i = k; i < last; i++) {
        const grp *h = &s->v.groups[i];
        uint32_t y = s->v.keys[i + 1];
        if (h->dense && !fits(h, y)) {
            uint32_t mn = pos_get(s, i, (i > k || j == 0) ? 1u : 0u);
            need += y - mn > DENSE_SPAN && ark__idset_shares(s, i);
        }
    }
    return need;
}

/* The last group (len ids) loses position j (j = 0 when it gave its first
 * id to the previous group). */
static void last_out(ark_idset *s, size_t last, size_t len, unsigned j) {
    STAT_ADD(s, moves, ark__idset_take(s, last, (unsigned)len, j));
    s->v.count--;
    if (len == 1) {
        ark__idset_drop_last(s);
        return;
    }
    uint32_t mn = pos_get(s, last, 0);
    s->v.keys[last] = mn;
    ark__idset_settle(s, last, mn, pos_get(s, last, (unsigned)len - 2u));
}

/* Group 0, not the last, loses position j: no cascade, the front gap
 * grows (and an emptied group 0 is dropped). Removing the smallest ids
 * one by one (the oldest entities first) thus moves O(1) ids each. */
static void first_out(ark_idset *s, unsigned j) {
    size_t len = glen(s, 0);
    STAT_ADD(s, moves, ark__idset_take(s, 0, (unsigned)len, j));
    s->v.count--;
    if (len == 1) {
        ark__idset_drop_front(s, 1);
        return;
    }
    s->v.front++;
    uint32_t mn = pos_get(s, 0, 0);
    s->v.keys[0] = mn;
    ark__idset_settle(s, 0, mn, pos_get(s, 0, (unsigned)len - 2u));
}

/* Remove (k, j) of full group k >= 1, the cascade running towards the
 * front: group k opens a slot at its front, each group down to 1 takes the
 * previous group's last id there, and group 0 gives its last id away. */
/* Pre-pass of remove_front at group k: a node per dense group whose
 * window the id it gains leaves (none without dense groups). */
static size_t remove_front_need(const ark_idset *s, size_t k) {
    return s->ndense ? count_below(s->v.keys, s->win_lo + 1, k) : 0;
}

static ark_status remove_front(ark_idset *s, size_t k, unsigned j) {
    if (ark__idset_acquire(s, remove_front_need(s, k), s->v.ngroups) !=
        ARK_OK) {
        return ARK_ENOMEM;
    }
    STAT_ADD(s, moves, ark__idset_take_front(s, k, j));
    cascade_front_in(s, k);
    s->v.count--;
    if (s->v.front == LAST_SLOT) {
        ark__idset_drop_front(s, 1); /* its only id moved to group 1 */
        return ARK_OK;
    }
    s->v.front++;
    /* Group 0 gave its last id away. A sparse group without credit must
     * stay wide (the inline append relies on it): count the touch when
     * it narrowed (credit 0 -> 1, so it cannot demote here). */
    grp *g0 = G(s, 0);
    if (!g0->dense && g0->credit == 0) {
        uint32_t last0 = pos_get(s, 0, (unsigned)glen(s, 0) - 1u);
        ark__idset_credit(s, 0, s->v.keys[0], last0);
    }
    return ARK_OK;
}

static ark_status remove_back(ark_idset *s, size_t k, unsigned j);

/* Which way remove_pos takes (k, j): group 0 alone, or the cascade
 * towards whichever end moves fewer ids. */
typedef enum remove_way { REMOVE_FIRST, REMOVE_FRONT, REMOVE_BACK } remove_way;

static remove_way remove_way_of(const ark_idset *s, size_t k) {
    size_t last = s->v.ngroups - 1;
    if (k == 0 && k != last) {
        return REMOVE_FIRST;
    }
    /* Group k's shift moves its shorter side either way (at most 127
     * ids), so the groups crossed decide. */
    return k != 0 && k != last && k < last - k ? REMOVE_FRONT : REMOVE_BACK;
}

/* Remove (k, j). */
static ark_status remove_pos(ark_idset *s, size_t k, unsigned j) {
    switch (remove_way_of(s, k)) {
    case REMOVE_FIRST:
        first_out(s, j);
        return ARK_OK;
    case REMOVE_FRONT:
        return remove_front(s, k, j);
    default:
        return remove_back(s, k, j);
    }
}

/* Remove (k, j), the cascade (if any) running towards the back. */
static ark_status remove_back(ark_idset *s, size_t k, unsigned j) {
    size_t last = s->v.ngroups - 1;
    if (ark__idset_acquire(s, remove_need(s, k, j), s->v.ngroups) != ARK_OK) {
        return ARK_ENOMEM;
    }
    if (k == last) {
        last_out(s, last, glen(s, last), j);
        return ARK_OK;
    }
    grp *h = G(s, k);
    uint32_t y = s->v.keys[k + 1];
    uint32_t mn = pos_get(s, k, j == 0 ? 1u : 0u);
    ark__idset_ensure(s, k, mn, y);
    STAT_ADD(s, moves, ark__idset_take(s, k, GROUP_SIZE, j));
    slot_set(h, (head_of(s, k) + LAST_SLOT) & SLOT_MASK, y);
    s->v.keys[k] = mn;
    ark__idset_settle(s, k, mn, y);
    cascade_out(s, k + 1, last);
    STAT_ADD(s, moves, 1); /* the last group's first id moved on */
    last_out(s, last, glen(s, last), 0);
    return ARK_OK;
}

/* remove_pos, then give back the nodes it freed. */
static ark_status remove_trim(ark_idset *s, size_t k, unsigned j) {
    ark_status st = remove_pos(s, k, j);
    ark__idset_node_trim(s);
    return st;
}

/* Remove the id at position pos < count. */
static ark_status remove_position(ark_idset *s, size_t pos) {
    unsigned j;
    size_t k = locate(s, pos, &j);
    return remove_trim(s, k, j);
}

ark_status ark_idset_remove(ark_idset *s, uint32_t id) {
    assert(s != NULL);
    stats_reset(s);
    if (s->v.count == 0) {
        return ARK_ENOTFOUND;
    }
    size_t len, j, k = search(s, id, &len, &j);
    if (j == len || pos_get(s, k, (unsigned)j) != id) {
        return ARK_ENOTFOUND;
    }
    ark_status st = remove_trim(s, k, (unsigned)j);
    if (st == ARK_OK) {
        removed(s, id);
    }
    return st;
}

ark_status ark__idset_remove_prepare(ark_idset *s, uint32_t id) {
    if (s->v.count == 0) {
        return ARK_OK;
    }
    size_t len, j, k = search(s, id, &len, &j);
    if (j == len || pos_get(s, k, (unsigned)j) != id) {
        return ARK_OK;
    }
    remove_way w = remove_way_of(s, k);
    size_t need = w == REMOVE_FIRST   ? 0
                  : w == REMOVE_FRONT ? remove_front_need(s, k)
                                      : remove_need(s, k, (unsigned)j);
    return ark__idset_acquire(s, need, s->v.ngroups);
}

ark_status ark_idset_remove_at(ark_idset *s, size_t pos) {
    assert(s != NULL);
    stats_reset(s);
    if (pos >= s->v.count) {
        return ARK_ERANGE;
    }
    uint32_t id = ark_idset_at(s, pos);
    ark_status st = remove_position(s, pos);
    if (st == ARK_OK) {
        removed(s, id);
    }
    return st;
}
