/* SPDX-License-Identifier: MIT */
#include <ark/ark.hpp>
#include <cstdio>
#include <string>

struct unit {
    std::string name; /* any type: constructed in place, destroyed once */
    float x, y;
    int hp;
};
struct bullet {
    float x, y;
};

int main() {
    ark::pool<unit> units;
    if (!units) {
        return 1;
    }
    ark::handle<unit> h = units.emplace(unit{"ogre", 1, 2, 100});
    if (!h) { /* errors are values: ENOMEM or EFULL, no exception */
        std::printf("%s\n", ark::strerror(units.last_status()));
        return 1;
    }
    for (unit &u : units) {
        u.hp -= 30; /* the C iterator, no call per element */
    }
    for (auto [handle, u] : units.each_with_handle()) {
        std::printf("%s %d (wire id %llu)\n", u.name.c_str(), u.hp,
                    (unsigned long long)units.seal(handle));
    }
    /* units.get(ark::handle<bullet>()) does not compile: typed handles */
    units.remove(h); /* runs ~unit */
    return units.get(h) == nullptr && units.size() == 0 ? 0 : 1;
}
