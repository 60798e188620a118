/* SPDX-License-Identifier: MIT */
/*
 * test_cpp_fixes.cpp - ark.hpp behaviours an adversarial test found
 * broken: ark::table's column<C>(k) / get<C>(h, k) past the columns and
 * its allocator check, refmap::for_each with a plain function, ~mainq's
 * discard flag leaking into other queues, and exceptions from the
 * caller's constructors in mainq::post and make_ref. Cases named exc_*
 * need exceptions; the -fno-exceptions build leaves them out
 * (tests/cpp/CMakeLists.txt).
 */
#include "cpp_harness.hpp"

#include <cstdint>
#include <memory>
#include <string>

/* ---- table -------------------------------------------------------------- */

/* column<C>(k) and get<C>(h, k) promise nullptr for a k out of range;
 * debug builds asserted instead. */
TEST(table_column_out_of_range_is_null) {
    ark::table t({sizeof(float), sizeof(int)});
    CHECK(t.ok());
    auto h = t.insert();
    CHECK(h);
    CHECK(t.column<float>(0) != nullptr);
    CHECK(t.get<int>(h, 1) != nullptr);
    CHECK(t.column<float>(2) == nullptr);
    CHECK(t.column<double>(5) == nullptr); /* any C: sizeof is not checked */
    CHECK(t.column<char>(SIZE_MAX) == nullptr);
    CHECK(t.get<int>(h, 2) == nullptr);
    CHECK(t.get<int>(h, 7) == nullptr);
    CHECK(t.get<int>(ark::table::handle_type(), 9) == nullptr);
}

/* An allocator missing a function is ARK_EINVAL, as table.h promises and
 * ark::pool reports; the wrapper used to call the null pointer for its
 * copy of the column sizes. Nothing is allocated through the half. */
TEST(table_allocator_missing_a_function_is_einval) {
    for (int missing = 0; missing < 2; missing++) {
        test_allocator ta;
        test_allocator_init(&ta);
        ark_allocator half = ta.base;
        if (missing == 0) {
            half.alloc = nullptr;
        } else {
            half.free = nullptr;
        }
        ark::table_options o;
        o.allocator = &half;
        {
            ark::table t({sizeof(int), sizeof(double)}, o);
            CHECK(!t.ok());
            CHECK_STATUS(t.last_status(), ARK_EINVAL);
            CHECK_EQ(t.ncolumns(), 0);
            size_t sizes[1] = {4};
            ark::table arr(sizes, 1, o);
            CHECK(!arr.ok());
            CHECK_STATUS(arr.last_status(), ARK_EINVAL);
            ark::table moved(std::move(t));
            CHECK(!moved.ok());
        }
        CHECK_EQ(ta.allocs, 0);
        CHECK_EQ(ta.frees, 0);

        /* ark::pool agrees. */
        ark::pool_options po;
        po.allocator = &half;
        ark::pool<int> p(po);
        CHECK(!p.ok());
        CHECK_STATUS(p.last_status(), ARK_EINVAL);
    }
    /* The whole allocator still works. */
    test_allocator ta;
    test_allocator_init(&ta);
    {
        ark::table_options o;
        o.allocator = &ta.base;
        ark::table t({4}, o);
        CHECK(t.ok());
        CHECK(t.insert());
    }
    CHECK_EQ(ta.live_blocks, 0);
}

/* ---- refmap::for_each --------------------------------------------------- */

namespace {
struct item {
    ark_ref ref;
    int v;
    explicit item(int x = 0) : ref(), v(x) {}
};
int g_item_total = 0;
int g_item_calls = 0;
void add_item(uint64_t key, item *it) {
    g_item_total += it->v + (int)key;
    g_item_calls++;
}
bool add_item_until_two(uint64_t, item *it) {
    g_item_calls++;
    return g_item_calls < 2 && it != nullptr;
}
struct summer {
    int *sum;
    void operator()(uint64_t, item *it) const { *sum += it->v; }
};
} // namespace

