/* SPDX-License-Identifier: MIT */
/*
 * test_reserve.c - a size the caller passes never takes the process down.
 *
 * Every call that sizes memory (the reserve of each container, the config
 * sizes max_elements and max_rows) is asked for far more than the machine
 * has: counts of UINT32_MAX and SIZE_MAX, and 2^40 bytes' worth of
 * elements. Each call either fails cleanly (a status, the container
 * unchanged and usable) or succeeds having made almost nothing resident;
 * either way the container then takes elements and gives them back. The
 * resident set is read from /proc/self/statm and may grow by at most
 * RSS_SLACK per check; that assertion runs in the plain Linux build only
 * (ARK_TEST_RSS): AddressSanitizer and valgrind keep memory of their own.
 * Under valgrind (ARK_TEST_SCALE below 1) the requests a large machine can
 * grant (large_counts) are left out: memcheck shadows a commit in
 * proportion to its size, which takes it minutes and gigabytes.
 *
 * Also: storage a reserve takes from a caller's allocator is as dirty as
 * the allocator gives it, and a forged handle must still find no element
 * there; destroy(NULL) is a no-op for every container; a writer or reader
 * without its function is ARK_EINVAL.
 */
#include "harness.h"
#include "table_internal.h"

#include "ark/ark.h"

#include <stdlib.h>
#include <string.h>

/* How much the resident set may grow in one check. */
#define RSS_SLACK ((uint64_t)64 << 20)

/* The resident set in bytes (0 where /proc/self/statm cannot be read). */
static uint64_t rss_bytes(void) {
#if defined(__linux__)
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (f == NULL) {
        return 0;
    }
    if (fscanf(f, "%llu %llu", &size, &resident) != 2) {
        resident = 0;
    }
    fclose(f);
    return (uint64_t)resident * 4096u; /* statm counts 4 KiB pages */
#else
    return 0;
#endif
}

#if defined(ARK_TEST_RSS) && defined(__linux__)
#define CHECK_RSS(before)                                                      \
    do {                                                                       \
        uint64_t rss_now_ = rss_bytes();                                       \
        if (rss_now_ > (before) + RSS_SLACK) {                                 \
            harness_fail(__FILE__, __LINE__,                                   \
                         "resident set grew by %" PRIu64 " KiB",               \
                         (rss_now_ - (before)) >> 10);                         \
            return;                                                            \
        }                                                                      \
    } while (0)
#else
#define CHECK_RSS(before) ((void)(before))
#endif

/* A reserve answers with success or a clean failure. */
#define CHECK_RESERVED(st)                                                     \
    CHECK((st) == ARK_OK || (st) == ARK_ENOMEM || (st) == ARK_EFULL)

/* The requests every container gets: counts past any machine, and (in
 * each test) the element counts of 2^40 bytes; and counts that a large
 * machine may grant, for the full-scale builds. */
static const size_t huge_counts[] = {(size_t)UINT32_MAX - 1, UINT32_MAX,
                                     SIZE_MAX / 2 + 1, SIZE_MAX};
static const size_t large_counts[] = {(size_t)1 << 28, (size_t)1 << 30};

/* Whether the requests a large machine may grant are run (not under
 * valgrind: see the top of the file). */
static bool full_scale(void) { return harness_scaled(100) == 100; }

static size_t counts_of_bytes(uint64_t bytes, size_t elem) {
    uint64_t n = bytes / elem;
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* ---- pool -------------------------------------------------------------- */

/* Insert n elements of p (elem bytes, first 8 = value) with values from
 * base, handles into h. */
static int pool_fill(ark_pool *p, size_t elem, ark_handle *h, size_t n,
                     uint64_t base) {
    unsigned char buf[4096];
    REQ(elem >= 8 && elem <= sizeof buf);
    memset(buf, 0x5A, elem);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = base + i;
        memcpy(buf, &v, sizeof v);
        REQ(ark_pool_insert(p, buf, &h[i]) == ARK_OK);
    }
    return 1;
}

static int pool_holds(const ark_pool *p, const ark_handle *h, size_t n,
                      uint64_t base) {
    for (size_t i = 0; i < n; i++) {
        const unsigned char *e = ark_pool_get(p, h[i]);
        REQ(e != NULL);
        uint64_t v;
        memcpy(&v, e, sizeof v);
        REQ(v == base + i);
    }
    return 1;
}

