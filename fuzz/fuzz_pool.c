/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pool.c - ark_pool against a model, driven by fuzz input.
 *
 * The first bytes choose the handle layout (small index and generation
 * spaces, so retirement and EFULL are reached); the rest is a sequence of
 * operations. Any 64-bit value the input supplies is also tried as a
 * handle, and sealed and unsealed. Allocation failures are injected on
 * demand. Hooks that call back: fuzz_handles.c.
 */
#include "ark/pool.h"
#include "fuzz_common.h"
#include "pool_internal.h"

#define MODEL_MAX 4096

typedef struct entry {
    ark_handle h;
    uint64_t value;
    int pending;
} entry;

typedef struct model {
    entry live[MODEL_MAX]; /* live and pending elements */
    size_t n;
    ark_handle dead[256]; /* recently removed handles */
    size_t ndead;
    uint64_t hooks; /* on_remove calls expected so far */
} model;

static uint64_t hook_calls;

static void on_remove(void *elem, ark_handle h, void *user) {
    (void)elem;
    (void)h;
    (void)user;
    hook_calls++;
}

static entry *find(model *m, ark_handle h) {
    for (size_t i = 0; i < m->n; i++) {
        if (m->live[i].h == h) {
            return &m->live[i];
        }
    }
    return NULL;
}

static void bury(model *m, size_t k) {
    m->dead[m->ndead++ % 256] = m->live[k].h;
    m->live[k] = m->live[--m->n];
}

static void drop_pending(model *m) {
    for (size_t k = m->n; k-- > 0;) {
        if (m->live[k].pending) {
            bury(m, k);
        }
    }
}

static size_t live_count(const model *m) {
    size_t c = 0;
    for (size_t i = 0; i < m->n; i++) {
        c += !m->live[i].pending;
    }
    return c;
}

