/*
 * bench/bench_s3_list.c: listing a large object-store prefix, one sequential ListObjectsV2
 * stream against the listing cut into key ranges listed at once (results: docs/BENCHMARKS.md,
 * "S3: behind a 20 ms proxy"; driver: bench/s3/s3_bench.sh).
 *
 *   bench_s3_list PREFIX [RANGES [ROUNDS]]
 *
 * The FileIO is the resolving one with no properties, so S3 is configured from the AWS
 * environment (AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, ...), as the CLI does without a catalog.
 * Each round lists PREFIX twice, in alternation so that both meet the same minute:
 *   - seq:    icm__fileio_list_ahead_batches: one ListObjectsV2 page chain (the pages fetched on
 *             a thread of their own while the calling thread counts the keys, as the sweep's
 *             local listing does);
 *   - ranges: icm__fileio_list_ahead_ranges cut at RANGES-1 cuts (default 16 ranges, the
 *             sweep's), one page chain per range, all at once.
 * The cuts are quantiles of icm__cut_sample over the keys the first sequential listing showed
 * (the sweep samples the keys its manifests reference instead: for a table whose orphans are a
 * tenth of its files, nearly the same keys; building the sample is not timed). Prints, per
 * listing, the keys, wall and CPU seconds (CPU of the whole process, all threads), and checks
 * that both listings saw the same number of keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xxhash.h>

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "io/list_ahead.h"
#include "maint/list_cuts.h"

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

typedef struct counter {
    size_t keys;
    icm__cut_sample *sample; /* NULL: count only */
    int rc;
} counter;

static int on_batch(const icm_file_info *files, size_t n, void *payload)
{
    counter *c = payload;
    c->keys += n;
    for (size_t i = 0; c->sample != NULL && i < n; i++) {
        uint64_t h = XXH3_64bits(files[i].location, strlen(files[i].location));
        if (icm__cut_sample_wants(c->sample, h) &&
            (c->rc = icm__cut_sample_offer(c->sample, h, files[i].location)) != 0)
            return c->rc;
    }
    return 0;
}

static int die(const char *what, int rc)
{
    const icm_error *e = icm_error_last();
    fprintf(stderr, "bench_s3_list: %s: %d %s: %s\n", what, rc, e->location, e->message);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_s3_list PREFIX [RANGES [ROUNDS]]\n");
        return 2;
    }
    const char *prefix = argv[1];
    size_t ranges = argc > 2 ? strtoul(argv[2], NULL, 10) : 16;
    int rounds = argc > 3 ? atoi(argv[3]) : 1;
    if (ranges < 2 || ranges > ICM__LIST_RANGES_MAX || rounds < 1) {
        fprintf(stderr, "bench_s3_list: RANGES 2..%d, ROUNDS >= 1\n", ICM__LIST_RANGES_MAX);
        return 2;
    }
    icm_fileio *io = NULL;
    int rc = icm_fileio_resolving_new(&io, NULL, 0);
    if (rc != 0)
        return die("fileio", rc);
    icm__cut_sample sample;
    memset(&sample, 0, sizeof sample);
    char **cuts = NULL;
    size_t n_cuts = 0;
    size_t seq_keys = 0;
    for (int r = 1; r <= rounds; r++) {
        counter c = {0, r == 1 ? &sample : NULL, 0};
        double t0 = now_s(), c0 = cpu_s();
        rc = icm__fileio_list_ahead_batches(io, prefix, ICM_LIST_STAT_OPTIONAL, on_batch, &c);
        double t1 = now_s(), c1 = cpu_s();
        if (rc != 0)
            return die("sequential listing", rc);
        seq_keys = c.keys;
        printf("round %d seq: %zu keys, %.3f s, cpu %.3f s\n", r, c.keys, t1 - t0, c1 - c0);
        fflush(stdout);
        if (r == 1 && (rc = icm__cut_sample_cuts(&sample, ranges, &cuts, &n_cuts)) != 0)
            return die("cuts", rc);
        counter d = {0, NULL, 0};
        t0 = now_s();
        c0 = cpu_s();
        rc = icm__fileio_list_ahead_ranges(io, prefix, ICM_LIST_STAT_OPTIONAL,
                                           (const char *const *)cuts, n_cuts, on_batch, &d);
        t1 = now_s();
        c1 = cpu_s();
        if (rc != 0)
            return die("range listing", rc);
        printf("round %d ranges(%zu): %zu keys, %.3f s, cpu %.3f s\n", r, n_cuts + 1, d.keys,
               t1 - t0, c1 - c0);
        fflush(stdout);
        if (d.keys != seq_keys) {
            fprintf(stderr, "bench_s3_list: the range listing saw %zu keys, the sequential %zu\n",
                    d.keys, seq_keys);
            return 1;
        }
    }
    icm__cuts_free(cuts, n_cuts);
    icm__cut_sample_dispose(&sample);
    icm_fileio_free(io);
    return 0;
}
