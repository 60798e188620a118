/* SPDX-License-Identifier: MIT */
/*
 * A program that uses ark the way a consumer project does: the umbrella
 * header, a pool (virtual memory), an idmap (OS entropy) and a mainq
 * (the mutex), so each integration path must carry ark's system
 * libraries too.
 */
#include <ark/ark.h>

#include <stdio.h>

static void bump(void *arg) { ++*(int *)arg; }

int main(void) {
    ark_pool_config cfg = {0};
    cfg.elem_size = sizeof(int);
    ark_pool *pool = NULL;
    ark_idmap *map = NULL;
    ark_mainq *q = NULL;
    if (ark_pool_create(&pool, &cfg) != ARK_OK ||
        ark_idmap_create(&map, NULL) != ARK_OK ||
        ark_mainq_create(&q, NULL) != ARK_OK) {
        fprintf(stderr, "create failed\n");
        return 1;
    }
    int v = 41;
    ark_handle h = ARK_NULL_HANDLE;
    uint64_t got = 0;
    int ok = ark_pool_insert(pool, &v, &h) == ARK_OK &&
             ark_idmap_put(map, 7, h) == ARK_OK &&
             ark_idmap_get(map, 7, &got) && got == h &&
             ark_mainq_post(q, bump, ark_pool_get(pool, h)) == ARK_OK &&
             ark_mainq_run(q, 0) == 1 && *(int *)ark_pool_get(pool, h) == 42;
    ark_mainq_destroy(q);
    ark_idmap_destroy(map);
    ark_pool_destroy(pool);
    printf("ark %d.%d.%d: %s\n", ARK_VERSION_MAJOR, ARK_VERSION_MINOR,
           ARK_VERSION_PATCH, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
