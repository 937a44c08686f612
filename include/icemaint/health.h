/*
 * icemaint/health.h: a table's storage and retention picture (`icemaint health`), read-only:
 * how many snapshots it retains and how old the oldest is, how many metadata files it has
 * piled up, how many bytes its snapshots reference and how many lie unreferenced under its
 * location, how fragmented its manifests are, and when it was last expired. Thresholds on
 * these (the CLI's --max-*) make an alert of a table nobody maintains.
 *
 * What each figure is:
 *  - snapshots: those in the metadata (every one is retained until an expiry removes it);
 *    the oldest by timestamp-ms, its age = now − that timestamp.
 *  - metadata files: the current metadata file and the `metadata-log` entries (what the
 *    metadata names), and the metadata documents (`*.metadata.json`, `*.metadata.json.gz`)
 *    a listing finds directly in the table's metadata folders (`<location>/metadata`,
 *    `write.metadata.path`, the current file's folder; each file once), with their bytes: the
 *    log only names the last `write.metadata.previous-versions-max`, the listing also the
 *    ones that fell out of it and nothing deletes.
 *  - referenced bytes: the file_size_in_bytes of the live (ADDED or EXISTING) data files and
 *    delete files (position, equality, deletion-vector Puffin files) the manifests name —
 *    of the current snapshot, and of all snapshots (each file once, by its location's
 *    identity: icm_location_identity); manifests by their manifest-list manifest_length.
 *  - unreferenced bytes: the orphan sweep's own classification, run as a dry run with no age
 *    cutoff (icm_orphan_sweep with dry_run, force, and the clock's now as the cutoff, whatever
 *    now_ms says): every file below the table location the keep set does not name, modified
 *    before the listing, by the sizes the listing gives. Hidden files, excluded folders and
 *    files of unknown modification time are the sweep's to skip, not counted. When the
 *    sweep refuses (gc.enabled false, another table below the location, a listing that names
 *    no referenced file...) or fails (the location cannot be listed: credentials, network),
 *    these figures are unknown and `listing_error` says why (the error's one line); the rest
 *    of the report stands.
 *    unreferenced_percent = 100 × unreferenced / (unreferenced + referenced by all snapshots
 *    (data and delete files)).
 *  - manifests per snapshot: the rows of each snapshot's manifest list (v1 embedded
 *    `manifests` counted too); current, mean and max over the retained snapshots.
 *    A manifest is small when its manifest_length is below small_manifest_bytes (by default
 *    the table's `commit.manifest.target-size-bytes`, else Java's default 8 MiB: the size
 *    Java's RewriteManifests packs manifests to); the share is of the current snapshot's
 *    manifests (what a rewrite would merge). v1 embedded manifests have no recorded length
 *    and are never small.
 *  - last expiry: the table property ICM_LAST_EXPIRE_PROPERTY, which icemaint's expiry sets in
 *    the same commit that removes snapshots or refs (expire.h; Java and PyIceberg expiries
 *    leave no such record). Without it, the snapshot summaries can only tell *that* snapshots
 *    were expired, not when: a retained snapshot whose parent-snapshot-id names a snapshot
 *    the metadata no longer has (`snapshots_expired_before`).
 *
 * Never deletes, writes or commits anything: the sweep runs as a dry run (which by
 * construction has no path to a delete: orphans.h), the rest only reads and lists.
 */
#ifndef ICEMAINT_HEALTH_H
#define ICEMAINT_HEALTH_H

#include "catalog.h"
#include "common.h"

ICM_BEGIN_DECL

/** The table property icemaint's snapshot expiry sets, in its commit, to the expiry's now
 *  (epoch milliseconds, decimal). */
#define ICM_LAST_EXPIRE_PROPERTY "icemaint.last-expire-ms"
/** The table property whose value bounds a small manifest (Java TableProperties). */
#define ICM_MANIFEST_TARGET_SIZE_PROPERTY "commit.manifest.target-size-bytes"
/** Its Java default: 8 MiB. */
#define ICM_HEALTH_DEFAULT_SMALL_MANIFEST_BYTES INT64_C(8388608)

/** Options of icm_table_health(). Initialise with ICM_HEALTH_OPTIONS_INIT or
 *  icm_health_options_init(). */
typedef struct icm_health_options {
    unsigned int version;
    /** The report's "now" (ms since epoch UTC); 0 = the current time, taken once. */
    int64_t now_ms;
    /** A manifest below this many bytes is small; 0 = the table's
     *  ICM_MANIFEST_TARGET_SIZE_PROPERTY when it is a positive integer, else
     *  ICM_HEALTH_DEFAULT_SMALL_MANIFEST_BYTES. Negative: ICM_EINVALID. */
    int64_t small_manifest_bytes;
    /** Skip the listing (unreferenced figures and the metadata folders' listing unknown). */
    bool no_listing;
    /** Passed to the sweep's dry run (icm_orphan_options.catalog_files): the local files a
     *  catalog lives in, which are never counted as unreferenced. Borrowed. */
    const char *const *catalog_files;
    size_t catalog_file_count;
} icm_health_options;

