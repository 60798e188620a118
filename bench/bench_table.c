/* SPDX-License-Identifier: MIT */
/*
 * bench_table.c - ark_table against plain malloc'd arrays (the floor) and
 * an array of structs, on rows of {x, y, vx, vy} floats.
 *
 * Workloads (section "table"):
 *   update    x += vx * dt; y += vy * dt over every row, ns per row: one
 *             noinline function, update_soa(x, y, vx, vy, n), called on
 *             the table's 4 columns and on 4 aligned_alloc(64) arrays
 *             (plain_arrays) holding the same values, plus aos's own loop,
 *             in ONE process, interleaved: UPDATE_TURNS turns, each
 *             running UPDATE_FRAMES frames of every implementation (the
 *             order rotates per turn); each row is the median of the
 *             turns (min, max beside it). Sizes 1M, 4M and 10M rows (full
 *             mode). The three update rows come from the process that
 *             runs ark_table (run.sh --impl ark_table); the plain_arrays
 *             and aos processes skip update, so their peak RSS is not
 *             comparable on update rows. update_paired (unit "ratio") is
 *             the median over the turns of table / plain_arrays within
 *             one turn. update_user and update_user_paired: the same
 *             frame as a user writes it (update_user: a plain function,
 *             no restrict, inlined into each caller, scalar at -O2) on
 *             the table's columns and on the arrays, in the same turns.
 *   insert    insert N rows into an empty container, ns per insert
 *   remove10  remove 10% of N rows by id/handle in random order (swap and
 *             pop), ns per remove
 *   get_row   handle -> row then read x, for every row in random order,
 *             ns per lookup (plain/aos: a uint32 index array lookup)
 * plain_arrays and aos keep the same slot -> row / row -> slot index arrays
 * the table keeps, without generations, so insert and remove10 compare
 * like with like. Every implementation draws the same values and the same
 * permutation from BENCH_SEED; checksums are integer sums of float bits in
 * row order (or over the lookups), so they agree exactly.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "ark/ark.h"
#include "bench_common.h"

static const char *const impls[] = {"ark_table", "plain_arrays", "aos"};
enum { NIMPLS = 3 };

typedef struct body {
    float x, y, vx, vy;
} body;

static const size_t col_sizes[4] = {4, 4, 4, 4};
static const float dt = 1.0f / 60.0f;

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Row i's initial values, the same for every implementation. */
static body initial(uint64_t *state) {
    uint64_t r = bench_rand(state);
    body b = {(float)(r & 0xffff), (float)((r >> 16) & 0xffff),
              (float)((r >> 32) & 0xff) - 128.0f,
              (float)((r >> 40) & 0xff) - 128.0f};
    return b;
}

/* A random permutation of [0, n). */
static uint32_t *permutation(size_t n) {
    uint32_t *p = malloc(n * sizeof *p);
    if (p == NULL) {
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint32_t)i;
    }
    uint64_t state = BENCH_SEED ^ 0x5eed;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(bench_rand(&state) % i);
        uint32_t t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
    }
    return p;
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* ---- ark_table ---------------------------------------------------- */

static ark_table *table_make(void) {
    ark_table_config cfg = {.column_sizes = col_sizes, .ncolumns = 4};
    ark_table *t;
    if (ark_table_create(&t, &cfg) != ARK_OK) {
        exit(1);
    }
    return t;
}

static void table_fill(ark_table *t, size_t n, ark_handle *hs) {
    uint64_t state = BENCH_SEED;
    for (size_t i = 0; i < n; i++) {
        size_t r;
        if (ark_table_insert(t, &hs[i], &r) != ARK_OK) {
            exit(1);
        }
        body b = initial(&state);
        ((float *)ark_table_column(t, 0))[r] = b.x;
        ((float *)ark_table_column(t, 1))[r] = b.y;
        ((float *)ark_table_column(t, 2))[r] = b.vx;
        ((float *)ark_table_column(t, 3))[r] = b.vy;
    }
}

