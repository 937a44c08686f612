/*
 * icemaint/metadata.h: Iceberg table metadata (spec section "Table Metadata"), format v1-v3.
 *
 * An icm_table_metadata is the parsed JSON document plus typed views of what maintenance needs
 * (snapshots, refs, logs, statistics, properties). Edits change the JSON document itself, so
 * every field icemaint does not understand survives a write untouched ("lossless"). Editing
 * happens on a copy (icm_table_metadata_copy); the object read from a file is never changed by
 * writing a new one.
 *
 * Strings and structs returned by getters are borrowed: valid until the metadata is freed or
 * edited. A metadata object may be read from several threads at once; edits need one thread.
 * Getters take a non-NULL metadata object.
 *
 * Validation follows the spec's "Table Metadata Fields" table and what Iceberg Java 1.11 accepts
 * (fixture files Java rejects are rejected here too), and is stricter where icemaint would
 * otherwise have to guess: duplicate JSON keys, integers beyond int64, and a current-snapshot-id
 * (other than -1/null) that names no snapshot are errors. Messages are one line,
 * "<field path>: <reason>" (e.g. "snapshots[3].snapshot-id: expected an integer, found a
 * string"), with the file as the error location.
 */
#ifndef ICEMAINT_METADATA_H
#define ICEMAINT_METADATA_H

#include "common.h"
#include "fileio.h"

ICM_BEGIN_DECL

typedef struct icm_table_metadata icm_table_metadata;

/** Snapshot (spec "Snapshots"). */
typedef struct icm_snapshot {
    int64_t snapshot_id;
    bool has_parent;
    int64_t parent_snapshot_id;       /**< valid when has_parent */
    int64_t sequence_number;          /**< 0 when absent, always in v1 (spec: v1 data has
                                           sequence 0); never above last-sequence-number */
    int64_t timestamp_ms;
    const char *manifest_list;        /**< NULL for a v1 snapshot with embedded `manifests` */
    size_t manifest_count;            /**< v1 embedded `manifests` count (0 when manifest_list) */
    const char *const *manifests;     /**< v1 embedded manifest locations */
    const char *operation;            /**< summary "operation"; NULL without summary or
                                           operation (BigQuery, Snowflake) */
    bool has_schema_id;
    int32_t schema_id;
    bool has_first_row_id;            /**< v3 row lineage */
    int64_t first_row_id;
    bool has_added_rows;
    int64_t added_rows;
} icm_snapshot;

typedef enum icm_ref_type { ICM_REF_BRANCH = 0, ICM_REF_TAG = 1 } icm_ref_type;

/** Named reference (spec "Snapshot References"). Unset retention fields use table defaults;
 *  set ones are positive (validated), and tags never have the branch-only ones. */
typedef struct icm_ref {
    const char *name;
    icm_ref_type type;
    int64_t snapshot_id;
    bool has_max_ref_age_ms;
    int64_t max_ref_age_ms;
    bool has_max_snapshot_age_ms;     /**< branches only */
    int64_t max_snapshot_age_ms;
    bool has_min_snapshots_to_keep;   /**< branches only */
    int32_t min_snapshots_to_keep;
    bool implicit;                    /**< the `main` branch derived from current-snapshot-id
                                           because `refs` has no `main`; not in the JSON */
} icm_ref;

/** snapshot-log entry. */
typedef struct icm_snapshot_log_entry {
    int64_t timestamp_ms;
    int64_t snapshot_id;
} icm_snapshot_log_entry;

/** metadata-log entry. */
typedef struct icm_metadata_log_entry {
    int64_t timestamp_ms;
    const char *metadata_file;
} icm_metadata_log_entry;

/** statistics or partition-statistics file (spec "Table Statistics"). */
typedef struct icm_statistics_file {
    int64_t snapshot_id;
    const char *path;               /**< `statistics-path` */
    int64_t file_size_in_bytes;     /**< `file-size-in-bytes` (required by the spec) */
    bool partition_statistics;      /**< from `partition-statistics` */
} icm_statistics_file;

/* ---- parse, read, write ---- */

