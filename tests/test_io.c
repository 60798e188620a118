/* SPDX-License-Identifier: MIT */
/*
 * test_io.c - the ready-made writers and readers of ark/io.h: FILE (short
 * writes, truncated and failing reads), memory buffer (allocation
 * failure, reuse), byte range (end of input, NULL data), and a pool
 * round trip through each.
 */
#include "ark/ark.h"
#include "harness.h"

#include <stdio.h>
#include <string.h>

typedef struct item {
    uint32_t a, b;
} item;

/* A pool of n items, its handles in h. */
static ark_pool *make_pool(ark_handle *h, int n) {
    ark_pool_config cfg = {ARK_POOL_ELEM(item), .seal_key = 7};
    ark_pool *p;
    if (ark_pool_create(&p, &cfg) != ARK_OK) {
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        item it = {(uint32_t)k, (uint32_t)k * 3};
        if (ark_pool_insert(p, &it, &h[k]) != ARK_OK) {
            ark_pool_destroy(p);
            return NULL;
        }
    }
    return p;
}

/* 1 when q holds the n items of make_pool at handles h. */
static int same_items(const ark_pool *q, const ark_handle *h, int n) {
    REQ(ark_pool_count(q) == (size_t)n);
    for (int k = 0; k < n; k++) {
        const item *it = ark_pool_get(q, h[k]);
        REQ(it != NULL && it->a == (uint32_t)k && it->b == (uint32_t)k * 3);
    }
    return 1;
}

TEST(file_round_trip_and_two_snapshots_in_one_file) {
    ark_handle h[50];
    ark_pool *p = make_pool(h, 50);
    CHECK(p != NULL);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    ark_writer w = ark_file_writer(f);
    CHECK_OK(ark_pool_save(p, &w));
    CHECK_OK(ark_pool_save(p, &w));
    rewind(f);
    ark_reader r = ark_file_reader(f);
    ark_pool_config cfg = {ARK_POOL_ELEM(item)};
    ark_pool *q1 = NULL, *q2 = NULL;
    CHECK_OK(ark_pool_load(&q1, &cfg, &r));
    CHECK_OK(ark_pool_load(&q2, &cfg, &r));
    CHECK(same_items(q1, h, 50));
    CHECK(same_items(q2, h, 50));
    /* The file is used up: a third load finds its end. */
    ark_pool *q3 = NULL;
    CHECK_STATUS(ark_pool_load(&q3, &cfg, &r), ARK_ECORRUPT);
    CHECK(q3 == NULL);
    fclose(f);
    ark_pool_destroy(q1);
    ark_pool_destroy(q2);
    ark_pool_destroy(p);
}

TEST(file_reader_reports_a_truncated_file) {
    ark_handle h[20];
    ark_pool *p = make_pool(h, 20);
    CHECK(p != NULL);
    ark_membuf buf = {0};
    ark_writer w = ark_membuf_writer(&buf);
    CHECK_OK(ark_pool_save(p, &w));
    ark_pool_config cfg = {ARK_POOL_ELEM(item)};
    /* Every proper prefix of the snapshot, as a file. */
    for (size_t cut = 0; cut < buf.size; cut += 1 + cut / 4) {
        FILE *f = tmpfile();
        CHECK(f != NULL);
        CHECK_EQ(fwrite(buf.data, 1, cut, f), cut);
        rewind(f);
        ark_reader r = ark_file_reader(f);
        ark_pool *q = NULL;
        CHECK_STATUS(ark_pool_load(&q, &cfg, &r), ARK_ECORRUPT);
        CHECK(q == NULL);
        fclose(f);
    }
    ark_membuf_free(&buf);
    ark_pool_destroy(p);
}

TEST(file_reader_reports_a_read_error) {
    /* A FILE open for writing only: fread fails with ferror set. */
    FILE *g = fopen("ark_test_io_write_only.tmp", "wb");
    CHECK(g != NULL);
    ark_reader r = ark_file_reader(g);
    char byte;
#if defined(_WIN32)
    /* Windows' C runtime reports the end of the file there, not an
     * error: a status either way, never bytes. */
    ark_status st = r.read(r.ctx, &byte, 1);
    CHECK(st == ARK_EIO || st == ARK_ECORRUPT);
#else
    CHECK_STATUS(r.read(r.ctx, &byte, 1), ARK_EIO);
#endif
    CHECK_OK(r.read(r.ctx, &byte, 0));
    fclose(g);
    remove("ark_test_io_write_only.tmp");
}

/* A FILE that cannot take the bytes: the full device on Linux, a file
 * open for reading elsewhere. */
