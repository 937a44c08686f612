/*
 * tests/unit/test_txn_add_files_schema.c: the Parquet footer schema reader (src/parquet) and
 * add-files' schema check (src/txn/txn_addfiles_schema.c) on a real data file from the
 * fixtures: duckdb-iceberg's add_columns_with_defaults table, whose data file 00000-0-f1823874…
 * was written with one column of every primitive type (field ids 1..15). The expected names,
 * ids and types come from the table's own metadata JSON, not from our reader. The add-files
 * cases against PyIceberg's decisions are in tests/py/test_add_files_schema.py.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "icemaint/common.h"
#include "icemaint/fileio.h"
#include "icemaint/metadata.h"
#include "parquet/parquet.h"
#include "testutil.h"
#include "txn/txn_addfiles_schema.h"

#define TABLE "duckdb-iceberg/data/persistent/add_columns_with_defaults/default.db/" \
              "add_columns_with_defaults"
#define WIDE_FILE TABLE "/data/00000-0-f1823874-113e-405c-b412-f75145620823.parquet"
#define NARROW_FILE TABLE "/data/00000-0-0bb8c58e-4fbc-483f-af6d-0e2f896179a2.parquet"
/* v0: schema {col1}; v3: schema {col1, col_boolean, ..., col_binary}. */
#define MD_V0 TABLE "/metadata/00000-d099e962-c779-4b0d-84d3-bfca774862f4.metadata.json"
#define MD_V3 TABLE "/metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json"

static char *fixture(const char *rel)
{
    return icmt_sprintf("%s/%s", icmt_fixtures_dir(), rel);
}

static icm__parquet_schema *read_schema(icm_fileio *io, const char *rel)
{
    char *path = fixture(rel);
    icm__parquet_schema *s = NULL;
    int64_t size = -1;
    icmt_ok(icm__parquet_read_schema(io, path, &s, &size));
    assert_true(size > 12);
    free(path);
    return s;
}

static icm_table_metadata *read_md(icm_fileio *io, const char *rel)
{
    char *path = fixture(rel);
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_read(&md, io, path));
    free(path);
    return md;
}

/* The file's schema is the table's: one leaf per table field, same order, names and ids; the
 * row count is the one the table's manifest records (1). */
static void fixture_footer_schema_matches_table(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    icm__parquet_schema *s = read_schema(io, WIDE_FILE);
    icm_table_metadata *md = read_md(io, MD_V3);
    char *text = NULL;
    icmt_ok(icm_table_metadata_schema_json(&text, md, icm_table_metadata_current_schema_id(md)));
    json_t *schema = json_loads(text, 0, NULL);
    icm_free(text);
    json_t *fields = json_object_get(schema, "fields");
    assert_int_equal(json_array_size(fields), 15);
    assert_int_equal(s->num_rows, 1);
    assert_int_equal(s->element_count, 16);
    assert_int_equal(s->elements[0].num_children, 15);
    assert_int_equal(s->elements[0].subtree_size, 16);
    for (size_t i = 0; i < 15; i++) {
        const icm__parquet_element *e = &s->elements[i + 1];
        json_t *f = json_array_get(fields, i);
        assert_string_equal(e->name, json_string_value(json_object_get(f, "name")));
        assert_true(e->has_field_id);
        assert_int_equal(e->field_id, json_integer_value(json_object_get(f, "id")));
        assert_int_equal(e->repetition, ICM__PQ_OPTIONAL); /* every field is optional */
        assert_int_equal(e->num_children, -1);
        assert_int_equal(e->subtree_size, 1);
    }
    /* Type annotations the check relies on, as the Iceberg spec's Parquet appendix maps the
     * table types: decimal(16, 2) on INT64, timestamp vs timestamptz, fixed[5]. */
    const icm__parquet_element *dec = &s->elements[7], *ts = &s->elements[10],
                               *tstz = &s->elements[11], *fixed = &s->elements[14];
    assert_int_equal(dec->type, ICM__PQ_INT64);
    assert_int_equal(dec->logical.kind, ICM__PQ_LT_DECIMAL);
    assert_int_equal(dec->logical.precision, 16);
    assert_int_equal(dec->logical.scale, 2);
    assert_int_equal(ts->logical.kind, ICM__PQ_LT_TIMESTAMP);
    assert_false(ts->logical.adjusted_to_utc);
    assert_int_equal(ts->logical.unit, ICM__PQ_UNIT_MICROS);
    assert_true(tstz->logical.adjusted_to_utc);
    assert_int_equal(fixed->type, ICM__PQ_FIXED_LEN_BYTE_ARRAY);
    assert_int_equal(fixed->type_length, 5);
    json_decref(schema);
    icm__parquet_schema_free(s);
    icm_table_metadata_free(md);
    icm_fileio_free(io);
}

