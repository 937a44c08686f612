/*
 * spec/metadata_update_apply.c: applying updates to a base metadata (icm_table_changes_apply,
 * include/icemaint/update.h), with Java TableMetadata.Builder's semantics.
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

#include "spec/metadata_update_internal.h"

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
        json_integer_value(seq) <= icm__json_int_or(w->doc, "last-sequence-number", 0))
        return invalid(w, "add-snapshot: sequence number %" PRId64
                          " is not above the last sequence number %" PRId64,
                       (int64_t)json_integer_value(seq),
                       icm__json_int_or(w->doc, "last-sequence-number", 0));
    int64_t next_row_id = icm__json_int_or(w->doc, "next-row-id", 0);
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
    int64_t last = icm__json_int_or(doc, "last-updated-ms", now);
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
    int64_t t = was_added(w, id) ? icm__json_int_or(snap, "timestamp-ms", log_time(w->doc))
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
    /* A ref still on a removed snapshot: Java drops such refs silently (a dangling ref), so a
     * tag or branch another writer put on the snapshot after this change was decided would go
     * with it, and the snapshot's files after it. icemaint's changes remove the refs they mean
     * to remove first (remove-snapshot-ref), so one left here was added or moved since: the
     * change was decided on other metadata, a conflict, and the retry decides again (review
     * round 12, F1). */
    const char *ref_name;
    json_t *ref;
    json_object_foreach(json_object_get(w->doc, "refs"), ref_name, ref) {
        json_t *id = json_object_get(ref, "snapshot-id");
        if (!json_is_integer(id) ||
            bsearch(&(int64_t){(int64_t)json_integer_value(id)}, sorted, n, sizeof *sorted,
                    cmp_i64) == NULL)
            continue;
        icm__free(sorted);
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, w->file,
                              "updates[%zu] remove-snapshots: snapshot %" PRId64
                              " is still the head of ref '%s' (added or moved since the change "
                              "was decided; remove-snapshot-ref removes a ref first)",
                              w->index, (int64_t)json_integer_value(id), ref_name);
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
    int64_t keep = schemas ? icm__json_int_or(w->doc, "current-schema-id", 0)
                           : icm__json_int_or(w->doc, "default-spec-id", 0);
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
    switch ((icm_update_kind)icm__update_kind_of(u)) {
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

int icm_table_changes_apply(icm_table_metadata **out, const icm_table_changes *c,
                            const icm_table_metadata *base)
{
    *out = NULL;
    if (c == NULL || base == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL, "NULL argument");
    return icm__table_changes_apply_range(c, 0, base, out);
}

