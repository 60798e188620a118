/*
 * ark/table.h - packed structure-of-arrays rows addressed by stable
 * generational handles.
 *
 * A table keeps the hot data of many objects (positions, velocities, hit
 * points) as ncolumns tightly packed columns: column k is a plain array of
 * fixed-size elements and row r of every column belongs to the same object.
 * Rows live packed in [0, count); removing a row moves the last row into
 * the hole (swap-and-pop, in every column), so per-frame loops run over
 * dense arrays the compiler can vectorize, while handles stay valid across
 * the moves through an index table (handle -> slot -> row).
 *
 * Invariants:
 * - Every column starts 64-byte aligned; the row capacity is a multiple of
 *   8, and rows in [count, round_up(count, 8)) are zero, so a SIMD loop may
 *   run over whole groups of 8 rows (it must leave those rows zero).
 * - Handle 0 is never issued; slot index 0 is never used. A handle is
 *   accepted only if its index, generation and tag are exactly those of a
 *   live row. Any 64-bit value may be passed to row and check: they never
 *   read outside the table.
 * - Freed handle slots are reused in FIFO order once ARK_TABLE_REUSE_DELAY
 *   of them are queued (or no fresh slot is left); a slot reused
 *   2^gen_bits - 1 times is retired for good, as in ark_pool.
 * - Storage: with the default allocator on a platform with virtual memory
 *   (POSIX mmap, Windows VirtualAlloc) the table reserves address space for
 *   max_rows rows per column at create and commits pages as it grows, so
 *   row 0 of every column keeps its address and growth never copies, up to
 *   max_rows rows. Past max_rows, or when a custom allocator is given, or
 *   when no reservation can be made, columns live in one allocator block
 *   that is reallocated (and copied) as the table doubles. The handle
 *   index tables always go through the allocator.
 *
 * Cost model: row, handle_at, column, count, check: O(1) (row is two
 * dependent loads: the slot, then the caller's column). insert, remove,
 * remove_later: O(ncolumns) amortised; growth doubles the capacity.
 * flush: O(pending * ncolumns).
 *
 * Thread-safety: none; a table may be read by several threads at once if
 * none writes.
 */
#ifndef ARK_TABLE_H
#define ARK_TABLE_H

#include "ark/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row ark_table_row returns for a handle that is not live. */
#define ARK_NO_ROW ((size_t)-1)

/* Freed handle slots wait in a FIFO queue until this many are queued (or
 * no fresh slot is left) before they are reused. */
#define ARK_TABLE_REUSE_DELAY 64

/* max_rows when the config leaves it 0 (further capped by the index bits
 * and by ARK_TABLE_RESERVE_BYTES / row bytes). */
#define ARK_TABLE_DEFAULT_MAX_ROWS ((size_t)1 << 24)

/* The most address space a default max_rows reserves, in bytes. */
#define ARK_TABLE_RESERVE_BYTES ((uint64_t)1 << 36)

/* The largest column element, in bytes. */
#define ARK_TABLE_MAX_COLUMN_SIZE ((size_t)1 << 16)

/*
 * Table configuration. Zero fields take their defaults, so
 * `ark_table_config cfg = {.column_sizes = sizes, .ncolumns = 4};` is a
 * complete config.
 */
typedef struct ark_table_config {
    const size_t *column_sizes; /* bytes per element of each column */
    size_t ncolumns;            /* number of columns; must be > 0 */
    unsigned index_bits;        /* 1..32, 0 = 32: slot index bits */
    unsigned gen_bits;          /* 1..32, 0 = 32: generation bits */
    unsigned tag_bits;          /* tag bits above index and generation */
    uint64_t tag;               /* this table's tag; must fit in tag_bits */
    /* Rows to reserve address space for (virtual-memory path only); 0 =
     * ARK_TABLE_DEFAULT_MAX_ROWS. A hint, not a limit: growing past it
     * moves the columns once into a reservation twice as large. */
    size_t max_rows;
    const ark_allocator *allocator; /* NULL = the C library (+ vmem) */
} ark_table_config;

/* Private: what the index table stores per handle slot. */
typedef struct ark__table_slot {
    uint32_t stamp; /* generation + 1 while live, 0 while free/pending */
    uint32_t row;   /* live or pending: its row; free: next generation */
} ark__table_slot;

/* A table. The fields are private; they are declared here only so that
 * the inline functions below can read them. */
typedef struct ark_table {
    /* private, read by the inline functions */
    char **columns;               /* ncolumns column bases */
    const ark__table_slot *slots; /* handle slot -> stamp and row */
    const uint32_t *row_slots;    /* row -> handle slot */
    ark_handle_layout layout;     /* handle bit layout */
    uint64_t issued;              /* slots [0, issued) initialised, >= 1 */
    size_t count;                 /* rows in use, pending ones included */
    size_t ncolumns;
    /* private, used by table.c only */
    char **spare_columns;     /* the other half of the columns array */
    size_t *sizes;            /* element bytes per column */
    ark__table_slot *slots_w; /* == slots, writable */
    uint32_t *ring;           /* FIFO of free slot indices */
    uint64_t slot_cap, free_head, free_len;
    uint64_t limit;        /* 2^index_bits */
    uint64_t retired;      /* slots whose generations are exhausted */
    uint32_t *row_slots_w; /* == row_slots, writable; cap entries */
    uint64_t *pending;     /* remove_later: slot | gen << 32; cap entries */
    size_t pending_len;
    size_t cap;         /* row capacity of columns and row arrays */
    size_t max_cap;     /* rows the index space allows, rounded up to 8 */
    char *vm_base;      /* reservation, or NULL on the allocator path */
    size_t vm_bytes;    /* bytes reserved */
    size_t vm_rows;     /* rows reserved per column */
    size_t page;        /* commit granularity; 0 = no virtual memory */
    char *block;        /* allocator path: the columns' one block */
    size_t block_bytes; /* its size */
    ark_allocator alloc;
} ark_table;

