/* SPDX-License-Identifier: MIT */
/*
 * ark/pool.h - stable storage with holes, addressed by generational handles.
 *
 *     ark_pool_config cfg = {ARK_POOL_ELEM(unit), .on_remove = unit_gone};
 *     ark_pool *units;
 *     ark_pool_create(&units, &cfg);
 *     ark_handle h;
 *     ark_pool_insert(units, &(unit){.hp = 100}, &h);
 *     unit *u = ark_pool_get(units, h);        // NULL once h is stale
 *     ark_pool_remove(units, h);
 *
 * A pool stores fixed-size elements in slots. An element's address never
 * changes while it is live and growth never copies elements, so raw
 * pointers may be kept for the life of an element. Each slot holds a
 * 32-bit stamp (generation + 1, or 0 while free) next to the element, so a
 * lookup touches one slot.
 *
 * Invariants:
 * - Handle 0 is never issued; slot index 0 is never used.
 * - A handle is accepted only if its index, generation and tag are exactly
 *   those of a live element. Any 64-bit value may be passed to get and
 *   check: they never read outside the pool.
 * - A freed slot is reused only once ARK_REUSE_DELAY slots are free (oldest
 *   first) or the index space is used up; a slot whose generations are
 *   used up is retired for good. The same operations always issue the
 *   same handles.
 * - Iteration visits live elements in slot order through an occupancy
 *   bitmap, skipping 64 empty slots per word.
 *
 * Handles are not secret. A handle is an index and a generation: whoever
 * sees a few can guess others that are live. Give handles to untrusted
 * clients only sealed (ark_pool_seal): a sealed value that is guessed or
 * altered names a live element no more often than a random number would.
 *
 * Storage: with the C library allocator on a platform with virtual memory
 * the pool reserves address space for max_elements slots (default: about
 * ARK_POOL_DEFAULT_RESERVE_BYTES) and commits it as it grows, so a lookup
 * is base + index * stride. Past the reservation slots live in pages (one
 * more load per lookup, through a small page table): pages of further
 * reservations, or with a custom allocator, blocks from it. Either way
 * elements never move, and memory is touched only as elements arrive: a
 * size passed to reserve or max_elements, however large, costs address
 * space and commit charge, not resident memory.
 *
 * Pointers: p (and cfg, elem, fn, w, r, out where a function takes them)
 * must be non-NULL unless a function says otherwise;
 * ark_pool_destroy(NULL) does nothing. Handles may be any value. A writer
 * without a write function, or a reader without a read function, is
 * ARK_EINVAL.
 *
 * Removal hooks: on_remove runs once for every element removed by remove,
 * flush and clear(true). While it runs the element's handle still resolves
 * (get returns it; removing it again is a no-op returning ARK_OK), and the
 * hook may call remove, remove_later, insert, alloc, get and check on the
 * same pool: a remove it makes is carried out, with its own hook, right
 * after the hook returns. flush and clear called from a hook do nothing;
 * destroy must not be called from a hook.
 *
 * Cost model: get, check, insert, remove, remove_later are O(1); insert
 * allocates only when a new page or reservation is needed; iteration is
 * O(slots / 64 + live). get, iteration and the common paths of insert and
 * remove are inline, so a loop of them makes no call (the library exports
 * them too, for bindings).
 *
 * Claims (ark_pool_claim): a worker thread that needs the handle of an
 * element before the owning thread creates it claims one; the owning
 * thread later creates the element at that handle with ark_pool_insert_at
 * (for instance from a task the worker posted to an ark_mainq), or gives
 * it back with ark_pool_unclaim. A claimed handle is unique and names no
 * element until then. Claims take no lock and never make the owning
 * thread wait; its insert, get, remove and iteration cost what they cost
 * without claims.
 *
 * Index ranges: index_min and index_max confine insert and claim to those
 * slot indices, while insert_at may use any. A client that mirrors a
 * server's pool with insert_at gives its own local objects a range the
 * server never uses, so the two never collide. A slot outside the range
 * is only ever reused by insert_at. Storage is one slot per index up to
 * the highest in use, so a range high in the index space costs the
 * storage of the indices below it once anything is created (reserved
 * address space with the C library allocator: set max_elements to at
 * least index_max). While an element outside the range is live, removals
 * take the out-of-line path.
 *
 * Thread-safety: one owning thread; a pool may be read by several threads
 * at once if none writes. ark_pool_claim may be called from any thread,
 * concurrently with everything but create, destroy, load, clear and
 * reserve (docs/threads.md).
 */
