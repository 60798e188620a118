/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/core.h - private to ark: the macros and inline helpers
 * behind the public headers' hot paths (the handle layout, the slot view
 * that pool.h and table.h read, small copies). Included by ark/core.h;
 * never include it directly, and never use its names: they change
 * without notice.
 */
#ifndef ARK_INTERNAL_CORE_H
#define ARK_INTERNAL_CORE_H

#include "ark/core.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Force inlining of the tiny steps of hot loops (so that an iterator
 * lives in registers). */
#if defined(__GNUC__) || defined(__clang__)
#define ARK__ALWAYS_INLINE __attribute__((always_inline))
#else
#define ARK__ALWAYS_INLINE
#endif

/* The external definitions of the private inline helpers are not exported
 * from a shared ark: gcc and clang inline them at every optimisation level
 * (ARK__ALWAYS_INLINE). Only MSVC may leave them out of line in debug
 * builds, so there they are exported. */
#if defined(_MSC_VER) && !defined(__clang__)
#define ARK__INLINE_API ARK_API
#else
#define ARK__INLINE_API
#endif

/* Start loading the cache line at p for writing, or for reading (hints: a
 * prefetch never faults, wherever p points). */
#if defined(__GNUC__) || defined(__clang__)
#define ARK__PREFETCH_W(p) __builtin_prefetch((p), 1)
#define ARK__PREFETCH_R(p) __builtin_prefetch((p), 0)
#else
#define ARK__PREFETCH_W(p) ((void)(p))
#define ARK__PREFETCH_R(p) ((void)(p))
#endif

/* Branch hints for hot loops. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK__LIKELY(x) __builtin_expect(!!(x), 1)
#define ARK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ARK__LIKELY(x) (x)
#define ARK__UNLIKELY(x) (x)
#endif

/* A constant of type T in the public macros, written without a C-style
 * cast in C++ so that users' -Wold-style-cast stays quiet. */
#ifdef __cplusplus
#define ARK__CONST(T, x) (static_cast<T>(x))
#else
#define ARK__CONST(T, x) ((T)(x))
#endif

/* The decoded handle layout of a handle-issuing container, read by the
 * inline lookups of pool.h and table.h. */
typedef struct ark__handle_layout {
    uint64_t index_mask; /* (1 << index_bits) - 1 */
    uint64_t high_mask;  /* every bit above index and generation */
    uint64_t tag_value;  /* tag << (index_bits + gen_bits) */
    uint64_t tag_high;   /* tag << gen_bits: tag_value >> index_bits */
    uint32_t gen_mask;   /* (1 << gen_bits) - 1 */
    uint32_t gen_max;    /* last generation a slot may carry */
    uint8_t index_bits;
    uint8_t gen_bits;
    uint8_t tag_bits;
} ark__handle_layout;

/*
 * The part of a pool or table that its inline lookups read (the first
 * member of both structs). Slot i of the container is
 *   flat + i * stride                       for i < nflat,
 *   pages[k] + (j & page_mask) * stride     for nflat <= i < cap, where
 *                                           j = i - nflat, k = j >> page_shift.
 * Every slot below cap starts with a uint32 stamp: generation + 1 while the
 * slot is live, 0 otherwise. Slot 0 is never live and always readable,
 * even while cap is 0 (then flat points at a static zero slot and nflat is
 * 1). data_off is the offset of what the slot carries (a pool's element, a
 * table's row number).
 * The rest is the handle engine's free-slot queue and counts, here so
 * that the inline insert and remove of a
 * pool can run in the caller's loop: ring (ring_cap entries, a power of
 * two >= issued - 1, ring_mask = ring_cap - 1) holds the free slots
 * oldest first at the running positions [head, tail) (entry k at
 * ring[k & ring_mask]; tail - head <= ring_cap), ring_dead of them dead
 * entries (see insert_at in src/engine/slots.h); slots [0, issued) were
 * handed out once; a fresh take may hand out issued while it is below
 * fresh_end, the least of cap, the ring's room and the end of the indices
 * the owning thread has taken from the claim frontier (src/engine/slots.h,
 * "Claims"); a remove takes the inline path for a live stamp up to
 * fast_stamp_max (0 while a hook is set, dead entries are queued or an
 * element outside the index range is live).
 * There are no counts here: the engine derives the free count from tail,
 * head and ring_dead and the live count from that and issued
 * (src/engine/slots.h), so an inline remove updates one counter (tail) and
 * an inline insert one (head or issued).
 */
