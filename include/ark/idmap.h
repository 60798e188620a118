/*
 * ark/idmap.h - a uint64 -> uint64 hash map for ids you do not choose.
 *
 * Maps external ids (account ids, item template ids, entity ids from the
 * wire) to values such as ark handles. Every 64-bit key is valid, 0 and
 * UINT64_MAX included; no key value is reserved.
 *
 * Layout: open addressing in one allocation holding `capacity` 16-byte
 * slots (key, value) followed by `capacity + 16` control bytes. A control
 * byte is 0 for an empty slot and 0x80 | 7 bits of the key's hash for a full
 * one (the last 16 bytes mirror the first 16 so a group can be loaded at any
 * position without wrapping). Probing is linear, one slot at a time, but
 * tested a group of control bytes at once (16 with SSE2, 8 with a portable
 * SWAR fallback, forced by defining ARK_IDMAP_NO_SIMD; both read the same
 * table): a lookup reads one group of control bytes and usually one slot.
 * Removal shifts the following entries of the run back (no tombstones), so
 * lookups stay as fast after heavy churn as after fresh inserts.
 *
 * Invariants:
 * - Capacity is 0 (nothing allocated) or a power of two >= 16; the map
 *   grows (doubling) before count would exceed 7/8 of capacity, so at least
 *   one slot is always empty and every probe ends.
 * - Every key lies in the run of full slots that starts at its home slot
 *   (no empty slot between its home and it).
 * - Iteration order depends only on the sequence of calls (the hash seed is
 *   a constant) unless the map detected colliding keys and re-seeded
 *   itself; see ark_idmap_put.
 *
 * Cost model: get, put, remove are O(1) expected; reserve and growth are
 * O(capacity) (one rehash, one allocation); iteration is O(capacity / 8 +
 * count); clear is O(capacity / 8). The map never shrinks; clear keeps its
 * memory. Memory: 17 bytes per slot, 19.4 to 38.9 bytes per entry.
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
#define ARK__IDMAP_GROUP 16
#else
#define ARK__IDMAP_GROUP 8
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Private: a hint to start loading the cache line at p. */
#if defined(__GNUC__) || defined(__clang__)
#define ARK__IDMAP_PREFETCH(p) __builtin_prefetch(p)
#else
#define ARK__IDMAP_PREFETCH(p) ((void)(p))
#endif

/* Private: control bytes after the last slot that mirror the first ones. */
#define ARK__IDMAP_MIRROR 16

/* Private: one entry. */
typedef struct ark_idmap_slot {
    uint64_t key;
    uint64_t value;
} ark_idmap_slot;

/* A map. The fields are private; they are declared here only so that the
 * inline functions below can read them. */
typedef struct ark_idmap {
    /* private, read by the inline functions */
    ark_idmap_slot *slots; /* capacity slots; &spare_slot when none */
    uint8_t *ctrl;         /* capacity + 16 bytes; spare_ctrl when none */
    size_t mask;           /* capacity - 1, or 0 when nothing is allocated */
    uint64_t seed;         /* hash seed; a constant unless re-seeded */
    size_t count;          /* entries */
    /* private, used by idmap.c only */
    size_t capacity;   /* slots; 0 when nothing is allocated */
    size_t reseed_cap; /* capacity at the last re-seed, 0 = never */
    ark_allocator alloc;
    ark_idmap_slot spare_slot;
    uint8_t spare_ctrl[ARK__IDMAP_MIRROR]; /* all empty */
} ark_idmap;

/*
 * Create an empty map. Nothing but the map itself is allocated until the
 * first put or reserve. *out is set only on success.
 * Errors: ARK_EINVAL (a given allocator lacks a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_idmap_create(ark_idmap **out, const ark_allocator *a);

/* Free the map and its table. m may be NULL. */
ARK_API void ark_idmap_destroy(ark_idmap *m);

/*
 * Make room for n entries in all, so that puts allocate nothing and never
 * rehash while count stays at most n.
 * Errors: ARK_ENOMEM (the map is unchanged; also when n is too large to
 * address).
 * Complexity: O(capacity) when the table must grow, else O(1).
 */
ARK_API ark_status ark_idmap_reserve(ark_idmap *m, size_t n);

/*
 * Insert key -> value, or overwrite the value if key is present.
 * Errors: ARK_ENOMEM (the table had to grow and could not; the map is
 * unchanged). Overwriting never allocates and never fails.
 * Colliding keys: keys whose hashes share their low bits form one long run
 * and cost O(run) per operation, but stay correct. When an insert lands
 * more than ARK_IDMAP_RESEED_PROBE slots from its home, the map rehashes
 * itself once per capacity with a new seed drawn from its own addresses,
 * which scatters keys chosen against the default seed; iteration order is
 * then no longer reproducible between processes. If that rehash cannot
 * allocate, the map simply keeps the long run.
 * Complexity: O(1) expected; O(capacity) when it grows.
 */
