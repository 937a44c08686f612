/*
 * tests/unit/test_metadata_edit.c: lossless edits of table metadata (remove snapshots and refs,
 * properties, metadata-log, last-updated-ms), copy isolation, unknown fields surviving, and the
 * allocation-failure ("chaos") loops: every failed allocation gives ICM_ENOMEM, leaves the
 * object unchanged and leaks nothing (ASan's leak checker runs at exit).
 */
#include "test_metadata_common.h"

/* The JSON text of md, for before/after comparisons (free). */
static char *text_of(const icm_table_metadata *md)
{
    char *out = NULL;
    icmt_ok(icm_table_metadata_to_json(&out, NULL, md));
    char *copy = strdup(out);
    icm_free(out);
    return copy;
}

static json_t *doc_of(const icm_table_metadata *md)
{
    return icm__table_metadata_json(md);
}

static bool has_snapshot(const icm_table_metadata *md, int64_t id)
{
    return icm_table_metadata_snapshot_by_id(md, id) != NULL;
}

static void test_remove_snapshots_removes_exactly_what_points_at_them(void **state)
{
    (void)state;
    char *t = sq(RICH_V2);
    icm_table_metadata *orig = parse_ok(t);
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, orig));

    /* remove snapshot 1: the tag on it, its snapshot-log entry and its statistics file go */
    int64_t ids[] = {1, 424242 /* unknown ids are ignored */};
    icmt_ok(icm_table_metadata_remove_snapshots(md, ids, 2));
    assert_int_equal(icm_table_metadata_snapshot_count(md), 2);
    assert_false(has_snapshot(md, 1));
    assert_true(has_snapshot(md, NEG_ID) && has_snapshot(md, BIG_ID));
    /* the surviving snapshots still name 1 as parent: the spec allows a missing parent */
    assert_true(icm_table_metadata_snapshot_by_id(md, NEG_ID)->parent_snapshot_id == 1);
    assert_int_equal(icm_table_metadata_ref_count(md), 2);
    assert_null(icm_table_metadata_ref_by_name(md, "v1.0"));
    assert_non_null(icm_table_metadata_ref_by_name(md, "audit"));
    assert_non_null(icm_table_metadata_ref_by_name(md, "main"));
    assert_int_equal(icm_table_metadata_snapshot_log_count(md), 2);
    assert_true(icm_table_metadata_snapshot_log_at(md, 0)->snapshot_id == NEG_ID);
    assert_true(icm_table_metadata_snapshot_log_at(md, 1)->snapshot_id == BIG_ID);
    assert_int_equal(icm_table_metadata_statistics_count(md), 2);
    assert_true(icm_table_metadata_statistics_at(md, 0)->snapshot_id == NEG_ID);
    assert_true(icm_table_metadata_statistics_at(md, 1)->snapshot_id == BIG_ID);
    assert_true(icm_table_metadata_statistics_at(md, 1)->partition_statistics);
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 1); /* untouched */

    /* everything else is byte-for-byte what it was: compare the documents minus the edits */
    json_t *want = json_deep_copy(doc_of(orig));
    json_array_remove(json_object_get(want, "snapshots"), 0);
    json_object_del(json_object_get(want, "refs"), "v1.0");
    json_array_remove(json_object_get(want, "snapshot-log"), 0);
    json_array_remove(json_object_get(want, "statistics"), 0);
    assert_true(json_equal(want, doc_of(md)));
    json_decref(want);
    /* unknown fields (top level and inside a snapshot) survive a write */
    char *out = text_of(md);
    assert_non_null(strstr(out, "\"x-vendor\""));
    assert_non_null(strstr(out, "\"x-snapshot-extra\""));
    free(out);
    icm_table_metadata_free(md);

    /* remove the negative-id snapshot: Java drops its log entry AND the history before it,
     * the branch `audit` pointing at it and its statistics file */
    md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, orig));
    int64_t neg = NEG_ID;
    icmt_ok(icm_table_metadata_remove_snapshots(md, &neg, 1));
    assert_int_equal(icm_table_metadata_snapshot_count(md), 2);
    assert_null(icm_table_metadata_ref_by_name(md, "audit"));
    assert_non_null(icm_table_metadata_ref_by_name(md, "v1.0"));
    assert_int_equal(icm_table_metadata_snapshot_log_count(md), 1);
    assert_true(icm_table_metadata_snapshot_log_at(md, 0)->snapshot_id == BIG_ID);
    assert_int_equal(icm_table_metadata_statistics_count(md), 2);
    assert_true(icm_table_metadata_statistics_at(md, 0)->snapshot_id == 1);
    icm_table_metadata_free(md);

    /* the original was never touched */
    char *t2 = sq(RICH_V2);
    icm_table_metadata *fresh = parse_ok(t2);
    assert_true(json_equal(doc_of(orig), doc_of(fresh)));
    assert_views_equal(orig, fresh);
    icm_table_metadata_free(fresh);
    icm_table_metadata_free(orig);
    free(t2);
    free(t);
}

