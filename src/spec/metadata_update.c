/*
 * spec/metadata_update.c: requirements and updates (include/icemaint/update.h): building them
 * in their REST wire form, parsing and checking that form, checking requirements against a
 * base, and applying updates to it.
 *
 * Each requirement and update is kept as the JSON object the REST OpenAPI defines, so the wire
 * form is what was built, and a parsed request and a built one are the same thing.
 *
 * Applying works on one new top-level object that shares every member with the base's
 * document. A member an update changes (`snapshots`, `refs`, ...) is first replaced by a
 * shallow copy of its own, once per apply; an element an update changes (a ref) is replaced
 * by a copy, never changed in place. So the base's document, whose values other metadata
 * objects share, is never touched, and an expiry of thousands of snapshots copies no snapshot
 * (the same sharing as metadata_edit.c). The result is validated once, when it is wrapped.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spec/metadata_internal.h"

struct icm_table_changes {
    json_t *requirements; /* array of TableRequirement objects */
    json_t *updates;      /* array of TableUpdate objects */
};

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

static int update_kind_of(json_t *u)
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
    icm__json_use_icm_allocator();
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
    return (icm_update_kind)update_kind_of(json_array_get(c->updates, i));
}

int icm_table_changes_to_json(const icm_table_changes *c, char **out, size_t *out_len)
{
    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    if (c == NULL)
        return bad("changes", "is NULL");
    icm__json_use_icm_allocator();
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
    icm__json_use_icm_allocator();
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
    int kind = update_kind_of(u);
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

static int64_t int_or(json_t *doc, const char *key, int64_t dflt)
{
    json_t *v = json_object_get(doc, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
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
            int64_t id = int_or(field, "field-id", last);
            last = id > last ? id : last;
        }
    }
    json_array_foreach(json_object_get(doc, "partition-spec"), k, field) {
        int64_t id = int_or(field, "field-id", last);
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
        have = int_or(doc, "last-column-id", -1);
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
        have = int_or(doc, "default-sort-order-id", 0);
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

/* ------------------------------------------------------------------------------------------ */
/* apply                                                                                       */

/* Members an update may change; each is made private once per apply (see the file comment). */
static const char *const private_keys[] = {
    "snapshots",  "refs",    "snapshot-log",    "statistics", "partition-statistics",
    "properties", "schemas", "partition-specs",
};

typedef struct work {
    json_t *doc;         /* the new top-level object (ours) */
    unsigned owned;      /* bit k: private_keys[k] is ours */
    int format_version;
    int64_t *added;      /* snapshot ids add-snapshot added in this apply */
    size_t n_added, cap_added;
    const char *file;    /* base's file, for messages */
    size_t index;        /* of the update being applied */
} work;

static int invalid(const work *w, const char *fmt, ...) ICM__PRINTF(2, 3);

static int invalid(const work *w, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, w->file, "updates[%zu] %s", w->index,
                          detail);
}

/* A new array or object holding the same values as `v` (jansson's json_copy ignores failures
 * to add a member, which would silently drop it). NULL on ENOMEM. */
static json_t *shallow_copy(json_t *v)
{
    json_t *out = json_is_array(v) ? json_array() : json_object();
    bool ok = out != NULL;
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            ok = ok && json_array_append(out, e) == 0;
        }
    } else {
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) {
            ok = ok && json_object_set(out, k, e) == 0;
        }
    }
    if (!ok) {
        json_decref(out);
        icm__error_oom();
        return NULL;
    }
    return out;
}

static unsigned private_bit(const char *key)
{
    for (size_t k = 0; k < ICM__ARRAY_LEN(private_keys); k++)
        if (strcmp(private_keys[k], key) == 0)
            return 1u << k;
    return 0;
}

/* Our own copy of member `key` (an array or object), created empty (last) when absent or of
 * another type. NULL on ENOMEM. */
static json_t *own_member(work *w, const char *key, bool array)
{
    unsigned bit = private_bit(key);
    json_t *v = json_object_get(w->doc, key);
    bool right_type = array ? json_is_array(v) : json_is_object(v);
    if (right_type && (w->owned & bit) != 0)
        return v;
    json_t *mine = right_type ? shallow_copy(v) : array ? json_array() : json_object();
    if (mine == NULL || json_object_set_new(w->doc, key, mine) != 0) {
        icm__error_oom();
        return NULL;
    }
    w->owned |= bit;
    return mine;
}

