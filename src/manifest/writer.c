/*
 * manifest/writer.c: writers for manifests and manifest lists (format v1-v3), on top of the Avro
 * container writer. Entries are encoded field by field in the order of our own schemas
 * (schemas.c); raw values captured by the reader (partition tuples, metrics, summaries) are
 * copied byte for byte. Also derives the partition tuple's Avro schema from a partition spec and
 * table schema for new manifests.
 *
 * Source: Iceberg spec "Manifests" (metadata keys, entry fields), "Manifest Lists" (metadata
 * keys, first row id assignment), "Partition Transforms" (result types), Appendix A (Avro types).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/manifest_internal.h"
#include "spec/metadata_internal.h"
#include "spec/schema.h"


static icm__avro_codec to_avro_codec(icm_avro_codec c)
{
    return (icm__avro_codec)c;
}

static int bad_opt(const char *what)
{
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL, "manifest writer: %s", what);
}

/* ---- partition schema derivation ---- */

static int decimal_bytes(int precision)
{
    /* Smallest n with 2^(8n-1) > 10^precision. */
    return (int)ceil((precision * log2(10.0) + 1.0) / 8.0);
}

/* Avro type JSON of an Iceberg primitive type (Appendix A); `text` is its spelling. */
static int avro_for_iceberg(icm__buf *b, const icm__prim *t, const char *text, int32_t field_id)
{
    switch (t->kind) {
    case ICM__TYPE_BOOLEAN:
    case ICM__TYPE_INT:
    case ICM__TYPE_LONG:
    case ICM__TYPE_FLOAT:
    case ICM__TYPE_DOUBLE:
    case ICM__TYPE_STRING:
        return icm__buf_printf(b, "\"%s\"", text);
    case ICM__TYPE_BINARY:
        return icm__buf_puts(b, "\"bytes\"");
    case ICM__TYPE_DATE:
        return icm__buf_puts(b, "{\"type\":\"int\",\"logicalType\":\"date\"}");
    case ICM__TYPE_TIME:
        return icm__buf_puts(b, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}");
    case ICM__TYPE_TIMESTAMP:
        return icm__buf_puts(b, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
                                "\"adjust-to-utc\":false}");
    case ICM__TYPE_TIMESTAMPTZ:
        return icm__buf_puts(b, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
                                "\"adjust-to-utc\":true}");
    case ICM__TYPE_TIMESTAMP_NS:
        return icm__buf_puts(b, "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\","
                                "\"adjust-to-utc\":false}");
    case ICM__TYPE_TIMESTAMPTZ_NS:
        return icm__buf_puts(b, "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\","
                                "\"adjust-to-utc\":true}");
    case ICM__TYPE_UUID:
        return icm__buf_printf(b, "{\"type\":\"fixed\",\"name\":\"uuid_fixed_%d\",\"size\":16,"
                                  "\"logicalType\":\"uuid\"}",
                               (int)field_id);
    case ICM__TYPE_FIXED:
        return icm__buf_printf(b, "{\"type\":\"fixed\",\"name\":\"fixed_%d\",\"size\":%d}",
                               (int)field_id, (int)t->length);
    case ICM__TYPE_DECIMAL:
        return icm__buf_printf(b, "{\"type\":\"fixed\",\"name\":\"decimal_%d\",\"size\":%d,"
                                  "\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
                               (int)field_id, decimal_bytes(t->precision), (int)t->precision,
                               (int)t->scale);
    default:
        break;
    }
    if (t->kind == ICM__TYPE_OTHER && strncmp(text, "decimal(", 8) == 0)
        return bad_opt("invalid decimal type in the table schema");
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, NULL,
                          "manifest writer: partition source type '%s' is not supported", text);
}

/* The table schema, parsed when a partition field first needs its source type (a spec of
 * bucket and date transforms never reads it). */
typedef struct lazy_schema {
    const char *json;
    icm__schema *parsed;
} lazy_schema;

static int schema_of(lazy_schema *ls, const icm__schema **out)
{
    if (ls->parsed == NULL) {
        int rc = icm__schema_parse_text(ls->json, strlen(ls->json), "table schema", &ls->parsed);
        if (rc == ICM_ENOMEM)
            return rc;
        if (rc < 0) {
            if (icm_error_last()->klass == ICM_ERRCLASS_JSON)
                return bad_opt("table schema is not valid JSON");
            return rc; /* the schema's own message: which field and what is wrong */
        }
    }
    *out = ls->parsed;
    return 0;
}

