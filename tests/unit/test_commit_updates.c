/*
 * tests/unit/test_commit_updates.c: a commit as requirements + updates (icemaint/update.h):
 * each update applied to real fixture metadata (with members icemaint does not know added)
 * changes exactly what it names and keeps everything else in place; each requirement passes
 * and fails with its exact message; the REST wire form; parsing it back and its refusals.
 */
#include "test_metadata_common.h"

#include "icemaint/expire.h"
#include "icemaint/update.h"
#include "maint/expire_internal.h"

#define MULTI_BLOB                                                                             \
    "duckdb-iceberg/data/persistent/multi_blob_deletion_vectors/warehouse/default/"            \
    "multi_blob_deletion_vectors/metadata/00003-multi-blob.metadata.json"
#define TWO_SPECS "impala/testdata/data/iceberg_test/iceberg_v3/test_default_part/metadata/" \
                  "v6.metadata.json"

/* Snapshots of MULTI_BLOB, oldest first; S3 is current. */
#define S1 INT64_C(4008342791228255080)
#define S2 INT64_C(6085737399650530681)
#define S3 INT64_C(7777777777777777777)

/* A fixture with members icemaint does not know: a top-level `x-unknown` and a `x-note` in
 * refs.main. */
static icm_table_metadata *load_with_unknowns(const char *rel)
{
    char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(), rel);
    char *text = icmt_read_file(path, NULL);
    assert_non_null(text);
    json_t *doc = icmt_json_parse(text);
    assert_non_null(doc);
    json_object_set_new(doc, "x-unknown", json_pack("{s:[i,s]}", "keep", 1, "two"));
    json_t *main_ref = json_object_get(json_object_get(doc, "refs"), "main");
    if (main_ref != NULL)
        json_object_set_new(main_ref, "x-note", json_string("kept"));
    char *out = json_dumps(doc, JSON_PRESERVE_ORDER | JSON_COMPACT);
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_parse(&md, out, strlen(out), path));
    free(out);
    json_decref(doc);
    free(text);
    free(path);
    return md;
}

static char *text_of(const icm_table_metadata *md)
{
    char *out = NULL;
    icmt_ok(icm_table_metadata_to_json(&out, NULL, md));
    char *copy = strdup(out);
    icm_free(out);
    return copy;
}

/* Every top-level member of `base` not in `changed` (NULL-terminated) is in `md` with an equal
 * value, and base's members keep their relative order in md. */
static void assert_rest_kept(const icm_table_metadata *base, const icm_table_metadata *md,
                             const char *const *changed)
{
    json_t *a = icm__table_metadata_json(base), *b = icm__table_metadata_json(md);
    const char *key;
    json_t *v;
    void *it = json_object_iter(b);
    json_object_foreach(a, key, v) {
        bool is_changed = false;
        for (size_t i = 0; changed[i] != NULL; i++)
            is_changed = is_changed || strcmp(changed[i], key) == 0;
        if (!is_changed && !json_equal(v, json_object_get(b, key))) {
            print_error("member %s changed\n", key);
            fail();
        }
        /* order: walk b's keys alongside */
        while (it != NULL && strcmp(json_object_iter_key(it), key) != 0)
            it = json_object_iter_next(b, it);
        if (json_object_get(b, key) != NULL && it == NULL) {
            print_error("member %s moved\n", key);
            fail();
        }
    }
    assert_true(json_equal(json_object_get(b, "x-unknown"), json_object_get(a, "x-unknown")));
}

static icm_table_changes *changes_new(void)
{
    icm_table_changes *c = NULL;
    icmt_ok(icm_table_changes_new(&c));
    return c;
}

/* Apply c to base; base's text must not change. */
static icm_table_metadata *apply_ok(icm_table_changes *c, const icm_table_metadata *base)
{
    char *before = text_of(base);
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_changes_apply(&md, c, base));
    char *after = text_of(base);
    assert_string_equal(before, after);
    assert_string_equal(icm_table_metadata_file(md), icm_table_metadata_file(base));
    free(before);
    free(after);
    return md;
}

static void apply_fails(icm_table_changes *c, const icm_table_metadata *base, int code,
                        const char *message)
{
    icm_table_metadata *md = NULL;
    int rc = icm_table_changes_apply(&md, c, base);
    if (rc != code || strstr(icm_error_last()->message, message) == NULL)
        print_error("got %s: %s\n", icm_error_code_name(rc), icm_error_last()->message);
    assert_int_equal(rc, code);
    assert_non_null(strstr(icm_error_last()->message, message));
    assert_null(md);
}

static json_t *member(const icm_table_metadata *md, const char *key)
{
    return json_object_get(icm__table_metadata_json(md), key);
}

/* ---- apply, one update kind at a time ---- */

static void test_properties(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(TWO_SPECS);
    size_t n0 = icm_table_metadata_property_count(base);
    assert_true(n0 > 0);
    const char *k0 = NULL, *v0 = NULL;
    icm_table_metadata_property_at(&k0, &v0, base, 0);
    char *first = strdup(k0);

    icm_table_changes *c = changes_new();
    icm_property set[] = {{"zz.new", "1"}, {first, "replaced"}};
    icmt_ok(icm_table_changes_set_properties(c, set, 2));
    icm_table_metadata *md = apply_ok(c, base);
    const char *const changed[] = {"properties", NULL};
    assert_rest_kept(base, md, changed);
    assert_int_equal(icm_table_metadata_property_count(md), n0 + 1);
    const char *k = NULL, *v = NULL;
    icm_table_metadata_property_at(&k, &v, md, 0); /* replaced in place */
    assert_string_equal(k, first);
    assert_string_equal(v, "replaced");
    icm_table_metadata_property_at(&k, &v, md, n0); /* new last */
    assert_string_equal(k, "zz.new");
    assert_string_equal(v, "1");
    icm_table_changes_free(c);

    c = changes_new();
    const char *rm[] = {"zz.new", "not.there"};
    icmt_ok(icm_table_changes_remove_properties(c, rm, 2));
    icm_table_metadata *md2 = apply_ok(c, md);
    assert_int_equal(icm_table_metadata_property_count(md2), n0);
    assert_null(icm_table_metadata_property(md2, "zz.new"));
    assert_string_equal(icm_table_metadata_property(md2, first), "replaced");
    icm_table_changes_free(c);

    /* removing only absent keys leaves the document exactly as it was */
    c = changes_new();
    const char *absent[] = {"not.there"};
    icmt_ok(icm_table_changes_remove_properties(c, absent, 1));
    icm_table_metadata *md3 = apply_ok(c, base);
    char *a = text_of(base), *b = text_of(md3);
    assert_string_equal(a, b);
    free(a);
    free(b);
    icm_table_changes_free(c);
    icm_table_metadata_free(md3);
    icm_table_metadata_free(md2);
    icm_table_metadata_free(md);
    icm_table_metadata_free(base);
    free(first);
}

