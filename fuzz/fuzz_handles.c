/* SPDX-License-Identifier: MIT */
/*
 * fuzz_handles.c - the handle engine under ark_pool and ark_table against
 * one model, driven by fuzz input; the first byte picks the container.
 *
 * What fuzz_pool.c and fuzz_table.c do not reach: removal hooks that call
 * back into the container. Each on_remove reads its orders from the input
 * (remove or remove_later the element's children or any element, insert
 * while the call's budget lasts, call flush and clear, which must do
 * nothing) and checks, while it runs, that its handle still resolves to
 * the element being removed and that nothing else runs inside it. The
 * model predicts every status (ENULL, EFOREIGN, ERANGE, ESTALE, EFULL),
 * flush's return, and that each removed element gets exactly one
 * on_remove. Any 64-bit value from the input is sealed and unsealed
 * (unseal(seal(x)) == x) and what unseal gives is checked like any
 * handle. A pool's slots are also given back unbuilt (ark__pool_discard,
 * no hook), from hooks too. Allocation failures are injected on demand.
 * Claims (ark_*_claim, insert_at on a claimed handle, unclaim): a claimed
 * handle is never one that is live or claimed, answers ESTALE, is
 * created once and given back once; clear drops it. Once a claim has
 * been made the model no longer predicts which indices are issued (the
 * owner's runs and absorbed claims decide): ERANGE and ESTALE are then
 * both accepted for a handle that names nothing, and EFULL for insert.
 *
 * Input: container/allocator byte, layout byte, tag byte, seal key byte,
 * then operations; a hook takes one byte from the input when it runs.
 */
#include "ark/pool.h"
#include "ark/table.h"
#include "fuzz_common.h"
#include "pool_internal.h"
#include "table_internal.h"

/* Index bits <= 9, generation bits <= 4: at most 511 * 16 handles. */
#define IDS_MAX 8200
#define SLOTS_MAX 512

enum { ST_LIVE = 1, ST_PENDING, ST_DOOMED, ST_DYING, ST_GONE, ST_CLAIMED };
enum { PH_NONE, PH_REMOVE, PH_FLUSH, PH_CLEAR };

typedef struct model {
    bool is_table, has_hook;
    ark_pool *p;
    ark_table *t;
    fuzz_input *in;
    unsigned ib, gb, tb;
    uint64_t tag, gen_max;
    /* per id (from 1) */
    size_t nids;
    ark_handle h[IDS_MAX];
    uint8_t st[IDS_MAX];
    uint8_t hooks[IDS_MAX];
    uint16_t kid[IDS_MAX], sib[IDS_MAX];
    /* per slot index: the id holding it (0 = none) */
    uint16_t owner[SLOTS_MAX];
    uint64_t distinct, retired;
    size_t nlive, nmark, npend, ndoom;
    int phase;
    bool clear_hooks;
    size_t later_in_flush;
    int budget;
    int depth;
    uint16_t dying;
    bool claims; /* a claim was made: issued indices are not predicted */
} model;

static model m;

/* ---- the container, whichever it is ---- */

FUZZ_NO_COVERAGE static ark_status c_insert(uint64_t id, ark_handle *h) {
    if (!m.is_table) {
        return ark_pool_insert(m.p, &id, h);
    }
    size_t r;
    ark_status s = ark_table_insert(m.t, h, &r);
    if (s == ARK_OK) {
        ((uint64_t *)ark_table_column(m.t, 0))[r] = id;
    }
    return s;
}

/* The id of the element h resolves to, or 0. */
FUZZ_NO_COVERAGE static uint64_t c_get(ark_handle h) {
    if (!m.is_table) {
        const uint64_t *e = ark_pool_get(m.p, h);
        return e != NULL ? *e : 0;
    }
    size_t r = ark_table_row(m.t, h);
    if (r == ARK_NO_ROW) {
        return 0;
    }
    FUZZ_REQUIRE(r < ark_table_rows(m.t));
    return ((const uint64_t *)ark_table_column(m.t, 0))[r];
}