/* reserve(n) on a pool holding elements, then more inserts. */
static void pool_case(const ark_pool_config *cfg, size_t n) {
    enum { BEFORE = 100, AFTER = 1000 };
    static ark_handle h[BEFORE + AFTER];
    ark_pool *p;
    CHECK_OK(ark_pool_create(&p, cfg));
    CHECK(pool_fill(p, cfg->elem_size, h, BEFORE, 0));
    uint64_t rss = rss_bytes();
    ark_status st = ark_pool_reserve(p, n);
    CHECK_RESERVED(st);
    CHECK_RSS(rss);
    CHECK_EQ(ark_pool_count(p), BEFORE);
    CHECK_OK(ark_pool_validate(p));
    CHECK(pool_holds(p, h, BEFORE, 0));
    CHECK(pool_fill(p, cfg->elem_size, h + BEFORE, AFTER, BEFORE));
    CHECK(pool_holds(p, h, BEFORE + AFTER, 0));
    CHECK_RSS(rss);
    for (size_t i = 0; i < BEFORE + AFTER; i += 2) {
        CHECK_OK(ark_pool_remove(p, h[i]));
    }
    CHECK_EQ(ark_pool_count(p), (BEFORE + AFTER) / 2);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
}

TEST(pool_reserve_beyond_memory) {
    static const size_t elems[] = {8, 12, 256, 4096};
    for (size_t e = 0; e < sizeof elems / sizeof *elems; e++) {
        ark_pool_config cfg = {.elem_size = elems[e]};
        for (size_t k = 0; k < sizeof huge_counts / sizeof *huge_counts; k++) {
            pool_case(&cfg, huge_counts[k]);
            if (harness_failed()) {
                return;
            }
        }
        for (size_t k = 0; full_scale() && k < 2; k++) {
            pool_case(&cfg, large_counts[k]);
            if (harness_failed()) {
                return;
            }
        }
        pool_case(&cfg, counts_of_bytes((uint64_t)1 << 40, elems[e]));
        if (harness_failed()) {
            return;
        }
    }
}

/* A small reservation (max_elements) puts the slots a reserve covers in
 * chunks past it; 16-bit indexes make UINT32_MAX an EFULL. */
TEST(pool_reserve_past_a_small_reservation) {
    ark_pool_config small = {.elem_size = 24, .max_elements = 1000};
    static const size_t counts[] = {5000, (size_t)1 << 20, UINT32_MAX,
                                    (size_t)1 << 29};
    size_t n = full_scale() ? 4 : 3; /* 1 << 29: 16 GiB */
    for (size_t k = 0; k < n; k++) {
        pool_case(&small, counts[k]);
        if (harness_failed()) {
            return;
        }
    }
    ark_pool_config narrow = {.elem_size = 24, .index_bits = 16};
    pool_case(&narrow, UINT32_MAX);
    pool_case(&narrow, 60000);
}

/* A reserve that succeeds covers the inserts: the pool stays usable up to
 * the count reserved, and handle_of finds elements in every part of the
 * storage (the reserved range, chunks). */
TEST(pool_reserve_then_fill_past_the_reserved_range) {
    ark_pool_config cfg = {.elem_size = 16, .max_elements = 3000};
    ark_pool *p;
    CHECK_OK(ark_pool_create(&p, &cfg));
    ark_handle *h = malloc(200000 * sizeof *h);
    CHECK(h != NULL);
    CHECK_OK(ark_pool_reserve(p, 200000));
    CHECK(pool_fill(p, 16, h, 200000, 7));
    CHECK(pool_holds(p, h, 200000, 7));
    for (size_t i = 0; i < 200000; i += 997) {
        CHECK_EQ(ark_pool_handle_of(p, ark_pool_get(p, h[i])), h[i]);
    }
    CHECK_OK(ark_pool_validate(p));
    size_t n = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        n++;
    }
    CHECK_EQ(n, 200000);
    free(h);
    ark_pool_destroy(p);
}

TEST(pool_config_sizes_beyond_memory) {
    static const size_t sizes[] = {UINT32_MAX, SIZE_MAX / 2, SIZE_MAX,
                                   (size_t)1 << 40};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint64_t rss = rss_bytes();
        ark_pool_config cfg = {.elem_size = 4096, .max_elements = sizes[k]};
        ark_pool *p;
        CHECK_OK(ark_pool_create(&p, &cfg));
        CHECK_RSS(rss);
        ark_handle h[500];
        CHECK(pool_fill(p, 4096, h, 500, 1));
        CHECK(pool_holds(p, h, 500, 1));
        CHECK_OK(ark_pool_validate(p));
        ark_pool_destroy(p);
    }
}

