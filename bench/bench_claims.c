/* SPDX-License-Identifier: MIT */
/*
 * bench_claims.c - section `claims`: ark_pool_claim from 1, 2 and 4
 * threads in batches of 1, 16 and 256, while the owning thread runs the
 * pool's churn frame; how many handles are claimed per second, and what
 * the claimers cost the owning thread's frame.
 *
 * The owning thread's frame is section `pool`'s churn frame
 * (bench/pool_workloads.h) at L = 100K live 16-byte elements (10K in
 * smoke mode): remove L/10 at random, insert L/10, iterate everything.
 * For each (threads, batch) a new pool is filled and warmed up, then
 * blocks of 20 frames run alternately alone and with the claimers
 * claiming without pause. Each claim batch is written to a local buffer
 * and dropped: what the owning thread does with claimed handles (create
 * or give back) is its own work, not the claims' cost. So every claim
 * takes fresh indices from the frontier, which the frame never reaches
 * (its inserts reuse the slots it removed), and nothing is absorbed. The
 * claimers start before a block and stop after it.
 *
 * Row stock_b16 times the other path alone, on one thread: claims of 16
 * from the stock of reused slots a flush filled (ns per batch).
 *
 * Rows (n = L, impl ark):
 *   rate_t<T>_b<B>    handles claimed per second by T threads together
 *                     over the blocks with claimers (M/s)
 *   frame_alone_t<T>_b<B>, frame_t<T>_b<B>
 *                     the owning thread's frame, alone and with the
 *                     claimers (median frame, us/frame)
 *   ratio_t<T>_b<B>   frame_t / frame_alone of the same blocks (x)
 *   cpu_ratio_t<T>_b<B>
 *                     the same ratio of the owning thread's CPU time per
 *                     frame (CLOCK_THREAD_CPUTIME_ID): what the claims cost
 *                     its work, leaving out the time it waited for a core
 *   frame_other_t<T>_b<B>, vs_other_t<T>_b<B>
 *                     the control: the owner's frame while the same
 *                     claimers claim from another pool, which shares
 *                     nothing with the owner's (us/frame), and frame_t /
 *                     frame_other_t: what sharing the pool costs beyond
 *                     what any busy thread on the machine costs (blocks of
 *                     the three kinds take turns)
 * The machine's core count bounds what ratio_t can be: with T claimers
 * and the owner on fewer than T + 1 cores, the owner shares its core
 * (cpu_ratio_t is not affected by that). Callgrind, not this table, is the
 * measure of the owner's own cost per operation (docs/bench.md, "Section
 * claims").
 */
#include "pool_recipe.h" /* first: it defines _POSIX_C_SOURCE */

#include "ark/pool.h"

#include <pthread.h>
#include <stdatomic.h>

static const char *const impls[] = {"ark"};

enum { MAX_THREADS = 4, MAX_BATCH = 256 };

typedef struct claimer {
    pthread_t th;
    ark_pool *p;
    size_t batch;
    _Atomic int *stop;
    uint64_t claimed;  /* handles claimed (read after the join) */
    uint64_t reused;   /* of them, claims of reused slots */
    uint64_t failures; /* batches refused (ARK_EFULL) */
} claimer;

static void *claim_loop(void *arg) {
    claimer *c = arg;
    ark_handle out[MAX_BATCH];
    uint64_t n = 0, reused = 0, failed = 0;
    do { /* at least one batch, however short the block */
        if (ark_pool_claim(c->p, out, c->batch) != ARK_OK) {
            failed++;
            continue;
        }
        n += c->batch;
        reused += (out[0] >> 32) != 0; /* generation > 0: from the stock */
        bench_keep(out[c->batch - 1]);
    } while (!atomic_load_explicit(c->stop, memory_order_relaxed));
    c->claimed = n;
    c->reused = reused;
    c->failures = failed;
    return NULL;
}

typedef struct owner {
    ark_pool *p;
    ark_handle *h;
    size_t live, m;
    uint64_t rng, next, check;
} owner;

static void owner_put(owner *o, size_t at) {
    elem e = elem_make(o->next++);
    if (ark_pool_insert(o->p, &e, &o->h[at]) != ARK_OK) {
        fprintf(stderr, "bench_claims: insert failed\n");
        exit(1);
    }
}