#define ICM_HEALTH_OPTIONS_VERSION 1
#define ICM_HEALTH_OPTIONS_INIT {ICM_HEALTH_OPTIONS_VERSION, 0, 0, false, NULL, 0}

/** Set `opts` to the defaults of `version` (as ICM_HEALTH_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_health_options_init(icm_health_options *opts, unsigned version);

/** Files and their bytes. */
typedef struct icm_health_files {
    size_t count;
    int64_t bytes;
} icm_health_files;

/** What icm_table_health() found. Times are epoch ms, ages and durations ms; -1 = unknown
 *  (or, for a snapshot, none). Everything is owned by the report. */
typedef struct icm_health_report {
    int64_t now_ms;
    char *metadata_location;           /**< the current metadata file */
    /* ---- snapshots ---- */
    size_t snapshot_count;
    bool has_current_snapshot;
    int64_t current_snapshot_id;       /**< when has_current_snapshot */
    int64_t oldest_snapshot_ms;        /**< -1: no snapshot */
    int64_t oldest_snapshot_age_ms;    /**< now − oldest_snapshot_ms; -1: no snapshot */
    /* ---- metadata files ---- */
    size_t metadata_log_count;         /**< `metadata-log` entries (the current file not among
                                            them) */
    int64_t current_metadata_bytes;    /**< -1: not stat'ed (no listing) or not found */
    /** Metadata documents listed in the metadata folders (the current one among them);
     *  count 0 and bytes -1 when not listed. */
    icm_health_files metadata_files;
    /* ---- referenced ---- */
    icm_health_files current_data_files;     /**< data files of the current snapshot */
    icm_health_files current_delete_files;   /**< delete files of the current snapshot */
    icm_health_files current_manifests;      /**< its manifests (bytes: manifest_length) */
    size_t current_small_manifests;          /**< of those, small ones */
    icm_health_files retained_data_files;    /**< data files of all snapshots, each once */
    icm_health_files retained_delete_files;  /**< delete files of all snapshots, each once */
    icm_health_files retained_manifests;     /**< manifests of all snapshots, each once */
    size_t manifests_per_snapshot_max;       /**< over all snapshots; 0 without snapshots */
    double manifests_per_snapshot_mean;      /**< over all snapshots; 0 without snapshots */
    int64_t small_manifest_bytes;            /**< the bound used */
    /* ---- unreferenced (the sweep's dry run) ---- */
    bool listed;                             /**< the figures below are known */
    size_t listed_files;                     /**< files the listing gave (icm_orphan_result
                                                  .listed) */
    icm_health_files unreferenced;           /**< files no snapshot or metadata file names */
    double unreferenced_percent;             /**< -1 when not listed; 0 when nothing is
                                                  referenced or unreferenced */
    char *listing_error;                     /**< why not listed: the sweep's refusal or
                                                  error, one line (NULL when listed or
                                                  no_listing) */
    /* ---- expiry ---- */
    int64_t last_expire_ms;                  /**< ICM_LAST_EXPIRE_PROPERTY; -1: absent or not
                                                  a non-negative integer */
    int64_t last_expire_age_ms;              /**< now − last_expire_ms; -1 when unknown */
    bool snapshots_expired_before;           /**< a snapshot's parent is gone (see above) */
    /* ---- integrity ---- */
    /** Manifest lists and manifests of retained snapshots that read as valid files but cannot
     *  be trusted, by the rules the expiry and the sweep apply before they delete
     *  (docs/semantics.md: a manifest disagreeing with its list row, a list whose manifests
     *  hold fewer live files than its snapshot's summary totals); with any, the sweep refuses
     *  and the expiry holds its deletes back. 0 when all read whole. */
    size_t unreadable_files;
    char *unreadable_first;                  /**< the first one's location and why, one line;
                                                  NULL when none */
} icm_health_report;

ICM_EXTERN(void) icm_health_report_free(icm_health_report *report);

/**
 * Measure a table (see the file comment). The table is refreshed by the sweep's dry run (when
 * listing) and the figures are of the metadata it then holds.
 *
 * @param[out] out new report (icm_health_report_free); NULL on failure
 * @param t        the table (not committed to; a read-only one is fine)
 * @param opts     NULL = defaults
 * @return 0 (a refused or failed sweep is a finding: report->listing_error); ICM_EINVALID
 *         (NULL out or t, an unknown options version, a negative small_manifest_bytes);
 *         the read errors of a manifest list or manifest (ICM_EIO, ICM_ENOTFOUND, ICM_EINVALID...:
 *         the figures would be wrong, so there is no report; the message names the file);
 *         the listing codes of the metadata folders (ICM_EIO, ICM_EAUTH...); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_health(icm_health_report **out, icm_table *t,
                                 const icm_health_options *opts);

ICM_END_DECL

#endif /* ICEMAINT_HEALTH_H */
