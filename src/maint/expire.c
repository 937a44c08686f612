/*
 * maint/expire.c: snapshot expiry end to end — decide, commit, then delete (expire.h).
 *
 * Order and safety (issue "Snapshot expiry", reference semantics §1.3 and §1.7):
 *  1. decide on the table's current metadata with a "now" fixed once for the operation;
 *  2. build the commit as requirements and updates (expire_metadata.c) and commit it through
 *     the table's retry policy (table/commit.h, icm_table_commit_changes): ICM_ECOMMIT_FAILED
 *     (a concurrent commit won, or moved a ref the decision was made on) → refresh and start
 *     again at 1, at most min(commit.retry.num-retries, max_commit_retries) times;
 *     ICM_ECOMMIT_UNKNOWN → stop, delete nothing (also when the table's reconciliation then
 *     found the commit applied: icm_table_last_commit_reconciled, result.commit_reconciled);
 *  3. reload the table and plan the deletes against EVERY snapshot of the reloaded metadata
 *     (expire_plan.c), so files of snapshots committed concurrently are kept too, and verify
 *     that the files those snapshots reference exist (expire_verify.c): when one is missing,
 *     a damaged manifest may have misnamed a live file, so nothing is deleted;
 *  4. delete: the delete engine (delete_engine.h) runs the plan: data and delete files, then
 *     manifests, then manifest lists, then statistics, then checksum companions, in batches;
 *     before each the table is reloaded and, when a commit changed it, files the new metadata
 *     references are kept (expire_recheck.c; icemaint/maint.h "The delete phase").
 * Right before its delete a local file must lie where its name says, with no symbolic link below
 * the table root on its way (link_guard.h): a name only expired snapshots reach may be a live
 * file's second name through a link.
 * A dry run stops after planning against the uncommitted new metadata: it never reaches this
 * file's delete code, and the planning files have no delete call at all.
 *
 * This is the only expiry file that deletes (through the engine) or commits.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "icemaint/catalog.h"
#include "maint/delete_engine.h"
#include "maint/lease_internal.h"
#include "maint/expire_internal.h"
#include "maint/link_guard.h"
#include "maint/other_format.h"
#include "maint/trash.h"
#include "spec/metadata_internal.h"
#include "table/commit.h"
#include "util/location.h"
#include "util/util.h"

int icm_expire_cleanup_parse(icm_expire_cleanup *out, const char *text)
{
    if (text != NULL) {
        if (strcasecmp(text, "all") == 0) {
            *out = ICM_EXPIRE_CLEANUP_ALL;
            return 0;
        }
        if (strcasecmp(text, "metadata") == 0 || strcasecmp(text, "metadata_only") == 0 ||
            strcasecmp(text, "metadata-only") == 0) {
            *out = ICM_EXPIRE_CLEANUP_METADATA;
            return 0;
        }
        if (strcasecmp(text, "none") == 0) {
            *out = ICM_EXPIRE_CLEANUP_NONE;
            return 0;
        }
    }
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                          "unknown cleanup level '%s' (use all, metadata or none)",
                          text != NULL ? text : "(null)");
}

const char *icm_expire_cleanup_name(icm_expire_cleanup cleanup)
{
    switch (cleanup) {
    case ICM_EXPIRE_CLEANUP_ALL:
        return "all";
    case ICM_EXPIRE_CLEANUP_METADATA:
        return "metadata";
    case ICM_EXPIRE_CLEANUP_NONE:
        return "none";
    }
    return "unknown";
}

/* ------------------------------------------------------------------------------------------ */
/* deleting                                                                                    */

/* The delete phase (icemaint/maint.h) as the engine runs it (delete_engine.h): the plan's
 * files as engine items, and the expiry's side of the hooks. */
typedef struct deleter {
    icm_fileio *io;
    icm_expire_result *r;
    icm__expire_recheck *recheck;   /* NULL: no re-check (icm_expire_delete_files) */
    icm_lease *lease;
    icm_expire_file **files;        /* files[item.ref] */
    icm__link_guard guard;          /* this batch's (when the table's roots are known) */
    bool guarded;
} deleter;

