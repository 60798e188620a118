/* SPDX-License-Identifier: MIT */
/*
 * slots.h - the handle engine under ark_pool and ark_table; never
 * installed.
 *
 * The engine owns every rule about handles: the layout and its validation,
 * slot take and release with the FIFO reuse delay, retirement, check,
 * remove / remove_later / flush / clear with the re-entrancy rules of the
 * removal hook, sealing, and validation. A container owns only its storage:
 * where slot i lives (the ark__slots_view it shares with its inline
 * lookups), what a slot carries after its stamp, and what happens to that
 * storage when an element goes (ark__slots_ops).
 *
 * Slot states, read from the uint32 stamp at offset 0 of every slot:
 *   live     stamp = gen + 1
 *   free     stamp = 0, queued in the ring; the uint32 at offset 4 holds
 *            the generation its next occupant gets
 *   marked   stamp = 0, listed in pending (remove_later) or doomed (a
 *            remove asked for while a hook runs); the entry keeps gen
 *   dying    stamp = gen + 1 again while its on_remove runs (s->dying)
 *   retired  stamp = 0 and in no list: its generations are used up;
 *            the uint32 at offset 4 holds ARK__RETIRED
 *   claimed  stamp = 0, its claimed bit set: a claimer holds its handle,
 *            whose generation the uint32 at offset 4 holds
 *   stocked  stamp = 0, its stocked bit set: set aside for claims (or
 *            taken from the stock and not reaped yet); offset 4 as free
 *   parked   stamp = 0, outside the index range and in no list: free for
 *            insert_at only; offset 4 holds its next generation
 * Slot 0 is never live, so its stamp is 0 forever. The last three are
 * claim.c's (see "Claims" at the end).
 *
 * Removal. An element is first unlinked (held: the count drops; the
 * container hides it from iteration), then its on_remove runs with its stamp
 * valid (get and row still resolve the handle; removing it again is a no-op),
 * then the stamp is cleared, the container drops its storage (a table pops the
 * row) and the slot is queued or retired. While a hook runs the engine is
 * draining: a remove the hook asks for is only marked (doomed) and carried
 * out, hook included, as soon as the current hook returns. So at most one
 * element is dying at a time, no hook runs inside another, and each removed
 * element gets exactly one on_remove. flush keeps going until pending is
 * empty, so it also frees what its hooks marked; flush and clear called
 * from a hook do nothing.
 *
 * Reuse. A slot is reused only once ARK_REUSE_DELAY slots are queued or the
 * index space (the index range) is used up; the choice depends on counts
 * alone, never on capacities, so the same operations always issue the same
 * handles.
 */
#ifndef ARK_ENGINE_SLOTS_H
#define ARK_ENGINE_SLOTS_H

#include "base/base.h"

#include <stdatomic.h>

/* Half-rounds of the sealing permutation (a keyed Feistel network). */
#define ARK__SEAL_ROUNDS 6

/* What a container does when the engine asks. Containers pass a static
 * const table to the inline functions below, so the calls inline there. */
typedef struct ark__slots_ops {
    /* Give storage (stamps 0) to slots up to at least want (<= limit) and
     * raise view->cap. ARK_ENOMEM leaves the container as it was. */
    ark_status (*grow)(void *c, uint64_t want);
    /* Hide slot i from iteration (a pool clears its live bit): a live
     * slot being removed, or one the engine issues free or retired
     * without a take (insert_at past the last slot, a load). */
    void (*unlink)(void *c, uint64_t i);
    /* Run the user's on_remove for the element of slot (handle h). */
    void (*hook)(void *c, char *slot, ark_handle h);
    /* The element of slot is gone: free its storage (a table pops the
     * row). The stamp is already 0. */
    void (*drop)(void *c, char *slot);
    /* Return the first live slot at or after from, or 0 when none. */
    uint64_t (*next_live)(const void *c, uint64_t from);
    /* Back slots up to want (<= limit) with storage, so that grow up to
     * want allocates nothing, without making them reachable: view->cap
     * may stay where it is. For reserve: memory is committed or allocated
     * but not touched, so a reserve of any size costs no resident memory
     * in proportion to it, and the slots open as inserts reach them.
     * ARK_ENOMEM leaves the container as it was (spare storage may stay). */
    ark_status (*back)(void *c, uint64_t want);
} ark__slots_ops;

struct ark__slots;

