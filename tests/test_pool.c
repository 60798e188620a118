/* SPDX-License-Identifier: MIT */
/*
 * test_pool.c - ark_pool's storage: elements, addresses, iteration,
 * reservation, a model test and allocation-failure injection. The handle
 * rules it shares with ark_table (statuses, layouts, reuse, retirement,
 * forged handles, hooks, sealing) are tested once in test_handles.c.
 */
#include "ark/ark.h"
#include "harness.h"
#include "pool_internal.h"

#include <stdlib.h>

typedef struct item {
    uint64_t value;
    uint64_t salt;
} item;

static ark_pool *make_pool(const ark_pool_config *cfg) {
    ark_pool *p = NULL;
    if (ark_pool_create(&p, cfg) != ARK_OK) {
        return NULL;
    }
    return p;
}

/* Count on_remove calls per element value (values are small ids). */
typedef struct hook_log {
    uint32_t calls[4096];
    uint64_t total;
} hook_log;

static void log_remove(void *elem, ark_handle h, void *user) {
    hook_log *log = user;
    (void)h;
    const item *it = elem;
    log->total++;
    if (it->value < 4096) {
        log->calls[it->value]++;
    }
}

/* A pool of items whose on_remove hook counts into a fresh log (freed by
 * the caller); NULL if either could not be made. */
static ark_pool *make_logged_pool(hook_log **log) {
    *log = calloc(1, sizeof **log);
    if (*log == NULL) {
        return NULL;
    }
    ark_pool_config cfg = {.elem_size = sizeof(item),
                           .elem_align = 8,
                           .on_remove = log_remove,
                           .user = *log};
    ark_pool *p = make_pool(&cfg);
    if (p == NULL) {
        free(*log);
    }
    return p;
}

TEST(create_rejects_bad_configs) {
    ark_pool *p = (ark_pool *)(uintptr_t)1;
    ark_pool_config cfg = {.elem_size = 0};
    CHECK_STATUS(ark_pool_create(&p, &cfg), ARK_EINVAL);
    CHECK(p == (ark_pool *)(uintptr_t)1); /* *out untouched on failure */
    cfg = (ark_pool_config){.elem_size = 8, .elem_align = 3};
    CHECK_STATUS(ark_pool_create(&p, &cfg), ARK_EINVAL);
    /* Handle layouts: test_handles.c, config_edges_give_einval. */
    ark_allocator half = {.alloc = NULL, .free = NULL, .ctx = NULL};
    cfg = (ark_pool_config){.elem_size = 8, .allocator = &half};
    CHECK_STATUS(ark_pool_create(&p, &cfg), ARK_EINVAL);
    cfg = (ark_pool_config){.elem_size = 8};
    CHECK_OK(ark_pool_create(&p, &cfg));
    CHECK_EQ(ark_pool_count(p), 0);
    ark_pool_destroy(p);
    ark_pool_destroy(NULL);
}

TEST(insert_get_remove_roundtrip) {
    ark_pool_config cfg = {.elem_size = sizeof(item), .elem_align = 8};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    ark_handle h[100];
    for (uint64_t i = 0; i < 100; i++) {
        item it = {i, ~i};
        CHECK_OK(ark_pool_insert(p, &it, &h[i]));
        CHECK(h[i] != ARK_NULL_HANDLE);
    }
    CHECK_EQ(ark_pool_count(p), 100);
    for (uint64_t i = 0; i < 100; i++) {
        item *it = ark_pool_get(p, h[i]);
        CHECK(it != NULL);
        CHECK_EQ(it->value, i);
        CHECK_EQ(it->salt, ~i);
        CHECK_EQ((uintptr_t)it % 8, 0);
        CHECK_OK(ark_pool_check(p, h[i]));
        CHECK_EQ(ark_pool_handle_of(p, it), h[i]);
    }
    CHECK_OK(ark_pool_remove(p, h[7]));
    CHECK(ark_pool_get(p, h[7]) == NULL);
    CHECK_STATUS(ark_pool_check(p, h[7]), ARK_ESTALE);
    CHECK_STATUS(ark_pool_remove(p, h[7]), ARK_ESTALE);
    CHECK_EQ(ark_pool_count(p), 99);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
}

/* Fill elements of sz bytes, element k with bytes (k * 31 + b) & 255, and
 * check every one of them afterwards: a copy that wrote outside its own
 * element would have overwritten a neighbour. */
static void fill_and_check(ark_pool *p, size_t sz, ark_handle *h, size_t n) {
    unsigned char src[96];
    for (size_t k = 0; k < n; k++) {
        for (size_t b = 0; b < sizeof src; b++) {
            src[b] = (unsigned char)(k * 31 + b);
        }
        CHECK_OK(ark_pool_insert(p, src, &h[k]));
    }
    for (size_t k = 0; k < n; k++) {
        const unsigned char *e = ark_pool_get(p, h[k]);
        CHECK(e != NULL);
        for (size_t b = 0; b < sz; b++) {
            CHECK_EQ(e[b], (unsigned char)(k * 31 + b));
        }
    }
}

/* The inline insert copies elements of up to 64 bytes with fixed moves
 * chosen by the size (whole words, or wide moves for other sizes), larger
 * ones with memcpy: every size from 1 to 80, into fresh slots and into
 * slots reused from the queue. */
