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
 * demotion moves it back (lazily, see src/idset_group.c: a policy that
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

/* Private: one group header (16 bytes), kept in a contiguous array. The
 * slot holding the group's first id (head) is kept in the group's hot
 * word (ark__idset_view) only. */
typedef struct ark__idset_group {
    void *data;    /* dense: int16_t[256] (half a node); sparse: uint32[256] */
    uint32_t base; /* dense: value = base + delta; sparse: 0 */
    uint16_t credit; /* sparse: touches in a row with a demotable range */
    uint8_t dense;   /* 1 dense, 0 sparse */
} ark__idset_group;

/* Private: the part of a set the inline functions read. It is the first
 * member of the (opaque) struct ark_idset, defined in src/. */
typedef struct ark__idset_view {
    ark__idset_group *groups; /* ngroups headers */
    /* Per group, what at() reads: the address of its slots (512-aligned;
     * the header's data repeats it), ARK__IDSET_HOT_DENSE when dense (as
     * the header's dense), and in the low 8 bits head, the slot holding
     * the group's first id (kept here only). 8 bytes a group, so that the
     * array for 1M ids (32 KiB) mostly stays in the L1 cache, where the
     * 16-byte headers (64 KiB) came from L2. */
    uintptr_t *hot;
    uint32_t *keys; /* first id of each group */
    size_t count;   /* ids held */
    size_t ngroups; /* ceil((front + count) / 256) */
    /* Empty positions before group 0's first id: group 0 holds 256 - front
     * ids (or count, when it is the only group; front is then 0), group
     * k >= 1 positions [256k - front, 256k - front + 256). */
    size_t front;
} ark__idset_view;

/* An id set (opaque). */
typedef struct ark_idset ark_idset;

/* Private: the id in slot `slot` of a dense group (base + the int16
 * delta there). The delta goes through a signed local because GCC's
 * -Wsign-conversion flags the folded (uint32_t)(int32_t) cast of an
 * int16_t. */
ARK_ALWAYS_INLINE ARK_INLINE uint32_t ark__idset_dense_id(uint32_t base,
                                                          const void *data,
                                                          size_t slot) {
    int32_t delta = ((const int16_t *)data)[slot];
    return base + (uint32_t)delta;
}

/* Private: the group geometry the inline functions need. A group holds
 * ARK__IDSET_GROUP ids (position p is in group p >> ARK__IDSET_SHIFT, slot
 * (head + p) & ARK__IDSET_MASK); a dense group stores id - base as int16,
 * so its window is [base - ARK__IDSET_HALF, base + ARK__IDSET_HALF - 1],
 * ARK__IDSET_SPAN wide. */
#define ARK__IDSET_SHIFT 8
#define ARK__IDSET_GROUP 256u
#define ARK__IDSET_MASK 255u
#define ARK__IDSET_HALF 32768u
#define ARK__IDSET_SPAN 65535u
#define ARK__IDSET_HOT_DENSE 256u             /* the dense flag of a hot word */
#define ARK__IDSET_HOT_ADDR (~(uintptr_t)511) /* its slots' address */

/* Private: a sparse group whose range stays at or below this is counted
 * towards a lazy demotion (see src/idset_group.c), which happens after
 * ARK__IDSET_DEMOTE_CREDIT such touches in a row. */
#define ARK__IDSET_DEMOTE_SPAN 49151u
#define ARK__IDSET_DEMOTE_CREDIT 256u

/* Private: the id at index j (mod 256) of group k: its hot word, then one
 * slot (a dense group adds its base). at() and the library's own
 * positional reads go through here. */
ARK_ALWAYS_INLINE ARK_INLINE uint32_t
ark__idset_group_id(const ark__idset_view *v, size_t k, size_t j) {
    uintptr_t w = v->hot[k];
    unsigned slot = (unsigned)(w + j) & ARK__IDSET_MASK;
    const void *data = (const void *)(w & ARK__IDSET_HOT_ADDR);
    if (w & ARK__IDSET_HOT_DENSE) {
        return ark__idset_dense_id(v->groups[k].base, data, slot);
    }
    return ((const uint32_t *)data)[slot];
}

/* Private: the view of a set. */
ARK_ALWAYS_INLINE ARK_INLINE const ark__idset_view *
ark__idset_view_of(const ark_idset *s) {
    return (const ark__idset_view *)(const void *)s;
}

/* Private: the general insert (ark_idset_insert's slow path). */
ARK_API ark_status ark__idset_insert(ark_idset *s, uint32_t id);

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
 * front as a vector grows at its back), O(1)
 * amortized when id is above every id held (entities created in
 * increasing order: the inline path below writes the next free slot of
 * the last group).
 */
