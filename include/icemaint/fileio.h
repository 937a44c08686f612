/*
 * icemaint/fileio.h: storage access for table files, the caller's API (SQLite VFS style: one
 * opaque handle per back end, every call through the wrappers below). Back-end authors find the
 * vtable in icemaint/sys/fileio.h.
 *
 * Locations are URIs as the table metadata names them. For local files `/p`, `file:/p` and
 * `file:///p` (and `file://localhost/p`) name the same file. Back ends here: local filesystem,
 * a path-mapping wrapper (`--path-map FROM=TO`) and a resolving FileIO that picks the back end
 * by scheme; S3 and the other object stores plug in behind it (icemaint/sys/fileio.h). The
 * in-memory and fault-injecting back ends for tests are in icemaint/testing/fileio.h, outside
 * the stable ABI.
 *
 * Thread safety: a back end's methods may be called from several threads at once (bulk deletes,
 * parallel manifest reads); every back end here is safe for that.
 */
#ifndef ICEMAINT_FILEIO_H
#define ICEMAINT_FILEIO_H

#include "common.h"

ICM_BEGIN_DECL

typedef struct icm_fileio icm_fileio;

/**
 * One listed or stat'ed object. `location` is borrowed for the duration of the callback.
 *
 * Size-prefixed (docs/API.md rule 3, common.h): a caller that passes one to be filled
 * (icm_fileio_stat, icm_fileio_checksum_of) initialises it with ICM_FILE_INFO_INIT, which sets
 * struct_size to sizeof(icm_file_info) as the caller was compiled. Those calls return
 * ICM_EINVALID, writing nothing, for a struct_size below ICM_FILE_INFO_SIZE_MIN (0 included)
 * or above this library's sizeof (a caller built against a newer header), and otherwise write
 * only the fields wholly within struct_size bytes. A listing callback gets one of the
 * library's size (struct_size set): read a field added later only when ICM_STRUCT_HAS(info,
 * icm_file_info, field).
 */
typedef struct icm_file_info {
    size_t struct_size;    /**< sizeof(icm_file_info) of the caller (ICM_FILE_INFO_INIT) */
    const char *location;  /**< URI in the same form as the listed prefix */
    int64_t size_bytes;    /**< object size; -1 when unknown (only from a listing with
                                ICM_LIST_STAT_OPTIONAL) */
    int64_t mtime_ms;      /**< last modification, ms since epoch UTC; -1 when unknown */
} icm_file_info;

/** An icm_file_info ready to be filled: struct_size set, size and mtime unknown. */
#define ICM_FILE_INFO_INIT {sizeof(icm_file_info), NULL, -1, -1}
/** The smallest struct_size accepted: room for the first field, `location`. */
#define ICM_FILE_INFO_SIZE_MIN (offsetof(icm_file_info, location) + sizeof(const char *))

/**
 * Listing flags for icm_fileio_list_flags() (a bit mask; 0 = none).
 *
 * ICM_LIST_STAT_OPTIONAL: the caller does not need size and mtime of every listed object. A
 * back end for which they cost extra work per object (the local one: one stat() per file) may
 * then report an object with size_bytes = -1 and mtime_ms = -1 ("unknown"); a back end that
 * gets them with the listing anyway (object stores, in-memory) still reports them. Callers that
 * need them for some objects call icm_fileio_stat() on those. What is listed is the same with
 * or without the flag.
 */
#define ICM_LIST_STAT_OPTIONAL 1u
/** Every flag this version knows; other bits are ICM_EINVALID. */
#define ICM_LIST_FLAGS_ALL ICM_LIST_STAT_OPTIONAL

/**
 * Options of icm_fileio_list_opts(). Initialise with ICM_FILEIO_LIST_OPTIONS_INIT or
 * icm_fileio_list_options_init(), then set what you need.
 *
 * A range cuts the listing to the objects whose location L (as the listing reports it: in the
 * form of the listed prefix) has start_after < L < end_before in byte order (strcmp), both
 * bounds strict as S3's StartAfter. That splits a listing into shards: at a cut c, one shard
 * ends before c and the next starts after c; an object located exactly at c falls in neither,
 * so either choose cuts that name no object (a folder location ending in `/`: listings report
 * objects, never folders) or end the lower shard before c followed by the byte 0x01 (the next
 * string after c in byte order: it then holds c).
 */
