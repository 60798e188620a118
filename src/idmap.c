/* SPDX-License-Identifier: MIT */
/*
 * idmap.c - ark_idmap: groups of 15 slots probed with one 16-byte control
 * word each, overflow bits instead of tombstones, and a hard bound on how
 * far any key lies from its home.
 *
 * Why this design (measured, see docs/idmap.md): the earlier map probed
 * slot by slot (linear probing) and removed by shifting the rest of the run
 * back. That made removal cost the length of the run, and a run of
 * attacker-chosen consecutive homes made every miss and every removal in it
 * walk the whole run, whatever the detection on insert. With groups and
 * overflow bits a miss stops at the first group that never overflowed for
 * its hash, a removal clears one byte, and the length of a probe sequence
 * is what an insert chose, so bounding it on insert bounds every operation.
 *
 * Table memory (one allocation, 64-byte aligned):
 *   slots[groups * 15]   16 bytes each: key, value
 *   ctrl[groups * 16]    per group: 15 tags (0 = empty), then overflow bits
 * An empty slot's key and value are junk, so no key value is reserved.
 *
 * Overflow bits only ever turn on between rebuilds: a removal cannot tell
 * whether other keys still passed the group. So each removal from a group
 * with any overflow bit set spends one unit of max_load (the inserts left
 * before the table is rebuilt); when it runs out, the overflow bits are
 * recomputed in place from the keys (no allocation), or the table doubles
 * if it is more than 3/4 full. This keeps misses short under endless churn.
 *
 * Long probe sequences: the table is re-seeded (the first time at a
 * capacity, for a fixed seed, to a seed derived from it; otherwise from the
 * OS's entropy, which an attacker cannot predict) when an insert finds no
 * empty slot within ARK_IDMAP_MAX_PROBE groups (a hard bound, which random
 * keys at the highest load pass about once in 2^40 tables), and also when
 * more inserts probe past LONG_PROBE groups than random keys ever do, so a
 * flood is caught long before its probes approach the hard bound. After two
 * re-seeds at one capacity the table doubles instead. A rebuild that itself
 * meets long sequences tries again the same way.
 */
#include "ark/idmap.h"

#include "base/base.h"
#include "base/vmem.h"

#include <assert.h>
#include <string.h>

/* The one external definition of each inline function of idmap.h. */
ARK__INLINE_API extern inline uint64_t ark__idmap_mul(uint64_t seed);
ARK__INLINE_API extern inline uint64_t
ark__idmap_hash(uint64_t seed, uint64_t mul, uint64_t key);
ARK__INLINE_API extern inline uint64_t ark__idmap_hash_in(const ark_idmap *m,
                                                          uint64_t key);
ARK__INLINE_API extern inline uint32_t ark__idmap_tagw(uint64_t h);
ARK__INLINE_API extern inline uint8_t ark__idmap_tag(uint64_t h);
ARK__INLINE_API extern inline unsigned ark__idmap_ofw_bit(uint64_t h);
ARK__INLINE_API extern inline uint8_t ark__idmap_ofw(uint64_t h);
ARK__INLINE_API extern inline bool ark__idmap_overflowed(const uint8_t *ctrl,
                                                         size_t g, uint64_t h);
ARK__INLINE_API extern inline ark__idmap_group
ark__idmap_load(const uint8_t *p);
ARK__INLINE_API extern inline ark__idmap_mask
ark__idmap_match(ark__idmap_group g, uint32_t w);
#if !defined(ARK__IDMAP_SSE2)
ARK__INLINE_API extern inline ark__idmap_mask ark__idmap_zero8(uint64_t x);
#endif
ARK__INLINE_API extern inline unsigned ark__idmap_first(ark__idmap_mask m);
ARK__INLINE_API extern inline uint8_t ark__idmap_clear(uint8_t *ctl);
ARK__INLINE_API extern inline ark__idmap_mask
ark__idmap_full(const uint8_t *ctrl);
ARK__INLINE_API extern inline ark__idmap_mask
ark__idmap_empty(const uint8_t *ctrl);
ARK__INLINE_API extern inline void ark__idmap_store(ark_idmap *m, size_t g,
                                                    unsigned i, uint64_t h,
                                                    uint64_t key,
                                                    uint64_t value);
ARK__INLINE_API extern inline ark__idmap_slot *
ark__idmap_in_group(const ark_idmap *m, size_t g, uint64_t key, uint32_t tag,
                    uint8_t **ctl);