static icm__delete_rank rank_of(icm_expire_file_kind kind)
{
    switch (kind) {
    case ICM_EXPIRE_FILE_DATA:
    case ICM_EXPIRE_FILE_POSITION_DELETES:
    case ICM_EXPIRE_FILE_EQUALITY_DELETES:
    case ICM_EXPIRE_FILE_DELETION_VECTOR:
        return ICM__DELETE_RANK_CONTENT;
    case ICM_EXPIRE_FILE_MANIFEST:
        return ICM__DELETE_RANK_MANIFEST;
    case ICM_EXPIRE_FILE_MANIFEST_LIST:
        return ICM__DELETE_RANK_MANIFEST_LIST;
    case ICM_EXPIRE_FILE_STATISTICS:
    case ICM_EXPIRE_FILE_PARTITION_STATISTICS:
        return ICM__DELETE_RANK_METADATA;
    case ICM_EXPIRE_FILE_CHECKSUM:
        break;
    }
    return ICM__DELETE_RANK_COMPANION;
}

/* The companions of files of `files` that stay: a file whose delete failed keeps its companion
 * (FAILED, with a problem saying why), one a commit during the deletes references again keeps
 * it too (KEPT). Companions are named `dir/.name.crc` beside `dir/name`
 * (icm_fileio_checksum_of). Returns 0 or ICM_ENOMEM. */
/* Was `path` kept by the link guard (a THROUGH_LINK problem names it)? */
static bool kept_through_link(const icm_expire_result *r, const char *path)
{
    for (size_t i = 0; i < r->problem_count; i++)
        if (r->problems[i].kind == ICM_EXPIRE_PROBLEM_THROUGH_LINK &&
            strcmp(r->problems[i].location, path) == 0)
            return true;
    return false;
}

static int keep_companions_of(icm_expire_result *r, const icm_expire_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const icm_expire_file *file = &files[i];
        if (file->state != ICM_EXPIRE_FILE_FAILED && file->state != ICM_EXPIRE_FILE_KEPT)
            continue;
        bool oom;
        char *crc = icm__location_checksum_name(file->path, &oom);
        if (oom)
            return ICM_ENOMEM;
        for (size_t k = 0; crc != NULL && k < r->deleted_checksum_file_count; k++) {
            icm_expire_file *f = &r->deleted_checksum_files[k];
            if (f->state != ICM_EXPIRE_FILE_PLANNED || strcmp(f->path, crc) != 0)
                continue;
            if (file->state == ICM_EXPIRE_FILE_KEPT) {
                f->state = ICM_EXPIRE_FILE_KEPT;
                continue;
            }
            f->state = ICM_EXPIRE_FILE_FAILED;
            bool link = kept_through_link(r, file->path); /* so is its companion beside it */
            int rc = icm__expire_add_problem(r, link ? ICM_EXPIRE_PROBLEM_THROUGH_LINK
                                                     : ICM_EXPIRE_PROBLEM_DELETE_FAILED,
                                             f->path, ICM_EREFUSED,
                                             link ? "not deleted: the file it is the checksum "
                                                    "of was reached through a symbolic link; "
                                                    "kept"
                                                  : "not deleted: the file it is the "
                                                    "checksum of could not be deleted");
            if (rc != 0) {
                icm__free(crc);
                return rc;
            }
        }
        icm__free(crc);
    }
    return 0;
}

static int keep_companions(icm_expire_result *r)
{
    int rc = keep_companions_of(r, r->deleted_files, r->deleted_file_count);
    if (rc == 0)
        rc = keep_companions_of(r, r->deleted_manifests, r->deleted_manifest_count);
    if (rc == 0)
        rc = keep_companions_of(r, r->deleted_statistics_files,
                                r->deleted_statistics_file_count);
    return rc;
}



/* Before a batch: the re-check and the lease, then the link guard of the reloaded table's
 * roots. Returns 0 or what stops the deletes. */
static int before_batch(void *ctx)
{
    deleter *d = ctx;
    int rc = d->recheck != NULL ? icm__expire_recheck_run(d->recheck, d->r) : 0;
    if (rc == 0 && d->lease != NULL && (rc = icm__lease_keep(d->lease)) != 0) {
        icm__error_saved *saved = icm__error_save();
        int prc = icm__expire_add_problem(d->r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED,
                                          icm_lease_location(d->lease), rc,
                                          icm_error_last()->message);
        icm__error_restore(saved);
        rc = prc != 0 ? prc : rc;
    }
    const char *roots[3];
    size_t n_roots = rc == 0 && d->recheck != NULL
                         ? icm__table_roots(icm_table_get_metadata(d->recheck->t), roots)
                         : 0;
    if (n_roots > 0) {
        d->guarded = true;
        if (icm__link_guard_init(&d->guard, d->io, roots, n_roots) != 0)
            rc = ICM_ENOMEM;
    }
    return rc;
}

