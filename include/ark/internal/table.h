/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/table.h - private to ark: the table's view (what its
 * inline functions read) and the bodies of row, handle_at, rows and
 * column. Included by ark/table.h; never include it directly, and never
 * use its names: they change without notice.
 */
#ifndef ARK_INTERNAL_TABLE_H
#define ARK_INTERNAL_TABLE_H

#include "ark/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the index table stores per handle slot. */
typedef struct ark__table_slot {
    uint32_t stamp; /* generation + 1 while live, 0 otherwise */
    uint32_t row;   /* live or marked: its row; free: next generation */
} ark__table_slot;

/* What the inline functions read, the first member of a table:
 * the handle slots (an array of ark__table_slot, see ark__slots_view in
 * core.h), the column bases, the row -> slot map and the rows in use. */
typedef struct ark__table_view {
    ark__slots_view slots;
    char *const *columns;
    const uint32_t *row_slots;
    size_t rows;
    size_t ncolumns;
    /* keyed tables: one bit per slot (entity index), set while its row is
     * live; NULL otherwise */
    const uint64_t *present;
} ark__table_view;

ARK__ALWAYS_INLINE ARK__INLINE const ark__table_view *
ark__table_view_of(const ark_table *t) {
    return (const ark__table_view *)(const void *)t;
}

ARK__INLINE size_t ark_table_row(const ark_table *t, ark_handle h) {
    const ark__slots_view *v = &ark__table_view_of(t)->slots;
    uint64_t i = ark__handle_index(&v->layout, h);
    /* An index out of range reads slot 0, whose stamp is 0 forever. A
     * select instead of a branch keeps the lookup short, which lets more
     * lookups overlap their cache misses. */
    i = i < v->cap ? i : 0;
    ark__table_slot s = ((const ark__table_slot *)(const void *)v->flat)[i];
    return s.stamp == ark__handle_stamp(&v->layout, h) ? s.row : ARK_NO_ROW;
}

ARK__INLINE ark_handle ark_table_handle_at(const ark_table *t, size_t row) {
    const ark__table_view *tv = ark__table_view_of(t);
    if (row >= tv->rows) {
        return ARK_NULL_HANDLE;
    }
    uint32_t i = tv->row_slots[row];
    const ark__table_slot *slots =
        (const ark__table_slot *)(const void *)tv->slots.flat;
    uint32_t stamp = slots[i].stamp;
    if (stamp == 0) {
        return ARK_NULL_HANDLE;
    }
    return ark__handle_make(&tv->slots.layout, i, stamp - 1);
}

ARK__INLINE size_t ark_table_rows(const ark_table *t) {
    return ark__table_view_of(t)->rows;
}

ARK__INLINE void *ark_table_column(const ark_table *t, size_t col) {
    const ark__table_view *tv = ark__table_view_of(t);
    if (col >= tv->ncolumns) {
        return NULL;
    }
    return tv->columns[col];
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_TABLE_H */
