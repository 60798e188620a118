/* SPDX-License-Identifier: MIT */
// idset_std.cpp - the flat arrays' set algebra for bench_idset: the STL
// algorithms over sorted uint32 arrays, the baseline of the B11 rows.
#include <algorithm>
#include <cstddef>
#include <cstdint>

extern "C" size_t ark_bench_std_merge(int op, const uint32_t *a, size_t na,
                                      const uint32_t *b, size_t nb,
                                      uint32_t *out);

// op: 0 intersection, 1 union, 2 difference, 3 intersection size (written
// to out as well: std has no counting form).
extern "C" size_t ark_bench_std_merge(int op, const uint32_t *a, size_t na,
                                      const uint32_t *b, size_t nb,
                                      uint32_t *out) {
    uint32_t *end = out;
    switch (op) {
    case 1:
        end = std::set_union(a, a + na, b, b + nb, out);
        break;
    case 2:
        end = std::set_difference(a, a + na, b, b + nb, out);
        break;
    default:
        end = std::set_intersection(a, a + na, b, b + nb, out);
        break;
    }
    return static_cast<size_t>(end - out);
}
