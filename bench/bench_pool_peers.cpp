/*
 * bench_pool_peers.cpp - section `pool`, C++ peers of ark_pool: the same
 * workloads, PRNG, seed and operation order as bench_pool.c (read its
 * header comment for the recipe), so the checksums agree.
 *
 * Implementations (each only when its Debian package was found):
 *   unordered_map          std::unordered_map<uint64_t, elem>, key = id
 *   unordered_map_reserve  the same with reserve(n) before inserting
 *   absl_flat_hash_map     absl::flat_hash_map<uint64_t, elem> (libabsl-dev)
 *   plf_colony             plf::colony<elem> (libplf-colony-dev); the
 *                          handle is the colony iterator. A colony has no
 *                          generations: a stale iterator still dereferences
 *                          (to the erased element or to whatever reused its
 *                          slot), so every stale handle counts as accepted.
 * Peer code here is ours, written against the public APIs.
 */
#include "pool_recipe.h"

#include <unordered_map>
#include <vector>

#ifdef ARK_BENCH_HAVE_ABSL
#include <absl/container/flat_hash_map.h>
#endif
#ifdef ARK_BENCH_HAVE_COLONY
#include <plf_colony.h>
#endif

namespace {

/* ---- adapters: insert(id) -> handle, get(handle) -> elem* or null,
 * remove(handle), count(), sum() over every element ---- */

template <class Map> struct map_adapter {
    using handle = uint64_t;
    Map m;
    explicit map_adapter(size_t reserve) {
        if (reserve > 0) {
            m.reserve(reserve);
        }
    }
    handle insert(uint64_t id) {
        m.emplace(id, elem_make(id));
        return id;
    }
    const elem *get(handle h) const {
        auto it = m.find(h);
        return it == m.end() ? nullptr : &it->second;
    }
    void remove(handle h) { m.erase(h); }
    size_t count() const { return m.size(); }
    uint64_t sum() const {
        uint64_t s = 0;
        for (const auto &kv : m) {
            s += xbits(&kv.second);
        }
        return s;
    }
};

#ifdef ARK_BENCH_HAVE_COLONY
struct colony_adapter {
    using handle = plf::colony<elem>::iterator;
    plf::colony<elem> c;
    /* The stale workload keeps blocks of at least 64 elements so that
     * removing half of them at random never frees a whole block under a
     * stale iterator (which would make dereferencing it undefined). */
    explicit colony_adapter(size_t, bool stale = false)
        : c(stale ? plf::colony_limits(64, 8192)
                  : plf::colony<elem>::default_block_capacity_limits()) {}
    handle insert(uint64_t id) { return c.insert(elem_make(id)); }
    const elem *get(handle h) const { return &*h; }
    void remove(handle h) { c.erase(h); }
    size_t count() const { return c.size(); }
    uint64_t sum() const {
        uint64_t s = 0;
        for (const elem &e : c) {
            s += xbits(&e);
        }
        return s;
    }
};
#endif

template <class C> C make_container(size_t reserve, bool stale) {
    (void)stale;
    return C(reserve);
}

#ifdef ARK_BENCH_HAVE_COLONY
template <>
colony_adapter make_container<colony_adapter>(size_t reserve, bool stale) {
    return colony_adapter(reserve, stale);
}
#endif

/* ---- workloads, step for step as in bench_pool.c ---- */

/* perm(n) as a vector (pool_recipe.h's perm_make returns malloc'd memory). */
std::vector<uint32_t> perm_vec(size_t n) {
    uint32_t *p = perm_make(n);
    std::vector<uint32_t> v(p, p + n);
    free(p);
    return v;
}

template <class C>
void stale(const bench_args *a, const char *impl, size_t n, bool rsv) {
    std::vector<uint32_t> perm = perm_vec(n);
    std::vector<typename C::handle> h(n), r(n / 2);
    double t[5];
    uint64_t sum = 0, accepted = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        C *c = new C(make_container<C>(rsv ? n : 0, true));
        for (size_t i = 0; i < n; i++) {
            h[i] = c->insert(i);
        }
        for (size_t k = 0; k < n / 2; k++) {
            r[k] = h[perm[k]];
            c->remove(r[k]);
        }
        for (size_t k = 0; k < n / 2; k++) {
            h[perm[k]] = c->insert(n + k);
        }
        sum = accepted = 0;
        uint64_t t0 = bench_now_ns();
        for (size_t k = 0; k < n / 2; k++) {
            const elem *e = c->get(h[perm[k]]);
            if (e != nullptr) {
                sum += xbits(e);
            }
            e = c->get(r[k]);
            if (e != nullptr) {
                sum += xbits(e);
                accepted++;
            }
        }
        t[run] = (double)(bench_now_ns() - t0) / (double)(n / 2 * 2);
        delete c;
    }
    stale_rows(impl, n, t, run, sum, accepted);
}

