/* SPDX-License-Identifier: MIT */
/*
 * entity.c - tags (id sets attached to an entity pool) and queries over
 * an entity pool's keyed containers and tags (ark/entity.h). Keyed
 * containers and the removal cascade are the handle engine's
 * (src/engine/keys.c); this file adds the id sets and the query terms.
 */
#include "ark/entity.h"

#include "idset/idset.h"
#include "pool_internal.h"
#include "table_internal.h"

#include <assert.h>

/* The one external definition of each inline function of entity.h. */
ARK__INLINE_API extern inline const ark__pool_view *
ark__query_entities(const ark_query *q);
ARK__INLINE_API extern inline uint64_t
ark__query_term_word(const ark_query *q, unsigned k, uint64_t w);
ARK__INLINE_API extern inline uint64_t ark__query_word(const ark_query *q,
                                                       uint64_t w);
ARK__INLINE_API extern inline void ark__query_enter(ark_query_iter *it,
                                                    uint64_t w);
ARK__INLINE_API extern inline bool ark__query_advance(ark_query_iter *it);
ARK__INLINE_API extern inline bool ark__query_tag(ark_query_iter *it,
                                                  unsigned k, uint32_t id);
ARK__INLINE_API extern inline bool ark__query_tags(ark_query_iter *it,
                                                   uint32_t id);
ARK__INLINE_API extern inline bool ark__query_refresh(ark_query_iter *it,
                                                      uint32_t id);
ARK__INLINE_API extern inline bool ark__query_list_next(ark_query_iter *it,
                                                        uint32_t *id);
ARK_API extern inline void ark_query_iter_next(ark_query_iter *it);
ARK_API extern inline ark_query_iter ark_query_iter_begin(const ark_query *q);
ARK_API extern inline bool ark_query_iter_valid(const ark_query_iter *it);
ARK_API extern inline ark_handle
ark_query_iter_handle(const ark_query_iter *it);
ARK_API extern inline void *ark_query_iter_elem(const ark_query_iter *it,
                                                unsigned term);
ARK_API extern inline size_t ark_query_iter_row(const ark_query_iter *it,
                                                unsigned term);

/* ---- tags -------------------------------------------------------------- */

/* What the entity pool's engine asks of an attached id set. */
static ark_status tags_prepare(void *c, ark_handle h) {
    ark_idset *s = c;
    const ark__slots *k = s->detach_ctx;
    return ark__idset_remove_prepare(s,
                                     (uint32_t)(h & k->v->layout.index_mask));
}

static void tags_remove(void *c, ark_handle h, bool hook) {
    ark_idset *s = c;
    const ark__slots *k = s->detach_ctx;
    (void)hook;
    /* prepared: cannot fail; absent: nothing to do */
    (void)ark_idset_remove(s, (uint32_t)(h & k->v->layout.index_mask));
}

static void tags_clear(void *c) { ark__idset_free_all(c); }

static void tags_detach(void *c) {
    ark_idset *s = c;
    s->detach = NULL;
    s->detach_ctx = NULL;
}

/* ark_idset_destroy on an attached set. */
static void tags_destroyed(void *ctx, ark_idset *s) {
    ark__slots_detach(ctx, s);
}

/* Whether every id of s is a live entity's in p. */
static bool tags_valid(const ark_pool *p, const ark_idset *s) {
    for (ark_idset_iter it = ark_idset_iter_begin(s, 0);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        if (ark_pool_handle_by_id(p, it.id) == ARK_NULL_HANDLE) {
            return false;
        }
    }
    return true;
}

ark_status ark_pool_attach_idset(ark_pool *entities, ark_idset *tags) {
    assert(entities != NULL && tags != NULL);
    if (tags->detach != NULL || entities->s.keyed ||
        !tags_valid(entities, tags)) {
        return ARK_EINVAL;
    }
    ark__slots_attached a = {tags,       tags_prepare, tags_remove,
                             tags_clear, tags_detach,  true};
    ark_status st = ark__slots_attach(&entities->s, &a);
    if (st == ARK_OK) {
        tags->detach = tags_destroyed;
        tags->detach_ctx = &entities->s;
    }
    return st;
}

void ark_pool_detach_idset(ark_pool *entities, ark_idset *tags) {
    assert(entities != NULL && tags != NULL);
    if (tags->detach_ctx == &entities->s) {
        ark__slots_detach(&entities->s, tags);
        tags_detach(tags);
    }
}

