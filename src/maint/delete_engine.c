/*
 * maint/delete_engine.c: the delete phase of both maintenance commands (delete_engine.h).
 *
 * A run walks the plan in rank order and cuts it into batches (before each the caller's
 * before_batch hook); a batch is shared by a few threads that take chunks of it in order under
 * one lock, so the files handled are always a prefix of the batch and each file belongs to
 * exactly one thread. A chunk is one local file, or up to ICM_FILEIO_DELETE_BATCH_MAX
 * object-store keys; its files pass their checks and go to icm_fileio_delete_batch together.
 * An object-store chunk's checks are requests too (the sweep's re-stat is a HEAD each): when
 * the hooks say their check stats each file (check_stats), the chunk's stats are made all at
 * once first (io/probe.h: on S3 from one thread through libcurl multi, s3.check.max-in-flight
 * in flight), then the checks run CHECK_THREADS at a time, all of them before the chunk's one
 * request, so checking stays right before deleting and a request still carries up to a
 * thousand keys.
 * Outcomes are settled and reported on the calling thread once the batch's threads are joined.
 *
 * Retries. A file whose delete failed retryably is not sent again from inside its chunk: it
 * stays pending (its failure noted) and the rank is walked again after the backoff, so the
 * retry goes through everything its first attempt went through — before_batch (the reload that
 * grows the keep set, the lease), planned (dropped if it joined the keep set meanwhile: a
 * concurrent commit may have made it live again during the wait) and check (the link check,
 * the re-stat). A retry sent from inside the chunk would pass the check but not the keep-set
 * re-check, and the longer the backoff, the likelier that a writer has re-referenced the file.
 * The first attempt, where nearly every file ends, is untouched by this.
 *
 * This file deletes: only the executing files (expire.c, orphans.c) reach it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "io/fileio_internal.h"
#include "io/probe.h"
#include "maint/delete_engine.h"
#include "maint/trash.h"
#include "util/location.h"
#include "util/parallel.h"
#include "util/util.h"

#define MAX_THREADS 64
#define CHECK_THREADS 32
#define PROGRESS_EVERY 1000

/* Monotonic milliseconds, for batch time slices and seeds only. */
static int64_t batch_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Files per batch: the option when set, else ICM_DELETE_BATCH_FILES. */
static size_t batch_limit(size_t option)
{
    return option > 0 ? option : ICM_DELETE_BATCH_FILES;
}

/* The run's settings and its position. */
typedef struct run {
    icm_fileio *io;
    const icm__delete_policy *p;
    const icm__delete_hooks *h;
    icm__delete_stats stats;
    size_t n;
    size_t done;        /* files handled before the current batch (progress) */
    size_t chunk_cap;   /* object-store keys per request */
} run;

/* One thread's room for a chunk (chunk_cap entries each). */
typedef struct scratch {
    icm__delete_item **items;
    bool *passed;       /* an object-store chunk's check verdicts */
    icm__probe *probes; /* an object-store chunk's stats, made ahead of its checks */
    const char **paths;
    icm_fileio_delete_result *results;
    uint64_t seed;      /* jitter */
} scratch;

/* One batch, shared by its threads. */
typedef struct batch {
    run *r;
    icm__delete_item **files;
    size_t count;
    int64_t deadline_ms;
    pthread_mutex_t lock;
    size_t next;             /* under lock: the first file no thread has taken */
    atomic_size_t handled;   /* files settled by the threads (progress) */
    atomic_size_t requests;
} batch;

typedef struct worker {
    batch *b;
    scratch *s;
    bool reports;            /* the calling thread: reports progress */
} worker;

/* ------------------------------------------------------------------------------------------ */
/* one chunk                                                                                   */

/* Whether the file is one of this machine's file system (also an object-store name a path map
 * maps onto local disk): then it is deleted alone, right after its own check. */
static bool is_local(icm_fileio *io, const char *path)
{
    return icm__fileio_deletes_locally(io, path);
}

