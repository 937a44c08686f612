/*
 * tests/unit/test_metadata.c: parsing and validating table metadata: every fixture JSON file is
 * classified (valid ones parse; invalid ones fail with the expected code and reason), snapshot
 * counts match index.tsv, every valid file round-trips through to_json, and hand-made documents
 * pin down getters and each validation rule.
 */
#include "test_metadata_common.h"

/* ---- fixture classification ---- */

typedef struct invalid_fixture {
    const char *path; /* relative to the fixtures dir */
    int code;
    const char *message; /* substring of the expected message */
    bool seen;
} invalid_fixture;

#define JAVA_RES "metadata-json/java-main/core/src/test/resources/"
#define JAVA_VIEW JAVA_RES "org/apache/iceberg/view/"
#define PR11947 "metadata-json/java-pr11947/core/src/test/resources/"
#define RUST_TM "metadata-json/iceberg-rust/crates/iceberg/testdata/table_metadata/"
#define INTEROP "metadata-json/iceberg-rust-pr2611/crates/iceberg/testdata/interop/"
#define DELTA_LOG "unitycatalog-uniform/etc/data/external/unity/default/tables/marksheet_uniform/"\
                  "_delta_log/"

/* Every fixture JSON file that is not valid table metadata, and why. Reasons follow Iceberg
 * Java 1.11 (TableMetadataParser), which rejects each of these too. */
static invalid_fixture g_invalid[] = {
    /* BigQuery's placeholder before the first commit: no format-version at all */
    {"duckdb-iceberg/data/persistent/big_query_error/metadata/v0.metadata.json", ICM_EINVALID,
     "format-version: missing", false},
    {"iceberg-python-pr/bigquery-biglake/kevinliu_blmt/metadata/v0.metadata.json", ICM_EINVALID,
     "format-version: missing", false},
    /* NDJSON, not a document */
    {"metadata-json/duckdb/data/persistent/bad_data/bad_iceberg_metadata.json", ICM_EINVALID,
     "not valid JSON", false},
    {DELTA_LOG "00000000000000000000.json", ICM_EINVALID, "not valid JSON", false},
    {DELTA_LOG "00000000000000000001.json", ICM_EINVALID, "not valid JSON", false},
    /* v3 without next-row-id (written before row lineage became required) */
    {"metadata-json/duckdb/data/persistent/timestamptz_ns/metadata/v1.metadata.json",
     ICM_EINVALID, "next-row-id: missing (required in format v3)", false},
    {PR11947 "TableMetadataV3ValidMinimal.json", ICM_EINVALID, "next-row-id: missing", false},
    {PR11947 "TableMetadataV3StatisticsFiles.json", ICM_EINVALID, "next-row-id: missing", false},
    {PR11947 "TableMetadataV3PartitionStatisticsFiles.json", ICM_EINVALID,
     "next-row-id: missing", false},
    /* the deliberately invalid spec examples */
    {PR11947 "TableMetadataV3CurrentSchemaNotFound.json", ICM_EINVALID,
     "current-schema-id: no schema with id 2", false},
    {PR11947 "TableMetadataV3MissingLastPartitionId.json", ICM_EINVALID,
     "last-partition-id: missing (required in format v3)", false},
    {PR11947 "TableMetadataV3MissingPartitionSpecs.json", ICM_EINVALID,
     "partition-specs: missing (required in format v3)", false},
    {PR11947 "TableMetadataV3MissingSchemas.json", ICM_EINVALID,
     "schemas: missing (required in format v3)", false},
    {PR11947 "TableMetadataV3MissingSortOrder.json", ICM_EINVALID,
     "sort-orders: missing (required in format v3)", false},
    {JAVA_RES "TableMetadataUnsupportedVersion.json", ICM_EUNSUPPORTED,
     "format-version: 42 is not supported", false},
    {JAVA_RES "TableMetadataV1MissingSchemaType.json", ICM_EINVALID, "schema.type: missing",
     false},
    {JAVA_RES "TableMetadataV2CurrentSchemaNotFound.json", ICM_EINVALID,
     "current-schema-id: no schema with id 2", false},
    {JAVA_RES "TableMetadataV2MissingLastPartitionId.json", ICM_EINVALID,
     "last-partition-id: missing (required in format v2)", false},
    {JAVA_RES "TableMetadataV2MissingPartitionSpecs.json", ICM_EINVALID,
     "partition-specs: missing (required in format v2)", false},
    {JAVA_RES "TableMetadataV2MissingSchemas.json", ICM_EINVALID,
     "schemas: missing (required in format v2)", false},
    {JAVA_RES "TableMetadataV2MissingSortOrder.json", ICM_EINVALID,
     "sort-orders: missing (required in format v2)", false},
    /* iceberg-rust's copy was written when v3 was unsupported; as v3 it lacks schemas */
    {RUST_TM "TableMetadataUnsupportedVersion.json", ICM_EINVALID,
     "schemas: missing (required in format v3)", false},
    {RUST_TM "TableMetadataV2CurrentSchemaNotFound.json", ICM_EINVALID,
     "current-schema-id: no schema with id 2", false},
    {RUST_TM "TableMetadataV1NoValidSchema.json", ICM_EINVALID,
     "current-schema-id: missing (required with schemas)", false},
    /* Java needs the id that selects among schemas / specs once the array is present */
    {RUST_TM "TableMetadataV1SchemasWithoutCurrentId.json", ICM_EINVALID,
     "current-schema-id: missing (required with schemas)", false},
    {RUST_TM "TableMetadataV1PartitionSpecsWithoutDefaultId.json", ICM_EINVALID,
     "default-spec-id: missing (required with partition-specs)", false},
    /* view metadata and Java inspection-table outputs are not table metadata */
    {JAVA_VIEW "ValidViewMetadata.json", ICM_EINVALID, "last-updated-ms: missing", false},
    {JAVA_VIEW "ViewMetadataInvalidCurrentSchema.json", ICM_EINVALID,
     "last-updated-ms: missing", false},
    {JAVA_VIEW "ViewMetadataInvalidCurrentVersion.json", ICM_EINVALID,
     "last-updated-ms: missing", false},
    {JAVA_VIEW "ViewMetadataMissingCurrentVersion.json", ICM_EINVALID,
     "last-updated-ms: missing", false},
    {JAVA_VIEW "ViewMetadataMissingLocation.json", ICM_EINVALID, "location: missing", false},
    {JAVA_VIEW "ViewMetadataMultipleSQLsForDialect.json", ICM_EINVALID,
     "last-updated-ms: missing", false},
    {INTEROP "inspection/java_refs.json", ICM_EINVALID, "not table metadata", false},
    {INTEROP "inspection/java_snapshots.json", ICM_EINVALID, "not table metadata", false},
    {INTEROP "inspection_history/java_history.json", ICM_EINVALID, "not table metadata", false},
    {INTEROP "inspection_history/java_metadata_log_entries.json", ICM_EINVALID,
     "not table metadata", false},
};

