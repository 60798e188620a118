/* SPDX-License-Identifier: MIT */
/*
 * ark/idset.hpp - C++: idset: the ordered id sequence with STL-like names and
 * set algebra.
 * See ark/ark.hpp for the overview and docs/cpp.md for the guide.
 */
#ifndef ARK_IDSET_HPP
#define ARK_IDSET_HPP

#include "ark/handle.hpp"

namespace ark {

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

} // namespace ark

#endif /* ARK_IDSET_HPP */