static int partition_field_type(icm__buf *b, lazy_schema *ls, json_t *pf, int32_t field_id)
{
    json_t *tr = json_object_get(pf, "transform");
    json_t *src = json_object_get(pf, "source-id");
    if (!json_is_string(tr) || !json_is_integer(src))
        return bad_opt("partition field without transform or source-id");
    const char *t = json_string_value(tr);
    if (strncmp(t, "bucket[", 7) == 0 || strcmp(t, "year") == 0 || strcmp(t, "month") == 0 ||
        strcmp(t, "hour") == 0)
        return icm__buf_puts(b, "\"int\"");
    if (strcmp(t, "day") == 0)
        return icm__buf_puts(b, "{\"type\":\"int\",\"logicalType\":\"date\"}");
    if (strcmp(t, "identity") != 0 && strncmp(t, "truncate[", 9) != 0 && strcmp(t, "void") != 0)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, NULL,
                              "manifest writer: unsupported partition transform '%s'", t);
    const icm__schema *schema = NULL;
    int rc = schema_of(ls, &schema);
    if (rc != 0)
        return rc;
    json_int_t id = json_integer_value(src);
    const icm__schema_field *f =
        id >= INT32_MIN && id <= INT32_MAX ? icm__schema_find_struct_field(schema, (int32_t)id)
                                           : NULL;
    if (f == NULL || f->type->text == NULL)
        return bad_opt("partition source-id is not a primitive field of the schema");
    return avro_for_iceberg(b, &f->type->prim, f->type->text, field_id);
}

/* The Avro record schema of partition tuples (record r102, every field optional). */
static int derive_partition_schema(icm__buf *out, const char *schema_json, json_t *spec_fields)
{
    lazy_schema schema = {schema_json, NULL};
    int rc = 0;
    icm__buf_puts(out, "{\"type\":\"record\",\"name\":\"r102\",\"fields\":[");
    size_t i;
    json_t *pf;
    json_array_foreach(spec_fields, i, pf) {
        json_t *name = json_object_get(pf, "name");
        json_t *fid = json_object_get(pf, "field-id");
        /* v1 specs may omit ids: the reference implementation numbered them from 1000. */
        int32_t id = json_is_integer(fid) ? (int32_t)json_integer_value(fid) : 1000 + (int32_t)i;
        if (!json_is_string(name)) {
            rc = bad_opt("partition field without a name");
            break;
        }
        icm__buf_printf(out, "%s{\"name\":", i ? "," : "");
        rc = icm__json_write(out, name, false); /* quoted and escaped */
        if (rc < 0)
            break;
        icm__buf_puts(out, ",\"type\":[\"null\",");
        rc = partition_field_type(out, &schema, pf, id);
        if (rc < 0)
            break;
        icm__buf_printf(out, "],\"default\":null,\"field-id\":%d}", (int)id);
    }
    icm__buf_puts(out, "]}");
    icm__schema_free(schema.parsed);
    if (rc == 0 && out->oom)
        rc = ICM_ENOMEM;
    return rc;
}

/* ---- manifest writer ---- */

/* Raw values are re-checked against the schema we write, so a caller's bad bytes can never
 * produce a corrupt manifest: each must be exactly one value of the field's (non-null) type. */
typedef struct raw_check {
    icm__avro_schema *schema;
    uint32_t node[16];
} raw_check;

enum { RC_PARTITION, RC_COL_SIZES, RC_VALUE_COUNTS, RC_NULL_COUNTS, RC_NAN_COUNTS, RC_LOWER,
       RC_UPPER, RC_KEY_METADATA, RC_SPLIT_OFFSETS, RC_EQ_IDS, RC_COUNT };
static const int32_t RC_IDS[RC_COUNT] = {102, 108, 109, 110, 137, 125, 128, 131, 132, 135};

