/* SPDX-License-Identifier: MIT */
/*
 * test_handles.c - the handle rules both containers share (one engine,
 * src/slots.c), run on ark_pool and on ark_table through one adapter:
 * check statuses, layouts and config edges, FIFO reuse with its delay,
 * retirement, EFULL, forged handles, removal hooks that call back into
 * the container (scripted cases and a model), and sealing.
 *
 * Every case is registered once per container (name_pool, name_table);
 * the body is shared.
 */
#include "cont_adapter.h"
#include "pool_internal.h"
#include "table_internal.h"

#include <limits.h>
#include <stdlib.h>

/* ---- the adapter ------------------------------------------------------ */

/* The handle fields of a config, and the hook. */
typedef struct hcfg {
    unsigned index_bits, gen_bits, tag_bits;
    uint64_t tag;
    uint64_t seal_key;
    void (*on_remove)(void *elem, ark_handle h, void *user);
    void *user;
    const ark_allocator *allocator;
} hcfg;

/* Every element carries a uint64 id: a pool's element is the id; a
 * table's column 0 holds it and column 1 its complement (a row moved
 * wrongly shows). */
static const size_t table_cols[2] = {sizeof(uint64_t), 4};

static ark_status c_create(cont *c, const hcfg *h) {
    if (c->k->table) {
        ark_table_config cfg = {.column_sizes = table_cols,
                                .ncolumns = 2,
                                .index_bits = h->index_bits,
                                .gen_bits = h->gen_bits,
                                .tag_bits = h->tag_bits,
                                .tag = h->tag,
                                .seal_key = h->seal_key,
                                .on_remove = h->on_remove,
                                .user = h->user,
                                .allocator = h->allocator};
        return ark_table_create(&c->t, &cfg);
    }
    ark_pool_config cfg = {.elem_size = sizeof(uint64_t),
                           .elem_align = 8,
                           .index_bits = h->index_bits,
                           .gen_bits = h->gen_bits,
                           .tag_bits = h->tag_bits,
                           .tag = h->tag,
                           .seal_key = h->seal_key,
                           .on_remove = h->on_remove,
                           .user = h->user,
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
        ((uint32_t *)ark_table_column(c->t, 1))[r] = (uint32_t)~id;
    }
    return s;
}

/* True when h resolves (get / row); stores the element's id (UINT64_MAX,
 * never a test id, when a table's row does not hold what was written). */
static bool c_get(const cont *c, ark_handle h, uint64_t *id) {
    if (!c->k->table) {
        const uint64_t *e = ark_pool_get(c->p, h);
        if (e != NULL) {
            *id = *e;
        }
        return e != NULL;
    }
    size_t r = ark_table_row(c->t, h);
    if (r == ARK_NO_ROW) {
        return false;
    }
    *id = UINT64_MAX;
    if (r < ark_table_rows(c->t) && ark_table_handle_at(c->t, r) == h) {
        uint64_t v = ((const uint64_t *)ark_table_column(c->t, 0))[r];
        if (((const uint32_t *)ark_table_column(c->t, 1))[r] == (uint32_t)~v) {
            *id = v;
        }
    }
    return true;
}

/* What on_remove's elem argument must be for h: a pool's element (whose
 * handle_of is h), NULL for a table (whose row still resolves). */
static bool c_elem_ok(const cont *c, void *elem, ark_handle h) {
    if (c->k->table) {
        return elem == NULL && ark_table_row(c->t, h) != ARK_NO_ROW;
    }
    return elem != NULL && elem == ark_pool_get(c->p, h) &&
           ark_pool_handle_of(c->p, elem) == h;
}

static void c_clear(cont *c, bool run_hook) {
    if (c->k->table) {
        ark_table_clear(c->t, run_hook);
    } else {
        ark_pool_clear(c->p, run_hook);
    }
}
static ark_handle c_unseal(const cont *c, ark_handle w) {
    return c->k->table ? ark_table_unseal(c->t, w) : ark_pool_unseal(c->p, w);
}
static ark_status c_validate(const cont *c) {
    return c->k->table ? ark__table_validate(c->t, true)
                       : ark_pool_validate(c->p);
}

static ark_status make(const kind *k, cont *c, const hcfg *cfg) {
    c_init(c, k);
    return c_create(c, cfg);
}

/* ---- statuses, layouts, reuse (one copy for both containers) --------- */

