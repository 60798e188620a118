/* SPDX-License-Identifier: MIT */
/*
 * slots_snap.c - the handle engine's sections of a pool or table snapshot
 * (docs/snapshot.md): the slots (stamps and payloads, in blocks), the free
 * queue in order and the marked elements; and their loading, which checks
 * every value before use and grows storage only as slots arrive.
 */
#include "snapshot/snapshot.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(ARK__SNAP_KEYS == ARK__SEAL_ROUNDS, "one key per round");

static ark_status save_claims_header(const ark__slots *s, ark__snap_header *hd);

ark_status ark__slots_save_header(const ark__slots *s, ark__snap_header *hd) {
    if (s->draining) {
        return ARK_EINVAL;
    }
    const ark__handle_layout *l = &s->v->layout;
    hd->index_bits = l->index_bits;
    hd->gen_bits = l->gen_bits;
    hd->tag_bits = l->tag_bits;
    hd->tag = l->tag_bits == 0 ? 0 : l->tag_high >> l->gen_bits;
    hd->issued = s->v->issued;
    hd->live = ark__slots_count(s);
    hd->nfree = ark__slots_nfree(s->v);
    hd->npending = s->npending - s->pending_done;
    /* A keyed container's vacant slots travel as retired ones: slots in no
     * list, with stamp 0 (its kind tells them apart). */
    hd->retired = s->keyed ? s->vacant : s->retired;
    memcpy(hd->keys, s->seal_keys, sizeof hd->keys);
    return save_claims_header(s, hd);
}

/* The live ring entries in order (dead ones skipped, as take would). */
static ark_status save_ring(const ark__slots *s, ark__snap_out *o) {
    uint32_t *skip = NULL;
    size_t skip_bytes = (size_t)s->skip_cap * sizeof *skip;
    if (s->v->ring_dead > 0) {
        skip = ark__alloc(&s->alloc, skip_bytes, 0);
        if (skip == NULL) {
            return ARK_ENOMEM;
        }
        memcpy(skip, s->skip, skip_bytes);
    }
    for (uint64_t k = 0; k < ark__slots_queued(s->v); k++) {
        uint32_t x = ark__slots_ring_at(s->v, k);
        if (skip != NULL && x < s->skip_cap && skip[x] > 0) {
            skip[x]--;
            continue;
        }
        ark__snap_put32(o, x);
        ark__snap_put32(o, *ark__slots_next_gen(ark__slots_at(s->v, x)));
    }
    ark__free(&s->alloc, skip, skip_bytes);
    return ARK_OK;
}

static inline void put_le32(unsigned char *d, uint32_t v) {
    d[0] = (unsigned char)v;
    d[1] = (unsigned char)(v >> 8);
    d[2] = (unsigned char)(v >> 16);
    d[3] = (unsigned char)(v >> 24);
}

/* The slots from i on that lie at one stride from each other (the flat
 * part of the storage, or one slot past it): returns slot i, sets *stop
 * to the end of the run (at most end). */
static inline char *snap_run(const ark__slots_view *v, uint64_t i, uint64_t end,
                             uint64_t *stop) {
    if (i < v->nflat) {
        *stop = end < v->nflat ? end : v->nflat;
        return v->flat + (size_t)i * v->stride;
    }
    *stop = i + 1;
    return ark__slots_at(v, i);
}

/* What save_run does for each slot of its run. */
typedef enum save_what {
    SAVE_STAMPS, /* put the u32 stamp */
    SAVE_LIVE,   /* put the payload if the slot is live */
    SAVE_BLOCK,  /* put every payload; check */
    SAVE_MIXED,  /* put every payload, move on past live ones only, put
                    the stamps in stamps[] too; check */
    SAVE_CHECK   /* only check */
} save_what;

/* Slots [i, end) into buf from len on, room for them all checked by the
 * caller; returns the new length. The checks (SAVE_BLOCK, SAVE_MIXED,
 * SAVE_CHECK) set bits in *diff where a stamp differs from first. Inlined
 * with constant arguments for the common sizes, so the copies are single
 * moves and the fields stay in registers. */
static ARK__ALWAYS_INLINE inline size_t
save_run(const ark__slots_view *v, uint64_t i, uint64_t end, unsigned char *buf,
         size_t len, size_t payload, save_what what, uint32_t first,
         uint32_t *diff, unsigned char *stamps) {
    size_t off = v->data_off, stride = v->stride;
    uint32_t d = 0;
    while (i < end) {
        uint64_t stop;
        const char *slot = snap_run(v, i, end, &stop);
        for (; i < stop; i++, slot += stride) {
            uint32_t stamp;
            /* Sequential, but the hardware prefetcher alone leaves the
             * loop waiting on memory: ask 4 KiB ahead. */
            ARK__PREFETCH_R(slot + 4096);
            memcpy(&stamp, slot, 4);
            if (what == SAVE_STAMPS) {
                put_le32(buf + len, stamp);
                len += 4;
            } else if (what == SAVE_LIVE) {
                if (stamp != 0) {
                    ark__copy_small(buf + len, slot + off, payload);
                    len += payload;
                }
            } else {
                d |= stamp ^ first;
                if (what == SAVE_MIXED) {
                    put_le32(stamps, stamp);
                    stamps += 4;
                }
                if (what == SAVE_BLOCK || what == SAVE_MIXED) {
                    ark__copy_small(buf + len, slot + off, payload);
                    if (what == SAVE_BLOCK || stamp != 0) {
                        len += payload;
                    }
                }
            }
        }
    }
    if (what != SAVE_STAMPS && what != SAVE_LIVE) {
        *diff |= d;
    }
    return len;
}

