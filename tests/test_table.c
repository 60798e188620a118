/* SPDX-License-Identifier: MIT */
/*
 * test_table.c - ark_table's storage: rows and columns, a model test over
 * both storage paths, address stability, alignment and allocation-failure
 * injection. The handle rules it shares with ark_pool (statuses, layouts,
 * reuse, retirement, forged handles, hooks, sealing) are tested once in
 * test_handles.c.
 */
#if defined(__linux__)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#endif
#include "ark/ark.h"
#include "harness.h"
#include "table_internal.h"

#include <stdio.h>
#include <stdlib.h>
#if defined(_WIN32)
#include <windows.h>
#endif

/* Whether mapping_end can see this system's mappings. */
static const bool mapping_known =
#if defined(_WIN32) || defined(__linux__)
    true;
#else
    false;
#endif

#if defined(__linux__) && defined(ARK_TEST_OWN_MAPPINGS)
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

/* Test rows carry an id; every column holds a value derived from it. */
enum { NCOL = 3 };
static const size_t col_sizes[NCOL] = {4, 8, 12};

static uint32_t col0_of(uint64_t id) { return (uint32_t)(id * 2654435761u); }
static uint64_t col1_of(uint64_t id) { return id ^ 0xa5a5a5a5deadbeefull; }
static uint32_t col2_of(uint64_t id, int j) {
    return (uint32_t)(id + 1 + (uint64_t)j * 0x10001);
}

static void write_row(ark_table *t, size_t r, uint64_t id) {
    uint32_t *c0 = ark_table_column(t, 0);
    uint64_t *c1 = ark_table_column(t, 1);
    uint32_t *c2 = ark_table_column(t, 2);
    c0[r] = col0_of(id);
    c1[r] = col1_of(id);
    for (int j = 0; j < 3; j++) {
        c2[3 * r + (size_t)j] = col2_of(id, j);
    }
}

/* True when row r holds id in every column. */
static bool row_holds(const ark_table *t, size_t r, uint64_t id) {
    const uint32_t *c0 = ark_table_column(t, 0);
    const uint64_t *c1 = ark_table_column(t, 1);
    const uint32_t *c2 = ark_table_column(t, 2);
    if (c0[r] != col0_of(id) || c1[r] != col1_of(id)) {
        return false;
    }
    for (int j = 0; j < 3; j++) {
        if (c2[3 * r + (size_t)j] != col2_of(id, j)) {
            return false;
        }
    }
    return true;
}

static bool row_is_zero(const ark_table *t, size_t r) {
    for (size_t k = 0; k < NCOL; k++) {
        const unsigned char *c = ark_table_column(t, k);
        for (size_t b = 0; b < col_sizes[k]; b++) {
            if (c[r * col_sizes[k] + b] != 0) {
                return false;
            }
        }
    }
    return true;
}

static ark_table *make_table(const ark_table_config *cfg) {
    ark_table *t = NULL;
    if (ark_table_create(&t, cfg) != ARK_OK) {
        return NULL;
    }
    return t;
}

static ark_table_config base_config(void) {
    ark_table_config cfg = {.column_sizes = col_sizes, .ncolumns = NCOL};
    return cfg;
}

TEST(create_rejects_bad_configs) {
    ark_table *t = (ark_table *)(uintptr_t)1;
    ark_table_config cfg = base_config();
    cfg.ncolumns = 0;
    CHECK_STATUS(ark_table_create(&t, &cfg), ARK_EINVAL);
    CHECK(t == (ark_table *)(uintptr_t)1); /* *out untouched on failure */
    cfg = base_config();
    cfg.column_sizes = NULL;
    CHECK_STATUS(ark_table_create(&t, &cfg), ARK_EINVAL);
    size_t zero[2] = {4, 0};
    cfg = base_config();
    cfg.column_sizes = zero;
    cfg.ncolumns = 2;
    CHECK_STATUS(ark_table_create(&t, &cfg), ARK_EINVAL);
    size_t huge[1] = {ARK_TABLE_MAX_COLUMN_SIZE + 1};
    cfg.column_sizes = huge;
    cfg.ncolumns = 1;
    CHECK_STATUS(ark_table_create(&t, &cfg), ARK_EINVAL);
    /* Handle layouts: test_handles.c, config_edges_give_einval. */
    ark_allocator half = {.alloc = NULL, .free = NULL, .ctx = NULL};
    cfg = base_config();
    cfg.allocator = &half;
    CHECK_STATUS(ark_table_create(&t, &cfg), ARK_EINVAL);
    cfg = base_config();
    CHECK_OK(ark_table_create(&t, &cfg));
    CHECK_EQ(ark_table_rows(t), 0);
    ark_table_destroy(t);
    ark_table_destroy(NULL);
}

