/* SPDX-License-Identifier: MIT */
/*
 * test_entity_model.c - a randomized differential test of a whole world
 * (ark/entity.h) against a model of plain arrays.
 *
 * The world: an entity pool whose hook removes the entity's child and
 * another entity's hp component; two keyed pools (pos, whose hook removes
 * another entity's vel; hp) and a keyed table (vel, whose hook removes an
 * entity); two tag sets. The operations: spawn, add and remove components
 * (now and with remove_later), tag and untag, remove, remove_later, flush
 * and clear (with and without hooks) of the entities and of each
 * component, queries with random with / without / tag terms (also while
 * the loop removes what it visits and what lies ahead), dead and forged
 * handles, and a save and load of the whole world, after which the saved
 * and the loaded world go on in lockstep and must agree step by step.
 *
 * Each hook logs its call; after every operation the log must hold
 * exactly the calls the model derives (each removed entity and component
 * once, cascades from hooks included), and the hooks check what the
 * header promises while they run (the element readable, the entity's tags
 * gone, nothing new for a dying entity). Slot reuse is checked against the
 * documented rule (fresh slots until ARK_REUSE_DELAY are free, then the
 * oldest free one; generations only grow; a retired slot never returns)
 * and a new entity at a reused index must find no component or tag. The
 * whole world is compared with the model and every container validated
 * after each batch. The seed is printed on failure (ARK_SEED replays it);
 * iteration counts scale with harness_scaled().
 */
#include "ark/ark.h"
#include "harness.h"
#include "snapshot_mem.h"

#include <stdlib.h>
#include <string.h>

enum { C_POS, C_HP, C_VEL, NCOMP };
enum { K_UNIT = NCOMP }; /* a hook log's kinds: a component, or the unit */
#define NTAGS 2
#define MAXN 1024    /* the largest index space tested (index_bits 10) */
#define LOGCAP 16384 /* hook calls (and model work items) per operation */
#define DEADRING 64  /* handles of dead entities kept for probing */

typedef struct unit {
    uint64_t val;
    ark_handle child;     /* the unit's hook removes this entity */
    ark_handle hp_victim; /* ... and this entity's hp */
} unit;

typedef struct posv {
    uint64_t val;
    ark_handle victim; /* pos's hook removes this entity's vel */
} posv;

typedef struct hpv {
    uint64_t val;
} hpv;

/* vel: column 0 a value, column 1 an entity its hook removes */
static const size_t vel_cols[2] = {sizeof(uint64_t), sizeof(uint64_t)};

/* ---- the model --------------------------------------------------------- */

enum { E_FREE, E_LIVE, E_PENDING, E_RETIRED };

typedef struct ment {
    int state;
    bool issued; /* ever taken (a fresh index) */
    bool tag[NTAGS];
    ark_handle h;      /* the current or last handle at this index */
    uint64_t freed_at; /* the operation that freed the slot */
    unit u;
} ment;

typedef struct mcomp {
    bool present, marked; /* marked: remove_later, until the flush */
    ark_handle h;         /* its entity's handle */
    uint64_t val;
    ark_handle link; /* pos: victim; vel: the entity to remove; hp: 0 */
} mcomp;

typedef struct model {
    unsigned ib, gb;
    bool hp_hook; /* hp has an on_remove (else its removals take the
                     engine's hookless paths) */
    uint32_t limit, gen_max;
    uint32_t issued; /* the next fresh index */
    uint64_t ops;    /* operations so far (the age of a freed slot) */
    ment e[MAXN];
    mcomp c[NCOMP][MAXN];
    uint32_t pend[MAXN]; /* entities marked by remove_later, in order */
    size_t npend;
    uint32_t cpend[NCOMP][MAXN]; /* components marked, in order */
    size_t ncpend[NCOMP];
    ark_handle dead[DEADRING];
    unsigned ndead;
} model;

static uint32_t hidx(const model *m, ark_handle h) {
    return (uint32_t)(h & (m->limit - 1));
}

static uint32_t hgen(const model *m, ark_handle h) {
    return (uint32_t)(h >> m->ib) & m->gen_max;
}

static bool is_live(const model *m, ark_handle h) {
    const ment *e = &m->e[hidx(m, h)];
    return h != 0 && e->state == E_LIVE && e->h == h;
}

static bool comp_live(const model *m, int c, ark_handle h) {
    const mcomp *x = &m->c[c][hidx(m, h)];
    return h != 0 && x->present && !x->marked && x->h == h;
}

/* What ark_pool_check says of h on the entity pool. */
static ark_status want_check(const model *m, ark_handle h) {
    if (h == 0) {
        return ARK_ENULL;
    }
    if ((h >> (m->ib + m->gb)) != 0) {
        return ARK_EFOREIGN;
    }
    uint32_t i = hidx(m, h);
    if (i == 0 || i >= m->issued) {
        return ARK_ERANGE;
    }
    return is_live(m, h) ? ARK_OK : ARK_ESTALE;
}

/* ---- the world --------------------------------------------------------- */

typedef struct rec {
    ark_handle h;
    int kind; /* K_UNIT or a component */
    int res;  /* the entity resolved in the hook: 1, 0; -1 unknown */
} rec;

enum { W_KILL, W_RM, W_FIN };

typedef struct work {
    int kind, c, res;
    uint32_t i;
} work;

/* What the hooks need to know about the running operation. */
enum {
    OPK_OTHER,
    OPK_CLEAR_UNITS, /* the tag sets are emptied at the end */
    OPK_POS,         /* pos's hook may run around an entity's removal */
    OPK_CLEAR_POS,   /* ... and pos elements go before their entities */
};

typedef struct world {
    ark_pool *units, *pos, *hp;
    ark_table *vel;
    ark_idset *tag[NTAGS];
    model *m; /* the model as it was before the running operation */
    int opk;
    bool hooks; /* the running operation runs hooks */
    int bad;    /* a hook found something wrong */
    rec got[LOGCAP], want[LOGCAP];
    size_t ngot, nwant;
    work q[LOGCAP];
    size_t qhead, qtail;
} world;

static uint64_t cur_op;

#define MREQ(cond)                                                             \
    do {                                                                       \
        if (!(cond)) {                                                         \
            harness_fail(__FILE__, __LINE__, "op %" PRIu64 ": %s", cur_op,     \
                         #cond);                                               \
            return 0;                                                          \
        }                                                                      \
    } while (0)

static void hook_fail(world *w, int line, const char *what) {
    if (!w->bad) {
        harness_fail(__FILE__, line, "op %" PRIu64 ": in a hook: %s", cur_op,
                     what);
    }
    w->bad = 1;
}

#define HOOK_REQ(w, cond)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            hook_fail(w, __LINE__, #cond);                                     \
            return;                                                            \
        }                                                                      \
    } while (0)

