/* SPDX-License-Identifier: MIT */
/*
 * idset_peers.c - CRoaring and Judy1 on the idset workloads of
 * idset_bench.h, with the same op streams, seed and checksums as
 * bench_idset.c (whose flat array is the baseline of every ratio).
 * Built by bench/idset.cmake only when both libraries are installed.
 *
 * CRoaring: at = select, lower_bound = rank(id - 1), batch removal =
 * remove_many; memory is the glibc heap delta (mallinfo2), measured after
 * run_optimize + shrink_to_fit, since size_in_bytes is the serialized size.
 * Judy1: at = J1BC (1-based Nth), lower_bound = J1C over [0, id - 1],
 * memory = J1MU; Word_t is unsigned long, so ids are widened.
 */
#define _GNU_SOURCE /* clock_gettime, mallinfo2 */
#include "idset_bench.h"

#include <Judy.h>
#include <roaring/roaring.h>

/* ---- CRoaring -------------------------------------------------------------
 */

static void *ro_create(void) { return roaring_bitmap_create(); }
static void ro_destroy(void *s) { roaring_bitmap_free(s); }
static int ro_insert(void *s, uint32_t id) {
    return !roaring_bitmap_add_checked(s, id);
}
static int ro_remove(void *s, uint32_t id) {
    return !roaring_bitmap_remove_checked(s, id);
}
static inline uint32_t ro_at(const void *s, size_t pos) {
    uint32_t v = 0;
    roaring_bitmap_select(s, (uint32_t)pos, &v);
    return v;
}
static uint32_t ro_remove_at(void *s, size_t pos) {
    uint32_t v = ro_at(s, pos);
    roaring_bitmap_remove(s, v);
    return v;
}
static void ro_remove_sorted(void *s, const uint32_t *ids, size_t n) {
    roaring_bitmap_remove_many(s, n, ids);
}
static inline size_t ro_lb(const void *s, uint32_t id) {
    return id == 0 ? 0 : (size_t)roaring_bitmap_rank(s, id - 1);
}
static inline size_t ro_find(const void *s, uint32_t id) {
    return roaring_bitmap_contains(s, id)
               ? (size_t)roaring_bitmap_rank(s, id) - 1
               : (size_t)-1;
}
static size_t ro_count(const void *s) {
    return (size_t)roaring_bitmap_get_cardinality(s);
}
static uint64_t ro_sum(const void *s) {
    roaring_uint32_iterator_t it;
    roaring_init_iterator(s, &it);
    uint32_t buf[256];
    uint64_t sum = 0;
    uint32_t got;
    while ((got = roaring_read_uint32_iterator(&it, buf, 256)) > 0) {
        for (uint32_t i = 0; i < got; i++) {
            sum += buf[i];
        }
    }
    return sum;
}
/* The result replaces nothing in place: CRoaring returns a new bitmap,
 * freed here (ark frees out's old contents the same way). */
static size_t ro_algebra(int op, void *out, const void *a, const void *b) {
    (void)out;
    if (op == IDSET_AND_COUNT) {
        return (size_t)roaring_bitmap_and_cardinality(a, b);
    }
    roaring_bitmap_t *r = op == IDSET_AND  ? roaring_bitmap_and(a, b)
                          : op == IDSET_OR ? roaring_bitmap_or(a, b)
                                           : roaring_bitmap_andnot(a, b);
    size_t n = (size_t)roaring_bitmap_get_cardinality(r);
    roaring_bitmap_free(r);
    return n;
}
static void ro_shrink(void *s) {
    roaring_bitmap_run_optimize(s);
    roaring_bitmap_shrink_to_fit(s);
}

