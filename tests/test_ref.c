/* SPDX-License-Identifier: MIT */
/*
 * test_ref.c - ark_ref counting, the autorelease pool and ark_refvec.
 *
 * Objects are `obj`s that count their own destructions; every test ends by
 * checking that each object was destroyed exactly once (ASan catches any
 * use after free on the way). Cases named thread_* also run under TSan.
 */
#include "ark/ref.h"
#include "harness.h"

#include <stdlib.h>

/* Run a helper that may fail a CHECK, and stop the case if it did. */
#define CALL(x)                                                                \
    do {                                                                       \
        x;                                                                     \
        if (harness_failed()) {                                                \
            return;                                                            \
        }                                                                      \
    } while (0)

#define MAX_OBJS 512

/* A counted test object. It must start with its ark_ref. */
typedef struct obj {
    ark_ref ref;
    int id;
    int *destroyed; /* destroyed[id] is bumped by obj_destroy */
} obj;

static void obj_destroy(ark_ref *r) {
    obj *o = (obj *)r;
    CHECK_EQ(ark_ref_count(r), 0);
    o->destroyed[o->id]++;
    free(o);
}

static obj *obj_new(int id, int *destroyed) {
    obj *o = (obj *)malloc(sizeof *o);
    if (o != NULL) {
        ark_ref_init(&o->ref, obj_destroy);
        o->id = id;
        o->destroyed = destroyed;
    }
    return o;
}

TEST(ref_retain_release_count) {
    int destroyed[1] = {0};
    obj *o = obj_new(0, destroyed);
    CHECK(o != NULL);
    CHECK_EQ(ark_ref_count(&o->ref), 1);
    CHECK(ark_ref_retain(&o->ref) == &o->ref);
    CHECK_EQ(ark_ref_count(&o->ref), 2);
    ark_ref_release(&o->ref);
    CHECK_EQ(ark_ref_count(&o->ref), 1);
    CHECK_EQ(destroyed[0], 0);
    ark_ref_release(&o->ref);
    CHECK_EQ(destroyed[0], 1);
}

TEST(ref_atomic_single_thread) {
    int destroyed[2] = {0, 0};
    obj *o = obj_new(0, destroyed);
    CHECK(o != NULL);
    /* The explicit atomic functions work on a plain object too. */
    CHECK(ark_ref_retain_atomic(&o->ref) == &o->ref);
    CHECK_EQ(ark_ref_count(&o->ref), 2);
    ark_ref_release_atomic(&o->ref);
    ark_ref_release_atomic(&o->ref);
    CHECK_EQ(destroyed[0], 1);
    /* An atomic object counts the same through the plain functions. */
    obj *s = obj_new(1, destroyed);
    CHECK(s != NULL);
    ark_ref_init_atomic(&s->ref, obj_destroy);
    CHECK_EQ(ark_ref_count(&s->ref), 1);
    ark_ref_retain(&s->ref);
    ark_ref_retain_atomic(&s->ref);
    CHECK_EQ(ark_ref_count(&s->ref), 3);
    ark_ref_release(&s->ref);
    ark_ref_release_atomic(&s->ref);
    CHECK_EQ(destroyed[1], 0);
    ark_ref_release(&s->ref);
    CHECK_EQ(destroyed[1], 1);
}

TEST(ref_null_destroy) {
    ark_ref r;
    ark_ref_init(&r, NULL);
    ark_ref_retain(&r);
    ark_ref_release(&r);
    ark_ref_release(&r);
    CHECK_EQ(ark_ref_count(&r), 0);
}

/* The seed's Vector example: counts after push, insert, pop, copy. */
TEST(refvec_seed_example) {
    int destroyed[2] = {0, 0};
    ark_autorelease_pool *pool;
    CHECK_OK(ark_autorelease_pool_create(&pool, NULL));
    obj *c1 = obj_new(0, destroyed), *c2 = obj_new(1, destroyed);
    CHECK(c1 != NULL && c2 != NULL);
    CHECK_OK(ark_autorelease(pool, &c1->ref));
    CHECK_OK(ark_autorelease(pool, &c2->ref));
    CHECK_EQ(ark_ref_count(&c1->ref), 1);
    ark_refvec *v1, *v2, *v3;
    CHECK_OK(ark_refvec_create(&v1, NULL));
    CHECK_OK(ark_refvec_create(&v2, NULL));
    CHECK_OK(ark_refvec_create(&v3, NULL));
    CHECK_OK(ark_refvec_push(v1, &c1->ref));
    CHECK_OK(ark_refvec_insert(v1, 1, &c2->ref));
    CHECK_EQ(ark_ref_count(&c1->ref), 2);
    CHECK_EQ(ark_ref_count(&c2->ref), 2);
    CHECK_OK(ark_refvec_pop(v1));
    CHECK_EQ(ark_ref_count(&c1->ref), 2);
    CHECK_EQ(ark_ref_count(&c2->ref), 1);
    CHECK_OK(ark_refvec_copy(v2, v1));
    CHECK_EQ(ark_ref_count(&c1->ref), 3);
    CHECK_OK(ark_refvec_copy(v3, v1));
    CHECK_EQ(ark_ref_count(&c1->ref), 4);
    CHECK_EQ(ark_ref_count(&c2->ref), 1);
    /* End of frame: c2 goes, c1 stays with the three vectors. */
    CHECK_EQ(ark_autorelease_drain(pool), 2);
    CHECK_EQ(destroyed[1], 1);
    CHECK_EQ(ark_ref_count(&c1->ref), 3);
    /* Move: no count changes; v3's old element released. */
    ark_refvec_move(v3, v2);
    CHECK_EQ(ark_ref_count(&c1->ref), 2);
    CHECK_EQ(ark_refvec_count(v2), 0);
    CHECK_EQ(ark_refvec_count(v3), 1);
    CHECK(ark_refvec_at(v3, 0) == &c1->ref);
    ark_refvec_destroy(v1);
    ark_refvec_destroy(v2);
    CHECK_EQ(destroyed[0], 0);
    ark_refvec_destroy(v3);
    CHECK_EQ(destroyed[0], 1);
    ark_autorelease_pool_destroy(pool);
    ark_refvec_destroy(NULL);
    ark_autorelease_pool_destroy(NULL);
}

