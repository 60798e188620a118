/* SPDX-License-Identifier: MIT */
/*
 * ark/internal/entity.h - private to ark: the query iterator's body.
 * Included by ark/entity.h; never include it directly, and never use its
 * names: they change without notice.
 *
 * The bitmap walk: word w of the candidates is the entity pool's live
 * word, and-ed with each `with` component's occupancy word (a keyed
 * pool's live bits, a keyed table's presence bits) and with the
 * complement of each `without` one. A keyed pool's slot i holds entity
 * i's element, so a pool term's elements for the 64 ids of a word are one
 * contiguous run: base + bit * stride. Removals bump the entity pool's
 * epoch (ark__slots_view); a step that sees it moved takes the word's
 * bits again, so nothing removed is visited. Tag terms keep a cursor into
 * their set (positions only grow as ids do). The list walk follows the
 * ids of the smallest `with` tag set instead, testing each one's bits.
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

/* The entity pool's view. */
ARK__ALWAYS_INLINE ARK__INLINE const ark__pool_view *
ark__query_entities(const ark_query *q) {
    return ark__pool_view_of(q->entities);
}

/* Word w of term k's occupancy (0 past its storage). */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__query_term_word(const ark_query *q,
                                                             unsigned k,
                                                             uint64_t w) {
    if ((q->kind[k] & ARK__QUERY_KIND) == ARK__QUERY_POOL) {
        const ark__pool_view *v = ark__pool_view_of((const ark_pool *)q->c[k]);
        return w < (v->slots.cap + 63) >> 6 ? v->live[w] : 0;
    }
    const ark__table_view *v = ark__table_view_of((const ark_table *)q->c[k]);
    return w < (v->slots.cap + 63) >> 6 ? v->present[w] : 0;
}

/* The candidates of word w: live entities with every `with` component and
 * no `without` one (tags are checked apart). */
ARK__ALWAYS_INLINE ARK__INLINE uint64_t ark__query_word(const ark_query *q,
                                                        uint64_t w) {
    const ark__pool_view *ev = ark__query_entities(q);
    uint64_t issued = ark__pool_issued(ev);
    if (w >= (issued + 63) >> 6) {
        return 0;
    }
    uint64_t bits = ark__pool_word(ev, w, issued);
    for (unsigned k = 0; k < q->n; k++) {
        unsigned kind = q->kind[k];
        if ((kind & ARK__QUERY_KIND) != ARK__QUERY_TAG) {
            uint64_t x = ark__query_term_word(q, k, w);
            bits &= (kind & ARK__QUERY_NOT) ? ~x : x;
        }
    }
    return bits;
}

/* Point the pool terms at the elements of word w (whose candidates have
 * every `with` pool term's bit set, so storage covers them). */
ARK__ALWAYS_INLINE ARK__INLINE void ark__query_enter(ark_query_iter *it,
                                                     uint64_t w) {
    const ark_query *q = it->q;
    it->word = w;
    for (unsigned k = 0; k < q->n; k++) {
        if (q->kind[k] == ARK__QUERY_POOL) {
            const ark__slots_view *v =
                &ark__pool_view_of((const ark_pool *)q->c[k])->slots;
            it->base[k] = ark__slots_at(v, w << 6) + v->data_off;
            it->stride[k] = v->stride;
        }
    }
}

/* Move to the next word with candidates; false at the end. */
ARK__ALWAYS_INLINE ARK__INLINE bool ark__query_advance(ark_query_iter *it) {
    for (uint64_t w = it->word + 1; w < it->words; w++) {
        uint64_t bits = ark__query_word(it->q, w);
        if (bits != 0) {
            it->bits = bits;
            ark__query_enter(it, w);
            return true;
        }
    }
    it->word = it->words;
    return false;
}

/* Whether id passes tag term k (its cursor moved to the first id >= id):
 * a few steps forward, then a search. */
ARK__ALWAYS_INLINE ARK__INLINE bool ark__query_tag(ark_query_iter *it,
                                                   unsigned k, uint32_t id) {
    const ark_idset *s = (const ark_idset *)it->q->c[k];
    size_t n = ark_idset_count(s), p = it->pos[k];
    unsigned steps = 0;
    while (p < n && ark_idset_at(s, p) < id) {
        if (++steps == 4) {
            p = ark_idset_lower_bound(s, id);
            break;
        }
        p++;
    }
    it->pos[k] = p;
    bool has = p < n && ark_idset_at(s, p) == id;
    return has != ((it->q->kind[k] & ARK__QUERY_NOT) != 0);
}

/* Whether id passes every tag term but the one the walk follows. */
ARK__ALWAYS_INLINE ARK__INLINE bool ark__query_tags(ark_query_iter *it,
                                                    uint32_t id) {
    const ark_query *q = it->q;
    for (unsigned k = 0; k < q->n; k++) {
        if ((q->kind[k] & ARK__QUERY_KIND) == ARK__QUERY_TAG &&
            k != it->drive && !ark__query_tag(it, k, id)) {
            return false;
        }
    }
    return true;
}

/* The entity pool changed since the candidates were taken: take the
 * current word's again, restart the tag cursors' searches, and say
 * whether id (of that word, taken already) still qualifies. */