/* Resolve the node of each raw field in our own entry (or list) schema. */
static int raw_check_init(raw_check *rc_out, const char *schema_json, bool list)
{
    int rc = icm__avro_schema_parse(&rc_out->schema, schema_json, strlen(schema_json),
                                    "manifest writer schema");
    if (rc < 0)
        return rc;
    const icm__avro_schema *s = rc_out->schema;
    uint32_t rec = s->root;
    int nb;
    if (!list) {
        int df = icm__avro_record_find(s, rec, 2, "data_file");
        rec = s->fields[s->nodes[rec].first + (uint32_t)df].type;
    }
    for (int k = 0; k < (list ? 2 : RC_COUNT); k++) {
        int32_t id = list ? (k == 0 ? 507 : 519) : RC_IDS[k];
        int i = icm__avro_record_find(s, rec, id, NULL);
        rc_out->node[k] = i < 0 ? UINT32_MAX
                                : icm__avro_unwrap_optional(
                                      s, s->fields[s->nodes[rec].first + (uint32_t)i].type, &nb);
    }
    return 0;
}

static int check_raw(const raw_check *c, int k, icm_raw raw, const char *what)
{
    if (raw.data == NULL || c->node[k] == UINT32_MAX)
        return 0;
    icm__avro_cur cur = {raw.data, raw.data + raw.len, raw.data, 0, true, "manifest writer"};
    int rc = icm__avro_skip(c->schema, c->node[k], &cur);
    if (rc == 0 && cur.p != cur.end)
        rc = ICM_EINVALID;
    if (rc < 0)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "manifest writer: %s bytes do not encode one value of the "
                              "written schema's type",
                              what);
    return 0;
}

struct icm_manifest_writer {
    icm__avro_writer *avro;
    raw_check check;
    int version;
    icm_manifest_content content;
    int32_t spec_id;
    icm_manifest_file summary;
    bool have_min_seq;
};

static int write_opt_raw(icm__buf *b, icm_raw raw)
{
    if (raw.data == NULL)
        return icm__avro_put_long(b, 0);
    icm__avro_put_long(b, 1);
    return icm__buf_put(b, raw.data, raw.len);
}

static void write_opt_long(icm__buf *b, bool has, int64_t v)
{
    icm__avro_put_long(b, has ? 1 : 0);
    if (has)
        icm__avro_put_long(b, v);
}

static void write_opt_str(icm__buf *b, const char *s)
{
    icm__avro_put_long(b, s ? 1 : 0);
    if (s)
        icm__avro_put_str(b, s);
}

static int check_version(int v)
{
    if (v < 1 || v > 3)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, NULL,
                              "manifest writer: unsupported format version %d", v);
    return 0;
}

/* Create the container with the entry schema and the spec's header keys. */
static int start_manifest(icm_manifest_writer **out, const icm_manifest_writer_options *o,
                          int version, const char *partition_avro, const char *schema_json,
                          const char *schema_id, const char *spec_fields_json, int32_t spec_id,
                          icm_manifest_content content)
{
    icm__buf sj = ICM__BUF_INIT;
    icm_manifest_writer *w = icm__calloc(1, sizeof *w);
    int rc = w ? icm__manifest_entry_schema_json(&sj, version, partition_avro) : ICM_ENOMEM;
    if (rc == 0)
        rc = icm__avro_writer_new(&w->avro, sj.data, to_avro_codec(o->codec),
                                  o->compression_level, o->block_bytes);
    if (rc == 0)
        rc = raw_check_init(&w->check, sj.data, false);
    if (rc == ICM_EINVALID) {
        /* Copy first: the last error's message lives in the buffer being rewritten. */
        char why[256];
        snprintf(why, sizeof why, "%s", icm_error_last()->message);
        icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                       "manifest writer: invalid partition Avro schema: %s", why);
    }
    char num[32];
    if (rc == 0)
        rc = icm__avro_writer_meta(w->avro, "schema", schema_json);
    if (rc == 0 && schema_id != NULL)
        rc = icm__avro_writer_meta(w->avro, "schema-id", schema_id);
    if (rc == 0)
        rc = icm__avro_writer_meta(w->avro, "partition-spec", spec_fields_json);
    snprintf(num, sizeof num, "%d", (int)spec_id);
    if (rc == 0)
        rc = icm__avro_writer_meta(w->avro, "partition-spec-id", num);
    snprintf(num, sizeof num, "%d", version);
    if (rc == 0)
        rc = icm__avro_writer_meta(w->avro, "format-version", num);
    if (rc == 0 && version >= 2)
        rc = icm__avro_writer_meta(w->avro, "content",
                                   content == ICM_MANIFEST_CONTENT_DELETES ? "deletes" : "data");
    icm__buf_dispose(&sj);
    if (rc < 0) {
        icm_manifest_writer_free(w);
        return rc;
    }
    w->version = version;
    w->content = content;
    w->spec_id = spec_id;
    w->summary.content = content;
    w->summary.partition_spec_id = spec_id;
    w->summary.min_sequence_number = -1;
    *out = w;
    return 0;
}

