/*
 * maint/expire_metadata.c: the table metadata after an expiry, built as a lossless in-memory
 * edit of the base (Java RemoveSnapshots.internalApply steps 7-10, reference semantics §1.2).
 *
 *  - refs the decision dropped (aged out, or pointing at expired snapshots) are removed;
 *  - the expired snapshots are removed by icm_table_metadata_remove_snapshots, which also drops
 *    refs and statistics / partition-statistics entries pointing at them and truncates the
 *    snapshot-log so it has no gaps (Java's updateSnapshotLog: an entry naming a removed
 *    snapshot removes itself and everything before it);
 *  - with clean_expired_metadata, partition specs and schemas that no retained snapshot uses
 *    are removed. Reachable specs start as {default spec}, reachable schemas as {current
 *    schema}; each retained snapshot adds its schema-id; only when the table has more than one
 *    spec are retained manifest lists read for the spec ids of their manifests. Whenever that
 *    cannot be known for sure (a retained snapshot without schema-id, a v1 snapshot with
 *    embedded manifests, a manifest list that cannot be read) nothing of that kind is removed.
 *
 * Reads storage only (manifest lists); never writes.
 */
#include <string.h>

#include "icemaint/manifest.h"
#include "maint/expire_internal.h"
#include "spec/metadata_internal.h"

/* A small set of int32 ids. */
typedef struct id_set {
    int32_t *ids;
    size_t len, cap;
} id_set;

static bool id_set_has(const id_set *s, int32_t id)
{
    for (size_t i = 0; i < s->len; i++)
        if (s->ids[i] == id)
            return true;
    return false;
}

static int id_set_add(id_set *s, int32_t id)
{
    if (id_set_has(s, id))
        return 0;
    if (s->len == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        int32_t *grown = icm__reallocarray(s->ids, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        s->ids = grown;
        s->cap = cap;
    }
    s->ids[s->len++] = id;
    return 0;
}

typedef struct spec_scan {
    id_set *specs;
    size_t spec_total;
    int rc;
} spec_scan;

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    spec_scan *s = payload;
    s->rc = id_set_add(s->specs, mf->partition_spec_id);
    if (s->rc != 0)
        return s->rc;
    /* Stop once every spec is known to be reachable (as Java does). */
    return s->specs->len >= s->spec_total ? ICM_EUSER : 0;
}

/* Spec ids in use. *all = true when every spec must be kept (unknowable, or all in use). */
static int reachable_specs(icm_fileio *io, const icm_table_metadata *md, id_set *specs, bool *all)
{
    *all = false;
    size_t total = icm_table_metadata_spec_count(md);
    int rc = id_set_add(specs, icm_table_metadata_default_spec_id(md));
    if (rc != 0 || total <= 1)
        return rc;
    spec_scan scan = {specs, total, 0};
    icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
    lo.format_version = icm_table_metadata_format_version(md);
    size_t n = icm_table_metadata_snapshot_count(md);
    for (size_t i = 0; i < n && specs->len < total; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (s->manifest_list == NULL) {
            *all = true; /* embedded v1 manifests: spec ids only in each manifest's header */
            return 0;
        }
        rc = icm_manifest_list_read(io, s->manifest_list, &lo, on_manifest, &scan);
        if (scan.rc != 0)
            return scan.rc;
        if (rc == ICM_EUSER)
            break;
        if (rc == ICM_ENOMEM)
            return rc;
        if (rc != 0) {
            *all = true; /* cannot know which specs this snapshot uses: keep them all */
            icm_error_clear();
            return 0;
        }
    }
    *all = specs->len >= total;
    return 0;
}

static int reachable_schemas(const icm_table_metadata *md, id_set *schemas, bool *all)
{
    *all = false;
    int rc = id_set_add(schemas, icm_table_metadata_current_schema_id(md));
    size_t n = icm_table_metadata_snapshot_count(md);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (!s->has_schema_id) {
            *all = true;
            return 0;
        }
        rc = id_set_add(schemas, s->schema_id);
    }
    return rc;
}

/* Drop the elements of doc[array_key] whose integer id_key is not in keep. */
static size_t drop_unreachable(json_t *doc, const char *array_key, const char *id_key,
                               const id_set *keep)
{
    json_t *arr = json_object_get(doc, array_key);
    size_t removed = 0;
    for (size_t i = json_array_size(arr); i-- > 0;) {
        json_t *id = json_object_get(json_array_get(arr, i), id_key);
        if (json_is_integer(id) && !id_set_has(keep, (int32_t)json_integer_value(id))) {
            json_array_remove(arr, i);
            removed++;
        }
    }
    return removed;
}

static int clean_specs_and_schemas(icm_fileio *io, icm_table_metadata *md, size_t *removed_specs,
                                   size_t *removed_schemas)
{
    id_set specs = {NULL, 0, 0}, schemas = {NULL, 0, 0};
    bool all_specs = true, all_schemas = true;
    int rc = reachable_specs(io, md, &specs, &all_specs);
    if (rc == 0)
        rc = reachable_schemas(md, &schemas, &all_schemas);
    if (rc == 0 && (!all_specs || !all_schemas)) {
        icm__json_use_icm_allocator();
        json_t *doc = json_deep_copy(icm__table_metadata_json(md));
        if (doc == NULL) {
            rc = icm__error_oom();
        } else {
            size_t ns = all_specs ? 0 : drop_unreachable(doc, "partition-specs", "spec-id", &specs);
            size_t nc = all_schemas ? 0 : drop_unreachable(doc, "schemas", "schema-id", &schemas);
            if (ns + nc == 0) {
                json_decref(doc); /* nothing unreachable: record no change */
            } else if ((rc = icm__table_metadata_replace_doc(md, doc)) == 0) {
                *removed_specs = ns;
                *removed_schemas = nc;
            }
        }
    }
    icm__free(specs.ids);
    icm__free(schemas.ids);
    return rc;
}

int icm__expire_edit_metadata(icm_fileio *io, const icm_table_metadata *base,
                              const icm_expire_decision *d, bool clean_expired_metadata,
                              icm_table_metadata **out, bool *changed, size_t *removed_specs,
                              size_t *removed_schemas)
{
    *out = NULL;
    *changed = false;
    *removed_specs = 0;
    *removed_schemas = 0;
    /* One new document, sharing what it keeps with base's: the expired snapshots, the refs the
     * decision removes and those on expired snapshots go (`main` always stays). */
    icm_table_metadata *md = NULL;
    int rc = icm__table_metadata_without_snapshots(base, d->expired_ids, d->expired_count,
                                                   (const char *const *)d->removed_refs,
                                                   d->removed_ref_count, &md);
    if (rc != 0)
        return rc;
    if (clean_expired_metadata)
        rc = clean_specs_and_schemas(io, md, removed_specs, removed_schemas);
    if (rc != 0) {
        icm_table_metadata_free(md);
        return rc;
    }
    *changed = d->expired_count > 0 || d->removed_ref_count > 0 || *removed_specs > 0 ||
               *removed_schemas > 0;
    *out = md;
    return 0;
}