typedef struct ark__slots_view {
    ark__handle_layout layout;
    char *flat;
    char *const *pages;
    uint64_t nflat;
    uint64_t cap;
    size_t stride;
    size_t data_off;
    uint64_t page_mask;
    unsigned page_shift;
    uint32_t fast_stamp_max;
    uint32_t *ring;
    uint64_t ring_cap, ring_mask, head, tail, ring_dead;
    uint64_t issued;
    /* A key space's count of changes a query must notice (an entity or
     * one of its elements removed or marked, a tag changed): the
     * iterators of ark/entity.h look again when it moves. */
    uint64_t epoch;
    uint64_t fresh_end;
} ark__slots_view;

/*
 * Return the stamp a live slot must hold for handle h to be valid. The
 * handle's bits above the index are xored with the expected tag, which
 * zeroes a correct tag, and 1 is added in 64 bits: the result equals a
 * stored uint32 stamp only if the tag is exact, no stray bit is set and the
 * generation is in range; it is never 0, so a free slot never matches.
 */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t
ark__handle_stamp(const ark__handle_layout *l, ark_handle h) {
    return ((h >> l->index_bits) ^ l->tag_high) + 1;
}

/* Count trailing zeros of a non-zero 64-bit word. */
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
ARK__ALWAYS_INLINE ARK__INLINE unsigned ark__ctz64(uint64_t x) {
    unsigned long i;
    _BitScanForward64(&i, x);
    return (unsigned)i;
}
#elif defined(__clang__) && defined(__x86_64__) && !defined(__BMI__)
/* Without BMI the count is a bsf, whose result register is also one of
 * its inputs (bsf leaves it as it was when x is 0). Unless that register
 * is zeroed first, the pool walk's next count can wait for the last slot
 * address computed in the same register (docs/design-notes.md, "Pool
 * iteration"). Written out: a zeroing xor, then rep bsf (tzcnt where the
 * CPU has it). */
ARK__ALWAYS_INLINE ARK__INLINE unsigned ark__ctz64(uint64_t x) {
    uint64_t r;
    __asm__("xorl %k0, %k0\n\trep bsfq %1, %0" : "=&r"(r) : "r"(x) : "cc");
    return (unsigned)r;
}
#else
ARK__ALWAYS_INLINE ARK__INLINE unsigned ark__ctz64(uint64_t x) {
    return (unsigned)__builtin_ctzll(x);
}
#endif

/* The slot index of a handle. */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t
ark__handle_index(const ark__handle_layout *l, ark_handle h) {
    return h & l->index_mask;
}

/* Compose a handle from an index and a generation. */
ARK__ALWAYS_INLINE ARK__INLINE ark_handle
ark__handle_make(const ark__handle_layout *l, uint64_t index, uint32_t gen) {
    return index | ((uint64_t)gen << l->index_bits) | l->tag_value;
}

/* The address of slot i of v past the flat range (rare). */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__slots_paged(const ark__slots_view *v,
                                                      uint64_t i) {
    uint64_t j = i - v->nflat;
    return v->pages[j >> v->page_shift] +
           (size_t)(j & v->page_mask) * v->stride;
}

/* The address of slot i of v (i < cap, or i == 0). */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__slots_at(const ark__slots_view *v,
                                                   uint64_t i) {
    if (ARK__LIKELY(i < v->nflat)) {
        return v->flat + (size_t)i * v->stride;
    }
    return ark__slots_paged(v, i);
}

/* The slot handle h names if it is live, else NULL. Reads nothing outside
 * the container whatever h is: an index past the storage reads slot 0
 * (stamp 0 forever, so it never matches). The common case, an index in
 * the reserved range, is one compare. The base, stride and data offset
 * are read past the bound check, on purpose (docs/design-notes.md, "Pool
 * lookups"). */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__slots_live(const ark__slots_view *v,
                                                     ark_handle h) {
    uint64_t expect = ark__handle_stamp(&v->layout, h);
    uint64_t i = h & v->layout.index_mask;
    char *slot;
    if (ARK__LIKELY(i < v->nflat)) {
        slot = v->flat + (size_t)i * v->stride;
    } else {
        slot = ark__slots_at(v, i < v->cap ? i : 0);
    }
    return *(const uint32_t *)(const void *)slot == expect ? slot : NULL;
}

