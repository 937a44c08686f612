/*
 * spec/metadata_edit.c: lossless edits of table metadata (include/icemaint/metadata.h).
 *
 * Every edit builds a new JSON document (a deep copy it then changes, or for removing snapshots
 * a new document sharing every value it keeps with the old one: documents are never changed
 * once they back an object), then re-validates it and rebuilds the views
 * (icm__table_metadata_replace_doc); only when all of that succeeded does the new document
 * replace the old. So an edit either applies completely or, on ICM_ENOMEM or a validation
 * failure, leaves the object exactly as it was. Fields icemaint does not know are never looked
 * at, so they survive untouched and in their original order.
 */
#include <inttypes.h>
#include <string.h>

#include "spec/metadata_internal.h"

static int bad_argument(const char *what)
{
    return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "%s", what);
}

static json_t *copy_doc(const icm_table_metadata *md)
{
    json_t *doc = json_deep_copy(icm__table_metadata_json(md));
    if (doc == NULL)
        icm__error_oom();
    return doc;
}

static int check_text(const char *what, const char *s)
{
    if (s == NULL)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "%s is NULL", what);
    if (!icm__utf8_valid(s, strlen(s))) /* jansson refuses anything else */
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "%s is not valid UTF-8",
                              what);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* remove snapshots                                                                            */

