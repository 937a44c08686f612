/*
 * manifest/schemas.c: the Avro schemas icemaint writes for manifest lists (`manifest_file`) and
 * manifests (`manifest_entry` / `data_file`), per format version, with the spec's field ids,
 * names and optionality. Record names follow the reference implementation (r2, r102, r508,
 * k117_v118, ...) so other readers see the same shapes as Java-written files.
 *
 * Source: Iceberg spec "Manifest Lists" and "Manifests" field tables (v1, v2, v3).
 */
#include "manifest/manifest_internal.h"

#define OPT(t) "[\"null\"," t "]"
#define FIELD(name, type, id) "{\"name\":\"" name "\",\"type\":" type ",\"field-id\":" #id "}"
#define OPT_FIELD(name, type, id)                                                             \
    "{\"name\":\"" name "\",\"type\":" OPT(type) ",\"default\":null,\"field-id\":" #id "}"

#define FIELD_SUMMARY                                                                         \
    "{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"r508\",\"fields\":["       \
    FIELD("contains_null", "\"boolean\"", 509) ","                                            \
    OPT_FIELD("contains_nan", "\"boolean\"", 518) ","                                         \
    OPT_FIELD("lower_bound", "\"bytes\"", 510) ","                                            \
    OPT_FIELD("upper_bound", "\"bytes\"", 511) "]},\"element-id\":508}"

static const char LIST_V1[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    FIELD("manifest_path", "\"string\"", 500) ","
    FIELD("manifest_length", "\"long\"", 501) ","
    FIELD("partition_spec_id", "\"int\"", 502) ","
    OPT_FIELD("added_snapshot_id", "\"long\"", 503) ","
    OPT_FIELD("added_data_files_count", "\"int\"", 504) ","
    OPT_FIELD("existing_data_files_count", "\"int\"", 505) ","
    OPT_FIELD("deleted_data_files_count", "\"int\"", 506) ","
    OPT_FIELD("partitions", FIELD_SUMMARY, 507) ","
    OPT_FIELD("added_rows_count", "\"long\"", 512) ","
    OPT_FIELD("existing_rows_count", "\"long\"", 513) ","
    OPT_FIELD("deleted_rows_count", "\"long\"", 514) ","
    OPT_FIELD("key_metadata", "\"bytes\"", 519) "]}";

#define LIST_V2_FIELDS                                                                        \
    FIELD("manifest_path", "\"string\"", 500) ","                                             \
    FIELD("manifest_length", "\"long\"", 501) ","                                             \
    FIELD("partition_spec_id", "\"int\"", 502) ","                                            \
    FIELD("content", "\"int\"", 517) ","                                                      \
    FIELD("sequence_number", "\"long\"", 515) ","                                             \
    FIELD("min_sequence_number", "\"long\"", 516) ","                                         \
    FIELD("added_snapshot_id", "\"long\"", 503) ","                                           \
    FIELD("added_files_count", "\"int\"", 504) ","                                            \
    FIELD("existing_files_count", "\"int\"", 505) ","                                         \
    FIELD("deleted_files_count", "\"int\"", 506) ","                                          \
    FIELD("added_rows_count", "\"long\"", 512) ","                                            \
    FIELD("existing_rows_count", "\"long\"", 513) ","                                         \
    FIELD("deleted_rows_count", "\"long\"", 514) ","                                          \
    OPT_FIELD("partitions", FIELD_SUMMARY, 507) ","                                           \
    OPT_FIELD("key_metadata", "\"bytes\"", 519)

static const char LIST_V2[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[" LIST_V2_FIELDS "]}";
static const char LIST_V3[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[" LIST_V2_FIELDS ","
    OPT_FIELD("first_row_id", "\"long\"", 520) "]}";

const char *icm__manifest_list_schema_json(int format_version)
{
    return format_version == 1 ? LIST_V1 : format_version == 2 ? LIST_V2 : LIST_V3;
}

/* Iceberg maps with int keys are Avro arrays of key/value records. */
#define KV_MAP(k, v, vtype)                                                                   \
    "{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k" #k "_v" #v              \
    "\",\"fields\":[" FIELD("key", "\"int\"", k) "," FIELD("value", vtype, v)                 \
    "]},\"logicalType\":\"map\"}"

#define METRICS                                                                               \
    OPT_FIELD("column_sizes", KV_MAP(117, 118, "\"long\""), 108) ","                         \
    OPT_FIELD("value_counts", KV_MAP(119, 120, "\"long\""), 109) ","                         \
    OPT_FIELD("null_value_counts", KV_MAP(121, 122, "\"long\""), 110) ","                    \
    OPT_FIELD("nan_value_counts", KV_MAP(138, 139, "\"long\""), 137) ","                     \
    OPT_FIELD("lower_bounds", KV_MAP(126, 127, "\"bytes\""), 125) ","                        \
    OPT_FIELD("upper_bounds", KV_MAP(129, 130, "\"bytes\""), 128) ","                        \
    OPT_FIELD("key_metadata", "\"bytes\"", 131) ","                                           \
    OPT_FIELD("split_offsets", "{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}", 132)

#define EQ_IDS                                                                                \
    OPT_FIELD("equality_ids", "{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}", 135)

int icm__manifest_entry_schema_json(icm__buf *out, int format_version,
                                    const char *partition_schema_json)
{
    icm__buf_puts(out, "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[" FIELD(
                           "status", "\"int\"", 0) ",");
    if (format_version == 1)
        icm__buf_puts(out, FIELD("snapshot_id", "\"long\"", 1) ",");
    else
        icm__buf_puts(out, OPT_FIELD("snapshot_id", "\"long\"", 1) ","
                               OPT_FIELD("sequence_number", "\"long\"", 3) ","
                                   OPT_FIELD("file_sequence_number", "\"long\"", 4) ",");
    icm__buf_puts(out, "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\","
                       "\"fields\":[");
    if (format_version >= 2)
        icm__buf_puts(out, FIELD("content", "\"int\"", 134) ",");
    icm__buf_puts(out, FIELD("file_path", "\"string\"", 100) ","
                           FIELD("file_format", "\"string\"", 101) ","
                           "{\"name\":\"partition\",\"type\":");
    icm__buf_puts(out, partition_schema_json);
    icm__buf_puts(out, ",\"field-id\":102}," FIELD("record_count", "\"long\"", 103) ","
                           FIELD("file_size_in_bytes", "\"long\"", 104) ",");
    if (format_version == 1)
        icm__buf_puts(out, FIELD("block_size_in_bytes", "\"long\"", 105) ",");
    icm__buf_puts(out, METRICS ",");
    if (format_version >= 2)
        icm__buf_puts(out, EQ_IDS ",");
    icm__buf_puts(out, OPT_FIELD("sort_order_id", "\"int\"", 140));
    if (format_version >= 3)
        icm__buf_puts(out, "," OPT_FIELD("first_row_id", "\"long\"", 142));
    if (format_version >= 2)
        icm__buf_puts(out, "," OPT_FIELD("referenced_data_file", "\"string\"", 143));
    if (format_version >= 3)
        icm__buf_puts(out, "," OPT_FIELD("content_offset", "\"long\"", 144) ","
                               OPT_FIELD("content_size_in_bytes", "\"long\"", 145));
    icm__buf_puts(out, "]},\"field-id\":2}]}");
    return out->oom ? ICM_ENOMEM : 0;
}
