/* SPDX-License-Identifier: MIT */
/*
 * table.c - ark_table: SoA columns, the handle slots of the engine
 * (slots.h) and a row -> slot back-map.
 *
 * Handles and rows:
 *   slots[i]      handle slot i (ark__table_slot): the engine's stamp, and
 *                 the row it lives in (live or marked); a free slot keeps
 *                 the generation its next occupant gets in the row field,
 *                 which is the engine's "offset 4" word.
 *   row_slots[r]  the handle slot of row r, for swap-and-pop and
 *                 handle_at.
 * The slots array is the engine's storage: one allocator block that
 * doubles (copying) as slots are issued, so lookups are one indexed load.
 * Its entries [0, cap) are zero or in use; reserve allocates room past cap
 * without zeroing it (a recycled block may hold stamps a forged handle
 * would match), and the entries are zeroed as growth opens them.
 *
 * Column storage, cap rows each (a multiple of 8):
 *   virtual-memory path: one reservation; column k owns a page-aligned
 *   region of ark__round_up(skew(k) + vm_rows * size_k, page) bytes, starts
 *   skew(k) bytes into it, and the region's first
 *   ark__round_up(skew(k) + cap * size_k, page) bytes are committed. Growing
 *   within vm_rows commits more pages in place. Growing past vm_rows
 *   moves everything once into a reservation twice as large.
 *   allocator path: one block, column k at a 64-byte aligned offset (also
 *   skewed); growing allocates a block twice as large and copies.
 * Every row in [rows, cap) is zero: commits arrive zero, pop zeroes the
 * row it vacates, insert zeroes the row it hands out. On the allocator
 * path a block holds room rows, of which growth zeroes [rows, cap); the
 * rows a reserve adds past cap are zeroed as inserts reach them (so a
 * reserve touches none of them).
 *
 * Failure atomicity: every new array is allocated before anything is
 * installed; a failed grow frees what it made and leaves the table as it
 * was (committed-but-unused pages are invisible spare capacity).
 */
#include "ark/table.h"

#include "base/vmem.h"
#include "engine/slots.h"
#include "pool_internal.h"
#include "table_internal.h"

#include <assert.h>
#include <string.h>

/* The one external definition of each inline function of table.h. */
ARK_API extern inline size_t ark_table_row(const ark_table *t, ark_handle h);
ARK__INLINE_API extern inline const ark__table_view *
ark__table_view_of(const ark_table *t);
ARK_API extern inline ark_handle ark_table_handle_at(const ark_table *t,
                                                     size_t row);
ARK_API extern inline size_t ark_table_rows(const ark_table *t);
ARK_API extern inline void *ark_table_column(const ark_table *t, size_t col);

/* Column alignment on the allocator path. */
#define COLUMN_ALIGN 64

/* Extra offset between consecutive columns (9 cache lines: every column
 * of 8 starts on different cache sets and at a different page offset). */
#define COLUMN_SKEW 576

/* Rows of the first growth. */
#define FIRST_CAP 32

/* The huge-page size large column regions are aligned to. */
#define HUGE ((size_t)2 << 20)

/* Zero one element; the common sizes get fixed-size stores the compiler
 * inlines (a libc call per column would dominate insert and remove). */
static inline void zero_elem(char *dst, size_t sz) {
    switch (sz) {
    case 4:
        memset(dst, 0, 4);
        break;
    case 8:
        memset(dst, 0, 8);
        break;
    case 16:
        memset(dst, 0, 16);
        break;
    default:
        memset(dst, 0, sz);
        break;
    }
}

/* Move one element from src to dst (distinct) and zero src. */
static inline void move_elem(char *dst, char *src, size_t sz) {
    ark__copy_small(dst, src, sz);
    zero_elem(src, sz);
}

/* Bytes of the shared columns array: two halves of pointers, then sizes. */
static size_t columns_bytes(size_t ncolumns) {
    return ncolumns * (2 * sizeof(char *) + sizeof(size_t));
}

