/*
 * tests/unit/test_partition_key.c: an entry's partition key (icm__partition_key, read by
 * icm__manifest_reader_next_view with ICM_MANIFEST_FIELD_PARTITION), on manifests written with
 * partition tuple schemas of each shape writers use:
 *  - one tuple written under different Avro types has one key: a nullable field with null
 *    first or last, or required; int or long; float or double; a decimal as fixed of any size
 *    or as bytes, with or without redundant sign bytes; float and double values not at all
 *    (a double carried rounded to float32, a NaN, null: one key);
 *  - another value, a null instead of a value, the values of two fields swapped: another key
 *    of the same shape (icm__partition_keys_differ);
 *  - another spec id, a date against a plain int, a fixed of another size: another shape
 *    (nothing compared); a field of a type not compared, or no spec id: unknown (shape 0);
 *  - the view program and the whole decode give the same key;
 *  - the partition not asked for: unknown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/manifest.h"
#include "manifest/manifest_internal.h"
#include "testutil.h"
#include "util/util.h"

#define TABLE_SCHEMA                                                                           \
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"a\","                 \
    "\"required\":false,\"type\":\"long\"}]}"

/* One Avro field of a tuple schema: its name, field id and type JSON. */
typedef struct field {
    const char *name;
    int id;
    const char *type;
} field;

static char *tuple_schema(const field *fields, size_t n)
{
    char *s = icmt_sprintf("{\"type\":\"record\",\"name\":\"r102\",\"fields\":[");
    for (size_t i = 0; i < n; i++) {
        char *t = icmt_sprintf("%s%s{\"name\":\"%s\",\"field-id\":%d,\"type\":%s}", s,
                               i > 0 ? "," : "", fields[i].name, fields[i].id, fields[i].type);
        free(s);
        s = t;
    }
    char *t = icmt_sprintf("%s]}", s);
    free(s);
    return t;
}

/* The key of the one entry of a manifest (spec `spec_id`, -1: the header left out) whose tuple
 * has the schema `fields` and the Avro bytes `tuple`, read as a view with `projection`. */
static icm__partition_key key_with(const field *fields, size_t n, int spec_id,
                                   const uint8_t *tuple, size_t tuple_len, uint64_t projection)
{
    char *schema = tuple_schema(fields, n);
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.format_version = 2;
    o.schema_json = TABLE_SCHEMA;
    o.partition_spec_json = "[]";
    o.partition_spec_id = spec_id < 0 ? 0 : spec_id;
    o.partition_avro_schema_json = schema;
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &o));
    icm_manifest_entry e;
    memset(&e, 0, sizeof e);
    e.status = ICM_ENTRY_ADDED;
    e.has_snapshot_id = true;
    e.snapshot_id = 1;
    e.data_file.content = ICM_FILE_CONTENT_DATA;
    e.data_file.file_path = "/t/data/f.parquet";
    e.data_file.file_path_len = strlen(e.data_file.file_path);
    e.data_file.file_format = ICM_FILE_FORMAT_PARQUET;
    e.data_file.record_count = 1;
    e.data_file.file_size_in_bytes = 10;
    e.data_file.partition = (icm_raw){tuple, tuple_len};
    icmt_ok(icm_manifest_writer_add(w, &e));
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_manifest_writer_finish(&data, &len, NULL, w));
    icm_manifest_writer_free(w);
    if (spec_id < 0) { /* (rename the header key: same length, so the file stays whole) */
        char *at = memmem(data, len, "partition-spec-id", 17);
        assert_non_null(at);
        memcpy(at, "partition-spec-ix", 17);
    }
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    ro.fields = projection;
    icm_manifest_reader *r = NULL;
    icmt_ok(icm_manifest_reader_open(&r, data, len, "/t/metadata/m.avro", &ro));
    icm__entry_view v;
    icmt_ok(icm__manifest_reader_next_view(r, &v));
    assert_int_equal(icm__manifest_reader_next_view(r, &v), ICM_ITEROVER);
    icm_manifest_reader_free(r);
    icm_free(data);
    free(schema);
    return v.partition;
}

/* The key through the view program, checked equal to the whole decode's. */
static icm__partition_key key_of(const field *fields, size_t n, int spec_id, const char *tuple,
                                 size_t tuple_len)
{
    const uint64_t view = ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_PARTITION;
    icm__partition_key k = key_with(fields, n, spec_id, (const uint8_t *)tuple, tuple_len, view);
    icm__partition_key whole = key_with(fields, n, spec_id, (const uint8_t *)tuple, tuple_len,
                                        ICM_MANIFEST_FIELD_ALL);
    assert_true(k.shape == whole.shape && k.values == whole.values);
    return k;
}

