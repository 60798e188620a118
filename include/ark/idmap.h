/* SPDX-License-Identifier: MIT */
/*
 * ark/idmap.h - a uint64 -> uint64 hash map for ids you do not choose.
 *
 * Maps external ids (account ids, item template ids, entity ids from the
 * wire) to values such as ark handles. Every 64-bit key is valid, 0 and
 * UINT64_MAX included; no key value is reserved.
 *
 * Layout: open addressing over groups of 15 slots. One allocation holds
 * `groups * 15` 16-byte slots (key, value) and `groups` 16-byte control
 * words. Control byte i < 15 of a group is 0 for an empty slot and an 8-bit
 * tag of the key's hash for a full one; byte 15 holds eight overflow bits.
 * A key's home is a group chosen by its hash; an insert takes the first
 * empty slot along the probe sequence home, home+1, home+3, home+6, ...
 * (triangular steps, which visit every group of a power-of-two table) and
 * sets, in each full group it passes, the overflow bit chosen by 3 more
 * bits of the hash. A lookup compares the 15 tags of a group at once (SSE2,
 * or a portable SWAR fallback forced by defining ARK_IDMAP_NO_SIMD; both
 * read the same table) and stops at the first group whose overflow bit for
 * its hash is clear: an absent key usually costs one control word. Removal
 * clears one control byte; nothing moves, and no tombstone is left.
 *
 * Flood resistance: every map draws its hash seed from the OS's entropy
 * (ark_idmap_set_seed fixes it for reproducible runs). No key is ever
 * stored more than ARK_IDMAP_MAX_PROBE groups along its probe sequence: an
 * insert that would go further re-seeds the map (and, if that does not
 * help, doubles it), so get, remove and take give up after that many
 * groups. Inserts also count how often they land past their home group and
 * past 8 groups, and re-seed when that happens far more often than random
 * keys make it, so a flood is broken up after a few dozen keys (the seed
 * sets the hash's multiplier as well as an xor, so a re-seed changes how
 * any pattern of keys spreads). Whatever
 * the seed, even one an attacker knows and chooses keys against, every
 * operation reads at most ARK_IDMAP_MAX_PROBE groups, and the re-seeds a
 * flood provokes are paid for by its inserts: N chosen keys cost O(N) in
 * total.
 *
 * Invariants:
 * - There are 0 groups (nothing allocated) or a power of two; count stays
 *   at most 7/8 of the slots.
 * - Every key lies within the first ARK_IDMAP_MAX_PROBE groups of its probe
 *   sequence, and every full group it passes there has its overflow bit set.
 * - Iteration order depends only on the seed and the sequence of calls.
 *
 * Cost model: get, put, insert, remove and take are O(1) (at most
 * ARK_IDMAP_MAX_PROBE groups); reserve and growth are O(capacity) (one
 * rehash, at most one allocation); iteration is O(capacity / 15 + count); clear
 * is O(capacity / 15). The map never shrinks; clear keeps its memory. Memory:
 * 17.07 bytes per slot, 19.5 to 39 bytes per entry.
 *
 * Thread-safety: none; a map may be read by several threads at once if
 * none writes.
 */
#ifndef ARK_IDMAP_H
#define ARK_IDMAP_H

#include "ark/core.h"

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

/* Private: slots per group, and the bits of a group mask that are slots
 * (control byte 15 holds the overflow bits). */
#define ARK__IDMAP_SLOTS 15
#define ARK__IDMAP_SLOT_BITS 0x7fffu

/* The most groups a key may lie along its probe sequence; an insert that
 * would go further re-seeds or grows the map, and a lookup gives up there.
 * Random keys at the highest load probe past 20 groups about once in 10^7
 * inserts, and each further group halves that (see docs/idmap.md). */
#define ARK_IDMAP_MAX_PROBE 64

/* The most entries a map can hold: 7/8 of 15 * 2^32 slots on 64-bit
 * systems, 7/8 of 15 * 2^22 on 32-bit ones. reserve and growth beyond it
 * fail with ARK_ENOMEM before anything is allocated. */
