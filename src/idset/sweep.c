/* SPDX-License-Identifier: MIT */
/*
 * sweep.c - the frame-end sweep (remove_sorted) and copy.
 *
 * The sweep decodes each group from the first one a batch id can touch,
 * copies the runs between batch ids to an output buffer and rewrites
 * output groups in order. Output group k is written only after input group
 * k was decoded (writes lag reads), so one pass suffices.
 *
 * When the batch ends nearer the front than it starts from the back (the
 * oldest ids, removed at frame end), the sweep runs backwards instead,
 * from the group holding the last batch id down to group 0: kept ids move
 * towards the back, output groups fill from their last slot down, output
 * group k is written only after input group k was decoded (kept ids only
 * move up), and the groups left empty at the front are dropped, the new
 * first group partial (the front gap). Either way the sweep rewrites the
 * groups between the batch and the nearer end, not the whole set.
 */
#include "idset/idset.h"

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

/* Write output group k of the backward sweep. Groups are written downwards,
 * so an even group is written after its odd buddy: when both end up dense
 * and apart, the odd one joins the even one's free half (the forward
 * writer gets this from write_group, which joins an odd group to an even
 * buddy written before it). */
static void write_back(ark_idset *s, size_t k, const uint32_t *v, size_t len) {
    ark__idset_write_group(s, k, v, len);
    size_t b = k + 1;
    if (!is_odd(s, k) && b < s->v.ngroups && s->v.groups[b].dense &&
        !ark__idset_shares(s, b) && ark__idset_free_half(s, k) != NULL) {
        ark__idset_join(s, b);
    }
}

/* Prepend v[0, n) to the backward sweep's buffer, which fills from its
 * last slot down (buf[256 - len, 256)); a full buffer becomes the group
 * below the last one written (o->k counts down, one past it). */
static void sweep_emit_back(ark_idset *s, sweep_out *o, const uint32_t *v,
                            size_t n) {
    while (n > 0) {
        size_t c = GROUP_SIZE - o->len < n ? GROUP_SIZE - o->len : n;
        memcpy(o->buf + GROUP_SIZE - o->len - c, v + n - c,
               c * sizeof(uint32_t));
        o->len += c;
        o->total += c;
        n -= c;
        if (o->len == GROUP_SIZE) {
            write_back(s, --o->k, o->buf, GROUP_SIZE);
            o->len = 0;
        }
    }
}

/* Copy the ids of in[0, len) that are not in ids[0, *b) to o, from the
 * back; move *b down past the batch ids at or above in[0]. */
static void sweep_group_back(ark_idset *s, sweep_out *o, const uint32_t *in,
                             size_t len, const uint32_t *ids, size_t *b) {
    size_t t = len;
    while (t > 0 && *b > 0 && ids[*b - 1] >= in[0]) {
        uint32_t id = ids[--*b];
        if (id > in[t - 1]) {
            continue; /* absent, or a repeat */
        }
        size_t p = ark__idset_lower32(in, t, id);
        size_t q = p + (in[p] == id);
        sweep_emit_back(s, o, in + q, t - q);
        t = p;
    }
    sweep_emit_back(s, o, in, t);
}

/* Nodes for the backward sweep's promotions, bounded as sweep_need does:
 * kept ids move up by at most n positions, so output group k holds values
 * in [the id n positions before its start, its own last id]. A dense
 * group whose window holds both cannot promote; any other dense group may
 * need a node (in this order an odd group, written first, can join its
 * even buddy's free half, so sharing is not known in advance). */
static size_t sweep_back_need(const ark_idset *s, size_t k1, size_t n) {
    size_t need = 0;
    for (size_t k = 0; k <= k1; k++) {
        const grp *h = &s->v.groups[k];
        if (!h->dense) {
            continue;
        }
        size_t start = group_start(s, k);
        unsigned j;
        size_t g = locate(s, start > n ? start - n : 0, &j);
        uint32_t top = ark_idset_at(s, start + glen(s, k) - 1);
        need += !fits(h, s->v.keys[g]) || !fits(h, top);
    }
    return need;
}

/* The backward sweep of groups [0, k1] (see the top); the caller acquired
 * sweep_back_need(s, k1, n) nodes. */
