/* SPDX-License-Identifier: MIT */
/*
 * test_cpp_entity.cpp - ark/entity.hpp (components<C, E>, keyed_table<E>,
 * tag<E>, view<E, Cs...>): typed entities with components and tags.
 * Cases named exc_* need exceptions; the -fno-exceptions build leaves
 * them out.
 */
#include "cpp_harness.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace {

struct unit {
    int hp;
};
struct bullet {
    float x;
};
struct position {
    float x, y;
};
struct velocity {
    float dx, dy;
};

/* Types: entity handles do not mix, components are move-only. */
static_assert(!std::is_invocable_v<
              decltype(&ark::components<position, unit>::contains),
              ark::components<position, unit> &, ark::handle<bullet>>);
static_assert(
    std::is_invocable_v<decltype(&ark::components<position, unit>::contains),
                        ark::components<position, unit> &, ark::handle<unit>>);
static_assert(!std::is_copy_constructible_v<ark::components<position, unit>>);
static_assert(
    std::is_nothrow_move_constructible_v<ark::components<position, unit>>);
static_assert(!std::is_copy_constructible_v<ark::tag<unit>>);
static_assert(!std::is_copy_constructible_v<ark::keyed_table<unit>>);
static_assert(std::is_nothrow_move_constructible_v<ark::keyed_table<unit>>);
/* CTAD: the view's type says what it yields. */
static_assert(std::is_same_v<
              decltype(ark::view(
                  std::declval<ark::components<position, unit> &>(),
                  std::declval<const ark::components<velocity, unit> &>())),
              ark::view<unit, position, const velocity>>);
static_assert(std::is_same_v<
              ark::view<unit, position, const velocity>::reference,
              std::tuple<ark::handle<unit>, position &, const velocity &>>);
static_assert(
    std::is_same_v<decltype(ark::view(std::declval<ark::pool<unit> &>())),
                   ark::view<unit>>);
static_assert(std::is_same_v<ark::view<unit, ark::keyed_table<unit>>::reference,
                             std::tuple<ark::handle<unit>, size_t>>);

} // namespace

/* ---- components<C, E> ---------------------------------------------------- */

TEST(components_insert_get_remove) {
    ark::pool<unit> units;
    ark::components<position, unit> pos(units);
    CHECK(pos.ok());
    CHECK_EQ(pos.c_entities(), units.c_pool());
    auto a = units.insert(unit{10});
    auto b = units.insert(unit{20});
    CHECK(pos.empty());
    position *pa = pos.insert(a, position{1, 2});
    CHECK(pa != nullptr);
    CHECK_STATUS(pos.last_status(), ARK_OK);
    CHECK(pos.get(a) == pa);
    CHECK(pa->x == 1 && pa->y == 2);
    CHECK(pos.get(b) == nullptr);
    CHECK(!pos.contains(b));
    CHECK_EQ(pos.size(), 1);

    /* one per entity */
    CHECK(pos.insert(a, position{3, 4}) == nullptr);
    CHECK_STATUS(pos.last_status(), ARK_EEXIST);
    CHECK(pos.get(a)->x == 1);
    /* only live entities */
    CHECK(pos.insert(ark::handle<unit>(), position{}) == nullptr);
    CHECK_STATUS(pos.last_status(), ARK_ENULL);
    CHECK(pos.emplace(b, position{5, 6}) != nullptr);
    CHECK(units.remove(b));
    CHECK(pos.get(b) == nullptr);
    CHECK(pos.insert(b, position{}) == nullptr);
    CHECK_STATUS(pos.last_status(), ARK_ESTALE);
    CHECK_EQ(pos.size(), 1);

    /* remove the component, keep the entity */
    CHECK(pos.remove(a));
    CHECK(units.get(a) != nullptr);
    CHECK(pos.get(a) == nullptr);
    CHECK(!pos.remove(a));
    CHECK(pos.last_status() != ARK_OK);
    CHECK(pos.insert(a, position{7, 8}) != nullptr);
    CHECK(pos.remove_later(a));
    CHECK(pos.get(a) == nullptr);
    CHECK_EQ(pos.size(), 0);
    CHECK_EQ(pos.flush(), 1);
    CHECK(pos.insert(a, position{9, 9}) != nullptr);
    const auto &cpos = pos;
    CHECK(cpos.get(a)->x == 9);
    pos.clear();
    CHECK(pos.empty());
    CHECK(units.get(a) != nullptr);
}

/* Components of any type: built in place, destroyed exactly once however
 * they leave (their own removal, the entity's, clear on either side). */
