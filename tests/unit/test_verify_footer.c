/*
 * tests/unit/test_verify_footer.c: Parquet column statistics (parquet/footer.c,
 * icm__parquet_footer_stats) and whether a footer agrees with a manifest entry
 * (maint/verify_footer.c, icm__verify_footer_agrees).
 *
 * Each footer is a FileMetaData written here in Thrift's compact protocol: a schema (root,
 * `id` INT64 with field id 1, `s` UTF8 BYTE_ARRAY with field id 2, unless a case says
 * otherwise), num_rows, and row groups whose column chunks carry only their statistics (the
 * reader skips every other field). Each entry's bounds are the Avro map<int, bytes> bytes a
 * manifest holds. Every case states whether the file fits the entry and why not.
 */
#include <ftw.h>
#include <string.h>

#include "testutil.h"

#include "maint/verify.h"
#include "parquet/parquet.h"
#include "spec/schema.h"

/* ---- a Thrift compact writer ---- */

typedef struct tbuf {
    uint8_t b[1024];
    size_t n;
    int16_t last[8]; /* the previous field id, per open struct */
    int depth;
} tbuf;

static void byte(tbuf *t, uint8_t v)
{
    assert_true(t->n < sizeof t->b);
    t->b[t->n++] = v;
}

static void varint(tbuf *t, uint64_t v)
{
    do {
        byte(t, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
    } while (v);
}

static uint64_t zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

enum { T_I32 = 5, T_I64 = 6, T_BINARY = 8, T_LIST = 9, T_STRUCT = 12 };

static void field(tbuf *t, int16_t id, int type)
{
    int16_t delta = (int16_t)(id - t->last[t->depth]);
    assert_true(delta > 0 && delta <= 15);
    byte(t, (uint8_t)(delta << 4 | type));
    t->last[t->depth] = id;
}

static void i32_field(tbuf *t, int16_t id, int32_t v)
{
    field(t, id, T_I32);
    varint(t, zz(v));
}

static void i64_field(tbuf *t, int16_t id, int64_t v)
{
    field(t, id, T_I64);
    varint(t, zz(v));
}

static void binary_field(tbuf *t, int16_t id, const void *v, size_t len)
{
    field(t, id, T_BINARY);
    varint(t, len);
    for (size_t i = 0; i < len; i++)
        byte(t, ((const uint8_t *)v)[i]);
}

static void begin(tbuf *t) /* a struct value (after its field header or list header) */
{
    t->last[++t->depth] = 0;
}

static void end(tbuf *t)
{
    byte(t, 0);
    t->depth--;
}

static void list_header(tbuf *t, int16_t id, size_t n, int elem)
{
    field(t, id, T_LIST);
    assert_true(n < 15);
    byte(t, (uint8_t)(n << 4 | elem));
}

/* ---- footers ---- */

typedef struct chunk {
    const void *min, *max;
    size_t min_len, max_len;
    bool legacy; /* as the deprecated min/max (fields 2, 1) */
} chunk;

typedef struct leaf {
    const char *name;
    int32_t type;
    int32_t converted; /* -1: none */
    int32_t field_id;  /* -1: none */
} leaf;

static const leaf ID_AND_S[] = {{"id", 2, -1, 1}, {"s", 6, 0, 2}};

/* A FileMetaData of `leaves`, `rows` rows and `groups` row groups of chunks[g][k]. */
static size_t footer(uint8_t *out, const leaf *leaves, size_t n_leaves, int64_t rows,
                     size_t groups, const chunk *chunks)
{
    tbuf t;
    memset(&t, 0, sizeof t);
    list_header(&t, 2, 1 + n_leaves, T_STRUCT);
    begin(&t);
    binary_field(&t, 4, "root", 4);
    i32_field(&t, 5, (int32_t)n_leaves);
    end(&t);
    for (size_t k = 0; k < n_leaves; k++) {
        begin(&t);
        i32_field(&t, 1, leaves[k].type);
        i32_field(&t, 3, 1); /* OPTIONAL */
        binary_field(&t, 4, leaves[k].name, strlen(leaves[k].name));
        if (leaves[k].converted >= 0)
            i32_field(&t, 6, leaves[k].converted);
        if (leaves[k].field_id >= 0)
            i32_field(&t, 9, leaves[k].field_id);
        end(&t);
    }
    i64_field(&t, 3, rows);
    list_header(&t, 4, groups, T_STRUCT);
    for (size_t g = 0; g < groups; g++) {
        begin(&t);
        list_header(&t, 1, n_leaves, T_STRUCT);
        for (size_t k = 0; k < n_leaves; k++) {
            const chunk *c = &chunks[g * n_leaves + k];
            begin(&t);             /* ColumnChunk */
            field(&t, 3, T_STRUCT); /* meta_data */
            begin(&t);
            field(&t, 12, T_STRUCT); /* statistics */
            begin(&t);
            if (c->max != NULL)
                binary_field(&t, c->legacy ? 1 : 5, c->max, c->max_len);
            if (c->min != NULL)
                binary_field(&t, c->legacy ? 2 : 6, c->min, c->min_len);
            end(&t);
            end(&t);
            end(&t);
        }
        i64_field(&t, 3, rows);
        end(&t);
    }
    byte(&t, 0);
    memcpy(out, t.b, t.n);
    return t.n;
}

/* ---- entry bounds ---- */

typedef struct bounds {
    uint8_t b[256];
    size_t n;
} bounds;

static void avro_long(bounds *m, int64_t v)
{
    uint64_t z = zz(v);
    do {
        m->b[m->n++] = (uint8_t)((z & 0x7f) | (z > 0x7f ? 0x80 : 0));
        z >>= 7;
    } while (z);
}

/* map<int, bytes>: `n` pairs of (keys[i], values[i] of lens[i] bytes), then the end block. */
static icm_raw map(bounds *m, size_t n, const int32_t *keys, const void *const *values,
                   const size_t *lens)
{
    m->n = 0;
    if (n > 0) {
        avro_long(m, (int64_t)n);
        for (size_t i = 0; i < n; i++) {
            avro_long(m, keys[i]);
            avro_long(m, (int64_t)lens[i]);
            memcpy(m->b + m->n, values[i], lens[i]);
            m->n += lens[i];
        }
    }
    avro_long(m, 0);
    return (icm_raw){m->b, m->n};
}

static const uint8_t *le64(int64_t v, uint8_t out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)v >> (8 * i));
    return out;
}

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