static invalid_fixture *find_invalid(const char *rel)
{
    for (size_t i = 0; i < ICM__ARRAY_LEN(g_invalid); i++)
        if (strcmp(g_invalid[i].path, rel) == 0)
            return &g_invalid[i];
    return NULL;
}

/* The valid expectation: table metadata files are named *.metadata.json (engines, including
 * .gz. and .zstd. variants) or are the spec examples TableMetadata*.json / example_*.json.
 * A new fixture outside both this and the invalid list fails the test until classified. */
static bool expected_valid_name(const char *rel)
{
    const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    size_t n = strlen(base);
    return (n > 14 && strcmp(base + n - 14, ".metadata.json") == 0) ||
           strncmp(base, "TableMetadata", 13) == 0 || strncmp(base, "example_", 8) == 0;
}

static int parse_file(const char *rel, icm_table_metadata **out)
{
    char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(), rel);
    size_t len = 0;
    char *data = icmt_read_file(path, &len);
    assert_non_null(data);
    int rc = icm_table_metadata_parse(out, data, len, path);
    if (rc != 0)
        assert_string_equal(icm_error_last()->location, path); /* the file names the error */
    free(data);
    free(path);
    return rc;
}

static void test_every_fixture_is_classified(void **state)
{
    (void)state;
    walk_fixtures();
    assert_true(g_walk_count > ICM__ARRAY_LEN(g_invalid));
    size_t valid = 0, compressed = 0;
    for (size_t i = 0; i < g_walk_count; i++) {
        const char *rel = g_walk_files[i];
        invalid_fixture *inv = find_invalid(rel);
        icm_table_metadata *md = NULL;
        int rc = parse_file(rel, &md);
        const icm_error *e = icm_error_last();
        if (inv == NULL) {
            if (!expected_valid_name(rel)) {
                print_error("%s: not classified (add it to the invalid list or rename the "
                            "expectation)\n", rel);
                fail();
            }
            if (rc != 0) {
                print_error("%s: unexpected %s: %s\n", rel, icm_error_code_name(rc), e->message);
                fail();
            }
            valid++;
            if (strstr(rel, ".gz.metadata.json") || strstr(rel, ".zstd.metadata.json"))
                compressed++;
        } else {
            if (rc != inv->code || strstr(e->message, inv->message) == NULL) {
                print_error("%s: expected %s \"%s\", got %s: %s\n", rel,
                            icm_error_code_name(inv->code), inv->message,
                            icm_error_code_name(rc), e->message);
                fail();
            }
            if (strstr(inv->message, "not valid JSON") != NULL)
                assert_true(e->line > 0 && e->column > 0);
            assert_null(md);
            inv->seen = true;
        }
        icm_table_metadata_free(md);
    }
    for (size_t i = 0; i < ICM__ARRAY_LEN(g_invalid); i++) {
        if (!g_invalid[i].seen) {
            print_error("listed invalid fixture not found: %s\n", g_invalid[i].path);
            fail();
        }
    }
    assert_int_equal(valid + ICM__ARRAY_LEN(g_invalid), g_walk_count);
    /* the gzip tables (lineitem_iceberg_gz) and iceberg-go's zstd file were inflated */
    assert_true(compressed >= 2);
    free_walk();
}

/* ---- index.tsv ---- */

typedef struct tsv_row {
    char *cols[32];
    size_t n;
} tsv_row;

static void split_tsv(char *line, tsv_row *row)
{
    row->n = 0;
    char *p = line;
    while (row->n < 32) {
        row->cols[row->n++] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL)
            break;
        *tab = '\0';
        p = tab + 1;
    }
}

static size_t column(const tsv_row *header, const char *name)
{
    for (size_t i = 0; i < header->n; i++)
        if (strcmp(header->cols[i], name) == 0)
            return i;
    print_error("index.tsv has no column %s\n", name);
    fail();
    return 0;
}

/* Explicit refs of one type, comma-separated in document order ("" if none). */
static void explicit_refs(const icm_table_metadata *md, icm_ref_type type, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (size_t i = 0; i < icm_table_metadata_ref_count(md); i++) {
        const icm_ref *r = icm_table_metadata_ref_at(md, i);
        if (r->type != type || r->implicit)
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", len ? "," : "", r->name);
    }
}

