/*
 * manifest/io.c: convenience readers that fetch manifest lists and manifests through an
 * icm_fileio and stream their rows to a callback, including the v1 "embedded manifests" case
 * (snapshots without a manifest list), and the codec table-property mapping.
 */
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "icemaint/manifest.h"
#include "manifest/manifest_internal.h"
#include "util/util.h"

int icm_avro_codec_from_property(icm_avro_codec *out, const char *value)
{
    static const struct {
        const char *name;
        icm_avro_codec codec;
    } names[] = {{"gzip", ICM_AVRO_CODEC_DEFLATE},     {"deflate", ICM_AVRO_CODEC_DEFLATE},
                 {"snappy", ICM_AVRO_CODEC_SNAPPY},    {"zstd", ICM_AVRO_CODEC_ZSTD},
                 {"zstandard", ICM_AVRO_CODEC_ZSTD},   {"uncompressed", ICM_AVRO_CODEC_NULL},
                 {"none", ICM_AVRO_CODEC_NULL},        {"null", ICM_AVRO_CODEC_NULL}};
    if (value == NULL) {
        *out = ICM_AVRO_CODEC_DEFLATE; /* Iceberg's default for write.avro.compression-codec */
        return 0;
    }
    for (size_t i = 0; i < ICM__ARRAY_LEN(names); i++) {
        if (strcasecmp(value, names[i].name) == 0) {
            *out = names[i].codec;
            return 0;
        }
    }
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, NULL,
                          "unsupported write.avro.compression-codec '%s' (use gzip, snappy, "
                          "zstd or uncompressed)",
                          value);
}

int icm__manifest_opts_version_refused(const char *what, unsigned version, unsigned known)
{
    return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL,
                          "%s: options version %u is not one this library knows (%u)", what,
                          version, known);
}

int icm_manifest_list_read(icm_fileio *io, const char *location,
                           const icm_manifest_list_read_options *opts, icm_manifest_file_cb cb,
                           void *payload)
{
    int vrc = ICM__MANIFEST_OPTS_CHECK("icm_manifest_list_read", opts,
                                       ICM_MANIFEST_LIST_READ_OPTIONS_VERSION);
    if (vrc < 0)
        return vrc;
    char *data = NULL;
    size_t len = 0;
    int rc = icm_fileio_read(&data, &len, io, location);
    if (rc < 0)
        return rc;
    rc = icm__manifest_list_read_data(data, len, NULL, location, opts, NULL, NULL, cb, payload);
    icm_free(data);
    return rc;
}

int icm__manifest_list_read_data(const void *data, size_t len, const icm__avro_inflated *inflated,
                                 const char *location, const icm_manifest_list_read_options *opts,
                                 icm__avro_schema_cache *schemas, const icm__list_row_filter *f,
                                 icm_manifest_file_cb cb, void *payload)
{
    icm_manifest_list_reader *r = NULL;
    int rc = icm__manifest_list_reader_open_cached(&r, data, len, location, opts, schemas);
    if (rc == 0 && inflated != NULL)
        icm__manifest_list_reader_use_inflated(r, inflated);
    while (rc == 0) {
        const icm_manifest_file *mf;
        if (f == NULL) {
            rc = icm_manifest_list_reader_next(&mf, r);
            if (rc == 0)
                rc = cb(mf, payload);
            continue;
        }
        rc = icm__manifest_list_reader_next_filtered(r, f, &mf);
        if (rc == 0)
            rc = cb(mf, payload);
        if (rc == 0 && f->row_end != NULL) {
            const uint8_t *row;
            size_t n;
            const void *schema;
            icm__manifest_list_reader_last_row(r, &row, &n, &schema);
            f->row_end(row, n, schema, f->payload);
        }
    }
    if (rc == ICM_ITEROVER)
        rc = 0;
    icm_manifest_list_reader_free(r);
    return rc;
}

/* Read a manifest, delivering entries to `cb` or, when view_cb is given, views to it. `data`
 * (taken, freed here) holds its bytes already when not NULL (read ahead); else they are read. */
/*
 * A manifest read whole against its manifest list row: the length the row records, and the
 * entries by status the row counts (spec, manifest_file 501 and 504-506: "number of entries in
 * the manifest that have status ADDED/EXISTING/DELETED"). An Avro file cut at a block boundary
 * is valid Avro with fewer entries, and one entry's status is one byte: read as it is, either
 * is a smaller table, and a keep set built from it lets live files go. So a manifest that
 * disagrees with its row is unreadable (ICM_EINVALID), never a smaller table.
 * The counts decide where the row has all three (v2 requires them): a manifest whose paths a
 * tool rewrote keeps its entries but not its length, and engines read such tables (the
 * fixtures hold one, BigQuery's, edited by the duckdb team). The length decides where a count
 * is missing (v1 lists may omit them; an embedded v1 manifest has neither, and is not checked).
 */
