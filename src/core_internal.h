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

/* Copy an element; the common sizes get fixed-size copies the compiler
 * inlines (a libc call per element would dominate an insert, a save or a
 * load). */
static inline void ark__copy_small(void *dst, const void *src, size_t n) {
    switch (n) {
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    case 12:
        memcpy(dst, src, 12);
        break;
    case 16:
        memcpy(dst, src, 16);
        break;
    case 24:
        memcpy(dst, src, 24);
        break;
    case 32:
        memcpy(dst, src, 32);
        break;
    default:
        memcpy(dst, src, n);
        break;
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