static void test_index_tsv_snapshot_counts(void **state)
{
    (void)state;
    char *path = icmt_sprintf("%s/index.tsv", icmt_fixtures_dir());
    char *text = icmt_read_file(path, NULL);
    assert_non_null(text);
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    tsv_row header, row;
    split_tsv(line, &header);
    size_t c_dir = column(&header, "table_dir"), c_cur = column(&header, "current_metadata");
    size_t c_snaps = column(&header, "snapshots"), c_fv = column(&header, "format_version");
    size_t c_uuid = column(&header, "table_uuid"), c_branches = column(&header, "branches");
    size_t c_tags = column(&header, "tags");
    size_t checked = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        split_tsv(line, &row);
        if (row.n != header.n || row.cols[c_cur][0] == '\0')
            continue;
        char *rel = icmt_sprintf("%s/%s", row.cols[c_dir], row.cols[c_cur]);
        icm_table_metadata *md = NULL;
        int rc = parse_file(rel, &md);
        invalid_fixture *inv = find_invalid(rel);
        if (inv != NULL) {
            /* listed as invalid above (placeholder or pre-row-lineage v3): must fail alike */
            assert_int_equal(rc, inv->code);
            free(rel);
            continue;
        }
        if (rc != 0) {
            print_error("%s: %s\n", rel, icm_error_last()->message);
            fail();
        }
        char refs[256];
        assert_int_equal(icm_table_metadata_snapshot_count(md), atoi(row.cols[c_snaps]));
        assert_int_equal(icm_table_metadata_format_version(md), atoi(row.cols[c_fv]));
        /* index.tsv writes Python's None for a table without table-uuid (BigQuery v1) */
        if (strcmp(row.cols[c_uuid], "None") == 0)
            assert_null(icm_table_metadata_uuid(md));
        else
            assert_string_equal(icm_table_metadata_uuid(md), row.cols[c_uuid]);
        explicit_refs(md, ICM_REF_BRANCH, refs, sizeof refs);
        assert_string_equal(refs, row.cols[c_branches]);
        explicit_refs(md, ICM_REF_TAG, refs, sizeof refs);
        assert_string_equal(refs, row.cols[c_tags]);
        /* every table with a current snapshot has a main branch, explicit or implicit */
        int64_t cur;
        if (icm_table_metadata_current_snapshot_id(&cur, md)) {
            const icm_ref *main_ref = icm_table_metadata_ref_by_name(md, "main");
            assert_non_null(main_ref);
            assert_true(main_ref->snapshot_id == cur);
        }
        icm_table_metadata_free(md);
        free(rel);
        checked++;
    }
    assert_true(checked > 90);
    free(text);
    free(path);
}

/* ---- round trip ---- */

static void round_trip_one(const char *rel)
{
    icm_table_metadata *a = NULL, *b = NULL, *g = NULL;
    if (parse_file(rel, &a) != 0)
        return; /* invalid fixtures are covered by the classification test */
    char *t1 = NULL, *t2 = NULL, *t3 = NULL, *gz = NULL;
    size_t n1 = 0, n2 = 0, n3 = 0, ngz = 0;
    icmt_ok(icm_table_metadata_to_json(&t1, &n1, a));
    assert_int_equal(strlen(t1), n1);
    icmt_ok(icm_table_metadata_to_json(&t2, &n2, a));
    assert_int_equal(n1, n2);
    assert_memory_equal(t1, t2, n1); /* deterministic */
    icmt_ok(icm_table_metadata_parse(&b, t1, n1, rel));
    assert_true(json_equal(icm__table_metadata_json(a), icm__table_metadata_json(b)));
    assert_views_equal(a, b);
    icmt_ok(icm_table_metadata_to_json(&t3, &n3, b));
    assert_int_equal(n1, n3);
    assert_memory_equal(t1, t3, n1); /* a fixpoint after one rewrite */
    icmt_ok(icm_table_metadata_to_json_gzip(&gz, &ngz, a));
    assert_true(ngz > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
    icmt_ok(icm_table_metadata_parse(&g, gz, ngz, rel));
    assert_true(json_equal(icm__table_metadata_json(a), icm__table_metadata_json(g)));
    icm_free(t1);
    icm_free(t2);
    icm_free(t3);
    icm_free(gz);
    icm_table_metadata_free(a);
    icm_table_metadata_free(b);
    icm_table_metadata_free(g);
}

static void test_round_trip_every_valid_fixture(void **state)
{
    (void)state;
    walk_fixtures();
    for (size_t i = 0; i < g_walk_count; i++)
        if (find_invalid(g_walk_files[i]) == NULL)
            round_trip_one(g_walk_files[i]);
    free_walk();
}

/* ---- hand-made documents: getters ---- */

static void test_rich_document_views(void **state)
{
    (void)state;
    char *text = sq(RICH_V2);
    icm_table_metadata *md = parse_ok(text);
    int64_t id;
    assert_int_equal(icm_table_metadata_format_version(md), 2);
    assert_string_equal(icm_table_metadata_uuid(md), "9c12d441-03fe-4693-9a96-a0705ddf69c1");
    assert_string_equal(icm_table_metadata_location(md), "s3://bucket/db/t");
    assert_string_equal(icm_table_metadata_file(md), "test.metadata.json");
    assert_true(icm_table_metadata_last_sequence_number(md) == 3);
    assert_true(icm_table_metadata_last_updated_ms(md) == INT64_C(1700000300000));
    assert_true(icm_table_metadata_current_snapshot_id(&id, md));
    assert_true(id == BIG_ID);
    assert_false(icm_table_metadata_next_row_id(&id, md));

    assert_int_equal(icm_table_metadata_snapshot_count(md), 3);
    const icm_snapshot *s = icm_table_metadata_snapshot_at(md, 1);
    assert_true(s->snapshot_id == NEG_ID);
    assert_true(s->has_parent && s->parent_snapshot_id == 1);
    assert_true(s->sequence_number == 2 && s->timestamp_ms == INT64_C(1700000100000));
    assert_string_equal(s->manifest_list, "s3://bucket/db/t/metadata/snap-neg.avro");
    assert_int_equal(s->manifest_count, 0);
    assert_string_equal(s->operation, "overwrite");
    assert_false(s->has_schema_id);
    assert_ptr_equal(icm_table_metadata_snapshot_by_id(md, NEG_ID), s);
    s = icm_table_metadata_snapshot_by_id(md, BIG_ID);
    assert_non_null(s);
    assert_true(s->has_schema_id && s->schema_id == 1);
    assert_null(icm_table_metadata_snapshot_by_id(md, 2));
    assert_null(icm_table_metadata_snapshot_at(md, 3));
    s = icm_table_metadata_snapshot_at(md, 0);
    assert_false(s->has_parent);
    assert_string_equal(icm_snapshot_summary_get(md, s, "added-data-files"), "1");
    assert_string_equal(icm_snapshot_summary_get(md, s, "operation"), "append");
    assert_null(icm_snapshot_summary_get(md, s, "nope"));

    assert_int_equal(icm_table_metadata_ref_count(md), 3);
    const icm_ref *r = icm_table_metadata_ref_at(md, 0);
    assert_string_equal(r->name, "main");
    assert_int_equal(r->type, ICM_REF_BRANCH);
    assert_false(r->implicit || r->has_max_ref_age_ms || r->has_min_snapshots_to_keep);
    r = icm_table_metadata_ref_by_name(md, "audit");
    assert_int_equal(r->type, ICM_REF_BRANCH);
    assert_true(r->snapshot_id == NEG_ID);
    assert_true(r->has_max_ref_age_ms && r->max_ref_age_ms == 604800000);
    assert_true(r->has_max_snapshot_age_ms && r->max_snapshot_age_ms == 3600000);
    assert_true(r->has_min_snapshots_to_keep && r->min_snapshots_to_keep == 2);
    r = icm_table_metadata_ref_by_name(md, "v1.0");
    assert_int_equal(r->type, ICM_REF_TAG);
    assert_true(r->has_max_ref_age_ms && r->max_ref_age_ms == INT64_C(31536000000));
    assert_false(r->has_max_snapshot_age_ms || r->has_min_snapshots_to_keep);
    assert_null(icm_table_metadata_ref_by_name(md, "other"));

    assert_int_equal(icm_table_metadata_snapshot_log_count(md), 3);
    assert_true(icm_table_metadata_snapshot_log_at(md, 2)->snapshot_id == BIG_ID);
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 1);
    assert_string_equal(icm_table_metadata_metadata_log_at(md, 0)->metadata_file,
                        "s3://bucket/db/t/metadata/00000-a.metadata.json");
    assert_int_equal(icm_table_metadata_statistics_count(md), 3);
    const icm_statistics_file *st = icm_table_metadata_statistics_at(md, 0);
    assert_true(st->snapshot_id == 1 && st->file_size_in_bytes == 413);
    assert_false(st->partition_statistics);
    st = icm_table_metadata_statistics_at(md, 2);
    assert_true(st->snapshot_id == BIG_ID && st->partition_statistics);
    assert_string_equal(st->path, "s3://bucket/db/t/metadata/p.parquet");

    const char *k, *v;
    assert_int_equal(icm_table_metadata_property_count(md), 2);
    icm_table_metadata_property_at(&k, &v, md, 1);
    assert_string_equal(k, "history.expire.max-snapshot-age-ms");
    assert_string_equal(v, "86400000");
    assert_string_equal(icm_table_metadata_property(md, "owner"), "alice");
    assert_null(icm_table_metadata_property(md, "missing"));

    assert_int_equal(icm_table_metadata_schema_count(md), 2);
    assert_int_equal(icm_table_metadata_current_schema_id(md), 1);
    assert_int_equal(icm_table_metadata_spec_count(md), 2);
    assert_int_equal(icm_table_metadata_default_spec_id(md), 1);
    assert_int_equal(icm_table_metadata_sort_order_count(md), 1);
    icm_table_metadata_free(md);
    free(text);
}

