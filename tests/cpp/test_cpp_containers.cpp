/* SPDX-License-Identifier: MIT */
/*
 * test_cpp_containers.cpp - ark::idset, ark::idmap, ark::ref_ptr,
 * ark::refvec, ark::refmap, ark::autorelease_pool and ark::mainq
 * (include/ark/ark.hpp), with the Cocos2d-x Vector / Map reference-count
 * scenarios of seed 003.
 */
#include "cpp_harness.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <vector>

/* ---- idset -------------------------------------------------------------- */

TEST(idset_every_function) {
    ark::idset s;
    CHECK(s.ok());
    CHECK(s.empty());
    for (uint32_t id = 0; id < 3000; id += 3) {
        CHECK_STATUS(s.insert(id), ARK_OK);
    }
    CHECK_STATUS(s.insert(UINT32_MAX), ARK_OK);
    CHECK_STATUS(s.insert(3), ARK_EEXIST);
    CHECK_STATUS(s.last_status(), ARK_EEXIST);
    CHECK_EQ(s.size(), 1001);
    CHECK_EQ(s.at(0), 0);
    CHECK_EQ(s[2], 6);
    CHECK_EQ(s.at(1000), UINT32_MAX);
    CHECK_EQ(s.find(9), 3);
    CHECK_EQ(s.find(10), ark::idset::npos);
    CHECK_EQ(s.lower_bound(10), 4);
    CHECK(s.contains(2997));
    CHECK(!s.contains(2998));
    CHECK(s.memory() > 0);
    CHECK_STATUS(s.validate(), ARK_OK);

    /* Iteration: ascending, every id once. */
    uint32_t prev = 0;
    size_t n = 0;
    for (uint32_t id : s) {
        CHECK(n == 0 || id > prev);
        CHECK_EQ(id, s.at(n));
        prev = id;
        n++;
    }
    CHECK_EQ(n, s.size());
    CHECK_EQ(std::count_if(s.begin(), s.end(),
                           [](uint32_t id) { return id % 2 == 0; }),
             500);

    uint32_t buf[8];
    CHECK_EQ(s.copy(10, buf, 8), 8);
    CHECK_EQ(buf[0], 30);
    CHECK_EQ(buf[7], 51);

    CHECK_STATUS(s.erase(30), ARK_OK);
    CHECK_STATUS(s.erase(30), ARK_ENOTFOUND);
    CHECK_STATUS(s.erase_at(0), ARK_OK);
    CHECK_EQ(s.at(0), 3);
    CHECK_STATUS(s.erase_at(5000), ARK_ERANGE);
    uint32_t batch[] = {3, 6, 7, 9, 2997};
    CHECK_STATUS(s.erase_sorted(batch, 5), ARK_OK);
    CHECK_EQ(s.size(), 1001 - 2 - 4);
    uint32_t unsorted[] = {12, 9};
    CHECK_STATUS(s.erase_sorted(unsorted, 2), ARK_EINVAL);
    CHECK_STATUS(s.validate(), ARK_OK);
    CHECK(s.c_idset() != nullptr);

    ark::idset t(std::move(s));
    CHECK(!s.ok());
    CHECK_EQ(s.size(), 0);
    CHECK_EQ(t.size(), 995);
    s = std::move(t);
    CHECK_EQ(s.size(), 995);
}

TEST(idset_set_algebra_and_iter_at) {
    ark::idset a, b, out;
    for (uint32_t id = 0; id < 2000; id += 2) {
        CHECK_OK(a.insert(id)); /* even */
    }
    for (uint32_t id = 0; id < 2000; id += 3) {
        CHECK_OK(b.insert(id)); /* multiples of 3 */
    }
    CHECK_EQ(a.intersect_count(b), 334); /* multiples of 6 below 2000 */
    CHECK_OK(out.intersect(a, b));
    CHECK_EQ(out.size(), 334);
    for (uint32_t id : out) {
        CHECK_EQ(id % 6, 0);
    }
    CHECK_OK(out.unite(a, b));
    CHECK_EQ(out.size(), 1000 + 667 - 334);
    CHECK_OK(out.difference(a, b));
    CHECK_EQ(out.size(), 1000 - 334);
    CHECK(!out.contains(6) && out.contains(4));
    CHECK_STATUS(out.validate(), ARK_OK);
    /* out may be an input. */
    CHECK_OK(a.intersect(a, b));
    CHECK_EQ(a.size(), 334);
    CHECK_EQ(b.size(), 667);

    /* iter_at starts at a position. */
    auto it = b.iter_at(10);
    CHECK_EQ(it.position(), 10);
    CHECK_EQ(*it, 30);
    CHECK(b.iter_at(5000) == b.end());
    size_t n = 0;
    for (; it != b.end(); ++it) {
        n++;
    }
    CHECK_EQ(n, 657);

    /* Allocation failure: out unchanged. */
    test_allocator ta;
    test_allocator_init(&ta);
    {
        ark::idset o(&ta.base);
        CHECK_OK(o.insert(1));
        bool failed = false;
        for (uint64_t k = 1; k < 20 && !failed; k++) {
            test_allocator_fail_at(&ta, k);
            ark_status st = o.unite(out, b);
            if (st != ARK_OK) {
                CHECK_STATUS(st, ARK_ENOMEM);
                CHECK_EQ(o.size(), 1);
                CHECK(o.contains(1));
                failed = true;
            }
            test_allocator_fail_at(&ta, 0);
            CHECK_OK(o.intersect(o, o)); /* idempotent */
            if (!failed) {
                CHECK_OK(o.difference(o, o));
                CHECK_OK(o.insert(1));
            }
        }
        CHECK(failed);
    }
    CHECK_EQ(ta.live_blocks, 0);
}

