/* SPDX-License-Identifier: MIT */
/*
 * test_idmap_swar.c - the whole idmap suite again on the portable 8-byte
 * SWAR group code: idmap.c is compiled into this test with
 * ARK_IDMAP_NO_SIMD, so its definitions replace the library's SSE2 ones.
 * Only the case below is a ctest entry; it runs every idmap case.
 */
#define ARK_IDMAP_NO_SIMD 1

#include "../src/idmap.c"
#include "test_idmap.c"

TEST(swar_suite) {
    CHECK(ark__idmap_match(
              ark__idmap_load(
                  (const uint8_t *)"\1\0\1\0\0\0\0\0\0\0\0\0\0\0\0\1"),
              0x01010101u) == 0x8005);
    CHECK(ark__idmap_match(
              ark__idmap_load(
                  (const uint8_t *)"\1\0\1\0\0\0\0\0\0\0\0\0\0\0\0\1"),
              0) == 0x7ffa);
    test_tag_words();
    test_take_past_home();
    test_create_destroy();
    test_put_get_overwrite();
    test_get_ptr();
    test_find();
    test_special_keys();
    test_remove_and_count();
    test_clear_keeps_table();
    test_reserve_prevents_allocation();
    test_iteration_visits_each_once();
    test_differential_vs_model();
    test_colliding_keys_reseed();
    test_colliding_keys_known_to_attacker();
    test_alloc_failure_during_growth();
    test_churn_keeps_table_small();
    test_seeds();
    test_insert_take();
    test_size_limits();
    test_growth_in_place();
}
