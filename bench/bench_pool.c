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

#include "ark/pool.h"

#include <stdbool.h>

#include "bench_common.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

typedef struct elem {
    float x, y, vx, vy;
} elem;

typedef struct sizes {
    size_t s000, s001, churn[2], stale;
    int frames;
} sizes;

static const char *const impls[] = {"ark", "array"};

static sizes sizes_for(bench_mode m) {
    sizes s;
    if (m == BENCH_SMOKE) {
        s = (sizes){10000, 10000, {1000, 10000}, 10000, 2};
    } else if (m == BENCH_QUICK) {
        s = (sizes){1000000, 100000, {10000, 100000}, 100000, 100};
    } else {
        s = (sizes){10000000, 1000000, {100000, 1000000}, 1000000, 100};
    }
    return s;
}

static elem elem_make(uint64_t id) {
    elem e = {(float)id, (float)(id + 1), 1.0f, -1.0f};
    return e;
}

static uint64_t xbits(const elem *e) {
    uint32_t b;
    memcpy(&b, &e->x, sizeof b);
    return b;
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes == 0 ? 1 : bytes);
    if (p == NULL) {
        fprintf(stderr, "bench_pool: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* Fisher-Yates shuffle of 0..n-1 from a fresh BENCH_SEED stream. */
static uint32_t *perm_make(size_t n) {
    uint32_t *a = xmalloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint32_t)i;
    }
    uint64_t st = BENCH_SEED;
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)(bench_rand(&st) % (uint64_t)(i + 1));
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    return a;
}

/* Read a "Key:   N kB" line of /proc/self/status; -1 if unavailable. */
static long proc_status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) {
        return -1;
    }
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, k) == 0 && line[k] == ':') {
            v = atol(line + k + 1);
            break;
        }
    }
    fclose(f);
    return v;
}

/* Give freed heap memory back to the OS and reset the kernel's peak-RSS
 * mark to the current RSS (Linux >= 4.0), so the peak printed next is this
 * workload's. Harmless where unsupported. */
static void peak_reset(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f != NULL) {
        fputs("5", f);
        fclose(f);
    }
}

/* Touch every page of a buffer so it counts as resident before a memory
 * measurement starts. */
static void touch(void *p, size_t bytes) { memset(p, 0xff, bytes); }

/* Per-workload time budget: a workload stops repeating once it has run
 * for this long (after at least one run), so that the slowest peers keep
 * the whole bench within its time limit. min = max in a row means one run.
 */
static uint64_t budget_ns = 1000000000u;

static bool more_runs(int run, int runs, uint64_t start) {
    return run < runs && (run == 0 || bench_now_ns() - start < budget_ns);
}

static double elapsed(uint64_t t0, uint64_t t1, double per) {
    return (double)(t1 - t0) / per;
}

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

static void ark_stale(size_t n, int runs) {
    uint32_t *perm = perm_make(n);
    ark_handle *h = xmalloc(n * sizeof *h);
    ark_handle *r = xmalloc(n / 2 * sizeof *r);
    double t[5];
    uint64_t sum = 0, accepted = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
        t[run] = elapsed(t0, bench_now_ns(), (double)(n / 2 * 2));
        ark_pool_destroy(p);
    }
    bench_row("pool", "stale_get", n, "ark", t, run, "ns/op", sum);
    double a[1] = {(double)accepted};
    bench_row("pool", "stale_accepted", n / 2, "ark", a, 1, "handles", n / 2);
    free(r);
    free(h);
    free(perm);
}

static void ark_s001(size_t n, int runs) {
    uint32_t *perm = perm_make(n);
    ark_handle *h = xmalloc(n * sizeof *h);
    double ti[5], tg[5];
    uint64_t cnt = 0, sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
        ti[run] = elapsed(t0, t1, (double)n);
        tg[run] = elapsed(t1, t2, (double)n);
        ark_pool_destroy(p);
    }
    bench_row("pool", "s001_insert", n, "ark", ti, run, "ns/op", cnt);
    bench_row("pool", "s001_get_random", n, "ark", tg, run, "ns/op", sum);
    free(h);
    free(perm);
}