/* Column k starts skew(k) bytes into its region. Regions of a power-of-two
 * number of rows would otherwise put every column at the same address
 * modulo a large power of two, so a loop over several columns would load
 * and store streams that share cache sets (and 4K-alias). */
static size_t skew(size_t k) { return (k % 8) * COLUMN_SKEW; }

/* Lay out ncolumns regions of rows elements (plus skew), each rounded up
 * to align, from base (NULL: only measure). Returns the total bytes, or 0
 * on overflow. */
static size_t layout_columns(const ark_table *t, char *base, size_t rows,
                             size_t align, char **cols) {
    size_t off = 0;
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        size_t bytes;
        if (ark__mul_overflows(rows, t->sizes[k], &bytes) ||
            bytes > SIZE_MAX - align - skew(k) ||
            off > SIZE_MAX - (bytes + skew(k) + align)) {
            return 0;
        }
        if (base != NULL) {
            cols[k] = base + off + skew(k);
        }
        off += ark__round_up(bytes + skew(k), align);
    }
    return off;
}

/* The alignment of the column regions of a reservation of rows rows:
 * columns of 2 MiB or more start on a 2 MiB boundary and are marked for
 * transparent huge pages (one TLB entry per 2 MiB of a streaming loop,
 * as malloc'd arrays get where THP is on); smaller ones keep OS-page
 * alignment, so a small table never pins 2 MiB. */
static size_t vm_align(const ark_table *t, size_t rows) {
    size_t align = t->page;
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        if (rows >= HUGE / t->sizes[k]) {
            align = HUGE;
        }
    }
    return align;
}

/* Reserve address space for rows rows per column into cols; returns the
 * base (bytes in *bytes) or NULL. */
static char *vm_reserve(const ark_table *t, size_t rows, char **cols,
                        size_t *bytes) {
    size_t align = vm_align(t, rows);
    size_t total = layout_columns(t, NULL, rows, align, NULL);
    size_t extra = align > t->page ? align : 0;
    if (total == 0 || total > SIZE_MAX - extra) {
        return NULL;
    }
    char *raw = ark__vmem_reserve(total + extra);
    if (raw == NULL) {
        return NULL;
    }
    char *base = (char *)ark__round_up((uintptr_t)raw, align);
    layout_columns(t, base, rows, align, cols);
    if (extra != 0) {
        ark__vmem_hint_huge(base, total);
    }
    *bytes = total + extra;
    return raw;
}

/* Commit the first rows rows of every column of cols, in a reservation
 * of vm_rows rows. Past its first 2 MiB, a column in a 2 MiB-aligned
 * region commits whole 2 MiB blocks (up to the region's end): a commit
 * that ended inside a block (skew(k) past its start, once rows * size is
 * a multiple of 2 MiB) had its first touch fault a small page there, and
 * the block stayed on small pages after the next growth, so half of each
 * skewed column of a table grown to 4M rows was on 4 KiB pages
 * (docs/design-notes.md, "Table: the update loop a user writes"). Below
 * 2 MiB commits stay page-sized, so a small table never pins 2 MiB. */
