/*
 * io/list_ahead.c: the listing runs on its own thread, the callback on the caller's (see
 * list_ahead.h).
 *
 * A ring of LIST_AHEAD_BATCHES batches. The listing thread fills the batch at `produced` and
 * publishes it; it may start the next one only while fewer than LIST_AHEAD_BATCHES batches wait
 * for the caller. The calling thread hands the files of the batch at `consumed` to the callback,
 * in order, then gives the batch back. Each batch is touched by one thread at a time: the
 * listing thread writes only slots the caller has given back, the caller reads only published
 * ones. Both counters move under the mutex.
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
/* What the listing thread's callback returns to end the listing once the caller stopped. */
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

typedef struct ahead {
    icm_fileio *io;
    const char *prefix;
    unsigned flags;
    batch batches[LIST_AHEAD_BATCHES];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t produced;          /* batches published so far */
    size_t consumed;          /* batches given back so far */
    atomic_bool stop;         /* the caller's callback stopped the listing */
    bool done;                /* the listing returned; list_rc and err are set */
    int list_rc;
    icm__error_saved *err;    /* the listing thread's last error, when list_rc != 0 */
} ahead;

static void batches_free(ahead *a)
{
    for (size_t i = 0; i < LIST_AHEAD_BATCHES; i++) {
        icm__free(a->batches[i].names);
        icm__free(a->batches[i].files);
    }
}

static int batches_alloc(ahead *a)
{
    for (size_t i = 0; i < LIST_AHEAD_BATCHES; i++) {
        batch *b = &a->batches[i];
        b->names = icm__malloc(BATCH_NAME_BYTES);
        b->files = icm__calloc(BATCH_FILES, sizeof *b->files);
        b->names_cap = BATCH_NAME_BYTES;
        if (b->names == NULL || b->files == NULL) {
            batches_free(a);
            return ICM_ENOMEM;
        }
    }
    return 0;
}

/* Publish the batch being filled and wait until the next slot is free. Listing thread. Returns
 * false when the caller stopped meanwhile. */
static bool publish(ahead *a)
{
    pthread_mutex_lock(&a->mu);
    a->produced++;
    pthread_cond_broadcast(&a->cv);
    while (a->produced - a->consumed >= LIST_AHEAD_BATCHES && !atomic_load(&a->stop))
        pthread_cond_wait(&a->cv, &a->mu);
    bool stopped = atomic_load(&a->stop);
    pthread_mutex_unlock(&a->mu);
    if (stopped)
        return false;
    batch *next = &a->batches[a->produced % LIST_AHEAD_BATCHES];
    next->count = 0;
    next->names_len = 0;
    return true;
}

/* The listing thread's callback: copy the file into the batch being filled. */
static int on_file(const icm_file_info *info, void *payload)
{
    ahead *a = payload;
    if (atomic_load_explicit(&a->stop, memory_order_relaxed))
        return LISTING_STOPPED;
    batch *b = &a->batches[a->produced % LIST_AHEAD_BATCHES];
    size_t len = strlen(info->location) + 1;
    if (b->count == BATCH_FILES || b->names_cap - b->names_len < len) {
        if (b->count > 0) {
            if (!publish(a))
                return LISTING_STOPPED;
            b = &a->batches[a->produced % LIST_AHEAD_BATCHES];
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
    ahead *a = arg;
    int rc = icm_fileio_list_flags(a->io, a->prefix, a->flags, on_file, a);
    icm__error_saved *err = NULL;
    /* Without memory to keep the listing's error details, that allocation's failure is the
     * result (a plain listing would have given the details). */
    if (rc != 0 && rc != LISTING_STOPPED && (err = icm__error_save()) == NULL)
        rc = ICM_ENOMEM;
    pthread_mutex_lock(&a->mu);
    if (a->batches[a->produced % LIST_AHEAD_BATCHES].count > 0 && !atomic_load(&a->stop))
        a->produced++; /* the last, partly filled batch: its slot is free (publish waited) */
    a->list_rc = rc;
    a->err = err;
    a->done = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Hand the files of one published batch to cb, as one array. */
static int hand_over(const batch *b, icm_file_info *infos, icm__list_batch_cb cb, void *payload)
{
    for (size_t i = 0; i < b->count; i++) {
        const listed *f = &b->files[i];
        infos[i] = (icm_file_info){b->names + f->name_offset, f->size_bytes, f->mtime_ms};
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

int icm__fileio_list_ahead_batches(icm_fileio *io, const char *prefix, unsigned flags,
                                   icm__list_batch_cb cb, void *payload)
{
    ahead a;
    memset(&a, 0, sizeof a);
    a.io = io;
    a.prefix = prefix;
    a.flags = flags;
    atomic_init(&a.stop, false);
    icm_file_info *infos = icm__calloc(BATCH_FILES, sizeof *infos);
    if (infos == NULL || batches_alloc(&a) != 0) {
        icm__free(infos);
        return ICM_ENOMEM;
    }
    pthread_t thread;
    bool mu_ok = pthread_mutex_init(&a.mu, NULL) == 0;
    bool cv_ok = mu_ok && pthread_cond_init(&a.cv, NULL) == 0;
    if (!cv_ok || pthread_create(&thread, NULL, list_thread, &a) != 0) {
        if (cv_ok)
            pthread_cond_destroy(&a.cv);
        if (mu_ok)
            pthread_mutex_destroy(&a.mu);
        batches_free(&a);
        icm__free(infos);
        /* No second thread: list on this one (the same result, without the overlap). */
        one_by_one o = {cb, payload};
        return icm_fileio_list_flags(io, prefix, flags, on_one, &o);
    }
    int cb_rc = 0;
    for (;;) {
        pthread_mutex_lock(&a.mu);
        while (a.consumed == a.produced && !a.done)
            pthread_cond_wait(&a.cv, &a.mu);
        bool finished = a.consumed == a.produced; /* and done */
        pthread_mutex_unlock(&a.mu);
        if (finished)
            break;
        cb_rc = hand_over(&a.batches[a.consumed % LIST_AHEAD_BATCHES], infos, cb, payload);
        pthread_mutex_lock(&a.mu);
        a.consumed++;
        if (cb_rc != 0)
            atomic_store(&a.stop, true);
        pthread_cond_broadcast(&a.cv);
        pthread_mutex_unlock(&a.mu);
        if (cb_rc != 0)
            break;
    }
    pthread_join(thread, NULL);
    pthread_cond_destroy(&a.cv);
    pthread_mutex_destroy(&a.mu);
    batches_free(&a);
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
