/* SPDX-License-Identifier: MIT */
/*
 * fuzz_snapshot_pool.c - ark_pool_load on arbitrary bytes (see
 * fuzz_snapshot.h for the input format).
 */
#include "ark/pool.h"
#include "fuzz_snapshot.h"
#include "pool_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The configs the seed corpus was saved with (fuzz/seed_snapshot.c). */
static ark_pool_config snap_pool_config(unsigned which) {
    ark_pool_config cfg = {.elem_size = 16, .index_bits = 10, .gen_bits = 3};
    if (which == 1) {
        cfg.elem_size = 4;
        cfg.index_bits = 24;
        cfg.gen_bits = 0;
        cfg.tag_bits = 8;
        cfg.tag = 3;
    } else if (which == 2) {
        cfg.elem_size = 24;
        cfg.index_bits = 6;
        cfg.gen_bits = 1;
    } else if (which == 3) { /* an index range */
        cfg.index_min = 100;
        cfg.index_max = 600;
    }
    return cfg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    snap_mem m = snap_input(data, size, ARK__SNAP_HEADER_BYTES);
    if (m.data == NULL) {
        return 0;
    }
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    ark_pool_config cfg = snap_pool_config((data[0] >> 1) & 3);
    cfg.allocator = &fa.base;
    if (data[0] & 8) {
        snap_arm(&fa, data[0]);
    }
    ark_reader r = {snap_mem_read, &m};
    ark_pool *p = NULL;
    ark_status st = ark_pool_load(&p, &cfg, &r);
    fa.fail_next = 0;
    if (st != ARK_OK) {
        FUZZ_REQUIRE(fa.live == 0 && p == NULL);
        free(m.data);
        return 0;
    }
    FUZZ_REQUIRE(ark_pool_validate(p) == ARK_OK);
    /* Save it and load that: the same bytes again. */
    snap_mem out = {NULL, 0, 0, 0};
    ark_writer w = {snap_mem_write, &out};
    FUZZ_REQUIRE(ark_pool_save(p, &w) == ARK_OK);
    if (snap_version(&m) == ARK__SNAP_VERSION) {
        FUZZ_REQUIRE(out.len == m.pos && memcmp(out.data, m.data, m.pos) == 0);
    } else {
        /* Version 2 in, version 3 out: that saves back unchanged. */
        ark_pool *v = NULL;
        ark_reader rv = {snap_mem_read, &out};
        FUZZ_REQUIRE(ark_pool_load(&v, &cfg, &rv) == ARK_OK);
        snap_mem again = {NULL, 0, 0, 0};
        ark_writer wa = {snap_mem_write, &again};
        FUZZ_REQUIRE(ark_pool_save(v, &wa) == ARK_OK);
        FUZZ_REQUIRE(again.len == out.len &&
                     memcmp(again.data, out.data, out.len) == 0);
        ark_pool_destroy(v);
        free(again.data);
        out.pos = 0;
    }
    ark_pool *q = NULL;
    ark_reader r2 = {snap_mem_read, &out};
    FUZZ_REQUIRE(ark_pool_load(&q, &cfg, &r2) == ARK_OK);
    /* Both keep working alike. */
    uint8_t elem[24] = {0};
    for (int k = 0; k < 100; k++) {
        ark_handle hp = 0, hq = 0;
        ark_status sp = ark_pool_insert(p, elem, &hp);
        ark_status sq = ark_pool_insert(q, elem, &hq);
        FUZZ_REQUIRE(sp == sq && hp == hq);
        if (sp == ARK_OK && (k % 3) != 0) {
            FUZZ_REQUIRE(ark_pool_remove(p, hp) == ARK_OK);
            FUZZ_REQUIRE(ark_pool_remove(q, hq) == ARK_OK);
        }
    }
    FUZZ_REQUIRE(ark_pool_flush(p) == ark_pool_flush(q));
    FUZZ_REQUIRE(ark_pool_validate(p) == ARK_OK);
    ark_pool_destroy(p);
    ark_pool_destroy(q);
    FUZZ_REQUIRE(fa.live == 0);
    free(out.data);
    free(m.data);
    return 0;
}
