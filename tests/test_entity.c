/* SPDX-License-Identifier: MIT */
/*
 * test_entity.c - entities with components and tags: keyed pools and
 * tables, the removal cascade (with hooks calling back), tags, queries,
 * snapshots of a world, allocation failure at every step, and a
 * randomized model test.
 */
#include "ark/ark.h"
#include "harness.h"
#include "pool_internal.h"
#include "snapshot_mem.h"
#include "table_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct vec2 {
    float x, y;
} vec2;

typedef struct unit {
    int hp;
} unit;

/* A small world: units (entities), pos (keyed pool), vel (keyed table of
 * two float columns), a tag set. */
typedef struct world {
    ark_pool *units;
    ark_pool *pos;
    ark_table *vel;
    ark_idset *burning;
} world;

static const size_t vel_cols[2] = {sizeof(float), sizeof(float)};

static int world_make(world *w, const ark_allocator *a) {
    memset(w, 0, sizeof *w);
    ark_pool_config uc = {ARK_POOL_ELEM(unit), .allocator = a, .index_bits = 24,
                          .gen_bits = 20};
    REQ(ark_pool_create(&w->units, &uc) == ARK_OK);
    ark_pool_config pc = {ARK_POOL_ELEM(vec2), .allocator = a,
                          .keys = w->units};
    REQ(ark_pool_create(&w->pos, &pc) == ARK_OK);
    ark_table_config tc = {.column_sizes = vel_cols,
                           .ncolumns = 2,
                           .allocator = a,
                           .keys = w->units};
    REQ(ark_table_create(&w->vel, &tc) == ARK_OK);
    REQ(ark_idset_create(&w->burning, a) == ARK_OK);
    REQ(ark_pool_attach_idset(w->units, w->burning) == ARK_OK);
    return 1;
}

static void world_free(world *w) {
    ark_table_destroy(w->vel);
    ark_pool_destroy(w->pos);
    ark_idset_destroy(w->burning);
    ark_pool_destroy(w->units);
}

static int world_valid(const world *w) {
    REQ(ark_pool_validate(w->units) == ARK_OK);
    REQ(ark_pool_validate(w->pos) == ARK_OK);
    REQ(ark_table_validate(w->vel) == ARK_OK);
    REQ(ark_idset_validate(w->burning) == ARK_OK);
    return 1;
}

static float *vel_x(const world *w, size_t row) {
    return (float *)ark_table_column(w->vel, 0) + row;
}

TEST(keyed_pool_and_table_follow_their_entities) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle e[3];
    for (int k = 0; k < 3; k++) {
        CHECK_OK(ark_pool_insert(w.units, &(unit){k}, &e[k]));
    }
    CHECK_OK(ark_pool_insert_at(w.pos, e[0], &(vec2){1, 2}));
    CHECK_OK(ark_pool_insert_at(w.pos, e[2], &(vec2){5, 6}));
    size_t row;
    CHECK_OK(ark_table_insert_at(w.vel, e[1], &row));
    *vel_x(&w, row) = 7;
    /* Found by the entity's own handle; absent for the others. */
    vec2 *p = ark_pool_get(w.pos, e[0]);
    CHECK(p != NULL && p->x == 1 && p->y == 2);
    CHECK(ark_pool_get(w.pos, e[1]) == NULL);
    CHECK_EQ(ark_table_row(w.vel, e[1]), row);
    CHECK_EQ(ark_table_row(w.vel, e[0]), ARK_NO_ROW);
    CHECK_EQ(ark_pool_count(w.pos), 2);
    CHECK_EQ(ark_table_count(w.vel), 1);
    /* One element per entity; own handles refused. */
    CHECK_STATUS(ark_pool_insert_at(w.pos, e[0], &(vec2){0, 0}), ARK_EEXIST);
    CHECK_STATUS(ark_pool_insert(w.pos, &(vec2){0, 0}, NULL), ARK_EINVAL);
    CHECK(ark_pool_alloc(w.pos, NULL) == NULL);
    CHECK_STATUS(ark_table_insert(w.vel, NULL, NULL), ARK_EINVAL);
    /* The iterator of a keyed pool yields entity handles. */
    int seen = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(w.pos);
         ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
        CHECK(it.handle == e[0] || it.handle == e[2]);
        seen++;
    }
    CHECK_EQ(seen, 2);
    CHECK_EQ(ark_table_handle_at(w.vel, row), e[1]);
    /* Removing a component leaves the entity. */
    CHECK_OK(ark_pool_remove(w.pos, e[2]));
    CHECK(ark_pool_get(w.units, e[2]) != NULL);
    CHECK(ark_pool_get(w.pos, e[2]) == NULL);
    CHECK_OK(ark_pool_insert_at(w.pos, e[2], &(vec2){8, 9}));
    CHECK(world_valid(&w));
    world_free(&w);
}