TEST(idset_allocation_failure) {
    test_allocator ta;
    test_allocator_init(&ta);
    {
        test_allocator_fail_at(&ta, 1);
        ark::idset bad(&ta.base);
        CHECK(!bad.ok());
        CHECK_STATUS(bad.last_status(), ARK_ENOMEM);
        test_allocator_fail_at(&ta, 0);
        ark::idset s(&ta.base);
        CHECK(s.ok());
        bool failed = false;
        for (uint32_t id = 0; id < 5000; id++) {
            if (id == 1000) {
                test_allocator_fail_at(&ta, 1);
            }
            size_t before = s.size();
            ark_status st = s.insert(id * 7);
            if (st != ARK_OK) {
                CHECK_STATUS(st, ARK_ENOMEM);
                CHECK_EQ(s.size(), before);
                failed = true;
            }
        }
        CHECK(failed);
        CHECK_STATUS(s.validate(), ARK_OK);
    }
    CHECK_EQ(ta.live_blocks, 0);
}

/* ---- idmap -------------------------------------------------------------- */

TEST(idmap_every_function) {
    ark::idmap m;
    CHECK(m.ok());
    CHECK(m.empty());
    CHECK_STATUS(m.insert(0, 10), ARK_OK);
    CHECK_STATUS(m.insert(UINT64_MAX, 20), ARK_OK);
    CHECK_STATUS(m.insert(0, 99), ARK_EEXIST);
    CHECK_STATUS(m.last_status(), ARK_EEXIST);
    CHECK_EQ(m.value_or(0, 0), 10); /* insert did not overwrite */
    CHECK_STATUS(m.insert_or_assign(0, 11), ARK_OK);
    CHECK_EQ(m.value_or(0, 0), 11);
    uint64_t v = 0;
    CHECK(m.get(UINT64_MAX, &v));
    CHECK_EQ(v, 20);
    CHECK(!m.get(5, &v));
    CHECK_EQ(v, 20);
    CHECK_EQ(m.value_or(5, 77), 77);
    CHECK(m.contains(0));
    CHECK_EQ(m.count(0), 1);
    CHECK_EQ(m.count(5), 0);
    uint64_t *p = m.find(UINT64_MAX);
    CHECK(p != nullptr);
    *p = 21;
    CHECK_EQ(m.value_or(UINT64_MAX, 0), 21);
    CHECK(m.find(5) == nullptr);
    const ark::idmap &cm = m;
    CHECK(*cm.find(0) == 11);

    CHECK_STATUS(m.reserve(5000), ARK_OK);
    for (uint64_t k = 1; k <= 4000; k++) {
        CHECK_STATUS(m.insert(k * 0x9e3779b97f4a7c15ull, k), ARK_OK);
    }
    CHECK_EQ(m.size(), 4002);
    uint64_t keys = 0, vals = 0;
    size_t n = 0;
    for (auto [key, value] : m) {
        keys ^= key;
        vals += value;
        n++;
    }
    uint64_t want_keys = 0 ^ UINT64_MAX, want_vals = 11 + 21;
    for (uint64_t k = 1; k <= 4000; k++) {
        want_keys ^= k * 0x9e3779b97f4a7c15ull;
        want_vals += k;
    }
    CHECK_EQ(n, 4002);
    CHECK_EQ(keys, want_keys);
    CHECK_EQ(vals, want_vals);

    CHECK(m.erase(0));
    CHECK(!m.erase(0));
    uint64_t old = 0;
    CHECK(m.take(UINT64_MAX, &old));
    CHECK_EQ(old, 21);
    CHECK(!m.take(UINT64_MAX, &old));
    CHECK(!m.contains(UINT64_MAX));
    CHECK_EQ(m.size(), 4000);
    CHECK(m.c_idmap() != nullptr);

    ark::idmap moved(std::move(m));
    CHECK(!m.ok());
    CHECK_EQ(m.size(), 0);
    CHECK_EQ(moved.size(), 4000);
    moved.clear();
    CHECK(moved.empty());
    n = 0;
    for (auto kv : moved) {
        (void)kv;
        n++;
    }
    CHECK_EQ(n, 0);
}

/* get(key) returns a std::optional: a present 0 is not absence. */
TEST(idmap_get_returns_optional) {
    ark::idmap m;
    CHECK(m.ok());
    CHECK_OK(m.insert(7, 70));
    CHECK_OK(m.insert(0, 0));
    CHECK_OK(m.insert(UINT64_MAX, UINT64_MAX));
    std::optional<uint64_t> v = m.get(7);
    CHECK(v.has_value());
    CHECK_EQ(*v, 70);
    CHECK(m.get(0).has_value()); /* a present zero is not absence */
    CHECK_EQ(m.get(0).value_or(5), 0);
    CHECK_EQ(*m.get(UINT64_MAX), UINT64_MAX);
    CHECK(!m.get(8).has_value());
    uint64_t out = 1;
    CHECK(m.get(7, &out)); /* the first form still works */
    CHECK_EQ(out, 70);
    CHECK(!m.get(8, &out));
    CHECK_EQ(out, 70);
    CHECK(m.erase(7));
    CHECK(!m.get(7));
}

