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
 * Pointers: m (and out, fn, w, r where a function takes them) must be
 * non-NULL unless a function says otherwise; ark_idmap_destroy(NULL) does
 * nothing. Keys may be any value. A writer without a write function, or a
 * reader without a read function, is ARK_EINVAL.
 *
 * Thread-safety: none; a map may be read by several threads at once if
 * none writes.
 */
#ifndef ARK_IDMAP_H
#define ARK_IDMAP_H

#include "ark/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most groups a key may lie along its probe sequence; an insert that
 * would go further re-seeds or grows the map, and a lookup gives up there.
 * Random keys at the highest load essentially never come near it
 * (docs/idmap.md). */
#define ARK_IDMAP_MAX_PROBE 64

/* The most entries a map can hold: 7/8 of 15 * 2^32 slots on 64-bit
 * systems, 7/8 of 15 * 2^22 on 32-bit ones. reserve and growth beyond it
 * fail with ARK_ENOMEM before anything is allocated. */
#define ARK_IDMAP_MAX_COUNT (ARK__IDMAP_MAX_GROUPS * ARK__IDMAP_SLOTS * 7 / 8)

/* A map (opaque). */
typedef struct ark_idmap ark_idmap;

/*
 * Create an empty map with a seed drawn from the OS's entropy (getrandom,
 * getentropy or BCryptGenRandom; where none answers, a value mixed from
 * addresses and clocks, distinct per map but not secret: the probe bound
 * still caps every operation). Nothing but the map itself is allocated until
 * the first insert or reserve. a may be NULL (the C library). *out is
 * set only on success.
 * Memory: with a = NULL (the C library) on a 64-bit system, a table of
 * 64 KiB of slots or more lies in a reservation of address space with
 * room for 64 times as many groups; its pages are made writable as the
 * table grows there in place, instead of being copied into a second
 * table, so a growing map's peak is its table, not one and a half. Pages
 * take memory only when a key lands in them. The reservation is aligned
 * to 2 MiB and, on Linux, asks for transparent huge pages (madvise) once
 * the map holds a key per 4 KiB of slots, which makes random access to a
 * large map faster (docs/idmap.md). Pass an allocator to decide yourself:
 * its blocks are used as they are, and a growing table is copied.
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
 * Cost: with the default allocator the new table's pages are committed,
 * not touched, so the resident set does not grow with n (keys take the
 * pages they land in), and a table the system cannot back fails at once;
 * from a caller's allocator the table's control words (1/16 of it) are
 * zeroed.
 * Errors: ARK_ENOMEM (the map is unchanged; also when n exceeds
 * ARK_IDMAP_MAX_COUNT, reported before anything is allocated).
 * Complexity: O(capacity held) when the table must grow (its entries are
 * placed again), else O(1).
 */
ARK_API ark_status ark_idmap_reserve(ark_idmap *m, size_t n);

/* Return the number of entries. */
ARK_API size_t ark_idmap_count(const ark_idmap *m);

/* Remove every entry; the table and the seed are kept for reuse. */
ARK_API void ark_idmap_clear(ark_idmap *m);

/*
 * Call fn(key, value, ud) on every entry, in table order, until fn returns
 * false. ud is passed as is (it may be NULL). The map must not be modified
 * during the walk.
 */
ARK_API void ark_idmap_each(const ark_idmap *m,
                            bool (*fn)(uint64_t key, uint64_t value, void *ud),
                            void *ud);

/*
 * Look key up. Returns true and stores its value in *value (if value is
 * not NULL) when present; returns false and leaves *value alone otherwise.
 * Complexity: O(1); usually one control word and one slot are read, never
 * more than ARK_IDMAP_MAX_PROBE groups. Inline.
 */
ARK__INLINE bool ark_idmap_get(const ark_idmap *m, uint64_t key,
                               uint64_t *value);

/*
 * Return the address of key's stored value, or NULL when key is absent:
 * the lookup for a loop, `const uint64_t *v = ark_idmap_find(m, key); if
 * (v) sum += *v;`. It writes nothing the caller reads back, where get's
 * out-parameter keeps its old value on a miss, which a loop around get
 * must carry from one lookup to the next.
 * Lifetime: until the next put, insert, reserve, clear or destroy on m (any
 * of which may move entries), or the removal of key.
 * Complexity: as ark_idmap_get. Inline.
 */