static void log_call(world *w, int kind, ark_handle h, int res) {
    if (w->ngot == LOGCAP) {
        hook_fail(w, __LINE__, "hook log full");
        return;
    }
    w->got[w->ngot++] = (rec){h, kind, res};
}

static uint64_t *vel_col(const world *w, size_t col) {
    return ark_table_column(w->vel, col);
}

/* The unit's hook: readable, tags gone, nothing new for it; then it
 * removes its child and another entity's hp. */
static void on_unit(void *elem, ark_handle h, void *user) {
    world *w = user;
    const model *m = w->m;
    const unit *u = elem;
    uint32_t i = hidx(m, h);
    log_call(w, K_UNIT, h, -1);
    HOOK_REQ(w, ark_pool_get(w->units, h) == elem);
    HOOK_REQ(w, m->e[i].h == h &&
                    (m->e[i].state == E_LIVE || m->e[i].state == E_PENDING));
    HOOK_REQ(w, memcmp(u, &m->e[i].u, sizeof *u) == 0);
    if (w->opk != OPK_CLEAR_UNITS) {
        for (int t = 0; t < NTAGS; t++) {
            HOOK_REQ(w, !ark_idset_contains(w->tag[t], i));
        }
    }
    HOOK_REQ(w, !ark_pool_has_tag(w->units, w->tag[0], h));
    HOOK_REQ(w, ark_pool_tag(w->units, w->tag[1], h) == ARK_ESTALE);
    HOOK_REQ(w, ark_pool_insert_at(w->hp, h, &(hpv){7}) == ARK_ESTALE);
    HOOK_REQ(w, ark_table_insert_at(w->vel, h, NULL) == ARK_ESTALE);
    if (w->opk != OPK_CLEAR_POS) {
        /* pos is no hook's victim: its element is still there (a marked
         * one may be too, while its flush runs the hook that led here). */
        const mcomp *c = &m->c[C_POS][i];
        const posv *p = ark_pool_get(w->pos, h);
        HOOK_REQ(w, p != NULL || !c->present || c->marked);
        HOOK_REQ(w, p == NULL || (c->present && c->h == h && p->val == c->val &&
                                  p->victim == c->link));
    }
    if ((u->val & 7) == 0) {
        /* flush and clear from a hook do nothing (the model and the hook
         * log would see it) */
        HOOK_REQ(w, ark_pool_flush(w->units) == 0);
        ark_pool_clear(w->units, (u->val & 8) != 0);
    }
    if (u->child != 0) {
        (void)ark_pool_remove(w->units, u->child);
    }
    if (u->hp_victim != 0) {
        (void)ark_pool_remove(w->hp, u->hp_victim);
    }
}

static void on_pos(void *elem, ark_handle h, void *user) {
    world *w = user;
    const posv *p = elem;
    const mcomp *c = &w->m->c[C_POS][hidx(w->m, h)];
    log_call(w, C_POS, h, ark_pool_check(w->units, h) == ARK_OK);
    HOOK_REQ(w, ark_pool_get(w->pos, h) == elem);
    HOOK_REQ(w, c->present && c->h == h && c->val == p->val &&
                    c->link == p->victim);
    if ((p->val & 7) == 0) {
        HOOK_REQ(w, ark_pool_flush(w->pos) == 0);
        ark_pool_clear(w->pos, true);
    }
    if (p->victim != 0) {
        (void)ark_table_remove(w->vel, p->victim);
    }
}

static void on_hp(void *elem, ark_handle h, void *user) {
    world *w = user;
    const hpv *x = elem;
    const mcomp *c = &w->m->c[C_HP][hidx(w->m, h)];
    log_call(w, C_HP, h, ark_pool_check(w->units, h) == ARK_OK);
    HOOK_REQ(w, ark_pool_get(w->hp, h) == elem);
    HOOK_REQ(w, c->present && c->h == h && c->val == x->val);
}

static void on_vel(void *elem, ark_handle h, void *user) {
    world *w = user;
    const mcomp *c = &w->m->c[C_VEL][hidx(w->m, h)];
    log_call(w, C_VEL, h, ark_pool_check(w->units, h) == ARK_OK);
    HOOK_REQ(w, elem == NULL);
    size_t r = ark_table_row(w->vel, h);
    HOOK_REQ(w, r != ARK_NO_ROW && r < ark_table_rows(w->vel));
    ark_handle kill = vel_col(w, 1)[r];
    HOOK_REQ(w, c->present && c->h == h && c->val == vel_col(w, 0)[r] &&
                    c->link == kill);
    if ((c->val & 7) == 0) {
        HOOK_REQ(w, ark_table_flush(w->vel) == 0);
        ark_table_clear(w->vel, false);
    }
    if (kill != 0) {
        (void)ark_pool_remove(w->units, kill);
    }
}

static ark_pool_config units_cfg(world *w, const ark_allocator *a) {
    ark_pool_config c = {ARK_POOL_ELEM(unit),  .index_bits = w->m->ib,
                         .gen_bits = w->m->gb, .allocator = a,
                         .on_remove = on_unit, .user = w};
    return c;
}

static ark_pool_config pos_cfg(world *w, const ark_allocator *a) {
    ark_pool_config c = {ARK_POOL_ELEM(posv), .allocator = a,
                         .on_remove = on_pos, .user = w, .keys = w->units};
    return c;
}

static ark_pool_config hp_cfg(world *w, const ark_allocator *a) {
    ark_pool_config c = {ARK_POOL_ELEM(hpv), .allocator = a,
                         .on_remove = w->m->hp_hook ? on_hp : NULL, .user = w,
                         .keys = w->units};
    return c;
}

static ark_table_config vel_cfg(world *w, const ark_allocator *a) {
    ark_table_config c = {.column_sizes = vel_cols,
                          .ncolumns = 2,
                          .allocator = a,
                          .on_remove = on_vel,
                          .user = w,
                          .keys = w->units};
    return c;
}

static world *world_alloc(model *m) {
    world *w = calloc(1, sizeof *w);
    if (w != NULL) {
        w->m = m;
    }
    return w;
}

/* Destroy the containers, the model and w. */
static void world_free(world *w) {
    if (w == NULL) {
        return;
    }
    ark_table_destroy(w->vel);
    ark_pool_destroy(w->hp);
    ark_pool_destroy(w->pos);
    for (int t = 0; t < NTAGS; t++) {
        ark_idset_destroy(w->tag[t]);
    }
    ark_pool_destroy(w->units);
    free(w->m);
    free(w);
}