TEST(components_counted_destroyed_once) {
    g_counts = counts{};
    {
        ark::pool<unit> units;
        ark::components<counted, unit> names(units);
        ark::handle<unit> e[8];
        for (int i = 0; i < 8; i++) {
            e[i] = units.insert(unit{i});
            CHECK(e[i]);
        }
        counted c(100);
        CHECK(names.insert(e[0], c) != nullptr); /* copy */
        CHECK_EQ(g_counts.copied, 1);
        CHECK(names.insert(e[1], counted(1)) != nullptr); /* move */
        CHECK_EQ(g_counts.moved, 1);
        for (int i = 2; i < 8; i++) {
            counted *n = names.emplace(e[i], i);
            CHECK(n != nullptr && n->id == i);
        }
        CHECK_EQ(g_counts.live(), 1 + 8);          /* c + the components */
        CHECK(names.emplace(e[2], 99) == nullptr); /* EEXIST builds nothing */
        CHECK_EQ(g_counts.live(), 9);
        CHECK(names.remove(e[0]));
        CHECK_EQ(g_counts.live(), 8);
        CHECK(units.remove(e[1])); /* the entity takes its component */
        CHECK_EQ(g_counts.live(), 7);
        CHECK(units.remove_later(e[2]));
        CHECK_EQ(g_counts.live(), 7); /* until the flush */
        CHECK_EQ(units.flush(), 1);
        CHECK_EQ(g_counts.live(), 6);
        CHECK(names.remove_later(e[3]));
        CHECK(units.remove(e[3])); /* a marked component: left to its flush */
        CHECK_EQ(g_counts.live(), 6);
        CHECK_EQ(names.flush(), 1);
        CHECK_EQ(g_counts.live(), 5);
        units.clear();
        CHECK_EQ(g_counts.live(), 1);
        CHECK(names.empty());
        auto f = units.insert(unit{1});
        CHECK(names.emplace(f, 5) != nullptr);
        CHECK_EQ(g_counts.live(), 2);
    }
    CHECK_EQ(g_counts.live(), 0);
}

/* Iteration yields (handle<E>, C &) in entity id order; the handle is the
 * entity's. */
TEST(components_iteration_yields_entity_handles) {
    ark::pool<unit> units;
    ark::components<position, unit> pos(units);
    std::vector<ark::handle<unit>> with;
    for (int i = 0; i < 200; i++) {
        auto e = units.insert(unit{i});
        if (i % 3 == 0) {
            CHECK(pos.insert(e, position{float(i), 0}) != nullptr);
            with.push_back(e);
        }
    }
    size_t k = 0;
    for (auto [e, p] : pos) {
        CHECK(k < with.size());
        CHECK(e == with[k]);
        CHECK_EQ(p.x, units.get(e)->hp);
        p.y = 1;
        k++;
    }
    CHECK_EQ(k, with.size());
    const auto &cpos = pos;
    for (auto [e, p] : cpos) {
        static_assert(std::is_same_v<decltype(p), const position &>);
        CHECK(p.y == 1);
        CHECK(units.remove(e)); /* removing during the walk is allowed */
    }
    CHECK(pos.empty());
    CHECK_EQ(units.size(), 200 - with.size());
}

namespace {
/* A component hook that checks the entity's order of removal: the
 * entity's own hook has run (it is dying), its handle still resolves. */
struct entity_probe {
    ark::pool<unit> *units = nullptr;
    std::vector<ark_handle> seen;
    bool entity_resolved = true;
    void operator()(ark::handle<unit> e, position &p) {
        seen.push_back(e.raw());
        if (units->get(e) == nullptr || p.x != float(units->get(e)->hp)) {
            entity_resolved = false;
        }
    }
};
} // namespace

/* A component hook gets the entity's handle and the caller's data, for its
 * own removals and the entity's. */
TEST(components_hook_with_user_data) {
    entity_probe probe;
    {
        ark::pool<unit> units;
        probe.units = &units;
        ark::components<position, unit> pos(units, ark::component_options{},
                                            &probe);
        CHECK(pos.ok());
        auto a = units.insert(unit{1});
        auto b = units.insert(unit{2});
        auto c = units.insert(unit{3});
        pos.insert(a, position{1, 0});
        pos.insert(b, position{2, 0});
        pos.insert(c, position{3, 0});
        CHECK(pos.remove(a));
        CHECK(units.remove(b));
        CHECK_EQ(probe.seen.size(), 2);
        CHECK_EQ(probe.seen[0], a.raw());
        CHECK_EQ(probe.seen[1], b.raw());
        CHECK(probe.entity_resolved);
        units.clear();
        CHECK_EQ(probe.seen.size(), 3);
        CHECK_EQ(probe.seen[2], c.raw());
        CHECK(probe.entity_resolved);
    }
}

/* A store made for a pool that is not ok() is not ok(): a null keys would
 * silently make a plain pool. */
