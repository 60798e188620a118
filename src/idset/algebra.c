/* SPDX-License-Identifier: MIT */
/*
 * algebra.c - intersect, union, difference and intersect_count.
 *
 * Sets of comparable size are merged group by group: a cursor per input
 * decodes one group into a uint32 buffer (dense groups are widened by a
 * vectorised loop), a branchless merge kernel runs over the two buffers
 * (intersections four ids against four at a time with SSE2, where the
 * target has it), and a builder turns every 256 results into a new group
 * of the result (its form chosen from its range, buddies sharing nodes as
 * usual). A cursor skips, undecoded, whole groups that lie below the other
 * side's current id when they cannot contribute (intersection, and the b
 * side of a difference).
 *
 * When one side is GALLOP_RATIO times smaller, the small side is walked
 * with the iterator and each id is looked up in the large side by
 * galloping over its contiguous key array from the last group found, then
 * searching inside one group: O(small * log(large / small)).
 *
 * The result is built in a set beside out (same allocator); only when
 * it is complete are the two swapped, so out may alias an input and a
 * failure leaves out unchanged.
 */
#include "idset/idset.h"

#if !defined(ARK_IDSET_NO_SIMD) && (defined(__SSE2__) || defined(_M_X64) ||    \
                                    (defined(_M_IX86_FP) && _M_IX86_FP >= 2))
#include <emmintrin.h>
#define ALGEBRA_SSE2 1
#endif

#define GALLOP_RATIO 32u
#define BUILD_CAP (3u * GROUP_SIZE) /* one partial group + two buffers */

enum set_op { OP_AND, OP_OR, OP_ANDNOT, OP_COUNT };

/* ---- cursor: one decoded group at a time --------------------------------- */

typedef struct cursor {
    const ark_idset *s;
    size_t k;    /* the next group to decode */
    size_t i, n; /* buf[i, n) is still to be merged */
    uint32_t buf[GROUP_SIZE];
} cursor;

static void cursor_init(cursor *c, const ark_idset *s) {
    c->s = s;
    c->k = 0;
    c->i = 0;
    c->n = 0;
}

/* The current id, or 0 (no skipping) when the buffer is used up. */
static inline uint32_t cursor_id(const cursor *c) {
    return c->i < c->n ? c->buf[c->i] : 0;
}

/* Decode the next group that holds an id >= lo (the groups whose ids are
 * all below lo are skipped undecoded); 0 at the end of the set. */
static int cursor_fill(cursor *c, uint32_t lo) {
    const ark__idset_view *v = &c->s->v;
    while (c->k + 1 < v->ngroups && v->keys[c->k + 1] <= lo) {
        c->k++;
    }
    if (c->k >= v->ngroups) {
        return 0;
    }
    c->n = glen(c->s, c->k);
    ark__idset_decode_group(c->s, c->k, c->n, c->buf);
    c->i = 0;
    c->k++;
    return 1;
}

/* ---- builder: the result, appended group by group ------------------------ */

/* Append a new last group holding len (1..256) sorted ids, all above the
 * current maximum, to a set whose groups are all full: the builder of the
 * set algebra. Allocates (a node, header capacity) and fails with the set
 * unchanged. */
static ark_status append_group(ark_idset *s, const uint32_t *v, size_t len) {
    assert(s->v.count == s->v.ngroups * GROUP_SIZE);
    size_t k = s->v.ngroups;
    int dense = v[len - 1] - v[0] <= DENSE_SPAN;
    int half = dense && ark__idset_free_half(s, even_buddy(s, k)) != NULL;
    if (ark__idset_acquire(s, !half, k + 1) != ARK_OK) {
        return ARK_ENOMEM;
    }
    ark__idset_add_group(s, v[0]); /* a dense group holding v[0] */
    s->v.count += len;
    ark__idset_write_group(s, k, v, len);
    return ARK_OK;
}