typedef struct icm_fileio_list_options {
    unsigned version;        /**< ICM_FILEIO_LIST_OPTIONS_VERSION */
    unsigned flags;          /**< ICM_LIST_* bits (ICM_LIST_STAT_OPTIONAL); 0 = none */
    const char *start_after; /**< NULL, or only objects whose location sorts strictly after
                                  this full location (byte order); borrowed for the call */
    const char *end_before;  /**< NULL = no end, or only objects whose location sorts strictly
                                  before this one; borrowed for the call */
} icm_fileio_list_options;

#define ICM_FILEIO_LIST_OPTIONS_VERSION 1
#define ICM_FILEIO_LIST_OPTIONS_INIT {ICM_FILEIO_LIST_OPTIONS_VERSION, 0u, NULL, NULL}

/** Listing callback: return 0 to go on; any non-zero value stops the listing and is returned
 *  by icm_fileio_list() / icm_fileio_list_flags() (use ICM_EUSER or a negative icm code). */
typedef int (*icm_list_cb)(const icm_file_info *info, void *payload);

/* ---- wrappers: the single choke point for all storage calls ---- */

/*
 * Every wrapper below checks its arguments (NULL handle or output, empty location, negative
 * offset: ICM_EINVALID), clears its outputs first, and on failure leaves a last error that names
 * the location. A back end may also return ICM_EUNSUPPORTED for a location it cannot handle
 * (an `s3://` URI given to the local back end), ICM_EAUTH (permission denied) or ICM_EREADONLY.
 */

/** Read a whole object. @param[out] out new buffer (icm_free), NUL-terminated after out_len
 *  bytes. @return 0, ICM_ENOTFOUND, ICM_EIO (also: a directory), ICM_ENOMEM. */
ICM_EXTERN(int) icm_fileio_read(char **out, size_t *out_len, icm_fileio *io,
                                const char *location);
/** @return 0, ICM_ENOTFOUND, ICM_EINVALID (negative offset), ICM_EIO. */
ICM_EXTERN(int) icm_fileio_read_range(size_t *out_read, icm_fileio *io, const char *location,
                                      int64_t offset, void *buf, size_t len);
/**
 * Create a new object; never replaces one.
 * @return 0; ICM_EEXISTS (it exists; nothing written); ICM_EOUTCOME_UNKNOWN (an object-store
 *  back end sent the conditional write and lost the answer (timeout, connection reset): the
 *  object may exist now, or appear later, with our content or not; a caller that must know
 *  reads it back and compares, and never deletes it unless it proves the content ours);
 *  ICM_EIO (the local back end: also after publishing, when the directory sync failed: the file
 *  may then exist), ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_fileio_create_new(icm_fileio *io, const char *location, const void *data,
                                      size_t len);
/**
 * Whether `location` now holds exactly the `len` bytes at `data`: how a caller settles a
 * create-new that ended in ICM_EOUTCOME_UNKNOWN. Content no other writer could have written (a
 * fresh UUID or token in it) proves the object ours; anything else proves nothing (absent now,
 * it may still land).
 * @param[out] out_same true when the object is there with these bytes; false when it is
 *  missing or differs.
 * @return 0; ICM_EIO, ICM_EAUTH, ICM_ENOMEM (it could not be read: *out_same false),
 *  ICM_EINVALID (NULL arguments).
 */
ICM_EXTERN(int) icm_fileio_holds(bool *out_same, icm_fileio *io, const char *location,
                                 const void *data, size_t len);
/** @return 0, ICM_EIO, ICM_ENOMEM. */
ICM_EXTERN(int) icm_fileio_write_replace(icm_fileio *io, const char *location,
                                         const void *data, size_t len);
