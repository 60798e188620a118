/* SPDX-License-Identifier: MIT */
/*
 * ark/ark.hpp - the C++17 face of ark: typed, RAII, header-only over the C
 * API, whose headers stay the reference for every behaviour not restated
 * here. docs/cpp.md is the guide.
 *
 * What it adds:
 * - ark::handle<T>: a handle that knows what it names. Handles of
 *   different T never convert into each other (pool<A>::get(handle<B>)
 *   does not compile); .raw() gives the ark_handle for the wire.
 * - ark::pool<T>: typed elements of ANY type. Constructors run in place
 *   (insert copies, emplace forwards), destructors run exactly once when
 *   the element leaves the pool: by remove, by flush (for remove_later),
 *   by clear and by the pool's destructor. Trivially destructible types
 *   install no removal hook at all.
 * - ark::table (typed column pointers), ark::idset, ark::idmap (STL-like
 *   names), ark::ref_ptr<T>, ark::refvec<T> and ark::refmap<T> (Cocos2d-x
 *   Vector / Map counting: adding retains, removing releases, a copy
 *   retains every element, a move changes no count, at() is borrowed),
 *   ark::autorelease_pool and ark::mainq (posts any callable).
 *
 * Errors are values. Nothing here throws, and it compiles with
 * -fno-exceptions -fno-rtti. A constructor that can fail (every container
 * allocates) leaves the object empty: test it with ok() (or operator bool)
 * and read last_status(). Calls that can fail return an ark_status, a
 * bool, or a null handle / null pointer with last_status() set.
 *
 * Cost: the hot paths (pool get and iteration, table row and column,
 * idmap find, idset at) are the C inline functions behind a static_cast;
 * a wrapper object is the C pointer plus, for the fallible containers,
 * one ark_status. bench/bench_pool_cpp.cpp measures pool<T> against the C
 * API in one process.
 *
 * Thread-safety: that of the C object wrapped (mainq::post from any
 * thread; everything else single-threaded or read-only sharing).
 */
#ifndef ARK_ARK_HPP
#define ARK_ARK_HPP

#include "ark/ark.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ark {

using status = ark_status;

/* Return the description of a status (never NULL). */
inline const char *strerror(status s) noexcept { return ark_strerror(s); }

/* ---- handle<T> ---------------------------------------------------------- */

/*
 * A typed handle to an element of a container of T. Default-constructed
 * it is the null handle (raw() == ARK_NULL_HANDLE, false in a condition).
 * Only an explicit construction from a raw value makes one: handles of
 * different types never convert into each other. Compares and hashes as
 * its raw value.
 */
template <class T> class handle {
  public:
    using element_type = T;

    constexpr handle() noexcept = default;
    /* Take a raw value (from the wire, a C API call or a save file). */
    constexpr explicit handle(ark_handle raw) noexcept : raw_(raw) {}

    /* Return the ark_handle (for the C API, the wire, a save file). */
    constexpr ark_handle raw() const noexcept { return raw_; }
    /* Return true unless this is the null handle. */
    constexpr explicit operator bool() const noexcept {
        return raw_ != ARK_NULL_HANDLE;
    }

    friend constexpr bool operator==(handle a, handle b) noexcept {
        return a.raw_ == b.raw_;
    }
    friend constexpr bool operator!=(handle a, handle b) noexcept {
        return a.raw_ != b.raw_;
    }
    friend constexpr bool operator<(handle a, handle b) noexcept {
        return a.raw_ < b.raw_;
    }

  private:
    ark_handle raw_ = ARK_NULL_HANDLE;
};

static_assert(sizeof(handle<int>) == sizeof(ark_handle),
              "a handle is its raw value");

/* ---- pool<T> ------------------------------------------------------------ */

/*
 * What a pool is created with: ark_pool_config minus what the type fixes
 * (elem_size = sizeof(T), elem_align = alignof(T), on_remove = ~T). Zero
 * fields take the C defaults, so `ark::pool_options{}` is complete and
 * `ark::pool_options o; o.index_bits = 20; o.gen_bits = 12;` gives 32-bit
 * handles.
 */
