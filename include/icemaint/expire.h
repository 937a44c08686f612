/*
 * icemaint/expire.h: snapshot expiry — which snapshots go (the decision), and which files go
 * with them (commit, then delete).
 *
 * The decision follows Iceberg's snapshot retention rules (spec "Snapshot Retention Policy" and
 * Java's RemoveSnapshots), under three rules that always hold:
 *   1. the current snapshot is never expired;
 *   2. a snapshot that a retained branch or tag points at is never expired;
 *   3. no snapshot chosen by age alone is expired while that would leave fewer than retain_last
 *      snapshots in the table (explicitly named snapshot ids are expired regardless).
 * Within those rules: refs other than `main` age out by `max-ref-age-ms`; each retained branch keeps
 * its ancestors while fewer than its `min-snapshots-to-keep` are kept or they are younger than its
 * `max-snapshot-age-ms` cutoff (stopping at the first ancestor that fails both); a tag keeps only its
 * own snapshot; snapshots outside every retained branch's ancestry and not a tag head are kept only
 * when they are at or after the table-wide cutoff. Per-ref values override the options, which
 * override the table properties `history.expire.max-snapshot-age-ms` (default 5 days),
 * `history.expire.min-snapshots-to-keep` (default 1) and `history.expire.max-ref-age-ms` (default
 * forever).
 *
 * The properties are read as Java's RemoveSnapshots reads them (PropertyUtil: Long.parseLong for
 * the two ages, Integer.parseInt for min-snapshots-to-keep): an optional sign and ASCII digits,
 * nothing else, within int64 (ages) or int32 (the count). 0 is valid for each and means what it
 * means in Java (an age of 0 puts the cutoff at now; a count of 0 keeps no ancestor by count,
 * only refs' heads, the current snapshot and what the cutoff keeps). A value that Java cannot
 * parse (empty, not a number, out of range) is refused with ICM_EINVALID naming the property, as
 * Java throws; a negative value is refused the same way, where Java would take it (an age below
 * 0 puts the cutoff in the future and expires everything unprotected): it can only be a mistake,
 * and the mistake would delete. So are non-ASCII digits, which Java's Character.digit takes.
 * The per-ref fields are checked when the metadata is read (metadata.h: positive, int32 for
 * min-snapshots-to-keep, as Java's SnapshotRef builder checks).
 * Ages are measured without overflow: a ref whose age does not fit int64 is retained, as Java
 * (whose subtraction wraps to a negative age) retains it.
 *
 * Every retained snapshot comes with the reasons it is kept (icm_expire_kept), decided where the
 * decision is made, so a report can say why.
 *
 * The decision reads metadata only: it cannot touch storage.
 * In words: docs/semantics.md#expiry-ref-retention and #expiry-snapshot-retention.
 *
 * Execution (icm_expire_snapshots): commit the new metadata first, then delete the files that
 * only expired snapshots reached (reachability: the union over all retained snapshots is kept).
 * A commit that removes snapshots or refs also sets the table property
 * `icemaint.last-expire-ms` to the expiry's now (ICM_LAST_EXPIRE_PROPERTY, icemaint/health.h),
 * in that one commit: the health report's last expiry.
 * A dry run runs the same decision and planning code without any delete-capable handle.
 */
#ifndef ICEMAINT_EXPIRE_H
#define ICEMAINT_EXPIRE_H

#include "common.h"
#include "catalog.h"
#include "fileio.h"
#include "maint.h"
#include "metadata.h"

ICM_BEGIN_DECL

/** Default of `history.expire.max-snapshot-age-ms`: 5 days. */
#define ICM_DEFAULT_MAX_SNAPSHOT_AGE_MS INT64_C(432000000)
/** Default of `history.expire.min-snapshots-to-keep`. */
#define ICM_DEFAULT_MIN_SNAPSHOTS_TO_KEEP 1
/** Default of `history.expire.max-ref-age-ms`: refs never age out. */
#define ICM_DEFAULT_MAX_REF_AGE_MS INT64_MAX

