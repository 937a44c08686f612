/*
 * icemaint/transaction.h: transactions on a table: queue snapshot producers (append, add-files,
 * delete, replace) and metadata updates (properties, branches and tags, current snapshot), then
 * commit them as one new metadata version with retries, and clean up exactly the files the
 * transaction wrote itself.
 *
 * Source: Iceberg spec "Snapshots", "Manifest Lists", "Manifests", "Sequence Numbers", "Row
 * Lineage" (v3), "Snapshot References"; Java's SnapshotProducer/BaseTransaction commit and
 * cleanup rules; in words: docs/semantics.md#transaction-cleanup and #commit-outcomes.
 *
 * Files and who owns them:
 *  - caller-supplied files (icm_txn_append_file with a path the transaction did not hand out,
 *    icm_txn_add_parquet_file) are NEVER deleted by the transaction, on any path;
 *  - transaction-owned files are the data-file locations it handed out (icm_txn_new_data_file)
 *    and the manifests and manifest lists it writes while applying its operations.
 * The cleanup rule for owned files:
 *  - commit failed definitively (ICM_ECOMMIT_FAILED: conflict with retries exhausted, or a
 *    validation on a refreshed base proves the change cannot apply) → every owned file of every
 *    attempt is deleted;
 *  - any other error before the commit was sent (I/O writing a manifest, bad input) → every
 *    owned file is deleted, except a manifest or manifest list whose write ended in
 *    ICM_EOUTCOME_UNKNOWN (the store lost the answer) and that does not read back with the
 *    transaction's bytes: it is not proven ours, so it is left in place;
 *  - outcome unknown (ICM_ECOMMIT_UNKNOWN) → nothing is deleted (the table may reference them);
 *  - a catalog's refusal of the commit request (ICM_EAUTH, ICM_EINVALID, ICM_ENOTFOUND from a
 *    REST catalog) → every owned file is deleted only when the table, reloaded, reaches none
 *    of them from a snapshot it gained since the commit began (a gateway may have passed the
 *    request on, and another writer built on it and expired its snapshot); one reached →
 *    ICM_ECOMMIT_UNKNOWN, nothing deleted (docs: README "REST catalogs");
 *  - success → files of superseded attempts (and handed-out data files that were never
 *    appended) are deleted, but only after the committed snapshots were found again by id in
 *    freshly loaded table metadata, and while no snapshot the table gained since the commit
 *    began reaches them; otherwise nothing is deleted. A conflict answer whose retry finds
 *    the attempt's own snapshot in the refreshed table is a success (the commit applied);
 *  - icm_txn_abort(), or icm_txn_free() before a commit → every owned file is deleted.
 * Deletes are best effort: a file that cannot be deleted is left as an orphan (never an error).
 *
 * Operations are recorded, not applied, when queued: icm_txn_commit() applies them in order to
 * the table's current metadata, and re-applies them to a refreshed base on every retry. Data
 * changes queued one after another (appends, deletes) form one snapshot; a metadata update in
 * between, or icm_txn_replace_files(), starts a new one. Snapshots go to branch `main`.
 *
 * Thread safety: one thread per transaction; the table must not be used by others meanwhile.
 */
#ifndef ICEMAINT_TRANSACTION_H
#define ICEMAINT_TRANSACTION_H

#include "catalog.h"
#include "common.h"
#include "manifest.h"
#include "metadata.h"

ICM_BEGIN_DECL

typedef struct icm_txn icm_txn;

/**
 * Start a transaction on `table` (borrowed: must outlive the transaction; it is refreshed and
 * committed through).
 * @return 0; ICM_EREADONLY (static table); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_txn_new(icm_txn **out, icm_table *table);

/** Free a transaction. One that was never committed (or whose commit was not attempted) first
 *  deletes its owned files, as icm_txn_abort(). NULL is ok. */
ICM_EXTERN(void) icm_txn_free(icm_txn *txn);

