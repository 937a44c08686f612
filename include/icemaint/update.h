/*
 * icemaint/update.h: a commit as the Iceberg REST model expresses it: requirements the base
 * must meet and updates applied to it, in order (apache/iceberg open-api/
 * rest-catalog-open-api.yaml: TableRequirement, TableUpdate, CommitTableRequest).
 *
 * Every change icemaint commits (snapshot expiry, transactions) is built as an
 * icm_table_changes. A pointer-swap catalog (SQL, filesystem) checks the requirements against
 * the base and applies the updates with icm_table_changes_apply (lossless: fields icemaint does
 * not know survive untouched and in order), then swaps the pointer; a REST catalog sends the
 * wire form (icm_table_changes_to_json) as it is. Metadata-log, last-updated-ms and the
 * metadata-file retention are not updates: the pointer-swap layer adds them
 * (icemaint/catalog.h, icm_table_commit_changes).
 *
 * Semantics follow Java's TableMetadata.Builder (Iceberg 1.x), with these refusals where Java
 * would unset the current snapshot: `remove-snapshots` of the current snapshot and
 * `remove-snapshot-ref` of `main` are ICM_EREFUSED (expiry never asks for either).
 *
 * An icm_table_changes is used by one thread at a time; reading it (check, apply, to_json)
 * from several threads at once is safe. Strings passed in are copied.
 */
#ifndef ICEMAINT_UPDATE_H
#define ICEMAINT_UPDATE_H

#include "common.h"
#include "metadata.h"

ICM_BEGIN_DECL

/* icm_property (one key/value pair) is declared in common.h. */

/** Retention fields of a ref (spec "Snapshot References"); unset = the table default. */
typedef struct icm_ref_retention {
    bool has_max_ref_age_ms;
    int64_t max_ref_age_ms;
    bool has_max_snapshot_age_ms;     /**< branches only */
    int64_t max_snapshot_age_ms;
    bool has_min_snapshots_to_keep;   /**< branches only */
    int32_t min_snapshots_to_keep;
} icm_ref_retention;

/** TableRequirement `type`s. */
typedef enum icm_requirement_kind {
    ICM_REQ_ASSERT_CREATE = 0,                 /**< "assert-create" */
    ICM_REQ_ASSERT_TABLE_UUID,                 /**< "assert-table-uuid": `uuid` */
    ICM_REQ_ASSERT_REF_SNAPSHOT_ID,            /**< "assert-ref-snapshot-id": `ref`,
                                                    `snapshot-id` (null: ref must not exist) */
    ICM_REQ_ASSERT_LAST_ASSIGNED_FIELD_ID,     /**< `last-assigned-field-id` */
    ICM_REQ_ASSERT_CURRENT_SCHEMA_ID,          /**< `current-schema-id` */
    ICM_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID, /**< `last-assigned-partition-id` */
    ICM_REQ_ASSERT_DEFAULT_SPEC_ID,            /**< `default-spec-id` */
    ICM_REQ_ASSERT_DEFAULT_SORT_ORDER_ID       /**< `default-sort-order-id` */
} icm_requirement_kind;

/** TableUpdate `action`s icemaint produces or passes through. */
typedef enum icm_update_kind {
    ICM_UPDATE_ADD_SNAPSHOT = 0,              /**< "add-snapshot" */
    ICM_UPDATE_REMOVE_SNAPSHOTS,              /**< "remove-snapshots" */
    ICM_UPDATE_SET_SNAPSHOT_REF,              /**< "set-snapshot-ref" */
    ICM_UPDATE_REMOVE_SNAPSHOT_REF,           /**< "remove-snapshot-ref" */
    ICM_UPDATE_SET_PROPERTIES,                /**< "set-properties" */
    ICM_UPDATE_REMOVE_PROPERTIES,             /**< "remove-properties" */
    ICM_UPDATE_SET_STATISTICS,                /**< "set-statistics" */
    ICM_UPDATE_REMOVE_STATISTICS,             /**< "remove-statistics" */
    ICM_UPDATE_SET_PARTITION_STATISTICS,      /**< "set-partition-statistics" */
    ICM_UPDATE_REMOVE_PARTITION_STATISTICS,   /**< "remove-partition-statistics" */
    ICM_UPDATE_REMOVE_PARTITION_SPECS,        /**< "remove-partition-specs" */
    ICM_UPDATE_REMOVE_SCHEMAS                 /**< "remove-schemas" */
} icm_update_kind;

/** The wire name of a kind ("assert-ref-snapshot-id", "remove-snapshots"); NULL if unknown. */
ICM_EXTERN(const char *) icm_requirement_kind_name(icm_requirement_kind kind);
ICM_EXTERN(const char *) icm_update_kind_name(icm_update_kind kind);

/** Requirements and updates of one commit, in the order added (owned, opaque). */
typedef struct icm_table_changes icm_table_changes;