/* SAVE_BLOCK (stamps NULL) or SAVE_MIXED, the payload size a constant
 * for the common sizes: in functions of their own, as the compiler sees
 * that save_run(.., 16, ..) is save_run(.., payload, ..) where payload ==
 * 16 and would make the calls one. */
static ARK__NOINLINE size_t save_block8(const ark__slots_view *v, uint64_t i,
                                        uint64_t end, unsigned char *buf,
                                        size_t len, uint32_t first,
                                        uint32_t *diff, unsigned char *stamps) {
    return stamps == NULL
               ? save_run(v, i, end, buf, len, 8, SAVE_BLOCK, first, diff, NULL)
               : save_run(v, i, end, buf, len, 8, SAVE_MIXED, first, diff,
                          stamps);
}

static ARK__NOINLINE size_t save_block16(const ark__slots_view *v, uint64_t i,
                                         uint64_t end, unsigned char *buf,
                                         size_t len, uint32_t first,
                                         uint32_t *diff,
                                         unsigned char *stamps) {
    return stamps == NULL ? save_run(v, i, end, buf, len, 16, SAVE_BLOCK, first,
                                     diff, NULL)
                          : save_run(v, i, end, buf, len, 16, SAVE_MIXED, first,
                                     diff, stamps);
}

static size_t save_block_any(const ark__slots_view *v, uint64_t i, uint64_t end,
                             unsigned char *buf, size_t len, size_t payload,
                             uint32_t first, uint32_t *diff,
                             unsigned char *stamps) {
    if (payload == 8) {
        return save_block8(v, i, end, buf, len, first, diff, stamps);
    }
    if (payload == 16) {
        return save_block16(v, i, end, buf, len, first, diff, stamps);
    }
    return stamps == NULL ? save_run(v, i, end, buf, len, payload, SAVE_BLOCK,
                                     first, diff, NULL)
                          : save_run(v, i, end, buf, len, payload, SAVE_MIXED,
                                     first, diff, stamps);
}

/* save_run for slots [i, end) through the buffer, flushing it as it
 * fills: stamps, or payloads of live slots. */
static void save_runs(const ark__slots_view *v, ark__snap_out *o, uint64_t i,
                      uint64_t end, size_t payload, save_what what) {
    size_t rec = what == SAVE_STAMPS ? 4 : payload;
    while (i < end) {
        size_t fit = (ARK__SNAP_BUF - o->len) / rec;
        if (fit == 0) {
            ark__snap_out_flush(o);
            fit = ARK__SNAP_BUF / rec;
        }
        if (fit == 0) { /* a payload larger than the buffer */
            const char *slot = ark__slots_at(v, i++);
            if (*ark__slots_stamp((char *)slot) != 0) {
                ark__snap_put(o, slot + v->data_off, payload);
            }
            continue;
        }
        uint64_t stop = end - i < fit ? end : i + fit;
        o->len = what == SAVE_STAMPS
                     ? save_run(v, i, stop, o->buf, o->len, 0, SAVE_STAMPS, 0,
                                NULL, NULL)
                     : save_run(v, i, stop, o->buf, o->len, payload, SAVE_LIVE,
                                0, NULL, NULL);
        i = stop;
    }
}

/* One block of a pool's slots section: slots [i, end). *mixed: whether
 * the block before was not a one-stamp block (and this one likely is not
 * either); set for the next. */
static void save_block(const ark__slots_view *v, ark__snap_out *o, uint64_t i,
                       uint64_t end, size_t payload, bool *mixed) {
    size_t n = (size_t)(end - i);
    uint32_t first = *ark__slots_stamp(ark__slots_at(v, i));
    uint32_t diff = first == 0; /* a block of free slots is no LIVE one */
    size_t need = 4 + n * (4 + payload);
    if (need > ARK__SNAP_BUF) {
        save_run(v, i, end, o->buf, 0, 0, SAVE_CHECK, first, &diff, NULL);
        ark__snap_put32(o, diff == 0 ? ARK__SNAP_BLOCK_LIVE
                                     : ARK__SNAP_BLOCK_STAMPS);
        if (diff == 0) {
            ark__snap_put32(o, first);
        } else {
            save_runs(v, o, i, end, 0, SAVE_STAMPS);
        }
        save_runs(v, o, i, end, payload, SAVE_LIVE);
        return;
    }
    /* In one pass over the slots, into the buffer laid out as the kind of
     * block the one before was: the payloads after the one stamp of a
     * block of live slots, or after room for every stamp, the stamps put
     * there on the way. A wrong guess moves the payloads, or writes the
     * block again from slots that are in the cache now. */
    if (need > ARK__SNAP_BUF - o->len) {
        ark__snap_out_flush(o);
    }
    unsigned char *head = o->buf + o->len;
    size_t live_at = o->len + 8, mixed_at = o->len + 4 + 4 * n;
    size_t start = *mixed ? mixed_at : live_at;
    size_t len = save_block_any(v, i, end, o->buf, start, payload, first, &diff,
                                *mixed ? head + 4 : NULL);
    bool was_mixed = *mixed;
    *mixed = diff != 0;
    if (*mixed && !was_mixed) {
        start = mixed_at;
        len = save_block_any(v, i, end, o->buf, start, payload, first, &diff,
                             head + 4);
    }
    size_t bytes = len - start;
    if (*mixed) {
        put_le32(head, ARK__SNAP_BLOCK_STAMPS);
        o->len = mixed_at + bytes;
    } else {
        if (was_mixed) {
            memmove(o->buf + live_at, o->buf + start, bytes);
        }
        put_le32(head, ARK__SNAP_BLOCK_LIVE);
        put_le32(head + 4, first);
        o->len = live_at + bytes;
    }
}

