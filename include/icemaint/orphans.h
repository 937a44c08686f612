/*
 * icemaint/orphans.h: the orphan sweep — delete files under a table's location that no retained
 * snapshot and no metadata file references, once they are older than a file-retention window.
 *
 * The rule (Java's DeleteOrphanFiles; in words: docs/semantics.md#sweep-keep-set, #sweep-cutoff,
 * #sweep-location-rules, #sweep-refusals):
 *   keep set R  = the current metadata file and every metadata-log entry (however spelled: a
 *                 relative one, as older icemaint versions recorded, also by its file name in
 *                 each of the table's metadata folders; one named through a symbolic link
 *                 also by the name the listing gives it), version-hint.text
 *                 (and .txt), every snapshot's manifest list and manifests, every live (ADDED or
 *                 EXISTING) data file, delete file and deletion-vector Puffin file in them, and
 *                 every statistics and partition-statistics file — built from metadata loaded
 *                 fresh (icm_table_refresh) right before the sweep;
 *   candidates C = the files listed below the table location (or `location`), or read from a
 *                 file list, whose modification time is strictly older than the cutoff;
 *   orphans     = C − R.
 * R is held as 128-bit hashes (at most 32 bytes per referenced file); candidates stream past it,
 * so memory grows with the number of orphans (the output), not with the listing.
 *
 * Path identity: a path is split into scheme, authority and path; local forms (`/p`, `file:/p`,
 * `file:///p`, repeated slashes) are one path, object-store keys are their exact bytes (no
 * decoding, no dot segments; repeated slashes are collapsed as Java does, which can only keep
 * more). Files are joined on the path alone; equal_schemes / equal_authorities map names to a
 * canonical one on both sides; a referenced path with an empty authority matches any authority.
 * A listed file whose path is referenced only under another scheme or authority is a conflict,
 * handled by prefix_mismatch.
 *
 * Safety checks. Each refusal returns ICM_EREFUSED with a one-line message naming the check and
 * its override (where one exists); nothing is deleted:
 *  - `gc.enabled` set to anything but a case-insensitive `true` (Java's Boolean.parseBoolean:
 *    `false`, `no`, `0`, ` false` all disable GC; "Cannot delete orphan files: GC is
 *    disabled ...", naming the value);
 *  - a read-only table (icm_table_open_static) unless dry_run: a metadata file given directly
 *    may not be the table's current one, and R must come from the current one;
 *  - a cutoff less than 24 h before now, unless `force`;
 *  - a listing location outside the table location, `write.data.path` and
 *    `write.metadata.path` (segment-boundary prefixes: `/t` does not contain `/t_2`); every
 *    orphan is checked against those roots again before it is deleted;
 *  - a retained manifest list or manifest that cannot be read (R would be incomplete);
 *  - conflicts in ICM_PREFIX_MISMATCH_ERROR mode (message lists the (referenced, listed) pairs);
 *  - another table's metadata under the listing location: a `*.metadata.json` that R does not
 *    name and whose table-uuid differs, or that cannot be read to tell (override:
 *    `exclude_locations` carves a folder out);
 *  - files the catalog itself lives in under the listing location
 *    (docs/semantics.md#sweep-keep-set): the SQLite database of the table's catalog and its
 *    `-journal`/`-wal`/`-shm`, and the existing `catalog_files` (a `.pyiceberg.yaml`, a configured
 *    SQLite database), by name or through a symbolic link; such files are never planned, whatever
 *    the override;
 *  - another table of the table's catalog (SQL, or a filesystem catalog over a warehouse) —
 *    for a SQL catalog every table its database holds, whatever the catalog_name, and every
 *    table of the other SQLite databases among `catalog_files` — whose metadata file,
 *    `location`, `write.data.path` or `write.metadata.path` lies at or below the listing
 *    location (every pointer is read and its metadata read; this covers tables whose metadata
 *    files the listing cannot see); override for both:
 *    `exclude_locations` carving those files or folders out;
 *  - a table location that is a relative path that no path map of the table's FileIO
 *    rewrites (the listing would depend on the working directory);
 *  - a folder another table format manages (Delta UniForm, Apache XTable): the table
 *    location, the listing location or a folder between them holds `_delta_log/` or
 *    `.hoodie/` (a listing of each, stopped at its first file), or a listed file lies in such a
 *    folder; dry runs too. That format's log may name files the Iceberg metadata does not;
 *    its own VACUUM or cleaner removes them. Override only for a folder inside the listing:
 *    `exclude_locations` carving out the folder that holds it;
 *  - R names files below the listing location and there are orphans, but not one referenced
 *    file was listed (the listing's path form differs from the metadata's, e.g. a forgotten
 *    --path-map or scheme alias, or a file list that is not a full inventory);
 *  - verification (docs/semantics.md#sweep-refusals): there are orphans, and some file the
 *    snapshots reach (manifest list, manifest, data or delete file, deletion vector, statistics
 *    file) below the listing location, neither hidden nor excluded, is missing from the listing
 *    (for a file list: not in it, and a stat finds no such file either). A damaged manifest that
 *    names a live file wrongly makes the real file look like an orphan, and a listing that names
 *    files differently from the metadata makes live files look like orphans; either way nothing is
 *    deleted. The message names the first 10 missing files, each with a snapshot that references
 *    it, and their count. Costs nothing when nothing is missing (R marks which referenced files
 *    were listed); only a refusal walks the snapshots again to
 *    name them. Override: `no_verify`.
 * Skipped, never deleted: hidden paths (a component below the table root starting with `_` or
 * `.`, except `<field>=...` for a partition field — of any spec — whose name starts with `_` or
 * `.`), files under an excluded location, files with unknown mtime, and files whose path has a
 * `.` or `..` segment. The one exception is an orphan's checksum companion (Hadoop's
 * `.name.crc` beside `name`, icm_fileio_checksum_of): it is planned right after its orphan as
 * an entry of kind ICM_ORPHAN_CHECKSUM (whatever its age: it goes with its file, as Hadoop's
 * delete takes it), unless R references it or it lies under an excluded location; a
 * companion of a file that is kept is never planned. Companions are deleted after every other
 * orphan, and only when the entry before them (their file) was deleted (else FAILED). After the listing the table is refreshed again; when a writer committed
 * meanwhile, everything its new metadata references is added to R before anything is deleted.
 * The deletes then go in batches, and the table is reloaded before each batch the same way
 * (icemaint/maint.h, "The delete phase"): R only grows, reading only the manifest lists and
 * manifests of the new metadata it does not account for yet.
 *
 * Warning (result->warnings, not a refusal): the table's snapshot retention
 * (`history.expire.max-snapshot-age-ms`, default 5 days) is not longer than the file-retention
 * window (now − cutoff).
 *
 * A dry run plans with the same code and never reaches the delete code (the planning file has
 * no reference to icm_fileio_delete; a test checks the object file).
 */
