/* SPDX-License-Identifier: MIT */
/*
 * bench_entity.c - entities with 16-byte components and tags: ark's keyed
 * pools and keyed tables against a hand-rolled sparse set of the EnTT
 * design (bench/sparse_set.h); the Rust peers (slotmap's SecondaryMap and
 * SparseSecondaryMap) are bench/rust/src/bin/bench_entity_rust.rs, with the
 * same workloads, values and checksums.
 *
 * Workloads (section "entities"; N entities made in order, entity k's
 * position {k, 2k, 0, 0}; half of them, drawn from BENCH_SEED, also get a
 * velocity; two tags of 30% each, drawn independently):
 *   add        add a position to every entity, in order; ns per entity
 *   get        read the position of every entity by its handle, in
 *              random order; ns per lookup
 *   update     position += velocity over the entities that have both
 *              (the loop a user writes over a query); ns per match
 *   tags       position.x += 1 over the entities carrying both tags;
 *              ns per match
 *   despawn    remove 10% of the entities in random order, with all
 *              their components and tags; ns per entity
 *   sweep      the same as a frame's sweep: mark another 10% in random
 *              order, then remove them in one go (ark: remove_later and
 *              flush; the sparse set removes each at once); ns per entity
 * "arrays" runs update over two plain arrays holding just the matching
 * entities' components: the floor of the update loop.
 *
 *   bench_entity --mode MODE [--impl NAME]   CSV rows (bench_common.h)
 *   bench_entity --pair ROUNDS N             every implementation in one
 *                                            process, rounds alternating,
 *                                            ratios to the sparse set
 */
#include "bench_common.h"

#include "ark/ark.h"
#include "sparse_set.h"

typedef struct vec4 {
    float x, y, z, w;
} vec4;

enum { IMPL_POOL, IMPL_TABLE, IMPL_SPARSE, IMPL_ARRAYS, NIMPLS };
static const char *const impls[NIMPLS] = {"ark_pool", "ark_table",
                                          "sparse_set", "arrays"};
enum { W_ADD, W_GET, W_UPDATE, W_TAGS, W_DESPAWN, W_SWEEP, NWORK };
static const char *const works[NWORK] = {"add",  "get",     "update",
                                         "tags", "despawn", "sweep"};
#define FRAMES 5

/* What every implementation builds from: the same draws. */
typedef struct plan {
    size_t n;
    unsigned char *has_vel, *tag_a, *tag_b;
    uint32_t *perm; /* a random order of [0, n) */
    size_t nvel, nboth;
} plan;

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static plan plan_make(size_t n) {
    plan p = {n, xmalloc(n), xmalloc(n), xmalloc(n),
              xmalloc(n * sizeof(uint32_t)), 0, 0};
    uint64_t st = BENCH_SEED;
    for (size_t k = 0; k < n; k++) {
        uint64_t r = bench_rand(&st);
        p.has_vel[k] = r & 1;
        p.tag_a[k] = (r >> 8) % 10 < 3;
        p.tag_b[k] = (r >> 24) % 10 < 3;
        p.nvel += p.has_vel[k];
        p.nboth += p.tag_a[k] && p.tag_b[k];
        p.perm[k] = (uint32_t)k;
    }
    for (size_t k = n; k > 1; k--) {
        size_t j = (size_t)(bench_rand(&st) % k);
        uint32_t t = p.perm[k - 1];
        p.perm[k - 1] = p.perm[j];
        p.perm[j] = t;
    }
    return p;
}

static void plan_free(plan *p) {
    free(p->has_vel);
    free(p->tag_a);
    free(p->tag_b);
    free(p->perm);
}

static vec4 pos_of(size_t k) { return (vec4){(float)k, 2.0f * (float)k, 0, 0}; }
static vec4 vel_of(size_t k) { return (vec4){(float)(k & 7), 1, 0.5f, 0}; }

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* One round's results: ns per unit of each workload, and checksums. */
typedef struct result {
    double ns[NWORK];
    uint64_t sum[NWORK];
} result;

static double per(uint64_t t0, uint64_t t1, size_t n) {
    return n == 0 ? 0 : (double)(t1 - t0) / (double)n;
}

