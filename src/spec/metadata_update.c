/*
 * spec/metadata_update.c: requirements and updates (include/icemaint/update.h): building them
 * in their REST wire form, parsing and checking that form, checking requirements against a
 * base, and deriving the requirements Java derives from updates. Applying them is in
 * metadata_update_apply.c.
 *
 * Each requirement and update is kept as the JSON object the REST OpenAPI defines, so the wire
 * form is what was built, and a parsed request and a built one are the same thing.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spec/metadata_update_internal.h"

static const char *const requirement_names[] = {
    "assert-create",
    "assert-table-uuid",
    "assert-ref-snapshot-id",
    "assert-last-assigned-field-id",
    "assert-current-schema-id",
    "assert-last-assigned-partition-id",
    "assert-default-spec-id",
    "assert-default-sort-order-id",
};

/* The member holding the integer of each integer requirement (NULL for the others). */
static const char *const requirement_fields[] = {
    NULL,
    NULL,
    NULL,
    "last-assigned-field-id",
    "current-schema-id",
    "last-assigned-partition-id",
    "default-spec-id",
    "default-sort-order-id",
};

static const char *const update_names[] = {
    "add-snapshot",
    "remove-snapshots",
    "set-snapshot-ref",
    "remove-snapshot-ref",
    "set-properties",
    "remove-properties",
    "set-statistics",
    "remove-statistics",
    "set-partition-statistics",
    "remove-partition-statistics",
    "remove-partition-specs",
    "remove-schemas",
};

#define N_REQUIREMENT_KINDS ICM__ARRAY_LEN(requirement_names)
#define N_UPDATE_KINDS ICM__ARRAY_LEN(update_names)

const char *icm_requirement_kind_name(icm_requirement_kind kind)
{
    return (unsigned)kind < N_REQUIREMENT_KINDS ? requirement_names[kind] : NULL;
}

const char *icm_update_kind_name(icm_update_kind kind)
{
    return (unsigned)kind < N_UPDATE_KINDS ? update_names[kind] : NULL;
}

static int kind_of(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; name != NULL && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

static int requirement_kind_of(json_t *r)
{
    return kind_of(json_string_value(json_object_get(r, "type")), requirement_names,
                   N_REQUIREMENT_KINDS);
}

int icm__update_kind_of(json_t *u)
{
    return kind_of(json_string_value(json_object_get(u, "action")), update_names,
                   N_UPDATE_KINDS);
}

static int bad(const char *what, const char *problem);

/* ------------------------------------------------------------------------------------------ */
/* life cycle and reading                                                                      */

int icm_table_changes_new(icm_table_changes **out)
{
    *out = NULL;
    icm_table_changes *c = icm__calloc(1, sizeof *c);
    if (c == NULL)
        return ICM_ENOMEM;
    c->requirements = json_array();
    c->updates = json_array();
    if (c->requirements == NULL || c->updates == NULL) {
        icm_table_changes_free(c);
        return icm__error_oom();
    }
    *out = c;
    return 0;
}

void icm_table_changes_free(icm_table_changes *c)
{
    if (c == NULL)
        return;
    json_decref(c->requirements);
    json_decref(c->updates);
    icm__free(c);
}

size_t icm_table_changes_requirement_count(const icm_table_changes *c)
{
    return c != NULL ? json_array_size(c->requirements) : 0;
}

icm_requirement_kind icm_table_changes_requirement_kind(const icm_table_changes *c, size_t i)
{
    return (icm_requirement_kind)requirement_kind_of(json_array_get(c->requirements, i));
}

size_t icm_table_changes_update_count(const icm_table_changes *c)
{
    return c != NULL ? json_array_size(c->updates) : 0;
}

icm_update_kind icm_table_changes_update_kind(const icm_table_changes *c, size_t i)
{
    return (icm_update_kind)icm__update_kind_of(json_array_get(c->updates, i));
}

int icm_table_changes_to_json(char **out, size_t *out_len, const icm_table_changes *c)
{
    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    if (c == NULL)
        return bad("changes", "is NULL");
    json_t *body = json_object();
    int rc = body != NULL &&
                     json_object_set(body, "requirements", c->requirements) == 0 &&
                     json_object_set(body, "updates", c->updates) == 0
                 ? 0
                 : icm__error_oom();
    icm__buf b = ICM__BUF_INIT;
    if (rc == 0)
        rc = icm__json_write(&b, body, false);
    json_decref(body);
    if (rc != 0) {
        icm__buf_dispose(&b);
        return rc;
    }
    size_t len = b.len;
    *out = icm__buf_detach(&b, NULL);
    if (*out == NULL)
        return icm__error_oom();
    if (out_len != NULL)
        *out_len = len;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* building                                                                                    */

/* "<what> <problem>" as ICM_EINVALID. */
static int bad(const char *what, const char *problem)
{
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL, "%s %s", what, problem);
}

static int check_text(const char *what, const char *s)
{
    if (s == NULL)
        return bad(what, "is NULL");
    if (!icm__utf8_valid(s, strlen(s))) /* jansson refuses anything else */
        return bad(what, "is not valid UTF-8");
    return 0;
}

/* A new object {key: name} (`type` or `action` first, as the OpenAPI lists them). */
static json_t *tagged(const char *key, const char *name)
{
    json_t *o = json_object();
    if (o != NULL && json_object_set_new(o, key, json_string(name)) != 0) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/* o[key] = value (taken); false on ENOMEM (value released). */
static bool put(json_t *o, const char *key, json_t *value)
{
    return value != NULL && json_object_set_new(o, key, value) == 0;
}

/* Append `o` (taken; NULL = out of memory) to `arr`. */
static int push(json_t *arr, json_t *o)
{
    if (o == NULL || json_array_append_new(arr, o) != 0)
        return icm__error_oom();
    return 0;
}

static int push_checked(json_t *arr, json_t *o, bool ok)
{
    if (!ok) {
        json_decref(o);
        return icm__error_oom();
    }
    return push(arr, o);
}

int icm_table_changes_require_create(icm_table_changes *c)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    return push(c->requirements, tagged("type", "assert-create"));
}

int icm_table_changes_require_table_uuid(icm_table_changes *c, const char *uuid)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    int rc = check_text("uuid", uuid);
    if (rc != 0)
        return rc;
    json_t *r = tagged("type", "assert-table-uuid");
    return push_checked(c->requirements, r, r != NULL && put(r, "uuid", json_string(uuid)));
}