/* ---- table ------------------------------------------------------------- */

static void table_case(const ark_table_config *cfg, size_t n) {
    enum { BEFORE = 100, AFTER = 1000 };
    static ark_handle h[BEFORE + AFTER];
    ark_table *t;
    CHECK_OK(ark_table_create(&t, cfg));
    for (size_t i = 0; i < BEFORE; i++) {
        size_t r;
        CHECK_OK(ark_table_insert(t, &h[i], &r));
        ((uint64_t *)ark_table_column(t, 0))[r] = i;
    }
    uint64_t rss = rss_bytes();
    ark_status st = ark_table_reserve(t, n);
    CHECK_RESERVED(st);
    CHECK_RSS(rss);
    CHECK_EQ(ark_table_count(t), BEFORE);
    CHECK_OK(ark_table_validate(t));
    for (size_t i = BEFORE; i < BEFORE + AFTER; i++) {
        size_t r;
        CHECK_OK(ark_table_insert(t, &h[i], &r));
        ((uint64_t *)ark_table_column(t, 0))[r] = i;
    }
    for (size_t i = 0; i < BEFORE + AFTER; i++) {
        size_t r = ark_table_row(t, h[i]);
        CHECK(r != ARK_NO_ROW);
        CHECK_EQ(((const uint64_t *)ark_table_column(t, 0))[r], i);
    }
    CHECK_RSS(rss);
    for (size_t i = 0; i < BEFORE + AFTER; i += 2) {
        CHECK_OK(ark_table_remove(t, h[i]));
    }
    CHECK_OK(ark_table_validate(t));
    ark_table_destroy(t);
}

TEST(table_reserve_beyond_memory) {
    static const size_t narrow[] = {8, 4};
    static const size_t wide[] = {8, 4096, 4096, 64};
    const ark_table_config cfgs[] = {
        {.column_sizes = narrow, .ncolumns = 2},
        {.column_sizes = wide, .ncolumns = 4},
        {.column_sizes = narrow, .ncolumns = 2, .max_rows = 200},
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
        for (size_t k = 0; k < sizeof huge_counts / sizeof *huge_counts; k++) {
            table_case(&cfgs[c], huge_counts[k]);
            if (harness_failed()) {
                return;
            }
        }
        for (size_t k = 0; full_scale() && k < 2; k++) {
            table_case(&cfgs[c], large_counts[k]);
            if (harness_failed()) {
                return;
            }
        }
    }
    table_case(&cfgs[1], counts_of_bytes((uint64_t)1 << 40, 8 + 8192 + 64));
}

TEST(table_config_sizes_beyond_memory) {
    static const size_t cols[] = {8, 256};
    static const size_t sizes[] = {UINT32_MAX, SIZE_MAX / 2, SIZE_MAX,
                                   (size_t)1 << 40};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint64_t rss = rss_bytes();
        ark_table_config cfg = {
            .column_sizes = cols, .ncolumns = 2, .max_rows = sizes[k]};
        ark_table *t;
        CHECK_OK(ark_table_create(&t, &cfg));
        CHECK_RSS(rss);
        for (uint64_t i = 0; i < 2000; i++) {
            size_t r;
            CHECK_OK(ark_table_insert(t, NULL, &r));
            ((uint64_t *)ark_table_column(t, 0))[r] = i;
        }
        for (size_t r = 0; r < 2000; r++) {
            CHECK_EQ(((const uint64_t *)ark_table_column(t, 0))[r], r);
        }
        CHECK_OK(ark_table_validate(t));
        ark_table_destroy(t);
    }
}

/* ---- idmap and refs ---------------------------------------------------- */

