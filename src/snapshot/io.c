/* SPDX-License-Identifier: MIT */
/*
 * io.c - the writers and readers of ark/io.h: a FILE, a memory buffer, a
 * byte range.
 */
#include "ark/io.h"

#include "base/base.h"

#include <string.h>

static ark_status file_write(void *ctx, const void *buf, size_t n) {
    if (n == 0) {
        return ARK_OK;
    }
    return fwrite(buf, 1, n, (FILE *)ctx) == n ? ARK_OK : ARK_EIO;
}

static ark_status file_read(void *ctx, void *buf, size_t n) {
    FILE *f = ctx;
    if (n == 0 || fread(buf, 1, n, f) == n) {
        return ARK_OK;
    }
    return ferror(f) ? ARK_EIO : ARK_ECORRUPT;
}

ark_writer ark_file_writer(FILE *f) {
    ark_writer w = {file_write, f};
    return w;
}

ark_reader ark_file_reader(FILE *f) {
    ark_reader r = {file_read, f};
    return r;
}

/* The buffer's allocator: its own, or the C library's while alloc is
 * unset (a zero-initialised buffer). */
static ark_allocator membuf_alloc(const ark_membuf *b) {
    ark_allocator a = b->alloc;
    if (a.alloc == NULL) {
        ark__allocator_init(&a, NULL);
    }
    return a;
}

void ark_membuf_init(ark_membuf *b, const ark_allocator *a) {
    memset(b, 0, sizeof *b);
    if (a != NULL) {
        b->alloc = *a;
    }
}

static ark_status membuf_write(void *ctx, const void *buf, size_t n) {
    ark_membuf *b = ctx;
    if (n > SIZE_MAX - b->size) {
        return ARK_ENOMEM;
    }
    if (b->size + n > b->cap) {
        ark_allocator a = membuf_alloc(b);
        size_t cap = b->cap;
        unsigned char *d = ark__grow_array(&a, b->data, &cap, b->size,
                                           (uint64_t)b->size + n, 1);
        if (d == NULL) {
            return ARK_ENOMEM;
        }
        b->data = d;
        b->cap = cap;
    }
    if (n != 0) {
        memcpy(b->data + b->size, buf, n);
        b->size += n;
    }
    return ARK_OK;
}

ark_writer ark_membuf_writer(ark_membuf *b) {
    ark_writer w = {membuf_write, b};
    return w;
}

void ark_membuf_reset(ark_membuf *b) { b->size = 0; }

void ark_membuf_free(ark_membuf *b) {
    if (b == NULL) {
        return;
    }
    ark_allocator a = membuf_alloc(b);
    ark__free(&a, b->data, b->cap);
    b->data = NULL;
    b->size = 0;
    b->cap = 0;
}

static ark_status bytes_read(void *ctx, void *buf, size_t n) {
    ark_bytes *b = ctx;
    if (n == 0) {
        return ARK_OK;
    }
    if (b->data == NULL) {
        return ARK_EINVAL;
    }
    if (b->pos > b->size || n > b->size - b->pos) {
        return ARK_ECORRUPT;
    }
    memcpy(buf, (const unsigned char *)b->data + b->pos, n);
    b->pos += n;
    return ARK_OK;
}

ark_reader ark_bytes_reader(ark_bytes *b) {
    ark_reader r = {bytes_read, b};
    return r;
}
