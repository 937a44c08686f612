/*
 * maint/delete_batch_shim.c: TEMPORARY per-item icm_fileio_delete_batch until FileIO version 4
 * (branch b2) lands; see delete_batch_shim.h. Deletes: only the delete engine calls it.
 */
#include <stdio.h>
#include <string.h>

#include "maint/delete_batch_shim.h"
#include "util/util.h"

static void fail_all(icm_fileio_delete_result *results, size_t n, int code)
{
    for (size_t i = 0; results != NULL && i < n; i++) {
        results[i].status = ICM_FILEIO_DELETE_FAILED;
        results[i].code = code;
        results[i].retryable = false;
        snprintf(results[i].message, sizeof results[i].message, "%s",
                 icm_error_last()->message);
    }
}

static bool transient(int code)
{
    return code == ICM_EIO || code == ICM_ENET || code == ICM_ETIMEOUT;
}

int icm_fileio_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                            icm_fileio_delete_result *results)
{
    if (io == NULL || results == NULL || (locations == NULL && n > 0) ||
        n > ICM_FILEIO_DELETE_BATCH_MAX) {
        int rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                                "icm_fileio_delete_batch: NULL argument or more than %d "
                                "locations", ICM_FILEIO_DELETE_BATCH_MAX);
        fail_all(results, n, rc);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        icm_fileio_delete_result *res = &results[i];
        bool existed = true;
        int rc = icm_fileio_delete_existing(io, locations[i], &existed);
        memset(res, 0, sizeof *res);
        if (rc == 0) {
            res->status = existed ? ICM_FILEIO_DELETED : ICM_FILEIO_ALREADY_GONE;
            continue;
        }
        res->status = ICM_FILEIO_DELETE_FAILED;
        res->code = rc;
        res->retryable = transient(rc);
        snprintf(res->message, sizeof res->message, "%s", icm_error_last()->message);
    }
    return 0;
}
