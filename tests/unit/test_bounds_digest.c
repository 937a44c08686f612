/*
 * tests/unit/test_bounds_digest.c: the digest of an entry's bounds (manifest/bulk_reader.h
 * icm__bounds_digest).
 *
 * Two entries describe one file only if their bounds agree, and writers list a map's pairs
 * in any order and cut it into blocks as they like (Avro spec, "Arrays"; Iceberg writes
 * map<int, bytes> as an array of {key, value} records). The digest is over the pairs as a
 * set: each case builds the maps' bytes by hand and states which digests are equal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "manifest/bulk_reader.h"

typedef struct map_bytes {
    uint8_t b[128];
    size_t n;
} map_bytes;

static void put_long(map_bytes *m, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    do {
        uint8_t byte = (uint8_t)(z & 0x7f);
        z >>= 7;
        m->b[m->n++] = (uint8_t)(byte | (z ? 0x80 : 0));
    } while (z);
}

static void put_pair(map_bytes *m, int32_t key, const char *value)
{
    put_long(m, key);
    put_long(m, (int64_t)strlen(value));
    memcpy(m->b + m->n, value, strlen(value));
    m->n += strlen(value);
}

static icm_raw raw(const map_bytes *m)
{
    return (icm_raw){m->b, m->n};
}

/* One block holding the pairs in the order given, then the end block. */
static map_bytes one_block(int n, const int32_t *keys, const char *const *values)
{
    map_bytes m = {.n = 0};
    put_long(&m, n);
    for (int i = 0; i < n; i++)
        put_pair(&m, keys[i], values[i]);
    put_long(&m, 0);
    return m;
}

static const int32_t keys[] = {1, 2, 3};
static const char *const lower[] = {"\x01\0\0\0", "apple", "2026-01-01"};
static const char *const upper[] = {"\x09\0\0\0", "pear", "2026-12-31"};

/* The same pairs in another order, or cut into other blocks (one with its size in bytes),
 * give the same digest. */
static void test_order_and_blocks_do_not_matter(void **state)
{
    (void)state;
    map_bytes lo = one_block(3, keys, lower), up = one_block(3, keys, upper);
    uint64_t d = icm__bounds_digest(raw(&lo), raw(&up));
    assert_true(d != 0);

    const int32_t rkeys[] = {3, 1, 2};
    const char *const rlower[] = {lower[2], lower[0], lower[1]};
    const char *const rupper[] = {upper[2], upper[0], upper[1]};
    map_bytes rlo = one_block(3, rkeys, rlower), rup = one_block(3, rkeys, rupper);
    assert_true(icm__bounds_digest(raw(&rlo), raw(&rup)) == d);

    /* two blocks: one of 1 pair, one of -2 pairs with its byte size */
    map_bytes split = {.n = 0};
    put_long(&split, 1);
    put_pair(&split, keys[0], lower[0]);
    map_bytes tail = {.n = 0};
    put_pair(&tail, keys[1], lower[1]);
    put_pair(&tail, keys[2], lower[2]);
    put_long(&split, -2);
    put_long(&split, (int64_t)tail.n);
    memcpy(split.b + split.n, tail.b, tail.n);
    split.n += tail.n;
    put_long(&split, 0);
    assert_true(icm__bounds_digest(raw(&split), raw(&up)) == d);
}

/* Any other value, key, a missing pair, or lower and upper swapped: another digest. */
static void test_other_bounds_differ(void **state)
{
    (void)state;
    map_bytes lo = one_block(3, keys, lower), up = one_block(3, keys, upper);
    uint64_t d = icm__bounds_digest(raw(&lo), raw(&up));

    const char *const other[] = {lower[0], "apricot", lower[2]};
    map_bytes olo = one_block(3, keys, other);
    assert_true(icm__bounds_digest(raw(&olo), raw(&up)) != d);

    const int32_t okeys[] = {1, 2, 4};
    map_bytes klo = one_block(3, okeys, lower);
    assert_true(icm__bounds_digest(raw(&klo), raw(&up)) != d);

    map_bytes fewer = one_block(2, keys, lower);
    assert_true(icm__bounds_digest(raw(&fewer), raw(&up)) != d);

    assert_true(icm__bounds_digest(raw(&up), raw(&lo)) != d);
    assert_true(icm__bounds_digest(raw(&lo), (icm_raw){NULL, 0}) != d);
}

/* No bound given, whether the maps are absent or empty: 0 ("unknown", never a match). */
static void test_no_bounds_is_zero(void **state)
{
    (void)state;
    map_bytes empty = {.n = 0};
    put_long(&empty, 0);
    assert_true(icm__bounds_digest((icm_raw){NULL, 0}, (icm_raw){NULL, 0}) == 0);
    assert_true(icm__bounds_digest(raw(&empty), raw(&empty)) == 0);
    assert_true(icm__bounds_digest(raw(&empty), (icm_raw){NULL, 0}) == 0);
    map_bytes lo = one_block(1, keys, lower);
    assert_true(icm__bounds_digest(raw(&lo), raw(&empty)) != 0);
}

/* Bytes that are not the spec's shape (a length past the end, a block never ended, bytes
 * after the end block) are digested as bytes: not 0, and equal only to the same bytes. */
static void test_other_shapes_are_digested_as_bytes(void **state)
{
    (void)state;
    map_bytes good = one_block(3, keys, lower);
    map_bytes cut = good;
    cut.n -= 3; /* the end block and two bytes of the last value are gone */
    map_bytes trailing = good;
    trailing.b[trailing.n++] = 0x42;
    map_bytes overlong = {.n = 0};
    put_long(&overlong, 1);
    put_long(&overlong, 1);
    put_long(&overlong, 100); /* 100 bytes, none there */
    for (int i = 0; i < 11; i++)
        overlong.b[overlong.n++] = 0xff; /* and a varint longer than 64 bits */

    const map_bytes *shapes[] = {&cut, &trailing, &overlong};
    uint64_t seen[3];
    for (int i = 0; i < 3; i++) {
        icm_raw r = raw(shapes[i]);
        seen[i] = icm__bounds_digest(r, r);
        assert_true(seen[i] != 0);
        assert_true(icm__bounds_digest(r, r) == seen[i]);
        assert_true(seen[i] != icm__bounds_digest(raw(&good), raw(&good)));
    }
    assert_true(seen[0] != seen[1] && seen[1] != seen[2] && seen[0] != seen[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_blocks_do_not_matter),
        cmocka_unit_test(test_other_bounds_differ),
        cmocka_unit_test(test_no_bounds_is_zero),
        cmocka_unit_test(test_other_shapes_are_digested_as_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