struct pool_options {
    unsigned index_bits = 0;
    unsigned gen_bits = 0;
    unsigned tag_bits = 0;
    uint64_t tag = 0;
    size_t max_elements = 0;
    uint64_t seal_key = 0;
    const ark_allocator *allocator = nullptr; /* must outlive the pool */
};

namespace detail {

/* The element a throwing constructor left unbuilt while its slot is given
 * back: the removal hook must not destroy it. Set only around that one
 * removal, on the thread that makes it (the hook runs on the same
 * thread). Defined and checked whether or not exceptions are enabled, so
 * translation units built with and without them agree (one definition). */
inline thread_local const void *unbuilt_elem = nullptr;

/* N readable zero bytes (ark_pool_insert's source in pool::take_slow). */
template <size_t N> struct zero_block {
    static constexpr unsigned char bytes[N] = {};
};

template <class T> void destroy_elem(void *elem, ark_handle, void *) {
    if (elem != unbuilt_elem) {
        static_cast<T *>(elem)->~T();
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
 * cleared (clear) or the pool is destroyed. A destructor may call remove,
 * remove_later, insert and get on the same pool (see pool.h, "Removal
 * hooks"). With exceptions enabled, a constructor that throws releases its
 * slot (without running ~T) and the exception propagates; the pool itself
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
        ark_pool_config cfg{};
        cfg.elem_size = sizeof(T);
        cfg.elem_align = alignof(T);
        cfg.index_bits = o.index_bits;
        cfg.gen_bits = o.gen_bits;
        cfg.tag_bits = o.tag_bits;
        cfg.tag = o.tag;
        cfg.max_elements = o.max_elements;
        cfg.seal_key = o.seal_key;
        cfg.allocator = o.allocator;
        if constexpr (!std::is_trivially_destructible_v<T>) {
            cfg.on_remove = &detail::destroy_elem<T>;
        }
        last_ = ark_pool_create(&p_, &cfg);
        if (last_ != ARK_OK) {
            p_ = nullptr;
        }
    }

    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;

    pool(pool &&o) noexcept : p_(o.p_), last_(o.last_) { o.p_ = nullptr; }

    pool &operator=(pool &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = o.p_;
            last_ = o.last_;
            o.p_ = nullptr;
        }
        return *this;
    }

    /* Destroy every element (their destructors run), then the pool. */
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
    handle_type
    insert(const T &v) noexcept(std::is_nothrow_copy_constructible_v<T>) {
        if constexpr (std::is_trivially_copyable_v<T>) {
            assert(p_ != nullptr);
            ark_handle h = ARK_NULL_HANDLE;
            last_ = ark_pool_insert(p_, &v, &h);
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
        ark_handle h = ARK_NULL_HANDLE;
        void *m = ark_pool_alloc(p_, &h);
        if (m == nullptr) {
            m = take_slow(&h);
            if (m == nullptr) {
                return handle_type();
            }
        }
        last_ = ARK_OK;
        if constexpr (!std::is_nothrow_constructible_v<T, Args...>) {
            /* Without exceptions the guard is dead code the compiler
             * drops; with them it gives the slot back on a throw. */
            struct unbuild {
                ark_pool *p;
                void *m;
                ark_handle h;
                ~unbuild() {
                    if (m != nullptr) {
                        detail::unbuilt_elem = m;
                        ark_pool_remove(p, h);
                        detail::unbuilt_elem = nullptr;
                    }
                }
            } guard{p_, m, h};
            ::new (m) T(std::forward<Args>(args)...);
            guard.m = nullptr;
            return handle_type(h);
        }
        ::new (m) T(std::forward<Args>(args)...);
        return handle_type(h);
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
        return handle_type(ark_pool_handle_of(p_, &e));
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
    /* ark_pool_alloc failed: learn why (it returns no status) by trying
     * ark_pool_insert with zero bytes, which fails the same way or, if the
     * failure was transient, takes a slot we then build in. */
    void *take_slow(ark_handle *h) noexcept {
        last_ = ark_pool_insert(p_, detail::zero_block<sizeof(T)>::bytes, h);
        return last_ == ARK_OK ? ark_pool_get(p_, *h) : nullptr;
    }

    void reset() noexcept {
        if (p_ != nullptr) {
            if constexpr (!std::is_trivially_destructible_v<T>) {
                ark_pool_clear(p_, true);
            }
            ark_pool_destroy(p_);
            p_ = nullptr;
        }
    }

    ark_pool *p_ = nullptr;
    status last_ = ARK_OK;
};

/* ---- table ----------------------------------------------------------------
 */

/* What a table is created with besides its column sizes (see
 * ark_table_config; zero = default). */
struct table_options {
    unsigned index_bits = 0;
    unsigned gen_bits = 0;
    unsigned tag_bits = 0;
    uint64_t tag = 0;
    size_t max_rows = 0;
    uint64_t seal_key = 0;
    const ark_allocator *allocator = nullptr; /* must outlive the table */
    /* Called once for each removed row, elem NULL (see table.h). */
    void (*on_remove)(void *elem, ark_handle h, void *user) = nullptr;
    void *user = nullptr;
};

/*
 * Packed structure-of-arrays rows with stable handles (see table.h).
 * Columns are reached as typed pointers: column<float>(k) checks, in
 * debug builds, that sizeof(float) is column k's size. Move-only.
 * The wrapper keeps a copy of the column sizes (one allocation, through
 * the table's allocator; the C API has no getter for them).
 */
class table {
  public:
    using handle_type = handle<table>;

    table() noexcept = default;

    /* Create a table with these column sizes. Check ok(). */
    explicit table(std::initializer_list<size_t> column_sizes,
                   const table_options &o = table_options{}) noexcept {
        create(column_sizes.begin(), column_sizes.size(), o);
    }
    table(const size_t *column_sizes, size_t ncolumns,
          const table_options &o = table_options{}) noexcept {
        create(column_sizes, ncolumns, o);
    }

    table(const table &) = delete;
    table &operator=(const table &) = delete;
    table(table &&o) noexcept { steal(o); }
    table &operator=(table &&o) noexcept {
        if (this != &o) {
            reset();
            steal(o);
        }
        return *this;
    }
    ~table() { reset(); }

    bool ok() const noexcept { return t_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }
    status last_status() const noexcept { return last_; }

    /* Append a zeroed row; return its handle (null on failure, see
     * last_status()) and store its row in *row if given. */
    handle_type insert(size_t *row = nullptr) noexcept {
        assert(t_ != nullptr);
        ark_handle h = ARK_NULL_HANDLE;
        last_ = ark_table_insert(t_, &h, row);
        return handle_type(h);
    }

    /* Return h's row, or ARK_NO_ROW. Inline. */
    size_t row(handle_type h) const noexcept {
        assert(t_ != nullptr);
        return ark_table_row(t_, h.raw());
    }
    bool contains(handle_type h) const noexcept { return row(h) != ARK_NO_ROW; }
    status check(handle_type h) const noexcept {
        assert(t_ != nullptr);
        return ark_table_check(t_, h.raw());
    }
    /* Return the handle of a row (null past the rows or for a marked
     * row). */
    handle_type handle_at(size_t row) const noexcept {
        assert(t_ != nullptr);
        return handle_type(ark_table_handle_at(t_, row));
    }

    /* Live rows (marked ones excluded). */
    size_t size() const noexcept {
        return t_ != nullptr ? ark_table_count(t_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }
    /* Rows in use, live and marked: loops run over [0, rows()). */
    size_t rows() const noexcept {
        return t_ != nullptr ? ark_table_rows(t_) : 0;
    }
    size_t ncolumns() const noexcept { return ncols_; }
    size_t column_size(size_t k) const noexcept {
        return k < ncols_ ? sizes_[k] : 0;
    }

    /*
     * Return column k as a C array, or nullptr (k out of range, or no row
     * yet on the allocator path). Debug builds assert that sizeof(C) is
     * the column's size.
     */
    template <class C> C *column(size_t k) const noexcept {
        assert(t_ != nullptr);
        assert(k < ncols_ && sizes_[k] == sizeof(C) &&
               "ark::table::column<C>: sizeof(C) is not the column size");
        return static_cast<C *>(ark_table_column(t_, k));
    }
    /* Return a reference to column k's element of h's row, or nullptr. */
    template <class C> C *get(handle_type h, size_t k) const noexcept {
        size_t r = row(h);
        C *c = column<C>(k);
        return r == ARK_NO_ROW || c == nullptr ? nullptr : c + r;
    }

    bool remove(handle_type h) noexcept {
        assert(t_ != nullptr);
        last_ = ark_table_remove(t_, h.raw());
        return last_ == ARK_OK;
    }
    bool remove_later(handle_type h) noexcept {
        assert(t_ != nullptr);
        last_ = ark_table_remove_later(t_, h.raw());
        return last_ == ARK_OK;
    }
    size_t flush() noexcept {
        assert(t_ != nullptr);
        return ark_table_flush(t_);
    }
    void clear(bool run_hook = true) noexcept {
        assert(t_ != nullptr);
        ark_table_clear(t_, run_hook);
    }
    status reserve(size_t n) noexcept {
        assert(t_ != nullptr);
        last_ = ark_table_reserve(t_, n);
        return last_;
    }
    uint64_t seal(handle_type h) const noexcept {
        assert(t_ != nullptr);
        return ark_table_seal(t_, h.raw());
    }
    handle_type unseal(uint64_t wire) const noexcept {
        assert(t_ != nullptr);
        return handle_type(ark_table_unseal(t_, wire));
    }

    ark_table *c_table() const noexcept { return t_; }

  private:
    void create(const size_t *sizes, size_t n,
                const table_options &o) noexcept {
        ark_table_config cfg{};
        cfg.column_sizes = sizes;
        cfg.ncolumns = n;
        cfg.index_bits = o.index_bits;
        cfg.gen_bits = o.gen_bits;
        cfg.tag_bits = o.tag_bits;
        cfg.tag = o.tag;
        cfg.max_rows = o.max_rows;
        cfg.seal_key = o.seal_key;
        cfg.allocator = o.allocator;
        cfg.on_remove = o.on_remove;
        cfg.user = o.user;
        if (o.allocator != nullptr) {
            alloc_ = *o.allocator;
            has_alloc_ = true;
        }
        if (n == 0 || sizes == nullptr) {
            last_ = ARK_EINVAL;
            return;
        }
        size_t bytes = n * sizeof(size_t);
        size_t *copy = static_cast<size_t *>(
            has_alloc_ ? alloc_.alloc(alloc_.ctx, bytes, alignof(size_t))
                       : ::operator new(bytes, std::nothrow));
        if (copy == nullptr) {
            last_ = ARK_ENOMEM;
            return;
        }
        last_ = ark_table_create(&t_, &cfg);
        if (last_ != ARK_OK) {
            t_ = nullptr;
            free_sizes(copy, n);
            return;
        }
        std::memcpy(copy, sizes, bytes);
        sizes_ = copy;
        ncols_ = n;
    }
    void free_sizes(size_t *s, size_t n) noexcept {
        if (has_alloc_) {
            alloc_.free(alloc_.ctx, s, n * sizeof(size_t));
        } else {
            ::operator delete(s);
        }
    }
    void reset() noexcept {
        if (t_ != nullptr) {
            ark_table_destroy(t_);
            free_sizes(sizes_, ncols_);
        }
        t_ = nullptr;
        sizes_ = nullptr;
        ncols_ = 0;
    }
    void steal(table &o) noexcept {
        t_ = o.t_;
        sizes_ = o.sizes_;
        ncols_ = o.ncols_;
        last_ = o.last_;
        alloc_ = o.alloc_;
        has_alloc_ = o.has_alloc_;
        o.t_ = nullptr;
        o.sizes_ = nullptr;
        o.ncols_ = 0;
    }

    ark_table *t_ = nullptr;
    size_t *sizes_ = nullptr;
    size_t ncols_ = 0;
    status last_ = ARK_OK;
    ark_allocator alloc_{};
    bool has_alloc_ = false;
};

/* ---- idset ----------------------------------------------------------------
 */

/*
 * A sorted set of uint32 ids with O(1) access by position (see idset.h).
 * Iteration visits the ids in ascending order. Move-only.
 */
class idset {
  public:
    static constexpr size_t npos = ARK_NOT_FOUND;

    /* Create an empty set. Check ok(). */
    explicit idset(const ark_allocator *a = nullptr) noexcept {
        last_ = ark_idset_create(&s_, a);
        if (last_ != ARK_OK) {
            s_ = nullptr;
        }
    }
    idset(const idset &) = delete;
    idset &operator=(const idset &) = delete;
    idset(idset &&o) noexcept : s_(o.s_), last_(o.last_) { o.s_ = nullptr; }
    idset &operator=(idset &&o) noexcept {
        if (this != &o) {
            ark_idset_destroy(s_);
            s_ = o.s_;
            last_ = o.last_;
            o.s_ = nullptr;
        }
        return *this;
    }
    ~idset() { ark_idset_destroy(s_); }

    bool ok() const noexcept { return s_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }
    status last_status() const noexcept { return last_; }

    /* Insert id: ARK_OK, ARK_EEXIST, ARK_ENOMEM. */
    status insert(uint32_t id) noexcept {
        assert(s_ != nullptr);
        return last_ = ark_idset_insert(s_, id);
    }
    /* Remove id: ARK_OK, ARK_ENOTFOUND, ARK_ENOMEM. */
    status erase(uint32_t id) noexcept {
        assert(s_ != nullptr);
        return last_ = ark_idset_remove(s_, id);
    }
    /* Remove the id at pos: ARK_OK, ARK_ERANGE, ARK_ENOMEM. */
    status erase_at(size_t pos) noexcept {
        assert(s_ != nullptr);
        return last_ = ark_idset_remove_at(s_, pos);
    }
    /* Remove a sorted batch of ids in one pass (absent ids ignored). */
    status erase_sorted(const uint32_t *ids, size_t n) noexcept {
        assert(s_ != nullptr);
        return last_ = ark_idset_remove_sorted(s_, ids, n);
    }
    /* Return the id at pos (0 past the end: check size()). O(1). */
    uint32_t at(size_t pos) const noexcept {
        assert(s_ != nullptr);
        return ark_idset_at(s_, pos);
    }
    uint32_t operator[](size_t pos) const noexcept { return at(pos); }
    /* Return the position of id, or npos. */
    size_t find(uint32_t id) const noexcept {
        assert(s_ != nullptr);
        return ark_idset_find(s_, id);
    }
    /* Return the position of the first id >= id (size() if none). */
    size_t lower_bound(uint32_t id) const noexcept {
        assert(s_ != nullptr);
        return ark_idset_lower_bound(s_, id);
    }
    bool contains(uint32_t id) const noexcept {
        assert(s_ != nullptr);
        return ark_idset_contains(s_, id);
    }
    size_t size() const noexcept {
        return s_ != nullptr ? ark_idset_count(s_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }
    /* Bytes held from the allocator. */
    size_t memory() const noexcept {
        return s_ != nullptr ? ark_idset_memory(s_) : 0;
    }
    /* Decode up to n ids from pos into out; return how many. */
    size_t copy(size_t pos, uint32_t *out, size_t n) const noexcept {
        assert(s_ != nullptr);
        return ark_idset_copy(s_, pos, out, n);
    }
    status validate() const noexcept {
        assert(s_ != nullptr);
        return ark_idset_validate(s_);
    }

    /* Replace this set's ids with a's ids that are also in b. this may be
     * a or b. ARK_ENOMEM leaves this set unchanged. */
    status intersect(const idset &a, const idset &b) noexcept {
        assert(s_ != nullptr && a.s_ != nullptr && b.s_ != nullptr);
        return last_ = ark_idset_intersect(s_, a.s_, b.s_);
    }
    /* Replace this set's ids with those in a or b (ark_idset_union). */
    status unite(const idset &a, const idset &b) noexcept {
        assert(s_ != nullptr && a.s_ != nullptr && b.s_ != nullptr);
        return last_ = ark_idset_union(s_, a.s_, b.s_);
    }
    /* Replace this set's ids with those in a but not in b. */
    status difference(const idset &a, const idset &b) noexcept {
        assert(s_ != nullptr && a.s_ != nullptr && b.s_ != nullptr);
        return last_ = ark_idset_difference(s_, a.s_, b.s_);
    }
    /* Return how many ids this set and o have in common. */
    size_t intersect_count(const idset &o) const noexcept {
        assert(s_ != nullptr && o.s_ != nullptr);
        return ark_idset_intersect_count(s_, o.s_);
    }

    /* Ascending iteration over the ids (ark_idset_iter: a step is a slot
     * read inside the current group). Any change to the set invalidates
     * its iterators. */
    class iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = uint32_t;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = uint32_t;
        iterator() noexcept : it_() {}
        iterator(const ark_idset *s, size_t pos) noexcept
            : it_(ark_idset_iter_begin(s, pos)) {}
        uint32_t operator*() const noexcept { return it_.id; }
        iterator &operator++() noexcept {
            ark_idset_iter_next(&it_);
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator t = *this;
            ark_idset_iter_next(&it_);
            return t;
        }
        /* The position of the current id. */
        size_t position() const noexcept { return it_.pos; }
        friend bool operator==(const iterator &a, const iterator &b) noexcept {
            return a.it_.pos == b.it_.pos;
        }
        friend bool operator!=(const iterator &a, const iterator &b) noexcept {
            return a.it_.pos != b.it_.pos;
        }

      private:
        ark_idset_iter it_;
    };
    iterator begin() const noexcept {
        assert(s_ != nullptr);
        return iterator(s_, 0);
    }
    iterator end() const noexcept {
        assert(s_ != nullptr);
        return iterator(s_, size());
    }
    /* An iterator at position pos (end() when pos >= size()). */
    iterator iter_at(size_t pos) const noexcept {
        assert(s_ != nullptr);
        return iterator(s_, pos < size() ? pos : size());
    }

    ark_idset *c_idset() const noexcept { return s_; }

  private:
    ark_idset *s_ = nullptr;
    status last_ = ARK_OK;
};

/* ---- idmap ----------------------------------------------------------------
 */

/*
 * A uint64 -> uint64 hash map (see idmap.h); every key is valid.
 * STL-like names; values are returned by value or through a pointer into
 * the table (valid until the next change). Move-only.
 */
class idmap {
  public:
    using key_type = uint64_t;
    using mapped_type = uint64_t;
    using value_type = std::pair<uint64_t, uint64_t>;

    explicit idmap(const ark_allocator *a = nullptr) noexcept {
        last_ = ark_idmap_create(&m_, a);
        if (last_ != ARK_OK) {
            m_ = nullptr;
        }
    }
    idmap(const idmap &) = delete;
    idmap &operator=(const idmap &) = delete;
    idmap(idmap &&o) noexcept : m_(o.m_), last_(o.last_) { o.m_ = nullptr; }
    idmap &operator=(idmap &&o) noexcept {
        if (this != &o) {
            ark_idmap_destroy(m_);
            m_ = o.m_;
            last_ = o.last_;
            o.m_ = nullptr;
        }
        return *this;
    }
    ~idmap() { ark_idmap_destroy(m_); }

    bool ok() const noexcept { return m_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }
    status last_status() const noexcept { return last_; }

    /* Insert key -> value unless key is present: ARK_OK, ARK_EEXIST (the
     * value is left alone), ARK_ENOMEM. */
    status insert(uint64_t key, uint64_t value) noexcept {
        assert(m_ != nullptr);
        return last_ = ark_idmap_insert(m_, key, value);
    }
    /* Insert or overwrite: ARK_OK, ARK_ENOMEM. */
    status insert_or_assign(uint64_t key, uint64_t value) noexcept {
        assert(m_ != nullptr);
        return last_ = ark_idmap_put(m_, key, value);
    }
    /* Return true and store key's value in *value when present. */
    bool get(uint64_t key, uint64_t *value) const noexcept {
        assert(m_ != nullptr);
        return ark_idmap_get(m_, key, value);
    }
    /* Return a pointer to key's value (writable), or nullptr. Valid until
     * the next insert, erase, reserve or clear. */
    uint64_t *find(uint64_t key) noexcept {
        assert(m_ != nullptr);
        return ark_idmap_get_ptr(m_, key);
    }
    const uint64_t *find(uint64_t key) const noexcept {
        assert(m_ != nullptr);
        return ark_idmap_get_ptr(m_, key);
    }
    /* Return key's value, or fallback when absent. */
    uint64_t value_or(uint64_t key, uint64_t fallback) const noexcept {
        uint64_t v = fallback;
        get(key, &v);
        return v;
    }
    bool contains(uint64_t key) const noexcept { return get(key, nullptr); }
    size_t count(uint64_t key) const noexcept { return contains(key) ? 1 : 0; }
    /* Remove key; return true if it was present. */
    bool erase(uint64_t key) noexcept {
        assert(m_ != nullptr);
        return ark_idmap_remove(m_, key);
    }
    /* Remove key and store its value in *old; return true if present. */
    bool take(uint64_t key, uint64_t *old) noexcept {
        assert(m_ != nullptr);
        return ark_idmap_take(m_, key, old);
    }
    /* Fix the hash seed of an empty map (ark_idmap_set_seed): the same
     * seed and the same calls give the same iteration order. */
    void set_seed(uint64_t seed) noexcept {
        assert(m_ != nullptr);
        ark_idmap_set_seed(m_, seed);
    }
    status reserve(size_t n) noexcept {
        assert(m_ != nullptr);
        return last_ = ark_idmap_reserve(m_, n);
    }
    void clear() noexcept {
        assert(m_ != nullptr);
        ark_idmap_clear(m_);
    }
    size_t size() const noexcept {
        return m_ != nullptr ? ark_idmap_count(m_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }

    /* Iteration in table order over (key, value) pairs; the map must not
     * change during the walk. */
    struct sentinel {};
    class iterator {
      public:
        using iterator_category = std::input_iterator_tag;
        using value_type = std::pair<uint64_t, uint64_t>;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = value_type;
        explicit iterator(const ark_idmap *m) noexcept
            : it_(ark_idmap_iter_begin(m)) {}
        value_type operator*() const noexcept { return {it_.key, it_.value}; }
        iterator &operator++() noexcept {
            ark_idmap_iter_next(&it_);
            return *this;
        }
        void operator++(int) noexcept { ark_idmap_iter_next(&it_); }
        friend bool operator==(const iterator &i, sentinel) noexcept {
            return !ark_idmap_iter_valid(&i.it_);
        }
        friend bool operator!=(const iterator &i, sentinel) noexcept {
            return ark_idmap_iter_valid(&i.it_);
        }

      private:
        ark_idmap_iter it_;
    };
    iterator begin() const noexcept {
        assert(m_ != nullptr);
        return iterator(m_);
    }
    sentinel end() const noexcept { return sentinel{}; }

    ark_idmap *c_idmap() const noexcept { return m_; }

  private:
    ark_idmap *m_ = nullptr;
    status last_ = ARK_OK;
};

/* ---- ref_ptr<T> -----------------------------------------------------------
 */

namespace detail {
template <class T> ark_ref *as_ref(T *p) noexcept {
    static_assert(std::is_standard_layout_v<T>,
                  "ark: T must be standard-layout with an ark_ref as its "
                  "first member");
    return reinterpret_cast<ark_ref *>(p);
}
template <class T> T *from_ref(ark_ref *r) noexcept {
    return reinterpret_cast<T *>(r);
}
} // namespace detail

/*
 * An intrusive counted pointer to a T whose FIRST member is an ark_ref
 * (T standard-layout, so a T * and its ark_ref * are interconvertible).
 * Copying retains, moving changes no count, destruction releases.
 */
template <class T> class ref_ptr {
  public:
    constexpr ref_ptr() noexcept = default;
    constexpr ref_ptr(std::nullptr_t) noexcept {}
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
 */
template <class T, class... Args> ref_ptr<T> make_ref(Args &&...args) noexcept {
    T *p = new (std::nothrow) T(std::forward<Args>(args)...);
    if (p == nullptr) {
        return ref_ptr<T>();
    }
    ark_ref_init(detail::as_ref(p), &detail::delete_ref<T>);
    return ref_ptr<T>::adopt(p);
}

/* As make_ref, with the count initialised by ark_ref_init_atomic: every
 * retain and release of the object is atomic, so ref_ptr copies of it may
 * live on several threads. */
template <class T, class... Args>
ref_ptr<T> make_ref_atomic(Args &&...args) noexcept {
    T *p = new (std::nothrow) T(std::forward<Args>(args)...);
    if (p == nullptr) {
        return ref_ptr<T>();
    }
    ark_ref_init_atomic(detail::as_ref(p), &detail::delete_ref<T>);
    return ref_ptr<T>::adopt(p);
}

/* ---- refvec<T> ------------------------------------------------------------
 */

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
            last_ = ark_refvec_create(&v_, a_);
            if (last_ != ARK_OK) {
                v_ = nullptr;
                return false;
            }
        }
        return true;
    }

    ark_refvec *v_ = nullptr;
    const ark_allocator *a_ = nullptr;
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
            status s = ark_refmap_create(&n, a_);
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
     * (or on all of them if it returns void). fn must not change the map. */
    template <class F> void for_each(F &&fn) const {
        if (m_ == nullptr) {
            return;
        }
        ark_refmap_each(
            m_,
            [](uint64_t key, ark_ref *r, void *ud) -> bool {
                F &f = *static_cast<std::remove_reference_t<F> *>(ud);
                if constexpr (std::is_void_v<decltype(f(key, (T *)nullptr))>) {
                    f(key, detail::from_ref<T>(r));
                    return true;
                } else {
                    return static_cast<bool>(f(key, detail::from_ref<T>(r)));
                }
            },
            const_cast<void *>(static_cast<const void *>(std::addressof(fn))));
    }

    ark_refmap *c_refmap() const noexcept { return m_; }

  private:
    bool make() noexcept {
        if (m_ == nullptr) {
            last_ = ark_refmap_create(&m_, a_);
            if (last_ != ARK_OK) {
                m_ = nullptr;
                return false;
            }
        }
        return true;
    }

    ark_refmap *m_ = nullptr;
    const ark_allocator *a_ = nullptr;
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

/* ---- mainq ----------------------------------------------------------------
 */

namespace detail {

/* Set on the thread running ~mainq while it empties the queue: the
 * trampolines then destroy their callables without calling them. */
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
    if (!mainq_discarding) {
        (*f)();
    }
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
 * ark_mainq_destroy does) but destroys their callables.
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
     * ARK_ENOMEM (not queued). */
    template <class F> status post(F &&fn) noexcept {
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
     * all); return how many ran. Main thread. */
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

namespace std {
/* Hash a handle as its raw value. */
template <class T> struct hash<ark::handle<T>> {
    size_t operator()(ark::handle<T> h) const noexcept {
        return hash<ark_handle>()(h.raw());
    }
};
} // namespace std

#endif /* ARK_ARK_HPP */
