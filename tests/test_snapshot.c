/* SPDX-License-Identifier: MIT */
/*
 * test_snapshot.c - save/load and insert_at for pool and table:
 * continuation equivalence (the loaded container issues the same handles
 * as the original for the same operations), malformed and hostile input,
 * config mismatches, replication in shuffled order, allocation failures.
 *
 * Each scenario is written once, on a container of either kind
 * (cont_adapter.h and the element helpers below), and registered once per
 * kind: pool_<name>, table_<name>. The pool_blocks_* cases read the byte
 * layout of a pool's slots section and are pool only.
 */
#include "ark/ark.h"
#include "cont_adapter.h"
#include "harness.h"
#include "pool_internal.h"
#include "snapshot/snapshot.h"
#include "snapshot_mem.h"
#include "table_internal.h"

#include <stdlib.h>

/* ---- memory and file adaptors ------------------------------------------ */

static ark_status file_write(void *ctx, const void *buf, size_t n) {
    return fwrite(buf, 1, n, ctx) == n ? ARK_OK : ARK_ENOMEM;
}

static ark_status file_read(void *ctx, void *buf, size_t n) {
    return fread(buf, 1, n, ctx) == n ? ARK_OK : ARK_ECORRUPT;
}

/* Recompute both checksums of a snapshot whose descriptor has desc_bytes
 * (a table's has its column sizes too), so mutated contents reach the
 * validation. */
static void fix_checksums(membuf *m, size_t desc_bytes) {
    if (m->len < desc_bytes + 16) {
        return;
    }
    ark__snap_sum h;
    ark__snap_sum_init(&h);
    ark__snap_sum_update(&h, m->data, desc_bytes);
    uint64_t d = ark__snap_sum_digest(&h);
    for (int k = 0; k < 8; k++) {
        m->data[desc_bytes + k] = (unsigned char)(d >> (8 * k));
    }
    ark__snap_sum_init(&h);
    ark__snap_sum_update(&h, m->data, m->len - 8);
    d = ark__snap_sum_digest(&h);
    for (int k = 0; k < 8; k++) {
        m->data[m->len - 8 + k] = (unsigned char)(d >> (8 * k));
    }
}

/* ---- elements and configs of either kind -------------------------------- */

/* Every element is made from one uint64 value v. A pool's element is an
 * item {v, 7 v}; a table's row has three columns (4, 16 and 8 bytes)
 * filled from v, the last holding v itself. */
typedef struct item {
    uint64_t value;
    uint64_t salt;
} item;

static const size_t table_sizes[3] = {4, 16, 8};

/* A config of either kind: the handle fields, the hook and the allocator,
 * then the element layout of each kind. */
typedef struct scfg {
    unsigned index_bits, gen_bits, tag_bits;
    uint64_t tag, seal_key;
    const ark_allocator *allocator;
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user;
    size_t elem_size, elem_align; /* pool */
    const size_t *cols;           /* table */
    size_t ncols;                 /* table */
} scfg;

static scfg base_cfg(void) {
    scfg c = {.seal_key = 42,
              .elem_size = sizeof(item),
              .cols = table_sizes,
              .ncols = 3};
    return c;
}

/* The fields an ark_pool_config and an ark_table_config share. */
#define SHARED_FIELDS(c)                                                       \
    .index_bits = (c)->index_bits, .gen_bits = (c)->gen_bits,                  \
    .tag_bits = (c)->tag_bits, .tag = (c)->tag, .seal_key = (c)->seal_key,     \
    .allocator = (c)->allocator, .on_remove = (c)->on_remove,                  \
    .user = (c)->user

static ark_pool_config pool_cfg(const scfg *c) {
    ark_pool_config p = {.elem_size = c->elem_size,
                         .elem_align = c->elem_align,
                         SHARED_FIELDS(c)};
    return p;
}

static ark_table_config table_cfg(const scfg *c) {
    ark_table_config t = {
        .column_sizes = c->cols, .ncolumns = c->ncols, SHARED_FIELDS(c)};
    return t;
}

static ark_status c_create(cont *c, const kind *k, const scfg *cfg) {
    c_init(c, k);
    if (k->table) {
        ark_table_config tc = table_cfg(cfg);
        return ark_table_create(&c->t, &tc);
    }
    ark_pool_config pc = pool_cfg(cfg);
    return ark_pool_create(&c->p, &pc);
}

static ark_status c_load(cont *c, const kind *k, const scfg *cfg,
                         const ark_reader *r) {
    c_init(c, k);
    if (k->table) {
        ark_table_config tc = table_cfg(cfg);
        return ark_table_load(&c->t, &tc, r);
    }
    ark_pool_config pc = pool_cfg(cfg);
    return ark_pool_load(&c->p, &pc, r);
}

static ark_status c_save(const cont *c, const ark_writer *w) {
    return c->k->table ? ark_table_save(c->t, w) : ark_pool_save(c->p, w);
}

static ark_status save_mem(const cont *c, membuf *m) {
    ark_writer w = mem_writer(m);
    return c_save(c, &w);
}

static ark_status load_mem(cont *c, const kind *k, const scfg *cfg, membuf *m) {
    ark_reader r = mem_reader(m);
    return c_load(c, k, cfg, &r);
}

/* Write v into every column of row r. */
static void fill_row(ark_table *t, size_t r, uint64_t v) {
    uint32_t *c0 = ark_table_column(t, 0);
    unsigned char *c1 = ark_table_column(t, 1);
    uint64_t *c2 = ark_table_column(t, 2);
    c0[r] = (uint32_t)(v * 0x9e3779b97f4a7c15u);
    memset(c1 + 16 * r, (int)(v & 0xff), 16);
    c2[r] = v;
}

static uint64_t row_digest(const ark_table *t, size_t r) {
    const uint32_t *c0 = ark_table_column(t, 0);
    const unsigned char *c1 = ark_table_column(t, 1);
    const uint64_t *c2 = ark_table_column(t, 2);
    return c0[r] ^ ((uint64_t)c1[16 * r + 15] << 32) ^ (c2[r] << 1);
}

/* Insert an element made from v; *row is its row (a pool's: 0). */
static ark_status c_insert(cont *c, uint64_t v, ark_handle *h, size_t *row) {
    *row = 0;
    if (!c->k->table) {
        item it = {v, v * 7};
        return ark_pool_insert(c->p, &it, h);
    }
    ark_status st = ark_table_insert(c->t, h, row);
    if (st == ARK_OK) {
        fill_row(c->t, *row, v);
    }
    return st;
}

/* insert_at with an element made from v; row may be NULL. */
static ark_status c_insert_at(cont *c, ark_handle h, uint64_t v, size_t *row) {
    if (!c->k->table) {
        item it = {v, v * 7};
        return ark_pool_insert_at(c->p, h, &it);
    }
    size_t r = ARK_NO_ROW;
    ark_status st = ark_table_insert_at(c->t, h, &r);
    if (st == ARK_OK) {
        fill_row(c->t, r, v);
    }
    if (row != NULL) {
        *row = r;
    }
    return st;
}