/* The per-frame loop, shared by the table and the plain arrays: one
 * out-of-line copy, so both run exactly the same machine code. gcc -O2
 * (very-cheap cost model) vectorizes it only without runtime alias checks
 * and without a scalar epilogue: hence restrict-qualified parameters
 * (restrict on block-scope locals loaded from the table is not enough for
 * gcc 12) and a trip count the compiler can see is a multiple of 8. */
__attribute__((noinline)) static void
update_soa(float *restrict x, float *restrict y, const float *restrict vx,
           const float *restrict vy, size_t n) {
    n &= ~(size_t)7;
    for (size_t i = 0; i < n; i++) {
        x[i] += vx[i] * dt;
        y[i] += vy[i] * dt;
    }
}

/* The same frame as a user writes it: no restrict, no noinline, the row
 * count as it is. gcc -O2 keeps it scalar for the table and the arrays
 * alike; both calls below get their own inlined copy. */
static void update_user(float *x, float *y, const float *vx, const float *vy,
                        size_t n) {
    for (size_t i = 0; i < n; i++) {
        x[i] += vx[i] * dt;
        y[i] += vy[i] * dt;
    }
}

/* The table's frame: whole groups of 8 rows (padding rows are zero, so
 * they stay zero). */
static void table_update(ark_table *t) {
    update_soa(ark_table_column(t, 0), ark_table_column(t, 1),
               ark_table_column(t, 2), ark_table_column(t, 3),
               (ark_table_rows(t) + 7) & ~(size_t)7);
}

static uint64_t table_sum(const ark_table *t) {
    const float *x = ark_table_column(t, 0);
    const float *y = ark_table_column(t, 1);
    uint64_t s = 0;
    for (size_t i = 0; i < ark_table_rows(t); i++) {
        s += fbits(x[i]) * 3u + fbits(y[i]);
    }
    return s;
}

/* ---- plain arrays and array of structs ---------------------------- */

/* Both keep slot -> row (index) and row -> slot (back) arrays; slot ids
 * are insertion numbers, never reused. aos != NULL selects the AoS form. */
typedef struct plain {
    float *x, *y, *vx, *vy;
    body *aos;
    uint32_t *index, *back;
    size_t count, cap, issued;
} plain;

static void plain_grow(plain *p, bool aos) {
    size_t ncap = p->cap < 64 ? 64 : p->cap * 2;
    if (aos) {
        body *b = realloc(p->aos, ncap * sizeof *b);
        if (b == NULL) {
            exit(1);
        }
        p->aos = b;
    } else {
        float **cols[4] = {&p->x, &p->y, &p->vx, &p->vy};
        for (int k = 0; k < 4; k++) {
            float *c = realloc(*cols[k], ncap * sizeof(float));
            if (c == NULL) {
                exit(1);
            }
            *cols[k] = c;
        }
    }
    uint32_t *index = realloc(p->index, ncap * sizeof *index);
    uint32_t *back = index ? realloc(p->back, ncap * sizeof *back) : NULL;
    if (index == NULL || back == NULL) {
        exit(1);
    }
    p->index = index;
    p->back = back;
    p->cap = ncap;
}

static void plain_fill(plain *p, size_t n, bool aos) {
    uint64_t state = BENCH_SEED;
    for (size_t i = 0; i < n; i++) {
        if (p->count == p->cap) {
            plain_grow(p, aos);
        }
        size_t r = p->count++;
        uint32_t slot = (uint32_t)p->issued++;
        p->index[slot] = (uint32_t)r;
        p->back[r] = slot;
        body b = initial(&state);
        if (aos) {
            p->aos[r] = b;
        } else {
            p->x[r] = b.x;
            p->y[r] = b.y;
            p->vx[r] = b.vx;
            p->vy[r] = b.vy;
        }
    }
}

