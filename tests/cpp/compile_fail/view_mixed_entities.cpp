/* SPDX-License-Identifier: MIT */
/* A view walks the entities of one type: components keyed by units and
 * components keyed by bullets do not make one view. */
/* expect-error: keyed by entities of the view's entity type */
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
struct velocity {
    float dx, dy;
};

float use(ark::components<position, unit> &unit_pos,
          ark::components<velocity, unit> &unit_vel,
          ark::components<velocity, bullet> &bullet_vel) {
    float sum = 0;
#ifdef ARK_COMPILE_FAIL
    for (auto [e, p, v] : ark::view(unit_pos, bullet_vel)) {
#else
    (void)bullet_vel;
    for (auto [e, p, v] : ark::view(unit_pos, unit_vel)) {
#endif
        (void)e;
        sum += p.x + v.dx;
    }
    return sum;
}
