/*
 * icemaint/manifest.h: reading and writing Iceberg manifest lists and manifests (format v1-v3),
 * decoded from Avro object container files held in memory.
 *
 * Source: Iceberg table spec, sections "Manifest Lists", "Manifests", "Sequence Number
 * Inheritance", "First Row ID Inheritance" and Appendix E (v1 → v2 defaults).
 *
 * Reading is streaming: an iterator decodes one Avro block at a time and hands out one borrowed
 * row per call; the row (and every pointer in it) stays valid until the next call or _free.
 * Strings in rows are NUL-terminated copies owned by the reader; `icm_raw` byte spans point into
 * the reader's current decompressed block. After a reader's _next() fails, only _free() may be
 * called on it. Readers are not thread-safe: one thread at a time per reader; different readers
 * may be used from different threads.
 *
 * Memory: a reader holds the file (borrowed) plus one decompressed block, so reading is bounded
 * by the largest block, not the file. Blocks decompressing to more than 1 GiB are refused
 * (ICM_EINVALID).
 *
 * Added in 0.1.
 */
#ifndef ICEMAINT_MANIFEST_H
#define ICEMAINT_MANIFEST_H

#include "common.h"
#include "errors.h"
#include "fileio.h"

ICM_BEGIN_DECL

/** Avro block compression codec (`write.avro.compression-codec`). */
typedef enum icm_avro_codec {
    ICM_AVRO_CODEC_NULL = 0,    /**< "uncompressed" / "none" */
    ICM_AVRO_CODEC_DEFLATE = 1, /**< "gzip" (the table property default) */
    ICM_AVRO_CODEC_SNAPPY = 2,  /**< "snappy" */
    ICM_AVRO_CODEC_ZSTD = 3     /**< "zstd" */
} icm_avro_codec;

/**
 * Map a `write.avro.compression-codec` table property value to a codec. NULL (property unset)
 * means gzip = deflate, as in Iceberg. Accepts gzip, deflate, snappy, zstd, zstandard,
 * uncompressed, none, null (case-insensitive).
 * @return 0, ICM_EUNSUPPORTED (unknown name, message names it).
 */
ICM_EXTERN(int) icm_avro_codec_from_property(icm_avro_codec *out, const char *value);

/** A byte span borrowed from a reader: the value's Avro binary encoding exactly as in the file
 *  (without the union branch index of optional fields), e.g. a `bytes` value keeps its length
 *  prefix. Writers copy these spans verbatim. */
typedef struct icm_raw {
    const uint8_t *data; /**< NULL when absent */
    size_t len;
} icm_raw;

/* ------------------------------------------------------------------------------------------ */
/* Manifest lists                                                                              */
/* ------------------------------------------------------------------------------------------ */

/** Spec "manifest_file.content" (517). */
typedef enum icm_manifest_content {
    ICM_MANIFEST_CONTENT_DATA = 0,
    ICM_MANIFEST_CONTENT_DELETES = 1
} icm_manifest_content;

/**
 * One manifest list entry (spec struct `manifest_file`). v1 files default as Appendix E says:
 * content DATA, sequence numbers 0. Counts are -1 with has_* false when the file omits them.
 *
 * Size-prefixed (docs/API.md rule 3, common.h), because icm_manifest_writer_finish() fills one
 * the caller allocates: initialise it with ICM_MANIFEST_FILE_INIT (struct_size =
 * sizeof(icm_manifest_file) as the caller was compiled). The writer refuses a summary whose
 * struct_size is below ICM_MANIFEST_FILE_SIZE_MIN (0 included) or above this library's sizeof
 * with ICM_EINVALID, and writes only the fields wholly within struct_size. Entries the library
 * hands out (icm_manifest_list_reader_next, icm_manifest_file_cb) have the library's
 * struct_size. As an input (icm_manifest_list_writer_add, icm_manifest_read) struct_size is
 * not read.
 */
