/*
 * util/parallel.c: iterations shared out among threads by an atomic counter (see parallel.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util/parallel.h"
#include "util/util.h"

#define MAX_THREADS 64

typedef struct loop {
    atomic_size_t next;
    size_t n;
    void (*fn)(void *ctx, size_t i);
    void *ctx;
} loop;

static void *work(void *arg)
{
    loop *l = arg;
    for (size_t i; (i = atomic_fetch_add(&l->next, 1)) < l->n;)
        l->fn(l->ctx, i);
    return NULL;
}

void icm__parallel_for(size_t n, unsigned threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
    loop l = {.n = n, .fn = fn, .ctx = ctx};
    atomic_init(&l.next, 0);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if ((size_t)threads > n)
        threads = (unsigned)n;
    pthread_t tid[MAX_THREADS];
    unsigned started = 0;
    /* The workers mostly wait on the network: a small stack each. */
    pthread_attr_t attr;
    bool have_attr = threads > 1 && pthread_attr_init(&attr) == 0;
    if (have_attr)
        (void)pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    while (started + 1 < threads &&
           pthread_create(&tid[started], have_attr ? &attr : NULL, work, &l) == 0)
        started++;
    if (have_attr)
        pthread_attr_destroy(&attr);
    work(&l); /* the calling thread takes its share, or all of it */
    for (unsigned k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
}