#if SIZE_MAX > 0xffffffffu
#define ARK__IDMAP_MAX_GROUPS (ARK__CONST(size_t, 1) << 32)
#else
#define ARK__IDMAP_MAX_GROUPS (ARK__CONST(size_t, 1) << 22)
#endif
#define ARK_IDMAP_MAX_COUNT (ARK__IDMAP_MAX_GROUPS * ARK__IDMAP_SLOTS * 7 / 8)

/* Private: one entry. */
typedef struct ark_idmap_slot {
    uint64_t key;
    uint64_t value;
} ark_idmap_slot;

/* Private: inserts since the table was last rebuilt, and how many of them
 * probed past the home group and past 8 groups (flood detection). */
typedef struct ark__idmap_stats {
    size_t inserts;
    size_t far_probes;
    size_t longer;
} ark__idmap_stats;

/* Private: 16-byte alignment, which the control words have (lookups load
 * them with aligned loads). */
#ifdef __cplusplus
#define ARK__IDMAP_ALIGN16 alignas(16)
#else
#define ARK__IDMAP_ALIGN16 _Alignas(16)
#endif

/* A map. The fields are private; they are declared here only so that the
 * inline functions below can read them. */
typedef struct ark_idmap {
    /* private, read by the inline functions */
    ark_idmap_slot *slots; /* groups * 15 slots; &spare_slot when none */
    uint8_t *ctrl;         /* groups * 16 bytes; spare_ctrl when none */
    size_t gmask;          /* groups - 1, or 0 when nothing is allocated */
    uint64_t seed;         /* hash seed */
    uint64_t mul;          /* hash multiplier: ark__idmap_mul(seed) */
    size_t count;          /* entries */
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
    ark_allocator alloc;
    ark_idmap_slot spare_slot;
    ARK__IDMAP_ALIGN16 uint8_t spare_ctrl[16]; /* all empty, no overflow */
} ark_idmap;

/*
 * Create an empty map with a seed drawn from the OS's entropy (getrandom,
 * getentropy or BCryptGenRandom; where none answers, a value mixed from
 * addresses and clocks, distinct per map but not secret: the probe bound
 * still caps every operation). Nothing but the map itself is allocated until
 * the first insert or reserve. *out is set only on success.
 * Memory: with a = NULL (the C library) on a 64-bit system, a table of
 * 64 KiB to 4 GiB of slots lies in a reservation of address space with
 * room for 64 times as many groups, up to 4 GiB of slots; its pages are
 * made writable as the table grows there in place, instead of being copied
 * into a second table, so a growing map's peak is its table, not one and a
 * half. The reservation is aligned to 2 MiB and, on Linux, asks for
 * transparent huge pages (madvise), which makes random access to a large
 * map 10-20% faster. Pass an allocator to decide yourself: its blocks are
 * used as they are, and a growing table is copied.
 * Errors: ARK_EINVAL (a given allocator lacks a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_idmap_create(ark_idmap **out, const ark_allocator *a);

/* Free the map and its table. m may be NULL. */
ARK_API void ark_idmap_destroy(ark_idmap *m);

/*
 * Set the hash seed of an empty map, so that a run is reproducible: two
 * maps given the same seed and the same calls iterate in the same order.
 * Has no effect when the map holds entries (its seed is then kept). When a
 * long probe sequence forces a re-seed, a map with a fixed seed re-seeds
 * first to a value derived from its seed (still reproducible); only when
 * keys collide under that one too does it draw from the OS's entropy.
 * Random keys essentially never force a re-seed.
 * Complexity: O(1), or O(capacity / 15) when a table is allocated.
 */
ARK_API void ark_idmap_set_seed(ark_idmap *m, uint64_t seed);

