/* SPDX-License-Identifier: MIT */
/*
 * ark/core.h - the vocabulary every ark module shares.
 *
 * Handles, status codes and the allocator interface. A handle is an opaque
 * 64-bit value; 0 (ARK_NULL_HANDLE) is never issued. Every fallible call
 * returns an ark_status; a failed call leaves its container unchanged.
 *
 * Handle layout (pool and table): from the least significant bit up,
 * index_bits of slot index, gen_bits of generation, tag_bits of container
 * tag; bits above those are zero in every issued handle. A handle is valid
 * only for the exact slot, generation and tag it was issued with.
 */
#ifndef ARK_CORE_H
#define ARK_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ARK_SHARED_BUILD)
#if defined(_WIN32)
#define ARK_API __declspec(dllexport)
#else
#define ARK_API __attribute__((visibility("default")))
#endif
#elif defined(ARK_SHARED) && defined(_WIN32)
#define ARK_API __declspec(dllimport)
#else
#define ARK_API
#endif

/* Private: force inlining of the tiny iterator steps of hot loops (so the
 * iterator lives in registers). */
#if defined(__GNUC__) || defined(__clang__)
#define ARK_ALWAYS_INLINE __attribute__((always_inline))
#else
#define ARK_ALWAYS_INLINE
#endif

/* Private: the external definitions of the private inline helpers below
 * are not exported from a shared ark: gcc and clang inline them at every
 * optimisation level (ARK_ALWAYS_INLINE). Only MSVC may leave them out of
 * line in debug builds, so there they are exported. */
#if defined(_MSC_VER) && !defined(__clang__)
#define ARK_INLINE_API ARK_API
#else
#define ARK_INLINE_API
#endif

/* Private: how the public headers define their inline functions. In C:
 * C11 inline, with the one external definition in the library. In C++ an
 * inline function is emitted as a COMDAT copy wherever it is not inlined,
 * and some linkers (MinGW's) reject such a copy next to the library's
 * strong definition: C++ sees them as static inline instead. */
#ifdef __cplusplus
#define ARK_INLINE static inline
#else
#define ARK_INLINE inline
#endif

/* Private: branch hints for hot loops. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define ARK_LIKELY(x) (x)
#endif

/* An opaque reference to an element of a handle-issuing container. */
typedef uint64_t ark_handle;

/* The handle no container ever issues. */
#define ARK_NULL_HANDLE ((ark_handle)0)

/* Pools and tables reuse a freed slot (oldest first) only once this many
 * are free, or when the index space is used up. A handle removed a moment
 * ago is thus not revalidated by the next insert, and generations are
 * spent evenly over all slots, delaying retirement. */
#define ARK_REUSE_DELAY 64

/* X-macro: one table generates the enum and the strings. */
#define ARK_STATUS_MAP(X)                                                      \
    X(ARK_OK, "ok")                                                            \
    X(ARK_ENOMEM, "out of memory; the container is unchanged")                 \
    X(ARK_EFULL, "index space exhausted")                                      \
    X(ARK_ESTALE, "stale handle: the slot is free or holds a newer element")   \
    X(ARK_ERANGE, "index or position out of range")                            \
    X(ARK_ENULL, "null handle")                                                \
    X(ARK_EFOREIGN, "handle belongs to another container")                     \
    X(ARK_EINVAL, "invalid argument")                                          \
    X(ARK_EEXIST, "already present")                                           \
    X(ARK_ENOTFOUND, "not found")                                              \
    X(ARK_ECORRUPT, "rejected input data")

/* The result of every fallible ark call. ARK_OK is 0. */
typedef enum ark_status {
#define ARK_STATUS_ENUM(name, text) name,
    ARK_STATUS_MAP(ARK_STATUS_ENUM)
#undef ARK_STATUS_ENUM
} ark_status;

/*
 * Return a static, human-readable description of a status.
 * Unknown values give "unknown status". Never returns NULL.
 */
ARK_API const char *ark_strerror(ark_status s);

/*
 * A memory source. Every allocation of a container goes through the
 * allocator it was created with (the struct is copied at create time;
 * NULL means the C library).
 *
 * alloc: return size bytes aligned to align (a power of two), or NULL.
 * free:  release ptr, which alloc returned for exactly size bytes.
 * ctx:   passed back to both.
 */
typedef struct ark_allocator {
    void *(*alloc)(void *ctx, size_t size, size_t align);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} ark_allocator;

/*
 * A byte sink for snapshots (ark_pool_save and friends). write must take
 * all n bytes or return a non-OK status, which the save returns as is.
 * ctx is passed back. Files, sockets and memory buffers all fit.
 */
typedef struct ark_writer {
    ark_status (*write)(void *ctx, const void *buf, size_t n);
    void *ctx;
} ark_writer;

/*
 * A byte source for snapshots (ark_pool_load and friends). read must fill
 * exactly n bytes or return a non-OK status; at the end of the input it
 * returns ARK_ECORRUPT. A load reads exactly the bytes of one snapshot,
 * never more, so a stream may carry other data after it.
 */
