/* SPDX-License-Identifier: MIT */
/*
 * table_snap.c - ark_table_save and ark_table_load: the descriptor with the
 * column sizes, the handle engine's sections, the rows in order with
 * their slots, and each column's bytes (docs/snapshot.md).
 */
#include "snapshot/snapshot.h"
#include "table_internal.h"

#include <assert.h>
#include <string.h>

ark_status ark_table_save(const ark_table *t, const ark_writer *w) {
    assert(t != NULL && w != NULL);
    ark__snap_header hd;
    memset(&hd, 0, sizeof hd);
    ark_status st = ark__slots_save_header(&t->s, &hd);
    if (st != ARK_OK) {
        return st;
    }
    size_t rows = t->view.rows;
    hd.kind = t->s.keyed ? ARK__SNAP_KEYED_TABLE : ARK__SNAP_TABLE;
    hd.a = t->view.ncolumns;
    hd.b = rows;
    ark__slots_io io = {0};
    ark__snap_out o;
    if (ark__snap_out_init(&o, w) != ARK_OK) {
        return ARK_EINVAL;
    }
    ark__snap_write_header(&o, &hd, t->sizes, t->view.ncolumns);
    st = ark__slots_save(&t->s, &o, &io, &hd);
    for (size_t r = 0; r < rows; r++) {
        ark__snap_put32(&o, t->row_slots[r]);
    }
    for (size_t k = 0; k < t->view.ncolumns && rows > 0; k++) {
        ark__snap_put(&o, t->columns[k], rows * t->sizes[k]);
    }
    ark_status wst = ark__snap_write_trailer(&o);
    return st != ARK_OK ? st : wst;
}

/* Where a load's rows and columns sections come from: the input itself,
 * or those bytes already staged in memory (see stage_body). */
typedef struct body_src {
    ark__snap_in *in;
    const unsigned char *mem; /* staged bytes not yet taken, or NULL */
} body_src;

static void body_get(body_src *b, void *dst, size_t n) {
    if (b->mem == NULL) {
        ark__snap_get(b->in, dst, n);
        return;
    }
    memcpy(dst, b->mem, n);
    b->mem += n;
}

/* Bytes a staged body starts with; it doubles from there. */
#define STAGE_FIRST ((size_t)64 << 10)

/* Read the n bytes of the rows and columns sections into a block from the
 * table's allocator (*cap bytes) that doubles as they arrive. The columns
 * come one after another, so sizing them for every row before their bytes
 * arrive would let a short input claiming many wide rows make the load
 * request (and zero) memory it never delivers. NULL, nothing kept, on
 * failure (*st says why). */
static unsigned char *stage_body(ark_table *t, ark__snap_in *in, size_t n,
                                 size_t *cap, ark_status *st) {
    unsigned char *buf = NULL;
    size_t got = 0;
    *cap = 0;
    while (got < n) {
        size_t step = n - got < STAGE_FIRST ? n - got : STAGE_FIRST;
        unsigned char *b =
            ark__grow_array(&t->s.alloc, buf, cap, got, got + step, 1);
        if (b == NULL) {
            *st = ARK_ENOMEM;
            break;
        }
        buf = b;
        size_t take = (*cap < n ? *cap : n) - got;
        ark__snap_get(in, buf + got, take);
        got += take;
        if (in->st != ARK_OK) {
            *st = in->st;
            break;
        }
    }
    if (got < n) {
        ark__free(&t->s.alloc, buf, *cap);
        return NULL;
    }
    return buf;
}

/* The rows section: each row names a live or marked slot, each such slot
 * exactly once (eligible: one bit per issued slot, cleared when used). */
static ark_status load_row_slots(ark_table *t, body_src *b, size_t rows,
                                 uint64_t *eligible) {
    const ark__slots *s = &t->s;
    ark__table_slot *slots = ark__table_slots(t);
    for (uint64_t i = 1; i < s->v->issued; i++) {
        if (slots[i].stamp != 0) {
            eligible[i >> 6] |= (uint64_t)1 << (i & 63);
        }
    }
    for (size_t k = s->pending_done; k < s->npending; k++) {
        uint64_t i = s->pending[k] & UINT32_MAX;
        eligible[i >> 6] |= (uint64_t)1 << (i & 63);
    }
    for (size_t r = 0; r < rows; r++) {
        unsigned char le[4];
        body_get(b, le, sizeof le);
        if (b->in->st != ARK_OK) {
            return b->in->st;
        }
        uint32_t i = ark__snap_le32(le);
        uint64_t bit = (uint64_t)1 << (i & 63);
        if (i >= s->v->issued || (eligible[i >> 6] & bit) == 0) {
            return ARK_ECORRUPT;
        }
        eligible[i >> 6] &= ~bit;
        t->row_slots[r] = i;
        slots[i].row = (uint32_t)r;
    }
    return ARK_OK;
}

