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
    int64_t sequence_number;          /**< 0 in v1 metadata (spec: v1 data has sequence 0) */
    int64_t timestamp_ms;
    const char *manifest_list;        /**< NULL for a v1 snapshot with embedded `manifests` */
    size_t manifest_count;            /**< v1 embedded `manifests` count (0 when manifest_list) */
    const char *const *manifests;     /**< v1 embedded manifest locations */
    const char *operation;            /**< summary "operation"; NULL if no summary */
    bool has_schema_id;
    int32_t schema_id;
    bool has_first_row_id;            /**< v3 row lineage */
    int64_t first_row_id;
    bool has_added_rows;
    int64_t added_rows;
} icm_snapshot;

typedef enum icm_ref_type { ICM_REF_BRANCH = 0, ICM_REF_TAG = 1 } icm_ref_type;

/** Named reference (spec "Snapshot References"). Unset retention fields use table defaults. */
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
    int64_t file_size_in_bytes;     /**< -1 when absent */
    bool partition_statistics;      /**< from `partition-statistics` */
} icm_statistics_file;

/* ---- parse, read, write ---- */

/**
 * Parse a metadata JSON document.
 * @param[out] out      new metadata (icm_table_metadata_free)
 * @param json, len     the document (not necessarily NUL-terminated); copied
 * @param location      where it came from, for messages and icm_table_metadata_location_file;
 *                      may be NULL
 * @return 0; ICM_EINVALID (not JSON, missing/ill-typed required field: message names the field);
 *         ICM_EUNSUPPORTED (format-version outside 1..3); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_metadata_parse(icm_table_metadata **out, const char *json, size_t len,
                                         const char *location);

/**
 * Read and parse a metadata file through `io`. Gzip (`.gz.metadata.json` or gzip magic) and
 * zstd (zstd magic) compressed files are inflated.
 * @return 0; ICM_ENOTFOUND; ICM_EIO; ICM_EINVALID; ICM_EUNSUPPORTED; ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_metadata_read(icm_table_metadata **out, icm_fileio *io,
                                        const char *location);

/** Serialise to JSON text (new, NUL-terminated, icm_free). Keys keep their input order.
 *  @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_to_json(const icm_table_metadata *md, char **out,
                                           size_t *out_len);

/** Serialise and gzip (for `write.metadata.compression-codec=gzip`). @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_to_json_gzip(const icm_table_metadata *md, char **out,
                                                size_t *out_len);

/** Deep copy for editing. @return 0, ICM_ENOMEM. */
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
ICM_EXTERN(bool) icm_table_metadata_current_snapshot_id(const icm_table_metadata *md,
                                                        int64_t *out);
/** v3 `next-row-id`; false when absent. */
ICM_EXTERN(bool) icm_table_metadata_next_row_id(const icm_table_metadata *md, int64_t *out);

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

/** Refs. A table with no `refs` but a current snapshot has branch `main` (spec rule). */
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

/** statistics followed by partition-statistics. */
ICM_EXTERN(size_t) icm_table_metadata_statistics_count(const icm_table_metadata *md);
ICM_EXTERN(const icm_statistics_file *)
icm_table_metadata_statistics_at(const icm_table_metadata *md, size_t i);

ICM_EXTERN(size_t) icm_table_metadata_property_count(const icm_table_metadata *md);
/** i-th property (document order); *key and *value borrowed. */
ICM_EXTERN(void) icm_table_metadata_property_at(const icm_table_metadata *md, size_t i,
                                                const char **key, const char **value);
/** Property value; NULL when absent. */
ICM_EXTERN(const char *) icm_table_metadata_property(const icm_table_metadata *md,
                                                     const char *key);

ICM_EXTERN(size_t) icm_table_metadata_schema_count(const icm_table_metadata *md);
ICM_EXTERN(int32_t) icm_table_metadata_current_schema_id(const icm_table_metadata *md);
ICM_EXTERN(size_t) icm_table_metadata_spec_count(const icm_table_metadata *md);
ICM_EXTERN(int32_t) icm_table_metadata_default_spec_id(const icm_table_metadata *md);
ICM_EXTERN(size_t) icm_table_metadata_sort_order_count(const icm_table_metadata *md);

/** JSON text (new, icm_free) of the schema with this id; ICM_ENOTFOUND when absent. For v1
 *  metadata with only `schema`, that one. Used to write manifest headers. */
ICM_EXTERN(int) icm_table_metadata_schema_json(const icm_table_metadata *md, int32_t schema_id,
                                               char **out);
/** JSON text (new) of the partition spec's `fields` array for spec_id; ICM_ENOTFOUND. */
ICM_EXTERN(int) icm_table_metadata_spec_fields_json(const icm_table_metadata *md, int32_t spec_id,
                                                    char **out);

/* ---- lossless edits (on a copy; each re-derives the typed views) ---- */

/** Remove the snapshots with these ids, plus snapshot-log entries, refs, statistics and
 *  partition-statistics entries that point at them. Unknown ids are ignored. @return 0, ENOMEM */
ICM_EXTERN(int) icm_table_metadata_remove_snapshots(icm_table_metadata *md, const int64_t *ids,
                                                    size_t n);
/** Remove a ref by name; ICM_ENOTFOUND when absent. */
ICM_EXTERN(int) icm_table_metadata_remove_ref(icm_table_metadata *md, const char *name);
/** Set (value non-NULL) or remove (value NULL) a property. @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_set_property(icm_table_metadata *md, const char *key,
                                                const char *value);
/** Append {timestamp_ms, metadata_file} to metadata-log. @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_table_metadata_append_metadata_log(icm_table_metadata *md,
                                                       int64_t timestamp_ms, const char *file);
/** Drop the oldest metadata-log entries so at most `keep` remain. */
ICM_EXTERN(int) icm_table_metadata_trim_metadata_log(icm_table_metadata *md, size_t keep);
ICM_EXTERN(int) icm_table_metadata_set_last_updated_ms(icm_table_metadata *md, int64_t ms);

ICM_END_DECL

#endif /* ICEMAINT_METADATA_H */
