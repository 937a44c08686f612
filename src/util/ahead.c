/*
 * util/ahead.c: jobs done ahead on a second thread, with the caller's help (see ahead.h).
 *
 * Under one mutex: `next` (jobs [0, next) were claimed, in order, by one thread or the other),
 * `released` (slots of jobs [0, released) were handed back) and, per slot, the number of the
 * last job finished in it. A job is claimed only when it is below released + window, so the slot
 * it writes is one the caller gave back; the caller reads slot i only once job i is finished
 * there. Jobs are claimed in order but may finish out of order (the caller may be doing job
 * i + 1 while the worker finishes job i).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/ahead.h"
#include "util/util.h"

struct icm__ahead {
    size_t n;
    size_t window;
    unsigned char *slots;
    size_t slot_size;
    icm__ahead_job job;
    void *ctx;
    bool threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next;
    size_t released;
    size_t *finished; /* per slot: the job last finished in it, SIZE_MAX for none */
    bool stop;
};

static void *slot_of(icm__ahead *a, size_t i)
{
    return a->slots + (i % a->window) * a->slot_size;
}

/* Under the lock: may a job be claimed now? */
static bool claimable(const icm__ahead *a)
{
    return a->next < a->n && a->next < a->released + a->window;
}

/* Called with the lock held, returns with it held: claim job `next`, do it unlocked, record it. */
static void run_next(icm__ahead *a)
{
    size_t i = a->next++;
    pthread_mutex_unlock(&a->mu);
    a->job(a->ctx, i, slot_of(a, i));
    pthread_mutex_lock(&a->mu);
    a->finished[i % a->window] = i;
    pthread_cond_broadcast(&a->cv);
}

static void *work(void *arg)
{
    icm__ahead *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && a->next < a->n && !claimable(a))
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop || a->next >= a->n)
            break;
        run_next(a);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int icm__ahead_start(icm__ahead **out, size_t n, size_t window, void *slots, size_t slot_size,
                     icm__ahead_job job, void *ctx)
{
    *out = NULL;
    icm__ahead *a = icm__calloc(1, sizeof *a);
    if (a == NULL)
        return ICM_ENOMEM;
    *a = (icm__ahead){.n = n, .window = window ? window : 1, .slots = slots,
                      .slot_size = slot_size, .job = job, .ctx = ctx};
    /* One job gains nothing from a second thread; without the bookkeeping (no memory) the jobs
     * simply run on the caller's thread. */
    if (n >= 2 && (a->finished = icm__calloc(a->window, sizeof *a->finished)) != NULL &&
        pthread_mutex_init(&a->mu, NULL) == 0) {
        for (size_t k = 0; k < a->window; k++)
            a->finished[k] = SIZE_MAX;
        if (pthread_cond_init(&a->cv, NULL) == 0) {
            a->threaded = pthread_create(&a->thread, NULL, work, a) == 0;
            if (!a->threaded)
                pthread_cond_destroy(&a->cv);
        }
        if (!a->threaded)
            pthread_mutex_destroy(&a->mu);
    }
    if (!a->threaded) {
        icm__free(a->finished);
        a->finished = NULL;
    }
    *out = a;
    return 0;
}

/* Job i is claimed by now or it is `next`: the caller does it itself rather than wait, and while
 * the worker is on job i the caller does the next claimable job instead of sleeping. */
void *icm__ahead_get(icm__ahead *a, size_t i)
{
    if (!a->threaded) {
        a->job(a->ctx, i, slot_of(a, i));
        return slot_of(a, i);
    }
    pthread_mutex_lock(&a->mu);
    while (a->finished[i % a->window] != i) {
        if (claimable(a))
            run_next(a);
        else
            pthread_cond_wait(&a->cv, &a->mu);
    }
    pthread_mutex_unlock(&a->mu);
    return slot_of(a, i);
}

void icm__ahead_release(icm__ahead *a, size_t i)
{
    if (!a->threaded) {
        a->released = i + 1;
        return;
    }
    pthread_mutex_lock(&a->mu);
    a->released = i + 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

void icm__ahead_finish(icm__ahead *a)
{
    if (a == NULL)
        return;
    if (a->threaded) {
        pthread_mutex_lock(&a->mu);
        a->stop = true;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
    }
    icm__free(a->finished);
    icm__free(a);
}
