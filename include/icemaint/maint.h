/*
 * icemaint/maint.h: what the two maintenance commands that delete (snapshot expiry, expire.h,
 * and the orphan sweep, orphans.h) share: how their delete phase runs, the outcome of each file
 * it acts on (reported as it happens, so a caller can journal it), and the table lease that
 * keeps two such runs from overlapping.
 *
 * The delete phase (commits may land while a run deletes, so the table is looked at again
 * before each batch; docs/semantics.md#expiry-file-keep-set, #sweep-keep-set):
 *   deletes go in batches of at most `delete_batch_size` files (default
 *   ICM_DELETE_BATCH_FILES) and at most ICM_DELETE_BATCH_MS of deleting. Before the first
 *   batch and between batches the table is reloaded (icm_table_refresh); when its metadata
 *   location changed, everything the new metadata references (every snapshot's manifest list,
 *   the manifests and live files of lists not read before, statistics files, metadata files)
 *   joins the keep set and every candidate it names is dropped, not deleted. A reload that
 *   fails, or a newly referenced manifest list or manifest that cannot be read, stops the
 *   deletes: nothing is guessed. The window that remains: a writer that checked a file exists
 *   before a batch's delete of it and commits after the reload that preceded the batch (README
 *   "What the maintenance commands touch").
 *   Order: data and delete files, then manifests, then manifest lists, then statistics files
 *   (for the sweep: metadata and other files), checksum companions last; a batch holds one of
 *   these groups only, so a file is deleted only once every file of the run that it names is
 *   settled, and a run stopped at any point leaves what it did not delete reachable from the
 *   manifest lists and metadata files it left (the next orphan sweep finds all of it).
 *   Within a batch up to max_concurrent_deletes threads delete; a local file is deleted alone,
 *   right after its checks; object-store keys go up to 1000 per request (icm_fileio's
 *   delete_batch), each request right after the checks of its keys.
 *   Retries: a failed delete the storage marks retryable (an object store's SlowDown, 500,
 *   a lost connection) is tried again after a wait of ICM_DELETE_RETRY_MIN_WAIT_MS, doubled for
 *   each further retry up to ICM_DELETE_RETRY_MAX_WAIT_MS, plus up to 10% jitter, at most
 *   ICM_DELETE_RETRY_ATTEMPTS attempts in all and ICM_DELETE_RETRY_TOTAL_WAIT_MS of waiting per
 *   request, and only after the batch's reload and the file's checks ran again (the sweep's
 *   re-stat too: during the wait a writer may have put a new file at the name); any other
 *   failure is final at once. The storage layer never sends such a delete again by itself
 *   after a wait (data-loss class "delete resent without its check"). A file neither deletes
 *   is left: for the sweep it is still an orphan, and the next sweep finds it.
 *
 * Links and changed files (README "What the maintenance commands touch", symbolic links):
 *   right before its delete, after its batch's reload, a local file must lie where its name
 *   says: the real path of its folder is the real path of its table root (location,
 *   write.data.path, write.metadata.path; the root may itself be reached through a link)
 *   followed by the folder's segments below that root, so no symbolic link lies between root
 *   and file. The sweep also stats each orphan again: a file whose size or mtime changed since
 *   the listing (for a file list: one no longer older than the cutoff) is someone's new file.
 *   Either is kept, not an error, with error_code ICM_EREFUSED and a message ending "kept"
 *   ("reached through a symbolic link; kept", "changed since it was listed ...; kept"): the
 *   sweep's entry is ICM_ORPHAN_KEPT (not sent to icm_delete_cb), expiry's file FAILED with an
 *   ICM_EXPIRE_PROBLEM_THROUGH_LINK problem. A file whose folder is gone is ALREADY_GONE. Object-store locations have no links and are not checked.
 *
 * Outcomes, in words: docs/semantics.md#already-gone.
 * Outcomes: a file is DELETED, ALREADY_GONE (it did not exist when its turn came: counted
 * apart, never as deleted, and not an error) or FAILED (the message says why; the run goes
 * on). Each file acted on is reported once through icm_delete_cb, on the calling thread, in
 * batch order, after its batch ran; the last file of a batch says so (batch_end), so a journal
 * can be flushed there, before the next batch starts.
 *
 * The lease (two runs must not overlap on one table): a run that deletes takes a lease on the
 * table, a small JSON file created with create-new (fails if it exists; on object stores a
 * conditional write) at ICM_LEASE_FILE_NAME in the folder of the table's current metadata file,
 * holding owner, host, pid, start_ms, expires_ms, command and a random token. A second run finds it
 * and is refused (ICM_EREFUSED naming the holder) until the holder releases it or the lease is
 * stale: expired (its holder died without releasing it), or held by a pid on this host (same
 * hostname) that no longer exists (kill(pid, 0) fails with ESRCH: a crashed run, taken over at
 * once). A stale lease is taken over through a create-new marker named after the stale lease's
 * token, so of two runs taking over the same stale lease only one proceeds.
 * The name is hidden (a leading '.'), so the orphan sweep never lists it as a candidate, and no
 * snapshot references it, so expiry never plans it.
 */