/** Options of icm_expire_decide(). Initialise with ICM_EXPIRE_DECIDE_OPTIONS_INIT. */
typedef struct icm_expire_decide_options {
    unsigned int version;
    /** The operation's "now", fixed once (ms since epoch UTC). Ref ages and per-branch age cutoffs
     *  are measured from it. */
    int64_t now_ms;
    /** Table-wide cutoff: snapshots with timestamp_ms >= older_than_ms are kept by age. When
     *  has_older_than is false: now_ms - history.expire.max-snapshot-age-ms. */
    bool has_older_than;
    int64_t older_than_ms;
    /** Minimum snapshots to keep per branch (and in the table, rule 3); 0 = the table property
     *  history.expire.min-snapshots-to-keep (which may itself be 0). Negative is invalid. */
    int32_t retain_last;
    /** Snapshot ids to expire regardless of age and retain_last (borrowed). */
    const int64_t *snapshot_ids;
    size_t snapshot_id_count;
} icm_expire_decide_options;

#define ICM_EXPIRE_DECIDE_OPTIONS_VERSION 1
#define ICM_EXPIRE_DECIDE_OPTIONS_INIT {ICM_EXPIRE_DECIDE_OPTIONS_VERSION, 0, false, 0, 0, NULL, 0}

/** Set `opts` to the defaults of `version` (as ICM_EXPIRE_DECIDE_OPTIONS_INIT; now_ms is still
 *  to be set). @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_expire_decide_options_init(icm_expire_decide_options *opts,
                                               unsigned version);

/** Why a retained snapshot is kept. A snapshot may be kept for several reasons; each is one
 *  icm_expire_reason, in this enum's order (REF once per ref). */
typedef enum icm_expire_keep_reason {
    /** "current": the table's current snapshot (rule 1). `ref` NULL. */
    ICM_EXPIRE_KEEP_CURRENT = 0,
    /** "ref": the head of the retained branch or tag `ref` (rule 2). */
    ICM_EXPIRE_KEEP_REF = 1,
    /** "retain_last": one of the retain_last newest ancestors of branch `ref`, a branch without
     *  its own min-snapshots-to-keep; or, `ref` NULL, kept so that the table keeps retain_last
     *  snapshots (rule 3). */
    ICM_EXPIRE_KEEP_RETAIN_LAST = 2,
    /** "min_snapshots_to_keep": one of the newest ancestors that branch `ref`'s own
     *  min-snapshots-to-keep keeps. */
    ICM_EXPIRE_KEEP_MIN_SNAPSHOTS_TO_KEEP = 3,
    /** "newer_than_cutoff": at or after the table-wide cutoff (older_than_ms), as an ancestor of
     *  branch `ref` (a branch without its own max-snapshot-age-ms) or, `ref` NULL, as a snapshot
     *  in no retained branch's ancestry. */
    ICM_EXPIRE_KEEP_NEWER_THAN_CUTOFF = 4,
    /** "max_snapshot_age_ms": at or after the cutoff of branch `ref`'s own max-snapshot-age-ms
     *  (now_ms minus it). */
    ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE = 5
} icm_expire_keep_reason;
#define ICM_EXPIRE_KEEP_REASON_COUNT 6

/** The report name of a reason ("current", "ref", "retain_last", "min_snapshots_to_keep",
 *  "newer_than_cutoff", "max_snapshot_age_ms"); "other" when out of range. Static storage. */
ICM_EXTERN(const char *) icm_expire_keep_reason_name(icm_expire_keep_reason reason);

/** One reason a snapshot is kept. */
typedef struct icm_expire_reason {
    icm_expire_keep_reason kind;
    /** The branch or tag concerned, NULL when none (see the kinds). When several branches keep a
     *  snapshot for the same kind of reason, the first of them in the metadata's ref order is
     *  named; every ref pointing at it is listed (one REF each). Owned with the reasons. */
    const char *ref;
} icm_expire_reason;

/** Why one retained snapshot is kept. */
typedef struct icm_expire_kept {
    int64_t snapshot_id;
    const icm_expire_reason *reasons; /**< reason_count >= 1 reasons, in the enum's order */
    size_t reason_count;
} icm_expire_kept;

