/*
 * util/ahead.c: jobs done ahead on a second thread (see ahead.h).
 *
 * Two counters under one mutex: `done` (jobs [0, done) are finished) and `released` (slots of
 * jobs [0, released) were handed back). The worker starts job i only when i < released + window,
 * so the slot it writes is one the caller gave back; the caller reads slot i only when done > i.
 */
#include <pthread.h>
#include <stdbool.h>

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
    size_t done;
    size_t released;
    bool stop;
};

static void *slot_of(icm__ahead *a, size_t i)
{
    return a->slots + (i % a->window) * a->slot_size;
}

static void *work(void *arg)
{
    icm__ahead *a = arg;
    for (size_t i = 0; i < a->n; i++) {
        pthread_mutex_lock(&a->mu);
        while (!a->stop && i >= a->released + a->window)
            pthread_cond_wait(&a->cv, &a->mu);
        bool stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop)
            break;
        a->job(a->ctx, i, slot_of(a, i));
        pthread_mutex_lock(&a->mu);
        a->done = i + 1;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
    }
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
    /* One job gains nothing from a second thread. */
    if (n >= 2 && pthread_mutex_init(&a->mu, NULL) == 0) {
        if (pthread_cond_init(&a->cv, NULL) == 0) {
            a->threaded = pthread_create(&a->thread, NULL, work, a) == 0;
            if (!a->threaded)
                pthread_cond_destroy(&a->cv);
        }
        if (!a->threaded)
            pthread_mutex_destroy(&a->mu);
    }
    *out = a;
    return 0;
}

void *icm__ahead_get(icm__ahead *a, size_t i)
{
    if (!a->threaded) {
        a->job(a->ctx, i, slot_of(a, i));
        return slot_of(a, i);
    }
    pthread_mutex_lock(&a->mu);
    while (a->done <= i)
        pthread_cond_wait(&a->cv, &a->mu);
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
    icm__free(a);
}
