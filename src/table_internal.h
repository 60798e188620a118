/* SPDX-License-Identifier: MIT */
/*
 * table_internal.h - ark_table helpers for the tests; never installed.
 */
#ifndef ARK_TABLE_INTERNAL_H
#define ARK_TABLE_INTERNAL_H

#include "ark/table.h"

/*
 * Check the table's invariants: every row's slot points back at it and is
 * live or pending, every issued slot is exactly one of live, pending, free
 * or retired, free slots hold their next generation, capacity is a
 * multiple of 8 and rows [count, cap) are zero in every column when
 * all_padding is true (else only up to round_up(count, 8)). Returns ARK_OK
 * or ARK_ECORRUPT.
 */
ark_status ark__table_validate(const ark_table *t, bool all_padding);

/* Return the row capacity of the columns. */
size_t ark__table_capacity(const ark_table *t);

/* Return the rows reserved per column on the virtual-memory path, or 0 on
 * the allocator path. */
size_t ark__table_vm_rows(const ark_table *t);

#endif /* ARK_TABLE_INTERNAL_H */
