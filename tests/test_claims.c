/* SPDX-License-Identifier: MIT */
/*
 * test_claims.c - handles claimed from any thread and index ranges
 * (src/engine/claim.c), on ark_pool and on ark_table through one
 * adapter: what a claimed handle answers, uniqueness, insert_at and
 * unclaim on claimed, unclaimed and stale handles, the reuse delay and
 * retirement of claimed slots, ranges at their edges, save and load with
 * claims (and version 2 snapshots), clear and destroy dropping claims,
 * allocation failure at every allocation, a randomized model, the handles
 * of a container without claims against a model of the rules, and
 * claimer threads racing the owning thread (thread_*, run under TSan).
 */
#include "cont_adapter.h"
#include "pool_internal.h"
#include "snapshot/snapshot.h"
#include "snapshot_mem.h"
#include "table_internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* ---- the adapter ------------------------------------------------------ */

typedef struct ccfg {
    unsigned index_bits, gen_bits;
    uint32_t index_min, index_max;
    const ark_allocator *allocator;
    size_t max_elements;
} ccfg;

static const size_t table_cols[1] = {sizeof(uint64_t)};

static ark_status c_create(cont *c, const kind *k, const ccfg *h) {
    c_init(c, k);
    if (k->table) {
        ark_table_config cfg = {.column_sizes = table_cols,
                                .ncolumns = 1,
                                .index_bits = h->index_bits,
                                .gen_bits = h->gen_bits,
                                .index_min = h->index_min,
                                .index_max = h->index_max,
                                .seal_key = 1,
                                .allocator = h->allocator};
        return ark_table_create(&c->t, &cfg);
    }
    ark_pool_config cfg = {.elem_size = sizeof(uint64_t),
                           .elem_align = 8,
                           .index_bits = h->index_bits,
                           .gen_bits = h->gen_bits,
                           .index_min = h->index_min,
                           .index_max = h->index_max,
                           .seal_key = 1,
                           .max_elements = h->max_elements,
                           .allocator = h->allocator};
    return ark_pool_create(&c->p, &cfg);
}

static ark_status c_insert(cont *c, uint64_t id, ark_handle *out) {
    if (!c->k->table) {
        return ark_pool_insert(c->p, &id, out);
    }
    size_t r;
    ark_status s = ark_table_insert(c->t, out, &r);
    if (s == ARK_OK) {
        ((uint64_t *)ark_table_column(c->t, 0))[r] = id;
    }
    return s;
}

static ark_status c_insert_at(cont *c, ark_handle h, uint64_t id) {
    if (!c->k->table) {
        return ark_pool_insert_at(c->p, h, &id);
    }
    size_t r;
    ark_status s = ark_table_insert_at(c->t, h, &r);
    if (s == ARK_OK) {
        ((uint64_t *)ark_table_column(c->t, 0))[r] = id;
    }
    return s;
}

/* The id of the element h names, or UINT64_MAX when h is not live. */
static uint64_t c_get(const cont *c, ark_handle h) {
    if (!c->k->table) {
        const uint64_t *e = ark_pool_get(c->p, h);
        return e != NULL ? *e : UINT64_MAX;
    }
    size_t r = ark_table_row(c->t, h);
    return r == ARK_NO_ROW ? UINT64_MAX
                           : ((const uint64_t *)ark_table_column(c->t, 0))[r];
}

static ark_status c_claim(cont *c, ark_handle *out, size_t n) {
    return c->k->table ? ark_table_claim(c->t, out, n)
                       : ark_pool_claim(c->p, out, n);
}
static ark_status c_unclaim(cont *c, ark_handle h) {
    return c->k->table ? ark_table_unclaim(c->t, h) : ark_pool_unclaim(c->p, h);
}
static void c_clear(cont *c, bool hook) {
    if (c->k->table) {
        ark_table_clear(c->t, hook);
    } else {
        ark_pool_clear(c->p, hook);
    }
}
static ark_status c_validate(const cont *c) {
    return c->k->table ? ark__table_validate(c->t, false)
                       : ark_pool_validate(c->p);
}
static ark_status c_save(const cont *c, membuf *m) {
    ark_writer w = mem_writer(m);
    return c->k->table ? ark_table_save(c->t, &w) : ark_pool_save(c->p, &w);
}
static ark_status c_load(cont *q, const kind *k, const ccfg *h, membuf *m) {
    c_init(q, k);
    ark_reader r = mem_reader(m);
    if (k->table) {
        ark_table_config cfg = {.column_sizes = table_cols,
                                .ncolumns = 1,
                                .index_bits = h->index_bits,
                                .gen_bits = h->gen_bits,
                                .index_min = h->index_min,
                                .index_max = h->index_max,
                                .allocator = h->allocator};
        return ark_table_load(&q->t, &cfg, &r);
    }
    ark_pool_config cfg = {.elem_size = sizeof(uint64_t),
                           .elem_align = 8,
                           .index_bits = h->index_bits,
                           .gen_bits = h->gen_bits,
                           .index_min = h->index_min,
                           .index_max = h->index_max,
                           .allocator = h->allocator};
    return ark_pool_load(&q->p, &cfg, &r);
}

static uint64_t idx(ark_handle h, unsigned ib) {
    return h & (((uint64_t)1 << ib) - 1);
}
static uint32_t gen_of(ark_handle h, unsigned ib, unsigned gb) {
    return (uint32_t)((h >> ib) & (((uint64_t)1 << gb) - 1));
}
static ark_handle mk(uint64_t i, uint32_t gen, unsigned ib) {
    return i | (uint64_t)gen << ib;
}

/* A set of handles: every handle ever handed out, to catch a second. */
typedef struct hset {
    uint64_t *v;
    size_t n, cap;
} hset;

static bool hset_has(const hset *s, uint64_t h) {
    if (s->cap == 0) {
        return false;
    }
    for (size_t k = (size_t)(h * 0x9e3779b97f4a7c15u) & (s->cap - 1);;
         k = (k + 1) & (s->cap - 1)) {
        if (s->v[k] == 0) {
            return false;
        }
        if (s->v[k] == h) {
            return true;
        }
    }
}

/* Add h (not 0); false when it was there already. */
static bool hset_add(hset *s, uint64_t h) {
    if (hset_has(s, h)) {
        return false;
    }
    if (2 * (s->n + 1) > s->cap) {
        hset old = *s;
        s->cap = s->cap == 0 ? 1024 : 2 * s->cap;
        s->v = calloc(s->cap, sizeof *s->v);
        s->n = 0;
        for (size_t k = 0; k < old.cap; k++) {
            if (old.v[k] != 0) {
                hset_add(s, old.v[k]);
            }
        }
        free(old.v);
    }
    size_t k = (size_t)(h * 0x9e3779b97f4a7c15u) & (s->cap - 1);
    while (s->v[k] != 0) {
        k = (k + 1) & (s->cap - 1);
    }
    s->v[k] = h;
    s->n++;
    return true;
}