typedef struct ark_reader {
    ark_status (*read)(void *ctx, void *buf, size_t n);
    void *ctx;
} ark_reader;

/*
 * Private: the decoded handle layout of a handle-issuing container. Its
 * fields are read by the inline lookups of pool.h and table.h; do not use
 * them directly.
 */
typedef struct ark_handle_layout {
    uint64_t index_mask; /* (1 << index_bits) - 1 */
    uint64_t high_mask;  /* every bit above index and generation */
    uint64_t tag_value;  /* tag << (index_bits + gen_bits) */
    uint64_t tag_high;   /* tag << gen_bits: tag_value >> index_bits */
    uint32_t gen_mask;   /* (1 << gen_bits) - 1 */
    uint32_t gen_max;    /* last generation a slot may carry */
    uint8_t index_bits;
    uint8_t gen_bits;
    uint8_t tag_bits;
} ark_handle_layout;

/*
 * Private: the part of a pool or table that its inline lookups read (the
 * first member of both structs). Slot i of the container is
 *   flat + i * stride                       for i < nflat,
 *   pages[k] + (j & page_mask) * stride     for nflat <= i < cap, where
 *                                           j = i - nflat, k = j >> page_shift.
 * Every slot below cap starts with a uint32 stamp: generation + 1 while the
 * slot is live, 0 otherwise. Slot 0 is never live and always readable,
 * even while cap is 0 (then flat points at a static zero slot and nflat is
 * 1). data_off is the offset of what the slot carries (a pool's element, a
 * table's row number).
 */
typedef struct ark__slot_view {
    ark_handle_layout layout;
    char *flat;
    char *const *pages;
    uint64_t nflat;
    uint64_t cap;
    size_t stride;
    size_t data_off;
    uint64_t page_mask;
    unsigned page_shift;
} ark__slot_view;

/*
 * Private: return the stamp a live slot must hold for handle h to be valid.
 * The handle's bits above the index are xored with the expected tag, which
 * zeroes a correct tag, and 1 is added in 64 bits: the result equals a
 * stored uint32 stamp only if the tag is exact, no stray bit is set and the
 * generation is in range; it is never 0, so a free slot never matches.
 */
ARK_ALWAYS_INLINE ARK_INLINE uint64_t
ark__handle_stamp(const ark_handle_layout *l, ark_handle h) {
    return ((h >> l->index_bits) ^ l->tag_high) + 1;
}

/* Private: count trailing zeros of a non-zero 64-bit word. */
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
ARK_ALWAYS_INLINE ARK_INLINE unsigned ark__ctz64(uint64_t x) {
    unsigned long i;
    _BitScanForward64(&i, x);
    return (unsigned)i;
}
#else
ARK_ALWAYS_INLINE ARK_INLINE unsigned ark__ctz64(uint64_t x) {
    return (unsigned)__builtin_ctzll(x);
}
#endif

/* Private: the slot index of a handle. */
ARK_ALWAYS_INLINE ARK_INLINE uint64_t
ark__handle_index(const ark_handle_layout *l, ark_handle h) {
    return h & l->index_mask;
}

/* Private: compose a handle from an index and a generation. */
ARK_ALWAYS_INLINE ARK_INLINE ark_handle
ark__handle_make(const ark_handle_layout *l, uint64_t index, uint32_t gen) {
    return index | ((uint64_t)gen << l->index_bits) | l->tag_value;
}

/* Private: the address of slot i of v past the flat range (rare). */
ARK_ALWAYS_INLINE ARK_INLINE char *ark__slot_paged(const ark__slot_view *v,
                                                   uint64_t i) {
    uint64_t j = i - v->nflat;
    return v->pages[j >> v->page_shift] +
           (size_t)(j & v->page_mask) * v->stride;
}

/* Private: the address of slot i of v (i < cap, or i == 0). */
ARK_ALWAYS_INLINE ARK_INLINE char *ark__slot_at(const ark__slot_view *v,
                                                uint64_t i) {
    if (ARK_LIKELY(i < v->nflat)) {
        return v->flat + (size_t)i * v->stride;
    }
    return ark__slot_paged(v, i);
}

/* Private: the slot handle h names if it is live, else NULL. Reads nothing
 * outside the container whatever h is: an index past the storage reads
 * slot 0 (stamp 0 forever, so it never matches). The common case, an
 * index in the reserved range, is one compare; in a loop of lookups the
 * compiler keeps the fields in registers and each lookup is a few
 * instructions and one slot load. */
ARK_ALWAYS_INLINE ARK_INLINE char *ark__slot_live(const ark__slot_view *v,
                                                  ark_handle h) {
    uint64_t expect = ark__handle_stamp(&v->layout, h);
    uint64_t i = h & v->layout.index_mask;
    char *slot;
    if (ARK_LIKELY(i < v->nflat)) {
        slot = v->flat + (size_t)i * v->stride;
    } else {
        slot = ark__slot_at(v, i < v->cap ? i : 0);
    }
    return *(const uint32_t *)(const void *)slot == expect ? slot : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_CORE_H */
