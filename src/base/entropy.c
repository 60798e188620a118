/* SPDX-License-Identifier: MIT */
/*
 * entropy.c - 64 bits from the operating system's random source, for hash
 * seeds and seal keys.
 *
 * Linux and the BSDs: getrandom / getentropy. Windows: BCryptGenRandom
 * with the system-preferred RNG (bcrypt, linked by CMake). If the OS call
 * fails or the platform has none, the fallback mixes the caller's salt
 * (the address of the container being created), the address of a stack
 * variable and of this function, clock() and time() through a 64-bit
 * finaliser: distinct per live container and per process run, but not
 * secret. ark__entropy64 reports which one it used.
 */
#if defined(__linux__)
#define _DEFAULT_SOURCE 1
#include <sys/random.h>
#define ARK_ENTROPY_GETRANDOM 1
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__)
#include <unistd.h>
#define ARK_ENTROPY_GETENTROPY 1
#elif defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
/* after windows.h, which it needs */
#include <bcrypt.h>
#define ARK_ENTROPY_BCRYPT 1
#endif

#include "base/base.h"

#include <time.h>

static int os_random(void *buf, size_t n) {
#if defined(ARK_ENTROPY_GETRANDOM)
    return getrandom(buf, n, 0) == (ssize_t)n;
#elif defined(ARK_ENTROPY_GETENTROPY)
    return getentropy(buf, n) == 0;
#elif defined(ARK_ENTROPY_BCRYPT)
    return BCryptGenRandom(NULL, (PUCHAR)buf, (ULONG)n,
                           BCRYPT_USE_SYSTEM_PREFERRED_RNG) >= 0;
#else
    (void)buf;
    (void)n;
    return 0;
#endif
}

uint64_t ark__mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x;
}

static uint64_t fallback_entropy(const void *salt) {
    int local = 0;
    uint64_t x = (uint64_t)(uintptr_t)salt;
    x = ark__mix64(x ^ (uint64_t)(uintptr_t)&local);
    x = ark__mix64(x ^ (uint64_t)(uintptr_t)&fallback_entropy);
    x = ark__mix64(x ^ (uint64_t)clock());
    return ark__mix64(x ^ (uint64_t)time(NULL));
}

uint64_t ark__entropy64(const void *salt, bool *from_os) {
    uint64_t x;
    bool ok = os_random(&x, sizeof x) != 0;
    if (!ok) {
        x = fallback_entropy(salt);
    }
    if (from_os != NULL) {
        *from_os = ok;
    }
    return x;
}
