/*
 * io/fileio.c: the public icm_fileio_* wrappers, the single choke point through which every
 * storage call passes (SQLite's sqlite3OsRead pattern).
 *
 * The wrappers check arguments (so back ends can trust them), clear out-parameters before
 * dispatching (so callers never see stale values after a failure) and make sure every failure
 * names the location involved, even when a back end forgot to.
 */
#include <stdio.h>
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "io/fileio_internal.h"
#include "util/location.h"
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

int icm_fileio_read(char **out, size_t *out_len, icm_fileio *io, const char *location)
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

int icm_fileio_read_range(size_t *out_read, icm_fileio *io, const char *location, int64_t offset,
                          void *buf, size_t len)
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

int icm_fileio_holds(bool *out_same, icm_fileio *io, const char *location, const void *data,
                     size_t len)
{
    if (out_same != NULL)
        *out_same = false;
    if (out_same == NULL || (data == NULL && len > 0))
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location,
                              "holds: NULL data or output");
    char *found = NULL;
    size_t found_len = 0;
    int rc = icm_fileio_read(&found, &found_len, io, location);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    if (rc == 0)
        *out_same = found_len == len && (len == 0 || memcmp(found, data, len) == 0);
    icm_free(found);
    return rc;
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

int icm_fileio_delete_existing(bool *existed, icm_fileio *io, const char *location)
{
    if (existed != NULL)
        *existed = true;
    if (existed == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "delete: NULL output");
    int rc = icm_fileio_delete(io, location);
    *existed = rc != 0 || !g_delete_found_nothing;
    return rc;
}

/* ---- delete_batch ---- */

/* Whether a whole-call failure of a back end's delete may pass when the same delete is sent
 * again: the network and timeouts. Deletes are idempotent, so a retry after a lost response
 * is safe (the object is then ALREADY_GONE). */
static bool code_retryable(int code)
{
    return code == ICM_ENET || code == ICM_ETIMEOUT;
}

void icm_fileio_delete_result_fail(icm_fileio_delete_result *r, int code, bool retryable)
{
    r->status = ICM_FILEIO_DELETE_FAILED;
    r->code = code < 0 ? code : ICM_EIO;
    r->retryable = retryable;
    icm_error_format(r->message, sizeof r->message, icm_error_last());
}

static void result_ok(icm_fileio_delete_result *r, icm_fileio_delete_status status)
{
    r->status = status;
    r->code = 0;
    r->retryable = false;
    r->message[0] = '\0';
}

/* Every result FAILED with `code` and the last error's message (results may be NULL). */
static void fail_all(icm_fileio_delete_result *results, size_t n, int code)
{
    for (size_t i = 0; results != NULL && i < n; i++)
        icm_fileio_delete_result_fail(&results[i], code, false);
}

/* One item through `remove`, as icm_fileio_delete_existing. */
static void delete_one(icm_fileio *io, const char *location, icm_fileio_delete_result *r)
{
    int rc = icm_fileio_delete(io, location);
    if (rc == 0)
        result_ok(r, g_delete_found_nothing ? ICM_FILEIO_ALREADY_GONE : ICM_FILEIO_DELETED);
    else
        icm_fileio_delete_result_fail(r, rc, code_retryable(rc));
}

/* One back-end call for at most ICM_FILEIO_DELETE_BATCH_MAX valid locations. Results the back
 * end leaves unset stay FAILED; a whole-call failure marks every item with it; a result that
 * contradicts itself is made consistent (success carries no code, a failure a negative one). */
static void delete_chunk(icm_fileio *io, const char *const *locations, size_t n,
                         icm_fileio_delete_result *results)
{
    const char *name = io->methods->name != NULL ? io->methods->name : "(unnamed)";
    for (size_t i = 0; i < n; i++) {
        icm_fileio_delete_result *r = &results[i];
        r->status = ICM_FILEIO_DELETE_FAILED;
        r->code = ICM_EIO;
        r->retryable = false;
        snprintf(r->message, sizeof r->message, "%s: the %s FileIO gave no result for it",
                 locations[i], name);
    }
    int rc = io->methods->delete_batch(io, locations, n, results);
    const icm_error *e = icm_error_last();
    for (size_t i = 0; i < n; i++) {
        icm_fileio_delete_result *r = &results[i];
        if (rc < 0) {
            r->status = ICM_FILEIO_DELETE_FAILED;
            r->code = rc;
            r->retryable = code_retryable(rc);
            if (e->location[0] != '\0')
                icm_error_format(r->message, sizeof r->message, e);
            else
                snprintf(r->message, sizeof r->message, "%s: %s", locations[i], e->message);
        } else if (r->status == ICM_FILEIO_DELETED || r->status == ICM_FILEIO_ALREADY_GONE) {
            result_ok(r, r->status);
        } else {
            r->status = ICM_FILEIO_DELETE_FAILED;
            if (r->code >= 0)
                r->code = ICM_EIO;
        }
    }
}