static int world_create(world *w, const ark_allocator *a) {
    ark_pool_config uc = units_cfg(w, a);
    MREQ(ark_pool_create(&w->units, &uc) == ARK_OK);
    ark_pool_config pc = pos_cfg(w, a), hc = hp_cfg(w, a);
    MREQ(ark_pool_create(&w->pos, &pc) == ARK_OK);
    MREQ(ark_pool_create(&w->hp, &hc) == ARK_OK);
    ark_table_config vc = vel_cfg(w, a);
    MREQ(ark_table_create(&w->vel, &vc) == ARK_OK);
    for (int t = 0; t < NTAGS; t++) {
        MREQ(ark_idset_create(&w->tag[t], a) == ARK_OK);
        MREQ(ark_pool_attach_idset(w->units, w->tag[t]) == ARK_OK);
    }
    return 1;
}

static ark_status world_save(const world *w, membuf *mb) {
    ark_writer wr = mem_writer(mb);
    ark_status st = ark_pool_save(w->units, &wr);
    st = st == ARK_OK ? ark_pool_save(w->pos, &wr) : st;
    st = st == ARK_OK ? ark_pool_save(w->hp, &wr) : st;
    st = st == ARK_OK ? ark_table_save(w->vel, &wr) : st;
    for (int t = 0; t < NTAGS && st == ARK_OK; t++) {
        st = ark_idset_save(w->tag[t], &wr);
    }
    return st;
}

/* Load the world saved in mb, in the order of ark/entity.h: the entity
 * pool, the keyed containers keyed by it, the tag sets attached to it. */
static int world_load(world *w, const ark_allocator *a, membuf *mb) {
    ark_reader r = mem_reader(mb);
    ark_pool_config uc = units_cfg(w, a);
    MREQ(ark_pool_load(&w->units, &uc, &r) == ARK_OK);
    ark_pool_config pc = pos_cfg(w, a), hc = hp_cfg(w, a);
    MREQ(ark_pool_load(&w->pos, &pc, &r) == ARK_OK);
    MREQ(ark_pool_load(&w->hp, &hc, &r) == ARK_OK);
    ark_table_config vc = vel_cfg(w, a);
    MREQ(ark_table_load(&w->vel, &vc, &r) == ARK_OK);
    for (int t = 0; t < NTAGS; t++) {
        MREQ(ark_idset_load(&w->tag[t], a, &r) == ARK_OK);
        MREQ(ark_pool_attach_idset(w->units, w->tag[t]) == ARK_OK);
    }
    MREQ(mb->pos == mb->len);
    return 1;
}

/* ---- components, generically ------------------------------------------- */

static ark_pool *comp_pool(const world *w, int c) {
    return c == C_POS ? w->pos : w->hp;
}

static bool comp_find(const world *w, int c, ark_handle h, uint64_t *val,
                      ark_handle *link) {
    if (c == C_VEL) {
        size_t r = ark_table_row(w->vel, h);
        if (r == ARK_NO_ROW) {
            return false;
        }
        *val = vel_col(w, 0)[r];
        *link = vel_col(w, 1)[r];
        return true;
    }
    if (c == C_POS) {
        const posv *p = ark_pool_get(w->pos, h);
        *val = p != NULL ? p->val : 0;
        *link = p != NULL ? p->victim : 0;
        return p != NULL;
    }
    const hpv *x = ark_pool_get(w->hp, h);
    *val = x != NULL ? x->val : 0;
    *link = 0;
    return x != NULL;
}

static ark_status comp_add(world *w, int c, ark_handle h, uint64_t val,
                           ark_handle link) {
    if (c == C_VEL) {
        size_t r = ARK_NO_ROW;
        ark_status st = ark_table_insert_at(w->vel, h, &r);
        if (st == ARK_OK) {
            vel_col(w, 0)[r] = val;
            vel_col(w, 1)[r] = link;
        }
        return st;
    }
    if (c == C_POS) {
        return ark_pool_insert_at(w->pos, h, &(posv){val, link});
    }
    return ark_pool_insert_at(w->hp, h, &(hpv){val});
}

static ark_status comp_remove(world *w, int c, ark_handle h, bool later) {
    if (c == C_VEL) {
        return later ? ark_table_remove_later(w->vel, h)
                     : ark_table_remove(w->vel, h);
    }
    return later ? ark_pool_remove_later(comp_pool(w, c), h)
                 : ark_pool_remove(comp_pool(w, c), h);
}

/* ---- the model's side of an operation ---------------------------------- */

static void fold(uint64_t *d, uint64_t v) {
    *d = (*d ^ v) * 0x100000001b3ull + 0x9e37u;
}

static void push(world *w, int kind, int c, uint32_t i, int res) {
    if (w->qtail == LOGCAP) {
        hook_fail(w, __LINE__, "model work list full");
        return;
    }
    w->q[w->qtail++] = (work){kind, c, res, i};
}

static void want_call(world *w, int kind, ark_handle h, int res) {
    if (w->nwant == LOGCAP) {
        hook_fail(w, __LINE__, "expected log full");
        return;
    }
    w->want[w->nwant++] = (rec){h, kind, res};
}

static void m_free_slot(model *m, uint32_t i) {
    ment *e = &m->e[i];
    e->state = hgen(m, e->h) >= m->gen_max ? E_RETIRED : E_FREE;
    e->freed_at = m->ops;
    memset(e->tag, 0, sizeof e->tag);
    m->dead[m->ndead++ % DEADRING] = e->h;
}

/* Whether an entity resolves in its pos element's hook during its
 * removal: not when pos is draining meanwhile (the pos element's removal
 * then waits until the running pos hook returns). */
static int pos_res(const world *w) {
    return w->opk == OPK_POS || w->opk == OPK_CLEAR_POS ? -1 : 1;
}

/* Run the work list to its fixpoint: removals only, each at most once, so
 * the order does not change the outcome. */
static void m_run(world *w) {
    model *m = w->m;
    while (w->qhead < w->qtail) {
        work k = w->q[w->qhead++];
        if (k.kind == W_KILL) {
            ment *e = &m->e[k.i];
            if (e->state != E_LIVE && e->state != E_PENDING) {
                continue;
            }
            ark_handle h = e->h;
            unit u = e->u;
            if (w->hooks) {
                want_call(w, K_UNIT, h, -1);
            }
            m_free_slot(m, k.i);
            if (w->hooks && u.child != 0 && is_live(m, u.child)) {
                push(w, W_KILL, 0, hidx(m, u.child), -1);
            }
            if (w->hooks && u.hp_victim != 0 &&
                comp_live(m, C_HP, u.hp_victim)) {
                push(w, W_RM, C_HP, hidx(m, u.hp_victim), -1);
            }
            for (int c = 0; c < NCOMP; c++) {
                if (comp_live(m, c, h)) {
                    push(w, W_RM, c, k.i, c == C_POS ? pos_res(w) : -1);
                }
            }
            continue;
        }
        mcomp *x = &m->c[k.c][k.i];
        if (!x->present || x->marked != (k.kind == W_FIN)) {
            continue;
        }
        if (w->hooks && (k.c != C_HP || m->hp_hook)) {
            want_call(w, k.c, x->h, k.res);
        }
        x->present = false;
        x->marked = false;
        if (!w->hooks || x->link == 0) {
            continue;
        }
        if (k.c == C_POS && comp_live(m, C_VEL, x->link)) {
            push(w, W_RM, C_VEL, hidx(m, x->link), -1);
        } else if (k.c == C_VEL && is_live(m, x->link)) {
            push(w, W_KILL, 0, hidx(m, x->link), -1);
        }
    }
}

