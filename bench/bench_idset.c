/* SPDX-License-Identifier: MIT */
/*
 * bench_idset.c - ark_idset against a flat sorted uint32 array, in the same
 * run, on the workloads B1-B10 of shared/idset-notes.md (idset_bench.h).
 * CRoaring and Judy run in idset_peers.c (bench/idset.cmake).
 *
 * The flat array is the baseline every target is a ratio of: a sorted
 * uint32 vector with a branchless binary search written here, memmove for
 * insert and remove, and one merge-compaction pass for a sorted batch. Its
 * set algebra is std::set_intersection, set_union and set_difference
 * (idset_std.cpp, when a C++ compiler is found).
 */
#define _GNU_SOURCE /* clock_gettime, posix_memalign, mallinfo2 */
#include "ark/idset.h"
#include "idset_bench.h"

/* ---- ark ------------------------------------------------------------------
 */

typedef struct counted {
    ark_allocator a;
    size_t allocs;
} counted;

static void *counted_alloc(void *ctx, size_t size, size_t align) {
    counted *c = ctx;
    c->allocs++;
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    void *p = NULL;
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

static void counted_free(void *ctx, void *p, size_t size) {
    (void)ctx;
    (void)size;
    free(p);
}

typedef struct ark_box {
    ark_idset *s;
    counted c;
} ark_box;

static void *ark_create(void) {
    ark_box *b = malloc(sizeof(*b));
    b->c.allocs = 0;
    b->c.a.alloc = counted_alloc;
    b->c.a.free = counted_free;
    b->c.a.ctx = &b->c;
    if (ark_idset_create(&b->s, &b->c.a) != ARK_OK) {
        abort();
    }
    return b;
}
static void ark_destroy(void *s) {
    ark_idset_destroy(((ark_box *)s)->s);
    free(s);
}
static int ark_insert(void *s, uint32_t id) {
    return ark_idset_insert(((ark_box *)s)->s, id) != ARK_OK;
}
static int ark_remove(void *s, uint32_t id) {
    return ark_idset_remove(((ark_box *)s)->s, id) != ARK_OK;
}
static uint32_t ark_remove_at(void *s, size_t pos) {
    ark_idset *x = ((ark_box *)s)->s;
    uint32_t id = ark_idset_at(x, pos);
    ark_idset_remove_at(x, pos);
    return id;
}
static void ark_remove_sorted(void *s, const uint32_t *ids, size_t n) {
    ark_idset_remove_sorted(((ark_box *)s)->s, ids, n);
}
/* The query wrappers are always inlined into the kernels, as a user's loop
 * calling ark_idset_* directly gets them (the flat side's are small enough
 * for gcc to inline on its own; ark's lower_bound is not). */
ALWAYS_INLINE uint32_t ark_at(const void *s, size_t pos) {
    return ark_idset_at(*(ark_idset *const *)s, pos);
}
ALWAYS_INLINE size_t ark_lb(const void *s, uint32_t id) {
    return ark_idset_lower_bound(*(ark_idset *const *)s, id);
}
ALWAYS_INLINE size_t ark_find(const void *s, uint32_t id) {
    return ark_idset_find(*(ark_idset *const *)s, id);
}
static size_t ark_count(const void *s) {
    return ark_idset_count(((const ark_box *)s)->s);
}
static uint64_t ark_sum(const void *s) {
    const ark_idset *x = ((const ark_box *)s)->s;
    uint32_t buf[256];
    uint64_t sum = 0;
    size_t n = ark_idset_count(x);
    for (size_t p = 0; p < n; p += 256) {
        size_t got = ark_idset_copy(x, p, buf, 256);
        for (size_t i = 0; i < got; i++) {
            sum += buf[i];
        }
    }
    return sum;
}
static size_t ark_memory(const void *s) {
    return ark_idset_memory(((const ark_box *)s)->s);
}
static size_t ark_allocs(const void *s) {
    return ((const ark_box *)s)->c.allocs;
}
static size_t ark_algebra(int op, void *out, const void *a, const void *b) {
    ark_idset *o = ((ark_box *)out)->s;
    const ark_idset *x = ((const ark_box *)a)->s, *y = ((const ark_box *)b)->s;
    ark_status st = op == IDSET_AND      ? ark_idset_intersect(o, x, y)
                    : op == IDSET_OR     ? ark_idset_union(o, x, y)
                    : op == IDSET_ANDNOT ? ark_idset_difference(o, x, y)
                                         : ARK_OK;
    if (st != ARK_OK) {
        abort();
    }
    return op == IDSET_AND_COUNT ? ark_idset_intersect_count(x, y)
                                 : ark_idset_count(o);
}

static const idset_impl ark_impl = {
    .name = "ark",
    .create = ark_create,
    .destroy = ark_destroy,
    .insert = ark_insert,
    .remove = ark_remove,
    .remove_at = ark_remove_at,
    .remove_sorted = ark_remove_sorted,
    .at = ark_at,
    .lower_bound = ark_lb,
    .find = ark_find,
    .count = ark_count,
    .sum = ark_sum,
    .memory = ark_memory,
    .allocs = ark_allocs,
    .algebra = ark_algebra,
};
IDSET_KERNELS(ark, ark_impl);

/* ---- flat -----------------------------------------------------------------
 */

typedef struct flat {
    uint32_t *v;
    size_t n, cap, allocs;
} flat;

static void *flat_create(void) { return calloc(1, sizeof(flat)); }
static void flat_destroy(void *s) {
    free(((flat *)s)->v);
    free(s);
}
/* Branchless lower bound: the baseline search. */
static inline size_t flat_lb(const void *s, uint32_t id) {
    const flat *f = s;
    if (f->n == 0) {
        return 0;
    }
    const uint32_t *b = f->v;
    size_t n = f->n;
    while (n > 1) {
        size_t half = n >> 1;
        b = b[half] < id ? b + half : b;
        n -= half;
    }
    return (size_t)(b - f->v) + (*b < id);
}
static inline uint32_t flat_at(const void *s, size_t pos) {
    return ((const flat *)s)->v[pos];
}
static inline size_t flat_find(const void *s, uint32_t id) {
    const flat *f = s;
    size_t p = flat_lb(s, id);
    return p < f->n && f->v[p] == id ? p : (size_t)-1;
}
static void flat_grow(flat *f) {
    f->cap = f->cap ? f->cap * 2 : 16;
    uint32_t *v = realloc(f->v, f->cap * sizeof(uint32_t));
    if (v == NULL) {
        abort();
    }
    f->v = v;
    f->allocs++;
}
static int flat_insert(void *s, uint32_t id) {
    flat *f = s;
    if (f->n > 0 && id > f->v[f->n - 1]) { /* append */
        if (f->n == f->cap) {
            flat_grow(f);
        }
        f->v[f->n++] = id;
        return 0;
    }
    size_t p = flat_lb(s, id);
    if (p < f->n && f->v[p] == id) {
        return 1;
    }
    if (f->n == f->cap) {
        flat_grow(f);
    }
    memmove(f->v + p + 1, f->v + p, (f->n - p) * sizeof(uint32_t));
    f->v[p] = id;
    f->n++;
    return 0;
}
static uint32_t flat_remove_at(void *s, size_t p) {
    flat *f = s;
    uint32_t id = f->v[p];
    memmove(f->v + p, f->v + p + 1, (f->n - p - 1) * sizeof(uint32_t));
    f->n--;
    return id;
}
static int flat_remove(void *s, uint32_t id) {
    size_t p = flat_find(s, id);
    if (p == (size_t)-1) {
        return 1;
    }
    flat_remove_at(s, p);
    return 0;
}
/* One merge-compaction pass from the first removed id. */
static void flat_remove_sorted(void *s, const uint32_t *ids, size_t n) {
    flat *f = s;
    if (n == 0) {
        return;
    }
    size_t w = flat_lb(s, ids[0]), b = 0;
    for (size_t r = w; r < f->n; r++) {
        uint32_t v = f->v[r];
        while (b < n && ids[b] < v) {
            b++;
        }
        if (b < n && ids[b] == v) {
            b++;
            continue;
        }
        f->v[w++] = v;
    }
    f->n = w;
}
static size_t flat_count(const void *s) { return ((const flat *)s)->n; }
static uint64_t flat_sum(const void *s) {
    const flat *f = s;
    uint64_t sum = 0;
    for (size_t i = 0; i < f->n; i++) {
        sum += f->v[i];
    }
    return sum;
}
static size_t flat_memory(const void *s) {
    return sizeof(flat) + ((const flat *)s)->cap * sizeof(uint32_t);
}
static size_t flat_allocs(const void *s) { return ((const flat *)s)->allocs; }
#ifdef ARK_BENCH_HAVE_STD
/* std::set_intersection / set_union / set_difference (idset_std.cpp). */
size_t ark_bench_std_merge(int op, const uint32_t *a, size_t na,
                           const uint32_t *b, size_t nb, uint32_t *out);
/* The flat arrays' set algebra: the STL algorithms into out's buffer
 * (grown once, outside the measured steady state). */
static size_t flat_algebra(int op, void *out, const void *a, const void *b) {
    flat *o = out;
    const flat *x = a, *y = b;
    while (o->cap < x->n + y->n) {
        flat_grow(o);
    }
    o->n = ark_bench_std_merge(op, x->v, x->n, y->v, y->n, o->v);
    return o->n;
}
#endif

static const idset_impl flat_impl = {
    .name = "flat",
    .create = flat_create,
    .destroy = flat_destroy,
    .insert = flat_insert,
    .remove = flat_remove,
    .remove_at = flat_remove_at,
    .remove_sorted = flat_remove_sorted,
    .at = flat_at,
    .lower_bound = flat_lb,
    .find = flat_find,
    .count = flat_count,
    .sum = flat_sum,
    .memory = flat_memory,
    .allocs = flat_allocs,
#ifdef ARK_BENCH_HAVE_STD
    .algebra = flat_algebra,
#endif
};
IDSET_KERNELS(flat, flat_impl);

int main(int argc, char **argv) {
    static const idset_entry impls[] = {{&ark_impl, &ark_kernels},
                                        {&flat_impl, &flat_kernels}};
    if (argc >= 2 && strcmp(argv[1], "--pair") == 0) {
        return idset_pair_main(impls, argc >= 3 ? atoi(argv[2]) : 11);
    }
    return idset_bench_main(argc, argv, impls, 2);
}
