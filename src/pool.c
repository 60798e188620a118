/* SPDX-License-Identifier: MIT */
/*
 * pool.c - ark_pool: slots holding elements, an occupancy bitmap, and the
 * handle engine (slots.h) for every handle rule.
 *
 * Slot layout (stride bytes, aligned to max(elem_align, 8)):
 *   offset 0         uint32 stamp (see slots.h)
 *   offset 4         while free: the generation its next occupant gets
 *   offset elem_off  the element (elem_off = ark__round_up(4, elem_align))
 * The stride is at least 8, so the word at offset 4 always exists; while
 * the slot is free it overlays padding or the dead element.
 *
 * Storage. Slots [0, nflat) lie in one reserved range (default allocator
 * with virtual memory): committed as the pool grows, in OS pages up to
 * 2 MiB and in aligned 2 MiB blocks after (huge pages where the kernel
 * gives them). Slots past the range, or all slots with a custom allocator,
 * live in pages of 2^page_shift slots from the allocator. nflat and the
 * page size are multiples of 64, so the 64 slots of a bitmap word are
 * always contiguous for the iterator.
 */
#include "ark/pool.h"

#include "base/vmem.h"
#include "engine/slots.h"
#include "pool_internal.h"

#include <assert.h>
#include <string.h>

/* The one external definition of each inline function of pool.h. */
ARK_API extern inline void *ark_pool_get(const ark_pool *p, ark_handle h);
ARK_API extern inline ark_status ark_pool_insert(ark_pool *p, const void *elem,
                                                 ark_handle *out);
ARK_API extern inline ark_status ark_pool_remove(ark_pool *p, ark_handle h);
ARK__INLINE_API extern inline ark__pool_view *ark__pool_view_mut(ark_pool *p);
ARK__INLINE_API extern inline void ark__pool_link(ark__pool_view *v,
                                                  uint64_t i);
ARK__INLINE_API extern inline char *ark__pool_take_any(ark__pool_view *v,
                                                       uint64_t *i);
ARK__INLINE_API extern inline char *ark__pool_take(ark__pool_view *v,
                                                   uint64_t *i);
ARK__INLINE_API extern inline void ark__pool_unlink(ark__pool_view *v,
                                                    uint64_t i);
ARK__INLINE_API extern inline const ark__pool_view *
ark__pool_view_of(const ark_pool *p);
ARK__INLINE_API extern inline bool ark__pool_iter_advance(ark_pool_iter *it);
ARK__INLINE_API extern inline int ark__pool_iter_step(ark_pool_iter *it);
ARK__INLINE_API extern inline void
ark__pool_iter_at(ark_pool_iter *it, char *slot, uint64_t hb, uint32_t stamp);
ARK__INLINE_API extern inline unsigned ark__pool_full_words(const uint64_t *l);
ARK__INLINE_API extern inline uint64_t
ark__pool_issued(const ark__pool_view *p);
ARK__INLINE_API extern inline uint64_t
ark__pool_word(const ark__pool_view *p, uint64_t w, uint64_t issued);
ARK_API extern inline ark_pool_iter ark_pool_iter_begin(const ark_pool *p);
ARK_API extern inline bool ark_pool_iter_valid(const ark_pool_iter *it);
ARK_API extern inline void ark_pool_iter_next(ark_pool_iter *it);

/* Huge-page size the reserved range is aligned to and committed in. */
#define HUGE ((size_t)2 << 20)

/* Pages from the allocator hold about this many bytes of slots (at least
 * 64 slots, at most 4096). */
#define PAGE_BYTES ((size_t)256 << 10)

/* What slot 0 reads as while the pool has no storage: a free stamp. */
static const uint64_t empty_slot[1];

/* ---- what the engine asks of a pool ----------------------------------- */

static void pool_unlink_slot(void *c, uint64_t i) {
    ark__pool_unlink(&((ark_pool *)c)->view, i);
}

static void pool_run_hook(void *c, char *slot, ark_handle h) {
    ark_pool *p = c;
    p->on_remove(slot + p->view.slots.data_off, h, p->user);
}

static void pool_drop_slot(void *c, char *slot) {
    (void)c;
    (void)slot;
}

static uint64_t pool_next_live(const void *c, uint64_t from) {
    const ark_pool *p = c;
    uint64_t issued = ark__pool_issued(&p->view);
    uint64_t words = (issued + 63) >> 6;
    uint64_t w = from >> 6;
    if (w >= words) {
        return 0;
    }
    uint64_t bits =
        ark__pool_word(&p->view, w, issued) & (~(uint64_t)0 << (from & 63));
    while (bits == 0) {
        if (++w >= words) {
            return 0;
        }
        bits = ark__pool_word(&p->view, w, issued);
    }
    return (w << 6) | ark__ctz64(bits);
}