/* set_seed makes iteration order a function of the calls; take with a
 * null old still removes. */
TEST(idmap_set_seed_and_take) {
    ark::idmap a, b;
    a.set_seed(12345);
    b.set_seed(12345);
    for (uint64_t k = 1; k <= 3000; k++) {
        CHECK_STATUS(a.insert(k * 0x9e3779b97f4a7c15ull, k), ARK_OK);
        CHECK_STATUS(b.insert(k * 0x9e3779b97f4a7c15ull, k), ARK_OK);
    }
    auto ia = a.begin();
    auto ib = b.begin();
    size_t n = 0;
    for (; ia != a.end(); ++ia, ++ib, n++) {
        CHECK(ib != b.end());
        CHECK_EQ((*ia).first, (*ib).first);
    }
    CHECK_EQ(n, 3000);
    CHECK(a.take(0x9e3779b97f4a7c15ull, nullptr));
    CHECK(!a.contains(0x9e3779b97f4a7c15ull));
    CHECK_EQ(a.size(), 2999);
    uint64_t old = 7;
    CHECK(!a.take(0x9e3779b97f4a7c15ull, &old));
    CHECK_EQ(old, 7); /* untouched on a miss */
}

TEST(idmap_allocation_failure) {
    test_allocator ta;
    test_allocator_init(&ta);
    {
        test_allocator_fail_at(&ta, 1);
        ark::idmap bad(&ta.base);
        CHECK(!bad.ok());
        CHECK_STATUS(bad.last_status(), ARK_ENOMEM);
        ark::idmap m(&ta.base);
        CHECK(m.ok());
        test_allocator_fail_at(&ta, 1);
        CHECK_STATUS(m.insert(1, 1), ARK_ENOMEM);
        CHECK_EQ(m.size(), 0);
        CHECK_STATUS(m.insert(1, 1), ARK_OK);
        test_allocator_fail_at(&ta, 1);
        CHECK_STATUS(m.reserve(1000), ARK_ENOMEM);
        CHECK_EQ(m.value_or(1, 0), 1);
    }
    CHECK_EQ(ta.live_blocks, 0);
}

/* ---- counted objects ---------------------------------------------------- */

namespace {

int g_sprites_destroyed = 0;

/* A Cocos2d-x-style Ref object: the ark_ref first, standard-layout. */
struct sprite {
    ark_ref ref;
    int frame;
    explicit sprite(int f = 0) : ref(), frame(f) {}
    ~sprite() { g_sprites_destroyed++; }
};

uint32_t rc(const sprite *s) { return ark_ref_count(&s->ref); }

} // namespace

TEST(ref_ptr_retain_release) {
    g_sprites_destroyed = 0;
    {
        ark::ref_ptr<sprite> a = ark::make_ref<sprite>(7);
        CHECK(a);
        CHECK_EQ(a.use_count(), 1);
        CHECK_EQ(a->frame, 7);
        CHECK_EQ((*a).frame, 7);
        ark::ref_ptr<sprite> b = a; /* copy retains */
        CHECK_EQ(a.use_count(), 2);
        CHECK(a == b);
        ark::ref_ptr<sprite> c = std::move(b); /* move does not */
        CHECK(!b);
        CHECK_EQ(b.use_count(), 0);
        CHECK_EQ(a.use_count(), 2);
        ark::ref_ptr<sprite> d(a.get()); /* from a raw pointer: retains */
        CHECK_EQ(a.use_count(), 3);
        d.reset();
        CHECK_EQ(a.use_count(), 2);
        c = a; /* same object: no change */
        CHECK_EQ(a.use_count(), 2);
        c = nullptr;
        CHECK_EQ(a.use_count(), 1);
        sprite *raw = a.detach();
        CHECK(!a);
        CHECK_EQ(rc(raw), 1);
        ark::ref_ptr<sprite> e = ark::ref_ptr<sprite>::adopt(raw);
        CHECK_EQ(e.use_count(), 1);
        ark::ref_ptr<sprite> f = ark::make_ref<sprite>(8);
        e.swap(f);
        CHECK_EQ(e->frame, 8);
        CHECK(e != f);
        CHECK_EQ(g_sprites_destroyed, 0);
        f.reset(e.get());
        CHECK_EQ(g_sprites_destroyed, 1); /* frame 7 let go */
        CHECK_EQ(e.use_count(), 2);
    }
    CHECK_EQ(g_sprites_destroyed, 2);
    {
        ark::ref_ptr<sprite> at = ark::make_ref_atomic<sprite>(9);
        CHECK(at);
        CHECK_EQ(at->ref.atomic, 1);
        ark::ref_ptr<sprite> copy = at;
        CHECK_EQ(at.use_count(), 2);
    }
    CHECK_EQ(g_sprites_destroyed, 3);
}

/* ref_ptr<const T>: made const, converted from ref_ptr<T> (copy retains,
 * move does not), never back; the containers take const T too. */
static_assert(
    std::is_convertible_v<ark::ref_ptr<sprite>, ark::ref_ptr<const sprite>>);
static_assert(
    !std::is_constructible_v<ark::ref_ptr<sprite>, ark::ref_ptr<const sprite>>);
static_assert(!std::is_constructible_v<ark::ref_ptr<sprite>, const sprite *>);

