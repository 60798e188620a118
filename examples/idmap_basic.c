/* SPDX-License-Identifier: MIT */
/*
 * idmap_basic.c - map external account ids to handles with ark_idmap.
 * docs/idmap.md shows its region.
 */
#include <ark/ark.h>
#include <stdio.h>

int main(void) {
    // [usage]
    ark_idmap *accounts;
    if (ark_idmap_create(&accounts, NULL) != ARK_OK ||
        ark_idmap_reserve(accounts, 1000) != ARK_OK) { /* no rehash below */
        return 1;
    }
    /* Ids arrive from outside: any 64-bit value is a valid key. */
    const uint64_t ids[] = {0, 42, 9000000000123ull, UINT64_MAX};
    for (uint64_t i = 0; i < 4; i++) {
        if (ark_idmap_put(accounts, ids[i], 100 + i) != ARK_OK) {
            return 1; /* put inserts or overwrites */
        }
    }
    ark_status dup = ark_idmap_insert(accounts, 42, 7);    /* ARK_EEXIST */
    const uint64_t *handle = ark_idmap_find(accounts, 42); /* -> 101 */
    bool found = handle != NULL;
    uint64_t old = 0;
    bool taken = ark_idmap_take(accounts, 0, &old); /* removed; old 100 */
    uint64_t sum = 0;
    for (ark_idmap_iter it = ark_idmap_iter_begin(accounts);
         ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {
        sum += it.value; /* it.key, it.value, in table order */
    }
    // [usage]
    printf("%zu accounts, handle sum %llu\n", ark_idmap_count(accounts),
           (unsigned long long)sum);
    int ok = dup == ARK_EEXIST && found && *handle == 101 && taken &&
             old == 100 && sum == 101 + 102 + 103 &&
             ark_idmap_count(accounts) == 3;
    ark_idmap_destroy(accounts);
    return ok ? 0 : 1;
}
