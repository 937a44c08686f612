/*
 * maint/expire_metadata.c: the commit of an expiry, as requirements and updates, and the table
 * metadata they give (a lossless in-memory edit of the base) (Java RemoveSnapshots.internalApply steps 7-10, reference semantics §1.2).
 *
 *  - expressed as requirements and updates (icemaint/update.h), as Java's builder records
 *    them: assert-table-uuid and assert-ref-snapshot-id for every ref of the base (what the
 *    decision was made on); remove-snapshot-ref for the refs the decision dropped (aged out,
 *    or pointing at expired snapshots); remove-snapshots, which also drops refs and
 *    statistics / partition-statistics entries pointing at them and truncates the
 *    snapshot-log so it has no gaps (Java's updateSnapshotLog: an entry naming a removed
 *    snapshot removes itself and everything before it); remove-statistics /
 *    remove-partition-statistics for the expired snapshots that have them;
 *  - with clean_expired_metadata, partition specs and schemas that no retained snapshot uses
 *    are removed. Reachable specs start as {default spec}, reachable schemas as {current
 *    schema}; each retained snapshot adds its schema-id; only when the table has more than one
 *    spec are retained manifest lists read for the spec ids of their manifests (the updates
 *    are remove-partition-specs and remove-schemas). Whenever that
 *    cannot be known for sure (a retained snapshot without schema-id, a v1 snapshot with
 *    embedded manifests, a manifest list that cannot be read) nothing of that kind is removed;
 *  - set-properties `icemaint.last-expire-ms` = the expiry's now (icemaint/health.h), in the
 *    same commit, when snapshots or refs are removed: the health report's last expiry.
 *
 * Reads storage only (manifest lists); never writes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "icemaint/health.h"
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

/* The ids of the elements of `arr` whose integer `id_key` is not in keep (new, *n of them). */
static int unreachable_ids(json_t *arr, const char *id_key, const id_set *keep, int32_t **out,
                           size_t *n)
{
    *n = 0;
    *out = icm__calloc(json_array_size(arr) ? json_array_size(arr) : 1, sizeof **out);
    if (*out == NULL)
        return ICM_ENOMEM;
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        json_t *id = json_object_get(e, id_key);
        if (json_is_integer(id) && !id_set_has(keep, (int32_t)json_integer_value(id)))
            (*out)[(*n)++] = (int32_t)json_integer_value(id);
    }
    return 0;
}

/* Java cleanExpiredMetadata: remove-partition-specs and remove-schemas for what no retained
 * snapshot of `md` (the metadata after the snapshot updates) uses. */
static int add_spec_and_schema_removals(icm_fileio *io, const icm_table_metadata *md,
                                        icm_table_changes *c, size_t *removed_specs,
                                        size_t *removed_schemas)
{
    id_set specs = {NULL, 0, 0}, schemas = {NULL, 0, 0};
    bool all_specs = true, all_schemas = true;
    int32_t *ids = NULL;
    size_t n = 0;
    json_t *doc = icm__table_metadata_json(md);
    int rc = reachable_specs(io, md, &specs, &all_specs);
    if (rc == 0)
        rc = reachable_schemas(md, &schemas, &all_schemas);
    if (rc == 0 && !all_specs)
        rc = unreachable_ids(json_object_get(doc, "partition-specs"), "spec-id", &specs, &ids,
                             &n);
    if (rc == 0 && n > 0 && (rc = icm_table_changes_remove_partition_specs(c, ids, n)) == 0)
        *removed_specs = n;
    icm__free(ids);
    ids = NULL;
    n = 0;
    if (rc == 0 && !all_schemas)
        rc = unreachable_ids(json_object_get(doc, "schemas"), "schema-id", &schemas, &ids, &n);
    if (rc == 0 && n > 0 && (rc = icm_table_changes_remove_schemas(c, ids, n)) == 0)
        *removed_schemas = n;
    icm__free(ids);
    icm__free(specs.ids);
    icm__free(schemas.ids);
    return rc;
}

/* What the expiry asserts about the base it decided on: the table, and every ref where the
 * decision found it, so a concurrent commit that moved, made or removed a ref fails the
 * commit definitively and the retry decides again. */