/* ---- the claims section (version 3) ------------------------------------ */

static bool snap_in_range(const ark__slots *s, uint64_t i) {
    return i >= s->lo && i < s->end;
}

/* The slots outside the index range that are free with a next
 * generation other than 0, or retired (the rest of the free ones are
 * parked with generation 0, left implicit); put them if put. marked:
 * one bit per marked slot, or NULL when none lies outside the range. */
static uint64_t save_outside(const ark__slots *s, ark__snap_out *o,
                             const uint64_t *marked, bool put) {
    const ark__slots_view *v = s->v;
    uint64_t n = 0;
    for (uint64_t i = 1; i < v->issued; i++) {
        if (snap_in_range(s, i)) {
            i = s->end - 1; /* on to the slots past the range */
            continue;
        }
        char *slot = ark__slots_at(v, i);
        /* A held slot's next generation is not written: test it last. */
        if (*ark__slots_stamp(slot) != 0 ||
            (marked != NULL && ((marked[i >> 6] >> (i & 63)) & 1))) {
            continue;
        }
        uint32_t next = *ark__slots_next_gen(slot);
        if (next == 0) {
            continue;
        }
        n++;
        if (put) {
            ark__snap_put32(o, (uint32_t)i);
            ark__snap_put32(o, next);
        }
    }
    return n;
}

/* The claimed slots below issued in index order: those with the claimed
 * bit, and the stock entries claimers took that the owner has not reaped
 * (taken[0, ntaken), sorted). */
static void save_claimed(const ark__slots *s, ark__snap_out *o,
                         const uint32_t *taken, size_t ntaken) {
    const ark__slots_view *v = s->v;
    size_t k = 0;
    for (size_t w = 0; w < s->cbits_words; w += 2) {
        for (uint64_t b = s->cbits[w]; b != 0; b &= b - 1) {
            uint64_t i = (uint64_t)(w / 2) << 6 | ark__ctz64(b);
            for (; k < ntaken && taken[k] < i; k++) {
                ark__snap_put32(o, taken[k]);
                ark__snap_put32(
                    o, *ark__slots_next_gen(ark__slots_at(v, taken[k])));
            }
            ark__snap_put32(o, (uint32_t)i);
            ark__snap_put32(o, *ark__slots_next_gen(ark__slots_at(v, i)));
        }
    }
    for (; k < ntaken; k++) {
        ark__snap_put32(o, taken[k]);
        ark__snap_put32(o, *ark__slots_next_gen(ark__slots_at(v, taken[k])));
    }
}

/* One bit per marked slot, when a marked slot may lie outside the index
 * range (their word at offset 4 is no next generation); NULL, *st
 * ARK_OK, when none can; NULL, *st ARK_ENOMEM, when no scratch. */
static uint64_t *marked_outside(const ark__slots *s, size_t *words,
                                ark_status *st) {
    const ark__slots_view *v = s->v;
    *st = ARK_OK;
    *words = (size_t)((v->issued + 63) >> 6);
    if (s->npending == s->pending_done || (s->lo == 1 && v->issued <= s->end)) {
        return NULL;
    }
    uint64_t *marked = ark__alloc(&s->alloc, *words * sizeof *marked, 0);
    if (marked == NULL) {
        *st = ARK_ENOMEM;
        return NULL;
    }
    memset(marked, 0, *words * sizeof *marked);
    for (size_t k = s->pending_done; k < s->npending; k++) {
        uint64_t i = s->pending[k] & UINT32_MAX;
        marked[i >> 6] |= (uint64_t)1 << (i & 63);
    }
    return marked;
}

/* The descriptor's claim fields. The stock's head is read once, here:
 * claims made after it are not in the snapshot (save_claims writes the
 * state these fields describe). */
static ark_status save_claims_header(const ark__slots *s,
                                     ark__snap_header *hd) {
    uint64_t h = s->reaped;
    if (s->stock_tail > s->reaped) {
        h = atomic_load_explicit((_Atomic uint64_t *)&s->shared.head,
                                 memory_order_acquire);
    }
    size_t words;
    ark_status st;
    uint64_t *marked = marked_outside(s, &words, &st);
    if (st != ARK_OK) {
        return st;
    }
    hd->index_min = s->lo;
    hd->index_max = s->end - 1;
    /* A keyed container takes no fresh indices: both follow issued. */
    hd->frontier = s->keyed ? s->v->issued : ark__slots_frontier(s);
    hd->run_end = s->keyed ? s->v->issued : s->chunk_end;
    hd->dropped = s->dropped;
    hd->flags = s->claims_seen ? 1 : 0;
    hd->nstock = s->stock_tail - h;
    hd->nclaimed = s->nclaimed + (h - s->reaped);
    hd->nparked = s->parked;
    hd->noutside = save_outside(s, NULL, marked, false);
    ark__free(&s->alloc, marked, words * sizeof *marked);
    return ARK_OK;
}

