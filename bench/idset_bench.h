/* SPDX-License-Identifier: MIT */
/*
 * idset_bench.h - the idset workloads (B1-B10 of shared/idset-notes.md),
 * shared by bench_idset.c (ark and the flat array) and idset_peers.c
 * (CRoaring, Judy), so every program runs the same op streams with the same
 * seed and prints the same checksums.
 *
 * Each implementation fills an idset_impl table. The hot kernels (at,
 * lower_bound, find) are always_inline with the table's function pointers
 * as constants, so each implementation's loop calls its own functions
 * directly (as a user's loop would) and no indirect call is measured.
 */
#ifndef ARK_IDSET_BENCH_H
#define ARK_IDSET_BENCH_H

#include "bench_common.h"

#include <malloc.h>

typedef struct idset_impl {
    const char *name;
    void *(*create)(void);
    void (*destroy)(void *s);
    int (*insert)(void *s, uint32_t id);        /* 0 = inserted */
    int (*remove)(void *s, uint32_t id);        /* 0 = removed */
    uint32_t (*remove_at)(void *s, size_t pos); /* returns the id */
    void (*remove_sorted)(void *s, const uint32_t *ids, size_t n);
    uint32_t (*at)(const void *s, size_t pos);
    size_t (*lower_bound)(const void *s, uint32_t id);
    size_t (*find)(const void *s, uint32_t id); /* (size_t)-1 if absent */
    size_t (*count)(const void *s);
    uint64_t (*sum)(const void *s);  /* the fastest full iteration */
    size_t (*memory)(const void *s); /* bytes held; 0 = use mallinfo2 */
    size_t (*allocs)(const void *s); /* allocator calls so far, or 0 */
    void (*shrink)(void *s); /* called before a heap-delta measurement */
    /* B11: out = a op b (IDSET_AND, IDSET_OR, IDSET_ANDNOT) or just its
     * size (IDSET_AND_COUNT); returns the result's size. out comes from
     * create and its old contents are replaced. NULL = not offered. */
    size_t (*algebra)(int op, void *out, const void *a, const void *b);
    size_t at_limit;        /* largest n for positional workloads; 0 = any */
    size_t at_limit_sparse; /* the same on D3 (every id its own block) */
} idset_impl;

typedef enum idset_dist { DIST_D1, DIST_D3, DIST_D5 } idset_dist;
enum { IDSET_AND, IDSET_OR, IDSET_ANDNOT, IDSET_AND_COUNT };
static const char *const idset_dist_names[] = {"D1", "D3", "D5"};

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- id generation --------------------------------------------------------
 */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* n sorted unique ids of a distribution. */
static uint32_t *gen_ids(idset_dist d, size_t n, uint64_t *rng) {
    uint32_t *v = malloc(n * sizeof(uint32_t));
    if (d == DIST_D3) {
        size_t k = 0;
        while (k < n) {
            /* uniform below 2^32 - 2^26, leaving room for B7's appends */
            for (size_t i = k; i < n; i++) {
                v[i] = (uint32_t)(bench_rand(rng) % (UINT32_MAX - (1u << 26)));
            }
            qsort(v, n, sizeof(uint32_t), cmp_u32);
            k = 0;
            for (size_t i = 0; i < n; i++) { /* dedupe, refill the tail */
                if (i == 0 || v[i] != v[k - 1]) {
                    v[k++] = v[i];
                }
            }
        }
        return v;
    }
    uint32_t id = 1000;
    for (size_t i = 0; i < n; i++) {
        v[i] = id;
        /* D1: gaps of 1-3 (ecs-dense); D5: gaps of 256-258, so 256 ids
         * span about 65535 and a one-slot cascade flips a group's form. */
        id += d == DIST_D1 ? 1 + (uint32_t)(bench_rand(rng) % 3)
                           : 256 + (uint32_t)(bench_rand(rng) % 3);
    }
    return v;
}

static int sorted_has(const uint32_t *v, size_t n, uint32_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < n && v[lo] == id;
}

/* An id absent from base (and from out[0..k)), of the distribution. */
static uint32_t gen_absent(idset_dist d, const uint32_t *base, size_t n,
                           const uint32_t *out, size_t k, uint64_t *rng) {
    for (;;) {
        uint32_t id;
        if (d == DIST_D3) {
            id = (uint32_t)bench_rand(rng);
        } else {
            id = base[bench_rand(rng) % n] + 1 +
                 (uint32_t)(bench_rand(rng) % (d == DIST_D1 ? 2 : 255));
        }
        int dup = sorted_has(base, n, id);
        for (size_t i = 0; i < k && !dup; i++) {
            dup = out[i] == id;
        }
        if (!dup) {
            return id;
        }
    }
}