#ifndef ARK_POOL_H
#define ARK_POOL_H

#include "ark/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest element and alignment a pool accepts, in bytes. */
#define ARK_POOL_MAX_ELEM_SIZE (ARK__CONST(size_t, 1) << 16)
#define ARK_POOL_MAX_ELEM_ALIGN (ARK__CONST(size_t, 1) << 12)

/*
 * Fill the element fields of an ark_pool_config for type T, the way to
 * write a config:
 *
 *     ark_pool_config cfg = {ARK_POOL_ELEM(unit), .on_remove = unit_gone};
 *
 * elem_size = sizeof(T) and elem_align = T's own alignment, so a slot is
 * as small as T allows (20 bytes for a struct of four floats, where the
 * default alignment for a 16-byte element would make it 32).
 * It is a C idiom: in C++ designated initializers are C++20, and g++
 * warns under -Wextra (-Wmissing-field-initializers) about the fields
 * left out. There, use ark::pool<T> (ark/pool.hpp), or set the two fields
 * of a value-initialised config: `ark_pool_config cfg{};
 * cfg.elem_size = sizeof(T); cfg.elem_align = alignof(T);`.
 */
#ifdef __cplusplus
#define ARK_POOL_ELEM(T) .elem_size = sizeof(T), .elem_align = alignof(T)
#else
#define ARK_POOL_ELEM(T) .elem_size = sizeof(T), .elem_align = _Alignof(T)
#endif

/* Address space a default pool reserves (max_elements 0), in bytes. */
#define ARK_POOL_DEFAULT_RESERVE_BYTES (ARK__CONST(uint64_t, 1) << 30)

/*
 * Pool configuration. Zero fields take their defaults, so
 * `ark_pool_config cfg = {ARK_POOL_ELEM(T)};` is a complete config.
 */
typedef struct ark_pool_config {
    size_t elem_size; /* bytes per element: 1..ARK_POOL_MAX_ELEM_SIZE */
    /* Power of two, at most ARK_POOL_MAX_ELEM_ALIGN. 0 = the largest
     * power of two dividing elem_size, at most alignof(max_align_t): right
     * for any type of that size. Pass _Alignof(T) (C11) or alignof(T)
     * (C++) when T needs less, e.g. 4 for a struct of four floats: its
     * slot is then 20 bytes instead of 32. */
    size_t elem_align;
    unsigned index_bits; /* 1..32, 0 = 32: slot index bits of a handle */
    unsigned gen_bits;   /* 1..32, 0 = 32: generation bits of a handle */
    unsigned tag_bits;   /* tag bits above index and generation; 0 = none */
    uint64_t tag;        /* this pool's tag; must fit in tag_bits */
    /* The slot indices insert and claim take, inclusive (see "Index
     * ranges" above): 0 and 0 = every index of the layout; index_min 0 =
     * 1. insert_at takes any index of the layout. */
    uint32_t index_min, index_max;
    /* Elements to reserve address space for (default allocator only); 0 =
     * ARK_POOL_DEFAULT_RESERVE_BYTES worth. A hint, not a limit: past it
     * the pool grows in pages, a little slower to look up. Address space
     * only: any value costs no memory (one the OS cannot reserve means
     * pages from the allocator). */
    size_t max_elements;
    /* Key of ark_pool_seal; 0 = drawn from the OS's entropy at create. */
    uint64_t seal_key;
    const ark_allocator *allocator; /* NULL = the C library */
    /* Called once with each element removed by remove, flush and
     * clear(true), and its handle; see "Removal hooks" above. */
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user; /* passed to on_remove */
    /* An entity pool whose handles key this pool (ark/entity.h): each
     * element belongs to one entity and is created with
     * ark_pool_insert_at at the entity's handle, found with ark_pool_get
     * by that handle, and removed when the entity is. The handle fields
     * above must then be 0 (the entity pool's layout and seal key
     * apply); insert, alloc and claim give ARK_EINVAL. NULL: a pool with
     * handles of its own. */
    struct ark_pool *keys;
} ark_pool_config;

