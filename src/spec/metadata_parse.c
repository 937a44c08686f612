/*
 * spec/metadata_parse.c: Iceberg table metadata (spec "Table Metadata"): validating a parsed
 * document and building its typed views (icm__md_views_build). The object's lifecycle is
 * metadata.c; the getters of include/icemaint/metadata.h are metadata_get.c.
 *
 * Validation follows the spec's "Table Metadata Fields" table and what Iceberg Java's
 * TableMetadataParser / TableMetadata accept, so that icemaint rejects exactly what Java
 * rejects. A few rules are deliberately stricter, because icemaint deletes files based on what
 * it reads and must never act on a guess:
 *  - duplicate object keys are rejected (readers disagree on which value wins), and so are
 *    integers beyond int64 (see spec/json_parse.c, our reader);
 *  - a current-snapshot-id other than -1 or null must name a snapshot in `snapshots`;
 *  - snapshot-log and metadata-log must be arrays of objects (Java iterates anything).
 * And one rule is more generous, in the safe direction: a table with a current snapshot always
 * gets a `main` branch view, even when `refs` exists without `main` (Java only adds it when
 * `refs` is absent), so that expiry always treats the current snapshot as a branch head.
 * Every failure is one line: "<field path>: <reason>", with the file as the error location.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spec/metadata_internal.h"

/* Java tolerates log timestamps that go back by up to one minute (clock skew between writers). */
#define ICM__LOG_SKEW_MS 60000

/* ------------------------------------------------------------------------------------------ */
/* field access with one-line errors                                                           */

typedef struct md_ctx {
    const char *loc; /* file, for error locations */
    int fv;          /* format version, once known */
} md_ctx;

/* How a field may appear: OPT = may be absent, but not null (Java calls getXxx() whenever the
 * key exists); NULLABLE = absent or JSON null both mean "not set" (Java's getXxxOrNull);
 * REQ = must be present and non-null. */
enum field_mode { OPT = 0, NULLABLE = 1, REQ = 2 };

static const char *json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a JSON value";
}

/* "prefix.key" (or "key" at top level) into buf. */
static const char *field_path(char *buf, size_t cap, const char *prefix, const char *key)
{
    if (prefix == NULL || prefix[0] == '\0')
        snprintf(buf, cap, "%s", key);
    else
        snprintf(buf, cap, "%s.%s", prefix, key);
    return buf;
}

static int invalid(const md_ctx *c, const char *fmt, ...) ICM__PRINTF(2, 3);
static int invalid(const md_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = icm__error_vset(ICM_ERRCLASS_SPEC, ICM_EINVALID, c->loc, fmt, ap);
    va_end(ap);
    return rc;
}

static int missing(const md_ctx *c, const char *path, bool top_level)
{
    if (top_level && c->fv > 0)
        return invalid(c, "%s: missing (required in format v%d)", path, c->fv);
    return invalid(c, "%s: missing", path);
}

/*
 * Look up obj[key] under `mode`. *out is the value, or NULL when "not set" (allowed by mode).
 * Fails when a REQ field is missing or null, or an OPT field is null.
 */
static int field_get(const md_ctx *c, json_t *obj, const char *prefix, const char *key,
                     enum field_mode mode, json_t **out)
{
    char path[256];
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (v == NULL) {
        if (mode == REQ)
            return missing(c, field_path(path, sizeof path, prefix, key),
                           prefix == NULL || prefix[0] == '\0');
        return 0;
    }
    if (json_is_null(v)) {
        if (mode == NULLABLE)
            return 0;
        return invalid(c, "%s: must not be null", field_path(path, sizeof path, prefix, key));
    }
    *out = v;
    return 0;
}

static int wrong_type(const md_ctx *c, const char *prefix, const char *key, const char *want,
                      const json_t *v)
{
    char path[256];
    return invalid(c, "%s: expected %s, found %s", field_path(path, sizeof path, prefix, key),
                   want, json_type_name(v));
}