/** @param[out] out new, empty (icm_table_changes_free). @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_changes_new(icm_table_changes **out);
/** NULL is ok. */
ICM_EXTERN(void) icm_table_changes_free(icm_table_changes *c);

/* ---- requirements (each returns 0, ICM_EINVALID for a NULL `c`, a NULL or non-UTF-8
 *      string, ICM_ENOMEM) ---- */

ICM_EXTERN(int) icm_table_changes_require_create(icm_table_changes *c);
ICM_EXTERN(int) icm_table_changes_require_table_uuid(icm_table_changes *c, const char *uuid);
/** `snapshot_id` NULL: the ref must not exist. */
ICM_EXTERN(int) icm_table_changes_require_ref_snapshot_id(icm_table_changes *c,
                                                          const char *ref,
                                                          const int64_t *snapshot_id);
/** One of the integer requirements (LAST_ASSIGNED_FIELD_ID ... DEFAULT_SORT_ORDER_ID);
 *  ICM_EINVALID for another kind. */
ICM_EXTERN(int) icm_table_changes_require_id(icm_table_changes *c, icm_requirement_kind kind,
                                             int64_t id);

/* ---- updates (each returns 0, ICM_EINVALID (NULL, non-UTF-8, or a JSON text that is not an
 *      object with the fields the spec requires), ICM_ENOMEM) ---- */

/** `snapshot_json`: a spec Snapshot object (compact or pretty JSON text; copied). */
ICM_EXTERN(int) icm_table_changes_add_snapshot(icm_table_changes *c, const char *snapshot_json);
ICM_EXTERN(int) icm_table_changes_remove_snapshots(icm_table_changes *c, const int64_t *ids,
                                                   size_t n);
/** `retention` NULL = none: the ref gets no retention fields (to keep a ref's fields, pass
 *  them: Java's setRef replaces the whole ref). Tags take no branch-only field (ICM_EINVALID). */
ICM_EXTERN(int) icm_table_changes_set_snapshot_ref(icm_table_changes *c, const char *name,
                                                   icm_ref_type type, int64_t snapshot_id,
                                                   const icm_ref_retention *retention);
ICM_EXTERN(int) icm_table_changes_remove_snapshot_ref(icm_table_changes *c, const char *name);
ICM_EXTERN(int) icm_table_changes_set_properties(icm_table_changes *c,
                                                 const icm_property *props, size_t n);
ICM_EXTERN(int) icm_table_changes_remove_properties(icm_table_changes *c,
                                                    const char *const *keys, size_t n);
/** `statistics_json`: a spec StatisticsFile object (its `snapshot-id` names the snapshot). */
ICM_EXTERN(int) icm_table_changes_set_statistics(icm_table_changes *c,
                                                 const char *statistics_json);
ICM_EXTERN(int) icm_table_changes_remove_statistics(icm_table_changes *c, int64_t snapshot_id);
/** `json`: a spec PartitionStatisticsFile object. */
ICM_EXTERN(int) icm_table_changes_set_partition_statistics(icm_table_changes *c,
                                                           const char *json);
ICM_EXTERN(int) icm_table_changes_remove_partition_statistics(icm_table_changes *c,
                                                              int64_t snapshot_id);
ICM_EXTERN(int) icm_table_changes_remove_partition_specs(icm_table_changes *c,
                                                         const int32_t *spec_ids, size_t n);
ICM_EXTERN(int) icm_table_changes_remove_schemas(icm_table_changes *c, const int32_t *schema_ids,
                                                 size_t n);

/* ---- reading ---- */

ICM_EXTERN(size_t) icm_table_changes_requirement_count(const icm_table_changes *c);
ICM_EXTERN(icm_requirement_kind) icm_table_changes_requirement_kind(const icm_table_changes *c,
                                                                    size_t i);
ICM_EXTERN(size_t) icm_table_changes_update_count(const icm_table_changes *c);
ICM_EXTERN(icm_update_kind) icm_table_changes_update_kind(const icm_table_changes *c, size_t i);

/**
 * The REST wire form, `{"requirements":[...],"updates":[...]}` (the body of a
 * CommitTableRequest without `identifier`): compact JSON, members in the order added.
 * @param[out] out new NUL-terminated text (icm_free); *out_len may be NULL.
 * @return 0, ICM_EINVALID (c NULL), ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_changes_to_json(char **out, size_t *out_len,
                                          const icm_table_changes *c);

/**
 * Parse the wire form (as icm_table_changes_to_json writes it; `identifier` is ignored).
 * Every requirement and update is checked against the OpenAPI shapes; a kind icemaint does not
 * know is refused.
 * @return 0; ICM_EINVALID (not JSON, or a shape the message names, e.g.
 *         "updates[2].snapshot-ids: expected an array of integers"); ICM_EUNSUPPORTED (an
 *         action or type icemaint does not apply); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_changes_from_json(icm_table_changes **out, const char *json,
                                            size_t len);

/**
 * Check every requirement against `base` (NULL: the table does not exist), in order.
 * @return 0; ICM_EINVALID (c NULL); ICM_ECOMMIT_FAILED at the first that fails (a conflict:
 *         the base moved), with a
 *         one-line message naming it, e.g. "requirement failed: assert-ref-snapshot-id: ref
 *         main is at snapshot 5, expected 3".
 */
