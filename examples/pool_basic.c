#include <ark/ark.h>
#include <stdio.h>

typedef struct unit {
    float x, y;
    int hp;
} unit;

int main(void) {
    ark_pool *units;
    ark_pool_config cfg = {.elem_size = sizeof(unit), .elem_align = 4};
    if (ark_pool_create(&units, &cfg) != ARK_OK)
        return 1;
    ark_handle h;
    unit u = {1.0f, 2.0f, 100};
    if (ark_pool_insert(units, &u, &h) != ARK_OK)
        return 1;
    unit *p = ark_pool_get(units, h); /* NULL for any bad handle */
    p->hp -= 30;
    for (ark_pool_iter it = ark_pool_iter_begin(units);
         ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
        printf("unit %llx hp %d\n", (unsigned long long)it.handle,
               ((unit *)it.elem)->hp);
    }
    ark_pool_remove(units, h);
    ark_status s = ark_pool_check(units, h); /* ARK_ESTALE */
    printf("after remove: %s\n", ark_strerror(s));
    ark_pool_destroy(units);
    return s == ARK_ESTALE ? 0 : 1;
}
