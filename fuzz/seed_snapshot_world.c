/* SPDX-License-Identifier: MIT */
/*
 * seed_snapshot_world.c - write the seed corpus of fuzz_snapshot_world:
 * valid saved worlds (entity pool, keyed pool, keyed table, tag set) in
 * both layouts the target loads with, empty and after churn (free and
 * reused slots, a marked entity, marked elements, rows moved), as one
 * stream and segmented, with hooks and without, each followed by a run of
 * operations that reaches every case of run_op. Not built by default; to
 * regenerate:
 *   cc -std=c11 -Iinclude -Isrc -Ifuzz fuzz/seed_snapshot_world.c \
 *      build/test/libark.a -lpthread -o /tmp/seedw && /tmp/seedw fuzz/corpus
 */
#include "fuzz_snapshot_world.c"

#include <stdio.h>

/* splitmix64 */
static uint64_t seed_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A world of shape 0 (empty), 1 (a few entities, no churn) or 2 (churn
 * past the reuse delay, marks left for the flushes). */
static void seed_world(fworld *w, int shape, uint64_t rng) {
    ark_pool_config uc = fw_units_cfg(w);
    if (ark_pool_create(&w->units, &uc) != ARK_OK) {
        exit(1);
    }
    ark_pool_config pc = fw_pos_cfg(w);
    ark_table_config tc = fw_vel_cfg(w);
    if (ark_pool_create(&w->pos, &pc) != ARK_OK ||
        ark_table_create(&w->vel, &tc) != ARK_OK ||
        ark_idset_create(&w->tag, &w->fa->base) != ARK_OK ||
        ark_pool_attach_idset(w->units, w->tag) != ARK_OK) {
        exit(1);
    }
    int n = shape == 0 ? 0 : shape == 1 ? 12 : 160;
    ark_handle keep[8] = {0};
    for (int k = 0; k < n; k++) {
        uint64_t v = seed_rand(&rng);
        ark_handle h;
        if (ark_pool_insert(w->units, &v, &h) != ARK_OK) {
            break;
        }
        if (v % 2 == 0) {
            fw_pos p = {v % 16, v};
            (void)ark_pool_insert_at(w->pos, h, &p);
        }
        if (v % 3 != 0) {
            size_t row;
            if (ark_table_insert_at(w->vel, h, &row) == ARK_OK) {
                ((uint64_t *)ark_table_column(w->vel, 0))[row] = v;
            }
        }
        if (v % 5 < 2) {
            (void)ark_pool_tag(w->units, w->tag, h);
        }
        if (shape == 2 && k % 3 != 0) {
            ark_handle *slot = &keep[seed_rand(&rng) % 8];
            if (*slot != 0) {
                (void)ark_pool_remove(w->units, *slot);
            }
            *slot = h;
        }
    }
    if (shape == 2) {
        (void)ark_pool_remove_later(w->units, keep[0]);
        (void)ark_pool_remove_later(w->pos, keep[1]);
        (void)ark_table_remove_later(w->vel, keep[2]);
        (void)ark_table_remove(w->vel, keep[3]);
    }
}

/* Every case of run_op, on ids 1-20, some with an allocation failing. */
static void put_ops(FILE *f, uint64_t rng) {
    for (int op = 0; op < 16; op++) {
        fputc(op, f);
        fputc(1 + (int)(seed_rand(&rng) % 20), f);
        fputc((int)(seed_rand(&rng) & 0xff), f);
    }
    static const uint8_t armed[] = {0x80, 0x81, 0x89, 0x8a, 0x87, 0x91, 0xa9};
    for (size_t k = 0; k < sizeof armed; k++) {
        fputc(armed[k], f);
        fputc(1 + (int)(seed_rand(&rng) % 20), f);
        fputc((int)(seed_rand(&rng) & 0xff), f);
    }
    static const uint8_t tail[][3] = {
        {12, 1, 0x19}, /* a query with every term */
        {13, 2, 1},    /* clear pos with hooks */
        {9, 3, 7},     /* spawn into what is left */
        {14, 1, 0},    /* save and load */
        {13, 2, 6},    /* clear vel with hooks, then the entities */
        {13, 2, 4},
    };
    for (size_t k = 0; k < sizeof tail / sizeof *tail; k++) {
        fwrite(tail[k], 1, 3, f);
    }
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "fuzz/corpus";
    int n = 0;
    for (unsigned layout = 0; layout < 2; layout++) {
        for (int shape = 0; shape < 3; shape++) {
            /* 2: one stream whose load fails an allocation */
            for (int segmented = 0; segmented < 3; segmented++) {
                fuzz_alloc fa;
                fuzz_alloc_init(&fa);
                bool hooks = (shape + segmented) % 2 == 1;
                fworld w = {NULL, NULL, NULL, NULL, &fa, layout, hooks};
                uint64_t rng = layout * 10 + (uint64_t)shape;
                seed_world(&w, shape, rng);
                snap_mem seg[4];
                memset(seg, 0, sizeof seg);
                ark_writer wr[4];
                for (int k = 0; k < 4; k++) {
                    wr[k].write = snap_mem_write;
                    wr[k].ctx = &seg[k];
                }
                if (ark_pool_save(w.units, &wr[0]) != ARK_OK ||
                    ark_pool_save(w.pos, &wr[1]) != ARK_OK ||
                    ark_table_save(w.vel, &wr[2]) != ARK_OK ||
                    ark_idset_save(w.tag, &wr[3]) != ARK_OK) {
                    return 1;
                }
                char path[512];
                snprintf(path, sizeof path, "%s/snapshot_world/seed%02d", dir,
                         n++);
                FILE *f = fopen(path, "wb");
                if (f == NULL) {
                    perror(path);
                    return 1;
                }
                int flags = segmented == 2 ? 8 | (int)(shape + layout * 3) << 4
                                           : segmented;
                fputc(flags | (hooks ? 2 : 0) | (int)layout << 2, f);
                if (segmented == 1) {
                    for (int k = 0; k < 4; k++) {
                        fputc((int)(seg[k].len & 0xff), f);
                        fputc((int)(seg[k].len >> 8), f);
                    }
                }
                for (int k = 0; k < 4; k++) {
                    fwrite(seg[k].data, 1, seg[k].len, f);
                    free(seg[k].data);
                }
                put_ops(f, rng);
                fclose(f);
                fw_destroy(&w);
            }
        }
    }
    return 0;
}
