/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ref.c - ark_ref, ark_refvec, ark_refmap and the autorelease pool
 * against a model, driven by fuzz input.
 *
 * Eight counted objects (some counted atomically) move between two
 * vectors, a map and an autorelease pool, and the harness's own
 * references. The model holds each container as a flat array and derives
 * every object's exact count from them; after every step each live
 * object's count must match, and an object must be destroyed exactly when
 * its modelled count reaches zero, with no container still holding it
 * (containers finish changing their state before they release). When the
 * input asks, destroy callbacks re-enter: they push object 0 onto vector 0
 * and put it in the map, which the header allows. Positions and keys are
 * arbitrary 64-bit values from the input; allocation failures are
 * injected on demand and must leave containers and counts unchanged. At
 * the end everything is released and every object generation must have
 * been destroyed exactly once.
 */
#include "ark/ref.h"
#include "fuzz_common.h"

#define NOBJ 8
#define VMAX 256
#define MAPMAX 128
#define POOLMAX 256
#define KEY_S 0x5e5e5e5e5e5e5e5eull /* where re-entrant callbacks put obj 0 */

typedef struct obj {
    ark_ref ref; /* first member */
    int idx;
} obj;

typedef struct mentry {
    uint64_t key;
    int o;
} mentry;

typedef struct model {
    int vec[2][VMAX];
    size_t vlen[2];
    mentry map[MAPMAX];
    size_t mlen;
    int pool[POOLMAX];
    size_t plen;
    uint32_t ext[NOBJ]; /* references the harness holds */
} model;

typedef struct state {
    obj objs[NOBJ];
    int alive[NOBJ];
    uint64_t gens, destroys;
    model m;
    ark_refvec *v[2];
    ark_refmap *map;
    ark_autorelease_pool *pool;
    fuzz_alloc fa;
    int reenter;     /* destroy callbacks re-enter the containers */
    int depth;       /* inside a destroy callback */
    int vec_busy[2]; /* vector being destroyed: do not touch */
    int map_busy;    /* map being cleared or destroyed */
    int teardown;    /* final release: no re-entry */
} state;

static state *G;

FUZZ_NO_COVERAGE static uint32_t expected(const model *m, int k) {
    uint32_t c = m->ext[k];
    for (int j = 0; j < 2; j++) {
        for (size_t i = 0; i < m->vlen[j]; i++) {
            c += m->vec[j][i] == k;
        }
    }
    for (size_t i = 0; i < m->mlen; i++) {
        c += m->map[i].o == k;
    }
    for (size_t i = 0; i < m->plen; i++) {
        c += m->pool[i] == k;
    }
    return c;
}

static size_t map_find(const model *m, uint64_t key) {
    for (size_t i = 0; i < m->mlen; i++) {
        if (m->map[i].key == key) {
            return i;
        }
    }
    return SIZE_MAX;
}

static bool holds_not(uint64_t key, ark_ref *r, void *ud) {
    (void)key;
    FUZZ_REQUIRE(r != ud);
    return true;
}

typedef struct walk {
    state *s;
    size_t visits, limit; /* limit 0: no limit */
} walk;

static bool visit(uint64_t key, ark_ref *r, void *ud) {
    walk *w = ud;
    size_t i = map_find(&w->s->m, key);
    FUZZ_REQUIRE(i != SIZE_MAX && r == &w->s->objs[w->s->m.map[i].o].ref);
    w->visits++;
    return w->limit == 0 || w->visits < w->limit;
}