TEST(components_of_a_failed_pool_is_einval) {
    ark::pool_options bad;
    bad.index_bits = 40;
    ark::pool<unit> units(bad);
    CHECK(!units.ok());
    ark::components<position, unit> pos(units);
    CHECK(!pos.ok());
    CHECK_STATUS(pos.last_status(), ARK_EINVAL);
    CHECK_EQ(pos.size(), 0);
    ark::tag<unit> t(units);
    CHECK(!t.ok());
    CHECK_STATUS(t.last_status(), ARK_EINVAL);
    ark::keyed_table<unit> kt(units, {4});
    CHECK(!kt.ok());
    CHECK_STATUS(kt.last_status(), ARK_EINVAL);
    ark::view v(units);
    CHECK(!v.ok());
    CHECK(v.begin() == v.end());
    /* a keyed pool cannot key another */
    ark::pool<unit> good;
    ark::components<position, unit> p2(good);
    CHECK(p2.ok());
}

/* Moving a store keeps its C pool: the entity's removal still reaches it,
 * and a view made from it still works. */
TEST(components_move) {
    g_counts = counts{};
    {
        ark::pool<unit> units;
        ark::components<counted, unit> a(units);
        auto e = units.insert(unit{1});
        a.emplace(e, 1);
        ark::components<counted, unit> b(std::move(a));
        CHECK(!a.ok());
        CHECK_EQ(a.size(), 0);
        CHECK(b.get(e) != nullptr && b.get(e)->id == 1);
        ark::components<counted, unit> c(units);
        auto f = units.insert(unit{2});
        c.emplace(f, 2);
        c = std::move(b); /* c's old component destroyed */
        CHECK_EQ(g_counts.live(), 1);
        CHECK(c.get(e) != nullptr);
        CHECK(units.remove(e));
        CHECK_EQ(g_counts.live(), 0);
    }
    CHECK_EQ(g_counts.live(), 0);
}

/* Fail the k-th allocation for every k: creation or insert reports
 * ENOMEM, builds nothing, changes nothing; nothing leaks. */
TEST(components_allocation_failure_sweep) {
    bool finished = false;
    for (uint64_t k = 1; k < 400 && !finished; k++) {
        test_allocator ta;
        test_allocator_init(&ta);
        g_counts = counts{};
        {
            ark::pool_options po;
            po.allocator = &ta.base;
            ark::component_options co;
            co.allocator = &ta.base;
            ark::pool<unit> units(po);
            CHECK(units.ok());
            std::vector<ark::handle<unit>> es;
            for (int i = 0; i < 3000; i++) {
                es.push_back(units.insert(unit{i}));
                CHECK(es.back());
            }
            test_allocator_fail_at(&ta, k);
            ark::components<counted, unit> names(units, co);
            ark::tag<unit> t(units, &ta.base);
            if (!names.ok()) {
                CHECK_STATUS(names.last_status(), ARK_ENOMEM);
                continue;
            }
            if (!t.ok()) {
                CHECK_STATUS(t.last_status(), ARK_ENOMEM);
                continue;
            }
            size_t failed = 0, tag_failed = 0;
            for (int i = 0; i < 3000; i++) {
                long built = g_counts.live();
                size_t before = names.size();
                counted *c = names.emplace(es[size_t(i)], i);
                if (c == nullptr) {
                    CHECK_STATUS(names.last_status(), ARK_ENOMEM);
                    CHECK_EQ(g_counts.live(), built);
                    CHECK_EQ(names.size(), before);
                    CHECK(!names.contains(es[size_t(i)]));
                    failed++;
                }
                if (!t.insert(es[size_t(i)])) {
                    CHECK_STATUS(t.last_status(), ARK_ENOMEM);
                    CHECK(!t.contains(es[size_t(i)]));
                    tag_failed++;
                }
            }
            CHECK_EQ(failed + tag_failed, (size_t)ta.failures);
            CHECK_EQ(names.size(), 3000 - failed);
            CHECK_EQ(t.size(), 3000 - tag_failed);
            finished = ta.failures == 0;
        }
        CHECK_EQ(g_counts.live(), 0);
        CHECK_EQ(ta.live_blocks, 0);
        CHECK_EQ(ta.bad_frees, 0);
    }
    CHECK(finished);
}

/* ---- destruction in any order -------------------------------------------- */

