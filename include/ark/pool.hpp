/* SPDX-License-Identifier: MIT */
/*
 * ark/pool.hpp - C++: pool<T>: typed elements of any type, constructed in
 * place and destroyed once.
 * See ark/ark.hpp for the overview and docs/cpp.md for the guide.
 */
#ifndef ARK_POOL_HPP
#define ARK_POOL_HPP

#include "ark/handle.hpp"

namespace ark {

/* ---- pool<T> ------------------------------------------------------------ */

/*
 * What a pool is created with: ark_pool_config minus what the type fixes
 * (elem_size = sizeof(T), elem_align = alignof(T)) and the removal hook
 * (~T, plus the caller's hook given to the constructor). Zero
 * fields take the C defaults, so `ark::pool_options{}` is complete and
 * `ark::pool_options o; o.index_bits = 20; o.gen_bits = 12;` gives 32-bit
 * handles.
 */
struct pool_options {
    unsigned index_bits = 0;
    unsigned gen_bits = 0;
    unsigned tag_bits = 0;
    uint64_t tag = 0;
    /* The slot indices insert and claim take, inclusive (0 and 0: all). */
    uint32_t index_min = 0;
    uint32_t index_max = 0;
    size_t max_elements = 0;
    uint64_t seal_key = 0;
    const ark_allocator *allocator = nullptr; /* must outlive the pool */
};

namespace detail {

/* N readable zero bytes (the insert's source in pool::take_slow). */
template <size_t N> struct zero_block {
    static constexpr unsigned char bytes[N] = {};
};

template <class T> void destroy_elem(void *elem, ark_handle, void *) {
    static_cast<T *>(elem)->~T();
}

/* The C removal hook of a container of T addressed by handle<K> that has a
 * user's hook H: (*user)(handle, element), then ~T. noexcept: an exception
 * must not unwind through the C library (it ends in std::terminate). */
template <class T, class K, class H>
void hook_then_destroy(void *elem, ark_handle h, void *user) noexcept {
    T &e = *static_cast<T *>(elem);
    (*static_cast<H *>(user))(handle<K>(h), e);
    if constexpr (!std::is_trivially_destructible_v<T>) {
        e.~T();
    }
}

/* What a container of T addressed by handle<K> gives the C config as its
 * removal hook: the user's hook then ~T, ~T alone, or nothing. */
struct c_hook {
    void (*fn)(void *elem, ark_handle h, void *user) = nullptr;
    void *user = nullptr;
};

template <class T, class K> c_hook make_hook() noexcept {
    c_hook c;
    if constexpr (!std::is_trivially_destructible_v<T>) {
        c.fn = &destroy_elem<T>;
    }
    return c;
}

template <class T, class K, class H> c_hook make_hook(H *hook) noexcept {
    static_assert(std::is_object_v<H>,
                  "ark: a removal hook is given as a pointer to a callable "
                  "object (a lambda, a struct with operator()), which is "
                  "what reaches the user's data");
    static_assert(std::is_invocable_v<H &, handle<K>, T &>,
                  "ark: the removal hook must be callable as "
                  "hook(ark::handle<K>, T &)");
    if (hook == nullptr) {
        return make_hook<T, K>();
    }
    c_hook c;
    c.fn = &hook_then_destroy<T, K, H>;
    c.user = const_cast<std::remove_const_t<H> *>(hook);
    return c;
}

/* Construct a T from args in slot memory m of element h of pool p. When
 * the constructor may throw, a guard gives the slot back on a throw, at
 * once and with no removal hook (no ~T for what was never built), even
 * from inside a hook; without exceptions the compiler drops it. */
template <class T, class... Args>
T *build_in(ark_pool *p, ark_handle h, void *m, Args &&...args) noexcept(
    std::is_nothrow_constructible_v<T, Args...>) {
    if constexpr (!std::is_nothrow_constructible_v<T, Args...>) {
        struct unbuild {
            ark_pool *p;
            ark_handle h;
            ~unbuild() {
                if (p != nullptr) {
                    ark__pool_discard(p, h);
                }
            }
        } guard{p, h};
        T *t = ::new (m) T(std::forward<Args>(args)...);
        guard.p = nullptr;
        return t;
    } else {
        return ::new (m) T(std::forward<Args>(args)...);
    }
}

} // namespace detail

/*
 * A pool of T: stable addresses, O(1) insert / get / remove through
 * handle<T>, iteration over live elements in slot order (see pool.h).
 *
 * T may be any object type of at most ARK_POOL_MAX_ELEM_SIZE bytes and
 * alignment ARK_POOL_MAX_ELEM_ALIGN. Its constructor runs in the slot
 * (elements are never copied or moved by the pool: addresses are stable)
 * and its destructor runs exactly once, from the pool's removal hook, when
 * the element is removed (remove), swept (flush after remove_later),
 * cleared (clear) or the pool is destroyed. A pool may also be given a
 * removal hook of the caller's, run with the element's handle right before
 * ~T (the constructor taking on_remove). A destructor or hook may call
 * remove, remove_later, insert and get on the same pool (see pool.h,
 * "Removal hooks"). With exceptions enabled, a constructor that throws releases
 * its slot (without running ~T) and the exception propagates; the pool itself
 * never throws.
 *
 * Move-only: moving transfers the C pool; the moved-from pool is empty
 * (ok() false) and may only be destroyed or assigned to.
 */
template <class T> class pool {
    static_assert(std::is_object_v<T> && !std::is_array_v<T> &&
                      !std::is_const_v<T> && !std::is_volatile_v<T>,
                  "ark::pool<T>: T must be a non-const, non-array object type");
    static_assert(sizeof(T) <= ARK_POOL_MAX_ELEM_SIZE,
                  "ark::pool<T>: T is larger than ARK_POOL_MAX_ELEM_SIZE");
    static_assert(
        alignof(T) <= ARK_POOL_MAX_ELEM_ALIGN,
        "ark::pool<T>: T is aligned more than ARK_POOL_MAX_ELEM_ALIGN");

  public:
    using value_type = T;
    using handle_type = handle<T>;

    /* Create a pool with default options. Check ok(). */
    pool() noexcept : pool(pool_options{}) {}

    /* Create a pool. On failure ok() is false and last_status() says why
     * (ARK_EINVAL for bad options, ARK_ENOMEM). */
    explicit pool(const pool_options &o) noexcept {
        create(o, detail::make_hook<T, T>());
    }

    /*
     * Create a pool whose removals also call (*on_remove)(handle, elem),
     * right before ~T, for every element that leaves the pool: by remove,
     * by flush (after remove_later), by clear and by the pool's
     * destructor. on_remove points to any callable object (a lambda, a
     * struct with operator()) invocable as hook(handle<T>, T &); it is how
     * the hook reaches the caller's data (the C API's user pointer), and
     * it must outlive the pool. The handle still resolves while the hook
     * runs, and the hook may call remove, remove_later, insert and get on
     * this pool and on any other container (see pool.h, "Removal hooks").
     * It must not throw (std::terminate). A null on_remove installs none.
     */
    template <class H> pool(const pool_options &o, H *on_remove) noexcept {
        create(o, detail::make_hook<T, T>(on_remove));
    }

    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;

    pool(pool &&o) noexcept : p_(o.p_), last_(o.last_), hooked_(o.hooked_) {
        o.p_ = nullptr;
    }

    pool &operator=(pool &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = o.p_;
            last_ = o.last_;
            hooked_ = o.hooked_;
            o.p_ = nullptr;
        }
        return *this;
    }

