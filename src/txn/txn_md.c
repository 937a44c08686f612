/*
 * txn/txn_md.c: the table-metadata edits a transaction needs beyond the public lossless edits
 * of metadata.h: adding a snapshot and moving `main` (current-snapshot-id, snapshot-log,
 * last-sequence-number, v3 next-row-id), creating or moving refs, and building the default
 * name mapping from the current schema.
 *
 * Each edit deep-copies the JSON document, changes the copy and hands it to
 * icm__table_metadata_replace_doc, which re-validates it: an edit applies completely or leaves
 * the metadata unchanged. Unknown fields survive because only the named keys are touched.
 */
#include <string.h>

#include "spec/metadata_internal.h"
#include "txn/txn_internal.h"
#include "util/location.h"

static json_t *copy_doc(const icm_table_metadata *md)
{
    icm__json_use_icm_allocator();
    json_t *doc = json_deep_copy(icm__table_metadata_json(md));
    if (doc == NULL)
        icm__error_oom();
    return doc;
}

/* json_object_set_new that reports allocation failure as ICM_ENOMEM. */
static int set_new(json_t *obj, const char *key, json_t *value)
{
    if (value == NULL || json_object_set_new(obj, key, value) != 0)
        return icm__error_oom();
    return 0;
}

static int append_new(json_t *arr, json_t *value)
{
    if (value == NULL || json_array_append_new(arr, value) != 0)
        return icm__error_oom();
    return 0;
}

/* Member `key` of `doc` as an array/object, created (empty) when absent. */
static json_t *member(json_t *doc, const char *key, bool array)
{
    json_t *v = json_object_get(doc, key);
    if (array ? json_is_array(v) : json_is_object(v))
        return v;
    v = array ? json_array() : json_object();
    if (set_new(doc, key, v) != 0)
        return NULL;
    return v;
}

/* Log `snapshot_id` as current at `timestamp_ms` and make it current. */
static int move_current(json_t *doc, int64_t snapshot_id, int64_t timestamp_ms)
{
    json_t *log = member(doc, "snapshot-log", true);
    json_t *entry = json_object();
    int rc = log != NULL ? 0 : ICM_ENOMEM;
    if (rc == 0 && entry == NULL)
        rc = icm__error_oom();
    if (rc == 0)
        rc = set_new(entry, "timestamp-ms", json_integer(timestamp_ms));
    if (rc == 0)
        rc = set_new(entry, "snapshot-id", json_integer(snapshot_id));
    if (rc == 0) {
        rc = append_new(log, entry);
        entry = NULL;
    }
    json_decref(entry);
    if (rc == 0)
        rc = set_new(doc, "current-snapshot-id", json_integer(snapshot_id));
    /* The metadata changes now: its last update is no earlier than this entry (Java's builder
     * sets lastUpdatedMillis to the snapshot's time). Without it the edited document says the
     * log runs ahead of the metadata whenever the last commit was over a minute ago. */
    json_t *lu = json_object_get(doc, "last-updated-ms");
    if (rc == 0 && (!json_is_integer(lu) || json_integer_value(lu) < timestamp_ms))
        rc = set_new(doc, "last-updated-ms", json_integer(timestamp_ms));
    return rc;
}

static int put_retention(json_t *ref, const icm_ref_retention *r)
{
    json_object_del(ref, "max-ref-age-ms");
    json_object_del(ref, "max-snapshot-age-ms");
    json_object_del(ref, "min-snapshots-to-keep");
    int rc = 0;
    if (r->has_max_ref_age_ms)
        rc = set_new(ref, "max-ref-age-ms", json_integer(r->max_ref_age_ms));
    if (rc == 0 && r->has_max_snapshot_age_ms)
        rc = set_new(ref, "max-snapshot-age-ms", json_integer(r->max_snapshot_age_ms));
    if (rc == 0 && r->has_min_snapshots_to_keep)
        rc = set_new(ref, "min-snapshots-to-keep", json_integer(r->min_snapshots_to_keep));
    return rc;
}

/* The timestamp for a log entry: now, but never before the metadata's last update (a skewed
 * clock must not make history run backwards). */
