/* SPDX-License-Identifier: MIT */
/*
 * core_internal.h - helpers shared by the ark modules; never installed.
 */
#ifndef ARK_CORE_INTERNAL_H
#define ARK_CORE_INTERNAL_H

#include "ark/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Keep a rarely taken path out of its caller so the common path stays
 * small enough to inline. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define ARK_NOINLINE __declspec(noinline)
#else
#define ARK_NOINLINE
#endif

/* Branch hint for a rare case on a hot path. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ARK_UNLIKELY(x) (x)
#endif

/* Start loading the cache line at p for writing, or for reading (hints). */
#if defined(__GNUC__) || defined(__clang__)
#define ARK_PREFETCH_WRITE(p) __builtin_prefetch((p), 1)
#define ARK_PREFETCH_READ(p) __builtin_prefetch((p), 0)
#else
#define ARK_PREFETCH_WRITE(p) ((void)(p))
#define ARK_PREFETCH_READ(p) ((void)(p))
#endif

/* Copy *a into *out, or the C library allocator when a is NULL. Returns
 * ARK_EINVAL when a is given without both functions. */
ark_status ark__allocator_init(ark_allocator *out, const ark_allocator *a);

/* Allocate through a; align 0 means alignof(max_align_t). */
static inline void *ark__alloc(const ark_allocator *a, size_t size,
                               size_t align) {
    if (align == 0) {
        align = _Alignof(max_align_t);
    }
    return a->alloc(a->ctx, size, align);
}

/* Free through a; ptr may be NULL. */
static inline void ark__free(const ark_allocator *a, void *ptr, size_t size) {
    if (ptr != NULL) {
        a->free(a->ctx, ptr, size);
    }
}

/* Largest element ark__copy_upto64 and ark__zero_upto64 take. */
#define ARK__INLINE_ELEM_MAX 64

/* Copy n <= 64 bytes with at most four fixed-size moves that may overlap
 * (the compiler inlines each; no call, so a hot path using it needs no
 * stack frame). The branches depend on n alone, which is the same on
 * every call for one container. Inlined into a caller whose element GCC
 * can see (a single-file build, LTO), the moves for larger sizes read
 * past it on paths n rules out, which -Wstringop-overread cannot tell. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
static inline void ark__copy_upto64(void *dst, const void *src, size_t n) {
    char *d = dst;
    const char *s = src;
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
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif

/* Copy a caller's element of n <= 64 bytes into a container. Callers
 * usually build the element on their stack just before the call, field by
 * field; a load wider than those stores cannot take its bytes from them
 * (store-to-load forwarding) and waits, about 15 cycles, for them to reach
 * the cache. So an element made of 4-byte words is copied a word at a
 * time (a 4-byte load lies inside any store of a 4-byte or wider field);
 * the empty asm keeps the compiler from merging the words back into wide
 * moves or a memcpy call. Same process, 100K inserts into a warm pool of
 * 16-byte elements written by the caller: 9.5 -> 7.6 ns. */
static inline void ark__copy_in(void *dst, const void *src, size_t n) {
    if ((n & 3) != 0) {
        ark__copy_upto64(dst, src, n);
        return;
    }
    char *d = dst;
    const char *s = src;
    for (size_t k = 0; k < n; k += 4) {
        uint32_t w;
        memcpy(&w, s + k, 4);
#if defined(__GNUC__) || defined(__clang__)
        __asm__("" : "+r"(w));
#endif
        memcpy(d + k, &w, 4);
    }
}

/* Zero n <= 64 bytes the same way. */
static inline void ark__zero_upto64(void *dst, size_t n) {
    static const char zeros[ARK__INLINE_ELEM_MAX];
    ark__copy_upto64(dst, zeros, n);
}

/* Copy an element: inline moves up to 64 bytes (a libc call per element
 * would dominate an insert, a save or a load), memcpy past that. */
static inline void ark__copy_small(void *dst, const void *src, size_t n) {
    if (n <= ARK__INLINE_ELEM_MAX) {
        ark__copy_upto64(dst, src, n);
    } else {
        memcpy(dst, src, n);
    }
}

/* The capacity an array of cap elements of esz bytes doubles to (from at
 * least 64) so that it holds want, in *ncap, and its bytes in *bytes;
 * false when that overflows. */
static inline bool ark__grow_cap(uint64_t cap, uint64_t want, size_t esz,
                                 uint64_t *ncap, size_t *bytes) {
    uint64_t n = cap < 64 ? 64 : cap;
    while (n < want) {
        if (n > UINT64_MAX / 2) {
            return false;
        }
        n *= 2;
    }
    if (n > SIZE_MAX / esz) {
        return false;
    }
    *ncap = n;
    *bytes = (size_t)n * esz;
    return true;
}

/* Return arr (*cap elements of esz bytes) grown by ark__grow_cap to hold
 * want, its first used elements kept, *cap updated; arr itself when it
 * holds want already; NULL (arr and *cap untouched) on failure. */
void *ark__grow_array(const ark_allocator *a, void *arr, size_t *cap,
                      size_t used, uint64_t want, size_t esz);

/* Round n up to a multiple of a (a power of two). */
static inline size_t ark__round_up(size_t n, size_t a) {
    return (n + a - 1) & ~(a - 1);
}

/* Return a*b in *out, or false on overflow of size_t. */
static inline int ark__mul_overflows(size_t a, size_t b, size_t *out) {
    if (b != 0 && a > SIZE_MAX / b) {
        return 1;
    }
    *out = a * b;
    return 0;
}

/* Return 64 bits from the OS's random source (getrandom, getentropy,
 * BCryptGenRandom). If the OS gives none, return a value mixed from salt
 * (pass the address of the object being seeded), addresses and clocks:
 * distinct, not secret. *from_os (may be NULL) tells which. */
uint64_t ark__entropy64(const void *salt, bool *from_os);

/* Return x through the splitmix64 finaliser (a bijection on 64 bits). */
uint64_t ark__mix64(uint64_t x);

#endif /* ARK_CORE_INTERNAL_H */
