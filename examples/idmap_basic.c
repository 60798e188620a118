/* SPDX-License-Identifier: MIT */
/*
 * idmap_basic.c - map external account ids to handles with ark_idmap.
 */
#include "ark/ark.h"

#include <stdio.h>

int main(void) {
    ark_idmap *accounts;
    if (ark_idmap_create(&accounts, NULL) != ARK_OK) {
        return 1;
    }
    /* Ids arrive from outside: any 64-bit value is a valid key. */
    const uint64_t ids[] = {0, 42, 9000000000123ull, UINT64_MAX};
    if (ark_idmap_reserve(accounts, 4) != ARK_OK) { /* no rehash below 4 */
        return 1;
    }
    for (uint64_t i = 0; i < 4; i++) {
        if (ark_idmap_put(accounts, ids[i], 100 + i) != ARK_OK) {
            return 1;
        }
    }
    uint64_t handle;
    if (!ark_idmap_get(accounts, 42, &handle) || handle != 101) {
        return 1;
    }
    ark_idmap_remove(accounts, 0);
    uint64_t sum = 0;
    for (ark_idmap_iter it = ark_idmap_iter_begin(accounts);
         ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {
        sum += it.value;
    }
    printf("%zu accounts, handle sum %llu\n", ark_idmap_count(accounts),
           (unsigned long long)sum);
    ark_idmap_destroy(accounts);
    return sum == 101 + 102 + 103 ? 0 : 1;
}