/* ---- ark: components in keyed pools or keyed tables ------------------ */

typedef struct ark_world {
    ark_pool *units, *pos, *vel;      /* keyed pools (IMPL_POOL) */
    ark_table *tpos, *tvel;           /* keyed tables (IMPL_TABLE) */
    ark_idset *a, *b;
    ark_handle *e;
} ark_world;

static const size_t cols4[4] = {4, 4, 4, 4};

static void check(ark_status s) {
    if (s != ARK_OK) {
        fprintf(stderr, "ark: %s\n", ark_strerror(s));
        exit(1);
    }
}

static void ark_world_make(ark_world *w, const plan *p, int tables) {
    memset(w, 0, sizeof *w);
    ark_pool_config uc = {.elem_size = 4};
    check(ark_pool_create(&w->units, &uc));
    if (tables) {
        ark_table_config tc = {.column_sizes = cols4, .ncolumns = 4,
                               .keys = w->units};
        check(ark_table_create(&w->tpos, &tc));
        check(ark_table_create(&w->tvel, &tc));
    } else {
        ark_pool_config pc = {ARK_POOL_ELEM(vec4), .keys = w->units};
        check(ark_pool_create(&w->pos, &pc));
        check(ark_pool_create(&w->vel, &pc));
    }
    check(ark_idset_create(&w->a, NULL));
    check(ark_idset_create(&w->b, NULL));
    check(ark_pool_attach_idset(w->units, w->a));
    check(ark_pool_attach_idset(w->units, w->b));
    w->e = xmalloc(p->n * sizeof *w->e);
    for (size_t k = 0; k < p->n; k++) {
        uint32_t v = (uint32_t)k;
        check(ark_pool_insert(w->units, &v, &w->e[k]));
    }
}

static void ark_world_free(ark_world *w) {
    ark_table_destroy(w->tpos);
    ark_table_destroy(w->tvel);
    ark_pool_destroy(w->pos);
    ark_pool_destroy(w->vel);
    ark_idset_destroy(w->a);
    ark_idset_destroy(w->b);
    ark_pool_destroy(w->units);
    free(w->e);
}

/* Set row r of a table's 4 float columns to v. */
static void table_put(ark_table *t, size_t r, vec4 v) {
    ((float *)ark_table_column(t, 0))[r] = v.x;
    ((float *)ark_table_column(t, 1))[r] = v.y;
    ((float *)ark_table_column(t, 2))[r] = v.z;
    ((float *)ark_table_column(t, 3))[r] = v.w;
}

static uint64_t ark_pos_sum(const ark_world *w, const plan *p) {
    uint64_t s = 0;
    for (size_t k = 0; k < p->n; k++) {
        if (w->pos != NULL) {
            const vec4 *v = ark_pool_get(w->pos, w->e[k]);
            s += v == NULL ? 0 : fbits(v->x) + fbits(v->w);
        } else {
            size_t r = ark_table_row(w->tpos, w->e[k]);
            s += r == ARK_NO_ROW
                     ? 0
                     : fbits(((float *)ark_table_column(w->tpos, 0))[r]) +
                           fbits(((float *)ark_table_column(w->tpos, 3))[r]);
        }
    }
    return s;
}

