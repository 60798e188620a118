/* SPDX-License-Identifier: MIT */
/*
 * ark/ref.h - reference counting, an autorelease pool, and a vector of
 * counted references (after Cocos2d-x's Ref, autorelease and Vector).
 *
 * An object that wants to be shared embeds an ark_ref as its FIRST member
 * and gives ark_ref_init the function that frees it. ark_ref_retain adds a
 * reference, ark_ref_release drops one and calls destroy when the last one
 * goes. Containers that hold references follow one rule: whatever enters a
 * container is retained, whatever leaves it (erase, pop, replace, clear,
 * destroy, drain) is released, and reading an element returns a borrowed
 * pointer that never changes a count.
 *
 * Invariants:
 * - A live object has a count in [1, 2^32 - 2]. Release at 1 stores 0 and
 *   calls destroy exactly once; destroy is the last thing ark touches.
 * - Overflow and underflow are programmer errors: debug builds assert.
 *   Release builds never wrap: a retain past 2^32 - 2 pins the count at
 *   UINT32_MAX for good (the object leaks instead of being freed early),
 *   and a retain or release on a count of 0 does nothing.
 * - Counting is single-threaded by default (a relaxed load and store, no
 *   locked instruction). An object initialised with ark_ref_init_atomic is
 *   counted with atomic read-modify-writes by every function here,
 *   including the containers' retains and releases, so it may be shared
 *   across threads. ark_ref_retain_atomic / ark_ref_release_atomic count
 *   atomically whatever the object's mode.
 * - Containers finish changing their own state before they release
 *   anything, so a destroy callback may use the container it is leaving;
 *   it must not destroy that container (clear, copy and drain read it
 *   again after each release).
 *
 * Cost model: retain/release/count are inline, O(1), no allocation. The
 * containers are arrays: push, pop, at, replace and autorelease are
 * amortised O(1); insert and erase move the tail; drain, clear, copy are
 * O(n).
 *
 * Sizes: an ark_refvec or an autorelease pool holds at most ARK_REFVEC_MAX
 * references and an ark_refmap at most ARK_REFMAP_MAX entries. A call
 * that would go past the limit returns ARK_ENOMEM without calling the
 * allocator, so no size computed from a count can wrap or be absurd.
 *
 * Pointers: every container, ark_ref, out and fn argument must be
 * non-NULL unless a function says otherwise (r NULL is ARK_EINVAL where
 * documented); allocators may be NULL (the C library); the destroy
 * functions accept NULL and do nothing.
 *
 * Thread-safety: containers none. The count of an ark_ref_init_atomic
 * object may be changed from any thread; see ark_ref_release_atomic for the
 * memory orderings.
 *
 * ark_refmap (uint64 key -> ark_ref *, Cocos2d-x's integer-keyed Map) is
 * built on ark_idmap and follows the same rules.
 */
#ifndef ARK_REF_H
#define ARK_REF_H

#include "ark/core.h"
#include "ark/idmap.h"

#include <stdint.h>

/* The most references an ark_refvec or an autorelease pool holds:
 * 2^32 - 1 (an array of 32 GiB on 64-bit targets), or fewer where the
 * array's bytes would pass PTRDIFF_MAX (32-bit targets). */
#define ARK_REFVEC_MAX                                                         \
    ((size_t)(PTRDIFF_MAX / sizeof(void *) < UINT32_MAX                        \
                  ? PTRDIFF_MAX / sizeof(void *)                               \
                  : UINT32_MAX))

/* The most entries an ark_refmap holds: 2^32 - 1 (on 32-bit targets the
 * underlying ark_idmap may run out of address space first). */
#define ARK_REFMAP_MAX ARK__CONST(size_t, UINT32_MAX)

