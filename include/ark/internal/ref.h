/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/ref.h - private to ark: the bodies of the inline counting
 * functions (C only; C++ calls the library's) and the structs of
 * ark_refvec and ark_refmap. Included by ark/ref.h; never include it
 * directly, and never use its names: they change without notice.
 */
#ifndef ARK_INTERNAL_REF_H
#define ARK_INTERNAL_REF_H

#include "ark/ref.h"

#ifndef __cplusplus
#include <assert.h>
#include <stdatomic.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct ark_refvec {
    ark_ref **items; /* elements [0, len) */
    size_t len;
    size_t cap;          /* slots allocated */
    ark_allocator alloc; /* owns items (travels with it on move) */
    ark_allocator self;  /* owns this struct */
};

struct ark_refmap {
    ark_idmap *map;      /* key -> (uintptr_t)ark_ref * */
    ark_allocator alloc; /* owns this struct */
};

#ifndef __cplusplus
ARK__INLINE ark_ref *ark_ref_retain_atomic(ark_ref *r) {
    uint32_t c = atomic_load_explicit(&r->count, memory_order_relaxed);
    for (;;) {
        assert(c != 0 && "retain of a destroyed ark_ref");
        assert(c < UINT32_MAX - 1 && "ark_ref count overflow");
        if (c == 0 || c == UINT32_MAX) {
            return r;
        }
        uint32_t next = c < UINT32_MAX - 1 ? c + 1 : UINT32_MAX;
        if (atomic_compare_exchange_weak_explicit(&r->count, &c, next,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed)) {
            return r;
        }
    }
}

ARK__INLINE void ark_ref_release_atomic(ark_ref *r) {
    uint32_t c = atomic_load_explicit(&r->count, memory_order_relaxed);
    for (;;) {
        assert(c != 0 && "release of a destroyed ark_ref");
        if (c == 0 || c == UINT32_MAX) {
            return;
        }
        memory_order order =
            c == 1 ? memory_order_acq_rel : memory_order_release;
        if (atomic_compare_exchange_weak_explicit(&r->count, &c, c - 1, order,
                                                  memory_order_relaxed)) {
            break;
        }
    }
    if (c == 1 && r->destroy != NULL) {
        r->destroy(r);
    }
}

ARK__INLINE ark_ref *ark_ref_retain(ark_ref *r) {
    if (r->atomic) {
        return ark_ref_retain_atomic(r);
    }
    uint32_t c = atomic_load_explicit(&r->count, memory_order_relaxed);
    assert(c != 0 && "retain of a destroyed ark_ref");
    assert(c < UINT32_MAX - 1 && "ark_ref count overflow");
    if (c != 0 && c != UINT32_MAX) {
        c = c < UINT32_MAX - 1 ? c + 1 : UINT32_MAX;
        atomic_store_explicit(&r->count, c, memory_order_relaxed);
    }
    return r;
}

ARK__INLINE void ark_ref_release(ark_ref *r) {
    if (r->atomic) {
        ark_ref_release_atomic(r);
        return;
    }
    uint32_t c = atomic_load_explicit(&r->count, memory_order_relaxed);
    assert(c != 0 && "release of a destroyed ark_ref");
    if (c == 0 || c == UINT32_MAX) {
        return;
    }
    atomic_store_explicit(&r->count, c - 1, memory_order_relaxed);
    if (c == 1 && r->destroy != NULL) {
        r->destroy(r);
    }
}

ARK__INLINE uint32_t ark_ref_count(const ark_ref *r) {
    /* C11 atomic loads take a non-const pointer until C17's DR 459; the
     * cast goes through uintptr_t so that -Wcast-qual stays quiet. */
    return atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)&r->count,
                                memory_order_relaxed);
}
#endif /* __cplusplus */

ARK__INLINE ark_ref *ark_refvec_at(const ark_refvec *v, size_t i) {
    return i < v->len ? v->items[i] : NULL;
}

ARK__INLINE size_t ark_refvec_count(const ark_refvec *v) { return v->len; }

ARK__INLINE ark_ref *ark_refmap_get(const ark_refmap *m, uint64_t key) {
    uint64_t v;
    return ark_idmap_get(m->map, key, &v) ? (ark_ref *)(uintptr_t)v : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_REF_H */
