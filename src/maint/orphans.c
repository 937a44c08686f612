/*
 * maint/orphans.c: the orphan sweep's entry point (orphans.h): plan (orphans_plan.c), then,
 * unless it is a dry run, delete the orphans with bounded concurrency.
 *
 * This is the only file of the sweep that deletes. Each orphan is checked once more against the
 * table's roots (table location, write.data.path, write.metadata.path) right before its delete,
 * so no planning bug can reach outside the table. Orphan deletes are not retried (as in Java):
 * a file that could not be deleted is still an orphan and the next sweep finds it again.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>

#include "icemaint/catalog.h"
#include "maint/orphans_internal.h"
#include "util/location.h"

#define MAX_DELETE_THREADS 64
#define PROGRESS_EVERY 1000

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

typedef struct delete_job {
    icm_fileio *io;
    icm_orphan_file *files;
    size_t count;
    const char *roots[3];
    size_t n_roots;
    atomic_size_t next;
    atomic_size_t done;
    bool checksums;   /* this pass deletes the checksum companions (else every other file) */
} delete_job;

static bool inside_roots(const delete_job *job, const char *loc)
{
    for (size_t i = 0; i < job->n_roots; i++)
        if (icm__location_is_inside(loc, job->roots[i]))
            return true;
    return false;
}

static void delete_one(delete_job *job, icm_orphan_file *f)
{
    int rc;
    /* A companion follows its file (orphans_plan.c) and goes only once that file is gone. */
    if (f->kind == ICM_ORPHAN_CHECKSUM && (f == job->files || f[-1].state != ICM_ORPHAN_DELETED))
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                            "not deleted: the file it is the checksum of was not deleted");
    else if (!inside_roots(job, f->path))
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                            "not deleted: outside the table location, write.data.path and "
                            "write.metadata.path");
    else
        rc = icm_fileio_delete(job->io, f->path); /* a missing file is success */
    if (rc == 0) {
        f->state = ICM_ORPHAN_DELETED;
        return;
    }
    f->state = ICM_ORPHAN_FAILED;
    f->error_code = rc;
    f->error_message = icm__strdup(icm_error_last()->message); /* NULL on OOM is allowed */
}

/* Take files until none are left. The calling thread (progress != NULL) reports progress. */
static void drain(delete_job *job, icm_orphan_progress_cb progress, void *payload)
{
    size_t reported = 0;
    for (;;) {
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->count)
            return;
        if ((job->files[i].kind == ICM_ORPHAN_CHECKSUM) != job->checksums)
            continue; /* the other pass's */
        delete_one(job, &job->files[i]);
        size_t done = atomic_fetch_add(&job->done, 1) + 1;
        if (progress != NULL && done / PROGRESS_EVERY != reported / PROGRESS_EVERY) {
            reported = done;
            progress(done, job->count, payload);
        }
    }
}

static void *worker(void *arg)
{
    drain(arg, NULL, NULL);
    return NULL;
}

/* One pass over the orphans on up to max_concurrent_deletes threads. */
static void run_pass(delete_job *job, const icm_orphan_options *o)
{
    atomic_store(&job->next, 0);
    size_t want = o->max_concurrent_deletes > 1 ? o->max_concurrent_deletes : 1;
    if (want > MAX_DELETE_THREADS)
        want = MAX_DELETE_THREADS;
    if (want > job->count)
        want = job->count;
    pthread_t tids[MAX_DELETE_THREADS];
    size_t started = 0;
    for (size_t k = 1; k < want; k++) {
        if (pthread_create(&tids[started], NULL, worker, job) != 0)
            break; /* fewer threads is fine: the calling thread does the rest */
        started++;
    }
    drain(job, o->progress, o->progress_payload);
    for (size_t k = 0; k < started; k++)
        pthread_join(tids[k], NULL);
}

/* Every orphan, then (a second pass, once every file's outcome is known) the checksum
 * companions of those that were deleted. */
static void delete_all(icm_table *t, icm_orphan_result *r, const icm_orphan_options *o)
{
    const icm_table_metadata *md = icm_table_get_metadata(t);
    delete_job job = {.io = icm_table_get_fileio(t), .files = r->orphans,
                      .count = r->orphan_count};
    const char *cand[3] = {icm_table_metadata_location(md),
                           icm_table_metadata_property(md, "write.data.path"),
                           icm_table_metadata_property(md, "write.metadata.path")};
    for (size_t i = 0; i < 3; i++)
        if (cand[i] != NULL && cand[i][0] != '\0')
            job.roots[job.n_roots++] = cand[i];
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);
    job.checksums = false;
    run_pass(&job, o);
    if (r->counts[ICM_ORPHAN_CHECKSUM] > 0) {
        job.checksums = true;
        run_pass(&job, o);
    }
    if (o->progress != NULL)
        o->progress(job.count, job.count, o->progress_payload);
}

/* ------------------------------------------------------------------------------------------ */
/* entry                                                                                       */

int icm_remove_orphan_files(icm_table *t, const icm_orphan_options *opts,
                            icm_orphan_result **out)
{
    if (out != NULL)
        *out = NULL;
    if (t == NULL || out == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_remove_orphan_files: table and out are required");
    icm_orphan_options defaults = ICM_ORPHAN_OPTIONS_INIT;
    const icm_orphan_options *o = opts != NULL ? opts : &defaults;
    if ((unsigned)o->prefix_mismatch > ICM_PREFIX_MISMATCH_DELETE)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "prefix_mismatch must be error, ignore or delete");
    if (o->exclude_location_count > 0 && o->exclude_locations == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "exclude_locations is NULL but its count is %zu",
                              o->exclude_location_count);
    int64_t now = o->now_ms != 0 ? o->now_ms : icm__now_ms();

    icm_orphan_result *r = NULL;
    int rc = icm__orphans_plan(t, o, now, &r);
    if (rc != 0)
        return rc;
    if (!o->dry_run && r->orphan_count > 0) {
        delete_all(t, r, o);
        icm__orphan_result_tally(r, true);
    }
    *out = r;
    return 0;
}