static int vm_commit(const ark_table *t, char **cols, size_t rows,
                     size_t vm_rows) {
    size_t align = vm_align(t, vm_rows);
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        size_t used = skew(k) + rows * t->sizes[k];
        size_t bytes = ark__round_up(
            used, align > t->page && used >= HUGE ? HUGE : t->page);
        size_t region = ark__round_up(skew(k) + vm_rows * t->sizes[k], align);
        bytes = bytes < region ? bytes : region;
        if (ark__vmem_commit(cols[k] - skew(k), bytes) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Copy the rows in use of every column into cols. */
static void copy_rows(const ark_table *t, char **cols) {
    size_t rows = t->view.rows;
    for (size_t k = 0; k < t->view.ncolumns && rows > 0; k++) {
        memcpy(cols[k], t->columns[k], rows * t->sizes[k]);
    }
}

/* ---- what the engine asks of a table ---------------------------------- */

/* A keyed table's presence bits (one per slot, set while its row is
 * live) for ncap slots; the new ones clear. */
static ark_status grow_present(ark_table *t, uint64_t ncap) {
    size_t old = t->present_words, words = (size_t)((ncap + 63) >> 6);
    uint64_t *bits = ark__grow_array(&t->s.alloc, t->present, &t->present_words,
                                     old, words, 8);
    if (bits == NULL) {
        return ARK_ENOMEM;
    }
    memset(bits + old, 0, (t->present_words - old) * sizeof *bits);
    t->present = bits;
    t->view.present = bits;
    return ARK_OK;
}

/* Make the handle slots array hold at least want entries (at most the
 * index space), doubling; the entries in use, [0, cap), are copied, the
 * new ones are left as the allocator gives them. */
static ark_status slots_alloc(ark_table *t, uint64_t want) {
    ark__slots_view *v = &t->view.slots;
    uint64_t ncap = t->slots_room == 0 ? 64 : t->slots_room;
    while (ncap < want) {
        ncap *= 2;
    }
    ncap = ncap > t->s.limit ? t->s.limit : ncap;
    size_t bytes;
    if (ncap > SIZE_MAX ||
        ark__mul_overflows((size_t)ncap, sizeof(ark__table_slot), &bytes) ||
        (t->s.keyed && grow_present(t, ncap) != ARK_OK)) {
        return ARK_ENOMEM;
    }
    ark__table_slot *slots = ark__alloc_table(&t->s.alloc, bytes, 0);
    if (slots == NULL) {
        return ARK_ENOMEM;
    }
    if (v->cap > 0) {
        memcpy(slots, v->flat, (size_t)v->cap * sizeof *slots);
    }
    ark__free(&t->s.alloc, v->flat, t->slots_room * sizeof *slots);
    v->flat = (char *)slots;
    if (t->s.keys != NULL) {
        t->s.keys->v->epoch++; /* queries hold the old array */
    }
    t->slots_room = (size_t)ncap;
    return ARK_OK;
}

/* Give the engine handle slots up to at least want (ops->grow): the
 * array grows when it must, and entries open, zeroed, doubling what is
 * open (so zeroing stays proportional to the slots issued), as far as
 * the array holds. */
static ark_status table_grow_slots(void *c, uint64_t want) {
    ark_table *t = c;
    ark__slots_view *v = &t->view.slots;
    if (want > t->slots_room) {
        ark_status st = slots_alloc(t, want);
        if (st != ARK_OK) {
            return st;
        }
    }
    uint64_t ncap = v->cap == 0 ? 64 : 2 * v->cap;
    ncap = ncap > want ? ncap : want;
    ncap = ncap < t->slots_room ? ncap : t->slots_room;
    memset(v->flat + (size_t)v->cap * sizeof(ark__table_slot), 0,
           (size_t)(ncap - v->cap) * sizeof(ark__table_slot));
    v->nflat = ncap;
    v->cap = ncap;
    return ARK_OK;
}

/* Make the handle slots array hold want entries for reserve (ops->back),
 * zeroing none. */
static ark_status table_back_slots(void *c, uint64_t want) {
    ark_table *t = c;
    return want > t->slots_room ? slots_alloc(t, want) : ARK_OK;
}

static void table_unlink_slot(void *c, uint64_t i) {
    ark_table *t = c;
    if (t->present != NULL) {
        t->present[i >> 6] &= ~((uint64_t)1 << (i & 63));
    }
}

static void table_run_hook(void *c, char *slot, ark_handle h) {
    ark_table *t = c;
    (void)slot;
    t->on_remove(NULL, h, t->user);
}

/* Swap-and-pop row r: the last row moves into r in every column and in
 * the index, and the vacated last row is zeroed. */
static void pop_row(ark_table *t, size_t r) {
    size_t last = t->view.rows - 1;
    /* Locals: the element stores are char stores, which the compiler must
     * assume may alias t's fields. */
    char *const *cols = t->columns;
    const size_t *sizes = t->sizes;
    size_t ncolumns = t->view.ncolumns;
    if (r != last) {
        for (size_t k = 0; k < ncolumns; k++) {
            size_t sz = sizes[k];
            move_elem(cols[k] + r * sz, cols[k] + last * sz, sz);
        }
        uint32_t moved = t->row_slots[last];
        t->row_slots[r] = moved;
        ark__table_slots(t)[moved].row = (uint32_t)r;
    } else {
        for (size_t k = 0; k < ncolumns; k++) {
            zero_elem(cols[k] + last * sizes[k], sizes[k]);
        }
    }
    t->view.rows = last;
}

static void table_drop_row(void *c, char *slot) {
    ark_table *t = c;
    pop_row(t, ((ark__table_slot *)(void *)slot)->row);
}

static uint64_t table_next_live(const void *c, uint64_t from) {
    const ark_table *t = c;
    const ark__table_slot *slots = ark__table_slots(t);
    for (uint64_t i = from; i < t->view.slots.issued; i++) {
        if (slots[i].stamp != 0) {
            return i;
        }
    }
    return 0;
}

static const ark__slots_ops table_ops = {table_grow_slots, table_unlink_slot,
                                         table_run_hook,   table_drop_row,
                                         table_next_live,  table_back_slots};

/* ---- create and destroy ------------------------------------------------ */

/* Check the columns; their total bytes per row in *row_bytes. */
static ark_status check_columns(const ark_table_config *cfg,
                                size_t *row_bytes) {
    if (cfg->ncolumns == 0 || cfg->column_sizes == NULL ||
        cfg->ncolumns > SIZE_MAX / (4 * sizeof(size_t) + 4 * 64)) {
        return ARK_EINVAL;
    }
    *row_bytes = 0;
    for (size_t k = 0; k < cfg->ncolumns; k++) {
        size_t sz = cfg->column_sizes[k];
        if (sz == 0 || sz > ARK_TABLE_MAX_COLUMN_SIZE) {
            return ARK_EINVAL;
        }
        *row_bytes += sz;
    }
    return ARK_OK;
}

/* Reserve address space for the columns (default allocator only). */
static void reserve_columns(ark_table *t, const ark_table_config *cfg,
                            size_t row_bytes) {
    if (cfg->allocator == NULL) {
        t->page = ark__vmem_page_size();
    }
    if (t->page == 0) {
        return;
    }
    size_t rows = cfg->max_rows;
    if (rows == 0) {
        rows = ARK_TABLE_DEFAULT_MAX_ROWS;
        if (rows > ARK_TABLE_RESERVE_BYTES / row_bytes) {
            rows = (size_t)(ARK_TABLE_RESERVE_BYTES / row_bytes);
        }
    }
    rows = rows > t->max_cap ? t->max_cap : rows;
    rows = ark__round_up(rows < 8 ? 8 : rows, 8);
    t->vm_base = vm_reserve(t, rows, t->columns, &t->vm_bytes);
    if (t->vm_base != NULL) {
        t->vm_rows = rows;
    } else {
        t->page = 0; /* no reservation: the allocator path for good */
    }
}

ark_status ark_table_create(ark_table **out, const ark_table_config *cfg) {
    assert(out != NULL && cfg != NULL);
    size_t row_bytes;
    ark_status st = check_columns(cfg, &row_bytes);
    ark_allocator a;
    if (st == ARK_OK) {
        st = ark__allocator_init(&a, cfg->allocator);
    }
    if (st != ARK_OK) {
        return st;
    }
    ark_table *t = ark__alloc(&a, sizeof *t, 0);
    if (t == NULL) {
        return ARK_ENOMEM;
    }
    memset(t, 0, sizeof *t);
    ark__slots_config sc = ARK__SLOTS_CONFIG_OF(cfg);
    st = ark__slots_init(&t->s, &t->view.slots, &sc, &a, &table_ops, t);
    t->columns =
        st == ARK_OK ? ark__alloc(&a, columns_bytes(cfg->ncolumns), 0) : NULL;
    if (t->columns == NULL) {
        if (st == ARK_OK) {
            ark__slots_fini(&t->s); /* a keyed table leaves its keys */
        }
        ark__free(&a, t, sizeof *t);
        return st != ARK_OK ? st : ARK_ENOMEM;
    }
    t->view.slots.stride = sizeof(ark__table_slot);
    t->view.slots.data_off = offsetof(ark__table_slot, row);
    t->view.columns = t->columns;
    t->view.ncolumns = cfg->ncolumns;
    t->spare_columns = t->columns + cfg->ncolumns;
    t->sizes = (size_t *)(void *)(t->spare_columns + cfg->ncolumns);
    for (size_t k = 0; k < cfg->ncolumns; k++) {
        t->columns[k] = NULL;
        t->sizes[k] = cfg->column_sizes[k];
    }
    t->on_remove = cfg->on_remove;
    t->user = cfg->user;
    /* Slot 0 is never used, so at most limit - 1 rows. */
    uint64_t max_rows = t->s.limit - 1;
    max_rows = max_rows > SIZE_MAX / 2 ? SIZE_MAX / 2 : max_rows;
    t->max_cap = ark__round_up((size_t)max_rows, 8);
    reserve_columns(t, cfg, row_bytes);
    /* Slot 0 exists from the start: ark_table_row reads it for every
     * index out of range. */
    if ((t->s.keyed ? ark__slots_keyed_grow(&t->s, 1)
                    : table_grow_slots(t, 1)) != ARK_OK) {
        ark_table_destroy(t);
        return ARK_ENOMEM;
    }
    *out = t;
    return ARK_OK;
}

void ark_table_destroy(ark_table *t) {
    if (t == NULL) {
        return;
    }
    ark_allocator a = t->s.alloc;
    if (t->vm_base != NULL) {
        ark__vmem_release(t->vm_base, t->vm_bytes);
    }
    ark__free(&a, t->block, t->block_bytes);
    ark__free(&a, t->row_slots, t->room * sizeof *t->row_slots);
    ark__free(&a, t->view.slots.flat, t->slots_room * sizeof(ark__table_slot));
    ark__free(&a, t->present, t->present_words * sizeof *t->present);
    ark__free(&a, t->columns < t->spare_columns ? t->columns : t->spare_columns,
              columns_bytes(t->view.ncolumns));
    ark__slots_fini(&t->s);
    ark__free(&a, t, sizeof *t);
}

/* ---- rows -------------------------------------------------------------- */

/* Move the columns into a new reservation of at least ncap rows (past
 * vm_rows), with ncap committed and the rows copied into cols. */
static ark_status grow_reserved(ark_table *t, size_t ncap, char **cols) {
    size_t rows = t->vm_rows > t->max_cap / 2 ? t->max_cap : t->vm_rows * 2;
    rows = rows < ncap ? ncap : rows;
    size_t bytes;
    char *base = vm_reserve(t, rows, cols, &bytes);
    if (base == NULL) {
        return ARK_ENOMEM;
    }
    if (vm_commit(t, cols, ncap, rows) != 0) {
        ark__vmem_release(base, bytes);
        return ARK_ENOMEM;
    }
    copy_rows(t, cols);
    ark__vmem_release(t->vm_base, t->vm_bytes);
    t->vm_base = base;
    t->vm_bytes = bytes;
    t->vm_rows = rows;
    return ARK_OK;
}

/* Move the columns into one allocator block of ncap rows (cols), rows
 * [rows, zero_end) zeroed, leaving the reservation, if any, for good. */
static ark_status grow_block(ark_table *t, size_t ncap, size_t zero_end,
                             char **cols) {
    size_t bytes = layout_columns(t, NULL, ncap, COLUMN_ALIGN, NULL);
    char *block =
        bytes == 0 ? NULL : ark__alloc(&t->s.alloc, bytes, COLUMN_ALIGN);
    if (block == NULL) {
        return ARK_ENOMEM;
    }
    layout_columns(t, block, ncap, COLUMN_ALIGN, cols);
    copy_rows(t, cols);
    size_t rows = t->view.rows;
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        memset(cols[k] + rows * t->sizes[k], 0,
               (zero_end - rows) * t->sizes[k]);
    }
    if (t->vm_base != NULL) {
        ark__vmem_release(t->vm_base, t->vm_bytes);
        t->vm_base = NULL;
        t->vm_rows = 0;
        t->page = 0;
    }
    ark__free(&t->s.alloc, t->block, t->block_bytes);
    t->block = block;
    t->block_bytes = bytes;
    return ARK_OK;
}

/* Give the columns storage for ncap rows: in place on the virtual-memory
 * path while ncap fits the reservation, else a new reservation with the
 * rows copied. When the OS refuses (address space, the commit charge, or
 * the process's count of memory mappings: a column's first commit splits
 * its part of the reservation in two, and Linux allows 65530 by default),
 * or without a reservation, one allocator block, copied into as it
 * doubles, rows [rows, zero_end) zeroed. Nothing changes on failure. */
static ark_status grow_columns(ark_table *t, size_t ncap, size_t zero_end) {
    char **cols = t->spare_columns;
    ark_status st = ARK_ENOMEM;
    if (t->vm_base != NULL && ncap <= t->vm_rows) {
        if (vm_commit(t, t->columns, ncap, t->vm_rows) == 0) {
            return ARK_OK;
        }
    } else if (t->vm_base != NULL) {
        st = grow_reserved(t, ncap, cols);
    }
    if (st != ARK_OK) {
        st = grow_block(t, ncap, zero_end, cols);
    }
    if (st != ARK_OK) {
        return st;
    }
    t->spare_columns = t->columns;
    t->columns = cols;
    t->view.columns = cols;
    return ARK_OK;
}

/* Zero rows [cap, to) of every column (allocator path: rows past cap are
 * as the allocator gave them) and make them usable. */
static void open_rows(ark_table *t, size_t to) {
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        memset(t->columns[k] + t->cap * t->sizes[k], 0,
               (to - t->cap) * t->sizes[k]);
    }
    t->cap = to;
}

