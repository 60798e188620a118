/* SPDX-License-Identifier: MIT */
/*
 * idmap_snap.c - ark_idmap_save and ark_idmap_load (docs/snapshot.md):
 * the entries, never the memory layout.
 *
 * Id map (kind 4): live = the number of entries; the body is live pairs
 * (key, value), little-endian u64 each, in iteration order. The hash seed
 * is not saved: a loaded map draws a fresh one, so a snapshot that leaks
 * tells an attacker nothing about the map's seed, and its iteration order
 * may differ from the saved map's. Every other descriptor field is 0 and
 * checked to be so.
 */
#include "ark/idmap.h"

#include "snapshot/snapshot.h"

#include <assert.h>

ark_status ark_idmap_save(const ark_idmap *m, const ark_writer *w) {
    assert(m != NULL && w != NULL);
    ark__snap_header hd;
    memset(&hd, 0, sizeof hd);
    hd.kind = ARK__SNAP_IDMAP;
    hd.live = ark_idmap_count(m);
    ark__snap_out o;
    if (ark__snap_out_init(&o, w) != ARK_OK) {
        return ARK_EINVAL;
    }
    ark__snap_write_header(&o, &hd, NULL, 0);
    for (ark_idmap_iter it = ark_idmap_iter_begin(m); ark_idmap_iter_valid(&it);
         ark_idmap_iter_next(&it)) {
        ark__snap_put64(&o, it.key);
        ark__snap_put64(&o, it.value);
    }
    return ark__snap_write_trailer(&o);
}

/* Insert hd->live pairs into the empty map m, announcing each pair's 16
 * bytes as it is read: a huge count costs only the bytes really there. */
static ark_status idmap_load_body(void *c, ark__snap_in *in,
                                  const ark__snap_header *hd) {
    ark_idmap *m = c;
    for (uint64_t k = 0; k < hd->live; k++) {
        ark__snap_in_expect(in, 16);
        uint64_t key = ark__snap_get64(in);
        uint64_t value = ark__snap_get64(in);
        if (in->st != ARK_OK) {
            return in->st;
        }
        ark_status st = ark_idmap_insert(m, key, value);
        if (st != ARK_OK) {
            return st == ARK_EEXIST ? ARK_ECORRUPT : st;
        }
    }
    return ARK_OK;
}

static ark_status idmap_create(void **c, const ark_allocator *a) {
    ark_idmap *x = NULL;
    ark_status st = ark_idmap_create(&x, a);
    *c = x;
    return st;
}

static void idmap_destroy(void *c) { ark_idmap_destroy(c); }

ark_status ark_idmap_load(ark_idmap **out, const ark_allocator *a,
                          const ark_reader *r) {
    assert(out != NULL && r != NULL);
    static const ark__snap_set_kind k = {ARK__SNAP_IDMAP, false, idmap_create,
                                         idmap_load_body, idmap_destroy};
    void *c;
    ark_status st = ark__snap_load_set(&c, &k, a, r);
    if (st == ARK_OK) {
        *out = c;
    }
    return st;
}