int icm_manifest_writer_new(icm_manifest_writer **out, const icm_manifest_writer_options *opts)
{
    *out = NULL;
    int vrc = ICM__MANIFEST_OPTS_CHECK("icm_manifest_writer_new", opts,
                                       ICM_MANIFEST_WRITER_OPTIONS_VERSION);
    if (vrc < 0)
        return vrc;
    if (opts == NULL || opts->schema_json == NULL || opts->partition_spec_json == NULL)
        return bad_opt("schema_json and partition_spec_json are required");
    int rc = check_version(opts->format_version);
    if (rc < 0)
        return rc;
    json_t *spec = NULL;
    rc = icm__json_parse(opts->partition_spec_json, strlen(opts->partition_spec_json), NULL, &spec);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc < 0)
        return bad_opt("partition spec is not valid JSON");
    json_t *fields = json_is_array(spec) ? spec : json_object_get(spec, "fields");
    if (!json_is_array(fields)) {
        json_decref(spec);
        return bad_opt("partition spec has no fields array");
    }
    icm__buf fields_buf = ICM__BUF_INIT;
    rc = icm__json_write(&fields_buf, fields, false);
    const char *fields_json = fields_buf.data;
    icm__buf part = ICM__BUF_INIT;
    if (rc == 0 && opts->partition_avro_schema_json != NULL)
        rc = icm__buf_puts(&part, opts->partition_avro_schema_json);
    else if (rc == 0)
        rc = derive_partition_schema(&part, opts->schema_json, fields);
    char sid[32];
    snprintf(sid, sizeof sid, "%d", (int)opts->schema_id);
    if (rc == 0)
        rc = start_manifest(out, opts, opts->format_version, part.data, opts->schema_json,
                            opts->schema_id >= 0 ? sid : NULL, fields_json,
                            opts->partition_spec_id, opts->content);
    icm__buf_dispose(&fields_buf);
    json_decref(spec);
    icm__buf_dispose(&part);
    return rc;
}

int icm_manifest_writer_new_like(icm_manifest_writer **out, icm_manifest_reader *src,
                                 const icm_manifest_writer_options *opts)
{
    *out = NULL;
    int vrc = ICM__MANIFEST_OPTS_CHECK("icm_manifest_writer_new_like", opts,
                                       ICM_MANIFEST_WRITER_OPTIONS_VERSION);
    if (vrc < 0)
        return vrc;
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.codec = ICM_AVRO_CODEC_DEFLATE;
    o.compression_level = -1;
    if (opts != NULL)
        o = *opts;
    int version = o.format_version ? o.format_version : icm_manifest_reader_format_version(src);
    int rc = check_version(version);
    if (rc < 0)
        return rc;
    uint32_t pnode;
    const icm__avro_schema *s = icm__manifest_reader_schema(src, &pnode);
    if (s == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "source manifest has no partition field to copy");
    icm__buf part = ICM__BUF_INIT;
    rc = icm__avro_schema_to_json(s, pnode, &part);
    const char *schema = NULL, *spec = NULL, *schema_id = NULL;
    if (rc == 0)
        rc = icm__manifest_reader_header(src, "schema", &schema);
    if (rc == 0)
        rc = icm__manifest_reader_header(src, "partition-spec", &spec);
    if (rc == 0)
        rc = icm__manifest_reader_header(src, "schema-id", &schema_id);
    if (rc == 0)
        rc = start_manifest(out, &o, version, part.data, schema ? schema : "{}", schema_id,
                            spec ? spec : "[]", icm_manifest_reader_partition_spec_id(src),
                            icm_manifest_reader_content(src));
    icm__buf_dispose(&part);
    return rc;
}