/** Delete; a missing object is success. @return 0, ICM_EIO (also: a directory). */
ICM_EXTERN(int) icm_fileio_delete(icm_fileio *io, const char *location);
/**
 * icm_fileio_delete() that also tells whether the object was there: *existed is false when the
 * back end found it already missing (still success). A back end reports that through
 * icm_fileio_note_missing() (local and in-memory do; wrappers that pass the delete on through
 * icm_fileio_delete() pass it on unchanged); one that cannot tell leaves *existed true. Same
 * single operation as icm_fileio_delete() (no extra stat). Thread-safe: the note is per thread.
 * @return as icm_fileio_delete(); ICM_EINVALID for a NULL `existed`.
 */
ICM_EXTERN(int) icm_fileio_delete_existing(bool *existed, icm_fileio *io,
                                           const char *location);
/** What happened to one object of icm_fileio_delete_batch(). */
typedef enum icm_fileio_delete_status {
    ICM_FILEIO_DELETED = 0,      /**< it existed and was deleted */
    ICM_FILEIO_ALREADY_GONE = 1, /**< it did not exist: success, not an error */
    ICM_FILEIO_DELETE_FAILED = 2 /**< not deleted: `code`, `retryable` and `message` say why */
} icm_fileio_delete_status;

/**
 * The outcome of deleting one object. A back end that cannot tell whether an object was there
 * reports ICM_FILEIO_DELETED for it.
 *
 * Size-prefixed (docs/API.md rule 3, common.h): the caller allocates the array and sets every
 * element's struct_size to sizeof(icm_fileio_delete_result) as it was compiled
 * (ICM_FILEIO_DELETE_RESULT_INIT for one, ICM_FILEIO_DELETE_RESULTS_INIT(results, n) for an
 * array); the library steps through the array by that size and writes only the fields wholly
 * within it.
 */
typedef struct icm_fileio_delete_result {
    size_t struct_size;  /**< sizeof(icm_fileio_delete_result) of the caller; the same in every
                              element of an array */
    icm_fileio_delete_status status;
    int code;          /**< FAILED: negative icm code; else 0 */
    bool retryable;    /**< FAILED and the back end says the same delete may succeed later
                            (throttled, HTTP 5xx, timeout, network); false for errors that a
                            retry cannot fix (EACCES, a directory, an unsupported location) */
    char message[256]; /**< FAILED: one line naming the location and why (cut to fit); else "" */
} icm_fileio_delete_result;

/** One icm_fileio_delete_result ready to be filled (struct_size set). */
#define ICM_FILEIO_DELETE_RESULT_INIT \
    {sizeof(icm_fileio_delete_result), ICM_FILEIO_DELETE_FAILED, 0, false, {0}}
/** Set struct_size of each of the `n` results at `results` (an icm_fileio_delete_result *) to
 *  the caller's sizeof(icm_fileio_delete_result); a statement. */
#define ICM_FILEIO_DELETE_RESULTS_INIT(results, n)                                          \
    do {                                                                                    \
        for (size_t icm_i_ = 0; icm_i_ < (size_t)(n); icm_i_++)                           \
            (results)[icm_i_].struct_size = sizeof(icm_fileio_delete_result);               \
    } while (0)
/** The smallest struct_size accepted: room for the first field, `status`. */
#define ICM_FILEIO_DELETE_RESULT_SIZE_MIN \
    (offsetof(icm_fileio_delete_result, status) + sizeof(icm_fileio_delete_status))

/** Keys per back-end call of icm_fileio_delete_batch (S3 DeleteObjects' limit); the wrapper
 *  splits longer batches into calls of at most this many. */
#define ICM_FILEIO_DELETE_BATCH_MAX 1000

