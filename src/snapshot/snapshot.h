/* SPDX-License-Identifier: MIT */
/*
 * snapshot.h - the byte format of ark snapshots (docs/snapshot.md): a
 * buffered little-endian writer and a bounded reader over the user's
 * ark_writer / ark_reader, the checksum they keep on the way, and
 * the common descriptor (header) every container kind starts with; never
 * installed.
 *
 * The reader never asks the user's reader for more bytes than the
 * snapshot has announced so far (snap_in.remaining): a stream may carry
 * more data after a snapshot, and a short one ends in ARK_ECORRUPT. The
 * checksum covers what was filled into the buffer, so a digest is taken
 * only when the buffer is drained, at the end of a section.
 */
#ifndef ARK_SNAPSHOT_H
#define ARK_SNAPSHOT_H

#include "base/base.h"
#include "engine/slots.h"

#include <string.h>

/* Container kinds, as stored in the descriptor. */
#define ARK__SNAP_POOL 1u
#define ARK__SNAP_TABLE 2u
#define ARK__SNAP_IDSET 3u
#define ARK__SNAP_IDMAP 4u
#define ARK__SNAP_KEYED_POOL 5u  /* a pool keyed by an entity pool */
#define ARK__SNAP_KEYED_TABLE 6u /* a table keyed by an entity pool */

/* The version written, and the oldest one read: version 3 adds the
 * index range and the claims to the descriptor and a claims section to
 * pools and tables (version 2 has none: no claims, the whole layout as
 * the index range). */
#define ARK__SNAP_VERSION 3u
#define ARK__SNAP_VERSION_MIN 2u

/* A pool's slots section comes in blocks of this many slots, each opening
 * with one of the two modes below (docs/snapshot.md). */
#define ARK__SNAP_BLOCK 256u
#define ARK__SNAP_BLOCK_STAMPS 0u /* every slot's stamp, then the payloads */
#define ARK__SNAP_BLOCK_LIVE 1u   /* one stamp for all, then the payloads */

/* Bytes of the fixed descriptor (before a table's column sizes), of the
 * version written and of version 2. */
#define ARK__SNAP_HEADER_BYTES 216u
#define ARK__SNAP_HEADER_BYTES_V2 136u

/* Bytes the writer and reader buffer between calls to the user. */
#define ARK__SNAP_BUF 16384u

/* The number of round keys of the sealing permutation a snapshot keeps. */
#define ARK__SNAP_KEYS 6u

/* The checksum's streaming state (see snapshot.c and docs/snapshot.md). */
typedef struct ark__snap_sum {
    uint64_t a[4], b[4];
    uint64_t total;
    unsigned char tail[32];
    size_t ntail;
} ark__snap_sum;

void ark__snap_sum_init(ark__snap_sum *h);
void ark__snap_sum_update(ark__snap_sum *h, const void *data, size_t n);
uint64_t ark__snap_sum_digest(const ark__snap_sum *h);

/* The fixed descriptor. a and b depend on the kind (pool: elem_size, 0;
 * table: ncolumns, rows). */
typedef struct ark__snap_header {
    uint32_t version; /* as read; a save writes ARK__SNAP_VERSION */
    uint32_t kind;
    unsigned index_bits, gen_bits, tag_bits;
    uint64_t tag;
    uint64_t issued, live, nfree, npending, retired;
    uint64_t keys[ARK__SNAP_KEYS];
    uint64_t a, b;
    /* version 3 (0 in version 2, and for the kinds without handles) */
    uint64_t index_min, index_max; /* the index range, resolved */
    uint64_t frontier, run_end, dropped, flags;
    uint64_t nstock, nclaimed, nparked, noutside;
} ark__snap_header;

/* ---- writing ----------------------------------------------------------- */

typedef struct ark__snap_out {
    const ark_writer *w;
    ark_status st; /* first error; later puts do nothing */
    size_t len;
    ark__snap_sum h;
    unsigned char buf[ARK__SNAP_BUF];
} ark__snap_out;

/* Start writing to w. A writer without a write function (it may come
 * from a binding or a plugin, so a status rather than a crash) gives
 * ARK_EINVAL, and the save returns at once. */
ark_status ark__snap_out_init(ark__snap_out *o, const ark_writer *w);

/* Checksum and hand the buffer to the writer. */
void ark__snap_out_flush(ark__snap_out *o);

/* Append n bytes (large ones go to the writer directly). */
void ark__snap_out_big(ark__snap_out *o, const void *p, size_t n);

static inline void ark__snap_put(ark__snap_out *o, const void *p, size_t n) {
    if (ARK__LIKELY(o->len + n <= ARK__SNAP_BUF)) {
        memcpy(o->buf + o->len, p, n);
        o->len += n;
    } else {
        ark__snap_out_big(o, p, n);
    }
}

