/* SPDX-License-Identifier: MIT */
/*
 * ref.c - ark_ref's out-of-line twins, the autorelease pool and ark_refvec.
 *
 * Re-entrancy rule shared by both containers: every state change is
 * complete before a release runs, because a release may call a destroy
 * callback that uses the container again (a node that removes its
 * children, an object that autoreleases another). Hence replace retains
 * before it releases, and clear/copy/move/destroy detach the old array
 * before releasing what it held.
 */
#include "ark/ref.h"

#include "base/base.h"

#include <assert.h>
#include <string.h>

/* C++ declares the count as a plain uint32_t; the layouts must agree. */
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t),
               "_Atomic uint32_t must be the size of uint32_t");
_Static_assert(_Alignof(_Atomic uint32_t) == _Alignof(uint32_t),
               "_Atomic uint32_t must be aligned like uint32_t");

/* The one external definition of each inline function of ref.h. */
ARK_API extern inline ark_ref *ark_ref_retain_atomic(ark_ref *r);
ARK_API extern inline void ark_ref_release_atomic(ark_ref *r);
ARK_API extern inline ark_ref *ark_ref_retain(ark_ref *r);
ARK_API extern inline void ark_ref_release(ark_ref *r);
ARK_API extern inline uint32_t ark_ref_count(const ark_ref *r);
ARK_API extern inline ark_ref *ark_refvec_at(const ark_refvec *v, size_t i);
ARK_API extern inline size_t ark_refvec_count(const ark_refvec *v);

void ark_ref_init(ark_ref *r, void (*destroy)(ark_ref *r)) {
    assert(r != NULL);
    atomic_init(&r->count, 1);
    r->atomic = 0;
    r->destroy = destroy;
}

void ark_ref_init_atomic(ark_ref *r, void (*destroy)(ark_ref *r)) {
    assert(r != NULL);
    atomic_init(&r->count, 1);
    r->atomic = 1;
    r->destroy = destroy;
}

/* ---- a growable array of ark_ref *, shared by both containers ------- */

/* Every array holds at most ARK_REFVEC_MAX pointers, so its byte size is
 * computed without overflow and stays at most PTRDIFF_MAX. */
_Static_assert(ARK_REFVEC_MAX <= PTRDIFF_MAX / sizeof(ark_ref *),
               "ARK_REFVEC_MAX arrays must fit in PTRDIFF_MAX bytes");

/* Allocate an array of n pointers (0 < n <= ARK_REFVEC_MAX), or NULL. */
static ark_ref **refs_alloc(const ark_allocator *a, size_t n) {
    assert(n > 0 && n <= ARK_REFVEC_MAX);
    return (ark_ref **)ark__alloc(a, n * sizeof(ark_ref *),
                                  _Alignof(ark_ref *));
}

static void refs_free(const ark_allocator *a, ark_ref **items, size_t cap) {
    ark__free(a, items, cap * sizeof(ark_ref *));
}

/* Grow *items (holding len of *cap) to at least need slots; on failure
 * nothing changes. A need past ARK_REFVEC_MAX fails before the allocator
 * is asked; growth by half is capped there. */
static ark_status refs_reserve(const ark_allocator *a, ark_ref ***items,
                               size_t len, size_t *cap, size_t need) {
    if (need <= *cap) {
        return ARK_OK;
    }
    if (need > ARK_REFVEC_MAX) {
        return ARK_ENOMEM;
    }
    /* *cap <= ARK_REFVEC_MAX <= SIZE_MAX / 8, so this cannot wrap. */
    size_t grown = *cap < 8 ? 8 : *cap + *cap / 2;
    if (grown > ARK_REFVEC_MAX) {
        grown = ARK_REFVEC_MAX;
    }
    if (grown < need) {
        grown = need;
    }
    ark_ref **fresh = refs_alloc(a, grown);
    if (fresh == NULL) {
        return ARK_ENOMEM;
    }
    if (len > 0) {
        memcpy(fresh, *items, len * sizeof(ark_ref *));
    }
    refs_free(a, *items, *cap);
    *items = fresh;
    *cap = grown;
    return ARK_OK;
}

/* ---- autorelease pool ------------------------------------------------ */

