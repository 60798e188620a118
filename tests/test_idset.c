/* SPDX-License-Identifier: MIT */
/*
 * test_idset.c - ark_idset against a sorted uint32 array model.
 */
#include "ark/ark.h"
#include "harness.h"
#include "idset/idset.h"

#include <stdlib.h>
#include <string.h>

/* The debug statistics of the last mutating call (idset_internal.h); 0
 * when the library is built without them, and HAVE_STATS says which. */
#if ARK_IDSET_STATS
#define STAT(s, field) ((s)->stats.field)
#define HAVE_STATS 1
#else
#define STAT(s, field) ((void)(s), (size_t)0)
#define HAVE_STATS 0
#endif

/* ark_idset_insert with the statistics cleared first: its inline append
 * path returns without touching them. */
static ark_status ins(ark_idset *s, uint32_t id) {
    stats_reset(s);
    return ark_idset_insert(s, id);
}

/* ---- the model: a sorted array ------------------------------------------ */

typedef struct model {
    uint32_t *v;
    size_t n, cap;
} model;

static size_t model_lower(const model *m, uint32_t id) {
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->v[mid] < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static ark_status model_insert(model *m, uint32_t id) {
    size_t p = model_lower(m, id);
    if (p < m->n && m->v[p] == id) {
        return ARK_EEXIST;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->v = realloc(m->v, m->cap * sizeof(uint32_t));
    }
    memmove(m->v + p + 1, m->v + p, (m->n - p) * sizeof(uint32_t));
    m->v[p] = id;
    m->n++;
    return ARK_OK;
}

static void model_remove_at(model *m, size_t p) {
    memmove(m->v + p, m->v + p + 1, (m->n - p - 1) * sizeof(uint32_t));
    m->n--;
}

static ark_status model_remove(model *m, uint32_t id) {
    size_t p = model_lower(m, id);
    if (p >= m->n || m->v[p] != id) {
        return ARK_ENOTFOUND;
    }
    model_remove_at(m, p);
    return ARK_OK;
}

/* Remove a sorted batch (absent ids ignored). */
static void model_remove_sorted(model *m, const uint32_t *ids, size_t n) {
    size_t w = 0, b = 0;
    for (size_t r = 0; r < m->n; r++) {
        while (b < n && ids[b] < m->v[r]) {
            b++;
        }
        if (b < n && ids[b] == m->v[r]) {
            continue;
        }
        m->v[w++] = m->v[r];
    }
    m->n = w;
}

/* Every read-side function against the model. */
static int check_reads(const ark_idset *s, const model *m, uint64_t *rng) {
    REQ(ark_idset_count(s) == m->n);
    for (size_t i = 0; i < m->n; i++) {
        REQ(ark_idset_at(s, i) == m->v[i]);
    }
    REQ(ark_idset_at(s, m->n) == 0);
    uint32_t *buf = malloc((m->n + 1) * sizeof(uint32_t));
    REQ(ark_idset_copy(s, 0, buf, m->n + 5) == m->n);
    REQ(m->n == 0 || memcmp(buf, m->v, m->n * sizeof(uint32_t)) == 0);
    for (int t = 0; t < 8 && m->n > 0; t++) {
        size_t p = harness_below(rng, m->n), k = harness_below(rng, 700);
        size_t want = k < m->n - p ? k : m->n - p;
        size_t got = ark_idset_copy(s, p, buf, k);
        if (got != want || memcmp(buf, m->v + p, got * sizeof(uint32_t))) {
            free(buf);
            REQ(0);
        }
    }
    free(buf);
    for (size_t i = 0; i < m->n; i += 1 + i % 7) {
        REQ(ark_idset_find(s, m->v[i]) == i);
        REQ(ark_idset_contains(s, m->v[i]));
    }
    for (int t = 0; t < 200; t++) {
        uint32_t id;
        if (m->n > 0 && t % 2) {
            id = m->v[harness_below(rng, m->n)] + (uint32_t)(t % 3) - 1u;
        } else {
            id = (uint32_t)harness_rand(rng);
        }
        size_t p = model_lower(m, id);
        REQ(ark_idset_lower_bound(s, id) == p);
        int present = p < m->n && m->v[p] == id;
        REQ(ark_idset_find(s, id) == (present ? p : ARK_NOT_FOUND));
        REQ(ark_idset_contains(s, id) == present);
    }
    uint32_t edges[] = {0, 1, UINT32_MAX, UINT32_MAX - 1, 32768, 65535};
    for (size_t t = 0; t < sizeof edges / sizeof edges[0]; t++) {
        REQ(ark_idset_lower_bound(s, edges[t]) == model_lower(m, edges[t]));
    }
    return 1;
}

/* ---- basics -------------------------------------------------------------- */

TEST(create_destroy_and_empty_reads) {
    ark_idset *s = NULL;
    CHECK_OK(ark_idset_create(&s, NULL));
    CHECK(s != NULL);
    CHECK_EQ(ark_idset_count(s), 0);
    CHECK_EQ(ark_idset_at(s, 0), 0);
    CHECK_EQ(ark_idset_find(s, 5), ARK_NOT_FOUND);
    CHECK_EQ(ark_idset_lower_bound(s, 5), 0);
    CHECK(!ark_idset_contains(s, 0));
    uint32_t out[4];
    CHECK_EQ(ark_idset_copy(s, 0, out, 4), 0);
    CHECK(ark_idset_memory(s) >= sizeof(ark_idset));
    CHECK_STATUS(ark_idset_remove(s, 0), ARK_ENOTFOUND);
    CHECK_STATUS(ark_idset_remove_at(s, 0), ARK_ERANGE);
    CHECK_OK(ark_idset_remove_sorted(s, out, 0));
    uint32_t one = 3;
    CHECK_OK(ark_idset_remove_sorted(s, &one, 1));
    CHECK_OK(ark_idset_validate(s));
    ark_idset_destroy(s);
    ark_idset_destroy(NULL);
    CHECK_STATUS(ark_idset_validate(NULL), ARK_ECORRUPT);

    ark_allocator bad = {NULL, NULL, NULL};
    s = NULL;
    CHECK_STATUS(ark_idset_create(&s, &bad), ARK_EINVAL);
    CHECK(s == NULL);
}

TEST(every_status_and_extreme_ids) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    CHECK_OK(ins(s, UINT32_MAX));
    CHECK_OK(ins(s, 0));
    CHECK_OK(ins(s, 7));
    CHECK_STATUS(ins(s, 0), ARK_EEXIST);
    CHECK_STATUS(ins(s, UINT32_MAX), ARK_EEXIST);
    CHECK_STATUS(ins(s, 7), ARK_EEXIST);
    CHECK_OK(ark_idset_validate(s));
    CHECK_EQ(ark_idset_count(s), 3);
    CHECK_EQ(ark_idset_at(s, 0), 0);
    CHECK_EQ(ark_idset_at(s, 1), 7);
    CHECK_EQ(ark_idset_at(s, 2), UINT32_MAX);
    CHECK_EQ(ark_idset_at(s, 3), 0);
    CHECK_EQ(ark_idset_at(s, SIZE_MAX), 0);
    CHECK_EQ(ark_idset_find(s, UINT32_MAX), 2);
    CHECK_EQ(ark_idset_find(s, 0), 0);
    CHECK_EQ(ark_idset_find(s, 8), ARK_NOT_FOUND);
    CHECK_EQ(ark_idset_lower_bound(s, 8), 2);
    CHECK_EQ(ark_idset_lower_bound(s, 1), 1);
    CHECK(ark_idset_contains(s, 7));
    CHECK(!ark_idset_contains(s, 6));
    CHECK_STATUS(ark_idset_remove(s, 6), ARK_ENOTFOUND);
    CHECK_STATUS(ark_idset_remove_at(s, 3), ARK_ERANGE);
    CHECK_STATUS(ark_idset_remove_at(s, SIZE_MAX), ARK_ERANGE);
    uint32_t unsorted[] = {7, 0};
    CHECK_STATUS(ark_idset_remove_sorted(s, unsorted, 2), ARK_EINVAL);
    CHECK_STATUS(ark_idset_remove_sorted(s, NULL, 1), ARK_EINVAL);
    CHECK_EQ(ark_idset_count(s), 3);
    uint32_t out[8];
    CHECK_EQ(ark_idset_copy(s, 1, out, 8), 2);
    CHECK_EQ(out[0], 7);
    CHECK_EQ(out[1], UINT32_MAX);
    CHECK_EQ(ark_idset_copy(s, 3, out, 8), 0);
    CHECK_EQ(ark_idset_copy(s, 0, out, 0), 0);
    CHECK_OK(ark_idset_remove_at(s, 1));
    CHECK_OK(ark_idset_remove(s, UINT32_MAX));
    CHECK_OK(ark_idset_remove(s, 0));
    CHECK_EQ(ark_idset_count(s), 0);
    CHECK_OK(ark_idset_validate(s));
    ark_idset_destroy(s);
}