/* Integer field (exact int64). *present says whether it was set. */
static int field_int64(const md_ctx *c, json_t *obj, const char *prefix, const char *key,
                       enum field_mode mode, bool *present, int64_t *out)
{
    json_t *v;
    int rc = field_get(c, obj, prefix, key, mode, &v);
    *present = false;
    if (rc != 0 || v == NULL)
        return rc;
    if (!json_is_integer(v))
        return wrong_type(c, prefix, key, "an integer", v);
    *out = (int64_t)json_integer_value(v);
    *present = true;
    return 0;
}

/* Integer field that must fit an Iceberg `int` (32 bits). */
static int field_int32(const md_ctx *c, json_t *obj, const char *prefix, const char *key,
                       enum field_mode mode, bool *present, int32_t *out)
{
    int64_t wide = 0;
    int rc = field_int64(c, obj, prefix, key, mode, present, &wide);
    if (rc != 0 || !*present)
        return rc;
    if (wide < INT32_MIN || wide > INT32_MAX) {
        char path[256];
        return invalid(c, "%s: %" PRId64 " is out of range for an int",
                       field_path(path, sizeof path, prefix, key), wide);
    }
    *out = (int32_t)wide;
    return 0;
}

static int field_string(const md_ctx *c, json_t *obj, const char *prefix, const char *key,
                        enum field_mode mode, const char **out)
{
    json_t *v;
    int rc = field_get(c, obj, prefix, key, mode, &v);
    *out = NULL;
    if (rc != 0 || v == NULL)
        return rc;
    if (!json_is_string(v))
        return wrong_type(c, prefix, key, "a string", v);
    *out = json_string_value(v);
    return 0;
}

static int field_array(const md_ctx *c, json_t *obj, const char *prefix, const char *key,
                       enum field_mode mode, json_t **out)
{
    int rc = field_get(c, obj, prefix, key, mode, out);
    if (rc != 0 || *out == NULL)
        return rc;
    if (!json_is_array(*out))
        return wrong_type(c, prefix, key, "an array", *out);
    return 0;
}

static int field_object(const md_ctx *c, json_t *obj, const char *prefix, const char *key,
                        enum field_mode mode, json_t **out)
{
    int rc = field_get(c, obj, prefix, key, mode, out);
    if (rc != 0 || *out == NULL)
        return rc;
    if (!json_is_object(*out))
        return wrong_type(c, prefix, key, "an object", *out);
    return 0;
}

/* Element i of an array field must be an object; names it "key[i]" in messages. */
static int element_object(const md_ctx *c, json_t *arr, const char *key, size_t i, json_t **out,
                          char *prefix, size_t prefix_cap)
{
    snprintf(prefix, prefix_cap, "%s[%zu]", key, i);
    *out = json_array_get(arr, i);
    if (!json_is_object(*out))
        return invalid(c, "%s: expected an object, found %s", prefix, json_type_name(*out));
    return 0;
}