static void test_schema_and_spec_json(void **state)
{
    (void)state;
    char *text = sq(RICH_V2);
    icm_table_metadata *md = parse_ok(text);
    char *out = NULL;
    icmt_ok(icm_table_metadata_schema_json(&out, md, 0));
    json_t *got = json_loads(out, 0, NULL);
    json_t *want = json_array_get(json_object_get(icm__table_metadata_json(md), "schemas"), 0);
    assert_true(json_equal(got, want));
    json_decref(got);
    icm_free(out);
    assert_int_equal(icm_table_metadata_schema_json(&out, md, 7), ICM_ENOTFOUND);
    assert_null(out);
    icmt_ok(icm_table_metadata_spec_fields_json(&out, md, 1));
    got = json_loads(out, 0, NULL);
    assert_int_equal(json_array_size(got), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(got, 0), "transform")),
                        "bucket[16]");
    json_decref(got);
    icm_free(out);
    assert_int_equal(icm_table_metadata_spec_fields_json(&out, md, 9), ICM_ENOTFOUND);
    icm_table_metadata_free(md);
    free(text);
}

static void test_large_and_negative_ids_round_trip_exactly(void **state)
{
    (void)state;
    char *text = sq(RICH_V2);
    icm_table_metadata *md = parse_ok(text);
    char *json = NULL;
    icmt_ok(icm_table_metadata_to_json(&json, NULL, md));
    assert_non_null(strstr(json, "\"snapshot-id\": 7777777777777777777"));
    assert_non_null(strstr(json, "\"snapshot-id\": -4611686018427387904"));
    assert_non_null(strstr(json, "\"max-ref-age-ms\": 31536000000"));
    /* reals keep their shortest form; jansson's own dump would print 0.34233999999999998 */
    assert_non_null(strstr(json, "\"initial-default\": 0.34234"));
    assert_null(strstr(json, "0.3423399"));
    assert_non_null(strstr(json, "2.5"));
    /* keys stay in document order */
    assert_true(strstr(json, "\"format-version\"") < strstr(json, "\"table-uuid\""));
    assert_true(strstr(json, "\"statistics\"") < strstr(json, "\"x-vendor\""));
    icm_table_metadata *again = NULL;
    icmt_ok(parse_text(json, &again));
    assert_true(icm_table_metadata_snapshot_by_id(again, BIG_ID) != NULL);
    assert_true(icm_table_metadata_snapshot_by_id(again, NEG_ID) != NULL);
    icm_table_metadata_free(again);
    icm_free(json);
    icm_table_metadata_free(md);
    free(text);

    /* the hand-crafted fixture snapshot with the same 64-bit id */
    md = load_fixture("duckdb-iceberg/data/persistent/multi_blob_deletion_vectors/warehouse/"
                      "default/multi_blob_deletion_vectors/metadata/00003-multi-blob.metadata.json");
    const icm_snapshot *s = icm_table_metadata_snapshot_by_id(md, BIG_ID);
    assert_non_null(s);
    assert_true(s->snapshot_id == BIG_ID);
    icm_table_metadata_free(md);
}