/**
 * Delete `n` objects, each with its own outcome in `results[i]` (for `locations[i]`). A back
 * end with a batch call (an object store's multi-object delete) sends them in requests of up to
 * ICM_FILEIO_DELETE_BATCH_MAX; one without it deletes them one by one as icm_fileio_delete()
 * does (telling ALREADY_GONE as icm_fileio_delete_existing() does). Items are independent: the
 * order they are deleted in is unspecified, and one failing does not stop the others. An item
 * whose location is NULL or empty is FAILED with ICM_EINVALID and goes to no back end. The same
 * location twice is deleted once: the later item may be ALREADY_GONE. Thread-safe as the back
 * end. The fault wrapper counts each item as one ICM_IO_DELETE operation.
 * @param results n results, each with struct_size set (ICM_FILEIO_DELETE_RESULTS_INIT);
 *  written for every item, whatever the return value, except when their struct_size is refused
 * @return 0 when every item got its own result (look at `results`: failures are per item);
 *         ICM_EINVALID (NULL io, or NULL locations or results with n > 0) or ICM_ENOMEM when
 *         the batch could not run at all: then nothing was deleted and every result (when
 *         `results` is not NULL) is FAILED with that code; ICM_EINVALID with nothing deleted
 *         and nothing written when results[0].struct_size is below
 *         ICM_FILEIO_DELETE_RESULT_SIZE_MIN or above this library's sizeof, or another
 *         element's struct_size differs from it.
 */
ICM_EXTERN(int) icm_fileio_delete_batch(icm_fileio_delete_result *results, icm_fileio *io,
                                        const char *const *locations, size_t n);
/** @param[out] out size and mtime; out->location is `location` (borrowed). out->struct_size
 *  set by the caller (ICM_FILE_INFO_INIT).
 *  @return 0, ICM_ENOTFOUND, ICM_EIO (also: a directory), ICM_EINVALID (NULL out, or a
 *  struct_size refused as icm_file_info says: nothing written). */
ICM_EXTERN(int) icm_fileio_stat(icm_file_info *out, icm_fileio *io, const char *location);
/** List with no flags: every object's size and mtime are known (as the back end reports
 *  them; mtime_ms may still be -1 where the store has none). Same as
 *  icm_fileio_list_flags(io, prefix, 0, cb, payload).
 *  @return 0, the callback's non-zero value, ICM_EIO. */
ICM_EXTERN(int) icm_fileio_list(icm_fileio *io, const char *prefix, icm_list_cb cb,
                                void *payload);
/**
 * Stream every object strictly below `prefix` (recursive, files only, at a path-segment
 * boundary; a missing prefix lists nothing; order unspecified) to `cb`.
 * @param flags 0 or ICM_LIST_STAT_OPTIONAL: then an object may come with size_bytes and
 *  mtime_ms both -1 (unknown; the local back end does so for every regular file, and reports
 *  symlinks to files with the target's size and mtime as without the flag); icm_fileio_stat()
 *  gives them (ICM_ENOTFOUND if the object went away since it was listed).
 * @return 0, the callback's non-zero value (passed up untouched), ICM_EIO,
 *  ICM_EUNSUPPORTED (a prefix the back end cannot list), ICM_EAUTH, ICM_EINVALID (NULL
 *  handle or callback, empty prefix, unknown flag bits), ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_fileio_list_flags(icm_fileio *io, const char *prefix, unsigned flags,
                                      icm_list_cb cb, void *payload);
/** Set `opts` to the defaults of `version` (no flags, no range).
 *  @return 0, ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_fileio_list_options_init(icm_fileio_list_options *opts, unsigned version);

/**
 * icm_fileio_list_flags() with options: flags and a range of locations (start_after,
 * end_before). The listing streams (a back end pages an object store's listing itself and never
 * holds it whole); only objects inside the range reach `cb`. Order is unspecified, except for
 * back ends that say otherwise (the in-memory one lists in byte order of locations; object
 * stores do too, by key): a back end that can start a listing at a key (S3 start-after) does
 * so, and stops at end_before when it lists in order; for any other the wrapper drops what lies
 * outside the range, so the objects reported are always exactly those in range.
 * @param opts NULL for the defaults (ICM_FILEIO_LIST_OPTIONS_INIT).
 * @return as icm_fileio_list_flags(); also ICM_EINVALID for an unknown opts->version.
 */
ICM_EXTERN(int) icm_fileio_list_opts(icm_fileio *io, const char *prefix,
                                     const icm_fileio_list_options *opts, icm_list_cb cb,
                                     void *payload);
/** Free a back end (and, for wrappers, what they took). NULL is ok. */
ICM_EXTERN(void) icm_fileio_free(icm_fileio *io);

/* ---- back ends ---- */