ARK__INLINE_API extern inline uint8_t *
ark__idmap_ctl_of(const ark_idmap *m, const ark__idmap_slot *s);
ARK__INLINE_API extern inline ark__idmap_slot *
ark__idmap_find_h(const ark_idmap *m, uint64_t key, uint64_t h, uint8_t **ctl);
ARK__INLINE_API extern inline ark__idmap_slot *
ark__idmap_find(const ark_idmap *m, uint64_t key);
ARK_API extern inline bool ark_idmap_get(const ark_idmap *m, uint64_t key,
                                         uint64_t *value);
ARK_API extern inline uint64_t *ark_idmap_get_ptr(ark_idmap *m, uint64_t key);
ARK_API extern inline const uint64_t *ark_idmap_find(const ark_idmap *m,
                                                     uint64_t key);
ARK_API extern inline bool ark_idmap_take(ark_idmap *m, uint64_t key,
                                          uint64_t *old);
ARK_API extern inline bool ark_idmap_remove(ark_idmap *m, uint64_t key);
ARK__INLINE_API extern inline ark_status
ark__idmap_put_at(ark_idmap *m, uint64_t key, uint64_t value, bool overwrite);
ARK_API extern inline ark_status ark_idmap_put(ark_idmap *m, uint64_t key,
                                               uint64_t value);
ARK_API extern inline ark_status ark_idmap_insert(ark_idmap *m, uint64_t key,
                                                  uint64_t value);
ARK__INLINE_API extern inline void ark__idmap_iter_step(ark_idmap_iter *it);
ARK__INLINE_API extern inline ark_idmap_iter
ark__idmap_iter_from(const ark_idmap *m, size_t g);
ARK_API extern inline ark_idmap_iter ark_idmap_iter_begin(const ark_idmap *m);
ARK_API extern inline bool ark_idmap_iter_valid(const ark_idmap_iter *it);
ARK_API extern inline void ark_idmap_iter_next(ark_idmap_iter *it);

/* Four copies of t, or of 1 for t = 0. */
#define TAGW(t) (((t) == 0 ? 1u : (uint32_t)(t)) * 0x01010101u)
#define TAGW4(t) TAGW(t), TAGW((t) + 1), TAGW((t) + 2), TAGW((t) + 3)
#define TAGW16(t) TAGW4(t), TAGW4((t) + 4), TAGW4((t) + 8), TAGW4((t) + 12)
#define TAGW64(t)                                                              \
    TAGW16(t), TAGW16((t) + 16), TAGW16((t) + 32), TAGW16((t) + 48)
const uint32_t ark__idmap_tagword[256] = {TAGW64(0), TAGW64(64), TAGW64(128),
                                          TAGW64(192)};

#if defined(ARK__IDMAP_SSE2) && (defined(__GNUC__) || defined(__clang__))
/* Entry i: all bits but those of byte i of a control word (x86 is
 * little-endian: byte i is byte i % 4 of word i / 4). */
#define KEEPW(i, w) ((i) / 4 == (w) ? ~(0xffu << (i) % 4 * 8) : ~0u)
#define KEEP(i)                                                                \
    { KEEPW(i, 0), KEEPW(i, 1), KEEPW(i, 2), KEEPW(i, 3) }
const ark__idmap_words ark__idmap_keep[16] = {
    KEEP(0),  KEEP(1),  KEEP(2),  KEEP(3), KEEP(4),  KEEP(5),
    KEEP(6),  KEEP(7),  KEEP(8),  KEEP(9), KEEP(10), KEEP(11),
    KEEP(12), KEEP(13), KEEP(14), KEEP(15)};
#endif

ark__idmap_slot *ark__idmap_find_on(const ark_idmap *m, uint64_t key,
                                    uint64_t h) {
    uint32_t tag = ark__idmap_tagw(h);
    size_t g = (size_t)h & m->gmask;
    for (size_t step = 1; step < m->probe_limit; step++) {
        g = (g + step) & m->gmask;
        uint8_t *ctl;
        ark__idmap_slot *s = ark__idmap_in_group(m, g, key, tag, &ctl);
        if (s != NULL || !ark__idmap_overflowed(m->ctrl, g, h)) {
            return s;
        }
    }
    return NULL;
}

/* Entries a table of g groups may hold: 7/8 of its slots. */
static size_t load_limit(size_t g) { return g * ARK__IDMAP_SLOTS * 7 / 8; }

/* Bytes of the slots and of the control words of a table of g groups
 * (g <= ARK__IDMAP_MAX_GROUPS, so neither can overflow: 240 * 2^32 on
 * 64-bit systems, 240 * 2^22 on 32-bit ones). */