ARK_API ark_status ark_idmap_put(ark_idmap *m, uint64_t key, uint64_t value);

/* Probe distance past which an insert re-seeds the map (see put). */
#define ARK_IDMAP_RESEED_PROBE 1024

/*
 * Remove key. Returns true if it was present.
 * Complexity: O(1) expected (the rest of the run is shifted back).
 */
ARK_API bool ark_idmap_remove(ark_idmap *m, uint64_t key);

/* Return the number of entries. */
ARK_API size_t ark_idmap_count(const ark_idmap *m);

/* Remove every entry; the table is kept for reuse (and the seed reset). */
ARK_API void ark_idmap_clear(ark_idmap *m);

/*
 * Call fn(key, value, ud) on every entry, in table order, until fn returns
 * false. The map must not be modified during the walk.
 */
ARK_API void ark_idmap_each(const ark_idmap *m,
                            bool (*fn)(uint64_t key, uint64_t value, void *ud),
                            void *ud);

/* Private: the hash of a key under a seed (a folded 64x64->128 multiply,
 * whose every output bit depends on every input bit). */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 ark__idmap_u128;
inline uint64_t ark__idmap_hash(uint64_t seed, uint64_t key) {
    ark__idmap_u128 p = (ark__idmap_u128)(key ^ seed) * 0x9ddfea08eb382d69ull;
    return (uint64_t)(p >> 64) ^ (uint64_t)p;
}
#else
inline uint64_t ark__idmap_hash(uint64_t seed, uint64_t key) {
    uint64_t a = key ^ seed, b = 0x9ddfea08eb382d69ull;
    uint64_t al = a & 0xffffffffu, ah = a >> 32;
    uint64_t bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    uint64_t lo = (mid << 32) | (ll & 0xffffffffu);
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return hi ^ lo;
}
#endif

/* Private: the control byte of a full slot whose key hashed to h. */
inline uint8_t ark__idmap_tag(uint64_t h) {
    return (uint8_t)(0x80 | (h >> 57));
}

/* Private: a bit mask over one group of control bytes. With SSE2 bit b
 * stands for byte b; with SWAR bit 8b+7 does. */
typedef uint64_t ark__idmap_mask;
#if defined(ARK__IDMAP_SSE2) && (defined(__GNUC__) || defined(__clang__))
/* GNU vector types and the SSE2 builtin: <emmintrin.h>'s static inline
 * wrappers may not be called from C11 extern-inline functions. */
#define ARK__IDMAP_BIT_SHIFT 0
typedef char ark__idmap_group __attribute__((vector_size(16)));
inline ark__idmap_group ark__idmap_load(const uint8_t *p) {
    ark__idmap_group g;
    memcpy(&g, p, 16);
    return g;
}
/* Private: bytes equal to tag (exact). */
inline ark__idmap_mask ark__idmap_match(ark__idmap_group g, uint8_t tag) {
    ark__idmap_group t = {0};
    t += (char)tag;
    return (unsigned)__builtin_ia32_pmovmskb128((ark__idmap_group)(g == t));
}
/* Private: full bytes (top bit set). */
inline ark__idmap_mask ark__idmap_full(ark__idmap_group g) {
    return (unsigned)__builtin_ia32_pmovmskb128(g);
}
/* Private: empty bytes. */
inline ark__idmap_mask ark__idmap_empty(ark__idmap_group g) {
    return ~(unsigned)__builtin_ia32_pmovmskb128(g) & 0xffffu;
}
#elif defined(ARK__IDMAP_SSE2)
#define ARK__IDMAP_BIT_SHIFT 0
typedef __m128i ark__idmap_group;
inline ark__idmap_group ark__idmap_load(const uint8_t *p) {
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}
inline ark__idmap_mask ark__idmap_match(ark__idmap_group g, uint8_t tag) {
    return (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(g, _mm_set1_epi8((char)tag)));
}
inline ark__idmap_mask ark__idmap_full(ark__idmap_group g) {
    return (unsigned)_mm_movemask_epi8(g);
}
inline ark__idmap_mask ark__idmap_empty(ark__idmap_group g) {
    return ~(unsigned)_mm_movemask_epi8(g) & 0xffffu;
}
#else
#define ARK__IDMAP_BIT_SHIFT 3
typedef uint64_t ark__idmap_group;
inline ark__idmap_group ark__idmap_load(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}
/* Private: bytes equal to tag. May also flag a full byte above a real
 * match (borrow); callers compare keys, so that only costs a compare. */