/* A pool (opaque). */
typedef struct ark_pool ark_pool;

/*
 * Create a pool. *out is set only on success.
 * Errors: ARK_EINVAL (elem_size 0, elem_align not a power of two, bad
 * handle bits or tag, allocator missing a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_pool_create(ark_pool **out, const ark_pool_config *cfg);

/* Free the pool and all its pages. No on_remove hook runs (see
 * ark_pool_clear). p may be NULL. */
ARK_API void ark_pool_destroy(ark_pool *p);

/*
 * Allocate a zeroed element and return its address, storing its handle in
 * *out (if out is not NULL). Returns NULL on failure; use ark_pool_insert
 * to learn why.
 * Lifetime: the address is valid until the element is removed (or until
 * flush for remove_later) or the pool is cleared or destroyed.
 */
ARK_API void *ark_pool_alloc(ark_pool *p, ark_handle *out);

/*
 * Copy elem (elem_size bytes) into a new slot and store its handle in *out
 * (if out is not NULL).
 * Errors: ARK_ENOMEM (a new page could not be allocated), ARK_EFULL (every
 * index is live, pending or retired). The pool is unchanged on error.
 * Complexity: O(1); inline (no call) unless a page must be added.
 */
ARK__INLINE ark_status ark_pool_insert(ark_pool *p, const void *elem,
                                       ark_handle *out);

/*
 * Return the element a handle refers to, or NULL if the handle is not
 * exactly that of a live element (null, stale, forged, foreign, removed
 * with remove_later). Never reads outside the pool, whatever h is.
 * Complexity: O(1), inline; one slot is read (plus the page table past
 * the reserved range).
 */
ARK__INLINE void *ark_pool_get(const ark_pool *p, ark_handle h);

/*
 * Return why a handle is or is not valid: ARK_OK (live, or its on_remove
 * is running), ARK_ENULL (0), ARK_EFOREIGN (another tag, or bits set above
 * the tag), ARK_ERANGE (index never issued), ARK_ESTALE (slot free, marked
 * for removal, or holding another generation).
 */
ARK_API ark_status ark_pool_check(const ark_pool *p, ark_handle h);

/*
 * Remove an element: unlink it, run on_remove on it, then free its slot.
 * The handle and every copy of it become stale. From a hook, the removal
 * happens right after the running hook returns (see "Removal hooks").
 * Errors: as ark_pool_check, plus ARK_ENOMEM when called from a hook and
 * the list of removals to carry out could not grow. The pool is unchanged
 * on error. Removing the element whose hook is running returns ARK_OK and
 * does nothing more.
 * Complexity: O(1); inline (no call) when no hook is set.
 */
ARK__INLINE ark_status ark_pool_remove(ark_pool *p, ark_handle h);

/*
 * Mark an element for removal at the next ark_pool_flush. It disappears
 * from get, check, count and iteration at once, but its memory stays
 * readable and its slot is not reused until the flush, which runs
 * on_remove and frees the slot. Safe during iteration and from hooks.
 * Errors: as ark_pool_check, plus ARK_ENOMEM (the pending list could not
 * grow); the pool is unchanged on error.
 */
ARK_API ark_status ark_pool_remove_later(ark_pool *p, ark_handle h);

/* Run on_remove on and free every element marked by remove_later, in the
 * order they were marked, including those hooks mark during the flush.
 * Returns how many marked elements were freed (elements that hooks remove
 * with ark_pool_remove during the flush are freed too, but not counted).
 * Once a claim has been made, it also sets free slots aside for claims
 * (ark_pool_claim), those past their reuse delay, up to 1024. Does
 * nothing (returns 0) from a hook. */
