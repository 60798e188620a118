/* SPDX-License-Identifier: MIT */
/*
 * opcount.c - instructions per operation of the owning thread's hot
 * paths, for callgrind (not timed, not run by bench/run.sh):
 *
 *     valgrind --tool=callgrind --callgrind-out-file=cg.out \
 *         --toggle-collect='phase_*' build/bench/bench/opcount
 *     callgrind_annotate --inclusive=yes cg.out | grep phase_
 *
 * Each phase_* function runs N operations of one kind, so its inclusive
 * count / N is the instructions per operation (phase_iterate runs twice:
 * divide by 2N). A pool of 16-byte elements {ARK_POOL_ELEM(elem)}:
 * inserts into a new pool (fresh slots), gets in random order, an
 * iteration, removes in random order, inserts again (reused slots), an
 * iteration, removes; a table of one 16-byte column: inserts, rows,
 * removes. With -DOPCOUNT_CLAIMS also claims of 16 from the frontier and
 * from the stock (per batch: divide by N / 16). Build it against two
 * versions of the library to compare them (docs/bench.md).
 */
#include "ark/pool.h"
#include "ark/table.h"

#include <stdio.h>
#include <stdlib.h>

#define N 100000

typedef struct elem {
    float x, y, vx, vy;
} elem;

static ark_handle h[N];
static uint32_t perm[N];

#define NOINLINE __attribute__((noinline))

NOINLINE void phase_insert_fresh(ark_pool *p);
NOINLINE void phase_insert_reuse(ark_pool *p);
NOINLINE uint64_t phase_get(ark_pool *p);
NOINLINE uint64_t phase_iterate(ark_pool *p);
NOINLINE void phase_remove(ark_pool *p);
NOINLINE void phase_remove2(ark_pool *p);
NOINLINE void phase_table_insert(ark_table *t);
NOINLINE uint64_t phase_table_row(ark_table *t);
NOINLINE void phase_table_remove(ark_table *t);

static void insert_all(ark_pool *p) {
    for (uint32_t i = 0; i < N; i++) {
        elem e = {(float)i, (float)i + 1, 1, -1};
        if (ark_pool_insert(p, &e, &h[i]) != ARK_OK) {
            abort();
        }
    }
}

static void remove_all(ark_pool *p) {
    for (uint32_t i = 0; i < N; i++) {
        ark_pool_remove(p, h[perm[i]]);
    }
}

NOINLINE void phase_insert_fresh(ark_pool *p) { insert_all(p); }
NOINLINE void phase_insert_reuse(ark_pool *p) { insert_all(p); }
NOINLINE void phase_remove(ark_pool *p) { remove_all(p); }
NOINLINE void phase_remove2(ark_pool *p) { remove_all(p); }

NOINLINE uint64_t phase_get(ark_pool *p) {
    uint64_t s = 0;
    for (uint32_t i = 0; i < N; i++) {
        const elem *e = ark_pool_get(p, h[perm[i]]);
        if (e != NULL) {
            s += (uint64_t)e->x;
        }
    }
    return s;
}

NOINLINE uint64_t phase_iterate(ark_pool *p) {
    uint64_t s = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        s += (uint64_t)((const elem *)it.elem)->x;
    }
    return s;
}

NOINLINE void phase_table_insert(ark_table *t) {
    for (uint32_t i = 0; i < N; i++) {
        size_t r;
        if (ark_table_insert(t, &h[i], &r) != ARK_OK) {
            abort();
        }
        ((elem *)ark_table_column(t, 0))[r].x = (float)i;
    }
}

NOINLINE uint64_t phase_table_row(ark_table *t) {
    uint64_t s = 0;
    for (uint32_t i = 0; i < N; i++) {
        s += ark_table_row(t, h[perm[i]]);
    }
    return s;
}

NOINLINE void phase_table_remove(ark_table *t) {
    for (uint32_t i = 0; i < N; i++) {
        ark_table_remove(t, h[perm[i]]);
    }
}

#ifdef OPCOUNT_CLAIMS
NOINLINE void phase_claim16_fresh(ark_pool *p);
NOINLINE void phase_claim16_stock(ark_pool *p);

/* N / 16 claims of 16 fresh indices (the stock is empty). */
NOINLINE void phase_claim16_fresh(ark_pool *p) {
    for (uint32_t i = 0; i < N; i += 16) {
        if (ark_pool_claim(p, &h[i], 16) != ARK_OK) {
            abort();
        }
    }
}

/* N / 16 claims of 16 reused slots, the stock refilled by a flush every
 * 1024 (the flushes are outside the phase). */
static void claim_stock_1024(ark_pool *p, uint32_t at);
NOINLINE void phase_claim16_stock(ark_pool *p) {
    for (uint32_t i = 0; i < N; i += 1024) {
        claim_stock_1024(p, i);
        ark_pool_flush(p);
    }
}

NOINLINE static void claim_stock_1024(ark_pool *p, uint32_t at) {
    for (uint32_t i = at; i < at + 1024 && i < N; i += 16) {
        if (ark_pool_claim(p, &h[i], 16) != ARK_OK) {
            abort();
        }
    }
}
#endif

int main(void) {
    uint64_t st = 1;
    for (uint32_t i = 0; i < N; i++) {
        perm[i] = i;
    }
    for (uint32_t i = N - 1; i > 0; i--) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        uint32_t j = (uint32_t)((st >> 33) % (i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    ark_pool *p;
    ark_pool_config cfg = {ARK_POOL_ELEM(elem)};
    if (ark_pool_create(&p, &cfg) != ARK_OK) {
        return 1;
    }
    phase_insert_fresh(p);
    uint64_t s = phase_get(p) + phase_iterate(p);
    phase_remove(p);
    phase_insert_reuse(p);
    s += phase_iterate(p);
    phase_remove2(p);
    ark_pool_destroy(p);

    ark_table *t;
    size_t cols[1] = {sizeof(elem)};
    ark_table_config tc = {.column_sizes = cols, .ncolumns = 1};
    if (ark_table_create(&t, &tc) != ARK_OK) {
        return 1;
    }
    phase_table_insert(t);
    s += phase_table_row(t);
    phase_table_remove(t);
    ark_table_destroy(t);

#ifdef OPCOUNT_CLAIMS
    if (ark_pool_create(&p, &cfg) != ARK_OK) {
        return 1;
    }
    phase_claim16_fresh(p);
    /* Free slots for the stock: N + 1100 inserted, removed, flushed. */
    static ark_handle many[N + 1100];
    for (uint32_t i = 0; i < N + 1100; i++) {
        elem e = {0};
        ark_pool_insert(p, &e, &many[i]);
    }
    for (uint32_t i = 0; i < N + 1100; i++) {
        ark_pool_remove(p, many[i]);
    }
    ark_pool_flush(p);
    phase_claim16_stock(p);
    ark_pool_destroy(p);
#endif
    printf("%llu\n", (unsigned long long)s);
    return 0;
}
