/* SPDX-License-Identifier: MIT */
/*
 * pool_parts.h - `bench_pool --parts ROUNDS [N]`: where a removal's time
 * goes. Included by bench_pool.c after ark_new, ark_put, sa_new, sa_put and
 * same_process.
 *
 * Every round builds a container of N elements for each variant below and
 * looks each one up in random order (untimed, as the seq workload's random
 * get does before its removals), then times the removal of all of them in
 * that order, the loop a user writes: for k: remove(c, picks[k]). The variants
 * run in an order that rotates every round, and each prints the median ns per
 * removal and the median (min-max) of its per-round ratios to the hand-rolled
 * array's.
 *
 * - ark: ark_pool_remove, as shipped.
 * - no_bitmap: the same inline path without clearing the element's bit in
 *   the occupancy bitmap (iteration would then visit the freed slot);
 * - no_ring: without queueing the slot on the FIFO ring (the slot is
 *   never reused);
 * - neither: the handle check and the slot's writes only;
 * - slotarray: bench/slotarray.h's sa_remove.
 *
 * The three reduced variants are wrong pools, built for measuring only:
 * each is destroyed right after its loop, never read again. They go
 * through the same private inline functions as ark_pool_remove
 * (ark/internal/pool.h and core.h), so they differ from it in the part
 * they leave out alone, and copy none of its code.
 */
#ifndef ARK_BENCH_POOL_PARTS_H
#define ARK_BENCH_POOL_PARTS_H

enum { PART_ARK, PART_NO_BITMAP, PART_NO_RING, PART_NEITHER, PART_SA, NPARTS };

static const char *const part_names[NPARTS] = {"ark", "no_bitmap", "no_ring",
                                               "neither", "slotarray"};

/* ark_pool_remove with the bitmap clear and the ring push each optional
 * (compile-time constants at every call, so each variant is its own
 * straight-line loop). */
ARK__ALWAYS_INLINE static inline ark_status
part_remove(ark_pool *p, ark_handle h, bool bitmap, bool ring) {
    ark__pool_view *v = ark__pool_view_mut(p);
    uint64_t i;
    char *slot = ark__slots_removable(&v->slots, h, &i);
    if (slot == NULL) {
        return ark__pool_remove_slow(p, h);
    }
    if (bitmap) {
        ark__pool_unlink(v, i);
    }
    if (ring) {
        ark__slots_release(&v->slots, i, slot);
    } else { /* ark__slots_release without its enqueue */
        ark__slots_unstamp(slot);
    }
    return ARK_OK;
}

/* One timed removal loop per variant, the plain loop a user writes (the
 * status unused; the caller checks afterwards that every handle is dead).
 * noinline, so that each is laid out once, as a user's loop would be.
 * (GCC and Clang syntax: the benchmarks build on Linux only.) */
#define PART_LOOP(name, type, h, call)                                         \
    __attribute__((noinline)) static uint64_t name(type *c, const h *picks,    \
                                                   size_t n) {                 \
        uint64_t t = bench_now_ns();                                           \
        for (size_t k = 0; k < n; k++) {                                       \
            call;                                                              \
        }                                                                      \
        return bench_now_ns() - t;                                             \
    }

PART_LOOP(part_ark, ark_pool, ark_handle, ark_pool_remove(c, picks[k]))
PART_LOOP(part_no_bitmap, ark_pool, ark_handle,
          part_remove(c, picks[k], false, true))
PART_LOOP(part_no_ring, ark_pool, ark_handle,
          part_remove(c, picks[k], true, false))
PART_LOOP(part_neither, ark_pool, ark_handle,
          part_remove(c, picks[k], false, false))
PART_LOOP(part_sa, slotarray, sa_handle, sa_remove(c, picks[k]))

/* Exit unless none of the n handles is live any more. */
static void part_check(int part, size_t alive) {
    if (alive != 0) {
        fprintf(stderr, "bench_pool: --parts: %s kept %zu elements\n",
                part_names[part], alive);
        exit(1);
    }
}

/* One round of the hand-rolled array (see the top): ns per removal. */
static double part_sa_once(size_t n, same_process *m) {
    slotarray *a = sa_new();
    uint64_t sum = 0;
    size_t alive = 0;
    for (size_t i = 0; i < n; i++) {
        m->sh[i] = sa_put(a, i);
    }
    for (size_t k = 0; k < n; k++) {
        m->sp[k] = m->sh[m->perm[k]];
        sum += xbits(sa_get(a, m->sp[k]));
    }
    uint64_t t = part_sa(a, m->sp, n);
    for (size_t k = 0; k < n; k++) {
        alive += sa_get(a, m->sp[k]) != NULL;
    }
    sa_del(a);
    bench_keep(sum);
    part_check(PART_SA, alive);
    return (double)t / (double)n;
}

/* One round of ark variant `part`: ns per removal. */
static double part_ark_once(int part, size_t n, same_process *m) {
    static uint64_t (*const loops[])(ark_pool *, const ark_handle *, size_t) = {
        part_ark, part_no_bitmap, part_no_ring, part_neither};
    ark_pool *p = ark_new(true);
    uint64_t sum = 0;
    size_t alive = 0;
    for (size_t i = 0; i < n; i++) {
        m->ah[i] = ark_put(p, i);
    }
    for (size_t k = 0; k < n; k++) {
        m->ap[k] = m->ah[m->perm[k]];
        sum += xbits((const elem *)ark_pool_get(p, m->ap[k]));
    }
    uint64_t t = loops[part](p, m->ap, n);
    for (size_t k = 0; k < n; k++) {
        alive += ark_pool_get(p, m->ap[k]) != NULL;
    }
    ark_pool_destroy(p);
    bench_keep(sum);
    part_check(part, alive);
    return (double)t / (double)n;
}

static int parts_main(int rounds, size_t n) {
    same_process m;
    if (!same_process_begin(&m, "--parts", rounds, n)) {
        return 2;
    }
    static double t[NPARTS][BENCH_PAIR_MAX];
    for (int r = 0; r < rounds; r++) {
        for (int j = 0; j < NPARTS; j++) {
            int part = (r + j) % NPARTS;
            t[part][r] = part == PART_SA ? part_sa_once(n, &m)
                                         : part_ark_once(part, n, &m);
        }
    }
    bench_print_build();
    printf("pool remove --parts: %d rounds, n = %zu, variants rotating in "
           "one process, ns per removal in random order\n",
           rounds, n);
    printf("%-15s %10s %10s %9s %15s\n", "variant", "variant", "slotarray",
           "ratio", "(min-max)");
    for (int part = 0; part < PART_SA; part++) {
        double sa[BENCH_PAIR_MAX];
        memcpy(sa, t[PART_SA], sizeof sa);
        bench_pair_row(part_names[part], t[part], sa, rounds);
    }
    same_process_end(&m);
    return 0;
}

#endif /* ARK_BENCH_POOL_PARTS_H */