TEST(keyed_insert_refuses_what_is_not_a_live_entity) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle e, f;
    CHECK_OK(ark_pool_insert(w.units, &(unit){1}, &e));
    CHECK_OK(ark_pool_insert(w.units, &(unit){2}, &f));
    CHECK_STATUS(ark_pool_insert_at(w.pos, ARK_NULL_HANDLE, &(vec2){0, 0}),
                 ARK_ENULL);
    CHECK_STATUS(ark_pool_insert_at(w.pos, e + 1000, &(vec2){0, 0}),
                 ARK_ERANGE);
    CHECK_STATUS(
        ark_pool_insert_at(w.pos, e | (uint64_t)1 << 63, &(vec2){0, 0}),
        ARK_EFOREIGN);
    CHECK_OK(ark_pool_remove(w.units, e));
    CHECK_STATUS(ark_pool_insert_at(w.pos, e, &(vec2){0, 0}), ARK_ESTALE);
    CHECK_STATUS(ark_table_insert_at(w.vel, e, NULL), ARK_ESTALE);
    CHECK_STATUS(ark_pool_tag(w.units, w.burning, e), ARK_ESTALE);
    /* A marked entity is gone for new components too. */
    CHECK_OK(ark_pool_remove_later(w.units, f));
    CHECK_STATUS(ark_pool_insert_at(w.pos, f, &(vec2){0, 0}), ARK_ESTALE);
    CHECK_EQ(ark_pool_count(w.pos), 0);
    CHECK(world_valid(&w));
    world_free(&w);
}

TEST(removing_an_entity_removes_its_components_and_tags) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle e[100];
    for (int k = 0; k < 100; k++) {
        CHECK_OK(ark_pool_insert(w.units, &(unit){k}, &e[k]));
        CHECK_OK(ark_pool_insert_at(w.pos, e[k], &(vec2){(float)k, 0}));
        if (k % 2 == 0) {
            size_t r;
            CHECK_OK(ark_table_insert_at(w.vel, e[k], &r));
            *vel_x(&w, r) = (float)k;
        }
        if (k % 3 == 0) {
            CHECK_OK(ark_pool_tag(w.units, w.burning, e[k]));
        }
    }
    CHECK_EQ(ark_idset_count(w.burning), 34);
    /* remove, remove_later + flush */
    for (int k = 0; k < 100; k += 4) {
        CHECK_OK(ark_pool_remove(w.units, e[k]));
    }
    for (int k = 1; k < 100; k += 4) {
        CHECK_OK(ark_pool_remove_later(w.units, e[k]));
    }
    CHECK(world_valid(&w));
    CHECK_EQ(ark_pool_flush(w.units), 25);
    for (int k = 0; k < 100; k++) {
        bool gone = k % 4 <= 1;
        CHECK_EQ(ark_pool_get(w.pos, e[k]) == NULL, gone);
        CHECK_EQ(ark_table_row(w.vel, e[k]) == ARK_NO_ROW, gone || k % 2 != 0);
        CHECK_EQ(ark_pool_has_tag(w.units, w.burning, e[k]),
                 !gone && k % 3 == 0);
    }
    CHECK_EQ(ark_pool_count(w.pos), 50);
    CHECK_EQ(ark_table_count(w.vel), 25);
    CHECK(world_valid(&w));
    /* Rows moved by the removals still hold their entity's values. */
    for (int k = 0; k < 100; k++) {
        size_t r = ark_table_row(w.vel, e[k]);
        if (r != ARK_NO_ROW) {
            CHECK_EQ((int)*vel_x(&w, r), k);
        }
    }
    /* clear takes everything left. */
    ark_pool_clear(w.units, true);
    CHECK_EQ(ark_pool_count(w.pos), 0);
    CHECK_EQ(ark_table_count(w.vel), 0);
    CHECK_EQ(ark_idset_count(w.burning), 0);
    CHECK(world_valid(&w));
    world_free(&w);
}