typedef struct icm_manifest_file {
    size_t struct_size;             /**< sizeof(icm_manifest_file) of the caller */
    const char *manifest_path;      /**< 500; NUL-terminated */
    size_t manifest_path_len;
    int64_t manifest_length;        /**< 501, bytes */
    int32_t partition_spec_id;      /**< 502 */
    icm_manifest_content content;   /**< 517 (v1: DATA) */
    int64_t sequence_number;        /**< 515 (v1: 0). Writers: -1 = assign the list's */
    int64_t min_sequence_number;    /**< 516 (v1: 0). Writers: -1 = assign the list's */
    bool has_added_snapshot_id;
    int64_t added_snapshot_id;      /**< 503 */
    bool has_added_files_count, has_existing_files_count, has_deleted_files_count;
    int32_t added_files_count;      /**< 504 */
    int32_t existing_files_count;   /**< 505 */
    int32_t deleted_files_count;    /**< 506 */
    bool has_added_rows_count, has_existing_rows_count, has_deleted_rows_count;
    int64_t added_rows_count;       /**< 512 */
    int64_t existing_rows_count;    /**< 513 */
    int64_t deleted_rows_count;     /**< 514 */
    bool has_first_row_id;
    int64_t first_row_id;           /**< 520 (v3) */
    /** 507 partitions: the encoded Avro array of field_summary (509, 518, 510, 511) in the
     *  canonical field order, without the union index; data NULL when the field is null. */
    icm_raw partitions;
    icm_raw key_metadata;           /**< 519 encoded bytes value; data NULL when null */
} icm_manifest_file;

/** An icm_manifest_file with struct_size set and every other field zero / false / NULL. */
#define ICM_MANIFEST_FILE_INIT                                                                \
    {sizeof(icm_manifest_file), NULL, 0, 0, 0, ICM_MANIFEST_CONTENT_DATA, 0, 0, false, 0,     \
     false, false, false, 0, 0, 0, false, false, false, 0, 0, 0, false, 0, {NULL, 0},         \
     {NULL, 0}}
/** The smallest struct_size accepted: room for the first field, `manifest_path`. */
#define ICM_MANIFEST_FILE_SIZE_MIN \
    (offsetof(icm_manifest_file, manifest_path) + sizeof(const char *))

/** Options for reading manifest lists. Initialise with ICM_MANIFEST_LIST_READ_OPTIONS_INIT or
 *  icm_manifest_list_read_options_init() (docs/API.md rule 2: a zero-filled struct has version
 *  0 and is refused). */
typedef struct icm_manifest_list_read_options {
    unsigned int version;           /**< ICM_MANIFEST_LIST_READ_OPTIONS_VERSION */
    /** Table format version (1-3): used when the file's header has no usable `format-version`
     *  and its schema alone cannot tell v2 from v3. 0 = unknown. */
    int format_version;
} icm_manifest_list_read_options;

#define ICM_MANIFEST_LIST_READ_OPTIONS_VERSION 1
#define ICM_MANIFEST_LIST_READ_OPTIONS_INIT {ICM_MANIFEST_LIST_READ_OPTIONS_VERSION, 0}

/** Set `opts` to the defaults of `version` (as ICM_MANIFEST_LIST_READ_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_manifest_list_read_options_init(icm_manifest_list_read_options *opts,
                                                    unsigned version);

typedef struct icm_manifest_list_reader icm_manifest_list_reader;

/**
 * Open a manifest list held in memory.
 * @param[out] out new reader; free with icm_manifest_list_reader_free()
 * @param data,len the whole file; borrowed, must outlive the reader
 * @param location file name used in errors (copied)
 * @param opts NULL for defaults
 * @return 0; ICM_EINVALID (not Avro, corrupt header, or not a manifest list: no field 500);
 *         ICM_EUNSUPPORTED (codec); ICM_ENOMEM
 */
ICM_EXTERN(int) icm_manifest_list_reader_open(icm_manifest_list_reader **out, const void *data,
                                              size_t len, const char *location,
                                              const icm_manifest_list_read_options *opts);