/* The calling thread's CPU time in ns. */
static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One frame; returns its time in ns, its CPU time in *cpu. */
static uint64_t owner_frame(owner *o, uint64_t *cpu) {
    uint64_t c0 = thread_cpu_ns();
    uint64_t t0 = bench_now_ns();
    for (size_t k = 0; k < o->m; k++) {
        size_t j = (size_t)(bench_rand(&o->rng) % (o->live - k));
        ark_pool_remove(o->p, o->h[j]);
        o->h[j] = o->h[o->live - k - 1];
    }
    for (size_t k = 0; k < o->m; k++) {
        owner_put(o, o->live - o->m + k);
    }
    uint64_t sum = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(o->p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        sum += xbits((const elem *)it.elem);
    }
    o->check += sum;
    uint64_t t = bench_now_ns() - t0;
    *cpu = thread_cpu_ns() - c0;
    return t;
}

/* Frames of one block; their times (us) appended to t, CPU times to c. */
static void owner_block(owner *o, int frames, double *t, double *c, int *nt) {
    for (int f = 0; f < frames; f++) {
        uint64_t cpu;
        t[*nt] = (double)owner_frame(o, &cpu) / 1000.0;
        c[(*nt)++] = (double)cpu / 1000.0;
    }
}

typedef struct cfg {
    size_t live;
    int frames, blocks;
} cfg;

static cfg cfg_for(bench_mode m) {
    cfg c = {100000, 10, 12};
    if (m == BENCH_SMOKE) {
        c.live = 10000;
        c.frames = 2;
        c.blocks = 1;
    } else if (m == BENCH_QUICK) {
        c.blocks = 4;
    }
    return c;
}

static void run_config(const cfg *c, int threads, size_t batch) {
    ark_pool *p;
    ark_pool_config pc = {ARK_POOL_ELEM(elem)};
    if (ark_pool_create(&p, &pc) != ARK_OK) {
        exit(1);
    }
    owner o = {p,          xmalloc(c->live * sizeof(ark_handle)),
               c->live,    c->live / 10,
               BENCH_SEED, 0,
               0};
    for (size_t k = 0; k < c->live; k++) {
        owner_put(&o, k);
    }
    int total = c->frames * c->blocks;
    double *alone = calloc((size_t)total, sizeof *alone);
    double *with = calloc((size_t)total, sizeof *with);
    double *calone = calloc((size_t)total, sizeof *calone);
    double *cwith = calloc((size_t)total, sizeof *cwith);
    double *other = calloc((size_t)total, sizeof *other);
    double *cother = calloc((size_t)total, sizeof *cother);
    if (alone == NULL || with == NULL || calone == NULL || cwith == NULL ||
        other == NULL || cother == NULL) {
        exit(1);
    }
    ark_pool *elsewhere;
    if (ark_pool_create(&elsewhere, &pc) != ARK_OK) {
        exit(1);
    }
    int na = 0, nw = 0, no = 0;
    double warm[5] = {0}, cwarm[5] = {0};
    int nwarm = 0;
    owner_block(&o, 5, warm, cwarm, &nwarm);
    uint64_t claimed = 0, reused = 0, failures = 0, claim_ns = 0;
    for (int b = 0; b < 3 * c->blocks; b++) {
        int kind = (b + b / 3) % 3; /* alone, with, other, in turns */
        if (kind == 0) {
            owner_block(&o, c->frames, alone, calone, &na);
            continue;
        }
        _Atomic int stop;
        atomic_init(&stop, 0);
        claimer cl[MAX_THREADS];
        uint64_t t0 = bench_now_ns();
        for (int k = 0; k < threads; k++) {
            cl[k] = (claimer){
                .p = kind == 1 ? p : elsewhere, .batch = batch, .stop = &stop};
            if (pthread_create(&cl[k].th, NULL, claim_loop, &cl[k]) != 0) {
                exit(1);
            }
        }
        if (kind == 1) {
            owner_block(&o, c->frames, with, cwith, &nw);
        } else {
            owner_block(&o, c->frames, other, cother, &no);
        }
        atomic_store(&stop, 1);
        for (int k = 0; k < threads; k++) {
            pthread_join(cl[k].th, NULL);
            if (kind == 1) {
                claimed += cl[k].claimed;
                reused += cl[k].reused;
                failures += cl[k].failures;
            }
        }
        if (kind == 1) {
            claim_ns += bench_now_ns() - t0;
        }
    }
    char wl[64];
    double rate[1] = {(double)claimed / ((double)claim_ns / 1e9) / 1e6};
    snprintf(wl, sizeof wl, "rate_t%d_b%zu", threads, batch);
    bench_row("claims", wl, c->live, "ark", rate, 1, "M/s", 0);
    double ma = bench_median(alone, na), mw = bench_median(with, nw);
    snprintf(wl, sizeof wl, "frame_alone_t%d_b%zu", threads, batch);
    bench_row("claims", wl, c->live, "ark", alone, na, "us/frame", 0);
    snprintf(wl, sizeof wl, "frame_t%d_b%zu", threads, batch);
    bench_row("claims", wl, c->live, "ark", with, nw, "us/frame", 0);
    double ratio[1] = {mw / ma};
    snprintf(wl, sizeof wl, "ratio_t%d_b%zu", threads, batch);
    bench_row("claims", wl, c->live, "ark", ratio, 1, "x", 0);
    double ca = bench_median(calone, na);
    double cratio[1] = {bench_median(cwith, nw) / ca};
    snprintf(wl, sizeof wl, "cpu_ratio_t%d_b%zu", threads, batch);
    bench_row("claims", wl, c->live, "ark", cratio, 1, "x", 0);
    double mo = bench_median(other, no);
    snprintf(wl, sizeof wl, "frame_other_t%d_b%zu", threads, batch);
    bench_row("claims", wl, c->live, "ark", other, no, "us/frame", 0);
    double vs[1] = {mw / mo};
    snprintf(wl, sizeof wl, "vs_other_t%d_b%zu", threads, batch);
    bench_row("claims", wl, c->live, "ark", vs, 1, "x", 0);
    printf("# t%d b%zu: %" PRIu64 " claimed (%" PRIu64
           " batches of reused slots, %" PRIu64 " refused); pool %zu live, "
           "valid %d\n",
           threads, batch, claimed, reused, failures, ark_pool_count(p),
           ark_pool_validate(p) == ARK_OK);
    bench_keep(o.check);
    free(alone);
    free(with);
    free(calone);
    free(cwith);
    free(other);
    free(cother);
    free(o.h);
    ark_pool_destroy(elsewhere);
    ark_pool_destroy(p);
}

