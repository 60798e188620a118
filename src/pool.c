/*
 * pool.c - ark_pool: fixed-size pages of slots, a FIFO free queue and an
 * occupancy bitmap.
 *
 * Slot layout (stride bytes, page-aligned to max(elem_align, 8)):
 *   offset 0         uint32 stamp: generation + 1 while live, 0 otherwise
 *   offset elem_off  the element (elem_off = round_up(4, elem_align))
 * While a slot is free, the uint32 at offset 4 (padding or the first bytes
 * of the dead element) holds the generation its next occupant gets; the
 * stride is at least 8 so that word always exists.
 *
 * Why the free list is a separate ring of indices and not threaded
 * through the holes: popping a threaded list reads the slot it hands out to
 * learn the next one, which serialises one cache miss per insert; the ring
 * is read sequentially and the slot is only written.
 *
 * Why FIFO with a delay: reusing the oldest free slot, and only once
 * ARK_POOL_REUSE_DELAY slots are queued, spreads generations over all
 * slots so none is exhausted early, and a handle removed a moment ago is
 * not immediately re-validated by a new element in the same slot.
 */
#include "ark/pool.h"

#include "core_internal.h"
#include "pool_internal.h"
#include "vmem_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* The one external definition of each inline function of pool.h. */
ARK_API extern inline char *ark__pool_slot(const ark_pool *p, uint64_t i);
ARK_API extern inline void *ark_pool_get(const ark_pool *p, ark_handle h);
ARK_API extern inline void ark__pool_iter_advance(ark_pool_iter *it);
ARK_API extern inline ark_pool_iter ark_pool_iter_begin(const ark_pool *p);
ARK_API extern inline bool ark_pool_iter_valid(const ark_pool_iter *it);
ARK_API extern inline void ark_pool_iter_next(ark_pool_iter *it);

/* How many inserts ahead the slot to be reused is prefetched. */
#define PREFETCH_AHEAD 8

/* Largest address-space reservation a pool makes (1 TiB). */
#define FLAT_MAX ((uint64_t)1 << 40)

/* Huge-page size the reserved range is aligned to. Past its first HUGE
 * bytes a pool commits in whole aligned HUGE blocks, so the kernel can back
 * them with huge pages (one fault and one TLB entry per 2 MiB instead of
 * 512); below that it commits OS pages, so a small pool never pins 2 MiB. */
#define HUGE ((size_t)2 << 20)

/* Elements and alignments above this are refused: a page of 4096 such
 * slots would pass 256 MiB. */
#define ELEM_MAX ((size_t)64 * 1024)

static size_t round_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

static uint32_t *stamp_of(char *slot) { return (uint32_t *)(void *)slot; }

static uint32_t *next_gen_of(char *slot) {
    return (uint32_t *)(void *)(slot + 4);
}

static void live_set(ark_pool *p, uint64_t i) {
    p->live[i >> 6] |= (uint64_t)1 << (i & 63);
}