ICM_EXTERN(int) icm_table_changes_check(const icm_table_changes *c,
                                        const icm_table_metadata *base);

/**
 * Add the requirements Java's UpdateRequirements.forUpdateTable derives from the updates added
 * so far, against `base` (the metadata they were decided on): assert-table-uuid (when base has
 * a uuid); for each ref a set-snapshot-ref names, once, assert-ref-snapshot-id with base's
 * snapshot of it (null when base has no such ref); for remove-partition-specs
 * assert-default-spec-id, for remove-schemas assert-current-schema-id, each with
 * assert-ref-snapshot-id for every branch but main. A requirement already present is not
 * added again. @return 0, ICM_EINVALID (NULL argument), ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_changes_require_for_update(icm_table_changes *c,
                                                     const icm_table_metadata *base);

/**
 * Apply the updates, in order, to a copy of `base` (base itself is never changed). Lossless:
 * members and values no update names are kept as they are, in their order.
 *  - add-snapshot: appended to `snapshots`; v2+ `last-sequence-number` = its sequence-number;
 *    v3 `next-row-id` += its added-rows. A snapshot id that exists is ICM_EINVALID.
 *  - remove-snapshots: the snapshots go, with the refs and statistics / partition-statistics
 *    entries on them; the snapshot-log loses every entry up to the last one naming a removed
 *    snapshot (Java's updateSnapshotLog). Unknown ids are ignored.
 *  - set-snapshot-ref: the ref is created, or changed in place (its other members stay); on
 *    `main` (a branch) current-snapshot-id moves and the snapshot-log gets an entry (the
 *    snapshot's timestamp-ms when this apply added it, else now but never before
 *    last-updated-ms), and last-updated-ms is raised to it. The snapshot must exist.
 *  - remove-snapshot-ref: absent refs are ignored.
 *  - set-properties / remove-properties: a new key goes last, a replaced one keeps its place.
 *  - set-statistics / set-partition-statistics: replace the entry of that snapshot in place,
 *    else appended; remove-*: every entry of that snapshot goes (none: nothing changes).
 *  - remove-partition-specs / remove-schemas: the default spec / current schema is refused.
 * @param[out] out new metadata (icm_table_metadata_free), named as `base`'s file
 * @return 0; ICM_EINVALID (an update does not apply: the message names it, e.g. "updates[1]
 *         set-snapshot-ref: snapshot 7 does not exist", or the result is not valid metadata);
 *         ICM_EREFUSED (removing the current snapshot or `main`); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_changes_apply(icm_table_metadata **out,
                                        const icm_table_changes *c,
                                        const icm_table_metadata *base);

/** What a metadata document shows of a change (icm_table_changes_seen). */
typedef enum icm_changes_seen {
    /** Not every effect is there (or the document is another table's): nothing is told. */
    ICM_CHANGES_NOT_SEEN = 0,
    /** Every update's effect is there, none adds a snapshot: the table is as the change
     *  leaves it, though another writer's change could have left it so. */
    ICM_CHANGES_SEEN,
    /** A snapshot the change adds is there, with its own id, timestamp and manifest list (a
     *  file the change wrote), or, since expired, is named as the parent of one that is: the
     *  change applied (a commit is atomic). */
    ICM_CHANGES_SEEN_OURS
} icm_changes_seen;

/**
 * Whether `md` shows the effect of the changes: how a commit whose answer was lost is told
 * by reloading the table (Java's commit status check compares metadata files; a REST catalog
 * writes its own, so the effects are compared instead). assert-table-uuid, when present, must
 * name `md`'s table; the other requirements are not checked (they held on the base, and the
 * table may have moved on since). Effects: add-snapshot, its snapshot (see
 * ICM_CHANGES_SEEN_OURS; when it is not there nothing else counts); remove-snapshots, none of
 * the ids left; set-snapshot-ref, the ref at that snapshot with that type and retention;
 * remove-snapshot-ref, no such ref; set-properties, each key at its value; remove-properties,
 * none of the keys; set-(partition-)statistics, that snapshot's entry names the same file;
 * remove-(partition-)statistics, no entry for the snapshot; remove-partition-specs /
 * remove-schemas, none of the ids left. No updates: ICM_CHANGES_NOT_SEEN.
 * @param[out] out the answer (ICM_CHANGES_NOT_SEEN on any error)
 * @return 0; ICM_EINVALID (a NULL argument).
 */
ICM_EXTERN(int) icm_table_changes_seen(icm_changes_seen *out, const icm_table_changes *c,
                                       const icm_table_metadata *md);

ICM_END_DECL

#endif /* ICEMAINT_UPDATE_H */