static void test_remove_current_snapshot_is_refused(void **state)
{
    (void)state;
    char *t = sq(RICH_V2);
    icm_table_metadata *md = parse_ok(t);
    char *before = text_of(md);
    int64_t ids[] = {1, BIG_ID};
    assert_int_equal(icm_table_metadata_remove_snapshots(md, ids, 2), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "current snapshot"));
    char *after = text_of(md);
    assert_string_equal(before, after); /* nothing half-done: snapshot 1 is still there */
    assert_true(has_snapshot(md, 1));
    /* no ids: nothing changes */
    icmt_ok(icm_table_metadata_remove_snapshots(md, NULL, 0));
    free(after);
    after = text_of(md);
    assert_string_equal(before, after);
    free(before);
    free(after);
    icm_table_metadata_free(md);
    free(t);
}

static void test_remove_ref(void **state)
{
    (void)state;
    char *t = sq(RICH_V2);
    icm_table_metadata *md = parse_ok(t);
    icmt_ok(icm_table_metadata_remove_ref(md, "v1.0"));
    assert_null(icm_table_metadata_ref_by_name(md, "v1.0"));
    assert_int_equal(icm_table_metadata_ref_count(md), 2);
    assert_true(has_snapshot(md, 1)); /* the snapshot stays; expiry decides about it */
    assert_int_equal(icm_table_metadata_remove_ref(md, "v1.0"), ICM_ENOTFOUND);
    assert_int_equal(icm_table_metadata_remove_ref(md, "main"), ICM_EREFUSED);
    assert_non_null(icm_table_metadata_ref_by_name(md, "main"));
    icm_table_metadata_free(md);
    free(t);

    /* an implicit main is not in the document either: still refused, not "not found" */
    t = sq(MIN_V2 ",'current-snapshot-id':4,'snapshots':[" SNAP_M(4) "]}");
    md = parse_ok(t);
    assert_int_equal(icm_table_metadata_remove_ref(md, "main"), ICM_EREFUSED);
    icm_table_metadata_free(md);
    free(t);
}

static void test_properties(void **state)
{
    (void)state;
    char *t = sq(MIN_V2 "}");
    icm_table_metadata *md = parse_ok(t);
    assert_int_equal(icm_table_metadata_property_count(md), 0);
    icmt_ok(icm_table_metadata_set_property(md, "gc.enabled", NULL)); /* absent: no-op */
    icmt_ok(icm_table_metadata_set_property(md, "b", "1"));
    icmt_ok(icm_table_metadata_set_property(md, "a", "2"));
    icmt_ok(icm_table_metadata_set_property(md, "b", "3")); /* replace keeps its position */
    const char *k, *v;
    assert_int_equal(icm_table_metadata_property_count(md), 2);
    icm_table_metadata_property_at(&k, &v, md, 0);
    assert_string_equal(k, "b");
    assert_string_equal(v, "3");
    assert_string_equal(icm_table_metadata_property(md, "a"), "2");
    icmt_ok(icm_table_metadata_set_property(md, "b", NULL));
    assert_null(icm_table_metadata_property(md, "b"));
    assert_int_equal(icm_table_metadata_property_count(md), 1);
    icmt_ok(icm_table_metadata_set_property(md, "unicode", "h\xc3\xa9 \xe2\x82\xac"));
    assert_string_equal(icm_table_metadata_property(md, "unicode"), "h\xc3\xa9 \xe2\x82\xac");
    assert_int_equal(icm_table_metadata_set_property(md, "bad", "\xc3("), ICM_EINVALID);
    assert_int_equal(icm_table_metadata_set_property(md, "\xed\xa0\x80", "v"), ICM_EINVALID);
    assert_int_equal(icm_table_metadata_set_property(md, NULL, "v"), ICM_EINVALID);
    assert_int_equal(icm_table_metadata_property_count(md), 2);
    /* survives a write and a read */
    char *out = text_of(md);
    icm_table_metadata *again = parse_ok(out);
    assert_views_equal(md, again);
    icm_table_metadata_free(again);
    free(out);
    icm_table_metadata_free(md);
    free(t);
}