/** Local filesystem. Accepts `/p`, `file:/p`, `file:///p`, `file://localhost/p`; a relative
 *  path is relative to the process's working directory; other URIs get ICM_EUNSUPPORTED.
 *  Listing yields locations in the form of the prefix given (a `file:` prefix lists `file:`
 *  URIs); it follows a symlinked prefix but no symlinked directory below it, reports a symlink
 *  to a file as that file and skips dangling links. With ICM_LIST_STAT_OPTIONAL it reports
 *  regular files with size and mtime -1 without a stat() each (directory entry types from
 *  readdir), while symlinks and entries of unknown type are stat'ed as without it. Writes go
 *  to a temp file (`.<name>.icm-tmp-...`) in the target directory, fsync'ed, then published
 *  (create-new never replaces: renameat2 RENAME_NOREPLACE or link+unlink) and the directory
 *  fsync'ed; on an error after publishing (directory sync) the file may exist. Deletes are not
 *  fsync'ed, and delete exactly the object named: a Hadoop checksum side file `dir/.name.crc`
 *  (which Hadoop's local file system, and so Java Iceberg, writes beside `dir/name`) is
 *  reported by icm_fileio_checksum_of() for the maintenance planners to plan as a file of its
 *  own (kind "checksum"), never deleted on the side.
 *  @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_fileio_local_new(icm_fileio **out);

/** One `--path-map FROM=TO` rule. */
typedef struct icm_path_map {
    const char *from;  /**< location prefix as the metadata names it */
    const char *to;    /**< where those files really are */
} icm_path_map;

