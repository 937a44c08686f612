/*
 * spec/metadata_get.c: the getters of include/icemaint/metadata.h, over the typed views
 * metadata_parse.c builds.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spec/metadata_internal.h"
#include "util/location.h"

/* ------------------------------------------------------------------------------------------ */
/* getters                                                                                     */

const char *icm_table_metadata_file(const icm_table_metadata *md)
{
    return md->file;
}

int icm_table_metadata_format_version(const icm_table_metadata *md)
{
    return md->v.format_version;
}

const char *icm_table_metadata_uuid(const icm_table_metadata *md)
{
    return md->v.uuid;
}

const char *icm_table_metadata_location(const icm_table_metadata *md)
{
    return md->v.location;
}

int64_t icm_table_metadata_last_sequence_number(const icm_table_metadata *md)
{
    return md->v.last_sequence_number;
}

int64_t icm_table_metadata_last_updated_ms(const icm_table_metadata *md)
{
    return md->v.last_updated_ms;
}

bool icm_table_metadata_current_snapshot_id(int64_t *out, const icm_table_metadata *md)
{
    if (md->v.has_current_snapshot && out != NULL)
        *out = md->v.current_snapshot_id;
    return md->v.has_current_snapshot;
}

bool icm_table_metadata_next_row_id(int64_t *out, const icm_table_metadata *md)
{
    if (md->v.has_next_row_id && out != NULL)
        *out = md->v.next_row_id;
    return md->v.has_next_row_id;
}

size_t icm_table_metadata_snapshot_count(const icm_table_metadata *md)
{
    return md->v.snapshot_count;
}

const icm_snapshot *icm_table_metadata_snapshot_at(const icm_table_metadata *md, size_t i)
{
    return i < md->v.snapshot_count ? &md->v.snapshots[i] : NULL;
}

const icm_snapshot *icm_table_metadata_snapshot_by_id(const icm_table_metadata *md,
                                                      int64_t snapshot_id)
{
    return icm__md_views_find_snapshot(&md->v, snapshot_id);
}

const char *icm_snapshot_summary_get(const icm_table_metadata *md, const icm_snapshot *snap,
                                     const char *key)
{
    if (snap < md->v.snapshots || snap >= md->v.snapshots + md->v.snapshot_count)
        return NULL;
    json_t *summary = json_object_get(md->v.snapshot_json[snap - md->v.snapshots], "summary");
    return json_string_value(json_object_get(summary, key));
}

bool icm__snapshot_summary_count(const icm_table_metadata *md, const icm_snapshot *snap,
                                 const char *key, int64_t *out)
{
    /* Java's Long.parseLong: an optional sign, then decimal digits only, within int64 */
    const char *v = icm_snapshot_summary_get(md, snap, key);
    if (v == NULL)
        return false;
    bool negative = *v == '-';
    const char *d = *v == '-' || *v == '+' ? v + 1 : v;
    if (*d == '\0')
        return false;
    uint64_t n = 0;
    for (; *d != '\0'; d++) {
        if (*d < '0' || *d > '9' || n > (UINT64_C(1) << 63) / 10)
            return false;
        n = n * 10 + (uint64_t)(*d - '0');
    }
    if (n > (negative ? UINT64_C(1) << 63 : (uint64_t)INT64_MAX))
        return false;
    *out = negative ? (int64_t)(0 - n) : (int64_t)n;
    return true;
}

size_t icm_table_metadata_ref_count(const icm_table_metadata *md)
{
    return md->v.ref_count;
}

const icm_ref *icm_table_metadata_ref_at(const icm_table_metadata *md, size_t i)
{
    return i < md->v.ref_count ? &md->v.refs[i] : NULL;
}

const icm_ref *icm_table_metadata_ref_by_name(const icm_table_metadata *md, const char *name)
{
    for (size_t i = 0; i < md->v.ref_count; i++)
        if (strcmp(md->v.refs[i].name, name) == 0)
            return &md->v.refs[i];
    return NULL;
}

size_t icm_table_metadata_snapshot_log_count(const icm_table_metadata *md)
{
    return md->v.snapshot_log_count;
}

const icm_snapshot_log_entry *icm_table_metadata_snapshot_log_at(const icm_table_metadata *md,
                                                                 size_t i)
{
    return i < md->v.snapshot_log_count ? &md->v.snapshot_log[i] : NULL;
}

size_t icm_table_metadata_metadata_log_count(const icm_table_metadata *md)
{
    return md->v.metadata_log_count;
}

const icm_metadata_log_entry *icm_table_metadata_metadata_log_at(const icm_table_metadata *md,
                                                                 size_t i)
{
    return i < md->v.metadata_log_count ? &md->v.metadata_log[i] : NULL;
}