TEST(ref_ptr_to_const) {
    g_sprites_destroyed = 0;
    {
        ark::ref_ptr<const sprite> c = ark::make_ref<const sprite>(3);
        CHECK(c);
        CHECK_EQ(c->frame, 3);
        CHECK_EQ(c.use_count(), 1);
        static_assert(std::is_same_v<decltype(c.get()), const sprite *>);
        ark::ref_ptr<sprite> m = ark::make_ref_atomic<sprite>(4);
        ark::ref_ptr<const sprite> c2 = m; /* retains */
        CHECK_EQ(m.use_count(), 2);
        CHECK(c2.get() == m.get());
        ark::ref_ptr<const sprite> c3 = std::move(m); /* does not */
        CHECK(!m);
        CHECK_EQ(c3.use_count(), 2);
        ark::ref_ptr<const sprite> c4(c.get()); /* a const T *: retains */
        CHECK_EQ(c.use_count(), 2);
        ark::refvec<const sprite> v;
        CHECK_STATUS(v.push_back(c.get()), ARK_OK);
        CHECK_EQ(c.use_count(), 3);
        CHECK(v.at(0) == c.get());
        ark::refmap<const sprite> map;
        CHECK_STATUS(map.insert(1, c3.get()), ARK_OK);
        CHECK_EQ(c3.use_count(), 3);
        CHECK(map.at(1) == c3.get());
        c2.reset();
        CHECK_EQ(c3.use_count(), 2);
        CHECK_EQ(g_sprites_destroyed, 0);
    }
    CHECK_EQ(g_sprites_destroyed, 2); /* each once, by its own type */
}

/* ---- refvec: seed 003's Vector scenarios -------------------------------- */

TEST(refvec_cocos_copy_scenario) {
    /* testVector(): c1, c2 autoreleased (count 1, owned by the pool);
     * pushBack(c1), insert(1, c2) -> 2 2; popBack -> 2 1; a copy
     * constructed from v1 -> 3 1; a copy assigned from v1 -> 4 1. */
    g_sprites_destroyed = 0;
    {
        ark::autorelease_pool pool;
        CHECK(pool.ok());
        ark::ref_ptr<sprite> h1 = ark::make_ref<sprite>(1);
        ark::ref_ptr<sprite> h2 = ark::make_ref<sprite>(2);
        sprite *c1 = h1.get(), *c2 = h2.get();
        CHECK_STATUS(pool.add(std::move(h1)), ARK_OK);
        CHECK_STATUS(pool.add(std::move(h2)), ARK_OK);
        CHECK(!h1 && !h2);
        CHECK_EQ(pool.size(), 2);
        CHECK_EQ(rc(c1), 1);
        CHECK_EQ(rc(c2), 1);
        {
            ark::refvec<sprite> v1;
            CHECK_STATUS(v1.push_back(c1), ARK_OK);
            CHECK_STATUS(v1.insert(1, c2), ARK_OK);
            CHECK_EQ(rc(c1), 2);
            CHECK_EQ(rc(c2), 2);
            CHECK_STATUS(v1.pop_back(), ARK_OK);
            CHECK_EQ(rc(c1), 2);
            CHECK_EQ(rc(c2), 1);
            ark::refvec<sprite> v2 = ark::refvec<sprite>(v1);
            CHECK_EQ(rc(c1), 3);
            CHECK_EQ(rc(c2), 1);
            ark::refvec<sprite> v3;
            v3 = v1;
            CHECK_EQ(rc(c1), 4);
            CHECK_EQ(rc(c2), 1);
            CHECK_STATUS(v3.last_status(), ARK_OK);
            CHECK(v2.at(0) == c1 && v3.at(0) == c1);
        }
        /* The three vectors' destruction released three references. */
        CHECK_EQ(rc(c1), 1);
        CHECK_EQ(g_sprites_destroyed, 0);
        CHECK_EQ(pool.drain(), 2);
        CHECK_EQ(g_sprites_destroyed, 2);
    }
}

namespace {
/* getVector(): two autoreleased objects in a vector returned by value. */
ark::refvec<sprite> get_vector(ark::autorelease_pool &pool) {
    ark::ref_ptr<sprite> c1 = ark::make_ref<sprite>(1);
    ark::ref_ptr<sprite> c2 = ark::make_ref<sprite>(2);
    ark::refvec<sprite> v1;
    v1.push_back(c1.get());
    v1.insert(0, c2.get());
    pool.add(std::move(c1));
    pool.add(std::move(c2));
    return v1;
}
} // namespace

TEST(refvec_cocos_move_scenario) {
    /* testVectorMove(): moving the returned vector changes no count:
     * 2 2 both times (the vector's and the autorelease pool's). */
    g_sprites_destroyed = 0;
    ark::autorelease_pool pool;
    {
        ark::refvec<sprite> v2 = ark::refvec<sprite>(get_vector(pool));
        CHECK_EQ(v2.size(), 2);
        CHECK_EQ(rc(v2.at(1)), 2);
        CHECK_EQ(rc(v2.at(0)), 2);
        CHECK_EQ(v2.at(0)->frame, 2);
        ark::refvec<sprite> v3;
        v3 = get_vector(pool); /* move assignment */
        CHECK_EQ(rc(v3.at(1)), 2);
        CHECK_EQ(rc(v3.at(0)), 2);
        /* An explicit move: no count changes, the source is empty. */
        sprite *a = v3.at(0);
        ark::refvec<sprite> v4(std::move(v3));
        CHECK_EQ(v3.size(), 0);
        CHECK(v3.at(0) == nullptr);
        CHECK_EQ(rc(a), 2);
        /* Move assignment over a non-empty vector releases its elements
         * only. */
        sprite *b = v2.at(0);
        v2 = std::move(v4);
        CHECK_EQ(rc(b), 1);
        CHECK_EQ(rc(a), 2);
        CHECK_EQ(pool.drain(), 4);
        CHECK_EQ(g_sprites_destroyed, 2); /* v2's old elements */
        CHECK_EQ(rc(a), 1);
    }
    CHECK_EQ(g_sprites_destroyed, 4);
}