TEST(insert_copies_every_element_size) {
    enum { N = 2 * ARK_REUSE_DELAY + 3 };
    ark_handle h[N];
    for (size_t sz = 1; sz <= 80; sz++) {
        ark_pool_config cfg = {.elem_size = sz, .elem_align = 1};
        ark_pool *p = make_pool(&cfg);
        CHECK(p != NULL);
        fill_and_check(p, sz, h, N);
        for (size_t k = 0; k < N; k++) {
            CHECK_OK(ark_pool_remove(p, h[k]));
        }
        fill_and_check(p, sz, h, N); /* half of them reused slots */
        CHECK_OK(ark_pool_validate(p));
        ark_pool_destroy(p);
    }
}

TEST(alloc_returns_zeroed_aligned_slots) {
    ark_pool_config cfg = {.elem_size = 24, .elem_align = 32};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    ark_handle h, h2;
    unsigned char *e = ark_pool_alloc(p, &h);
    CHECK(e != NULL);
    CHECK_EQ((uintptr_t)e % 32, 0);
    for (int i = 0; i < 24; i++) {
        CHECK_EQ(e[i], 0);
    }
    memset(e, 0xab, 24);
    /* Recycle the slot (after the reuse delay) and check it is zeroed. */
    CHECK_OK(ark_pool_remove(p, h));
    for (int i = 0; i < 2 * ARK_REUSE_DELAY; i++) {
        unsigned char *f = ark_pool_alloc(p, &h2);
        CHECK(f != NULL);
        for (int k = 0; k < 24; k++) {
            CHECK_EQ(f[k], 0);
        }
        CHECK_EQ((uintptr_t)f % 32, 0);
        memset(f, 0xcd, 24);
        CHECK_OK(ark_pool_remove(p, h2));
    }
    CHECK(ark_pool_alloc(p, NULL) != NULL); /* out may be NULL */
    CHECK_EQ(ark_pool_count(p), 1);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
}

/* insert copies elements of up to 64 bytes with inline moves (a 4-byte
 * word at a time when the size is a multiple of 4, overlapping moves
 * otherwise) and larger ones with memcpy; alloc zeroes the same ways.
 * Every size from 1 to 80, fresh and reused slots, each byte distinct,
 * and neighbours untouched. */
TEST(insert_and_alloc_copy_every_element_size) {
    unsigned char src[80], zero[80] = {0};
    for (size_t n = 1; n <= sizeof src; n++) {
        ark_pool_config cfg = {.elem_size = n, .elem_align = 1};
        ark_pool *p = make_pool(&cfg);
        CHECK(p != NULL);
        ark_handle h[3 * ARK_REUSE_DELAY];
        for (size_t k = 0; k < 3 * ARK_REUSE_DELAY; k++) {
            for (size_t b = 0; b < n; b++) {
                src[b] = (unsigned char)(k * 31 + b + 1);
            }
            if (k % 3 == 2) {
                unsigned char *e = ark_pool_alloc(p, &h[k]);
                CHECK(e != NULL);
                CHECK(memcmp(e, zero, n) == 0);
                memcpy(e, src, n);
            } else {
                CHECK_OK(ark_pool_insert(p, src, &h[k]));
            }
            if (k == ARK_REUSE_DELAY + 8) { /* later slots are reused */
                for (size_t r = 0; r <= ARK_REUSE_DELAY; r++) {
                    CHECK_OK(ark_pool_remove(p, h[r]));
                    h[r] = ARK_NULL_HANDLE;
                }
            }
        }
        for (size_t k = 0; k < 3 * ARK_REUSE_DELAY; k++) {
            const unsigned char *e = ark_pool_get(p, h[k]);
            if (h[k] == ARK_NULL_HANDLE) {
                continue;
            }
            CHECK(e != NULL);
            for (size_t b = 0; b < n; b++) {
                CHECK_EQ(e[b], (unsigned char)(k * 31 + b + 1));
            }
        }
        CHECK_OK(ark_pool_validate(p));
        ark_pool_destroy(p);
    }
}

TEST(addresses_are_stable_across_growth) {
    ark_pool_config cfg = {.elem_size = sizeof(item), .elem_align = 8};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    ark_handle first;
    item *e = ark_pool_alloc(p, &first);
    CHECK(e != NULL);
    e->value = 99;
    for (int i = 0; i < 300000; i++) {
        CHECK(ark_pool_alloc(p, NULL) != NULL);
    }
    CHECK(ark_pool_get(p, first) == e);
    CHECK_EQ(e->value, 99);
    ark_pool_destroy(p);
}

TEST(remove_later_keeps_memory_until_flush) {
    hook_log *log;
    ark_pool *p = make_logged_pool(&log);
    CHECK(p != NULL);
    ark_handle h[10];
    item *e[10];
    for (uint64_t i = 0; i < 10; i++) {
        item it = {i, 1000 + i};
        CHECK_OK(ark_pool_insert(p, &it, &h[i]));
        e[i] = ark_pool_get(p, h[i]);
    }
    CHECK_OK(ark_pool_remove_later(p, h[2]));
    CHECK_OK(ark_pool_remove_later(p, h[5]));
    CHECK_STATUS(ark_pool_remove_later(p, h[5]), ARK_ESTALE);
    CHECK_STATUS(ark_pool_remove(p, h[5]), ARK_ESTALE);
    CHECK(ark_pool_get(p, h[2]) == NULL);
    CHECK_STATUS(ark_pool_check(p, h[2]), ARK_ESTALE);
    CHECK_EQ(ark_pool_count(p), 8);
    CHECK_EQ(log->total, 0);
    /* Still readable and not handed out again before the flush. */
    for (int i = 0; i < 3 * ARK_REUSE_DELAY; i++) {
        CHECK(ark_pool_alloc(p, NULL) != NULL);
    }
    CHECK_EQ(e[2]->salt, 1002);
    CHECK_EQ(e[5]->salt, 1005);
    size_t seen = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        CHECK(it.handle != h[2] && it.handle != h[5]);
        seen++;
    }
    CHECK_EQ(seen, ark_pool_count(p));
    CHECK_OK(ark_pool_validate(p));
    CHECK_EQ(ark_pool_flush(p), 2);
    CHECK_EQ(log->total, 2);
    CHECK_EQ(log->calls[2], 1);
    CHECK_EQ(log->calls[5], 1);
    CHECK_EQ(ark_pool_flush(p), 0);
    CHECK_EQ(log->total, 2);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p); /* no hooks */
    CHECK_EQ(log->total, 2);
    free(log);
}