TEST(refvec_every_function_and_error) {
    int destroyed[3] = {0, 0, 0};
    obj *o[3];
    for (int i = 0; i < 3; i++) {
        o[i] = obj_new(i, destroyed);
        CHECK(o[i] != NULL);
    }
    ark_refvec *v;
    CHECK_OK(ark_refvec_create(&v, NULL));
    CHECK_EQ(ark_refvec_count(v), 0);
    CHECK(ark_refvec_at(v, 0) == NULL);
    CHECK_STATUS(ark_refvec_pop(v), ARK_ERANGE);
    CHECK_STATUS(ark_refvec_erase(v, 0), ARK_ERANGE);
    CHECK_STATUS(ark_refvec_replace(v, 0, &o[0]->ref), ARK_ERANGE);
    CHECK_STATUS(ark_refvec_insert(v, 1, &o[0]->ref), ARK_ERANGE);
    CHECK_STATUS(ark_refvec_push(v, NULL), ARK_EINVAL);
    CHECK_STATUS(ark_refvec_insert(v, 0, NULL), ARK_EINVAL);
    CHECK_EQ(ark_ref_count(&o[0]->ref), 1);

    CHECK_OK(ark_refvec_insert(v, 0, &o[1]->ref)); /* [1] */
    CHECK_OK(ark_refvec_insert(v, 0, &o[0]->ref)); /* [0 1] */
    CHECK_OK(ark_refvec_push(v, &o[2]->ref));      /* [0 1 2] */
    CHECK_OK(ark_refvec_insert(v, 1, &o[2]->ref)); /* [0 2 1 2] */
    CHECK_EQ(ark_refvec_count(v), 4);
    CHECK(ark_refvec_at(v, 0) == &o[0]->ref);
    CHECK(ark_refvec_at(v, 1) == &o[2]->ref);
    CHECK(ark_refvec_at(v, 2) == &o[1]->ref);
    CHECK(ark_refvec_at(v, 3) == &o[2]->ref);
    CHECK(ark_refvec_at(v, 4) == NULL);
    CHECK(ark_refvec_at(v, SIZE_MAX) == NULL);
    CHECK_EQ(ark_ref_count(&o[2]->ref), 3);
    CHECK_STATUS(ark_refvec_replace(v, 4, &o[0]->ref), ARK_ERANGE);
    CHECK_STATUS(ark_refvec_replace(v, 0, NULL), ARK_EINVAL);
    CHECK_STATUS(ark_refvec_erase(v, 4), ARK_ERANGE);
    CHECK_STATUS(ark_refvec_insert(v, 5, &o[0]->ref), ARK_ERANGE);
    CHECK_EQ(ark_refvec_count(v), 4);

    CHECK_OK(ark_refvec_replace(v, 1, &o[1]->ref)); /* [0 1 1 2] */
    CHECK_EQ(ark_ref_count(&o[1]->ref), 3);
    CHECK_EQ(ark_ref_count(&o[2]->ref), 2);
    CHECK_OK(ark_refvec_erase(v, 0)); /* [1 1 2] */
    CHECK_EQ(ark_ref_count(&o[0]->ref), 1);
    CHECK(ark_refvec_at(v, 0) == &o[1]->ref);
    CHECK_OK(ark_refvec_pop(v)); /* [1 1] */
    CHECK_EQ(ark_ref_count(&o[2]->ref), 1);
    CHECK_OK(ark_refvec_reserve(v, 100));
    CHECK_OK(ark_refvec_reserve(v, 0));
    CHECK_EQ(ark_refvec_count(v), 2);
    ark_refvec_clear(v);
    CHECK_EQ(ark_refvec_count(v), 0);
    CHECK_EQ(ark_ref_count(&o[1]->ref), 1);
    ark_refvec_clear(v);
    for (int i = 0; i < 3; i++) {
        ark_ref_release(&o[i]->ref);
        CHECK_EQ(destroyed[i], 1);
    }
    ark_refvec_destroy(v);
}

TEST(refvec_self_replace_keeps_object) {
    int destroyed[1] = {0};
    obj *o = obj_new(0, destroyed);
    CHECK(o != NULL);
    ark_refvec *v;
    CHECK_OK(ark_refvec_create(&v, NULL));
    CHECK_OK(ark_refvec_push(v, &o->ref));
    ark_ref_release(&o->ref); /* the vector holds the only reference */
    CHECK_EQ(ark_ref_count(&o->ref), 1);
    CHECK_OK(ark_refvec_replace(v, 0, &o->ref));
    CHECK_EQ(destroyed[0], 0);
    CHECK_EQ(ark_ref_count(&o->ref), 1);
    ark_refvec_destroy(v);
    CHECK_EQ(destroyed[0], 1);
}

TEST(refvec_copy_move_edge_cases) {
    int destroyed[2] = {0, 0};
    obj *a = obj_new(0, destroyed), *b = obj_new(1, destroyed);
    CHECK(a != NULL && b != NULL);
    ark_refvec *v, *w;
    CHECK_OK(ark_refvec_create(&v, NULL));
    CHECK_OK(ark_refvec_create(&w, NULL));
    CHECK_OK(ark_refvec_push(v, &a->ref));
    CHECK_OK(ark_refvec_push(w, &a->ref));
    CHECK_OK(ark_refvec_push(w, &b->ref));
    ark_ref_release(&a->ref);
    ark_ref_release(&b->ref);
    /* Self copy and self move change nothing. */
    CHECK_OK(ark_refvec_copy(v, v));
    ark_refvec_move(v, v);
    CHECK_EQ(ark_refvec_count(v), 1);
    CHECK_EQ(ark_ref_count(&a->ref), 2);
    /* Copy over shared elements: a is retained before it is released. */
    CHECK_OK(ark_refvec_copy(w, v));
    CHECK_EQ(destroyed[1], 1);
    CHECK_EQ(ark_ref_count(&a->ref), 2);
    /* Copy of an empty vector clears. */
    ark_refvec *e;
    CHECK_OK(ark_refvec_create(&e, NULL));
    CHECK_OK(ark_refvec_copy(w, e));
    CHECK_EQ(ark_refvec_count(w), 0);
    CHECK_EQ(ark_ref_count(&a->ref), 1);
    /* Move into a vector holding the same object: dst's old reference is
     * released, src's is transferred. */
    CHECK_OK(ark_refvec_push(w, &a->ref));
    ark_refvec_move(w, v);
    CHECK_EQ(ark_ref_count(&a->ref), 1);
    CHECK_EQ(ark_refvec_count(v), 0);
    /* The moved-from vector is usable. */
    CHECK_OK(ark_refvec_push(v, &a->ref));
    CHECK_EQ(ark_ref_count(&a->ref), 2);
    ark_refvec_destroy(e);
    ark_refvec_destroy(v);
    ark_refvec_destroy(w);
    CHECK_EQ(destroyed[0], 1);
}

