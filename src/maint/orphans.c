/*
 * maint/orphans.c: the orphan sweep's entry point (orphans.h): plan (orphans_plan.c), then,
 * unless it is a dry run, delete the orphans with bounded concurrency.
 *
 * This is the only file of the sweep that deletes. Deletes go in batches; before each the table
 * is reloaded and orphans that a commit meanwhile references are dropped (icemaint/maint.h, "The
 * delete phase"; the re-check itself is planning code, orphans_plan.c). Each orphan is checked
 * once more against the table's roots (table location, write.data.path, write.metadata.path)
 * right before its delete, so no planning bug can reach outside the table; a local one must also
 * lie where its name says, with no symbolic link below the table root on its way (link_guard.h),
 * and still be the file the listing saw: same size and mtime, still older than the cutoff (a
 * file replaced during the settle time is someone's new file). Orphan deletes are
 * not retried (as in Java): a file that could not be deleted is still an orphan and the next
 * sweep finds it again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "icemaint/catalog.h"
#include "maint/delete_common.h"
#include "maint/link_guard.h"
#include "maint/orphans_internal.h"
#include "util/location.h"

#define MAX_DELETE_THREADS 64
#define PROGRESS_EVERY 1000

const char *icm_delete_outcome_name(icm_delete_outcome outcome)
{
    switch (outcome) {
    case ICM_DELETE_DELETED:
        return "deleted";
    case ICM_DELETE_ALREADY_GONE:
        return "already_gone";
    case ICM_DELETE_FAILED:
        break;
    }
    return "failed";
}

const char *icm_orphan_kind_name(icm_orphan_kind kind)
{
    switch (kind) {
    case ICM_ORPHAN_DATA:
        return "data";
    case ICM_ORPHAN_DELETE:
        return "delete";
    case ICM_ORPHAN_MANIFEST:
        return "manifest";
    case ICM_ORPHAN_MANIFEST_LIST:
        return "manifest_list";
    case ICM_ORPHAN_METADATA:
        return "metadata";
    case ICM_ORPHAN_CHECKSUM:
        return "checksum";
    case ICM_ORPHAN_OTHER:
        break;
    }
    return "other";
}

int icm_prefix_mismatch_parse(const char *text, icm_prefix_mismatch *out)
{
    static const char *const names[] = {"error", "ignore", "delete"};
    for (size_t i = 0; text != NULL && i < 3; i++) {
        if (strcasecmp(text, names[i]) == 0) {
            *out = (icm_prefix_mismatch)i;
            return 0;
        }
    }
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                          "unknown prefix-mismatch mode '%s' (use error, ignore or delete)",
                          text != NULL ? text : "(null)");
}

void icm_orphan_result_free(icm_orphan_result *result)
{
    if (result == NULL)
        return;
    for (size_t i = 0; i < result->orphan_count; i++) {
        icm__free(result->orphans[i].path);
        icm__free(result->orphans[i].error_message);
    }
    icm__free(result->orphans);
    for (size_t i = 0; i < result->warning_count; i++)
        icm__free(result->warnings[i]);
    icm__free(result->warnings);
    icm__free(result->location);
    icm__free(result);
}

/* ------------------------------------------------------------------------------------------ */
/* deleting                                                                                    */

/* One batch (icemaint/maint.h), shared by the delete threads: each takes the next index until
 * none is left or the batch's time is up, so the indices handled are always a prefix of it.
 * A batch belongs to one of two passes: every orphan but the checksum companions, then the
 * companions (entries of the other pass are passed over). */
typedef struct delete_job {
    icm_fileio *io;
    icm_orphan_file *files;       /* the batch */
    const icm_orphan_file *first; /* the whole list (a companion's file may precede the batch) */
    size_t count;
    bool checksums;               /* this pass deletes the checksum companions */
    const char *roots[3];
    size_t n_roots;
    const icm__link_guard *guard;
    int64_t cutoff_ms;     /* a file at least this new is no longer an orphan */
    bool listed_exactly;   /* sizes and mtimes come from a listing (not a file list) */
    int64_t deadline_ms;   /* icm__batch_clock(): no file is started after it */
    atomic_size_t next;
    atomic_size_t done;
    size_t done_before;    /* files handled by earlier batches (progress) */
    size_t total;          /* orphans in all (progress) */
} delete_job;

static bool inside_roots(const delete_job *job, const char *loc)
{
    for (size_t i = 0; i < job->n_roots; i++)
        if (icm__location_is_inside(loc, job->roots[i]))
            return true;
    return false;
}