TEST(clear_runs_hooks_once_and_stales_handles) {
    hook_log *log;
    ark_pool *p = make_logged_pool(&log);
    CHECK(p != NULL);
    ark_handle h[200];
    for (uint64_t i = 0; i < 200; i++) {
        item it = {i, 0};
        CHECK_OK(ark_pool_insert(p, &it, &h[i]));
    }
    CHECK_OK(ark_pool_remove(p, h[0]));
    CHECK_OK(ark_pool_remove_later(p, h[1]));
    ark_pool_clear(p, true);
    CHECK_EQ(ark_pool_count(p), 0);
    CHECK_EQ(log->total, 200);
    for (int i = 0; i < 200; i++) {
        CHECK_EQ(log->calls[i], 1);
        CHECK(ark_pool_get(p, h[i]) == NULL);
    }
    ark_pool_iter it = ark_pool_iter_begin(p);
    CHECK(!ark_pool_iter_valid(&it) && it.elem == NULL);
    CHECK_OK(ark_pool_validate(p));
    /* clear(false) runs nothing. */
    for (uint64_t i = 0; i < 50; i++) {
        item x = {i, 0};
        CHECK_OK(ark_pool_insert(p, &x, &h[i]));
    }
    CHECK_OK(ark_pool_remove_later(p, h[3]));
    ark_pool_clear(p, false);
    CHECK_EQ(log->total, 200);
    CHECK_EQ(ark_pool_flush(p), 0);
    CHECK_EQ(ark_pool_count(p), 0);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
    free(log);
}

/* A hook that, for the element of value 1, takes a slot and gives it back
 * unbuilt (as ark.hpp does when a constructor throws), and tries to
 * discard itself; it records what it saw. */
typedef struct discard_ctx {
    hook_log log;
    ark_pool *p;
    ark_status own, taken, after;
    size_t count_before, count_after;
} discard_ctx;

static void discard_in_hook(void *elem, ark_handle h, void *user) {
    discard_ctx *c = user;
    log_remove(elem, h, &c->log);
    if (((const item *)elem)->value != 1) {
        return;
    }
    c->own = ark__pool_discard(c->p, h); /* the dying slot: left alone */
    ark_handle t = ARK_NULL_HANDLE;
    item *x = ark_pool_alloc(c->p, &t);
    if (x == NULL) {
        c->taken = ARK_ENOMEM;
        return;
    }
    x->value = 99;
    c->count_before = ark_pool_count(c->p);
    c->taken = ark__pool_discard(c->p, t);
    c->count_after = ark_pool_count(c->p);
    c->after = ark_pool_check(c->p, t);
}

TEST(discard_frees_at_once_without_the_hook_even_inside_one) {
    for (int how = 0; how < 3; how++) {
        discard_ctx *c = calloc(1, sizeof *c);
        CHECK(c != NULL);
        ark_pool_config cfg = {.elem_size = sizeof(item),
                               .elem_align = 8,
                               .on_remove = discard_in_hook,
                               .user = c};
        ark_pool *p = c->p = make_pool(&cfg);
        CHECK(p != NULL);
        ark_handle h[3];
        for (uint64_t i = 0; i < 3; i++) {
            item it = {i, 0};
            CHECK_OK(ark_pool_insert(p, &it, &h[i]));
        }
        /* Outside a hook: freed at once, no hook, the handle stale. */
        ark_handle t;
        CHECK(ark_pool_alloc(p, &t) != NULL);
        CHECK_OK(ark__pool_discard(p, t));
        CHECK_EQ(c->log.total, 0);
        CHECK_STATUS(ark_pool_check(p, t), ARK_ESTALE);
        CHECK_STATUS(ark__pool_discard(p, t), ARK_ESTALE);
        CHECK_EQ(ark_pool_count(p), 3);
        /* Inside element 1's hook, by remove, flush and clear. */
        if (how == 0) {
            CHECK_OK(ark_pool_remove(p, h[1]));
        } else if (how == 1) {
            CHECK_OK(ark_pool_remove_later(p, h[1]));
            CHECK_EQ(ark_pool_flush(p), 1);
        } else {
            ark_pool_clear(p, true);
        }
        CHECK_OK(c->own);
        CHECK_OK(c->taken);
        CHECK_EQ(c->count_after + 1, c->count_before);
        CHECK_STATUS(c->after, ARK_ESTALE);
        CHECK_EQ(c->log.calls[99], 0); /* never hooked */
        CHECK_EQ(c->log.calls[1], 1);
        CHECK_EQ(c->log.total, how == 2 ? 3u : 1u);
        CHECK_EQ(ark_pool_count(p), how == 2 ? 0u : 2u);
        CHECK_OK(ark_pool_validate(p));
        ark_pool_destroy(p);
        free(c);
    }
}

