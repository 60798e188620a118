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
 * gives them). Slots past the range live in pages of 2^page_shift slots:
 * with the default allocator, pages of chunks (further reservations, each
 * at least as large as the pool before it, committed like the range);
 * with a custom allocator, or where the OS gives no address space, blocks
 * from the allocator. nflat and the page size are multiples of 64, so the
 * 64 slots of a bitmap word are always contiguous for the iterator.
 * Reserve commits or allocates without touching; slots open (become
 * reachable) as inserts reach them ("storage" below).
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

static ark_status pool_reserve_back(void *c, uint64_t want);

static const ark__slots_ops pool_ops = {pool_grow,      pool_unlink_slot,
                                        pool_run_hook,  pool_drop_slot,
                                        pool_next_live, pool_reserve_back};

/* ---- storage -----------------------------------------------------------
 * Storage is first backed, then opened. Backing makes memory available
 * without touching it: the reserved range committed, chunks of address
 * space for pages reserved and committed, pages taken from the allocator,
 * room made in the bitmap and the page table. Opening makes slots
 * reachable: nflat and cap rise, the live bits of the new slots are set,
 * their pages enter the page table and an allocator page gets its stamps
 * zeroed (a recycled block may hold an earlier user's bytes, and a stamp
 * left in it would make a forged handle live). Growth does both; reserve
 * only backs (pool_back), so a reserve of any size touches memory for
 * none of the slots it covers, and the inserts after it open what they
 * reach, a block at a time, with no allocation and no system call.
 */

/* Slots per page past the reserved range. */
static uint64_t page_slots(const ark_pool *p) {
    return (uint64_t)1 << p->view.slots.page_shift;
}

/* Make the bitmap's allocation hold the words of slots [0, want); the
 * words of open slots are kept, the others are filled as slots open. */
static ark_status live_room(ark_pool *p, uint64_t want) {
    size_t used = (size_t)((p->view.slots.cap + 63) >> 6);
    uint64_t *live = ark__grow_array(&p->s.alloc, p->view.live, &p->live_words,
                                     used, (want + 63) >> 6, sizeof *live);
    if (live == NULL) {
        return ARK_ENOMEM;
    }
    p->view.live = live;
    return ARK_OK;
}

/* Cover the slots opening, [from, to), with live bits: set, as for every
 * slot not issued yet (ark__pool_view in pool.h), but slot 0's, which is
 * never live. A keyed pool issues every slot it has (see keys.c): its new
 * bits are clear. */
static void live_open(ark_pool *p, uint64_t from, uint64_t to) {
    size_t old = (size_t)((from + 63) >> 6);
    size_t words = (size_t)((to + 63) >> 6);
    memset(p->view.live + old, p->s.keyed ? 0 : 0xFF,
           (words - old) * sizeof *p->view.live);
    if (old == 0 && words > 0) {
        p->view.live[0] &= ~(uint64_t)1;
    }
}

/* The bytes of the reserved range to open for want slots: OS pages up to
 * 2 MiB, at least doubling what is open (one system call per doubling,
 * not per page), whole 2 MiB blocks past that, never past the range.
 * Growth commits as much; reserve commits it for the slots it covers. */
