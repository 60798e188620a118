/* SPDX-License-Identifier: MIT */
/*
 * bench_idmap.c - ark_idmap on the workloads of bench_idmap_common.h (the
 * runner is in bench_idmap_ark.h). The peers (boost::unordered_flat_map,
 * absl::flat_hash_map, std::unordered_map) are in bench_idmap_peers.cpp
 * with the same keys, rows and checksums.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "bench_idmap_ark.h"

static const char *const impls[] = {"ark"};

int main(int argc, char **argv) {
    bench_args a = bench_parse(argc, argv, impls, 1);
    size_t sizes[2];
    int nsizes = idmap_sizes(a.mode, sizes);
    for (int s = 0; s < nsizes; s++) {
        for (int random = 0; random < 2; random++) {
            idmap_keys k;
            idmap_keys_make(&k, sizes[s], random);
            for (int sh = 0; sh < (random ? IDMAP_NSHAPES : 1); sh++) {
                if (bench_selected(&a, "ark")) {
                    idmap_result r;
                    int runs = run_ark(&a, &k, &r, sh);
                    idmap_print("ark", random, k.n, &r, runs, sh);
                }
            }
            idmap_keys_free(&k);
        }
    }
    return 0;
}
