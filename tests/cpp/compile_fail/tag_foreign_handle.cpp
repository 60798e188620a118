/* SPDX-License-Identifier: MIT */
/* tag<unit> holds units: a handle<bullet> is not tagged, nor tested. */
/* expect-error: (cannot convert|no viable conversion).*handle<bullet> */
#include "ark/ark.hpp"

struct unit {
    int hp;
};
struct bullet {
    float x, y;
};

bool use(ark::pool<unit> &units, ark::pool<bullet> &bullets,
         ark::tag<unit> &frozen) {
    ark::handle<unit> u = units.insert(unit{10});
    ark::handle<bullet> b = bullets.insert(bullet{1, 2});
#ifdef ARK_COMPILE_FAIL
    return frozen.insert(b);
#else
    return frozen.insert(u) && bullets.get(b) != nullptr;
#endif
}
