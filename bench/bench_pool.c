/*
 * bench_pool.c - section `pool`: ark_pool against a plain C array (the
 * floor). The peers (C++, Rust, Go) run the same workloads in their own
 * programs: bench/bench_pool_peers.cpp, bench/rust, bench/go. Every one of
 * them follows the recipe below step by step, so their checksums agree.
 *
 * Element: {float x, y, vx, vy}; element number id is
 * {(float)id, (float)(id + 1), 1, -1}. A checksum over elements is the sum
 * (mod 2^64) of the uint32 bit patterns of x, so it does not depend on
 * iteration order. perm(n) is a Fisher-Yates shuffle of 0..n-1 driven by
 * splitmix64 from BENCH_SEED: for i = n-1 down to 1, j = rand % (i + 1),
 * swap a[i], a[j]. Every workload restarts the PRNG from BENCH_SEED, and
 * every run of a workload does exactly the same operations.
 *
 * Workloads (rows), smallest first so that the peak RSS printed with each
 * row is that workload's (the peak is reset before each one):
 * - stale (n): insert ids 0..n-1 (handles H), remove H[perm[k]] for
 *   k < n/2 (saved as R[k]), insert ids n+k into H[perm[k]]; then time, for
 *   each k < n/2, get(H[perm[k]]) and get(R[k]). Rows stale_get (ns/op,
 *   checksum = x bits of every element returned) and stale_accepted (stale
 *   handles that returned an element; must be 0).
 * - s001 (n): insert ids 0..n-1, then get(H[perm[k]]) for every k.
 * - churn (live L, F frames): insert ids 0..L-1 into H (untimed); each
 *   frame removes m = L/10 handles, for k < m: j = rand % (L - k), remove
 *   H[j], H[j] = H[L-k-1]; then inserts the next m ids into H[L-m+k]; then
 *   iterates everything. Rows churn_frame and churn_iterate in us/frame,
 *   checksum = sum of the frames' iteration checksums.
 * - s000 (n): insert ids 0..n-1 without reserve; iterate; get(H[i]) in
 *   order; get(H[perm[k]]); remove(H[perm[k]]) for every k. The remove
 *   checksum is the number of elements removed. s000_memory is the peak
 *   RSS growth while inserting, in bytes per element (first run only).
 *
 * Each workload is repeated 5 times (once in smoke mode) and reports the
 * median, but stops repeating once it has used its time budget (8 s in
 * full mode, 1 s in quick mode) after at least one run, so the slowest
 * peers keep `make bench` within its time limit; min = max means one run.
 *
 * The array has no handles: get takes the index, churn removes position j
 * by swap-and-pop (the same elements the handle containers remove, since
 * they apply the same swap to H), s000's remove takes position
 * perm[k] % len. It is not run for stale (it cannot tell a stale index).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_common.h */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_common.h */

#include "ark/pool.h"

#include "pool_recipe.h"

static const char *const impls[] = {"ark", "array"};

/* Touch every page of a buffer so it counts as resident before a memory
 * measurement starts. */
static void touch(void *p, size_t bytes) { memset(p, 0xff, bytes); }

/* ---- ark ---------------------------------------------------------- */

static ark_pool *ark_new(void) {
    ark_pool *p;
    ark_pool_config cfg = {.elem_size = sizeof(elem), .elem_align = 4};
    if (ark_pool_create(&p, &cfg) != ARK_OK) {
        fprintf(stderr, "bench_pool: ark_pool_create failed\n");
        exit(1);
    }
    return p;
}

static ark_handle ark_put(ark_pool *p, uint64_t id) {
    elem e = elem_make(id);
    ark_handle h;
    if (ark_pool_insert(p, &e, &h) != ARK_OK) {
        fprintf(stderr, "bench_pool: ark_pool_insert failed\n");
        exit(1);
    }
    return h;
}

static uint64_t ark_sum(const ark_pool *p) {
    uint64_t sum = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        sum += xbits(it.elem);
    }
    return sum;
}

static void ark_stale(const bench_args *a, size_t n) {
    uint32_t *perm = perm_make(n);
    ark_handle *h = xmalloc(n * sizeof *h);
    ark_handle *r = xmalloc(n / 2 * sizeof *r);
    double t[5];
    uint64_t sum = 0, accepted = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        ark_pool *p = ark_new();
        for (size_t i = 0; i < n; i++) {
            h[i] = ark_put(p, i);
        }
        for (size_t k = 0; k < n / 2; k++) {
            r[k] = h[perm[k]];
            ark_pool_remove(p, r[k]);
        }
        for (size_t k = 0; k < n / 2; k++) {
            h[perm[k]] = ark_put(p, n + k);
        }
        sum = accepted = 0;
        uint64_t t0 = bench_now_ns();
        for (size_t k = 0; k < n / 2; k++) {
            const elem *e = ark_pool_get(p, h[perm[k]]);
            if (e != NULL) {
                sum += xbits(e);
            }
            e = ark_pool_get(p, r[k]);
            if (e != NULL) {
                sum += xbits(e);
                accepted++;
            }
        }
        t[run] = (double)(bench_now_ns() - t0) / (double)(n / 2 * 2);
        ark_pool_destroy(p);
    }
    stale_rows("ark", n, t, run, sum, accepted);
    free(r);
    free(h);
    free(perm);
}