/** The decision. All arrays are owned by the decision (free with icm_expire_decision_free). */
typedef struct icm_expire_decision {
    int64_t now_ms;                /**< as given */
    int64_t older_than_ms;         /**< the table-wide cutoff used */
    int32_t retain_last;           /**< the minimum used for branches without their own */
    int64_t *expired_ids;          /**< oldest first (timestamp, then sequence number, then id) */
    size_t expired_count;
    int64_t *retained_ids;         /**< in metadata order */
    size_t retained_count;
    char **removed_refs;           /**< names of refs that aged out or point at expired snapshots */
    size_t removed_ref_count;
    /** Why each retained snapshot is kept: kept[i] is retained_ids[i]'s (retained_count entries;
     *  one allocation holding the reasons and the names they point at). */
    icm_expire_kept *kept;
} icm_expire_decision;

/**
 * Decide which snapshots expire.
 *
 * @param[out] out  new decision (icm_expire_decision_free)
 * @param md        table metadata (borrowed, not changed)
 * @param opts      options; NULL is not allowed (now_ms must be set)
 * @return 0;
 *         ICM_EREFUSED when `gc.enabled` is anything but a case-insensitive "true" (Java's
 *         Boolean.parseBoolean; "Cannot expire snapshots: GC is disabled", naming the value),
 *         or for an explicit id that a retained ref still points at ("Cannot expire <id>.
 *         Still referenced by refs: [<names>]");
 *         ICM_EINVALID for an unknown opts->version, a negative retain_last, or a
 *         history.expire.* property that is
 *         empty, not a whole number, negative or beyond its type's range (the message names
 *         the property and its value);
 *         ICM_ENOTFOUND for an explicit id that is not in the metadata;
 *         ICM_ENOMEM.
 * Source: Iceberg spec "Snapshot Retention Policy"; Java RemoveSnapshots.internalApply.
 */
ICM_EXTERN(int) icm_expire_decide(icm_expire_decision **out, const icm_table_metadata *md,
                                  const icm_expire_decide_options *opts);

ICM_EXTERN(void) icm_expire_decision_free(icm_expire_decision *decision);

/**
 * The simple form: the ids of the snapshots that expire when everything older than
 * older_than_ms goes but keep_last snapshots are kept (and refs are honoured as above).
 * "now" is the current time.
 *
 * @param[out] out_ids    new array, oldest first (icm_free); NULL when *out_count is 0
 * @param[out] out_count  number of ids
 * @param keep_last       >= 1
 * @return as icm_expire_decide(); ICM_EINVALID when keep_last < 1.
 */
ICM_EXTERN(int) icm_expire_choose(int64_t **out_ids, size_t *out_count,
                                  const icm_table_metadata *md, int64_t older_than_ms,
                                  int32_t keep_last);

/* ========================================================================================== */
/* Expiry execution: commit, then delete what only expired snapshots reached                  */
/* ========================================================================================== */

/**
 * Which files an expiry deletes (Java's ExpireSnapshots.CleanupLevel).
 * ALL: data and delete files, manifests, manifest lists and statistics files;
 * METADATA: manifests, manifest lists and statistics files (data and delete files stay);
 * NONE: snapshots are removed from the metadata and no file is deleted.
 */
typedef enum icm_expire_cleanup {
    ICM_EXPIRE_CLEANUP_ALL = 0,
    ICM_EXPIRE_CLEANUP_METADATA = 1,
    ICM_EXPIRE_CLEANUP_NONE = 2
} icm_expire_cleanup;

/** Parse "all", "metadata" (also "metadata_only", "metadata-only") or "none",
 *  case-insensitive. @return 0; ICM_EINVALID (message names the value). */
ICM_EXTERN(int) icm_expire_cleanup_parse(icm_expire_cleanup *out, const char *text);
/** "all", "metadata", "none"; static storage. */
ICM_EXTERN(const char *) icm_expire_cleanup_name(icm_expire_cleanup cleanup);

/** Kind of a file an expiry deletes, in deletion order (the CLI contract's `kind` names). */
typedef enum icm_expire_file_kind {
    ICM_EXPIRE_FILE_DATA = 0,                 /**< "data" */
    ICM_EXPIRE_FILE_POSITION_DELETES = 1,     /**< "position_deletes" */
    ICM_EXPIRE_FILE_EQUALITY_DELETES = 2,     /**< "equality_deletes" */
    ICM_EXPIRE_FILE_DELETION_VECTOR = 3,      /**< "deletion_vector" (a Puffin file) */
    ICM_EXPIRE_FILE_MANIFEST = 4,             /**< "manifest" */
    ICM_EXPIRE_FILE_MANIFEST_LIST = 5,        /**< "manifest_list" */
    ICM_EXPIRE_FILE_STATISTICS = 6,           /**< "statistics" */
    ICM_EXPIRE_FILE_PARTITION_STATISTICS = 7, /**< "partition_statistics" */
    /** "checksum": the storage's checksum companion of a planned file (Hadoop's `.name.crc`,
     *  icm_fileio_checksum_of), deleted after every other file */
    ICM_EXPIRE_FILE_CHECKSUM = 8
} icm_expire_file_kind;
#define ICM_EXPIRE_FILE_KIND_COUNT 9