typedef struct builder {
    struct ark_idset set; /* the result, built aside */
    size_t n;             /* ids in buf not yet written */
    ark_status st;        /* the first failure; later appends are skipped */
    uint32_t buf[BUILD_CAP];
} builder;

static void builder_init(builder *b, const ark_allocator *al) {
    memset(&b->set, 0, sizeof(b->set));
    b->set.alloc = *al;
    b->n = 0;
    b->st = ARK_OK;
}

/* Write every full group of the buffer; keep the partial rest. */
static void builder_flush(builder *b) {
    size_t w = 0;
    for (; b->n - w >= GROUP_SIZE; w += GROUP_SIZE) {
        if (b->st == ARK_OK) {
            b->st = append_group(&b->set, b->buf + w, GROUP_SIZE);
        }
    }
    if (w > 0) {
        memmove(b->buf, b->buf + w, (b->n - w) * sizeof(uint32_t));
        b->n -= w;
    }
}

static void builder_push(builder *b, uint32_t id) {
    b->buf[b->n++] = id;
    if (b->n == GROUP_SIZE) {
        builder_flush(b);
    }
}

static void builder_push_run(builder *b, const uint32_t *v, size_t n) {
    while (n > 0) {
        size_t c = GROUP_SIZE < n ? GROUP_SIZE : n;
        memcpy(b->buf + b->n, v, c * sizeof(uint32_t));
        b->n += c;
        v += c;
        n -= c;
        builder_flush(b);
    }
}

/* Write the last partial group, then swap the result into out (whose old
 * contents are freed), or free the result on failure. */
static ark_status builder_finish(builder *b, ark_idset *out) {
    if (b->st == ARK_OK && b->n > 0) {
        b->st = append_group(&b->set, b->buf, b->n);
    }
    if (b->st != ARK_OK) {
        ark__idset_free_all(&b->set);
        return b->st;
    }
    struct ark_idset old = *out;
    *out = b->set;
    out->alloc = old.alloc; /* the same: the builder took out's */
    out->detach = old.detach;
    out->detach_ctx = old.detach_ctx;
    out->epoch = old.epoch;
    out->present_words = old.present_words;
    out->v.present = old.v.present;
    out->v.present_bits = old.v.present_bits;
    old.v.present = NULL; /* free_all would clear them */
    old.v.present_bits = 0;
    ark__idset_free_all(&old);
    if (out->v.present != NULL) {
        memset(out->v.present, 0, out->present_words * 8);
        for (ark_idset_iter it = ark_idset_iter_begin(out, 0);
             ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
            ark__idset_mark(&out->v, it.id, true);
        }
        if (out->epoch != NULL) {
            (*out->epoch)++;
        }
    }
    stats_reset(out);
    return ARK_OK;
}

/* Append every id the cursor has not merged yet. */
static void builder_drain(builder *b, cursor *c) {
    do {
        builder_push_run(b, c->buf + c->i, c->n - c->i);
        c->i = c->n;
    } while (cursor_fill(c, 0));
}

/* ---- merge kernels ------------------------------------------------------- */

#ifdef ALGEBRA_SSE2
/* The bits of m (0..15) that are set. */
static ARK__ALWAYS_INLINE inline size_t bits4(unsigned m) {
    return (size_t)((0x4332322132212110ull >> (m * 4)) & 15);
}

/* Intersection (OP_AND) or its count (OP_COUNT) four ids against four:
 * all 16 pairs of x[i, i+4) and y[j, j+4) are compared at once, the ids
 * of x that are in y written (or counted) in order, and the side whose
 * fourth id is smaller moves on by four (both when they are equal: ids
 * are distinct and sorted, so an id of the side that stays can only
 * match in the other side's next four). Runs while both sides have four
 * ids left; the scalar kernel finishes. */