TEST(insert_row_remove_roundtrip) {
    ark_table_config cfg = base_config();
    ark_table *t = make_table(&cfg);
    CHECK(t != NULL);
    ark_handle h[100];
    for (uint64_t i = 0; i < 100; i++) {
        size_t r = 999;
        CHECK_OK(ark_table_insert(t, &h[i], &r));
        CHECK_EQ(r, i); /* appended at the end */
        CHECK(h[i] != ARK_NULL_HANDLE);
        CHECK(row_is_zero(t, r)); /* a new row is zeroed */
        write_row(t, r, i + 1);
    }
    CHECK_EQ(ark_table_rows(t), 100);
    for (uint64_t i = 0; i < 100; i++) {
        CHECK_EQ(ark_table_row(t, h[i]), i);
        CHECK_EQ(ark_table_handle_at(t, i), h[i]);
        CHECK_OK(ark_table_check(t, h[i]));
    }
    /* Swap-and-pop: the last row (id 100) moves into row 7. */
    CHECK_OK(ark_table_remove(t, h[7]));
    CHECK_EQ(ark_table_row(t, h[7]), ARK_NO_ROW);
    CHECK_STATUS(ark_table_check(t, h[7]), ARK_ESTALE);
    CHECK_STATUS(ark_table_remove(t, h[7]), ARK_ESTALE);
    CHECK_EQ(ark_table_rows(t), 99);
    CHECK_EQ(ark_table_row(t, h[99]), 7);
    CHECK(row_holds(t, 7, 100));
    CHECK_EQ(ark_table_handle_at(t, 7), h[99]);
    CHECK(row_is_zero(t, 99)); /* vacated row zeroed */
    CHECK_EQ(ark_table_handle_at(t, 99), ARK_NULL_HANDLE);
    CHECK_EQ(ark_table_handle_at(t, ARK_NO_ROW), ARK_NULL_HANDLE);
    /* Removing the last row moves nothing. */
    CHECK_OK(ark_table_remove(t, h[98]));
    CHECK_EQ(ark_table_row(t, h[99]), 7);
    CHECK_EQ(ark_table_rows(t), 98);
    /* Outputs may be NULL. */
    CHECK_OK(ark_table_insert(t, NULL, NULL));
    CHECK_EQ(ark_table_rows(t), 99);
    CHECK(ark_table_handle_at(t, 98) != ARK_NULL_HANDLE);
    CHECK(ark_table_column(t, NCOL) == NULL);
    CHECK(ark_table_column(t, (size_t)-1) == NULL);
    CHECK_OK(ark__table_validate(t, true));
    ark_table_destroy(t);
}