static void after_batch(void *ctx)
{
    deleter *d = ctx;
    if (d->guarded)
        icm__link_guard_dispose(&d->guard);
    d->guarded = false;
}

/* Still PLANNED (not KEPT by a re-check, nor held with its file)? */
static bool planned(void *ctx, const icm__delete_item *item)
{
    return ((deleter *)ctx)->files[item->ref]->state == ICM_EXPIRE_FILE_PLANNED;
}

/* Right before its delete a local file must lie where its name says (link_guard.h); one whose
 * folder is gone is gone. */
static icm__delete_verdict last_check(void *ctx, icm__link_cache *cache,
                                      const icm__delete_item *item, int *code)
{
    const deleter *d = ctx;
    *code = d->guarded ? icm__link_guard_check(&d->guard, cache, item->path) : 0;
    return *code == 0              ? ICM__VERDICT_DELETE
           : *code == ICM_ENOTFOUND ? ICM__VERDICT_GONE
                                    : ICM__VERDICT_FAILED;
}

static void record(void *ctx, icm__delete_item *item)
{
    icm_expire_file *f = ((deleter *)ctx)->files[item->ref];
    f->state = item->state == ICM__DELETE_DELETED ? ICM_EXPIRE_FILE_DELETED
               : item->state == ICM__DELETE_GONE  ? ICM_EXPIRE_FILE_ALREADY_GONE
                                                  : ICM_EXPIRE_FILE_FAILED;
}

/* A failure becomes a problem: THROUGH_LINK when the link guard kept it (its only
 * ICM_EREFUSED), else DELETE_FAILED. Returns 0 or ICM_ENOMEM. */
static int account(void *ctx, const icm__delete_item *item)
{
    deleter *d = ctx;
    if (item->state != ICM__DELETE_FAILED)
        return 0;
    return icm__expire_add_problem(d->r,
                                   item->code == ICM_EREFUSED ? ICM_EXPIRE_PROBLEM_THROUGH_LINK
                                                              : ICM_EXPIRE_PROBLEM_DELETE_FAILED,
                                   item->path, item->code,
                                   item->message != NULL ? item->message : "");
}

/* Companions go last, and only with their files (keep_companions). */
static int enter_rank(void *ctx, icm__delete_rank rank)
{
    return rank == ICM__DELETE_RANK_COMPANION ? keep_companions(((deleter *)ctx)->r) : 0;
}

/* The plan's files as engine items (items[i].ref indexes d->files). Returns 0 or ICM_ENOMEM. */
static int plan_items(deleter *d, icm__delete_item **out, size_t *out_n)
{
    icm_expire_result *r = d->r;
    struct {
        icm_expire_file *files;
        size_t n;
    } lists[] = {{r->deleted_files, r->deleted_file_count},
                 {r->deleted_manifests, r->deleted_manifest_count},
                 {r->deleted_statistics_files, r->deleted_statistics_file_count},
                 {r->deleted_checksum_files, r->deleted_checksum_file_count}};
    size_t n = 0;
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        n += lists[k].n;
    *out = icm__calloc(n > 0 ? n : 1, sizeof **out);
    d->files = icm__calloc(n > 0 ? n : 1, sizeof *d->files);
    if (*out == NULL || d->files == NULL) {
        icm__free(*out);
        *out = NULL;
        return icm__error_set(ICM_ERRCLASS_NOMEM, ICM_ENOMEM, NULL, "out of memory");
    }
    size_t at = 0;
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        for (size_t i = 0; i < lists[k].n; i++, at++) {
            icm_expire_file *f = &lists[k].files[i];
            d->files[at] = f;
            (*out)[at] = (icm__delete_item){.path = f->path,
                                            .kind = icm_expire_file_kind_name(f->kind),
                                            .size_bytes = f->size_bytes,
                                            .rank = rank_of(f->kind),
                                            .ref = at};
        }
    *out_n = n;
    return 0;
}

/* Delete the planned files in the engine's order (data and delete files, manifests, manifest
 * lists, statistics files, checksum companions), in batches. Returns the number deleted, or
 * what stopped the deletes (the files left stay PLANNED; a problem says so). */
/* Delete the planned files; *out_deleted counts those deleted (also when the deletes
 * stopped). Returns 0 or the error that stopped them. */
