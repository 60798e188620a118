/* SPDX-License-Identifier: MIT */
/*
 * cpp_frame.cpp - a frame loop through ark.hpp: a pool of monsters with
 * removal marked during the frame and swept at its end, a table of
 * positions updated as plain arrays, an idmap from account ids to
 * handles, Cocos2d-x style counted textures in a refvec and a refmap, and
 * a worker thread posting results to the main thread's queue.
 */
#include <ark/ark.hpp>

#include <cstdio>

/* std::thread where the C++ library has it (mingw-w64's win32 thread
 * model does not). */
#if !defined(__GLIBCXX__) || defined(_GLIBCXX_HAS_GTHREADS)
#include <thread>
#define EXAMPLE_HAVE_THREAD 1
#endif

namespace {

struct texture {
    ark_ref ref; /* first member: counted by ark */
    int id;
    explicit texture(int i) : ref(), id(i) {}
};

struct monster {
    uint64_t account;
    int hp;
    ark::table::handle_type body; /* its row in the positions table */
};

struct vec2 {
    float x, y;
};

} // namespace

int main() {
    ark::pool<monster> monsters;
    ark::table bodies({sizeof(vec2), sizeof(vec2)}); /* position, velocity */
    ark::idmap by_account;
    ark::mainq q;
    if (!monsters || !bodies || !by_account || !q) {
        return 1;
    }

    for (uint64_t account = 1000; account < 1010; account++) {
        size_t row;
        auto body = bodies.insert(&row);
        bodies.column<vec2>(1)[row] = vec2{1.0f, 0.5f};
        auto h = monsters.emplace(monster{account, 50, body});
        if (!h || by_account.insert(account, h.raw()) != ARK_OK) {
            return 1;
        }
    }

    /* Textures shared by a cache (refmap) and a render list (refvec). */
    ark::refmap<texture> cache;
    ark::refvec<texture> render;
    for (int i = 0; i < 3; i++) {
        ark::ref_ptr<texture> t = ark::make_ref<texture>(i);
        if (!t || cache.insert((uint64_t)i, t.get()) != ARK_OK ||
            render.push_back(t.get()) != ARK_OK) {
            return 1;
        }
    } /* each texture now counted twice: cache and render list */

    /* A worker posts a result; the main loop runs it. */
    int damage_bonus = 0;
    auto work = [&q, &damage_bonus] {
        q.post([&damage_bonus] { damage_bonus = 25; });
    };
#ifdef EXAMPLE_HAVE_THREAD
    std::thread worker(work);
    worker.join();
#else
    work();
#endif

    for (int frame = 0; frame < 3; frame++) {
        q.run(); /* tasks from other threads, on the main thread */
        vec2 *pos = bodies.column<vec2>(0);
        const vec2 *vel = bodies.column<vec2>(1);
        for (size_t r = 0; r < bodies.rows(); r++) {
            pos[r].x += vel[r].x;
            pos[r].y += vel[r].y;
        }
        for (auto [h, m] : monsters.each_with_handle()) {
            m.hp -= 10 + damage_bonus;
            if (m.hp <= 0) {
                monsters.remove_later(h); /* safe while iterating */
                bodies.remove_later(m.body);
                by_account.erase(m.account);
            }
        }
        size_t swept = monsters.flush(); /* frame end */
        bodies.flush();
        std::printf("frame %d: %zu monsters, %zu swept\n", frame,
                    monsters.size(), swept);
    }

    /* Look a monster up by account id, as a server would. */
    uint64_t raw = 0;
    bool found = by_account.get(1003, &raw);
    monster *m = found ? monsters.get(ark::handle<monster>(raw)) : nullptr;

    texture *t0 = cache.at(0); /* borrowed: no count change */
    uint32_t before = ark_ref_count(&t0->ref);
    render.clear(); /* releases */
    uint32_t after = ark_ref_count(&t0->ref);
    std::printf("texture 0 count %u -> %u\n", before, after);

    bool ok = !found && m == nullptr && monsters.size() == 0 &&
              bodies.size() == 0 && before == 2 && after == 1;
    return ok ? 0 : 1;
}