static void test_main_branch_default(void **state)
{
    (void)state;
    /* no refs, a current snapshot: implicit main */
    char *t = sq(MIN_V2 ",'current-snapshot-id':4,'snapshots':[{'snapshot-id':4,"
                        "'timestamp-ms':1,'manifest-list':'s3://b/t/m.avro'}]}");
    icm_table_metadata *md = parse_ok(t);
    assert_int_equal(icm_table_metadata_ref_count(md), 1);
    const icm_ref *r = icm_table_metadata_ref_at(md, 0);
    assert_string_equal(r->name, "main");
    assert_int_equal(r->type, ICM_REF_BRANCH);
    assert_true(r->snapshot_id == 4 && r->implicit);
    assert_ptr_equal(icm_table_metadata_ref_by_name(md, "main"), r);
    /* the implicit branch is a view only: the document has no refs */
    assert_null(json_object_get(icm__table_metadata_json(md), "refs"));
    icm_table_metadata_free(md);
    free(t);

    /* refs without main plus a current snapshot: main is still implied (safer for expiry) */
    t = sq(MIN_V2 ",'current-snapshot-id':4,'refs':{'t':{'snapshot-id':4,'type':'tag'}},"
                  "'snapshots':[{'snapshot-id':4,'timestamp-ms':1,'manifest-list':'m'}]}");
    md = parse_ok(t);
    assert_int_equal(icm_table_metadata_ref_count(md), 2);
    assert_true(icm_table_metadata_ref_by_name(md, "main")->implicit);
    assert_false(icm_table_metadata_ref_by_name(md, "t")->implicit);
    icm_table_metadata_free(md);
    free(t);

    /* no current snapshot (-1, null, absent): no main */
    const char *none[] = {MIN_V2 ",'current-snapshot-id':-1,'snapshots':[]}",
                          MIN_V2 ",'current-snapshot-id':null}", MIN_V2 "}"};
    for (size_t i = 0; i < 3; i++) {
        t = sq(none[i]);
        md = parse_ok(t);
        int64_t id = 99;
        assert_false(icm_table_metadata_current_snapshot_id(&id, md));
        assert_true(id == 99);
        assert_int_equal(icm_table_metadata_ref_count(md), 0);
        icm_table_metadata_free(md);
        free(t);
    }
}

static void test_v1_embedded_manifests_and_defaults(void **state)
{
    (void)state;
    char *t = sq("{'format-version':1,'location':'/t','last-updated-ms':10,'last-column-id':1,"
                 "'schema':{'type':'struct','fields':[]},'partition-spec':[],"
                 "'current-snapshot-id':5,'snapshots':[{'snapshot-id':5,'timestamp-ms':1,"
                 "'manifests':['/t/m1.avro','/t/m2.avro']}]}");
    icm_table_metadata *md = parse_ok(t);
    assert_null(icm_table_metadata_uuid(md)); /* optional in v1 */
    assert_true(icm_table_metadata_last_sequence_number(md) == 0);
    const icm_snapshot *s = icm_table_metadata_snapshot_at(md, 0);
    assert_null(s->manifest_list);
    assert_int_equal(s->manifest_count, 2);
    assert_string_equal(s->manifests[0], "/t/m1.avro");
    assert_string_equal(s->manifests[1], "/t/m2.avro");
    assert_true(s->sequence_number == 0);
    assert_null(s->operation);
    assert_int_equal(icm_table_metadata_schema_count(md), 1);
    assert_int_equal(icm_table_metadata_spec_count(md), 1);
    assert_int_equal(icm_table_metadata_sort_order_count(md), 0);
    char *out = NULL;
    icmt_ok(icm_table_metadata_schema_json(&out, md, 0));
    assert_string_equal(out, "{\"type\":\"struct\",\"fields\":[]}");
    icm_free(out);
    icmt_ok(icm_table_metadata_spec_fields_json(&out, md, 0));
    assert_string_equal(out, "[]");
    icm_free(out);
    icm_table_metadata_free(md);
    free(t);

    /* the duckdb-edited Spark table using the deprecated field */
    md = load_fixture("duckdb-iceberg/data/persistent/iceberg_v1_deprecated/default/legacy_v1/"
                      "metadata/v2.metadata.json");
    s = icm_table_metadata_snapshot_at(md, 0);
    assert_null(s->manifest_list);
    assert_true(s->manifest_count > 0);
    icm_table_metadata_free(md);
}

static void test_v3_row_lineage(void **state)
{
    (void)state;
    char *t = sq("{'format-version':3,'table-uuid':'u','location':'s3://b/t',"
                 "'last-sequence-number':1,'last-updated-ms':5,'last-column-id':1,"
                 "'current-schema-id':0,'schemas':[{'type':'struct','fields':[]}],"
                 "'default-spec-id':0,'partition-specs':[{'spec-id':0,'fields':[]}],"
                 "'last-partition-id':999,'default-sort-order-id':0,"
                 "'sort-orders':[{'order-id':0,'fields':[]}],'next-row-id':130,"
                 "'current-snapshot-id':8,'snapshots':[{'snapshot-id':8,'sequence-number':1,"
                 "'timestamp-ms':5,'manifest-list':'m','first-row-id':100,'added-rows':30}]}");
    icm_table_metadata *md = parse_ok(t);
    int64_t n;
    assert_true(icm_table_metadata_next_row_id(&n, md) && n == 130);
    const icm_snapshot *s = icm_table_metadata_snapshot_at(md, 0);
    assert_true(s->has_first_row_id && s->first_row_id == 100);
    assert_true(s->has_added_rows && s->added_rows == 30);
    icm_table_metadata_free(md);
    free(t);
}

