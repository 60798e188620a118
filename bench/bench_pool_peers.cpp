/* SPDX-License-Identifier: MIT */
/*
 * bench_pool_peers.cpp - section `pool`, C++ peers of ark_pool: the same
 * workloads, PRNG, seed and operation order as bench_pool.c (read its
 * header comment for the recipe; the code is bench/pool_workloads.h,
 * shared with bench_pool.c), so the checksums agree.
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

/* ---- workloads: bench/pool_workloads.h, once per container type ---- */

#define PW_DEL(c) delete (c)
#define PW_PUT(c, id) (c)->insert(id)
#define PW_GET(c, h) (c)->get(h)
#define PW_REMOVE(c, h) (c)->remove(h)
#define PW_COUNT(c) (c)->count()
#define PW_SUM(c) (c)->sum()

using umap = map_adapter<std::unordered_map<uint64_t, elem>>;
#ifdef ARK_BENCH_HAVE_ABSL
using amap = map_adapter<absl::flat_hash_map<uint64_t, elem>>;
#endif

#define PW_H umap::handle
#define PW_C umap
#define PW_NEW(rsv, st) new umap(rsv)
#define PW_IMPL "unordered_map"
#define PW_FN(x) um_##x
#define PW_RESERVE 0
#include "pool_workloads.h"
#undef PW_IMPL
#undef PW_FN
#undef PW_RESERVE
#define PW_IMPL "unordered_map_reserve"
#define PW_FN(x) umr_##x
#define PW_RESERVE 1
#include "pool_workloads.h"
#undef PW_IMPL
#undef PW_FN
#undef PW_RESERVE
#undef PW_C
#undef PW_H
#undef PW_NEW
#define PW_RESERVE 0

#ifdef ARK_BENCH_HAVE_ABSL
#define PW_H amap::handle
#define PW_C amap
#define PW_NEW(rsv, st) new amap(rsv)
#define PW_IMPL "absl_flat_hash_map"
#define PW_FN(x) absl_##x
#include "pool_workloads.h"
#undef PW_IMPL
#undef PW_FN
#undef PW_C
#undef PW_H
#undef PW_NEW
#endif

#ifdef ARK_BENCH_HAVE_COLONY
#define PW_H colony_adapter::handle
#define PW_C colony_adapter
#define PW_NEW(rsv, st) new colony_adapter(rsv, st)
#define PW_IMPL "plf_colony"
#define PW_FN(x) colony_##x
#include "pool_workloads.h"
#undef PW_IMPL
#undef PW_FN
#undef PW_C
#undef PW_H
#undef PW_NEW
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
        um_run_all(&args);
    }
    if (bench_selected(&args, "unordered_map_reserve")) {
        umr_run_all(&args);
    }
#ifdef ARK_BENCH_HAVE_ABSL
    if (bench_selected(&args, "absl_flat_hash_map")) {
        absl_run_all(&args);
    }
#endif
#ifdef ARK_BENCH_HAVE_COLONY
    if (bench_selected(&args, "plf_colony")) {
        colony_run_all(&args);
    }
#endif
    return 0;
}
