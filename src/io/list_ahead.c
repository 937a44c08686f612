/*
 * io/list_ahead.c: the listing runs on threads of its own, one per key range, the callback on
 * the caller's (see list_ahead.h).
 *
 * Batches circulate between a free stack and a queue of full ones. Each listing thread fills a
 * batch of its own; when it is full the thread queues it and takes a free one, once fewer than
 * LIST_AHEAD_BATCHES batches wait for the caller or are being handed over (so with one range,
 * at most LIST_AHEAD_BATCHES batches are full at a time, the one being filled counted, and the
 * listing waits for the caller there). The calling thread takes queued batches in order, hands
 * their files to the callback and puts them back on the free stack. One batch per range plus
 * LIST_AHEAD_BATCHES is enough for a thread that may start a batch always to find one free.
 * Each batch is touched by one thread at a time: the one filling it, or the caller once it is
 * queued. Every move is under the mutex. With one range the queue is the listing's order, as
 * a plain listing gives it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "io/list_ahead.h"
#include "util/util.h"

#define LIST_AHEAD_BATCHES 4
#define BATCH_FILES 4096
#define BATCH_NAME_BYTES ((size_t)256 * 1024)
/* What a listing thread's callback returns to end its listing once the others stopped. */
#define LISTING_STOPPED 1

typedef struct listed {
    size_t name_offset;
    int64_t size_bytes;
    int64_t mtime_ms;
} listed;

typedef struct batch {
    char *names;      /* NUL-terminated names, back to back */
    size_t names_len;
    size_t names_cap;
    listed *files;    /* BATCH_FILES slots */
    size_t count;
} batch;

struct ahead;

/* One range's listing thread. */
typedef struct range {
    struct ahead *a;
    icm_fileio_list_options opts;
    char *end_buf;    /* the range's end: its cut followed by 0x01 (owned) */
    size_t filling;   /* the batch this thread fills */
    pthread_t thread;
} range;

typedef struct ahead {
    icm_fileio *io;
    const char *prefix;
    batch *batches;
    size_t n_batches;
    size_t *free_stack;
    size_t n_free;
    size_t *queue;            /* full batches, oldest first (ring of n_batches) */
    size_t q_head, q_len;
    bool holding;             /* the caller is handing a batch over */
    range *ranges;
    size_t n_ranges;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t ranges_done;       /* listing threads that returned */
    atomic_bool stop;         /* the callback stopped, or a range failed: list no more */
    int list_rc;              /* the first failing range's error */
    icm__error_saved *err;    /* its thread's last error (NULL: could not be saved) */
} ahead;

static void batches_free(ahead *a)
{
    for (size_t i = 0; a->batches != NULL && i < a->n_batches; i++) {
        icm__free(a->batches[i].names);
        icm__free(a->batches[i].files);
    }
    icm__free(a->batches);
    icm__free(a->free_stack);
    icm__free(a->queue);
    a->batches = NULL;
    a->free_stack = NULL;
    a->queue = NULL;
}

static int batches_alloc(ahead *a)
{
    a->n_batches = a->n_ranges + LIST_AHEAD_BATCHES;
    a->batches = icm__calloc(a->n_batches, sizeof *a->batches);
    a->free_stack = icm__calloc(a->n_batches, sizeof *a->free_stack);
    a->queue = icm__calloc(a->n_batches, sizeof *a->queue);
    if (a->batches == NULL || a->free_stack == NULL || a->queue == NULL) {
        batches_free(a);
        return ICM_ENOMEM;
    }
    for (size_t i = 0; i < a->n_batches; i++) {
        batch *b = &a->batches[i];
        b->names = icm__malloc(BATCH_NAME_BYTES);
        b->files = icm__calloc(BATCH_FILES, sizeof *b->files);
        b->names_cap = BATCH_NAME_BYTES;
        if (b->names == NULL || b->files == NULL) {
            batches_free(a);
            return ICM_ENOMEM;
        }
    }
    /* Each range starts with a batch of its own; the rest are free. */
    for (size_t k = 0; k < a->n_ranges; k++)
        a->ranges[k].filling = k;
    for (size_t i = a->n_ranges; i < a->n_batches; i++)
        a->free_stack[a->n_free++] = i;
    return 0;
}

/* Queue the batch range r has filled and, once fewer than LIST_AHEAD_BATCHES wait for the
 * caller, take a free one. Listing thread. Returns false when the listing was stopped
 * meanwhile. */
static bool publish(range *r)
{
    ahead *a = r->a;
    pthread_mutex_lock(&a->mu);
    a->queue[(a->q_head + a->q_len++) % a->n_batches] = r->filling;
    pthread_cond_broadcast(&a->cv);
    while ((a->q_len + a->holding >= LIST_AHEAD_BATCHES || a->n_free == 0) &&
           !atomic_load(&a->stop))
        pthread_cond_wait(&a->cv, &a->mu);
    bool stopped = atomic_load(&a->stop);
    if (!stopped)
        r->filling = a->free_stack[--a->n_free];
    else
        r->filling = SIZE_MAX; /* this range holds no batch any more */
    pthread_mutex_unlock(&a->mu);
    if (stopped)
        return false;
    batch *next = &a->batches[r->filling];
    next->count = 0;
    next->names_len = 0;
    return true;
}