#ifndef ICEMAINT_MAINT_H
#define ICEMAINT_MAINT_H

#include "catalog.h"
#include "common.h"
#include "fileio.h"

ICM_BEGIN_DECL

/* ========================================================================================== */
/* The delete phase                                                                           */
/* ========================================================================================== */

/** Default upper bound of files per delete batch (the table is reloaded between batches). */
#define ICM_DELETE_BATCH_FILES 1000
/** A batch also ends once it has been deleting this long (ms), so a slow store still reloads
 *  the table about this often. */
#define ICM_DELETE_BATCH_MS 1000

/** Attempts, in all, of a delete the storage marks retryable (both commands; an object
 *  store's throttling is weathered here, since its back end sends a delete only once). */
#define ICM_DELETE_RETRY_ATTEMPTS 8
/** Wait (ms) before the first retry; each further one waits twice as long, at most
 *  ICM_DELETE_RETRY_MAX_WAIT_MS, plus up to 10% jitter. */
#define ICM_DELETE_RETRY_MIN_WAIT_MS 100
#define ICM_DELETE_RETRY_MAX_WAIT_MS 5000
/** All waits before the retries of one delete request together stay within this (ms). */
#define ICM_DELETE_RETRY_TOTAL_WAIT_MS 60000

/** What happened to one file the delete phase acted on. */
typedef enum icm_delete_outcome {
    ICM_DELETE_DELETED = 0,      /**< it existed and was deleted */
    ICM_DELETE_ALREADY_GONE = 1, /**< it did not exist any more: nothing to do, not an error */
    ICM_DELETE_FAILED = 2        /**< the delete failed: error_code, error_message */
} icm_delete_outcome;

/** "deleted", "already_gone", "failed" (static). */
ICM_EXTERN(const char *) icm_delete_outcome_name(icm_delete_outcome outcome);

/** One file acted on. Strings are borrowed for the duration of the callback. */
typedef struct icm_delete_event {
    const char *path;           /**< the location as the metadata or the listing names it */
    const char *kind;           /**< the CLI contract's kind name ("data", "manifest", ...) */
    int64_t size_bytes;         /**< -1 when unknown */
    icm_delete_outcome outcome;
    int error_code;             /**< FAILED: the icm error code; else 0 */
    const char *error_message;  /**< FAILED: one line (may be NULL); else NULL */
    bool batch_end;             /**< the last file of its batch */
} icm_delete_event;

/** Called once per file acted on, on the calling thread. Return 0 to go on; any other value
 *  stops the delete phase after this batch (the rest is not deleted) and the operation returns
 *  ICM_EUSER (a journal that cannot be written must not let deletes go unrecorded). */
typedef int (*icm_delete_cb)(const icm_delete_event *event, void *payload);

/** Guard rails: upper bounds on what one run may delete, checked on the whole plan
 *  before anything is deleted (expiry: before its commit too). A plan over any bound is refused
 *  (ICM_EREFUSED, the message naming the bound and the plan's number); a plan exactly at a
 *  bound passes. Each bound is off when negative (ICM_DELETE_LIMITS_NONE). */
typedef struct icm_delete_limits {
    int64_t max_files;   /**< files planned for deletion; -1 = no bound */
    int64_t max_bytes;   /**< their sizes summed; -1 = no bound. The sweep and apply refuse
                              the bound when a candidate's size is unknown (a file list without
                              sizes); expiry's sizes come from manifests and stats, and one it
                              could not learn counts 0 */
    /** Planned files as a percentage of the files considered (the sweep: the files listed
     *  below its location; expiry: every file the table's snapshots reached before it);
     *  negative = no bound. */
    double max_percent;
} icm_delete_limits;
#define ICM_DELETE_LIMITS_NONE {-1, -1, -1.0}

