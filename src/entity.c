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
ARK_API extern inline ark_query_iter ark_query_iter_begin(const ark_query *q);
ARK_API extern inline bool ark_query_iter_valid(const ark_query_iter *it);
ARK_API extern inline void ark_query_iter_next(ark_query_iter *it);
ARK_API extern inline ark_handle
ark_query_iter_handle(const ark_query_iter *it);
ARK_API extern inline void *ark_query_iter_elem(const ark_query_iter *it,
                                                unsigned term);
ARK_API extern inline size_t ark_query_iter_row(const ark_query_iter *it,
                                                unsigned term);

/* ---- tags -------------------------------------------------------------- */

/* What the entity pool's engine asks of an attached id set. */
/* Whether id may be in s: its membership bit, which every tag set keeps
 * for the ids of its pool's storage (past them, a search decides). */
static bool tags_may_hold(const ark_idset *s, uint32_t id) {
    return id >= s->v.present_bits ||
           (s->v.present[id >> 6] >> (id & 63) & 1) != 0;
}

/* Whether any of the n ids may be in s. */
static bool tags_may_hold_any(const ark_idset *s, const uint32_t *ids,
                              size_t n) {
    for (size_t e = 0; e < n; e++) {
        if (tags_may_hold(s, ids[e])) {
            return true;
        }
    }
    return false;
}

static uint32_t tags_id(const ark_idset *s, ark_handle h) {
    const ark__slots *k = s->detach_ctx;
    return (uint32_t)(h & k->v->layout.index_mask);
}

static ark_status tags_prepare(void *c, ark_handle h) {
    ark_idset *s = c;
    uint32_t id = tags_id(s, h);
    return tags_may_hold(s, id) ? ark__idset_remove_prepare(s, id) : ARK_OK;
}

static void tags_remove(void *c, ark_handle h, bool hook) {
    ark_idset *s = c;
    uint32_t id = tags_id(s, h);
    (void)hook;
    if (tags_may_hold(s, id)) {
        /* prepared: cannot fail; absent: nothing to do */
        (void)ark_idset_remove(s, id);
    }
}

static ark_status tags_remove_ids(void *c, const uint32_t *ids, size_t n) {
    return tags_may_hold_any(c, ids, n) ? ark_idset_remove_sorted(c, ids, n)
                                        : ARK_OK;
}

static ark_status tags_prepare_ids(void *c, const uint32_t *ids, size_t n) {
    return tags_may_hold_any(c, ids, n)
               ? ark__idset_remove_sorted_prepare(c, ids, n)
               : ARK_OK;
}

static void tags_clear(void *c) { ark__idset_free_all(c); }

static void tags_detach(void *c) {
    ark_idset *s = c;
    ark__free(&s->alloc, s->v.present, s->present_words * 8);
    s->v.present = NULL;
    s->v.present_bits = 0;
    s->present_words = 0;
    s->detach = NULL;
    s->detach_ctx = NULL;
    s->epoch = NULL;
}

/* Make the membership bits of s cover the ids of p's storage (at least
 * one word), set for the ids s holds. Errors: ARK_ENOMEM (s unchanged). */
static ark_status tags_cover(ark_idset *s, const ark_pool *p) {
    uint64_t cap = p->view.slots.cap;
    size_t words = (size_t)((cap + 63) >> 6);
    words = words == 0 ? 1 : words;
    if (words <= s->present_words) {
        return ARK_OK;
    }
    uint64_t *bits = ark__alloc(&s->alloc, words * 8, 0);
    if (bits == NULL) {
        return ARK_ENOMEM;
    }
    memset(bits, 0, words * 8);
    ark__free(&s->alloc, s->v.present, s->present_words * 8);
    s->v.present = bits;
    s->present_words = words;
    s->v.present_bits = (uint64_t)words * 64;
    for (ark_idset_iter it = ark_idset_iter_begin(s, 0);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        ark__idset_mark(&s->v, it.id, true);
    }
    return ARK_OK;
}

