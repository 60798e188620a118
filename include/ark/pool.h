/*
 * ark/pool.h - stable storage with holes, addressed by generational handles.
 *
 * A pool stores fixed-size elements in fixed-size pages. An element's
 * address never changes while it is live and growth never copies elements,
 * so raw pointers may be kept for the life of an element. Each slot holds a
 * 32-bit stamp (generation + 1, or 0 while free) next to the element, so a
 * lookup touches the page table (small, cached) and one slot.
 *
 * Invariants:
 * - Handle 0 is never issued; slot index 0 is never used.
 * - A handle is accepted only if its index, generation and tag are exactly
 *   those of a live element. Any 64-bit value may be passed to get and
 *   check: they never read outside the pool.
 * - A slot is freed into a FIFO queue and is reused only once the queue
 *   holds ARK_POOL_REUSE_DELAY slots or no fresh slot is left, so a slot
 *   that was just freed is not the next one issued. That spreads reuse
 *   evenly over all free slots, delaying generation exhaustion; a slot
 *   whose generation is exhausted is retired for good.
 * - Iteration visits live elements in slot order through an occupancy
 *   bitmap, skipping 64 empty slots per word.
 *
 * Cost model: get, check, insert, remove, remove_later are O(1); insert
 * allocates a page every page's worth of fresh slots; iteration is O(slots
 * / 64 + live).
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

/* Freed slots wait in the FIFO queue until this many are queued (or no
 * fresh slot is left) before they are reused. */
#define ARK_POOL_REUSE_DELAY 64

/* Private: every page holds 4096 slots (fewer only when the index bits
 * address fewer). A constant keeps the lookup free of loads and variable
 * shifts; 10M elements need a 20 KB page table, which stays in L1. */
#define ARK_POOL_PAGE_SHIFT 12
#define ARK_POOL_PAGE_MASK ((uint64_t)4095)

/*
 * Pool configuration. Zero fields take their defaults, so
 * `ark_pool_config cfg = {.elem_size = sizeof(T)};` is a complete config.
 */
typedef struct ark_pool_config {
    size_t elem_size;    /* bytes per element; must be > 0 */
    size_t elem_align;   /* power of two; 0 = alignof(max_align_t) */
    unsigned index_bits; /* 1..32, 0 = 32: slot index bits of a handle */
    unsigned gen_bits;   /* 1..32, 0 = 32: generation bits of a handle */
    unsigned tag_bits;   /* tag bits above index and generation; 0 = none */
    uint64_t tag;        /* this pool's tag; must fit in tag_bits */
    const ark_allocator *allocator; /* NULL = the C library */
    /* Called with each element removed by remove, flush and clear(true). */
    void (*on_remove)(void *elem, void *user);
    void *user; /* passed to on_remove */
} ark_pool_config;

/* A pool. The fields are private; they are declared here only so that the
 * inline functions below can read them. */
typedef struct ark_pool {
    /* private, read by the inline functions */
    char *flat;               /* reserved range holding every slot, or NULL */
    char **pages;             /* page k holds slots k * 4096 .. */
    uint64_t *live;           /* occupancy bitmap, one bit per slot */
    ark_handle_layout layout; /* handle bit layout */
    uint64_t issued;          /* slots [0, issued) have been initialised */
    size_t stride;            /* bytes per slot: stamp, element, padding */
    size_t elem_off;          /* element offset inside its slot */
    /* private, used by pool.c only */
    size_t live_cap;                    /* words allocated for live */
    size_t npages, pages_cap, addr_cap; /* pages, table capacities */
    uint64_t capacity;                  /* slots covered by pages */
    uint64_t limit;                     /* slots the index bits can address */
    uint32_t *free_ring;                /* FIFO of free slot indices */
    uint64_t free_cap, free_head, free_len;
    uint64_t *pending; /* remove_later: index | gen << 32 */
    size_t pending_len, pending_cap;
    size_t *by_addr;  /* page numbers by address, for handle_of */
    size_t count;     /* live elements */
    uint64_t retired; /* slots whose generations are exhausted */
    size_t elem_size, page_bytes, page_align;
    char *flat_base;       /* the reservation holding flat */
    size_t flat_bytes;     /* size of the reservation at flat_base */
    size_t flat_committed; /* bytes from flat that are committed */
    ark_allocator alloc;
    void (*on_remove)(void *elem, void *user);
    void *user;
} ark_pool;

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
ARK_API ark_status ark_pool_insert(ark_pool *p, const void *elem,
                                   ark_handle *out);

/* Private: the address of slot i (i < issued). Pools made with the C
 * library allocator keep their slots in one reserved range, so the common
 * lookup is base + i * stride with no page-table load. */
inline char *ark__pool_slot(const ark_pool *p, uint64_t i) {
    if (p->flat != NULL) {
        return p->flat + (size_t)i * p->stride;
    }
    return p->pages[i >> ARK_POOL_PAGE_SHIFT] +
           (size_t)(i & ARK_POOL_PAGE_MASK) * p->stride;
}

/*
 * Return the element a handle refers to, or NULL if the handle is not
 * exactly that of a live element (null, stale, forged, foreign, removed
 * with remove_later). Never reads outside the pool, whatever h is.
 * Complexity: O(1), two dependent loads (page table, slot).
 */
