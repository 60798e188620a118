/* SPDX-License-Identifier: MIT */
/*
 * bench_snapshot.c - ark_pool_save / ark_pool_load against memcpy of the
 * same element bytes, side by side in one process.
 *
 * Workloads (section "snapshot"), N elements of 16 bytes (elem_align 8),
 * all live, ms per whole operation. The destination of every save and of
 * the save and save_discard memcpys is one buffer, allocated and written
 * over (pre-faulted) before the first run and reused: page faults are not
 * in those numbers, on either side. save_fresh and load write into memory
 * allocated for that run, page faults included, on both sides.
 *   save   ark: ark_pool_save into the pre-faulted buffer, through a
 *          writer that memcpys each piece it is given (16 KiB or less);
 *          memcpy: N * 16 bytes in one call, pre-faulted to pre-faulted;
 *          memcpy_16k: the same bytes in 16 KiB calls, which is what any
 *          writer into memory is handed by a streaming save (one big
 *          memcpy streams past the cache, 16 KiB ones cannot);
 *          gather_16k: the least a save from ark's slots can do: the
 *          elements of an array laid out as the pool lays out this
 *          config (24-byte slots: stamp, padding, element) copied into a
 *          16 KiB piece, read 2 KiB ahead, each piece memcpy'd into the
 *          buffer; no stamp check, no encoding, no checksum
 *   save_discard  ark: ark_pool_save into a writer that drops the bytes
 *          (the library's own cost: reading the slots, encoding,
 *          checksum); memcpy, memcpy_16k: as for save; gather_16k: the
 *          pieces dropped
 *   save_fresh  ark: ark_pool_save into a buffer malloc'd for the run;
 *          memcpy, memcpy_16k: into a buffer malloc'd for the run
 *   load   ark: ark_pool_load from the saved buffer (a new pool each run,
 *          its storage faulted in on the way); memcpy, memcpy_16k: N * 16
 *          bytes into a buffer malloc'd for the run; gather_16k: the
 *          elements in 16 KiB pieces into the slots of an array malloc'd
 *          for the run, each stamped
 * The '#' lines give the ratios of the medians. Checksums: the number of
 * elements and a sum over them, equal for every implementation.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "ark/ark.h"
#include "bench_common.h"

static const char *const impls[] = {"ark_pool", "memcpy", "memcpy_16k",
                                    "gather_16k"};
enum { NIMPLS = 4 };

/* The pieces memcpy_16k copies in: the size of the save's buffer. */
enum { PIECE = 16384 };

typedef struct elem16 {
    uint64_t a, b;
} elem16;

/* What ark_pool keeps per element of this config (docs/pool.md, "Layout
 * and cost"): the 4-byte stamp, padding to the element's alignment, the
 * element. */
typedef struct slot24 {
    uint32_t stamp, pad;
    elem16 e;
} slot24;

typedef struct buf {
    unsigned char *data;
    size_t len, cap, pos;
} buf;

