/*
 * catalog/new_table.c: builds the metadata document of a new, empty format-v2 table (spec
 * "Table Metadata") from a schema, an optional partition spec and properties, the way Java's
 * TableMetadata.newTableMetadata lays it out: one schema, one spec (id 0), the unsorted sort
 * order (id 0), no snapshots, empty logs.
 */
#include <jansson.h>
#include <string.h>

#include "catalog/catalog_internal.h"
#include "spec/metadata_internal.h"
#include "util/util.h"

/* Java's PARTITION_DATA_ID_START - 1: last-partition-id of an unpartitioned table. */
#define LAST_PARTITION_ID_NONE 999

/* Highest field id anywhere in a (nested) type: struct fields, list elements, map keys/values. */
static int64_t max_field_id(const json_t *type)
{
    int64_t best = 0;
    if (!json_is_object(type))
        return 0;
    const json_t *fields = json_object_get(type, "fields");
    size_t i;
    const json_t *f;
    json_array_foreach(fields, i, f) {
        json_int_t id = json_integer_value(json_object_get(f, "id"));
        if (id > best)
            best = id;
        int64_t inner = max_field_id(json_object_get(f, "type"));
        if (inner > best)
            best = inner;
    }
    static const char *const ids[] = {"element-id", "key-id", "value-id"};
    for (size_t k = 0; k < ICM__ARRAY_LEN(ids); k++) {
        json_int_t id = json_integer_value(json_object_get(type, ids[k]));
        if (id > best)
            best = id;
    }
    static const char *const kids[] = {"element", "key", "value"};
    for (size_t k = 0; k < ICM__ARRAY_LEN(kids); k++) {
        int64_t inner = max_field_id(json_object_get(type, kids[k]));
        if (inner > best)
            best = inner;
    }
    return best;
}

static json_t *parse_schema(const char *text)
{
    json_t *schema = NULL;
    if (icm__json_parse(text, strlen(text), "schema JSON", &schema) < 0)
        return NULL;
    if (!json_is_object(schema) || !json_is_array(json_object_get(schema, "fields"))) {
        json_decref(schema);
        icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                       "schema must be an object with a 'fields' array");
        return NULL;
    }
    if (json_object_set_new(schema, "type", json_string("struct")) != 0 ||
        (json_object_get(schema, "schema-id") == NULL &&
         json_object_set_new(schema, "schema-id", json_integer(0)) != 0)) {
        json_decref(schema);
        icm__error_oom();
        return NULL;
    }
    return schema;
}

/* Accept a spec object or its bare fields array; give missing field ids 1000, 1001, ... */
static json_t *parse_spec_fields(const char *text, int64_t *out_last_partition_id)
{
    *out_last_partition_id = LAST_PARTITION_ID_NONE;
    json_t *fields = NULL;
    if (text == NULL) {
        fields = json_array();
    } else {
        json_t *doc = NULL;
        if (icm__json_parse(text, strlen(text), "partition spec JSON", &doc) < 0)
            return NULL;
        fields = json_is_array(doc) ? json_incref(doc)
                                    : json_incref(json_object_get(doc, "fields"));
        json_decref(doc);
        if (!json_is_array(fields)) {
            json_decref(fields);
            icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                           "partition spec must be an object with 'fields' or a fields array");
            return NULL;
        }
    }
    if (fields == NULL) {
        icm__error_oom();
        return NULL;
    }
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        if (!json_is_object(f) || !json_is_string(json_object_get(f, "name")) ||
            !json_is_string(json_object_get(f, "transform")) ||
            !json_is_integer(json_object_get(f, "source-id"))) {
            json_decref(fields);
            icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                           "partition field %zu needs name, transform and source-id", i);
            return NULL;
        }
        if (!json_is_integer(json_object_get(f, "field-id")) &&
            json_object_set_new(f, "field-id",
                                json_integer((json_int_t)(LAST_PARTITION_ID_NONE + 1 + i))) != 0) {
            json_decref(fields);
            icm__error_oom();
            return NULL;
        }
        json_int_t id = json_integer_value(json_object_get(f, "field-id"));
        if (id > *out_last_partition_id)
            *out_last_partition_id = id;
    }
    return fields;
}

static json_t *properties_object(const icm_create_table_options *opts)
{
    json_t *props = json_object();
    for (size_t i = 0; props != NULL && i < opts->n_properties; i++) {
        if (json_object_set_new(props, opts->properties[i].key,
                                json_string(opts->properties[i].value)) != 0) {
            json_decref(props);
            props = NULL;
        }
    }
    return props;
}

static int dump_cb(const char *buffer, size_t size, void *data)
{
    return icm__buf_put(data, buffer, size) == 0 ? 0 : -1;
}

int icm__metadata_build_new(icm_table_metadata **out, const char *location,
                            const icm_create_table_options *opts)
{
    *out = NULL;
    char uuid[37];
    int64_t last_partition_id = 0;
    icm__buf text = ICM__BUF_INIT;
    json_t *doc = NULL;
    int rc = icm__uuid4(uuid);
    if (rc != 0)
        return rc;
    json_t *schema = parse_schema(opts->schema_json);
    if (schema == NULL)
        return icm_error_last()->code;
    json_t *spec_fields = parse_spec_fields(opts->partition_spec_json, &last_partition_id);
    json_t *props = properties_object(opts);
    if (spec_fields == NULL || props == NULL) {
        rc = spec_fields == NULL ? icm_error_last()->code : icm__error_oom();
        goto done;
    }
    json_int_t schema_id = json_integer_value(json_object_get(schema, "schema-id"));
    json_int_t last_column_id = (json_int_t)max_field_id(schema);
    doc = json_pack("{s:i, s:s, s:s, s:i, s:I, s:I, s:I, s:[O], s:i, s:[{s:i, s:O}], s:I,"
                    " s:i, s:[{s:i, s:[]}], s:O, s:I, s:{}, s:[], s:[], s:[]}",
                    "format-version", 2, "table-uuid", uuid, "location", location,
                    "last-sequence-number", 0, "last-updated-ms", (json_int_t)icm__now_ms(),
                    "last-column-id", last_column_id, "current-schema-id", schema_id,
                    "schemas", schema, "default-spec-id", 0, "partition-specs", "spec-id", 0,
                    "fields", spec_fields, "last-partition-id", (json_int_t)last_partition_id,
                    "default-sort-order-id", 0, "sort-orders", "order-id", 0, "fields",
                    "properties", props, "current-snapshot-id", (json_int_t)-1, "refs",
                    "snapshots", "snapshot-log", "metadata-log");
    if (doc == NULL) {
        rc = icm__error_oom();
        goto done;
    }
    if (json_dump_callback(doc, dump_cb, &text, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
        text.oom) {
        rc = icm__error_oom();
        goto done;
    }
    rc = icm_table_metadata_parse(out, text.data, text.len, NULL);
done:
    json_decref(doc);
    json_decref(schema);
    json_decref(spec_fields);
    json_decref(props);
    icm__buf_dispose(&text);
    return rc;
}