static void check_reports_every_status(const kind *k) {
    cont c;
    hcfg cfg = {.index_bits = 16, .gen_bits = 8, .tag_bits = 8, .tag = 0x5a};
    CHECK_OK(make(k, &c, &cfg));
    uint64_t id;
    CHECK_STATUS(c_check(&c, ARK_NULL_HANDLE), ARK_ENULL);
    CHECK_STATUS(c_check(&c, 1), ARK_EFOREIGN); /* tag 0 */
    /* Nothing issued yet: index 1 with the right tag is out of range. */
    CHECK_STATUS(c_check(&c, 1 | (uint64_t)0x5a << 24), ARK_ERANGE);
    CHECK(!c_get(&c, 1 | (uint64_t)0x5a << 24, &id));
    ark_handle h;
    CHECK_OK(c_insert(&c, 7, &h));
    CHECK_EQ(h >> 24, 0x5a); /* tag sits above index and generation */
    CHECK_OK(c_check(&c, h));
    CHECK(c_get(&c, h, &id));
    CHECK_EQ(id, 7);
    /* Another container's tag, and stray bits above the tag. */
    CHECK_STATUS(c_check(&c, h ^ ((uint64_t)1 << 24)), ARK_EFOREIGN);
    CHECK_STATUS(c_check(&c, h | ((uint64_t)1 << 40)), ARK_EFOREIGN);
    CHECK_STATUS(c_check(&c, h | ((uint64_t)1 << 63)), ARK_EFOREIGN);
    CHECK(!c_get(&c, h | ((uint64_t)1 << 40), &id));
    CHECK(!c_get(&c, h | ((uint64_t)1 << 63), &id));
    /* Index 0 and indices never issued. */
    CHECK_STATUS(c_check(&c, h & ~(uint64_t)0xffff), ARK_ERANGE);
    CHECK_STATUS(c_check(&c, (h & ~(uint64_t)0xffff) | 0xfff), ARK_ERANGE);
    CHECK(!c_get(&c, (h & ~(uint64_t)0xffff) | 0xfff, &id));
    CHECK(!c_get(&c, h & ~(uint64_t)0xffff, &id));
    /* Wrong generation of a live slot. */
    ark_handle other_gen = h ^ ((uint64_t)1 << 16);
    CHECK_STATUS(c_check(&c, other_gen), ARK_ESTALE);
    CHECK(!c_get(&c, other_gen, &id));
    /* Every mutator reports the same reasons and changes nothing. */
    CHECK_STATUS(c_remove(&c, ARK_NULL_HANDLE), ARK_ENULL);
    CHECK_STATUS(c_remove(&c, other_gen), ARK_ESTALE);
    CHECK_STATUS(c_remove(&c, 1), ARK_EFOREIGN);
    CHECK_STATUS(c_remove_later(&c, ARK_NULL_HANDLE), ARK_ENULL);
    CHECK_STATUS(c_remove_later(&c, 1), ARK_EFOREIGN);
    CHECK_STATUS(c_remove_later(&c, h & ~(uint64_t)0xffff), ARK_ERANGE);
    CHECK_STATUS(c_remove_later(&c, other_gen), ARK_ESTALE);
    CHECK_EQ(c_count(&c), 1);
    CHECK_OK(c_validate(&c));
    /* Pending: stale at once, and only once. */
    CHECK_OK(c_remove_later(&c, h));
    CHECK_STATUS(c_check(&c, h), ARK_ESTALE);
    CHECK(!c_get(&c, h, &id));
    CHECK_STATUS(c_remove_later(&c, h), ARK_ESTALE);
    CHECK_STATUS(c_remove(&c, h), ARK_ESTALE);
    CHECK_EQ(c_count(&c), 0);
    CHECK_OK(c_validate(&c));
    CHECK_EQ(c_flush(&c), 1);
    CHECK_EQ(c_flush(&c), 0);
    CHECK_STATUS(c_check(&c, h), ARK_ESTALE);
    /* Removed at once. */
    ark_handle h2;
    CHECK_OK(c_insert(&c, 8, &h2));
    CHECK(h2 != h);
    CHECK_OK(c_remove(&c, h2));
    CHECK_STATUS(c_check(&c, h2), ARK_ESTALE);
    CHECK_STATUS(c_remove(&c, h2), ARK_ESTALE);
    CHECK_EQ(c_count(&c), 0);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(check_reports_every_status)

static void handles_fit_32_bits_with_20_12_layout(const kind *k) {
    cont c;
    hcfg cfg = {.index_bits = 20, .gen_bits = 12};
    CHECK_OK(make(k, &c, &cfg));
    uint64_t state = harness_seed();
    ark_handle live[512];
    uint64_t ids[512];
    size_t nlive = 0;
    const uint64_t ops = harness_scaled(200000);
    for (uint64_t i = 0; i < ops; i++) {
        if (nlive < 512 && (nlive == 0 || harness_below(&state, 2) == 0)) {
            CHECK_OK(c_insert(&c, i, &live[nlive]));
            CHECK(live[nlive] <= UINT32_MAX);
            CHECK(live[nlive] != 0);
            ids[nlive++] = i;
        } else {
            size_t j = harness_below(&state, nlive);
            uint64_t id;
            /* a handle cut to 32 bits still names its element */
            CHECK(c_get(&c, (uint32_t)live[j], &id));
            CHECK_EQ(id, ids[j]);
            CHECK_OK(c_remove(&c, live[j]));
            live[j] = live[--nlive];
            ids[j] = ids[nlive];
        }
    }
    CHECK_EQ(c_count(&c), nlive);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(handles_fit_32_bits_with_20_12_layout)

static void efull_when_every_index_is_live(const kind *k) {
    /* 4 index bits: slots 1..15. */
    cont c;
    hcfg cfg = {.index_bits = 4};
    CHECK_OK(make(k, &c, &cfg));
    ark_handle h[15];
    for (int i = 0; i < 15; i++) {
        CHECK_OK(c_insert(&c, (uint64_t)i, &h[i]));
    }
    ark_handle extra = 42;
    CHECK_STATUS(c_insert(&c, 99, &extra), ARK_EFULL);
    CHECK_EQ(extra, 42); /* untouched on failure */
    CHECK_EQ(c_count(&c), 15);
    CHECK_STATUS(c_reserve(&c, 16), ARK_EFULL);
    CHECK_OK(c_reserve(&c, 15));
    /* A pending element still holds its index. */
    CHECK_OK(c_remove_later(&c, h[5]));
    CHECK_EQ(c_count(&c), 14);
    CHECK_STATUS(c_insert(&c, 99, &extra), ARK_EFULL);
    CHECK_EQ(c_flush(&c), 1);
    /* A freed index is reused at once when no fresh one is left. */
    ark_handle again;
    CHECK_OK(c_insert(&c, 100, &again));
    CHECK_EQ(again & 15, h[5] & 15);
    CHECK(again != h[5]);
    CHECK_OK(c_remove(&c, h[3]));
    CHECK_OK(c_insert(&c, 101, &again));
    CHECK_EQ(again & 15, h[3] & 15);
    CHECK(again != h[3]);
    for (int i = 0; i < 15; i++) {
        uint64_t id;
        if (i != 3 && i != 5) {
            CHECK(c_get(&c, h[i], &id));
            CHECK_EQ(id, (uint64_t)i);
        }
    }
    CHECK_STATUS(c_insert(&c, 99, &extra), ARK_EFULL);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(efull_when_every_index_is_live)

static void generations_retire_and_container_fills(const kind *k) {
    /* {index bits, gen bits}: slots 1..2^i-1 each used for 2^g
     * generations, then retired. */
    static const unsigned shapes[][2] = {{3, 2}, {2, 1}, {1, 1}, {4, 3}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        unsigned ib = shapes[sh][0], gb = shapes[sh][1];
        cont c;
        hcfg cfg = {.index_bits = ib, .gen_bits = gb};
        CHECK_OK(make(k, &c, &cfg));
        uint64_t issued[256];
        size_t n = 0;
        ark_status s;
        ark_handle h;
        while ((s = c_insert(&c, n, &h)) == ARK_OK) {
            CHECK(n < 256);
            issued[n++] = h;
            /* every other element goes through remove_later */
            if (n % 2) {
                CHECK_OK(c_remove(&c, h));
            } else {
                CHECK_OK(c_remove_later(&c, h));
                CHECK_EQ(c_flush(&c), 1);
            }
            CHECK_OK(c_validate(&c));
        }
        CHECK_STATUS(s, ARK_EFULL);
        uint64_t slots = ((uint64_t)1 << ib) - 1;
        CHECK_EQ(n, slots << gb); /* every slot, every generation */
        if (!k->table) {
            CHECK_EQ(ark__pool_retired(c.p), slots);
        }
        qsort(issued, n, sizeof issued[0], harness_cmp_u64);
        for (size_t i = 1; i < n; i++) {
            CHECK(issued[i] != issued[i - 1]);
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t id;
            CHECK(!c_get(&c, issued[i], &id));
            CHECK_STATUS(c_check(&c, issued[i]), ARK_ESTALE);
            CHECK(issued[i] >> (ib + gb) == 0);
        }
        CHECK_STATUS(c_reserve(&c, 1), ARK_EFULL);
        CHECK_OK(c_reserve(&c, 0));
        CHECK_EQ(c_count(&c), 0);
        c_clear(&c, true);
        CHECK_STATUS(c_insert(&c, 0, &h), ARK_EFULL); /* retired for good */
        CHECK_OK(c_validate(&c));
        c_destroy(&c);
    }
}

TEST_ON_BOTH(generations_retire_and_container_fills)

/* reserve(n) covers any mix of removals and inserts that keeps the count
 * at most n: a freed slot waits in the queue, so up to ARK_REUSE_DELAY - 1
 * fresh slots more than n may be taken (reserve used to size for n fresh
 * slots only, and the 28th insert after one removal each failed). Every
 * allocation after the reserve is made to fail. */
static void reserve_covers_removals_between_inserts(const kind *k) {
    static const size_t sizes[] = {1, 100, 1000};
    uint64_t rng = harness_seed();
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z];
        test_allocator ta;
        test_allocator_init(&ta);
        cont c;
        hcfg cfg = {.allocator = &ta.base};
        CHECK_OK(make(k, &c, &cfg));
        CHECK_OK(c_reserve(&c, n));
        test_allocator_fail_at(&ta, 1);
        ark_handle *hs = malloc(n * sizeof *hs);
        CHECK(hs != NULL);
        for (size_t i = 0; i < n; i++) {
            CHECK_OK(c_insert(&c, i, &hs[i]));
        }
        for (int round = 0; round < 300; round++) {
            /* remove 1 to 64 at random, insert as many */
            size_t m = 1 + (size_t)harness_below(&rng, n < 64 ? n : 64);
            for (size_t j = 0; j < m; j++) {
                size_t i = (size_t)harness_below(&rng, n - j);
                CHECK_OK(c_remove(&c, hs[i]));
                hs[i] = hs[n - j - 1];
            }
            for (size_t j = 0; j < m; j++) {
                CHECK_OK(c_insert(&c, j, &hs[n - m + j]));
            }
        }
        CHECK_EQ(ta.failures, 0);
        CHECK_EQ(c_count(&c), n);
        CHECK_OK(c_validate(&c));
        test_allocator_fail_at(&ta, 0);
        free(hs);
        c_destroy(&c);
        CHECK_EQ(ta.live_blocks, 0);
    }
}

TEST_ON_BOTH(reserve_covers_removals_between_inserts)

static void full_32_bit_generations_never_wrap_to_free(const kind *k) {
    /* With 32 generation bits, generation 2^32 - 1 is never issued: its
     * stamp would be 0, a free slot's. A forged handle carrying it must be
     * rejected. */
    cont c;
    hcfg cfg = {0};
    CHECK_OK(make(k, &c, &cfg));
    ark_handle h;
    CHECK_OK(c_insert(&c, 1, &h));
    CHECK_EQ(h, 1);
    CHECK_OK(c_remove(&c, h));
    uint64_t id;
    ark_handle forged = 1 | ((uint64_t)UINT32_MAX << 32);
    CHECK(!c_get(&c, forged, &id));
    CHECK_STATUS(c_check(&c, forged), ARK_ESTALE);
    CHECK_STATUS(c_remove(&c, forged), ARK_ESTALE);
    CHECK_STATUS(c_remove_later(&c, forged), ARK_ESTALE);
    /* Slot 0 has stamp 0 forever. */
    CHECK(!c_get(&c, (uint64_t)UINT32_MAX << 32, &id));
    CHECK(!c_get(&c, ~(uint64_t)0, &id));
    CHECK(c_check(&c, ~(uint64_t)0) != ARK_OK);
    CHECK_OK(c_validate(&c));
    c_destroy(&c);
}

TEST_ON_BOTH(full_32_bit_generations_never_wrap_to_free)

static void freed_slot_is_not_reused_at_once(const kind *k) {
    /* A model of the rule: fresh slots until ARK_REUSE_DELAY are queued,
     * then the oldest freed slot with its next generation (FIFO). */
    enum { ROUNDS = 6 * ARK_REUSE_DELAY };
    cont c;
    hcfg cfg = {.index_bits = 16, .gen_bits = 16};
    CHECK_OK(make(k, &c, &cfg));
    uint32_t queue[ROUNDS + 2];
    uint32_t next_gen[ROUNDS + 2] = {0};
    size_t qhead = 0, qlen = 0;
    uint64_t fresh = 1;
    uint64_t state = harness_seed();
    ark_handle held[ROUNDS];
    size_t nheld = 0;
    for (int r = 0; r < ROUNDS; r++) {
        ark_handle want;
        if (qlen >= ARK_REUSE_DELAY) {
            uint32_t i = queue[qhead++];
            qlen--;
            want = i | (uint64_t)next_gen[i] << 16;
        } else {
            want = fresh++;
        }
        ark_handle h;
        CHECK_OK(c_insert(&c, (uint64_t)r, &h));
        CHECK_EQ(h, want);
        /* Free it (or an older one) now and then, by either path. */
        held[nheld++] = h;
        while (nheld > 0 && harness_below(&state, 3) != 0) {
            size_t j = harness_below(&state, nheld);
            ark_handle g = held[j];
            held[j] = held[--nheld];
            if (harness_below(&state, 2)) {
                CHECK_OK(c_remove(&c, g));
            } else {
                CHECK_OK(c_remove_later(&c, g));
                CHECK_EQ(c_flush(&c), 1);
            }
            uint32_t i = (uint32_t)(g & 0xffff);
            next_gen[i] = (uint32_t)(g >> 16) + 1;
            queue[qhead + qlen++] = i;
        }
        CHECK_OK(c_validate(&c));
    }
    CHECK(fresh < ROUNDS); /* reuse happened */
    c_destroy(&c);
}

TEST_ON_BOTH(freed_slot_is_not_reused_at_once)

/* Forged handles: random 64-bit values, random values inside the layout,
 * and single-bit flips of live, pending and stale handles. Each is
 * accepted only if it is exactly a live handle. (Unsealed handles: a flip
 * onto another live handle is allowed here; see the seal tests.) */
static void forged_handles_are_rejected(const kind *k) {
    cont c;
    hcfg cfg = {.index_bits = 20, .gen_bits = 12};
    CHECK_OK(make(k, &c, &cfg));
    enum { N = 1 << 16 };
    ark_handle *h = malloc(N * sizeof *h);
    CHECK(h != NULL);
    for (uint64_t i = 0; i < N; i++) {
        CHECK_OK(c_insert(&c, i, &h[i]));
        CHECK_EQ(h[i], i + 1);
    }
    for (int i = 0; i < N; i += 2) { /* half of them stale */
        CHECK_OK(c_remove(&c, h[i]));
    }
    for (int i = 1; i < N; i += 64) { /* some pending */
        CHECK_OK(c_remove_later(&c, h[i]));
    }
    uint64_t state = harness_seed();
    uint64_t accepted = 0;
    const uint64_t tries = harness_scaled(6000000);
    for (uint64_t t = 0; t < tries; t++) {
        ark_handle f;
        uint64_t r = harness_rand(&state);
        switch (t & 3) {
        case 0:
            f = r;
            break;
        case 1: /* plausible: index near the issued range, any generation */
            f = (r & 0xfff00000u) | ((r >> 40) % (N + 16));
            break;
        default:
            f = h[r % N] ^ ((uint64_t)1 << ((r >> 32) % 64));
            break;
        }
        uint64_t id;
        if (c_get(&c, f, &id)) {
            uint64_t idx = f & 0xfffff;
            CHECK(idx >= 1 && idx <= N);
            CHECK_EQ(f, h[idx - 1]);
            CHECK_EQ(id, idx - 1);
            CHECK((idx - 1) % 2 == 1 && (idx - 1) % 64 != 1);
            CHECK_OK(c_check(&c, f));
            accepted++;
        } else {
            CHECK(c_check(&c, f) != ARK_OK);
        }
    }
    CHECK(accepted < tries / 8);
    CHECK_OK(c_validate(&c));
    free(h);
    c_destroy(&c);
}

TEST_ON_BOTH(forged_handles_are_rejected)

/* ---- config edges ----------------------------------------------------- */

/* Whether the engine must accept a layout: index and generation bits
 * 0 (= 32) to 32 each, then tag bits that fit in what is left, then a tag
 * that fits in its bits. Computed in 64 bits so no sum wraps here. */
static bool layout_valid(unsigned ib, unsigned gb, unsigned tb, uint64_t tag) {
    uint64_t i = ib == 0 ? 32 : ib, g = gb == 0 ? 32 : gb;
    if (i > 32 || g > 32 || (uint64_t)tb > 64 - i - g) {
        return false;
    }
    return tb >= 64 || (tag >> tb) == 0;
}

/* An accepted layout works: issued handles pass check and fit in the
 * layout's bits with the tag on top, and a forged value is accepted only
 * when it is exactly an issued handle. */
static void accepted_layout_works(cont *c, unsigned ib, unsigned gb,
                                  unsigned tb, uint64_t tag) {
    unsigned i = ib == 0 ? 32 : ib, g = gb == 0 ? 32 : gb;
    unsigned width = i + g + tb;
    ark_handle h[4] = {0, 0, 0, 0};
    uint64_t slots = ((uint64_t)1 << i) - 1;
    size_t n = slots < 3 ? (size_t)slots : 3;
    for (size_t j = 0; j < n; j++) {
        CHECK_OK(c_insert(c, 10 + j, &h[j]));
        CHECK(h[j] != ARK_NULL_HANDLE);
        CHECK_OK(c_check(c, h[j]));
        uint64_t id;
        CHECK(c_get(c, h[j], &id));
        CHECK_EQ(id, 10 + j);
        CHECK_EQ(h[j] & (((uint64_t)1 << i) - 1), j + 1); /* index */
        if (width < 64) {
            CHECK_EQ(h[j] >> width, 0);
        }
        if (tb > 0) {
            CHECK_EQ(h[j] >> (i + g), tag);
        }
        CHECK_EQ(c_unseal(c, c_seal(c, h[j])), h[j]);
    }
    uint64_t id;
    ark_handle x = 0;
    ark_status st = c_insert(c, 13, &x);
    if (slots == n) {
        CHECK_STATUS(st, ARK_EFULL); /* index_bits 1: one slot */
    } else {
        CHECK_OK(st);
        h[n++] = x;
    }
    /* Values a wrapped layout once accepted (2 and 3), and others. */
    static const ark_handle forged[] = {1,
                                        2,
                                        3,
                                        4,
                                        (uint64_t)1 << 32,
                                        ((uint64_t)1 << 32) | 1,
                                        UINT32_MAX,
                                        UINT64_MAX,
                                        UINT64_MAX - 1,
                                        (uint64_t)1 << 63};
    for (size_t f = 0; f < sizeof forged / sizeof forged[0]; f++) {
        bool is_live = false;
        for (size_t j = 0; j < n; j++) {
            is_live |= forged[f] == h[j];
        }
        ark_status s = c_check(c, forged[f]);
        bool got = c_get(c, forged[f], &id);
        if (is_live) {
            CHECK_OK(s);
            CHECK(got);
        } else {
            CHECK(s != ARK_OK);
            CHECK(!got);
            CHECK_STATUS(c_remove(c, forged[f]), s);
            CHECK_STATUS(c_remove_later(c, forged[f]), s);
        }
    }
    CHECK_OK(c_validate(c));
}

static void config_edges_give_einval(const kind *k) {
    static const unsigned bits[] = {
        0, 1, 2, 31, 32, 33, 63, 64, 65, UINT_MAX, UINT_MAX - 31, 1u << 31};
    static const unsigned tag_bits[] = {0,           1,          2,  31, 32,
                                        33,          62,         63, 64, 65,
                                        4294967233u, /* 2^32 - 63 */
                                        4294967265u, /* 2^32 - 31 */
                                        0xFFFFFFFFu, 0x80000000u};
    size_t nbits = sizeof bits / sizeof bits[0];
    size_t ntag = sizeof tag_bits / sizeof tag_bits[0];
    uint64_t accepted = 0, rejected = 0;
    for (size_t a = 0; a < nbits; a++) {
        for (size_t b = 0; b < nbits; b++) {
            for (size_t t = 0; t < ntag; t++) {
                unsigned ib = bits[a], gb = bits[b], tb = tag_bits[t];
                uint64_t tags[5] = {0, 1, UINT64_MAX, 0, 0};
                size_t ntags = 3;
                if (tb < 64) {
                    tags[ntags++] = ((uint64_t)1 << tb) - 1; /* widest */
                    tags[ntags++] = (uint64_t)1 << tb;       /* too wide */
                }
                for (size_t x = 0; x < ntags; x++) {
                    hcfg cfg = {.index_bits = ib,
                                .gen_bits = gb,
                                .tag_bits = tb,
                                .tag = tags[x],
                                .seal_key = 1};
                    cont c;
                    c.p = (ark_pool *)(uintptr_t)1;
                    c.t = (ark_table *)(uintptr_t)1;
                    c.k = k;
                    ark_status s = c_create(&c, &cfg);
                    if (!layout_valid(ib, gb, tb, tags[x])) {
                        if (s != ARK_EINVAL) {
                            fprintf(stderr,
                                    "accepted index_bits %u gen_bits %u "
                                    "tag_bits %u tag %" PRIu64 "\n",
                                    ib, gb, tb, tags[x]);
                        }
                        CHECK_STATUS(s, ARK_EINVAL);
                        /* *out untouched */
                        CHECK(c.p == (ark_pool *)(uintptr_t)1);
                        CHECK(c.t == (ark_table *)(uintptr_t)1);
                        rejected++;
                        continue;
                    }
                    if (s != ARK_OK) {
                        fprintf(stderr,
                                "rejected index_bits %u gen_bits %u "
                                "tag_bits %u tag %" PRIu64 "\n",
                                ib, gb, tb, tags[x]);
                    }
                    CHECK_OK(s);
                    accepted_layout_works(&c, ib, gb, tb, tags[x]);
                    if (harness_failed()) {
                        fprintf(stderr,
                                "layout index_bits %u gen_bits %u "
                                "tag_bits %u tag %" PRIu64 "\n",
                                ib, gb, tb, tags[x]);
                    }
                    c_destroy(&c);
                    BAIL();
                    accepted++;
                }
            }
        }
    }
    CHECK(accepted > 100 && rejected > 1000);
}

TEST_ON_BOTH(config_edges_give_einval)

/* ---- removal hooks that call back: a model ---------------------------- */

/* What the model knows of each element (by id). */
enum {
    ST_LIVE = 1, /* resolves */
    ST_PENDING,  /* remove_later: waits for flush */
    ST_DOOMED,   /* remove asked for: its hook runs before the call ends */
    ST_DYING,    /* its hook runs now */
    ST_GONE      /* slot freed */
};

/* What the running top-level call is: which states a hook may find. */
enum { PH_NONE, PH_REMOVE, PH_FLUSH, PH_CLEAR };

/* What a hook does with the children of the element it removes. */
enum { KIDS_RANDOM, KIDS_REMOVE, KIDS_LATER, KIDS_KEEP };

typedef struct mdl {
    cont c;
    uint64_t rng;
    /* per id; ids start at 1 */
    size_t cap, nids;
    ark_handle *h;
    uint8_t *st;
    uint8_t *hooks;   /* on_remove calls */
    uint64_t *kid;    /* first child */
    uint64_t *sib;    /* next sibling */
    size_t *live_pos; /* position in live_ids */
    uint64_t *live_ids;
    size_t nlive;  /* LIVE */
    size_t nmark;  /* PENDING + DOOMED + DYING */
    size_t npend;  /* PENDING */
    size_t ndoom;  /* DOOMED */
    uint64_t *all; /* every id not GONE (for clear(false)) */
    size_t *all_pos;
    size_t nall;
    /* every handle ever issued, by its index and generation bits */
    uint64_t *seen;
    unsigned index_bits, gen_bits;
    uint64_t gen_max;
    uint8_t *idx_used;
    uint64_t distinct, retired;
    /* the call running now */
    int phase;
    bool clear_hooks;
    size_t later_in_flush; /* remove_later OKs from hooks during a flush */
    int budget;            /* inserts hooks may still make */
    int depth;             /* hooks running now */
    uint64_t dying;        /* id whose hook runs or ran last, not freed */
    /* knobs */
    int kids;        /* KIDS_* */
    int extra_odds;  /* 1 in extra_odds hooks also removes a random one */
    int insert_odds; /* 1 in insert_odds hooks inserts (budget allowing) */
    uint64_t hook_total, hook_inserts, hook_removes, hook_laters;
} mdl;

static void m_hook(void *elem, ark_handle h, void *user);

static void m_free(mdl *m) {
    free(m->h);
    free(m->st);
    free(m->hooks);
    free(m->kid);
    free(m->sib);
    free(m->live_pos);
    free(m->live_ids);
    free(m->all);
    free(m->all_pos);
    free(m->seen);
    free(m->idx_used);
}

/* Set up m and its container (tag 2 in 2 tag bits, a fixed seal key). */
static bool m_init(mdl *m, const kind *k, unsigned ib, unsigned gb, size_t cap,
                   uint64_t seed) {
    memset(m, 0, sizeof *m);
    m->rng = seed;
    m->cap = cap + 1;
    m->nids = 1;
    m->index_bits = ib;
    m->gen_bits = gb;
    m->gen_max = gb == 32 ? UINT32_MAX - 1 : ((uint64_t)1 << gb) - 1;
    m->h = calloc(m->cap, sizeof *m->h);
    m->st = calloc(m->cap, 1);
    m->hooks = calloc(m->cap, 1);
    m->kid = calloc(m->cap, sizeof *m->kid);
    m->sib = calloc(m->cap, sizeof *m->sib);
    m->live_pos = calloc(m->cap, sizeof *m->live_pos);
    m->live_ids = calloc(m->cap, sizeof *m->live_ids);
    m->all = calloc(m->cap, sizeof *m->all);
    m->all_pos = calloc(m->cap, sizeof *m->all_pos);
    m->seen =
        calloc((size_t)(((uint64_t)1 << (ib + gb)) / 64 + 1), sizeof *m->seen);
    m->idx_used = calloc((size_t)1 << ib, 1);
    m->kids = KIDS_RANDOM;
    m->extra_odds = 4;
    m->insert_odds = 2;
    if (!m->h || !m->st || !m->hooks || !m->kid || !m->sib || !m->live_pos ||
        !m->live_ids || !m->all || !m->all_pos || !m->seen || !m->idx_used) {
        m_free(m);
        return false;
    }
    hcfg cfg = {.index_bits = ib,
                .gen_bits = gb,
                .tag_bits = 2,
                .tag = 2,
                .seal_key = seed | 1,
                .on_remove = m_hook,
                .user = m};
    if (make(k, &m->c, &cfg) != ARK_OK) {
        m_free(m);
        return false;
    }
    return true;
}

static void live_add(mdl *m, uint64_t id) {
    m->live_pos[id] = m->nlive;
    m->live_ids[m->nlive++] = id;
}

static void live_del(mdl *m, uint64_t id) {
    size_t p = m->live_pos[id];
    uint64_t last = m->live_ids[--m->nlive];
    m->live_ids[p] = last;
    m->live_pos[last] = p;
}

/* The slot of id is freed (after its hook, or by clear(false)). */
static void m_gone(mdl *m, uint64_t id) {
    m->st[id] = ST_GONE;
    size_t p = m->all_pos[id];
    uint64_t last = m->all[--m->nall];
    m->all[p] = last;
    m->all_pos[last] = p;
    uint64_t gen =
        (m->h[id] >> m->index_bits) & (((uint64_t)1 << m->gen_bits) - 1);
    m->retired += gen == m->gen_max;
}

/* The hook of the dying element has returned: its slot is free now. */
static void m_settle(mdl *m) {
    if (m->dying != 0) {
        m->nmark--;
        m_gone(m, m->dying);
        m->dying = 0;
    }
}

/* Insert a new element, a child of parent (0 = none); returns its id or
 * 0 on EFULL, which the model predicts: every index issued and none free. */
static uint64_t m_insert(mdl *m, uint64_t parent) {
    uint64_t limit = (uint64_t)1 << m->index_bits;
    uint64_t occupied = m->nlive + m->nmark + m->retired;
    bool full = m->distinct == limit - 1 && occupied == m->distinct;
    uint64_t id = m->nids;
    if (id >= m->cap) {
        harness_fail(__FILE__, __LINE__, "model out of ids");
        return 0;
    }
    ark_handle h = 0;
    ark_status s = c_insert(&m->c, id, &h);
    if (full) {
        if (s != ARK_EFULL) {
            harness_fail(__FILE__, __LINE__, "insert: %s, want EFULL",
                         ark_strerror(s));
        }
        return 0;
    }
    if (s != ARK_OK) {
        harness_fail(__FILE__, __LINE__, "insert: %s", ark_strerror(s));
        return 0;
    }
    m->nids++;
    /* No handle is ever issued twice (retirement makes it so). */
    uint64_t low = h & ((((uint64_t)1) << (m->index_bits + m->gen_bits)) - 1);
    if (h >> (m->index_bits + m->gen_bits) != 2 ||
        (m->seen[low >> 6] >> (low & 63)) & 1) {
        harness_fail(__FILE__, __LINE__,
                     "handle %" PRIx64 " issued twice or mistagged", h);
        return 0;
    }
    m->seen[low >> 6] |= (uint64_t)1 << (low & 63);
    uint64_t idx = h & ((((uint64_t)1) << m->index_bits) - 1);
    if (!m->idx_used[idx]) {
        m->idx_used[idx] = 1;
        m->distinct++;
    }
    m->h[id] = h;
    m->st[id] = ST_LIVE;
    live_add(m, id);
    m->all_pos[id] = m->nall;
    m->all[m->nall++] = id;
    if (parent != 0) {
        m->sib[id] = m->kid[parent];
        m->kid[parent] = id;
    }
    return id;
}

/* remove or remove_later id (any state), as the model predicts. */
static void m_remove(mdl *m, uint64_t id, bool later) {
    uint8_t was = m->st[id];
    ark_status want = (was == ST_LIVE || was == ST_DYING) ? ARK_OK : ARK_ESTALE;
    if (was == ST_LIVE) {
        live_del(m, id);
        m->nmark++;
        m->st[id] = later ? ST_PENDING : ST_DOOMED;
        if (later) {
            m->npend++;
            m->later_in_flush += m->phase == PH_FLUSH;
        } else {
            m->ndoom++;
        }
    }
    size_t before = c_count(&m->c);
    ark_status s =
        later ? c_remove_later(&m->c, m->h[id]) : c_remove(&m->c, m->h[id]);
    if (s != want) {
        harness_fail(__FILE__, __LINE__,
                     "%s of id %" PRIu64 " (state %d): %s, want %s",
                     later ? "remove_later" : "remove", id, was,
                     ark_strerror(s), ark_strerror(want));
        return;
    }
    if (was == ST_DYING && c_count(&m->c) != before) {
        harness_fail(__FILE__, __LINE__, "removing the dying one again");
    }
}

/* The whole model agrees with the container. */
static void m_verify(mdl *m, bool full) {
    CHECK_EQ(c_count(&m->c), m->nlive);
    CHECK_OK(c_validate(&m->c));
    if (!full) {
        return;
    }
    for (uint64_t id = 1; id < m->nids; id++) {
        uint64_t got;
        bool live = c_get(&m->c, m->h[id], &got);
        ark_status s = c_check(&m->c, m->h[id]);
        bool want = m->st[id] == ST_LIVE || m->st[id] == ST_DYING;
        CHECK_EQ(live, want);
        if (want) {
            CHECK_EQ(got, id);
            CHECK_OK(s);
        } else {
            CHECK_STATUS(s, ARK_ESTALE);
        }
    }
}

static void m_hook(void *elem, ark_handle h, void *user) {
    mdl *m = user;
    if (harness_failed()) {
        return; /* the first failure says it all */
    }
    m->depth++;
    m_settle(m);
    m->hook_total++;
    CHECK_EQ(m->depth, 1); /* no hook runs inside another */
    /* The handle resolves to the element being removed. */
    uint64_t id;
    CHECK(c_get(&m->c, h, &id));
    CHECK(id >= 1 && id < m->nids);
    CHECK_EQ(h, m->h[id]);
    CHECK(c_elem_ok(&m->c, elem, h));
    CHECK_OK(c_check(&m->c, h));
    /* Only an element whose removal was asked for. */
    uint8_t was = m->st[id];
    bool ok =
        was == ST_DOOMED ||
        (was == ST_PENDING && m->phase != PH_REMOVE && m->phase != PH_NONE) ||
        (was == ST_LIVE && m->phase == PH_CLEAR && m->clear_hooks);
    if (!ok) {
        harness_fail(__FILE__, __LINE__,
                     "hook for id %" PRIu64 " in state %d, phase %d", id, was,
                     m->phase);
        return;
    }
    m->hooks[id]++;
    CHECK_EQ(m->hooks[id], 1); /* exactly once */
    if (was == ST_LIVE) {
        live_del(m, id);
        m->nmark++;
    } else if (was == ST_PENDING) {
        m->npend--;
    } else {
        m->ndoom--;
    }
    m->st[id] = ST_DYING;
    m->dying = id;
    /* count excludes it; the container is valid in the middle. */
    CHECK_EQ(c_count(&m->c), m->nlive);
    CHECK_OK(c_validate(&m->c));
    /* Removing it again is a no-op; flush and clear do nothing here. */
    m_remove(m, id, false);
    m_remove(m, id, true);
    CHECK_EQ(c_flush(&m->c), 0);
    c_clear(&m->c, harness_below(&m->rng, 2));
    CHECK_EQ(c_count(&m->c), m->nlive);
    CHECK_OK(c_check(&m->c, h));
    uint64_t again;
    CHECK(c_get(&m->c, h, &again));
    CHECK_EQ(again, id);
    /* Its children go too (remove during remove / flush / clear). */
    for (uint64_t kid = m->kid[id]; kid != 0; kid = m->sib[kid]) {
        int how = m->kids;
        if (how == KIDS_RANDOM) {
            uint64_t r = harness_below(&m->rng, 10);
            how = r < 6 ? KIDS_REMOVE : r < 9 ? KIDS_LATER : KIDS_KEEP;
        }
        if (how == KIDS_KEEP) {
            continue;
        }
        m->hook_removes += how == KIDS_REMOVE;
        m->hook_laters += how == KIDS_LATER;
        m_remove(m, kid, how == KIDS_LATER);
        BAIL();
    }
    /* Now and then someone else, or a dead one, or a fresh element. */
    if (m->extra_odds && harness_below(&m->rng, (uint64_t)m->extra_odds) == 0 &&
        m->nids > 1) {
        uint64_t other = m->nlive > 0 && harness_below(&m->rng, 4) != 0
                             ? m->live_ids[harness_below(&m->rng, m->nlive)]
                             : 1 + harness_below(&m->rng, m->nids - 1);
        m_remove(m, other, harness_below(&m->rng, 2));
        BAIL();
    }
    while (m->budget > 0 && m->insert_odds &&
           harness_below(&m->rng, (uint64_t)m->insert_odds) == 0) {
        m->budget--;
        uint64_t parent =
            m->nlive > 0 ? m->live_ids[harness_below(&m->rng, m->nlive)] : 0;
        if (m_insert(m, parent) != 0) {
            m->hook_inserts++;
        }
        BAIL();
    }
    CHECK_OK(c_validate(&m->c));
    m->depth--;
}

/* After a top-level call: the last hook's slot is free, nothing asked for
 * is left undone, and the container agrees with the model. */
static void m_after(mdl *m, bool full) {
    m_settle(m);
    m->phase = PH_NONE;
    m->budget = 0;
    CHECK_EQ(m->depth, 0);
    CHECK_EQ(m->ndoom, 0); /* every remove asked for got its hook */
    CHECK_EQ(m->nmark, m->npend);
    m_verify(m, full);
}

static void m_op_remove(mdl *m, uint64_t id, bool later, int budget) {
    m->phase = later ? PH_NONE : PH_REMOVE;
    m->budget = budget;
    m_remove(m, id, later);
}

static void m_op_flush(mdl *m, int budget) {
    m->phase = PH_FLUSH;
    m->budget = budget;
    m->later_in_flush = 0;
    size_t pending = m->npend;
    size_t n = c_flush(&m->c);
    m_settle(m);
    /* every pending one, and every one hooks marked meanwhile */
    CHECK_EQ(n, pending + m->later_in_flush);
    CHECK_EQ(m->npend, 0);
}

static void m_op_clear(mdl *m, bool run_hook, int budget) {
    m->phase = PH_CLEAR;
    m->clear_hooks = run_hook;
    m->budget = budget;
    uint64_t hooks_before = m->hook_total;
    size_t present = m->nall;
    c_clear(&m->c, run_hook);
    m_settle(m);
    CHECK_EQ(c_count(&m->c), 0);
    if (!run_hook) {
        CHECK_EQ(m->hook_total, hooks_before);
        while (m->nall > 0) {
            uint64_t id = m->all[m->nall - 1];
            if (m->st[id] == ST_LIVE) {
                live_del(m, id);
            } else {
                m->nmark--;
                m->npend -= m->st[id] == ST_PENDING;
            }
            m_gone(m, id);
        }
    } else {
        /* each one present got its hook, and so did what hooks added */
        CHECK(m->hook_total - hooks_before >= present);
    }
    CHECK_EQ(m->nall, 0);
    CHECK_EQ(m->nlive, 0);
    CHECK_EQ(m->nmark, 0);
    CHECK_EQ(c_flush(&m->c), 0); /* nothing left marked */
}

/* Random operations with hooks that remove children, remove_later,
 * insert, and call flush and clear (which must do nothing). */
static void hooks_model(const kind *k, unsigned ib, unsigned gb, uint64_t ops) {
    mdl *m = malloc(sizeof *m);
    CHECK(m != NULL);
    uint64_t seed = harness_seed() ^ ((uint64_t)ib << 40);
    if (!m_init(m, k, ib, gb, (size_t)ops * 6 + 64, seed)) {
        free(m);
        CHECK(!"model setup");
    }
    size_t target = 200;
    uint64_t flushes = 0, clears = 0, efull = 0;
    for (uint64_t op = 0; op < ops && !harness_failed(); op++) {
        if (op % 2000 == 0) {
            target = 20 + harness_below(&m->rng, 600);
        }
        uint64_t r = harness_below(&m->rng, 1000);
        int budget = (int)harness_below(&m->rng, 4);
        if (r < 420 && (m->nlive < target || r < 150)) {
            uint64_t parent =
                m->nlive > 0 && harness_below(&m->rng, 4) != 0
                    ? m->live_ids[harness_below(&m->rng, m->nlive)]
                    : 0;
            efull += m_insert(m, parent) == 0;
        } else if (r < 700 && m->nlive > 0) {
            uint64_t id = m->live_ids[harness_below(&m->rng, m->nlive)];
            m_op_remove(m, id, false, budget);
        } else if (r < 850 && m->nlive > 0) {
            uint64_t id = m->live_ids[harness_below(&m->rng, m->nlive)];
            m_op_remove(m, id, true, 0);
        } else if (r < 920) {
            m_op_flush(m, budget);
            flushes++;
        } else if (r < 995 && m->nids > 1) {
            /* a removed, pending or live handle: rejected or not */
            uint64_t id = 1 + harness_below(&m->rng, m->nids - 1);
            m_op_remove(m, id, harness_below(&m->rng, 2), budget);
        } else if (r >= 995) {
            m_op_clear(m, r % 2 == 0, 2 + budget * 3);
            clears++;
        }
        m_after(m, op % 256 == 0);
    }
    m_op_clear(m, true, 8);
    m_after(m, true);
    if (!harness_failed()) {
        /* The run reached what it is meant to test. */
        CHECK(m->hook_removes > 50 && m->hook_laters > 20);
        CHECK(m->hook_inserts > 20);
        CHECK(flushes > 10 && clears > 1);
        printf("%s %u+%u: %" PRIu64 " ids, %" PRIu64 " hooks (%" PRIu64
               " removes, %" PRIu64 " remove_laters, %" PRIu64
               " inserts from hooks), %" PRIu64 " EFULL, %" PRIu64 " retired\n",
               k->name, ib, gb, (uint64_t)m->nids - 1, m->hook_total,
               m->hook_removes, m->hook_laters, m->hook_inserts, efull,
               m->retired);
    }
    c_destroy(&m->c);
    m_free(m);
    free(m);
}

static void hooks_call_back_model(const kind *k) {
    hooks_model(k, 14, 10, harness_scaled(40000));
}
static void hooks_call_back_model_small_layout(const kind *k) {
    /* 511 slots of 16 generations: the run retires slots and hits EFULL */
    hooks_model(k, 9, 4, harness_scaled(20000));
}

TEST_ON_BOTH(hooks_call_back_model)
TEST_ON_BOTH(hooks_call_back_model_small_layout)

/* ---- removal hooks that call back, case by case ----------------------- */

static mdl *scripted(const kind *k, int kids) {
    mdl *m = malloc(sizeof *m);
    if (m == NULL) {
        return NULL;
    }
    if (!m_init(m, k, 16, 16, 20000, harness_seed())) {
        free(m);
        return NULL;
    }
    m->kids = kids;
    m->extra_odds = 0;
    m->insert_odds = 0;
    return m;
}

static void scripted_free(mdl *m) {
    c_destroy(&m->c);
    m_free(m);
    free(m);
}

/* A unit whose hook removes its pets, whose hooks remove theirs: one
 * remove takes the whole tree, each element with exactly one on_remove,
 * the first one first. Also a chain 300 deep. */
static void hook_removes_children(const kind *k) {
    mdl *m = scripted(k, KIDS_REMOVE);
    CHECK(m != NULL);
    uint64_t unit = m_insert(m, 0);
    uint64_t other = m_insert(m, 0);
    for (int i = 0; i < 3; i++) {
        uint64_t pet = m_insert(m, unit);
        m_insert(m, pet);
        m_insert(m, pet);
    }
    m_after(m, true);
    BAIL();
    CHECK_EQ(c_count(&m->c), 11);
    m_op_remove(m, unit, false, 0);
    m_after(m, true);
    BAIL();
    CHECK_EQ(m->hook_total, 10);
    CHECK_EQ(c_count(&m->c), 1);
    CHECK_EQ(m->st[other], ST_LIVE);
    /* a chain: each element's hook removes the next */
    uint64_t first = m_insert(m, 0), last = first;
    for (int i = 0; i < 300; i++) {
        last = m_insert(m, last);
    }
    m_op_remove(m, first, false, 0);
    m_after(m, true);
    BAIL();
    CHECK_EQ(m->hook_total, 10 + 301);
    CHECK_EQ(c_count(&m->c), 1);
    /* the same through flush */
    first = m_insert(m, 0);
    last = first;
    for (int i = 0; i < 50; i++) {
        last = m_insert(m, last);
    }
    m_op_remove(m, first, true, 0);
    m_after(m, true);
    BAIL();
    m_op_flush(m, 0);
    m_after(m, true);
    BAIL();
    CHECK_EQ(m->hook_total, 10 + 301 + 51);
    scripted_free(m);
}

TEST_ON_BOTH(hook_removes_children)

/* Issue 12, defect 2: remove_later from a hook while flush runs lost the
 * element (never flushed, slot leaked). flush must free it too, and count
 * it. */
static void remove_later_during_flush(const kind *k) {
    mdl *m = scripted(k, KIDS_LATER);
    CHECK(m != NULL);
    uint64_t parents[100];
    for (int i = 0; i < 100; i++) {
        parents[i] = m_insert(m, 0);
        uint64_t kid = m_insert(m, parents[i]);
        m_insert(m, kid); /* grandchildren are marked by their parents */
    }
    m_after(m, true);
    BAIL();
    for (int i = 0; i < 100; i += 10) {
        m_op_remove(m, parents[i], true, 0);
    }
    m_after(m, true);
    BAIL();
    CHECK_EQ(c_count(&m->c), 290);
    m_op_flush(m, 0); /* checks: returns 10 + 10 + 10 */
    m_after(m, true);
    BAIL();
    CHECK_EQ(m->hook_total, 30);
    CHECK_EQ(c_count(&m->c), 270);
    CHECK_EQ(c_flush(&m->c), 0);
    scripted_free(m);
}

TEST_ON_BOTH(remove_later_during_flush)

/* Issue 12, defect 2: remove from a hook while clear(true) runs ran
 * on_remove twice for some elements. A random forest, some of it
 * pending: clear runs each hook exactly once (checked in the hook). */
static void remove_during_clear(const kind *k) {
    mdl *m = scripted(k, KIDS_REMOVE);
    CHECK(m != NULL);
    for (int round = 0; round < 3; round++) {
        uint64_t ids[400];
        for (int i = 0; i < 400; i++) {
            uint64_t parent = i > 0 && harness_below(&m->rng, 5) != 0
                                  ? ids[harness_below(&m->rng, (uint64_t)i)]
                                  : 0;
            ids[i] = m_insert(m, parent);
        }
        for (int i = 0; i < 400; i += 7) {
            if (m->st[ids[i]] == ST_LIVE) {
                m_op_remove(m, ids[i], true, 0);
            }
        }
        m_after(m, true);
        BAIL();
        uint64_t before = m->hook_total;
        m_op_clear(m, true, 0);
        m_after(m, true);
        BAIL();
        CHECK_EQ(m->hook_total - before, 400);
        CHECK_EQ(c_count(&m->c), 0);
    }
    scripted_free(m);
}

TEST_ON_BOTH(remove_during_clear)

/* Hooks that insert while flush and clear run (bounded by a budget):
 * what flush's hooks insert stays; clear removes it too, and returns with
 * nothing live or marked. */
static void insert_during_flush_and_clear(const kind *k) {
    mdl *m = scripted(k, KIDS_KEEP);
    CHECK(m != NULL);
    m->insert_odds = 1; /* every hook inserts while the budget lasts */
    uint64_t ids[50];
    for (int i = 0; i < 50; i++) {
        ids[i] = m_insert(m, 0);
    }
    for (int i = 0; i < 50; i += 5) {
        m_op_remove(m, ids[i], true, 0);
    }
    m_after(m, true);
    BAIL();
    CHECK_EQ(c_count(&m->c), 40);
    m_op_flush(m, 7);
    m_after(m, true);
    BAIL();
    CHECK_EQ(m->hook_inserts, 7);
    CHECK_EQ(c_count(&m->c), 47);
    /* a remove whose hook inserts */
    m_op_remove(m, ids[1], false, 3);
    m_after(m, true);
    BAIL();
    CHECK_EQ(c_count(&m->c), 47 - 1 + 3); /* its hook spends the budget */
    uint64_t before = m->hook_total;
    size_t present = m->nall;
    m_op_clear(m, true, 25);
    m_after(m, true);
    BAIL();
    CHECK_EQ(m->hook_inserts, 7 + 3 + 25);
    CHECK_EQ(m->hook_total - before, present + 25);
    CHECK_EQ(c_count(&m->c), 0);
    scripted_free(m);
}

TEST_ON_BOTH(insert_during_flush_and_clear)

/* ---- sealing ---------------------------------------------------------- */

/* unseal(seal(h)) == h for every live handle, and a sealed handle stays
 * within the layout's bits (below 2^32 for 32-bit layouts). */
static void seal_round_trips_every_live_handle(const kind *k) {
    static const unsigned shapes[][3] = {{20, 12, 0}, {16, 16, 0}, {24, 8, 0},
                                         {12, 10, 6}, {0, 0, 0},   {7, 5, 3}};
    uint64_t state = harness_seed();
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        unsigned ib = shapes[sh][0], gb = shapes[sh][1], tb = shapes[sh][2];
        unsigned width = (ib ? ib : 32) + (gb ? gb : 32) + tb;
        cont c;
        hcfg cfg = {.index_bits = ib,
                    .gen_bits = gb,
                    .tag_bits = tb,
                    .tag = tb ? 5 : 0,
                    .seal_key = 77};
        CHECK_OK(make(k, &c, &cfg));
        size_t n = 0, same = 0;
        ark_handle hs[3000];
        for (uint64_t i = 0; i < 3000; i++) {
            ark_handle h;
            if (c_insert(&c, i, &h) != ARK_OK) {
                break; /* 7 index bits fill up */
            }
            hs[n++] = h;
            if (harness_below(&state, 3) == 0) { /* later generations too */
                size_t j = (size_t)harness_below(&state, n);
                CHECK_OK(c_remove(&c, hs[j]));
                hs[j] = hs[--n];
            }
        }
        for (uint64_t i = 1; i < 3000 && n < 3000; i++) {
            ark_handle h;
            if (c_insert(&c, i, &h) == ARK_OK) {
                hs[n++] = h;
            }
        }
        size_t live = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t id;
            if (!c_get(&c, hs[i], &id)) {
                continue; /* removed above */
            }
            live++;
            ark_handle w = c_seal(&c, hs[i]);
            if (width < 64) {
                CHECK(w >> width == 0);
            }
            if (width == 32) {
                CHECK(w <= UINT32_MAX);
            }
            same += w == hs[i];
            ark_handle back = c_unseal(&c, w);
            CHECK_EQ(back, hs[i]);
            uint64_t id2;
            CHECK(c_get(&c, back, &id2));
            CHECK_EQ(id2, id);
        }
        CHECK(live > 50);
        CHECK(same <= live / 50); /* a keyed permutation, not the identity */
        c_destroy(&c);
    }
}