int icm_table_changes_require_ref_snapshot_id(icm_table_changes *c, const char *ref,
                                              const int64_t *snapshot_id)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    int rc = check_text("ref name", ref);
    if (rc != 0)
        return rc;
    json_t *r = tagged("type", "assert-ref-snapshot-id");
    bool ok = r != NULL && put(r, "ref", json_string(ref)) &&
              put(r, "snapshot-id",
                  snapshot_id != NULL ? json_integer(*snapshot_id) : json_null());
    return push_checked(c->requirements, r, ok);
}

int icm_table_changes_require_id(icm_table_changes *c, icm_requirement_kind kind, int64_t id)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    if ((unsigned)kind >= N_REQUIREMENT_KINDS || requirement_fields[kind] == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "requirement kind %d takes no integer", (int)kind);
    json_t *r = tagged("type", requirement_names[kind]);
    return push_checked(c->requirements, r,
                        r != NULL && put(r, requirement_fields[kind], json_integer(id)));
}

/* Parse a JSON object text given by a caller. */
static int object_from_text(const char *what, const char *text, json_t **out)
{
    *out = NULL;
    int rc = check_text(what, text);
    if (rc == 0)
        rc = icm__json_parse(text, strlen(text), what, out);
    if (rc == 0 && !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        rc = bad(what, "is not a JSON object");
    }
    return rc;
}

static int check_update_shape(json_t *u, size_t i);

/* Append update `u` (taken) after checking its shape (texts from callers are checked here). */
static int push_update(icm_table_changes *c, json_t *u, bool ok)
{
    if (!ok) {
        json_decref(u);
        return icm__error_oom();
    }
    int rc = check_update_shape(u, json_array_size(c->updates));
    if (rc != 0) {
        json_decref(u);
        return rc;
    }
    return push(c->updates, u);
}

int icm_table_changes_add_snapshot(icm_table_changes *c, const char *snapshot_json)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    json_t *snap = NULL;
    int rc = object_from_text("snapshot", snapshot_json, &snap);
    if (rc != 0)
        return rc;
    json_t *u = tagged("action", "add-snapshot");
    bool ok = u != NULL && put(u, "snapshot", snap);
    if (u == NULL)
        json_decref(snap);
    return push_update(c, u, ok);
}

