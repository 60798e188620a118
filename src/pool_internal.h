/* SPDX-License-Identifier: MIT */
/*
 * pool_internal.h - the pool's private struct, for its own sources (pool.c,
 * snapshot/pool_snap.c) and the tests; never installed.
 */
#ifndef ARK_POOL_INTERNAL_H
#define ARK_POOL_INTERNAL_H

#include "ark/pool.h"
#include "engine/slots.h"

/* A reservation of address space for pages past the reserved range (see
 * pool.c, "Storage"): pages first .. first + room - 1, contiguous. */
typedef struct ark__pool_chunk {
    char *base;       /* the reservation */
    size_t bytes;     /* its size */
    char *start;      /* page first (2 MiB aligned inside base) */
    size_t committed; /* bytes from start committed */
    uint64_t first;   /* the number of its first page */
    uint64_t room;    /* pages it has room for */
} ark__pool_chunk;

struct ark_pool {
    ark__pool_view view; /* first: read by pool.h */
    ark__slots s;
    size_t live_words; /* words allocated for view.live */
    /* pages past the reserved range: [0, npages) open (in the page table,
     * below cap), [npages, nbacked) backed only; a backed page lies in a
     * chunk or, when no chunk holds it, is a block from the allocator
     * whose address pages[] holds already */
    char **pages;
    size_t *by_addr; /* numbers of the open allocator pages, by address */
    size_t npages, nbacked, naddr, pages_cap, addr_cap;
    ark__pool_chunk *chunks; /* in page order */
    size_t nchunks, chunks_cap;
    bool no_chunks;        /* a chunk could not be reserved: allocator */
    char *flat;            /* the reserved range (2 MiB aligned), or NULL */
    char *flat_base;       /* the reservation (flat is aligned inside) */
    size_t flat_bytes;     /* its size */
    uint64_t flat_slots;   /* slots the reservation holds */
    size_t flat_committed; /* bytes from flat committed */
    size_t flat_open;      /* bytes from flat open (nflat follows) */
    size_t page_bytes, page_align;
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user;
};

/* Return true if p's first slots lie in a reserved address range. */
bool ark__pool_reserved(const ark_pool *p);

/* Return the number of slots retired for exhausted generations. */
uint64_t ark__pool_retired(const ark_pool *p);

#endif /* ARK_POOL_INTERNAL_H */
