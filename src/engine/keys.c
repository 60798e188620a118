/* SPDX-License-Identifier: MIT */
/*
 * keys.c - key spaces and keyed containers: one handle per entity across
 * the containers that hold its components and tags (see slots.h, "keyed
 * containers and key spaces").
 *
 * A keyed container's slot i belongs to entity i: its stamp is the
 * entity's generation + 1 while the element lives, 0 while the slot is
 * vacant or its element is marked. The key space keeps every live element
 * of a keyed container owned by a live (or dying) entity of the same
 * generation: an element is created only for a live entity, and the
 * entity's removal removes it. So a vacant-or-live test of slot i is
 * exact, and a new entity at a reused index finds its slot vacant. The
 * one exception is an element marked with remove_later when its entity
 * dies: it stays marked until its container's flush, and a new entity at
 * that index cannot get an element there until then (ARK_EEXIST).
 */
#include "engine/slots.h"

#include <stdlib.h>
#include <string.h>

/* ---- attaching --------------------------------------------------------- */

/* The attached entry of keyed engine s (the cascade's callbacks). */
static void keyed_cascade(void *c, ark_handle h, bool hook) {
    ark__slots_keyed_remove(c, h, hook);
}

static void keyed_detach(void *c) { ((ark__slots *)c)->keys = NULL; }

ark_status ark__slots_init_keyed(ark__slots *s, ark__slots *keys) {
    s->keyed = true;
    s->keys = keys;
    s->seal_bits = keys->seal_bits;
    s->seal_lo = keys->seal_lo;
    memcpy(s->seal_keys, keys->seal_keys, sizeof s->seal_keys);
    ark__slots_refresh_fast(s);
    ark__slots_attached a = {s,    NULL,         NULL,  keyed_cascade,
                             NULL, keyed_detach, false, NULL};
    return ark__slots_attach(keys, &a);
}

ark_status ark__slots_attach(ark__slots *k, const ark__slots_attached *a) {
    ark__slots_attached *l =
        ark__grow_array(&k->alloc, k->attached, &k->attached_cap, k->nattached,
                        k->nattached + 1, sizeof *l);
    if (l == NULL) {
        return ARK_ENOMEM;
    }
    k->attached = l;
    l[k->nattached++] = *a;
    k->ntags += a->tag;
    k->nhooked += !a->tag && ((const ark__slots *)a->c)->has_hook;
    k->attach_changes++;
    ark__slots_refresh_fast(k);
    return ARK_OK;
}

void ark__slots_detach(ark__slots *k, const void *c) {
    for (size_t j = 0; j < k->nattached; j++) {
        if (k->attached[j].c == c) {
            const ark__slots_attached *a = &k->attached[j];
            k->ntags -= a->tag;
            k->nhooked -= !a->tag && ((const ark__slots *)a->c)->has_hook;
            k->attach_changes++;
            memmove(k->attached + j, k->attached + j + 1,
                    (k->nattached - j - 1) * sizeof *k->attached);
            k->nattached--;
            ark__slots_refresh_fast(k);
            return;
        }
    }
}

void ark__slots_fini_keys(ark__slots *s) {
    if (s->keyed && s->keys != NULL) {
        ark__slots_detach(s->keys, s);
    }
    for (size_t j = 0; j < s->nattached; j++) {
        s->attached[j].detach(s->attached[j].c);
    }
    ark__free(&s->alloc, s->attached, s->attached_cap * sizeof *s->attached);
    s->attached = NULL;
    s->nattached = 0;
    s->attached_cap = 0;
}

/* ---- an entity's removal ----------------------------------------------- */

bool ark__slots_key_live(const ark__slots *k, ark_handle h) {
    uint64_t i;
    char *slot;
    return ark__slots_find(k, h, &i, &slot) == ARK_OK && i != k->dying;
}

ark_status ark__slots_untag(ark__slots *k, ark_handle h) {
    if (k->ntags == 0) {
        return ARK_OK;
    }
    /* Every set first takes what its removal may need, so the removals
     * after cannot fail: all or nothing. A callback only touches its own
     * set, so the list cannot change meanwhile. */
    for (size_t j = 0; j < k->nattached; j++) {
        const ark__slots_attached *a = &k->attached[j];
        if (a->tag && a->prepare != NULL) {
            ark_status st = a->prepare(a->c, h);
            if (st != ARK_OK) {
                return st;
            }
        }
    }
    for (size_t j = 0; j < k->nattached; j++) {
        if (k->attached[j].tag) {
            k->attached[j].remove(k->attached[j].c, h, false);
        }
    }
    return ARK_OK;
}