static void plain_remove(plain *p, uint32_t slot, bool aos) {
    size_t r = p->index[slot];
    size_t last = --p->count;
    if (aos) {
        p->aos[r] = p->aos[last];
    } else {
        p->x[r] = p->x[last];
        p->y[r] = p->y[last];
        p->vx[r] = p->vx[last];
        p->vy[r] = p->vy[last];
    }
    p->back[r] = p->back[last];
    p->index[p->back[r]] = (uint32_t)r;
}

static void plain_free(plain *p) {
    free(p->x);
    free(p->y);
    free(p->vx);
    free(p->vy);
    free(p->aos);
    free(p->index);
    free(p->back);
    memset(p, 0, sizeof *p);
}

static void aos_update(body *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        b[i].x += b[i].vx * dt;
        b[i].y += b[i].vy * dt;
    }
}

static uint64_t plain_sum(const plain *p, bool aos) {
    uint64_t s = 0;
    for (size_t i = 0; i < p->count; i++) {
        float x = aos ? p->aos[i].x : p->x[i];
        float y = aos ? p->aos[i].y : p->y[i];
        s += fbits(x) * 3u + fbits(y);
    }
    return s;
}

/* ---- workloads ----------------------------------------------------- */

/* Turns and frames per turn of the interleaved update workload. With 15
 * turns the paired medians of one run spread 0.79-1.22 at 4M and 10M rows
 * on a noisy 2-core VM, where 41 turns of the same loops in a separate
 * driver spread 0.82-1.02 (docs/design-notes.md, "The caller's loop"). */
enum { UPDATE_TURNS = 31, UPDATE_FRAMES = 4 };

/* 4 aligned_alloc(64) arrays filled with the table's values: what a C
 * programmer allocates for the same loop. */
static float *aligned_column(size_t n) {
    size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
    float *p = aligned_alloc(64, bytes);
    if (p == NULL) {
        exit(1);
    }
    return p;
}