TEST(a_new_entity_at_a_reused_index_inherits_nothing) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle first;
    CHECK_OK(ark_pool_insert(w.units, &(unit){1}, &first));
    CHECK_OK(ark_pool_insert_at(w.pos, first, &(vec2){1, 1}));
    CHECK_OK(ark_table_insert_at(w.vel, first, NULL));
    CHECK_OK(ark_pool_tag(w.units, w.burning, first));
    uint32_t id = ark_pool_id(w.units, first);
    CHECK_OK(ark_pool_remove(w.units, first));
    /* Churn until the index comes back (after the reuse delay). */
    ark_handle again = ARK_NULL_HANDLE;
    for (int k = 0; k < 1000 && again == ARK_NULL_HANDLE; k++) {
        ark_handle h;
        CHECK_OK(ark_pool_insert(w.units, &(unit){k}, &h));
        if (ark_pool_id(w.units, h) == id) {
            again = h;
        } else if (k % 2 == 0) {
            CHECK_OK(ark_pool_remove(w.units, h));
        }
    }
    CHECK(again != ARK_NULL_HANDLE && again != first);
    CHECK(ark_pool_get(w.pos, again) == NULL);
    CHECK_EQ(ark_table_row(w.vel, again), ARK_NO_ROW);
    CHECK(!ark_pool_has_tag(w.units, w.burning, again));
    CHECK(ark_pool_get(w.pos, first) == NULL);
    CHECK_OK(ark_pool_insert_at(w.pos, again, &(vec2){2, 2}));
    CHECK(ark_pool_get(w.pos, first) == NULL);
    CHECK(world_valid(&w));
    world_free(&w);
}

TEST(ids_and_handles_convert_both_ways) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle e;
    CHECK_OK(ark_pool_insert(w.units, &(unit){1}, &e));
    uint32_t id = ark_pool_id(w.units, e);
    CHECK(id != 0);
    CHECK_EQ(ark_pool_handle_by_id(w.units, id), e);
    CHECK_EQ(ark_pool_id(w.units, e + ((uint64_t)1 << 32)), 0);
    CHECK_EQ(ark_pool_id(w.units, ARK_NULL_HANDLE), 0);
    CHECK_EQ(ark_pool_handle_by_id(w.units, 0), ARK_NULL_HANDLE);
    CHECK_EQ(ark_pool_handle_by_id(w.units, UINT32_MAX), ARK_NULL_HANDLE);
    CHECK_EQ(ark_pool_handle_by_id(w.units, id + 1), ARK_NULL_HANDLE);
    CHECK_OK(ark_pool_remove_later(w.units, e));
    CHECK_EQ(ark_pool_handle_by_id(w.units, id), ARK_NULL_HANDLE);
    CHECK_EQ(ark_pool_id(w.units, e), 0);
    world_free(&w);
}

/* ---- hooks ---------------------------------------------------------- */

/* Hooks that record their calls and call back: a unit's hook removes its
 * child (stored in the unit), a position's hook reads its (dying) entity
 * and removes another entity's velocity. */
typedef struct hooked {
    world w;
    int unit_calls, pos_calls, vel_calls;
    int pos_saw_entity; /* the dying entity resolved in the pos hook */
    ark_handle victim;  /* whose velocity the pos hook removes */
} hooked;

typedef struct hunit {
    int hp;
    ark_handle child;
} hunit;

static void on_unit(void *elem, ark_handle h, void *user) {
    hooked *t = user;
    hunit *u = elem;
    t->unit_calls++;
    /* Its components are still there while it dies. */
    if (ark_pool_get(t->w.pos, h) != NULL) {
        t->pos_saw_entity += 0;
    }
    if (u->child != ARK_NULL_HANDLE) {
        (void)ark_pool_remove(t->w.units, u->child);
    }
    /* A component added now is refused: the entity is dying. */
    if (ark_pool_insert_at(t->w.pos, h, &(vec2){0, 0}) == ARK_OK) {
        t->unit_calls += 1000;
    }
}

static void on_pos(void *elem, ark_handle h, void *user) {
    hooked *t = user;
    (void)elem;
    t->pos_calls++;
    if (ark_pool_get(t->w.units, h) != NULL) {
        t->pos_saw_entity++;
    }
    if (t->victim != ARK_NULL_HANDLE) {
        ark_handle v = t->victim;
        t->victim = ARK_NULL_HANDLE;
        (void)ark_table_remove(t->w.vel, v);
    }
}

static void on_vel(void *elem, ark_handle h, void *user) {
    hooked *t = user;
    (void)elem;
    t->vel_calls++;
    /* Row still readable while the hook runs. */
    if (ark_table_row(t->w.vel, h) == ARK_NO_ROW) {
        t->vel_calls += 1000;
    }
}

