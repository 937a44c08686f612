/*
 * bench/bench_s3_get.c: the request-loop floor of the S3 expiry benchmark (docs/BENCHMARKS.md,
 * "S3: behind a 20 ms proxy"; driver: bench/s3/s3_bench.sh).
 *
 *   bench_s3_get URI_FILE THREADS
 *
 * Reads every object named in URI_FILE (one location a line) whole with icm_fileio_read, on
 * THREADS threads that each take the next location when their last read is done, so THREADS
 * requests are in flight: the same objects an expiry plan reads, the same HTTP client and
 * signer, none of the planning. The FileIO is the resolving one configured from the AWS
 * environment (as bench_s3_list). Prints objects, bytes, wall and CPU seconds.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "icemaint/errors.h"
#include "icemaint/fileio.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct job {
    icm_fileio *io;
    char **uris;
    size_t n;
    atomic_size_t next;
    atomic_size_t bytes;
    atomic_int failed;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n)
            return NULL;
        char *data = NULL;
        size_t len = 0;
        int rc = icm_fileio_read(&data, &len, j->io, j->uris[i]);
        if (rc != 0) {
            const icm_error *e = icm_error_last();
            fprintf(stderr, "bench_s3_get: %s: %d %s\n", j->uris[i], rc, e->message);
            atomic_store(&j->failed, 1);
            return NULL;
        }
        atomic_fetch_add(&j->bytes, len);
        icm_free(data);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_s3_get URI_FILE THREADS\n");
        return 2;
    }
    size_t threads = strtoul(argv[2], NULL, 10);
    FILE *f = fopen(argv[1], "r");
    if (f == NULL || threads < 1 || threads > 256) {
        fprintf(stderr, "bench_s3_get: cannot read %s, or THREADS not 1..256\n", argv[1]);
        return 2;
    }
    job j = {NULL, NULL, 0, 0, 0, 0};
    size_t cap = 0;
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0')
            continue;
        if (j.n == cap) {
            cap = cap ? cap * 2 : 1024;
            char **grown = realloc(j.uris, cap * sizeof *grown);
            if (grown == NULL)
                return 1;
            j.uris = grown;
        }
        if ((j.uris[j.n++] = strdup(line)) == NULL)
            return 1;
    }
    fclose(f);
    int rc = icm_fileio_resolving_new(&j.io, NULL, 0);
    if (rc != 0) {
        fprintf(stderr, "bench_s3_get: fileio: %d\n", rc);
        return 1;
    }
    pthread_t *tids = calloc(threads, sizeof *tids);
    if (tids == NULL)
        return 1;
    double t0 = now_s(), c0 = cpu_s();
    size_t started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tids[started], NULL, worker, &j) != 0)
            break;
    for (size_t i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    double t1 = now_s(), c1 = cpu_s();
    printf("floor: %zu objects, %zu bytes, %zu in flight: %.3f s, cpu %.3f s\n", j.n,
           (size_t)atomic_load(&j.bytes), started, t1 - t0, c1 - c0);
    for (size_t i = 0; i < j.n; i++)
        free(j.uris[i]);
    free(j.uris);
    free(tids);
    icm_fileio_free(j.io);
    return atomic_load(&j.failed) ? 1 : 0;
}