/* The claims section: the stock not yet claimed (oldest first), the
 * claimed slots below issued, the slots outside the range that are not
 * implicit; as many as hd says. */
static ark_status save_claims(const ark__slots *s, ark__snap_out *o,
                              const ark__snap_header *hd) {
    const ark__slots_view *v = s->v;
    uint64_t h = s->stock_tail - hd->nstock;
    uint32_t taken[ARK__STOCK_CAP];
    size_t ntaken = 0;
    for (uint64_t k = s->reaped; k < h; k++) {
        uint64_t e = atomic_load_explicit(
            &s->shared.stock[k & (ARK__STOCK_CAP - 1)], memory_order_relaxed);
        taken[ntaken++] = (uint32_t)(e & v->layout.index_mask);
    }
    qsort(taken, ntaken, sizeof *taken, ark__cmp_u32);
    size_t words;
    ark_status st;
    uint64_t *marked = marked_outside(s, &words, &st);
    if (st != ARK_OK) {
        return st;
    }
    for (uint64_t k = h; k < s->stock_tail; k++) {
        uint64_t e = atomic_load_explicit(
            &s->shared.stock[k & (ARK__STOCK_CAP - 1)], memory_order_relaxed);
        ark__snap_put32(o, (uint32_t)(e & v->layout.index_mask));
        ark__snap_put32(
            o, (uint32_t)((e >> v->layout.index_bits) & v->layout.gen_mask));
    }
    save_claimed(s, o, taken, ntaken);
    save_outside(s, o, marked, true);
    ark__free(&s->alloc, marked, words * sizeof *marked);
    return ARK_OK;
}

ark_status ark__slots_save(const ark__slots *s, ark__snap_out *o,
                           const ark__slots_io *io,
                           const ark__snap_header *hd) {
    const ark__slots_view *v = s->v;
    size_t payload = io->payload;
    if (payload == 0) {
        save_runs(v, o, 1, s->v->issued, 0, SAVE_STAMPS);
    }
    /* A pool's slots in blocks: one stamp for a block of live slots with
     * the same generation, else every stamp; then the payloads. */
    bool mixed = false;
    for (uint64_t i = 1; i < s->v->issued && payload != 0;) {
        uint64_t end = s->v->issued - i < ARK__SNAP_BLOCK ? s->v->issued
                                                          : i + ARK__SNAP_BLOCK;
        save_block(v, o, i, end, payload, &mixed);
        i = end;
    }
    ark_status st = save_ring(s, o);
    for (size_t k = s->pending_done; k < s->npending && st == ARK_OK; k++) {
        uint64_t e = s->pending[k];
        ark__snap_put32(o, (uint32_t)e);
        ark__snap_put32(o, (uint32_t)(e >> 32));
        if (payload != 0) {
            ark__snap_put(o, ark__slots_at(v, e & UINT32_MAX) + v->data_off,
                          payload);
        }
    }
    if (st == ARK_OK) {
        st = save_claims(s, o, hd);
    }
    return st;
}

ark_status ark__slots_load_header(ark__slots *s, const ark__snap_header *hd,
                                  bool key_given) {
    const ark__handle_layout *l = &s->v->layout;
    uint64_t tag = l->tag_bits == 0 ? 0 : l->tag_high >> l->gen_bits;
    if (hd->index_bits != l->index_bits || hd->gen_bits != l->gen_bits ||
        hd->tag_bits != l->tag_bits || hd->tag != tag) {
        return ARK_EINVAL;
    }
    uint64_t n = hd->issued;
    /* A version 2 snapshot knows no index range: the whole layout. */
    uint64_t lo = hd->version < 3 ? 1 : hd->index_min;
    uint64_t hi = hd->version < 3 ? s->limit - 1 : hd->index_max;
    if (lo != s->lo || hi != s->end - 1) {
        return ARK_EINVAL;
    }
    if (n == 0 || n > s->limit || hd->live >= n || hd->nfree >= n ||
        hd->npending >= n || hd->retired >= n || hd->nstock >= n ||
        hd->nclaimed >= n || hd->nparked >= n || hd->noutside >= n ||
        hd->live + hd->nfree + hd->npending + hd->retired + hd->nstock +
                hd->nclaimed + hd->nparked + 1 !=
            n) {
        return ARK_ECORRUPT;
    }
    /* The frontier and the owner's run (version 2: both at issued). */
    uint64_t f = hd->frontier, run = hd->run_end;
    if (hd->version >= 3 &&
        (f < s->lo || f > s->end || run < n ||
         (run <= s->end ? run > f : run != n) || hd->dropped > f ||
         hd->flags > 1 || hd->nstock > ARK__STOCK_CAP ||
         hd->noutside > hd->nparked + hd->retired)) {
        return ARK_ECORRUPT;
    }
    if (hd->version >= 3 && s->keyed &&
        (f != n || run != n || hd->dropped != 0 || hd->flags != 0 ||
         hd->nstock != 0 || hd->nclaimed != 0 || hd->nparked != 0 ||
         hd->noutside != 0)) {
        return ARK_ECORRUPT; /* a keyed container has no claim state */
    }
    if (key_given) {
        if (memcmp(hd->keys, s->seal_keys, sizeof s->seal_keys) != 0) {
            return ARK_EINVAL;
        }
    } else if (!s->keyed) { /* a keyed container seals as its key space */
        memcpy(s->seal_keys, hd->keys, sizeof s->seal_keys);
    }
    return ARK_OK;
}