static int hooked_make(hooked *t) {
    memset(t, 0, sizeof *t);
    ark_pool_config uc = {ARK_POOL_ELEM(hunit), .on_remove = on_unit,
                          .user = t};
    REQ(ark_pool_create(&t->w.units, &uc) == ARK_OK);
    ark_pool_config pc = {ARK_POOL_ELEM(vec2), .keys = t->w.units,
                          .on_remove = on_pos, .user = t};
    REQ(ark_pool_create(&t->w.pos, &pc) == ARK_OK);
    ark_table_config tc = {.column_sizes = vel_cols,
                           .ncolumns = 2,
                           .keys = t->w.units,
                           .on_remove = on_vel,
                           .user = t};
    REQ(ark_table_create(&t->w.vel, &tc) == ARK_OK);
    REQ(ark_idset_create(&t->w.burning, NULL) == ARK_OK);
    REQ(ark_pool_attach_idset(t->w.units, t->w.burning) == ARK_OK);
    return 1;
}

TEST(despawn_cascades_through_hooks_exactly_once) {
    hooked t;
    CHECK(hooked_make(&t));
    /* A chain parent -> child -> grandchild, each with pos, vel, tag. */
    ark_handle h[3];
    for (int k = 0; k < 3; k++) {
        CHECK_OK(ark_pool_insert(t.w.units, &(hunit){k, 0}, &h[k]));
        CHECK_OK(ark_pool_insert_at(t.w.pos, h[k], &(vec2){0, 0}));
        CHECK_OK(ark_table_insert_at(t.w.vel, h[k], NULL));
        CHECK_OK(ark_pool_tag(t.w.units, t.w.burning, h[k]));
    }
    ((hunit *)ark_pool_get(t.w.units, h[0]))->child = h[1];
    ((hunit *)ark_pool_get(t.w.units, h[1]))->child = h[2];
    /* An unrelated entity whose velocity the first pos hook removes. */
    ark_handle other;
    CHECK_OK(ark_pool_insert(t.w.units, &(hunit){9, 0}, &other));
    CHECK_OK(ark_table_insert_at(t.w.vel, other, NULL));
    t.victim = other;
    CHECK_OK(ark_pool_remove(t.w.units, h[0]));
    CHECK_EQ(t.unit_calls, 3);
    CHECK_EQ(t.pos_calls, 3);
    CHECK_EQ(t.vel_calls, 4); /* three entities' and the victim's */
    CHECK_EQ(t.pos_saw_entity, 3);
    CHECK_EQ(ark_pool_count(t.w.units), 1);
    CHECK_EQ(ark_pool_count(t.w.pos), 0);
    CHECK_EQ(ark_table_count(t.w.vel), 0);
    CHECK_EQ(ark_idset_count(t.w.burning), 0);
    CHECK(world_valid(&t.w));
    world_free(&t.w);
}

TEST(despawn_from_a_component_hook_runs_after_it) {
    hooked t;
    CHECK(hooked_make(&t));
    /* Entities a, b; a's pos hook removes b's velocity (victim); b's own
     * removal from a's unit hook (child) cascades into pos and vel while
     * pos's hook may be running. */
    ark_handle a, b;
    CHECK_OK(ark_pool_insert(t.w.units, &(hunit){1, 0}, &a));
    CHECK_OK(ark_pool_insert(t.w.units, &(hunit){2, 0}, &b));
    for (int k = 0; k < 2; k++) {
        ark_handle h = k == 0 ? a : b;
        CHECK_OK(ark_pool_insert_at(t.w.pos, h, &(vec2){0, 0}));
        CHECK_OK(ark_table_insert_at(t.w.vel, h, NULL));
    }
    ((hunit *)ark_pool_get(t.w.units, a))->child = b;
    t.victim = b;
    /* Removing a's position directly: its hook removes b's velocity. */
    CHECK_OK(ark_pool_remove(t.w.pos, a));
    CHECK_EQ(t.pos_calls, 1);
    CHECK_EQ(t.vel_calls, 1);
    CHECK_EQ(ark_table_row(t.w.vel, b), ARK_NO_ROW);
    /* Now a: its unit hook removes b, whose pos hook runs once. */
    CHECK_OK(ark_pool_remove(t.w.units, a));
    CHECK_EQ(t.unit_calls, 2);
    CHECK_EQ(t.pos_calls, 2);
    CHECK_EQ(t.vel_calls, 2);
    CHECK_EQ(ark_pool_count(t.w.units), 0);
    CHECK(world_valid(&t.w));
    world_free(&t.w);
}

