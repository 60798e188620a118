/* SPDX-License-Identifier: MIT */
/*
 * claim.c - handles claimed from any thread, and index ranges: the
 * frontier the owning thread and claimers share, the owner's runs of
 * fresh indices, absorbing claims, the stock of reused slots, insert_at
 * and unclaim on claimed slots, parking slots outside the range. The
 * rules are in slots.h ("Claims").
 *
 * Threads. A claimer reads only what never changes after create (the
 * layout, the range) and the shared block; it never touches a slot, so
 * storage may grow and move (a table's slot array) under it. Everything
 * else here runs on the owning thread.
 *
 * Memory orderings. The frontier carries no data: a claimer writes
 * nothing the owner reads but the frontier itself, so every access to it
 * is relaxed; a CAS keeps it exact. The stock is a single-producer ring:
 * the owner writes entries (relaxed atomics), then publishes the tail
 * with a release store; a claimer loads the tail with acquire, so the
 * entries below it are visible, reads them, then CASes head forward with
 * release, which orders those reads before the owner's acquire load of
 * head, after which the owner may write over them. head only grows, so
 * a claimer whose CAS succeeds saw head unchanged from its first load to
 * the CAS: the owner wrote no entry it read meanwhile (the owner writes
 * position p only once head > p - ARK__STOCK_CAP).
 */
#include "engine/slots.h"

#include <string.h>

#define STOCK_MASK ((uint64_t)ARK__STOCK_CAP - 1)
_Static_assert((ARK__STOCK_CAP & (ARK__STOCK_CAP - 1)) == 0,
               "the stock's capacity is a power of two");

/* Which of a slot's two bits (claim_bit and friends). */
enum { CLAIMED = 0, STOCKED = 1 };

/* ---- small helpers ------------------------------------------------------ */

/* The frontier, read from either thread: relaxed (see the header). The
 * const is cast away for atomic_load, which C11 declares without it. */
static uint64_t frontier_of(const ark__slots *s) {
    return atomic_load_explicit((_Atomic uint64_t *)&s->shared.frontier,
                                memory_order_relaxed);
}

uint64_t ark__slots_frontier(const ark__slots *s) { return frontier_of(s); }

/* The first index a claimer may have taken that the owner has not
 * absorbed: [claim_lo, F) are claims ahead of issued. */
static uint64_t claim_lo(const ark__slots *s) {
    return s->chunk_end > s->lo ? s->chunk_end : s->lo;
}

static bool in_range(const ark__slots *s, uint64_t i) {
    return i >= s->lo && i < s->end;
}

static bool bit_get(const ark__slots *s, int which, uint64_t i) {
    size_t w = (size_t)(i >> 6) * 2 + (size_t)which;
    return w < s->cbits_words && ((s->cbits[w] >> (i & 63)) & 1) != 0;
}

/* The bits must cover i (bits_reserve). */
static void bit_set(ark__slots *s, int which, uint64_t i) {
    s->cbits[(size_t)(i >> 6) * 2 + (size_t)which] |= (uint64_t)1 << (i & 63);
}

static void bit_clear(ark__slots *s, int which, uint64_t i) {
    s->cbits[(size_t)(i >> 6) * 2 + (size_t)which] &=
        ~((uint64_t)1 << (i & 63));
}

/* Make the bits cover slots [0, upto). Nothing changes on failure. */
static ark_status bits_reserve(ark__slots *s, uint64_t upto) {
    size_t words = (size_t)((upto + 63) >> 6) * 2;
    if (words <= s->cbits_words) {
        return ARK_OK;
    }
    size_t old = s->cbits_words;
    uint64_t *b = ark__grow_array(&s->alloc, s->cbits, &s->cbits_words, old,
                                  words, sizeof *b);
    if (b == NULL) {
        return ARK_ENOMEM;
    }
    memset(b + old, 0, (s->cbits_words - old) * sizeof *b);
    s->cbits = b;
    return ARK_OK;
}

