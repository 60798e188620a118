/* SPDX-License-Identifier: MIT */
/*
 * bench_idmap_ark.h - ark_idmap on the workloads of bench_idmap_common.h,
 * shared by bench_idmap.c (the `ark` rows) and bench_idmap_peers.cpp (its
 * --pair mode, ark and a peer in one process). C and C++.
 */
#ifndef ARK_BENCH_IDMAP_ARK_H
#define ARK_BENCH_IDMAP_ARK_H

#include "ark/idmap.h"
#include "bench_idmap_common.h"

static ark_idmap *ark_build(const idmap_keys *k, int reserve) {
    ark_idmap *m;
    if (ark_idmap_create(&m, NULL) != ARK_OK ||
        (reserve && ark_idmap_reserve(m, k->n) != ARK_OK)) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < k->n; i++) {
        if (ark_idmap_put(m, k->keys[i], i + 1) != ARK_OK) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
    }
    return m;
}

/* The three lookups a user writes, each in a loop of its own function
 * (with the insert and remove loops beside it, which the shape of the
 * lookup loop can move: docs/design-notes.md, "The caller's loop"):
 * the out-parameter under an if, the out-parameter used unconditionally
 * (v keeps its value on a miss, so the miss loop adds 0 every time), and
 * the pointer-returning ark_idmap_find. */
#define IDMAP_LOOKUP_IF(m, key, sum, v)                                        \
    do {                                                                       \
        if (ark_idmap_get(m, key, &v)) {                                       \
            sum += v;                                                          \
        }                                                                      \
    } while (0)
#define IDMAP_LOOKUP_OUT(m, key, sum, v)                                       \
    do {                                                                       \
        ark_idmap_get(m, key, &v);                                             \
        sum += v;                                                              \
    } while (0)
#define IDMAP_LOOKUP_FIND(m, key, sum, v)                                      \
    do {                                                                       \
        const uint64_t *p_ = ark_idmap_find(m, key);                           \
        (void)v;                                                               \
        if (p_ != NULL) {                                                      \
            sum += *p_;                                                        \
        }                                                                      \
    } while (0)

/* One run of every workload with lookups written as LOOKUP. */
#define IDMAP_ARK_RUN(NAME, LOOKUP)                                            \
    static void NAME(const idmap_keys *k, idmap_result *r, int run) {          \
        uint64_t t0 = bench_now_ns();                                          \
        ark_idmap *m = ark_build(k, 0);                                        \
        uint64_t t1 = bench_now_ns();                                          \
        r->ns[IDMAP_INSERT][run] = (double)(t1 - t0);                          \
        r->sum[IDMAP_INSERT] = ark_idmap_count(m);                             \
                                                                               \
        uint64_t sum = 0, v = 0;                                               \
        t0 = bench_now_ns();                                                   \
        for (size_t i = 0; i < k->n; i++) {                                    \
            LOOKUP(m, k->order[i], sum, v);                                    \
        }                                                                      \
        t1 = bench_now_ns();                                                   \
        r->ns[IDMAP_LOOKUP_HIT][run] = (double)(t1 - t0);                      \
        r->sum[IDMAP_LOOKUP_HIT] = sum;                                        \
                                                                               \
        sum = 0;                                                               \
        v = 0;                                                                 \
        t0 = bench_now_ns();                                                   \
        for (size_t i = 0; i < k->n; i++) {                                    \
            LOOKUP(m, k->miss[i], sum, v);                                     \
        }                                                                      \
        t1 = bench_now_ns();                                                   \
        r->ns[IDMAP_LOOKUP_MISS][run] = (double)(t1 - t0);                     \
        r->sum[IDMAP_LOOKUP_MISS] = sum;                                       \
                                                                               \
        sum = 0;                                                               \
        t0 = bench_now_ns();                                                   \
        for (ark_idmap_iter it = ark_idmap_iter_begin(m);                      \
             ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {            \
            sum += it.key + it.value * 3;                                      \
        }                                                                      \
        t1 = bench_now_ns();                                                   \
        r->ns[IDMAP_ITERATE][run] = (double)(t1 - t0);                         \
        r->sum[IDMAP_ITERATE] = sum;                                           \
                                                                               \
        sum = 0;                                                               \
        t0 = bench_now_ns();                                                   \
        for (size_t i = 0; i < k->n; i++) {                                    \
            sum += ark_idmap_remove(m, k->order[i]);                           \
        }                                                                      \
        t1 = bench_now_ns();                                                   \
        r->ns[IDMAP_REMOVE][run] = (double)(t1 - t0);                          \
        r->sum[IDMAP_REMOVE] = sum + ark_idmap_count(m);                       \
        ark_idmap_destroy(m);                                                  \
                                                                               \
        t0 = bench_now_ns();                                                   \
        m = ark_build(k, 1);                                                   \
        t1 = bench_now_ns();                                                   \
        r->ns[IDMAP_INSERT_RESERVE][run] = (double)(t1 - t0);                  \
        r->sum[IDMAP_INSERT_RESERVE] = ark_idmap_count(m);                     \
        ark_idmap_destroy(m);                                                  \
    }

IDMAP_ARK_RUN(ark_run_if, IDMAP_LOOKUP_IF)
IDMAP_ARK_RUN(ark_run_out, IDMAP_LOOKUP_OUT)
IDMAP_ARK_RUN(ark_run_find, IDMAP_LOOKUP_FIND)

typedef void (*idmap_ark_runner)(const idmap_keys *, idmap_result *, int);
static const idmap_ark_runner idmap_ark_runners[IDMAP_NSHAPES] = {
    ark_run_if, ark_run_out, ark_run_find};

/* Run the workloads with lookup shape `shape` until idmap_more says stop;
 * return the runs made. */
static int run_ark(const bench_args *a, const idmap_keys *k, idmap_result *r,
                   int shape) {
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; idmap_more(a, k->n, run, start); run++) {
        idmap_ark_runners[shape](k, r, run);
    }
    return run;
}

#endif /* ARK_BENCH_IDMAP_ARK_H */