TEST(refvec_move_between_allocators) {
    test_allocator ta, tb;
    test_allocator_init(&ta);
    test_allocator_init(&tb);
    int destroyed[1] = {0};
    obj *o = obj_new(0, destroyed);
    CHECK(o != NULL);
    ark_refvec *va, *vb;
    CHECK_OK(ark_refvec_create(&va, &ta.base));
    CHECK_OK(ark_refvec_create(&vb, &tb.base));
    CHECK_OK(ark_refvec_push(va, &o->ref));
    CHECK_OK(ark_refvec_push(vb, &o->ref));
    ark_ref_release(&o->ref);
    /* vb takes va's array and the allocator that owns it. */
    ark_refvec_move(vb, va);
    CHECK_EQ(ark_ref_count(&o->ref), 1);
    CHECK_OK(ark_refvec_push(va, &o->ref));
    ark_refvec_destroy(va);
    ark_refvec_destroy(vb);
    CHECK_EQ(destroyed[0], 1);
    CHECK_EQ(ta.live_blocks, 0);
    CHECK_EQ(tb.live_blocks, 0);
    CHECK_EQ(ta.bad_frees + tb.bad_frees, 0);
}

TEST(create_rejects_half_allocator) {
    ark_allocator bad = {NULL, NULL, NULL};
    ark_refvec *v = NULL;
    ark_autorelease_pool *p = NULL;
    CHECK_STATUS(ark_refvec_create(&v, &bad), ARK_EINVAL);
    CHECK_STATUS(ark_autorelease_pool_create(&p, &bad), ARK_EINVAL);
    CHECK(v == NULL && p == NULL);
    test_allocator t;
    test_allocator_init(&t);
    test_allocator_fail_at(&t, 1);
    CHECK_STATUS(ark_refvec_create(&v, &t.base), ARK_ENOMEM);
    test_allocator_fail_at(&t, 1);
    CHECK_STATUS(ark_autorelease_pool_create(&p, &t.base), ARK_ENOMEM);
    CHECK_EQ(t.live_blocks, 0);
}

TEST(autorelease_basics) {
    int destroyed[2] = {0, 0};
    obj *a = obj_new(0, destroyed), *b = obj_new(1, destroyed);
    CHECK(a != NULL && b != NULL);
    ark_autorelease_pool *p;
    CHECK_OK(ark_autorelease_pool_create(&p, NULL));
    CHECK_EQ(ark_autorelease_drain(p), 0);
    CHECK_STATUS(ark_autorelease(p, NULL), ARK_EINVAL);
    /* a autoreleased three times with two extra references. */
    ark_ref_retain(&a->ref);
    ark_ref_retain(&a->ref);
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ark_autorelease(p, &a->ref));
    }
    CHECK_OK(ark_autorelease(p, &b->ref));
    CHECK_EQ(ark_autorelease_pool_count(p), 4);
    CHECK_EQ(ark_ref_count(&a->ref), 3);
    CHECK_EQ(ark_autorelease_drain(p), 4);
    CHECK_EQ(ark_autorelease_pool_count(p), 0);
    CHECK_EQ(destroyed[0], 1);
    CHECK_EQ(destroyed[1], 1);
    CHECK_EQ(ark_autorelease_drain(p), 0);
    /* destroy drains first. */
    obj *c = obj_new(0, destroyed);
    CHECK(c != NULL);
    CHECK_OK(ark_autorelease(p, &c->ref));
    ark_autorelease_pool_destroy(p);
    CHECK_EQ(destroyed[0], 2);
}

/* An object whose destroy autoreleases its child into the same pool (and
 * optionally drains it from inside the callback). */
typedef struct parent {
    obj base;
    ark_ref *child;
    ark_autorelease_pool *pool;
    int nested_drain;
} parent;

static void parent_destroy(ark_ref *r) {
    parent *p = (parent *)r;
    CHECK_OK(ark_autorelease(p->pool, p->child));
    if (p->nested_drain) {
        CHECK_EQ(ark_autorelease_drain(p->pool), 1);
    }
    p->base.destroyed[p->base.id]++;
    free(p);
}

TEST(autorelease_reentrant_destroy) {
    for (int nested = 0; nested < 2; nested++) {
        int destroyed[2] = {0, 0};
        ark_autorelease_pool *pool;
        CHECK_OK(ark_autorelease_pool_create(&pool, NULL));
        parent *p = (parent *)malloc(sizeof *p);
        CHECK(p != NULL);
        ark_ref_init(&p->base.ref, parent_destroy);
        p->base.id = 0;
        p->base.destroyed = destroyed;
        p->pool = pool;
        p->nested_drain = nested;
        obj *child = obj_new(1, destroyed);
        CHECK(child != NULL);
        p->child = &child->ref;
        CHECK_OK(ark_autorelease(pool, &p->base.ref));
        /* One drain releases the parent and the child it queued. */
        size_t made = ark_autorelease_drain(pool);
        CHECK_EQ(made, nested ? 1 : 2);
        CHECK_EQ(destroyed[0], 1);
        CHECK_EQ(destroyed[1], 1);
        CHECK_EQ(ark_autorelease_pool_count(pool), 0);
        ark_autorelease_pool_destroy(pool);
    }
}

/* An element whose destroy pushes another object into the vector that is
 * being cleared or destroyed. */
typedef struct refiller {
    obj base;
    ark_refvec *vec;
    ark_ref *other;
} refiller;

static void refiller_destroy(ark_ref *r) {
    refiller *f = (refiller *)r;
    CHECK_OK(ark_refvec_push(f->vec, f->other));
    ark_ref_release(f->other);
    f->base.destroyed[f->base.id]++;
    free(f);
}

TEST(refvec_destroy_callback_refills) {
    for (int mode = 0; mode < 2; mode++) {
        int destroyed[2] = {0, 0};
        ark_refvec *v;
        CHECK_OK(ark_refvec_create(&v, NULL));
        refiller *f = (refiller *)malloc(sizeof *f);
        CHECK(f != NULL);
        ark_ref_init(&f->base.ref, refiller_destroy);
        f->base.id = 0;
        f->base.destroyed = destroyed;
        f->vec = v;
        obj *o = obj_new(1, destroyed);
        CHECK(o != NULL);
        f->other = &o->ref;
        CHECK_OK(ark_refvec_push(v, &f->base.ref));
        ark_ref_release(&f->base.ref);
        if (mode == 0) {
            ark_refvec_clear(v);
            CHECK_EQ(destroyed[0], 1);
            CHECK_EQ(ark_refvec_count(v), 1);
            CHECK(ark_refvec_at(v, 0) == &o->ref);
            CHECK_EQ(ark_ref_count(&o->ref), 1);
        }
        ark_refvec_destroy(v);
        CHECK_EQ(destroyed[0], 1);
        CHECK_EQ(destroyed[1], 1);
    }
}

