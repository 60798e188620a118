/*
 * snapshot.c - the snapshot byte format shared by every container: XXH64,
 * the buffered writer and the bounded reader, the descriptor. See
 * snapshot.h and docs/snapshot.md.
 */
#include "snapshot.h"

/* ---- XXH64 (seed 0), the reference algorithm --------------------------- */

#define XXP1 0x9E3779B185EBCA87u
#define XXP2 0xC2B2AE3D27D4EB4Fu
#define XXP3 0x165667B19E3779F9u
#define XXP4 0x85EBCA77C2B2AE63u
#define XXP5 0x27D4EB2F165667C5u

static uint64_t xx_rotl(uint64_t x, unsigned r) {
    return (x << r) | (x >> (64 - r));
}

/* Little-endian loads on every host. */
static uint64_t xx_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (unsigned k = 0; k < 8; k++) {
        v |= (uint64_t)p[k] << (8 * k);
    }
    return v;
}

static uint32_t xx_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t xx_round(uint64_t acc, uint64_t input) {
    acc += input * XXP2;
    acc = xx_rotl(acc, 31);
    return acc * XXP1;
}

static uint64_t xx_merge(uint64_t acc, uint64_t val) {
    acc ^= xx_round(0, val);
    return acc * XXP1 + XXP4;
}

void ark__xxh64_init(ark__xxh64 *h) {
    h->v[0] = XXP1 + XXP2;
    h->v[1] = XXP2;
    h->v[2] = 0;
    h->v[3] = 0 - XXP1;
    h->total = 0;
    h->ntail = 0;
}

/* Consume whole 32-byte stripes; returns the bytes consumed. The four
 * lanes are independent, so the loop runs near memory speed. */
static size_t xx_stripes(ark__xxh64 *h, const unsigned char *p, size_t n) {
    uint64_t v0 = h->v[0], v1 = h->v[1], v2 = h->v[2], v3 = h->v[3];
    size_t done = 0;
    while (n - done >= 32) {
        v0 = xx_round(v0, xx_le64(p + done));
        v1 = xx_round(v1, xx_le64(p + done + 8));
        v2 = xx_round(v2, xx_le64(p + done + 16));
        v3 = xx_round(v3, xx_le64(p + done + 24));
        done += 32;
    }
    h->v[0] = v0;
    h->v[1] = v1;
    h->v[2] = v2;
    h->v[3] = v3;
    return done;
}

void ark__xxh64_update(ark__xxh64 *h, const void *data, size_t n) {
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
        xx_stripes(h, h->tail, 32);
        h->ntail = 0;
    }
    size_t done = xx_stripes(h, p, n);
    memcpy(h->tail, p + done, n - done);
    h->ntail = n - done;
}

uint64_t ark__xxh64_digest(const ark__xxh64 *h) {
    uint64_t acc;
    if (h->total >= 32) {
        acc = xx_rotl(h->v[0], 1) + xx_rotl(h->v[1], 7) + xx_rotl(h->v[2], 12) +
              xx_rotl(h->v[3], 18);
        for (unsigned k = 0; k < 4; k++) {
            acc = xx_merge(acc, h->v[k]);
        }
    } else {
        acc = h->v[2] + XXP5; /* seed + PRIME5 */
    }
    acc += h->total;
    const unsigned char *p = h->tail;
    size_t n = h->ntail;
    while (n >= 8) {
        acc ^= xx_round(0, xx_le64(p));
        acc = xx_rotl(acc, 27) * XXP1 + XXP4;
        p += 8;
        n -= 8;
    }
    if (n >= 4) {
        acc ^= (uint64_t)xx_le32(p) * XXP1;
        acc = xx_rotl(acc, 23) * XXP2 + XXP3;
        p += 4;
        n -= 4;
    }
    while (n > 0) {
        acc ^= *p * XXP5;
        acc = xx_rotl(acc, 11) * XXP1;
        p++;
        n--;
    }
    acc ^= acc >> 33;
    acc *= XXP2;
    acc ^= acc >> 29;
    acc *= XXP3;
    acc ^= acc >> 32;
    return acc;
}

/* ---- writer ------------------------------------------------------------ */

static const unsigned char snap_magic[8] = {'a', 'r', 'k', 's',
                                            'n', 'a', 'p', 0x1a};

void ark__snap_out_init(ark__snap_out *o, const ark_writer *w) {
    o->w = w;
    o->st = ARK_OK;
    o->len = 0;
    ark__xxh64_init(&o->h);
}

void ark__snap_out_flush(ark__snap_out *o) {
    if (o->len > 0 && o->st == ARK_OK) {
        ark__xxh64_update(&o->h, o->buf, o->len);
        o->st = o->w->write(o->w->ctx, o->buf, o->len);
    }
    o->len = 0;
}

void ark__snap_out_big(ark__snap_out *o, const void *p, size_t n) {
    const unsigned char *src = p;
    if (n >= ARK__SNAP_BUF) {
        ark__snap_out_flush(o);
        if (o->st == ARK_OK) {
            ark__xxh64_update(&o->h, src, n);
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
    return ark__xxh64_digest(&o->h);
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
    in->st = ARK_OK;
    in->remaining = 0;
    in->pos = 0;
    in->len = 0;
    ark__xxh64_init(&in->h);
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
    ark__xxh64_update(&in->h, in->buf, n);
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
            ark__xxh64_update(&in->h, d, n);
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
    uint64_t want = ark__xxh64_digest(&in->h);
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
    ark__snap_in_expect(in, ARK__SNAP_HEADER_BYTES);
    ark__snap_get(in, magic, sizeof magic);
    uint32_t version = ark__snap_get32(in);
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
    if (in->st != ARK_OK) {
        return in->st;
    }
    bool reserved_zero = true;
    for (unsigned k = 3; k < sizeof bits; k++) {
        reserved_zero = reserved_zero && bits[k] == 0;
    }
    if (memcmp(magic, snap_magic, sizeof magic) != 0 ||
        version != ARK__SNAP_VERSION || hd->kind != kind || !reserved_zero) {
        return ARK_ECORRUPT;
    }
    if (kind == ARK__SNAP_TABLE) {
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