namespace {
/* An entity type with a destructor, so its pool clears at destruction
 * (the cascade then reaches the components), and one without. */
struct heavy_unit {
    counted c;
    explicit heavy_unit(int i) : c(i) {}
};

template <class E> ark::handle<E> make_entity(ark::pool<E> &p, int i) {
    if constexpr (std::is_same_v<E, heavy_unit>) {
        return p.emplace(i);
    } else {
        return p.insert(E{i});
    }
}

/* Build entities, components, a keyed table and tags on one allocator,
 * destroy them in the order `order` gives (a permutation of 0..3:
 * entities, components, table, tag), and check nothing leaks. */
template <class E> int destroy_in_order(const int order[4]) {
    test_allocator ta;
    test_allocator_init(&ta);
    g_counts = counts{};
    {
        ark::pool_options po;
        po.allocator = &ta.base;
        ark::component_options co;
        co.allocator = &ta.base;
        auto units = std::make_unique<ark::pool<E>>(po);
        auto names = std::make_unique<ark::components<counted, E>>(*units, co);
        auto table = std::make_unique<ark::keyed_table<E>>(
            *units, std::initializer_list<size_t>{sizeof(float)}, co);
        auto frozen = std::make_unique<ark::tag<E>>(*units, &ta.base);
        REQ(units->ok() && names->ok() && table->ok() && frozen->ok());
        for (int i = 0; i < 100; i++) {
            ark::handle<E> e = make_entity(*units, i);
            REQ(e);
            REQ(names->emplace(e, i) != nullptr);
            if (i % 2 == 0) {
                REQ(table->insert(e) != ARK_NO_ROW);
            }
            if (i % 3 == 0) {
                REQ(frozen->insert(e));
            }
        }
        for (int k = 0; k < 4; k++) {
            switch (order[k]) {
            case 0:
                units.reset();
                break;
            case 1:
                names.reset();
                break;
            case 2:
                table.reset();
                break;
            default:
                frozen.reset();
                break;
            }
        }
    }
    REQ(g_counts.live() == 0);
    REQ(ta.live_blocks == 0);
    REQ(ta.bad_frees == 0);
    return 1;
}
} // namespace

/* The wrappers clean up in any order: every permutation, with an entity
 * type that has a destructor and one that has none. Counted components
 * are destroyed exactly once; the allocator ends with nothing live. */
TEST(entity_destruction_in_any_order) {
    int order[4] = {0, 1, 2, 3};
    int runs = 0;
    do {
        CHECK(destroy_in_order<unit>(order));
        CHECK(destroy_in_order<heavy_unit>(order));
        runs++;
    } while (std::next_permutation(order, order + 4));
    CHECK_EQ(runs, 24);
}

/* After its entity pool is gone, a store may still be read and emptied. */
TEST(components_outlive_their_entities) {
    g_counts = counts{};
    ark::handle<unit> e, f;
    std::vector<ark_handle> removed;
    auto hook = [&removed](ark::handle<unit> h) { removed.push_back(h.raw()); };
    std::optional<ark::components<counted, unit>> kept;
    ark::keyed_table<unit> rows = [&] {
        ark::pool<unit> units;
        ark::components<counted, unit> n(units);
        ark::keyed_table<unit> t(units, {sizeof(int)}, ark::component_options{},
                                 &hook);
        e = units.insert(unit{1});
        f = units.insert(unit{2});
        n.emplace(e, 1);
        n.emplace(f, 2);
        t.insert(e);
        t.insert(f);
        kept.emplace(std::move(n));
        return t;
    }();
    ark::components<counted, unit> &names = *kept;
    CHECK(names.ok() && rows.ok());
    CHECK(names.get(e) != nullptr);
    CHECK_EQ(rows.row(f), 1);
    CHECK_EQ(g_counts.live(), 2);
    CHECK(names.remove(e));
    CHECK_EQ(g_counts.live(), 1);
    CHECK(names.insert(e, counted(3)) == nullptr); /* no entities now */
    CHECK_STATUS(names.last_status(), ARK_EINVAL);
    CHECK(rows.remove(e));
    CHECK_EQ(rows.row(f), 0);
    rows.clear();
    CHECK_EQ(removed.size(), 2);
    names.clear();
    CHECK_EQ(g_counts.live(), 0);
}

/* ---- keyed_table<E> ------------------------------------------------------ */

TEST(keyed_table_rows_by_entity) {
    std::vector<ark_handle> removed;
    auto hook = [&removed](ark::handle<unit> e) { removed.push_back(e.raw()); };
    ark::pool<unit> units;
    ark::keyed_table<unit> hot(units, {sizeof(float), sizeof(int32_t)},
                               ark::component_options{}, &hook);
    CHECK(hot.ok());
    CHECK_EQ(hot.ncolumns(), 2);
    CHECK_EQ(hot.column_size(1), sizeof(int32_t));
    CHECK_EQ(hot.c_entities(), units.c_pool());
    ark::handle<unit> e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = units.insert(unit{i});
    }
    CHECK_EQ(hot.insert(e[1]), 0);
    CHECK_EQ(hot.insert(e[3]), 1);
    CHECK_EQ(hot.insert(e[3]), ARK_NO_ROW);
    CHECK_STATUS(hot.last_status(), ARK_EEXIST);
    CHECK_EQ(hot.insert(ark::handle<unit>(12345)), ARK_NO_ROW);
    CHECK(hot.last_status() != ARK_OK);
    CHECK_EQ(hot.row(e[3]), 1);
    CHECK_EQ(hot.row(e[0]), ARK_NO_ROW);
    CHECK(hot.handle_at(0) == e[1]);
    hot.column<float>(0)[hot.row(e[1])] = 1.5f;
    *hot.get<int32_t>(e[3], 1) = 33;
    CHECK(hot.get<int32_t>(e[0], 1) == nullptr);
    CHECK(hot.get<int32_t>(e[3], 2) == nullptr);
    CHECK(units.remove(e[1])); /* the entity takes its row; e[3] moves up */
    CHECK_EQ(removed.size(), 1);
    CHECK_EQ(removed[0], e[1].raw());
    CHECK_EQ(hot.size(), 1);
    CHECK_EQ(hot.row(e[3]), 0);
    CHECK_EQ(*hot.get<int32_t>(e[3], 1), 33);
    CHECK(hot.remove(e[3]));
    CHECK(units.get(e[3]) != nullptr);
    CHECK(hot.empty());
    CHECK_EQ(removed.size(), 2);
    CHECK_EQ(hot.insert(e[2]), 0);
    CHECK(hot.remove_later(e[2]));
    CHECK_EQ(hot.size(), 0);
    CHECK_EQ(hot.rows(), 1);
    CHECK_EQ(hot.flush(), 1);
    CHECK_EQ(hot.insert(e[0]), 0);
    hot.clear();
    CHECK(hot.empty());
    CHECK_EQ(removed.size(), 4);
}

