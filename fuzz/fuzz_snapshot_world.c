/* SPDX-License-Identifier: MIT */
/*
 * fuzz_snapshot_world.c - the joined load of a world (ark/entity.h) on
 * arbitrary bytes: an entity pool, a pool and a table keyed by it, and an
 * id set attached to it as a tag, read one after the other from one
 * stream as a game loads a save; then the loaded world is exercised.
 *
 * Input: one flags byte, then the stream.
 *   bit 0      segmented: the stream opens with four little-endian uint16
 *              lengths, one per snapshot, and each snapshot's checksums
 *              are recomputed, so that mutations of a valid world reach
 *              the structural checks behind them
 *   bit 1      hooks: the keyed pool's on_remove removes the entity whose
 *              id its element holds, the keyed table's removes the next
 *              entity's keyed pool element
 *   bit 2      the layout (fuzz/seed_snapshot_world.c saved the seeds
 *              with both): index_bits 8, gen_bits 4; or index_bits 10,
 *              gen_bits 6, tag_bits 2, tag 1
 *   bit 3      fail one allocation of the loads, chosen by bits 4-7
 * The bytes after the snapshots are operations (run_op). Whatever the
 * bytes, the loads give ARK_OK or a status and leak nothing. A world that
 * loads is valid, its queries agree with its lookups, and it stays valid
 * through removals (now, later, from hooks), flushes, clears, spawns,
 * tags, failed allocations, and save and load round trips that must give
 * the same world.
 */
#include "ark/entity.h"
#include "fuzz_snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fw_pos {
    uint64_t victim; /* with hooks: the id of the entity its removal takes */
    uint64_t val;
} fw_pos;

static const size_t fw_cols[2] = {8, 4};

typedef struct fworld {
    ark_pool *units; /* elements: uint64_t */
    ark_pool *pos;   /* keyed by units */
    ark_table *vel;  /* keyed by units */
    ark_idset *tag;  /* attached to units */
    fuzz_alloc *fa;
    unsigned layout;
    bool hooks;
} fworld;

static unsigned fw_index_bits(unsigned layout) { return layout ? 10 : 8; }

static uint32_t fw_limit(const fworld *w) {
    return (uint32_t)1 << fw_index_bits(w->layout);
}

/* The configs the seeds were saved with (fuzz/seed_snapshot_world.c). */
static ark_pool_config fw_units_cfg(const fworld *w) {
    ark_pool_config c = {.elem_size = 8,
                         .index_bits = fw_index_bits(w->layout),
                         .gen_bits = 4,
                         .allocator = &w->fa->base};
    if (w->layout) {
        c.gen_bits = 6;
        c.tag_bits = 2;
        c.tag = 1;
    }
    return c;
}

static void fw_pos_hook(void *elem, ark_handle h, void *user) {
    fworld *w = user;
    const fw_pos *p = elem;
    (void)h;
    ark_handle v = ark_pool_handle_by_id(w->units, (uint32_t)p->victim);
    if (v != ARK_NULL_HANDLE) {
        (void)ark_pool_remove(w->units, v);
    }
}

static void fw_vel_hook(void *elem, ark_handle h, void *user) {
    fworld *w = user;
    (void)elem;
    FUZZ_REQUIRE(ark_table_row(w->vel, h) != ARK_NO_ROW);
    uint32_t id = (uint32_t)(h & (fw_limit(w) - 1));
    ark_handle next = ark_pool_handle_by_id(w->units, id + 1);
    if (next != ARK_NULL_HANDLE) {
        (void)ark_pool_remove(w->pos, next);
    }
}

static ark_pool_config fw_pos_cfg(fworld *w) {
    ark_pool_config c = {.elem_size = sizeof(fw_pos),
                         .allocator = &w->fa->base,
                         .on_remove = w->hooks ? fw_pos_hook : NULL,
                         .user = w,
                         .keys = w->units};
    return c;
}

static ark_table_config fw_vel_cfg(fworld *w) {
    ark_table_config c = {.column_sizes = fw_cols,
                          .ncolumns = 2,
                          .allocator = &w->fa->base,
                          .on_remove = w->hooks ? fw_vel_hook : NULL,
                          .user = w,
                          .keys = w->units};
    return c;
}

/* The joined load, in the order of ark/entity.h; what was made before a
 * failure stays in w for fw_destroy. */