/* ---- hand-made documents: each validation rule ---- */

typedef struct bad_case {
    const char *doc; /* single-quoted JSON */
    int code;
    const char *message;
} bad_case;

#define SNAP(id) "{'snapshot-id':" #id ",'timestamp-ms':1,'manifest-list':'m'}"

static const bad_case k_bad[] = {
    {MIN_V2 ",'current-snapshot-id':3,'snapshots':[]}", ICM_EINVALID,
     "current-snapshot-id: snapshot 3 is not in snapshots"},
    {MIN_V2 ",'snapshots':[" SNAP(1) "," SNAP(1) "]}", ICM_EINVALID,
     "snapshots: snapshot-id 1 appears more than once"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':'1','timestamp-ms':1,'manifest-list':'m'}]}",
     ICM_EINVALID, "snapshots[0].snapshot-id: expected an integer, found a string"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':1.5,'timestamp-ms':1,'manifest-list':'m'}]}",
     ICM_EINVALID, "snapshots[0].snapshot-id: expected an integer, found a real number"},
    {MIN_V2 ",'snapshots':[{'timestamp-ms':1,'manifest-list':'m'}]}", ICM_EINVALID,
     "snapshots[0].snapshot-id: missing"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':1,'manifest-list':'m'}]}", ICM_EINVALID,
     "snapshots[0].timestamp-ms: missing"},
    {MIN_V2 ",'snapshots':[" SNAP(1) ",{'snapshot-id':2,'parent-snapshot-id':null,"
            "'timestamp-ms':1,'manifest-list':'m'}]}",
     ICM_EINVALID, "snapshots[1].parent-snapshot-id: must not be null"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':1,'timestamp-ms':1}]}", ICM_EINVALID,
     "snapshots[0]: neither manifest-list nor manifests is present"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':1,'timestamp-ms':1,'manifest-list':7}]}",
     ICM_EINVALID, "snapshots[0].manifest-list: expected a string, found an integer"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':1,'timestamp-ms':1,'manifests':['a',3]}]}",
     ICM_EINVALID, "snapshots[0].manifests[1]: expected a string"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':1,'sequence-number':6,'timestamp-ms':1,"
            "'manifest-list':'m'}]}",
     ICM_EINVALID, "snapshots[0].sequence-number: 6 is greater than last-sequence-number 5"},
    {MIN_V2 ",'snapshots':[{'snapshot-id':1,'timestamp-ms':1,'manifest-list':'m',"
            "'summary':{'operation':'append','added':3}}]}",
     ICM_EINVALID, "snapshots[0].summary.added: expected a string, found an integer"},
    {MIN_V2 ",'snapshots':null}", ICM_EINVALID, "snapshots: must not be null"},
    {MIN_V2 ",'snapshots':{}}", ICM_EINVALID, "snapshots: expected an array, found an object"},
    {MIN_V2 ",'snapshots':[7]}", ICM_EINVALID, "snapshots[0]: expected an object"},
    {MIN_V2 ",'snapshots':[" SNAP(1) "],'refs':{'x':{'snapshot-id':9,'type':'tag'}}}",
     ICM_EINVALID, "refs.x.snapshot-id: snapshot 9 is not in snapshots"},
    {MIN_V2 ",'snapshots':[" SNAP(1) "],'refs':{'x':{'snapshot-id':1,'type':'leaf'}}}",
     ICM_EINVALID, "refs.x.type: \"leaf\" is neither \"branch\" nor \"tag\""},
    {MIN_V2 ",'snapshots':[" SNAP(1) "],'refs':{'x':{'snapshot-id':1}}}", ICM_EINVALID,
     "refs.x.type: missing"},
    {MIN_V2 ",'snapshots':[" SNAP(1) "],'refs':{'x':{'snapshot-id':1,'type':'tag',"
            "'min-snapshots-to-keep':2}}}",
     ICM_EINVALID, "refs.x: a tag cannot have max-snapshot-age-ms or min-snapshots-to-keep"},
    {MIN_V2 ",'snapshots':[" SNAP(1) "],'refs':{'x':{'snapshot-id':1,'type':'branch',"
            "'min-snapshots-to-keep':0}}}",
     ICM_EINVALID, "refs.x.min-snapshots-to-keep: 0 is not a positive number"},
    {MIN_V2 ",'snapshots':[" SNAP(1) "],'refs':{'x':{'snapshot-id':1,'type':'branch',"
            "'max-snapshot-age-ms':-5}}}",
     ICM_EINVALID, "refs.x.max-snapshot-age-ms: -5 is not a positive number"},
    {MIN_V2 ",'current-snapshot-id':1,'snapshots':[" SNAP(1) "," SNAP(2)
            "],'refs':{'main':{'snapshot-id':2,'type':'branch'}}}",
     ICM_EINVALID, "refs.main.snapshot-id: 2 differs from current-snapshot-id 1"},
    {MIN_V2 ",'snapshots':[" SNAP(1) "],'refs':{'main':{'snapshot-id':1,'type':'branch'}}}",
     ICM_EINVALID, "refs.main: current-snapshot-id is not set but main exists"},
    {MIN_V2 ",'refs':[]}", ICM_EINVALID, "refs: expected an object, found an array"},
    {MIN_V2 ",'properties':{'k':1}}", ICM_EINVALID,
     "properties.k: expected a string, found an integer"},
    {MIN_V2 ",'properties':null}", ICM_EINVALID, "properties: must not be null"},
    {MIN_V2 ",'snapshot-log':[{'timestamp-ms':1700000000000,'snapshot-id':1},"
            "{'timestamp-ms':1699999000000,'snapshot-id':2}]}",
     ICM_EINVALID, "snapshot-log[1].timestamp-ms: 1699999000000 is before the previous entry"},
    {MIN_V2 ",'metadata-log':[{'timestamp-ms':1700000100000,'metadata-file':'f'}]}",
     ICM_EINVALID, "metadata-log[0].timestamp-ms: 1700000100000 is after last-updated-ms"},
    {MIN_V2 ",'metadata-log':[{'timestamp-ms':1}]}", ICM_EINVALID,
     "metadata-log[0].metadata-file: missing"},
    {MIN_V2 ",'statistics':[{'snapshot-id':1,'file-size-in-bytes':1,"
            "'file-footer-size-in-bytes':1,'blob-metadata':[]}]}",
     ICM_EINVALID, "statistics[0].statistics-path: missing"},
    {MIN_V2 ",'partition-statistics':[{'snapshot-id':1,'statistics-path':'p'}]}",
     ICM_EINVALID, "partition-statistics[0].file-size-in-bytes: missing"},
    {"{'format-version':4}", ICM_EUNSUPPORTED, "format-version: 4 is not supported (1 to 3)"},
    {"{'format-version':0}", ICM_EUNSUPPORTED, "format-version: 0 is not supported"},
    {"{'format-version':'2'}", ICM_EINVALID,
     "format-version: expected an integer, found a string"},
    {"{'location':'x'}", ICM_EINVALID, "format-version: missing"},
    {"[]", ICM_EINVALID, "not table metadata: the document is an array, not an object"},
    {"", ICM_EINVALID, "not valid JSON"},
    {"{'format-version':2,'format-version':2}", ICM_EINVALID, "duplicate object key"},
    {MIN_V2 ",'current-snapshot-id':9223372036854775808}", ICM_EINVALID, "not valid JSON"},
    {"{'format-version':2,'table-uuid':null}", ICM_EINVALID,
     "table-uuid: missing (required in format v2)"},
    {"{'format-version':2,'table-uuid':'u','location':'l','last-updated-ms':1}",
     ICM_EINVALID, "last-sequence-number: missing (required in format v2)"},
    {"{'format-version':1,'location':'l','last-updated-ms':1,'last-column-id':1,"
     "'schema':{'type':'list','fields':[]}}",
     ICM_EINVALID, "schema.type: \"list\" is not \"struct\""},
    {"{'format-version':1,'location':'l','last-updated-ms':1,'last-column-id':1,"
     "'schema':{'type':'struct','fields':[]}}",
     ICM_EINVALID, "partition-spec: missing"},
    {"{'format-version':2,'table-uuid':'u','location':'l','last-sequence-number':0,"
     "'last-updated-ms':1,'last-column-id':1,'current-schema-id':4294967296,"
     "'schemas':[]}",
     ICM_EINVALID, "current-schema-id: 4294967296 is out of range for an int"},
    {MIN_V2 ",'partition-specs':[]}", ICM_EINVALID, "duplicate object key"},
    /* the JSON reader itself */
    {MIN_V2 ",'x':'\\u0000'}", ICM_EINVALID, "\\u0000 is not allowed"},
    {MIN_V2 ",'x':'\\udc00'}", ICM_EINVALID, "lone low surrogate"},
    {MIN_V2 ",'x':'\\ud800x'}", ICM_EINVALID, "high surrogate not followed by a low one"},
    {MIN_V2 ",'x':'\\q'}", ICM_EINVALID, "invalid escape"},
    {MIN_V2 ",'x':'a\tb'}", ICM_EINVALID, "control character in string"},
    {MIN_V2 ",'x':'\xc3('}", ICM_EINVALID, "invalid UTF-8"},
    {MIN_V2 ",'x':'\xed\xa0\x80'}", ICM_EINVALID, "invalid UTF-8"},  /* encoded surrogate */
    {MIN_V2 ",'x':'\xc0\xaf'}", ICM_EINVALID, "invalid UTF-8"},      /* overlong '/' */
    {MIN_V2 ",'x':01}", ICM_EINVALID, "leading zero"},
    {MIN_V2 ",'x':1.}", ICM_EINVALID, "invalid number"},
    {MIN_V2 ",'x':-}", ICM_EINVALID, "invalid number"},
    {MIN_V2 ",'x':1e999}", ICM_EINVALID, "real number out of range"},
    {MIN_V2 ",'x':-9223372036854775809}", ICM_EINVALID, "integer out of the 64-bit range"},
    {MIN_V2 ",'x':tru}", ICM_EINVALID, "invalid literal"},
    {MIN_V2 ",'x':NaN}", ICM_EINVALID, "unexpected character"},
    {MIN_V2 "} {}", ICM_EINVALID, "end of input expected"},
    {MIN_V2 ",}", ICM_EINVALID, "expected a string key"},
    {MIN_V2 ",'x' 1}", ICM_EINVALID, "expected ':'"},
    {MIN_V2 ",'x':[1 2]}", ICM_EINVALID, "expected ',' or ']'"},
    {MIN_V2, ICM_EINVALID, "expected ',' or '}'"},
    {"{'a':'unterminated", ICM_EINVALID, "unterminated string"},
    {"   ", ICM_EINVALID, "unexpected end of input"},
};

