/*
 * maint/expire.c: snapshot expiry end to end — decide, commit, then delete (expire.h).
 *
 * Order and safety (issue "Snapshot expiry", reference semantics §1.3 and §1.7):
 *  1. decide on the table's current metadata with a "now" fixed once for the operation;
 *  2. build the commit as requirements and updates (expire_metadata.c) and commit it through
 *     the table's retry policy (table/commit.h, icm_table_commit_changes): ICM_ECOMMIT_FAILED
 *     (a concurrent commit won, or moved a ref the decision was made on) → refresh and start
 *     again at 1, at most min(commit.retry.num-retries, max_commit_retries) times;
 *     ICM_ECOMMIT_UNKNOWN → stop, delete nothing;
 *  3. reload the table and plan the deletes against EVERY snapshot of the reloaded metadata
 *     (expire_plan.c), so files of snapshots committed concurrently are kept too, and verify
 *     that the files those snapshots reference exist (expire_verify.c): when one is missing,
 *     a damaged manifest may have misnamed a live file, so nothing is deleted;
 *  4. delete: data and delete files, then manifests, then manifest lists, then statistics, in
 *     batches; before each the table is reloaded and, when a commit changed it, files the new
 *     metadata references are kept (expire_recheck.c; icemaint/maint.h "The delete phase").
 * Right before its delete a local file must lie where its name says, with no symbolic link below
 * the table root on its way (link_guard.h): a name only expired snapshots reach may be a live
 * file's second name through a link.
 * A dry run stops after planning against the uncommitted new metadata: it never reaches this
 * file's delete code, and the planning files have no delete call at all.
 *
 * This is the only expiry file that calls icm_fileio_delete or commits.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "icemaint/catalog.h"
#include "maint/delete_common.h"
#include "maint/expire_internal.h"
#include "maint/link_guard.h"
#include "maint/other_format.h"
#include "table/commit.h"
#include "util/location.h"
#include "util/util.h"

int icm_expire_cleanup_parse(const char *text, icm_expire_cleanup *out)
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

/* Transient failures are worth another try; "not found" is success already (FileIO contract). */
static bool retryable(int rc)
{
    return rc == ICM_EIO || rc == ICM_ENET || rc == ICM_ETIMEOUT;
}

#define DELETE_ATTEMPTS 3

/* One batch (icemaint/maint.h), shared by the delete threads: each takes the next index until
 * none is left or the batch's time is up, so the files handled are always a prefix of it, and
 * every file (and its codes/messages slot) is touched by exactly one thread. */
typedef struct delete_job {
    icm_fileio *io;
    icm_expire_file **files;
    size_t count;
    int *codes;              /* per file: 0 or the final error code */
    char **messages;         /* per file: the error message (NULL when none or on OOM) */
    int64_t deadline_ms;     /* icm__batch_clock(): no file is started after it */
    atomic_size_t next;
    const icm__link_guard *guard; /* NULL: no table roots known (icm_delete_expired_files) */
} delete_job;

static int delete_retried(icm_fileio *io, const char *path, icm_delete_outcome *outcome)
{
    int rc = 0;
    for (int attempt = 0; attempt < DELETE_ATTEMPTS; attempt++) {
        rc = icm__delete_counted(io, path, outcome);
        if (rc == 0 || !retryable(rc))
            break;
    }
    return rc;
}

static void delete_one(delete_job *job, icm__link_cache *cache, size_t i)
{
    const char *path = job->files[i]->path;
    icm_delete_outcome outcome = ICM_DELETE_FAILED;
    int rc = job->guard != NULL ? icm__link_guard_check(job->guard, cache, path) : 0;
    if (rc == ICM_ENOTFOUND) { /* its folder is gone: so is the file */
        icm_error_clear();
        rc = 0;
        outcome = ICM_DELETE_ALREADY_GONE;
    } else if (rc == 0) {
        rc = delete_retried(job->io, path, &outcome);
    }
    job->codes[i] = rc;
    if (rc != 0)
        job->messages[i] = icm__strdup(icm_error_last()->message);
    job->files[i]->state = rc != 0 ? ICM_EXPIRE_FILE_FAILED
                           : outcome == ICM_DELETE_ALREADY_GONE ? ICM_EXPIRE_FILE_ALREADY_GONE
                                                                : ICM_EXPIRE_FILE_DELETED;
}