TEST(remove_sorted_ignores_absent_and_repeats) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    for (uint32_t i = 0; i < 1000; i++) {
        CHECK_OK(ins(s, i * 3));
    }
    uint32_t batch[] = {1, 3, 3, 3, 4, 300, 301, 2997, 5000, UINT32_MAX};
    CHECK_OK(ark_idset_remove_sorted(s, batch, sizeof batch / sizeof *batch));
    CHECK_OK(ark_idset_validate(s));
    CHECK_EQ(ark_idset_count(s), 997);
    CHECK(!ark_idset_contains(s, 3));
    CHECK(!ark_idset_contains(s, 300));
    CHECK(!ark_idset_contains(s, 2997));
    CHECK(ark_idset_contains(s, 6));
    uint32_t none[] = {2, 4, 5};
    size_t before = ark_idset_memory(s);
    CHECK_OK(ark_idset_remove_sorted(s, none, 3));
    CHECK_EQ(ark_idset_count(s), 997);
    CHECK_EQ(ark_idset_memory(s), before);
    /* Remove everything in one batch. */
    uint32_t *all = malloc(1000 * sizeof(uint32_t));
    for (uint32_t i = 0; i < 1000; i++) {
        all[i] = i * 3;
    }
    CHECK_OK(ark_idset_remove_sorted(s, all, 1000));
    free(all);
    CHECK_EQ(ark_idset_count(s), 0);
    CHECK_OK(ark_idset_validate(s));
    CHECK_OK(ins(s, 42));
    CHECK_EQ(ark_idset_at(s, 0), 42);
    ark_idset_destroy(s);
}

TEST(dense_ids_take_about_two_bytes_each) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    uint64_t rng = harness_seed();
    uint32_t id = 1000;
    for (int i = 0; i < 65536; i++) {
        CHECK_OK(ins(s, id));
        id += 1 + (uint32_t)harness_below(&rng, 3);
    }
    CHECK_OK(ark_idset_validate(s));
    double per = (double)ark_idset_memory(s) / 65536.0;
    CHECK(per <= 2.25);
    for (size_t k = 0; k < s->v.ngroups; k++) {
        CHECK(s->v.groups[k].dense);
    }
    ark_idset_destroy(s);
}

/* ---- the randomized differential tests ----------------------------------- */

typedef enum dist { D1_ECS, D2_CONTIG, D3_SPARSE, D4_CLUSTER, D5_FLIP } dist;

/* A pool of candidate ids of the distribution (sorted, unique). */
static uint32_t *make_pool(dist d, size_t n, uint64_t *rng) {
    uint32_t *p = malloc(n * sizeof(uint32_t));
    uint32_t id = 0;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        switch (d) {
        case D1_ECS:
            id = i == 0 ? 1000 : id + 1 + (uint32_t)harness_below(rng, 3);
            break;
        case D2_CONTIG:
            id = (uint32_t)i;
            break;
        case D3_SPARSE:
            /* evenly spread plus noise, keeps it sorted and unique; the
             * first and last candidates are 0 and UINT32_MAX */
            id = i == 0       ? 0
                 : i == n - 1 ? UINT32_MAX
                              : (uint32_t)(((uint64_t)i << 32) / n) +
                                    (uint32_t)harness_below(rng, 1000);
            break;
        case D4_CLUSTER:
            if (run == 0) {
                run = 200 + harness_below(rng, 1800);
                id = i == 0
                         ? 5
                         : id + (1u << 20) + (uint32_t)harness_below(rng, 4096);
            } else {
                id += 1 + (uint32_t)harness_below(rng, 2);
            }
            run--;
            break;
        case D5_FLIP:
            /* 255 gaps of about 257 span about 65535: one shift flips */
            id = i == 0 ? 0 : id + 256 + (uint32_t)harness_below(rng, 3);
            break;
        }
        p[i] = id;
    }
    return p;
}

static int differential(dist d, size_t pool_n, size_t ops, int variant) {
    uint64_t rng = harness_seed() ^ (uint64_t)(d + 1) * 0x9e37u ^
                   (uint64_t)variant * 0x5851f42d4c957f2dull;
    uint32_t *pool = make_pool(d, pool_n, &rng);
    model m = {0};
    ark_idset *s;
    REQ(ark_idset_create(&s, NULL) == ARK_OK);
    uint32_t *batch = malloc(512 * sizeof(uint32_t));
    size_t target = pool_n / 2, max_n = 0, promos = 0, demos = 0;
    for (size_t op = 0; op < ops; op++) {
        uint64_t r = harness_below(&rng, 1000);
        ark_status got, want;
        if (r < (m.n < target ? 600u : 400u)) {
            /* insert a pool id; at the front half the time for D5 */
            size_t i = harness_below(&rng, pool_n);
            if (d == D5_FLIP && r % 4 == 1) {
                i = harness_below(&rng, 8);
            }
            uint32_t id = pool[i];
            want = model_insert(&m, id);
            got = ins(s, id);
            REQ(got == want);
            REQ(got != ARK_OK || STAT(s, moves) <= 127 + s->v.ngroups);
        } else if (r < 990) {
            if (m.n == 0) {
                continue;
            }
            uint64_t how = harness_below(&rng, 4);
            if (how == 0) {
                size_t p = harness_below(&rng, m.n + 2);
                want = p < m.n ? ARK_OK : ARK_ERANGE;
                got = ark_idset_remove_at(s, p);
                if (want == ARK_OK) {
                    model_remove_at(&m, p);
                }
            } else if (how == 1) {
                uint32_t id = pool[harness_below(&rng, pool_n)];
                want = model_remove(&m, id);
                got = ark_idset_remove(s, id);
            } else {
                size_t p = d == D5_FLIP && how == 2
                               ? harness_below(&rng, m.n < 4 ? m.n : 4)
                               : harness_below(&rng, m.n);
                uint32_t id = m.v[p];
                want = model_remove(&m, id);
                got = ark_idset_remove(s, id);
            }
            REQ(got == want);
            REQ(got != ARK_OK || STAT(s, moves) <= 127 + s->v.ngroups + 1);
        } else if (r < 995) {
            /* append above the max (new entities) */
            uint32_t top = m.n ? m.v[m.n - 1] : 0;
            if (top < UINT32_MAX - 70000) {
                uint32_t id = top + 1 + (uint32_t)harness_below(&rng, 600);
                REQ(ins(s, id) == model_insert(&m, id));
            }
        } else {
            /* a frame's sorted batch, with absent ids and repeats */
            size_t k = harness_below(&rng, 48);
            for (size_t i = 0; i < k; i++) {
                batch[i] = m.n && harness_below(&rng, 4)
                               ? m.v[harness_below(&rng, m.n)]
                               : pool[harness_below(&rng, pool_n)];
            }
            for (size_t i = 1; i < k; i++) { /* insertion sort */
                uint32_t x = batch[i];
                size_t j = i;
                while (j > 0 && batch[j - 1] > x) {
                    batch[j] = batch[j - 1];
                    j--;
                }
                batch[j] = x;
            }
            model_remove_sorted(&m, batch, k);
            REQ(ark_idset_remove_sorted(s, batch, k) == ARK_OK);
        }
        if (ark_idset_validate(s) != ARK_OK) {
            harness_fail(__FILE__, __LINE__, "validate failed at op %zu", op);
            return 0;
        }
        REQ(ark_idset_count(s) == m.n);
        max_n = m.n > max_n ? m.n : max_n;
        promos += STAT(s, promotions);
        demos += STAT(s, demotions);
        if (op % 4096 == 0 && !check_reads(s, &m, &rng)) {
            return 0;
        }
    }
    REQ(check_reads(s, &m, &rng));
    fprintf(stderr,
            "dist %d: %zu ops, max count %zu, %zu promotions, %zu demotions\n",
            (int)d, ops, max_n, promos, demos);
    REQ(max_n > 2 * 256);
    ark_idset_destroy(s);
    free(batch);
    free(pool);
    free(m.v);
    return 1;
}

