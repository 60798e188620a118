/* SPDX-License-Identifier: MIT */
/*
 * ark/entity.h - entities with components and tags: one handle per entity
 * across the containers that hold its data, removal that takes everything
 * with it, and queries over components and tags.
 *
 *     ark_pool *units;                        // the entities: any pool
 *     ark_pool_create(&units, &(ark_pool_config){ARK_POOL_ELEM(unit)});
 *     ark_pool *pos;                          // a component, keyed by units
 *     ark_pool_create(&pos, &(ark_pool_config){ARK_POOL_ELEM(vec2),
 *                                              .keys = units});
 *     ark_idset *burning;                     // a tag
 *     ark_idset_create(&burning, NULL);
 *     ark_pool_attach_idset(units, burning);
 *
 *     ark_handle e;
 *     ark_pool_insert(units, &(unit){.hp = 10}, &e);
 *     ark_pool_insert_at(pos, e, &(vec2){1, 2});  // pos of e, at e
 *     ark_pool_tag(units, burning, e);
 *     vec2 *p = ark_pool_get(pos, e);             // found by e, O(1)
 *     ark_pool_remove(units, e);  // its pos and its tag go with it
 *
 * Entities. Any pool can hold entities; its handles key the components.
 * A pool or table created with `.keys = entities` in its config is keyed
 * by that pool: each element belongs to one entity, is created with
 * insert_at at the entity's handle, found with get (pool) or row (table)
 * by that handle in O(1), and refused for a handle that is not a live
 * entity. A keyed pool puts entity i's element in slot i (stable address,
 * one load to find it, memory for every entity index); a keyed table
 * packs the rows of the entities that have one (structure of arrays, one
 * more load to find a row).
 *
 * Tags. An id set attached to the entity pool holds the ids
 * (ark_pool_id) of the entities that carry the tag, in order; it also
 * keeps a membership bit per entity, which queries and ark_pool_has_tag
 * read. Tag and untag through ark_pool_tag and ark_pool_untag (they keep
 * the bits covering the entity pool's storage); read the set as any id
 * set.
 *
 * Removal. Removing an entity (remove, remove_later + flush, clear)
 * removes its ids from every attached id set (remove, or a remove a hook
 * asks for: when the removal starts; remove_later: at the flush, in one
 * sorted pass per set, while ark_pool_has_tag and queries skip the marked
 * entity at once), then runs its on_remove (its components still
 * readable), then removes its element from every keyed container, each
 * with that container's on_remove, while the entity's handle still
 * resolves. Each of these runs exactly once per
 * entity. Hooks may call back into any container involved: a removal a
 * hook asks for in a container whose hook is running is carried out right
 * after, as ark_pool_remove describes. A component marked with
 * remove_later is left to its container's flush. A new entity at a reused
 * index never finds an old component or tag: the slot's generation
 * differs, and the removal emptied it.
 *
 * Queries. An ark_query names terms: components an entity must have
 * (with), must not have (without), tags it must or must not carry. Its
 * iterator walks the entity ids in order, 64 at a time: the occupancy
 * bits of the entity pool and of every term (a keyed pool's live bits, a
 * keyed table's and an attached id set's membership bits) are combined a
 * word at a time, and each step takes the next set bit. Each step is
 * inline: the loop makes no call per element. A walk costs
 * O(entity index range / 64 + matches).
 *
 * Snapshots. Save the entity pool, then each keyed container and tag set;
 * load them in the same order, giving each keyed container's config
 * `.keys` = the loaded entity pool and attaching the tag sets again:
 * every element and id is checked against the entities, and the world is
 * the one saved (same handles, rows, bytes, tags, future handles).
 *
 * Pointers: every container argument must be non-NULL.
 *
 * Thread-safety: as the containers': none.
 */
#ifndef ARK_ENTITY_H
#define ARK_ENTITY_H

#include "ark/core.h"
#include "ark/idset.h"
#include "ark/pool.h"
#include "ark/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tags -------------------------------------------------------------- */

/*
 * Attach the id set tags to the entity pool: from now on removing an
 * entity removes its id from tags. Every id tags holds must be the id of
 * a live entity (an empty set always is; a loaded one is checked here).
 * A set is attached to one pool at a time; destroying either detaches.
 * Errors: ARK_EINVAL (tags is attached already, or holds an id that is no
 * live entity's: nothing attached), ARK_ENOMEM.
 * Complexity: O(ids held).
 */
ARK_API ark_status ark_pool_attach_idset(ark_pool *entities, ark_idset *tags);

/* Detach tags from the entity pool (nothing if it is not attached to it);
 * the ids it holds stay. */
ARK_API void ark_pool_detach_idset(ark_pool *entities, ark_idset *tags);

/*
 * Tag the entity h: insert its id into tags, which must be attached to
 * the pool.
 * Errors: as ark_pool_check for h (ARK_ESTALE also while its removal
 * runs), ARK_EEXIST (already tagged), ARK_EINVAL (tags not attached to
 * entities), ARK_ENOMEM (nothing changed).
 * Complexity: as ark_idset_insert; O(1) amortized for the newest entity.
 */
ARK_API ark_status ark_pool_tag(ark_pool *entities, ark_idset *tags,
                                ark_handle h);

/*
 * Remove the tag from the entity h.
 * Errors: as ark_pool_check for h, ARK_ENOTFOUND (not tagged),
 * ARK_EINVAL (tags not attached to entities), ARK_ENOMEM (nothing
 * changed).
 */
