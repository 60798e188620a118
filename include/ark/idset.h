/* SPDX-License-Identifier: MIT */
/*
 * ark/idset.h - the ordered entity-id sequence in circular 256-id groups.
 *
 * A sorted set of uint32 ids (every value, 0 and UINT32_MAX included) with
 * O(1) access by position: the array of entity ids an ECS keeps for each
 * component or tag. It is iterated every frame, read by position, searched
 * by id, and changed as entities gain and lose tags.
 *
 * Structure (the circular-group id sequence): the sequence is cut into
 * groups of 256 ids, each a circular queue. Every group is full except the
 * first and the last, which may be partial: with front empty positions
 * before group 0's first id, position p lives in group (p + front) / 256,
 * at slot (head + index in the group) mod 256, so ark_idset_at is two
 * dependent loads. A group is dense when its range (max - min) is below
 * 65536: a 32-bit base in the group header plus 256 int16 deltas (512
 * bytes). Otherwise it is sparse: 256 uint32 (1024 bytes). Storage is a
 * freelist of 1024-byte nodes, taken from the allocator in slabs of up to
 * 64; a node holds one sparse group or two dense "buddy" groups.
 * Promotion moves a group from dense to sparse as its contents change;
 * demotion moves it back (lazily, see src/idset/group.c: a policy that
 * cannot thrash).
 *
 * Invariants (checked by ark_idset_validate):
 * - ids strictly increase with position; groups 1..n-2 hold 256 ids, the
 *   first and the last 1..256; no empty group exists.
 * - a dense group's values all lie in [base - 32768, base + 32767].
 * - a sparse group with no demotion credit spans more than 49151.
 * - two buddy groups that are both dense share one node.
 * - a contiguous array holds each group's first id, for a two-level search
 *   (over those keys, then inside one group).
 *
 * Cost model (n ids, g = ceil(n / 256) groups):
 * - at: O(1); lower_bound, find, contains: O(log g + 8).
 * - insert, remove, remove_at: O(log n + 127 + g / 2). At most 127 ids
 *   move inside the target group, then one id crosses each group boundary
 *   between it and the nearer end; a form change (promotion, rebase)
 *   rewrites one group.
 * - inserting an id above the maximum: O(1) amortized.
 * - remove_sorted: O(k + ids between the batch and the nearer end) for a
 *   batch of k ids, one group-wise pass.
 * - copy and the iterator: O(1) per id, decoded per group segment.
 * - intersect, union, difference: O(|a| + |b|) group by group; when one
 *   side is much smaller, O(small * log(large / small)) by galloping.
 * - memory: about 2.14 bytes per id when groups are dense, 4.14 sparse.
 *
 * Pointers: s (and out, the sets a and b, w, r where a function takes
 * them) must be non-NULL unless a function says otherwise;
 * ark_idset_destroy(NULL) does nothing. Ids and positions may be any
 * value. A writer without a write function, or a reader without a read
 * function, is ARK_EINVAL.
 *
 * Errors: a failed call leaves the set unchanged (allocation failure
 * included). Thread-safety: none; concurrent readers are fine if no thread
 * writes.
 */
#ifndef ARK_IDSET_H
#define ARK_IDSET_H

#include "ark/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The position find returns for an absent id. */
#ifndef ARK_NOT_FOUND
#define ARK_NOT_FOUND SIZE_MAX
#endif

/* An id set (opaque). */
typedef struct ark_idset ark_idset;

/*
 * Create an empty set. a may be NULL (the C library). *out is set only on
 * success.
 * Errors: ARK_EINVAL (allocator missing a function), ARK_ENOMEM.
 */
ARK_API ark_status ark_idset_create(ark_idset **out, const ark_allocator *a);

/* Free the set and all its memory. s may be NULL. */
ARK_API void ark_idset_destroy(ark_idset *s);

