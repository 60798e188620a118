/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/pool.h - private to ark: the pool's view (what its inline
 * functions read) and the bodies of those functions: get, insert, remove
 * and the iterator. Included by ark/pool.h; never include it directly, and
 * never use its names: they change without notice.
 */
#ifndef ARK_INTERNAL_POOL_H
#define ARK_INTERNAL_POOL_H

#include "ark/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the inline functions read and write, the first member of a pool: the
 * slots and the engine's free-slot queue (see ark__slots_view in core.h;
 * data_off is the element's offset in its slot), the occupancy bitmap, one bit
 * per slot, and the element size. A slot's bit is set while it is live; the
 * bits of slots never issued (slots.issued on, up to the end of the bitmap) are
 * set in advance, so that a fresh insert writes no bit, and iteration stops at
 * slots.issued. */
typedef struct ark__pool_view {
    ark__slots_view slots;
    uint64_t *live;
    size_t elem_size;
} ark__pool_view;

ARK__ALWAYS_INLINE ARK__INLINE const ark__pool_view *
ark__pool_view_of(const ark_pool *p) {
    return (const ark__pool_view *)(const void *)p;
}

ARK__ALWAYS_INLINE ARK__INLINE ark__pool_view *ark__pool_view_mut(ark_pool *p) {
    return (ark__pool_view *)(void *)p;
}

/* Set slot i's live bit (show it to iteration). */
ARK__ALWAYS_INLINE ARK__INLINE void ark__pool_link(ark__pool_view *v,
                                                   uint64_t i) {
    v->live[i >> 6] |= (uint64_t)1 << (i & 63);
}

/* Clear slot i's live bit; ~(1 << k) as a rotation of ~1, one
 * instruction fewer on a hot path. */
ARK__ALWAYS_INLINE ARK__INLINE void ark__pool_unlink(ark__pool_view *v,
                                                     uint64_t i) {
    unsigned k = (unsigned)(i & 63);
    uint64_t keep = ~(uint64_t)1;
    v->live[i >> 6] &= keep << k | keep >> ((64 - k) & 63);
}

/* A slot from the engine's fast take with its live bit set, of any element
 * size (ark.hpp's insert and emplace, which know the size when compiled);
 * NULL (nothing changed) when the general path must run (growth, the
 * rest). A fresh slot's bit is set already, so a fresh insert writes no
 * bit (a read-modify-write of the word the last insert wrote). */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__pool_take_any(ark__pool_view *v,
                                                        uint64_t *i) {
    if (ark__slots_queued(&v->slots) < ARK_REUSE_DELAY) {
        return ark__slots_take_fresh(&v->slots, i);
    }
    char *slot = ark__slots_take_reused(&v->slots, i);
    if (slot != NULL) {
        ark__pool_link(v, *i);
    }
    return slot;
}

/* The common case of insert and alloc, with no call: as
 * ark__pool_take_any for an element of at most ARK__INLINE_ELEM_MAX bytes
 * (what the inline copy takes); NULL for larger ones. */
ARK__ALWAYS_INLINE ARK__INLINE char *ark__pool_take(ark__pool_view *v,
                                                    uint64_t *i) {
    if (v->elem_size > ARK__INLINE_ELEM_MAX) {
        return NULL;
    }
    return ark__pool_take_any(v, i);
}

/* Insert and remove past their inline paths (src/pool.c). */
ARK_API ark_status ark__pool_insert_slow(ark_pool *p, const void *elem,
                                         ark_handle *out);
ARK_API ark_status ark__pool_remove_slow(ark_pool *p, ark_handle h);

/* Give back the slot of an element never built, at once and with
 * no on_remove, even from inside a hook (ark.hpp's emplace, when the
 * constructor throws). ARK_OK, or why h is not live. */
ARK_API ark_status ark__pool_discard(ark_pool *p, ark_handle h);

ARK__ALWAYS_INLINE ARK__INLINE ark_status ark_pool_insert(ark_pool *p,
                                                          const void *elem,
                                                          ark_handle *out) {
    /* Inline, so that a loop of inserts runs without a call: a slot from
     * the queue or a fresh one (ark__pool_take), the copy; growth, large
     * elements and the rest are out of line. Forced inline: left to its
     * inlining budget, a compiler may call the library's copy from a
     * user's loop instead (docs/design-notes.md, "Pool insert"). */
    ark__pool_view *v = ark__pool_view_mut(p);
    uint64_t i;
    char *slot = ark__pool_take(v, &i);
    if (slot == NULL) {
        return ark__pool_insert_slow(p, elem, out);
    }
    ark__copy_in(slot + v->slots.data_off, elem, v->elem_size);
    if (out != NULL) {
        *out = ark__slots_handle(&v->slots, i, slot);
    }
    return ARK_OK;
}

ARK__INLINE void *ark_pool_get(const ark_pool *p, ark_handle h) {
    const ark__slots_view *v = &ark__pool_view_of(p)->slots;
    char *slot = ark__slots_live(v, h);
    return slot != NULL ? slot + v->data_off : NULL;
}

ARK__INLINE ark_status ark_pool_remove(ark_pool *p, ark_handle h) {
    /* Inline for a live element with no hook to run (ark__slots_removable):
     * clear its live bit and queue its slot. A removal loop then keeps
     * several slot misses in flight; a call between them prevents it. */
    ark__pool_view *v = ark__pool_view_mut(p);
    uint64_t i;
    char *slot = ark__slots_removable(&v->slots, h, &i);
    if (slot == NULL) {
        return ark__pool_remove_slow(p, h);
    }
    ark__pool_unlink(v, i);
    ark__slots_release(&v->slots, i, slot);
    return ARK_OK;
}