static ARK__ALWAYS_INLINE inline void
and_blocks(int op, const uint32_t *x, size_t nx, size_t *pi, const uint32_t *y,
           size_t ny, size_t *pj, uint32_t *out, size_t *po) {
    size_t i = *pi, j = *pj, o = *po;
    while (i + 4 <= nx && j + 4 <= ny) {
        __m128i p = _mm_loadu_si128((const __m128i *)(const void *)(x + i));
        __m128i q = _mm_loadu_si128((const __m128i *)(const void *)(y + j));
        __m128i e = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi32(p, q),
                         _mm_cmpeq_epi32(p, _mm_shuffle_epi32(q, 0x39))),
            _mm_or_si128(_mm_cmpeq_epi32(p, _mm_shuffle_epi32(q, 0x4e)),
                         _mm_cmpeq_epi32(p, _mm_shuffle_epi32(q, 0x93))));
        unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(e));
        if (op == OP_COUNT) {
            o += bits4(m);
        } else {
            out[o] = x[i]; /* no branch on the data, unrolled */
            o += m & 1;
            out[o] = x[i + 1];
            o += (m >> 1) & 1;
            out[o] = x[i + 2];
            o += (m >> 2) & 1;
            out[o] = x[i + 3];
            o += m >> 3;
        }
        uint32_t p3 = x[i + 3], q3 = y[j + 3];
        i += (size_t)(p3 <= q3) * 4;
        j += (size_t)(q3 <= p3) * 4;
    }
    *pi = i;
    *pj = j;
    *po = o;
}
#endif

/* The merge kernel of op (OP_COUNT: count the ids in both, write nothing):
 * runs over both buffers until one is used up, with no branch on the data:
 * both indices advance by comparison results. out has room for every id
 * left in both buffers; returns how many were written (or counted). It is
 * instantiated once per op (always inlined into merge_op's cases). */
static ARK__ALWAYS_INLINE inline size_t merge_kernel(int op, cursor *a,
                                                     cursor *b, uint32_t *out) {
    size_t i = a->i, j = b->i, o = 0;
    const uint32_t *x = a->buf, *y = b->buf;
#ifdef ALGEBRA_SSE2
    if (op == OP_AND || op == OP_COUNT) {
        and_blocks(op, x, a->n, &i, y, b->n, &j, out, &o);
    }
#endif
    while (i < a->n && j < b->n) {
        uint32_t p = x[i], q = y[j];
        if (op == OP_OR) {
            out[o++] = p < q ? p : q;
        } else if (op == OP_COUNT) {
            o += p == q;
        } else {
            out[o] = p;
            o += op == OP_AND ? p == q : p < q;
        }
        i += p <= q;
        j += q <= p;
    }
    a->i = i;
    b->i = j;
    return o;
}

static size_t merge_op(int op, cursor *a, cursor *b, uint32_t *out) {
    switch (op) {
    case OP_AND:
        return merge_kernel(OP_AND, a, b, out);
    case OP_OR:
        return merge_kernel(OP_OR, a, b, out);
    case OP_ANDNOT:
        return merge_kernel(OP_ANDNOT, a, b, out);
    default:
        return merge_kernel(OP_COUNT, a, b, out);
    }
}

/* Refill whichever cursor is used up; 0 when that side has ended. The a
 * side never skips groups for a difference or a union (all of a is
 * kept), the b side only for an intersection or a difference. */
static int refill(cursor *a, cursor *b, int op) {
    if (a->i == a->n && !cursor_fill(a, op == OP_AND ? cursor_id(b) : 0)) {
        return 0;
    }
    if (b->i == b->n && !cursor_fill(b, op == OP_OR ? 0 : cursor_id(a))) {
        return 0;
    }
    return 1;
}

