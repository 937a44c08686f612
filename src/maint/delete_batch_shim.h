/*
 * maint/delete_batch_shim.h: TEMPORARY stand-in for FileIO version 4's icm_fileio_delete_batch
 * (issue #17 section 2, being added on branch b2), so the delete engine (delete_engine.c) can be
 * built and tested before it lands (internal). Same names and contract as b2's declaration in
 * icemaint/fileio.h; this file and delete_batch_shim.c go when that branch is merged.
 *
 * Contract: one result per location, in order. DELETED: it existed and is gone; ALREADY_GONE:
 * there was nothing to delete (success, told apart); DELETE_FAILED: `code` is the negative icm
 * code, `message` one line, and `retryable` says the back end expects the same delete may
 * succeed later. Returns 0 when every item got a result (failures are per item), or
 * ICM_EINVALID / ICM_ENOMEM when it could not run at all (then every result is FAILED with that
 * code). At most ICM_FILEIO_DELETE_BATCH_MAX locations per call.
 */
#ifndef ICM_MAINT_DELETE_BATCH_SHIM_H
#define ICM_MAINT_DELETE_BATCH_SHIM_H

#include <stdbool.h>
#include <stddef.h>

#include "icemaint/fileio.h"

typedef enum icm_fileio_delete_status {
    ICM_FILEIO_DELETED = 0,
    ICM_FILEIO_ALREADY_GONE = 1,
    ICM_FILEIO_DELETE_FAILED = 2
} icm_fileio_delete_status;

typedef struct icm_fileio_delete_result {
    icm_fileio_delete_status status;
    int code;          /* FAILED: negative icm code; else 0 */
    bool retryable;    /* FAILED and the back end says the same delete may succeed later */
    char message[256]; /* FAILED: one line; else "" */
} icm_fileio_delete_result;

#define ICM_FILEIO_DELETE_BATCH_MAX 1000

/* The shim: one icm_fileio_delete_existing per item (the path every back end without a
 * delete_batch slot takes). A back end of today cannot mark a failure retryable itself, so the
 * shim marks the codes the delete phase has always treated as transient (ICM_EIO, ICM_ENET,
 * ICM_ETIMEOUT) retryable: expiry's one retry rule before the engine, kept. */
int icm_fileio_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                            icm_fileio_delete_result *results);

#endif /* ICM_MAINT_DELETE_BATCH_SHIM_H */
