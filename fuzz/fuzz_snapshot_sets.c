/* SPDX-License-Identifier: MIT */
/*
 * fuzz_snapshot_sets.c - ark_idset_load and ark_idmap_load on arbitrary
 * bytes. The first byte is flags (see fuzz_snapshot.h: bit 0 recomputes
 * both checksums, bits 3-7 fail an allocation); bit 1 picks the loader:
 * 0 the id set, 1 the id map. A loaded container must be valid: a set's
 * ids strictly increasing and saved again to the same bytes; a map saved
 * and loaded again to the same contents.
 */
#include "ark/idmap.h"
#include "ark/idset.h"
#include "fuzz_snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_set(ark_idset *s, const snap_mem *in) {
    for (size_t i = 1; i < ark_idset_count(s); i++) {
        FUZZ_REQUIRE(ark_idset_at(s, i - 1) < ark_idset_at(s, i));
    }
    /* One encoding per set: saving gives back the bytes read (a version
     * 2 snapshot saves as version 3, which then saves back unchanged). */
    snap_mem out = {NULL, 0, 0, 0};
    ark_writer w = {snap_mem_write, &out};
    FUZZ_REQUIRE(ark_idset_save(s, &w) == ARK_OK);
    if (snap_version(in) == ARK__SNAP_VERSION) {
        FUZZ_REQUIRE(out.len == in->pos &&
                     memcmp(out.data, in->data, in->pos) == 0);
    } else {
        ark_idset *v = NULL;
        ark_reader r = {snap_mem_read, &out};
        FUZZ_REQUIRE(ark_idset_load(&v, NULL, &r) == ARK_OK);
        snap_mem again = {NULL, 0, 0, 0};
        ark_writer wa = {snap_mem_write, &again};
        FUZZ_REQUIRE(ark_idset_save(v, &wa) == ARK_OK);
        FUZZ_REQUIRE(again.len == out.len &&
                     memcmp(again.data, out.data, out.len) == 0);
        ark_idset_destroy(v);
        free(again.data);
    }
    free(out.data);
}

static void check_map(ark_idmap *m) {
    snap_mem out = {NULL, 0, 0, 0};
    ark_writer w = {snap_mem_write, &out};
    FUZZ_REQUIRE(ark_idmap_save(m, &w) == ARK_OK);
    ark_reader r = {snap_mem_read, &out};
    ark_idmap *q = NULL;
    FUZZ_REQUIRE(ark_idmap_load(&q, NULL, &r) == ARK_OK);
    FUZZ_REQUIRE(ark_idmap_count(q) == ark_idmap_count(m));
    for (ark_idmap_iter it = ark_idmap_iter_begin(m); ark_idmap_iter_valid(&it);
         ark_idmap_iter_next(&it)) {
        uint64_t v;
        FUZZ_REQUIRE(ark_idmap_get(q, it.key, &v) && v == it.value);
    }
    ark_idmap_destroy(q);
    free(out.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    snap_mem m = snap_input(data, size, ARK__SNAP_HEADER_BYTES);
    if (m.data == NULL) {
        return 0;
    }
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    if (data[0] & 8) {
        snap_arm(&fa, data[0]);
    }
    ark_reader r = {snap_mem_read, &m};
    ark_status st;
    if (data[0] & 2) {
        ark_idmap *mp = NULL;
        st = ark_idmap_load(&mp, &fa.base, &r);
        fa.fail_next = 0;
        FUZZ_REQUIRE((st == ARK_OK) == (mp != NULL));
        if (mp != NULL) {
            check_map(mp);
            ark_idmap_destroy(mp);
        }
    } else {
        ark_idset *s = NULL;
        st = ark_idset_load(&s, &fa.base, &r);
        fa.fail_next = 0;
        FUZZ_REQUIRE((st == ARK_OK) == (s != NULL));
        if (s != NULL) {
            check_set(s, &m);
            ark_idset_destroy(s);
        }
    }
    FUZZ_REQUIRE(st == ARK_OK || st == ARK_ECORRUPT || st == ARK_ENOMEM);
    FUZZ_REQUIRE(fa.live == 0);
    free(m.data);
    return 0;
}