/* A companion follows its file (orphans_plan.c) and goes only once that file is gone. */
static bool companion_free_to_go(const delete_job *job, const icm_orphan_file *f)
{
    return f != job->first &&
           (f[-1].state == ICM_ORPHAN_DELETED || f[-1].state == ICM_ORPHAN_ALREADY_GONE);
}

/* Is the file at f->path still the one the listing saw? ICM_ENOTFOUND when it is gone,
 * ICM_EREFUSED (last error says how) when it changed. A file list's sizes and mtimes come from
 * an inventory and may be spelled differently: there only the age is checked. A checksum
 * companion is planned whatever its age (it goes with its file): only its size and mtime. */
static int still_as_listed(const delete_job *job, const icm_orphan_file *f)
{
    icm_file_info now;
    int rc = icm_fileio_stat(job->io, f->path, &now);
    if (rc != 0)
        return rc;
    bool aged = f->kind != ICM_ORPHAN_CHECKSUM; /* a companion goes whatever its age */
    if (aged && (now.mtime_ms < 0 || now.mtime_ms >= job->cutoff_ms))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                              "not deleted: changed since it was listed (now modified at %lld "
                              "ms, not older than the cutoff); kept", (long long)now.mtime_ms);
    if (job->listed_exactly && ((f->size_bytes >= 0 && now.size_bytes != f->size_bytes) ||
                                (f->mtime_ms >= 0 && now.mtime_ms != f->mtime_ms)))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                              "not deleted: changed since it was listed (size %lld -> %lld, "
                              "mtime %lld -> %lld ms); kept", (long long)f->size_bytes,
                              (long long)now.size_bytes, (long long)f->mtime_ms,
                              (long long)now.mtime_ms);
    return 0;
}

/* The last checks (roots, links, unchanged), then the delete. A file found gone by a check is
 * ALREADY_GONE without a delete; *kept: a check refused it on purpose (a link, a change, its
 * file kept), so it stays without being a failure. */
static int checked_delete(delete_job *job, icm__link_cache *cache, const icm_orphan_file *f,
                          icm_delete_outcome *outcome, bool *kept)
{
    *outcome = ICM_DELETE_FAILED;
    *kept = false;
    int rc;
    if (f->kind == ICM_ORPHAN_CHECKSUM && !companion_free_to_go(job, f)) {
        *kept = f != job->first && f[-1].state == ICM_ORPHAN_KEPT;
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                              "not deleted: the file it is the checksum of was not deleted");
    }
    if (!inside_roots(job, f->path))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                              "not deleted: outside the table location, write.data.path and "
                              "write.metadata.path");
    if ((rc = icm__link_guard_check(job->guard, cache, f->path)) == 0)
        rc = still_as_listed(job, f);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        *outcome = ICM_DELETE_ALREADY_GONE;
        return 0;
    }
    *kept = rc == ICM_EREFUSED;
    return rc != 0 ? rc : icm__delete_counted(job->io, f->path, outcome);
}

static void delete_one(delete_job *job, icm__link_cache *cache, icm_orphan_file *f)
{
    icm_delete_outcome outcome;
    bool kept;
    int rc = checked_delete(job, cache, f, &outcome, &kept);
    if (rc == 0) {
        f->state = outcome == ICM_DELETE_ALREADY_GONE ? ICM_ORPHAN_ALREADY_GONE
                                                      : ICM_ORPHAN_DELETED;
        return;
    }
    f->state = kept ? ICM_ORPHAN_KEPT : ICM_ORPHAN_FAILED;
    f->error_code = rc;
    f->error_message = icm__strdup(icm_error_last()->message); /* NULL on OOM is allowed */
}

/* Take files until none are left or the batch's time is up (the first file is always taken).
 * The calling thread (progress != NULL) reports progress. */
static void drain(delete_job *job, icm_orphan_progress_cb progress, void *payload)
{
    size_t reported = 0;
    icm__link_cache cache = {0};
    for (;;) {
        if (atomic_load(&job->next) > 0 && icm__batch_clock() >= job->deadline_ms)
            break;
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->count)
            break;
        if ((job->files[i].kind == ICM_ORPHAN_CHECKSUM) != job->checksums)
            continue; /* the other pass's */
        delete_one(job, &cache, &job->files[i]);
        size_t done = atomic_fetch_add(&job->done, 1) + 1;
        if (progress != NULL && done / PROGRESS_EVERY != reported / PROGRESS_EVERY) {
            reported = done;
            progress(job->done_before + done, job->total, payload);
        }
    }
    icm__link_cache_dispose(&cache);
}

static void *worker(void *arg)
{
    drain(arg, NULL, NULL);
    return NULL;
}

/* Delete the entries of this pass among r->orphans[at, at + count) (fewer when the batch's time
 * runs out); returns how many indices were handled (at least one when count > 0; none only
 * when there was no memory for the link guard). */