/* 10 x 110K = 1.1M operations, validate after every one; each
 * distribution runs twice with different seeds so each case stays short
 * under ASan. */
TEST(differential_d1_ecs_dense) {
    CHECK(differential(D1_ECS, 3000, 110000, 0));
}
TEST(differential_d1_ecs_dense_b) {
    CHECK(differential(D1_ECS, 3000, 110000, 1));
}
TEST(differential_d2_contiguous) {
    CHECK(differential(D2_CONTIG, 3000, 110000, 0));
}
TEST(differential_d2_contiguous_b) {
    CHECK(differential(D2_CONTIG, 3000, 110000, 1));
}
TEST(differential_d3_sparse_random) {
    CHECK(differential(D3_SPARSE, 3000, 110000, 0));
}
TEST(differential_d3_sparse_random_b) {
    CHECK(differential(D3_SPARSE, 3000, 110000, 1));
}
TEST(differential_d4_clustered) {
    CHECK(differential(D4_CLUSTER, 3000, 110000, 0));
}
TEST(differential_d4_clustered_b) {
    CHECK(differential(D4_CLUSTER, 3000, 110000, 1));
}
TEST(differential_d5_flip_adversarial) {
    CHECK(differential(D5_FLIP, 3000, 110000, 0));
}
TEST(differential_d5_flip_adversarial_b) {
    CHECK(differential(D5_FLIP, 3000, 110000, 1));
}

/* ---- promotion and demotion at a group boundary -------------------------- */

TEST(promotion_and_demotion_at_a_group_boundary) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    /* Groups 0-3: 10..1033 (dense; the boundary below lies past them, so
     * the cascades through it run towards the back, and group 0 moves no
     * id across groups); group B = 4: 11000..11255 (dense); group 5:
     * 200000..200254 + 300000. */
    enum { B = 4 };
    for (uint32_t i = 0; i < 256 * B; i++) {
        CHECK_OK(ins(s, 10 + i));
    }
    for (uint32_t i = 0; i < 256; i++) {
        CHECK_OK(ins(s, 11000 + i));
    }
    for (uint32_t i = 0; i < 255; i++) {
        CHECK_OK(ins(s, 200000 + i));
    }
    CHECK_OK(ins(s, 300000));
    CHECK_OK(ark_idset_validate(s));
    CHECK(s->v.groups[B].dense);
    CHECK(!s->v.groups[B + 1].dense);
    /* Removing 11000 pulls 200000 into group B: range > 64K, promote. */
    CHECK_OK(ark_idset_remove(s, 11000));
    CHECK(!HAVE_STATS || STAT(s, promotions) == 1);
    CHECK(!s->v.groups[B].dense);
    CHECK_OK(ark_idset_validate(s));
    /* Flip back and forth: group B's range falls to 255 then rises again.
     * Lazy demotion keeps it sparse until DEMOTE_CREDIT calm touches. */
    size_t promotions = 0, demotions = 0;
    for (int t = 0; t < 2000; t++) {
        CHECK_OK(ins(s, 11000));
        promotions += STAT(s, promotions);
        demotions += STAT(s, demotions);
        CHECK_OK(ark_idset_validate(s));
        CHECK_OK(ark_idset_remove(s, 11000));
        promotions += STAT(s, promotions);
        demotions += STAT(s, demotions);
        CHECK_OK(ark_idset_validate(s));
    }
    /* Group B is calm only on every other touch: never demoted. */
    CHECK_EQ(promotions, 0);
    CHECK_EQ(demotions, 0);
    CHECK(!s->v.groups[B].dense);
    /* Calm touches in a row demote it: insert 11000 and remove at the end. */
    CHECK_OK(ins(s, 11000));
    for (int t = 0; t < 300 && !s->v.groups[B].dense; t++) {
        CHECK_OK(ins(s, 10999 - (uint32_t)t));
        CHECK_OK(ark_idset_validate(s));
        demotions += STAT(s, demotions);
    }
    CHECK(s->v.groups[B].dense);
    CHECK(!HAVE_STATS || demotions == 1);
    /* Now the flips promote again, at most once per DEMOTE_CREDIT. */
    uint32_t lo = ark_idset_at(s, 256 * B); /* group B's first id */
    promotions = 0;
    demotions = 0;
    for (int t = 0; t < 1000; t++) {
        /* remove group B's first id, so group B + 1's far ids arrive */
        CHECK_OK(ark_idset_remove(s, lo));
        promotions += STAT(s, promotions);
        demotions += STAT(s, demotions);
        CHECK_OK(ins(s, lo));
        promotions += STAT(s, promotions);
        demotions += STAT(s, demotions);
        CHECK_OK(ark_idset_validate(s));
    }
    CHECK(promotions <= 1 + 2000 / 256);
    CHECK(demotions <= promotions);
    /* The frame-end sweep demotes at once when the range allows it. */
    uint32_t far[] = {200000, 200001, 300000};
    CHECK_OK(ark_idset_remove_sorted(s, far, 3));
    CHECK_OK(ark_idset_validate(s));
    ark_idset_destroy(s);
}

TEST(remove_sorted_promotes_and_demotes) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    /* 8 dense groups of ids spaced 150 apart (range 38250 each). */
    for (uint32_t i = 0; i < 2048; i++) {
        CHECK_OK(ins(s, i * 150));
    }
    for (size_t k = 0; k < s->v.ngroups; k++) {
        CHECK(s->v.groups[k].dense);
    }
    /* Remove every other id: each group now spans about 76500: sparse. */
    uint32_t *b = malloc(1024 * sizeof(uint32_t));
    for (uint32_t i = 0; i < 1024; i++) {
        b[i] = (2 * i + 1) * 150;
    }
    CHECK_OK(ark_idset_remove_sorted(s, b, 1024));
    CHECK_OK(ark_idset_validate(s));
    CHECK_EQ(ark_idset_count(s), 1024);
    CHECK(!HAVE_STATS || STAT(s, promotions) >= 3);
    for (size_t k = 0; k < s->v.ngroups; k++) {
        CHECK(!s->v.groups[k].dense);
    }
    /* Insert the odd ones back and sweep two, the first and the last, so
     * that every group is rewritten: groups become dense. */
    for (uint32_t i = 0; i < 1024; i++) {
        CHECK_OK(ins(s, b[i]));
    }
    CHECK_OK(ark_idset_validate(s));
    b[1] = b[1023];
    CHECK_OK(ark_idset_remove_sorted(s, b, 2));
    CHECK_OK(ark_idset_validate(s));
    for (size_t k = 0; k < s->v.ngroups; k++) {
        CHECK(s->v.groups[k].dense);
    }
    free(b);
    ark_idset_destroy(s);
}

/* ---- bounded work per operation ------------------------------------------ */