static void test_statistics(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(MULTI_BLOB);
    icm_table_changes *c = changes_new();
    icmt_ok(icm_table_changes_set_statistics(
        c, "{\"snapshot-id\":4008342791228255080,\"statistics-path\":\"s3://b/a.stats\","
           "\"file-size-in-bytes\":10,\"file-footer-size-in-bytes\":4,\"blob-metadata\":[]}"));
    icmt_ok(icm_table_changes_set_statistics(
        c, "{\"snapshot-id\":6085737399650530681,\"statistics-path\":\"s3://b/b.stats\","
           "\"file-size-in-bytes\":11,\"file-footer-size-in-bytes\":4,\"blob-metadata\":[]}"));
    /* the second for S1 replaces the first in place (one statistics file per snapshot) */
    icmt_ok(icm_table_changes_set_statistics(
        c, "{\"snapshot-id\":4008342791228255080,\"statistics-path\":\"s3://b/c.stats\","
           "\"file-size-in-bytes\":12,\"file-footer-size-in-bytes\":4,\"blob-metadata\":[]}"));
    icmt_ok(icm_table_changes_set_partition_statistics(
        c, "{\"snapshot-id\":4008342791228255080,\"statistics-path\":\"s3://b/p.parquet\","
           "\"file-size-in-bytes\":13}"));
    icm_table_metadata *md = apply_ok(c, base);
    const char *const changed[] = {"statistics", "partition-statistics", NULL};
    assert_rest_kept(base, md, changed);
    assert_int_equal(icm_table_metadata_statistics_count(md), 3);
    const icm_statistics_file *sf = icm_table_metadata_statistics_at(md, 0);
    assert_true(sf->snapshot_id == S1);
    assert_string_equal(sf->path, "s3://b/c.stats");
    assert_string_equal(icm_table_metadata_statistics_at(md, 1)->path, "s3://b/b.stats");
    assert_true(icm_table_metadata_statistics_at(md, 2)->partition_statistics);
    icm_table_changes_free(c);

    c = changes_new();
    icmt_ok(icm_table_changes_remove_statistics(c, S1));
    icmt_ok(icm_table_changes_remove_partition_statistics(c, S1));
    icmt_ok(icm_table_changes_remove_statistics(c, 12345)); /* none: nothing changes */
    icm_table_metadata *md2 = apply_ok(c, md);
    assert_int_equal(icm_table_metadata_statistics_count(md2), 1);
    assert_string_equal(icm_table_metadata_statistics_at(md2, 0)->path, "s3://b/b.stats");
    assert_int_equal(json_array_size(member(md2, "partition-statistics")), 0);
    icm_table_changes_free(c);
    icm_table_metadata_free(md2);
    icm_table_metadata_free(md);
    icm_table_metadata_free(base);
}

static void test_refs_and_rollback(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(MULTI_BLOB);
    int64_t last_updated = icm_table_metadata_last_updated_ms(base);
    icm_table_changes *c = changes_new();
    icm_ref_retention keep = {true, 86400000, false, 0, false, 0};
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "t1", ICM_REF_TAG, S1, &keep));
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "main", ICM_REF_BRANCH, S2, NULL));
    int64_t before = icm__now_ms();
    icm_table_metadata *md = apply_ok(c, base);
    const char *const changed[] = {"refs", "current-snapshot-id", "snapshot-log",
                                   "last-updated-ms", NULL};
    assert_rest_kept(base, md, changed);
    const icm_ref *t1 = icm_table_metadata_ref_by_name(md, "t1");
    assert_non_null(t1);
    assert_int_equal(t1->type, ICM_REF_TAG);
    assert_true(t1->snapshot_id == S1);
    assert_true(t1->has_max_ref_age_ms && t1->max_ref_age_ms == 86400000);
    /* main moved in place: its unknown member stays, first in refs as before */
    json_t *refs = member(md, "refs");
    assert_string_equal(json_object_iter_key(json_object_iter(refs)), "main");
    assert_string_equal(json_string_value(json_object_get(json_object_get(refs, "main"),
                                                          "x-note")),
                        "kept");
    int64_t cur = 0;
    assert_true(icm_table_metadata_current_snapshot_id(&cur, md));
    assert_true(cur == S2);
    /* a rollback is logged at the time of the change (now, never before last-updated-ms) */
    size_t nlog = icm_table_metadata_snapshot_log_count(md);
    assert_int_equal(nlog, icm_table_metadata_snapshot_log_count(base) + 1);
    const icm_snapshot_log_entry *e = icm_table_metadata_snapshot_log_at(md, nlog - 1);
    assert_true(e->snapshot_id == S2);
    assert_true(e->timestamp_ms >= before && e->timestamp_ms >= last_updated);
    assert_true(icm_table_metadata_last_updated_ms(md) == e->timestamp_ms);
    icm_table_changes_free(c);

    c = changes_new();
    icmt_ok(icm_table_changes_remove_snapshot_ref(c, "t1"));
    icmt_ok(icm_table_changes_remove_snapshot_ref(c, "no-such-ref")); /* ignored, as Java */
    icm_table_metadata *md2 = apply_ok(c, md);
    assert_null(icm_table_metadata_ref_by_name(md2, "t1"));
    assert_int_equal(icm_table_metadata_ref_count(md2), 1);
    icm_table_changes_free(c);

    c = changes_new();
    icmt_ok(icm_table_changes_remove_snapshot_ref(c, "main"));
    apply_fails(c, base, ICM_EREFUSED,
                "updates[0] remove-snapshot-ref: the main branch cannot be removed");
    icm_table_changes_free(c);
    c = changes_new();
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "b", ICM_REF_BRANCH, 99, NULL));
    apply_fails(c, base, ICM_EINVALID, "updates[0] set-snapshot-ref: snapshot 99 does not exist");
    icm_table_changes_free(c);
    c = changes_new();
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "main", ICM_REF_TAG, S1, NULL));
    apply_fails(c, base, ICM_EINVALID, "updates[0] set-snapshot-ref: main must be a branch");
    icm_table_changes_free(c);
    icm_table_metadata_free(md2);
    icm_table_metadata_free(md);
    icm_table_metadata_free(base);
}

