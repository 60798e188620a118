/* SPDX-License-Identifier: MIT */
/*
 * bench_snapshot.c - ark_pool_save / ark_pool_load against memcpy of the
 * same element bytes, side by side in one process.
 *
 * Workloads (section "snapshot"), N elements of 16 bytes (elem_align 8),
 * all live, ms per whole operation:
 *   save   ark: ark_pool_save into a pre-faulted memory buffer;
 *          memcpy: N * 16 bytes from one pre-faulted buffer to another
 *   save_discard  ark: ark_pool_save into a writer that drops the bytes
 *          (the library's own cost: reading the slots, encoding,
 *          checksum); memcpy: as for save
 *   load   ark: ark_pool_load from that buffer (a new pool each run, its
 *          storage faulted in on the way); memcpy: N * 16 bytes into a
 *          freshly malloc'd buffer (faulted in on the way)
 * The '#' lines give the ratio of the medians. Checksums: the number of
 * elements and a sum over them, equal for every implementation.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "ark/ark.h"
#include "bench_common.h"

static const char *const impls[] = {"ark_pool", "memcpy"};
enum { NIMPLS = 2 };

typedef struct elem16 {
    uint64_t a, b;
} elem16;

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

static void run(const bench_args *a, size_t n) {
    ark_pool *p = NULL;
    if (ark_pool_create(&p, &cfg) != ARK_OK ||
        ark_pool_reserve(p, n) != ARK_OK) {
        exit(1);
    }
    elem16 *src = xmalloc(n * sizeof *src);
    uint64_t state = BENCH_SEED, sum = 0;
    for (size_t i = 0; i < n; i++) {
        src[i].a = bench_rand(&state);
        src[i].b = i;
        sum += src[i].a;
        ark_pool_insert(p, &src[i], NULL);
    }
    size_t bytes = 0;
    ark_writer cw = {count_write, &bytes};
    ark_pool_save(p, &cw);
    buf b = {xmalloc(bytes), 0, bytes, 0};
    memset(b.data, 0, bytes);
    elem16 *dst = xmalloc(n * sizeof *dst);
    memset(dst, 0, n * sizeof *dst);
    double v[5][5];
    uint64_t check[5] = {0, 0, 0, 0, 0};
    for (int run = 0; run < a->runs; run++) {
        if (bench_selected(a, "ark_pool")) {
            b.len = 0;
            ark_writer w = {buf_write, &b};
            uint64_t t0 = bench_now_ns();
            if (ark_pool_save(p, &w) != ARK_OK) {
                exit(1);
            }
            v[0][run] = (double)(bench_now_ns() - t0) / 1e6;
            size_t dropped = 0;
            ark_writer dw = {count_write, &dropped};
            t0 = bench_now_ns();
            ark_pool_save(p, &dw);
            v[4][run] = (double)(bench_now_ns() - t0) / 1e6;
            b.pos = 0;
            ark_reader r = {buf_read, &b};
            ark_pool *q = NULL;
            t0 = bench_now_ns();
            if (ark_pool_load(&q, &cfg, &r) != ARK_OK) {
                exit(1);
            }
            v[1][run] = (double)(bench_now_ns() - t0) / 1e6;
            check[0] = check[1] = check[4] = ark_pool_count(q) + pool_sum(q);
            ark_pool_destroy(q);
        }
        if (bench_selected(a, "memcpy")) {
            uint64_t t0 = bench_now_ns();
            memcpy(dst, src, n * sizeof *src);
            v[2][run] = (double)(bench_now_ns() - t0) / 1e6;
            bench_keep(dst[n - 1].a);
            elem16 *fresh = xmalloc(n * sizeof *fresh);
            t0 = bench_now_ns();
            memcpy(fresh, src, n * sizeof *src);
            v[3][run] = (double)(bench_now_ns() - t0) / 1e6;
            uint64_t s = 0;
            for (size_t i = 0; i < n; i++) {
                s += fresh[i].a;
            }
            free(fresh);
            check[2] = check[3] = n + s;
        }
    }
    if (bench_selected(a, "ark_pool")) {
        bench_row("snapshot", "save", n, "ark_pool", v[0], a->runs, "ms",
                  check[0]);
        bench_row("snapshot", "load", n, "ark_pool", v[1], a->runs, "ms",
                  check[1]);
        bench_row("snapshot", "save_discard", n, "ark_pool", v[4], a->runs,
                  "ms", check[4]);
    }
    if (bench_selected(a, "memcpy")) {
        bench_row("snapshot", "save", n, "memcpy", v[2], a->runs, "ms",
                  check[2]);
        bench_row("snapshot", "load", n, "memcpy", v[3], a->runs, "ms",
                  check[3]);
        bench_row("snapshot", "save_discard", n, "memcpy", v[2], a->runs, "ms",
                  check[2]);
    }
    if (a->impl == NULL) {
        /* bench_row sorted each run array: the medians are in the middle. */
        int m = a->runs / 2;
        printf("# snapshot n=%zu: save %.1f ms vs memcpy %.1f ms (%.2fx); "
               "save to a discarding writer %.1f ms (%.2fx); "
               "load %.1f ms vs memcpy into fresh memory %.1f ms (%.2fx); "
               "snapshot %zu bytes for %zu element bytes\n",
               n, v[0][m], v[2][m], v[0][m] / v[2][m], v[4][m],
               v[4][m] / v[2][m], v[1][m], v[3][m], v[1][m] / v[3][m], bytes,
               n * sizeof(elem16));
    }
    (void)sum;
    free(b.data);
    free(dst);
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
