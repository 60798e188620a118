/* SPDX-License-Identifier: MIT */
/*
 * ref_basic.c - a texture counted by ark_ref, held by a cache (an
 * ark_refvec) and by the frame that made it (an ark_autorelease_pool),
 * freed when the last holder lets go. docs/ref.md shows its region.
 */
#include <ark/ark.h>
#include <stdio.h>
#include <stdlib.h>

// [texture]
typedef struct texture {
    ark_ref ref; /* first member */
    unsigned gl_name;
} texture;

static void texture_destroy(ark_ref *r) {
    texture *t = (texture *)r;
    printf("delete texture %u\n", t->gl_name); /* glDeleteTextures */
    free(t);
}
// [texture]

int main(void) {
    ark_refvec *cache;
    ark_autorelease_pool *frame_pool;
    if (ark_refvec_create(&cache, NULL) != ARK_OK ||
        ark_autorelease_pool_create(&frame_pool, NULL) != ARK_OK) {
        return 1;
    }
    // [usage]
    texture *t = malloc(sizeof *t);
    if (t == NULL) {
        return 1;
    }
    ark_ref_init(&t->ref, texture_destroy); /* count 1: ours */
    t->gl_name = 7;
    if (ark_refvec_push(cache, &t->ref) != ARK_OK ||      /* count 2 */
        ark_autorelease(frame_pool, &t->ref) != ARK_OK) { /* ours, later */
        return 1;
    }
    /* ... end of frame ... */
    ark_autorelease_drain(frame_pool); /* count 1: the cache's */
    texture *same = (texture *)ark_refvec_at(cache, 0); /* borrowed */
    uint32_t count = ark_ref_count(&same->ref);         /* still 1 */
    ark_refvec_destroy(cache); /* count 0: texture_destroy runs */
    // [usage]
    ark_autorelease_pool_destroy(frame_pool);
    return count == 1 ? 0 : 1;
}