/* ---- tag<E> -------------------------------------------------------------- */

TEST(tag_insert_remove_contains) {
    ark::pool<unit> units;
    ark::tag<unit> frozen(units);
    CHECK(frozen.ok());
    CHECK_EQ(frozen.c_entities(), units.c_pool());
    std::vector<ark::handle<unit>> e;
    for (int i = 0; i < 100; i++) {
        e.push_back(units.insert(unit{i}));
    }
    for (size_t i = 0; i < e.size(); i += 7) {
        CHECK(frozen.insert(e[i]));
    }
    CHECK(!frozen.insert(e[0]));
    CHECK_STATUS(frozen.last_status(), ARK_EEXIST);
    CHECK(!frozen.insert(ark::handle<unit>()));
    CHECK_STATUS(frozen.last_status(), ARK_ENULL);
    CHECK(frozen.contains(e[7]));
    CHECK(!frozen.contains(e[8]));
    CHECK(!frozen.contains(ark::handle<unit>(~0ull)));
    CHECK_EQ(frozen.size(), 15);
    size_t k = 0;
    for (ark::handle<unit> h : frozen) {
        CHECK(h == e[k]);
        k += 7;
    }
    CHECK_EQ(k, 105);
    CHECK(frozen.remove(e[7]));
    CHECK(!frozen.remove(e[7]));
    CHECK_STATUS(frozen.last_status(), ARK_ENOTFOUND);
    CHECK(units.remove(e[14])); /* removal untags */
    CHECK(!frozen.contains(e[14]));
    CHECK(units.remove_later(e[21])); /* untagged at once */
    CHECK(!frozen.contains(e[21]));
    k = 0;
    for (ark::handle<unit> h : frozen) { /* not visited */
        CHECK(h && h != e[21]);
        k++;
    }
    CHECK_EQ(k, 12);
    CHECK_EQ(frozen.size(), 13); /* its id leaves the set at the flush */
    units.flush();
    CHECK_EQ(frozen.size(), 12);
    CHECK_EQ(frozen.c_idset() != nullptr, 1);
    ark::tag<unit> moved(std::move(frozen));
    CHECK(!frozen.ok());
    CHECK(moved.contains(e[0]));
    units.clear();
    CHECK(moved.empty());
}

/* ---- view<E, Cs...> ------------------------------------------------------ */

TEST(view_yields_components_by_reference) {
    ark::pool<unit> units;
    ark::components<position, unit> pos(units);
    ark::components<velocity, unit> vel(units);
    std::vector<ark::handle<unit>> both;
    for (int i = 0; i < 300; i++) {
        auto e = units.insert(unit{i});
        if (i % 2 == 0) {
            pos.insert(e, position{float(i), 0});
        }
        if (i % 3 == 0) {
            vel.insert(e, velocity{1, 2});
        }
        if (i % 6 == 0) {
            both.push_back(e);
        }
    }
    size_t k = 0;
    for (auto [e, p, v] : ark::view(pos, vel)) {
        static_assert(std::is_same_v<decltype(e), ark::handle<unit>>);
        static_assert(std::is_same_v<decltype(p), position &>);
        CHECK(k < both.size() && e == both[k]);
        CHECK(&p == pos.get(e) && &v == vel.get(e));
        p.x += v.dx;
        p.y += v.dy;
        k++;
    }
    CHECK_EQ(k, both.size());
    for (auto e : both) {
        CHECK(pos.get(e)->x == float(units.get(e)->hp) + 1);
        CHECK(pos.get(e)->y == 2);
    }
    /* const components give const references */
    const auto &cvel = vel;
    ark::view v(pos, cvel);
    k = 0;
    for (auto it = v.begin(); it != v.end(); ++it) {
        auto [e, p, cv] = *it;
        static_assert(std::is_same_v<decltype(cv), const velocity &>);
        CHECK(it.handle() == e);
        CHECK(p.y == 2 && cv.dy == 2);
        k++;
    }
    CHECK_EQ(k, both.size());
    /* view(units): every entity */
    k = 0;
    for (auto [e] : ark::view(units)) {
        CHECK(units.get(e) != nullptr);
        k++;
    }
    CHECK_EQ(k, 300);
}

