/* SPDX-License-Identifier: MIT */
/*
 * fuzz_idmap.c - ark_idmap against a model, driven by fuzz input.
 *
 * The model is a flat array of (key, value) pairs. Keys come from the
 * input as full 64-bit values, as small values (so keys repeat and runs
 * form), as the extremes 0 and UINT64_MAX, or as a key the model holds.
 * Every step checks count, the layout invariants the header states
 * (tags, every entry within the probe bound with the overflow bits of
 * the groups it passes set), and that iteration and each visit exactly the
 * model's entries. Allocation failures are injected on demand; reserve takes
 * sizes from the input, up to SIZE_MAX. One input in two uses the C
 * library's allocator instead (no injected failures), whose tables past
 * 64 KiB grow in place in a reservation; its reserves are cut to 16 bits,
 * so that a table walked at the end stays small. The seed is fixed (and may be
 * set again by the input while the map is empty) so that every input replays.
 */
#include "ark/idmap.h"
#include "fuzz_common.h"

#define MODEL_MAX 2048
#define DEEP_MAX 4096 /* capacity up to which every step walks the table */

typedef struct pair {
    uint64_t key, value;
} pair;

typedef struct model {
    pair e[MODEL_MAX];
    size_t n;
    unsigned char seen[MODEL_MAX];
} model;

FUZZ_NO_COVERAGE static size_t find(const model *m, uint64_t key) {
    for (size_t i = 0; i < m->n; i++) {
        if (m->e[i].key == key) {
            return i;
        }
    }
    return SIZE_MAX;
}

static uint64_t pick_key(fuzz_input *in, const model *m) {
    uint8_t how = fuzz_u8(in);
    switch (how & 3) {
    case 0:
        return fuzz_u64(in);
    case 1:
        return how >> 2; /* small keys */
    case 2:
        if (m->n > 0) {
            return m->e[fuzz_u8(in) % m->n].key;
        }
        return 0;
    default:
        return (how & 4) ? UINT64_MAX : 0;
    }
}

/* Visit callback for ark_idmap_each: marks the model entry, stops after
 * *limit visits. */
typedef struct walk {
    model *m;
    size_t visits, limit;
} walk;

static bool visit(uint64_t key, uint64_t value, void *ud) {
    walk *w = ud;
    size_t i = find(w->m, key);
    FUZZ_REQUIRE(i != SIZE_MAX && w->m->e[i].value == value);
    FUZZ_REQUIRE(!w->m->seen[i]);
    w->m->seen[i] = 1;
    w->visits++;
    return w->visits < w->limit;
}

/* Keys in each's order, to compare with the iterator's. */
typedef struct order {
    uint64_t keys[MODEL_MAX];
    size_t n, at;
} order;

static bool record(uint64_t key, uint64_t value, void *ud) {
    order *o = ud;
    (void)value;
    FUZZ_REQUIRE(o->n < MODEL_MAX);
    o->keys[o->n++] = key;
    return true;
}

FUZZ_NO_COVERAGE static void check_layout(const ark_idmap *map) {
    if (map->groups == 0) {
        FUZZ_REQUIRE(map->count == 0 && map->gmask == 0);
        return;
    }
    size_t groups = map->groups, full = 0;
    FUZZ_REQUIRE((groups & (groups - 1)) == 0 && map->gmask == groups - 1);
    FUZZ_REQUIRE(map->mul == ark__idmap_mul(map->seed));
    FUZZ_REQUIRE(map->count <= map->max_load &&
                 map->count <= groups * ARK__IDMAP_SLOTS * 7 / 8);
    for (size_t i = 0; i < groups * ARK__IDMAP_SLOTS; i++) {
        size_t g = i / ARK__IDMAP_SLOTS;
        uint8_t c = map->ctrl[g * 16 + i % ARK__IDMAP_SLOTS];
        if (c == 0) {
            continue;
        }
        full++;
        uint64_t h = ark__idmap_hash_in(map, map->slots[i].key);
        FUZZ_REQUIRE(c == ark__idmap_tag(h));
        /* Within the probe bound, every group passed marked overflowed. */
        size_t p = (size_t)h & map->gmask, probes = 1;
        for (size_t step = 1; p != g; step++, probes++) {
            FUZZ_REQUIRE(probes < ARK_IDMAP_MAX_PROBE);
            FUZZ_REQUIRE(map->ctrl[p * 16 + 15] & ark__idmap_ofw(h));
            p = (p + step) & map->gmask;
        }
    }
    FUZZ_REQUIRE(full == map->count);
}