/* The rows and columns sections, from b, once the slots have arrived. */
static ark_status load_rows(ark_table *t, body_src *b, size_t rows) {
    /* rows = live + marked slots, which have all arrived. */
    ark_status st = rows > t->cap ? ark__table_grow_rows(t, rows) : ARK_OK;
    if (st != ARK_OK) {
        return st;
    }
    size_t words = (size_t)((t->view.slots.issued + 63) >> 6);
    uint64_t *eligible = ark__alloc(&t->s.alloc, words * sizeof *eligible, 0);
    if (eligible == NULL) {
        return ARK_ENOMEM;
    }
    memset(eligible, 0, words * sizeof *eligible);
    st = load_row_slots(t, b, rows, eligible);
    ark__free(&t->s.alloc, eligible, words * sizeof *eligible);
    for (size_t k = 0; k < t->view.ncolumns && rows > 0 && st == ARK_OK; k++) {
        body_get(b, t->columns[k], rows * t->sizes[k]);
    }
    return st;
}

/* The rest of ark_table_load once the descriptor is checked: slots,
 * rows, columns, trailer, validation. Columns in reserved address space
 * take memory only as their bytes are written, so they are read in place;
 * from an allocator the rows and columns sections are staged first. */
static ark_status table_load_body(ark_table *t, ark__snap_in *in,
                                  const ark__snap_header *hd) {
    ark__slots_io io = {0};
    size_t row_bytes = 0;
    for (size_t k = 0; k < t->view.ncolumns; k++) {
        row_bytes += t->sizes[k]; /* bounded by check_columns */
    }
    size_t rows = (size_t)hd->b;
    size_t body;
    if (hd->b != hd->live + hd->npending || hd->b > SIZE_MAX ||
        ark__mul_overflows(rows, row_bytes + 4, &body)) {
        return ARK_ECORRUPT;
    }
    ark__snap_in_expect(in, ark__slots_snap_bytes(hd, 0));
    ark__snap_in_expect(in, body);
    ark_status st = ark__slots_load(&t->s, in, hd, &io);
    if (st != ARK_OK) {
        return st;
    }
    body_src b = {in, NULL};
    unsigned char *staged = NULL;
    size_t staged_cap = 0;
    if (t->vm_base == NULL && body > 0) {
        staged = stage_body(t, in, body, &staged_cap, &st);
        if (staged == NULL) {
            return st;
        }
        b.mem = staged;
    }
    st = load_rows(t, &b, rows);
    ark__free(&t->s.alloc, staged, staged_cap);
    if (st != ARK_OK) {
        return st;
    }
    t->view.rows = rows;
    for (size_t r = 0; r < rows && t->present != NULL; r++) {
        uint32_t i = t->row_slots[r]; /* a live or marked slot */
        if (ark__table_slots(t)[i].stamp != 0) {
            t->present[i >> 6] |= (uint64_t)1 << (i & 63);
        }
    }
    st = ark__snap_read_trailer(in);
    if (st == ARK_OK && ark_table_validate(t) != ARK_OK) {
        st = ARK_ECORRUPT;
    }
    return st;
}

ark_status ark_table_load(ark_table **out, const ark_table_config *cfg,
                          const ark_reader *r) {
    assert(out != NULL && cfg != NULL && r != NULL);
    ark_table *t = NULL;
    ark_status st = ark_table_create(&t, cfg);
    if (st != ARK_OK) {
        return st;
    }
    ark__snap_in in;
    ark__snap_in_init(&in, r);
    ark__snap_header hd;
    bool mismatch;
    st = ark__snap_read_header(
        &in, &hd, t->s.keyed ? ARK__SNAP_KEYED_TABLE : ARK__SNAP_TABLE,
        t->sizes, t->view.ncolumns, &mismatch);
    if (st == ARK_OK && mismatch) {
        st = ARK_EINVAL;
    }
    if (st == ARK_OK) {
        st = ark__slots_load_header(&t->s, &hd, cfg->seal_key != 0);
    }
    if (st == ARK_OK) {
        st = table_load_body(t, &in, &hd);
    }
    if (st != ARK_OK) {
        ark_table_destroy(t);
        return st;
    }
    *out = t;
    return ARK_OK;
}
