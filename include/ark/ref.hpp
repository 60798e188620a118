/* SPDX-License-Identifier: MIT */
/*
 * ark/ref.hpp - C++: ref_ptr<T>, refvec<T>, refmap<T> and autorelease_pool:
 * Cocos2d-x counting.
 * See ark/ark.hpp for the overview and docs/cpp.md for the guide.
 */
#ifndef ARK_REF_HPP
#define ARK_REF_HPP

#include "ark/handle.hpp"

#include <exception>

namespace ark {

/* ---- ref_ptr<T> -----------------------------------------------------------
 */

namespace detail {
/* The count of a const T is writable, as a shared_ptr<const T>'s control
 * block is: it is the object's bookkeeping, not its value, and make_ref
 * creates every object non-const. */
template <class T> ark_ref *as_ref(T *p) noexcept {
    static_assert(std::is_standard_layout_v<T>,
                  "ark: T must be standard-layout with an ark_ref as its "
                  "first member");
    return reinterpret_cast<ark_ref *>(const_cast<std::remove_cv_t<T> *>(p));
}
template <class T> T *from_ref(ark_ref *r) noexcept {
    return reinterpret_cast<T *>(r);
}
} // namespace detail

/*
 * An intrusive counted pointer to a T whose FIRST member is an ark_ref
 * (T standard-layout, so a T * and its ark_ref * are interconvertible).
 * Copying retains, moving changes no count, destruction releases.
 * ref_ptr<const T> shares an object read-only (make_ref<const T>, or
 * converted from a ref_ptr<T>); the reverse conversion does not exist.
 */
template <class T> class ref_ptr {
    /* A ref_ptr<U> converts to this one when U is T without its const. */
    template <class U>
    static constexpr bool adds_const =
        !std::is_same_v<U, T> && std::is_same_v<const U, T>;

  public:
    constexpr ref_ptr() noexcept = default;
    constexpr ref_ptr(std::nullptr_t) noexcept {}
    /* Share o's object read-only: retain it. */
    template <class U, class = std::enable_if_t<adds_const<U>>>
    ref_ptr(const ref_ptr<U> &o) noexcept : ref_ptr(o.get()) {}
    /* Take o's reference over: no count changes, o becomes null. */
    template <class U, class = std::enable_if_t<adds_const<U>>>
    ref_ptr(ref_ptr<U> &&o) noexcept : p_(o.detach()) {}
    /* Share p: retain it. */
    explicit ref_ptr(T *p) noexcept : p_(p) {
        if (p_ != nullptr) {
            ark_ref_retain(detail::as_ref(p_));
        }
    }
    /* Take over a reference the caller owns (e.g. the count of 1 from
     * ark_ref_init): no retain. */
    static ref_ptr adopt(T *p) noexcept {
        ref_ptr r;
        r.p_ = p;
        return r;
    }
    ref_ptr(const ref_ptr &o) noexcept : ref_ptr(o.p_) {}
    ref_ptr(ref_ptr &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
    ref_ptr &operator=(const ref_ptr &o) noexcept {
        ref_ptr(o).swap(*this);
        return *this;
    }
    ref_ptr &operator=(ref_ptr &&o) noexcept {
        ref_ptr(std::move(o)).swap(*this);
        return *this;
    }
    ~ref_ptr() {
        if (p_ != nullptr) {
            ark_ref_release(detail::as_ref(p_));
        }
    }

    T *get() const noexcept { return p_; }
    T &operator*() const noexcept { return *p_; }
    T *operator->() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    /* Return the count (0 for a null pointer). */
    uint32_t use_count() const noexcept {
        return p_ != nullptr ? ark_ref_count(detail::as_ref(p_)) : 0;
    }
    /* Release and become null (or share q). */
    void reset(T *q = nullptr) noexcept { ref_ptr(q).swap(*this); }
    /* Give up ownership without releasing; return the pointer. */
    T *detach() noexcept {
        T *p = p_;
        p_ = nullptr;
        return p;
    }
    void swap(ref_ptr &o) noexcept { std::swap(p_, o.p_); }

    friend bool operator==(const ref_ptr &a, const ref_ptr &b) noexcept {
        return a.p_ == b.p_;
    }
    friend bool operator!=(const ref_ptr &a, const ref_ptr &b) noexcept {
        return a.p_ != b.p_;
    }

  private:
    T *p_ = nullptr;
};

namespace detail {
template <class T> void delete_ref(ark_ref *r) { delete from_ref<T>(r); }
} // namespace detail

/*
 * Allocate a T with operator new (nothrow), construct it from args and
 * initialise its ark_ref (count 1, destroy = delete) after the
 * constructor ran. Returns the null pointer if allocation failed.
 * noexcept when T's constructor is: if it throws, the memory is freed
 * (the new-expression does that) and the exception propagates.
 */
template <class T, class... Args>
ref_ptr<T>
make_ref(Args &&...args) noexcept(std::is_nothrow_constructible_v<T, Args...>) {
    using U = std::remove_cv_t<T>; /* created non-const (see as_ref) */
    U *p = new (std::nothrow) U(std::forward<Args>(args)...);
    if (p == nullptr) {
        return ref_ptr<T>();
    }
    ark_ref_init(detail::as_ref(p), &detail::delete_ref<U>);
    return ref_ptr<T>::adopt(p);
}

/* As make_ref (exceptions from T's constructor included), with the count
 * initialised by ark_ref_init_atomic: every retain and release of the
 * object is atomic, so ref_ptr copies of it may live on several threads. */
template <class T, class... Args>
ref_ptr<T> make_ref_atomic(Args &&...args) noexcept(
    std::is_nothrow_constructible_v<T, Args...>) {
    using U = std::remove_cv_t<T>;
    U *p = new (std::nothrow) U(std::forward<Args>(args)...);
    if (p == nullptr) {
        return ref_ptr<T>();
    }
    ark_ref_init_atomic(detail::as_ref(p), &detail::delete_ref<U>);
    return ref_ptr<T>::adopt(p);
}

/* ---- refvec<T> ------------------------------------------------------------
 */

namespace detail {

/* An allocator kept by value. The C containers copy the struct when they
 * are created, but refvec and refmap create theirs at the first element,
 * so they keep a copy of their own: the caller's struct need not outlive
 * the constructor call. */
struct kept_allocator {
    ark_allocator a{};
    bool set = false;
    kept_allocator() noexcept = default;
    explicit kept_allocator(const ark_allocator *p) noexcept {
        if (p != nullptr) {
            a = *p;
            set = true;
        }
    }
    const ark_allocator *get() const noexcept { return set ? &a : nullptr; }
};

} // namespace detail

/*
 * Cocos2d-x's Vector<T *> over ark_refvec: holds one reference to each
 * element. push_back / insert / replace retain what enters; erase /
 * pop_back / replace / clear / destruction release what leaves; copying
 * the vector retains every element, moving it changes no count; at() and
 * iteration give borrowed T * (no count changes, no l-value that could
 * unbalance a count). T is standard-layout with an ark_ref first.
 *
 * Nothing is allocated until the first element. A copy that cannot
 * allocate is empty with last_status() ARK_ENOMEM (copy_from returns the
 * status instead).
 */
template <class T> class refvec {
  public:
    explicit refvec(const ark_allocator *a = nullptr) noexcept : a_(a) {}
    refvec(const refvec &o) noexcept : a_(o.a_) { copy_from(o); }
    refvec(refvec &&o) noexcept : v_(o.v_), a_(o.a_), last_(o.last_) {
        o.v_ = nullptr;
    }
    refvec &operator=(const refvec &o) noexcept {
        copy_from(o);
        return *this;
    }
    /* Release this vector's elements, take o's (no count changes). */
    refvec &operator=(refvec &&o) noexcept {
        if (this != &o) {
            ark_refvec *old = v_;
            v_ = o.v_;
            a_ = o.a_;
            last_ = o.last_;
            o.v_ = nullptr;
            ark_refvec_destroy(old);
        }
        return *this;
    }
    ~refvec() { ark_refvec_destroy(v_); }

    status last_status() const noexcept { return last_; }

    /* Make this vector hold o's elements (each retained; the old ones
     * released). ARK_ENOMEM leaves it unchanged. */
    status copy_from(const refvec &o) noexcept {
        if (this == &o) {
            return last_ = ARK_OK;
        }
        if (o.size() == 0) {
            clear();
            return last_ = ARK_OK;
        }
        if (!make()) {
            return last_;
        }
        return last_ = ark_refvec_copy(v_, o.v_);
    }

    status push_back(T *p) noexcept {
        if (!make()) {
            return last_;
        }
        return last_ = ark_refvec_push(v_, detail::as_ref(p));
    }
    status insert(size_t i, T *p) noexcept {
        if (!make()) {
            return last_;
        }
        return last_ = ark_refvec_insert(v_, i, detail::as_ref(p));
    }
    status replace(size_t i, T *p) noexcept {
        if (v_ == nullptr) {
            return last_ = (p == nullptr ? ARK_EINVAL : ARK_ERANGE);
        }
        return last_ = ark_refvec_replace(v_, i, detail::as_ref(p));
    }
    status erase(size_t i) noexcept {
        if (v_ == nullptr) {
            return last_ = ARK_ERANGE;
        }
        return last_ = ark_refvec_erase(v_, i);
    }
    status pop_back() noexcept {
        if (v_ == nullptr) {
            return last_ = ARK_ERANGE;
        }
        return last_ = ark_refvec_pop(v_);
    }
    void clear() noexcept {
        if (v_ != nullptr) {
            ark_refvec_clear(v_);
        }
    }
    status reserve(size_t n) noexcept {
        if (!make()) {
            return last_;
        }
        return last_ = ark_refvec_reserve(v_, n);
    }

    /* Return element i, borrowed, or nullptr past the end. */
    T *at(size_t i) const noexcept {
        return v_ != nullptr ? detail::from_ref<T>(ark_refvec_at(v_, i))
                             : nullptr;
    }
    T *front() const noexcept { return at(0); }
    T *back() const noexcept { return size() ? at(size() - 1) : nullptr; }
    size_t size() const noexcept {
        return v_ != nullptr ? ark_refvec_count(v_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }
    /* Return the first position of p, or size(). */
    size_t index_of(const T *p) const noexcept {
        size_t n = size();
        for (size_t i = 0; i < n; i++) {
            if (at(i) == p) {
                return i;
            }
        }
        return n;
    }
    bool contains(const T *p) const noexcept { return index_of(p) != size(); }

    /* Iteration gives borrowed T * by value. */
    class iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = T *;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = T *;
        iterator(const refvec *v, size_t i) noexcept : v_(v), i_(i) {}
        T *operator*() const noexcept { return v_->at(i_); }
        iterator &operator++() noexcept {
            ++i_;
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator t = *this;
            ++i_;
            return t;
        }
        friend bool operator==(const iterator &a, const iterator &b) noexcept {
            return a.i_ == b.i_;
        }
        friend bool operator!=(const iterator &a, const iterator &b) noexcept {
            return a.i_ != b.i_;
        }

      private:
        const refvec *v_;
        size_t i_;
    };
    iterator begin() const noexcept { return iterator(this, 0); }
    iterator end() const noexcept { return iterator(this, size()); }

    /* The C vector (nullptr until the first element). */
    ark_refvec *c_refvec() const noexcept { return v_; }

  private:
    bool make() noexcept {
        if (v_ == nullptr) {
            last_ = ark_refvec_create(&v_, a_.get());
            if (last_ != ARK_OK) {
                v_ = nullptr;
                return false;
            }
        }
        return true;
    }

    ark_refvec *v_ = nullptr;
    detail::kept_allocator a_;
    status last_ = ARK_OK;
};

/* ---- refmap<T> ------------------------------------------------------------
 */

/*
 * Cocos2d-x's Map<uint64, T *> over ark_refmap: insert retains (and
 * releases a replaced value), erase / clear / destruction release; a copy
 * retains every value, a move changes no count; at() is borrowed.
 * Nothing is allocated until the first insert or reserve.
 */
template <class T> class refmap {
  public:
    explicit refmap(const ark_allocator *a = nullptr) noexcept : a_(a) {}
    refmap(const refmap &o) noexcept : a_(o.a_) { copy_from(o); }
    refmap(refmap &&o) noexcept : m_(o.m_), a_(o.a_), last_(o.last_) {
        o.m_ = nullptr;
    }
    refmap &operator=(const refmap &o) noexcept {
        copy_from(o);
        return *this;
    }
    refmap &operator=(refmap &&o) noexcept {
        if (this != &o) {
            ark_refmap *old = m_;
            m_ = o.m_;
            a_ = o.a_;
            last_ = o.last_;
            o.m_ = nullptr;
            ark_refmap_destroy(old);
        }
        return *this;
    }
    ~refmap() { ark_refmap_destroy(m_); }

    status last_status() const noexcept { return last_; }

    /*
     * Make this map hold o's entries (each value retained; the old values
     * released). ARK_ENOMEM leaves it unchanged. The C API has no copy:
     * a new map is built (reserved to o's size first, so no put can fail)
     * and swapped in.
     */
    status copy_from(const refmap &o) noexcept {
        if (this == &o) {
            return last_ = ARK_OK;
        }
        ark_refmap *n = nullptr;
        if (o.size() > 0) {
            status s = ark_refmap_create(&n, a_.get());
            if (s == ARK_OK) {
                s = ark_refmap_reserve(n, o.size());
            }
            if (s != ARK_OK) {
                ark_refmap_destroy(n);
                return last_ = s;
            }
            ark_refmap_each(
                o.m_,
                [](uint64_t key, ark_ref *r, void *ud) {
                    return ark_refmap_put(static_cast<ark_refmap *>(ud), key,
                                          r) == ARK_OK;
                },
                n);
        }
        ark_refmap *old = m_;
        m_ = n;
        ark_refmap_destroy(old);
        return last_ = ARK_OK;
    }

    /* Map key to p (retained; a replaced value is released). */
    status insert(uint64_t key, T *p) noexcept {
        if (!make()) {
            return last_;
        }
        return last_ = ark_refmap_put(m_, key, detail::as_ref(p));
    }
    /* Return key's value, borrowed, or nullptr. */
    T *at(uint64_t key) const noexcept {
        return m_ != nullptr ? detail::from_ref<T>(ark_refmap_get(m_, key))
                             : nullptr;
    }
    T *find(uint64_t key) const noexcept { return at(key); }
    bool contains(uint64_t key) const noexcept { return at(key) != nullptr; }
    /* Remove key and release its value; return true if present. */
    bool erase(uint64_t key) noexcept {
        return m_ != nullptr && ark_refmap_remove(m_, key);
    }
    void clear() noexcept {
        if (m_ != nullptr) {
            ark_refmap_clear(m_);
        }
    }
    status reserve(size_t n) noexcept {
        if (!make()) {
            return last_;
        }
        return last_ = ark_refmap_reserve(m_, n);
    }
    size_t size() const noexcept {
        return m_ != nullptr ? ark_refmap_count(m_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }

    /* Call fn(key, T *) (borrowed) on every entry until it returns false
     * (or on all of them if it returns void). fn is any callable: a
     * function, a function pointer or reference, a lambda, a const or
     * non-const function object. fn must not change the map. If fn
     * throws, the walk stops there and the exception propagates from
     * for_each (it is caught inside the C walk's callback and rethrown
     * once the walk has returned: it never unwinds through C code). */
    template <class F> void for_each(F &&fn) const {
        if (m_ == nullptr) {
            return;
        }
        /* The C callback gets fn (through a pointer: a function's own
         * address is no object pointer) and the place for an exception. */
        using Fn = std::remove_reference_t<F>;
        struct walk {
            Fn *f;
#if defined(__cpp_exceptions)
            std::exception_ptr thrown;
#endif
        } w;
        w.f = std::addressof(fn);
        ark_refmap_each(
            m_,
            [](uint64_t key, ark_ref *r, void *ud) -> bool {
                walk &x = *static_cast<walk *>(ud);
#if defined(__cpp_exceptions)
                try {
                    return call_each(*x.f, key, detail::from_ref<T>(r));
                } catch (...) {
                    x.thrown = std::current_exception();
                    return false;
                }
#else
                return call_each(*x.f, key, detail::from_ref<T>(r));
#endif
            },
            &w);
#if defined(__cpp_exceptions)
        if (w.thrown) {
            std::rethrow_exception(w.thrown);
        }
#endif
    }

    ark_refmap *c_refmap() const noexcept { return m_; }

  private:
    /* fn(key, p); true to go on (fn returned void or something true). */
    template <class Fn> static bool call_each(Fn &f, uint64_t key, T *p) {
        if constexpr (std::is_void_v<
                          std::invoke_result_t<Fn &, uint64_t, T *>>) {
            std::invoke(f, key, p);
            return true;
        } else {
            return static_cast<bool>(std::invoke(f, key, p));
        }
    }

    bool make() noexcept {
        if (m_ == nullptr) {
            last_ = ark_refmap_create(&m_, a_.get());
            if (last_ != ARK_OK) {
                m_ = nullptr;
                return false;
            }
        }
        return true;
    }

    ark_refmap *m_ = nullptr;
    detail::kept_allocator a_;
    status last_ = ARK_OK;
};

/* ---- autorelease_pool ---------------------------------------------------- */

/*
 * Deferred releases, drained once per frame (see ref.h): add(p) hands the
 * pool one reference of p (no count change now), drain() releases them.
 * The destructor drains. Move-only.
 */
class autorelease_pool {
  public:
    explicit autorelease_pool(const ark_allocator *a = nullptr) noexcept {
        last_ = ark_autorelease_pool_create(&p_, a);
        if (last_ != ARK_OK) {
            p_ = nullptr;
        }
    }
    autorelease_pool(const autorelease_pool &) = delete;
    autorelease_pool &operator=(const autorelease_pool &) = delete;
    autorelease_pool(autorelease_pool &&o) noexcept : p_(o.p_), last_(o.last_) {
        o.p_ = nullptr;
    }
    autorelease_pool &operator=(autorelease_pool &&o) noexcept {
        if (this != &o) {
            ark_autorelease_pool_destroy(p_);
            p_ = o.p_;
            last_ = o.last_;
            o.p_ = nullptr;
        }
        return *this;
    }
    ~autorelease_pool() { ark_autorelease_pool_destroy(p_); }

    bool ok() const noexcept { return p_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }
    status last_status() const noexcept { return last_; }

    /* Hand one reference of p to the pool: ARK_OK, ARK_EINVAL (null),
     * ARK_ENOMEM (not queued: the caller still owns the reference). */
    template <class T> status add(T *p) noexcept {
        assert(p_ != nullptr);
        return last_ = ark_autorelease(p_, p != nullptr ? detail::as_ref(p)
                                                        : nullptr);
    }
    /* Hand over the reference a ref_ptr owns (it becomes null) on
     * success; on failure the ref_ptr keeps it. */
    template <class T> status add(ref_ptr<T> &&r) noexcept {
        status s = add(r.get());
        if (s == ARK_OK) {
            r.detach();
        }
        return s;
    }
    /* Release every reference held; return how many releases. */
    size_t drain() noexcept {
        assert(p_ != nullptr);
        return ark_autorelease_drain(p_);
    }
    size_t size() const noexcept {
        return p_ != nullptr ? ark_autorelease_pool_count(p_) : 0;
    }

  private:
    ark_autorelease_pool *p_ = nullptr;
    status last_ = ARK_OK;
};

} // namespace ark

#endif /* ARK_REF_HPP */
