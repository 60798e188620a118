/* SPDX-License-Identifier: MIT */
/*
 * bench_pool.c - section `pool`: ark_pool against a plain C array (the
 * floor) and slotarray.h, the generational slot array a C programmer
 * writes by hand (slot = {element, uint32 generation}, free list threaded
 * through the holes). The peers (C++, Rust, Go) run the same workloads in
 * their own programs: bench/bench_pool_peers.cpp, bench/rust, bench/go.
 * Every one of them follows the recipe below step by step, so their
 * checksums agree. The handle containers share one implementation of the
 * recipe, bench/pool_workloads.h.
 *
 * Element: {float x, y, vx, vy} (16 bytes); element number id is
 * {(float)id, (float)(id + 1), 1, -1}. A checksum over elements is the sum
 * (mod 2^64) of the uint32 bit patterns of x, so it does not depend on
 * iteration order. perm(n) is a Fisher-Yates shuffle of 0..n-1 driven by
 * splitmix64 from BENCH_SEED: for i = n-1 down to 1, j = rand % (i + 1),
 * swap a[i], a[j]. Every workload restarts the PRNG from BENCH_SEED, and
 * every run of a workload does exactly the same operations.
 *
 * ark is created the way README and pool.h show, `{ARK_POOL_ELEM(elem)}`
 * (sizeof and _Alignof of the element: 20-byte slots); ark_default with
 * `{.elem_size = sizeof(elem)}` only, whose default alignment (16 for a
 * 16-byte element) makes 32-byte slots: what forgetting the alignment
 * costs.
 *
 * Random order: the handles live in an array h (insertion order); picks
 * is that array in random order (picks[k] = h[perm[k]], built untimed),
 * and the timed loop is the one a user writes:
 *     for k: e = get(c, picks[k]); if (e) sum += x(e);
 * reading picks sequentially inside the timed loop. The array floor reads
 * its random indices perm[k] the same way.
 *
 * Workloads (rows), smallest first so that the peak RSS printed with each
 * row is that workload's (the peak is reset before each one):
 * - stale (n): insert ids 0..n-1 (handles h), remove h[perm[k]] for
 *   k < n/2 (saved as S[2k+1]), insert ids n+k into h[perm[k]] (saved as
 *   S[2k]); then time get(S[j]) for j < n/2*2, reading S sequentially: a
 *   live and a stale handle alternately. Rows stale_get (ns/op, checksum =
 *   x bits of every element returned) and stale_accepted (stale handles
 *   that returned an element; must be 0).
 * - holes (n): insert ids 0..n-1, remove h[perm[k]] for k < n/10, then
 *   iterate everything HOLES_REPS times. Row holes_iterate in ns per live
 *   element. The array holds only the surviving ids (its floor: no holes).
 * - seq (s001 at n = 1M, s000 at n = 10M): insert ids 0..n-1 without
 *   reserve; iterate; get(h[i]) in order; get(picks[k]); remove(picks[k])
 *   for every k. Rows <fam>_insert, _iterate, _get_seq, _get_random,
 *   _remove_random (ns/op; the remove checksum is the number of elements
 *   removed) and _memory (peak RSS growth while inserting, bytes per
 *   element, first run only).
 * - churn (live L, F frames): insert ids 0..L-1 into h (untimed); each
 *   frame removes m = L/10 handles, for k < m: j = rand % (L - k), remove
 *   h[j], h[j] = h[L-k-1]; then inserts the next m ids into h[L-m+k]; then
 *   iterates everything. Rows churn_frame and churn_iterate in us/frame,
 *   churn_remove and churn_insert in ns/op; checksum = sum of the frames'
 *   iteration checksums.
 *
 * Each workload is repeated 5 times (once in smoke mode) and reports the
 * median, but stops repeating once it has used its time budget (8 s in
 * full mode, 1 s in quick mode) after at least one run, so the slowest
 * peers keep `make bench` within its time limit; min = max means one run.
 * Compare implementations of one run only, and prefer ROUNDS=3 (bench/
 * run.sh), which interleaves the implementations' processes. `--pair
 * ROUNDS [N]` compares ark and slotarray inside one process instead (see
 * pair_main); `--parts ROUNDS [N]` splits ark's removal into its parts
 * against slotarray's (pool_parts.h); `--first-fill IMPL [N]` times one
 * fill of a fresh process (first_fill_main).
 *
 * The array has no handles: get takes the index, churn removes position j
 * by swap-and-pop (the same elements the handle containers remove, since
 * they apply the same swap to h), seq's remove takes position
 * perm[k] % len. It is not run for stale (it cannot tell a stale index).
 */
