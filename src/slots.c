/*
 * slots.c - the handle engine's slow paths: layout validation, growth,
 * the removal state machine with hooks, sealing and validation. The rules
 * are described in slots.h.
 */
#include "slots.h"

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
    s->issued = 1; /* slot 0 exists from the first growth, never issued */
    seal_init(s, cfg->seal_key);
    return ARK_OK;
}

void ark__slots_fini(ark__slots *s) {
    ark__free(&s->alloc, s->ring, (size_t)s->ring_cap * sizeof *s->ring);
    ark__free(&s->alloc, s->pending, s->pending_cap * sizeof *s->pending);
    ark__free(&s->alloc, s->doomed, s->doomed_cap * sizeof *s->doomed);
}

/* ---- growth ------------------------------------------------------------ */

/* Give the ring room for want slots (a power of two), unrolled to start
 * at 0. Nothing changes on failure. */
static ark_status grow_ring(ark__slots *s, uint64_t want) {
    if (want <= s->ring_cap) {
        return ARK_OK;
    }
    uint64_t ncap = s->ring_cap < 64 ? 64 : s->ring_cap;
    while (ncap < want) {
        ncap *= 2;
    }
    size_t bytes;
    if (ncap > SIZE_MAX ||
        ark__mul_overflows((size_t)ncap, sizeof *s->ring, &bytes)) {
        return ARK_ENOMEM;
    }
    uint32_t *ring = ark__alloc(&s->alloc, bytes, 0);
    if (ring == NULL) {
        return ARK_ENOMEM;
    }
    for (uint64_t k = 0; k < s->nfree; k++) {
        ring[k] = s->ring[(s->head + k) & (s->ring_cap - 1)];
    }
    ark__free(&s->alloc, s->ring, (size_t)s->ring_cap * sizeof *ring);
    s->ring = ring;
    s->ring_cap = ncap;
    s->head = 0;
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
    if (s->issued >= s->limit) {
        return ARK_EFULL;
    }
    return grow_to(s, s->issued + 1);
}

ark_status ark__slots_reserve(ark__slots *s, size_t n) {
    if (n <= s->count) {
        return ARK_OK;
    }
    /* Inserts take fresh slots until ARK_REUSE_DELAY are queued, so room
     * for need fresh slots covers any order of inserts. */
    uint64_t need = (uint64_t)n - s->count;
    if (need > s->limit - s->issued + s->nfree) {
        return ARK_EFULL;
    }
    uint64_t want = s->issued + need;
    return grow_to(s, want < s->limit ? want : s->limit);
}

/* ---- removal ----------------------------------------------------------- */

