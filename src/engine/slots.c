/* SPDX-License-Identifier: MIT */
/*
 * slots.c - the handle engine's slow paths: layout validation, growth,
 * the removal state machine with hooks, sealing and validation. The rules
 * are described in slots.h.
 */
#include "engine/slots.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* The one external definition of each inline helper of the handle engine
 * in ark/internal/core.h (not exported: see ARK__INLINE_API). */
ARK__INLINE_API extern inline uint64_t
ark__handle_stamp(const ark__handle_layout *l, ark_handle h);
ARK__INLINE_API extern inline uint64_t
ark__handle_index(const ark__handle_layout *l, ark_handle h);
ARK__INLINE_API extern inline ark_handle
ark__handle_make(const ark__handle_layout *l, uint64_t index, uint32_t gen);
ARK__INLINE_API extern inline char *ark__slots_paged(const ark__slots_view *v,
                                                     uint64_t i);
ARK__INLINE_API extern inline char *ark__slots_at(const ark__slots_view *v,
                                                  uint64_t i);
ARK__INLINE_API extern inline char *ark__slots_live(const ark__slots_view *v,
                                                    ark_handle h);
ARK__INLINE_API extern inline ark_handle
ark__slots_handle(const ark__slots_view *v, uint64_t i, const char *slot);
ARK__INLINE_API extern inline void ark__slots_enqueue(ark__slots_view *v,
                                                      uint64_t i);
ARK__INLINE_API extern inline char *
ark__slots_removable(const ark__slots_view *v, ark_handle h, uint64_t *index);
ARK__INLINE_API extern inline void ark__slots_unstamp(char *slot);
ARK__INLINE_API extern inline void ark__slots_release(ark__slots_view *v,
                                                      uint64_t i, char *slot);
ARK__INLINE_API extern inline char *
ark__slots_taken(char *p, uint64_t i, uint32_t gen, uint64_t *index);
ARK__INLINE_API extern inline uint64_t
ark__slots_queued(const ark__slots_view *v);
ARK__INLINE_API extern inline char *ark__slots_take_reused(ark__slots_view *v,
                                                           uint64_t *index);
ARK__INLINE_API extern inline char *ark__slots_take_fresh(ark__slots_view *v,
                                                          uint64_t *index);
ARK__INLINE_API extern inline char *ark__slots_take_fast(ark__slots_view *v,
                                                         uint64_t *index);

/* ---- layout ------------------------------------------------------------ */

/* Each field is checked on its own before any sum is formed, so no sum can
 * wrap: index_bits, gen_bits <= 32 (0 = 32), then tag_bits <= 64 - both. */