static void count_entry(icm_manifest_writer *w, const icm_manifest_entry *e)
{
    icm_manifest_file *s = &w->summary;
    int64_t rows = e->data_file.record_count;
    switch (e->status) {
    case ICM_ENTRY_ADDED:
        s->added_files_count++;
        s->added_rows_count += rows;
        break;
    case ICM_ENTRY_EXISTING:
        s->existing_files_count++;
        s->existing_rows_count += rows;
        break;
    case ICM_ENTRY_DELETED:
        s->deleted_files_count++;
        s->deleted_rows_count += rows;
        break;
    }
    if (e->status != ICM_ENTRY_DELETED && e->has_sequence_number &&
        (!w->have_min_seq || e->sequence_number < s->min_sequence_number)) {
        s->min_sequence_number = e->sequence_number;
        w->have_min_seq = true;
    }
}

static int check_entry(const icm_manifest_writer *w, const icm_manifest_entry *e)
{
    const icm_data_file *d = &e->data_file;
    if (d->file_path == NULL)
        return bad_opt("entry without file_path");
    if (!icm__utf8_valid(d->file_path, strlen(d->file_path)))
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, d->file_path,
                              "manifest writer: file_path is not valid UTF-8 (an Avro string)");
    if (e->status < ICM_ENTRY_EXISTING || e->status > ICM_ENTRY_DELETED)
        return bad_opt("entry status is not EXISTING, ADDED or DELETED");
    if (d->content < ICM_FILE_CONTENT_DATA || d->content > ICM_FILE_CONTENT_EQUALITY_DELETES)
        return bad_opt("data_file content out of range");
    if (w->version == 1 && !e->has_snapshot_id)
        return bad_opt("v1 manifest entries need a snapshot_id");
    if (w->version == 1 && d->content != ICM_FILE_CONTENT_DATA)
        return bad_opt("v1 manifests hold data files only");
    /* Copying an equality delete without its ids would change which rows it deletes. */
    if (d->content == ICM_FILE_CONTENT_EQUALITY_DELETES && d->equality_ids.data == NULL)
        return bad_opt("equality delete file without equality_ids");
    if (w->version < 3 && (d->has_content_offset || d->has_content_size_in_bytes))
        return bad_opt("content_offset/content_size_in_bytes need format version 3");
    const raw_check *c = &w->check;
    icm_raw part = d->partition;
    if (part.data == NULL)
        part.data = (const uint8_t *)""; /* absent = the empty tuple of unpartitioned specs */
    int rc = check_raw(c, RC_PARTITION, part, "partition");
    if (rc == 0)
        rc = check_raw(c, RC_COL_SIZES, d->column_sizes, "column_sizes");
    if (rc == 0)
        rc = check_raw(c, RC_VALUE_COUNTS, d->value_counts, "value_counts");
    if (rc == 0)
        rc = check_raw(c, RC_NULL_COUNTS, d->null_value_counts, "null_value_counts");
    if (rc == 0)
        rc = check_raw(c, RC_NAN_COUNTS, d->nan_value_counts, "nan_value_counts");
    if (rc == 0)
        rc = check_raw(c, RC_LOWER, d->lower_bounds, "lower_bounds");
    if (rc == 0)
        rc = check_raw(c, RC_UPPER, d->upper_bounds, "upper_bounds");
    if (rc == 0)
        rc = check_raw(c, RC_KEY_METADATA, d->key_metadata, "key_metadata");
    if (rc == 0)
        rc = check_raw(c, RC_SPLIT_OFFSETS, d->split_offsets, "split_offsets");
    if (rc == 0 && w->version >= 2)
        rc = check_raw(c, RC_EQ_IDS, d->equality_ids, "equality_ids");
    return rc;
}

static const char *format_name(const icm_data_file *d)
{
    if (d->file_format_name != NULL)
        return d->file_format_name;
    switch (d->file_format) {
    case ICM_FILE_FORMAT_AVRO: return "AVRO";
    case ICM_FILE_FORMAT_ORC: return "ORC";
    case ICM_FILE_FORMAT_PARQUET: return "PARQUET";
    case ICM_FILE_FORMAT_PUFFIN: return "PUFFIN";
    default: return "PARQUET";
    }
}