/** Abandon the transaction: delete every owned file now. Later calls return ICM_EINVALID.
 *  After a commit (any outcome) this deletes nothing. @return 0. */
ICM_EXTERN(int) icm_txn_abort(icm_txn *txn);

/* ---- snapshot producers ---- */

/**
 * Append a data or delete file description (fast append: a new manifest, the base's manifests
 * carried over). Deep-copied. Required: file_path, record_count >= 0, file_size_in_bytes >= 0;
 * partition: the raw partition tuple under the table's default spec (empty for unpartitioned);
 * delete files need format version 2+. The file is caller-owned unless its path was handed out
 * by icm_txn_new_data_file(). A caller-owned file inside an icemaint trash is refused as by
 * icm_txn_add_parquet_file (by its name, where a link leads, and on local disk through any
 * mount of its folder); nothing is queued then.
 * @return 0; ICM_EINVALID (missing field; state); ICM_EREFUSED (inside a trash, or on local
 *         disk where that cannot be told: the mount table unreadable); ICM_EIO or a listing's
 *         error (looking for a trash's journal); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_txn_append_file(icm_txn *txn, const icm_data_file *file);

/**
 * Register an existing Parquet file (caller-owned, never deleted) as a new data file: record
 * count from the Parquet footer, size from stat. Unpartitioned tables only. The file's schema
 * must fit the table's current schema as PyIceberg's add_files decides: columns matched by
 * name (and, when every column has a Parquet field id, that id must be the table's); no column
 * the table lacks; every required table column present and required; types equal or promoted
 * (int -> long, float -> double, string <-> binary, decimal precision widened, fixed[16] ->
 * uuid). Files icemaint cannot check soundly (unsigned 32/64-bit ints, INT96, legacy list/map
 * layouts, ...) are refused too. A file inside an icemaint trash
 * (`<trash>/<table-uuid>/files/` beside `journal/<name>.jsonl`; by its name, where a link
 * leads, and on local disk by where it lies on its file system, so through a bind mount of a
 * trash's folder too) is refused (ICM_EREFUSED, naming the trash): `icm_trash_expire` deletes
 * it and `icm_trash_restore` moves it away. On local disk, a file below a folder named like a
 * table-uuid's holding `files/` that no mount shows, or any file when /proc/self/mountinfo
 * cannot be read, is refused too (ICM_EREFUSED: whether it is trashed cannot be told).
 * Nothing is queued on a refusal. The commit refuses a path
 * that is already live in the table, and sets `schema.name-mapping.default` from the current
 * schema when absent (files written without Iceberg field ids are read by column name), as
 * PyIceberg's add_files does.
 * @return 0; ICM_ENOTFOUND; ICM_EIO; ICM_EINVALID (not a Parquet file, unreadable footer, or a
 *         schema that does not fit: the message names the file and the column);
 *         ICM_EUNSUPPORTED (partitioned table); ICM_EREFUSED (inside a trash, or cannot be
 *         told); ICM_ENOMEM; a listing's error (looking for a trash's journal).
 */
ICM_EXTERN(int) icm_txn_add_parquet_file(icm_txn *txn, const char *location);