static void *build(const idset_impl *im, const uint32_t *ids, size_t n) {
    void *s = im->create();
    for (size_t i = 0; i < n; i++) {
        im->insert(s, ids[i]);
    }
    return s;
}

/* ---- the hot kernels -------------------------------------------------- */

ALWAYS_INLINE uint64_t k_at_tput(const idset_impl *im, const void *s,
                                 const uint32_t *pos, size_t q) {
    uint64_t sum = 0;
    for (size_t i = 0; i < q; i++) {
        sum += im->at(s, pos[i]);
    }
    return sum;
}

ALWAYS_INLINE uint64_t k_at_lat(const idset_impl *im, const void *s,
                                const uint32_t *pos, size_t q, size_t n) {
    uint32_t v = 0;
    for (size_t i = 0; i < q; i++) {
        v = im->at(s, (v ^ pos[i]) % n);
    }
    return v;
}

ALWAYS_INLINE uint64_t k_at_seq(const idset_impl *im, const void *s, size_t n) {
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += im->at(s, i);
    }
    return sum;
}

ALWAYS_INLINE uint64_t k_lb_tput(const idset_impl *im, const void *s,
                                 const uint32_t *keys, size_t q) {
    uint64_t sum = 0;
    for (size_t i = 0; i < q; i++) {
        sum += im->lower_bound(s, keys[i]);
    }
    return sum;
}

ALWAYS_INLINE uint64_t k_lb_lat(const idset_impl *im, const void *s,
                                const uint32_t *keys, size_t q) {
    size_t p = 0;
    for (size_t i = 0; i < q; i++) {
        p = im->lower_bound(s, keys[i] ^ (uint32_t)(p & 1));
    }
    return p;
}

ALWAYS_INLINE uint64_t k_find_tput(const idset_impl *im, const void *s,
                                   const uint32_t *keys, size_t q) {
    uint64_t sum = 0;
    for (size_t i = 0; i < q; i++) {
        sum += im->find(s, keys[i]);
    }
    return sum;
}

/* The kernels of one implementation, instantiated with its table. */
typedef struct idset_kernels {
    uint64_t (*at_tput)(const void *, const uint32_t *, size_t);
    uint64_t (*at_lat)(const void *, const uint32_t *, size_t, size_t);
    uint64_t (*at_seq)(const void *, size_t);
    uint64_t (*lb_tput)(const void *, const uint32_t *, size_t);
    uint64_t (*lb_lat)(const void *, const uint32_t *, size_t);
    uint64_t (*find_tput)(const void *, const uint32_t *, size_t);
} idset_kernels;

/* Define the kernels of implementation TABLE (a static const
 * idset_impl) as functions PREFIX_k_*, and PREFIX_kernels. */
#define IDSET_KERNELS(PREFIX, TABLE)                                           \
    static uint64_t PREFIX##_at_tput(const void *s, const uint32_t *p,         \
                                     size_t q) {                               \
        return k_at_tput(&TABLE, s, p, q);                                     \
    }                                                                          \
    static uint64_t PREFIX##_at_lat(const void *s, const uint32_t *p,          \
                                    size_t q, size_t n) {                      \
        return k_at_lat(&TABLE, s, p, q, n);                                   \
    }                                                                          \
    static uint64_t PREFIX##_at_seq(const void *s, size_t n) {                 \
        return k_at_seq(&TABLE, s, n);                                         \
    }                                                                          \
    static uint64_t PREFIX##_lb_tput(const void *s, const uint32_t *k,         \
                                     size_t q) {                               \
        return k_lb_tput(&TABLE, s, k, q);                                     \
    }                                                                          \
    static uint64_t PREFIX##_lb_lat(const void *s, const uint32_t *k,          \
                                    size_t q) {                                \
        return k_lb_lat(&TABLE, s, k, q);                                      \
    }                                                                          \
    static uint64_t PREFIX##_find_tput(const void *s, const uint32_t *k,       \
                                       size_t q) {                             \
        return k_find_tput(&TABLE, s, k, q);                                   \
    }                                                                          \
    static const idset_kernels PREFIX##_kernels = {                            \
        PREFIX##_at_tput, PREFIX##_at_lat, PREFIX##_at_seq,                    \
        PREFIX##_lb_tput, PREFIX##_lb_lat, PREFIX##_find_tput}

/* ---- the driver ------------------------------------------------------- */

typedef struct idset_entry {
    const idset_impl *im;
    const idset_kernels *k;
} idset_entry;

static size_t heap_used(void) { return mallinfo2().uordblks; }

