/*
 * io/probe.h: many small independent reads at once, through a FileIO (internal): the size and
 * mtime of each of many files (a stat: a HEAD on an object store), or the first bytes of each
 * (a ranged GET). The checks that make one request per file use it: the sweep's look at every
 * candidate's first bytes (is it a catalog's SQLite database?), its re-stat of every orphan
 * right before the delete request, and verification's stat of every file a snapshot keeps.
 *
 * On an object store each is a round trip (tens of milliseconds of waiting), so they go out
 * many at a time: the S3 back end drives them from the calling thread through libcurl multi
 * (s3.check.max-in-flight at once, kept-alive connections, each request signed and retried by
 * the back end's rules); any other back end gets its per-item calls through the FileIO's public
 * wrappers, 32 threads at a time (what the callers did before; a local stat costs microseconds).
 * Either way each item gets its own result, exactly what the per-item call would have given,
 * and nothing is judged here: the callers judge the results afterwards, in their own order.
 */
#ifndef ICM_IO_PROBE_H
#define ICM_IO_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "icemaint/sys/fileio.h"
#include "util/util.h"

typedef enum icm__probe_kind {
    ICM__PROBE_STAT,       /* icm_fileio_stat: info */
    ICM__PROBE_FIRST_BYTES /* icm_fileio_read_range(location, 0, buf, len): n_read */
} icm__probe_kind;

typedef struct icm__probe {
    /* in */
    const char *location;    /* borrowed; non-empty */
    void *buf;               /* FIRST_BYTES: room for len bytes (each item its own) */
    size_t len;
    /* out */
    int rc;                  /* 0; ICM_ENOTFOUND: the file is gone (a result, not an error);
                                else the call's failure */
    icm_file_info info;      /* STAT, rc 0: size and mtime; info.location = location */
    size_t n_read;           /* FIRST_BYTES, rc 0: bytes read (fewer than len: the end) */
    icm__error_saved *error; /* rc other than 0, ICM_ENOTFOUND and ICM_ENOMEM: the call's
                                error (message, location, HTTP status, S3 code), to restore
                                with icm__error_restore or free with icm__probes_dispose; NULL
                                when saving it failed */
} icm__probe;

/*
 * Run kind for items[0, n) through io (results into each item; `in` fields untouched).
 * Returns 0 once every item has its result; ICM_ENOMEM before any request when the batch
 * could not be set up (no item has a result then). The calling thread's last error is
 * unspecified afterwards.
 */
int icm__fileio_probe_many(icm_fileio *io, icm__probe_kind kind, icm__probe *items, size_t n);

/* Free the saved errors of items[0, n) (leaves the results' codes). */
void icm__probes_dispose(icm__probe *items, size_t n);

/* The S3 back end's batch (io/s3/s3.c): whether `io` is an S3 back end, and its probe_many
 * for items whose locations it serves. */
bool icm__fileio_is_s3(const icm_fileio *io);
int icm__fileio_s3_probe_many(icm_fileio *io, icm__probe_kind kind, icm__probe *items,
                              size_t n);

/* The back end a resolving FileIO sends `location` to (borrowed; built on first use), for
 * internal callers that talk to a back end directly (io/resolving.c). */
int icm__fileio_resolving_backend(icm_fileio *io, const char *location, icm_fileio **out);

#endif /* ICM_IO_PROBE_H */