/* An array of int64 ids (NULL on ENOMEM). */
static json_t *id_array64(const int64_t *ids, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr, json_integer(ids[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    return arr;
}

static json_t *id_array32(const int32_t *ids, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr, json_integer(ids[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    return arr;
}

int icm_table_changes_remove_snapshots(icm_table_changes *c, const int64_t *ids, size_t n)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    if (ids == NULL && n > 0)
        return bad("snapshot ids", "is NULL");
    json_t *u = tagged("action", "remove-snapshots");
    return push_update(c, u, u != NULL && put(u, "snapshot-ids", id_array64(ids, n)));
}

int icm_table_changes_set_snapshot_ref(icm_table_changes *c, const char *name,
                                       icm_ref_type type, int64_t snapshot_id,
                                       const icm_ref_retention *retention)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    int rc = check_text("ref name", name);
    if (rc != 0)
        return rc;
    json_t *u = tagged("action", "set-snapshot-ref");
    bool ok = u != NULL && put(u, "ref-name", json_string(name)) &&
              put(u, "snapshot-id", json_integer(snapshot_id)) &&
              put(u, "type", json_string(type == ICM_REF_TAG ? "tag" : "branch"));
    if (ok && retention != NULL) {
        if (retention->has_max_ref_age_ms)
            ok = put(u, "max-ref-age-ms", json_integer(retention->max_ref_age_ms));
        if (ok && retention->has_max_snapshot_age_ms)
            ok = put(u, "max-snapshot-age-ms", json_integer(retention->max_snapshot_age_ms));
        if (ok && retention->has_min_snapshots_to_keep)
            ok = put(u, "min-snapshots-to-keep", json_integer(retention->min_snapshots_to_keep));
    }
    return push_update(c, u, ok);
}

int icm_table_changes_remove_snapshot_ref(icm_table_changes *c, const char *name)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    int rc = check_text("ref name", name);
    if (rc != 0)
        return rc;
    json_t *u = tagged("action", "remove-snapshot-ref");
    return push_update(c, u, u != NULL && put(u, "ref-name", json_string(name)));
}

int icm_table_changes_set_properties(icm_table_changes *c, const icm_property *props, size_t n)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    if (props == NULL && n > 0)
        return bad("properties", "is NULL");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = check_text("property key", props[i].key);
        if (rc == 0)
            rc = check_text("property value", props[i].value);
    }
    if (rc != 0)
        return rc;
    json_t *u = tagged("action", "set-properties");
    json_t *m = json_object();
    bool ok = u != NULL && put(u, "updates", m);
    for (size_t i = 0; ok && i < n; i++)
        ok = put(m, props[i].key, json_string(props[i].value));
    if (u == NULL)
        json_decref(m);
    return push_update(c, u, ok);
}

int icm_table_changes_remove_properties(icm_table_changes *c, const char *const *keys, size_t n)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    if (keys == NULL && n > 0)
        return bad("property keys", "is NULL");
    for (size_t i = 0; i < n; i++) {
        int rc = check_text("property key", keys[i]);
        if (rc != 0)
            return rc;
    }
    json_t *u = tagged("action", "remove-properties");
    json_t *arr = json_array();
    bool ok = u != NULL && put(u, "removals", arr);
    for (size_t i = 0; ok && i < n; i++)
        ok = json_array_append_new(arr, json_string(keys[i])) == 0;
    if (u == NULL)
        json_decref(arr);
    return push_update(c, u, ok);
}

static int set_stats(icm_table_changes *c, const char *action, const char *member,
                     const char *text)
{
    json_t *stats = NULL;
    int rc = object_from_text(member, text, &stats);
    if (rc != 0)
        return rc;
    json_t *u = tagged("action", action);
    bool ok = u != NULL && put(u, member, stats);
    if (u == NULL)
        json_decref(stats);
    return push_update(c, u, ok);
}

int icm_table_changes_set_statistics(icm_table_changes *c, const char *statistics_json)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    return set_stats(c, "set-statistics", "statistics", statistics_json);
}

