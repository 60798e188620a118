/*
 * vmem.c - address-space reservation for containers that grow in place.
 *
 * POSIX: reserve with PROT_NONE (no commit charge, no RSS), commit with
 * mprotect(PROT_READ | PROT_WRITE). Windows: MEM_RESERVE then MEM_COMMIT.
 * Elsewhere ark__vm_reserve returns NULL and callers use their allocator.
 */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE under -std=c11 */
#endif

#include "vmem_internal.h"

#include <stdint.h>

#if defined(_WIN32)
#include <windows.h>

void *ark__vm_reserve(size_t bytes) {
    return VirtualAlloc(NULL, bytes, MEM_RESERVE, PAGE_NOACCESS);
}

bool ark__vm_commit(void *addr, size_t bytes) {
    return VirtualAlloc(addr, bytes, MEM_COMMIT, PAGE_READWRITE) != NULL;
}

void ark__vm_release(void *addr, size_t bytes) {
    (void)bytes;
    VirtualFree(addr, 0, MEM_RELEASE);
}

#elif defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif

static size_t os_page(void) {
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? (size_t)n : 4096;
}

void *ark__vm_reserve(size_t bytes) {
    size_t page = os_page();
    if (bytes == 0 || bytes > SIZE_MAX - page) {
        return NULL;
    }
    bytes = (bytes + page - 1) & ~(page - 1);
    void *p = mmap(NULL, bytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

bool ark__vm_commit(void *addr, size_t bytes) {
    size_t page = os_page();
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(page - 1);
    uintptr_t end =
        ((uintptr_t)addr + bytes + page - 1) & ~(uintptr_t)(page - 1);
    return mprotect((void *)start, end - start, PROT_READ | PROT_WRITE) == 0;
}

void ark__vm_release(void *addr, size_t bytes) {
    size_t page = os_page();
    munmap(addr, (bytes + page - 1) & ~(page - 1));
}

#else

void *ark__vm_reserve(size_t bytes) {
    (void)bytes;
    return NULL;
}

bool ark__vm_commit(void *addr, size_t bytes) {
    (void)addr;
    (void)bytes;
    return false;
}

void ark__vm_release(void *addr, size_t bytes) {
    (void)addr;
    (void)bytes;
}

#endif