/*
 * Insert an id, keeping the order.
 * Errors: ARK_EEXIST (already present), ARK_ENOMEM.
 * Complexity: O(log n + 127 + groups / 2); O(log n + 127) amortized when
 * id falls in the first group or below every id held (descending order:
 * a new first group is made in O(1), and the group arrays grow at their
 * front as a vector grows at its back), O(1) amortized when id is above
 * every id held (entities created in increasing order: the inline path
 * writes the next free slot of the last group, with no call).
 */
ARK__INLINE ark_status ark_idset_insert(ark_idset *s, uint32_t id);

/*
 * Remove an id.
 * Errors: ARK_ENOTFOUND (absent), ARK_ENOMEM (another group had to change
 * form and no node could be allocated).
 * Complexity: O(log n + 127 + groups / 2); O(log n + 127) amortized for
 * an id of the first group (removing the oldest ids first, say: an emptied
 * first group is dropped in O(1)).
 */
ARK_API ark_status ark_idset_remove(ark_idset *s, uint32_t id);

/*
 * Remove the id at a position.
 * Errors: ARK_ERANGE (pos >= count), ARK_ENOMEM (as ark_idset_remove).
 * Complexity: O(127 + groups / 2); O(127) in the first group.
 */
ARK_API ark_status ark_idset_remove_at(ark_idset *s, size_t pos);

/*
 * Remove a batch of ids in one group-wise pass: the frame-end sweep.
 * ids must be non-decreasing; repeated ids are removed once. Ids that are
 * absent are ignored (not an error). Sparse groups whose range allows it
 * are demoted to dense as they are rewritten.
 * Errors: ARK_EINVAL (ids not sorted, or NULL with n > 0; the set is
 * unchanged), ARK_ENOMEM (a rewritten group had to become sparse and no
 * node could be allocated; the set is unchanged).
 * Complexity: O(n) plus the ids rewritten: those from the first batch id
 * to the end, or, when that is shorter, those from the front to the last
 * batch id (a sweep of the oldest ids is then O(ids swept + 256)).
 */
ARK_API ark_status ark_idset_remove_sorted(ark_idset *s, const uint32_t *ids,
                                           size_t n);

/*
 * Return the id at a position (0-based, ascending), or 0 when pos >= count
 * (check the count first: 0 is also a valid id).
 * Complexity: O(1), inline: the group's hot word (and a dense group's
 * base), then one slot.
 */
ARK__INLINE uint32_t ark_idset_at(const ark_idset *s, size_t pos);

/*
 * Return the position of the first id >= id (count when there is none).
 * Complexity: O(log groups + 8), inline: a search of the contiguous key
 * array, then inside one group.
 */
ARK__INLINE size_t ark_idset_lower_bound(const ark_idset *s, uint32_t id);

/*
 * Return the position of id, or ARK_NOT_FOUND when it is absent.
 * Complexity: as ark_idset_lower_bound.
 */
ARK__INLINE size_t ark_idset_find(const ark_idset *s, uint32_t id);

/* Return whether id is in the set. Complexity: as ark_idset_find. */
ARK__INLINE bool ark_idset_contains(const ark_idset *s, uint32_t id);

/* Return the number of ids held. Inline. */
ARK__INLINE size_t ark_idset_count(const ark_idset *s);

/*
 * Return the bytes the set holds from its allocator: the set itself, the
 * header and key arrays (capacity) and every node (in use or free).
 */
ARK_API size_t ark_idset_memory(const ark_idset *s);

/*
 * Copy up to n ids, starting at position pos, into out; return how many
 * were written (0 when pos >= count). This is the fast iteration path: each
 * group contributes at most two contiguous segments, decoded in a tight
 * loop.
 * Complexity: O(written).
 */
ARK_API size_t ark_idset_copy(const ark_idset *s, size_t pos, uint32_t *out,
                              size_t n);

/*
 * Replace out's contents with the ids in both a and b. out may be a or b
 * (or both); a and b may be the same set.
 * Errors: ARK_ENOMEM (out is unchanged: the result is built aside, then
 * swapped in).
 * Complexity: O(|a| + |b|), group by group; when one side is much smaller,
 * O(small * log(large / small)) by galloping through the larger one.
 */
ARK_API ark_status ark_idset_intersect(ark_idset *out, const ark_idset *a,
                                       const ark_idset *b);

