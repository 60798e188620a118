/* SPDX-License-Identifier: MIT */
/* Copying a pool must not compile: a pool is move-only. */
/* expect-error: deleted */
#include "ark/ark.hpp"

#include <utility>

struct monster {
    int hp;
};

size_t use(ark::pool<monster> &monsters) {
#ifdef ARK_COMPILE_FAIL
    ark::pool<monster> copy = monsters;
#else
    ark::pool<monster> copy = std::move(monsters);
#endif
    return copy.size();
}