static size_t slots_bytes(size_t g) {
    return g * ARK__IDMAP_SLOTS * sizeof(ark__idmap_slot);
}
static size_t ctrl_bytes(size_t g) { return g * 16; }

/* place() past a full home group, probing at most limit groups. */
ARK__NOINLINE static unsigned place_far(ark_idmap *m, uint64_t h, uint64_t key,
                                        uint64_t value, size_t limit) {
    uint8_t ofw = ark__idmap_ofw(h);
    size_t g = (size_t)h & m->gmask;
    for (size_t step = 1; step <= limit; step++) {
        ark__idmap_mask empty = ark__idmap_empty(m->ctrl + g * 16);
        if (empty != 0) {
            ark__idmap_store(m, g, ark__ctz64(empty), h, key, value);
            return (unsigned)step;
        }
        m->ctrl[g * 16 + 15] |= ofw;
        g = (g + step) & m->gmask;
    }
    return 0;
}

/* Store key, value in an empty slot along h's probe sequence, setting the
 * overflow bit of every full group passed. Returns the number of groups
 * probed, or 0, with overflow bits possibly set but nothing stored, when no
 * slot lies within ARK_IDMAP_MAX_PROBE groups. */
static inline unsigned place(ark_idmap *m, uint64_t h, uint64_t key,
                             uint64_t value) {
    size_t g = (size_t)h & m->gmask;
    ark__idmap_mask empty = ark__idmap_empty(m->ctrl + g * 16);
    if (empty == 0) {
        return place_far(m, h, key, value, ARK_IDMAP_MAX_PROBE);
    }
    ark__idmap_store(m, g, ark__ctz64(empty), h, key, value);
    return 1;
}

/* Probe statistics since the table was last rebuilt, and whether they
 * exceed what random keys produce. Random keys filling a table to 7/8 place
 * 7% of their inserts past the home group and 1 in 4,000 past 8 groups;
 * at the highest steady load under churn, still under a third past home.
 * A flood that puts keys in one home or one run shows up in the second
 * count; one that makes many groups overflow, so that misses walk several
 * groups, in the first. */
typedef ark__idmap_stats probe_stats;

#define LONG_PROBE 8

/* Count one insert that probed `probes` groups; return true when the
 * statistics call for a re-seed. */
static bool count_probe(probe_stats *st, unsigned probes) {
    st->inserts++;
    if (probes <= 1) {
        return false;
    }
    st->far_probes++;
    st->longer += probes > LONG_PROBE;
    return st->far_probes > 64 + st->inserts / 2 ||
           st->longer > 8 + st->inserts / 64;
}

/*
 * Table storage. A table is its slots, then its control words. From a
 * caller's allocator (or where there is no virtual memory, or on a 32-bit
 * system) it is one block, whose control words are zeroed. Otherwise a
 * table of REGION_MIN bytes of slots or more lies in a reservation with
 * room for REGION_GROWTH times its groups (aligned to the huge page
 * size), the slots at its start and the control words past room for all
 * slots: growing the table makes more of both writable and re-places the
 * entries where they are (grow_in_place), instead of moving them all into
 * a second table while the first is still alive. That halves the fresh
 * memory a map touches as it fills, and the peak while it grows
 * (docs/idmap.md, "Growth in place"). Pages made writable read as zero
 * and take memory only when touched, and the commit is charged (vmem.h):
 * a table of any size costs memory for the pages its keys land in, and
 * one the system cannot back is ARK_ENOMEM at once.
 *
 * Huge pages: random keys land all over the table, so while few keys are
 * in it a 2 MiB page per key would cost 512 times the 4 KiB one. The
 * writable part asks for huge pages (hint_huge) once the map holds a key
 * per 4 KiB of slots, where they cost at most about what small pages do:
 * at once when the table is built by growth, later after a reserve.
 */
#define REGION_MIN ((size_t)64 << 10)
#define REGION_GROWTH 64
#define REGION_MAX_GROUPS ARK__IDMAP_MAX_GROUPS

typedef struct table {
    ark__idmap_slot *slots;
    uint8_t *ctrl;
    void *region; /* NULL: one block from the allocator */
    size_t region_groups, committed;
} table;

/* The alignment of a reservation, and the bytes of one for room groups:
 * the slots, then the control words, each rounded to that alignment,
 * plus the alignment itself. */
static size_t region_align(void) {
    size_t huge = ark__vmem_huge_size();
    return huge != 0 ? huge : ark__vmem_page_size();
}

static size_t region_bytes(size_t room) {
    size_t align = region_align();
    return align + ark__round_up(slots_bytes(room), align) +
           ark__round_up(ctrl_bytes(room), align);
}