static FILE *unwritable(void) {
#if defined(__linux__)
    FILE *f = fopen("/dev/full", "wb");
    if (f != NULL) {
        setvbuf(f, NULL, _IONBF, 0); /* the first write reaches it */
        return f;
    }
#endif
    FILE *w = fopen("ark_test_io_read_only.tmp", "wb");
    if (w != NULL) {
        fclose(w);
    }
    return fopen("ark_test_io_read_only.tmp", "rb");
}

TEST(file_writer_reports_a_short_write) {
    ark_handle h[2000];
    ark_pool *p = make_pool(h, 2000);
    CHECK(p != NULL);
    FILE *f = unwritable();
    CHECK(f != NULL);
    ark_writer w = ark_file_writer(f);
    CHECK_STATUS(ark_pool_save(p, &w), ARK_EIO);
    fclose(f);
    remove("ark_test_io_read_only.tmp");
    ark_pool_destroy(p);
}

TEST(membuf_grows_keeps_its_bytes_on_failure_and_is_reused) {
    test_allocator t;
    test_allocator_init(&t);
    ark_membuf buf;
    ark_membuf_init(&buf, &t.base);
    ark_writer w = ark_membuf_writer(&buf);
    unsigned char chunk[100];
    for (int k = 0; k < 100; k++) {
        chunk[k] = (unsigned char)k;
    }
    CHECK_OK(w.write(w.ctx, chunk, 50));
    CHECK_EQ(buf.size, 50);
    /* The next growth fails: ENOMEM, the first 50 bytes stay. */
    test_allocator_fail_at(&t, 1);
    CHECK_STATUS(w.write(w.ctx, chunk, 100), ARK_ENOMEM);
    CHECK_EQ(buf.size, 50);
    CHECK(memcmp(buf.data, chunk, 50) == 0);
    CHECK_OK(w.write(w.ctx, chunk, 100));
    CHECK_EQ(buf.size, 150);
    CHECK(memcmp(buf.data + 50, chunk, 100) == 0);
    /* reset keeps the memory: writing the same again allocates nothing. */
    uint64_t allocs = t.allocs;
    ark_membuf_reset(&buf);
    CHECK_EQ(buf.size, 0);
    CHECK_OK(w.write(w.ctx, chunk, 100));
    CHECK_OK(w.write(w.ctx, chunk, 50));
    CHECK_EQ(t.allocs, allocs);
    ark_membuf_free(&buf);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 0);
    ark_membuf_free(&buf); /* twice: still nothing to free */
    ark_membuf_free(NULL);
    CHECK_EQ(t.live_blocks, 0);
}

TEST(bytes_reader_stops_at_the_end_and_refuses_null_data) {
    const unsigned char data[4] = {1, 2, 3, 4};
    ark_bytes in = {data, sizeof data, 0};
    ark_reader r = ark_bytes_reader(&in);
    unsigned char got[4] = {0};
    CHECK_OK(r.read(r.ctx, got, 3));
    CHECK_EQ(in.pos, 3);
    CHECK_STATUS(r.read(r.ctx, got, 2), ARK_ECORRUPT);
    CHECK_EQ(in.pos, 3);
    CHECK_OK(r.read(r.ctx, got + 3, 1));
    CHECK(memcmp(got, data, 4) == 0);
    ark_bytes none = {NULL, 10, 0};
    ark_reader rn = ark_bytes_reader(&none);
    CHECK_STATUS(rn.read(rn.ctx, got, 1), ARK_EINVAL);
    /* A pos past the size (set by hand) reads nothing. */
    ark_bytes past = {data, sizeof data, 9};
    ark_reader rp = ark_bytes_reader(&past);
    CHECK_STATUS(rp.read(rp.ctx, got, 1), ARK_ECORRUPT);
}

TEST(membuf_and_bytes_round_trip_a_pool) {
    ark_handle h[300];
    ark_pool *p = make_pool(h, 300);
    CHECK(p != NULL);
    ark_membuf buf = {0};
    ark_writer w = ark_membuf_writer(&buf);
    CHECK_OK(ark_pool_save(p, &w));
    ark_bytes in = {buf.data, buf.size, 0};
    ark_reader r = ark_bytes_reader(&in);
    ark_pool_config cfg = {ARK_POOL_ELEM(item)};
    ark_pool *q = NULL;
    CHECK_OK(ark_pool_load(&q, &cfg, &r));
    CHECK_EQ(in.pos, buf.size);
    CHECK(same_items(q, h, 300));
    ark_pool_destroy(q);
    ark_pool_destroy(p);
    ark_membuf_free(&buf);
}