TEST(clear_without_hooks_runs_no_component_hook) {
    hooked t;
    CHECK(hooked_make(&t));
    for (int k = 0; k < 10; k++) {
        ark_handle h;
        CHECK_OK(ark_pool_insert(t.w.units, &(hunit){k, 0}, &h));
        CHECK_OK(ark_pool_insert_at(t.w.pos, h, &(vec2){0, 0}));
        CHECK_OK(ark_table_insert_at(t.w.vel, h, NULL));
        CHECK_OK(ark_pool_tag(t.w.units, t.w.burning, h));
    }
    ark_pool_clear(t.w.units, false);
    CHECK_EQ(t.unit_calls + t.pos_calls + t.vel_calls, 0);
    CHECK_EQ(ark_pool_count(t.w.pos), 0);
    CHECK_EQ(ark_table_count(t.w.vel), 0);
    CHECK_EQ(ark_idset_count(t.w.burning), 0);
    CHECK(world_valid(&t.w));
    world_free(&t.w);
}

TEST(destroying_either_side_detaches) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle e;
    CHECK_OK(ark_pool_insert(w.units, &(unit){1}, &e));
    CHECK_OK(ark_pool_insert_at(w.pos, e, &(vec2){1, 1}));
    CHECK_OK(ark_pool_tag(w.units, w.burning, e));
    /* A component container destroyed first: the entity pool goes on. */
    ark_pool_destroy(w.pos);
    w.pos = NULL;
    ark_idset_destroy(w.burning);
    w.burning = NULL;
    CHECK_OK(ark_pool_remove(w.units, e));
    CHECK_OK(ark_pool_insert(w.units, &(unit){2}, &e));
    /* The entity pool destroyed first: the table keeps its rows and
     * refuses new ones. */
    CHECK_OK(ark_table_insert_at(w.vel, e, NULL));
    ark_pool_destroy(w.units);
    w.units = NULL;
    CHECK_EQ(ark_table_count(w.vel), 1);
    CHECK_EQ(ark_table_row(w.vel, e), 0);
    CHECK_STATUS(ark_table_insert_at(w.vel, e + 1, NULL), ARK_EINVAL);
    CHECK_OK(ark_table_remove(w.vel, e));
    ark_table_destroy(w.vel);
}

TEST(attach_checks_the_ids_it_takes) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle e;
    CHECK_OK(ark_pool_insert(w.units, &(unit){1}, &e));
    ark_idset *s;
    CHECK_OK(ark_idset_create(&s, NULL));
    CHECK_OK(ark_idset_insert(s, ark_pool_id(w.units, e)));
    CHECK_OK(ark_idset_insert(s, 77)); /* no such entity */
    CHECK_STATUS(ark_pool_attach_idset(w.units, s), ARK_EINVAL);
    CHECK_OK(ark_idset_remove(s, 77));
    CHECK_OK(ark_pool_attach_idset(w.units, s));
    CHECK_STATUS(ark_pool_attach_idset(w.units, s), ARK_EINVAL);
    CHECK_STATUS(ark_pool_attach_idset(w.pos, s), ARK_EINVAL);
    CHECK(ark_pool_has_tag(w.units, s, e));
    ark_idset *loose;
    CHECK_OK(ark_idset_create(&loose, NULL));
    CHECK_STATUS(ark_pool_tag(w.units, loose, e), ARK_EINVAL);
    ark_pool_detach_idset(w.units, s);
    CHECK_OK(ark_pool_remove(w.units, e));
    CHECK_EQ(ark_idset_count(s), 1); /* detached: left alone */
    ark_idset_destroy(s);
    ark_idset_destroy(loose);
    world_free(&w);
}

/* ---- queries -------------------------------------------------------- */

