/*
 * io/fileio.c: the public icm_fileio_* wrappers, the single choke point through which every
 * storage call passes (SQLite's sqlite3OsRead pattern).
 *
 * The wrappers check arguments (so back ends can trust them), clear out-parameters before
 * dispatching (so callers never see stale values after a failure) and make sure every failure
 * names the location involved, even when a back end forgot to.
 */
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "io/fileio_internal.h"
#include "util/util.h"

/* ICM_EINVALID for a missing handle, a back end of a version this library does not know, or a
 * missing location, naming what is wrong. */
static int check_io(const icm_fileio *io, const char *location, const char *what)
{
    if (io == NULL || io->methods == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "%s: no FileIO handle",
                              what);
    int v = io->methods->version;
    if (v < 1 || v > ICM_FILEIO_METHODS_VERSION)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location,
                              "%s: the %s FileIO has methods version %d; this library knows "
                              "versions 1 to %d",
                              what, io->methods->name != NULL ? io->methods->name : "(unnamed)",
                              v, ICM_FILEIO_METHODS_VERSION);
    return 0;
}

static int check_common(const icm_fileio *io, const char *location, const char *what)
{
    int rc = check_io(io, location, what);
    if (rc < 0)
        return rc;
    if (location == NULL || location[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "%s: empty location", what);
    return 0;
}

/* Back ends set the location on their errors; this catches any that did not. */
static int finish(int rc, const char *location)
{
    if (rc < 0 && icm_error_last()->location[0] == '\0')
        icm__error_set_location(location);
    return rc;
}

int icm_fileio_read(icm_fileio *io, const char *location, char **out, size_t *out_len)
{
    if (out != NULL)
        *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    int rc = check_common(io, location, "read");
    if (rc < 0)
        return rc;
    if (out == NULL || out_len == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "read: NULL output");
    return finish(io->methods->read(io, location, out, out_len), location);
}

int icm_fileio_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                          size_t len, size_t *out_read)
{
    if (out_read != NULL)
        *out_read = 0;
    int rc = check_common(io, location, "read range");
    if (rc < 0)
        return rc;
    if (out_read == NULL || (buf == NULL && len > 0))
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location,
                              "read range: NULL buffer or output");
    if (offset < 0)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location,
                              "read range: negative offset %lld", (long long)offset);
    return finish(io->methods->read_range(io, location, offset, buf, len, out_read), location);
}

int icm_fileio_create_new(icm_fileio *io, const char *location, const void *data, size_t len)
{
    int rc = check_common(io, location, "create");
    if (rc < 0)
        return rc;
    if (data == NULL && len > 0)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "create: NULL data");
    return finish(io->methods->create_new(io, location, data, len), location);
}

int icm_fileio_write_replace(icm_fileio *io, const char *location, const void *data, size_t len)
{
    int rc = check_common(io, location, "write");
    if (rc < 0)
        return rc;
    if (data == NULL && len > 0)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "write: NULL data");
    return finish(io->methods->write_replace(io, location, data, len), location);
}

/* Set by a back end's remove (icm_fileio_note_missing) when the object was not there. Every
 * icm_fileio_delete clears it first; nested wrappers pass the delete on through
 * icm_fileio_delete, so after the outermost call returns it holds the innermost back end's
 * answer, on this thread. */
static _Thread_local bool g_delete_found_nothing;

void icm_fileio_note_missing(void)
{
    g_delete_found_nothing = true;
}

bool icm__fileio_delete_found_nothing(void)
{
    return g_delete_found_nothing;
}

int icm_fileio_delete(icm_fileio *io, const char *location)
{
    g_delete_found_nothing = false;
    int rc = check_common(io, location, "delete");
    if (rc < 0)
        return rc;
    return finish(io->methods->remove(io, location), location);
}

int icm_fileio_delete_existing(icm_fileio *io, const char *location, bool *existed)
{
    if (existed != NULL)
        *existed = true;
    if (existed == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "delete: NULL output");
    int rc = icm_fileio_delete(io, location);
    *existed = rc != 0 || !g_delete_found_nothing;
    return rc;
}

int icm_fileio_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    if (out != NULL) {
        out->location = location;
        out->size_bytes = 0;
        out->mtime_ms = -1;
    }
    int rc = check_common(io, location, "stat");
    if (rc < 0)
        return rc;
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "stat: NULL output");
    return finish(io->methods->stat(io, location, out), location);
}

int icm_fileio_list(icm_fileio *io, const char *prefix, icm_list_cb cb, void *payload)
{
    return icm_fileio_list_flags(io, prefix, 0, cb, payload);
}

int icm_fileio_list_flags(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                          void *payload)
{
    int rc = check_common(io, prefix, "list");
    if (rc < 0)
        return rc;
    if (cb == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, prefix, "list: NULL callback");
    if ((flags & ~ICM_LIST_FLAGS_ALL) != 0)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, prefix,
                              "list: unknown flag bits 0x%x", flags & ~ICM_LIST_FLAGS_ALL);
    /* A version-1 back end has no list_flags slot (its methods struct ends before it); it
     * reports size and mtime anyway, which every flag so far permits. A callback's own stop
     * value is passed up untouched, error and all. */
    const icm_fileio_methods *m = io->methods;
    if (m->version >= 2 && m->list_flags != NULL)
        return m->list_flags(io, prefix, flags, cb, payload);
    if (m->list == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, prefix,
                              "list: the %s FileIO cannot list",
                              m->name != NULL ? m->name : "(unnamed)");
    return m->list(io, prefix, cb, payload);
}

int icm_fileio_resolve(icm_fileio *io, const char *location, char **out)
{
    if (out != NULL)
        *out = NULL;
    int rc = check_common(io, location, "resolve");
    if (rc < 0)
        return rc;
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "resolve: NULL output");
    const icm_fileio_methods *m = io->methods;
    if (m->version >= 2 && m->resolve != NULL)
        return finish(m->resolve(io, location, out), location);
    *out = icm__strdup(location); /* no links in this back end */
    return *out != NULL ? 0 : ICM_ENOMEM;
}

int icm_fileio_checksum_of(icm_fileio *io, const char *location, char **out,
                           icm_file_info *info)
{
    icm_file_info unused;
    if (info == NULL)
        info = &unused;
    if (out != NULL)
        *out = NULL;
    info->location = NULL;
    info->size_bytes = -1;
    info->mtime_ms = -1;
    int rc = check_common(io, location, "checksum");
    if (rc < 0)
        return rc;
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "checksum: NULL output");
    const icm_fileio_methods *m = io->methods;
    if (m->version < 3 || m->checksum_of == NULL)
        return 0; /* no companions in this back end */
    rc = finish(m->checksum_of(io, location, out, info), location);
    info->location = *out;
    return rc;
}

void icm_fileio_free(icm_fileio *io)
{
    if (io != NULL && io->methods != NULL && io->methods->free != NULL)
        io->methods->free(io);
}