TEST(refvec_erase_replace_clear_destroy) {
    g_sprites_destroyed = 0;
    ark::ref_ptr<sprite> s[4];
    for (int i = 0; i < 4; i++) {
        s[i] = ark::make_ref<sprite>(i);
    }
    {
        ark::refvec<sprite> v;
        CHECK(v.empty());
        CHECK(v.at(0) == nullptr);
        CHECK_STATUS(v.erase(0), ARK_ERANGE);
        CHECK_STATUS(v.pop_back(), ARK_ERANGE);
        CHECK_STATUS(v.replace(0, s[0].get()), ARK_ERANGE);
        CHECK_STATUS(v.reserve(16), ARK_OK);
        for (int i = 0; i < 4; i++) {
            CHECK_STATUS(v.push_back(s[i].get()), ARK_OK);
        }
        CHECK_STATUS(v.push_back(s[0].get()), ARK_OK); /* twice: 2 refs */
        CHECK_STATUS(v.push_back(nullptr), ARK_EINVAL);
        CHECK_EQ(v.size(), 5);
        CHECK_EQ(s[0].use_count(), 3);
        CHECK_EQ(s[1].use_count(), 2);

        /* at() and iteration borrow: no count changes. */
        sprite *b = v.at(1);
        CHECK(b == s[1].get());
        int frames = 0;
        for (sprite *x : v) {
            frames += x->frame;
        }
        CHECK_EQ(frames, 0 + 1 + 2 + 3 + 0);
        CHECK_EQ(s[1].use_count(), 2);
        CHECK(v.front() == s[0].get() && v.back() == s[0].get());
        CHECK_EQ(v.index_of(s[2].get()), 2);
        CHECK(v.contains(s[3].get()));

        /* erase releases. */
        CHECK_STATUS(v.erase(1), ARK_OK);
        CHECK_EQ(s[1].use_count(), 1);
        CHECK(!v.contains(s[1].get()));
        CHECK_STATUS(v.erase(9), ARK_ERANGE);
        /* replace retains the new one and releases the old one. */
        CHECK_STATUS(v.replace(0, s[1].get()), ARK_OK);
        CHECK_EQ(s[1].use_count(), 2);
        CHECK_EQ(s[0].use_count(), 2);
        /* replacing an element by itself changes nothing. */
        CHECK_STATUS(v.replace(0, s[1].get()), ARK_OK);
        CHECK_EQ(s[1].use_count(), 2);
        CHECK_STATUS(v.replace(7, s[1].get()), ARK_ERANGE);
        CHECK_STATUS(v.replace(0, nullptr), ARK_EINVAL);
        /* a replaced last reference destroys its object. */
        {
            ark::ref_ptr<sprite> tmp = ark::make_ref<sprite>(9);
            CHECK_STATUS(v.push_back(tmp.get()), ARK_OK);
        }
        CHECK_EQ(g_sprites_destroyed, 0);
        CHECK_STATUS(v.replace(v.size() - 1, s[3].get()), ARK_OK);
        CHECK_EQ(g_sprites_destroyed, 1);
        CHECK(v.c_refvec() != nullptr);

        /* clear releases everything and keeps the vector usable. */
        v.clear();
        CHECK(v.empty());
        CHECK_EQ(s[0].use_count(), 1);
        CHECK_EQ(s[1].use_count(), 1);
        CHECK_EQ(s[2].use_count(), 1);
        CHECK_EQ(s[3].use_count(), 1);
        CHECK_STATUS(v.push_back(s[2].get()), ARK_OK);
        CHECK_STATUS(v.push_back(s[2].get()), ARK_OK);
        CHECK_EQ(s[2].use_count(), 3);
        /* copy_from onto itself changes nothing; onto an empty source
         * clears. */
        CHECK_STATUS(v.copy_from(v), ARK_OK);
        CHECK_EQ(s[2].use_count(), 3);
        ark::refvec<sprite> none;
        ark::refvec<sprite> w(v);
        CHECK_EQ(s[2].use_count(), 5);
        CHECK_STATUS(w.copy_from(none), ARK_OK);
        CHECK_EQ(s[2].use_count(), 3);
    }
    /* destruction released the vector's two references. */
    CHECK_EQ(s[2].use_count(), 1);
    CHECK_EQ(g_sprites_destroyed, 1);
}