TEST(columns_are_aligned_and_padding_rows_zero) {
    size_t odd[4] = {1, 3, 7, 12};
    test_allocator ta;
    test_allocator_init(&ta);
    for (int path = 0; path < 2; path++) {
        ark_table_config cfg = {.column_sizes = odd, .ncolumns = 4};
        cfg.allocator = path == 0 ? NULL : &ta.base;
        ark_table *t = make_table(&cfg);
        CHECK(t != NULL);
        for (size_t n = 1; n <= 3000; n++) {
            size_t r;
            CHECK_OK(ark_table_insert(t, NULL, &r));
            for (size_t k = 0; k < 4; k++) {
                unsigned char *c = ark_table_column(t, k);
                CHECK(c != NULL);
                CHECK_EQ((uintptr_t)c % 64, 0);
                memset(c + r * odd[k], 0xff, odd[k]);
            }
            CHECK_EQ(ark__table_capacity(t) % 8, 0);
            if (n % 97 == 0) {
                /* Remove a row in the middle: the vacated row is zero. */
                CHECK_OK(ark_table_remove(t, ark_table_handle_at(t, n / 3)));
            }
            if (n % 101 == 0 || n < 70) {
                CHECK_OK(ark__table_validate(t, true));
            }
        }
        /* Whole groups of 8 can be read: padding rows are zero. */
        size_t count = ark_table_rows(t);
        for (size_t k = 0; k < 4; k++) {
            const unsigned char *c = ark_table_column(t, k);
            for (size_t b = count * odd[k];
                 b < ((count + 7) & ~(size_t)7) * odd[k]; b++) {
                CHECK_EQ(c[b], 0);
            }
            for (size_t b = 0; b < count * odd[k]; b++) {
                CHECK_EQ(c[b], 0xff);
            }
        }
        ark_table_destroy(t);
    }
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

/* Insert n rows into a table of max_rows (0: the default) and check that
 * no column moves on the way. */
static int columns_stay(size_t max_rows, uint64_t n) {
    ark_table_config cfg = base_config();
    cfg.max_rows = max_rows;
    ark_table *t = make_table(&cfg);
    REQ(t != NULL);
#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
    REQ(ark__table_vm_rows(t) != 0); /* default allocator: vmem */
#endif
    if (ark__table_vm_rows(t) == 0) {
        ark_table_destroy(t);
        return 1;
    }
    void *base[NCOL];
    for (size_t k = 0; k < NCOL; k++) {
        base[k] = ark_table_column(t, k);
        REQ(base[k] != NULL);
    }
    for (uint64_t i = 0; i < n; i++) {
        size_t r;
        REQ(ark_table_insert(t, NULL, &r) == ARK_OK);
        write_row(t, r, i + 1);
        for (size_t k = 0; k < NCOL; k++) {
            REQ(ark_table_column(t, k) == base[k]);
        }
    }
    REQ(row_holds(t, 0, 1));
    REQ(row_holds(t, n - 1, n));
    REQ(ark__table_validate(t, false) == ARK_OK);
    ark_table_destroy(t);
    return 1;
}

/* The column base never changes up to max_rows rows, whatever max_rows
 * is: doubling from 32 rows once passed a reservation that is not 32 *
 * 2^k rows (1000 rows: the columns moved at row 512). */
TEST(first_row_keeps_its_address_on_the_vm_path) {
    CHECK(columns_stay(0, 200000));
    CHECK(columns_stay(1000, 1000));
    CHECK(columns_stay(100, 104)); /* a hint: reservation for 104 rows */
    CHECK(columns_stay(5000, 5000));
    CHECK(columns_stay(40, 40));
}

#if defined(__linux__) && defined(ARK_TEST_OWN_MAPPINGS)
/* Use up the process's memory mappings (vm.max_map_count): pages of
 * alternating protection in one region, until an mprotect that would
 * split it fails. Returns the region (*bytes long), or NULL when the
 * limit was not reached. */
static void *use_up_mappings(size_t *bytes) {
    long max = 0;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f == NULL) {
        return NULL;
    }
    int got = fscanf(f, "%ld", &max);
    fclose(f);
    if (got != 1 || max <= 0 || max > (1L << 20)) {
        return NULL;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size_t)max * 2 + 64;
    *bytes = n * page;
    char *p = mmap(NULL, *bytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    for (size_t i = 1; i < n; i += 2) {
        if (mprotect(p + i * page, page, PROT_READ) != 0) {
            return p;
        }
    }
    munmap(p, *bytes);
    return NULL;
}

/* A table on the virtual-memory path whose commit the OS refuses (here:
 * no memory mapping left; a column's first commit splits its part of the
 * reservation, so each column takes two mappings) moves its
 * columns to one allocator block and goes on, instead of failing every
 * insert while memory is plentiful. */
TEST(own_maps_columns_move_when_commits_fail) {
    ark_table_config cfg = base_config();
    cfg.max_rows = (size_t)1 << 20;
    ark_table *t = make_table(&cfg);
    CHECK(t != NULL);
    CHECK(ark__table_vm_rows(t) != 0);
    ark_handle h[3000];
    size_t bytes = 0;
    void *maps = use_up_mappings(&bytes); /* before the first commit */
    CHECK(maps != NULL);
    ark_status st = ARK_OK;
    uint64_t n = 0;
    for (; n < 3000 && st == ARK_OK; n++) {
        size_t r;
        st = ark_table_insert(t, &h[n], &r);
        if (st == ARK_OK) {
            write_row(t, r, n + 1);
        }
    }
    munmap(maps, bytes);
    CHECK_OK(st);
    CHECK_EQ(ark__table_vm_rows(t), 0); /* the allocator path now */
    for (uint64_t i = 0; i < n; i++) {
        CHECK(row_holds(t, ark_table_row(t, h[i]), i + 1));
    }
    CHECK_OK(ark__table_validate(t, true));
    ark_table_destroy(t);
}
#endif

#if defined(_WIN32)
/* The end of the run of pages like the one that holds address a (on the
 * vmem path: committed ones), or 0 when it cannot be read. */
static uintptr_t mapping_end(const void *a) {
    MEMORY_BASIC_INFORMATION mi;
    if (VirtualQuery(a, &mi, sizeof mi) == 0) {
        return 0;
    }
    return (uintptr_t)mi.BaseAddress + mi.RegionSize;
}
#else
/* The end of the mapping that holds address a, from /proc/self/maps
 * (Linux), or 0 when it cannot be read. */
static uintptr_t mapping_end(const void *a) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uintptr_t end = 0;
    while (f != NULL && end == 0 && fgets(line, sizeof line, f) != NULL) {
        unsigned long long lo, hi;
        if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && (uintptr_t)a >= lo &&
            (uintptr_t)a < hi) {
            end = (uintptr_t)hi;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return end;
}
#endif

/* Past its first 2 MiB, a column in a 2 MiB-aligned reservation is
 * committed in whole 2 MiB blocks, so that no block is first touched
 * while the commit ends inside it (which gives it small pages for good);
 * below 2 MiB commits stay page-sized, so a small table pins no 2 MiB. */
TEST(big_columns_commit_whole_2mib_blocks) {
    const size_t sizes[4] = {4, 4, 4, 4}, huge = (size_t)2 << 20;
    ark_table_config cfg = {.column_sizes = sizes, .ncolumns = 4};
    ark_table *t;
    CHECK_OK(ark_table_create(&t, &cfg));
    if (ark__table_vm_rows(t) == 0) {
        ark_table_destroy(t);
        return;
    }
    for (size_t i = 0; i < 100; i++) {
        CHECK_OK(ark_table_insert(t, NULL, NULL));
    }
    for (size_t k = 1; k < 4; k++) { /* skewed columns */
        uintptr_t end = mapping_end((const char *)ark_table_column(t, k) +
                                    ark_table_rows(t) * 4 - 1);
        CHECK(end == 0 || end % huge != 0);
    }
    for (size_t i = 100; i < ((size_t)1 << 20); i++) {
        CHECK_OK(ark_table_insert(t, NULL, NULL));
    }
    for (size_t k = 0; k < 4; k++) {
        uintptr_t end = mapping_end((const char *)ark_table_column(t, k) +
                                    ark_table_rows(t) * 4 - 1);
        CHECK(end != 0 || !mapping_known);
        CHECK_EQ(end % huge, 0);
    }
    ark_table_destroy(t);
}

TEST(growth_past_max_rows_keeps_data) {
    ark_table_config cfg = base_config();
    cfg.max_rows = 100; /* a hint: reservation for 104 rows */
    ark_table *t = make_table(&cfg);
    CHECK(t != NULL);
    ark_handle h[1000];
    for (uint64_t i = 0; i < 1000; i++) {
        size_t r;
        CHECK_OK(ark_table_insert(t, &h[i], &r));
        write_row(t, r, i + 1);
    }
    for (uint64_t i = 0; i < 1000; i++) {
        size_t r = ark_table_row(t, h[i]);
        CHECK_EQ(r, i);
        CHECK(row_holds(t, r, i + 1));
    }
#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
    CHECK(ark__table_vm_rows(t) >= 1000); /* still on the vmem path */
#endif
    CHECK_OK(ark__table_validate(t, true));
    ark_table_destroy(t);
}

TEST(remove_later_keeps_rows_in_place_until_flush) {
    ark_table_config cfg = base_config();
    ark_table *t = make_table(&cfg);
    CHECK(t != NULL);
    enum { N = 50 };
    ark_handle h[N];
    for (uint64_t i = 0; i < N; i++) {
        size_t r;
        CHECK_OK(ark_table_insert(t, &h[i], &r));
        write_row(t, r, i + 1);
    }
    /* A frame's loop marks every third row and the last two. */
    for (size_t r = 0; r < ark_table_rows(t); r++) {
        if (r % 3 == 0 || r >= N - 2) {
            CHECK_OK(ark_table_remove_later(t, ark_table_handle_at(t, r)));
            CHECK_EQ(ark_table_handle_at(t, r), ARK_NULL_HANDLE);
        }
    }
    CHECK_EQ(ark_table_rows(t), N); /* nothing moved yet */
    size_t marked = 0;
    for (uint64_t i = 0; i < N; i++) {
        bool m = i % 3 == 0 || i >= N - 2;
        marked += m;
        CHECK(row_holds(t, i, i + 1)); /* data still readable */
        CHECK_EQ(ark_table_row(t, h[i]), m ? ARK_NO_ROW : i);
    }
    CHECK_OK(ark__table_validate(t, true));
    CHECK_EQ(ark_table_flush(t), marked);
    CHECK_EQ(ark_table_flush(t), 0);
    CHECK_EQ(ark_table_rows(t), N - marked);
    for (uint64_t i = 0; i < N; i++) {
        bool m = i % 3 == 0 || i >= N - 2;
        size_t r = ark_table_row(t, h[i]);
        if (m) {
            CHECK_EQ(r, ARK_NO_ROW);
        } else {
            CHECK(r < N - marked);
            CHECK(row_holds(t, r, i + 1));
            CHECK_EQ(ark_table_handle_at(t, r), h[i]);
        }
    }
    CHECK_OK(ark__table_validate(t, true));
    /* An immediate remove while rows are pending keeps them consistent. */
    CHECK_OK(ark_table_remove_later(t, ark_table_handle_at(t, 0)));
    CHECK_OK(ark_table_remove(t, ark_table_handle_at(t, 1)));
    CHECK_OK(ark__table_validate(t, true));
    CHECK_EQ(ark_table_flush(t), 1);
    CHECK_EQ(ark_table_rows(t), N - marked - 2);
    CHECK_OK(ark__table_validate(t, true));
    ark_table_destroy(t);
}

TEST(reserve_then_insert_allocates_nothing) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark_table_config cfg = base_config();
    cfg.allocator = &ta.base;
    ark_table *t = make_table(&cfg);
    CHECK(t != NULL);
    CHECK_OK(ark_table_reserve(t, 0));
    CHECK_OK(ark_table_reserve(t, 5000));
    uint64_t allocs = ta.allocs;
    void *col0 = ark_table_column(t, 0);
    enum { N = 5000 };
    ark_handle *h = malloc(N * sizeof *h);
    CHECK(h != NULL);
    for (uint64_t i = 0; i < N; i++) {
        size_t r;
        CHECK_OK(ark_table_insert(t, &h[i], &r));
        write_row(t, r, i + 1);
    }
    CHECK_EQ(ta.allocs, allocs);
    CHECK(ark_table_column(t, 0) == col0); /* no column moved */
    /* Free slots count toward a reservation; marked rows keep theirs. */
    for (size_t i = 0; i < 1000; i++) {
        CHECK_OK(ark_table_remove(t, h[i]));
    }
    for (size_t i = 1000; i < 1100; i++) {
        CHECK_OK(ark_table_remove_later(t, h[i]));
    }
    CHECK_OK(ark_table_reserve(t, N));
    allocs = ta.allocs;
    col0 = ark_table_column(t, 0);
    for (size_t i = 0; i < 1100; i++) {
        CHECK_OK(ark_table_insert(t, NULL, NULL));
    }
    CHECK_EQ(ta.allocs, allocs);
    CHECK(ark_table_column(t, 0) == col0);
    CHECK_EQ(ark_table_count(t), N);
    CHECK_EQ(ark_table_rows(t), N + 100);
    for (size_t i = 1100; i < N; i++) {
        size_t r = ark_table_row(t, h[i]);
        CHECK(r != ARK_NO_ROW);
        CHECK(row_holds(t, r, i + 1));
    }
    CHECK_EQ(ark_table_flush(t), 100);
    CHECK_OK(ark__table_validate(t, true));
    ark_table_destroy(t);
    free(h);
    /* The index space caps a reservation, and EFULL reserves nothing. */
    cfg.index_bits = 8;
    t = make_table(&cfg);
    CHECK(t != NULL);
    uint64_t before = ta.allocs;
    CHECK_STATUS(ark_table_reserve(t, 256), ARK_EFULL);
    CHECK_EQ(ta.allocs, before);
    CHECK_OK(ark_table_reserve(t, 255));
    before = ta.allocs;
    for (int i = 0; i < 255; i++) {
        CHECK_OK(ark_table_insert(t, NULL, NULL));
    }
    CHECK_EQ(ta.allocs, before);
    CHECK_STATUS(ark_table_insert(t, NULL, NULL), ARK_EFULL);
    CHECK_OK(ark__table_validate(t, true));
    ark_table_destroy(t);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

/* clear(false): no row left, marked ones included, every row zeroed and
 * every handle stale; the table is reused from the start of its rows. */
TEST(clear_empties_rows_and_stales_handles) {
    for (int path = 0; path < 2; path++) {
        test_allocator ta;
        test_allocator_init(&ta);
        ark_table_config cfg = base_config();
        cfg.allocator = path ? &ta.base : NULL;
        ark_table *t = make_table(&cfg);
        CHECK(t != NULL);
        ark_handle h[300];
        for (uint64_t i = 0; i < 300; i++) {
            size_t r;
            CHECK_OK(ark_table_insert(t, &h[i], &r));
            write_row(t, r, i + 1);
        }
        for (int i = 0; i < 300; i += 9) {
            CHECK_OK(ark_table_remove_later(t, h[i]));
        }
        size_t cap = ark__table_capacity(t);
        ark_table_clear(t, false);
        CHECK_EQ(ark_table_rows(t), 0);
        CHECK_EQ(ark_table_count(t), 0);
        CHECK_EQ(ark_table_flush(t), 0);
        CHECK_EQ(ark__table_capacity(t), cap);  /* capacity is kept */
        CHECK_OK(ark__table_validate(t, true)); /* rows [0, cap) zero */
        for (int i = 0; i < 300; i++) {
            CHECK_EQ(ark_table_row(t, h[i]), ARK_NO_ROW);
            CHECK_STATUS(ark_table_check(t, h[i]), ARK_ESTALE);
        }
        for (uint64_t i = 0; i < 300; i++) {
            ark_handle g;
            size_t r;
            CHECK_OK(ark_table_insert(t, &g, &r));
            CHECK_EQ(r, i);
            CHECK(row_is_zero(t, r));
            for (int j = 0; j < 300; j++) {
                CHECK(g != h[j]);
            }
        }
        ark_table_destroy(t);
        CHECK_EQ(ta.live_blocks, 0);
    }
}

/* The model: which ids are live or pending, under which handles, and a
 * replica of the slot allocator (FIFO reuse with a delay, retirement). */
typedef struct model {
    ark_handle *handle; /* per live entry */
    uint64_t *id;
    size_t live;
    ark_handle *pend;
    size_t npend;
    uint32_t *next_gen; /* per slot */
    uint32_t *queue;    /* FIFO of free slots */
    size_t qhead, qlen;
    uint64_t issued, limit, gen_max;
    unsigned index_bits;
} model;

/* The handle the table must issue next, or 0 for EFULL. */
static ark_handle model_next(const model *m, uint64_t *slot) {
    if (m->qlen > 0 && (m->qlen >= ARK_REUSE_DELAY || m->issued >= m->limit)) {
        *slot = m->queue[m->qhead];
        return *slot | (uint64_t)m->next_gen[*slot] << m->index_bits;
    }
    if (m->issued >= m->limit) {
        return 0;
    }
    *slot = m->issued;
    return *slot;
}

static void model_take(model *m, uint64_t slot) {
    if (m->qlen > 0 && m->queue[m->qhead] == slot) {
        m->qhead++;
        m->qlen--;
    } else {
        m->issued++;
        m->next_gen[slot] = 0;
    }
}

static void model_free(model *m, ark_handle h) {
    uint64_t slot = h & ((1ull << m->index_bits) - 1);
    uint64_t gen = h >> m->index_bits;
    if (gen >= m->gen_max) {
        return; /* retired */
    }
    m->next_gen[slot] = (uint32_t)gen + 1;
    m->queue[m->qhead + m->qlen++] = (uint32_t)slot;
}

/* Every live handle maps to the row holding its data in every column,
 * rows are packed and padding rows are zero. */
static void model_verify(const ark_table *t, const model *m) {
    CHECK_EQ(ark_table_rows(t), m->live + m->npend);
    for (size_t k = 0; k < m->live; k++) {
        size_t r = ark_table_row(t, m->handle[k]);
        CHECK(r < ark_table_rows(t));
        CHECK(row_holds(t, r, m->id[k]));
        CHECK_EQ(ark_table_handle_at(t, r), m->handle[k]);
    }
    for (size_t k = 0; k < m->npend; k++) {
        CHECK_EQ(ark_table_row(t, m->pend[k]), ARK_NO_ROW);
        CHECK_STATUS(ark_table_check(t, m->pend[k]), ARK_ESTALE);
    }
    CHECK_OK(ark__table_validate(t, false));
}

static void run_model(const ark_allocator *a, unsigned index_bits,
                      unsigned gen_bits, uint64_t ops, size_t target_max,
                      bool expect_full) {
    ark_table_config cfg = base_config();
    cfg.index_bits = index_bits;
    cfg.gen_bits = gen_bits;
    cfg.allocator = a;
    ark_table *t = make_table(&cfg);
    CHECK(t != NULL);
    model m = {0};
    m.index_bits = index_bits;
    m.limit = 1ull << index_bits;
    m.gen_max = (1ull << gen_bits) - 1;
    m.issued = 1;
    size_t slots = (size_t)m.limit;
    uint64_t cap_ops = ops + 2;
    m.handle = malloc(slots * sizeof *m.handle);
    m.id = malloc(slots * sizeof *m.id);
    m.pend = malloc(slots * sizeof *m.pend);
    m.next_gen = calloc(slots, sizeof *m.next_gen);
    m.queue = malloc((size_t)cap_ops * sizeof *m.queue);
    CHECK(m.handle && m.id && m.pend && m.next_gen && m.queue);
    uint64_t state = harness_seed() ^ index_bits;
    uint64_t next_id = 1, efull = 0;
    size_t target = 100;
    for (uint64_t op = 0; op < ops; op++) {
        if (op % 50000 == 0) {
            target = 1 + (size_t)harness_below(&state, target_max);
        }
        uint64_t dice = harness_below(&state, 100);
        size_t count = m.live + m.npend;
        if (dice < 50 && (count < target || dice < 20)) {
            uint64_t slot = 0;
            ark_handle want = model_next(&m, &slot);
            ark_handle h = 0;
            size_t r = 0;
            ark_status s = ark_table_insert(t, &h, &r);
            if (want == 0) {
                CHECK_STATUS(s, ARK_EFULL);
                efull++;
                continue;
            }
            CHECK_OK(s);
            CHECK_EQ(h, want);
            CHECK_EQ(r, count);
            CHECK(row_is_zero(t, r));
            model_take(&m, slot);
            write_row(t, r, next_id);
            m.handle[m.live] = h;
            m.id[m.live++] = next_id++;
        } else if (dice < 80 && m.live > 0) {
            size_t k = (size_t)harness_below(&state, m.live);
            ark_handle h = m.handle[k];
            size_t r = ark_table_row(t, h);
            CHECK(r != ARK_NO_ROW);
            CHECK(row_holds(t, r, m.id[k]));
            CHECK_OK(ark_table_remove(t, h));
            CHECK_EQ(ark_table_row(t, h), ARK_NO_ROW);
            CHECK(row_is_zero(t, ark_table_rows(t)));
            model_free(&m, h);
            m.handle[k] = m.handle[--m.live];
            m.id[k] = m.id[m.live];
        } else if (dice < 92 && m.live > 0) {
            size_t k = (size_t)harness_below(&state, m.live);
            ark_handle h = m.handle[k];
            CHECK_OK(ark_table_remove_later(t, h));
            CHECK_EQ(ark_table_row(t, h), ARK_NO_ROW);
            m.pend[m.npend++] = h;
            m.handle[k] = m.handle[--m.live];
            m.id[k] = m.id[m.live];
        } else if (dice < 95) {
            CHECK_EQ(ark_table_flush(t), m.npend);
            for (size_t k = 0; k < m.npend; k++) {
                model_free(&m, m.pend[k]);
            }
            m.npend = 0;
        } else if (m.live > 0) {
            /* Stale and live lookups. */
            size_t k = (size_t)harness_below(&state, m.live);
            CHECK_OK(ark_table_check(t, m.handle[k]));
            CHECK_STATUS(ark_table_check(t, m.handle[k] ^ (1ull << index_bits)),
                         ARK_ESTALE);
        }
        if (op % 8192 == 0) {
            model_verify(t, &m);
            if (harness_failed()) {
                break;
            }
        }
    }
    model_verify(t, &m);
    /* Sanity: the run did real work (or really ran out of handles). */
    if (expect_full) {
        CHECK(efull > 0);
        CHECK_EQ(next_id - 1, (m.limit - 1) * (m.gen_max + 1));
    } else {
        CHECK(next_id > ops / 5);
        CHECK_EQ(efull, 0);
    }
    free(m.handle);
    free(m.id);
    free(m.pend);
    free(m.next_gen);
    free(m.queue);
    ark_table_destroy(t);
}

TEST(randomized_against_model_vm_path) {
    run_model(NULL, 16, 8, 1200000, 3000, false);
}

TEST(randomized_against_model_allocator_path) {
    test_allocator ta;
    test_allocator_init(&ta);
    run_model(&ta.base, 16, 8, 1000000, 3000, false);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

TEST(randomized_small_index_space_fills_and_retires) {
    /* 7 index bits, 3 generation bits: EFULL and retirement happen. */
    run_model(NULL, 7, 3, 300000, 200, true);
}

/* One scenario with the k-th allocation failing: inserts, every fifth
 * marking an earlier row, a flush every 500 inserts and a remove every
 * seventh; returns at the first failed insert. ids[i] = i + 1 for h[i]. */
typedef struct oom_state {
    size_t inserted;
    bool *gone;
} oom_state;

static ark_status oom_scenario(ark_table *t, ark_handle *h, size_t n,
                               oom_state *st) {
    for (size_t i = st->inserted; i < n; i++) {
        size_t r;
        ark_status s = ark_table_insert(t, &h[i], &r);
        if (s != ARK_OK) {
            return s;
        }
        write_row(t, r, i + 1);
        st->inserted++;
        if (i % 5 == 4 && !st->gone[i - 2]) {
            /* A mark that cannot grow the list changes nothing: the row
             * stays live, which oom_verify checks. */
            s = ark_table_remove_later(t, h[i - 2]);
            if (s != ARK_OK && s != ARK_ENOMEM) {
                return ARK_ECORRUPT;
            }
            st->gone[i - 2] = s == ARK_OK;
        }
        if (i % 7 == 6 && !st->gone[i - 3]) {
            if (ark_table_remove(t, h[i - 3]) != ARK_OK) {
                return ARK_ECORRUPT;
            }
            st->gone[i - 3] = true;
        }
        if (i % 500 == 499) {
            ark_table_flush(t);
        }
    }
    return ARK_OK;
}

/* Snapshot of what a failed call must not change. */
static void oom_verify(const ark_table *t, const ark_handle *h,
                       const oom_state *st, size_t count, void *col0) {
    CHECK_EQ(ark_table_rows(t), count);
    CHECK(ark_table_column(t, 0) == col0);
    for (size_t i = 0; i < st->inserted; i++) {
        size_t r = ark_table_row(t, h[i]);
        CHECK_EQ(r == ARK_NO_ROW, st->gone[i]);
        if (!st->gone[i]) {
            CHECK(row_holds(t, r, i + 1));
        }
    }
    CHECK_OK(ark__table_validate(t, true));
}

TEST(allocation_failure_leaves_table_unchanged) {
    enum { N = 3000 };
    ark_handle *h = malloc(N * sizeof *h);
    bool *gone = malloc(N * sizeof *gone);
    CHECK(h != NULL && gone != NULL);
    uint64_t failures_seen = 0;
    for (uint64_t k = 1;; k++) {
        test_allocator ta;
        test_allocator_init(&ta);
        ark_table_config cfg = base_config();
        cfg.allocator = &ta.base;
        test_allocator_fail_at(&ta, k);
        ark_table *t = NULL;
        ark_status s = ark_table_create(&t, &cfg);
        if (s != ARK_OK) {
            CHECK_STATUS(s, ARK_ENOMEM);
            CHECK(t == NULL);
            CHECK_EQ(ta.live_blocks, 0);
            continue;
        }
        memset(gone, 0, N * sizeof *gone);
        oom_state st = {0, gone};
        /* Run up to the failure, remembering the state before each call. */
        size_t count = 0;
        void *col0 = NULL;
        for (;;) {
            count = ark_table_rows(t);
            col0 = ark_table_column(t, 0);
            size_t before = st.inserted;
            s = oom_scenario(t, h, before + 1 > N ? N : before + 1, &st);
            if (s != ARK_OK || st.inserted >= N) {
                break;
            }
        }
        if (ta.failures == 0) {
            CHECK_OK(s);
            ark_table_destroy(t);
            CHECK_EQ(ta.live_blocks, 0);
            CHECK(k > 5); /* the sweep really covered allocations */
            break;
        }
        failures_seen++;
        if (s == ARK_OK) {
            /* The failure hit a remove_later, which left its row live. */
            oom_verify(t, h, &st, ark_table_rows(t), ark_table_column(t, 0));
            ark_table_destroy(t);
            CHECK_EQ(ta.live_blocks, 0);
            continue;
        }
        CHECK_STATUS(s, ARK_ENOMEM);
        oom_verify(t, h, &st, count, col0);
        if (harness_failed()) {
            break;
        }
        /* Still usable: the rest of the scenario succeeds. */
        CHECK_OK(oom_scenario(t, h, N, &st));
        oom_verify(t, h, &st, ark_table_rows(t), ark_table_column(t, 0));
        ark_table_flush(t);
        CHECK_OK(ark__table_validate(t, true));
        ark_table_destroy(t);
        CHECK_EQ(ta.live_blocks, 0);
        CHECK_EQ(ta.bad_frees, 0);
    }
    CHECK(failures_seen > 5);
    free(h);
    free(gone);
}
