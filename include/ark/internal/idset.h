/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/idset.h - private to ark: the id set's view (what its
 * inline functions read), its group geometry, the branchless searches and
 * the bodies of insert, at, lower_bound, find, contains, count and the
 * iterator. Included by ark/idset.h; never include it directly, and never
 * use its names: they change without notice.
 */
#ifndef ARK_INTERNAL_IDSET_H
#define ARK_INTERNAL_IDSET_H

#include "ark/idset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One group header (16 bytes), kept in a contiguous array. The
 * slot holding the group's first id (head) is kept in the group's hot
 * word (ark__idset_view) only. */
typedef struct ark__idset_group {
    void *data;    /* dense: int16_t[256] (half a node); sparse: uint32[256] */
    uint32_t base; /* dense: value = base + delta; sparse: 0 */
    uint16_t credit; /* sparse: touches in a row with a demotable range */
    uint8_t dense;   /* 1 dense, 0 sparse */
} ark__idset_group;

/* The part of a set the inline functions read. It is the first
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
    /* A set attached to an entity pool (ark/entity.h) also keeps a bit per
     * id below present_bits, set while the id is held, for O(1)
     * membership in queries; NULL (and 0) otherwise. */
    uint64_t *present;
    uint64_t present_bits;
} ark__idset_view;

/* Set or clear id's membership bit, if the set keeps them and id is in
 * their range. */
ARK__ALWAYS_INLINE ARK__INLINE void ark__idset_mark(ark__idset_view *v,
                                                    uint32_t id, bool on) {
    if (id < v->present_bits) {
        uint64_t bit = (uint64_t)1 << (id & 63);
        v->present[id >> 6] =
            on ? v->present[id >> 6] | bit : v->present[id >> 6] & ~bit;
    }
}

/* The id in slot `slot` of a dense group (base + the int16 delta there).
 * The delta goes through a signed local because -Wsign-conversion flags
 * the folded (uint32_t)(int32_t) cast of an int16_t. */
ARK__ALWAYS_INLINE ARK__INLINE uint32_t ark__idset_dense_id(uint32_t base,
                                                            const void *data,
                                                            size_t slot) {
    int32_t delta = ((const int16_t *)data)[slot];
    return base + (uint32_t)delta;
}

/* The group geometry the inline functions need. A group holds
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

/* A sparse group whose range stays at or below this is counted
 * towards a lazy demotion (see src/idset/group.c), which happens after
 * ARK__IDSET_DEMOTE_CREDIT such touches in a row. */
#define ARK__IDSET_DEMOTE_SPAN 49151u
#define ARK__IDSET_DEMOTE_CREDIT 256u

/* The id at index j (mod 256) of group k: its hot word, then one
 * slot (a dense group adds its base). at() and the library's own
 * positional reads go through here. */
ARK__ALWAYS_INLINE ARK__INLINE uint32_t
ark__idset_group_id(const ark__idset_view *v, size_t k, size_t j) {
    uintptr_t w = v->hot[k];
    unsigned slot = (unsigned)(w + j) & ARK__IDSET_MASK;
    const void *data = (const void *)(w & ARK__IDSET_HOT_ADDR);
    if (w & ARK__IDSET_HOT_DENSE) {
        return ark__idset_dense_id(v->groups[k].base, data, slot);
    }
    return ((const uint32_t *)data)[slot];
}

/* The view of a set. */
ARK__ALWAYS_INLINE ARK__INLINE const ark__idset_view *
ark__idset_view_of(const ark_idset *s) {
    return (const ark__idset_view *)(const void *)s;
}

/* The general insert (ark_idset_insert's slow path). */
ARK_API ark_status ark__idset_insert(ark_idset *s, uint32_t id);

ARK__INLINE ark_status ark_idset_insert(ark_idset *s, uint32_t id) {
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
                ark__idset_mark(v, id, true);
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
            if (ARK__LIKELY(credit == 0) && id > d[prev]) {
                d[slot] = id;
                v->count++;
                ark__idset_mark(v, id, true);
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
                    ark__idset_mark(v, id, true);
                    return ARK_OK;
                }
            }
        }
    }
    return ark__idset_insert(s, id);
}

/* Every field at() reads is loaded before its bound check: a load the
 * check guards is one a compiler may not move out of the caller's loop
 * (the pointer might be invalid when the check fails), so a loop of at()
 * reloaded front, hot and groups for every position. */
ARK__ALWAYS_INLINE ARK__INLINE uint32_t ark_idset_at(const ark_idset *s,
                                                     size_t pos) {
    const ark__idset_view *v = ark__idset_view_of(s);
    size_t count = v->count, front = v->front;
    const uintptr_t *hot = v->hot;
    const ark__idset_group *groups = v->groups;
    if (pos >= count) {
        return 0;
    }
    size_t at = pos + front;
    size_t k = at >> ARK__IDSET_SHIFT;
    /* The index inside the group, mod 256. */
    uintptr_t w = hot[k];
    unsigned slot = (unsigned)(w + (k != 0 ? at : pos)) & ARK__IDSET_MASK;
    const void *data = (const void *)(w & ARK__IDSET_HOT_ADDR);
    if (w & ARK__IDSET_HOT_DENSE) {
        return ark__idset_dense_id(groups[k].base, data, slot);
    }
    return ((const uint32_t *)data)[slot];
}