/**
 * Next entry. @param[out] out borrowed; valid until the next call or _free.
 * @return 0; ICM_ITEROVER at the end; ICM_EINVALID (corrupt data: location and byte offset in
 *         icm_error_last()); ICM_ENOMEM
 */
ICM_EXTERN(int) icm_manifest_list_reader_next(const icm_manifest_file **out,
                                              icm_manifest_list_reader *r);
/** Format version decided at open (header, else schema, else opts): 1, 2 or 3. */
ICM_EXTERN(int) icm_manifest_list_reader_format_version(const icm_manifest_list_reader *r);
/** Avro header value (NUL-terminated copy owned by the reader) or NULL when absent (or out of
 *  memory: then icm_error_last() is ICM_ENOMEM). Keys as the spec names them: "snapshot-id",
 *  "parent-snapshot-id", "sequence-number", "format-version". Valid until _free. */
ICM_EXTERN(const char *) icm_manifest_list_reader_header(icm_manifest_list_reader *r,
                                                         const char *key);
/** NULL is ok. */
ICM_EXTERN(void) icm_manifest_list_reader_free(icm_manifest_list_reader *r);

/* ------------------------------------------------------------------------------------------ */
/* Manifests                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/** Spec "manifest_entry.status" (0). */
typedef enum icm_entry_status {
    ICM_ENTRY_EXISTING = 0,
    ICM_ENTRY_ADDED = 1,
    ICM_ENTRY_DELETED = 2
} icm_entry_status;

/** Spec "data_file.content" (134). */
typedef enum icm_file_content {
    ICM_FILE_CONTENT_DATA = 0,
    ICM_FILE_CONTENT_POSITION_DELETES = 1,
    ICM_FILE_CONTENT_EQUALITY_DELETES = 2
} icm_file_content;

/** Spec "data_file.file_format" (101), case-insensitive. */
typedef enum icm_file_format {
    ICM_FILE_FORMAT_OTHER = 0,
    ICM_FILE_FORMAT_AVRO,
    ICM_FILE_FORMAT_ORC,
    ICM_FILE_FORMAT_PARQUET,
    ICM_FILE_FORMAT_PUFFIN
} icm_file_format;

/**
 * Projection bits: which manifest entry fields to decode. Fields not asked for are skipped
 * without being materialised and are left absent (has_* false, NULL, and -1 for record_count
 * and file_size_in_bytes). status and content are always decoded (inheritance needs them);
 * FIRST_ROW_ID implies RECORD_COUNT.
 */
#define ICM_MANIFEST_FIELD_SNAPSHOT_ID ((uint64_t)1 << 0)
#define ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS ((uint64_t)1 << 1) /**< data and file seq. numbers */
#define ICM_MANIFEST_FIELD_FILE_PATH ((uint64_t)1 << 2)
#define ICM_MANIFEST_FIELD_FILE_FORMAT ((uint64_t)1 << 3)
#define ICM_MANIFEST_FIELD_PARTITION ((uint64_t)1 << 4)        /**< raw partition tuple */
#define ICM_MANIFEST_FIELD_RECORD_COUNT ((uint64_t)1 << 5)
#define ICM_MANIFEST_FIELD_FILE_SIZE ((uint64_t)1 << 6)
#define ICM_MANIFEST_FIELD_METRICS ((uint64_t)1 << 7)   /**< raw 108,109,110,137,125,128 */
#define ICM_MANIFEST_FIELD_KEY_METADATA ((uint64_t)1 << 8)
#define ICM_MANIFEST_FIELD_SPLIT_OFFSETS ((uint64_t)1 << 9)
#define ICM_MANIFEST_FIELD_EQUALITY_IDS ((uint64_t)1 << 10)
#define ICM_MANIFEST_FIELD_SORT_ORDER_ID ((uint64_t)1 << 11)
#define ICM_MANIFEST_FIELD_FIRST_ROW_ID ((uint64_t)1 << 12)
#define ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE ((uint64_t)1 << 13)
#define ICM_MANIFEST_FIELD_CONTENT_OFFSET ((uint64_t)1 << 14) /**< offset and size */
#define ICM_MANIFEST_FIELD_ALL (((uint64_t)1 << 15) - 1)
/** What snapshot expiry needs: status, snapshot id, sequence numbers, content, path, format,
 *  record count, size, referenced data file, content offset/size. */
