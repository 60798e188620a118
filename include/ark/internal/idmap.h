/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/idmap.h - private to ark: the map's struct, its hash, the
 * group matching (SSE2 or a portable fallback) and the bodies of get,
 * get_ptr, take, remove, put, insert and the iterator. Included by
 * ark/idmap.h; never include it directly, and never use its names: they
 * change without notice.
 */
#ifndef ARK_INTERNAL_IDMAP_H
#define ARK_INTERNAL_IDMAP_H

#include "ark/idmap.h"

#include <string.h>

#if !defined(ARK_IDMAP_NO_SIMD) && (defined(__SSE2__) || defined(_M_X64) ||    \
                                    (defined(_M_IX86_FP) && _M_IX86_FP >= 2))
#if !defined(__GNUC__) && !defined(__clang__)
#include <emmintrin.h>
#endif
#define ARK__IDMAP_SSE2 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Slots per group, and the bits of a group mask that are slots
 * (control byte 15 holds the overflow bits). */
#define ARK__IDMAP_SLOTS 15
#define ARK__IDMAP_SLOT_BITS 0x7fffu

/* The most groups a table can have: 2^32 on 64-bit systems, 2^22 on
 * 32-bit ones (ARK_IDMAP_MAX_COUNT). */
#if SIZE_MAX > 0xffffffffu
#define ARK__IDMAP_MAX_GROUPS (ARK__CONST(size_t, 1) << 32)
#else
#define ARK__IDMAP_MAX_GROUPS (ARK__CONST(size_t, 1) << 22)
#endif

/* One entry. */
typedef struct ark__idmap_slot {
    uint64_t key;
    uint64_t value;
} ark__idmap_slot;

/* Inserts since the table was last rebuilt, and how many of them
 * probed past the home group and past 8 groups (flood detection). */
typedef struct ark__idmap_stats {
    size_t inserts;
    size_t far_probes;
    size_t longer;
} ark__idmap_stats;

/* 16-byte alignment, which the control words have (lookups load
 * them with aligned loads). */
#ifdef __cplusplus
#define ARK__IDMAP_ALIGN16 alignas(16)
#else
#define ARK__IDMAP_ALIGN16 _Alignas(16)
#endif

/* A map: the fields the inline functions read, then idmap.c's own. */
struct ark_idmap {
    /* private, read by the inline functions */
    ark__idmap_slot *slots; /* groups * 15 slots; &spare_slot when none */
    uint8_t *ctrl;          /* groups * 16 bytes; spare_ctrl when none */
    size_t gmask;           /* groups - 1, or 0 when nothing is allocated */
    uint64_t seed;          /* hash seed */
    uint64_t mul;           /* hash multiplier: ark__idmap_mul(seed) */
    size_t count;           /* entries */
    /* private, used by idmap.c only */
    size_t groups;   /* 0 when nothing is allocated */
    size_t max_load; /* inserts before the next grow or overflow rebuild */
    ark__idmap_stats stats; /* probe counts since the last rebuild */
    unsigned reseeds;       /* long-run re-seeds since the last growth */
    size_t probe_limit;     /* groups a lookup may probe (see find_on) */
    bool seed_fixed;        /* set by ark_idmap_set_seed */
    bool use_region;        /* default allocator, virtual memory, 64-bit */
    void *region;           /* reservation holding the table, or NULL */
    size_t region_groups;   /* groups it has room for */
    size_t committed;       /* groups of it made writable */
    size_t hint_at;         /* count at which its huge-page hint is due, or 0 */
    size_t held_load;       /* max_load held back until then (idmap.c) */
    ark_allocator alloc;
    ark__idmap_slot spare_slot;
    ARK__IDMAP_ALIGN16 uint8_t spare_ctrl[16]; /* all empty, no overflow */
};

/* The hash of a key under a seed: key ^ seed times mul, the
 * seed's odd multiplier (ark__idmap_mul), a folded 64x64->128 multiply
 * whose every output bit depends on every input bit. Bits 0.. pick the
 * home group, bits 53..55 the overflow bit, bits 56..63 the tag. The
 * multiplier depends on the seed: with a constant one, keys that take
 * every value of a few aligned bit fields piled up the same way under
 * every seed, since xor with a seed only permutes each field's values
 * (docs/design-notes.md, "Id map hash").
 * A map keeps mul beside its seed, so a lookup loads it as it loaded the
 * constant. */
#define ARK__IDMAP_MUL 0x9ddfea08eb382d69ull

