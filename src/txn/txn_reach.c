/*
 * txn/txn_reach.c: whether the table as it is now reaches a file this transaction wrote, the
 * last question before a refused transaction deletes its own files.
 *
 * A catalog's refusal (400, 401/403/419, 404) lets a transaction delete what it wrote, but a
 * gateway in front of the catalog may have passed the request on before refusing it. The table
 * layer reloads the table and looks for the change's own snapshot (table.c verify_refusal), and
 * a snapshot naming it as parent; both may be gone by the time of the reload while the commit
 * still landed: another writer appends on top of it twice and expires the two older snapshots,
 * and its latest snapshot carries this transaction's manifest (adversary round 19, left open).
 * The general rule is the keep-set rule: a file the table reaches is never deleted. Nothing but
 * this transaction knows the names of its files (they carry its commit uuid), so one reached
 * also proves that the commit applied, and then none of them may go.
 *
 * Only snapshots the base did not have are read: a snapshot committed before this
 * transaction's files were written cannot name them. Their manifest lists (or v1 inline
 * manifest names), and, when the transaction handed out data-file locations, the entries of
 * the manifests those snapshots added (a manifest rewrite by another writer may carry the
 * entries of this transaction's manifest under a new name), deletion vectors' referenced data
 * files included.
 */
#include <stdlib.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/manifest.h"
#include "txn/txn_internal.h"
#include "util/util.h"

typedef struct reach {
    icm_txn *txn;
    int keep_attempt;        /* owned files the attempt of this number uses are not looked for */
    icm_fileio *io;
    int format_version;
    const int64_t *base_ids; /* sorted: the snapshots of the base */
    size_t n_base;
    const char *hit;         /* the owned location found (borrowed from the ledger) */
} reach;

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool in_base(const reach *r, int64_t id)
{
    return bsearch(&id, r->base_ids, r->n_base, sizeof id, cmp_id) != NULL;
}

/* Stop code of the callbacks: an owned file was found (r->hit names it). */
#define REACHED 1

static int look(reach *r, const char *location)
{
    if (location == NULL || location[0] == '\0')
        return 0;
    r->hit = icm__txn_owned_location(r->txn, location, r->keep_attempt);
    return r->hit != NULL ? REACHED : 0;
}

static int on_entry(const icm_manifest_entry *e, void *payload)
{
    reach *r = payload;
    int rc = look(r, e->data_file.file_path);
    return rc != 0 ? rc : look(r, e->data_file.referenced_data_file);
}

/* A read of a file that is gone tells nothing (it was expired meanwhile): passed over. */
static int passed_if_gone(int rc)
{
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    return rc;
}

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    reach *r = payload;
    int rc = look(r, mf->manifest_path);
    if (rc != 0 || r->txn->data_file_counter == 0)
        return rc;
    /* A manifest the base's snapshots added was written before this transaction's files. */
    if (mf->has_added_snapshot_id && in_base(r, mf->added_snapshot_id))
        return 0;
    icm_manifest_read_options opts = ICM_MANIFEST_READ_OPTIONS_INIT;
    opts.fields = ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE;
    opts.format_version = r->format_version;
    return passed_if_gone(icm_manifest_read(r->io, mf, &opts, on_entry, r));
}

static int look_in_snapshot(reach *r, const icm_snapshot *s)
{
    if (s->manifest_list != NULL) {
        int rc = look(r, s->manifest_list);
        if (rc != 0)
            return rc;
        icm_manifest_list_read_options opts = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
        opts.format_version = r->format_version;
        return passed_if_gone(icm_manifest_list_read(r->io, s->manifest_list, &opts,
                                                     on_manifest, r));
    }
    for (size_t i = 0; i < s->manifest_count; i++) {
        int rc = look(r, s->manifests[i]);
        if (rc == 0 && r->txn->data_file_counter > 0) {
            icm_manifest_read_options opts = ICM_MANIFEST_READ_OPTIONS_INIT;
            opts.fields = ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE;
            opts.format_version = r->format_version;
            rc = passed_if_gone(icm_manifest_read_v1_embedded(r->io, s->manifests[i],
                                                              s->snapshot_id, &opts, on_entry, r));
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icm__txn_base_ids(const icm_table_metadata *base, int64_t **out, size_t *n_out)
{
    size_t n = icm_table_metadata_snapshot_count(base);
    int64_t *ids = icm__calloc(n > 0 ? n : 1, sizeof *ids);
    *out = ids;
    *n_out = ids != NULL ? n : 0;
    if (ids == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        ids[i] = icm_table_metadata_snapshot_at(base, i)->snapshot_id;
    qsort(ids, n, sizeof *ids, cmp_id);
    return 0;
}

int icm__txn_reached(icm_txn *txn, const int64_t *base_ids, size_t n_base, int keep_attempt,
                     const char **out_hit)
{
    *out_hit = NULL;
    int rc = icm_table_refresh(txn->table);
    const icm_table_metadata *now = icm_table_get_metadata(txn->table);
    reach r = {txn, keep_attempt, icm_table_get_fileio(txn->table),
               icm_table_metadata_format_version(now), base_ids, n_base, NULL};
    size_t n = rc == 0 ? icm_table_metadata_snapshot_count(now) : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(now, i);
        if (!in_base(&r, s->snapshot_id))
            rc = look_in_snapshot(&r, s);
    }
    if (rc == REACHED) {
        *out_hit = r.hit;
        return 0;
    }
    return rc;
}