    /* Destroy every element (the hook and the destructors run), then the
     * pool. */
    ~pool() { reset(); }

    /* Return true if the pool exists (creation succeeded, not moved from). */
    bool ok() const noexcept { return p_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }

    /* Return the status of the last insert, emplace, remove, remove_later
     * or reserve (or of creation). */
    status last_status() const noexcept { return last_; }

    /*
     * Copy v into a new element and return its handle, or the null handle
     * (last_status() ARK_ENOMEM or ARK_EFULL; the pool is unchanged).
     */
    ARK__ALWAYS_INLINE handle_type
    insert(const T &v) noexcept(std::is_nothrow_copy_constructible_v<T>) {
        if constexpr (std::is_trivially_copyable_v<T>) {
            /* ark_pool_insert's inline path, with sizeof(T) known here:
             * no size test, and the copy's branches on the size resolved
             * when compiled. */
            assert(p_ != nullptr);
            ark_handle h;
            void *m = take_fast(&h);
            if (m == nullptr) {
                return insert_slow(v);
            }
            if constexpr (sizeof(T) <= ARK__INLINE_ELEM_MAX) {
                ark__copy_in(m, std::addressof(v), sizeof(T));
            } else {
                std::memcpy(m, std::addressof(v), sizeof(T));
            }
            last_ = ARK_OK;
            return handle_type(h);
        } else {
            return emplace(v);
        }
    }

