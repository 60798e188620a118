/* SPDX-License-Identifier: MIT */
/*
 * pool_frame.c - one frame of a game server with ark_pool: a unit dies
 * during the frame and is swept at its end, its removal hook removes its
 * pet with it, and a client names units by sealed handles. docs/pool.md
 * shows its regions.
 */
#include <ark/ark.h>
#include <stdio.h>

// [hook]
typedef struct unit {
    float x, y;
    int hp;
    ark_handle pet; /* removed with its owner; 0 for none */
} unit;

typedef struct world {
    ark_pool *units;
    int removed;
} world;

/* Runs once for every removed unit, with its handle. A hook may call back
 * into its pool: the pet's removal runs right after this hook returns. */
static void unit_removed(void *elem, ark_handle h, void *user) {
    world *w = user;
    unit *u = elem;
    (void)h;
    w->removed++;
    if (u->pet != ARK_NULL_HANDLE) {
        ark_pool_remove(w->units, u->pet); /* ARK_ESTALE if already gone */
    }
}
// [hook]

int main(void) {
    world w = {0};
    // [usage]
    ark_pool_config cfg = {ARK_POOL_ELEM(unit), .on_remove = unit_removed,
                           .user = &w};
    if (ark_pool_create(&w.units, &cfg) != ARK_OK) {
        return 1;
    }
    ark_handle ogre, wolf;
    unit *o = ark_pool_alloc(w.units, &ogre); /* zeroed, address stable */
    unit *pet = ark_pool_alloc(w.units, &wolf);
    if (o == NULL || pet == NULL) {
        return 1;
    }
    o->hp = 100; /* fields set one by one: the padding stays zero */
    o->pet = wolf;
    pet->hp = 30;

    /* During the frame: the ogre dies. */
    o->hp -= 120;
    if (o->hp <= 0) {
        ark_pool_remove_later(w.units, ogre); /* get gives NULL at once */
    }
    /* At frame end: hooks run (the wolf goes too), slots are freed. */
    size_t swept = ark_pool_flush(w.units);
    // [usage]

    ark_handle h;
    if (ark_pool_insert(w.units, &(unit){.hp = 50}, &h) != ARK_OK) {
        return 1;
    }
    // [seal]
    uint64_t wire = ark_pool_seal(w.units, h);        /* to the client */
    ark_handle back = ark_pool_unseal(w.units, wire); /* from the client */
    unit *u = ark_pool_get(w.units, back);            /* NULL unless live */
    // [seal]
    /* A changed wire value names no live unit, bar chance. */
    unit *forged = ark_pool_get(w.units, ark_pool_unseal(w.units, wire ^ 1));

    printf("swept %zu, hooks ran %d times, %zu left, sealed %s\n", swept,
           w.removed, ark_pool_count(w.units),
           u != NULL && u->hp == 50 ? "resolves" : "is lost");
    int ok = swept == 1 && w.removed == 2 && ark_pool_count(w.units) == 1 &&
             ark_pool_get(w.units, ogre) == NULL &&
             ark_pool_check(w.units, wolf) == ARK_ESTALE && u != NULL &&
             u->hp == 50 && forged == NULL;
    ark_pool_destroy(w.units);
    return ok ? 0 : 1;
}