static void ark_churn(size_t live, int frames, int runs) {
    ark_handle *h = xmalloc(live * sizeof *h);
    double tf[5], tit[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
    bench_row("pool", "churn_frame", live, "ark", tf, run, "us/frame", check);
    bench_row("pool", "churn_iterate", live, "ark", tit, run, "us/frame",
              check);
    free(h);
}

static void ark_s000(size_t n, int runs) {
    uint32_t *perm = perm_make(n);
    ark_handle *h = xmalloc(n * sizeof *h);
    touch(h, n * sizeof *h);
    double t[5][5], mem = 0;
    uint64_t c[5] = {0};
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
        long base = 0;
        if (run == 0) {
            peak_reset();
            base = proc_status_kib("VmRSS");
        }
        ark_pool *p = ark_new();
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = ark_put(p, i);
        }
        uint64_t t1 = bench_now_ns();
        if (run == 0) {
            mem =
                (double)(proc_status_kib("VmHWM") - base) * 1024.0 / (double)n;
        }
        c[0] = ark_pool_count(p);
        c[1] = ark_sum(p);
        uint64_t t2 = bench_now_ns();
        c[2] = 0;
        for (size_t i = 0; i < n; i++) {
            const elem *e = ark_pool_get(p, h[i]);
            if (e != NULL) {
                c[2] += xbits(e);
            }
        }
        uint64_t t3 = bench_now_ns();
        c[3] = 0;
        for (size_t k = 0; k < n; k++) {
            const elem *e = ark_pool_get(p, h[perm[k]]);
            if (e != NULL) {
                c[3] += xbits(e);
            }
        }
        uint64_t t4 = bench_now_ns();
        size_t before = ark_pool_count(p);
        for (size_t k = 0; k < n; k++) {
            ark_pool_remove(p, h[perm[k]]);
        }
        uint64_t t5 = bench_now_ns();
        c[4] = before - ark_pool_count(p);
        t[0][run] = elapsed(t0, t1, (double)n);
        t[1][run] = elapsed(t1, t2, (double)n);
        t[2][run] = elapsed(t2, t3, (double)n);
        t[3][run] = elapsed(t3, t4, (double)n);
        t[4][run] = elapsed(t4, t5, (double)n);
        ark_pool_destroy(p);
    }
    bench_row("pool", "s000_insert", n, "ark", t[0], run, "ns/op", c[0]);
    bench_row("pool", "s000_iterate", n, "ark", t[1], run, "ns/op", c[1]);
    bench_row("pool", "s000_get_seq", n, "ark", t[2], run, "ns/op", c[2]);
    bench_row("pool", "s000_get_random", n, "ark", t[3], run, "ns/op", c[3]);
    bench_row("pool", "s000_remove_random", n, "ark", t[4], run, "ns/op", c[4]);
    bench_row("pool", "s000_memory", n, "ark", &mem, 1, "B/elem", n);
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

static void array_s001(size_t n, int runs) {
    uint32_t *perm = perm_make(n);
    double ti[5], tg[5];
    uint64_t cnt = 0, sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
        ti[run] = elapsed(t0, t1, (double)n);
        tg[run] = elapsed(t1, t2, (double)n);
        free(a.v);
    }
    bench_row("pool", "s001_insert", n, "array", ti, run, "ns/op", cnt);
    bench_row("pool", "s001_get_random", n, "array", tg, run, "ns/op", sum);
    free(perm);
}

static void array_churn(size_t live, int frames, int runs) {
    double tf[5], tit[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
    bench_row("pool", "churn_frame", live, "array", tf, run, "us/frame", check);
    bench_row("pool", "churn_iterate", live, "array", tit, run, "us/frame",
              check);
}

static void array_s000(size_t n, int runs) {
    uint32_t *perm = perm_make(n);
    double t[5][5], mem = 0;
    uint64_t c[5] = {0};
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
        long base = 0;
        if (run == 0) {
            peak_reset();
            base = proc_status_kib("VmRSS");
        }
        array a = {NULL, 0, 0};
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            array_push(&a, i);
        }
        uint64_t t1 = bench_now_ns();
        if (run == 0) {
            mem =
                (double)(proc_status_kib("VmHWM") - base) * 1024.0 / (double)n;
        }
        c[0] = a.len;
        c[1] = array_sum(&a);
        uint64_t t2 = bench_now_ns();
        c[2] = 0;
        for (size_t i = 0; i < n; i++) {
            c[2] += xbits(&a.v[i]);
        }
        uint64_t t3 = bench_now_ns();
        c[3] = 0;
        for (size_t k = 0; k < n; k++) {
            c[3] += xbits(&a.v[perm[k]]);
        }
        uint64_t t4 = bench_now_ns();
        size_t before = a.len;
        for (size_t k = 0; k < n; k++) {
            array_swap_pop(&a, perm[k] % a.len);
        }
        uint64_t t5 = bench_now_ns();
        c[4] = before - a.len;
        t[0][run] = elapsed(t0, t1, (double)n);
        t[1][run] = elapsed(t1, t2, (double)n);
        t[2][run] = elapsed(t2, t3, (double)n);
        t[3][run] = elapsed(t3, t4, (double)n);
        t[4][run] = elapsed(t4, t5, (double)n);
        free(a.v);
    }
    bench_row("pool", "s000_insert", n, "array", t[0], run, "ns/op", c[0]);
    bench_row("pool", "s000_iterate", n, "array", t[1], run, "ns/op", c[1]);
    bench_row("pool", "s000_get_seq", n, "array", t[2], run, "ns/op", c[2]);
    bench_row("pool", "s000_get_random", n, "array", t[3], run, "ns/op", c[3]);
    bench_row("pool", "s000_remove_random", n, "array", t[4], run, "ns/op",
              c[4]);
    bench_row("pool", "s000_memory", n, "array", &mem, 1, "B/elem", n);
    free(perm);
}

int main(int argc, char **argv) {
    bench_args args = bench_parse(argc, argv, impls, 2);
    sizes s = sizes_for(args.mode);
    budget_ns = args.mode == BENCH_FULL ? 8000000000u : 1000000000u;
    if (bench_selected(&args, "ark")) {
        peak_reset();
        ark_stale(s.stale, args.runs);
        peak_reset();
        ark_s001(s.s001, args.runs);
        for (int k = 0; k < 2; k++) {
            peak_reset();
            ark_churn(s.churn[k], s.frames, args.runs);
        }
        ark_s000(s.s000, args.runs);
    }
    if (bench_selected(&args, "array")) {
        peak_reset();
        array_s001(s.s001, args.runs);
        for (int k = 0; k < 2; k++) {
            peak_reset();
            array_churn(s.churn[k], s.frames, args.runs);
        }
        array_s000(s.s000, args.runs);
    }
    return 0;
}