/*
 * Make room for n entries in all, so that inserts allocate nothing and never
 * rehash while count stays at most n (unless a flood of colliding keys
 * forces a re-seed). With removals in between, a table more than 3/4 full
 * may still double: removals leave overflow bits behind, and clearing them
 * in place that often would cost O(capacity) per insert.
 * Errors: ARK_ENOMEM (the map is unchanged; also when n exceeds
 * ARK_IDMAP_MAX_COUNT, reported before anything is allocated).
 * Complexity: O(capacity) when the table must grow, else O(1).
 */
ARK_API ark_status ark_idmap_reserve(ark_idmap *m, size_t n);

/* ark_idmap_put, ark_idmap_insert, ark_idmap_remove and ark_idmap_take are
 * inline, below ark_idmap_get. */

/* Return the number of entries. */
ARK_API size_t ark_idmap_count(const ark_idmap *m);

/* Remove every entry; the table and the seed are kept for reuse. */
ARK_API void ark_idmap_clear(ark_idmap *m);

/*
 * Call fn(key, value, ud) on every entry, in table order, until fn returns
 * false. The map must not be modified during the walk.
 */
ARK_API void ark_idmap_each(const ark_idmap *m,
                            bool (*fn)(uint64_t key, uint64_t value, void *ud),
                            void *ud);

/* Private: the hash of a key under a seed: key ^ seed times mul, the
 * seed's odd multiplier (ark__idmap_mul), a folded 64x64->128 multiply
 * whose every output bit depends on every input bit. Bits 0.. pick the
 * home group, bits 53..55 the overflow bit, bits 56..63 the tag. The
 * multiplier depends on the seed: with a constant one, keys that take
 * every value of a few aligned bit fields piled up the same way under
 * every seed, since xor with a seed only permutes each field's values
 * (28% of 1M such keys past their home group, inserts 5-6x slower than
 * random keys, the table doubled, whatever the re-seeds; docs/idmap.md).
 * A map keeps mul beside its seed, so a lookup loads it as it loaded the
 * constant. */
#define ARK__IDMAP_MUL 0x9ddfea08eb382d69ull

/* Private: the multiplier of a seed: random for a random seed, the
 * constant above for seed 0. */