TEST(view_with_without_and_tags) {
    ark::pool<unit> units;
    ark::components<position, unit> pos(units);
    ark::components<velocity, unit> vel(units);
    ark::keyed_table<unit> hot(units, {sizeof(float)});
    ark::tag<unit> frozen(units), boss(units);
    for (int i = 0; i < 200; i++) {
        auto e = units.insert(unit{i});
        pos.insert(e, position{float(i), 0});
        if (i % 2 == 0) {
            vel.insert(e, velocity{1, 1});
        }
        if (i % 5 == 0) {
            frozen.insert(e);
        }
        if (i % 7 == 0) {
            boss.insert(e);
        }
        if (i % 4 == 0) {
            hot.insert(e);
        }
    }
    auto count = [](auto &&v) {
        size_t n = 0;
        for (auto it = v.begin(); it != v.end(); ++it) {
            n++;
        }
        return n;
    };
    auto expect = [](auto pred) {
        size_t n = 0;
        for (int i = 0; i < 200; i++) {
            n += pred(i) ? 1 : 0;
        }
        return n;
    };
    CHECK_EQ(count(ark::view(pos).without(vel)),
             expect([](int i) { return i % 2 != 0; }));
    CHECK_EQ(count(ark::view(pos).with(vel).without_tag(frozen)),
             expect([](int i) { return i % 2 == 0 && i % 5 != 0; }));
    CHECK_EQ(count(ark::view(units).with_tag(frozen).with_tag(boss)),
             expect([](int i) { return i % 35 == 0; }));
    CHECK_EQ(
        count(ark::view(pos, vel).without_tag(boss).without(hot)),
        expect([](int i) { return i % 2 == 0 && i % 7 != 0 && i % 4 != 0; }));
    CHECK_EQ(count(ark::view(units).with(hot).with_tag(boss)),
             expect([](int i) { return i % 28 == 0; }));
    /* an lvalue view narrowed in steps, and copies of it */
    ark::view v(pos);
    v.without(vel).with_tag(boss);
    CHECK(v.ok());
    CHECK_EQ(count(v), expect([](int i) { return i % 2 != 0 && i % 7 == 0; }));
    ark::view copy(v);
    static_assert(std::is_same_v<decltype(copy), decltype(v)>);
    auto copy2 = v;
    const auto &cv = v;
    ark::view copy3(cv);
    copy.with_tag(frozen); /* a copy narrows on its own */
    CHECK_EQ(count(copy), expect([](int i) {
                 return i % 2 != 0 && i % 7 == 0 && i % 5 == 0;
             }));
    CHECK_EQ(count(copy2), count(v));
    CHECK_EQ(count(copy3), count(v));
    /* a keyed table term yields the row */
    size_t n = 0;
    for (auto [e, p, row] : ark::view(pos, hot)) {
        CHECK_EQ(row, hot.row(e));
        hot.column<float>(0)[row] = p.x;
        n++;
    }
    CHECK_EQ(n, 50);
    for (auto [e, row] : ark::view(hot)) {
        CHECK(hot.column<float>(0)[row] == pos.get(e)->x);
    }
}

/* A term the C query refuses makes the view not ok(); it then iterates
 * nothing, and says why. */
TEST(view_refused_terms) {
    ark::pool<unit> units, others;
    ark::components<position, unit> pos(units);
    ark::components<velocity, unit> other_vel(others); /* same E, other pool */
    ark::tag<unit> other_tag(others);
    auto e = units.insert(unit{1});
    pos.insert(e, position{});
    auto o = others.insert(unit{2});
    other_vel.insert(o, velocity{});

    ark::view bad(pos, other_vel);
    CHECK(!bad.ok());
    CHECK_STATUS(bad.last_status(), ARK_EINVAL);
    CHECK(bad.begin() == bad.end());
    CHECK(!ark::view(pos).with_tag(other_tag).ok());
    CHECK(!ark::view(pos).without(other_vel).ok());

    /* more than ARK_QUERY_MAX_TERMS terms */
    std::vector<std::unique_ptr<ark::tag<unit>>> tags;
    ark::view many(pos);
    for (int i = 0; i < ARK_QUERY_MAX_TERMS; i++) {
        tags.push_back(std::make_unique<ark::tag<unit>>(units));
        CHECK(tags.back()->insert(e));
        many.with_tag(*tags.back());
        CHECK_EQ(many.ok(), i + 1 < ARK_QUERY_MAX_TERMS);
    }
    CHECK_STATUS(many.last_status(), ARK_EFULL);
    CHECK(many.begin() == many.end());

    /* a moved-from store as a term */
    ark::components<position, unit> gone(std::move(pos));
    CHECK(!ark::view(pos).ok());
    CHECK(ark::view(gone).ok());
}

