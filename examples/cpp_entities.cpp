/* SPDX-License-Identifier: MIT */
#include <ark/ark.hpp>
#include <cstdio>
#include <string>
#include <vector>

struct pet {
    int level;
};
struct unit {
    std::string name;
    std::vector<ark::handle<pet>> pets;
};
struct position {
    float x, y;
};
struct velocity {
    float dx, dy;
};

int main() {
    // [setup]
    ark::pool<pet> pets; /* declared first: ~units runs the hook below */
    /* A unit's removal despawns its pets: the hook reaches the pets pool
     * through what it captures (no global). It runs right before ~unit. */
    auto despawn_pets = [&pets](ark::handle<unit>, unit &u) {
        for (ark::handle<pet> p : u.pets) {
            pets.remove(p);
        }
    };
    ark::pool<unit> units(ark::pool_options{}, &despawn_pets);
    ark::components<position, unit> pos(units); /* keyed by units */
    ark::components<velocity, unit> vel(units);
    ark::tag<unit> frozen(units);
    if (!pets || !units || !pos || !vel || !frozen) {
        return 1;
    }
    // [setup]

    // [spawn]
    ark::handle<unit> ogre = units.emplace(unit{"ogre", {}});
    ark::handle<unit> elf = units.emplace(unit{"elf", {}});
    if (!pos.insert(ogre, position{0, 0}) ||
        !vel.insert(ogre, velocity{1, 0}) || !pos.insert(elf, position{5, 5}) ||
        !vel.insert(elf, velocity{0, 1})) {
        return 1; /* ENOMEM, or a handle that is not a live unit's */
    }
    units.get(ogre)->pets.push_back(pets.insert(pet{1}));
    units.get(ogre)->pets.push_back(pets.insert(pet{2}));
    frozen.insert(elf);
    /* pos.insert(some_bullet_handle, ...) does not compile */
    // [spawn]

    // [update]
    for (auto [e, p, v] : ark::view(pos, vel).without_tag(frozen)) {
        p.x += v.dx; /* p and v are references into the components */
        p.y += v.dy;
        std::printf("%s moves to (%g, %g)\n", units.get(e)->name.c_str(),
                    double(p.x), double(p.y));
    }
    // [update]

    // [despawn]
    units.remove(ogre); /* its position, velocity, tags and pets go too */
    // [despawn]

    std::printf("%zu unit, %zu position, %zu pet\n", units.size(), pos.size(),
                pets.size());
    return units.size() == 1 && pos.size() == 1 && vel.size() == 1 &&
                   pets.size() == 0 && pos.get(elf)->y == 5
               ? 0
               : 1;
}
