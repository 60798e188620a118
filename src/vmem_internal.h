/*
 * vmem_internal.h - reserve address space, commit it as a container grows.
 *
 * One small abstraction over mmap/mprotect (POSIX) and VirtualAlloc
 * (Windows). A reservation costs address space only; committed ranges are
 * readable and writable and read as zero until written.
 */
#ifndef ARK_VMEM_INTERNAL_H
#define ARK_VMEM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Return the start of a reservation of bytes (rounded up to the OS page
 * size), or NULL when the OS offers no virtual memory or refuses. */
void *ark__vm_reserve(size_t bytes);

/* Commit [addr, addr + bytes) inside a reservation, widened to OS pages.
 * Committing an already committed range is harmless. Returns false when
 * the OS refuses (out of memory). */
bool ark__vm_commit(void *addr, size_t bytes);

/* Release a whole reservation made by ark__vm_reserve(bytes). */
void ark__vm_release(void *addr, size_t bytes);

#endif /* ARK_VMEM_INTERNAL_H */