TEST(one_insert_or_remove_moves_at_most_127_plus_groups) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    for (uint32_t i = 0; i < 40000; i++) {
        CHECK_OK(ins(s, 10 + 3 * i));
    }
    size_t ng = s->v.ngroups;
    uint64_t rng = harness_seed();
    size_t worst = 0;
    /* The cascade runs towards the nearer end, and a change to group 0
     * crosses no group, so no operation moves more than 127 ids plus
     * half the groups (and the ids that enter and leave the ends). */
    size_t bound = 127 + ng / 2 + 2;
    /* Every in-group index at the front group and at the middle group,
     * plus random positions. */
    for (size_t t = 0; t < 1400; t++) {
        size_t pos = t < 256   ? t
                     : t < 512 ? (ng / 2) * 256 + t - 256
                               : harness_below(&rng, ark_idset_count(s));
        uint32_t id = ark_idset_at(s, pos);
        CHECK_OK(ark_idset_remove_at(s, pos));
        CHECK(STAT(s, moves) <= bound);
        CHECK(STAT(s, promotions) <= s->v.ngroups);
        worst = STAT(s, moves) > worst ? STAT(s, moves) : worst;
        CHECK_OK(ins(s, id));
        CHECK(STAT(s, moves) <= bound);
        CHECK(STAT(s, promotions) <= s->v.ngroups);
        worst = STAT(s, moves) > worst ? STAT(s, moves) : worst;
    }
    /* Position 127 of the middle group is about the worst case: 127 + a
     * cascade over half the groups. */
    CHECK(!HAVE_STATS || worst >= 127 + ng / 2 - 2);
    CHECK_OK(ark_idset_validate(s));
    /* The flip-adversarial layout: promotions per op stay <= groups. */
    ark_idset_destroy(s);
    CHECK_OK(ark_idset_create(&s, NULL));
    for (uint32_t i = 0; i < 4096; i++) {
        CHECK_OK(ins(s, 1000000 + i * 257));
    }
    for (int t = 0; t < 50; t++) {
        CHECK_OK(ins(s, (uint32_t)t));
        CHECK(STAT(s, moves) <= 127 + s->v.ngroups);
        CHECK(STAT(s, promotions) <= s->v.ngroups);
        CHECK_OK(ark_idset_validate(s));
    }
    ark_idset_destroy(s);
}

/* Ids inserted below the minimum (descending order) and removed from the
 * front (ascending order: the oldest entities first) cross no group: each
 * moves at most one group's shorter side, not one id per group, so n of
 * them cost O(n), not O(n * groups). Also inserts into a full group 0. */
TEST(front_inserts_and_removes_cross_no_group) {
    for (uint32_t gap = 1; gap <= 1000; gap *= 1000) { /* dense, sparse */
        ark_idset *s;
        CHECK_OK(ark_idset_create(&s, NULL));
        const uint32_t n = 40000;
        for (uint32_t i = n; i > 0; i--) {
            CHECK_OK(ins(s, 10 + 2 * i * gap));
            CHECK(STAT(s, moves) <= 1);
            if (i % 4096 == 0) {
                CHECK_OK(ark_idset_validate(s));
            }
        }
        CHECK_OK(ark_idset_validate(s));
        CHECK_EQ(ark_idset_count(s), n);
        CHECK(s->v.ngroups <= n / 256 + 2);
        for (uint32_t i = 0; i < n; i++) {
            CHECK_EQ(ark_idset_at(s, i), 10 + 2 * (i + 1) * gap);
        }
        /* Remove the smallest id until the set is empty. */
        for (uint32_t left = n; left > 0; left--) {
            uint32_t lo = ark_idset_at(s, 0);
            stats_reset(s);
            CHECK_OK(ark_idset_remove(s, lo));
            CHECK(STAT(s, moves) <= 1);
            CHECK(left == 1 || ark_idset_at(s, 0) > lo);
            if (left % 4096 == 0) {
                CHECK_OK(ark_idset_validate(s));
            }
        }
        CHECK_EQ(ark_idset_count(s), 0);
        CHECK_OK(ark_idset_validate(s));
        /* Full groups from group 0 on; then ids between group 0's, at
         * every position of it: a new group 0 takes the first id, so no
         * insert cascades over the groups behind. */
        for (uint32_t i = 0; i < n; i++) {
            CHECK_OK(ins(s, 10 + 2 * i * gap));
        }
        CHECK_EQ(s->v.front, 0);
        for (uint32_t i = 0; i < 128; i++) {
            CHECK_OK(ins(s, 10 + (2 * i + 1) * gap));
            CHECK(STAT(s, moves) <= 127 + 2);
        }
        CHECK_OK(ark_idset_validate(s));
        CHECK_EQ(ark_idset_count(s), n + 128);
        for (uint32_t i = 0; i < 256; i++) {
            CHECK_EQ(ark_idset_at(s, i), 10 + i * gap);
        }
        ark_idset_destroy(s);
    }
}

/* Ids leaving at the front and entering at the back (entities dying
 * oldest first while new ones arrive), then ids entering below every id:
 * a new or emptied group 0 moves a pointer, and the header arrays move
 * O(groups) entries only once the room in front or at the back runs out,
 * about once per 32K operations here. Shifting them at every new or
 * emptied group 0 moved about 2 entries an operation (500 groups every
 * 256 operations); the bound is 1 per 16. */
TEST(front_churn_moves_headers_rarely) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    const uint32_t n = 256 * 500, rounds = 100000;
    for (uint32_t i = 0; i < n; i++) {
        CHECK_OK(ark_idset_insert(s, 1000000 + i));
    }
    size_t moved = 0;
    for (uint32_t r = 0; r < rounds; r++) {
        stats_reset(s);
        CHECK_OK(ark_idset_remove(s, 1000000 + r));
        moved += STAT(s, hdr_moved);
        CHECK_OK(ins(s, 1000000 + n + r));
        moved += STAT(s, hdr_moved);
        if (r % 16384 == 0) {
            CHECK_OK(ark_idset_validate(s));
        }
    }
    CHECK(moved <= 2 * (size_t)rounds / 16);
    moved = 0;
    for (uint32_t i = 0; i < rounds; i++) { /* below every id, descending */
        CHECK_OK(ins(s, 999999 + rounds - i));
        moved += STAT(s, hdr_moved);
        if (i % 16384 == 0) {
            CHECK_OK(ark_idset_validate(s));
        }
    }
    CHECK(moved <= (size_t)rounds / 16);
    CHECK_OK(ark_idset_validate(s));
    CHECK_EQ(ark_idset_count(s), (size_t)n + rounds);
    for (uint32_t i = 0; i < n + rounds; i += 997) {
        CHECK_EQ(ark_idset_at(s, i), 1000000 + i);
    }
    ark_idset_destroy(s);
}

/* A frame-end sweep of the oldest ids (the lifetime of bullets and
 * effects: created in order, expired oldest first) runs from the front:
 * it rewrites the groups up to the batch's last id, not every group
 * behind it, and leaves a front gap. */
TEST(remove_sorted_of_the_oldest_ids_rewrites_only_the_front) {
    for (uint32_t gap = 1; gap <= 1000; gap *= 1000) { /* dense, sparse */
        ark_idset *s;
        CHECK_OK(ark_idset_create(&s, NULL));
        model m = {0};
        uint32_t next = 7, batch[300];
        size_t gaps = 0;
        for (uint32_t i = 0; i < 40000; i++, next += gap) {
            CHECK_EQ(ins(s, next), model_insert(&m, next));
        }
        for (int frame = 0; frame < 300; frame++) {
            size_t k = 1 + (size_t)frame % 300; /* 1..300 ids a frame */
            for (size_t i = 0; i < k; i++, next += gap) {
                CHECK_EQ(ins(s, next), model_insert(&m, next));
            }
            for (size_t i = 0; i < k; i++) { /* the oldest, every 5th kept */
                batch[i] = m.v[i + i / 4];
            }
            model_remove_sorted(&m, batch, k);
            CHECK_OK(ark_idset_remove_sorted(s, batch, k));
            CHECK(!HAVE_STATS || STAT(s, moves) <= k + k / 4 + 2 * 256);
            CHECK_OK(ark_idset_validate(s));
            CHECK_EQ(ark_idset_count(s), m.n);
            CHECK_EQ(ark_idset_at(s, 0), m.v[0]);
            CHECK_EQ(ark_idset_at(s, m.n / 2), m.v[m.n / 2]);
            gaps += s->v.front != 0;
        }
        CHECK(gaps > 0); /* the sweep left a front gap */
        for (size_t i = 0; i < m.n; i++) {
            CHECK_EQ(ark_idset_at(s, i), m.v[i]);
        }
        free(m.v);
        ark_idset_destroy(s);
    }
}

