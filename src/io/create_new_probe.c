/*
 * io/create_new_probe.c: does an object store honour create-new (fileio_internal.h)?
 *
 * Many S3-compatible stores ignore `If-None-Match: *` and overwrite (s3-and-rest.md §9.6).
 * Whatever relies on create-new to let exactly one of two writers win (a filesystem-layout
 * commit, the table lease) must prove it first, on the store and in the folder it will use:
 * a fresh object is created, then created again; the second create must fail with
 * ICM_EEXISTS. Three requests.
 */
#include <string.h>

#include "io/fileio_internal.h"
#include "util/util.h"

/* Whether an ICM_EEXISTS is the store's own refusal: from an HTTP store only a 412 is (an
 * S3 create-new that ran out of attempts reads the object back and says EEXISTS when another
 * object is there, which a store ignoring If-None-Match produces too: adversary round 16,
 * F5); a back end without HTTP (local disk, memory) refuses by itself. */
static bool store_refused(const icm_error *e)
{
    return e->http_status == 412 || (e->http_status == 0 && e->klass != ICM_ERRCLASS_S3);
}

int icm__fileio_create_new_honoured(icm_fileio *io, const char *dir, bool *honoured,
                                    const char **failed_step)
{
    *honoured = false;
    *failed_step = NULL;
    char token[37];
    int rc = icm__uuid4(token);
    if (rc != 0)
        return rc;
    /* Not hidden: a probe a crash (or a lost delete) leaves behind is an ordinary orphan that
     * the next sweep removes. */
    char *probe = icm__sprintf("%s/icemaint-create-new-probe-%s", dir, token);
    if (probe == NULL)
        return ICM_ENOMEM;
    rc = icm_fileio_create_new(io, probe, token, strlen(token));
    int again = rc == 0 ? icm_fileio_create_new(io, probe, "second", 6) : 0;
    if (rc != 0) {
        *failed_step = "first create";
    } else if (again == ICM_EEXISTS && store_refused(icm_error_last())) {
        *honoured = true;
    } else if (again == ICM_EEXISTS) {
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, probe,
                            "the store never answered the second create itself (the object "
                            "was read back after the attempts ran out): no proof either way");
        *failed_step = "second create";
    } else if (again != 0) {
        rc = again;
        *failed_step = "second create";
    }
    /* Best effort, also after a failed or lost first create (the probe may have landed): the
     * name is ours alone. */
    icm__error_saved *saved = icm__error_save();
    (void)icm_fileio_delete(io, probe);
    icm__error_restore(saved);
    icm__free(probe);
    return rc;
}
