/* SPDX-License-Identifier: MIT */
// bench_idmap_peers.cpp - the peers of bench_idmap.c on the same keys,
// workloads, rows and checksums: boost::unordered_flat_map (when Debian's
// libboost1.81-dev is installed), absl::flat_hash_map<uint64_t, uint64_t>
// (when libabsl-dev is) and std::unordered_map, each with its default hash.
// `--pair ROUNDS [N] [PEER]` runs ark (bench_idmap_ark.h, each lookup
// shape) and one peer (boost_flat by default) in turn inside this process;
// see pair_main.
#include "bench_idmap_ark.h"

#include <cstring>
#include <unordered_map>
#ifdef ARK_BENCH_HAVE_ABSL
#include <absl/container/flat_hash_map.h>
#endif
#ifdef ARK_BENCH_HAVE_BOOST
#include <boost/unordered/unordered_flat_map.hpp>
#endif

namespace {

template <class Map> Map *build(const idmap_keys *k, bool reserve) {
    Map *m = new Map();
    if (reserve) {
        m->reserve(k->n);
    }
    for (size_t i = 0; i < k->n; i++) {
        (*m)[k->keys[i]] = i + 1;
    }
    return m;
}

template <class Map>
int run_peer(const bench_args *a, const idmap_keys *k, idmap_result *r) {
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; idmap_more(a, k->n, run, start); run++) {
        uint64_t t0 = bench_now_ns();
        Map *m = build<Map>(k, false);
        uint64_t t1 = bench_now_ns();
        r->ns[IDMAP_INSERT][run] = (double)(t1 - t0);
        r->sum[IDMAP_INSERT] = m->size();

        uint64_t sum = 0;
        t0 = bench_now_ns();
        for (size_t i = 0; i < k->n; i++) {
            auto it = m->find(k->order[i]);
            if (it != m->end()) {
                sum += it->second;
            }
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_LOOKUP_HIT][run] = (double)(t1 - t0);
        r->sum[IDMAP_LOOKUP_HIT] = sum;

        sum = 0;
        t0 = bench_now_ns();
        for (size_t i = 0; i < k->n; i++) {
            auto it = m->find(k->miss[i]);
            if (it != m->end()) {
                sum += it->second;
            }
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_LOOKUP_MISS][run] = (double)(t1 - t0);
        r->sum[IDMAP_LOOKUP_MISS] = sum;

        sum = 0;
        t0 = bench_now_ns();
        for (const auto &kv : *m) {
            sum += kv.first + kv.second * 3;
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_ITERATE][run] = (double)(t1 - t0);
        r->sum[IDMAP_ITERATE] = sum;

        sum = 0;
        t0 = bench_now_ns();
        for (size_t i = 0; i < k->n; i++) {
            sum += m->erase(k->order[i]);
        }
        t1 = bench_now_ns();
        r->ns[IDMAP_REMOVE][run] = (double)(t1 - t0);
        r->sum[IDMAP_REMOVE] = sum + m->size();
        delete m;

        t0 = bench_now_ns();
        m = build<Map>(k, true);
        t1 = bench_now_ns();
        r->ns[IDMAP_INSERT_RESERVE][run] = (double)(t1 - t0);
        r->sum[IDMAP_INSERT_RESERVE] = m->size();
        delete m;
    }
    return run;
}

typedef int (*runner)(const bench_args *, const idmap_keys *, idmap_result *);

struct peer {
    const char *name;
    runner run;
};

const peer peers[] = {
#ifdef ARK_BENCH_HAVE_BOOST
    {"boost_flat", run_peer<boost::unordered_flat_map<uint64_t, uint64_t>>},
#endif
#ifdef ARK_BENCH_HAVE_ABSL
    {"absl_flat", run_peer<absl::flat_hash_map<uint64_t, uint64_t>>},
#endif
    {"std_unordered", run_peer<std::unordered_map<uint64_t, uint64_t>>},
};
const int npeers = sizeof peers / sizeof peers[0];

/* One run of every workload, random keys k, by ark with lookup shape
 * `who` (0 .. IDMAP_NSHAPES - 1) or by the peer (IDMAP_NSHAPES). */