/* The entry of a file with ids 1..2 and strings "apple".."pear", two rows. */
typedef struct entry_bounds {
    bounds lo, up;
    icm_raw lower, upper;
    uint8_t a[8], b[8];
} entry_bounds;

static void entry_of(entry_bounds *e, int64_t min_id, int64_t max_id, const char *min_s,
                     const char *max_s)
{
    static const int32_t keys[] = {1, 2};
    const void *lv[] = {le64(min_id, e->a), min_s}, *uv[] = {le64(max_id, e->b), max_s};
    size_t ll[] = {8, strlen(min_s)}, ul[] = {8, strlen(max_s)};
    e->lower = map(&e->lo, 2, keys, lv, ll);
    e->upper = map(&e->up, 2, keys, uv, ul);
}

/* The statistics are read per row group and leaf; the file fits an entry whose count and
 * bounds cover every row group; another count, or a value of any row group outside a bound,
 * does not, the reason naming it. */
static void test_counts_and_bounds(void **state)
{
    (void)state;
    uint8_t one[8], two[8];
    le64(1, one);
    le64(2, two);
    chunk rg[] = {{one, one, 8, 8, false}, {"apple", "fig", 5, 3, false},
                  {two, two, 8, 8, false}, {"kiwi", "pear", 4, 4, false}};
    uint8_t fb[1024];
    size_t len = footer(fb, ID_AND_S, 2, 2, 2, rg);
    icm__parquet_stats *s = NULL;
    icmt_ok(icm__parquet_footer_stats(fb, len, "f.parquet", &s));
    assert_int_equal(s->schema->num_rows, 2);
    assert_int_equal(s->leaf_count, 2);
    assert_int_equal(s->row_group_count, 2);
    assert_true(s->chunks[3].has_max && s->chunks[3].max_len == 4);
    assert_memory_equal(s->chunks[3].max, "pear", 4);
    icm__parquet_stats_free(s);

    entry_bounds e;
    char why[160];
    entry_of(&e, 1, 2, "apple", "pear");
    assert_true(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    assert_true(fits(fb, len, NULL, -1, e.lower, e.upper, why)); /* count unknown */
    assert_false(fits(fb, len, NULL, 3, e.lower, e.upper, why));
    assert_string_equal(why, "it has 2 rows, the entry records 3");
    entry_of(&e, 1, 1, "apple", "pear");
    assert_false(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    assert_string_equal(why, "row group 1 holds a value of field 1 above the entry's upper "
                             "bound");
    entry_of(&e, 1, 2, "banana", "pear");
    assert_false(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    assert_string_equal(why, "row group 0 holds a value of field 2 below the entry's lower "
                             "bound");
    entry_of(&e, 0, 5, "a", "z"); /* wider bounds: still fits */
    assert_true(fits(fb, len, NULL, 2, e.lower, e.upper, why));
    /* no bounds at all: the count decides */
    bounds none;
    icm_raw empty = map(&none, 0, NULL, NULL, NULL);
    assert_true(fits(fb, len, NULL, 2, empty, empty, why));
    assert_true(fits(fb, len, NULL, 2, (icm_raw){NULL, 0}, (icm_raw){NULL, 0}, why));
}

/* Byte arrays that either side truncated: lower bounds are prefixes of the true minimum, and
 * an upper bound of 16 bytes or more may end in an incremented byte. */
static void test_truncated_strings(void **state)
{
    (void)state;
    uint8_t one[8];
    le64(1, one);
    const char *min = "abcdefghijklmnopqrstu", *max = "abcdefghijklmnopqrsz";
    chunk full[] = {{one, one, 8, 8, false}, {min, max, strlen(min), strlen(max), false}};
    uint8_t fb[1024];
    size_t len = footer(fb, ID_AND_S, 2, 1, 1, full);
    entry_bounds e;
    char why[160];
    entry_of(&e, 1, 1, "abcdefghijklmnop", "abcdefghijklmnoq"); /* Iceberg's truncate(16) */
    assert_true(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* the footer's own max truncated to 8 bytes and incremented */
    chunk cut[] = {{one, one, 8, 8, false}, {"abcdefgh", "abcdefgi", 8, 8, false}};
    len = footer(fb, ID_AND_S, 2, 1, 1, cut);
    assert_true(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* a short exact upper bound is compared whole */
    chunk shortv[] = {{one, one, 8, 8, false}, {"b", "d", 1, 1, false}};
    len = footer(fb, ID_AND_S, 2, 1, 1, shortv);
    entry_of(&e, 1, 1, "a", "c");
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
    le64(1, one);
    le64(9, nine);
    entry_bounds e;
    char why[160];
    entry_of(&e, 1, 1, "a", "a");
    uint8_t fb[1024];
    size_t len;

    /* id holds 9, above the entry's 1: found when compared */
    chunk nines[] = {{nine, nine, 8, 8, false}, {"a", "a", 1, 1, false}};
    len = footer(fb, ID_AND_S, 2, 1, 1, nines);
    assert_false(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* a 4-byte bound for an INT64 leaf: not compared */
    bounds lo4, up4;
    static const int32_t key1[] = {1};
    const void *v4[] = {"\x01\0\0\0"};
    const size_t l4[] = {4};
    assert_true(fits(fb, len, NULL, 1, map(&lo4, 1, key1, v4, l4), map(&up4, 1, key1, v4, l4),
                     why));
    /* a decimal leaf */
    const leaf decimal[] = {{"id", 2, 5 /* DECIMAL */, 1}, {"s", 6, 0, 2}};
    len = footer(fb, decimal, 2, 1, 1, nines);
    assert_true(fits(fb, len, NULL, 1, e.lower, e.upper, why));
    /* no field ids: compared only through the schema's top-level names */
    const leaf no_ids[] = {{"id", 2, -1, -1}, {"s", 6, 0, -1}};
    len = footer(fb, no_ids, 2, 1, 1, nines);
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
    chunk legacy[] = {{nine, nine, 8, 8, true}, {"z", "z", 1, 1, true}};
    len = footer(fb, ID_AND_S, 2, 1, 1, legacy);
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
    le64(1, one);
    chunk rg[] = {{one, one, 8, 8, false}};
    (void)rg;
    uint8_t fb[1024];
    icm__parquet_stats *s = NULL;
    chunk rg2[] = {{one, one, 8, 8, false}, {"a", "a", 1, 1, false}};
    size_t len = footer(fb, ID_AND_S, 2, 1, 1, rg2);
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
        cmocka_unit_test(test_fixture_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