static void test_remove_snapshots(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(MULTI_BLOB);
    /* a tag and statistics on S1 first */
    icm_table_changes *c = changes_new();
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "t1", ICM_REF_TAG, S1, NULL));
    icmt_ok(icm_table_changes_set_statistics(
        c, "{\"snapshot-id\":4008342791228255080,\"statistics-path\":\"s3://b/a.stats\","
           "\"file-size-in-bytes\":10,\"file-footer-size-in-bytes\":4,\"blob-metadata\":[]}"));
    icm_table_metadata *with = apply_ok(c, base);
    icm_table_changes_free(c);

    c = changes_new();
    int64_t ids[] = {S1, 42 /* unknown: ignored */};
    icmt_ok(icm_table_changes_remove_snapshots(c, ids, 2));
    /* the tag still on S1: refused, never dropped with it (a ref added since the decision) */
    apply_fails(c, with, ICM_ECOMMIT_FAILED,
                "updates[0] remove-snapshots: snapshot 4008342791228255080 is still the head "
                "of ref 't1' (added or moved since the change was decided; "
                "remove-snapshot-ref removes a ref first)");
    icm_table_changes_free(c);
    c = changes_new();
    icmt_ok(icm_table_changes_remove_snapshot_ref(c, "t1"));
    icmt_ok(icm_table_changes_remove_snapshots(c, ids, 2));
    icm_table_metadata *md = apply_ok(c, with);
    const char *const changed[] = {"snapshots", "refs", "snapshot-log", "statistics", NULL};
    assert_rest_kept(with, md, changed);
    assert_int_equal(icm_table_metadata_snapshot_count(md), 2);
    assert_null(icm_table_metadata_snapshot_by_id(md, S1));
    assert_null(icm_table_metadata_ref_by_name(md, "t1"));     /* the tag on it */
    assert_int_equal(icm_table_metadata_statistics_count(md), 0); /* its statistics */
    assert_int_equal(icm_table_metadata_snapshot_log_count(md), 2); /* its log entry */
    assert_true(icm_table_metadata_snapshot_log_at(md, 0)->snapshot_id == S2);
    /* Java's updateSnapshotLog: removing S2 (in the middle) drops S1's entry too */
    icm_table_changes_free(c);
    c = changes_new();
    int64_t mid[] = {S2};
    icmt_ok(icm_table_changes_remove_snapshots(c, mid, 1));
    icm_table_metadata *md2 = apply_ok(c, base);
    assert_int_equal(icm_table_metadata_snapshot_log_count(md2), 1);
    assert_true(icm_table_metadata_snapshot_log_at(md2, 0)->snapshot_id == S3);
    icm_table_changes_free(c);

    c = changes_new();
    int64_t cur[] = {S3};
    icmt_ok(icm_table_changes_remove_snapshots(c, cur, 1));
    apply_fails(c, base, ICM_EREFUSED,
                "updates[0] remove-snapshots: snapshot 7777777777777777777 is the current "
                "snapshot (main branch head) and cannot be removed");
    icm_table_changes_free(c);
    icm_table_metadata_free(md2);
    icm_table_metadata_free(md);
    icm_table_metadata_free(with);
    icm_table_metadata_free(base);
}

