/* SPDX-License-Identifier: MIT */
/* A raw uint64 must not become a typed handle implicitly (a forged or
 * foreign value must be named as such: ark::handle<T>(raw)). */
/* expect-error: no matching (member )?function */
#include "ark/ark.hpp"

struct monster {
    int hp;
};

bool use(ark::pool<monster> &monsters, uint64_t from_wire) {
#ifdef ARK_COMPILE_FAIL
    return monsters.get(from_wire) != nullptr;
#else
    return monsters.get(monsters.unseal(from_wire)) != nullptr;
#endif
}
