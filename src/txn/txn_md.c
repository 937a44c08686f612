/*
 * txn/txn_md.c: the metadata changes a transaction makes beyond properties, as updates
 * (icemaint/update.h) appended to the attempt's changes and applied at once to its working
 * metadata (so later operations validate against them): adding a snapshot and moving `main`
 * to it (add-snapshot + set-snapshot-ref), creating or moving refs (set-snapshot-ref); and
 * building the default name mapping from the current schema.
 *
 * A branch that moves keeps its retention fields (Java's SnapshotRef.builderFrom), so they
 * are sent with the set-snapshot-ref. Each edit applies completely or leaves the metadata
 * unchanged; unknown fields survive (icm_table_changes_apply is lossless).
 */
#include <string.h>

#include "spec/metadata_internal.h"
#include "txn/txn_internal.h"
#include "util/location.h"

/* The retention fields `ref` has (a branch keeps them when it moves: Java builderFrom). */
static icm_ref_retention retention_of(const icm_ref *ref)
{
    icm_ref_retention r = {false, 0, false, 0, false, 0};
    if (ref != NULL) {
        r.has_max_ref_age_ms = ref->has_max_ref_age_ms;
        r.max_ref_age_ms = ref->max_ref_age_ms;
        r.has_max_snapshot_age_ms = ref->has_max_snapshot_age_ms;
        r.max_snapshot_age_ms = ref->max_snapshot_age_ms;
        r.has_min_snapshots_to_keep = ref->has_min_snapshots_to_keep;
        r.min_snapshots_to_keep = ref->min_snapshots_to_keep;
    }
    return r;
}

int icm__txn_md_set_ref(icm_table_changes *c, icm_table_metadata *md, const char *name,
                        icm_ref_type type, int64_t snapshot_id,
                        const icm_ref_retention *retention)
{
    icm_ref_retention kept = retention_of(icm_table_metadata_ref_by_name(md, name));
    size_t from = icm_table_changes_update_count(c);
    int rc = icm_table_changes_set_snapshot_ref(c, name, type, snapshot_id,
                                                retention != NULL ? retention : &kept);
    return rc == 0 ? icm__table_changes_apply_in_place(c, from, md) : rc;
}

int icm__txn_md_add_snapshot(icm_table_changes *c, icm_table_metadata *md, json_t *snapshot_take)
{
    int64_t id = (int64_t)json_integer_value(json_object_get(snapshot_take, "snapshot-id"));
    icm_ref_retention kept = retention_of(icm_table_metadata_ref_by_name(md, "main"));
    size_t from = icm_table_changes_update_count(c);
    int rc = icm__table_changes_add_snapshot_json(c, snapshot_take);
    if (rc == 0)
        rc = icm_table_changes_set_snapshot_ref(c, "main", ICM_REF_BRANCH, id, &kept);
    return rc == 0 ? icm__table_changes_apply_in_place(c, from, md) : rc;
}

char *icm__txn_metadata_dir(const icm_table_metadata *md)
{
    const char *p = icm_table_metadata_property(md, "write.metadata.path");
    if (p != NULL && *p != '\0')
        return icm__strndup(p, icm__location_trim_len(p));
    return icm__location_join(icm_table_metadata_location(md), "metadata");
}

/* ---- name mapping (Java MappingUtil / PyIceberg Schema.name_mapping) ---- */

static json_t *mapping_of_type(json_t *type, int depth);

static json_t *mapping_entry(json_t *id, const char *name, json_t *type, int depth)
{
    json_t *e = json_object();
    json_t *names = json_array();
    bool ok = e != NULL && names != NULL && json_is_integer(id);
    ok = ok && json_object_set(e, "field-id", id) == 0;
    ok = ok && json_array_append_new(names, json_string(name)) == 0;
    ok = ok && json_object_set_new(e, "names", names) == 0;
    names = NULL;
    if (ok && json_is_object(type)) {
        json_t *nested = mapping_of_type(type, depth + 1);
        ok = nested != NULL && json_object_set_new(e, "fields", nested) == 0;
    }
    json_decref(names);
    if (!ok) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* The mapping of a nested type: struct fields by name; list "element"; map "key"/"value". */
static json_t *mapping_of_type(json_t *type, int depth)
{
    json_t *out = json_array();
    if (out == NULL || depth > 64)
        goto fail;
    const char *kind = json_string_value(json_object_get(type, "type"));
    if (kind != NULL && strcmp(kind, "struct") == 0) {
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(type, "fields"), i, f) {
            const char *name = json_string_value(json_object_get(f, "name"));
            json_t *e = name != NULL ? mapping_entry(json_object_get(f, "id"), name,
                                                     json_object_get(f, "type"), depth)
                                     : NULL;
            if (e == NULL || json_array_append_new(out, e) != 0)
                goto fail;
        }
    } else if (kind != NULL && strcmp(kind, "list") == 0) {
        json_t *e = mapping_entry(json_object_get(type, "element-id"), "element",
                                  json_object_get(type, "element"), depth);
        if (e == NULL || json_array_append_new(out, e) != 0)
            goto fail;
    } else if (kind != NULL && strcmp(kind, "map") == 0) {
        json_t *k = mapping_entry(json_object_get(type, "key-id"), "key",
                                  json_object_get(type, "key"), depth);
        if (k == NULL || json_array_append_new(out, k) != 0)
            goto fail;
        json_t *v = mapping_entry(json_object_get(type, "value-id"), "value",
                                  json_object_get(type, "value"), depth);
        if (v == NULL || json_array_append_new(out, v) != 0)
            goto fail;
    }
    return out;
fail:
    json_decref(out);
    return NULL;
}

int icm__txn_name_mapping_json(const icm_table_metadata *md, char **out)
{
    *out = NULL;
    char *schema_text = NULL;
    int rc = icm_table_metadata_schema_json(&schema_text, md,
                                            icm_table_metadata_current_schema_id(md));
    if (rc != 0)
        return rc;
    json_t *schema = NULL;
    rc = icm__json_parse(schema_text, strlen(schema_text), "schema", &schema);
    icm_free(schema_text);
    if (rc != 0)
        return rc;
    json_t *mapping = mapping_of_type(schema, 0);
    json_decref(schema);
    if (mapping == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "cannot build a name mapping from the current schema (a field "
                              "without id or name)");
    icm__buf b = ICM__BUF_INIT;
    rc = icm__json_write(&b, mapping, false);
    json_decref(mapping);
    if (rc != 0) {
        icm__buf_dispose(&b);
        return rc;
    }
    *out = icm__buf_detach(&b, NULL);
    return *out != NULL ? 0 : icm__error_oom();
}