/*
 * Create a table. *out is set only on success.
 * Errors: ARK_EINVAL (no columns, a column size of 0 or above
 * ARK_TABLE_MAX_COLUMN_SIZE, bad handle bits or tag, allocator missing a
 * function), ARK_ENOMEM.
 */
ARK_API ark_status ark_table_create(ark_table **out,
                                    const ark_table_config *cfg);

/* Free the table, its columns and its index tables. t may be NULL. */
ARK_API void ark_table_destroy(ark_table *t);

/*
 * Append a zeroed row at the end (row == count before the call) and store
 * its handle in *out and its row in *row (either may be NULL).
 * Errors: ARK_ENOMEM (columns or index tables could not grow), ARK_EFULL
 * (every handle index is live, pending or retired). The table is unchanged
 * on error.
 * Lifetime: growth may move the columns on the allocator path (see the
 * header comment); re-read ark_table_column after an insert there.
 */
ARK_API ark_status ark_table_insert(ark_table *t, ark_handle *out, size_t *row);

/*
 * Return the row a handle refers to, or ARK_NO_ROW if the handle is not
 * exactly that of a live row (null, stale, forged, foreign, removed with
 * remove_later). Never reads outside the table, whatever h is.
 * Lifetime: the row changes when a remove or flush moves the last row.
 * Complexity: O(1), one load of the index table.
 */
inline size_t ark_table_row(const ark_table *t, ark_handle h) {
    uint64_t i = ark__handle_index(&t->layout, h);
    /* An index never issued reads slot 0, whose stamp is 0 forever. A
     * select instead of a branch keeps the lookup short, which lets more
     * lookups overlap their cache misses. */
    i = i < t->issued ? i : 0;
    ark__table_slot s = t->slots[i];
    return s.stamp == ark__handle_stamp(&t->layout, h) ? s.row : ARK_NO_ROW;
}

/*
 * Return why a handle is or is not valid: ARK_OK (live), ARK_ENULL (0),
 * ARK_EFOREIGN (another tag, or bits set above the tag), ARK_ERANGE (index
 * never issued), ARK_ESTALE (slot free, pending removal, or holding another
 * generation).
 */
ARK_API ark_status ark_table_check(const ark_table *t, ark_handle h);

/*
 * Return the handle of the row at position row, or ARK_NULL_HANDLE when
 * row >= count or the row is marked by remove_later.
 */
inline ark_handle ark_table_handle_at(const ark_table *t, size_t row) {
    if (row >= t->count) {
        return ARK_NULL_HANDLE;
    }
    uint32_t i = t->row_slots[row];
    uint32_t stamp = t->slots[i].stamp;
    if (stamp == 0) {
        return ARK_NULL_HANDLE;
    }
    return ark__handle_make(&t->layout, i, stamp - 1);
}

/*
 * Return the number of rows in use: live rows plus rows marked by
 * remove_later, which keep their place until ark_table_flush.
 */
inline size_t ark_table_count(const ark_table *t) { return t->count; }

/*
 * Return the base of column col (64-byte aligned; element r of the column
 * is at base + r * column_sizes[col]), or NULL if col >= ncolumns or no
 * row was ever allocated on the allocator path.
 * Lifetime: on the virtual-memory path the base never changes while the
 * table holds at most max_rows rows; otherwise it may change on insert.
 */
inline void *ark_table_column(const ark_table *t, size_t col) {
    if (col >= t->ncolumns) {
        return NULL;
    }
    return t->columns[col];
}

/*
 * Remove a row: move the last row into its place in every column (and in
 * the index), zero the vacated last row and free the handle. Rows past the
 * removed one other than the last keep their places.
 * Errors: as ark_table_check; the table is unchanged on error.
 */
ARK_API ark_status ark_table_remove(ark_table *t, ark_handle h);

/*
 * Mark a row for removal at the next ark_table_flush. Its handle stops
 * working at once (row gives ARK_NO_ROW, handle_at ARK_NULL_HANDLE), but
 * no row moves and count is unchanged until the flush, so it is safe
 * while a loop walks the rows by position.
 * Errors: as ark_table_check; never ARK_ENOMEM.
 */
ARK_API ark_status ark_table_remove_later(ark_table *t, ark_handle h);

/* Remove every row marked by remove_later, in marking order (each one a
 * swap-and-pop). Returns how many rows were removed. */
ARK_API size_t ark_table_flush(ark_table *t);

#ifdef __cplusplus
}
#endif

#endif /* ARK_TABLE_H */