/* i + s when a < key (lt, lt16) or a <= key (le), else i, as a
 * conditional move: the step of the branchless searches below. Clang for
 * x86-64 may turn the plain conditional into a branch (its cmov-conversion
 * pass), which mispredicts at every other step of a search
 * (docs/design-notes.md, "Id set search"). The asm pins the move there;
 * other compilers and targets get the conditional. */
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

ARK__ALWAYS_INLINE ARK__INLINE size_t ark__idset_add_if_le(size_t i, size_t s,
                                                           uint32_t a,
                                                           uint32_t key) {
#ifdef ARK__IDSET_ADD_IF
    ARK__IDSET_ADD_IF(i, s, a, key, "cmovbe");
    return i;
#else
    return a <= key ? i + s : i;
#endif
}

ARK__ALWAYS_INLINE ARK__INLINE size_t ark__idset_add_if_lt(size_t i, size_t s,
                                                           uint32_t a,
                                                           uint32_t key) {
#ifdef ARK__IDSET_ADD_IF
    ARK__IDSET_ADD_IF(i, s, a, key, "cmovb");
    return i;
#else
    return a < key ? i + s : i;
#endif
}

ARK__ALWAYS_INLINE ARK__INLINE size_t ark__idset_add_if_lt16(size_t i, size_t s,
                                                             int16_t a,
                                                             int16_t key) {
#ifdef ARK__IDSET_ADD_IF
    ARK__IDSET_ADD_IF(i, s, a, key, "cmovl");
    return i;
#else
    return a < key ? i + s : i;
#endif
}

/* The last group whose first id is <= id, or 0. */
ARK__ALWAYS_INLINE ARK__INLINE size_t
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

/* The first index in [0, n] (n >= 1) of sorted run b whose value
 * is >= key; lower16 for a dense group's int16 deltas. */
ARK__ALWAYS_INLINE ARK__INLINE size_t ark__idset_lower32(const uint32_t *b,
                                                         size_t n,
                                                         uint32_t key) {
    size_t i = 0;
    while (n > 1) {
        size_t half = n >> 1;
        i = ark__idset_add_if_lt(i, half, b[i + half], key);
        n -= half;
    }
    return ark__idset_add_if_lt(i, 1, b[i], key);
}

ARK__ALWAYS_INLINE ARK__INLINE size_t ark__idset_lower16(const int16_t *b,
                                                         size_t n,
                                                         int16_t key) {
    size_t i = 0;
    while (n > 1) {
        size_t half = n >> 1;
        i = ark__idset_add_if_lt16(i, half, b[i + half], key);
        n -= half;
    }
    return ark__idset_add_if_lt16(i, 1, b[i], key);
}

/* The first position j in [0, len] of a group (hot word w,
 * header g: its base when dense) whose id >= id (1 <= len <= 256). The
 * queue is two sorted runs in slot order: slots [head, 256) hold the
 * first positions, slots [0, head) the rest. One comparison picks the run,
 * then a branchless search runs over plain contiguous memory like a flat
 * array's. */
ARK__ALWAYS_INLINE ARK__INLINE size_t ark__idset_group_lower(
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

/* The first index in [0, 256] of a full group (as group_lower)
 * whose id >= id, for a group whose head is not 0 (group_lower does
 * better at head 0: one contiguous run). Eight halvings over the circular
 * queue, slot (head + i) & 255, and one probe to finish: no branch
 * depends on head or on the data, whereas group_lower's choice of run and
 * its trip counts depend on head, which varies from group to group once
 * ids go in anywhere but the end, and mispredict (docs/design-notes.md,
 * "Id set search"). */
ARK__ALWAYS_INLINE ARK__INLINE size_t
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

ARK__ALWAYS_INLINE ARK__INLINE size_t ark_idset_lower_bound(const ark_idset *s,
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

ARK__ALWAYS_INLINE ARK__INLINE size_t ark_idset_find(const ark_idset *s,
                                                     uint32_t id) {
    size_t p = ark_idset_lower_bound(s, id);
    return p < ark__idset_view_of(s)->count && ark_idset_at(s, p) == id
               ? p
               : ARK_NOT_FOUND;
}

ARK__ALWAYS_INLINE ARK__INLINE bool ark_idset_contains(const ark_idset *s,
                                                       uint32_t id) {
    return ark_idset_find(s, id) != ARK_NOT_FOUND;
}

ARK__INLINE size_t ark_idset_count(const ark_idset *s) {
    return ark__idset_view_of(s)->count;
}

/* Enter the group holding it->pos (or end the walk). */
ARK__ALWAYS_INLINE ARK__INLINE void ark__idset_iter_load(ark_idset_iter *it) {
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

ARK__ALWAYS_INLINE ARK__INLINE ark_idset_iter
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

ARK__ALWAYS_INLINE ARK__INLINE bool
ark_idset_iter_valid(const ark_idset_iter *it) {
    return it->pos < it->group_end;
}

ARK__ALWAYS_INLINE ARK__INLINE void ark_idset_iter_next(ark_idset_iter *it) {
    size_t pos = ++it->pos;
    if (ARK__LIKELY(pos < it->group_end)) {
        unsigned slot = (it->slot + 1u) & ARK__IDSET_MASK;
        it->slot = slot;
        it->id = it->dense ? ark__idset_dense_id(it->base, it->data, slot)
                           : ((const uint32_t *)it->data)[slot];
        return;
    }
    ark__idset_iter_load(it);
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_IDSET_H */