static size_t run_batch(icm_table *t, icm_orphan_result *r, size_t at, size_t count,
                        bool checksums, size_t done_before, const icm_orphan_options *o)
{
    const icm_table_metadata *md = icm_table_get_metadata(t);
    delete_job job = {.io = icm_table_get_fileio(t), .files = &r->orphans[at],
                      .first = r->orphans, .count = count, .checksums = checksums,
                      .deadline_ms = icm__batch_clock() + ICM_DELETE_BATCH_MS,
                      .done_before = done_before, .total = r->orphan_count,
                      .cutoff_ms = r->older_than_ms, .listed_exactly = o->file_list == NULL};
    job.n_roots = icm__table_roots(md, job.roots);
    icm__link_guard guard;
    if (icm__link_guard_init(&guard, job.io, job.roots, job.n_roots) != 0) {
        icm__link_guard_dispose(&guard);
        return 0; /* out of memory: nothing handled */
    }
    job.guard = &guard;
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);

    size_t want = o->max_concurrent_deletes > 1 ? o->max_concurrent_deletes : 1;
    if (want > MAX_DELETE_THREADS)
        want = MAX_DELETE_THREADS;
    if (want > job.count)
        want = job.count;
    pthread_t tids[MAX_DELETE_THREADS];
    size_t started = 0;
    for (size_t k = 1; k < want; k++) {
        if (pthread_create(&tids[started], NULL, worker, &job) != 0)
            break; /* fewer threads is fine: the calling thread does the rest */
        started++;
    }
    drain(&job, o->progress, o->progress_payload);
    for (size_t k = 0; k < started; k++)
        pthread_join(tids[k], NULL);
    icm__link_guard_dispose(&guard);
    size_t handled = atomic_load(&job.next);
    return handled < count ? handled : count;
}

/* Each file of this pass among files[0, n) to on_delete, in order (KEPT ones were not acted
 * on and are not reported there). Returns 0 or ICM_EUSER (the
 * callback asked to stop: the deletes stop after this batch). */
static int report_batch(const icm_orphan_file *files, size_t n, bool checksums,
                        const icm_orphan_options *o)
{
    size_t last = n;
    for (size_t i = 0; i < n; i++)
        if ((files[i].kind == ICM_ORPHAN_CHECKSUM) == checksums &&
            files[i].state != ICM_ORPHAN_KEPT)
            last = i;
    for (size_t i = 0; o->on_delete != NULL && last < n && i <= last; i++) {
        const icm_orphan_file *f = &files[i];
        if ((f->kind == ICM_ORPHAN_CHECKSUM) != checksums || f->state == ICM_ORPHAN_KEPT)
            continue; /* the other pass's, or kept: not acted on */
        icm_delete_event ev = {f->path, icm_orphan_kind_name(f->kind), f->size_bytes,
                               ICM_DELETE_DELETED, 0, NULL, i == last};
        if (f->state == ICM_ORPHAN_ALREADY_GONE) {
            ev.outcome = ICM_DELETE_ALREADY_GONE;
        } else if (f->state == ICM_ORPHAN_FAILED) {
            ev.outcome = ICM_DELETE_FAILED;
            ev.error_code = f->error_code;
            ev.error_message = f->error_message;
        }
        if (o->on_delete(&ev, o->on_delete_payload) != 0)
            return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EUSER, f->path,
                                  "the delete callback asked to stop after this file; the "
                                  "orphans after it were not deleted");
    }
    return 0;
}

/* Sleep `ms` (restarted after a signal until it has passed). */
static void settle(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

/* One pass over the orphans, in batches: before each the table is reloaded and the orphans a
 * commit meanwhile references are dropped (icm__orphans_revalidate), and the lease renewed. */
static int delete_pass(icm_table *t, icm__orphan_plan *plan, icm_orphan_result *r,
                       const icm_orphan_options *o, bool checksums)
{
    size_t limit = icm__batch_limit(o->delete_batch_size);
    size_t at = 0;
    int rc = 0;
    while (rc == 0 && at < r->orphan_count) {
        rc = icm__orphans_revalidate(plan, at);
        if (rc == 0 && o->lease != NULL)
            rc = icm_lease_renew(o->lease, 0);
        if (rc != 0 || at >= r->orphan_count)
            break;
        size_t n = r->orphan_count - at < limit ? r->orphan_count - at : limit;
        size_t done = run_batch(t, r, at, n, checksums, at, o);
        if (done == 0) /* only when the link guard found no memory */
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_ENOMEM, NULL, "out of memory");
        if (rc == 0)
            rc = report_batch(&r->orphans[at], done, checksums, o);
        at += done;
    }
    return rc;
}