/* ---- allocation failure ---------------------------------------------------
 */

/* A scenario with every kind of allocation: first node, header growth,
 * new groups, promotions from inserts, removes and remove_sorted. Each
 * call that reports ENOMEM must leave the set exactly as it was; the call
 * is then retried (the test allocator fails only once). */
static int snapshot_equal(const ark_idset *s, const uint32_t *snap, size_t n,
                          size_t mem) {
    REQ(ark_idset_validate(s) == ARK_OK);
    REQ(ark_idset_count(s) == n);
    REQ(ark_idset_memory(s) == mem);
    for (size_t i = 0; i < n; i++) {
        REQ(ark_idset_at(s, i) == snap[i]);
    }
    return 1;
}

static int oom_scenario(test_allocator *t, uint64_t fail_at, int *failed) {
    ark_idset *s = NULL;
    test_allocator_fail_at(t, fail_at);
    ark_status st = ark_idset_create(&s, &t->base);
    if (st == ARK_ENOMEM) {
        *failed = 1;
        REQ(s == NULL);
        st = ark_idset_create(&s, &t->base);
    }
    REQ(st == ARK_OK);
    uint32_t *snap = malloc(4096 * sizeof(uint32_t));
    model m = {0};
    uint32_t batch[64];
    uint32_t top = 0;
    for (int op = 0; op < 2800; op++) {
        size_t n = ark_idset_count(s);
        ark_idset_copy(s, 0, snap, n);
        size_t mem = ark_idset_memory(s);
        uint32_t id = 0;
        size_t nb = 0;
        int kind = op < 2200 ? 0 : op % 4;
        if (kind == 0) { /* appends about 257 apart: groups near 64K */
            id = top += 256u + (uint32_t)(op * 7 % 3);
            if (op >= 2200) {
                id = (uint32_t)(op * 7919) % 500000u;
            }
        } else if (kind == 1) { /* front inserts: promotion cascades */
            id = (uint32_t)op;
        } else if (kind == 2) {
            id = m.n ? m.v[(size_t)op * 31 % m.n] : 0;
        } else {
            for (size_t i = 0; i < m.n && nb < 64; i += 2 + (size_t)op % 9) {
                batch[nb++] = m.v[i];
            }
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            if (kind == 0 || kind == 1) {
                st = ins(s, id);
            } else if (kind == 2) {
                st = ark_idset_remove(s, id);
            } else {
                st = ark_idset_remove_sorted(s, batch, nb);
            }
            if (st != ARK_ENOMEM) {
                break;
            }
            *failed = 1;
            if (!snapshot_equal(s, snap, n, mem)) {
                return 0;
            }
        }
        if (kind == 0 || kind == 1) {
            REQ(st == model_insert(&m, id));
        } else if (kind == 2) {
            REQ(st == model_remove(&m, id));
        } else {
            REQ(st == ARK_OK);
            model_remove_sorted(&m, batch, nb);
        }
        REQ(ark_idset_validate(s) == ARK_OK);
        REQ(ark_idset_count(s) == m.n);
    }
    for (size_t i = 0; i < m.n; i++) {
        REQ(ark_idset_at(s, i) == m.v[i]);
    }
    ark_idset_destroy(s);
    free(snap);
    free(m.v);
    return 1;
}

TEST(allocation_failure_for_every_k) {
    test_allocator t;
    test_allocator_init(&t);
    int failed = 0;
    CHECK(oom_scenario(&t, 0, &failed));
    CHECK(!failed);
    uint64_t total = t.attempts;
    fprintf(stderr, "%llu allocations\n", (unsigned long long)total);
    CHECK(total > 8);
    CHECK_EQ(t.live_blocks, 0);
    for (uint64_t k = 1; k <= total; k++) {
        test_allocator_init(&t);
        failed = 0;
        CHECK(oom_scenario(&t, k, &failed));
        CHECK(failed);
        CHECK_EQ(t.live_blocks, 0);
        CHECK_EQ(t.live_bytes, 0);
        CHECK_EQ(t.bad_frees, 0);
    }
}

/* ---- the iterator ------------------------------------------------------ */

/* Build a set holding v[0, n) (sorted, unique) and the model beside it. */
static ark_idset *set_of(const uint32_t *v, size_t n, const ark_allocator *al) {
    ark_idset *s;
    if (ark_idset_create(&s, al) != ARK_OK) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (ark_idset_insert(s, v[i]) != ARK_OK) {
            ark_idset_destroy(s);
            return NULL;
        }
    }
    return s;
}

/* Walk from pos and compare every step with at(). */
static int iter_matches(const ark_idset *s, size_t pos) {
    size_t n = ark_idset_count(s), seen = 0;
    for (ark_idset_iter it = ark_idset_iter_begin(s, pos);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        REQ(it.pos == pos + seen);
        REQ(it.pos < n);
        REQ(it.id == ark_idset_at(s, it.pos));
        seen++;
    }
    REQ(seen == (pos < n ? n - pos : 0));
    return 1;
}

TEST(iterator_matches_at_from_any_start) {
    uint64_t rng = harness_seed();
    dist kinds[] = {D1_ECS, D3_SPARSE, D4_CLUSTER, D5_FLIP};
    size_t sizes[] = {0, 1, 255, 256, 257, 1000, 5000};
    for (size_t d = 0; d < 4; d++) {
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            size_t n = sizes[z];
            uint32_t *pool = make_pool(kinds[d], n + 1, &rng);
            ark_idset *s = set_of(pool, n, NULL);
            CHECK(s != NULL);
            /* A few removes leave heads mid-group (wrapped queues). */
            for (size_t t = 0; t < n / 8; t++) {
                CHECK_OK(ark_idset_remove_at(s, harness_below(&rng, n - t)));
            }
            size_t c = ark_idset_count(s);
            size_t starts[] = {0,     1,     255, 256,   257,
                               c / 2, c - 1, c,   c + 7, SIZE_MAX};
            for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
                CHECK(iter_matches(s, starts[i]));
            }
            for (int t = 0; t < 20 && c > 0; t++) {
                CHECK(iter_matches(s, harness_below(&rng, c)));
            }
            ark_idset_destroy(s);
            free(pool);
        }
    }
}

/* ---- set algebra --------------------------------------------------------- */

enum { OP_AND, OP_OR, OP_ANDNOT };

/* The model: a plain merge of two sorted arrays. */
static size_t model_merge(int op, const uint32_t *a, size_t na,
                          const uint32_t *b, size_t nb, uint32_t *out) {
    size_t i = 0, j = 0, o = 0;
    while (i < na || j < nb) {
        if (j == nb || (i < na && a[i] < b[j])) {
            if (op != OP_AND) {
                out[o++] = a[i];
            }
            i++;
        } else if (i == na || b[j] < a[i]) {
            if (op == OP_OR) {
                out[o++] = b[j];
            }
            j++;
        } else {
            if (op != OP_ANDNOT) {
                out[o++] = a[i];
            }
            i++;
            j++;
        }
    }
    return o;
}

static ark_status run_op(int op, ark_idset *out, const ark_idset *a,
                         const ark_idset *b) {
    return op == OP_AND  ? ark_idset_intersect(out, a, b)
           : op == OP_OR ? ark_idset_union(out, a, b)
                         : ark_idset_difference(out, a, b);
}

/* s holds exactly v[0, n) and is valid. */
static int holds(const ark_idset *s, const uint32_t *v, size_t n) {
    REQ(ark_idset_validate(s) == ARK_OK);
    REQ(ark_idset_count(s) == n);
    for (size_t i = 0; i < n; i++) {
        REQ(ark_idset_at(s, i) == v[i]);
    }
    return 1;
}

