/* SPDX-License-Identifier: MIT */
/*
 * ark/table.h - packed structure-of-arrays rows addressed by stable
 * generational handles.
 *
 * A table keeps the hot data of many objects (positions, velocities, hit
 * points) as ncolumns tightly packed columns: column k is a plain array of
 * fixed-size elements and row r of every column belongs to the same object.
 * Rows live packed in [0, rows); removing a row moves the last row into
 * the hole (swap-and-pop, in every column), so per-frame loops run over
 * dense arrays the compiler can vectorize, while handles stay valid across
 * the moves through an index table (handle -> slot -> row).
 *
 * Invariants:
 * - Every column starts 64-byte aligned; the row capacity is a multiple of
 *   8, and rows in [rows, round_up(rows, 8)) are zero, so a SIMD loop may
 *   run over whole groups of 8 rows (it must leave those rows zero).
 * - Handle 0 is never issued; slot index 0 is never used. A handle is
 *   accepted only if its index, generation and tag are exactly those of a
 *   live row. Any 64-bit value may be passed to row and check: they never
 *   read outside the table.
 * - Handle slots follow the same rules as ark_pool's (one implementation
 *   serves both): FIFO reuse after ARK_REUSE_DELAY, retirement, removal
 *   hooks that may call back, sealing for the wire. Handles are not
 *   secret: seal them (ark_table_seal) before they reach a client.
 * - count is the number of live rows. Rows marked by remove_later keep
 *   their place until ark_table_flush, so the rows a loop walks are
 *   [0, ark_table_rows(t)), live and marked; ark_table_handle_at gives
 *   ARK_NULL_HANDLE for a marked row.
 * - Storage: with the default allocator on a platform with virtual memory
 *   (POSIX mmap, Windows VirtualAlloc) the table reserves address space for
 *   max_rows rows per column at create and commits pages as it grows, so
 *   row 0 of every column keeps its address and growth never copies, up to
 *   max_rows rows. Past max_rows, or when a custom allocator is given, or
 *   when no reservation can be made, columns live in one allocator block
 *   that is reallocated (and copied) as the table doubles; so do they,
 *   moving once, if the OS refuses to commit pages of the reservation
 *   (each column of such a table uses two of the process's memory
 *   mappings, of which Linux allows 65530 by default: about 1,600 tables
 *   of 20 columns). The handle index tables always go through the
 *   allocator. Memory is touched only as rows arrive: a size passed to
 *   reserve or max_rows, however large, costs address space and commit
 *   charge, not resident memory.
 *
 * Pointers: t (and cfg, out, w, r where a function takes them) must be
 * non-NULL unless a function says otherwise; ark_table_destroy(NULL) does
 * nothing. Handles and row numbers may be any value. A writer without a
 * write function, or a reader without a read function, is ARK_EINVAL.
 *
 * Removal hooks: on_remove(NULL, h, user) runs once for every row removed
 * by remove, flush and clear(true), before the row is popped: while it
 * runs ark_table_row(t, h) still gives the row, and the hook may call
 * remove, remove_later, insert, row and check on the same table (a remove
 * it makes is carried out right after it returns). flush and clear called
 * from a hook do nothing; destroy must not be called from a hook.
 *
 * Cost model: row, handle_at, column, rows, check: O(1) (row is two
 * dependent loads: the slot, then the caller's column). insert, remove,
 * remove_later: O(ncolumns) amortised; growth doubles the capacity.
 * flush: O(pending * ncolumns).
 *
 * Claims and index ranges: as a pool's (pool.h): ark_table_claim gives
 * handles from any thread, ark_table_insert_at creates their rows on the
 * owning thread, ark_table_unclaim gives them back; index_min and
 * index_max confine insert and claim to a range of slot indices.
 *
 * Thread-safety: one owning thread; a table may be read by several threads
 * at once if none writes. ark_table_claim may be called from any thread,
 * concurrently with everything but create, destroy, load, clear and
 * reserve (docs/threads.md).
 */
