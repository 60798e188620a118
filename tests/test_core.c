/*
 * test_core.c - status strings and the test allocator itself.
 */
#include "ark/ark.h"
#include "harness.h"

#include <string.h>

TEST(strerror_covers_every_status) {
    const ark_status all[] = {ARK_OK,        ARK_ENOMEM,  ARK_EFULL,
                              ARK_ESTALE,    ARK_ERANGE,  ARK_ENULL,
                              ARK_EFOREIGN,  ARK_EINVAL,  ARK_EEXIST,
                              ARK_ENOTFOUND, ARK_ECORRUPT};
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