TEST(handle_of_rejects_foreign_addresses) {
    ark_pool_config cfg = {.elem_size = sizeof(item), .elem_align = 8};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    CHECK_EQ(ark_pool_handle_of(p, &cfg), ARK_NULL_HANDLE); /* no pages */
    ark_handle h[3000];
    for (int i = 0; i < 3000; i++) {
        CHECK(ark_pool_alloc(p, &h[i]) != NULL);
    }
    for (int i = 0; i < 3000; i += 7) {
        char *e = ark_pool_get(p, h[i]);
        CHECK_EQ(ark_pool_handle_of(p, e), h[i]);
        CHECK_EQ(ark_pool_handle_of(p, e + 1), ARK_NULL_HANDLE);
        CHECK_EQ(ark_pool_handle_of(p, e - 4), ARK_NULL_HANDLE); /* stamp */
    }
    item local;
    CHECK_EQ(ark_pool_handle_of(p, &local), ARK_NULL_HANDLE);
    char *e = ark_pool_get(p, h[10]);
    CHECK_OK(ark_pool_remove(p, h[10]));
    CHECK_EQ(ark_pool_handle_of(p, e), ARK_NULL_HANDLE);
    ark_pool_destroy(p);
}

typedef struct each_ctx {
    ark_pool *p;
    ark_handle *h;
    size_t visits;
    size_t stop_after;
    uint64_t sum;
} each_ctx;

static bool each_remove_next_odd(void *elem, ark_handle h, void *ud) {
    each_ctx *c = ud;
    item *it = elem;
    (void)h;
    c->visits++;
    c->sum += it->value;
    /* Remove the element two ahead (not yet visited) and, now and then,
     * the current one. */
    if (it->value + 2 < 1000) {
        ark_pool_remove(c->p, c->h[it->value + 2]);
    }
    if (it->value % 3 == 0) {
        ark_pool_remove_later(c->p, c->h[it->value]);
    }
    return c->visits < c->stop_after;
}

TEST(each_and_iterator_survive_removal) {
    ark_pool_config cfg = {.elem_size = sizeof(item), .elem_align = 8};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    ark_handle h[1000];
    for (uint64_t i = 0; i < 1000; i++) {
        item it = {i, 0};
        CHECK_OK(ark_pool_insert(p, &it, &h[i]));
    }
    each_ctx c = {p, h, 0, (size_t)-1, 0};
    ark_pool_each(p, each_remove_next_odd, &c);
    /* Visits 0, 1, then 4, 5, 8, 9, ...: each visit removes value + 2. */
    CHECK_EQ(c.visits, 500);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_flush(p);
    /* Early stop. */
    each_ctx c2 = {p, h, 0, 10, 0};
    ark_pool_each(p, each_remove_next_odd, &c2);
    CHECK_EQ(c2.visits, 10);
    /* The inline iterator with removal of the current element. */
    size_t n = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        CHECK(ark_pool_get(p, it.handle) == it.elem);
        CHECK_OK(ark_pool_remove(p, it.handle));
        n++;
    }
    CHECK(n > 0);
    CHECK_EQ(ark_pool_count(p), 0);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
}

/* How many of the n values are not marked gone. */
static size_t count_kept(const bool *gone, size_t n) {
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        kept += !gone[i];
    }
    return kept;
}

/* The iterator walks a word whose 64 slots are live by address and a word
 * with holes by its bits: both visit every live element once, in index
 * order, with its handle, and skip what the walk itself removes ahead. */
TEST(iteration_over_full_and_partial_words) {
    ark_pool_config cfg = {.elem_size = 4, .elem_align = 4};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    enum { N = 64 * 6 };
    ark_handle h[N];
    bool gone[N] = {false};
    for (uint32_t i = 0; i < N; i++) {
        CHECK_OK(ark_pool_insert(p, &i, &h[i]));
    }
    /* Slot 0 is never issued, so value i lives in slot i + 1: word 2
     * (slots 128..191) empties, word 4 keeps one hole, words 1, 3 and 5
     * stay full. */
    for (uint32_t i = 127; i <= 190; i++) {
        CHECK_OK(ark_pool_remove(p, h[i]));
        gone[i] = true;
    }
    CHECK_OK(ark_pool_remove(p, h[299]));
    gone[299] = true;
    uint32_t prev = 0;
    size_t n = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        uint32_t v = *(const uint32_t *)it.elem;
        CHECK(v < N && !gone[v]);
        CHECK(n == 0 || v > prev);
        CHECK_EQ(it.handle, h[v]);
        CHECK(ark_pool_get(p, it.handle) == it.elem);
        /* Removals ahead: inside the full word being walked (75 when at
         * 70; 250 when at 195) and in a full word not yet entered (200). */
        static const uint32_t at[] = {70, 70, 195}, drop[] = {75, 200, 250};
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            if (v == at[k]) {
                CHECK_OK(ark_pool_remove(p, h[drop[k]]));
                gone[drop[k]] = true;
            }
        }
        prev = v;
        n++;
    }
    size_t want = count_kept(gone, N);
    CHECK_EQ(n, want);
    CHECK_EQ(ark_pool_count(p), want);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
}