TEST(idmap_reserve_beyond_memory) {
    static const size_t counts[] = {
        (size_t)1 << 30,         UINT32_MAX, ARK_IDMAP_MAX_COUNT,
        ARK_IDMAP_MAX_COUNT + 1, SIZE_MAX,   (size_t)1 << 27};
    size_t n = full_scale() ? 6 : 5; /* 1 << 27: 4 GiB */
    for (size_t k = 0; k < n; k++) {
        ark_idmap *m;
        CHECK_OK(ark_idmap_create(&m, NULL));
        CHECK_OK(ark_idmap_put(m, 42, 4242));
        uint64_t rss = rss_bytes();
        ark_status st = ark_idmap_reserve(m, counts[k]);
        CHECK_RESERVED(st);
        CHECK_RSS(rss);
        CHECK_EQ(ark_idmap_count(m), 1);
        /* Random keys land all over a reserved table: they must cost
         * their pages, not the table's (huge pages wait, see idmap.c). */
        uint64_t key = harness_seed();
        for (uint64_t i = 0; i < 2000; i++) {
            CHECK_OK(ark_idmap_put(m, harness_rand(&key), i));
        }
        CHECK_RSS(rss);
        key = harness_seed();
        for (uint64_t i = 0; i < 2000; i++) {
            uint64_t v;
            CHECK(ark_idmap_get(m, harness_rand(&key), &v) && v == i);
        }
        uint64_t v;
        CHECK(ark_idmap_get(m, 42, &v) && v == 4242);
        CHECK_OK(ark_idmap_validate(m));
        ark_idmap_destroy(m);
    }
}

static void ref_keep(ark_ref *r) { (void)r; }

TEST(refvec_and_refmap_reserve_beyond_memory) {
    static const size_t counts[] = {ARK_REFVEC_MAX,  UINT32_MAX,
                                    SIZE_MAX / 8,    SIZE_MAX,
                                    (size_t)1 << 28, (size_t)1 << 31};
    /* 1 << 28 and 1 << 31: 2 and 16 GiB of pointers, 8 GiB of map */
    size_t n = full_scale() ? 6 : 4;
    ark_ref obj;
    ark_ref_init(&obj, ref_keep);
    for (size_t k = 0; k < n; k++) {
        ark_refvec *v;
        CHECK_OK(ark_refvec_create(&v, NULL));
        CHECK_OK(ark_refvec_push(v, &obj));
        uint64_t rss = rss_bytes();
        ark_status st = ark_refvec_reserve(v, counts[k]);
        CHECK_RESERVED(st);
        CHECK_RSS(rss);
        CHECK_EQ(ark_refvec_count(v), 1);
        for (int i = 0; i < 1000; i++) {
            CHECK_OK(ark_refvec_push(v, &obj));
        }
        CHECK(ark_refvec_at(v, 1000) == &obj);
        ark_refvec_destroy(v);

        ark_refmap *m;
        CHECK_OK(ark_refmap_create(&m, NULL));
        CHECK_OK(ark_refmap_put(m, 7, &obj));
        rss = rss_bytes();
        st = ark_refmap_reserve(m, counts[k]);
        CHECK_RESERVED(st);
        CHECK_RSS(rss);
        for (uint64_t i = 0; i < 1000; i++) {
            CHECK_OK(ark_refmap_put(m, i * 0x9e3779b97f4a7c15u, &obj));
        }
        CHECK(ark_refmap_get(m, 7) == &obj);
        CHECK_RSS(rss);
        ark_refmap_destroy(m);
        CHECK_EQ(ark_ref_count(&obj), 1);
    }
}

/* Sizes that size no memory: a run limit, a copy length, positions. */
static void task(void *arg) { (*(int *)arg)++; }

TEST(sizes_that_allocate_nothing) {
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    int ran = 0;
    for (int i = 0; i < 10; i++) {
        CHECK_OK(ark_mainq_post(q, task, &ran));
    }
    CHECK_EQ(ark_mainq_run(q, SIZE_MAX), 10);
    CHECK_EQ(ran, 10);
    ark_mainq_destroy(q);
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    for (uint32_t id = 0; id < 1000; id++) {
        CHECK_OK(ark_idset_insert(s, id * 3));
    }
    uint32_t out[1000];
    CHECK_EQ(ark_idset_copy(s, 0, out, SIZE_MAX), 1000);
    CHECK_EQ(out[999], 2997);
    CHECK_EQ(ark_idset_copy(s, SIZE_MAX, out, SIZE_MAX), 0);
    CHECK_EQ(ark_idset_at(s, SIZE_MAX), 0);
    CHECK_STATUS(ark_idset_remove_at(s, SIZE_MAX), ARK_ERANGE);
    ark_idset_iter it = ark_idset_iter_begin(s, SIZE_MAX);
    CHECK(!ark_idset_iter_valid(&it));
    CHECK_OK(ark_idset_validate(s));
    ark_idset_destroy(s);
}