/**
 * Parse and validate a metadata JSON document.
 * @param[out] out      new metadata (icm_table_metadata_free); NULL on failure
 * @param json, len     the document (not necessarily NUL-terminated; nothing after len is
 *                      read), or its gzip or zstd compressed form (detected by magic bytes,
 *                      which no JSON text can start with); copied
 * @param location      where it came from, for messages and icm_table_metadata_file(); may be
 *                      NULL
 * @return 0; ICM_EINVALID (not JSON: the error carries line/column/offset; not table metadata;
 *         a missing, null or ill-typed field; a snapshot, ref or log that contradicts the rest;
 *         a corrupt or truncated compressed stream; more than 1 GiB once inflated);
 *         ICM_EUNSUPPORTED (format-version outside 1..3); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_metadata_parse(icm_table_metadata **out, const char *json, size_t len,
                                         const char *location);

/**
 * Read and parse a metadata file through `io` (icm_table_metadata_parse() on its bytes, so gzip
 * and zstd files are recognised by content whatever their name).
 * @return 0; ICM_ENOTFOUND; ICM_EIO; ICM_EINVALID; ICM_EUNSUPPORTED; ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_metadata_read(icm_table_metadata **out, icm_fileio *io,
                                        const char *location);

/**
 * Find the current metadata file of a table directory in filesystem ("Hadoop") layout, as Iceberg
 * Java's HadoopTableOperations does, using only `io`:
 *  1. `metadata/version-hint.text` (or `version-hint.txt`), trimmed: a number N names
 *     `metadata/vN.metadata.json` (or `vN.gz.metadata.json`, `vN.metadata.json.gz`); any other
 *     text is a file stem naming `metadata/<stem>.metadata.json`; an empty hint counts as none;
 *  2. without a usable hint, the highest `vN.metadata.json` found by listing `metadata/`;
 *  3. from a numbered version N, `vN+1`, `vN+2`, ... while they exist (a writer may have
 *     committed and crashed before updating the hint).
 * @param table_dir   the table's base location (path or URI), with or without trailing '/'
 * @param[out] out_location  new string (icm_free): `<table_dir>/metadata/<file>`
 * @return 0; ICM_ENOTFOUND (no hint and no vN file, or the hinted file does not exist);
 *         ICM_EINVALID (a hint that is neither a number nor a plain file name); ICM_EIO;
 *         ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_metadata_find_current(char **out_location, icm_fileio *io,
                                                const char *table_dir);

/**
 * Serialise to JSON text (new, NUL-terminated, icm_free; *out_len may be NULL): 2-space
 * indented, keys in document order, integers exact, reals in the shortest form that reads back
 * to the same double. Deterministic; parsing the result gives an equal document.
 * @return 0, ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_metadata_to_json(char **out, size_t *out_len,
                                           const icm_table_metadata *md);

/** icm_table_metadata_to_json() gzipped (for `write.metadata.compression-codec=gzip`; name the
 *  file `*.gz.metadata.json`). @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_to_json_gzip(char **out, size_t *out_len,
                                                const icm_table_metadata *md);

/** Deep copy for editing (same document and file). @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_copy(icm_table_metadata **out, const icm_table_metadata *md);

ICM_EXTERN(void) icm_table_metadata_free(icm_table_metadata *md);

/* ---- getters ---- */

/** Location the metadata was read from (as given to parse/read); NULL if none. */
ICM_EXTERN(const char *) icm_table_metadata_file(const icm_table_metadata *md);
ICM_EXTERN(int) icm_table_metadata_format_version(const icm_table_metadata *md);
/** `table-uuid`; NULL when absent (allowed in v1). */
ICM_EXTERN(const char *) icm_table_metadata_uuid(const icm_table_metadata *md);
ICM_EXTERN(const char *) icm_table_metadata_location(const icm_table_metadata *md);
ICM_EXTERN(int64_t) icm_table_metadata_last_sequence_number(const icm_table_metadata *md);
ICM_EXTERN(int64_t) icm_table_metadata_last_updated_ms(const icm_table_metadata *md);
/** Current snapshot id; false when the table has none (absent, null or -1). */
ICM_EXTERN(bool) icm_table_metadata_current_snapshot_id(int64_t *out,
                                                        const icm_table_metadata *md);
/** v3 `next-row-id`; false when absent. */
ICM_EXTERN(bool) icm_table_metadata_next_row_id(int64_t *out, const icm_table_metadata *md);

ICM_EXTERN(size_t) icm_table_metadata_snapshot_count(const icm_table_metadata *md);
/** i-th snapshot in document order. */
ICM_EXTERN(const icm_snapshot *) icm_table_metadata_snapshot_at(const icm_table_metadata *md,
                                                                size_t i);
/** Snapshot by id; NULL when absent. */
ICM_EXTERN(const icm_snapshot *) icm_table_metadata_snapshot_by_id(const icm_table_metadata *md,
                                                                   int64_t snapshot_id);
/** The value of a snapshot summary key; NULL when absent. */
ICM_EXTERN(const char *) icm_snapshot_summary_get(const icm_table_metadata *md,
                                                  const icm_snapshot *snap, const char *key);

/** Refs, in document order. A table with a current snapshot always has branch `main` (spec
 *  rule): when `refs` has no `main`, one is added last with `implicit` set. */
ICM_EXTERN(size_t) icm_table_metadata_ref_count(const icm_table_metadata *md);
ICM_EXTERN(const icm_ref *) icm_table_metadata_ref_at(const icm_table_metadata *md, size_t i);
ICM_EXTERN(const icm_ref *) icm_table_metadata_ref_by_name(const icm_table_metadata *md,
                                                           const char *name);

ICM_EXTERN(size_t) icm_table_metadata_snapshot_log_count(const icm_table_metadata *md);
ICM_EXTERN(const icm_snapshot_log_entry *)
icm_table_metadata_snapshot_log_at(const icm_table_metadata *md, size_t i);
ICM_EXTERN(size_t) icm_table_metadata_metadata_log_count(const icm_table_metadata *md);
ICM_EXTERN(const icm_metadata_log_entry *)
icm_table_metadata_metadata_log_at(const icm_table_metadata *md, size_t i);

