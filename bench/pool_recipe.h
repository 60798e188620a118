/* SPDX-License-Identifier: MIT */
/*
 * pool_recipe.h - what the C and C++ programs of section `pool` share
 * (bench_pool.c, bench_pool_peers.cpp, pool_workloads.h): the element, the
 * sizes per mode, the permutation, the memory probes, the time budget and
 * the row printers.
 * The recipe itself is described in bench_pool.c's header comment; the
 * Rust and Go peers repeat these few helpers in their own language.
 * Compiles as C11 and as C++17.
 */
#ifndef ARK_BENCH_POOL_RECIPE_H
#define ARK_BENCH_POOL_RECIPE_H

#include "bench_common.h"

#include <stdbool.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

typedef struct elem {
    float x, y, vx, vy;
} elem;

typedef struct sizes {
    size_t s000, s001, churn[2], stale, holes;
    int frames;
} sizes;

static inline sizes sizes_for(bench_mode m) {
    static const sizes smoke = {10000, 10000, {1000, 10000}, 10000, 10000, 2};
    static const sizes quick = {1000000, 100000, {10000, 100000},
                                100000,  100000, 100};
    static const sizes full = {10000000, 1000000, {100000, 1000000},
                               1000000,  1000000, 100};
    return m == BENCH_SMOKE ? smoke : m == BENCH_QUICK ? quick : full;
}

/* Iterations timed per run of the holes workload (about 10 ms at 1M). */
#define HOLES_REPS 10

static inline elem elem_make(uint64_t id) {
    elem e = {(float)id, (float)(id + 1), 1.0f, -1.0f};
    return e;
}

static inline uint64_t xbits(const elem *e) {
    uint32_t b;
    memcpy(&b, &e->x, sizeof b);
    return b;
}

static inline void *xmalloc(size_t bytes) {
    void *p = malloc(bytes == 0 ? 1 : bytes);
    if (p == NULL) {
        fprintf(stderr, "bench pool: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* Fisher-Yates shuffle of 0..n-1 from a fresh BENCH_SEED stream. */
static inline uint32_t *perm_make(size_t n) {
    uint32_t *a = (uint32_t *)xmalloc(n * sizeof *a);
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
static inline long proc_status_kib(const char *key) {
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
static inline void peak_reset(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f != NULL) {
        fputs("5", f);
        fclose(f);
    }
}

/* Start a memory measurement: reset the peak, return the current RSS. */
static inline long mem_begin(void) {
    peak_reset();
    return proc_status_kib("VmRSS");
}

/* Bytes per element the peak RSS grew by since mem_begin. */
static inline double mem_end(long base, size_t n) {
    return (double)(proc_status_kib("VmHWM") - base) * 1024.0 / (double)n;
}

/* Time budget of one workload: it stops repeating once it has run this
 * long (after at least one run), so the slowest peers keep the whole
 * bench within its limit. min = max in a row means one run. */
static inline uint64_t budget_ns(bench_mode m) {
    return m == BENCH_FULL ? 8000000000u : 1000000000u;
}

/* Return true while another run of a workload started at start fits. */
static inline bool more_runs(const bench_args *a, int run, uint64_t start) {
    return run < a->runs &&
           (run == 0 || bench_now_ns() - start < budget_ns(a->mode));
}

/* The timed phases of the seq workload (s000 at 10M, s001 at 1M). */
#define SEQ_ROWS 5

/* Store the phase times of one seq run, from the begin and end timestamps
 * of each phase (untimed work, such as building the picks array, happens
 * between one phase's end and the next one's begin). */
static inline void seq_store(double t[SEQ_ROWS][5], int run,
                             const uint64_t b[SEQ_ROWS],
                             const uint64_t e[SEQ_ROWS], size_t n) {
    for (int w = 0; w < SEQ_ROWS; w++) {
        t[w][run] = (double)(e[w] - b[w]) / (double)n;
    }
}

/* Print the seq rows of one implementation: <fam>_insert, _iterate,
 * _get_seq, _get_random, _remove_random (ns/op) and _memory. */
static inline void seq_rows(const char *impl, const char *fam, size_t n,
                            double t[SEQ_ROWS][5], int runs,
                            const uint64_t c[SEQ_ROWS], double mem) {
    static const char *const names[SEQ_ROWS] = {"insert", "iterate", "get_seq",
                                                "get_random", "remove_random"};
    char wl[64];
    for (int w = 0; w < SEQ_ROWS; w++) {
        snprintf(wl, sizeof wl, "%s_%s", fam, names[w]);
        bench_row("pool", wl, n, impl, t[w], runs, "ns/op", c[w]);
    }
    snprintf(wl, sizeof wl, "%s_memory", fam);
    bench_row("pool", wl, n, impl, &mem, 1, "B/elem", n);
}

/* Print the churn rows: frame and iteration in us/frame, the frame's
 * removes and inserts in ns/op. */
static inline void churn_rows(const char *impl, size_t live, double *frame,
                              double *iter, double *rm, double *ins, int runs,
                              uint64_t check) {
    bench_row("pool", "churn_frame", live, impl, frame, runs, "us/frame",
              check);
    bench_row("pool", "churn_iterate", live, impl, iter, runs, "us/frame",
              check);
    bench_row("pool", "churn_remove", live, impl, rm, runs, "ns/op", check);
    bench_row("pool", "churn_insert", live, impl, ins, runs, "ns/op", check);
}

/* Print the two stale rows. */
static inline void stale_rows(const char *impl, size_t n, double *t, int runs,
                              uint64_t sum, uint64_t accepted) {
    bench_row("pool", "stale_get", n, impl, t, runs, "ns/op", sum);
    double a[1] = {(double)accepted};
    bench_row("pool", "stale_accepted", n / 2, impl, a, 1, "handles", n / 2);
}

#endif /* ARK_BENCH_POOL_RECIPE_H */
