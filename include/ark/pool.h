/* SPDX-License-Identifier: MIT */
/*
 * ark/pool.h - stable storage with holes, addressed by generational handles.
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
 * is base + index * stride. Past the reservation, or with a custom
 * allocator, slots live in pages from the allocator (one more load per
 * lookup, through a small page table). Either way elements never move.
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
 * allocates only when a new page or reserved range is needed; iteration is
 * O(slots / 64 + live). get, iteration and the common paths of insert and
 * remove are inline, so a loop of them makes no call (the library exports
 * them too, for bindings).
 *
 * Thread-safety: none; a pool may be read by several threads at once if
 * none writes.
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
    /* Elements to reserve address space for (default allocator only); 0 =
     * ARK_POOL_DEFAULT_RESERVE_BYTES worth. A hint, not a limit: past it
     * the pool grows in pages, a little slower to look up. */
    size_t max_elements;
    /* Key of ark_pool_seal; 0 = drawn from the OS's entropy at create. */
    uint64_t seal_key;
    const ark_allocator *allocator; /* NULL = the C library */
    /* Called once with each element removed by remove, flush and
     * clear(true), and its handle; see "Removal hooks" above. */
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user; /* passed to on_remove */
} ark_pool_config;

/* A pool (opaque). */
typedef struct ark_pool ark_pool;

/* Private: what the inline functions read and write, the first member of
 * a pool: the slots and the engine's free-slot queue (see ark__slot_view
 * in core.h; data_off is the element's offset in its slot), the
 * occupancy bitmap, one bit per slot, and the element size. A slot's bit
 * is set while it is live; the bits of slots never issued (slots.issued
 * on, up to the end of the bitmap) are set in advance, so that a fresh
 * insert writes no bit, and iteration stops at slots.issued. */
typedef struct ark__pool_view {
    ark__slot_view slots;
    uint64_t *live;
    size_t elem_size;
} ark__pool_view;

ARK_ALWAYS_INLINE ARK_INLINE const ark__pool_view *
ark__pool_view_of(const ark_pool *p) {
    return (const ark__pool_view *)(const void *)p;
}

ARK_ALWAYS_INLINE ARK_INLINE ark__pool_view *ark__pool_view_mut(ark_pool *p) {
    return (ark__pool_view *)(void *)p;
}

/* Private: set slot i's live bit (show it to iteration). */
ARK_ALWAYS_INLINE ARK_INLINE void ark__pool_link(ark__pool_view *v,
                                                 uint64_t i) {
    v->live[i >> 6] |= (uint64_t)1 << (i & 63);
}

/* Private: clear slot i's live bit; ~(1 << k) as a rotation of ~1, one
 * instruction fewer on a hot path. */
ARK_ALWAYS_INLINE ARK_INLINE void ark__pool_unlink(ark__pool_view *v,
                                                   uint64_t i) {
    unsigned k = (unsigned)(i & 63);
    uint64_t keep = ~(uint64_t)1;
    v->live[i >> 6] &= keep << k | keep >> ((64 - k) & 63);
}

/* Private: a slot from the engine's fast take with its live bit set, of
 * any element size (ark.hpp's insert and emplace, which know the size when
 * compiled); NULL (nothing changed) when the general path must run
 * (growth, the rest). A fresh slot's bit is set already: a bit set per
 * insert was a read-modify-write of the word the last insert wrote, and
 * dropping it took 1M inserts into a new pool from 5.2 to 4.6 ns
 * (docs/pool.md). */
ARK_ALWAYS_INLINE ARK_INLINE char *ark__pool_take_any(ark__pool_view *v,
                                                      uint64_t *i) {
    if (ark__slot_queued(&v->slots) < ARK_REUSE_DELAY) {
        return ark__slot_take_fresh(&v->slots, i);
    }
    char *slot = ark__slot_take_reused(&v->slots, i);
    if (slot != NULL) {
        ark__pool_link(v, *i);
    }
    return slot;
}

/* Private: the common case of insert and alloc, with no call: as
 * ark__pool_take_any for an element of at most ARK__INLINE_ELEM_MAX bytes
 * (what the inline copy takes); NULL for larger ones. */
ARK_ALWAYS_INLINE ARK_INLINE char *ark__pool_take(ark__pool_view *v,
                                                  uint64_t *i) {
    if (v->elem_size > ARK__INLINE_ELEM_MAX) {
        return NULL;
    }
    return ark__pool_take_any(v, i);
}

/* Private: insert and remove past their inline paths (src/pool.c). */
ARK_API ark_status ark__pool_insert_slow(ark_pool *p, const void *elem,
                                         ark_handle *out);
ARK_API ark_status ark__pool_remove_slow(ark_pool *p, ark_handle h);