int icm_manifest_writer_add(icm_manifest_writer *w, const icm_manifest_entry *e)
{
    int rc = check_entry(w, e);
    if (rc < 0)
        return rc;
    const icm_data_file *d = &e->data_file;
    icm__buf *b = icm__avro_writer_obj(w->avro);
    icm__avro_put_long(b, e->status);
    if (w->version == 1) {
        icm__avro_put_long(b, e->snapshot_id);
    } else {
        write_opt_long(b, e->has_snapshot_id, e->snapshot_id);
        write_opt_long(b, e->has_sequence_number, e->sequence_number);
        write_opt_long(b, e->has_file_sequence_number, e->file_sequence_number);
        icm__avro_put_long(b, d->content);
    }
    icm__avro_put_str(b, d->file_path);
    icm__avro_put_str(b, format_name(d));
    if (d->partition.len)
        icm__buf_put(b, d->partition.data, d->partition.len);
    icm__avro_put_long(b, d->record_count);
    icm__avro_put_long(b, d->file_size_in_bytes);
    if (w->version == 1)
        icm__avro_put_long(b, (int64_t)64 << 20); /* block_size_in_bytes: deprecated default */
    write_opt_raw(b, d->column_sizes);
    write_opt_raw(b, d->value_counts);
    write_opt_raw(b, d->null_value_counts);
    write_opt_raw(b, d->nan_value_counts);
    write_opt_raw(b, d->lower_bounds);
    write_opt_raw(b, d->upper_bounds);
    write_opt_raw(b, d->key_metadata);
    write_opt_raw(b, d->split_offsets);
    if (w->version >= 2)
        write_opt_raw(b, d->equality_ids);
    write_opt_long(b, d->has_sort_order_id, d->sort_order_id);
    if (w->version >= 3)
        write_opt_long(b, d->has_first_row_id, d->first_row_id);
    if (w->version >= 2)
        write_opt_str(b, d->referenced_data_file);
    if (w->version >= 3) {
        write_opt_long(b, d->has_content_offset, d->content_offset);
        write_opt_long(b, d->has_content_size_in_bytes, d->content_size_in_bytes);
    }
    if (b->oom)
        return ICM_ENOMEM;
    rc = icm__avro_writer_end_obj(w->avro);
    if (rc == 0)
        count_entry(w, e);
    return rc;
}

/* Copy the fields of `src` (a whole one) that fit the caller's `dst` (docs/API.md rule 3). */
static void summary_copy_out(icm_manifest_file *dst, const icm_manifest_file *src)
{
#define COPY_IF_FITS(field)                                  \
    if (ICM_STRUCT_HAS(dst, icm_manifest_file, field))       \
        dst->field = src->field;
    COPY_IF_FITS(manifest_path)
    COPY_IF_FITS(manifest_path_len)
    COPY_IF_FITS(manifest_length)
    COPY_IF_FITS(partition_spec_id)
    COPY_IF_FITS(content)
    COPY_IF_FITS(sequence_number)
    COPY_IF_FITS(min_sequence_number)
    COPY_IF_FITS(has_added_snapshot_id)
    COPY_IF_FITS(added_snapshot_id)
    COPY_IF_FITS(has_added_files_count)
    COPY_IF_FITS(has_existing_files_count)
    COPY_IF_FITS(has_deleted_files_count)
    COPY_IF_FITS(added_files_count)
    COPY_IF_FITS(existing_files_count)
    COPY_IF_FITS(deleted_files_count)
    COPY_IF_FITS(has_added_rows_count)
    COPY_IF_FITS(has_existing_rows_count)
    COPY_IF_FITS(has_deleted_rows_count)
    COPY_IF_FITS(added_rows_count)
    COPY_IF_FITS(existing_rows_count)
    COPY_IF_FITS(deleted_rows_count)
    COPY_IF_FITS(has_first_row_id)
    COPY_IF_FITS(first_row_id)
    COPY_IF_FITS(partitions)
    COPY_IF_FITS(key_metadata)
#undef COPY_IF_FITS
    /* A field appended to icm_manifest_file must be copied above too. */
    _Static_assert(offsetof(icm_manifest_file, key_metadata) + sizeof(icm_raw) ==
                       sizeof(icm_manifest_file),
                   "summary_copy_out copies every field of icm_manifest_file");
}

