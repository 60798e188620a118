/* SPDX-License-Identifier: MIT */
/*
 * base.h - what every ark module shares inside the library: allocation
 * through an ark_allocator, growth arithmetic, small copies, entropy;
 * never installed.
 */
#ifndef ARK_BASE_BASE_H
#define ARK_BASE_BASE_H

#include "ark/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Keep a rarely taken path out of its caller so the common path stays
 * small enough to inline. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK__NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define ARK__NOINLINE __declspec(noinline)
#else
#define ARK__NOINLINE
#endif

/* ARK__LIKELY, ARK__UNLIKELY, ARK__PREFETCH_R and ARK__PREFETCH_W:
 * ark/internal/core.h, which the inline paths of the public headers use
 * too. */

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

/* Allocate a block of at least size bytes that will be read at random
 * (a hash table), as ark__alloc does; from the default allocator, a block
 * of at least 4 MiB is aligned to the huge page size and asks for huge
 * pages (see the definition). A caller's allocator is used as is. */
void *ark__alloc_table(const ark_allocator *a, size_t size, size_t align);

/* Free through a; ptr may be NULL. */
static inline void ark__free(const ark_allocator *a, void *ptr, size_t size) {
    if (ptr != NULL) {
        a->free(a->ctx, ptr, size);
    }
}

/* ARK__INLINE_ELEM_MAX, ark__copy_upto64 and ark__copy_in: core.h. */

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

/* qsort's comparison of two uint32_t, ascending. */
int ark__cmp_u32(const void *a, const void *b);

#endif /* ARK_BASE_BASE_H */