/* Pick each universe id into a with probability pa/64, into b with pb/64. */
static size_t pick(const uint32_t *u, size_t nu, unsigned p, uint32_t *out,
                   uint64_t *rng) {
    size_t n = 0;
    for (size_t i = 0; i < nu; i++) {
        if (harness_below(rng, 64) < p) {
            out[n++] = u[i];
        }
    }
    return n;
}

/* Every operation and aliasing form on one pair, against the model. */
static int algebra_pair(const uint32_t *a, size_t na, const uint32_t *b,
                        size_t nb, uint32_t *want) {
    ark_idset *sa = set_of(a, na, NULL), *sb = set_of(b, nb, NULL);
    ark_idset *out = set_of(b, nb / 3, NULL); /* junk to be replaced */
    REQ(sa != NULL && sb != NULL && out != NULL);
    size_t both = model_merge(OP_AND, a, na, b, nb, want);
    REQ(ark_idset_intersect_count(sa, sb) == both);
    REQ(ark_idset_intersect_count(sb, sa) == both);
    REQ(ark_idset_intersect_count(sa, sa) == na);
    for (int op = OP_AND; op <= OP_ANDNOT; op++) {
        size_t n = model_merge(op, a, na, b, nb, want);
        REQ(run_op(op, out, sa, sb) == ARK_OK);
        REQ(holds(out, want, n));
        /* out == a, then out == b: rebuild the input each time. */
        ark_idset *ca = set_of(a, na, NULL), *cb = set_of(b, nb, NULL);
        REQ(ca != NULL && cb != NULL);
        REQ(run_op(op, ca, ca, sb) == ARK_OK);
        REQ(holds(ca, want, n));
        REQ(run_op(op, cb, sa, cb) == ARK_OK);
        REQ(holds(cb, want, n));
        /* a == b: the set itself, itself, or nothing. */
        REQ(run_op(op, ca, sa, sa) == ARK_OK);
        REQ(holds(ca, a, op == OP_ANDNOT ? 0 : na));
        REQ(run_op(op, sa, sa, sa) == ARK_OK); /* all three the same */
        REQ(holds(sa, a, op == OP_ANDNOT ? 0 : na));
        ark_idset_destroy(sa);
        sa = set_of(a, na, NULL);
        REQ(sa != NULL);
        ark_idset_destroy(ca);
        ark_idset_destroy(cb);
    }
    ark_idset_destroy(sa);
    ark_idset_destroy(sb);
    ark_idset_destroy(out);
    return 1;
}

/* A universe of the distribution, then pairs at several densities and
 * size ratios (1:1 merges; 1:64 and 1:1000 gallop). */
static int algebra_dist(dist d, size_t nu, uint64_t *rng) {
    uint32_t *u = make_pool(d, nu, rng);
    uint32_t *a = malloc(nu * sizeof(uint32_t));
    uint32_t *b = malloc(nu * sizeof(uint32_t));
    uint32_t *want = malloc(2 * nu * sizeof(uint32_t));
    unsigned probs[][2] = {{32, 32}, {63, 10}, {1, 64}, {64, 1},
                           {0, 40},  {40, 0},  {0, 0},  {64, 64}};
    for (size_t t = 0; t < sizeof probs / sizeof probs[0]; t++) {
        size_t na = pick(u, nu, probs[t][0], a, rng);
        size_t nb = pick(u, nu, probs[t][1], b, rng);
        if (!algebra_pair(a, na, b, nb, want)) {
            fprintf(stderr, "dist %d, |a| %zu, |b| %zu\n", (int)d, na, nb);
            return 0;
        }
    }
    /* One tiny side, one huge: galloping from either side. */
    size_t na = pick(u, nu, 64, a, rng);
    size_t nb = 0;
    for (size_t i = 0; i < nu; i += 1 + harness_below(rng, 997)) {
        b[nb++] = u[i] + (harness_below(rng, 2) ? 0 : 1);
        if (nb > 1 && b[nb - 1] <= b[nb - 2]) {
            nb--;
        }
    }
    REQ(algebra_pair(a, na, b, nb, want));
    REQ(algebra_pair(b, nb, a, na, want));
    free(u);
    free(a);
    free(b);
    free(want);
    return 1;
}

TEST(set_algebra_dense_against_a_merge_model) {
    uint64_t rng = harness_seed();
    CHECK(algebra_dist(D1_ECS, 6000, &rng));
    CHECK(algebra_dist(D2_CONTIG, 3000, &rng));
}

TEST(set_algebra_sparse_against_a_merge_model) {
    uint64_t rng = harness_seed() ^ 1;
    CHECK(algebra_dist(D3_SPARSE, 6000, &rng));
}

TEST(set_algebra_mixed_against_a_merge_model) {
    uint64_t rng = harness_seed() ^ 2;
    CHECK(algebra_dist(D4_CLUSTER, 8000, &rng));
    CHECK(algebra_dist(D5_FLIP, 3000, &rng));
}

TEST(set_algebra_of_empty_sets) {
    ark_idset *e, *f, *x;
    CHECK_OK(ark_idset_create(&e, NULL));
    CHECK_OK(ark_idset_create(&f, NULL));
    uint32_t v[] = {0, 5, UINT32_MAX};
    x = set_of(v, 3, NULL);
    CHECK(x != NULL);
    CHECK_EQ(ark_idset_intersect_count(e, f), 0);
    CHECK_EQ(ark_idset_intersect_count(e, x), 0);
    CHECK_OK(ark_idset_union(e, e, f));
    CHECK_EQ(ark_idset_count(e), 0);
    CHECK_OK(ark_idset_union(e, f, x));
    CHECK(holds(e, v, 3));
    CHECK_OK(ark_idset_difference(e, e, x));
    CHECK(holds(e, v, 0));
    CHECK_OK(ark_idset_difference(f, x, e));
    CHECK(holds(f, v, 3));
    CHECK_OK(ark_idset_intersect(f, x, e));
    CHECK(holds(f, v, 0));
    CHECK_OK(ark_idset_validate(e));
    ark_idset_destroy(e);
    ark_idset_destroy(f);
    ark_idset_destroy(x);
}

/* How out and the inputs alias in algebra_oom. */
enum { ALIAS_NONE, ALIAS_OUT_A, ALIAS_OUT_B, ALIAS_ALL };

/* Fail the k-th allocation of each operation for every k: ENOMEM leaves
 * out exactly as it was (ids and memory), and nothing leaks. */
static int algebra_oom(int op, const uint32_t *a, size_t na, const uint32_t *b,
                       size_t nb, int alias) {
    test_allocator t;
    uint32_t *snap = malloc((na + nb + 1) * sizeof(uint32_t));
    for (uint64_t k = 1;; k++) {
        test_allocator_init(&t);
        ark_idset *sa = set_of(a, na, &t.base), *sb = set_of(b, nb, &t.base);
        REQ(sa != NULL && sb != NULL);
        ark_idset *out = alias == ALIAS_NONE    ? set_of(b, nb / 2, &t.base)
                         : alias == ALIAS_OUT_B ? sb
                                                : sa;
        REQ(out != NULL);
        size_t n = ark_idset_copy(out, 0, snap, na + nb);
        size_t mem = ark_idset_memory(out);
        test_allocator_fail_at(&t, k);
        ark_status st = run_op(op, out, sa, alias == ALIAS_ALL ? sa : sb);
        if (st == ARK_OK) {
            REQ(t.failures == 0); /* every k below made it fail */
            REQ(k > 1 || op == OP_ANDNOT || na + nb == 0);
            ark_idset_destroy(sa);
            ark_idset_destroy(sb);
            if (alias == ALIAS_NONE) {
                ark_idset_destroy(out);
            }
            REQ(t.live_blocks == 0 && t.bad_frees == 0);
            break;
        }
        REQ(st == ARK_ENOMEM);
        REQ(snapshot_equal(out, snap, n, mem));
        ark_idset_destroy(sa);
        ark_idset_destroy(sb);
        if (alias == ALIAS_NONE) {
            ark_idset_destroy(out);
        }
        REQ(t.live_blocks == 0 && t.live_bytes == 0 && t.bad_frees == 0);
    }
    free(snap);
    return 1;
}