static void test_validation_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < ICM__ARRAY_LEN(k_bad); i++) {
        char *t = sq(k_bad[i].doc);
        parse_fails(t, k_bad[i].code, k_bad[i].message);
        free(t);
    }
}

/* Values the reader must take exactly and the writer must give back exactly. */
static void test_json_reader_and_writer_values(void **state)
{
    (void)state;
    char *t = sq(MIN_V2 ",'x':{'min':-9223372036854775808,'max':9223372036854775807,"
                        "'real':1.0,'negzero':-0.0,'small':1e-300,'third':0.3333333333333333,"
                        "'esc':'\\u00e9\\ud83d\\ude00\\n\\t\\\\\\\"\\/\\u001f',"
                        "'raw':'\xc3\xa9'}}");
    icm_table_metadata *md = parse_ok(t);
    json_t *x = json_object_get(icm__table_metadata_json(md), "x");
    assert_true(json_integer_value(json_object_get(x, "min")) == INT64_MIN);
    assert_true(json_integer_value(json_object_get(x, "max")) == INT64_MAX);
    assert_true(json_is_real(json_object_get(x, "real")));
    assert_string_equal(json_string_value(json_object_get(x, "esc")),
                        "\xc3\xa9\xf0\x9f\x98\x80\n\t\\\"/\x1f");
    assert_string_equal(json_string_value(json_object_get(x, "raw")), "\xc3\xa9");
    char *out = NULL;
    icmt_ok(icm_table_metadata_to_json(&out, NULL, md));
    assert_non_null(strstr(out, "\"min\": -9223372036854775808"));
    assert_non_null(strstr(out, "\"max\": 9223372036854775807"));
    assert_non_null(strstr(out, "\"real\": 1.0,"));
    assert_non_null(strstr(out, "\"negzero\": -0.0,"));
    assert_non_null(strstr(out, "\"small\": 1e-300,"));
    assert_non_null(strstr(out, "\"third\": 0.3333333333333333,"));
    /* UTF-8 stays raw; quotes, backslashes and control characters are escaped */
    assert_non_null(strstr(out, "\"esc\": \"\xc3\xa9\xf0\x9f\x98\x80\\n\\t\\\\\\\"/\\u001f\""));
    icm_table_metadata *again = parse_ok(out);
    assert_true(json_equal(icm__table_metadata_json(md), icm__table_metadata_json(again)));
    icm_table_metadata_free(again);
    icm_free(out);
    icm_table_metadata_free(md);
    free(t);

    /* nesting is bounded: 600 levels are refused, not a stack overflow */
    char deep[1300];
    memset(deep, '[', 600);
    memset(deep + 600, ']', 600);
    deep[1200] = '\0';
    parse_fails(deep, ICM_EINVALID, "nested too deeply");
}