void pair_run(int who, runner peer_run, const idmap_keys *k, idmap_result *r) {
    bench_args one = {};
    one.mode = BENCH_SMOKE; /* any mode: runs = 1 stops after one run */
    one.runs = 1;
    if (who < IDMAP_NSHAPES) {
        run_ark(&one, k, r, who);
    } else {
        peer_run(&one, k, r);
    }
}

/* --pair ROUNDS [N] [PEER]: one run of every workload on N random keys
 * (default 1M) by ark, once per lookup shape (idmap_shape_names), and by
 * PEER in turn, ROUNDS times, the order rotated every round, so that all
 * meet the same phases of a busy host (`make bench` runs them in separate
 * processes, which can land in different ones). Prints, per shape, each
 * workload's median ns per operation and the median (min-max) of the
 * per-round ratios ark / PEER; the checksums must agree. */
int pair_main(int rounds, size_t n, const char *name) {
    const peer *pp = nullptr;
    for (int i = 0; i < npeers; i++) {
        if (std::strcmp(peers[i].name, name) == 0) {
            pp = &peers[i];
        }
    }
    if (pp == nullptr || rounds < 1 || rounds > BENCH_PAIR_MAX || n < 1) {
        std::fprintf(stderr,
                     "bench_idmap_peers: --pair ROUNDS (1-%d) [N] "
                     "[PEER]; no peer %s here\n",
                     BENCH_PAIR_MAX, name);
        return 2;
    }
    idmap_keys k;
    idmap_keys_make(&k, n, 1);
    const int nwho = IDMAP_NSHAPES + 1;
    static double t[IDMAP_NSHAPES + 1][IDMAP_NWORK][BENCH_PAIR_MAX];
    int status = 0;
    for (int r = 0; r < rounds && status == 0; r++) {
        idmap_result res[IDMAP_NSHAPES + 1];
        for (int turn = 0; turn < nwho; turn++) {
            int who = (r + turn) % nwho;
            pair_run(who, pp->run, &k, &res[who]);
            for (int w = 0; w < IDMAP_NWORK; w++) {
                t[who][w][r] = res[who].ns[w][0] / (double)n;
            }
        }
        for (int who = 0; who < IDMAP_NSHAPES; who++) {
            if (std::memcmp(res[who].sum, res[IDMAP_NSHAPES].sum,
                            sizeof res[0].sum) != 0) {
                std::fprintf(stderr,
                             "bench_idmap_peers: --pair checksums differ\n");
                status = 1;
            }
        }
    }
    if (status == 0) {
        for (int sh = 0; sh < IDMAP_NSHAPES; sh++) {
            static const char *const heads[IDMAP_NSHAPES] = {
                "idmap (random keys), if (get(m, k, &v)) s += v",
                "idmap (random keys), get(m, k, &v); s += v",
                "idmap (random keys), p = find(m, k); if (p) s += *p"};
            bench_pair_head(heads[sh], rounds, n, "ark", name);
            for (int w = 0; w < IDMAP_NWORK; w++) {
                bench_pair_row(idmap_work_names[w], t[sh][w],
                               t[IDMAP_NSHAPES][w], rounds);
            }
        }
    }
    idmap_keys_free(&k);
    return status;
}

} // namespace

int main(int argc, char **argv) {
    if (argc >= 3 && std::strcmp(argv[1], "--pair") == 0) {
        return pair_main(std::atoi(argv[2]),
                         argc >= 4 ? std::strtoull(argv[3], nullptr, 10)
                                   : 1000000,
                         argc >= 5 ? argv[4] : peers[0].name);
    }
    const char *names[3];
    for (int i = 0; i < npeers; i++) {
        names[i] = peers[i].name;
    }
    bench_args a = bench_parse(argc, argv, names, npeers);
    size_t sizes[2];
    int nsizes = idmap_sizes(a.mode, sizes);
    for (int s = 0; s < nsizes; s++) {
        for (int random = 0; random < 2; random++) {
            idmap_keys k;
            idmap_keys_make(&k, sizes[s], random);
            for (int p = 0; p < npeers; p++) {
                if (bench_selected(&a, peers[p].name)) {
                    idmap_result r;
                    int runs = peers[p].run(&a, &k, &r);
                    for (int sh = 0; sh < (random ? IDMAP_NSHAPES : 1); sh++) {
                        idmap_print(peers[p].name, random, k.n, &r, runs, sh);
                    }
                }
            }
            idmap_keys_free(&k);
        }
    }
    return 0;
}