/* A digest of the element at h (and a table's row), 7 if none. */
static uint64_t c_read(const cont *c, ark_handle h) {
    if (!c->k->table) {
        const item *it = ark_pool_get(c->p, h);
        return it != NULL ? it->value * 3 + it->salt : 7;
    }
    size_t r = ark_table_row(c->t, h);
    return r == ARK_NO_ROW ? 7 : row_digest(c->t, r) + r;
}

/* True when h resolves to an element (get) or a row. */
static bool c_resolves(const cont *c, ark_handle h) {
    return c->k->table ? ark_table_row(c->t, h) != ARK_NO_ROW
                       : ark_pool_get(c->p, h) != NULL;
}

/* The v the element at h was made from; h must resolve. */
static uint64_t c_value(const cont *c, ark_handle h) {
    if (!c->k->table) {
        return ((const item *)ark_pool_get(c->p, h))->value;
    }
    const uint64_t *c2 = ark_table_column(c->t, 2);
    return c2[ark_table_row(c->t, h)];
}

static ark_status c_validate(const cont *c) {
    return c->k->table ? ark__table_validate(c->t, false)
                       : ark_pool_validate(c->p);
}

/* The bytes before the descriptor's checksum: a table's descriptor lists
 * its column sizes too. */
static size_t desc_bytes(const kind *k, const scfg *cfg) {
    return ARK__SNAP_HEADER_BYTES + (k->table ? 8 * cfg->ncols : 0);
}

/* Where the descriptor holds the retired count: after the magic, version,
 * kind, handle bits, tag, issued, live, nfree and npending. */
#define RETIRED_AT (8 + 4 + 4 + 8 + 8 + 4 * 8)

/* Retired slots: the pool counts them; a table has no call that tells,
 * so its count is read from the descriptor of its snapshot. */
static uint64_t c_retired(const cont *c) {
    if (!c->k->table) {
        return ark__pool_retired(c->p);
    }
    membuf m = {0};
    uint64_t n = 0;
    if (save_mem(c, &m) != ARK_OK) {
        harness_fail(__FILE__, __LINE__, "table save failed");
    }
    for (int k = 7; k >= 0 && m.len > RETIRED_AT + 8; k--) {
        n = n << 8 | m.data[RETIRED_AT + k];
    }
    mem_free(&m);
    return n;
}

/* Row r of a and row r of b hold the same bytes in every column. */
static bool same_row(const ark_table *a, const ark_table *b, size_t r) {
    for (size_t col = 0; col < 3; col++) {
        const unsigned char *x = ark_table_column(a, col);
        const unsigned char *y = ark_table_column(b, col);
        size_t z = table_sizes[col];
        if (memcmp(x + r * z, y + r * z, z) != 0) {
            return false;
        }
    }
    return true;
}

static void same_tables(const ark_table *a, const ark_table *b) {
    CHECK_EQ(ark_table_rows(a), ark_table_rows(b));
    for (size_t r = 0; r < ark_table_rows(a); r++) {
        ark_handle h = ark_table_handle_at(a, r);
        CHECK_EQ(h, ark_table_handle_at(b, r));
        CHECK_EQ(row_digest(a, r), row_digest(b, r));
        CHECK(same_row(a, b, r));
        CHECK_EQ(ark_table_seal(a, h), ark_table_seal(b, h));
    }
}

static void same_pools(const ark_pool *a, const ark_pool *b) {
    ark_pool_iter ib = ark_pool_iter_begin(b);
    for (ark_pool_iter ia = ark_pool_iter_begin(a); ark_pool_iter_valid(&ia);
         ark_pool_iter_next(&ia)) {
        CHECK(ark_pool_iter_valid(&ib));
        CHECK_EQ(ia.handle, ib.handle);
        CHECK(memcmp(ia.elem, ib.elem, sizeof(item)) == 0);
        CHECK_EQ(ark_pool_seal(a, ia.handle), ark_pool_seal(b, ib.handle));
        ark_pool_iter_next(&ib);
    }
    CHECK(!ark_pool_iter_valid(&ib));
}

/* Same elements at the same handles, in the same order (a pool's slots,
 * a table's rows), with the same seals. */
static void c_same(const cont *a, const cont *b) {
    if (a->k->table) {
        same_tables(a->t, b->t);
    } else {
        same_pools(a->p, b->p);
    }
}

/* The handles of c in iteration order (a pool's slots, a table's rows);
 * *n is their number. The caller frees the array. */
static ark_handle *c_handles(const cont *c, size_t *n) {
    ark_handle *hs = malloc((c_count(c) + 1) * sizeof *hs);
    *n = 0;
    if (c->k->table) {
        for (size_t r = 0; r < ark_table_rows(c->t); r++) {
            hs[(*n)++] = ark_table_handle_at(c->t, r);
        }
        return hs;
    }
    for (ark_pool_iter it = ark_pool_iter_begin(c->p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        hs[(*n)++] = it.handle;
    }
    return hs;
}

/* ---- a random operation stream ------------------------------------------ */

typedef struct hook_sum {
    uint64_t calls, sum;
} hook_sum;

/* A pool passes its element (whose value counts too), a table NULL. */
static void sum_remove(void *elem, ark_handle h, void *user) {
    hook_sum *s = user;
    const item *it = elem;
    s->calls++;
    s->sum += (it != NULL ? it->value * 31 : 0) + h;
}

/* The handles a stream has issued and not removed (live or marked). */
typedef struct hlist {
    ark_handle *h;
    size_t n, cap;
} hlist;

static void hlist_push(hlist *l, ark_handle h) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->h = realloc(l->h, l->cap * sizeof *l->h);
    }
    l->h[l->n++] = h;
}

static hlist hlist_copy(const hlist *l) {
    hlist c = {malloc(l->cap * sizeof *l->h + 1), l->n, l->cap};
    if (l->n > 0) {
        memcpy(c.h, l->h, l->n * sizeof *l->h);
    }
    return c;
}

/* One step on c; the rng state and list are per container (the two of a
 * comparison get equal copies). Returns a digest of what happened. */
static uint64_t step(cont *c, uint64_t *rng, hlist *l, uint64_t s) {
    uint64_t op = harness_below(rng, 100);
    if (op < 45 || l->n == 0) {
        ark_handle h = 0;
        size_t r;
        ark_status st = c_insert(c, s, &h, &r);
        if (st == ARK_OK) {
            hlist_push(l, h);
        }
        return h ^ ((uint64_t)st << 60) ^ ((uint64_t)r << 40);
    }
    size_t k = (size_t)harness_below(rng, l->n);
    ark_handle h = l->h[k];
    if (op < 75) {
        ark_status st = c_remove(c, h);
        l->h[k] = l->h[--l->n];
        return st;
    }
    if (op < 85) {
        return (uint64_t)c_remove_later(c, h) + 100;
    }
    if (op < 88) {
        return c_flush(c) + 1000;
    }
    return c_read(c, h);
}