static ark_status c_check(ark_handle h) {
    return m.is_table ? ark_table_check(m.t, h) : ark_pool_check(m.p, h);
}
static ark_status c_remove(ark_handle h) {
    return m.is_table ? ark_table_remove(m.t, h) : ark_pool_remove(m.p, h);
}
static ark_status c_remove_later(ark_handle h) {
    return m.is_table ? ark_table_remove_later(m.t, h)
                      : ark_pool_remove_later(m.p, h);
}
static ark_status c_claim(ark_handle *out, size_t n) {
    return m.is_table ? ark_table_claim(m.t, out, n)
                      : ark_pool_claim(m.p, out, n);
}
static ark_status c_unclaim(ark_handle h) {
    return m.is_table ? ark_table_unclaim(m.t, h) : ark_pool_unclaim(m.p, h);
}
FUZZ_NO_COVERAGE static ark_status c_insert_at(ark_handle h, uint64_t id) {
    if (!m.is_table) {
        return ark_pool_insert_at(m.p, h, &id);
    }
    size_t r;
    ark_status s = ark_table_insert_at(m.t, h, &r);
    if (s == ARK_OK) {
        ((uint64_t *)ark_table_column(m.t, 0))[r] = id;
    }
    return s;
}
static size_t c_flush(void) {
    return m.is_table ? ark_table_flush(m.t) : ark_pool_flush(m.p);
}
static void c_clear(bool run_hook) {
    if (m.is_table) {
        ark_table_clear(m.t, run_hook);
    } else {
        ark_pool_clear(m.p, run_hook);
    }
}
static size_t c_count(void) {
    return m.is_table ? ark_table_count(m.t) : ark_pool_count(m.p);
}
static ark_status c_reserve(size_t n) {
    return m.is_table ? ark_table_reserve(m.t, n) : ark_pool_reserve(m.p, n);
}
static ark_handle c_seal(ark_handle h) {
    return m.is_table ? ark_table_seal(m.t, h) : ark_pool_seal(m.p, h);
}
static ark_handle c_unseal(ark_handle w) {
    return m.is_table ? ark_table_unseal(m.t, w) : ark_pool_unseal(m.p, w);
}
static ark_status c_validate(void) {
    return m.is_table ? ark__table_validate(m.t, false)
                      : ark_pool_validate(m.p);
}

/* ---- the model ---- */

static unsigned width(void) { return m.ib + m.gb + m.tb; }

/* The status check must give for any value. */
FUZZ_NO_COVERAGE static ark_status want_status(ark_handle h) {
    if (h == ARK_NULL_HANDLE) {
        return ARK_ENULL;
    }
    if ((h >> (m.ib + m.gb)) != m.tag) {
        return ARK_EFOREIGN;
    }
    uint64_t idx = h & (((uint64_t)1 << m.ib) - 1);
    if (idx == 0 || idx > m.distinct) {
        return ARK_ERANGE;
    }
    uint16_t id = m.owner[idx];
    if (id != 0 && m.h[id] == h &&
        (m.st[id] == ST_LIVE || m.st[id] == ST_DYING)) {
        return ARK_OK;
    }
    return ARK_ESTALE;
}

/* s is what the model wants, want, or (after a claim) the other of
 * ERANGE and ESTALE for a handle that names nothing of the model's. */
FUZZ_NO_COVERAGE static bool agrees(ark_status s, ark_status want,
                                    ark_handle h) {
    if (s == want) {
        return true;
    }
    uint64_t idx = h & (((uint64_t)1 << m.ib) - 1);
    return m.claims && m.owner[idx] == 0 &&
           (want == ARK_ERANGE || want == ARK_ESTALE) &&
           (s == ARK_ERANGE || s == ARK_ESTALE) && idx != 0;
}

/* Any value: check, get, remove and remove_later agree with the model
 * (the mutators only when the value is not live). */
FUZZ_NO_COVERAGE static void probe(ark_handle h, bool mutate) {
    ark_status want = want_status(h);
    ark_status got = c_check(h);
    FUZZ_REQUIRE(agrees(got, want, h));
    uint64_t id = c_get(h);
    if (want == ARK_OK) {
        FUZZ_REQUIRE(id == m.owner[h & (((uint64_t)1 << m.ib) - 1)]);
    } else {
        FUZZ_REQUIRE(id == 0);
        if (mutate) {
            FUZZ_REQUIRE(c_remove(h) == got);
            FUZZ_REQUIRE(c_remove_later(h) == got);
        }
    }
}