static void *delete_worker(void *arg)
{
    delete_job *job = arg;
    icm__link_cache cache = {0};
    for (;;) {
        if (atomic_load(&job->next) > 0 && icm__batch_clock() >= job->deadline_ms)
            break;
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->count)
            break;
        delete_one(job, &cache, i);
    }
    icm__link_cache_dispose(&cache);
    return NULL;
}

/* Run the job on up to `threads` threads (the caller's thread is one of them); returns how many
 * files were handled (a prefix; at least one when count > 0). */
static size_t run_job(delete_job *job, unsigned threads)
{
    pthread_t tids[64];
    size_t started = 0;
    size_t want = threads > 64 ? 64 : threads;
    if (want > job->count)
        want = job->count;
    for (size_t t = 1; t < want; t++) {
        if (pthread_create(&tids[started], NULL, delete_worker, job) != 0)
            break; /* fewer threads is fine: the caller's thread does the rest */
        started++;
    }
    delete_worker(job);
    for (size_t t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    size_t handled = atomic_load(&job->next);
    return handled < job->count ? handled : job->count;
}

/* The delete phase's settings and state. */
typedef struct deleter {
    icm_fileio *io;
    icm_expire_result *r;
    unsigned threads;
    size_t batch_limit;
    icm__expire_recheck *recheck;   /* NULL: no re-check (icm_delete_expired_files) */
    icm_lease *lease;
    icm_delete_cb on_delete;
    void *on_delete_payload;
    size_t deleted;
} deleter;

/* One category of the safe order: the PLANNED files of files[] whose kind is in [lo, hi]. */
typedef struct category {
    icm_expire_file *files;
    size_t n;
    icm_expire_file_kind lo, hi;
    size_t at;                      /* files before it are done with */
} category;

static bool in_category(const icm_expire_file *f, const category *c)
{
    return f->kind >= c->lo && f->kind <= c->hi && f->state == ICM_EXPIRE_FILE_PLANNED;
}

/* Skip to the category's next PLANNED file; false when there is none. */
static bool category_pending(category *c)
{
    while (c->at < c->n && !in_category(&c->files[c->at], c))
        c->at++;
    return c->at < c->n;
}

/* The next batch of the category (at most `limit` files) into pick[]; returns how many. */
static size_t take_batch(category *c, icm_expire_file **pick, size_t limit)
{
    size_t m = 0;
    for (size_t i = c->at; i < c->n && m < limit; i++)
        if (in_category(&c->files[i], c))
            pick[m++] = &c->files[i];
    return m;
}

/* The handled files of a batch: failures become problems, each goes to on_delete. Returns 0,
 * ICM_ENOMEM or ICM_EUSER (the callback asked to stop). */
static int settle_batch(deleter *d, icm_expire_file **pick, const int *codes,
                        char *const *messages, size_t handled)
{
    int rc = 0;
    for (size_t i = 0; i < handled; i++) {
        const icm_expire_file *f = pick[i];
        d->deleted += f->state == ICM_EXPIRE_FILE_DELETED;
        if (codes[i] != 0 && rc == 0)
            rc = icm__expire_add_problem(d->r,
                                         codes[i] == ICM_EREFUSED /* only the link guard's */
                                             ? ICM_EXPIRE_PROBLEM_THROUGH_LINK
                                             : ICM_EXPIRE_PROBLEM_DELETE_FAILED,
                                         f->path, codes[i],
                                         messages[i] != NULL ? messages[i] : "");
        if (d->on_delete == NULL || rc != 0)
            continue;
        icm_delete_event ev = {f->path, icm_expire_file_kind_name(f->kind), f->size_bytes,
                               f->state == ICM_EXPIRE_FILE_DELETED        ? ICM_DELETE_DELETED
                               : f->state == ICM_EXPIRE_FILE_ALREADY_GONE ? ICM_DELETE_ALREADY_GONE
                                                                          : ICM_DELETE_FAILED,
                               codes[i], codes[i] != 0 ? messages[i] : NULL, i + 1 == handled};
        if (d->on_delete(&ev, d->on_delete_payload) != 0)
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EUSER, f->path,
                                "the delete callback asked to stop after this file; the files "
                                "after it were not deleted");
    }
    return rc;
}