/** Whether `limits` allow deleting `files` files of `bytes` bytes out of `considered` (the
 *  percentage's base; with a base of 0 any percentage passes). @return 0 when they do;
 *  ICM_EREFUSED with a one-line message at `where` naming the bound (as the CLI's
 *  --max-delete, --max-delete-bytes, --max-delete-percent) and the plan's number;
 *  ICM_EINVALID when `limits` is NULL. */
ICM_EXTERN(int) icm_delete_limits_check(const icm_delete_limits *limits, const char *where,
                                        size_t files, int64_t bytes, size_t considered);
/** `sum` plus `size_bytes` for a plan's byte count: an unknown (negative) size adds nothing,
 *  and the sum stops at INT64_MAX rather than wrap (a size read from a plan file may be any
 *  number). */
ICM_EXTERN(int64_t) icm_delete_limits_add_bytes(int64_t sum, int64_t size_bytes);

/* ========================================================================================== */
/* The table lease                                                                            */
/* ========================================================================================== */

/** The lease file's name, in `<table location>/metadata/` (a place no commit moves, unlike the
 *  folder of the current metadata file, which write.metadata.path moves); for a table whose
 *  metadata names its location relatively, in the folder of its current metadata file. */
#define ICM_LEASE_FILE_NAME ".icemaint-lease"
/** Default lifetime of a lease (ms): renewed by the delete phase once half of it has passed. */
#define ICM_LEASE_DEFAULT_TTL_MS INT64_C(600000)

typedef struct icm_lease icm_lease;

/** Options of icm_lease_acquire(). Initialise with ICM_LEASE_OPTIONS_INIT. */
typedef struct icm_lease_options {
    unsigned int version;
    /** What the run does ("remove-orphan-files"); recorded for a refused run's message. */
    const char *command;
    /** Lifetime (ms) from now; 0 = ICM_LEASE_DEFAULT_TTL_MS. */
    int64_t ttl_ms;
    /** "Now" (ms since epoch UTC); 0 = the current time. */
    int64_t now_ms;
} icm_lease_options;

#define ICM_LEASE_OPTIONS_VERSION 1
#define ICM_LEASE_OPTIONS_INIT {ICM_LEASE_OPTIONS_VERSION, NULL, 0, 0}

/** Set `opts` to the defaults of `version` (as ICM_LEASE_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_lease_options_init(icm_lease_options *opts, unsigned version);

/**
 * Take the lease of a table for a run that deletes.
 *
 * @param[out] out new lease (icm_lease_release, then icm_lease_free); NULL on failure
 * @param t    the table (its FileIO and current metadata location are used; the lease keeps a
 *             pointer to the FileIO, which must outlive it)
 * @param opts NULL = defaults
 * @return 0; ICM_EREFUSED (another run holds a lease that has not expired and whose holder is
 *         not known to be dead; the message names its owner, host, pid, start and expiry and
 *         the override; or the table is on an object store that ignores create-new, proven
 *         by a probe object created twice in the lease's folder, where two runs could both
 *         hold a lease); ICM_EINVALID (an unknown opts->version, or a lease file
 *         that is not a lease; the message names it); ICM_EREADONLY (a table opened from a
 *         metadata file); ICM_EOUTCOME_UNKNOWN (the store lost the answer to creating the
 *         lease file and it does not read back with this run's token: not held, the file left
 *         in place); the codes of icm_fileio_create_new and icm_fileio_read (ICM_EIO);
 *         ICM_ENOMEM.
 * Source: the rule that two runs that delete never overlap on one table (the lease paragraph
 * at the top of this header; docs/semantics.md#sweep-refusals).
 */
ICM_EXTERN(int) icm_lease_acquire(icm_lease **out, icm_table *t, const icm_lease_options *opts);

/** Extend the lease to now + its lifetime when more than half of it has passed (now_ms 0 = the
 *  current time). @return 0; ICM_EREFUSED (the lease file is not ours any more: it expired and
 *  another run took it over); the codes of icm_fileio_read / write_replace. */
ICM_EXTERN(int) icm_lease_renew(icm_lease *lease, int64_t now_ms);

/** Delete the lease file if it is still ours (idempotent). @return 0; the codes of
 *  icm_fileio_read and icm_fileio_delete. */
ICM_EXTERN(int) icm_lease_release(icm_lease *lease);

/** The lease file's location (borrowed from the lease). */
ICM_EXTERN(const char *) icm_lease_location(const icm_lease *lease);

/** Free the handle (does not release the lease file). NULL is fine. */
ICM_EXTERN(void) icm_lease_free(icm_lease *lease);

ICM_END_DECL

#endif /* ICEMAINT_MAINT_H */