/* Grow the rows to room for want. open: with rows [rows, cap) zero up to
 * at least want, as growth needs; otherwise (reserve) zeroing no row past
 * cap on the allocator path, so that the inserts open them as they come,
 * doubling what is open. */
static ark_status grow_rows(ark_table *t, size_t want, bool open) {
    if (want <= t->room) {
        if (open && want > t->cap) {
            size_t ncap = t->cap < FIRST_CAP ? FIRST_CAP : 2 * t->cap;
            ncap = ncap > want ? ncap : ark__round_up(want, 8);
            open_rows(t, ncap < t->room ? ncap : t->room);
        }
        return ARK_OK;
    }
    size_t ncap = t->room == 0 ? FIRST_CAP : t->room;
    while (ncap < want && ncap < t->max_cap) {
        ncap = ncap > t->max_cap / 2 ? t->max_cap : ncap * 2;
    }
    /* Doubling stops at the reservation, so that the columns stay where
     * they are up to max_rows rows, whatever max_rows is. */
    if (t->vm_base != NULL && want <= t->vm_rows && ncap > t->vm_rows) {
        ncap = t->vm_rows;
    }
    if (ncap < want) {
        return ARK_EFULL;
    }
    size_t bytes;
    if (ark__mul_overflows(ncap, sizeof *t->row_slots, &bytes)) {
        return ARK_ENOMEM;
    }
    uint32_t *row_slots = ark__alloc(&t->s.alloc, bytes, 0);
    if (row_slots == NULL) {
        return ARK_ENOMEM;
    }
    ark_status st = grow_columns(t, ncap, open ? ncap : t->cap);
    if (st != ARK_OK) {
        ark__free(&t->s.alloc, row_slots, bytes);
        return st;
    }
    if (t->view.rows > 0) {
        memcpy(row_slots, t->row_slots, t->view.rows * sizeof *row_slots);
    }
    ark__free(&t->s.alloc, t->row_slots, t->room * sizeof *row_slots);
    t->row_slots = row_slots;
    t->view.row_slots = row_slots;
    t->room = ncap;
    /* Commits read as zero; a block has [rows, cap) zeroed, or all. */
    if (t->vm_base != NULL || open) {
        t->cap = ncap;
    }
    return ARK_OK;
}

