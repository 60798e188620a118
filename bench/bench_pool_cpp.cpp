/* SPDX-License-Identifier: MIT */
/*
 * bench_pool_cpp.cpp - section `pool_cpp`: the pool workloads through
 * ark.hpp (ark::pool<elem>, impl ark_hpp) and through the C API (ark_pool
 * with ark_pool_insert / get / iter / remove, impl c_api), in ONE process,
 * interleaved: every round runs each workload on both, the order rotating
 * between rounds, so a load change on a shared machine hits both. The
 * report's ratio ark_hpp / c_api is the wrapper's overhead (target: at
 * most 1.03; the row for bench/targets.csv is in docs/cpp.md).
 *
 * Element, checksums, permutation and sizes are those of bench_pool.c
 * (pool_recipe.h); n is the s000 size of the mode. Workloads, per round:
 *   insert         insert ids 0..n-1 (ns/op)
 *   iterate        range-for over every element, sum of x bits (ns/elem)
 *   get_seq        get(H[i]) in insertion order (ns/op)
 *   get_random     get(K[k]), K = H in perm order, built untimed (ns/op)
 *   remove_random  remove(K[k]) for every k (ns/op)
 *   churn_frame    bench_pool.c's churn frames at live = churn[1], frame
 *                  and iteration together (us/frame)
 * Both pools exist at once; every workload runs on one then the other
 * (the order rotating per round), and the read-only ones (iterate, get)
 * three times alternately, keeping the fastest pass. Each row's value is
 * the median over the rounds (5; 1 in smoke mode) of those passes.
 *
 * --list-impls prints one name, "paired": both implementations always run
 * together (run.sh calls one process per listed name).
 *
 * --callgrind N: insert N elements, then run only the get_random loop
 * and one iteration, per implementation, each in its own noinline
 * function (get_loop<c_api>, get_loop<hpp>, c_api::sum, hpp::sum), for
 * `valgrind --tool=callgrind` instruction counts (docs/cpp.md).
 */
#include "pool_recipe.h"

#include "ark/ark.hpp"

#include <type_traits>
#include <vector>