/**
 * Path mapping: every location starting with a rule's `from` (at a path-segment boundary;
 * longest `from` wins) is read, written, listed and deleted at `to` + rest instead. Listing
 * results are mapped back, so callers only ever see the original names; listing a prefix
 * above a rule's `from` also lists the files at its `to`, under their original names (the
 * inner back end must be able to list that prefix itself: an `s3://` prefix above a rule fails
 * with ICM_EUNSUPPORTED over the local back end). File
 * contents are never rewritten. Prefixes match as icm_location_local_path forms for local
 * paths and as exact bytes for URIs (no percent-decoding); a name whose part below `from`
 * has a `.` or `..` segment is not mapped. Takes `inner` (freed at once on failure); copies the
 * rules. @return 0, ICM_EINVALID (empty or unusable `from`/`to` such as `s3://` without a
 * bucket, or two rules with the same `from`), ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_fileio_pathmap_new(icm_fileio **out, icm_fileio *inner_take,
                                       const icm_path_map *rules, size_t n_rules);

/**
 * The S3 back end: locations `s3://bucket/key` (also `s3a://`, `s3n://`, the same bucket and
 * key), on AWS S3 or an S3-compatible store, over HTTP(S) with SigV4.
 *
 * Configuration from `props` (PyIceberg's names, and Java S3FileIO's where they differ; read
 * at construction, not kept): `s3.endpoint`, `s3.region` / `client.region`,
 * `s3.path-style-access`, `s3.force-virtual-addressing`, `s3.access-key-id`,
 * `s3.secret-access-key`, `s3.session-token`, `s3.profile-name`, `s3.anonymous`,
 * `s3.connect-timeout` and `s3.request-timeout` (seconds), `s3.retry.max-attempts`,
 * `s3.retry.total-timeout-ms`, `s3.max-in-flight`, `s3.delete.batch-size`,
 * `s3.ssl.ca-bundle`; then the AWS environment and shared config files, and credentials from
 * the AWS SDKs' provider chain (environment, profile, web identity, container, IMDSv2),
 * refreshed before they expire.
 *
 * Behaviour (the contract of icemaint/sys/fileio.h, on S3):
 *  - keys are exact bytes: `a/../b`, `./`, `//`, `%2F`, spaces, `+` and non-ASCII name the
 *    object of exactly that key, never another one;
 *  - read: GET; read_range: a ranged GET into the caller's buffer (a range past the end reads
 *    0 bytes); stat: HEAD (Content-Length, Last-Modified);
 *  - create-new: PUT with `If-None-Match: *` (S3 since August 2024, and most compatible stores;
 *    a store that ignores the header overwrites, which this back end cannot see). 412 is
 *    ICM_EEXISTS once the object there is shown not to be ours (its ETag or its bytes). After
 *    an attempt that may have written it (answer lost, 5xx, SlowDown) the PUT is retried, and
 *    a 412 then with our bytes there is success; when the attempts run out the object is read
 *    back: ours is success, another is ICM_EEXISTS, missing or unreadable is
 *    ICM_EOUTCOME_UNKNOWN;
 *  - write-replace: PUT; delete: DELETE (S3 cannot tell whether the key existed, so a delete
 *    reports it as existing unless the store answers 404);
 *  - listing: ListObjectsV2 in key order, paginated, `encoding-type=url`; size and mtime come
 *    with every object; a range (start_after, end_before) is sent as start-after and ends the
 *    listing early; `dir/` folder-marker objects are not listed;
 *  - delete batch: DeleteObjects of up to `s3.delete.batch-size` keys (Quiet, Content-MD5);
 *    a key named in a per-key <Error> is that item's failure (retryable for InternalError,
 *    SlowDown, ServiceUnavailable), every other key is DELETED;
 *  - retries: idempotent requests are retried with full-jitter exponential backoff (100 ms
 *    base, 20 s cap) on HTTP 500/502/503/504, throttling (SlowDown: the requests in flight are
 *    also halved, then grow back one per run of successes), RequestTimeout, dropped
 *    connections and 200 answers with broken XML, within the configured attempts and total
 *    time; ExpiredToken fetches new credentials, RequestTimeTooSkewed corrects the clock
 *    from the server's Date, and a bucket in another region than the configured one
 *    (x-amz-bucket-region on a 301 or 400) is signed for its region (on AWS, sent to its
 *    endpoint) from then on; then the request goes again (a redirect is never followed).
 * Errors carry the HTTP status (icm_error.http_status), S3's <Code> (remote_code) and the
 * request id (in the message): 403 and the credential codes are ICM_EAUTH; 404, NoSuchKey and
 * NoSuchBucket (naming the bucket) ICM_ENOTFOUND; no answer ICM_ENET or ICM_ETIMEOUT; other
 * answers ICM_EIO. Thread-safe: any number of threads may call it at once.
 * @return 0; ICM_EINVALID (NULL output, NULL props with n_props > 0, a bad property or
 *         configuration file: the message names it); ICM_EUNSUPPORTED (credentials asked for
 *         in a way this build does not support: a role to assume, a remote signer,
 *         credential_process or SSO in the profile; the message names it); ICM_ENOMEM.
 *         Credentials are fetched on the first request, whose error (ICM_EAUTH: none found;
 *         ICM_ENET, ICM_ETIMEOUT: their endpoint did not answer) they then are.
 */
ICM_EXTERN(int) icm_fileio_s3_new(icm_fileio **out, const icm_property *props, size_t n_props);

/**
 * Whether `key` starts with "s3." but is no property name an S3 client reads: neither one this
 * back end reads (above) nor one Java's S3FileIO or PyIceberg defines (`s3.sse.type`,
 * `s3.multipart.part-size-bytes`, `s3.signer.uri`, `s3.write.tags.<tag>`, ...), which a
 * catalog entry shared with them may hold. Such a key is ignored by every client, so it is
 * most likely a misspelling (`s3.endpont`) whose setting silently does not apply. On true,
 * *closest (when not NULL) is the known name a few typing slips away (a static string), or
 * NULL when none is near. False for NULL and for keys without the prefix.
 */
ICM_EXTERN(bool) icm_fileio_s3_property_unknown(const char **closest, const char *key);