static void gone(uint16_t id) {
    m.st[id] = ST_GONE;
    uint64_t idx = m.h[id] & (((uint64_t)1 << m.ib) - 1);
    FUZZ_REQUIRE(m.owner[idx] == id);
    m.owner[idx] = 0;
    uint64_t gen = (m.h[id] >> m.ib) & (((uint64_t)1 << m.gb) - 1);
    m.retired += gen == m.gen_max;
}

static void settle(void) {
    if (m.dying != 0) {
        m.nmark--;
        gone(m.dying);
        m.dying = 0;
    }
}

/* Insert; EFULL exactly when every index is issued and none is free. */
static uint16_t insert(uint16_t parent) {
    uint64_t limit = (uint64_t)1 << m.ib;
    bool full =
        m.distinct == limit - 1 && m.nlive + m.nmark + m.retired == m.distinct;
    FUZZ_REQUIRE(m.nids < IDS_MAX);
    uint16_t id = (uint16_t)m.nids;
    ark_handle h = 0;
    ark_status s = c_insert(id, &h);
    if (s == ARK_ENOMEM || (m.claims && s == ARK_EFULL)) {
        return 0;
    }
    if (full && !m.claims) {
        FUZZ_REQUIRE(s == ARK_EFULL);
        return 0;
    }
    FUZZ_REQUIRE(s == ARK_OK);
    FUZZ_REQUIRE(want_status(h) != ARK_OK); /* not live already */
    FUZZ_REQUIRE((h >> (m.ib + m.gb)) == m.tag);
    uint64_t idx = h & (limit - 1);
    FUZZ_REQUIRE(idx >= 1 && (m.claims || idx <= m.distinct + 1));
    FUZZ_REQUIRE(m.owner[idx] == 0); /* not live, marked or claimed */
    m.distinct = idx > m.distinct ? idx : m.distinct;
    m.owner[idx] = id;
    m.nids++;
    m.h[id] = h;
    m.st[id] = ST_LIVE;
    m.nlive++;
    if (parent != 0) {
        m.sib[id] = m.kid[parent];
        m.kid[parent] = id;
    }
    return id;
}

static void remove_id(uint16_t id, bool later) {
    uint8_t was = m.st[id];
    ark_status want = was == ST_LIVE || was == ST_DYING ? ARK_OK : ARK_ESTALE;
    if (was == ST_LIVE) {
        m.nlive--;
        m.nmark++;
        m.st[id] = later ? ST_PENDING : ST_DOOMED;
        if (later) {
            m.npend++;
            m.later_in_flush += m.phase == PH_FLUSH;
        } else {
            m.ndoom++;
        }
    }
    size_t before = c_count();
    ark_status s = later ? c_remove_later(m.h[id]) : c_remove(m.h[id]);
    if (s == ARK_ENOMEM && was == ST_LIVE &&
        (later || m.depth > 0)) { /* a list could not grow: unchanged */
        FUZZ_REQUIRE(m.st[id] == (later ? ST_PENDING : ST_DOOMED));
        m.st[id] = ST_LIVE;
        m.nlive++;
        m.nmark--;
        if (later) {
            m.npend--;
            m.later_in_flush -= m.phase == PH_FLUSH;
        } else {
            m.ndoom--;
        }
        return;
    }
    FUZZ_REQUIRE(s == want);
    if (was == ST_DYING) {
        FUZZ_REQUIRE(c_count() == before);
    }
    if (was == ST_LIVE && !later && !m.has_hook) { /* gone at once */
        m.nmark--;
        m.ndoom--;
        gone(id);
    }
}

/* Pool only: give id's slot back at once with no hook (ark.hpp's unbuilt
 * element); the one whose hook runs is left alone. */