/* Insert values 0..n-1 into h in `rounds` rounds, removing them all
 * between rounds: the FIFO hands the slots out again in the same order,
 * one generation on each round, but for the last 63 values of a round,
 * which take fresh slots (63 free slots stay queued). */
static void insert_rounds(ark_pool *p, ark_handle *h, uint32_t n, int rounds) {
    for (int r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < n; i++) {
            CHECK_OK(ark_pool_insert(p, &i, &h[i]));
        }
        for (uint32_t i = 0; r + 1 < rounds && i < n; i++) {
            CHECK_OK(ark_pool_remove(p, h[i]));
        }
    }
}

/* A pool of uint32_t values with a 20+12 layout and an 8-bit tag, and
 * max_elements reserved (0: the default). */
static ark_pool *make_tagged_pool(uint64_t tag, size_t max_elements) {
    ark_pool_config cfg = {.elem_size = 4,
                           .elem_align = 4,
                           .index_bits = 20,
                           .gen_bits = 12,
                           .tag_bits = 8,
                           .tag = tag,
                           .max_elements = max_elements};
    return make_pool(&cfg);
}

/* The iterator builds each handle from its own copies of the layout: with
 * a tag, a 20+12 layout and generations past 0 (rounds of remove all,
 * insert all; FIFO reuse hands slots out again), and holes in full and
 * partial words, every visited handle is the one insert returned. */
TEST(iteration_handles_carry_tag_and_generation) {
    ark_pool *p = make_tagged_pool(0xA5, 0);
    CHECK(p != NULL);
    enum { N = 300 };
    ark_handle h[N];
    insert_rounds(p, h, N, 5);
    CHECK_EQ(ark_pool_count(p), N);
    bool gone[N] = {false};
    for (uint32_t i = 0; i < N; i += 7) {
        CHECK_OK(ark_pool_remove(p, h[i]));
        gone[i] = true;
    }
    size_t n = 0, reused = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        uint32_t v = *(const uint32_t *)it.elem;
        CHECK(v < N && !gone[v]);
        CHECK_EQ(it.handle, h[v]);
        CHECK_EQ(it.handle >> 32, 0xA5); /* the tag, above 20 + 12 bits */
        reused += (it.handle >> 20 & 0xFFF) != 0;
        n++;
    }
    CHECK_EQ(n, ark_pool_count(p));
    CHECK(reused > 0); /* generations past 0 were walked */
    ark_pool_destroy(p);
}

/* Full words one after another, up to a word with a hole, past the most
 * a run takes (ARK__POOL_RUN words), through the end of the reserved range
 * (where allocator pages follow): every live element is visited once in
 * index order with the handle insert returned (tag and generations past 0
 * included), and what the walk removes ahead of itself, in later full
 * words, is skipped. (The walk takes a run of full words as one stretch,
 * see ark__pool_iter_advance.) */
TEST(iteration_walks_runs_of_full_words) {
    ark_pool *p = make_tagged_pool(0x5A, 1000); /* 1024 reserved slots */
    CHECK(p != NULL);
    enum { N = 64 * 40 };
    static ark_handle h[N];
    static bool gone[N];
    memset(gone, 0, sizeof gone);
    insert_rounds(p, h, N, 2);
    CHECK_EQ(ark_pool_count(p), N);
    /* Value i < N - 63 is in slot i + 1 (slot 0 is never issued): words
     * 1-15 are full up to the end of the reserved range but for a hole in
     * word 5, words 16-29 (allocator pages) full up to a hole in word 30. */
    CHECK_EQ(ark__pool_view_of(p)->slots.nflat, 1024);
    static const uint32_t holes[] = {64 * 5 + 9, 64 * 30 + 9};
    for (size_t k = 0; k < 2; k++) {
        CHECK_OK(ark_pool_remove(p, h[holes[k]]));
        gone[holes[k]] = true;
    }
    uint32_t prev = 0;
    size_t n = 0, reused = 0;
    ark_pool_iter it; /* valid tests a flag: elem must agree with it */
    for (it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        CHECK(it.elem != NULL);
        uint32_t v = *(const uint32_t *)it.elem;
        CHECK(v < N && !gone[v]);
        CHECK(n == 0 || v > prev);
        CHECK_EQ(it.handle, h[v]);
        reused += (it.handle >> 20 & 0xFFF) == 1;
        CHECK(ark_pool_get(p, it.handle) == it.elem);
        /* At 100 (word 1): remove 400 and 900, later full words of the
         * reserved range, and 2000, a paged word. At 500: remove the
         * element itself. */
        if (v == 100) {
            static const uint32_t drop[] = {400, 900, 2000};
            for (size_t k = 0; k < 3; k++) {
                CHECK_OK(ark_pool_remove(p, h[drop[k]]));
                gone[drop[k]] = true;
            }
        }
        if (v == 500) {
            CHECK_OK(ark_pool_remove(p, it.handle));
        }
        prev = v;
        n++;
    }
    CHECK(it.elem == NULL);
    size_t want = count_kept(gone, N);
    CHECK_EQ(n, want);
    CHECK_EQ(reused, n - 63);              /* all but the 63 in fresh slots */
    CHECK_EQ(ark_pool_count(p), want - 1); /* 500 went during the walk */
    CHECK_OK(ark_pool_validate(p));
    ark_pool_destroy(p);
}