/* A listing thread's callback: copy the file into the batch being filled. */
static int on_file(const icm_file_info *info, void *payload)
{
    range *r = payload;
    ahead *a = r->a;
    if (atomic_load_explicit(&a->stop, memory_order_relaxed))
        return LISTING_STOPPED;
    batch *b = &a->batches[r->filling];
    size_t len = strlen(info->location) + 1;
    if (b->count == BATCH_FILES || b->names_cap - b->names_len < len) {
        if (b->count > 0) {
            if (!publish(r))
                return LISTING_STOPPED;
            b = &a->batches[r->filling];
        }
        if (b->names_cap < len) { /* one name longer than a whole batch */
            char *grown = icm__realloc(b->names, len);
            if (grown == NULL)
                return ICM_ENOMEM;
            b->names = grown;
            b->names_cap = len;
        }
    }
    memcpy(b->names + b->names_len, info->location, len);
    b->files[b->count++] = (listed){b->names_len, info->size_bytes, info->mtime_ms};
    b->names_len += len;
    return 0;
}

static void *list_thread(void *arg)
{
    range *r = arg;
    ahead *a = r->a;
    int rc = icm_fileio_list_opts(a->io, a->prefix, &r->opts, on_file, r);
    bool failed = rc != 0 && rc != LISTING_STOPPED;
    icm__error_saved *err = NULL;
    /* Without memory to keep the listing's error details, that allocation's failure is the
     * result (a plain listing would have given the details). */
    if (failed && (err = icm__error_save()) == NULL)
        rc = ICM_ENOMEM;
    pthread_mutex_lock(&a->mu);
    /* The last, partly filled batch is queued (its files were listed, as a plain listing
     * would have reported them before its error); the queue has room for every batch. */
    /* (A range stopped while waiting in publish holds no batch: its last one is queued.) */
    if (r->filling != SIZE_MAX) {
        if (a->batches[r->filling].count > 0 && !atomic_load(&a->stop))
            a->queue[(a->q_head + a->q_len++) % a->n_batches] = r->filling;
        else
            a->free_stack[a->n_free++] = r->filling;
    }
    if (failed && a->list_rc == 0) {
        a->list_rc = rc;
        a->err = err;
        err = NULL;
    }
    if (failed)
        atomic_store(&a->stop, true); /* the other ranges list no more */
    a->ranges_done++;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    icm__free(err); /* a later failure's details: the first one is reported */
    return NULL;
}

/* Hand the files of one published batch to cb, as one array. */
static int hand_over(const batch *b, icm_file_info *infos, icm__list_batch_cb cb, void *payload)
{
    for (size_t i = 0; i < b->count; i++) {
        const listed *f = &b->files[i];
        infos[i] = (icm_file_info){sizeof(icm_file_info), b->names + f->name_offset,
                                   f->size_bytes, f->mtime_ms};
    }
    return b->count > 0 ? cb(infos, b->count, payload) : 0;
}

/* A batch callback for a listing on this thread: one file at a time. */
typedef struct one_by_one {
    icm__list_batch_cb cb;
    void *payload;
} one_by_one;

static int on_one(const icm_file_info *info, void *payload)
{
    const one_by_one *o = payload;
    return o->cb(info, 1, o->payload);
}

/* Stop the listing threads and wait for them. */
static void stop_and_join(ahead *a, size_t started)
{
    pthread_mutex_lock(&a->mu);
    atomic_store(&a->stop, true);
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    for (size_t k = 0; k < started; k++)
        pthread_join(a->ranges[k].thread, NULL);
}

static void ahead_dispose(ahead *a)
{
    for (size_t k = 0; a->ranges != NULL && k < a->n_ranges; k++)
        icm__free(a->ranges[k].end_buf);
    icm__free(a->ranges);
    batches_free(a);
}

/* Set up the ranges at the cuts. Returns 0, ICM_EINVALID, ICM_ENOMEM. */
static int ranges_init(ahead *a, unsigned flags, const char *after, const char *upto,
                       const char *const *cuts, size_t n_cuts)
{
    if (n_cuts >= ICM__LIST_RANGES_MAX)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, a->prefix,
                              "a listing cut into %zu ranges (at most %d)", n_cuts + 1,
                              ICM__LIST_RANGES_MAX);
    for (size_t k = 0; k < n_cuts; k++)
        if (cuts[k] == NULL || (k > 0 && strcmp(cuts[k - 1], cuts[k]) >= 0))
            return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, a->prefix,
                                  "listing cut %zu is not after the one before it", k);
    a->n_ranges = n_cuts + 1;
    a->ranges = icm__calloc(a->n_ranges, sizeof *a->ranges);
    if (a->ranges == NULL)
        return ICM_ENOMEM;
    for (size_t k = 0; k < a->n_ranges; k++) {
        range *r = &a->ranges[k];
        r->a = a;
        r->opts = (icm_fileio_list_options)ICM_FILEIO_LIST_OPTIONS_INIT;
        r->opts.flags = flags;
        r->opts.start_after = k > 0 ? cuts[k - 1] : after;
        if (k < n_cuts || upto != NULL) {
            /* Up to and including the cut: end before the next string after it. */
            r->end_buf = icm__sprintf("%s\x01", k < n_cuts ? cuts[k] : upto);
            if (r->end_buf == NULL)
                return ICM_ENOMEM;
            r->opts.end_before = r->end_buf;
        }
    }
    return 0;
}

