/* SPDX-License-Identifier: MIT */
/*
 * fuzz_idset.c - ark_idset against a sorted uint32 array, driven by fuzz
 * input.
 *
 * Ids come from a few input-chosen "neighbourhoods" (a base plus a small
 * or large offset), so dense groups, sparse groups, promotion at the 64K
 * edge and cascades over many groups are all reachable from short inputs.
 * Positions and ids from the input are used as they are, in range or not.
 * A second set, built from input-chosen ids, is combined with the first by
 * the set algebra (with every aliasing form) and checked against a merge
 * of the two models; the iterator is checked against the model from any
 * position.
 */
#include "ark/idset.h"
#include "fuzz_common.h"

#define MODEL_MAX 8192

static uint32_t model[MODEL_MAX];
static size_t nmodel;

/* The first index of v[0, n) whose id is >= id. */
static size_t sorted_lower(const uint32_t *v, size_t n, uint32_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static size_t model_lower(uint32_t id) {
    return sorted_lower(model, nmodel, id);
}

/* Insert id at index pos of v[0, *n) (capacity MODEL_MAX). */
static void sorted_put(uint32_t *v, size_t *n, size_t pos, uint32_t id) {
    FUZZ_REQUIRE(*n < MODEL_MAX);
    memmove(&v[pos + 1], &v[pos], (*n - pos) * sizeof v[0]);
    v[pos] = id;
    (*n)++;
}

static void model_erase(size_t pos) {
    memmove(&model[pos], &model[pos + 1], (nmodel - pos - 1) * sizeof model[0]);
    nmodel--;
}

/* An id near one of four bases; the offset width is input-chosen. */
static uint32_t pick_id(fuzz_input *in, const uint32_t base[4]) {
    uint8_t b = fuzz_u8(in);
    uint32_t off = (uint32_t)fuzz_u8(in) | (uint32_t)fuzz_u8(in) << 8;
    switch (b >> 6) {
    case 0:
        off &= 0xff; /* tight: dense groups */
        break;
    case 1:
        off = off * 3; /* around the 64K dense limit */
        break;
    case 2:
        off = off << 8; /* sparse */
        break;
    default:
        return (uint32_t)fuzz_u64(in); /* anything, 0 and ~0 included */
    }
    return base[b & 3] + off;
}

/* The second set's model, and the algebra's expected result. */
static uint32_t model2[MODEL_MAX];
static size_t nmodel2;
static uint32_t merged[2 * MODEL_MAX];

/* op 0: a and b, 1: a or b, 2: a and not b. */
FUZZ_NO_COVERAGE static size_t merge_models(int op) {
    size_t i = 0, j = 0, o = 0;
    while (i < nmodel || j < nmodel2) {
        if (j == nmodel2 || (i < nmodel && model[i] < model2[j])) {
            if (op != 0) {
                merged[o++] = model[i];
            }
            i++;
        } else if (i == nmodel || model2[j] < model[i]) {
            if (op == 1) {
                merged[o++] = model2[j];
            }
            j++;
        } else {
            if (op != 2) {
                merged[o++] = model[i];
            }
            i++;
            j++;
        }
    }
    return o;
}

FUZZ_NO_COVERAGE static void check_holds(const ark_idset *s, const uint32_t *v,
                                         size_t n) {
    FUZZ_REQUIRE(ark_idset_validate(s) == ARK_OK);
    FUZZ_REQUIRE(ark_idset_count(s) == n);
    size_t i = 0;
    for (ark_idset_iter it = ark_idset_iter_begin(s, 0);
         ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
        FUZZ_REQUIRE(i < n && it.id == v[i]);
        i++;
    }
    FUZZ_REQUIRE(i == n);
}

static ark_status run_algebra(int op, ark_idset *out, const ark_idset *a,
                              const ark_idset *b) {
    return op == 0   ? ark_idset_intersect(out, a, b)
           : op == 1 ? ark_idset_union(out, a, b)
                     : ark_idset_difference(out, a, b);
}

/* Combine s with t (holding model2) into out, where out is a fresh set,
 * s itself or t itself, as the input says. On success the combined set
 * replaces the model it aliased (s: model; t: model2). */
static void algebra_op(fuzz_input *in, fuzz_alloc *fa, ark_idset *s,
                       ark_idset *t) {
    uint8_t c = fuzz_u8(in);
    int op = c % 3, where = (c >> 2) % 3, swap = (c >> 4) & 1;
    FUZZ_REQUIRE(ark_idset_intersect_count(s, t) == merge_models(0));
    FUZZ_REQUIRE(ark_idset_intersect_count(t, s) == merge_models(0));
    if (swap) { /* t op s: only the intersection is symmetric */
        op = 0;
    }
    size_t n = merge_models(op);
    if (n > MODEL_MAX / 2) {
        where = 0; /* keep the models well within MODEL_MAX */
    }
    fa->fail_next = c & 0x80;
    ark_idset *out = where == 0 ? NULL : where == 1 ? s : t;
    ark_idset *fresh = NULL;
    if (out == NULL) {
        if (ark_idset_create(&fresh, &fa->base) != ARK_OK) {
            return;
        }
        out = fresh;
    }
    fa->fail_next = c & 0x40;
    ark_status st =
        swap ? run_algebra(op, out, t, s) : run_algebra(op, out, s, t);
    if (st != ARK_OK) {
        FUZZ_REQUIRE(st == ARK_ENOMEM);
        check_holds(s, model, nmodel);
        check_holds(t, model2, nmodel2);
    } else {
        check_holds(out, merged, n);
        if (out == s) {
            memcpy(model, merged, n * sizeof model[0]);
            nmodel = n;
        } else if (out == t) {
            memcpy(model2, merged, n * sizeof model2[0]);
            nmodel2 = n;
        }
    }
    ark_idset_destroy(fresh);
}

/* Insert an input-chosen id into t (the second set). */
static void second_insert(fuzz_input *in, ark_idset *t,
                          const uint32_t base[4]) {
    uint32_t id = pick_id(in, base);
    if (nmodel2 >= MODEL_MAX) {
        return;
    }
    size_t lo = sorted_lower(model2, nmodel2, id);
    ark_status st = ark_idset_insert(t, id);
    if (lo < nmodel2 && model2[lo] == id) {
        FUZZ_REQUIRE(st == ARK_EEXIST);
    } else if (st == ARK_OK) {
        sorted_put(model2, &nmodel2, lo, id);
    } else {
        FUZZ_REQUIRE(st == ARK_ENOMEM);
    }
}

static void check_all(const ark_idset *s) {
    FUZZ_REQUIRE(ark_idset_count(s) == nmodel);
    FUZZ_REQUIRE(ark_idset_validate(s) == ARK_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    static uint32_t buf[MODEL_MAX + 16];
    nmodel = 0;
    fuzz_alloc fa;
    fuzz_alloc_init(&fa);
    uint32_t base[4];
    for (int i = 0; i < 4; i++) {
        base[i] = (uint32_t)fuzz_u64(&in);
    }
    base[0] = 0; /* one neighbourhood at the bottom of the id space */
    ark_idset *s, *t;
    if (ark_idset_create(&s, &fa.base) != ARK_OK) {
        return 0;
    }
    if (ark_idset_create(&t, &fa.base) != ARK_OK) {
        ark_idset_destroy(s);
        return 0;
    }
    nmodel2 = 0;
    while (!fuzz_done(&in)) {
        uint8_t op = fuzz_u8(&in);
        fa.fail_next = op & 0x80;
        switch (op & 0x0f) {
        case 0:
        case 1:
        case 2: { /* insert */
            uint32_t id = pick_id(&in, base);
            size_t pos = model_lower(id);
            bool present = pos < nmodel && model[pos] == id;
            ark_status st = ark_idset_insert(s, id);
            if (present) {
                FUZZ_REQUIRE(st == ARK_EEXIST);
            } else if (st == ARK_OK) {
                sorted_put(model, &nmodel, pos, id);
            } else {
                FUZZ_REQUIRE(st == ARK_ENOMEM);
            }
            break;
        }
        case 3: { /* append a run above the maximum */
            uint32_t id = nmodel ? model[nmodel - 1] : base[1];
            for (int k = fuzz_u8(&in) % 64; k >= 0 && nmodel < MODEL_MAX; k--) {
                if (id == UINT32_MAX) {
                    break;
                }
                id += 1 + fuzz_u8(&in) % 3;
                if (nmodel && id <= model[nmodel - 1]) {
                    break; /* wrapped */
                }
                ark_status st = ark_idset_insert(s, id);
                if (st != ARK_OK) {
                    FUZZ_REQUIRE(st == ARK_ENOMEM);
                    break;
                }
                model[nmodel++] = id;
            }
            break;
        }
        case 4: { /* remove by value */
            uint32_t id = nmodel && (fuzz_u8(&in) & 1)
                              ? model[fuzz_u8(&in) % nmodel]
                              : pick_id(&in, base);
            size_t pos = model_lower(id);
            bool present = pos < nmodel && model[pos] == id;
            ark_status st = ark_idset_remove(s, id);
            if (!present) {
                FUZZ_REQUIRE(st == ARK_ENOTFOUND);
            } else if (st == ARK_OK) {
                model_erase(pos);
            } else {
                FUZZ_REQUIRE(st == ARK_ENOMEM);
            }
            break;
        }
        case 5: { /* remove by position, in range or not */
            size_t pos = (size_t)fuzz_u8(&in) * 37 + fuzz_u8(&in);
            ark_status st = ark_idset_remove_at(s, pos);
            if (pos >= nmodel) {
                FUZZ_REQUIRE(st == ARK_ERANGE);
            } else if (st == ARK_OK) {
                model_erase(pos);
            } else {
                FUZZ_REQUIRE(st == ARK_ENOMEM);
            }
            break;
        }
        case 6: { /* a frame's sorted batch: some present, some absent */
            size_t n = 0;
            for (size_t i = 0; i < nmodel && n < 64; i++) {
                uint8_t c = fuzz_u8(&in);
                if (c & 1) {
                    buf[n++] = model[i];
                }
                if ((c & 6) == 6 && n < 64 && model[i] != UINT32_MAX &&
                    (i + 1 == nmodel || model[i + 1] != model[i] + 1)) {
                    buf[n++] = model[i] + 1; /* absent, ignored */
                }
                i += c >> 5;
            }
            ark_status st = ark_idset_remove_sorted(s, buf, n);
            if (st == ARK_OK) {
                for (size_t k = 0; k < n; k++) {
                    size_t pos = model_lower(buf[k]);
                    if (pos < nmodel && model[pos] == buf[k]) {
                        model_erase(pos);
                    }
                }
            } else {
                FUZZ_REQUIRE(st == ARK_ENOMEM);
            }
            break;
        }
        case 7: { /* an unsorted batch is refused and changes nothing */
            if (nmodel >= 2) {
                buf[0] = model[nmodel - 1];
                buf[1] = model[0];
                FUZZ_REQUIRE(ark_idset_remove_sorted(s, buf, 2) == ARK_EINVAL);
            }
            break;
        }
        case 8: { /* lookups of an arbitrary id */
            uint32_t id = pick_id(&in, base);
            size_t pos = model_lower(id);
            bool present = pos < nmodel && model[pos] == id;
            FUZZ_REQUIRE(ark_idset_lower_bound(s, id) == pos);
            FUZZ_REQUIRE(ark_idset_contains(s, id) == present);
            FUZZ_REQUIRE(ark_idset_find(s, id) ==
                         (present ? pos : ARK_NOT_FOUND));
            break;
        }
        case 9: { /* positional access and copy from any position */
            size_t pos = (size_t)fuzz_u8(&in) * 41 + fuzz_u8(&in);
            FUZZ_REQUIRE(ark_idset_at(s, pos) ==
                         (pos < nmodel ? model[pos] : 0));
            size_t want = fuzz_u8(&in) * 40;
            size_t got = ark_idset_copy(s, pos, buf, want);
            size_t expect = pos < nmodel ? nmodel - pos : 0;
            expect = expect < want ? expect : want;
            FUZZ_REQUIRE(got == expect);
            FUZZ_REQUIRE(got == 0 ||
                         memcmp(buf, &model[pos], got * sizeof buf[0]) == 0);
            break;
        }
        case 10: { /* the second set gains a few ids */
            for (int k = fuzz_u8(&in) % 16; k >= 0; k--) {
                second_insert(&in, t, base);
            }
            break;
        }
        case 11: /* intersect, union or difference, any aliasing */
            algebra_op(&in, &fa, s, t);
            break;
        case 12: { /* the iterator from any position */
            size_t pos = (size_t)fuzz_u8(&in) * 41 + fuzz_u8(&in);
            size_t i = pos;
            for (ark_idset_iter it = ark_idset_iter_begin(s, pos);
                 ark_idset_iter_valid(&it); ark_idset_iter_next(&it)) {
                FUZZ_REQUIRE(i < nmodel && it.pos == i && it.id == model[i]);
                i++;
            }
            FUZZ_REQUIRE(i == (pos < nmodel ? nmodel : pos));
            break;
        }
        default:
            break;
        }
        check_all(s);
    }
    size_t got = ark_idset_copy(s, 0, buf, MODEL_MAX);
    FUZZ_REQUIRE(got == nmodel &&
                 (got == 0 || memcmp(buf, model, got * sizeof buf[0]) == 0));
    ark_idset_destroy(s);
    ark_idset_destroy(t);
    FUZZ_REQUIRE(fa.live == 0);
    return 0;
}