static void op_begin(world *w, int opk, bool hooks) {
    w->m->ops++;
    w->opk = opk;
    w->hooks = hooks;
    w->ngot = w->nwant = 0;
    w->qhead = w->qtail = 0;
}

static int cmp_rec(const void *a, const void *b) {
    const rec *x = a, *y = b;
    if (x->kind != y->kind) {
        return x->kind < y->kind ? -1 : 1;
    }
    return (x->h > y->h) - (x->h < y->h);
}

/* Finish an operation: the model's side, then the hook calls must be the
 * ones it expects. */
static int op_end(world *w) {
    m_run(w);
    MREQ(!w->bad);
    qsort(w->got, w->ngot, sizeof *w->got, cmp_rec);
    qsort(w->want, w->nwant, sizeof *w->want, cmp_rec);
    for (size_t k = 0; k < w->ngot || k < w->nwant; k++) {
        const rec *g = k < w->ngot ? &w->got[k] : NULL;
        const rec *x = k < w->nwant ? &w->want[k] : NULL;
        if (g == NULL || x == NULL || g->kind != x->kind || g->h != x->h ||
            (x->res >= 0 && g->res != x->res)) {
            harness_fail(__FILE__, __LINE__,
                         "op %" PRIu64 ": hook call %zu of %zu (%zu expected):"
                         " got kind %d handle %" PRIx64 " resolved %d, want"
                         " kind %d handle %" PRIx64 " resolved %d",
                         cur_op, k, w->ngot, w->nwant, g ? g->kind : -1,
                         g ? g->h : 0, g ? g->res : -1, x ? x->kind : -1,
                         x ? x->h : 0, x ? x->res : -1);
            return 0;
        }
    }
    return 1;
}

/* ---- operations -------------------------------------------------------- */

static int do_spawn(world *w, const unit *u, uint64_t *dg) {
    model *m = w->m;
    uint32_t nfree = 0;
    uint64_t oldest = UINT64_MAX;
    for (uint32_t i = 1; i < m->issued; i++) {
        if (m->e[i].state == E_FREE) {
            nfree++;
            oldest = m->e[i].freed_at < oldest ? m->e[i].freed_at : oldest;
        }
    }
    bool fresh = m->issued < m->limit;
    op_begin(w, OPK_OTHER, true);
    ark_handle h = ARK_NULL_HANDLE;
    ark_status st = ark_pool_insert(w->units, u, &h);
    fold(dg, (uint64_t)st);
    fold(dg, h);
    if (!fresh && nfree == 0) {
        MREQ(st == ARK_EFULL);
        return op_end(w);
    }
    MREQ(st == ARK_OK);
    uint32_t i = hidx(m, h);
    MREQ(i != 0 && (h >> (m->ib + m->gb)) == 0);
    ment *e = &m->e[i];
    if (nfree >= ARK_REUSE_DELAY || !fresh) {
        /* the oldest free slot, at a newer generation */
        MREQ(e->issued && e->state == E_FREE && e->freed_at == oldest);
        MREQ(hgen(m, h) > hgen(m, e->h));
    } else {
        MREQ(i == m->issued && !e->issued);
        m->issued++;
    }
    /* A new entity at a reused index finds nothing of the old one. */
    MREQ(ark_pool_get(w->pos, h) == NULL);
    MREQ(ark_pool_get(w->hp, h) == NULL);
    MREQ(ark_table_row(w->vel, h) == ARK_NO_ROW);
    for (int t = 0; t < NTAGS; t++) {
        MREQ(!ark_pool_has_tag(w->units, w->tag[t], h));
        MREQ(!ark_idset_contains(w->tag[t], i));
    }
    e->state = E_LIVE;
    e->issued = true;
    e->h = h;
    e->u = *u;
    return op_end(w);
}

static int do_add(world *w, int c, ark_handle h, uint64_t val, ark_handle link,
                  uint64_t *dg) {
    model *m = w->m;
    mcomp *x = &m->c[c][hidx(m, h)];
    ark_status want = want_check(m, h);
    if (want == ARK_OK && x->present) {
        want = ARK_EEXIST; /* one per entity; a marked one until its flush */
    }
    op_begin(w, OPK_OTHER, true);
    ark_status st = comp_add(w, c, h, val, link);
    fold(dg, (uint64_t)st);
    MREQ(st == want);
    if (st == ARK_OK) {
        *x = (mcomp){true, false, h, val, link};
    }
    return op_end(w);
}

static int do_comp_remove(world *w, int c, ark_handle h, bool later,
                          uint64_t *dg) {
    model *m = w->m;
    bool ok = comp_live(m, c, h);
    uint32_t i = hidx(m, h);
    op_begin(w, c == C_POS ? OPK_POS : OPK_OTHER, true);
    ark_status st = comp_remove(w, c, h, later);
    fold(dg, (uint64_t)st);
    MREQ((st == ARK_OK) == ok);
    if (ok && later) {
        m->c[c][i].marked = true;
        m->cpend[c][m->ncpend[c]++] = i;
    } else if (ok) {
        push(w, W_RM, c, i, is_live(m, h));
    }
    return op_end(w);
}

static size_t comp_flush(world *w, int c) {
    return c == C_VEL ? ark_table_flush(w->vel)
                      : ark_pool_flush(comp_pool(w, c));
}

static int do_comp_flush(world *w, int c, uint64_t *dg) {
    model *m = w->m;
    op_begin(w, c == C_POS ? OPK_POS : OPK_OTHER, true);
    size_t n = comp_flush(w, c);
    fold(dg, n);
    MREQ(n == m->ncpend[c]);
    for (size_t k = 0; k < m->ncpend[c]; k++) {
        push(w, W_FIN, c, m->cpend[c][k], -1);
    }
    m->ncpend[c] = 0;
    return op_end(w);
}