ARK_INLINE ark_status ark_idset_insert(ark_idset *s, uint32_t id) {
    ark__idset_view *v = (ark__idset_view *)(void *)s;
    size_t n = v->count + v->front; /* the end, in group-aligned terms */
    if ((n & ARK__IDSET_MASK) != 0) {
        ark__idset_group *g = &v->groups[n >> ARK__IDSET_SHIFT];
        unsigned slot =
            (unsigned)(v->hot[n >> ARK__IDSET_SHIFT] + n) & ARK__IDSET_MASK;
        unsigned prev = (slot - 1u) & ARK__IDSET_MASK;
        if (g->dense) {
            int16_t *d = (int16_t *)g->data;
            uint32_t off = id - (g->base - ARK__IDSET_HALF);
            if (id > ark__idset_dense_id(g->base, d, prev) &&
                off <= ARK__IDSET_SPAN) {
                d[slot] = (int16_t)((int32_t)off - (int32_t)ARK__IDSET_HALF);
                v->count++;
                return ARK_OK;
            }
        } else {
            /* A sparse group without demotion credit spans more than
             * ARK__IDSET_DEMOTE_SPAN (an invariant) and an append keeps it
             * so: only the order is checked. Otherwise the credit counts
             * here; the general path takes the append that would demote
             * the group. */
            uint32_t *d = (uint32_t *)g->data;
            unsigned credit = g->credit;
            if (ARK_LIKELY(credit == 0) && id > d[prev]) {
                d[slot] = id;
                v->count++;
                return ARK_OK;
            }
            if (credit != 0 && id > d[prev]) {
                credit =
                    id - v->keys[n >> ARK__IDSET_SHIFT] > ARK__IDSET_DEMOTE_SPAN
                        ? 0u
                        : credit + 1u;
                if (credit < ARK__IDSET_DEMOTE_CREDIT) {
                    d[slot] = id;
                    g->credit = (uint16_t)credit;
                    v->count++;
                    return ARK_OK;
                }
            }
        }
    }
    return ark__idset_insert(s, id);
}

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
 * Complexity: O(1): the group's hot word (and a dense group's base), then
 * one slot.
 */
ARK_INLINE uint32_t ark_idset_at(const ark_idset *s, size_t pos) {
    const ark__idset_view *v = ark__idset_view_of(s);
    if (pos >= v->count) {
        return 0;
    }
    size_t at = pos + v->front;
    size_t k = at >> ARK__IDSET_SHIFT;
    /* The index inside the group, mod 256. */
    return ark__idset_group_id(v, k, k != 0 ? at : pos);
}

/* Private: i + s when a < key (lt, lt16) or a <= key (le), else i, as a
 * conditional move: the step of the branchless searches below. Clang 14
 * for x86-64 turns the plain conditional into a branch (its
 * cmov-conversion pass), which mispredicts at every other step of a
 * search: lower_bound over 4K-1M sparse ids took 75-180 ns, 17.5-75 ns
 * with these steps (same process, medians of 21). The asm pins
 * the move there; other compilers and targets get the conditional. */
#if defined(__clang__) && defined(__x86_64__)
/* Both asm dialects ({AT&T|Intel}), so -masm=intel builds too. */
#define ARK__IDSET_ADD_IF(i, s, a, key, cmov)                                  \
    do {                                                                       \
        size_t ark__t = (i) + (s);                                             \
        __asm__("{cmp %[k], %[x]|cmp %[x], %[k]}\n\t"                          \
                "{" cmov " %[t], %[r]|" cmov " %[r], %[t]}"                    \
                : [r] "+r"(i)                                                  \
                : [t] "r"(ark__t), [x] "r"(a), [k] "r"(key)                    \
                : "cc");                                                       \
    } while (0)
