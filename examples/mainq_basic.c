/* SPDX-License-Identifier: MIT */
/*
 * mainq_basic.c - results posted to the main thread's queue and run there,
 * at most one expensive task per frame. The posts come from the main
 * thread here; examples/frame_loop.c posts from a loader thread.
 * docs/mainq.md shows its region.
 */
#include <ark/ark.h>
#include <stdio.h>

static int uploaded;

static void on_texture_loaded(void *arg) {
    const int *id = arg;
    printf("upload texture %d\n", *id);
    uploaded++;
}

int main(void) {
    int ids[3] = {1, 2, 3};
    // [usage]
    ark_mainq *q;
    if (ark_mainq_create(&q, NULL) != ARK_OK) {
        return 1;
    }
    /* Any thread: */
    for (int i = 0; i < 3; i++) {
        if (ark_mainq_post(q, on_texture_loaded, &ids[i]) != ARK_OK) {
            return 1; /* ARK_ENOMEM: not queued */
        }
    }
    /* The main loop, once per frame: */
    size_t ran = ark_mainq_run(q, 1); /* at most one upload a frame */
    /* (ark_mainq_run(q, 0) runs every task queued when it started.) */

    /* Shutdown: stop and join the workers, then */
    size_t rest = ark_mainq_drain(q); /* run until empty */
    ark_mainq_destroy(q);             /* would discard, not run, the rest */
    // [usage]
    return ran == 1 && rest == 2 && uploaded == 3 ? 0 : 1;
}
