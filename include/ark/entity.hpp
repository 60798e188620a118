/* SPDX-License-Identifier: MIT */
/*
 * ark/entity.hpp - C++: entities with components and tags (ark/entity.h),
 * typed. See ark/ark.hpp for the overview and docs/cpp.md for the guide.
 *
 *     ark::pool<unit> units;                        // the entities
 *     ark::components<position, unit> pos(units);   // keyed by units
 *     ark::components<velocity, unit> vel(units);
 *     ark::tag<unit> frozen(units);
 *
 *     ark::handle<unit> e = units.emplace(...);
 *     pos.insert(e, position{1, 2});
 *     vel.insert(e, velocity{1, 0});
 *     for (auto [h, p, v] : ark::view(pos, vel).without_tag(frozen)) {
 *         p.x += v.dx;                              // p, v: references
 *     }
 *     units.remove(e);           // its components and tags go with it
 *
 * - Entities are any ark::pool<E>: its handle<E> names an entity
 *   everywhere, and removing the entity (remove, flush after
 *   remove_later, clear) removes its components (their hooks and
 *   destructors run) and its tags. What the entity pool's destructor
 *   leaves (it removes nothing when E has no destructor and the pool no
 *   hook) the stores' own destructors destroy.
 * - components<C, E>: a pool of C keyed by a pool<E>: entity e's C is
 *   created at e (insert, emplace) and found by e in O(1). Only a
 *   handle<E> fits: a handle of another element type does not compile,
 *   and components of different C are different types.
 * - keyed_table<E>: packed structure-of-arrays rows keyed the same way
 *   (a row per entity that has one), with ark::table's typed columns.
 * - tag<E>: an id set attached to the pool<E>: insert, remove, contains.
 * - view<E, Cs...>: a query (ark_query) over the entities that have every
 *   C of Cs (plus with / without / with_tag / without_tag terms); its
 *   range-for yields std::tuple<handle<E>, Cs &...> for structured
 *   bindings, through the C query's inline iterator: no call per entity.
 *   Build it with CTAD: ark::view(pos, vel) is a view<unit, position,
 *   velocity>; ark::view(units) one over every entity.
 *
 * Lifetime: the wrappers are RAII and may be destroyed in any order (the
 * C library detaches a keyed container or an id set from its entity pool
 * when either side is destroyed). After its entity pool is destroyed, a
 * components, keyed_table or tag object may only be destroyed (or, for
 * components and keyed_table, read and emptied: get, remove, clear). A view
 * holds pointers to the C containers of its terms: use it while they live.
 * Moving a wrapper keeps its C object, so views and keyed containers stay
 * valid across moves of the wrappers they name.
 *
 * Errors are values, as in the rest of ark.hpp: constructors leave ok()
 * false with last_status(); insert / emplace return nullptr (ARK_EEXIST,
 * ARK_ESTALE for an entity that is not live, ARK_ENOMEM, ...); a view
 * whose terms the C query refuses is not ok() and iterates nothing.
 */
#ifndef ARK_ENTITY_HPP
#define ARK_ENTITY_HPP

#include "ark/handle.hpp"
#include "ark/pool.hpp"
#include "ark/table.hpp"

#include <tuple>

