/* SPDX-License-Identifier: MIT */
/*
 * idset_sweep.c - the frame-end sweep (remove_sorted) and copy.
 *
 * The sweep decodes each group from the first one a batch id can touch,
 * copies the runs between batch ids to an output buffer and rewrites
 * output groups in order. Output group k is written only after input group
 * k was decoded (writes lag reads), so one pass suffices.
 */
#include "idset_internal.h"

/* The output side of the sweep: a buffer of up to 256 kept ids, flushed
 * into group k. */
typedef struct sweep_out {
    uint32_t buf[GROUP_SIZE];
    size_t len, k;
    size_t total; /* ids kept so far */
} sweep_out;

static void sweep_emit(ark_idset *s, sweep_out *o, const uint32_t *v,
                       size_t n) {
    while (n > 0) {
        size_t c = GROUP_SIZE - o->len < n ? GROUP_SIZE - o->len : n;
        memcpy(o->buf + o->len, v, c * sizeof(uint32_t));
        o->len += c;
        o->total += c;
        v += c;
        n -= c;
        if (o->len == GROUP_SIZE) {
            ark__idset_write_group(s, o->k++, o->buf, GROUP_SIZE);
            o->len = 0;
        }
    }
}

/* Nodes for the sweep's promotions, bounded without finding the batch:
 * output group k holds kept ids from input positions [256k, 256k + 255 +
 * n], so its values lie in [keys[k], keys[(256k + 255 + n) / 256 + 1]] (or
 * the maximum). A dense group whose window holds both ends cannot promote;
 * any other dense group that shares its node may. */
static size_t sweep_need(const ark_idset *s, size_t k0, size_t n) {
    size_t need = 0, count = s->v.count + s->v.front, ng = s->v.ngroups;
    uint32_t top = ark_idset_at(s, s->v.count - 1);
    for (size_t k = k0; k < ng; k++) {
        const grp *h = &s->v.groups[k];
        if (!h->dense || !ark__idset_shares(s, k)) {
            continue;
        }
        size_t hi =
            k * GROUP_SIZE + LAST_SLOT + s->v.front + (n < count ? n : count);
        size_t g = hi / GROUP_SIZE + 1;
        uint32_t up = hi >= count - 1 || g >= ng ? top : s->v.keys[g];
        need += !fits(h, s->v.keys[k]) || !fits(h, up);
    }
    return need;
}

/* Copy the ids of in[0, len) that are not in ids[*b, n) to o; advance *b
 * past the batch ids at or below in[len - 1]. */
static void sweep_group(ark_idset *s, sweep_out *o, const uint32_t *in,
                        size_t len, const uint32_t *ids, size_t n, size_t *b) {
    size_t t = 0;
    while (t < len && *b < n && ids[*b] <= in[len - 1]) {
        uint32_t id = ids[(*b)++];
        if (id < in[t]) {
            continue; /* absent, or a repeat */
        }
        size_t p = t + ark__idset_lower32(in + t, len - t, id);
        sweep_emit(s, o, in + t, p - t);
        t = p + (in[p] == id);
    }
    sweep_emit(s, o, in + t, len - t);
}

static int is_sorted(const uint32_t *ids, size_t n) {
    for (size_t i = 1; i < n; i++) {
        if (ids[i] < ids[i - 1]) {
            return 0;
        }
    }
    return 1;
}

ark_status ark_idset_remove_sorted(ark_idset *s, const uint32_t *ids,
                                   size_t n) {
    assert(s != NULL);
    stats_reset(s);
    if (n == 0) {
        return ARK_OK;
    }
    if (ids == NULL || !is_sorted(ids, n)) {
        return ARK_EINVAL;
    }
    /* Groups before the one holding the first batch id are untouched. */
    size_t p0 = ark_idset_lower_bound(s, ids[0]);
    if (p0 >= s->v.count) {
        return ARK_OK;
    }
    unsigned j0;
    size_t k0 = locate(s, p0, &j0), oldng = s->v.ngroups;
    if (ark__idset_acquire(s, sweep_need(s, k0, n), oldng) != ARK_OK) {
        return ARK_ENOMEM;
    }
    /* Output groups are full from the first rewritten one on: when that
     * is group 0, the front gap closes. */
    size_t before = group_start(s, k0);
    sweep_out o = {{0}, 0, k0, 0};
    size_t b = 0;
    for (size_t i = k0; i < oldng; i++) {
        uint32_t in[GROUP_SIZE];
        size_t len = glen(s, i);
        ark__idset_decode_group(&s->v.groups[i], len, in);
        sweep_group(s, &o, in, len, ids, n, &b);
    }
    if (o.len > 0) {
        ark__idset_write_group(s, o.k++, o.buf, o.len);
    }
    STAT_ADD(s, moves, s->v.count - before);
    /* Drop the groups past the new end; count first so glen sees it. */
    s->v.count = before + o.total;
    if (k0 == 0) {
        s->v.front = 0;
    }
    while (s->v.ngroups > o.k) {
        ark__idset_drop_last(s);
    }
    ark__idset_node_trim(s);
    return ARK_OK;
}

size_t ark_idset_copy(const ark_idset *s, size_t pos, uint32_t *out, size_t n) {
    assert(s != NULL);
    if (pos >= s->v.count || n == 0) {
        return 0;
    }
    if (n > s->v.count - pos) {
        n = s->v.count - pos;
    }
    for (size_t done = 0; done < n;) {
        unsigned j;
        size_t k = locate(s, pos, &j);
        size_t seg = glen(s, k) - j;
        if (seg > n - done) {
            seg = n - done;
        }
        ark__idset_decode(&s->v.groups[k], j, seg, out + done);
        done += seg;
        pos += seg;
    }
    return n;
}