/* The handle of live slot i of v. */
ARK__ALWAYS_INLINE ARK__INLINE ark_handle
ark__slots_handle(const ark__slots_view *v, uint64_t i, const char *slot) {
    return ark__handle_make(&v->layout, i,
                            *(const uint32_t *)(const void *)slot - 1);
}

/* The largest element ark__copy_upto64 takes (and the inline insert of a
 * pool). */
#define ARK__INLINE_ELEM_MAX 64

/* Copy n <= 64 bytes with at most four fixed-size moves that may
 * overlap (the compiler inlines each; no call, so a hot path using it needs no
 * stack frame). The branches depend on n alone, which is the same on
 * every call for one container. Inlined into a caller whose element GCC
 * can see (a single-file build, LTO), the moves for larger sizes read
 * past it on paths n rules out, which -Wstringop-overread cannot tell. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
ARK__ALWAYS_INLINE ARK__INLINE void ark__copy_upto64(void *dst, const void *src,
                                                     size_t n) {
    char *d = (char *)dst;
    const char *s = (const char *)src;
    if (n >= 16) {
        if (n <= 32) {
            memcpy(d, s, 16);
            memcpy(d + n - 16, s + n - 16, 16);
        } else {
            memcpy(d, s, 32);
            memcpy(d + n - 32, s + n - 32, 32);
        }
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

/* Copy the 4-byte word at src to dst through a register; the
 * empty asm keeps the compiler from merging neighbouring words back into
 * wider moves (see ark__copy_in). */
ARK__ALWAYS_INLINE ARK__INLINE void ark__copy_word(char *dst, const char *src) {
    uint32_t w;
    memcpy(&w, src, 4);
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+r"(w));
#endif
    memcpy(dst, &w, 4);
}

/* Copy 8, 16 or 32 bytes as 2, 4 or 8 words, straight-line. */
ARK__ALWAYS_INLINE ARK__INLINE void ark__copy_words8(char *dst,
                                                     const char *src) {
    ark__copy_word(dst, src);
    ark__copy_word(dst + 4, src + 4);
}

ARK__ALWAYS_INLINE ARK__INLINE void ark__copy_words16(char *dst,
                                                      const char *src) {
    ark__copy_words8(dst, src);
    ark__copy_words8(dst + 8, src + 8);
}

ARK__ALWAYS_INLINE ARK__INLINE void ark__copy_words32(char *dst,
                                                      const char *src) {
    ark__copy_words16(dst, src);
    ark__copy_words16(dst + 16, src + 16);
}

/* Copy a caller's element of n <= 64 bytes into a container. Callers
 * usually build the element on their stack just before the call, field by
 * field; a load wider than those stores cannot take its bytes from them
 * (store-to-load forwarding) and waits for them to reach the cache. So an
 * element made of 4-byte words is copied a word at a time (a 4-byte load
 * lies inside any store of a 4-byte or wider field). The words are copied
 * as two runs of 1, 2, 4 or 8 words that may overlap, one from each end
 * (as ark__copy_upto64 does with wide moves): straight-line code after at
 * most four branches on n (docs/design-notes.md, "Pool insert"). */