/* How many bitmap words from l[0], which is full (every slot live), on are
 * full, up to ARK__POOL_RUN; the caller has checked that they lie in the
 * reserved range, whose slots are contiguous. A loop of constant count,
 * so that compilers unroll it and keep the iterator in registers. */
#define ARK__POOL_RUN 8
ARK__ALWAYS_INLINE ARK__INLINE unsigned
ark__pool_full_words(const uint64_t *l) {
    unsigned n = 1, full = 1;
    for (unsigned k = 1; k < ARK__POOL_RUN; k++) {
        full &= l[k] == UINT64_MAX;
        n += full;
    }
    return n;
}

/* The slots of p issued so far that have storage, the end of a
 * walk (a loaded pool may count slot 0 as issued before it has any). */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t
ark__pool_issued(const ark__pool_view *p) {
    uint64_t issued = p->slots.issued, cap = p->slots.cap;
    return issued < cap ? issued : cap;
}

/* The live bits of bitmap word w of p, whose slots below issued
 * (the pool's) have been issued: those past it are set in advance (see
 * ark__pool_view) and masked off here. */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__pool_word(const ark__pool_view *p,
                                                       uint64_t w,
                                                       uint64_t issued) {
    uint64_t bits = p->live[w];
    if (!ARK__LIKELY(w != (issued - 1) >> 6)) {
        bits &= UINT64_MAX >> ((0 - issued) & 63);
    }
    return bits;
}

/* Enter the next bitmap word with a live bit after the current one; false
 * at the end of the walk. The bitmap is read through the pool because
 * inserts may reallocate it; slots never move, and the 64 slots of a word
 * are always contiguous. Full words that follow each other in the
 * reserved range are entered as one run of up to ARK__POOL_RUN words,
 * walked by address: the end of the walk of a word is a mispredicted
 * branch, and runs make fewer of them. */
ARK__ALWAYS_INLINE ARK__INLINE bool ark__pool_iter_advance(ark_pool_iter *it) {
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
    it->base = ark__slots_at(&p->slots, w << 6);
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

/* Make slot, whose stamp is stamp and whose handle with generation 0 is
 * hb, the iterator's current element. The handle is ark__handle_make's,
 * from the iterator's copy of the layout, so that a loop using it reads
 * nothing from the pool per element. */
ARK__ALWAYS_INLINE ARK__INLINE void
ark__pool_iter_at(ark_pool_iter *it, char *slot, uint64_t hb, uint32_t stamp) {
    it->elem = slot + it->off;
    it->handle = hb | ((uint64_t)(stamp - 1) << it->gen_shift);
}

/* How far ahead of the slot it visits the walk asks for memory, in bytes.
 * The hardware's stream prefetchers stop at every 4 KiB page, so a walk
 * over slots that are not in the caches stalls there without a hint; one
 * per step, 4 KiB on, measured best (docs/design-notes.md, "Pool
 * iteration"). */
#define ARK__POOL_AHEAD 4096

/* One step of the walk within the current word or run: 1 at a live
 * element (made current), 0 at a slot removed since the walk entered its
 * word (its stamp reads 0), -1 when the word is used up. A run of words
 * whose slots were all live when the walk entered it is walked by
 * address, one stride a step, without the bit arithmetic. In a word with
 * holes each step takes the lowest bit left (the bits are taken when the
 * walk enters the word, so a step depends on the last only through one
 * bit-clear, and a hole costs no branch). The full-word case is tested
 * first and marked likely, so that its steps are one short stretch of
 * code with one taken branch, whatever address the linker gives the
 * user's loop (docs/design-notes.md, "Pool iteration"). */
ARK__ALWAYS_INLINE ARK__INLINE int ark__pool_iter_step(ark_pool_iter *it) {
    char *slot;
    uint64_t hb;
    if (ARK__LIKELY(it->left != 0)) {
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
    if (!ARK__LIKELY(stamp != 0)) {
        return 0;
    }
    ark__pool_iter_at(it, slot, hb, stamp);
    return 1;
}

/* Advance to the next live element: one step, and only if that found
 * none, a loop over removed slots and the next words (one loop over all
 * three cases put a second taken branch in every step of a user's loop). */
ARK__ALWAYS_INLINE ARK__INLINE void ark_pool_iter_next(ark_pool_iter *it) {
    int r = ark__pool_iter_step(it);
    while (!ARK__LIKELY(r > 0)) {
        if (r < 0 && !ark__pool_iter_advance(it)) {
            it->elem = NULL;
            it->more = false;
            return;
        }
        r = ark__pool_iter_step(it);
    }
}

/* Return an iterator at the first live element (or at the end). */
ARK__ALWAYS_INLINE ARK__INLINE ark_pool_iter
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

/* Return true while the iterator is at an element (elem is not NULL). It
 * tests a flag rather than elem: on the path of a step that found an
 * element the flag is a constant, so the compiler drops the test there,
 * whereas it cannot always tell that slot + offset is not NULL. */
ARK__ALWAYS_INLINE ARK__INLINE bool
ark_pool_iter_valid(const ark_pool_iter *it) {
    return it->more;
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_POOL_H */
