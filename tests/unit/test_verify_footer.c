/*
 * tests/unit/test_verify_footer.c: Parquet column statistics (parquet/footer.c,
 * icm__parquet_footer_stats) and whether a footer agrees with a manifest entry
 * (maint/verify_footer.c, icm__verify_footer_agrees).
 *
 * Each footer is a FileMetaData written in Thrift's compact protocol (parquet_footers.h): a
 * schema (ICMT_ID_AND_S unless a case says otherwise), num_rows, and row groups whose column
 * chunks carry only their statistics. Each entry's bounds are the Avro map<int, bytes> bytes a
 * manifest holds. Every case states whether the file fits the entry and why not.
 */
#include <ftw.h>
#include <string.h>

#include "parquet_footers.h"
#include "testutil.h"

#include "maint/verify.h"
#include "parquet/parquet.h"
#include "spec/schema.h"

/* Decode `fb` and judge it against (count, lower, upper); *why gets the reason. */
static bool fits(const uint8_t *fb, size_t len, const icm__schema *schema, int64_t count,
                 icm_raw lower, icm_raw upper, char *why)
{
    icm__parquet_stats *s = NULL;
    icmt_ok(icm__parquet_footer_stats(fb, len, "f.parquet", &s));
    icm__footer_ids *ids = NULL;
    icmt_ok(icm__verify_footer_ids(s, schema, &ids));
    bool agrees = false;
    why[0] = '\0';
    icm__verify_footer_agrees(s, ids, count, lower, upper, why, 160, &agrees);
    icm__verify_footer_ids_free(ids);
    icm__parquet_stats_free(s);
    return agrees;
}

/* The statistics are read per row group and leaf; the file fits an entry whose count and
 * bounds cover every row group; another count, or a value of any row group outside a bound,
 * does not, the reason naming it. */
