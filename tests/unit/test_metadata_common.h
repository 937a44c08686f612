/*
 * tests/unit/test_metadata_common.h: helpers shared by the table-metadata tests (header-only,
 * static functions): reading and parsing fixtures, the fixture walk, and a comparison of the
 * typed views of two metadata objects.
 */
#ifndef ICM_TEST_METADATA_COMMON_H
#define ICM_TEST_METADATA_COMMON_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "icemaint/metadata.h"
#include "spec/metadata_internal.h"

/* Each test file uses a different subset of these helpers. */
#define ICMT_UNUSED __attribute__((unused))

/* Read fixture `rel` (relative to the fixtures dir) and parse it; fails the test on error. */
static ICMT_UNUSED icm_table_metadata *load_fixture(const char *rel)
{
    char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(), rel);
    size_t len = 0;
    char *data = icmt_read_file(path, &len);
    if (data == NULL) {
        print_error("cannot read fixture %s\n", path);
        fail();
    }
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_parse(&md, data, len, path));
    free(data);
    free(path);
    return md;
}

/* Parse a NUL-terminated document; returns the code, *out set on success. */
static ICMT_UNUSED int parse_text(const char *text, icm_table_metadata **out)
{
    return icm_table_metadata_parse(out, text, strlen(text), "test.metadata.json");
}

static ICMT_UNUSED icm_table_metadata *parse_ok(const char *text)
{
    icm_table_metadata *md = NULL;
    icmt_ok(parse_text(text, &md));
    return md;
}

/* Parse, expecting failure with `code` and `needle` in the message. */
static ICMT_UNUSED void parse_fails(const char *text, int code, const char *needle)
{
    icm_table_metadata *md = NULL;
    int rc = parse_text(text, &md);
    const icm_error *e = icm_error_last();
    if (rc != code || strstr(e->message, needle) == NULL) {
        print_error("expected %s containing \"%s\", got %s: %s\n", icm_error_code_name(code),
                    needle, icm_error_code_name(rc), e->message);
        fail();
    }
    assert_null(md);
    assert_string_equal(e->location, "test.metadata.json");
}

/* ---- fixture walk: every *.json below the fixtures dir, as paths relative to it ---- */

static char **g_walk_files;
static size_t g_walk_count;
static size_t g_walk_root_len;

static ICMT_UNUSED int walk_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    size_t n = strlen(path);
    if (flag == FTW_F && n > 5 && strcmp(path + n - 5, ".json") == 0) {
        g_walk_files = realloc(g_walk_files, (g_walk_count + 1) * sizeof *g_walk_files);
        g_walk_files[g_walk_count++] = strdup(path + g_walk_root_len + 1);
    }
    return 0;
}

static ICMT_UNUSED int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted list of fixture JSON files; free with free_walk(). */
static ICMT_UNUSED void walk_fixtures(void)
{
    g_walk_files = NULL;
    g_walk_count = 0;
    g_walk_root_len = strlen(icmt_fixtures_dir());
    assert_int_equal(nftw(icmt_fixtures_dir(), walk_cb, 16, FTW_PHYS), 0);
    qsort(g_walk_files, g_walk_count, sizeof *g_walk_files, cmp_str);
}

static ICMT_UNUSED void free_walk(void)
{
    for (size_t i = 0; i < g_walk_count; i++)
        free(g_walk_files[i]);
    free(g_walk_files);
    g_walk_files = NULL;
    g_walk_count = 0;
}

/* ---- view comparison ---- */