/** The contract name of a kind ("data", "manifest_list", ...); "other" when out of range. */
ICM_EXTERN(const char *) icm_expire_file_kind_name(icm_expire_file_kind kind);

/** What happened to a planned file. */
typedef enum icm_expire_file_state {
    ICM_EXPIRE_FILE_PLANNED = 0,      /**< to be deleted (dry run, not yet deleted, or not
                                           deleted because the deletes stopped) */
    ICM_EXPIRE_FILE_DELETED = 1,      /**< deleted */
    ICM_EXPIRE_FILE_FAILED = 2,       /**< the delete failed; see the result's problems */
    ICM_EXPIRE_FILE_ALREADY_GONE = 3, /**< gone when its turn came (not an error) */
    ICM_EXPIRE_FILE_KEPT = 4          /**< not deleted: a commit during the deletes references
                                           it again (the delete phase's re-check) */
} icm_expire_file_state;

/** One file of the plan. */
typedef struct icm_expire_file {
    char *path;                   /**< as the metadata / manifests name it */
    icm_expire_file_kind kind;
    int64_t size_bytes;           /**< -1 when unknown */
    icm_expire_file_state state;
} icm_expire_file;

/** Why a file was not read or not deleted. */
typedef enum icm_expire_problem_kind {
    /** A manifest list or manifest could not be read (see the withheld_* flags). */
    ICM_EXPIRE_PROBLEM_UNREADABLE = 0,
    /** A candidate lies outside the table location, write.data.path and write.metadata.path:
     *  never deleted. */
    ICM_EXPIRE_PROBLEM_OUTSIDE_TABLE = 1,
    /** A delete failed (after retries). */
    ICM_EXPIRE_PROBLEM_DELETE_FAILED = 2,
    /** The table could not be reloaded after the commit, or between delete batches: no further
     *  file was deleted. */
    ICM_EXPIRE_PROBLEM_REFRESH_FAILED = 3,
    /** The deletes stopped early (a manifest list or manifest a concurrent commit added could
     *  not be read, a commit disabled GC (gc.enabled not true), a reload found metadata that
     *  fails the own-metadata check, the lease was lost, or the on_delete callback asked to
     *  stop): files still PLANNED were not deleted. */
    ICM_EXPIRE_PROBLEM_DELETES_STOPPED = 4,
    /** Verification: a file a retained snapshot references inside the table's locations is
     *  missing (or cannot be stat'ed); the message names the snapshot. No file was deleted. */
    ICM_EXPIRE_PROBLEM_MISSING = 5,
    /** A candidate is another catalog table's metadata file or lies under its location,
     *  write.data.path or write.metadata.path (a table nested in this one, or a copy of it
     *  registered in another catalog): never deleted, since that table may still need it
     *  (docs/semantics.md#expiry-file-keep-set). Also a local
     *  candidate in a folder strictly below the table's roots that is the location of a table
     *  no catalog lists (its `metadata/` holds version-hint.text/.txt or *.metadata.json files
     *  that are not this table's, as a filesystem-layout table's does). Also a data, delete or
     *  manifest file that is hidden or a catalog's own file (a SQLite database or journal by
     *  its first bytes, a .pyiceberg.yaml): only a damaged or crafted manifest names one. */
    ICM_EXPIRE_PROBLEM_OTHER_TABLE = 6,
    /** A candidate's folder is reached through a symbolic link below its table root
     *  (icemaint/maint.h, "Links and changed files"): its name may be a live file's second
     *  name, or lead out of the table. Kept (state FAILED, code ICM_EREFUSED), not an error. */
    ICM_EXPIRE_PROBLEM_THROUGH_LINK = 7,
    /** A manifest list, manifest or statistics file of an expired snapshot that a retained
     *  snapshot references as a data or delete file (damaged or crafted metadata: a path that
     *  names a live file in another role), or that may be one because a retained manifest
     *  list or manifest could not be read. Only a candidate that lies elsewhere than directly
     *  in one of the table's metadata folders (or in one a data folder overlaps) is looked up
     *  this way. Also a data or delete file that a retained snapshot's reference outside the
     *  table location, write.data.path and write.metadata.path may stand for: one bearing its
     *  file name or its size (a damaged entry may have moved the live file's reference there;
     *  verification, adversary rounds 10 and 11), and such a file's checksum companion. Never
     *  deleted (a warning). */
    ICM_EXPIRE_PROBLEM_LIVE_CONTENT = 8
} icm_expire_problem_kind;