/* The handle fields of both configs. keys, when not NULL, makes the
 * container keyed (src/engine/keys.c): its elements are created at the
 * handles of that key space (an entity pool), which removes them with its
 * entities; the layout and seal keys are the key space's, and the handle
 * fields must be 0. */
typedef struct ark__slots_config {
    unsigned index_bits, gen_bits, tag_bits;
    uint64_t tag;
    uint64_t seal_key;
    bool has_hook;
    struct ark__slots *keys;
    uint32_t index_min, index_max; /* 0 and 0: the whole layout */
} ark__slots_config;

/* The engine's config from an ark_pool_config or ark_table_config (the
 * same field names; keys, when set, is an ark_pool). */
#define ARK__SLOTS_CONFIG_OF(cfg)                                              \
    {                                                                          \
        .index_bits = (cfg)->index_bits, .gen_bits = (cfg)->gen_bits,          \
        .tag_bits = (cfg)->tag_bits, .tag = (cfg)->tag,                        \
        .seal_key = (cfg)->seal_key, .has_hook = (cfg)->on_remove != NULL,     \
        .keys = (cfg)->keys != NULL ? &(cfg)->keys->s : NULL,                  \
        .index_min = (cfg)->index_min, .index_max = (cfg)->index_max           \
    }

/* A container attached to a key space: what the key space asks of it when
 * entities go (src/engine/keys.c). */
typedef struct ark__slots_attached {
    void *c; /* the container: a keyed engine, or an id set */
    /* Make removing h's element unable to fail (an id set takes the nodes
     * it may need); ARK_ENOMEM changes nothing c holds. NULL: nothing to
     * prepare. */
    ark_status (*prepare)(void *c, ark_handle h);
    /* Remove the n ids (sorted) from c in one pass (an id set), or NULL.
     * Errors: ARK_ENOMEM (c unchanged). */
    ark_status (*remove_ids)(void *c, const uint32_t *ids, size_t n);
    /* Remove what c holds for h, if anything, running its hook when hook
     * is true (after prepare, when there is one: it cannot fail). */
    void (*remove)(void *c, ark_handle h, bool hook);
    /* Remove everything c holds (the key space was cleared), or NULL. */
    void (*clear)(void *c);
    /* The key space is going away: c must forget it. */
    void (*detach)(void *c);
    bool tag; /* an id set: emptied of an entity's id when the removal of
                 the entity starts, not when it ends */
    /* Make remove_ids(c, ids, n) unable to fail, as prepare does for one
     * id, or NULL. Errors: ARK_ENOMEM (c unchanged). */
    ark_status (*prepare_ids)(void *c, const uint32_t *ids, size_t n);
} ark__slots_attached;

/* Entries of the stock of reused slots that claimers take (claim.c). */
#define ARK__STOCK_CAP 1024u

/* What claiming threads share with the owning thread (see "Claims"
 * below). Claimers write frontier and head; the owner writes tail and,
 * once, stock. Each group is at least 64 bytes from the other and from
 * the owner's fields, so a claim never writes a cache line the owner's
 * inserts and removes read. */
typedef struct ark__claim_shared {
    char pad0[64];
    _Atomic uint64_t frontier; /* next index of the range never given out */
    char pad1[56];
    _Atomic uint64_t head; /* stock: next position a claimer takes */
    _Atomic uint64_t tail; /* stock: end of what the owner published */
    /* ARK__STOCK_CAP handles, position k at stock[k % ARK__STOCK_CAP];
     * set once, before the first tail store (release) that claimers read */
    _Atomic uint64_t *stock;
    char pad2[64];
} ark__claim_shared;