static ICMT_UNUSED void assert_str_eq_or_null(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static ICMT_UNUSED void assert_snapshot_equal(const icm_snapshot *a, const icm_snapshot *b)
{
    assert_true(a->snapshot_id == b->snapshot_id);
    assert_int_equal(a->has_parent, b->has_parent);
    if (a->has_parent)
        assert_true(a->parent_snapshot_id == b->parent_snapshot_id);
    assert_true(a->sequence_number == b->sequence_number);
    assert_true(a->timestamp_ms == b->timestamp_ms);
    assert_str_eq_or_null(a->manifest_list, b->manifest_list);
    assert_int_equal(a->manifest_count, b->manifest_count);
    for (size_t i = 0; i < a->manifest_count; i++)
        assert_string_equal(a->manifests[i], b->manifests[i]);
    assert_str_eq_or_null(a->operation, b->operation);
    assert_int_equal(a->has_schema_id, b->has_schema_id);
    assert_int_equal(a->schema_id, b->schema_id);
    assert_int_equal(a->has_first_row_id, b->has_first_row_id);
    assert_true(a->first_row_id == b->first_row_id);
    assert_int_equal(a->has_added_rows, b->has_added_rows);
    assert_true(a->added_rows == b->added_rows);
}

static ICMT_UNUSED void assert_ref_equal(const icm_ref *a, const icm_ref *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->type, b->type);
    assert_true(a->snapshot_id == b->snapshot_id);
    assert_int_equal(a->has_max_ref_age_ms, b->has_max_ref_age_ms);
    assert_true(a->max_ref_age_ms == b->max_ref_age_ms);
    assert_int_equal(a->has_max_snapshot_age_ms, b->has_max_snapshot_age_ms);
    assert_true(a->max_snapshot_age_ms == b->max_snapshot_age_ms);
    assert_int_equal(a->has_min_snapshots_to_keep, b->has_min_snapshots_to_keep);
    assert_int_equal(a->min_snapshots_to_keep, b->min_snapshots_to_keep);
    assert_int_equal(a->implicit, b->implicit);
}

