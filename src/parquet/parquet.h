/*
 * parquet/parquet.h: the little of Apache Parquet that add-files needs: check that an object is
 * a Parquet file and read its row count (FileMetaData.num_rows) and schema (FileMetaData.schema,
 * the flattened list of SchemaElement) from its footer.
 *
 * Layout (Parquet format spec, "File format"): "PAR1" <column chunks...> <FileMetaData>
 * <4-byte little-endian footer length> "PAR1". FileMetaData is a Thrift struct in the compact
 * protocol; field 2 is `schema` (list<SchemaElement>), field 3 is `num_rows` (i64). Only those
 * are decoded; everything else is skipped with bounds checks, so a corrupt or hostile footer
 * yields ICM_EINVALID, never a crash. Field numbers and enum values: parquet-format
 * src/main/thrift/parquet.thrift. Not installed.
 */
#ifndef ICM_PARQUET_PARQUET_H
#define ICM_PARQUET_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/fileio.h"

/* Largest footer we read: footers are small (kilobytes to a few MiB); refuse absurd lengths. */
#define ICM__PARQUET_MAX_FOOTER_BYTES ((size_t)64 << 20)

/*
 * Decode `num_rows` from a serialised FileMetaData (the footer bytes without length and magic).
 * `location` names the file in errors. Returns 0, ICM_EINVALID (malformed, num_rows missing or
 * negative).
 */
int icm__parquet_footer_num_rows(const uint8_t *footer, size_t len, const char *location,
                                 int64_t *out_num_rows);


/* ---- schema (FileMetaData field 2) ---- */

/* Most schema elements we accept: real files have at most tens of thousands of columns; the
 * cap bounds what a hostile footer can make us allocate. */
#define ICM__PARQUET_MAX_SCHEMA_ELEMENTS 100000
/* Deepest nesting of groups we accept (each list or map takes two levels). */
#define ICM__PARQUET_MAX_SCHEMA_DEPTH 64

/* Physical types (parquet.thrift `Type`). */
enum {
    ICM__PQ_BOOLEAN = 0,
    ICM__PQ_INT32 = 1,
    ICM__PQ_INT64 = 2,
    ICM__PQ_INT96 = 3,
    ICM__PQ_FLOAT = 4,
    ICM__PQ_DOUBLE = 5,
    ICM__PQ_BYTE_ARRAY = 6,
    ICM__PQ_FIXED_LEN_BYTE_ARRAY = 7
};

/* Repetition (parquet.thrift `FieldRepetitionType`). */
enum { ICM__PQ_REQUIRED = 0, ICM__PQ_OPTIONAL = 1, ICM__PQ_REPEATED = 2 };

/* The converted (legacy) types add-files looks at (parquet.thrift `ConvertedType`). */
enum {
    ICM__PQ_CT_UTF8 = 0,
    ICM__PQ_CT_MAP = 1,
    ICM__PQ_CT_MAP_KEY_VALUE = 2,
    ICM__PQ_CT_LIST = 3,
    ICM__PQ_CT_ENUM = 4,
    ICM__PQ_CT_DECIMAL = 5,
    ICM__PQ_CT_DATE = 6,
    ICM__PQ_CT_TIME_MILLIS = 7,
    ICM__PQ_CT_TIME_MICROS = 8,
    ICM__PQ_CT_TIMESTAMP_MILLIS = 9,
    ICM__PQ_CT_TIMESTAMP_MICROS = 10,
    ICM__PQ_CT_UINT_8 = 11,
    ICM__PQ_CT_UINT_16 = 12,
    ICM__PQ_CT_UINT_32 = 13,
    ICM__PQ_CT_UINT_64 = 14,
    ICM__PQ_CT_INT_8 = 15,
    ICM__PQ_CT_INT_16 = 16,
    ICM__PQ_CT_INT_32 = 17,
    ICM__PQ_CT_INT_64 = 18
};

/* LogicalType union members (parquet.thrift `LogicalType` field ids). */
enum {
    ICM__PQ_LT_NONE = 0,
    ICM__PQ_LT_STRING = 1,
    ICM__PQ_LT_MAP = 2,
    ICM__PQ_LT_LIST = 3,
    ICM__PQ_LT_ENUM = 4,
    ICM__PQ_LT_DECIMAL = 5,
    ICM__PQ_LT_DATE = 6,
    ICM__PQ_LT_TIME = 7,
    ICM__PQ_LT_TIMESTAMP = 8,
    ICM__PQ_LT_INTEGER = 10,
    ICM__PQ_LT_UNKNOWN = 11,
    ICM__PQ_LT_JSON = 12,
    ICM__PQ_LT_BSON = 13,
    ICM__PQ_LT_UUID = 14,
    ICM__PQ_LT_FLOAT16 = 15
    /* 16 and above (VARIANT, GEOMETRY, GEOGRAPHY, ...) are kept as their number */
};

/* Time units of TIME and TIMESTAMP (parquet.thrift `TimeUnit` field ids). */
enum { ICM__PQ_UNIT_MILLIS = 1, ICM__PQ_UNIT_MICROS = 2, ICM__PQ_UNIT_NANOS = 3 };

/* The logical type annotation of a schema element; `kind` is ICM__PQ_LT_NONE when absent. */
typedef struct icm__parquet_logical {
    int32_t kind;
    int32_t scale, precision;  /* DECIMAL (-1 when absent) */
    bool adjusted_to_utc;      /* TIME, TIMESTAMP */
    int32_t unit;              /* TIME, TIMESTAMP: ICM__PQ_UNIT_*, 0 when absent */
    int32_t bit_width;         /* INTEGER (0 when absent) */
    bool is_signed;            /* INTEGER */
} icm__parquet_logical;

