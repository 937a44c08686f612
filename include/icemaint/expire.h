/*
 * icemaint/expire.h: snapshot expiry — which snapshots go (the decision).
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
 * The decision reads metadata only: it cannot touch storage.
 */
#ifndef ICEMAINT_EXPIRE_H
#define ICEMAINT_EXPIRE_H

#include "common.h"
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
     *  history.expire.min-snapshots-to-keep. Negative is invalid. */
    int32_t retain_last;
    /** Snapshot ids to expire regardless of age and retain_last (borrowed). */
    const int64_t *snapshot_ids;
    size_t snapshot_id_count;
} icm_expire_decide_options;

#define ICM_EXPIRE_DECIDE_OPTIONS_VERSION 1
#define ICM_EXPIRE_DECIDE_OPTIONS_INIT {ICM_EXPIRE_DECIDE_OPTIONS_VERSION, 0, false, 0, 0, NULL, 0}

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
} icm_expire_decision;

/**
 * Decide which snapshots expire.
 *
 * @param[out] out  new decision (icm_expire_decision_free)
 * @param md        table metadata (borrowed, not changed)
 * @param opts      options; NULL is not allowed (now_ms must be set)
 * @return 0;
 *         ICM_EREFUSED when `gc.enabled` is false ("Cannot expire snapshots: GC is disabled");
 *         ICM_EINVALID for a negative retain_last, an unparsable retention property (the message
 *         names it), or an explicit id that a retained ref still points at ("Cannot expire <id>.
 *         Still referenced by refs: [<names>]");
 *         ICM_ENOTFOUND for an explicit id that is not in the metadata;
 *         ICM_ENOMEM.
 * Source: Iceberg spec "Snapshot Retention Policy"; Java RemoveSnapshots.internalApply.
 */
ICM_EXTERN(int) icm_expire_decide(icm_expire_decision **out, const icm_table_metadata *md,
                                  const icm_expire_decide_options *opts);

ICM_EXTERN(void) icm_expire_decision_free(icm_expire_decision *decision);

/**
 * The seed's simple form: the ids of the snapshots that expire when everything older than
 * older_than_ms goes but keep_last snapshots are kept (and refs are honoured as above).
 * "now" is the current time.
 *
 * @param[out] out_ids    new array, oldest first (icm_free); NULL when *out_count is 0
 * @param[out] out_count  number of ids
 * @param keep_last       >= 1
 * @return as icm_expire_decide(); ICM_EINVALID when keep_last < 1.
 */
ICM_EXTERN(int) icm_choose_expired(const icm_table_metadata *md, int64_t older_than_ms,
                                   int32_t keep_last, int64_t **out_ids, size_t *out_count);

ICM_END_DECL

#endif /* ICEMAINT_EXPIRE_H */