static void test_add_snapshot_and_commit_it_to_main(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(MULTI_BLOB);
    icm_table_changes *c = changes_new();
    icmt_ok(icm_table_changes_add_snapshot(
        c, "{\"sequence-number\":4,\"snapshot-id\":42,\"parent-snapshot-id\":7777777777777777777,"
           "\"timestamp-ms\":1784206300000,\"summary\":{\"operation\":\"append\"},"
           "\"manifest-list\":\"/x/snap-42.avro\",\"schema-id\":0,\"first-row-id\":6,"
           "\"added-rows\":10}"));
    icm_ref_retention none = {false, 0, false, 0, false, 0};
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "main", ICM_REF_BRANCH, 42, &none));
    icm_table_metadata *md = apply_ok(c, base);
    const char *const changed[] = {"snapshots", "refs", "current-snapshot-id", "snapshot-log",
                                   "last-updated-ms", "last-sequence-number", "next-row-id",
                                   NULL};
    assert_rest_kept(base, md, changed);
    assert_int_equal(icm_table_metadata_snapshot_count(md), 4);
    assert_int_equal(icm_table_metadata_last_sequence_number(md), 4);
    int64_t next = 0;
    assert_true(icm_table_metadata_next_row_id(&next, md));
    assert_int_equal(next, 16); /* 6 + 10 added rows */
    size_t nlog = icm_table_metadata_snapshot_log_count(md);
    const icm_snapshot_log_entry *e = icm_table_metadata_snapshot_log_at(md, nlog - 1);
    assert_int_equal(e->snapshot_id, 42);
    assert_int_equal(e->timestamp_ms, 1784206300000); /* an added snapshot: its own time */
    icm_table_changes_free(c);

    /* the same id twice, a sequence number behind, a first-row-id behind */
    c = changes_new();
    icmt_ok(icm_table_changes_add_snapshot(
        c, "{\"sequence-number\":4,\"snapshot-id\":7777777777777777777,\"timestamp-ms\":1,"
           "\"manifest-list\":\"/x\"}"));
    apply_fails(c, base, ICM_EINVALID,
                "updates[0] add-snapshot: snapshot 7777777777777777777 already exists");
    icm_table_changes_free(c);
    c = changes_new();
    icmt_ok(icm_table_changes_add_snapshot(
        c, "{\"sequence-number\":3,\"snapshot-id\":43,\"parent-snapshot-id\":7777777777777777777,"
           "\"timestamp-ms\":1,\"manifest-list\":\"/x\",\"first-row-id\":6,\"added-rows\":1}"));
    apply_fails(c, base, ICM_EINVALID,
                "updates[0] add-snapshot: sequence number 3 is not above the last sequence "
                "number 3");
    icm_table_changes_free(c);
    c = changes_new();
    icmt_ok(icm_table_changes_add_snapshot(
        c, "{\"sequence-number\":4,\"snapshot-id\":43,\"parent-snapshot-id\":7777777777777777777,"
           "\"timestamp-ms\":1,\"manifest-list\":\"/x\",\"first-row-id\":5,\"added-rows\":1}"));
    apply_fails(c, base, ICM_EINVALID,
                "updates[0] add-snapshot: first-row-id 5 is behind next-row-id 6");
    icm_table_changes_free(c);
    icm_table_metadata_free(md);
    icm_table_metadata_free(base);
}

static void test_remove_specs_and_schemas(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(TWO_SPECS);
    icm_table_changes *c = changes_new();
    int32_t zero[] = {0};
    icmt_ok(icm_table_changes_remove_partition_specs(c, zero, 1));
    icmt_ok(icm_table_changes_remove_schemas(c, zero, 1));
    icm_table_metadata *md = apply_ok(c, base);
    const char *const changed[] = {"partition-specs", "schemas", NULL};
    assert_rest_kept(base, md, changed);
    assert_int_equal(icm_table_metadata_spec_count(md), 1);
    assert_int_equal(icm_table_metadata_schema_count(md), 1);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(member(md, "partition-specs"), 0), "spec-id")),
                     1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(member(md, "schemas"), 0),
                                                        "schema-id")),
                     1);
    icm_table_changes_free(c);

    int32_t one[] = {1};
    c = changes_new();
    icmt_ok(icm_table_changes_remove_partition_specs(c, one, 1));
    apply_fails(c, base, ICM_EINVALID,
                "updates[0] remove-partition-specs: the default partition spec 1 cannot be "
                "removed");
    icm_table_changes_free(c);
    c = changes_new();
    icmt_ok(icm_table_changes_remove_schemas(c, one, 1));
    apply_fails(c, base, ICM_EINVALID,
                "updates[0] remove-schemas: the current schema 1 cannot be removed");
    icm_table_changes_free(c);
    icm_table_metadata_free(md);
    icm_table_metadata_free(base);
}

/* ---- requirements ---- */

static void check_fails(icm_table_changes *c, const icm_table_metadata *base, const char *msg)
{
    int rc = icm_table_changes_check(c, base);
    if (rc != ICM_ECOMMIT_FAILED || strcmp(icm_error_last()->message, msg) != 0)
        print_error("got %s: %s\n", icm_error_code_name(rc), icm_error_last()->message);
    assert_int_equal(rc, ICM_ECOMMIT_FAILED);
    assert_string_equal(icm_error_last()->message, msg);
}