/* A string-to-string map (`properties`, snapshot `summary`). */
static int check_string_map(const md_ctx *c, json_t *map, const char *path)
{
    const char *k;
    json_t *v;
    json_object_foreach(map, k, v) {
        if (!json_is_string(v))
            return invalid(c, "%s.%s: expected a string, found %s", path, k, json_type_name(v));
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* views: build and dispose                                                                    */

void icm__md_views_dispose(icm__md_views *v)
{
    if (v == NULL)
        return;
    icm__free(v->snapshots);
    icm__free(v->snapshot_json);
    icm__free(v->snapshot_order);
    icm__free((void *)v->manifest_strings);
    icm__free(v->refs);
    icm__free(v->snapshot_log);
    icm__free(v->metadata_log);
    icm__free(v->statistics);
    icm__free((void *)v->property_keys);
    icm__free((void *)v->property_values);
    memset(v, 0, sizeof *v);
}

/* format-version, table-uuid, location, last sequence number, last-updated-ms, last-column-id. */
static int build_header(const md_ctx *c0, json_t *doc, icm__md_views *v)
{
    md_ctx c = *c0;
    bool present;
    int64_t fv = 0;
    int rc = field_int64(&c, doc, "", "format-version", REQ, &present, &fv);
    if (rc != 0)
        return rc;
    if (fv < 1 || fv > 3)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, c.loc,
                              "format-version: %" PRId64 " is not supported (1 to 3)", fv);
    v->format_version = (int)fv;
    c.fv = (int)fv;

    rc = field_string(&c, doc, "", "table-uuid", NULLABLE, &v->uuid);
    if (rc == 0 && v->uuid == NULL && fv > 1)
        rc = missing(&c, "table-uuid", true);
    if (rc == 0)
        rc = field_string(&c, doc, "", "location", REQ, &v->location);
    /* v1 has no sequence numbers: Java ignores the field there and so do the views. */
    if (rc == 0 && fv > 1)
        rc = field_int64(&c, doc, "", "last-sequence-number", REQ, &present,
                         &v->last_sequence_number);
    if (rc == 0)
        rc = field_int64(&c, doc, "", "last-updated-ms", REQ, &present, &v->last_updated_ms);
    int32_t last_column_id;
    if (rc == 0)
        rc = field_int32(&c, doc, "", "last-column-id", REQ, &present, &last_column_id);
    return rc;
}

/* v3 row lineage: next-row-id is required (spec; Java 1.11 TableMetadataParser). Checked last
 * so that files missing something more basic are reported for that. */
static int build_row_lineage(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    if (c->fv < 3)
        return 0;
    return field_int64(c, doc, "", "next-row-id", REQ, &v->has_next_row_id, &v->next_row_id);
}

/* The id that selects among `array_key` (current-schema-id, default-spec-id, ...): required
 * whenever the array is present, whatever the format version (Java TableMetadataParser). */
static int selector_int32(const md_ctx *c, json_t *doc, const char *key, const char *array_key,
                          int32_t *out)
{
    bool present;
    if (json_object_get(doc, key) == NULL)
        return invalid(c, "%s: missing (required with %s)", key, array_key);
    return field_int32(c, doc, "", key, REQ, &present, out);
}

/* A schema must be a struct with a `fields` array (Java SchemaParser). */
static int check_schema(const md_ctx *c, json_t *schema, const char *path, int32_t *schema_id)
{
    const char *type;
    json_t *fields;
    bool present;
    int rc = field_string(c, schema, path, "type", REQ, &type);
    if (rc == 0 && strcmp(type, "struct") != 0)
        rc = invalid(c, "%s.type: \"%s\" is not \"struct\"", path, type);
    if (rc == 0)
        rc = field_array(c, schema, path, "fields", REQ, &fields);
    *schema_id = 0; /* Java's default when a v1 schema has no id */
    if (rc == 0)
        rc = field_int32(c, schema, path, "schema-id", NULLABLE, &present, schema_id);
    return rc;
}

static int build_schemas(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *schemas, *schema;
    char prefix[64];
    int32_t id;
    int rc = field_array(c, doc, "", "schemas", OPT, &schemas);
    if (rc != 0)
        return rc;
    if (schemas == NULL) {
        if (c->fv > 1)
            return missing(c, "schemas", true);
        rc = field_object(c, doc, "", "schema", OPT, &schema);
        if (rc == 0 && schema == NULL)
            rc = invalid(c, "schema: missing (format v1 needs schema or schemas)");
        if (rc == 0)
            rc = check_schema(c, schema, "schema", &v->current_schema_id);
        v->schema_count = 1;
        return rc;
    }
    rc = selector_int32(c, doc, "current-schema-id", "schemas", &v->current_schema_id);
    bool found = false;
    for (size_t i = 0; rc == 0 && i < json_array_size(schemas); i++) {
        rc = element_object(c, schemas, "schemas", i, &schema, prefix, sizeof prefix);
        if (rc == 0)
            rc = check_schema(c, schema, prefix, &id);
        if (rc == 0 && id == v->current_schema_id)
            found = true;
    }
    if (rc == 0 && !found)
        rc = invalid(c, "current-schema-id: no schema with id %" PRId32 " in schemas",
                     v->current_schema_id);
    v->schema_count = json_array_size(schemas);
    return rc;
}

/* partition-specs / default-spec-id / last-partition-id, or v1's partition-spec. */
static int build_specs(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *specs, *spec, *fields;
    char prefix[64];
    bool present;
    int32_t id;
    int rc = field_array(c, doc, "", "partition-specs", OPT, &specs);
    if (rc != 0)
        return rc;
    if (specs == NULL) {
        if (c->fv > 1)
            return missing(c, "partition-specs", true);
        rc = field_array(c, doc, "", "partition-spec", REQ, &fields);
        v->spec_count = 1;
        v->default_spec_id = 0;
    } else {
        rc = selector_int32(c, doc, "default-spec-id", "partition-specs", &v->default_spec_id);
        if (rc == 0 && json_array_size(specs) == 0)
            rc = invalid(c, "partition-specs: empty (a table has at least one spec)");
        for (size_t i = 0; rc == 0 && i < json_array_size(specs); i++) {
            rc = element_object(c, specs, "partition-specs", i, &spec, prefix, sizeof prefix);
            if (rc == 0)
                rc = field_int32(c, spec, prefix, "spec-id", REQ, &present, &id);
            if (rc == 0)
                rc = field_array(c, spec, prefix, "fields", REQ, &fields);
        }
        v->spec_count = json_array_size(specs);
    }
    int32_t last_partition_id;
    if (rc == 0)
        rc = field_int32(c, doc, "", "last-partition-id", NULLABLE, &present,
                         &last_partition_id);
    if (rc == 0 && !present && c->fv > 1)
        rc = missing(c, "last-partition-id", true);
    return rc;
}

static int build_sort_orders(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *orders, *order, *fields;
    char prefix[64];
    bool present;
    int32_t id;
    int rc = field_array(c, doc, "", "sort-orders", OPT, &orders);
    if (rc != 0)
        return rc;
    if (orders == NULL)
        return c->fv > 1 ? missing(c, "sort-orders", true) : 0;
    int32_t default_id;
    rc = selector_int32(c, doc, "default-sort-order-id", "sort-orders", &default_id);
    if (rc == 0 && json_array_size(orders) == 0)
        rc = invalid(c, "sort-orders: empty (a table has at least the unsorted order)");
    for (size_t i = 0; rc == 0 && i < json_array_size(orders); i++) {
        rc = element_object(c, orders, "sort-orders", i, &order, prefix, sizeof prefix);
        if (rc == 0)
            rc = field_int32(c, order, prefix, "order-id", REQ, &present, &id);
        if (rc == 0)
            rc = field_array(c, order, prefix, "fields", REQ, &fields);
    }
    v->sort_order_count = json_array_size(orders);
    return rc;
}

static int build_properties(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *props, *value;
    const char *key;
    int rc = field_object(c, doc, "", "properties", OPT, &props);
    if (rc != 0 || props == NULL)
        return rc;
    rc = check_string_map(c, props, "properties");
    if (rc != 0)
        return rc;
    size_t n = json_object_size(props);
    v->property_keys = icm__calloc(n, sizeof *v->property_keys);
    v->property_values = icm__calloc(n, sizeof *v->property_values);
    if (v->property_keys == NULL || v->property_values == NULL)
        return ICM_ENOMEM;
    json_object_foreach(props, key, value) {
        v->property_keys[v->property_count] = key;
        v->property_values[v->property_count] = json_string_value(value);
        v->property_count++;
    }
    return 0;
}

/* v1 embedded `manifests`: an array of strings. */
static int check_manifests(const md_ctx *c, json_t *snap, const char *prefix, json_t **out)
{
    int rc = field_array(c, snap, prefix, "manifests", REQ, out);
    for (size_t i = 0; rc == 0 && i < json_array_size(*out); i++) {
        json_t *m = json_array_get(*out, i);
        if (!json_is_string(m))
            rc = invalid(c, "%s.manifests[%zu]: expected a string, found %s", prefix, i,
                         json_type_name(m));
    }
    return rc;
}

static int build_one_snapshot(const md_ctx *c, json_t *snap, const char *prefix,
                              icm__md_views *v, icm_snapshot *s, size_t *manifest_used)
{
    bool present;
    json_t *summary, *manifests = NULL;
    int rc = field_int64(c, snap, prefix, "snapshot-id", REQ, &present, &s->snapshot_id);
    if (rc == 0)
        rc = field_int64(c, snap, prefix, "parent-snapshot-id", OPT, &s->has_parent,
                         &s->parent_snapshot_id);
    if (rc == 0)
        rc = field_int64(c, snap, prefix, "sequence-number", OPT, &present, &s->sequence_number);
    if (rc == 0 && s->sequence_number > v->last_sequence_number)
        rc = invalid(c, "%s.sequence-number: %" PRId64 " is greater than last-sequence-number %"
                     PRId64, prefix, s->sequence_number, v->last_sequence_number);
    if (rc == 0)
        rc = field_int64(c, snap, prefix, "timestamp-ms", REQ, &present, &s->timestamp_ms);
    if (rc == 0)
        rc = field_object(c, snap, prefix, "summary", OPT, &summary);
    if (rc == 0 && summary != NULL) {
        char path[96];
        snprintf(path, sizeof path, "%s.summary", prefix);
        rc = check_string_map(c, summary, path);
        if (rc == 0)
            s->operation = json_string_value(json_object_get(summary, "operation"));
    }
    if (rc == 0)
        rc = field_string(c, snap, prefix, "manifest-list", OPT, &s->manifest_list);
    if (rc == 0 && s->manifest_list == NULL) {
        if (json_object_get(snap, "manifests") == NULL)
            return invalid(c, "%s: neither manifest-list nor manifests is present", prefix);
        rc = check_manifests(c, snap, prefix, &manifests);
    }
    if (rc == 0 && manifests != NULL) {
        s->manifest_count = json_array_size(manifests);
        s->manifests = v->manifest_strings + *manifest_used;
        for (size_t i = 0; i < s->manifest_count; i++)
            v->manifest_strings[(*manifest_used)++] =
                json_string_value(json_array_get(manifests, i));
    }
    if (rc == 0)
        rc = field_int32(c, snap, prefix, "schema-id", NULLABLE, &s->has_schema_id,
                         &s->schema_id);
    if (rc == 0)
        rc = field_int64(c, snap, prefix, "first-row-id", NULLABLE, &s->has_first_row_id,
                         &s->first_row_id);
    if (rc == 0)
        rc = field_int64(c, snap, prefix, "added-rows", NULLABLE, &s->has_added_rows,
                         &s->added_rows);
    return rc;
}

/* Sort indices by snapshot id. A bottom-up merge sort rather than qsort: qsort's comparator
 * gets no context argument in C11, and a global would make parsing non-reentrant. */
static int sort_snapshot_order(icm__md_views *v)
{
    size_t n = v->snapshot_count;
    size_t *tmp = icm__calloc(n ? n : 1, sizeof *tmp);
    if (tmp == NULL)
        return ICM_ENOMEM;
    size_t *a = v->snapshot_order;
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = v->snapshots[a[j]].snapshot_id < v->snapshots[a[i]].snapshot_id
                               ? a[j++]
                               : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
    icm__free(tmp);
    return 0;
}

static int build_snapshots(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *snaps, *snap, *manifests;
    char prefix[64];
    int rc = field_array(c, doc, "", "snapshots", OPT, &snaps);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(snaps), n_manifests = 0;
    for (size_t i = 0; i < n; i++) {
        manifests = json_object_get(json_array_get(snaps, i), "manifests");
        n_manifests += json_is_array(manifests) ? json_array_size(manifests) : 0;
    }
    v->snapshots = icm__calloc(n, sizeof *v->snapshots);
    v->snapshot_json = icm__calloc(n, sizeof *v->snapshot_json);
    v->snapshot_order = icm__calloc(n, sizeof *v->snapshot_order);
    v->manifest_strings = icm__calloc(n_manifests, sizeof *v->manifest_strings);
    if (!v->snapshots || !v->snapshot_json || !v->snapshot_order || !v->manifest_strings)
        return ICM_ENOMEM;
    size_t used = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = element_object(c, snaps, "snapshots", i, &snap, prefix, sizeof prefix);
        if (rc == 0)
            rc = build_one_snapshot(c, snap, prefix, v, &v->snapshots[i], &used);
        v->snapshot_json[i] = snap;
        v->snapshot_count = i + 1;
    }
    if (rc != 0)
        return rc;
    rc = sort_snapshot_order(v);
    for (size_t i = 1; rc == 0 && i < n; i++) {
        int64_t id = v->snapshots[v->snapshot_order[i]].snapshot_id;
        if (id == v->snapshots[v->snapshot_order[i - 1]].snapshot_id)
            rc = invalid(c, "snapshots: snapshot-id %" PRId64 " appears more than once", id);
    }
    return rc;
}

