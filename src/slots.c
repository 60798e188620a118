/* SPDX-License-Identifier: MIT */
/*
 * slots.c - the handle engine's slow paths: layout validation, growth,
 * the removal state machine with hooks, sealing and validation. The rules
 * are described in slots.h.
 */
#include "slots.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout ------------------------------------------------------------ */

/* Each field is checked on its own before any sum is formed, so no sum can
 * wrap: index_bits, gen_bits <= 32 (0 = 32), then tag_bits <= 64 - both. */
static ark_status layout_init(ark_handle_layout *l,
                              const ark__slots_config *cfg) {
    unsigned ib = cfg->index_bits, gb = cfg->gen_bits, tb = cfg->tag_bits;
    if (ib > 32 || gb > 32) {
        return ARK_EINVAL;
    }
    ib = ib == 0 ? 32 : ib;
    gb = gb == 0 ? 32 : gb;
    if (tb > 64 - ib - gb) {
        return ARK_EINVAL;
    }
    if (tb < 64 && (cfg->tag >> tb) != 0) {
        return ARK_EINVAL;
    }
    unsigned low = ib + gb;
    l->index_bits = (uint8_t)ib;
    l->gen_bits = (uint8_t)gb;
    l->tag_bits = (uint8_t)tb;
    l->index_mask = ((uint64_t)1 << ib) - 1;
    l->gen_mask = (uint32_t)(((uint64_t)1 << gb) - 1);
    l->high_mask = low == 64 ? 0 : ~(((uint64_t)1 << low) - 1);
    l->tag_value = low == 64 ? 0 : cfg->tag << low;
    l->tag_high = cfg->tag << gb;
    /* A stamp is gen + 1 in 32 bits, so with 32 generation bits the value
     * 2^32 - 1 is never issued: it would store as 0, the free stamp. */
    l->gen_max = gb == 32 ? UINT32_MAX - 1 : l->gen_mask;
    return ARK_OK;
}

static void seal_init(ark__slots *s, uint64_t key) {
    const ark_handle_layout *l = &s->v->layout;
    s->seal_bits = (unsigned)l->index_bits + l->gen_bits + l->tag_bits;
    s->seal_lo = s->seal_bits / 2;
    if (key == 0) {
        key = ark__entropy64(s, NULL);
    }
    for (unsigned r = 0; r < ARK__SEAL_ROUNDS; r++) {
        key = ark__mix64(key + 0x9e3779b97f4a7c15u);
        s->seal_keys[r] = key;
    }
}

ark_status ark__slots_init(ark__slots *s, ark__slot_view *v,
                           const ark__slots_config *cfg,
                           const ark_allocator *alloc, const ark__slot_ops *ops,
                           void *owner) {
    memset(s, 0, sizeof *s);
    v->ring = NULL;
    v->ring_cap = v->head = v->tail = v->ring_dead = v->issued = 0;
    v->ring_mask = UINT64_MAX; /* ring_cap - 1 */
    v->fast_stamp_max = 0;
    ark_status st = layout_init(&v->layout, cfg);
    if (st != ARK_OK) {
        return st;
    }
    s->v = v;
    s->ops = ops;
    s->owner = owner;
    s->alloc = *alloc;
    s->limit = (uint64_t)1 << v->layout.index_bits;
    s->has_hook = cfg->has_hook;
    s->v->issued = 1; /* slot 0 exists from the first growth, never issued */
    ark__slots_refresh_fast(s);
    seal_init(s, cfg->seal_key);
    return ARK_OK;
}

void ark__slots_fini(ark__slots *s) {
    ark__free(&s->alloc, s->v->ring,
              (size_t)s->v->ring_cap * sizeof *s->v->ring);
    ark__free(&s->alloc, s->pending, s->pending_cap * sizeof *s->pending);
    ark__free(&s->alloc, s->doomed, s->doomed_cap * sizeof *s->doomed);
    ark__free(&s->alloc, s->skip, (size_t)s->skip_cap * sizeof *s->skip);
}

/* ---- growth ------------------------------------------------------------ */

/* Give the ring room for want slots (a power of two), unrolled to start
 * at 0. Nothing changes on failure. */
static ark_status grow_ring(ark__slots *s, uint64_t want) {
    ark__slot_view *v = s->v;
    if (want <= v->ring_cap) {
        return ARK_OK;
    }
    uint64_t ncap;
    size_t bytes;
    if (!ark__grow_cap(v->ring_cap, want, sizeof *v->ring, &ncap, &bytes)) {
        return ARK_ENOMEM;
    }
    uint32_t *ring = ark__alloc(&s->alloc, bytes, 0);
    if (ring == NULL) {
        return ARK_ENOMEM;
    }
    uint64_t n = ark__slot_queued(v);
    for (uint64_t k = 0; k < n; k++) {
        ring[k] = ark__ring_at(v, k);
    }
    ark__free(&s->alloc, v->ring, (size_t)v->ring_cap * sizeof *ring);
    v->ring = ring;
    v->ring_cap = ncap;
    v->ring_mask = ncap - 1;
    v->head = 0;
    v->tail = n;
    return ARK_OK;
}

/* Make slots [0, want) exist: storage from the container, ring room from
 * the engine. want <= limit. */
static ark_status grow_to(ark__slots *s, uint64_t want) {
    ark_status st = grow_ring(s, want);
    if (st == ARK_OK && want > s->v->cap) {
        st = s->ops->grow(s->owner, want);
    }
    return st;
}

ark_status ark__slots_grow_fresh(ark__slots *s) {
    if (s->v->issued >= s->limit) {
        return ARK_EFULL;
    }
    return grow_to(s, s->v->issued + 1);
}

ark_status ark__slots_take(ark__slots *s, uint64_t *index, char **slot) {
    ark__slot_view *v = s->v;
    ark_status st = ark__slots_prepare(s);
    if (st != ARK_OK) {
        return st;
    }
    char *p;
    if (!ark__slots_reuses(s)) {
        p = ark__slot_take_fresh(v, index); /* prepare gave it room */
        assert(p != NULL);
    } else {
        if (v->ring_dead != 0) {
            ark__slots_skip_dead(s); /* the head entry is live now */
        }
        /* The inline take applies with ARK_REUSE_DELAY queued and no dead
         * entries; at the end of the index space fewer may be queued, and
         * dead entries may still wait behind the head. */
        p = ark__slot_queued(v) >= ARK_REUSE_DELAY
                ? ark__slot_take_reused(v, index)
                : NULL;
        if (p == NULL) {
            uint64_t i = ark__ring_pop(v);
            p = ark__slot_at(v, i);
            p = ark__slot_taken(p, i, *ark__next_gen(p), index);
        }
    }
    *slot = p;
    return ARK_OK;
}