static bool id_in(const int64_t *ids, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether id is in the sorted ids. */
static bool id_in_sorted(const int64_t *ids, size_t n, int64_t id)
{
    return n > 0 && bsearch(&id, ids, n, sizeof *ids, cmp_i64) != NULL;
}

/* Integer member `key` of obj, or false when absent or not an integer. */
static bool int_member(json_t *obj, const char *key, int64_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return false;
    *out = (int64_t)json_integer_value(v);
    return true;
}

/* The elements of `arr` whose `snapshot-id` is not in the sorted ids, from index `from` on, in
 * a new array that shares them (NULL on ENOMEM). */
static json_t *kept_elements(json_t *arr, size_t from, const int64_t *sorted, size_t n)
{
    json_t *kept = json_array();
    int64_t id;
    for (size_t i = from; kept != NULL && i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        if (int_member(e, "snapshot-id", &id) && id_in_sorted(sorted, n, id))
            continue;
        if (json_array_append(kept, e) != 0) {
            json_decref(kept);
            kept = NULL;
        }
    }
    return kept;
}

/* The snapshot ids of `snapshots`, sorted (new; *n entries). */
static int sorted_snapshot_ids(json_t *snapshots, int64_t **out, size_t *n)
{
    size_t len = json_array_size(snapshots);
    *n = 0;
    *out = icm__calloc(len ? len : 1, sizeof **out);
    if (*out == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < len; i++)
        if (int_member(json_array_get(snapshots, i), "snapshot-id", &(*out)[*n]))
            (*n)++;
    qsort(*out, *n, sizeof **out, cmp_i64);
    return 0;
}

/*
 * Java's rule (TableMetadata.Builder#updateSnapshotLog): an entry whose snapshot no longer exists
 * removes itself and every entry before it, because otherwise the history would claim that a
 * removed snapshot was current at some time while later state was derived from it. The entries
 * kept, in a new array sharing them (NULL on ENOMEM).
 */
static json_t *trimmed_snapshot_log(json_t *log, json_t *snapshots)
{
    int64_t *live, id;
    size_t n;
    if (sorted_snapshot_ids(snapshots, &live, &n) != 0)
        return NULL;
    size_t cut = 0; /* entries [0, cut) are dropped */
    for (size_t i = 0; i < json_array_size(log); i++)
        if (int_member(json_array_get(log, i), "snapshot-id", &id) && !id_in_sorted(live, n, id))
            cut = i + 1;
    icm__free(live);
    return kept_elements(log, cut, NULL, 0);
}

static bool name_in(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* The refs kept: not named in `drop` (`main` always stays) and not on a removed snapshot. */
static json_t *kept_refs(json_t *refs, const int64_t *sorted, size_t n, const char *const *drop,
                         size_t n_drop)
{
    json_t *kept = json_object();
    const char *name;
    json_t *ref;
    int64_t id;
    json_object_foreach(refs, name, ref) {
        if (kept == NULL)
            break;
        if ((strcmp(name, "main") != 0 && name_in(drop, n_drop, name)) ||
            (int_member(ref, "snapshot-id", &id) && id_in_sorted(sorted, n, id)))
            continue;
        if (json_object_set(kept, name, ref) != 0) {
            json_decref(kept);
            kept = NULL;
        }
    }
    return kept;
}

/*
 * A new document: `doc` without the snapshots of the sorted ids, without the refs named in
 * `drop_refs` and the refs on removed snapshots, with the snapshot-log trimmed and statistics
 * and partition-statistics of removed snapshots dropped. Every other value, and every element
 * kept, is shared with `doc`, not copied: documents are never changed once wrapped (every
 * edit changes a copy of its own), so sharing is safe, and an expiry of thousands of snapshots
 * does not copy them all (jansson counts references atomically, so objects sharing values may
 * be freed on different threads). Members keep their order. NULL on ENOMEM.
 */
json_t *icm__json_without_snapshots(json_t *doc, const int64_t *sorted, size_t n,
                                    const char *const *drop_refs, size_t n_drop)
{
    json_t *out = json_object();
    json_t *snapshots = kept_elements(json_object_get(doc, "snapshots"), 0, sorted, n);
    const char *key;
    json_t *value;
    bool ok = out != NULL && snapshots != NULL;
    json_object_foreach(doc, key, value) {
        if (!ok)
            break;
        json_t *fresh = NULL;
        if (strcmp(key, "snapshots") == 0)
            fresh = json_incref(snapshots);
        else if (strcmp(key, "refs") == 0)
            fresh = kept_refs(value, sorted, n, drop_refs, n_drop);
        else if (strcmp(key, "snapshot-log") == 0)
            fresh = trimmed_snapshot_log(value, snapshots);
        else if (strcmp(key, "statistics") == 0 || strcmp(key, "partition-statistics") == 0)
            fresh = kept_elements(value, 0, sorted, n);
        else
            fresh = json_incref(value);
        ok = fresh != NULL && json_object_set_new(out, key, fresh) == 0;
    }
    json_decref(snapshots);
    if (!ok) {
        json_decref(out);
        icm__error_oom();
        return NULL;
    }
    return out;
}

/* The current snapshot is never removed; `sorted` gets a sorted copy of the ids. */
static int prepare_removal(const icm_table_metadata *md, const int64_t *ids, size_t n,
                           int64_t **sorted)
{
    int64_t current;
    if (icm_table_metadata_current_snapshot_id(&current, md) && id_in(ids, n, current))
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EREFUSED, md->file,
                              "snapshot %" PRId64 " is the current snapshot (main branch head) "
                              "and cannot be removed", current);
    *sorted = icm__calloc(n ? n : 1, sizeof **sorted);
    if (*sorted == NULL)
        return icm__error_oom();
    if (n > 0)
        memcpy(*sorted, ids, n * sizeof **sorted);
    qsort(*sorted, n, sizeof **sorted, cmp_i64);
    return 0;
}

int icm_table_metadata_remove_snapshots(icm_table_metadata *md, const int64_t *ids, size_t n)
{
    if (md == NULL || (ids == NULL && n > 0))
        return bad_argument("NULL argument");
    int64_t *sorted = NULL;
    int rc = prepare_removal(md, ids, n, &sorted);
    if (rc != 0)
        return rc;
    json_t *doc = icm__json_without_snapshots(icm__table_metadata_json(md), sorted, n, NULL, 0);
    icm__free(sorted);
    return doc != NULL ? icm__table_metadata_replace_doc(md, doc) : ICM_ENOMEM;
}

int icm__table_metadata_without_snapshots(const icm_table_metadata *base, const int64_t *ids,
                                          size_t n, const char *const *drop_refs,
                                          size_t n_drop, icm_table_metadata **out)
{
    *out = NULL;
    int64_t *sorted = NULL;
    int rc = prepare_removal(base, ids, n, &sorted);
    if (rc != 0)
        return rc;
    json_t *doc = icm__json_without_snapshots(icm__table_metadata_json(base), sorted, n,
                                              drop_refs, n_drop);
    icm__free(sorted);
    return doc != NULL ? icm__table_metadata_wrap(out, doc, base->file) : ICM_ENOMEM;
}

/* ------------------------------------------------------------------------------------------ */
/* refs and properties                                                                         */

int icm_table_metadata_remove_ref(icm_table_metadata *md, const char *name)
{
    if (md == NULL || name == NULL)
        return bad_argument("NULL argument");
    /* The spec's main branch never expires; removing it would unset the current snapshot. */
    if (strcmp(name, "main") == 0)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EREFUSED, md->file,
                              "refs.main: the main branch cannot be removed");
    if (json_object_get(json_object_get(icm__table_metadata_json(md), "refs"), name) == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_ENOTFOUND, md->file,
                              "refs.%s: no such ref", name);
    json_t *doc = copy_doc(md);
    if (doc == NULL)
        return ICM_ENOMEM;
    json_object_del(json_object_get(doc, "refs"), name);
    return icm__table_metadata_replace_doc(md, doc);
}

