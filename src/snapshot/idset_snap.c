/* SPDX-License-Identifier: MIT */
/*
 * idset_snap.c - ark_idset_save and ark_idset_load (docs/snapshot.md):
 * the ids, never the memory layout.
 *
 * Id set (kind 3): live = the number of ids, a = the body's bytes. The
 * body is, for each id in ascending order, the gap id - prev - 1 (prev
 * starts at -1) as an unsigned LEB128 varint: one byte per id when ids
 * are dense. Every id costs at least one byte of input, so a load never
 * allocates more than a constant times the input it read. Every other
 * descriptor field is 0 and checked to be so: one encoding per content.
 */
#include "ark/idset.h"

#include "snapshot/snapshot.h"

#include <assert.h>

static size_t varint_bytes(uint32_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_varint(ark__snap_out *o, uint32_t v) {
    unsigned char b[5];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (unsigned char)v;
    ark__snap_put(o, b, n);
}

/* Read one canonical varint of at most 32 bits; false if malformed. */
static bool get_varint(ark__snap_in *in, uint32_t *v) {
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        unsigned char b;
        ark__snap_get(in, &b, 1);
        x |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            /* no overlong form, nothing past 32 bits */
            bool ok = (b != 0 || shift == 0) && x <= UINT32_MAX;
            *v = (uint32_t)x;
            return ok && in->st == ARK_OK;
        }
    }
    return false;
}

ark_status ark_idset_save(const ark_idset *s, const ark_writer *w) {
    assert(s != NULL && w != NULL);
    ark__snap_header hd;
    memset(&hd, 0, sizeof hd);
    hd.kind = ARK__SNAP_IDSET;
    hd.live = ark_idset_count(s);
    int64_t prev = -1;
    for (ark_idset_iter it = ark_idset_iter_begin(s, 0);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        hd.a += varint_bytes((uint32_t)(it.id - prev - 1));
        prev = it.id;
    }
    ark__snap_out o;
    if (ark__snap_out_init(&o, w) != ARK_OK) {
        return ARK_EINVAL;
    }
    ark__snap_write_header(&o, &hd, NULL, 0);
    prev = -1;
    for (ark_idset_iter it = ark_idset_iter_begin(s, 0);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        put_varint(&o, (uint32_t)(it.id - prev - 1));
        prev = it.id;
    }
    return ark__snap_write_trailer(&o);
}

/* Decode the body into the empty set s: exactly hd->live ids in exactly
 * hd->a bytes, each above the last and at most UINT32_MAX. */
static ark_status idset_load_body(void *c, ark__snap_in *in,
                                  const ark__snap_header *hd) {
    ark_idset *s = c;
    if (hd->live > hd->a || hd->live > (uint64_t)UINT32_MAX + 1) {
        return ARK_ECORRUPT; /* every id takes at least one byte */
    }
    ark__snap_in_expect(in, hd->a);
    uint64_t next = 0;
    for (uint64_t k = 0; k < hd->live; k++) {
        uint32_t gap;
        if (!get_varint(in, &gap)) {
            return in->st != ARK_OK ? in->st : ARK_ECORRUPT;
        }
        uint64_t id = next + gap;
        if (id > UINT32_MAX) {
            return ARK_ECORRUPT;
        }
        ark_status st = ark_idset_insert(s, (uint32_t)id);
        if (st != ARK_OK) {
            return st == ARK_EEXIST ? ARK_ECORRUPT : st;
        }
        next = id + 1;
    }
    /* Every announced body byte is consumed, no more. */
    return in->remaining == 0 && in->pos == in->len ? ARK_OK : ARK_ECORRUPT;
}

static ark_status idset_create(void **c, const ark_allocator *a) {
    ark_idset *x = NULL;
    ark_status st = ark_idset_create(&x, a);
    *c = x;
    return st;
}

static void idset_destroy(void *c) { ark_idset_destroy(c); }

ark_status ark_idset_load(ark_idset **out, const ark_allocator *a,
                          const ark_reader *r) {
    assert(out != NULL && r != NULL);
    static const ark__snap_set_kind k = {ARK__SNAP_IDSET, true, idset_create,
                                         idset_load_body, idset_destroy};
    void *c;
    ark_status st = ark__snap_load_set(&c, &k, a, r);
    if (st == ARK_OK) {
        *out = c;
    }
    return st;
}