TEST(refvec_copy_allocation_failure) {
    g_sprites_destroyed = 0;
    test_allocator ta;
    test_allocator_init(&ta);
    ark::ref_ptr<sprite> a = ark::make_ref<sprite>(1);
    {
        ark::refvec<sprite> v(&ta.base);
        CHECK_STATUS(v.push_back(a.get()), ARK_OK);
        CHECK_EQ(a.use_count(), 2);

        /* The copy cannot allocate: empty, ENOMEM, no count changed. */
        test_allocator_fail_at(&ta, 1);
        ark::refvec<sprite> c(v);
        CHECK_STATUS(c.last_status(), ARK_ENOMEM);
        CHECK(c.empty());
        CHECK_EQ(a.use_count(), 2);

        /* copy_from into an existing vector: unchanged on failure. */
        ark::ref_ptr<sprite> b = ark::make_ref<sprite>(2);
        ark::refvec<sprite> d(&ta.base);
        CHECK_STATUS(d.push_back(b.get()), ARK_OK);
        test_allocator_fail_at(&ta, 1);
        CHECK_STATUS(d.copy_from(v), ARK_ENOMEM);
        CHECK_EQ(d.size(), 1);
        CHECK(d.at(0) == b.get());
        CHECK_EQ(b.use_count(), 2);
        CHECK_EQ(a.use_count(), 2);
        CHECK_STATUS(d.copy_from(v), ARK_OK);
        CHECK_EQ(b.use_count(), 1);
        CHECK_EQ(a.use_count(), 3);

        /* push_back that cannot create or grow: ENOMEM, no retain. */
        ark::refvec<sprite> e(&ta.base);
        test_allocator_fail_at(&ta, 1);
        CHECK_STATUS(e.push_back(a.get()), ARK_ENOMEM);
        CHECK_EQ(a.use_count(), 3);
    }
    CHECK_EQ(a.use_count(), 1);
    CHECK_EQ(ta.live_blocks, 0);
}

/* ---- refmap: seed 003's Map scenarios ----------------------------------- */

TEST(refmap_cocos_scenarios) {
    g_sprites_destroyed = 0;
    ark::ref_ptr<sprite> a = ark::make_ref<sprite>(1);
    ark::ref_ptr<sprite> b = ark::make_ref<sprite>(2);
    {
        ark::refmap<sprite> m;
        CHECK(m.empty());
        CHECK(m.at(1) == nullptr);
        CHECK(!m.erase(1));
        CHECK_STATUS(m.reserve(64), ARK_OK);
        /* insert retains. */
        CHECK_STATUS(m.insert(1, a.get()), ARK_OK);
        CHECK_STATUS(m.insert(UINT64_MAX, b.get()), ARK_OK);
        CHECK_STATUS(m.insert(0, a.get()), ARK_OK);
        CHECK_STATUS(m.insert(5, nullptr), ARK_EINVAL);
        CHECK_EQ(m.size(), 3);
        CHECK_EQ(a.use_count(), 3);
        CHECK_EQ(b.use_count(), 2);
        /* at is borrowed. */
        CHECK(m.at(1) == a.get());
        CHECK(m.find(UINT64_MAX) == b.get());
        CHECK(m.contains(0));
        CHECK_EQ(a.use_count(), 3);
        /* the same object again: no change; another one: the old one is
         * released. */
        CHECK_STATUS(m.insert(1, a.get()), ARK_OK);
        CHECK_EQ(a.use_count(), 3);
        CHECK_STATUS(m.insert(1, b.get()), ARK_OK);
        CHECK_EQ(a.use_count(), 2);
        CHECK_EQ(b.use_count(), 3);

        /* a copy retains every value; a move changes none. */
        ark::refmap<sprite> c(m);
        CHECK_STATUS(c.last_status(), ARK_OK);
        CHECK_EQ(c.size(), 3);
        CHECK_EQ(a.use_count(), 3);
        CHECK_EQ(b.use_count(), 5);
        CHECK(c.at(UINT64_MAX) == b.get() && c.at(0) == a.get());
        ark::refmap<sprite> d(std::move(c));
        CHECK(c.empty());
        CHECK_EQ(a.use_count(), 3);
        CHECK_EQ(b.use_count(), 5);
        ark::refmap<sprite> e;
        e = d; /* copy assignment */
        CHECK_EQ(b.use_count(), 7);
        e = std::move(d); /* releases e's old values, takes d's */
        CHECK_EQ(b.use_count(), 5);
        CHECK_EQ(a.use_count(), 3);

        /* for_each visits every entry, borrowed; stops on false. */
        int sum = 0, visits = 0;
        e.for_each([&](uint64_t key, sprite *s) {
            (void)key;
            sum += s->frame;
        });
        CHECK_EQ(sum, 2 + 2 + 1);
        e.for_each([&](uint64_t, sprite *) { return ++visits < 2; });
        CHECK_EQ(visits, 2);

        /* erase releases; clear releases all. */
        CHECK(e.erase(UINT64_MAX));
        CHECK(!e.erase(UINT64_MAX));
        CHECK_EQ(b.use_count(), 4);
        e.clear();
        CHECK(e.empty());
        CHECK_EQ(b.use_count(), 3);
        CHECK_EQ(a.use_count(), 2);
        CHECK(m.c_refmap() != nullptr);
        CHECK_STATUS(m.copy_from(m), ARK_OK);
        CHECK_EQ(a.use_count(), 2);
    }
    /* destruction released m's values. */
    CHECK_EQ(a.use_count(), 1);
    CHECK_EQ(b.use_count(), 1);
    CHECK_EQ(g_sprites_destroyed, 0);
    a.reset();
    b.reset();
    CHECK_EQ(g_sprites_destroyed, 2);
}