ARK_API size_t ark_pool_flush(ark_pool *p);

/* Return the number of live elements (marked ones excluded). */
ARK_API size_t ark_pool_count(const ark_pool *p);

/*
 * Make room for n live elements in all, so inserts up to that count
 * allocate nothing, whatever removals come between them (a removed
 * element's slot waits before reuse, so this makes room for up to
 * ARK_REUSE_DELAY - 1 more slots; a slot whose generations run out is
 * retired and replaced by a fresh one, which may allocate). An element
 * marked by remove_later keeps its slot until the flush: count it in n
 * until then.
 * Cost: the storage for n slots is committed (with a custom allocator,
 * allocated) without being touched, so the resident set does not grow
 * with n: the inserts that reach the slots set them up, a block at a
 * time, with no allocation. With the default allocator a request the
 * system cannot back (its commit limit, or address space) fails at once.
 * Errors: ARK_EFULL (the index bits cannot address n elements; nothing is
 * reserved), ARK_ENOMEM (the pool keeps what it had, and what the call
 * took from a custom allocator goes back to it).
 */
ARK_API ark_status ark_pool_reserve(ark_pool *p, size_t n);

/*
 * Remove every element, live and marked, running on_remove on each when
 * run_hook is true. Returns when no element is live or marked, so
 * elements that hooks insert meanwhile are removed too (a hook that always
 * inserts never lets clear return). Every outstanding handle becomes
 * stale. Storage is kept for reuse. Does nothing when called from a hook.
 */
ARK_API void ark_pool_clear(ark_pool *p, bool run_hook);

/*
 * Return the handle of the live element at address elem, or
 * ARK_NULL_HANDLE if elem is not the address of a live element of p (an
 * element whose on_remove is running counts as live). elem may be any
 * pointer, NULL included; it is compared, never read.
 * Complexity: O(1) in the reserved range, O(log pages) past it.
 */
ARK_API ark_handle ark_pool_handle_of(const ark_pool *p, const void *elem);

/*
 * Return h sealed for the wire: a keyed permutation of the layout's bits
 * (index + generation + tag bits; with 20 + 12 bits the result is below
 * 2^32). Without the key a sealed value cannot be told from a random one,
 * so a guessed or altered value names a live element with probability
 * live / 2^bits. Bits of h above the layout are kept as they are.
 * Complexity: O(1): six rounds of a keyed permutation.
 */
ARK_API ark_handle ark_pool_seal(const ark_pool *p, ark_handle h);

/*
 * Return the handle a sealed value stands for: ark_pool_unseal(p,
 * ark_pool_seal(p, h)) == h for every h. Any value may be given: pass the
 * result to get or check, which reject what is not live (a value with bits
 * above the layout keeps them, so it is rejected as foreign).
 */
ARK_API ark_handle ark_pool_unseal(const ark_pool *p, ark_handle wire);

/*
 * Return the id of h: its slot index, when h is exactly a live element's
 * handle (an element whose on_remove runs counts as live), else 0, which
 * no element has. For an entity pool, the id is what its tag sets hold
 * (ark/entity.h); for a keyed pool, the id of its entity.
 * Complexity: O(1).
 */
ARK_API uint32_t ark_pool_id(const ark_pool *p, ark_handle h);

/*
 * Return the handle of the live element with id id, or ARK_NULL_HANDLE
 * when slot id holds none (never issued, free, marked by remove_later, or
 * any id past the pool). The way back from an id a tag set or a client
 * gives to the handle that names the element now.
 * Complexity: O(1).
 */
ARK_API ark_handle ark_pool_handle_by_id(const ark_pool *p, uint32_t id);

/*
 * Call fn on every live element in slot order until it returns false; ud
 * is passed to fn as is (it may be NULL). fn may remove any element
 * (with remove or remove_later); elements removed before they are reached
 * are not visited. Inserting during the walk is allowed; the new element
 * may or may not be visited.
 */
ARK_API void ark_pool_each(ark_pool *p,
                           bool (*fn)(void *elem, ark_handle h, void *ud),
                           void *ud);

