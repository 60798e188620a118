/* SPDX-License-Identifier: MIT */
/* A user's file with the implementation in it, built at -O3 by the
 * single_file.release entry: the library's insert inlines here and meets
 * a 16-byte element the compiler can see, which is where array-bounds
 * warnings about the library's copies would show. Exits 0 when the pool
 * holds what was put in. */
#define ARK_IMPLEMENTATION
#include <ark/ark.h>

typedef struct particle {
    float x, y, vx, vy;
} particle;

int main(void) {
    ark_pool *p;
    ark_pool_config cfg = {ARK_POOL_ELEM(particle)};
    if (ark_pool_create(&p, &cfg) != ARK_OK) {
        return 1;
    }
    ark_handle last = ARK_NULL_HANDLE;
    for (int i = 0; i < 1000; i++) {
        particle e = {(float)i, 0.0f, 1.0f, -1.0f};
        if (ark_pool_insert(p, &e, &last) != ARK_OK) {
            return 1;
        }
    }
    const particle *q = ark_pool_get(p, last);
    int ok = q != NULL && q->x == 999.0f && ark_pool_count(p) == 1000;
    ark_pool_destroy(p);
    return ok ? 0 : 1;
}
