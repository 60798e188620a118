/* SPDX-License-Identifier: MIT */
/*
 * frame_loop.c - a game frame loop with ref-counted textures.
 *
 * A loader thread "decodes" textures and posts each completion to the main
 * queue. Each frame the main thread uploads at most one texture
 * (ark_mainq_run(q, 1)), caches it, spawns a sprite that uses it into an
 * ark_pool, and drains the autorelease pool at frame end. The cache is an
 * ark_refmap from texture id to texture.
 */
#define _POSIX_C_SOURCE 200809L

#include <ark/ark.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define TEXTURES 4

typedef struct texture {
    ark_ref ref; /* first member */
    int id;
} texture;

typedef struct sprite {
    ark_ref *tex; /* one reference held by the sprite */
    float x, y;
} sprite;

static int textures_freed;

static void texture_destroy(ark_ref *r) {
    printf("texture %d freed\n", ((texture *)r)->id);
    textures_freed++;
    free(r);
}

/* The pool's remove hook: a despawned sprite drops its texture. */
static void sprite_removed(void *elem, ark_handle h, void *user) {
    (void)h;
    (void)user;
    ark_ref_release(((sprite *)elem)->tex);
}

typedef struct game {
    ark_mainq *mainq;
    ark_refmap *cache; /* texture id -> texture */
    ark_autorelease_pool *frame_pool;
    ark_pool *sprites;
    int errors;
} game;

typedef struct loaded {
    game *g;
    texture *tex;
} loaded;

/* Main thread: "upload" the texture, cache it, spawn a sprite with it. */
static void upload(void *arg) {
    loaded *l = (loaded *)arg;
    game *g = l->g;
    sprite s = {ark_ref_retain(&l->tex->ref), (float)l->tex->id, 0.0f};
    if (ark_refmap_put(g->cache, (uint64_t)l->tex->id, &l->tex->ref) !=
            ARK_OK ||
        ark_pool_insert(g->sprites, &s, NULL) != ARK_OK ||
        ark_autorelease(g->frame_pool, &l->tex->ref) != ARK_OK) {
        g->errors++;
    }
    printf("uploaded texture %d\n", l->tex->id);
    free(l);
}

/* Loader thread: decode, then hand the result to the main thread. */
static void *loader(void *arg) {
    game *g = (game *)arg;
    for (int i = 0; i < TEXTURES; i++) {
        loaded *l = (loaded *)malloc(sizeof *l);
        texture *t = (texture *)malloc(sizeof *t);
        if (l == NULL || t == NULL) {
            free(l);
            free(t);
            return NULL;
        }
        ark_ref_init(&t->ref, texture_destroy);
        t->id = i;
        l->g = g;
        l->tex = t;
        if (ark_mainq_post(g->mainq, upload, l) != ARK_OK) {
            free(l);
            free(t);
        }
    }
    return NULL;
}

int main(void) {
    game g = {0};
    ark_pool_config cfg = {.elem_size = sizeof(sprite),
                           .on_remove = sprite_removed};
    if (ark_mainq_create(&g.mainq, NULL) != ARK_OK ||
        ark_refmap_create(&g.cache, NULL) != ARK_OK ||
        ark_autorelease_pool_create(&g.frame_pool, NULL) != ARK_OK ||
        ark_pool_create(&g.sprites, &cfg) != ARK_OK) {
        return 1;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, loader, &g) != 0) {
        return 1;
    }
    int frame = 0;
    while (ark_refmap_count(g.cache) < TEXTURES && frame < 1000000) {
        frame++;
        ark_mainq_run(g.mainq, 1); /* one upload per frame */
        ark_autorelease_drain(g.frame_pool);
        if (ark_mainq_pending(g.mainq) == 0) {
            sched_yield(); /* a real game would render here */
        }
    }
    pthread_join(th, NULL);
    /* Each texture: one reference from the cache, one from its sprite. */
    for (uint64_t id = 0; id < TEXTURES; id++) {
        ark_ref *t = ark_refmap_get(g.cache, id); /* borrowed */
        if (t == NULL || ark_ref_count(t) != 2) {
            g.errors++;
        }
    }
    printf("%zu textures after %d frames\n", ark_refmap_count(g.cache), frame);
    ark_pool_clear(g.sprites, true); /* despawn: sprites drop textures */
    ark_refmap_destroy(g.cache);     /* level unload: textures freed */
    ark_autorelease_pool_destroy(g.frame_pool);
    ark_pool_destroy(g.sprites);
    ark_mainq_destroy(g.mainq);
    return g.errors == 0 && textures_freed == TEXTURES ? 0 : 1;
}