inline ark__idmap_mask ark__idmap_match(ark__idmap_group g, uint8_t tag) {
    uint64_t x = g ^ (0x0101010101010101ull * tag);
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}
inline ark__idmap_mask ark__idmap_full(ark__idmap_group g) {
    return g & 0x8080808080808080ull;
}
inline ark__idmap_mask ark__idmap_empty(ark__idmap_group g) {
    return ~g & 0x8080808080808080ull;
}
#endif

/* Private: the slot of key (whose hash is h), or NULL after storing in
 * *empty the first empty slot of its run, where an insert would go. */
inline ark_idmap_slot *ark__idmap_probe(const ark_idmap *m, uint64_t key,
                                        uint64_t h, size_t *empty) {
    uint8_t tag = ark__idmap_tag(h);
    size_t i = (size_t)h & m->mask;
    /* Fetch the home slot's line while the control bytes are fetched: a
     * hit is usually there, and the two misses then overlap. */
    ARK__IDMAP_PREFETCH(m->slots + i);
    for (;;) {
        ark__idmap_group g = ark__idmap_load(m->ctrl + i);
        ark__idmap_mask hit = ark__idmap_match(g, tag);
        while (hit != 0) {
            size_t j =
                (i + (ark__ctz64(hit) >> ARK__IDMAP_BIT_SHIFT)) & m->mask;
            if (m->slots[j].key == key) {
                return &m->slots[j];
            }
            hit &= hit - 1;
        }
        ark__idmap_mask e = ark__idmap_empty(g);
        if (e != 0) {
            *empty = (i + (ark__ctz64(e) >> ARK__IDMAP_BIT_SHIFT)) & m->mask;
            return NULL;
        }
        i = (i + ARK__IDMAP_GROUP) & m->mask;
    }
}

/* Private: the slot of key, or NULL. */
inline ark_idmap_slot *ark__idmap_find(const ark_idmap *m, uint64_t key) {
    size_t unused;
    return ark__idmap_probe(m, key, ark__idmap_hash(m->seed, key), &unused);
}

/*
 * Look key up. Returns true and stores its value in *value (if value is
 * not NULL) when present; returns false and leaves *value alone otherwise.
 * Complexity: O(1) expected; usually one group of control bytes and one
 * slot are read.
 */
inline bool ark_idmap_get(const ark_idmap *m, uint64_t key, uint64_t *value) {
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
 * Lifetime: until the next put, remove, reserve, clear or destroy on m
 * (any of which may move entries).
 */
inline uint64_t *ark_idmap_get_ptr(ark_idmap *m, uint64_t key) {
    ark_idmap_slot *s = ark__idmap_find(m, key);
    return s == NULL ? NULL : &s->value;
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
 * modified while an iterator is in use (a removal shifts entries, which
 * could then be skipped or seen twice). key and value are public and
 * read-only; the other fields are private.
 */
typedef struct ark_idmap_iter {
    uint64_t key;   /* current key */
    uint64_t value; /* its value */
    const ark_idmap *map;
    size_t index; /* current slot; SIZE_MAX at the end */
} ark_idmap_iter;

/* Private: move the iterator to the first full slot at or after from. */
inline void ark__idmap_iter_seek(ark_idmap_iter *it, size_t from) {
    const ark_idmap *m = it->map;
    size_t cap = m->count == 0 ? 0 : m->mask + 1;
    while (from < cap) {
        ark__idmap_mask full = ark__idmap_full(ark__idmap_load(m->ctrl + from));
        if (full != 0) {
            size_t i = from + (ark__ctz64(full) >> ARK__IDMAP_BIT_SHIFT);
            if (i >= cap) {
                break; /* a mirror byte: slot i - cap was already seen */
            }
            it->index = i;
            it->key = m->slots[i].key;
            it->value = m->slots[i].value;
            return;
        }
        from += ARK__IDMAP_GROUP;
    }
    it->index = SIZE_MAX;
}

/* Return an iterator at the first entry (or at the end). */
inline ark_idmap_iter ark_idmap_iter_begin(const ark_idmap *m) {
    ark_idmap_iter it;
    it.map = m;
    it.key = 0;
    it.value = 0;
    it.index = 0;
    ark__idmap_iter_seek(&it, 0);
    return it;
}

/* Return true while the iterator is at an entry. */
inline bool ark_idmap_iter_valid(const ark_idmap_iter *it) {
    return it->index != SIZE_MAX;
}

/* Advance to the next entry. */
inline void ark_idmap_iter_next(ark_idmap_iter *it) {
    ark__idmap_iter_seek(it, it->index + 1);
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_IDMAP_H */
