/*
 * maint/expire_recheck.c: the re-check expiry's delete phase runs before each batch
 * (icemaint/maint.h, issue #16 class 3): a rollback, a cherry-pick or a writer's commit after
 * ours can reference again a file the plan meant to delete, so the table is reloaded and, when
 * its metadata changed, every snapshot of the new metadata counts as retained.
 *
 * Only what the plan does not account for is read: manifest lists of snapshots whose list it
 * has not seen, and the entries of manifests it has not seen (icm__reach_extend; a retained
 * manifest's live candidates were already dropped by the plan's last step). A newly referenced
 * file keeps a planned file by name, or as its second name through a symbolic link
 * (expire_alias.c). Read-only like the
 * planner: nothing here references a FileIO call that creates, writes or deletes.
 */
#include <string.h>
#include <strings.h>

#include "icemaint/catalog.h"
#include "maint/expire_internal.h"
#include "util/util.h"

/* What the new metadata references: by name, and the references that may be second names of
 * planned files (expire_alias.c). */
typedef struct newer_refs {
    icm__pathset *names;
    icm__expire_alias alias;
} newer_refs;

static int add_location(const char *location, void *payload)
{
    newer_refs *n = payload;
    int rc = icm__pathset_add(n->names, location, NULL);
    return rc == 0 ? icm__expire_alias_note(&n->alias, location) : rc;
}

/* The PLANNED files of `files` that `newer` references, by name or under another name through
 * a symbolic link, become KEPT. */
static int keep_referenced(icm_expire_result *r, icm_expire_file *files, size_t n,
                           newer_refs *newer)
{
    for (size_t i = 0; i < n; i++) {
        if (files[i].state != ICM_EXPIRE_FILE_PLANNED)
            continue;
        bool referenced;
        int rc = icm__pathset_contains(newer->names, files[i].path, &referenced);
        if (rc != 0)
            return rc;
        if (referenced) {
            files[i].state = ICM_EXPIRE_FILE_KEPT;
            r->newly_referenced++;
        }
    }
    if (newer->alias.n_noted == 0 || n == 0)
        return 0;
    bool *kept = icm__calloc(n, sizeof *kept);
    if (kept == NULL)
        return icm__error_oom();
    int rc = icm__expire_alias_check(&newer->alias, files, n, kept, r);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (kept[i]) {
            files[i].state = ICM_EXPIRE_FILE_KEPT;
            r->newly_referenced++;
        }
    }
    icm__free(kept);
    return rc;
}

static int stop(icm_expire_result *r, icm_expire_problem_kind kind, const char *location,
                int rc)
{
    icm__error_saved *saved = icm__error_save();
    int prc = icm__expire_add_problem(r, kind, location, rc, icm_error_last()->message);
    icm__error_restore(saved);
    return prc != 0 ? prc : rc;
}

static int unreadable(icm_expire_result *r, const icm__reach_report *rep)
{
    const icm__reach_failure *f = &rep->failures[0];
    int code = f->code != 0 ? f->code : ICM_EIO;
    icm__error_set(ICM_ERRCLASS_MAINT, code, f->location,
                   "cannot read this %s, which a commit during the expiry's deletes added "
                   "(%s); what the table references now is unknown, so no further file is "
                   "deleted", f->is_manifest_list ? "manifest list" : "manifest", f->message);
    return stop(r, ICM_EXPIRE_PROBLEM_UNREADABLE, f->location, code);
}

static int check_gc(icm_expire_result *r, const icm_table_metadata *md, const char *where)
{
    const char *gc = NULL;
    if (icm__gc_enabled(md, &gc))
        return 0;
    icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, where,
                   "gc.enabled='%s' (GC disabled: any value but 'true') was committed during "
                   "the expiry's deletes; no further file is deleted",
                   gc);
    return stop(r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED, where, ICM_EREFUSED);
}

/* What the new metadata references, into `newer`; failures recorded. */
static int read_newer(icm__expire_recheck *c, icm_expire_result *r, const char *loc,
                      newer_refs *newer)
{
    const icm_table_metadata *md = icm_table_get_metadata(c->t);
    icm__reach_report rep;
    int rc = check_gc(r, md, loc);
    if (rc == 0 && (rc = icm_table_check_own_metadata(c->t)) != 0)
        rc = stop(r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED, loc, rc);
    if (rc != 0)
        return rc;
    const char *roots[3];
    size_t n_roots = icm__table_roots(md, roots);
    if ((rc = icm__expire_alias_init(&newer->alias, icm_table_get_fileio(c->t), roots,
                                     n_roots)) != 0)
        return rc;
    rc = icm__reach_extend(icm_table_get_fileio(c->t), md, loc, &c->seen, add_location, newer,
                           &rep);
    if (rc == 0 && rep.failure_count > 0)
        rc = unreadable(r, &rep);
    icm__reach_report_dispose(&rep);
    return rc;
}

int icm__expire_recheck_run(icm__expire_recheck *c, icm_expire_result *r)
{
    int rc = icm_table_refresh(c->t);
    if (rc != 0)
        return stop(r, ICM_EXPIRE_PROBLEM_REFRESH_FAILED, icm_table_get_identifier(c->t), rc);
    const char *loc = icm_table_get_metadata_location(c->t);
    const icm_table_metadata *now = icm_table_get_metadata(c->t);
    if (icm__md_mark_same(&c->mark, loc, now))
        return 0;
    newer_refs newer;
    memset(&newer, 0, sizeof newer);
    rc = icm__pathset_new(&newer.names, 0);
    if (rc == 0)
        rc = read_newer(c, r, loc, &newer);
    if (rc == 0)
        rc = keep_referenced(r, r->deleted_files, r->deleted_file_count, &newer);
    if (rc == 0)
        rc = keep_referenced(r, r->deleted_manifests, r->deleted_manifest_count, &newer);
    if (rc == 0)
        rc = keep_referenced(r, r->deleted_statistics_files, r->deleted_statistics_file_count,
                             &newer);
    if (rc == 0)
        rc = keep_referenced(r, r->deleted_checksum_files, r->deleted_checksum_file_count,
                             &newer);
    if (rc == 0)
        rc = icm__md_mark_set(&c->mark, loc, now);
    icm__pathset_free(newer.names);
    icm__expire_alias_dispose(&newer.alias);
    return rc;
}

void icm__expire_recheck_dispose(icm__expire_recheck *c)
{
    icm__md_mark_dispose(&c->mark);
    icm__refs_seen_dispose(&c->seen);
}