ARK__ALWAYS_INLINE ARK__INLINE void ark__copy_in(void *dst, const void *src,
                                                 size_t n) {
    if ((n & 3) != 0) {
        ark__copy_upto64(dst, src, n);
        return;
    }
    char *d = (char *)dst;
    const char *s = (const char *)src;
    if (n <= 8) {
        ark__copy_word(d, s);
        ark__copy_word(d + n - 4, s + n - 4);
    } else if (n <= 16) {
        ark__copy_words8(d, s);
        ark__copy_words8(d + n - 8, s + n - 8);
    } else if (n <= 32) {
        ark__copy_words16(d, s);
        ark__copy_words16(d + n - 16, s + n - 16);
    } else {
        ark__copy_words32(d, s);
        ark__copy_words32(d + n - 32, s + n - 32);
    }
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif

/* The engine's inline insert and remove (the common cases; the rest is
 * out of line in src/engine/slots.c). They touch only the view, so a
 * container's insert and remove can be inline functions of its public
 * header and run in the caller's loop: a removal loop keeps more slot
 * misses in flight when no call separates them. */

/* Queue free slot i (its stamp 0, its next generation stored) at the tail
 * of the FIFO ring, which has room for it. One running position is loaded
 * and stored (docs/design-notes.md, "Pool removal"). */
ARK__ALWAYS_INLINE ARK__INLINE void ark__slots_enqueue(ark__slots_view *v,
                                                       uint64_t i) {
    uint64_t tail = v->tail;
    v->ring[tail & v->ring_mask] = (uint32_t)i;
    v->tail = tail + 1;
}

/* The slot h names, with its index in *index, if it is live and
 * its removal may take the inline path (stamp <= fast_stamp_max: no hook,
 * no dead ring entries, generations left); else NULL. */
ARK__ALWAYS_INLINE ARK__INLINE char *
ark__slots_removable(const ark__slots_view *v, ark_handle h, uint64_t *index) {
    char *slot = ark__slots_live(v, h);
    if (slot == NULL ||
        *(const uint32_t *)(const void *)slot > v->fast_stamp_max) {
        return NULL;
    }
    *index = h & v->layout.index_mask;
    return slot;
}

/* Mark a live slot free: its stamp (generation + 1) becomes its next
 * generation, its stamp 0. */
ARK__ALWAYS_INLINE ARK__INLINE void ark__slots_unstamp(char *slot) {
    uint32_t *w = (uint32_t *)(void *)slot;
    uint32_t stamp = w[0];
    w[0] = 0;
    w[1] = stamp;
}

/* Finish the inline removal of slot i, which the container has unlinked
 * and dropped: free it (ark__slots_unstamp) and queue it. */
ARK__ALWAYS_INLINE ARK__INLINE void ark__slots_release(ark__slots_view *v,
                                                       uint64_t i, char *slot) {
    ark__slots_unstamp(slot);
    ark__slots_enqueue(v, i);
}

/* Stamp slot p (index i) live with generation gen and return it,
 * its index in *index: the end of both inline takes. */
ARK__ALWAYS_INLINE ARK__INLINE char *
ark__slots_taken(char *p, uint64_t i, uint32_t gen, uint64_t *index) {
    *(uint32_t *)(void *)p = gen + 1;
    *index = i;
    return p;
}

/* The number of ring entries queued, dead ones included (the
 * free count while the ring holds none). */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t
ark__slots_queued(const ark__slots_view *v) {
    return v->tail - v->head;
}

/* The inline take of a queued slot, for at least ARK_REUSE_DELAY
 * queued: the oldest one, stamped (so counted), or NULL, having changed
 * nothing, while the ring holds dead entries (insert_at in src/engine/slots.h).
 */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__slots_take_reused(ark__slots_view *v,
                                                            uint64_t *index) {
    if (v->ring_dead != 0) {
        return NULL;
    }
    const uint32_t *ring = v->ring;
    uint64_t mask = v->ring_mask;
    uint64_t head = v->head;
    uint64_t i = ring[head & mask];
    head++;
    v->head = head;
    /* FIFO reuse hands out the coldest free slot: start loading the
     * one 8 inserts ahead (63 or more are still queued) so that its
     * miss overlaps. */
    ARK__PREFETCH_W(ark__slots_at(v, ring[(head + 8) & mask]));
    char *p = ark__slots_at(v, i);
    return ark__slots_taken(p, i, ((const uint32_t *)(const void *)p)[1],
                            index);
}

/* The inline take of a slot never issued, stamped, or NULL,
 * having changed nothing, when it has no storage or ring room yet or the
 * owning thread's run of fresh indices is used up. */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__slots_take_fresh(ark__slots_view *v,
                                                           uint64_t *index) {
    uint64_t i = v->issued;
    /* One compare: fresh_end is kept at min(cap, ring room, end of the
     * owner's run), and cap never exceeds the index space. */
    if (i >= v->fresh_end) {
        return NULL;
    }
    v->issued = i + 1;
    return ark__slots_taken(ark__slots_at(v, i), i, 0, index);
}

/* The slot an insert takes with no call: the oldest free slot
 * once ARK_REUSE_DELAY are queued, or a fresh slot that has storage and
 * ring room. Returns it stamped (so counted), with its index in *index, or
 * NULL, having changed nothing, when the engine's general take must run
 * (growth, the end of the index space, dead ring entries). Linking it is
 * the container's business. */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__slots_take_fast(ark__slots_view *v,
                                                          uint64_t *index) {
    if (ark__slots_queued(v) >= ARK_REUSE_DELAY) {
        return ark__slots_take_reused(v, index);
    }
    return ark__slots_take_fresh(v, index);
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_CORE_H */
