/*
 * fuzz_idset.c - ark_idset against a sorted uint32 array, driven by fuzz
 * input.
 *
 * Ids come from a few input-chosen "neighbourhoods" (a base plus a small
 * or large offset), so dense groups, sparse groups, promotion at the 64K
 * edge and cascades over many groups are all reachable from short inputs.
 * Positions and ids from the input are used as they are, in range or not.
 */
#include "ark/idset.h"
#include "fuzz_common.h"

#define MODEL_MAX 8192

static uint32_t model[MODEL_MAX];
static size_t nmodel;

static size_t model_lower(uint32_t id) {
    size_t lo = 0, hi = nmodel;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (model[mid] < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
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
    ark_idset *s;
    if (ark_idset_create(&s, &fa.base) != ARK_OK) {
        return 0;
    }
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
                FUZZ_REQUIRE(nmodel < MODEL_MAX);
                memmove(&model[pos + 1], &model[pos],
                        (nmodel - pos) * sizeof model[0]);
                model[pos] = id;
                nmodel++;
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
        default:
            break;
        }
        check_all(s);
    }
    size_t got = ark_idset_copy(s, 0, buf, MODEL_MAX);
    FUZZ_REQUIRE(got == nmodel &&
                 (got == 0 || memcmp(buf, model, got * sizeof buf[0]) == 0));
    ark_idset_destroy(s);
    FUZZ_REQUIRE(fa.live == 0);
    return 0;
}