static void test_metadata_log_and_last_updated(void **state)
{
    (void)state;
    char *t = sq(RICH_V2);
    icm_table_metadata *md = parse_ok(t);
    icmt_ok(icm_table_metadata_set_last_updated_ms(md, INT64_C(1700000400000)));
    assert_true(icm_table_metadata_last_updated_ms(md) == INT64_C(1700000400000));
    icmt_ok(icm_table_metadata_append_metadata_log(md, INT64_C(1700000300000),
                                                   "s3://bucket/db/t/metadata/00001-b.json"));
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 2);
    const icm_metadata_log_entry *e = icm_table_metadata_metadata_log_at(md, 1);
    assert_true(e->timestamp_ms == INT64_C(1700000300000));
    assert_string_equal(e->metadata_file, "s3://bucket/db/t/metadata/00001-b.json");
    /* an entry later than last-updated-ms (beyond clock skew) would be invalid metadata */
    char *before = text_of(md);
    assert_int_equal(icm_table_metadata_append_metadata_log(md, INT64_C(1800000000000), "x"),
                     ICM_EINVALID);
    char *after = text_of(md);
    assert_string_equal(before, after);
    free(after);
    /* key order: last-updated-ms kept its place, entries are {timestamp-ms, metadata-file} */
    assert_true(strstr(before, "\"last-sequence-number\"") < strstr(before, "\"last-updated-ms\""));
    assert_true(strstr(before, "\"last-updated-ms\"") < strstr(before, "\"last-column-id\""));
    assert_non_null(strstr(before, "\"timestamp-ms\": 1700000300000,\n      \"metadata-file\""));
    free(before);

    icmt_ok(icm_table_metadata_trim_metadata_log(md, 5)); /* fewer than 5: unchanged */
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 2);
    icmt_ok(icm_table_metadata_trim_metadata_log(md, 1)); /* the oldest goes */
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 1);
    assert_string_equal(icm_table_metadata_metadata_log_at(md, 0)->metadata_file,
                        "s3://bucket/db/t/metadata/00001-b.json");
    icmt_ok(icm_table_metadata_trim_metadata_log(md, 0));
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 0);
    icm_table_metadata_free(md);
    free(t);

    /* metadata-log absent: created on first append */
    t = sq(MIN_V2 "}");
    md = parse_ok(t);
    icmt_ok(icm_table_metadata_append_metadata_log(md, 5, "f"));
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 1);
    icm_table_metadata_free(md);
    free(t);
}

static void test_copy_isolation(void **state)
{
    (void)state;
    icm_table_metadata *orig = load_fixture(
        "impala/testdata/data/iceberg_test/hadoop_catalog/ice/"
        "iceberg_v2_positional_not_all_data_files_have_delete_files/metadata/v7.metadata.json");
    char *before = text_of(orig);
    icm_table_metadata *copy = NULL;
    icmt_ok(icm_table_metadata_copy(&copy, orig));
    assert_views_equal(orig, copy);
    assert_string_equal(icm_table_metadata_file(copy), icm_table_metadata_file(orig));
    /* edit the copy in every way */
    const icm_snapshot *oldest = icm_table_metadata_snapshot_at(copy, 0);
    int64_t id = oldest->snapshot_id;
    icmt_ok(icm_table_metadata_remove_snapshots(copy, &id, 1));
    icmt_ok(icm_table_metadata_set_property(copy, "x", "y"));
    int64_t now = icm_table_metadata_last_updated_ms(orig) + 1000;
    icmt_ok(icm_table_metadata_set_last_updated_ms(copy, now));
    icmt_ok(icm_table_metadata_append_metadata_log(copy, now, "f"));
    assert_int_equal(icm_table_metadata_snapshot_count(copy),
                     icm_table_metadata_snapshot_count(orig) - 1);
    /* the original: same text, same views, snapshot still there */
    char *after = text_of(orig);
    assert_string_equal(before, after);
    assert_true(has_snapshot(orig, id));
    assert_null(icm_table_metadata_property(orig, "x"));
    free(before);
    free(after);
    icm_table_metadata_free(copy);
    icm_table_metadata_free(orig);
}

/* The expiry's one-step edit gives the same document as the public edits one after the other
 * (remove the ref, then the snapshot: `main` stays, unknown names are ignored), shares what it
 * keeps with the original without changing it, and outlives the original. */