/* A plain function did not compile: the callable's address was cast to
 * const void *, which a function's address does not convert to. */
TEST(refmap_for_each_takes_plain_functions) {
    ark::refmap<item> m;
    m.for_each(add_item); /* empty, nothing allocated: no call */
    CHECK_EQ(g_item_calls, 0);
    for (int i = 1; i <= 3; i++) {
        auto r = ark::make_ref<item>(i * 10);
        CHECK(r);
        CHECK_STATUS(m.insert((uint64_t)i, r.get()), ARK_OK);
    }

    g_item_total = g_item_calls = 0;
    m.for_each(add_item); /* a function lvalue */
    CHECK_EQ(g_item_calls, 3);
    CHECK_EQ(g_item_total, 60 + 6);

    g_item_total = g_item_calls = 0;
    void (&fref)(uint64_t, item *) = add_item;
    m.for_each(fref); /* a function reference */
    CHECK_EQ(g_item_total, 66);

    g_item_total = g_item_calls = 0;
    void (*fptr)(uint64_t, item *) = &add_item;
    m.for_each(fptr);      /* a function pointer, lvalue */
    m.for_each(&add_item); /* and rvalue */
    CHECK_EQ(g_item_total, 2 * 66);

    g_item_calls = 0;
    m.for_each(add_item_until_two); /* a bool function stops the walk */
    CHECK_EQ(g_item_calls, 2);

    int sum = 0;
    const summer s{&sum};
    m.for_each(s);            /* a const function object */
    m.for_each(summer{&sum}); /* an rvalue one */
    m.for_each([&sum](uint64_t, item *it) { sum += it->v; });
    CHECK_EQ(sum, 3 * 60);

    /* No count changed. */
    for (uint64_t k = 1; k <= 3; k++) {
        CHECK_EQ(ark_ref_count(&m.at(k)->ref), 1);
    }
}

/* ---- refvec / refmap keep their allocator by value ------------------- */

/* refvec and refmap create their C container at the first element; they
 * kept the caller's allocator pointer until then, so a struct that had
 * gone out of scope (or changed) was used (ASan: stack-use-after-scope).
 * Here the struct is spoilt after construction: the copy must serve. */
TEST(refvec_and_refmap_copy_their_allocator) {
    test_allocator t;
    test_allocator_init(&t);
    {
        ark_allocator a = t.base;
        ark::refvec<item> v(&a);
        ark::refmap<item> m(&a);
        a.alloc = nullptr; /* the caller's struct is gone */
        a.free = nullptr;
        auto r = ark::make_ref<item>(5);
        CHECK(r);
        CHECK_STATUS(v.push_back(r.get()), ARK_OK);
        CHECK_STATUS(m.insert(1, r.get()), ARK_OK);
        CHECK(t.allocs >= 2);
        CHECK_EQ(v.size(), 1u);
        CHECK(m.at(1) == r.get());
    }
    CHECK_EQ(t.live_blocks, 0);
}

/* ---- mainq -------------------------------------------------------------- */

namespace {
int g_worker_ran = 0;
int g_must_not_run = 0;
int g_inner_destroyed = 0;
/* A boxed callable (a std::string does not fit in the argument). */
struct payload_task {
    std::string s;
    int *counter;
    void operator()() { ++*counter; }
};
struct inner_guard {
    int *destroyed;
    explicit inner_guard(int *d) : destroyed(d) {}
    inner_guard(const inner_guard &o) : destroyed(o.destroyed) {}
    ~inner_guard() { ++*destroyed; }
};
/* Owns a queue and runs its outstanding work when it goes away. */
struct worker {
    ark::mainq q;
    size_t *report;
    explicit worker(size_t *r) : report(r) {}
    ~worker() { *report = q.drain(); }
};
/* Owns a queue it destroys (discarding its tasks) when it goes away. */
struct dropper {
    ark::mainq q;
};
} // namespace