ark_status ark__slots_reserve(ark__slots *s, size_t n) {
    size_t count = ark__slots_count(s);
    if (n <= count) {
        return ARK_OK;
    }
    /* An insert takes a fresh slot while fewer than ARK_REUSE_DELAY are
     * queued. Inserts alone take at most need fresh slots; with removals
     * between them up to ARK_REUSE_DELAY - 1 freed slots may wait in the
     * queue while fresh ones are taken, so room for that many more (less
     * those queued now) covers any order of inserts and removals that
     * keeps the count at most n (until slots retire). */
    uint64_t need = (uint64_t)n - count;
    uint64_t nfree = ark__slots_nfree(s->v);
    if (need > s->limit - s->v->issued + nfree) {
        return ARK_EFULL;
    }
    uint64_t wait =
        nfree < ARK_REUSE_DELAY - 1 ? ARK_REUSE_DELAY - 1 - nfree : 0;
    uint64_t want = s->v->issued + need + wait;
    return grow_to(s, want < s->limit ? want : s->limit);
}

/* ---- removal ----------------------------------------------------------- */

/* Append index | gen << 32 to a list, growing it by doubling. */
static ark_status list_push(ark__slots *s, uint64_t **list, size_t *len,
                            size_t *cap, uint64_t entry) {
    uint64_t *l =
        ark__grow_array(&s->alloc, *list, cap, *len, *len + 1, sizeof *l);
    if (l == NULL) {
        return ARK_ENOMEM;
    }
    *list = l;
    l[(*len)++] = entry;
    return ARK_OK;
}

/* Mark live slot i on a list (pending or doomed): it becomes invisible at
 * once, its storage stays. Nothing changes on ARK_ENOMEM. */
static ark_status mark(ark__slots *s, bool doomed, uint64_t i, char *slot) {
    uint32_t gen = *ark__stamp(slot) - 1;
    uint64_t entry = i | (uint64_t)gen << 32;
    ark_status st =
        doomed
            ? list_push(s, &s->doomed, &s->ndoomed, &s->doomed_cap, entry)
            : list_push(s, &s->pending, &s->npending, &s->pending_cap, entry);
    if (st != ARK_OK) {
        return st;
    }
    *ark__stamp(slot) = 0;
    s->held++;
    s->ops->unlink(s->owner, i);
    return ARK_OK;
}

/* Finish an unlinked slot: its hook (stamp valid while it runs), then the
 * stamp cleared, the container's storage dropped and the slot freed. The
 * slot is looked up again after the hook, which may have grown storage. */
static void finish(ark__slots *s, uint64_t i, uint32_t gen, bool hook) {
    char *slot = ark__slot_at(s->v, i);
    if (hook) {
        *ark__stamp(slot) = gen + 1;
        s->dying = i;
        s->ops->hook(s->owner, slot, ark__handle_make(&s->v->layout, i, gen));
        s->dying = 0;
        slot = ark__slot_at(s->v, i);
    }
    *ark__stamp(slot) = 0;
    s->ops->drop(s->owner, slot);
    ark__slots_free(s, i, slot, gen);
    s->held--;
}

static void finish_entry(ark__slots *s, uint64_t entry, bool hook) {
    finish(s, entry & UINT32_MAX, (uint32_t)(entry >> 32), hook);
}

/* Carry out the removes hooks asked for, in the order asked, including
 * those their own hooks ask for. */
static void drain_doomed(ark__slots *s) {
    while (s->doomed_done < s->ndoomed) {
        finish_entry(s, s->doomed[s->doomed_done++], true);
    }
    s->ndoomed = 0;
    s->doomed_done = 0;
}

void ark__slots_refresh_fast(ark__slots *s) {
    s->v->fast_stamp_max =
        s->has_hook || s->v->ring_dead != 0 ? 0 : s->v->layout.gen_max;
}

/* Unlink live slot i and finish it now, its hook run or not. */
static void remove_now(ark__slots *s, uint64_t i, char *slot, bool hook) {
    uint32_t gen = *ark__stamp(slot) - 1;
    s->held++;
    s->ops->unlink(s->owner, i);
    finish(s, i, gen, hook);
}

ark_status ark__slots_remove_slow(ark__slots *s, uint64_t i, char *slot) {
    if (!s->has_hook) {
        remove_now(s, i, slot, false);
        return ARK_OK;
    }
    if (i == s->dying) {
        return ARK_OK; /* its removal is running: one on_remove only */
    }
    if (s->draining) {
        return mark(s, true, i, slot);
    }
    s->draining = true;
    remove_now(s, i, slot, true);
    drain_doomed(s);
    s->draining = false;
    return ARK_OK;
}

ark_status ark__slots_discard(ark__slots *s, ark_handle h) {
    uint64_t i;
    char *slot;
    ark_status st = ark__slots_find(s, h, &i, &slot);
    if (st != ARK_OK || i == s->dying) {
        return st;
    }
    remove_now(s, i, slot, false);
    return ARK_OK;
}

ark_status ark__slots_remove_general(ark__slots *s, ark_handle h) {
    uint64_t i;
    char *slot;
    ark_status st = ark__slots_find(s, h, &i, &slot);
    return st != ARK_OK ? st : ark__slots_remove_slow(s, i, slot);
}

ark_status ark__slots_remove_later(ark__slots *s, ark_handle h) {
    uint64_t i;
    char *slot;
    ark_status st = ark__slots_find(s, h, &i, &slot);
    if (st != ARK_OK || i == s->dying) {
        return st;
    }
    return mark(s, false, i, slot);
}

/* Finish every pending element in marking order, including those hooks
 * mark meanwhile (the array may move: index it, re-read its length).
 * Returns how many were finished. */
static size_t drain_pending(ark__slots *s, bool hook) {
    size_t n = 0;
    while (s->pending_done < s->npending) {
        finish_entry(s, s->pending[s->pending_done++], hook);
        drain_doomed(s);
        n++;
    }
    s->npending = 0;
    s->pending_done = 0;
    return n;
}

size_t ark__slots_flush(ark__slots *s) {
    if (s->draining) {
        return 0;
    }
    s->draining = true;
    size_t n = drain_pending(s, s->has_hook);
    s->draining = false;
    return n;
}

void ark__slots_clear(ark__slots *s, bool run_hook) {
    if (s->draining) {
        return;
    }
    s->draining = true;
    bool hook = run_hook && s->has_hook;
    /* Hooks may insert: repeat until a pass finds nothing. */
    while (ark__slots_count(s) > 0 || s->npending > 0) {
        uint64_t i = 0;
        while ((i = s->ops->next_live(s->owner, i + 1)) != 0) {
            remove_now(s, i, ark__slot_at(s->v, i), hook);
            drain_doomed(s);
        }
        drain_pending(s, hook);
    }
    s->draining = false;
}

/* ARK_ENULL for the null handle, ARK_EFOREIGN for another tag or a bit
 * set above it, else ARK_OK: whether h could name a slot of this layout. */
static ark_status handle_of_layout(const ark_handle_layout *l, ark_handle h) {
    if (h == ARK_NULL_HANDLE) {
        return ARK_ENULL;
    }
    return (h & l->high_mask) != l->tag_value ? ARK_EFOREIGN : ARK_OK;
}