/* Bytes held: the implementation's own count, else the heap delta. */
static size_t mem_of(const idset_impl *im, const void *s, size_t heap0) {
    if (im->memory) {
        return im->memory(s);
    }
    if (im->shrink) {
        im->shrink((void *)s);
    }
    return heap_used() - heap0;
}

/* Whether the positional workloads run for this implementation and n. */
static int positional(const idset_impl *im, size_t n, idset_dist d) {
    size_t lim = d == DIST_D3 ? im->at_limit_sparse : im->at_limit;
    if (lim != 0 && n > lim) {
        printf("# %s: positional workloads skipped at n=%zu (too slow)\n",
               im->name, n);
        return 0;
    }
    return 1;
}

/* One size and distribution: the set and every pre-generated op stream. */
typedef struct cell {
    idset_dist dist;
    size_t n;
    uint32_t *ids;        /* the set, sorted */
    size_t q;             /* queries per run */
    uint32_t *pos, *keys; /* uniform positions; uniform values in range */
    uint32_t *hits;       /* values drawn from the set */
    size_t batches;       /* B5/B6: batches of 64 absent ids */
    uint32_t *absent;     /* batches * 64 */
    uint32_t *rpos;       /* B6p: batches * 64 positions */
    size_t frames, fk[3]; /* B7: frames; k = n/100, n/1000, n/10 */
    uint32_t *frem[3], *fadd[3];
    int nfk;
    /* B11 (D1 cells): two sets drawn from [1000, 1000 + 2n), each id with
     * probability 1/2 (so about n ids each, half of them shared), and a
     * small one (probability 1/2000) for the galloping case. */
    uint32_t *alg[3];
    size_t nalg[3];
    int runs;
    bench_mode mode;
} cell;

static char wl_buf[64];

static const char *wl(const char *base, const cell *c) {
    snprintf(wl_buf, sizeof wl_buf, "%s_%s", base, idset_dist_names[c->dist]);
    return wl_buf;
}

/* Frame streams for B7: each frame removes k present ids (sorted) and
 * appends k ids above the max, replayed on a flat model. */
static void gen_frames(cell *c, int f, size_t k, uint64_t *rng) {
    size_t n = c->n, frames = c->frames;
    uint32_t *m = malloc((n + k * frames) * sizeof(uint32_t));
    memcpy(m, c->ids, n * sizeof(uint32_t));
    c->fk[f] = k;
    c->frem[f] = malloc(k * frames * sizeof(uint32_t) + 4);
    c->fadd[f] = malloc(k * frames * sizeof(uint32_t) + 4);
    size_t cnt = n;
    for (size_t fr = 0; fr < frames; fr++) {
        uint32_t *rem = c->frem[f] + fr * k, *add = c->fadd[f] + fr * k;
        /* selection sampling: k of cnt positions, in order */
        size_t need = k, w = 0, got = 0;
        for (size_t i = 0; i < cnt; i++) {
            if (need > 0 && bench_rand(rng) % (cnt - i) < need) {
                rem[got++] = m[i];
                need--;
            } else {
                m[w++] = m[i];
            }
        }
        cnt = w;
        uint32_t top = cnt ? m[cnt - 1] : 0;
        for (size_t i = 0; i < k; i++) {
            top += 1 + (uint32_t)(bench_rand(rng) % 3);
            add[i] = top;
            m[cnt++] = top;
        }
    }
    free(m);
}

/* q queries over the n sorted ids: positions, keys anywhere in their
 * span, and (hits not NULL) ids that are present. */
static void gen_queries(const uint32_t *ids, size_t n, size_t q, uint64_t *rng,
                        uint32_t *pos, uint32_t *keys, uint32_t *hits) {
    uint32_t lo = ids[0], span = ids[n - 1] - lo;
    for (size_t i = 0; i < q; i++) {
        pos[i] = (uint32_t)(bench_rand(rng) % n);
        keys[i] = lo + (uint32_t)(bench_rand(rng) % ((uint64_t)span + 1));
        if (hits != NULL) {
            hits[i] = ids[bench_rand(rng) % n];
        }
    }
}