namespace {

/* ---- the two implementations, same interface ---- */

struct c_api {
    static constexpr const char *name = "c_api";
    using handle = ark_handle;
    ark_pool *p = nullptr;
    c_api() {
        ark_pool_config cfg{};
        cfg.elem_size = sizeof(elem);
        cfg.elem_align = alignof(elem);
        if (ark_pool_create(&p, &cfg) != ARK_OK) {
            fprintf(stderr, "bench_pool_cpp: ark_pool_create failed\n");
            exit(1);
        }
    }
    ~c_api() { ark_pool_destroy(p); }
    c_api(const c_api &) = delete;
    c_api &operator=(const c_api &) = delete;
    handle insert(uint64_t id) {
        elem e = elem_make(id);
        ark_handle h;
        if (ark_pool_insert(p, &e, &h) != ARK_OK) {
            fprintf(stderr, "bench_pool_cpp: ark_pool_insert failed\n");
            exit(1);
        }
        return h;
    }
    const elem *get(handle h) const {
        return static_cast<const elem *>(ark_pool_get(p, h));
    }
    void remove(handle h) { ark_pool_remove(p, h); }
    size_t count() const { return ark_pool_count(p); }
    __attribute__((noinline)) uint64_t sum() const {
        uint64_t s = 0;
        for (ark_pool_iter it = ark_pool_iter_begin(p);
             ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
            s += xbits(static_cast<const elem *>(it.elem));
        }
        return s;
    }
};

struct hpp {
    static constexpr const char *name = "ark_hpp";
    using handle = ark::handle<elem>;
    ark::pool<elem> p;
    hpp() {
        if (!p) {
            fprintf(stderr, "bench_pool_cpp: ark::pool failed\n");
            exit(1);
        }
    }
    handle insert(uint64_t id) {
        handle h = p.insert(elem_make(id));
        if (!h) {
            fprintf(stderr, "bench_pool_cpp: ark::pool::insert failed\n");
            exit(1);
        }
        return h;
    }
    const elem *get(handle h) const { return p.get(h); }
    void remove(handle h) { p.remove(h); }
    size_t count() const { return p.size(); }
    __attribute__((noinline)) uint64_t sum() const {
        uint64_t s = 0;
        for (const elem &e : p) {
            s += xbits(&e);
        }
        return s;
    }
};

enum { W_INSERT, W_ITERATE, W_GET_SEQ, W_GET_RANDOM, W_REMOVE, W_CHURN, NW };
const char *const wnames[NW] = {"insert",     "iterate",       "get_seq",
                                "get_random", "remove_random", "churn_frame"};

struct results {
    double t[NW][16];
    uint64_t check[NW];
};

template <class C, class H>
__attribute__((noinline)) uint64_t get_loop(const C &c, const H *keys,
                                            size_t n) {
    uint64_t sum = 0;
    for (size_t k = 0; k < n; k++) {
        const elem *e = c.get(keys[k]);
        if (e != nullptr) {
            sum += xbits(e);
        }
    }
    return sum;
}

/* One implementation's pool, handles and probe keys during a round. */
template <class C> struct side {
    using H = typename C::handle;
    C *c = nullptr;
    std::vector<H> h, keys;
    results *res;
};

/* Time one pass of fn over side s; keep the round's minimum (the pass
 * least disturbed by other processes) in res->t[w][r]. */
template <class S, class F> void timed(S &s, int w, int r, F fn) {
    uint64_t t0 = bench_now_ns();
    uint64_t check = fn(s);
    double v = (double)(bench_now_ns() - t0);
    double &slot = s.res->t[w][r];
    if (slot == 0 || v < slot) {
        slot = v;
    }
    s.res->check[w] = check;
}

/* Run fn on both sides, the order rotating with the round. */
template <class F> void both(int r, side<c_api> &a, side<hpp> &b, F fn) {
    if (r % 2 == 0) {
        fn(a);
        fn(b);
    } else {
        fn(b);
        fn(a);
    }
}

template <class S> uint64_t churn_run(S &s, const bench_args *a) {
    using C = std::remove_pointer_t<decltype(s.c)>;
    using H = typename C::handle;
    size_t live = sizes_for(a->mode).churn[1];
    size_t m = live / 10;
    int frames = sizes_for(a->mode).frames;
    std::vector<H> ch(live);
    C *c = new C();
    uint64_t st = BENCH_SEED, next = live, check = 0;
    for (size_t i = 0; i < live; i++) {
        ch[i] = c->insert(i);
    }
    for (int f = 0; f < frames; f++) {
        for (size_t k = 0; k < m; k++) {
            size_t j = (size_t)(bench_rand(&st) % (live - k));
            c->remove(ch[j]);
            ch[j] = ch[live - k - 1];
        }
        for (size_t k = 0; k < m; k++) {
            ch[live - m + k] = c->insert(next++);
        }
        check += c->sum();
    }
    delete c;
    return check;
}

/* One round: every workload on both implementations, interleaved. The
 * read-only workloads (iterate, get) run 3 times each, alternating, and
 * keep their fastest pass. */
void one_round(const bench_args *a, size_t n, const uint32_t *perm, results *rc,
               results *rh, int r) {
    side<c_api> sa;
    side<hpp> sb;
    sa.res = rc;
    sb.res = rh;
    auto setup = [&](auto &s) {
        using C = std::remove_pointer_t<decltype(s.c)>;
        s.c = new C();
        s.h.resize(n);
        s.keys.resize(n);
    };
    both(r, sa, sb, setup);
    both(r, sa, sb, [&](auto &s) {
        timed(s, W_INSERT, r, [n](auto &x) -> uint64_t {
            for (size_t i = 0; i < n; i++) {
                x.h[i] = x.c->insert(i);
            }
            return x.c->count();
        });
        for (size_t k = 0; k < n; k++) {
            s.keys[k] = s.h[perm[k]];
        }
    });
    for (int rep = 0; rep < 3; rep++) {
        both(r, sa, sb, [&](auto &s) {
            timed(s, W_ITERATE, r, [](auto &x) { return x.c->sum(); });
        });
        both(r, sa, sb, [&](auto &s) {
            timed(s, W_GET_SEQ, r,
                  [n](auto &x) { return get_loop(*x.c, x.h.data(), n); });
        });
        both(r, sa, sb, [&](auto &s) {
            timed(s, W_GET_RANDOM, r,
                  [n](auto &x) { return get_loop(*x.c, x.keys.data(), n); });
        });
    }
    both(r, sa, sb, [&](auto &s) {
        timed(s, W_REMOVE, r, [n](auto &x) -> uint64_t {
            size_t before = x.c->count();
            for (size_t k = 0; k < n; k++) {
                x.c->remove(x.keys[k]);
            }
            return before - x.c->count();
        });
        delete s.c;
        s.c = nullptr;
    });
    both(r, sa, sb, [&](auto &s) {
        timed(s, W_CHURN, r, [a](auto &x) { return churn_run(x, a); });
    });
    for (int w = 0; w < NW; w++) {
        double per =
            w == W_CHURN ? 1000.0 * sizes_for(a->mode).frames : (double)n;
        rc->t[w][r] /= per;
        rh->t[w][r] /= per;
    }
}

template <class C, class H>
__attribute__((noinline)) void insert_loop(C &c, H *h, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h[i] = c.insert(i);
    }
}