static void test_requirements(void **state)
{
    (void)state;
    icm_table_metadata *base = load_fixture(MULTI_BLOB);
    int64_t s3 = S3, s1 = S1;
    struct {
        int kind; /* -1 uuid, -2 ref, -3 create, else an integer kind */
        const char *name;
        const int64_t *id;
        int64_t value;
        const char *fail; /* NULL: passes */
    } cases[] = {
        {-3, NULL, NULL, 0, "requirement failed: assert-create: the table already exists"},
        {-1, "7717E558-D070-4345-96E7-B798A1499236", NULL, 0, NULL}, /* case-insensitive */
        {-1, "00000000-0000-4000-8000-000000000000", NULL, 0,
         "requirement failed: assert-table-uuid: the table's uuid is "
         "7717e558-d070-4345-96e7-b798a1499236, expected 00000000-0000-4000-8000-000000000000"},
        {-2, "main", &s3, 0, NULL},
        {-2, "main", &s1, 0,
         "requirement failed: assert-ref-snapshot-id: ref main is at snapshot "
         "7777777777777777777, expected 4008342791228255080"},
        {-2, "b", NULL, 0, NULL},
        {-2, "main", NULL, 0,
         "requirement failed: assert-ref-snapshot-id: ref main exists (snapshot "
         "7777777777777777777), expected none"},
        {-2, "b", &s1, 0,
         "requirement failed: assert-ref-snapshot-id: ref b does not exist, expected snapshot "
         "4008342791228255080"},
        {ICM_REQ_ASSERT_LAST_ASSIGNED_FIELD_ID, NULL, NULL, 2, NULL},
        {ICM_REQ_ASSERT_LAST_ASSIGNED_FIELD_ID, NULL, NULL, 3,
         "requirement failed: assert-last-assigned-field-id: the table's last-assigned-field-id "
         "is 2, expected 3"},
        {ICM_REQ_ASSERT_CURRENT_SCHEMA_ID, NULL, NULL, 0, NULL},
        {ICM_REQ_ASSERT_CURRENT_SCHEMA_ID, NULL, NULL, 1,
         "requirement failed: assert-current-schema-id: the table's current-schema-id is 0, "
         "expected 1"},
        {ICM_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID, NULL, NULL, 999, NULL},
        {ICM_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID, NULL, NULL, 1000,
         "requirement failed: assert-last-assigned-partition-id: the table's "
         "last-assigned-partition-id is 999, expected 1000"},
        {ICM_REQ_ASSERT_DEFAULT_SPEC_ID, NULL, NULL, 0, NULL},
        {ICM_REQ_ASSERT_DEFAULT_SPEC_ID, NULL, NULL, 7,
         "requirement failed: assert-default-spec-id: the table's default-spec-id is 0, "
         "expected 7"},
        {ICM_REQ_ASSERT_DEFAULT_SORT_ORDER_ID, NULL, NULL, 0, NULL},
        {ICM_REQ_ASSERT_DEFAULT_SORT_ORDER_ID, NULL, NULL, 1,
         "requirement failed: assert-default-sort-order-id: the table's "
         "default-sort-order-id is 0, expected 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        icm_table_changes *c = changes_new();
        if (cases[i].kind == -3)
            icmt_ok(icm_table_changes_require_create(c));
        else if (cases[i].kind == -1)
            icmt_ok(icm_table_changes_require_table_uuid(c, cases[i].name));
        else if (cases[i].kind == -2)
            icmt_ok(icm_table_changes_require_ref_snapshot_id(c, cases[i].name, cases[i].id));
        else
            icmt_ok(icm_table_changes_require_id(c, (icm_requirement_kind)cases[i].kind,
                                                 cases[i].value));
        if (cases[i].fail == NULL)
            icmt_ok(icm_table_changes_check(c, base));
        else
            check_fails(c, base, cases[i].fail);
        icm_table_changes_free(c);
    }
    /* a table that does not exist: only assert-create holds */
    icm_table_changes *c = changes_new();
    icmt_ok(icm_table_changes_require_create(c));
    icmt_ok(icm_table_changes_check(c, NULL));
    icmt_ok(icm_table_changes_require_table_uuid(c, "x"));
    check_fails(c, NULL, "requirement failed: assert-table-uuid: the table does not exist");
    assert_int_equal(icm_table_changes_require_id(c, ICM_REQ_ASSERT_CREATE, 1), ICM_EINVALID);
    icm_table_changes_free(c);
    icm_table_metadata_free(base);
}

/* ---- wire form ---- */

static void test_wire_form_round_trip(void **state)
{
    (void)state;
    icm_table_changes *c = changes_new();
    int64_t s1 = 1;
    icmt_ok(icm_table_changes_require_table_uuid(c, "u-1"));
    icmt_ok(icm_table_changes_require_ref_snapshot_id(c, "main", &s1));
    icmt_ok(icm_table_changes_require_ref_snapshot_id(c, "b", NULL));
    icmt_ok(icm_table_changes_require_id(c, ICM_REQ_ASSERT_DEFAULT_SPEC_ID, 0));
    icmt_ok(icm_table_changes_remove_snapshot_ref(c, "old"));
    int64_t ids[] = {3, 2};
    icmt_ok(icm_table_changes_remove_snapshots(c, ids, 2));
    icm_ref_retention r = {true, 5, false, 0, true, 2};
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "b", ICM_REF_BRANCH, 1, &r));
    icm_property p[] = {{"k", "v"}};
    icmt_ok(icm_table_changes_set_properties(c, p, 1));
    const char *rm[] = {"gone"};
    icmt_ok(icm_table_changes_remove_properties(c, rm, 1));
    icmt_ok(icm_table_changes_remove_statistics(c, 3));
    icmt_ok(icm_table_changes_remove_partition_statistics(c, 3));
    int32_t specs[] = {4};
    icmt_ok(icm_table_changes_remove_partition_specs(c, specs, 1));
    icmt_ok(icm_table_changes_remove_schemas(c, specs, 1));
    const char *expected =
        "{\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"u-1\"},"
        "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":1},"
        "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"b\",\"snapshot-id\":null},"
        "{\"type\":\"assert-default-spec-id\",\"default-spec-id\":0}],"
        "\"updates\":[{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"old\"},"
        "{\"action\":\"remove-snapshots\",\"snapshot-ids\":[3,2]},"
        "{\"action\":\"set-snapshot-ref\",\"ref-name\":\"b\",\"snapshot-id\":1,"
        "\"type\":\"branch\",\"max-ref-age-ms\":5,\"min-snapshots-to-keep\":2},"
        "{\"action\":\"set-properties\",\"updates\":{\"k\":\"v\"}},"
        "{\"action\":\"remove-properties\",\"removals\":[\"gone\"]},"
        "{\"action\":\"remove-statistics\",\"snapshot-id\":3},"
        "{\"action\":\"remove-partition-statistics\",\"snapshot-id\":3},"
        "{\"action\":\"remove-partition-specs\",\"spec-ids\":[4]},"
        "{\"action\":\"remove-schemas\",\"schema-ids\":[4]}]}";
    char *json = NULL;
    size_t len = 0;
    icmt_ok(icm_table_changes_to_json(&json, &len, c));
    assert_string_equal(json, expected);
    assert_int_equal(len, strlen(expected));
    assert_int_equal(icm_table_changes_requirement_count(c), 4);
    assert_int_equal(icm_table_changes_requirement_kind(c, 1), ICM_REQ_ASSERT_REF_SNAPSHOT_ID);
    assert_int_equal(icm_table_changes_update_count(c), 9);
    assert_int_equal(icm_table_changes_update_kind(c, 2), ICM_UPDATE_SET_SNAPSHOT_REF);
    assert_string_equal(icm_update_kind_name(ICM_UPDATE_REMOVE_PARTITION_STATISTICS),
                        "remove-partition-statistics");
    assert_string_equal(icm_requirement_kind_name(ICM_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID),
                        "assert-last-assigned-partition-id");
    assert_null(icm_update_kind_name((icm_update_kind)99));

    icm_table_changes *back = NULL;
    icmt_ok(icm_table_changes_from_json(&back, json, len));
    char *again = NULL;
    icmt_ok(icm_table_changes_to_json(&again, NULL, back));
    assert_string_equal(again, expected);
    icm_free(again);
    icm_free(json);
    icm_table_changes_free(back);
    icm_table_changes_free(c);
}