/* Private: give back the slot of an element never built, at once and with
 * no on_remove, even from inside a hook (ark.hpp's emplace, when the
 * constructor throws). ARK_OK, or why h is not live. */
ARK_API ark_status ark__pool_discard(ark_pool *p, ark_handle h);

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
 */
ARK_ALWAYS_INLINE ARK_INLINE ark_status ark_pool_insert(ark_pool *p,
                                                        const void *elem,
                                                        ark_handle *out) {
    /* Inline, so that a loop of inserts runs without a call: a slot from
     * the queue or a fresh one (ark__pool_take), the copy; growth, large
     * elements and the rest are out of line. Forced: GCC 12 -O2 judged it
     * too big and called the library's copy from a user's loop, which cost
     * 14% (bench_pool, 1M inserts 5.1-5.3 -> 4.4-4.6 ns, 10M 9.8-9.9 ->
     * 8.3-8.6; docs/pool.md). */
    ark__pool_view *v = ark__pool_view_mut(p);
    uint64_t i;
    char *slot = ark__pool_take(v, &i);
    if (slot == NULL) {
        return ark__pool_insert_slow(p, elem, out);
    }
    ark__copy_in(slot + v->slots.data_off, elem, v->elem_size);
    if (out != NULL) {
        *out = ark__slot_handle(&v->slots, i, slot);
    }
    return ARK_OK;
}

/*
 * Return the element a handle refers to, or NULL if the handle is not
 * exactly that of a live element (null, stale, forged, foreign, removed
 * with remove_later). Never reads outside the pool, whatever h is.
 * Complexity: O(1); one slot is read (plus the page table past the
 * reserved range).
 */
ARK_INLINE void *ark_pool_get(const ark_pool *p, ark_handle h) {
    const ark__slot_view *v = &ark__pool_view_of(p)->slots;
    char *slot = ark__slot_live(v, h);
    return slot != NULL ? slot + v->data_off : NULL;
}

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
 */
ARK_INLINE ark_status ark_pool_remove(ark_pool *p, ark_handle h) {
    /* Inline for a live element with no hook to run (ark__slot_removable):
     * clear its live bit and queue its slot. A removal loop then keeps
     * several slot misses in flight; with a call between them it did not
     * (random removes of 1M elements, same process: 17.6 -> 12.4 ns). */
    ark__pool_view *v = ark__pool_view_mut(p);
    uint64_t i;
    char *slot = ark__slot_removable(&v->slots, h, &i);
    if (slot == NULL) {
        return ark__pool_remove_slow(p, h);
    }
    ark__pool_unlink(v, i);
    ark__slot_release(&v->slots, i, slot);
    return ARK_OK;
}

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
 * Does nothing (returns 0) from a hook. */
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
 * Errors: ARK_EFULL (the index bits cannot address n elements; nothing is
 * reserved), ARK_ENOMEM (the pool keeps what it had).
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
 * element whose on_remove is running counts as live).
 * Complexity: O(1) in the reserved range, O(log pages) past it.
 */
ARK_API ark_handle ark_pool_handle_of(const ark_pool *p, const void *elem);

/*
 * Return h sealed for the wire: a keyed permutation of the layout's bits
 * (index + generation + tag bits; with 20 + 12 bits the result is below
 * 2^32). Without the key a sealed value cannot be told from a random one,
 * so a guessed or altered value names a live element with probability
 * live / 2^bits. Bits of h above the layout are kept as they are.
 * Complexity: O(1), a few ns.
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
 * Call fn on every live element in slot order until it returns false.
 * fn may remove any element (with remove or remove_later); elements
 * removed before they are reached are not visited. Inserting during the
 * walk is allowed; the new element may or may not be visited.
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
 * inserts reuse them by the usual rule; one call may add at most 65536
 * such slots past the pool's storage, and at most 4 MiB of them (fewer
 * slots for elements over about 60 bytes), so a far index from a peer
 * cannot make one call allocate much; reserve first to mirror a larger
 * pool in any order.
 * Errors: ARK_ENULL (0), ARK_EFOREIGN (another tag or bits above the
 * layout), ARK_ERANGE (index 0, or the generation 2^32 - 1 no slot
 * carries), ARK_EEXIST (slot live, or marked by remove_later with an
 * older generation: flush first), ARK_ESTALE (generation older than the
 * slot's next one, slot retired, or h names the marked element),
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
 * Write a snapshot of p to w (format: docs/snapshot.md): handle layout,
 * element size, seal key, every live and marked element's bytes as they
 * are (pointers inside elements are the caller's business), and the
 * exact state of the handle slots: generations, the free queue in order,
 * marked elements in marking order, retired slots. Streams through a
 * 16 KiB buffer on the stack; the snapshot holds the seal key, so keep
 * it as secret as the key.
 * Errors: the writer's status, ARK_EINVAL (called from a hook),
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
 * ARK_EINVAL (cfg invalid, or its layout, elem_size or seal key differ
 * from the snapshot's), ARK_ENOMEM, the reader's status.
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
 * read-only; the other fields are private.
 */