typedef struct ark__slots {
    /* hot: the free-slot queue, issued and fast_stamp_max live in the
     * container's view (core.h), where the inline insert and remove of
     * pool.h reach them */
    ark__slots_view *v; /* the container's view: layout and slot storage */
    uint64_t limit;     /* 2^index_bits: slots the layout addresses */
    uint64_t retired;   /* slots whose generations are used up */
    /* unlinked slots not yet freed: marked (pending, doomed) or being
     * removed (its hook may be running) */
    uint64_t held;
    bool has_hook;
    bool draining;  /* a remove, flush or clear is running hooks */
    uint64_t dying; /* slot whose on_remove runs now, or 0 */
    /* cold */
    const ark__slots_ops *ops;
    void *owner;
    ark_allocator alloc;
    uint64_t *pending; /* remove_later marks: index | gen << 32 */
    size_t npending, pending_done, pending_cap; /* [done, n) still marked */
    uint64_t *doomed; /* removes asked for by hooks, same encoding */
    size_t ndoomed, doomed_done, doomed_cap; /* [done, n) still marked */
    unsigned seal_bits, seal_lo; /* layout width; bits of the low half */
    uint64_t seal_keys[ARK__SEAL_ROUNDS];
    /* skip[i]: dead ring entries of slot i, all older than its live one */
    uint32_t *skip;
    size_t skip_cap;
    /* keyed mode (src/engine/keys.c): no ring, no take; every slot with
     * storage is issued (issued == cap), vacant ones counted apart */
    bool keyed;
    bool quiet;              /* clear(false) runs: cascades run no hooks */
    struct ark__slots *keys; /* keyed: the key space (NULL once it died) */
    uint64_t vacant;         /* keyed: slots with storage and no element */
    /* the containers attached to this key space */
    ark__slots_attached *attached;
    size_t nattached, attached_cap;
    size_t ntags;            /* attached tag sets */
    size_t nhooked;          /* attached keyed containers with an on_remove */
    uint64_t attach_changes; /* attaches and detaches so far */
    /* claims and the index range (see "Claims" below) */
    uint64_t lo, end;    /* inserts and claims take indices in [lo, end) */
    uint64_t chunk_end;  /* the owner's run of fresh indices: [issued, it) */
    uint64_t nclaimed;   /* slots below issued whose claimed bit is set */
    uint64_t parked;     /* slots outside the range free for insert_at */
    uint64_t outside;    /* slots outside the range live or held */
    uint64_t dropped;    /* fresh claims below it were dropped by clear */
    uint64_t stock_tail; /* == shared.tail */
    uint64_t reaped;     /* stock entries below it are known claimed */
    /* two bitmap words per 64 slots: claimed, then stocked (in the stock,
     * or claimed from it and not reaped yet); NULL until claims are seen */
    uint64_t *cbits;
    size_t cbits_words;
    bool claims_seen; /* a claim was ever made: the stock is kept */
    ark__claim_shared shared;
} ark__slots;

/* What offset 4 of a retired slot holds: no free slot's next generation
 * (gen_max < UINT32_MAX), so insert_at tells retired from free in O(1). */
#define ARK__RETIRED UINT32_MAX

/* Validate cfg field by field, then in sum, and fill v->layout and s.
 * Storage starts empty (v->cap 0). Errors: ARK_EINVAL. */
ark_status ark__slots_init(ark__slots *s, ark__slots_view *v,
                           const ark__slots_config *cfg,
                           const ark_allocator *alloc,
                           const ark__slots_ops *ops, void *owner);

/* Free the engine's own arrays (not the container's storage). */
void ark__slots_fini(ark__slots *s);

static inline uint32_t *ark__slots_stamp(char *slot) {
    return (uint32_t *)(void *)slot;
}

static inline uint32_t *ark__slots_next_gen(char *slot) {
    return (uint32_t *)(void *)(slot + 4);
}

/* Free slots queued: the ring's entries less the dead ones. */
static inline uint64_t ark__slots_nfree(const ark__slots_view *v) {
    return v->tail - v->head - v->ring_dead;
}

/* Entry k of the ring, k < tail - head (0 is the oldest). */
static inline uint32_t ark__slots_ring_at(const ark__slots_view *v,
                                          uint64_t k) {
    return v->ring[(v->head + k) & v->ring_mask];
}

/* Take the oldest entry off the ring; it holds one. */
static inline uint32_t ark__slots_ring_pop(ark__slots_view *v) {
    return v->ring[v->head++ & v->ring_mask];
}

/* Live elements. Every issued slot but slot 0 is live, free (queued),
 * retired, held, claimed, parked or stocked, so the count is derived, not
 * kept: the inline insert and remove then update one counter (the ring's
 * head or tail, or issued) instead of two, which took random removes of
 * 1M elements from 7.3-8.0 to 6.6-7.2 ns (docs/pool.md). Every term is
 * the owning thread's: claimers bump no counter. */
static inline size_t ark__slots_count(const ark__slots *s) {
    const ark__slots_view *v = s->v;
    return (size_t)(v->issued - 1 - ark__slots_nfree(v) - s->retired - s->held -
                    s->vacant - s->nclaimed - s->parked -
                    (s->stock_tail - s->reaped));
}

/* The status of a handle that is not live (out of line: the error path). */
ark_status ark__slots_classify(const ark__slots *s, ark_handle h);

