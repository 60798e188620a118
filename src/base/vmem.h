/* SPDX-License-Identifier: MIT */
/*
 * vmem_internal.h - the one small virtual-memory abstraction ark uses:
 * reserve address space, commit pages of it, release it. Never installed.
 *
 * Reserved memory is inaccessible until committed; committed memory reads
 * as zero and takes memory only as it is touched. A commit is charged
 * against the system's commit limit (Linux overcommit accounting, the
 * Windows commit charge), so one the system cannot back fails at once. On
 * a platform without virtual memory ark__vmem_page_size returns 0 and the
 * other functions fail.
 */
#ifndef ARK_VMEM_INTERNAL_H
#define ARK_VMEM_INTERNAL_H

#include <stddef.h>

/* Return the commit granularity in bytes (a power of two), or 0 when the
 * platform offers no reservation. */
size_t ark__vmem_page_size(void);

/* Reserve bytes (a multiple of the page size) of address space; NULL on
 * failure. */
void *ark__vmem_reserve(size_t bytes);

/* Make [addr, addr + bytes) readable and writable; both page multiples
 * inside a reservation. Committing committed pages keeps their contents.
 * Touches nothing. Returns 0 on success, -1 when the system refuses the
 * commit charge (or the mapping). */
int ark__vmem_commit(void *addr, size_t bytes);

/* Ask for huge pages in [addr, addr + bytes) of a reservation (Linux
 * transparent huge pages in "madvise" mode); a hint, silently ignored
 * where unsupported. Only whole aligned 2 MiB ranges of committed memory
 * can get them, so small containers keep 4 KiB pages. */
void ark__vmem_hint_huge(void *addr, size_t bytes);

/* The huge page size ark__vmem_hint_huge can obtain (2 MiB on Linux), or
 * 0 where the hint does nothing. */
size_t ark__vmem_huge_size(void);

/* Fault in committed [addr, addr + bytes) with one system call where the
 * OS offers it (Linux 5.14+ MADV_POPULATE_WRITE): a trap per page on
 * first touch costs microseconds in a virtual machine. A hint, silently
 * ignored elsewhere; the pages then count as resident. */
void ark__vmem_prefault(void *addr, size_t bytes);

/* Release a whole reservation made by ark__vmem_reserve. */
void ark__vmem_release(void *addr, size_t bytes);

#endif /* ARK_VMEM_INTERNAL_H */