/* Fresh slots one insert_at may queue beyond the storage it has, and the
 * bytes of slots it may add (the fewer of the two applies). */
static uint64_t insert_at_gap(const ark__slots_view *v) {
    uint64_t by_bytes = ARK__INSERT_AT_GAP_BYTES / v->stride;
    return by_bytes < ARK__INSERT_AT_GAP ? by_bytes : ARK__INSERT_AT_GAP;
}

/* ---- life cycle --------------------------------------------------------- */

ark_status ark__slots_range_init(ark__slots *s, const ark__slots_config *cfg) {
    uint64_t last = s->limit - 1;
    uint64_t lo = cfg->index_min, hi = cfg->index_max;
    if (lo == 0 && hi == 0) {
        hi = last;
    } else if (lo > hi || hi > last) {
        return ARK_EINVAL;
    }
    s->lo = lo == 0 ? 1 : lo; /* slot 0 is never used */
    s->end = hi + 1;
    s->chunk_end = 1;
    atomic_init(&s->shared.frontier, s->lo);
    atomic_init(&s->shared.head, 0);
    atomic_init(&s->shared.tail, 0);
    s->shared.stock = NULL;
    return ARK_OK;
}

void ark__slots_claims_fini(ark__slots *s) {
    ark__free(&s->alloc, (void *)s->shared.stock,
              ARK__STOCK_CAP * sizeof *s->shared.stock);
    ark__free(&s->alloc, s->cbits, s->cbits_words * sizeof *s->cbits);
    s->shared.stock = NULL;
    s->cbits = NULL;
    s->cbits_words = 0;
}

void ark__slots_refresh_fresh(ark__slots *s) {
    ark__slots_view *v = s->v;
    uint64_t e = v->cap;
    uint64_t ring = s->lo + v->ring_cap; /* in-range slots the ring holds */
    e = ring < e ? ring : e;
    v->fresh_end = s->chunk_end < e ? s->chunk_end : e;
}

/* ---- fresh indices ------------------------------------------------------ */

bool ark__slots_fresh_out(const ark__slots *s) {
    return s->v->issued >= s->chunk_end && frontier_of(s) >= s->end;
}

uint64_t ark__slots_fresh_left(const ark__slots *s) {
    uint64_t issued = s->v->issued, f = frontier_of(s);
    uint64_t run = issued < s->chunk_end ? s->chunk_end - issued : 0;
    return run + (f < s->end ? s->end - f : 0);
}

bool ark__slots_claimed_ahead(const ark__slots *s, uint64_t i) {
    return i >= claim_lo(s) && i < frontier_of(s);
}

/* Room for slots [0, want) to be known: ring entries for every new free
 * slot among them, storage, and claimed bits up to claims_to when claims
 * lie below it. Nothing visible changes on failure. */
static ark_status room(ark__slots *s, uint64_t want, uint64_t claims_to) {
    ark__slots_view *v = s->v;
    uint64_t add = want > v->issued ? want - v->issued : 0;
    ark_status st = ark__slots_grow_ring(s, ark__slots_queued(v) + add);
    if (st == ARK_OK) {
        st = ark__slots_grow_to(s, want);
    }
    if (st == ARK_OK && claims_to > claim_lo(s)) {
        st = bits_reserve(s, claims_to);
    }
    return st;
}

/* Make slots [issued, upto) known (room() was made for them). Outside
 * the range they are parked; [claim_lo, ahead) are claims: claimed bit
 * and generation 0, or, below dropped, claims clear() dropped, free with
 * generation 1; the rest (the owner's run, a gap past the claims) are
 * free with generation 0, queued in index order. */