static int delete_planned(size_t *out_deleted, deleter *d, const icm__delete_policy *policy)
{
    *out_deleted = 0;
    icm_expire_result *r = d->r;
    r->dry_run = false;
    r->delete_phase = true;
    icm__delete_item *items = NULL;
    size_t n = 0;
    icm__delete_stats stats = {0};
    int rc = plan_items(d, &items, &n);
    if (rc == 0) {
        icm__delete_hooks hooks = {
            .ctx = d, .enter_rank = enter_rank, .before_batch = before_batch,
            .after_batch = after_batch, .planned = planned, .check = last_check, .record = record,
            .account = account,
            .stop_message = "the delete callback asked to stop after this file; the files "
                            "after it were not deleted"};
        rc = icm__delete_run(d->io, items, n, policy, &hooks, &stats);
    }
    icm__delete_items_dispose(items, n);
    icm__free(items);
    icm__free(d->files);
    d->files = NULL;
    r->delete_stopped = rc != 0;
    if (rc != 0 && rc != ICM_ENOMEM &&
        (r->problem_count == 0 ||
         r->problems[r->problem_count - 1].kind != ICM_EXPIRE_PROBLEM_DELETES_STOPPED)) {
        icm__error_saved *saved = icm__error_save();
        int prc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED, "", rc,
                                          "the deletes stopped; files still planned were not "
                                          "deleted");
        icm__error_restore(saved);
        rc = prc != 0 ? prc : rc;
    }
    icm__expire_result_tally(r);
    *out_deleted = stats.deleted;
    if (rc != 0)
        return rc;
    icm_error_clear(); /* failures are in r->problems; the call itself succeeded */
    return 0;
}

int icm_expire_delete_files(size_t *out_deleted, icm_fileio *io, icm_expire_result *result)
{
    if (out_deleted != NULL)
        *out_deleted = 0;
    if (out_deleted == NULL || io == NULL || result == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL, "NULL argument");
    if (!icm__expire_result_full_of(result)->deletable)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, NULL,
                              "refusing to delete: this plan comes from a dry run or from an "
                              "expiry whose commit did not happen");
    deleter d = {.io = io, .r = result};
    icm__delete_policy policy = ICM__DELETE_POLICY_INIT;
    return delete_planned(out_deleted, &d, &policy);
}

/* ------------------------------------------------------------------------------------------ */
/* the operation                                                                               */

/* One attempt: decide on the table's current metadata and build the commit (requirements and
 * updates) and the metadata it gives. *out_changes is NULL when nothing is to be committed. */
static int prepare(icm_table *t, const icm_expire_options *o, int64_t now_ms,
                   icm_expire_result *r, icm_table_changes **out_changes,
                   icm_table_metadata **out_md, bool *changed)
{
    const icm_table_metadata *base = icm_table_get_metadata(t);
    icm_expire_decide_options dopts = o->decide;
    dopts.now_ms = now_ms;
    icm_expire_decision *d = NULL;
    int rc = icm_expire_decide(&d, base, &dopts);
    if (rc != 0)
        return rc;
    rc = icm__expire_result_set_decision(r, d);
    /* Java step 1: no snapshots and nothing else to clean → metadata unchanged, no commit. */
    if (rc == 0 && !(icm_table_metadata_snapshot_count(base) == 0 && !o->clean_expired_metadata))
        rc = icm__expire_changes(icm_table_get_fileio(t), base, d, o->clean_expired_metadata,
                                 now_ms, out_changes, out_md, changed, &r->removed_spec_count,
                                 &r->removed_schema_count);
    icm_expire_decision_free(d);
    return rc;
}

