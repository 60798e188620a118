/* SPDX-License-Identifier: MIT */
/*
 * pool_snap.c - ark_pool_save and ark_pool_load: the descriptor, then the
 * handle engine's sections with each element as the payload of its slot
 * (docs/snapshot.md).
 */
#include "pool_internal.h"
#include "snapshot/snapshot.h"

#include <assert.h>
#include <string.h>

ark_status ark_pool_save(const ark_pool *p, const ark_writer *w) {
    assert(p != NULL && w != NULL);
    ark__snap_header hd;
    memset(&hd, 0, sizeof hd);
    ark_status st = ark__slots_save_header(&p->s, &hd);
    if (st != ARK_OK) {
        return st;
    }
    hd.kind = p->s.keyed ? ARK__SNAP_KEYED_POOL : ARK__SNAP_POOL;
    hd.a = p->view.elem_size;
    ark__slots_io io = {p->view.elem_size};
    ark__snap_out o;
    if (ark__snap_out_init(&o, w) != ARK_OK) {
        return ARK_EINVAL;
    }
    ark__snap_write_header(&o, &hd, NULL, 0);
    st = ark__slots_save(&p->s, &o, &io, &hd);
    ark_status wst = ark__snap_write_trailer(&o);
    return st != ARK_OK ? st : wst;
}

/* A keyed pool's live bits, which start clear (its slots are vacant
 * until an element arrives): set those of the live slots loaded. */
static void link_loaded(ark_pool *p) {
    const ark__slots_view *v = &p->view.slots;
    for (uint64_t i = 1; i < v->issued; i++) {
        if (*ark__slots_stamp(ark__slots_at(v, i)) != 0) {
            ark__pool_link(&p->view, i);
        }
    }
}

/* The body of ark_pool_load once p exists. */
static ark_status pool_load_into(ark_pool *p, const ark_pool_config *cfg,
                                 ark__snap_in *in, const ark__snap_header *hd) {
    if (hd->b != 0) {
        return ARK_ECORRUPT; /* unused by pools: one encoding per pool */
    }
    if (hd->a != p->view.elem_size) {
        return ARK_EINVAL;
    }
    ark_status st = ark__slots_load_header(&p->s, hd, cfg->seal_key != 0);
    if (st != ARK_OK) {
        return st;
    }
    ark__slots_io io = {p->view.elem_size};
    ark__snap_in_expect(in, ark__slots_snap_bytes(hd, p->view.elem_size));
    st = ark__slots_load(&p->s, in, hd, &io);
    if (st == ARK_OK) {
        st = ark__snap_read_trailer(in);
    }
    if (st == ARK_OK && p->s.keyed) {
        link_loaded(p);
    }
#ifndef NDEBUG
    /* The load checked every value on the way in; the full validation
     * (a second pass over every slot) confirms it in debug builds. */
    if (st == ARK_OK && ark_pool_validate(p) != ARK_OK) {
        st = ARK_ECORRUPT;
    }
#endif
    return st;
}

ark_status ark_pool_load(ark_pool **out, const ark_pool_config *cfg,
                         const ark_reader *r) {
    assert(out != NULL && cfg != NULL && r != NULL);
    ark__snap_in in;
    ark__snap_in_init(&in, r);
    ark__snap_header hd;
    bool mismatch;
    ark_status st = ark__snap_read_header(
        &in, &hd, cfg->keys != NULL ? ARK__SNAP_KEYED_POOL : ARK__SNAP_POOL,
        NULL, 0, &mismatch);
    if (st == ARK_OK && mismatch) {
        st = ARK_EINVAL; /* keyed and plain pools do not mix */
    }
    ark_pool *p = NULL;
    if (st == ARK_OK) {
        st = ark_pool_create(&p, cfg);
    }
    if (st == ARK_OK) {
        st = pool_load_into(p, cfg, &in, &hd);
    }
    if (st != ARK_OK) {
        ark_pool_destroy(p);
        return st;
    }
    *out = p;
    return ARK_OK;
}
