/* SPDX-License-Identifier: MIT */
/*
 * table_internal.h - the table's private struct, for its own sources
 * (table.c, snapshot/table_snap.c) and the tests; never installed.
 */
#ifndef ARK_TABLE_INTERNAL_H
#define ARK_TABLE_INTERNAL_H

#include "ark/table.h"
#include "engine/slots.h"

struct ark_table {
    ark__table_view view; /* first: read by table.h */
    ark__slots s;
    char **columns;       /* == view.columns, writable */
    char **spare_columns; /* the other half of the columns array */
    size_t *sizes;        /* element bytes per column */
    uint32_t *row_slots;  /* == view.row_slots, writable; room entries */
    size_t cap;           /* rows usable now: [rows, cap) are zero */
    size_t room;          /* rows columns and row_slots hold (>= cap) */
    size_t slots_room;    /* entries the handle slots array holds */
    size_t max_cap;       /* rows the index space allows, rounded up to 8 */
    char *vm_base;        /* reservation, or NULL on the allocator path */
    size_t vm_bytes;      /* bytes reserved */
    size_t vm_rows;       /* rows reserved per column */
    size_t page;          /* commit granularity; 0 = no virtual memory */
    char *block;          /* allocator path: the columns' one block */
    size_t block_bytes;   /* its size */
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user;
    uint64_t *present;    /* keyed: == view.present, writable */
    size_t present_words; /* its words allocated */
};

/* The handle slots of t, an array of ark__table_slot. */
static inline ark__table_slot *ark__table_slots(const ark_table *t) {
    return (ark__table_slot *)(void *)t->view.slots.flat;
}

/* Grow the row capacity (columns and row_slots) to at least want rows,
 * doubling, with rows [rows, cap) zero. Errors: ARK_ENOMEM (the table is
 * unchanged). */
ark_status ark__table_grow_rows(ark_table *t, size_t want);

/*
 * ark_table_validate, and with all_padding the rows [count, cap) must be
 * zero in every column (not only up to round_up(count, 8)).
 */
ark_status ark__table_validate(const ark_table *t, bool all_padding);

/* Return the row capacity of the columns. */
size_t ark__table_capacity(const ark_table *t);

/* Return the rows reserved per column on the virtual-memory path, or 0 on
 * the allocator path. */
size_t ark__table_vm_rows(const ark_table *t);

#endif /* ARK_TABLE_INTERNAL_H */