/* The id of the entity h if it is live and tags is attached to entities;
 * else the status to return. */
static ark_status tag_target(const ark_pool *entities, const ark_idset *tags,
                             ark_handle h, uint32_t *id) {
    if (tags->detach_ctx != &entities->s) {
        return ARK_EINVAL;
    }
    ark_status st = ark_pool_check(entities, h);
    if (st == ARK_OK && !ark__slots_key_live(&entities->s, h)) {
        st = ARK_ESTALE; /* its removal runs */
    }
    *id = (uint32_t)(h & entities->view.slots.layout.index_mask);
    return st;
}

ark_status ark_pool_tag(ark_pool *entities, ark_idset *tags, ark_handle h) {
    assert(entities != NULL && tags != NULL);
    uint32_t id;
    ark_status st = tag_target(entities, tags, h, &id);
    if (st == ARK_OK) {
        st = ark_idset_insert(tags, id);
        entities->view.slots.epoch += st == ARK_OK;
    }
    return st;
}

ark_status ark_pool_untag(ark_pool *entities, ark_idset *tags, ark_handle h) {
    assert(entities != NULL && tags != NULL);
    uint32_t id;
    ark_status st = tag_target(entities, tags, h, &id);
    if (st == ARK_OK) {
        st = ark_idset_remove(tags, id);
        entities->view.slots.epoch += st == ARK_OK;
    }
    return st;
}

bool ark_pool_has_tag(const ark_pool *entities, const ark_idset *tags,
                      ark_handle h) {
    assert(entities != NULL && tags != NULL);
    uint32_t id;
    return tag_target(entities, tags, h, &id) == ARK_OK &&
           ark_idset_contains(tags, id);
}

/* ---- queries ----------------------------------------------------------- */

void ark_query_init(ark_query *q, const ark_pool *entities) {
    assert(q != NULL && entities != NULL);
    memset(q, 0, sizeof *q);
    q->entities = entities;
}

/* Append a term of kind over c, which must belong to the query's pool. */
static ark_status add_term(ark_query *q, const void *c, bool belongs,
                           unsigned kind, unsigned *term) {
    assert(q != NULL && c != NULL);
    if (!belongs) {
        return ARK_EINVAL;
    }
    if (q->n == ARK_QUERY_MAX_TERMS) {
        return ARK_EFULL;
    }
    q->c[q->n] = c;
    q->kind[q->n] = (unsigned char)kind;
    if (term != NULL) {
        *term = q->n;
    }
    q->n++;
    return ARK_OK;
}

static bool pool_belongs(const ark_query *q, const ark_pool *c) {
    return c->s.keyed && c->s.keys == &q->entities->s;
}

static bool table_belongs(const ark_query *q, const ark_table *c) {
    return c->s.keyed && c->s.keys == &q->entities->s;
}

static bool tags_belong(const ark_query *q, const ark_idset *s) {
    return s->detach_ctx == &q->entities->s;
}

ark_status ark_query_with_pool(ark_query *q, const ark_pool *c,
                               unsigned *term) {
    return add_term(q, c, pool_belongs(q, c), ARK__QUERY_POOL, term);
}

ark_status ark_query_without_pool(ark_query *q, const ark_pool *c,
                                  unsigned *term) {
    return add_term(q, c, pool_belongs(q, c), ARK__QUERY_POOL | ARK__QUERY_NOT,
                    term);
}

ark_status ark_query_with_table(ark_query *q, const ark_table *c,
                                unsigned *term) {
    return add_term(q, c, table_belongs(q, c), ARK__QUERY_TABLE, term);
}

ark_status ark_query_without_table(ark_query *q, const ark_table *c,
                                   unsigned *term) {
    return add_term(q, c, table_belongs(q, c),
                    ARK__QUERY_TABLE | ARK__QUERY_NOT, term);
}

ark_status ark_query_with_tag(ark_query *q, const ark_idset *tags,
                              unsigned *term) {
    return add_term(q, tags, tags_belong(q, tags), ARK__QUERY_TAG, term);
}

ark_status ark_query_without_tag(ark_query *q, const ark_idset *tags,
                                 unsigned *term) {
    return add_term(q, tags, tags_belong(q, tags),
                    ARK__QUERY_TAG | ARK__QUERY_NOT, term);
}