static void from_json_fails(const char *text, int code, const char *message)
{
    icm_table_changes *c = NULL;
    int rc = icm_table_changes_from_json(&c, text, strlen(text));
    if (rc != code || strcmp(icm_error_last()->message, message) != 0)
        print_error("got %s: %s\n", icm_error_code_name(rc), icm_error_last()->message);
    assert_int_equal(rc, code);
    assert_string_equal(icm_error_last()->message, message);
    assert_null(c);
}

static void test_wire_form_refusals(void **state)
{
    (void)state;
    from_json_fails("[]", ICM_EINVALID,
                    "commit request: expected an object with arrays `requirements` and "
                    "`updates`");
    from_json_fails("{\"requirements\":[],\"updates\":[{\"action\":\"upgrade-format-version\","
                    "\"format-version\":3}]}",
                    ICM_EUNSUPPORTED,
                    "updates[0].action: 'upgrade-format-version' is not an update icemaint "
                    "applies");
    from_json_fails("{\"requirements\":[],\"updates\":[{\"action\":\"remove-snapshots\","
                    "\"snapshot-ids\":[1,\"2\"]}]}",
                    ICM_EINVALID, "updates[0].snapshot-ids: expected an array of integers");
    from_json_fails("{\"requirements\":[{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\","
                    "\"snapshot-id\":\"1\"}],\"updates\":[]}",
                    ICM_EINVALID, "requirements[0].snapshot-id: expected an integer or null");
    from_json_fails("{\"requirements\":[{\"type\":\"assert-view-uuid\",\"uuid\":\"x\"}],"
                    "\"updates\":[]}",
                    ICM_EUNSUPPORTED,
                    "requirements[0].type: 'assert-view-uuid' is not a requirement icemaint "
                    "checks");
    from_json_fails("{\"requirements\":[],\"updates\":[{\"action\":\"set-snapshot-ref\","
                    "\"ref-name\":\"b\",\"snapshot-id\":1,\"type\":\"bookmark\"}]}",
                    ICM_EINVALID, "updates[0].type: expected \"branch\" or \"tag\"");
    from_json_fails("{\"requirements\":[],\"updates\":[{\"action\":\"add-snapshot\","
                    "\"snapshot\":{\"snapshot-id\":\"1\"}}]}",
                    ICM_EINVALID,
                    "updates[0].snapshot: expected an object with an integer snapshot-id");
    /* builders refuse what the wire form refuses */
    icm_table_changes *c = changes_new();
    assert_int_equal(icm_table_changes_add_snapshot(c, "[1]"), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message, "snapshot is not a JSON object");
    assert_int_equal(icm_table_changes_set_statistics(c, "{\"statistics-path\":\"x\"}"),
                     ICM_EINVALID);
    assert_string_equal(icm_error_last()->message,
                        "updates[0].statistics: expected an object with an integer "
                        "snapshot-id");
    assert_int_equal(icm_table_changes_remove_snapshot_ref(c, NULL), ICM_EINVALID);
    assert_int_equal(icm_table_changes_remove_snapshots(NULL, NULL, 0), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message, "changes is NULL");
    assert_int_equal(icm_table_changes_check(NULL, NULL), ICM_EINVALID);
    assert_int_equal(icm_table_changes_update_count(c), 0);
    icm_table_changes_free(c);
}

/* ---- expiry's commit ---- */

/* What expiry sends: the table and every ref it decided on as requirements; the aged-out tag,
 * the expired snapshots and their statistics as updates (Java RemoveSnapshots' changes). */