/* A usable item: a non-empty location. */
static bool item_ok(const char *location)
{
    return location != NULL && location[0] != '\0';
}

/* icm_fileio_delete_batch on results of this library's size. */
static int delete_batch_whole(icm_fileio_delete_result *results, icm_fileio *io,
                              const char *const *locations, size_t n)
{
    int rc = check_io(io, NULL, "delete batch");
    if (rc == 0 && n > 0 && (locations == NULL || results == NULL))
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                            "delete batch: NULL locations or results for %zu items", n);
    if (rc < 0) {
        fail_all(results, n, rc);
        return rc;
    }
    size_t n_bad = 0;
    for (size_t i = 0; i < n; i++)
        n_bad += !item_ok(locations[i]);
    const icm_fileio_methods *m = io->methods;
    bool batched = m->version >= 4 && m->delete_batch != NULL;
    /* The back end gets only valid items, so when some are not, the valid ones of each chunk are
     * gathered first: allocate that room before anything is deleted. */
    const char **pass = NULL;
    size_t *pass_idx = NULL;
    icm_fileio_delete_result *pass_res = NULL;
    if (batched && n_bad > 0 && n_bad < n) {
        size_t cap = n - n_bad < ICM_FILEIO_DELETE_BATCH_MAX ? n - n_bad
                                                             : ICM_FILEIO_DELETE_BATCH_MAX;
        pass = icm__calloc(cap, sizeof *pass);
        pass_idx = icm__calloc(cap, sizeof *pass_idx);
        pass_res = icm__calloc(cap, sizeof *pass_res);
        if (pass == NULL || pass_idx == NULL || pass_res == NULL) {
            icm__free(pass);
            icm__free(pass_idx);
            icm__free(pass_res);
            fail_all(results, n, ICM_ENOMEM);
            return ICM_ENOMEM;
        }
        ICM_FILEIO_DELETE_RESULTS_INIT(pass_res, cap);
    }
    for (size_t i = 0; i < n; i++) {
        if (item_ok(locations[i]))
            continue;
        icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                       "delete batch: item %zu has an empty location", i);
        icm_fileio_delete_result_fail(&results[i], ICM_EINVALID, false);
    }
    if (!batched) {
        for (size_t i = 0; i < n; i++)
            if (item_ok(locations[i]))
                delete_one(io, locations[i], &results[i]);
    } else if (n_bad == 0) {
        for (size_t off = 0; off < n; off += ICM_FILEIO_DELETE_BATCH_MAX) {
            size_t k = n - off < ICM_FILEIO_DELETE_BATCH_MAX ? n - off
                                                             : ICM_FILEIO_DELETE_BATCH_MAX;
            delete_chunk(io, locations + off, k, results + off);
        }
    } else {
        size_t i = 0;
        while (i < n) {
            size_t k = 0;
            for (; i < n && k < ICM_FILEIO_DELETE_BATCH_MAX; i++) {
                if (!item_ok(locations[i]))
                    continue;
                pass[k] = locations[i];
                pass_idx[k++] = i;
            }
            if (k == 0)
                break;
            delete_chunk(io, pass, k, pass_res);
            for (size_t j = 0; j < k; j++)
                results[pass_idx[j]] = pass_res[j];
        }
    }
    icm__free(pass);
    icm__free(pass_idx);
    icm__free(pass_res);
    return 0;
}

/* ---- size-prefixed results (common.h, docs/API.md rule 3) ---- */

/* A caller's icm_file_info: refused (nothing written) unless its struct_size is one this
 * library can fill. */
static int file_info_check(const icm_file_info *info, const char *location)
{
    return icm__struct_size_check(ICM_ERRCLASS_IO, location, "icm_file_info", info->struct_size,
                                  ICM_FILE_INFO_SIZE_MIN, sizeof(icm_file_info),
                                  "ICM_FILE_INFO_INIT");
}

/* Copy the fields of `src` (a whole one) that fit the caller's `dst`. Back ends always fill a
 * whole struct of this library's size; only what the caller's struct holds reaches it. */
static void file_info_copy_out(icm_file_info *dst, const icm_file_info *src)
{
    if (ICM_STRUCT_HAS(dst, icm_file_info, location))
        dst->location = src->location;
    if (ICM_STRUCT_HAS(dst, icm_file_info, size_bytes))
        dst->size_bytes = src->size_bytes;
    if (ICM_STRUCT_HAS(dst, icm_file_info, mtime_ms))
        dst->mtime_ms = src->mtime_ms;
    /* A field appended to icm_file_info must be copied above too. */
    _Static_assert(offsetof(icm_file_info, mtime_ms) + sizeof(int64_t) == sizeof(icm_file_info),
                   "file_info_copy_out copies every field of icm_file_info");
}