/* ~mainq set a thread-wide discard flag while it destroyed its pending
 * callables, so a callable whose destructor drained ANOTHER queue made
 * that drain discard the other queue's tasks: they never ran. */
TEST(mainq_discarded_callable_may_drain_another_queue) {
    g_worker_ran = g_must_not_run = 0;
    size_t drained = 99;
    auto w = std::make_shared<worker>(&drained);
    CHECK(w->q.ok());
    CHECK_STATUS(w->q.post([] { ++g_worker_ran; }), ARK_OK); /* inline */
    CHECK_STATUS(w->q.post(payload_task{std::string(64, 'w'), &g_worker_ran}),
                 ARK_OK); /* boxed */
    {
        ark::mainq main_q;
        CHECK(main_q.ok());
        /* Discarded, not run: each queue's tasks before and after the one
         * whose destructor drains the worker's queue. */
        CHECK_STATUS(main_q.post([] { ++g_must_not_run; }), ARK_OK);
        CHECK_STATUS(main_q.post([w] { ++g_must_not_run; }), ARK_OK);
        CHECK_STATUS(main_q.post([] { ++g_must_not_run; }), ARK_OK);
        CHECK_STATUS(
            main_q.post(payload_task{std::string(64, 'm'), &g_must_not_run}),
            ARK_OK);
        w.reset(); /* the queued lambda holds the last reference */
        CHECK_EQ(main_q.pending(), 4);
    }
    CHECK_EQ(drained, 2);
    CHECK_EQ(g_worker_ran, 2);
    CHECK_EQ(g_must_not_run, 0);
}

/* The other way round: a discarded callable that destroys another queue
 * has that queue's tasks discarded (destroyed, not run) too, and the
 * outer queue goes on discarding its own. */
TEST(mainq_discarded_callable_may_destroy_another_queue) {
    g_must_not_run = g_inner_destroyed = 0;
    auto d = std::make_shared<dropper>();
    CHECK(d->q.ok());
    inner_guard g(&g_inner_destroyed);
    CHECK_STATUS(d->q.post([g] { ++g_must_not_run; }), ARK_OK);
    CHECK_STATUS(d->q.post([] { ++g_must_not_run; }), ARK_OK);
    {
        ark::mainq main_q;
        CHECK_STATUS(main_q.post([d] { ++g_must_not_run; }), ARK_OK);
        CHECK_STATUS(main_q.post([] { ++g_must_not_run; }), ARK_OK);
        d.reset();
        g_inner_destroyed = 0; /* the temporary posted above is gone */
    }
    CHECK_EQ(g_must_not_run, 0);
    /* The copy in the inner queue's box was destroyed. */
    CHECK_EQ(g_inner_destroyed, 1);
}

/* ---- exceptions from the caller's constructors -------------------------- */

namespace {
/* Copying may throw (as a std::string's copy may); this one does not. */
struct maythrow {
    int v = 0;
    maythrow() = default;
    maythrow(const maythrow &o) : v(o.v) {}
};
struct plain_item {
    ark_ref ref;
    int v;
};
void plain_task_for_noexcept() {}
} // namespace

/* post and make_ref are noexcept exactly when the constructor they call
 * is, in both builds; without exceptions a potentially throwing callable
 * is still posted and run. */
