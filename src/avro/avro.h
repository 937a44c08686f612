/*
 * avro/avro.h: internal Avro support for what Iceberg needs: compiled schemas, a bounds-checked
 * binary decoder (inline primitives), an object-container reader that works on a memory buffer
 * one block at a time, and a container writer with the four codecs (null, deflate, snappy,
 * zstandard).
 *
 * Not installed; used by src/manifest/. Source: Apache Avro 1.11 specification, "Binary
 * Encoding" and "Object Container Files".
 *
 * Decoding model: a caller (the manifest layer) walks the writer's compiled schema itself and
 * calls the inline primitives below, so nothing is materialised that it does not ask for.
 * Strings and bytes come back as borrowed pointers into the current decompressed block.
 */
#ifndef ICM_AVRO_AVRO_H
#define ICM_AVRO_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"

/* ---- compiled schema ---- */

typedef enum icm__avro_type {
    ICM__AVRO_NULL = 0,
    ICM__AVRO_BOOLEAN,
    ICM__AVRO_INT,
    ICM__AVRO_LONG,
    ICM__AVRO_FLOAT,
    ICM__AVRO_DOUBLE,
    ICM__AVRO_BYTES,
    ICM__AVRO_STRING,
    ICM__AVRO_FIXED,
    ICM__AVRO_ENUM,
    ICM__AVRO_RECORD,
    ICM__AVRO_ARRAY,
    ICM__AVRO_MAP,
    ICM__AVRO_UNION
} icm__avro_type;

/* No Iceberg field id in the schema. */
#define ICM__AVRO_NO_ID INT32_MIN

/* One schema node. Named types are stored once and referenced by index. */
typedef struct icm__avro_node {
    icm__avro_type type;
    uint32_t n;      /* RECORD: field count; UNION: branch count; ENUM: symbols; FIXED: size */
    uint32_t first;  /* RECORD: index into fields[]; UNION: index into branches[] */
    uint32_t child;  /* ARRAY: items node; MAP: values node */
    int32_t elem_id; /* ARRAY "element-id" (or the key-id of a map-as-array); else NO_ID */
    const char *name;     /* full name of named types (borrowed from the JSON), else NULL */
    const char *logical;  /* "logicalType" or NULL */
    const void *json;     /* the json_t defining this node (borrowed from the schema) */
    bool flat;            /* RECORD whose fields are all primitives: skipped without recursion */
    uint32_t varints;     /* int/long/enum: 1; RECORD of only those: its field count; else 0 */
    bool zero_size;       /* every value encodes to 0 bytes (null, fixed(0), records of those) */
} icm__avro_node;

typedef struct icm__avro_field {
    const char *name;    /* borrowed from the schema JSON */
    int32_t field_id;    /* Iceberg "field-id" or ICM__AVRO_NO_ID */
    uint32_t type;       /* node index */
} icm__avro_field;

typedef struct icm__avro_schema icm__avro_schema;
struct icm__avro_schema {
    icm__avro_node *nodes;
    uint32_t n_nodes, cap_nodes;
    icm__avro_field *fields;
    uint32_t n_fields, cap_fields;
    uint32_t *branches;
    uint32_t n_branches, cap_branches;
    uint32_t root;
    void *json; /* json_t* holding the names */
};

/* Parse an Avro schema JSON text into a compiled schema (new; free with _free).
 * @return 0, ICM_EINVALID (malformed schema, error names `location`), ICM_ENOMEM. */
int icm__avro_schema_parse(icm__avro_schema **out, const char *json, size_t len,
                           const char *location);
void icm__avro_schema_free(icm__avro_schema *s);

static inline const icm__avro_node *icm__avro_node_at(const icm__avro_schema *s, uint32_t i)
{
    return &s->nodes[i];
}
static inline const icm__avro_field *icm__avro_field_at(const icm__avro_schema *s,
                                                        const icm__avro_node *rec, uint32_t i)
{
    return &s->fields[rec->first + i];
}
static inline uint32_t icm__avro_branch_at(const icm__avro_schema *s, const icm__avro_node *u,
                                           uint32_t i)
{
    return s->branches[u->first + i];
}
/* Index of `field_id` (or, when absent, `name`) in a record node; -1 if missing. */
int icm__avro_record_find(const icm__avro_schema *s, uint32_t rec, int32_t field_id,
                          const char *name);
/* If node is a union of null and one other type, return that type and set *null_branch;
 * else return the node itself with *null_branch = -1. */