/* ---- randomized model test ------------------------------------------ */

typedef struct model {
    obj *objs[MAX_OBJS];
    int destroyed[MAX_OBJS];
    int held[MAX_OBJS]; /* references the test itself holds (0 or 1) */
    int nobjs;
    int vec[2][MAX_OBJS * 4]; /* ids in each vector */
    size_t vlen[2];
    size_t pooled[MAX_OBJS]; /* entries per id in the autorelease pool */
} model;

static uint32_t model_count(const model *m, int id) {
    uint32_t n = (uint32_t)m->held[id] + (uint32_t)m->pooled[id];
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < m->vlen[k]; i++) {
            n += m->vec[k][i] == id;
        }
    }
    return n;
}

static void model_check(const model *m, ark_refvec *const v[2],
                        const ark_autorelease_pool *pool) {
    static uint32_t counts[MAX_OBJS];
    for (int id = 0; id < m->nobjs; id++) {
        counts[id] = (uint32_t)m->held[id] + (uint32_t)m->pooled[id];
    }
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < m->vlen[k]; i++) {
            counts[m->vec[k][i]]++;
        }
    }
    size_t pooled = 0;
    for (int id = 0; id < m->nobjs; id++) {
        uint32_t want = counts[id];
        if (want == 0) {
            CHECK_EQ(m->destroyed[id], 1);
        } else {
            CHECK_EQ(m->destroyed[id], 0);
            CHECK_EQ(ark_ref_count(&m->objs[id]->ref), want);
        }
        pooled += m->pooled[id];
    }
    CHECK_EQ(ark_autorelease_pool_count(pool), pooled);
    for (int k = 0; k < 2; k++) {
        CHECK_EQ(ark_refvec_count(v[k]), m->vlen[k]);
        for (size_t i = 0; i < m->vlen[k]; i++) {
            CHECK(ark_refvec_at(v[k], i) == &m->objs[m->vec[k][i]]->ref);
        }
        CHECK(ark_refvec_at(v[k], m->vlen[k]) == NULL);
    }
}

/* A random live object id, or a new one; -1 when out of ids. */
static int pick_live(model *m, uint64_t *rng) {
    for (int tries = 0; tries < 8; tries++) {
        if (m->nobjs == 0) {
            break;
        }
        int id = (int)harness_below(rng, (uint64_t)m->nobjs);
        if (model_count(m, id) > 0) {
            return id;
        }
    }
    if (m->nobjs == MAX_OBJS) {
        return -1;
    }
    int id = m->nobjs++;
    m->objs[id] = obj_new(id, m->destroyed);
    m->held[id] = 1;
    return m->objs[id] != NULL ? id : -1;
}

static void model_random_ops(model *m, ark_refvec *const v[2],
                             ark_autorelease_pool *pool, uint64_t *rng,
                             int steps) {
    for (int step = 0; step < steps; step++) {
        int k = (int)harness_below(rng, 2);
        size_t len = m->vlen[k];
        size_t i = (size_t)harness_below(rng, len + 2); /* may be bad */
        int *vk = m->vec[k];
        int op = (int)harness_below(rng, 100);
        if (op < 30) { /* push or insert */
            int id = pick_live(m, rng);
            if (id < 0 || len == MAX_OBJS * 4) {
                continue;
            }
            ark_ref *r = &m->objs[id]->ref;
            if (op < 15) {
                CHECK_OK(ark_refvec_push(v[k], r));
                vk[m->vlen[k]++] = id;
            } else if (i > len) {
                CHECK_STATUS(ark_refvec_insert(v[k], i, r), ARK_ERANGE);
            } else {
                CHECK_OK(ark_refvec_insert(v[k], i, r));
                memmove(vk + i + 1, vk + i, (len - i) * sizeof *vk);
                vk[i] = id;
                m->vlen[k]++;
            }
        } else if (op < 42) { /* replace, sometimes by itself */
            int id = i < len && op < 34 ? vk[i] : pick_live(m, rng);
            if (id < 0) {
                continue;
            }
            ark_status want = i < len ? ARK_OK : ARK_ERANGE;
            CHECK_STATUS(ark_refvec_replace(v[k], i, &m->objs[id]->ref), want);
            if (want == ARK_OK) {
                vk[i] = id;
            }
        } else if (op < 54) { /* erase */
            ark_status want = i < len ? ARK_OK : ARK_ERANGE;
            CHECK_STATUS(ark_refvec_erase(v[k], i), want);
            if (want == ARK_OK) {
                memmove(vk + i, vk + i + 1, (len - i - 1) * sizeof *vk);
                m->vlen[k]--;
            }
        } else if (op < 62) { /* pop */
            CHECK_STATUS(ark_refvec_pop(v[k]), len ? ARK_OK : ARK_ERANGE);
            m->vlen[k] -= len ? 1 : 0;
        } else if (op < 64) { /* clear */
            ark_refvec_clear(v[k]);
            m->vlen[k] = 0;
        } else if (op < 67) { /* copy the other vector into this one */
            CHECK_OK(ark_refvec_copy(v[k], v[1 - k]));
            memcpy(vk, m->vec[1 - k], m->vlen[1 - k] * sizeof *vk);
            m->vlen[k] = m->vlen[1 - k];
        } else if (op < 69) { /* move the other vector into this one */
            ark_refvec_move(v[k], v[1 - k]);
            memcpy(vk, m->vec[1 - k], m->vlen[1 - k] * sizeof *vk);
            m->vlen[k] = m->vlen[1 - k];
            m->vlen[1 - k] = 0;
        } else if (op < 80) { /* retain + autorelease */
            int id = pick_live(m, rng);
            if (id < 0) {
                continue;
            }
            CHECK(ark_ref_retain(&m->objs[id]->ref) == &m->objs[id]->ref);
            CHECK_OK(ark_autorelease(pool, &m->objs[id]->ref));
            m->pooled[id]++;
        } else if (op < 83) { /* autorelease the test's own reference */
            int id = pick_live(m, rng);
            if (id < 0 || !m->held[id]) {
                continue;
            }
            CHECK_OK(ark_autorelease(pool, &m->objs[id]->ref));
            m->held[id] = 0;
            m->pooled[id]++;
        } else if (op < 85) { /* end of frame */
            size_t want = 0;
            for (int id = 0; id < m->nobjs; id++) {
                want += m->pooled[id];
                m->pooled[id] = 0;
            }
            CHECK_EQ(ark_autorelease_drain(pool), want);
        } else { /* drop the test's own reference */
            int id = pick_live(m, rng);
            if (id < 0 || !m->held[id]) {
                continue;
            }
            ark_ref_release(&m->objs[id]->ref);
            m->held[id] = 0;
        }
        CALL(model_check(m, v, pool));
    }
}