/** Whether `md`, read from `md_location`, is or follows the metadata file `earlier`:
 *  md_location names it, or md's metadata-log does (names compared as icemaint compares
 *  locations, so `s3a://` and `s3://` spellings of one object agree). How a reload is told
 *  from a stale or replaced table's metadata (a lagging replica, a table dropped and created
 *  again under the name): neither names the file the run started from or committed. A catalog
 *  that trims the log (write.metadata.previous-versions-max) past `earlier` makes a true
 *  successor unprovable: false then, and callers keep what they would have deleted.
 *  false for any NULL argument. */
ICM_EXTERN(bool) icm_table_metadata_follows(const icm_table_metadata *md, const char *md_location,
                                           const char *earlier);

/** `statistics` entries followed by `partition-statistics` entries, in document order. */
ICM_EXTERN(size_t) icm_table_metadata_statistics_count(const icm_table_metadata *md);
ICM_EXTERN(const icm_statistics_file *)
icm_table_metadata_statistics_at(const icm_table_metadata *md, size_t i);

ICM_EXTERN(size_t) icm_table_metadata_property_count(const icm_table_metadata *md);
/** i-th property (document order); *key and *value borrowed. */
ICM_EXTERN(void) icm_table_metadata_property_at(const char **key, const char **value,
                                                const icm_table_metadata *md, size_t i);
/** Property value; NULL when absent. */
ICM_EXTERN(const char *) icm_table_metadata_property(const icm_table_metadata *md,
                                                     const char *key);

ICM_EXTERN(size_t) icm_table_metadata_schema_count(const icm_table_metadata *md);
ICM_EXTERN(int32_t) icm_table_metadata_current_schema_id(const icm_table_metadata *md);
ICM_EXTERN(size_t) icm_table_metadata_spec_count(const icm_table_metadata *md);
ICM_EXTERN(int32_t) icm_table_metadata_default_spec_id(const icm_table_metadata *md);
/** Number of `sort-orders` entries; 0 when absent (v1). */
ICM_EXTERN(size_t) icm_table_metadata_sort_order_count(const icm_table_metadata *md);

/** Compact JSON text (new, icm_free) of the schema with this id (a schema without
 *  `schema-id` counts as id 0); ICM_ENOTFOUND when absent. For v1 metadata with only `schema`,
 *  that one (its id is current-schema-id). Used to write manifest headers. @return 0,
 *  ICM_ENOTFOUND, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_schema_json(char **out, const icm_table_metadata *md,
                                               int32_t schema_id);
/** Compact JSON text (new, icm_free) of the partition spec's `fields` array for spec_id (v1
 *  `partition-spec` is spec 0). @return 0, ICM_ENOTFOUND, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_spec_fields_json(char **out, const icm_table_metadata *md,
                                                    int32_t spec_id);

/* ---- lossless edits (on a copy; each re-derives the typed views) ----
 * Each edit changes a copy of the JSON document and re-validates it before swapping it in, so
 * an edit that fails (any code) leaves the object exactly as it was. Borrowed pointers from
 * getters are invalid after a successful edit. */

/**
 * Remove the snapshots with these ids, the refs and statistics / partition-statistics entries
 * that point at them, and snapshot-log entries as Iceberg Java does: an entry whose snapshot no
 * longer exists is dropped together with every entry before it (the history must not claim a
 * removed snapshot was ever current before later ones). Unknown ids are ignored; parents of
 * kept snapshots may now be missing, which the spec allows.
 * @return 0; ICM_EREFUSED (an id is the current snapshot, i.e. the main branch head);
 *         ICM_EINVALID (ids NULL with n > 0); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_metadata_remove_snapshots(icm_table_metadata *md, const int64_t *ids,
                                                    size_t n);
/** Remove a ref by name. @return 0; ICM_ENOTFOUND when absent; ICM_EREFUSED for `main`
 *  (the spec's main branch never expires; removing it would unset the current snapshot). */
ICM_EXTERN(int) icm_table_metadata_remove_ref(icm_table_metadata *md, const char *name);
/** Set (value non-NULL) or remove (value NULL) a property. A new key goes last; a replaced one
 *  keeps its place. @return 0; ICM_EINVALID (NULL key, key or value not UTF-8); ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_set_property(icm_table_metadata *md, const char *key,
                                                const char *value);
/** Append {"timestamp-ms", "metadata-file"} to metadata-log (created when absent).
 *  @return 0; ICM_EINVALID (file NULL or not UTF-8; or timestamp_ms more than a minute before
 *  the previous entry or after last-updated-ms, which Java would refuse); ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_append_metadata_log(icm_table_metadata *md,
                                                       int64_t timestamp_ms, const char *file);
/** Drop the oldest metadata-log entries so at most `keep` remain. @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_trim_metadata_log(icm_table_metadata *md, size_t keep);
/** Set last-updated-ms (in place in the key order). @return 0; ICM_EINVALID (more than a minute
 *  before the last snapshot-log or metadata-log entry); ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_set_last_updated_ms(icm_table_metadata *md, int64_t ms);

ICM_END_DECL

#endif /* ICEMAINT_METADATA_H */