typedef struct icm_expire_problem {
    icm_expire_problem_kind kind;
    char *location;               /**< the file concerned ("" when none) */
    int code;                     /**< icm error code */
    char *message;                /**< one line */
} icm_expire_problem;

/** Options of icm_expire_snapshots(). Initialise with ICM_EXPIRE_OPTIONS_INIT. */
typedef struct icm_expire_options {
    unsigned int version;
    /** The decision's options. now_ms 0 = the current time, taken once. */
    icm_expire_decide_options decide;
    icm_expire_cleanup cleanup;
    /** Also remove partition specs and schemas that no retained snapshot uses (never the
     *  default spec nor the current schema). Java's cleanExpiredMetadata. */
    bool clean_expired_metadata;
    /** Decide and plan only: nothing is committed and nothing deleted. The planning code gets
     *  no delete-capable handle. */
    bool dry_run;
    /** Delete threads per batch; 0 or 1 = the calling thread. */
    unsigned int max_concurrent_deletes;
    /** Commit retries after ICM_ECOMMIT_FAILED (each re-decides on the refreshed table): at
     *  most this many and at most the table's `commit.retry.num-retries` (4); the waits and
     *  the time limit are the table's `commit.retry.min-wait-ms`, `max-wait-ms`,
     *  `total-timeout-ms` (the one retry policy of every commit, Java's). */
    unsigned int max_commit_retries;
    /* ---- version 2 ---- */
    /** Called once per file the deletes act on (icemaint/maint.h); NULL = none. */
    icm_delete_cb on_delete;
    void *on_delete_payload;
    /** Files per delete batch (the table is reloaded before each); 0 = ICM_DELETE_BATCH_FILES. */
    size_t delete_batch_size;
    /** The run's table lease (icm_lease_acquire), renewed between batches; NULL = none. If it
     *  is found taken over by another run, the deletes stop. Borrowed. */
    icm_lease *lease;
    /* ---- version 3 ---- */
    /** Skip the verification before deleting (see icm_expire_snapshots). */
    bool no_verify;
    /* ---- version 4 ---- */
    /** Guard rails (icemaint/maint.h): max_files and max_bytes bound the files the expiry
     *  would delete. Checked on each commit attempt's plan BEFORE it commits, so a refused
     *  expiry commits nothing and deletes nothing (ICM_EREFUSED); checked again on the plan
     *  made after the commit, before the first delete (a refusal there leaves the committed
     *  expiry's files in place, as orphans: problem DELETES_STOPPED). A dry run is not
     *  refused. max_percent must be negative (no base is counted for expiry: ICM_EINVALID). */
    icm_delete_limits limits;
    /* ---- version 5 ---- */
    /** Move the expired files into this trash instead of deleting them (icemaint/trash.h:
     *  layout, journal, rules); NULL = delete. Its rules are checked before anything is
     *  committed, also in a dry run (which writes nothing to it): a trash that breaks one is
     *  ICM_EREFUSED, one that cannot be written the probe's error, and nothing is committed or
     *  deleted. Borrowed. */
    const char *trash;
} icm_expire_options;

/** Version 2 added on_delete to lease, version 3 no_verify, version 4 limits, version 5 trash;
 *  an older struct (without them) is still accepted: those fields take their defaults
 *  (verified, no limits, no trash). */
#define ICM_EXPIRE_OPTIONS_VERSION 5
#define ICM_EXPIRE_OPTIONS_INIT                                                               \
    {ICM_EXPIRE_OPTIONS_VERSION, ICM_EXPIRE_DECIDE_OPTIONS_INIT, ICM_EXPIRE_CLEANUP_ALL, false, \
     false, 0, 4, NULL, NULL, 0, NULL, false, ICM_DELETE_LIMITS_NONE, NULL}

