/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c - the snapshot byte format shared by every container: the
 * checksum,
 * the buffered writer and the bounded reader, the descriptor. See
 * snapshot.h and docs/snapshot.md.
 */
#include "snapshot/snapshot.h"

/* ---- checksum ------------------------------------------------------------
 * Four lanes of a Fletcher-style sum over 64-bit little-endian words: per
 * 32-byte stripe, lane k adds word k to a[k] and then a[k] to b[k]. A
 * changed word changes a[k]; reordered or compensating changes change
 * b[k]. Adds have a one-cycle latency and the lanes are independent, so
 * the checksum runs at load speed, well under a memcpy of the same bytes
 * (XXH64 took twice a memcpy). A final partial stripe is zero-padded;
 * the total length and the eight sums go through splitmix64. It guards
 * against damage, not forgery: a load checks every value anyway. */

/* Little-endian loads on every host: one load where the host is little
 * endian. */
static uint64_t sum_le64(const unsigned char *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (unsigned k = 0; k < 8; k++) {
        v |= (uint64_t)p[k] << (8 * k);
    }
    return v;
#endif
}

void ark__snap_sum_init(ark__snap_sum *h) { memset(h, 0, sizeof *h); }

/* Consume whole stripes; returns the bytes consumed. */
static size_t sum_stripes(ark__snap_sum *h, const unsigned char *p, size_t n) {
    uint64_t a0 = h->a[0], a1 = h->a[1], a2 = h->a[2], a3 = h->a[3];
    uint64_t b0 = h->b[0], b1 = h->b[1], b2 = h->b[2], b3 = h->b[3];
    size_t done = 0;
    while (n - done >= 32) {
        a0 += sum_le64(p + done);
        a1 += sum_le64(p + done + 8);
        a2 += sum_le64(p + done + 16);
        a3 += sum_le64(p + done + 24);
        b0 += a0;
        b1 += a1;
        b2 += a2;
        b3 += a3;
        done += 32;
    }
    h->a[0] = a0;
    h->a[1] = a1;
    h->a[2] = a2;
    h->a[3] = a3;
    h->b[0] = b0;
    h->b[1] = b1;
    h->b[2] = b2;
    h->b[3] = b3;
    return done;
}

void ark__snap_sum_update(ark__snap_sum *h, const void *data, size_t n) {
    const unsigned char *p = data;
    h->total += n;
    if (h->ntail > 0) {
        size_t take = 32 - h->ntail < n ? 32 - h->ntail : n;
        memcpy(h->tail + h->ntail, p, take);
        h->ntail += take;
        p += take;
        n -= take;
        if (h->ntail < 32) {
            return;
        }
        sum_stripes(h, h->tail, 32);
        h->ntail = 0;
    }
    size_t done = sum_stripes(h, p, n);
    memcpy(h->tail, p + done, n - done);
    h->ntail = n - done;
}

uint64_t ark__snap_sum_digest(const ark__snap_sum *h) {
    ark__snap_sum c = *h;
    if (c.ntail > 0) {
        memset(c.tail + c.ntail, 0, 32 - c.ntail);
        sum_stripes(&c, c.tail, 32);
    }
    uint64_t d = ark__mix64(c.total);
    for (unsigned k = 0; k < 4; k++) {
        d = ark__mix64(d ^ c.a[k]);
        d = ark__mix64(d ^ c.b[k]);
    }
    return d;
}

/* ---- writer ------------------------------------------------------------ */

static const unsigned char snap_magic[8] = {'a', 'r', 'k', 's',
                                            'n', 'a', 'p', 0x1a};

ark_status ark__snap_out_init(ark__snap_out *o, const ark_writer *w) {
    o->w = w;
    o->st = w->write == NULL ? ARK_EINVAL : ARK_OK;
    o->len = 0;
    ark__snap_sum_init(&o->h);
    return o->st;
}

void ark__snap_out_flush(ark__snap_out *o) {
    if (o->len > 0 && o->st == ARK_OK) {
        ark__snap_sum_update(&o->h, o->buf, o->len);
        o->st = o->w->write(o->w->ctx, o->buf, o->len);
    }
    o->len = 0;
}

void ark__snap_out_big(ark__snap_out *o, const void *p, size_t n) {
    const unsigned char *src = p;
    if (n >= ARK__SNAP_BUF) {
        ark__snap_out_flush(o);
        if (o->st == ARK_OK) {
            ark__snap_sum_update(&o->h, src, n);
            o->st = o->w->write(o->w->ctx, src, n);
        }
        return;
    }
    while (n > 0) {
        size_t room = ARK__SNAP_BUF - o->len;
        size_t take = n < room ? n : room;
        memcpy(o->buf + o->len, src, take);
        o->len += take;
        src += take;
        n -= take;
        if (o->len == ARK__SNAP_BUF) {
            ark__snap_out_flush(o);
        }
    }
}

static uint64_t out_digest(ark__snap_out *o) {
    ark__snap_out_flush(o);
    return ark__snap_sum_digest(&o->h);
}