static ark_status fw_load(fworld *w, const ark_reader *r) {
    ark_pool_config uc = fw_units_cfg(w);
    ark_status st = ark_pool_load(&w->units, &uc, r);
    if (st != ARK_OK) {
        return st;
    }
    ark_pool_config pc = fw_pos_cfg(w);
    st = ark_pool_load(&w->pos, &pc, r);
    if (st != ARK_OK) {
        return st;
    }
    ark_table_config tc = fw_vel_cfg(w);
    st = ark_table_load(&w->vel, &tc, r);
    if (st != ARK_OK) {
        return st;
    }
    st = ark_idset_load(&w->tag, &w->fa->base, r);
    return st == ARK_OK ? ark_pool_attach_idset(w->units, w->tag) : st;
}

static ark_status fw_save(const fworld *w, snap_mem *m) {
    ark_writer wr = {snap_mem_write, m};
    ark_status st = ark_pool_save(w->units, &wr);
    st = st == ARK_OK ? ark_pool_save(w->pos, &wr) : st;
    st = st == ARK_OK ? ark_table_save(w->vel, &wr) : st;
    return st == ARK_OK ? ark_idset_save(w->tag, &wr) : st;
}

static void fw_destroy(fworld *w) {
    ark_table_destroy(w->vel);
    ark_pool_destroy(w->pos);
    ark_idset_destroy(w->tag);
    ark_pool_destroy(w->units);
    w->units = w->pos = NULL;
    w->vel = NULL;
    w->tag = NULL;
}

FUZZ_NO_COVERAGE static void fw_valid(const fworld *w) {
    FUZZ_REQUIRE(ark_pool_validate(w->units) == ARK_OK);
    FUZZ_REQUIRE(ark_pool_validate(w->pos) == ARK_OK);
    FUZZ_REQUIRE(ark_table_validate(w->vel) == ARK_OK);
    FUZZ_REQUIRE(ark_idset_validate(w->tag) == ARK_OK);
    /* A keyed element belongs to its entity; a tagged live entity's id is
     * in the set. */
    for (ark_pool_iter it = ark_pool_iter_begin(w->pos);
         ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
        FUZZ_REQUIRE(ark_pool_get(w->pos, it.handle) == it.elem);
    }
    for (size_t r = 0; r < ark_table_rows(w->vel); r++) {
        ark_handle h = ark_table_handle_at(w->vel, r);
        FUZZ_REQUIRE(h == ARK_NULL_HANDLE || ark_table_row(w->vel, h) == r);
    }
    for (uint32_t id = 1; id < fw_limit(w); id++) {
        ark_handle h = ark_pool_handle_by_id(w->units, id);
        FUZZ_REQUIRE(h == ARK_NULL_HANDLE || ark_pool_id(w->units, h) == id);
        FUZZ_REQUIRE(ark_pool_has_tag(w->units, w->tag, h) ==
                     (h != ARK_NULL_HANDLE && ark_idset_contains(w->tag, id)));
    }
}

/* Whether the entity with id `id` is live and has (mode 1) or lacks
 * (mode 2) pos, vel and the tag, by lookups. */
FUZZ_NO_COVERAGE static bool fw_matches(const fworld *w, const unsigned *mode,
                                        uint32_t id) {
    ark_handle h = ark_pool_handle_by_id(w->units, id);
    if (h == ARK_NULL_HANDLE) {
        return false;
    }
    bool has[3] = {ark_pool_get(w->pos, h) != NULL,
                   ark_table_row(w->vel, h) != ARK_NO_ROW,
                   ark_pool_has_tag(w->units, w->tag, h)};
    for (int k = 0; k < 3; k++) {
        if (mode[k] != 0 && has[k] != (mode[k] == 1)) {
            return false;
        }
    }
    return true;
}

/* A query from the bits of sel (two bits per term: none, with, without;
 * pos, vel, tag) visits exactly the entities that lookups say match, in
 * id order, with their elements and rows. */
