/* SPDX-License-Identifier: MIT */
/* components<position, unit> is keyed by handle<unit>: a handle<bullet>
 * does not fit, in any of its calls. */
/* expect-error: no matching (member )?function */
#include "ark/ark.hpp"

struct unit {
    int hp;
};
struct bullet {
    float x, y;
};
struct position {
    float x, y;
};

int use(ark::pool<unit> &units, ark::pool<bullet> &bullets,
        ark::components<position, unit> &positions) {
    ark::handle<unit> u = units.insert(unit{10});
    ark::handle<bullet> b = bullets.insert(bullet{1, 2});
#ifdef ARK_COMPILE_FAIL
    position *p = positions.insert(b, position{0, 0});
#else
    position *p = positions.insert(u, position{0, 0});
#endif
    return p != nullptr && bullets.get(b) != nullptr;
}
