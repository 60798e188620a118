/* SPDX-License-Identifier: MIT */
/*
 * claim_worker.c - handles claimed on a worker thread, elements created
 * on the main thread.
 *
 * An AI worker decides that turrets fire. It needs each projectile's
 * handle at once, to write it into the orders it hands back (here: the
 * turret's "last shot"), so it claims the handles (ark_pool_claim: no
 * lock, it never waits for the main thread) and posts one task per shot
 * to the main thread's ark_mainq. Each frame the main thread runs the
 * queued tasks, which create the projectiles at exactly the claimed
 * handles (ark_pool_insert_at); a shot called off before its task ran is
 * given back instead (ark_pool_unclaim). Meanwhile the main thread keeps
 * spawning and removing its own objects in the same pool.
 */
#define _POSIX_C_SOURCE 200809L

#include <ark/ark.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define TURRETS 8
#define VOLLEYS 50

typedef struct projectile {
    float x, y, vx, vy;
    int turret;
} projectile;

typedef struct world {
    ark_pool *projectiles; /* owned by the main thread */
    ark_mainq *mainq;
    /* written by the worker, read by the main thread after the join */
    ark_handle last_shot[TURRETS];
    int errors;
} world;

typedef struct fire_order {
    world *w;
    ark_handle h; /* claimed on the worker */
    projectile p;
    int called_off;
} fire_order;

// [commit]
/* Main thread: create the projectile at its claimed handle, or give the
 * handle back. */
static void fire(void *arg) {
    fire_order *o = arg;
    ark_status st = o->called_off
                        ? ark_pool_unclaim(o->w->projectiles, o->h)
                        : ark_pool_insert_at(o->w->projectiles, o->h, &o->p);
    if (st != ARK_OK) {
        o->w->errors++;
    }
    free(o);
}
// [commit]

/* Worker: each volley, every turret fires one projectile. */
static void *ai_worker(void *arg) {
    world *w = arg;
    for (int v = 0; v < VOLLEYS; v++) {
        // [claim]
        ark_handle shots[TURRETS];
        if (ark_pool_claim(w->projectiles, shots, TURRETS) != ARK_OK) {
            return NULL; /* ARK_EFULL: no index left */
        }
        for (int t = 0; t < TURRETS; t++) {
            fire_order *o = malloc(sizeof *o);
            if (o == NULL) {
                return NULL; /* the claim stays outstanding: clear drops it */
            }
            o->w = w;
            o->h = shots[t];
            o->p = (projectile){(float)t, 0.0f, 0.0f, 1.0f, t};
            o->called_off = (v + t) % 7 == 0; /* the target died meanwhile */
            w->last_shot[t] = o->called_off ? w->last_shot[t] : shots[t];
            while (ark_mainq_post(w->mainq, fire, o) != ARK_OK) {
                sched_yield();
            }
        }
        // [claim]
    }
    return NULL;
}

int main(void) {
    world w = {0};
    ark_pool_config cfg = {ARK_POOL_ELEM(projectile)};
    if (ark_pool_create(&w.projectiles, &cfg) != ARK_OK ||
        ark_mainq_create(&w.mainq, NULL) != ARK_OK) {
        return 1;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, ai_worker, &w) != 0) {
        return 1;
    }
    /* The frame loop: the main thread's own spawns and despawns, the
     * worker's shots, the frame-end flush (which also sets freed slots
     * aside for later claims). */
    ark_handle mine[64] = {0};
    for (int frame = 0; frame < 200; frame++) {
        projectile p = {0.0f, 0.0f, 1.0f, 0.0f, -1};
        ark_handle *slot = &mine[frame % 64];
        if (*slot != ARK_NULL_HANDLE) {
            ark_pool_remove(w.projectiles, *slot);
        }
        ark_pool_insert(w.projectiles, &p, slot);
        ark_mainq_run(w.mainq, 0);
        for (ark_pool_iter it = ark_pool_iter_begin(w.projectiles);
             ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
            projectile *q = it.elem;
            q->x += q->vx;
            q->y += q->vy;
        }
        ark_pool_flush(w.projectiles);
        sched_yield();
    }
    pthread_join(th, NULL);
    ark_mainq_drain(w.mainq); /* the shots posted last */
    /* Every turret's last shot is a live projectile of that turret. */
    for (int t = 0; t < TURRETS; t++) {
        const projectile *q = ark_pool_get(w.projectiles, w.last_shot[t]);
        if (q == NULL || q->turret != t) {
            w.errors++;
        }
    }
    printf("%zu projectiles, %d errors\n", ark_pool_count(w.projectiles),
           w.errors);
    ark_mainq_destroy(w.mainq);
    ark_pool_destroy(w.projectiles);
    return w.errors == 0 ? 0 : 1;
}
