/* SPDX-License-Identifier: MIT */
/*
 * idset_basic.c - the entities that have a component, as an ark_idset:
 * access by position, search, a frame's batch of removals, iteration and
 * an "entities with A and B" query. docs/idset.md shows its regions.
 */
#include <ark/ark.h>
#include <stdio.h>

int main(void) {
    // [usage]
    ark_idset *s;
    if (ark_idset_create(&s, NULL) != ARK_OK) {
        return 1;
    }
    for (uint32_t e = 1; e <= 1000; e++) {
        ark_idset_insert(s, e * 3); /* appends: O(1) amortized */
    }
    ark_idset_insert(s, 10);                   /* ARK_OK, in order */
    ark_status dup = ark_idset_insert(s, 10);  /* ARK_EEXIST */
    uint32_t third = ark_idset_at(s, 2);       /* 9: O(1) */
    size_t pos = ark_idset_find(s, 300);       /* 100 */
    size_t lb = ark_idset_lower_bound(s, 301); /* 101: id 303 */
    uint32_t dead[] = {3, 6, 7, 300};          /* a frame's removals */
    ark_status rs = ark_idset_remove_sorted(s, dead, 4); /* 7 is ignored */
    // [usage]

    // [iter]
    uint64_t sum = 0;
    for (ark_idset_iter it = ark_idset_iter_begin(s, 0);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        sum += it.id; /* it.pos is its position */
    }
    // [iter]

    // [copy]
    uint32_t buf[256];
    uint64_t copied = 0;
    for (size_t p = 0, n; (n = ark_idset_copy(s, p, buf, 256)) > 0; p += n) {
        for (size_t i = 0; i < n; i++) {
            copied += buf[i];
        }
    }
    // [copy]

    // [query]
    /* s: entities with a position. moving: entities with a velocity. */
    ark_idset *moving, *both;
    if (ark_idset_create(&moving, NULL) != ARK_OK ||
        ark_idset_create(&both, NULL) != ARK_OK) {
        return 1;
    }
    for (uint32_t e = 0; e < 3000; e += 2) {
        ark_idset_insert(moving, e);
    }
    ark_status qs = ark_idset_intersect(both, s, moving); /* ids in both */
    size_t nboth = ark_idset_intersect_count(s, moving);  /* no set built */
    // [query]

    printf("count %zu, at(2) %u, find(300) %zu, lower_bound(301) %zu, "
           "sum %llu, %zu with both\n",
           ark_idset_count(s), (unsigned)third, pos, lb,
           (unsigned long long)sum, ark_idset_count(both));
    int ok = dup == ARK_EEXIST && third == 9 && pos == 100 && lb == 101 &&
             rs == ARK_OK && ark_idset_count(s) == 998 &&
             sum == 1501500ull + 10 - 3 - 6 - 300 && copied == sum &&
             qs == ARK_OK && nboth == ark_idset_count(both) &&
             ark_idset_validate(both) == ARK_OK;
    ark_idset_destroy(both);
    ark_idset_destroy(moving);
    ark_idset_destroy(s);
    return ok ? 0 : 1;
}