static void materialize(ark__slots *s, uint64_t upto, uint64_t ahead) {
    ark__slots_view *v = s->v;
    uint64_t clo = claim_lo(s);
    for (uint64_t j = v->issued; j < upto; j++) {
        char *slot = ark__slots_at(v, j);
        s->ops->unlink(s->owner, j);
        uint32_t *next = ark__slots_next_gen(slot);
        *next = 0;
        if (!in_range(s, j)) {
            s->parked++;
        } else if (j >= clo && j < ahead) {
            s->claims_seen = true;
            if (j < s->dropped) {
                *next = 1; /* generation 0 went to the dropped claim */
                ark__slots_enqueue(v, j);
            } else {
                bit_set(s, CLAIMED, j);
                s->nclaimed++;
            }
        } else {
            ark__slots_enqueue(v, j);
        }
    }
    v->issued = upto > v->issued ? upto : v->issued;
    s->chunk_end = s->chunk_end > v->issued ? s->chunk_end : v->issued;
}

/* Slot i, just past the known ones, is taken by insert_at. */
static void take_index(ark__slots *s, uint64_t i) {
    s->v->issued = i + 1;
    s->chunk_end = s->chunk_end > i + 1 ? s->chunk_end : i + 1;
    if (!in_range(s, i)) {
        s->outside++;
        ark__slots_refresh_fast(s);
    }
    ark__slots_refresh_fresh(s);
}

ark_status ark__slots_take_run(ark__slots *s) {
    _Atomic uint64_t *fr = &s->shared.frontier;
    uint64_t f = atomic_load_explicit(fr, memory_order_relaxed), top;
    for (;;) {
        if (f >= s->end) {
            return ARK_EFULL;
        }
        /* At most an eighth of what is left, so that claimers still find
         * fresh indices when the range runs low. */
        uint64_t run =
            s->claims_seen || f > claim_lo(s) ? ARK__RUN : ARK__RUN_QUIET;
        uint64_t left = s->end - f;
        run = run < left / 8 ? run : left / 8 > 0 ? left / 8 : 1;
        top = f + run;
        /* Room first: once the CAS succeeds nothing may fail. */
        ark_status st = room(s, f + 1, f);
        if (st != ARK_OK) {
            return st;
        }
        if (atomic_compare_exchange_weak_explicit(
                fr, &f, top, memory_order_relaxed, memory_order_relaxed)) {
            break;
        }
    }
    materialize(s, f, f);
    s->chunk_end = top;
    ark__slots_refresh_fresh(s);
    return ARK_OK;
}

/* ---- the stock ---------------------------------------------------------- */

/* Mark the stock entries claimers took since the last reap claimed. */
static void reap(ark__slots *s) {
    uint64_t h = atomic_load_explicit(&s->shared.head, memory_order_acquire);
    const ark__handle_layout *l = &s->v->layout;
    for (uint64_t k = s->reaped; k < h; k++) {
        uint64_t e = atomic_load_explicit(&s->shared.stock[k & STOCK_MASK],
                                          memory_order_relaxed);
        uint64_t i = e & l->index_mask;
        bit_clear(s, STOCKED, i);
        bit_set(s, CLAIMED, i);
        s->nclaimed++;
    }
    s->reaped = h > s->reaped ? h : s->reaped;
}

void ark__slots_restock(ark__slots *s) {
    if (!s->claims_seen) {
        if (frontier_of(s) <= claim_lo(s)) {
            return; /* no claim ever: the ring stays as it always was */
        }
        s->claims_seen = true;
    }
    ark__slots_view *v = s->v;
    reap(s);
    if (ark__slots_nfree(v) <= ARK_REUSE_DELAY || s->draining) {
        return;
    }
    if (s->shared.stock == NULL) {
        _Atomic uint64_t *st =
            ark__alloc(&s->alloc, ARK__STOCK_CAP * sizeof *st, 0);
        if (st == NULL) {
            return; /* claims take fresh indices meanwhile */
        }
        for (uint64_t k = 0; k < ARK__STOCK_CAP; k++) {
            atomic_init(&st[k], 0);
        }
        s->shared.stock = st;
    }
    if (bits_reserve(s, v->issued) != ARK_OK) {
        return;
    }
    uint64_t t = s->stock_tail;
    uint64_t limit = s->reaped + ARK__STOCK_CAP; /* reaped <= head */
    while (t < limit && ark__slots_nfree(v) > ARK_REUSE_DELAY) {
        if (v->ring_dead != 0) {
            ark__slots_skip_dead(s); /* the head entry is live now */
        }
        uint64_t i = ark__slots_ring_pop(v);
        uint32_t gen = *ark__slots_next_gen(ark__slots_at(v, i));
        atomic_store_explicit(&s->shared.stock[t & STOCK_MASK],
                              ark__handle_make(&v->layout, i, gen),
                              memory_order_relaxed);
        bit_set(s, STOCKED, i);
        t++;
    }
    if (v->ring_dead != 0) {
        ark__slots_skip_dead(s);
    }
    s->stock_tail = t;
    atomic_store_explicit(&s->shared.tail, t, memory_order_release);
}