TEST(iteration_skips_sparse_holes) {
    ark_pool_config cfg = {.elem_size = 4, .elem_align = 4};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    enum { N = 100000 };
    ark_handle *h = malloc(N * sizeof *h);
    CHECK(h != NULL);
    for (uint32_t i = 0; i < N; i++) {
        CHECK_OK(ark_pool_insert(p, &i, &h[i]));
    }
    /* Keep one element in 997. */
    uint64_t want = 0;
    for (uint32_t i = 0; i < N; i++) {
        if (i % 997 != 0) {
            CHECK_OK(ark_pool_remove(p, h[i]));
        } else {
            want += i;
        }
    }
    uint64_t sum = 0;
    size_t n = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        sum += *(uint32_t *)it.elem;
        n++;
    }
    CHECK_EQ(n, ark_pool_count(p));
    CHECK_EQ(sum, want);
    free(h);
    ark_pool_destroy(p);
}

TEST(reserve_then_insert_allocates_nothing) {
    test_allocator t;
    test_allocator_init(&t);
    ark_pool_config cfg = {.elem_size = 16, .allocator = &t.base};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    CHECK_OK(ark_pool_reserve(p, 0));
    CHECK_OK(ark_pool_reserve(p, 50000));
    uint64_t allocs = t.allocs;
    ark_handle h[1000];
    for (int i = 0; i < 50000; i++) {
        CHECK(ark_pool_alloc(p, i < 1000 ? &h[i] : NULL) != NULL);
    }
    CHECK_EQ(t.allocs, allocs);
    /* Free slots count toward a reservation. */
    for (int i = 0; i < 1000; i++) {
        CHECK_OK(ark_pool_remove(p, h[i]));
    }
    CHECK_OK(ark_pool_reserve(p, 50000));
    CHECK_EQ(t.allocs, allocs);
    /* The index space caps a reservation, and EFULL reserves nothing. */
    ark_pool_config small = {
        .elem_size = 16, .index_bits = 8, .allocator = &t.base};
    ark_pool *q = make_pool(&small);
    CHECK(q != NULL);
    uint64_t before = t.allocs;
    CHECK_STATUS(ark_pool_reserve(q, 256), ARK_EFULL);
    CHECK_EQ(t.allocs, before);
    CHECK_OK(ark_pool_reserve(q, 255));
    for (int i = 0; i < 255; i++) {
        CHECK(ark_pool_alloc(q, NULL) != NULL);
    }
    CHECK(ark_pool_alloc(q, NULL) == NULL);
    ark_pool_destroy(q);
    ark_pool_destroy(p);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 0);
}

/* The model: every handle ever issued with the value it was given and
 * whether it is live. */
typedef struct model_entry {
    ark_handle h;
    uint64_t value;
    int state; /* 0 live, 1 pending, 2 removed */
} model_entry;

TEST(randomized_against_model) {
    hook_log *log = calloc(1, sizeof *log);
    CHECK(log != NULL);
    test_allocator t;
    test_allocator_init(&t);
    ark_pool_config cfg = {.elem_size = sizeof(item),
                           .elem_align = 8,
                           .index_bits = 14,
                           .gen_bits = 10,
                           .tag_bits = 3,
                           .tag = 5,
                           .allocator = &t.base,
                           .on_remove = log_remove,
                           .user = log};
    ark_pool *p = make_pool(&cfg);
    CHECK(p != NULL);
    enum { CAP = 1 << 14 };
    const uint64_t OPS = harness_scaled(1200000);
    model_entry *live = malloc(CAP * sizeof *live); /* live + pending */
    ark_handle *dead = malloc(CAP * sizeof *dead);  /* recent stale ones */
    CHECK(live != NULL && dead != NULL);
    size_t nlive = 0, ndead = 0, npending = 0, ndead_total = 0;
    uint64_t state = harness_seed();
    uint64_t expect_hooks = 0;
    for (uint64_t op = 0; op < OPS; op++) {
        uint64_t r = harness_below(&state, 100);
        /* Bias toward ~3000 elements so the pool cycles through pages. */
        bool grow = nlive < 3000;
        if (r < (grow ? 45u : 30u)) {
            item it = {harness_rand(&state), op};
            ark_handle h;
            ark_status s = ark_pool_insert(p, &it, &h);
            if (s == ARK_EFULL) {
                continue; /* every index retired or in use */
            }
            CHECK_OK(s);
            CHECK(nlive < CAP);
            live[nlive++] = (model_entry){h, it.value, 0};
        } else if (r < 60 && nlive > 0) {
            size_t k = harness_below(&state, nlive);
            if (live[k].state != 0) {
                CHECK_STATUS(ark_pool_remove(p, live[k].h), ARK_ESTALE);
                continue;
            }
            CHECK_OK(ark_pool_remove(p, live[k].h));
            expect_hooks++;
            dead[(ndead_total++) % CAP] = live[k].h;
            ndead = ndead_total < CAP ? ndead_total : CAP;
            live[k] = live[--nlive];
        } else if (r < 70 && nlive > 0) {
            size_t k = harness_below(&state, nlive);
            if (live[k].state == 0) {
                CHECK_OK(ark_pool_remove_later(p, live[k].h));
                live[k].state = 1;
                npending++;
                expect_hooks++;
            }
        } else if (r < 72) {
            CHECK_EQ(ark_pool_flush(p), npending);
            size_t j = 0;
            for (size_t i = 0; i < nlive; i++) {
                if (live[i].state == 1) {
                    dead[(ndead_total++) % CAP] = live[i].h;
                    continue;
                }
                live[j++] = live[i];
            }
            nlive = j;
            npending = 0;
            ndead = ndead_total < CAP ? ndead_total : CAP;
        } else if (r < 90 && nlive > 0) {
            model_entry *m = &live[harness_below(&state, nlive)];
            item *it = ark_pool_get(p, m->h);
            if (m->state == 0) {
                CHECK(it != NULL);
                CHECK_EQ(it->value, m->value);
                CHECK_EQ(ark_pool_handle_of(p, it), m->h);
            } else {
                CHECK(it == NULL);
                CHECK_STATUS(ark_pool_check(p, m->h), ARK_ESTALE);
            }
        } else if (r < 99 && ndead > 0) {
            ark_handle h = dead[harness_below(&state, ndead)];
            CHECK(ark_pool_get(p, h) == NULL);
            CHECK_STATUS(ark_pool_check(p, h), ARK_ESTALE);
        } else if (r == 99 && op % 7 == 0) {
            /* Walk everything: the set of visited handles is the model's
             * live set. */
            uint64_t sum = 0, want = 0;
            size_t n = 0, nwant = 0;
            for (ark_pool_iter it = ark_pool_iter_begin(p);
                 ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
                sum += ((item *)it.elem)->value ^ it.handle;
                n++;
            }
            for (size_t i = 0; i < nlive; i++) {
                if (live[i].state == 0) {
                    want += live[i].value ^ live[i].h;
                    nwant++;
                }
            }
            CHECK_EQ(n, nwant);
            CHECK_EQ(sum, want);
            CHECK_EQ(ark_pool_count(p), nwant);
            CHECK_OK(ark_pool_validate(p));
        }
    }
    CHECK_EQ(ark_pool_count(p), nlive - npending);
    CHECK_OK(ark_pool_validate(p));
    ark_pool_clear(p, true);
    CHECK_EQ(log->total, expect_hooks + (nlive - npending));
    ark_pool_destroy(p);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 0);
    free(live);
    free(dead);
    free(log);
}