static void destroy(ark_ref *r) {
    state *s = G;
    obj *o = (obj *)r;
    int k = o->idx;
    FUZZ_REQUIRE(s->alive[k]);
    FUZZ_REQUIRE(ark_ref_count(r) == 0);
    FUZZ_REQUIRE(expected(&s->m, k) == 0);
    s->alive[k] = 0;
    s->destroys++;
    /* No container may still hold what it released. */
    for (int j = 0; j < 2; j++) {
        if (s->v[j] != NULL && !s->vec_busy[j]) {
            for (size_t i = 0; i < ark_refvec_count(s->v[j]); i++) {
                FUZZ_REQUIRE(ark_refvec_at(s->v[j], i) != r);
            }
        }
    }
    if (s->map != NULL && !s->map_busy) {
        ark_refmap_each(s->map, holds_not, r);
    }
    if (!s->reenter || s->teardown || s->depth > 0 || k == 0) {
        return;
    }
    s->depth++;
    ark_ref *zero = &s->objs[0].ref;
    model *m = &s->m;
    if (!s->vec_busy[0] && m->vlen[0] < VMAX) {
        m->vec[0][m->vlen[0]++] = 0;
        if (ark_refvec_push(s->v[0], zero) != ARK_OK) {
            m->vlen[0]--;
        }
    }
    if (!s->map_busy) {
        size_t i = map_find(m, KEY_S);
        if (i != SIZE_MAX || m->mlen < MAPMAX) {
            model saved = *m;
            if (i == SIZE_MAX) {
                m->map[m->mlen++] = (mentry){KEY_S, 0};
            } else {
                m->map[i].o = 0;
            }
            if (ark_refmap_put(s->map, KEY_S, zero) != ARK_OK) {
                *m = saved;
            }
        }
    }
    s->depth--;
}

FUZZ_NO_COVERAGE static void check(state *s) {
    uint32_t counts[NOBJ];
    const model *m = &s->m;
    memcpy(counts, m->ext, sizeof counts);
    for (int j = 0; j < 2; j++) {
        for (size_t i = 0; i < m->vlen[j]; i++) {
            counts[m->vec[j][i]]++;
        }
    }
    for (size_t i = 0; i < m->mlen; i++) {
        counts[m->map[i].o]++;
    }
    for (size_t i = 0; i < m->plen; i++) {
        counts[m->pool[i]]++;
    }
    for (int k = 0; k < NOBJ; k++) {
        uint32_t e = counts[k];
        FUZZ_REQUIRE(s->alive[k] == (e > 0));
        if (s->alive[k]) {
            FUZZ_REQUIRE(ark_ref_count(&s->objs[k].ref) == e);
        }
    }
    for (int j = 0; j < 2; j++) {
        FUZZ_REQUIRE(ark_refvec_count(s->v[j]) == s->m.vlen[j]);
        for (size_t i = 0; i < s->m.vlen[j]; i++) {
            FUZZ_REQUIRE(ark_refvec_at(s->v[j], i) ==
                         &s->objs[s->m.vec[j][i]].ref);
        }
        FUZZ_REQUIRE(ark_refvec_at(s->v[j], s->m.vlen[j]) == NULL);
    }
    FUZZ_REQUIRE(ark_refmap_count(s->map) == s->m.mlen);
    for (size_t i = 0; i < s->m.mlen; i++) {
        FUZZ_REQUIRE(ark_refmap_get(s->map, s->m.map[i].key) ==
                     &s->objs[s->m.map[i].o].ref);
    }
    FUZZ_REQUIRE(ark_autorelease_pool_count(s->pool) == s->m.plen);
}

static void init_obj(state *s, int k, int atomic) {
    s->objs[k].idx = k;
    if (atomic) {
        ark_ref_init_atomic(&s->objs[k].ref, destroy);
    } else {
        ark_ref_init(&s->objs[k].ref, destroy);
    }
    s->alive[k] = 1;
    s->m.ext[k] = 1;
    s->gens++;
}

/* A live object, or NULL (index -1) when the input picks a dead one. */
static ark_ref *pick_obj(state *s, fuzz_input *in, int *k) {
    *k = fuzz_u8(in) % NOBJ;
    if (!s->alive[*k]) {
        *k = -1;
        return NULL;
    }
    return &s->objs[*k].ref;
}

static uint64_t pick_pos(fuzz_input *in, size_t len) {
    uint8_t how = fuzz_u8(in);
    if (how & 0x80) {
        return fuzz_u64(in); /* anything */
    }
    return len == 0 ? how & 1 : how % (len + 1 + (how & 1));
}

static uint64_t pick_key(fuzz_input *in) {
    uint8_t how = fuzz_u8(in);
    if (how & 0x80) {
        return fuzz_u64(in);
    }
    return how & 15;
}