/* ark_idset_destroy on an attached set: off the pool's list, and its
 * membership bits freed. */
static void tags_destroyed(void *ctx, ark_idset *s) {
    ark__slots_detach(ctx, s);
    tags_detach(s);
}

/* Whether every id of s is an entity of p that is live, or marked by
 * remove_later (its tags leave at the flush): ARK_OK, else ARK_EINVAL;
 * ARK_ENOMEM for the scratch bits of the marked ones. O(ids + marked). */
static ark_status tags_valid(const ark_pool *p, const ark_idset *s) {
    const ark__slots *k = &p->s;
    size_t words = (size_t)((k->v->issued + 63) >> 6), bytes = words * 8;
    uint64_t *marked = NULL;
    if (k->npending > k->pending_done) {
        marked = ark__alloc(&k->alloc, bytes, 0);
        if (marked == NULL) {
            return ARK_ENOMEM;
        }
        memset(marked, 0, bytes);
        for (size_t j = k->pending_done; j < k->npending; j++) {
            uint64_t i = k->pending[j] & UINT32_MAX;
            marked[i >> 6] |= (uint64_t)1 << (i & 63);
        }
    }
    ark_status st = ARK_OK;
    for (ark_idset_iter it = ark_idset_iter_begin(s, 0);
         ark_idset_iter_valid(&it) && st == ARK_OK; ark_idset_iter_next(&it)) {
        uint32_t i = it.id;
        bool held = marked != NULL && i < k->v->issued &&
                    (marked[i >> 6] >> (i & 63) & 1) != 0;
        if (!held && ark_pool_handle_by_id(p, i) == ARK_NULL_HANDLE) {
            st = ARK_EINVAL;
        }
    }
    ark__free(&k->alloc, marked, bytes);
    return st;
}

ark_status ark_pool_attach_idset(ark_pool *entities, ark_idset *tags) {
    assert(entities != NULL && tags != NULL);
    if (tags->detach != NULL || entities->s.keyed) {
        return ARK_EINVAL;
    }
    ark_status st = tags_valid(entities, tags);
    if (st != ARK_OK) {
        return st;
    }
    ark__slots_attached a = {tags,        tags_prepare,    tags_remove_ids,
                             tags_remove, tags_clear,      tags_detach,
                             true,        tags_prepare_ids};
    st = tags_cover(tags, entities);
    if (st == ARK_OK) {
        st = ark__slots_attach(&entities->s, &a);
    }
    if (st != ARK_OK) {
        tags_detach(tags);
        return st;
    }
    tags->detach = tags_destroyed;
    tags->detach_ctx = &entities->s;
    tags->epoch = &entities->view.slots.epoch;
    return ARK_OK;
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
    if (st == ARK_OK && id >= tags->v.present_bits) {
        st = tags_cover(tags, entities);
    }
    if (st == ARK_OK) {
        st = ark_idset_insert(tags, id);
    }
    return st;
}

ark_status ark_pool_untag(ark_pool *entities, ark_idset *tags, ark_handle h) {
    assert(entities != NULL && tags != NULL);
    uint32_t id;
    ark_status st = tag_target(entities, tags, h, &id);
    return st == ARK_OK ? ark_idset_remove(tags, id) : st;
}