/* a and b are equal, and so would be their streams: run steps from .. to
 * on both (b with copies of rng and la) and compare every result. */
static void run_both(cont *a, cont *b, uint64_t *rng, hlist *la, uint64_t from,
                     uint64_t to) {
    hlist lb = hlist_copy(la);
    uint64_t rb = *rng;
    for (uint64_t s = from; s < to; s++) {
        uint64_t da = step(a, rng, la, s);
        uint64_t db = step(b, &rb, &lb, s);
        if (da != db) {
            harness_fail(__FILE__, __LINE__, "%s: step %" PRIu64 " differs",
                         a->k->name, s);
            break;
        }
    }
    free(lb.h);
}

/* ---- continuation ------------------------------------------------------- */

/* a and b went through the same operations, b's hook counting into hb:
 * the same hook calls, contents and retired slots, flushed too. */
static void check_twins(cont *a, cont *b, const hook_sum *ha,
                        const hook_sum *hb) {
    CHECK_EQ(ha->calls, hb->calls);
    CHECK_EQ(ha->sum, hb->sum);
    c_flush(a);
    c_flush(b);
    CHECK_EQ(ha->calls, hb->calls);
    CHECK_EQ(ha->sum, hb->sum);
    c_same(a, b);
    BAIL();
    CHECK_EQ(c_retired(a), c_retired(b));
    CHECK_OK(c_validate(a));
    CHECK_OK(c_validate(b));
}

/* Run steps on A; at save_at save A and load B; run the rest on both and
 * compare every result, the hooks, the contents, iteration and sealing. */
static void continuation(const kind *k, scfg cfg, uint64_t steps,
                         uint64_t save_at, bool pending_at_save) {
    hook_sum ha = {0, 0}, hb = {0, 0};
    cfg.on_remove = sum_remove;
    cfg.user = &ha;
    cont a, b;
    CHECK_OK(c_create(&a, k, &cfg));
    uint64_t rng = harness_seed() ^ save_at;
    hlist la = {0};
    for (uint64_t s = 0; s < save_at; s++) {
        step(&a, &rng, &la, s);
    }
    for (size_t j = 0; pending_at_save && j < la.n && j < 5; j++) {
        c_remove_later(&a, la.h[la.n - 1 - j]);
    }
    membuf m = {0};
    CHECK_OK(save_mem(&a, &m));
    scfg cb = cfg;
    cb.user = &hb;
    cb.seal_key = 0;
    CHECK_OK(load_mem(&b, k, &cb, &m));
    CHECK_OK(c_validate(&b));
    ha = (hook_sum){0, 0};
    CHECK_EQ(c_count(&a), c_count(&b));
    c_same(&a, &b);
    BAIL();
    run_both(&a, &b, &rng, &la, save_at, steps);
    check_twins(&a, &b, &ha, &hb);
    BAIL();
    free(la.h);
    mem_free(&m);
    c_destroy(&a);
    c_destroy(&b);
}

static void continuation_at_start(const kind *k) {
    printf("seed %" PRIu64 "\n", harness_seed());
    continuation(k, base_cfg(), harness_scaled(20000), 0, false);
}

static void continuation_mid_churn(const kind *k) {
    uint64_t n = harness_scaled(40000);
    continuation(k, base_cfg(), n, n / 2, false);
    BAIL();
    continuation(k, base_cfg(), n, n / 3, true);
}

/* Tiny generations: slots retire all along. Two tag layouts, and a load
 * through a counting allocator. */
static void continuation_retiring(const kind *k) {
    scfg cfg = base_cfg();
    cfg.index_bits = 9;
    cfg.gen_bits = 2;
    cfg.tag_bits = 5;
    cfg.tag = 17;
    uint64_t n = harness_scaled(60000);
    continuation(k, cfg, n, n * 3 / 4, true);
    BAIL();
    continuation(k, cfg, n, n / 5, false);
    BAIL();
    test_allocator ta;
    test_allocator_init(&ta);
    cfg.allocator = &ta.base;
    cfg.tag_bits = 3;
    cfg.tag = 6;
    continuation(k, cfg, n, n / 5, true);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

static void continuation_custom_allocator(const kind *k) {
    test_allocator ta;
    test_allocator_init(&ta);
    scfg cfg = base_cfg();
    cfg.allocator = &ta.base;
    uint64_t n = harness_scaled(20000);
    continuation(k, cfg, n, n / 2, true);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

TEST_ON_BOTH(continuation_at_start)
TEST_ON_BOTH(continuation_mid_churn)
TEST_ON_BOTH(continuation_retiring)
TEST_ON_BOTH(continuation_custom_allocator)

/* ---- malformed input ---------------------------------------------------- */

/* A small container with every slot state: live, free (ring), marked,
 * retired. */
static bool small_cont(const kind *k, scfg *cfg, cont *c) {
    *cfg = base_cfg();
    cfg->index_bits = 8;
    cfg->gen_bits = 1;
    if (c_create(c, k, cfg) != ARK_OK) {
        return false;
    }
    ark_handle h[8];
    size_t r;
    for (int j = 0; j < 8; j++) {
        c_insert(c, (uint64_t)j + 1, &h[j], &r);
    }
    c_remove(c, h[1]);
    c_remove(c, h[2]);
    c_remove_later(c, h[3]);
    /* gen 1 of slot 7 is its last: it retires. */
    for (int j = 0; j < 70; j++) {
        ark_handle x;
        c_insert(c, 100u + (unsigned)j, &x, &r);
        c_remove(c, x);
    }
    return true;
}

/* Every truncation of m and a bit flip at every byte: ARK_ECORRUPT; m
 * itself loads. */
static void damage(const kind *k, const scfg *cfg, membuf *m) {
    cont q;
    for (size_t len = 0; len < m->len; len++) {
        membuf t = *m;
        t.len = len;
        CHECK_STATUS(load_mem(&q, k, cfg, &t), ARK_ECORRUPT);
    }
    uint64_t rng = harness_seed();
    for (size_t at = 0; at < m->len; at++) {
        unsigned char old = m->data[at];
        m->data[at] ^= (unsigned char)(1u << harness_below(&rng, 8));
        CHECK_STATUS(load_mem(&q, k, cfg, m), ARK_ECORRUPT);
        m->data[at] = old;
    }
    CHECK_OK(load_mem(&q, k, cfg, m));
    CHECK_EQ(m->pos, m->len);
    CHECK_OK(c_validate(&q));
    c_destroy(&q);
}

static void truncation_and_flips(const kind *k) {
    scfg cfg;
    cont c;
    CHECK(small_cont(k, &cfg, &c));
    CHECK(c_retired(&c) > 0);
    membuf m = {0};
    CHECK_OK(save_mem(&c, &m));
    damage(k, &cfg, &m);
    mem_free(&m);
    c_destroy(&c);
}

TEST_ON_BOTH(truncation_and_flips)

/* q loaded from a mutant: valid, and stays so through churn. */
static void churn_mutant(cont *q) {
    CHECK_OK(c_validate(q));
    for (int j = 0; j < 80; j++) {
        ark_handle h;
        size_t r;
        if (c_insert(q, 1, &h, &r) == ARK_OK) {
            c_remove(q, h);
        }
    }
    c_flush(q);
    CHECK_OK(c_validate(q));
}

/* Mutations with the checksums fixed up reach the structural checks:
 * any result is fine but a crash, and a container that loads is valid. */
static void mutations_past_checksum(const kind *k) {
    scfg cfg;
    cont c, q;
    CHECK(small_cont(k, &cfg, &c));
    membuf m = {0};
    CHECK_OK(save_mem(&c, &m));
    uint64_t rng = harness_seed();
    uint64_t loaded = 0, rounds = harness_scaled(20000);
    unsigned char *orig = malloc(m.len);
    memcpy(orig, m.data, m.len);
    for (uint64_t r = 0; r < rounds; r++) {
        memcpy(m.data, orig, m.len);
        int flips = 1 + (int)harness_below(&rng, 3);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)harness_below(&rng, m.len - 8);
            m.data[at] = (unsigned char)harness_rand(&rng);
        }
        fix_checksums(&m, desc_bytes(k, &cfg));
        ark_status st = load_mem(&q, k, &cfg, &m);
        CHECK(st == ARK_OK || st == ARK_ECORRUPT || st == ARK_EINVAL);
        if (st == ARK_OK) {
            loaded++;
            churn_mutant(&q);
            BAIL();
            c_destroy(&q);
        }
    }
    printf("%" PRIu64 " of %" PRIu64 " mutants loaded\n", loaded, rounds);
    memcpy(m.data, orig, m.len);
    CHECK_OK(load_mem(&q, k, &cfg, &m));
    c_destroy(&q);
    free(orig);
    mem_free(&m);
    c_destroy(&c);
}

