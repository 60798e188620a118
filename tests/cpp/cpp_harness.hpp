/* SPDX-License-Identifier: MIT */
/*
 * cpp_harness.hpp - the C harness (tests/harness.h) seen from C++, plus
 * what the ark.hpp tests share: an element type that counts its
 * constructions and destructions.
 */
#ifndef ARK_TEST_CPP_HARNESS_HPP
#define ARK_TEST_CPP_HARNESS_HPP

#include "ark/ark.hpp"

extern "C" {
#include "harness.h"
}

#include <string>

/* Counts of every counted object made and destroyed in this process. */
struct counts {
    long made = 0;      /* constructions of any kind */
    long copied = 0;    /* copy constructions */
    long moved = 0;     /* move constructions */
    long destroyed = 0; /* destructions */
    long live() const { return made - destroyed; }
};
inline counts g_counts;

/* An element with a non-trivial constructor and destructor and a heap
 * member, so a missing or doubled destructor shows in the counts and in
 * ASan / valgrind. */
struct counted {
    int id;
    std::string name;
    explicit counted(int i)
        : id(i), name("element number " + std::to_string(i) +
                      " with a name long enough for the heap") {
        g_counts.made++;
    }
    counted(const counted &o) : id(o.id), name(o.name) {
        g_counts.made++;
        g_counts.copied++;
    }
    counted(counted &&o) noexcept : id(o.id), name(std::move(o.name)) {
        g_counts.made++;
        g_counts.moved++;
    }
    counted &operator=(const counted &) = default;
    ~counted() { g_counts.destroyed++; }
};

#endif /* ARK_TEST_CPP_HARNESS_HPP */