struct ark_autorelease_pool {
    ark_ref **items; /* entries [head, len) wait for the drain */
    size_t head;     /* next entry the (possibly nested) drain releases */
    size_t len;
    size_t cap;
    ark_allocator alloc;
};

ark_status ark_autorelease_pool_create(ark_autorelease_pool **out,
                                       const ark_allocator *a) {
    assert(out != NULL);
    ark_allocator al;
    ark_status s = ark__allocator_init(&al, a);
    if (s != ARK_OK) {
        return s;
    }
    ark_autorelease_pool *p = (ark_autorelease_pool *)ark__alloc(
        &al, sizeof *p, _Alignof(ark_autorelease_pool));
    if (p == NULL) {
        return ARK_ENOMEM;
    }
    memset(p, 0, sizeof *p);
    p->alloc = al;
    *out = p;
    return ARK_OK;
}

void ark_autorelease_pool_destroy(ark_autorelease_pool *p) {
    if (p == NULL) {
        return;
    }
    ark_autorelease_drain(p);
    ark_allocator al = p->alloc;
    refs_free(&al, p->items, p->cap);
    ark__free(&al, p, sizeof *p);
}

ark_status ark_autorelease(ark_autorelease_pool *p, ark_ref *r) {
    assert(p != NULL);
    if (r == NULL) {
        return ARK_EINVAL;
    }
    ark_status s =
        refs_reserve(&p->alloc, &p->items, p->len, &p->cap, p->len + 1);
    if (s != ARK_OK) {
        return s;
    }
    p->items[p->len++] = r;
    return ARK_OK;
}

size_t ark_autorelease_drain(ark_autorelease_pool *p) {
    assert(p != NULL);
    size_t made = 0;
    /* Re-read items and len every step: a destroy callback may append
     * (and so reallocate) or run a nested drain that advances head. */
    while (p->head < p->len) {
        ark_ref *r = p->items[p->head++];
        made++;
        ark_ref_release(r);
    }
    p->head = 0;
    p->len = 0;
    return made;
}

size_t ark_autorelease_pool_count(const ark_autorelease_pool *p) {
    assert(p != NULL);
    return p->len - p->head;
}

/* ---- ark_refvec ------------------------------------------------------ */

ark_status ark_refvec_create(ark_refvec **out, const ark_allocator *a) {
    assert(out != NULL);
    ark_allocator al;
    ark_status s = ark__allocator_init(&al, a);
    if (s != ARK_OK) {
        return s;
    }
    ark_refvec *v = (ark_refvec *)ark__alloc(&al, sizeof *v, 0);
    if (v == NULL) {
        return ARK_ENOMEM;
    }
    v->items = NULL;
    v->len = 0;
    v->cap = 0;
    v->alloc = al;
    v->self = al;
    *out = v;
    return ARK_OK;
}

/* Release items[0, len) front to back, then free the array through from,
 * the allocator it came from. from is a copy: a destroy callback may move
 * another vector, and its allocator, into the vector the array left. */
static void release_array(ark_allocator from, ark_ref **items, size_t len,
                          size_t cap) {
    for (size_t i = 0; i < len; i++) {
        ark_ref_release(items[i]);
    }
    refs_free(&from, items, cap);
}

void ark_refvec_destroy(ark_refvec *v) {
    if (v == NULL) {
        return;
    }
    /* A destroy callback may refill the vector; release until empty. */
    while (v->len > 0) {
        ark_refvec_clear(v);
    }
    refs_free(&v->alloc, v->items, v->cap);
    ark_allocator self = v->self;
    ark__free(&self, v, sizeof *v);
}

ark_status ark_refvec_reserve(ark_refvec *v, size_t n) {
    assert(v != NULL);
    return refs_reserve(&v->alloc, &v->items, v->len, &v->cap, n);
}

ark_status ark_refvec_push(ark_refvec *v, ark_ref *r) {
    return ark_refvec_insert(v, ark_refvec_count(v), r);
}

ark_status ark_refvec_insert(ark_refvec *v, size_t i, ark_ref *r) {
    assert(v != NULL);
    if (r == NULL) {
        return ARK_EINVAL;
    }
    if (i > v->len) {
        return ARK_ERANGE;
    }
    ark_status s =
        refs_reserve(&v->alloc, &v->items, v->len, &v->cap, v->len + 1);
    if (s != ARK_OK) {
        return s;
    }
    memmove(v->items + i + 1, v->items + i, (v->len - i) * sizeof(ark_ref *));
    v->items[i] = ark_ref_retain(r);
    v->len++;
    return ARK_OK;
}