static int do_comp_clear(world *w, int c, bool hooks) {
    model *m = w->m;
    op_begin(w, c == C_POS ? OPK_CLEAR_POS : OPK_OTHER, hooks);
    if (c == C_VEL) {
        ark_table_clear(w->vel, hooks);
    } else {
        ark_pool_clear(comp_pool(w, c), hooks);
    }
    for (uint32_t i = 1; i < m->limit; i++) {
        const mcomp *x = &m->c[c][i];
        if (x->present) {
            push(w, x->marked ? W_FIN : W_RM, c, i, -1);
        }
    }
    m->ncpend[c] = 0;
    return op_end(w);
}

static int do_tag(world *w, int t, ark_handle h, bool on, uint64_t *dg) {
    model *m = w->m;
    ment *e = &m->e[hidx(m, h)];
    ark_status want = want_check(m, h);
    if (want == ARK_OK && on == e->tag[t]) {
        want = on ? ARK_EEXIST : ARK_ENOTFOUND;
    }
    op_begin(w, OPK_OTHER, true);
    ark_status st = on ? ark_pool_tag(w->units, w->tag[t], h)
                       : ark_pool_untag(w->units, w->tag[t], h);
    fold(dg, (uint64_t)st);
    MREQ(st == want);
    if (st == ARK_OK) {
        e->tag[t] = on;
    }
    return op_end(w);
}

static int do_remove(world *w, ark_handle h, bool later, uint64_t *dg) {
    model *m = w->m;
    ark_status want = want_check(m, h);
    op_begin(w, OPK_OTHER, true);
    ark_status st = later ? ark_pool_remove_later(w->units, h)
                          : ark_pool_remove(w->units, h);
    fold(dg, (uint64_t)st);
    MREQ(st == want);
    if (st == ARK_OK && later) {
        m->e[hidx(m, h)].state = E_PENDING;
        m->pend[m->npend++] = hidx(m, h);
    } else if (st == ARK_OK) {
        push(w, W_KILL, 0, hidx(m, h), -1);
    }
    return op_end(w);
}

static int do_flush(world *w, uint64_t *dg) {
    model *m = w->m;
    op_begin(w, OPK_OTHER, true);
    size_t n = ark_pool_flush(w->units);
    fold(dg, n);
    MREQ(n == m->npend);
    for (size_t k = 0; k < m->npend; k++) {
        push(w, W_KILL, 0, m->pend[k], -1);
    }
    m->npend = 0;
    return op_end(w);
}

static int do_clear(world *w, bool hooks) {
    model *m = w->m;
    op_begin(w, OPK_CLEAR_UNITS, hooks);
    ark_pool_clear(w->units, hooks);
    for (uint32_t i = 1; i < m->limit; i++) {
        if (m->e[i].state == E_LIVE || m->e[i].state == E_PENDING) {
            push(w, W_KILL, 0, i, -1);
        }
    }
    m->npend = 0;
    return op_end(w);
}

/* Detach tag set t and attach it again: detached, it keeps its ids but
 * is no tag of the pool (has_tag false, tag and query terms refused);
 * attached again (its ids are live or marked entities), all is back. */
static int do_detach(world *w, int t, ark_handle h) {
    const model *m = w->m;
    size_t n = ark_idset_count(w->tag[t]);
    ark_pool_detach_idset(w->units, w->tag[t]);
    ark_pool_detach_idset(w->units, w->tag[t]); /* not attached: nothing */
    MREQ(ark_idset_count(w->tag[t]) == n);
    MREQ(!ark_pool_has_tag(w->units, w->tag[t], h));
    MREQ(ark_pool_tag(w->units, w->tag[t], h) == ARK_EINVAL);
    MREQ(ark_pool_untag(w->units, w->tag[t], h) == ARK_EINVAL);
    ark_query q;
    ark_query_init(&q, w->units);
    MREQ(ark_query_with_tag(&q, w->tag[t], NULL) == ARK_EINVAL);
    MREQ(ark_query_without_tag(&q, w->tag[t], NULL) == ARK_EINVAL);
    MREQ(ark_pool_attach_idset(w->units, w->tag[t]) == ARK_OK);
    MREQ(ark_pool_attach_idset(w->units, w->tag[t]) == ARK_EINVAL);
    MREQ(ark_pool_has_tag(w->units, w->tag[t], h) ==
         (is_live(m, h) && m->e[hidx(m, h)].tag[t]));
    return 1;
}

/* ---- queries ----------------------------------------------------------- */

typedef struct term {
    int what; /* a component, or NCOMP + a tag */
    bool with;
    unsigned num;
} term;

static bool term_holds(const model *m, uint32_t i, const term *t) {
    bool has = t->what < NCOMP ? comp_live(m, t->what, m->e[i].h)
                               : m->e[i].tag[t->what - NCOMP];
    return has == t->with;
}

static bool matches(const model *m, uint32_t i, const term *t, unsigned n) {
    if (m->e[i].state != E_LIVE) {
        return false;
    }
    for (unsigned k = 0; k < n; k++) {
        if (!term_holds(m, i, &t[k])) {
            return false;
        }
    }
    return true;
}

static ark_status add_term(const world *w, ark_query *q, const term *t,
                           unsigned *num) {
    if (t->what >= NCOMP) {
        const ark_idset *s = w->tag[t->what - NCOMP];
        return t->with ? ark_query_with_tag(q, s, num)
                       : ark_query_without_tag(q, s, num);
    }
    if (t->what == C_VEL) {
        return t->with ? ark_query_with_table(q, w->vel, num)
                       : ark_query_without_table(q, w->vel, num);
    }
    const ark_pool *p = comp_pool(w, t->what);
    return t->with ? ark_query_with_pool(q, p, num)
                   : ark_query_without_pool(q, p, num);
}

/* Random terms (up to ARK_QUERY_MAX_TERMS, repeats allowed) and the
 * query; one term too many must be refused. */
static int make_query(const world *w, uint64_t *rng, ark_query *q, term *t,
                      unsigned *n) {
    unsigned r = (unsigned)harness_below(rng, 16);
    *n = r < 12 ? r % 4 : r - 12 + 4; /* mostly 0-3, sometimes 4-7 */
    if (harness_below(rng, 40) == 0) {
        *n = ARK_QUERY_MAX_TERMS;
    }
    ark_query_init(q, w->units);
    for (unsigned k = 0; k < *n; k++) {
        t[k].what = (int)harness_below(rng, NCOMP + NTAGS);
        t[k].with = harness_below(rng, 3) != 0;
        MREQ(add_term(w, q, &t[k], &t[k].num) == ARK_OK);
        MREQ(t[k].num == k);
    }
    if (*n == ARK_QUERY_MAX_TERMS) {
        term extra = {C_POS, true, 0};
        MREQ(add_term(w, q, &extra, NULL) == ARK_EFULL);
    }
    return 1;
}