ARK__INLINE bool ark__query_refresh(ark_query_iter *it, uint32_t id) {
    const ark_query *q = it->q;
    it->epoch = ark__query_entities(q)->slots.epoch;
    for (unsigned k = 0; k < q->n; k++) {
        if ((q->kind[k] & ARK__QUERY_KIND) == ARK__QUERY_TAG &&
            k != it->drive) {
            it->pos[k] = 0;
        }
    }
    uint64_t bits = ark__query_word(q, (uint64_t)id >> 6);
    if (it->drive == q->n) {
        it->bits &= bits;
    }
    return (bits >> (id & 63) & 1) != 0;
}

/* The next id of the list walk (the driving tag set's ids in order), or
 * false at the end. */
ARK__ALWAYS_INLINE ARK__INLINE bool ark__query_list_next(ark_query_iter *it,
                                                         uint32_t *id) {
    const ark_idset *s = (const ark_idset *)it->q->c[it->drive];
    size_t p = it->pos[it->drive];
    if (it->epoch != ark__query_entities(it->q)->slots.epoch) {
        /* The set may have lost ids before the cursor: search for the
         * place after the last id visited. */
        (void)ark__query_refresh(it, 0);
        p = it->after == 0 ? 0 : ark_idset_lower_bound(s, it->after);
    }
    if (p >= ark_idset_count(s)) {
        return false;
    }
    *id = ark_idset_at(s, p);
    it->pos[it->drive] = p + 1;
    it->after = *id + 1; /* an id past UINT32_MAX - 1 has no successor */
    if (it->after == 0) {
        it->pos[it->drive] = ark_idset_count(s);
    }
    return true;
}

ARK__ALWAYS_INLINE ARK__INLINE void ark_query_iter_next(ark_query_iter *it) {
    const ark_query *q = it->q;
    for (;;) {
        uint32_t id;
        if (ARK__LIKELY(it->drive == q->n)) {
            while (it->bits == 0) {
                if (!ark__query_advance(it)) {
                    it->more = false;
                    return;
                }
            }
            uint64_t bits = it->bits;
            id = (uint32_t)(it->word << 6 | ark__ctz64(bits));
            it->bits = bits & (bits - 1);
            if (!ARK__LIKELY(it->epoch == ark__query_entities(q)->slots.epoch &&
                             q->n != 0) &&
                !ark__query_refresh(it, id)) {
                continue;
            }
        } else {
            if (!ark__query_list_next(it, &id)) {
                it->more = false;
                return;
            }
            if ((ark__query_word(q, (uint64_t)id >> 6) >> (id & 63) & 1) == 0) {
                continue;
            }
            if ((uint64_t)id >> 6 != it->word) {
                ark__query_enter(it, (uint64_t)id >> 6);
            }
        }
        if (it->tags && !ark__query_tags(it, id)) {
            continue;
        }
        it->id = id;
        return;
    }
}

ARK__ALWAYS_INLINE ARK__INLINE ark_query_iter
ark_query_iter_begin(const ark_query *q) {
    ark_query_iter it;
    memset(&it, 0, sizeof it);
    it.q = q;
    it.more = true;
    const ark__pool_view *ev = ark__query_entities(q);
    it.words = (ark__pool_issued(ev) + 63) >> 6;
    it.epoch = ev->slots.epoch;
    it.word = UINT64_MAX; /* the bitmap walk enters word 0 next */
    it.drive = q->n;
    size_t smallest = SIZE_MAX;
    for (unsigned k = 0; k < q->n; k++) {
        if ((q->kind[k] & ARK__QUERY_KIND) != ARK__QUERY_TAG) {
            continue;
        }
        it.tags = true;
        size_t count = ark_idset_count((const ark_idset *)q->c[k]);
        /* Follow a set smaller than the words a bitmap walk reads. */
        if (q->kind[k] == ARK__QUERY_TAG && count < smallest &&
            count < it.words) {
            smallest = count;
            it.drive = k;
        }
    }
    ark_query_iter_next(&it);
    return it;
}

ARK__ALWAYS_INLINE ARK__INLINE bool
ark_query_iter_valid(const ark_query_iter *it) {
    return it->more;
}

ARK__INLINE ark_handle ark_query_iter_handle(const ark_query_iter *it) {
    const ark__slots_view *v = &ark__query_entities(it->q)->slots;
    return ark__slots_handle(v, it->id, ark__slots_at(v, it->id));
}

ARK__ALWAYS_INLINE ARK__INLINE void *
ark_query_iter_elem(const ark_query_iter *it, unsigned term) {
    return it->base[term] + (size_t)(it->id & 63) * it->stride[term];
}

ARK__ALWAYS_INLINE ARK__INLINE size_t
ark_query_iter_row(const ark_query_iter *it, unsigned term) {
    const ark__table_view *v =
        ark__table_view_of((const ark_table *)it->q->c[term]);
    return ((const ark__table_slot *)(const void *)v->slots.flat)[it->id].row;
}

#ifdef __cplusplus
}
#endif

#endif /* ARK_INTERNAL_ENTITY_H */
