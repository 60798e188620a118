/* SPDX-License-Identifier: MIT */
/* components of different types do not mix: a velocity is not given to
 * the position store, even for the right entity. */
/* expect-error: no matching (member )?function */
#include "ark/ark.hpp"

struct unit {
    int hp;
};
struct position {
    float x, y;
};
struct velocity {
    float dx, dy;
};

int use(ark::pool<unit> &units, ark::components<position, unit> &positions,
        ark::components<velocity, unit> &velocities) {
    ark::handle<unit> u = units.insert(unit{10});
#ifdef ARK_COMPILE_FAIL
    position *p = positions.insert(u, velocity{1, 0});
#else
    position *p = positions.insert(u, position{1, 0});
#endif
    return p != nullptr && velocities.get(u) == nullptr;
}