#ifndef ICEMAINT_ORPHANS_H
#define ICEMAINT_ORPHANS_H

#include "catalog.h"
#include "common.h"
#include "fileio.h"
#include "maint.h"

ICM_BEGIN_DECL

/** Default file-retention window: 3 days (Java's default older_than). */
#define ICM_ORPHAN_DEFAULT_OLDER_THAN_MS INT64_C(259200000)
/** Cutoffs later than now minus this need `force` (Java's procedure minimum). */
#define ICM_ORPHAN_MIN_AGE_MS INT64_C(86400000)
/** The CLI's settle time (options.settle_ms): 2 s between the end of planning and the reload
 *  before the first delete. */
#define ICM_ORPHAN_DEFAULT_SETTLE_MS INT64_C(2000)
/** Default equal_schemes mapping: S3's spellings are one store. It always holds: the sweep
 *  folds `s3a` and `s3n` into `s3` before any map, and on both sides of the caller's entries,
 *  so no map pulls them apart (ICM_EINVALID for one sending them to two different names). */
#define ICM_ORPHAN_DEFAULT_EQUAL_SCHEMES "s3a,s3n=s3"

/** What to do with a file whose path is referenced only under another scheme or authority. */
typedef enum icm_prefix_mismatch {
    ICM_PREFIX_MISMATCH_ERROR = 0,   /**< refuse (ICM_EREFUSED), listing the conflicts */
    ICM_PREFIX_MISMATCH_IGNORE = 1,  /**< keep such files */
    ICM_PREFIX_MISMATCH_DELETE = 2   /**< treat them as orphans */
} icm_prefix_mismatch;

