/*
 * idmap.c - ark_idmap: linear probing over 16-byte slots, with a parallel
 * array of control bytes probed a group at a time.
 *
 * Why this design (measured, see docs/idmap.md): slots that hold the key
 * inline make a hit cheap (the key is compared where the value is), but a
 * miss must walk the whole run of slots; Swiss-table control bytes make a
 * miss cheap (one group of 16 bytes usually shows an empty byte) but cost a
 * second memory access on a hit. Control bytes for the miss plus linear,
 * slot-granular probing give both: the run that holds a key starts at its
 * home slot, so a hit is almost always in the first group and in the first
 * cache line or two of slots.
 *
 * Table memory (one allocation, 64-byte aligned):
 *   slots[capacity]                   16 bytes each: key, value
 *   ctrl[capacity + ARK__IDMAP_MIRROR] 0 = empty, 0x80 | hash >> 57 = full;
 *                                      ctrl[capacity + i] == ctrl[i]
 * A full slot's key is meaningful; an empty slot's key and value are junk,
 * which is why no key value needs to be reserved as a marker.
 *
 * Removal without tombstones (Knuth's algorithm R, "backward shift"):
 * emptying slot p can break the run of a later key whose home precedes p.
 * So the walk continues through the run after p; each entry that may move
 * (its home is not in (p, j], cyclically) moves back into the hole, and its
 * old slot becomes the new hole. The run ends at the first empty slot.
 * Afterwards the table is exactly as if the removed key had never been
 * inserted (up to order within runs), so churn never degrades lookups and
 * nothing ever needs a cleanup rehash.
 */
#include "ark/idmap.h"

#include "core_internal.h"

#include <assert.h>
#include <string.h>

/* The one external definition of each inline function of idmap.h. */
ARK_API extern inline uint64_t ark__idmap_hash(uint64_t seed, uint64_t key);
ARK_API extern inline uint8_t ark__idmap_tag(uint64_t h);
ARK_API extern inline ark__idmap_group ark__idmap_load(const uint8_t *p);
ARK_API extern inline ark__idmap_mask ark__idmap_match(ark__idmap_group g,
                                                       uint8_t tag);
ARK_API extern inline ark__idmap_mask ark__idmap_full(ark__idmap_group g);
ARK_API extern inline ark__idmap_mask ark__idmap_empty(ark__idmap_group g);
ARK_API extern inline ark_idmap_slot *
ark__idmap_probe(const ark_idmap *m, uint64_t key, uint64_t h, size_t *empty);
ARK_API extern inline ark_idmap_slot *ark__idmap_find(const ark_idmap *m,
                                                      uint64_t key);
ARK_API extern inline bool ark_idmap_get(const ark_idmap *m, uint64_t key,
                                         uint64_t *value);
ARK_API extern inline uint64_t *ark_idmap_get_ptr(ark_idmap *m, uint64_t key);
ARK_API extern inline void ark__idmap_iter_seek(ark_idmap_iter *it,
                                                size_t from);
ARK_API extern inline ark_idmap_iter ark_idmap_iter_begin(const ark_idmap *m);
ARK_API extern inline bool ark_idmap_iter_valid(const ark_idmap_iter *it);
ARK_API extern inline void ark_idmap_iter_next(ark_idmap_iter *it);

/* The seed every map starts with: iteration order is reproducible. */
#define SEED0 0x243f6a8885a308d3ull
#define MIN_CAPACITY 16

/* Entries a table of cap slots may hold before it grows: 7/8 of it. */
static size_t max_load(size_t cap) { return cap - cap / 8; }

/* Bytes of a table of cap slots, or 0 on overflow. */
static size_t table_bytes(size_t cap) {
    size_t slots;
    if (ark__mul_overflows(cap, sizeof(ark_idmap_slot), &slots) ||
        slots > SIZE_MAX - cap - ARK__IDMAP_MIRROR) {
        return 0;
    }
    return slots + cap + ARK__IDMAP_MIRROR;
}