static int add_requirements(const icm_table_metadata *base, icm_table_changes *c)
{
    const char *uuid = icm_table_metadata_uuid(base);
    int rc = uuid != NULL ? icm_table_changes_require_table_uuid(c, uuid) : 0;
    size_t n = icm_table_metadata_ref_count(base);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(base, i);
        rc = icm_table_changes_require_ref_snapshot_id(c, ref->name, &ref->snapshot_id);
    }
    return rc;
}

/* Java RemoveSnapshots: remove-snapshot-ref for each ref dropped, remove-snapshots, and (as
 * the builder records them) remove-statistics / remove-partition-statistics for each expired
 * snapshot that has such an entry. `main` always stays (never in a decision). */
static int add_snapshot_updates(const icm_table_metadata *base, const icm_expire_decision *d,
                                icm_table_changes *c)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < d->removed_ref_count; i++)
        if (strcmp(d->removed_refs[i], "main") != 0)
            rc = icm_table_changes_remove_snapshot_ref(c, d->removed_refs[i]);
    if (rc == 0 && d->expired_count > 0)
        rc = icm_table_changes_remove_snapshots(c, d->expired_ids, d->expired_count);
    size_t ns = icm_table_metadata_statistics_count(base);
    for (int partition = 0; rc == 0 && partition < 2 && ns > 0; partition++) {
        for (size_t k = 0; rc == 0 && k < d->expired_count; k++) {
            for (size_t j = 0; j < ns; j++) {
                const icm_statistics_file *sf = icm_table_metadata_statistics_at(base, j);
                if (sf->snapshot_id != d->expired_ids[k] || sf->partition_statistics != partition)
                    continue;
                rc = partition ? icm_table_changes_remove_partition_statistics(c, sf->snapshot_id)
                               : icm_table_changes_remove_statistics(c, sf->snapshot_id);
                break;
            }
        }
    }
    return rc;
}

/* icemaint's record of this expiry (icemaint/health.h, ICM_LAST_EXPIRE_PROPERTY): set in the
 * very commit that removes the snapshots, so it is true exactly when they are gone (a second
 * commit could fail or race after the first landed). Only a commit that removes snapshots or
 * refs records it: an expiry with nothing to remove commits nothing, and a commit that only
 * removes unused specs and schemas is not what the health report's "last expiry" measures. */
static int add_last_expire(const icm_expire_decision *d, int64_t now_ms, icm_table_changes *c)
{
    if (d->expired_count == 0 && d->removed_ref_count == 0)
        return 0;
    char value[24];
    snprintf(value, sizeof value, "%" PRId64, now_ms);
    icm_property prop = {ICM_LAST_EXPIRE_PROPERTY, value};
    return icm_table_changes_set_properties(c, &prop, 1);
}

int icm__expire_changes(icm_fileio *io, const icm_table_metadata *base,
                        const icm_expire_decision *d, bool clean_expired_metadata, int64_t now_ms,
                        icm_table_changes **out_changes, icm_table_metadata **out,
                        bool *changed, size_t *removed_specs, size_t *removed_schemas)
{
    *out_changes = NULL;
    *out = NULL;
    *changed = false;
    *removed_specs = 0;
    *removed_schemas = 0;
    icm_table_changes *c = NULL;
    icm_table_metadata *md = NULL;
    int rc = icm_table_changes_new(&c);
    if (rc == 0)
        rc = add_requirements(base, c);
    if (rc == 0)
        rc = add_snapshot_updates(base, d, c);
    if (rc == 0)
        rc = add_last_expire(d, now_ms, c);
    /* One new document, sharing what it keeps with base's. */
    if (rc == 0)
        rc = icm_table_changes_apply(&md, c, base);
    if (rc == 0 && clean_expired_metadata) {
        /* Reachability is judged on the snapshots that remain. */
        size_t from = icm_table_changes_update_count(c);
        rc = add_spec_and_schema_removals(io, md, c, removed_specs, removed_schemas);
        if (rc == 0 && icm_table_changes_update_count(c) > from) {
            icm_table_metadata *cleaned = NULL;
            rc = icm__table_changes_apply_range(c, from, md, &cleaned);
            icm_table_metadata_free(md);
            md = cleaned;
        }
    }
    if (rc != 0) {
        icm_table_metadata_free(md);
        icm_table_changes_free(c);
        return rc;
    }
    *changed = d->expired_count > 0 || d->removed_ref_count > 0 || *removed_specs > 0 ||
               *removed_schemas > 0;
    *out_changes = c;
    *out = md;
    return 0;
}