/* ---- storage from a caller's allocator --------------------------------- */

/* An allocator that gives blocks full of 0x01 bytes (as a recycled block
 * may be: a stamp of 0x01010101 matches a handle of generation
 * 0x01010100), up to a budget of live bytes. */
typedef struct dirty_allocator {
    test_allocator t;
    uint64_t budget;
} dirty_allocator;

static void *dirty_alloc(void *ctx, size_t size, size_t align) {
    dirty_allocator *d = ctx;
    if (size > d->budget || d->t.live_bytes > d->budget - size) {
        return NULL;
    }
    void *p = d->t.base.alloc(&d->t, size, align);
    if (p != NULL) {
        memset(p, 0x01, size);
    }
    return p;
}

static void dirty_free(void *ctx, void *ptr, size_t size) {
    dirty_allocator *d = ctx;
    d->t.base.free(&d->t, ptr, size);
}

static void dirty_init(dirty_allocator *d, ark_allocator *a, uint64_t budget) {
    test_allocator_init(&d->t);
    d->budget = budget;
    a->alloc = dirty_alloc;
    a->free = dirty_free;
    a->ctx = d;
}

/* The handle a dirty stamp would match at index i (32 index bits, 32
 * generation bits, no tag). */
static ark_handle forged(uint64_t i) { return i | (uint64_t)0x01010100 << 32; }

TEST(pool_reserve_from_a_dirty_allocator) {
    dirty_allocator d;
    ark_allocator a;
    dirty_init(&d, &a, (uint64_t)64 << 20);
    ark_pool_config cfg = {.elem_size = 8, .allocator = &a};
    ark_pool *p;
    CHECK_OK(ark_pool_create(&p, &cfg));
    ark_handle h[1000];
    CHECK(pool_fill(p, 8, h, 10, 0));
    uint64_t live = d.t.live_bytes;
    /* Past the budget: ARK_ENOMEM, and the pages it took go back. */
    CHECK_STATUS(ark_pool_reserve(p, UINT32_MAX - 1), ARK_ENOMEM);
    CHECK_STATUS(ark_pool_reserve(p, (size_t)1 << 24), ARK_ENOMEM);
    CHECK(d.t.live_bytes <= live + ((uint64_t)64 << 20));
    CHECK_OK(ark_pool_validate(p));
    CHECK_OK(ark_pool_reserve(p, 100000));
    uint64_t allocs = d.t.allocs;
    for (uint64_t i = 0; i < 100000 + 64; i++) {
        CHECK(ark_pool_get(p, forged(i)) == NULL);
        CHECK(ark_pool_check(p, forged(i)) != ARK_OK);
    }
    CHECK(pool_fill(p, 8, h + 10, 990, 10));
    CHECK(pool_holds(p, h, 1000, 0));
    for (uint64_t i = 0; i < 100000 + 64; i++) {
        CHECK(ark_pool_get(p, forged(i)) == NULL);
    }
    for (size_t i = 0; i < 100000 - 1000; i++) {
        CHECK(ark_pool_alloc(p, NULL) != NULL);
    }
    CHECK_EQ(d.t.allocs, allocs); /* the reserve covered every insert */
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
    CHECK_EQ(d.t.live_blocks, 0);
    CHECK_EQ(d.t.bad_frees, 0);
}

TEST(table_reserve_from_a_dirty_allocator) {
    dirty_allocator d;
    ark_allocator a;
    dirty_init(&d, &a, (uint64_t)64 << 20);
    static const size_t cols[] = {4, 8, 3};
    ark_table_config cfg = {
        .column_sizes = cols, .ncolumns = 3, .allocator = &a};
    ark_table *t;
    CHECK_OK(ark_table_create(&t, &cfg));
    CHECK_OK(ark_table_insert(t, NULL, NULL));
    CHECK_STATUS(ark_table_reserve(t, UINT32_MAX - 1), ARK_ENOMEM);
    CHECK_STATUS(ark_table_reserve(t, (size_t)1 << 24), ARK_ENOMEM);
    CHECK_OK(ark__table_validate(t, true));
    CHECK_OK(ark_table_reserve(t, 100000));
    uint64_t allocs = d.t.allocs;
    for (uint64_t i = 0; i < 100000 + 64; i++) {
        CHECK_EQ(ark_table_row(t, forged(i)), ARK_NO_ROW);
    }
    for (size_t i = 1; i < 100000; i++) {
        size_t r;
        CHECK_OK(ark_table_insert(t, NULL, &r));
        CHECK_EQ(((const uint32_t *)ark_table_column(t, 0))[r], 0);
        CHECK_EQ(((const uint64_t *)ark_table_column(t, 1))[r], 0);
        if (i % 4096 == 0) {
            CHECK_OK(ark__table_validate(t, true));
        }
    }
    CHECK_EQ(d.t.allocs, allocs);
    for (uint64_t i = 0; i < 100000 + 64; i++) {
        CHECK_EQ(ark_table_row(t, forged(i)), ARK_NO_ROW);
    }
    CHECK_OK(ark__table_validate(t, true));
    ark_table_destroy(t);
    CHECK_EQ(d.t.live_blocks, 0);
}