/* Before a batch: the re-check and the lease. Returns 0 or what stops the deletes. */
static int before_batch(deleter *d)
{
    int rc = d->recheck != NULL ? icm__expire_recheck_run(d->recheck, d->r) : 0;
    if (rc == 0 && d->lease != NULL && (rc = icm_lease_renew(d->lease, 0)) != 0) {
        icm__error_saved *saved = icm__error_save();
        int prc = icm__expire_add_problem(d->r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED,
                                          icm_lease_location(d->lease), rc,
                                          icm_error_last()->message);
        icm__error_restore(saved);
        rc = prc != 0 ? prc : rc;
    }
    return rc;
}

/* One batch of a category: files[] and the per-file slots of `limit` files. */
static int delete_batch(deleter *d, category *c, icm_expire_file **pick, int *codes,
                        char **messages)
{
    size_t m = take_batch(c, pick, d->batch_limit);
    if (m == 0)
        return 0;
    memset(codes, 0, m * sizeof *codes);
    memset(messages, 0, m * sizeof *messages);
    icm__link_guard guard = {0};
    const char *roots[3];
    size_t n_roots = d->recheck != NULL
                         ? icm__table_roots(icm_table_get_metadata(d->recheck->t), roots)
                         : 0;
    if (n_roots > 0 && icm__link_guard_init(&guard, d->io, roots, n_roots) != 0) {
        icm__link_guard_dispose(&guard);
        return ICM_ENOMEM;
    }
    delete_job job = {d->io, pick, m, codes, messages, icm__batch_clock() + ICM_DELETE_BATCH_MS,
                      0, n_roots > 0 ? &guard : NULL};
    size_t handled = run_job(&job, d->threads);
    icm__link_guard_dispose(&guard);
    int rc = settle_batch(d, pick, codes, messages, handled);
    for (size_t i = 0; i < m; i++) {
        icm__free(messages[i]);
        messages[i] = NULL;
    }
    return rc;
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

static int delete_categories(deleter *d, category *cats, size_t n_cats)
{
    size_t limit = d->batch_limit;
    icm_expire_file **pick = icm__calloc(limit, sizeof *pick);
    int *codes = icm__calloc(limit, sizeof *codes);
    char **messages = icm__calloc(limit, sizeof *messages);
    int rc = pick != NULL && codes != NULL && messages != NULL ? 0 : ICM_ENOMEM;
    for (size_t k = 0; rc == 0 && k < n_cats; k++) {
        if (cats[k].lo == ICM_EXPIRE_FILE_CHECKSUM)
            rc = keep_companions(d->r);
        while (rc == 0 && category_pending(&cats[k])) {
            rc = before_batch(d);
            if (rc == 0 && category_pending(&cats[k]))
                rc = delete_batch(d, &cats[k], pick, codes, messages);
        }
    }
    icm__free(messages);
    icm__free(codes);
    icm__free(pick);
    return rc;
}

/* Delete the planned files in the safe order (data and delete files, manifests, manifest lists,
 * statistics files, checksum companions), in batches. Returns the number deleted, or what
 * stopped the deletes (the files left stay PLANNED; a problem says so). */
static int64_t delete_planned(deleter *d)
{
    icm_expire_result *r = d->r;
    category cats[] = {
        {r->deleted_files, r->deleted_file_count, ICM_EXPIRE_FILE_DATA,
         ICM_EXPIRE_FILE_DELETION_VECTOR, 0},
        {r->deleted_manifests, r->deleted_manifest_count, ICM_EXPIRE_FILE_MANIFEST,
         ICM_EXPIRE_FILE_MANIFEST, 0},
        {r->deleted_manifests, r->deleted_manifest_count, ICM_EXPIRE_FILE_MANIFEST_LIST,
         ICM_EXPIRE_FILE_MANIFEST_LIST, 0},
        {r->deleted_statistics_files, r->deleted_statistics_file_count,
         ICM_EXPIRE_FILE_STATISTICS, ICM_EXPIRE_FILE_PARTITION_STATISTICS, 0},
        /* last: a companion goes only once its file is gone (keep_companions) */
        {r->deleted_checksum_files, r->deleted_checksum_file_count, ICM_EXPIRE_FILE_CHECKSUM,
         ICM_EXPIRE_FILE_CHECKSUM, 0},
    };
    r->dry_run = false;
    r->delete_phase = true;
    int rc = delete_categories(d, cats, sizeof cats / sizeof cats[0]);
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
    if (rc != 0)
        return rc;
    icm_error_clear(); /* failures are in r->problems; the call itself succeeded */
    return (int64_t)d->deleted;
}

int64_t icm_delete_expired_files(icm_fileio *io, icm_expire_result *result)
{
    if (io == NULL || result == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL, "NULL argument");
    if (!result->deletable)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, NULL,
                              "refusing to delete: this plan comes from a dry run or from an "
                              "expiry whose commit did not happen");
    deleter d = {io, result, 1, icm__batch_limit(0), NULL, NULL, NULL, NULL, 0};
    return delete_planned(&d);
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
                                 out_changes, out_md, changed, &r->removed_spec_count,
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
    return 0;
}