static void test_expiry_wire_form(void **state)
{
    (void)state;
    icm_table_metadata *plain = load_fixture(MULTI_BLOB);
    icm_table_changes *c = changes_new();
    icm_ref_retention aged = {true, 1, false, 0, false, 0};
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "old", ICM_REF_TAG, S1, &aged));
    icmt_ok(icm_table_changes_set_statistics(
        c, "{\"snapshot-id\":4008342791228255080,\"statistics-path\":\"/t/a.stats\","
           "\"file-size-in-bytes\":10,\"file-footer-size-in-bytes\":4,\"blob-metadata\":[]}"));
    icmt_ok(icm_table_changes_set_partition_statistics(
        c, "{\"snapshot-id\":4008342791228255080,\"statistics-path\":\"/t/p.parquet\","
           "\"file-size-in-bytes\":13}"));
    icm_table_metadata *base = apply_ok(c, plain);
    icm_table_changes_free(c);

    icm_expire_decide_options o = ICM_EXPIRE_DECIDE_OPTIONS_INIT;
    o.now_ms = 1784206400000;
    o.has_older_than = true;
    o.older_than_ms = o.now_ms;
    o.retain_last = 1;
    icm_expire_decision *d = NULL;
    icmt_ok(icm_expire_decide(&d, base, &o));
    icm_table_metadata *md = NULL;
    bool changed = false;
    size_t specs = 9, schemas = 9;
    icmt_ok(icm__expire_changes(NULL, base, d, false, o.now_ms, &c, &md, &changed, &specs, &schemas));
    assert_true(changed);
    assert_int_equal(specs + schemas, 0);
    char *json = NULL;
    icmt_ok(icm_table_changes_to_json(&json, NULL, c));
    assert_string_equal(
        json,
        "{\"requirements\":[{\"type\":\"assert-table-uuid\","
        "\"uuid\":\"7717e558-d070-4345-96e7-b798a1499236\"},"
        "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\","
        "\"snapshot-id\":7777777777777777777},"
        "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"old\","
        "\"snapshot-id\":4008342791228255080}],"
        "\"updates\":[{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"old\"},"
        "{\"action\":\"remove-snapshots\","
        "\"snapshot-ids\":[4008342791228255080,6085737399650530681]},"
        "{\"action\":\"remove-statistics\",\"snapshot-id\":4008342791228255080},"
        "{\"action\":\"remove-partition-statistics\",\"snapshot-id\":4008342791228255080},"
        "{\"action\":\"set-properties\",\"updates\":{\"icemaint.last-expire-ms\":"
        "\"1784206400000\"}}]}");
    /* and the metadata it gives is the lossless edit the expiry commits */
    assert_int_equal(icm_table_metadata_snapshot_count(md), 1);
    assert_int_equal(icm_table_metadata_statistics_count(md), 0);
    assert_null(icm_table_metadata_ref_by_name(md, "old"));
    /* the expiry's record for `health`, in the same commit */
    assert_string_equal(icm_table_metadata_property(md, "icemaint.last-expire-ms"),
                        "1784206400000");
    icmt_ok(icm_table_changes_check(c, base));
    icm_table_metadata *again = apply_ok(c, base);
    char *a = text_of(md), *b = text_of(again);
    assert_string_equal(a, b);
    free(a);
    free(b);
    icm_free(json);
    icm_table_metadata_free(again);
    icm_table_metadata_free(md);
    icm_table_changes_free(c);
    icm_expire_decision_free(d);
    icm_table_metadata_free(base);
    icm_table_metadata_free(plain);
}

/* ---- allocation failures: ENOMEM or success, never a half-built result ---- */

/* ---- what reloaded metadata shows of a change (reconciling a lost commit answer) ---- */

static icm_changes_seen seen_in(const icm_table_changes *c, const icm_table_metadata *md)
{
    icm_changes_seen out = ICM_CHANGES_SEEN_OURS;
    icmt_ok(icm_table_changes_seen(&out, c, md));
    return out;
}

#define MULTI_BLOB_UUID "7717e558-d070-4345-96e7-b798a1499236"

