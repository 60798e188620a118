/* SPDX-License-Identifier: MIT */
/* A table's handle must not be accepted by a pool (the example:
 * two plain uint64 handles that ark_pool_get accepted). */
/* expect-error: no matching (member )?function */
#include "ark/ark.hpp"

struct monster {
    int hp;
};

bool use(ark::pool<monster> &monsters, ark::table &rows) {
    ark::table::handle_type row = rows.insert();
    ark::handle<monster> m = monsters.insert(monster{1});
#ifdef ARK_COMPILE_FAIL
    return monsters.get(row) != nullptr;
#else
    return monsters.get(m) != nullptr && rows.contains(row);
#endif
}