uint64_t ark__slots_snap_bytes(const ark__snap_header *hd, size_t payload) {
    /* issued <= 2^32 and payload < 2^17: no sum can wrap. A pool's blocks
     * take 8 bytes at least (the mode and one stamp): a block that lists
     * its stamps announces the rest when its mode arrives. */
    uint64_t slots =
        payload == 0
            ? 4 * (hd->issued - 1)
            : 8 * ((hd->issued - 1 + ARK__SNAP_BLOCK - 1) / ARK__SNAP_BLOCK);
    return slots + hd->live * payload + 8 * hd->nfree +
           hd->npending * (8 + (uint64_t)payload) +
           8 * (hd->nstock + hd->nclaimed + hd->noutside);
}

/* Where a load of slot records stands. */
typedef struct load_pos {
    uint64_t i;    /* next slot */
    size_t pos;    /* next byte of the buffer */
    uint64_t live; /* live slots so far */
} load_pos;

/* A table's stamps of slots [at->i, end) from buf, all of them in the
 * buffer (the caller checked). Returns false on a generation past
 * gen_max. */
static bool load_stamps_run(const ark__slots_view *v, load_pos *at,
                            uint64_t end, const unsigned char *buf) {
    uint32_t gen_max = v->layout.gen_max;
    size_t stride = v->stride, pos = at->pos;
    uint64_t i = at->i, live = at->live;
    bool ok = true;
    while (i < end && ok) {
        uint64_t stop;
        char *slot = snap_run(v, i, end, &stop);
        for (; i < stop; i++, slot += stride) {
            ARK__PREFETCH_W(slot + 2048);
            uint32_t stamp = ark__snap_le32(buf + pos);
            pos += 4;
            if (stamp == 0) {
                continue;
            }
            if (stamp - 1 > gen_max) {
                ok = false;
                break;
            }
            memcpy(slot, &stamp, 4);
            live++;
        }
    }
    at->i = i;
    at->pos = pos;
    at->live = live;
    return ok;
}

/* One stamp, which may straddle buffer fills. */
static ark_status load_stamp_one(ark__slots *s, ark__snap_in *in,
                                 load_pos *at) {
    const ark__slots_view *v = s->v;
    uint64_t i = at->i++;
    uint32_t stamp = ark__snap_get32(in);
    if (in->st != ARK_OK || stamp == 0) {
        return in->st;
    }
    if (stamp - 1 > v->layout.gen_max) {
        return ARK_ECORRUPT;
    }
    *ark__slots_stamp(ark__slots_at(v, i)) = stamp;
    at->live++;
    return ARK_OK;
}

/* A table's slots section: the stamps of slots [1, issued), storage
 * growing as they arrive. Counts the live slots seen. */
static ark_status load_stamps(ark__slots *s, ark__snap_in *in, uint64_t issued,
                              uint64_t *live) {
    const ark__slots_view *v = s->v;
    load_pos at = {1, 0, 0};
    while (at.i < issued) {
        if (at.i >= v->cap) {
            ark_status st = ark__slots_grow_to(s, at.i + 1);
            if (st != ARK_OK) {
                return st;
            }
        }
        /* Every slot whose stamp surely is in the buffer, in one run. */
        uint64_t n = (in->len - in->pos) / 4;
        uint64_t end = issued < v->cap ? issued : v->cap;
        end = end - at.i < n ? end : at.i + n;
        if (end == at.i) {
            ark_status st = load_stamp_one(s, in, &at);
            if (st != ARK_OK) {
                return st;
            }
            continue;
        }
        at.pos = in->pos;
        bool ok = load_stamps_run(v, &at, end, in->buf);
        in->pos = at.pos;
        if (!ok) {
            return ARK_ECORRUPT;
        }
    }
    *live = at.live;
    return in->st;
}

/* Payloads of slots [at->i, end), all of them in the buffer from at->pos
 * (the caller checked): with stamps NULL every slot is live with stamp
 * same, else the live ones of stamps[] (stamps[k] of slot at->i + k, 0 if
 * not live). Inlined with constant arguments for the common sizes, like
 * save_run. */
static ARK__ALWAYS_INLINE inline void
load_payloads(const ark__slots_view *v, load_pos *at, uint64_t end,
              const uint32_t *stamps, uint32_t same, const unsigned char *buf,
              size_t payload) {
    size_t off = v->data_off, stride = v->stride, pos = at->pos;
    uint64_t i = at->i, live = at->live, first = at->i;
    while (i < end) {
        uint64_t stop;
        char *slot = snap_run(v, i, end, &stop);
        for (; i < stop; i++, slot += stride) {
            ARK__PREFETCH_W(slot + 2048);
            uint32_t stamp = stamps == NULL ? same : stamps[i - first];
            if (stamps != NULL && stamp == 0) {
                continue;
            }
            memcpy(slot, &stamp, 4);
            ark__copy_small(slot + off, buf + pos, payload);
            pos += payload;
            live++;
        }
    }
    at->i = i;
    at->pos = pos;
    at->live = live;
}