/* Give the slot h names if it is live (ARK_OK), else classify h:
 * ARK_ENULL, ARK_EFOREIGN (tag or stray bits), ARK_ERANGE (index never
 * issued), ARK_ESTALE. The live case is one compare of the stamp, which
 * is exact: a stamp only matches a handle with the right tag, no stray
 * bits and the slot's generation. */
static inline ark_status ark__slots_find(const ark__slots *s, ark_handle h,
                                         uint64_t *index, char **slot) {
    const ark__slots_view *v = s->v;
    uint64_t i = h & v->layout.index_mask;
    *index = 0;
    *slot = NULL;
    if (ARK__LIKELY(i < v->cap)) {
        char *p = ark__slots_at(v, i);
        if (ARK__LIKELY(*ark__slots_stamp(p) ==
                        ark__handle_stamp(&v->layout, h))) {
            *index = i;
            *slot = p;
            return ARK_OK;
        }
    }
    return ark__slots_classify(s, h);
}

/* Pop the dead entries at the head of the ring (insert_at). */
void ark__slots_skip_dead(ark__slots *s);

/* ark__slots_free while the ring holds dead entries. */
void ark__slots_free_dead(ark__slots *s, uint64_t i, char *slot, uint32_t gen);

/* Make slots [0, want) exist (want <= limit): ring room from the engine,
 * storage from the container. Nothing changes on failure. */
ark_status ark__slots_grow_to(ark__slots *s, uint64_t want);

/* Give the ring room for want entries. Nothing changes on failure. */
ark_status ark__slots_grow_ring(ark__slots *s, uint64_t want);

/* Append entry (index | gen << 32) to a list of s (pending or doomed),
 * growing it by doubling. Errors: ARK_ENOMEM (the list is unchanged). */
ark_status ark__slots_list_push(ark__slots *s, uint64_t **list, size_t *len,
                                size_t *cap, uint64_t entry);

/* Set bit i of the bitmap seen; false if it was set already (the
 * duplicate checks of validate and load). */
static inline bool ark__slots_see(uint64_t *seen, uint64_t i) {
    uint64_t bit = (uint64_t)1 << (i & 63);
    if (seen[i >> 6] & bit) {
        return false;
    }
    seen[i >> 6] |= bit;
    return true;
}

/* Make room for one more fresh slot (storage and ring). Out of line. */
ark_status ark__slots_grow_fresh(ark__slots *s);

/* True when neither the owner's run nor the frontier has a fresh index
 * left (the range, or the layout, is used up). Out of line: it reads the
 * frontier. */
bool ark__slots_fresh_out(const ark__slots *s);

/* True when the next take reuses a free slot rather than a fresh one. */
static inline bool ark__slots_reuses(const ark__slots *s) {
    uint64_t nfree = ark__slots_nfree(s->v);
    return nfree >= ARK_REUSE_DELAY || (nfree > 0 && ark__slots_fresh_out(s));
}

/* Make sure the next take allocates nothing (for a container that must
 * grow its own storage in between). Errors: ARK_EFULL, ARK_ENOMEM. */
static inline ark_status ark__slots_prepare(ark__slots *s) {
    if (s->keyed) {
        return ARK_EINVAL; /* elements come at their key's handle */
    }
    if (!ark__slots_reuses(s) && s->v->issued >= s->v->fresh_end) {
        ark_status st = ark__slots_grow_fresh(s);
        /* Claimers took the last fresh indices meanwhile: reuse. */
        return st == ARK_EFULL && ark__slots_reuses(s) ? ARK_OK : st;
    }
    return ARK_OK;
}

/* Hand out a slot: the oldest free one once ARK_REUSE_DELAY are queued or
 * the index space is used up, else a fresh one. Sets its stamp
 * (which counts it); linking it is the caller's business.
 * Errors: ARK_EFULL, ARK_ENOMEM; nothing changes on error. */
ark_status ark__slots_take(ark__slots *s, uint64_t *index, char **slot);

/* Free slot i outside the index range (stamp already 0), last generation
 * gen: parked for insert_at, or retired (claim.c). */
void ark__slots_park(ark__slots *s, uint64_t i, char *slot, uint32_t gen);

/* Queue slot i (stamp already 0) whose last generation was gen, or retire
 * it when its generations are used up; park it if it lies outside the
 * index range. Never fails: the ring has room for every issued slot of the
 * range. */