/** Set `opts` to the defaults of `version` (as ICM_EXPIRE_OPTIONS_INIT; an older version's
 *  struct ends where that version's fields end).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_expire_options_init(icm_expire_options *opts, unsigned version);

/** What an expiry did (or, on a dry run, would do). Everything is owned by the result; only
 *  the library allocates one (what it needs besides these fields is kept out of sight). */
typedef struct icm_expire_result {
    bool dry_run;
    icm_expire_cleanup cleanup;
    int64_t now_ms;                   /**< the operation's "now" */
    int64_t older_than_ms;            /**< the table-wide cutoff used */
    int64_t *expired_ids;             /**< oldest first */
    size_t expired_count;
    int64_t *retained_ids;
    size_t retained_count;
    char **removed_refs;              /**< refs removed from the metadata */
    size_t removed_ref_count;
    size_t removed_spec_count;        /**< partition specs removed (clean_expired_metadata) */
    size_t removed_schema_count;      /**< schemas removed (clean_expired_metadata) */
    /** Data and delete files (kinds DATA .. DELETION_VECTOR). */
    icm_expire_file *deleted_files;
    size_t deleted_file_count;
    /** Manifests and manifest lists. */
    icm_expire_file *deleted_manifests;
    size_t deleted_manifest_count;
    /** Statistics and partition-statistics files. */
    icm_expire_file *deleted_statistics_files;
    size_t deleted_statistics_file_count;
    /** Per kind: files deleted (on a dry run: planned) and their known bytes; files already
     *  gone, kept or not reached are not counted. */
    size_t counts[ICM_EXPIRE_FILE_KIND_COUNT];
    int64_t bytes[ICM_EXPIRE_FILE_KIND_COUNT];
    size_t total;                     /**< sum of counts */
    int64_t total_bytes;              /**< sum of bytes */
    /** True when a retained manifest list or manifest could not be read, so no data or delete
     *  file was planned (they might still be referenced). */
    bool withheld_content_files;
    /** True when a retained manifest list could not be read, so no manifest was planned. */
    bool withheld_manifests;
    icm_expire_problem *problems;
    size_t problem_count;
    bool committed;                   /**< a new metadata file became current */
    unsigned int commit_attempts;
    /** The committed metadata file; NULL on a dry run or when nothing had to change. */
    char *metadata_location;
    /** Checksum companions (kind CHECKSUM) of the planned files above: each goes only with its
     *  file, and only when no retained snapshot references it in any role. None when a
     *  retained manifest list or manifest could not be read. */
    icm_expire_file *deleted_checksum_files;
    size_t deleted_checksum_file_count;
    /* ---- added with the delete phase's re-check (icemaint/maint.h) ---- */
    size_t already_gone;              /**< planned files gone when their turn came */
    size_t newly_referenced;          /**< planned files KEPT: a commit during the deletes
                                           references them again */
    /** The deletes stopped early (see ICM_EXPIRE_PROBLEM_DELETES_STOPPED): files still PLANNED
     *  were not deleted. */
    bool delete_stopped;
    /** The delete phase ran: the counts and bytes are of deleted files, not planned ones (a
     *  file's state says which), also when the deletes stopped early. */
    bool delete_phase;
    /* ---- added with verification ---- */
    /** Verification: files retained snapshots reference inside the table's locations that
     *  are missing. When not 0, nothing was planned (every deleted_* array is empty), the
     *  first 10 are problems of kind ICM_EXPIRE_PROBLEM_MISSING, and the call returned
     *  ICM_EREFUSED. */
    size_t missing_count;
    /* ---- added with the kept reasons ---- */
    /** The minimum the decision used for branches without their own min-snapshots-to-keep (the
     *  retain_last option, else history.expire.min-snapshots-to-keep); 0 when the result does
     *  not come from a decision (icm_expire_plan_files). older_than_ms is the cutoff applied. */
    int32_t retain_last;
    /** Why each retained snapshot is kept, parallel to retained_ids (see icm_expire_decision);
     *  NULL when the result does not come from a decision (icm_expire_plan_files). */
    icm_expire_kept *kept;
    /* ---- added with naming the retained file that held deletes back ---- */
    /** 1 + the index in problems of the first retained manifest list or manifest that could
     *  not be read (the reason for withheld_manifests / withheld_content_files; its message
     *  names a retained snapshot that references it); 0 when none. */
    size_t withheld_by;
    /* ---- added with reconciling lost commit answers (docs/semantics.md#commit-outcomes) ---- */
    /** The commit's answer was lost and reloading the table showed it applied
     *  (icm_table_last_commit_reconciled): `committed` is true and NOTHING was planned or
     *  deleted (every deleted_* array is empty): the expired snapshots' files are orphans now,
     *  for remove-orphan-files once they are older than its window. */
    bool commit_reconciled;
} icm_expire_result;