/* Take back every stock entry no claimer has taken, to the head of the
 * ring (they are its oldest free slots), in order. The ring has room
 * (the caller grew it). */
static void withdraw(ark__slots *s) {
    ark__slots_view *v = s->v;
    uint64_t t = s->stock_tail;
    uint64_t h = atomic_load_explicit(&s->shared.head, memory_order_acquire);
    while (h < t && !atomic_compare_exchange_weak_explicit(
                        &s->shared.head, &h, t, memory_order_acq_rel,
                        memory_order_acquire)) {
    }
    reap(s); /* [reaped, h) went to claimers; head is t now */
    for (uint64_t k = t; k-- > h;) {
        uint64_t e = atomic_load_explicit(&s->shared.stock[k & STOCK_MASK],
                                          memory_order_relaxed);
        uint64_t i = e & v->layout.index_mask;
        bit_clear(s, STOCKED, i);
        s->nclaimed--; /* reap counted it claimed: it was not */
        bit_clear(s, CLAIMED, i);
        v->head--;
        v->ring[v->head & v->ring_mask] = (uint32_t)i;
    }
}

/* ---- claim and unclaim -------------------------------------------------- */

ark_status ark__slots_claim(ark__slots *s, ark_handle *out, size_t n) {
    if (s->keyed) {
        return ARK_EINVAL; /* its elements come at their key's handle */
    }
    if (n == 0) {
        return ARK_OK;
    }
    ark__claim_shared *sh = &s->shared;
    const ark__handle_layout *l = &s->v->layout;
    if (n <= ARK__STOCK_CAP) {
        uint64_t h = atomic_load_explicit(&sh->head, memory_order_relaxed);
        for (;;) {
            uint64_t t = atomic_load_explicit(&sh->tail, memory_order_acquire);
            if (t < h || t - h < n) {
                break; /* short: fresh indices instead */
            }
            /* t > 0, so the stock was set before the tail was published. */
            _Atomic uint64_t *stock = sh->stock;
            for (size_t k = 0; k < n; k++) {
                out[k] = atomic_load_explicit(&stock[(h + k) & STOCK_MASK],
                                              memory_order_relaxed);
            }
            if (atomic_compare_exchange_weak_explicit(&sh->head, &h, h + n,
                                                      memory_order_release,
                                                      memory_order_relaxed)) {
                return ARK_OK;
            }
        }
    }
    uint64_t f = atomic_load_explicit(&sh->frontier, memory_order_relaxed);
    do {
        if (f >= s->end || s->end - f < n) {
            return ARK_EFULL;
        }
    } while (!atomic_compare_exchange_weak_explicit(
        &sh->frontier, &f, f + n, memory_order_relaxed, memory_order_relaxed));
    for (size_t k = 0; k < n; k++) {
        out[k] = ark__handle_make(l, f + k, 0);
    }
    return ARK_OK;
}

