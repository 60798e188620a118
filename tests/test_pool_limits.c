/* SPDX-License-Identifier: MIT */
/*
 * test_pool_limits.c - what a pool asks of the machine: address space per
 * pool, page sizes, element limits.
 */
#include "harness.h"
#include "pool_internal.h"

#include "ark/pool.h"

#include <stdlib.h>

/* A game has a pool per object type and per component: thousands of
 * default pools must all get the reserved (fast) layout. Each reserves a
 * bounded range (ARK_POOL_DEFAULT_RESERVE_BYTES), so 10,000 need about
 * 10 TiB of the 128 TiB of address space. Under valgrind (which grants
 * only small reservations) the count is scaled down and a pool may fall
 * back to allocator pages; it must still work. */
TEST(thousands_of_default_pools_keep_the_reserved_layout) {
    const uint64_t n = harness_scaled(10000);
    const bool full_scale = n == 10000;
    ark_pool **pools = calloc(n, sizeof *pools);
    CHECK(pools != NULL);
    uint64_t reserved = 0;
    for (uint64_t k = 0; k < n; k++) {
        ark_pool_config cfg = {.elem_size = 16};
        CHECK_OK(ark_pool_create(&pools[k], &cfg));
        ark_handle h;
        uint64_t v[2] = {k, ~k};
        CHECK_OK(ark_pool_insert(pools[k], v, &h));
        const uint64_t *got = ark_pool_get(pools[k], h);
        CHECK(got != NULL && got[0] == k && got[1] == ~k);
        reserved += ark__pool_reserved(pools[k]);
    }
    if (full_scale) {
        CHECK_EQ(reserved, n);
    }
    for (uint64_t k = 0; k < n; k++) {
        ark_pool_destroy(pools[k]);
    }
    free(pools);
}

/* Largest single request an allocator saw. */
typedef struct peak_allocator {
    test_allocator t;
    size_t peak;
} peak_allocator;

static void *peak_alloc(void *ctx, size_t size, size_t align) {
    peak_allocator *p = ctx;
    if (size > p->peak) {
        p->peak = size;
    }
    return p->t.base.alloc(&p->t, size, align);
}

static void peak_free(void *ctx, void *ptr, size_t size) {
    peak_allocator *p = ctx;
    p->t.base.free(&p->t, ptr, size);
}

/* With a custom allocator, pages hold about 256 KiB of slots (64 slots at
 * least): one 64 KiB element must not make the pool ask for a 256 MiB
 * page. */
TEST(pages_follow_the_element_size) {
    static const size_t sizes[] = {1, 16, 4096, ARK_POOL_MAX_ELEM_SIZE};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        peak_allocator pa = {.peak = 0};
        test_allocator_init(&pa.t);
        ark_allocator a = {peak_alloc, peak_free, &pa};
        ark_pool_config cfg = {.elem_size = sizes[s], .allocator = &a};
        ark_pool *p;
        CHECK_OK(ark_pool_create(&p, &cfg));
        char *e = ark_pool_alloc(p, NULL);
        CHECK(e != NULL);
        e[sizes[s] - 1] = 1;
        /* 64 slots of (elem + stamp, aligned) at the most for big
         * elements; at most 4096 slots of 8 bytes for small ones. */
        size_t slot = sizes[s] + 16;
        size_t bound = 64 * slot > 320 * 1024 ? 64 * slot : 320 * 1024;
        CHECK(pa.peak <= bound);
        ark_pool_destroy(p);
        CHECK_EQ(pa.t.live_blocks, 0);
    }
}

TEST(element_limits_are_the_named_macros) {
    ark_pool *p;
    ark_pool_config ok = {.elem_size = ARK_POOL_MAX_ELEM_SIZE,
                          .elem_align = ARK_POOL_MAX_ELEM_ALIGN};
    CHECK_OK(ark_pool_create(&p, &ok));
    CHECK(ark_pool_alloc(p, NULL) != NULL);
    ark_pool_destroy(p);
    ark_pool_config big = {.elem_size = ARK_POOL_MAX_ELEM_SIZE + 1};
    CHECK_STATUS(ark_pool_create(&p, &big), ARK_EINVAL);
    ark_pool_config wide = {.elem_size = 8,
                            .elem_align = ARK_POOL_MAX_ELEM_ALIGN * 2};
    CHECK_STATUS(ark_pool_create(&p, &wide), ARK_EINVAL);
    ark_pool_config odd = {.elem_size = 8, .elem_align = 24};
    CHECK_STATUS(ark_pool_create(&p, &odd), ARK_EINVAL);
}

/* The default alignment suits any type of the element's size: the largest
 * power of two dividing it, at most alignof(max_align_t). */
TEST(default_alignment_follows_the_element_size) {
    static const size_t sizes[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 48, 100};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t low = sizes[s] & (~sizes[s] + 1);
        size_t want = low < _Alignof(max_align_t) ? low : _Alignof(max_align_t);
        ark_pool_config cfg = {.elem_size = sizes[s]};
        ark_pool *p;
        CHECK_OK(ark_pool_create(&p, &cfg));
        for (int k = 0; k < 100; k++) {
            char *e = ark_pool_alloc(p, NULL);
            CHECK(e != NULL);
            CHECK_EQ((uintptr_t)e % want, 0);
        }
        ark_pool_destroy(p);
    }
}

/* Past the reserved range a pool grows in allocator pages: addresses stay
 * put, handles stay valid, and iteration crosses the boundary. */
TEST(growth_past_the_reservation_keeps_everything) {
    ark_pool_config cfg = {.elem_size = 8, .max_elements = 100};
    ark_pool *p;
    CHECK_OK(ark_pool_create(&p, &cfg));
    enum { N = 5000 };
    ark_handle *h = malloc(N * sizeof *h);
    uint64_t **addr = malloc(N * sizeof *addr);
    CHECK(h != NULL && addr != NULL);
    for (uint64_t i = 0; i < N; i++) {
        addr[i] = ark_pool_alloc(p, &h[i]);
        CHECK(addr[i] != NULL);
        *addr[i] = i;
    }
    uint64_t seen = 0, sum = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(p); ark_pool_iter_valid(&it);
         ark_pool_iter_next(&it)) {
        seen++;
        sum += *(uint64_t *)it.elem;
        CHECK_EQ(ark_pool_handle_of(p, it.elem), it.handle);
    }
    CHECK_EQ(seen, N);
    CHECK_EQ(sum, (uint64_t)N * (N - 1) / 2);
    for (uint64_t i = 0; i < N; i++) {
        CHECK(ark_pool_get(p, h[i]) == addr[i]);
        CHECK_EQ(*addr[i], i);
    }
    CHECK_OK(ark_pool_validate(p));
    free(h);
    free(addr);
    ark_pool_destroy(p);
}