TEST(query_with_without_and_tags) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_idset *frozen;
    CHECK_OK(ark_idset_create(&frozen, NULL));
    CHECK_OK(ark_pool_attach_idset(w.units, frozen));
    enum { N = 500 };
    ark_handle e[N];
    for (int k = 0; k < N; k++) {
        CHECK_OK(ark_pool_insert(w.units, &(unit){k}, &e[k]));
        if (k % 2 == 0) {
            CHECK_OK(ark_pool_insert_at(w.pos, e[k], &(vec2){(float)k, 0}));
        }
        if (k % 3 == 0) {
            size_t r;
            CHECK_OK(ark_table_insert_at(w.vel, e[k], &r));
            *vel_x(&w, r) = (float)k;
        }
        if (k % 5 == 0) {
            CHECK_OK(ark_pool_tag(w.units, w.burning, e[k]));
        }
        if (k % 7 == 0) {
            CHECK_OK(ark_pool_tag(w.units, frozen, e[k]));
        }
    }
    ark_query q;
    ark_query_init(&q, w.units);
    unsigned tp, tv;
    CHECK_OK(ark_query_with_pool(&q, w.pos, &tp));
    CHECK_OK(ark_query_with_table(&q, w.vel, &tv));
    CHECK_OK(ark_query_with_tag(&q, w.burning, NULL));
    CHECK_OK(ark_query_without_tag(&q, frozen, NULL));
    int n = 0;
    for (ark_query_iter it = ark_query_iter_begin(&q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        ark_handle h = ark_query_iter_handle(&it);
        int k = ((unit *)ark_pool_get(w.units, h))->hp;
        CHECK(k % 2 == 0 && k % 3 == 0 && k % 5 == 0 && k % 7 != 0);
        CHECK_EQ(((vec2 *)ark_query_iter_elem(&it, tp))->x, k);
        CHECK_EQ((int)*vel_x(&w, ark_query_iter_row(&it, tv)), k);
        n++;
    }
    int want = 0;
    for (int k = 0; k < N; k++) {
        want += k % 30 == 0 && k % 7 != 0;
    }
    CHECK_EQ(n, want);
    /* Without a component. */
    ark_query q2;
    ark_query_init(&q2, w.units);
    CHECK_OK(ark_query_without_pool(&q2, w.pos, NULL));
    CHECK_OK(ark_query_without_table(&q2, w.vel, NULL));
    n = 0;
    for (ark_query_iter it = ark_query_iter_begin(&q2);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        int k = ((unit *)ark_pool_get(w.units, ark_query_iter_handle(&it)))->hp;
        CHECK(k % 2 != 0 && k % 3 != 0);
        n++;
    }
    want = 0;
    for (int k = 0; k < N; k++) {
        want += k % 2 != 0 && k % 3 != 0;
    }
    CHECK_EQ(n, want);
    /* Terms of another world are refused. */
    world o;
    CHECK(world_make(&o, NULL));
    CHECK_STATUS(ark_query_with_pool(&q2, o.pos, NULL), ARK_EINVAL);
    CHECK_STATUS(ark_query_with_tag(&q2, o.burning, NULL), ARK_EINVAL);
    CHECK_STATUS(ark_query_with_pool(&q2, w.units, NULL), ARK_EINVAL);
    world_free(&o);
    ark_idset_destroy(frozen);
    world_free(&w);
}

TEST(query_skips_what_the_loop_removes) {
    world w;
    CHECK(world_make(&w, NULL));
    enum { N = 300 };
    ark_handle e[N];
    for (int k = 0; k < N; k++) {
        CHECK_OK(ark_pool_insert(w.units, &(unit){k}, &e[k]));
        CHECK_OK(ark_pool_insert_at(w.pos, e[k], &(vec2){(float)k, 0}));
        if (k % 4 == 0) {
            CHECK_OK(ark_pool_tag(w.units, w.burning, e[k]));
        }
    }
    /* Tag term driving (small set) and bitmap walk (no tag). */
    for (int pass = 0; pass < 2; pass++) {
        ark_query q;
        ark_query_init(&q, w.units);
        CHECK_OK(ark_query_with_pool(&q, w.pos, NULL));
        if (pass == 0) {
            CHECK_OK(ark_query_with_tag(&q, w.burning, NULL));
        }
        int visited = 0;
        for (ark_query_iter it = ark_query_iter_begin(&q);
             ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
            ark_handle h = ark_query_iter_handle(&it);
            unit *u = ark_pool_get(w.units, h);
            CHECK(u != NULL);
            CHECK(ark_pool_get(w.pos, h) == ark_query_iter_elem(&it, 0));
            visited++;
            /* Remove the one visited, mark the next, and drop the
             * component of the one after. */
            int k = u->hp;
            CHECK_OK(ark_pool_remove(w.units, h));
            for (int j = k + 1; j < N; j++) {
                if (ark_pool_get(w.units, e[j]) != NULL) {
                    CHECK_OK(ark_pool_remove_later(w.units, e[j]));
                    break;
                }
            }
        }
        CHECK(visited > 0);
        ark_pool_flush(w.units);
        CHECK(world_valid(&w));
    }
    world_free(&w);
}

/* ---- snapshots ------------------------------------------------------ */

/* Save w's units, pos and vel to m (burning too when tags), then load
 * them into l, in that order; l's tag set is loaded when tags, else empty,
 * and attached either way. */