const icm_snapshot *icm__md_views_find_snapshot(const icm__md_views *v, int64_t id)
{
    size_t lo = 0, hi = v->snapshot_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const icm_snapshot *s = &v->snapshots[v->snapshot_order[mid]];
        if (s->snapshot_id == id)
            return s;
        if (s->snapshot_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int build_current(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    int64_t id = -1;
    bool present;
    int rc = field_int64(c, doc, "", "current-snapshot-id", NULLABLE, &present, &id);
    if (rc != 0)
        return rc;
    /* -1 and null both mean "no current snapshot" (spec); any other value must exist, or we
     * would be guessing which snapshot the table is at. */
    if (!present || id == -1)
        return 0;
    if (icm__md_views_find_snapshot(v, id) == NULL)
        return invalid(c, "current-snapshot-id: snapshot %" PRId64 " is not in snapshots", id);
    v->has_current_snapshot = true;
    v->current_snapshot_id = id;
    return 0;
}

static int positive_retention(const md_ctx *c, const char *prefix, const char *key, bool set,
                              int64_t value)
{
    if (set && value <= 0)
        return invalid(c, "%s.%s: %" PRId64 " is not a positive number", prefix, key, value);
    return 0;
}

static int build_one_ref(const md_ctx *c, const icm__md_views *v, const char *name, json_t *ref,
                         icm_ref *r)
{
    char prefix[160];
    const char *type;
    bool present;
    snprintf(prefix, sizeof prefix, "refs.%s", name);
    if (!json_is_object(ref))
        return invalid(c, "%s: expected an object, found %s", prefix, json_type_name(ref));
    r->name = name;
    int rc = field_int64(c, ref, prefix, "snapshot-id", REQ, &present, &r->snapshot_id);
    if (rc == 0)
        rc = field_string(c, ref, prefix, "type", REQ, &type);
    if (rc != 0)
        return rc;
    /* Java reads the type case-insensitively (SnapshotRefType.valueOf of the upper case). */
    if (strcasecmp(type, "branch") == 0)
        r->type = ICM_REF_BRANCH;
    else if (strcasecmp(type, "tag") == 0)
        r->type = ICM_REF_TAG;
    else
        return invalid(c, "%s.type: \"%s\" is neither \"branch\" nor \"tag\"", prefix, type);
    rc = field_int64(c, ref, prefix, "max-ref-age-ms", NULLABLE, &r->has_max_ref_age_ms,
                     &r->max_ref_age_ms);
    if (rc == 0)
        rc = field_int64(c, ref, prefix, "max-snapshot-age-ms", NULLABLE,
                         &r->has_max_snapshot_age_ms, &r->max_snapshot_age_ms);
    if (rc == 0)
        rc = field_int32(c, ref, prefix, "min-snapshots-to-keep", NULLABLE,
                         &r->has_min_snapshots_to_keep, &r->min_snapshots_to_keep);
    if (rc == 0)
        rc = positive_retention(c, prefix, "max-ref-age-ms", r->has_max_ref_age_ms,
                                r->max_ref_age_ms);
    if (rc == 0)
        rc = positive_retention(c, prefix, "max-snapshot-age-ms", r->has_max_snapshot_age_ms,
                                r->max_snapshot_age_ms);
    if (rc == 0)
        rc = positive_retention(c, prefix, "min-snapshots-to-keep",
                                r->has_min_snapshots_to_keep, r->min_snapshots_to_keep);
    if (rc == 0 && r->type == ICM_REF_TAG &&
        (r->has_max_snapshot_age_ms || r->has_min_snapshots_to_keep))
        rc = invalid(c, "%s: a tag cannot have max-snapshot-age-ms or min-snapshots-to-keep",
                     prefix);
    if (rc == 0 && icm__md_views_find_snapshot(v, r->snapshot_id) == NULL)
        rc = invalid(c, "%s.snapshot-id: snapshot %" PRId64 " is not in snapshots", prefix,
                     r->snapshot_id);
    return rc;
}

/* refs, plus the implicit `main` branch. Spec: there is always a main branch pointing at
 * current-snapshot-id, even when `refs` is absent. We also add it when `refs` exists without
 * `main` (Java would not): treating the current snapshot as a branch head only ever keeps more. */
static int build_refs(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *refs, *ref;
    const char *name;
    int rc = field_object(c, doc, "", "refs", OPT, &refs);
    if (rc != 0)
        return rc;
    size_t n = refs ? json_object_size(refs) : 0;
    bool has_main = refs != NULL && json_object_get(refs, "main") != NULL;
    v->refs = icm__calloc(n + 1, sizeof *v->refs);
    if (v->refs == NULL)
        return ICM_ENOMEM;
    if (refs != NULL) {
        json_object_foreach(refs, name, ref) {
            rc = build_one_ref(c, v, name, ref, &v->refs[v->ref_count]);
            if (rc != 0)
                return rc;
            v->ref_count++;
        }
    }
    if (has_main) {
        const icm_ref *main_ref = NULL;
        for (size_t i = 0; i < v->ref_count; i++)
            if (strcmp(v->refs[i].name, "main") == 0)
                main_ref = &v->refs[i];
        if (main_ref->type != ICM_REF_BRANCH)
            return invalid(c, "refs.main: must be a branch");
        if (!v->has_current_snapshot)
            return invalid(c, "refs.main: current-snapshot-id is not set but main exists");
        if (main_ref->snapshot_id != v->current_snapshot_id)
            return invalid(c, "refs.main.snapshot-id: %" PRId64
                           " differs from current-snapshot-id %" PRId64,
                           main_ref->snapshot_id, v->current_snapshot_id);
    } else if (v->has_current_snapshot) {
        icm_ref *m = &v->refs[v->ref_count++];
        m->name = "main";
        m->type = ICM_REF_BRANCH;
        m->snapshot_id = v->current_snapshot_id;
        m->implicit = true;
    }
    return 0;
}

/* Log entries must go forward in time (Java allows one minute of clock skew), and none may be
 * later than last-updated-ms (same tolerance). */
static int check_log_time(const md_ctx *c, const char *key, size_t i, int64_t prev, int64_t ts,
                          int64_t last_updated_ms, bool last)
{
    if (i > 0 && ts < prev && prev - ts > ICM__LOG_SKEW_MS)
        return invalid(c, "%s[%zu].timestamp-ms: %" PRId64 " is before the previous entry (%"
                       PRId64 ")", key, i, ts, prev);
    if (last && ts > last_updated_ms && ts - last_updated_ms > ICM__LOG_SKEW_MS)
        return invalid(c, "%s[%zu].timestamp-ms: %" PRId64 " is after last-updated-ms %" PRId64,
                       key, i, ts, last_updated_ms);
    return 0;
}

/* The array of a log; JSON null counts as empty (Java iterates a null node as nothing). */
static int log_array(const md_ctx *c, json_t *doc, const char *key, json_t **out)
{
    return field_array(c, doc, "", key, NULLABLE, out);
}

static int build_snapshot_log(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *log, *e;
    char prefix[64];
    bool present;
    int rc = log_array(c, doc, "snapshot-log", &log);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(log);
    v->snapshot_log = icm__calloc(n, sizeof *v->snapshot_log);
    if (v->snapshot_log == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        icm_snapshot_log_entry *le = &v->snapshot_log[i];
        rc = element_object(c, log, "snapshot-log", i, &e, prefix, sizeof prefix);
        if (rc == 0)
            rc = field_int64(c, e, prefix, "timestamp-ms", REQ, &present, &le->timestamp_ms);
        if (rc == 0)
            rc = field_int64(c, e, prefix, "snapshot-id", REQ, &present, &le->snapshot_id);
        if (rc == 0)
            rc = check_log_time(c, "snapshot-log", i, i ? le[-1].timestamp_ms : 0,
                                le->timestamp_ms, v->last_updated_ms, i + 1 == n);
        v->snapshot_log_count = i + 1;
    }
    return rc;
}

static int build_metadata_log(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *log, *e;
    char prefix[64];
    bool present;
    int rc = log_array(c, doc, "metadata-log", &log);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(log);
    v->metadata_log = icm__calloc(n, sizeof *v->metadata_log);
    if (v->metadata_log == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        icm_metadata_log_entry *le = &v->metadata_log[i];
        rc = element_object(c, log, "metadata-log", i, &e, prefix, sizeof prefix);
        if (rc == 0)
            rc = field_int64(c, e, prefix, "timestamp-ms", REQ, &present, &le->timestamp_ms);
        if (rc == 0)
            rc = field_string(c, e, prefix, "metadata-file", REQ, &le->metadata_file);
        if (rc == 0)
            rc = check_log_time(c, "metadata-log", i, i ? le[-1].timestamp_ms : 0,
                                le->timestamp_ms, v->last_updated_ms, i + 1 == n);
        v->metadata_log_count = i + 1;
    }
    return rc;
}

/* statistics (Java StatisticsFileParser) then partition-statistics
 * (PartitionStatisticsFileParser). */
static int build_statistics(const md_ctx *c, json_t *doc, icm__md_views *v)
{
    json_t *stats, *pstats, *e, *blobs;
    char prefix[64];
    bool present;
    int64_t footer;
    int rc = field_array(c, doc, "", "statistics", OPT, &stats);
    if (rc == 0)
        rc = field_array(c, doc, "", "partition-statistics", OPT, &pstats);
    if (rc != 0)
        return rc;
    size_t ns = json_array_size(stats), np = json_array_size(pstats);
    v->statistics = icm__calloc(ns + np, sizeof *v->statistics);
    if (v->statistics == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < ns + np; i++) {
        bool part = i >= ns;
        const char *key = part ? "partition-statistics" : "statistics";
        icm_statistics_file *sf = &v->statistics[i];
        rc = element_object(c, part ? pstats : stats, key, part ? i - ns : i, &e, prefix,
                            sizeof prefix);
        sf->partition_statistics = part;
        if (rc == 0)
            rc = field_int64(c, e, prefix, "snapshot-id", REQ, &present, &sf->snapshot_id);
        if (rc == 0)
            rc = field_string(c, e, prefix, "statistics-path", REQ, &sf->path);
        if (rc == 0)
            rc = field_int64(c, e, prefix, "file-size-in-bytes", REQ, &present,
                             &sf->file_size_in_bytes);
        if (rc == 0 && !part)
            rc = field_int64(c, e, prefix, "file-footer-size-in-bytes", REQ, &present, &footer);
        if (rc == 0 && !part)
            rc = field_array(c, e, prefix, "blob-metadata", REQ, &blobs);
        v->statistics_count = i + 1;
    }
    return rc;
}

int icm__md_views_build(icm__md_views *out, json_t *doc, const char *location)
{
    md_ctx c = {location, 0};
    memset(out, 0, sizeof *out);
    if (!json_is_object(doc))
        return invalid(&c, "not table metadata: the document is %s, not an object",
                       json_type_name(doc));
    int rc = build_header(&c, doc, out);
    c.fv = out->format_version;
    if (rc == 0)
        rc = build_schemas(&c, doc, out);
    if (rc == 0)
        rc = build_specs(&c, doc, out);
    if (rc == 0)
        rc = build_sort_orders(&c, doc, out);
    if (rc == 0)
        rc = build_properties(&c, doc, out);
    if (rc == 0)
        rc = build_snapshots(&c, doc, out);
    if (rc == 0)
        rc = build_current(&c, doc, out);
    if (rc == 0)
        rc = build_refs(&c, doc, out);
    if (rc == 0)
        rc = build_snapshot_log(&c, doc, out);
    if (rc == 0)
        rc = build_metadata_log(&c, doc, out);
    if (rc == 0)
        rc = build_statistics(&c, doc, out);
    if (rc == 0)
        rc = build_row_lineage(&c, doc, out);
    if (rc != 0)
        icm__md_views_dispose(out);
    return rc;
}