static json_t *find_by_int(json_t *arr, const char *key, int64_t id, size_t *at)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        json_t *v = json_object_get(e, key);
        if (json_is_integer(v) && json_integer_value(v) == id) {
            if (at != NULL)
                *at = i;
            return e;
        }
    }
    return NULL;
}

static bool set_int(json_t *o, const char *key, int64_t v)
{
    return json_object_set_new(o, key, json_integer(v)) == 0;
}

static int apply_add_snapshot(work *w, json_t *u)
{
    json_t *snap = json_object_get(u, "snapshot");
    int64_t id = (int64_t)json_integer_value(json_object_get(snap, "snapshot-id"));
    if (find_by_int(json_object_get(w->doc, "snapshots"), "snapshot-id", id, NULL) != NULL)
        return invalid(w, "add-snapshot: snapshot %" PRId64 " already exists", id);
    json_t *seq = json_object_get(snap, "sequence-number");
    if (w->format_version >= 2 && json_is_integer(seq) &&
        json_object_get(snap, "parent-snapshot-id") != NULL &&
        json_integer_value(seq) <= int_or(w->doc, "last-sequence-number", 0))
        return invalid(w, "add-snapshot: sequence number %" PRId64
                          " is not above the last sequence number %" PRId64,
                       (int64_t)json_integer_value(seq),
                       int_or(w->doc, "last-sequence-number", 0));
    int64_t next_row_id = int_or(w->doc, "next-row-id", 0);
    json_t *first = json_object_get(snap, "first-row-id");
    if (w->format_version >= 3 && json_is_integer(first) &&
        json_integer_value(first) < next_row_id)
        return invalid(w, "add-snapshot: first-row-id %" PRId64 " is behind next-row-id %" PRId64,
                       (int64_t)json_integer_value(first), next_row_id);
    if (w->n_added == w->cap_added) {
        size_t cap = w->cap_added ? w->cap_added * 2 : 4;
        int64_t *grown = icm__reallocarray(w->added, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        w->added = grown;
        w->cap_added = cap;
    }
    json_t *snapshots = own_member(w, "snapshots", true);
    if (snapshots == NULL || json_array_append(snapshots, snap) != 0)
        return icm__error_oom();
    w->added[w->n_added++] = id;
    bool ok = true;
    if (w->format_version >= 2 && json_is_integer(seq))
        ok = json_object_set(w->doc, "last-sequence-number", seq) == 0;
    json_t *rows = json_object_get(snap, "added-rows");
    if (ok && w->format_version >= 3 && json_is_integer(rows))
        ok = set_int(w->doc, "next-row-id", next_row_id + (int64_t)json_integer_value(rows));
    return ok ? 0 : icm__error_oom();
}

/* The time of a snapshot-log entry for a branch moved to an existing snapshot: now, but never
 * before the metadata's last update (a skewed clock must not make history run backwards). */
static int64_t log_time(json_t *doc)
{
    int64_t now = icm__now_ms();
    int64_t last = int_or(doc, "last-updated-ms", now);
    return last > now ? last : now;
}

/* `main` moved to snapshot `id`: current-snapshot-id and a snapshot-log entry; the last update
 * is then no earlier than that entry (Java's builder sets lastUpdatedMillis with it). */
static int move_current(work *w, int64_t id, int64_t time_ms)
{
    json_t *log = own_member(w, "snapshot-log", true);
    json_t *entry = json_object();
    bool ok = log != NULL && entry != NULL && set_int(entry, "timestamp-ms", time_ms) &&
              set_int(entry, "snapshot-id", id);
    if (ok) {
        ok = json_array_append_new(log, entry) == 0;
        entry = NULL;
    }
    json_decref(entry);
    ok = ok && set_int(w->doc, "current-snapshot-id", id);
    json_t *lu = json_object_get(w->doc, "last-updated-ms");
    if (ok && (!json_is_integer(lu) || json_integer_value(lu) < time_ms))
        ok = set_int(w->doc, "last-updated-ms", time_ms);
    return ok ? 0 : icm__error_oom();
}

static bool was_added(const work *w, int64_t id)
{
    for (size_t i = 0; i < w->n_added; i++)
        if (w->added[i] == id)
            return true;
    return false;
}

static int apply_set_ref(work *w, json_t *u)
{
    static const char *const retention[] = {"max-ref-age-ms", "max-snapshot-age-ms",
                                            "min-snapshots-to-keep"};
    const char *name = json_string_value(json_object_get(u, "ref-name"));
    const char *type = json_string_value(json_object_get(u, "type"));
    int64_t id = (int64_t)json_integer_value(json_object_get(u, "snapshot-id"));
    json_t *snap = find_by_int(json_object_get(w->doc, "snapshots"), "snapshot-id", id, NULL);
    if (snap == NULL)
        return invalid(w, "set-snapshot-ref: snapshot %" PRId64 " does not exist", id);
    bool is_main = strcmp(name, "main") == 0;
    if (is_main && strcmp(type, "branch") != 0)
        return invalid(w, "set-snapshot-ref: main must be a branch, not a %s", type);
    if (strcmp(type, "tag") == 0 && (json_object_get(u, "max-snapshot-age-ms") != NULL ||
                                     json_object_get(u, "min-snapshots-to-keep") != NULL))
        return invalid(w, "set-snapshot-ref: tag %s cannot have branch retention fields", name);
    json_t *refs = own_member(w, "refs", false);
    if (refs == NULL)
        return ICM_ENOMEM;
    /* A ref changed in place keeps its members' order and any member icemaint does not know. */
    json_t *old = json_object_get(refs, name);
    json_t *ref = json_is_object(old) ? shallow_copy(old) : json_object();
    bool ok = ref != NULL && set_int(ref, "snapshot-id", id) &&
              json_object_set_new(ref, "type", json_string(type)) == 0;
    for (size_t k = 0; ok && k < ICM__ARRAY_LEN(retention); k++) {
        json_t *v = json_object_get(u, retention[k]);
        if (v != NULL && !json_is_null(v))
            ok = json_object_set(ref, retention[k], v) == 0;
        else
            json_object_del(ref, retention[k]);
    }
    if (!ok || json_object_set_new(refs, name, ref) != 0) {
        if (!ok)
            json_decref(ref);
        return icm__error_oom();
    }
    json_t *cur = json_object_get(w->doc, "current-snapshot-id");
    if (!is_main || (json_is_integer(cur) && json_integer_value(cur) == id))
        return 0;
    /* Java: an added snapshot is logged at its own time, a rollback at the time of change. */
    int64_t t = was_added(w, id) ? int_or(snap, "timestamp-ms", log_time(w->doc))
                                 : log_time(w->doc);
    return move_current(w, id, t);
}

static int apply_remove_ref(work *w, json_t *u)
{
    const char *name = json_string_value(json_object_get(u, "ref-name"));
    /* The spec's main branch never expires; removing it would unset the current snapshot. */
    if (strcmp(name, "main") == 0)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EREFUSED, w->file,
                              "updates[%zu] remove-snapshot-ref: the main branch cannot be "
                              "removed",
                              w->index);
    if (json_object_get(json_object_get(w->doc, "refs"), name) == NULL)
        return 0; /* Java: removing an absent ref changes nothing */
    json_t *refs = own_member(w, "refs", false);
    if (refs == NULL)
        return ICM_ENOMEM;
    json_object_del(refs, name);
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int apply_remove_snapshots(work *w, json_t *u)
{
    json_t *arr = json_object_get(u, "snapshot-ids");
    size_t n = json_array_size(arr);
    int64_t *sorted = icm__calloc(n ? n : 1, sizeof *sorted);
    if (sorted == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        sorted[i] = (int64_t)json_integer_value(json_array_get(arr, i));
    qsort(sorted, n, sizeof *sorted, cmp_i64);
    json_t *cur = json_object_get(w->doc, "current-snapshot-id");
    if (json_is_integer(cur) && json_integer_value(cur) != -1 &&
        bsearch(&(int64_t){(int64_t)json_integer_value(cur)}, sorted, n, sizeof *sorted,
                cmp_i64) != NULL) {
        icm__free(sorted);
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EREFUSED, w->file,
                              "updates[%zu] remove-snapshots: snapshot %" PRId64
                              " is the current snapshot (main branch head) and cannot be "
                              "removed",
                              w->index, (int64_t)json_integer_value(cur));
    }
    json_t *doc = icm__json_without_snapshots(w->doc, sorted, n, NULL, 0);
    icm__free(sorted);
    if (doc == NULL)
        return ICM_ENOMEM;
    json_decref(w->doc);
    w->doc = doc;
    /* Those members are new arrays/objects now; the others are as they were. */
    w->owned |= private_bit("snapshots") | private_bit("refs") | private_bit("snapshot-log") |
                private_bit("statistics") | private_bit("partition-statistics");
    return 0;
}

static int apply_set_properties(work *w, json_t *u)
{
    json_t *props = own_member(w, "properties", false);
    if (props == NULL)
        return ICM_ENOMEM;
    const char *key;
    json_t *value;
    json_object_foreach(json_object_get(u, "updates"), key, value) {
        if (json_object_set(props, key, value) != 0)
            return icm__error_oom();
    }
    return 0;
}

static int apply_remove_properties(work *w, json_t *u)
{
    json_t *removals = json_object_get(u, "removals");
    json_t *have = json_object_get(w->doc, "properties");
    bool any = false;
    size_t i;
    json_t *k;
    json_array_foreach(removals, i, k) {
        any = any || json_object_get(have, json_string_value(k)) != NULL;
    }
    if (!any)
        return 0; /* removing what is not there changes nothing */
    json_t *props = own_member(w, "properties", false);
    if (props == NULL)
        return ICM_ENOMEM;
    json_array_foreach(removals, i, k) {
        json_object_del(props, json_string_value(k));
    }
    return 0;
}

/* Java keeps one statistics file per snapshot: the first entry of that snapshot is replaced
 * in place (later ones of it go), else the new one is appended. */
static int apply_set_stats(work *w, json_t *u, const char *member)
{
    json_t *stats = json_object_get(u, member);
    int64_t id = (int64_t)json_integer_value(json_object_get(stats, "snapshot-id"));
    json_t *arr = own_member(w, member, true);
    if (arr == NULL)
        return ICM_ENOMEM;
    size_t at = 0;
    if (find_by_int(arr, "snapshot-id", id, &at) == NULL)
        return json_array_append(arr, stats) == 0 ? 0 : icm__error_oom();
    if (json_array_set(arr, at, stats) != 0)
        return icm__error_oom();
    for (size_t i = json_array_size(arr); i-- > at + 1;) {
        json_t *v = json_object_get(json_array_get(arr, i), "snapshot-id");
        if (json_is_integer(v) && json_integer_value(v) == id)
            json_array_remove(arr, i);
    }
    return 0;
}

/* Remove the elements of member `member` whose integer `key` is in `ids` (an array of
 * integers); the member is left as it is when none is. */
static int remove_by_ids(work *w, const char *member, const char *key, json_t *ids)
{
    json_t *arr = json_object_get(w->doc, member);
    bool any = false;
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id) {
        any = any || find_by_int(arr, key, (int64_t)json_integer_value(id), NULL) != NULL;
    }
    if (!any)
        return 0;
    arr = own_member(w, member, true);
    if (arr == NULL)
        return ICM_ENOMEM;
    size_t at = 0;
    json_array_foreach(ids, i, id) {
        while (find_by_int(arr, key, (int64_t)json_integer_value(id), &at) != NULL)
            json_array_remove(arr, at);
    }
    return 0;
}