typedef struct attempt_state {
    const icm_expire_options *o;
    int64_t now_ms;
    icm_expire_result *r;
    icm_table_metadata *base; /* pre-expiry metadata of the latest attempt (owned) */
} attempt_state;

/* The commit of one attempt, decided afresh on the table's current metadata (table/commit.h:
 * each retry refreshes the table first, so expiry recomputes which snapshots go). */
static int expire_attempt(icm_table *t, icm_table_changes **out, void *payload)
{
    attempt_state *a = payload;
    *out = NULL;
    icm_table_metadata_free(a->base);
    a->base = NULL;
    icm_table_changes *changes = NULL;
    icm_table_metadata *new_md = NULL;
    bool changed = false;
    int rc = prepare(t, a->o, a->now_ms, a->r, &changes, &new_md, &changed);
    icm_table_metadata_free(new_md);
    if (rc == 0 && changed)
        rc = icm_table_metadata_copy(&a->base, icm_table_get_metadata(t));
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
 * success *base_out is the pre-expiry metadata of the final attempt (owned) and r->committed
 * says whether a commit happened. */
static int decide_and_commit(icm_table *t, const icm_expire_options *o, int64_t now_ms,
                             icm_expire_result *r, icm_table_metadata **base_out)
{
    *base_out = NULL;
    icm__commit_policy policy;
    icm__commit_policy_read(icm_table_get_metadata(t), &policy);
    if (policy.num_retries > (int64_t)o->max_commit_retries)
        policy.num_retries = (int64_t)o->max_commit_retries;
    attempt_state a = {o, now_ms, r, NULL};
    icm__commit_outcome outcome;
    int rc = icm__table_commit_retrying(t, &policy, expire_attempt, &a, &outcome);
    if (rc == 0 && outcome.committed) {
        r->committed = true;
        r->metadata_location = icm__strdup(icm_table_get_metadata_location(t));
        *base_out = a.base;
        return r->metadata_location == NULL ? ICM_ENOMEM : 0;
    }
    icm_table_metadata_free(a.base);
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
                              o->cleanup, r, NULL);
    if (rc == 0 && new_md != NULL)
        rc = icm__expire_hold_other_tables(t, new_md, r);
    if (rc == 0 && new_md != NULL && verifies(o))
        rc = icm__expire_verify(icm_table_get_fileio(t), new_md, r);
    icm_table_metadata_free(new_md);
    return rc;
}

/* After the commit: reload, plan against everything now in the table, delete in batches, each
 * after a re-check of the table (icemaint/maint.h). */