int icm__fileio_list_ahead_ranges(icm_fileio *io, const char *prefix, unsigned flags,
                                  const char *const *cuts, size_t n_cuts,
                                  icm__list_batch_cb cb, void *payload)
{
    return icm__fileio_list_ahead_span(io, prefix, flags, NULL, NULL, cuts, n_cuts, cb, payload);
}

int icm__fileio_list_ahead_span(icm_fileio *io, const char *prefix, unsigned flags,
                                const char *after, const char *upto, const char *const *cuts,
                                size_t n_cuts, icm__list_batch_cb cb, void *payload)
{
    ahead a;
    memset(&a, 0, sizeof a);
    a.io = io;
    a.prefix = prefix;
    atomic_init(&a.stop, false);
    int rc = (after != NULL && n_cuts > 0 && strcmp(after, cuts[0]) >= 0) ||
                     (upto != NULL && n_cuts > 0 && strcmp(cuts[n_cuts - 1], upto) >= 0)
                 ? icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, prefix,
                                  "listing cuts outside the listed span")
                 : ranges_init(&a, flags, after, upto, cuts, n_cuts);
    icm_file_info *infos = rc == 0 ? icm__calloc(BATCH_FILES, sizeof *infos) : NULL;
    if (rc == 0 && (infos == NULL || batches_alloc(&a) != 0))
        rc = ICM_ENOMEM;
    if (rc != 0) {
        ahead_dispose(&a);
        icm__free(infos);
        return rc;
    }
    size_t started = 0;
    bool mu_ok = pthread_mutex_init(&a.mu, NULL) == 0;
    bool cv_ok = mu_ok && pthread_cond_init(&a.cv, NULL) == 0;
    while (cv_ok && started < a.n_ranges &&
           pthread_create(&a.ranges[started].thread, NULL, list_thread, &a.ranges[started]) == 0)
        started++;
    if (started < a.n_ranges) {
        /* Not every range has its thread: stop those that started (the callback has seen
         * nothing yet) and list on this thread (the same files, without the overlap). */
        if (started > 0)
            stop_and_join(&a, started);
        icm__free(a.err);
        if (cv_ok)
            pthread_cond_destroy(&a.cv);
        if (mu_ok)
            pthread_mutex_destroy(&a.mu);
        ahead_dispose(&a);
        icm__free(infos);
        one_by_one o = {cb, payload};
        return icm_fileio_list_flags(io, prefix, flags, on_one, &o);
    }
    int cb_rc = 0;
    for (;;) {
        pthread_mutex_lock(&a.mu);
        while (a.q_len == 0 && a.ranges_done < a.n_ranges)
            pthread_cond_wait(&a.cv, &a.mu);
        bool finished = a.q_len == 0; /* and every range is done */
        size_t taken = a.queue[a.q_head];
        if (!finished) {
            a.q_head = (a.q_head + 1) % a.n_batches;
            a.q_len--;
            a.holding = true;
        }
        pthread_mutex_unlock(&a.mu);
        if (finished)
            break;
        cb_rc = hand_over(&a.batches[taken], infos, cb, payload);
        pthread_mutex_lock(&a.mu);
        a.free_stack[a.n_free++] = taken;
        a.holding = false;
        if (cb_rc != 0)
            atomic_store(&a.stop, true);
        pthread_cond_broadcast(&a.cv);
        pthread_mutex_unlock(&a.mu);
        if (cb_rc != 0)
            break;
    }
    for (size_t k = 0; k < a.n_ranges; k++)
        pthread_join(a.ranges[k].thread, NULL);
    pthread_cond_destroy(&a.cv);
    pthread_mutex_destroy(&a.mu);
    ahead_dispose(&a);
    icm__free(infos);
    if (cb_rc != 0) {
        icm__free(a.err);
        return cb_rc;
    }
    if (a.list_rc != 0) {
        if (a.err != NULL)
            icm__error_restore(a.err);
        else
            icm__error_oom(); /* the details could not be saved (list_thread) */
    }
    return a.list_rc;
}

int icm__fileio_list_ahead_batches(icm_fileio *io, const char *prefix, unsigned flags,
                                   icm__list_batch_cb cb, void *payload)
{
    return icm__fileio_list_ahead_ranges(io, prefix, flags, NULL, 0, cb, payload);
}