/* stock_b16: one thread; each round frees 2048 slots, flushes (1024 set
 * aside), times 64 claims of 16 from the stock, gives them back. */
static void stock_row(bench_mode mode) {
    ark_pool *p;
    ark_pool_config pc = {ARK_POOL_ELEM(elem)};
    if (ark_pool_create(&p, &pc) != ARK_OK) {
        exit(1);
    }
    enum { N = 4096 };
    ark_handle *h = xmalloc(N * sizeof *h), got[64 * 16];
    ark_handle one;
    ark_pool_claim(p, &one, 1); /* a claim is seen: flush sets aside */
    int rounds = mode == BENCH_SMOKE ? 3 : 200, nt = 0;
    double *t = calloc((size_t)rounds, sizeof *t);
    if (t == NULL) {
        exit(1);
    }
    uint64_t reused = 0;
    for (int r = 0; r < rounds; r++) {
        for (size_t k = 0; k < N; k++) {
            elem e = elem_make(k);
            ark_pool_insert(p, &e, &h[k]);
        }
        for (size_t k = 0; k < N / 2; k++) {
            ark_pool_remove(p, h[k]);
        }
        ark_pool_flush(p);
        uint64_t t0 = bench_now_ns();
        for (int b = 0; b < 64; b++) {
            if (ark_pool_claim(p, got + 16 * b, 16) != ARK_OK) {
                exit(1);
            }
        }
        t[nt++] = (double)(bench_now_ns() - t0) / 64;
        for (int k = 0; k < 64 * 16; k++) {
            reused += (got[k] >> 32) != 0;
            ark_pool_unclaim(p, got[k]);
        }
        for (size_t k = N / 2; k < N; k++) {
            ark_pool_remove(p, h[k]);
        }
        ark_pool_flush(p);
    }
    bench_row("claims", "stock_b16", 1024, "ark", t, nt, "ns/batch", reused);
    free(t);
    free(h);
    ark_pool_destroy(p);
}

int main(int argc, char **argv) {
    bench_args a = bench_parse(argc, argv, impls, 1);
    if (!bench_selected(&a, "ark")) {
        return 0;
    }
    cfg c = cfg_for(a.mode);
    bench_print_build();
    stock_row(a.mode);
    static const int threads[] = {1, 2, 4};
    static const size_t batches[] = {1, 16, 256};
    for (size_t t = 0; t < 3; t++) {
        for (size_t b = 0; b < 3; b++) {
            run_config(&c, threads[t], batches[b]);
        }
    }
    return 0;
}