static void test_without_snapshots(void **state)
{
    (void)state;
    char *t = sq(RICH_V2);
    icm_table_metadata *orig = parse_ok(t);
    char *before = text_of(orig);
    icm_table_metadata *stepwise = NULL;
    icmt_ok(icm_table_metadata_copy(&stepwise, orig));
    icmt_ok(icm_table_metadata_remove_ref(stepwise, "audit"));
    int64_t one = 1;
    icmt_ok(icm_table_metadata_remove_snapshots(stepwise, &one, 1));

    const char *const drop[] = {"audit", "main", "no-such-ref"};
    icm_table_metadata *md = NULL;
    icmt_ok(icm__table_metadata_without_snapshots(orig, &one, 1, drop, 3, &md));
    char *want = text_of(stepwise), *got = text_of(md);
    assert_string_equal(got, want);
    assert_non_null(icm_table_metadata_ref_by_name(md, "main"));
    assert_null(icm_table_metadata_ref_by_name(md, "audit"));
    assert_null(icm_table_metadata_ref_by_name(md, "v1.0"));
    assert_false(has_snapshot(md, 1));

    /* further edits of the new object leave the original as it was */
    icmt_ok(icm_table_metadata_set_property(md, "x", "y"));
    int64_t neg = NEG_ID;
    icmt_ok(icm_table_metadata_remove_snapshots(md, &neg, 1));
    icmt_ok(icm_table_metadata_append_metadata_log(md, INT64_C(1700000200000), "f"));
    char *after = text_of(orig);
    assert_string_equal(after, before);
    assert_true(has_snapshot(orig, 1) && has_snapshot(orig, NEG_ID));

    /* the current snapshot is refused, and nothing is made */
    icm_table_metadata *refused = NULL;
    int64_t current;
    assert_true(icm_table_metadata_current_snapshot_id(&current, orig));
    assert_int_equal(icm__table_metadata_without_snapshots(orig, &current, 1, NULL, 0, &refused),
                     ICM_EREFUSED);
    assert_null(refused);

    /* the new object outlives the original (shared values are reference-counted) */
    icm_table_metadata_free(orig);
    char *last = text_of(md);
    assert_non_null(strstr(last, "\"x\""));
    free(last);
    free(after);
    free(got);
    free(want);
    free(before);
    icm_table_metadata_free(md);
    icm_table_metadata_free(stepwise);
    free(t);
}

/* A real fixture with vendor fields added in memory: they survive edits and a write. */
static void test_unknown_fields_survive_on_real_metadata(void **state)
{
    (void)state;
    char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(),
                              "duckdb-iceberg/data/iceberg/generated_spec2_0_001/"
                              "pyspark_iceberg_table/metadata/v9.metadata.json");
    char *raw = icmt_read_file(path, NULL);
    assert_non_null(raw);
    json_t *doc = json_loads(raw, 0, NULL);
    assert_non_null(doc);
    json_t *vendor = json_pack("{s:{s:[i,s,f]}}", "x-custom", "list", 1, "two", 3.25);
    json_object_update(doc, vendor);
    json_t *snaps = json_object_get(doc, "snapshots");
    size_t last = json_array_size(snaps) - 1;
    json_object_set_new(json_array_get(snaps, last), "x-snap", json_string("kept"));
    char *text = json_dumps(doc, JSON_PRESERVE_ORDER);

    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_parse(&md, text, strlen(text), path));
    int64_t oldest = icm_table_metadata_snapshot_at(md, 0)->snapshot_id;
    icmt_ok(icm_table_metadata_remove_snapshots(md, &oldest, 1));
    icmt_ok(icm_table_metadata_set_property(md, "k", "v"));
    char *out = text_of(md);
    json_t *back = json_loads(out, 0, NULL);
    assert_true(json_equal(json_object_get(back, "x-custom"), json_object_get(vendor, "x-custom")));
    json_t *back_snaps = json_object_get(back, "snapshots");
    assert_int_equal(json_array_size(back_snaps), last);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(back_snaps, last - 1), "x-snap")),
        "kept");
    json_decref(back);
    free(out);
    icm_table_metadata_free(md);
    free(text);
    json_decref(vendor);
    json_decref(doc);
    free(raw);
    free(path);
}

/* ---- allocation failure ---- */

static long g_alloc_count, g_fail_at;

static void *chaos_malloc(size_t n)
{
    return ++g_alloc_count == g_fail_at ? NULL : malloc(n);
}

static void *chaos_realloc(void *p, size_t n)
{
    return ++g_alloc_count == g_fail_at ? NULL : realloc(p, n);
}

static const icm_allocator k_chaos = {chaos_malloc, chaos_realloc, free};

/* Run op with the Nth allocation failing for N = 1, 2, ... until it succeeds. Every failure
 * must be ICM_ENOMEM. Returns the number of allocations the successful run made. */