TEST_ON_BOTH(seal_round_trips_every_live_handle)

/* seal is a bijection on the layout's bits: exhaustively for widths up to
 * 16 (a permutation of [0, 2^width)), by sampling above; bits above the
 * layout pass through and unseal to values check rejects as foreign. */
static void seal_is_a_bijection_on_the_layout_bits(const kind *k) {
    static const unsigned shapes[][3] = {
        {4, 3, 2},  {1, 1, 0},   {1, 1, 1},   {2, 1, 0},   {3, 3, 1},
        {5, 5, 0},  {8, 7, 0},   {8, 8, 0},   {20, 12, 0}, {1, 32, 0},
        {32, 1, 0}, {32, 31, 1}, {32, 32, 0}, {31, 31, 2}, {17, 13, 11}};
    uint64_t state = harness_seed();
    uint64_t *seen = calloc(((size_t)1 << 16) / 64, sizeof *seen);
    CHECK(seen != NULL);
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        unsigned ib = shapes[sh][0], gb = shapes[sh][1], tb = shapes[sh][2];
        unsigned width = ib + gb + tb;
        uint64_t mask = width >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << width) - 1;
        cont c;
        hcfg cfg = {.index_bits = ib,
                    .gen_bits = gb,
                    .tag_bits = tb,
                    .tag = tb ? 1 : 0,
                    .seal_key = 0x1234 + sh};
        CHECK_OK(make(k, &c, &cfg));
        /* exhaustive up to 16 bits (12 under valgrind's scale) */
        if (width <= 16 &&
            ((uint64_t)1 << width) <= harness_scaled((uint64_t)1 << 16)) {
            memset(seen, 0, ((size_t)1 << 16) / 8);
            for (uint64_t x = 0; x <= mask; x++) {
                ark_handle w = c_seal(&c, x);
                CHECK(w <= mask);
                CHECK(!((seen[w >> 6] >> (w & 63)) & 1)); /* injective */
                seen[w >> 6] |= (uint64_t)1 << (w & 63);
                CHECK_EQ(c_unseal(&c, w), x);
            }
        }
        for (uint64_t t = 0; t < harness_scaled(20000); t++) {
            uint64_t x = harness_rand(&state);
            ark_handle w = c_seal(&c, x);
            CHECK_EQ(w & ~mask, x & ~mask); /* high bits pass through */
            CHECK_EQ(c_unseal(&c, w), x);
            CHECK_EQ(c_seal(&c, c_unseal(&c, x)), x);
            if ((x & ~mask) != 0) {
                ark_handle u = c_unseal(&c, x);
                CHECK_STATUS(c_check(&c, u), ARK_EFOREIGN);
                uint64_t id;
                CHECK(!c_get(&c, u, &id));
            }
        }
        /* a live handle with a stray high bit, sealed and unsealed */
        if (width < 64) {
            ark_handle h;
            CHECK_OK(c_insert(&c, 1, &h));
            for (unsigned b = width; b < 64; b++) {
                ark_handle w = c_seal(&c, h) | ((uint64_t)1 << b);
                CHECK_STATUS(c_check(&c, c_unseal(&c, w)), ARK_EFOREIGN);
            }
        }
        c_destroy(&c);
    }
    free(seen);
}