TEST(random_counts_against_model) {
    uint64_t rng = harness_seed();
    static model m;
    memset(&m, 0, sizeof m);
    ark_refvec *v[2];
    ark_autorelease_pool *pool;
    CHECK_OK(ark_refvec_create(&v[0], NULL));
    CHECK_OK(ark_refvec_create(&v[1], NULL));
    CHECK_OK(ark_autorelease_pool_create(&pool, NULL));
    CALL(model_random_ops(&m, v, pool, &rng, 20000));
    /* Tear down: drop the test's references, then the containers. */
    for (int id = 0; id < m.nobjs; id++) {
        if (m.held[id]) {
            ark_ref_release(&m.objs[id]->ref);
            m.held[id] = 0;
        }
    }
    ark_refvec_destroy(v[0]);
    ark_refvec_destroy(v[1]);
    ark_autorelease_pool_destroy(pool);
    CHECK(m.nobjs > 100);
    for (int id = 0; id < m.nobjs; id++) {
        CHECK_EQ(m.destroyed[id], 1);
    }
}

/* ---- allocation failure --------------------------------------------- */

/* One scenario that allocates at every step; each fallible call that
 * fails must report ENOMEM and change nothing, then is retried. */
static void oom_scenario(test_allocator *t, int *destroyed, obj **o,
                         bool *saw_failure) {
    ark_refvec *v = NULL, *w = NULL;
    ark_autorelease_pool *p = NULL;
    ark_status s;
    while ((s = ark_refvec_create(&v, &t->base)) != ARK_OK) {
        CHECK_STATUS(s, ARK_ENOMEM);
        *saw_failure = true;
    }
    while ((s = ark_refvec_create(&w, &t->base)) != ARK_OK) {
        CHECK_STATUS(s, ARK_ENOMEM);
        *saw_failure = true;
    }
    while ((s = ark_autorelease_pool_create(&p, &t->base)) != ARK_OK) {
        CHECK_STATUS(s, ARK_ENOMEM);
        *saw_failure = true;
    }
    for (int i = 0; i < 40; i++) {
        ark_ref *r = &o[i % 4]->ref;
        uint32_t before = ark_ref_count(r);
        size_t n = ark_refvec_count(v);
        s = i % 3 == 0 ? ark_refvec_insert(v, n / 2, r) : ark_refvec_push(v, r);
        if (s != ARK_OK) {
            CHECK_STATUS(s, ARK_ENOMEM);
            *saw_failure = true;
            CHECK_EQ(ark_ref_count(r), before);
            CHECK_EQ(ark_refvec_count(v), n);
            i--;
            continue;
        }
        CHECK_EQ(ark_ref_count(r), before + 1);
        /* Autorelease a fresh reference. */
        ark_ref_retain(r);
        size_t pooled = ark_autorelease_pool_count(p);
        s = ark_autorelease(p, r);
        if (s != ARK_OK) {
            CHECK_STATUS(s, ARK_ENOMEM);
            *saw_failure = true;
            CHECK_EQ(ark_autorelease_pool_count(p), pooled);
            CHECK_EQ(ark_ref_count(r), before + 2);
            ark_ref_release(r);
        }
        if (i % 10 == 9) {
            /* copy v into w; on failure w and every count are unchanged */
            size_t wn = ark_refvec_count(w);
            uint32_t c0 = ark_ref_count(&o[0]->ref);
            s = ark_refvec_copy(w, v);
            if (s != ARK_OK) {
                CHECK_STATUS(s, ARK_ENOMEM);
                *saw_failure = true;
                CHECK_EQ(ark_refvec_count(w), wn);
                CHECK_EQ(ark_ref_count(&o[0]->ref), c0);
                CHECK_OK(ark_refvec_copy(w, v));
            }
            CHECK_EQ(ark_refvec_count(w), ark_refvec_count(v));
            ark_autorelease_drain(p);
        }
    }
    s = ark_refvec_reserve(w, 1000);
    if (s != ARK_OK) {
        CHECK_STATUS(s, ARK_ENOMEM);
        *saw_failure = true;
    }
    CHECK_EQ(ark_refvec_count(w), 40);
    ark_refvec_destroy(v);
    ark_refvec_destroy(w);
    ark_autorelease_pool_destroy(p);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(ark_ref_count(&o[i]->ref), 1);
        CHECK_EQ(destroyed[i], 0);
    }
}

TEST(alloc_failure_every_k) {
    int destroyed[4] = {0, 0, 0, 0};
    obj *o[4];
    for (int i = 0; i < 4; i++) {
        o[i] = obj_new(i, destroyed);
        CHECK(o[i] != NULL);
    }
    for (uint64_t k = 1;; k++) {
        test_allocator t;
        test_allocator_init(&t);
        test_allocator_fail_at(&t, k);
        bool saw = false;
        CALL(oom_scenario(&t, destroyed, o, &saw));
        CHECK_EQ(t.live_blocks, 0);
        CHECK_EQ(t.bad_frees, 0);
        CHECK_EQ(saw, t.failures > 0);
        if (t.failures == 0) {
            CHECK(k > 10);
            break;
        }
    }
    for (int i = 0; i < 4; i++) {
        ark_ref_release(&o[i]->ref);
        CHECK_EQ(destroyed[i], 1);
    }
}

/* ---- threads -------------------------------------------------------- */

#define THREADS 4
#define THREAD_ITERS 100000

typedef struct shared_obj {
    ark_ref ref;
    int writes[THREADS]; /* plain data each thread writes before release */
    int *destroyed;
} shared_obj;

static void shared_destroy(ark_ref *r) {
    shared_obj *s = (shared_obj *)r;
    /* Reads the threads' plain writes: TSan reports a race here unless
     * the last release synchronises with every earlier one. */
    int sum = 0;
    for (int i = 0; i < THREADS; i++) {
        sum += s->writes[i];
    }
    *s->destroyed += sum == THREADS ? 1 : 100;
    free(s);
}

typedef struct worker {
    shared_obj *obj;
    int index;
    int failed;
} worker;

