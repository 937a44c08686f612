/*
 * io/probe.c: many small reads at once through a FileIO (implements io/probe.h).
 *
 * Each item is traced through the FileIOs that only pick or rename (a resolving FileIO picks
 * the back end by scheme, a path map renames): items that end at an S3 back end go to it as one
 * batch per back end, under the name it knows them by; every other item (local files, a
 * registered back end, a fault-injecting wrapper in the tests) is called through the public
 * wrappers as before, on up to FALLBACK_THREADS threads.
 */
#include <string.h>

#include "icemaint/errors.h"
#include "io/fileio_internal.h"
#include "io/probe.h"
#include "util/parallel.h"
#include "util/util.h"

/* What the checks ran at once before the batches, and still run for other back ends. */
#define FALLBACK_THREADS 32
/* Wrappers looked through at most (a path map over a resolving FileIO is two). */
#define MAX_DEPTH 8

/* Keep rc as item p's result, with the thread's last error when it is a failure. */
static void record(icm__probe *p, int rc)
{
    p->rc = rc;
    p->error = NULL;
    if (rc != 0 && rc != ICM_ENOTFOUND && rc != ICM_ENOMEM)
        p->error = icm__error_save();
    icm_error_clear();
}

typedef struct fallback {
    icm_fileio *io;
    icm__probe_kind kind;
    icm__probe *items;
    const size_t *idx;
} fallback;

static void probe_one(void *ctx, size_t k)
{
    const fallback *f = ctx;
    icm__probe *p = &f->items[f->idx[k]];
    int rc = f->kind == ICM__PROBE_STAT
                 ? icm_fileio_stat(&p->info, f->io, p->location)
                 : icm_fileio_read_range(&p->n_read, f->io, p->location, 0, p->buf, p->len);
    record(p, rc);
}

/* The S3 back end behind `io` for `location` (*s3 NULL when there is none, or a wrapper that
 * is not looked through is in the way), and the name it knows the location by (*mapped: a new
 * string, or NULL when it is `location`). A location the wrappers refuse has none: its
 * per-item call reports why. Returns 0 or ICM_ENOMEM. */
static int s3_behind(icm_fileio *io, const char *location, icm_fileio **s3, char **mapped)
{
    *s3 = NULL;
    *mapped = NULL;
    char *name = NULL;
    const char *cur = location;
    for (int depth = 0; depth < MAX_DEPTH && io != NULL; depth++) {
        if (icm__fileio_is_s3(io)) {
            *s3 = io;
            *mapped = name;
            return 0;
        }
        icm_fileio *inner = NULL;
        if (icm__fileio_is_resolving(io)) {
            int rc = icm__fileio_resolving_backend(io, cur, &inner);
            if (rc == ICM_ENOMEM)
                break;
            if (rc != 0)
                inner = NULL;
        } else if ((inner = icm__fileio_pathmap_inner(io)) != NULL) {
            char *m = NULL;
            int rc = icm_fileio_pathmap_apply(&m, io, cur);
            if (rc == ICM_ENOMEM) {
                icm__free(name);
                return ICM_ENOMEM;
            }
            if (rc != 0) {
                inner = NULL;
            } else {
                icm__free(name);
                name = m;
                cur = m;
            }
        }
        io = inner;
    }
    icm_error_clear();
    icm__free(name);
    return 0;
}

int icm__fileio_probe_many(icm_fileio *io, icm__probe_kind kind, icm__probe *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        items[i].rc = ICM_ERROR;
        items[i].error = NULL;
        items[i].n_read = 0;
        items[i].info = (icm_file_info){sizeof(icm_file_info), items[i].location, 0, -1};
    }
    if (n == 0)
        return 0;
    icm_fileio **backs = icm__calloc(n, sizeof *backs);
    char **names = icm__calloc(n, sizeof *names);
    size_t *idx = icm__calloc(n, sizeof *idx);
    icm__probe *pass = icm__calloc(n, sizeof *pass);
    bool *batched = icm__calloc(n, sizeof *batched);
    int rc = backs != NULL && names != NULL && idx != NULL && pass != NULL && batched != NULL
                 ? 0
                 : ICM_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = s3_behind(io, items[i].location, &backs[i], &names[i]);
        batched[i] = backs[i] != NULL;
    }
    /* One batch per S3 back end, in the items' order. */
    for (size_t i = 0; i < n && rc == 0; i++) {
        icm_fileio *b = backs[i];
        if (b == NULL)
            continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++) {
            if (backs[j] != b)
                continue;
            pass[m] = items[j];
            pass[m].location = names[j] != NULL ? names[j] : items[j].location;
            idx[m++] = j;
        }
        rc = icm__fileio_s3_probe_many(b, kind, pass, m);
        for (size_t k = 0; k < m; k++) {
            icm__probe *p = &items[idx[k]];
            p->rc = pass[k].rc;
            p->error = pass[k].error;
            p->n_read = pass[k].n_read;
            p->info = pass[k].info;
            p->info.location = p->location;
            backs[idx[k]] = NULL;
            names[idx[k]] = (icm__free(names[idx[k]]), NULL);
        }
    }
    if (rc == 0) {
        /* The rest, each through the wrappers, FALLBACK_THREADS at a time. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (!batched[i])
                idx[m++] = i;
        fallback f = {io, kind, items, idx};
        icm__parallel_for(m, FALLBACK_THREADS, probe_one, &f);
    }
    for (size_t i = 0; names != NULL && i < n; i++)
        icm__free(names[i]);
    icm__free(backs);
    icm__free(names);
    icm__free(idx);
    icm__free(pass);
    icm__free(batched);
    return rc == ICM_ENOMEM ? icm__error_oom() : rc;
}

void icm__probes_dispose(icm__probe *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        icm__free(items[i].error);
        items[i].error = NULL;
    }
}