static void live_clear(ark_pool *p, uint64_t i) {
    p->live[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

/* Return arr (cap elements of size esz) grown to hold at least want
 * elements, doubling, with its first used elements kept; arr itself when
 * it is big enough; NULL (arr untouched) on failure. */
static void *grow_array(const ark_allocator *a, void *arr, size_t *cap,
                        size_t used, size_t want, size_t esz) {
    if (want <= *cap) {
        return arr;
    }
    size_t ncap = *cap < 16 ? 16 : *cap;
    while (ncap < want) {
        if (ncap > SIZE_MAX / 2) {
            return NULL;
        }
        ncap *= 2;
    }
    size_t bytes;
    if (ark__mul_overflows(ncap, esz, &bytes)) {
        return NULL;
    }
    void *n = ark__alloc(a, bytes, 0);
    if (n == NULL) {
        return NULL;
    }
    if (used > 0) {
        memcpy(n, arr, used * esz);
    }
    ark__free(a, arr, *cap * esz);
    *cap = ncap;
    return n;
}

ark_status ark_pool_create(ark_pool **out, const ark_pool_config *cfg) {
    assert(out != NULL && cfg != NULL);
    size_t align =
        cfg->elem_align == 0 ? _Alignof(max_align_t) : cfg->elem_align;
    if (cfg->elem_size == 0 || (align & (align - 1)) != 0 || align > ELEM_MAX ||
        cfg->elem_size > ELEM_MAX) {
        return ARK_EINVAL;
    }
    ark_handle_layout layout;
    ark_status s = ark__layout_init(&layout, cfg->index_bits, cfg->gen_bits,
                                    cfg->tag_bits, cfg->tag);
    if (s != ARK_OK) {
        return s;
    }
    ark_allocator a;
    s = ark__allocator_init(&a, cfg->allocator);
    if (s != ARK_OK) {
        return s;
    }
    ark_pool *p = ark__alloc(&a, sizeof *p, 0);
    if (p == NULL) {
        return ARK_ENOMEM;
    }
    memset(p, 0, sizeof *p);
    p->layout = layout;
    p->alloc = a;
    p->on_remove = cfg->on_remove;
    p->user = cfg->user;
    p->elem_size = cfg->elem_size;
    p->elem_off = round_up(4, align);
    size_t slot_align = align < 8 ? 8 : align;
    /* Slots keep the element's alignment; the stamp needs 4. */
    p->stride = round_up(p->elem_off + cfg->elem_size, align < 4 ? 4 : align);
    if (p->stride < 8) {
        p->stride = 8;
    }
    p->limit = (uint64_t)1 << layout.index_bits;
    uint64_t page_slots = (uint64_t)1 << ARK_POOL_PAGE_SHIFT;
    p->page_bytes =
        (size_t)(p->limit < page_slots ? p->limit : page_slots) * p->stride;
    p->page_align = slot_align;
    /* With the C library allocator, reserve address space for the whole
     * index space and commit it a page at a time: lookups then need no
     * page table. A custom allocator (which must see every allocation), a
     * reservation over FLAT_MAX or an OS without virtual memory gets pages
     * from the allocator instead. */
    size_t vm_page = ark__vmem_page_size();
    if (cfg->allocator == NULL && vm_page != 0 && vm_page <= HUGE &&
        p->limit <= FLAT_MAX / p->stride &&
        p->limit * p->stride <= SIZE_MAX - 2 * HUGE) {
        size_t need = round_up((size_t)(p->limit * p->stride), HUGE);
        p->flat_base = ark__vmem_reserve(need + HUGE);
        if (p->flat_base != NULL) {
            p->flat_bytes = need + HUGE;
            p->flat = (char *)round_up((uintptr_t)p->flat_base, HUGE);
            ark__vmem_hint_huge(p->flat, need);
        }
    }
    *out = p;
    return ARK_OK;
}

void ark_pool_destroy(ark_pool *p) {
    if (p == NULL) {
        return;
    }
    const ark_allocator *a = &p->alloc;
    if (p->flat != NULL) {
        ark__vmem_release(p->flat_base, p->flat_bytes);
    } else {
        for (size_t k = 0; k < p->npages; k++) {
            ark__free(a, p->pages[k], p->page_bytes);
        }
    }
    ark__free(a, p->pages, p->pages_cap * sizeof *p->pages);
    ark__free(a, p->by_addr, p->addr_cap * sizeof *p->by_addr);
    ark__free(a, p->live, p->live_cap * sizeof *p->live);
    ark__free(a, p->free_ring, p->free_cap * sizeof *p->free_ring);
    ark__free(a, p->pending, p->pending_cap * sizeof *p->pending);
    ark_allocator copy = *a;
    ark__free(&copy, p, sizeof *p);
}

/* Add one page. Every table is grown before the page is linked in, so a
 * failure leaves the pool as it was (apart from spare capacity). */
static ark_status add_page(ark_pool *p) {
    const ark_allocator *a = &p->alloc;
    uint64_t slots = (uint64_t)(p->npages + 1) << ARK_POOL_PAGE_SHIFT;
    uint64_t new_cap = slots < p->limit ? slots : p->limit;
    char **pages = grow_array(a, p->pages, &p->pages_cap, p->npages,
                              p->npages + 1, sizeof *p->pages);
    if (pages == NULL) {
        return ARK_ENOMEM;
    }
    p->pages = pages;
    size_t *by_addr = grow_array(a, p->by_addr, &p->addr_cap, p->npages,
                                 p->npages + 1, sizeof *p->by_addr);
    if (by_addr == NULL) {
        return ARK_ENOMEM;
    }
    p->by_addr = by_addr;
    uint64_t *live =
        grow_array(a, p->live, &p->live_cap, (size_t)(p->capacity + 63) >> 6,
                   (size_t)(new_cap + 63) >> 6, sizeof *live);
    if (live == NULL) {
        return ARK_ENOMEM;
    }
    p->live = live;
    if (p->free_cap < new_cap) {
        uint64_t ncap = p->free_cap < 64 ? 64 : p->free_cap;
        while (ncap < new_cap) {
            ncap *= 2;
        }
        size_t bytes;
        if (ncap > SIZE_MAX ||
            ark__mul_overflows((size_t)ncap, sizeof *p->free_ring, &bytes)) {
            return ARK_ENOMEM;
        }
        uint32_t *ring = ark__alloc(a, bytes, 0);
        if (ring == NULL) {
            return ARK_ENOMEM;
        }
        /* Unroll the old ring so it starts at 0. */
        for (uint64_t k = 0; k < p->free_len; k++) {
            ring[k] = p->free_ring[(p->free_head + k) & (p->free_cap - 1)];
        }
        ark__free(a, p->free_ring, (size_t)p->free_cap * sizeof *ring);
        p->free_ring = ring;
        p->free_cap = ncap;
        p->free_head = 0;
    }
    char *page;
    if (p->flat != NULL) {
        page = p->flat + p->npages * p->page_bytes;
        size_t end = (p->npages + 1) * p->page_bytes;
        if (end > p->flat_committed) {
            end = round_up(end, end <= HUGE ? ark__vmem_page_size() : HUGE);
            if (ark__vmem_commit(p->flat + p->flat_committed,
                                 end - p->flat_committed) != 0) {
                return ARK_ENOMEM;
            }
            p->flat_committed = end;
        }
    } else {
        page = ark__alloc(a, p->page_bytes, p->page_align);
        if (page == NULL) {
            return ARK_ENOMEM;
        }
    }
    /* Link the page; by_addr stays sorted by address. */
    size_t pos = p->npages;
    while (pos > 0 &&
           (uintptr_t)p->pages[p->by_addr[pos - 1]] > (uintptr_t)page) {
        p->by_addr[pos] = p->by_addr[pos - 1];
        pos--;
    }
    p->by_addr[pos] = p->npages;
    p->pages[p->npages++] = page;
    size_t old_words = (size_t)(p->capacity + 63) >> 6;
    size_t new_words = (size_t)(new_cap + 63) >> 6;
    memset(p->live + old_words, 0, (new_words - old_words) * sizeof *p->live);
    p->capacity = new_cap;
    if (p->issued == 0) {
        *stamp_of(page) = 0; /* slot 0: never issued, always free */
        p->issued = 1;
    }
    return ARK_OK;
}

/* Add a page for take_slot, or say why not. Kept out of line so the
 * common path of an insert stays small. */
static ARK_NOINLINE ark_status grow_for_insert(ark_pool *p) {
    if (p->capacity >= p->limit) {
        return ARK_EFULL;
    }
    return add_page(p);
}

/* Hand out a slot: the oldest free one once enough are queued or no fresh
 * one is left, else a fresh one (adding a page when needed). */
static inline ark_status take_slot(ark_pool *p, uint64_t *index, char **slot) {
    uint64_t i;
    uint32_t gen;
    if (p->free_len >= ARK_POOL_REUSE_DELAY ||
        (p->free_len > 0 && p->issued >= p->capacity)) {
        i = p->free_ring[p->free_head];
        p->free_head = (p->free_head + 1) & (p->free_cap - 1);
        p->free_len--;
        /* FIFO reuse hands out the coldest free slot; start fetching the
         * one PREFETCH_AHEAD inserts from now so its miss overlaps. */
        if (p->free_len > PREFETCH_AHEAD) {
            ARK_PREFETCH_WRITE(
                ark__pool_slot(p, p->free_ring[(p->free_head + PREFETCH_AHEAD) &
                                               (p->free_cap - 1)]));
        }
        *slot = ark__pool_slot(p, i);
        gen = *next_gen_of(*slot);
    } else {
        if (p->issued >= p->capacity) {
            ark_status s = grow_for_insert(p);
            if (s != ARK_OK) {
                return s;
            }
        }
        i = p->issued++;
        *slot = ark__pool_slot(p, i);
        gen = 0;
    }
    *stamp_of(*slot) = gen + 1;
    live_set(p, i);
    p->count++;
    *index = i;
    return ARK_OK;
}

void *ark_pool_alloc(ark_pool *p, ark_handle *out) {
    assert(p != NULL);
    uint64_t i;
    char *slot;
    if (take_slot(p, &i, &slot) != ARK_OK) {
        return NULL;
    }
    memset(slot + p->elem_off, 0, p->elem_size);
    if (out != NULL) {
        *out = ark__handle_make(&p->layout, i, *stamp_of(slot) - 1);
    }
    return slot + p->elem_off;
}

ark_status ark_pool_insert(ark_pool *p, const void *elem, ark_handle *out) {
    assert(p != NULL && elem != NULL);
    uint64_t i;
    char *slot;
    ark_status s = take_slot(p, &i, &slot);
    if (s != ARK_OK) {
        return s;
    }
    memcpy(slot + p->elem_off, elem, p->elem_size);
    if (out != NULL) {
        *out = ark__handle_make(&p->layout, i, *stamp_of(slot) - 1);
    }
    return ARK_OK;
}

/* Classify h (as ark_pool_check) and, when it is live, give its slot. */
static inline ark_status find_live(const ark_pool *p, ark_handle h,
                                   uint64_t *index, char **slot) {
    ark_status s = ark__layout_check(&p->layout, h);
    if (s != ARK_OK) {
        return s;
    }
    uint64_t i = ark__handle_index(&p->layout, h);
    if (i == 0 || i >= p->issued) {
        return ARK_ERANGE;
    }
    *index = i;
    *slot = ark__pool_slot(p, i);
    return *stamp_of(*slot) == ark__handle_stamp(&p->layout, h) ? ARK_OK
                                                                : ARK_ESTALE;
}

ark_status ark_pool_check(const ark_pool *p, ark_handle h) {
    assert(p != NULL);
    uint64_t i;
    char *slot;
    return find_live(p, h, &i, &slot);
}

/* Free a slot whose stamp is already 0: queue it with its next generation,
 * or retire it when its generations are used up. The ring always has room:
 * its capacity covers every slot. */
static void release_slot(ark_pool *p, uint64_t i, char *slot, uint32_t gen) {
    if (gen >= p->layout.gen_max) {
        p->retired++;
        return;
    }
    *next_gen_of(slot) = gen + 1;
    p->free_ring[(p->free_head + p->free_len) & (p->free_cap - 1)] =
        (uint32_t)i;
    p->free_len++;
}

ark_status ark_pool_remove(ark_pool *p, ark_handle h) {
    assert(p != NULL);
    uint64_t i;
    char *slot;
    ark_status s = find_live(p, h, &i, &slot);
    if (s != ARK_OK) {
        return s;
    }
    uint32_t gen = *stamp_of(slot) - 1;
    *stamp_of(slot) = 0;
    live_clear(p, i);
    p->count--;
    if (p->on_remove != NULL) {
        p->on_remove(slot + p->elem_off, p->user);
    }
    release_slot(p, i, slot, gen);
    return ARK_OK;
}

ark_status ark_pool_remove_later(ark_pool *p, ark_handle h) {
    assert(p != NULL);
    uint64_t i;
    char *slot;
    ark_status s = find_live(p, h, &i, &slot);
    if (s != ARK_OK) {
        return s;
    }
    uint64_t *pending =
        grow_array(&p->alloc, p->pending, &p->pending_cap, p->pending_len,
                   p->pending_len + 1, sizeof *p->pending);
    if (pending == NULL) {
        return ARK_ENOMEM;
    }
    p->pending = pending;
    uint32_t gen = *stamp_of(slot) - 1;
    *stamp_of(slot) = 0;
    live_clear(p, i);
    p->count--;
    p->pending[p->pending_len++] = i | (uint64_t)gen << 32;
    return ARK_OK;
}

/* Free every pending slot in marking order, running on_remove if asked. */
static size_t flush_pending(ark_pool *p, bool run_hook) {
    size_t n = p->pending_len;
    for (size_t k = 0; k < n; k++) {
        uint64_t i = p->pending[k] & UINT32_MAX;
        char *slot = ark__pool_slot(p, i);
        if (run_hook && p->on_remove != NULL) {
            p->on_remove(slot + p->elem_off, p->user);
        }
        release_slot(p, i, slot, (uint32_t)(p->pending[k] >> 32));
    }
    p->pending_len = 0;
    return n;
}

size_t ark_pool_flush(ark_pool *p) {
    assert(p != NULL);
    return flush_pending(p, true);
}

size_t ark_pool_count(const ark_pool *p) {
    assert(p != NULL);
    return p->count;
}

ark_status ark_pool_reserve(ark_pool *p, size_t n) {
    assert(p != NULL);
    if (n <= p->count) {
        return ARK_OK;
    }
    /* Inserts possible without a new page: fresh slots in the pages plus
     * queued free slots; at most the whole index space (slot 0 excluded). */
    uint64_t need = (uint64_t)n - p->count;
    uint64_t first = p->issued > 0 ? p->issued : 1;
    if (need > p->limit - first + p->free_len) {
        return ARK_EFULL;
    }
    while (p->capacity - p->issued + p->free_len < need) {
        ark_status s = add_page(p);
        if (s != ARK_OK) {
            return s;
        }
    }
    return ARK_OK;
}

void ark_pool_clear(ark_pool *p, bool run_hook) {
    assert(p != NULL);
    for (uint64_t w = 0; w < (p->issued + 63) >> 6; w++) {
        uint64_t bits = p->live[w];
        p->live[w] = 0;
        while (bits != 0) {
            uint64_t i = (w << 6) | ark__ctz64(bits);
            bits &= bits - 1;
            char *slot = ark__pool_slot(p, i);
            uint32_t gen = *stamp_of(slot) - 1;
            *stamp_of(slot) = 0;
            if (run_hook && p->on_remove != NULL) {
                p->on_remove(slot + p->elem_off, p->user);
            }
            release_slot(p, i, slot, gen);
        }
    }
    p->count = 0;
    flush_pending(p, run_hook);
}

ark_handle ark_pool_handle_of(const ark_pool *p, const void *elem) {
    assert(p != NULL);
    uintptr_t at = (uintptr_t)elem;
    /* The last page starting at or below at. */
    size_t lo = 0, hi = p->npages;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)p->pages[p->by_addr[mid]] <= at) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return ARK_NULL_HANDLE;
    }
    size_t k = p->by_addr[lo - 1];
    const char *page = p->pages[k];
    uintptr_t off = at - (uintptr_t)page;
    if (off >= p->page_bytes || off % p->stride != p->elem_off) {
        return ARK_NULL_HANDLE;
    }
    uint64_t i = ((uint64_t)k << ARK_POOL_PAGE_SHIFT) | (off / p->stride);
    if (i >= p->issued) {
        return ARK_NULL_HANDLE;
    }
    uint32_t stamp =
        *(const uint32_t *)(const void *)(page + off - p->elem_off);
    if (stamp == 0) {
        return ARK_NULL_HANDLE;
    }
    return ark__handle_make(&p->layout, i, stamp - 1);
}