int icm__manifest_check_list_row(const icm_manifest_file *mf, size_t len, const size_t n[3])
{
    bool counted = mf->has_added_files_count && mf->has_existing_files_count &&
                   mf->has_deleted_files_count && mf->added_files_count >= 0 &&
                   mf->existing_files_count >= 0 && mf->deleted_files_count >= 0;
    if (!counted && mf->manifest_length > 0 && (uint64_t)mf->manifest_length != (uint64_t)len)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, mf->manifest_path,
                              "the manifest is %zu bytes, but its manifest list records "
                              "manifest_length %" PRId64 " (cut short or replaced): its "
                              "entries cannot be trusted",
                              len, mf->manifest_length);
    if (!counted || ((uint64_t)mf->added_files_count == n[ICM_ENTRY_ADDED] &&
                     (uint64_t)mf->existing_files_count == n[ICM_ENTRY_EXISTING] &&
                     (uint64_t)mf->deleted_files_count == n[ICM_ENTRY_DELETED]))
        return 0;
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, mf->manifest_path,
                          "the manifest holds %zu added, %zu existing and %zu deleted "
                          "entries, but its manifest list counts %" PRId32 ", %" PRId32
                          " and %" PRId32 " (cut short or altered): its entries cannot be "
                          "trusted",
                          n[ICM_ENTRY_ADDED], n[ICM_ENTRY_EXISTING], n[ICM_ENTRY_DELETED],
                          mf->added_files_count, mf->existing_files_count,
                          mf->deleted_files_count);
}

static int read_manifest(icm_fileio *io, char *data, size_t len, const icm_manifest_file *mf,
                         const icm_manifest_read_options *opts, icm__avro_schema_cache *schemas,
                         icm_manifest_entry_cb cb, icm__entry_view_cb view_cb, void *payload,
                         size_t *len_out)
{
    int rc = ICM__MANIFEST_OPTS_CHECK("icm_manifest_read", opts,
                                      ICM_MANIFEST_READ_OPTIONS_VERSION);
    if (rc < 0) {
        icm_free(data);
        return rc;
    }
    if (mf == NULL || mf->manifest_path == NULL) {
        icm_free(data);
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "manifest list entry without a manifest_path");
    }
    if (data == NULL) {
        rc = icm_fileio_read(&data, &len, io, mf->manifest_path);
        if (rc < 0)
            return rc;
    }
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    if (opts != NULL)
        o = *opts;
    o.manifest = mf;
    icm_manifest_reader *r = NULL;
    rc = icm__manifest_reader_open_cached(&r, data, len, mf->manifest_path, &o, schemas);
    if (len_out != NULL)
        *len_out = len;
    while (rc == 0) {
        if (view_cb != NULL) {
            icm__entry_view v;
            rc = icm__manifest_reader_next_view(r, &v);
            if (rc == 0)
                rc = view_cb(&v, payload);
        } else {
            const icm_manifest_entry *e;
            rc = icm_manifest_reader_next(&e, r);
            if (rc == 0)
                rc = cb(e, payload);
        }
    }
    if (rc == ICM_ITEROVER)
        rc = 0;
    icm_manifest_reader_free(r);
    icm_free(data);
    return rc;
}

int icm_manifest_read(icm_fileio *io, const icm_manifest_file *mf,
                      const icm_manifest_read_options *opts, icm_manifest_entry_cb cb,
                      void *payload)
{
    return read_manifest(io, NULL, 0, mf, opts, NULL, cb, NULL, payload, NULL);
}

/* A v1 snapshot's inline manifests behave like a v1 manifest list entry: added by this snapshot,
 * sequence number 0 (spec Appendix E), no row ids. */
static void embedded_entry(icm_manifest_file *mf, const char *manifest_path, int64_t snapshot_id)
{
    memset(mf, 0, sizeof *mf);
    mf->struct_size = sizeof *mf;
    mf->manifest_path = manifest_path;
    mf->manifest_path_len = manifest_path != NULL ? strlen(manifest_path) : 0;
    mf->has_added_snapshot_id = true;
    mf->added_snapshot_id = snapshot_id;
    mf->manifest_length = -1;
}

int icm_manifest_read_v1_embedded(icm_fileio *io, const char *manifest_path,
                                  int64_t snapshot_id, const icm_manifest_read_options *opts,
                                  icm_manifest_entry_cb cb, void *payload)
{
    icm_manifest_file mf;
    embedded_entry(&mf, manifest_path, snapshot_id);
    return read_manifest(io, NULL, 0, &mf, opts, NULL, cb, NULL, payload, NULL);
}

int icm__manifest_read_views(icm_fileio *io, char *data, size_t len, const icm_manifest_file *mf,
                             bool embedded_v1, int64_t snapshot_id,
                             const icm_manifest_read_options *opts,
                             icm__avro_schema_cache *schemas, icm__entry_view_cb cb,
                             void *payload, size_t *len_out)
{
    icm_manifest_file embedded;
    if (embedded_v1 && mf != NULL) {
        embedded_entry(&embedded, mf->manifest_path, snapshot_id);
        mf = &embedded;
    }
    return read_manifest(io, data, len, mf, opts, schemas, NULL, cb, payload, len_out);
}