#define ICM_MANIFEST_FIELDS_EXPIRY                                                            \
    (ICM_MANIFEST_FIELD_SNAPSHOT_ID | ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS |                   \
     ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |                          \
     ICM_MANIFEST_FIELD_RECORD_COUNT | ICM_MANIFEST_FIELD_FILE_SIZE |                         \
     ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE | ICM_MANIFEST_FIELD_CONTENT_OFFSET)

/** Spec struct `data_file` (field 2 of manifest_entry). */
typedef struct icm_data_file {
    icm_file_content content;       /**< 134 (v1: DATA) */
    const char *file_path;          /**< 100; NUL-terminated ("" when not projected) */
    size_t file_path_len;
    icm_file_format file_format;    /**< 101 */
    const char *file_format_name;   /**< 101 as written ("PARQUET", "parquet", ...); NULL when
                                         not projected */
    /** 102: the partition tuple's Avro encoding under the file's own partition schema, exactly
     *  as in the file (empty for unpartitioned). Copy it with a writer made by
     *  icm_manifest_writer_new_like(). */
    icm_raw partition;
    int64_t record_count;           /**< 103 */
    int64_t file_size_in_bytes;     /**< 104 */
    /** Raw metrics maps (encoded Avro arrays of key/value records, no union index), NULL data
     *  when null: 108 column_sizes, 109 value_counts, 110 null_value_counts,
     *  137 nan_value_counts, 125 lower_bounds, 128 upper_bounds. */
    icm_raw column_sizes, value_counts, null_value_counts, nan_value_counts, lower_bounds,
        upper_bounds;
    icm_raw key_metadata;           /**< 131 encoded bytes value */
    icm_raw split_offsets;          /**< 132 encoded array<long> */
    icm_raw equality_ids;           /**< 135 encoded array<int> */
    bool has_sort_order_id;
    int32_t sort_order_id;          /**< 140 */
    bool has_first_row_id;
    int64_t first_row_id;           /**< 142 (v3), after inheritance */
    const char *referenced_data_file; /**< 143; NULL when null */
    bool has_content_offset;
    int64_t content_offset;         /**< 144 */
    bool has_content_size_in_bytes;
    int64_t content_size_in_bytes;  /**< 145 */
} icm_data_file;

/** Spec struct `manifest_entry`, after inheritance. */
typedef struct icm_manifest_entry {
    icm_entry_status status;          /**< 0 */
    bool has_snapshot_id;
    int64_t snapshot_id;              /**< 1 (inherited from the manifest's added_snapshot_id) */
    bool has_sequence_number;
    int64_t sequence_number;          /**< 3 data sequence number (inherited, see below) */
    bool has_file_sequence_number;
    int64_t file_sequence_number;     /**< 4 */
    icm_data_file data_file;          /**< 2 */
} icm_manifest_entry;

/** Options for reading manifests. Initialise with ICM_MANIFEST_READ_OPTIONS_INIT or
 *  icm_manifest_read_options_init() (a zero-filled struct has version 0 and is refused). */
typedef struct icm_manifest_read_options {
    unsigned int version;           /**< ICM_MANIFEST_READ_OPTIONS_VERSION */
    /** ICM_MANIFEST_FIELD_* bits to decode; 0 = ICM_MANIFEST_FIELD_ALL. */
    uint64_t fields;
    /** Table format version fallback (see icm_manifest_list_read_options). 0 = unknown. */
    int format_version;
    /**
     * The manifest list entry that names this manifest (copied at open), for inheritance:
     * snapshot_id null → added_snapshot_id; sequence_number / file_sequence_number null →
     * the manifest's sequence_number when status is ADDED or the manifest's sequence number is
     * 0 (v1), else left unknown (has_ false); v3 first_row_id null on a DATA file (any status)
     * → manifest first_row_id + the record counts of the earlier DATA files whose first_row_id
     * was null (spec "First Row ID Inheritance"). NULL: no inheritance (values as written).
     */
    const icm_manifest_file *manifest;
} icm_manifest_read_options;