static void set_ctrl(ark_idmap *m, size_t i, uint8_t c) {
    m->ctrl[i] = c;
    if (i < ARK__IDMAP_MIRROR) {
        m->ctrl[m->capacity + i] = c;
    }
}

/* Return the first empty slot at or after i (one exists: load < 1). */
static size_t first_empty(const ark_idmap *m, size_t i) {
    for (;;) {
        ark__idmap_mask e = ark__idmap_empty(ark__idmap_load(m->ctrl + i));
        if (e != 0) {
            return (i + (ark__ctz64(e) >> ARK__IDMAP_BIT_SHIFT)) & m->mask;
        }
        i = (i + ARK__IDMAP_GROUP) & m->mask;
    }
}

static void free_table(ark_idmap *m) {
    if (m->capacity != 0) {
        ark__free(&m->alloc, m->slots, table_bytes(m->capacity));
    }
}

/* Move every entry into a new table of cap slots hashed with seed. On
 * ENOMEM the map is untouched. */
static ark_status rehash(ark_idmap *m, size_t cap, uint64_t seed) {
    size_t bytes = table_bytes(cap);
    if (bytes == 0) {
        return ARK_ENOMEM;
    }
    ark_idmap_slot *slots = ark__alloc(&m->alloc, bytes, 64);
    if (slots == NULL) {
        return ARK_ENOMEM;
    }
    ark_idmap n = *m;
    n.slots = slots;
    n.ctrl = (uint8_t *)(slots + cap);
    n.capacity = cap;
    n.mask = cap - 1;
    n.seed = seed;
    memset(n.ctrl, 0, cap + ARK__IDMAP_MIRROR);
    /* Whole groups of control bytes at a time: no branch per empty slot.
     * Capacity is a multiple of the group size, so no mirror byte is read. */
    for (size_t base = 0; base < m->capacity; base += ARK__IDMAP_GROUP) {
        ark__idmap_mask full = ark__idmap_full(ark__idmap_load(m->ctrl + base));
        while (full != 0) {
            size_t i = base + (ark__ctz64(full) >> ARK__IDMAP_BIT_SHIFT);
            uint64_t h = ark__idmap_hash(seed, m->slots[i].key);
            size_t j = first_empty(&n, (size_t)h & n.mask);
            n.slots[j] = m->slots[i];
            set_ctrl(&n, j, ark__idmap_tag(h));
            full &= full - 1;
        }
    }
    free_table(m);
    m->slots = n.slots;
    m->ctrl = n.ctrl;
    m->capacity = n.capacity;
    m->mask = n.mask;
    m->seed = n.seed;
    return ARK_OK;
}

/* Point the map at its built-in empty table. */
static void set_no_table(ark_idmap *m) {
    m->slots = &m->spare_slot;
    m->ctrl = m->spare_ctrl;
    memset(m->spare_ctrl, 0, sizeof m->spare_ctrl);
    m->capacity = 0;
    m->mask = 0;
    m->seed = SEED0;
    m->count = 0;
    m->reseed_cap = 0;
}

ark_status ark_idmap_create(ark_idmap **out, const ark_allocator *a) {
    assert(out != NULL);
    ark_allocator al;
    ark_status s = ark__allocator_init(&al, a);
    if (s != ARK_OK) {
        return s;
    }
    ark_idmap *m = ark__alloc(&al, sizeof *m, 0);
    if (m == NULL) {
        return ARK_ENOMEM;
    }
    memset(m, 0, sizeof *m);
    m->alloc = al;
    set_no_table(m);
    *out = m;
    return ARK_OK;
}

void ark_idmap_destroy(ark_idmap *m) {
    if (m == NULL) {
        return;
    }
    free_table(m);
    ark_allocator a = m->alloc;
    ark__free(&a, m, sizeof *m);
}

/* Smallest capacity whose load limit admits n entries, or 0 if none. */
static size_t capacity_for(size_t n) {
    size_t cap = MIN_CAPACITY;
    while (max_load(cap) < n) {
        if (cap > SIZE_MAX / 4) {
            return 0;
        }
        cap *= 2;
    }
    return cap;
}