static void run_update(const bench_args *a, size_t n) {
    bool sel[NIMPLS];
    for (int k = 0; k < NIMPLS; k++) {
        sel[k] = bench_selected(a, impls[k]);
    }
    /* The update rows come from the ark_table process (see the header). */
    if (a->impl != NULL && strcmp(a->impl, "ark_table") == 0) {
        sel[1] = sel[2] = true;
    } else if (a->impl != NULL) {
        return;
    }
    ark_handle *hs = xmalloc(n * sizeof *hs);
    ark_table *t = table_make();
    table_fill(t, n, hs);
    float *col[4];
    for (int k = 0; k < 4; k++) {
        col[k] = aligned_column(n);
    }
    uint64_t state = BENCH_SEED;
    for (size_t i = 0; i < n; i++) {
        body b = initial(&state);
        col[0][i] = b.x;
        col[1][i] = b.y;
        col[2][i] = b.vx;
        col[3][i] = b.vy;
    }
    plain p = {0};
    plain_fill(&p, n, true);
    int turns = a->mode == BENCH_SMOKE ? 1 : UPDATE_TURNS;
    /* Variants 0-2: the implementations with update_soa (aos: its own
     * loop); 3 and 4: the table and the arrays with update_user. */
    enum { NVAR = NIMPLS + 2 };
    bool on[NVAR] = {sel[0], sel[1], sel[2], sel[0] && sel[1],
                     sel[0] && sel[1]};
    double v[NVAR][UPDATE_TURNS];
    for (int turn = 0; turn < turns; turn++) {
        for (int j = 0; j < NVAR; j++) {
            int k = (turn + j) % NVAR;
            if (!on[k]) {
                continue;
            }
            uint64_t t0 = bench_now_ns();
            for (int f = 0; f < UPDATE_FRAMES; f++) {
                if (k == 0) {
                    table_update(t);
                } else if (k == 1) {
                    update_soa(col[0], col[1], col[2], col[3], n);
                } else if (k == 2) {
                    aos_update(p.aos, p.count);
                } else if (k == 3) {
                    update_user(ark_table_column(t, 0), ark_table_column(t, 1),
                                ark_table_column(t, 2), ark_table_column(t, 3),
                                ark_table_rows(t));
                } else {
                    update_user(col[0], col[1], col[2], col[3], n);
                }
                bench_keep((uint64_t)(uintptr_t)col[0]);
            }
            v[k][turn] =
                (double)(bench_now_ns() - t0) / ((double)UPDATE_FRAMES * n);
        }
    }
    /* The table and the arrays took as many frames again through
     * update_user: so does the array of structs, untimed, so that its
     * checksum agrees. */
    for (int f = 0; on[3] && sel[2] && f < UPDATE_FRAMES * turns; f++) {
        aos_update(p.aos, p.count);
    }
    uint64_t check[NIMPLS] = {table_sum(t), 0, plain_sum(&p, true)};
    for (size_t i = 0; i < n; i++) {
        check[1] += fbits(col[0][i]) * 3u + fbits(col[1][i]);
    }
    /* The paired ratio: table / plain arrays within each turn (the two
     * ran moments apart), median over the turns; steadier than the ratio
     * of the two medians when the machine's load drifts. */
    double paired[UPDATE_TURNS], paired_user[UPDATE_TURNS];
    if (sel[0] && sel[1]) {
        for (int turn = 0; turn < turns; turn++) {
            paired[turn] = v[0][turn] / v[1][turn];
            paired_user[turn] = v[3][turn] / v[4][turn];
        }
    }
    for (int k = 0; k < NIMPLS; k++) {
        if (sel[k]) {
            bench_row("table", "update", n, impls[k], v[k], turns, "ns/row",
                      check[k]);
        }
    }
    if (sel[0] && sel[1]) {
        bench_row("table", "update_paired", n, "ark_table", paired, turns,
                  "ratio", check[0]);
        bench_row("table", "update_user", n, "ark_table", v[3], turns, "ns/row",
                  check[0]);
        bench_row("table", "update_user", n, "plain_arrays", v[4], turns,
                  "ns/row", check[1]);
        bench_row("table", "update_user_paired", n, "ark_table", paired_user,
                  turns, "ratio", check[0]);
    }
    for (int k = 0; k < 4; k++) {
        free(col[k]);
    }
    ark_table_destroy(t);
    plain_free(&p);
    free(hs);
}

static void run_insert(const bench_args *a, const char *impl, size_t n) {
    double v[5];
    uint64_t check = 0;
    ark_handle *hs = xmalloc(n * sizeof *hs);
    for (int run = 0; run < a->runs; run++) {
        uint64_t t0 = bench_now_ns();
        if (strcmp(impl, "ark_table") == 0) {
            ark_table *t = table_make();
            table_fill(t, n, hs);
            v[run] = (double)(bench_now_ns() - t0) / (double)n;
            check = table_sum(t);
            ark_table_destroy(t);
        } else {
            bool aos = strcmp(impl, "aos") == 0;
            plain p = {0};
            plain_fill(&p, n, aos);
            v[run] = (double)(bench_now_ns() - t0) / (double)n;
            check = plain_sum(&p, aos);
            plain_free(&p);
        }
    }
    bench_row("table", "insert", n, impl, v, a->runs, "ns/op", check);
    free(hs);
}