static void ark_s001(const bench_args *a, size_t n) {
    uint32_t *perm = perm_make(n);
    ark_handle *h = xmalloc(n * sizeof *h);
    double ti[5], tg[5];
    uint64_t cnt = 0, sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        ark_pool *p = ark_new();
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = ark_put(p, i);
        }
        uint64_t t1 = bench_now_ns();
        cnt = ark_pool_count(p);
        sum = 0;
        for (size_t k = 0; k < n; k++) {
            const elem *e = ark_pool_get(p, h[perm[k]]);
            if (e != NULL) {
                sum += xbits(e);
            }
        }
        uint64_t t2 = bench_now_ns();
        ti[run] = (double)(t1 - t0) / (double)n;
        tg[run] = (double)(t2 - t1) / (double)n;
        ark_pool_destroy(p);
    }
    bench_row("pool", "s001_insert", n, "ark", ti, run, "ns/op", cnt);
    bench_row("pool", "s001_get_random", n, "ark", tg, run, "ns/op", sum);
    free(h);
    free(perm);
}

static void ark_churn(const bench_args *a, size_t live) {
    ark_handle *h = xmalloc(live * sizeof *h);
    double tf[5], tit[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int frames = sizes_for(a->mode).frames, run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        uint64_t st = BENCH_SEED, next = live;
        ark_pool *p = ark_new();
        for (size_t i = 0; i < live; i++) {
            h[i] = ark_put(p, i);
        }
        uint64_t frame_ns = 0, iter_ns = 0;
        check = 0;
        for (int f = 0; f < frames; f++) {
            uint64_t t0 = bench_now_ns();
            for (size_t k = 0; k < m; k++) {
                size_t j = (size_t)(bench_rand(&st) % (live - k));
                ark_pool_remove(p, h[j]);
                h[j] = h[live - k - 1];
            }
            for (size_t k = 0; k < m; k++) {
                h[live - m + k] = ark_put(p, next++);
            }
            uint64_t t1 = bench_now_ns();
            check += ark_sum(p);
            uint64_t t2 = bench_now_ns();
            frame_ns += t2 - t0;
            iter_ns += t2 - t1;
        }
        tf[run] = (double)frame_ns / frames / 1000.0;
        tit[run] = (double)iter_ns / frames / 1000.0;
        ark_pool_destroy(p);
    }
    churn_rows("ark", live, tf, tit, run, check);
    free(h);
}

static void ark_s000(const bench_args *a, size_t n) {
    uint32_t *perm = perm_make(n);
    ark_handle *h = xmalloc(n * sizeof *h);
    touch(h, n * sizeof *h);
    double t[5][5], mem = 0;
    uint64_t c[5] = {0}, ts[6];
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        long base = run == 0 ? mem_begin() : 0;
        ark_pool *p = ark_new();
        ts[0] = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = ark_put(p, i);
        }
        ts[1] = bench_now_ns();
        if (run == 0) {
            mem = mem_end(base, n);
        }
        c[0] = ark_pool_count(p);
        c[1] = ark_sum(p);
        ts[2] = bench_now_ns();
        c[2] = 0;
        for (size_t i = 0; i < n; i++) {
            const elem *e = ark_pool_get(p, h[i]);
            if (e != NULL) {
                c[2] += xbits(e);
            }
        }
        ts[3] = bench_now_ns();
        c[3] = 0;
        for (size_t k = 0; k < n; k++) {
            const elem *e = ark_pool_get(p, h[perm[k]]);
            if (e != NULL) {
                c[3] += xbits(e);
            }
        }
        ts[4] = bench_now_ns();
        size_t before = ark_pool_count(p);
        for (size_t k = 0; k < n; k++) {
            ark_pool_remove(p, h[perm[k]]);
        }
        ts[5] = bench_now_ns();
        c[4] = before - ark_pool_count(p);
        s000_store(t, run, ts, n);
        ark_pool_destroy(p);
    }
    s000_rows("ark", n, t, run, c, mem);
    free(h);
    free(perm);
}

/* ---- array: push with doubling growth, index access, swap-and-pop ---- */

typedef struct array {
    elem *v;
    size_t len, cap;
} array;

