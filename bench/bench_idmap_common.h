/* SPDX-License-Identifier: MIT */
/*
 * bench_idmap_common.h - keys, workloads and CSV rows shared by
 * bench_idmap.c (ark) and bench_idmap_peers.cpp (absl, std), so every
 * implementation sees the same keys in the same order.
 *
 * Per key kind (seq: 0..n-1; rand: splitmix64 from BENCH_SEED) and size n,
 * one run builds a map by n puts ("insert"), then times n lookups of every
 * key in shuffled order ("lookup_hit"), n lookups of absent keys
 * ("lookup_miss": n..2n-1 shuffled, or fresh random keys), one pass over
 * all entries ("iterate", ns per entry) and n removals in shuffled order
 * ("remove"); a second map is built after reserve(n) ("insert_reserve",
 * reserve included). Values are key index + 1. Units are ns per operation.
 * ark runs every workload once per lookup shape on random keys (see
 * idmap_shape_names). At 10M keys full mode takes the median of 3 runs
 * instead of 5, which keeps
 * std::unordered_map's share of the run near two minutes.
 */
#ifndef ARK_BENCH_IDMAP_COMMON_H
#define ARK_BENCH_IDMAP_COMMON_H

#include "bench_common.h"

enum {
    IDMAP_INSERT,
    IDMAP_INSERT_RESERVE,
    IDMAP_LOOKUP_HIT,
    IDMAP_LOOKUP_MISS,
    IDMAP_ITERATE,
    IDMAP_REMOVE,
    IDMAP_NWORK
};

/* The lookup loop shapes bench_idmap_ark.h measures ark with: the
 * out-parameter under an if (rows without a suffix), used unconditionally
 * ("_out") and the pointer-returning lookup ("_find"). On random keys
 * every shape has its own rows; a peer, whose loop is the same for all,
 * prints its rows under each shape's names. */
enum { IDMAP_SHAPE_IF, IDMAP_SHAPE_OUT, IDMAP_SHAPE_FIND, IDMAP_NSHAPES };
static const char *const idmap_shape_names[IDMAP_NSHAPES] = {"", "_out",
                                                             "_find"};

static const char *const idmap_work_names[IDMAP_NWORK] = {
    "insert",      "insert_reserve", "lookup_hit",
    "lookup_miss", "iterate",        "remove"};

typedef struct idmap_keys {
    uint64_t *keys;  /* insertion order */
    uint64_t *order; /* the same keys, shuffled */
    uint64_t *miss;  /* absent keys */
    size_t n;
} idmap_keys;

/* Timings of every run of every workload, and each workload's checksum. */
typedef struct idmap_result {
    double ns[IDMAP_NWORK][5];
    uint64_t sum[IDMAP_NWORK];
} idmap_result;

static inline void idmap_shuffle(uint64_t *v, size_t n, uint64_t *state) {
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(bench_rand(state) % i);
        uint64_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

static inline void idmap_keys_make(idmap_keys *k, size_t n, int random) {
    uint64_t state = BENCH_SEED ^ (random ? 0x5eedu : 0);
    k->n = n;
    k->keys = (uint64_t *)malloc(n * sizeof(uint64_t));
    k->order = (uint64_t *)malloc(n * sizeof(uint64_t));
    k->miss = (uint64_t *)malloc(n * sizeof(uint64_t));
    if (k->keys == NULL || k->order == NULL || k->miss == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        k->keys[i] = random ? bench_rand(&state) : i;
        k->miss[i] = random ? bench_rand(&state) : n + i;
    }
    memcpy(k->order, k->keys, n * sizeof(uint64_t));
    idmap_shuffle(k->order, n, &state);
    idmap_shuffle(k->miss, n, &state);
}

static inline void idmap_keys_free(idmap_keys *k) {
    free(k->keys);
    free(k->order);
    free(k->miss);
}

/* The sizes of a mode: smoke 10K, quick 1M, full 1M and 10M. */
static inline int idmap_sizes(bench_mode mode, size_t *out) {
    if (mode == BENCH_SMOKE) {
        out[0] = 10000;
        return 1;
    }
    out[0] = 1000000;
    if (mode == BENCH_QUICK) {
        return 1;
    }
    out[1] = 10000000;
    return 2;
}

/* Runs per cell for n keys: bench_common's count, but 3 from 10M up. */
static inline int idmap_runs(const bench_args *a, size_t n) {
    return n >= 10000000 && a->runs > 3 ? 3 : a->runs;
}

/* Whether to start run number `run` of a cell that started at `start`: up
 * to idmap_runs, but only while the cell is under its time budget (8 s in
 * full mode, 1 s otherwise), so the slowest map keeps `make bench` within
 * its limit; the first run always happens. */
static inline int idmap_more(const bench_args *a, size_t n, int run,
                             uint64_t start) {
    uint64_t budget = a->mode == BENCH_FULL ? 8000000000ull : 1000000000ull;
    return run < idmap_runs(a, n) &&
           (run == 0 || bench_now_ns() - start < budget);
}

/* Print one row per workload, named for lookup shape `shape`; ns holds
 * total ns of each run. */
static inline void idmap_print(const char *impl, int random, size_t n,
                               idmap_result *r, int runs, int shape) {
    char work[64];
    for (int w = 0; w < IDMAP_NWORK; w++) {
        double per[5];
        for (int i = 0; i < runs; i++) {
            per[i] = r->ns[w][i] / (double)n;
        }
        snprintf(work, sizeof work, "%s%s_%s", idmap_work_names[w],
                 idmap_shape_names[shape], random ? "rand" : "seq");
        bench_row("idmap", work, n, impl, per, runs, "ns/op", r->sum[w]);
    }
}

#endif /* ARK_BENCH_IDMAP_COMMON_H */