static int cleanup_after_commit(icm_table *t, const icm_expire_options *o,
                                const icm_table_metadata *base, icm_expire_result *r)
{
    int rc = icm_table_refresh(t);
    if (rc != 0) {
        /* Without the current state no keep set can be trusted: delete nothing. */
        return icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_REFRESH_FAILED,
                                       icm_table_get_identifier(t), rc,
                                       icm_error_last()->message);
    }
    if ((rc = icm_table_check_own_metadata(t)) != 0) {
        /* A commit after ours put a copy's metadata in place: nothing of it is ours to plan. */
        icm__error_saved *saved = icm__error_save();
        int prc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_DELETES_STOPPED,
                                          icm_table_get_metadata_location(t), rc,
                                          icm_error_last()->message);
        icm__error_restore(saved);
        return prc != 0 ? prc : rc;
    }
    icm__expire_recheck check = {t, NULL, {NULL, NULL}};
    rc = icm__refs_seen_init(&check.seen);
    if (rc == 0 && (check.md_location = icm__strdup(icm_table_get_metadata_location(t))) == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0)
        rc = icm__expire_plan(icm_table_get_fileio(t), base, icm_table_get_metadata(t),
                              o->cleanup, r, &check.seen);
    if (rc == 0)
        rc = icm__expire_hold_other_tables(t, icm_table_get_metadata(t), r);
    if (rc == 0 && verifies(o))
        rc = icm__expire_verify(icm_table_get_fileio(t), icm_table_get_metadata(t), r);
    if (rc == 0) {
        r->deletable = true;
        deleter d = {icm_table_get_fileio(t), r,
                     o->max_concurrent_deletes ? o->max_concurrent_deletes : 1,
                     icm__batch_limit(o->delete_batch_size), &check, o->lease, o->on_delete,
                     o->on_delete_payload, 0};
        int64_t n = delete_planned(&d);
        rc = n < 0 ? (int)n : 0;
    }
    icm__expire_recheck_dispose(&check);
    return rc;
}

/* The caller's options as this version knows them: fields an older struct lacks take their
 * defaults (version 1 ends before on_delete, version 2 before no_verify). */
static icm_expire_options normalized(const icm_expire_options *opts)
{
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    if (opts == NULL)
        return o;
    if (opts->version >= ICM_EXPIRE_OPTIONS_VERSION)
        return *opts;
    memcpy(&o, opts,
           opts->version >= 2 ? offsetof(icm_expire_options, no_verify)
                              : offsetof(icm_expire_options, on_delete));
    o.version = ICM_EXPIRE_OPTIONS_VERSION;
    return o;
}

int icm_expire_snapshots(icm_table *t, const icm_expire_options *opts, icm_expire_result **out)
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
    if (o->cleanup != ICM_EXPIRE_CLEANUP_NONE && (rc = icm__expire_check_site(t)) != 0)
        return rc;
    /* A table whose folder another format manages (UniForm: a `_delta_log/` beside the
     * metadata): a file Iceberg expired may still be the other format's (its time travel), so
     * nothing is committed or deleted, dry runs too; only an expiry that deletes nothing runs
     * (other_format.h). */
    if (o->cleanup != ICM_EXPIRE_CLEANUP_NONE &&
        (rc = icm__other_format_check_roots(icm_table_get_fileio(t),
                                            icm_table_get_metadata(t))) != 0)
        return rc;
    icm_expire_result *r = NULL;
    if ((rc = icm__expire_result_new(&r)) != 0)
        return rc;
    r->dry_run = o->dry_run;
    r->cleanup = o->cleanup;
    int64_t now_ms = o->decide.now_ms != 0 ? o->decide.now_ms : icm__now_ms();
    if (o->dry_run) {
        rc = dry_run(t, o, now_ms, r);
    } else {
        icm_table_metadata *base = NULL;
        rc = decide_and_commit(t, o, now_ms, r, &base);
        if (rc == 0 && r->committed && o->cleanup != ICM_EXPIRE_CLEANUP_NONE)
            rc = cleanup_after_commit(t, o, base, r);
        icm_table_metadata_free(base);
    }
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