static ark_status layout_init(ark__handle_layout *l,
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
    const ark__handle_layout *l = &s->v->layout;
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

ark_status ark__slots_init(ark__slots *s, ark__slots_view *v,
                           const ark__slots_config *cfg,
                           const ark_allocator *alloc,
                           const ark__slots_ops *ops, void *owner) {
    memset(s, 0, sizeof *s);
    v->ring = NULL;
    v->ring_cap = v->head = v->tail = v->ring_dead = v->issued = 0;
    v->ring_mask = UINT64_MAX; /* ring_cap - 1 */
    v->fast_stamp_max = 0;
    v->fresh_end = 0;
    ark_status st = ARK_OK;
    if (cfg->keys == NULL) {
        st = layout_init(&v->layout, cfg);
    } else if ((cfg->index_bits | cfg->gen_bits | cfg->tag_bits) != 0 ||
               (cfg->index_min | cfg->index_max) != 0 || cfg->tag != 0 ||
               cfg->seal_key != 0 || cfg->keys->keyed) {
        st = ARK_EINVAL; /* the key space decides all of them */
    } else {
        v->layout = cfg->keys->v->layout;
    }
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
    st = ark__slots_range_init(s, cfg);
    if (st != ARK_OK) {
        return st;
    }
    ark__slots_refresh_fast(s);
    if (cfg->keys != NULL) {
        return ark__slots_init_keyed(s, cfg->keys);
    }
    seal_init(s, cfg->seal_key);
    return ARK_OK;
}

void ark__slots_fini(ark__slots *s) {
    ark__slots_fini_keys(s);
    ark__free(&s->alloc, s->v->ring,
              (size_t)s->v->ring_cap * sizeof *s->v->ring);
    ark__free(&s->alloc, s->pending, s->pending_cap * sizeof *s->pending);
    ark__free(&s->alloc, s->doomed, s->doomed_cap * sizeof *s->doomed);
    ark__free(&s->alloc, s->skip, (size_t)s->skip_cap * sizeof *s->skip);
    ark__slots_claims_fini(s);
}

/* ---- growth ------------------------------------------------------------ */

/* Give the ring room for want slots (a power of two), unrolled to start
 * at 0. Nothing changes on failure. */
ark_status ark__slots_grow_ring(ark__slots *s, uint64_t want) {
    ark__slots_view *v = s->v;
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
    uint64_t n = ark__slots_queued(v);
    for (uint64_t k = 0; k < n; k++) {
        ring[k] = ark__slots_ring_at(v, k);
    }
    ark__free(&s->alloc, v->ring, (size_t)v->ring_cap * sizeof *ring);
    v->ring = ring;
    v->ring_cap = ncap;
    v->ring_mask = ncap - 1;
    v->head = 0;
    v->tail = n;
    ark__slots_refresh_fresh(s);
    return ARK_OK;
}

/* Make slots [0, want) exist: storage from the container, ring room from
 * the engine (for the slots of the index range). want <= limit. */
ark_status ark__slots_grow_to(ark__slots *s, uint64_t want) {
    ark_status st =
        s->keyed ? ARK_OK
                 : ark__slots_grow_ring(s, ark__slots_ring_want(s, want));
    if (st == ARK_OK && want > s->v->cap) {
        st = s->ops->grow(s->owner, want);
        ark__slots_refresh_fresh(s);
    }
    return st;
}

ark_status ark__slots_grow_fresh(ark__slots *s) {
    if (s->v->issued >= s->chunk_end) {
        ark_status st = ark__slots_take_run(s);
        if (st != ARK_OK) {
            return st;
        }
    }
    return ark__slots_grow_to(s, s->v->issued + 1);
}

ark_status ark__slots_take(ark__slots *s, uint64_t *index, char **slot) {
    ark__slots_view *v = s->v;
    ark_status st = ark__slots_prepare(s);
    if (st != ARK_OK) {
        return st;
    }
    char *p;
    if (!ark__slots_reuses(s)) {
        p = ark__slots_take_fresh(v, index); /* prepare gave it room */
        assert(p != NULL);
    } else {
        if (v->ring_dead != 0) {
            ark__slots_skip_dead(s); /* the head entry is live now */
        }
        /* The inline take applies with ARK_REUSE_DELAY queued and no dead
         * entries; at the end of the index space fewer may be queued, and
         * dead entries may still wait behind the head. */
        p = ark__slots_queued(v) >= ARK_REUSE_DELAY
                ? ark__slots_take_reused(v, index)
                : NULL;
        if (p == NULL) {
            uint64_t i = ark__slots_ring_pop(v);
            p = ark__slots_at(v, i);
            p = ark__slots_taken(p, i, *ark__slots_next_gen(p), index);
        }
    }
    *slot = p;
    return ARK_OK;
}

ark_status ark__slots_reserve(ark__slots *s, size_t n) {
    if (s->keyed) {
        /* Storage for every index its key space has storage for. */
        if (n >= s->limit) {
            return ARK_EFULL;
        }
        uint64_t want = s->keys != NULL ? s->keys->v->cap : 0;
        return want > s->v->cap ? s->ops->back(s->owner, want) : ARK_OK;
    }
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
    if (need > ark__slots_fresh_left(s) + nfree) {
        return ARK_EFULL;
    }
    uint64_t wait =
        nfree < ARK_REUSE_DELAY - 1 ? ARK_REUSE_DELAY - 1 - nfree : 0;
    /* Fresh slots come from the owner's run, then from the frontier. */
    uint64_t take = need + wait, issued = s->v->issued;
    uint64_t run = issued < s->chunk_end ? s->chunk_end - issued : 0;
    uint64_t want =
        take <= run ? issued + take : ark__slots_frontier(s) + (take - run);
    want = want > issued ? want : issued;
    want = want < s->end ? want : s->end;
    ark_status st = s->ops->back(s->owner, want);
    return st == ARK_OK ? ark__slots_grow_ring(s, ark__slots_ring_want(s, want))
                        : st;
}

/* ---- removal ----------------------------------------------------------- */

/* Append index | gen << 32 to a list, growing it by doubling. */
ark_status ark__slots_list_push(ark__slots *s, uint64_t **list, size_t *len,
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

/* Hide live slot i from iteration (the container's unlink) and tell the
 * queries over its key space (ark__slots_view.epoch). */
static void unlink_live(ark__slots *s, uint64_t i) {
    s->ops->unlink(s->owner, i);
    s->v->epoch++;
    if (s->keys != NULL) {
        s->keys->v->epoch++;
    }
}

/* Mark live slot i on a list (pending or doomed): it becomes invisible at
 * once, its storage stays; an entity loses its tags now. Nothing changes
 * on ARK_ENOMEM. */
static ark_status mark(ark__slots *s, bool doomed, uint64_t i, char *slot) {
    uint32_t gen = *ark__slots_stamp(slot) - 1;
    uint64_t entry = i | (uint64_t)gen << 32;
    uint64_t **list = doomed ? &s->doomed : &s->pending;
    size_t *len = doomed ? &s->ndoomed : &s->npending;
    size_t *cap = doomed ? &s->doomed_cap : &s->pending_cap;
    uint64_t *l = ark__grow_array(&s->alloc, *list, cap, *len, *len + 1,
                                  sizeof *l); /* room first: untag is final */
    if (l == NULL) {
        return ARK_ENOMEM;
    }
    *list = l;
    if (doomed && s->nattached != 0) {
        /* A remove deferred by a running hook loses its tags now, as a
         * remove does; remove_later's lose theirs at the flush, in one
         * batch. */
        ark_status st =
            ark__slots_untag(s, ark__handle_make(&s->v->layout, i, gen));
        if (st != ARK_OK) {
            return st;
        }
    }
    l[(*len)++] = entry;
    *ark__slots_stamp(slot) = 0;
    s->held++;
    unlink_live(s, i);
    return ARK_OK;
}

/* Finish an unlinked slot: its hook and, for an entity, the removal of
 * its elements from the keyed containers (its stamp valid meanwhile, so
 * its handle resolves), then the stamp cleared, the container's storage
 * dropped and the slot freed. The slot is looked up again after the
 * hooks, which may have grown storage. */
static void finish(ark__slots *s, uint64_t i, uint32_t gen, bool hook) {
    char *slot = ark__slots_at(s->v, i);
    hook = hook && s->has_hook;
    if (hook || s->nattached != 0) {
        ark_handle h = ark__handle_make(&s->v->layout, i, gen);
        *ark__slots_stamp(slot) = gen + 1;
        s->dying = i;
        if (hook) {
            s->ops->hook(s->owner, slot, h);
        }
        ark__slots_cascade(s, h);
        s->dying = 0;
        slot = ark__slots_at(s->v, i);
    }
    *ark__slots_stamp(slot) = 0;
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

/* Whether a removal must take the general path: a hook to run, elements
 * or tags of an entity to remove with it, a keyed slot (no ring). */
static bool removal_general(const ark__slots *s) {
    return s->has_hook || s->nattached != 0 || s->keyed;
}

void ark__slots_refresh_fast(ark__slots *s) {
    s->v->fast_stamp_max =
        removal_general(s) || s->v->ring_dead != 0 || s->outside
            ? 0
            : s->v->layout.gen_max;
}

/* Unlink live slot i and finish it now, its hook run or not. */
static void remove_now(ark__slots *s, uint64_t i, char *slot, bool hook) {
    uint32_t gen = *ark__slots_stamp(slot) - 1;
    s->held++;
    unlink_live(s, i);
    finish(s, i, gen, hook);
}

ark_status ark__slots_remove_plain(ark__slots *k, uint64_t i, char *slot) {
    uint32_t gen = *ark__slots_stamp(slot) - 1;
    ark_handle h = ark__handle_make(&k->v->layout, i, gen);
    ark__slots_prefetch(k, i);
    ark_status st = ark__slots_untag(k, h);
    if (st != ARK_OK) {
        return st;
    }
    unlink_live(k, i);
    for (size_t j = 0; j < k->nattached; j++) {
        if (!k->attached[j].tag) {
            ark__slots_keyed_remove(k->attached[j].c, h, false);
        }
    }
    *ark__slots_stamp(slot) = 0;
    k->ops->drop(k->owner, slot);
    ark__slots_free(k, i, slot, gen);
    return ARK_OK;
}

ark_status ark__slots_remove_slow(ark__slots *s, uint64_t i, char *slot) {
    if (!s->has_hook && s->nattached == 0) {
        remove_now(s, i, slot, false);
        return ARK_OK;
    }
    if (!s->has_hook && s->nhooked == 0 && !s->draining) {
        return ark__slots_remove_plain(s, i, slot);
    }
    if (i == s->dying) {
        return ARK_OK; /* its removal is running: one on_remove only */
    }
    if (s->draining) {
        return mark(s, true, i, slot);
    }
    if (s->nattached != 0) {
        ark__slots_prefetch(s, i);
        uint32_t gen = *ark__slots_stamp(slot) - 1;
        ark_status st =
            ark__slots_untag(s, ark__handle_make(&s->v->layout, i, gen));
        if (st != ARK_OK) {
            return st;
        }
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
    if (s->nattached != 0) {
        (void)ark__slots_untag(s, h); /* an element never built: no tags */
    }
    remove_now(s, i, slot, false);
    return ARK_OK;
}

void ark__slots_keyed_remove(ark__slots *s, ark_handle h, bool hook) {
    uint64_t i;
    char *slot;
    if (ark__slots_find(s, h, &i, &slot) != ARK_OK || i == s->dying) {
        return; /* none, marked (its flush finishes it), or its hook runs */
    }
    if (!hook || !s->has_hook) {
        /* No hook to run, so nothing can call back: the element goes at
         * once (as discard), with what remove_now and finish would do
         * (the key space's epoch moved with its entity). */
        s->ops->unlink(s->owner, i);
        s->v->epoch++;
        *ark__slots_stamp(slot) = 0;
        s->ops->drop(s->owner, slot);
        s->vacant++;
        return;
    }
    if (ark__slots_remove_slow(s, i, slot) == ARK_ENOMEM) {
        /* A hook of s runs and its removes queue up: no room for this one.
         * Run it now, inside the running hook, rather than leave an
         * element no entity owns; the running one stays the dying one. */
        uint64_t dying = s->dying;
        remove_now(s, i, slot, true);
        s->dying = dying;
    }
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
 * mark meanwhile (the array may move: index it, re-read its length). An
 * entity pool first removes the marked entities' tags, a batch at a time
 * (untag: false when clear empties the tag sets anyway); a batch whose
 * tags cannot be removed for want of memory stays marked, for a later
 * flush. Returns how many were finished. */
static size_t drain_pending(ark__slots *s, bool hook, bool untag) {
    size_t n = 0;
    while (s->pending_done < s->npending) {
        size_t end = s->npending;
        if (untag && s->nattached != 0 &&
            ark__slots_untag_batch(s, s->pending_done, end) != ARK_OK) {
            return n; /* pending_done..npending stay marked */
        }
        while (s->pending_done < end) {
            /* An entity's elements, a few entries ahead. */
            if (s->nattached != 0 && s->pending_done + 4 < end) {
                ark__slots_prefetch(s, s->pending[s->pending_done + 4] &
                                           UINT32_MAX);
            }
            finish_entry(s, s->pending[s->pending_done++], hook);
            drain_doomed(s);
            n++;
        }
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
    size_t n = drain_pending(s, s->has_hook, true);
    s->draining = false;
    ark__slots_restock(s);
    return n;
}

void ark__slots_clear(ark__slots *s, bool run_hook) {
    if (s->draining) {
        return;
    }
    s->draining = true;
    s->quiet = !run_hook; /* the keyed containers' hooks too */
    bool hook = run_hook && s->has_hook;
    /* Hooks may insert: repeat until a pass finds nothing. */
    while (ark__slots_count(s) > 0 || s->npending > 0) {
        uint64_t i = 0;
        while ((i = s->ops->next_live(s->owner, i + 1)) != 0) {
            remove_now(s, i, ark__slots_at(s->v, i), hook);
            drain_doomed(s);
        }
        drain_pending(s, hook, false);
    }
    ark__slots_clear_tags(s);
    s->quiet = false;
    ark__slots_drop_claims(s);
    s->draining = false;
}

/* ARK_ENULL for the null handle, ARK_EFOREIGN for another tag or a bit
 * set above it, else ARK_OK: whether h could name a slot of this layout. */
static ark_status handle_of_layout(const ark__handle_layout *l, ark_handle h) {
    if (h == ARK_NULL_HANDLE) {
        return ARK_ENULL;
    }
    return (h & l->high_mask) != l->tag_value ? ARK_EFOREIGN : ARK_OK;
}

ark_status ark__slots_classify(const ark__slots *s, ark_handle h) {
    const ark__handle_layout *l = &s->v->layout;
    ark_status st = handle_of_layout(l, h);
    if (st != ARK_OK) {
        return st;
    }
    uint64_t i = h & l->index_mask;
    if (i >= s->v->issued && ark__slots_claimed_ahead(s, i)) {
        return ARK_ESTALE;
    }
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

/* Every listed slot is in range, not live, and listed once; a free slot
 * holds its next generation (0 for a slot insert_at made free without
 * using it). Dead ring entries (insert_at) are skipped, oldest first, as
 * take skips them; skip is a scratch copy of s->skip or NULL. */
static bool validate_lists(const ark__slots *s, uint64_t *seen,
                           uint32_t *skip) {
    size_t npend = s->npending - s->pending_done;
    size_t ndoom = s->ndoomed - s->doomed_done;
    uint64_t dead = 0;
    for (uint64_t k = 0; k < ark__slots_queued(s->v); k++) {
        uint64_t i = ark__slots_ring_at(s->v, k);
        if (i == 0 || i >= s->v->issued || i < s->lo || i >= s->end) {
            return false;
        }
        if (skip != NULL && i < s->skip_cap && skip[i] > 0) {
            skip[i]--;
            dead++;
            continue;
        }
        char *slot = ark__slots_at(s->v, i);
        if (!ark__slots_see(seen, i) || *ark__slots_stamp(slot) != 0 ||
            *ark__slots_next_gen(slot) > s->v->layout.gen_max) {
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
        if (i == 0 || i >= s->v->issued || !ark__slots_see(seen, i) ||
            *ark__slots_stamp(ark__slots_at(s->v, i)) != 0) {
            return false;
        }
    }
    return true;
}

ark_status ark__slots_validate(const ark__slots *s,
                               bool (*linked)(const void *c, uint64_t i)) {
    const ark__slots_view *v = s->v;
    uint32_t fast_max = removal_general(s) || s->v->ring_dead != 0 || s->outside
                            ? 0
                            : v->layout.gen_max;
    if (s->v->fast_stamp_max != fast_max) {
        return ARK_ECORRUPT;
    }
    if (v->cap == 0) { /* nothing stored yet: slot 0 only, never issued */
        return s->v->issued == 1 && s->held == 0 &&
                       ark__slots_queued(s->v) == 0 && s->npending == 0 &&
                       s->ndoomed == 0
                   ? ARK_OK
                   : ARK_ECORRUPT;
    }
    /* held: the marked slots still listed, and the one whose hook runs */
    if (s->held != (s->npending - s->pending_done) +
                       (s->ndoomed - s->doomed_done) + (s->dying != 0)) {
        return ARK_ECORRUPT;
    }
    if (s->keyed && (s->v->issued != v->cap || s->v->ring_cap != 0 ||
                     s->retired != 0 || s->vacant >= v->cap)) {
        return ARK_ECORRUPT;
    }
    if (!s->keyed && s->vacant != 0) {
        return ARK_ECORRUPT;
    }
    if (s->v->issued > v->cap || v->cap > s->limit ||
        (!s->keyed &&
         s->v->ring_cap + 1 < ark__slots_ring_want(s, s->v->issued)) ||
        s->v->ring_mask != s->v->ring_cap - 1 ||
        ark__slots_queued(s->v) > s->v->ring_cap ||
        s->v->ring_dead > ark__slots_queued(s->v) ||
        s->doomed_done > s->ndoomed || s->pending_done > s->npending ||
        (v->cap > 0 && *ark__slots_stamp(ark__slots_at(v, 0)) != 0)) {
        return ARK_ECORRUPT;
    }
    uint64_t live = 0;
    for (uint64_t i = 1; i < s->v->issued; i++) {
        uint32_t stamp = *ark__slots_stamp(ark__slots_at(v, i));
        bool is_live = stamp != 0 && i != s->dying;
        if ((stamp != 0 && stamp - 1 > v->layout.gen_max) ||
            (linked != NULL && linked(s->owner, i) != is_live)) {
            return ARK_ECORRUPT;
        }
        live += is_live;
    }
    for (uint64_t i = s->v->issued; i < v->cap; i++) {
        if (*ark__slots_stamp(ark__slots_at(v, i)) != 0) {
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
    /* Every issued slot is live, free, retired, held, claimed, stocked or
     * parked: the checks of held and of the count above say so in sum; the
     * lists and the claim state say it slot by slot. */
    bool ok = validate_lists(s, seen, skip) &&
              (s->keyed ? s->cbits == NULL && s->stock_tail == 0 &&
                              s->parked == 0 && s->outside == 0
                        : ark__slots_validate_claims(s, seen));
    free(skip);
    free(seen);
    return ok ? ARK_OK : ARK_ECORRUPT;
}

/* ---- insert_at (see slots.h) -------------------------------------------- */

/* Drop the dead entries from the ring, keeping the order of the rest. */
static void ring_compact(ark__slots *s) {
    ark__slots_view *v = s->v;
    uint64_t n = ark__slots_queued(v), w = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t x = ark__slots_ring_at(v, k);
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
    ark__slots_view *v = s->v;
    while (v->ring_dead > 0) {
        uint32_t x = ark__slots_ring_at(v, 0);
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
    ark__slots_view *v = s->v;
    *ark__slots_next_gen(slot) = gen + 1;
    if (ark__slots_queued(v) == v->ring_cap &&
        ark__slots_grow_ring(s, v->ring_cap + 1) != ARK_OK) {
        ring_compact(s); /* frees at least one entry: ring_dead > 0 */
    }
    ark__slots_enqueue(v, i);
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

ark_status ark__slots_insert_at_check(const ark__slots *s, ark_handle h) {
    if (s->keyed) {
        return ark__slots_keyed_check(s, h);
    }
    const ark__handle_layout *l = &s->v->layout;
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
        return ark__slots_fresh_at_check(s, i, gen);
    }
    char *p = ark__slots_at(s->v, i);
    if (*ark__slots_stamp(p) != 0) {
        return ARK_EEXIST;
    }
    st = marked_status(s, i, gen);
    if (st != ARK_OK) {
        return st;
    }
    uint32_t next = *ark__slots_next_gen(p);
    if (ark__slots_claimish(s, i)) {
        return ark__slots_claimed_at_check(s, i, gen, next);
    }
    return next == ARK__RETIRED || gen < next ? ARK_ESTALE : ARK_OK;
}

ark_status ark__slots_insert_at(ark__slots *s, ark_handle h, uint64_t *index,
                                char **slot) {
    if (s->keyed) {
        assert(ark__slots_keyed_check(s, h) == ARK_OK);
        return ark__slots_keyed_take(s, h, index, slot);
    }
    const ark__handle_layout *l = &s->v->layout;
    uint64_t i = h & l->index_mask;
    uint32_t gen = (uint32_t)((h >> l->index_bits) & l->gen_mask);
    /* Past issued, outside the range, claimed or stocked: claim.c. */
    bool done = false;
    ark_status st = ARK_OK;
    if (i >= s->v->issued) {
        st = ark__slots_fresh_at(s, i, gen, &done);
    } else if (i < s->lo || i >= s->end || ark__slots_claimish(s, i)) {
        st = ark__slots_claimed_at(s, i, gen, &done);
    }
    if (st == ARK_OK && !done) {
        st = take_free_at(s, i);
    }
    if (st != ARK_OK) {
        return st;
    }
    char *p = ark__slots_at(s->v, i);
    *ark__slots_stamp(p) = gen + 1;
    *index = i;
    *slot = p;
    return ARK_OK;
}