static const idset_impl ro_impl = {
    .name = "croaring",
    .create = ro_create,
    .destroy = ro_destroy,
    .insert = ro_insert,
    .remove = ro_remove,
    .remove_at = ro_remove_at,
    .remove_sorted = ro_remove_sorted,
    .at = ro_at,
    .lower_bound = ro_lb,
    .find = ro_find,
    .count = ro_count,
    .sum = ro_sum,
    .shrink = ro_shrink,
    .algebra = ro_algebra,
    /* select and rank walk the containers and popcount bitmaps: 0.4-1.2 us
     * per call at 16K-64K; capped to keep full mode short */
    .at_limit = 4096,
    .at_limit_sparse = 1024,
};
IDSET_KERNELS(ro, ro_impl);

/* ---- Judy1 ----------------------------------------------------------------
 */

typedef struct judy {
    Pvoid_t j;
} judy;

static void *ju_create(void) { return calloc(1, sizeof(judy)); }
static void ju_destroy(void *s) {
    /* Judy1FreeArray directly: the J1FA macro compares Word_t with int */
    Judy1FreeArray(&((judy *)s)->j, PJE0);
    free(s);
}
static int ju_insert(void *s, uint32_t id) {
    int rc;
    J1S(rc, ((judy *)s)->j, (Word_t)id);
    return !rc;
}
static int ju_remove(void *s, uint32_t id) {
    int rc;
    J1U(rc, ((judy *)s)->j, (Word_t)id);
    return !rc;
}
static inline uint32_t ju_at(const void *s, size_t pos) {
    int rc;
    Word_t idx = 0;
    J1BC(rc, ((const judy *)s)->j, (Word_t)pos + 1, idx);
    (void)rc;
    return (uint32_t)idx;
}
static uint32_t ju_remove_at(void *s, size_t pos) {
    uint32_t v = ju_at(s, pos);
    ju_remove(s, v);
    return v;
}
static void ju_remove_sorted(void *s, const uint32_t *ids, size_t n) {
    for (size_t i = 0; i < n; i++) {
        ju_remove(s, ids[i]);
    }
}
static inline size_t ju_lb(const void *s, uint32_t id) {
    Word_t c = 0;
    if (id > 0) {
        J1C(c, ((const judy *)s)->j, 0, (Word_t)id - 1);
    }
    return (size_t)c;
}
static inline size_t ju_find(const void *s, uint32_t id) {
    int rc;
    J1T(rc, ((const judy *)s)->j, (Word_t)id);
    return rc ? ju_lb(s, id) : (size_t)-1;
}
static size_t ju_count(const void *s) {
    Word_t c;
    J1C(c, ((const judy *)s)->j, 0, -1);
    return (size_t)c;
}
static uint64_t ju_sum(const void *s) {
    Word_t idx = 0;
    int rc;
    uint64_t sum = 0;
    J1F(rc, ((const judy *)s)->j, idx);
    while (rc) {
        sum += idx;
        J1N(rc, ((const judy *)s)->j, idx);
    }
    return sum;
}
static size_t ju_memory(const void *s) {
    Word_t bytes;
    J1MU(bytes, ((const judy *)s)->j);
    return sizeof(judy) + (size_t)bytes;
}

static const idset_impl ju_impl = {
    .name = "judy",
    .create = ju_create,
    .destroy = ju_destroy,
    .insert = ju_insert,
    .remove = ju_remove,
    .remove_at = ju_remove_at,
    .remove_sorted = ju_remove_sorted,
    .at = ju_at,
    .lower_bound = ju_lb,
    .find = ju_find,
    .count = ju_count,
    .sum = ju_sum,
    .memory = ju_memory,
    /* J1BC and J1C cost 0.4-1 us at 16K+: cap to keep full mode short */
    .at_limit = 4096,
    .at_limit_sparse = 4096,
};
IDSET_KERNELS(ju, ju_impl);

int main(int argc, char **argv) {
    static const idset_entry impls[] = {{&ro_impl, &ro_kernels},
                                        {&ju_impl, &ju_kernels}};
    return idset_bench_main(argc, argv, impls, 2);
}
