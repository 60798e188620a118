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
#include "bench_common.h"

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef ARK_BENCH_HAVE_ABSL
#include <absl/container/flat_hash_map.h>
#endif
#ifdef ARK_BENCH_HAVE_COLONY
#include <plf_colony.h>
#endif

namespace {

struct elem {
    float x, y, vx, vy;
};

elem elem_make(uint64_t id) {
    return elem{(float)id, (float)(id + 1), 1.0f, -1.0f};
}

uint64_t xbits(const elem *e) {
    uint32_t b;
    std::memcpy(&b, &e->x, sizeof b);
    return b;
}

struct sizes {
    size_t s000, s001, churn[2], stale;
    int frames;
};

sizes sizes_for(bench_mode m) {
    if (m == BENCH_SMOKE) {
        return sizes{10000, 10000, {1000, 10000}, 10000, 2};
    }
    if (m == BENCH_QUICK) {
        return sizes{1000000, 100000, {10000, 100000}, 100000, 100};
    }
    return sizes{10000000, 1000000, {100000, 1000000}, 1000000, 100};
}

std::vector<uint32_t> perm_make(size_t n) {
    std::vector<uint32_t> a(n);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint32_t)i;
    }
    uint64_t st = BENCH_SEED;
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)(bench_rand(&st) % (uint64_t)(i + 1));
        std::swap(a[i], a[j]);
    }
    return a;
}

long proc_status_kib(const char *key) {
    FILE *f = std::fopen("/proc/self/status", "r");
    if (f == nullptr) {
        return -1;
    }
    char line[256];
    long v = -1;
    size_t k = std::strlen(key);
    while (std::fgets(line, sizeof line, f) != nullptr) {
        if (std::strncmp(line, key, k) == 0 && line[k] == ':') {
            v = std::atol(line + k + 1);
            break;
        }
    }
    std::fclose(f);
    return v;
}

void peak_reset() {
    malloc_trim(0);
    FILE *f = std::fopen("/proc/self/clear_refs", "w");
    if (f != nullptr) {
        std::fputs("5", f);
        std::fclose(f);
    }
}

/* Per-workload time budget, as in bench_pool.c. */
uint64_t budget_ns = 1000000000u;

bool more_runs(int run, int runs, uint64_t start) {
    return run < runs && (run == 0 || bench_now_ns() - start < budget_ns);
}

double per(uint64_t t0, uint64_t t1, double n) { return (double)(t1 - t0) / n; }

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

template <class C> void stale(const char *impl, size_t n, int runs, bool rsv) {
    std::vector<uint32_t> perm = perm_make(n);
    std::vector<typename C::handle> h(n), r(n / 2);
    double t[5];
    uint64_t sum = 0, accepted = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
        t[run] = per(t0, bench_now_ns(), (double)(n / 2 * 2));
        delete c;
    }
    bench_row("pool", "stale_get", n, impl, t, run, "ns/op", sum);
    double a[1] = {(double)accepted};
    bench_row("pool", "stale_accepted", n / 2, impl, a, 1, "handles", n / 2);
}

template <class C> void s001(const char *impl, size_t n, int runs, bool rsv) {
    std::vector<uint32_t> perm = perm_make(n);
    std::vector<typename C::handle> h(n);
    double ti[5], tg[5];
    uint64_t cnt = 0, sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
        ti[run] = per(t0, t1, (double)n);
        tg[run] = per(t1, t2, (double)n);
        delete c;
    }
    bench_row("pool", "s001_insert", n, impl, ti, run, "ns/op", cnt);
    bench_row("pool", "s001_get_random", n, impl, tg, run, "ns/op", sum);
}