/**
 * Hand out the location for a new data file that the caller then writes (through the table's
 * FileIO) and appends with icm_txn_append_file(). The transaction owns the file (see the
 * cleanup rule). Location rules as Java and PyIceberg: the data directory is
 * `write.data.path` or `<table location>/data`; `partition_path` (e.g. "day=2024-01-01", NULL
 * for none) goes below it; with `write.object-storage.enabled=true` a murmur3 hash of the file
 * name (with partition path when `write.object-storage.partitioned-paths` is true, the default)
 * is inserted as directories `bbbb/bbbb/bbbb/bbbbbbbb`.
 * @param extension file extension without the dot ("parquet")
 * @param[out] out_location new string (icm_free)
 * @return 0; ICM_EINVALID (state, empty extension); ICM_EIO (no randomness); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_txn_new_data_file(char **out_location, icm_txn *txn,
                                      const char *partition_path, const char *extension);

/**
 * Remove a live data or delete file, by path (compared as locations: `/p` == `file:/p`).
 * Validated at commit: the file must be live (ADDED or EXISTING) in the base snapshot, else
 * ICM_EINVALID on the first attempt, or ICM_ECOMMIT_FAILED on a retry (a concurrent commit
 * removed it). The file itself is never deleted (expiry does that later).
 * @return 0; ICM_EINVALID (state); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_txn_delete_file(icm_txn *txn, const char *location);

/**
 * Replace files in one `replace` snapshot (copy-on-write rewrite, compaction): remove
 * `n_remove` paths (validated live as for icm_txn_delete_file) and add `n_add` files (as
 * icm_txn_append_file, whose trash check applies to each). Always starts its own snapshot.
 * @return 0; ICM_EINVALID; ICM_EREFUSED, ICM_EIO or a listing's error (an added file inside a
 *         trash, as icm_txn_append_file); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_txn_replace_files(icm_txn *txn, const char *const *remove, size_t n_remove,
                                      const icm_data_file *add, size_t n_add);

/* ---- metadata updates ---- */

/** Set (value non-NULL) or remove (value NULL) a table property. @return 0; ICM_EINVALID
 *  (an empty key; a value of the wrong type for a typed property: icm_table_property_check);
 *  ICM_ENOMEM. */
ICM_EXTERN(int) icm_txn_set_property(icm_txn *txn, const char *key, const char *value);

/**
 * Check `value` for the table property `key` where Iceberg gives it a type (Java's
 * TableProperties, read by PropertyUtil): integers as Integer.parseInt / Long.parseLong read
 * them (an optional sign and ASCII digits, within 32 / 64 bits; the history.expire.* and
 * commit.retry.* ones not negative), booleans `true` or `false` in any case (Java's
 * Boolean.parseBoolean reads every other value as false, so `maybe` would silently turn a
 * setting off). Other properties are strings; a NULL value (a removal) is always fine.
 * icm_txn_set_property checks every value so.
 * @param[out] closest NULL, or set to the known property name a typing slip or two from a
 *             `key` Iceberg does not define (a static string), else NULL.
 * @return 0; ICM_EINVALID naming the property, the value and the type expected.
 */
ICM_EXTERN(int) icm_table_property_check(const char **closest, const char *key,
                                         const char *value);

/* icm_ref_retention (a ref's retention fields; unset ones are omitted) is in update.h. */

/** Flags of icm_txn_set_ref(). */
#define ICM_TXN_REF_REPLACE 0x1u     /**< replace an existing ref (else create a new one) */
#define ICM_TXN_REF_SNAPSHOT_ID 0x2u /**< point at `snapshot_id` (else at the current snapshot
                                          when the operation applies) */

/**
 * Create a branch or tag, or with ICM_TXN_REF_REPLACE in `flags` replace one. Without
 * ICM_TXN_REF_SNAPSHOT_ID the ref points at the current snapshot when the operation applies
 * (`snapshot_id` is then ignored).
 * Checked at commit: create needs a free name, replace an existing ref of the same type, the
 * snapshot must exist; tags take no max_snapshot_age_ms/min_snapshots_to_keep. Replacing
 * `main` moves the current snapshot (and adds a snapshot-log entry).
 * @param retention NULL = none (replace: NULL keeps the ref's current retention fields)
 * @param flags     ICM_TXN_REF_* or'ed together; 0 = create, at the current snapshot
 * @return 0; ICM_EINVALID (empty name, tag with branch-only fields, an unknown flag, state);
 *         ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_txn_set_ref(icm_txn *txn, const char *name, icm_ref_type type,
                                unsigned flags, int64_t snapshot_id,
                                const icm_ref_retention *retention);

/** Remove a branch or tag. `main` is refused (ICM_EINVALID at once). Checked at commit: the
 *  ref must exist. @return 0; ICM_EINVALID; ICM_ENOMEM. */