/* The caller's results[i] when its elements are `stride` bytes apart. */
static icm_fileio_delete_result *result_at(icm_fileio_delete_result *results, size_t stride,
                                           size_t i)
{
    return (icm_fileio_delete_result *)(void *)((char *)results + i * stride);
}

/* Copy the fields of `src` (a whole one) that fit the caller's `dst`. */
static void delete_result_copy_out(icm_fileio_delete_result *dst,
                                   const icm_fileio_delete_result *src)
{
    if (ICM_STRUCT_HAS(dst, icm_fileio_delete_result, status))
        dst->status = src->status;
    if (ICM_STRUCT_HAS(dst, icm_fileio_delete_result, code))
        dst->code = src->code;
    if (ICM_STRUCT_HAS(dst, icm_fileio_delete_result, retryable))
        dst->retryable = src->retryable;
    if (ICM_STRUCT_HAS(dst, icm_fileio_delete_result, message))
        memcpy(dst->message, src->message, sizeof dst->message);
    /* A field appended to icm_fileio_delete_result must be copied above too (the message is its
     * last field; only padding may follow). */
    _Static_assert(offsetof(icm_fileio_delete_result, message) + sizeof(char[256]) +
                           _Alignof(icm_fileio_delete_result) >
                       sizeof(icm_fileio_delete_result),
                   "delete_result_copy_out copies every field of icm_fileio_delete_result");
}

int icm_fileio_delete_batch(icm_fileio_delete_result *results, icm_fileio *io,
                            const char *const *locations, size_t n)
{
    if (results == NULL || n == 0)
        return delete_batch_whole(results, io, locations, n);
    /* The caller's element size is its struct_size: check it (and that every element says the
     * same, so the array is walked as it was laid out) before anything is written or deleted. */
    size_t stride = results[0].struct_size;
    int rc = icm__struct_size_check(ICM_ERRCLASS_IO, NULL, "icm_fileio_delete_result", stride,
                                    ICM_FILEIO_DELETE_RESULT_SIZE_MIN,
                                    sizeof(icm_fileio_delete_result),
                                    "ICM_FILEIO_DELETE_RESULTS_INIT");
    for (size_t i = 1; rc == 0 && i < n; i++)
        if (result_at(results, stride, i)->struct_size != stride)
            rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                                "icm_fileio_delete_result: struct_size %zu of item %zu differs "
                                "from item 0's %zu; set every item with "
                                "ICM_FILEIO_DELETE_RESULTS_INIT",
                                result_at(results, stride, i)->struct_size, i, stride);
    if (rc < 0)
        return rc;
    if (stride == sizeof(icm_fileio_delete_result))
        return delete_batch_whole(results, io, locations, n);
    /* A smaller (older) struct: run on whole results, then copy what fits. */
    icm_fileio_delete_result *whole = icm__calloc(n, sizeof *whole);
    if (whole == NULL) {
        icm_fileio_delete_result failed = ICM_FILEIO_DELETE_RESULT_INIT;
        icm_fileio_delete_result_fail(&failed, ICM_ENOMEM, false);
        for (size_t i = 0; i < n; i++)
            delete_result_copy_out(result_at(results, stride, i), &failed);
        return ICM_ENOMEM;
    }
    ICM_FILEIO_DELETE_RESULTS_INIT(whole, n);
    rc = delete_batch_whole(whole, io, locations, n);
    for (size_t i = 0; i < n; i++)
        delete_result_copy_out(result_at(results, stride, i), &whole[i]);
    icm__free(whole);
    return rc;
}

int icm_fileio_stat(icm_file_info *out, icm_fileio *io, const char *location)
{
    icm_file_info full = {sizeof full, location, 0, -1};
    if (out != NULL) {
        int rc = file_info_check(out, location);
        if (rc < 0)
            return rc;
        file_info_copy_out(out, &full);
    }
    int rc = check_common(io, location, "stat");
    if (rc < 0)
        return rc;
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "stat: NULL output");
    rc = finish(io->methods->stat(io, location, &full), location);
    file_info_copy_out(out, &full);
    return rc;
}

int icm_fileio_list(icm_fileio *io, const char *prefix, icm_list_cb cb, void *payload)
{
    return icm_fileio_list_flags(io, prefix, 0, cb, payload);
}

int icm_fileio_list_flags(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                          void *payload)
{
    icm_fileio_list_options opts = ICM_FILEIO_LIST_OPTIONS_INIT;
    opts.flags = flags;
    return icm_fileio_list_opts(io, prefix, &opts, cb, payload);
}

int icm_fileio_list_options_init(icm_fileio_list_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_FILEIO_LIST_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                              "list options: NULL or unknown version %u (this library knows "
                              "1 to %d)",
                              version, ICM_FILEIO_LIST_OPTIONS_VERSION);
    *opts = (icm_fileio_list_options)ICM_FILEIO_LIST_OPTIONS_INIT;
    return 0;
}