ark_status ark__table_grow_rows(ark_table *t, size_t want) {
    return grow_rows(t, want, true);
}

/* A slot for a new row when something must grow first: slots, then rows
 * (which may move the columns); after both succeed the take cannot fail,
 * and spare slots are invisible. */
static ark_status table_take_slow(ark_table *t, uint64_t *i, char **slot) {
    ark_status st = ark__slots_prepare(&t->s);
    if (st == ARK_OK && t->view.rows >= t->cap) {
        st = ark__table_grow_rows(t, t->view.rows + 1);
    }
    if (st == ARK_OK) {
        st = ark__slots_take(&t->s, i, slot);
    }
    return st;
}

ark_status ark_table_insert(ark_table *t, ark_handle *out, size_t *row) {
    assert(t != NULL);
    uint64_t i;
    char *slot = NULL;
    if (ARK__LIKELY(t->view.rows < t->cap)) {
        slot = ark__slots_take_fast(&t->view.slots, &i);
    }
    if (slot == NULL) {
        ark_status st = table_take_slow(t, &i, &slot);
        if (st != ARK_OK) {
            return st;
        }
    }
    size_t r = t->view.rows++;
    ((ark__table_slot *)(void *)slot)->row = (uint32_t)r;
    t->row_slots[r] = (uint32_t)i;
    char *const *cols = t->columns;
    const size_t *sizes = t->sizes;
    for (size_t k = 0, n = t->view.ncolumns; k < n; k++) {
        zero_elem(cols[k] + r * sizes[k], sizes[k]);
    }
    if (out != NULL) {
        *out = ark__slots_handle(&t->view.slots, i, slot);
    }
    if (row != NULL) {
        *row = r;
    }
    return ARK_OK;
}

