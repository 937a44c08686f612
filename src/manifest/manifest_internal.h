/*
 * manifest/manifest_internal.h: shared pieces of the manifest list reader, the manifest reader
 * and the writers (implemented in common.c unless noted): the block iterator over an Avro
 * container, header parsing, the field-shape checks that decide whether a raw value can be
 * copied verbatim into our own files, the hot value readers (inline), the per-row string pool,
 * and the Avro schemas we write (schemas.c).
 */
#ifndef ICM_MANIFEST_INTERNAL_H
#define ICM_MANIFEST_INTERNAL_H

#include "avro/avro.h"
#include "icemaint/manifest.h"
#include "manifest/bulk_reader.h"

/* Iterates objects of a container, one decompressed block at a time. */
typedef struct icm__obj_iter {
    icm__avro_reader *avro;
    icm__avro_cur cur;
    int64_t left;     /* objects left in the current block */
} icm__obj_iter;

/* Position on the next object: 0 with it->cur at its first byte, ICM_ITEROVER, or an error.
 * Checks that a finished block has no trailing bytes. */
int icm__obj_iter_next(icm__obj_iter *it);

/* Shapes a raw value must have to be copied verbatim (the node is the non-null type). */
typedef enum icm__shape {
    ICM__SHAPE_MAP_INT_LONG,   /* array<record{int, long}> */
    ICM__SHAPE_MAP_INT_BYTES,  /* array<record{int, bytes}> */
    ICM__SHAPE_BYTES,
    ICM__SHAPE_LIST_LONG,
    ICM__SHAPE_LIST_INT,
    ICM__SHAPE_FIELD_SUMMARIES /* array<record{boolean, [null,boolean], [null,bytes] x2}> */
} icm__shape;
bool icm__shape_ok(const icm__avro_schema *s, uint32_t node, icm__shape shape);

/* Parse a header value as a decimal integer; false when absent/empty/garbage. */
bool icm__parse_header_int(const char *v, size_t len, int64_t *out);
/* "format-version" from the header: 0 when absent or unusable (""), else 1-3;
 * ICM_EUNSUPPORTED for other numbers. */
int icm__version_from_header(icm__avro_reader *a, int *out);
/* The format version to use: the header's, else the schema's, upgraded 2 -> 3 when the table
 * says 3 (v3 only added optional fields). */
int icm__decide_version(int header, int inferred, int table);

bool icm__is_type(const icm__avro_schema *s, uint32_t n, icm__avro_type t);
/* int/long (optionally nullable) and string/bytes (optionally nullable) nodes. */
bool icm__numeric_node(const icm__avro_schema *s, uint32_t node);
bool icm__string_node(const icm__avro_schema *s, uint32_t node);
/* ICM_EINVALID "<what>: field <field>" naming the file. */
int icm__schema_error(const char *location, const char *what, const char *field);

/* Capture the encoded bytes of a (nullable) value, without its union index; data NULL for
 * null. */
int icm__read_raw(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c, icm_raw *out);

/* Read a string/bytes field (optionally nullable); data NULL for null. */
static inline int icm__read_str(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c,
                                const uint8_t **data, size_t *len)
{
    const icm__avro_node *n = &s->nodes[node];
    if (n->type == ICM__AVRO_UNION) {
        uint32_t b = 0;
        int rc = icm__avro_read_branch(c, n, &b);
        if (rc < 0)
            return rc;
        n = &s->nodes[s->branches[n->first + b]];
    }
    if (ICM__LIKELY(n->type == ICM__AVRO_STRING || n->type == ICM__AVRO_BYTES))
        return icm__avro_read_bytes(c, data, len);
    if (n->type == ICM__AVRO_NULL) {
        *data = NULL;
        *len = 0;
        return 0;
    }
    return icm__avro_corrupt(c, "expected a string");
}