ARK_ALWAYS_INLINE ARK_INLINE uint64_t ark__idmap_mul(uint64_t seed) {
    return (seed ^ ARK__IDMAP_MUL) | 1;
}

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 ark__idmap_u128;
ARK_ALWAYS_INLINE ARK_INLINE uint64_t ark__idmap_hash(uint64_t seed,
                                                      uint64_t mul,
                                                      uint64_t key) {
    ark__idmap_u128 p = (ark__idmap_u128)(key ^ seed) * mul;
    return (uint64_t)(p >> 64) ^ (uint64_t)p;
}
#else
ARK_ALWAYS_INLINE ARK_INLINE uint64_t ark__idmap_hash(uint64_t seed,
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

/* Private: the hash of a key in map m. */
ARK_ALWAYS_INLINE ARK_INLINE uint64_t ark__idmap_hash_in(const ark_idmap *m,
                                                         uint64_t key) {
    return ark__idmap_hash(m->seed, m->mul, key);
}

/* Private: entry t is the control byte of a full slot whose hash has top
 * byte t (t itself, or 1 for 0, which marks an empty slot), repeated in all
 * four bytes: one load gives a lookup the word it compares a group with,
 * where computing and spreading the byte took seven instructions (see
 * docs/idmap.md, "Where the time goes"). */
ARK_API extern const uint32_t ark__idmap_tagword[256];

/* Private: the tag word (four copies of the control byte) of hash h. */
ARK_ALWAYS_INLINE ARK_INLINE uint32_t ark__idmap_tagw(uint64_t h) {
    return ark__idmap_tagword[h >> 56];
}

/* Private: the control byte of a full slot whose key hashed to h (never 0,
 * which marks an empty slot). */
ARK_ALWAYS_INLINE ARK_INLINE uint8_t ark__idmap_tag(uint64_t h) {
    return (uint8_t)ark__idmap_tagw(h);
}

/* Private: which of the eight overflow bits of byte 15 of a group is h's. */
ARK_ALWAYS_INLINE ARK_INLINE unsigned ark__idmap_ofw_bit(uint64_t h) {
    return (unsigned)(h >> 53) & 7;
}

/* Private: the overflow bit of h in byte 15 of a group, as a mask. */
ARK_ALWAYS_INLINE ARK_INLINE uint8_t ark__idmap_ofw(uint64_t h) {
    return (uint8_t)(1u << ark__idmap_ofw_bit(h));
}

/* Private: whether keys of hash h were ever sent past group g (its
 * overflow bit for h, in byte 15 of its control word, is set). */
ARK_ALWAYS_INLINE ARK_INLINE bool ark__idmap_overflowed(const uint8_t *ctrl,
                                                        size_t g, uint64_t h) {
    return ((unsigned)ctrl[g * 16 + 15] >> ark__idmap_ofw_bit(h) & 1) != 0;
}

/* Private: a hint to start loading the cache line at p. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK__IDMAP_PREFETCH(p) __builtin_prefetch(p)
#elif defined(ARK__IDMAP_SSE2)
#define ARK__IDMAP_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define ARK__IDMAP_PREFETCH(p) ((void)(p))
#endif

/* Private: a mask over the 16 bytes of a control word, bit b for byte b. */
typedef unsigned ark__idmap_mask;
#if defined(ARK__IDMAP_SSE2) && (defined(__GNUC__) || defined(__clang__))
/* GNU vector types and the SSE2 builtin: <emmintrin.h>'s static inline
 * wrappers may not be called from C11 extern-inline functions. */
typedef char ark__idmap_group __attribute__((vector_size(16)));
typedef char ark__idmap_group_alias __attribute__((vector_size(16), may_alias));
/* Private: the control word at p, which is 16-byte aligned (an aligned
 * load folds into the compare that uses it). */
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_group
ark__idmap_load(const uint8_t *p) {
    return *(const ark__idmap_group_alias *)(const void *)p;
}
typedef unsigned ark__idmap_words __attribute__((vector_size(16)));
/* Private: the bytes equal to the byte repeated in w (a tag word, or 0). */
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_mask
ark__idmap_match(ark__idmap_group g, uint32_t w) {
    ark__idmap_words t = {w, w, w, w};
    return (unsigned)__builtin_ia32_pmovmskb128(
        (ark__idmap_group)(g == (ark__idmap_group)t));
}
#elif defined(ARK__IDMAP_SSE2)
typedef __m128i ark__idmap_group;
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_group
ark__idmap_load(const uint8_t *p) {
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_mask
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
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_group
ark__idmap_load(const uint8_t *p) {
    ark__idmap_group g;
    memcpy(g.w, p, 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    g.w[0] = __builtin_bswap64(g.w[0]);
    g.w[1] = __builtin_bswap64(g.w[1]);
#endif
    return g;
}
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_mask ark__idmap_zero8(uint64_t x) {
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t z = ~(((x & low7) + low7) | x | low7); /* 0x80 per zero byte */
    return (ark__idmap_mask)(((z >> 7) * 0x0102040810204080ull) >> 56);
}
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_mask
ark__idmap_match(ark__idmap_group g, uint32_t w) {
    uint64_t p = 0x0000000100000001ull * w;
    return ark__idmap_zero8(g.w[0] ^ p) | ark__idmap_zero8(g.w[1] ^ p) << 8;
}
#endif

/* Private: empty the slot whose control byte is ctl, and return its
 * group's overflow byte. Where GNU vectors are available the control word
 * is rewritten with a vector of unsigned ints, not a byte: a byte store may
 * alias anything, so after one a caller's loop must reload the map's
 * fields, and those loads then wait on the store's address (which waits on
 * a cache miss) whenever the processor predicts that they might alias it;
 * measured, that made an unchanged remove loop 1.15-1.40x slower in one
 * program and not in another (docs/idmap.md). */
#if defined(ARK__IDMAP_SSE2) && (defined(__GNUC__) || defined(__clang__))
/* Private: entry i has every bit set except those of byte i. */
ARK_API extern const ark__idmap_words ark__idmap_keep[16];
ARK_ALWAYS_INLINE ARK_INLINE uint8_t ark__idmap_clear(uint8_t *ctl) {
    uintptr_t a = (uintptr_t)ctl;
    ark__idmap_words *w = (ark__idmap_words *)(a & ~(uintptr_t)15);
    uint8_t overflow = ((const uint8_t *)w)[15];
    *w &= ark__idmap_keep[a & 15];
    return overflow;
}
#else
ARK_ALWAYS_INLINE ARK_INLINE uint8_t ark__idmap_clear(uint8_t *ctl) {
    uint8_t overflow = *(const uint8_t *)((uintptr_t)ctl | 15);
    *ctl = 0;
    return overflow;
}
#endif

/* Private: the lowest set bit of a nonzero group mask. */
#if defined(__GNUC__) || defined(__clang__)
ARK_ALWAYS_INLINE ARK_INLINE unsigned ark__idmap_first(ark__idmap_mask m) {
    return (unsigned)__builtin_ctz(m); /* 32 bits: no widening after it */
}
#else
ARK_ALWAYS_INLINE ARK_INLINE unsigned ark__idmap_first(ark__idmap_mask m) {
    return ark__ctz64(m);
}
#endif

/* Private: the full slots of a group. */
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_mask
ark__idmap_full(const uint8_t *ctrl) {
    return ~ark__idmap_match(ark__idmap_load(ctrl), 0) & ARK__IDMAP_SLOT_BITS;
}

/* Private: the empty slots of a group. */
ARK_ALWAYS_INLINE ARK_INLINE ark__idmap_mask
ark__idmap_empty(const uint8_t *ctrl) {
    return ark__idmap_match(ark__idmap_load(ctrl), 0) & ARK__IDMAP_SLOT_BITS;
}

/* Private: store key, value (hash h) in slot i of group g and tag it. */
ARK_ALWAYS_INLINE ARK_INLINE void ark__idmap_store(ark_idmap *m, size_t g,
                                                   unsigned i, uint64_t h,
                                                   uint64_t key,
                                                   uint64_t value) {
    ark_idmap_slot *s = m->slots + g * ARK__IDMAP_SLOTS + i;
    s->key = key;
    s->value = value;
    m->ctrl[g * 16 + i] = ark__idmap_tag(h);
}

/* Private: the slot of key in group g (tag word tag), or NULL; when
 * found, *ctl is its control byte. */
ARK_ALWAYS_INLINE ARK_INLINE ark_idmap_slot *
ark__idmap_in_group(const ark_idmap *m, size_t g, uint64_t key, uint32_t tag,
                    uint8_t **ctl) {
    uint8_t *c = m->ctrl + g * 16;
    ark_idmap_slot *s = m->slots + g * ARK__IDMAP_SLOTS;
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

/* Private: the slot of key (whose hash is h) from the second group of its
 * probe sequence on, or NULL (out of line: random keys need it about once
 * in a thousand lookups). It only reads memory, which a caller's compiler
 * is told, so that a loop around a lookup keeps the map's fields in
 * registers. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((pure))
#endif
ARK_API ark_idmap_slot *
ark__idmap_find_on(const ark_idmap *m, uint64_t key, uint64_t h);

/* Private: the control byte of slot s. */
ARK_ALWAYS_INLINE ARK_INLINE uint8_t *
ark__idmap_ctl_of(const ark_idmap *m, const ark_idmap_slot *s) {
    size_t i = (size_t)(s - m->slots);
    return m->ctrl + i / ARK__IDMAP_SLOTS * 16 + i % ARK__IDMAP_SLOTS;
}

/* Private: the slot of key (whose hash is h), or NULL; when found, *ctl is
 * its control byte. The probe stops at the first group whose overflow bit
 * for h is clear, or after ARK_IDMAP_MAX_PROBE groups, beyond which no key
 * is ever stored. Only the home group is probed inline: the loop's counter
 * and bound would cost every lookup registers and instructions. */
ARK_ALWAYS_INLINE ARK_INLINE ark_idmap_slot *
ark__idmap_find_h(const ark_idmap *m, uint64_t key, uint64_t h, uint8_t **ctl) {
    size_t g = (size_t)h & m->gmask;
    ark_idmap_slot *s = ark__idmap_in_group(m, g, key, ark__idmap_tagw(h), ctl);
    if (s != NULL || !ark__idmap_overflowed(m->ctrl, g, h)) {
        return s;
    }
    s = ark__idmap_find_on(m, key, h);
    if (s != NULL) {
        *ctl = ark__idmap_ctl_of(m, s);
    }
    return s;
}

/* Private: the slot of key, or NULL. */
ARK_ALWAYS_INLINE ARK_INLINE ark_idmap_slot *ark__idmap_find(const ark_idmap *m,
                                                             uint64_t key) {
    uint8_t *ctl;
    return ark__idmap_find_h(m, key, ark__idmap_hash_in(m, key), &ctl);
}

/*
 * Look key up. Returns true and stores its value in *value (if value is
 * not NULL) when present; returns false and leaves *value alone otherwise.
 * Complexity: O(1); usually one control word and one slot are read, never
 * more than ARK_IDMAP_MAX_PROBE groups.
 */
ARK_INLINE bool ark_idmap_get(const ark_idmap *m, uint64_t key,
                              uint64_t *value) {
    const ark_idmap_slot *s = ark__idmap_find(m, key);
    if (s == NULL) {
        return false;
    }
    if (value != NULL) {
        *value = s->value;
    }
    return true;
}

/*
 * Return the address of key's stored value, or NULL when key is absent.
 * Writing through it changes the value in place.
 * Lifetime: until the next put, insert, reserve, clear or destroy on m (any
 * of which may move entries), or the removal of key.
 */
ARK_INLINE uint64_t *ark_idmap_get_ptr(ark_idmap *m, uint64_t key) {
    ark_idmap_slot *s = ark__idmap_find(m, key);
    return s == NULL ? NULL : &s->value;
}

/*
 * Remove key and store its value in *old (if old is not NULL). Returns
 * true if key was present; otherwise returns false and leaves *old alone.
 * Complexity: O(1), as get: one control byte is cleared, nothing moves.
 */
ARK_INLINE bool ark_idmap_take(ark_idmap *m, uint64_t key, uint64_t *old) {
    uint8_t *ctl;
    const ark_idmap_slot *s =
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

/*
 * Remove key. Returns true if it was present.
 * Complexity: O(1), as take.
 */
ARK_INLINE bool ark_idmap_remove(ark_idmap *m, uint64_t key) {
    return ark_idmap_take(m, key, NULL);
}

/* Private: put (overwrite) or insert (!overwrite) of key, hash h, past
 * the inline fast path, which has found key absent from its home group:
 * the probe sequence goes on past the home group, the home group is full,
 * or the table must make room first. */
ARK_API ark_status ark__idmap_put_on(ark_idmap *m, uint64_t key, uint64_t value,
                                     uint64_t h, bool overwrite);

/* Private: put or insert. The common case (key in its home group, or
 * absent with room there) is inline, like a lookup; everything else is
 * ark__idmap_put_on. */
ARK_ALWAYS_INLINE ARK_INLINE ark_status ark__idmap_put_at(ark_idmap *m,
                                                          uint64_t key,
                                                          uint64_t value,
                                                          bool overwrite) {
    uint64_t h = ark__idmap_hash_in(m, key);
    size_t g = (size_t)h & m->gmask;
    uint8_t *ctl;
    ark_idmap_slot *s =
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

/*
 * Insert key -> value, or overwrite the value if key is present.
 * Errors: ARK_ENOMEM (the table had to grow or be re-seeded and could not
 * allocate, or would exceed ARK_IDMAP_MAX_COUNT; the map is unchanged).
 * Overwriting never allocates and never fails.
 * Complexity: O(1); O(capacity) when it grows or re-seeds.
 */
ARK_INLINE ark_status ark_idmap_put(ark_idmap *m, uint64_t key,
                                    uint64_t value) {
    return ark__idmap_put_at(m, key, value, true);
}

/*
 * Insert key -> value unless key is present; a present key keeps its value.
 * Errors: ARK_EEXIST (key is present; nothing changed), ARK_ENOMEM (as for
 * put; the map is unchanged).
 * Complexity: O(1); O(capacity) when it grows or re-seeds.
 */
ARK_INLINE ark_status ark_idmap_insert(ark_idmap *m, uint64_t key,
                                       uint64_t value) {
    return ark__idmap_put_at(m, key, value, false);
}

/*
 * Inline iterator for the hot loop:
 *
 *     for (ark_idmap_iter it = ark_idmap_iter_begin(m);
 *          ark_idmap_iter_valid(&it); ark_idmap_iter_next(&it)) {
 *         use(it.key, it.value);
 *     }
 *
 * Visits every entry exactly once, in table order. The map must not be
 * modified while an iterator is in use, except that removing or taking the
 * entry the iterator is at is allowed (removal moves nothing). key and value
 * are public and read-only; the other fields are private.
 */
typedef struct ark_idmap_iter {
    uint64_t key;   /* current key */
    uint64_t value; /* its value */
    const ark_idmap *map;
    size_t group, groups; /* the group being walked (>= groups: the end) */
    ark__idmap_mask rest; /* its full slots not visited yet */
} ark_idmap_iter;

/* Private: move the iterator to the next full slot: the lowest bit left in
 * the current group's mask, else the first full slot of a later group, or
 * the end. The mask is taken once when the walk enters a group, so a step
 * is a bit-clear and the slot's loads (matching the control word again at
 * every step, as this did before, took 10.4 ns an entry at 10M random keys
 * and 9.2 at 100K; this takes 4.2 and 2.0). Removing the entry the iterator
 * is at leaves the mask right: its bit is already cleared. */
ARK_ALWAYS_INLINE ARK_INLINE void ark__idmap_iter_step(ark_idmap_iter *it) {
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

/* Private: an iterator at the first entry of group g or later (or at the
 * end); a walk that let go of the map resumes there (ark_refmap_clear). */
ARK_INLINE ark_idmap_iter ark__idmap_iter_from(const ark_idmap *m, size_t g) {
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
ARK_INLINE ark_idmap_iter ark_idmap_iter_begin(const ark_idmap *m) {
    return ark__idmap_iter_from(m, 0);
}

/* Return true while the iterator is at an entry. */
ARK_INLINE bool ark_idmap_iter_valid(const ark_idmap_iter *it) {
    return it->group < it->groups;
}

/* Advance to the next entry. */
ARK_INLINE void ark_idmap_iter_next(ark_idmap_iter *it) {
    ark__idmap_iter_step(it);
}

/*
 * Write the map to w as a snapshot (docs/snapshot.md): its (key, value)
 * pairs in iteration order, with a checksum. The hash seed is not saved.
 * Errors: the writer's status. Complexity: O(count).
 */
ARK_API ark_status ark_idmap_save(const ark_idmap *m, const ark_writer *w);

/*
 * Make a map from the snapshot r reads (one made by ark_idmap_save); *out
 * is set only on success. The map draws a fresh seed from the OS, so its
 * iteration order may differ from the saved map's. Any byte sequence is
 * safe: malformed input (a duplicate key included) gives ARK_ECORRUPT,
 * never a crash, and memory grows only with the pairs actually read.
 * Errors: ARK_ECORRUPT, ARK_ENOMEM, or the reader's status.
 * Complexity: O(count) expected.
 */
ARK_API ark_status ark_idmap_load(ark_idmap **out, const ark_allocator *a,
                                  const ark_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* ARK_IDMAP_H */
