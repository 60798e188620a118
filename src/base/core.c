/* SPDX-License-Identifier: MIT */
/*
 * core.c - status strings, the default allocator, handle layouts.
 */
#include "base/base.h"
#include "base/vmem.h"

#include <stdlib.h>
#if defined(_WIN32)
#include <malloc.h> /* _aligned_malloc */
#endif

const char *ark_strerror(ark_status s) {
    switch (s) {
#define ARK_STATUS_CASE(name, text)                                            \
    case name:                                                                 \
        return text;
        ARK_STATUS_MAP(ARK_STATUS_CASE)
#undef ARK_STATUS_CASE
    }
    return "unknown status";
}

#if defined(_WIN32)
/* The Windows C runtime has no aligned_alloc, and a block from
 * _aligned_malloc must go back to _aligned_free, not free. libc_free is
 * told the size but not the alignment, so on Windows every block of the
 * default allocator comes from _aligned_malloc, small ones included. */
static void *libc_alloc(void *ctx, size_t size, size_t align) {
    (void)ctx;
    if (size == 0) {
        size = 1;
    }
    if (align < _Alignof(max_align_t)) {
        align = _Alignof(max_align_t);
    }
    return _aligned_malloc(size, align);
}

static void libc_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    _aligned_free(ptr);
}
#else
/* malloc covers alignments up to max_align_t; aligned_alloc wants the size
 * rounded up to a multiple of the alignment. */
static void *libc_alloc(void *ctx, size_t size, size_t align) {
    (void)ctx;
    if (size == 0) {
        size = 1;
    }
    if (align <= _Alignof(max_align_t)) {
        return malloc(size);
    }
    if (size > SIZE_MAX - align) {
        return NULL;
    }
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

static void libc_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    free(ptr);
}
#endif

ark_status ark__allocator_init(ark_allocator *out, const ark_allocator *a) {
    if (a == NULL) {
        out->alloc = libc_alloc;
        out->free = libc_free;
        out->ctx = NULL;
        return ARK_OK;
    }
    if (a->alloc == NULL || a->free == NULL) {
        return ARK_EINVAL;
    }
    *out = *a;
    return ARK_OK;
}

/* Linux gives malloc'd memory huge pages only in THP "always" mode; the
 * common default is "madvise". A table of hundreds of megabytes read at
 * random with 4 KiB pages spends much of each access walking page tables,
 * and faults 512 times as often while it fills (docs/idmap.md, "Huge
 * pages"). Aligned to a huge page, every page of the block can be one
 * (the alignment costs address space, not memory). Where the OS offers no
 * hint, or for a caller's allocator (its memory is its own), nothing
 * changes. */
void *ark__alloc_table(const ark_allocator *a, size_t size, size_t align) {
    size_t huge = ark__vmem_huge_size();
    if (huge == 0 || a->alloc != libc_alloc || size < 2 * huge) {
        return ark__alloc(a, size, align);
    }
    char *p = ark__alloc(a, size, align > huge ? align : huge);
    if (p != NULL) {
        ark__vmem_hint_huge(p, size & ~(huge - 1));
    }
    return p;
}

/* The one external definition of each private inline helper of
 * ark/internal/core.h that is not the handle engine's (not exported: see
 * ARK__INLINE_API). */
ARK__INLINE_API extern inline unsigned ark__ctz64(uint64_t x);
ARK__INLINE_API extern inline void ark__copy_upto64(void *dst, const void *src,
                                                    size_t n);
ARK__INLINE_API extern inline void ark__copy_word(char *dst, const char *src);
ARK__INLINE_API extern inline void ark__copy_words8(char *dst, const char *src);
ARK__INLINE_API extern inline void ark__copy_words16(char *dst,
                                                     const char *src);
ARK__INLINE_API extern inline void ark__copy_words32(char *dst,
                                                     const char *src);
ARK__INLINE_API extern inline void ark__copy_in(void *dst, const void *src,
                                                size_t n);

void *ark__grow_array(const ark_allocator *a, void *arr, size_t *cap,
                      size_t used, uint64_t want, size_t esz) {
    if (want <= *cap) {
        return arr;
    }
    uint64_t ncap;
    size_t bytes;
    if (!ark__grow_cap(*cap, want, esz, &ncap, &bytes)) {
        return NULL;
    }
    void *n = ark__alloc(a, bytes, 0);
    if (n == NULL) {
        return NULL;
    }
    if (used > 0) {
        memcpy(n, arr, used * esz);
    }
    ark__free(a, arr, *cap * esz);
    *cap = (size_t)ncap;
    return n;
}

int ark__cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}
