/* SPDX-License-Identifier: MIT */
/*
 * pool_workloads.h - the workloads of section `pool` for one handle
 * container, written once and instantiated per implementation (C and
 * C++). No include guard: include it once per implementation after
 * defining
 *   PW_IMPL          the implementation's name (a string)
 *   PW_FN(x)         a unique function name for x, e.g. ark_##x
 *   PW_C             the container type; PW_H the handle type
 *   PW_NEW(rsv, st)  a new PW_C * (rsv: elements to reserve, 0 = none;
 *                    st: true for the stale workload)
 *   PW_DEL(c)        destroy it
 *   PW_PUT(c, id)    insert elem_make(id), evaluate to its handle
 *   PW_GET(c, h)     const elem * of h, or NULL
 *   PW_REMOVE(c, h)  remove h
 *   PW_COUNT(c)      live elements
 *   PW_SUM(c)        sum of xbits over every live element (the iteration
 *                    loop a user writes)
 *   PW_RESERVE       1 to reserve n before inserting (a second
 *                    implementation name), else 0
 * The recipe (bench_pool.c's header comment) is the same for every
 * implementation, so the checksums agree. Every timed loop is the one a
 * user writes: handles kept in an array, `e = get(c, picks[k]); sum +=
 * x(e)`, the picks array read inside the timed loop.
 */

/* Handle arrays: malloc in C, new[] in C++ (iterators are handles); both
 * write every byte, so the arrays are resident before a memory probe. */
#ifdef __cplusplus
#define PW_HALLOC(n) (new PW_H[(n) == 0 ? 1 : (n)]())
#define PW_HFREE(p) (delete[](p))
#else
#define PW_HALLOC(n)                                                           \
    ((PW_H *)memset(xmalloc((n) * sizeof(PW_H)), 0, (n) * sizeof(PW_H)))
#define PW_HFREE(p) free(p)
#endif

/* stale (n): half live, half stale handles, alternately. */
static void PW_FN(stale)(const bench_args *a, size_t n) {
    uint32_t *perm = perm_make(n);
    PW_H *h = PW_HALLOC(n);
    PW_H *s = PW_HALLOC(n / 2 * 2); /* the probe sequence */
    double t[5];
    uint64_t sum = 0, accepted = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        PW_C *c = PW_NEW(PW_RESERVE ? n : 0, true);
        for (size_t i = 0; i < n; i++) {
            h[i] = PW_PUT(c, i);
        }
        for (size_t k = 0; k < n / 2; k++) {
            s[2 * k + 1] = h[perm[k]];
            PW_REMOVE(c, s[2 * k + 1]);
        }
        for (size_t k = 0; k < n / 2; k++) {
            h[perm[k]] = PW_PUT(c, n + k);
            s[2 * k] = h[perm[k]];
        }
        sum = accepted = 0;
        uint64_t t0 = bench_now_ns();
        for (size_t k = 0; k < n / 2; k++) {
            const elem *e = PW_GET(c, s[2 * k]);
            if (e != NULL) {
                sum += xbits(e);
            }
            e = PW_GET(c, s[2 * k + 1]);
            if (e != NULL) {
                sum += xbits(e);
                accepted++;
            }
        }
        t[run] = (double)(bench_now_ns() - t0) / (double)(n / 2 * 2);
        PW_DEL(c);
    }
    stale_rows(PW_IMPL, n, t, run, sum, accepted);
    PW_HFREE(s);
    PW_HFREE(h);
    free(perm);
}

/* One run of seq (n): insert ids 0..n-1 (handles h), iterate, get h[i]
 * in order, then get picks[k] and remove picks[k], where picks[k] =
 * h[perm[k]] is the handle array in random order. b and e get each
 * phase's begin and end time, c its checksum; *mem (if not NULL) the
 * bytes per element the peak RSS grew by while inserting. */
static void PW_FN(seq_once)(size_t n, const uint32_t *perm, PW_H *h,
                            PW_H *picks, uint64_t b[SEQ_ROWS],
                            uint64_t e[SEQ_ROWS], uint64_t c[SEQ_ROWS],
                            double *mem) {
    long base = mem != NULL ? mem_begin() : 0;
    PW_C *box = PW_NEW(PW_RESERVE ? n : 0, false);
    b[0] = bench_now_ns();
    for (size_t i = 0; i < n; i++) {
        h[i] = PW_PUT(box, i);
    }
    e[0] = bench_now_ns();
    if (mem != NULL) {
        *mem = mem_end(base, n);
    }
    c[0] = PW_COUNT(box);
    b[1] = bench_now_ns();
    c[1] = PW_SUM(box);
    e[1] = b[2] = bench_now_ns();
    uint64_t sum = 0; /* a local, as in a user's loop: a sum kept in
                       * memory (c[2]) may alias the container's fields,
                       * which the compiler then reloads every lookup */
    for (size_t i = 0; i < n; i++) {
        const elem *x = PW_GET(box, h[i]);
        if (x != NULL) {
            sum += xbits(x);
        }
    }
    e[2] = bench_now_ns();
    c[2] = sum;
    for (size_t k = 0; k < n; k++) {
        picks[k] = h[perm[k]];
    }
    sum = 0;
    b[3] = bench_now_ns();
    for (size_t k = 0; k < n; k++) {
        const elem *x = PW_GET(box, picks[k]);
        if (x != NULL) {
            sum += xbits(x);
        }
    }
    e[3] = b[4] = bench_now_ns();
    c[3] = sum;
    size_t before = PW_COUNT(box);
    for (size_t k = 0; k < n; k++) {
        PW_REMOVE(box, picks[k]);
    }
    e[4] = bench_now_ns();
    c[4] = before - PW_COUNT(box);
    PW_DEL(box);
}

