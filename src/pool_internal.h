/* SPDX-License-Identifier: MIT */
/*
 * pool_internal.h - checks on ark_pool for the tests; never installed.
 */
#ifndef ARK_POOL_INTERNAL_H
#define ARK_POOL_INTERNAL_H

#include "ark/pool.h"

/*
 * Check every invariant of p: live bits match stamps, count matches the
 * live bits, the free ring and pending list hold distinct free slots, and
 * every issued slot is exactly one of live, free, pending, retired (or slot
 * 0). Returns ARK_OK or ARK_ECORRUPT. O(slots).
 */
ark_status ark__pool_validate(const ark_pool *p);

/* Return true if p's first slots lie in a reserved address range. */
bool ark__pool_reserved(const ark_pool *p);

/* Return the number of slots retired for exhausted generations. */
uint64_t ark__pool_retired(const ark_pool *p);

#endif /* ARK_POOL_INTERNAL_H */
