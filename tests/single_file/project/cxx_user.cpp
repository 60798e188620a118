/* SPDX-License-Identifier: MIT */
// A C++ translation unit on the header part of the single-file ark.h,
// linked with the C one that holds the implementation. Its check runs
// before main (a static object's constructor) and aborts on failure.
#include <ark/ark.h>

#include <cstdio>
#include <cstdlib>

namespace {

struct cxx_check {
    cxx_check() {
        ark_pool *p = nullptr;
        ark_pool_config cfg = {};
        cfg.elem_size = sizeof(int);
        ark_handle h = ARK_NULL_HANDLE;
        int v = 7;
        if (ark_pool_create(&p, &cfg) != ARK_OK ||
            ark_pool_insert(p, &v, &h) != ARK_OK) {
            std::abort();
        }
        const int *got = static_cast<const int *>(ark_pool_get(p, h));
        int n = 0;
        for (ark_pool_iter it = ark_pool_iter_begin(p);
             ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
            n++;
        }
        if (got == nullptr || *got != 7 || n != 1 ||
            ark_pool_remove(p, h) != ARK_OK || ark_pool_get(p, h) != nullptr) {
            std::abort();
        }
        ark_pool_destroy(p);
        std::printf("C++ translation unit: %s\n", ark_strerror(ARK_OK));
    }
};

const cxx_check run_before_main;

} // namespace
