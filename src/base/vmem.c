/* SPDX-License-Identifier: MIT */
/*
 * vmem.c - reserve / commit / release on POSIX (mmap + mprotect) and
 * Windows (VirtualAlloc); elsewhere every call reports that there is no
 * virtual memory, and callers use their allocator.
 *
 * POSIX reservations are PROT_NONE private mappings: they cost address
 * space but no commit charge. mprotect making pages writable charges
 * them, so the kernel's overcommit accounting can refuse a commit it
 * cannot back (ENOMEM at once, rather than the OOM killer when the pages
 * are touched). MAP_NORESERVE would skip that charge: it is not used.
 * Fresh anonymous pages read as zero and take memory only when touched.
 */
#if !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__))
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS under -std=c11 (glibc) */
#define _DARWIN_C_SOURCE 1
#define ARK_VMEM_POSIX 1
#include <sys/mman.h>
#include <unistd.h>
#elif defined(_WIN32)
#define ARK_VMEM_WINDOWS 1
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

#include "base/vmem.h"

#if defined(ARK_VMEM_POSIX)

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

size_t ark__vmem_page_size(void) {
    long n = sysconf(_SC_PAGESIZE);
    if (n <= 0 || (n & (n - 1)) != 0) {
        return 0;
    }
    return (size_t)n;
}

void *ark__vmem_reserve(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int ark__vmem_commit(void *addr, size_t bytes) {
    return mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0 ? 0 : -1;
}

void ark__vmem_hint_huge(void *addr, size_t bytes) {
#ifdef MADV_HUGEPAGE
    (void)madvise(addr, bytes, MADV_HUGEPAGE);
#else
    (void)addr;
    (void)bytes;
#endif
}

size_t ark__vmem_huge_size(void) {
#if defined(MADV_HUGEPAGE) && defined(__linux__)
    return (size_t)2 << 20;
#else
    return 0;
#endif
}

void ark__vmem_prefault(void *addr, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    (void)madvise(addr, bytes, MADV_POPULATE_WRITE);
#else
    (void)addr;
    (void)bytes;
#endif
}

void ark__vmem_release(void *addr, size_t bytes) { munmap(addr, bytes); }

#elif defined(ARK_VMEM_WINDOWS)

size_t ark__vmem_page_size(void) {
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return (size_t)si.dwPageSize;
}

void *ark__vmem_reserve(size_t bytes) {
    return VirtualAlloc(NULL, bytes, MEM_RESERVE, PAGE_NOACCESS);
}

int ark__vmem_commit(void *addr, size_t bytes) {
    return VirtualAlloc(addr, bytes, MEM_COMMIT, PAGE_READWRITE) != NULL ? 0
                                                                         : -1;
}

void ark__vmem_release(void *addr, size_t bytes) {
    (void)bytes;
    VirtualFree(addr, 0, MEM_RELEASE);
}

#else

size_t ark__vmem_page_size(void) { return 0; }

void *ark__vmem_reserve(size_t bytes) {
    (void)bytes;
    return NULL;
}

int ark__vmem_commit(void *addr, size_t bytes) {
    (void)addr;
    (void)bytes;
    return -1;
}

void ark__vmem_release(void *addr, size_t bytes) {
    (void)addr;
    (void)bytes;
}

#endif

#if !defined(ARK_VMEM_POSIX)
/* No huge-page hint and no prefault outside POSIX: both are hints. */
void ark__vmem_hint_huge(void *addr, size_t bytes) {
    (void)addr;
    (void)bytes;
}

size_t ark__vmem_huge_size(void) { return 0; }

void ark__vmem_prefault(void *addr, size_t bytes) {
    (void)addr;
    (void)bytes;
}
#endif