static long chaos_loop(int (*op)(void *arg), void (*undo)(void *arg), void *arg)
{
    icm_allocator_hook_json(); /* jansson's allocations fail too */
    for (long n = 1;; n++) {
        g_alloc_count = 0;
        g_fail_at = n;
        icm_allocator_set(&k_chaos);
        int rc = op(arg);
        icm_allocator_set(NULL);
        if (rc == 0) {
            if (undo)
                undo(arg);
            assert_true(n > 1); /* the operation does allocate, so failures were exercised */
            return n;
        }
        if (rc != ICM_ENOMEM) {
            print_error("allocation %ld: expected ICM_ENOMEM, got %s: %s\n", n,
                        icm_error_code_name(rc), icm_error_last()->message);
            fail();
        }
    }
}

typedef struct parse_arg {
    const char *data;
    size_t len;
    icm_table_metadata *md;
} parse_arg;

static int op_parse(void *arg)
{
    parse_arg *p = arg;
    int rc = icm_table_metadata_parse(&p->md, p->data, p->len, "chaos");
    if (rc != 0)
        assert_null(p->md);
    return rc;
}

static void undo_parse(void *arg)
{
    parse_arg *p = arg;
    icm_table_metadata_free(p->md);
    p->md = NULL;
}

static void test_chaos_parse(void **state)
{
    (void)state;
    const char *files[] = {
        "impala/testdata/data/iceberg_test/hadoop_catalog/ice/"
        "iceberg_v2_delete_equality_partitioned/metadata/v5.metadata.json",
        "duckdb-iceberg/data/persistent/iceberg/lineitem_iceberg_gz/metadata/v1.gz.metadata.json",
        "metadata-json/iceberg-go/table/testdata/TableMetadataV2Valid.zstd.metadata.json",
        "duckdb-iceberg/data/persistent/iceberg_v1_deprecated/default/legacy_v1/metadata/"
        "v2.metadata.json"};
    for (size_t i = 0; i < ICM__ARRAY_LEN(files); i++) {
        char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(), files[i]);
        parse_arg a = {NULL, 0, NULL};
        a.data = icmt_read_file(path, &a.len);
        assert_non_null(a.data);
        chaos_loop(op_parse, undo_parse, &a);
        free((void *)a.data);
        free(path);
    }
}

typedef struct edit_arg {
    icm_table_metadata *md;
    char *before;
    int which;
} edit_arg;

static int op_edit(void *arg)
{
    edit_arg *e = arg;
    int64_t one = 1;
    char *out = NULL;
    size_t len;
    icm_table_metadata *copy = NULL;
    int rc = ICM_ERROR;
    switch (e->which) {
    case 0: rc = icm_table_metadata_remove_snapshots(e->md, &one, 1); break;
    case 1: rc = icm_table_metadata_remove_ref(e->md, "audit"); break;
    case 2: rc = icm_table_metadata_set_property(e->md, "new", "value"); break;
    case 3:
        rc = icm_table_metadata_append_metadata_log(e->md, INT64_C(1700000300000), "f");
        break;
    case 4: rc = icm_table_metadata_trim_metadata_log(e->md, 0); break;
    case 5: rc = icm_table_metadata_set_last_updated_ms(e->md, INT64_C(1700000400000)); break;
    case 6:
        rc = icm_table_metadata_copy(&copy, e->md);
        icm_table_metadata_free(copy);
        break;
    case 7:
        rc = icm_table_metadata_to_json(&out, &len, e->md);
        icm_free(out);
        break;
    case 8:
        rc = icm_table_metadata_to_json_gzip(&out, &len, e->md);
        icm_free(out);
        break;
    case 9:
        rc = icm_table_metadata_schema_json(&out, e->md, 1);
        icm_free(out);
        break;
    }
    if (rc != 0) {
        /* a failed edit leaves the object exactly as it was */
        char *now = text_of(e->md);
        assert_string_equal(now, e->before);
        free(now);
    }
    return rc;
}

static void test_chaos_edits(void **state)
{
    (void)state;
    char *t = sq(RICH_V2);
    for (int which = 0; which <= 9; which++) {
        edit_arg e = {parse_ok(t), NULL, which};
        e.before = text_of(e.md);
        chaos_loop(op_edit, NULL, &e);
        free(e.before);
        icm_table_metadata_free(e.md);
    }
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remove_snapshots_removes_exactly_what_points_at_them),
        cmocka_unit_test(test_without_snapshots),
        cmocka_unit_test(test_remove_current_snapshot_is_refused),
        cmocka_unit_test(test_remove_ref),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_metadata_log_and_last_updated),
        cmocka_unit_test(test_copy_isolation),
        cmocka_unit_test(test_unknown_fields_survive_on_real_metadata),
        cmocka_unit_test(test_chaos_parse),
        cmocka_unit_test(test_chaos_edits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