ark_status ark__slots_unclaim(ark__slots *s, ark_handle h) {
    if (s->keyed) {
        return ARK_EINVAL;
    }
    const ark__handle_layout *l = &s->v->layout;
    if (h == ARK_NULL_HANDLE) {
        return ARK_ENULL;
    }
    if ((h & l->high_mask) != l->tag_value) {
        return ARK_EFOREIGN;
    }
    uint64_t i = h & l->index_mask;
    uint32_t gen = (uint32_t)((h >> l->index_bits) & l->gen_mask);
    if (!in_range(s, i)) {
        return ARK_ESTALE;
    }
    if (i >= s->v->issued) {
        if (!ark__slots_claimed_ahead(s, i) || gen != 0 || i < s->dropped) {
            return ARK_ESTALE;
        }
        ark_status st = room(s, i + 1, i + 1);
        if (st != ARK_OK) {
            return st;
        }
        materialize(s, i + 1, i + 1);
        ark__slots_refresh_fresh(s);
    }
    if (bit_get(s, STOCKED, i)) {
        reap(s);
    }
    char *slot = ark__slots_at(s->v, i);
    if (!bit_get(s, CLAIMED, i) || *ark__slots_next_gen(slot) != gen) {
        return ARK_ESTALE;
    }
    bit_clear(s, CLAIMED, i);
    s->nclaimed--;
    ark__slots_free(s, i, slot, gen); /* the generation is used up */
    return ARK_OK;
}

/* ---- insert_at ---------------------------------------------------------- */

ark_status ark__slots_fresh_at_check(const ark__slots *s, uint64_t i,
                                     uint32_t gen) {
    if (in_range(s, i) && i >= s->chunk_end && i < frontier_of(s)) {
        /* Claimed: its generation 0 is the claim's, unless clear dropped
         * it. No gap bound: the program's own threads made the claim. */
        if (i < s->dropped) {
            return gen == 0 ? ARK_ESTALE : ARK_OK;
        }
        return gen == 0 ? ARK_OK : ARK_EEXIST;
    }
    const ark__slots_view *v = s->v;
    return i < v->cap || i - v->issued <= insert_at_gap(v) ? ARK_OK : ARK_EFULL;
}

ark_status ark__slots_claimed_at_check(const ark__slots *s, uint64_t i,
                                       uint32_t gen, uint32_t next) {
    if (bit_get(s, CLAIMED, i)) {
        return gen == next ? ARK_OK : gen < next ? ARK_ESTALE : ARK_EEXIST;
    }
    /* Stocked: still in the stock (free), or claimed and not reaped;
     * ark__slots_claimed_at tells, for a generation past next. */
    return gen < next ? ARK_ESTALE : ARK_OK;
}

ark_status ark__slots_fresh_at(ark__slots *s, uint64_t i, uint32_t gen,
                               bool *done) {
    *done = true;
    ark_status st;
    if (i < s->chunk_end || i < s->lo) {
        /* In the owner's run (the gap before it is free), or below a
         * range nothing of which is known yet (the gap is parked). */
        st = room(s, i + 1, 0);
        if (st == ARK_OK) {
            materialize(s, i, 0);
            take_index(s, i);
        }
        return st;
    }
    _Atomic uint64_t *fr = &s->shared.frontier;
    uint64_t f = atomic_load_explicit(fr, memory_order_relaxed);
    uint64_t to = i < s->end ? i + 1 : s->end; /* the frontier's new value */
    for (;;) {
        if (i < f) { /* claimed: commit it */
            if (i >= s->dropped && gen != 0) {
                return ARK_EEXIST; /* claimed after the check */
            }
            st = room(s, i + 1, i + 1);
            if (st != ARK_OK) {
                return st;
            }
            materialize(s, i + 1, i + 1);
            ark__slots_refresh_fresh(s);
            if (i < s->dropped) {
                *done = false; /* a free slot of the ring now */
                return ARK_OK;
            }
            bit_clear(s, CLAIMED, i);
            s->nclaimed--;
            return ARK_OK;
        }
        /* Take [f, to) from the frontier: claims below f are absorbed,
         * the rest of the range up to i becomes free. */
        st = room(s, i + 1, f);
        if (st != ARK_OK) {
            return st;
        }
        if (f >= to ||
            atomic_compare_exchange_weak_explicit(
                fr, &f, to, memory_order_relaxed, memory_order_relaxed)) {
            break;
        }
    }
    materialize(s, i, f);
    take_index(s, i);
    return ARK_OK;
}