template <class C>
void s001(const bench_args *a, const char *impl, size_t n, bool rsv) {
    std::vector<uint32_t> perm = perm_vec(n);
    std::vector<typename C::handle> h(n);
    double ti[5], tg[5];
    uint64_t cnt = 0, sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        C *c = new C(make_container<C>(rsv ? n : 0, false));
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = c->insert(i);
        }
        uint64_t t1 = bench_now_ns();
        cnt = c->count();
        sum = 0;
        for (size_t k = 0; k < n; k++) {
            const elem *e = c->get(h[perm[k]]);
            if (e != nullptr) {
                sum += xbits(e);
            }
        }
        uint64_t t2 = bench_now_ns();
        ti[run] = (double)(t1 - t0) / (double)n;
        tg[run] = (double)(t2 - t1) / (double)n;
        delete c;
    }
    bench_row("pool", "s001_insert", n, impl, ti, run, "ns/op", cnt);
    bench_row("pool", "s001_get_random", n, impl, tg, run, "ns/op", sum);
}

template <class C>
void churn(const bench_args *a, const char *impl, size_t live, bool rsv) {
    std::vector<typename C::handle> h(live);
    double tf[5], tit[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int frames = sizes_for(a->mode).frames, run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        uint64_t st = BENCH_SEED, next = live;
        C *c = new C(make_container<C>(rsv ? live : 0, false));
        for (size_t i = 0; i < live; i++) {
            h[i] = c->insert(i);
        }
        uint64_t frame_ns = 0, iter_ns = 0;
        check = 0;
        for (int f = 0; f < frames; f++) {
            uint64_t t0 = bench_now_ns();
            for (size_t k = 0; k < m; k++) {
                size_t j = (size_t)(bench_rand(&st) % (live - k));
                c->remove(h[j]);
                h[j] = h[live - k - 1];
            }
            for (size_t k = 0; k < m; k++) {
                h[live - m + k] = c->insert(next++);
            }
            uint64_t t1 = bench_now_ns();
            check += c->sum();
            uint64_t t2 = bench_now_ns();
            frame_ns += t2 - t0;
            iter_ns += t2 - t1;
        }
        tf[run] = (double)frame_ns / frames / 1000.0;
        tit[run] = (double)iter_ns / frames / 1000.0;
        delete c;
    }
    churn_rows(impl, live, tf, tit, run, check);
}

template <class C>
void s000(const bench_args *a, const char *impl, size_t n, bool rsv) {
    std::vector<uint32_t> perm = perm_vec(n);
    std::vector<typename C::handle> h(n);
    double t[5][5], mem = 0;
    uint64_t c5[5] = {0, 0, 0, 0, 0}, ts[6];
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        long base = run == 0 ? mem_begin() : 0;
        C *c = new C(make_container<C>(rsv ? n : 0, false));
        ts[0] = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = c->insert(i);
        }
        ts[1] = bench_now_ns();
        if (run == 0) {
            mem = mem_end(base, n);
        }
        c5[0] = c->count();
        c5[1] = c->sum();
        ts[2] = bench_now_ns();
        c5[2] = 0;
        for (size_t i = 0; i < n; i++) {
            const elem *e = c->get(h[i]);
            if (e != nullptr) {
                c5[2] += xbits(e);
            }
        }
        ts[3] = bench_now_ns();
        c5[3] = 0;
        for (size_t k = 0; k < n; k++) {
            const elem *e = c->get(h[perm[k]]);
            if (e != nullptr) {
                c5[3] += xbits(e);
            }
        }
        ts[4] = bench_now_ns();
        size_t before = c->count();
        for (size_t k = 0; k < n; k++) {
            c->remove(h[perm[k]]);
        }
        ts[5] = bench_now_ns();
        c5[4] = before - c->count();
        s000_store(t, run, ts, n);
        delete c;
    }
    s000_rows(impl, n, t, run, c5, mem);
}

template <class C>
void run_all(const bench_args *a, const char *impl, bool rsv) {
    sizes s = sizes_for(a->mode);
    peak_reset();
    stale<C>(a, impl, s.stale, rsv);
    peak_reset();
    s001<C>(a, impl, s.s001, rsv);
    for (int k = 0; k < 2; k++) {
        peak_reset();
        churn<C>(a, impl, s.churn[k], rsv);
    }
    s000<C>(a, impl, s.s000, rsv);
}

using umap = map_adapter<std::unordered_map<uint64_t, elem>>;
#ifdef ARK_BENCH_HAVE_ABSL
using amap = map_adapter<absl::flat_hash_map<uint64_t, elem>>;
#endif

const char *const impls[] = {
    "unordered_map",
    "unordered_map_reserve",
#ifdef ARK_BENCH_HAVE_ABSL
    "absl_flat_hash_map",
#endif
#ifdef ARK_BENCH_HAVE_COLONY
    "plf_colony",
#endif
};

} // namespace

int main(int argc, char **argv) {
    int nimpls = (int)(sizeof impls / sizeof impls[0]);
    bench_args args = bench_parse(argc, argv, impls, nimpls);
    if (bench_selected(&args, "unordered_map")) {
        run_all<umap>(&args, "unordered_map", false);
    }
    if (bench_selected(&args, "unordered_map_reserve")) {
        run_all<umap>(&args, "unordered_map_reserve", true);
    }
#ifdef ARK_BENCH_HAVE_ABSL
    if (bench_selected(&args, "absl_flat_hash_map")) {
        run_all<amap>(&args, "absl_flat_hash_map", false);
    }
#endif
#ifdef ARK_BENCH_HAVE_COLONY
    if (bench_selected(&args, "plf_colony")) {
        run_all<colony_adapter>(&args, "plf_colony", false);
    }
#endif
    return 0;
}