/* deep: 0 count only, 1 also layout and iteration when the table is small,
 * 2 always. */
FUZZ_NO_COVERAGE static void check_all(ark_idmap *map, model *m, int deep) {
    FUZZ_REQUIRE(ark_idmap_count(map) == m->n);
    /* A large reserve makes the table up to 2^21 slots: walking it after
     * every step would spend the run there; it is walked once at the end. */
    if (deep == 0 || (deep == 1 && map->groups * ARK__IDMAP_SLOTS > DEEP_MAX)) {
        return;
    }
    check_layout(map);
    for (size_t i = 0; i < m->n; i++) {
        uint64_t v = ~m->e[i].value;
        FUZZ_REQUIRE(ark_idmap_get(map, m->e[i].key, &v));
        FUZZ_REQUIRE(v == m->e[i].value);
    }
    memset(m->seen, 0, m->n);
    size_t n = 0;
    for (ark_idmap_iter it = ark_idmap_iter_begin(map);
         ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {
        size_t i = find(m, it.key);
        FUZZ_REQUIRE(i != SIZE_MAX && m->e[i].value == it.value);
        FUZZ_REQUIRE(!m->seen[i]);
        m->seen[i] = 1;
        n++;
    }
    FUZZ_REQUIRE(n == m->n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    static model m;
    m.n = 0;
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    uint8_t shape = fuzz_u8(&in);
    fa.fail_next = (shape & 3) == 3;
    bool sys = (shape & 8) != 0; /* the C library's allocator */
    ark_idmap *map;
    ark_status cs = ark_idmap_create(&map, sys ? NULL : &fa.base);
    if (cs != ARK_OK) {
        FUZZ_REQUIRE(cs == ARK_ENOMEM && fa.fail_next == 0 && fa.live == 0);
        return 0;
    }
    FUZZ_REQUIRE(ark_idmap_count(map) == 0);
    ark_idmap_set_seed(map, 0x243f6a8885a308d3ull); /* replayable */
    int deep = !(shape & 4); /* layout and iteration after every step */
    while (!fuzz_done(&in)) {
        uint8_t op = fuzz_u8(&in);
        fa.fail_next = (op & 0x80) != 0;
        switch (op & 0x0f) {
        case 0:
        case 1:
        case 2:
        case 10: { /* put, or insert: a present key keeps its value */
            bool put = (op & 0x0f) != 10;
            uint64_t key = pick_key(&in, &m);
            uint64_t value = fuzz_u64(&in);
            size_t i = find(&m, key);
            ark_status s = put ? ark_idmap_put(map, key, value)
                               : ark_idmap_insert(map, key, value);
            if (i != SIZE_MAX) {
                /* overwriting never fails */
                FUZZ_REQUIRE(s == (put ? ARK_OK : ARK_EEXIST));
                if (put) {
                    m.e[i].value = value;
                }
            } else if (s == ARK_OK) {
                FUZZ_REQUIRE(m.n < MODEL_MAX);
                m.e[m.n++] = (pair){key, value};
            } else {
                FUZZ_REQUIRE(s == ARK_ENOMEM && (op & 0x80));
                FUZZ_REQUIRE(!ark_idmap_get(map, key, NULL));
            }
            break;
        }
        case 3:
        case 4: { /* remove */
            uint64_t key = pick_key(&in, &m);
            size_t i = find(&m, key);
            FUZZ_REQUIRE(ark_idmap_remove(map, key) == (i != SIZE_MAX));
            if (i != SIZE_MAX) {
                m.e[i] = m.e[--m.n];
            }
            FUZZ_REQUIRE(!ark_idmap_get(map, key, NULL));
            break;
        }
        case 5: { /* get, get with NULL, get_ptr: an arbitrary key */
            uint64_t key = pick_key(&in, &m);
            size_t i = find(&m, key);
            uint64_t v = 0x5a5a5a5a5a5a5a5a;
            bool got = ark_idmap_get(map, key, &v);
            FUZZ_REQUIRE(got == (i != SIZE_MAX));
            FUZZ_REQUIRE(got ? v == m.e[i].value : v == 0x5a5a5a5a5a5a5a5a);
            FUZZ_REQUIRE(ark_idmap_get(map, key, NULL) == got);
            uint64_t *p = ark_idmap_get_ptr(map, key);
            FUZZ_REQUIRE((p != NULL) == got);
            if (p != NULL) {
                FUZZ_REQUIRE(*p == m.e[i].value);
                *p = m.e[i].value = fuzz_u64(&in); /* write in place */
            }
            break;
        }
        case 6: { /* reserve: small, 16-bit, or any size_t */
            uint8_t how = fuzz_u8(&in);
            size_t n = (how & 1)   ? (size_t)fuzz_u64(&in)
                       : (how & 2) ? (size_t)(how >> 2) * 64
                                   : (size_t)(how >> 2);
            if (sys) {
                n &= 0xffff;
            }
            size_t cap = map->groups;
            ark_status s = ark_idmap_reserve(map, n);
            if (s == ARK_OK) {
                FUZZ_REQUIRE(map->groups * ARK__IDMAP_SLOTS * 7 / 8 >= n);
                /* puts up to n allocate nothing (checked by arming) unless
                 * enough colliding keys force a re-seed */
                if (m.n < n && m.n < MODEL_MAX) {
                    uint64_t key = fuzz_u64(&in);
                    if (find(&m, key) == SIZE_MAX) {
                        fa.fail_next = 1;
                        ark_status ps = ark_idmap_put(map, key, 7);
                        FUZZ_REQUIRE(ps == ARK_OK ||
                                     m.n >= ARK__IDMAP_SLOTS *
                                                ARK_IDMAP_MAX_PROBE);
                        if (ps == ARK_OK) {
                            m.e[m.n++] = (pair){key, 7};
                        }
                    }
                }
            } else {
                FUZZ_REQUIRE(s == ARK_ENOMEM && map->groups == cap);
            }
            break;
        }
        case 7: { /* each, stopping after limit visits */
            walk w = {&m, 0, fuzz_u8(&in)};
            if (w.limit == 0) {
                w.limit = SIZE_MAX;
            }
            memset(m.seen, 0, m.n);
            ark_idmap_each(map, visit, &w);
            FUZZ_REQUIRE(w.visits == (m.n < w.limit ? m.n : w.limit));
            break;
        }
        case 8: /* clear (keeps the table) */
            if ((op & 0x70) == 0x70) {
                size_t cap = map->groups;
                ark_idmap_clear(map);
                m.n = 0;
                FUZZ_REQUIRE(map->groups == cap);
            }
            break;
        case 9: { /* iteration visits entries in each's order */
            static order o;
            o.n = o.at = 0;
            ark_idmap_each(map, record, &o);
            FUZZ_REQUIRE(o.n == m.n);
            for (ark_idmap_iter it = ark_idmap_iter_begin(map);
                 ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {
                FUZZ_REQUIRE(o.at < o.n && o.keys[o.at++] == it.key);
            }
            FUZZ_REQUIRE(o.at == o.n);
            break;
        }
        case 11: { /* take, with or without the old value */
            uint64_t key = pick_key(&in, &m);
            size_t i = find(&m, key);
            uint64_t old = 0x5a5a5a5a5a5a5a5a;
            bool got = ark_idmap_take(map, key, (op & 0x10) ? NULL : &old);
            FUZZ_REQUIRE(got == (i != SIZE_MAX));
            if (!(op & 0x10)) {
                FUZZ_REQUIRE(old == (got ? m.e[i].value : 0x5a5a5a5a5a5a5a5a));
            }
            if (got) {
                m.e[i] = m.e[--m.n];
            }
            FUZZ_REQUIRE(!ark_idmap_get(map, key, NULL));
            break;
        }
        case 12: { /* set_seed: only an empty map takes it */
            uint64_t seed = fuzz_u64(&in), before = map->seed;
            ark_idmap_set_seed(map, seed);
            FUZZ_REQUIRE(map->seed == (m.n == 0 ? seed : before));
            break;
        }
        default:
            break;
        }
        check_all(map, &m, deep);
    }
    check_all(map, &m, 2); /* deep whatever the size */
    ark_idmap_destroy(map);
    FUZZ_REQUIRE(fa.live == 0);
    return 0;
}