static ark_status merge(ark_idset *out, const ark_idset *a, const ark_idset *b,
                        int op) {
    builder bl;
    cursor ca, cb;
    builder_init(&bl, &out->alloc);
    cursor_init(&ca, a);
    cursor_init(&cb, b);
    while (bl.st == ARK_OK && refill(&ca, &cb, op)) {
        bl.n += merge_op(op, &ca, &cb, bl.buf + bl.n);
        builder_flush(&bl);
    }
    if (bl.st == ARK_OK && op != OP_AND) {
        builder_drain(&bl, &ca);
    }
    if (bl.st == ARK_OK && op == OP_OR) {
        builder_drain(&bl, &cb);
    }
    return builder_finish(&bl, out);
}

/* ---- galloping ----------------------------------------------------------- */

/* Whether x is in s. *k is the last group whose first id is <= the
 * previous (smaller) x looked up, or 0: every id before group *k is below
 * x. The search gallops over the keys from *k, then searches one group. */
static int gallop_find(const ark_idset *s, size_t *k, uint32_t x) {
    const ark__idset_view *v = &s->v;
    size_t lo = *k, ng = v->ngroups, step = 1;
    if (lo >= ng || v->keys[lo] > x) {
        return 0;
    }
    while (lo + step < ng && v->keys[lo + step] <= x) {
        lo += step;
        step <<= 1;
    }
    size_t hi = lo + step < ng ? lo + step : ng; /* keys[hi] > x */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->keys[mid] <= x) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    *k = lo;
    const grp *h = &v->groups[lo];
    size_t len = glen(s, lo);
    size_t j = ark__idset_group_lower(h, head_of(s, lo), len, x);
    return j < len && pos_get(s, lo, (unsigned)j) == x;
}

/* small's ids that are (keep_found) or are not (!keep_found) in large. */
static ark_status gallop(ark_idset *out, const ark_idset *smaller,
                         const ark_idset *large, int keep_found) {
    builder bl;
    builder_init(&bl, &out->alloc);
    size_t k = 0;
    for (ark_idset_iter it = ark_idset_iter_begin(smaller, 0);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        if (gallop_find(large, &k, it.id) == keep_found) {
            builder_push(&bl, it.id);
        }
    }
    return builder_finish(&bl, out);
}

static int much_smaller(const ark_idset *a, const ark_idset *b) {
    return a->v.count <= b->v.count / GALLOP_RATIO;
}

/* ---- the public operations ----------------------------------------------- */

ark_status ark_idset_intersect(ark_idset *out, const ark_idset *a,
                               const ark_idset *b) {
    assert(out != NULL && a != NULL && b != NULL);
    if (much_smaller(a, b)) {
        return gallop(out, a, b, 1);
    }
    if (much_smaller(b, a)) {
        return gallop(out, b, a, 1);
    }
    return merge(out, a, b, OP_AND);
}

ark_status ark_idset_union(ark_idset *out, const ark_idset *a,
                           const ark_idset *b) {
    assert(out != NULL && a != NULL && b != NULL);
    return merge(out, a, b, OP_OR);
}

ark_status ark_idset_difference(ark_idset *out, const ark_idset *a,
                                const ark_idset *b) {
    assert(out != NULL && a != NULL && b != NULL);
    if (much_smaller(a, b)) {
        return gallop(out, a, b, 0);
    }
    return merge(out, a, b, OP_ANDNOT);
}

size_t ark_idset_intersect_count(const ark_idset *a, const ark_idset *b) {
    assert(a != NULL && b != NULL);
    size_t n = 0;
    if (much_smaller(a, b) || much_smaller(b, a)) {
        const ark_idset *smaller = much_smaller(a, b) ? a : b;
        const ark_idset *large = smaller == a ? b : a;
        size_t k = 0;
        for (ark_idset_iter it = ark_idset_iter_begin(smaller, 0);
             ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
            n += (size_t)gallop_find(large, &k, it.id);
        }
        return n;
    }
    cursor ca, cb;
    cursor_init(&ca, a);
    cursor_init(&cb, b);
    while (refill(&ca, &cb, OP_AND)) {
        n += merge_op(OP_COUNT, &ca, &cb, NULL);
    }
    return n;
}