ark_status ark_idmap_reserve(ark_idmap *m, size_t n) {
    assert(m != NULL);
    if (n <= max_load(m->capacity)) {
        return ARK_OK;
    }
    size_t cap = capacity_for(n);
    if (cap == 0) {
        return ARK_ENOMEM;
    }
    return rehash(m, cap, m->seed);
}

/* An insert landed far from home: rehash once per capacity with a seed
 * taken from addresses an outsider does not see (best effort). */
static void maybe_reseed(ark_idmap *m, uint64_t key) {
    if (m->reseed_cap == m->capacity) {
        return;
    }
    uint64_t salt = (uint64_t)(uintptr_t)m ^
                    ((uint64_t)(uintptr_t)m->slots << 17) ^ (uint64_t)m->count;
    uint64_t seed =
        ark__idmap_hash(m->seed ^ salt, key ^ 0x5851f42d4c957f2dull);
    if (rehash(m, m->capacity, seed) == ARK_OK) {
        m->reseed_cap = m->capacity;
    }
}

ark_status ark_idmap_put(ark_idmap *m, uint64_t key, uint64_t value) {
    assert(m != NULL);
    uint64_t h = ark__idmap_hash(m->seed, key);
    size_t i;
    ark_idmap_slot *s = ark__idmap_probe(m, key, h, &i);
    if (s != NULL) {
        s->value = value;
        return ARK_OK;
    }
    if (m->count >= max_load(m->capacity)) {
        size_t cap = m->capacity == 0 ? MIN_CAPACITY : m->capacity * 2;
        if (cap < m->capacity || rehash(m, cap, m->seed) != ARK_OK) {
            return ARK_ENOMEM;
        }
        h = ark__idmap_hash(m->seed, key);
        i = first_empty(m, (size_t)h & m->mask);
    }
    m->slots[i].key = key;
    m->slots[i].value = value;
    set_ctrl(m, i, ark__idmap_tag(h));
    m->count++;
    if (((i - (size_t)h) & m->mask) > ARK_IDMAP_RESEED_PROBE) {
        maybe_reseed(m, key);
    }
    return ARK_OK;
}

bool ark_idmap_remove(ark_idmap *m, uint64_t key) {
    assert(m != NULL);
    ark_idmap_slot *s = ark__idmap_find(m, key);
    if (s == NULL) {
        return false;
    }
    size_t hole = (size_t)(s - m->slots);
    size_t j = hole;
    for (;;) {
        j = (j + 1) & m->mask;
        if (m->ctrl[j] == 0) {
            break;
        }
        size_t home =
            (size_t)ark__idmap_hash(m->seed, m->slots[j].key) & m->mask;
        /* j may fill the hole unless its home lies in (hole, j]. */
        if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
            m->slots[hole] = m->slots[j];
            set_ctrl(m, hole, m->ctrl[j]);
            hole = j;
        }
    }
    set_ctrl(m, hole, 0);
    m->count--;
    return true;
}

size_t ark_idmap_count(const ark_idmap *m) {
    assert(m != NULL);
    return m->count;
}

void ark_idmap_clear(ark_idmap *m) {
    assert(m != NULL);
    if (m->capacity != 0) {
        memset(m->ctrl, 0, m->capacity + ARK__IDMAP_MIRROR);
    }
    m->count = 0;
    m->seed = SEED0;
    m->reseed_cap = 0;
}

void ark_idmap_each(const ark_idmap *m,
                    bool (*fn)(uint64_t key, uint64_t value, void *ud),
                    void *ud) {
    assert(m != NULL && fn != NULL);
    for (size_t i = 0; i < m->capacity; i += ARK__IDMAP_GROUP) {
        ark__idmap_mask full = ark__idmap_full(ark__idmap_load(m->ctrl + i));
        while (full != 0) {
            size_t j = i + (ark__ctz64(full) >> ARK__IDMAP_BIT_SHIFT);
            if (!fn(m->slots[j].key, m->slots[j].value, ud)) {
                return;
            }
            full &= full - 1;
        }
    }
}