ark_status ark__slots_claimed_at(ark__slots *s, uint64_t i, uint32_t gen,
                                 bool *done) {
    *done = true;
    if (!in_range(s, i)) { /* parked */
        s->parked--;
        s->outside++;
        ark__slots_refresh_fast(s);
        return ARK_OK;
    }
    if (bit_get(s, STOCKED, i)) {
        reap(s);
        if (bit_get(s, STOCKED, i)) {
            /* Still in the stock: take the stock back first, so that no
             * claimer can take the slot meanwhile. */
            uint64_t back = s->stock_tail - s->reaped;
            ark_status st =
                ark__slots_grow_ring(s, ark__slots_queued(s->v) + back);
            if (st != ARK_OK) {
                return st;
            }
            withdraw(s);
        }
    }
    char *slot = ark__slots_at(s->v, i);
    if (bit_get(s, CLAIMED, i)) {
        uint32_t next = *ark__slots_next_gen(slot);
        if (gen != next) {
            return gen < next ? ARK_ESTALE : ARK_EEXIST;
        }
        bit_clear(s, CLAIMED, i);
        s->nclaimed--;
        return ARK_OK;
    }
    *done = false; /* free in the ring */
    return ARK_OK;
}

/* ---- parking, clear ----------------------------------------------------- */

void ark__slots_park(ark__slots *s, uint64_t i, char *slot, uint32_t gen) {
    (void)i;
    if (gen >= s->v->layout.gen_max) {
        *ark__slots_next_gen(slot) = ARK__RETIRED;
        s->retired++;
    } else {
        *ark__slots_next_gen(slot) = gen + 1;
        s->parked++;
    }
    if (--s->outside == 0) {
        ark__slots_refresh_fast(s);
    }
}

void ark__slots_drop_claims(ark__slots *s) {
    uint64_t f = frontier_of(s);
    if (f > claim_lo(s) && f > s->dropped) {
        s->dropped = f; /* absorbed later, they come free */
    }
    if (s->cbits == NULL) {
        return;
    }
    reap(s);
    ark__slots_view *v = s->v;
    for (size_t w = 0; w < s->cbits_words; w += 2) {
        uint64_t bits = s->cbits[w];
        s->cbits[w] = 0;
        while (bits != 0) {
            uint64_t i = (uint64_t)(w / 2) << 6 | ark__ctz64(bits);
            bits &= bits - 1;
            char *slot = ark__slots_at(v, i);
            s->nclaimed--;
            ark__slots_free(s, i, slot, *ark__slots_next_gen(slot));
        }
    }
}

/* ---- loading ------------------------------------------------------------ */

ark_status ark__slots_claims_room(ark__slots *s, bool stock) {
    ark_status st = bits_reserve(s, s->v->issued);
    if (st == ARK_OK && stock && s->shared.stock == NULL) {
        _Atomic uint64_t *b =
            ark__alloc(&s->alloc, ARK__STOCK_CAP * sizeof *b, 0);
        if (b == NULL) {
            return ARK_ENOMEM;
        }
        for (uint64_t k = 0; k < ARK__STOCK_CAP; k++) {
            atomic_init(&b[k], 0);
        }
        s->shared.stock = b;
    }
    return st;
}

void ark__slots_set_claimed(ark__slots *s, uint64_t i) {
    bit_set(s, CLAIMED, i);
    s->nclaimed++;
}

void ark__slots_set_stocked(ark__slots *s, uint64_t i, uint32_t gen) {
    uint64_t t = s->stock_tail++;
    atomic_store_explicit(&s->shared.stock[t & STOCK_MASK],
                          ark__handle_make(&s->v->layout, i, gen),
                          memory_order_relaxed);
    atomic_store_explicit(&s->shared.tail, s->stock_tail, memory_order_release);
    bit_set(s, STOCKED, i);
}