static ark_status buf_write(void *ctx, const void *p, size_t n) {
    buf *b = ctx;
    if (n > b->cap - b->len) {
        return ARK_ENOMEM;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return ARK_OK;
}

static ark_status count_write(void *ctx, const void *p, size_t n) {
    (void)p;
    *(size_t *)ctx += n;
    return ARK_OK;
}

static ark_status buf_read(void *ctx, void *p, size_t n) {
    buf *b = ctx;
    if (n > b->len - b->pos) {
        return ARK_ECORRUPT;
    }
    memcpy(p, b->data + b->pos, n);
    b->pos += n;
    return ARK_OK;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static const ark_pool_config cfg = {.elem_size = 16, .elem_align = 8};

static uint64_t pool_sum(const ark_pool *p) {
    uint64_t s = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        s += ((const elem16 *)it.elem)->a;
    }
    return s;
}

/* Copy n bytes in one memcpy, or in PIECE-byte ones. */
static void copy(void *dst, const void *src, size_t n, bool pieces) {
    if (!pieces) {
        memcpy(dst, src, n);
        return;
    }
    for (size_t k = 0; k < n; k += PIECE) {
        memcpy((char *)dst + k, (const char *)src + k,
               n - k < PIECE ? n - k : PIECE);
    }
}

/* gather_16k's save: the elements of slots [0, n) through a PIECE-byte
 * buffer into dst (NULL: each piece dropped). */
static void gather(elem16 *dst, const slot24 *s, size_t n) {
    enum { PER = PIECE / sizeof(elem16) };
    elem16 piece[PER];
    for (size_t i = 0; i < n; i += PER) {
        size_t m = n - i < PER ? n - i : PER;
        for (size_t k = 0; k < m; k++) {
#if defined(__GNUC__) || defined(__clang__)
            __builtin_prefetch((const char *)&s[i + k] + 2048);
#endif
            piece[k] = s[i + k].e;
        }
        if (dst != NULL) {
            memcpy(dst + i, piece, m * sizeof *piece);
        } else {
            bench_keep(piece[m - 1].a);
        }
    }
}

/* gather_16k's load: n elements from src through a PIECE-byte buffer into
 * stamped slots. */
static void scatter(slot24 *s, const elem16 *src, size_t n) {
    enum { PER = PIECE / sizeof(elem16) };
    elem16 piece[PER];
    for (size_t i = 0; i < n; i += PER) {
        size_t m = n - i < PER ? n - i : PER;
        memcpy(piece, src + i, m * sizeof *piece);
        for (size_t k = 0; k < m; k++) {
            s[i + k].stamp = 1;
            s[i + k].pad = 0;
            s[i + k].e = piece[k];
        }
    }
}

static uint64_t elems_sum(const elem16 *e, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        s += e[i].a;
    }
    return n + s;
}

/* Workloads, in the order of the v rows. */
enum { W_SAVE, W_DISCARD, W_FRESH, W_LOAD, NW };
static const char *const workloads[NW] = {"save", "save_discard", "save_fresh",
                                          "load"};

static double ms_since(uint64_t t0) {
    return (double)(bench_now_ns() - t0) / 1e6;
}

/* The ark rows of one run. */
static void run_ark(ark_pool *p, buf *b, size_t bytes, double *v[NW], int run,
                    uint64_t *check) {
    b->len = 0;
    ark_writer w = {buf_write, b};
    uint64_t t0 = bench_now_ns();
    if (ark_pool_save(p, &w) != ARK_OK) {
        exit(1);
    }
    v[W_SAVE][run] = ms_since(t0);
    size_t dropped = 0;
    ark_writer dw = {count_write, &dropped};
    t0 = bench_now_ns();
    ark_pool_save(p, &dw);
    v[W_DISCARD][run] = ms_since(t0);
    buf fresh = {xmalloc(bytes), 0, bytes, 0};
    ark_writer fw = {buf_write, &fresh};
    t0 = bench_now_ns();
    if (ark_pool_save(p, &fw) != ARK_OK) {
        exit(1);
    }
    v[W_FRESH][run] = ms_since(t0);
    free(fresh.data);
    b->pos = 0;
    ark_reader r = {buf_read, b};
    ark_pool *q = NULL;
    t0 = bench_now_ns();
    if (ark_pool_load(&q, &cfg, &r) != ARK_OK) {
        exit(1);
    }
    v[W_LOAD][run] = ms_since(t0);
    *check = ark_pool_count(q) + pool_sum(q);
    ark_pool_destroy(q);
}

/* The rows of memcpy (pieces false) or memcpy_16k of one run. */
static void run_memcpy(const elem16 *src, elem16 *dst, size_t n, bool pieces,
                       double *v[NW], int run, uint64_t *check) {
    size_t bytes = n * sizeof *src;
    uint64_t t0 = bench_now_ns();
    copy(dst, src, bytes, pieces);
    v[W_SAVE][run] = v[W_DISCARD][run] = ms_since(t0);
    bench_keep(dst[n - 1].a);
    for (int w = W_FRESH; w <= W_LOAD; w++) {
        elem16 *fresh = xmalloc(bytes);
        t0 = bench_now_ns();
        copy(fresh, src, bytes, pieces);
        v[w][run] = ms_since(t0);
        *check = elems_sum(fresh, n);
        free(fresh);
    }
}