/* The visited entity: its handle and each `with` component's element. */
static int check_visit(const world *w, const ark_query_iter *it, const term *t,
                       unsigned n) {
    const model *m = w->m;
    ark_handle h = ark_query_iter_handle(it);
    MREQ(h == m->e[it->id].h);
    for (unsigned k = 0; k < n; k++) {
        if (!t[k].with || t[k].what >= NCOMP) {
            continue;
        }
        const mcomp *x = &m->c[t[k].what][it->id];
        if (t[k].what == C_VEL) {
            size_t r = ark_query_iter_row(it, t[k].num);
            MREQ(r == ark_table_row(w->vel, h));
            MREQ(vel_col(w, 0)[r] == x->val);
        } else {
            const void *p = ark_query_iter_elem(it, t[k].num);
            MREQ(p == ark_pool_get(comp_pool(w, t[k].what), h));
            MREQ(*(const uint64_t *)p == x->val);
        }
    }
    return 1;
}

static int do_query(const world *w, uint64_t *rng, const test_allocator *ta,
                    uint64_t *dg) {
    const model *m = w->m;
    ark_query q;
    term t[ARK_QUERY_MAX_TERMS];
    unsigned n;
    if (!make_query(w, rng, &q, t, &n)) {
        return 0;
    }
    uint64_t allocs = ta != NULL ? ta->allocs + ta->failures : 0;
    uint32_t next = 1; /* every match below it was visited */
    for (ark_query_iter it = ark_query_iter_begin(&q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        MREQ(it.id >= next && it.id < m->limit);
        while (next < it.id) {
            MREQ(!matches(m, next, t, n));
            next++;
        }
        MREQ(matches(m, it.id, t, n));
        if (!check_visit(w, &it, t, n)) {
            return 0;
        }
        fold(dg, it.id);
        next = it.id + 1;
    }
    for (; next < m->limit; next++) {
        MREQ(!matches(m, next, t, n));
    }
    /* A walk allocates nothing. */
    MREQ(ta == NULL || ta->allocs + ta->failures == allocs);
    return 1;
}

static ark_handle pick_live(const model *m, uint64_t *rng);
static ark_handle pick_target(const model *m, uint64_t *rng);

/* A query whose loop removes: the entity visited, others (ahead or
 * behind), components, tags. Visited: strictly increasing, each matching
 * when visited; an entity that matched at the start and still matches
 * when the walk passes it must be visited (one that starts to match
 * through a `without` term may or may not be). */
static int do_query_removing(world *w, uint64_t *rng, uint64_t *dg) {
    model *m = w->m;
    ark_query q;
    term t[ARK_QUERY_MAX_TERMS];
    unsigned n;
    if (!make_query(w, rng, &q, t, &n)) {
        return 0;
    }
    bool at_start[MAXN];
    for (uint32_t i = 0; i < m->limit; i++) {
        at_start[i] = i != 0 && matches(m, i, t, n);
    }
    uint32_t next = 1;
    for (ark_query_iter it = ark_query_iter_begin(&q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        MREQ(it.id >= next && it.id < m->limit);
        for (; next < it.id; next++) {
            MREQ(!(at_start[next] && matches(m, next, t, n)));
        }
        MREQ(matches(m, it.id, t, n));
        if (!check_visit(w, &it, t, n)) {
            return 0;
        }
        fold(dg, it.id);
        next = it.id + 1;
        ark_handle h = m->e[it.id].h;
        /* Draws in a fixed order (not as arguments, whose order of
         * evaluation the compilers choose), so a seed replays anywhere. */
        ark_handle other = pick_target(m, rng);
        uint64_t what = harness_below(rng, 12);
        int c = (int)harness_below(rng, NCOMP);
        ark_handle x = harness_below(rng, 2) != 0 ? h : other;
        bool later = harness_below(rng, 3) == 0;
        int ok = 1;
        switch (what) {
        case 0:
            ok = do_remove(w, h, false, dg);
            break;
        case 1:
            ok = do_remove(w, h, true, dg);
            break;
        case 2:
            ok = do_remove(w, other, later, dg);
            break;
        case 3:
        case 4:
            ok = do_comp_remove(w, c, x, later, dg);
            break;
        case 5:
            ok = do_tag(w, c % NTAGS, x, false, dg);
            break;
        default:
            break;
        }
        if (!ok) {
            return 0;
        }
    }
    for (; next < m->limit; next++) {
        MREQ(!(at_start[next] && matches(m, next, t, n)));
    }
    return 1;
}

/* ---- handles ----------------------------------------------------------- */

static ark_handle pick_live(const model *m, uint64_t *rng) {
    if (m->issued <= 1) {
        return ARK_NULL_HANDLE;
    }
    for (int k = 0; k < 16; k++) {
        uint32_t i = 1 + (uint32_t)harness_below(rng, m->issued - 1);
        if (m->e[i].state == E_LIVE) {
            return m->e[i].h;
        }
    }
    uint32_t start = 1 + (uint32_t)harness_below(rng, m->issued - 1);
    for (uint32_t k = 0; k < m->issued - 1; k++) {
        uint32_t i = 1 + (start - 1 + k) % (m->issued - 1);
        if (m->e[i].state == E_LIVE) {
            return m->e[i].h;
        }
    }
    return ARK_NULL_HANDLE;
}

static ark_handle pick_pending(const model *m, uint64_t *rng) {
    return m->npend == 0 ? pick_live(m, rng)
                         : m->e[m->pend[harness_below(rng, m->npend)]].h;
}

static ark_handle pick_dead(const model *m, uint64_t *rng) {
    if (m->ndead == 0) {
        return pick_live(m, rng);
    }
    unsigned n = m->ndead < DEADRING ? m->ndead : DEADRING;
    return m->dead[harness_below(rng, n)];
}

/* A handle that is not a live entity's, mostly: altered, dead, random. */
static ark_handle pick_forged(const model *m, uint64_t *rng) {
    ark_handle h = pick_live(m, rng);
    switch (harness_below(rng, 7)) {
    case 0:
        return h ^ (uint64_t)1 << harness_below(rng, 64);
    case 1:
        return h ^ (uint64_t)1 << harness_below(rng, m->ib + m->gb);
    case 2:
        return pick_dead(m, rng);
    case 3:
        return harness_rand(rng);
    case 4:
        return h + ((uint64_t)1 << m->ib);
    case 5:
        return h - ((uint64_t)1 << m->ib);
    default:
        return harness_below(rng, m->limit); /* generation 0 */
    }
}

/* A handle for an operation: mostly a live entity's. */
static ark_handle pick_target(const model *m, uint64_t *rng) {
    uint64_t r = harness_below(rng, 100);
    if (r < 78) {
        return pick_live(m, rng);
    }
    if (r < 86) {
        return pick_pending(m, rng);
    }
    if (r < 94) {
        return pick_dead(m, rng);
    }
    return pick_forged(m, rng);
}

/* A handle with a component c, mostly. */
static ark_handle pick_with(const model *m, int c, uint64_t *rng) {
    for (int k = 0; k < 16; k++) {
        uint32_t i = 1 + (uint32_t)harness_below(rng, m->limit - 1);
        if (m->c[c][i].present) {
            return m->c[c][i].h;
        }
    }
    return pick_target(m, rng);
}

/* Whatever h is, lookups find exactly what the model has at h, and
 * changes through a handle that is no live entity's are refused. */
static int do_probe(world *w, ark_handle h, uint64_t *dg) {
    model *m = w->m;
    bool live = is_live(m, h);
    uint32_t i = hidx(m, h);
    fold(dg, h);
    MREQ(ark_pool_check(w->units, h) == want_check(m, h));
    MREQ((ark_pool_get(w->units, h) != NULL) == live);
    MREQ(ark_pool_id(w->units, h) == (live ? i : 0));
    for (int c = 0; c < NCOMP; c++) {
        uint64_t val;
        ark_handle link;
        MREQ(comp_find(w, c, h, &val, &link) == comp_live(m, c, h));
        if (!comp_live(m, c, h)) {
            MREQ(comp_remove(w, c, h, false) != ARK_OK);
            MREQ(comp_remove(w, c, h, true) != ARK_OK);
        }
    }
    for (int t = 0; t < NTAGS; t++) {
        MREQ(ark_pool_has_tag(w->units, w->tag[t], h) ==
             (live && m->e[i].tag[t]));
    }
    if (!live) {
        ark_status want = want_check(m, h);
        MREQ(ark_pool_tag(w->units, w->tag[0], h) == want);
        MREQ(ark_pool_untag(w->units, w->tag[1], h) == want);
        MREQ(ark_pool_insert_at(w->pos, h, &(posv){1, 0}) == want);
        MREQ(ark_table_insert_at(w->vel, h, NULL) == want);
        MREQ(ark_pool_remove(w->units, h) == want);
        MREQ(ark_pool_remove_later(w->units, h) == want);
    }
    return 1;
}

/* ---- the whole world against the model --------------------------------- */

static int compare(const world *w) {
    const model *m = w->m;
    size_t live = 0, nlive[NCOMP] = {0}, nmarked[NCOMP] = {0},
           ntag[NTAGS] = {0};
    for (uint32_t i = 1; i < m->limit; i++) {
        const ment *e = &m->e[i];
        ark_handle h = e->h;
        if (e->state == E_LIVE) {
            live++;
            const unit *u = ark_pool_get(w->units, h);
            MREQ(u != NULL && memcmp(u, &e->u, sizeof *u) == 0);
            MREQ(ark_pool_handle_by_id(w->units, i) == h);
        } else {
            MREQ(ark_pool_handle_by_id(w->units, i) == ARK_NULL_HANDLE);
            MREQ(!e->issued || ark_pool_get(w->units, h) == NULL);
        }
        for (int t = 0; t < NTAGS; t++) {
            MREQ(ark_idset_contains(w->tag[t], i) == e->tag[t]);
            MREQ(!e->tag[t] || e->state == E_LIVE || e->state == E_PENDING);
            MREQ(!e->issued || ark_pool_has_tag(w->units, w->tag[t], h) ==
                                   (e->state == E_LIVE && e->tag[t]));
            ntag[t] += e->tag[t];
        }
        for (int c = 0; c < NCOMP; c++) {
            const mcomp *x = &m->c[c][i];
            uint64_t val;
            ark_handle link;
            if (x->present && !x->marked) {
                nlive[c]++;
                /* a live component belongs to a live or marked entity */
                MREQ(x->h == h &&
                     (e->state == E_LIVE || e->state == E_PENDING));
                MREQ(comp_find(w, c, h, &val, &link));
                MREQ(val == x->val && link == x->link);
            } else {
                nmarked[c] += x->present;
                MREQ(!x->present || !comp_find(w, c, x->h, &val, &link));
                MREQ(!e->issued || !comp_find(w, c, h, &val, &link));
            }
        }
    }
    MREQ(ark_pool_count(w->units) == live);
    MREQ(ark_pool_count(w->pos) == nlive[C_POS]);
    MREQ(ark_pool_count(w->hp) == nlive[C_HP]);
    MREQ(ark_table_count(w->vel) == nlive[C_VEL]);
    MREQ(ark_table_rows(w->vel) == nlive[C_VEL] + nmarked[C_VEL]);
    for (int t = 0; t < NTAGS; t++) {
        MREQ(ark_idset_count(w->tag[t]) == ntag[t]);
    }
    size_t marked_rows = 0;
    for (size_t r = 0; r < ark_table_rows(w->vel); r++) {
        ark_handle x = ark_table_handle_at(w->vel, r);
        marked_rows += x == ARK_NULL_HANDLE;
        MREQ(x == ARK_NULL_HANDLE ||
             (comp_live(m, C_VEL, x) && ark_table_row(w->vel, x) == r));
    }
    MREQ(marked_rows == nmarked[C_VEL]);
    size_t n = 0;
    for (ark_pool_iter it = ark_pool_iter_begin(w->units);
         ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
        MREQ(is_live(m, it.handle) &&
             it.elem == ark_pool_get(w->units, it.handle));
        n++;
    }
    MREQ(n == live);
    for (int c = C_POS; c <= C_HP; c++) {
        n = 0;
        for (ark_pool_iter it = ark_pool_iter_begin(comp_pool(w, c));
             ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
            MREQ(comp_live(m, c, it.handle));
            n++;
        }
        MREQ(n == nlive[c]);
    }
    MREQ(ark_pool_validate(w->units) == ARK_OK);
    MREQ(ark_pool_validate(w->pos) == ARK_OK);
    MREQ(ark_pool_validate(w->hp) == ARK_OK);
    MREQ(ark_table_validate(w->vel) == ARK_OK);
    for (int t = 0; t < NTAGS; t++) {
        MREQ(ark_idset_validate(w->tag[t]) == ARK_OK);
    }
    return 1;
}

/* ---- the run ----------------------------------------------------------- */

typedef struct run {
    const ark_allocator *alloc;
    const test_allocator *ta;
    uint64_t snapshots; /* save and load round trips done */
} run;

/* One random operation (no snapshot: see do_snapshot). Every random
 * draw is a statement of its own, in a fixed order: as function arguments
 * their order would be the compiler's, and a seed would replay only on
 * the compiler that ran it. */
static int step(world *w, uint64_t *rng, const run *rn, uint64_t *dg) {
    model *m = w->m;
    uint64_t r = harness_below(rng, 1000);
    int c = (int)harness_below(rng, NCOMP);
    int t = (int)harness_below(rng, NTAGS);
    bool flag = harness_below(rng, 2) != 0;
    if (r < 240) {
        unit u = {harness_rand(rng), 0, 0};
        uint64_t k = harness_below(rng, 100);
        u.child = k < 12 ? pick_live(m, rng) : k < 17 ? pick_dead(m, rng) : 0;
        u.hp_victim = harness_below(rng, 100) < 10 ? pick_live(m, rng) : 0;
        return do_spawn(w, &u, dg);
    }
    if (r < 490) {
        ark_handle link = 0;
        uint64_t k = harness_below(rng, 100);
        if ((c == C_POS && k < 25) || (c == C_VEL && k < 6)) {
            link = pick_target(m, rng);
        }
        ark_handle h = pick_target(m, rng);
        return do_add(w, c, h, harness_rand(rng), link, dg);
    }
    if (r < 570) {
        return do_comp_remove(w, c, pick_with(m, c, rng), r >= 530, dg);
    }
    if (r < 590) {
        return do_comp_flush(w, c, dg);
    }
    if (r < 710) {
        return do_tag(w, t, pick_target(m, rng), r < 660, dg);
    }
    if (r < 790) {
        return do_remove(w, pick_target(m, rng), r >= 755, dg);
    }
    if (r < 810) {
        return do_flush(w, dg);
    }
    if (r < 860) {
        return do_query(w, rng, rn->ta, dg);
    }
    if (r < 880) {
        return do_query_removing(w, rng, dg);
    }
    if (r < 985) {
        return do_probe(w, pick_forged(m, rng), dg);
    }
    if (r < 990) {
        return do_detach(w, t, pick_target(m, rng));
    }
    if (r < 998) {
        return do_comp_clear(w, c, flag);
    }
    return r < 999 ? do_flush(w, dg) : do_clear(w, flag);
}

/* Save the world, load it, and run both in lockstep for a while: the
 * same statuses, handles, counts and visits; then both save the same
 * bytes. Going on with the loaded copy. */
static int do_snapshot(world **pw, uint64_t *rng, run *rn) {
    world *w = *pw;
    membuf saved = {0};
    MREQ(world_save(w, &saved) == ARK_OK);
    model *m2 = malloc(sizeof *m2);
    world *v = m2 != NULL ? world_alloc(m2) : NULL;
    MREQ(v != NULL);
    memcpy(m2, w->m, sizeof *m2);
    int ok = world_load(v, rn->alloc, &saved) && compare(v);
    mem_free(&saved);
    uint64_t ra = *rng, rb = *rng;
    for (int k = 0; k < 40 && ok; k++) {
        uint64_t da = 0, db = 0;
        cur_op++;
        ok = step(w, &ra, rn, &da) && step(v, &rb, rn, &db);
        if (ok && da != db) {
            harness_fail(__FILE__, __LINE__,
                         "op %" PRIu64 ": the loaded world went another way",
                         cur_op);
            ok = 0;
        }
    }
    *rng = ra;
    ok = ok && compare(w) && compare(v);
    if (ok) {
        membuf a = {0}, b = {0};
        ok = world_save(w, &a) == ARK_OK && world_save(v, &b) == ARK_OK;
        if (!ok || a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
            harness_fail(__FILE__, __LINE__,
                         "op %" PRIu64 ": the two worlds save different bytes"
                         " (%zu, %zu)",
                         cur_op, a.len, b.len);
            ok = 0;
        }
        mem_free(&a);
        mem_free(&b);
    }
    world_free(ok ? w : v);
    if (ok) {
        *pw = v;
        rn->snapshots++;
    }
    return ok;
}

static int run_model(unsigned ib, unsigned gb, bool own_alloc, bool hp_hook,
                     uint64_t salt, uint64_t nops) {
    test_allocator ta;
    test_allocator_init(&ta);
    run rn = {own_alloc ? &ta.base : NULL, own_alloc ? &ta : NULL, 0};
    uint64_t rng = harness_seed() ^ salt * 0x9e3779b97f4a7c15ull;
    model *m = calloc(1, sizeof *m);
    world *w = m != NULL ? world_alloc(m) : NULL;
    REQ(w != NULL);
    m->ib = ib;
    m->hp_hook = hp_hook;
    m->gb = gb;
    m->limit = (uint32_t)1 << ib;
    m->gen_max = ((uint32_t)1 << gb) - 1;
    m->issued = 1;
    cur_op = 0;
    int ok = world_create(w, rn.alloc);
    uint64_t spawned = 0, reused = 0, peak = 0;
    for (uint64_t k = 0; k < nops && ok; k++) {
        cur_op++;
        uint64_t dg = 0;
        /* a snapshot now and then, and at least once a run */
        if (harness_below(&rng, 1000) < 2 || k % (nops / 3 + 1) == nops / 6) {
            ok = do_snapshot(&w, &rng, &rn);
        } else {
            uint32_t issued = w->m->issued;
            size_t before = ark_pool_count(w->units);
            ok = step(w, &rng, &rn, &dg);
            size_t after = ark_pool_count(w->units);
            spawned += after > before;
            reused += after > before && w->m->issued == issued;
            peak = after > peak ? after : peak;
        }
        if (ok && k % 32 == 31) {
            ok = compare(w);
        }
    }
    ok = ok && compare(w);
    printf("  %" PRIu64 " ops: %" PRIu64 " spawns (%" PRIu64
           " at reused indices), peak %" PRIu64 " entities, %" PRIu64
           " snapshot round trips\n",
           nops, spawned, reused, peak, rn.snapshots);
    world_free(w);
    REQ(ok);
    if (ta.live_blocks != 0 || ta.bad_frees != 0) {
        harness_fail(__FILE__, __LINE__,
                     "%" PRIu64 " blocks (%" PRIu64 " bytes) left, %" PRIu64
                     " bad frees",
                     ta.live_blocks, ta.live_bytes, ta.bad_frees);
        return 0;
    }
    REQ(!own_alloc || ta.allocs > 0);
    REQ(spawned > 0 && rn.snapshots > 0);
    return 1;
}

/* index_bits 10, gen_bits 4: a world of a few hundred entities, through
 * the allocator path (the test allocator counts leaks). */
TEST(model_world) {
    CHECK(run_model(10, 4, true, true, 1, harness_scaled(12000)));
}

/* index_bits 7, gen_bits 2 on the virtual-memory path: slots retire after
 * four generations, the index space runs out (ARK_EFULL) and is reused
 * before ARK_REUSE_DELAY slots are free. */
TEST(model_world_small_index_space) {
    CHECK(run_model(7, 2, false, true, 2, harness_scaled(5000)));
}

/* Another stream, with hp hookless: its removals take the engine's paths
 * for a keyed container without a hook. */
TEST(model_world_hookless_component) {
    CHECK(run_model(10, 4, true, false, 3, harness_scaled(12000)));
}