static int64_t log_time(json_t *doc)
{
    int64_t now = icm__now_ms();
    json_t *lu = json_object_get(doc, "last-updated-ms");
    if (json_is_integer(lu) && json_integer_value(lu) > now)
        return (int64_t)json_integer_value(lu);
    return now;
}

static int set_ref_in_doc(json_t *doc, const char *name, icm_ref_type type, int64_t snapshot_id,
                          const icm_ref_retention *retention)
{
    json_t *refs = member(doc, "refs", false);
    if (refs == NULL)
        return ICM_ENOMEM;
    json_t *ref = json_object_get(refs, name);
    if (!json_is_object(ref)) {
        ref = json_object();
        if (set_new(refs, name, ref) != 0)
            return ICM_ENOMEM;
    }
    int rc = set_new(ref, "snapshot-id", json_integer(snapshot_id));
    if (rc == 0)
        rc = set_new(ref, "type", json_string(type == ICM_REF_TAG ? "tag" : "branch"));
    if (rc == 0 && retention != NULL)
        rc = put_retention(ref, retention);
    if (rc == 0 && type == ICM_REF_BRANCH && strcmp(name, "main") == 0) {
        json_t *cur = json_object_get(doc, "current-snapshot-id");
        if (!json_is_integer(cur) || json_integer_value(cur) != snapshot_id)
            rc = move_current(doc, snapshot_id, log_time(doc));
    }
    return rc;
}

static int finish_edit(icm_table_metadata *md, json_t *doc, int rc)
{
    if (rc != 0) {
        json_decref(doc);
        return rc;
    }
    return icm__table_metadata_replace_doc(md, doc);
}

int icm__txn_md_set_ref(icm_table_metadata *md, const char *name, icm_ref_type type,
                        int64_t snapshot_id, const icm_ref_retention *retention)
{
    json_t *doc = copy_doc(md);
    if (doc == NULL)
        return ICM_ENOMEM;
    return finish_edit(md, doc, set_ref_in_doc(doc, name, type, snapshot_id, retention));
}

int icm__txn_md_add_snapshot(icm_table_metadata *md, json_t *snapshot_take,
                             int64_t sequence_number, bool has_next_row_id, int64_t next_row_id)
{
    json_t *doc = copy_doc(md);
    if (doc == NULL) {
        json_decref(snapshot_take);
        return ICM_ENOMEM;
    }
    json_t *snapshots = member(doc, "snapshots", true);
    int rc = snapshots != NULL ? append_new(snapshots, snapshot_take) : ICM_ENOMEM;
    if (snapshots == NULL)
        json_decref(snapshot_take);
    int64_t id = 0;
    if (rc == 0)
        id = (int64_t)json_integer_value(json_object_get(snapshot_take, "snapshot-id"));
    if (rc == 0 && icm_table_metadata_format_version(md) >= 2)
        rc = set_new(doc, "last-sequence-number", json_integer(sequence_number));
    if (rc == 0 && has_next_row_id)
        rc = set_new(doc, "next-row-id", json_integer(next_row_id));
    /* The snapshot's own timestamp is its snapshot-log time, as Java records it. */
    if (rc == 0) {
        json_t *refs = member(doc, "refs", false);
        json_t *main_ref = refs != NULL ? json_object_get(refs, "main") : NULL;
        if (refs == NULL) {
            rc = ICM_ENOMEM;
        } else if (!json_is_object(main_ref)) {
            main_ref = json_object();
            rc = set_new(refs, "main", main_ref);
        }
        if (rc == 0)
            rc = set_new(main_ref, "snapshot-id", json_integer(id));
        if (rc == 0)
            rc = set_new(main_ref, "type", json_string("branch"));
        if (rc == 0)
            rc = move_current(
                doc, id,
                (int64_t)json_integer_value(json_object_get(snapshot_take, "timestamp-ms")));
    }
    return finish_edit(md, doc, rc);
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
    int rc = icm_table_metadata_schema_json(md, icm_table_metadata_current_schema_id(md),
                                            &schema_text);
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