TEST(mainq_post_and_make_ref_noexcept_follow_the_constructor) {
    ark::mainq q;
    CHECK(q.ok());
    int ran = 0;
    maythrow m;
    m.v = 5;
    auto throwing = [m, &ran] { ran += m.v; };
    auto quiet = [&ran] { ran++; };
    std::string big(50, 'b');
    auto big_task = [big, &ran] { ran += (int)big.size(); };
    static_assert(!noexcept(q.post(throwing)));
    static_assert(!noexcept(q.post(big_task))); /* std::string's copy */
    static_assert(noexcept(q.post(std::move(big_task)))); /* its move */
    static_assert(noexcept(q.post(quiet)));
    static_assert(noexcept(q.post(&plain_task_for_noexcept)));
    static_assert(!noexcept(ark::make_ref<item>(1)));
    static_assert(noexcept(ark::make_ref<plain_item>()));
    static_assert(noexcept(ark::make_ref_atomic<plain_item>()));
    CHECK_STATUS(q.post(throwing), ARK_OK);
    CHECK_STATUS(q.post(quiet), ARK_OK);
    CHECK_STATUS(q.post(&plain_task_for_noexcept), ARK_OK);
    CHECK_EQ(q.drain(), 3);
    CHECK_EQ(ran, 6);
}

#if defined(__cpp_exceptions)
namespace {
int g_capture_live = 0;
bool g_capture_copy_fails = false;
/* Stands for a std::string captured by value when memory runs out. */
struct throwing_capture {
    throwing_capture() { g_capture_live++; }
    throwing_capture(const throwing_capture &) {
        if (g_capture_copy_fails) {
            throw std::bad_alloc();
        }
        g_capture_live++;
    }
    ~throwing_capture() { g_capture_live--; }
};
int g_thrower_destroyed = 0;
struct throwing_item {
    ark_ref ref;
    int v;
    explicit throwing_item(int x) : ref(), v(x) {
        if (x < 0) {
            throw x;
        }
    }
    ~throwing_item() { g_thrower_destroyed++; }
};
} // namespace

/* A callable whose copy throws: std::terminate before (post was
 * noexcept); now the exception propagates and nothing is queued (ASan /
 * valgrind check the box's memory). */
TEST(exc_mainq_post_throwing_copy_propagates) {
    g_capture_live = 0;
    int ran = 0;
    {
        ark::mainq q;
        CHECK(q.ok());
        throwing_capture c;
        auto task = [c, &ran] {
            (void)c;
            ran++;
        };
        CHECK_EQ(g_capture_live, 2); /* c and task's copy */
        g_capture_copy_fails = true;
        for (int i = 0; i < 2; i++) {
            bool caught = false;
            try {
                if (i == 0) {
                    q.post(task); /* copy */
                } else {
                    q.post(std::move(task)); /* no move ctor: copies */
                }
            } catch (const std::bad_alloc &) {
                caught = true;
            }
            CHECK(caught);
            CHECK_EQ(q.pending(), 0);
            CHECK_EQ(g_capture_live, 2);
        }
        g_capture_copy_fails = false;
        CHECK_STATUS(q.post(task), ARK_OK);
        CHECK_EQ(q.drain(), 1);
        CHECK_EQ(ran, 1);
        CHECK_EQ(g_capture_live, 2); /* the box's copy was freed */
    }
    CHECK_EQ(g_capture_live, 0);
}

/* A T whose constructor throws: std::terminate before (make_ref was
 * noexcept); now the exception propagates, no ~T runs, the memory is
 * freed (ASan / valgrind). */
TEST(exc_make_ref_throwing_constructor_propagates) {
    g_thrower_destroyed = 0;
    for (int atomic = 0; atomic < 2; atomic++) {
        int caught = 0;
        bool returned = false;
        try {
            auto r = atomic ? ark::make_ref_atomic<throwing_item>(-3)
                            : ark::make_ref<throwing_item>(-3);
            returned = true;
        } catch (int v) {
            caught = v;
        }
        CHECK(!returned);
        CHECK_EQ(caught, -3);
        CHECK_EQ(g_thrower_destroyed, 0);
    }
    {
        auto r = ark::make_ref<throwing_item>(4);
        CHECK(r);
        CHECK_EQ(r.use_count(), 1);
        CHECK_EQ(r->v, 4);
    }
    CHECK_EQ(g_thrower_destroyed, 1);
}
#endif