FUZZ_NO_COVERAGE static void fw_query(const fworld *w, uint8_t sel) {
    ark_query q;
    ark_query_init(&q, w->units);
    unsigned mode[3], term[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        mode[k] = (sel >> (2 * k)) & 3;
        mode[k] = mode[k] == 3 ? 0 : mode[k];
    }
    if (mode[0] != 0) {
        FUZZ_REQUIRE((mode[0] == 1 ? ark_query_with_pool(&q, w->pos, &term[0])
                                   : ark_query_without_pool(
                                         &q, w->pos, &term[0])) == ARK_OK);
    }
    if (mode[1] != 0) {
        FUZZ_REQUIRE((mode[1] == 1 ? ark_query_with_table(&q, w->vel, &term[1])
                                   : ark_query_without_table(
                                         &q, w->vel, &term[1])) == ARK_OK);
    }
    if (mode[2] != 0) {
        FUZZ_REQUIRE((mode[2] == 1 ? ark_query_with_tag(&q, w->tag, &term[2])
                                   : ark_query_without_tag(
                                         &q, w->tag, &term[2])) == ARK_OK);
    }
    uint32_t next = 1;
    for (ark_query_iter it = ark_query_iter_begin(&q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        FUZZ_REQUIRE(it.id >= next && it.id < fw_limit(w));
        for (; next < it.id; next++) {
            FUZZ_REQUIRE(!fw_matches(w, mode, next));
        }
        FUZZ_REQUIRE(fw_matches(w, mode, it.id));
        ark_handle h = ark_pool_handle_by_id(w->units, it.id);
        FUZZ_REQUIRE(ark_query_iter_handle(&it) == h);
        if (mode[0] == 1) {
            FUZZ_REQUIRE(ark_query_iter_elem(&it, term[0]) ==
                         ark_pool_get(w->pos, h));
        }
        if (mode[1] == 1) {
            FUZZ_REQUIRE(ark_query_iter_row(&it, term[1]) ==
                         ark_table_row(w->vel, h));
        }
        next = it.id + 1;
    }
    for (; next < fw_limit(w); next++) {
        FUZZ_REQUIRE(!fw_matches(w, mode, next));
    }
}

/* Save w, load that into a second world, and both must be the same:
 * every id's handle, element, component, row and tag; saving the second
 * gives the same bytes. */
FUZZ_NO_COVERAGE static void fw_round_trip(fworld *w) {
    snap_mem a = {NULL, 0, 0, 0}, b = {NULL, 0, 0, 0};
    FUZZ_REQUIRE(fw_save(w, &a) == ARK_OK);
    fworld v = {NULL, NULL, NULL, NULL, w->fa, w->layout, w->hooks};
    ark_reader r = {snap_mem_read, &a};
    FUZZ_REQUIRE(fw_load(&v, &r) == ARK_OK && a.pos == a.len);
    FUZZ_REQUIRE(ark_pool_count(v.units) == ark_pool_count(w->units));
    FUZZ_REQUIRE(ark_pool_count(v.pos) == ark_pool_count(w->pos));
    FUZZ_REQUIRE(ark_table_rows(v.vel) == ark_table_rows(w->vel));
    FUZZ_REQUIRE(ark_idset_count(v.tag) == ark_idset_count(w->tag));
    for (uint32_t id = 1; id < fw_limit(w); id++) {
        ark_handle h = ark_pool_handle_by_id(w->units, id);
        FUZZ_REQUIRE(ark_pool_handle_by_id(v.units, id) == h);
        FUZZ_REQUIRE(ark_idset_contains(v.tag, id) ==
                     ark_idset_contains(w->tag, id));
        if (h == ARK_NULL_HANDLE) {
            continue;
        }
        const uint64_t *x = ark_pool_get(w->units, h);
        const uint64_t *y = ark_pool_get(v.units, h);
        FUZZ_REQUIRE(x != NULL && y != NULL && *x == *y);
        const fw_pos *p = ark_pool_get(w->pos, h), *q = ark_pool_get(v.pos, h);
        FUZZ_REQUIRE((p == NULL) == (q == NULL));
        FUZZ_REQUIRE(p == NULL || memcmp(p, q, sizeof *p) == 0);
        size_t row = ark_table_row(w->vel, h);
        FUZZ_REQUIRE(ark_table_row(v.vel, h) == row);
        if (row != ARK_NO_ROW) {
            FUZZ_REQUIRE(((const uint64_t *)ark_table_column(w->vel, 0))[row] ==
                         ((const uint64_t *)ark_table_column(v.vel, 0))[row]);
        }
    }
    FUZZ_REQUIRE(fw_save(&v, &b) == ARK_OK);
    FUZZ_REQUIRE(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    fw_valid(&v);
    fw_destroy(&v);
    free(a.data);
    free(b.data);
}

static void fw_clear(fworld *w, uint8_t which) {
    bool hook = (which & 4) != 0;
    switch (which & 3) {
    case 0:
        ark_pool_clear(w->units, hook);
        FUZZ_REQUIRE(ark_pool_count(w->units) == 0);
        FUZZ_REQUIRE(ark_idset_count(w->tag) == 0);
        break;
    case 1:
        ark_pool_clear(w->pos, hook);
        FUZZ_REQUIRE(ark_pool_count(w->pos) == 0);
        break;
    default:
        ark_table_clear(w->vel, hook);
        FUZZ_REQUIRE(ark_table_rows(w->vel) == 0);
        break;
    }
}

/* One operation: op (low nibble: what; bit 7: fail an allocation of it,
 * after bits 4-5 succeed) on the entity with id `id`. */
static void run_op(fworld *w, uint8_t op, uint32_t id, uint8_t arg) {
    ark_handle h = ark_pool_handle_by_id(w->units, id);
    bool armed = (op & 0x80) != 0;
    if (armed) {
        w->fa->fail_next = 1;
        w->fa->fail_skip = (op >> 4) & 3;
    }
    bool had_pos = h != ARK_NULL_HANDLE && ark_pool_get(w->pos, h) != NULL;
    bool had_vel =
        h != ARK_NULL_HANDLE && ark_table_row(w->vel, h) != ARK_NO_ROW;
    ark_status st = ARK_OK;
    switch (op & 15) {
    case 0:
        st = ark_pool_remove(w->units, h);
        FUZZ_REQUIRE(h == ARK_NULL_HANDLE
                         ? st == ARK_ENULL
                         : st == ARK_OK || (armed && st == ARK_ENOMEM));
        if (st == ARK_OK) {
            FUZZ_REQUIRE(ark_pool_get(w->units, h) == NULL);
            FUZZ_REQUIRE(ark_pool_get(w->pos, h) == NULL);
            FUZZ_REQUIRE(ark_table_row(w->vel, h) == ARK_NO_ROW);
            FUZZ_REQUIRE(!ark_idset_contains(w->tag, id));
        }
        break;
    case 1:
        st = ark_pool_remove_later(w->units, h);
        FUZZ_REQUIRE(st == (h == ARK_NULL_HANDLE ? ARK_ENULL : ARK_OK) ||
                     (armed && st == ARK_ENOMEM));
        break;
    case 2:
        (void)ark_pool_flush(w->units);
        break;
    case 3:
        st = ark_pool_remove(w->pos, h);
        FUZZ_REQUIRE((st == ARK_OK) == had_pos);
        break;
    case 4:
        st = ark_pool_remove_later(w->pos, h);
        FUZZ_REQUIRE((st == ARK_OK) == had_pos || (armed && st == ARK_ENOMEM));
        break;
    case 5:
        (void)ark_pool_flush(w->pos);
        break;
    case 6:
        st = ark_table_remove(w->vel, h);
        FUZZ_REQUIRE((st == ARK_OK) == had_vel);
        break;
    case 7:
        st = ark_table_remove_later(w->vel, h);
        FUZZ_REQUIRE((st == ARK_OK) == had_vel || (armed && st == ARK_ENOMEM));
        break;
    case 8:
        (void)ark_table_flush(w->vel);
        break;
    case 9: {
        uint64_t v = arg;
        st = ark_pool_insert(w->units, &v, &h);
        if (st == ARK_OK) {
            fw_pos p = {id, arg};
            (void)ark_pool_insert_at(w->pos, h, &p);
            size_t row;
            if (ark_table_insert_at(w->vel, h, &row) == ARK_OK) {
                ((uint64_t *)ark_table_column(w->vel, 0))[row] = v;
            }
            (void)ark_pool_tag(w->units, w->tag, h);
        }
        break;
    }
    case 10:
        st = ark_pool_tag(w->units, w->tag, h);
        FUZZ_REQUIRE(st != ARK_OK || ark_pool_has_tag(w->units, w->tag, h));
        break;
    case 11:
        st = ark_pool_untag(w->units, w->tag, h);
        FUZZ_REQUIRE(!ark_pool_has_tag(w->units, w->tag, h) ||
                     (armed && st == ARK_ENOMEM));
        break;
    case 12:
        w->fa->fail_next = 0;
        fw_query(w, arg);
        break;
    case 13:
        fw_clear(w, arg);
        break;
    case 14:
        w->fa->fail_next = 0;
        fw_round_trip(w);
        break;
    default: {
        /* a handle altered or forged finds nothing, changes nothing */
        ark_handle f = h ^ ((uint64_t)1 << (arg & 63));
        if (f != h && ark_pool_get(w->units, f) == NULL) {
            FUZZ_REQUIRE(!ark_pool_has_tag(w->units, w->tag, f));
            FUZZ_REQUIRE(ark_pool_remove(w->units, f) != ARK_OK);
            FUZZ_REQUIRE(ark_pool_tag(w->units, w->tag, f) != ARK_OK);
            FUZZ_REQUIRE(ark_pool_insert_at(w->pos, f, &(fw_pos){0, 0}) !=
                         ARK_OK);
        }
        break;
    }
    }
    w->fa->fail_next = 0;
    FUZZ_REQUIRE(st == ARK_OK || st != ARK_ENOMEM || armed);
    fw_valid(w);
}

/* The stream: the input after the flags byte, or, segmented, the four
 * snapshots (checksums recomputed) followed by the rest. */
static snap_mem fw_input(const uint8_t *data, size_t size) {
    if (size < 1 || !(data[0] & 1)) {
        return snap_input(data, size, 0); /* the bytes as they are */
    }
    snap_mem m = {NULL, size - 1, size - 1, 0};
    m.data = malloc(m.len + 1);
    FUZZ_REQUIRE(m.data != NULL);
    memcpy(m.data, data + 1, m.len);
    if (m.len < 8) {
        return m;
    }
    static const size_t desc[4] = {
        ARK__SNAP_HEADER_BYTES, ARK__SNAP_HEADER_BYTES,
        ARK__SNAP_HEADER_BYTES + 8 * 2, ARK__SNAP_HEADER_BYTES};
    size_t off = 8;
    for (int k = 0; k < 4; k++) {
        size_t len = (size_t)m.data[2 * k] | (size_t)m.data[2 * k + 1] << 8;
        len = len < m.len - off ? len : m.len - off;
        if (len >= desc[k] + 16) {
            uint8_t *p = m.data + off;
            ark__snap_sum h;
            ark__snap_sum_init(&h);
            ark__snap_sum_update(&h, p, desc[k]);
            snap_put_le64(p + desc[k], ark__snap_sum_digest(&h));
            ark__snap_sum_init(&h);
            ark__snap_sum_update(&h, p, len - 8);
            snap_put_le64(p + len - 8, ark__snap_sum_digest(&h));
        }
        off += len;
    }
    m.pos = 8; /* the loads start after the lengths */
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    snap_mem m = fw_input(data, size);
    if (m.data == NULL) {
        return 0;
    }
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    fworld w = {
        NULL, NULL, NULL, NULL, &fa, (data[0] >> 2) & 1u, (data[0] & 2) != 0};
    if (data[0] & 8) {
        snap_arm(&fa, data[0]);
    }
    ark_reader r = {snap_mem_read, &m};
    ark_status st = fw_load(&w, &r);
    fa.fail_next = 0;
    if (st != ARK_OK) {
        FUZZ_REQUIRE(st == ARK_ECORRUPT || st == ARK_EINVAL ||
                     st == ARK_ENOMEM);
        fw_destroy(&w);
        FUZZ_REQUIRE(fa.live == 0);
        free(m.data);
        return 0;
    }
    fw_valid(&w);
    fw_query(&w, 0);
    fuzz_input in = {m.data, m.len, m.pos};
    for (int n = 0; n < 64 && !fuzz_done(&in); n++) {
        uint8_t op = fuzz_u8(&in);
        uint32_t id = fuzz_u8(&in);
        if (w.layout) {
            id |= (uint32_t)(op & 0x40) << 2 | (uint32_t)(op & 0x20) << 4;
        }
        run_op(&w, op, id, fuzz_u8(&in));
    }
    fw_round_trip(&w);
    fw_destroy(&w);
    FUZZ_REQUIRE(fa.live == 0);
    free(m.data);
    return 0;
}