ark_status ark__slots_classify(const ark__slots *s, ark_handle h) {
    const ark_handle_layout *l = &s->v->layout;
    ark_status st = handle_of_layout(l, h);
    if (st != ARK_OK) {
        return st;
    }
    uint64_t i = h & l->index_mask;
    return i == 0 || i >= s->v->issued ? ARK_ERANGE : ARK_ESTALE;
}

ark_status ark__slots_check(const ark__slots *s, ark_handle h) {
    uint64_t i;
    char *slot;
    return ark__slots_find(s, h, &i, &slot);
}

/* ---- sealing ----------------------------------------------------------- */

/* The round function: a multiply-xorshift of one half under a round key.
 * Any function makes the Feistel network a bijection; this one spreads
 * every input bit over the output so that a flipped wire bit lands on an
 * unrelated handle. */
static uint64_t seal_round(uint64_t x, uint64_t key) {
    x = (x ^ key) * 0xd6e8feb86659fd93u;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93u;
    return x ^ (x >> 29);
}

static uint64_t low_mask(unsigned bits) {
    return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

/* Alternate half-rounds: the low half is xored with a function of the
 * high half, then the reverse. Each half-round undoes itself, so the
 * inverse runs the same rounds backwards. */
static ark_handle feistel(const ark__slots *s, ark_handle h, bool inverse) {
    unsigned lo_bits = s->seal_lo, hi_bits = s->seal_bits - s->seal_lo;
    uint64_t width = low_mask(s->seal_bits);
    uint64_t lo = h & low_mask(lo_bits);
    uint64_t hi = (h & width) >> lo_bits;
    for (unsigned n = 0; n < ARK__SEAL_ROUNDS; n++) {
        unsigned r = inverse ? ARK__SEAL_ROUNDS - 1 - n : n;
        if (r % 2 == 0) {
            lo ^= seal_round(hi, s->seal_keys[r]) & low_mask(lo_bits);
        } else {
            hi ^= seal_round(lo, s->seal_keys[r]) & low_mask(hi_bits);
        }
    }
    return (h & ~width) | (hi << lo_bits) | lo;
}

ark_handle ark__slots_seal(const ark__slots *s, ark_handle h) {
    return feistel(s, h, false);
}

ark_handle ark__slots_unseal(const ark__slots *s, ark_handle wire) {
    return feistel(s, wire, true);
}

/* ---- validation -------------------------------------------------------- */

/* Set bit i of seen; false if it was set already. */
static bool validate_see(uint64_t *seen, uint64_t i) {
    uint64_t bit = (uint64_t)1 << (i & 63);
    if (seen[i >> 6] & bit) {
        return false;
    }
    seen[i >> 6] |= bit;
    return true;
}

/* Every listed slot is in range, not live, and listed once; a free slot
 * holds its next generation (0 for a slot insert_at made free without
 * using it). Dead ring entries (insert_at) are skipped, oldest first, as
 * take skips them; skip is a scratch copy of s->skip or NULL. */
static bool validate_lists(const ark__slots *s, uint64_t *seen,
                           uint32_t *skip) {
    size_t npend = s->npending - s->pending_done;
    size_t ndoom = s->ndoomed - s->doomed_done;
    uint64_t dead = 0;
    for (uint64_t k = 0; k < ark__slot_queued(s->v); k++) {
        uint64_t i = ark__ring_at(s->v, k);
        if (i == 0 || i >= s->v->issued) {
            return false;
        }
        if (skip != NULL && i < s->skip_cap && skip[i] > 0) {
            skip[i]--;
            dead++;
            continue;
        }
        char *slot = ark__slot_at(s->v, i);
        if (!validate_see(seen, i) || *ark__stamp(slot) != 0 ||
            *ark__next_gen(slot) > s->v->layout.gen_max) {
            return false;
        }
    }
    if (dead != s->v->ring_dead) {
        return false;
    }
    for (uint64_t k = 0; k < npend + ndoom; k++) {
        uint64_t i = k < npend
                         ? s->pending[s->pending_done + k] & UINT32_MAX
                         : s->doomed[s->doomed_done + (k - npend)] & UINT32_MAX;
        if (i == 0 || i >= s->v->issued || !validate_see(seen, i) ||
            *ark__stamp(ark__slot_at(s->v, i)) != 0) {
            return false;
        }
    }
    return true;
}

ark_status ark__slots_validate(const ark__slots *s,
                               bool (*linked)(const void *c, uint64_t i)) {
    const ark__slot_view *v = s->v;
    uint32_t fast_max =
        s->has_hook || s->v->ring_dead != 0 ? 0 : v->layout.gen_max;
    if (s->v->fast_stamp_max != fast_max) {
        return ARK_ECORRUPT;
    }
    if (v->cap == 0) { /* nothing stored yet: slot 0 only, never issued */
        return s->v->issued == 1 && s->held == 0 &&
                       ark__slot_queued(s->v) == 0 && s->npending == 0 &&
                       s->ndoomed == 0
                   ? ARK_OK
                   : ARK_ECORRUPT;
    }
    /* held: the marked slots still listed, and the one whose hook runs */
    if (s->held != (s->npending - s->pending_done) +
                       (s->ndoomed - s->doomed_done) + (s->dying != 0)) {
        return ARK_ECORRUPT;
    }
    if (s->v->issued > v->cap || v->cap > s->limit ||
        s->v->ring_cap + 1 < s->v->issued ||
        s->v->ring_mask != s->v->ring_cap - 1 ||
        ark__slot_queued(s->v) > s->v->ring_cap ||
        s->v->ring_dead > ark__slot_queued(s->v) ||
        s->doomed_done > s->ndoomed || s->pending_done > s->npending ||
        (v->cap > 0 && *ark__stamp(ark__slot_at(v, 0)) != 0)) {
        return ARK_ECORRUPT;
    }
    uint64_t live = 0;
    for (uint64_t i = 1; i < s->v->issued; i++) {
        uint32_t stamp = *ark__stamp(ark__slot_at(v, i));
        bool is_live = stamp != 0 && i != s->dying;
        if ((stamp != 0 && stamp - 1 > v->layout.gen_max) ||
            (linked != NULL && linked(s->owner, i) != is_live)) {
            return ARK_ECORRUPT;
        }
        live += is_live;
    }
    for (uint64_t i = s->v->issued; i < v->cap; i++) {
        if (*ark__stamp(ark__slot_at(v, i)) != 0) {
            return ARK_ECORRUPT;
        }
    }
    if (live != ark__slots_count(s)) {
        return ARK_ECORRUPT;
    }
    /* Scratch for a diagnostic: plain calloc, so tests that count the
     * container's allocations are not disturbed. */
    uint64_t *seen = calloc((size_t)((s->v->issued + 63) >> 6), sizeof *seen);
    if (seen == NULL) {
        return ARK_ENOMEM;
    }
    uint32_t *skip = NULL;
    if (s->v->ring_dead > 0) {
        skip = malloc((size_t)s->skip_cap * sizeof *skip);
        if (skip == NULL) {
            free(seen);
            return ARK_ENOMEM;
        }
        memcpy(skip, s->skip, (size_t)s->skip_cap * sizeof *skip);
    }
    /* Every issued slot is live, free, retired or held: the checks of held
     * and of the count above say so in sum; the lists say it slot by
     * slot. */
    bool ok = validate_lists(s, seen, skip);
    free(skip);
    free(seen);
    return ok ? ARK_OK : ARK_ECORRUPT;
}

/* ---- insert_at (see slots.h) -------------------------------------------- */

/* Drop the dead entries from the ring, keeping the order of the rest. */
static void ring_compact(ark__slots *s) {
    ark__slot_view *v = s->v;
    uint64_t n = ark__slot_queued(v), w = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t x = ark__ring_at(v, k);
        if (x < s->skip_cap && s->skip[x] > 0) {
            s->skip[x]--;
            continue;
        }
        v->ring[(v->head + w++) & v->ring_mask] = x;
    }
    v->tail = v->head + w;
    v->ring_dead = 0;
    ark__slots_refresh_fast(s);
}