ARK_API ark_status ark_pool_untag(ark_pool *entities, ark_idset *tags,
                                  ark_handle h);

/* Return whether the live entity h carries the tag (false for any handle
 * that is not a live entity's). Complexity: O(1), one membership bit. */
ARK_API bool ark_pool_has_tag(const ark_pool *entities, const ark_idset *tags,
                              ark_handle h);

/* ---- queries ----------------------------------------------------------- */

/* The most terms a query holds. */
#define ARK_QUERY_MAX_TERMS 8

/*
 * A query over the entities of one pool: built once with ark_query_init
 * and the term functions (no allocation), then iterated any number of
 * times. Terms are numbered from 0 in the order they were added; the
 * iterator gives the element of a pool term and the row of a table term
 * by that number. The fields are private.
 */
typedef struct ark_query {
    /* private */
    const struct ark_pool *entities;
    const void *c[ARK_QUERY_MAX_TERMS]; /* each term's container */
    unsigned char kind[ARK_QUERY_MAX_TERMS];
    unsigned n;
} ark_query;

/* Make q an empty query over the entities of the pool: with no term, it
 * yields every live entity. */
ARK_API void ark_query_init(ark_query *q, const ark_pool *entities);

/*
 * Add a term: entities with (or without) an element in the keyed pool or
 * keyed table, or carrying (or not) the tag of an id set attached to the
 * entity pool. Returns the term's number (0, 1, ...) through *term when
 * term is not NULL.
 * Errors: ARK_EINVAL (the container is not keyed by, or the set not
 * attached to, the query's pool), ARK_EFULL (ARK_QUERY_MAX_TERMS terms
 * already). q is unchanged on error.
 */
ARK_API ark_status ark_query_with_pool(ark_query *q, const ark_pool *c,
                                       unsigned *term);
ARK_API ark_status ark_query_without_pool(ark_query *q, const ark_pool *c,
                                          unsigned *term);
ARK_API ark_status ark_query_with_table(ark_query *q, const ark_table *c,
                                        unsigned *term);
ARK_API ark_status ark_query_without_table(ark_query *q, const ark_table *c,
                                           unsigned *term);
ARK_API ark_status ark_query_with_tag(ark_query *q, const ark_idset *tags,
                                      unsigned *term);
ARK_API ark_status ark_query_without_tag(ark_query *q, const ark_idset *tags,
                                         unsigned *term);

/*
 * Inline iterator over the entities that match a query, in id order:
 *
 *     for (ark_query_iter it = ark_query_iter_begin(&q);
 *          ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
 *         vec2 *p = ark_query_iter_elem(&it, 0);     // pool term 0
 *         size_t r = ark_query_iter_row(&it, 1);     // table term 1
 *         ark_handle e = ark_query_iter_handle(&it); // the entity
 *     }
 *
 * Removing entities or their components during the loop follows the pool
 * iterator's rules: what is removed before it is reached is not visited
 * (the entity being visited may be removed too). An entity or component
 * added during the loop may or may not be visited. Change tags during the
 * loop only through ark_pool_tag, ark_pool_untag and removals.
 * id is public and read-only; the other fields are private.
 * Complexity: O(terms) per word of 64 entity ids, O(1) per match.
 */
typedef struct ark_query_iter {
    uint32_t id; /* the current entity's id (ark_pool_handle_by_id) */
    /* private */
    bool more;      /* false at the end */
    bool fast;      /* a step may take the next bit without looking again */
    uint64_t bits;  /* candidates left in word `word` */
    uint64_t word;  /* the 64 ids being walked: word * 64 on */
    uint64_t words; /* the entity pool's words, when the walk began */
    uint64_t epoch; /* the entity pool's epoch the candidates reflect;
                       UINT64_MAX while every step must look again */
    const uint64_t *epoch_at; /* where it is */
    const struct ark_query *q;
    char *base[ARK_QUERY_MAX_TERMS]; /* pool terms: element of id word*64 */
    size_t stride[ARK_QUERY_MAX_TERMS];
} ark_query_iter;

/* Return an iterator at the first matching entity (or at the end).
 * Complexity: O(terms), plus the walk to the first match. */
ARK__INLINE ark_query_iter ark_query_iter_begin(const ark_query *q);

/* Return true while the iterator is at an entity. */
ARK__INLINE bool ark_query_iter_valid(const ark_query_iter *it);

/* Advance to the next matching entity. */
ARK__INLINE void ark_query_iter_next(ark_query_iter *it);

/* Return the current entity's handle. Reads the entity's slot. */
ARK__INLINE ark_handle ark_query_iter_handle(const ark_query_iter *it);

/* Return the current entity's element in the keyed pool of `with` term
 * number term (undefined for another kind of term).
 * Lifetime: as ark_pool_get's result. */
ARK__INLINE void *ark_query_iter_elem(const ark_query_iter *it, unsigned term);

/* Return the current entity's row in the keyed table of `with` term
 * number term (undefined for another kind of term).
 * Lifetime: until a row of that table moves (a remove or a flush). */
ARK__INLINE size_t ark_query_iter_row(const ark_query_iter *it, unsigned term);

#ifdef __cplusplus
}
#endif

#include "ark/internal/entity.h"

#endif /* ARK_ENTITY_H */