/* Removing entities and components during the loop: the visited entity
 * may go, what is removed before it is reached is not visited. */
TEST(view_removal_during_iteration) {
    g_counts = counts{};
    {
        ark::pool<unit> units;
        ark::components<counted, unit> names(units);
        ark::components<position, unit> pos(units);
        std::vector<ark::handle<unit>> e;
        for (int i = 0; i < 500; i++) {
            e.push_back(units.insert(unit{i}));
            names.emplace(e.back(), i);
            pos.insert(e.back(), position{float(i), 0});
        }
        std::set<int> visited;
        for (auto [h, c, p] : ark::view(names, pos)) {
            visited.insert(c.id);
            CHECK(p.x == float(c.id));
            if (c.id % 2 == 0) {
                CHECK(units.remove(h)); /* this one */
                if (size_t(c.id) + 1 < e.size()) {
                    CHECK(pos.remove(e[size_t(c.id) + 1])); /* the next */
                }
            }
        }
        CHECK_EQ(visited.size(), 250);
        for (int id : visited) {
            CHECK(id % 2 == 0);
        }
        CHECK_EQ(units.size(), 250);
        CHECK_EQ(names.size(), 250);
        CHECK_EQ(pos.size(), 0);
    }
    CHECK_EQ(g_counts.live(), 0);
}

/* A view's terms stay valid across moves of the wrappers (the C objects
 * do not move). */
TEST(view_survives_moves_of_its_wrappers) {
    ark::pool<unit> units;
    ark::components<position, unit> pos(units);
    auto e = units.insert(unit{1});
    pos.insert(e, position{4, 0});
    ark::view v(pos);
    ark::pool<unit> units2(std::move(units));
    ark::components<position, unit> pos2(std::move(pos));
    size_t n = 0;
    for (auto [h, p] : v) {
        CHECK(h == e && p.x == 4);
        n++;
    }
    CHECK_EQ(n, 1);
    CHECK(units2.remove(e));
    CHECK(v.begin() == v.end());
}

/* Random operations on entities (remove_later and flush included), two
 * components, a keyed table and a tag, checked against a model: sizes
 * after each step, and every few steps that each view gives exactly the
 * model's live entities, in id order, with their values. Replay with
 * ARK_SEED. */
namespace {
struct model_entity {
    int hp = 0;
    std::optional<float> x;
    std::optional<int> name;
    std::optional<int> hot;
    bool frozen = false;
    bool marked = false; /* remove_later: gone at the next flush */
};
} // namespace