/** Parse "error", "ignore" or "delete" (case-insensitive). @return 0; ICM_EINVALID. */
ICM_EXTERN(int) icm_prefix_mismatch_parse(icm_prefix_mismatch *out, const char *text);

/** Progress of the deletes: `done` of `total` files handled. Called from the calling thread only,
 *  at most about once per 1000 files and once at the end. */
typedef void (*icm_orphan_progress_cb)(size_t done, size_t total, void *payload);

/** Options of icm_orphan_sweep(). Initialise with ICM_ORPHAN_OPTIONS_INIT. */
typedef struct icm_orphan_options {
    unsigned int version;
    /** The operation's "now" (ms since epoch UTC); 0 = the current time, taken once. */
    int64_t now_ms;
    /** Cutoff: files with mtime < older_than_ms are candidates. When has_older_than is false:
     *  now − ICM_ORPHAN_DEFAULT_OLDER_THAN_MS. */
    bool has_older_than;
    int64_t older_than_ms;
    /** List only below this location (inside the table's locations); NULL = the table location.
     *  R is still built from the whole table. */
    const char *location;
    /** Plan and report only; nothing is deleted. */
    bool dry_run;
    icm_prefix_mismatch prefix_mismatch;
    /** Scheme / authority equivalences: `NAMES=CANONICAL[;NAMES=CANONICAL...]`, NAMES
     *  comma-separated, e.g. "s3a,s3n=s3;wasb=abfs". Names compare case-insensitively. The
     *  scheme map is merged with ICM_ORPHAN_DEFAULT_EQUAL_SCHEMES (the caller's entries win,
     *  but never over the S3 spellings' being one store: see there). NULL = none (defaults
     *  only). */
    const char *equal_schemes;
    const char *equal_authorities;
    /** Folders to leave alone entirely (neither candidates nor checked for other tables). */
    const char *const *exclude_locations;
    size_t exclude_location_count;
    /** A local file with one `path<TAB>size<TAB>mtime_ms` line per file (an object-store
     *  inventory) used instead of listing; lines outside the listing location are ignored; an
     *  mtime of -1 or empty means unknown. NULL = list storage. */
    const char *file_list;
    /** Delete threads; 0 or 1 = the calling thread only. */
    unsigned int max_concurrent_deletes;
    /** Accept a cutoff less than 24 h ago. */
    bool force;
    icm_orphan_progress_cb progress;
    void *progress_payload;
    /* ---- version 2 ---- */
    /** Called once per file the deletes act on (icemaint/maint.h); NULL = none. */
    icm_delete_cb on_delete;
    void *on_delete_payload;
    /** Files per delete batch (the table is reloaded before each); 0 = ICM_DELETE_BATCH_FILES. */
    size_t delete_batch_size;
    /** The run's table lease (icm_lease_acquire), renewed between batches; NULL = none. If it
     *  is found taken over by another run, the deletes stop (ICM_EREFUSED). Borrowed. */
    icm_lease *lease;
    /** Settle time (ms): wait this long after planning (the listing is over by then) before
     *  the reload that precedes the first delete; 0 = none (the library's default; the CLI
     *  uses ICM_ORPHAN_DEFAULT_SETTLE_MS). A writer that creates a file (even with an old
     *  mtime, as a copy that keeps it) and commits it within this time has committed before
     *  that reload, which then keeps the file: every listed file existed at the listing, so a
     *  writer who loses one took longer than this from creating the file to committing it. */
    int64_t settle_ms;
    /** Local files a catalog lives in that the caller knows of, absolute: the
     *  CLI passes its configuration's `.pyiceberg.yaml` and the SQLite database of every
     *  catalog it names, with `-journal`/`-wal`/`-shm`, by given and real path
     *  (icm_catalog_config_own_files), also for a table opened as a directory. Never planned;
     *  a listing location holding one that exists is refused (see the file comment); for a
     *  catalog table, the tables of each of these databases are other tables too. The SQLite
     *  database of the table's own catalog is added by the sweep itself. NULL = none. */
    const char *const *catalog_files;
    size_t catalog_file_count;
    /** (version 3) Skip the presence check (the file comment's "verification"): delete even
     *  when files the snapshots reference below the listed location are missing from it. */
    bool no_verify;
    /* ---- version 4 ---- */
    /** Guard rails (icemaint/maint.h): checked on the plan before the first delete; the
     *  percentage's base is `listed`. A dry run is not refused: it gets a warning. */
    icm_delete_limits limits;
    /** The file list is a reviewed plan's (`icemaint apply`), not an inventory: the location is
     *  listed as without a file list (every check on what storage holds runs), and only the
     *  listed orphans the list names stay candidates, with the list's size and mtime: a file
     *  is deleted only while it still has exactly them (an inventory's are only checked for
     *  age); one the list gives no size or mtime for is no candidate. */
    bool exact_file_list;
    /* ---- version 5 ---- */
    /** An S3 Inventory report used instead of listing: the location of its `manifest.json`
     *  (an object-store URI read through the table's FileIO, or a local path to a copy of the
     *  destination bucket). CSV reports only (ORC and Parquet: ICM_EUNSUPPORTED); the
     *  manifest's sourceBucket must be the bucket of the listing location (else ICM_EREFUSED);
     *  every data file's MD5 and size must match the manifest and its gzip stream be whole
     *  (else ICM_EINVALID; a missing one: ICM_ENOTFOUND), all before anything is deleted.
     *  The report is a snapshot taken at its creationTimestamp: a report older than
     *  max_inventory_age_ms is refused (ICM_EREFUSED); files written since are not in it and
     *  so are kept; a file in it is deleted only while its size and modification
     *  time (to the second) are still the report's, and one gone since is ALREADY_GONE
     *  (docs/semantics.md, "Inventory input"). Not with file_list. NULL = list storage. */
    const char *inventory;
    /** The oldest report accepted (ms before now_ms); 0 =
     *  ICM_ORPHAN_DEFAULT_MAX_INVENTORY_AGE_MS. */
    int64_t max_inventory_age_ms;
    /* ---- version 6 ---- */
    /** A sweep split over processes (docs/SHARDS.md, docs/semantics.md#sharded-sweep): with
     *  shard_count N >= 2, the keys below the listing location are cut into N contiguous
     *  ranges at quantiles of the keys the table's metadata references below it (every shard
     *  computes the same cuts from the same metadata), and this run keeps in its keep set and
     *  plans only range shard_index (0-based, < N). Every check of an unsharded sweep still
     *  runs in each shard over the whole location: a shard also lists (or reads again from
     *  the file list or the inventory report) the names outside its range, keeping only what
     *  the guards need (another table's or an unreadable `*.metadata.json`, another format's
     *  log), and before its own range plans every other range for its verdict only (one
     *  at a time, nothing kept), refusing (ICM_EREFUSED) when any would refuse, so a shard
     *  refuses whenever the unsharded run would; memory divides by N, planning work
     *  (listing requests, manifest and report reads) does not (docs/SHARDS.md). 0 or 1 = the whole
     *  location (shard_index must be 0); shard_index >= shard_count is ICM_EINVALID. */
    unsigned int shard_index;
    unsigned int shard_count;
    /* ---- version 7 ---- */
    /** Move the orphans into this trash instead of deleting them (icemaint/trash.h: layout,
     *  journal, rules); NULL = delete. Its rules are checked before planning, also in a dry
     *  run (which writes nothing to it); a trash that breaks one is ICM_EREFUSED, one that
     *  cannot be written the probe's error, and nothing is deleted. Borrowed. */
    const char *trash;
} icm_orphan_options;