TEST_ON_BOTH(mutations_past_checksum)

static void random_bytes(const kind *k) {
    scfg cfg = base_cfg();
    uint64_t rng = harness_seed();
    membuf m = {0};
    m.data = malloc(512);
    m.cap = 512;
    cont q;
    for (uint64_t r = 0; r < harness_scaled(20000); r++) {
        m.len = (size_t)harness_below(&rng, 512);
        for (size_t j = 0; j < m.len; j++) {
            m.data[j] = (unsigned char)harness_rand(&rng);
        }
        if (r % 2 == 0 && m.len >= 8) {
            memcpy(m.data, "arksnap\x1a", 8);
        }
        CHECK(load_mem(&q, k, &cfg, &m) != ARK_OK);
    }
    mem_free(&m);
}

TEST_ON_BOTH(random_bytes)

/* Each change to cfg that m must refuse with ARK_EINVAL. */
static void mismatches(const kind *k, const scfg *cfg, membuf *m) {
    static const size_t other_cols[3] = {4, 16, 4};
    enum { NBAD = 7 };
    scfg bad[NBAD];
    for (size_t j = 0; j < NBAD; j++) {
        bad[j] = *cfg;
    }
    bad[0].elem_size = 8;     /* pool: another element size */
    bad[0].cols = other_cols; /* table: another column size */
    bad[1].elem_size = 0;     /* pool: no element */
    bad[1].ncols = 2;         /* table: fewer columns */
    bad[2].index_bits = 9;
    bad[3].index_bits = 12;
    bad[4].gen_bits = 2;
    bad[5].tag_bits = 3;
    bad[6].seal_key = cfg->seal_key + 1;
    for (size_t j = 0; j < NBAD; j++) {
        cont q;
        CHECK_STATUS(load_mem(&q, k, &bad[j], m), ARK_EINVAL);
    }
}

static void config_mismatch(const kind *k) {
    scfg cfg;
    cont c, q;
    CHECK(small_cont(k, &cfg, &c));
    membuf m = {0};
    CHECK_OK(save_mem(&c, &m));
    mismatches(k, &cfg, &m);
    BAIL();
    /* The same key, or none, is accepted; alignment is a storage choice. */
    scfg same = cfg;
    same.elem_align = 16;
    CHECK_OK(load_mem(&q, k, &same, &m));
    c_destroy(&q);
    same.seal_key = 0;
    CHECK_OK(load_mem(&q, k, &same, &m));
    size_t n;
    ark_handle *hs = c_handles(&c, &n);
    CHECK(n > 0);
    CHECK_EQ(c_seal(&c, hs[0]), c_seal(&q, hs[0]));
    free(hs);
    c_destroy(&q);
    /* The other kind cannot load this snapshot. */
    const kind *other = k->table ? &POOL : &TABLE;
    CHECK_STATUS(load_mem(&q, other, &cfg, &m), ARK_ECORRUPT);
    mem_free(&m);
    c_destroy(&c);
}

TEST_ON_BOTH(config_mismatch)

static void file_roundtrip_and_trailing_data(const kind *k) {
    scfg cfg;
    cont c, q1, q2;
    CHECK(small_cont(k, &cfg, &c));
    FILE *f = tmpfile();
    CHECK(f != NULL);
    ark_writer w = {file_write, f};
    CHECK_OK(c_save(&c, &w));
    CHECK_OK(c_save(&c, &w)); /* two snapshots back to back */
    fputs("tail", f);
    rewind(f);
    ark_reader r = {file_read, f};
    CHECK_OK(c_load(&q1, k, &cfg, &r));
    CHECK_OK(c_load(&q2, k, &cfg, &r));
    char tail[5] = {0};
    CHECK(fread(tail, 1, 4, f) == 4 && strcmp(tail, "tail") == 0);
    fclose(f);
    CHECK_EQ(c_count(&q1), c_count(&c));
    CHECK_EQ(c_count(&q2), c_count(&c));
    c_destroy(&q1);
    c_destroy(&q2);
    c_destroy(&c);
}

TEST_ON_BOTH(file_roundtrip_and_trailing_data)

static ark_status fail_write(void *ctx, const void *buf, size_t n) {
    size_t *budget = ctx;
    (void)buf;
    if (n > *budget) {
        return ARK_ENOMEM;
    }
    *budget -= n;
    return ARK_OK;
}

static void save_reports_writer_errors(const kind *k) {
    scfg cfg = base_cfg();
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    for (uint64_t j = 0; j < 5000; j++) {
        ark_handle h;
        size_t r;
        CHECK_OK(c_insert(&c, j, &h, &r));
    }
    size_t budget = 20000;
    ark_writer w = {fail_write, &budget};
    CHECK_STATUS(c_save(&c, &w), ARK_ENOMEM);
    c_destroy(&c);
}

TEST_ON_BOTH(save_reports_writer_errors)