static void check_handle(const ark_pool *p, model *m, ark_handle h) {
    entry *e = find(m, h);
    uint64_t *v = ark_pool_get(p, h);
    if (e != NULL && !e->pending) {
        FUZZ_REQUIRE(v != NULL && *v == e->value);
        FUZZ_REQUIRE(ark_pool_check(p, h) == ARK_OK);
        FUZZ_REQUIRE(ark_pool_handle_of(p, v) == h);
    } else {
        FUZZ_REQUIRE(v == NULL);
        FUZZ_REQUIRE(ark_pool_check(p, h) != ARK_OK);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    static model m;
    memset(&m, 0, sizeof m);
    hook_calls = 0;
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    uint8_t shape = fuzz_u8(&in);
    ark_pool_config cfg = {.elem_size = 8,
                           .elem_align = 8,
                           .index_bits = 2 + (shape & 7),
                           .gen_bits = 1 + ((shape >> 3) & 3),
                           .tag_bits = (shape >> 5) & 3,
                           .allocator = (shape & 0x80) ? &fa.base : NULL,
                           .on_remove = on_remove};
    cfg.tag = cfg.tag_bits ? (fuzz_u8(&in) & ((1u << cfg.tag_bits) - 1)) : 0;
    ark_pool *p;
    if (ark_pool_create(&p, &cfg) != ARK_OK) {
        return 0;
    }
    while (!fuzz_done(&in)) {
        uint8_t op = fuzz_u8(&in);
        fa.fail_next = (op & 0x80) && cfg.allocator != NULL;
        switch (op & 0x0f) {
        case 0:
        case 1: { /* insert */
            uint64_t v = fuzz_u64(&in);
            ark_handle h;
            size_t before = ark_pool_count(p);
            ark_status s = ark_pool_insert(p, &v, &h);
            if (s == ARK_OK) {
                FUZZ_REQUIRE(m.n < MODEL_MAX);
                FUZZ_REQUIRE(find(&m, h) == NULL && h != ARK_NULL_HANDLE);
                m.live[m.n++] = (entry){h, v, 0};
            } else {
                FUZZ_REQUIRE(s == ARK_EFULL || s == ARK_ENOMEM);
                FUZZ_REQUIRE(ark_pool_count(p) == before);
            }
            break;
        }
        case 2:
        case 3: /* remove, or remove_later, a model element */
            if (m.n > 0) {
                size_t k = fuzz_u8(&in) % m.n;
                ark_status s = (op & 1) ? ark_pool_remove_later(p, m.live[k].h)
                                        : ark_pool_remove(p, m.live[k].h);
                if (m.live[k].pending) {
                    FUZZ_REQUIRE(s == ARK_ESTALE);
                } else if (s == ARK_OK) {
                    m.hooks++;
                    if (op & 1) {
                        m.live[k].pending = 1;
                    } else {
                        bury(&m, k);
                    }
                } else {
                    FUZZ_REQUIRE((op & 1) && s == ARK_ENOMEM);
                }
            }
            break;
        case 4: { /* flush */
            size_t pending = m.n - live_count(&m);
            FUZZ_REQUIRE(ark_pool_flush(p) == pending);
            drop_pending(&m);
            FUZZ_REQUIRE(hook_calls == m.hooks);
            break;
        }
        case 5: /* an arbitrary 64-bit handle */
            check_handle(p, &m, fuzz_u64(&in));
            break;
        case 6: /* a live, pending or dead handle with a bit flipped */
            if (m.n > 0) {
                ark_handle h = m.live[fuzz_u8(&in) % m.n].h;
                check_handle(p, &m, h);
                check_handle(p, &m, h ^ ((uint64_t)1 << (fuzz_u8(&in) % 64)));
            }
            if (m.ndead > 0) {
                check_handle(
                    p, &m,
                    m.dead[fuzz_u8(&in) % (m.ndead < 256 ? m.ndead : 256)]);
            }
            break;
        case 7: { /* iterate: exactly the live elements */
            size_t n = 0;
            for (ark_pool_iter it = ark_pool_iter_begin(p);
                 ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
                entry *e = find(&m, it.handle);
                FUZZ_REQUIRE(e != NULL && !e->pending);
                FUZZ_REQUIRE(*(uint64_t *)it.elem == e->value);
                n++;
            }
            FUZZ_REQUIRE(n == live_count(&m));
            break;
        }
        case 8: /* clear */
            ark_pool_clear(p, op & 0x10);
            if (op & 0x10) {
                m.hooks += live_count(&m); /* pending ones were counted */
            } else {
                m.hooks -= m.n - live_count(&m); /* pending ones never run */
            }
            while (m.n > 0) {
                bury(&m, m.n - 1);
            }
            FUZZ_REQUIRE(hook_calls == m.hooks);
            break;
        case 9: { /* reserve */
            size_t n = fuzz_u8(&in) * 4;
            ark_status s = ark_pool_reserve(p, n);
            FUZZ_REQUIRE(s == ARK_OK || s == ARK_EFULL || s == ARK_ENOMEM);
            break;
        }
        case 10: { /* seal and unseal an arbitrary value, and a handle */
            uint64_t x = fuzz_u64(&in);
            FUZZ_REQUIRE(ark_pool_unseal(p, ark_pool_seal(p, x)) == x);
            FUZZ_REQUIRE(ark_pool_seal(p, ark_pool_unseal(p, x)) == x);
            check_handle(p, &m, ark_pool_unseal(p, x));
            if (m.n > 0) {
                ark_handle h = m.live[fuzz_u8(&in) % m.n].h;
                ark_handle w = ark_pool_seal(p, h);
                FUZZ_REQUIRE(ark_pool_unseal(p, w) == h);
                check_handle(p, &m,
                             ark_pool_unseal(
                                 p, w ^ ((uint64_t)1 << (fuzz_u8(&in) % 64))));
            }
            break;
        }
        default:
            break;
        }
        FUZZ_REQUIRE(ark_pool_count(p) == live_count(&m));
        FUZZ_REQUIRE(ark_pool_validate(p) == ARK_OK);
    }
    ark_pool_destroy(p);
    FUZZ_REQUIRE(fa.live == 0);
    return 0;
}
