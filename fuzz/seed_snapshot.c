/* SPDX-License-Identifier: MIT */
/*
 * seed_snapshot.c - write the seed corpus of the snapshot fuzz targets:
 * valid snapshots of pools and tables in the configs the targets load
 * with, after churn (free queue, retired slots, marked elements) and
 * without (a pool's one-stamp blocks), and with claims (claimed handles
 * ahead of the owner and absorbed, slots set aside for claims, slots
 * outside an index range). The corpus also keeps v2-* seeds, version 2
 * snapshots written before claims, which this program does not touch.
 * Not built by default; to regenerate:
 *   cc -std=c11 -Iinclude -Isrc -Ifuzz fuzz/seed_snapshot.c \
 *      build/test/libark.a -lpthread -o /tmp/seed && /tmp/seed fuzz/corpus
 */
#include "fuzz_snapshot_pool.c"
#define LLVMFuzzerTestOneInput table_target
#include "fuzz_snapshot_table.c"
#undef LLVMFuzzerTestOneInput

#include <stdio.h>

static void put_file(const char *dir, const char *kind, int n, uint8_t flags,
                     const snap_mem *m);

/* Claims of every kind on c: claim, insert_at and unclaim on it, its
 * insert and remove; then its flush. */
typedef struct claim_ops {
    ark_status (*claim)(void *c, ark_handle *out, size_t n);
    ark_status (*insert_at)(void *c, ark_handle h);
    ark_status (*unclaim)(void *c, ark_handle h);
    ark_status (*insert)(void *c, ark_handle *h);
    ark_status (*remove)(void *c, ark_handle h, bool later);
    size_t (*flush)(void *c);
} claim_ops;

static void with_claims(void *c, const claim_ops *o, uint64_t outside) {
    ark_handle live[300], cl[40];
    size_t n = 0;
    while (n < 300 && o->insert(c, &live[n]) == ARK_OK) {
        n++;
    }
    o->claim(c, cl, 8); /* fresh, ahead of the owner */
    for (size_t k = 0; k < n; k += 2) {
        o->remove(c, live[k], false);
    }
    o->flush(c);            /* sets slots aside */
    o->claim(c, cl + 8, 8); /* from the stock */
    o->insert_at(c, cl[1]); /* absorbs the fresh ones below */
    o->unclaim(c, cl[2]);
    o->insert_at(c, cl[9]);
    o->unclaim(c, cl[10]);
    if (outside != 0) { /* outside the range: live, marked, freed */
        o->insert_at(c, outside);
        o->insert_at(c, outside + 1);
        o->insert_at(c, outside + 2);
        o->remove(c, outside + 1, true);
        o->remove(c, outside + 2, false);
    }
    o->claim(c, cl + 16, 4); /* fresh, still ahead */
    o->remove(c, live[1], true);
}

static ark_status p_claim(void *c, ark_handle *out, size_t n) {
    return ark_pool_claim(c, out, n);
}
static ark_status p_insert_at(void *c, ark_handle h) {
    uint8_t e[24] = {7};
    return ark_pool_insert_at(c, h, e);
}
static ark_status p_unclaim(void *c, ark_handle h) {
    return ark_pool_unclaim(c, h);
}
static ark_status p_insert(void *c, ark_handle *h) {
    uint8_t e[24] = {9};
    return ark_pool_insert(c, e, h);
}
static ark_status p_remove(void *c, ark_handle h, bool later) {
    return later ? ark_pool_remove_later(c, h) : ark_pool_remove(c, h);
}
static size_t p_flush(void *c) { return ark_pool_flush(c); }
static ark_status t_claim(void *c, ark_handle *out, size_t n) {
    return ark_table_claim(c, out, n);
}
static ark_status t_insert_at(void *c, ark_handle h) {
    return ark_table_insert_at(c, h, NULL);
}
static ark_status t_unclaim(void *c, ark_handle h) {
    return ark_table_unclaim(c, h);
}
static ark_status t_insert(void *c, ark_handle *h) {
    return ark_table_insert(c, h, NULL);
}
static ark_status t_remove(void *c, ark_handle h, bool later) {
    return later ? ark_table_remove_later(c, h) : ark_table_remove(c, h);
}
static size_t t_flush(void *c) { return ark_table_flush(c); }

static const claim_ops pool_claim_ops = {p_claim,  p_insert_at, p_unclaim,
                                         p_insert, p_remove,    p_flush};
static const claim_ops table_claim_ops = {t_claim,  t_insert_at, t_unclaim,
                                          t_insert, t_remove,    t_flush};

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
    /* With claims: pools in configs 0, 1 and 3 (a range: 100 .. 600),
     * tables in configs 0 and 2 (a range: 50 .. 400). */
    static const unsigned pool_which[3] = {0, 1, 3};
    n = 24;
    for (unsigned k = 0; k < 3; k++) {
        ark_pool_config cfg = snap_pool_config(pool_which[k]);
        ark_pool *p;
        if (ark_pool_create(&p, &cfg) != ARK_OK) {
            return 1;
        }
        uint64_t outside = pool_which[k] == 3 ? 700 | (uint64_t)2 << 10 : 0;
        with_claims(p, &pool_claim_ops, outside);
        snap_mem m = {NULL, 0, 0, 0};
        ark_writer w = {snap_mem_write, &m};
        ark_pool_save(p, &w);
        uint8_t flags = (uint8_t)(pool_which[k] << 1);
        put_file(dir, "snapshot_pool", n++, flags, &m);
        put_file(dir, "snapshot_pool", n++, flags | 1, &m);
        free(m.data);
        ark_pool_destroy(p);
    }
    static const unsigned table_which[2] = {0, 2};
    n = 12;
    for (unsigned k = 0; k < 2; k++) {
        ark_table_config cfg = snap_table_config(table_which[k]);
        ark_table *t;
        if (ark_table_create(&t, &cfg) != ARK_OK) {
            return 1;
        }
        uint64_t outside = table_which[k] == 2 ? 500 | (uint64_t)1 << 10 : 0;
        with_claims(t, &table_claim_ops, outside);
        snap_mem m = {NULL, 0, 0, 0};
        ark_writer w = {snap_mem_write, &m};
        ark_table_save(t, &w);
        uint8_t flags = (uint8_t)(table_which[k] << 1);
        put_file(dir, "snapshot_table", n++, flags, &m);
        put_file(dir, "snapshot_table", n++, flags | 1, &m);
        free(m.data);
        ark_table_destroy(t);
    }
    return 0;
}