/* The rows of gather_16k of one run. */
static void run_gather(const slot24 *slots, elem16 *dst, size_t n,
                       double *v[NW], int run, uint64_t *check) {
    uint64_t t0 = bench_now_ns();
    gather(dst, slots, n);
    v[W_SAVE][run] = ms_since(t0);
    bench_keep(dst[n - 1].a);
    t0 = bench_now_ns();
    gather(NULL, slots, n);
    v[W_DISCARD][run] = ms_since(t0);
    elem16 *fresh = xmalloc(n * sizeof *fresh);
    t0 = bench_now_ns();
    gather(fresh, slots, n);
    v[W_FRESH][run] = ms_since(t0);
    slot24 *loaded = xmalloc(n * sizeof *loaded);
    t0 = bench_now_ns();
    scatter(loaded, fresh, n);
    v[W_LOAD][run] = ms_since(t0);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += loaded[i].e.a;
    }
    *check = n + sum;
    free(loaded);
    free(fresh);
}

static void run(const bench_args *a, size_t n) {
    ark_pool *p = NULL;
    if (ark_pool_create(&p, &cfg) != ARK_OK ||
        ark_pool_reserve(p, n) != ARK_OK) {
        exit(1);
    }
    elem16 *src = xmalloc(n * sizeof *src);
    slot24 *slots = xmalloc(n * sizeof *slots);
    uint64_t state = BENCH_SEED;
    for (size_t i = 0; i < n; i++) {
        src[i].a = bench_rand(&state);
        src[i].b = i;
        ark_pool_insert(p, &src[i], NULL);
        slots[i] = (slot24){1, 0, src[i]};
    }
    size_t bytes = 0;
    ark_writer cw = {count_write, &bytes};
    ark_pool_save(p, &cw);
    buf b = {xmalloc(bytes), 0, bytes, 0};
    memset(b.data, 0, bytes);
    elem16 *dst = xmalloc(n * sizeof *dst);
    memset(dst, 0, n * sizeof *dst);
    /* v[impl][workload][run] */
    double cells[NIMPLS][NW][5];
    double *v[NIMPLS][NW];
    uint64_t check[NIMPLS] = {0, 0, 0, 0};
    for (int k = 0; k < NIMPLS; k++) {
        for (int w = 0; w < NW; w++) {
            v[k][w] = cells[k][w];
        }
    }
    for (int run = 0; run < a->runs; run++) {
        if (bench_selected(a, impls[0])) {
            run_ark(p, &b, bytes, v[0], run, &check[0]);
        }
        for (int k = 1; k < 3; k++) {
            if (bench_selected(a, impls[k])) {
                run_memcpy(src, dst, n, k == 2, v[k], run, &check[k]);
            }
        }
        if (bench_selected(a, impls[3])) {
            run_gather(slots, dst, n, v[3], run, &check[3]);
        }
    }
    for (int k = 0; k < NIMPLS; k++) {
        for (int w = 0; w < NW && bench_selected(a, impls[k]); w++) {
            bench_row("snapshot", workloads[w], n, impls[k], v[k][w], a->runs,
                      "ms", check[k]);
        }
    }
    if (a->impl == NULL) {
        /* bench_row sorted each run array: the medians are in the middle. */
        int m = a->runs / 2;
        printf("# snapshot n=%zu, %zu snapshot bytes for %zu element bytes; "
               "medians, ratios to one memcpy (to 16 KiB memcpys; to the "
               "bare gather, itself x one memcpy):\n",
               n, bytes, n * sizeof(elem16));
        for (int w = 0; w < NW; w++) {
            printf("#   %-12s %6.1f ms vs memcpy %6.1f ms: %.2fx "
                   "(memcpy_16k %6.1f ms: %.2fx; gather_16k %6.1f ms: %.2fx, "
                   "itself %.2fx)\n",
                   workloads[w], v[0][w][m], v[1][w][m],
                   v[0][w][m] / v[1][w][m], v[2][w][m], v[0][w][m] / v[2][w][m],
                   v[3][w][m], v[0][w][m] / v[3][w][m],
                   v[3][w][m] / v[1][w][m]);
        }
    }
    free(b.data);
    free(dst);
    free(slots);
    free(src);
    ark_pool_destroy(p);
}

int main(int argc, char **argv) {
    bench_args a = bench_parse(argc, argv, impls, NIMPLS);
    size_t n = a.mode == BENCH_SMOKE   ? 10000
               : a.mode == BENCH_QUICK ? 1000000
                                       : 10000000;
    run(&a, n);
    return 0;
}
