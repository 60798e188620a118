/* SPDX-License-Identifier: MIT */
/*
 * fuzz_table.c - ark_table against a model, driven by fuzz input.
 *
 * The first bytes choose the columns (1 to 4, sizes from 1 to 200 bytes,
 * sometimes an invalid one), the handle layout (small index and generation
 * spaces, so slot reuse, retirement and EFULL are reached), max_rows and
 * the allocator (the fuzz allocator, or NULL for the virtual-memory path),
 * sometimes an invalid tag or a failing allocation inside create;
 * the rest is a sequence of operations. The model is a flat array of rows
 * in table order (swap-and-pop on remove, remove_later marks replayed in
 * marking order at flush) whose every column byte is derived from a value,
 * so moved rows are checked byte for byte. Any 64-bit value the input
 * supplies is also tried as a handle and as a row position, and sealed
 * and unsealed. Allocation failures are injected on demand, into any
 * allocation of a call. Hooks that call back: fuzz_handles.c.
 */
#include "ark/table.h"
#include "fuzz_common.h"
#include "table_internal.h"

#define MODEL_MAX 1024
#define NCOLS_MAX 4

typedef struct row {
    ark_handle h;
    uint8_t value; /* every byte of column c is (uint8_t)(value + c) */
    int pending;
} row;

typedef struct model {
    row rows[MODEL_MAX]; /* table order */
    size_t n;
    ark_handle marked[MODEL_MAX]; /* remove_later, in marking order */
    size_t nmarked;
    ark_handle dead[256]; /* recently removed handles */
    size_t ndead;
} model;

static const size_t size_choices[8] = {1, 3, 8, 12, 64, 200, 4, 16};

FUZZ_NO_COVERAGE static size_t find(const model *m, ark_handle h) {
    for (size_t i = 0; i < m->n; i++) {
        if (m->rows[i].h == h) {
            return i;
        }
    }
    return ARK_NO_ROW;
}

static void pop_row(model *m, size_t r) {
    m->dead[m->ndead++ % 256] = m->rows[r].h;
    m->rows[r] = m->rows[--m->n];
}

static void fill(ark_table *t, const size_t *sizes, size_t ncols, size_t r,
                 uint8_t value) {
    for (size_t c = 0; c < ncols; c++) {
        char *base = ark_table_column(t, c);
        memset(base + r * sizes[c], (uint8_t)(value + c), sizes[c]);
    }
}

/* Check every row's handle mapping and column bytes: all of them when full,
 * else the first and last byte of each element (a row moved wrongly shows
 * there too), so that a step costs O(count) rather than O(count * bytes). */
FUZZ_NO_COVERAGE static void check_rows(const ark_table *t, const model *m,
                                        const size_t *sizes, size_t ncols,
                                        int full) {
    FUZZ_REQUIRE(ark_table_rows(t) == m->n);
    for (size_t r = 0; r < m->n; r++) {
        const row *w = &m->rows[r];
        if (w->pending) {
            FUZZ_REQUIRE(ark_table_handle_at(t, r) == ARK_NULL_HANDLE);
            FUZZ_REQUIRE(ark_table_row(t, w->h) == ARK_NO_ROW);
            FUZZ_REQUIRE(ark_table_check(t, w->h) == ARK_ESTALE);
        } else {
            FUZZ_REQUIRE(ark_table_handle_at(t, r) == w->h);
            FUZZ_REQUIRE(ark_table_row(t, w->h) == r);
        }
        for (size_t c = 0; c < ncols; c++) {
            const uint8_t *e =
                (const uint8_t *)ark_table_column(t, c) + r * sizes[c];
            uint8_t want = (uint8_t)(w->value + c);
            FUZZ_REQUIRE(e[0] == want && e[sizes[c] - 1] == want);
            for (size_t b = 1; full && b < sizes[c]; b++) {
                FUZZ_REQUIRE(e[b] == want);
            }
        }
    }
    FUZZ_REQUIRE(ark_table_handle_at(t, m->n) == ARK_NULL_HANDLE);
    FUZZ_REQUIRE(ark_table_column(t, ncols) == NULL);
}

/* A handle the model does not hold as live must be refused everywhere,
 * and refusing it must change nothing. */
