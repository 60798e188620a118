/* SPDX-License-Identifier: MIT */
/*
 * cont_adapter.h - a container of either kind, ark_pool or ark_table,
 * for the tests that run one body on both: the kind, the calls whose
 * shape is the same for both, and the per-kind registration helpers.
 * What an element is (and so create, insert, get) is each test file's.
 */
#ifndef ARK_TEST_CONT_ADAPTER_H
#define ARK_TEST_CONT_ADAPTER_H

#include "ark/ark.h"
#include "harness.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct kind {
    const char *name;
    bool table;
} kind;

static const kind POOL = {"pool", false};
static const kind TABLE = {"table", true};

typedef struct cont {
    const kind *k;
    ark_pool *p;
    ark_table *t;
} cont;

static inline void c_init(cont *c, const kind *k) {
    c->k = k;
    c->p = NULL;
    c->t = NULL;
}

static inline void c_destroy(cont *c) {
    if (c->k->table) {
        ark_table_destroy(c->t);
    } else {
        ark_pool_destroy(c->p);
    }
    c_init(c, c->k);
}

static inline ark_status c_check(const cont *c, ark_handle h) {
    return c->k->table ? ark_table_check(c->t, h) : ark_pool_check(c->p, h);
}
static inline ark_status c_remove(cont *c, ark_handle h) {
    return c->k->table ? ark_table_remove(c->t, h) : ark_pool_remove(c->p, h);
}
static inline ark_status c_remove_later(cont *c, ark_handle h) {
    return c->k->table ? ark_table_remove_later(c->t, h)
                       : ark_pool_remove_later(c->p, h);
}
static inline size_t c_flush(cont *c) {
    return c->k->table ? ark_table_flush(c->t) : ark_pool_flush(c->p);
}
static inline size_t c_count(const cont *c) {
    return c->k->table ? ark_table_count(c->t) : ark_pool_count(c->p);
}
static inline ark_status c_reserve(cont *c, size_t n) {
    return c->k->table ? ark_table_reserve(c->t, n) : ark_pool_reserve(c->p, n);
}
static inline ark_handle c_seal(const cont *c, ark_handle h) {
    return c->k->table ? ark_table_seal(c->t, h) : ark_pool_seal(c->p, h);
}

/* Stop the current case when a helper failed. */
#define BAIL()                                                                 \
    do {                                                                       \
        if (harness_failed()) {                                                \
            return;                                                            \
        }                                                                      \
    } while (0)

/* Name each failure's container: the seed is printed by the harness. */
static inline void note_kind(const kind *k) {
    if (harness_failed()) {
        fprintf(stderr, "  (container: %s)\n", k->name);
    }
}

/* Run body on one kind. */
#define RUN_ON(body, k)                                                        \
    do {                                                                       \
        body(k);                                                               \
        note_kind(k);                                                          \
    } while (0)

/* Register body(const kind *) as two cases, body_pool and body_table.
 * tests/CMakeLists.txt reads these lines as it reads TEST lines, so each
 * must start a line. */
#define TEST_ON_BOTH(body)                                                     \
    TEST(body##_pool) { RUN_ON(body, &POOL); }                                 \
    TEST(body##_table) { RUN_ON(body, &TABLE); }

#endif /* ARK_TEST_CONT_ADAPTER_H */
