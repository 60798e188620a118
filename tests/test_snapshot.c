/* SPDX-License-Identifier: MIT */
/*
 * test_snapshot.c - save/load and insert_at for pool and table:
 * continuation equivalence (the loaded container issues the same handles
 * as the original for the same operations), malformed and hostile input,
 * config mismatches, replication in shuffled order, allocation failures.
 */
#include "ark/ark.h"
#include "harness.h"
#include "pool_internal.h"
#include "snapshot.h"
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

/* Recompute both checksums of a snapshot whose descriptor has extra
 * bytes of column sizes, so mutated contents reach the validation. */
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

/* ---- pool: a random operation stream ----------------------------------- */

typedef struct item {
    uint64_t value;
    uint64_t salt;
} item;

typedef struct hook_sum {
    uint64_t calls, sum;
} hook_sum;

static void sum_remove(void *elem, ark_handle h, void *user) {
    hook_sum *s = user;
    const item *it = elem;
    s->calls++;
    s->sum += it->value * 31 + h;
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

/* One step on pool p; the rng state and list are per pool (the two pools
 * of a comparison get equal copies). Returns a digest of what happened. */
static uint64_t pool_step(ark_pool *p, uint64_t *rng, hlist *l, uint64_t step) {
    uint64_t op = harness_below(rng, 100);
    if (op < 45 || l->n == 0) {
        item it = {step, step * 7};
        ark_handle h = 0;
        ark_status st = ark_pool_insert(p, &it, &h);
        if (st == ARK_OK) {
            hlist_push(l, h);
        }
        return h ^ ((uint64_t)st << 60);
    }
    size_t k = (size_t)harness_below(rng, l->n);
    ark_handle h = l->h[k];
    if (op < 75) {
        ark_status st = ark_pool_remove(p, h);
        l->h[k] = l->h[--l->n];
        return st;
    }
    if (op < 85) {
        return (uint64_t)ark_pool_remove_later(p, h) + 100;
    }
    if (op < 88) {
        return ark_pool_flush(p) + 1000;
    }
    const item *it = ark_pool_get(p, h);
    return it != NULL ? it->value * 3 + it->salt : 7;
}

static ark_status save_pool(const ark_pool *p, membuf *m) {
    ark_writer w = mem_writer(m);
    return ark_pool_save(p, &w);
}

static ark_status load_pool(ark_pool **out, const ark_pool_config *cfg,
                            membuf *m) {
    ark_reader r = mem_reader(m);
    return ark_pool_load(out, cfg, &r);
}

/* Same elements at the same handles, in the same order. */
static void check_same_pool(const ark_pool *a, const ark_pool *b) {
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

/* Run steps on A; at save_at save A and load B; run the rest on both and
 * compare every result, the hooks, iteration and sealing. */
static void pool_continuation(ark_pool_config cfg, uint64_t steps,
                              uint64_t save_at, bool pending_at_save) {
    hook_sum ha = {0, 0}, hb = {0, 0};
    cfg.on_remove = sum_remove;
    cfg.user = &ha;
    ark_pool *a = NULL, *b = NULL;
    CHECK_OK(ark_pool_create(&a, &cfg));
    uint64_t rng = harness_seed() ^ save_at;
    hlist la = {0}, lb = {0};
    for (uint64_t s = 0; s < save_at; s++) {
        pool_step(a, &rng, &la, s);
    }
    if (pending_at_save) {
        for (size_t k = 0; k < la.n && k < 5; k++) {
            ark_pool_remove_later(a, la.h[la.n - 1 - k]);
        }
    }
    membuf m = {0};
    CHECK_OK(save_pool(a, &m));
    ark_pool_config cb = cfg;
    cb.user = &hb;
    cb.seal_key = 0;
    CHECK_OK(load_pool(&b, &cb, &m));
    CHECK_OK(ark__pool_validate(b));
    ha.calls = 0;
    ha.sum = 0;
    CHECK_EQ(ark_pool_count(a), ark_pool_count(b));
    lb.n = la.n;
    lb.cap = la.cap;
    lb.h = malloc(la.cap * sizeof *lb.h + 1);
    if (la.n > 0) {
        memcpy(lb.h, la.h, la.n * sizeof *la.h);
    }
    uint64_t rb = rng;
    for (uint64_t s = save_at; s < steps; s++) {
        uint64_t da = pool_step(a, &rng, &la, s);
        uint64_t db = pool_step(b, &rb, &lb, s);
        if (da != db) {
            harness_fail(__FILE__, __LINE__, "step %" PRIu64 " differs", s);
            break;
        }
    }
    CHECK_EQ(ha.calls, hb.calls);
    CHECK_EQ(ha.sum, hb.sum);
    ark_pool_flush(a);
    ark_pool_flush(b);
    CHECK_EQ(ha.sum, hb.sum);
    check_same_pool(a, b);
    CHECK_EQ(ark__pool_retired(a), ark__pool_retired(b));
    CHECK_OK(ark__pool_validate(a));
    CHECK_OK(ark__pool_validate(b));
    free(la.h);
    free(lb.h);
    mem_free(&m);
    ark_pool_destroy(a);
    ark_pool_destroy(b);
}

static ark_pool_config item_cfg(void) {
    ark_pool_config cfg = {.elem_size = sizeof(item), .seal_key = 42};
    return cfg;
}

TEST(pool_continuation_at_start) {
    printf("seed %" PRIu64 "\n", harness_seed());
    pool_continuation(item_cfg(), harness_scaled(20000), 0, false);
}

TEST(pool_continuation_mid_churn) {
    uint64_t n = harness_scaled(40000);
    pool_continuation(item_cfg(), n, n / 2, false);
    pool_continuation(item_cfg(), n, n / 3, true);
}

TEST(pool_continuation_retiring) {
    ark_pool_config cfg = item_cfg();
    cfg.index_bits = 9;
    cfg.gen_bits = 2;
    cfg.tag_bits = 5;
    cfg.tag = 17;
    uint64_t n = harness_scaled(60000);
    pool_continuation(cfg, n, n * 3 / 4, true);
    pool_continuation(cfg, n, n / 5, false);
}

TEST(pool_continuation_custom_allocator) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark_pool_config cfg = item_cfg();
    cfg.allocator = &ta.base;
    uint64_t n = harness_scaled(20000);
    pool_continuation(cfg, n, n / 2, true);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

/* A small pool with every slot state: live, free (ring), marked, retired. */
static ark_pool *small_pool(ark_pool_config *cfg) {
    *cfg = item_cfg();
    cfg->index_bits = 8;
    cfg->gen_bits = 1;
    ark_pool *p = NULL;
    if (ark_pool_create(&p, cfg) != ARK_OK) {
        return NULL;
    }
    ark_handle h[8];
    for (int k = 0; k < 8; k++) {
        item it = {(uint64_t)k, 99};
        ark_pool_insert(p, &it, &h[k]);
    }
    ark_pool_remove(p, h[1]);
    ark_pool_remove(p, h[2]);
    ark_pool_remove_later(p, h[3]);
    /* gen 1 of slot 7 is its last: it retires. */
    for (int k = 0; k < 70; k++) {
        item it = {100u + (unsigned)k, 5};
        ark_handle x;
        ark_pool_insert(p, &it, &x);
        ark_pool_remove(p, x);
    }
    return p;
}

/* Every truncation of m and a bit flip at every byte: ARK_ECORRUPT; m
 * itself loads. */
static void pool_damage(const ark_pool_config *cfg, membuf *m) {
    ark_pool *q = NULL;
    for (size_t len = 0; len < m->len; len++) {
        membuf t = *m;
        t.len = len;
        CHECK_STATUS(load_pool(&q, cfg, &t), ARK_ECORRUPT);
    }
    uint64_t rng = harness_seed();
    for (size_t at = 0; at < m->len; at++) {
        unsigned char old = m->data[at];
        m->data[at] ^= (unsigned char)(1u << harness_below(&rng, 8));
        CHECK_STATUS(load_pool(&q, cfg, m), ARK_ECORRUPT);
        m->data[at] = old;
    }
    CHECK_OK(load_pool(&q, cfg, m));
    CHECK_EQ(m->pos, m->len);
    CHECK_OK(ark__pool_validate(q));
    ark_pool_destroy(q);
}

TEST(pool_truncation_and_flips) {
    ark_pool_config cfg;
    ark_pool *p = small_pool(&cfg);
    CHECK(p != NULL);
    CHECK(ark__pool_retired(p) > 0);
    membuf m = {0};
    CHECK_OK(save_pool(p, &m));
    pool_damage(&cfg, &m);
    mem_free(&m);
    ark_pool_destroy(p);
}

/* Mutations with the checksums fixed up reach the structural checks:
 * any result is fine but a crash, and a pool that loads is valid. */
TEST(pool_mutations_past_checksum) {
    ark_pool_config cfg;
    ark_pool *p = small_pool(&cfg);
    CHECK(p != NULL);
    membuf m = {0};
    CHECK_OK(save_pool(p, &m));
    uint64_t rng = harness_seed();
    uint64_t rounds = harness_scaled(20000);
    unsigned char *orig = malloc(m.len);
    memcpy(orig, m.data, m.len);
    uint64_t loaded = 0;
    for (uint64_t r = 0; r < rounds; r++) {
        memcpy(m.data, orig, m.len);
        int flips = 1 + (int)harness_below(&rng, 3);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)harness_below(&rng, m.len - 8);
            m.data[at] = (unsigned char)harness_rand(&rng);
        }
        fix_checksums(&m, ARK__SNAP_HEADER_BYTES);
        ark_pool *q = NULL;
        ark_status st = load_pool(&q, &cfg, &m);
        CHECK(st == ARK_OK || st == ARK_ECORRUPT || st == ARK_EINVAL);
        if (st == ARK_OK) {
            loaded++;
            CHECK_OK(ark__pool_validate(q));
            item it = {1, 2};
            ark_handle h;
            for (int k = 0; k < 80; k++) {
                if (ark_pool_insert(q, &it, &h) == ARK_OK) {
                    ark_pool_remove(q, h);
                }
            }
            ark_pool_flush(q);
            CHECK_OK(ark__pool_validate(q));
            ark_pool_destroy(q);
        }
    }
    printf("%" PRIu64 " of %" PRIu64 " mutants loaded\n", loaded, rounds);
    free(orig);
    mem_free(&m);
    ark_pool_destroy(p);
}

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