TEST(set_algebra_allocation_failure_for_every_k) {
    uint64_t rng = harness_seed();
    uint32_t *u = make_pool(D4_CLUSTER, 4000, &rng);
    uint32_t *a = malloc(4000 * sizeof(uint32_t));
    uint32_t *b = malloc(4000 * sizeof(uint32_t));
    size_t na = pick(u, 4000, 48, a, &rng);
    size_t nb = pick(u, 4000, 40, b, &rng);
    for (int op = OP_AND; op <= OP_ANDNOT; op++) {
        for (int alias = ALIAS_NONE; alias <= ALIAS_ALL; alias++) {
            CHECK(algebra_oom(op, a, na, b, nb, alias));
            CHECK(algebra_oom(op, a, na / 100, b, nb, alias)); /* galloping */
            CHECK(algebra_oom(op, a, na, b, nb / 100, alias));
        }
    }
    free(u);
    free(a);
    free(b);
}

/* ---- the cascade runs towards the nearer end ----------------------------- */

TEST(cascade_runs_towards_the_nearer_end) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    model m = {0};
    for (uint32_t i = 0; i < 40000; i++) {
        CHECK_OK(ins(s, 10 + 4 * i));
        CHECK_OK(model_insert(&m, 10 + 4 * i));
    }
    size_t ng = s->v.ngroups;
    CHECK_EQ(s->v.front, 0);
    /* Group 5, position 3: the front is 5 groups away, the back 150. */
    uint32_t id = ark_idset_at(s, 5 * 256 + 3) + 1;
    CHECK_OK(ins(s, id));
    CHECK_OK(model_insert(&m, id));
    CHECK(!HAVE_STATS || STAT(s, moves) <= 3 + 5 + 1);
    CHECK_EQ(s->v.ngroups, ng + 1); /* group 0 was full: a new group 0 */
    CHECK_EQ(s->v.front, 255);
    CHECK_OK(ark_idset_validate(s));
    uint64_t rng = harness_seed();
    CHECK(check_reads(s, &m, &rng));
    /* Removing it again drops the one-id group 0. */
    CHECK_OK(ark_idset_remove(s, id));
    CHECK_OK(model_remove(&m, id));
    CHECK(!HAVE_STATS || STAT(s, moves) <= 3 + 5 + 1);
    CHECK_EQ(s->v.ngroups, ng);
    CHECK_EQ(s->v.front, 0);
    CHECK_OK(ark_idset_validate(s));
    CHECK(check_reads(s, &m, &rng));
    /* Many front-half removes and inserts: the gap moves both ways, every
     * step checked against the model. */
    for (uint64_t t = 0; t < harness_scaled(3000); t++) {
        size_t p = harness_below(&rng, m.n / 3);
        if (t % 2) {
            uint32_t v = m.v[p];
            CHECK_OK(ark_idset_remove_at(s, p));
            model_remove_at(&m, p);
            CHECK(ark_idset_find(s, v) == ARK_NOT_FOUND);
        } else {
            uint32_t v = m.v[p] + 1 + (uint32_t)harness_below(&rng, 3);
            CHECK_STATUS(ins(s, v), model_insert(&m, v));
        }
        CHECK(!HAVE_STATS || STAT(s, moves) <= 127 + s->v.ngroups + 1);
        CHECK_OK(ark_idset_validate(s));
        if (t % 500 == 0) {
            CHECK(check_reads(s, &m, &rng));
        }
    }
    CHECK(check_reads(s, &m, &rng));
    ark_idset_destroy(s);
    free(m.v);
}

/* Random inserts, then random removes, of ids in a 100K-wide range, the
 * set validated after every call. An even group demoted while a cascade
 * walked towards the front used to leave its dense odd buddy, already
 * walked, in a node of its own (validate: ARK_ECORRUPT; about one run in
 * three of 4,000 inserts). */
TEST(random_ids_in_a_narrow_range_keep_dense_buddies_together) {
    static const uint32_t bases[] = {0, 1u << 31, UINT32_MAX - 100000};
    uint64_t rng = harness_seed();
    for (unsigned run = 0; run < 9; run++) {
        ark_idset *s;
        CHECK_OK(ark_idset_create(&s, NULL));
        model m = {0};
        uint32_t base = bases[run % 3];
        for (int i = 0; i < 4000; i++) {
            uint32_t id = base + (uint32_t)harness_below(&rng, 100000);
            CHECK_STATUS(ark_idset_insert(s, id), model_insert(&m, id));
            CHECK_OK(ark_idset_validate(s));
        }
        while (m.n > 0) {
            uint32_t id = m.v[harness_below(&rng, m.n)];
            CHECK_OK(ark_idset_remove(s, id));
            CHECK_OK(model_remove(&m, id));
            CHECK_OK(ark_idset_validate(s));
        }
        CHECK_EQ(ark_idset_count(s), 0);
        ark_idset_destroy(s);
        free(m.v);
    }
}

/* A front-side insert that must prepend a group when the header arrays
 * are exactly full: the arrays move during the call (under ASan, a stale
 * header pointer is caught here). */
TEST(front_insert_grows_the_header_arrays) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    model m = {0};
    for (uint32_t i = 0; i < 8 * 256; i++) {
        CHECK_OK(ins(s, 100 + 3 * i));
        CHECK_OK(model_insert(&m, 100 + 3 * i));
    }
    CHECK_EQ(s->v.ngroups, 8);
    CHECK_EQ(s->cap, 8);
    uint32_t id = ark_idset_at(s, 2 * 256 + 1) + 1; /* group 2, index 2 */
    CHECK_OK(ins(s, id));
    CHECK_OK(model_insert(&m, id));
    CHECK_EQ(s->v.ngroups, 9);
    CHECK_EQ(s->v.front, 255);
    CHECK_OK(ark_idset_validate(s));
    uint64_t rng = harness_seed();
    CHECK(check_reads(s, &m, &rng));
    ark_idset_destroy(s);
    free(m.v);
}

/* ---- node slabs ------------------------------------------------------- */

/* A large sparse set takes its nodes in multi-node slabs (fewer allocator
 * calls than nodes); removing ids gives whole slabs back, and at the end
 * at most FREE_KEEP + SLAB_MAX nodes stay. Against the model throughout. */
TEST(nodes_come_in_slabs_and_go_back) {
    test_allocator t;
    test_allocator_init(&t);
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, &t.base));
    model m = {0};
    uint64_t rng = harness_seed();
    uint32_t id = 7;
    for (int i = 0; i < 300 * 256; i++) { /* 300 sparse groups */
        id += 300 + (uint32_t)harness_below(&rng, 1000);
        CHECK_OK(ins(s, id));
        CHECK_OK(model_insert(&m, id));
    }
    CHECK_OK(ark_idset_validate(s));
    uint32_t biggest = 0;
    for (size_t i = 0; i < s->nslabs; i++) {
        biggest = s->slabs[i].nodes > biggest ? s->slabs[i].nodes : biggest;
    }
    CHECK(biggest >= 4);
    CHECK(s->nslabs < s->nnodes);
    CHECK(t.allocs < s->nnodes);
    CHECK(check_reads(s, &m, &rng));
    /* Random removes and inserts: promotions, drops, slab reuse. */
    for (int op = 0; op < 20000; op++) {
        uint32_t x = m.v[harness_below(&rng, m.n)];
        if (op % 3 == 0) {
            x = (uint32_t)harness_below(&rng, id);
            CHECK_EQ(ins(s, x), model_insert(&m, x));
        } else {
            CHECK_EQ(ark_idset_remove(s, x), model_remove(&m, x));
        }
        if (op % 1024 == 0) {
            CHECK_OK(ark_idset_validate(s));
        }
    }
    CHECK_OK(ark_idset_validate(s));
    CHECK(check_reads(s, &m, &rng));
    /* Remove from the back in batches: whole slabs go back. */
    while (m.n > 0) {
        size_t k = m.n < 5000 ? m.n : 5000;
        uint32_t *batch = malloc(k * sizeof(uint32_t));
        memcpy(batch, m.v + m.n - k, k * sizeof(uint32_t));
        CHECK_OK(ark_idset_remove_sorted(s, batch, k));
        model_remove_sorted(&m, batch, k);
        free(batch);
        CHECK_OK(ark_idset_validate(s));
        CHECK_EQ(ark_idset_count(s), m.n);
    }
    CHECK(s->nnodes <= FREE_KEEP + SLAB_MAX);
    CHECK_EQ(t.live_bytes, ark_idset_memory(s));
    ark_idset_destroy(s);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 0);
    free(m.v);
}