int icm_table_changes_set_partition_statistics(icm_table_changes *c, const char *json)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    return set_stats(c, "set-partition-statistics", "partition-statistics", json);
}

static int remove_stats(icm_table_changes *c, const char *action, int64_t snapshot_id)
{
    json_t *u = tagged("action", action);
    return push_update(c, u, u != NULL && put(u, "snapshot-id", json_integer(snapshot_id)));
}

int icm_table_changes_remove_statistics(icm_table_changes *c, int64_t snapshot_id)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    return remove_stats(c, "remove-statistics", snapshot_id);
}

int icm_table_changes_remove_partition_statistics(icm_table_changes *c, int64_t snapshot_id)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    return remove_stats(c, "remove-partition-statistics", snapshot_id);
}

int icm_table_changes_remove_partition_specs(icm_table_changes *c, const int32_t *spec_ids,
                                             size_t n)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    if (spec_ids == NULL && n > 0)
        return bad("spec ids", "is NULL");
    json_t *u = tagged("action", "remove-partition-specs");
    return push_update(c, u, u != NULL && put(u, "spec-ids", id_array32(spec_ids, n)));
}

int icm_table_changes_remove_schemas(icm_table_changes *c, const int32_t *schema_ids, size_t n)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    if (schema_ids == NULL && n > 0)
        return bad("schema ids", "is NULL");
    json_t *u = tagged("action", "remove-schemas");
    return push_update(c, u, u != NULL && put(u, "schema-ids", id_array32(schema_ids, n)));
}

/* ------------------------------------------------------------------------------------------ */
/* shapes (the OpenAPI's required members and their types)                                    */

static int shape_error(const char *list, size_t i, const char *member, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL, "%s[%zu].%s: %s", list, i,
                          member, what);
}

static bool is_int32(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
           json_integer_value(v) <= INT32_MAX;
}

static int need_string(json_t *o, const char *list, size_t i, const char *key)
{
    return json_is_string(json_object_get(o, key))
               ? 0
               : shape_error(list, i, key, "expected a string");
}

static int need_int(json_t *o, const char *list, size_t i, const char *key, bool int32)
{
    json_t *v = json_object_get(o, key);
    return (int32 ? is_int32(v) : json_is_integer(v))
               ? 0
               : shape_error(list, i, key, int32 ? "expected a 32-bit integer"
                                                 : "expected an integer");
}

static int need_object(json_t *o, const char *list, size_t i, const char *key)
{
    return json_is_object(json_object_get(o, key))
               ? 0
               : shape_error(list, i, key, "expected an object");
}

static int need_int_array(json_t *o, const char *list, size_t i, const char *key, bool int32)
{
    json_t *arr = json_object_get(o, key);
    size_t k;
    json_t *v;
    if (!json_is_array(arr))
        return shape_error(list, i, key, "expected an array of integers");
    json_array_foreach(arr, k, v) {
        if (int32 ? !is_int32(v) : !json_is_integer(v))
            return shape_error(list, i, key, "expected an array of integers");
    }
    return 0;
}

/* The `snapshot-id` of a statistics object must name its snapshot. */
static int need_stats(json_t *u, size_t i, const char *key)
{
    int rc = need_object(u, "updates", i, key);
    if (rc == 0 && !json_is_integer(json_object_get(json_object_get(u, key), "snapshot-id")))
        rc = shape_error("updates", i, key, "expected an object with an integer snapshot-id");
    return rc;
}