#ifndef ARK_TABLE_H
#define ARK_TABLE_H

#include "ark/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row ark_table_row returns for a handle that is not live. */
#define ARK_NO_ROW SIZE_MAX

/* max_rows when the config leaves it 0 (further capped by the index bits
 * and by ARK_TABLE_RESERVE_BYTES / row bytes). */
#define ARK_TABLE_DEFAULT_MAX_ROWS (ARK__CONST(size_t, 1) << 24)

/* The most address space a default max_rows reserves, in bytes. */
#define ARK_TABLE_RESERVE_BYTES (ARK__CONST(uint64_t, 1) << 36)

/* The largest column element, in bytes. */
#define ARK_TABLE_MAX_COLUMN_SIZE (ARK__CONST(size_t, 1) << 16)

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
    /* The slot indices insert and claim take, inclusive; 0 and 0 = every
     * index of the layout. As ark_pool_config's (see pool.h, "Index
     * ranges"); insert_at takes any index of the layout. */
    uint32_t index_min, index_max;
    /* Rows to reserve address space for (virtual-memory path only); 0 =
     * ARK_TABLE_DEFAULT_MAX_ROWS. A hint, not a limit: growing past it
     * moves the columns once into a reservation twice as large. Address
     * space only: any value costs no memory (one the OS cannot reserve
     * means the allocator path). */
    size_t max_rows;
    /* Key of ark_table_seal; 0 = drawn from the OS's entropy at create. */
    uint64_t seal_key;
    const ark_allocator *allocator; /* NULL = the C library (+ vmem) */
    /* Called once for each row removed by remove, flush and clear(true),
     * with elem NULL; see "Removal hooks" above. */
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user; /* passed to on_remove */
    /* An entity pool whose handles key this table (ark/entity.h): each
     * row belongs to one entity and is created with ark_table_insert_at
     * at the entity's handle, found with ark_table_row by that handle,
     * and removed when the entity is. The handle fields above must then
     * be 0; insert and claim give ARK_EINVAL. NULL: a table with handles
     * of its own. */
    struct ark_pool *keys;
} ark_table_config;

/* A table (opaque). */
typedef struct ark_table ark_table;

/*
 * Create a table. *out is set only on success.
 * Errors: ARK_EINVAL (no columns, column_sizes NULL, a column size of 0
 * or above ARK_TABLE_MAX_COLUMN_SIZE, bad handle bits or tag, allocator
 * missing a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_table_create(ark_table **out,
                                    const ark_table_config *cfg);

/* Free the table, its columns and its index tables. t may be NULL. */
ARK_API void ark_table_destroy(ark_table *t);

/*
 * Append a zeroed row at the end (row == ark_table_rows(t) before the
 * call) and store its handle in *out and its row in *row (either may be
 * NULL).
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
 * Complexity: O(1), inline: one load of the index table.
 */
ARK__INLINE size_t ark_table_row(const ark_table *t, ark_handle h);

/*
 * Return why a handle is or is not valid: ARK_OK (live, or its on_remove
 * is running), ARK_ENULL (0), ARK_EFOREIGN (another tag, or bits set above
 * the tag), ARK_ERANGE (index never issued), ARK_ESTALE (slot free, marked
 * for removal, or holding another generation).
 */
ARK_API ark_status ark_table_check(const ark_table *t, ark_handle h);

/*
 * Return the handle of the row at position row, or ARK_NULL_HANDLE when
 * row >= ark_table_rows(t) or the row is marked by remove_later.
 * Complexity: O(1), inline.
 */
ARK__INLINE ark_handle ark_table_handle_at(const ark_table *t, size_t row);

/* Return the number of live rows (rows marked by remove_later excluded). */
ARK_API size_t ark_table_count(const ark_table *t);

/*
 * Return the number of rows in use: live rows plus rows marked by
 * remove_later, which keep their place until ark_table_flush. Loops over
 * the columns run over [0, ark_table_rows(t)). Inline.
 */