static int apply_remove_stats(work *w, json_t *u, const char *member)
{
    json_t *ids = json_array();
    int rc = ids != NULL && json_array_append(ids, json_object_get(u, "snapshot-id")) == 0
                 ? remove_by_ids(w, member, "snapshot-id", ids)
                 : icm__error_oom();
    json_decref(ids);
    return rc;
}

static int apply_remove_specs(work *w, json_t *u, bool schemas)
{
    json_t *ids = json_object_get(u, schemas ? "schema-ids" : "spec-ids");
    int64_t keep = schemas ? int_or(w->doc, "current-schema-id", 0)
                           : int_or(w->doc, "default-spec-id", 0);
    if (find_by_int(json_object_get(w->doc, schemas ? "schemas" : "partition-specs"),
                    schemas ? "schema-id" : "spec-id", keep, NULL) != NULL) {
        size_t i;
        json_t *id;
        json_array_foreach(ids, i, id) {
            if (json_integer_value(id) == keep)
                return invalid(w, "%s: %s %" PRId64 " cannot be removed",
                               schemas ? "remove-schemas" : "remove-partition-specs",
                               schemas ? "the current schema" : "the default partition spec",
                               keep);
        }
    }
    return remove_by_ids(w, schemas ? "schemas" : "partition-specs",
                         schemas ? "schema-id" : "spec-id", ids);
}