TEST(refmap_copy_allocation_failure) {
    test_allocator ta;
    test_allocator_init(&ta);
    ark::ref_ptr<sprite> a = ark::make_ref<sprite>(1);
    ark::ref_ptr<sprite> b = ark::make_ref<sprite>(2);
    {
        ark::refmap<sprite> m(&ta.base);
        for (uint64_t k = 0; k < 100; k++) {
            CHECK_STATUS(m.insert(k, (k & 1) ? a.get() : b.get()), ARK_OK);
        }
        CHECK_EQ(a.use_count(), 51);
        ark::refmap<sprite> d(&ta.base);
        CHECK_STATUS(d.insert(7, a.get()), ARK_OK);
        bool ok = false;
        for (uint64_t k = 1; k < 20 && !ok; k++) {
            test_allocator_fail_at(&ta, k);
            ark_status s = d.copy_from(m);
            if (s != ARK_OK) {
                CHECK_STATUS(s, ARK_ENOMEM);
                CHECK_EQ(d.size(), 1); /* unchanged */
                CHECK_EQ(a.use_count(), 52);
                CHECK_EQ(b.use_count(), 51);
            } else {
                ok = true;
            }
        }
        test_allocator_fail_at(&ta, 0);
        CHECK(ok);
        CHECK_EQ(d.size(), 100);
        CHECK_EQ(a.use_count(), 101);
        CHECK_EQ(b.use_count(), 101);
    }
    CHECK_EQ(a.use_count(), 1);
    CHECK_EQ(b.use_count(), 1);
    CHECK_EQ(ta.live_blocks, 0);
}

#if defined(__cpp_exceptions)
/* A for_each callback that throws: the walk stops at that entry (the
 * exception is caught in the C walk's callback, which ends the walk, and
 * rethrown once it has returned), the exception reaches the caller, and
 * the map is unchanged and walks again. */
TEST(exc_refmap_for_each_throw_stops_the_walk) {
    ark::ref_ptr<sprite> a = ark::make_ref<sprite>(1);
    {
        ark::refmap<sprite> m;
        for (uint64_t k = 0; k < 10; k++) {
            CHECK_STATUS(m.insert(k, a.get()), ARK_OK);
        }
        int visits = 0;
        bool caught = false;
        try {
            m.for_each([&](uint64_t, sprite *) {
                if (++visits == 3) {
                    throw visits;
                }
            });
        } catch (int v) {
            caught = v == 3;
        }
        CHECK(caught);
        CHECK_EQ(visits, 3);
        CHECK_EQ(m.size(), 10);
        CHECK_EQ(a.use_count(), 11);
        visits = 0;
        m.for_each([&](uint64_t, sprite *) { visits++; });
        CHECK_EQ(visits, 10);
    }
    CHECK_EQ(a.use_count(), 1);
}
#endif

/* ---- mainq -------------------------------------------------------------- */

namespace {
void plain_task() {}
int g_boxed_destroyed = 0;
int g_boxed_ran = 0;
/* A callable too large to travel in the argument, counting itself. */
struct boxed_task {
    std::string payload;
    std::vector<int> *log;
    boxed_task(std::string p, std::vector<int> *l)
        : payload(std::move(p)), log(l) {}
    boxed_task(const boxed_task &) = default;
    boxed_task(boxed_task &&) = default;
    ~boxed_task() { g_boxed_destroyed++; }
    void operator()() {
        g_boxed_ran++;
        log->push_back((int)payload.size());
    }
};
} // namespace

TEST(mainq_any_callable_fifo) {
    int x = 0;
    auto small = [&x] { x++; };
    auto empty = [] {};
    std::string big(100, 'b');
    auto large = [big] { (void)big; };
    static_assert(ark::mainq::posts_inline<decltype(small)>);
    static_assert(ark::mainq::posts_inline<decltype(empty)>);
    static_assert(ark::mainq::posts_inline<decltype(&plain_task)>);
    static_assert(!ark::mainq::posts_inline<decltype(large)>);
    static_assert(!ark::mainq::posts_inline<boxed_task>);

    g_boxed_destroyed = g_boxed_ran = 0;
    std::vector<int> log;
    {
        ark::mainq q;
        CHECK(q.ok());
        CHECK_EQ(q.pending(), 0);
        for (int i = 0; i < 5; i++) {
            CHECK_STATUS(q.post([&log, i] { log.push_back(i); }), ARK_OK);
            CHECK_STATUS(
                q.post(boxed_task(std::string((size_t)i + 100, 'x'), &log)),
                ARK_OK);
        }
        CHECK_STATUS(q.post(small), ARK_OK);
        CHECK_STATUS(q.post(&plain_task), ARK_OK);
        CHECK_STATUS(q.post(large), ARK_OK);
        CHECK_EQ(q.pending(), 13);
        CHECK_EQ(q.run(3), 3); /* a bounded run */
        CHECK_EQ(log.size(), 3);
        CHECK_EQ(log[0], 0);
        CHECK_EQ(log[1], 100);
        CHECK_EQ(log[2], 1);
        /* A task that posts: the new task waits for the next run. */
        CHECK_STATUS(q.post([&q, &log] {
            log.push_back(-1);
            q.post([&log] { log.push_back(-2); });
        }),
                     ARK_OK);
        CHECK_EQ(q.run(), 11);
        CHECK_EQ(x, 1);
        CHECK_EQ(log.back(), -1);
        CHECK_EQ(log.size(), 11);
        CHECK_EQ(log[9], 104);
        CHECK_EQ(q.pending(), 1);
        CHECK_EQ(q.drain(), 1);
        CHECK_EQ(log.back(), -2);
        CHECK_EQ(g_boxed_ran, 5);
        CHECK(q.c_mainq() != nullptr);
    }
    /* Each boxed callable destroyed: the posted temporary, its moved-into
     * box. */
    CHECK_EQ(g_boxed_destroyed, 10);
}