/* 700 slots: three blocks, all live at generation 0 (one stamp each). */
static bool block_cont(const kind *k, scfg *cfg, cont *c, ark_handle *hs) {
    *cfg = base_cfg();
    if (c_create(c, k, cfg) != ARK_OK) {
        return false;
    }
    size_t r;
    for (uint64_t j = 0; j < 700; j++) {
        c_insert(c, j, &hs[j], &r);
    }
    return true;
}

/* Load c's snapshot with an allocator that fails at the j-th allocation,
 * for every j until one succeeds: ARK_ENOMEM and nothing left over. */
static void alloc_failures(scfg cfg, const cont *c) {
    membuf m = {0};
    CHECK_OK(save_mem(c, &m));
    test_allocator ta;
    test_allocator_init(&ta);
    cfg.allocator = &ta.base;
    for (uint64_t j = 1;; j++) {
        test_allocator_fail_at(&ta, j);
        cont q;
        ark_status st = load_mem(&q, c->k, &cfg, &m);
        test_allocator_fail_at(&ta, 0);
        if (st == ARK_OK) {
            CHECK_OK(c_validate(&q));
            CHECK_EQ(c_count(&q), c_count(c));
            c_same(c, &q);
            BAIL();
            c_destroy(&q);
            CHECK_EQ(ta.live_blocks, 0);
            break;
        }
        CHECK_STATUS(st, ARK_ENOMEM);
        CHECK_EQ(ta.live_blocks, 0);
        CHECK(j < 1000);
    }
    CHECK_EQ(ta.bad_frees, 0);
    mem_free(&m);
}

/* The small container, then with more live elements; one-stamp and
 * listed blocks. */
static void load_allocation_failures(const kind *k) {
    scfg cfg;
    cont c;
    CHECK(small_cont(k, &cfg, &c));
    alloc_failures(cfg, &c);
    BAIL();
    for (uint64_t j = 0; j < 100; j++) {
        ark_handle h;
        size_t r;
        CHECK_OK(c_insert(&c, j, &h, &r));
    }
    alloc_failures(cfg, &c);
    BAIL();
    c_destroy(&c);
    ark_handle hs[700];
    CHECK(block_cont(k, &cfg, &c, hs));
    CHECK_OK(c_remove(&c, hs[300]));
    alloc_failures(cfg, &c);
    BAIL();
    c_destroy(&c);
}

TEST_ON_BOTH(load_allocation_failures)

/* ---- pool: the blocks of the slots section ------------------------------ */

/* Where block k of a pool's slots section starts; blocks 0 .. k-1 must
 * be one-stamp blocks of ARK__SNAP_BLOCK slots. */
static size_t block_at(const membuf *m, size_t k, size_t payload) {
    size_t at = ARK__SNAP_HEADER_BYTES + 8;
    for (size_t b = 0; b < k && at < m->len; b++) {
        at += m->data[at] == ARK__SNAP_BLOCK_LIVE
                  ? 8 + ARK__SNAP_BLOCK * payload
                  : m->len; /* not one: callers see at past the end */
    }
    return at;
}

static void put_le32_at(membuf *m, size_t at, uint32_t v) {
    for (int k = 0; k < 4; k++) {
        m->data[at + (size_t)k] = (unsigned char)(v >> (8 * k));
    }
}

/* q, loaded from m, is valid and saves to the bytes the load read. */
static void check_saves_back(const cont *q, const membuf *m) {
    CHECK_OK(c_validate(q));
    membuf back = {0};
    CHECK_OK(save_mem(q, &back));
    CHECK_EQ(back.len, m->pos);
    CHECK(memcmp(back.data, m->data, back.len) == 0);
    mem_free(&back);
}

/* m with block 1 written with every stamp listed (non-canonical). */
static membuf listed_block_1(const membuf *m, size_t b1) {
    membuf n = {0};
    n.cap = m->len + 4 * ARK__SNAP_BLOCK;
    n.data = malloc(n.cap);
    memcpy(n.data, m->data, b1);
    n.len = b1;
    put_le32_at(&n, n.len, ARK__SNAP_BLOCK_STAMPS);
    n.len += 4;
    for (unsigned k = 0; k < ARK__SNAP_BLOCK; k++) {
        put_le32_at(&n, n.len, 1);
        n.len += 4;
    }
    memcpy(n.data + n.len, m->data + b1 + 8, m->len - b1 - 8);
    n.len += m->len - b1 - 8;
    fix_checksums(&n, ARK__SNAP_HEADER_BYTES);
    return n;
}

/* Bad modes and stamps in m's one-stamp block 1 at b1: ARK_ECORRUPT. */
static void bad_block_heads(const scfg *cfg, const membuf *m, size_t b1) {
    const uint32_t bad[][2] = {{2, 1}, {UINT32_MAX, 1}, {1, 0}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        membuf t = {0};
        t.data = malloc(m->len);
        t.len = t.cap = m->len;
        memcpy(t.data, m->data, m->len);
        put_le32_at(&t, b1, bad[k][0]);
        put_le32_at(&t, b1 + 4, bad[k][1]);
        fix_checksums(&t, ARK__SNAP_HEADER_BYTES);
        cont q;
        CHECK_STATUS(load_mem(&q, &POOL, cfg, &t), ARK_ECORRUPT);
        mem_free(&t);
    }
}

TEST(pool_blocks_encoding) {
    scfg cfg;
    cont c, q;
    ark_handle hs[700];
    CHECK(block_cont(&POOL, &cfg, &c, hs));
    membuf m = {0};
    CHECK_OK(save_mem(&c, &m));
    /* Descriptor, three one-stamp blocks, the elements, the trailer. */
    CHECK_EQ(m.len,
             ARK__SNAP_HEADER_BYTES + 8 + 3 * 8 + 700 * sizeof(item) + 8);
    size_t b1 = block_at(&m, 1, sizeof(item));
    CHECK(b1 + 8 < m.len);
    CHECK_EQ(m.data[b1], ARK__SNAP_BLOCK_LIVE);
    CHECK_EQ(m.data[b1 + 4], 1); /* the stamp: generation 0, live */
    CHECK_OK(load_mem(&q, &POOL, &cfg, &m));
    CHECK_EQ(m.pos, m.len);
    c_same(&c, &q);
    BAIL();
    c_destroy(&q);

    /* Non-canonical: block 1 written with every stamp listed. */
    membuf n = listed_block_1(&m, b1);
    CHECK_STATUS(load_mem(&q, &POOL, &cfg, &n), ARK_ECORRUPT);
    /* The same with one stamp changed is the canonical form of another
     * pool: it loads. */
    put_le32_at(&n, b1 + 4 + 4 * 9, 2);
    fix_checksums(&n, ARK__SNAP_HEADER_BYTES);
    CHECK_OK(load_mem(&q, &POOL, &cfg, &n));
    CHECK_OK(c_validate(&q));
    CHECK_EQ(c_count(&q), 700);
    CHECK(ark_pool_get(q.p, hs[265]) == NULL); /* slot 266: generation 1 */
    CHECK(ark_pool_get(q.p, hs[264]) != NULL);
    check_saves_back(&q, &n);
    BAIL();
    c_destroy(&q);
    mem_free(&n);

    bad_block_heads(&cfg, &m, b1);
    mem_free(&m);
    c_destroy(&c);
}