static inline void ark__slots_free(ark__slots *s, uint64_t i, char *slot,
                                   uint32_t gen) {
    if (s->keyed) {
        s->vacant++; /* its key space spends and retires generations */
        return;
    }
    if (ARK__UNLIKELY(i < s->lo || i >= s->end)) {
        ark__slots_park(s, i, slot, gen);
        return;
    }
    if (gen >= s->v->layout.gen_max) {
        *ark__slots_next_gen(slot) = ARK__RETIRED;
        s->retired++;
        return;
    }
    if (ARK__UNLIKELY(s->v->ring_dead != 0)) {
        ark__slots_free_dead(s, i, slot, gen);
        return;
    }
    *ark__slots_next_gen(slot) = gen + 1;
    ark__slots_enqueue(s->v, i);
}

/* Set fast_stamp_max from has_hook, ring_dead and outside; called
 * wherever they change. */
void ark__slots_refresh_fast(ark__slots *s);

/* remove of live slot i past the inline path: a hook to run (or hooks
 * running), dead ring entries, or a slot to retire. */
ark_status ark__slots_remove_slow(ark__slots *s, uint64_t i, char *slot);

/* remove when the inline path does not apply: h is not live (its
 * status), or remove_slow. */
ark_status ark__slots_remove_general(ark__slots *s, ark_handle h);

/* Remove the element h names: unlink, on_remove, drop, free. Without a
 * hook nothing can call back, so the whole removal is straight-line code
 * (ark__slots_removable and ark__slots_release of core.h) with the
 * container's ops inlined; every other path is a tail call, so the common
 * one needs no stack frame. The container passes its view and itself
 * (c == s->owner) so that their fields are a fixed offset from one
 * pointer, not loads through the engine. */
static inline ark_status ark__slots_remove(ark__slots *s, ark__slots_view *v,
                                           const ark__slots_ops *ops, void *c,
                                           ark_handle h) {
    uint64_t i;
    char *slot = ark__slots_removable(v, h, &i);
    if (ARK__UNLIKELY(slot == NULL)) {
        return ark__slots_remove_general(s, h);
    }
    ops->unlink(c, i);
    ops->drop(c, slot);
    ark__slots_release(v, i, slot);
    return ARK_OK;
}

/* Free the live slot h names at once, with no hook, even while hooks run
 * (then nothing is marked, so nothing can fail): for a slot its taker
 * gives back unbuilt (ark.hpp, when a constructor throws). Errors: as
 * find; the slot whose hook is running is left alone (ARK_OK). */
ark_status ark__slots_discard(ark__slots *s, ark_handle h);

/* Mark h for the next flush: invisible at once, storage kept.
 * Errors: as find, ARK_ENOMEM. */
ark_status ark__slots_remove_later(ark__slots *s, ark_handle h);

/* Finish every marked element (and what hooks mark meanwhile). */
size_t ark__slots_flush(ark__slots *s);

/* Remove everything, live and marked, until nothing is left. */
void ark__slots_clear(ark__slots *s, bool run_hook);

/* Make room so that n live elements in all need no allocation: the
 * container's storage is backed (ops->back) before the ring grows, so a
 * request the system cannot back fails before the ring takes memory.
 * Errors: ARK_EFULL, ARK_ENOMEM. */
ark_status ark__slots_reserve(ark__slots *s, size_t n);

/* The check status of h, as the public check functions report it: a
 * dying element is still live until its hook returns. */
ark_status ark__slots_check(const ark__slots *s, ark_handle h);

/* Apply the keyed permutation (or its inverse) to the layout's bits of h;
 * bits above the layout pass through. */
ark_handle ark__slots_seal(const ark__slots *s, ark_handle h);
ark_handle ark__slots_unseal(const ark__slots *s, ark_handle wire);

/* Check the engine's invariants (see the header comment); live_of says
 * whether the container considers slot i linked (a pool's live bit), or
 * is NULL. Returns ARK_OK or ARK_ECORRUPT (ARK_ENOMEM if the scratch
 * bitmap cannot be had). O(issued). */
ark_status ark__slots_validate(const ark__slots *s,
                               bool (*linked)(const void *c, uint64_t i));