/* Make t's first g groups writable (slots and control words). */
static bool region_commit(table *t, size_t g) {
    size_t page = ark__vmem_page_size();
    size_t s0 = ark__round_up(slots_bytes(t->committed), page);
    size_t s1 = ark__round_up(slots_bytes(g), page);
    size_t c0 = ark__round_up(ctrl_bytes(t->committed), page);
    size_t c1 = ark__round_up(ctrl_bytes(g), page);
    if (g <= t->committed) {
        return true;
    }
    if ((s1 > s0 && ark__vmem_commit((char *)t->slots + s0, s1 - s0) != 0) ||
        (c1 > c0 && ark__vmem_commit(t->ctrl + c0, c1 - c0) != 0)) {
        return false;
    }
    t->committed = g;
    return true;
}

/* A reservation for a table of g groups (at most REGION_MAX_GROUPS), its
 * first g groups writable and zero; false (nothing reserved) when there
 * is none to be had. */
static bool region_new(table *t, size_t g) {
    size_t align = region_align();
    size_t room = g < REGION_MAX_GROUPS / REGION_GROWTH ? g * REGION_GROWTH
                                                        : REGION_MAX_GROUPS;
    t->region = ark__vmem_reserve(region_bytes(room));
    if (t->region == NULL && room > g) {
        room = g; /* no room to grow in place rather than no region */
        t->region = ark__vmem_reserve(region_bytes(room));
    }
    if (t->region == NULL) {
        return false;
    }
    t->region_groups = room;
    t->committed = 0;
    char *base = (char *)ark__round_up((size_t)(uintptr_t)t->region, align);
    t->slots = (ark__idmap_slot *)(void *)base;
    t->ctrl = (uint8_t *)base + ark__round_up(slots_bytes(room), align);
    if (!region_commit(t, g)) {
        ark__vmem_release(t->region, region_bytes(room));
        return false;
    }
    return true;
}

/* Storage for a table of g groups, its control words zeroed. */
static bool table_new(const ark_idmap *m, size_t g, table *t) {
    t->region = NULL;
    t->region_groups = t->committed = 0;
    if (m->use_region && slots_bytes(g) >= REGION_MIN &&
        g <= REGION_MAX_GROUPS && region_new(t, g)) {
        return true; /* fresh pages read as zero */
    }
    t->slots = ark__alloc_table(&m->alloc, slots_bytes(g) + ctrl_bytes(g), 64);
    if (t->slots == NULL) {
        return false;
    }
    t->ctrl = (uint8_t *)(t->slots + g * ARK__IDMAP_SLOTS);
    memset(t->ctrl, 0, ctrl_bytes(g));
    return true;
}

/* Free t, a table of g groups. */
static void table_free(const ark_idmap *m, const table *t, size_t g) {
    if (t->region != NULL) {
        ark__vmem_release(t->region, region_bytes(t->region_groups));
    } else {
        ark__free(&m->alloc, t->slots, slots_bytes(g) + ctrl_bytes(g));
    }
}

static table table_of(const ark_idmap *m) {
    table t = {m->slots, m->ctrl, m->region, m->region_groups, m->committed};
    return t;
}

static void free_table(ark_idmap *m) {
    if (m->groups != 0) {
        table t = table_of(m);
        table_free(m, &t, m->groups);
    }
}

/* Hash m's keys under seed from now on (the table is the caller's). */
static void set_seed(ark_idmap *m, uint64_t seed) {
    m->seed = seed;
    m->mul = ark__idmap_mul(seed);
}

/* A seed for a re-seed: derived from the current one the first time a
 * fixed-seed map re-seeds at a capacity (reproducible), else from the OS's
 * entropy (unpredictable). Never the current seed. */
static uint64_t next_seed(const ark_idmap *m, unsigned tries) {
    uint64_t s;
    if (m->seed_fixed && m->reseeds + tries == 0) {
        s = ark__mix64(m->seed ^ 0x5851f42d4c957f2dull);
    } else {
        s = ark__entropy64(m, NULL) ^ ark__mix64(m->seed);
    }
    return s == m->seed ? ~s : s;
}

enum { REHASH_OK, REHASH_NOMEM, REHASH_LONG };

/* The rehash's copy of the empty-slot masks of the last group it stored
 * into in each half of the new table. Reading a control word right after
 * storing one of its bytes stalls the read until the store reaches the
 * cache (a 1-byte store cannot be forwarded to a 16-byte load), and when
 * the table doubles, consecutive entries of old group og go to new groups
 * og and og + old groups: without the copy, most entries waited for the
 * previous one's store. */