/* 600 elements of size z, one removed and one marked, saved and loaded. */
static void blocks_of_size(size_t z) {
    scfg cfg = base_cfg();
    cfg.elem_size = z;
    cont c, q;
    CHECK_OK(c_create(&c, &POOL, &cfg));
    unsigned char *e = malloc(z);
    ark_handle h[600];
    for (size_t k = 0; k < 600; k++) {
        memset(e, (int)k, z);
        CHECK_OK(ark_pool_insert(c.p, e, &h[k]));
    }
    free(e);
    CHECK_OK(c_remove(&c, h[400]));
    CHECK_OK(c_remove_later(&c, h[401]));
    membuf m = {0};
    CHECK_OK(save_mem(&c, &m));
    CHECK_OK(load_mem(&q, &POOL, &cfg, &m));
    CHECK_EQ(m.pos, m.len);
    CHECK_EQ(c_count(&q), 598);
    for (size_t k = 0; k < 600; k++) {
        const unsigned char *a = ark_pool_get(c.p, h[k]);
        const unsigned char *b = ark_pool_get(q.p, h[k]);
        CHECK_EQ(a == NULL, b == NULL);
        CHECK(a == NULL || memcmp(a, b, z) == 0);
    }
    check_saves_back(&q, &m);
    BAIL();
    CHECK_EQ(c_flush(&q), 1);
    c_destroy(&q);
    mem_free(&m);
    c_destroy(&c);
}

/* The block paths for every element size the copies special-case and
 * some they do not, with one-stamp and listed blocks. */
TEST(pool_blocks_element_sizes) {
    static const size_t sizes[] = {1, 4, 8, 12, 16, 24, 40, 5000, 20000};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        blocks_of_size(sizes[z]);
        BAIL();
    }
}

/* Live blocks next to listed ones: round trip, every truncation and flip,
 * mutants that load save back to the same bytes. */
/* One byte of m changed (checksums fixed), mostly in the block heads and
 * stamps up to block 1's at b1, where the structure is: a mutant that
 * loads saves back to the same bytes. */
static void mutants_save_back(const scfg *cfg, membuf *m, size_t b1) {
    cont q;
    uint64_t rng = harness_seed();
    unsigned char *orig = malloc(m->len);
    memcpy(orig, m->data, m->len);
    uint64_t loaded = 0, rounds = harness_scaled(4000);
    for (uint64_t r = 0; r < rounds; r++) {
        memcpy(m->data, orig, m->len);
        size_t span = r % 2 ? m->len - 8 : b1 + 4 + 4 * ARK__SNAP_BLOCK;
        size_t at = (size_t)harness_below(&rng, span);
        m->data[at] = (unsigned char)harness_rand(&rng);
        fix_checksums(m, ARK__SNAP_HEADER_BYTES);
        ark_status st = load_mem(&q, &POOL, cfg, m);
        CHECK(st == ARK_OK || st == ARK_ECORRUPT || st == ARK_EINVAL);
        if (st == ARK_OK) {
            loaded++;
            check_saves_back(&q, m);
            BAIL();
            c_destroy(&q);
        }
    }
    printf("%" PRIu64 " of %" PRIu64 " mutants loaded\n", loaded, rounds);
    free(orig);
}

TEST(pool_blocks_mixed) {
    scfg cfg;
    cont c, q;
    ark_handle hs[700];
    CHECK(block_cont(&POOL, &cfg, &c, hs));
    CHECK_OK(c_remove(&c, hs[300])); /* block 1 lists its stamps */
    c_remove_later(&c, hs[301]);
    membuf m = {0};
    CHECK_OK(save_mem(&c, &m));
    size_t b1 = block_at(&m, 1, sizeof(item));
    CHECK(b1 + 8 < m.len);
    CHECK_EQ(m.data[b1], ARK__SNAP_BLOCK_STAMPS);
    CHECK_OK(load_mem(&q, &POOL, &cfg, &m));
    c_same(&c, &q);
    BAIL();
    CHECK_EQ(c_flush(&q), 1);
    c_destroy(&q);
    damage(&POOL, &cfg, &m);
    BAIL();
    mutants_save_back(&cfg, &m, b1);
    mem_free(&m);
    c_destroy(&c);
}

/* ---- insert_at ----------------------------------------------------------- */

static void shuffle(ark_handle *h, size_t n, uint64_t *rng) {
    for (size_t k = n; k > 1; k--) {
        size_t j = (size_t)harness_below(rng, k);
        ark_handle t = h[k - 1];
        h[k - 1] = h[j];
        h[j] = t;
    }
}

/* b got a's n elements by insert_at in the order hs: each resolves to the
 * same value and cannot be inserted again. A pool iterates by slot, so b
 * must iterate as a does; a table's rows are in insert order. */
static void check_replica(const cont *a, cont *b, const ark_handle *hs,
                          size_t n) {
    CHECK_OK(c_validate(b));
    CHECK_EQ(c_count(b), n);
    for (size_t j = 0; j < n; j++) {
        CHECK_OK(c_check(b, hs[j]));
        CHECK_EQ(c_value(a, hs[j]), c_value(b, hs[j]));
        CHECK_STATUS(c_insert_at(b, hs[j], 0, NULL), ARK_EEXIST);
    }
    if (!a->k->table) {
        c_same(a, b);
    }
}

/* Copy a's elements into b by insert_at, in shuffled order. */
static void replicate(const cont *a, cont *b, uint64_t *rng) {
    size_t n;
    ark_handle *hs = c_handles(a, &n);
    CHECK_EQ(n, c_count(a));
    shuffle(hs, n, rng);
    CHECK_OK(c_reserve(b, n));
    for (size_t j = 0; j < n; j++) {
        size_t row;
        CHECK_OK(c_insert_at(b, hs[j], c_value(a, hs[j]), &row));
        CHECK(!b->k->table || row == j);
        if (j % 4096 == 0) {
            CHECK_OK(c_validate(b));
        }
    }
    check_replica(a, b, hs, n);
    free(hs);
}