void ark__slots_skip_dead(ark__slots *s) {
    ark__slot_view *v = s->v;
    while (v->ring_dead > 0) {
        uint32_t x = ark__ring_at(v, 0);
        if (x >= s->skip_cap || s->skip[x] == 0) {
            return;
        }
        s->skip[x]--;
        v->ring_dead--;
        v->head++;
    }
    ark__slots_refresh_fast(s);
}

void ark__slots_free_dead(ark__slots *s, uint64_t i, char *slot, uint32_t gen) {
    ark__slot_view *v = s->v;
    *ark__next_gen(slot) = gen + 1;
    if (ark__slot_queued(v) == v->ring_cap &&
        grow_ring(s, v->ring_cap + 1) != ARK_OK) {
        ring_compact(s); /* frees at least one entry: ring_dead > 0 */
    }
    ark__slot_enqueue(v, i);
}

/* Make skip cover slots [0, want), doubling. */
static ark_status skip_reserve(ark__slots *s, uint64_t want) {
    size_t old = s->skip_cap;
    uint32_t *skip = ark__grow_array(&s->alloc, s->skip, &s->skip_cap, old,
                                     want, sizeof *skip);
    if (skip == NULL) {
        return ARK_ENOMEM;
    }
    memset(skip + old, 0, (s->skip_cap - old) * sizeof *skip);
    s->skip = skip;
    return ARK_OK;
}

/* The status of insert_at on a marked slot i, or ARK_OK if i is not
 * marked. O(marked): only remove_later marks not yet flushed. */
static ark_status marked_status(const ark__slots *s, uint64_t i, uint32_t gen) {
    for (size_t k = s->pending_done; k < s->npending; k++) {
        if ((s->pending[k] & UINT32_MAX) == i) {
            return gen <= (uint32_t)(s->pending[k] >> 32) ? ARK_ESTALE
                                                          : ARK_EEXIST;
        }
    }
    return ARK_OK;
}

/* insert_at on a free slot i < issued (checked): its ring entry turns
 * dead. */
static ark_status take_free_at(ark__slots *s, uint64_t i) {
    ark_status st;
    if (i >= s->skip_cap) {
        st = skip_reserve(s, i + 1);
        if (st != ARK_OK) {
            return st;
        }
    }
    if (s->skip[i] == UINT32_MAX) {
        ring_compact(s);
    }
    s->skip[i]++;
    s->v->ring_dead++;
    ark__slots_refresh_fast(s);
    if (s->v->ring_dead >= ARK_REUSE_DELAY &&
        s->v->ring_dead >= ark__slots_nfree(s->v)) {
        ring_compact(s);
    }
    return ARK_OK;
}

/* insert_at past issued (checked): slots [issued, i) become free, in
 * index order. */
static ark_status take_fresh_at(ark__slots *s, uint64_t i) {
    ark__slot_view *v = s->v;
    uint64_t occupied = ark__slot_queued(v) + (i - v->issued);
    ark_status st = grow_ring(s, occupied > i + 1 ? occupied : i + 1);
    if (st == ARK_OK && i >= v->cap) {
        st = s->ops->grow(s->owner, i + 1);
    }
    if (st != ARK_OK) {
        return st;
    }
    for (uint64_t j = v->issued; j < i; j++) {
        *ark__next_gen(ark__slot_at(v, j)) = 0;
        s->ops->unlink(s->owner, j);
        ark__slot_enqueue(v, j);
    }
    v->issued = i + 1;
    return ARK_OK;
}

/* The fresh slots past the storage one insert_at may queue. */
static uint64_t insert_at_gap(const ark__slot_view *v) {
    uint64_t by_bytes = ARK__INSERT_AT_GAP_BYTES / v->stride;
    return by_bytes < ARK__INSERT_AT_GAP ? by_bytes : ARK__INSERT_AT_GAP;
}

ark_status ark__slots_insert_at_check(const ark__slots *s, ark_handle h) {
    const ark_handle_layout *l = &s->v->layout;
    ark_status st = handle_of_layout(l, h);
    if (st != ARK_OK) {
        return st;
    }
    uint64_t i = h & l->index_mask;
    uint32_t gen = (uint32_t)((h >> l->index_bits) & l->gen_mask);
    if (i == 0 || gen > l->gen_max) {
        return ARK_ERANGE;
    }
    if (s->draining) {
        return ARK_EINVAL;
    }
    if (i >= s->v->issued) {
        return i < s->v->cap || i - s->v->issued <= insert_at_gap(s->v)
                   ? ARK_OK
                   : ARK_EFULL;
    }
    char *p = ark__slot_at(s->v, i);
    if (*ark__stamp(p) != 0) {
        return ARK_EEXIST;
    }
    st = marked_status(s, i, gen);
    if (st != ARK_OK) {
        return st;
    }
    uint32_t next = *ark__next_gen(p);
    return next == ARK__RETIRED || gen < next ? ARK_ESTALE : ARK_OK;
}

ark_status ark__slots_insert_at(ark__slots *s, ark_handle h, uint64_t *index,
                                char **slot) {
    assert(ark__slots_insert_at_check(s, h) == ARK_OK);
    const ark_handle_layout *l = &s->v->layout;
    uint64_t i = h & l->index_mask;
    uint32_t gen = (uint32_t)((h >> l->index_bits) & l->gen_mask);
    ark_status st = i < s->v->issued ? take_free_at(s, i) : take_fresh_at(s, i);
    if (st != ARK_OK) {
        return st;
    }
    char *p = ark__slot_at(s->v, i);
    *ark__stamp(p) = gen + 1;
    *index = i;
    *slot = p;
    return ARK_OK;
}

/* ---- snapshots (docs/snapshot.md) -------------------------------------- */

_Static_assert(ARK__SNAP_KEYS == ARK__SEAL_ROUNDS, "one key per round");