ark_status ark_refvec_replace(ark_refvec *v, size_t i, ark_ref *r) {
    assert(v != NULL);
    if (r == NULL) {
        return ARK_EINVAL;
    }
    if (i >= v->len) {
        return ARK_ERANGE;
    }
    ark_ref *old = v->items[i];
    v->items[i] = ark_ref_retain(r);
    ark_ref_release(old);
    return ARK_OK;
}

ark_status ark_refvec_erase(ark_refvec *v, size_t i) {
    assert(v != NULL);
    if (i >= v->len) {
        return ARK_ERANGE;
    }
    ark_ref *old = v->items[i];
    memmove(v->items + i, v->items + i + 1,
            (v->len - i - 1) * sizeof(ark_ref *));
    v->len--;
    ark_ref_release(old);
    return ARK_OK;
}

ark_status ark_refvec_pop(ark_refvec *v) {
    assert(v != NULL);
    if (v->len == 0) {
        return ARK_ERANGE;
    }
    return ark_refvec_erase(v, v->len - 1);
}

void ark_refvec_clear(ark_refvec *v) {
    assert(v != NULL);
    ark_ref **items = v->items;
    size_t len = v->len, cap = v->cap;
    if (len == 0) {
        return;
    }
    /* Detach, release, then give the array back if no destroy callback
     * refilled the vector meanwhile, or moved another vector's array (and
     * allocator) into it: the array goes back to the allocator it came
     * from. */
    ark_allocator from = v->alloc;
    v->items = NULL;
    v->len = 0;
    v->cap = 0;
    for (size_t i = 0; i < len; i++) {
        ark_ref_release(items[i]);
    }
    bool same = v->alloc.alloc == from.alloc && v->alloc.free == from.free &&
                v->alloc.ctx == from.ctx;
    if (v->items == NULL && same) {
        v->items = items;
        v->cap = cap;
    } else {
        refs_free(&from, items, cap);
    }
}

ark_status ark_refvec_copy(ark_refvec *dst, const ark_refvec *src) {
    assert(dst != NULL && src != NULL);
    if (dst == src) {
        return ARK_OK;
    }
    if (src->len == 0) {
        ark_refvec_clear(dst);
        return ARK_OK;
    }
    ark_ref **fresh = refs_alloc(&dst->alloc, src->len);
    if (fresh == NULL) {
        return ARK_ENOMEM;
    }
    for (size_t i = 0; i < src->len; i++) {
        fresh[i] = ark_ref_retain(src->items[i]);
    }
    ark_ref **old = dst->items;
    size_t old_len = dst->len, old_cap = dst->cap;
    dst->items = fresh;
    dst->len = src->len;
    dst->cap = src->len;
    release_array(dst->alloc, old, old_len, old_cap);
    return ARK_OK;
}

void ark_refvec_move(ark_refvec *dst, ark_refvec *src) {
    assert(dst != NULL && src != NULL);
    if (dst == src) {
        return;
    }
    ark_allocator old_alloc = dst->alloc;
    ark_ref **old = dst->items;
    size_t old_len = dst->len, old_cap = dst->cap;
    dst->items = src->items;
    dst->len = src->len;
    dst->cap = src->cap;
    dst->alloc = src->alloc;
    src->items = NULL;
    src->len = 0;
    src->cap = 0;
    release_array(old_alloc, old, old_len, old_cap);
}

/* ark_refmap: values are stored in the idmap as uintptr_t. */

ARK_API extern inline ark_ref *ark_refmap_get(const ark_refmap *m,
                                              uint64_t key);

ark_status ark_refmap_create(ark_refmap **out, const ark_allocator *a) {
    assert(out != NULL);
    ark_allocator self;
    ark_status s = ark__allocator_init(&self, a);
    if (s != ARK_OK) {
        return s;
    }
    ark_refmap *m = ark__alloc(&self, sizeof *m, 0);
    if (m == NULL) {
        return ARK_ENOMEM;
    }
    s = ark_idmap_create(&m->map, a);
    if (s != ARK_OK) {
        ark__free(&self, m, sizeof *m);
        return s;
    }
    m->alloc = self;
    *out = m;
    return ARK_OK;
}

