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

/* Run the workloads until idmap_more says stop; return the runs made. */
static int run_ark(const bench_args *a, const idmap_keys *k, idmap_result *r) {
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; idmap_more(a, k->n, run, start); run++) {
        uint64_t t0 = bench_now_ns();
        ark_idmap *m = ark_build(k, 0);
        uint64_t t1 = bench_now_ns();
        r->ns[IDMAP_INSERT][run] = (double)(t1 - t0);
        r->sum[IDMAP_INSERT] = ark_idmap_count(m);

        uint64_t sum = 0, v;
        t0 = bench_now_ns();
        for (size_t i = 0; i < k->n; i++) {
            if (ark_idmap_get(m, k->order[i], &v)) {
                sum += v;
            }
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_LOOKUP_HIT][run] = (double)(t1 - t0);
        r->sum[IDMAP_LOOKUP_HIT] = sum;

        sum = 0;
        t0 = bench_now_ns();
        for (size_t i = 0; i < k->n; i++) {
            if (ark_idmap_get(m, k->miss[i], &v)) {
                sum += v;
            }
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_LOOKUP_MISS][run] = (double)(t1 - t0);
        r->sum[IDMAP_LOOKUP_MISS] = sum;

        sum = 0;
        t0 = bench_now_ns();
        for (ark_idmap_iter it = ark_idmap_iter_begin(m);
             ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {
            sum += it.key + it.value * 3;
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_ITERATE][run] = (double)(t1 - t0);
        r->sum[IDMAP_ITERATE] = sum;

        sum = 0;
        t0 = bench_now_ns();
        for (size_t i = 0; i < k->n; i++) {
            sum += ark_idmap_remove(m, k->order[i]);
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_REMOVE][run] = (double)(t1 - t0);
        r->sum[IDMAP_REMOVE] = sum + ark_idmap_count(m);
        ark_idmap_destroy(m);

        t0 = bench_now_ns();
        m = ark_build(k, 1);
        t1 = bench_now_ns();
        r->ns[IDMAP_INSERT_RESERVE][run] = (double)(t1 - t0);
        r->sum[IDMAP_INSERT_RESERVE] = ark_idmap_count(m);
        ark_idmap_destroy(m);
    }
    return run;
}

#endif /* ARK_BENCH_IDMAP_ARK_H */