/* load_payloads with the payload size a constant for the common sizes, in
 * functions of their own (see save_block8). */
static ARK__NOINLINE void load_payloads8(const ark__slots_view *v, load_pos *at,
                                         uint64_t end, const uint32_t *stamps,
                                         uint32_t same,
                                         const unsigned char *buf) {
    if (stamps == NULL) {
        load_payloads(v, at, end, NULL, same, buf, 8);
    } else {
        load_payloads(v, at, end, stamps, 0, buf, 8);
    }
}

static ARK__NOINLINE void load_payloads16(const ark__slots_view *v,
                                          load_pos *at, uint64_t end,
                                          const uint32_t *stamps, uint32_t same,
                                          const unsigned char *buf) {
    if (stamps == NULL) {
        load_payloads(v, at, end, NULL, same, buf, 16);
    } else {
        load_payloads(v, at, end, stamps, 0, buf, 16);
    }
}

static void load_payloads_any(const ark__slots_view *v, load_pos *at,
                              uint64_t end, const uint32_t *stamps,
                              uint32_t same, const unsigned char *buf,
                              size_t payload) {
    if (payload == 8) {
        load_payloads8(v, at, end, stamps, same, buf);
    } else if (payload == 16) {
        load_payloads16(v, at, end, stamps, same, buf);
    } else if (stamps == NULL) {
        load_payloads(v, at, end, NULL, same, buf, payload);
    } else {
        load_payloads(v, at, end, stamps, 0, buf, payload);
    }
}

/* A mode-0 block's stamps (the first already read) into stamps[0, n):
 * each a valid stamp, not all of them the one of a mode-1 block. Sets
 * *live to the number of live ones. */
static ark_status load_block_stamps(ark__snap_in *in, uint32_t *stamps,
                                    size_t n, uint32_t gen_max, size_t *live) {
    unsigned char raw[4 * ARK__SNAP_BLOCK];
    /* The first stamp came with the mode; the others are announced now. */
    ark__snap_in_expect(in, 4 * ((uint64_t)n - 1));
    ark__snap_get(in, raw, 4 * (n - 1));
    if (in->st != ARK_OK) {
        return in->st;
    }
    uint32_t first = stamps[0], differ = 0, bad = 0;
    size_t nlive = first != 0;
    for (size_t k = 1; k < n; k++) {
        uint32_t x = ark__snap_le32(raw + 4 * (k - 1));
        stamps[k] = x;
        differ |= x ^ first;
        nlive += x != 0;
        bad |= (uint32_t)(x != 0 && x - 1 > gen_max);
    }
    bad |= (uint32_t)(first != 0 && first - 1 > gen_max);
    /* One encoding per pool: all live with one stamp is mode 1. */
    if (bad != 0 || (differ == 0 && first != 0)) {
        return ARK_ECORRUPT;
    }
    *live = nlive;
    return ARK_OK;
}

/* One block of a pool's slots section: slots [at->i, end). */
static ark_status load_block(ark__slots *s, ark__snap_in *in,
                             const ark__slots_io *io, load_pos *at,
                             uint64_t end) {
    const ark__slots_view *v = s->v;
    uint32_t block[ARK__SNAP_BLOCK];
    size_t n = (size_t)(end - at->i), payload = io->payload;
    uint32_t mode = ark__snap_get32(in);
    uint32_t same = ark__snap_get32(in);
    if (in->st != ARK_OK) {
        return in->st;
    }
    uint32_t gen_max = v->layout.gen_max;
    const uint32_t *stamps = NULL; /* NULL: every slot live with same */
    size_t left = n;               /* live slots still to come */
    if (mode == ARK__SNAP_BLOCK_LIVE) {
        if (same == 0 || same - 1 > gen_max) {
            return ARK_ECORRUPT;
        }
    } else if (mode == ARK__SNAP_BLOCK_STAMPS) {
        block[0] = same;
        ark_status st = load_block_stamps(in, block, n, gen_max, &left);
        if (st != ARK_OK) {
            return st;
        }
        stamps = block;
    } else {
        return ARK_ECORRUPT;
    }
    /* Storage: for a block of listed stamps now (4 bytes of input per
     * slot have come), for a one-stamp block run by run, as the payloads
     * arrive. */
    if (stamps != NULL && end > v->cap) {
        ark_status st = ark__slots_grow_to(s, end);
        if (st != ARK_OK) {
            return st;
        }
    }
    uint64_t base = at->i;
    while (at->i < end) {
        const uint32_t *st_at = stamps == NULL ? NULL : stamps + (at->i - base);
        uint32_t stamp = st_at == NULL ? same : *st_at;
        if (stamp == 0) {
            at->i++;
            continue;
        }
        /* Every slot whose payload surely is in the buffer, in one run; a
         * payload that straddles a fill goes alone. */
        uint64_t fit = (in->len - in->pos) / payload;
        uint64_t stop = end;
        if (fit < left) {
            uint64_t nlive = 0;
            for (stop = at->i; stop < end && nlive < fit; stop++) {
                nlive += st_at == NULL || stamps[stop - base] != 0;
            }
        }
        uint64_t want = fit == 0 ? at->i + 1 : stop;
        if (want > v->cap) {
            ark_status st = ark__slots_grow_to(s, want);
            if (st != ARK_OK) {
                return st;
            }
        }
        if (fit == 0) {
            char *slot = ark__slots_at(v, at->i);
            memcpy(slot, &stamp, 4);
            ark__snap_get(in, slot + v->data_off, payload);
            at->i++;
            at->live++;
            left--;
            if (in->st != ARK_OK) {
                return in->st;
            }
            continue;
        }
        uint64_t live = at->live;
        at->pos = in->pos;
        load_payloads_any(v, at, stop, st_at, same, in->buf, payload);
        in->pos = at->pos;
        left -= (size_t)(at->live - live);
    }
    return ARK_OK;
}