bool ark_pool_has_tag(const ark_pool *entities, const ark_idset *tags,
                      ark_handle h) {
    assert(entities != NULL && tags != NULL);
    uint32_t id;
    return tag_target(entities, tags, h, &id) == ARK_OK &&
           id < tags->v.present_bits &&
           (tags->v.present[id >> 6] >> (id & 63) & 1) != 0;
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

/* ---- the walk ---------------------------------------------------------- */

/* Word w of term k's occupancy bits (0 past their storage). */
static uint64_t term_word(const ark_query *q, unsigned k, uint64_t w) {
    switch (q->kind[k] & ARK__QUERY_KIND) {
    case ARK__QUERY_POOL: {
        const ark_pool *p = q->c[k];
        return w < (p->view.slots.cap + 63) >> 6 ? p->view.live[w] : 0;
    }
    case ARK__QUERY_TABLE: {
        const ark_table *t = q->c[k];
        return w < t->present_words ? t->present[w] : 0;
    }
    default: {
        const ark_idset *s = q->c[k];
        return w < s->present_words ? s->v.present[w] : 0;
    }
    }
}

/* The candidates of word w: live entities with every `with` term and no
 * `without` one. */
static uint64_t query_word(const ark_query *q, uint64_t w) {
    const ark__pool_view *ev = &q->entities->view;
    uint64_t issued = ark__pool_issued(ev);
    if (w >= (issued + 63) >> 6) {
        return 0;
    }
    uint64_t bits = ark__pool_word(ev, w, issued);
    for (unsigned k = 0; k < q->n && bits != 0; k++) {
        uint64_t x = term_word(q, k, w);
        bits &= (q->kind[k] & ARK__QUERY_NOT) ? ~x : x;
    }
    return bits;
}

/* Point the pool terms at the elements of word w (a candidate there has
 * every `with` pool term's bit, so their storage covers the word), and
 * the table terms at their slot arrays. */
static void enter_word(ark_query_iter *it, uint64_t w) {
    const ark_query *q = it->q;
    it->word = w;
    for (unsigned k = 0; k < q->n; k++) {
        if (q->kind[k] == ARK__QUERY_POOL) {
            const ark__slots_view *v = &((const ark_pool *)q->c[k])->view.slots;
            it->base[k] = ark__slots_at(v, w << 6) + v->data_off;
            it->stride[k] = v->stride;
        } else if (q->kind[k] == ARK__QUERY_TABLE) {
            it->base[k] = ((const ark_table *)q->c[k])->view.slots.flat;
        }
    }
}

/* ark__query_step on the iterator in place. */
static void step(ark_query_iter *it) {
    const ark_query *q = it->q;
    if (*it->epoch_at != it->epoch) {
        /* Something was removed (or, with no term, may have been): the
         * candidates left in the word must still qualify. */
        it->epoch = it->fast ? *it->epoch_at : UINT64_MAX;
        if (it->word < it->words) {
            it->bits &= query_word(q, it->word);
            enter_word(it, it->word); /* a table's slots may have moved */
        }
    }
    while (it->bits == 0) {
        uint64_t w = it->word + 1, bits = 0; /* word starts at UINT64_MAX */
        while (w < it->words && (bits = query_word(q, w)) == 0) {
            w++;
        }
        if (w >= it->words) {
            it->word = it->words;
            it->more = false;
            return;
        }
        it->bits = bits;
        enter_word(it, w);
    }
    uint64_t bits = it->bits;
    it->id = (uint32_t)(it->word << 6 | ark__ctz64(bits));
    it->bits = bits & (bits - 1);
}

ark_query_iter ark__query_step(ark_query_iter it) {
    step(&it);
    return it;
}

ark_query_iter ark__query_start(const ark_query *q) {
    assert(q != NULL && q->entities != NULL);
    ark_query_iter iter, *it = &iter;
    memset(it, 0, sizeof *it);
    it->q = q;
    it->more = true;
    /* With no term, removals the inline pool paths make move no epoch:
     * every step looks at the word again. */
    it->fast = q->n != 0;
    const ark__pool_view *ev = &q->entities->view;
    it->words = (ark__pool_issued(ev) + 63) >> 6;
    it->epoch_at = &ev->slots.epoch;
    it->epoch = it->fast ? *it->epoch_at : UINT64_MAX;
    it->word = UINT64_MAX; /* the walk enters word 0 next */
    step(it);
    return iter;
}