TEST_ON_BOTH(seal_is_a_bijection_on_the_layout_bits)

/* A fixed seal_key reproduces the sealing; another key, or two keys drawn
 * from entropy (seal_key 0), give another. */
static void seal_key_fixes_the_permutation(const kind *k) {
    uint64_t keys[5] = {42, 42, 43, 0, 0};
    cont c[5];
    ark_handle h[5][64];
    for (int j = 0; j < 5; j++) {
        hcfg cfg = {.index_bits = 20, .gen_bits = 12, .seal_key = keys[j]};
        CHECK_OK(make(k, &c[j], &cfg));
        for (int i = 0; i < 64; i++) {
            CHECK_OK(c_insert(&c[j], (uint64_t)i, &h[j][i]));
        }
    }
    int same_key = 0, other_key = 0, entropy = 0, pool0 = 0;
    for (int i = 0; i < 64; i++) {
        CHECK_EQ(h[0][i], h[3][i]); /* same handles everywhere */
        same_key += c_seal(&c[0], h[0][i]) == c_seal(&c[1], h[1][i]);
        other_key += c_seal(&c[0], h[0][i]) == c_seal(&c[2], h[2][i]);
        entropy += c_seal(&c[3], h[3][i]) == c_seal(&c[4], h[4][i]);
        pool0 += c_seal(&c[3], h[3][i]) == c_seal(&c[0], h[0][i]);
        for (int j = 0; j < 5; j++) {
            CHECK_EQ(c_unseal(&c[j], c_seal(&c[j], h[j][i])), h[j][i]);
        }
    }
    CHECK_EQ(same_key, 64);
    CHECK(other_key <= 2);
    CHECK(entropy <= 2); /* two entropy keys: 2^-32 per handle to agree */
    CHECK(pool0 <= 2);
    for (int j = 0; j < 5; j++) {
        c_destroy(&c[j]);
    }
}