int icm_manifest_writer_finish(char **out, size_t *out_len, icm_manifest_file *summary,
                               icm_manifest_writer *w)
{
    if (summary != NULL) {
        int rc = icm__struct_size_check(ICM_ERRCLASS_SPEC, NULL, "icm_manifest_file",
                                        summary->struct_size, ICM_MANIFEST_FILE_SIZE_MIN,
                                        sizeof(icm_manifest_file), "ICM_MANIFEST_FILE_INIT");
        if (rc < 0)
            return rc;
    }
    int rc = icm__avro_writer_finish(w->avro, out, out_len);
    if (rc < 0)
        return rc;
    if (summary != NULL) {
        icm_manifest_file s = w->summary;
        s.manifest_length = (int64_t)*out_len;
        s.has_added_files_count = s.has_existing_files_count = s.has_deleted_files_count = true;
        s.has_added_rows_count = s.has_existing_rows_count = s.has_deleted_rows_count = true;
        s.sequence_number = -1;
        summary_copy_out(summary, &s);
    }
    return 0;
}

void icm_manifest_writer_free(icm_manifest_writer *w)
{
    if (w == NULL)
        return;
    icm__avro_schema_free(w->check.schema);
    icm__avro_writer_free(w->avro);
    icm__free(w);
}

/* ---- manifest list writer ---- */

struct icm_manifest_list_writer {
    icm__avro_writer *avro;
    raw_check check;
    int version;
    int64_t sequence_number;
    int64_t next_row_id;
};