/* ark_pool_insert and ark_pool_remove are inline for their common cases
 * (pool.h) and out of line for the rest. A pool with a hook takes the
 * general remove every time, one without takes the inline one (and the
 * general one to retire a slot): the same operations on both must give
 * the same statuses and handles, on the reserved range and on pages. */
static void inline_and_general_paths_agree(const ark_allocator *alloc,
                                           unsigned index_bits,
                                           unsigned gen_bits) {
    hook_log *log = calloc(1, sizeof *log);
    CHECK(log != NULL);
    ark_pool_config cfg = {.elem_size = sizeof(item),
                           .elem_align = 8,
                           .index_bits = index_bits,
                           .gen_bits = gen_bits,
                           .allocator = alloc};
    ark_pool *plain = make_pool(&cfg);
    cfg.on_remove = log_remove;
    cfg.user = log;
    ark_pool *hooked = make_pool(&cfg);
    CHECK(plain != NULL && hooked != NULL);
    enum { CAP = 1 << 12 };
    ark_handle *hs = malloc(CAP * sizeof *hs); /* issued, live or not */
    CHECK(hs != NULL);
    size_t nh = 0;
    uint64_t removed = 0, state = harness_seed();
    const uint64_t OPS = harness_scaled(200000);
    for (uint64_t op = 0; op < OPS; op++) {
        uint64_t r = harness_below(&state, 100);
        if (r < 50 || nh == 0) {
            item it = {op, harness_rand(&state)};
            ark_handle a = 0, b = 0;
            ark_status sa = ark_pool_insert(plain, &it, &a);
            CHECK_STATUS(ark_pool_insert(hooked, &it, &b), sa);
            CHECK_EQ(a, b);
            if (sa == ARK_OK) {
                hs[nh < CAP ? nh++ : harness_below(&state, CAP)] = a;
            }
        } else if (r < 95) {
            /* a live handle, a stale one, or a forged neighbour */
            ark_handle h = hs[harness_below(&state, nh)] ^ (r < 90 ? 0 : r);
            ark_status sa = ark_pool_remove(plain, h);
            CHECK_STATUS(ark_pool_remove(hooked, h), sa);
            removed += sa == ARK_OK;
        } else {
            ark_handle h = hs[harness_below(&state, nh)];
            ark_status sa = ark_pool_remove_later(plain, h);
            CHECK_STATUS(ark_pool_remove_later(hooked, h), sa);
            removed += sa == ARK_OK;
            CHECK_EQ(ark_pool_flush(plain), ark_pool_flush(hooked));
        }
        CHECK_EQ(ark_pool_count(plain), ark_pool_count(hooked));
        if (op % 4096 == 0) {
            CHECK_OK(ark_pool_validate(plain));
            CHECK_OK(ark_pool_validate(hooked));
        }
    }
    CHECK_EQ(log->total, removed);
    CHECK(removed > 1000);
    CHECK_EQ(ark__pool_retired(plain), ark__pool_retired(hooked));
    CHECK(gen_bits > 8 || ark__pool_retired(plain) > 0);
    CHECK_OK(ark_pool_validate(plain));
    CHECK_OK(ark_pool_validate(hooked));
    ark_pool_destroy(plain);
    ark_pool_destroy(hooked);
    free(hs);
    free(log);
}

TEST(inline_and_general_paths_agree_reserved) {
    inline_and_general_paths_agree(NULL, 12, 20);
}

TEST(inline_and_general_paths_agree_pages_retiring) {
    test_allocator t;
    test_allocator_init(&t);
    inline_and_general_paths_agree(&t.base, 8, 3);
    CHECK_EQ(t.live_blocks, 0);
}