static void sweep_backward(ark_idset *s, size_t k1, const uint32_t *ids,
                           size_t n) {
    size_t in_count = group_start(s, k1) + glen(s, k1);
    sweep_out o = {{0}, 0, k1 + 1, 0};
    size_t b = n;
    for (size_t i = k1 + 1; i-- > 0;) {
        uint32_t in[GROUP_SIZE];
        size_t len = glen(s, i);
        ark__idset_decode_group(s, i, len, in);
        sweep_group_back(s, &o, in, len, ids, &b);
    }
    if (o.len > 0) {
        write_back(s, --o.k, o.buf + GROUP_SIZE - o.len, o.len);
    }
    STAT_ADD(s, moves, o.total);
    s->v.count -= in_count - o.total;
    ark__idset_drop_front(s, o.k);
    s->v.front = o.len > 0 ? GROUP_SIZE - o.len : 0;
}

static int is_sorted(const uint32_t *ids, size_t n) {
    for (size_t i = 1; i < n; i++) {
        if (ids[i] < ids[i - 1]) {
            return 0;
        }
    }
    return 1;
}

/* The forward sweep of groups [k0, ngroups) (see the top); the caller
 * acquired sweep_need(s, k0, n) nodes. */
static void sweep_forward(ark_idset *s, size_t k0, const uint32_t *ids,
                          size_t n) {
    /* Output groups are full from the first rewritten one on: when that
     * is group 0, the front gap closes. */
    size_t before = group_start(s, k0), oldng = s->v.ngroups;
    sweep_out o = {{0}, 0, k0, 0};
    size_t b = 0;
    for (size_t i = k0; i < oldng; i++) {
        uint32_t in[GROUP_SIZE];
        size_t len = glen(s, i);
        ark__idset_decode_group(s, i, len, in);
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
}

/* How the sweep of the sorted batch ids[0, n) runs: backwards from group
 * *k (the one holding the last batch id), or forwards from it (the one
 * holding the first), and the nodes it needs. False when every batch id
 * is above every id held: nothing to do. Groups before the one holding
 * the first batch id and after the one holding the last keep their ids;
 * the sweep rewrites the groups between the batch and the nearer end. */
static bool sweep_plan(const ark_idset *s, const uint32_t *ids, size_t n,
                       int *back, size_t *k, size_t *need) {
    size_t p0 = ark_idset_lower_bound(s, ids[0]);
    if (p0 >= s->v.count) {
        return false;
    }
    size_t p1 = ark_idset_lower_bound(s, ids[n - 1]), ng = s->v.ngroups;
    unsigned j;
    size_t k0 = locate(s, p0, &j);
    size_t k1 = p1 < s->v.count ? locate(s, p1, &j) : ng - 1;
    *back = k1 + 1 < ng - k0;
    *k = *back ? k1 : k0;
    *need = *back ? sweep_back_need(s, k1, n) : sweep_need(s, k0, n);
    return true;
}

ark_status ark__idset_remove_sorted_prepare(ark_idset *s, const uint32_t *ids,
                                            size_t n) {
    int back;
    size_t k, need;
    if (n == 0 || ids == NULL || !is_sorted(ids, n) ||
        !sweep_plan(s, ids, n, &back, &k, &need)) {
        return ARK_OK; /* nothing to take (remove_sorted reports a bad batch) */
    }
    return ark__idset_acquire(s, need, s->v.ngroups);
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
    int back;
    size_t k, need;
    if (!sweep_plan(s, ids, n, &back, &k, &need)) {
        return ARK_OK;
    }
    if (ark__idset_acquire(s, need, s->v.ngroups) != ARK_OK) {
        return ARK_ENOMEM;
    }
    if (back) {
        sweep_backward(s, k, ids, n);
    } else {
        sweep_forward(s, k, ids, n);
    }
    ark__idset_node_trim(s);
    for (size_t i = 0; i < n && s->v.present != NULL; i++) {
        ark__idset_mark(&s->v, ids[i], false); /* absent ones were clear */
    }
    if (s->epoch != NULL) {
        (*s->epoch)++;
    }
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
        ark__idset_decode(s, k, j, seg, out + done);
        done += seg;
        pos += seg;
    }
    return n;
}
