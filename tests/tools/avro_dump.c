/*
 * tests/tools/avro_dump.c: prints what icemaint's manifest readers decode from Avro files, one
 * JSON object per file, so tests/py/test_avro_fastavro.py can compare it with fastavro.
 *
 * Usage: avro_dump FILE...   A file is read as a manifest list when its schema has
 * manifest_path (500), else as a manifest. Values are as written (no inheritance context).
 * Exit status 1 if any file failed to decode (its object then has "error" and "message").
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "icemaint/manifest.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = (buf && n > 0) ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    return buf;
}

static json_t *opt_int(bool has, int64_t v)
{
    return has ? json_integer(v) : json_null();
}

static json_t *error_obj(const char *path, int rc)
{
    const icm_error *e = icm_error_last();
    return json_pack("{s:s, s:s, s:s, s:I}", "file", path, "error", icm_error_code_name(rc),
                     "message", e->message, "offset", (json_int_t)e->offset);
}

static json_t *dump_list(const char *path, icm_manifest_list_reader *r)
{
    json_t *rows = json_array();
    int rc;
    const icm_manifest_file *m;
    while ((rc = icm_manifest_list_reader_next(&m, r)) == 0) {
        json_array_append_new(rows, json_pack(
            "{s:s, s:I, s:i, s:i, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b}",
            "manifest_path", m->manifest_path, "manifest_length", (json_int_t)m->manifest_length,
            "partition_spec_id", (int)m->partition_spec_id, "content", (int)m->content,
            "sequence_number", (json_int_t)m->sequence_number, "min_sequence_number",
            (json_int_t)m->min_sequence_number, "added_snapshot_id",
            opt_int(m->has_added_snapshot_id, m->added_snapshot_id), "added_files_count",
            opt_int(m->has_added_files_count, m->added_files_count), "existing_files_count",
            opt_int(m->has_existing_files_count, m->existing_files_count),
            "deleted_files_count", opt_int(m->has_deleted_files_count, m->deleted_files_count),
            "added_rows_count", opt_int(m->has_added_rows_count, m->added_rows_count),
            "existing_rows_count", opt_int(m->has_existing_rows_count, m->existing_rows_count),
            "deleted_rows_count", opt_int(m->has_deleted_rows_count, m->deleted_rows_count),
            "first_row_id", opt_int(m->has_first_row_id, m->first_row_id), "has_partitions",
            m->partitions.data != NULL, "has_key_metadata", m->key_metadata.data != NULL));
    }
    if (rc != ICM_ITEROVER) {
        json_decref(rows);
        return error_obj(path, rc);
    }
    return json_pack("{s:s, s:s, s:i, s:o}", "file", path, "kind", "manifest_list",
                     "format_version", icm_manifest_list_reader_format_version(r), "entries",
                     rows);
}

static json_t *dump_manifest(const char *path, icm_manifest_reader *r)
{
    json_t *rows = json_array();
    int rc;
    const icm_manifest_entry *e;
    while ((rc = icm_manifest_reader_next(&e, r)) == 0) {
        const icm_data_file *d = &e->data_file;
        json_array_append_new(rows, json_pack(
            "{s:i, s:o, s:o, s:o, s:i, s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:i}",
            "status", (int)e->status, "snapshot_id", opt_int(e->has_snapshot_id, e->snapshot_id),
            "sequence_number", opt_int(e->has_sequence_number, e->sequence_number),
            "file_sequence_number",
            opt_int(e->has_file_sequence_number, e->file_sequence_number), "content",
            (int)d->content, "file_path", d->file_path, "file_format",
            d->file_format_name ? d->file_format_name : "", "record_count",
            (json_int_t)d->record_count, "file_size_in_bytes",
            (json_int_t)d->file_size_in_bytes, "referenced_data_file",
            d->referenced_data_file ? json_string(d->referenced_data_file) : json_null(),
            "content_offset", opt_int(d->has_content_offset, d->content_offset),
            "content_size_in_bytes",
            opt_int(d->has_content_size_in_bytes, d->content_size_in_bytes), "first_row_id",
            opt_int(d->has_first_row_id, d->first_row_id), "partition_len",
            (int)d->partition.len));
    }
    if (rc != ICM_ITEROVER) {
        json_decref(rows);
        return error_obj(path, rc);
    }
    return json_pack("{s:s, s:s, s:i, s:o}", "file", path, "kind", "manifest", "format_version",
                     icm_manifest_reader_format_version(r), "entries", rows);
}

static json_t *dump_file(const char *path)
{
    size_t len = 0;
    char *data = slurp(path, &len);
    if (data == NULL)
        return json_pack("{s:s, s:s, s:s}", "file", path, "error", "ICM_ENOTFOUND", "message",
                         "cannot read file");
    json_t *out;
    icm_manifest_list_reader *lr = NULL;
    int rc = icm_manifest_list_reader_open(&lr, data, len, path, NULL);
    if (rc == 0) {
        out = dump_list(path, lr);
        icm_manifest_list_reader_free(lr);
    } else {
        icm_manifest_reader *mr = NULL;
        rc = icm_manifest_reader_open(&mr, data, len, path, NULL);
        out = rc == 0 ? dump_manifest(path, mr) : error_obj(path, rc);
        icm_manifest_reader_free(mr);
    }
    free(data);
    return out;
}

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        json_t *o = dump_file(argv[i]);
        if (json_object_get(o, "error") != NULL)
            status = 1;
        char *s = json_dumps(o, JSON_COMPACT);
        puts(s);
        free(s);
        json_decref(o);
    }
    return status;
}