void ark_pool_each(ark_pool *p, bool (*fn)(void *elem, ark_handle h, void *ud),
                   void *ud) {
    assert(p != NULL && fn != NULL);
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        if (!fn(it.elem, it.handle, ud)) {
            return;
        }
    }
}

uint64_t ark__pool_retired(const ark_pool *p) { return p->retired; }

ark_status ark__pool_validate(const ark_pool *p) {
    if (p->issued > p->capacity || p->capacity > p->limit ||
        p->free_len > p->free_cap ||
        (p->capacity > 0 && p->free_cap < p->capacity)) {
        return ARK_ECORRUPT;
    }
    if (p->issued == 0) {
        return p->count == 0 && p->free_len == 0 && p->pending_len == 0
                   ? ARK_OK
                   : ARK_ECORRUPT;
    }
    uint64_t live = 0;
    for (uint64_t i = 0; i < p->issued; i++) {
        bool bit = (p->live[i >> 6] >> (i & 63)) & 1;
        uint32_t stamp = *stamp_of(ark__pool_slot(p, i));
        if (bit != (stamp != 0) || (i == 0 && bit) ||
            (stamp != 0 && stamp - 1 > p->layout.gen_max)) {
            return ARK_ECORRUPT;
        }
        live += bit;
    }
    /* Bits past issued must be clear for the iterator's sake. */
    for (uint64_t i = p->issued; i < ((p->issued + 63) & ~(uint64_t)63); i++) {
        if ((p->live[i >> 6] >> (i & 63)) & 1) {
            return ARK_ECORRUPT;
        }
    }
    if (live != p->count) {
        return ARK_ECORRUPT;
    }
    /* Free and pending slots: stamp 0, in range, not slot 0, each listed
     * once. The scratch bitmap is a test-time diagnostic, so it comes from
     * calloc rather than the pool's allocator (whose counters tests read). */
    uint64_t *seen = calloc((size_t)(p->issued + 63) >> 6, sizeof *seen);
    if (seen == NULL) {
        return ARK_ENOMEM;
    }
    ark_status s = ARK_OK;
    for (uint64_t k = 0; k < p->free_len + p->pending_len && s == ARK_OK; k++) {
        uint64_t i = k < p->free_len
                         ? p->free_ring[(p->free_head + k) & (p->free_cap - 1)]
                         : p->pending[k - p->free_len] & UINT32_MAX;
        if (i == 0 || i >= p->issued || *stamp_of(ark__pool_slot(p, i)) != 0 ||
            (seen[i >> 6] >> (i & 63)) & 1 ||
            (k<p->free_len && * next_gen_of(ark__pool_slot(p, i))> p->layout
                 .gen_max)) {
            s = ARK_ECORRUPT;
        } else {
            seen[i >> 6] |= (uint64_t)1 << (i & 63);
        }
    }
    free(seen);
    if (s != ARK_OK) {
        return s;
    }
    if (live + p->free_len + p->pending_len + p->retired + 1 != p->issued) {
        return ARK_ECORRUPT;
    }
    return ARK_OK;
}