TEST_ON_BOTH(seal_key_fixes_the_permutation)

/* Flip 1 to 3 distinct bits among the low `bits` of w. */
static uint64_t flip_bits(uint64_t w, unsigned bits, uint64_t *state) {
    uint64_t r = harness_rand(state);
    unsigned n = 1 + (unsigned)(r % 3);
    uint64_t m = 0;
    while ((unsigned)__builtin_popcountll(m) < n) {
        m |= (uint64_t)1 << (harness_rand(state) % bits);
    }
    return w ^ m;
}

/* The rate at which wire values are accepted, against binomial(n, p)
 * within 6 sigma. */
static bool rate_ok(uint64_t accepted, uint64_t n, double p) {
    double mean = (double)n * p;
    double var = (double)n * p * (1.0 - p);
    double sigma = var > 1.0 ? var : 1.0; /* Newton's sqrt: no libm here */
    for (int i = 0; i < 64; i++) {
        sigma = 0.5 * (sigma + var / sigma);
    }
    double d = (double)accepted - mean;
    return (d < 0 ? -d : d) <= 6.0 * sigma + 1.0;
}

/* A nearly full 20+12 container (1M live): sealed live handles with 1-3
 * bits flipped, and uniformly random 32-bit values, are accepted (get after
 * unseal) at the rate live / 2^32 predicts, within 6 sigma: 10^7 tries of
 * each on the pool, 10^6 on the table (the same engine code); under
 * valgrind's scale 10^5 live and a hundredth of the tries.
 *
 * The contrast, measured with the default seed: unsealed, 40% of the same
 * bit flips (253,260 of 625,000) name another live element, because every
 * slot of a fresh container is at generation 0 and a flip in the index
 * bits names a neighbour; sealed, 0.023% (2,318 of 10^7, live / 2^32 =
 * 2,328 expected). That is why handles sent to clients must be sealed.
 * With 64-bit handles (32+32) nothing is accepted. */
