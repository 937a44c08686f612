/*
 * spec/metadata_update_seen.c: whether a metadata document shows the effect of requirements and
 * updates (icm_table_changes_seen, include/icemaint/update.h): how a commit whose answer was
 * lost is reconciled against the table as it is now.
 *
 * Two strengths of evidence. A snapshot that add-snapshot adds carries our own snapshot id and
 * our own manifest list (a file this commit wrote under a fresh name): finding that snapshot
 * proves that the commit, which is atomic, applied as a whole. Every other update only says
 * what the table should look like afterwards (a ref here, a snapshot gone, a property set), and
 * another writer can bring the table to that same state: that evidence says "the table shows
 * the change", not "ours applied". Both are read on the document as it is; nothing is inferred
 * from what is absent beyond the update's own effect.
 */
#include <string.h>
#include <strings.h>

#include "spec/metadata_update_internal.h"

static json_t *find_by_int(json_t *arr, const char *key, int64_t id)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        json_t *v = json_object_get(e, key);
        if (json_is_integer(v) && (int64_t)json_integer_value(v) == id)
            return e;
    }
    return NULL;
}

static bool same_string_member(json_t *a, json_t *b, const char *key)
{
    const char *x = json_string_value(json_object_get(a, key));
    const char *y = json_string_value(json_object_get(b, key));
    return x != NULL && y != NULL && strcmp(x, y) == 0;
}

/* Our snapshot is in `doc`: the same id with the same manifest list (v1 snapshots without one
 * are compared by their `manifests` arrays) and the same timestamp; or no snapshot has its id
 * and one names it as its parent. */
static bool snapshot_is_ours(json_t *doc, json_t *u)
{
    json_t *mine = json_object_get(u, "snapshot");
    json_t *id = json_object_get(mine, "snapshot-id");
    if (!json_is_integer(id))
        return false;
    json_t *there = find_by_int(json_object_get(doc, "snapshots"), "snapshot-id",
                                (int64_t)json_integer_value(id));
    if (there == NULL) {
        /* Gone (expired since), but a snapshot built on it names it as its parent: a writer
         * saw it committed (adversary round 19, G1b). */
        return find_by_int(json_object_get(doc, "snapshots"), "parent-snapshot-id",
                           (int64_t)json_integer_value(id)) != NULL;
    }
    if (!json_equal(json_object_get(there, "timestamp-ms"), json_object_get(mine, "timestamp-ms")))
        return false;
    if (json_object_get(mine, "manifest-list") != NULL)
        return same_string_member(there, mine, "manifest-list");
    json_t *manifests = json_object_get(mine, "manifests");
    return json_array_size(manifests) > 0 &&
           json_equal(manifests, json_object_get(there, "manifests"));
}

/* Every id of the array `ids` is absent from the elements of `arr` (by integer `key`). */
static bool none_left(json_t *arr, const char *key, json_t *ids)
{
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id) {
        if (!json_is_integer(id) ||
            find_by_int(arr, key, (int64_t)json_integer_value(id)) != NULL)
            return false;
    }
    return true;
}

/* The ref is where set-snapshot-ref put it, of its type, with the retention it set. */
static bool ref_as_set(json_t *doc, json_t *u)
{
    static const char *const retention[] = {"max-ref-age-ms", "max-snapshot-age-ms",
                                            "min-snapshots-to-keep"};
    const char *name = json_string_value(json_object_get(u, "ref-name"));
    json_t *ref = name != NULL ? json_object_get(json_object_get(doc, "refs"), name) : NULL;
    if (!json_is_object(ref) ||
        !json_equal(json_object_get(ref, "snapshot-id"), json_object_get(u, "snapshot-id")) ||
        !same_string_member(ref, u, "type"))
        return false;
    for (size_t k = 0; k < ICM__ARRAY_LEN(retention); k++) {
        json_t *want = json_object_get(u, retention[k]);
        json_t *have = json_object_get(ref, retention[k]);
        bool want_none = want == NULL || json_is_null(want);
        bool have_none = have == NULL || json_is_null(have);
        if (want_none != have_none || (!want_none && !json_equal(want, have)))
            return false;
    }
    return true;
}

static bool properties_as_set(json_t *doc, json_t *u)
{
    json_t *props = json_object_get(doc, "properties");
    const char *key;
    json_t *value;
    json_object_foreach(json_object_get(u, "updates"), key, value) {
        if (!json_equal(json_object_get(props, key), value))
            return false;
    }
    return true;
}

static bool properties_removed(json_t *doc, json_t *u)
{
    json_t *props = json_object_get(doc, "properties");
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(u, "removals"), i, k) {
        if (!json_is_string(k) || json_object_get(props, json_string_value(k)) != NULL)
            return false;
    }
    return true;
}