static bool has_companions(const icm_orphan_result *r)
{
    for (size_t i = 0; i < r->orphan_count; i++)
        if (r->orphans[i].kind == ICM_ORPHAN_CHECKSUM)
            return true;
    return false;
}

/*
 * The delete phase (icemaint/maint.h): after the settle time (options.settle_ms), every
 * orphan, then (a second pass, once every file's outcome is known) the checksum companions of
 * those that went. Any failure of a reload, of newer metadata or of the lease stops the
 * deletes (nothing is guessed). Returns 0 or what stopped them.
 */
static int delete_all(icm_table *t, icm__orphan_plan *plan, icm_orphan_result *r,
                      const icm_orphan_options *o)
{
    settle(o->settle_ms);
    int rc = delete_pass(t, plan, r, o, false);
    if (rc == 0 && has_companions(r))
        rc = delete_pass(t, plan, r, o, true);
    r->delete_stopped = rc != 0;
    if (rc == 0 && o->progress != NULL)
        o->progress(r->orphan_count, r->orphan_count, o->progress_payload);
    return rc;
}

/* A dry run reports what the real run would keep: the orphans the link check (link_guard.h)
 * refuses now become KEPT, with its message. (The real run checks again right before each
 * delete; what changes meanwhile, and the changed-file check, only it can see.) Reads only.
 * Returns 0 or ICM_ENOMEM. */
static int mark_kept_by_links(icm_table *t, icm_orphan_result *r)
{
    const char *roots[3];
    size_t n_roots = icm__table_roots(icm_table_get_metadata(t), roots);
    icm__link_guard guard;
    icm__link_cache cache = {0};
    int rc = icm__link_guard_init(&guard, icm_table_get_fileio(t), roots, n_roots);
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++) {
        icm_orphan_file *f = &r->orphans[i];
        bool file_kept = f->kind == ICM_ORPHAN_CHECKSUM && i > 0 &&
                         r->orphans[i - 1].state == ICM_ORPHAN_KEPT;
        int check = file_kept ? ICM_EREFUSED : icm__link_guard_check(&guard, &cache, f->path);
        if (check == ICM_ENOMEM)
            rc = ICM_ENOMEM;
        if (check != ICM_EREFUSED)
            continue;
        f->state = ICM_ORPHAN_KEPT;
        f->error_code = ICM_EREFUSED;
        f->error_message = icm__strdup(file_kept ? "not deleted: the file it is the checksum "
                                                   "of is kept"
                                                 : icm_error_last()->message);
    }
    icm__link_cache_dispose(&cache);
    icm__link_guard_dispose(&guard);
    icm_error_clear();
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* entry                                                                                       */

/* The caller's options as this version knows them: fields an older struct lacks take their
 * defaults (version 1 ends before on_delete, version 2 before no_verify). */
static icm_orphan_options normalized(const icm_orphan_options *opts)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    if (opts == NULL)
        return o;
    if (opts->version >= ICM_ORPHAN_OPTIONS_VERSION)
        return *opts;
    memcpy(&o, opts,
           opts->version >= 2 ? offsetof(icm_orphan_options, no_verify)
                              : offsetof(icm_orphan_options, on_delete));
    return o;
}

int icm_remove_orphan_files(icm_table *t, const icm_orphan_options *opts,
                            icm_orphan_result **out)
{
    if (out != NULL)
        *out = NULL;
    if (t == NULL || out == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_remove_orphan_files: table and out are required");
    icm_orphan_options norm = normalized(opts);
    const icm_orphan_options *o = &norm;
    if ((unsigned)o->prefix_mismatch > ICM_PREFIX_MISMATCH_DELETE)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "prefix_mismatch must be error, ignore or delete");
    if (o->exclude_location_count > 0 && o->exclude_locations == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "exclude_locations is NULL but its count is %zu",
                              o->exclude_location_count);
    int64_t now = o->now_ms != 0 ? o->now_ms : icm__now_ms();

    icm_orphan_result *r = NULL;
    icm__orphan_plan *plan = NULL;
    int rc = icm__orphans_plan(t, o, now, o->dry_run ? NULL : &plan, &r);
    if (rc != 0)
        return rc;
    if (!o->dry_run && r->orphan_count > 0) {
        rc = delete_all(t, plan, r, o);
        icm__orphan_result_tally(r, true);
    } else if (r->orphan_count > 0) {
        rc = mark_kept_by_links(t, r);
        icm__orphan_result_tally(r, false);
    }
    icm__orphan_plan_free(plan);
    if (rc == ICM_ENOMEM) {
        icm_orphan_result_free(r);
        return rc;
    }
    *out = r;
    return rc;
}