static void discard_id(uint16_t id) {
    uint8_t was = m.st[id];
    ark_status want = was == ST_LIVE || was == ST_DYING ? ARK_OK : ARK_ESTALE;
    FUZZ_REQUIRE(ark__pool_discard(m.p, m.h[id]) == want);
    if (was == ST_LIVE) {
        m.nlive--;
        gone(id);
    }
}

/* Claim n handles: each a new id, claimed; none live or claimed. */
static void claim(size_t n) {
    ark_handle out[8];
    ark_status s = c_claim(out, n);
    m.claims = true;
    if (s == ARK_EFULL) {
        return;
    }
    FUZZ_REQUIRE(s == ARK_OK);
    uint64_t limit = (uint64_t)1 << m.ib;
    for (size_t k = 0; k < n && m.nids < IDS_MAX; k++) {
        ark_handle h = out[k];
        uint64_t idx = h & (limit - 1);
        FUZZ_REQUIRE((h >> (m.ib + m.gb)) == m.tag && idx != 0);
        FUZZ_REQUIRE(m.owner[idx] == 0);
        FUZZ_REQUIRE(c_check(h) == ARK_ESTALE && c_get(h) == 0);
        uint16_t id = (uint16_t)m.nids++;
        m.owner[idx] = id;
        m.h[id] = h;
        m.st[id] = ST_CLAIMED;
        m.distinct = idx > m.distinct ? idx : m.distinct;
    }
}

/* Create id's element at its handle: the claim ends; any other id's
 * handle is refused. */
static void commit(uint16_t id) {
    ark_status s = c_insert_at(m.h[id], id);
    if (m.st[id] != ST_CLAIMED) {
        FUZZ_REQUIRE(s != ARK_OK);
        return;
    }
    if (s == ARK_ENOMEM) {
        FUZZ_REQUIRE(c_check(m.h[id]) == ARK_ESTALE);
        return;
    }
    FUZZ_REQUIRE(s == ARK_OK);
    m.st[id] = ST_LIVE;
    m.nlive++;
    FUZZ_REQUIRE(c_get(m.h[id]) == id);
}

/* Give id's claimed handle back (once). */
static void unclaim(uint16_t id) {
    ark_status s = c_unclaim(m.h[id]);
    if (m.st[id] != ST_CLAIMED) {
        FUZZ_REQUIRE(s == ARK_ESTALE);
        return;
    }
    if (s == ARK_ENOMEM) {
        return;
    }
    FUZZ_REQUIRE(s == ARK_OK);
    gone(id);
    FUZZ_REQUIRE(c_unclaim(m.h[id]) == ARK_ESTALE);
}

/* An id from the input (0 = none). */
static uint16_t pick(void) {
    if (m.nids <= 1) {
        return 0;
    }
    uint16_t r = (uint16_t)(fuzz_u8(m.in) | fuzz_u8(m.in) << 8);
    return (uint16_t)(1 + r % (m.nids - 1));
}