typedef struct fill_cache {
    size_t g[2]; /* a group, or SIZE_MAX */
    ark__idmap_mask empty[2];
} fill_cache;

/* Store key, value (hash h) into the new table n, as place() does,
 * probing at most limit groups. */
static inline unsigned place_new(ark_idmap *n, fill_cache *fc, uint64_t h,
                                 uint64_t key, uint64_t value, size_t limit) {
    size_t g = (size_t)h & n->gmask;
    unsigned half = g > n->gmask / 2;
    if (fc->g[half] != g) {
        fc->g[half] = g;
        fc->empty[half] = ark__idmap_empty(n->ctrl + g * 16);
    }
    ark__idmap_mask empty = fc->empty[half];
    if (empty == 0) {
        fc->g[0] = fc->g[1] = SIZE_MAX; /* place_far may fill either */
        return place_far(n, h, key, value, limit);
    }
    fc->empty[half] = empty & (empty - 1);
    ark__idmap_store(n, g, ark__idmap_first(empty), h, key, value);
    return 1;
}

/* Move every entry of m into the empty table n; false when some key would
 * lie too far from home or the probe counts call for another seed. */
static bool move_all(const ark_idmap *m, ark_idmap *n, probe_stats *st) {
    fill_cache fc = {{SIZE_MAX, SIZE_MAX}, {0, 0}};
    for (size_t og = 0; og < m->groups; og++) {
        ark__idmap_mask full = ark__idmap_full(m->ctrl + og * 16);
        const ark__idmap_slot *s = m->slots + og * ARK__IDMAP_SLOTS;
        while (full != 0) {
            const ark__idmap_slot *e = s + ark__ctz64(full);
            unsigned probes = place_new(n, &fc, ark__idmap_hash_in(n, e->key),
                                        e->key, e->value, ARK_IDMAP_MAX_PROBE);
            if (probes == 0 || count_probe(st, probes)) {
                return false;
            }
            full &= full - 1;
        }
    }
    return true;
}

/* Ask for huge pages in the writable part of the map's region. */
static void hint_huge(ark_idmap *m) {
    ark__vmem_hint_huge(m->slots, slots_bytes(m->groups));
    ark__vmem_hint_huge(m->ctrl, ctrl_bytes(m->groups));
    m->hint_at = 0;
}

/* Set max_load to limit, or while a hint is due, to the count it is due
 * at, holding the rest back, so that the insert reaching it takes
 * add_slow (the inline path compares count with max_load only). */
static void set_max_load(ark_idmap *m, size_t limit) {
    m->held_load = 0;
    if (m->hint_at != 0 && m->hint_at < limit) {
        m->held_load = limit - m->hint_at;
        limit = m->hint_at;
    }
    m->max_load = limit;
}

/* Make t, with g groups, the map's table. */
static void set_table(ark_idmap *m, const table *t, size_t g) {
    m->slots = t->slots;
    m->ctrl = t->ctrl;
    m->region = t->region;
    m->region_groups = t->region_groups;
    m->committed = t->committed;
    if (g != m->groups) {
        m->reseeds = 0;
    }
    m->groups = g;
    m->gmask = g - 1;
    /* A key per 4 KiB of slots (256 slots) makes huge pages pay. */
    m->hint_at = 0;
    if (t->region != NULL) {
        size_t due = g * ARK__IDMAP_SLOTS / 256;
        m->hint_at = due > 0 ? due : 1;
        if (m->count >= m->hint_at) {
            hint_huge(m);
        }
    }
    set_max_load(m, load_limit(g));
    m->probe_limit = ARK_IDMAP_MAX_PROBE;
}

/* Move every entry into a new table of g groups hashed with seed. On
 * failure the map is untouched. */
static int rehash_once(ark_idmap *m, size_t g, uint64_t seed) {
    table t;
    if (!table_new(m, g, &t)) {
        return REHASH_NOMEM;
    }
    ark_idmap n = *m;
    n.slots = t.slots;
    n.ctrl = t.ctrl;
    n.gmask = g - 1;
    set_seed(&n, seed);
    probe_stats st = {0, 0, 0};
    if (!move_all(m, &n, &st)) {
        table_free(m, &t, g);
        return REHASH_LONG;
    }
    free_table(m);
    set_table(m, &t, g);
    set_seed(m, seed);
    m->stats = st;
    return REHASH_OK;
}

/* Rebuild the table with g groups (growing further, by re-seeding and then
 * doubling, while some key would lie too far from home). On ENOMEM the map
 * is untouched. */