uint32_t icm__avro_unwrap_optional(const icm__avro_schema *s, uint32_t node, int *null_branch);
/* Append the JSON definition of a subtree (as the writer wrote it) to `out`. */
int icm__avro_schema_to_json(const icm__avro_schema *s, uint32_t node, icm__buf *out);

/* ---- decoder cursor ---- */

typedef struct icm__avro_cur {
    const uint8_t *p;
    const uint8_t *end;
    const uint8_t *base;     /* start of the buffer, for error offsets */
    int64_t base_offset;     /* file offset of `base`, or of the compressed block holding it */
    bool offset_exact;       /* base_offset + (p - base) is a file offset (uncompressed data) */
    const char *location;    /* file named in errors */
} icm__avro_cur;

/* Set ICM_EINVALID "corrupt Avro data: <what>" with the cursor's location and offset. */
int icm__avro_corrupt(const icm__avro_cur *c, const char *what);

int icm__avro_read_long_slow(icm__avro_cur *c, int64_t *out);

/* Zigzag varint long. Fast path when 10 bytes are available; overflow is an error. */
static inline int icm__avro_read_long(icm__avro_cur *c, int64_t *out)
{
    const uint8_t *p = c->p;
    if (ICM__LIKELY(c->end - p >= 10)) {
        uint64_t b = *p++;
        uint64_t v = b & 0x7f;
        if (b & 0x80) {
            int shift = 7;
            do {
                b = *p++;
                if (ICM__UNLIKELY(shift == 63 && b > 1))
                    return icm__avro_corrupt(c, "varint overflows 64 bits");
                v |= (b & 0x7f) << shift;
                shift += 7;
            } while ((b & 0x80) && shift < 70);
            if (ICM__UNLIKELY(b & 0x80))
                return icm__avro_corrupt(c, "varint longer than 10 bytes");
        }
        c->p = p;
        *out = (int64_t)((v >> 1) ^ (~(v & 1) + 1));
        return 0;
    }
    return icm__avro_read_long_slow(c, out);
}

static inline int icm__avro_read_int(icm__avro_cur *c, int32_t *out)
{
    int64_t v;
    int rc = icm__avro_read_long(c, &v);
    if (ICM__UNLIKELY(rc < 0))
        return rc;
    if (ICM__UNLIKELY(v < INT32_MIN || v > INT32_MAX))
        return icm__avro_corrupt(c, "int out of 32-bit range");
    *out = (int32_t)v;
    return 0;
}

static inline int icm__avro_read_bool(icm__avro_cur *c, bool *out)
{
    if (ICM__UNLIKELY(c->p >= c->end))
        return icm__avro_corrupt(c, "truncated boolean");
    uint8_t b = *c->p++;
    if (ICM__UNLIKELY(b > 1))
        return icm__avro_corrupt(c, "boolean byte is not 0 or 1");
    *out = b == 1;
    return 0;
}

/* Length-prefixed bytes/string: borrowed pointer into the buffer. */
static inline int icm__avro_read_bytes(icm__avro_cur *c, const uint8_t **data, size_t *len)
{
    int64_t n;
    int rc = icm__avro_read_long(c, &n);
    if (ICM__UNLIKELY(rc < 0))
        return rc;
    if (ICM__UNLIKELY(n < 0))
        return icm__avro_corrupt(c, "negative length");
    if (ICM__UNLIKELY((uint64_t)n > (uint64_t)(c->end - c->p)))
        return icm__avro_corrupt(c, "length runs past the end of the block");
    *data = c->p;
    *len = (size_t)n;
    c->p += n;
    return 0;
}

static inline int icm__avro_skip_n(icm__avro_cur *c, size_t n)
{
    if (ICM__UNLIKELY(n > (size_t)(c->end - c->p)))
        return icm__avro_corrupt(c, "value runs past the end of the block");
    c->p += n;
    return 0;
}

/* Union branch index, checked against the union's branch count. */
static inline int icm__avro_read_branch(icm__avro_cur *c, const icm__avro_node *u, uint32_t *out)
{
    int64_t b;
    int rc = icm__avro_read_long(c, &b);
    if (ICM__UNLIKELY(rc < 0))
        return rc;
    if (ICM__UNLIKELY(b < 0 || (uint64_t)b >= u->n))
        return icm__avro_corrupt(c, "union branch index out of range");
    *out = (uint32_t)b;
    return 0;
}

/* Block header of an array/map: count (absolute) and, for negative counts, the byte size. */
int icm__avro_read_block_count(icm__avro_cur *c, int64_t *count, int64_t *size_bytes);