#ifdef __cplusplus
extern "C" {
#endif

/* Private: the counting functions are inline in C; C++, which sees the
 * count as a plain uint32_t, calls the library's definitions. */
#ifdef __cplusplus
#define ARK__REF_INLINE ARK_API
#else
#define ARK__REF_INLINE ARK__INLINE
#endif

/*
 * A reference count and the function that frees its object. Embed it as
 * the first member of the object, so destroy can cast the ark_ref * back.
 * The fields are private.
 *
 * The count is always an atomic object, so the plain (relaxed load then
 * store) and atomic (compare-and-swap) operations act on the same object
 * and neither is undefined behaviour; the plain ones are simply not
 * indivisible, which is what single-threaded counting needs. C++ sees a
 * plain uint32_t of the same size and alignment (checked in ref.c) and
 * calls the out-of-line functions.
 */
typedef struct ark_ref {
#ifdef __cplusplus
    uint32_t count;
#else
    _Atomic uint32_t count; /* private: references held */
#endif
    uint32_t atomic; /* private: 1 = always count atomically */
    void (*destroy)(struct ark_ref *r); /* private: called at zero */
} ark_ref;

/*
 * Initialise a single-threaded reference with count 1. destroy is called
 * once when the count drops to zero; it may be NULL (nothing is called).
 */
ARK_API void ark_ref_init(ark_ref *r, void (*destroy)(ark_ref *r));

/*
 * Initialise a reference with count 1 that every retain and release of
 * this header (the containers' included) counts atomically, so the object
 * may be retained and released from several threads at once.
 */
ARK_API void ark_ref_init_atomic(ark_ref *r, void (*destroy)(ark_ref *r));

/*
 * Add a reference atomically and return r. Safe to call concurrently with
 * any other atomic retain or release of r; the caller must already hold a
 * reference. The increment is relaxed: a new reference is only ever made
 * from an existing one, so it publishes nothing.
 * Errors: a count of 0 (dead object) or past 2^32 - 2 asserts in debug
 * builds; release builds leave 0 alone and pin the count at UINT32_MAX.
 */
ARK__REF_INLINE ark_ref *ark_ref_retain_atomic(ark_ref *r);

/*
 * Drop a reference atomically; the thread that drops the last one calls
 * destroy. Memory orderings: every decrement is a release, so each
 * thread's writes to the object happen before its reference is given up;
 * the decrement from 1 to 0 is also an acquire (acq_rel). It reads the
 * value left by the previous decrement, and a chain of read-modify-writes
 * continues every earlier release sequence, so it synchronises with ALL
 * earlier decrements: destroy sees every write made through any reference.
 * (An acq_rel exchange rather than a separate acquire fence, which
 * ThreadSanitizer does not model.)
 * Errors: a count of 0 asserts in debug builds and is ignored otherwise; a
 * pinned UINT32_MAX count is never decremented.
 */
ARK__REF_INLINE void ark_ref_release_atomic(ark_ref *r);

/*
 * Add a reference and return r (so `x->tex = ark_ref_retain(t)` reads
 * well). Single-threaded unless r was initialised with ark_ref_init_atomic.
 * Errors: as ark_ref_retain_atomic.
 * Complexity: O(1), a load and a store.
 */
ARK__REF_INLINE ark_ref *ark_ref_retain(ark_ref *r);

/*
 * Drop a reference; at zero call destroy (exactly once). Single-threaded
 * unless r was initialised with ark_ref_init_atomic.
 * Errors: as ark_ref_release_atomic.
 * Lifetime: r may be freed when this returns.
 */
ARK__REF_INLINE void ark_ref_release(ark_ref *r);

/*
 * Return the current count (0 inside destroy). For an object shared across
 * threads it is a snapshot that may be stale at once.
 */
ARK__REF_INLINE uint32_t ark_ref_count(const ark_ref *r);

/* ---- autorelease pool ---------------------------------------------- */

/*
 * A list of deferred releases, drained once per frame: ark_autorelease(p,
 * r) hands the pool one reference, and ark_autorelease_drain releases each
 * reference it holds. An object may be in the pool several times (one
 * release per entry). Opaque.
 */
typedef struct ark_autorelease_pool ark_autorelease_pool;

/*
 * Create an empty pool whose array comes from a (NULL: the C library).
 * *out is set only on success.
 * Errors: ARK_EINVAL (allocator missing a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_autorelease_pool_create(ark_autorelease_pool **out,
                                               const ark_allocator *a);

/* Drain the pool (see ark_autorelease_drain), then free it. p may be
 * NULL. */
ARK_API void ark_autorelease_pool_destroy(ark_autorelease_pool *p);

/*
 * Hand one reference of r to the pool: it is released at the next drain.
 * The count does not change now.
 * Errors: ARK_EINVAL (r NULL), ARK_ENOMEM (r not queued, also when the
 * pool holds ARK_REFVEC_MAX references; its count is untouched, so the
 * caller still owns that reference).
 * Complexity: amortised O(1); the pool's array keeps its capacity across
 * drains, so a steady frame loop does not allocate.
 */
ARK_API ark_status ark_autorelease(ark_autorelease_pool *p, ark_ref *r);

/*
 * Release every reference the pool holds, oldest first, and return how
 * many releases were made. References added while draining (by a destroy
 * callback) are released by the same drain; a nested drain from a destroy
 * callback continues where the outer one is and the outer one then stops.
 * Complexity: O(n) releases.
 */
ARK_API size_t ark_autorelease_drain(ark_autorelease_pool *p);

/* Return how many releases the next drain would make. */
ARK_API size_t ark_autorelease_pool_count(const ark_autorelease_pool *p);

/* ---- ark_refvec ----------------------------------------------------- */

/*
 * A growable array of ark_ref pointers that owns one reference to each
 * element (an object present twice holds two). Opaque.
 */
typedef struct ark_refvec ark_refvec;

/*
 * Create an empty vector whose memory comes from a (NULL: the C library);
 * nothing but the vector itself is allocated until the first element.
 * *out is set only on success.
 * Errors: ARK_EINVAL (allocator missing a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_refvec_create(ark_refvec **out, const ark_allocator *a);

/* Release every element (front to back), then free the vector. v may be
 * NULL. */
ARK_API void ark_refvec_destroy(ark_refvec *v);

/*
 * Append r and retain it.
 * Errors: ARK_EINVAL (r NULL), ARK_ENOMEM (also at ARK_REFVEC_MAX
 * elements). Unchanged on error.
 * Complexity: amortised O(1).
 */
ARK_API ark_status ark_refvec_push(ark_refvec *v, ark_ref *r);

/*
 * Insert r before position i (i == count appends) and retain it.
 * Errors: ARK_EINVAL (r NULL), ARK_ERANGE (i > count), ARK_ENOMEM (also
 * at ARK_REFVEC_MAX elements).
 * Complexity: O(count - i).
 */
ARK_API ark_status ark_refvec_insert(ark_refvec *v, size_t i, ark_ref *r);

/*
 * Put r at position i and release the element it replaces. r is retained
 * before the old element is released, so replacing an element by itself
 * never destroys it.
 * Errors: ARK_EINVAL (r NULL), ARK_ERANGE (i >= count).
 */
ARK_API ark_status ark_refvec_replace(ark_refvec *v, size_t i, ark_ref *r);

/*
 * Remove the element at position i, shifting the later ones down, and
 * release it.
 * Errors: ARK_ERANGE (i >= count).
 * Complexity: O(count - i).
 */
ARK_API ark_status ark_refvec_erase(ark_refvec *v, size_t i);

/*
 * Remove the last element and release it.
 * Errors: ARK_ERANGE (empty).
 */
ARK_API ark_status ark_refvec_pop(ark_refvec *v);

/* Remove and release every element (front to back); keep the capacity. */
ARK_API void ark_refvec_clear(ark_refvec *v);

/*
 * Make room for n elements in total so that the next pushes up to n do not
 * allocate.
 * Cost: one allocation of n pointers, of which only the elements held are
 * written: the C library hands large blocks out untouched, so the
 * resident set does not grow with n, and refuses one the system cannot
 * back.
 * Errors: ARK_ENOMEM (unchanged; at once, without calling the allocator,
 * when n > ARK_REFVEC_MAX).
 */
ARK_API ark_status ark_refvec_reserve(ark_refvec *v, size_t n);

/*
 * Make dst hold the elements of src, in order: every copied element is
 * retained, then dst's old elements are released. dst == src does
 * nothing.
 * Errors: ARK_ENOMEM (dst unchanged, no count changed).
 * Complexity: O(count(dst) + count(src)); allocates a new array for dst
 * when src is not empty.
 */
ARK_API ark_status ark_refvec_copy(ark_refvec *dst, const ark_refvec *src);

/*
 * Move src's elements into dst without touching their counts: dst's old
 * elements are released, src is left empty. dst takes src's array and, with
 * it, the allocator that owns that array (as a C++ allocator that
 * propagates on move); src keeps its allocator. dst == src does nothing.
 * Complexity: O(count(dst)) releases; never allocates, never fails.
 */
ARK_API void ark_refvec_move(ark_refvec *dst, ark_refvec *src);

/*
 * Return the element at position i, borrowed (no count changes), or NULL
 * when i >= count.
 * Lifetime: valid while the vector (or another owner) holds a reference.
 * Complexity: O(1), inline.
 */
ARK__INLINE ark_ref *ark_refvec_at(const ark_refvec *v, size_t i);

/* Return the number of elements. Inline. */
ARK__INLINE size_t ark_refvec_count(const ark_refvec *v);

/*
 * A map from uint64 keys (any value, 0 and UINT64_MAX included) to counted
 * references, holding one reference to each value: put retains, replacing
 * or removing releases, get borrows. Opaque.
 */
typedef struct ark_refmap ark_refmap;

/*
 * Create an empty map whose memory comes from a (NULL: the C library).
 * *out is set only on success.
 * Errors: ARK_EINVAL (allocator missing a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_refmap_create(ark_refmap **out, const ark_allocator *a);

/* Release every value as ark_refmap_clear does, then free the map. m may
 * be NULL. */
ARK_API void ark_refmap_destroy(ark_refmap *m);

/*
 * Map key to r and retain r; a value it replaces is released after the map
 * holds r (so putting the same object again changes no count).
 * Errors: ARK_EINVAL (r NULL), ARK_ENOMEM (the table could not grow, also
 * at ARK_REFMAP_MAX entries; map and counts unchanged).
 * Complexity: O(1) expected.
 */
ARK_API ark_status ark_refmap_put(ark_refmap *m, uint64_t key, ark_ref *r);

/*
 * Return the value of key, borrowed (no count changes), or NULL.
 * Lifetime: valid while the map (or another owner) holds a reference.
 * Complexity: O(1), inline (an ark_idmap_get).
 */
ARK__INLINE ark_ref *ark_refmap_get(const ark_refmap *m, uint64_t key);

/* Remove key and release its value (after the map no longer holds it).
 * Returns true if key was present. */
ARK_API bool ark_refmap_remove(ark_refmap *m, uint64_t key);

/* Return the number of entries. */
ARK_API size_t ark_refmap_count(const ark_refmap *m);

/*
 * Make room for n entries so that puts up to n neither allocate nor fail
 * while no entry is removed; with removals in between the table may still
 * double once. Cost: as ark_idmap_reserve (the resident set does not grow
 * with n).
 * Errors: ARK_ENOMEM (unchanged; at once, without calling the allocator,
 * when n > ARK_REFMAP_MAX).
 */
ARK_API ark_status ark_refmap_reserve(ark_refmap *m, size_t n);

/*
 * Remove every entry, releasing each value once the map no longer lists
 * it, and keep the memory. A destroy callback it runs may use m (get, put,
 * remove); values put meanwhile are removed too, so clear returns with m
 * empty. Complexity: O(capacity + count) unless callbacks put.
 */
ARK_API void ark_refmap_clear(ark_refmap *m);

/*
 * Call fn(key, value, ud) on every entry (values borrowed) until fn returns
 * false; ud is passed as is (it may be NULL). fn must not modify the map.
 */
ARK_API void ark_refmap_each(const ark_refmap *m,
                             bool (*fn)(uint64_t key, ark_ref *r, void *ud),
                             void *ud);

#ifdef __cplusplus
}
#endif

#include "ark/internal/ref.h"

#endif /* ARK_REF_H */