static void test_empty_spec_and_sort_order_arrays(void **state)
{
    (void)state;
    char *t = sq("{'format-version':2,'table-uuid':'u','location':'s3://b/t',"
                 "'last-sequence-number':5,'last-updated-ms':1,'last-column-id':1,"
                 "'current-schema-id':0,'schemas':[{'type':'struct','fields':[]}],"
                 "'default-spec-id':0,'partition-specs':[],'last-partition-id':999,"
                 "'default-sort-order-id':0,'sort-orders':[{'order-id':0,'fields':[]}]}");
    parse_fails(t, ICM_EINVALID, "partition-specs: empty");
    free(t);
    t = sq("{'format-version':2,'table-uuid':'u','location':'s3://b/t',"
           "'last-sequence-number':5,'last-updated-ms':1,'last-column-id':1,"
           "'current-schema-id':0,'schemas':[{'type':'struct','fields':[]}],"
           "'default-spec-id':0,'partition-specs':[{'spec-id':0,'fields':[]}],"
           "'last-partition-id':999,'default-sort-order-id':0,'sort-orders':[]}");
    parse_fails(t, ICM_EINVALID, "sort-orders: empty");
    free(t);
}

static void test_not_json_reports_position(void **state)
{
    (void)state;
    const char *text = "{\n  \"format-version\": 2,\n  oops\n}";
    icm_table_metadata *md = NULL;
    assert_int_equal(icm_table_metadata_parse(&md, text, strlen(text), "/t/m.json"),
                     ICM_EINVALID);
    const icm_error *e = icm_error_last();
    assert_int_equal(e->klass, ICM_ERRCLASS_JSON);
    assert_string_equal(e->location, "/t/m.json");
    assert_non_null(strstr(e->message, "not valid JSON"));
    assert_int_equal(e->line, 3);
    assert_true(e->column >= 3);
    assert_true(e->offset > 0);
    assert_null(strchr(e->message, '\n'));
    /* bytes are used as given: no NUL terminator needed, trailing bytes beyond len ignored */
    char *t = sq(MIN_V2 "}GARBAGE");
    assert_int_equal(icm_table_metadata_parse(&md, t, strlen(t) - 7, NULL), 0);
    icm_table_metadata_free(md);
    free(t);
}

static void test_corrupt_compressed_input(void **state)
{
    (void)state;
    const char *files[] = {
        "duckdb-iceberg/data/persistent/iceberg/lineitem_iceberg_gz/metadata/"
        "v1.gz.metadata.json",
        "metadata-json/iceberg-go/table/testdata/TableMetadataV2Valid.zstd.metadata.json"};
    const char *codec[] = {"gzip", "zstd"};
    for (size_t i = 0; i < 2; i++) {
        char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(), files[i]);
        size_t len = 0;
        char *data = icmt_read_file(path, &len);
        assert_non_null(data);
        icm_table_metadata *md = NULL;
        icmt_ok(icm_table_metadata_parse(&md, data, len, path)); /* whole file: fine */
        icm_table_metadata_free(md);
        md = NULL;
        /* cut in half: truncated stream */
        assert_int_equal(icm_table_metadata_parse(&md, data, len / 2, path), ICM_EINVALID);
        assert_non_null(strstr(icm_error_last()->message, codec[i]));
        /* flip bytes in the middle: corrupt stream (or a checksum mismatch) */
        for (size_t j = len / 3; j < len / 3 + 8 && j < len; j++)
            data[j] = (char)~data[j];
        assert_int_equal(icm_table_metadata_parse(&md, data, len, path), ICM_EINVALID);
        assert_null(md);
        free(data);
        free(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture_is_classified),
        cmocka_unit_test(test_index_tsv_snapshot_counts),
        cmocka_unit_test(test_round_trip_every_valid_fixture),
        cmocka_unit_test(test_rich_document_views),
        cmocka_unit_test(test_schema_and_spec_json),
        cmocka_unit_test(test_large_and_negative_ids_round_trip_exactly),
        cmocka_unit_test(test_main_branch_default),
        cmocka_unit_test(test_v1_embedded_manifests_and_defaults),
        cmocka_unit_test(test_v3_row_lineage),
        cmocka_unit_test(test_validation_rules),
        cmocka_unit_test(test_json_reader_and_writer_values),
        cmocka_unit_test(test_empty_spec_and_sort_order_arrays),
        cmocka_unit_test(test_not_json_reports_position),
        cmocka_unit_test(test_corrupt_compressed_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