static void cell_init(cell *c, idset_dist d, size_t n, bench_mode mode,
                      int runs) {
    memset(c, 0, sizeof(*c));
    uint64_t rng = BENCH_SEED ^ (n * 31 + (size_t)d);
    c->dist = d;
    c->n = n;
    c->mode = mode;
    c->runs = runs;
    c->ids = gen_ids(d, n, &rng);
    c->q = mode == BENCH_SMOKE ? 2000 : mode == BENCH_QUICK ? 200000 : 1000000;
    c->pos = malloc(c->q * sizeof(uint32_t));
    c->keys = malloc(c->q * sizeof(uint32_t));
    c->hits = malloc(c->q * sizeof(uint32_t));
    gen_queries(c->ids, n, c->q, &rng, c->pos, c->keys, c->hits);
    size_t pairs = mode == BENCH_SMOKE   ? 128
                   : mode == BENCH_QUICK ? 4096
                   : n >= 1000000        ? 2048
                   : n >= 250000         ? 4096
                                         : 20000;
    c->batches = pairs / 64;
    c->absent = malloc(c->batches * 64 * sizeof(uint32_t));
    c->rpos = malloc(c->batches * 64 * sizeof(uint32_t));
    for (size_t b = 0; b < c->batches; b++) {
        for (size_t i = 0; i < 64; i++) {
            c->absent[b * 64 + i] =
                gen_absent(d, c->ids, n, c->absent + b * 64, i, &rng);
            c->rpos[b * 64 + i] = (uint32_t)(bench_rand(&rng) % (n - 64));
        }
    }
    if (d == DIST_D1) {
        unsigned odds[3] = {2, 2, 2000};
        for (int k = 0; k < 3; k++) {
            c->alg[k] = malloc(2 * n * sizeof(uint32_t));
            c->nalg[k] = 0;
            for (size_t i = 0; i < 2 * n; i++) {
                if (bench_rand(&rng) % odds[k] == 0) {
                    c->alg[k][c->nalg[k]++] = 1000 + (uint32_t)i;
                }
            }
        }
    }
    c->frames = mode == BENCH_SMOKE ? 2 : 10;
    c->nfk = mode == BENCH_FULL ? 3 : 1;
    size_t ks[3] = {n / 100, n / 1000, n / 10};
    for (int f = 0; f < c->nfk; f++) {
        gen_frames(c, f, ks[f] ? ks[f] : 1, &rng);
    }
}

