/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/entity.h - private to ark: the query iterator's body.
 * Included by ark/entity.h; never include it directly, and never use its
 * names: they change without notice.
 *
 * Word w of the candidates is the entity pool's live word, and-ed with
 * each `with` term's occupancy word (a keyed pool's live bits, a keyed
 * table's or an attached id set's membership bits) and with the
 * complement of each `without` one. A keyed pool's slot i holds entity
 * i's element, so a pool term's elements for the 64 ids of a word are one
 * contiguous run: base + bit * stride; a table term's base is its slot
 * array, where the row is. A step takes the next bit inline;
 * entering a word, and looking at it again after the entity pool's epoch
 * moved (an entity, a component or a tag removed: removals during the
 * loop are never visited), are out of line (src/entity.c).
 */
#ifndef ARK_INTERNAL_ENTITY_H
#define ARK_INTERNAL_ENTITY_H

#include "ark/entity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Term kinds (ark_query.kind). */
#define ARK__QUERY_POOL 1u
#define ARK__QUERY_TABLE 2u
#define ARK__QUERY_TAG 3u
#define ARK__QUERY_KIND 3u
#define ARK__QUERY_NOT 4u /* without */

/* An iterator for a walk of q, at its first match or at the end. */
ARK_API ark_query_iter ark__query_start(const ark_query *q);

/* A step past the inline one: look at the word again if the entity pool
 * changed, enter the next word with candidates, or end the walk. The
 * iterator goes in and out by value, so that the caller's never has its
 * address taken and its fields can stay in registers through the loop. */
ARK_API ark_query_iter ark__query_step(ark_query_iter it);

ARK__ALWAYS_INLINE ARK__INLINE ark_query_iter
ark_query_iter_begin(const ark_query *q) {
    return ark__query_start(q);
}

ARK__ALWAYS_INLINE ARK__INLINE bool
ark_query_iter_valid(const ark_query_iter *it) {
    return it->more;
}

ARK__ALWAYS_INLINE ARK__INLINE void ark_query_iter_next(ark_query_iter *it) {
    uint64_t bits = it->bits;
    if (ARK__LIKELY(bits != 0 && *it->epoch_at == it->epoch)) {
        it->id = (uint32_t)(it->word << 6 | ark__ctz64(bits));
        it->bits = bits & (bits - 1);
        return;
    }
    *it = ark__query_step(*it);
}

ARK__INLINE ark_handle ark_query_iter_handle(const ark_query_iter *it) {
    const ark__slots_view *v = &ark__pool_view_of(it->q->entities)->slots;
    return ark__slots_handle(v, it->id, ark__slots_at(v, it->id));
}

ARK__ALWAYS_INLINE ARK__INLINE void *
ark_query_iter_elem(const ark_query_iter *it, unsigned term) {
    return it->base[term] + (size_t)(it->id & 63) * it->stride[term];
}

ARK__ALWAYS_INLINE ARK__INLINE size_t
ark_query_iter_row(const ark_query_iter *it, unsigned term) {
    /* base: the table's slot array, kept up to date by the step (a keyed
     * table that grows it moves the entity pool's epoch). */
    return ((const ark__table_slot *)(const void *)it->base[term])[it->id].row;
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_ENTITY_H */
