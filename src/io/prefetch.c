/*
 * io/prefetch.c: objects fetched many at a time ahead of their reader (see prefetch.h).
 *
 * One mutex guards every item's state, `next` (no item below it is still waiting to be claimed
 * by a worker) and `low` (every item below it was taken). A worker claims the first waiting item
 * at or after `next` while it lies below low + window, reads it unlocked and records the result;
 * the taker waits for its item, or reads it itself when no worker has claimed it (an item beyond
 * the window, or one the workers have not reached), so a take never waits on a read that nobody
 * will start.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "io/fileio_internal.h"
#include "io/prefetch.h"
#include "util/util.h"

typedef enum item_state { ITEM_WAITING = 0, ITEM_FETCHING, ITEM_DONE, ITEM_TAKEN } item_state;

typedef struct item {
    item_state state;
    int rc;
    char *data;
    size_t len;
    icm__error_saved *err; /* the reading thread's last error when rc != 0 */
} item;

struct icm__prefetch {
    icm_fileio *io;
    const char *const *locations;
    size_t n;
    size_t window;
    item *items;
    pthread_t *threads;
    unsigned n_threads;
    pthread_mutex_t mu;
    pthread_cond_t work;  /* workers: an item became claimable, or stop */
    pthread_cond_t done;  /* takers: an item was fetched */
    size_t next;
    size_t low;
    bool stop;
};

/* Read item i unlocked into a result (rc, data, len, err). */
static void fetch(icm__prefetch *p, size_t i, item *out)
{
    out->data = NULL;
    out->len = 0;
    out->err = NULL;
    out->rc = icm_fileio_read(&out->data, &out->len, p->io, p->locations[i]);
    if (out->rc < 0) {
        out->err = icm__error_save();
        if (out->err == NULL)
            out->rc = ICM_ENOMEM; /* the details are lost: that is the error (as bulk_reader) */
    } else {
        out->rc = 0;
    }
}

/* Under the lock: record item i's result, fetched by this thread. */
static void record(icm__prefetch *p, size_t i, const item *r)
{
    item *it = &p->items[i];
    it->rc = r->rc;
    it->data = r->data;
    it->len = r->len;
    it->err = r->err;
    it->state = ITEM_DONE;
    pthread_cond_broadcast(&p->done);
}

/* Under the lock: the next item a worker may claim, or n when none may be now. */
static size_t claimable(icm__prefetch *p)
{
    while (p->next < p->n && p->items[p->next].state != ITEM_WAITING)
        p->next++;
    if (p->next < p->n && p->next - p->low < p->window)
        return p->next;
    return p->n;
}

static void *worker(void *arg)
{
    icm__prefetch *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        size_t i = p->n;
        while (!p->stop && (i = claimable(p)) == p->n && p->next < p->n)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop || p->next >= p->n)
            break;
        p->items[i].state = ITEM_FETCHING;
        p->next = i + 1;
        pthread_mutex_unlock(&p->mu);
        item r;
        fetch(p, i, &r);
        pthread_mutex_lock(&p->mu);
        record(p, i, &r);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

bool icm__prefetch_worthwhile(icm_fileio *io, const char *location)
{
    return location != NULL && !icm__fileio_deletes_locally(io, location);
}

int icm__prefetch_start(icm__prefetch **out, icm_fileio *io, const char *const *locations,
                        size_t n, unsigned in_flight, unsigned window)
{
    *out = NULL;
    icm__prefetch *p = icm__calloc(1, sizeof *p);
    if (p == NULL)
        return ICM_ENOMEM;
    p->io = io;
    p->locations = locations;
    p->n = n;
    p->window = window > in_flight ? window : in_flight;
    if (in_flight < 2 || n < 2) {
        *out = p; /* no threads: take() reads on the caller's thread */
        return 0;
    }
    if (in_flight > n)
        in_flight = (unsigned)n;
    p->items = icm__calloc(n, sizeof *p->items);
    p->threads = icm__calloc(in_flight, sizeof *p->threads);
    if (p->items == NULL || p->threads == NULL) {
        icm__free(p->items);
        icm__free(p->threads);
        icm__free(p);
        return ICM_ENOMEM;
    }
    if (pthread_mutex_init(&p->mu, NULL) != 0)
        goto no_threads;
    if (pthread_cond_init(&p->work, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        goto no_threads;
    }
    if (pthread_cond_init(&p->done, NULL) != 0) {
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        goto no_threads;
    }
    /* Workers mostly wait on the network: a small stack each (TLS and curl need well under
     * this; the default 8 MiB would be reserved 32 times over for nothing). */
    pthread_attr_t attr;
    bool have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr)
        (void)pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    for (unsigned k = 0; k < in_flight; k++) {
        if (pthread_create(&p->threads[k], have_attr ? &attr : NULL, worker, p) != 0)
            break; /* fewer workers: slower, same results */
        p->n_threads++;
    }
    if (have_attr)
        pthread_attr_destroy(&attr);
    if (p->n_threads == 0) {
        pthread_cond_destroy(&p->done);
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        goto no_threads;
    }
    *out = p;
    return 0;
no_threads:
    icm__free(p->items);
    icm__free(p->threads);
    p->items = NULL;
    p->threads = NULL;
    *out = p;
    return 0;
}

/* Hand a finished result to the caller: bytes, or the error made the thread's last error. */
static int hand_over(item *r, char **data, size_t *len)
{
    if (r->rc != 0) {
        int rc = r->rc;
        if (r->err != NULL)
            icm__error_restore(r->err); /* frees it */
        else
            icm__error_oom();
        r->err = NULL;
        return rc;
    }
    *data = r->data;
    *len = r->len;
    r->data = NULL;
    return 0;
}

int icm__prefetch_take(icm__prefetch *p, size_t i, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (p->n_threads == 0) {
        int rc = icm_fileio_read(data, len, p->io, p->locations[i]);
        return rc < 0 ? rc : 0;
    }
    pthread_mutex_lock(&p->mu);
    item *it = &p->items[i];
    if (it->state == ITEM_WAITING) {
        /* No worker has it: read it here rather than wait for one to get this far. */
        it->state = ITEM_FETCHING;
        pthread_mutex_unlock(&p->mu);
        item r;
        fetch(p, i, &r);
        pthread_mutex_lock(&p->mu);
        record(p, i, &r);
    }
    while (it->state != ITEM_DONE)
        pthread_cond_wait(&p->done, &p->mu);
    item r = *it;
    it->data = NULL;
    it->err = NULL;
    it->state = ITEM_TAKEN;
    while (p->low < p->n && p->items[p->low].state == ITEM_TAKEN)
        p->low++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    return hand_over(&r, data, len);
}

void icm__prefetch_finish(icm__prefetch *p)
{
    if (p == NULL)
        return;
    if (p->n_threads > 0) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        for (unsigned k = 0; k < p->n_threads; k++)
            pthread_join(p->threads[k], NULL);
        pthread_cond_destroy(&p->done);
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        for (size_t i = 0; i < p->n; i++) {
            icm_free(p->items[i].data);
            icm__free(p->items[i].err);
        }
    }
    icm__free(p->items);
    icm__free(p->threads);
    icm__free(p);
}