static void on_remove(void *elem, ark_handle h, void *user) {
    (void)user;
    m.depth++;
    FUZZ_REQUIRE(m.depth == 1); /* no hook inside another */
    settle();
    uint64_t id = c_get(h);
    FUZZ_REQUIRE(id >= 1 && id < m.nids && m.h[id] == h);
    FUZZ_REQUIRE(c_check(h) == ARK_OK);
    if (m.is_table) {
        FUZZ_REQUIRE(elem == NULL);
    } else {
        FUZZ_REQUIRE(elem == ark_pool_get(m.p, h));
        FUZZ_REQUIRE(ark_pool_handle_of(m.p, elem) == h);
    }
    uint8_t was = m.st[id];
    FUZZ_REQUIRE(
        was == ST_DOOMED ||
        (was == ST_PENDING && (m.phase == PH_FLUSH || m.phase == PH_CLEAR)) ||
        (was == ST_LIVE && m.phase == PH_CLEAR && m.clear_hooks));
    FUZZ_REQUIRE(++m.hooks[id] == 1); /* exactly once */
    if (was == ST_LIVE) {
        m.nlive--;
        m.nmark++;
    } else if (was == ST_PENDING) {
        m.npend--;
    } else {
        m.ndoom--;
    }
    m.st[id] = ST_DYING;
    m.dying = (uint16_t)id;
    FUZZ_REQUIRE(c_count() == m.nlive);
    uint8_t a = fuzz_u8(m.in);
    if (a & 0x01) {
        FUZZ_REQUIRE(c_validate() == ARK_OK);
    }
    if (a & 0x02) { /* itself again: no-ops */
        remove_id((uint16_t)id, a & 0x04);
        FUZZ_REQUIRE(c_flush() == 0);
        c_clear(a & 0x08);
        FUZZ_REQUIRE(c_count() == m.nlive && c_get(h) == id);
    }
    if (a & 0x30) { /* children: remove (0x10) or remove_later (0x20) */
        for (uint16_t k = m.kid[id]; k != 0; k = m.sib[k]) {
            remove_id(k, (a & 0x30) == 0x20 || ((a & 0x30) == 0x30 && k % 2));
        }
    }
    if (a & 0x40) { /* anyone, live or not */
        uint16_t other = pick();
        uint8_t b = other != 0 ? fuzz_u8(m.in) : 0;
        if (other != 0 && (b & 2) && !m.is_table) {
            discard_id(other);
        } else if (other != 0) {
            remove_id(other, b & 1);
        }
    }
    if ((a & 0x80) && m.budget > 0) {
        m.budget--;
        insert(pick());
    }
    m.depth--;
}