static int check_options(const icm_expire_options *o)
{
    if (o->version < 1 || o->version > ICM_EXPIRE_OPTIONS_VERSION ||
        o->decide.version != ICM_EXPIRE_DECIDE_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_expire_options: unknown version (use ICM_EXPIRE_OPTIONS_INIT)");
    if ((unsigned)o->cleanup > ICM_EXPIRE_CLEANUP_NONE)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_expire_options: invalid cleanup level %d", (int)o->cleanup);
    if (o->limits.max_percent >= 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_expire_options: limits.max_percent is not supported by "
                              "expiry (use max_files or max_bytes)");
    return 0;
}

/* Whether any guard rail is set (icemaint/maint.h). */
static bool has_limits(const icm_expire_options *o)
{
    return o->limits.max_files >= 0 || o->limits.max_bytes >= 0;
}

/* The guard rails on a plan (icm__expire_plan's result): every planned file, companions too. */
static int check_limits(const icm_expire_options *o, const char *where,
                        const icm_expire_result *plan)
{
    const icm_expire_file *const vecs[] = {plan->deleted_files, plan->deleted_manifests,
                                           plan->deleted_statistics_files,
                                           plan->deleted_checksum_files};
    const size_t lens[] = {plan->deleted_file_count, plan->deleted_manifest_count,
                           plan->deleted_statistics_file_count,
                           plan->deleted_checksum_file_count};
    size_t files = 0;
    int64_t bytes = 0;
    for (size_t k = 0; k < 4; k++) {
        files += lens[k];
        for (size_t i = 0; i < lens[k]; i++)
            bytes = icm_delete_limits_add_bytes(bytes, vecs[k][i].size_bytes);
    }
    return icm_delete_limits_check(&o->limits, where, files, bytes, 0);
}

/* Before a commit: what this attempt's expiry would delete, planned as a dry run plans it
 * (against the metadata the commit would give), within the guard rails? A refusal returns
 * ICM_EREFUSED, so nothing is committed. */
static int check_limits_before_commit(icm_table *t, const icm_expire_options *o,
                                      const icm_table_metadata *new_md)
{
    if (!has_limits(o) || o->cleanup == ICM_EXPIRE_CLEANUP_NONE)
        return 0;
    icm_expire_result *scratch = NULL;
    int rc = icm__expire_result_new(&scratch);
    if (rc == 0)
        rc = icm__expire_plan(icm_table_get_fileio(t), icm_table_get_metadata(t), new_md,
                              o->cleanup, scratch, NULL, false);
    if (rc == 0)
        rc = check_limits(o, icm_table_get_identifier(t), scratch);
    icm_expire_result_free(scratch);
    return rc;
}

typedef struct attempt_state {
    const icm_expire_options *o;
    int64_t now_ms;
    icm_expire_result *r;
    icm_table_metadata *base; /* pre-expiry metadata of the latest attempt (owned) */
    char *base_location;      /* its metadata file (owned) */
} attempt_state;

/* The commit of one attempt, decided afresh on the table's current metadata (table/commit.h:
 * each retry refreshes the table first, so expiry recomputes which snapshots go). */
static int expire_attempt(icm_table *t, icm_table_changes **out, void *payload)
{
    attempt_state *a = payload;
    *out = NULL;
    icm_table_metadata_free(a->base);
    a->base = NULL;
    icm__free(a->base_location);
    a->base_location = NULL;
    icm_table_changes *changes = NULL;
    icm_table_metadata *new_md = NULL;
    bool changed = false;
    int rc = prepare(t, a->o, a->now_ms, a->r, &changes, &new_md, &changed);
    if (rc == 0 && changed)
        rc = check_limits_before_commit(t, a->o, new_md);
    icm_table_metadata_free(new_md);
    if (rc == 0 && changed)
        rc = icm_table_metadata_copy(&a->base, icm_table_get_metadata(t));
    if (rc == 0 && changed &&
        (a->base_location = icm__strdup(icm_table_get_metadata_location(t))) == NULL)
        rc = ICM_ENOMEM;
    if (rc != 0 || !changed) {
        /* An error, or nothing to change: no commit (Java commits nothing either). */
        icm_table_changes_free(changes);
        return rc;
    }
    a->r->commit_attempts++;
    *out = changes;
    return 0;
}

/* Decide and commit under the table's retry policy (max_commit_retries caps its retries). On
 * success *base_out is the pre-expiry metadata of the final attempt and *base_loc_out its
 * file (both owned), and r->committed says whether a commit happened. */
static int decide_and_commit(icm_table *t, const icm_expire_options *o, int64_t now_ms,
                             icm_expire_result *r, icm_table_metadata **base_out,
                             char **base_loc_out)
{
    *base_out = NULL;
    *base_loc_out = NULL;
    icm__commit_policy policy;
    icm__commit_policy_read(icm_table_get_metadata(t), &policy);
    if (policy.num_retries > (int64_t)o->max_commit_retries)
        policy.num_retries = (int64_t)o->max_commit_retries;
    attempt_state a = {o, now_ms, r, NULL, NULL};
    icm__commit_outcome outcome;
    int rc = icm__table_commit_retrying(t, &policy, expire_attempt, &a, &outcome);
    if (rc == 0 && outcome.committed) {
        r->committed = true;
        r->commit_reconciled = icm_table_last_commit_reconciled(t);
        const char *committed = icm_table_last_commit_location(t);
        r->metadata_location =
            icm__strdup(committed != NULL ? committed : icm_table_get_metadata_location(t));
        *base_out = a.base;
        *base_loc_out = a.base_location;
        return r->metadata_location == NULL ? ICM_ENOMEM : 0;
    }
    icm_table_metadata_free(a.base);
    icm__free(a.base_location);
    return rc;
}

/* Whether to verify before deleting (options normalized: an older struct's no_verify is
 * false). */
static bool verifies(const icm_expire_options *o)
{
    return !o->no_verify;
}

/* Dry run: plan against the uncommitted new metadata with the same planning code. */
static int dry_run(icm_table *t, const icm_expire_options *o, int64_t now_ms,
                   icm_expire_result *r)
{
    icm_table_changes *changes = NULL;
    icm_table_metadata *new_md = NULL;
    bool changed = false;
    int rc = prepare(t, o, now_ms, r, &changes, &new_md, &changed);
    icm_table_changes_free(changes); /* a dry run plans against their result only */
    if (rc == 0 && new_md != NULL)
        rc = icm__expire_plan(icm_table_get_fileio(t), icm_table_get_metadata(t), new_md,
                              o->cleanup, r, NULL, verifies(o));
    if (rc == 0 && new_md != NULL)
        rc = icm__expire_hold_other_tables(t, new_md, r);
    if (rc == 0 && new_md != NULL && verifies(o))
        rc = icm__expire_verify(icm_table_get_fileio(t), icm_table_get_metadata(t), new_md, r);
    icm_table_metadata_free(new_md);
    return rc;
}

/* Record that deletes stopped at `where` for the error just set (code rc); returns rc. */
static int deletes_stopped(icm_expire_result *r, const char *where, int rc)
{
    icm__error_saved *saved = icm__error_save();
    int prc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED, where, rc,
                                      icm_error_last()->message);
    icm__error_restore(saved);
    return prc != 0 ? prc : rc;
}