typedef struct ark_pool_iter {
    void *elem;        /* current element, NULL at the end */
    ark_handle handle; /* its handle */
    /* private */
    const ark__pool_view *pool;
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

/* Private: how many bitmap words from l[0], which is full (every slot
 * live), on are full, up to ARK__POOL_RUN; the caller has checked that
 * they lie in the reserved range, whose slots are contiguous. A loop of
 * constant count, which Clang unrolls: with a loop to the end of the run,
 * or of 32 trips, Clang 14 kept the iterator partly on the stack in a
 * user's loop (docs/pool.md). */
#define ARK__POOL_RUN 8
ARK_ALWAYS_INLINE ARK_INLINE unsigned ark__pool_full_words(const uint64_t *l) {
    unsigned n = 1, full = 1;
    for (unsigned k = 1; k < ARK__POOL_RUN; k++) {
        full &= l[k] == UINT64_MAX;
        n += full;
    }
    return n;
}

/* Private: the slots of p issued so far that have storage, the end of a
 * walk (a loaded pool may count slot 0 as issued before it has any). */
ARK_ALWAYS_INLINE ARK_INLINE uint64_t
ark__pool_issued(const ark__pool_view *p) {
    uint64_t issued = p->slots.issued, cap = p->slots.cap;
    return issued < cap ? issued : cap;
}

/* Private: the live bits of bitmap word w of p, whose slots below issued
 * (the pool's) have been issued: those past it are set in advance (see
 * ark__pool_view) and masked off here. */
ARK_ALWAYS_INLINE ARK_INLINE uint64_t ark__pool_word(const ark__pool_view *p,
                                                     uint64_t w,
                                                     uint64_t issued) {
    uint64_t bits = p->live[w];
    if (!ARK_LIKELY(w != (issued - 1) >> 6)) {
        bits &= UINT64_MAX >> ((0 - issued) & 63);
    }
    return bits;
}

/* Private: enter the next bitmap word with a live bit after the current
 * one; false at the end of the walk. The bitmap is read through the pool
 * because inserts may reallocate it; slots never move, and the 64 slots
 * of a word are always contiguous. Full words that follow each other in
 * the reserved range are entered as one run of up to ARK__POOL_RUN words,
 * walked by address: the end of the walk of a word is a mispredicted
 * branch, and fewer of them took a churned 100K pool's walk from 60 to 50
 * us (GCC 12) and 70 to 60 (Clang 14), dense 10M from 1.4 to 1.2 ns an
 * element (docs/pool.md). */
ARK_ALWAYS_INLINE ARK_INLINE bool ark__pool_iter_advance(ark_pool_iter *it) {
    const ark__pool_view *p = it->pool;
    uint64_t issued = ark__pool_issued(p);
    uint64_t words = (issued + 63) >> 6;
    uint64_t w = it->word + 1;
    while (w < words && p->live[w] == 0) {
        w++;
    }
    if (w >= words) {
        it->word = words;
        return false;
    }
    it->word = w;
    it->hbase = ark__handle_make(&p->slots.layout, w << 6, 0);
    it->bits = ark__pool_word(p, w, issued);
    it->base = ark__slot_at(&p->slots, w << 6);
    if (it->bits == UINT64_MAX) { /* every slot live: walk by address */
        unsigned n = 1;
        uint64_t flat = p->slots.nflat < issued ? p->slots.nflat : issued;
        if (w + ARK__POOL_RUN <= flat >> 6) {
            n = ark__pool_full_words(p->live + w);
        }
        it->word = w + n - 1;
        it->bits = 0;
        it->next = it->base;
        it->left = n << 6;
    }
    return true;
}

/* Private: make slot, whose stamp is stamp and whose handle with
 * generation 0 is hb, the iterator's current element. The handle is
 * ark__handle_make's, from the iterator's copy of the layout, so that a
 * loop using it reads nothing from the pool per element (GCC 12 reloaded
 * both layout fields every step). */
ARK_ALWAYS_INLINE ARK_INLINE void
ark__pool_iter_at(ark_pool_iter *it, char *slot, uint64_t hb, uint32_t stamp) {
    it->elem = slot + it->off;
    it->handle = hb | ((uint64_t)(stamp - 1) << it->gen_shift);
}

/* Private: how far ahead of the slot it visits the walk asks for memory,
 * in bytes. The hardware's stream prefetchers stop at every 4 KiB page, so
 * a walk over slots that are not in the caches stalls there without a
 * hint; one per step, 4 KiB on, measured at 10M elements of 16 bytes,
 * caches flushed before each walk: dense 2.34 -> 1.56 ns an element, 10%
 * holes 2.78 -> 1.78; 1, 2 and 3 KiB on were slower or equal (see
 * docs/pool.md, "Layout and cost"). */
#define ARK__POOL_AHEAD 4096

/* Private: one step of the walk within the current word or run: 1 at a
 * live element (made current), 0 at a slot removed since the walk entered
 * its word (its stamp reads 0), -1 when the word is used up. A run of
 * words whose slots were all live when the walk entered it is walked by
 * address, one stride a step, without the bit arithmetic: dense iteration
 * measured 20-25% less time for it at 100K-1M elements and 10% at 10M. In a
 * word with holes each step takes the lowest bit left (the bits are taken when
 * the walk enters the word, so a step depends on the last only through
 * one bit-clear, and a hole costs no branch). The full-word case is
 * tested first, so that its steps are one short stretch of code with one
 * taken branch: tested second, a dense walk's speed depended on where the
 * linker put the user's loop (the same instructions at another address
 * took the 100K churn walk from 67 to 84 us); first, 58-60 us at every
 * address tried, for 0.79 -> 0.89 ns an element with 10% holes
 * (docs/pool.md). Clang 14 laid the word-with-holes case between the
 * full-word step and the rest of the step, so a dense step jumped over
 * it (a second taken branch); marked likely, the full-word case falls
 * through: Clang's 100K churn walk 79 -> 69 us, dense 1M 0.81 -> 0.71 ns,
 * 10% holes 0.97 -> 1.01; GCC 12 the same either way. */
ARK_ALWAYS_INLINE ARK_INLINE int ark__pool_iter_step(ark_pool_iter *it) {
    char *slot;
    uint64_t hb;
    if (ARK_LIKELY(it->left != 0)) {
        it->left--;
        hb = it->hbase++;
        slot = it->next;
        it->next = slot + it->stride;
    } else if (it->bits != 0) {
        uint64_t bits = it->bits;
        unsigned b = ark__ctz64(bits);
        it->bits = bits & (bits - 1);
        hb = it->hbase | b;
        slot = it->base + (size_t)b * it->stride;
    } else {
        return -1;
    }
    ARK__PREFETCH_R((const void *)((uintptr_t)slot + ARK__POOL_AHEAD));
    uint32_t stamp = *(const uint32_t *)(const void *)slot;
    if (!ARK_LIKELY(stamp != 0)) {
        return 0;
    }
    ark__pool_iter_at(it, slot, hb, stamp);
    return 1;
}

/* Advance to the next live element: one step, and only if that found
 * none, a loop over removed slots and the next words. Written as one loop
 * over all three cases, Clang 14 put a second taken branch in every step
 * of a user's loop; this shape measured (bench_pool --mode full, 7 runs,
 * medians) Clang: 100K churn walk 87.1 -> 79.8 us, 1M 887 -> 796, dense
 * 1M 0.88 -> 0.77 ns; GCC 12 within 1.5% either way. */
ARK_ALWAYS_INLINE ARK_INLINE void ark_pool_iter_next(ark_pool_iter *it) {
    int r = ark__pool_iter_step(it);
    while (!ARK_LIKELY(r > 0)) {
        if (r < 0 && !ark__pool_iter_advance(it)) {
            it->elem = NULL;
            it->more = false;
            return;
        }
        r = ark__pool_iter_step(it);
    }
}

/* Return an iterator at the first live element (or at the end). */
ARK_ALWAYS_INLINE ARK_INLINE ark_pool_iter
ark_pool_iter_begin(const ark_pool *p) {
    ark_pool_iter it;
    it.elem = NULL;
    it.handle = ARK_NULL_HANDLE;
    it.pool = ark__pool_view_of(p);
    it.base = NULL;
    it.next = NULL;
    it.bits = 0;
    it.left = 0;
    it.word = UINT64_MAX; /* the walk enters word 0 next */
    it.hbase = 0;
    it.more = true;
    it.stride = it.pool->slots.stride;
    it.off = it.pool->slots.data_off;
    it.gen_shift = it.pool->slots.layout.index_bits;
    ark_pool_iter_next(&it);
    return it;
}

/* Return true while the iterator is at an element (elem is not NULL).
 * It tests a flag rather than elem: on the path of a step that found an
 * element the flag is a constant, so the compiler drops the test there,
 * while Clang 14 cannot tell that slot + offset is not NULL and tested it
 * every element: its walk of a churned 100K pool took 60.1 -> 52.4 us
 * (docs/pool.md). */
ARK_ALWAYS_INLINE ARK_INLINE bool ark_pool_iter_valid(const ark_pool_iter *it) {
    return it->more;
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_POOL_H */