/* 700 slots: three blocks, all live at generation 0 (one stamp each). */
static ark_pool *block_pool(ark_pool_config *cfg, ark_handle *hs) {
    *cfg = item_cfg();
    ark_pool *p = NULL;
    if (ark_pool_create(&p, cfg) != ARK_OK) {
        return NULL;
    }
    for (uint64_t k = 0; k < 700; k++) {
        item it = {k, k * 7};
        ark_pool_insert(p, &it, &hs[k]);
    }
    return p;
}

/* q, loaded from m, is valid and saves to the bytes the load read. */
static void check_saves_back(const ark_pool *q, const membuf *m) {
    CHECK_OK(ark__pool_validate(q));
    membuf back = {0};
    CHECK_OK(save_pool(q, &back));
    CHECK_EQ(back.len, m->pos);
    CHECK(memcmp(back.data, m->data, back.len) == 0);
    mem_free(&back);
}

TEST(pool_blocks_encoding) {
    ark_pool_config cfg;
    ark_handle hs[700];
    ark_pool *p = block_pool(&cfg, hs);
    CHECK(p != NULL);
    membuf m = {0};
    CHECK_OK(save_pool(p, &m));
    /* Descriptor, three one-stamp blocks, the elements, the trailer. */
    CHECK_EQ(m.len,
             ARK__SNAP_HEADER_BYTES + 8 + 3 * 8 + 700 * sizeof(item) + 8);
    size_t b1 = block_at(&m, 1, sizeof(item));
    CHECK(b1 + 8 < m.len);
    CHECK_EQ(m.data[b1], ARK__SNAP_BLOCK_LIVE);
    CHECK_EQ(m.data[b1 + 4], 1); /* the stamp: generation 0, live */
    ark_pool *q = NULL;
    CHECK_OK(load_pool(&q, &cfg, &m));
    CHECK_EQ(m.pos, m.len);
    check_same_pool(p, q);
    ark_pool_destroy(q);

    /* Non-canonical: block 1 written with every stamp listed. */
    membuf n = {0};
    n.cap = m.len + 4 * ARK__SNAP_BLOCK;
    n.data = malloc(n.cap);
    memcpy(n.data, m.data, b1);
    n.len = b1;
    put_le32_at(&n, n.len, ARK__SNAP_BLOCK_STAMPS);
    n.len += 4;
    for (unsigned k = 0; k < ARK__SNAP_BLOCK; k++) {
        put_le32_at(&n, n.len, 1);
        n.len += 4;
    }
    memcpy(n.data + n.len, m.data + b1 + 8, m.len - b1 - 8);
    n.len += m.len - b1 - 8;
    fix_checksums(&n, ARK__SNAP_HEADER_BYTES);
    CHECK_STATUS(load_pool(&q, &cfg, &n), ARK_ECORRUPT);
    /* The same with one stamp changed is the canonical form of another
     * pool: it loads. */
    put_le32_at(&n, b1 + 4 + 4 * 9, 2);
    fix_checksums(&n, ARK__SNAP_HEADER_BYTES);
    CHECK_OK(load_pool(&q, &cfg, &n));
    CHECK_OK(ark__pool_validate(q));
    CHECK_EQ(ark_pool_count(q), 700);
    CHECK(ark_pool_get(q, hs[265]) == NULL); /* slot 266: generation 1 */
    CHECK(ark_pool_get(q, hs[264]) != NULL);
    check_saves_back(q, &n);
    ark_pool_destroy(q);
    mem_free(&n);

    /* Bad modes and stamps in a one-stamp block. */
    const uint32_t bad[][2] = {{2, 1}, {UINT32_MAX, 1}, {1, 0}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        membuf t = {0};
        t.data = malloc(m.len);
        t.len = t.cap = m.len;
        memcpy(t.data, m.data, m.len);
        put_le32_at(&t, b1, bad[k][0]);
        put_le32_at(&t, b1 + 4, bad[k][1]);
        fix_checksums(&t, ARK__SNAP_HEADER_BYTES);
        CHECK_STATUS(load_pool(&q, &cfg, &t), ARK_ECORRUPT);
        mem_free(&t);
    }
    mem_free(&m);
    ark_pool_destroy(p);
}