static void insert_at_replicates_shuffled(const kind *k) {
    scfg cfg = base_cfg();
    cfg.index_bits = 20;
    cfg.gen_bits = 12;
    cont a, b, c;
    CHECK_OK(c_create(&a, k, &cfg));
    CHECK_OK(c_create(&b, k, &cfg));
    uint64_t rng = harness_seed();
    hlist l = {0}, lb = {0};
    uint64_t n = harness_scaled(100000);
    for (uint64_t s = 0; s < n; s++) {
        step(&a, &rng, &l, s);
    }
    c_flush(&a);
    replicate(&a, &b, &rng);
    BAIL();
    CHECK_STATUS(c_insert_at(&b, 0, 0, NULL), ARK_ENULL);
    CHECK_STATUS(c_insert_at(&b, (uint64_t)1 << 40, 0, NULL), ARK_EFOREIGN);
    /* The replica keeps working: churn, then save and load it. */
    for (uint64_t s = 0; s < n / 4; s++) {
        step(&b, &rng, &lb, s);
    }
    CHECK_OK(c_validate(&b));
    membuf m = {0};
    CHECK_OK(save_mem(&b, &m));
    CHECK_OK(load_mem(&c, k, &cfg, &m));
    run_both(&b, &c, &rng, &lb, 0, n / 4);
    BAIL();
    mem_free(&m);
    free(l.h);
    free(lb.h);
    c_destroy(&a);
    c_destroy(&b);
    c_destroy(&c);
}

TEST_ON_BOTH(insert_at_replicates_shuffled)

/* A replica that follows its server operation by operation: the server's
 * inserts become insert_at, removes become removes. Handles and the
 * replica's validity are checked all along. */
static void insert_at_mirrors_churn(const kind *k) {
    scfg cfg = base_cfg();
    cfg.index_bits = 10;
    cfg.gen_bits = 3;
    cont a, b;
    CHECK_OK(c_create(&a, k, &cfg));
    CHECK_OK(c_create(&b, k, &cfg));
    uint64_t rng = harness_seed();
    hlist l = {0};
    for (uint64_t s = 0; s < harness_scaled(50000); s++) {
        if (harness_below(&rng, 2) == 0 || l.n == 0) {
            ark_handle h;
            size_t r;
            if (c_insert(&a, s, &h, &r) == ARK_OK) {
                CHECK_OK(c_insert_at(&b, h, s, NULL));
                hlist_push(&l, h);
            }
        } else {
            size_t j = (size_t)harness_below(&rng, l.n);
            CHECK_OK(c_remove(&a, l.h[j]));
            CHECK_OK(c_remove(&b, l.h[j]));
            l.h[j] = l.h[--l.n];
        }
        if (s % 1024 == 0) {
            CHECK_OK(c_validate(&b));
        }
    }
    CHECK_EQ(c_count(&a), c_count(&b));
    CHECK_EQ(c_retired(&a), c_retired(&b));
    CHECK_OK(c_validate(&b));
    free(l.h);
    c_destroy(&a);
    c_destroy(&b);
}

TEST_ON_BOTH(insert_at_mirrors_churn)

/* A handle of the 16/4/4 layout below (tag 5): index and generation. */
#define AT(index, gen) ((index) | ((uint64_t)(gen) << 16) | tag)

