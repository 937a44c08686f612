/*
 * fuzz/fuzz_parquet_footer.c: the Parquet footer reader (src/parquet) on arbitrary bytes, both
 * as a whole file (magic, footer length, FileMetaData) through an in-memory FileIO and as a bare
 * FileMetaData, for the row count and for the schema; every schema that decodes is then checked
 * against a table schema with nested types (add-files' check, src/txn/txn_addfiles_schema.c);
 * the column statistics too, then judged against bounds (maint/verify_footer.c).
 * Each must return 0 with consistent results, or ICM_EINVALID (ICM_ENOMEM), never crash or read
 * out of bounds. Seeds: the checked-in corpus plus every fixture named *.parquet.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "icemaint/metadata.h"
#include "icemaint/testing/fileio.h"
#include "maint/verify.h"
#include "parquet/parquet.h"
#include "txn/txn_addfiles_schema.h"

const char *const icm_fuzz_seed_suffixes[] = {".parquet", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A v2 table whose schema has every kind of nesting the check walks. */
static const char TABLE_JSON[] =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"/t\",\"last-sequence-number\":0,\"last-updated-ms\":1,"
    "\"last-column-id\":9,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
    "\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":3,\"name\":\"x\",\"required\":false,\"type\":\"decimal(9, 2)\"}]}},"
    "{\"id\":4,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":5,"
    "\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":6,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":7,"
    "\"key\":\"string\",\"value-id\":8,\"value\":\"timestamptz\",\"value-required\":false}},"
    "{\"id\":9,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"}]}],"
    "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
    "\"last-partition-id\":999,\"default-sort-order-id\":0,"
    "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}]}";

static void check(int rc, int64_t rows)
{
    if (rc == 0 ? rows < 0 : rc != ICM_EINVALID && rc != ICM_ENOMEM)
        abort();
}

/* A decoded schema is one tree covering every element; the check then decides without error
 * other than a refusal. */
static void check_schema(int rc, const icm__parquet_schema *s, const icm_table_metadata *md)
{
    check(rc, rc == 0 ? s->num_rows : 0);
    if (rc != 0) {
        if (s != NULL)
            abort();
        return;
    }
    if (s->element_count == 0 || s->elements[0].subtree_size != s->element_count)
        abort();
    if (md != NULL) {
        int c = icm__txn_check_parquet_schema(md, s, "fuzz");
        if (c != 0 && c != ICM_EINVALID && c != ICM_ENOMEM)
            abort();
    }
}

/* Column statistics: every chunk within the footer bytes kept; then judged against bounds
 * made of the footer's own bytes (any bytes: a map that does not parse has no pairs to
 * compare), which decides without error. */
static void check_stats(const uint8_t *data, size_t size)
{
    icm__parquet_stats *s = NULL;
    int rc = icm__parquet_footer_stats(data, size, "fuzz", &s);
    if (rc != 0) {
        if (s != NULL || (rc != ICM_EINVALID && rc != ICM_ENOMEM))
            abort();
        return;
    }
    for (size_t i = 0; i < s->row_group_count * s->leaf_count; i++) {
        const icm__parquet_chunk_stats *c = &s->chunks[i];
        if ((c->has_min && (c->min < s->footer || c->min + c->min_len > s->footer + size)) ||
            (c->has_max && (c->max < s->footer || c->max + c->max_len > s->footer + size)))
            abort();
    }
    char why[160];
    bool agrees = false;
    icm_raw half = {data, size / 2}, rest = {data + size / 2, size - size / 2};
    icm__footer_ids *ids = NULL;
    rc = icm__verify_footer_ids(s, NULL, &ids);
    if (rc != 0 && rc != ICM_ENOMEM)
        abort();
    if (rc == 0)
        icm__verify_footer_agrees(s, ids, s->schema->num_rows, half, rest, why, sizeof why,
                                  &agrees);
    icm__verify_footer_ids_free(ids);
    icm__parquet_stats_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0)
        check_stats(data, size);
    static icm_table_metadata *md;
    if (md == NULL && icm_table_metadata_parse(&md, TABLE_JSON, strlen(TABLE_JSON), "t") != 0)
        abort();
    int64_t rows = -1, bytes = -1;
    check(icm__parquet_footer_num_rows(data, size, "fuzz", &rows), rows);
    icm__parquet_schema *schema = NULL;
    int rc = icm__parquet_footer_schema(data, size, "fuzz", &schema);
    check_schema(rc, schema, md);
    icm__parquet_schema_free(schema);
    icm_fileio *io = NULL;
    if (icm_fileio_mem_new(&io) != 0)
        return 0;
    if (icm_fileio_create_new(io, "/f.parquet", data, size) == 0) {
        schema = NULL;
        rc = icm__parquet_read_schema(io, "/f.parquet", &schema, &bytes);
        check_schema(rc, schema, md);
        if (rc == 0 && bytes != (int64_t)size)
            abort();
        icm__parquet_schema_free(schema);
        icm__parquet_stats *stats = NULL;
        rc = icm__parquet_read_stats(io, "/f.parquet", &stats, &bytes);
        if ((rc == 0) != (stats != NULL) || (rc != 0 && rc != ICM_EINVALID && rc != ICM_ENOMEM))
            abort();
        icm__parquet_stats_free(stats);
    }
    icm_fileio_free(io);
    return 0;
}