#include "pool_recipe.h" /* first: it defines _POSIX_C_SOURCE */

#include "ark/pool.h"
#include "slotarray.h"

static const char *const impls[] = {"ark", "ark_default", "slotarray", "array"};
enum { NIMPLS = 4 };

/* ---- ark ---------------------------------------------------------- */

static ark_pool *ark_new(bool natural) {
    ark_pool *p;
    ark_pool_config cfg = {ARK_POOL_ELEM(elem)};
    if (!natural) {
        cfg.elem_align = 0;
    }
    if (ark_pool_create(&p, &cfg) != ARK_OK) {
        fprintf(stderr, "bench_pool: ark_pool_create failed\n");
        exit(1);
    }
    return p;
}

static ark_handle ark_put(ark_pool *p, uint64_t id) {
    elem e = elem_make(id);
    ark_handle h;
    if (ark_pool_insert(p, &e, &h) != ARK_OK) {
        fprintf(stderr, "bench_pool: ark_pool_insert failed\n");
        exit(1);
    }
    return h;
}

static uint64_t ark_sum(const ark_pool *p) {
    uint64_t sum = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        sum += xbits((const elem *)it.elem);
    }
    return sum;
}

#define PW_C ark_pool
#define PW_H ark_handle
#define PW_DEL(c) ark_pool_destroy(c)
#define PW_PUT(c, id) ark_put(c, id)
#define PW_GET(c, h) ((const elem *)ark_pool_get(c, h))
#define PW_REMOVE(c, h) ark_pool_remove(c, h)
#define PW_COUNT(c) ark_pool_count(c)
#define PW_SUM(c) ark_sum(c)
#define PW_RESERVE 0

#define PW_IMPL "ark"
#define PW_FN(x) ark_##x
#define PW_NEW(rsv, st) ark_new(true)
#include "pool_workloads.h"
#undef PW_IMPL
#undef PW_FN
#undef PW_NEW

#define PW_IMPL "ark_default"
#define PW_FN(x) arkd_##x
#define PW_NEW(rsv, st) ark_new(false)
#include "pool_workloads.h"
#undef PW_IMPL
#undef PW_FN
#undef PW_NEW

#undef PW_C
#undef PW_H
#undef PW_DEL
#undef PW_PUT
#undef PW_GET
#undef PW_REMOVE
#undef PW_COUNT
#undef PW_SUM

/* ---- slotarray: the hand-written generational slot array ----------- */

static slotarray *sa_new(void) {
    slotarray *a = xmalloc(sizeof *a);
    sa_init(a);
    return a;
}

static void sa_del(slotarray *a) {
    sa_free(a);
    free(a);
}

static sa_handle sa_put(slotarray *a, uint64_t id) {
    elem e = elem_make(id);
    return sa_insert(a, &e);
}

/* The loop a user writes over the slots. */
static uint64_t sa_sum(const slotarray *a) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < a->len; i++) {
        if (a->slots[i].gen & 1) {
            sum += xbits(&a->slots[i].u.v);
        }
    }
    return sum;
}

#define PW_IMPL "slotarray"
#define PW_FN(x) sa_##x
#define PW_C slotarray
#define PW_H sa_handle
#define PW_NEW(rsv, st) sa_new()
#define PW_DEL(c) sa_del(c)
#define PW_PUT(c, id) sa_put(c, id)
#define PW_GET(c, h) ((const elem *)sa_get(c, h))
#define PW_REMOVE(c, h) sa_remove(c, h)
#define PW_COUNT(c) sa_count(c)
#define PW_SUM(c) sa_sum(c)
#define PW_RESERVE 0
#include "pool_workloads.h"

/* ---- array: push with doubling growth, index access, swap-and-pop ---- */

typedef struct array {
    elem *v;
    size_t len, cap;
} array;

