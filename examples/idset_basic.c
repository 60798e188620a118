/* SPDX-License-Identifier: MIT */
#include <ark/ark.h>
#include <stdio.h>

int main(void) {
    ark_idset *s;
    if (ark_idset_create(&s, NULL) != ARK_OK)
        return 1;
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

    uint32_t buf[256];
    uint64_t sum = 0;
    for (size_t p = 0, n; (n = ark_idset_copy(s, p, buf, 256)) > 0; p += n) {
        for (size_t i = 0; i < n; i++) {
            sum += buf[i];
        }
    }
    printf("count %zu, at(2) %u, find(300) %zu, lower_bound(301) %zu, "
           "sum %llu\n",
           ark_idset_count(s), (unsigned)third, pos, lb,
           (unsigned long long)sum);
    int ok = dup == ARK_EEXIST && third == 9 && pos == 100 && lb == 101 &&
             rs == ARK_OK && ark_idset_count(s) == 998 &&
             sum == 1501500ull + 10 - 3 - 6 - 300;
    ark_idset_destroy(s);
    return ok ? 0 : 1;
}