ARK__INLINE const uint64_t *ark_idmap_find(const ark_idmap *m, uint64_t key);

/*
 * Return the address of key's stored value, or NULL when key is absent.
 * Writing through it changes the value in place.
 * Lifetime: until the next put, insert, reserve, clear or destroy on m (any
 * of which may move entries), or the removal of key.
 * Complexity: as ark_idmap_get. Inline.
 */
ARK__INLINE uint64_t *ark_idmap_get_ptr(ark_idmap *m, uint64_t key);

/*
 * Remove key and store its value in *old (if old is not NULL). Returns
 * true if key was present; otherwise returns false and leaves *old alone.
 * Complexity: O(1), as get: one control byte is cleared, nothing moves.
 * Inline.
 */
ARK__INLINE bool ark_idmap_take(ark_idmap *m, uint64_t key, uint64_t *old);

/*
 * Remove key. Returns true if it was present.
 * Complexity: O(1), as take. Inline.
 */
ARK__INLINE bool ark_idmap_remove(ark_idmap *m, uint64_t key);

/*
 * Insert key -> value, or overwrite the value if key is present.
 * Errors: ARK_ENOMEM (the table had to grow or be re-seeded and could not
 * allocate, or would exceed ARK_IDMAP_MAX_COUNT; the map is unchanged).
 * Overwriting never allocates and never fails.
 * Complexity: O(1); O(capacity) when it grows or re-seeds. Inline (the
 * common case makes no call).
 */
ARK__INLINE ark_status ark_idmap_put(ark_idmap *m, uint64_t key,
                                     uint64_t value);

/*
 * Insert key -> value unless key is present; a present key keeps its value.
 * Errors: ARK_EEXIST (key is present; nothing changed), ARK_ENOMEM (as for
 * put; the map is unchanged).
 * Complexity: O(1); O(capacity) when it grows or re-seeds. Inline.
 */
ARK__INLINE ark_status ark_idmap_insert(ark_idmap *m, uint64_t key,
                                        uint64_t value);

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
    /* private */
    const struct ark_idmap *map;
    size_t group, groups; /* the group being walked (>= groups: the end) */
    unsigned rest;        /* its full slots not visited yet */
} ark_idmap_iter;

/* Return an iterator at the first entry (or at the end). Inline. */
ARK__INLINE ark_idmap_iter ark_idmap_iter_begin(const ark_idmap *m);

/* Return true while the iterator is at an entry. Inline. */
ARK__INLINE bool ark_idmap_iter_valid(const ark_idmap_iter *it);

/* Advance to the next entry. Inline. */
ARK__INLINE void ark_idmap_iter_next(ark_idmap_iter *it);

/*
 * Write the map to w as a snapshot (docs/snapshot.md): its (key, value)
 * pairs in iteration order, with a checksum. The hash seed is not saved.
 * Errors: the writer's status, ARK_EINVAL (w->write NULL).
 * Complexity: O(count).
 */
ARK_API ark_status ark_idmap_save(const ark_idmap *m, const ark_writer *w);

/*
 * Make a map from the snapshot r reads (one made by ark_idmap_save); *out
 * is set only on success. a is the map's allocator, as for
 * ark_idmap_create (NULL: the C library). The map draws a fresh seed from
 * the OS, so its iteration order may differ from the saved map's. Any
 * byte sequence is safe: malformed input (a duplicate key included)
 * gives ARK_ECORRUPT, never a crash, and memory grows only with the pairs
 * actually read.
 * Errors: ARK_ECORRUPT, ARK_EINVAL (r->read NULL), ARK_ENOMEM, or the
 * reader's status.
 * Complexity: O(count) expected.
 */
ARK_API ark_status ark_idmap_load(ark_idmap **out, const ark_allocator *a,
                                  const ark_reader *r);

/*
 * Check every invariant of m: the count, each full slot's tag, and that
 * every key lies within ARK_IDMAP_MAX_PROBE groups of its probe sequence
 * with its overflow bit set in every group it passes. Returns ARK_OK or
 * ARK_ECORRUPT. For tests and debugging.
 * Complexity: O(capacity), plus the probe of each key.
 */
ARK_API ark_status ark_idmap_validate(const ark_idmap *m);

#ifdef __cplusplus
}
#endif

#include "ark/internal/idmap.h"

#endif /* ARK_IDMAP_H */