ICM_EXTERN(int) icm_txn_remove_ref(icm_txn *txn, const char *name);

/**
 * Make snapshot `snapshot_id` current (branch `main`), adding a snapshot-log entry.
 * `rollback` = true additionally requires it to be an ancestor of the current snapshot (Java's
 * rollbackTo). Checked at commit. @return 0; ICM_EINVALID (state); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_txn_set_current_snapshot(icm_txn *txn, int64_t snapshot_id, bool rollback);

/**
 * A metadata-only update computed by the caller (e.g. snapshot expiry): on every attempt,
 * `fn` edits the working copy `md` of the metadata (the base with the earlier operations
 * applied). fn returns 0 or a negative icm code, which aborts the attempt (treated as a
 * validation failure: ICM_ECOMMIT_FAILED on a retry). `payload` is borrowed.
 * A commit is requirements and updates (icemaint/update.h): what fn changed is sent as
 * set-properties / remove-properties, so fn may change table properties only; a function that
 * changed anything else fails the commit with ICM_EUNSUPPORTED (owned files deleted).
 * @return 0; ICM_EINVALID; ICM_ENOMEM.
 */
typedef int (*icm_txn_metadata_fn)(icm_table_metadata *md, void *payload);
ICM_EXTERN(int) icm_txn_update_metadata(icm_txn *txn, icm_txn_metadata_fn fn, void *payload);

/* ---- commit ---- */

/**
 * Apply every queued operation to the table's current metadata, as requirements and updates
 * (add-snapshot and set-snapshot-ref of `main` for a snapshot, set-snapshot-ref /
 * remove-snapshot-ref for refs, set-properties / remove-properties; the requirements Java's
 * UpdateRequirements derives: assert-table-uuid, assert-ref-snapshot-id of each ref set, as
 * the base had it), and commit them through icm_table_commit_changes(). On
 * ICM_ECOMMIT_FAILED the table is refreshed and the operations are
 * re-applied (new manifests and manifest list per attempt) up to `commit.retry.num-retries`
 * (default 4) more times, sleeping min(`commit.retry.min-wait-ms` (100) * 2^(n-1),
 * `commit.retry.max-wait-ms` (60000)) plus up to 10% jitter, while less than
 * `commit.retry.total-timeout-ms` (1800000) has passed. A transaction is committed at most once.
 * With no queued operation nothing is written and 0 is returned.
 * @return 0 (the table handle holds the new metadata);
 *         ICM_ECOMMIT_FAILED (owned files deleted; message says why);
 *         ICM_ECOMMIT_UNKNOWN (nothing deleted; message names the metadata file to look for);
 *         ICM_EINVALID / ICM_ENOTFOUND / ICM_EEXISTS (an operation does not apply to the base:
 *         message names it), ICM_EIO, ICM_ENOMEM, ICM_EUNSUPPORTED (owned files deleted);
 *         ICM_EOUTCOME_UNKNOWN (writing a manifest or manifest list lost its answer; nothing
 *         was committed; owned files deleted as above, a file whose write lost its answer only
 *         when it reads back as ours). Owned files are deleted only on the outcomes listed,
 *         which prove the commit did not land (a whitelist); any other code (a catalog's
 *         ICM_ENET, ...) keeps them, as ICM_ECOMMIT_UNKNOWN does, and the message says so.
 */
ICM_EXTERN(int) icm_txn_commit(icm_txn *txn);

/** Number of commit attempts made so far (0 before icm_txn_commit). */
ICM_EXTERN(int) icm_txn_attempts(const icm_txn *txn);

/** Id of the last snapshot the transaction produced in its latest commit attempt (after a
 *  successful commit: the committed one); false when none (metadata-only transaction, or no
 *  attempt yet). */
ICM_EXTERN(bool) icm_txn_snapshot_id(int64_t *out, const icm_txn *txn);

ICM_END_DECL

#endif /* ICEMAINT_TRANSACTION_H */