static void cell_free(cell *c) {
    free(c->ids);
    free(c->pos);
    free(c->keys);
    free(c->hits);
    free(c->absent);
    free(c->rpos);
    for (int f = 0; f < c->nfk; f++) {
        free(c->frem[f]);
        free(c->fadd[f]);
    }
    for (int k = 0; k < 3; k++) {
        free(c->alg[k]);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of v (sorted in place). */
static double quantile(double *v, size_t n, double q) {
    qsort(v, n, sizeof(double), cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i];
}

static uint64_t state_checksum(const idset_impl *im, const void *s) {
    return im->count(s) * 1000003u + im->sum(s);
}

static uint64_t rep_seq(const idset_kernels *k, const void *s, size_t n,
                        size_t reps) {
    uint64_t c = 0;
    for (size_t i = 0; i < reps; i++) {
        c += k->at_seq(s, n);
    }
    return c;
}

static uint64_t rep_sum(const idset_impl *im, const void *s, size_t reps) {
    uint64_t c = 0;
    for (size_t i = 0; i < reps; i++) {
        c += im->sum(s);
    }
    return c;
}

/* Query workloads B1-B4, B8 on a built set. */
static void run_queries(const idset_entry *e, const cell *c, const void *s) {
    const idset_impl *im = e->im;
    const idset_kernels *k = e->k;
    double r[5];
    uint64_t chk = 0;
    size_t q = c->q, n = c->n;
#define TIMED(expr, per)                                                       \
    for (int i = 0; i < c->runs; i++) {                                        \
        uint64_t t0 = bench_now_ns();                                          \
        chk = (expr);                                                          \
        r[i] = (double)(bench_now_ns() - t0) / (double)(per);                  \
        bench_keep(chk);                                                       \
    }
    TIMED(k->at_tput(s, c->pos, q), q);
    bench_row("idset", wl("B1_at_tput", c), n, im->name, r, c->runs, "ns/op",
              chk);
    TIMED(k->at_lat(s, c->pos, q, n), q);
    bench_row("idset", wl("B2_at_lat", c), n, im->name, r, c->runs, "ns/op",
              chk);
    size_t reps = q / n ? q / n : 1;
    TIMED(rep_seq(k, s, n, reps), n * reps);
    bench_row("idset", wl("B3_at_seq", c), n, im->name, r, c->runs, "ns/id",
              chk);
    TIMED(k->lb_tput(s, c->keys, q), q);
    bench_row("idset", wl("B4_lb_tput", c), n, im->name, r, c->runs, "ns/op",
              chk);
    TIMED(k->lb_lat(s, c->keys, q), q);
    bench_row("idset", wl("B4_lb_lat", c), n, im->name, r, c->runs, "ns/op",
              chk);
    TIMED(k->find_tput(s, c->hits, q), q);
    bench_row("idset", wl("B4h_find_tput", c), n, im->name, r, c->runs, "ns/op",
              chk);
    TIMED(rep_sum(im, s, reps), n * reps);
    bench_row("idset", wl("B8_iter", c), n, im->name, r, c->runs, "ns/id", chk);
#undef TIMED
}

/* B5/B6/B6p: steady-state batches of 64 inserts then 64 removes. */
static void run_mutations(const idset_entry *e, const cell *c, void *s,
                          size_t heap0, int pos_ok) {
    const idset_impl *im = e->im;
    size_t nb = c->batches, n = c->n;
    double *bi = malloc(nb * sizeof(double) * 3);
    double *br = bi + nb, *bp = br + nb;
    double ri[5], rr[5], rp[5], pi[5], pr[5], mi[5], mr[5], al[5];
    uint64_t chk = 0;
    for (int run = 0; run < c->runs; run++) {
        size_t a0 = im->allocs ? im->allocs(s) : 0;
        double ti = 0, tr = 0, tp = 0;
        for (size_t b = 0; b < nb; b++) {
            const uint32_t *ids = c->absent + b * 64;
            uint64_t t0 = bench_now_ns();
            for (int i = 0; i < 64; i++) {
                im->insert(s, ids[i]);
            }
            uint64_t t1 = bench_now_ns();
            for (int i = 0; i < 64; i++) {
                im->remove(s, ids[i]);
            }
            uint64_t t2 = bench_now_ns();
            bi[b] = (double)(t1 - t0) / 64;
            br[b] = (double)(t2 - t1) / 64;
            ti += bi[b];
            tr += br[b];
        }
        al[run] =
            im->allocs ? (double)(im->allocs(s) - a0) / (double)(nb * 128) : 0;
        uint32_t back[64];
        for (size_t b = 0; b < nb && pos_ok; b++) {
            const uint32_t *ps = c->rpos + b * 64;
            uint64_t t0 = bench_now_ns();
            for (int i = 0; i < 64; i++) {
                back[i] = im->remove_at(s, ps[i]);
            }
            bp[b] = (double)(bench_now_ns() - t0) / 64;
            tp += bp[b];
            for (int i = 0; i < 64; i++) {
                im->insert(s, back[i]);
            }
        }
        ri[run] = ti / (double)nb;
        rr[run] = tr / (double)nb;
        rp[run] = tp / (double)nb;
        pi[run] = quantile(bi, nb, 0.99);
        pr[run] = quantile(br, nb, 0.99);
        mi[run] = bi[nb - 1];
        mr[run] = br[nb - 1];
        chk = state_checksum(im, s);
    }
    bench_row("idset", wl("B5_insert", c), n, im->name, ri, c->runs, "ns/op",
              chk);
    bench_row("idset", wl("B5_insert_p99", c), n, im->name, pi, c->runs,
              "ns/op", chk);
    bench_row("idset", wl("B5_insert_max", c), n, im->name, mi, c->runs,
              "ns/op", chk);
    bench_row("idset", wl("B5_allocs", c), n, im->name, al, c->runs,
              "allocs/op", chk);
    bench_row("idset", wl("B6_remove", c), n, im->name, rr, c->runs, "ns/op",
              chk);
    bench_row("idset", wl("B6_remove_p99", c), n, im->name, pr, c->runs,
              "ns/op", chk);
    bench_row("idset", wl("B6_remove_max", c), n, im->name, mr, c->runs,
              "ns/op", chk);
    if (pos_ok) {
        bench_row("idset", wl("B6p_remove_at", c), n, im->name, rp, c->runs,
                  "ns/op", chk);
    }
    double m[1] = {(double)mem_of(im, s, heap0) / (double)n};
    bench_row("idset", wl("B9_mem_churn", c), n, im->name, m, 1, "B/id",
              im->count(s));
    free(bi);
}

/* B7: frames of a sorted batch removal plus k appends above the max. */
static void run_frames(const idset_entry *e, const cell *c) {
    const idset_impl *im = e->im;
    static const char *const names[3] = {"B7_batch_1pct", "B7_batch_01pct",
                                         "B7_batch_10pct"};
    for (int f = 0; f < c->nfk; f++) {
        double r[5], mem = 0;
        uint64_t chk = 0;
        size_t k = c->fk[f];
        for (int run = 0; run < c->runs; run++) {
            size_t heap0 = heap_used();
            void *s = build(im, c->ids, c->n);
            uint64_t t0 = bench_now_ns();
            for (size_t fr = 0; fr < c->frames; fr++) {
                im->remove_sorted(s, c->frem[f] + fr * k, k);
                const uint32_t *add = c->fadd[f] + fr * k;
                for (size_t i = 0; i < k; i++) {
                    im->insert(s, add[i]);
                }
            }
            r[run] = (double)(bench_now_ns() - t0) / 1000.0 / (double)c->frames;
            chk = state_checksum(im, s);
            mem = (double)mem_of(im, s, heap0) / (double)im->count(s);
            im->destroy(s);
        }
        bench_row("idset", wl(names[f], c), c->n, im->name, r, c->runs,
                  "us/frame", chk);
        if (f == 0) {
            double m[1] = {mem};
            bench_row("idset", wl("B9_mem_frames", c), c->n, im->name, m, 1,
                      "B/id", chk);
        }
    }
}

/* B10: insert and remove at position 0 (every later group cascades). */
static void run_front(const idset_entry *e, const cell *c, void *s) {
    const idset_impl *im = e->im;
    double r[5], mx[5];
    uint64_t chk = 0;
    uint32_t lo = c->ids[0];
    for (int run = 0; run < c->runs; run++) {
        double worst = 0, total = 0;
        for (uint32_t t = 1; t <= 32; t++) {
            uint64_t t0 = bench_now_ns();
            im->insert(s, lo - t);
            uint64_t t1 = bench_now_ns();
            im->remove(s, lo - t);
            uint64_t t2 = bench_now_ns();
            double a = (double)(t1 - t0) / 1000.0,
                   b = (double)(t2 - t1) / 1000.0;
            total += a + b;
            worst = a > worst ? a : worst;
            worst = b > worst ? b : worst;
        }
        r[run] = total / 64;
        mx[run] = worst;
        chk = state_checksum(im, s);
    }
    bench_row("idset", wl("B10_front", c), c->n, im->name, r, c->runs, "us/op",
              chk);
    bench_row("idset", wl("B10_front_max", c), c->n, im->name, mx, c->runs,
              "us/op", chk);
}

/* B11: the set algebra on the D1 pairs (about half of the ids shared),
 * and an intersection of a small set with a large one (galloping). */
static void run_algebra(const idset_entry *e, const cell *c) {
    const idset_impl *im = e->im;
    static const char *const names[5] = {"B11_and", "B11_or", "B11_andnot",
                                         "B11_and_count", "B11_and_small"};
    void *a = build(im, c->alg[0], c->nalg[0]);
    void *b = build(im, c->alg[1], c->nalg[1]);
    void *small = build(im, c->alg[2], c->nalg[2]);
    void *out = im->create();
    for (int w = 0; w < 5; w++) {
        double r[5];
        uint64_t chk = 0;
        int op = w == 4 ? IDSET_AND : w;
        const void *x = w == 4 ? small : a;
        for (int run = 0; run < c->runs; run++) {
            uint64_t t0 = bench_now_ns();
            chk = im->algebra(op, out, x, b);
            r[run] = (double)(bench_now_ns() - t0) / 1000.0;
        }
        bench_row("idset", wl(names[w], c), c->n, im->name, r, c->runs, "us/op",
                  chk);
    }
    im->destroy(out);
    im->destroy(small);
    im->destroy(b);
    im->destroy(a);
}

/* Every workload of one cell for one implementation. */
static void run_impl(const idset_entry *e, const cell *c) {
    const idset_impl *im = e->im;
    double r[5];
    void *s = NULL;
    size_t heap0 = 0;
    for (int run = 0; run < c->runs; run++) {
        if (s != NULL) {
            im->destroy(s);
        }
        heap0 = heap_used();
        uint64_t t0 = bench_now_ns();
        s = build(im, c->ids, c->n);
        r[run] = (double)(bench_now_ns() - t0) / (double)c->n;
    }
    uint64_t chk = state_checksum(im, s);
    if (c->dist != DIST_D5) {
        bench_row("idset", wl("B5a_append", c), c->n, im->name, r, c->runs,
                  "ns/id", chk);
    }
    double m[1] = {(double)mem_of(im, s, heap0) / (double)c->n};
    bench_row("idset", wl("B9_mem_fresh", c), c->n, im->name, m, 1, "B/id",
              chk);
    if (c->dist == DIST_D5) {
        run_front(e, c, s);
        im->destroy(s);
        return;
    }
    int pos_ok = positional(im, c->n, c->dist);
    if (pos_ok) {
        run_queries(e, c, s);
    }
    run_mutations(e, c, s, heap0, pos_ok);
    if (c->dist == DIST_D1) {
        run_front(e, c, s);
    }
    im->destroy(s);
    run_frames(e, c);
    if (c->dist == DIST_D1 && im->algebra != NULL) {
        run_algebra(e, c);
    }
}

/* The whole benchmark for the given implementations. */
static int idset_bench_main(int argc, char **argv, const idset_entry *impls,
                            int nimpls) {
    const char *names[8];
    for (int i = 0; i < nimpls; i++) {
        names[i] = impls[i].im->name;
    }
    bench_args a = bench_parse(argc, argv, names, nimpls);
    static const size_t smoke[] = {1024};
    static const size_t quick[] = {1024, 65536};
    static const size_t full[] = {1024, 4096, 16384, 65536, 262144, 1048576};
    const size_t *sizes = a.mode == BENCH_SMOKE   ? smoke
                          : a.mode == BENCH_QUICK ? quick
                                                  : full;
    size_t nsizes = a.mode == BENCH_SMOKE   ? 1
                    : a.mode == BENCH_QUICK ? 2
                                            : sizeof full / sizeof full[0];
    printf("# idset bench: mode %s, seed %#llx, -O2 without -march=native\n",
           a.mode == BENCH_SMOKE   ? "smoke"
           : a.mode == BENCH_QUICK ? "quick"
                                   : "full",
           (unsigned long long)BENCH_SEED);
    idset_dist dists[] = {DIST_D1, DIST_D3, DIST_D5};
    /* For targeted runs: ARK_BENCH_IDSET_N=size and ARK_BENCH_IDSET_DIST=D1
     * (or D3, D5) keep only that size and distribution. */
    const char *only_n = getenv("ARK_BENCH_IDSET_N");
    const char *only_d = getenv("ARK_BENCH_IDSET_DIST");
    size_t one[1];
    if (only_n != NULL) {
        one[0] = (size_t)strtoull(only_n, NULL, 10);
        sizes = one;
        nsizes = 1;
    }
    for (size_t si = 0; si < nsizes; si++) {
        for (int di = 0; di < 3; di++) {
            if (only_d != NULL && strcmp(only_d, idset_dist_names[di]) != 0) {
                continue;
            }
            cell c;
            cell_init(&c, dists[di], sizes[si], a.mode, a.runs);
            for (int i = 0; i < nimpls; i++) {
                if (bench_selected(&a, impls[i].im->name)) {
                    run_impl(&impls[i], &c);
                }
            }
            cell_free(&c);
        }
    }
    return 0;
}

/* ---- paired latency: two implementations side by side ----------------
 *
 * `bench_idset --pair [rounds]`: the at() target is a latency ratio of a
 * few tens of percent, and single B2 runs on a shared machine spread more
 * than that. For each size of the full mode and D1, D3 (or the cell
 * ARK_BENCH_IDSET_N / ARK_BENCH_IDSET_DIST select), both sets are built
 * once; then the B2 kernel (1M dependent at() queries) and the B4 latency
 * kernel (1M dependent lower_bound queries) run alternately on the first
 * and the second implementation, rounds times (default 11). It prints each
 * side's median ns per query and the median of the per-pair ratios
 * (first / second).
 *
 * Then single inserts and removes, each timed on its own: 64 batches of 64
 * absent ids (inserted, then removed, so the set keeps its size), the
 * sides taking turns every 16 batches (a turn per batch would leave the
 * first operations of every batch to run on caches the other side just
 * filled: 1 in 64, enough to be the p99). It prints each side's mean and
 * p99 over the 4096 operations and the ratios second / first ("x
 * faster"). B5/B6 time whole batches, so their p99 is the slowest of 32
 * batch means, and on a shared machine one preemption (milliseconds)
 * inside a 64-operation batch of microsecond operations decides it; here
 * it moves one operation of 4096, which the p99 (the 41st slowest) does
 * not see. */

static double pair_time(const idset_kernels *k, const void *s,
                        const uint32_t *pos, const uint32_t *keys, size_t q,
                        size_t n, int lb) {
    uint64_t t0 = bench_now_ns();
    bench_keep(lb ? k->lb_lat(s, keys, q) : k->at_lat(s, pos, q, n));
    return (double)(bench_now_ns() - t0) / (double)q;
}

enum { PAIR_BATCHES = 64, PAIR_BATCH = 64, PAIR_TURN = 16 };

/* One batch of PAIR_BATCH inserts, then their removes, each timed. */
static void pair_batch(const idset_impl *im, void *s, const uint32_t *ids,
                       double *ins, double *rem) {
    for (int i = 0; i < PAIR_BATCH; i++) {
        uint64_t t0 = bench_now_ns();
        im->insert(s, ids[i]);
        ins[i] = (double)(bench_now_ns() - t0);
    }
    for (int i = 0; i < PAIR_BATCH; i++) {
        uint64_t t0 = bench_now_ns();
        im->remove(s, ids[i]);
        rem[i] = (double)(bench_now_ns() - t0);
    }
}

static double mean_of(const double *v, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
    }
    return sum / (double)n;
}

/* Single inserts and removes timed one by one, the sides taking turns. */
static void pair_mutations(const idset_entry *e, void *const *s, idset_dist d,
                           const uint32_t *ids, size_t n, uint64_t *rng) {
    size_t ops = (size_t)PAIR_BATCHES * PAIR_BATCH;
    uint32_t *absent = malloc(ops * sizeof(uint32_t));
    double *t = malloc(4 * ops * sizeof(double)); /* [side][ins, rem][op] */
    for (size_t b = 0; b < PAIR_BATCHES; b++) {
        for (size_t i = 0; i < PAIR_BATCH; i++) {
            absent[b * PAIR_BATCH + i] =
                gen_absent(d, ids, n, absent + b * PAIR_BATCH, i, rng);
        }
    }
    for (size_t turn = 0; turn < PAIR_BATCHES; turn += PAIR_TURN) {
        for (int k = 0; k < 2; k++) {
            int i = (int)((turn / PAIR_TURN + (size_t)k) & 1);
            for (size_t b = turn; b < turn + PAIR_TURN; b++) {
                size_t o = b * PAIR_BATCH;
                pair_batch(e[i].im, s[i], absent + o, t + (2 * i) * ops + o,
                           t + (2 * i + 1) * ops + o);
            }
        }
    }
    for (int op = 0; op < 2; op++) {
        double *a = t + op * ops, *f = t + (2 + op) * ops;
        double ma = mean_of(a, ops), mf = mean_of(f, ops);
        double pa = quantile(a, ops, 0.99), pf = quantile(f, ops, 0.99);
        printf("%s,%s,%zu,%.0f,%.0f,%.2f,p99,%.0f,%.0f,%.2f\n",
               op ? "remove" : "insert", idset_dist_names[d], n, ma, mf,
               mf / ma, pa, pf, pf / pa);
    }
    free(absent);
    free(t);
}

static void pair_cell(const idset_entry *e, idset_dist d, size_t n,
                      int rounds) {
    uint64_t rng = BENCH_SEED ^ (n * 31 + (size_t)d);
    uint32_t *ids = gen_ids(d, n, &rng);
    size_t q = 1000000;
    uint32_t *pos = malloc(q * sizeof(uint32_t));
    uint32_t *keys = malloc(q * sizeof(uint32_t));
    gen_queries(ids, n, q, &rng, pos, keys, NULL);
    void *s[2] = {build(e[0].im, ids, n), build(e[1].im, ids, n)};
    double t[2][2][64], ratio[2][64];
    for (int lb = 0; lb < 2; lb++) {
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 2; i++) {
                t[lb][i][r] = pair_time(e[i].k, s[i], pos, keys, q, n, lb);
            }
            ratio[lb][r] = t[lb][0][r] / t[lb][1][r];
        }
    }
    for (int lb = 0; lb < 2; lb++) {
        printf("%s,%s,%zu,%.2f,%.2f,%.3f\n", lb ? "lb_lat" : "at_lat",
               idset_dist_names[d], n, quantile(t[lb][0], rounds, 0.5),
               quantile(t[lb][1], rounds, 0.5),
               quantile(ratio[lb], rounds, 0.5));
    }
    pair_mutations(e, s, d, ids, n, &rng);
    fflush(stdout);
    e[0].im->destroy(s[0]);
    e[1].im->destroy(s[1]);
    free(ids);
    free(pos);
    free(keys);
}