namespace ark {

/*
 * What a keyed container (components, keyed_table) is created with: the
 * handle layout and seal key are the entity pool's. Zero = default.
 */
struct component_options {
    /* Entity indices to reserve address space for (components, default
     * allocator only) or rows (keyed_table); 0 = the C default. */
    size_t max_elements = 0;
    const ark_allocator *allocator = nullptr; /* must outlive the container */
};

/* ---- components<C, E> ---------------------------------------------------- */

/*
 * A component: at most one C per entity of a pool<E>, stored in a pool
 * keyed by it (ark_pool_config.keys; see ark/entity.h). Entity e's C lives
 * in slot e (a stable address, one load to find it) and is created at e's
 * handle, found by it, and removed with the entity. C may be any object
 * type, as for pool<T>: constructed in place, destroyed exactly once (by
 * remove, flush after remove_later, clear, the entity's removal, or this
 * object's destructor).
 *
 * Move-only; the moved-from object is empty (ok() false).
 */
template <class C, class E> class components {
    static_assert(std::is_object_v<C> && !std::is_array_v<C> &&
                      !std::is_const_v<C> && !std::is_volatile_v<C>,
                  "ark::components<C, E>: C must be a non-const, non-array "
                  "object type");
    static_assert(sizeof(C) <= ARK_POOL_MAX_ELEM_SIZE,
                  "ark::components<C, E>: C is larger than "
                  "ARK_POOL_MAX_ELEM_SIZE");
    static_assert(alignof(C) <= ARK_POOL_MAX_ELEM_ALIGN,
                  "ark::components<C, E>: C is aligned more than "
                  "ARK_POOL_MAX_ELEM_ALIGN");

  public:
    using value_type = C;
    using entity_type = E;
    using handle_type = handle<E>;

    /* Create the component store of the entities of a pool. Check ok():
     * last_status() is ARK_EINVAL when entities is not ok() (or is itself
     * keyed) or an option is bad, ARK_ENOMEM. */
    explicit components(pool<E> &entities,
                        const component_options &o = {}) noexcept {
        create(entities, o, detail::make_hook<C, E>());
    }

    /*
     * As above, with a removal hook of the caller's: (*on_remove)(e, c)
     * runs right before ~C for every component that leaves, entity
     * removals included; see pool<T>'s constructor taking on_remove.
     */
    template <class H>
    components(pool<E> &entities, const component_options &o,
               H *on_remove) noexcept {
        create(entities, o, detail::make_hook<C, E>(on_remove));
    }

    components(const components &) = delete;
    components &operator=(const components &) = delete;
    components(components &&o) noexcept
        : p_(o.p_), keys_(o.keys_), last_(o.last_), hooked_(o.hooked_) {
        o.p_ = nullptr;
    }
    components &operator=(components &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = o.p_;
            keys_ = o.keys_;
            last_ = o.last_;
            hooked_ = o.hooked_;
            o.p_ = nullptr;
        }
        return *this;
    }
    /* Destroy every component (hook and destructors run), then the store. */
    ~components() { reset(); }

    bool ok() const noexcept { return p_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }
    /* The status of the last insert, emplace, remove or remove_later (or
     * of creation). */
    status last_status() const noexcept { return last_; }

    /*
     * Give entity e a copy of v and return it, or nullptr: last_status()
     * ARK_EEXIST (e has one), ARK_ESTALE / ARK_ENULL / ... (e is not a
     * live entity), ARK_EINVAL (called from a removal hook, or the entity
     * pool is gone), ARK_ENOMEM. Nothing changes on failure.
     */
    C *insert(handle_type e,
              const C &v) noexcept(std::is_nothrow_copy_constructible_v<C>) {
        if constexpr (std::is_trivially_copyable_v<C>) {
            assert(p_ != nullptr);
            last_ = ark_pool_insert_at(p_, e.raw(), std::addressof(v));
            return last_ == ARK_OK ? get(e) : nullptr;
        } else {
            return emplace(e, v);
        }
    }
    /* Move v into entity e's new component; as insert(e, const C &). */
    template <class U = C,
              class = std::enable_if_t<!std::is_trivially_copyable_v<U>>>
    C *insert(handle_type e,
              C &&v) noexcept(std::is_nothrow_move_constructible_v<C>) {
        return emplace(e, std::move(v));
    }

    /* Construct entity e's component in place from args; as insert. With
     * exceptions, a constructor that throws gives the slot back (no ~C)
     * and the exception propagates. */
    template <class... Args>
    C *emplace(handle_type e, Args &&...args) noexcept(
        std::is_nothrow_constructible_v<C, Args...>) {
        assert(p_ != nullptr);
        last_ = ark_pool_insert_at(p_, e.raw(),
                                   detail::zero_block<sizeof(C)>::bytes);
        if (last_ != ARK_OK) {
            return nullptr;
        }
        return detail::build_in<C>(p_, e.raw(), ark_pool_get(p_, e.raw()),
                                   std::forward<Args>(args)...);
    }