#endif

ARK_ALWAYS_INLINE ARK_INLINE size_t ark__idset_add_if_le(size_t i, size_t s,
                                                         uint32_t a,
                                                         uint32_t key) {
#ifdef ARK__IDSET_ADD_IF
    ARK__IDSET_ADD_IF(i, s, a, key, "cmovbe");
    return i;
#else
    return a <= key ? i + s : i;
#endif
}

ARK_ALWAYS_INLINE ARK_INLINE size_t ark__idset_add_if_lt(size_t i, size_t s,
                                                         uint32_t a,
                                                         uint32_t key) {
#ifdef ARK__IDSET_ADD_IF
    ARK__IDSET_ADD_IF(i, s, a, key, "cmovb");
    return i;
#else
    return a < key ? i + s : i;
#endif
}

ARK_ALWAYS_INLINE ARK_INLINE size_t ark__idset_add_if_lt16(size_t i, size_t s,
                                                           int16_t a,
                                                           int16_t key) {
#ifdef ARK__IDSET_ADD_IF
    ARK__IDSET_ADD_IF(i, s, a, key, "cmovl");
    return i;
#else
    return a < key ? i + s : i;
#endif
}

/* Private: the last group whose first id is <= id, or 0. */
ARK_ALWAYS_INLINE ARK_INLINE size_t
ark__idset_group_of(const ark__idset_view *v, uint32_t id) {
    const uint32_t *keys = v->keys;
    size_t i = 0, n = v->ngroups;
    while (n > 1) {
        size_t half = n >> 1;
        i = ark__idset_add_if_le(i, half, keys[i + half], id);
        n -= half;
    }
    return i;
}

/* Private: the first index in [0, n] (n >= 1) of sorted run b whose value
 * is >= key; lower16 for a dense group's int16 deltas. */
ARK_ALWAYS_INLINE ARK_INLINE size_t ark__idset_lower32(const uint32_t *b,
                                                       size_t n, uint32_t key) {
    size_t i = 0;
    while (n > 1) {
        size_t half = n >> 1;
        i = ark__idset_add_if_lt(i, half, b[i + half], key);
        n -= half;
    }
    return ark__idset_add_if_lt(i, 1, b[i], key);
}

ARK_ALWAYS_INLINE ARK_INLINE size_t ark__idset_lower16(const int16_t *b,
                                                       size_t n, int16_t key) {
    size_t i = 0;
    while (n > 1) {
        size_t half = n >> 1;
        i = ark__idset_add_if_lt16(i, half, b[i + half], key);
        n -= half;
    }
    return ark__idset_add_if_lt16(i, 1, b[i], key);
}

/* Private: the first position j in [0, len] of a group (hot word w,
 * header g: its base when dense) whose id >= id (1 <= len <= 256). The
 * queue is two sorted runs in slot order: slots [head, 256) hold the
 * first positions, slots [0, head) the rest. One comparison picks the run,
 * then a branchless search runs over plain contiguous memory like a flat
 * array's. */
ARK_ALWAYS_INLINE ARK_INLINE size_t ark__idset_group_lower(
    const ark__idset_group *g, unsigned head, size_t len, uint32_t id) {
    size_t na = ARK__IDSET_GROUP - head < len ? ARK__IDSET_GROUP - head : len;
    size_t nb = len - na;
    if (g->dense) {
        const int16_t *d = (const int16_t *)g->data;
        uint32_t base = g->base;
        uint32_t off = id - (base - ARK__IDSET_HALF);
        if (off > ARK__IDSET_SPAN) {
            /* Outside the window: below every id or above every id. */
            return id < base ? 0 : len;
        }
        int16_t t = (int16_t)((int32_t)off - (int32_t)ARK__IDSET_HALF);
        if (nb > 0 && d[ARK__IDSET_MASK] < t) {
            return na + ark__idset_lower16(d, nb, t);
        }
        return ark__idset_lower16(d + head, na, t);
    }
    const uint32_t *d = (const uint32_t *)g->data;
    if (nb > 0 && d[ARK__IDSET_MASK] < id) {
        return na + ark__idset_lower32(d, nb, id);
    }
    return ark__idset_lower32(d + head, na, id);
}