ark_status ark_table_check(const ark_table *t, ark_handle h) {
    assert(t != NULL);
    return ark__slots_check(&t->s, h);
}

size_t ark_table_count(const ark_table *t) {
    assert(t != NULL);
    return ark__slots_count(&t->s);
}

ark_status ark_table_remove(ark_table *t, ark_handle h) {
    assert(t != NULL);
    return ark__slots_remove(&t->s, &t->view.slots, &table_ops, t, h);
}

ark_status ark_table_remove_later(ark_table *t, ark_handle h) {
    assert(t != NULL);
    return ark__slots_remove_later(&t->s, h);
}

size_t ark_table_flush(ark_table *t) {
    assert(t != NULL);
    return ark__slots_flush(&t->s);
}

void ark_table_clear(ark_table *t, bool table_run_hook) {
    assert(t != NULL);
    ark__slots_clear(&t->s, table_run_hook);
}

ark_status ark_table_reserve(ark_table *t, size_t n) {
    assert(t != NULL);
    if (n <= ark__slots_count(&t->s)) {
        return ARK_OK;
    }
    /* Marked rows keep their places until a flush. */
    size_t marked = t->s.held;
    if (n > t->max_cap - marked) {
        return ARK_EFULL;
    }
    ark_status st = ark__slots_reserve(&t->s, n);
    if (st == ARK_OK && n + marked > t->room) {
        st = grow_rows(t, n + marked, false);
    }
    return st;
}