static int world_roundtrip(const world *w, world *l, membuf *m, bool tags) {
    ark_writer wr = mem_writer(m);
    REQ(ark_pool_save(w->units, &wr) == ARK_OK);
    REQ(ark_pool_save(w->pos, &wr) == ARK_OK);
    REQ(ark_table_save(w->vel, &wr) == ARK_OK);
    REQ(!tags || ark_idset_save(w->burning, &wr) == ARK_OK);
    memset(l, 0, sizeof *l);
    ark_reader rd = mem_reader(m);
    ark_pool_config uc = {ARK_POOL_ELEM(unit), .index_bits = 24,
                          .gen_bits = 20};
    REQ(ark_pool_load(&l->units, &uc, &rd) == ARK_OK);
    ark_pool_config pc = {ARK_POOL_ELEM(vec2), .keys = l->units};
    REQ(ark_pool_load(&l->pos, &pc, &rd) == ARK_OK);
    ark_table_config tc = {
        .column_sizes = vel_cols, .ncolumns = 2, .keys = l->units};
    REQ(ark_table_load(&l->vel, &tc, &rd) == ARK_OK);
    REQ((tags ? ark_idset_load(&l->burning, NULL, &rd)
              : ark_idset_create(&l->burning, NULL)) == ARK_OK);
    REQ(ark_pool_attach_idset(l->units, l->burning) == ARK_OK);
    return 1;
}

TEST(a_saved_world_loads_the_same) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle e[200];
    for (int k = 0; k < 200; k++) {
        CHECK_OK(ark_pool_insert(w.units, &(unit){k}, &e[k]));
        if (k % 2 == 0) {
            CHECK_OK(ark_pool_insert_at(w.pos, e[k], &(vec2){(float)k, 1}));
        }
        if (k % 3 == 0) {
            size_t r;
            CHECK_OK(ark_table_insert_at(w.vel, e[k], &r));
            *vel_x(&w, r) = (float)k;
        }
        if (k % 5 == 0) {
            CHECK_OK(ark_pool_tag(w.units, w.burning, e[k]));
        }
    }
    for (int k = 0; k < 200; k += 7) {
        CHECK_OK(ark_pool_remove(w.units, e[k]));
    }
    CHECK_OK(ark_pool_remove_later(w.units, e[1]));
    CHECK_OK(ark_pool_remove_later(w.pos, e[4]));
    membuf m = {0};
    world l;
    CHECK(world_roundtrip(&w, &l, &m, true));
    CHECK(world_valid(&l));
    for (int k = 0; k < 200; k++) {
        CHECK_EQ(ark_pool_get(l.units, e[k]) == NULL,
                 ark_pool_get(w.units, e[k]) == NULL);
        vec2 *a = ark_pool_get(w.pos, e[k]), *b = ark_pool_get(l.pos, e[k]);
        CHECK_EQ(a == NULL, b == NULL);
        CHECK(a == NULL || memcmp(a, b, sizeof *a) == 0);
        CHECK_EQ(ark_table_row(w.vel, e[k]), ark_table_row(l.vel, e[k]));
        CHECK_EQ(ark_pool_has_tag(w.units, w.burning, e[k]),
                 ark_pool_has_tag(l.units, l.burning, e[k]));
    }
    /* The same operations afterwards give the same handles and results. */
    CHECK_EQ(ark_pool_flush(w.units), ark_pool_flush(l.units));
    CHECK_EQ(ark_pool_flush(w.pos), ark_pool_flush(l.pos));
    for (int k = 0; k < 100; k++) {
        ark_handle a, b;
        CHECK_OK(ark_pool_insert(w.units, &(unit){k}, &a));
        CHECK_OK(ark_pool_insert(l.units, &(unit){k}, &b));
        CHECK_EQ(a, b);
        CHECK_OK(ark_pool_insert_at(w.pos, a, &(vec2){0, 0}));
        CHECK_OK(ark_pool_insert_at(l.pos, b, &(vec2){0, 0}));
    }
    CHECK(world_valid(&l));
    mem_free(&m);
    world_free(&l);
    world_free(&w);
}

/* A worker claims entity handles; the owning thread creates the entities
 * and their components at them. Keyed containers take no claims and no
 * index range (their entity pool decides), and a world with claims
 * outstanding saves and loads. */
