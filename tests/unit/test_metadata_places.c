/*
 * test_metadata_places.c: where another tool's metadata says its table's files go, read
 * leniently (spec/metadata_places.h): strict JSON the strict metadata reader rejects, lenient
 * JSON (duplicate keys, NaN, integers out of range, lone surrogates, a byte order mark),
 * gzip, duplicate keys that disagree on a place (refused), and what is not JSON at all.
 */
#include <string.h>

#include "spec/metadata_internal.h"
#include "spec/metadata_places.h"
#include "testutil.h"

#define LOG "\"metadata-log\": [{\"timestamp-ms\": 1, \"metadata-file\": \"/w/b/metadata/1.json\"}]"

static int places(const char *text, icm__md_places *p)
{
    return icm__metadata_places_lenient(text, strlen(text), "/w/b/metadata/2.json", p);
}

static void test_strict_json_that_is_not_valid_metadata(void **state)
{
    (void)state;
    icm__md_places p;
    /* a ref to a snapshot no longer there, an integer property value */
    icmt_ok(places("{\"format-version\": 2, \"table-uuid\": \"u\", \"location\": \"/w/b\", "
                   "\"refs\": {\"t\": {\"snapshot-id\": 7, \"type\": \"tag\"}}, "
                   "\"properties\": {\"write.data.path\": \"/w/a/bdata\", \"n\": 5}, " LOG "}",
                   &p));
    assert_string_equal(p.uuid, "u");
    assert_string_equal(p.roots[0], "/w/b");
    assert_string_equal(p.roots[1], "/w/a/bdata");
    assert_null(p.roots[2]);
    assert_int_equal(p.log.len, 1);
    assert_string_equal(p.log.items[0], "/w/b/metadata/1.json");
    icm__md_places_dispose(&p);
}

static void test_lenient_json(void **state)
{
    (void)state;
    icm__md_places p;
    const char *text = "\xEF\xBB\xBF{\"location\": \"/w/b\", \"last-updated-ms\": 1, "
                       "\"x\": NaN, \"y\": -Infinity, \"z\": 123456789012345678901234567890, "
                       "\"s\": \"\\ud800 \\u0000\", \"properties\": {\"write.metadata.path\": "
                       "\"/w/bm\", \"write.folder-storage.path\": \"/w/a/legacy\"}, " LOG
                       ", \"last-updated-ms\": 1}";
    json_t *doc = NULL;
    assert_int_equal(icm__json_parse(text, strlen(text), NULL, &doc), ICM_EINVALID);
    icm_error_clear();
    icmt_ok(places(text, &p));
    assert_null(p.uuid);
    assert_string_equal(p.roots[0], "/w/b");
    assert_null(p.roots[1]);
    assert_string_equal(p.roots[2], "/w/bm");
    assert_string_equal(p.roots[4], "/w/a/legacy");
    assert_int_equal(p.log.len, 1);
    icm__md_places_dispose(&p);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    icm__md_places p;
    /* duplicates that agree, and two metadata-logs: both are taken */
    icmt_ok(places("{\"location\": \"/w/b\", \"location\": \"/w/b\", " LOG ", "
                   "\"metadata-log\": [{\"metadata-file\": \"/w/b/metadata/0.json\"}]}",
                   &p));
    assert_string_equal(p.roots[0], "/w/b");
    assert_int_equal(p.log.len, 2);
    icm__md_places_dispose(&p);
    /* duplicates that name two places: which one a reader takes cannot be told */
    assert_int_equal(places("{\"location\": \"/w/b\", \"properties\": {\"write.data.path\": "
                            "\"/w/x\", \"write.data.path\": \"/w/a/bdata\"}}",
                            &p),
                     ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "write.data.path"));
    assert_non_null(strstr(icm_error_last()->message, "/w/a/bdata"));
    icm__md_places_dispose(&p);
    icm_error_clear();
}

static void test_gzip(void **state)
{
    (void)state;
    icm_table_metadata *md = NULL;
    const char *text = "{\"format-version\": 2, \"table-uuid\": \"9c12d441-03fe-4693-9a96-"
                       "a0705ddf69c1\", \"location\": \"/w/b\", \"last-sequence-number\": 0, "
                       "\"last-updated-ms\": 1, \"last-column-id\": 0, \"current-schema-id\": 0,"
                       " \"schemas\": [{\"type\": \"struct\", \"schema-id\": 0, \"fields\": []}],"
                       " \"default-spec-id\": 0, \"partition-specs\": [{\"spec-id\": 0, "
                       "\"fields\": []}], \"last-partition-id\": 999, \"default-sort-order-id\":"
                       " 0, \"sort-orders\": [{\"order-id\": 0, \"fields\": []}], "
                       "\"properties\": {\"write.data.path\": \"/w/a/bdata\"}}";
    icmt_ok(icm_table_metadata_parse(&md, text, strlen(text), NULL));
    char *gz = NULL;
    size_t n = 0;
    icmt_ok(icm_table_metadata_to_json_gzip(&gz, &n, md));
    icm__md_places p;
    icmt_ok(icm__metadata_places_lenient(gz, n, "/w/b/metadata/2.gz.metadata.json", &p));
    assert_string_equal(p.roots[0], "/w/b");
    assert_string_equal(p.roots[1], "/w/a/bdata");
    icm__md_places_dispose(&p);
    icm_free(gz);
    icm_table_metadata_free(md);
}

static void test_not_json(void **state)
{
    (void)state;
    icm__md_places p;
    const char *bad[] = {"not json at all", "[1, 2]", "{\"location\": \"/w/b\"", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(places(bad[i], &p), ICM_EINVALID);
        assert_true(icm_error_last()->message[0] != '\0');
        icm__md_places_dispose(&p);
        icm_error_clear();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strict_json_that_is_not_valid_metadata),
        cmocka_unit_test(test_lenient_json),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_not_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