static ark_status rehash(ark_idmap *m, size_t g, uint64_t seed) {
    for (unsigned tries = 0;; tries++) {
        int r = rehash_once(m, g, seed);
        if (r == REHASH_OK) {
            return ARK_OK;
        }
        if (r == REHASH_NOMEM) {
            return ARK_ENOMEM;
        }
        if (tries % 2 == 1) {
            if (g >= ARK__IDMAP_MAX_GROUPS) {
                return ARK_ENOMEM;
            }
            g *= 2;
        }
        seed = next_seed(m, tries + 1);
    }
}

static ark_status reseed(ark_idmap *m);

/* Grow the table to g groups in place: its reservation has room (see
 * "Table storage"). The overflow bits are cleared, and every entry of the
 * old groups is taken out of its slot and placed again under the same
 * seed, group by group: its new home is its old one or lies in the new
 * part, which is empty. A slot not yet re-placed counts as full, so
 * nothing is overwritten; the few entries placed past such slots set
 * overflow bits that only make a miss probe further, and if they land in
 * a group not yet processed they are placed once more, harmlessly. No
 * test has made a key land past ARK_IDMAP_MAX_PROBE groups here (the old
 * table held every key within the bound, and the new part starts empty),
 * but if one does it is placed anyway (the table is less than half full)
 * and lookups probe that far until the re-seed that follows moves it back
 * within the bound (only a re-seed without memory leaves it so): a longer
 * probe, never a lost key. On ENOMEM the map is unchanged. */
static ark_status grow_in_place(ark_idmap *m, size_t g) {
    table t = table_of(m);
    if (!region_commit(&t, g)) {
        return ARK_ENOMEM;
    }
    size_t old_g = m->groups;
    uint8_t *ctrl = m->ctrl; /* past old_g: fresh pages, zero */
    for (size_t k = 0; k < old_g; k++) {
        ctrl[k * 16 + 15] = 0;
    }
    set_table(m, &t, g);
    probe_stats st = {0, 0, 0};
    bool flood = false;
    unsigned longest = 0;
    fill_cache fc = {{SIZE_MAX, SIZE_MAX}, {0, 0}};
    for (size_t og = 0; og < old_g; og++) {
        ark__idmap_mask full = ark__idmap_full(ctrl + og * 16);
        while (full != 0) {
            unsigned i = ark__ctz64(full);
            ark__idmap_slot e = m->slots[og * ARK__IDMAP_SLOTS + i];
            ctrl[og * 16 + i] = 0;
            if (fc.g[0] == og) { /* og lies in the lower half */
                fc.empty[0] |= 1u << i;
            }
            unsigned probes = place_new(m, &fc, ark__idmap_hash_in(m, e.key),
                                        e.key, e.value, g);
            longest = probes > longest ? probes : longest;
            flood |= count_probe(&st, probes);
            full &= full - 1;
        }
    }
    m->stats = st;
    if (longest > ARK_IDMAP_MAX_PROBE) {
        m->probe_limit = longest;
    }
    if (flood || longest > ARK_IDMAP_MAX_PROBE) {
        (void)reseed(m);
    }
    return ARK_OK;
}

/* Grow the table to g groups under the same seed: in place when its
 * reservation has room, else into a new table. On ENOMEM the map is
 * unchanged. */
static ark_status grow(ark_idmap *m, size_t g) {
    if (m->region != NULL && g <= m->region_groups) {
        return grow_in_place(m, g);
    }
    return rehash(m, g, m->seed);
}

/* Point the map at its built-in empty table. */
static void set_no_table(ark_idmap *m) {
    m->slots = &m->spare_slot;
    m->ctrl = m->spare_ctrl;
    memset(m->spare_ctrl, 0, sizeof m->spare_ctrl);
    m->groups = 0;
    m->gmask = 0;
    m->count = 0;
    m->max_load = 0;
    m->hint_at = 0;
    m->held_load = 0;
    m->reseeds = 0;
    m->probe_limit = ARK_IDMAP_MAX_PROBE;
    m->region = NULL;
    m->region_groups = m->committed = 0;
    m->stats = (probe_stats){0, 0, 0};
}

