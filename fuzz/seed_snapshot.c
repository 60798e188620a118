/* SPDX-License-Identifier: MIT */
/*
 * seed_snapshot.c - write the seed corpus of the snapshot fuzz targets:
 * valid snapshots of pools and tables in the configs the targets load
 * with, after churn (free queue, retired slots, marked elements) and
 * without (a pool's one-stamp blocks). Not built by default; to
 * regenerate:
 *   cc -std=c11 -Iinclude -Isrc -Ifuzz fuzz/seed_snapshot.c \
 *      build/test/libark.a -lpthread -o /tmp/seed && /tmp/seed fuzz/corpus
 */
#include "fuzz_snapshot_pool.c"
#define LLVMFuzzerTestOneInput table_target
#include "fuzz_snapshot_table.c"
#undef LLVMFuzzerTestOneInput

#include <stdio.h>

static void put_file(const char *dir, const char *kind, int n, uint8_t flags,
                     const snap_mem *m) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s/seed%02d", dir, kind, n);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    fputc(flags, f);
    fwrite(m->data, 1, m->len, f);
    fclose(f);
}

/* splitmix64 */
static uint64_t seed_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "fuzz/corpus";
    int n = 0;
    for (unsigned which = 0; which < 3; which++) {
        /* Shape 3: no churn, so the slots section has one-stamp blocks. */
        for (int shape = 0; shape < 4; shape++) {
            ark_pool_config cfg = snap_pool_config(which);
            ark_pool *p;
            if (ark_pool_create(&p, &cfg) != ARK_OK) {
                return 1;
            }
            uint64_t rng = which * 10 + (uint64_t)shape;
            ark_handle hs[64] = {0};
            uint8_t elem[24];
            for (int k = 0; k < 40 + shape * 150; k++) {
                memset(elem, k, sizeof elem);
                ark_handle h;
                if (ark_pool_insert(p, elem, &h) == ARK_OK && shape < 3) {
                    ark_handle *slot = &hs[seed_rand(&rng) % 64];
                    if (*slot != 0 && seed_rand(&rng) % 2) {
                        ark_pool_remove(p, *slot);
                    }
                    *slot = h;
                }
            }
            for (int k = 0; k < shape * 3 && shape < 3; k++) {
                ark_pool_remove_later(p, hs[k]);
            }
            snap_mem m = {NULL, 0, 0, 0};
            ark_writer w = {snap_mem_write, &m};
            ark_pool_save(p, &w);
            put_file(dir, "snapshot_pool", n++, (uint8_t)(which << 1), &m);
            put_file(dir, "snapshot_pool", n++, (uint8_t)(which << 1 | 1), &m);
            free(m.data);
            ark_pool_destroy(p);
        }
    }
    n = 0;
    for (unsigned which = 0; which < 2; which++) {
        for (int shape = 0; shape < 3; shape++) {
            ark_table_config cfg = snap_table_config(which);
            ark_table *t;
            if (ark_table_create(&t, &cfg) != ARK_OK) {
                return 1;
            }
            uint64_t rng = which * 10 + (uint64_t)shape;
            ark_handle hs[32] = {0};
            for (int k = 0; k < 30 + shape * 100; k++) {
                ark_handle h;
                size_t r;
                if (ark_table_insert(t, &h, &r) == ARK_OK) {
                    unsigned char *c0 = ark_table_column(t, 0);
                    c0[r * cfg.column_sizes[0]] = (unsigned char)k;
                    ark_handle *slot = &hs[seed_rand(&rng) % 32];
                    if (*slot != 0 && seed_rand(&rng) % 2) {
                        ark_table_remove(t, *slot);
                    }
                    *slot = h;
                }
            }
            for (int k = 0; k < shape * 2; k++) {
                ark_table_remove_later(t, hs[k]);
            }
            snap_mem m = {NULL, 0, 0, 0};
            ark_writer w = {snap_mem_write, &m};
            ark_table_save(t, &w);
            put_file(dir, "snapshot_table", n++, (uint8_t)(which << 1), &m);
            put_file(dir, "snapshot_table", n++, (uint8_t)(which << 1 | 1), &m);
            free(m.data);
            ark_table_destroy(t);
        }
    }
    return 0;
}