    /* Move v into a new element; as insert(const T &). */
    template <class U = T,
              class = std::enable_if_t<!std::is_trivially_copyable_v<U>>>
    handle_type
    insert(T &&v) noexcept(std::is_nothrow_move_constructible_v<T>) {
        return emplace(std::move(v));
    }

    /*
     * Construct a new element in place from args and return its handle,
     * or the null handle (last_status() ARK_ENOMEM or ARK_EFULL).
     */
    template <class... Args>
    handle_type emplace(Args &&...args) noexcept(
        std::is_nothrow_constructible_v<T, Args...>) {
        assert(p_ != nullptr);
        ark_handle h;
        void *m = take_fast(&h);
        if (m == nullptr) {
            m = take_slow(&h);
            if (m == nullptr) {
                return handle_type();
            }
        }
        last_ = ARK_OK;
        detail::build_in<T>(p_, h, m, std::forward<Args>(args)...);
        return handle_type(h);
    }

    /*
     * Claim n handles for elements to be created later, from any thread
     * (ark_pool_claim): out[0, n) on ARK_OK, nothing claimed otherwise
     * (ARK_EFULL). Leaves last_status() alone, so that other threads may
     * call it while the owning thread uses the pool.
     */
    status claim(handle_type *out, size_t n) noexcept {
        assert(p_ != nullptr && (out != nullptr || n == 0));
        /* A handle<T> is its ark_handle (same size, trivially copyable):
         * the C call writes the values as a memcpy would. */
        return ark_pool_claim(p_, reinterpret_cast<ark_handle *>(out), n);
    }

    /* Claim one handle from any thread; the null handle when the range
     * has none left. */
    handle_type claim() noexcept {
        ark_handle h = ARK_NULL_HANDLE;
        return ark_pool_claim(p_, &h, 1) == ARK_OK ? handle_type(h)
                                                   : handle_type();
    }

    /* Give back a claimed handle whose element was never created (owning
     * thread; ark_pool_unclaim). Returns false (last_status() why) for a
     * handle that is not claimed. */
    bool unclaim(handle_type h) noexcept {
        assert(p_ != nullptr);
        last_ = ark_pool_unclaim(p_, h.raw());
        return last_ == ARK_OK;
    }

    /*
     * Construct the element of handle h in place from args: a claimed
     * handle (claim), or a server's handle a replica mirrors
     * (ark_pool_insert_at). Returns false, nothing constructed, when h
     * cannot be created (last_status() says why: ARK_EEXIST, ARK_ESTALE,
     * ARK_EFULL, ARK_ENOMEM, ...).
     */
    template <class... Args>
    bool emplace_at(handle_type h, Args &&...args) noexcept(
        std::is_nothrow_constructible_v<T, Args...>) {
        assert(p_ != nullptr);
        last_ = ark_pool_insert_at(p_, h.raw(),
                                   detail::zero_block<sizeof(T)>::bytes);
        if (last_ != ARK_OK) {
            return false;
        }
        detail::build_in<T>(p_, h.raw(), ark_pool_get(p_, h.raw()),
                            std::forward<Args>(args)...);
        return true;
    }

    /* Copy v into the element of handle h; as emplace_at. */
    bool
    insert_at(handle_type h,
              const T &v) noexcept(std::is_nothrow_copy_constructible_v<T>) {
        if constexpr (std::is_trivially_copyable_v<T>) {
            assert(p_ != nullptr);
            last_ = ark_pool_insert_at(p_, h.raw(), std::addressof(v));
            return last_ == ARK_OK;
        } else {
            return emplace_at(h, v);
        }
    }