/*
 * Replace out's contents with the ids in a or b (or both). Aliasing and
 * errors as ark_idset_intersect.
 * Complexity: O(|a| + |b|).
 */
ARK_API ark_status ark_idset_union(ark_idset *out, const ark_idset *a,
                                   const ark_idset *b);

/*
 * Replace out's contents with the ids in a and not in b (a \ b). Aliasing
 * and errors as ark_idset_intersect.
 * Complexity: O(|a| + |b|); O(|a| log(|b| / |a|)) when a is much smaller.
 */
ARK_API ark_status ark_idset_difference(ark_idset *out, const ark_idset *a,
                                        const ark_idset *b);

/*
 * Return how many ids are in both a and b, without building the set.
 * Complexity: as ark_idset_intersect.
 */
ARK_API size_t ark_idset_intersect_count(const ark_idset *a,
                                         const ark_idset *b);

/*
 * Inline iterator over the ids in order, from a position, without copying:
 *
 *     for (ark_idset_iter it = ark_idset_iter_begin(s, pos);
 *          ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
 *         use(it.id);
 *     }
 *
 * id (the current id) and pos (its position) are public and read-only;
 * the other fields are private. A step is a slot read inside the current
 * group; crossing into the next group reads its header.
 * Lifetime: valid until the set is changed or destroyed; any mutating call
 * on the set (insert, remove, the set algebra with it as out) invalidates
 * every iterator over it.
 */
typedef struct ark_idset_iter {
    uint32_t id;                       /* public, read-only: the current id */
    size_t pos;                        /* public, read-only: its position */
    const struct ark__idset_view *set; /* private: the set iterated */
    const void *data;                  /* private: the current group's slots */
    uint32_t base;                     /* private: its base (dense) */
    unsigned slot;                     /* private: the slot of pos */
    unsigned dense;                    /* private: 1 dense, 0 sparse */
    size_t group_end; /* private: the end of the current group's positions;
                         pos when the iterator is past the end */
} ark_idset_iter;

/*
 * Return an iterator at position pos (past the end when pos >= count).
 * Complexity: O(1).
 */
ARK__INLINE ark_idset_iter ark_idset_iter_begin(const ark_idset *s, size_t pos);

/* Return true while the iterator is at an id. Complexity: O(1). */
ARK__INLINE bool ark_idset_iter_valid(const ark_idset_iter *it);

/* Advance to the next id (in increasing order). Complexity: O(1). */
ARK__INLINE void ark_idset_iter_next(ark_idset_iter *it);

/*
 * Check every invariant of the set (order, group sizes, keys, dense
 * windows, buddy sharing, node accounting). Returns ARK_OK or
 * ARK_ECORRUPT. For tests and debugging.
 * Complexity: O(count).
 */
ARK_API ark_status ark_idset_validate(const ark_idset *s);

/*
 * Write the set to w as a snapshot (docs/snapshot.md): its ids in order,
 * each as the gap from the previous one in a varint (one byte per id on
 * dense ids), with a checksum.
 * Errors: the writer's status, ARK_EINVAL (w->write NULL).
 * Complexity: O(count).
 */
ARK_API ark_status ark_idset_save(const ark_idset *s, const ark_writer *w);

/*
 * Make a set from the snapshot r reads (one made by ark_idset_save); *out
 * is set only on success. a is the set's allocator (NULL: the C
 * library). Any byte sequence is safe: malformed input gives ARK_ECORRUPT,
 * never a crash, and memory grows only with the ids actually read (each
 * takes at least one byte of input). Reads exactly the snapshot's bytes.
 * Errors: ARK_ECORRUPT (malformed, truncated, another kind, checksum),
 * ARK_EINVAL (r->read NULL), ARK_ENOMEM, or the reader's status.
 * Complexity: O(count).
 */
ARK_API ark_status ark_idset_load(ark_idset **out, const ark_allocator *a,
                                  const ark_reader *r);

#ifdef __cplusplus
}
#endif

#include "ark/internal/idset.h"

#endif /* ARK_IDSET_H */