#define ICM_MANIFEST_READ_OPTIONS_VERSION 1
#define ICM_MANIFEST_READ_OPTIONS_INIT {ICM_MANIFEST_READ_OPTIONS_VERSION, 0, 0, NULL}

/** Set `opts` to the defaults of `version` (as ICM_MANIFEST_READ_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_manifest_read_options_init(icm_manifest_read_options *opts,
                                               unsigned version);

typedef struct icm_manifest_reader icm_manifest_reader;

/**
 * Open a manifest held in memory.
 * @param[out] out new reader; free with icm_manifest_reader_free()
 * @param data,len the whole file; borrowed, must outlive the reader
 * @param location file name used in errors (copied)
 * @param opts NULL for defaults (all fields, no inheritance)
 * @return 0; ICM_EINVALID (not Avro, corrupt header, not a manifest: no data_file with
 *         file_path); ICM_EUNSUPPORTED (codec); ICM_ENOMEM
 */
ICM_EXTERN(int) icm_manifest_reader_open(icm_manifest_reader **out, const void *data,
                                         size_t len, const char *location,
                                         const icm_manifest_read_options *opts);
/**
 * Next entry (all statuses, in file order). @param[out] out borrowed until the next call.
 * @return 0; ICM_ITEROVER; ICM_EINVALID (corrupt: location and offset in the last error);
 *         ICM_ENOMEM
 */
ICM_EXTERN(int) icm_manifest_reader_next(const icm_manifest_entry **out,
                                         icm_manifest_reader *r);
/** Format version decided at open: 1, 2 or 3. */
ICM_EXTERN(int) icm_manifest_reader_format_version(const icm_manifest_reader *r);
/** Header `content`: DATA unless the header says "deletes". */
ICM_EXTERN(icm_manifest_content) icm_manifest_reader_content(const icm_manifest_reader *r);
/** Header `partition-spec-id`, or -1 when absent. */
ICM_EXTERN(int32_t) icm_manifest_reader_partition_spec_id(const icm_manifest_reader *r);
/** Avro header value ("schema", "partition-spec", ...) owned by the reader, or NULL when
 *  absent or out of memory (as icm_manifest_list_reader_header()). */
ICM_EXTERN(const char *) icm_manifest_reader_header(icm_manifest_reader *r, const char *key);
ICM_EXTERN(void) icm_manifest_reader_free(icm_manifest_reader *r);

/* ---- convenience through FileIO ---- */

/**
 * Read every entry of the manifest list at `location` and call cb for each; stops when cb
 * returns non-zero and returns that value.
 * @return 0; cb's value; the codes of icm_fileio_read() and the reader
 */
typedef int (*icm_manifest_file_cb)(const icm_manifest_file *mf, void *payload);
ICM_EXTERN(int) icm_manifest_list_read(icm_fileio *io, const char *location,
                                       const icm_manifest_list_read_options *opts,
                                       icm_manifest_file_cb cb, void *payload);

/**
 * Read every entry of the manifest named by `mf` (mf->manifest_path) with inheritance from mf.
 * `opts->manifest` is ignored (mf is used). @return like icm_manifest_list_read().
 */
typedef int (*icm_manifest_entry_cb)(const icm_manifest_entry *e, void *payload);
ICM_EXTERN(int) icm_manifest_read(icm_fileio *io, const icm_manifest_file *mf,
                                  const icm_manifest_read_options *opts,
                                  icm_manifest_entry_cb cb, void *payload);

/**
 * v1 snapshots without a manifest list carry manifest paths inline (`manifests`). This reads
 * such a manifest's entries with v1 inheritance: the snapshot's id fills null snapshot ids and
 * every sequence number is 0. @return like icm_manifest_read().
 */
