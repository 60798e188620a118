/*
 * fuzz_idmap.c - ark_idmap against a model, driven by fuzz input.
 *
 * The model is a flat array of (key, value) pairs. Keys come from the
 * input as full 64-bit values, as small values (so keys repeat and runs
 * form), as the extremes 0 and UINT64_MAX, or as a key the model holds.
 * Every step checks count, the layout invariants the header states
 * (control bytes and their mirror, every entry in the run of its home
 * slot), and that iteration and each visit exactly the model's entries.
 * Allocation failures are injected on demand; reserve takes sizes from
 * the input, up to SIZE_MAX.
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
    if (map->capacity == 0) {
        FUZZ_REQUIRE(map->count == 0);
        return;
    }
    size_t cap = map->capacity, full = 0;
    FUZZ_REQUIRE((cap & (cap - 1)) == 0 && cap >= 16 && map->mask == cap - 1);
    FUZZ_REQUIRE(map->count < cap && map->count <= cap - cap / 8);
    for (size_t i = 0; i < ARK__IDMAP_MIRROR; i++) {
        FUZZ_REQUIRE(map->ctrl[cap + i] == map->ctrl[i]);
    }
    for (size_t i = 0; i < cap; i++) {
        if (map->ctrl[i] == 0) {
            continue;
        }
        full++;
        uint64_t h = ark__idmap_hash(map->seed, map->slots[i].key);
        FUZZ_REQUIRE(map->ctrl[i] == ark__idmap_tag(h));
        /* No empty slot between the key's home and the key. */
        for (size_t j = (size_t)h & map->mask; j != i;
             j = (j + 1) & map->mask) {
            FUZZ_REQUIRE(map->ctrl[j] != 0);
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
    if (deep == 0 || (deep == 1 && map->capacity > DEEP_MAX)) {
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
    ark_idmap *map;
    ark_status cs = ark_idmap_create(&map, &fa.base);
    if (cs != ARK_OK) {
        FUZZ_REQUIRE(cs == ARK_ENOMEM && fa.fail_next == 0 && fa.live == 0);
        return 0;
    }
    FUZZ_REQUIRE(ark_idmap_count(map) == 0);
    int deep = !(shape & 4); /* layout and iteration after every step */
    while (!fuzz_done(&in)) {
        uint8_t op = fuzz_u8(&in);
        fa.fail_next = (op & 0x80) != 0;
        switch (op & 0x0f) {
        case 0:
        case 1:
        case 2: { /* put */
            uint64_t key = pick_key(&in, &m);
            uint64_t value = fuzz_u64(&in);
            size_t i = find(&m, key);
            ark_status s = ark_idmap_put(map, key, value);
            if (i != SIZE_MAX) {
                FUZZ_REQUIRE(s == ARK_OK); /* overwriting never fails */
                m.e[i].value = value;
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
            size_t cap = map->capacity;
            ark_status s = ark_idmap_reserve(map, n);
            if (s == ARK_OK) {
                FUZZ_REQUIRE(map->capacity - map->capacity / 8 >= n);
                /* puts up to n allocate nothing: checked by arming */
                if (m.n < n && m.n < MODEL_MAX) {
                    uint64_t key = fuzz_u64(&in);
                    if (find(&m, key) == SIZE_MAX) {
                        fa.fail_next = 1;
                        FUZZ_REQUIRE(ark_idmap_put(map, key, 7) == ARK_OK);
                        m.e[m.n++] = (pair){key, 7};
                    }
                }
            } else {
                FUZZ_REQUIRE(s == ARK_ENOMEM && map->capacity == cap);
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
                size_t cap = map->capacity;
                ark_idmap_clear(map);
                m.n = 0;
                FUZZ_REQUIRE(map->capacity == cap);
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
