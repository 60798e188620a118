/* SPDX-License-Identifier: MIT */
/*
 * snapshot_mem.h - an in-memory ark_writer / ark_reader for the snapshot
 * tests.
 */
#ifndef ARK_TEST_SNAPSHOT_MEM_H
#define ARK_TEST_SNAPSHOT_MEM_H

#include "ark/core.h"

#include <stdlib.h>
#include <string.h>

typedef struct membuf {
    unsigned char *data;
    size_t len, cap, pos;
} membuf;

static inline ark_status mem_write(void *ctx, const void *buf, size_t n) {
    membuf *m = ctx;
    if (m->len + n > m->cap) {
        size_t ncap = m->cap < 256 ? 256 : m->cap;
        while (ncap < m->len + n) {
            ncap *= 2;
        }
        unsigned char *d = realloc(m->data, ncap);
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

static inline ark_status mem_read(void *ctx, void *buf, size_t n) {
    membuf *m = ctx;
    if (n > m->len - m->pos) {
        return ARK_ECORRUPT;
    }
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return ARK_OK;
}

static inline ark_writer mem_writer(membuf *m) {
    ark_writer w = {mem_write, m};
    return w;
}

static inline ark_reader mem_reader(membuf *m) {
    m->pos = 0;
    ark_reader r = {mem_read, m};
    return r;
}

static inline void mem_free(membuf *m) {
    free(m->data);
    memset(m, 0, sizeof *m);
}

#endif /* ARK_TEST_SNAPSHOT_MEM_H */