int icm_manifest_list_writer_new(icm_manifest_list_writer **out,
                                 const icm_manifest_list_writer_options *o)
{
    *out = NULL;
    int vrc = ICM__MANIFEST_OPTS_CHECK("icm_manifest_list_writer_new", o,
                                       ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION);
    if (vrc < 0)
        return vrc;
    if (o == NULL)
        return bad_opt("options are required");
    int rc = check_version(o->format_version);
    if (rc < 0)
        return rc;
    icm_manifest_list_writer *w = icm__calloc(1, sizeof *w);
    if (w == NULL)
        return ICM_ENOMEM;
    w->version = o->format_version;
    w->sequence_number = o->sequence_number;
    w->next_row_id = o->first_row_id;
    rc = icm__avro_writer_new(&w->avro, icm__manifest_list_schema_json(w->version),
                              to_avro_codec(o->codec), o->compression_level, o->block_bytes);
    if (rc == 0)
        rc = raw_check_init(&w->check, icm__manifest_list_schema_json(w->version), true);
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)o->snapshot_id);
    if (rc == 0)
        rc = icm__avro_writer_meta(w->avro, "snapshot-id", num);
    /* The reference implementation writes the string "null" for a missing parent. */
    if (o->has_parent_snapshot_id)
        snprintf(num, sizeof num, "%lld", (long long)o->parent_snapshot_id);
    else
        snprintf(num, sizeof num, "null");
    if (rc == 0)
        rc = icm__avro_writer_meta(w->avro, "parent-snapshot-id", num);
    snprintf(num, sizeof num, "%lld", (long long)o->sequence_number);
    if (rc == 0 && w->version >= 2)
        rc = icm__avro_writer_meta(w->avro, "sequence-number", num);
    snprintf(num, sizeof num, "%lld", (long long)o->first_row_id);
    if (rc == 0 && w->version >= 3)
        rc = icm__avro_writer_meta(w->avro, "first-row-id", num);
    snprintf(num, sizeof num, "%d", w->version);
    if (rc == 0)
        rc = icm__avro_writer_meta(w->avro, "format-version", num);
    if (rc < 0) {
        icm_manifest_list_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

static int64_t count_or_zero(bool has, int64_t v)
{
    return has && v >= 0 ? v : 0;
}

/* v2+ lists require every count; a null count means "assume non-zero" to readers, so writing 0
 * for an unknown count could make engines skip a manifest: refuse instead. */
static bool has_all_counts(const icm_manifest_file *mf)
{
    return mf->has_added_files_count && mf->has_existing_files_count &&
           mf->has_deleted_files_count && mf->has_added_rows_count &&
           mf->has_existing_rows_count && mf->has_deleted_rows_count &&
           mf->added_files_count >= 0 && mf->existing_files_count >= 0 &&
           mf->deleted_files_count >= 0 && mf->added_rows_count >= 0 &&
           mf->existing_rows_count >= 0 && mf->deleted_rows_count >= 0;
}

int icm_manifest_list_writer_add(icm_manifest_list_writer *w, const icm_manifest_file *mf)
{
    if (mf->manifest_path == NULL)
        return bad_opt("manifest list entry without manifest_path");
    if (w->version >= 2 && !mf->has_added_snapshot_id)
        return bad_opt("v2+ manifest list entries need added_snapshot_id");
    if (w->version >= 2 && !has_all_counts(mf))
        return bad_opt("v2+ manifest list entries need all file and row counts (read the "
                       "manifest to count them)");
    int rc = check_raw(&w->check, 0, mf->partitions, "partitions");
    if (rc == 0)
        rc = check_raw(&w->check, 1, mf->key_metadata, "key_metadata");
    if (rc < 0)
        return rc;
    icm__buf *b = icm__avro_writer_obj(w->avro);
    icm__avro_put_str(b, mf->manifest_path);
    icm__avro_put_long(b, mf->manifest_length);
    icm__avro_put_long(b, mf->partition_spec_id);
    if (w->version == 1) {
        write_opt_long(b, mf->has_added_snapshot_id, mf->added_snapshot_id);
        write_opt_long(b, mf->has_added_files_count, mf->added_files_count);
        write_opt_long(b, mf->has_existing_files_count, mf->existing_files_count);
        write_opt_long(b, mf->has_deleted_files_count, mf->deleted_files_count);
        write_opt_raw(b, mf->partitions);
        write_opt_long(b, mf->has_added_rows_count, mf->added_rows_count);
        write_opt_long(b, mf->has_existing_rows_count, mf->existing_rows_count);
        write_opt_long(b, mf->has_deleted_rows_count, mf->deleted_rows_count);
        write_opt_raw(b, mf->key_metadata);
    } else {
        int64_t seq = mf->sequence_number < 0 ? w->sequence_number : mf->sequence_number;
        int64_t min = mf->min_sequence_number < 0 ? w->sequence_number
                                                  : mf->min_sequence_number;
        icm__avro_put_long(b, mf->content);
        icm__avro_put_long(b, seq);
        icm__avro_put_long(b, min);
        icm__avro_put_long(b, mf->added_snapshot_id);
        icm__avro_put_long(b, mf->added_files_count);
        icm__avro_put_long(b, mf->existing_files_count);
        icm__avro_put_long(b, mf->deleted_files_count);
        icm__avro_put_long(b, mf->added_rows_count);
        icm__avro_put_long(b, mf->existing_rows_count);
        icm__avro_put_long(b, mf->deleted_rows_count);
        write_opt_raw(b, mf->partitions);
        write_opt_raw(b, mf->key_metadata);
        if (w->version >= 3) {
            /* Spec "First Row ID Assignment": kept when present, assigned to data manifests
             * without one, and always null for delete manifests. */
            bool data = mf->content == ICM_MANIFEST_CONTENT_DATA;
            bool assign = data && !mf->has_first_row_id;
            int64_t frid = assign ? w->next_row_id : mf->first_row_id;
            write_opt_long(b, data, frid);
            if (assign)
                w->next_row_id += count_or_zero(mf->has_added_rows_count, mf->added_rows_count) +
                                  count_or_zero(mf->has_existing_rows_count,
                                                mf->existing_rows_count);
        }
    }
    if (b->oom)
        return ICM_ENOMEM;
    return icm__avro_writer_end_obj(w->avro);
}

int64_t icm_manifest_list_writer_next_row_id(const icm_manifest_list_writer *w)
{
    return w->next_row_id;
}

int icm_manifest_list_writer_finish(char **out, size_t *out_len, icm_manifest_list_writer *w)
{
    return icm__avro_writer_finish(w->avro, out, out_len);
}

void icm_manifest_list_writer_free(icm_manifest_list_writer *w)
{
    if (w == NULL)
        return;
    icm__avro_schema_free(w->check.schema);
    icm__avro_writer_free(w->avro);
    icm__free(w);
}