TEST(entity_model_random) {
    uint64_t rng = harness_seed();
    ark::pool_options po;
    po.index_bits = 10; /* slots are reused soon */
    po.gen_bits = 12;
    ark::pool<unit> units(po);
    ark::components<position, unit> pos(units);
    ark::components<counted, unit> names(units);
    ark::keyed_table<unit> hot(units, {sizeof(int)});
    ark::tag<unit> frozen(units);
    CHECK(units.ok() && pos.ok() && names.ok() && hot.ok() && frozen.ok());
    std::map<ark_handle, model_entity> model;
    std::vector<ark::handle<unit>> ever;
    g_counts = counts{};
    uint64_t steps = harness_scaled(20000);
    for (uint64_t s = 0; s < steps; s++) {
        uint64_t op = harness_below(&rng, 11);
        ark::handle<unit> pick;
        if (!ever.empty()) {
            pick = ever[harness_below(&rng, ever.size())];
        }
        auto at = model.find(pick.raw());
        model_entity *m =
            at != model.end() && !at->second.marked ? &at->second : nullptr;
        int v = int(harness_below(&rng, 1000));
        switch (op) {
        case 0:
        case 1: {
            auto e = units.insert(unit{v});
            if (e) {
                CHECK(model.count(e.raw()) == 0);
                model[e.raw()].hp = v;
                ever.push_back(e);
            }
            break;
        }
        case 2:
            CHECK_EQ(units.remove(pick), m != nullptr);
            if (m != nullptr) {
                model.erase(at);
            }
            break;
        case 3:
            CHECK_EQ(units.remove_later(pick), m != nullptr);
            if (m != nullptr) {
                m->marked = true;
            }
            break;
        case 4:
            CHECK_EQ(pos.insert(pick, position{float(v), 0}) != nullptr,
                     m != nullptr && !m->x);
            if (m != nullptr && !m->x) {
                m->x = float(v);
            }
            break;
        case 5:
            CHECK_EQ(names.emplace(pick, v) != nullptr,
                     m != nullptr && !m->name);
            if (m != nullptr && !m->name) {
                m->name = v;
            }
            break;
        case 6: {
            bool fits = m != nullptr && !m->hot;
            size_t r = hot.insert(pick);
            CHECK_EQ(r != ARK_NO_ROW, fits);
            if (fits) {
                hot.column<int>(0)[r] = v;
                m->hot = v;
            }
            break;
        }
        case 7:
            CHECK_EQ(frozen.insert(pick), m != nullptr && !m->frozen);
            if (m != nullptr) {
                m->frozen = true;
            }
            break;
        case 8:
            if (m != nullptr) {
                CHECK_EQ(pos.remove(pick), bool(m->x));
                m->x.reset();
                CHECK_EQ(hot.remove(pick), bool(m->hot));
                m->hot.reset();
                CHECK_EQ(frozen.remove(pick), m->frozen);
                m->frozen = false;
                CHECK_EQ(names.remove(pick), bool(m->name));
                m->name.reset();
            }
            break;
        case 9: {
            size_t marked = 0;
            for (auto i = model.begin(); i != model.end();) {
                marked += i->second.marked ? 1 : 0;
                i = i->second.marked ? model.erase(i) : std::next(i);
            }
            CHECK_EQ(units.flush(), marked);
            break;
        }
        default:
            for (auto [e, p, n] : ark::view(pos, names).without_tag(frozen)) {
                (void)n;
                p.x += 1;
                model_entity &me = model.at(e.raw());
                CHECK(!me.marked);
                me.x = *me.x + 1;
            }
            break;
        }
        /* Sizes: a marked entity keeps its components and its tag's id
         * until the flush, not its place among the live ones. */
        size_t nlive = 0, npos = 0, nnames = 0, nhot = 0, nfrozen = 0;
        for (auto &[h, me] : model) {
            nlive += me.marked ? 0 : 1;
            npos += me.x ? 1 : 0;
            nnames += me.name ? 1 : 0;
            nhot += me.hot ? 1 : 0;
            nfrozen += me.frozen ? 1 : 0;
        }
        CHECK_EQ(units.size(), nlive);
        CHECK_EQ(pos.size(), npos);
        CHECK_EQ(names.size(), nnames);
        CHECK_EQ(hot.size(), nhot);
        CHECK_EQ(frozen.size(), nfrozen);
        CHECK_EQ(g_counts.live(), nnames);
        if (s % 16 != 0 && s + 1 != steps) {
            continue;
        }
        size_t seen = 0, want = 0;
        uint32_t last_id = 0;
        for (auto [e, p, n, r] : ark::view(pos, names, hot)) {
            const model_entity &me = model.at(e.raw());
            CHECK(!me.marked && me.x && me.name && me.hot);
            CHECK(p.x == *me.x && n.id == *me.name);
            CHECK_EQ(hot.column<int>(0)[r], *me.hot);
            uint32_t id = ark_pool_id(units.c_pool(), e.raw());
            CHECK(seen == 0 || id > last_id);
            last_id = id;
            seen++;
        }
        for (auto &[h, me] : model) {
            want += !me.marked && me.x && me.name && me.hot ? 1 : 0;
        }
        CHECK_EQ(seen, want);
        seen = 0;
        want = 0;
        for (auto [e] : ark::view(units).with_tag(frozen).without(pos)) {
            const model_entity &me = model.at(e.raw());
            CHECK(!me.marked && me.frozen && !me.x);
            seen++;
        }
        for (auto &[h, me] : model) {
            want += !me.marked && me.frozen && !me.x ? 1 : 0;
        }
        CHECK_EQ(seen, want);
        seen = 0;
        want = 0;
        for (ark::handle<unit> e : frozen) {
            CHECK(!model.at(e.raw()).marked && model.at(e.raw()).frozen);
            seen++;
        }
        for (auto &[h, me] : model) {
            want += !me.marked && me.frozen ? 1 : 0;
        }
        CHECK_EQ(seen, want);
    }
}

/* ---- exceptions ------------------------------------------------------------
 */
#if defined(__cpp_exceptions)
namespace {
struct throwing_component {
    counted c;
    explicit throwing_component(int i) : c(i) {
        if (i < 0) {
            throw i;
        }
    }
};
} // namespace

/* A component whose constructor throws gives its slot back without ~C,
 * and the entity may get one afterwards. */
TEST(exc_components_throwing_constructor_releases_slot) {
    g_counts = counts{};
    {
        ark::pool<unit> units;
        ark::components<throwing_component, unit> comps(units);
        auto e = units.insert(unit{1});
        bool caught = false;
        try {
            comps.emplace(e, -1);
        } catch (int v) {
            caught = v == -1;
        }
        CHECK(caught);
        CHECK_EQ(comps.size(), 0);
        CHECK(!comps.contains(e));
        CHECK_EQ(g_counts.live(), 0);
        CHECK(comps.emplace(e, 2) != nullptr);
        CHECK_EQ(g_counts.live(), 1);
        CHECK(units.remove(e));
        CHECK_EQ(g_counts.live(), 0);
    }
    CHECK_EQ(g_counts.live(), 0);
}
#endif
