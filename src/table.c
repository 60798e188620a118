/*
 * table.c - ark_table: SoA columns, a handle-slot index and a row->slot
 * back-map.
 *
 * Three arrays tie handles to rows:
 *   slots[i]      handle slot i: stamp (generation + 1, 0 = free or
 *                 pending) and the row it lives in; a free slot keeps the
 *                 generation its next occupant gets in the row field.
 *   row_slots[r]  the handle slot of row r, for swap-and-pop and
 *                 handle_at.
 *   ring          FIFO of free slot indices (as in pool.c, and for the
 *                 same reasons: sequential reads, generations spread).
 * slots and ring share one allocation of slot_cap entries (a power of
 * two); row_slots and the remove_later list share one of cap entries
 * (pending rows are distinct rows, so the list never outgrows cap and
 * remove_later never allocates).
 *
 * Column storage, cap rows each (a multiple of 8):
 *   virtual-memory path: one reservation; column k owns a page-aligned
 *   region of round_up(skew(k) + vm_rows * size_k, page) bytes, starts
 *   skew(k) bytes into it, and the region's first
 *   round_up(skew(k) + cap * size_k, page) bytes are committed. Growing
 *   within vm_rows commits more pages in place. Growing past vm_rows
 *   moves everything once into a reservation twice as large.
 *   allocator path: one block, column k at a 64-byte aligned offset (also
 *   skewed); growing allocates a block twice as large and copies.
 * Every row at or past count is zero: commits and new blocks arrive zero,
 * remove zeroes the row it vacates, insert zeroes the row it hands out.
 *
 * Failure atomicity: every new array is allocated before anything is
 * installed; a failed grow frees what it made and leaves the table as it
 * was (committed-but-unused pages are invisible spare capacity).
 */
#include "ark/table.h"

#include "core_internal.h"
#include "table_internal.h"
#include "vmem_internal.h"

#include <assert.h>
#include <string.h>

/* The one external definition of each inline function of table.h. */
ARK_API extern inline size_t ark_table_row(const ark_table *t, ark_handle h);
ARK_API extern inline ark_handle ark_table_handle_at(const ark_table *t,
                                                     size_t row);
ARK_API extern inline size_t ark_table_count(const ark_table *t);
ARK_API extern inline void *ark_table_column(const ark_table *t, size_t col);

/* Column alignment on the allocator path. */
#define COLUMN_ALIGN 64

/* Extra offset between consecutive columns (9 cache lines: every column
 * of 8 starts on different cache sets and at a different page offset). */
#define COLUMN_SKEW 576

/* Rows of the first growth. */
#define FIRST_CAP 32

static size_t round_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

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
    switch (sz) {
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    case 16:
        memcpy(dst, src, 16);
        break;
    default:
        memcpy(dst, src, sz);
        break;
    }
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
    for (size_t k = 0; k < t->ncolumns; k++) {
        size_t bytes;
        if (ark__mul_overflows(rows, t->sizes[k], &bytes) ||
            bytes > SIZE_MAX - align - skew(k) ||
            off > SIZE_MAX - (bytes + skew(k) + align)) {
            return 0;
        }
        if (base != NULL) {
            cols[k] = base + off + skew(k);
        }
        off += round_up(bytes + skew(k), align);
    }
    return off;
}

/* Reserve address space for rows rows per column into cols; returns the
 * base (bytes in *bytes) or NULL. */
static char *vm_reserve(const ark_table *t, size_t rows, char **cols,
                        size_t *bytes) {
    size_t total = layout_columns(t, NULL, rows, t->page, NULL);
    if (total == 0) {
        return NULL;
    }
    char *base = ark__vmem_reserve(total);
    if (base == NULL) {
        return NULL;
    }
    layout_columns(t, base, rows, t->page, cols);
    *bytes = total;
    return base;
}