static void array_push(array *a, uint64_t id) {
    if (a->len == a->cap) {
        size_t ncap = a->cap < 16 ? 16 : a->cap * 2;
        elem *nv = realloc(a->v, ncap * sizeof *nv);
        if (nv == NULL) {
            fprintf(stderr, "bench_pool: out of memory\n");
            exit(1);
        }
        a->v = nv;
        a->cap = ncap;
    }
    a->v[a->len++] = elem_make(id);
}

static void array_swap_pop(array *a, size_t pos) { a->v[pos] = a->v[--a->len]; }

static uint64_t array_sum(const array *a) {
    uint64_t sum = 0;
    for (size_t i = 0; i < a->len; i++) {
        sum += xbits(&a->v[i]);
    }
    return sum;
}

/* holes: the array holds only the ids the handle containers keep. */
static void array_holes(const bench_args *args, size_t n) {
    uint32_t *perm = perm_make(n);
    unsigned char *gone = calloc(n, 1);
    if (gone == NULL) {
        exit(1);
    }
    size_t m = n / 10, live = n - m;
    for (size_t k = 0; k < m; k++) {
        gone[perm[k]] = 1;
    }
    double t[5];
    uint64_t sum = 0;
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(args, run, start); run++) {
        array a = {NULL, 0, 0};
        for (size_t i = 0; i < n; i++) {
            if (!gone[i]) {
                array_push(&a, i);
            }
        }
        sum = 0;
        uint64_t t0 = bench_now_ns();
        for (int r = 0; r < HOLES_REPS; r++) {
            sum += array_sum(&a);
        }
        t[run] = (double)(bench_now_ns() - t0) / ((double)live * HOLES_REPS);
        free(a.v);
    }
    bench_row("pool", "holes_iterate", n, "array", t, run, "ns/elem", sum);
    free(gone);
    free(perm);
}

static void array_churn(const bench_args *args, size_t live) {
    double tf[5], tit[5], trm[5], tin[5];
    uint64_t check = 0;
    size_t m = live / 10;
    int frames = sizes_for(args->mode).frames, run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(args, run, start); run++) {
        uint64_t st = BENCH_SEED, next = live;
        array a = {NULL, 0, 0};
        for (size_t i = 0; i < live; i++) {
            array_push(&a, i);
        }
        uint64_t frame_ns = 0, iter_ns = 0, rm_ns = 0, in_ns = 0;
        check = 0;
        for (int f = 0; f < frames; f++) {
            uint64_t t0 = bench_now_ns();
            for (size_t k = 0; k < m; k++) {
                array_swap_pop(&a, (size_t)(bench_rand(&st) % (live - k)));
            }
            uint64_t tr = bench_now_ns();
            for (size_t k = 0; k < m; k++) {
                array_push(&a, next++);
            }
            uint64_t t1 = bench_now_ns();
            check += array_sum(&a);
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
        free(a.v);
    }
    churn_rows("array", live, tf, tit, trm, tin, run, check);
}

static void array_seq(const bench_args *args, const char *fam, size_t n) {
    uint32_t *perm = perm_make(n);
    double t[SEQ_ROWS][5], mem = 0;
    uint64_t c[SEQ_ROWS] = {0}, b[SEQ_ROWS], e[SEQ_ROWS];
    int run;
    uint64_t start = bench_now_ns();
    for (run = 0; more_runs(args, run, start); run++) {
        long base = run == 0 ? mem_begin() : 0;
        array a = {NULL, 0, 0};
        b[0] = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            array_push(&a, i);
        }
        e[0] = bench_now_ns();
        if (run == 0) {
            mem = mem_end(base, n);
        }
        b[1] = bench_now_ns();
        c[0] = a.len;
        c[1] = array_sum(&a);
        e[1] = b[2] = bench_now_ns();
        uint64_t sum = 0; /* a local, as in pool_workloads.h */
        for (size_t i = 0; i < n; i++) {
            sum += xbits(&a.v[i]);
        }
        e[2] = b[3] = bench_now_ns();
        c[2] = sum;
        sum = 0;
        for (size_t k = 0; k < n; k++) {
            sum += xbits(&a.v[perm[k]]);
        }
        e[3] = b[4] = bench_now_ns();
        c[3] = sum;
        size_t before = a.len;
        for (size_t k = 0; k < n; k++) {
            array_swap_pop(&a, perm[k] % a.len);
        }
        e[4] = bench_now_ns();
        c[4] = before - a.len;
        seq_store(t, run, b, e, n);
        free(a.v);
    }
    seq_rows("array", fam, n, t, run, c, mem);
    free(perm);
}