static inline int idset_pair_main(const idset_entry *e, int rounds) {
    static const size_t sizes[] = {1024, 4096, 16384, 65536, 262144, 1048576};
    const char *only_n = getenv("ARK_BENCH_IDSET_N");
    const char *only_d = getenv("ARK_BENCH_IDSET_DIST");
    rounds = rounds < 1 ? 11 : rounds > 64 ? 64 : rounds;
    printf("# paired latency, %d rounds, seed %#llx: kernel,dist,n,"
           "%s ns,%s ns,median ratio %s/%s\n"
           "# insert|remove,dist,n,%s mean ns,%s mean ns,%s/%s,"
           "p99,%s p99 ns,%s p99 ns,%s/%s\n",
           rounds, (unsigned long long)BENCH_SEED, e[0].im->name, e[1].im->name,
           e[0].im->name, e[1].im->name, e[0].im->name, e[1].im->name,
           e[1].im->name, e[0].im->name, e[0].im->name, e[1].im->name,
           e[1].im->name, e[0].im->name);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = only_n ? (size_t)strtoull(only_n, NULL, 10) : sizes[si];
        for (int di = 0; di < 2; di++) {
            idset_dist d = di ? DIST_D3 : DIST_D1;
            if (only_d == NULL || strcmp(only_d, idset_dist_names[d]) == 0) {
                pair_cell(e, d, n, rounds);
            }
        }
        if (only_n) {
            break;
        }
    }
    return 0;
}

#endif /* ARK_IDSET_BENCH_H */