#define KEY(fields, spec, tuple) key_of(fields, ICM__ARRAY_LEN(fields), spec, tuple, sizeof tuple - 1)

static bool same(icm__partition_key a, icm__partition_key b)
{
    return a.shape != 0 && a.shape == b.shape && a.values == b.values;
}

/* (Avro: a long is a zigzag varint, 5 -> 0x0a; a union's branch index likewise, 1 -> 0x02; a
 * string or bytes its length then its bytes.) */
static void test_one_tuple_under_every_encoding(void **state)
{
    (void)state;
    const field null_first[] = {{"d", 1000, "[\"null\",\"int\"]"},
                                {"s", 1001, "[\"null\",\"string\"]"}};
    const field null_last[] = {{"d", 1000, "[\"long\",\"null\"]"},
                               {"s", 1001, "[\"string\",\"null\"]"}};
    const field required[] = {{"d", 1000, "\"long\""}, {"s", 1001, "\"string\""}};
    icm__partition_key k = KEY(null_first, 1, "\x02\x0a\x02\x02" "a");
    assert_int_not_equal(k.shape, 0);
    assert_true(same(k, KEY(null_last, 1, "\x00\x0a\x00\x02" "a")));
    assert_true(same(k, KEY(required, 1, "\x0a\x02" "a")));

    const field f32[] = {{"x", 1000, "[\"null\",\"float\"]"}};
    const field f64[] = {{"x", 1000, "\"double\""}};
    /* 1.5f: 0x3fc00000; 1.5: 0x3ff8000000000000 (little-endian) */
    assert_true(same(KEY(f32, 1, "\x02\x00\x00\xc0\x3f"),
                     KEY(f64, 1, "\x00\x00\x00\x00\x00\x00\xf8\x3f")));
    /* reals are not compared at all (PyIceberg 0.12 carries a double rounded to float32:
     * adversary round 16, F1): 1.1 and float32(1.1), a NaN, 0, -0, null are one key */
    assert_true(same(KEY(f64, 1, "\x9a\x99\x99\x99\x99\x99\xf1\x3f"),
                     KEY(f64, 1, "\x00\x00\x00\xa0\x99\x99\xf1\x3f")));
    assert_true(same(KEY(f32, 1, "\x02\x01\x00\xc0\x7f"),
                     KEY(f64, 1, "\x00\x00\x00\x00\x00\x00\x00\x80")));
    assert_true(same(KEY(f32, 1, "\x00"), KEY(f32, 1, "\x02\x00\x00\xc0\x3f")));
    /* ... while the other fields of the tuple still are */
    const field real_and_int[] = {{"x", 1000, "\"double\""}, {"d", 1001, "\"int\""}};
    assert_true(icm__partition_keys_differ(
        KEY(real_and_int, 1, "\x9a\x99\x99\x99\x99\x99\xf1\x3f\x0a"),
        KEY(real_and_int, 1, "\x00\x00\x00\xa0\x99\x99\xf1\x3f\x0c")));
    assert_true(same(KEY(real_and_int, 1, "\x9a\x99\x99\x99\x99\x99\xf1\x3f\x0a"),
                     KEY(real_and_int, 1, "\x00\x00\x00\xa0\x99\x99\xf1\x3f\x0a")));

    const field dec_fixed4[] = {
        {"m", 1000, "{\"type\":\"fixed\",\"name\":\"f4\",\"size\":4,\"logicalType\":\"decimal\","
                    "\"precision\":9,\"scale\":2}"}};
    const field dec_fixed2[] = {
        {"m", 1000, "{\"type\":\"fixed\",\"name\":\"f2\",\"size\":2,\"logicalType\":\"decimal\","
                    "\"precision\":4,\"scale\":2}"}};
    const field dec_bytes[] = {
        {"m", 1000, "[\"null\",{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":9,"
                    "\"scale\":2}]"}};
    /* 258 and -128, sign-extended to 4 bytes, in 2, and as minimal bytes */
    icm__partition_key pos = KEY(dec_fixed4, 1, "\x00\x00\x01\x02");
    assert_true(same(pos, KEY(dec_fixed2, 1, "\x01\x02")));
    assert_true(same(pos, KEY(dec_bytes, 1, "\x02\x04\x01\x02")));
    assert_true(same(pos, KEY(dec_bytes, 1, "\x02\x08\x00\x00\x01\x02")));
    icm__partition_key neg = KEY(dec_fixed4, 1, "\xff\xff\xff\x80");
    assert_true(same(neg, KEY(dec_bytes, 1, "\x02\x02\x80")));
    assert_false(same(neg, pos));
    assert_true(icm__partition_keys_differ(neg, pos));
    /* zero: no bytes, or zero bytes */
    assert_true(same(KEY(dec_bytes, 1, "\x02\x00"), KEY(dec_fixed4, 1, "\x00\x00\x00\x00")));
}