ark_handle ark_table_seal(const ark_table *t, ark_handle h) {
    assert(t != NULL);
    return ark__slots_seal(&t->s, h);
}

ark_handle ark_table_unseal(const ark_table *t, ark_handle wire) {
    assert(t != NULL);
    return ark__slots_unseal(&t->s, wire);
}

/* ---- checks for the tests ---------------------------------------------- */

size_t ark__table_capacity(const ark_table *t) { return t->cap; }

size_t ark__table_vm_rows(const ark_table *t) {
    return t->vm_base != NULL ? t->vm_rows : 0;
}

/* Every row's slot points back at it and is live or held (marked or
 * dying, which the engine's validation checks); rows = live + held. */
static ark_status validate_rows(const ark_table *t) {
    const ark__slots *s = &t->s;
    const ark__table_slot *slots = ark__table_slots(t);
    if (t->cap % 8 != 0 || t->view.rows > t->cap || t->cap > t->room ||
        t->view.rows != ark__slots_count(s) + s->held) {
        return ARK_ECORRUPT;
    }
    for (size_t r = 0; r < t->view.rows; r++) {
        uint32_t i = t->row_slots[r];
        if (i == 0 || i >= s->v->issued || slots[i].row != r) {
            return ARK_ECORRUPT;
        }
    }
    return ARK_OK;
}