static int apply_one(work *w, json_t *u)
{
    switch ((icm_update_kind)update_kind_of(u)) {
    case ICM_UPDATE_ADD_SNAPSHOT:
        return apply_add_snapshot(w, u);
    case ICM_UPDATE_REMOVE_SNAPSHOTS:
        return apply_remove_snapshots(w, u);
    case ICM_UPDATE_SET_SNAPSHOT_REF:
        return apply_set_ref(w, u);
    case ICM_UPDATE_REMOVE_SNAPSHOT_REF:
        return apply_remove_ref(w, u);
    case ICM_UPDATE_SET_PROPERTIES:
        return apply_set_properties(w, u);
    case ICM_UPDATE_REMOVE_PROPERTIES:
        return apply_remove_properties(w, u);
    case ICM_UPDATE_SET_STATISTICS:
        return apply_set_stats(w, u, "statistics");
    case ICM_UPDATE_REMOVE_STATISTICS:
        return apply_remove_stats(w, u, "statistics");
    case ICM_UPDATE_SET_PARTITION_STATISTICS:
        return apply_set_stats(w, u, "partition-statistics");
    case ICM_UPDATE_REMOVE_PARTITION_STATISTICS:
        return apply_remove_stats(w, u, "partition-statistics");
    case ICM_UPDATE_REMOVE_PARTITION_SPECS:
        return apply_remove_specs(w, u, false);
    case ICM_UPDATE_REMOVE_SCHEMAS:
        return apply_remove_specs(w, u, true);
    }
    return invalid(w, "unknown update");
}