/* After a top-level call: nothing asked for is left undone. */
FUZZ_NO_COVERAGE static void after(bool full) {
    settle();
    m.phase = PH_NONE;
    m.budget = 0;
    FUZZ_REQUIRE(m.depth == 0 && m.ndoom == 0 && m.nmark == m.npend);
    FUZZ_REQUIRE(c_count() == m.nlive);
    FUZZ_REQUIRE(c_validate() == ARK_OK);
    if (!full) {
        return;
    }
    for (size_t id = 1; id < m.nids; id++) {
        if (m.st[id] != ST_GONE) {
            FUZZ_REQUIRE(m.owner[m.h[id] & (((uint64_t)1 << m.ib) - 1)] == id);
        }
        probe(m.h[id], false);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    memset(&m, 0, sizeof m);
    m.in = &in;
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    uint8_t kind = fuzz_u8(&in);
    uint8_t shape = fuzz_u8(&in);
    m.is_table = kind & 1;
    m.ib = 2 + (shape & 7);
    m.gb = 1 + ((shape >> 3) & 3);
    m.tb = (shape >> 5) & 3;
    m.tag = m.tb ? fuzz_u8(&in) & ((1u << m.tb) - 1) : 0;
    m.gen_max = ((uint64_t)1 << m.gb) - 1;
    uint64_t key = fuzz_u8(&in) | 1; /* fixed keys: reproducible */
    const ark_allocator *alloc = (kind & 2) ? &fa.base : NULL;
    bool hook = !(kind & 4);
    m.has_hook = hook;
    if (m.is_table) {
        static const size_t cols[2] = {sizeof(uint64_t), 3};
        ark_table_config cfg = {.column_sizes = cols,
                                .ncolumns = 2,
                                .index_bits = m.ib,
                                .gen_bits = m.gb,
                                .tag_bits = m.tb,
                                .tag = m.tag,
                                .seal_key = key,
                                .allocator = alloc,
                                .on_remove = hook ? on_remove : NULL};
        if (ark_table_create(&m.t, &cfg) != ARK_OK) {
            return 0;
        }
    } else {
        ark_pool_config cfg = {.elem_size = sizeof(uint64_t),
                               .elem_align = 8,
                               .index_bits = m.ib,
                               .gen_bits = m.gb,
                               .tag_bits = m.tb,
                               .tag = m.tag,
                               .seal_key = key,
                               .allocator = alloc,
                               .on_remove = hook ? on_remove : NULL};
        if (ark_pool_create(&m.p, &cfg) != ARK_OK) {
            return 0;
        }
    }
    m.nids = 1;
    unsigned steps = 0;
    while (!fuzz_done(&in)) {
        uint8_t op = fuzz_u8(&in);
        fa.fail_next = (op & 0x80) && alloc != NULL;
        fa.fail_skip = 0;
        int budget = (op >> 4) & 3;
        switch (op & 0x0f) {
        case 0:
        case 1: /* insert, as a child of an element or not */
            insert((op & 1) ? pick() : 0);
            break;
        case 2:
        case 3: { /* remove, remove_later an element (any state) */
            uint16_t id = pick();
            if (id != 0) {
                m.phase = (op & 1) ? PH_NONE : PH_REMOVE;
                m.budget = budget;
                remove_id(id, op & 1);
            }
            break;
        }
        case 4: { /* flush */
            m.phase = PH_FLUSH;
            m.budget = budget;
            m.later_in_flush = 0;
            size_t pending = m.npend;
            size_t n = c_flush();
            settle();
            for (size_t id = 1; id < m.nids && !m.has_hook; id++) {
                if (m.st[id] == ST_PENDING) {
                    m.nmark--;
                    m.npend--;
                    gone((uint16_t)id);
                }
            }
            FUZZ_REQUIRE(n == pending + m.later_in_flush && m.npend == 0);
            break;
        }
        case 5: { /* clear */
            bool run = op & 0x40;
            m.phase = PH_CLEAR;
            m.clear_hooks = run && hook;
            m.budget = budget;
            c_clear(run);
            settle();
            FUZZ_REQUIRE(c_count() == 0);
            for (size_t id = 1; id < m.nids; id++) {
                if (m.st[id] != ST_GONE) {
                    /* else its hook ran; a claim is dropped */
                    FUZZ_REQUIRE(!m.clear_hooks || m.st[id] == ST_CLAIMED);
                    gone((uint16_t)id);
                }
            }
            m.nlive = m.nmark = m.npend = 0;
            FUZZ_REQUIRE(c_flush() == 0);
            break;
        }
        case 6: /* an arbitrary value: as a handle, and unsealed */
        case 7: {
            uint64_t x = fuzz_u64(&in);
            ark_handle w = c_seal(x), u = c_unseal(x);
            FUZZ_REQUIRE(c_unseal(w) == x && c_seal(u) == x);
            if (width() < 64) {
                uint64_t hi = ~(((uint64_t)1 << width()) - 1);
                FUZZ_REQUIRE((w & hi) == (x & hi) && (u & hi) == (x & hi));
            }
            probe(x, op & 1);
            probe(u, op & 1);
            break;
        }
        case 8: { /* an element's handle sealed, bits flipped, unsealed */
            uint16_t id = pick();
            if (id != 0) {
                ark_handle w = c_seal(m.h[id]);
                FUZZ_REQUIRE(c_unseal(w) == m.h[id]);
                probe(c_unseal(w), false);
                probe(c_unseal(w ^ ((uint64_t)1 << (fuzz_u8(&in) % 64))),
                      false);
            }
            break;
        }
        case 9: { /* reserve */
            size_t n = fuzz_u8(&in) * 4;
            ark_status s = c_reserve(n);
            FUZZ_REQUIRE(s == ARK_OK || s == ARK_EFULL || s == ARK_ENOMEM);
            break;
        }
        case 10: { /* discard (pool) */
            uint16_t id = pick();
            if (id != 0 && !m.is_table) {
                discard_id(id);
            }
            break;
        }
        case 11: /* claim 1 to 8 */
            claim(1 + (size_t)((op >> 4) & 7));
            break;
        case 12: { /* insert_at an id's handle: a claim's is created */
            uint16_t id = pick();
            if (id != 0) {
                commit(id);
            }
            break;
        }
        case 13: { /* unclaim an id's handle */
            uint16_t id = pick();
            if (id != 0) {
                unclaim(id);
            }
            break;
        }
        default:
            break;
        }
        fa.fail_next = 0;
        after((++steps & 15) == 0);
    }
    after(true);
    if (m.is_table) {
        ark_table_destroy(m.t);
    } else {
        ark_pool_destroy(m.p);
    }
    FUZZ_REQUIRE(fa.live == 0);
    return 0;
}