/* Append index | gen << 32 to a list, growing it by doubling. */
static ark_status list_push(ark__slots *s, uint64_t **list, size_t *len,
                            size_t *cap, uint64_t entry) {
    if (*len == *cap) {
        size_t ncap = *cap < 16 ? 16 : *cap * 2;
        size_t bytes;
        if (ncap < *cap || ark__mul_overflows(ncap, sizeof **list, &bytes)) {
            return ARK_ENOMEM;
        }
        uint64_t *n = ark__alloc(&s->alloc, bytes, 0);
        if (n == NULL) {
            return ARK_ENOMEM;
        }
        if (*len > 0) {
            memcpy(n, *list, *len * sizeof *n);
        }
        ark__free(&s->alloc, *list, *cap * sizeof *n);
        *list = n;
        *cap = ncap;
    }
    (*list)[(*len)++] = entry;
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
    s->count--;
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

ark_status ark__slots_remove_hooked(ark__slots *s, uint64_t i, char *slot) {
    if (i == s->dying) {
        return ARK_OK; /* its removal is running: one on_remove only */
    }
    if (s->draining) {
        return mark(s, true, i, slot);
    }
    uint32_t gen = *ark__stamp(slot) - 1;
    s->draining = true;
    s->count--;
    s->ops->unlink(s->owner, i);
    finish(s, i, gen, true);
    drain_doomed(s);
    s->draining = false;
    return ARK_OK;
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
    while (s->count > 0 || s->npending > 0) {
        uint64_t i = 0;
        while ((i = s->ops->next_live(s->owner, i + 1)) != 0) {
            char *slot = ark__slot_at(s->v, i);
            uint32_t gen = *ark__stamp(slot) - 1;
            s->count--;
            s->ops->unlink(s->owner, i);
            finish(s, i, gen, hook);
            drain_doomed(s);
        }
        drain_pending(s, hook);
    }
    s->draining = false;
}

ark_status ark__slots_classify(const ark__slots *s, ark_handle h) {
    const ark_handle_layout *l = &s->v->layout;
    if (h == ARK_NULL_HANDLE) {
        return ARK_ENULL;
    }
    if ((h & l->high_mask) != l->tag_value) {
        return ARK_EFOREIGN;
    }
    uint64_t i = h & l->index_mask;
    return i == 0 || i >= s->issued ? ARK_ERANGE : ARK_ESTALE;
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

/* Every listed slot is in range, not live, and listed once. */
static bool validate_lists(const ark__slots *s, uint64_t *seen) {
    size_t npend = s->npending - s->pending_done;
    size_t ndoom = s->ndoomed - s->doomed_done;
    uint64_t total = s->nfree + npend + ndoom;
    for (uint64_t k = 0; k < total; k++) {
        uint64_t i;
        if (k < s->nfree) {
            i = s->ring[(s->head + k) & (s->ring_cap - 1)];
        } else if (k < s->nfree + npend) {
            i = s->pending[s->pending_done + (k - s->nfree)] & UINT32_MAX;
        } else {
            i = s->doomed[s->doomed_done + (k - s->nfree - npend)] & UINT32_MAX;
        }
        if (i == 0 || i >= s->issued || !validate_see(seen, i)) {
            return false;
        }
        char *slot = ark__slot_at(s->v, i);
        if (*ark__stamp(slot) != 0 ||
            (k < s->nfree && (*ark__next_gen(slot) == 0 ||
                              *ark__next_gen(slot) > s->v->layout.gen_max))) {
            return false;
        }
    }
    return true;
}

ark_status ark__slots_validate(const ark__slots *s,
                               bool (*linked)(const void *c, uint64_t i)) {
    const ark__slot_view *v = s->v;
    if (v->cap == 0) { /* nothing stored yet: slot 0 only, never issued */
        return s->issued == 1 && s->count == 0 && s->nfree == 0 &&
                       s->npending == 0 && s->ndoomed == 0
                   ? ARK_OK
                   : ARK_ECORRUPT;
    }
    if (s->issued > v->cap || v->cap > s->limit ||
        s->ring_cap + 1 < s->issued || s->nfree > s->ring_cap ||
        s->doomed_done > s->ndoomed || s->pending_done > s->npending ||
        (v->cap > 0 && *ark__stamp(ark__slot_at(v, 0)) != 0)) {
        return ARK_ECORRUPT;
    }
    uint64_t live = 0;
    for (uint64_t i = 1; i < s->issued; i++) {
        uint32_t stamp = *ark__stamp(ark__slot_at(v, i));
        bool is_live = stamp != 0 && i != s->dying;
        if ((stamp != 0 && stamp - 1 > v->layout.gen_max) ||
            (linked != NULL && linked(s->owner, i) != is_live)) {
            return ARK_ECORRUPT;
        }
        live += is_live;
    }
    for (uint64_t i = s->issued; i < v->cap; i++) {
        if (*ark__stamp(ark__slot_at(v, i)) != 0) {
            return ARK_ECORRUPT;
        }
    }
    if (live != s->count) {
        return ARK_ECORRUPT;
    }
    /* Scratch for a diagnostic: plain calloc, so tests that count the
     * container's allocations are not disturbed. */
    uint64_t *seen = calloc((size_t)((s->issued + 63) >> 6), sizeof *seen);
    if (seen == NULL) {
        return ARK_ENOMEM;
    }
    bool ok = validate_lists(s, seen);
    free(seen);
    size_t marked =
        (s->npending - s->pending_done) + (s->ndoomed - s->doomed_done);
    if (!ok || live + s->nfree + marked + s->retired + (s->dying != 0) + 1 !=
                   s->issued) {
        return ARK_ECORRUPT;
    }
    return ARK_OK;
}