/** An inventory report older than this (7 days) is refused unless max_inventory_age_ms says
 *  otherwise: S3 writes reports daily or weekly. */
#define ICM_ORPHAN_DEFAULT_MAX_INVENTORY_AGE_MS (7LL * 24 * 3600 * 1000)

/** Version 2 added the fields from on_delete to catalog_files, version 3 no_verify, version 4
 *  limits and exact_file_list, version 5 inventory and max_inventory_age_ms, version 6
 *  shard_index and shard_count, version 7 trash; an older struct (without them) still works:
 *  those fields take their defaults (verified, no limits, an inventory's file list, no
 *  inventory report, the whole location, no trash). */
#define ICM_ORPHAN_OPTIONS_VERSION 7
#define ICM_ORPHAN_OPTIONS_INIT                                                                \
    {ICM_ORPHAN_OPTIONS_VERSION, 0, false, 0, NULL, false, ICM_PREFIX_MISMATCH_ERROR, NULL,    \
     NULL, NULL, 0, NULL, 1, false, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL, 0, false,     \
     ICM_DELETE_LIMITS_NONE, false, NULL, 0, 0u, 0u, NULL}

/** Set `opts` to the defaults of `version` (as ICM_ORPHAN_OPTIONS_INIT; an older version's
 *  struct ends where that version's fields end).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_orphan_options_init(icm_orphan_options *opts, unsigned version);

/** Kind of an orphan, guessed from its location and name (orphans have no metadata). */
typedef enum icm_orphan_kind {
    ICM_ORPHAN_DATA = 0,          /**< "data": Parquet/ORC/Avro or other files under data */
    ICM_ORPHAN_DELETE = 1,        /**< "delete": `*delete*` data-like files, Puffin under data */
    ICM_ORPHAN_MANIFEST = 2,      /**< "manifest": `*.avro` in a metadata folder */
    ICM_ORPHAN_MANIFEST_LIST = 3, /**< "manifest_list": `snap-*.avro` */
    ICM_ORPHAN_METADATA = 4,      /**< "metadata": `*.metadata.json[.gz]`, version-hint */
    ICM_ORPHAN_OTHER = 5,         /**< "other" */
    /** "checksum": the storage's checksum companion of an orphan listed just before it
     *  (Hadoop's `.name.crc`, icm_fileio_checksum_of), deleted with it */
    ICM_ORPHAN_CHECKSUM = 6
} icm_orphan_kind;
#define ICM_ORPHAN_KIND_COUNT 7