static void check_handle(ark_table *t, model *m, ark_handle h) {
    size_t r = find(m, h);
    ark_status s = ark_table_check(t, h);
    if (r != ARK_NO_ROW && !m->rows[r].pending) {
        FUZZ_REQUIRE(s == ARK_OK);
        FUZZ_REQUIRE(ark_table_row(t, h) == r);
        return;
    }
    FUZZ_REQUIRE(s != ARK_OK);
    FUZZ_REQUIRE(h != ARK_NULL_HANDLE || s == ARK_ENULL);
    FUZZ_REQUIRE(r == ARK_NO_ROW || s == ARK_ESTALE);
    FUZZ_REQUIRE(ark_table_row(t, h) == ARK_NO_ROW);
    FUZZ_REQUIRE(ark_table_remove(t, h) == s);
    FUZZ_REQUIRE(ark_table_remove_later(t, h) == s);
    FUZZ_REQUIRE(ark_table_rows(t) == m->n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    static model m;
    memset(&m, 0, sizeof m);
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    uint8_t shape = fuzz_u8(&in);
    uint8_t cols = fuzz_u8(&in);
    uint8_t limits = fuzz_u8(&in);
    size_t sizes[NCOLS_MAX];
    size_t ncols = 1 + (cols & 3);
    for (size_t c = 0; c < ncols; c++) {
        sizes[c] = size_choices[(cols >> (2 + c)) & 7];
    }
    if ((limits & 0xc0) == 0xc0) { /* an invalid column size */
        sizes[ncols - 1] = (limits & 0x20) ? 0 : ARK_TABLE_MAX_COLUMN_SIZE + 1;
    }
    ark_table_config cfg = {.column_sizes = sizes,
                            .ncolumns = ncols,
                            .index_bits = 2 + (shape & 7),
                            .gen_bits = 1 + ((shape >> 3) & 3),
                            .tag_bits = (shape >> 5) & 3,
                            .max_rows = (limits & 0x1f) * 4,
                            .allocator = (shape & 0x80) ? &fa.base : NULL};
    cfg.tag = cfg.tag_bits ? (fuzz_u8(&in) & ((1u << cfg.tag_bits) - 1)) : 0;
    int bad_tag = (limits & 0xe0) == 0x40;
    if (bad_tag) { /* a tag that does not fit in tag_bits */
        cfg.tag |= (uint64_t)1 << cfg.tag_bits;
    }
    ark_table *t;
    fa.fail_next = (limits & 0xe0) == 0x20 && cfg.allocator != NULL;
    fa.fail_skip = fa.fail_next ? fuzz_u8(&in) & 3 : 0; /* which one */
    ark_status cs = ark_table_create(&t, &cfg);
    if (cs != ARK_OK) {
        FUZZ_REQUIRE(cs == ARK_EINVAL || cs == ARK_ENOMEM);
        FUZZ_REQUIRE(fa.live == 0);
        return 0;
    }
    fa.fail_next = 0;
    FUZZ_REQUIRE(!bad_tag && sizes[ncols - 1] != 0 &&
                 sizes[ncols - 1] <= ARK_TABLE_MAX_COLUMN_SIZE);
    unsigned steps = 0;
    while (!fuzz_done(&in)) {
        uint8_t op = fuzz_u8(&in);
        fa.fail_next = (op & 0x80) && cfg.allocator != NULL;
        /* which allocation of the call fails: growth makes up to three */
        fa.fail_skip = (op & 0x80) ? fuzz_u8(&in) & 3 : 0;
        switch (op & 0x0f) {
        case 0:
        case 1: { /* insert: a zeroed row at the end */
            ark_handle h = 0;
            size_t r = 0;
            ark_status s = (op & 0x40) ? ark_table_insert(t, NULL, NULL)
                                       : ark_table_insert(t, &h, &r);
            if (s == ARK_OK) {
                FUZZ_REQUIRE(m.n < MODEL_MAX);
                if (op & 0x40) {
                    r = m.n;
                    h = ark_table_handle_at(t, r);
                }
                FUZZ_REQUIRE(r == m.n && h != ARK_NULL_HANDLE);
                FUZZ_REQUIRE(find(&m, h) == ARK_NO_ROW);
                m.rows[m.n++] = (row){h, 0, 0};
                for (size_t c = 0; c < ncols; c++) { /* zeroed */
                    const uint8_t *e =
                        (const uint8_t *)ark_table_column(t, c) + r * sizes[c];
                    for (size_t b = 0; b < sizes[c]; b++) {
                        FUZZ_REQUIRE(e[b] == 0);
                    }
                }
                uint8_t v = fuzz_u8(&in);
                fill(t, sizes, ncols, r, v);
                m.rows[r].value = v;
            } else {
                FUZZ_REQUIRE(s == ARK_EFULL || s == ARK_ENOMEM);
            }
            break;
        }
        case 2: /* remove a model row (live or pending) */
            if (m.n > 0) {
                size_t r = fuzz_u8(&in) % m.n;
                ark_status s = ark_table_remove(t, m.rows[r].h);
                if (m.rows[r].pending) {
                    FUZZ_REQUIRE(s == ARK_ESTALE);
                } else {
                    FUZZ_REQUIRE(s == ARK_OK);
                    pop_row(&m, r);
                }
            }
            break;
        case 3: /* remove_later a model row */
            if (m.n > 0) {
                size_t r = fuzz_u8(&in) % m.n;
                ark_status s = ark_table_remove_later(t, m.rows[r].h);
                if (m.rows[r].pending) {
                    FUZZ_REQUIRE(s == ARK_ESTALE);
                } else if (s == ARK_ENOMEM) {
                    break; /* the marked list could not grow: unchanged */
                } else {
                    FUZZ_REQUIRE(s == ARK_OK);
                    m.rows[r].pending = 1;
                    m.marked[m.nmarked++] = m.rows[r].h;
                }
            }
            break;
        case 4: /* flush: swap-and-pop the marked rows in marking order */
            FUZZ_REQUIRE(ark_table_flush(t) == m.nmarked);
            for (size_t k = 0; k < m.nmarked; k++) {
                size_t r = find(&m, m.marked[k]);
                FUZZ_REQUIRE(r != ARK_NO_ROW && m.rows[r].pending);
                pop_row(&m, r);
            }
            m.nmarked = 0;
            break;
        case 5: /* an arbitrary 64-bit handle */
            check_handle(t, &m, fuzz_u64(&in));
            break;
        case 6: /* a live, pending or dead handle with a bit flipped */
            if (m.n > 0) {
                ark_handle h = m.rows[fuzz_u8(&in) % m.n].h;
                check_handle(t, &m, h);
                check_handle(t, &m, h ^ ((uint64_t)1 << (fuzz_u8(&in) % 64)));
            }
            if (m.ndead > 0) {
                check_handle(
                    t, &m,
                    m.dead[fuzz_u8(&in) % (m.ndead < 256 ? m.ndead : 256)]);
            }
            break;
        case 7: { /* an arbitrary row position and column index */
            uint64_t pos = fuzz_u64(&in);
            if (pos >= m.n) {
                FUZZ_REQUIRE(ark_table_handle_at(t, (size_t)pos) ==
                             ARK_NULL_HANDLE);
            }
            uint64_t col = fuzz_u64(&in);
            FUZZ_REQUIRE((ark_table_column(t, (size_t)col) == NULL) ==
                         (col >= ncols || ark_table_column(t, 0) == NULL));
            break;
        }
        case 8: /* overwrite a row's columns through its handle */
            if (m.n > 0) {
                size_t r = fuzz_u8(&in) % m.n;
                uint8_t v = fuzz_u8(&in);
                if (!m.rows[r].pending) {
                    FUZZ_REQUIRE(ark_table_row(t, m.rows[r].h) == r);
                    fill(t, sizes, ncols, r, v);
                    m.rows[r].value = v;
                }
            }
            break;
        case 10: { /* seal and unseal an arbitrary value, and a handle */
            uint64_t x = fuzz_u64(&in);
            FUZZ_REQUIRE(ark_table_unseal(t, ark_table_seal(t, x)) == x);
            FUZZ_REQUIRE(ark_table_seal(t, ark_table_unseal(t, x)) == x);
            check_handle(t, &m, ark_table_unseal(t, x));
            if (m.n > 0) {
                ark_handle h = m.rows[fuzz_u8(&in) % m.n].h;
                ark_handle w = ark_table_seal(t, h);
                FUZZ_REQUIRE(ark_table_unseal(t, w) == h);
                check_handle(t, &m,
                             ark_table_unseal(
                                 t, w ^ ((uint64_t)1 << (fuzz_u8(&in) % 64))));
            }
            break;
        }
        case 9: /* remove every row (by handle, from the front) */
            while (m.n > 0 && !(op & 0x10)) {
                size_t r = m.rows[0].pending ? m.n - 1 : 0;
                if (m.rows[r].pending) {
                    break;
                }
                FUZZ_REQUIRE(ark_table_remove(t, m.rows[r].h) == ARK_OK);
                pop_row(&m, r);
            }
            break;
        default:
            break;
        }
        /* The byte-for-byte checks every 16 steps and at the end. */
        int full = (++steps & 15) == 0;
        check_rows(t, &m, sizes, ncols, full);
        FUZZ_REQUIRE(ark__table_validate(t, full) == ARK_OK);
    }
    check_rows(t, &m, sizes, ncols, 1);
    FUZZ_REQUIRE(ark__table_validate(t, true) == ARK_OK);
    fa.fail_next = 0;
    fa.fail_skip = 0;
    ark_table_destroy(t);
    FUZZ_REQUIRE(fa.live == 0);
    return 0;
}