/* The block paths for every element size the copies special-case and
 * some they do not, with one-stamp and listed blocks. */
TEST(pool_blocks_element_sizes) {
    static const size_t sizes[] = {1, 4, 8, 12, 16, 24, 40, 5000, 20000};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        ark_pool_config cfg = {.elem_size = sizes[z]};
        ark_pool *p = NULL;
        CHECK_OK(ark_pool_create(&p, &cfg));
        unsigned char *e = malloc(sizes[z]);
        ark_handle h[600];
        for (size_t k = 0; k < 600; k++) {
            memset(e, (int)k, sizes[z]);
            CHECK_OK(ark_pool_insert(p, e, &h[k]));
        }
        CHECK_OK(ark_pool_remove(p, h[400]));
        CHECK_OK(ark_pool_remove_later(p, h[401]));
        membuf m = {0};
        CHECK_OK(save_pool(p, &m));
        ark_pool *q = NULL;
        CHECK_OK(load_pool(&q, &cfg, &m));
        CHECK_EQ(m.pos, m.len);
        CHECK_EQ(ark_pool_count(q), 598);
        for (size_t k = 0; k < 600; k++) {
            const unsigned char *a = ark_pool_get(p, h[k]);
            const unsigned char *b = ark_pool_get(q, h[k]);
            CHECK_EQ(a == NULL, b == NULL);
            CHECK(a == NULL || memcmp(a, b, sizes[z]) == 0);
        }
        check_saves_back(q, &m);
        CHECK_EQ(ark_pool_flush(q), 1);
        ark_pool_destroy(q);
        mem_free(&m);
        free(e);
        ark_pool_destroy(p);
    }
}

/* Live blocks next to listed ones: round trip, every truncation and flip,
 * mutants that load save back to the same bytes. */
TEST(pool_blocks_mixed) {
    ark_pool_config cfg;
    ark_handle hs[700];
    ark_pool *p = block_pool(&cfg, hs);
    CHECK(p != NULL);
    CHECK_OK(ark_pool_remove(p, hs[300])); /* block 1 lists its stamps */
    ark_pool_remove_later(p, hs[301]);
    membuf m = {0};
    CHECK_OK(save_pool(p, &m));
    size_t b1 = block_at(&m, 1, sizeof(item));
    CHECK(b1 + 8 < m.len);
    CHECK_EQ(m.data[b1], ARK__SNAP_BLOCK_STAMPS);
    ark_pool *q = NULL;
    CHECK_OK(load_pool(&q, &cfg, &m));
    check_same_pool(p, q);
    CHECK_EQ(ark_pool_flush(q), 1);
    ark_pool_destroy(q);
    pool_damage(&cfg, &m);
    uint64_t rng = harness_seed();
    unsigned char *orig = malloc(m.len);
    memcpy(orig, m.data, m.len);
    uint64_t loaded = 0, rounds = harness_scaled(4000);
    for (uint64_t r = 0; r < rounds; r++) {
        memcpy(m.data, orig, m.len);
        /* Mostly the block heads and stamps, where the structure is. */
        size_t span = r % 2 ? m.len - 8 : b1 + 4 + 4 * ARK__SNAP_BLOCK;
        size_t at = (size_t)harness_below(&rng, span);
        m.data[at] = (unsigned char)harness_rand(&rng);
        fix_checksums(&m, ARK__SNAP_HEADER_BYTES);
        ark_status st = load_pool(&q, &cfg, &m);
        CHECK(st == ARK_OK || st == ARK_ECORRUPT || st == ARK_EINVAL);
        if (st == ARK_OK) {
            loaded++;
            check_saves_back(q, &m);
            ark_pool_destroy(q);
        }
    }
    printf("%" PRIu64 " of %" PRIu64 " mutants loaded\n", loaded, rounds);
    free(orig);
    mem_free(&m);
    ark_pool_destroy(p);
}