static void test_counts_and_bounds(void **state)
{
    (void)state;
    uint8_t one[8], two[8];
    icmt_le64(1, one);
    icmt_le64(2, two);
    icmt_chunk rg[] = {{one, one, 8, 8, false}, {"apple", "fig", 5, 3, false},
                  {two, two, 8, 8, false}, {"kiwi", "pear", 4, 4, false}};
    uint8_t fb[ICMT_FOOTER_MAX];
    size_t len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, 2, 2, rg);
    icm__parquet_stats *s = NULL;
    icmt_ok(icm__parquet_footer_stats(fb, len, "f.parquet", &s));
    assert_int_equal(s->schema->num_rows, 2);
    assert_int_equal(s->leaf_count, 2);
    assert_int_equal(s->row_group_count, 2);
    assert_true(s->chunks[3].has_max && s->chunks[3].max_len == 4);
    assert_memory_equal(s->chunks[3].max, "pear", 4);
    icm__parquet_stats_free(s);

    icmt_entry_bounds e;
    char why[160];
    icmt_entry_bounds_of(&e, 1, 2, "apple", "pear");
    assert_true(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    assert_true(fits(fb, len, NULL, -1, e.lower, e.upper, why)); /* count unknown */
    assert_false(fits(fb, len, NULL, 3, e.lower, e.upper, why));
    assert_string_equal(why, "it has 2 rows, the entry records 3");
    icmt_entry_bounds_of(&e, 1, 1, "apple", "pear");
    assert_false(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    assert_string_equal(why, "row group 1 holds a value of field 1 above the entry's upper "
                             "bound");
    icmt_entry_bounds_of(&e, 1, 2, "banana", "pear");
    assert_false(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    assert_string_equal(why, "row group 0 holds a value of field 2 below the entry's lower "
                             "bound");
    icmt_entry_bounds_of(&e, 0, 5, "a", "z"); /* wider bounds: still fits */
    assert_true(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    /* no bounds at all: the count decides */
    icmt_bounds none;
    icm_raw empty = icmt_bounds_map(&none, 0, NULL, NULL, NULL);
    assert_true(fits(fb, len, NULL, 2, empty, empty, why));
    assert_true(fits(fb, len, NULL, 2, (icm_raw){NULL, 0}, (icm_raw){NULL, 0}, why));
}

/* Byte arrays that either side truncated: lower bounds are prefixes of the true minimum, and
 * an upper bound of 16 bytes or more may end in an incremented byte. */
static void test_truncated_strings(void **state)
{
    (void)state;
    uint8_t one[8];
    icmt_le64(1, one);
    const char *min = "abcdefghijklmnopqrstu", *max = "abcdefghijklmnopqrsz";
    icmt_chunk full[] = {{one, one, 8, 8, false}, {min, max, strlen(min), strlen(max), false}};
    uint8_t fb[ICMT_FOOTER_MAX];
    size_t len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, 1, 1, full);
    icmt_entry_bounds e;
    char why[160];
    icmt_entry_bounds_of(&e, 1, 1, "abcdefghijklmnop", "abcdefghijklmnoq"); /* Iceberg's truncate(16) */
    assert_true(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* the footer's own max truncated to 8 bytes and incremented */
    icmt_chunk cut[] = {{one, one, 8, 8, false}, {"abcdefgh", "abcdefgi", 8, 8, false}};
    len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, 1, 1, cut);
    assert_true(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* a short exact upper bound is compared whole */
    icmt_chunk shortv[] = {{one, one, 8, 8, false}, {"b", "d", 1, 1, false}};
    len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, 1, 1, shortv);
    icmt_entry_bounds_of(&e, 1, 1, "a", "c");
    assert_false(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    assert_string_equal(why, "row group 0 holds a value of field 2 above the entry's upper "
                             "bound");
}

/* What is not compared: a bound of another width than the leaf's type, a decimal leaf, a leaf
 * without a field id (unless the schema names it at the top level), and the deprecated
 * min/max of a byte array (signed order); the deprecated pair of a number is used. */
static void test_what_is_not_compared(void **state)
{
    (void)state;
    uint8_t one[8], nine[8];
    icmt_le64(1, one);
    icmt_le64(9, nine);
    icmt_entry_bounds e;
    char why[160];
    icmt_entry_bounds_of(&e, 1, 1, "a", "a");
    uint8_t fb[ICMT_FOOTER_MAX];
    size_t len;

    /* id holds 9, above the entry's 1: found when compared */
    icmt_chunk nines[] = {{nine, nine, 8, 8, false}, {"a", "a", 1, 1, false}};
    len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, 1, 1, nines);
    assert_false(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* a 4-byte bound for an INT64 leaf: not compared */
    icmt_bounds lo4, up4;
    static const int32_t key1[] = {1};
    const void *v4[] = {"\x01\0\0\0"};
    const size_t l4[] = {4};
    assert_true(fits(fb, len, NULL, 1, icmt_bounds_map(&lo4, 1, key1, v4, l4), icmt_bounds_map(&up4, 1, key1, v4, l4),
                     why));
    /* a decimal leaf */
    const icmt_leaf decimal[] = {{"id", 2, 5 /* DECIMAL */, 1}, {"s", 6, 0, 2}};
    len = icmt_parquet_footer(fb, decimal, 2, 1, 1, nines);
    assert_true(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* no field ids: compared only through the schema's top-level names */
    const icmt_leaf no_ids[] = {{"id", 2, -1, -1}, {"s", 6, 0, -1}};
    len = icmt_parquet_footer(fb, no_ids, 2, 1, 1, nines);
    assert_true(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    static const char schema_json[] =
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"id\",\"required\":false,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";
    icm__schema *schema = NULL;
    icmt_ok(icm__schema_parse_text(schema_json, strlen(schema_json), "test", &schema));
    assert_false(fits(fb, len, schema, 1, e.lower, e.upper, why));
    assert_string_equal(why, "row group 0 holds a value of field 1 above the entry's upper "
                             "bound");
    icm__schema_free(schema);
    /* deprecated statistics: used for the INT64 leaf, not for the byte array */
    icmt_chunk legacy[] = {{nine, nine, 8, 8, true}, {"z", "z", 1, 1, true}};
    len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, 1, 1, legacy);
    icm__parquet_stats *s = NULL;
    icmt_ok(icm__parquet_footer_stats(fb, len, "f.parquet", &s));
    assert_true(s->chunks[0].has_min && s->chunks[0].has_max);
    assert_false(s->chunks[1].has_min || s->chunks[1].has_max);
    icm__parquet_stats_free(s);
    assert_false(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    assert_string_equal(why, "row group 0 holds a value of field 1 above the entry's upper "
                             "bound");
}

/* A row group whose column count is not the schema's leaf count is a malformed footer. */
static void test_malformed_row_groups(void **state)
{
    (void)state;
    uint8_t one[8];
    icmt_le64(1, one);
    icmt_chunk rg[] = {{one, one, 8, 8, false}};
    (void)rg;
    uint8_t fb[ICMT_FOOTER_MAX];
    icm__parquet_stats *s = NULL;
    icmt_chunk rg2[] = {{one, one, 8, 8, false}, {"a", "a", 1, 1, false}};
    size_t len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, 1, 1, rg2);
    icmt_ok(icm__parquet_footer_stats(fb, len, "f.parquet", &s));
    icm__parquet_stats_free(s);
    /* drop the second chunk: find its list header (2 structs) and claim one */
    for (size_t i = 0; i + 1 < len; i++) {
        if (fb[i] == 0x19 && fb[i + 1] == 0x2c) { /* field 1 list, 2 x struct */
            fb[i + 1] = 0x1c;
            break;
        }
    }
    assert_int_equal(icm__parquet_footer_stats(fb, len, "f.parquet", &s), ICM_EINVALID);
    assert_null(s);
    assert_non_null(strstr(icm_error_last()->message, "not a readable Parquet file"));
}

/* Every engine-written Parquet file of the fixtures (in place) decodes with statistics: the
 * row count the schema reader gives, and every chunk within the footer. */
/* Judge `fb` against (count, lower, upper) under any mapping of the bounds' ids onto leaves. */
static bool fits_any(const uint8_t *fb, size_t len, int64_t count, icm_raw lower,
                     icm_raw upper)
{
    icm__parquet_stats *s = NULL;
    icmt_ok(icm__parquet_footer_stats(fb, len, "f.parquet", &s));
    bool fits = false;
    icmt_ok(icm__verify_footer_fits_any_mapping(s, count, lower, upper, &fits));
    icm__parquet_stats_free(s);
    return fits;
}

/* Longs a and b (field ids 1 and 2) of one row group: a within [a_min, a_max], b within
 * [b_min, b_max]. */
static size_t two_longs(uint8_t *fb, int64_t a_min, int64_t a_max, int64_t b_min, int64_t b_max)
{
    static uint8_t v[4][8];
    static const icmt_leaf leaves[] = {{"a", 2, -1, 1}, {"b", 2, -1, 2}};
    icmt_chunk rg[] = {{icmt_le64(a_min, v[0]), icmt_le64(a_max, v[1]), 8, 8, false},
                       {icmt_le64(b_min, v[2]), icmt_le64(b_max, v[3]), 8, 8, false}};
    return icmt_parquet_footer(fb, leaves, 2, 10, 1, rg);
}

/* Bounds of longs: ids[i] within [lo[i], hi[i]]. */
typedef struct {
    icmt_bounds lo_map, hi_map;
    uint8_t lo[3][8], hi[3][8];
    icm_raw lower, upper;
} long_bounds;

static void long_bounds_of(long_bounds *b, size_t n, const int32_t *ids, const int64_t *lo,
                           const int64_t *hi)
{
    const void *lv[3], *hv[3];
    size_t lens[3] = {8, 8, 8};
    for (size_t i = 0; i < n; i++) {
        lv[i] = icmt_le64(lo[i], b->lo[i]);
        hv[i] = icmt_le64(hi[i], b->hi[i]);
    }
    b->lower = icmt_bounds_map(&b->lo_map, n, ids, lv, lens);
    b->upper = icmt_bounds_map(&b->hi_map, n, ids, hv, lens);
}

/* Adversary round 23, F1: when the schema an entry's statistics were mapped by is gone, a
 * file is described when some mapping of the bounds' ids onto distinct leaves fits (the true
 * one is among them), not by its row count alone: swapped bounds fit; bounds no leaf's values
 * lie within, or more bounds than leaves, do not; a mapping a first greedy choice misses is
 * found; reserved ids need no leaf; a leaf of a form that does not compare may be any id's. */
static void test_fits_under_any_mapping(void **state)
{
    (void)state;
    uint8_t fb[ICMT_FOOTER_MAX];
    size_t len = two_longs(fb, 1, 10, 1001, 1010);
    long_bounds b;
    int32_t ids[] = {1, 2, 3};
    /* by ids, then swapped */
    long_bounds_of(&b, 2, ids, (int64_t[]){1, 1001}, (int64_t[]){10, 1010});
    assert_true(fits_any(fb, len, 10, b.lower, b.upper));
    assert_false(fits_any(fb, len, 11, b.lower, b.upper)); /* another count */
    long_bounds_of(&b, 2, ids, (int64_t[]){1001, 1}, (int64_t[]){1010, 10});
    assert_true(fits_any(fb, len, 10, b.lower, b.upper));
    /* a dead file of the same count with other values (round 23, F1): no mapping fits */
    size_t other = two_longs(fb + ICMT_FOOTER_MAX / 2, 21, 30, 3021, 3030);
    assert_false(fits_any(fb + ICMT_FOOTER_MAX / 2, other, 10, b.lower, b.upper));
    /* one bound fits either leaf, the other only the first: the first bound gets the second */
    len = two_longs(fb, 5, 6, 1, 10);
    long_bounds_of(&b, 2, ids, (int64_t[]){1, 5}, (int64_t[]){10, 6});
    assert_true(fits_any(fb, len, 10, b.lower, b.upper));
    /* both bounds fit only the same leaf: no mapping */
    long_bounds_of(&b, 2, ids, (int64_t[]){5, 5}, (int64_t[]){6, 6});
    assert_false(fits_any(fb, len, 10, b.lower, b.upper));
    /* three bounds, two leaves */
    long_bounds_of(&b, 3, ids, (int64_t[]){0, 0, 0}, (int64_t[]){99, 99, 99});
    assert_false(fits_any(fb, len, 10, b.lower, b.upper));
    /* a reserved id's bound (_row_id) needs no leaf */
    int32_t reserved[] = {1, 2, 2147483540};
    long_bounds_of(&b, 3, reserved, (int64_t[]){1, 5, 0}, (int64_t[]){10, 6, 99});
    assert_true(fits_any(fb, len, 10, b.lower, b.upper));
    /* a decimal leaf may hold any bound */
    static uint8_t v[2][8];
    static const icmt_leaf dec[] = {{"a", 2, 5 /* DECIMAL */, 1}, {"b", 2, -1, 2}};
    icmt_chunk rg[] = {{icmt_le64(5, v[0]), icmt_le64(6, v[1]), 8, 8, false},
                       {icmt_le64(5, v[0]), icmt_le64(6, v[1]), 8, 8, false}};
    len = icmt_parquet_footer(fb, dec, 2, 10, 1, rg);
    long_bounds_of(&b, 2, ids, (int64_t[]){5, 100}, (int64_t[]){6, 200});
    assert_true(fits_any(fb, len, 10, b.lower, b.upper));
    /* no bounds: the count decides */
    icmt_bounds none;
    icm_raw empty = icmt_bounds_map(&none, 0, NULL, NULL, NULL);
    assert_true(fits_any(fb, len, 10, empty, empty));
    assert_false(fits_any(fb, len, 9, empty, empty));
    /* round 24, F1: a bound's form must be one the leaf can store. Two INT32 leaves (5..6,
     * 7..8): long bounds (a column promoted from int) are compared as longs; on BOOLEAN
     * leaves no 8-byte bound fits */
    static uint8_t i32[4][4] = {{5}, {6}, {7}, {8}};
    static const icmt_leaf ints[] = {{"c", 1 /* INT32 */, -1, 3}, {"d", 1, -1, 4}};
    icmt_chunk ri[] = {{i32[0], i32[1], 4, 4, false}, {i32[2], i32[3], 4, 4, false}};
    len = icmt_parquet_footer(fb, ints, 2, 10, 1, ri);
    long_bounds_of(&b, 2, ids, (int64_t[]){7, 5}, (int64_t[]){8, 6}); /* swapped: fits */
    assert_true(fits_any(fb, len, 10, b.lower, b.upper));
    long_bounds_of(&b, 2, ids, (int64_t[]){1001, 1}, (int64_t[]){1010, 10}); /* no leaf */
    assert_false(fits_any(fb, len, 10, b.lower, b.upper));
    static uint8_t t1 = 1;
    static const icmt_leaf bools[] = {{"c", 0 /* BOOLEAN */, -1, 3}, {"d", 0, -1, 4}};
    icmt_chunk rb[] = {{&t1, &t1, 1, 1, false}, {&t1, &t1, 1, 1, false}};
    len = icmt_parquet_footer(fb, bools, 2, 10, 1, rb);
    long_bounds_of(&b, 2, ids, (int64_t[]){0, 0}, (int64_t[]){99, 99});
    assert_false(fits_any(fb, len, 10, b.lower, b.upper));
}

/* Decode a footer of `leaves` (one row group `rg`, 2 rows) and judge it against (lower,
 * upper) as the file an entry names (as_named) or as a described file; *why gets the
 * reason. */
static bool judged(const icmt_leaf *leaves, size_t n_leaves, const icmt_chunk *rg,
                   icm_raw lower, icm_raw upper, bool as_named, bool some_compared, char *why)
{
    uint8_t fb[ICMT_FOOTER_MAX];
    size_t len = icmt_parquet_footer(fb, leaves, n_leaves, 2, 1, rg);
    icm__parquet_stats *s = NULL;
    icmt_ok(icm__parquet_footer_stats(fb, len, "f.parquet", &s));
    icm__footer_ids *ids = NULL;
    icmt_ok(icm__verify_footer_ids(s, NULL, &ids));
    bool agrees = false;
    why[0] = '\0';
    if (as_named)
        icm__verify_footer_agrees_as_named(s, ids, 2, lower, upper, some_compared, why, 160,
                                           &agrees);
    else
        icm__verify_footer_agrees(s, ids, 2, lower, upper, why, 160, &agrees);
    icm__verify_footer_ids_free(ids);
    icm__parquet_stats_free(s);
    return agrees;
}

/* Adversary round 24, D1: as the file an entry names (icm__verify_footer_agrees_as_named), a
 * column that states no value where the entry holds a bound (null in every row, or no
 * statistics) does not fit, though a file judged as described may; with some_compared, a fit
 * that compared nothing does not either. Round 25, D1: nor does a file without a column of a
 * bounded field, where every nested leaf has an id; a column whose values are not compared
 * counts by whether it states one. */
static void test_agrees_as_named(void **state)
{
    (void)state;
    uint8_t one[8], two[8];
    icmt_le64(1, one);
    icmt_le64(2, two);
    const char *unstated = "its column of field 1 states no value (null in every row, or no "
                           "statistics) where the entry holds a lower bound";
    icmt_entry_bounds e;
    icmt_entry_bounds_of(&e, 1, 2, "apple", "fig");
    char why[160];
    icmt_chunk rg[] = {{NULL, NULL, 0, 0, false}, {"apple", "fig", 5, 3, false}};
    assert_true(judged(ICMT_ID_AND_S, 2, rg, e.lower, e.upper, false, false, why));
    assert_false(judged(ICMT_ID_AND_S, 2, rg, e.lower, e.upper, true, false, why));
    assert_string_equal(why, unstated);
    /* a value outside says more */
    icmt_entry_bounds e2;
    icmt_entry_bounds_of(&e2, 1, 2, "banana", "fig");
    assert_false(judged(ICMT_ID_AND_S, 2, rg, e2.lower, e2.upper, true, false, why));
    assert_string_equal(why, "row group 0 holds a value of field 2 below the entry's lower "
                             "bound");
    /* every bounded column stated: fits; no bounds: fits unless some must be compared */
    icmt_chunk full[] = {{one, two, 8, 8, false}, {"apple", "fig", 5, 3, false}};
    assert_true(judged(ICMT_ID_AND_S, 2, full, e.lower, e.upper, true, true, why));
    icmt_bounds none;
    icm_raw empty = icmt_bounds_map(&none, 0, NULL, NULL, NULL);
    assert_true(judged(ICMT_ID_AND_S, 2, full, empty, empty, true, false, why));
    assert_false(judged(ICMT_ID_AND_S, 2, full, empty, empty, true, true, why));
    assert_string_equal(why, "none of its columns compares with the entry's bounds");

    /* round 25, D1: no column of a bounded field at all (only `s`, id 2); as a described
     * file, a column it lacks says nothing */
    static const icmt_leaf only_s[] = {{"s", 6, 0, 2}};
    icmt_chunk rs[] = {{"apple", "fig", 5, 3, false}};
    assert_true(judged(only_s, 1, rs, e.lower, e.upper, false, false, why));
    assert_false(judged(only_s, 1, rs, e.lower, e.upper, true, false, why));
    assert_string_equal(why, "it has no column of field 1, where the entry holds a lower bound");
    /* nor one whose other column, without an id, is named as no field (no schema here) */
    static const icmt_leaf no_ids[] = {{"z", 6, 0, -1}, {"s", 6, 0, 2}};
    icmt_chunk rz[] = {{"kiwi", "kiwi", 4, 4, false}, {"apple", "fig", 5, 3, false}};
    assert_false(judged(no_ids, 2, rz, e.lower, e.upper, true, false, why));
    /* a reserved metadata column's bound (_row_id) needs no column */
    icmt_bounds lo, up;
    int32_t keys[] = {1, 2147483540};
    const void *lv[] = {one, one}, *uv[] = {two, two};
    size_t lens[] = {8, 8};
    icm_raw lower = icmt_bounds_map(&lo, 2, keys, lv, lens),
            upper = icmt_bounds_map(&up, 2, keys, uv, lens);
    assert_true(judged(ICMT_ID_AND_S, 2, full, lower, upper, true, true, why));
    /* a decimal column (not compared) states a value, or does not */
    static const icmt_leaf dec[] = {{"id", 2, 5 /* DECIMAL */, 1}, {"s", 6, 0, 2}};
    icmt_chunk rd[] = {{one, two, 8, 8, false}, {"apple", "fig", 5, 3, false}};
    assert_true(judged(dec, 2, rd, e.lower, e.upper, true, true, why));
    assert_false(judged(dec, 2, rg, e.lower, e.upper, true, true, why));
    assert_string_equal(why, unstated);
}

static size_t fixture_files, fixture_chunks;

static int read_fixture(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t len = strlen(path);
    if (flag != FTW_F || len < 8 || strcmp(path + len - 8, ".parquet") != 0)
        return 0;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    icm__parquet_schema *schema = NULL;
    icm__parquet_stats *stats = NULL;
    int64_t a = -1, b = -1;
    int rc_schema = icm__parquet_read_schema(io, path, &schema, &a);
    int rc_stats = icm__parquet_read_stats(io, path, &stats, &b);
    if (rc_schema != rc_stats)
        fail_msg("%s: schema %d, stats %d (%s)", path, rc_schema, rc_stats,
                 icm_error_last()->message);
    if (rc_stats == 0) {
        assert_int_equal(stats->schema->num_rows, schema->num_rows);
        assert_int_equal(a, b);
        fixture_files++;
        for (size_t i = 0; i < stats->row_group_count * stats->leaf_count; i++)
            fixture_chunks += stats->chunks[i].has_min && stats->chunks[i].has_max;
    }
    icm__parquet_schema_free(schema);
    icm__parquet_stats_free(stats);
    icm_fileio_free(io);
    return 0;
}

static void test_fixture_files(void **state)
{
    (void)state;
    icmt_need_fixture("index.tsv");
    assert_int_equal(nftw(icmt_fixtures_dir(), read_fixture, 16, FTW_PHYS), 0);
    assert_true(fixture_files >= 100);
    assert_true(fixture_chunks >= fixture_files); /* engines write statistics */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_bounds),
        cmocka_unit_test(test_truncated_strings),
        cmocka_unit_test(test_what_is_not_compared),
        cmocka_unit_test(test_malformed_row_groups),
        cmocka_unit_test(test_fits_under_any_mapping),
        cmocka_unit_test(test_agrees_as_named),
        cmocka_unit_test(test_fixture_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