static void insert_at_statuses_tagged(const kind *k) {
    scfg cfg = base_cfg();
    cfg.index_bits = 16;
    cfg.gen_bits = 4;
    cfg.tag_bits = 4;
    cfg.tag = 5;
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    uint64_t tag = (uint64_t)5 << 20;
    ark_handle h = AT(10, 3);
    CHECK_STATUS(c_insert_at(&c, 0, 1, NULL), ARK_ENULL);
    CHECK_STATUS(c_insert_at(&c, h ^ tag, 1, NULL), ARK_EFOREIGN);
    CHECK_STATUS(c_insert_at(&c, h | (uint64_t)1 << 40, 1, NULL), ARK_EFOREIGN);
    CHECK_STATUS(c_insert_at(&c, AT(0, 3), 1, NULL), ARK_ERANGE);
    CHECK_OK(c_insert_at(&c, h, 1, NULL));
    CHECK(c_resolves(&c, h));
    CHECK_EQ(c_count(&c), 1);
    CHECK_STATUS(c_insert_at(&c, h, 1, NULL), ARK_EEXIST);
    CHECK_STATUS(c_insert_at(&c, AT(10, 5), 1, NULL), ARK_EEXIST);
    /* Slots 1..9 are free with generation 0 next. */
    CHECK_OK(c_insert_at(&c, AT(4, 0), 1, NULL));
    CHECK_OK(c_remove(&c, AT(4, 0)));
    CHECK_STATUS(c_insert_at(&c, AT(4, 0), 1, NULL), ARK_ESTALE);
    CHECK_OK(c_insert_at(&c, AT(4, 2), 1, NULL));
    /* Generation 15 is slot 4's last: removed, it retires. */
    CHECK_OK(c_remove(&c, AT(4, 2)));
    CHECK_OK(c_insert_at(&c, AT(4, 15), 1, NULL));
    CHECK_OK(c_remove(&c, AT(4, 15)));
    CHECK_EQ(c_retired(&c), 1);
    CHECK_STATUS(c_insert_at(&c, AT(4, 15), 1, NULL), ARK_ESTALE);
    /* Marked: the marked element itself is stale, a newer one waits. */
    CHECK_OK(c_remove_later(&c, h));
    CHECK_STATUS(c_insert_at(&c, h, 1, NULL), ARK_ESTALE);
    CHECK_STATUS(c_insert_at(&c, AT(10, 4), 1, NULL), ARK_EEXIST);
    c_flush(&c);
    CHECK_OK(c_insert_at(&c, AT(10, 4), 1, NULL));
    /* Within the gap bound: fine. */
    CHECK_STATUS(c_insert_at(&c, AT(65535, 0), 1, NULL), ARK_OK);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

static void insert_at_statuses(const kind *k) {
    insert_at_statuses_tagged(k);
    BAIL();
    /* Far past the storage: EFULL; within the gap bound: fine. */
    scfg cfg = base_cfg();
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    CHECK_STATUS(c_insert_at(&c, (uint64_t)1 << 31, 1, NULL), ARK_EFULL);
    CHECK_OK(c_insert_at(&c, (uint64_t)1 << 15, 1, NULL));
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(insert_at_statuses)

/* A far index into a pool of the largest elements: the gap is bounded in
 * bytes too (65536 slots of 64 KiB would be 4 GiB), and what a call at
 * the bound allocates is a few MiB. */
TEST(pool_insert_at_gap_bounded_in_bytes) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark_pool_config cfg = {.elem_size = ARK_POOL_MAX_ELEM_SIZE,
                           .allocator = &ta.base};
    ark_pool *p;
    CHECK_OK(ark_pool_create(&p, &cfg));
    static const unsigned char elem[ARK_POOL_MAX_ELEM_SIZE];
    uint64_t before = ta.live_bytes;
    CHECK_STATUS(ark_pool_insert_at(p, 65537, elem), ARK_EFULL);
    CHECK_STATUS(ark_pool_insert_at(p, 1000, elem), ARK_EFULL);
    CHECK_EQ(ta.live_bytes, before);
    CHECK_EQ(ark_pool_count(p), 0);
    CHECK_OK(ark_pool_insert_at(p, 50, elem));
    CHECK(ta.live_bytes - before <= ((uint64_t)16 << 20));
    CHECK_EQ(ark_pool_count(p), 1);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
    CHECK_EQ(ta.live_blocks, 0);
}

/* A container at the end of its storage, with every allocation refused:
 * a bad handle still gets its own status, not ARK_ENOMEM (a table grew
 * its rows before it looked at the handle). */
static void insert_at_checks_the_handle_first(const kind *k) {
    test_allocator ta;
    test_allocator_init(&ta);
    scfg cfg = base_cfg();
    cfg.index_bits = 16;
    cfg.gen_bits = 4;
    cfg.tag_bits = 4;
    cfg.tag = 5;
    cfg.allocator = &ta.base;
    uint64_t tag = (uint64_t)5 << 20;
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle h = AT(10, 3);
    CHECK_OK(c_insert_at(&c, h, 1, NULL));
    ark_status st;
    uint64_t v = 2;
    do { /* until an insert needs memory */
        ark_handle g;
        size_t row;
        test_allocator_fail_at(&ta, 1);
        st = c_insert(&c, v++, &g, &row);
    } while (st == ARK_OK && v < 100000);
    CHECK_STATUS(st, ARK_ENOMEM);
    uint64_t failures = ta.failures;
    test_allocator_fail_at(&ta, 1);
    CHECK_STATUS(c_insert_at(&c, 0, 1, NULL), ARK_ENULL);
    CHECK_STATUS(c_insert_at(&c, h ^ tag, 1, NULL), ARK_EFOREIGN);
    CHECK_STATUS(c_insert_at(&c, AT(0, 3), 1, NULL), ARK_ERANGE);
    CHECK_STATUS(c_insert_at(&c, h, 1, NULL), ARK_EEXIST);
    CHECK_EQ(ta.failures, failures); /* none of them asked for memory */
    test_allocator_fail_at(&ta, 0);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
    CHECK_EQ(ta.live_blocks, 0);
}

TEST_ON_BOTH(insert_at_checks_the_handle_first)

/* insert_at h with an allocator failing at every allocation in turn:
 * ARK_ENOMEM leaves the container as it was. */
static void insert_at_failing(cont *c, test_allocator *ta, ark_handle h) {
    for (uint64_t j = 1;; j++) {
        size_t before = c_count(c);
        test_allocator_fail_at(ta, j);
        ark_status st = c_insert_at(c, h, 1, NULL);
        test_allocator_fail_at(ta, 0);
        if (st != ARK_ENOMEM) {
            CHECK(st == ARK_OK || st == ARK_EEXIST);
            break;
        }
        CHECK_EQ(c_count(c), before);
        CHECK(!c_resolves(c, h));
        CHECK_OK(c_validate(c));
    }
    CHECK_OK(c_validate(c));
}

/* Save c with an allocator failing at every allocation in turn. */
static void save_failing(const cont *c, test_allocator *ta, membuf *m) {
    for (uint64_t j = 1;; j++) {
        test_allocator_fail_at(ta, j);
        m->len = 0;
        ark_status st = save_mem(c, m);
        test_allocator_fail_at(ta, 0);
        if (st == ARK_OK) {
            break;
        }
        CHECK_STATUS(st, ARK_ENOMEM);
    }
}

static void insert_at_allocation_failures(const kind *k) {
    test_allocator ta;
    test_allocator_init(&ta);
    scfg cfg = base_cfg();
    cfg.allocator = &ta.base;
    cont c, q;
    CHECK_OK(c_create(&c, k, &cfg));
    uint64_t rng = harness_seed();
    for (int round = 0; round < 40; round++) {
        ark_handle h = 1 + harness_below(&rng, (uint64_t)2000 * (round + 1));
        insert_at_failing(&c, &ta, h);
        BAIL();
    }
    /* A ring with dead entries needs scratch to save: its failure too. */
    membuf m = {0};
    save_failing(&c, &ta, &m);
    BAIL();
    CHECK_OK(load_mem(&q, k, &cfg, &m));
    CHECK_EQ(c_count(&q), c_count(&c));
    c_destroy(&q);
    mem_free(&m);
    c_destroy(&c);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

TEST_ON_BOTH(insert_at_allocation_failures)

/* A short input claiming many wide rows. From a caller's allocator a
 * table's load stages its rows and columns sections as they arrive, so no
 * request is sized by the claim. Before 2026-11-24 every column was sized
 * for every row (and zeroed) once the slots had arrived: here one request
 * of 16 MiB for an input of a few KiB. */
TEST(table_load_allocates_only_what_arrived) {
    enum { NCOL = 4, ROWS = 64 };
    size_t sizes[NCOL];
    for (size_t k = 0; k < NCOL; k++) {
        sizes[k] = ARK_TABLE_MAX_COLUMN_SIZE;
    }
    test_allocator ta;
    test_allocator_init(&ta);
    ark_table_config cfg = {
        .column_sizes = sizes, .ncolumns = NCOL, .allocator = &ta.base};
    ark_table *t;
    CHECK_OK(ark_table_create(&t, &cfg));
    for (uint64_t i = 0; i < ROWS; i++) {
        ark_handle h;
        size_t r;
        CHECK_OK(ark_table_insert(t, &h, &r));
        for (size_t k = 0; k < NCOL; k++) {
            unsigned char *c = ark_table_column(t, k);
            c[r * sizes[k]] = (unsigned char)(i + k);
        }
    }
    membuf m = {0};
    ark_writer w = mem_writer(&m);
    CHECK_OK(ark_table_save(t, &w));
    ark_table_destroy(t);
    size_t columns = (size_t)ROWS * NCOL * ARK_TABLE_MAX_COLUMN_SIZE;
    CHECK(m.len > columns + 8);

    /* The whole snapshot loads through the staged path. */
    test_allocator tb;
    test_allocator_init(&tb);
    cfg.allocator = &tb.base;
    ark_reader r = mem_reader(&m);
    CHECK_OK(ark_table_load(&t, &cfg, &r));
    CHECK_EQ(ark_table_count(t), ROWS);
    for (size_t row = 0; row < ROWS; row++) {
        for (size_t k = 0; k < NCOL; k++) {
            const unsigned char *c = ark_table_column(t, k);
            CHECK_EQ(c[row * sizes[k]], (unsigned char)(row + k));
        }
    }
    ark_table_destroy(t);
    CHECK_EQ(tb.live_blocks, 0);

    /* Cut 64 KiB into the columns (past the reader's 16 KiB buffer):
     * rejected, with no request near 16 MiB. */
    size_t keep = m.len - 8 - columns + ((size_t)64 << 10);
    membuf cut = {m.data, keep, keep, 0};
    test_allocator tc;
    test_allocator_init(&tc);
    cfg.allocator = &tc.base;
    r = mem_reader(&cut);
    CHECK_STATUS(ark_table_load(&t, &cfg, &r), ARK_ECORRUPT);
    CHECK(tc.max_request <= (size_t)256 << 10);
    CHECK_EQ(tc.live_blocks, 0);
    CHECK_EQ(tb.bad_frees + tc.bad_frees, 0);
    mem_free(&m);
}