/*
 * The commit must have been applied to the very base it was decided on, and the table must
 * still allow GC. A commit of another writer between the two (a tag or branch on a snapshot
 * this expiry removes; gc.enabled=false) is not excluded by the requirements, which assert
 * only the base's refs: the catalog applies the removal on top of it, drops a ref left naming
 * a removed snapshot, and planning base -> reload would delete that snapshot's files
 * (adversary round 20, H5, H5b). So the metadata file the commit made must name the base's
 * file as the last entry of its metadata-log (it is read when the reload has moved past it);
 * otherwise, or when it cannot be read, nothing is deleted: the expired snapshots' files stay,
 * as orphans for the sweep.
 */
static int check_applied_to_base(icm_table *t, const char *base_location, icm_expire_result *r)
{
    const icm_table_metadata *now = icm_table_get_metadata(t);
    const char *gc = NULL;
    if (!icm__gc_enabled(now, &gc)) {
        int rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, icm_table_get_identifier(t),
                                "gc.enabled='%s' (GC disabled: any value but 'true') was "
                                "committed while the expiry committed; nothing was deleted (the "
                                "expired snapshots' files stay)",
                                gc);
        return deletes_stopped(r, icm_table_get_metadata_location(t), rc);
    }
    icm_table_metadata *read = NULL;
    const icm_table_metadata *committed = now;
    if (strcmp(icm_table_get_metadata_location(t), r->metadata_location) != 0) {
        int rc = icm_table_metadata_read(&read, icm_table_get_fileio(t), r->metadata_location);
        if (rc == ICM_ENOMEM)
            return rc;
        if (rc != 0) {
            char *why = icm__strdup(icm_error_last()->message);
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, r->metadata_location,
                                "cannot read the metadata file the expiry committed (%s), so "
                                "that it was applied to the expiry's base cannot be checked; "
                                "nothing was deleted (the expired snapshots' files stay)",
                                why != NULL ? why : "read failed");
            icm__free(why);
            return deletes_stopped(r, r->metadata_location, rc);
        }
        committed = read;
    }
    size_t n = icm_table_metadata_metadata_log_count(committed);
    const char *prev =
        n > 0 ? icm_table_metadata_metadata_log_at(committed, n - 1)->metadata_file : NULL;
    int rc = 0;
    if (prev == NULL || (strcmp(prev, base_location) != 0 &&
                         !icm__location_equal(prev, base_location))) {
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, r->metadata_location,
                            "the expiry's commit was applied on top of %s, not on the metadata "
                            "it was decided on (%s): another commit came between them, and a "
                            "ref or property it set may keep what the expiry removed; nothing "
                            "was deleted (the expired snapshots' files stay)",
                            prev != NULL ? prev : "no recorded metadata", base_location);
        rc = deletes_stopped(r, r->metadata_location, rc);
    }
    icm_table_metadata_free(read);
    return rc;
}