size_t icm_table_metadata_statistics_count(const icm_table_metadata *md)
{
    return md->v.statistics_count;
}

const icm_statistics_file *icm_table_metadata_statistics_at(const icm_table_metadata *md,
                                                            size_t i)
{
    return i < md->v.statistics_count ? &md->v.statistics[i] : NULL;
}

size_t icm_table_metadata_property_count(const icm_table_metadata *md)
{
    return md->v.property_count;
}

void icm_table_metadata_property_at(const char **key, const char **value,
                                    const icm_table_metadata *md, size_t i)
{
    bool ok = i < md->v.property_count;
    if (key != NULL)
        *key = ok ? md->v.property_keys[i] : NULL;
    if (value != NULL)
        *value = ok ? md->v.property_values[i] : NULL;
}

const char *icm_table_metadata_property(const icm_table_metadata *md, const char *key)
{
    return json_string_value(json_object_get(json_object_get(md->doc, "properties"), key));
}

size_t icm_table_metadata_schema_count(const icm_table_metadata *md)
{
    return md->v.schema_count;
}

int32_t icm_table_metadata_current_schema_id(const icm_table_metadata *md)
{
    return md->v.current_schema_id;
}

size_t icm_table_metadata_spec_count(const icm_table_metadata *md)
{
    return md->v.spec_count;
}

int32_t icm_table_metadata_default_spec_id(const icm_table_metadata *md)
{
    return md->v.default_spec_id;
}

size_t icm_table_metadata_sort_order_count(const icm_table_metadata *md)
{
    return md->v.sort_order_count;
}

/* Serialise one sub-document compactly into a new string. */
static int dump_compact(const json_t *value, char **out)
{
    icm__buf b = ICM__BUF_INIT;
    int rc = icm__json_write(&b, value, false);
    if (rc != 0) {
        icm__buf_dispose(&b);
        return rc;
    }
    *out = icm__buf_detach(&b, NULL);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

/* The element of `arr` whose integer `id_key` equals id. A missing or null id counts as 0 when
 * `missing_is_zero` (Java's default for a schema without schema-id). */
static json_t *find_by_id(json_t *arr, const char *id_key, int32_t id, bool missing_is_zero)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        json_t *jid = json_object_get(e, id_key);
        json_int_t have;
        if (json_is_integer(jid))
            have = json_integer_value(jid);
        else if ((jid == NULL || json_is_null(jid)) && missing_is_zero)
            have = 0;
        else
            continue;
        if (have == id)
            return e;
    }
    return NULL;
}

int32_t icm__table_metadata_schema_id_at(const icm_table_metadata *md, size_t i)
{
    json_t *schemas = json_object_get(md->doc, "schemas");
    if (schemas == NULL)
        return md->v.current_schema_id; /* (v1 with only `schema`) */
    json_t *jid = json_object_get(json_array_get(schemas, i), "schema-id");
    return json_is_integer(jid) ? (int32_t)json_integer_value(jid) : 0;
}

int icm_table_metadata_schema_json(char **out, const icm_table_metadata *md, int32_t schema_id)
{
    *out = NULL;
    json_t *schemas = json_object_get(md->doc, "schemas");
    json_t *schema = schemas != NULL ? find_by_id(schemas, "schema-id", schema_id, true) : NULL;
    if (schemas == NULL && schema_id == md->v.current_schema_id)
        schema = json_object_get(md->doc, "schema");
    if (schema == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_ENOTFOUND, md->file,
                              "schemas: no schema with id %" PRId32, schema_id);
    return dump_compact(schema, out);
}

int icm_table_metadata_spec_fields_json(char **out, const icm_table_metadata *md,
                                        int32_t spec_id)
{
    *out = NULL;
    json_t *specs = json_object_get(md->doc, "partition-specs");
    json_t *fields = NULL;
    if (specs != NULL)
        fields = json_object_get(find_by_id(specs, "spec-id", spec_id, false), "fields");
    else if (spec_id == 0)
        fields = json_object_get(md->doc, "partition-spec");
    if (fields == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_ENOTFOUND, md->file,
                              "partition-specs: no spec with id %" PRId32, spec_id);
    return dump_compact(fields, out);
}

bool icm__same_table_uuid(const char *a, const char *b)
{
    return (a == NULL) == (b == NULL) && (a == NULL || strcasecmp(a, b) == 0);
}

bool icm_table_metadata_follows(const icm_table_metadata *md, const char *md_location,
                                const char *earlier)
{
    if (md == NULL || md_location == NULL || earlier == NULL)
        return false;
    if (icm__location_equal(md_location, earlier))
        return true;
    size_t n = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; i < n; i++)
        if (icm__location_equal(icm_table_metadata_metadata_log_at(md, i)->metadata_file,
                                earlier))
            return true;
    return false;
}