/* Skip one value of type `node` without materialising it. */
int icm__avro_skip(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c);
/* Skip `count` consecutive varints (int, long or enum values) without decoding them (only the
 * terminating bytes are counted: an overlong varint is not refused). */
int icm__avro_skip_varints(icm__avro_cur *c, uint64_t count);

/* Skipping a run of record fields nobody asked for, compiled once per file: a run of plain
 * int/long/enum values (or records of only those) is one step whose varints are counted, not
 * decoded; an optional value (a union of null and one type) is one step that reads the branch
 * and skips strings, bytes and varints directly; anything else is skipped by schema. */
typedef struct icm__avro_skip_step {
    uint32_t varints;    /* > 0: skip that many plain varints */
    uint32_t node;       /* else the value's node (its non-null type when null_branch >= 0) */
    int32_t null_branch; /* >= 0: an optional value; the union index of null */
    uint32_t null_run;   /* steps from this one on (within its group) that are optional values
                          * with null as branch 0: when null, each is one 0x00 byte */
} icm__avro_skip_step;
/* Append to steps[*n] (room for one more) a step skipping a value of `node`, merging plain
 * varints into the step before unless that step's index is below `from` (steps from `from` on
 * are one group, run together). A value of a zero-size type (null, fixed(0), records of those)
 * adds no step. */
void icm__avro_skip_step_add(const icm__avro_schema *s, icm__avro_skip_step *steps, size_t *n,
                             size_t from, uint32_t node);
/* Run steps[0..n). The errors of icm__avro_skip (truncation, bad branch indexes, counts), except
 * that a run of plain varints is only counted: a varint longer than 10 bytes there is passed,
 * not refused (no skipped value is ever used). */
int icm__avro_skip_steps(const icm__avro_schema *s, const icm__avro_skip_step *steps, size_t n,
                         icm__avro_cur *c);

/* Read a value of a numeric node (int/long, or a union of null with one) as int64.
 * *is_null is set for the null branch. Other types are an error. */
int icm__avro_read_number(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c,
                          int64_t *out, bool *is_null);

/* ---- container reader ---- */

typedef enum icm__avro_codec {
    ICM__AVRO_CODEC_NULL = 0,
    ICM__AVRO_CODEC_DEFLATE = 1,
    ICM__AVRO_CODEC_SNAPPY = 2,
    ICM__AVRO_CODEC_ZSTD = 3
} icm__avro_codec;

/* Upper bound for one decompressed block: protects against decompression bombs. */
#define ICM__AVRO_MAX_BLOCK_BYTES ((size_t)1 << 30)

typedef struct icm__avro_reader icm__avro_reader;

/* Parse the container header of `data` (borrowed: must outlive the reader).
 * @return 0, ICM_EINVALID (not Avro / corrupt header / bad schema), ICM_EUNSUPPORTED (codec),
 *         ICM_ENOMEM. Errors name `location`. */
int icm__avro_reader_open(icm__avro_reader **out, const void *data, size_t len,
                          const char *location);
void icm__avro_reader_free(icm__avro_reader *r);

/* Compiled schemas keyed by their exact schema text, shared by the readers of many files
 * written by one writer (an expiry opens thousands of manifest lists with one schema: parsing
 * it each time costs more than decoding the rows). Holds at most a few dozen schemas; a file
 * with yet another schema is parsed for its reader alone. Readers may be opened with one cache
 * on several threads at once (a cached schema is only read); it must outlive every reader opened
 * with it. */
typedef struct icm__avro_schema_cache icm__avro_schema_cache;
/* @return 0 or ICM_ENOMEM. */
int icm__avro_schema_cache_new(icm__avro_schema_cache **out);
void icm__avro_schema_cache_free(icm__avro_schema_cache *cache);
/* icm__avro_reader_open taking the compiled schema from `cache` (NULL = no cache) when the
 * same schema text was seen before, and adding it otherwise. Same errors. */
int icm__avro_reader_open_cached(icm__avro_reader **out, const void *data, size_t len,
                                 const char *location, icm__avro_schema_cache *cache);
/* Metadata value of `key` (borrowed, not NUL-terminated) or NULL when absent. */
const char *icm__avro_reader_meta(const icm__avro_reader *r, const char *key, size_t *len);
/* Same, as a new NUL-terminated string (icm_free); NULL when absent or on ENOMEM (*rc set). */
char *icm__avro_reader_meta_dup(const icm__avro_reader *r, const char *key, int *rc);
const icm__avro_schema *icm__avro_reader_schema(const icm__avro_reader *r);
/* Whether the reader's schema belongs to its schema cache (then it lives, at the same address,
 * as long as the cache, and no other schema text has that address meanwhile). */