static inline void ark__snap_put32(ark__snap_out *o, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                          (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    ark__snap_put(o, b, 4);
}

static inline void ark__snap_put64(ark__snap_out *o, uint64_t v) {
    ark__snap_put32(o, (uint32_t)v);
    ark__snap_put32(o, (uint32_t)(v >> 32));
}

/* Write the descriptor (and, for a table, the column sizes) and its
 * checksum. */
void ark__snap_write_header(ark__snap_out *o, const ark__snap_header *hd,
                            const size_t *cols, size_t ncols);

/* Write the trailing checksum of everything so far and flush. Returns the
 * first error of the whole write. */
ark_status ark__snap_write_trailer(ark__snap_out *o);

/* ---- reading ----------------------------------------------------------- */

typedef struct ark__snap_in {
    const ark_reader *r;
    ark_status st;      /* first error; later reads give zeros */
    uint64_t remaining; /* bytes announced and not yet filled */
    size_t pos, len;    /* unread bytes are buf[pos, len) */
    ark__snap_sum h;
    unsigned char buf[ARK__SNAP_BUF];
} ark__snap_in;

/* Start reading from r. A reader without a read function makes every
 * read fail with ARK_EINVAL, which ark__snap_read_header returns, having
 * called nothing. */
void ark__snap_in_init(ark__snap_in *in, const ark_reader *r);

/* Announce n more bytes of the snapshot (ARK_ECORRUPT on overflow). */
void ark__snap_in_expect(ark__snap_in *in, uint64_t n);

/* Copy n bytes into dst (zeros after an error). */
void ark__snap_in_big(ark__snap_in *in, void *dst, size_t n);

static inline void ark__snap_get(ark__snap_in *in, void *dst, size_t n) {
    if (ARK__LIKELY(in->len - in->pos >= n)) {
        memcpy(dst, in->buf + in->pos, n);
        in->pos += n;
    } else {
        ark__snap_in_big(in, dst, n);
    }
}

/* The little-endian uint32 at b. */
static inline uint32_t ark__snap_le32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

static inline uint32_t ark__snap_get32(ark__snap_in *in) {
    unsigned char b[4];
    ark__snap_get(in, b, 4);
    return ark__snap_le32(b);
}

static inline uint64_t ark__snap_get64(ark__snap_in *in) {
    uint64_t lo = ark__snap_get32(in);
    return lo | (uint64_t)ark__snap_get32(in) << 32;
}

/* Read and check the descriptor of kind: magic, version, kind, reserved
 * bytes, its checksum (ARK_ECORRUPT). For a table, cols/ncols are the
 * config's column sizes: *mismatch is set when the saved ones differ
 * (only after the checksum passed). */
ark_status ark__snap_read_header(ark__snap_in *in, ark__snap_header *hd,
                                 uint32_t kind, const size_t *cols,
                                 size_t ncols, bool *mismatch);

/* Read the trailing checksum of everything so far and compare. */
ark_status ark__snap_read_trailer(ark__snap_in *in);

/* What the loads of the containers without handles (id set, id map)
 * do differently. */
typedef struct ark__snap_set_kind {
    uint32_t kind;
    bool body_bytes; /* the header's a counts the body's bytes */
    ark_status (*create)(void **c, const ark_allocator *a);
    /* Fill the empty container c from the body; any error is final. */
    ark_status (*body)(void *c, ark__snap_in *in, const ark__snap_header *hd);
    void (*destroy)(void *c);
} ark__snap_set_kind;

/* Read a snapshot of kind k from r into a new container in *out: the
 * header (every field the kind does not use must be 0), the body, the
 * trailer. On any error nothing is left behind and *out is not written. */
ark_status ark__snap_load_set(void **out, const ark__snap_set_kind *k,
                              const ark_allocator *a, const ark_reader *r);

/* ---- the handle engine's sections ---------------------------------------- */

/* What a container's slots carry in a snapshot. */
typedef struct ark__slots_io {
    size_t payload; /* bytes at slot + data_off kept with each live and
                       marked slot (a pool's element; 0 for a table) */
} ark__slots_io;

/* Fill the engine's fields of a descriptor. Errors: ARK_EINVAL while
 * hooks run (the lists are in motion), ARK_ENOMEM (scratch, only with
 * marked slots outside the index range). */
ark_status ark__slots_save_header(const ark__slots *s, ark__snap_header *hd);

/* Write the slots, ring, pending and claims sections of the state hd
 * describes (hd from ark__slots_save_header). Errors: ARK_ENOMEM (scratch
 * for a ring holding dead entries, or for marked slots outside the index
 * range), the writer's. */
ark_status ark__slots_save(const ark__slots *s, ark__snap_out *o,
                           const ark__slots_io *io, const ark__snap_header *hd);

/* Check a descriptor against s, fresh from init with the loading config:
 * layout (ARK_EINVAL), counts (ARK_ECORRUPT), seal keys (ARK_EINVAL when
 * key_given and different; else the saved keys are installed). */
ark_status ark__slots_load_header(ark__slots *s, const ark__snap_header *hd,
                                  bool key_given);

/* Bytes of the engine's sections of a checked descriptor. */
uint64_t ark__slots_snap_bytes(const ark__snap_header *hd, size_t payload);

/* Read the sections into s (as load_header left it), validating every
 * value before use; storage grows only as slots arrive. Errors:
 * ARK_ECORRUPT, ARK_ENOMEM, the reader's; s is then only fit for fini
 * and the container's destroy. */
ark_status ark__slots_load(ark__slots *s, ark__snap_in *in,
                           const ark__snap_header *hd, const ark__slots_io *io);

#endif /* ARK_SNAPSHOT_H */
