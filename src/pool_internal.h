/* SPDX-License-Identifier: MIT */
/*
 * pool_internal.h - the pool's private struct, for its own sources (pool.c,
 * snapshot/pool_snap.c) and the tests; never installed.
 */
#ifndef ARK_POOL_INTERNAL_H
#define ARK_POOL_INTERNAL_H

#include "ark/pool.h"
#include "engine/slots.h"

struct ark_pool {
    ark__pool_view view; /* first: read by pool.h */
    ark__slots s;
    size_t live_words; /* words allocated for view.live */
    char **pages;      /* pages past the reserved range */
    size_t *by_addr;   /* page numbers sorted by address, for handle_of */
    size_t npages, pages_cap, addr_cap;
    char *flat;            /* the reserved range (2 MiB aligned), or NULL */
    char *flat_base;       /* the reservation (flat is aligned inside) */
    size_t flat_bytes;     /* its size */
    uint64_t flat_slots;   /* slots the reservation holds */
    size_t flat_committed; /* bytes from flat committed */
    size_t page_bytes, page_align;
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user;
};

/* Return true if p's first slots lie in a reserved address range. */
bool ark__pool_reserved(const ark_pool *p);

/* Return the number of slots retired for exhausted generations. */
uint64_t ark__pool_retired(const ark_pool *p);

#endif /* ARK_POOL_INTERNAL_H */