/* The workloads of every implementation, for workload-major runs. */
typedef struct impl_fns {
    void (*stale)(const bench_args *, size_t);
    void (*holes)(const bench_args *, size_t);
    void (*seq)(const bench_args *, const char *, size_t);
    void (*churn)(const bench_args *, size_t);
} impl_fns;

static const impl_fns fns[NIMPLS] = {
    {ark_stale, ark_holes, ark_seq, ark_churn},
    {arkd_stale, arkd_holes, arkd_seq, arkd_churn},
    {sa_stale, sa_holes, sa_seq, sa_churn},
    {NULL, array_holes, array_seq, array_churn}, /* no stale: no handles */
};

/* ---- --pair and --parts: ark and the hand-rolled array in one process */

/* What both same-process modes use: the random order and handle arrays
 * for N elements of ark (ah, ap) and of slotarray (sh, sp). */
typedef struct same_process {
    uint32_t *perm;
    ark_handle *ah, *ap;
    sa_handle *sh, *sp;
} same_process;

/* Check a mode's ROUNDS and N and allocate its arrays; false (usage
 * printed) when they are out of range. */
static bool same_process_begin(same_process *m, const char *mode, int rounds,
                               size_t n) {
    if (rounds < 1 || rounds > BENCH_PAIR_MAX || n < 1 || n > UINT32_MAX) {
        fprintf(stderr, "bench_pool: %s ROUNDS (1-%d) [N]\n", mode,
                BENCH_PAIR_MAX);
        return false;
    }
    m->perm = perm_make(n);
    m->ah = xmalloc(n * sizeof *m->ah);
    m->ap = xmalloc(n * sizeof *m->ap);
    m->sh = xmalloc(n * sizeof *m->sh);
    m->sp = xmalloc(n * sizeof *m->sp);
    return true;
}

static void same_process_end(same_process *m) {
    free(m->sp);
    free(m->sh);
    free(m->ap);
    free(m->ah);
    free(m->perm);
}

/* bench_pool --pair ROUNDS [N]: one seq run (N elements, default 1M) of
 * ark and of slotarray in turn, ROUNDS times, the order swapped every
 * round, so that both meet the same phases of a busy host (separate
 * processes, as `make bench` runs them, can land in different ones).
 * Prints each phase's median ns per operation for both and the median
 * (min-max) of the per-round ratios ark / slotarray. Both must agree on
 * every checksum. */
static int pair_main(int rounds, size_t n) {
    static const char *const names[SEQ_ROWS] = {"insert", "iterate", "get_seq",
                                                "get_random", "remove_random"};
    same_process m;
    if (!same_process_begin(&m, "--pair", rounds, n)) {
        return 2;
    }
    static double t[2][SEQ_ROWS][BENCH_PAIR_MAX];
    uint64_t b[SEQ_ROWS], e[SEQ_ROWS], c[2][SEQ_ROWS];
    int status = 0;
    for (int r = 0; r < rounds && status == 0; r++) {
        for (int turn = 0; turn < 2; turn++) {
            int who = (r + turn) & 1; /* 0 ark, 1 slotarray */
            if (who == 0) {
                ark_seq_once(n, m.perm, m.ah, m.ap, b, e, c[0], NULL);
            } else {
                sa_seq_once(n, m.perm, m.sh, m.sp, b, e, c[1], NULL);
            }
            for (int w = 0; w < SEQ_ROWS; w++) {
                t[who][w][r] = (double)(e[w] - b[w]) / (double)n;
            }
        }
        if (memcmp(c[0], c[1], sizeof c[0]) != 0) {
            fprintf(stderr, "bench_pool: --pair checksums differ\n");
            status = 1;
        }
    }
    if (status == 0) {
        bench_pair_head("pool (16-byte elements)", rounds, n, "ark",
                        "slotarray");
        for (int w = 0; w < SEQ_ROWS; w++) {
            bench_pair_row(names[w], t[0][w], t[1][w], rounds);
        }
    }
    same_process_end(&m);
    return status;
}