/* ---- insert_at ----------------------------------------------------------
 * A replica creates elements at the handles its server issued. Taking a
 * free slot out of the middle of the FIFO ring would cost O(ring), so
 * insert_at leaves the slot's entry in place and counts it dead
 * (skip[i]++, ring_dead++, so one free slot fewer); take pops dead entries at
 * the head before its pop (a slot's dead entries are always older than its live
 * one, so "the first skip[i] entries of slot i are dead" is exact). The
 * ring is compacted once dead entries are at least as many as free ones
 * (amortized O(1)), or grown when a free finds it full of them. A slot
 * past issued makes slots [issued, i) free, queued in index order with
 * next generation 0; at most ARK__INSERT_AT_GAP of them, and at most
 * ARK__INSERT_AT_GAP_BYTES of slots, at once unless the storage is there
 * already (reserve), so a far index cannot make one call allocate without
 * bound: 65536 slots of a 64 KiB element would be 4 GiB. */

/* Fresh slots one insert_at may queue beyond the storage it has, and the
 * bytes of slots it may add (the fewer of the two applies). */
#define ARK__INSERT_AT_GAP ((uint64_t)1 << 16)
#define ARK__INSERT_AT_GAP_BYTES ((uint64_t)1 << 22)

/* Whether slot h names may be made live at exactly h's generation,
 * changing nothing. Errors: ARK_ENULL, ARK_EFOREIGN, ARK_ERANGE (index 0,
 * generation past gen_max), ARK_EEXIST (live, or marked with an older
 * generation), ARK_ESTALE (generation below the slot's next one, retired,
 * or h is the marked element), ARK_EFULL (more fresh slots past the
 * storage than the gap bounds allow), ARK_EINVAL (from a hook). A container
 * calls it first, then allocates what it needs of its own (a table's
 * rows), so a bad handle gets its own status and not ARK_ENOMEM. */
ark_status ark__slots_insert_at_check(const ark__slots *s, ark_handle h);

/* Make slot h names live at exactly h's generation, once
 * ark__slots_insert_at_check(h) returned ARK_OK; sets its stamp and
 * counts it (linking is the caller's). Errors: ARK_ENOMEM, and ARK_EEXIST
 * or ARK_ESTALE when a claimer took the slot between the check and this
 * call; nothing changes on error. */
ark_status ark__slots_insert_at(ark__slots *s, ark_handle h, uint64_t *index,
                                char **slot);

/* ---- keyed containers and key spaces (keys.c) ---------------------------
 * An entity pool is a key space: containers keyed by it (a pool or table
 * of components) hold at most one element per entity, at the entity's own
 * handle, and id sets attached to it hold entity ids (tags). Removing an
 * entity removes its tags when the removal starts (remove, remove_later,
 * or a remove a hook asks for: all or nothing, so ARK_ENOMEM changes
 * nothing), then runs its on_remove, then removes its elements from every
 * keyed container, each with its own hook, while the entity is still
 * dying (its handle resolves). A keyed container has no free queue: its
 * slot i is the element of entity i, or vacant. */

/* Make s (fresh from init) keyed by keys: copy its layout and seal keys
 * and attach s to it. Errors: ARK_EINVAL (keys is itself keyed, or the
 * config set handle fields), ARK_ENOMEM. */
ark_status ark__slots_init_keyed(ark__slots *s, ark__slots *keys);

/* Attach a (its c not already attached) to the key space k. Errors:
 * ARK_ENOMEM. */
ark_status ark__slots_attach(ark__slots *k, const ark__slots_attached *a);

/* Detach c from k, if attached; keeps the order of the others. */
void ark__slots_detach(ark__slots *k, const void *c);

/* Whether h names an entity of k that is live and not being removed. */
bool ark__slots_key_live(const ark__slots *k, ark_handle h);

/* Remove h's ids from every tag set attached to k, all or nothing.
 * Errors: ARK_ENOMEM (no set changed). */
ark_status ark__slots_untag(ark__slots *k, ark_handle h);

/* Remove the ids of the entities marked at pending[from, to) from every
 * tag set attached to k, one sorted batch per set. Errors: ARK_ENOMEM
 * (some sets may have lost some of those ids; the entities stay marked). */
ark_status ark__slots_untag_batch(ark__slots *k, size_t from, size_t to);

/* The removal of live entity i of key space k (slot: its slot) when no
 * hook can run (k's and its keyed containers' on_remove all unset) and k
 * is not draining: its tags, then its elements, then its slot, in
 * straight-line code. Errors: ARK_ENOMEM (untag; nothing changed). */
ark_status ark__slots_remove_plain(ark__slots *k, uint64_t i, char *slot);

/* Start loading the slots of entity i in every keyed container attached
 * to k (hints: their misses then overlap instead of following each other
 * in the cascade). */
void ark__slots_prefetch(const ark__slots *k, uint64_t i);

