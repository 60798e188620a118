/* SPDX-License-Identifier: MIT */
/*
 * slotarray.h - the generational slot array a C programmer writes by hand
 * in an afternoon: the baseline ark_pool has to beat.
 *
 * One growable array of slots, slot = {element, uint32 generation}. The
 * generation is odd while the slot is live and even while it is free; a
 * handle is index | generation << 32 (always an odd generation, so handle
 * 0 is never issued). Free slots form a LIFO list threaded through the
 * holes: a free slot's element bytes hold the index of the next free slot.
 * Growth doubles the array with realloc, so element addresses move on
 * insert (unlike ark_pool's). No hooks, no deferred removal, no tags, no
 * sealing; a slot whose generation wraps after 2^31 reuses starts over
 * (an afternoon's version does not retire it).
 *
 * Define SA_ELEM (the element type) before including; default `elem`.
 * Everything is static inline, as a hand-written version in a user's own
 * file would be.
 */
#ifndef ARK_BENCH_SLOTARRAY_H
#define ARK_BENCH_SLOTARRAY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef SA_ELEM
#define SA_ELEM elem
#endif

#define SA_NONE UINT32_MAX

typedef uint64_t sa_handle;

typedef struct sa_slot {
    union {
        SA_ELEM v;     /* live: the element */
        uint32_t next; /* free: the next free slot, or SA_NONE */
    } u;
    uint32_t gen; /* odd: live, even: free */
} sa_slot;

typedef struct slotarray {
    sa_slot *slots;
    uint32_t len, cap; /* slots [0, len) have been handed out once */
    uint32_t free_head;
    uint32_t count; /* live elements */
} slotarray;

static inline void sa_init(slotarray *a) {
    a->slots = NULL;
    a->len = a->cap = a->count = 0;
    a->free_head = SA_NONE;
}

static inline void sa_free(slotarray *a) {
    free(a->slots);
    sa_init(a);
}

/* Insert a copy of *v; return its handle. Exits on out of memory. */
static inline sa_handle sa_insert(slotarray *a, const SA_ELEM *v) {
    uint32_t i = a->free_head;
    if (i != SA_NONE) {
        a->free_head = a->slots[i].u.next;
    } else {
        if (a->len == a->cap) {
            uint32_t ncap = a->cap < 16 ? 16 : a->cap * 2;
            sa_slot *s = (sa_slot *)realloc(a->slots, ncap * sizeof *s);
            if (s == NULL) {
                fprintf(stderr, "slotarray: out of memory\n");
                exit(1);
            }
            a->slots = s;
            a->cap = ncap;
        }
        i = a->len++;
        a->slots[i].gen = 0;
    }
    sa_slot *s = &a->slots[i];
    s->u.v = *v;
    s->gen++; /* even -> odd: live */
    a->count++;
    return (sa_handle)i | (sa_handle)s->gen << 32;
}

/* The element of h, or NULL if h is not live. */
static inline SA_ELEM *sa_get(const slotarray *a, sa_handle h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (i >= a->len) {
        return NULL;
    }
    sa_slot *s = &a->slots[i];
    return s->gen == g && (g & 1) ? &s->u.v : NULL;
}

/* Remove h; return 0, or -1 if h is not live. */
static inline int sa_remove(slotarray *a, sa_handle h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (i >= a->len || a->slots[i].gen != g || !(g & 1)) {
        return -1;
    }
    sa_slot *s = &a->slots[i];
    s->gen++; /* odd -> even: free */
    s->u.next = a->free_head;
    a->free_head = i;
    a->count--;
    return 0;
}

static inline uint32_t sa_count(const slotarray *a) { return a->count; }

/* Iterate: for (uint32_t i = 0; i < a->len; i++) if (a->slots[i].gen & 1)
 * use(&a->slots[i].u.v); written out by the caller, as a user would. */

#endif /* ARK_BENCH_SLOTARRAY_H */