static int check_update_shape(json_t *u, size_t i)
{
    if (!json_is_object(u))
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "updates[%zu]: expected an object", i);
    int kind = icm__update_kind_of(u);
    if (kind < 0) {
        const char *a = json_string_value(json_object_get(u, "action"));
        if (a == NULL)
            return shape_error("updates", i, "action", "expected a string");
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, NULL,
                              "updates[%zu].action: '%s' is not an update icemaint applies", i,
                              a);
    }
    int rc = 0;
    switch ((icm_update_kind)kind) {
    case ICM_UPDATE_ADD_SNAPSHOT:
        rc = need_object(u, "updates", i, "snapshot");
        if (rc == 0 && !json_is_integer(json_object_get(json_object_get(u, "snapshot"),
                                                        "snapshot-id")))
            rc = shape_error("updates", i, "snapshot",
                             "expected an object with an integer snapshot-id");
        break;
    case ICM_UPDATE_REMOVE_SNAPSHOTS:
        rc = need_int_array(u, "updates", i, "snapshot-ids", false);
        break;
    case ICM_UPDATE_SET_SNAPSHOT_REF: {
        rc = need_string(u, "updates", i, "ref-name");
        if (rc == 0)
            rc = need_int(u, "updates", i, "snapshot-id", false);
        const char *type = json_string_value(json_object_get(u, "type"));
        if (rc == 0 && (type == NULL || (strcmp(type, "branch") != 0 && strcmp(type, "tag") != 0)))
            rc = shape_error("updates", i, "type", "expected \"branch\" or \"tag\"");
        static const char *const opt[] = {"max-ref-age-ms", "max-snapshot-age-ms",
                                          "min-snapshots-to-keep"};
        for (size_t k = 0; rc == 0 && k < ICM__ARRAY_LEN(opt); k++) {
            json_t *v = json_object_get(u, opt[k]);
            if (v != NULL && !json_is_null(v) && !(k == 2 ? is_int32(v) : json_is_integer(v)))
                rc = shape_error("updates", i, opt[k], "expected an integer");
        }
        break;
    }
    case ICM_UPDATE_REMOVE_SNAPSHOT_REF:
        rc = need_string(u, "updates", i, "ref-name");
        break;
    case ICM_UPDATE_SET_PROPERTIES: {
        rc = need_object(u, "updates", i, "updates");
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(u, "updates"), k, v) {
            if (rc == 0 && !json_is_string(v))
                rc = shape_error("updates", i, "updates", "expected string values");
        }
        break;
    }
    case ICM_UPDATE_REMOVE_PROPERTIES: {
        json_t *arr = json_object_get(u, "removals");
        size_t k;
        json_t *v;
        if (!json_is_array(arr))
            rc = shape_error("updates", i, "removals", "expected an array of strings");
        json_array_foreach(arr, k, v) {
            if (rc == 0 && !json_is_string(v))
                rc = shape_error("updates", i, "removals", "expected an array of strings");
        }
        break;
    }
    case ICM_UPDATE_SET_STATISTICS:
        rc = need_stats(u, i, "statistics");
        break;
    case ICM_UPDATE_SET_PARTITION_STATISTICS:
        rc = need_stats(u, i, "partition-statistics");
        break;
    case ICM_UPDATE_REMOVE_STATISTICS:
    case ICM_UPDATE_REMOVE_PARTITION_STATISTICS:
        rc = need_int(u, "updates", i, "snapshot-id", false);
        break;
    case ICM_UPDATE_REMOVE_PARTITION_SPECS:
        rc = need_int_array(u, "updates", i, "spec-ids", true);
        break;
    case ICM_UPDATE_REMOVE_SCHEMAS:
        rc = need_int_array(u, "updates", i, "schema-ids", true);
        break;
    }
    return rc;
}

static int check_requirement_shape(json_t *r, size_t i)
{
    if (!json_is_object(r))
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "requirements[%zu]: expected an object", i);
    int kind = requirement_kind_of(r);
    if (kind < 0) {
        const char *t = json_string_value(json_object_get(r, "type"));
        if (t == NULL)
            return shape_error("requirements", i, "type", "expected a string");
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, NULL,
                              "requirements[%zu].type: '%s' is not a requirement icemaint "
                              "checks", i, t);
    }
    switch ((icm_requirement_kind)kind) {
    case ICM_REQ_ASSERT_CREATE:
        return 0;
    case ICM_REQ_ASSERT_TABLE_UUID:
        return need_string(r, "requirements", i, "uuid");
    case ICM_REQ_ASSERT_REF_SNAPSHOT_ID: {
        int rc = need_string(r, "requirements", i, "ref");
        json_t *id = json_object_get(r, "snapshot-id");
        if (rc == 0 && !json_is_integer(id) && !json_is_null(id))
            rc = shape_error("requirements", i, "snapshot-id", "expected an integer or null");
        return rc;
    }
    default:
        return need_int(r, "requirements", i, requirement_fields[kind], false);
    }
}