/* Return the model to saved (a failed call). */
static void undo(model *m, const model *saved) { *m = *saved; }

/* The status of a call that takes an object: EINVAL for NULL, else OK or,
 * only when a failure was injected, ENOMEM with the model rolled back. */
static void settle(model *m, const model *saved, ark_status st, int null_obj,
                   uint8_t op) {
    if (null_obj) {
        FUZZ_REQUIRE(st == ARK_EINVAL);
    } else if (st != ARK_OK) {
        FUZZ_REQUIRE(st == ARK_ENOMEM && (op & 0x80));
        undo(m, saved);
    }
}

/* Arm a failure when op asks, in the first allocation of the call or,
 * with 0x20 set, in the second. */
static void take_fail(state *s, uint8_t op) {
    s->fa.fail_next = (op & 0x80) != 0;
    s->fa.fail_skip = (op & 0xa0) == 0xa0;
}

static void step(state *s, fuzz_input *in, uint8_t op) {
    model *m = &s->m;
    model saved = *m;
    int j = (op >> 4) & 1;
    ark_refvec *v = s->v[j];
    int k;
    switch (op & 0x0f) {
    case 0: { /* push */
        ark_ref *r = pick_obj(s, in, &k);
        if (m->vlen[j] >= VMAX) {
            break;
        }
        if (r != NULL) {
            m->vec[j][m->vlen[j]++] = k;
        }
        take_fail(s, op);
        settle(m, &saved, ark_refvec_push(v, r), r == NULL, op);
        break;
    }
    case 1: { /* insert at an arbitrary position */
        ark_ref *r = pick_obj(s, in, &k);
        uint64_t pos = pick_pos(in, m->vlen[j]);
        if (m->vlen[j] >= VMAX) {
            break;
        }
        int ok = r != NULL && pos <= m->vlen[j];
        if (ok) {
            memmove(&m->vec[j][pos + 1], &m->vec[j][pos],
                    (m->vlen[j] - pos) * sizeof(int));
            m->vec[j][pos] = k;
            m->vlen[j]++;
        }
        take_fail(s, op);
        ark_status st = ark_refvec_insert(v, (size_t)pos, r);
        if (r == NULL) {
            FUZZ_REQUIRE(st == ARK_EINVAL);
        } else if (!ok) {
            FUZZ_REQUIRE(st == ARK_ERANGE);
        } else if (st != ARK_OK) {
            FUZZ_REQUIRE(st == ARK_ENOMEM && (op & 0x80));
            undo(m, &saved);
        }
        break;
    }
    case 2: { /* replace */
        ark_ref *r = pick_obj(s, in, &k);
        uint64_t pos = pick_pos(in, m->vlen[j]);
        int ok = r != NULL && pos < m->vlen[j];
        if (ok) {
            m->vec[j][pos] = k;
        }
        ark_status st = ark_refvec_replace(v, (size_t)pos, r);
        FUZZ_REQUIRE(st == (r == NULL ? ARK_EINVAL : ok ? ARK_OK : ARK_ERANGE));
        break;
    }
    case 3: { /* erase, or pop */
        uint64_t pos = pick_pos(in, m->vlen[j]);
        if (op & 0x40) {
            if (m->vlen[j] > 0) {
                m->vlen[j]--;
            }
            FUZZ_REQUIRE(ark_refvec_pop(v) ==
                         (saved.vlen[j] > 0 ? ARK_OK : ARK_ERANGE));
            break;
        }
        int ok = pos < m->vlen[j];
        if (ok) {
            memmove(&m->vec[j][pos], &m->vec[j][pos + 1],
                    (m->vlen[j] - pos - 1) * sizeof(int));
            m->vlen[j]--;
        }
        FUZZ_REQUIRE(ark_refvec_erase(v, (size_t)pos) ==
                     (ok ? ARK_OK : ARK_ERANGE));
        break;
    }
    case 4: /* clear */
        m->vlen[j] = 0;
        ark_refvec_clear(v);
        break;
    case 5: { /* reserve: small or any size */
        uint64_t n = (op & 0x40) ? fuzz_u64(in) : fuzz_u8(in);
        take_fail(s, op);
        ark_status st = ark_refvec_reserve(v, (size_t)n);
        FUZZ_REQUIRE(st == ARK_OK || st == ARK_ENOMEM);
        if (st == ARK_OK && n <= VMAX && n > m->vlen[j] && s->alive[1]) {
            /* the pushes up to n allocate nothing */
            m->vec[j][m->vlen[j]++] = 1;
            s->fa.fail_next = 1;
            s->fa.fail_skip = 0;
            FUZZ_REQUIRE(ark_refvec_push(v, &s->objs[1].ref) == ARK_OK);
        }
        break;
    }
    case 6: { /* copy (the other vector, or itself) */
        int src = (op & 0x40) ? j : 1 - j;
        if (src != j) {
            memcpy(m->vec[j], m->vec[src], m->vlen[src] * sizeof(int));
            m->vlen[j] = m->vlen[src];
        }
        take_fail(s, op);
        settle(m, &saved, ark_refvec_copy(v, s->v[src]), 0, op);
        break;
    }
    case 7: { /* move (the other vector, or itself) */
        int src = (op & 0x40) ? j : 1 - j;
        if (src != j) {
            memcpy(m->vec[j], m->vec[src], m->vlen[src] * sizeof(int));
            m->vlen[j] = m->vlen[src];
            m->vlen[src] = 0;
        }
        ark_refvec_move(v, s->v[src]);
        break;
    }
    case 8: { /* read at an arbitrary position */
        uint64_t pos = pick_pos(in, m->vlen[j]);
        ark_ref *r = ark_refvec_at(v, (size_t)pos);
        FUZZ_REQUIRE(pos < m->vlen[j] ? r == &s->objs[m->vec[j][pos]].ref
                                      : r == NULL);
        break;
    }
    case 9: { /* map put */
        ark_ref *r = pick_obj(s, in, &k);
        uint64_t key = pick_key(in);
        size_t i = map_find(m, key);
        if (i == SIZE_MAX && m->mlen >= MAPMAX) {
            break;
        }
        if (r != NULL) {
            if (i == SIZE_MAX) {
                m->map[m->mlen++] = (mentry){key, k};
            } else {
                m->map[i].o = k;
            }
        }
        take_fail(s, op);
        ark_status st = ark_refmap_put(s->map, key, r);
        if (r == NULL) {
            FUZZ_REQUIRE(st == ARK_EINVAL);
        } else if (st != ARK_OK) {
            FUZZ_REQUIRE(st == ARK_ENOMEM && (op & 0x80) && i == SIZE_MAX);
            undo(m, &saved);
        }
        break;
    }
    case 10: { /* map remove, get: arbitrary keys */
        uint64_t key = pick_key(in);
        size_t i = map_find(m, key);
        if (op & 0x40) {
            ark_ref *r = ark_refmap_get(s->map, key);
            FUZZ_REQUIRE(i == SIZE_MAX ? r == NULL
                                       : r == &s->objs[m->map[i].o].ref);
            break;
        }
        if (i != SIZE_MAX) {
            m->map[i] = m->map[--m->mlen];
        }
        FUZZ_REQUIRE(ark_refmap_remove(s->map, key) == (i != SIZE_MAX));
        break;
    }
    case 11: /* map reserve, clear */
        if (op & 0x40) {
            m->mlen = 0;
            s->map_busy = 1;
            ark_refmap_clear(s->map);
            s->map_busy = 0;
        } else {
            uint64_t n = (op & 0x20) ? fuzz_u64(in) : fuzz_u8(in);
            take_fail(s, op);
            ark_status st = ark_refmap_reserve(s->map, (size_t)n);
            FUZZ_REQUIRE(st == ARK_OK || st == ARK_ENOMEM);
        }
        break;
    case 12: { /* map each: the model's entries, stopping when asked */
        walk w = {s, 0, fuzz_u8(in)};
        ark_refmap_each(s->map, visit, &w);
        size_t want =
            w.limit == 0 ? m->mlen : (m->mlen < w.limit ? m->mlen : w.limit);
        FUZZ_REQUIRE(w.visits == want);
        break;
    }
    case 13: { /* the harness retains or releases its own references */
        ark_ref *r = pick_obj(s, in, &k);
        if (r == NULL) {
            break;
        }
        if (op & 0x40) {
            if (m->ext[k] > (k == 0 ? 1u : 0u)) {
                m->ext[k]--;
                if (op & 0x20) {
                    ark_ref_release_atomic(r);
                } else {
                    ark_ref_release(r);
                }
            }
        } else if (m->ext[k] < 1000) {
            m->ext[k]++;
            FUZZ_REQUIRE(((op & 0x20) ? ark_ref_retain_atomic(r)
                                      : ark_ref_retain(r)) == r);
        }
        break;
    }
    case 14: /* autorelease one of the harness's references, or drain */
        if (op & 0x40) {
            size_t n = m->plen;
            m->plen = 0;
            FUZZ_REQUIRE(ark_autorelease_drain(s->pool) == n);
        } else {
            ark_ref *r = pick_obj(s, in, &k);
            if (r != NULL && (m->ext[k] == 0 || (k == 0 && m->ext[k] == 1))) {
                break; /* the harness holds no reference to hand over */
            }
            if (m->plen >= POOLMAX) {
                break;
            }
            if (r != NULL) {
                m->ext[k]--;
                m->pool[m->plen++] = k;
            }
            take_fail(s, op);
            settle(m, &saved, ark_autorelease(s->pool, r), r == NULL, op);
        }
        break;
    case 15: /* bring a destroyed object back as a new generation */
        k = fuzz_u8(in) % NOBJ;
        if (!s->alive[k]) {
            init_obj(s, k, (op >> 6) & 1);
        }
        break;
    }
    s->fa.fail_next = 0;
    s->fa.fail_skip = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    static state s;
    memset(&s, 0, sizeof s);
    G = &s;
    fuzz_alloc_init(&s.fa);
    uint8_t shape = fuzz_u8(&in);
    s.reenter = shape & 1;
    for (int k = 0; k < NOBJ; k++) {
        init_obj(&s, k, (shape >> 1) & (k & 1));
    }
    /* Creation, each with an allocation failure on demand. */
    s.fa.fail_next = (shape & 0xc0) == 0x40;
    ark_status st = ark_refvec_create(&s.v[0], &s.fa.base);
    if (st == ARK_OK) {
        s.fa.fail_next = (shape & 0xc0) == 0x80;
        st = ark_refvec_create(&s.v[1], &s.fa.base);
    }
    if (st == ARK_OK) {
        s.fa.fail_next = (shape & 0xc0) == 0xc0 && (shape & 0x20);
        st = ark_refmap_create(&s.map, &s.fa.base);
    }
    if (st == ARK_OK) {
        s.fa.fail_next = (shape & 0xc0) == 0xc0 && !(shape & 0x20);
        st = ark_autorelease_pool_create(&s.pool, &s.fa.base);
    }
    FUZZ_REQUIRE(st == ARK_OK || st == ARK_ENOMEM);
    s.fa.fail_next = 0;
    if (st == ARK_OK) {
        check(&s);
        while (!fuzz_done(&in)) {
            step(&s, &in, fuzz_u8(&in));
            check(&s);
        }
    }
    /* Release everything; every generation is destroyed exactly once. */
    s.teardown = 1;
    for (int j = 0; j < 2; j++) {
        s.m.vlen[j] = 0;
        s.vec_busy[j] = 1;
        ark_refvec_destroy(s.v[j]);
        s.v[j] = NULL;
    }
    s.m.mlen = 0;
    s.map_busy = 1;
    ark_refmap_destroy(s.map);
    s.map = NULL;
    s.m.plen = 0;
    ark_autorelease_pool_destroy(s.pool);
    for (int k = 0; k < NOBJ; k++) {
        while (s.m.ext[k] > 0) {
            s.m.ext[k]--;
            ark_ref_release(&s.objs[k].ref);
        }
        FUZZ_REQUIRE(!s.alive[k]);
    }
    FUZZ_REQUIRE(s.destroys == s.gens);
    FUZZ_REQUIRE(s.fa.live == 0);
    return 0;
}