static inline int icm__read_num(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c,
                                int64_t *v, bool *has)
{
    const icm__avro_node *n = &s->nodes[node];
    if (ICM__LIKELY(n->type == ICM__AVRO_INT || n->type == ICM__AVRO_LONG)) {
        *has = true;
        return icm__avro_read_long(c, v);
    }
    bool is_null;
    int rc = icm__avro_read_number(s, node, c, v, &is_null);
    *has = !is_null;
    return rc;
}

/* Per-reader scratch for NUL-terminated copies of the current row's strings. */
typedef struct icm__strpool {
    char *buf;
    size_t cap;
} icm__strpool;
int icm__strpool_reserve(icm__strpool *p, size_t need);

/* Header value copy cached in `cache` (alternating key, value); *out NULL when absent.
 * @return 0 or ICM_ENOMEM. */
int icm__header_copy(icm__ptrvec *cache, icm__avro_reader *a, const char *key,
                     const char **out);

/* Reader internals the copying writer needs (reader.c). */
const icm__avro_schema *icm__manifest_reader_schema(const icm_manifest_reader *r,
                                                    uint32_t *partition_node);
int icm__manifest_reader_header(icm_manifest_reader *r, const char *key, const char **out);

/* Avro schema JSON of the manifest list for a format version (static storage). */
const char *icm__manifest_list_schema_json(int format_version);
/* Append the manifest_entry Avro schema JSON for a format version with the given partition
 * record schema JSON. */
int icm__manifest_entry_schema_json(icm__buf *out, int format_version,
                                    const char *partition_schema_json);

/* ICM_EINVALID naming `what` when a caller's options struct has a version other than
 * `known` (docs/API.md rule 2: refused before anything is read or written). */
int icm__manifest_opts_version_refused(const char *what, unsigned version, unsigned known);
#define ICM__MANIFEST_OPTS_CHECK(what, opts, known)                                           \
    ((opts) != NULL && (opts)->version != (known)                                             \
         ? icm__manifest_opts_version_refused((what), (opts)->version, (known))               \
         : 0)

/* ---- reading many files with one schema cache (the bulk reader, bulk_reader.c) ----
 * The public readers and read helpers with an Avro schema cache (NULL = none): the same
 * results and errors, without re-parsing a schema text already seen. */
int icm__manifest_list_reader_open_cached(icm_manifest_list_reader **out, const void *data,
                                          size_t len, const char *location,
                                          const icm_manifest_list_read_options *opts,
                                          icm__avro_schema_cache *schemas);
int icm__manifest_reader_open_cached(icm_manifest_reader **out, const void *data, size_t len,
                                     const char *location, const icm_manifest_read_options *opts,
                                     icm__avro_schema_cache *schemas);

/* icm_manifest_list_reader_next, except that the rows `f` claims are skipped. */
int icm__manifest_list_reader_next_filtered(icm_manifest_list_reader *r,
                                            const icm__list_row_filter *f,
                                            const icm_manifest_file **out);
/* The bytes of the row next_filtered delivered last (borrowed, valid until the next call) and
 * its writer schema's name for icm__list_row_filter (NULL when not cached). */
void icm__manifest_list_reader_last_row(const icm_manifest_list_reader *r, const uint8_t **row,
                                        size_t *len, const void **schema);
/* icm_manifest_list_read over the list's bytes, already read (borrowed), with a schema cache
 * (NULL = none), an optional row filter (NULL = every row: cb sees the rows the filter, called
 * with its payload, does not claim), and blocks taken from `inflated` (NULL = none) where they
 * were decompressed ahead. Same results and errors. */
int icm__manifest_list_read_data(const void *data, size_t len, const icm__avro_inflated *inflated,
                                 const char *location, const icm_manifest_list_read_options *opts,
                                 icm__avro_schema_cache *schemas, const icm__list_row_filter *f,
                                 icm_manifest_file_cb cb, void *payload);
/* Let the reader take blocks from `inflated` (borrowed) where they were decompressed ahead. */
void icm__manifest_list_reader_use_inflated(icm_manifest_list_reader *r,
                                            const icm__avro_inflated *inflated);