/* The indices of pending[from, from + n) into ids, ascending (each
 * entity is marked once). A batch that is a fair share of the entities is
 * sorted through a bitmap of them, O(issued / 64 + n); a small one by
 * comparisons, as is any when the bitmap cannot be had. */
static void sort_ids(const ark__slots *k, size_t from, size_t n,
                     uint32_t *ids) {
    for (size_t e = 0; e < n; e++) {
        ids[e] = (uint32_t)(k->pending[from + e] & UINT32_MAX);
    }
    size_t words = (size_t)((k->v->issued + 63) >> 6), bytes = words * 8;
    uint64_t *bits = n * 16 < words ? NULL : ark__alloc(&k->alloc, bytes, 0);
    if (bits == NULL) {
        qsort(ids, n, sizeof *ids, ark__cmp_u32);
        return;
    }
    memset(bits, 0, bytes);
    for (size_t e = 0; e < n; e++) {
        bits[ids[e] >> 6] |= (uint64_t)1 << (ids[e] & 63);
    }
    size_t out = 0;
    for (size_t w = 0; w < words; w++) {
        for (uint64_t b = bits[w]; b != 0; b &= b - 1) {
            ids[out++] = (uint32_t)(w << 6 | ark__ctz64(b));
        }
    }
    ark__free(&k->alloc, bits, bytes);
}

ark_status ark__slots_untag_batch(ark__slots *k, size_t from, size_t to) {
    size_t n = to - from, bytes = n * sizeof(uint32_t);
    bool tags = false;
    for (size_t j = 0; j < k->nattached; j++) {
        tags = tags || k->attached[j].tag;
    }
    if (!tags || n == 0) {
        return ARK_OK;
    }
    uint32_t *ids = ark__alloc(&k->alloc, bytes, 0);
    if (ids == NULL) {
        return ARK_ENOMEM;
    }
    sort_ids(k, from, n, ids);
    /* Every set first takes what its removal may need, so that no set
     * loses the batch's ids unless all do: a batch left marked keeps its
     * tags in every set. */
    ark_status st = ARK_OK;
    for (size_t j = 0; j < k->nattached && st == ARK_OK; j++) {
        const ark__slots_attached *a = &k->attached[j];
        if (a->tag && a->prepare_ids != NULL) {
            st = a->prepare_ids(a->c, ids, n);
        }
    }
    for (size_t j = 0; j < k->nattached && st == ARK_OK; j++) {
        const ark__slots_attached *a = &k->attached[j];
        if (a->tag && a->remove_ids != NULL) {
            st = a->remove_ids(a->c, ids, n);
        }
    }
    ark__free(&k->alloc, ids, bytes);
    return st;
}

void ark__slots_prefetch(const ark__slots *k, uint64_t i) {
    for (size_t j = 0; j < k->nattached; j++) {
        if (!k->attached[j].tag) {
            const ark__slots *s = k->attached[j].c;
            if (i < s->v->cap) {
                ARK__PREFETCH_W(ark__slots_at(s->v, i));
            }
        }
    }
}

void ark__slots_cascade(ark__slots *k, ark_handle h) {
    /* A hook run here may create or destroy keyed containers (attach,
     * detach), which moves the list: then the walk starts over, removing
     * again being a no-op for a container that holds nothing for h. An
     * element a hook adds is refused, the entity being dying. */
    uint64_t seen = k->attach_changes;
    for (size_t j = 0; j < k->nattached; j++) {
        if (!k->attached[j].tag) {
            k->attached[j].remove(k->attached[j].c, h, !k->quiet);
            if (k->attach_changes != seen) {
                seen = k->attach_changes;
                j = (size_t)-1;
            }
        }
    }
}

void ark__slots_clear_tags(ark__slots *k) {
    for (size_t j = 0; j < k->nattached; j++) {
        if (k->attached[j].tag && k->attached[j].clear != NULL) {
            k->attached[j].clear(k->attached[j].c);
        }
    }
}

/* ---- a keyed container's elements -------------------------------------- */

ark_status ark__slots_keyed_grow(ark__slots *s, uint64_t want) {
    want = want < s->limit ? want : s->limit;
    ark_status st = want > s->v->cap ? s->ops->grow(s->owner, want) : ARK_OK;
    /* Whatever storage came (all of it, or some before a failure), its
     * slots read stamp 0: they are issued, vacant. */
    if (s->v->cap > s->v->issued) {
        s->vacant += s->v->cap - s->v->issued;
        s->v->issued = s->v->cap;
    }
    return st;
}

