/*
 * maint/keepset.c: the keep set (keepset.h): every file chosen snapshots reach, in a path set,
 * and extending it with newer metadata where that differs (the delete phase's re-check).
 *
 * Read-only by construction: storage is read only through the reachability walk
 * (reach_walk.c). The path set is pathset.c; the table's own locations and documents are
 * table_files.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "maint/keepset.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* keep set                                                                                    */

static int add_to_set(const icm__reached *file, void *payload)
{
    return icm__pathset_add(payload, file->location, NULL);
}

int icm__keepset_build(icm_fileio *io, const icm_table_metadata *md,
                       const icm__reach_options *opts, icm__pathset *set,
                       icm__reach_report *report)
{
    return icm__reach_walk(io, md, opts, add_to_set, set, report);
}

/* ---- extending a keep set with newer metadata ---- */

int icm__refs_seen_init(icm__refs_seen *seen)
{
    seen->lists = seen->manifests = NULL;
    int rc = icm__pathset_new(&seen->lists, 0);
    if (rc == 0)
        rc = icm__pathset_new(&seen->manifests, 0);
    if (rc != 0)
        icm__refs_seen_dispose(seen);
    return rc;
}

void icm__refs_seen_dispose(icm__refs_seen *seen)
{
    icm__pathset_free(seen->lists);
    icm__pathset_free(seen->manifests);
    seen->lists = seen->manifests = NULL;
}

int icm__refs_seen_note(icm__refs_seen *seen, const icm__reached *file)
{
    if (file->kind == ICM__FILE_MANIFEST_LIST)
        return icm__pathset_add(seen->lists, file->location, NULL);
    if (file->kind == ICM__FILE_MANIFEST)
        return icm__pathset_add(seen->manifests, file->location, NULL);
    return 0;
}

int icm__refs_seen_note_list(icm__refs_seen *seen, const icm__reached *file)
{
    if (file->kind == ICM__FILE_MANIFEST_LIST)
        return icm__pathset_add(seen->lists, file->location, NULL);
    return 0;
}

typedef struct extend_walk {
    icm__refs_seen *seen;
    int (*cb)(const char *location, void *payload);
    void *payload;
} extend_walk;

static int on_extended(const icm__reached *file, void *payload)
{
    extend_walk *x = payload;
    int rc = icm__refs_seen_note(x->seen, file);
    return rc != 0 ? rc : x->cb(file->location, x->payload);
}

/* Ids of md's snapshots whose manifest list `seen` does not hold (embedded v1 manifests are
 * always walked: their manifests are looked up one by one). */
static int unseen_snapshots(const icm_table_metadata *md, const icm__refs_seen *seen,
                            int64_t **out, size_t *n)
{
    size_t total = icm_table_metadata_snapshot_count(md);
    *n = 0;
    *out = icm__calloc(total ? total : 1, sizeof **out);
    if (*out == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < total; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        bool known = false;
        int rc = s->manifest_list != NULL
                     ? icm__pathset_contains(seen->lists, s->manifest_list, &known)
                     : 0;
        if (rc != 0)
            return rc;
        if (!known)
            (*out)[(*n)++] = s->snapshot_id;
    }
    return 0;
}

int icm__reach_extend(icm_fileio *io, const icm_table_metadata *md, const char *md_location,
                      icm__refs_seen *seen, int (*cb)(const char *location, void *payload),
                      void *payload, icm__reach_report *report)
{
    memset(report, 0, sizeof *report);
    int64_t *ids = NULL;
    size_t n_ids = 0;
    int rc = unseen_snapshots(md, seen, &ids, &n_ids);
    if (rc == 0 && n_ids > 0) {
        icm__reach_options ro = {ids, n_ids, true, seen->manifests, false, NULL, false, NULL, NULL};
        extend_walk x = {seen, cb, payload};
        rc = icm__reach_walk(io, md, &ro, on_extended, &x, report);
    }
    icm__free(ids);
    size_t ns = icm_table_metadata_statistics_count(md);
    for (size_t i = 0; rc == 0 && i < ns; i++)
        rc = cb(icm_table_metadata_statistics_at(md, i)->path, payload);
    if (rc == 0)
        rc = icm__table_metadata_docs(md, md_location, cb, payload);
    return rc;
}