ARK__INLINE size_t ark_table_rows(const ark_table *t);

/*
 * Return the base of column col (64-byte aligned; element r of the column
 * is at base + r * column_sizes[col]), or NULL if col >= ncolumns or no
 * row was ever allocated on the allocator path.
 * Lifetime: on the virtual-memory path the base never changes while the
 * table holds at most max_rows rows; otherwise it may change on insert.
 * Complexity: O(1), inline.
 */
ARK__INLINE void *ark_table_column(const ark_table *t, size_t col);

/*
 * Remove a row: run on_remove, then move the last row into its place in
 * every column (and in the index), zero the vacated last row and free the
 * handle. Rows past the removed one other than the last keep their places.
 * From a hook the removal happens right after the running hook returns.
 * Errors: as ark_table_check, plus ARK_ENOMEM from a hook when the list
 * of removals to carry out could not grow; the table is unchanged on
 * error. Removing the row whose hook is running returns ARK_OK.
 */
ARK_API ark_status ark_table_remove(ark_table *t, ark_handle h);

/*
 * Mark a row for removal at the next ark_table_flush. Its handle stops
 * working at once (row gives ARK_NO_ROW, handle_at ARK_NULL_HANDLE, count
 * drops), but no row moves until the flush, so it is safe while a loop
 * walks the rows by position.
 * Errors: as ark_table_check, plus ARK_ENOMEM (the list of marked rows
 * could not grow); the table is unchanged on error.
 */
ARK_API ark_status ark_table_remove_later(ark_table *t, ark_handle h);

/* Remove every row marked by remove_later, in marking order (each one a
 * swap-and-pop, after its on_remove), including rows hooks mark during the
 * flush. Returns how many marked rows were removed (rows that hooks remove
 * with ark_table_remove during the flush go too, uncounted). Once a claim
 * has been made, it also sets free slots aside for claims, as
 * ark_pool_flush does. Does nothing (returns 0) from a hook. */
ARK_API size_t ark_table_flush(ark_table *t);

/*
 * Remove every row, live and marked, running on_remove on each when
 * run_hook is true. Returns when no row is left, so rows that hooks insert
 * meanwhile are removed too. Every outstanding handle becomes stale;
 * capacity is kept. Does nothing when called from a hook.
 */
ARK_API void ark_table_clear(ark_table *t, bool run_hook);

/*
 * Make room for n live rows in all, so inserts up to that count allocate
 * nothing, whatever removals come between them (see ark_pool_reserve). A
 * row marked by remove_later keeps its place until the flush: count it in
 * n until then.
 * Cost: the columns are committed (virtual-memory path) or allocated,
 * and the index arrays allocated, without being touched, so the resident
 * set does not grow with n: inserts zero what they reach, doubling, with
 * no allocation. A request the system cannot back fails at once.
 * Errors: ARK_EFULL (the index bits cannot address n rows), ARK_ENOMEM
 * (the table keeps what it had).
 */
ARK_API ark_status ark_table_reserve(ark_table *t, size_t n);

/*
 * Create a zeroed row at the end for exactly handle h, and store its row
 * in *row (may be NULL): a replica mirrors its server's table by creating
 * each row at the handle the server issued, in any order, or the owning
 * thread creates the row of a claimed handle (ark_table_claim). The
 * handle rules are ark_pool_insert_at's (one implementation serves both).
 * Errors: ARK_ENULL, ARK_EFOREIGN, ARK_ERANGE, ARK_EEXIST, ARK_ESTALE,
 * ARK_EFULL, ARK_EINVAL, ARK_ENOMEM as ark_pool_insert_at; the table is
 * unchanged on error (its capacity may have grown).
 * Complexity: as ark_pool_insert_at, plus O(ncolumns).
 */
ARK_API ark_status ark_table_insert_at(ark_table *t, ark_handle h, size_t *row);