ark_status ark__slots_save_header(const ark__slots *s, ark__snap_header *hd) {
    if (s->draining) {
        return ARK_EINVAL;
    }
    const ark_handle_layout *l = &s->v->layout;
    hd->index_bits = l->index_bits;
    hd->gen_bits = l->gen_bits;
    hd->tag_bits = l->tag_bits;
    hd->tag = l->tag_bits == 0 ? 0 : l->tag_high >> l->gen_bits;
    hd->issued = s->v->issued;
    hd->live = ark__slots_count(s);
    hd->nfree = ark__slots_nfree(s->v);
    hd->npending = s->npending - s->pending_done;
    hd->retired = s->retired;
    memcpy(hd->keys, s->seal_keys, sizeof hd->keys);
    return ARK_OK;
}

/* The live ring entries in order (dead ones skipped, as take would). */
static ark_status save_ring(const ark__slots *s, ark__snap_out *o) {
    uint32_t *skip = NULL;
    size_t skip_bytes = (size_t)s->skip_cap * sizeof *skip;
    if (s->v->ring_dead > 0) {
        skip = ark__alloc(&s->alloc, skip_bytes, 0);
        if (skip == NULL) {
            return ARK_ENOMEM;
        }
        memcpy(skip, s->skip, skip_bytes);
    }
    for (uint64_t k = 0; k < ark__slot_queued(s->v); k++) {
        uint32_t x = ark__ring_at(s->v, k);
        if (skip != NULL && x < s->skip_cap && skip[x] > 0) {
            skip[x]--;
            continue;
        }
        ark__snap_put32(o, x);
        ark__snap_put32(o, *ark__next_gen(ark__slot_at(s->v, x)));
    }
    ark__free(&s->alloc, skip, skip_bytes);
    return ARK_OK;
}

static inline void put_le32(unsigned char *d, uint32_t v) {
    d[0] = (unsigned char)v;
    d[1] = (unsigned char)(v >> 8);
    d[2] = (unsigned char)(v >> 16);
    d[3] = (unsigned char)(v >> 24);
}

/* The slots from i on that lie at one stride from each other (the flat
 * part of the storage, or one slot past it): returns slot i, sets *stop
 * to the end of the run (at most end). */
static inline char *snap_run(const ark__slot_view *v, uint64_t i, uint64_t end,
                             uint64_t *stop) {
    if (i < v->nflat) {
        *stop = end < v->nflat ? end : v->nflat;
        return v->flat + (size_t)i * v->stride;
    }
    *stop = i + 1;
    return ark__slot_at(v, i);
}

/* What save_run does for each slot of its run. */
typedef enum save_what {
    SAVE_STAMPS, /* put the u32 stamp */
    SAVE_LIVE,   /* put the payload if the slot is live */
    SAVE_BLOCK,  /* put every payload; check */
    SAVE_MIXED,  /* put every payload, move on past live ones only, put
                    the stamps in stamps[] too; check */
    SAVE_CHECK   /* only check */
} save_what;

/* Slots [i, end) into buf from len on, room for them all checked by the
 * caller; returns the new length. The checks (SAVE_BLOCK, SAVE_MIXED,
 * SAVE_CHECK) set bits in *diff where a stamp differs from first. Inlined
 * with constant arguments for the common sizes, so the copies are single
 * moves and the fields stay in registers. */
static ARK_ALWAYS_INLINE inline size_t
save_run(const ark__slot_view *v, uint64_t i, uint64_t end, unsigned char *buf,
         size_t len, size_t payload, save_what what, uint32_t first,
         uint32_t *diff, unsigned char *stamps) {
    size_t off = v->data_off, stride = v->stride;
    uint32_t d = 0;
    while (i < end) {
        uint64_t stop;
        const char *slot = snap_run(v, i, end, &stop);
        for (; i < stop; i++, slot += stride) {
            uint32_t stamp;
            /* Sequential, but the hardware prefetcher alone leaves the
             * loop waiting on memory: ask 4 KiB ahead. */
            ARK_PREFETCH_READ(slot + 4096);
            memcpy(&stamp, slot, 4);
            if (what == SAVE_STAMPS) {
                put_le32(buf + len, stamp);
                len += 4;
            } else if (what == SAVE_LIVE) {
                if (stamp != 0) {
                    ark__copy_small(buf + len, slot + off, payload);
                    len += payload;
                }
            } else {
                d |= stamp ^ first;
                if (what == SAVE_MIXED) {
                    put_le32(stamps, stamp);
                    stamps += 4;
                }
                if (what == SAVE_BLOCK || what == SAVE_MIXED) {
                    ark__copy_small(buf + len, slot + off, payload);
                    if (what == SAVE_BLOCK || stamp != 0) {
                        len += payload;
                    }
                }
            }
        }
    }
    if (what != SAVE_STAMPS && what != SAVE_LIVE) {
        *diff |= d;
    }
    return len;
}

/* SAVE_BLOCK (stamps NULL) or SAVE_MIXED, the payload size a constant
 * for the common sizes: in functions of their own, as the compiler sees
 * that save_run(.., 16, ..) is save_run(.., payload, ..) where payload ==
 * 16 and would make the calls one. */
static ARK_NOINLINE size_t save_block8(const ark__slot_view *v, uint64_t i,
                                       uint64_t end, unsigned char *buf,
                                       size_t len, uint32_t first,
                                       uint32_t *diff, unsigned char *stamps) {
    return stamps == NULL
               ? save_run(v, i, end, buf, len, 8, SAVE_BLOCK, first, diff, NULL)
               : save_run(v, i, end, buf, len, 8, SAVE_MIXED, first, diff,
                          stamps);
}

static ARK_NOINLINE size_t save_block16(const ark__slot_view *v, uint64_t i,
                                        uint64_t end, unsigned char *buf,
                                        size_t len, uint32_t first,
                                        uint32_t *diff, unsigned char *stamps) {
    return stamps == NULL ? save_run(v, i, end, buf, len, 16, SAVE_BLOCK, first,
                                     diff, NULL)
                          : save_run(v, i, end, buf, len, 16, SAVE_MIXED, first,
                                     diff, stamps);
}

static size_t save_block_any(const ark__slot_view *v, uint64_t i, uint64_t end,
                             unsigned char *buf, size_t len, size_t payload,
                             uint32_t first, uint32_t *diff,
                             unsigned char *stamps) {
    if (payload == 8) {
        return save_block8(v, i, end, buf, len, first, diff, stamps);
    }
    if (payload == 16) {
        return save_block16(v, i, end, buf, len, first, diff, stamps);
    }
    return stamps == NULL ? save_run(v, i, end, buf, len, payload, SAVE_BLOCK,
                                     first, diff, NULL)
                          : save_run(v, i, end, buf, len, payload, SAVE_MIXED,
                                     first, diff, stamps);
}

/* save_run for slots [i, end) through the buffer, flushing it as it
 * fills: stamps, or payloads of live slots. */