static size_t flat_end(const ark_pool *p, uint64_t want) {
    size_t stride = p->view.slots.stride;
    uint64_t slots = want < p->flat_slots ? want : p->flat_slots;
    size_t end = ark__round_up((size_t)slots, 64) * stride;
    if (end < HUGE && end < 2 * p->flat_open) {
        end = 2 * p->flat_open < HUGE ? 2 * p->flat_open : HUGE;
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

/* The slots [0, n) that have storage: committed in the reserved range,
 * then the backed pages. */
static uint64_t backed_slots(const ark_pool *p) {
    if (p->flat_committed < (size_t)p->flat_slots * p->view.slots.stride) {
        return flat_slots_in(p, p->flat_committed);
    }
    uint64_t n = p->flat_slots + p->nbacked * page_slots(p);
    return n < p->s.limit ? n : p->s.limit;
}

/* The page chunk a holds for page number k, or NULL when no chunk holds
 * it (an allocator page). Chunks are in page order, and few. */
static char *chunk_page(const ark_pool *p, uint64_t k) {
    for (size_t c = p->nchunks; c-- > 0;) {
        const ark__pool_chunk *ch = &p->chunks[c];
        if (k >= ch->first) {
            return k - ch->first < ch->room
                       ? ch->start + (size_t)(k - ch->first) * p->page_bytes
                       : NULL;
        }
    }
    return NULL;
}

/* Commit more of the last chunk, ch, for pages up to want: for growth a
 * whole 2 MiB block (one system call per block, not per page), for
 * reserve exactly what want needs (rounded to OS pages). */
static ark_status chunk_commit(ark_pool *p, ark__pool_chunk *ch, uint64_t want,
                               bool growth) {
    uint64_t n = want - ch->first < ch->room ? want - ch->first : ch->room;
    size_t span = ch->bytes - HUGE; /* usable from start */
    size_t end = ark__round_up((size_t)n * p->page_bytes,
                               growth ? HUGE : ark__vmem_page_size());
    end = end < span ? end : span;
    if (end > ch->committed) {
        if (ark__vmem_commit(ch->start + ch->committed, end - ch->committed) !=
            0) {
            return ARK_ENOMEM;
        }
        ch->committed = end;
    }
    /* Pages committed past want stay spare: backed pages are those the
     * bitmap and the page table have room for. */
    uint64_t held = ch->committed / p->page_bytes;
    p->nbacked = (size_t)(ch->first + (held < n ? held : n));
    return ARK_OK;
}

/* Reserve a chunk of address space for pages from nbacked on: the pages
 * up to want, and at least as many slots as the pool holds already, so
 * that chunks double and stay few (never past the index space). *none is
 * set when the OS gives no address space. */
static ark_status chunk_new(ark_pool *p, uint64_t want, bool *none) {
    uint64_t ps = page_slots(p);
    uint64_t left = (p->s.limit - p->flat_slots + ps - 1) / ps - p->nbacked;
    uint64_t need = want - p->nbacked;
    uint64_t room = p->flat_slots / ps + p->nbacked;
    room = room > need ? room : need;
    room = room < left ? room : left;
    size_t max = (SIZE_MAX - 2 * HUGE) / p->page_bytes;
    if (room > max) {
        room = need;
    }
    if (room > max) {
        return ARK_ENOMEM; /* no address space is that large */
    }
    ark__pool_chunk *chunks =
        ark__grow_array(&p->s.alloc, p->chunks, &p->chunks_cap, p->nchunks,
                        p->nchunks + 1, sizeof *chunks);
    if (chunks == NULL) {
        return ARK_ENOMEM;
    }
    p->chunks = chunks;
    size_t span = ark__round_up((size_t)room * p->page_bytes, HUGE);
    char *base = ark__vmem_reserve(span + HUGE);
    if (base == NULL && room > need) {
        room = need; /* the doubling may be what the OS refuses */
        span = ark__round_up((size_t)room * p->page_bytes, HUGE);
        base = ark__vmem_reserve(span + HUGE);
    }
    if (base == NULL) {
        *none = true;
        return ARK_ENOMEM;
    }
    ark__pool_chunk *ch = &chunks[p->nchunks++];
    ch->base = base;
    ch->bytes = span + HUGE;
    ch->start = (char *)ark__round_up((uintptr_t)base, HUGE);
    ch->committed = 0;
    ch->first = p->nbacked;
    ch->room = room;
    ark__vmem_hint_huge(ch->start, span);
    return ARK_OK;
}

static void chunk_release(const ark__pool_chunk *ch) {
    ark__vmem_release(ch->base, ch->bytes);
}

/* Back one page with a block from the allocator (its bytes as they come:
 * the stamps are zeroed when it opens). */
static ark_status alloc_page(ark_pool *p) {
    const ark_allocator *a = &p->s.alloc;
    size_t *by_addr = ark__grow_array(a, p->by_addr, &p->addr_cap, p->naddr,
                                      p->nbacked + 1, sizeof *by_addr);
    if (by_addr == NULL) {
        return ARK_ENOMEM;
    }
    p->by_addr = by_addr;
    char *page = ark__alloc(a, p->page_bytes, p->page_align);
    if (page == NULL) {
        return ARK_ENOMEM;
    }
    p->pages[p->nbacked++] = page;
    return ARK_OK;
}

/* Back pages [nbacked, want) (the page table has room): the last chunk
 * commits more, a new chunk is reserved once it is full, and the
 * allocator gives single pages with a custom allocator, or for growth
 * once the OS gives no more address space. A reserve never takes
 * allocator pages in place of a chunk: page by page, a request of any
 * size would pass the system's overcommit check one small block at a
 * time. */
static ark_status back_pages(ark_pool *p, uint64_t want, bool growth) {
    while (p->nbacked < want) {
        ark__pool_chunk *ch =
            p->nchunks > 0 ? &p->chunks[p->nchunks - 1] : NULL;
        ark_status st;
        if (ch != NULL && p->nbacked < ch->first + ch->room) {
            st = chunk_commit(p, ch, want, growth);
        } else if (p->flat != NULL && !p->no_chunks) {
            bool none = false;
            st = chunk_new(p, want, &none);
            if (none && growth) {
                p->no_chunks = true;
                st = ARK_OK;
            }
        } else {
            st = alloc_page(p);
        }
        if (st != ARK_OK) {
            return st;
        }
    }
    return ARK_OK;
}

/* Undo the backing a failed call made past nbacked pages and nchunks
 * chunks: its allocator pages and chunks go back (a chunk committed
 * further keeps that as spare room). */
static void unback(ark_pool *p, size_t nbacked, size_t nchunks) {
    for (size_t k = nbacked; k < p->nbacked; k++) {
        if (chunk_page(p, k) == NULL) {
            ark__free(&p->s.alloc, p->pages[k], p->page_bytes);
        }
    }
    while (p->nchunks > nchunks) {
        chunk_release(&p->chunks[--p->nchunks]);
    }
    p->nbacked = nbacked;
}

static bool reserve_flat(ark_pool *p, uint64_t slots);

/* Move the reserved range of a pool with no storage yet to one that holds
 * want slots, committed, if the OS gives it; else keep the one it has. */
static void move_flat(ark_pool *p, uint64_t want) {
    char *base = p->flat_base, *flat = p->flat;
    size_t bytes = p->flat_bytes;
    uint64_t slots = p->flat_slots;
    if (!reserve_flat(p, want)) {
        return;
    }
    size_t end = flat_end(p, want);
    if (ark__vmem_commit(p->flat, end) == 0) {
        p->flat_committed = end;
        ark__vmem_release(base, bytes);
        return;
    }
    ark__vmem_release(p->flat_base, p->flat_bytes);
    p->flat_base = base;
    p->flat = flat;
    p->flat_bytes = bytes;
    p->flat_slots = slots;
}

/* Back slots [0, want): the reserved range committed (flat_end's
 * rounding), room in the page table, pages, then room in the bitmap,
 * which always covers the backed slots (backed_slots): what the storage
 * backs counts only once the bitmap has room for it, so a request the
 * system refuses fails before the bitmap grows. A pool with no storage
 * yet first moves its reservation to hold want slots, when it is too
 * small (move_flat), so that a reserve right after create keeps every
 * slot in the reserved range. Nothing visible changes on failure, and
 * the pages the call took go back. */
static ark_status pool_back(ark_pool *p, uint64_t want, bool growth) {
    ark__slots_view *v = &p->view.slots;
    if (p->flat != NULL && v->cap == 0 && p->nbacked == 0 &&
        p->flat_committed == 0 && want > p->flat_slots) {
        move_flat(p, want);
    }
    uint64_t ps = page_slots(p);
    uint64_t pages =
        want > p->flat_slots ? (want - p->flat_slots + ps - 1) / ps : 0;
    size_t fend = p->flat != NULL ? flat_end(p, want) : 0;
    fend = fend > p->flat_committed ? fend : p->flat_committed;
    if (fend > p->flat_committed &&
        ark__vmem_commit(p->flat + p->flat_committed,
                         fend - p->flat_committed) != 0) {
        return ARK_ENOMEM;
    }
    size_t nbacked = p->nbacked, nchunks = p->nchunks;
    ark_status st = ARK_OK;
    if (pages > p->nbacked) {
        bool alloc_pages = p->flat == NULL || p->no_chunks;
        char **table = ark__grow_array(&p->s.alloc, p->pages, &p->pages_cap,
                                       alloc_pages ? p->nbacked : p->npages,
                                       pages, sizeof *table);
        if (table == NULL) {
            return ARK_ENOMEM;
        }
        p->pages = table;
        v->pages = table;
        st = back_pages(p, pages, growth);
    }
    uint64_t room =
        pages > 0 ? p->flat_slots + pages * ps : flat_slots_in(p, fend);
    if (st == ARK_OK) {
        st = live_room(p, room < p->s.limit ? room : p->s.limit);
    }
    if (st != ARK_OK) {
        unback(p, nbacked, nchunks);
        return st; /* the commit above stays uncounted: spare room */
    }
    p->flat_committed = fend;
    return ARK_OK;
}

/* Open page npages (backed): it enters the page table and its slots go
 * below cap; an allocator page has its stamps zeroed first and enters
 * by_addr, for handle_of. */
static void open_page(ark_pool *p) {
    ark__slots_view *v = &p->view.slots;
    size_t k = p->npages;
    char *page = chunk_page(p, k);
    if (page == NULL) {
        page = p->pages[k];
        for (uint64_t j = 0; j < page_slots(p); j++) {
            *ark__slots_stamp(page + (size_t)j * v->stride) = 0;
        }
        size_t pos = p->naddr++;
        while (pos > 0 &&
               (uintptr_t)p->pages[p->by_addr[pos - 1]] > (uintptr_t)page) {
            p->by_addr[pos] = p->by_addr[pos - 1];
            pos--;
        }
        p->by_addr[pos] = k;
    }
    p->pages[k] = page;
    p->npages = k + 1;
    if (v->cap == 0) {
        v->nflat = 0; /* no reserved range: pages from slot 0 on */
    }
    uint64_t cap = v->cap + page_slots(p);
    v->cap = cap < p->s.limit ? cap : p->s.limit;
}

/* Open slots up to at least want (backed): the reserved range by
 * flat_end's steps, as far as it is committed, then whole pages. */
static void pool_open(ark_pool *p, uint64_t want) {
    ark__slots_view *v = &p->view.slots;
    uint64_t old = v->cap;
    if (p->flat != NULL && v->cap < p->flat_slots) {
        size_t end = flat_end(p, want);
        end = end < p->flat_committed ? end : p->flat_committed;
        /* Below 2 MiB the range has small pages, each a trap on first
         * touch: fault the new part in at once (at most what is used
         * plus as much again, see flat_end). */
        if (end <= HUGE && end > p->flat_open) {
            ark__vmem_prefault(p->flat + p->flat_open, end - p->flat_open);
        }
        p->flat_open = end;
        v->flat = p->flat;
        v->nflat = flat_slots_in(p, end);
        v->cap = v->nflat;
    }
    while (v->cap < want) {
        open_page(p);
    }
    live_open(p, old, v->cap);
}

/* Give storage to slots [0, want) (ops->grow): back them if they are not,
 * then open them. */
static ark_status pool_grow(void *c, uint64_t want) {
    ark_pool *p = c;
    if (want > backed_slots(p)) {
        ark_status st = pool_back(p, want, true);
        if (st != ARK_OK) {
            return st;
        }
    }
    pool_open(p, want);
    return ARK_OK;
}

/* Back slots [0, want) for reserve (ops->back), opening none. */
static ark_status pool_reserve_back(void *c, uint64_t want) {
    ark_pool *p = c;
    return want > backed_slots(p) ? pool_back(p, want, false) : ARK_OK;
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

/* Reserve address space for slots [0, slots) (a multiple of 64 unless it
 * covers the whole index space) and make it p's reserved range; the one
 * p had, if any, is the caller's to release. Returns false, changing
 * nothing, when the OS gives none. */
static bool reserve_flat(ark_pool *p, uint64_t slots) {
    ark__slots_view *v = &p->view.slots;
    /* Checked before rounding, which a 32-bit size_t would wrap. */
    if (slots > (SIZE_MAX - 2 * HUGE) / v->stride - 64) {
        return false;
    }
    if (slots < p->s.limit) {
        slots = ark__round_up((size_t)slots, 64);
    }
    size_t need = ark__round_up((size_t)slots * v->stride, HUGE);
    char *base = ark__vmem_reserve(need + HUGE);
    if (base == NULL) {
        return false;
    }
    p->flat_base = base;
    p->flat_bytes = need + HUGE;
    p->flat_slots = slots;
    p->flat = (char *)ark__round_up((uintptr_t)base, HUGE);
    ark__vmem_hint_huge(p->flat, need);
    return true;
}

/* Reserve address space for the first slots (default allocator only):
 * max_elements + 1 (slot 0), or the default reservation's worth. Without
 * it, pages from the allocator: slower lookups, same rules. */
static void reserve_first(ark_pool *p, const ark_pool_config *cfg) {
    size_t vm_page = ark__vmem_page_size();
    if (cfg->allocator != NULL || vm_page == 0 || vm_page > HUGE) {
        return;
    }
    uint64_t slots = p->s.limit;
    if (cfg->max_elements == 0) {
        uint64_t dflt = ARK_POOL_DEFAULT_RESERVE_BYTES / p->view.slots.stride;
        slots = dflt < slots ? dflt : slots;
    } else if (cfg->max_elements < slots - 1) {
        slots = (uint64_t)cfg->max_elements + 1; /* slot 0 is never used */
    }
    (void)reserve_flat(p, slots);
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
    ark__slots_config sc = ARK__SLOTS_CONFIG_OF(cfg);
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
    reserve_first(p, cfg);
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
    unback(p, 0, 0);
    ark__free(&a, p->chunks, p->chunks_cap * sizeof *p->chunks);
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
 * UINT64_MAX (an index past cap: a page not open yet). */
static uint64_t index_of(const ark_pool *p, uintptr_t at) {
    const ark__slots_view *v = &p->view.slots;
    uintptr_t flat = (uintptr_t)p->flat;
    if (p->flat != NULL && at >= flat && at - flat < v->nflat * v->stride) {
        return (at - flat) / v->stride;
    }
    for (size_t c = 0; c < p->nchunks; c++) {
        const ark__pool_chunk *ch = &p->chunks[c];
        uintptr_t off = at - (uintptr_t)ch->start;
        if (at >= (uintptr_t)ch->start && off / p->page_bytes < ch->room) {
            uint64_t k = ch->first + off / p->page_bytes;
            return p->flat_slots + (k << v->page_shift) +
                   off % p->page_bytes / v->stride;
        }
    }
    size_t lo = 0, hi = p->naddr; /* the last page at or below at */
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
    return p->flat_slots + ((uint64_t)k << v->page_shift) + off / v->stride;
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
    ark_status st;
    if (p->s.keyed) { /* a component: the shorter path */
        st = ark__slots_keyed_check(&p->s, h);
        if (st == ARK_OK) {
            st = ark__slots_keyed_take(&p->s, h, &i, &slot);
        }
    } else {
        st = ark__slots_insert_at_check(&p->s, h);
        if (st == ARK_OK) {
            st = ark__slots_insert_at(&p->s, h, &i, &slot);
        }
    }
    if (st != ARK_OK) {
        return st;
    }
    ark__pool_link(&p->view, i);
    ark__copy_small(slot + p->view.slots.data_off, elem, p->view.elem_size);
    return ARK_OK;
}

/* ---- ids --------------------------------------------------------------- */

uint32_t ark_pool_id(const ark_pool *p, ark_handle h) {
    assert(p != NULL);
    uint64_t i;
    char *slot;
    return ark__slots_find(&p->s, h, &i, &slot) == ARK_OK ? (uint32_t)i : 0;
}

ark_handle ark_pool_handle_by_id(const ark_pool *p, uint32_t id) {
    assert(p != NULL);
    const ark__slots_view *v = &p->view.slots;
    if (id == 0 || id >= ark__pool_issued(&p->view)) {
        return ARK_NULL_HANDLE;
    }
    char *slot = ark__slots_at(v, id);
    if (*ark__slots_stamp(slot) == 0) {
        return ARK_NULL_HANDLE;
    }
    return ark__slots_handle(v, id, slot);
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
