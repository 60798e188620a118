/* SPDX-License-Identifier: MIT */
/*
 * sparse_set.h - a hand-rolled entity-component store of the EnTT design,
 * the peer of ark's entities in bench_entity.c: what a C programmer
 * writes after reading how EnTT stores components.
 *
 * Entities are 64-bit: index | version << 32, with a version per index and
 * a stack of free indices (EnTT reuses the last one freed). Each component
 * type is a sparse set: sparse[index] = position + 1 in the packed arrays
 * (0: none), dense[position] = the entity, data[position] = its
 * component. get checks that dense[position] is the entity (so a stale
 * entity finds nothing); remove swaps the last element into the hole. A
 * tag is a sparse set with no data.
 */
#ifndef ARK_BENCH_SPARSE_SET_H
#define ARK_BENCH_SPARSE_SET_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t ss_entity;

typedef struct ss_registry {
    uint32_t *version; /* per index */
    uint32_t n, cap;   /* indices handed out, allocated */
    uint32_t *free;    /* indices to reuse, last freed on top */
    uint32_t nfree;
} ss_registry;

typedef struct ss_set {
    uint32_t *sparse; /* index -> position + 1 */
    uint32_t scap;
    ss_entity *dense;
    char *data; /* esz bytes per element; NULL for a tag */
    size_t esz;
    uint32_t n, cap;
} ss_set;

static void *ss_grow(void *p, size_t bytes) {
    void *q = realloc(p, bytes);
    if (q == NULL) {
        abort();
    }
    return q;
}

static inline ss_entity ss_create(ss_registry *r) {
    uint32_t i;
    if (r->nfree > 0) {
        i = r->free[--r->nfree];
    } else {
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 1024;
            r->version = ss_grow(r->version, r->cap * sizeof *r->version);
            r->free = ss_grow(r->free, r->cap * sizeof *r->free);
        }
        i = r->n++;
        r->version[i] = 0;
    }
    return i | (ss_entity)r->version[i] << 32;
}

static inline int ss_alive(const ss_registry *r, ss_entity e) {
    uint32_t i = (uint32_t)e;
    return i < r->n && r->version[i] == (uint32_t)(e >> 32);
}

static inline void *ss_get(const ss_set *s, ss_entity e) {
    uint32_t i = (uint32_t)e;
    if (i >= s->scap) {
        return NULL;
    }
    uint32_t p = s->sparse[i];
    if (p == 0 || s->dense[p - 1] != e) {
        return NULL;
    }
    return s->data + (size_t)(p - 1) * s->esz;
}

static inline int ss_has(const ss_set *s, ss_entity e) {
    uint32_t i = (uint32_t)e;
    return i < s->scap && s->sparse[i] != 0 && s->dense[s->sparse[i] - 1] == e;
}

/* Add e's component (a copy of v, or nothing for a tag). */
static inline void ss_add(ss_set *s, ss_entity e, const void *v) {
    uint32_t i = (uint32_t)e;
    if (i >= s->scap) {
        uint32_t n = s->scap ? s->scap : 1024;
        while (n <= i) {
            n *= 2;
        }
        s->sparse = ss_grow(s->sparse, n * sizeof *s->sparse);
        memset(s->sparse + s->scap, 0, (n - s->scap) * sizeof *s->sparse);
        s->scap = n;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->dense = ss_grow(s->dense, s->cap * sizeof *s->dense);
        if (s->esz != 0) {
            s->data = ss_grow(s->data, s->cap * s->esz);
        }
    }
    s->dense[s->n] = e;
    if (s->esz != 0 && v != NULL) {
        memcpy(s->data + (size_t)s->n * s->esz, v, s->esz);
    }
    s->sparse[i] = ++s->n;
}

static inline void ss_remove(ss_set *s, ss_entity e) {
    if (!ss_has(s, e)) {
        return;
    }
    uint32_t i = (uint32_t)e, p = s->sparse[i] - 1, last = --s->n;
    if (p != last) {
        ss_entity moved = s->dense[last];
        s->dense[p] = moved;
        if (s->esz != 0) {
            memcpy(s->data + (size_t)p * s->esz,
                   s->data + (size_t)last * s->esz, s->esz);
        }
        s->sparse[(uint32_t)moved] = p + 1;
    }
    s->sparse[i] = 0;
}

/* Destroy e: remove it from every set, then free its index. */
static inline void ss_destroy(ss_registry *r, ss_set *const *sets,
                              int nsets, ss_entity e) {
    if (!ss_alive(r, e)) {
        return;
    }
    for (int k = 0; k < nsets; k++) {
        ss_remove(sets[k], e);
    }
    uint32_t i = (uint32_t)e;
    r->version[i]++;
    r->free[r->nfree++] = i;
}

static inline void ss_set_free(ss_set *s) {
    free(s->sparse);
    free(s->dense);
    free(s->data);
    memset(s, 0, sizeof *s);
}

static inline void ss_registry_free(ss_registry *r) {
    free(r->version);
    free(r->free);
    memset(r, 0, sizeof *r);
}

#endif /* ARK_BENCH_SPARSE_SET_H */
