/* SPDX-License-Identifier: MIT */
/*
 * fuzz_snapshot.h - what the snapshot loaders' fuzz targets share.
 *
 * Input: one flags byte, then the bytes given to the loader.
 *   bit 0      recompute both checksums first, so mutations of a valid
 *              snapshot reach the structural checks behind them
 *   bits 1-2   which config loads it (fuzz_snapshot_*.c; the seed corpus,
 *              fuzz/seed_snapshot.c, has valid snapshots for each; one
 *              config of each kind has an index range; the v2-* seeds are
 *              version 2 snapshots, kept as they were written)
 *   bit 3      custom allocator that fails one allocation, chosen by
 *              bits 4-7
 * Whatever the bytes, load must give ARK_OK or a status and leak nothing;
 * a container it gives must be valid, keep working, and survive a save
 * and load unchanged (a version 2 snapshot saves as version 3: then the
 * second save must give the bytes of the first).
 */
#ifndef ARK_FUZZ_SNAPSHOT_H
#define ARK_FUZZ_SNAPSHOT_H

#include "fuzz_common.h"
#include "snapshot/snapshot.h"

typedef struct snap_mem {
    uint8_t *data;
    size_t len, cap, pos;
} snap_mem;

static ark_status snap_mem_read(void *ctx, void *buf, size_t n) {
    snap_mem *m = ctx;
    if (n > m->len - m->pos) {
        return ARK_ECORRUPT;
    }
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return ARK_OK;
}

static ark_status snap_mem_write(void *ctx, const void *buf, size_t n) {
    snap_mem *m = ctx;
    if (m->len + n > m->cap) {
        size_t ncap = m->cap ? m->cap : 4096;
        while (ncap < m->len + n) {
            ncap *= 2;
        }
        uint8_t *d = realloc(m->data, ncap);
        if (d == NULL) {
            return ARK_ENOMEM;
        }
        m->data = d;
        m->cap = ncap;
    }
    memcpy(m->data + m->len, buf, n);
    m->len += n;
    return ARK_OK;
}

static void snap_put_le64(uint8_t *p, uint64_t v) {
    for (int k = 0; k < 8; k++) {
        p[k] = (uint8_t)(v >> (8 * k));
    }
}

/* The version of the snapshot in m (0 when too short to tell). */
static uint32_t snap_version(const snap_mem *m) {
    if (m->len < 12) {
        return 0;
    }
    const uint8_t *p = m->data + 8;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* Copy the input after the flags byte, fixing checksums if asked:
 * desc_bytes is the descriptor's size (before its checksum) in the
 * version written; a version 2 snapshot's is smaller. */
static snap_mem snap_input(const uint8_t *data, size_t size,
                           size_t desc_bytes) {
    snap_mem m = {NULL, 0, 0, 0};
    if (size < 1) {
        return m;
    }
    m.len = size - 1;
    m.cap = m.len;
    m.data = malloc(m.len + 1);
    memcpy(m.data, data + 1, m.len);
    if (snap_version(&m) == 2) {
        desc_bytes -= ARK__SNAP_HEADER_BYTES - ARK__SNAP_HEADER_BYTES_V2;
    }
    if ((data[0] & 1) && m.len >= desc_bytes + 16) {
        ark__snap_sum h;
        ark__snap_sum_init(&h);
        ark__snap_sum_update(&h, m.data, desc_bytes);
        snap_put_le64(m.data + desc_bytes, ark__snap_sum_digest(&h));
        ark__snap_sum_init(&h);
        ark__snap_sum_update(&h, m.data, m.len - 8);
        snap_put_le64(m.data + m.len - 8, ark__snap_sum_digest(&h));
    }
    return m;
}

/* Arm the allocator as the flags say. */
static void snap_arm(fuzz_alloc *fa, uint8_t flags) {
    fa->fail_next = 1;
    fa->fail_skip = flags >> 4;
}

#endif /* ARK_FUZZ_SNAPSHOT_H */