/* ---- validation --------------------------------------------------------- */

/* Mark slot i seen for the claim state: a slot of the range, issued,
 * not live, seen nowhere else. */
static bool see_claimish(const ark__slots *s, uint64_t *seen, uint64_t i) {
    return in_range(s, i) && i < s->v->issued &&
           *ark__slots_stamp(ark__slots_at(s->v, i)) == 0 &&
           ark__slots_see(seen, i);
}

/* The stock's entries and the bits. */
static bool validate_stock_bits(const ark__slots *s, uint64_t *seen) {
    const ark__slots_view *v = s->v;
    uint64_t t = atomic_load_explicit((_Atomic uint64_t *)&s->shared.tail,
                                      memory_order_acquire);
    if (t != s->stock_tail || s->reaped > t || t - s->reaped > ARK__STOCK_CAP ||
        (t > 0 && s->shared.stock == NULL)) {
        return false;
    }
    for (uint64_t k = s->reaped; k < t; k++) {
        uint64_t e = atomic_load_explicit(&s->shared.stock[k & STOCK_MASK],
                                          memory_order_relaxed);
        uint64_t i = e & v->layout.index_mask;
        uint32_t gen =
            (uint32_t)((e >> v->layout.index_bits) & v->layout.gen_mask);
        if ((e & v->layout.high_mask) != v->layout.tag_value ||
            !see_claimish(s, seen, i) || !bit_get(s, STOCKED, i) ||
            bit_get(s, CLAIMED, i) ||
            *ark__slots_next_gen(ark__slots_at(v, i)) != gen) {
            return false;
        }
    }
    uint64_t claimed = 0, stocked = 0;
    for (size_t w = 0; w < s->cbits_words; w++) {
        for (uint64_t b = s->cbits[w]; b != 0; b &= b - 1) {
            uint64_t i = (uint64_t)(w / 2) << 6 | ark__ctz64(b);
            if (w % 2 == 1) {
                stocked++;
                continue;
            }
            claimed++;
            if (!see_claimish(s, seen, i) ||
                *ark__slots_next_gen(ark__slots_at(v, i)) > v->layout.gen_max) {
                return false;
            }
        }
    }
    return claimed == s->nclaimed && stocked == t - s->reaped;
}

bool ark__slots_validate_claims(const ark__slots *s, uint64_t *seen) {
    const ark__slots_view *v = s->v;
    uint64_t f = frontier_of(s), issued = v->issued;
    if (s->lo == 0 || s->lo >= s->end || s->end > s->limit || f < s->lo ||
        f > s->end || s->chunk_end < issued ||
        (s->chunk_end <= s->end ? s->chunk_end > f : s->chunk_end != issued) ||
        v->fresh_end > s->chunk_end || v->fresh_end > v->cap) {
        return false;
    }
    if (!validate_stock_bits(s, seen)) {
        return false;
    }
    /* Slot by slot: the rest is retired, or parked outside the range;
     * count what lies outside it live or held. */
    uint64_t retired = 0, parked = 0, outside = 0;
    for (uint64_t i = 1; i < issued; i++) {
        char *slot = ark__slots_at(v, i);
        bool out = !in_range(s, i);
        if (*ark__slots_stamp(slot) != 0) {
            outside += out;
            continue;
        }
        if ((seen[i >> 6] >> (i & 63)) & 1) {
            continue;
        }
        uint32_t next = *ark__slots_next_gen(slot);
        if (next == ARK__RETIRED) {
            retired++;
        } else if (out && next <= v->layout.gen_max) {
            parked++;
        } else {
            return false;
        }
    }
    for (size_t k = s->pending_done; k < s->npending; k++) {
        outside += !in_range(s, s->pending[k] & UINT32_MAX);
    }
    for (size_t k = s->doomed_done; k < s->ndoomed; k++) {
        outside += !in_range(s, s->doomed[k] & UINT32_MAX);
    }
    return retired == s->retired && parked == s->parked &&
           outside == s->outside;
}