/* The range check between a back end and the caller's callback. */
typedef struct range_filter {
    const char *start_after;
    const char *end_before;
    icm_list_cb cb;
    void *payload;
} range_filter;

static int range_filter_cb(const icm_file_info *info, void *payload)
{
    const range_filter *f = payload;
    if (f->start_after != NULL && strcmp(info->location, f->start_after) <= 0)
        return 0;
    if (f->end_before != NULL && strcmp(info->location, f->end_before) >= 0)
        return 0;
    return f->cb(info, f->payload);
}

int icm_fileio_list_opts(icm_fileio *io, const char *prefix, const icm_fileio_list_options *opts,
                         icm_list_cb cb, void *payload)
{
    int rc = check_common(io, prefix, "list");
    if (rc < 0)
        return rc;
    if (cb == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, prefix, "list: NULL callback");
    icm_fileio_list_options o = ICM_FILEIO_LIST_OPTIONS_INIT;
    if (opts != NULL) {
        if (opts->version < 1 || opts->version > ICM_FILEIO_LIST_OPTIONS_VERSION)
            return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, prefix,
                                  "list: options version %u unknown (this library knows 1 to "
                                  "%d)",
                                  opts->version, ICM_FILEIO_LIST_OPTIONS_VERSION);
        o.flags = opts->flags;
        o.start_after = opts->start_after;
        o.end_before = opts->end_before;
    }
    if ((o.flags & ~ICM_LIST_FLAGS_ALL) != 0)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, prefix,
                              "list: unknown flag bits 0x%x", o.flags & ~ICM_LIST_FLAGS_ALL);
    /* A range is checked here for every back end, so the objects reported are exactly those in
     * range whether or not the back end seeks. Without a range the callback is called directly
     * (the listing hot path pays nothing). */
    range_filter filter = {o.start_after, o.end_before, cb, payload};
    if (o.start_after != NULL || o.end_before != NULL) {
        cb = range_filter_cb;
        payload = &filter;
    }
    /* A version-1 back end has no list_flags slot (its methods struct ends before it); it
     * reports size and mtime anyway, which every flag so far permits. A callback's own stop
     * value is passed up untouched, error and all. */
    const icm_fileio_methods *m = io->methods;
    if (m->version >= 4 && m->list_range != NULL)
        return m->list_range(io, prefix, &o, cb, payload);
    if (m->version >= 2 && m->list_flags != NULL)
        return m->list_flags(io, prefix, o.flags, cb, payload);
    if (m->list == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, prefix,
                              "list: the %s FileIO cannot list",
                              m->name != NULL ? m->name : "(unnamed)");
    return m->list(io, prefix, cb, payload);
}

int icm_fileio_resolve(char **out, icm_fileio *io, const char *location)
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

int icm_fileio_checksum_of(char **out, icm_file_info *info, icm_fileio *io,
                           const char *location)
{
    icm_file_info full = ICM_FILE_INFO_INIT;
    if (info != NULL) {
        int rc = file_info_check(info, location);
        if (rc < 0) {
            if (out != NULL)
                *out = NULL;
            return rc;
        }
        file_info_copy_out(info, &full);
    }
    if (out != NULL)
        *out = NULL;
    int rc = check_common(io, location, "checksum");
    if (rc < 0)
        return rc;
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location, "checksum: NULL output");
    const icm_fileio_methods *m = io->methods;
    if (m->version < 3 || m->checksum_of == NULL)
        return 0; /* no companions in this back end */
    rc = finish(m->checksum_of(io, location, out, &full), location);
    full.location = *out;
    if (info != NULL)
        file_info_copy_out(info, &full);
    return rc;
}

void icm_fileio_free(icm_fileio *io)
{
    if (io != NULL && io->methods != NULL && io->methods->free != NULL)
        io->methods->free(io);
}

bool icm__fileio_on_this_disk(icm_fileio *io, const char *location)
{
    if (io != NULL && io->methods != NULL && io->methods->version >= 5 &&
        io->methods->is_local != NULL) {
        int r = io->methods->is_local(io, location);
        if (r >= 0)
            return r != 0;
        icm_error_clear();
    }
    return icm__location_local_part(location) != NULL;
}

bool icm__fileio_deletes_locally(icm_fileio *io, const char *location)
{
    if (icm__location_local_part(location) != NULL)
        return true;
    if (io == NULL || io->methods == NULL || io->methods->version < 5 ||
        io->methods->is_local == NULL)
        return true; /* cannot tell: the careful answer */
    int r = io->methods->is_local(io, location);
    if (r < 0) {
        icm_error_clear();
        return true;
    }
    return r != 0;
}