inline void *ark_pool_get(const ark_pool *p, ark_handle h) {
    uint64_t i = ark__handle_index(&p->layout, h);
    if (i >= p->issued) {
        return NULL;
    }
    char *slot = ark__pool_slot(p, i);
    uint32_t stamp;
    stamp = *(const uint32_t *)(const void *)slot;
    if (stamp != ark__handle_stamp(&p->layout, h)) {
        return NULL;
    }
    return slot + p->elem_off;
}

/*
 * Return why a handle is or is not valid: ARK_OK (live), ARK_ENULL (0),
 * ARK_EFOREIGN (another tag, or bits set above the tag), ARK_ERANGE (index
 * never issued), ARK_ESTALE (slot free, pending removal, or holding another
 * generation).
 */
ARK_API ark_status ark_pool_check(const ark_pool *p, ark_handle h);

/*
 * Remove an element: run on_remove on it, then free its slot. The handle
 * and every copy of it become stale at once.
 * Errors: as ark_pool_check; the pool is unchanged on error.
 */
ARK_API ark_status ark_pool_remove(ark_pool *p, ark_handle h);

/*
 * Mark an element for removal at the next ark_pool_flush. It disappears
 * from get, check and iteration at once (and count drops), but its memory
 * stays readable and its slot is not reused until the flush, which runs
 * on_remove and frees the slot. Safe during iteration.
 * Errors: as ark_pool_check, plus ARK_ENOMEM (pending list could not grow).
 */
ARK_API ark_status ark_pool_remove_later(ark_pool *p, ark_handle h);

/* Run on_remove on and free every element marked by remove_later, in the
 * order they were marked. Returns how many were freed. */
ARK_API size_t ark_pool_flush(ark_pool *p);

/* Return the number of live elements (pending removals excluded). */
ARK_API size_t ark_pool_count(const ark_pool *p);

/*
 * Make room for n live elements in all, so inserts up to that count
 * allocate nothing.
 * Errors: ARK_EFULL (the index bits cannot address n elements; nothing is
 * reserved), ARK_ENOMEM (the pool keeps what it had).
 */
ARK_API ark_status ark_pool_reserve(ark_pool *p, size_t n);

/*
 * Remove every element, live and pending, running on_remove on each when
 * run_hook is true. Every outstanding handle becomes stale. Pages are kept
 * for reuse.
 */
ARK_API void ark_pool_clear(ark_pool *p, bool run_hook);

/*
 * Return the handle of the live element at address elem, or
 * ARK_NULL_HANDLE if elem is not the address of a live element of p.
 * Complexity: O(log pages).
 */
ARK_API ark_handle ark_pool_handle_of(const ark_pool *p, const void *elem);

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
    const ark_pool *pool;
    char *base;    /* slot address of the current word's first slot */
    uint64_t word; /* current bitmap word */
    uint64_t bits; /* live bits of that word not visited yet */
} ark_pool_iter;

/* Private: move to the next live slot. The bits of a word are taken when
 * the walk enters it (a 1-cycle dependency per step instead of re-reading
 * the word); a slot removed since then is skipped because its stamp is 0.
 * The bitmap is read through the pool because inserts may reallocate it;
 * pages never move. */
ARK_ALWAYS_INLINE inline void ark__pool_iter_advance(ark_pool_iter *it) {
    const ark_pool *p = it->pool;
    for (;;) {
        while (it->bits != 0) {
            unsigned b = ark__ctz64(it->bits);
            it->bits &= it->bits - 1;
            char *slot = it->base + (size_t)b * p->stride;
            uint32_t stamp = *(const uint32_t *)(const void *)slot;
            if (stamp != 0) {
                it->elem = slot + p->elem_off;
                it->handle = ark__handle_make(&p->layout, (it->word << 6) | b,
                                              stamp - 1);
                return;
            }
        }
        uint64_t words = (p->issued + 63) >> 6;
        uint64_t w = it->word + 1;
        while (w < words && p->live[w] == 0) {
            w++;
        }
        if (w >= words) {
            it->elem = NULL;
            return;
        }
        uint64_t first = w << 6;
        it->word = w;
        it->bits = p->live[w];
        it->base = ark__pool_slot(p, first);
    }
}

/* Return an iterator at the first live element (or at the end). */
ARK_ALWAYS_INLINE inline ark_pool_iter ark_pool_iter_begin(const ark_pool *p) {
    ark_pool_iter it;
    it.elem = NULL;
    it.handle = ARK_NULL_HANDLE;
    it.pool = p;
    it.base = NULL;
    it.word = UINT64_MAX; /* the walk enters word 0 next */
    it.bits = 0;
    ark__pool_iter_advance(&it);
    return it;
}

/* Return true while the iterator is at an element. */
ARK_ALWAYS_INLINE inline bool ark_pool_iter_valid(const ark_pool_iter *it) {
    return it->elem != NULL;
}

/* Advance to the next live element. The common step (the next live bit
 * of the current word, slot not removed since) is straight-line code; the
 * general walk handles the rest. */
ARK_ALWAYS_INLINE inline void ark_pool_iter_next(ark_pool_iter *it) {
    if (ARK_LIKELY(it->bits != 0)) {
        const ark_pool *p = it->pool;
        unsigned b = ark__ctz64(it->bits);
        char *slot = it->base + (size_t)b * p->stride;
        uint32_t stamp = *(const uint32_t *)(const void *)slot;
        if (ARK_LIKELY(stamp != 0)) {
            it->bits &= it->bits - 1;
            it->elem = slot + p->elem_off;
            it->handle =
                ark__handle_make(&p->layout, (it->word << 6) | b, stamp - 1);
            return;
        }
    }
    ark__pool_iter_advance(it);
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_POOL_H */