ICM_EXTERN(void) icm_expire_result_free(icm_expire_result *result);

/**
 * Expire snapshots of a table: decide (icm_expire_decide), build the new metadata as a lossless
 * edit (remove aged-out refs and the expired snapshots with their snapshot-log prefix, refs and
 * statistics entries; with clean_expired_metadata also unused specs and schemas), commit it
 * through icm_table_commit, then delete the files only expired snapshots reached.
 *
 * Files: after the commit the table is reloaded and the keep set is built from EVERY snapshot
 * of the reloaded metadata (so snapshots a concurrent writer added are protected too).
 * Candidates are the manifest lists, manifests, live (ADDED/EXISTING) data and delete files
 * and statistics files of the expired snapshots; candidates in the keep set stay. Each planned
 * file's checksum companion (icm_fileio_checksum_of: Hadoop's `.name.crc` on local disk) is
 * planned too, as a file of kind CHECKSUM, unless a retained snapshot references it. Deletes go
 * data and delete files, then manifests, then manifest lists, then statistics files, then
 * checksum companions, in batches (icemaint/maint.h): before each batch the table is reloaded,
 * and when a commit changed it, every snapshot of the new metadata counts as retained (only
 * manifest lists and manifests not read before are read): a planned file it references is KEPT
 * (and so is its companion). A file already gone is ALREADY_GONE (counted apart, not an
 * error). A reload that fails or a newly referenced list or manifest that cannot be read stops
 * the deletes (a problem says so, the files left are PLANNED, and the call returns that
 * error). Safety rules: a retained manifest list that cannot be read →
 * no manifest, data or delete file is deleted; a retained manifest that cannot be read → no
 * data or delete file is deleted, nor any manifest when it is found while the retained
 * manifests are read for the data and delete candidates (its list row's counts are then
 * unchecked, and a list may lie about what it keeps); an expired manifest list or manifest that cannot be read is
 * itself kept (it is the only record of what it references); a candidate outside the table
 * location, `write.data.path` and `write.metadata.path` is never deleted. All of these are
 * reported in result->problems, and the call still returns 0.
 *
 * Verification (unless no_verify; docs/semantics.md#expiry-file-keep-set: a missing
 * referenced file means a damaged manifest may have renamed a live file, so nothing is
 * deleted): when the plan would delete a data or
 * delete file or a manifest, every file the retained snapshots reference inside the table
 * location, `write.data.path` and `write.metadata.path` is stat'ed first (manifest lists,
 * manifests, statistics files and, when data or delete files would go, every live data and
 * delete file: all retained manifests are read). Avro blocks carry no checksum; a flipped bit
 * in a retained manifest can rename a live file, so the real file looks like a candidate. A
 * referenced file that is missing is the trace of that: then NOTHING is deleted (the commit
 * stands; the files of the expired snapshots stay as orphans), result->missing_count says how
 * many are missing, the first 10 are problems naming a snapshot that references each, and the
 * call returns ICM_EREFUSED with a message naming them. A dry run verifies the same way.
 * Cost: one stat per retained file (docs/BENCHMARKS.md).
 *
 * Threads: besides the calling thread, planning uses one helper thread that reads (and
 * inflates or decodes) manifest lists and manifests ahead through the table's FileIO, which
 * must allow calls from several threads (fileio.h); when the calling thread would wait for it,
 * it reads the next file itself. Files are started in a fixed order. Every decision happens on
 * the calling thread, from results that do not depend on which thread read a file (the last
 * step's file-name pre-filter, run where a manifest is decoded, only ever lets entries through
 * to the calling thread's exact check).
 *
 * @param[out] out new result (icm_expire_result_free); set also on ICM_ECOMMIT_UNKNOWN (then
 *             with the decision and nothing deleted), on ICM_ECOMMIT_FAILED, and on any error
 *             after the commit (then (*out)->committed is true: the snapshots are expired, and
 *             the error code says what stopped the file cleanup), and on a refusal by
 *             verification (dry run included: missing_count > 0); NULL otherwise
 * @param t    the table (its state advances to the committed metadata)
 * @param opts NULL = defaults
 * A commit whose answer was lost and that reloading the table showed applied returns 0 with
 * (*out)->committed and (*out)->commit_reconciled true and nothing deleted (see
 * icm_table_last_commit_reconciled).
 *
 * @return 0; the codes of icm_expire_decide; ICM_ECOMMIT_FAILED (CAS conflicts exhausted the
 *         retries; nothing of ours is left); ICM_ECOMMIT_UNKNOWN (nothing was deleted; check the
 *         table before retrying); ICM_EREFUSED also when verification found a referenced
 *         file missing (*out set; nothing deleted), and, unless dry_run, before anything is
 *         committed when the own-metadata check fails (icm_table_check_own_metadata: the
 *         table is a copy whose metadata names another location), and, dry runs too, before
 *         anything is committed when cleanup is not NONE and the table's location,
 *         write.data.path or write.metadata.path holds `_delta_log/` or `.hoodie/` (another
 *         table format manages those files: Delta UniForm, Apache XTable); ICM_EREADONLY (a static
 *         table, unless dry_run); ICM_EINVALID (bad options: an unknown version of
 *         the options or of their decide options, a cleanup out of range); the codes of
 *         icm_table_commit,
 *         icm_table_refresh and reading
 *         manifests (ICM_ENOMEM); after the commit, ICM_EREFUSED (a gc.enabled other than
 *         true committed meanwhile, the lease taken over, or metadata that fails the
 *         own-metadata check found by a reload) and ICM_EUSER (on_delete asked to stop).
 * Source: Java RemoveSnapshots + ReachableFileCleanup; the rules in words:
 * docs/semantics.md#expiry-file-keep-set, #commit-outcomes, #already-gone.
 */