static void test_changes_seen(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(MULTI_BLOB);

    /* an expiry's kind of change: not shown on its base, shown once applied */
    icm_table_changes *c = changes_new();
    icmt_ok(icm_table_changes_require_table_uuid(c, MULTI_BLOB_UUID));
    int64_t gone[] = {S1};
    icmt_ok(icm_table_changes_remove_snapshots(c, gone, 1));
    icmt_ok(icm_table_changes_remove_statistics(c, S1));
    assert_int_equal(seen_in(c, base), ICM_CHANGES_NOT_SEEN);
    icm_table_metadata *md = apply_ok(c, base);
    assert_int_equal(seen_in(c, md), ICM_CHANGES_SEEN);
    icm_table_metadata_free(md);
    /* the same state in another table (another uuid) tells nothing */
    icm_table_changes *other = changes_new();
    icmt_ok(icm_table_changes_require_table_uuid(other, "00000000-0000-4000-8000-000000000000"));
    icmt_ok(icm_table_changes_remove_snapshots(other, gone, 1));
    md = apply_ok(c, base);
    assert_int_equal(seen_in(other, md), ICM_CHANGES_NOT_SEEN);
    icm_table_metadata_free(md);
    icm_table_changes_free(other);
    /* one effect of two in place is not the change */
    icm_property p = {"x.key", "v"};
    icmt_ok(icm_table_changes_set_properties(c, &p, 1));
    icm_table_changes *only_removal = changes_new();
    icmt_ok(icm_table_changes_remove_snapshots(only_removal, gone, 1));
    md = apply_ok(only_removal, base);
    assert_int_equal(seen_in(c, md), ICM_CHANGES_NOT_SEEN);
    icm_table_metadata_free(md);
    icm_table_changes_free(only_removal);
    icm_table_changes_free(c);

    /* properties, refs: each shown exactly when its effect is there */
    c = changes_new();
    icm_property props[] = {{"a", "1"}, {"b", "2"}};
    icmt_ok(icm_table_changes_set_properties(c, props, 2));
    const char *removals[] = {"x.absent.before"};
    icmt_ok(icm_table_changes_remove_properties(c, removals, 1));
    icm_ref_retention none = {false, 0, false, 0, false, 0};
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "t1", ICM_REF_TAG, S2, &none));
    assert_int_equal(seen_in(c, base), ICM_CHANGES_NOT_SEEN);
    md = apply_ok(c, base);
    assert_int_equal(seen_in(c, md), ICM_CHANGES_SEEN);
    icm_table_changes *moved = changes_new(); /* t1 moved on since: not as the change left it */
    icmt_ok(icm_table_changes_set_snapshot_ref(moved, "t1", ICM_REF_TAG, S1, &none));
    icm_table_metadata *md2 = apply_ok(moved, md);
    assert_int_equal(seen_in(c, md2), ICM_CHANGES_NOT_SEEN);
    icm_table_metadata_free(md2);
    icm_table_changes_free(moved);
    icm_table_changes *rm = changes_new();
    icmt_ok(icm_table_changes_remove_snapshot_ref(rm, "t1"));
    assert_int_equal(seen_in(rm, md), ICM_CHANGES_NOT_SEEN);
    assert_int_equal(seen_in(rm, base), ICM_CHANGES_SEEN);
    icm_table_changes_free(rm);
    icm_table_metadata_free(md);
    icm_table_changes_free(c);

    /* a transaction's snapshot: ours only with our manifest list, whatever came after it */
    const char *snap = "{\"sequence-number\":4,\"snapshot-id\":42,"
                       "\"parent-snapshot-id\":7777777777777777777,"
                       "\"timestamp-ms\":1784206300000,\"summary\":{\"operation\":\"append\"},"
                       "\"manifest-list\":\"/x/snap-42.avro\",\"schema-id\":0,"
                       "\"first-row-id\":6,\"added-rows\":10}";
    c = changes_new();
    icmt_ok(icm_table_changes_add_snapshot(c, snap));
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "main", ICM_REF_BRANCH, 42, &none));
    assert_int_equal(seen_in(c, base), ICM_CHANGES_NOT_SEEN);
    md = apply_ok(c, base);
    assert_int_equal(seen_in(c, md), ICM_CHANGES_SEEN_OURS);
    /* main moved back to S3 by another writer: our snapshot still proves the commit */
    moved = changes_new();
    icmt_ok(icm_table_changes_set_snapshot_ref(moved, "main", ICM_REF_BRANCH, S3, &none));
    md2 = apply_ok(moved, md);
    assert_int_equal(seen_in(c, md2), ICM_CHANGES_SEEN_OURS);
    icm_table_metadata_free(md2);
    icm_table_changes_free(moved);
    /* another writer built on ours (its parent is 42), then ours was expired: still ours */
    icm_table_changes *child = changes_new();
    icmt_ok(icm_table_changes_add_snapshot(
        child, "{\"sequence-number\":5,\"snapshot-id\":43,\"parent-snapshot-id\":42,"
               "\"timestamp-ms\":1784206400000,\"summary\":{\"operation\":\"append\"},"
               "\"manifest-list\":\"/x/snap-43.avro\",\"schema-id\":0,"
               "\"first-row-id\":16,\"added-rows\":1}"));
    icmt_ok(icm_table_changes_set_snapshot_ref(child, "main", ICM_REF_BRANCH, 43, &none));
    md2 = apply_ok(child, md);
    icm_table_changes *expire42 = changes_new();
    int64_t ours[] = {42};
    icmt_ok(icm_table_changes_remove_snapshots(expire42, ours, 1));
    icm_table_metadata *md3 = apply_ok(expire42, md2);
    assert_null(icm_table_metadata_snapshot_by_id(md3, 42));
    assert_int_equal(seen_in(c, md3), ICM_CHANGES_SEEN_OURS);
    icm_table_metadata_free(md3);
    icm_table_metadata_free(md2);
    icm_table_changes_free(expire42);
    icm_table_changes_free(child);
    icm_table_metadata_free(md);
    /* another snapshot 42 (another manifest list): not ours, and main at 42 proves nothing */
    icm_table_changes *theirs = changes_new();
    char *their_snap = icmt_sprintf("%s", snap);
    char *at = strstr(their_snap, "snap-42");
    at[5] = '7';
    icmt_ok(icm_table_changes_add_snapshot(theirs, their_snap));
    icmt_ok(icm_table_changes_set_snapshot_ref(theirs, "main", ICM_REF_BRANCH, 42, &none));
    md = apply_ok(theirs, base);
    assert_int_equal(seen_in(c, md), ICM_CHANGES_NOT_SEEN);
    icm_table_metadata_free(md);
    icm_table_changes_free(theirs);
    free(their_snap);
    icm_table_changes_free(c);

    /* nothing to look for; NULL arguments */
    c = changes_new();
    assert_int_equal(seen_in(c, base), ICM_CHANGES_NOT_SEEN);
    icm_changes_seen out = ICM_CHANGES_SEEN;
    assert_int_equal(icm_table_changes_seen(&out, NULL, base), ICM_EINVALID);
    assert_int_equal(out, ICM_CHANGES_NOT_SEEN);
    assert_int_equal(icm_table_changes_seen(&out, c, NULL), ICM_EINVALID);
    icm_table_changes_free(c);
    icm_table_metadata_free(base);
}

static void test_chaos_apply(void **state)
{
    (void)state;
    icm_table_metadata *base = load_with_unknowns(MULTI_BLOB);
    icm_table_changes *c = changes_new();
    icmt_ok(icm_table_changes_set_snapshot_ref(c, "t1", ICM_REF_TAG, S1, NULL));
    icm_property p[] = {{"k", "v"}};
    icmt_ok(icm_table_changes_set_properties(c, p, 1));
    icmt_ok(icm_table_changes_remove_snapshot_ref(c, "t1")); /* (no ref left on S1) */
    int64_t ids[] = {S1};
    icmt_ok(icm_table_changes_remove_snapshots(c, ids, 1));
    icm_table_metadata *want = apply_ok(c, base);
    char *want_text = text_of(want);
    for (long n = 0;; n++) {
        icm_table_metadata *md = NULL;
        icmt_nomem_arm(n);
        int rc = icm_table_changes_apply(&md, c, base);
        bool injected = icmt_nomem_disarm() > n;
        if (rc == 0) {
            char *got = text_of(md);
            assert_string_equal(got, want_text);
            free(got);
            icm_table_metadata_free(md);
            if (!injected)
                break;
        } else {
            assert_int_equal(rc, ICM_ENOMEM);
            assert_null(md);
        }
    }
    free(want_text);
    icm_table_metadata_free(want);
    icm_table_changes_free(c);
    icm_table_metadata_free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_refs_and_rollback),
        cmocka_unit_test(test_remove_snapshots),
        cmocka_unit_test(test_add_snapshot_and_commit_it_to_main),
        cmocka_unit_test(test_remove_specs_and_schemas),
        cmocka_unit_test(test_requirements),
        cmocka_unit_test(test_wire_form_round_trip),
        cmocka_unit_test(test_wire_form_refusals),
        cmocka_unit_test(test_expiry_wire_form),
        cmocka_unit_test(test_chaos_apply),
        cmocka_unit_test(test_changes_seen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
