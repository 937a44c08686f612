/*
 * maint/delete_common.h: the pieces of the delete phase (icemaint/maint.h) that the two
 * executors, orphans.c and expire.c, share (internal). Only those two files include it: it
 * deletes, and the planning files must not (the dry-run tests check their object files).
 *
 *  - icm__delete_counted: one file's delete, telling ALREADY_GONE from DELETED;
 *  - icm__batch_clock: when a batch has been deleting long enough (ICM_DELETE_BATCH_MS);
 *  - icm__batch_limit: the files per batch an options struct asks for.
 */
#ifndef ICM_MAINT_DELETE_COMMON_H
#define ICM_MAINT_DELETE_COMMON_H

#include <time.h>

#include "icemaint/fileio.h"
#include "icemaint/maint.h"
#include "io/fileio_internal.h"
#include "util/util.h"

/*
 * Delete `path`, telling whether it was there (one delete, no extra stat; a back end that
 * cannot tell counts as DELETED). Returns 0 (then *outcome is DELETED or ALREADY_GONE) or the
 * delete's error code (*outcome FAILED).
 */
static inline int icm__delete_counted(icm_fileio *io, const char *path,
                                      icm_delete_outcome *outcome)
{
    int rc = icm_fileio_delete(io, path);
    *outcome = rc != 0                             ? ICM_DELETE_FAILED
               : icm__fileio_delete_found_nothing() ? ICM_DELETE_ALREADY_GONE
                                                   : ICM_DELETE_DELETED;
    return rc;
}

/* Monotonic milliseconds, for batch time slices only. */
static inline int64_t icm__batch_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Files per batch: the option when set, else ICM_DELETE_BATCH_FILES. */
static inline size_t icm__batch_limit(size_t option)
{
    return option > 0 ? option : ICM_DELETE_BATCH_FILES;
}

#endif /* ICM_MAINT_DELETE_COMMON_H */