/* Take the next chunk of the batch into s->items; returns its size (0: none left, or the
 * batch's time is up; the first chunk is always taken). */
static size_t take_chunk(batch *b, scratch *s)
{
    pthread_mutex_lock(&b->lock);
    size_t m = 0;
    if (b->next < b->count && (b->next == 0 || batch_clock() < b->deadline_ms)) {
        s->items[m++] = b->files[b->next++];
        if (!is_local(b->r->io, s->items[0]->path))
            while (m < b->r->chunk_cap && b->next < b->count &&
                   !is_local(b->r->io, b->files[b->next]->path))
                s->items[m++] = b->files[b->next++];
    }
    pthread_mutex_unlock(&b->lock);
    return m;
}

static void settle(icm__delete_item *item, icm__delete_state state, int code,
                   const char *message)
{
    item->state = state;
    item->code = code;
    icm__free(item->message);
    item->message = message != NULL ? icm__strdup(message) : NULL; /* NULL on OOM is allowed */
}

/* The check right before a request; true when the file is to be sent. */
static bool passes_check(batch *b, icm__link_cache *cache, icm__delete_item *item)
{
    const icm__delete_hooks *h = b->r->h;
    if (h->check == NULL)
        return true;
    int code = 0;
    switch (h->check(h->ctx, cache, item, &code)) {
    case ICM__VERDICT_DELETE:
        return true;
    case ICM__VERDICT_GONE:
        icm_error_clear();
        settle(item, ICM__DELETE_GONE, 0, NULL);
        return false;
    case ICM__VERDICT_KEPT:
        settle(item, ICM__DELETE_KEPT, code, icm_error_last()->message);
        return false;
    case ICM__VERDICT_FAILED:
        break;
    }
    settle(item, ICM__DELETE_FAILED, code != 0 ? code : ICM_EIO, icm_error_last()->message);
    return false;
}

/* Exponential backoff with jitter: min * 2^(retry-1), at most max, plus up to 10%. */
static int64_t backoff_ms(const icm__delete_policy *p, unsigned retry, uint64_t *seed)
{
    int64_t d = p->retry_min_wait_ms > 0 ? p->retry_min_wait_ms : 0;
    for (unsigned i = 1; i < retry && d < p->retry_max_wait_ms; i++)
        d *= 2;
    if (d > p->retry_max_wait_ms)
        d = p->retry_max_wait_ms > 0 ? p->retry_max_wait_ms : 0;
    if (d <= 0)
        return 0;
    *seed ^= *seed << 13; /* xorshift64 */
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    return d + (int64_t)(*seed % (uint64_t)(d / 10 + 1));
}

/* A file that was sent, failed retryably and waits for the rank's next pass (its failure is
 * noted in code and message, in case no retry is made). */
static bool awaits_retry(const icm__delete_item *item)
{
    return item->state == ICM__DELETE_PENDING && item->attempts > 0;
}

/* One object-store chunk's checks, shared out among threads (icm__parallel_for). */
typedef struct chunk_checks {
    batch *b;
    scratch *s;
} chunk_checks;

static void check_key(void *ctx, size_t i)
{
    chunk_checks *c = ctx;
    /* A key of an object store has no link to follow: the cache stays empty; the hook still
     * gets one of its own, as the contract says. */
    icm__link_cache cache = {0};
    c->s->passed[i] = passes_check(c->b, &cache, c->s->items[i]);
    icm__link_cache_dispose(&cache);
}

/* Stat the chunk's m files at once for their checks (hooks' check_stats); without memory for
 * it, each check stats its own file. */
static void stat_ahead(batch *b, scratch *s, size_t m)
{
    for (size_t i = 0; i < m; i++)
        s->probes[i] = (icm__probe){.location = s->items[i]->path};
    if (icm__fileio_probe_many(b->r->io, ICM__PROBE_STAT, s->probes, m) != 0) {
        icm_error_clear();
        return;
    }
    for (size_t i = 0; i < m; i++)
        s->items[i]->stat_ahead = &s->probes[i];
}