static void save_runs(const ark__slot_view *v, ark__snap_out *o, uint64_t i,
                      uint64_t end, size_t payload, save_what what) {
    size_t rec = what == SAVE_STAMPS ? 4 : payload;
    while (i < end) {
        size_t fit = (ARK__SNAP_BUF - o->len) / rec;
        if (fit == 0) {
            ark__snap_out_flush(o);
            fit = ARK__SNAP_BUF / rec;
        }
        if (fit == 0) { /* a payload larger than the buffer */
            const char *slot = ark__slot_at(v, i++);
            if (*ark__stamp((char *)slot) != 0) {
                ark__snap_put(o, slot + v->data_off, payload);
            }
            continue;
        }
        uint64_t stop = end - i < fit ? end : i + fit;
        o->len = what == SAVE_STAMPS
                     ? save_run(v, i, stop, o->buf, o->len, 0, SAVE_STAMPS, 0,
                                NULL, NULL)
                     : save_run(v, i, stop, o->buf, o->len, payload, SAVE_LIVE,
                                0, NULL, NULL);
        i = stop;
    }
}

/* One block of a pool's slots section: slots [i, end). *mixed: whether
 * the block before was not a one-stamp block (and this one likely is not
 * either); set for the next. */
static void save_block(const ark__slot_view *v, ark__snap_out *o, uint64_t i,
                       uint64_t end, size_t payload, bool *mixed) {
    size_t n = (size_t)(end - i);
    uint32_t first = *ark__stamp(ark__slot_at(v, i));
    uint32_t diff = first == 0; /* a block of free slots is no LIVE one */
    size_t need = 4 + n * (4 + payload);
    if (need > ARK__SNAP_BUF) {
        save_run(v, i, end, o->buf, 0, 0, SAVE_CHECK, first, &diff, NULL);
        ark__snap_put32(o, diff == 0 ? ARK__SNAP_BLOCK_LIVE
                                     : ARK__SNAP_BLOCK_STAMPS);
        if (diff == 0) {
            ark__snap_put32(o, first);
        } else {
            save_runs(v, o, i, end, 0, SAVE_STAMPS);
        }
        save_runs(v, o, i, end, payload, SAVE_LIVE);
        return;
    }
    /* In one pass over the slots, into the buffer laid out as the kind of
     * block the one before was: the payloads after the one stamp of a
     * block of live slots, or after room for every stamp, the stamps put
     * there on the way. A wrong guess moves the payloads, or writes the
     * block again from slots that are in the cache now. */
    if (need > ARK__SNAP_BUF - o->len) {
        ark__snap_out_flush(o);
    }
    unsigned char *head = o->buf + o->len;
    size_t live_at = o->len + 8, mixed_at = o->len + 4 + 4 * n;
    size_t start = *mixed ? mixed_at : live_at;
    size_t len = save_block_any(v, i, end, o->buf, start, payload, first, &diff,
                                *mixed ? head + 4 : NULL);
    bool was_mixed = *mixed;
    *mixed = diff != 0;
    if (*mixed && !was_mixed) {
        start = mixed_at;
        len = save_block_any(v, i, end, o->buf, start, payload, first, &diff,
                             head + 4);
    }
    size_t bytes = len - start;
    if (*mixed) {
        put_le32(head, ARK__SNAP_BLOCK_STAMPS);
        o->len = mixed_at + bytes;
    } else {
        if (was_mixed) {
            memmove(o->buf + live_at, o->buf + start, bytes);
        }
        put_le32(head, ARK__SNAP_BLOCK_LIVE);
        put_le32(head + 4, first);
        o->len = live_at + bytes;
    }
}

ark_status ark__slots_save(const ark__slots *s, ark__snap_out *o,
                           const ark__slots_io *io) {
    const ark__slot_view *v = s->v;
    size_t payload = io->payload;
    if (payload == 0) {
        save_runs(v, o, 1, s->v->issued, 0, SAVE_STAMPS);
    }
    /* A pool's slots in blocks: one stamp for a block of live slots with
     * the same generation, else every stamp; then the payloads. */
    bool mixed = false;
    for (uint64_t i = 1; i < s->v->issued && payload != 0;) {
        uint64_t end = s->v->issued - i < ARK__SNAP_BLOCK ? s->v->issued
                                                          : i + ARK__SNAP_BLOCK;
        save_block(v, o, i, end, payload, &mixed);
        i = end;
    }
    ark_status st = save_ring(s, o);
    for (size_t k = s->pending_done; k < s->npending && st == ARK_OK; k++) {
        uint64_t e = s->pending[k];
        ark__snap_put32(o, (uint32_t)e);
        ark__snap_put32(o, (uint32_t)(e >> 32));
        if (payload != 0) {
            ark__snap_put(o, ark__slot_at(v, e & UINT32_MAX) + v->data_off,
                          payload);
        }
    }
    return st;
}

ark_status ark__slots_load_header(ark__slots *s, const ark__snap_header *hd,
                                  bool key_given) {
    const ark_handle_layout *l = &s->v->layout;
    uint64_t tag = l->tag_bits == 0 ? 0 : l->tag_high >> l->gen_bits;
    if (hd->index_bits != l->index_bits || hd->gen_bits != l->gen_bits ||
        hd->tag_bits != l->tag_bits || hd->tag != tag) {
        return ARK_EINVAL;
    }
    uint64_t n = hd->issued;
    if (n == 0 || n > s->limit || hd->live >= n || hd->nfree >= n ||
        hd->npending >= n || hd->retired >= n ||
        hd->live + hd->nfree + hd->npending + hd->retired + 1 != n) {
        return ARK_ECORRUPT;
    }
    if (key_given) {
        if (memcmp(hd->keys, s->seal_keys, sizeof s->seal_keys) != 0) {
            return ARK_EINVAL;
        }
    } else {
        memcpy(s->seal_keys, hd->keys, sizeof s->seal_keys);
    }
    return ARK_OK;
}

uint64_t ark__slots_snap_bytes(const ark__snap_header *hd, size_t payload) {
    /* issued <= 2^32 and payload < 2^17: no sum can wrap. A pool's blocks
     * take 8 bytes at least (the mode and one stamp): a block that lists
     * its stamps announces the rest when its mode arrives. */
    uint64_t slots =
        payload == 0
            ? 4 * (hd->issued - 1)
            : 8 * ((hd->issued - 1 + ARK__SNAP_BLOCK - 1) / ARK__SNAP_BLOCK);
    return slots + hd->live * payload + 8 * hd->nfree +
           hd->npending * (8 + (uint64_t)payload);
}

/* Where a load of slot records stands. */
typedef struct load_pos {
    uint64_t i;    /* next slot */
    size_t pos;    /* next byte of the buffer */
    uint64_t live; /* live slots so far */
} load_pos;

/* A table's stamps of slots [at->i, end) from buf, all of them in the
 * buffer (the caller checked). Returns false on a generation past
 * gen_max. */