int icm_table_changes_from_json(icm_table_changes **out, const char *json, size_t len)
{
    *out = NULL;
    json_t *body = NULL;
    int rc = icm__json_parse(json, len, "commit request", &body);
    if (rc != 0)
        return rc;
    json_t *reqs = json_object_get(body, "requirements");
    json_t *ups = json_object_get(body, "updates");
    if (!json_is_object(body) || !json_is_array(reqs) || !json_is_array(ups))
        rc = icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                            "commit request: expected an object with arrays `requirements` "
                            "and `updates`");
    for (size_t i = 0; rc == 0 && i < json_array_size(reqs); i++)
        rc = check_requirement_shape(json_array_get(reqs, i), i);
    for (size_t i = 0; rc == 0 && i < json_array_size(ups); i++)
        rc = check_update_shape(json_array_get(ups, i), i);
    icm_table_changes *c = NULL;
    if (rc == 0 && (c = icm__calloc(1, sizeof *c)) == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0) {
        c->requirements = json_incref(reqs);
        c->updates = json_incref(ups);
        *out = c;
    }
    json_decref(body);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* requirements                                                                                */

static int conflict(const char *what, const char *fmt, ...) ICM__PRINTF(2, 3);

static int conflict(const char *what, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, NULL,
                          "requirement failed: %s: %s", what, detail);
}

/* `last-partition-id`, or as Java derives it for v1 metadata without one: the highest
 * partition field id of any spec, 999 when there is none. */
static int64_t last_partition_id(json_t *doc)
{
    json_t *v = json_object_get(doc, "last-partition-id");
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    int64_t last = 999;
    size_t i, k;
    json_t *spec, *field;
    json_t *specs = json_object_get(doc, "partition-specs");
    json_array_foreach(specs, i, spec) {
        json_array_foreach(json_object_get(spec, "fields"), k, field) {
            int64_t id = icm__json_int_or(field, "field-id", last);
            last = id > last ? id : last;
        }
    }
    json_array_foreach(json_object_get(doc, "partition-spec"), k, field) {
        int64_t id = icm__json_int_or(field, "field-id", last);
        last = id > last ? id : last;
    }
    return last;
}

static int check_one(json_t *r, const icm_table_metadata *base)
{
    int kind = requirement_kind_of(r);
    const char *what = requirement_names[kind];
    if (kind == ICM_REQ_ASSERT_CREATE)
        return base == NULL ? 0 : conflict(what, "the table already exists");
    if (base == NULL)
        return conflict(what, "the table does not exist");
    json_t *doc = icm__table_metadata_json(base);
    if (kind == ICM_REQ_ASSERT_TABLE_UUID) {
        const char *want = json_string_value(json_object_get(r, "uuid"));
        const char *have = icm_table_metadata_uuid(base);
        if (have != NULL && strcasecmp(have, want) == 0)
            return 0;
        return conflict(what, "the table's uuid is %s, expected %s",
                        have != NULL ? have : "(none)", want);
    }
    if (kind == ICM_REQ_ASSERT_REF_SNAPSHOT_ID) {
        const char *name = json_string_value(json_object_get(r, "ref"));
        json_t *want = json_object_get(r, "snapshot-id");
        const icm_ref *ref = icm_table_metadata_ref_by_name(base, name);
        if (json_is_null(want))
            return ref == NULL ? 0
                               : conflict(what, "ref %s exists (snapshot %" PRId64
                                                "), expected none",
                                          name, ref->snapshot_id);
        int64_t id = (int64_t)json_integer_value(want);
        if (ref == NULL)
            return conflict(what, "ref %s does not exist, expected snapshot %" PRId64, name, id);
        if (ref->snapshot_id != id)
            return conflict(what, "ref %s is at snapshot %" PRId64 ", expected %" PRId64, name,
                            ref->snapshot_id, id);
        return 0;
    }
    int64_t want = (int64_t)json_integer_value(json_object_get(r, requirement_fields[kind]));
    int64_t have = 0;
    switch ((icm_requirement_kind)kind) {
    case ICM_REQ_ASSERT_LAST_ASSIGNED_FIELD_ID:
        have = icm__json_int_or(doc, "last-column-id", -1);
        break;
    case ICM_REQ_ASSERT_CURRENT_SCHEMA_ID:
        have = icm_table_metadata_current_schema_id(base);
        break;
    case ICM_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID:
        have = last_partition_id(doc);
        break;
    case ICM_REQ_ASSERT_DEFAULT_SPEC_ID:
        have = icm_table_metadata_default_spec_id(base);
        break;
    default: /* v1 metadata without sort orders is unsorted: order 0 */
        have = icm__json_int_or(doc, "default-sort-order-id", 0);
        break;
    }
    if (have == want)
        return 0;
    return conflict(what, "the table's %s is %" PRId64 ", expected %" PRId64,
                    requirement_fields[kind], have, want);
}