/* After the commit: reload, plan against everything now in the table, delete in batches, each
 * after a re-check of the table (icemaint/maint.h). */
static int cleanup_after_commit(icm_table *t, const icm_expire_options *o,
                                const icm_table_metadata *base, const char *base_location,
                                icm_expire_result *r, icm__trash *trash)
{
    int rc = icm_table_refresh(t);
    if (rc != 0) {
        /* Without the current state no keep set can be trusted: delete nothing. */
        return icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_REFRESH_FAILED,
                                       icm_table_get_identifier(t), rc,
                                       icm_error_last()->message);
    }
    /* What was reloaded must follow our commit, in the same table: a stale answer (a lagging
     * replica, a cache) lacks snapshots we kept, and a table dropped and created again under
     * the name has none of them, so planning against either deletes what the kept snapshots
     * need (adversary round 18, F2 and F2b). Not proven (also when the catalog trimmed our
     * file out of a long metadata-log): nothing is deleted. */
    const icm_table_metadata *now = icm_table_get_metadata(t);
    bool same = icm__same_table_uuid(icm_table_metadata_uuid(base), icm_table_metadata_uuid(now));
    if (!same ||
        !icm_table_metadata_follows(now, icm_table_get_metadata_location(t),
                                    r->metadata_location)) {
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, icm_table_get_identifier(t),
                            "the table as reloaded after the commit (%s) does not follow it (%s "
                            "is neither its metadata file nor in its metadata-log%s): a stale "
                            "answer or another table under the name; nothing was deleted (the "
                            "expired snapshots' files are orphans now)",
                            icm_table_get_metadata_location(t), r->metadata_location,
                            same ? "" : ", and its table-uuid differs");
        return deletes_stopped(r, icm_table_get_metadata_location(t), rc);
    }
    /* A commit after ours put a copy's metadata in place: nothing of it is ours to plan. */
    if ((rc = icm_table_check_own_metadata(t)) != 0)
        return deletes_stopped(r, icm_table_get_metadata_location(t), rc);
    if ((rc = check_applied_to_base(t, base_location, r)) != 0)
        return rc;
    icm__expire_recheck check = {t, {NULL, 0}, {NULL, NULL}};
    rc = icm__refs_seen_init(&check.seen);
    if (rc == 0)
        rc = icm__md_mark_set(&check.mark, icm_table_get_metadata_location(t),
                              icm_table_get_metadata(t));
    if (rc == 0)
        rc = icm__expire_plan(icm_table_get_fileio(t), base, icm_table_get_metadata(t),
                              o->cleanup, r, &check.seen, verifies(o));
    if (rc == 0)
        rc = icm__expire_hold_other_tables(t, icm_table_get_metadata(t), r);
    if (rc == 0 && verifies(o))
        rc = icm__expire_verify(icm_table_get_fileio(t), base, icm_table_get_metadata(t), r);
    /* The plan after the commit can differ from the one checked before it (a writer's commit
     * in between): the guard rails hold for what is really deleted too. */
    if (rc == 0 && has_limits(o) && (rc = check_limits(o, icm_table_get_identifier(t), r)) != 0) {
        icm__error_saved *saved = icm__error_save();
        int prc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED,
                                          icm_table_get_identifier(t), rc,
                                          icm_error_last()->message);
        icm__error_restore(saved);
        rc = prc != 0 ? prc : rc;
    }
    if (rc == 0) {
        icm__expire_result_full_of(r)->deletable = true;
        deleter d = {.io = icm_table_get_fileio(t), .r = r, .recheck = &check,
                     .lease = o->lease};
        icm__delete_policy policy = ICM__DELETE_POLICY_INIT;
        policy.threads = o->max_concurrent_deletes;
        policy.batch_files = o->delete_batch_size;
        policy.on_delete = o->on_delete;
        policy.on_delete_payload = o->on_delete_payload;
        policy.trash = trash;
        size_t deleted = 0;
        rc = delete_planned(&deleted, &d, &policy);
    }
    icm__expire_recheck_dispose(&check);
    return rc;
}

/* The caller's options as this version knows them: fields an older struct lacks take their
 * defaults (version 1 ends before on_delete, version 2 before no_verify, version 3 before
 * limits, version 4 before trash). */