static ark_status pool_grow(void *c, uint64_t want);

static const ark__slots_ops pool_ops = {
    pool_grow, pool_unlink_slot, pool_run_hook, pool_drop_slot, pool_next_live};

/* ---- storage ----------------------------------------------------------- */

/* Cover slots [0, cap) with live bits: set, as for every slot not issued
 * yet (ark__pool_view in pool.h), but slot 0's, which is never live. */
static ark_status grow_live(ark_pool *p, uint64_t cap) {
    size_t old = (size_t)((p->view.slots.cap + 63) >> 6);
    size_t words = (size_t)((cap + 63) >> 6);
    uint64_t *live = ark__grow_array(&p->s.alloc, p->view.live, &p->live_words,
                                     old, words, sizeof *live);
    if (live == NULL) {
        return ARK_ENOMEM;
    }
    p->view.live = live;
    memset(live + old, 0xFF, (words - old) * sizeof *live);
    if (old == 0 && words > 0) {
        live[0] &= ~(uint64_t)1;
    }
    return ARK_OK;
}

/* The bytes of the reserved range to commit for want slots: OS pages up
 * to 2 MiB, at least doubling what is committed (one system call per
 * doubling, not per page: committed pages take no memory until touched),
 * whole 2 MiB blocks past that, never past the range. */
static size_t flat_end(const ark_pool *p, uint64_t want) {
    size_t stride = p->view.slots.stride;
    uint64_t slots = want < p->flat_slots ? want : p->flat_slots;
    size_t end = ark__round_up((size_t)slots, 64) * stride;
    if (end < HUGE && end < 2 * p->flat_committed) {
        end = 2 * p->flat_committed < HUGE ? 2 * p->flat_committed : HUGE;
    }
    end = ark__round_up(end, end <= HUGE ? ark__vmem_page_size() : HUGE);
    size_t max = (size_t)p->flat_slots * stride;
    return end < max ? end : max;
}

/* The slots of the reserved range that end bytes hold: a multiple of 64
 * (whole bitmap words for the iterator), or the whole range. */
static uint64_t flat_slots_in(const ark_pool *p, size_t end) {
    uint64_t n = end / p->view.slots.stride;
    return n >= p->flat_slots ? p->flat_slots : n & ~(uint64_t)63;
}

/* Commit the reserved range up to end bytes; nflat follows. */
static ark_status grow_flat(ark_pool *p, size_t end) {
    ark__slots_view *v = &p->view.slots;
    if (end > p->flat_committed) {
        if (ark__vmem_commit(p->flat + p->flat_committed,
                             end - p->flat_committed) != 0) {
            return ARK_ENOMEM;
        }
        /* Below 2 MiB the range has small pages, each a trap on first
         * touch: fault the new part in at once (at most what is used
         * plus as much again, see flat_end). */
        if (end <= HUGE) {
            ark__vmem_prefault(p->flat + p->flat_committed,
                               end - p->flat_committed);
        }
        p->flat_committed = end;
    }
    v->flat = p->flat;
    v->nflat = flat_slots_in(p, end);
    v->cap = v->nflat;
    return ARK_OK;
}

/* Add one zeroed page from the allocator past the reserved range. The
 * tables grow first, so a failure changes nothing visible. */
static ark_status add_page(ark_pool *p) {
    const ark_allocator *a = &p->s.alloc;
    char **pages = ark__grow_array(a, p->pages, &p->pages_cap, p->npages,
                                   p->npages + 1, sizeof *p->pages);
    if (pages == NULL) {
        return ARK_ENOMEM;
    }
    p->pages = pages;
    p->view.slots.pages = pages;
    size_t *by_addr = ark__grow_array(a, p->by_addr, &p->addr_cap, p->npages,
                                      p->npages + 1, sizeof *p->by_addr);
    if (by_addr == NULL) {
        return ARK_ENOMEM;
    }
    p->by_addr = by_addr;
    char *page = ark__alloc(a, p->page_bytes, p->page_align);
    if (page == NULL) {
        return ARK_ENOMEM;
    }
    memset(page, 0, p->page_bytes);
    size_t pos = p->npages;
    while (pos > 0 && (uintptr_t)pages[by_addr[pos - 1]] > (uintptr_t)page) {
        by_addr[pos] = by_addr[pos - 1];
        pos--;
    }
    by_addr[pos] = p->npages;
    pages[p->npages++] = page;
    ark__slots_view *v = &p->view.slots;
    if (v->cap == 0) {
        v->nflat = 0; /* no reserved range: pages from slot 0 on */
    }
    uint64_t cap = v->cap + ((uint64_t)1 << v->page_shift);
    v->cap = cap < p->s.limit ? cap : p->s.limit;
    return ARK_OK;
}