ICM_EXTERN(int) icm_manifest_read_v1_embedded(icm_fileio *io, const char *manifest_path,
                                              int64_t snapshot_id,
                                              const icm_manifest_read_options *opts,
                                              icm_manifest_entry_cb cb, void *payload);

/* ------------------------------------------------------------------------------------------ */
/* Writers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct icm_manifest_writer icm_manifest_writer;

/** Options for a new manifest. Initialise with ICM_MANIFEST_WRITER_OPTIONS_INIT or
 *  icm_manifest_writer_options_init(), then set at least format_version and the JSON fields:
 *  every other default is zero (a zero-filled struct has version 0 and is refused). */
typedef struct icm_manifest_writer_options {
    unsigned int version;           /**< ICM_MANIFEST_WRITER_OPTIONS_VERSION */
    int format_version;             /**< 1, 2 or 3 */
    icm_avro_codec codec;           /**< see icm_avro_codec_from_property() */
    int compression_level;          /**< -1 = codec default */
    icm_manifest_content content;   /**< DATA or DELETES (header `content`, v2+) */
    const char *schema_json;        /**< table schema JSON (header `schema`); required */
    int32_t schema_id;              /**< header `schema-id` (v2+); -1 = omit */
    /** Partition spec JSON: either the spec object {"spec-id":..,"fields":[..]} or just the
     *  fields array; header `partition-spec` gets the fields array. Required. */
    const char *partition_spec_json;
    int32_t partition_spec_id;      /**< header `partition-spec-id` */
    /** Avro record schema of the partition tuple; NULL = derived from the spec and schema
     *  (identity, bucket, truncate, year, month, day, hour, void over primitive types). */
    const char *partition_avro_schema_json;
    size_t block_bytes;             /**< uncompressed block target; 0 = 1 MiB */
} icm_manifest_writer_options;

#define ICM_MANIFEST_WRITER_OPTIONS_VERSION 1
#define ICM_MANIFEST_WRITER_OPTIONS_INIT                                                     \
    {ICM_MANIFEST_WRITER_OPTIONS_VERSION, 0, ICM_AVRO_CODEC_NULL, 0, ICM_MANIFEST_CONTENT_DATA, \
     NULL, 0, NULL, 0, NULL, 0}

/** Set `opts` to the defaults of `version` (as ICM_MANIFEST_WRITER_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_manifest_writer_options_init(icm_manifest_writer_options *opts,
                                                 unsigned version);

/**
 * Start a manifest. @return 0; ICM_EINVALID (bad JSON, spec referring to unknown fields,
 * unsupported transform); ICM_EUNSUPPORTED (format version); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_manifest_writer_new(icm_manifest_writer **out,
                                        const icm_manifest_writer_options *opts);
/**
 * Start a manifest whose header keys and partition schema are copied from `src` (so raw
 * partition tuples of src's entries can be copied exactly). opts may override format version,
 * codec, level and block size; its JSON fields are ignored. @return as _new.
 */
ICM_EXTERN(int) icm_manifest_writer_new_like(icm_manifest_writer **out,
                                             icm_manifest_reader *src,
                                             const icm_manifest_writer_options *opts);
/**
 * Append an entry. Absent fields (has_ false / NULL) are written as null; the partition must
 * be the raw tuple under this writer's partition schema. v1 files always get the entry's
 * snapshot_id (required there) and a block_size_in_bytes of 64 MiB. Every raw span is checked
 * to encode exactly one value of the written schema's type, so bad bytes never reach the file.
 * @return 0; ICM_EINVALID (nothing written, the writer stays usable: missing file_path, v1
 *         without snapshot_id or with delete files, equality deletes without equality_ids,
 *         content_offset/size before v3, raw bytes of the wrong shape); ICM_ENOMEM (then only
 *         _free may be called)
 */