template <class C>
void churn(const char *impl, size_t live, int frames, int runs, bool rsv) {
    std::vector<typename C::handle> h(live);
    double tf[5], tit[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
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
    bench_row("pool", "churn_frame", live, impl, tf, run, "us/frame", check);
    bench_row("pool", "churn_iterate", live, impl, tit, run, "us/frame", check);
}

template <class C> void s000(const char *impl, size_t n, int runs, bool rsv) {
    std::vector<uint32_t> perm = perm_make(n);
    std::vector<typename C::handle> h(n);
    double t[5][5], mem = 0;
    uint64_t c5[5] = {0, 0, 0, 0, 0};
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(run, runs, start); run++) {
        long base = 0;
        if (run == 0) {
            peak_reset();
            base = proc_status_kib("VmRSS");
        }
        C *c = new C(make_container<C>(rsv ? n : 0, false));
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = c->insert(i);
        }
        uint64_t t1 = bench_now_ns();
        if (run == 0) {
            mem =
                (double)(proc_status_kib("VmHWM") - base) * 1024.0 / (double)n;
        }
        c5[0] = c->count();
        c5[1] = c->sum();
        uint64_t t2 = bench_now_ns();
        c5[2] = 0;
        for (size_t i = 0; i < n; i++) {
            const elem *e = c->get(h[i]);
            if (e != nullptr) {
                c5[2] += xbits(e);
            }
        }
        uint64_t t3 = bench_now_ns();
        c5[3] = 0;
        for (size_t k = 0; k < n; k++) {
            const elem *e = c->get(h[perm[k]]);
            if (e != nullptr) {
                c5[3] += xbits(e);
            }
        }
        uint64_t t4 = bench_now_ns();
        size_t before = c->count();
        for (size_t k = 0; k < n; k++) {
            c->remove(h[perm[k]]);
        }
        uint64_t t5 = bench_now_ns();
        c5[4] = before - c->count();
        t[0][run] = per(t0, t1, (double)n);
        t[1][run] = per(t1, t2, (double)n);
        t[2][run] = per(t2, t3, (double)n);
        t[3][run] = per(t3, t4, (double)n);
        t[4][run] = per(t4, t5, (double)n);
        delete c;
    }
    bench_row("pool", "s000_insert", n, impl, t[0], run, "ns/op", c5[0]);
    bench_row("pool", "s000_iterate", n, impl, t[1], run, "ns/op", c5[1]);
    bench_row("pool", "s000_get_seq", n, impl, t[2], run, "ns/op", c5[2]);
    bench_row("pool", "s000_get_random", n, impl, t[3], run, "ns/op", c5[3]);
    bench_row("pool", "s000_remove_random", n, impl, t[4], run, "ns/op", c5[4]);
    bench_row("pool", "s000_memory", n, impl, &mem, 1, "B/elem", n);
}

template <class C>
void run_all(const char *impl, const sizes &s, int runs, bool rsv) {
    peak_reset();
    stale<C>(impl, s.stale, runs, rsv);
    peak_reset();
    s001<C>(impl, s.s001, runs, rsv);
    for (int k = 0; k < 2; k++) {
        peak_reset();
        churn<C>(impl, s.churn[k], s.frames, runs, rsv);
    }
    s000<C>(impl, s.s000, runs, rsv);
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
    sizes s = sizes_for(args.mode);
    budget_ns = args.mode == BENCH_FULL ? 8000000000u : 1000000000u;
    if (bench_selected(&args, "unordered_map")) {
        run_all<umap>("unordered_map", s, args.runs, false);
    }
    if (bench_selected(&args, "unordered_map_reserve")) {
        run_all<umap>("unordered_map_reserve", s, args.runs, true);
    }
#ifdef ARK_BENCH_HAVE_ABSL
    if (bench_selected(&args, "absl_flat_hash_map")) {
        run_all<amap>("absl_flat_hash_map", s, args.runs, false);
    }
#endif
#ifdef ARK_BENCH_HAVE_COLONY
    if (bench_selected(&args, "plf_colony")) {
        run_all<colony_adapter>("plf_colony", s, args.runs, false);
    }
#endif
    return 0;
}