/* A pool's slots section, block by block. Counts the live slots seen. */
static ark_status load_blocks(ark__slots *s, ark__snap_in *in, uint64_t issued,
                              const ark__slots_io *io, uint64_t *live) {
    load_pos at = {1, 0, 0};
    while (at.i < issued) {
        uint64_t end =
            issued - at.i < ARK__SNAP_BLOCK ? issued : at.i + ARK__SNAP_BLOCK;
        ark_status st = load_block(s, in, io, &at, end);
        if (st != ARK_OK) {
            return st;
        }
    }
    *live = at.live;
    return in->st;
}

/* One entry of the ring or pending section: a slot index and a
 * generation. The slot must be issued, not live and listed once, the
 * generation in range; *slot gets the slot. */
static ark_status read_listed(ark__slots *s, ark__snap_in *in, uint64_t *seen,
                              uint32_t *i, uint32_t *gen, char **slot) {
    *i = ark__snap_get32(in);
    *gen = ark__snap_get32(in);
    if (in->st != ARK_OK) {
        return in->st;
    }
    if (*i == 0 || *i >= s->v->issued || *gen > s->v->layout.gen_max) {
        return ARK_ECORRUPT;
    }
    *slot = ark__slots_at(s->v, *i);
    if (*ark__slots_stamp(*slot) != 0 || !ark__slots_see(seen, *i)) {
        return ARK_ECORRUPT;
    }
    s->ops->unlink(s->owner, *i);
    return ARK_OK;
}

/* One entry of the stock or claimed list of the claims section: as
 * read_listed, and a slot of the index range. */
static ark_status read_claimish(ark__slots *s, ark__snap_in *in, uint64_t *seen,
                                uint32_t *i, uint32_t *gen) {
    char *slot;
    ark_status st = read_listed(s, in, seen, i, gen, &slot);
    if (st == ARK_OK && !snap_in_range(s, *i)) {
        return ARK_ECORRUPT;
    }
    if (st == ARK_OK) {
        *ark__slots_next_gen(slot) = *gen;
    }
    return st;
}

/* The entries of the claims section: the stock, the claimed slots, the
 * slots outside the range (parked with a next generation other than 0,
 * or retired), the last two in increasing index order (one encoding). */
static ark_status load_claim_lists(ark__slots *s, ark__snap_in *in,
                                   uint64_t *seen, uint64_t nstock,
                                   uint64_t nclaimed, uint64_t noutside) {
    uint32_t i, gen;
    for (uint64_t k = 0; k < nstock; k++) {
        ark_status st = read_claimish(s, in, seen, &i, &gen);
        if (st != ARK_OK) {
            return st;
        }
        ark__slots_set_stocked(s, i, gen);
    }
    uint64_t prev = 0;
    for (uint64_t k = 0; k < nclaimed; k++, prev = i) {
        ark_status st = read_claimish(s, in, seen, &i, &gen);
        if (st != ARK_OK) {
            return st;
        }
        if (i <= prev) {
            return ARK_ECORRUPT;
        }
        ark__slots_set_claimed(s, i);
    }
    prev = 0;
    for (uint64_t k = 0; k < noutside; k++, prev = i) {
        i = ark__snap_get32(in);
        gen = ark__snap_get32(in);
        if (in->st != ARK_OK) {
            return in->st;
        }
        if (i <= prev || i >= s->v->issued || snap_in_range(s, i) || gen == 0 ||
            (gen > s->v->layout.gen_max && gen != ARK__RETIRED)) {
            return ARK_ECORRUPT;
        }
        char *slot = ark__slots_at(s->v, i);
        if (*ark__slots_stamp(slot) != 0 || !ark__slots_see(seen, i)) {
            return ARK_ECORRUPT;
        }
        *ark__slots_next_gen(slot) = gen;
        if (gen == ARK__RETIRED) {
            s->retired++;
        } else {
            s->parked++;
        }
        s->ops->unlink(s->owner, i);
    }
    return ARK_OK;
}

/* The claims section and the descriptor's claim fields (version 2 has
 * neither: the frontier and the owner's run start at issued). */