/* Give storage to slots [0, want): the reserved range first, pages after.
 * The bitmap grows first to the capacity planned, so it always covers
 * cap, and a failure leaves only unused spare room. */
static ark_status pool_grow(void *c, uint64_t want) {
    ark_pool *p = c;
    ark__slots_view *v = &p->view.slots;
    size_t end = flat_end(p, want);
    uint64_t cap = v->cap < p->flat_slots ? flat_slots_in(p, end) : v->cap;
    if (cap < want) {
        uint64_t page = (uint64_t)1 << v->page_shift;
        cap += ark__round_up((size_t)(want - cap), (size_t)page);
    }
    ark_status st = grow_live(p, cap < p->s.limit ? cap : p->s.limit);
    if (st == ARK_OK && v->cap < p->flat_slots) {
        st = grow_flat(p, end);
    }
    while (st == ARK_OK && v->cap < want) {
        st = add_page(p);
    }
    return st;
}

/* ---- create and destroy ------------------------------------------------ */

/* Slots per allocator page: about PAGE_BYTES, a power of two from 64 to
 * 4096, never more than the index space. */
static unsigned page_shift_for(size_t stride, unsigned index_bits) {
    unsigned shift = 6;
    while (shift < 12 && ((size_t)2 << shift) * stride <= PAGE_BYTES) {
        shift++;
    }
    return shift < index_bits ? shift : index_bits;
}

/* Reserve address space for the first slots (default allocator only):
 * max_elements + 1 (slot 0), or the default reservation's worth; a
 * multiple of 64 unless it covers the whole index space. */
static void reserve_flat(ark_pool *p, const ark_pool_config *cfg) {
    ark__slots_view *v = &p->view.slots;
    size_t vm_page = ark__vmem_page_size();
    if (cfg->allocator != NULL || vm_page == 0 || vm_page > HUGE) {
        return;
    }
    uint64_t slots = p->s.limit;
    if (cfg->max_elements == 0) {
        uint64_t dflt = ARK_POOL_DEFAULT_RESERVE_BYTES / v->stride;
        slots = dflt < slots ? dflt : slots;
    } else if (cfg->max_elements < slots - 1) {
        slots = (uint64_t)cfg->max_elements + 1; /* slot 0 is never used */
    }
    /* Checked before rounding, which a 32-bit size_t would wrap. */
    if (slots > (SIZE_MAX - 2 * HUGE) / v->stride - 64) {
        return;
    }
    if (slots < p->s.limit) {
        slots = ark__round_up((size_t)slots, 64);
    }
    size_t need = ark__round_up((size_t)slots * v->stride, HUGE);
    p->flat_base = ark__vmem_reserve(need + HUGE);
    if (p->flat_base == NULL) {
        return; /* pages from the allocator: slower lookups, same rules */
    }
    p->flat_bytes = need + HUGE;
    p->flat_slots = slots;
    p->flat = (char *)ark__round_up((uintptr_t)p->flat_base, HUGE);
    ark__vmem_hint_huge(p->flat, need);
}