static void array_push(array *a, uint64_t id) {
    if (a->len == a->cap) {
        size_t ncap = a->cap < 16 ? 16 : a->cap * 2;
        elem *nv = realloc(a->v, ncap * sizeof *nv);
        if (nv == NULL) {
            fprintf(stderr, "bench_pool: out of memory\n");
            exit(1);
        }
        a->v = nv;
        a->cap = ncap;
    }
    a->v[a->len++] = elem_make(id);
}

static void array_swap_pop(array *a, size_t pos) { a->v[pos] = a->v[--a->len]; }

static uint64_t array_sum(const array *a) {
    uint64_t sum = 0;
    for (size_t i = 0; i < a->len; i++) {
        sum += xbits(&a->v[i]);
    }
    return sum;
}

static void array_s001(const bench_args *args, size_t n) {
    uint32_t *perm = perm_make(n);
    double ti[5], tg[5];
    uint64_t cnt = 0, sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(args, run, start); run++) {
        array a = {NULL, 0, 0};
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            array_push(&a, i);
        }
        uint64_t t1 = bench_now_ns();
        cnt = a.len;
        sum = 0;
        for (size_t k = 0; k < n; k++) {
            sum += xbits(&a.v[perm[k]]);
        }
        uint64_t t2 = bench_now_ns();
        ti[run] = (double)(t1 - t0) / (double)n;
        tg[run] = (double)(t2 - t1) / (double)n;
        free(a.v);
    }
    bench_row("pool", "s001_insert", n, "array", ti, run, "ns/op", cnt);
    bench_row("pool", "s001_get_random", n, "array", tg, run, "ns/op", sum);
    free(perm);
}

static void array_churn(const bench_args *args, size_t live) {
    double tf[5], tit[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int frames = sizes_for(args->mode).frames, run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(args, run, start); run++) {
        uint64_t st = BENCH_SEED, next = live;
        array a = {NULL, 0, 0};
        for (size_t i = 0; i < live; i++) {
            array_push(&a, i);
        }
        uint64_t frame_ns = 0, iter_ns = 0;
        check = 0;
        for (int f = 0; f < frames; f++) {
            uint64_t t0 = bench_now_ns();
            for (size_t k = 0; k < m; k++) {
                array_swap_pop(&a, (size_t)(bench_rand(&st) % (live - k)));
            }
            for (size_t k = 0; k < m; k++) {
                array_push(&a, next++);
            }
            uint64_t t1 = bench_now_ns();
            check += array_sum(&a);
            uint64_t t2 = bench_now_ns();
            frame_ns += t2 - t0;
            iter_ns += t2 - t1;
        }
        tf[run] = (double)frame_ns / frames / 1000.0;
        tit[run] = (double)iter_ns / frames / 1000.0;
        free(a.v);
    }
    churn_rows("array", live, tf, tit, run, check);
}

static void array_s000(const bench_args *args, size_t n) {
    uint32_t *perm = perm_make(n);
    double t[5][5], mem = 0;
    uint64_t c[5] = {0}, ts[6];
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(args, run, start); run++) {
        long base = run == 0 ? mem_begin() : 0;
        array a = {NULL, 0, 0};
        ts[0] = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            array_push(&a, i);
        }
        ts[1] = bench_now_ns();
        if (run == 0) {
            mem = mem_end(base, n);
        }
        c[0] = a.len;
        c[1] = array_sum(&a);
        ts[2] = bench_now_ns();
        c[2] = 0;
        for (size_t i = 0; i < n; i++) {
            c[2] += xbits(&a.v[i]);
        }
        ts[3] = bench_now_ns();
        c[3] = 0;
        for (size_t k = 0; k < n; k++) {
            c[3] += xbits(&a.v[perm[k]]);
        }
        ts[4] = bench_now_ns();
        size_t before = a.len;
        for (size_t k = 0; k < n; k++) {
            array_swap_pop(&a, perm[k] % a.len);
        }
        ts[5] = bench_now_ns();
        c[4] = before - a.len;
        s000_store(t, run, ts, n);
        free(a.v);
    }
    s000_rows("array", n, t, run, c, mem);
    free(perm);
}

int main(int argc, char **argv) {
    bench_args args = bench_parse(argc, argv, impls, 2);
    sizes s = sizes_for(args.mode);
    if (bench_selected(&args, "ark")) {
        peak_reset();
        ark_stale(&args, s.stale);
        peak_reset();
        ark_s001(&args, s.s001);
        for (int k = 0; k < 2; k++) {
            peak_reset();
            ark_churn(&args, s.churn[k]);
        }
        ark_s000(&args, s.s000);
    }
    if (bench_selected(&args, "array")) {
        peak_reset();
        array_s001(&args, s.s001);
        for (int k = 0; k < 2; k++) {
            peak_reset();
            array_churn(&args, s.churn[k]);
        }
        array_s000(&args, s.s000);
    }
    return 0;
}