/* Entries a clear takes out of the map before releasing them. */
#define CLEAR_BATCH 64

void ark_refmap_clear(ark_refmap *m) {
    assert(m != NULL);
    /* Take a batch of entries out of the map, then release them: a
     * destroy callback sees a map that no longer lists what is being
     * released, and may use it, put included. The walk resumes at the
     * group it reached while the table stays where it was, and starts over
     * when the end leaves entries behind it, so a clear is one pass over
     * the table unless callbacks put. */
    ark_idmap *map = m->map;
    size_t g = 0;
    while (ark_idmap_count(map) > 0) {
        ark_ref *batch[CLEAR_BATCH];
        size_t n = 0;
        ark_idmap_iter it = ark__idmap_iter_from(map, g);
        for (; ark_idmap_iter_valid(&it) && n < CLEAR_BATCH;
             ark_idmap_iter_next(&it)) {
            batch[n++] = (ark_ref *)(uintptr_t)it.value;
            ark_idmap_remove(map, it.key); /* allowed at the iterator */
        }
        g = ark_idmap_iter_valid(&it) ? it.group : 0;
        const void *slots = map->slots;
        size_t gmask = map->gmask;
        for (size_t k = 0; k < n; k++) {
            ark_ref_release(batch[k]);
        }
        if (map->slots != slots || map->gmask != gmask) {
            g = 0; /* a callback's put moved the table */
        }
    }
}

void ark_refmap_destroy(ark_refmap *m) {
    if (m == NULL) {
        return;
    }
    ark_refmap_clear(m);
    ark_idmap_destroy(m->map);
    ark_allocator self = m->alloc;
    ark__free(&self, m, sizeof *m);
}

ark_status ark_refmap_put(ark_refmap *m, uint64_t key, ark_ref *r) {
    assert(m != NULL);
    if (r == NULL) {
        return ARK_EINVAL;
    }
    uint64_t *slot = ark_idmap_get_ptr(m->map, key);
    if (slot != NULL) {
        /* Overwrite in place: never allocates. Retain before releasing so
         * that putting the value already there changes nothing. */
        ark_ref *old = (ark_ref *)(uintptr_t)*slot;
        ark_ref_retain(r);
        *slot = (uint64_t)(uintptr_t)r;
        ark_ref_release(old);
        return ARK_OK;
    }
    if (ark_idmap_count(m->map) >= ARK_REFMAP_MAX) {
        return ARK_ENOMEM;
    }
    ark_status s = ark_idmap_put(m->map, key, (uint64_t)(uintptr_t)r);
    if (s != ARK_OK) {
        return s;
    }
    ark_ref_retain(r);
    return ARK_OK;
}

bool ark_refmap_remove(ark_refmap *m, uint64_t key) {
    assert(m != NULL);
    uint64_t v;
    if (!ark_idmap_get(m->map, key, &v)) {
        return false;
    }
    ark_idmap_remove(m->map, key);
    ark_ref_release((ark_ref *)(uintptr_t)v);
    return true;
}

size_t ark_refmap_count(const ark_refmap *m) {
    assert(m != NULL);
    return ark_idmap_count(m->map);
}

ark_status ark_refmap_reserve(ark_refmap *m, size_t n) {
    assert(m != NULL);
    if (n > ARK_REFMAP_MAX) {
        return ARK_ENOMEM;
    }
    return ark_idmap_reserve(m->map, n);
}

typedef struct each_ctx {
    bool (*fn)(uint64_t key, ark_ref *r, void *ud);
    void *ud;
} each_ctx;

static bool each_value(uint64_t key, uint64_t value, void *ud) {
    const each_ctx *c = ud;
    return c->fn(key, (ark_ref *)(uintptr_t)value, c->ud);
}

void ark_refmap_each(const ark_refmap *m,
                     bool (*fn)(uint64_t key, ark_ref *r, void *ud), void *ud) {
    assert(m != NULL && fn != NULL);
    each_ctx c = {fn, ud};
    ark_idmap_each(m->map, each_value, &c);
}