    /* Return the element h names, or nullptr (null, stale, foreign,
     * forged, marked by remove_later). Inline: one slot read. */
    T *get(handle_type h) noexcept {
        assert(p_ != nullptr);
        return static_cast<T *>(ark_pool_get(p_, h.raw()));
    }
    const T *get(handle_type h) const noexcept {
        assert(p_ != nullptr);
        return static_cast<const T *>(ark_pool_get(p_, h.raw()));
    }

    /* Return true if h names a live element. */
    bool contains(handle_type h) const noexcept { return get(h) != nullptr; }

    /* Return why h is or is not valid (ark_pool_check). */
    status check(handle_type h) const noexcept {
        assert(p_ != nullptr);
        return ark_pool_check(p_, h.raw());
    }

    /* Remove (and destroy) the element h names. Returns false for a handle
     * that is not live; last_status() says why. */
    bool remove(handle_type h) noexcept {
        assert(p_ != nullptr);
        last_ = ark_pool_remove(p_, h.raw());
        return last_ == ARK_OK;
    }

    /* Mark the element for removal at the next flush: invisible at once,
     * destroyed by flush. Returns false (last_status() why) on error. */
    bool remove_later(handle_type h) noexcept {
        assert(p_ != nullptr);
        last_ = ark_pool_remove_later(p_, h.raw());
        return last_ == ARK_OK;
    }

    /* Destroy and free the elements marked by remove_later; return how
     * many. */
    size_t flush() noexcept {
        assert(p_ != nullptr);
        return ark_pool_flush(p_);
    }

    /* Destroy every element, live and marked; storage is kept. */
    void clear() noexcept {
        assert(p_ != nullptr);
        ark_pool_clear(p_, true);
    }

    /* Make room for n live elements (ARK_EFULL, ARK_ENOMEM). */
    status reserve(size_t n) noexcept {
        assert(p_ != nullptr);
        last_ = ark_pool_reserve(p_, n);
        return last_;
    }

