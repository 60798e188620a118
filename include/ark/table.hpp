/* SPDX-License-Identifier: MIT */
/*
 * ark/table.hpp - C++: table: typed column pointers over ark_table.
 * See ark/ark.hpp for the overview and docs/cpp.md for the guide.
 */
#ifndef ARK_TABLE_HPP
#define ARK_TABLE_HPP

#include "ark/handle.hpp"

namespace ark {

/* ---- table ----------------------------------------------------------------
 */

/* What a table is created with besides its column sizes (see
 * ark_table_config; zero = default). */
struct table_options {
    unsigned index_bits = 0;
    unsigned gen_bits = 0;
    unsigned tag_bits = 0;
    uint64_t tag = 0;
    /* The slot indices insert and claim take, inclusive (0 and 0: all). */
    uint32_t index_min = 0;
    uint32_t index_max = 0;
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

    /* Create a table with these column sizes. Check ok(): last_status()
     * is ARK_EINVAL for bad options (no columns, a bad size, an allocator
     * missing a function, ...) or ARK_ENOMEM. */
    explicit table(std::initializer_list<size_t> column_sizes,
                   const table_options &o = table_options{}) noexcept {
        create(column_sizes.begin(), column_sizes.size(), o);
    }
    /* As above, with the sizes as an array of ncolumns. */
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

    /* Claim n handles for rows to be created later, from any thread
     * (ark_table_claim): out[0, n) on ARK_OK, nothing otherwise. Leaves
     * last_status() alone. */
    status claim(handle_type *out, size_t n) noexcept {
        assert(t_ != nullptr && (out != nullptr || n == 0));
        return ark_table_claim(t_, reinterpret_cast<ark_handle *>(out), n);
    }

    /* Claim one handle from any thread; the null handle when none is
     * left. */
    handle_type claim() noexcept {
        ark_handle h = ARK_NULL_HANDLE;
        return ark_table_claim(t_, &h, 1) == ARK_OK ? handle_type(h)
                                                    : handle_type();
    }

    /* Give back a claimed handle whose row was never created (owning
     * thread). Returns false (last_status() why) otherwise. */
    bool unclaim(handle_type h) noexcept {
        assert(t_ != nullptr);
        last_ = ark_table_unclaim(t_, h.raw());
        return last_ == ARK_OK;
    }

    /* Create the zeroed row of handle h (a claimed handle, or a server's
     * a replica mirrors; ark_table_insert_at) and store its row in *row
     * if given. Returns false (last_status() why) on failure. */
    bool insert_at(handle_type h, size_t *row = nullptr) noexcept {
        assert(t_ != nullptr);
        last_ = ark_table_insert_at(t_, h.raw(), row);
        return last_ == ARK_OK;
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
     * Return column k as a C array, or nullptr (k out of range, in every
     * build, or no row yet on the allocator path). For a k in range, debug
     * builds assert that sizeof(C) is the column's size.
     */
    template <class C> C *column(size_t k) const noexcept {
        assert(t_ != nullptr);
        /* A k past the columns is a miss, like a stale handle: a lookup,
         * not a programmer error, so it is not left to assert. */
        if (k >= ncols_) {
            return nullptr;
        }
        assert(sizes_[k] == sizeof(C) &&
               "ark::table::column<C>: sizeof(C) is not the column size");
        return static_cast<C *>(ark_table_column(t_, k));
    }
    /* Return a pointer to column k's element of h's row, or nullptr (h not
     * live, k out of range). Debug builds assert sizeof(C) as column does. */
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
    template <class E> friend class keyed_table;

    /* A table keyed by an entity pool (ark::keyed_table<E>). */
    table(const size_t *column_sizes, size_t ncolumns, const table_options &o,
          ark_pool *keys) noexcept {
        create(column_sizes, ncolumns, o, keys);
    }

    void create(const size_t *sizes, size_t n, const table_options &o,
                ark_pool *keys = nullptr) noexcept {
        ark_table_config cfg{};
        cfg.keys = keys;
        cfg.column_sizes = sizes;
        cfg.ncolumns = n;
        cfg.index_bits = o.index_bits;
        cfg.gen_bits = o.gen_bits;
        cfg.tag_bits = o.tag_bits;
        cfg.tag = o.tag;
        cfg.index_min = o.index_min;
        cfg.index_max = o.index_max;
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
        /* The copy of the sizes below goes through the allocator before
         * ark_table_create can reject it: check here what it would. */
        if (has_alloc_ && (alloc_.alloc == nullptr || alloc_.free == nullptr)) {
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

} // namespace ark

#endif /* ARK_TABLE_HPP */