    /* Return entity e's component, or nullptr (none, or e not live).
     * Inline: one slot read. */
    C *get(handle_type e) noexcept {
        assert(p_ != nullptr);
        return static_cast<C *>(ark_pool_get(p_, e.raw()));
    }
    const C *get(handle_type e) const noexcept {
        assert(p_ != nullptr);
        return static_cast<const C *>(ark_pool_get(p_, e.raw()));
    }
    bool contains(handle_type e) const noexcept { return get(e) != nullptr; }

    /* Remove (and destroy) entity e's component; the entity stays. False
     * (last_status() why) when it has none. */
    bool remove(handle_type e) noexcept {
        assert(p_ != nullptr);
        last_ = ark_pool_remove(p_, e.raw());
        return last_ == ARK_OK;
    }
    /* Hide entity e's component at once, destroy it at the next flush. */
    bool remove_later(handle_type e) noexcept {
        assert(p_ != nullptr);
        last_ = ark_pool_remove_later(p_, e.raw());
        return last_ == ARK_OK;
    }
    size_t flush() noexcept {
        assert(p_ != nullptr);
        return ark_pool_flush(p_);
    }
    /* Remove every component (the entities stay). */
    void clear() noexcept {
        assert(p_ != nullptr);
        ark_pool_clear(p_, true);
    }