/* One SchemaElement. Optional integer fields that are absent read -1 (the format allows no
 * negative value for them; a negative one in the file is refused as corrupt). */
typedef struct icm__parquet_element {
    char *name;
    int32_t type;            /* physical type ICM__PQ_*; -1 for groups */
    int32_t type_length;     /* FIXED_LEN_BYTE_ARRAY width */
    int32_t repetition;      /* ICM__PQ_REQUIRED/OPTIONAL/REPEATED */
    int32_t num_children;    /* > 0 for groups; -1 for leaves (0 only on the root) */
    int32_t converted_type;  /* ICM__PQ_CT_* or another ConvertedType value */
    int32_t scale, precision;
    bool has_field_id;
    int32_t field_id;
    icm__parquet_logical logical;
    size_t subtree_size;     /* this element plus all its descendants (derived) */
} icm__parquet_element;

/*
 * The decoded footer: row count and schema. elements[0] is the root (a group, even with no
 * columns); the children of a group at index i start at i + 1, and each next sibling follows
 * its predecessor's subtree (i + subtree_size). The reader has checked that the list forms
 * exactly one tree, that leaves have a physical type, and the bounds above.
 */
typedef struct icm__parquet_schema {
    int64_t num_rows;
    icm__parquet_element *elements;
    size_t element_count;
} icm__parquet_schema;

/*
 * Decode num_rows and the schema from a serialised FileMetaData. *out is new
 * (icm__parquet_schema_free), NULL on failure. Returns 0; ICM_EINVALID (malformed footer,
 * missing num_rows or schema, a schema that is not one tree, beyond the limits); ICM_ENOMEM.
 */
int icm__parquet_footer_schema(const uint8_t *footer, size_t len, const char *location,
                               icm__parquet_schema **out);

/*
 * Stat `location` and read its footer through `io`: *out is the decoded footer (new,
 * icm__parquet_schema_free; its num_rows is the row count) and *out_size_bytes the object
 * size. Returns 0; ICM_ENOTFOUND; ICM_EIO; ICM_ENOMEM; ICM_EINVALID ("not a Parquet file": too
 * short or missing "PAR1" magic at either end, footer length out of range, malformed footer).
 */
int icm__parquet_read_schema(icm_fileio *io, const char *location, icm__parquet_schema **out,
                             int64_t *out_size_bytes);

/* Free a decoded schema; NULL is ok. */
void icm__parquet_schema_free(icm__parquet_schema *schema);

/* Whether the `size_bytes` bytes at `location` begin and end with one Parquet magic, "PAR1"
 * (or "PARE": its footer encrypted), so that a file the readers above refuse (past one of
 * their limits, or a footer they cannot decode) is still a Parquet file, into *out (false
 * for a file shorter than 12 bytes or than its size). Returns 0, or what reading returns
 * (ICM_ENOTFOUND, ICM_EIO, ...). */
int icm__parquet_has_magic(icm_fileio *io, const char *location, int64_t size_bytes, bool *out);

/* ---- column chunk statistics (FileMetaData field 4, row_groups) ----
 *
 * RowGroup {1: columns list<ColumnChunk>}; ColumnChunk {3: meta_data ColumnMetaData};
 * ColumnMetaData {12: statistics Statistics}; Statistics {1: max, 2: min (deprecated: signed
 * byte order), 5: max_value, 6: min_value (the column's sort order)}. A row group's columns are
 * its leaves in schema order. A value is the plain encoding of the leaf's physical type
 * (little-endian numbers, a byte array's bytes). The deprecated pair is kept only for numeric
 * leaves and BOOLEAN, where the old order was already right.
 */

/* Most row groups x leaves read: a footer beyond it is refused (real files hold thousands). */
#define ICM__PARQUET_MAX_CHUNKS ((size_t)1 << 22)

/* One column chunk's min and max (borrowed from the footer kept in icm__parquet_stats). */
typedef struct icm__parquet_chunk_stats {
    const uint8_t *min, *max;
    size_t min_len, max_len;
    bool has_min, has_max;
} icm__parquet_chunk_stats;

typedef struct icm__parquet_stats {
    icm__parquet_schema *schema;       /* num_rows and the schema (owned) */
    size_t *leaves;                    /* schema element index of each leaf, in schema order */
    size_t leaf_count;
    size_t row_group_count;
    icm__parquet_chunk_stats *chunks;  /* row group g, leaf k: chunks[g * leaf_count + k] */
    uint8_t *footer;                   /* owned: what the chunks point into */
} icm__parquet_stats;

/*
 * Decode num_rows, the schema and every column chunk's statistics from a serialised FileMetaData
 * (copied). *out is new (icm__parquet_stats_free), NULL on failure. Returns 0; ICM_EINVALID
 * (what icm__parquet_footer_schema refuses, row groups whose column count is not the leaf
 * count, more than ICM__PARQUET_MAX_CHUNKS chunks); ICM_ENOMEM.
 */
int icm__parquet_footer_stats(const uint8_t *footer, size_t len, const char *location,
                              icm__parquet_stats **out);

/* Stat `location`, read its footer through `io` and decode it (icm__parquet_footer_stats).
 * Returns what icm__parquet_read_schema returns. */
int icm__parquet_read_stats(icm_fileio *io, const char *location, icm__parquet_stats **out,
                            int64_t *out_size_bytes);

/* Free decoded statistics; NULL is ok. */
void icm__parquet_stats_free(icm__parquet_stats *stats);

#endif /* ICM_PARQUET_PARQUET_H */