static void run_remove10(const bench_args *a, const char *impl, size_t n,
                         const uint32_t *perm) {
    double v[5];
    uint64_t check = 0;
    size_t m = n / 10;
    ark_handle *hs = xmalloc(n * sizeof *hs);
    ark_handle *victims = xmalloc(m * sizeof *victims);
    for (int run = 0; run < a->runs; run++) {
        if (strcmp(impl, "ark_table") == 0) {
            ark_table *t = table_make();
            table_fill(t, n, hs);
            for (size_t i = 0; i < m; i++) {
                victims[i] = hs[perm[i]];
            }
            uint64_t t0 = bench_now_ns();
            for (size_t i = 0; i < m; i++) {
                if (ark_table_remove(t, victims[i]) != ARK_OK) {
                    exit(1);
                }
            }
            v[run] = (double)(bench_now_ns() - t0) / (double)m;
            check = table_sum(t);
            ark_table_destroy(t);
        } else {
            bool aos = strcmp(impl, "aos") == 0;
            plain p = {0};
            plain_fill(&p, n, aos);
            uint64_t t0 = bench_now_ns();
            for (size_t i = 0; i < m; i++) {
                plain_remove(&p, perm[i], aos);
            }
            v[run] = (double)(bench_now_ns() - t0) / (double)m;
            check = plain_sum(&p, aos);
            plain_free(&p);
        }
    }
    bench_row("table", "remove10", n, impl, v, a->runs, "ns/op", check);
    free(hs);
    free(victims);
}

static void run_get_row(const bench_args *a, const char *impl, size_t n,
                        const uint32_t *perm) {
    double v[5];
    uint64_t check = 0;
    if (strcmp(impl, "ark_table") == 0) {
        ark_handle *hs = xmalloc(n * sizeof *hs);
        ark_table *t = table_make();
        table_fill(t, n, hs);
        /* The handles to look up, in random order. */
        ark_handle *q = xmalloc(n * sizeof *q);
        for (size_t i = 0; i < n; i++) {
            q[i] = hs[perm[i]];
        }
        for (int run = 0; run < a->runs; run++) {
            const float *x = ark_table_column(t, 0);
            uint64_t s = 0;
            uint64_t t0 = bench_now_ns();
            for (size_t i = 0; i < n; i++) {
                size_t r = ark_table_row(t, q[i]);
                s += r == ARK_NO_ROW ? 0 : fbits(x[r]);
            }
            v[run] = (double)(bench_now_ns() - t0) / (double)n;
            check = s;
        }
        ark_table_destroy(t);
        free(q);
        free(hs);
    } else {
        bool aos = strcmp(impl, "aos") == 0;
        plain p = {0};
        plain_fill(&p, n, aos);
        for (int run = 0; run < a->runs; run++) {
            uint64_t s = 0;
            uint64_t t0 = bench_now_ns();
            for (size_t i = 0; i < n; i++) {
                uint32_t r = p.index[perm[i]];
                s += fbits(aos ? p.aos[r].x : p.x[r]);
            }
            v[run] = (double)(bench_now_ns() - t0) / (double)n;
            check = s;
        }
        plain_free(&p);
    }
    bench_row("table", "get_row", n, impl, v, a->runs, "ns/op", check);
}

int main(int argc, char **argv) {
    bench_args a = bench_parse(argc, argv, impls, NIMPLS);
    size_t sizes[2] = {1000000, 10000000};
    int nsizes = 2;
    if (a.mode == BENCH_SMOKE) {
        sizes[0] = 10000;
        nsizes = 1;
    } else if (a.mode == BENCH_QUICK) {
        nsizes = 1;
    }
    /* update at 1M, 4M and 10M rows in full mode. */
    size_t usizes[3] = {sizes[0], 4000000, 10000000};
    int nusizes = a.mode == BENCH_FULL ? 3 : 1;
    for (int s = 0; s < nusizes; s++) {
        run_update(&a, usizes[s]);
    }
    for (int s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        uint32_t *perm = permutation(n);
        /* Workload-major, so the implementations of one cell run close
         * together in time on a noisy machine. */
        for (int w = 1; w < 4; w++) {
            for (int k = 0; k < NIMPLS; k++) {
                if (!bench_selected(&a, impls[k])) {
                    continue;
                }
                if (w == 1) {
                    run_insert(&a, impls[k], n);
                } else if (w == 2) {
                    run_remove10(&a, impls[k], n, perm);
                } else {
                    run_get_row(&a, impls[k], n, perm);
                }
            }
        }
        free(perm);
    }
    return 0;
}