/* Private: the first index in [0, 256] of a full group (as group_lower)
 * whose id >= id, for a group whose head is not 0 (group_lower does
 * better at head 0: one contiguous run). Eight halvings over the circular
 * queue, slot (head + i) & 255, and one probe to finish: no branch
 * depends on head or on the data, whereas group_lower's choice of run and
 * its trip counts depend on head, which varies from group to group once
 * ids go in anywhere but the end, and mispredict. lower_bound over sets
 * built by inserts in random order, same process, medians of 21 (gcc 12
 * -O2), before -> after: throughput 4K 30.7 -> 19.9 ns, 64K 45.1 -> 29.8,
 * 1M sparse 81.2 -> 68.2, 1M dense 67.7 -> 48.5. */
ARK_ALWAYS_INLINE ARK_INLINE size_t
ark__idset_full_lower(const ark__idset_group *g, unsigned head, uint32_t id) {
    size_t i = 0;
    if (g->dense) {
        const int16_t *d = (const int16_t *)g->data;
        uint32_t base = g->base;
        uint32_t off = id - (base - ARK__IDSET_HALF);
        if (off > ARK__IDSET_SPAN) {
            return id < base ? 0 : ARK__IDSET_GROUP;
        }
        int16_t t = (int16_t)((int32_t)off - (int32_t)ARK__IDSET_HALF);
        for (size_t s = ARK__IDSET_GROUP / 2; s > 0; s >>= 1) {
            i = ark__idset_add_if_lt16(
                i, s, d[(head + i + s - 1) & ARK__IDSET_MASK], t);
        }
        return ark__idset_add_if_lt16(i, 1, d[(head + i) & ARK__IDSET_MASK], t);
    }
    const uint32_t *d = (const uint32_t *)g->data;
    for (size_t s = ARK__IDSET_GROUP / 2; s > 0; s >>= 1) {
        i = ark__idset_add_if_lt(i, s, d[(head + i + s - 1) & ARK__IDSET_MASK],
                                 id);
    }
    return ark__idset_add_if_lt(i, 1, d[(head + i) & ARK__IDSET_MASK], id);
}

/*
 * Return the position of the first id >= id (count when there is none).
 * Complexity: O(log groups + 8): a search of the contiguous key array, then
 * inside one group.
 */
ARK_ALWAYS_INLINE ARK_INLINE size_t ark_idset_lower_bound(const ark_idset *s,
                                                          uint32_t id) {
    const ark__idset_view *v = ark__idset_view_of(s);
    if (v->count == 0 || id < v->keys[0]) {
        return 0;
    }
    size_t k = ark__idset_group_of(v, id);
    /* Group k holds positions [256k - front, 256k - front + 256), cut to
     * [0, count): computed without branches (a branch on k == 0 here cost
     * 2-5% of lower_bound's throughput at 4K-64K ids). */
    size_t first = (k << ARK__IDSET_SHIFT) - v->front; /* wraps for k = 0 */
    size_t start = first + (v->front & ((size_t)0 - (size_t)(k == 0)));
    size_t end = first + ARK__IDSET_GROUP;
    end = end < v->count ? end : v->count;
    const ark__idset_group *g = &v->groups[k];
    unsigned head = (unsigned)(v->hot[k] & ARK__IDSET_MASK);
    /* Almost every group is full and, as the set changes, has head != 0:
     * the branch is predictable. */
    if (end - start == ARK__IDSET_GROUP && head != 0) {
        return start + ark__idset_full_lower(g, head, id);
    }
    return start + ark__idset_group_lower(g, head, end - start, id);
}

/*
 * Return the position of id, or ARK_NOT_FOUND when it is absent.
 * Complexity: as ark_idset_lower_bound.
 */
ARK_ALWAYS_INLINE ARK_INLINE size_t ark_idset_find(const ark_idset *s,
                                                   uint32_t id) {
    size_t p = ark_idset_lower_bound(s, id);
    return p < ark__idset_view_of(s)->count && ark_idset_at(s, p) == id
               ? p
               : ARK_NOT_FOUND;
}