ark_status ark_pool_create(ark_pool **out, const ark_pool_config *cfg) {
    assert(out != NULL && cfg != NULL);
    /* Default: the largest power of two dividing elem_size, at most
     * alignof(max_align_t). Every type's alignment divides its size, so
     * this suits any type of that size, without the padding a blanket
     * max_align_t would add to small elements. */
    size_t low = cfg->elem_size & (~cfg->elem_size + 1);
    size_t align = cfg->elem_align != 0          ? cfg->elem_align
                   : low < _Alignof(max_align_t) ? low
                                                 : _Alignof(max_align_t);
    if (cfg->elem_size == 0 || cfg->elem_size > ARK_POOL_MAX_ELEM_SIZE ||
        (align & (align - 1)) != 0 || align > ARK_POOL_MAX_ELEM_ALIGN) {
        return ARK_EINVAL;
    }
    ark_allocator a;
    ark_status st = ark__allocator_init(&a, cfg->allocator);
    if (st != ARK_OK) {
        return st;
    }
    ark_pool *p = ark__alloc(&a, sizeof *p, 0);
    if (p == NULL) {
        return ARK_ENOMEM;
    }
    memset(p, 0, sizeof *p);
    ark__slots_config sc = {cfg->index_bits, cfg->gen_bits, cfg->tag_bits,
                            cfg->tag,        cfg->seal_key, cfg->on_remove,
                            cfg->index_min,  cfg->index_max};
    st = ark__slots_init(&p->s, &p->view.slots, &sc, &a, &pool_ops, p);
    if (st != ARK_OK) {
        ark__free(&a, p, sizeof *p);
        return st;
    }
    ark__slots_view *v = &p->view.slots;
    v->data_off = ark__round_up(4, align);
    v->stride =
        ark__round_up(v->data_off + cfg->elem_size, align < 4 ? 4 : align);
    v->stride = v->stride < 8 ? 8 : v->stride; /* room for the next gen */
    v->flat = (char *)(uintptr_t)empty_slot;   /* slot 0 until storage */
    v->nflat = 1;
    v->page_shift = page_shift_for(v->stride, v->layout.index_bits);
    v->page_mask = ((uint64_t)1 << v->page_shift) - 1;
    p->view.elem_size = cfg->elem_size;
    p->page_bytes = ((size_t)1 << v->page_shift) * v->stride;
    p->page_align = align < 8 ? 8 : align;
    p->on_remove = cfg->on_remove;
    p->user = cfg->user;
    reserve_flat(p, cfg);
    *out = p;
    return ARK_OK;
}

void ark_pool_destroy(ark_pool *p) {
    if (p == NULL) {
        return;
    }
    ark_allocator a = p->s.alloc;
    if (p->flat_base != NULL) {
        ark__vmem_release(p->flat_base, p->flat_bytes);
    }
    for (size_t k = 0; k < p->npages; k++) {
        ark__free(&a, p->pages[k], p->page_bytes);
    }
    ark__free(&a, p->pages, p->pages_cap * sizeof *p->pages);
    ark__free(&a, p->by_addr, p->addr_cap * sizeof *p->by_addr);
    ark__free(&a, p->view.live, p->live_words * sizeof *p->view.live);
    ark__slots_fini(&p->s);
    ark__free(&a, p, sizeof *p);
}

/* ---- elements ---------------------------------------------------------- */

/* insert and alloc in general (elem NULL: a zeroed element): any element
 * size, growth, the end of the index space. *at gets the element. */
static ark_status pool_add(ark_pool *p, const void *elem, ark_handle *out,
                           char **at) {
    uint64_t i;
    char *slot;
    ark_status st = ark__slots_take(&p->s, &i, &slot);
    if (st != ARK_OK) {
        return st;
    }
    ark__pool_link(&p->view, i);
    char *e = slot + p->view.slots.data_off;
    if (elem == NULL) {
        memset(e, 0, p->view.elem_size);
    } else if (p->view.elem_size <= ARK__INLINE_ELEM_MAX) {
        ark__copy_in(e, elem, p->view.elem_size);
    } else {
        memcpy(e, elem, p->view.elem_size);
    }
    if (out != NULL) {
        *out = ark__slots_handle(&p->view.slots, i, slot);
    }
    *at = e;
    return ARK_OK;
}

/* pool_add for insert and alloc, out of line: their fast paths call
 * these in tail position, so they need no stack frame of their own. */
ark_status ark__pool_insert_slow(ark_pool *p, const void *elem,
                                 ark_handle *out) {
    char *e;
    return pool_add(p, elem, out, &e);
}

static ARK__NOINLINE void *pool_alloc_slow(ark_pool *p, ark_handle *out) {
    char *e;
    return pool_add(p, NULL, out, &e) == ARK_OK ? e : NULL;
}

void *ark_pool_alloc(ark_pool *p, ark_handle *out) {
    assert(p != NULL);
    uint64_t i;
    char *slot = ark__pool_take(&p->view, &i);
    if (ARK__UNLIKELY(slot == NULL)) {
        return pool_alloc_slow(p, out);
    }
    char *e = slot + p->view.slots.data_off;
    ark__zero_upto64(e, p->view.elem_size);
    if (out != NULL) {
        *out = ark__slots_handle(&p->view.slots, i, slot);
    }
    return e;
}

ark_status ark_pool_check(const ark_pool *p, ark_handle h) {
    assert(p != NULL);
    return ark__slots_check(&p->s, h);
}

ark_status ark__pool_remove_slow(ark_pool *p, ark_handle h) {
    return ark__slots_remove_general(&p->s, h);
}

ark_status ark__pool_discard(ark_pool *p, ark_handle h) {
    assert(p != NULL);
    return ark__slots_discard(&p->s, h);
}

