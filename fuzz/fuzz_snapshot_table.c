/* SPDX-License-Identifier: MIT */
/*
 * fuzz_snapshot_table.c - ark_table_load on arbitrary bytes (see
 * fuzz_snapshot.h for the input format).
 */
#include "ark/table.h"
#include "fuzz_snapshot.h"
#include "table_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const size_t snap_sizes[2][3] = {{4, 16, 8}, {1, 2, 0}};

/* The configs the seed corpus was saved with (fuzz/seed_snapshot.c). */
static ark_table_config snap_table_config(unsigned which) {
    ark_table_config cfg = {.column_sizes = snap_sizes[0],
                            .ncolumns = 3,
                            .index_bits = 10,
                            .gen_bits = 3};
    if (which == 1) {
        cfg.column_sizes = snap_sizes[1];
        cfg.ncolumns = 2;
        cfg.index_bits = 6;
        cfg.gen_bits = 1;
        cfg.tag_bits = 4;
        cfg.tag = 9;
    } else if (which == 2) { /* an index range */
        cfg.index_min = 50;
        cfg.index_max = 400;
    }
    return cfg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    unsigned which = size > 0 ? (data[0] >> 1) & 3 : 0;
    which = which == 3 ? 0 : which;
    ark_table_config cfg = snap_table_config(which);
    snap_mem m =
        snap_input(data, size, ARK__SNAP_HEADER_BYTES + 8 * cfg.ncolumns);
    if (m.data == NULL) {
        return 0;
    }
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    cfg.allocator = &fa.base;
    if (data[0] & 8) {
        snap_arm(&fa, data[0]);
    }
    ark_reader r = {snap_mem_read, &m};
    ark_table *t = NULL;
    ark_status st = ark_table_load(&t, &cfg, &r);
    fa.fail_next = 0;
    if (st != ARK_OK) {
        FUZZ_REQUIRE(fa.live == 0 && t == NULL);
        free(m.data);
        return 0;
    }
    FUZZ_REQUIRE(ark__table_validate(t, false) == ARK_OK);
    snap_mem out = {NULL, 0, 0, 0};
    ark_writer w = {snap_mem_write, &out};
    FUZZ_REQUIRE(ark_table_save(t, &w) == ARK_OK);
    if (snap_version(&m) == ARK__SNAP_VERSION) {
        FUZZ_REQUIRE(out.len == m.pos && memcmp(out.data, m.data, m.pos) == 0);
    } else {
        /* Version 2 in, version 3 out: that saves back unchanged. */
        ark_table *v = NULL;
        ark_reader rv = {snap_mem_read, &out};
        FUZZ_REQUIRE(ark_table_load(&v, &cfg, &rv) == ARK_OK);
        snap_mem again = {NULL, 0, 0, 0};
        ark_writer wa = {snap_mem_write, &again};
        FUZZ_REQUIRE(ark_table_save(v, &wa) == ARK_OK);
        FUZZ_REQUIRE(again.len == out.len &&
                     memcmp(again.data, out.data, out.len) == 0);
        ark_table_destroy(v);
        free(again.data);
        out.pos = 0;
    }
    ark_table *q = NULL;
    ark_reader r2 = {snap_mem_read, &out};
    FUZZ_REQUIRE(ark_table_load(&q, &cfg, &r2) == ARK_OK);
    for (int k = 0; k < 100; k++) {
        ark_handle ht = 0, hq = 0;
        size_t rt = 0, rq = 0;
        ark_status st1 = ark_table_insert(t, &ht, &rt);
        ark_status st2 = ark_table_insert(q, &hq, &rq);
        FUZZ_REQUIRE(st1 == st2 && ht == hq && rt == rq);
        if (st1 == ARK_OK && (k % 3) != 0) {
            FUZZ_REQUIRE(ark_table_remove(t, ht) == ARK_OK);
            FUZZ_REQUIRE(ark_table_remove(q, hq) == ARK_OK);
        }
    }
    FUZZ_REQUIRE(ark_table_flush(t) == ark_table_flush(q));
    FUZZ_REQUIRE(ark__table_validate(t, false) == ARK_OK);
    ark_table_destroy(t);
    ark_table_destroy(q);
    FUZZ_REQUIRE(fa.live == 0);
    free(out.data);
    free(m.data);
    return 0;
}