/* Every typed view of a and b is the same. */
static ICMT_UNUSED void assert_views_equal(const icm_table_metadata *a, const icm_table_metadata *b)
{
    int64_t x = 0, y = 0;
    assert_int_equal(icm_table_metadata_format_version(a), icm_table_metadata_format_version(b));
    assert_str_eq_or_null(icm_table_metadata_uuid(a), icm_table_metadata_uuid(b));
    assert_string_equal(icm_table_metadata_location(a), icm_table_metadata_location(b));
    assert_true(icm_table_metadata_last_sequence_number(a) ==
                icm_table_metadata_last_sequence_number(b));
    assert_true(icm_table_metadata_last_updated_ms(a) == icm_table_metadata_last_updated_ms(b));
    assert_int_equal(icm_table_metadata_current_snapshot_id(&x, a),
                     icm_table_metadata_current_snapshot_id(&y, b));
    assert_true(x == y);
    x = y = 0;
    assert_int_equal(icm_table_metadata_next_row_id(&x, a), icm_table_metadata_next_row_id(&y, b));
    assert_true(x == y);
    assert_int_equal(icm_table_metadata_snapshot_count(a), icm_table_metadata_snapshot_count(b));
    for (size_t i = 0; i < icm_table_metadata_snapshot_count(a); i++)
        assert_snapshot_equal(icm_table_metadata_snapshot_at(a, i),
                              icm_table_metadata_snapshot_at(b, i));
    assert_int_equal(icm_table_metadata_ref_count(a), icm_table_metadata_ref_count(b));
    for (size_t i = 0; i < icm_table_metadata_ref_count(a); i++)
        assert_ref_equal(icm_table_metadata_ref_at(a, i), icm_table_metadata_ref_at(b, i));
    assert_int_equal(icm_table_metadata_snapshot_log_count(a),
                     icm_table_metadata_snapshot_log_count(b));
    for (size_t i = 0; i < icm_table_metadata_snapshot_log_count(a); i++) {
        const icm_snapshot_log_entry *p = icm_table_metadata_snapshot_log_at(a, i);
        const icm_snapshot_log_entry *q = icm_table_metadata_snapshot_log_at(b, i);
        assert_true(p->timestamp_ms == q->timestamp_ms && p->snapshot_id == q->snapshot_id);
    }
    assert_int_equal(icm_table_metadata_metadata_log_count(a),
                     icm_table_metadata_metadata_log_count(b));
    for (size_t i = 0; i < icm_table_metadata_metadata_log_count(a); i++) {
        const icm_metadata_log_entry *p = icm_table_metadata_metadata_log_at(a, i);
        const icm_metadata_log_entry *q = icm_table_metadata_metadata_log_at(b, i);
        assert_true(p->timestamp_ms == q->timestamp_ms);
        assert_string_equal(p->metadata_file, q->metadata_file);
    }
    assert_int_equal(icm_table_metadata_statistics_count(a),
                     icm_table_metadata_statistics_count(b));
    for (size_t i = 0; i < icm_table_metadata_statistics_count(a); i++) {
        const icm_statistics_file *p = icm_table_metadata_statistics_at(a, i);
        const icm_statistics_file *q = icm_table_metadata_statistics_at(b, i);
        assert_true(p->snapshot_id == q->snapshot_id);
        assert_string_equal(p->path, q->path);
        assert_true(p->file_size_in_bytes == q->file_size_in_bytes);
        assert_int_equal(p->partition_statistics, q->partition_statistics);
    }
    assert_int_equal(icm_table_metadata_property_count(a), icm_table_metadata_property_count(b));
    for (size_t i = 0; i < icm_table_metadata_property_count(a); i++) {
        const char *ka, *va, *kb, *vb;
        icm_table_metadata_property_at(&ka, &va, a, i);
        icm_table_metadata_property_at(&kb, &vb, b, i);
        assert_string_equal(ka, kb);
        assert_string_equal(va, vb);
    }
    assert_int_equal(icm_table_metadata_schema_count(a), icm_table_metadata_schema_count(b));
    assert_int_equal(icm_table_metadata_current_schema_id(a),
                     icm_table_metadata_current_schema_id(b));
    assert_int_equal(icm_table_metadata_spec_count(a), icm_table_metadata_spec_count(b));
    assert_int_equal(icm_table_metadata_default_spec_id(a), icm_table_metadata_default_spec_id(b));
    assert_int_equal(icm_table_metadata_sort_order_count(a),
                     icm_table_metadata_sort_order_count(b));
}

#endif

/* ---- hand-made documents, written with single quotes for readability ---- */

/* Copy of s with every ' turned into " (malloc'd). */
static ICMT_UNUSED char *sq(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    return d;
}

/* Minimal valid v2 header; cases append members and the closing brace. */
#define MIN_V2                                                                                 \
    "{'format-version':2,'table-uuid':'9c12d441-03fe-4693-9a96-a0705ddf69c1',"                 \
    "'location':'s3://b/t','last-sequence-number':5,'last-updated-ms':1700000000000,"           \
    "'last-column-id':1,'current-schema-id':0,"                                                \
    "'schemas':[{'type':'struct','schema-id':0,'fields':[]}],'default-spec-id':0,"             \
    "'partition-specs':[{'spec-id':0,'fields':[]}],'last-partition-id':999,"                   \
    "'default-sort-order-id':0,'sort-orders':[{'order-id':0,'fields':[]}]"

/* A rich v2 document: three snapshots (one with a negative id, one with a 64-bit id), a
 * branch with retention settings, a tag, both logs, both statistics kinds and a vendor field. */
