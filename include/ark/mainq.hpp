/* SPDX-License-Identifier: MIT */
/*
 * ark/mainq.hpp - C++: mainq: posts any callable to the main-thread queue.
 * See ark/ark.hpp for the overview and docs/cpp.md for the guide.
 */
#ifndef ARK_MAINQ_HPP
#define ARK_MAINQ_HPP

#include "ark/handle.hpp"

namespace ark {

/* ---- mainq ----------------------------------------------------------------
 */

namespace detail {

/*
 * Set on the thread running ~mainq while that queue's drain dispatches its
 * tasks: the trampolines then destroy their callables without calling
 * them. It must mean "this queue's tasks" only, yet a trampoline cannot
 * tell which queue runs it. So it is cleared whenever user code runs
 * inside that drain, which is only a boxed callable's destructor (an
 * inline one is trivially destructible): another queue that destructor
 * drains or destroys then runs or discards its own tasks as usual.
 */
inline thread_local bool mainq_discarding = false;

template <class F>
inline constexpr bool fits_in_arg = std::is_trivially_copyable_v<F> &&
                                    sizeof(F) <= sizeof(void *) &&
                                    alignof(F) <= alignof(void *);

template <class F> void run_inline(void *arg) {
    if (mainq_discarding) {
        return;
    }
    alignas(F) unsigned char buf[sizeof(F)];
    std::memcpy(buf, &arg, sizeof(F));
    (*std::launder(reinterpret_cast<F *>(buf)))();
}

template <class F> void run_boxed(void *arg) {
    F *f = static_cast<F *>(arg);
    if (mainq_discarding) {
        /* ~F is user code: see mainq_discarding. The dying queue's own
         * drain refuses to nest (the C queue is running), so clearing the
         * flag cannot make it run one of its tasks. */
        mainq_discarding = false;
        delete f;
        mainq_discarding = true;
        return;
    }
    (*f)();
    delete f;
}

} // namespace detail

/*
 * A main-thread task queue (see mainq.h) that takes any callable.
 *
 * Cost per post, besides the C queue's O(1) under its mutex:
 * - a trivially copyable callable of at most sizeof(void *) bytes (a
 *   function pointer, a lambda capturing nothing or one pointer or int)
 *   travels inside the C task's argument: no allocation;
 * - any other callable is moved into one operator new (nothrow) block,
 *   freed after it runs. If that allocation fails, post returns
 *   ARK_ENOMEM and nothing is queued.
 * The destructor discards pending tasks without calling them (as
 * ark_mainq_destroy does) but destroys their callables. Those destructors
 * may run, drain or destroy other queues, whose tasks run as usual.
 */
class mainq {
  public:
    explicit mainq(const ark_allocator *a = nullptr) noexcept {
        last_ = ark_mainq_create(&q_, a);
        if (last_ != ARK_OK) {
            q_ = nullptr;
        }
    }
    mainq(const mainq &) = delete;
    mainq &operator=(const mainq &) = delete;
    mainq(mainq &&o) noexcept : q_(o.q_), last_(o.last_) { o.q_ = nullptr; }
    mainq &operator=(mainq &&o) noexcept {
        if (this != &o) {
            reset();
            q_ = o.q_;
            last_ = o.last_;
            o.q_ = nullptr;
        }
        return *this;
    }
    ~mainq() { reset(); }

    bool ok() const noexcept { return q_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }
    status last_status() const noexcept { return last_; }

    /* True when post(F) stores the callable inside the C task's argument
     * (no allocation); false when it boxes it in one operator new block. */
    template <class F>
    static constexpr bool posts_inline = detail::fits_in_arg<std::decay_t<F>>;

    /* Queue fn() to run on the main thread; from any thread. ARK_OK or
     * ARK_ENOMEM (not queued). noexcept when copying or moving fn into the
     * queue is: if that throws, the exception propagates with nothing
     * queued or leaked (a box's memory is freed by the new-expression). */
    template <class F>
    status
    post(F &&fn) noexcept(std::is_nothrow_constructible_v<std::decay_t<F>, F>) {
        assert(q_ != nullptr);
        using D = std::decay_t<F>;
        if constexpr (detail::fits_in_arg<D>) {
            void *arg = nullptr;
            D copy(std::forward<F>(fn));
            std::memcpy(&arg, &copy, sizeof(D));
            return ark_mainq_post(q_, &detail::run_inline<D>, arg);
        } else {
            D *box = new (std::nothrow) D(std::forward<F>(fn));
            if (box == nullptr) {
                return ARK_ENOMEM;
            }
            status s = ark_mainq_post(q_, &detail::run_boxed<D>, box);
            if (s != ARK_OK) {
                delete box;
            }
            return s;
        }
    }

    /* Run the tasks queued when the call starts (at most max_tasks; 0 =
     * all); return how many ran. Main thread. A task must not let an
     * exception out: it would unwind through the C queue into this
     * noexcept function (std::terminate). */
    size_t run(size_t max_tasks = 0) noexcept {
        assert(q_ != nullptr);
        return ark_mainq_run(q_, max_tasks);
    }
    /* Run until empty, tasks posted by tasks included. */
    size_t drain() noexcept {
        assert(q_ != nullptr);
        return ark_mainq_drain(q_);
    }
    size_t pending() const noexcept {
        return q_ != nullptr ? ark_mainq_pending(q_) : 0;
    }

    ark_mainq *c_mainq() const noexcept { return q_; }

  private:
    void reset() noexcept {
        if (q_ != nullptr) {
            bool was = detail::mainq_discarding;
            detail::mainq_discarding = true;
            ark_mainq_drain(q_);
            detail::mainq_discarding = was;
            ark_mainq_destroy(q_);
            q_ = nullptr;
        }
    }

    ark_mainq *q_ = nullptr;
    status last_ = ARK_OK;
};

} // namespace ark

#endif /* ARK_MAINQ_HPP */
