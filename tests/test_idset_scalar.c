/* SPDX-License-Identifier: MIT */
/*
 * test_idset_scalar.c - the set algebra cases again on the portable
 * scalar merge: algebra.c is compiled into this test with
 * ARK_IDSET_NO_SIMD, so its definitions replace the library's SSE2 ones
 * (as on a target without SSE2). Only the case below is a ctest entry; it
 * runs every set algebra case.
 */
#define ARK_IDSET_NO_SIMD 1

#include "../src/idset/algebra.c"

/* test_idset.c's model names its operations as algebra.c does. */
#define OP_AND MODEL_OP_AND
#define OP_OR MODEL_OP_OR
#define OP_ANDNOT MODEL_OP_ANDNOT
#include "test_idset.c"

TEST(scalar_algebra_suite) {
#ifdef ALGEBRA_SSE2
    CHECK(!"algebra.c was built with SSE2");
#endif
    test_set_algebra_dense_against_a_merge_model();
    test_set_algebra_sparse_against_a_merge_model();
    test_set_algebra_mixed_against_a_merge_model();
    test_set_algebra_of_empty_sets();
    test_set_algebra_allocation_failure_for_every_k();
}
