/* SPDX-License-Identifier: MIT */
/*
 * ark/handle.hpp - C++: what every part of ark.hpp shares: ark::status,
 * ark::strerror and the typed ark::handle<T> (with std::hash). See
 * ark/ark.hpp for the overview and docs/cpp.md for the guide.
 */
#ifndef ARK_HANDLE_HPP
#define ARK_HANDLE_HPP

#include "ark/ark.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
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

} // namespace ark

namespace std {
/* Hash a handle as its raw value. */
template <class T> struct hash<ark::handle<T>> {
    size_t operator()(ark::handle<T> h) const noexcept {
        return hash<ark_handle>()(h.raw());
    }
};
} // namespace std

#endif /* ARK_HANDLE_HPP */