/**
 * A FileIO that picks the back end by each location's URI scheme and builds it the first time a
 * location needs it, from `props` (copied):
 *  - no scheme, `file:`: the local back end (icm_fileio_local_new);
 *  - `s3`, `s3a`, `s3n`: the S3 back end (icm_fileio_s3_new), one shared by the three schemes,
 *    unless a back end is registered for them (icemaint/sys/fileio.h:
 *    icm_fileio_register_scheme);
 *  - `gs`: GCS; `abfs`, `abfss`: ADLS; `wasb`, `wasbs`: Azure Blob: the back end registered
 *    for the scheme; this build has none of its own, so a location of these schemes fails with
 *    ICM_EUNSUPPORTED "no GCS back end in this build" (and so on);
 *  - `mem`: the in-memory store, in builds with the testing back ends (one store per
 *    resolving FileIO);
 *  - any other scheme: its registered back end, else ICM_EUNSUPPORTED.
 * A registered back end overrides a built-in one. Schemes compare case-insensitively. One back
 * end is built per constructor and shared by the schemes registered with it (s3, s3a, s3n), and
 * lives until the resolving FileIO is freed. Properties use PyIceberg's names, read by the back
 * end that needs them: `s3.endpoint`, `s3.region`, `s3.access-key-id`, `s3.secret-access-key`,
 * `s3.session-token`, `s3.path-style-access`, ...; `gcs.project-id`, `gcs.oauth2.token`, ...;
 * `adls.account-name`, `adls.account-key`, `adls.sas-token`, ... A later property with the same
 * key replaces an earlier one. A call fails with the back end's construction error (naming the
 * location) when it cannot be built; a delete batch groups its items by back end.
 * @return 0, ICM_EINVALID (NULL output, NULL props with n_props > 0, an empty key or NULL
 *         value), ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_fileio_resolving_new(icm_fileio **out, const icm_property *props,
                                         size_t n_props);

/**
 * A resolving FileIO for one table: the properties of `base` (a resolving FileIO) overlaid by
 * `table_props` (the table's FileIO configuration and credentials as a REST catalog hands them
 * out per table: a table's value wins). Its back ends are its own, built from the merged
 * properties, so two tables with different credentials never share a client. `base` is only
 * read (it may be freed before the result).
 * @return 0, ICM_EINVALID (NULL output, `base` not a resolving FileIO, bad properties),
 *         ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_fileio_for_table(icm_fileio **out, const icm_fileio *base,
                                     const icm_property *table_props, size_t n_table_props);

/**
 * Map `location` through the rules of a path-map FileIO, as it would for I/O.
 * @param[out] out new string (icm_free). @return 0, ICM_ENOMEM, ICM_EINVALID (not a path-map).
 */
ICM_EXTERN(int) icm_fileio_pathmap_apply(char **out, const icm_fileio *pathmap,
                                         const char *location);

/**
 * The reverse of icm_fileio_pathmap_apply(): the original name of a location that lies at or
 * below a rule's `to` (longest match at a segment boundary) is `from` + the rest; any other
 * location is returned unchanged. Callers use it when a user names a table or a file by where
 * it really is, so that everything the table records and compares (metadata-log entries, data
 * file paths, the keep set of the orphan sweep) stays in the names the metadata uses.
 * @param[out] out new string (icm_free). @return 0, ICM_ENOMEM, ICM_EINVALID (not a path-map).
 */
ICM_EXTERN(int) icm_fileio_pathmap_unapply(char **out, const icm_fileio *pathmap,
                                           const char *location);

/**
 * Where `location` really is: every symbolic link on its way resolved. The local back end
 * gives realpath() (a plain absolute path); a path map resolves the mapped target and names
 * it back through its rules (icm_fileio_pathmap_unapply); back ends without links, and
 * version-1 back ends, return the location unchanged. One operation of kind ICM_IO_STAT for
 * the fault wrapper. The orphan sweep uses it to refuse a listing location that a link leads
 * out of the table.
 * @param[out] out new string (icm_free); NULL on error.
 * @return 0, ICM_ENOTFOUND (missing), ICM_EIO, ICM_ENOMEM, ICM_EINVALID (NULL arguments).
 */
ICM_EXTERN(int) icm_fileio_resolve(char **out, icm_fileio *io, const char *location);

