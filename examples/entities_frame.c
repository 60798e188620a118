/* SPDX-License-Identifier: MIT */
/*
 * entities_frame.c - a game frame with entities, components and tags:
 * spawn units, give them components, tag some, run a query that moves
 * them, despawn a unit whose removal hook despawns its escorts, then save
 * the world and load it back.
 */
#include <ark/ark.h>
#include <stdio.h>

// [types]
typedef struct unit {
    int hp;
    ark_handle leader; /* an escort follows its leader, and dies with it */
} unit;

typedef struct vec2 {
    float x, y;
} vec2;

typedef struct world {
    ark_pool *units;      /* the entities */
    ark_pool *pos, *vel;  /* components, keyed by units */
    ark_idset *burning;   /* a tag */
    ark_handle escort[8]; /* whom the hook despawns with their leader */
    int nescort;
} world;
// [types]

// [hook]
/* A unit's removal hook may call back into any container: despawning
 * the escorts here runs right after this hook, with their own hooks. */
static void unit_gone(void *elem, ark_handle h, void *user) {
    world *w = user;
    (void)elem;
    for (int k = 0; k < w->nescort; k++) {
        unit *e = ark_pool_get(w->units, w->escort[k]);
        if (e != NULL && e->leader == h) {
            ark_pool_remove(w->units, w->escort[k]);
        }
    }
}
// [hook]

static int make(world *w) {
    // [create]
    ark_pool_config uc = {ARK_POOL_ELEM(unit), .on_remove = unit_gone,
                          .user = w};
    ark_pool_config cc = {ARK_POOL_ELEM(vec2)};
    if (ark_pool_create(&w->units, &uc) != ARK_OK) {
        return 0;
    }
    cc.keys = w->units; /* one handle per entity, in every container */
    if (ark_pool_create(&w->pos, &cc) != ARK_OK ||
        ark_pool_create(&w->vel, &cc) != ARK_OK ||
        ark_idset_create(&w->burning, NULL) != ARK_OK ||
        ark_pool_attach_idset(w->units, w->burning) != ARK_OK) {
        return 0;
    }
    // [create]
    return 1;
}

static void destroy(world *w) {
    ark_pool_destroy(w->pos); /* any order: either side detaches */
    ark_pool_destroy(w->vel);
    ark_idset_destroy(w->burning);
    ark_pool_destroy(w->units);
}

static int frame(world *w, ark_handle *leader) {
    // [spawn]
    ark_handle e;
    for (int k = 0; k < 10; k++) {
        unit *u = ark_pool_alloc(w->units, &e); /* zeroed, padding too */
        if (u == NULL ||
            ark_pool_insert_at(w->pos, e, &(vec2){(float)k, 0}) != ARK_OK) {
            return 0;
        }
        u->hp = 100; /* set field by field: the saved bytes are all known */
        u->leader = *leader;
        if (k % 2 == 0) { /* half of them move */
            ark_pool_insert_at(w->vel, e, &(vec2){1, 2});
        }
        if (k % 3 == 0) {
            ark_pool_tag(w->units, w->burning, e);
        }
        if (k == 0) {
            *leader = e; /* the others escort the first */
        } else if (w->nescort < 8) {
            w->escort[w->nescort++] = e;
        }
    }
    // [spawn]
    // [query]
    ark_query q; /* units with a position and a velocity, not burning */
    ark_query_init(&q, w->units);
    ark_query_with_pool(&q, w->pos, NULL); /* term 0 */
    ark_query_with_pool(&q, w->vel, NULL); /* term 1 */
    ark_query_without_tag(&q, w->burning, NULL);
    int moved = 0;
    for (ark_query_iter it = ark_query_iter_begin(&q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        vec2 *p = ark_query_iter_elem(&it, 0);
        const vec2 *v = ark_query_iter_elem(&it, 1);
        p->x += v->x; /* no call per element */
        p->y += v->y;
        moved++;
    }
    // [query]
    printf("moved %d units\n", moved);
    ark_pool_remove(w->units, *leader); /* its escorts, components, tag */
    printf("units %zu, positions %zu, burning %zu\n", ark_pool_count(w->units),
           ark_pool_count(w->pos), ark_idset_count(w->burning));
    return moved == 3 && ark_pool_count(w->units) == 1 &&
           ark_pool_count(w->pos) == 1 && ark_idset_count(w->burning) == 1;
}

/* Save the world into memory and load it into l: the same handles, bytes
 * and tags. */
static int save_load(const world *w, world *l) {
    // [snapshot]
    ark_membuf buf = {0};
    ark_writer out = ark_membuf_writer(&buf);
    ark_status st = ark_pool_save(w->units, &out);
    st = st == ARK_OK ? ark_pool_save(w->pos, &out) : st;
    st = st == ARK_OK ? ark_pool_save(w->vel, &out) : st;
    st = st == ARK_OK ? ark_idset_save(w->burning, &out) : st;

    ark_bytes bytes = {buf.data, buf.size, 0};
    ark_reader in = ark_bytes_reader(&bytes);
    ark_pool_config uc = {ARK_POOL_ELEM(unit)}, cc = {ARK_POOL_ELEM(vec2)};
    st = st == ARK_OK ? ark_pool_load(&l->units, &uc, &in) : st;
    cc.keys = l->units; /* each element is checked against the entities */
    st = st == ARK_OK ? ark_pool_load(&l->pos, &cc, &in) : st;
    st = st == ARK_OK ? ark_pool_load(&l->vel, &cc, &in) : st;
    st = st == ARK_OK ? ark_idset_load(&l->burning, NULL, &in) : st;
    st = st == ARK_OK ? ark_pool_attach_idset(l->units, l->burning) : st;
    ark_membuf_free(&buf);
    // [snapshot]
    return st == ARK_OK;
}

int main(void) {
    world w = {0}, l = {0};
    ark_handle leader = ARK_NULL_HANDLE;
    int ok = make(&w) && frame(&w, &leader) && save_load(&w, &l);
    if (ok) {
        for (ark_pool_iter it = ark_pool_iter_begin(w.units);
             ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
            const vec2 *a = ark_pool_get(w.pos, it.handle);
            const vec2 *b = ark_pool_get(l.pos, it.handle);
            ok = ok && a != NULL && b != NULL && a->x == b->x;
        }
        printf("loaded: units %zu, positions %zu\n", ark_pool_count(l.units),
               ark_pool_count(l.pos));
    }
    destroy(&w);
    destroy(&l);
    return ok ? 0 : 1;
}