TEST(mainq_destructor_discards_but_destroys) {
    g_boxed_destroyed = g_boxed_ran = 0;
    std::vector<int> log;
    int ran = 0;
    {
        ark::mainq q;
        boxed_task t("payload that lives on the heap, long enough", &log);
        for (int i = 0; i < 100; i++) {
            CHECK_STATUS(q.post(t), ARK_OK); /* copies */
            CHECK_STATUS(q.post([&ran] { ran++; }), ARK_OK);
        }
        CHECK_EQ(q.pending(), 200);
        CHECK_EQ(q.run(2), 2);
        CHECK_EQ(g_boxed_ran, 1);
        CHECK_EQ(g_boxed_destroyed, 1);

        ark::mainq moved(std::move(q));
        CHECK(!q.ok());
        CHECK_EQ(q.pending(), 0);
        CHECK_EQ(moved.pending(), 198);
    }
    /* Not run, but every box freed (ASan / valgrind see a leak if not):
     * 100 boxes + the local. */
    CHECK_EQ(g_boxed_ran, 1);
    CHECK_EQ(ran, 1);
    CHECK_EQ(g_boxed_destroyed, 101);
}

namespace {
/* One producer thread (harness threads: pthreads, or Win32 threads). */
struct producer {
    ark::mainq *q;
    std::atomic<int> *posted;
    long *sum;
    int t;
};
void *produce(void *arg) {
    producer *p = static_cast<producer *>(arg);
    long *sum = p->sum;
    for (int i = 0; i < 1000; i++) {
        long v = p->t * 1000 + i;
        ark_status s;
        if (i % 2) {
            s = p->q->post([sum, v] { *sum += v; }); /* 16 bytes: boxed */
        } else {
            std::string pad(40, 'p');
            s = p->q->post(
                [sum, v, pad] { *sum += v + (long)pad.size() - 40; });
        }
        if (s != ARK_OK) {
            return nullptr;
        }
        p->posted->fetch_add(1);
    }
    return nullptr;
}
} // namespace

TEST(thread_mainq_posts_from_threads) {
    ark::mainq q;
    CHECK(q.ok());
    std::atomic<int> posted{0};
    long sum = 0;
    producer ps[4];
    harness_thread th[4];
    for (int t = 0; t < 4; t++) {
        ps[t] = producer{&q, &posted, &sum, t};
        CHECK_EQ(harness_thread_start(&th[t], produce, &ps[t]), 0);
    }
    size_t ran = 0;
    while (posted.load() < 4000 || q.pending() > 0) {
        ran += q.run();
    }
    for (int t = 0; t < 4; t++) {
        CHECK_EQ(harness_thread_join(th[t]), 0);
    }
    ran += q.run();
    CHECK_EQ(posted.load(), 4000);
    CHECK_EQ(ran, 4000);
    CHECK_EQ(sum, 4000L * 3999 / 2);
}

/* ---- the small remaining pieces ----------------------------------------- */

TEST(misc_strerror_iterators_autorelease) {
    CHECK(std::string(ark::strerror(ARK_ESTALE)) == ark_strerror(ARK_ESTALE));
    CHECK(std::string(ark::strerror(ARK_OK)) == "ok");

    /* Post-increments of the input iterators. */
    ark::pool<int> p;
    p.insert(1);
    p.insert(2);
    auto it = p.begin();
    CHECK_EQ(*it, 1);
    it++;
    CHECK_EQ(*it, 2);
    it++;
    CHECK(it == p.end());
    ark::idset s;
    s.insert(5);
    s.insert(9);
    auto si = s.begin();
    auto old = si++;
    CHECK_EQ(*old, 5);
    CHECK_EQ(*si, 9);
    CHECK_EQ(si.position(), 1);
    ark::idmap m;
    m.insert(3, 4);
    auto mi = m.begin();
    CHECK_EQ((*mi).second, 4);
    mi++;
    CHECK(mi == m.end());

    ark::table t({4});
    CHECK(t.empty());
    CHECK(t.c_table() != nullptr);
    t.insert();
    CHECK(!t.empty());

    /* autorelease_pool: add(T *) hands over one reference; add(nullptr)
     * is EINVAL; moving the pool moves the references. */
    g_sprites_destroyed = 0;
    {
        ark::autorelease_pool a;
        CHECK_STATUS(a.add(static_cast<sprite *>(nullptr)), ARK_EINVAL);
        CHECK_STATUS(a.last_status(), ARK_EINVAL);
        sprite *raw = ark::make_ref<sprite>(3).detach();
        CHECK_EQ(rc(raw), 1);
        CHECK_STATUS(a.add(raw), ARK_OK);
        CHECK_EQ(rc(raw), 1);
        ark::autorelease_pool b(std::move(a));
        CHECK(!a.ok());
        CHECK_EQ(a.size(), 0);
        CHECK_EQ(b.size(), 1);
        CHECK_EQ(g_sprites_destroyed, 0);
    } /* b's destructor drains */
    CHECK_EQ(g_sprites_destroyed, 1);
}