ark_status ark_idmap_create(ark_idmap **out, const ark_allocator *a) {
    assert(out != NULL);
    ark_allocator al;
    ark_status s = ark__allocator_init(&al, a);
    if (s != ARK_OK) {
        return s;
    }
    ark_idmap *m = ark__alloc(&al, sizeof *m, _Alignof(ark_idmap));
    if (m == NULL) {
        return ARK_ENOMEM;
    }
    memset(m, 0, sizeof *m);
    m->alloc = al;
    set_no_table(m);
    m->use_region =
        a == NULL && SIZE_MAX / 2 > UINT32_MAX && ark__vmem_page_size() != 0;
    set_seed(m, ark__entropy64(m, NULL));
    m->seed_fixed = false;
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

void ark_idmap_set_seed(ark_idmap *m, uint64_t seed) {
    assert(m != NULL);
    if (m->count != 0) {
        return;
    }
    ark_idmap_clear(m); /* overflow bits belong to the old seed */
    set_seed(m, seed);
    m->seed_fixed = true;
}

/* Fewest groups whose load limit admits n entries, or 0 past the maximum. */
static size_t groups_for(size_t n) {
    if (n > ARK_IDMAP_MAX_COUNT) {
        return 0;
    }
    size_t g = 1;
    while (load_limit(g) < n) {
        g *= 2;
    }
    return g;
}

ark_status ark_idmap_reserve(ark_idmap *m, size_t n) {
    assert(m != NULL);
    if (n <= load_limit(m->groups)) {
        return ARK_OK;
    }
    size_t g = groups_for(n);
    if (g == 0) {
        return ARK_ENOMEM;
    }
    return grow(m, g);
}

/* Recompute every overflow bit from the keys in place: each key sets the
 * bits of the groups its probe sequence passes before its own. */
static void rebuild_overflow(ark_idmap *m) {
    for (size_t g = 0; g < m->groups; g++) {
        m->ctrl[g * 16 + 15] = 0;
    }
    for (size_t g = 0; g < m->groups; g++) {
        ark__idmap_mask full = ark__idmap_full(m->ctrl + g * 16);
        while (full != 0) {
            size_t i = g * ARK__IDMAP_SLOTS + ark__ctz64(full);
            uint64_t h = ark__idmap_hash_in(m, m->slots[i].key);
            uint8_t ofw = ark__idmap_ofw(h);
            size_t p = (size_t)h & m->gmask;
            for (size_t step = 1; p != g; step++) {
                m->ctrl[p * 16 + 15] |= ofw;
                p = (p + step) & m->gmask;
            }
            full &= full - 1;
        }
    }
    set_max_load(m, load_limit(m->groups));
    m->stats = (probe_stats){0, 0, 0};
}

/* Make room for one more entry: grow when the table is (nearly) full,
 * otherwise clear stale overflow bits. On ENOMEM the map is unchanged. */
ARK__NOINLINE static ark_status make_room(ark_idmap *m) {
    size_t limit = load_limit(m->groups);
    if (m->count < limit - limit / 4) {
        rebuild_overflow(m);
        return ARK_OK;
    }
    size_t g = m->groups == 0 ? 1 : m->groups * 2;
    if (g > ARK__IDMAP_MAX_GROUPS) {
        return ARK_ENOMEM;
    }
    ark_status s = grow(m, g);
    if (s != ARK_OK && m->count < limit) {
        rebuild_overflow(m); /* no memory to grow: still room */
        return ARK_OK;
    }
    return s;
}

/* Re-seed the table at its capacity, or double it after two re-seeds at
 * one capacity. On ENOMEM the map is unchanged. */
static ark_status reseed(ark_idmap *m) {
    size_t before = m->groups;
    size_t g = m->reseeds >= 2 ? before * 2 : before;
    if (g > ARK__IDMAP_MAX_GROUPS) {
        return ARK_ENOMEM;
    }
    ark_status s = rehash(m, g, next_seed(m, 0));
    if (s == ARK_OK) {
        m->reseeds = m->groups == before ? m->reseeds + 1 : 0;
    }
    return s;
}

/* Count an insert that probed past its home group; re-seed when the
 * counts say flood. The key is in: without memory the map keeps its seed
 * and stays correct. */
ARK__NOINLINE static void note_far(ark_idmap *m, unsigned probes) {
    if (count_probe(&m->stats, probes)) {
        (void)reseed(m);
    }
}

/* Count an insert placed `probes` groups along its sequence. */
static inline void count_insert(ark_idmap *m, unsigned probes) {
    m->count++;
    if (probes > 1) {
        note_far(m, probes);
    } else {
        m->stats.inserts++;
    }
}

/* Insert key (absent) when the table must make room first or its probe
 * sequence is past the hard bound. On ENOMEM the map is unchanged. */
ARK__NOINLINE static ark_status add_slow(ark_idmap *m, uint64_t key,
                                         uint64_t value) {
    if (m->held_load != 0 && m->count >= m->max_load) {
        /* The hint is due (or removals spent max_load before it). */
        hint_huge(m);
        m->max_load += m->held_load;
        m->held_load = 0;
    }
    if (m->count >= m->max_load) {
        ark_status s = make_room(m);
        if (s != ARK_OK) {
            return s;
        }
    }
    for (;;) {
        unsigned probes = place(m, ark__idmap_hash_in(m, key), key, value);
        if (probes != 0) {
            count_insert(m, probes);
            return ARK_OK;
        }
        ark_status s = reseed(m); /* the key cannot go in under this seed */
        if (s != ARK_OK) {
            return s;
        }
    }
}

/* Insert key (absent, hash h). On ENOMEM the map is unchanged. */
static inline ark_status add(ark_idmap *m, uint64_t key, uint64_t h,
                             uint64_t value) {
    if (m->count < m->max_load) {
        unsigned probes = place(m, h, key, value);
        if (probes != 0) {
            count_insert(m, probes);
            return ARK_OK;
        }
    }
    return add_slow(m, key, value);
}

ark_status ark__idmap_put_on(ark_idmap *m, uint64_t key, uint64_t value,
                             uint64_t h, bool overwrite) {
    assert(m != NULL);
    /* The inline path has searched the home group: key can only lie further
     * along its probe sequence, and only if the home group overflowed. */
    ark__idmap_slot *s = ark__idmap_overflowed(m->ctrl, (size_t)h & m->gmask, h)
                             ? ark__idmap_find_on(m, key, h)
                             : NULL;
    if (s == NULL) {
        return add(m, key, h, value);
    }
    if (!overwrite) {
        return ARK_EEXIST;
    }
    s->value = value;
    return ARK_OK;
}

size_t ark_idmap_count(const ark_idmap *m) {
    assert(m != NULL);
    return m->count;
}

void ark_idmap_clear(ark_idmap *m) {
    assert(m != NULL);
    if (m->groups != 0) {
        memset(m->ctrl, 0, m->groups * 16);
    }
    m->count = 0;
    set_max_load(m, load_limit(m->groups));
    m->probe_limit = ARK_IDMAP_MAX_PROBE;
    m->reseeds = 0;
    m->stats = (probe_stats){0, 0, 0};
}

void ark_idmap_each(const ark_idmap *m,
                    bool (*fn)(uint64_t key, uint64_t value, void *ud),
                    void *ud) {
    assert(m != NULL && fn != NULL);
    for (ark_idmap_iter it = ark_idmap_iter_begin(m); ark_idmap_iter_valid(&it);
         ark_idmap_iter_next(&it)) {
        if (!fn(it.key, it.value, ud)) {
            return;
        }
    }
}

/* Whether key (hash h), found in slot i of the table, lies where the probe
 * rules put it: within ARK_IDMAP_MAX_PROBE groups of its home, with its
 * overflow bit set in every group it passes, and found by a lookup. */
static bool placed_right(const ark_idmap *m, size_t i, uint64_t h) {
    size_t g = i / ARK__IDMAP_SLOTS;
    size_t p = (size_t)h & m->gmask, probes = 1;
    for (size_t step = 1; p != g; step++) {
        if ((m->ctrl[p * 16 + 15] & ark__idmap_ofw(h)) == 0 ||
            probes == ARK_IDMAP_MAX_PROBE) {
            return false;
        }
        p = (p + step) & m->gmask;
        probes++;
    }
    return ark__idmap_find(m, m->slots[i].key) == &m->slots[i];
}

ark_status ark_idmap_validate(const ark_idmap *m) {
    if (m->groups == 0) {
        return m->count == 0 && m->gmask == 0 ? ARK_OK : ARK_ECORRUPT;
    }
    if (m->gmask != m->groups - 1 || (m->groups & m->gmask) != 0 ||
        m->count > m->max_load || m->mul != ark__idmap_mul(m->seed)) {
        return ARK_ECORRUPT;
    }
    size_t full = 0;
    for (size_t i = 0; i < m->groups * ARK__IDMAP_SLOTS; i++) {
        uint8_t c = m->ctrl[i / ARK__IDMAP_SLOTS * 16 + i % ARK__IDMAP_SLOTS];
        if (c == 0) {
            continue;
        }
        full++;
        uint64_t h = ark__idmap_hash_in(m, m->slots[i].key);
        if (c != ark__idmap_tag(h) || !placed_right(m, i, h)) {
            return ARK_ECORRUPT;
        }
    }
    return full == m->count ? ARK_OK : ARK_ECORRUPT;
}