/* The few fields of a manifest entry that reachability needs. */
typedef struct icm__entry_view {
    icm_entry_status status;
    icm_file_content content;
    icm_file_format file_format;  /* OTHER when not asked for or null */
    const char *file_path;        /* borrowed until the next entry; NOT NUL-terminated ("" when
                                   * not asked for); holds no NUL byte */
    size_t file_path_len;
    int64_t file_size_in_bytes;   /* -1 when not asked for or null */
    /* Asked for with ICM_MANIFEST_FIELD_SNAPSHOT_ID, _SEQUENCE_NUMBERS, _RECORD_COUNT and
     * _METRICS; absent (false, -1, empty) when not asked for or null. As written: nothing
     * inherited from the manifest list row in the view program (the whole decode, used when a
     * schema allows no view program, does apply inheritance; either way an absent value is
     * the row's, spec "Sequence Number Inheritance"). */
    bool has_snapshot_id, has_file_sequence_number;
    int64_t snapshot_id;
    int64_t file_sequence_number;
    int64_t record_count;
    icm_raw lower_bounds, upper_bounds; /* borrowed as file_path; the maps' Avro bytes */
    /* Asked for with ICM_MANIFEST_FIELD_PARTITION (else shape 0). */
    icm__partition_key partition;
    /* Asked for with ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE and _CONTENT_OFFSET (a deletion
     * vector's data file and where its blob lies in the Puffin file); absent (NULL, -1) when not
     * asked for or null. referenced_data_file is borrowed as file_path, NOT NUL-terminated, and
     * holds no NUL byte. */
    const char *referenced_data_file;
    size_t referenced_data_file_len;
    int64_t content_offset, content_size_in_bytes;
} icm__entry_view;
/* icm_manifest_reader_next as a view: for a projection of at most file path, format, size,
 * snapshot id, sequence numbers, record count, metrics, partition, referenced data file and
 * content offset and size (and a data_file that is
 * not optional) the entry is decoded straight from the block by one compiled program, with no
 * copy and the same checks on those fields; otherwise it is decoded whole and viewed. Inheritance is not applied (a view holds nothing inherited). Same errors. */
int icm__manifest_reader_next_view(icm_manifest_reader *r, icm__entry_view *out);
/* The key of a partition tuple `tuple` of r's entries (the record's Avro bytes, as
 * icm_data_file.partition holds them; data NULL: a null tuple), as views give it. Unknown
 * (shape 0) when r was opened without ICM_MANIFEST_FIELD_PARTITION, has no spec id or a field
 * of a type not compared, or the bytes do not read. Never fails. */
icm__partition_key icm__manifest_reader_partition_key(const icm_manifest_reader *r,
                                                      icm_raw tuple);
typedef int (*icm__entry_view_cb)(const icm__entry_view *v, void *payload);
/* icm_manifest_read with a schema cache (NULL = none), or with embedded_v1
 * icm_manifest_read_v1_embedded of mf->manifest_path in snapshot `snapshot_id`, delivering
 * views. `data` (taken: freed here, also on failure), when not NULL, holds the manifest's `len`
 * bytes already (fetched ahead, as icm_fileio_read returns them); NULL reads them through io.
 * *len_out (may be NULL): the manifest's size in bytes, once it was read. Same errors. */
int icm__manifest_read_views(icm_fileio *io, char *data, size_t len, const icm_manifest_file *mf,
                             bool embedded_v1, int64_t snapshot_id,
                             const icm_manifest_read_options *opts,
                             icm__avro_schema_cache *schemas, icm__entry_view_cb cb,
                             void *payload, size_t *len_out);

/*
 * A manifest read whole against its manifest list row `mf`: `len` its size in bytes, n[s] its
 * entries of status s (EXISTING 0, ADDED 1, DELETED 2). Returns 0 when they agree, else
 * ICM_EINVALID with a message naming the manifest and both sides (io.c says which fields decide).
 */
int icm__manifest_check_list_row(const icm_manifest_file *mf, size_t len, const size_t n[3]);

#endif /* ICM_MANIFEST_INTERNAL_H */
