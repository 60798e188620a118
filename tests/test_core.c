/* SPDX-License-Identifier: MIT */
/*
 * test_core.c - status strings, the default allocator, virtual memory,
 * the OS entropy source and the test allocator itself.
 */
#include "ark/ark.h"
#include "base/base.h"
#include "base/vmem.h"
#include "harness.h"

#include <string.h>

TEST(strerror_covers_every_status) {
    const ark_status all[] = {ARK_OK,        ARK_ENOMEM,   ARK_EFULL,
                              ARK_ESTALE,    ARK_ERANGE,   ARK_ENULL,
                              ARK_EFOREIGN,  ARK_EINVAL,   ARK_EEXIST,
                              ARK_ENOTFOUND, ARK_ECORRUPT, ARK_EIO};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *s = ark_strerror(all[i]);
        CHECK(s != NULL);
        CHECK(strcmp(s, "unknown status") != 0);
        for (size_t j = 0; j < i; j++) {
            CHECK(strcmp(s, ark_strerror(all[j])) != 0);
        }
    }
    CHECK_EQ(ARK_OK, 0);
    CHECK(strcmp(ark_strerror((ark_status)999), "unknown status") == 0);
}

TEST(test_allocator_fails_exactly_the_kth) {
    test_allocator t;
    test_allocator_init(&t);
    test_allocator_fail_at(&t, 2);
    void *a = t.base.alloc(t.base.ctx, 10, 8);
    void *b = t.base.alloc(t.base.ctx, 10, 8);
    void *c = t.base.alloc(t.base.ctx, 100, 64);
    CHECK(a != NULL);
    CHECK(b == NULL);
    CHECK(c != NULL);
    CHECK_EQ((uintptr_t)c % 64, 0);
    CHECK_EQ(t.live_blocks, 2);
    CHECK_EQ(t.live_bytes, 110);
    t.base.free(t.base.ctx, a, 10);
    t.base.free(t.base.ctx, c, 99);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 1);
}

/* The C library allocator honours every power-of-two alignment a
 * container may ask for, on Windows too (_aligned_malloc there, as its
 * CRT has no aligned_alloc), and its blocks are writable to the end. */
TEST(default_allocator_aligns_and_frees) {
    ark_allocator a;
    CHECK_OK(ark__allocator_init(&a, NULL));
    for (size_t align = 1; align <= 8192; align *= 2) {
        const size_t sizes[] = {0, 1, align, 3 * align + 5, 100000};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            unsigned char *p = a.alloc(a.ctx, sizes[i], align);
            CHECK(p != NULL);
            CHECK_EQ((uintptr_t)p % align, 0);
            memset(p, 0xab, sizes[i]);
            a.free(a.ctx, p, sizes[i]);
        }
    }
}

/* The OS source answers (getrandom, getentropy or BCryptGenRandom; under
 * wine too) and two draws differ. */
TEST(entropy_comes_from_the_os) {
    bool from_os = false;
    int salt = 0;
    uint64_t x = ark__entropy64(&salt, &from_os);
    CHECK(from_os);
    uint64_t y = ark__entropy64(&salt, &from_os);
    CHECK(from_os);
    CHECK(x != y);
}

/* Reserve, commit, release (mmap on POSIX, VirtualAlloc on Windows): a
 * large reservation costs nothing until committed, committed pages read
 * as zero, and committing again keeps their contents. */
TEST(vmem_reserve_commit_release) {
    size_t page = ark__vmem_page_size();
#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
    CHECK(page != 0);
#endif
    if (page == 0) {
        return;
    }
    CHECK_EQ(page & (page - 1), 0);
    /* 16 GiB of address space (256 MiB on 32-bit targets) */
    size_t bytes = (size_t)1 << (sizeof(size_t) > 4 ? 34 : 28);
    unsigned char *base = ark__vmem_reserve(bytes);
    CHECK(base != NULL);
    size_t far = bytes / 2;
    CHECK_EQ(ark__vmem_commit(base, page), 0);
    CHECK_EQ(ark__vmem_commit(base + far, 2 * page), 0);
    for (size_t i = 0; i < page; i++) {
        CHECK_EQ(base[i] | base[far + i] | base[far + page + i], 0);
    }
    base[0] = 1;
    base[far + 2 * page - 1] = 2;
    CHECK_EQ(ark__vmem_commit(base, 2 * page), 0);
    CHECK_EQ(base[0], 1);
    CHECK_EQ(base[page], 0);
    CHECK_EQ(base[far + 2 * page - 1], 2);
    ark__vmem_hint_huge(base, 2 * page);
    ark__vmem_release(base, bytes);
}

#if defined(__linux__)
#include <stdio.h>
#include <stdlib.h>

/* Whether the mapping holding addr carries VmFlags flag in
 * /proc/self/smaps: 1 yes, 0 no, -1 unknown (no smaps, no such map). */
static int vma_has_flag(uintptr_t addr, const char *flag) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) {
        return -1;
    }
    char line[512];
    int inside = 0, found = -1;
    while (found < 0 && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ':') &&
            line[0] != 'V') {
            inside = addr >= lo && addr < hi;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            found = strstr(line, flag) != NULL;
        }
    }
    fclose(f);
    return found;
}

/* A caller's allocator: aligned_alloc, the size rounded up to align. */
static void *plain_alloc(void *ctx, size_t size, size_t align) {
    (void)ctx;
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

static void plain_free(void *ctx, void *p, size_t size) {
    (void)ctx;
    (void)size;
    free(p);
}

#endif

/* ark__alloc_table: the default allocator's large blocks are aligned to
 * huge pages and ask for them over their whole size (VmFlags "hg"); a
 * caller's allocator's never do, nor blocks under 4 MiB. Linux only;
 * skipped where the kernel has no THP. */
TEST(large_default_tables_ask_for_huge_pages) {
#if defined(__linux__)
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (thp == NULL) {
        return;
    }
    fclose(thp);
    const size_t huge = ark__vmem_huge_size(), size = 8 * huge;
    CHECK_EQ(huge, (size_t)2 << 20);
    ark_allocator def, mine = {plain_alloc, plain_free, NULL};
    CHECK_EQ(ark__allocator_init(&def, NULL), ARK_OK);
    ark_allocator *both[2] = {&def, &mine};
    for (int i = 0; i < 2; i++) {
        char *big = ark__alloc_table(both[i], size, 64);
        char *little = ark__alloc_table(both[i], huge, 64);
        CHECK(big != NULL && little != NULL);
        CHECK_EQ((uintptr_t)big % 64, 0);
        if (i == 0) {
            CHECK_EQ((uintptr_t)big % huge, 0);
        }
        int first = vma_has_flag((uintptr_t)big, " hg");
        if (first >= 0) {
            CHECK_EQ(first, i == 0);
            CHECK_EQ(vma_has_flag((uintptr_t)big + size - 1, " hg"), i == 0);
            CHECK_EQ(vma_has_flag((uintptr_t)little + huge / 2, " hg"), 0);
        }
        memset(big, 1, size); /* the whole block is usable */
        ark__free(both[i], big, size);
        ark__free(both[i], little, huge);
    }
#endif
}