#define RICH_V2                                                                                \
    "{'format-version':2,'table-uuid':'9c12d441-03fe-4693-9a96-a0705ddf69c1',"                 \
    "'location':'s3://bucket/db/t','last-sequence-number':3,'last-updated-ms':1700000300000,"   \
    "'last-column-id':2,'current-schema-id':1,"                                                \
    "'schemas':[{'type':'struct','schema-id':0,'fields':[{'id':1,'name':'a','required':true,"  \
    "'type':'long'}]},{'type':'struct','schema-id':1,'fields':[{'id':1,'name':'a',"            \
    "'required':true,'type':'long'},{'id':2,'name':'b','required':false,'type':'double',"      \
    "'initial-default':0.34234}]}],"                                                           \
    "'default-spec-id':1,'partition-specs':[{'spec-id':0,'fields':[]},{'spec-id':1,'fields':"  \
    "[{'name':'a_bucket','transform':'bucket[16]','source-id':1,'field-id':1000}]}],"          \
    "'last-partition-id':1000,'default-sort-order-id':0,'sort-orders':[{'order-id':0,"         \
    "'fields':[]}],"                                                                           \
    "'properties':{'owner':'alice','history.expire.max-snapshot-age-ms':'86400000'},"          \
    "'current-snapshot-id':7777777777777777777,"                                               \
    "'refs':{'main':{'snapshot-id':7777777777777777777,'type':'branch'},"                      \
    "'audit':{'snapshot-id':-4611686018427387904,'type':'branch','max-ref-age-ms':604800000,"  \
    "'max-snapshot-age-ms':3600000,'min-snapshots-to-keep':2},"                                \
    "'v1.0':{'snapshot-id':1,'type':'tag','max-ref-age-ms':31536000000}},"                     \
    "'snapshots':["                                                                            \
    "{'snapshot-id':1,'sequence-number':1,'timestamp-ms':1700000000000,"                       \
    "'manifest-list':'s3://bucket/db/t/metadata/snap-1.avro',"                                 \
    "'summary':{'operation':'append','added-data-files':'1'},'schema-id':0},"                  \
    "{'snapshot-id':-4611686018427387904,'parent-snapshot-id':1,'sequence-number':2,"          \
    "'timestamp-ms':1700000100000,'manifest-list':'s3://bucket/db/t/metadata/snap-neg.avro',"  \
    "'summary':{'operation':'overwrite'},'x-snapshot-extra':{'a':[1,2]}},"                      \
    "{'snapshot-id':7777777777777777777,'parent-snapshot-id':1,'sequence-number':3,"           \
    "'timestamp-ms':1700000200000,'manifest-list':'s3://bucket/db/t/metadata/snap-big.avro',"  \
    "'summary':{'operation':'delete'},'schema-id':1}],"                                        \
    "'snapshot-log':[{'timestamp-ms':1700000000000,'snapshot-id':1},"                          \
    "{'timestamp-ms':1700000100000,'snapshot-id':-4611686018427387904},"                       \
    "{'timestamp-ms':1700000200000,'snapshot-id':7777777777777777777}],"                       \
    "'metadata-log':[{'timestamp-ms':1699999990000,"                                           \
    "'metadata-file':'s3://bucket/db/t/metadata/00000-a.metadata.json'}],"                     \
    "'statistics':[{'snapshot-id':1,'statistics-path':'s3://bucket/db/t/metadata/1.stats',"    \
    "'file-size-in-bytes':413,'file-footer-size-in-bytes':42,'blob-metadata':[]},"             \
    "{'snapshot-id':-4611686018427387904,'statistics-path':'s3://bucket/db/t/metadata/n.stats',"\
    "'file-size-in-bytes':500,'file-footer-size-in-bytes':40,'blob-metadata':[]}],"            \
    "'partition-statistics':[{'snapshot-id':7777777777777777777,"                              \
    "'statistics-path':'s3://bucket/db/t/metadata/p.parquet','file-size-in-bytes':43}],"       \
    "'x-vendor':{'keep':[1,2.5,'z',null,true]}}"

#define BIG_ID INT64_C(7777777777777777777)
#define NEG_ID (-INT64_C(4611686018427387904))

/* A snapshot object with this id and a manifest list. */
#define SNAP_M(id) "{'snapshot-id':" #id ",'timestamp-ms':1,'manifest-list':'m'}"