static void *hammer(void *arg) {
    worker *w = (worker *)arg;
    ark_ref *r = &w->obj->ref;
    ark_refvec *v;
    if (ark_refvec_create(&v, NULL) != ARK_OK) {
        w->failed = 1;
        return NULL;
    }
    for (int i = 0; i < THREAD_ITERS; i++) {
        /* Alternate the explicit atomic API, the plain API (atomic by the
         * object's mode) and a container. */
        switch (i % 3) {
        case 0:
            ark_ref_release_atomic(ark_ref_retain_atomic(r));
            break;
        case 1:
            ark_ref_retain(r);
            ark_ref_retain(r);
            ark_ref_release(r);
            ark_ref_release(r);
            break;
        default:
            if (ark_refvec_push(v, r) != ARK_OK) {
                w->failed = 1;
            }
            if (ark_refvec_count(v) > 16) {
                ark_refvec_clear(v);
            }
            break;
        }
    }
    ark_refvec_destroy(v);
    w->obj->writes[w->index] = 1;
    ark_ref_release(r); /* the reference main took for this thread */
    return NULL;
}

TEST(thread_atomic_refcount) {
    for (int round = 0; round < 3; round++) {
        int destroyed = 0;
        shared_obj *s = (shared_obj *)calloc(1, sizeof *s);
        CHECK(s != NULL);
        ark_ref_init_atomic(&s->ref, shared_destroy);
        s->destroyed = &destroyed;
        harness_thread th[THREADS];
        worker w[THREADS];
        for (int i = 0; i < THREADS; i++) {
            w[i].obj = s;
            w[i].index = i;
            w[i].failed = 0;
            ark_ref_retain(&s->ref);
            CHECK_EQ(harness_thread_start(&th[i], hammer, &w[i]), 0);
        }
        /* Main drops its own reference while the workers run. */
        ark_ref_release(&s->ref);
        for (int i = 0; i < THREADS; i++) {
            CHECK_EQ(harness_thread_join(th[i]), 0);
            CHECK_EQ(w[i].failed, 0);
        }
        CHECK_EQ(destroyed, 1);
    }
}

/* Exact count after concurrent retains through the plain API. */
static void *retain_many(void *arg) {
    ark_ref *r = (ark_ref *)arg;
    for (int i = 0; i < THREAD_ITERS; i++) {
        ark_ref_retain(r);
    }
    return NULL;
}

TEST(thread_exact_count) {
    int destroyed[1] = {0};
    obj *o = obj_new(0, destroyed);
    CHECK(o != NULL);
    ark_ref_init_atomic(&o->ref, obj_destroy);
    harness_thread th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(harness_thread_start(&th[i], retain_many, &o->ref), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(harness_thread_join(th[i]), 0);
    }
    CHECK_EQ(ark_ref_count(&o->ref), 1 + THREADS * THREAD_ITERS);
    for (int i = 0; i < THREADS * THREAD_ITERS; i++) {
        ark_ref_release(&o->ref);
    }
    CHECK_EQ(destroyed[0], 0);
    ark_ref_release(&o->ref);
    CHECK_EQ(destroyed[0], 1);
}

/* ---- ark_refmap ---- */

/* A destroy callback run while clear, copy or move releases v's old
 * elements moves another vector, made with another allocator, into v:
 * v's old array must go back to the allocator it came from, not to v's
 * allocator of the moment. */
static ark_refvec *g_move_dst, *g_move_src;

static void mover_destroy(ark_ref *r) {
    obj *o = (obj *)r;
    ark_refvec_move(g_move_dst, g_move_src);
    o->destroyed[o->id]++;
    free(o);
}

enum { OLD_BY_CLEAR, OLD_BY_COPY, OLD_BY_MOVE };

/* Release dst's one element (the mover) by op; ta made dst, tb the vector
 * the mover moves in, with x. Afterwards dst holds x. */
static void release_old_array(int op, test_allocator *ta, test_allocator *tb) {
    int destroyed[3] = {0, 0, 0};
    ark_refvec *third = NULL;
    CHECK_OK(ark_refvec_create(&g_move_dst, &ta->base));
    CHECK_OK(ark_refvec_create(&g_move_src, &tb->base));
    CHECK_OK(ark_refvec_create(&third, NULL));
    obj *m = obj_new(0, destroyed), *x = obj_new(1, destroyed);
    obj *y = obj_new(2, destroyed);
    CHECK(m != NULL && x != NULL && y != NULL);
    ark_ref_init(&m->ref, mover_destroy);
    CHECK_OK(ark_refvec_push(g_move_dst, &m->ref));
    ark_ref_release(&m->ref);
    CHECK_OK(ark_refvec_push(g_move_src, &x->ref));
    ark_ref_release(&x->ref);
    CHECK_OK(ark_refvec_push(third, &y->ref));
    ark_ref_release(&y->ref);
    if (op == OLD_BY_CLEAR) {
        ark_refvec_clear(g_move_dst);
    } else if (op == OLD_BY_COPY) {
        CHECK_OK(ark_refvec_copy(g_move_dst, third));
    } else {
        ark_refvec_move(g_move_dst, third);
    }
    CHECK_EQ(destroyed[0], 1);
    CHECK_EQ(ark_refvec_count(g_move_dst), 1);
    CHECK(ark_refvec_at(g_move_dst, 0) == &x->ref);
    ark_refvec_destroy(g_move_dst);
    ark_refvec_destroy(g_move_src);
    ark_refvec_destroy(third);
    CHECK_EQ(destroyed[1], 1);
    CHECK_EQ(destroyed[2], 1);
}

TEST(refvec_old_array_goes_back_to_its_allocator) {
    for (int op = OLD_BY_CLEAR; op <= OLD_BY_MOVE; op++) {
        test_allocator ta, tb;
        test_allocator_init(&ta);
        test_allocator_init(&tb);
        release_old_array(op, &ta, &tb);
        CHECK_EQ(ta.live_blocks, 0);
        CHECK_EQ(tb.live_blocks, 0);
        CHECK_EQ(ta.bad_frees + tb.bad_frees, 0);
    }
}

/* A value that, when destroyed, looks at the map it leaves: every value
 * the map still lists must be alive, its own key must be gone, and the
 * first few put a new value (which clear must release too). */
typedef struct watcher {
    obj base;
    ark_refmap *map;
    int n;         /* keys 0..n-1 were put */
    int *put_left; /* puts still to make */
} watcher;