/* Return whether id is in the set. Complexity: as ark_idset_find. */
ARK_ALWAYS_INLINE ARK_INLINE bool ark_idset_contains(const ark_idset *s,
                                                     uint32_t id) {
    return ark_idset_find(s, id) != ARK_NOT_FOUND;
}

/* Return the number of ids held. */
ARK_INLINE size_t ark_idset_count(const ark_idset *s) {
    return ark__idset_view_of(s)->count;
}

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
    uint32_t id;                /* public, read-only: the current id */
    size_t pos;                 /* public, read-only: its position */
    const ark__idset_view *set; /* private: the set iterated */
    const void *data;           /* private: the current group's slots */
    uint32_t base;              /* private: its base (dense) */
    unsigned slot;              /* private: the slot of pos */
    unsigned dense;             /* private: 1 dense, 0 sparse */
    size_t group_end; /* private: the end of the current group's positions;
                         pos when the iterator is past the end */
} ark_idset_iter;

/* Private: enter the group holding it->pos (or end the walk). */
ARK_ALWAYS_INLINE ARK_INLINE void ark__idset_iter_load(ark_idset_iter *it) {
    const ark__idset_view *v = it->set;
    size_t pos = it->pos;
    if (pos >= v->count) {
        it->group_end = pos;
        return;
    }
    size_t at = pos + v->front;
    size_t k = at >> ARK__IDSET_SHIFT;
    const ark__idset_group *g = &v->groups[k];
    size_t end = ((k + 1) << ARK__IDSET_SHIFT) - v->front;
    it->group_end = end < v->count ? end : v->count;
    it->data = g->data;
    it->base = g->base;
    it->dense = g->dense;
    it->slot = (unsigned)(v->hot[k] + (k != 0 ? at : pos)) & ARK__IDSET_MASK;
    it->id = g->dense ? ark__idset_dense_id(g->base, g->data, it->slot)
                      : ((const uint32_t *)g->data)[it->slot];
}

/*
 * Return an iterator at position pos (past the end when pos >= count).
 * Complexity: O(1).
 */
ARK_ALWAYS_INLINE ARK_INLINE ark_idset_iter
ark_idset_iter_begin(const ark_idset *s, size_t pos) {
    ark_idset_iter it;
    it.id = 0;
    it.pos = pos;
    it.set = ark__idset_view_of(s);
    it.data = 0;
    it.base = 0;
    it.slot = 0;
    it.dense = 0;
    it.group_end = pos;
    ark__idset_iter_load(&it);
    return it;
}

/* Return true while the iterator is at an id. Complexity: O(1). */
ARK_ALWAYS_INLINE ARK_INLINE bool
ark_idset_iter_valid(const ark_idset_iter *it) {
    return it->pos < it->group_end;
}

/* Advance to the next id (in increasing order). Complexity: O(1). */
ARK_ALWAYS_INLINE ARK_INLINE void ark_idset_iter_next(ark_idset_iter *it) {
    size_t pos = ++it->pos;
    if (ARK_LIKELY(pos < it->group_end)) {
        unsigned slot = (it->slot + 1u) & ARK__IDSET_MASK;
        it->slot = slot;
        it->id = it->dense ? ark__idset_dense_id(it->base, it->data, slot)
                           : ((const uint32_t *)it->data)[slot];
        return;
    }
    ark__idset_iter_load(it);
}

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
 * Errors: the writer's status. Complexity: O(count).
 */
ARK_API ark_status ark_idset_save(const ark_idset *s, const ark_writer *w);

/*
 * Make a set from the snapshot r reads (one made by ark_idset_save); *out
 * is set only on success. Any byte sequence is safe: malformed input gives
 * ARK_ECORRUPT, never a crash, and memory grows only with the ids actually
 * read (each takes at least one byte of input). Reads exactly the
 * snapshot's bytes.
 * Errors: ARK_ECORRUPT (malformed, truncated, another kind, checksum),
 * ARK_ENOMEM, or the reader's status. Complexity: O(count).
 */
ARK_API ark_status ark_idset_load(ark_idset **out, const ark_allocator *a,
                                  const ark_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* ARK_IDSET_H */