/*
 * Create an element at exactly handle h, with a copy of elem: a replica
 * mirrors its server's pool by inserting each element at the handle the
 * server issued, in any order. If h's index was issued before, its slot
 * must be free and h's generation at least the slot's next one (a
 * replica may skip generations); the slot leaves the free queue, whose
 * other slots keep their order. If the index is past every issued one,
 * the slots in between become free, queued in index order, and later
 * inserts reuse them by the usual rule (slots outside the index range
 * become free for insert_at only); one call may add at most 65536 such
 * slots past the pool's storage, and at most 4 MiB of them (fewer slots
 * for elements over about 60 bytes), so a far index from a peer cannot
 * make one call allocate much; reserve first to mirror a larger pool in
 * any order. h may be a claimed handle (ark_pool_claim): its element is
 * created and the claim ends, however far past the storage it lies.
 * Errors: ARK_ENULL (0), ARK_EFOREIGN (another tag or bits above the
 * layout), ARK_ERANGE (index 0, or the generation 2^32 - 1 no slot
 * carries), ARK_EEXIST (slot live, marked by remove_later with an older
 * generation: flush first, or claimed with an older generation than h's),
 * ARK_ESTALE (generation older than the slot's next one or than its
 * claim's, slot retired, or h names the marked element),
 * ARK_EFULL (the index is further past the storage than that),
 * ARK_EINVAL (called from a hook), ARK_ENOMEM. The pool is unchanged on
 * error.
 * Complexity: O(1) amortized for an index below the issued ones, plus
 * O(marked) while remove_later marks await a flush; O(gap) for an index
 * past them.
 */
ARK_API ark_status ark_pool_insert_at(ark_pool *p, ark_handle h,
                                      const void *elem);

/*
 * Claim n handles for elements the owning thread will create later: write
 * them to out, all of them or none. A claimed handle names no element
 * (get gives NULL, check ARK_ESTALE) and no insert, claim or insert_at
 * hands it out again until the owning thread creates its element with
 * ark_pool_insert_at(p, h, elem), after which it is an ordinary live
 * handle, or gives it back with ark_pool_unclaim. Claims take indices of
 * the index range: free slots the owning thread set aside at its last
 * flush (each past its reuse delay), or, when fewer than n are set
 * aside, fresh indices. Nothing is allocated: the owning thread gives a
 * claimed slot storage when it creates the element.
 * Errors: ARK_EINVAL (a keyed pool), ARK_EFULL (neither the slots set
 * aside nor the fresh indices left in the range number n; nothing is
 * claimed). Never ARK_ENOMEM.
 * Complexity: O(n), with one atomic read-modify-write per call unless
 * another thread claims at the same instant (then one more per claim that
 * got in first).
 * Thread-safety: any thread, concurrently with other claims and with
 * every call of the owning thread but create, destroy, load, clear and
 * reserve. No lock: neither a claimer nor the owning thread ever waits.
 * Lifetime: a claim lasts until insert_at or unclaim; clear and destroy
 * drop every claim (those handles are never handed out again); save and
 * load keep them.
 */
ARK_API ark_status ark_pool_claim(ark_pool *p, ark_handle *out, size_t n);

/*
 * Give back a claimed handle whose element was never created. Its
 * generation is used up as by a removal: that handle is never handed out
 * again, and the slot follows the normal reuse rules.
 * Errors: ARK_EINVAL (a keyed pool), ARK_ENULL, ARK_EFOREIGN,
 * ARK_ESTALE (h is not claimed: never claimed, already given back, or its
 * element created), ARK_ENOMEM (the pool could not grow to the slot of a
 * fresh claim; nothing changed).
 * Complexity: O(1) amortized; the first call that names a fresh claim
 * makes room for the slots up to it.
 * Thread-safety: the owning thread.
 */
ARK_API ark_status ark_pool_unclaim(ark_pool *p, ark_handle h);