TEST(claimed_entities_take_components_once_created) {
    world w;
    CHECK(world_make(&w, NULL));
    ark_handle c[4];
    CHECK_OK(ark_pool_claim(w.units, c, 4));
    ark_handle out;
    CHECK_EQ(ark_pool_claim(w.pos, &out, 1), ARK_EINVAL);
    CHECK_EQ(ark_table_claim(w.vel, &out, 1), ARK_EINVAL);
    CHECK_EQ(ark_pool_unclaim(w.pos, c[0]), ARK_EINVAL);
    CHECK_EQ(ark_table_unclaim(w.vel, c[0]), ARK_EINVAL);
    ark_pool *bad = NULL;
    ark_pool_config rc = {ARK_POOL_ELEM(vec2), .keys = w.units, .index_min = 5,
                          .index_max = 9};
    CHECK_EQ(ark_pool_create(&bad, &rc), ARK_EINVAL);
    CHECK(bad == NULL);
    /* No component for an entity that is only claimed. */
    CHECK_EQ(ark_pool_insert_at(w.pos, c[0], &(vec2){1, 1}), ARK_ESTALE);
    CHECK_EQ(ark_pool_tag(w.units, w.burning, c[0]), ARK_ESTALE);
    CHECK_OK(ark_pool_insert_at(w.units, c[0], &(unit){10}));
    CHECK_OK(ark_pool_insert_at(w.units, c[1], &(unit){11}));
    CHECK_OK(ark_pool_insert_at(w.pos, c[0], &(vec2){1, 1}));
    size_t r;
    CHECK_OK(ark_table_insert_at(w.vel, c[1], &r));
    CHECK_OK(ark_pool_tag(w.units, w.burning, c[1]));
    CHECK(world_valid(&w));
    /* Saved with c[2] and c[3] still claimed. */
    membuf m = {0};
    world l;
    CHECK(world_roundtrip(&w, &l, &m, false));
    CHECK(world_valid(&l));
    CHECK(ark_pool_get(l.pos, c[0]) != NULL);
    CHECK(ark_table_row(l.vel, c[1]) != ARK_NO_ROW);
    CHECK_OK(ark_pool_insert_at(l.units, c[2], &(unit){12}));
    CHECK_OK(ark_pool_insert_at(l.pos, c[2], &(vec2){2, 2}));
    CHECK_OK(ark_pool_unclaim(l.units, c[3]));
    CHECK_EQ(ark_pool_insert_at(l.units, c[3], &(unit){13}), ARK_ESTALE);
    /* Removing a created claim removes its components, as any entity. */
    CHECK_OK(ark_pool_remove(l.units, c[2]));
    CHECK(ark_pool_get(l.pos, c[2]) == NULL);
    CHECK(world_valid(&l));
    mem_free(&m);
    world_free(&l);
    world_free(&w);
}

/* A hook of the second keyed container destroys the first while the
 * entity's cascade walks the list: the third still loses its element. */
typedef struct three {
    ark_pool *units, *a, *b, *c;
} three;

static void b_gone(void *elem, ark_handle h, void *user) {
    three *t = user;
    (void)elem;
    (void)h;
    if (t->a != NULL) {
        ark_pool_destroy(t->a);
        t->a = NULL;
    }
}

TEST(a_hook_that_detaches_a_container_skips_no_other) {
    three t = {0};
    ark_pool_config uc = {ARK_POOL_ELEM(unit)};
    CHECK_OK(ark_pool_create(&t.units, &uc));
    ark_pool_config bc = {ARK_POOL_ELEM(vec2), .keys = t.units,
                          .on_remove = b_gone, .user = &t};
    ark_pool_config pc = {ARK_POOL_ELEM(vec2), .keys = t.units};
    CHECK_OK(ark_pool_create(&t.a, &pc));
    CHECK_OK(ark_pool_create(&t.b, &bc));
    CHECK_OK(ark_pool_create(&t.c, &pc));
    ark_handle e;
    CHECK_OK(ark_pool_insert(t.units, &(unit){1}, &e));
    CHECK_OK(ark_pool_insert_at(t.a, e, &(vec2){1, 1}));
    CHECK_OK(ark_pool_insert_at(t.b, e, &(vec2){2, 2}));
    CHECK_OK(ark_pool_insert_at(t.c, e, &(vec2){3, 3}));
    CHECK_OK(ark_pool_remove(t.units, e));
    CHECK(t.a == NULL);
    CHECK_EQ(ark_pool_count(t.b), 0);
    CHECK_EQ(ark_pool_count(t.c), 0);
    CHECK_OK(ark_pool_validate(t.c));
    ark_pool_destroy(t.b);
    ark_pool_destroy(t.c);
    ark_pool_destroy(t.units);
}