static void test_other_values_differ(void **state)
{
    (void)state;
    const field two[] = {{"d", 1000, "[\"null\",\"int\"]"}, {"e", 1001, "[\"null\",\"int\"]"}};
    icm__partition_key k = KEY(two, 1, "\x02\x0a\x02\x0c"); /* (5, 6) */
    assert_true(icm__partition_keys_differ(k, KEY(two, 1, "\x02\x0c\x02\x0c")));  /* (6, 6) */
    assert_true(icm__partition_keys_differ(k, KEY(two, 1, "\x02\x0c\x02\x0a")));  /* (6, 5) */
    /* null is a value apart from every other, and the key says it holds one (a writer that
     * infers an added file's tuple from its statistics records null where it has none:
     * adversary round 20, D2) */
    icm__partition_key null6 = KEY(two, 1, "\x00\x02\x0c"); /* (null, 6) */
    assert_true(icm__partition_keys_differ(k, null6));
    assert_true(icm__partition_keys_differ(KEY(two, 1, "\x02\x00\x02\x0c"), null6)); /* 0, 6 */
    assert_true(same(null6, KEY(two, 1, "\x00\x02\x0c")));
    assert_true(icm__partition_keys_differ(null6, KEY(two, 1, "\x00\x02\x0e"))); /* (null, 7) */
    assert_true(icm__partition_key_has_null(null6));
    assert_false(icm__partition_key_has_null(k));
    assert_false(icm__partition_key_has_null((icm__partition_key){0, 0}));
    const field text[] = {{"s", 1000, "\"string\""}};
    assert_true(icm__partition_keys_differ(KEY(text, 1, "\x02" "a"), KEY(text, 1, "\x02" "b")));
    assert_true(icm__partition_keys_differ(KEY(text, 1, "\x00"), KEY(text, 1, "\x02" "a")));
    const field flag[] = {{"b", 1000, "\"boolean\""}};
    assert_true(icm__partition_keys_differ(KEY(flag, 1, "\x00"), KEY(flag, 1, "\x01")));
    const field none[] = {{"x", 1000, "\"int\""}}; /* (an unpartitioned table: no field) */
    icm__partition_key empty = key_of(none, 0, 1, "", 0);
    assert_int_not_equal(empty.shape, 0);
    assert_true(same(empty, key_of(none, 0, 1, "", 0)));
}

static void test_other_shapes_compare_nothing(void **state)
{
    (void)state;
    const field plain[] = {{"d", 1000, "\"int\""}};
    const field date[] = {{"d", 1000, "{\"type\":\"int\",\"logicalType\":\"date\"}"}};
    const field other_id[] = {{"d", 1001, "\"int\""}};
    icm__partition_key k = KEY(plain, 1, "\x0a");
    const icm__partition_key others[] = {KEY(plain, 2, "\x0c"), KEY(date, 1, "\x0c"),
                                         KEY(other_id, 1, "\x0c")};
    for (size_t i = 0; i < ICM__ARRAY_LEN(others); i++) {
        assert_int_not_equal(others[i].shape, 0);
        assert_int_not_equal(others[i].shape, k.shape);
        assert_false(icm__partition_keys_differ(k, others[i]));
    }
    const field fixed2[] = {{"u", 1000, "{\"type\":\"fixed\",\"name\":\"u2\",\"size\":2}"}};
    const field fixed3[] = {{"u", 1000, "{\"type\":\"fixed\",\"name\":\"u3\",\"size\":3}"}};
    assert_false(icm__partition_keys_differ(KEY(fixed2, 1, "\x01\x02"),
                                            KEY(fixed3, 1, "\x00\x01\x02")));
    /* unknown: a field of a type not compared; no spec id; the partition not asked for */
    const field nested[] = {
        {"r", 1000, "{\"type\":\"record\",\"name\":\"in\",\"fields\":[{\"name\":\"i\","
                    "\"type\":\"int\"}]}"}};
    assert_int_equal(KEY(nested, 1, "\x0a").shape, 0);
    assert_int_equal(KEY(plain, -1, "\x0a").shape, 0);
    const uint8_t five = 0x0a;
    assert_int_equal(key_with(plain, 1, 1, &five, 1, ICM_MANIFEST_FIELD_FILE_PATH).shape, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_tuple_under_every_encoding),
        cmocka_unit_test(test_other_values_differ),
        cmocka_unit_test(test_other_shapes_compare_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