TEST(idmap_reserve_from_a_dirty_allocator) {
    dirty_allocator d;
    ark_allocator a;
    dirty_init(&d, &a, (uint64_t)64 << 20);
    ark_idmap *m;
    CHECK_OK(ark_idmap_create(&m, &a));
    CHECK_STATUS(ark_idmap_reserve(m, UINT32_MAX), ARK_ENOMEM);
    CHECK_OK(ark_idmap_reserve(m, 100000));
    uint64_t v;
    CHECK(!ark_idmap_get(m, 0x0101010101010101u, &v));
    for (uint64_t k = 0; k < 1000; k++) {
        CHECK(!ark_idmap_get(m, k, &v));
        CHECK_OK(ark_idmap_insert(m, k, k + 1));
    }
    CHECK_EQ(ark_idmap_count(m), 1000);
    CHECK_OK(ark_idmap_validate(m));
    ark_idmap_destroy(m);
    CHECK_EQ(d.t.live_blocks, 0);
}

/* ---- NULL --------------------------------------------------------------- */

TEST(destroy_null_does_nothing) {
    ark_pool_destroy(NULL);
    ark_table_destroy(NULL);
    ark_idset_destroy(NULL);
    ark_idmap_destroy(NULL);
    ark_refvec_destroy(NULL);
    ark_refmap_destroy(NULL);
    ark_autorelease_pool_destroy(NULL);
    ark_mainq_destroy(NULL);
    ark_membuf_free(NULL);
}

TEST(null_writer_and_reader_functions_are_einval) {
    ark_writer w = {NULL, NULL};
    ark_reader r = {NULL, NULL};
    ark_pool_config pc = {.elem_size = 8};
    ark_pool *p, *p2 = NULL;
    CHECK_OK(ark_pool_create(&p, &pc));
    CHECK(ark_pool_alloc(p, NULL) != NULL);
    CHECK_STATUS(ark_pool_save(p, &w), ARK_EINVAL);
    CHECK_STATUS(ark_pool_load(&p2, &pc, &r), ARK_EINVAL);
    CHECK(p2 == NULL);
    ark_pool_destroy(p);

    static const size_t cols[] = {4};
    ark_table_config tc = {.column_sizes = cols, .ncolumns = 1};
    ark_table *t, *t2 = NULL;
    CHECK_OK(ark_table_create(&t, &tc));
    CHECK_OK(ark_table_insert(t, NULL, NULL));
    CHECK_STATUS(ark_table_save(t, &w), ARK_EINVAL);
    CHECK_STATUS(ark_table_load(&t2, &tc, &r), ARK_EINVAL);
    CHECK(t2 == NULL);
    ark_table_destroy(t);

    ark_idset *s, *s2 = NULL;
    CHECK_OK(ark_idset_create(&s, NULL));
    CHECK_OK(ark_idset_insert(s, 5));
    CHECK_STATUS(ark_idset_save(s, &w), ARK_EINVAL);
    CHECK_STATUS(ark_idset_load(&s2, NULL, &r), ARK_EINVAL);
    CHECK(s2 == NULL);
    ark_idset_destroy(s);

    ark_idmap *m, *m2 = NULL;
    CHECK_OK(ark_idmap_create(&m, NULL));
    CHECK_OK(ark_idmap_put(m, 1, 2));
    CHECK_STATUS(ark_idmap_save(m, &w), ARK_EINVAL);
    CHECK_STATUS(ark_idmap_load(&m2, NULL, &r), ARK_EINVAL);
    CHECK(m2 == NULL);
    ark_idmap_destroy(m);
}