int icm_table_metadata_set_property(icm_table_metadata *md, const char *key, const char *value)
{
    if (md == NULL)
        return bad_argument("NULL argument");
    int rc = check_text("property key", key);
    if (rc == 0 && value != NULL)
        rc = check_text("property value", value);
    if (rc != 0)
        return rc;
    json_t *props = json_object_get(icm__table_metadata_json(md), "properties");
    if (value == NULL && json_object_get(props, key) == NULL)
        return 0; /* removing what is not there changes nothing */
    json_t *doc = copy_doc(md);
    if (doc == NULL)
        return ICM_ENOMEM;
    props = json_object_get(doc, "properties");
    if (value == NULL) {
        json_object_del(props, key);
        return icm__table_metadata_replace_doc(md, doc);
    }
    if (props == NULL) {
        props = json_object();
        if (props == NULL || json_object_set_new(doc, "properties", props) != 0)
            goto oom;
    }
    if (json_object_set_new(props, key, json_string(value)) != 0)
        goto oom;
    return icm__table_metadata_replace_doc(md, doc);
oom:
    json_decref(doc);
    return icm__error_oom();
}

/* ------------------------------------------------------------------------------------------ */
/* metadata-log and last-updated-ms                                                            */

int icm_table_metadata_append_metadata_log(icm_table_metadata *md, int64_t timestamp_ms,
                                           const char *file)
{
    if (md == NULL)
        return bad_argument("NULL argument");
    int rc = check_text("metadata file", file);
    if (rc != 0)
        return rc;
    json_t *doc = copy_doc(md);
    if (doc == NULL)
        return ICM_ENOMEM;
    json_t *log = json_object_get(doc, "metadata-log");
    if (!json_is_array(log)) { /* absent or null */
        log = json_array();
        if (log == NULL || json_object_set_new(doc, "metadata-log", log) != 0)
            goto oom;
    }
    /* Key order as Java writes it. */
    json_t *entry = json_object();
    if (entry == NULL || json_array_append_new(log, entry) != 0 ||
        json_object_set_new(entry, "timestamp-ms", json_integer(timestamp_ms)) != 0 ||
        json_object_set_new(entry, "metadata-file", json_string(file)) != 0)
        goto oom;
    return icm__table_metadata_replace_doc(md, doc);
oom:
    json_decref(doc);
    return icm__error_oom();
}

int icm_table_metadata_trim_metadata_log(icm_table_metadata *md, size_t keep)
{
    if (md == NULL)
        return bad_argument("NULL argument");
    json_t *log = json_object_get(icm__table_metadata_json(md), "metadata-log");
    if (json_array_size(log) <= keep)
        return 0;
    json_t *doc = copy_doc(md);
    if (doc == NULL)
        return ICM_ENOMEM;
    log = json_object_get(doc, "metadata-log");
    while (json_array_size(log) > keep)
        json_array_remove(log, 0);
    return icm__table_metadata_replace_doc(md, doc);
}

int icm_table_metadata_set_last_updated_ms(icm_table_metadata *md, int64_t ms)
{
    if (md == NULL)
        return bad_argument("NULL argument");
    json_t *doc = copy_doc(md);
    if (doc == NULL)
        return ICM_ENOMEM;
    /* Replacing an existing key keeps its position in jansson's ordered objects. */
    if (json_object_set_new(doc, "last-updated-ms", json_integer(ms)) != 0) {
        json_decref(doc);
        return icm__error_oom();
    }
    return icm__table_metadata_replace_doc(md, doc);
}