/** "data", "delete", "manifest", "manifest_list", "metadata", "other", "checksum" (static). */
ICM_EXTERN(const char *) icm_orphan_kind_name(icm_orphan_kind kind);

typedef enum icm_orphan_state {
    ICM_ORPHAN_PLANNED = 0,      /**< found (dry run, or not deleted: the deletes stopped) */
    ICM_ORPHAN_DELETED = 1,      /**< deleted */
    ICM_ORPHAN_FAILED = 2,       /**< the delete failed: error_code / error_message */
    ICM_ORPHAN_ALREADY_GONE = 3, /**< gone when its turn came (not an error, not deleted) */
    /** not deleted, not an error: the last check before its delete found it reached through a
     *  symbolic link below the table root, or changed since it was listed (icemaint/maint.h,
     *  "Links and changed files"); error_code ICM_EREFUSED, error_message says which */
    ICM_ORPHAN_KEPT = 4
} icm_orphan_state;

typedef struct icm_orphan_file {
    char *path;              /**< as listed (or as in the file list) */
    int64_t size_bytes;
    int64_t mtime_ms;
    icm_orphan_kind kind;
    icm_orphan_state state;
    int error_code;          /**< when FAILED or KEPT */
    char *error_message;     /**< when FAILED or KEPT (may be NULL) */
} icm_orphan_file;