/* Remove h's elements from every keyed container attached to k (hooks
 * run unless k->quiet). */
void ark__slots_cascade(ark__slots *k, ark_handle h);

/* Empty every tag set attached to k (k was cleared). */
void ark__slots_clear_tags(ark__slots *k);

/* The engine's part of fini for keys: a keyed s leaves its key space, a
 * key space detaches everything attached to it. */
void ark__slots_fini_keys(ark__slots *s);

/* The status of insert_at(h) on keyed s, as ark__slots_insert_at_check. */
ark_status ark__slots_keyed_check(const ark__slots *s, ark_handle h);

/* Create the element of key h in keyed s (checked): storage grows to
 * cover its index. Errors: ARK_ENOMEM (nothing changed). */
ark_status ark__slots_keyed_take(ark__slots *s, ark_handle h, uint64_t *index,
                                 char **slot);

/* Give keyed s storage for every index below want (at most limit):
 * issued follows the storage, the new slots vacant. Errors: ARK_ENOMEM
 * (s keeps what it had, and may have grown some). */
ark_status ark__slots_keyed_grow(ark__slots *s, uint64_t want);

/* Check that every live element of keyed s belongs to its entity: the
 * entity at its index is live, or marked by remove_later, with the same
 * generation. Errors: ARK_ECORRUPT, ARK_EINVAL (no key space),
 * ARK_ENOMEM (scratch). O(issued + the key space's marked). */
ark_status ark__slots_keyed_valid(const ark__slots *s);

/* Remove the element of h from keyed s (the cascade of its key space's
 * removal): nothing when there is none; its hook runs when hook. Never
 * fails: a hook's removal that cannot be queued runs at once. */
void ark__slots_keyed_remove(ark__slots *s, ark_handle h, bool hook);

/* ---- claims and index ranges (claim.c) ----------------------------------
 * Range. Inserts and claims take indices in [lo, end) only (config
 * index_min and index_max; the whole layout by default); insert_at may
 * use any index. The ring only ever holds slots of the range: a slot
 * outside it, freed, is parked (its next generation at offset 4, in no
 * list) for insert_at alone. While such a slot is live or held
 * (outside > 0) fast_stamp_max is 0, so every removal runs
 * ark__slots_free, which parks it.
 *
 * Fresh indices. shared.frontier F is the next index of the range nobody
 * was given. The owning thread takes runs of it with one CAS a run
 * (ARK__RUN_QUIET indices while no claim was ever seen, ARK__RUN after,
 * and never more than an eighth of what the range has left):
 * its run is [issued, chunk_end), and the inline take stops at fresh_end,
 * min(cap, lo + ring_cap, chunk_end). Claimers CAS F forward by n, never
 * past end. So [max(chunk_end, lo), F) is claimed and unknown to the
 * owner; it absorbs those slots (storage, claimed bit, next generation 0)
 * when it takes its next run, or up to the one insert_at or unclaim
 * names; the rest of its own run then becomes free, queued in index
 * order, like the gap insert_at leaves past issued. Without claims the
 * runs follow each other and every handle is the one it always was.
 *
 * Reused slots. Once a claim has been seen, the owner moves free slots
 * from the head of its ring, past the ARK_REUSE_DELAY youngest, into the
 * stock: an SPMC ring of whole handles (entries written and read with
 * relaxed atomics, tail published with a release store). A claimer reads
 * n entries below the tail (acquire) and CASes head forward over them
 * (release): one RMW a batch; a failed CAS discards what it read. The
 * owner restocks only in flush (so that the same operations set the same
 * slots aside, whatever the capacities); a claimer that finds the stock
 * short takes fresh indices. The owner learns what was taken by reading head
 * (acquire) and marking those slots claimed (reap); before insert_at takes a
 * stocked slot, it pulls the whole stock back to the head of its ring (one
 * CAS).
 *
 * Bits: claimed (a claim the owner knows of; next_gen holds its
 * generation) and stocked (in the stock, or taken from it and not reaped
 * yet), two bitmap words per 64 slots below issued, allocated when the
 * first claim is seen. Counts stay the owner's: see ark__slots_count.
 */

/* The owner's runs of fresh indices, before and after a claim is seen. */
#define ARK__RUN_QUIET 4096u
#define ARK__RUN 64u

/* Check and set the index range of cfg (after the layout), and the
 * frontier. Errors: ARK_EINVAL (outside the layout, min > max). */