static bool load_stamps_run(const ark__slot_view *v, load_pos *at, uint64_t end,
                            const unsigned char *buf) {
    uint32_t gen_max = v->layout.gen_max;
    size_t stride = v->stride, pos = at->pos;
    uint64_t i = at->i, live = at->live;
    bool ok = true;
    while (i < end && ok) {
        uint64_t stop;
        char *slot = snap_run(v, i, end, &stop);
        for (; i < stop; i++, slot += stride) {
            ARK_PREFETCH_WRITE(slot + 2048);
            uint32_t stamp = ark__snap_le32(buf + pos);
            pos += 4;
            if (stamp == 0) {
                continue;
            }
            if (stamp - 1 > gen_max) {
                ok = false;
                break;
            }
            memcpy(slot, &stamp, 4);
            live++;
        }
    }
    at->i = i;
    at->pos = pos;
    at->live = live;
    return ok;
}

/* One stamp, which may straddle buffer fills. */
static ark_status load_stamp_one(ark__slots *s, ark__snap_in *in,
                                 load_pos *at) {
    const ark__slot_view *v = s->v;
    uint64_t i = at->i++;
    uint32_t stamp = ark__snap_get32(in);
    if (in->st != ARK_OK || stamp == 0) {
        return in->st;
    }
    if (stamp - 1 > v->layout.gen_max) {
        return ARK_ECORRUPT;
    }
    *ark__stamp(ark__slot_at(v, i)) = stamp;
    at->live++;
    return ARK_OK;
}

/* A table's slots section: the stamps of slots [1, issued), storage
 * growing as they arrive. Counts the live slots seen. */
static ark_status load_stamps(ark__slots *s, ark__snap_in *in, uint64_t issued,
                              uint64_t *live) {
    const ark__slot_view *v = s->v;
    load_pos at = {1, 0, 0};
    while (at.i < issued) {
        if (at.i >= v->cap) {
            ark_status st = grow_to(s, at.i + 1);
            if (st != ARK_OK) {
                return st;
            }
        }
        /* Every slot whose stamp surely is in the buffer, in one run. */
        uint64_t n = (in->len - in->pos) / 4;
        uint64_t end = issued < v->cap ? issued : v->cap;
        end = end - at.i < n ? end : at.i + n;
        if (end == at.i) {
            ark_status st = load_stamp_one(s, in, &at);
            if (st != ARK_OK) {
                return st;
            }
            continue;
        }
        at.pos = in->pos;
        bool ok = load_stamps_run(v, &at, end, in->buf);
        in->pos = at.pos;
        if (!ok) {
            return ARK_ECORRUPT;
        }
    }
    *live = at.live;
    return in->st;
}

/* Payloads of slots [at->i, end), all of them in the buffer from at->pos
 * (the caller checked): with stamps NULL every slot is live with stamp
 * same, else the live ones of stamps[] (stamps[k] of slot at->i + k, 0 if
 * not live). Inlined with constant arguments for the common sizes, like
 * save_run. */
static ARK_ALWAYS_INLINE inline void
load_payloads(const ark__slot_view *v, load_pos *at, uint64_t end,
              const uint32_t *stamps, uint32_t same, const unsigned char *buf,
              size_t payload) {
    size_t off = v->data_off, stride = v->stride, pos = at->pos;
    uint64_t i = at->i, live = at->live, first = at->i;
    while (i < end) {
        uint64_t stop;
        char *slot = snap_run(v, i, end, &stop);
        for (; i < stop; i++, slot += stride) {
            ARK_PREFETCH_WRITE(slot + 2048);
            uint32_t stamp = stamps == NULL ? same : stamps[i - first];
            if (stamps != NULL && stamp == 0) {
                continue;
            }
            memcpy(slot, &stamp, 4);
            ark__copy_small(slot + off, buf + pos, payload);
            pos += payload;
            live++;
        }
    }
    at->i = i;
    at->pos = pos;
    at->live = live;
}

/* load_payloads with the payload size a constant for the common sizes, in
 * functions of their own (see save_block8). */
static ARK_NOINLINE void load_payloads8(const ark__slot_view *v, load_pos *at,
                                        uint64_t end, const uint32_t *stamps,
                                        uint32_t same,
                                        const unsigned char *buf) {
    if (stamps == NULL) {
        load_payloads(v, at, end, NULL, same, buf, 8);
    } else {
        load_payloads(v, at, end, stamps, 0, buf, 8);
    }
}

static ARK_NOINLINE void load_payloads16(const ark__slot_view *v, load_pos *at,
                                         uint64_t end, const uint32_t *stamps,
                                         uint32_t same,
                                         const unsigned char *buf) {
    if (stamps == NULL) {
        load_payloads(v, at, end, NULL, same, buf, 16);
    } else {
        load_payloads(v, at, end, stamps, 0, buf, 16);
    }
}

static void load_payloads_any(const ark__slot_view *v, load_pos *at,
                              uint64_t end, const uint32_t *stamps,
                              uint32_t same, const unsigned char *buf,
                              size_t payload) {
    if (payload == 8) {
        load_payloads8(v, at, end, stamps, same, buf);
    } else if (payload == 16) {
        load_payloads16(v, at, end, stamps, same, buf);
    } else if (stamps == NULL) {
        load_payloads(v, at, end, NULL, same, buf, payload);
    } else {
        load_payloads(v, at, end, stamps, 0, buf, payload);
    }
}

/* A mode-0 block's stamps (the first already read) into stamps[0, n):
 * each a valid stamp, not all of them the one of a mode-1 block. Sets
 * *live to the number of live ones. */
static ark_status load_block_stamps(ark__snap_in *in, uint32_t *stamps,
                                    size_t n, uint32_t gen_max, size_t *live) {
    unsigned char raw[4 * ARK__SNAP_BLOCK];
    /* The first stamp came with the mode; the others are announced now. */
    ark__snap_in_expect(in, 4 * ((uint64_t)n - 1));
    ark__snap_get(in, raw, 4 * (n - 1));
    if (in->st != ARK_OK) {
        return in->st;
    }
    uint32_t first = stamps[0], differ = 0, bad = 0;
    size_t nlive = first != 0;
    for (size_t k = 1; k < n; k++) {
        uint32_t x = ark__snap_le32(raw + 4 * (k - 1));
        stamps[k] = x;
        differ |= x ^ first;
        nlive += x != 0;
        bad |= (uint32_t)(x != 0 && x - 1 > gen_max);
    }
    bad |= (uint32_t)(first != 0 && first - 1 > gen_max);
    /* One encoding per pool: all live with one stamp is mode 1. */
    if (bad != 0 || (differ == 0 && first != 0)) {
        return ARK_ECORRUPT;
    }
    *live = nlive;
    return ARK_OK;
}