static void watcher_destroy(ark_ref *r) {
    watcher *w = (watcher *)r;
    int *destroyed = w->base.destroyed;
    for (int k = 0; k < w->n; k++) {
        CHECK(ark_refmap_get(w->map, (uint64_t)k) == NULL || destroyed[k] == 0);
    }
    CHECK(!ark_refmap_remove(w->map, (uint64_t)w->base.id));
    if (*w->put_left > 0) {
        (*w->put_left)--;
        obj *o = obj_new(w->n + *w->put_left, destroyed);
        CHECK(o != NULL);
        CHECK_OK(
            ark_refmap_put(w->map, (uint64_t)(1000 + *w->put_left), &o->ref));
        ark_ref_release(&o->ref);
    }
    destroyed[w->base.id]++;
    free(w);
}

/* clear and destroy release each value only once the map no longer lists
 * it, so a destroy callback may use the map (before 2026-11-24 they
 * released everything first: get returned freed values, and a value
 * could remove its own key again). 300 values: several batches. */
TEST(refmap_clear_and_destroy_let_callbacks_use_the_map) {
    enum { N = 300, PUTS = 5 };
    for (int how = 0; how < 2; how++) {
        int destroyed[N + PUTS] = {0};
        int put_left = PUTS;
        ark_refmap *m;
        CHECK_OK(ark_refmap_create(&m, NULL));
        for (int k = 0; k < N; k++) {
            watcher *w = (watcher *)malloc(sizeof *w);
            CHECK(w != NULL);
            ark_ref_init(&w->base.ref, watcher_destroy);
            w->base.id = k;
            w->base.destroyed = destroyed;
            w->map = m;
            w->n = N;
            w->put_left = &put_left;
            CHECK_OK(ark_refmap_put(m, (uint64_t)k, &w->base.ref));
            ark_ref_release(&w->base.ref);
        }
        if (how == 0) {
            ark_refmap_clear(m);
            CHECK_EQ(ark_refmap_count(m), 0);
        }
        ark_refmap_destroy(m);
        CHECK_EQ(put_left, 0);
        for (int k = 0; k < N + PUTS; k++) {
            CHECK_EQ(destroyed[k], 1);
        }
    }
}

TEST(refmap_every_function_and_error) {
    int destroyed[3] = {0, 0, 0};
    obj *a = obj_new(0, destroyed), *b = obj_new(1, destroyed);
    CHECK(a != NULL && b != NULL);
    ark_refmap *m;
    CHECK_OK(ark_refmap_create(&m, NULL));
    CHECK_EQ(ark_refmap_count(m), 0);
    CHECK(ark_refmap_get(m, 0) == NULL);
    CHECK_STATUS(ark_refmap_put(m, 1, NULL), ARK_EINVAL);
    CHECK_OK(ark_refmap_put(m, 0, &a->ref));
    CHECK_OK(ark_refmap_put(m, UINT64_MAX, &a->ref));
    CHECK_EQ(ark_ref_count(&a->ref), 3);
    CHECK(ark_refmap_get(m, 0) == &a->ref);
    CHECK(ark_refmap_get(m, UINT64_MAX) == &a->ref);
    CHECK_EQ(ark_ref_count(&a->ref), 3); /* get borrows */
    /* Putting the value already there changes nothing. */
    CHECK_OK(ark_refmap_put(m, 0, &a->ref));
    CHECK_EQ(ark_ref_count(&a->ref), 3);
    /* Replacing releases the old value. */
    CHECK_OK(ark_refmap_put(m, 0, &b->ref));
    CHECK_EQ(ark_ref_count(&a->ref), 2);
    CHECK_EQ(ark_ref_count(&b->ref), 2);
    CHECK_EQ(ark_refmap_count(m), 2);
    CHECK(ark_refmap_remove(m, UINT64_MAX));
    CHECK(!ark_refmap_remove(m, UINT64_MAX));
    CHECK_EQ(ark_ref_count(&a->ref), 1);
    CHECK_OK(ark_refmap_reserve(m, 1000));
    for (uint64_t k = 10; k < 1010; k++) {
        CHECK_OK(ark_refmap_put(m, k * 0x9e3779b97f4a7c15ull, &a->ref));
    }
    CHECK_EQ(ark_ref_count(&a->ref), 1001);
    CHECK_EQ(ark_refmap_count(m), 1001);
    ark_refmap_clear(m);
    CHECK_EQ(ark_refmap_count(m), 0);
    CHECK_EQ(ark_ref_count(&a->ref), 1);
    CHECK_EQ(ark_ref_count(&b->ref), 1);
    CHECK_OK(ark_refmap_put(m, 5, &b->ref));
    ark_refmap_destroy(m); /* releases b's map reference */
    ark_refmap_destroy(NULL);
    CHECK_EQ(ark_ref_count(&b->ref), 1);
    ark_ref_release(&a->ref);
    ark_ref_release(&b->ref);
    CHECK_EQ(destroyed[0], 1);
    CHECK_EQ(destroyed[1], 1);
}

typedef struct refmap_walk {
    uint64_t keys;
    size_t n;
    size_t stop;
} refmap_walk;

static bool refmap_visit(uint64_t key, ark_ref *r, void *ud) {
    refmap_walk *w = ud;
    (void)r;
    w->keys += key;
    w->n++;
    return w->n < w->stop;
}

/* A map that owns the last reference: removing, replacing and destroying
 * free objects, each exactly once, and each visits every entry. */
TEST(refmap_owns_last_reference) {
    int destroyed[40] = {0};
    ark_refmap *m;
    CHECK_OK(ark_refmap_create(&m, NULL));
    uint64_t want = 0;
    for (int i = 0; i < 40; i++) {
        obj *o = obj_new(i, destroyed);
        CHECK(o != NULL);
        CHECK_OK(ark_refmap_put(m, (uint64_t)i * 7, &o->ref));
        ark_ref_release(&o->ref); /* the map holds the only reference */
        want += (uint64_t)i * 7;
    }
    refmap_walk w = {0, 0, (size_t)-1};
    ark_refmap_each(m, refmap_visit, &w);
    CHECK_EQ(w.n, 40);
    CHECK_EQ(w.keys, want);
    refmap_walk early = {0, 0, 3};
    ark_refmap_each(m, refmap_visit, &early);
    CHECK_EQ(early.n, 3);
    CHECK(ark_refmap_remove(m, 0));
    CHECK_EQ(destroyed[0], 1);
    obj *x = obj_new(39, destroyed); /* same id as the one it replaces */
    CHECK(x != NULL);
    CHECK_OK(ark_refmap_put(m, 7, &x->ref)); /* replaces object 1 */
    ark_ref_release(&x->ref);
    CHECK_EQ(destroyed[1], 1);
    ark_refmap_destroy(m);
    for (int i = 0; i < 39; i++) {
        CHECK_EQ(destroyed[i], 1);
    }
    CHECK_EQ(destroyed[39], 2); /* object 39 and its namesake x */
}