ark_status ark__slots_range_init(ark__slots *s, const ark__slots_config *cfg);

/* Free the claim state's memory (the stock and the bits). */
void ark__slots_claims_fini(ark__slots *s);

/* Set fresh_end from cap, ring_cap and chunk_end. */
void ark__slots_refresh_fresh(ark__slots *s);

/* Entries of ring room that issued slots up to want need. */
static inline uint64_t ark__slots_ring_want(const ark__slots *s,
                                            uint64_t want) {
    uint64_t top = want < s->end ? want : s->end;
    return top > s->lo - 1 ? top - (s->lo - 1) : 0;
}

/* Take the owner's next run of fresh indices from the frontier,
 * absorbing the claims below it. Errors: ARK_EFULL (the range is used
 * up), ARK_ENOMEM; nothing changes on error. */
ark_status ark__slots_take_run(ark__slots *s);

/* Fresh indices left: the rest of the owner's run and of the range. */
uint64_t ark__slots_fresh_left(const ark__slots *s);

/* The next index of the range nobody was given (a snapshot of F). */
uint64_t ark__slots_frontier(const ark__slots *s);

/* True when index i >= issued was claimed fresh and is not absorbed
 * yet (check gives ARK_ESTALE for it, not ARK_ERANGE). */
bool ark__slots_claimed_ahead(const ark__slots *s, uint64_t i);

/* insert_at_check for index i past issued, or for a slot below issued
 * that is parked, claimed or stocked (stamp 0, not marked); gen is the
 * handle's. */
ark_status ark__slots_fresh_at_check(const ark__slots *s, uint64_t i,
                                     uint32_t gen);
ark_status ark__slots_claimed_at_check(const ark__slots *s, uint64_t i,
                                       uint32_t gen, uint32_t next);

/* insert_at for index i past issued: absorb, take, or queue the gap;
 * slot i is then ready to be stamped, or (*done false) a free slot of the
 * ring (a claim clear dropped). Errors: ARK_ENOMEM, and ARK_EEXIST when a
 * claimer took i after the check. */
ark_status ark__slots_fresh_at(ark__slots *s, uint64_t i, uint32_t gen,
                               bool *done);

/* insert_at for slot i < issued that is not in the ring (parked, claimed,
 * stocked); *done false when it turned out to be a free slot of the ring
 * (pulled back from the stock). Errors: ARK_EEXIST, ARK_ESTALE (a claimer
 * took it after the check). */
ark_status ark__slots_claimed_at(ark__slots *s, uint64_t i, uint32_t gen,
                                 bool *done);

/* True when slot i < issued may be claimed or stocked (its bits say). */
static inline bool ark__slots_claimish(const ark__slots *s, uint64_t i) {
    if (s->cbits == NULL || (i >> 6) * 2 >= s->cbits_words) {
        return false;
    }
    const uint64_t *w = s->cbits + (i >> 6) * 2;
    return ((w[0] | w[1]) >> (i & 63)) & 1;
}

/* Write n claimed handles to out (any thread). Errors: ARK_EFULL. */
ark_status ark__slots_claim(ark__slots *s, ark_handle *out, size_t n);

/* Give back claimed handle h (owning thread). Errors: ARK_ENULL,
 * ARK_EFOREIGN, ARK_ESTALE (not claimed), ARK_ENOMEM. */
ark_status ark__slots_unclaim(ark__slots *s, ark_handle h);

/* Move free slots that waited their reuse delay into the stock, if a
 * claim was ever seen. Best effort: allocates the stock once. */
void ark__slots_restock(ark__slots *s);

/* Drop every claim (clear): claimed generations are used up as by a
 * removal; fresh claims not absorbed yet are freed as they are. */
void ark__slots_drop_claims(ark__slots *s);

/* For a load (snapshot/slots_snap.c), on a container not shared yet:
 * make room for the claim bits of every issued slot and, with stock, the
 * stock; then mark slot i claimed, or append it (generation gen) to the
 * stock. Errors: ARK_ENOMEM. */
ark_status ark__slots_claims_room(ark__slots *s, bool stock);
void ark__slots_set_claimed(ark__slots *s, uint64_t i);
void ark__slots_set_stocked(ark__slots *s, uint64_t i, uint32_t gen);

/* The claim state's share of validation: bits, counts, stock, range.
 * seen marks every slot the stock and the bits hold. */
bool ark__slots_validate_claims(const ark__slots *s, uint64_t *seen);

#endif /* ARK_ENGINE_SLOTS_H */