void ark__snap_write_header(ark__snap_out *o, const ark__snap_header *hd,
                            const size_t *cols, size_t ncols) {
    ark__snap_put(o, snap_magic, sizeof snap_magic);
    ark__snap_put32(o, ARK__SNAP_VERSION);
    ark__snap_put32(o, hd->kind);
    unsigned char bits[8] = {(unsigned char)hd->index_bits,
                             (unsigned char)hd->gen_bits,
                             (unsigned char)hd->tag_bits};
    ark__snap_put(o, bits, sizeof bits);
    ark__snap_put64(o, hd->tag);
    ark__snap_put64(o, hd->issued);
    ark__snap_put64(o, hd->live);
    ark__snap_put64(o, hd->nfree);
    ark__snap_put64(o, hd->npending);
    ark__snap_put64(o, hd->retired);
    for (unsigned k = 0; k < ARK__SNAP_KEYS; k++) {
        ark__snap_put64(o, hd->keys[k]);
    }
    ark__snap_put64(o, hd->a);
    ark__snap_put64(o, hd->b);
    const uint64_t v3[10] = {
        hd->index_min, hd->index_max, hd->frontier, hd->run_end, hd->dropped,
        hd->flags,     hd->nstock,    hd->nclaimed, hd->nparked, hd->noutside};
    for (size_t k = 0; k < 10; k++) {
        ark__snap_put64(o, v3[k]);
    }
    for (size_t k = 0; k < ncols; k++) {
        ark__snap_put64(o, cols[k]);
    }
    ark__snap_put64(o, out_digest(o));
}

ark_status ark__snap_write_trailer(ark__snap_out *o) {
    ark__snap_put64(o, out_digest(o));
    ark__snap_out_flush(o);
    return o->st;
}

/* ---- reader ------------------------------------------------------------ */

void ark__snap_in_init(ark__snap_in *in, const ark_reader *r) {
    in->r = r;
    in->st = r->read == NULL ? ARK_EINVAL : ARK_OK;
    in->remaining = 0;
    in->pos = 0;
    in->len = 0;
    ark__snap_sum_init(&in->h);
}

void ark__snap_in_expect(ark__snap_in *in, uint64_t n) {
    if (in->remaining > UINT64_MAX - n) {
        in->st = in->st == ARK_OK ? ARK_ECORRUPT : in->st;
        return;
    }
    in->remaining += n;
}

/* Fill the (drained) buffer with what was announced, at most its size. */
static void in_fill(ark__snap_in *in) {
    in->pos = 0;
    in->len = 0;
    if (in->st != ARK_OK) {
        return;
    }
    if (in->remaining == 0) {
        in->st = ARK_ECORRUPT; /* more than the snapshot announced */
        return;
    }
    size_t n =
        in->remaining < ARK__SNAP_BUF ? (size_t)in->remaining : ARK__SNAP_BUF;
    ark_status st = in->r->read(in->r->ctx, in->buf, n);
    if (st != ARK_OK) {
        in->st = st;
        return;
    }
    ark__snap_sum_update(&in->h, in->buf, n);
    in->remaining -= n;
    in->len = n;
}

void ark__snap_in_big(ark__snap_in *in, void *dst, size_t n) {
    unsigned char *d = dst;
    while (n > 0) {
        if (in->st != ARK_OK) {
            memset(d, 0, n);
            return;
        }
        size_t avail = in->len - in->pos;
        if (avail == 0 && n >= ARK__SNAP_BUF && in->remaining >= n) {
            /* Large and announced: straight into place. */
            ark_status st = in->r->read(in->r->ctx, d, n);
            if (st != ARK_OK) {
                in->st = st;
                continue;
            }
            ark__snap_sum_update(&in->h, d, n);
            in->remaining -= n;
            return;
        }
        if (avail == 0) {
            in_fill(in);
            continue;
        }
        size_t take = n < avail ? n : avail;
        memcpy(d, in->buf + in->pos, take);
        in->pos += take;
        d += take;
        n -= take;
    }
}

/* The checksum of everything read so far; the buffer must be drained. */
static ark_status in_check_digest(ark__snap_in *in) {
    if (in->st != ARK_OK) {
        return in->st;
    }
    if (in->pos != in->len || in->remaining != 0) {
        return ARK_ECORRUPT;
    }
    uint64_t want = ark__snap_sum_digest(&in->h);
    ark__snap_in_expect(in, 8);
    uint64_t got = ark__snap_get64(in);
    if (in->st != ARK_OK) {
        return in->st;
    }
    return got == want ? ARK_OK : ARK_ECORRUPT;
}

