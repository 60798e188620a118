/* SPDX-License-Identifier: MIT */
/*
 * harness.h - ark's small test harness.
 *
 * TEST(name) defines a case; each case is its own ctest entry (CMake reads
 * the TEST(...) lines). A test binary runs one case by name, or all of them,
 * and ends with "N passed, N failed". ARK_SEED in the environment replaces
 * the default seed; the seed is printed on every run and on every failure.
 */
#ifndef ARK_TEST_HARNESS_H
#define ARK_TEST_HARNESS_H

#include "ark/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#if !defined(_WIN32)
#include <pthread.h>
#endif

typedef void (*harness_fn)(void);
void harness_register(const char *name, harness_fn fn);
void harness_fail(const char *file, int line, const char *fmt, ...);
int harness_failed(void);

#define TEST(name)                                                             \
    static void test_##name(void);                                             \
    __attribute__((constructor)) static void register_##name(void) {           \
        harness_register(#name, test_##name);                                  \
    }                                                                          \
    static void test_##name(void)

/* Stop the current case at the first failed check: later checks would only
 * repeat the failure or touch memory the failed one describes as broken. */
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            harness_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);              \
            return;                                                            \
        }                                                                      \
    } while (0)

/* CHECK for a helper that returns int: fails the case and returns 0. */
#define REQ(cond)                                                              \
    do {                                                                       \
        if (!(cond)) {                                                         \
            harness_fail(__FILE__, __LINE__, "REQ(%s)", #cond);                \
            return 0;                                                          \
        }                                                                      \
    } while (0)

#define CHECK_EQ(a, b)                                                         \
    do {                                                                       \
        uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);           \
        if (check_a_ != check_b_) {                                            \
            harness_fail(__FILE__, __LINE__,                                   \
                         "CHECK_EQ(%s, %s): %" PRIu64 " != %" PRIu64, #a, #b,  \
                         check_a_, check_b_);                                  \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_STATUS(expr, want)                                               \
    do {                                                                       \
        ark_status check_s_ = (expr);                                          \
        if (check_s_ != (want)) {                                              \
            harness_fail(__FILE__, __LINE__, "%s: got %s, want %s", #expr,     \
                         ark_strerror(check_s_), ark_strerror(want));          \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, ARK_OK)

/* The run's seed (default fixed; ARK_SEED overrides). */
uint64_t harness_seed(void);

/* Scale an iteration count by ARK_TEST_SCALE (default 1; the valgrind stage
 * sets 0.1), never below 1. Randomized tests size their loops with it. */
uint64_t harness_scaled(uint64_t n);

/* splitmix64: a small deterministic PRNG for tests. */
static inline uint64_t harness_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* qsort comparator for uint64_t, ascending. */
static inline int harness_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t harness_below(uint64_t *state, uint64_t n) {
    return harness_rand(state) % n;
}

/*
 * A counting allocator that can be told to fail. fail_at = k > 0 makes the
 * k-th allocation from now fail (and only that one); 0 never fails. It
 * tracks live bytes and blocks so tests can assert no leak, and checks that
 * every free names the size it was allocated with.
 */
typedef struct test_allocator {
    ark_allocator base;
    uint64_t allocs;     /* successful allocations so far */
    uint64_t frees;      /* frees so far */
    uint64_t live_bytes; /* bytes allocated and not freed */
    uint64_t live_blocks;
    uint64_t fail_at;     /* 1-based allocation number to fail; 0 = never */
    uint64_t attempts;    /* allocation attempts since the last arm */
    uint64_t failures;    /* allocations refused */
    uint64_t bad_frees;   /* frees whose size did not match */
    uint64_t max_request; /* largest size ever asked for, refused or not */
} test_allocator;

void test_allocator_init(test_allocator *t);
/* Fail the k-th allocation attempt from now (0 = never). */
void test_allocator_fail_at(test_allocator *t, uint64_t k);

/*
 * Threads for the thread_* cases: pthreads, or Win32 threads on Windows
 * (so the tests need no pthreads library there). fn has pthread's shape.
 */
#if defined(_WIN32)
typedef void *harness_thread; /* a thread HANDLE */
#else
typedef pthread_t harness_thread;
#endif
/* Start fn(arg) on a new thread; 0 on success. */
int harness_thread_start(harness_thread *t, void *(*fn)(void *), void *arg);
/* Wait for the thread to finish; 0 on success. */
int harness_thread_join(harness_thread t);
/* Give up the rest of the time slice. */
void harness_yield(void);

/* A monotonic clock in nanoseconds, for the ratio-of-two-runs complexity
 * checks (QueryPerformanceCounter on Windows, CLOCK_MONOTONIC elsewhere). */
double harness_now_ns(void);

#endif /* ARK_TEST_HARNESS_H */