/** What a sweep found (and did). Everything is owned by the result. */
typedef struct icm_orphan_result {
    bool dry_run;
    int64_t now_ms;
    int64_t older_than_ms;          /**< the cutoff used */
    char *location;                 /**< the location listed (or filtered for a file list) */
    icm_orphan_file *orphans;       /**< in listing order */
    size_t orphan_count;
    /** Per kind: orphans found (dry run) or deleted, and their bytes. */
    size_t counts[ICM_ORPHAN_KIND_COUNT];
    int64_t bytes[ICM_ORPHAN_KIND_COUNT];
    size_t total;
    int64_t total_bytes;
    size_t listed;                  /**< files the listing / file list gave below `location`
                                         (icemaint's own lease files not counted) */
    size_t referenced;              /**< distinct locations in R (metadata-log entries that no
                                         longer exist included) */
    size_t keep_set_bytes;          /**< memory of R's hash table (at most 32 per file) */
    size_t referenced_listed;       /**< listed files found in R */
    size_t hidden;                  /**< listed files skipped as hidden */
    size_t excluded;                /**< listed files under an excluded location */
    size_t too_recent;              /**< unreferenced files not older than the cutoff (or
                                         with unknown mtime) */
    size_t conflicts;               /**< files referenced only under another scheme/authority */
    size_t deleted;                 /**< files deleted (existing when their turn came) */
    size_t failed;
    size_t already_gone;            /**< orphans gone when their turn came (not deleted) */
    size_t newly_referenced;        /**< orphans dropped, not deleted: a commit during the
                                         sweep references them */
    bool rechecked;                 /**< a concurrent commit was seen and added to R */
    /** The deletes stopped early (a reload failed, newer metadata could not be read, gc was
     *  disabled, the lease was lost, or on_delete asked to stop): files still PLANNED were not
     *  deleted. The call then returns the code that stopped them, with this result. */
    bool delete_stopped;
    char **warnings;                /**< one-line warnings (e.g. retention); for stderr */
    size_t warning_count;
    size_t kept;                    /**< orphans KEPT by the last check before their delete */
} icm_orphan_result;

ICM_EXTERN(void) icm_orphan_result_free(icm_orphan_result *result);

/**
 * Find the orphan files of a table and (unless dry_run) delete them.
 *
 * The table is refreshed first (icm_table_refresh) and after the listing (see the file
 * comment). Deletes run in batches (icemaint/maint.h), before each of which the table is
 * reloaded and orphans a commit meanwhile references are dropped; within a batch on up to
 * max_concurrent_deletes threads. A file already gone is ALREADY_GONE (counted in
 * already_gone, not as deleted; not an error); one the last check before its delete refuses
 * (reached through a symbolic link below the table root, or changed since it was listed:
 * icemaint/maint.h, "Links and changed files") is KEPT (counted in kept; not an error; a dry
 * run makes the link check too); a failed delete is recorded in its entry and the rest go on
 * (the call returns 0). Each file acted on goes to opts->on_delete.
 * Planning uses one helper thread besides the calling thread: it reads manifest lists and
 * manifests ahead while the keep set is built (the calling thread reads the next one itself
 * rather than wait), then lists the table location while the calling thread classifies what it
 * listed (a bounded number of names in flight). The table's FileIO must allow calls from
 * several threads (fileio.h); every decision is the calling thread's.
 *
 * @param[out] out new result (icm_orphan_result_free); NULL on failure before the deletes
 *             began; set also when the deletes stopped early (result->delete_stopped: files
 *             still PLANNED were not deleted; the return code says why)
 * @param t    the table (refreshed; not committed to)
 * @param opts NULL = defaults
 * @return 0; ICM_EREFUSED (a safety check, see the file comment); ICM_EINVALID (bad options:
 *         an unknown version, an equal map, a file list line — the message names file and line —, or
 *         prefix_mismatch out of range, file_list with inventory; an inventory report that
 *         is malformed or whose data file fails its MD5, size or gzip check);
 *         ICM_EUNSUPPORTED (an ORC or Parquet inventory report); ICM_ENOTFOUND (file list,
 *         inventory manifest or one of its data files missing); the codes of
 *         icm_table_refresh and listing (ICM_EIO, ICM_EUNSUPPORTED for a location the FileIO
 *         cannot list), also of icm_fileio_stat on an unreferenced file the listing gave
 *         without its mtime (one that is gone by then is no candidate, not an error);
 *         the codes of the table's catalog listing its tables and namespaces (SQL, I/O;
 *         a filesystem catalog's listing);
 *         in the delete phase (with *out set): the codes of icm_table_refresh, the read error of
 *         a list or manifest a concurrent commit added, ICM_EREFUSED (gc.enabled not true
 *         committed meanwhile, or the lease taken over), ICM_EUSER (on_delete asked to stop);
 *         ICM_ENOMEM.
 * Source: Java DeleteOrphanFilesSparkAction; docs/semantics.md#sweep-keep-set.
 */
ICM_EXTERN(int) icm_orphan_sweep(icm_orphan_result **out, icm_table *t,
                                 const icm_orphan_options *opts);

ICM_END_DECL

#endif /* ICEMAINT_ORPHANS_H */
