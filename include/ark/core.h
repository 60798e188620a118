/* SPDX-License-Identifier: MIT */
/*
 * ark/core.h - the vocabulary every ark module shares.
 *
 * Handles, status codes, the allocator interface, and the writer and
 * reader that snapshots go through. A handle is an opaque 64-bit value; 0
 * (ARK_NULL_HANDLE) is never issued. Every fallible call returns an
 * ark_status; a failed call leaves its container unchanged.
 *
 * Handle layout (pool and table): from the least significant bit up,
 * index_bits of slot index, gen_bits of generation, tag_bits of container
 * tag; bits above those are zero in every issued handle. A handle is valid
 * only for the exact slot, generation and tag it was issued with.
 *
 * Pointer arguments: every function of ark takes its container (and its
 * out-parameters) as non-NULL pointers unless its documentation says
 * otherwise; passing NULL there is a programming error (an assert in debug
 * builds). Every destroy function accepts NULL and does nothing. Values
 * that can come from outside the process (handles, ids, keys, positions,
 * snapshot bytes) are never a programming error: they get a status.
 */
#ifndef ARK_CORE_H
#define ARK_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How ark's functions are declared: exported from a shared ark
 * (ARK_SHARED_BUILD while building it, ARK_SHARED when using it on
 * Windows), plain otherwise. */
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

/* Private: how the public headers declare their inline functions (the
 * hot paths; the library also exports each one, for bindings). In C:
 * C11 inline, with the one external definition in the library. In C++ an
 * inline function is emitted as a COMDAT copy wherever it is not inlined,
 * and some linkers (MinGW's) reject such a copy next to the library's
 * strong definition: C++ sees them as static inline instead. */
#ifdef __cplusplus
#define ARK__INLINE static inline
#else
#define ARK__INLINE inline
#endif

/* An opaque reference to an element of a handle-issuing container. */
typedef uint64_t ark_handle;

/* The handle no container ever issues. */
#define ARK_NULL_HANDLE ARK__CONST(ark_handle, 0)

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
    X(ARK_ECORRUPT, "rejected input data")                                     \
    X(ARK_EIO, "a read or write failed")

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
 * NULL means the C library). Both functions must be non-NULL.
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
 * ctx is passed back. ark/io.h has writers for a FILE and a memory buffer.
 */
typedef struct ark_writer {
    ark_status (*write)(void *ctx, const void *buf, size_t n);
    void *ctx;
} ark_writer;

/*
 * A byte source for snapshots (ark_pool_load and friends). read must fill
 * exactly n bytes or return a non-OK status; at the end of the input it
 * returns ARK_ECORRUPT. A load reads exactly the bytes of one snapshot,
 * never more, so a stream may carry other data after it. ark/io.h has
 * readers for a FILE and a range of bytes.
 */
typedef struct ark_reader {
    ark_status (*read)(void *ctx, void *buf, size_t n);
    void *ctx;
} ark_reader;

#ifdef __cplusplus
}
#endif

#include "ark/internal/core.h"

#endif /* ARK_CORE_H */