TEST(pool_random_bytes) {
    ark_pool_config cfg = item_cfg();
    uint64_t rng = harness_seed();
    membuf m = {0};
    m.data = malloc(512);
    m.cap = 512;
    ark_pool *q = NULL;
    for (uint64_t r = 0; r < harness_scaled(20000); r++) {
        m.len = (size_t)harness_below(&rng, 512);
        for (size_t k = 0; k < m.len; k++) {
            m.data[k] = (unsigned char)harness_rand(&rng);
        }
        if (r % 2 == 0 && m.len >= 8) {
            memcpy(m.data, "arksnap\x1a", 8);
        }
        CHECK(load_pool(&q, &cfg, &m) != ARK_OK);
    }
    mem_free(&m);
}

TEST(pool_config_mismatch) {
    ark_pool_config cfg;
    ark_pool *p = small_pool(&cfg);
    CHECK(p != NULL);
    membuf m = {0};
    CHECK_OK(save_pool(p, &m));
    ark_pool *q = NULL;
    ark_pool_config c = cfg;
    c.elem_size = 8;
    CHECK_STATUS(load_pool(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.index_bits = 9;
    CHECK_STATUS(load_pool(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.gen_bits = 2;
    CHECK_STATUS(load_pool(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.tag_bits = 3;
    CHECK_STATUS(load_pool(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.seal_key = 43;
    CHECK_STATUS(load_pool(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.elem_size = 0;
    CHECK_STATUS(load_pool(&q, &c, &m), ARK_EINVAL);
    /* The same key, or none, is accepted; alignment is a storage choice. */
    c = cfg;
    c.elem_align = 16;
    CHECK_OK(load_pool(&q, &c, &m));
    ark_pool_destroy(q);
    c.seal_key = 0;
    CHECK_OK(load_pool(&q, &c, &m));
    ark_handle h = ark_pool_handle_of(p, ark_pool_iter_begin(p).elem);
    CHECK_EQ(ark_pool_seal(p, h), ark_pool_seal(q, h));
    ark_pool_destroy(q);
    /* A table cannot load a pool's snapshot. */
    size_t sizes[1] = {sizeof(item)};
    ark_table_config tc = {.column_sizes = sizes, .ncolumns = 1};
    ark_table *t = NULL;
    ark_reader r = mem_reader(&m);
    CHECK_STATUS(ark_table_load(&t, &tc, &r), ARK_ECORRUPT);
    mem_free(&m);
    ark_pool_destroy(p);
}

TEST(pool_file_roundtrip_and_trailing_data) {
    ark_pool_config cfg;
    ark_pool *p = small_pool(&cfg);
    CHECK(p != NULL);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    ark_writer w = {file_write, f};
    CHECK_OK(ark_pool_save(p, &w));
    CHECK_OK(ark_pool_save(p, &w)); /* two snapshots back to back */
    fputs("tail", f);
    rewind(f);
    ark_reader r = {file_read, f};
    ark_pool *q1 = NULL, *q2 = NULL;
    CHECK_OK(ark_pool_load(&q1, &cfg, &r));
    CHECK_OK(ark_pool_load(&q2, &cfg, &r));
    char tail[5] = {0};
    CHECK(fread(tail, 1, 4, f) == 4 && strcmp(tail, "tail") == 0);
    fclose(f);
    CHECK_EQ(ark_pool_count(q1), ark_pool_count(p));
    CHECK_EQ(ark_pool_count(q2), ark_pool_count(p));
    ark_pool_destroy(q1);
    ark_pool_destroy(q2);
    ark_pool_destroy(p);
}

static ark_status fail_write(void *ctx, const void *buf, size_t n) {
    size_t *budget = ctx;
    (void)buf;
    if (n > *budget) {
        return ARK_ENOMEM;
    }
    *budget -= n;
    return ARK_OK;
}

TEST(pool_save_reports_writer_errors) {
    ark_pool_config cfg = item_cfg();
    ark_pool *p = NULL;
    CHECK_OK(ark_pool_create(&p, &cfg));
    for (uint64_t k = 0; k < 5000; k++) {
        item it = {k, k};
        CHECK_OK(ark_pool_insert(p, &it, NULL));
    }
    size_t budget = 20000;
    ark_writer w = {fail_write, &budget};
    CHECK_STATUS(ark_pool_save(p, &w), ARK_ENOMEM);
    ark_pool_destroy(p);
}

/* Load p's snapshot with an allocator that fails at the k-th allocation,
 * for every k until one succeeds: ARK_ENOMEM and nothing left over. */
static void pool_alloc_failures(ark_pool_config cfg, const ark_pool *p) {
    membuf m = {0};
    CHECK_OK(save_pool(p, &m));
    test_allocator ta;
    test_allocator_init(&ta);
    cfg.allocator = &ta.base;
    for (uint64_t k = 1;; k++) {
        test_allocator_fail_at(&ta, k);
        ark_pool *q = NULL;
        ark_status st = load_pool(&q, &cfg, &m);
        if (st == ARK_OK) {
            CHECK_OK(ark__pool_validate(q));
            CHECK_EQ(ark_pool_count(q), ark_pool_count(p));
            ark_pool_destroy(q);
            CHECK_EQ(ta.live_blocks, 0);
            break;
        }
        CHECK_STATUS(st, ARK_ENOMEM);
        CHECK_EQ(ta.live_blocks, 0);
        CHECK(k < 1000);
    }
    CHECK_EQ(ta.bad_frees, 0);
    mem_free(&m);
}

TEST(pool_load_allocation_failures) {
    ark_pool_config cfg;
    ark_pool *p = small_pool(&cfg);
    CHECK(p != NULL);
    for (uint64_t k = 0; k < 100; k++) {
        item it = {k, k};
        CHECK_OK(ark_pool_insert(p, &it, NULL));
    }
    pool_alloc_failures(cfg, p);
    ark_pool_destroy(p);
    /* One-stamp and listed blocks. */
    ark_handle hs[700];
    p = block_pool(&cfg, hs);
    CHECK(p != NULL);
    CHECK_OK(ark_pool_remove(p, hs[300]));
    pool_alloc_failures(cfg, p);
    ark_pool_destroy(p);
}

/* ---- pool: insert_at ---------------------------------------------------- */

static void shuffle(ark_handle *h, size_t n, uint64_t *rng) {
    for (size_t k = n; k > 1; k--) {
        size_t j = (size_t)harness_below(rng, k);
        ark_handle t = h[k - 1];
        h[k - 1] = h[j];
        h[j] = t;
    }
}

TEST(pool_insert_at_replicates_shuffled) {
    ark_pool_config cfg = item_cfg();
    cfg.index_bits = 20;
    cfg.gen_bits = 12;
    ark_pool *a = NULL, *b = NULL;
    CHECK_OK(ark_pool_create(&a, &cfg));
    CHECK_OK(ark_pool_create(&b, &cfg));
    uint64_t rng = harness_seed();
    hlist l = {0};
    uint64_t n = harness_scaled(100000);
    for (uint64_t s = 0; s < n; s++) {
        pool_step(a, &rng, &l, s);
    }
    ark_pool_flush(a);
    size_t count = ark_pool_count(a);
    ark_handle *hs = malloc((count + 1) * sizeof *hs);
    size_t k = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(a); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        hs[k++] = it.handle;
    }
    CHECK_EQ(k, count);
    shuffle(hs, count, &rng);
    CHECK_OK(ark_pool_reserve(b, count));
    for (size_t j = 0; j < count; j++) {
        CHECK_OK(ark_pool_insert_at(b, hs[j], ark_pool_get(a, hs[j])));
        if (j % 4096 == 0) {
            CHECK_OK(ark__pool_validate(b));
        }
    }
    CHECK_OK(ark__pool_validate(b));
    CHECK_EQ(ark_pool_count(b), count);
    ark_pool_iter ib = ark_pool_iter_begin(b);
    for (ark_pool_iter ia = ark_pool_iter_begin(a); ark_pool_iter_valid(&ia);
         ark_pool_iter_next(&ia)) {
        CHECK_EQ(ia.handle, ib.handle);
        CHECK(memcmp(ia.elem, ib.elem, sizeof(item)) == 0);
        ark_pool_iter_next(&ib);
    }
    CHECK(!ark_pool_iter_valid(&ib));
    /* The replica keeps working: churn, then save and load it. */
    hlist lb = {0};
    for (uint64_t s = 0; s < n / 4; s++) {
        pool_step(b, &rng, &lb, s);
    }
    CHECK_OK(ark__pool_validate(b));
    membuf m = {0};
    CHECK_OK(save_pool(b, &m));
    ark_pool *c = NULL;
    CHECK_OK(load_pool(&c, &cfg, &m));
    uint64_t r2 = rng;
    hlist lc = {0};
    lc.h = malloc(lb.cap * sizeof *lc.h + 1);
    if (lb.n > 0) {
        memcpy(lc.h, lb.h, lb.n * sizeof *lb.h);
    }
    lc.n = lb.n;
    lc.cap = lb.cap;
    for (uint64_t s = 0; s < n / 4; s++) {
        CHECK_EQ(pool_step(b, &rng, &lb, s), pool_step(c, &r2, &lc, s));
    }
    mem_free(&m);
    free(hs);
    free(l.h);
    free(lb.h);
    free(lc.h);
    ark_pool_destroy(a);
    ark_pool_destroy(b);
    ark_pool_destroy(c);
}

/* A replica that follows its server operation by operation: the server's
 * inserts become insert_at, removes become removes. Handles and the
 * replica's validity are checked all along. */
TEST(pool_insert_at_mirrors_churn) {
    ark_pool_config cfg = item_cfg();
    cfg.index_bits = 10;
    cfg.gen_bits = 3;
    ark_pool *a = NULL, *b = NULL;
    CHECK_OK(ark_pool_create(&a, &cfg));
    CHECK_OK(ark_pool_create(&b, &cfg));
    uint64_t rng = harness_seed();
    hlist l = {0};
    for (uint64_t s = 0; s < harness_scaled(50000); s++) {
        if (harness_below(&rng, 2) == 0 || l.n == 0) {
            item it = {s, s};
            ark_handle h;
            if (ark_pool_insert(a, &it, &h) == ARK_OK) {
                CHECK_OK(ark_pool_insert_at(b, h, &it));
                hlist_push(&l, h);
            }
        } else {
            size_t k = (size_t)harness_below(&rng, l.n);
            CHECK_OK(ark_pool_remove(a, l.h[k]));
            CHECK_OK(ark_pool_remove(b, l.h[k]));
            l.h[k] = l.h[--l.n];
        }
        if (s % 1024 == 0) {
            CHECK_OK(ark__pool_validate(b));
        }
    }
    CHECK_EQ(ark_pool_count(a), ark_pool_count(b));
    CHECK_EQ(ark__pool_retired(a), ark__pool_retired(b));
    CHECK_OK(ark__pool_validate(b));
    free(l.h);
    ark_pool_destroy(a);
    ark_pool_destroy(b);
}

TEST(pool_insert_at_statuses) {
    ark_pool_config cfg = item_cfg();
    cfg.index_bits = 16;
    cfg.gen_bits = 4;
    cfg.tag_bits = 4;
    cfg.tag = 5;
    ark_pool *p = NULL;
    CHECK_OK(ark_pool_create(&p, &cfg));
    item it = {1, 2};
    uint64_t tag = (uint64_t)5 << 20;
    ark_handle h = 10 | (3u << 16) | tag;
    CHECK_STATUS(ark_pool_insert_at(p, 0, &it), ARK_ENULL);
    CHECK_STATUS(ark_pool_insert_at(p, h ^ tag, &it), ARK_EFOREIGN);
    CHECK_STATUS(ark_pool_insert_at(p, h | (uint64_t)1 << 40, &it),
                 ARK_EFOREIGN);
    CHECK_STATUS(ark_pool_insert_at(p, (3u << 16) | tag, &it), ARK_ERANGE);
    CHECK_OK(ark_pool_insert_at(p, h, &it));
    CHECK(ark_pool_get(p, h) != NULL);
    CHECK_EQ(ark_pool_count(p), 1);
    CHECK_STATUS(ark_pool_insert_at(p, h, &it), ARK_EEXIST);
    CHECK_STATUS(ark_pool_insert_at(p, 10 | (5u << 16) | tag, &it), ARK_EEXIST);
    /* Slots 1..9 are free with generation 0 next. */
    CHECK_OK(ark_pool_insert_at(p, 4 | tag, &it));
    CHECK_OK(ark_pool_remove(p, 4 | tag));
    CHECK_STATUS(ark_pool_insert_at(p, 4 | tag, &it), ARK_ESTALE);
    CHECK_OK(ark_pool_insert_at(p, 4 | (2u << 16) | tag, &it));
    /* Generation 15 is slot 4's last: removed, it retires. */
    CHECK_OK(ark_pool_remove(p, 4 | (2u << 16) | tag));
    CHECK_OK(ark_pool_insert_at(p, 4 | (15u << 16) | tag, &it));
    CHECK_OK(ark_pool_remove(p, 4 | (15u << 16) | tag));
    CHECK_EQ(ark__pool_retired(p), 1);
    CHECK_STATUS(ark_pool_insert_at(p, 4 | (15u << 16) | tag, &it), ARK_ESTALE);
    /* Marked: the marked element itself is stale, a newer one waits. */
    CHECK_OK(ark_pool_remove_later(p, h));
    CHECK_STATUS(ark_pool_insert_at(p, h, &it), ARK_ESTALE);
    CHECK_STATUS(ark_pool_insert_at(p, 10 | (4u << 16) | tag, &it), ARK_EEXIST);
    ark_pool_flush(p);
    CHECK_OK(ark_pool_insert_at(p, 10 | (4u << 16) | tag, &it));
    /* Far past the storage: EFULL; within the gap bound: fine. */
    CHECK_STATUS(ark_pool_insert_at(p, 65535 | tag, &it), ARK_OK);
    CHECK_OK(ark__pool_validate(p));
    ark_pool_destroy(p);
    cfg = item_cfg();
    CHECK_OK(ark_pool_create(&p, &cfg));
    CHECK_STATUS(ark_pool_insert_at(p, (uint64_t)1 << 31, &it), ARK_EFULL);
    CHECK_OK(ark_pool_insert_at(p, (uint64_t)1 << 15, &it));
    CHECK_OK(ark__pool_validate(p));
    ark_pool_destroy(p);
}

TEST(pool_insert_at_allocation_failures) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark_pool_config cfg = item_cfg();
    cfg.allocator = &ta.base;
    ark_pool *p = NULL;
    CHECK_OK(ark_pool_create(&p, &cfg));
    item it = {1, 2};
    uint64_t rng = harness_seed();
    for (int round = 0; round < 40; round++) {
        ark_handle h = 1 + harness_below(&rng, (uint64_t)2000 * (round + 1));
        for (uint64_t k = 1;; k++) {
            size_t before = ark_pool_count(p);
            test_allocator_fail_at(&ta, k);
            ark_status st = ark_pool_insert_at(p, h, &it);
            test_allocator_fail_at(&ta, 0);
            if (st != ARK_ENOMEM) {
                CHECK(st == ARK_OK || st == ARK_EEXIST);
                break;
            }
            CHECK_EQ(ark_pool_count(p), before);
            CHECK(ark_pool_get(p, h) == NULL);
            CHECK_OK(ark__pool_validate(p));
        }
        CHECK_OK(ark__pool_validate(p));
    }
    /* A ring with dead entries needs scratch to save: its failure too. */
    membuf m = {0};
    for (uint64_t k = 1;; k++) {
        test_allocator_fail_at(&ta, k);
        m.len = 0;
        ark_status st = save_pool(p, &m);
        test_allocator_fail_at(&ta, 0);
        if (st == ARK_OK) {
            break;
        }
        CHECK_STATUS(st, ARK_ENOMEM);
    }
    ark_pool *q = NULL;
    CHECK_OK(load_pool(&q, &cfg, &m));
    CHECK_EQ(ark_pool_count(q), ark_pool_count(p));
    ark_pool_destroy(q);
    mem_free(&m);
    ark_pool_destroy(p);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

/* ---- table --------------------------------------------------------------- */

static const size_t table_sizes[3] = {4, 16, 8};

static ark_table_config table_cfg(void) {
    ark_table_config cfg = {
        .column_sizes = table_sizes, .ncolumns = 3, .seal_key = 7};
    return cfg;
}

static void count_remove(void *elem, ark_handle h, void *user) {
    hook_sum *s = user;
    (void)elem;
    s->calls++;
    s->sum += h;
}

/* Write recognisable values into every column of row r. */
static void fill_row(ark_table *t, size_t r, uint64_t v) {
    uint32_t *c0 = ark_table_column(t, 0);
    unsigned char *c1 = ark_table_column(t, 1);
    uint64_t *c2 = ark_table_column(t, 2);
    c0[r] = (uint32_t)v;
    memset(c1 + 16 * r, (int)(v & 0xff), 16);
    c2[r] = v * 0x9e3779b97f4a7c15u;
}

static uint64_t row_digest(const ark_table *t, size_t r) {
    const uint32_t *c0 = ark_table_column(t, 0);
    const unsigned char *c1 = ark_table_column(t, 1);
    const uint64_t *c2 = ark_table_column(t, 2);
    return c0[r] ^ ((uint64_t)c1[16 * r + 15] << 32) ^ c2[r];
}

static uint64_t table_step(ark_table *t, uint64_t *rng, hlist *l,
                           uint64_t step) {
    uint64_t op = harness_below(rng, 100);
    if (op < 45 || l->n == 0) {
        ark_handle h = 0;
        size_t r = 0;
        ark_status st = ark_table_insert(t, &h, &r);
        if (st == ARK_OK) {
            fill_row(t, r, step);
            hlist_push(l, h);
        }
        return h ^ ((uint64_t)st << 60) ^ ((uint64_t)r << 40);
    }
    size_t k = (size_t)harness_below(rng, l->n);
    ark_handle h = l->h[k];
    if (op < 75) {
        ark_status st = ark_table_remove(t, h);
        l->h[k] = l->h[--l->n];
        return st;
    }
    if (op < 85) {
        return (uint64_t)ark_table_remove_later(t, h) + 100;
    }
    if (op < 88) {
        return ark_table_flush(t) + 1000;
    }
    size_t r = ark_table_row(t, h);
    return r == ARK_NO_ROW ? 7 : row_digest(t, r) + r;
}

static ark_status save_table(const ark_table *t, membuf *m) {
    ark_writer w = mem_writer(m);
    return ark_table_save(t, &w);
}

static ark_status load_table(ark_table **out, const ark_table_config *cfg,
                             membuf *m) {
    ark_reader r = mem_reader(m);
    return ark_table_load(out, cfg, &r);
}

static void table_continuation(ark_table_config cfg, uint64_t steps,
                               uint64_t save_at, bool pending_at_save) {
    hook_sum ha = {0, 0}, hb = {0, 0};
    cfg.on_remove = count_remove;
    cfg.user = &ha;
    ark_table *a = NULL, *b = NULL;
    CHECK_OK(ark_table_create(&a, &cfg));
    uint64_t rng = harness_seed() ^ save_at;
    hlist la = {0}, lb = {0};
    for (uint64_t s = 0; s < save_at; s++) {
        table_step(a, &rng, &la, s);
    }
    if (pending_at_save) {
        for (size_t k = 0; k < la.n && k < 5; k++) {
            ark_table_remove_later(a, la.h[la.n - 1 - k]);
        }
    }
    membuf m = {0};
    CHECK_OK(save_table(a, &m));
    ark_table_config cb = cfg;
    cb.user = &hb;
    cb.seal_key = 0;
    CHECK_OK(load_table(&b, &cb, &m));
    CHECK_OK(ark__table_validate(b, false));
    ha.calls = 0;
    ha.sum = 0;
    CHECK_EQ(ark_table_rows(a), ark_table_rows(b));
    for (size_t r = 0; r < ark_table_rows(a); r++) {
        CHECK_EQ(ark_table_handle_at(a, r), ark_table_handle_at(b, r));
        CHECK_EQ(row_digest(a, r), row_digest(b, r));
    }
    lb.n = la.n;
    lb.cap = la.cap;
    lb.h = malloc(la.cap * sizeof *lb.h + 1);
    if (la.n > 0) {
        memcpy(lb.h, la.h, la.n * sizeof *la.h);
    }
    uint64_t rb = rng;
    for (uint64_t s = save_at; s < steps; s++) {
        uint64_t da = table_step(a, &rng, &la, s);
        uint64_t db = table_step(b, &rb, &lb, s);
        if (da != db) {
            harness_fail(__FILE__, __LINE__, "step %" PRIu64 " differs", s);
            break;
        }
    }
    ark_table_flush(a);
    ark_table_flush(b);
    CHECK_EQ(ha.calls, hb.calls);
    CHECK_EQ(ha.sum, hb.sum);
    CHECK_EQ(ark_table_rows(a), ark_table_rows(b));
    for (size_t r = 0; r < ark_table_rows(a); r++) {
        ark_handle h = ark_table_handle_at(a, r);
        CHECK_EQ(h, ark_table_handle_at(b, r));
        CHECK_EQ(row_digest(a, r), row_digest(b, r));
        CHECK_EQ(ark_table_seal(a, h), ark_table_seal(b, h));
    }
    CHECK_OK(ark__table_validate(a, false));
    CHECK_OK(ark__table_validate(b, false));
    free(la.h);
    free(lb.h);
    mem_free(&m);
    ark_table_destroy(a);
    ark_table_destroy(b);
}

TEST(table_continuation_at_start) {
    table_continuation(table_cfg(), harness_scaled(20000), 0, false);
}

TEST(table_continuation_mid_churn) {
    uint64_t n = harness_scaled(40000);
    table_continuation(table_cfg(), n, n / 2, false);
    table_continuation(table_cfg(), n, n / 3, true);
}

TEST(table_continuation_retiring) {
    ark_table_config cfg = table_cfg();
    cfg.index_bits = 9;
    cfg.gen_bits = 2;
    cfg.tag_bits = 3;
    cfg.tag = 6;
    uint64_t n = harness_scaled(60000);
    table_continuation(cfg, n, n * 3 / 4, true);
    test_allocator ta;
    test_allocator_init(&ta);
    cfg.allocator = &ta.base;
    table_continuation(cfg, n, n / 5, true);
    CHECK_EQ(ta.live_blocks, 0);
}

static ark_table *small_table(ark_table_config *cfg) {
    *cfg = table_cfg();
    cfg->index_bits = 8;
    cfg->gen_bits = 1;
    ark_table *t = NULL;
    if (ark_table_create(&t, cfg) != ARK_OK) {
        return NULL;
    }
    ark_handle h[8];
    for (int k = 0; k < 8; k++) {
        size_t r;
        ark_table_insert(t, &h[k], &r);
        fill_row(t, r, (uint64_t)k + 1);
    }
    ark_table_remove(t, h[1]);
    ark_table_remove(t, h[2]);
    ark_table_remove_later(t, h[3]);
    for (int k = 0; k < 70; k++) {
        ark_handle x;
        ark_table_insert(t, &x, NULL);
        ark_table_remove(t, x);
    }
    return t;
}

TEST(table_truncation_flips_mutations) {
    ark_table_config cfg;
    ark_table *t = small_table(&cfg);
    CHECK(t != NULL);
    membuf m = {0};
    CHECK_OK(save_table(t, &m));
    ark_table *q = NULL;
    for (size_t len = 0; len < m.len; len++) {
        membuf c = m;
        c.len = len;
        CHECK_STATUS(load_table(&q, &cfg, &c), ARK_ECORRUPT);
    }
    uint64_t rng = harness_seed();
    for (size_t at = 0; at < m.len; at++) {
        unsigned char old = m.data[at];
        m.data[at] ^= (unsigned char)(1u << harness_below(&rng, 8));
        CHECK_STATUS(load_table(&q, &cfg, &m), ARK_ECORRUPT);
        m.data[at] = old;
    }
    unsigned char *orig = malloc(m.len);
    memcpy(orig, m.data, m.len);
    size_t desc = ARK__SNAP_HEADER_BYTES + 8 * cfg.ncolumns;
    uint64_t loaded = 0, rounds = harness_scaled(20000);
    for (uint64_t r = 0; r < rounds; r++) {
        memcpy(m.data, orig, m.len);
        for (int f = 0; f < 1 + (int)harness_below(&rng, 3); f++) {
            m.data[harness_below(&rng, m.len - 8)] =
                (unsigned char)harness_rand(&rng);
        }
        fix_checksums(&m, desc);
        ark_status st = load_table(&q, &cfg, &m);
        CHECK(st == ARK_OK || st == ARK_ECORRUPT || st == ARK_EINVAL);
        if (st == ARK_OK) {
            loaded++;
            for (int k = 0; k < 80; k++) {
                ark_handle h;
                if (ark_table_insert(q, &h, NULL) == ARK_OK) {
                    ark_table_remove(q, h);
                }
            }
            ark_table_flush(q);
            CHECK_OK(ark__table_validate(q, false));
            ark_table_destroy(q);
        }
    }
    printf("%" PRIu64 " of %" PRIu64 " mutants loaded\n", loaded, rounds);
    memcpy(m.data, orig, m.len);
    CHECK_OK(load_table(&q, &cfg, &m));
    ark_table_destroy(q);
    free(orig);
    mem_free(&m);
    ark_table_destroy(t);
}

TEST(table_config_mismatch) {
    ark_table_config cfg;
    ark_table *t = small_table(&cfg);
    CHECK(t != NULL);
    membuf m = {0};
    CHECK_OK(save_table(t, &m));
    ark_table *q = NULL;
    size_t other[3] = {4, 16, 4};
    ark_table_config c = cfg;
    c.column_sizes = other;
    CHECK_STATUS(load_table(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.ncolumns = 2;
    CHECK_STATUS(load_table(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.index_bits = 12;
    CHECK_STATUS(load_table(&q, &c, &m), ARK_EINVAL);
    c = cfg;
    c.seal_key = 8;
    CHECK_STATUS(load_table(&q, &c, &m), ARK_EINVAL);
    ark_pool_config pc = {.elem_size = 4, .index_bits = 8, .gen_bits = 1};
    ark_pool *p = NULL;
    CHECK_STATUS(load_pool(&p, &pc, &m), ARK_ECORRUPT);
    mem_free(&m);
    ark_table_destroy(t);
}

TEST(table_load_allocation_failures) {
    ark_table_config cfg;
    ark_table *t = small_table(&cfg);
    CHECK(t != NULL);
    membuf m = {0};
    CHECK_OK(save_table(t, &m));
    test_allocator ta;
    test_allocator_init(&ta);
    cfg.allocator = &ta.base;
    for (uint64_t k = 1;; k++) {
        test_allocator_fail_at(&ta, k);
        ark_table *q = NULL;
        ark_status st = load_table(&q, &cfg, &m);
        test_allocator_fail_at(&ta, 0);
        if (st == ARK_OK) {
            CHECK_EQ(ark_table_rows(q), ark_table_rows(t));
            ark_table_destroy(q);
            break;
        }
        CHECK_STATUS(st, ARK_ENOMEM);
        CHECK_EQ(ta.live_blocks, 0);
        CHECK(k < 1000);
    }
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
    mem_free(&m);
    ark_table_destroy(t);
}

TEST(table_insert_at_replicates_shuffled) {
    ark_table_config cfg = table_cfg();
    cfg.index_bits = 20;
    cfg.gen_bits = 12;
    ark_table *a = NULL, *b = NULL;
    CHECK_OK(ark_table_create(&a, &cfg));
    CHECK_OK(ark_table_create(&b, &cfg));
    uint64_t rng = harness_seed();
    hlist l = {0};
    uint64_t n = harness_scaled(60000);
    for (uint64_t s = 0; s < n; s++) {
        table_step(a, &rng, &l, s);
    }
    ark_table_flush(a);
    size_t rows = ark_table_rows(a);
    ark_handle *hs = malloc((rows + 1) * sizeof *hs);
    for (size_t r = 0; r < rows; r++) {
        hs[r] = ark_table_handle_at(a, r);
    }
    shuffle(hs, rows, &rng);
    CHECK_OK(ark_table_reserve(b, rows));
    for (size_t j = 0; j < rows; j++) {
        size_t rb;
        CHECK_OK(ark_table_insert_at(b, hs[j], &rb));
        CHECK_EQ(rb, j);
        fill_row(b, rb, row_digest(a, ark_table_row(a, hs[j])));
    }
    CHECK_OK(ark__table_validate(b, false));
    for (size_t j = 0; j < rows; j++) {
        CHECK_EQ(ark_table_check(b, hs[j]), ARK_OK);
        CHECK_STATUS(ark_table_insert_at(b, hs[j], NULL), ARK_EEXIST);
    }
    CHECK_EQ(ark_table_count(b), ark_table_count(a));
    CHECK_STATUS(ark_table_insert_at(b, 0, NULL), ARK_ENULL);
    CHECK_STATUS(ark_table_insert_at(b, (uint64_t)1 << 40, NULL), ARK_EFOREIGN);
    hlist lb = {0};
    for (uint64_t s = 0; s < n / 4; s++) {
        table_step(b, &rng, &lb, s);
    }
    CHECK_OK(ark__table_validate(b, false));
    free(hs);
    free(l.h);
    free(lb.h);
    ark_table_destroy(a);
    ark_table_destroy(b);
}