/* Random puts, removes and clears over a few keys and objects; after every
 * step each object's count is 1 (ours) + the number of keys mapping to it. */
TEST(refmap_random_counts_against_model) {
    enum { KEYS = 64, OBJS = 16 };
    int destroyed[OBJS] = {0};
    obj *o[OBJS];
    for (int i = 0; i < OBJS; i++) {
        o[i] = obj_new(i, destroyed);
        CHECK(o[i] != NULL);
    }
    int owner[KEYS]; /* object id per key, -1 = absent */
    for (int k = 0; k < KEYS; k++) {
        owner[k] = -1;
    }
    ark_refmap *m;
    CHECK_OK(ark_refmap_create(&m, NULL));
    uint64_t rng = harness_seed();
    uint64_t steps = harness_scaled(200000);
    for (uint64_t step = 0; step < steps; step++) {
        uint64_t r = harness_below(&rng, 100);
        int k = (int)harness_below(&rng, KEYS);
        uint64_t key = (uint64_t)k * 0x100000001b3ull; /* spread keys */
        if (r < 55) {
            int id = (int)harness_below(&rng, OBJS);
            CHECK_OK(ark_refmap_put(m, key, &o[id]->ref));
            owner[k] = id;
        } else if (r < 90) {
            CHECK_EQ(ark_refmap_remove(m, key), owner[k] >= 0);
            owner[k] = -1;
        } else if (r < 99) {
            ark_ref *got = ark_refmap_get(m, key);
            CHECK(got == (owner[k] >= 0 ? &o[owner[k]]->ref : NULL));
        } else {
            ark_refmap_clear(m);
            for (int j = 0; j < KEYS; j++) {
                owner[j] = -1;
            }
        }
        uint32_t want[OBJS];
        size_t entries = 0;
        for (int i = 0; i < OBJS; i++) {
            want[i] = 1;
        }
        for (int j = 0; j < KEYS; j++) {
            if (owner[j] >= 0) {
                want[owner[j]]++;
                entries++;
            }
        }
        CHECK_EQ(ark_refmap_count(m), entries);
        for (int i = 0; i < OBJS; i++) {
            CHECK_EQ(ark_ref_count(&o[i]->ref), want[i]);
        }
    }
    ark_refmap_destroy(m);
    for (int i = 0; i < OBJS; i++) {
        CHECK_EQ(ark_ref_count(&o[i]->ref), 1);
        ark_ref_release(&o[i]->ref);
        CHECK_EQ(destroyed[i], 1);
    }
}

/* Fail the k-th allocation of create + growth for every k: ENOMEM leaves
 * the map and every count unchanged, and nothing leaks. */
TEST(refmap_alloc_failure_every_k) {
    int destroyed[1] = {0};
    obj *a = obj_new(0, destroyed);
    CHECK(a != NULL);
    for (uint64_t k = 1;; k++) {
        test_allocator t;
        test_allocator_init(&t);
        test_allocator_fail_at(&t, k);
        ark_refmap *m = NULL;
        ark_status s = ark_refmap_create(&m, &t.base);
        if (s != ARK_OK) {
            CHECK_STATUS(s, ARK_ENOMEM);
            CHECK_EQ(t.live_blocks, 0);
            continue;
        }
        uint64_t put = 0;
        for (; put < 300; put++) {
            s = ark_refmap_put(m, put, &a->ref);
            if (s != ARK_OK) {
                break;
            }
        }
        CHECK_EQ(ark_refmap_count(m), put);
        CHECK_EQ(ark_ref_count(&a->ref), 1 + put);
        if (s != ARK_OK) {
            CHECK_STATUS(s, ARK_ENOMEM);
            CHECK(ark_refmap_get(m, put) == NULL);
            CHECK_OK(ark_refmap_put(m, put, &a->ref)); /* usable again */
            CHECK_EQ(ark_ref_count(&a->ref), 2 + put);
        }
        ark_refmap_destroy(m);
        CHECK_EQ(ark_ref_count(&a->ref), 1);
        CHECK_EQ(t.live_blocks, 0);
        if (t.failures == 0) {
            CHECK(k > 2);
            break;
        }
    }
    ark_ref_release(&a->ref);
    CHECK_EQ(destroyed[0], 1);
}

/* Sizes past the documented maxima fail with ARK_ENOMEM before any size
 * reaches the allocator (which records the largest request it saw), and
 * leave the containers usable. */
TEST(sizes_past_the_maximum_never_reach_the_allocator) {
    int destroyed[1] = {0};
    obj *a = obj_new(0, destroyed);
    CHECK(a != NULL);
    test_allocator t;
    test_allocator_init(&t);
    ark_refvec *v;
    ark_refmap *m;
    CHECK_OK(ark_refvec_create(&v, &t.base));
    CHECK_OK(ark_refmap_create(&m, &t.base));
    uint64_t attempts = t.attempts, largest = t.max_request;
    const size_t huge[] = {SIZE_MAX / 8, SIZE_MAX / 8 + 1, SIZE_MAX,
                           ARK_REFVEC_MAX + 1, ARK_REFMAP_MAX + 1};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        if (huge[i] > ARK_REFVEC_MAX) {
            CHECK_STATUS(ark_refvec_reserve(v, huge[i]), ARK_ENOMEM);
        }
        if (huge[i] > ARK_REFMAP_MAX) {
            CHECK_STATUS(ark_refmap_reserve(m, huge[i]), ARK_ENOMEM);
        }
    }
    CHECK_EQ(t.attempts, attempts);
    CHECK_EQ(t.max_request, largest);
    CHECK_EQ(ark_refvec_count(v), 0);
    CHECK_EQ(ark_refmap_count(m), 0);
    /* A sane reserve asks for exactly that many pointers. */
    CHECK_OK(ark_refvec_reserve(v, 1000));
    CHECK_EQ(t.max_request, 1000 * sizeof(ark_ref *));
    CHECK_OK(ark_refvec_push(v, &a->ref));
    CHECK_OK(ark_refmap_put(m, 1, &a->ref));
    CHECK_EQ(ark_ref_count(&a->ref), 3);
    ark_refvec_destroy(v);
    ark_refmap_destroy(m);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 0);
    ark_ref_release(&a->ref);
    CHECK_EQ(destroyed[0], 1);
}