static icm_expire_options normalized(const icm_expire_options *opts)
{
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    if (opts == NULL)
        return o;
    if (opts->version >= ICM_EXPIRE_OPTIONS_VERSION)
        return *opts;
    memcpy(&o, opts,
           opts->version >= 4   ? offsetof(icm_expire_options, trash)
           : opts->version >= 3 ? offsetof(icm_expire_options, limits)
           : opts->version >= 2 ? offsetof(icm_expire_options, no_verify)
                                : offsetof(icm_expire_options, on_delete));
    o.version = ICM_EXPIRE_OPTIONS_VERSION;
    return o;
}

int icm_expire_snapshots(icm_expire_result **out, icm_table *t, const icm_expire_options *opts)
{
    if (out == NULL || t == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL, "NULL argument");
    *out = NULL;
    if (opts != NULL && (opts->version < 1 || opts->version > ICM_EXPIRE_OPTIONS_VERSION))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_expire_options: unknown version (use ICM_EXPIRE_OPTIONS_INIT)");
    icm_expire_options norm = normalized(opts);
    const icm_expire_options *o = &norm;
    int rc = check_options(o);
    if (rc != 0)
        return rc;
    if (!o->dry_run && icm_table_is_read_only(t))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREADONLY, icm_table_get_identifier(t),
                              "cannot expire snapshots of a table opened from a metadata file "
                              "(read-only); open its table directory or catalog table, or use "
                              "a dry run");
    /* A copy's metadata names the original's location (icm_table_check_own_metadata). */
    if (!o->dry_run && (rc = icm_table_check_own_metadata(t)) != 0)
        return rc;
    /* Newer commits past the pointer, or a root inside another table: refused before any
     * commit, so a stale catalog forks nothing; dry runs too (what they would plan is those
     * files). Only an expiry that deletes nothing (cleanup none) runs. */
    if (o->cleanup != ICM_EXPIRE_CLEANUP_NONE && (rc = icm__expire_check_site(t, !o->dry_run)) != 0)
        return rc;
    /* A table whose folder another format manages (UniForm: a `_delta_log/` beside the
     * metadata): a file Iceberg expired may still be the other format's (its time travel), so
     * nothing is committed or deleted, dry runs too; only an expiry that deletes nothing runs
     * (other_format.h). */
    if (o->cleanup != ICM_EXPIRE_CLEANUP_NONE &&
        (rc = icm__other_format_check_roots(icm_table_get_fileio(t),
                                            icm_table_get_metadata(t))) != 0)
        return rc;
    /* The trash's rules before any commit: a trash that breaks one refuses the expiry whole,
     * and a dry run sees the refusal its real run would get. */
    icm__trash *trash = NULL;
    if (o->trash != NULL && o->cleanup != ICM_EXPIRE_CLEANUP_NONE) {
        const icm_table_metadata *md = icm_table_get_metadata(t);
        if ((rc = icm__trash_open(&trash, icm_table_get_fileio(t), o->trash,
                                  icm_table_metadata_location(md), icm_table_metadata_uuid(md),
                                  o->dry_run)) != 0)
            return rc;
        if ((rc = icm__trash_check_catalog(trash, t)) != 0) {
            icm__trash_free(trash);
            return rc;
        }
    }
    icm_expire_result *r = NULL;
    if ((rc = icm__expire_result_new(&r)) != 0) {
        icm__trash_free(trash);
        return rc;
    }
    r->dry_run = o->dry_run;
    r->cleanup = o->cleanup;
    int64_t now_ms = o->decide.now_ms != 0 ? o->decide.now_ms : icm__now_ms();
    if (o->dry_run) {
        rc = dry_run(t, o, now_ms, r);
    } else {
        icm_table_metadata *base = NULL;
        char *base_location = NULL;
        rc = decide_and_commit(t, o, now_ms, r, &base, &base_location);
        /* A commit whose answer was lost deletes nothing, even once a reload showed it:
         * through a REST catalog the effect may be another writer's, and "never delete after
         * an unknown outcome" has no exception. */
        if (rc == 0 && r->committed && !r->commit_reconciled &&
            o->cleanup != ICM_EXPIRE_CLEANUP_NONE)
            rc = cleanup_after_commit(t, o, base, base_location, r, trash);
        icm_table_metadata_free(base);
        icm__free(base_location);
    }
    icm__trash_free(trash);
    /* The caller learns what was decided even when the commit did not happen, that the
     * commit happened when a later step (reload, planning, deleting) failed, and which files
     * verification found missing. */
    if (rc == 0 || rc == ICM_ECOMMIT_UNKNOWN || rc == ICM_ECOMMIT_FAILED || r->committed ||
        r->missing_count > 0) {
        *out = r;
        return rc;
    }
    icm_expire_result_free(r);
    return rc;
}