/* The multiplier of a seed: random for a random seed, the
 * constant above for seed 0. */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__idmap_mul(uint64_t seed) {
    return (seed ^ ARK__IDMAP_MUL) | 1;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* One mulq in asm: from the __int128 form below gcc 12 allocates the
 * 128-bit product to a stack slot whenever the caller's loop keeps a few
 * more values live (an out-parameter's old value, a pointer the caller
 * took the address of), and every lookup then stores and reloads the
 * product: a store-forwarding round trip on the way to the group's address
 * (docs/design-notes.md, "The caller's loop"). */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__idmap_hash(uint64_t seed,
                                                        uint64_t mul,
                                                        uint64_t key) {
    uint64_t lo, hi;
    __asm__("{mulq %3|mul %3}" /* both dialects: -masm=intel builds too */
            : "=a"(lo), "=d"(hi)
            : "%0"(key ^ seed), "r"(mul)
            : "cc");
    return hi ^ lo;
}
#elif defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 ark__idmap_u128;
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__idmap_hash(uint64_t seed,
                                                        uint64_t mul,
                                                        uint64_t key) {
    ark__idmap_u128 p = (ark__idmap_u128)(key ^ seed) * mul;
    return (uint64_t)(p >> 64) ^ (uint64_t)p;
}
#else
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__idmap_hash(uint64_t seed,
                                                        uint64_t mul,
                                                        uint64_t key) {
    uint64_t a = key ^ seed, b = mul;
    uint64_t al = a & 0xffffffffu, ah = a >> 32;
    uint64_t bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    uint64_t lo = (mid << 32) | (ll & 0xffffffffu);
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return hi ^ lo;
}
#endif

/* The hash of a key in map m. */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__idmap_hash_in(const ark_idmap *m,
                                                           uint64_t key) {
    return ark__idmap_hash(m->seed, m->mul, key);
}

/* Entry t is the control byte of a full slot whose hash has top
 * byte t (t itself, or 1 for 0, which marks an empty slot), repeated in all
 * four bytes: one load gives a lookup the word it compares a group with,
 * where computing and spreading the byte took seven instructions. */
ARK_API extern const uint32_t ark__idmap_tagword[256];

/* The tag word (four copies of the control byte) of hash h. */
ARK__ALWAYS_INLINE ARK__INLINE uint32_t ark__idmap_tagw(uint64_t h) {
    return ark__idmap_tagword[h >> 56];
}

/* The control byte of a full slot whose key hashed to h (never 0,
 * which marks an empty slot). */
ARK__ALWAYS_INLINE ARK__INLINE uint8_t ark__idmap_tag(uint64_t h) {
    return (uint8_t)ark__idmap_tagw(h);
}

/* Which of the eight overflow bits of byte 15 of a group is h's. */
ARK__ALWAYS_INLINE ARK__INLINE unsigned ark__idmap_ofw_bit(uint64_t h) {
    return (unsigned)(h >> 53) & 7;
}

/* The overflow bit of h in byte 15 of a group, as a mask. */
ARK__ALWAYS_INLINE ARK__INLINE uint8_t ark__idmap_ofw(uint64_t h) {
    return (uint8_t)(1u << ark__idmap_ofw_bit(h));
}

/* Whether keys of hash h were ever sent past group g (its
 * overflow bit for h, in byte 15 of its control word, is set). */
ARK__ALWAYS_INLINE ARK__INLINE bool
ark__idmap_overflowed(const uint8_t *ctrl, size_t g, uint64_t h) {
    return ((unsigned)ctrl[g * 16 + 15] >> ark__idmap_ofw_bit(h) & 1) != 0;
}

/* A hint to start loading the cache line at p. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK__IDMAP_PREFETCH(p) __builtin_prefetch(p)
#elif defined(ARK__IDMAP_SSE2)
#define ARK__IDMAP_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define ARK__IDMAP_PREFETCH(p) ((void)(p))
#endif

/* A mask over the 16 bytes of a control word, bit b for byte b. */
typedef unsigned ark__idmap_mask;
#if defined(ARK__IDMAP_SSE2) && (defined(__GNUC__) || defined(__clang__))
/* GNU vector types and the SSE2 builtin: <emmintrin.h>'s static inline
 * wrappers may not be called from C11 extern-inline functions. */
typedef char ark__idmap_group __attribute__((vector_size(16)));
typedef char ark__idmap_group_alias __attribute__((vector_size(16), may_alias));
/* The control word at p, which is 16-byte aligned (an aligned
 * load folds into the compare that uses it). */
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_group
ark__idmap_load(const uint8_t *p) {
    return *(const ark__idmap_group_alias *)(const void *)p;
}
typedef unsigned ark__idmap_words __attribute__((vector_size(16)));
/* The bytes equal to the byte repeated in w (a tag word, or 0). */
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_mask
ark__idmap_match(ark__idmap_group g, uint32_t w) {
    ark__idmap_words t = {w, w, w, w};
    return (unsigned)__builtin_ia32_pmovmskb128(
        (ark__idmap_group)(g == (ark__idmap_group)t));
}
#elif defined(ARK__IDMAP_SSE2)
typedef __m128i ark__idmap_group;
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_group
ark__idmap_load(const uint8_t *p) {
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_mask
ark__idmap_match(ark__idmap_group g, uint32_t w) {
    return (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(g, _mm_set1_epi32((int)w)));
}
#else
/* Portable: two little-endian words; exact zero-byte tests, then the top
 * bit of each byte gathered into one byte by a multiply. */
typedef struct ark__idmap_group {
    uint64_t w[2];
} ark__idmap_group;
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_group
ark__idmap_load(const uint8_t *p) {
    ark__idmap_group g;
    memcpy(g.w, p, 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    g.w[0] = __builtin_bswap64(g.w[0]);
    g.w[1] = __builtin_bswap64(g.w[1]);
#endif
    return g;
}
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_mask ark__idmap_zero8(uint64_t x) {
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t z = ~(((x & low7) + low7) | x | low7); /* 0x80 per zero byte */
    return (ark__idmap_mask)(((z >> 7) * 0x0102040810204080ull) >> 56);
}
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_mask
ark__idmap_match(ark__idmap_group g, uint32_t w) {
    uint64_t p = 0x0000000100000001ull * w;
    return ark__idmap_zero8(g.w[0] ^ p) | ark__idmap_zero8(g.w[1] ^ p) << 8;
}
#endif

/* Empty the slot whose control byte is ctl, and return its
 * group's overflow byte. Where GNU vectors are available the control word
 * is rewritten with a vector of unsigned ints, not a byte: a byte store may
 * alias anything, so after one a caller's loop must reload the map's
 * fields, and those loads then wait on the store's address (which waits on
 * a cache miss) whenever the processor predicts that they might alias it
 * (docs/design-notes.md, "Id map removal"). */
#if defined(ARK__IDMAP_SSE2) && (defined(__GNUC__) || defined(__clang__))
/* Entry i has every bit set except those of byte i. */
ARK_API extern const ark__idmap_words ark__idmap_keep[16];
ARK__ALWAYS_INLINE ARK__INLINE uint8_t ark__idmap_clear(uint8_t *ctl) {
    uintptr_t a = (uintptr_t)ctl;
    ark__idmap_words *w = (ark__idmap_words *)(a & ~(uintptr_t)15);
    uint8_t overflow = ((const uint8_t *)w)[15];
    *w &= ark__idmap_keep[a & 15];
    return overflow;
}
#else
ARK__ALWAYS_INLINE ARK__INLINE uint8_t ark__idmap_clear(uint8_t *ctl) {
    uint8_t overflow = *(const uint8_t *)((uintptr_t)ctl | 15);
    *ctl = 0;
    return overflow;
}
#endif

/* The lowest set bit of a nonzero group mask. */
#if defined(__GNUC__) || defined(__clang__)
ARK__ALWAYS_INLINE ARK__INLINE unsigned ark__idmap_first(ark__idmap_mask m) {
    return (unsigned)__builtin_ctz(m); /* 32 bits: no widening after it */
}
#else
ARK__ALWAYS_INLINE ARK__INLINE unsigned ark__idmap_first(ark__idmap_mask m) {
    return ark__ctz64(m);
}
#endif

/* The full slots of a group. */
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_mask
ark__idmap_full(const uint8_t *ctrl) {
    return ~ark__idmap_match(ark__idmap_load(ctrl), 0) & ARK__IDMAP_SLOT_BITS;
}

/* The empty slots of a group. */
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_mask
ark__idmap_empty(const uint8_t *ctrl) {
    return ark__idmap_match(ark__idmap_load(ctrl), 0) & ARK__IDMAP_SLOT_BITS;
}

/* Store key, value (hash h) in slot i of group g and tag it. */
ARK__ALWAYS_INLINE ARK__INLINE void ark__idmap_store(ark_idmap *m, size_t g,
                                                     unsigned i, uint64_t h,
                                                     uint64_t key,
                                                     uint64_t value) {
    ark__idmap_slot *s = m->slots + g * ARK__IDMAP_SLOTS + i;
    s->key = key;
    s->value = value;
    m->ctrl[g * 16 + i] = ark__idmap_tag(h);
}

/* The slot of key in group g (tag word tag), or NULL; when
 * found, *ctl is its control byte. */
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_slot *
ark__idmap_in_group(const ark_idmap *m, size_t g, uint64_t key, uint32_t tag,
                    uint8_t **ctl) {
    uint8_t *c = m->ctrl + g * 16;
    ark__idmap_slot *s = m->slots + g * ARK__IDMAP_SLOTS;
    ark__idmap_mask hit =
        ark__idmap_match(ark__idmap_load(c), tag) & ARK__IDMAP_SLOT_BITS;
    if (hit != 0) {
        /* The slot's address waits for the control word; its first line
         * does not, so a hit's two cache (and TLB) misses overlap instead
         * of following each other. */
        ARK__IDMAP_PREFETCH(s);
        do {
            unsigned i = ark__idmap_first(hit);
            if (s[i].key == key) {
                *ctl = c + i;
                return &s[i];
            }
            hit &= hit - 1;
        } while (hit != 0);
    }
    return NULL;
}

/* The slot of key (whose hash is h) from the second group of its
 * probe sequence on, or NULL (out of line: random keys need it about once
 * in a thousand lookups). It only reads memory, which a caller's compiler
 * is told, so that a loop around a lookup keeps the map's fields in
 * registers. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((pure))
#endif
ARK_API ark__idmap_slot *
ark__idmap_find_on(const ark_idmap *m, uint64_t key, uint64_t h);

/* The control byte of slot s. */
ARK__ALWAYS_INLINE ARK__INLINE uint8_t *
ark__idmap_ctl_of(const ark_idmap *m, const ark__idmap_slot *s) {
    size_t i = (size_t)(s - m->slots);
    return m->ctrl + i / ARK__IDMAP_SLOTS * 16 + i % ARK__IDMAP_SLOTS;
}

/* The slot of key (whose hash is h), or NULL; when found, *ctl is
 * its control byte. The probe stops at the first group whose overflow bit
 * for h is clear, or after ARK_IDMAP_MAX_PROBE groups, beyond which no key
 * is ever stored. Only the home group is probed inline: the loop's counter
 * and bound would cost every lookup registers and instructions. */
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_slot *
ark__idmap_find_h(const ark_idmap *m, uint64_t key, uint64_t h, uint8_t **ctl) {
    size_t g = (size_t)h & m->gmask;
    ark__idmap_slot *s =
        ark__idmap_in_group(m, g, key, ark__idmap_tagw(h), ctl);
    if (s != NULL || !ark__idmap_overflowed(m->ctrl, g, h)) {
        return s;
    }
    s = ark__idmap_find_on(m, key, h);
    if (s != NULL) {
        *ctl = ark__idmap_ctl_of(m, s);
    }
    return s;
}

/* The slot of key, or NULL. */
ARK__ALWAYS_INLINE ARK__INLINE ark__idmap_slot *
ark__idmap_find(const ark_idmap *m, uint64_t key) {
    uint8_t *ctl;
    return ark__idmap_find_h(m, key, ark__idmap_hash_in(m, key), &ctl);
}

ARK__ALWAYS_INLINE ARK__INLINE bool
ark_idmap_get(const ark_idmap *m, uint64_t key, uint64_t *value) {
    const ark__idmap_slot *s = ark__idmap_find(m, key);
    if (s == NULL) {
        return false;
    }
    if (value != NULL) {
        *value = s->value;
    }
    return true;
}

ARK__ALWAYS_INLINE ARK__INLINE uint64_t *ark_idmap_get_ptr(ark_idmap *m,
                                                           uint64_t key) {
    ark__idmap_slot *s = ark__idmap_find(m, key);
    return s == NULL ? NULL : &s->value;
}

ARK__ALWAYS_INLINE ARK__INLINE const uint64_t *
ark_idmap_find(const ark_idmap *m, uint64_t key) {
    const ark__idmap_slot *s = ark__idmap_find(m, key);
    return s == NULL ? NULL : &s->value;
}

ARK__ALWAYS_INLINE ARK__INLINE bool ark_idmap_take(ark_idmap *m, uint64_t key,
                                                   uint64_t *old) {
    uint8_t *ctl;
    const ark__idmap_slot *s =
        ark__idmap_find_h(m, key, ark__idmap_hash_in(m, key), &ctl);
    if (s == NULL) {
        return false;
    }
    if (old != NULL) {
        *old = s->value;
    }
    /* The freed slot may have sent a later key past this group: its
     * overflow bit stays, and costs one unit of max_load (idmap.c rebuilds
     * the bits when max_load runs out). The group's overflow byte is its
     * 16th control byte. */
    m->max_load -= ark__idmap_clear(ctl) != 0;
    m->count--;
    return true;
}

ARK__ALWAYS_INLINE ARK__INLINE bool ark_idmap_remove(ark_idmap *m,
                                                     uint64_t key) {
    return ark_idmap_take(m, key, NULL);
}

/* Put (overwrite) or insert (!overwrite) of key, hash h, past
 * the inline fast path, which has found key absent from its home group:
 * the probe sequence goes on past the home group, the home group is full,
 * or the table must make room first. */
ARK_API ark_status ark__idmap_put_on(ark_idmap *m, uint64_t key, uint64_t value,
                                     uint64_t h, bool overwrite);

/* Put or insert. The common case (key in its home group, or
 * absent with room there) is inline, like a lookup; everything else is
 * ark__idmap_put_on. */
ARK__ALWAYS_INLINE ARK__INLINE ark_status ark__idmap_put_at(ark_idmap *m,
                                                            uint64_t key,
                                                            uint64_t value,
                                                            bool overwrite) {
    uint64_t h = ark__idmap_hash_in(m, key);
    size_t g = (size_t)h & m->gmask;
    uint8_t *ctl;
    ark__idmap_slot *s =
        ark__idmap_in_group(m, g, key, ark__idmap_tagw(h), &ctl);
    if (s != NULL) {
        if (!overwrite) {
            return ARK_EEXIST;
        }
        s->value = value;
        return ARK_OK;
    }
    ark__idmap_mask empty = ark__idmap_empty(m->ctrl + g * 16);
    if (ark__idmap_overflowed(m->ctrl, g, h) || empty == 0 ||
        m->count >= m->max_load) {
        return ark__idmap_put_on(m, key, value, h, overwrite);
    }
    ark__idmap_store(m, g, ark__idmap_first(empty), h, key, value);
    m->count++;
    m->stats.inserts++; /* flood statistics: inserts since the rebuild */
    return ARK_OK;
}

ARK__ALWAYS_INLINE ARK__INLINE ark_status ark_idmap_put(ark_idmap *m,
                                                        uint64_t key,
                                                        uint64_t value) {
    return ark__idmap_put_at(m, key, value, true);
}

ARK__ALWAYS_INLINE ARK__INLINE ark_status ark_idmap_insert(ark_idmap *m,
                                                           uint64_t key,
                                                           uint64_t value) {
    return ark__idmap_put_at(m, key, value, false);
}

/* Move the iterator to the next full slot: the lowest bit left in
 * the current group's mask, else the first full slot of a later group, or
 * the end. The mask is taken once when the walk enters a group, so a step
 * is a bit-clear and the slot's loads. Removing the entry the iterator is
 * at leaves the mask right: its bit is already cleared. */
ARK__ALWAYS_INLINE ARK__INLINE void ark__idmap_iter_step(ark_idmap_iter *it) {
    const ark_idmap *m = it->map;
    while (it->rest == 0) {
        if (++it->group >= it->groups) {
            return; /* the end */
        }
        it->rest = ark__idmap_full(m->ctrl + it->group * 16);
    }
    size_t i = it->group * ARK__IDMAP_SLOTS + ark__idmap_first(it->rest);
    it->rest &= it->rest - 1;
    it->key = m->slots[i].key;
    it->value = m->slots[i].value;
}

/* An iterator at the first entry of group g or later (or at the
 * end); a walk that let go of the map resumes there (ark_refmap_clear). */
ARK__INLINE ark_idmap_iter ark__idmap_iter_from(const ark_idmap *m, size_t g) {
    ark_idmap_iter it;
    it.map = m;
    it.key = 0;
    it.value = 0;
    it.groups = m->count == 0 ? 0 : m->gmask + 1;
    it.group = g - 1; /* the walk enters group g first (0: from SIZE_MAX) */
    it.rest = 0;
    ark__idmap_iter_step(&it);
    return it;
}

/* Return an iterator at the first entry (or at the end). */
ARK__INLINE ark_idmap_iter ark_idmap_iter_begin(const ark_idmap *m) {
    return ark__idmap_iter_from(m, 0);
}

/* Return true while the iterator is at an entry. */
ARK__INLINE bool ark_idmap_iter_valid(const ark_idmap_iter *it) {
    return it->group < it->groups;
}

/* Advance to the next entry. */
ARK__INLINE void ark_idmap_iter_next(ark_idmap_iter *it) {
    ark__idmap_iter_step(it);
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_IDMAP_H */