int icm__delete_item_stat(icm_fileio *io, const icm__delete_item *item, icm_file_info *out)
{
    icm__probe *p = item->stat_ahead;
    if (p == NULL)
        return icm_fileio_stat(out, io, item->path);
    *out = p->info;
    out->location = item->path;
    int rc = p->rc;
    if (rc == ICM_ENOMEM)
        return icm__error_oom();
    if (rc != 0 && rc != ICM_ENOTFOUND) {
        if (p->error == NULL)
            return icm__error_oom(); /* (saving the error ran out of memory) */
        icm__error_restore(p->error);
        p->error = NULL;
    } else if (rc == ICM_ENOTFOUND) {
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_ENOTFOUND, item->path, "no such object");
    }
    return rc;
}

/*
 * Delete the chunk s->items[0, m): check each file and send those that pass in one request. A
 * retryable failure with attempts left stays pending for the rank's next pass (file comment).
 */
static void run_chunk(batch *b, scratch *s, icm__link_cache *cache, size_t m)
{
    const icm__delete_policy *p = b->r->p;
    unsigned attempts = p->retry_attempts > 1 ? p->retry_attempts : 1;
    size_t k = 0;
    if (m > 1 && b->r->h->check != NULL) {
        /* (only object-store keys share a chunk) */
        if (b->r->h->check_stats)
            stat_ahead(b, s, m);
        chunk_checks c = {b, s};
        icm__parallel_for(m, CHECK_THREADS, check_key, &c);
        for (size_t i = 0; i < m; i++) {
            if (s->items[i]->stat_ahead != NULL) {
                icm__probes_dispose(s->items[i]->stat_ahead, 1);
                s->items[i]->stat_ahead = NULL;
            }
        }
        for (size_t i = 0; i < m; i++)
            if (s->passed[i])
                s->items[k++] = s->items[i];
    } else {
        for (size_t i = 0; i < m; i++)
            if (passes_check(b, cache, s->items[i]))
                s->items[k++] = s->items[i];
    }
    if (k == 0)
        return;
    for (size_t i = 0; i < k; i++) {
        s->paths[i] = s->items[i]->path;
        s->items[i]->attempts++;
    }
    atomic_fetch_add(&b->requests, 1);
    int rc = 0;
    if (p->trash != NULL)
        icm__trash_move_batch(p->trash, s->paths, k, s->results);
    else
        rc = icm_fileio_delete_batch(s->results, b->r->io, s->paths, k);
    for (size_t i = 0; i < k; i++) {
        icm__delete_item *item = s->items[i];
        const icm_fileio_delete_result *res = &s->results[i];
        if (rc == 0 && res->status == ICM_FILEIO_DELETED) {
            settle(item, ICM__DELETE_DELETED, 0, NULL);
        } else if (rc == 0 && res->status == ICM_FILEIO_ALREADY_GONE) {
            settle(item, ICM__DELETE_GONE, 0, NULL);
        } else {
            int code = res->code != 0 ? res->code : rc != 0 ? rc : ICM_EIO;
            bool again = rc == 0 && res->retryable && item->attempts < attempts;
            settle(item, again ? ICM__DELETE_PENDING : ICM__DELETE_FAILED, code,
                   res->message[0] != '\0' ? res->message : icm_error_last()->message);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* one batch                                                                                   */

static void work(worker *w)
{
    batch *b = w->b;
    icm__link_cache cache = {0};
    size_t reported = 0;
    for (size_t m; (m = take_chunk(b, w->s)) > 0;) {
        run_chunk(b, w->s, &cache, m);
        size_t handled = atomic_fetch_add(&b->handled, m) + m;
        const icm__delete_hooks *h = b->r->h;
        if (w->reports && h->progress != NULL &&
            handled / PROGRESS_EVERY != reported / PROGRESS_EVERY) {
            reported = handled;
            h->progress(h->ctx, b->r->done + handled,
                        b->r->n - b->r->stats.dropped);
        }
    }
    icm__link_cache_dispose(&cache);
}

static void *work_thread(void *arg)
{
    work(arg);
    return NULL;
}

/* Run the batch's files on up to the policy's threads; returns how many were handled (a
 * prefix of files[], at least one). */
static size_t run_threads(run *r, scratch *scr, icm__delete_item **files, size_t count)
{
    batch b = {.r = r, .files = files, .count = count,
               .deadline_ms = batch_clock() + r->p->batch_ms};
    pthread_mutex_init(&b.lock, NULL);
    atomic_init(&b.handled, 0);
    atomic_init(&b.requests, 0);
    size_t want = r->p->threads > 1 ? r->p->threads : 1;
    if (want > MAX_THREADS)
        want = MAX_THREADS;
    if (want > count)
        want = count;
    pthread_t tids[MAX_THREADS];
    worker ws[MAX_THREADS];
    size_t started = 0;
    for (size_t t = 1; t < want; t++) {
        ws[t] = (worker){&b, &scr[t], false};
        if (pthread_create(&tids[started], NULL, work_thread, &ws[t]) != 0)
            break; /* fewer threads is fine: the calling thread does the rest */
        started++;
    }
    ws[0] = (worker){&b, &scr[0], true};
    work(&ws[0]);
    for (size_t t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    pthread_mutex_destroy(&b.lock);
    r->stats.requests += atomic_load(&b.requests);
    return b.next < count ? b.next : count;
}

static int stopped_by_callback(const run *r, const icm__delete_item *item)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EUSER, item->path, "%s",
                          r->h->stop_message != NULL
                              ? r->h->stop_message
                              : "the delete callback asked to stop after this file; the files "
                                "after it were not deleted");
}

/* The handled files of a batch, in order: recorded, accounted and reported; those waiting for
 * a retry are not settled yet and are passed over. Returns 0 or what stops the run (the account
 * hook's code, ICM_EUSER). */
static int settle_batch(run *r, icm__delete_item **files, size_t handled)
{
    const icm__delete_hooks *h = r->h;
    size_t last = handled; /* the last file reported */
    size_t settled = 0;
    for (size_t i = 0; i < handled; i++) {
        icm__delete_item *item = files[i];
        if (item->state == ICM__DELETE_PENDING)
            continue;
        settled++;
        r->stats.deleted += item->state == ICM__DELETE_DELETED;
        r->stats.gone += item->state == ICM__DELETE_GONE;
        r->stats.failed += item->state == ICM__DELETE_FAILED;
        r->stats.kept += item->state == ICM__DELETE_KEPT;
        if (item->state != ICM__DELETE_KEPT)
            last = i;
        if (h->record != NULL)
            h->record(h->ctx, item);
    }
    r->done += settled;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < handled; i++) {
        const icm__delete_item *item = files[i];
        if (item->state == ICM__DELETE_PENDING)
            continue;
        if (h->account != NULL && (rc = h->account(h->ctx, item)) != 0)
            break;
        if (r->p->on_delete == NULL || item->state == ICM__DELETE_KEPT)
            continue;
        icm_delete_event ev = {item->path, item->kind, item->size_bytes,
                               item->state == ICM__DELETE_DELETED ? ICM_DELETE_DELETED
                               : item->state == ICM__DELETE_GONE  ? ICM_DELETE_ALREADY_GONE
                                                                  : ICM_DELETE_FAILED,
                               0, NULL, i == last};
        if (ev.outcome == ICM_DELETE_FAILED) {
            ev.error_code = item->code;
            ev.error_message = item->message;
        }
        if (r->p->on_delete(&ev, r->p->on_delete_payload) != 0)
            rc = stopped_by_callback(r, item);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the run                                                                                     */

/* Is order[i] still to be deleted? Marks it DROPPED when the caller says no more. */
static bool still_planned(run *r, icm__delete_item *item)
{
    if (item->state != ICM__DELETE_PENDING)
        return false;
    if (r->h->planned == NULL || r->h->planned(r->h->ctx, item))
        return true;
    item->state = ICM__DELETE_DROPPED;
    r->stats.dropped++;
    return false;
}

static size_t skip_settled(run *r, icm__delete_item **order, size_t at, size_t end)
{
    while (at < end && !still_planned(r, order[at]))
        at++;
    return at;
}

/* One pass over the batches of a rank, order[at, end): the files still pending (on a later
 * pass: those waiting for a retry). */
static int run_pass(run *r, scratch *scr, icm__delete_item **order, size_t at, size_t end,
                    icm__delete_item **pick, size_t *pos)
{
    const icm__delete_hooks *h = r->h;
    size_t limit = batch_limit(r->p->batch_files);
    int rc = 0;
    while (rc == 0 && (at = skip_settled(r, order, at, end)) < end) {
        if (h->before_batch != NULL)
            rc = h->before_batch(h->ctx);
        if (rc == 0 && (at = skip_settled(r, order, at, end)) < end) {
            size_t m = 0;
            for (size_t i = at; i < end && m < limit; i++)
                if (still_planned(r, order[i])) {
                    pos[m] = i;
                    pick[m++] = order[i];
                }
            size_t handled = run_threads(r, scr, pick, m);
            r->stats.batches++;
            rc = settle_batch(r, pick, handled);
            at = handled < m ? pos[handled] : (m > 0 ? pos[m - 1] + 1 : at);
        }
        if (h->after_batch != NULL)
            h->after_batch(h->ctx);
    }
    return rc;
}

/* No retry is made of the files of order[at, end) still waiting for one: they are FAILED with
 * the failure of their last attempt, and settled in batches as any other. */
static int give_up_retries(run *r, icm__delete_item **order, size_t at, size_t end,
                           icm__delete_item **pick)
{
    size_t limit = batch_limit(r->p->batch_files);
    int rc = 0;
    while (rc == 0 && at < end) {
        size_t m = 0;
        for (; at < end && m < limit; at++)
            if (awaits_retry(order[at])) {
                order[at]->state = ICM__DELETE_FAILED;
                pick[m++] = order[at];
            }
        rc = settle_batch(r, pick, m);
    }
    return rc;
}

/*
 * The files of one rank, order[first, end): a pass over its batches, then, while files of it
 * wait for a retry, the backoff (min * 2^(pass-1), at most max, plus up to 10% jitter) and
 * another pass, through before_batch, planned and check again (file comment). Once the waits
 * would exceed retry_total_wait_ms, the files still waiting fail with their last failure.
 */
static int run_rank(run *r, scratch *scr, icm__delete_item **order, size_t first, size_t end,
                    icm__delete_item **pick, size_t *pos)
{
    int64_t waited = 0;
    for (unsigned pass = 1;; pass++) {
        int rc = run_pass(r, scr, order, first, end, pick, pos);
        if (rc != 0)
            return rc;
        size_t waiting = 0;
        for (size_t i = first; i < end; i++)
            waiting += awaits_retry(order[i]);
        if (waiting == 0)
            return 0;
        int64_t wait = backoff_ms(r->p, pass, &scr[0].seed);
        if (waited + wait > r->p->retry_total_wait_ms)
            return give_up_retries(r, order, first, end, pick);
        r->stats.retries += waiting;
        icm__sleep_ms(wait);
        waited += wait;
    }
}

static void scratch_free(scratch *scr, size_t n)
{
    for (size_t t = 0; scr != NULL && t < n; t++) {
        icm__free(scr[t].items);
        icm__free(scr[t].passed);
        icm__free(scr[t].probes);
        icm__free(scr[t].paths);
        icm__free(scr[t].results);
    }
    icm__free(scr);
}

/* Per-thread room: threads × chunk_cap entries. NULL on OOM. */
static scratch *scratch_new(size_t threads, size_t cap)
{
    scratch *scr = icm__calloc(threads, sizeof *scr);
    for (size_t t = 0; scr != NULL && t < threads; t++) {
        scr[t].items = icm__calloc(cap, sizeof *scr[t].items);
        scr[t].passed = icm__calloc(cap, sizeof *scr[t].passed);
        scr[t].probes = icm__calloc(cap, sizeof *scr[t].probes);
        scr[t].paths = icm__calloc(cap, sizeof *scr[t].paths);
        scr[t].results = icm__calloc(cap, sizeof *scr[t].results);
        scr[t].seed = (uint64_t)batch_clock() * 2654435761u + t + 1;
        if (scr[t].items == NULL || scr[t].passed == NULL || scr[t].probes == NULL ||
            scr[t].paths == NULL || scr[t].results == NULL) {
            scratch_free(scr, threads);
            return NULL;
        }
        ICM_FILEIO_DELETE_RESULTS_INIT(scr[t].results, cap);
    }
    return scr;
}

int icm__delete_run(icm_fileio *io, icm__delete_item *items, size_t n,
                    const icm__delete_policy *policy, const icm__delete_hooks *hooks,
                    icm__delete_stats *stats)
{
    static const icm__delete_hooks no_hooks = {0};
    run r = {.io = io, .p = policy, .h = hooks != NULL ? hooks : &no_hooks, .n = n};
    size_t limit = batch_limit(policy->batch_files);
    size_t threads = policy->threads > 1 ? policy->threads : 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads > limit)
        threads = limit;
    /* Object-store keys per request: the batch shared out among the threads, at most what one
     * request may carry. */
    r.chunk_cap = (limit + threads - 1) / threads;
    if (r.chunk_cap > ICM_FILEIO_DELETE_BATCH_MAX)
        r.chunk_cap = ICM_FILEIO_DELETE_BATCH_MAX;

    /* The rank order (stable): a counting sort of pointers, items stay where they are. */
    size_t start[ICM__DELETE_RANK_COUNT + 1] = {0};
    for (size_t i = 0; i < n; i++)
        start[(unsigned)items[i].rank < ICM__DELETE_RANK_COUNT ? items[i].rank + 1
                                                               : ICM__DELETE_RANK_COUNT]++;
    for (size_t k = 1; k <= ICM__DELETE_RANK_COUNT; k++)
        start[k] += start[k - 1];
    icm__delete_item **order = icm__calloc(n > 0 ? n : 1, sizeof *order);
    icm__delete_item **pick = icm__calloc(limit, sizeof *pick);
    size_t *pos = icm__calloc(limit, sizeof *pos);
    scratch *scr = scratch_new(threads, r.chunk_cap);
    int rc = order != NULL && pick != NULL && pos != NULL && scr != NULL
                 ? 0
                 : icm__error_set(ICM_ERRCLASS_NOMEM, ICM_ENOMEM, NULL, "out of memory");
    if (rc == 0) {
        size_t fill[ICM__DELETE_RANK_COUNT];
        memcpy(fill, start, sizeof fill);
        for (size_t i = 0; i < n; i++) {
            unsigned k = (unsigned)items[i].rank < ICM__DELETE_RANK_COUNT
                             ? (unsigned)items[i].rank
                             : ICM__DELETE_RANK_COUNT - 1;
            order[fill[k]++] = &items[i];
        }
    }
    for (unsigned k = 0; rc == 0 && k < ICM__DELETE_RANK_COUNT; k++) {
        if (r.h->enter_rank != NULL)
            rc = r.h->enter_rank(r.h->ctx, (icm__delete_rank)k);
        if (rc == 0)
            rc = run_rank(&r, scr, order, start[k], start[k + 1], pick, pos);
    }
    scratch_free(scr, threads);
    icm__free(pos);
    icm__free(pick);
    icm__free(order);
    if (stats != NULL)
        *stats = r.stats;
    return rc;
}

void icm__delete_items_dispose(icm__delete_item *items, size_t n)
{
    for (size_t i = 0; items != NULL && i < n; i++) {
        icm__free(items[i].message);
        items[i].message = NULL;
    }
}