/* seq (n), rows <fam>_insert, _iterate, _get_seq, _get_random,
 * _remove_random and _memory (first run only): seq_once repeated. */
static void PW_FN(seq)(const bench_args *a, const char *fam, size_t n) {
    uint32_t *perm = perm_make(n);
    PW_H *h = PW_HALLOC(n);
    PW_H *picks = PW_HALLOC(n);
    double t[SEQ_ROWS][5], mem = 0;
    uint64_t c5[SEQ_ROWS] = {0}, b[SEQ_ROWS], e[SEQ_ROWS];
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        PW_FN(seq_once)(n, perm, h, picks, b, e, c5, run == 0 ? &mem : NULL);
        seq_store(t, run, b, e, n);
    }
    seq_rows(PW_IMPL, fam, n, t, run, c5, mem);
    PW_HFREE(picks);
    PW_HFREE(h);
    free(perm);
}

/* holes (n): insert ids 0..n-1, remove h[perm[k]] for k < n/10, then
 * iterate HOLES_REPS times; ns per live element visited. */
static void PW_FN(holes)(const bench_args *a, size_t n) {
    uint32_t *perm = perm_make(n);
    PW_H *h = PW_HALLOC(n);
    size_t m = n / 10, live = n - m;
    double t[5];
    uint64_t sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        PW_C *c = PW_NEW(PW_RESERVE ? n : 0, false);
        for (size_t i = 0; i < n; i++) {
            h[i] = PW_PUT(c, i);
        }
        for (size_t k = 0; k < m; k++) {
            PW_REMOVE(c, h[perm[k]]);
        }
        sum = 0;
        uint64_t t0 = bench_now_ns();
        for (int r = 0; r < HOLES_REPS; r++) {
            sum += PW_SUM(c);
        }
        t[run] = (double)(bench_now_ns() - t0) / ((double)live * HOLES_REPS);
        PW_DEL(c);
    }
    bench_row("pool", "holes_iterate", n, PW_IMPL, t, run, "ns/elem", sum);
    PW_HFREE(h);
    free(perm);
}

/* churn (live L): frames of remove L/10 at random, insert as many,
 * iterate all. */
static void PW_FN(churn)(const bench_args *a, size_t live) {
    PW_H *h = PW_HALLOC(live);
    double tf[5], tit[5], trm[5], tin[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int frames = sizes_for(a->mode).frames, run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(a, run, start); run++) {
        uint64_t st = BENCH_SEED, next = live;
        PW_C *c = PW_NEW(PW_RESERVE ? live : 0, false);
        for (size_t i = 0; i < live; i++) {
            h[i] = PW_PUT(c, i);
        }
        uint64_t frame_ns = 0, iter_ns = 0, rm_ns = 0, in_ns = 0;
        check = 0;
        for (int f = 0; f < frames; f++) {
            uint64_t t0 = bench_now_ns();
            for (size_t k = 0; k < m; k++) {
                size_t j = (size_t)(bench_rand(&st) % (live - k));
                PW_REMOVE(c, h[j]);
                h[j] = h[live - k - 1];
            }
            uint64_t tr = bench_now_ns();
            for (size_t k = 0; k < m; k++) {
                h[live - m + k] = PW_PUT(c, next++);
            }
            uint64_t t1 = bench_now_ns();
            check += PW_SUM(c);
            uint64_t t2 = bench_now_ns();
            frame_ns += t2 - t0;
            iter_ns += t2 - t1;
            rm_ns += tr - t0;
            in_ns += t1 - tr;
        }
        tf[run] = (double)frame_ns / frames / 1000.0;
        tit[run] = (double)iter_ns / frames / 1000.0;
        trm[run] = (double)rm_ns / ((double)frames * (double)m);
        tin[run] = (double)in_ns / ((double)frames * (double)m);
        PW_DEL(c);
    }
    churn_rows(PW_IMPL, live, tf, tit, trm, tin, run, check);
    PW_HFREE(h);
}

/* Every workload of one implementation, smallest first so that the peak
 * RSS printed with each row is that workload's. */
static inline void PW_FN(run_all)(const bench_args *a) {
    sizes s = sizes_for(a->mode);
    peak_reset();
    PW_FN(stale)(a, s.stale);
    peak_reset();
    PW_FN(holes)(a, s.holes);
    PW_FN(seq)(a, "s001", s.s001);
    for (int k = 0; k < 2; k++) {
        peak_reset();
        PW_FN(churn)(a, s.churn[k]);
    }
    PW_FN(seq)(a, "s000", s.s000);
}

#undef PW_HALLOC
#undef PW_HFREE