/* The wide file fits the table's current schema; against the first version (only col1) its
 * first extra column is named; the narrow file (col1 only) fits the current schema, whose
 * other columns are optional. */
static void fixture_files_against_table_versions(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    icm__parquet_schema *wide = read_schema(io, WIDE_FILE);
    icm__parquet_schema *narrow = read_schema(io, NARROW_FILE);
    icm_table_metadata *v0 = read_md(io, MD_V0), *v3 = read_md(io, MD_V3);
    icmt_ok(icm__txn_check_parquet_schema(v3, wide, "wide.parquet"));
    icmt_ok(icm__txn_check_parquet_schema(v3, narrow, "narrow.parquet"));
    icmt_ok(icm__txn_check_parquet_schema(v0, narrow, "narrow.parquet"));
    assert_int_equal(icm__txn_check_parquet_schema(v0, wide, "wide.parquet"), ICM_EINVALID);
    const icm_error *err = icm_error_last();
    assert_string_equal(err->location, "wide.parquet");
    assert_non_null(strstr(err->message, "column 'col_boolean' is not in the table schema"));
    icm__parquet_schema_free(wide);
    icm__parquet_schema_free(narrow);
    icm_table_metadata_free(v0);
    icm_table_metadata_free(v3);
    icm_fileio_free(io);
}

/* Every cut of the real footer is refused, never decoded into a partial schema. */
static void fixture_footer_truncations_are_errors(void **state)
{
    (void)state;
    char *path = fixture(WIDE_FILE);
    size_t len = 0;
    uint8_t *file = (uint8_t *)icmt_read_file(path, &len);
    assert_non_null(file);
    size_t flen = (size_t)file[len - 8] | (size_t)file[len - 7] << 8 |
                  (size_t)file[len - 6] << 16 | (size_t)file[len - 5] << 24;
    assert_true(flen > 0 && flen < len - 12);
    const uint8_t *footer = file + len - 8 - flen;
    icm__parquet_schema *s = NULL;
    icmt_ok(icm__parquet_footer_schema(footer, flen, "f", &s));
    icm__parquet_schema_free(s);
    /* The decoder reads FileMetaData to its end, so any cut fails. */
    for (size_t n = 0; n < flen; n++) {
        s = NULL;
        assert_int_equal(icm__parquet_footer_schema(footer, n, "f", &s), ICM_EINVALID);
        assert_null(s);
    }
    free(file);
    free(path);
}

/* ---- allocation failures ---- */

/* Reading the wide file's schema and checking it against both table versions, with the Nth
 * allocation failing, for every N: each step returns its normal outcome or ICM_ENOMEM, and
 * nothing leaks (AddressSanitizer's leak check at exit). */
static void schema_read_and_check_under_allocation_failures(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    icm_table_metadata *v0 = read_md(io, MD_V0), *v3 = read_md(io, MD_V3);
    char *path = fixture(WIDE_FILE);
    long failures = 0;
    for (long fail_at = 0;; fail_at++) {
        icmt_nomem_arm(fail_at);
        icm__parquet_schema *s = NULL;
        int64_t size = 0;
        int rc = icm__parquet_read_schema(io, path, &s, &size);
        int ok3 = rc == 0 ? icm__txn_check_parquet_schema(v3, s, "w") : ICM_ENOMEM;
        int ok0 = rc == 0 ? icm__txn_check_parquet_schema(v0, s, "w") : ICM_ENOMEM;
        long allocations = icmt_nomem_disarm();
        icm__parquet_schema_free(s);
        assert_true(rc == 0 || rc == ICM_ENOMEM);
        assert_true(ok3 == 0 || ok3 == ICM_ENOMEM);
        assert_true(ok0 == ICM_EINVALID || ok0 == ICM_ENOMEM);
        if (allocations <= fail_at) { /* nothing failed: every allocation point was tried */
            assert_int_equal(rc, 0);
            assert_int_equal(ok3, 0);
            assert_int_equal(ok0, ICM_EINVALID);
            break;
        }
        failures++;
    }
    assert_true(failures > 20); /* names, elements, paths, the schema JSON */
    free(path);
    icm_table_metadata_free(v0);
    icm_table_metadata_free(v3);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_footer_schema_matches_table),
        cmocka_unit_test(fixture_files_against_table_versions),
        cmocka_unit_test(fixture_footer_truncations_are_errors),
        cmocka_unit_test(schema_read_and_check_under_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