ICM_EXTERN(int) icm_expire_snapshots(icm_expire_result **out, icm_table *t,
                                     const icm_expire_options *opts);

/**
 * For callers who commit themselves: plan the file deletes of going from `before` to `after`
 * (expired = snapshots of `before` not in `after`), with the same rules as
 * icm_expire_snapshots, verification included. Only reads storage. Pass the result to
 * icm_expire_delete_files() once `after` is committed.
 * @return 0; ICM_EREFUSED (verification found a referenced file missing: *out is set, with
 *         nothing planned and the missing files in its problems; or, *out NULL, cleanup is
 *         not NONE and a root of `after` holds `_delta_log/` or `.hoodie/`, as
 *         icm_expire_snapshots refuses); ICM_EINVALID (NULL
 *         argument); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_expire_plan_files(icm_expire_result **out, icm_fileio *io,
                                      const icm_table_metadata *before,
                                      const icm_table_metadata *after, icm_expire_cleanup cleanup);

/**
 * Delete the planned files of `result` in the safe order (data and delete files, manifests,
 * manifest lists, statistics files, checksum companions), in batches, updating each file's
 * state, the counts, bytes and problems. A failed delete is retried twice, then recorded and
 * the rest go on. A file already gone is ALREADY_GONE (not counted). There is no table here,
 * so no re-check between batches and no link check (no table roots to check against:
 * icemaint/maint.h, "Links and changed files"): icm_expire_snapshots runs the re-checked,
 * link-checked delete phase.
 * @param[out] out_deleted the number of files deleted (existing when their turn came), also
 *             when the call fails; 0 when nothing ran
 * @return 0 (failed deletes are in result->problems); ICM_EINVALID (NULL argument);
 *         ICM_EREFUSED (the result comes from a dry run or an expiry whose commit did not
 *         happen); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_expire_delete_files(size_t *out_deleted, icm_fileio *io,
                                        icm_expire_result *result);

ICM_END_DECL

#endif /* ICEMAINT_EXPIRE_H */