    /* The number of entities that have a C (marked ones excluded). */
    size_t size() const noexcept {
        return p_ != nullptr ? ark_pool_count(p_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }

    /* The keyed C pool, and the entity pool it is keyed by. */
    ark_pool *c_pool() const noexcept { return p_; }
    const ark_pool *c_entities() const noexcept { return keys_; }

    /* ---- iteration: (handle<E>, C &) in entity id order ---------------- */

    struct sentinel {};
    template <class Ref> class basic_iterator {
      public:
        using iterator_category = std::input_iterator_tag;
        using value_type = Ref;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Ref;

        explicit basic_iterator(const ark_pool *p) noexcept
            : it_(ark_pool_iter_begin(p)) {}
        Ref operator*() const noexcept {
            using V = std::remove_reference_t<typename Ref::second_type>;
            return Ref(handle_type(it_.handle), *static_cast<V *>(it_.elem));
        }
        basic_iterator &operator++() noexcept {
            ark_pool_iter_next(&it_);
            return *this;
        }
        void operator++(int) noexcept { ark_pool_iter_next(&it_); }
        friend bool operator==(const basic_iterator &i, sentinel) noexcept {
            return !ark_pool_iter_valid(&i.it_);
        }
        friend bool operator!=(const basic_iterator &i, sentinel) noexcept {
            return ark_pool_iter_valid(&i.it_);
        }

      private:
        ark_pool_iter it_;
    };
    using iterator = basic_iterator<std::pair<handle_type, C &>>;
    using const_iterator = basic_iterator<std::pair<handle_type, const C &>>;

    /* for (auto [e, c] : comps): every entity's component, as pool<T>'s
     * iteration (removing any component or entity during the walk is
     * allowed; what is removed before it is reached is not visited). */
    iterator begin() noexcept {
        assert(p_ != nullptr);
        return iterator(p_);
    }
    const_iterator begin() const noexcept {
        assert(p_ != nullptr);
        return const_iterator(p_);
    }
    sentinel end() const noexcept { return sentinel{}; }

  private:
    void create(pool<E> &entities, const component_options &o,
                detail::c_hook hook) noexcept {
        if (!entities.ok()) {
            last_ = ARK_EINVAL; /* a null keys would make a plain pool */
            return;
        }
        ark_pool_config cfg{};
        cfg.elem_size = sizeof(C);
        cfg.elem_align = alignof(C);
        cfg.max_elements = o.max_elements;
        cfg.allocator = o.allocator;
        cfg.on_remove = hook.fn;
        cfg.user = hook.user;
        cfg.keys = entities.c_pool();
        last_ = ark_pool_create(&p_, &cfg);
        if (last_ != ARK_OK) {
            p_ = nullptr;
            return;
        }
        keys_ = entities.c_pool();
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
    const ark_pool *keys_ = nullptr;
    status last_ = ARK_OK;
    bool hooked_ = false;
};

/* ---- keyed_table<E> ------------------------------------------------------ */

namespace detail {
/* A keyed table's C hook: (*user)(handle<E>) (a table has no element). */
template <class E, class H>
void table_hook(void *, ark_handle h, void *user) noexcept {
    (*static_cast<H *>(user))(handle<E>(h));
}
} // namespace detail

/*
 * Structure-of-arrays rows keyed by the entities of a pool<E>
 * (ark_table_config.keys): the entities that have a row have it packed in
 * [0, rows()) of every column, found by the entity's handle (one more
 * load than a component). Columns as ark::table's: column<C>(k) is a
 * plain array. Rows move on removal (swap-and-pop); handles do not.
 * Move-only.
 */
template <class E> class keyed_table {
  public:
    using entity_type = E;
    using handle_type = handle<E>;

    /* Create a table of these column sizes keyed by entities. Check ok():
     * ARK_EINVAL (entities not ok(), a bad size, no columns), ARK_ENOMEM. */
    keyed_table(pool<E> &entities, std::initializer_list<size_t> column_sizes,
                const component_options &o = {}) noexcept
        : t_(make(entities, column_sizes.begin(), column_sizes.size(), o,
                  table_options{})) {}

    /* As above, with a removal hook of the caller's, (*on_remove)(e),
     * called for each row removed (entity removals included) while
     * row(e) still gives the row. It must outlive the table. */
    template <class H>
    keyed_table(pool<E> &entities, std::initializer_list<size_t> column_sizes,
                const component_options &o, H *on_remove) noexcept
        : t_(make(entities, column_sizes.begin(), column_sizes.size(), o,
                  hook_options(on_remove))) {}

    bool ok() const noexcept { return t_.ok(); }
    explicit operator bool() const noexcept { return ok(); }
    status last_status() const noexcept { return t_.last_status(); }

    /* Give entity e a zeroed row at the end and return it, or ARK_NO_ROW:
     * last_status() ARK_EEXIST, ARK_ESTALE (e not live), ARK_EINVAL (from a
     * hook), ARK_ENOMEM. Growth may move the columns on the allocator
     * path: read column() again after an insert. */
    size_t insert(handle_type e) noexcept {
        assert(t_.ok());
        size_t r = ARK_NO_ROW;
        t_.last_ = ark_table_insert_at(t_.t_, e.raw(), &r);
        return t_.last_ == ARK_OK ? r : ARK_NO_ROW;
    }
    /* Entity e's row, or ARK_NO_ROW. Inline. */
    size_t row(handle_type e) const noexcept {
        assert(t_.ok());
        return ark_table_row(t_.t_, e.raw());
    }
    bool contains(handle_type e) const noexcept { return row(e) != ARK_NO_ROW; }
    /* The entity whose row this is (null past the rows, or marked). */
    handle_type handle_at(size_t r) const noexcept {
        assert(t_.ok());
        return handle_type(ark_table_handle_at(t_.t_, r));
    }
    template <class C> C *column(size_t k) const noexcept {
        return t_.template column<C>(k);
    }
    template <class C> C *get(handle_type e, size_t k) const noexcept {
        size_t r = row(e);
        C *c = column<C>(k);
        return r == ARK_NO_ROW || c == nullptr ? nullptr : c + r;
    }
    /* Remove entity e's row (the entity stays). */
    bool remove(handle_type e) noexcept {
        assert(t_.ok());
        t_.last_ = ark_table_remove(t_.t_, e.raw());
        return t_.last_ == ARK_OK;
    }
    bool remove_later(handle_type e) noexcept {
        assert(t_.ok());
        t_.last_ = ark_table_remove_later(t_.t_, e.raw());
        return t_.last_ == ARK_OK;
    }
    size_t flush() noexcept { return t_.flush(); }
    void clear() noexcept { t_.clear(true); }
    size_t size() const noexcept { return t_.size(); }
    bool empty() const noexcept { return size() == 0; }
    size_t rows() const noexcept { return t_.rows(); }
    size_t ncolumns() const noexcept { return t_.ncolumns(); }
    size_t column_size(size_t k) const noexcept { return t_.column_size(k); }

    ark_table *c_table() const noexcept { return t_.c_table(); }
    const ark_pool *c_entities() const noexcept {
        return t_.ok() ? keys_ : nullptr;
    }

  private:
    template <class H> static table_options hook_options(H *hook) noexcept {
        static_assert(std::is_object_v<H>,
                      "ark::keyed_table: a removal hook is given as a pointer "
                      "to a callable object");
        static_assert(std::is_invocable_v<H &, handle<E>>,
                      "ark::keyed_table<E>: the removal hook must be callable "
                      "as hook(ark::handle<E>)");
        table_options t;
        if (hook != nullptr) {
            t.on_remove = &detail::table_hook<E, H>;
            t.user = const_cast<std::remove_const_t<H> *>(hook);
        }
        return t;
    }
    table make(pool<E> &entities, const size_t *sizes, size_t n,
               const component_options &o, table_options t) noexcept {
        if (!entities.ok()) {
            table bad;
            bad.last_ = ARK_EINVAL;
            return bad;
        }
        keys_ = entities.c_pool();
        t.max_rows = o.max_elements;
        t.allocator = o.allocator;
        return table(sizes, n, t, entities.c_pool());
    }

    const ark_pool *keys_ = nullptr;
    table t_;
};

/* ---- tag<E> -------------------------------------------------------------- */

/*
 * A tag: a set of entities of a pool<E> (an ark_idset attached to it, see
 * ark/entity.h). Removing an entity removes it from every tag (one marked
 * by remove_later stops carrying it at once, and leaves the set at the
 * flush). Iteration yields the live tagged entities' handles in id order;
 * the tag must not change during it. Move-only.
 */
template <class E> class tag {
  public:
    using entity_type = E;
    using handle_type = handle<E>;

    /* Create an empty tag attached to the entities. Check ok(). */
    explicit tag(pool<E> &entities, const ark_allocator *a = nullptr) noexcept {
        if (!entities.ok()) {
            last_ = ARK_EINVAL;
            return;
        }
        last_ = ark_idset_create(&s_, a);
        if (last_ != ARK_OK) {
            s_ = nullptr;
            return;
        }
        last_ = ark_pool_attach_idset(entities.c_pool(), s_);
        if (last_ != ARK_OK) {
            ark_idset_destroy(s_);
            s_ = nullptr;
            return;
        }
        e_ = entities.c_pool();
    }
    tag(const tag &) = delete;
    tag &operator=(const tag &) = delete;
    tag(tag &&o) noexcept : s_(o.s_), e_(o.e_), last_(o.last_) {
        o.s_ = nullptr;
    }
    tag &operator=(tag &&o) noexcept {
        if (this != &o) {
            reset();
            s_ = o.s_;
            e_ = o.e_;
            last_ = o.last_;
            o.s_ = nullptr;
        }
        return *this;
    }
    /* Detach from the entities (if they still exist) and free the set. */
    ~tag() { reset(); }

    bool ok() const noexcept { return s_ != nullptr; }
    explicit operator bool() const noexcept { return ok(); }
    status last_status() const noexcept { return last_; }

    /* Tag entity e. False, with last_status(): ARK_EEXIST (tagged
     * already), ARK_ESTALE / ARK_ENULL / ... (e not live), ARK_ENOMEM. */
    bool insert(handle_type e) noexcept {
        assert(s_ != nullptr);
        last_ = ark_pool_tag(e_, s_, e.raw());
        return last_ == ARK_OK;
    }
    /* Untag entity e. False, with last_status(): ARK_ENOTFOUND (not
     * tagged), ARK_ESTALE / ... (e not live), ARK_ENOMEM. */
    bool remove(handle_type e) noexcept {
        assert(s_ != nullptr);
        last_ = ark_pool_untag(e_, s_, e.raw());
        return last_ == ARK_OK;
    }
    /* Return whether the live entity e carries the tag. O(1). */
    bool contains(handle_type e) const noexcept {
        assert(s_ != nullptr);
        return ark_pool_has_tag(e_, s_, e.raw());
    }
    /* The number of tagged entities, counting those marked by
     * remove_later until the flush. */
    size_t size() const noexcept {
        return s_ != nullptr ? ark_idset_count(s_) : 0;
    }
    bool empty() const noexcept { return size() == 0; }

    ark_idset *c_idset() const noexcept { return s_; }
    const ark_pool *c_entities() const noexcept { return e_; }

    /* The tagged entities' handles, in id order. */
    struct sentinel {};
    class iterator {
      public:
        using iterator_category = std::input_iterator_tag;
        using value_type = handle_type;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = handle_type;
        iterator(const ark_idset *s, const ark_pool *e) noexcept
            : it_(ark_idset_iter_begin(s, 0)), e_(e) {
            settle();
        }
        handle_type operator*() const noexcept { return handle_type(h_); }
        iterator &operator++() noexcept {
            ark_idset_iter_next(&it_);
            settle();
            return *this;
        }
        void operator++(int) noexcept { ++*this; }
        friend bool operator==(const iterator &i, sentinel) noexcept {
            return !ark_idset_iter_valid(&i.it_);
        }
        friend bool operator!=(const iterator &i, sentinel) noexcept {
            return ark_idset_iter_valid(&i.it_);
        }

      private:
        /* Stop at the next id whose entity is live: an entity marked by
         * remove_later keeps its id in the set until the flush, and has
         * no handle meanwhile. */
        void settle() noexcept {
            for (; ark_idset_iter_valid(&it_); ark_idset_iter_next(&it_)) {
                h_ = ark_pool_handle_by_id(e_, it_.id);
                if (h_ != ARK_NULL_HANDLE) {
                    return;
                }
            }
        }
        ark_idset_iter it_;
        const ark_pool *e_;
        ark_handle h_ = ARK_NULL_HANDLE;
    };
    iterator begin() const noexcept {
        assert(s_ != nullptr);
        return iterator(s_, e_);
    }
    sentinel end() const noexcept { return sentinel{}; }

  private:
    void reset() noexcept {
        if (s_ == nullptr) {
            return;
        }
        /* Destroying a set detaches it from its pool, if it still has
         * one (the pool may be gone: e_ is not used). */
        ark_idset_destroy(s_);
        s_ = nullptr;
    }

    ark_idset *s_ = nullptr;
    ark_pool *e_ = nullptr;
    status last_ = ARK_OK;
};

/* ---- view<E, Cs...> ------------------------------------------------------ */

namespace detail {
/* What a container gives a view: its entity type, the type a view names
 * it by (Cs), and (view_ref) what the iteration yields for it. */
template <class P> struct view_term; /* not a term: no member types */
template <class C, class E> struct view_term<components<C, E>> {
    using entity = E;
    using elem = C;
};
template <class C, class E> struct view_term<const components<C, E>> {
    using entity = E;
    using elem = const C;
};
template <class E> struct view_term<keyed_table<E>> {
    using entity = E;
    using elem = keyed_table<E>;
};
template <class E> struct view_term<const keyed_table<E>> {
    using entity = E;
    using elem = keyed_table<E>;
};

template <class X> struct view_ref {
    using type = X &; /* a component: a reference to it */
};
template <class E> struct view_ref<keyed_table<E>> {
    using type = size_t; /* a keyed table: the entity's row */
};

template <class X> struct is_keyed_table : std::false_type {};
template <class E> struct is_keyed_table<keyed_table<E>> : std::true_type {};

/* Whether P may be a view's term (so a view's own copy is not one). */
template <class P, class = void> struct is_view_term : std::false_type {};
template <class P>
struct is_view_term<P, std::void_t<typename view_term<P>::entity>>
    : std::true_type {};
} // namespace detail

/*
 * The entities of a pool<E> that match a query: they have each term of
 * Cs (a component type C, const C, or keyed_table<E> for a keyed table's
 * row), plus any with / without / with_tag / without_tag terms added
 * after. Iterating yields std::tuple<handle<E>, C &..., size_t row...>
 * in entity id order:
 *
 *     for (auto [e, p, v] : ark::view(pos, vel)) { p.x += v.dx; }
 *
 * Building a view allocates nothing (an ark_query); each step of the loop
 * is the C query's inline step, each element one address computation.
 * Removing entities or components during the loop follows ark_query_iter:
 * what is removed before it is reached is not visited, the entity being
 * visited may be removed. At most ARK_QUERY_MAX_TERMS terms in all (Cs
 * beyond that do not compile; a later term beyond it makes the view not
 * ok(), ARK_EFULL). A term keyed by another pool (of the same E) makes it
 * not ok(), ARK_EINVAL. A view that is not ok() iterates nothing.
 * Copyable; an iterator points into the view it came from.
 */
template <class E, class... Cs> class view {
    static_assert(sizeof...(Cs) <= ARK_QUERY_MAX_TERMS,
                  "ark::view: more terms than ARK_QUERY_MAX_TERMS");

  public:
    using entity_type = E;
    using handle_type = handle<E>;
    using reference =
        std::tuple<handle<E>, typename detail::view_ref<Cs>::type...>;

    /* Every live entity of the pool (then narrowed by the term calls). */
    template <size_t N = sizeof...(Cs), class = std::enable_if_t<N == 0>>
    explicit view(const pool<E> &entities) noexcept {
        if (!entities.ok()) {
            last_ = ARK_EINVAL;
            return;
        }
        ark_query_init(&q_, entities.c_pool());
    }

    /* The entities that have every one of terms (components<C, E> or
     * keyed_table<E>, const or not), over the pool they are keyed by;
     * term k of Cs is terms' k-th. */
    template <class... Ps,
              class = std::enable_if_t<
                  sizeof...(Ps) == sizeof...(Cs) && (sizeof...(Ps) > 0) &&
                  (detail::is_view_term<Ps>::value && ...)>>
    explicit view(Ps &...terms) noexcept {
        static_assert(
            (std::is_same_v<typename detail::view_term<Ps>::entity, E> && ...),
            "ark::view: every component must be keyed by entities of the "
            "view's entity type");
        static_assert(
            (std::is_same_v<typename detail::view_term<Ps>::elem, Cs> && ...),
            "ark::view<E, Cs...>: the containers given are not Cs");
        const ark_pool *entities = first(terms...).c_entities();
        if (entities == nullptr) {
            last_ = ARK_EINVAL;
            return;
        }
        ark_query_init(&q_, entities);
        (add_with(terms), ...);
    }

    bool ok() const noexcept { return last_ == ARK_OK; }
    explicit operator bool() const noexcept { return ok(); }
    /* ARK_OK, or why the view is not ok(): the first term refused. */
    status last_status() const noexcept { return last_; }

    /* Narrow to entities that have (with) or do not have (without) a
     * component, a row of a keyed table, or a tag. The rvalue forms return
     * the view by value, so `for (... : ark::view(a).without(b))` keeps
     * it alive through the loop. */
    template <class C> view &with(const components<C, E> &c) &noexcept {
        return add(c.c_pool(), &ark_query_with_pool);
    }
    template <class C> view &without(const components<C, E> &c) &noexcept {
        return add(c.c_pool(), &ark_query_without_pool);
    }
    view &with(const keyed_table<E> &t) &noexcept {
        return add(t.c_table(), &ark_query_with_table);
    }
    view &without(const keyed_table<E> &t) &noexcept {
        return add(t.c_table(), &ark_query_without_table);
    }
    view &with_tag(const tag<E> &t) &noexcept {
        return add(t.c_idset(), &ark_query_with_tag);
    }
    view &without_tag(const tag<E> &t) &noexcept {
        return add(t.c_idset(), &ark_query_without_tag);
    }
    template <class C> view with(const components<C, E> &c) &&noexcept {
        return std::move(with(c));
    }
    template <class C> view without(const components<C, E> &c) &&noexcept {
        return std::move(without(c));
    }
    view with(const keyed_table<E> &t) &&noexcept { return std::move(with(t)); }
    view without(const keyed_table<E> &t) &&noexcept {
        return std::move(without(t));
    }
    view with_tag(const tag<E> &t) &&noexcept { return std::move(with_tag(t)); }
    view without_tag(const tag<E> &t) &&noexcept {
        return std::move(without_tag(t));
    }

    struct sentinel {};
    class iterator {
      public:
        using iterator_category = std::input_iterator_tag;
        using value_type = view::reference;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = view::reference;

        /* At the end (a view that is not ok()). */
        iterator() noexcept : it_() { it_.more = false; }
        explicit iterator(const ark_query *q) noexcept
            : it_(ark_query_iter_begin(q)) {}

        reference operator*() const noexcept {
            return deref(std::make_integer_sequence<unsigned, sizeof...(Cs)>{});
        }
        /* The current entity (reads its slot). */
        handle_type handle() const noexcept {
            return handle_type(ark_query_iter_handle(&it_));
        }
        iterator &operator++() noexcept {
            ark_query_iter_next(&it_);
            return *this;
        }
        void operator++(int) noexcept { ark_query_iter_next(&it_); }
        friend bool operator==(const iterator &i, sentinel) noexcept {
            return !ark_query_iter_valid(&i.it_);
        }
        friend bool operator!=(const iterator &i, sentinel) noexcept {
            return ark_query_iter_valid(&i.it_);
        }

      private:
        template <unsigned... I>
        reference deref(std::integer_sequence<unsigned, I...>) const noexcept {
            return reference(handle(), term<Cs>(I)...);
        }
        template <class X>
        typename detail::view_ref<X>::type term(unsigned k) const noexcept {
            if constexpr (detail::is_keyed_table<X>::value) {
                return ark_query_iter_row(&it_, k);
            } else {
                return *static_cast<X *>(ark_query_iter_elem(&it_, k));
            }
        }
        ark_query_iter it_;
    };

    iterator begin() const noexcept {
        return ok() ? iterator(&q_) : iterator();
    }
    sentinel end() const noexcept { return sentinel{}; }

    /* The C query, for calls this wrapper does not cover. */
    const ark_query *c_query() const noexcept { return &q_; }

  private:
    template <class P, class... Ps> static P &first(P &p, Ps &...) noexcept {
        return p;
    }
    template <class P> void add_with(P &term) noexcept {
        if constexpr (detail::is_keyed_table<std::remove_const_t<P>>::value) {
            add(term.c_table(), &ark_query_with_table);
        } else {
            add(term.c_pool(), &ark_query_with_pool);
        }
    }
    template <class X>
    view &add(const X *c,
              ark_status (*fn)(ark_query *, const X *, unsigned *)) noexcept {
        if (last_ != ARK_OK) {
            return *this; /* the first refusal is the one reported */
        }
        last_ = c != nullptr ? fn(&q_, c, nullptr) : ARK_EINVAL;
        return *this;
    }

    ark_query q_{};
    status last_ = ARK_OK;
};

/* ark::view(units): every entity; ark::view(pos, vel, ...): the entities
 * with every component, typed by them. */
template <class E> view(pool<E> &) -> view<E>;
template <class E> view(const pool<E> &) -> view<E>;
template <class P, class... Ps>
view(P &, Ps &...) -> view<typename detail::view_term<P>::entity,
                           typename detail::view_term<P>::elem,
                           typename detail::view_term<Ps>::elem...>;

} // namespace ark

#endif /* ARK_ENTITY_HPP */
