/* SPDX-License-Identifier: MIT */
#include <ark/ark.h>
#include <stdio.h>

typedef struct unit {
    float x, y;
    int hp;
} unit;

int main(void) {
    ark_pool *units;
    ark_pool_config cfg = {ARK_POOL_ELEM(unit)};
    ark_handle h;
    if (ark_pool_create(&units, &cfg) != ARK_OK ||
        ark_pool_insert(units, &(unit){1, 2, 100}, &h) != ARK_OK) {
        return 1;
    }
    for (ark_pool_iter it = ark_pool_iter_begin(units);
         ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
        ((unit *)it.elem)->hp -= 30; /* no call per element */
    }
    unit *u = ark_pool_get(units, h); /* NULL for any bad handle */
    printf("hp %d\n", u->hp);
    ark_pool_remove(units, h);
    ark_status s = ark_pool_check(units, h); /* ARK_ESTALE: gone for good */
    printf("after remove: %s\n", ark_strerror(s));
    ark_pool_destroy(units);
    return s == ARK_ESTALE ? 0 : 1;
}
