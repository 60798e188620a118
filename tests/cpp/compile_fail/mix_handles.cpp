/* SPDX-License-Identifier: MIT */
/* pool<A>::get(handle<B>) must not compile: handles of different element
 * types do not convert into each other. */
/* expect-error: no matching (member )?function */
#include "ark/ark.hpp"

struct monster {
    int hp;
};
struct bullet {
    float x, y;
};

int use(ark::pool<monster> &monsters, ark::pool<bullet> &bullets) {
    ark::handle<bullet> b = bullets.insert(bullet{1, 2});
    ark::handle<monster> m = monsters.insert(monster{10});
#ifdef ARK_COMPILE_FAIL
    monster *p = monsters.get(b);
#else
    monster *p = monsters.get(m);
#endif
    return p != nullptr && bullets.get(b) != nullptr;
}
