/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.h - what the fuzz targets share: a byte reader and an
 * allocator the input can make fail.
 *
 * Each target is a libFuzzer entry point (LLVMFuzzerTestOneInput) that
 * applies the operations the input encodes both to an ark module and to a
 * simple model, and aborts (so the fuzzer reports it) when they disagree.
 * fuzz/replay.c runs the same entry point over files for ctest.
 */
#ifndef ARK_FUZZ_COMMON_H
#define ARK_FUZZ_COMMON_H

#include "ark/core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <malloc.h> /* _aligned_malloc */
#endif

typedef struct fuzz_input {
    const uint8_t *data;
    size_t size, pos;
} fuzz_input;

static inline uint8_t fuzz_u8(fuzz_input *in) {
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

static inline uint64_t fuzz_u64(fuzz_input *in) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)fuzz_u8(in) << (8 * i);
    }
    return v;
}

static inline int fuzz_done(const fuzz_input *in) {
    return in->pos >= in->size;
}

/* For the targets' own model checks: their loops and comparisons would
 * only feed libFuzzer meaningless features and dominate the run time. */
#if defined(__clang__)
#define FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_NO_COVERAGE
#endif

/* Stop with a message: the fuzzer records the input as a crash. */
#define FUZZ_REQUIRE(cond)                                                     \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: model disagrees: %s\n", __FILE__,          \
                    __LINE__, #cond);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* An allocator that fails when armed, counting live blocks for leaks. It
 * also refuses blocks above FUZZ_ALLOC_MAX, as a real allocator would run
 * out, so sizes taken from the input (reserve) cannot trip the sanitizer's
 * or libFuzzer's own allocation limits. */
#define FUZZ_ALLOC_MAX ((size_t)1 << 22)

typedef struct fuzz_alloc {
    ark_allocator base;
    int fail_next; /* fail the next allocation, then disarm */
    int fail_skip; /* armed: let this many allocations succeed first */
    long live;
} fuzz_alloc;

static inline void *fuzz_alloc_fn(void *ctx, size_t size, size_t align) {
    fuzz_alloc *f = ctx;
    if (f->fail_next) {
        if (f->fail_skip > 0) {
            f->fail_skip--;
        } else {
            f->fail_next = 0;
            return NULL;
        }
    }
    if (size > FUZZ_ALLOC_MAX) {
        return NULL;
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
#if defined(_WIN32) /* no aligned_alloc in the Windows C runtime */
    void *p = _aligned_malloc(size, align);
#else
    void *p = aligned_alloc(align, (size + align - 1) & ~(align - 1));
#endif
    if (p != NULL) {
        f->live++;
    }
    return p;
}

static inline void fuzz_free_fn(void *ctx, void *ptr, size_t size) {
    fuzz_alloc *f = ctx;
    (void)size;
    f->live--;
#if defined(_WIN32)
    _aligned_free(ptr);
#else
    free(ptr);
#endif
}

static inline void fuzz_alloc_init(fuzz_alloc *f) {
    f->base.alloc = fuzz_alloc_fn;
    f->base.free = fuzz_free_fn;
    f->base.ctx = f;
    f->fail_next = 0;
    f->fail_skip = 0;
    f->live = 0;
}

#endif /* ARK_FUZZ_COMMON_H */