static void hset_free(hset *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- what a claimed handle answers ----------------------------------------
 */

static void claimed_handles_name_nothing(const kind *k) {
    ccfg cfg = {.index_bits = 16, .gen_bits = 8};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    /* Claims on an empty container: fresh indices ahead of the owner. */
    ark_handle a[3];
    CHECK_OK(c_claim(&c, a, 3));
    for (int j = 0; j < 3; j++) {
        CHECK_STATUS(c_check(&c, a[j]), ARK_ESTALE);
        CHECK_EQ(c_get(&c, a[j]), UINT64_MAX);
        CHECK_STATUS(c_remove(&c, a[j]), ARK_ESTALE);
        CHECK_STATUS(c_remove_later(&c, a[j]), ARK_ESTALE);
    }
    CHECK_EQ(c_count(&c), 0);
    /* Inserts take other indices; the claims are absorbed below them. */
    ark_handle h[100];
    for (int j = 0; j < 100; j++) {
        CHECK_OK(c_insert(&c, (uint64_t)j, &h[j]));
        for (int q = 0; q < 3; q++) {
            CHECK(h[j] != a[q]);
        }
    }
    CHECK_EQ(c_count(&c), 100);
    for (int j = 0; j < 3; j++) {
        CHECK_STATUS(c_check(&c, a[j]), ARK_ESTALE);
        CHECK_EQ(c_get(&c, a[j]), UINT64_MAX);
    }
    CHECK_OK(c_validate(&c));
    /* Claims of reused slots: removed 100, flushed (set aside), claimed. */
    for (int j = 0; j < 100; j++) {
        CHECK_OK(c_remove(&c, h[j]));
    }
    c_flush(&c);
    ark_handle b[4];
    CHECK_OK(c_claim(&c, b, 4));
    for (int j = 0; j < 4; j++) {
        CHECK(gen_of(b[j], 16, 8) == 1); /* a reused slot */
        CHECK_STATUS(c_check(&c, b[j]), ARK_ESTALE);
        CHECK_EQ(c_get(&c, b[j]), UINT64_MAX);
        CHECK_STATUS(c_remove(&c, b[j]), ARK_ESTALE);
    }
    CHECK_OK(c_validate(&c));
    /* More than is set aside: fresh indices ahead of everything, still
     * stale, not out of range; the one past them is. */
    ark_handle far[100];
    CHECK_OK(c_claim(&c, far, 100));
    CHECK_EQ(gen_of(far[99], 16, 8), 0);
    CHECK_STATUS(c_check(&c, far[99]), ARK_ESTALE);
    CHECK_STATUS(c_check(&c, far[99] + 1), ARK_ERANGE);
    c_destroy(&c);
}

TEST_ON_BOTH(claimed_handles_name_nothing)

/* ---- uniqueness, unclaim ----------------------------------------------------
 */

static void
claims_are_unique_and_unclaim_uses_up_the_generation(const kind *k) {
    ccfg cfg = {.index_bits = 12, .gen_bits = 4};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    hset ever = {0};
    uint64_t rng = harness_seed();
    ark_handle live[600];
    size_t nlive = 0;
    for (int round = 0; round < 300; round++) {
        ark_handle cl[16];
        size_t n = 1 + harness_below(&rng, 16);
        CHECK_OK(c_claim(&c, cl, n));
        for (size_t j = 0; j < n; j++) {
            CHECK(hset_add(&ever, cl[j]));
        }
        /* Half the claims given back, half made elements. */
        for (size_t j = 0; j < n; j++) {
            if (j % 2 == 0 || nlive == 600) {
                CHECK_OK(c_unclaim(&c, cl[j]));
                CHECK_STATUS(c_unclaim(&c, cl[j]), ARK_ESTALE);
                CHECK_STATUS(c_insert_at(&c, cl[j], 1), ARK_ESTALE);
            } else {
                CHECK_OK(c_insert_at(&c, cl[j], cl[j]));
                CHECK_STATUS(c_unclaim(&c, cl[j]), ARK_ESTALE);
                live[nlive++] = cl[j];
            }
        }
        for (int j = 0; j < 4 && nlive < 600; j++) {
            ark_handle h;
            CHECK_OK(c_insert(&c, 7, &h));
            CHECK(hset_add(&ever, h));
            live[nlive++] = h;
        }
        while (nlive > 300) {
            size_t j = (size_t)harness_below(&rng, nlive);
            CHECK_OK(c_remove(&c, live[j]));
            live[j] = live[--nlive];
        }
        if (round % 10 == 0) {
            c_flush(&c); /* sets slots aside for claims */
            CHECK_OK(c_validate(&c));
        }
    }
    CHECK_EQ(c_count(&c), nlive);
    for (size_t j = 0; j < nlive; j++) {
        CHECK(c_get(&c, live[j]) != UINT64_MAX);
    }
    CHECK_OK(c_validate(&c));
    /* Malformed handles. */
    CHECK_STATUS(c_unclaim(&c, ARK_NULL_HANDLE), ARK_ENULL);
    CHECK_STATUS(c_unclaim(&c, (uint64_t)1 << 40), ARK_EFOREIGN);
    CHECK_STATUS(c_unclaim(&c, live[0]), ARK_ESTALE); /* live, not claimed */
    CHECK_OK(c_claim(&c, NULL, 0));
    hset_free(&ever);
    c_destroy(&c);
}

TEST_ON_BOTH(claims_are_unique_and_unclaim_uses_up_the_generation)

/* ---- insert_at on claimed, unclaimed and stale handles --------------------
 */

static void insert_at_on_claimed_handles(const kind *k) {
    const unsigned ib = 16, gb = 8;
    ccfg cfg = {.index_bits = ib, .gen_bits = gb};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle h;
    CHECK_OK(c_insert(&c, 1, &h));
    ark_handle a[2];
    CHECK_OK(c_claim(&c, a, 2)); /* fresh, ahead of the owner's run */
    uint64_t i0 = idx(a[0], ib);
    /* Another generation at a claimed slot: newer is taken, older stale. */
    CHECK_STATUS(c_insert_at(&c, mk(i0, 1, ib), 5), ARK_EEXIST);
    CHECK_OK(c_insert_at(&c, a[0], 10));
    CHECK_EQ(c_get(&c, a[0]), 10);
    CHECK_OK(c_check(&c, a[0]));
    CHECK_STATUS(c_insert_at(&c, a[0], 11), ARK_EEXIST);
    CHECK_STATUS(c_unclaim(&c, a[0]), ARK_ESTALE);
    /* Committed, removed: the handle is stale, its slot reused later. */
    CHECK_OK(c_remove(&c, a[0]));
    CHECK_STATUS(c_insert_at(&c, a[0], 12), ARK_ESTALE);
    /* Given back: stale too. */
    CHECK_OK(c_unclaim(&c, a[1]));
    CHECK_STATUS(c_insert_at(&c, a[1], 13), ARK_ESTALE);
    CHECK_STATUS(c_check(&c, a[1]), ARK_ESTALE);
    /* An index past the claims, never handed out: insert_at takes it. */
    ark_handle beyond = mk(i0 + 100, 3, ib);
    CHECK_STATUS(c_check(&c, beyond), ARK_ERANGE);
    CHECK_OK(c_insert_at(&c, beyond, 14));
    CHECK_EQ(c_get(&c, beyond), 14);
    /* Claims after that come from past it. */
    ark_handle b[1];
    CHECK_OK(c_claim(&c, b, 1));
    CHECK(idx(b[0], ib) > i0 + 100);
    CHECK_OK(c_insert_at(&c, b[0], 15));
    CHECK_EQ(c_count(&c), 3);
    CHECK_OK(c_validate(&c));

    c_destroy(&c);

    /* Claims of reused slots carry the slot's next generation. */
    CHECK_OK(c_create(&c, k, &cfg));
    CHECK_OK(c_claim(&c, a, 1)); /* a claim is seen: flush sets aside */
    ark_handle many[200];
    for (int j = 0; j < 200; j++) {
        CHECK_OK(c_insert(&c, 100 + (uint64_t)j, &many[j]));
    }
    for (int j = 0; j < 200; j++) {
        CHECK_OK(c_remove(&c, many[j]));
    }
    c_flush(&c);
    ark_handle s[3];
    CHECK_OK(c_claim(&c, s, 3));
    CHECK_EQ(idx(s[0], ib), idx(many[0], ib));
    CHECK_EQ(gen_of(s[0], ib, gb), 1);
    CHECK_STATUS(c_insert_at(&c, mk(idx(s[0], ib), 0, ib), 1), ARK_ESTALE);
    CHECK_STATUS(c_insert_at(&c, mk(idx(s[0], ib), 2, ib), 1), ARK_EEXIST);
    CHECK_OK(c_insert_at(&c, s[0], 20));
    CHECK_EQ(c_get(&c, s[0]), 20);
    CHECK_OK(c_unclaim(&c, s[1]));
    CHECK_STATUS(c_insert_at(&c, s[1], 1), ARK_ESTALE);
    CHECK_OK(c_insert_at(&c, s[2], 21));
    CHECK_EQ(c_count(&c), 2);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(insert_at_on_claimed_handles)

/* insert_at on a free slot that flush set aside and nobody claimed: the
 * stock comes back to the ring, and the slot is created. */
static void insert_at_takes_back_the_stock(const kind *k) {
    const unsigned ib = 16, gb = 8;
    ccfg cfg = {.index_bits = ib, .gen_bits = gb};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle one[1];
    CHECK_OK(c_claim(&c, one, 1)); /* a claim is seen: flush sets aside */
    ark_handle h[300];
    for (int j = 0; j < 300; j++) {
        CHECK_OK(c_insert(&c, (uint64_t)j, &h[j]));
    }
    for (int j = 0; j < 300; j++) {
        CHECK_OK(c_remove(&c, h[j]));
    }
    c_flush(&c);
    CHECK_OK(c_validate(&c));
    /* h[0]'s slot is the oldest free one: in the stock now. */
    ark_handle again = mk(idx(h[0], ib), 1, ib);
    CHECK_OK(c_insert_at(&c, again, 42));
    CHECK_EQ(c_get(&c, again), 42);
    CHECK_OK(c_validate(&c));
    /* The rest of the stock went back, in order: claims take fresh
     * indices until the next flush sets h[1], h[2], .. aside again. */
    ark_handle x[3];
    CHECK_OK(c_claim(&c, x, 1));
    CHECK_EQ(gen_of(x[0], ib, gb), 0);
    c_flush(&c);
    CHECK_OK(c_claim(&c, x, 3));
    for (int j = 0; j < 3; j++) {
        CHECK_EQ(idx(x[j], ib), idx(h[j + 1], ib));
        CHECK_EQ(gen_of(x[j], ib, gb), 1);
    }
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(insert_at_takes_back_the_stock)

/* ---- reuse delay and retirement ------------------------------------------ */

static void claims_respect_the_reuse_delay(const kind *k) {
    const unsigned ib = 16;
    ccfg cfg = {.index_bits = ib, .gen_bits = 8};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle one[1];
    CHECK_OK(c_claim(&c, one, 1));
    ark_handle h[100];
    for (int j = 0; j < 100; j++) {
        CHECK_OK(c_insert(&c, (uint64_t)j, &h[j]));
    }
    for (int j = 0; j < 100; j++) {
        CHECK_OK(c_remove(&c, h[j]));
    }
    c_flush(&c);
    /* 100 free: the 36 oldest have waited ARK_REUSE_DELAY frees. */
    ark_handle s[36];
    CHECK_OK(c_claim(&c, s, 36));
    for (int j = 0; j < 36; j++) {
        CHECK_EQ(idx(s[j], ib), idx(h[j], ib)); /* oldest first */
    }
    /* The 64 youngest stay put: the next claim is a fresh index. */
    ark_handle f[1];
    CHECK_OK(c_claim(&c, f, 1));
    CHECK_EQ(gen_of(f[0], ib, 8), 0);
    for (int j = 0; j < 100; j++) {
        CHECK(idx(f[0], ib) != idx(h[j], ib));
    }
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(claims_respect_the_reuse_delay)

static void claims_respect_retirement(const kind *k) {
    const unsigned ib = 10, gb = 1; /* generations 0 and 1 */
    ccfg cfg = {.index_bits = ib, .gen_bits = gb};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle a[100];
    CHECK_OK(c_claim(&c, a, 100)); /* generation 0 */
    for (int j = 0; j < 100; j++) {
        CHECK_OK(c_unclaim(&c, a[j])); /* slot free with generation 1 */
    }
    for (int j = 0; j < 200; j++) {
        ark_handle x;
        CHECK_OK(c_insert(&c, 1, &x));
        CHECK_OK(c_remove(&c, x));
    }
    c_flush(&c);
    /* Claims from the stock: generation 1, the last; given back, retired. */
    hset seen = {0};
    for (int round = 0; round < 20; round++) {
        ark_handle s[8];
        if (c_claim(&c, s, 8) != ARK_OK) {
            break;
        }
        for (int j = 0; j < 8; j++) {
            CHECK(hset_add(&seen, s[j]));
            CHECK_OK(c_unclaim(&c, s[j]));
        }
        c_flush(&c);
    }
    CHECK_OK(c_validate(&c));
    /* Nothing retired is handed out: fill the rest, all distinct. */
    ark_handle x;
    while (c_insert(&c, 1, &x) == ARK_OK) {
        CHECK(hset_add(&seen, x));
    }
    CHECK_OK(c_validate(&c));
    hset_free(&seen);
    c_destroy(&c);
}

TEST_ON_BOTH(claims_respect_retirement)

/* ---- index ranges ---------------------------------------------------------
 */

static void range_config_edges(const kind *k) {
    cont c;
    ccfg cfg = {.index_bits = 8, .gen_bits = 4};
    struct {
        uint32_t lo, hi;
        ark_status want;
    } cases[] = {{0, 0, ARK_OK},       {1, 1, ARK_OK},
                 {0, 5, ARK_OK},       {255, 255, ARK_OK},
                 {1, 255, ARK_OK},     {5, 4, ARK_EINVAL},
                 {0, 256, ARK_EINVAL}, {256, 256, ARK_EINVAL},
                 {1, 0, ARK_EINVAL},   {200, 0, ARK_EINVAL}};
    for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
        cfg.index_min = cases[j].lo;
        cfg.index_max = cases[j].hi;
        CHECK_STATUS(c_create(&c, k, &cfg), cases[j].want);
        if (cases[j].want == ARK_OK) {
            c_destroy(&c);
        }
    }
    /* 32 index bits: the last index is UINT32_MAX. */
    cfg.index_bits = 32;
    cfg.gen_bits = 8;
    cfg.index_min = UINT32_MAX - 2;
    cfg.index_max = UINT32_MAX;
    cfg.max_elements = 1; /* no reservation of every slot below */
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle cl[3];
    CHECK_OK(c_claim(&c, cl, 3));
    CHECK_EQ(idx(cl[0], 32), UINT32_MAX - 2);
    CHECK_EQ(idx(cl[2], 32), UINT32_MAX);
    CHECK_STATUS(c_claim(&c, cl, 1), ARK_EFULL);
    c_destroy(&c);
}

TEST_ON_BOTH(range_config_edges)

/* Inserts and claims stay in [lo, hi]; the range runs out; insert_at
 * takes any index, and a slot outside the range, freed, is reused by
 * insert_at alone. */
static void range_confines_insert_and_claim(const kind *k) {
    const unsigned ib = 8, gb = 4;
    ccfg cfg = {
        .index_bits = ib, .gen_bits = gb, .index_min = 100, .index_max = 139};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle mine[40];
    CHECK_OK(c_claim(&c, mine, 10));
    for (int j = 0; j < 10; j++) {
        CHECK_EQ(idx(mine[j], ib), 100 + (uint64_t)j);
    }
    hset seen = {0};
    for (int j = 10; j < 40; j++) {
        CHECK_OK(c_insert(&c, (uint64_t)j, &mine[j]));
        CHECK(idx(mine[j], ib) >= 110 && idx(mine[j], ib) <= 139);
        CHECK(hset_add(&seen, idx(mine[j], ib)));
    }
    hset_free(&seen);
    ark_handle x;
    CHECK_STATUS(c_insert(&c, 1, &x), ARK_EFULL);
    CHECK_STATUS(c_claim(&c, &x, 1), ARK_EFULL);
    /* A server's handles below and above the range. */
    ark_handle below = mk(5, 2, ib), above = mk(200, 1, ib);
    CHECK_OK(c_insert_at(&c, below, 500));
    CHECK_OK(c_insert_at(&c, above, 501));
    CHECK_OK(c_insert_at(&c, mk(1, 0, ib), 502));
    CHECK_OK(c_insert_at(&c, mk(255, 0, ib), 503)); /* the last index */
    CHECK_EQ(c_get(&c, below), 500);
    CHECK_EQ(c_get(&c, above), 501);
    CHECK_STATUS(c_check(&c, mk(6, 0, ib)), ARK_ESTALE);
    CHECK_OK(c_validate(&c));
    /* Removed: never handed out by insert or claim. */
    CHECK_OK(c_remove(&c, below));
    CHECK_OK(c_remove_later(&c, above));
    CHECK_EQ(c_flush(&c), 1);
    for (int j = 0; j < 10; j++) {
        CHECK_OK(c_unclaim(&c, mine[j]));
    }
    for (int j = 10; j < 40; j++) {
        CHECK_OK(c_remove(&c, mine[j]));
    }
    c_flush(&c);
    for (int round = 0; round < 20; round++) {
        ark_handle got[40];
        size_t n = 0;
        while (n < 30 && c_insert(&c, 1, &got[n]) == ARK_OK) {
            CHECK(idx(got[n], ib) >= 100 && idx(got[n], ib) <= 139);
            n++;
        }
        ark_handle cl[5];
        if (c_claim(&c, cl, 5) == ARK_OK) {
            for (int j = 0; j < 5; j++) {
                CHECK(idx(cl[j], ib) >= 100 && idx(cl[j], ib) <= 139);
                CHECK_OK(c_unclaim(&c, cl[j]));
            }
        }
        for (size_t j = 0; j < n; j++) {
            CHECK_OK(c_remove(&c, got[j]));
        }
        c_flush(&c);
    }
    CHECK_OK(c_validate(&c));
    /* insert_at reuses them: a newer generation, not an older one. */
    CHECK_STATUS(c_insert_at(&c, below, 1), ARK_ESTALE);
    CHECK_OK(c_insert_at(&c, mk(5, 3, ib), 600));
    CHECK_OK(c_insert_at(&c, mk(200, 2, ib), 601));
    CHECK_EQ(c_get(&c, mk(200, 2, ib)), 601);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(range_confines_insert_and_claim)

/* A range of one index at each edge of the layout. */
static void range_edges(const kind *k) {
    const unsigned ib = 8, gb = 2;
    uint32_t at[] = {1, 255};
    for (size_t e = 0; e < 2; e++) {
        ccfg cfg = {.index_bits = ib,
                    .gen_bits = gb,
                    .index_min = at[e],
                    .index_max = at[e]};
        cont c;
        CHECK_OK(c_create(&c, k, &cfg));
        /* Four generations, then the slot retires: EFULL. */
        for (uint32_t g = 0; g < 4; g++) {
            ark_handle h;
            CHECK_OK(c_insert(&c, g, &h));
            CHECK_EQ(idx(h, ib), at[e]);
            CHECK_EQ(gen_of(h, ib, gb), g);
            CHECK_STATUS(c_insert(&c, 1, &h), ARK_EFULL);
            CHECK_OK(c_remove(&c, h));
        }
        ark_handle h;
        CHECK_STATUS(c_insert(&c, 1, &h), ARK_EFULL);
        CHECK_STATUS(c_claim(&c, &h, 1), ARK_EFULL);
        CHECK_OK(c_validate(&c));
        c_destroy(&c);
    }
    /* index_min 0 is index 1. */
    ccfg cfg = {
        .index_bits = ib, .gen_bits = gb, .index_min = 0, .index_max = 2};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle h[2];
    CHECK_OK(c_claim(&c, h, 2));
    CHECK_EQ(idx(h[0], ib), 1);
    CHECK_EQ(idx(h[1], ib), 2);
    CHECK_STATUS(c_claim(&c, h, 1), ARK_EFULL);
    CHECK_STATUS(c_claim(&c, h, 300), ARK_EFULL);
    c_destroy(&c);
}

TEST_ON_BOTH(range_edges)

/* ---- save and load ----------------------------------------------------------
 */

/* The same operations on a and b give the same handles (claims among
 * them if claims). */
static void same_after(cont *a, cont *b, uint64_t rng, bool claims) {
    for (int j = 0; j < 300; j++) {
        ark_handle x, y;
        ark_status sa, sb;
        uint64_t op = harness_below(&rng, 4);
        switch (op == 1 && !claims ? 0 : op) {
        case 0:
            sa = c_insert(a, 1, &x);
            sb = c_insert(b, 1, &y);
            CHECK_EQ(sa, sb);
            CHECK(sa != ARK_OK || x == y);
            break;
        case 1:
            sa = c_claim(a, &x, 1);
            sb = c_claim(b, &y, 1);
            CHECK_EQ(sa, sb);
            CHECK(sa != ARK_OK || x == y);
            if (sa == ARK_OK && j % 2 == 0) {
                CHECK_OK(c_insert_at(a, x, 2));
                CHECK_OK(c_insert_at(b, y, 2));
            }
            break;
        case 2:
            sa = c_insert(a, 1, &x);
            sb = c_insert(b, 1, &y);
            CHECK_EQ(sa, sb);
            if (sa == ARK_OK) {
                CHECK_OK(c_remove(a, x));
                CHECK_OK(c_remove(b, y));
            }
            break;
        default:
            CHECK_EQ(c_flush(a), c_flush(b));
            break;
        }
    }
    CHECK_EQ(c_count(a), c_count(b));
    CHECK_OK(c_validate(a));
    CHECK_OK(c_validate(b));
}

static void save_and_load_keep_claims(const kind *k) {
    const unsigned ib = 12, gb = 4;
    ccfg cfg = {
        .index_bits = ib, .gen_bits = gb, .index_min = 10, .index_max = 3000};
    cont c, q;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle h[400];
    for (int j = 0; j < 400; j++) {
        CHECK_OK(c_insert(&c, (uint64_t)j, &h[j]));
    }
    ark_handle fresh[5];
    CHECK_OK(c_claim(&c, fresh, 5));
    for (int j = 0; j < 300; j++) {
        CHECK_OK(c_remove(&c, h[j]));
    }
    CHECK_OK(c_remove_later(&c, h[300]));
    c_flush(&c);
    CHECK_OK(c_remove_later(&c, h[301]));
    ark_handle stock[10];
    CHECK_OK(c_claim(&c, stock, 10));
    ark_handle absorbed[3];
    CHECK_OK(c_claim(&c, absorbed, 3));
    for (int j = 0; j < 70; j++) { /* absorbs the fresh claims */
        ark_handle x;
        CHECK_OK(c_insert(&c, 1, &x));
    }
    /* Outside the range: live, marked, freed. */
    CHECK_OK(c_insert_at(&c, mk(3, 1, ib), 30));
    CHECK_OK(c_insert_at(&c, mk(4, 0, ib), 31));
    CHECK_OK(c_insert_at(&c, mk(4000, 2, ib), 32));
    CHECK_OK(c_insert_at(&c, mk(4001, 0, ib), 33));
    CHECK_OK(c_remove(&c, mk(4, 0, ib)));
    CHECK_OK(c_remove_later(&c, mk(4001, 0, ib)));
    CHECK_OK(c_validate(&c));

    membuf m = {0};
    CHECK_OK(c_save(&c, &m));
    CHECK_OK(c_load(&q, k, &cfg, &m));
    CHECK_EQ(m.pos, m.len);
    CHECK_OK(c_validate(&q));
    CHECK_EQ(c_count(&q), c_count(&c));
    /* Saved back: the same bytes. */
    membuf back = {0};
    CHECK_OK(c_save(&q, &back));
    CHECK_EQ(back.len, m.len);
    CHECK(memcmp(back.data, m.data, m.len) == 0);
    mem_free(&back);
    /* Every claim is still one, in both. */
    ark_handle all[18];
    memcpy(all, fresh, sizeof fresh);
    memcpy(all + 5, stock, sizeof stock);
    memcpy(all + 15, absorbed, sizeof absorbed);
    for (int j = 0; j < 18; j++) {
        CHECK_STATUS(c_check(&q, all[j]), ARK_ESTALE);
    }
    /* The same operations give the same handles. */
    same_after(&c, &q, harness_seed(), true);
    BAIL();
    for (int j = 0; j < 18; j++) {
        if (j % 2 == 0) {
            CHECK_OK(c_insert_at(&q, all[j], 9));
            CHECK_EQ(c_get(&q, all[j]), 9);
        } else {
            CHECK_OK(c_unclaim(&q, all[j]));
        }
    }
    CHECK_OK(c_validate(&q));
    /* Another range: ARK_EINVAL. */
    ccfg other = cfg;
    other.index_max = 2999;
    cont z;
    CHECK_STATUS(c_load(&z, k, &other, &m), ARK_EINVAL);
    mem_free(&m);
    c_destroy(&q);
    c_destroy(&c);
}

TEST_ON_BOTH(save_and_load_keep_claims)

/* A version 2 snapshot: version 3's bytes of a container without claims
 * or range, less the descriptor's claim fields, version 2. */
static void version_2_snapshots_load(const kind *k) {
    ccfg cfg = {.index_bits = 12, .gen_bits = 4};
    cont c, q;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle h[200];
    for (int j = 0; j < 200; j++) {
        CHECK_OK(c_insert(&c, (uint64_t)j, &h[j]));
    }
    for (int j = 0; j < 150; j += 2) {
        CHECK_OK(c_remove(&c, h[j]));
    }
    CHECK_OK(c_remove_later(&c, h[1]));
    membuf m = {0};
    CHECK_OK(c_save(&c, &m));
    size_t v3 = ARK__SNAP_HEADER_BYTES_V2,
           ext = ARK__SNAP_HEADER_BYTES - ARK__SNAP_HEADER_BYTES_V2;
    membuf o = {0};
    o.cap = o.len = m.len - ext;
    o.data = malloc(o.cap);
    memcpy(o.data, m.data, v3);
    memcpy(o.data + v3, m.data + v3 + ext, m.len - v3 - ext);
    o.data[8] = 2;
    size_t desc = ARK__SNAP_HEADER_BYTES_V2 + (k->table ? 8 : 0);
    ark__snap_sum sum;
    ark__snap_sum_init(&sum);
    ark__snap_sum_update(&sum, o.data, desc);
    uint64_t d = ark__snap_sum_digest(&sum);
    for (int b = 0; b < 8; b++) {
        o.data[desc + (size_t)b] = (unsigned char)(d >> (8 * b));
    }
    ark__snap_sum_init(&sum);
    ark__snap_sum_update(&sum, o.data, o.len - 8);
    d = ark__snap_sum_digest(&sum);
    for (int b = 0; b < 8; b++) {
        o.data[o.len - 8 + (size_t)b] = (unsigned char)(d >> (8 * b));
    }
    CHECK_OK(c_load(&q, k, &cfg, &o));
    CHECK_EQ(o.pos, o.len);
    CHECK_OK(c_validate(&q));
    CHECK_EQ(c_count(&q), c_count(&c));
    for (int j = 0; j < 200; j++) {
        CHECK_EQ(c_get(&q, h[j]), c_get(&c, h[j]));
    }
    /* It saves as version 3, as long as version 3's descriptor. */
    membuf back = {0};
    CHECK_OK(c_save(&q, &back));
    CHECK_EQ(back.len, m.len);
    mem_free(&back);
    /* Without claims (a version 2 snapshot knows nothing of the run the
     * owner holds), the same handles. */
    same_after(&c, &q, harness_seed() + 1, false);
    BAIL();
    c_destroy(&q);
    /* A version 2 snapshot into a config with a range: ARK_EINVAL. */
    ccfg ranged = cfg;
    ranged.index_min = 1;
    ranged.index_max = 100;
    CHECK_STATUS(c_load(&q, k, &ranged, &o), ARK_EINVAL);
    mem_free(&o);
    mem_free(&m);
    c_destroy(&c);
}

TEST_ON_BOTH(version_2_snapshots_load)

/* ---- clear and destroy
 * -------------------------------------------------------- */

static void clear_and_destroy_drop_claims(const kind *k) {
    const unsigned ib = 12, gb = 4;
    test_allocator ta;
    test_allocator_init(&ta);
    ccfg cfg = {.index_bits = ib, .gen_bits = gb, .allocator = &ta.base};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    ark_handle h[200];
    for (int j = 0; j < 200; j++) {
        CHECK_OK(c_insert(&c, (uint64_t)j, &h[j]));
    }
    /* Claims the owner absorbed (insert_at past them), claims ahead of
     * it, claims of slots set aside. */
    ark_handle absorbed[4];
    CHECK_OK(c_claim(&c, absorbed, 4));
    CHECK_OK(c_insert_at(&c, mk(idx(absorbed[3], ib) + 10, 0, ib), 5));
    ark_handle ahead[4];
    CHECK_OK(c_claim(&c, ahead, 4));
    for (int j = 0; j < 200; j++) {
        CHECK_OK(c_remove(&c, h[j]));
    }
    c_flush(&c);
    ark_handle stocked[4];
    CHECK_OK(c_claim(&c, stocked, 4));
    c_clear(&c, true);
    CHECK_OK(c_validate(&c));
    CHECK_EQ(c_count(&c), 0);
    ark_handle all[12];
    memcpy(all, ahead, sizeof ahead);
    memcpy(all + 4, stocked, sizeof stocked);
    memcpy(all + 8, absorbed, sizeof absorbed);
    for (int j = 0; j < 12; j++) {
        CHECK_STATUS(c_check(&c, all[j]), ARK_ESTALE);
        CHECK_STATUS(c_unclaim(&c, all[j]), ARK_ESTALE);
        CHECK_STATUS(c_insert_at(&c, all[j], 1), ARK_ESTALE);
    }
    CHECK_OK(c_validate(&c));
    /* A newer generation of a dropped claim is free for insert_at. */
    CHECK_OK(c_insert_at(&c, mk(idx(ahead[0], ib), 1, ib), 77));
    CHECK_OK(c_insert_at(&c, mk(idx(absorbed[0], ib), 1, ib), 78));
    CHECK_EQ(c_count(&c), 2);
    CHECK_OK(c_validate(&c));
    /* Never handed out again. */
    hset gone = {0};
    for (int j = 0; j < 12; j++) {
        hset_add(&gone, all[j]);
    }
    for (int round = 0; round < 50; round++) {
        ark_handle x[8];
        CHECK_OK(c_claim(&c, x, 8));
        for (int j = 0; j < 8; j++) {
            CHECK(!hset_has(&gone, x[j]));
            CHECK_OK(c_insert_at(&c, x[j], 1));
        }
        ark_handle y;
        CHECK_OK(c_insert(&c, 1, &y));
        CHECK(!hset_has(&gone, y));
        for (int j = 0; j < 8; j++) {
            CHECK_OK(c_remove(&c, x[j]));
        }
        c_flush(&c);
    }
    CHECK_OK(c_validate(&c));
    hset_free(&gone);
    /* Destroy with claims outstanding: nothing leaks. */
    ark_handle left[20];
    CHECK_OK(c_claim(&c, left, 20));
    c_destroy(&c);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

TEST_ON_BOTH(clear_and_destroy_drop_claims)

/* ---- allocation failure ----------------------------------------------------
 */

/* Run op with the allocator failing at its j-th allocation, for j = 1 ..
 * until it succeeds: each ARK_ENOMEM leaves the container as it was. */
#define SWEEP(c, ta, expr)                                                     \
    for (uint64_t j_ = 1;; j_++) {                                             \
        size_t before_ = c_count(c);                                           \
        test_allocator_fail_at(ta, j_);                                        \
        ark_status st_ = (expr);                                               \
        test_allocator_fail_at(ta, 0);                                         \
        if (st_ != ARK_ENOMEM) {                                               \
            CHECK_OK(st_);                                                     \
            break;                                                             \
        }                                                                      \
        CHECK_EQ(c_count(c), before_);                                         \
        CHECK_OK(c_validate(c));                                               \
    }

static void claim_allocation_failures(const kind *k) {
    const unsigned ib = 16, gb = 4;
    test_allocator ta;
    test_allocator_init(&ta);
    ccfg cfg = {.index_bits = ib, .gen_bits = gb, .allocator = &ta.base};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    uint64_t rng = harness_seed();
    ark_handle live[2000];
    size_t nlive = 0;
    for (int round = 0; round < 30; round++) {
        ark_handle cl[64];
        size_t n = 1 + harness_below(&rng, 64);
        /* A claim allocates nothing: it never fails for memory. */
        uint64_t failures = ta.failures;
        test_allocator_fail_at(&ta, 1);
        ark_status st = c_claim(&c, cl, n);
        test_allocator_fail_at(&ta, 0);
        CHECK_OK(st);
        CHECK_EQ(ta.failures, failures);
        /* Commit them from the last (which absorbs the most), give some
         * back, each at every failing allocation. */
        for (size_t j = n; j-- > 0;) {
            if (j % 3 == 1) {
                SWEEP(&c, &ta, c_unclaim(&c, cl[j]));
            } else {
                SWEEP(&c, &ta, c_insert_at(&c, cl[j], cl[j]));
                live[nlive++] = cl[j];
            }
            BAIL();
        }
        for (int j = 0; j < 20; j++) {
            ark_handle x;
            SWEEP(&c, &ta, c_insert(&c, 1, &x));
            BAIL();
            live[nlive++] = x;
        }
        while (nlive > 400) {
            size_t j = (size_t)harness_below(&rng, nlive);
            CHECK_OK(c_remove(&c, live[j]));
            live[j] = live[--nlive];
        }
        /* flush sets slots aside: on failure it just does not. */
        test_allocator_fail_at(&ta, 1);
        c_flush(&c);
        test_allocator_fail_at(&ta, 0);
        CHECK_OK(c_validate(&c));
        c_flush(&c);
        CHECK_OK(c_validate(&c));
    }
    /* A save with claims, and its load, at every failure. */
    membuf m = {0};
    for (uint64_t j = 1;; j++) {
        test_allocator_fail_at(&ta, j);
        m.len = 0;
        ark_status st = c_save(&c, &m);
        test_allocator_fail_at(&ta, 0);
        if (st == ARK_OK) {
            break;
        }
        CHECK_STATUS(st, ARK_ENOMEM);
    }
    cont q;
    for (uint64_t j = 1;; j++) {
        uint64_t blocks = ta.live_blocks;
        test_allocator_fail_at(&ta, j);
        ark_status st = c_load(&q, k, &cfg, &m);
        test_allocator_fail_at(&ta, 0);
        if (st == ARK_OK) {
            break;
        }
        CHECK_STATUS(st, ARK_ENOMEM);
        CHECK_EQ(ta.live_blocks, blocks);
    }
    CHECK_OK(c_validate(&q));
    CHECK_EQ(c_count(&q), c_count(&c));
    c_destroy(&q);
    mem_free(&m);
    c_destroy(&c);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(ta.bad_frees, 0);
}

TEST_ON_BOTH(claim_allocation_failures)

/* ---- without claims: the handles of the rules -----------------------------
 */

/* A model of the handle rules as they were before claims (FIFO reuse
 * after ARK_REUSE_DELAY, retirement, insert_at's gap): with no claim and
 * the whole layout as the range, a container must issue exactly its
 * handles. */
typedef struct rules {
    unsigned ib, gb;
    uint64_t issued, limit, gen_max;
    uint32_t q[1024];
    size_t qlen;
    uint32_t next[1024], stamp[1024];
    bool pending[1024];
} rules;

static ark_status rules_insert(rules *m, ark_handle *out) {
    uint64_t i;
    if (m->qlen >= ARK_REUSE_DELAY || (m->qlen > 0 && m->issued >= m->limit)) {
        i = m->q[0];
        memmove(m->q, m->q + 1, --m->qlen * sizeof *m->q);
    } else if (m->issued < m->limit) {
        i = m->issued++;
        m->next[i] = 0;
    } else {
        return ARK_EFULL;
    }
    m->stamp[i] = m->next[i] + 1;
    *out = mk(i, m->next[i], m->ib);
    return ARK_OK;
}

static void rules_free(rules *m, uint64_t i) {
    uint32_t gen = m->stamp[i] - 1;
    m->stamp[i] = 0;
    if (gen >= m->gen_max) {
        m->next[i] = UINT32_MAX;
        return;
    }
    m->next[i] = gen + 1;
    m->q[m->qlen++] = (uint32_t)i;
}

static ark_status rules_insert_at(rules *m, ark_handle h) {
    uint64_t i = idx(h, m->ib);
    uint32_t gen = gen_of(h, m->ib, m->gb);
    if (i == 0) {
        return ARK_ERANGE;
    }
    if (i >= m->issued) {
        for (uint64_t j = m->issued; j < i; j++) {
            m->next[j] = 0;
            m->q[m->qlen++] = (uint32_t)j;
        }
        m->issued = i + 1;
    } else {
        if (m->stamp[i] != 0 || m->pending[i]) {
            return ARK_EEXIST; /* (the marked case is simplified) */
        }
        if (m->next[i] == UINT32_MAX || gen < m->next[i]) {
            return ARK_ESTALE;
        }
        size_t k = 0;
        while (m->q[k] != i) {
            k++;
        }
        memmove(m->q + k, m->q + k + 1, (m->qlen - k - 1) * sizeof *m->q);
        m->qlen--;
    }
    m->stamp[i] = gen + 1;
    return ARK_OK;
}

static void handles_without_claims_follow_the_rules(const kind *k) {
    const unsigned ib = 10, gb = 2;
    ccfg cfg = {.index_bits = ib, .gen_bits = gb};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    rules *m = calloc(1, sizeof *m);
    m->ib = ib;
    m->gb = gb;
    m->issued = 1;
    m->limit = 1024;
    m->gen_max = 3;
    uint64_t rng = harness_seed();
    ark_handle live[1024];
    size_t nlive = 0;
    uint64_t pend[1024];
    size_t npend = 0;
    uint64_t steps = harness_scaled(40000);
    for (uint64_t s = 0; s < steps; s++) {
        uint64_t op = harness_below(&rng, 100);
        if (op < 45) {
            ark_handle a = 0, b = 0;
            ark_status sa = c_insert(&c, s, &a), sb = rules_insert(m, &b);
            CHECK_EQ(sa, sb);
            if (sa == ARK_OK) {
                CHECK_EQ(a, b);
                live[nlive++] = a;
            }
        } else if (op < 85 && nlive > 0) {
            size_t j = (size_t)harness_below(&rng, nlive);
            CHECK_OK(c_remove(&c, live[j]));
            rules_free(m, idx(live[j], ib));
            live[j] = live[--nlive];
        } else if (op < 90 && nlive > 0) {
            size_t j = (size_t)harness_below(&rng, nlive);
            CHECK_OK(c_remove_later(&c, live[j]));
            pend[npend++] = live[j];
            m->pending[idx(live[j], ib)] = true;
            live[j] = live[--nlive];
        } else if (op < 93) {
            CHECK_EQ(c_flush(&c), npend);
            for (size_t j = 0; j < npend; j++) {
                m->pending[idx(pend[j], ib)] = false;
                rules_free(m, idx(pend[j], ib));
            }
            npend = 0;
        } else {
            /* insert_at somewhere: free slots, live ones, past issued. */
            uint64_t i =
                1 + harness_below(&rng, m->issued + 20 < 1024 ? m->issued + 20
                                                              : 1023);
            ark_handle h = mk(i, (uint32_t)harness_below(&rng, 4), ib);
            ark_status sa = c_insert_at(&c, h, s);
            ark_status sb = rules_insert_at(m, h);
            if (sb == ARK_EEXIST && sa == ARK_ESTALE) {
                sb = sa; /* a marked slot's rule, simplified above */
            }
            CHECK_EQ(sa, sb);
            if (sa == ARK_OK) {
                live[nlive++] = h;
            }
        }
        if (s % 1000 == 0) {
            CHECK_OK(c_validate(&c));
        }
    }
    CHECK_OK(c_validate(&c));
    free(m);
    c_destroy(&c);
}

TEST_ON_BOTH(handles_without_claims_follow_the_rules)

/* ---- a randomized model with claims ----------------------------------------
 */

/* Random inserts, removals, claims, commits, unclaims, insert_at of any
 * handle, flushes, save-and-load round trips and clears. Checked: no
 * handle is ever handed out twice (insert, claim, or a new handle made
 * by insert_at), inserts and claims stay in the range, claimed handles
 * answer ESTALE and NULL, live ones their ids, the count, validation. */
static void claims_model(const kind *k, const ccfg *cfg) {
    const unsigned ib = cfg->index_bits;
    uint64_t lo = cfg->index_min == 0 ? 1 : cfg->index_min;
    uint64_t hi =
        cfg->index_max == 0 ? ((uint64_t)1 << ib) - 1 : cfg->index_max;
    cont c;
    CHECK_OK(c_create(&c, k, cfg));
    uint64_t rng = harness_seed() ^ (uint64_t)lo;
    hset ever = {0};
    enum { MAXH = 4096 };
    ark_handle *live = malloc(MAXH * sizeof *live);
    uint64_t *ids = malloc(MAXH * sizeof *ids);
    ark_handle *claimed = malloc(MAXH * sizeof *claimed);
    size_t nlive = 0, nclaimed = 0;
    uint64_t steps = harness_scaled(20000);
    for (uint64_t s = 0; s < steps; s++) {
        uint64_t op = harness_below(&rng, 100);
        if (op < 25 && nlive < MAXH) {
            ark_handle h;
            if (c_insert(&c, s, &h) == ARK_OK) {
                CHECK(idx(h, ib) >= lo && idx(h, ib) <= hi);
                CHECK(hset_add(&ever, h));
                live[nlive] = h;
                ids[nlive++] = s;
            }
        } else if (op < 45 && nlive > 0) {
            size_t j = (size_t)harness_below(&rng, nlive);
            if (op < 42) {
                CHECK_OK(c_remove(&c, live[j]));
            } else {
                CHECK_OK(c_remove_later(&c, live[j]));
            }
            live[j] = live[nlive - 1];
            ids[j] = ids[--nlive];
        } else if (op < 60 && nclaimed + 32 < MAXH) {
            ark_handle cl[32];
            size_t n = 1 + harness_below(&rng, 32);
            if (c_claim(&c, cl, n) == ARK_OK) {
                for (size_t j = 0; j < n; j++) {
                    CHECK(idx(cl[j], ib) >= lo && idx(cl[j], ib) <= hi);
                    CHECK(hset_add(&ever, cl[j]));
                    claimed[nclaimed++] = cl[j];
                }
            }
        } else if (op < 72 && nclaimed > 0 && nlive < MAXH) {
            size_t j = (size_t)harness_below(&rng, nclaimed);
            CHECK_OK(c_insert_at(&c, claimed[j], s));
            live[nlive] = claimed[j];
            ids[nlive++] = s;
            claimed[j] = claimed[--nclaimed];
        } else if (op < 80 && nclaimed > 0) {
            size_t j = (size_t)harness_below(&rng, nclaimed);
            CHECK_OK(c_unclaim(&c, claimed[j]));
            claimed[j] = claimed[--nclaimed];
        } else if (op < 90 && nlive < MAXH) {
            /* insert_at of any handle: a new one must be new. */
            uint64_t i = 1 + harness_below(&rng, ((uint64_t)1 << ib) - 1);
            ark_handle h = mk(i, (uint32_t)harness_below(&rng, 3), ib);
            bool was_claimed = false;
            size_t at = 0;
            for (size_t j = 0; j < nclaimed; j++) {
                if (claimed[j] == h) {
                    was_claimed = true;
                    at = j;
                }
            }
            ark_status st = c_insert_at(&c, h, s);
            if (st == ARK_OK) {
                if (was_claimed) {
                    claimed[at] = claimed[--nclaimed];
                } else {
                    CHECK(hset_add(&ever, h));
                }
                live[nlive] = h;
                ids[nlive++] = s;
            }
        } else if (op < 96) {
            c_flush(&c);
        } else if (op < 99) {
            membuf m = {0};
            cont q;
            CHECK_OK(c_save(&c, &m));
            CHECK_OK(c_load(&q, k, cfg, &m));
            mem_free(&m);
            c_destroy(&c);
            c = q;
        } else {
            c_clear(&c, false);
            nlive = 0;
            nclaimed = 0; /* dropped: never handed out again */
        }
        if (s % 200 == 0 || s + 1 == steps) {
            CHECK_OK(c_validate(&c));
            CHECK_EQ(c_count(&c), nlive);
            for (size_t j = 0; j < nlive; j++) {
                CHECK_EQ(c_get(&c, live[j]), ids[j]);
            }
            for (size_t j = 0; j < nclaimed; j++) {
                CHECK_STATUS(c_check(&c, claimed[j]), ARK_ESTALE);
                CHECK_EQ(c_get(&c, claimed[j]), UINT64_MAX);
            }
        }
    }
    free(live);
    free(ids);
    free(claimed);
    hset_free(&ever);
    c_destroy(&c);
}

static void claims_model_whole_layout(const kind *k) {
    ccfg cfg = {.index_bits = 11, .gen_bits = 2};
    claims_model(k, &cfg);
}

static void claims_model_with_range(const kind *k) {
    ccfg cfg = {
        .index_bits = 11, .gen_bits = 3, .index_min = 700, .index_max = 1500};
    claims_model(k, &cfg);
}

TEST_ON_BOTH(claims_model_whole_layout)
TEST_ON_BOTH(claims_model_with_range)

/* ---- threads --------------------------------------------------------------
 */

/* Four claimer threads claim batches and post each handle to the owning
 * thread through an ark_mainq; the owning thread meanwhile inserts,
 * removes, iterates, flushes and saves (a snapshot it loads and checks),
 * and commits (insert_at) or gives back (unclaim) each posted handle. At the
 * end: no handle was handed out twice, every claim was committed or given back,
 * the container is valid. */
enum { CLAIMERS = 4 };

typedef struct claim_run {
    cont *c;
    ark_mainq *q;
    uint64_t rounds;
    /* per claimer: the handles it claimed */
    ark_handle *got[CLAIMERS];
    size_t ngot[CLAIMERS];
    _Atomic int failed;
    _Atomic size_t done;
    /* the owning thread's */
    size_t committed, returned, posted_seen;
    ark_handle *live;
    size_t nlive, live_cap;
} claim_run;

typedef struct claim_task {
    claim_run *run;
    ark_handle h;
} claim_task;

typedef struct claimer_arg {
    claim_run *run;
    int who;
} claimer_arg;

static void commit_task(void *arg) {
    claim_task *t = arg;
    claim_run *r = t->run;
    r->posted_seen++;
    if ((t->h >> 3) % 3 == 0) {
        if (c_unclaim(r->c, t->h) != ARK_OK) {
            atomic_store(&r->failed, 1);
        }
        r->returned++;
    } else {
        if (c_insert_at(r->c, t->h, t->h) != ARK_OK ||
            c_get(r->c, t->h) != t->h) {
            atomic_store(&r->failed, 1);
        }
        r->committed++;
        if (r->nlive < r->live_cap) {
            r->live[r->nlive++] = t->h;
        }
    }
    free(t);
}

static void *claimer(void *p) {
    claimer_arg *a = p;
    claim_run *r = a->run;
    uint64_t rng = harness_seed() + (uint64_t)a->who;
    for (uint64_t k = 0; k < r->rounds; k++) {
        ark_handle b[24];
        size_t n = 1 + harness_below(&rng, 24);
        if (c_claim(r->c, b, n) != ARK_OK) {
            atomic_store(&r->failed, 1);
            break;
        }
        for (size_t j = 0; j < n; j++) {
            r->got[a->who][r->ngot[a->who]++] = b[j];
            claim_task *t = malloc(sizeof *t);
            t->run = r;
            t->h = b[j];
            while (ark_mainq_post(r->q, commit_task, t) != ARK_OK) {
                harness_yield();
            }
        }
        /* Keep pace with the owning thread, so that claims and its
         * frames overlap for the whole run. */
        while (ark_mainq_pending(r->q) > 256) {
            harness_yield();
        }
    }
    atomic_fetch_add(&r->done, 1);
    return NULL;
}

static void thread_claims_race_the_owner(const kind *k) {
    ccfg cfg = {.index_bits = 22, .gen_bits = 10};
    cont c;
    CHECK_OK(c_create(&c, k, &cfg));
    claim_run r;
    memset(&r, 0, sizeof r);
    r.c = &c;
    r.rounds = harness_scaled(2000);
    CHECK_OK(ark_mainq_create(&r.q, NULL));
    for (int w = 0; w < CLAIMERS; w++) {
        r.got[w] = malloc(r.rounds * 24 * sizeof *r.got[w]);
    }
    r.live_cap = 1 << 16;
    r.live = malloc(r.live_cap * sizeof *r.live);
    size_t ins_cap = 1 << 18, nins = 0;
    ark_handle *ins = malloc(ins_cap * sizeof *ins);
    harness_thread th[CLAIMERS];
    claimer_arg args[CLAIMERS];
    for (int w = 0; w < CLAIMERS; w++) {
        args[w].run = &r;
        args[w].who = w;
        CHECK(harness_thread_start(&th[w], claimer, &args[w]) == 0);
    }
    uint64_t rng = harness_seed();
    int frame = 0;
    while (atomic_load(&r.done) < CLAIMERS || ark_mainq_pending(r.q) > 0) {
        frame++;
        /* Owner's frame: inserts, removals (now and later), iteration. */
        for (int j = 0; j < 40 && nins < ins_cap && r.nlive < r.live_cap; j++) {
            ark_handle h;
            if (c_insert(&c, 1, &h) != ARK_OK) {
                atomic_store(&r.failed, 1);
                break;
            }
            ins[nins++] = h;
            r.live[r.nlive++] = h;
        }
        while (r.nlive > 2000) {
            size_t j = (size_t)harness_below(&rng, r.nlive);
            ark_status st =
                j % 2 ? c_remove(&c, r.live[j]) : c_remove_later(&c, r.live[j]);
            if (st != ARK_OK) {
                atomic_store(&r.failed, 1);
            }
            r.live[j] = r.live[--r.nlive];
        }
        if (!k->table) {
            size_t seen = 0;
            for (ark_pool_iter it = ark_pool_iter_begin(c.p);
                 ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
                seen++;
            }
            if (seen != ark_pool_count(c.p)) {
                atomic_store(&r.failed, 1);
            }
        }
        ark_mainq_run(r.q, 0); /* commits and gives back */
        c_flush(&c);
        if (frame % 64 == 0 && c_validate(&c) != ARK_OK) {
            atomic_store(&r.failed, 1);
        }
        if (frame % 16 == 0) { /* a save while others claim: it loads */
            membuf m = {0};
            cont q;
            if (c_save(&c, &m) != ARK_OK || c_load(&q, k, &cfg, &m) != ARK_OK ||
                c_validate(&q) != ARK_OK) {
                atomic_store(&r.failed, 1);
            } else {
                c_destroy(&q);
            }
            mem_free(&m);
        }
        harness_yield();
    }
    for (int w = 0; w < CLAIMERS; w++) {
        CHECK(harness_thread_join(th[w]) == 0);
    }
    ark_mainq_drain(r.q);
    CHECK_EQ(atomic_load(&r.failed), 0);
    CHECK_OK(c_validate(&c));
    /* Every claim came back, once. */
    size_t total = nins;
    for (int w = 0; w < CLAIMERS; w++) {
        total += r.ngot[w];
    }
    CHECK_EQ(r.committed + r.returned, total - nins);
    CHECK_EQ(r.posted_seen, total - nins);
    /* No handle handed out twice: inserts and claims, sorted. */
    ark_handle *all = malloc(total * sizeof *all);
    size_t n = 0;
    for (size_t j = 0; j < nins; j++) {
        all[n++] = ins[j];
    }
    for (int w = 0; w < CLAIMERS; w++) {
        for (size_t j = 0; j < r.ngot[w]; j++) {
            all[n++] = r.got[w][j];
        }
    }
    qsort(all, n, sizeof *all, harness_cmp_u64);
    for (size_t j = 1; j < n; j++) {
        CHECK(all[j] != all[j - 1]);
    }
    /* Claims of reused slots (generation > 0) and of fresh ones. */
    size_t reused = 0;
    for (int w = 0; w < CLAIMERS; w++) {
        for (size_t j = 0; j < r.ngot[w]; j++) {
            reused += (r.got[w][j] >> cfg.index_bits) != 0;
        }
    }
    printf("%zu inserted, %zu claimed (%zu of reused slots; %zu committed, "
           "%zu given back), %d frames\n",
           nins, total - nins, reused, r.committed, r.returned, frame);
    free(all);
    free(ins);
    free(r.live);
    for (int w = 0; w < CLAIMERS; w++) {
        free(r.got[w]);
    }
    ark_mainq_destroy(r.q);
    c_destroy(&c);
}

TEST_ON_BOTH(thread_claims_race_the_owner)