__attribute__((noinline)) static void ark_update_pools(const ark_query *q) {
    for (ark_query_iter it = ark_query_iter_begin(q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        vec4 *p = ark_query_iter_elem(&it, 0);
        const vec4 *v = ark_query_iter_elem(&it, 1);
        p->x += v->x;
        p->y += v->y;
        p->z += v->z;
        p->w += v->w;
    }
}

__attribute__((noinline)) static void
ark_update_tables(const ark_query *q, ark_table *tp, ark_table *tv) {
    float *px = ark_table_column(tp, 0), *py = ark_table_column(tp, 1);
    float *pz = ark_table_column(tp, 2), *pw = ark_table_column(tp, 3);
    const float *vx = ark_table_column(tv, 0), *vy = ark_table_column(tv, 1);
    const float *vz = ark_table_column(tv, 2), *vw = ark_table_column(tv, 3);
    for (ark_query_iter it = ark_query_iter_begin(q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        size_t rp = ark_query_iter_row(&it, 0), rv = ark_query_iter_row(&it, 1);
        px[rp] += vx[rv];
        py[rp] += vy[rv];
        pz[rp] += vz[rv];
        pw[rp] += vw[rv];
    }
}

__attribute__((noinline)) static uint64_t ark_tags_pools(const ark_query *q) {
    uint64_t n = 0;
    for (ark_query_iter it = ark_query_iter_begin(q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        ((vec4 *)ark_query_iter_elem(&it, 0))->x += 1;
        n++;
    }
    return n;
}

__attribute__((noinline)) static uint64_t ark_tags_tables(const ark_query *q,
                                                          ark_table *tp) {
    float *px = ark_table_column(tp, 0);
    uint64_t n = 0;
    for (ark_query_iter it = ark_query_iter_begin(q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        px[ark_query_iter_row(&it, 0)] += 1;
        n++;
    }
    return n;
}

static result run_ark(const plan *p, int tables) {
    result res = {{0}, {0}};
    ark_world w;
    ark_world_make(&w, p, tables);
    size_t n = p->n;
    uint64_t t0 = bench_now_ns();
    for (size_t k = 0; k < n; k++) {
        vec4 v = pos_of(k);
        if (tables) {
            size_t r;
            check(ark_table_insert_at(w.tpos, w.e[k], &r));
            table_put(w.tpos, r, v);
        } else {
            check(ark_pool_insert_at(w.pos, w.e[k], &v));
        }
    }
    uint64_t t1 = bench_now_ns();
    res.ns[W_ADD] = per(t0, t1, n);
    /* get, random order */
    uint64_t s = 0;
    t0 = bench_now_ns();
    if (tables) {
        const float *px = ark_table_column(w.tpos, 0);
        for (size_t i = 0; i < n; i++) {
            s += fbits(px[ark_table_row(w.tpos, w.e[p->perm[i]])]);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            s += fbits(((const vec4 *)ark_pool_get(w.pos, w.e[p->perm[i]]))->x);
        }
    }
    t1 = bench_now_ns();
    res.ns[W_GET] = per(t0, t1, n);
    res.sum[W_GET] = s;
    /* velocities and tags, untimed */
    for (size_t k = 0; k < n; k++) {
        if (p->has_vel[k]) {
            if (tables) {
                size_t r;
                check(ark_table_insert_at(w.tvel, w.e[k], &r));
                table_put(w.tvel, r, vel_of(k));
            } else {
                check(ark_pool_insert_at(w.vel, w.e[k], &(vec4){0}));
                *(vec4 *)ark_pool_get(w.vel, w.e[k]) = vel_of(k);
            }
        }
        if (p->tag_a[k]) {
            check(ark_pool_tag(w.units, w.a, w.e[k]));
        }
        if (p->tag_b[k]) {
            check(ark_pool_tag(w.units, w.b, w.e[k]));
        }
    }
    ark_query q;
    ark_query_init(&q, w.units);
    if (tables) {
        check(ark_query_with_table(&q, w.tpos, NULL));
        check(ark_query_with_table(&q, w.tvel, NULL));
    } else {
        check(ark_query_with_pool(&q, w.pos, NULL));
        check(ark_query_with_pool(&q, w.vel, NULL));
    }
    double f[FRAMES];
    for (int r = 0; r < FRAMES; r++) {
        t0 = bench_now_ns();
        if (tables) {
            ark_update_tables(&q, w.tpos, w.tvel);
        } else {
            ark_update_pools(&q);
        }
        f[r] = per(t0, bench_now_ns(), p->nvel);
    }
    res.ns[W_UPDATE] = bench_median(f, FRAMES);
    res.sum[W_UPDATE] = ark_pos_sum(&w, p);
    ark_query qt;
    ark_query_init(&qt, w.units);
    if (tables) {
        check(ark_query_with_table(&qt, w.tpos, NULL));
    } else {
        check(ark_query_with_pool(&qt, w.pos, NULL));
    }
    check(ark_query_with_tag(&qt, w.a, NULL));
    check(ark_query_with_tag(&qt, w.b, NULL));
    uint64_t matches = 0;
    for (int r = 0; r < FRAMES; r++) {
        t0 = bench_now_ns();
        matches = tables ? ark_tags_tables(&qt, w.tpos) : ark_tags_pools(&qt);
        f[r] = per(t0, bench_now_ns(), p->nboth);
    }
    res.ns[W_TAGS] = bench_median(f, FRAMES);
    res.sum[W_TAGS] = matches + ark_pos_sum(&w, p);
    size_t nd = n / 10;
    t0 = bench_now_ns();
    for (size_t i = 0; i < nd; i++) {
        check(ark_pool_remove(w.units, w.e[p->perm[i]]));
    }
    t1 = bench_now_ns();
    res.ns[W_DESPAWN] = per(t0, t1, nd);
    res.sum[W_DESPAWN] =
        ark_pool_count(w.units) +
        (tables ? ark_table_count(w.tpos) + ark_table_count(w.tvel)
                : ark_pool_count(w.pos) + ark_pool_count(w.vel)) +
        ark_idset_count(w.a) + ark_idset_count(w.b);
    t0 = bench_now_ns();
    for (size_t i = nd; i < 2 * nd; i++) {
        check(ark_pool_remove_later(w.units, w.e[p->perm[i]]));
    }
    ark_pool_flush(w.units);
    t1 = bench_now_ns();
    res.ns[W_SWEEP] = per(t0, t1, nd);
    res.sum[W_SWEEP] =
        ark_pool_count(w.units) +
        (tables ? ark_table_count(w.tpos) + ark_table_count(w.tvel)
                : ark_pool_count(w.pos) + ark_pool_count(w.vel)) +
        ark_idset_count(w.a) + ark_idset_count(w.b);
    ark_world_free(&w);
    return res;
}

/* ---- the sparse set (EnTT's design) ---------------------------------- */

__attribute__((noinline)) static void ss_update(ss_set *pos, const ss_set *vel) {
    /* The view's loop: the smaller set drives, the other is looked up. */
    const vec4 *vd = (const vec4 *)(const void *)vel->data;
    for (uint32_t i = 0; i < vel->n; i++) {
        vec4 *p = ss_get(pos, vel->dense[i]);
        if (p != NULL) {
            const vec4 *v = &vd[i];
            p->x += v->x;
            p->y += v->y;
            p->z += v->z;
            p->w += v->w;
        }
    }
}

__attribute__((noinline)) static uint64_t ss_tags(ss_set *pos, const ss_set *a,
                                                  const ss_set *b) {
    const ss_set *small = a->n <= b->n ? a : b, *big = small == a ? b : a;
    uint64_t n = 0;
    for (uint32_t i = 0; i < small->n; i++) {
        ss_entity e = small->dense[i];
        if (ss_has(big, e)) {
            vec4 *p = ss_get(pos, e);
            if (p != NULL) {
                p->x += 1;
                n++;
            }
        }
    }
    return n;
}

static result run_sparse(const plan *p) {
    result res = {{0}, {0}};
    ss_registry reg = {0};
    ss_set pos = {.esz = sizeof(vec4)}, vel = {.esz = sizeof(vec4)};
    ss_set a = {0}, b = {0};
    size_t n = p->n;
    ss_entity *e = xmalloc(n * sizeof *e);
    for (size_t k = 0; k < n; k++) {
        e[k] = ss_create(&reg);
    }
    uint64_t t0 = bench_now_ns();
    for (size_t k = 0; k < n; k++) {
        vec4 v = pos_of(k);
        ss_add(&pos, e[k], &v);
    }
    uint64_t t1 = bench_now_ns();
    res.ns[W_ADD] = per(t0, t1, n);
    uint64_t s = 0;
    t0 = bench_now_ns();
    for (size_t i = 0; i < n; i++) {
        s += fbits(((const vec4 *)ss_get(&pos, e[p->perm[i]]))->x);
    }
    t1 = bench_now_ns();
    res.ns[W_GET] = per(t0, t1, n);
    res.sum[W_GET] = s;
    for (size_t k = 0; k < n; k++) {
        if (p->has_vel[k]) {
            vec4 v = vel_of(k);
            ss_add(&vel, e[k], &v);
        }
        if (p->tag_a[k]) {
            ss_add(&a, e[k], NULL);
        }
        if (p->tag_b[k]) {
            ss_add(&b, e[k], NULL);
        }
    }
    double f[FRAMES];
    for (int r = 0; r < FRAMES; r++) {
        t0 = bench_now_ns();
        ss_update(&pos, &vel);
        f[r] = per(t0, bench_now_ns(), p->nvel);
    }
    res.ns[W_UPDATE] = bench_median(f, FRAMES);
    uint64_t sum = 0;
    for (size_t k = 0; k < n; k++) {
        const vec4 *v = ss_get(&pos, e[k]);
        sum += fbits(v->x) + fbits(v->w);
    }
    res.sum[W_UPDATE] = sum;
    uint64_t matches = 0;
    for (int r = 0; r < FRAMES; r++) {
        t0 = bench_now_ns();
        matches = ss_tags(&pos, &a, &b);
        f[r] = per(t0, bench_now_ns(), p->nboth);
    }
    res.ns[W_TAGS] = bench_median(f, FRAMES);
    sum = 0;
    for (size_t k = 0; k < n; k++) {
        const vec4 *v = ss_get(&pos, e[k]);
        sum += fbits(v->x) + fbits(v->w);
    }
    res.sum[W_TAGS] = matches + sum;
    ss_set *sets[4] = {&pos, &vel, &a, &b};
    size_t nd = n / 10;
    t0 = bench_now_ns();
    for (size_t i = 0; i < nd; i++) {
        ss_destroy(&reg, sets, 4, e[p->perm[i]]);
    }
    t1 = bench_now_ns();
    res.ns[W_DESPAWN] = per(t0, t1, nd);
    res.sum[W_DESPAWN] = (reg.n - reg.nfree) + pos.n + vel.n + a.n + b.n;
    t0 = bench_now_ns();
    for (size_t i = nd; i < 2 * nd; i++) {
        ss_destroy(&reg, sets, 4, e[p->perm[i]]);
    }
    t1 = bench_now_ns();
    res.ns[W_SWEEP] = per(t0, t1, nd);
    res.sum[W_SWEEP] = (reg.n - reg.nfree) + pos.n + vel.n + a.n + b.n;
    for (int k = 0; k < 4; k++) {
        ss_set_free(sets[k]);
    }
    ss_registry_free(&reg);
    free(e);
    return res;
}

/* ---- the floor: two arrays of just the matching entities ------------- */

__attribute__((noinline)) static void arrays_update(vec4 *restrict p,
                                                    const vec4 *restrict v,
                                                    size_t m) {
    for (size_t i = 0; i < m; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
        p[i].z += v[i].z;
        p[i].w += v[i].w;
    }
}

static result run_arrays(const plan *p) {
    result res = {{0}, {0}};
    vec4 *pa = xmalloc(p->nvel * sizeof *pa), *va = xmalloc(p->nvel * sizeof *va);
    size_t m = 0;
    for (size_t k = 0; k < p->n; k++) {
        if (p->has_vel[k]) {
            pa[m] = pos_of(k);
            va[m] = vel_of(k);
            m++;
        }
    }
    double f[FRAMES];
    for (int r = 0; r < FRAMES; r++) {
        uint64_t t0 = bench_now_ns();
        arrays_update(pa, va, m);
        f[r] = per(t0, bench_now_ns(), m);
    }
    res.ns[W_UPDATE] = bench_median(f, FRAMES);
    uint64_t sum = 0; /* the entities without velocity keep their start */
    for (size_t k = 0, j = 0; k < p->n; k++) {
        vec4 v = p->has_vel[k] ? pa[j++] : pos_of(k);
        sum += fbits(v.x) + fbits(v.w);
    }
    res.sum[W_UPDATE] = sum;
    free(pa);
    free(va);
    return res;
}

static result run_impl(int impl, const plan *p) {
    switch (impl) {
    case IMPL_POOL:
        return run_ark(p, 0);
    case IMPL_TABLE:
        return run_ark(p, 1);
    case IMPL_SPARSE:
        return run_sparse(p);
    default:
        return run_arrays(p);
    }
}

/* ---- drivers ------------------------------------------------------------ */

static int pair_mode(int rounds, size_t n) {
    if (rounds < 1 || rounds > BENCH_PAIR_MAX) {
        return 2;
    }
    plan p = plan_make(n);
    static double t[NIMPLS][NWORK][BENCH_PAIR_MAX];
    result first[NIMPLS];
    for (int r = 0; r < rounds; r++) {
        for (int j = 0; j < NIMPLS; j++) {
            int impl = (j + r) % NIMPLS;
            result res = run_impl(impl, &p);
            for (int w = 0; w < NWORK; w++) {
                t[impl][w][r] = res.ns[w];
            }
            if (r == 0) {
                first[impl] = res;
            }
        }
    }
    bench_print_build();
    printf("bench_entity --pair: %d rounds, n = %zu, every implementation in "
           "one process (order rotated every round), ns per unit; ratio: "
           "median of the per-round ratios to the sparse set (update: to "
           "the arrays too)\n",
           rounds, n);
    printf("%-8s %10s %10s %10s %10s %9s %9s %9s\n", "workload", "ark_pool",
           "ark_table", "sparse", "arrays", "pool/ss", "table/ss",
           "pool/arr");
    int bad = 0;
    for (int w = 0; w < NWORK; w++) {
        double m[NIMPLS], qp[BENCH_PAIR_MAX], qt[BENCH_PAIR_MAX],
            qa[BENCH_PAIR_MAX];
        for (int r = 0; r < rounds; r++) {
            qp[r] = t[IMPL_POOL][w][r] / t[IMPL_SPARSE][w][r];
            qt[r] = t[IMPL_TABLE][w][r] / t[IMPL_SPARSE][w][r];
            qa[r] = w == W_UPDATE ? t[IMPL_POOL][w][r] / t[IMPL_ARRAYS][w][r]
                                  : 0;
        }
        for (int i = 0; i < NIMPLS; i++) {
            m[i] = bench_median(t[i][w], rounds);
        }
        printf("%-8s %10.2f %10.2f %10.2f %10.2f %9.3f %9.3f %9.3f\n",
               works[w], m[0], m[1], m[2], m[3], bench_median(qp, rounds),
               bench_median(qt, rounds),
               w == W_UPDATE ? bench_median(qa, rounds) : 0);
        /* Every implementation that runs w against the sparse set (the
         * arrays run update only), so a wrong sparse set shows too. */
        for (int i = 0; i < NIMPLS; i++) {
            if ((i != IMPL_ARRAYS || w == W_UPDATE) &&
                first[i].sum[w] != first[IMPL_SPARSE].sum[w]) {
                printf("# checksum mismatch: %s %s differs from sparse_set's\n",
                       impls[i], works[w]);
                bad = 1;
            }
        }
    }
    plan_free(&p);
    return bad;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--pair") == 0) {
        return pair_mode(atoi(argv[2]), (size_t)strtoull(argv[3], NULL, 10));
    }
    bench_args a = bench_parse(argc, argv, impls, NIMPLS);
    size_t sizes[2] = {a.mode == BENCH_SMOKE ? 1000 : 100000, 1000000};
    int nsizes = a.mode == BENCH_FULL ? 2 : 1;
    for (int z = 0; z < nsizes; z++) {
        plan p = plan_make(sizes[z]);
        for (int impl = 0; impl < NIMPLS; impl++) {
            if (!bench_selected(&a, impls[impl])) {
                continue;
            }
            double t[NWORK][8];
            uint64_t sum[NWORK] = {0};
            for (int r = 0; r < a.runs; r++) {
                result res = run_impl(impl, &p);
                for (int w = 0; w < NWORK; w++) {
                    t[w][r] = res.ns[w];
                    sum[w] = res.sum[w];
                }
            }
            for (int w = 0; w < NWORK; w++) {
                if (impl == IMPL_ARRAYS && w != W_UPDATE) {
                    continue;
                }
                bench_row("entities", works[w], sizes[z], impls[impl], t[w],
                          a.runs, "ns", sum[w]);
            }
        }
        plan_free(&p);
    }
    return 0;
}