/* Whether slot i of keyed s holds an element marked by remove_later. */
static bool keyed_marked(const ark__slots *s, uint64_t i) {
    for (size_t k = s->pending_done; k < s->npending; k++) {
        if ((s->pending[k] & UINT32_MAX) == i) {
            return true;
        }
    }
    for (size_t k = s->doomed_done; k < s->ndoomed; k++) {
        if ((s->doomed[k] & UINT32_MAX) == i) {
            return true;
        }
    }
    return false;
}

ark_status ark__slots_keyed_check(const ark__slots *s, ark_handle h) {
    const ark__slots *k = s->keys;
    if (k == NULL) {
        return ARK_EINVAL; /* its key space is gone */
    }
    /* The entity: live, and not being removed (nothing new for it). */
    uint64_t i;
    char *slot;
    ark_status st = ark__slots_find(k, h, &i, &slot);
    if (st != ARK_OK || i == k->dying) {
        return st != ARK_OK ? st : ARK_ESTALE;
    }
    /* Its slot here: vacant (a marked element holds it until the flush). */
    if (i < s->v->cap &&
        (*ark__slots_stamp(ark__slots_at(s->v, i)) != 0 || i == s->dying ||
         (s->held != 0 && keyed_marked(s, i)))) {
        return ARK_EEXIST;
    }
    return ARK_OK;
}

ark_status ark__slots_keyed_take(ark__slots *s, ark_handle h, uint64_t *index,
                                 char **slot) {
    uint64_t i = h & s->v->layout.index_mask;
    if (i >= s->v->cap) {
        /* At least doubling, so entities gaining elements in index order
         * cost amortized O(1); never past the key space's storage, which
         * bounds what a far index can make s allocate. */
        uint64_t want = s->v->cap * 2 > i + 1 ? s->v->cap * 2 : i + 1;
        uint64_t room = s->keys->v->cap > i + 1 ? s->keys->v->cap : i + 1;
        ark_status st = ark__slots_keyed_grow(s, want < room ? want : room);
        if (st != ARK_OK && i >= s->v->cap) {
            return st;
        }
    }
    const ark__handle_layout *l = &s->v->layout;
    char *p = ark__slots_at(s->v, i);
    *ark__slots_stamp(p) = (uint32_t)((h >> l->index_bits) & l->gen_mask) + 1;
    s->vacant--;
    *index = i;
    *slot = p;
    return ARK_OK;
}

ark_status ark__slots_keyed_valid(const ark__slots *s) {
    const ark__slots *k = s->keys;
    if (k == NULL) {
        return ARK_EINVAL;
    }
    /* The generation of each entity marked by remove_later, + 1 (0: not
     * marked): its elements may outlive its stamp until the flush. */
    size_t nmarked =
        (k->npending - k->pending_done) + (k->ndoomed - k->doomed_done);
    uint32_t *marked = NULL;
    size_t bytes = (size_t)k->v->issued * sizeof *marked;
    if (nmarked != 0) {
        marked = ark__alloc(&s->alloc, bytes, 0);
        if (marked == NULL) {
            return ARK_ENOMEM;
        }
        memset(marked, 0, bytes);
        for (size_t j = k->pending_done; j < k->npending; j++) {
            marked[k->pending[j] & UINT32_MAX] =
                (uint32_t)(k->pending[j] >> 32) + 1;
        }
        for (size_t j = k->doomed_done; j < k->ndoomed; j++) {
            marked[k->doomed[j] & UINT32_MAX] =
                (uint32_t)(k->doomed[j] >> 32) + 1;
        }
    }
    ark_status st = ARK_OK;
    for (uint64_t i = 1; i < s->v->issued && st == ARK_OK; i++) {
        uint32_t stamp = *ark__slots_stamp(ark__slots_at(s->v, i));
        if (stamp == 0 || i == s->dying) {
            continue;
        }
        bool owned =
            i < k->v->cap &&
            (*ark__slots_stamp(ark__slots_at(k->v, i)) == stamp ||
             (marked != NULL && i < k->v->issued && marked[i] == stamp));
        st = owned ? ARK_OK : ARK_ECORRUPT;
    }
    ark__free(&s->alloc, marked, bytes);
    return st;
}