static void sealed_wire_values_are_accepted_at_the_random_rate(const kind *k) {
    const uint64_t live = harness_scaled(1000000);
    /* Scaled twice: under valgrind (scale 0.1) a hundredth, as the
     * sealing is a few multiplies run 4 times per try. */
    uint64_t n = harness_scaled(harness_scaled(10000000));
    if (k == &TABLE) {
        n /= 10; /* the same engine code: the pool runs the full count */
    }
    cont c;
    hcfg cfg = {.index_bits = 20, .gen_bits = 12, .seal_key = 0x5eed};
    CHECK_OK(make(k, &c, &cfg));
    CHECK_OK(c_reserve(&c, (size_t)live));
    ark_handle *hs = malloc((size_t)live * sizeof *hs);
    CHECK(hs != NULL);
    for (uint64_t i = 0; i < live; i++) {
        CHECK_OK(c_insert(&c, i, &hs[i]));
    }
    CHECK_EQ(c_count(&c), live);
    double p = (double)live / 4294967296.0;
    uint64_t state = harness_seed();
    uint64_t flipped = 0, random = 0, raw = 0;
    for (uint64_t t = 0; t < n; t++) {
        ark_handle h = hs[harness_below(&state, live)];
        ark_handle w = flip_bits(c_seal(&c, h), 32, &state);
        ark_handle u = c_unseal(&c, w);
        uint64_t id;
        if (c_get(&c, u, &id)) {
            CHECK(u != h);
            flipped++;
        }
        if (c_get(&c, c_unseal(&c, harness_rand(&state) & UINT32_MAX), &id)) {
            random++;
        }
    }
    const uint64_t nraw = n / 16;
    for (uint64_t t = 0; t < nraw; t++) {
        uint64_t id;
        ark_handle h = hs[harness_below(&state, live)];
        raw += c_get(&c, flip_bits(h, 32, &state), &id);
    }
    printf("%s 20+12, %" PRIu64 " live: expected %.1f of %" PRIu64
           "; accepted %" PRIu64 " bit-flipped, %" PRIu64
           " random; unsealed bit flips: %" PRIu64 " of %" PRIu64 "\n",
           k->name, live, (double)n * p, n, flipped, random, raw, nraw);
    CHECK(rate_ok(flipped, n, p));
    CHECK(rate_ok(random, n, p));
    CHECK(raw > nraw / 10); /* without sealing */
    free(hs);
    c_destroy(&c);

    /* 64-bit handles: a guess names a live element with p ~ 2^-46. */
    const uint64_t live64 = harness_scaled(1 << 18);
    hcfg wide = {.seal_key = 0x5eed};
    CHECK_OK(make(k, &c, &wide));
    hs = malloc((size_t)live64 * sizeof *hs);
    CHECK(hs != NULL);
    for (uint64_t i = 0; i < live64; i++) {
        CHECK_OK(c_insert(&c, i, &hs[i]));
    }
    uint64_t accepted = 0;
    for (uint64_t t = 0; t < n; t++) {
        uint64_t id;
        ark_handle h = hs[harness_below(&state, live64)];
        accepted +=
            c_get(&c, c_unseal(&c, flip_bits(c_seal(&c, h), 64, &state)), &id);
        accepted += c_get(&c, c_unseal(&c, harness_rand(&state)), &id);
    }
    CHECK_EQ(accepted, 0);
    free(hs);
    c_destroy(&c);
}

TEST_ON_BOTH(sealed_wire_values_are_accepted_at_the_random_rate)