/* One block of a pool's slots section: slots [at->i, end). */
static ark_status load_block(ark__slots *s, ark__snap_in *in,
                             const ark__slots_io *io, load_pos *at,
                             uint64_t end) {
    const ark__slot_view *v = s->v;
    uint32_t block[ARK__SNAP_BLOCK];
    size_t n = (size_t)(end - at->i), payload = io->payload;
    uint32_t mode = ark__snap_get32(in);
    uint32_t same = ark__snap_get32(in);
    if (in->st != ARK_OK) {
        return in->st;
    }
    uint32_t gen_max = v->layout.gen_max;
    const uint32_t *stamps = NULL; /* NULL: every slot live with same */
    size_t left = n;               /* live slots still to come */
    if (mode == ARK__SNAP_BLOCK_LIVE) {
        if (same == 0 || same - 1 > gen_max) {
            return ARK_ECORRUPT;
        }
    } else if (mode == ARK__SNAP_BLOCK_STAMPS) {
        block[0] = same;
        ark_status st = load_block_stamps(in, block, n, gen_max, &left);
        if (st != ARK_OK) {
            return st;
        }
        stamps = block;
    } else {
        return ARK_ECORRUPT;
    }
    /* Storage: for a block of listed stamps now (4 bytes of input per
     * slot have come), for a one-stamp block run by run, as the payloads
     * arrive. */
    if (stamps != NULL && end > v->cap) {
        ark_status st = grow_to(s, end);
        if (st != ARK_OK) {
            return st;
        }
    }
    uint64_t base = at->i;
    while (at->i < end) {
        const uint32_t *st_at = stamps == NULL ? NULL : stamps + (at->i - base);
        uint32_t stamp = st_at == NULL ? same : *st_at;
        if (stamp == 0) {
            at->i++;
            continue;
        }
        /* Every slot whose payload surely is in the buffer, in one run; a
         * payload that straddles a fill goes alone. */
        uint64_t fit = (in->len - in->pos) / payload;
        uint64_t stop = end;
        if (fit < left) {
            uint64_t nlive = 0;
            for (stop = at->i; stop < end && nlive < fit; stop++) {
                nlive += st_at == NULL || stamps[stop - base] != 0;
            }
        }
        uint64_t want = fit == 0 ? at->i + 1 : stop;
        if (want > v->cap) {
            ark_status st = grow_to(s, want);
            if (st != ARK_OK) {
                return st;
            }
        }
        if (fit == 0) {
            char *slot = ark__slot_at(v, at->i);
            memcpy(slot, &stamp, 4);
            ark__snap_get(in, slot + v->data_off, payload);
            at->i++;
            at->live++;
            left--;
            if (in->st != ARK_OK) {
                return in->st;
            }
            continue;
        }
        uint64_t live = at->live;
        at->pos = in->pos;
        load_payloads_any(v, at, stop, st_at, same, in->buf, payload);
        in->pos = at->pos;
        left -= (size_t)(at->live - live);
    }
    return ARK_OK;
}

/* A pool's slots section, block by block. Counts the live slots seen. */
static ark_status load_blocks(ark__slots *s, ark__snap_in *in, uint64_t issued,
                              const ark__slots_io *io, uint64_t *live) {
    load_pos at = {1, 0, 0};
    while (at.i < issued) {
        uint64_t end =
            issued - at.i < ARK__SNAP_BLOCK ? issued : at.i + ARK__SNAP_BLOCK;
        ark_status st = load_block(s, in, io, &at, end);
        if (st != ARK_OK) {
            return st;
        }
    }
    *live = at.live;
    return in->st;
}

/* One entry of the ring or pending section: a slot index and a
 * generation. The slot must be issued, not live and listed once, the
 * generation in range; *slot gets the slot. */
static ark_status read_listed(ark__slots *s, ark__snap_in *in, uint64_t *seen,
                              uint32_t *i, uint32_t *gen, char **slot) {
    *i = ark__snap_get32(in);
    *gen = ark__snap_get32(in);
    if (in->st != ARK_OK) {
        return in->st;
    }
    if (*i == 0 || *i >= s->v->issued || *gen > s->v->layout.gen_max) {
        return ARK_ECORRUPT;
    }
    *slot = ark__slot_at(s->v, *i);
    if (*ark__stamp(*slot) != 0 || !validate_see(seen, *i)) {
        return ARK_ECORRUPT;
    }
    s->ops->unlink(s->owner, *i);
    return ARK_OK;
}

/* The ring and pending sections, then retirement of the rest. */
static ark_status load_lists(ark__slots *s, ark__snap_in *in,
                             const ark__snap_header *hd,
                             const ark__slots_io *io, uint64_t *seen) {
    for (uint64_t k = 0; k < hd->nfree; k++) {
        uint32_t i, gen;
        char *slot;
        ark_status st = read_listed(s, in, seen, &i, &gen, &slot);
        if (st != ARK_OK) {
            return st;
        }
        *ark__next_gen(slot) = gen;
        ark__slot_enqueue(s->v, i);
    }
    for (uint64_t k = 0; k < hd->npending; k++) {
        uint32_t i, gen;
        char *slot;
        ark_status st = read_listed(s, in, seen, &i, &gen, &slot);
        if (st == ARK_OK) {
            st = list_push(s, &s->pending, &s->npending, &s->pending_cap,
                           i | (uint64_t)gen << 32);
        }
        if (st != ARK_OK) {
            return st;
        }
        s->held++;
        if (io->payload != 0) {
            ark__snap_get(in, slot + s->v->data_off, io->payload);
        }
    }
    /* Live and listed slots are distinct and counted: with nothing retired
     * they are all the issued ones. */
    for (uint64_t i = 1; i < s->v->issued && hd->retired > 0; i++) {
        char *slot = ark__slot_at(s->v, i);
        if (*ark__stamp(slot) == 0 && validate_see(seen, i)) {
            *ark__next_gen(slot) = ARK__RETIRED;
            s->retired++;
            s->ops->unlink(s->owner, i);
        }
    }
    return s->retired == hd->retired ? in->st : ARK_ECORRUPT;
}

ark_status ark__slots_load(ark__slots *s, ark__snap_in *in,
                           const ark__snap_header *hd,
                           const ark__slots_io *io) {
    uint64_t live = 0;
    ark_status st = io->payload == 0
                        ? load_stamps(s, in, hd->issued, &live)
                        : load_blocks(s, in, hd->issued, io, &live);
    if (st == ARK_OK && live != hd->live) {
        st = ARK_ECORRUPT;
    }
    if (st == ARK_OK && hd->issued > 1) {
        st = grow_ring(s, hd->issued);
    }
    if (st != ARK_OK) {
        return st;
    }
    s->v->issued = hd->issued;
    /* One bit per issued slot: justified, the slots have arrived. */
    size_t words = (size_t)((hd->issued + 63) >> 6);
    uint64_t *seen = ark__alloc(&s->alloc, words * sizeof *seen, 0);
    if (seen == NULL) {
        return ARK_ENOMEM;
    }
    memset(seen, 0, words * sizeof *seen);
    st = load_lists(s, in, hd, io, seen);
    ark__free(&s->alloc, seen, words * sizeof *seen);
    return st;
}