#include "pool_parts.h"

/* bench_pool --first-fill IMPL [N]: the first fill of a fresh process,
 * what a program that starts and loads its world pays: N elements
 * (default 10M) inserted without reserve into a new pool (IMPL ark) or
 * slot array (slotarray), nothing else run before it but the handle
 * array's allocation, which is touched first. Prints ns per insert and the
 * process's AnonHugePages. Run it in a loop of fresh processes, the two
 * alternating (docs/bench.md): the cost of fresh memory depends on what
 * the kernel and the host hand out at that moment, which one fill inside a
 * long run of other workloads does not show. */
/* The process's AnonHugePages in kB, or -1. */
static long anon_huge_kb(void) {
    long kb = -1;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "AnonHugePages:", 14) == 0) {
            kb = strtol(line + 14, NULL, 10);
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kb;
}

static int first_fill_main(const char *impl, size_t n) {
    bool ark = strcmp(impl, "ark") == 0;
    if ((!ark && strcmp(impl, "slotarray") != 0) || n < 1 || n > UINT32_MAX) {
        fprintf(stderr, "bench_pool: --first-fill ark|slotarray [N]\n");
        return 2;
    }
    uint64_t *h = xmalloc(n * sizeof *h);
    memset(h, 0xff, n * sizeof *h);
    uint64_t t0, t1, check;
    long huge_kb;
    if (ark) {
        ark_pool *p = ark_new(true);
        t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = ark_put(p, i);
        }
        t1 = bench_now_ns();
        huge_kb = anon_huge_kb();
        check = ark_sum(p);
        ark_pool_destroy(p);
    } else {
        slotarray *a = sa_new();
        t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            h[i] = sa_put(a, i);
        }
        t1 = bench_now_ns();
        huge_kb = anon_huge_kb();
        check = sa_sum(a);
        sa_del(a);
    }
    bench_keep(h[n - 1]);
    printf("first_fill,%s,%zu,%.2f ns/insert,AnonHugePages %ld kB,%llu\n", impl,
           n, (double)(t1 - t0) / (double)n, huge_kb,
           (unsigned long long)check);
    free(h);
    return 0;
}

/* Workload-major: every selected implementation runs one workload before
 * any runs the next, in an order that rotates per workload, so the
 * implementations of one cell run seconds apart, not minutes (run
 * without --impl for side-by-side figures; bench/run.sh runs one process
 * per implementation for their peak RSS). */
int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--pair") == 0) {
        return pair_main(atoi(argv[2]),
                         argc >= 4 ? (size_t)strtoull(argv[3], NULL, 10)
                                   : 1000000);
    }
    if (argc >= 3 && strcmp(argv[1], "--parts") == 0) {
        return parts_main(atoi(argv[2]),
                          argc >= 4 ? (size_t)strtoull(argv[3], NULL, 10)
                                    : 1000000);
    }
    if (argc >= 3 && strcmp(argv[1], "--first-fill") == 0) {
        return first_fill_main(argv[2],
                               argc >= 4 ? (size_t)strtoull(argv[3], NULL, 10)
                                         : 10000000);
    }
    bench_args args = bench_parse(argc, argv, impls, NIMPLS);
    sizes s = sizes_for(args.mode);
    for (int w = 0; w < 6; w++) {
        for (int j = 0; j < NIMPLS; j++) {
            int k = (w + j) % NIMPLS;
            const impl_fns *f = &fns[k];
            if (!bench_selected(&args, impls[k])) {
                continue;
            }
            peak_reset();
            switch (w) {
            case 0:
                if (f->stale != NULL) {
                    f->stale(&args, s.stale);
                }
                break;
            case 1:
                f->holes(&args, s.holes);
                break;
            case 2:
                f->seq(&args, "s001", s.s001);
                break;
            case 3:
            case 4:
                f->churn(&args, s.churn[w - 3]);
                break;
            default:
                f->seq(&args, "s000", s.s000);
                break;
            }
        }
    }
    return 0;
}