/**
 * The checksum companion of `location`: a file the storage keeps beside it and that goes with
 * it (Java's Hadoop file systems delete both). The local back end (and a path map or fault
 * wrapper over it) reports Hadoop's `dir/.name.crc` for `dir/name` when it is a regular file
 * (not a link) starting with Hadoop's `crc\0` header; `name` itself must not start with `.`.
 * Other back ends, and back ends before version 3, have none. One operation of kind
 * ICM_IO_STAT for the fault wrapper. Expiry and the orphan sweep call it for each file they
 * plan to delete, and plan the companion as its own entry (kind "checksum").
 * @param[out] out  new string (icm_free) naming the companion in the form of `location`; NULL
 *                  when there is none
 * @param[out] info its size and mtime (info->location is *out); may be NULL; else
 *                  info->struct_size set by the caller (ICM_FILE_INFO_INIT)
 * @return 0 (also when there is none, or `location` itself is gone), ICM_ENOMEM, ICM_EINVALID
 *         (NULL arguments; a struct_size of `info` refused as icm_file_info says: nothing
 *         written).
 * Source: Hadoop ChecksumFileSystem.getChecksumFile / delete.
 */
ICM_EXTERN(int) icm_fileio_checksum_of(char **out, icm_file_info *info, icm_fileio *io,
                                       const char *location);

/* ---- locations ---- */

/**
 * If `location` names a local file (`/p`, `file:/p`, `file:///p`, `file://localhost/p`,
 * `file:rel`, or a relative path without a scheme), write its normalised filesystem path to
 * *out (repeated slashes collapsed, `//p` is `/p`; trailing slash dropped; no dot-segment
 * resolution, no percent-decoding) and return true. Object-store URIs, `file://host/p` with a
 * host other than localhost (e.g. the malformed `file://data/x`) and "" return false.
 * @param[out] out new string (icm_free); NULL on false or allocation failure (then ICM_ENOMEM
 *  is the last error).
 */
ICM_EXTERN(bool) icm_location_local_path(char **out, const char *location);

/**
 * The absolute, canonical spelling of a location a user typed (a TABLE argument, a catalog
 * warehouse), made once where a table or catalog is opened so that nothing icemaint reads,
 * writes or records depends on the working directory:
 *  - a local location (`rel`, `./rel`, `file:rel`, `/p`, `file:/p`, `file:///p`,
 *    `file://localhost/p`) becomes a plain absolute path: a relative one is joined below the
 *    working directory, repeated and trailing slashes go, `.` segments go, and the part up to
 *    the last `..` segment is resolved as the kernel resolves it (realpath(): `a/../t` with
 *    `a` a symbolic link is not `t`); symbolic links elsewhere are kept as spelled;
 *  - any other URI (`s3://b/k`) is copied unchanged (its bytes are its identity).
 * @param[out] out new string (icm_free); NULL on error.
 * @return 0; ICM_EINVALID (NULL or empty location); ICM_ENOTFOUND (the folder before a `..`
 *         is missing; the message names the location); ICM_EIO (no working directory);
 *         ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_location_canonical(char **out, const char *location);

/**
 * The identity of a location: a byte string that is the same for two locations exactly when
 * they name the same object (the rule every keep set, the orphan sweep, the
 * transactions and the in-memory FileIO use). Pure spelling, no I/O:
 *  - local (`/p`, `file:/p`, `file:///p`, `file://localhost/p`, relative paths): the path with
 *    repeated and trailing slashes dropped and `.`/`..` resolved lexically (as the kernel does
 *    where there are no symbolic links; icm_fileio_resolve follows links); a relative path
 *    stays relative and never equals an absolute one;
 *  - object stores: the scheme in lower case, `s3a` and `s3n` written `s3` (Hadoop's S3A/S3N
 *    connectors and S3 clients address the same bucket and key), then the authority and key as
 *    exact bytes (no slash collapsing, no dot-segment resolution, no percent-decoding: `a%20b`
 *    and `a b` are two keys; `t//x` and `t/x` are two keys).
 * Source: docs/semantics.md#sweep-location-rules; RFC 3986 3.1 (schemes are
 * case-insensitive).
 * @param[out] out new string (icm_free); NULL on error.
 * @return 0; ICM_EINVALID (NULL or empty location); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_location_identity(char **out, const char *location);

ICM_END_DECL

#endif /* ICEMAINT_FILEIO_H */