/* A reservation that adds a slab, grows the slab array and grows the
 * header arrays: failing any one of the three allocations leaves the set
 * as it was (memory() included), and nothing leaks. */
TEST(slab_reservation_rolls_back_on_failure) {
    test_allocator t;
    test_allocator_init(&t);
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, &t.base));
    CHECK_OK(ins(s, 5));
    int failures[4] = {0};
    for (int round = 0; round < 6; round++) {
        while (s->nslabs < s->slabcap) { /* fill the slab array */
            CHECK_OK(ark__idset_acquire(s, s->nfree + 1, s->v.ngroups));
        }
        for (uint64_t k = 1; k <= 3; k++) {
            size_t mem = ark_idset_memory(s), nfree = s->nfree;
            size_t nslabs = s->nslabs, cap = s->cap;
            test_allocator_fail_at(&t, k);
            ark_status st = ark__idset_acquire(s, nfree + 1, cap + 1);
            test_allocator_fail_at(&t, 0);
            CHECK_EQ(st, ARK_ENOMEM);
            failures[k]++;
            CHECK_EQ(ark_idset_memory(s), mem);
            CHECK_EQ(s->nfree, nfree);
            CHECK_EQ(s->nslabs, nslabs);
            CHECK_EQ(s->cap, cap);
            CHECK_EQ(t.live_bytes, mem);
            CHECK_OK(ark_idset_validate(s));
        }
        CHECK_OK(ark__idset_acquire(s, s->nfree + 1, s->cap + 1));
        CHECK_OK(ark_idset_validate(s));
    }
    CHECK_EQ(failures[3], 6);
    ark__idset_node_trim(s);
    CHECK_OK(ark_idset_validate(s));
    CHECK_EQ(ark_idset_count(s), 1);
    CHECK_EQ(ark_idset_at(s, 0), 5);
    ark_idset_destroy(s);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 0);
}

/* ---- appends that start a group ----------------------------------------- */

/* After a sparse group, an append more than 257 above the maximum starts
 * a sparse group (no rebase, no promotion); the inline append counts the
 * demotion credit, so a group created sparse whose ids turn out narrow is
 * demoted by the append that fills it; after a dense group, new groups
 * start dense. */
TEST(appends_after_wide_gaps_start_sparse_groups) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    model m = {0};
    uint32_t id = 100;
    for (int i = 0; i < 256; i++, id += 1000) {
        CHECK_OK(ins(s, id));
        CHECK_OK(model_insert(&m, id));
    }
    CHECK(!s->v.groups[0].dense);
    id += 5000;
    CHECK_OK(ins(s, id)); /* group 1 starts sparse */
    CHECK_OK(model_insert(&m, id));
    CHECK_EQ(s->v.ngroups, 2);
    CHECK(!s->v.groups[1].dense);
    CHECK_EQ(STAT(s, promotions), 0);
    CHECK_OK(ark_idset_validate(s));
    for (int i = 1; i < 256; i++) { /* narrow: 255 more touches */
        CHECK(!s->v.groups[1].dense);
        CHECK_OK(ins(s, ++id));
        CHECK_OK(model_insert(&m, id));
    }
    CHECK(s->v.groups[1].dense); /* demoted by the append that filled it */
    CHECK_OK(ark_idset_validate(s));
    id += 5000;
    CHECK_OK(ins(s, id)); /* after a dense group: dense */
    CHECK_OK(model_insert(&m, id));
    CHECK(s->v.groups[2].dense);
    for (int i = 1; i < 256; i++) { /* wide: promoted on the way */
        id += 700;
        CHECK_OK(ins(s, id));
        CHECK_OK(model_insert(&m, id));
    }
    CHECK(!s->v.groups[2].dense);
    id += 258; /* just above the predicting gap */
    CHECK_OK(ins(s, id));
    CHECK_OK(model_insert(&m, id));
    CHECK(!s->v.groups[3].dense);
    for (int i = 1; i < 200; i++) { /* wide again: the credit resets */
        id += 1 + (uint32_t)(i % 2) * 600;
        CHECK_OK(ins(s, id));
        CHECK_OK(model_insert(&m, id));
    }
    CHECK(!s->v.groups[3].dense);
    CHECK(s->v.groups[3].credit < DEMOTE_CREDIT);
    CHECK_OK(ark_idset_validate(s));
    uint64_t rng = harness_seed();
    CHECK(check_reads(s, &m, &rng));
    ark_idset_destroy(s);
    free(m.v);
}

/* Cascades over more than PREFETCH_MIN_GROUPS mostly sparse groups, both
 * ways (the walks that prefetch groups ahead, down to group 1), against
 * the model; under ASan this also checks the prefetch reads headers only
 * inside the array. */
TEST(long_sparse_cascades_both_ways) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    model m = {0};
    uint64_t rng = harness_seed();
    uint32_t id = 1;
    for (int i = 0; i < 1100 * 256; i++) {
        id += 1000 + (uint32_t)harness_below(&rng, 4000);
        CHECK_OK(ins(s, id));
        CHECK_OK(model_insert(&m, id));
    }
    CHECK(s->v.ngroups >= 1100);
    for (int op = 0; op < 400; op++) {
        /* positions near both ends and in the middle */
        size_t p = op % 4 == 0   ? harness_below(&rng, 600)
                   : op % 4 == 1 ? m.n - 1 - harness_below(&rng, 600)
                                 : harness_below(&rng, m.n);
        uint32_t x = m.v[p] + 1;
        if (op % 2 == 0) {
            CHECK_EQ(ins(s, x), model_insert(&m, x));
        } else {
            CHECK_EQ(ark_idset_remove(s, m.v[p]), model_remove(&m, m.v[p]));
        }
    }
    CHECK_OK(ark_idset_validate(s));
    CHECK(check_reads(s, &m, &rng));
    ark_idset_destroy(s);
    free(m.v);
}

/* A sparse group without demotion credit is wide (validate checks it; the
 * inline append relies on it). A remove running towards the front takes
 * group 0's last id without a step on group 0; when that narrows group 0,
 * its credit must count the touch. */
TEST(front_remove_narrowing_group_zero_counts_credit) {
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    model m = {0};
    for (uint32_t i = 0; i < 255; i++) { /* group 0: narrow ids... */
        CHECK_OK(ins(s, 1000 + i));
        CHECK_OK(model_insert(&m, 1000 + i));
    }
    CHECK_OK(ins(s, 200000)); /* ...and one far away: promoted, wide */
    CHECK_OK(model_insert(&m, 200000));
    CHECK(!s->v.groups[0].dense);
    CHECK_EQ(s->v.groups[0].credit, 0);
    for (uint32_t i = 0; i < 5 * 256; i++) { /* groups 1..5, sparse */
        uint32_t id = 300000 + i * 1000;
        CHECK_OK(ins(s, id)); /* appends on wide groups: credit stays 0 */
        CHECK_OK(model_insert(&m, id));
    }
    CHECK_EQ(s->v.groups[2].credit, 0);
    CHECK_OK(ark_idset_validate(s));
    /* Group 1's first id: the cascade runs towards the front. */
    CHECK_OK(ark_idset_remove(s, 300000));
    CHECK_OK(model_remove(&m, 300000));
    CHECK_EQ(s->v.front, 1);
    CHECK(!s->v.groups[0].dense);
    CHECK_EQ(s->v.groups[0].credit, 1); /* now 1000..1254 */
    CHECK_OK(ark_idset_validate(s));
    uint64_t rng = harness_seed();
    CHECK(check_reads(s, &m, &rng));
    ark_idset_destroy(s);
    free(m.v);
}
