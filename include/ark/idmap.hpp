/* SPDX-License-Identifier: MIT */
/*
 * ark/idmap.hpp - C++: idmap: the integer hash map with STL-like names.
 * See ark/ark.hpp for the overview and docs/cpp.md for the guide.
 */
#ifndef ARK_IDMAP_HPP
#define ARK_IDMAP_HPP

#include "ark/handle.hpp"

#include <optional>

namespace ark {

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
    /* Return key's value, or std::nullopt when absent. */
    std::optional<uint64_t> get(uint64_t key) const noexcept {
        assert(m_ != nullptr);
        uint64_t v = 0;
        if (ark_idmap_get(m_, key, &v)) {
            return v;
        }
        return std::nullopt;
    }
    /* Return true and store key's value in *value (if value is not NULL)
     * when present. The first form, kept for existing code: get(key)
     * returns a std::optional, find(key) a pointer. */
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

} // namespace ark

#endif /* ARK_IDMAP_HPP */