/* One scenario run with the k-th allocation failing: inserts, with every
 * fifth insert marking an earlier element for removal, then a reserve. */
typedef struct oom_progress {
    size_t inserted;
    size_t marked;
} oom_progress;

static ark_status oom_scenario(ark_pool *p, ark_handle *h, size_t n,
                               oom_progress *done) {
    for (size_t i = 0; i < n; i++) {
        item it = {i, 7};
        ark_status s = ark_pool_insert(p, &it, &h[i]);
        if (s != ARK_OK) {
            return s;
        }
        done->inserted++;
        if (i % 5 == 4) {
            s = ark_pool_remove_later(p, h[i - 2]);
            if (s != ARK_OK) {
                return s;
            }
            done->marked++;
        }
    }
    return ark_pool_reserve(p, 3 * n);
}

TEST(allocation_failure_leaves_pool_unchanged) {
    enum { N = 20000 };
    ark_handle *h = malloc(N * sizeof *h);
    CHECK(h != NULL);
    for (uint64_t k = 1;; k++) {
        test_allocator t;
        test_allocator_init(&t);
        ark_pool_config cfg = {
            .elem_size = sizeof(item), .elem_align = 8, .allocator = &t.base};
        test_allocator_fail_at(&t, k);
        ark_pool *p = NULL;
        ark_status s = ark_pool_create(&p, &cfg);
        if (s != ARK_OK) {
            CHECK_STATUS(s, ARK_ENOMEM);
            CHECK(p == NULL);
            CHECK_EQ(t.live_blocks, 0);
            continue;
        }
        oom_progress done = {0, 0};
        s = oom_scenario(p, h, N, &done);
        if (t.failures == 0) {
            CHECK_OK(s);
            ark_pool_destroy(p);
            CHECK_EQ(t.live_blocks, 0);
            CHECK(k > 3); /* the sweep really covered allocations */
            break;
        }
        CHECK_STATUS(s, ARK_ENOMEM);
        CHECK_OK(ark_pool_validate(p));
        /* Everything inserted before the failure is intact, the failed
         * call left nothing behind, and the pool still works. */
        CHECK_EQ(ark_pool_count(p), done.inserted - done.marked);
        for (size_t i = 0; i < done.inserted; i++) {
            item *it = ark_pool_get(p, h[i]);
            bool marked = (i + 2) % 5 == 4 && (i + 2) / 5 < done.marked;
            CHECK(marked == (it == NULL));
            if (!marked) {
                CHECK(it != NULL);
                CHECK_EQ(it->value, i);
            }
        }
        item x = {1, 2};
        ark_handle extra;
        CHECK_OK(ark_pool_insert(p, &x, &extra));
        CHECK(ark_pool_get(p, extra) != NULL);
        ark_pool_flush(p);
        CHECK_OK(ark_pool_validate(p));
        ark_pool_destroy(p);
        CHECK_EQ(t.live_blocks, 0);
        CHECK_EQ(t.bad_frees, 0);
    }
    free(h);
}

/* The default allocator gives a pool one reserved range; a custom allocator
 * gives it allocated pages. The same operations must give the same handles
 * and contents either way. */
TEST(reserved_and_paged_pools_agree) {
    test_allocator t;
    test_allocator_init(&t);
    /* 2^20 slots: a reservation small enough for valgrind to grant. */
    ark_pool_config flat_cfg = {
        .elem_size = sizeof(item), .elem_align = 8, .index_bits = 20};
    ark_pool_config paged_cfg = flat_cfg;
    paged_cfg.allocator = &t.base;
    ark_pool *a = make_pool(&flat_cfg);
    ark_pool *b = make_pool(&paged_cfg);
    CHECK(a != NULL && b != NULL);
    CHECK(ark__pool_reserved(a)); /* this platform offers virtual memory */
    CHECK(!ark__pool_reserved(b));
    enum { N = 20000 };
    ark_handle *ha = malloc(N * sizeof *ha), *hb = malloc(N * sizeof *hb);
    CHECK(ha != NULL && hb != NULL);
    uint64_t state = harness_seed();
    for (uint64_t i = 0; i < N; i++) {
        item it = {harness_rand(&state), i};
        CHECK_OK(ark_pool_insert(a, &it, &ha[i]));
        CHECK_OK(ark_pool_insert(b, &it, &hb[i]));
        CHECK_EQ(ha[i], hb[i]);
        if (i % 3 == 2) {
            uint64_t k = harness_below(&state, i);
            CHECK_EQ(ark_pool_remove(a, ha[k]), ark_pool_remove(b, hb[k]));
        }
    }
    ark_pool_iter x = ark_pool_iter_begin(a), y = ark_pool_iter_begin(b);
    for (; ark_pool_iter_valid(&x);
         ark_pool_iter_next(&x), ark_pool_iter_next(&y)) {
        CHECK(ark_pool_iter_valid(&y));
        CHECK_EQ(x.handle, y.handle);
        CHECK(memcmp(x.elem, y.elem, sizeof(item)) == 0);
        CHECK_EQ(ark_pool_handle_of(a, x.elem), x.handle);
    }
    CHECK(!ark_pool_iter_valid(&y));
    CHECK_OK(ark_pool_validate(a));
    CHECK_OK(ark_pool_validate(b));
    free(ha);
    free(hb);
    ark_pool_destroy(a);
    ark_pool_destroy(b);
    CHECK_EQ(t.live_blocks, 0);
}