/* The statistics entry of that snapshot names the file set-(partition-)statistics set. */
static bool statistics_as_set(json_t *doc, json_t *u, const char *member)
{
    json_t *mine = json_object_get(u, member);
    json_t *id = json_object_get(mine, "snapshot-id");
    if (!json_is_integer(id))
        return false;
    json_t *there = find_by_int(json_object_get(doc, member), "snapshot-id",
                                (int64_t)json_integer_value(id));
    return there != NULL && same_string_member(there, mine, "statistics-path");
}

static bool statistics_removed(json_t *doc, json_t *u, const char *member)
{
    json_t *id = json_object_get(u, "snapshot-id");
    return json_is_integer(id) &&
           find_by_int(json_object_get(doc, member), "snapshot-id",
                       (int64_t)json_integer_value(id)) == NULL;
}

/* Whether `doc` shows the effect of update `u` (add-snapshot: our snapshot is there). */
static bool effect_shown(json_t *doc, json_t *u)
{
    switch ((icm_update_kind)icm__update_kind_of(u)) {
    case ICM_UPDATE_ADD_SNAPSHOT:
        return snapshot_is_ours(doc, u);
    case ICM_UPDATE_REMOVE_SNAPSHOTS:
        return none_left(json_object_get(doc, "snapshots"), "snapshot-id",
                         json_object_get(u, "snapshot-ids"));
    case ICM_UPDATE_SET_SNAPSHOT_REF:
        return ref_as_set(doc, u);
    case ICM_UPDATE_REMOVE_SNAPSHOT_REF: {
        const char *name = json_string_value(json_object_get(u, "ref-name"));
        return name != NULL && json_object_get(json_object_get(doc, "refs"), name) == NULL;
    }
    case ICM_UPDATE_SET_PROPERTIES:
        return properties_as_set(doc, u);
    case ICM_UPDATE_REMOVE_PROPERTIES:
        return properties_removed(doc, u);
    case ICM_UPDATE_SET_STATISTICS:
        return statistics_as_set(doc, u, "statistics");
    case ICM_UPDATE_REMOVE_STATISTICS:
        return statistics_removed(doc, u, "statistics");
    case ICM_UPDATE_SET_PARTITION_STATISTICS:
        return statistics_as_set(doc, u, "partition-statistics");
    case ICM_UPDATE_REMOVE_PARTITION_STATISTICS:
        return statistics_removed(doc, u, "partition-statistics");
    case ICM_UPDATE_REMOVE_PARTITION_SPECS:
        return none_left(json_object_get(doc, "partition-specs"), "spec-id",
                         json_object_get(u, "spec-ids"));
    case ICM_UPDATE_REMOVE_SCHEMAS:
        return none_left(json_object_get(doc, "schemas"), "schema-id",
                         json_object_get(u, "schema-ids"));
    }
    return false; /* an action icemaint does not know: nothing can be told */
}

/* assert-table-uuid, when the changes carry one, names `doc`'s table. */
static bool same_table(json_t *requirements, json_t *doc)
{
    size_t i;
    json_t *r;
    json_array_foreach(requirements, i, r) {
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type == NULL || strcmp(type, "assert-table-uuid") != 0)
            continue;
        const char *want = json_string_value(json_object_get(r, "uuid"));
        const char *have = json_string_value(json_object_get(doc, "table-uuid"));
        if (want == NULL || have == NULL || strcasecmp(want, have) != 0)
            return false;
    }
    return true;
}

int icm_table_changes_seen(icm_changes_seen *out, const icm_table_changes *c,
                           const icm_table_metadata *md)
{
    if (out != NULL)
        *out = ICM_CHANGES_NOT_SEEN;
    if (c == NULL || md == NULL || out == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL, "NULL argument");
    json_t *doc = md->doc;
    if (json_array_size(c->updates) == 0 || !same_table(c->requirements, doc))
        return 0;
    size_t i;
    json_t *u;
    bool all = true, adds = false;
    json_array_foreach(c->updates, i, u) {
        bool add = icm__update_kind_of(u) == (int)ICM_UPDATE_ADD_SNAPSHOT;
        bool shown = effect_shown(doc, u);
        /* Our own snapshot proves the whole (atomic) commit, whatever came after it. */
        if (add && shown) {
            *out = ICM_CHANGES_SEEN_OURS;
            return 0;
        }
        adds = adds || add;
        all = all && shown;
    }
    /* A change that adds a snapshot is told only by that snapshot: when it is not there (or
     * was removed since), the other effects prove nothing about this commit. */
    *out = all && !adds ? ICM_CHANGES_SEEN : ICM_CHANGES_NOT_SEEN;
    return 0;
}