    /* Return the number of live elements (marked ones excluded). */
    size_t size() const noexcept {
        return p_ != nullptr ? ark_pool_count(p_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }

    /* Return the handle of the live element at e, or the null handle. */
    handle_type handle_of(const T &e) const noexcept {
        assert(p_ != nullptr);
        return handle_type(ark_pool_handle_of(p_, std::addressof(e)));
    }

    /* Return h sealed for the wire (ark_pool_seal). */
    uint64_t seal(handle_type h) const noexcept {
        assert(p_ != nullptr);
        return ark_pool_seal(p_, h.raw());
    }

    /* Return the handle a sealed value stands for; get rejects it unless
     * it names a live element. */
    handle_type unseal(uint64_t wire) const noexcept {
        assert(p_ != nullptr);
        return handle_type(ark_pool_unseal(p_, wire));
    }

    /* The C pool, for calls this wrapper does not cover. */
    ark_pool *c_pool() const noexcept { return p_; }

    /* ---- iteration -------------------------------------------------- */

    /* End of an iteration (compares equal to an iterator past the last
     * element). */
    struct sentinel {};

    /* Forward iteration over live elements in slot order (ark_pool_iter):
     * removing any element during the walk is allowed, and a removed
     * element not yet visited is not visited. */
    template <class Ref> class basic_iterator {
      public:
        using iterator_category = std::input_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Ref;

        explicit basic_iterator(const ark_pool *p) noexcept
            : it_(ark_pool_iter_begin(p)) {}

        Ref operator*() const noexcept { return deref(it_); }
        basic_iterator &operator++() noexcept {
            ark_pool_iter_next(&it_);
            return *this;
        }
        void operator++(int) noexcept { ark_pool_iter_next(&it_); }
        /* The handle of the current element. */
        handle_type handle() const noexcept { return handle_type(it_.handle); }

        friend bool operator==(const basic_iterator &i, sentinel) noexcept {
            return !ark_pool_iter_valid(&i.it_);
        }
        friend bool operator!=(const basic_iterator &i, sentinel) noexcept {
            return ark_pool_iter_valid(&i.it_);
        }

      private:
        static Ref deref(const ark_pool_iter &it) noexcept {
            if constexpr (std::is_reference_v<Ref>) {
                return *static_cast<std::remove_reference_t<Ref> *>(it.elem);
            } else {
                using E = std::remove_reference_t<typename Ref::second_type>;
                return Ref(handle_type(it.handle), *static_cast<E *>(it.elem));
            }
        }
        ark_pool_iter it_;
    };

    using iterator = basic_iterator<T &>;
    using const_iterator = basic_iterator<const T &>;

    iterator begin() noexcept {
        assert(p_ != nullptr);
        return iterator(p_);
    }
    const_iterator begin() const noexcept {
        assert(p_ != nullptr);
        return const_iterator(p_);
    }
    sentinel end() const noexcept { return sentinel{}; }

    /* A range of (handle, T &) pairs: for (auto [h, e] :
     * pool.each_with_handle()). */
    template <class Ref> class pair_range {
      public:
        explicit pair_range(const ark_pool *p) noexcept : p_(p) {}
        basic_iterator<Ref> begin() const noexcept {
            return basic_iterator<Ref>(p_);
        }
        sentinel end() const noexcept { return sentinel{}; }

      private:
        const ark_pool *p_;
    };

    pair_range<std::pair<handle_type, T &>> each_with_handle() noexcept {
        assert(p_ != nullptr);
        return pair_range<std::pair<handle_type, T &>>(p_);
    }
    pair_range<std::pair<handle_type, const T &>>
    each_with_handle() const noexcept {
        assert(p_ != nullptr);
        return pair_range<std::pair<handle_type, const T &>>(p_);
    }

  private:
    /* A slot for insert and emplace from pool.h's inline take, with no
     * call and no zeroing (the element is built or copied in it next), or
     * nullptr when the general path must run (growth, the rest). */
    ARK__ALWAYS_INLINE void *take_fast(ark_handle *h) noexcept {
        ark__pool_view *v = ark__pool_view_mut(p_);
        uint64_t i;
        char *slot = ark__pool_take_any(v, &i);
        if (slot == nullptr) {
            return nullptr;
        }
        *h = ark__slots_handle(&v->slots, i, slot);
        return slot + v->slots.data_off;
    }

    /* take_fast found no slot: the general path of ark_pool_insert (out
     * of line; the inline take would only fail again) with zero bytes,
     * which grows the pool or says why it cannot; we then build in the
     * slot it took. */
    void *take_slow(ark_handle *h) noexcept {
        last_ =
            ark__pool_insert_slow(p_, detail::zero_block<sizeof(T)>::bytes, h);
        return last_ == ARK_OK ? ark_pool_get(p_, *h) : nullptr;
    }

    /* take_fast found no slot: ark_pool_insert's general path, a library
     * call (growth, or why it cannot); the handle stays null on failure. */
    handle_type insert_slow(const T &v) noexcept {
        ark_handle h = ARK_NULL_HANDLE;
        last_ = ark__pool_insert_slow(p_, std::addressof(v), &h);
        return handle_type(h);
    }

    void create(const pool_options &o, detail::c_hook hook) noexcept {
        ark_pool_config cfg{};
        cfg.elem_size = sizeof(T);
        cfg.elem_align = alignof(T);
        cfg.index_bits = o.index_bits;
        cfg.gen_bits = o.gen_bits;
        cfg.tag_bits = o.tag_bits;
        cfg.tag = o.tag;
        cfg.index_min = o.index_min;
        cfg.index_max = o.index_max;
        cfg.max_elements = o.max_elements;
        cfg.seal_key = o.seal_key;
        cfg.allocator = o.allocator;
        cfg.on_remove = hook.fn;
        cfg.user = hook.user;
        last_ = ark_pool_create(&p_, &cfg);
        if (last_ != ARK_OK) {
            p_ = nullptr;
        }
        hooked_ = hook.fn != nullptr;
    }

    void reset() noexcept {
        if (p_ != nullptr) {
            if (hooked_) {
                ark_pool_clear(p_, true);
            }
            ark_pool_destroy(p_);
            p_ = nullptr;
        }
    }

    ark_pool *p_ = nullptr;
    status last_ = ARK_OK;
    bool hooked_ = false; /* a removal hook is installed */
};

} // namespace ark

#endif /* ARK_POOL_HPP */
