/* SPDX-License-Identifier: MIT */
/*
 * ark/io.h - ready-made snapshot writers and readers.
 *
 * Every save takes an ark_writer and every load an ark_reader (core.h).
 * This header gives the three a game needs most: a stdio FILE, a growable
 * memory buffer (to send a snapshot over the network or keep it for a
 * rollback), and a range of bytes already in memory (a received packet).
 *
 *     FILE *f = fopen("world.ark", "wb");
 *     ark_writer w = ark_file_writer(f);
 *     ark_status st = ark_pool_save(units, &w);   // ARK_EIO on a full disk
 *
 * Thread-safety: a writer or reader is used by one thread at a time, like
 * the FILE or buffer behind it.
 */
#ifndef ARK_IO_H
#define ARK_IO_H

#include "ark/core.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Return a writer that appends to f with fwrite. A write that stores fewer
 * bytes than asked (a full disk, a closed pipe) returns ARK_EIO; the save
 * then stops and returns ARK_EIO. f must be non-NULL and open for writing,
 * and stay open while the writer is used; closing and flushing it is the
 * caller's business.
 */
ARK_API ark_writer ark_file_writer(FILE *f);

/*
 * Return a reader that reads from f with fread. A read that ends early
 * returns ARK_ECORRUPT at the end of the file (a truncated snapshot) and
 * ARK_EIO on a read error (ferror). f must be non-NULL and open for
 * reading. A load reads exactly one snapshot's bytes, so several may
 * follow each other in one file.
 */
ARK_API ark_reader ark_file_reader(FILE *f);

/*
 * A growable memory buffer that a writer appends to. Zero-initialise it
 * (`ark_membuf buf = {0};`) to use the C library's allocator, or call
 * ark_membuf_init to give another. data and size are public and
 * read-only: the bytes written so far. The other fields are private.
 */
typedef struct ark_membuf {
    unsigned char *data; /* the bytes written so far (NULL while empty) */
    size_t size;         /* how many */
    /* private */
    size_t cap;
    ark_allocator alloc; /* alloc.alloc NULL: the C library */
} ark_membuf;

/* Make b an empty buffer whose memory comes from a (NULL: the C library).
 * b must be non-NULL; a, when given, must have both functions. */
ARK_API void ark_membuf_init(ark_membuf *b, const ark_allocator *a);

/*
 * Return a writer that appends to b, doubling its memory as it fills. A
 * write the allocator cannot back returns ARK_ENOMEM and leaves the bytes
 * written before it in place. b must be non-NULL and outlive the writer.
 */
ARK_API ark_writer ark_membuf_writer(ark_membuf *b);

/* Forget the bytes written (size 0) but keep the memory, so that the next
 * save into b allocates nothing when it fits. b must be non-NULL. */
ARK_API void ark_membuf_reset(ark_membuf *b);

/* Free b's memory and make it empty again; its allocator is kept. b may be
 * NULL (then nothing happens). */
ARK_API void ark_membuf_free(ark_membuf *b);

/*
 * A range of bytes to read a snapshot from: set data and size, pos 0.
 * pos counts the bytes read so far, so a second load continues where the
 * first stopped.
 */
typedef struct ark_bytes {
    const void *data;
    size_t size;
    size_t pos;
} ark_bytes;

/*
 * Return a reader over b. Asking for more bytes than remain returns
 * ARK_ECORRUPT (a truncated snapshot) and reads nothing; a NULL data with
 * a size other than 0 returns ARK_EINVAL. b must be non-NULL and outlive
 * the reader; the bytes are not copied.
 */
ARK_API ark_reader ark_bytes_reader(ark_bytes *b);

#ifdef __cplusplus
}
#endif

#endif /* ARK_IO_H */