bool icm__avro_reader_schema_is_cached(const icm__avro_reader *r);
icm__avro_codec icm__avro_reader_codec(const icm__avro_reader *r);
const char *icm__avro_reader_location(const icm__avro_reader *r);
/* Decode the next block: *cur spans its decompressed objects, *count is their number.
 * The previous block's memory is reused. @return 0, ICM_ITEROVER at the end, ICM_EINVALID,
 * ICM_ENOMEM. */
int icm__avro_reader_next_block(icm__avro_reader *r, icm__avro_cur *cur, int64_t *count);
/* Like next_block but only decompresses (benchmark floor). */
int icm__avro_reader_block_floor(icm__avro_reader *r, size_t *decoded_len, int64_t *count);
/* File offset of the block being decoded (for error positions). */
int64_t icm__avro_reader_block_offset(const icm__avro_reader *r);

/* Blocks of a container decompressed ahead of its reader, e.g. on another thread while the
 * reader's thread is busy with the previous file. */
typedef struct icm__avro_block {
    int64_t offset; /* file offset of the block's header */
    uint8_t *data;  /* decompressed objects (owned) */
    size_t len;
} icm__avro_block;
typedef struct icm__avro_inflated {
    icm__avro_block *blocks;
    size_t n;
} icm__avro_inflated;
/* Decompress the blocks of the container in `data` (any thread; no schema needed), in file
 * order, up to the first one it cannot decompress, the end, or once the blocks decompressed so
 * far hold ICM__AVRO_INFLATE_AHEAD_BYTES. Best effort by design: a bad header, a corrupt block
 * or a failed allocation just stops it, and the reader meets (and reports, with its own error)
 * whatever it could not do. Leaves no last error behind. */
#define ICM__AVRO_INFLATE_AHEAD_BYTES ((size_t)8 << 20)
void icm__avro_inflate_ahead(const void *data, size_t len, icm__avro_inflated *out);
void icm__avro_inflated_dispose(icm__avro_inflated *inflated);
/* Let r take its blocks from `inflated` (borrowed: must outlive r's reading) where they were
 * decompressed ahead, and decompress the rest itself. Same results as without. */
void icm__avro_reader_use_inflated(icm__avro_reader *r, const icm__avro_inflated *inflated);

/* Codec names as in the "avro.codec" header. */
const char *icm__avro_codec_name(icm__avro_codec codec);
/* Decompress one block into *buf (grown as needed, cap in *cap). */
int icm__avro_decompress(icm__avro_codec codec, const uint8_t *in, size_t in_len, uint8_t **buf,
                         size_t *cap, size_t *out_len, const char *location, int64_t offset);
/* Compress one block, appending to `out`. level < 0: codec default. */
int icm__avro_compress(icm__avro_codec codec, int level, const uint8_t *in, size_t in_len,
                       icm__buf *out);

/* ---- encoding and container writer ---- */

int icm__avro_put_long(icm__buf *b, int64_t v);
int icm__avro_put_bytes(icm__buf *b, const void *data, size_t len);
int icm__avro_put_str(icm__buf *b, const char *s);
int icm__avro_put_double(icm__buf *b, double v);
int icm__avro_put_bool(icm__buf *b, bool v);

typedef struct icm__avro_writer icm__avro_writer;

/* Start a container. `schema_json` is the "avro.schema" value. Metadata pairs are added with
 * _writer_meta before the first object. Target uncompressed block size in bytes (0 = 1 MiB). */
int icm__avro_writer_new(icm__avro_writer **out, const char *schema_json, icm__avro_codec codec,
                         int level, size_t block_bytes);
int icm__avro_writer_meta(icm__avro_writer *w, const char *key, const char *value);
/* The buffer the caller encodes the next object into. */
icm__buf *icm__avro_writer_obj(icm__avro_writer *w);
/* Finish the object just encoded into the buffer; flushes a block when it is full. */
int icm__avro_writer_end_obj(icm__avro_writer *w);
/* Flush and hand out the whole file (icm_free). The writer stays allocated (free it). */
int icm__avro_writer_finish(icm__avro_writer *w, char **out, size_t *out_len);
void icm__avro_writer_free(icm__avro_writer *w);
/* Fill `sync` with 16 random bytes (getrandom). */
int icm__avro_random_sync(uint8_t sync[16]);

#endif /* ICM_AVRO_AVRO_H */