/*
 * Write a snapshot of p to w (format: docs/snapshot.md): handle layout,
 * element size, seal key, every live and marked element's bytes as they
 * are (pointers inside elements are the caller's business), and the
 * exact state of the handle slots: generations, the free queue in order,
 * marked elements in marking order, retired slots. Streams through a
 * 16 KiB buffer on the stack; the snapshot holds the seal key, so keep
 * it as secret as the key.
 * Errors: the writer's status, ARK_EINVAL (called from a hook, or
 * w->write NULL),
 * ARK_ENOMEM (only after insert_at left dead free-queue entries). p is
 * never changed.
 * Complexity: O(slots issued + bytes written).
 */
ARK_API ark_status ark_pool_save(const ark_pool *p, const ark_writer *w);

/*
 * Create a pool from a snapshot read from r; *out is set only on success.
 * The result is the saved pool exactly: the same live handles and bytes,
 * marked elements, retired slots and free-queue order, so the same
 * operations afterwards issue the same handles. cfg must have the saved
 * layout (index_bits, gen_bits, tag_bits, tag) and elem_size; its
 * allocator, hook, user and reservation apply. A cfg->seal_key of 0 takes
 * the saved key (handles sealed before the save still unseal); another
 * key must equal the saved one. Exactly the snapshot's bytes are read.
 * Any byte sequence is safe to load: everything is checked before use,
 * memory grows only as the data arrives, and the loaded pool passes the
 * pool's full validation before it is returned.
 * Errors: ARK_ECORRUPT (malformed, truncated or checksum mismatch),
 * ARK_EINVAL (r->read NULL, cfg invalid, or its layout, elem_size or
 * seal key differ from the snapshot's, or cfg has keys and the
 * snapshot's pool had none, or the reverse), ARK_ENOMEM, the reader's
 * status.
 * Complexity: O(slots issued + bytes read).
 */
ARK_API ark_status ark_pool_load(ark_pool **out, const ark_pool_config *cfg,
                                 const ark_reader *r);

/*
 * Inline iterator for the hot loop:
 *
 *     for (ark_pool_iter it = ark_pool_iter_begin(p);
 *          ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
 *         use(it.elem, it.handle);
 *     }
 *
 * Same removal rules as ark_pool_each. elem and handle are public and
 * read-only; the other fields are private. Each step is inline: the loop
 * makes no call.
 */
typedef struct ark_pool_iter {
    void *elem;        /* current element, NULL at the end */
    ark_handle handle; /* its handle */
    /* private */
    const struct ark__pool_view *pool;
    char *base;         /* slot 0 of the bitmap word being walked */
    char *next;         /* in a run of full words: the next slot to visit */
    uint64_t bits;      /* its live bits not visited yet (0: see left) */
    uint64_t word;      /* its number (in a run: the run's last word) */
    uint64_t hbase;     /* the generation 0 handle of slot word << 6 (a
                         * step adds the slot's 6 bits); in a run, of next */
    size_t stride, off; /* copies of the pool's, kept in registers */
    unsigned gen_shift; /* the layout's index_bits, likewise */
    unsigned left;      /* in a run of full words: the slots not visited */
    bool more;          /* false once the walk has ended (see valid) */
} ark_pool_iter;

/* Return an iterator at the first live element (or at the end). */
ARK__INLINE ark_pool_iter ark_pool_iter_begin(const ark_pool *p);

/* Return true while the iterator is at an element (elem is not NULL). */
ARK__INLINE bool ark_pool_iter_valid(const ark_pool_iter *it);

/* Advance to the next live element in slot order. */
ARK__INLINE void ark_pool_iter_next(ark_pool_iter *it);

/*
 * Check every invariant of p: live bits match stamps, the free queue and
 * the marked list hold distinct free slots, and every issued slot is
 * exactly one of live, free, marked or retired. Returns ARK_OK or
 * ARK_ECORRUPT. For tests and debugging (a pool whose memory a bug may
 * have overwritten).
 * Complexity: O(slots issued).
 */
ARK_API ark_status ark_pool_validate(const ark_pool *p);

#ifdef __cplusplus
}
#endif

#include "ark/internal/pool.h"

#endif /* ARK_POOL_H */