template <class C, class H>
__attribute__((noinline)) void remove_loop(C &c, const H *keys, size_t n) {
    for (size_t k = 0; k < n; k++) {
        c.remove(keys[k]);
    }
}

/* Callgrind mode: insert, get_random, iterate and remove once per
 * implementation, each loop in its own noinline function, so callgrind
 * counts each loop's instructions per implementation. */
template <class C> uint64_t callgrind_one(size_t n, const uint32_t *perm) {
    using H = typename C::handle;
    std::vector<H> h(n), keys(n);
    C c;
    insert_loop(c, h.data(), n);
    for (size_t k = 0; k < n; k++) {
        keys[k] = h[perm[k]];
    }
    uint64_t s = get_loop(c, keys.data(), n) + c.sum();
    remove_loop(c, keys.data(), n);
    return s + c.count();
}

} // namespace

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--callgrind") == 0) {
        size_t n = (size_t)strtoull(argv[2], nullptr, 10);
        uint32_t *perm = perm_make(n);
        uint64_t a = callgrind_one<c_api>(n, perm);
        uint64_t b = callgrind_one<hpp>(n, perm);
        free(perm);
        printf("checksums %llu %llu\n", (unsigned long long)a,
               (unsigned long long)b);
        return a == b ? 0 : 1;
    }
    static const char *const impls[] = {"paired"};
    bench_args args = bench_parse(argc, argv, impls, 1);
    if (!bench_selected(&args, "paired")) {
        return 0;
    }
    size_t n = sizes_for(args.mode).s000;
    uint32_t *perm = perm_make(n);
    int rounds = args.mode == BENCH_SMOKE ? 1 : 5;
    results rc{}, rh{};
    peak_reset();
    for (int r = 0; r < rounds; r++) {
        one_round(&args, n, perm, &rc, &rh, r);
    }
    int fail = 0;
    for (int w = 0; w < NW; w++) {
        size_t wn = w == W_CHURN ? sizes_for(args.mode).churn[1] : n;
        const char *unit = w == W_CHURN ? "us/frame" : "ns/op";
        bench_row("pool_cpp", wnames[w], wn, c_api::name, rc.t[w], rounds, unit,
                  rc.check[w]);
        bench_row("pool_cpp", wnames[w], wn, hpp::name, rh.t[w], rounds, unit,
                  rh.check[w]);
        if (rc.check[w] != rh.check[w]) {
            fprintf(stderr, "bench_pool_cpp: %s checksums differ\n", wnames[w]);
            fail = 1;
        }
    }
    free(perm);
    return fail;
}