int icm_table_changes_check(const icm_table_changes *c, const icm_table_metadata *base)
{
    if (c == NULL)
        return bad("changes", "is NULL");
    for (size_t i = 0; i < json_array_size(c->requirements); i++) {
        int rc = check_one(json_array_get(c->requirements, i), base);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icm__table_changes_add_snapshot_json(icm_table_changes *c, json_t *snapshot_take)
{
    json_t *u = tagged("action", "add-snapshot");
    bool ok = u != NULL && put(u, "snapshot", snapshot_take);
    if (u == NULL)
        json_decref(snapshot_take);
    return push_update(c, u, ok);
}

/* ------------------------------------------------------------------------------------------ */
/* Java's UpdateRequirements.forUpdateTable                                                    */

static bool has_ref_requirement(const icm_table_changes *c, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(c->requirements, i, r) {
        const char *have = json_string_value(json_object_get(r, "ref"));
        if (requirement_kind_of(r) == ICM_REQ_ASSERT_REF_SNAPSHOT_ID && have != NULL &&
            strcmp(have, name) == 0)
            return true;
    }
    return false;
}

static bool has_requirement(const icm_table_changes *c, icm_requirement_kind kind)
{
    size_t i;
    json_t *r;
    json_array_foreach(c->requirements, i, r) {
        if (requirement_kind_of(r) == (int)kind)
            return true;
    }
    return false;
}

/* assert-ref-snapshot-id for `name` as `base` has it (null: absent), once per ref. */
static int require_ref_as_base(icm_table_changes *c, const icm_table_metadata *base,
                               const char *name)
{
    if (has_ref_requirement(c, name))
        return 0;
    const icm_ref *ref = icm_table_metadata_ref_by_name(base, name);
    return icm_table_changes_require_ref_snapshot_id(c, name,
                                                     ref != NULL ? &ref->snapshot_id : NULL);
}

/* Java requireNoBranchesChanged: every branch but main as base has it. */
static int require_branches_as_base(icm_table_changes *c, const icm_table_metadata *base)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < icm_table_metadata_ref_count(base); i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(base, i);
        if (ref->type == ICM_REF_BRANCH && strcmp(ref->name, "main") != 0)
            rc = require_ref_as_base(c, base, ref->name);
    }
    return rc;
}

static int require_id_once(icm_table_changes *c, icm_requirement_kind kind, int64_t id)
{
    return has_requirement(c, kind) ? 0 : icm_table_changes_require_id(c, kind, id);
}

int icm_table_changes_require_for_update(icm_table_changes *c, const icm_table_metadata *base)
{
    if (c == NULL || base == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL, "NULL argument");
    const char *uuid = icm_table_metadata_uuid(base);
    int rc = 0;
    if (uuid != NULL && !has_requirement(c, ICM_REQ_ASSERT_TABLE_UUID))
        rc = icm_table_changes_require_table_uuid(c, uuid);
    size_t n = json_array_size(c->updates);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *u = json_array_get(c->updates, i);
        switch (icm__update_kind_of(u)) {
        case ICM_UPDATE_SET_SNAPSHOT_REF:
            rc = require_ref_as_base(c, base, json_string_value(json_object_get(u, "ref-name")));
            break;
        case ICM_UPDATE_REMOVE_PARTITION_SPECS:
            rc = require_id_once(c, ICM_REQ_ASSERT_DEFAULT_SPEC_ID,
                                 icm_table_metadata_default_spec_id(base));
            if (rc == 0)
                rc = require_branches_as_base(c, base);
            break;
        case ICM_UPDATE_REMOVE_SCHEMAS:
            rc = require_id_once(c, ICM_REQ_ASSERT_CURRENT_SCHEMA_ID,
                                 icm_table_metadata_current_schema_id(base));
            if (rc == 0)
                rc = require_branches_as_base(c, base);
            break;
        default:
            break;
        }
    }
    return rc;
}