static ark_status load_claims(ark__slots *s, ark__snap_in *in,
                              const ark__snap_header *hd, uint64_t *seen) {
    uint64_t issued = s->v->issued;
    if (hd->version < 3) {
        atomic_store_explicit(&s->shared.frontier, issued,
                              memory_order_relaxed);
        s->chunk_end = issued;
        return ARK_OK;
    }
    if (hd->nstock + hd->nclaimed > 0) {
        ark_status st = ark__slots_claims_room(s, hd->nstock > 0);
        if (st != ARK_OK) {
            return st;
        }
    }
    atomic_store_explicit(&s->shared.frontier, hd->frontier,
                          memory_order_relaxed);
    s->chunk_end = hd->run_end;
    s->dropped = hd->dropped;
    s->claims_seen = hd->flags != 0;
    return load_claim_lists(s, in, seen, hd->nstock, hd->nclaimed,
                            hd->noutside);
}

/* The ring and pending sections, then retirement of the rest. */
static ark_status load_lists(ark__slots *s, ark__snap_in *in,
                             const ark__snap_header *hd,
                             const ark__slots_io *io, uint64_t *seen) {
    for (uint64_t k = 0; k < hd->nfree; k++) {
        uint32_t i, gen;
        char *slot;
        ark_status st = read_listed(s, in, seen, &i, &gen, &slot);
        if (st == ARK_OK && !snap_in_range(s, i)) {
            st = ARK_ECORRUPT; /* the ring holds slots of the range only */
        }
        if (st != ARK_OK) {
            return st;
        }
        *ark__slots_next_gen(slot) = gen;
        ark__slots_enqueue(s->v, i);
    }
    for (uint64_t k = 0; k < hd->npending; k++) {
        uint32_t i, gen;
        char *slot;
        ark_status st = read_listed(s, in, seen, &i, &gen, &slot);
        if (st == ARK_OK) {
            st = ark__slots_list_push(s, &s->pending, &s->npending,
                                      &s->pending_cap, i | (uint64_t)gen << 32);
        }
        if (st != ARK_OK) {
            return st;
        }
        s->held++;
        if (io->payload != 0) {
            ark__snap_get(in, slot + s->v->data_off, io->payload);
        }
    }
    ark_status st = load_claims(s, in, hd, seen);
    if (st != ARK_OK) {
        return st;
    }
    /* Live and listed slots are distinct and counted: with nothing retired
     * and the whole layout as the range they are all the issued ones. The
     * rest is retired, or, outside the range, parked with generation 0; a
     * keyed container's rest is vacant (their bits clear already). */
    uint64_t *other = s->keyed ? &s->vacant : &s->retired;
    bool outside = !s->keyed && (s->lo > 1 || s->v->issued > s->end);
    for (uint64_t i = 1; i < s->v->issued && (hd->retired > *other || outside);
         i++) {
        char *slot = ark__slots_at(s->v, i);
        bool in_range = snap_in_range(s, i);
        if (*ark__slots_stamp(slot) != 0) {
            s->outside += !in_range;
        } else if (ark__slots_see(seen, i)) {
            if (s->keyed) {
                s->vacant++;
                continue;
            }
            *ark__slots_next_gen(slot) = in_range ? ARK__RETIRED : 0;
            s->retired += in_range;
            s->parked += !in_range;
            s->ops->unlink(s->owner, i);
        }
    }
    for (size_t k = s->pending_done; k < s->npending && outside; k++) {
        s->outside += !snap_in_range(s, s->pending[k] & UINT32_MAX);
    }
    ark__slots_refresh_fast(s);
    return *other == hd->retired && s->parked == hd->nparked ? in->st
                                                             : ARK_ECORRUPT;
}

ark_status ark__slots_load(ark__slots *s, ark__snap_in *in,
                           const ark__snap_header *hd,
                           const ark__slots_io *io) {
    uint64_t live = 0;
    s->vacant = 0; /* a keyed container counts its vacant slots anew */
    ark_status st = io->payload == 0
                        ? load_stamps(s, in, hd->issued, &live)
                        : load_blocks(s, in, hd->issued, io, &live);
    if (st == ARK_OK && (live != hd->live || (s->keyed && hd->nfree != 0))) {
        st = ARK_ECORRUPT;
    }
    if (st == ARK_OK && hd->issued > 1 && !s->keyed) {
        st = ark__slots_grow_ring(s, ark__slots_ring_want(s, hd->issued));
    }
    if (st != ARK_OK) {
        return st;
    }
    s->v->issued = hd->issued;
    /* One bit per issued slot: justified, the slots have arrived. */
    size_t words = (size_t)((hd->issued + 63) >> 6);
    uint64_t *seen = ark__alloc(&s->alloc, words * sizeof *seen, 0);
    if (seen == NULL) {
        return ARK_ENOMEM;
    }
    memset(seen, 0, words * sizeof *seen);
    st = load_lists(s, in, hd, io, seen);
    ark__free(&s->alloc, seen, words * sizeof *seen);
    if (st == ARK_OK && s->keyed) {
        /* Storage past the saved slots (a page rounds up) is vacant too;
         * then every element must belong to its entity. */
        st = ark__slots_keyed_grow(s, hd->issued);
        if (st == ARK_OK) {
            st = ark__slots_keyed_valid(s);
        }
    }
    ark__slots_refresh_fresh(s);
    return st;
}
