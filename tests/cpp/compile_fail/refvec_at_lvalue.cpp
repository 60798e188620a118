/* SPDX-License-Identifier: MIT */
/* refvec::at is borrowed: it returns a T * by value, so it cannot be
 * assigned through (no l-value that could unbalance a count, as in
 * Cocos2d-x's Vector, which has no operator[] for that reason). */
/* expect-error: lvalue required|not assignable */
#include "ark/ark.hpp"

struct sprite {
    ark_ref ref;
    int frame;
};

void use(ark::refvec<sprite> &v, sprite *s) {
#ifdef ARK_COMPILE_FAIL
    v.at(0) = s;
#else
    v.replace(0, s);
#endif
}