/*
 * Claim n handles for rows the owning thread will create later with
 * ark_table_insert_at: write them to out, all of them or none. The rules
 * are ark_pool_claim's (one implementation serves both): a claimed handle
 * names no row (row gives ARK_NO_ROW, check ARK_ESTALE) and is handed out
 * by nothing else until its row is created or it is given back with
 * ark_table_unclaim.
 * Errors: ARK_EINVAL (a keyed table), ARK_EFULL (nothing is claimed).
 * Never ARK_ENOMEM.
 * Complexity: O(n); one atomic read-modify-write per call when no other
 * thread claims at the same instant.
 * Thread-safety: any thread, concurrently with other claims and with
 * every call of the owning thread but create, destroy, load, clear and
 * reserve.
 */
ARK_API ark_status ark_table_claim(ark_table *t, ark_handle *out, size_t n);

/*
 * Give back a claimed handle whose row was never created; its generation
 * is used up as by a removal (see ark_pool_unclaim).
 * Errors: ARK_EINVAL (a keyed table), ARK_ENULL, ARK_EFOREIGN, ARK_ESTALE
 * (not claimed), ARK_ENOMEM.
 * Complexity: O(1) amortized.
 * Thread-safety: the owning thread.
 */
ARK_API ark_status ark_table_unclaim(ark_table *t, ark_handle h);

/*
 * Write a snapshot of t to w (format: docs/snapshot.md): handle layout,
 * column sizes, seal key, the exact state of the handle slots (as
 * ark_pool_save), the rows in order with their slots, and each column's
 * bytes for the rows in use (live and marked) as they are. Streams
 * through a 16 KiB buffer on the stack; the snapshot holds the seal key.
 * Errors: the writer's status, ARK_EINVAL (called from a hook, or
 * w->write NULL),
 * ARK_ENOMEM (only after insert_at left dead free-queue entries). t is
 * never changed.
 * Complexity: O(slots issued + bytes written).
 */
ARK_API ark_status ark_table_save(const ark_table *t, const ark_writer *w);

/*
 * Create a table from a snapshot read from r; *out is set only on
 * success. The result is the saved table exactly: the same rows in the
 * same order with the same bytes, the same live handles, marked rows,
 * retired slots and free-queue order, so the same operations afterwards
 * issue the same handles and rows. cfg must have the saved layout and
 * column sizes; seal key as ark_pool_load (0 takes the saved key).
 * Exactly the snapshot's bytes are read. Any byte sequence is safe to
 * load: everything is checked before use, memory grows only as the data
 * arrives, and the table passes full validation before it is returned.
 * Errors: ARK_ECORRUPT (malformed, truncated or checksum mismatch),
 * ARK_EINVAL (r->read NULL, cfg invalid or different from the
 * snapshot's, keys included: a keyed table loads only with keys),
 * ARK_ENOMEM, the reader's status.
 * Complexity: O(slots issued + bytes read).
 */
ARK_API ark_status ark_table_load(ark_table **out, const ark_table_config *cfg,
                                  const ark_reader *r);

/* Return h sealed for the wire; see ark_pool_seal, which it matches. */
ARK_API ark_handle ark_table_seal(const ark_table *t, ark_handle h);

/* Return the handle a sealed value stands for; see ark_pool_unseal. */
ARK_API ark_handle ark_table_unseal(const ark_table *t, ark_handle wire);

/*
 * Check every invariant of t: every row's slot points back at it and is
 * live or marked, every issued slot is exactly one of live, marked, free
 * or retired, free slots hold their next generation, and the rows past
 * the last one up to the next multiple of 8 are zero. Returns ARK_OK or
 * ARK_ECORRUPT. For tests and debugging.
 * Complexity: O(slots issued + rows).
 */
ARK_API ark_status ark_table_validate(const ark_table *t);

#ifdef __cplusplus
}
#endif

#include "ark/internal/table.h"

#endif /* ARK_TABLE_H */