/* The document of `base` with the updates from index `from` on applied (*out new). */
static int apply_doc(const icm_table_changes *c, size_t from, const icm_table_metadata *base,
                     json_t **out)
{
    *out = NULL;
    icm__json_use_icm_allocator();
    work w = {0};
    w.doc = shallow_copy(icm__table_metadata_json(base)); /* members shared */
    w.format_version = icm_table_metadata_format_version(base);
    w.file = base->file;
    if (w.doc == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    for (size_t i = from; rc == 0 && i < json_array_size(c->updates); i++) {
        w.index = i;
        rc = apply_one(&w, json_array_get(c->updates, i));
    }
    icm__free(w.added);
    if (rc != 0) {
        json_decref(w.doc);
        return rc;
    }
    *out = w.doc;
    return 0;
}

int icm__table_changes_apply_range(const icm_table_changes *c, size_t from,
                                   const icm_table_metadata *base, icm_table_metadata **out)
{
    *out = NULL;
    json_t *doc = NULL;
    int rc = apply_doc(c, from, base, &doc);
    return rc == 0 ? icm__table_metadata_wrap(out, doc, base->file) : rc;
}

int icm__table_changes_apply_in_place(const icm_table_changes *c, size_t from,
                                      icm_table_metadata *md)
{
    json_t *doc = NULL;
    int rc = apply_doc(c, from, md, &doc);
    return rc == 0 ? icm__table_metadata_replace_doc(md, doc) : rc;
}

int icm__table_changes_add_snapshot_json(icm_table_changes *c, json_t *snapshot_take)
{
    json_t *u = tagged("action", "add-snapshot");
    bool ok = u != NULL && put(u, "snapshot", snapshot_take);
    if (u == NULL)
        json_decref(snapshot_take);
    return push_update(c, u, ok);
}

int icm_table_changes_apply(const icm_table_changes *c, const icm_table_metadata *base,
                            icm_table_metadata **out)
{
    *out = NULL;
    if (c == NULL || base == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL, "NULL argument");
    return icm__table_changes_apply_range(c, 0, base, out);
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
        switch (update_kind_of(u)) {
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