ark_status ark__snap_read_header(ark__snap_in *in, ark__snap_header *hd,
                                 uint32_t kind, const size_t *cols,
                                 size_t ncols, bool *mismatch) {
    unsigned char magic[8], bits[8];
    *mismatch = false;
    memset(hd, 0, sizeof *hd);
    ark__snap_in_expect(in, ARK__SNAP_HEADER_BYTES_V2);
    ark__snap_get(in, magic, sizeof magic);
    uint32_t version = ark__snap_get32(in);
    hd->version = version;
    hd->kind = ark__snap_get32(in);
    ark__snap_get(in, bits, sizeof bits);
    hd->index_bits = bits[0];
    hd->gen_bits = bits[1];
    hd->tag_bits = bits[2];
    hd->tag = ark__snap_get64(in);
    hd->issued = ark__snap_get64(in);
    hd->live = ark__snap_get64(in);
    hd->nfree = ark__snap_get64(in);
    hd->npending = ark__snap_get64(in);
    hd->retired = ark__snap_get64(in);
    for (unsigned k = 0; k < ARK__SNAP_KEYS; k++) {
        hd->keys[k] = ark__snap_get64(in);
    }
    hd->a = ark__snap_get64(in);
    hd->b = ark__snap_get64(in);
    if (in->st == ARK_OK && version >= 3 && version <= ARK__SNAP_VERSION) {
        ark__snap_in_expect(in,
                            ARK__SNAP_HEADER_BYTES - ARK__SNAP_HEADER_BYTES_V2);
        uint64_t *v3[10] = {&hd->index_min, &hd->index_max, &hd->frontier,
                            &hd->run_end,   &hd->dropped,   &hd->flags,
                            &hd->nstock,    &hd->nclaimed,  &hd->nparked,
                            &hd->noutside};
        for (size_t k = 0; k < 10; k++) {
            *v3[k] = ark__snap_get64(in);
        }
    }
    if (in->st != ARK_OK) {
        return in->st;
    }
    bool reserved_zero = true;
    for (unsigned k = 3; k < sizeof bits; k++) {
        reserved_zero = reserved_zero && bits[k] == 0;
    }
    /* A keyed pool's snapshot loaded as a plain pool (or the reverse, or
     * for tables) is a config that differs from the snapshot: a mismatch,
     * once the checksum says the descriptor is whole. */
    uint32_t sibling = kind == ARK__SNAP_POOL          ? ARK__SNAP_KEYED_POOL
                       : kind == ARK__SNAP_TABLE       ? ARK__SNAP_KEYED_TABLE
                       : kind == ARK__SNAP_KEYED_POOL  ? ARK__SNAP_POOL
                       : kind == ARK__SNAP_KEYED_TABLE ? ARK__SNAP_TABLE
                                                       : kind;
    if (memcmp(magic, snap_magic, sizeof magic) != 0 ||
        version < ARK__SNAP_VERSION_MIN || version > ARK__SNAP_VERSION ||
        (hd->kind != kind && hd->kind != sibling) || !reserved_zero) {
        return ARK_ECORRUPT;
    }
    *mismatch = hd->kind != kind;
    if (kind == ARK__SNAP_TABLE || kind == ARK__SNAP_KEYED_TABLE) {
        /* The column sizes, one announced at a time: a huge count in a
         * corrupt descriptor costs only the bytes actually there. */
        if (hd->a != ncols) {
            *mismatch = true;
        }
        for (uint64_t k = 0; k < hd->a && in->st == ARK_OK; k++) {
            ark__snap_in_expect(in, 8);
            uint64_t sz = ark__snap_get64(in);
            if (k < ncols && sz != cols[k]) {
                *mismatch = true;
            }
        }
    }
    ark_status st = in_check_digest(in);
    if (st != ARK_OK) {
        *mismatch = false;
    }
    return st;
}

ark_status ark__snap_read_trailer(ark__snap_in *in) {
    return in_check_digest(in);
}

/* ---- containers without handles (id set, id map) ---------------------- */

/* The descriptor fields that must be 0 for these kinds are. */
static bool header_clean(const ark__snap_header *hd, bool body_bytes) {
    uint64_t keys = 0;
    for (unsigned k = 0; k < ARK__SNAP_KEYS; k++) {
        keys |= hd->keys[k];
    }
    return (hd->index_bits | hd->gen_bits | hd->tag_bits) == 0 &&
           (hd->tag | hd->issued | hd->nfree | hd->npending | hd->retired |
            keys | hd->b | (body_bytes ? 0 : hd->a) | hd->index_min |
            hd->index_max | hd->frontier | hd->run_end | hd->dropped |
            hd->flags | hd->nstock | hd->nclaimed | hd->nparked |
            hd->noutside) == 0;
}

ark_status ark__snap_load_set(void **out, const ark__snap_set_kind *k,
                              const ark_allocator *a, const ark_reader *r) {
    ark__snap_in in;
    ark__snap_in_init(&in, r);
    ark__snap_header hd;
    bool mismatch;
    ark_status st =
        ark__snap_read_header(&in, &hd, k->kind, NULL, 0, &mismatch);
    if (st == ARK_OK && !header_clean(&hd, k->body_bytes)) {
        st = ARK_ECORRUPT;
    }
    void *c = NULL;
    if (st == ARK_OK) {
        st = k->create(&c, a);
    }
    if (st == ARK_OK) {
        st = k->body(c, &in, &hd);
    }
    if (st == ARK_OK) {
        st = ark__snap_read_trailer(&in);
    }
    if (st != ARK_OK) {
        k->destroy(c); /* NULL when create failed or never ran */
        return st;
    }
    *out = c;
    return ARK_OK;
}