ark_status ark_table_validate(const ark_table *t) {
    return ark__table_validate(t, false);
}

/* A keyed table's presence bits: set exactly for the live slots. */
static bool present_valid(const ark_table *t) {
    const ark__table_slot *slots = ark__table_slots(t);
    uint64_t cap = t->view.slots.cap;
    if (t->present_words * 64 < cap) {
        return false;
    }
    for (uint64_t i = 0; i < (uint64_t)t->present_words * 64; i++) {
        bool bit = (t->present[i >> 6] >> (i & 63) & 1) != 0;
        if (bit != (i < cap && slots[i].stamp != 0 && i != t->s.dying)) {
            return false;
        }
    }
    return true;
}

ark_status ark__table_validate(const ark_table *t, bool all_padding) {
    assert(t != NULL);
    if (t->s.keyed != (t->present != NULL) ||
        (t->present != NULL && !present_valid(t))) {
        return ARK_ECORRUPT;
    }
    ark_status st = validate_rows(t);
    if (st == ARK_OK) {
        st = ark__slots_validate(&t->s, NULL);
    }
    if (st != ARK_OK) {
        return st;
    }
    size_t rows = t->view.rows;
    size_t end = all_padding ? t->cap : ark__round_up(rows, 8);
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        if ((uintptr_t)t->columns[k] % 64 != 0) {
            return ARK_ECORRUPT;
        }
        const char *c = t->columns[k];
        for (size_t b = rows * t->sizes[k]; b < end * t->sizes[k]; b++) {
            if (c[b] != 0) {
                return ARK_ECORRUPT;
            }
        }
    }
    return ARK_OK;
}

/* ---- replication ------------------------------------------------------- */

ark_status ark_table_insert_at(ark_table *t, ark_handle h, size_t *row) {
    assert(t != NULL);
    /* The handle first, then rows (spare rows are invisible), then the
     * slot, which can then fail only for memory and leaves the spare rows. */
    ark_status st = ark__slots_insert_at_check(&t->s, h);
    if (st == ARK_OK && t->view.rows >= t->cap) {
        st = ark__table_grow_rows(t, t->view.rows + 1);
    }
    uint64_t i;
    char *slot;
    if (st == ARK_OK) {
        st = ark__slots_insert_at(&t->s, h, &i, &slot);
    }
    if (st != ARK_OK) {
        return st;
    }
    size_t r = t->view.rows++;
    ((ark__table_slot *)(void *)slot)->row = (uint32_t)r;
    t->row_slots[r] = (uint32_t)i;
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        zero_elem(t->columns[k] + r * t->sizes[k], t->sizes[k]);
    }
    if (t->present != NULL) {
        t->present[i >> 6] |= (uint64_t)1 << (i & 63);
    }
    if (row != NULL) {
        *row = r;
    }
    return ARK_OK;
}

/* ---- claims (src/engine/claim.c) --------------------------------------- */

ark_status ark_table_claim(ark_table *t, ark_handle *out, size_t n) {
    assert(t != NULL && (out != NULL || n == 0));
    return ark__slots_claim(&t->s, out, n);
}

ark_status ark_table_unclaim(ark_table *t, ark_handle h) {
    assert(t != NULL);
    return ark__slots_unclaim(&t->s, h);
}