ark_status ark_pool_remove_later(ark_pool *p, ark_handle h) {
    assert(p != NULL);
    return ark__slots_remove_later(&p->s, h);
}

size_t ark_pool_flush(ark_pool *p) {
    assert(p != NULL);
    return ark__slots_flush(&p->s);
}

size_t ark_pool_count(const ark_pool *p) {
    assert(p != NULL);
    return ark__slots_count(&p->s);
}

ark_status ark_pool_reserve(ark_pool *p, size_t n) {
    assert(p != NULL);
    return ark__slots_reserve(&p->s, n);
}

void ark_pool_clear(ark_pool *p, bool pool_run_hook) {
    assert(p != NULL);
    ark__slots_clear(&p->s, pool_run_hook);
}

ark_handle ark_pool_seal(const ark_pool *p, ark_handle h) {
    assert(p != NULL);
    return ark__slots_seal(&p->s, h);
}

ark_handle ark_pool_unseal(const ark_pool *p, ark_handle wire) {
    assert(p != NULL);
    return ark__slots_unseal(&p->s, wire);
}

/* The slot index of address at inside the reserved range or a page, or
 * UINT64_MAX. */
static uint64_t index_of(const ark_pool *p, uintptr_t at) {
    const ark__slots_view *v = &p->view.slots;
    uintptr_t flat = (uintptr_t)p->flat;
    if (p->flat != NULL && at >= flat && at - flat < v->nflat * v->stride) {
        return (at - flat) / v->stride;
    }
    size_t lo = 0, hi = p->npages; /* the last page at or below at */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)p->pages[p->by_addr[mid]] <= at) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return UINT64_MAX;
    }
    size_t k = p->by_addr[lo - 1];
    uintptr_t off = at - (uintptr_t)p->pages[k];
    if (off >= p->page_bytes) {
        return UINT64_MAX;
    }
    return v->nflat + ((uint64_t)k << v->page_shift) + off / v->stride;
}

ark_handle ark_pool_handle_of(const ark_pool *p, const void *elem) {
    assert(p != NULL);
    const ark__slots_view *v = &p->view.slots;
    uint64_t i = index_of(p, (uintptr_t)elem);
    if (i >= v->cap) {
        return ARK_NULL_HANDLE;
    }
    char *slot = ark__slots_at(v, i);
    uint32_t stamp = *ark__slots_stamp(slot);
    if ((const char *)elem != slot + v->data_off || stamp == 0) {
        return ARK_NULL_HANDLE;
    }
    return ark__handle_make(&v->layout, i, stamp - 1);
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

/* ---- checks for the tests ---------------------------------------------- */

uint64_t ark__pool_retired(const ark_pool *p) { return p->s.retired; }

bool ark__pool_reserved(const ark_pool *p) { return p->flat != NULL; }

static bool validate_linked(const void *c, uint64_t i) {
    const ark_pool *p = c;
    return (p->view.live[i >> 6] >> (i & 63)) & 1;
}

ark_status ark_pool_validate(const ark_pool *p) {
    const ark__slots_view *v = &p->view.slots;
    if (v->cap > 0 && validate_linked(p, 0)) {
        return ARK_ECORRUPT;
    }
    /* Bits past the issued slots must be set for a fresh insert, which
     * sets none. */
    for (uint64_t i = p->view.slots.issued; i < v->cap; i++) {
        if (!validate_linked(p, i)) {
            return ARK_ECORRUPT;
        }
    }
    return ark__slots_validate(&p->s, validate_linked);
}

/* ---- replication ------------------------------------------------------- */

ark_status ark_pool_insert_at(ark_pool *p, ark_handle h, const void *elem) {
    assert(p != NULL && elem != NULL);
    uint64_t i;
    char *slot;
    ark_status st = ark__slots_insert_at_check(&p->s, h);
    if (st == ARK_OK) {
        st = ark__slots_insert_at(&p->s, h, &i, &slot);
    }
    if (st != ARK_OK) {
        return st;
    }
    ark__pool_link(&p->view, i);
    ark__copy_small(slot + p->view.slots.data_off, elem, p->view.elem_size);
    return ARK_OK;
}

/* ---- claims (src/engine/claim.c) --------------------------------------- */

ark_status ark_pool_claim(ark_pool *p, ark_handle *out, size_t n) {
    assert(p != NULL && (out != NULL || n == 0));
    return ark__slots_claim(&p->s, out, n);
}

ark_status ark_pool_unclaim(ark_pool *p, ark_handle h) {
    assert(p != NULL);
    return ark__slots_unclaim(&p->s, h);
}