/* Commit the first rows rows of every column of cols. */
static int vm_commit(const ark_table *t, char **cols, size_t rows) {
    for (size_t k = 0; k < t->ncolumns; k++) {
        size_t bytes = round_up(skew(k) + rows * t->sizes[k], t->page);
        if (ark__vmem_commit(cols[k] - skew(k), bytes) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Copy the count live rows of every column into cols. */
static void copy_rows(const ark_table *t, char **cols) {
    for (size_t k = 0; k < t->ncolumns; k++) {
        if (t->count > 0) {
            memcpy(cols[k], t->columns[k], t->count * t->sizes[k]);
        }
    }
}

/* Double the handle-slot arrays (slots and ring), keeping their contents. */
static ark_status grow_slots(ark_table *t) {
    uint64_t ncap = t->slot_cap == 0 ? 64 : t->slot_cap * 2;
    ncap = ncap > t->limit ? t->limit : ncap;
    size_t bytes;
    if (ncap > SIZE_MAX ||
        ark__mul_overflows((size_t)ncap, sizeof(ark__table_slot) + 4, &bytes)) {
        return ARK_ENOMEM;
    }
    ark__table_slot *slots = ark__alloc(&t->alloc, bytes, 0);
    if (slots == NULL) {
        return ARK_ENOMEM;
    }
    uint32_t *ring = (uint32_t *)(void *)(slots + ncap);
    if (t->issued > 0) {
        memcpy(slots, t->slots_w, (size_t)t->issued * sizeof *slots);
    }
    /* Unroll the old ring so it starts at 0. */
    for (uint64_t k = 0; k < t->free_len; k++) {
        ring[k] = t->ring[(t->free_head + k) & (t->slot_cap - 1)];
    }
    ark__free(&t->alloc, t->slots_w,
              (size_t)t->slot_cap * (sizeof(ark__table_slot) + 4));
    t->slots_w = slots;
    t->slots = slots;
    t->ring = ring;
    t->slot_cap = ncap;
    t->free_head = 0;
    if (t->issued == 0) {
        slots[0].stamp = 0; /* slot 0: never issued, always free */
        slots[0].row = 0;
        t->issued = 1;
    }
    return ARK_OK;
}

ark_status ark_table_create(ark_table **out, const ark_table_config *cfg) {
    assert(out != NULL && cfg != NULL);
    size_t row_bytes = 0;
    if (cfg->ncolumns == 0 || cfg->column_sizes == NULL ||
        cfg->ncolumns > SIZE_MAX / (4 * sizeof(size_t) + 4 * 64)) {
        return ARK_EINVAL;
    }
    for (size_t k = 0; k < cfg->ncolumns; k++) {
        size_t sz = cfg->column_sizes[k];
        if (sz == 0 || sz > ARK_TABLE_MAX_COLUMN_SIZE) {
            return ARK_EINVAL;
        }
        row_bytes += sz;
    }
    ark_handle_layout layout;
    ark_status s = ark__layout_init(&layout, cfg->index_bits, cfg->gen_bits,
                                    cfg->tag_bits, cfg->tag);
    if (s != ARK_OK) {
        return s;
    }
    ark_allocator a;
    s = ark__allocator_init(&a, cfg->allocator);
    if (s != ARK_OK) {
        return s;
    }
    ark_table *t = ark__alloc(&a, sizeof *t, 0);
    if (t == NULL) {
        return ARK_ENOMEM;
    }
    memset(t, 0, sizeof *t);
    t->columns = ark__alloc(&a, columns_bytes(cfg->ncolumns), 0);
    if (t->columns == NULL) {
        ark__free(&a, t, sizeof *t);
        return ARK_ENOMEM;
    }
    t->alloc = a;
    t->layout = layout;
    t->ncolumns = cfg->ncolumns;
    t->spare_columns = t->columns + cfg->ncolumns;
    t->sizes = (size_t *)(void *)(t->spare_columns + cfg->ncolumns);
    for (size_t k = 0; k < cfg->ncolumns; k++) {
        t->columns[k] = NULL;
        t->sizes[k] = cfg->column_sizes[k];
    }
    t->limit = (uint64_t)1 << layout.index_bits;
    /* Slot 0 is never used, so at most limit - 1 rows. */
    uint64_t max_rows = t->limit - 1;
    if (max_rows > SIZE_MAX / 2) {
        max_rows = SIZE_MAX / 2;
    }
    t->max_cap = round_up((size_t)max_rows, 8);
    if (cfg->allocator == NULL) {
        t->page = ark__vmem_page_size();
    }
    if (t->page != 0) {
        size_t rows = cfg->max_rows;
        if (rows == 0) {
            rows = ARK_TABLE_DEFAULT_MAX_ROWS;
            if (rows > ARK_TABLE_RESERVE_BYTES / row_bytes) {
                rows = (size_t)(ARK_TABLE_RESERVE_BYTES / row_bytes);
            }
        }
        rows = rows > t->max_cap ? t->max_cap : rows;
        rows = round_up(rows < 8 ? 8 : rows, 8);
        t->vm_base = vm_reserve(t, rows, t->columns, &t->vm_bytes);
        if (t->vm_base != NULL) {
            t->vm_rows = rows;
        } else {
            t->page = 0; /* no reservation: the allocator path for good */
        }
    }
    /* Slot 0 exists from the start: ark_table_row reads it for every
     * index out of range. */
    if (grow_slots(t) != ARK_OK) {
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
    const ark_allocator *a = &t->alloc;
    if (t->vm_base != NULL) {
        ark__vmem_release(t->vm_base, t->vm_bytes);
    }
    ark__free(a, t->block, t->block_bytes);
    ark__free(a, t->pending, t->cap * (sizeof(uint64_t) + sizeof(uint32_t)));
    ark__free(a, t->slots_w,
              (size_t)t->slot_cap * (sizeof(ark__table_slot) + 4));
    ark__free(a, t->columns < t->spare_columns ? t->columns : t->spare_columns,
              columns_bytes(t->ncolumns));
    ark_allocator copy = *a;
    ark__free(&copy, t, sizeof *t);
}

/* Move the columns into new storage of ncap rows: in place on the
 * virtual-memory path while ncap fits the reservation, else a new
 * reservation or block with the live rows copied. Nothing changes on
 * failure. */
static ark_status grow_columns(ark_table *t, size_t ncap) {
    char **cols = t->spare_columns;
    if (t->vm_base != NULL) {
        if (ncap <= t->vm_rows) {
            return vm_commit(t, t->columns, ncap) == 0 ? ARK_OK : ARK_ENOMEM;
        }
        size_t rows = t->vm_rows > t->max_cap / 2 ? t->max_cap : t->vm_rows * 2;
        rows = rows < ncap ? ncap : rows;
        size_t bytes;
        char *base = vm_reserve(t, rows, cols, &bytes);
        if (base == NULL) {
            return ARK_ENOMEM;
        }
        if (vm_commit(t, cols, ncap) != 0) {
            ark__vmem_release(base, bytes);
            return ARK_ENOMEM;
        }
        copy_rows(t, cols);
        ark__vmem_release(t->vm_base, t->vm_bytes);
        t->vm_base = base;
        t->vm_bytes = bytes;
        t->vm_rows = rows;
    } else {
        size_t bytes = layout_columns(t, NULL, ncap, COLUMN_ALIGN, NULL);
        char *block =
            bytes == 0 ? NULL : ark__alloc(&t->alloc, bytes, COLUMN_ALIGN);
        if (block == NULL) {
            return ARK_ENOMEM;
        }
        layout_columns(t, block, ncap, COLUMN_ALIGN, cols);
        copy_rows(t, cols);
        for (size_t k = 0; k < t->ncolumns; k++) {
            memset(cols[k] + t->count * t->sizes[k], 0,
                   (ncap - t->count) * t->sizes[k]);
        }
        ark__free(&t->alloc, t->block, t->block_bytes);
        t->block = block;
        t->block_bytes = bytes;
    }
    t->spare_columns = t->columns;
    t->columns = cols;
    return ARK_OK;
}

/* Double the row capacity: columns, row_slots and the pending list. */
static ark_status grow_rows(ark_table *t) {
    size_t ncap = t->cap == 0 ? FIRST_CAP : t->cap;
    ncap = ncap > t->max_cap / 2 ? t->max_cap : ncap * 2;
    if (ncap <= t->cap) {
        return ARK_EFULL; /* unreachable: slots run out first */
    }
    size_t bytes;
    if (ark__mul_overflows(ncap, sizeof(uint64_t) + sizeof(uint32_t), &bytes)) {
        return ARK_ENOMEM;
    }
    uint64_t *pending = ark__alloc(&t->alloc, bytes, 0);
    if (pending == NULL) {
        return ARK_ENOMEM;
    }
    ark_status s = grow_columns(t, ncap);
    if (s != ARK_OK) {
        ark__free(&t->alloc, pending, bytes);
        return s;
    }
    uint32_t *row_slots = (uint32_t *)(void *)(pending + ncap);
    if (t->count > 0) {
        memcpy(row_slots, t->row_slots_w, t->count * sizeof *row_slots);
    }
    if (t->pending_len > 0) {
        memcpy(pending, t->pending, t->pending_len * sizeof *pending);
    }
    ark__free(&t->alloc, t->pending,
              t->cap * (sizeof(uint64_t) + sizeof(uint32_t)));
    t->pending = pending;
    t->row_slots_w = row_slots;
    t->row_slots = row_slots;
    t->cap = ncap;
    return ARK_OK;
}

ark_status ark_table_insert(ark_table *t, ark_handle *out, size_t *row) {
    assert(t != NULL);
    /* Reuse the oldest free slot once enough are queued or no fresh one
     * is left; grow everything that must grow before changing anything. */
    bool reuse = t->free_len > 0 && (t->free_len >= ARK_TABLE_REUSE_DELAY ||
                                     t->issued >= t->limit);
    if (!reuse) {
        if (t->issued >= t->limit) {
            return ARK_EFULL;
        }
        if (t->issued >= t->slot_cap) {
            ark_status s = grow_slots(t);
            if (s != ARK_OK) {
                return s;
            }
        }
    }
    if (t->count >= t->cap) {
        ark_status s = grow_rows(t);
        if (s != ARK_OK) {
            return s;
        }
    }
    uint64_t i;
    uint32_t gen;
    if (reuse) {
        i = t->ring[t->free_head];
        t->free_head = (t->free_head + 1) & (t->slot_cap - 1);
        t->free_len--;
        gen = t->slots_w[i].row;
    } else {
        i = t->issued++;
        gen = 0;
    }
    size_t r = t->count++;
    t->slots_w[i].stamp = gen + 1;
    t->slots_w[i].row = (uint32_t)r;
    t->row_slots_w[r] = (uint32_t)i;
    char *const *cols = t->columns;
    const size_t *sizes = t->sizes;
    for (size_t k = 0, n = t->ncolumns; k < n; k++) {
        zero_elem(cols[k] + r * sizes[k], sizes[k]);
    }
    if (out != NULL) {
        *out = ark__handle_make(&t->layout, i, gen);
    }
    if (row != NULL) {
        *row = r;
    }
    return ARK_OK;
}

ark_status ark_table_check(const ark_table *t, ark_handle h) {
    assert(t != NULL);
    ark_status s = ark__layout_check(&t->layout, h);
    if (s != ARK_OK) {
        return s;
    }
    uint64_t i = ark__handle_index(&t->layout, h);
    if (i == 0 || i >= t->issued) {
        return ARK_ERANGE;
    }
    return t->slots[i].stamp == ark__handle_stamp(&t->layout, h) ? ARK_OK
                                                                 : ARK_ESTALE;
}

/* Swap-and-pop row r: the last row moves into r in every column and in
 * the index, and the vacated last row is zeroed. */
static void pop_row(ark_table *t, size_t r) {
    size_t last = t->count - 1;
    /* Locals: the element stores are char stores, which the compiler must
     * assume may alias t's fields. */
    char *const *cols = t->columns;
    const size_t *sizes = t->sizes;
    size_t ncolumns = t->ncolumns;
    if (r != last) {
        for (size_t k = 0; k < ncolumns; k++) {
            size_t sz = sizes[k];
            move_elem(cols[k] + r * sz, cols[k] + last * sz, sz);
        }
        uint32_t moved = t->row_slots_w[last];
        t->row_slots_w[r] = moved;
        t->slots_w[moved].row = (uint32_t)r;
    } else {
        for (size_t k = 0; k < ncolumns; k++) {
            zero_elem(cols[k] + last * sizes[k], sizes[k]);
        }
    }
    t->count = last;
}

/* Free handle slot i (stamp already 0) whose last generation was gen:
 * queue it with its next generation, or retire it. The ring has room for
 * every slot. */
static void release_slot(ark_table *t, uint64_t i, uint32_t gen) {
    if (gen >= t->layout.gen_max) {
        t->retired++;
        return;
    }
    t->slots_w[i].row = gen + 1;
    t->ring[(t->free_head + t->free_len) & (t->slot_cap - 1)] = (uint32_t)i;
    t->free_len++;
}

/* Check h and mark its slot not live (stamp 0, row kept): the first half
 * of both removals. */
static ark_status detach(ark_table *t, ark_handle h, uint64_t *i,
                         uint32_t *gen) {
    ark_status s = ark_table_check(t, h);
    if (s != ARK_OK) {
        return s;
    }
    *i = ark__handle_index(&t->layout, h);
    *gen = t->slots_w[*i].stamp - 1;
    t->slots_w[*i].stamp = 0;
    return ARK_OK;
}

ark_status ark_table_remove(ark_table *t, ark_handle h) {
    uint64_t i;
    uint32_t gen;
    ark_status s = detach(t, h, &i, &gen);
    if (s == ARK_OK) {
        pop_row(t, t->slots_w[i].row);
        release_slot(t, i, gen);
    }
    return s;
}

ark_status ark_table_remove_later(ark_table *t, ark_handle h) {
    uint64_t i;
    uint32_t gen;
    ark_status s = detach(t, h, &i, &gen);
    if (s == ARK_OK) {
        /* The slot keeps its row (moves still update it) until the flush. */
        t->pending[t->pending_len++] = i | (uint64_t)gen << 32;
    }
    return s;
}

size_t ark_table_flush(ark_table *t) {
    assert(t != NULL);
    size_t n = t->pending_len;
    for (size_t k = 0; k < n; k++) {
        uint64_t i = t->pending[k] & UINT32_MAX;
        pop_row(t, t->slots_w[i].row);
        release_slot(t, i, (uint32_t)(t->pending[k] >> 32));
    }
    t->pending_len = 0;
    return n;
}

ark_status ark__table_validate(const ark_table *t, bool all_padding) {
    assert(t != NULL);
    if (t->cap % 8 != 0 || t->count > t->cap || t->pending_len > t->count ||
        t->issued > t->slot_cap || t->free_len > t->slot_cap) {
        return ARK_ECORRUPT;
    }
    /* Classify every issued slot: live and pending ones by their rows. */
    uint64_t live = 0, pending = 0;
    for (size_t r = 0; r < t->count; r++) {
        uint32_t i = t->row_slots[r];
        if (i == 0 || i >= t->issued || t->slots[i].row != r) {
            return ARK_ECORRUPT;
        }
        if (t->slots[i].stamp != 0) {
            live++;
        } else {
            pending++;
        }
    }
    if (pending != t->pending_len) {
        return ARK_ECORRUPT;
    }
    for (size_t k = 0; k < t->pending_len; k++) {
        uint64_t i = t->pending[k] & UINT32_MAX;
        if (i == 0 || i >= t->issued || t->slots[i].stamp != 0 ||
            t->slots[i].row >= t->count || t->row_slots[t->slots[i].row] != i) {
            return ARK_ECORRUPT;
        }
    }
    for (uint64_t k = 0; k < t->free_len; k++) {
        uint32_t i = t->ring[(t->free_head + k) & (t->slot_cap - 1)];
        if (i == 0 || i >= t->issued || t->slots[i].stamp != 0 ||
            t->slots[i].row == 0 || t->slots[i].row > t->layout.gen_max) {
            return ARK_ECORRUPT;
        }
    }
    if (t->issued > 0 &&
        live + pending + t->free_len + t->retired != t->issued - 1) {
        return ARK_ECORRUPT;
    }
    size_t end = all_padding ? t->cap : round_up(t->count, 8);
    for (size_t k = 0; k < t->ncolumns; k++) {
        if ((uintptr_t)t->columns[k] % 64 != 0) {
            return ARK_ECORRUPT;
        }
        const char *c = t->columns[k];
        for (size_t b = t->count * t->sizes[k]; b < end * t->sizes[k]; b++) {
            if (c[b] != 0) {
                return ARK_ECORRUPT;
            }
        }
    }
    return ARK_OK;
}