ICM_EXTERN(int) icm_manifest_writer_add(icm_manifest_writer *w, const icm_manifest_entry *e);
/**
 * Finish the file. @param[out] out,out_len new buffer (icm_free).
 * @param[out] summary optional: counts for the manifest list entry (added/existing/deleted
 *  files and rows, min data sequence number over live entries or -1, content, spec id,
 *  manifest_length = out_len); manifest_path NULL (caller sets it); partitions absent.
 *  summary->struct_size set by the caller (ICM_MANIFEST_FILE_INIT).
 * @return 0; ICM_ENOMEM; ICM_ERROR (compression failure); ICM_EINVALID (a summary whose
 *  struct_size is refused as icm_manifest_file says: checked first, nothing finished or
 *  written, the writer stays usable)
 */
ICM_EXTERN(int) icm_manifest_writer_finish(char **out, size_t *out_len, icm_manifest_file *summary,
                                           icm_manifest_writer *w);
ICM_EXTERN(void) icm_manifest_writer_free(icm_manifest_writer *w);

typedef struct icm_manifest_list_writer icm_manifest_list_writer;

/** Options for a manifest list (headers per the spec's "Manifest Lists" section). Initialise
 *  with ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT or icm_manifest_list_writer_options_init(), then
 *  set at least format_version: every other default is zero (a zero-filled struct has version
 *  0 and is refused). */
typedef struct icm_manifest_list_writer_options {
    unsigned int version;           /**< ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION */
    int format_version;             /**< 1, 2 or 3 */
    icm_avro_codec codec;
    int compression_level;          /**< -1 = default */
    int64_t snapshot_id;            /**< header `snapshot-id` */
    bool has_parent_snapshot_id;
    int64_t parent_snapshot_id;     /**< header `parent-snapshot-id` ("null" when absent) */
    int64_t sequence_number;        /**< header `sequence-number` (v2+); fills -1 entries */
    int64_t first_row_id;           /**< v3: header `first-row-id`, next id to assign to data
                                         manifests without first_row_id */
    size_t block_bytes;             /**< 0 = 1 MiB */
} icm_manifest_list_writer_options;

#define ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION 1
#define ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT \
    {ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION, 0, ICM_AVRO_CODEC_NULL, 0, 0, false, 0, 0, 0, 0}

/** Set `opts` to the defaults of `version` (as ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_manifest_list_writer_options_init(icm_manifest_list_writer_options *opts,
                                                      unsigned version);

/** @return 0; ICM_EUNSUPPORTED (format version); ICM_ENOMEM */
ICM_EXTERN(int) icm_manifest_list_writer_new(icm_manifest_list_writer **out,
                                             const icm_manifest_list_writer_options *opts);
/**
 * Append a manifest list entry. sequence_number / min_sequence_number of -1 become the list's
 * sequence number (v2+). v3 (spec "First Row ID Assignment"): a DATA manifest without
 * first_row_id gets the next row id, which then advances by its added + existing rows counts;
 * delete manifests always get null. The raw partitions/key_metadata are checked and copied.
 * @return 0; ICM_EINVALID (missing path; v2+ without added_snapshot_id or without every file and
 *         row count, since a null count means "non-zero" to readers; raw bytes that do not
 *         encode one value of the field's type); ICM_ENOMEM
 */
ICM_EXTERN(int) icm_manifest_list_writer_add(icm_manifest_list_writer *w,
                                             const icm_manifest_file *mf);
/** The next row id after everything added (v3), i.e. the snapshot's first-row-id + added rows. */
ICM_EXTERN(int64_t) icm_manifest_list_writer_next_row_id(const icm_manifest_list_writer *w);
/** @param[out] out,out_len new buffer (icm_free). @return 0; ICM_ENOMEM */
ICM_EXTERN(int) icm_manifest_list_writer_finish(char **out, size_t *out_len,
                                                icm_manifest_list_writer *w);
ICM_EXTERN(void) icm_manifest_list_writer_free(icm_manifest_list_writer *w);

ICM_END_DECL

#endif /* ICEMAINT_MANIFEST_H */
