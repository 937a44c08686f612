/*
 * parquet/footer.c: read a Parquet file's row count and schema from its footer: magic checks,
 * the footer length, and bounds-checked Thrift compact-protocol walks over FileMetaData: one that
 * decodes only field 3 (`num_rows`, i64), and one that also decodes field 2 (`schema`, the
 * flattened SchemaElement list with its logical type annotations) and checks it forms one tree.
 * Everything else is skipped.
 *
 * Thrift compact protocol (Apache Thrift, doc/specs/thrift-compact-protocol.md): a field header
 * is one byte, high nibble = field-id delta (0: a zigzag varint i16 id follows), low nibble =
 * type; type 0 ends a struct. Integers are zigzag varints, binary is a varint length plus bytes,
 * lists/sets put the size in the high nibble (15: a varint size follows) and the element type in
 * the low nibble, maps are a varint size plus one byte of key/value types.
 *
 * Every integer decoded from the footer is bounded before any arithmetic uses it: varints are at
 * most ten bytes and their bits must fit 64; field ids are Thrift i16s, so a short-form delta
 * (1..15) is added to a previous id in [-32768, 32767] and a result above 32767 is corrupt, as
 * is a long-form id outside the i16 range (Thrift's own readers would wrap either into another
 * field); lengths and list/map sizes are compared with the bytes left before they are used. The
 * first reason a walk fails and its offset in the footer are kept in the cursor, so the error
 * names them.
 */
#include <limits.h>
#include <string.h>

#include "parquet/parquet.h"
#include "util/util.h"

enum {
    CT_STOP = 0,
    CT_TRUE = 1,
    CT_FALSE = 2,
    CT_BYTE = 3,
    CT_I16 = 4,
    CT_I32 = 5,
    CT_I64 = 6,
    CT_DOUBLE = 7,
    CT_BINARY = 8,
    CT_LIST = 9,
    CT_SET = 10,
    CT_MAP = 11,
    CT_STRUCT = 12
};

/* Nesting limit: FileMetaData is a few levels deep; a deeper footer is hostile. */
#define MAX_DEPTH 64

/* A read position in the footer; `why`/`why_at` hold the first failure and its offset. */
typedef struct tcursor {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
    const char *why;
    size_t why_at;
} tcursor;

static tcursor cursor(const uint8_t *footer, size_t len)
{
    tcursor c = {footer, footer, footer + len, NULL, 0};
    return c;
}

/* Record the first reason a walk fails, at the item starting at `at`, and return -1. */
static int fail_at(tcursor *c, const uint8_t *at, const char *why)
{
    if (c->why == NULL) {
        c->why = why;
        c->why_at = (size_t)(at - c->start);
    }
    return -1;
}

/* The same at the current position. */
static int fail(tcursor *c, const char *why)
{
    return fail_at(c, c->p, why);
}

static int get_byte(tcursor *c, uint8_t *out)
{
    if (c->p >= c->end)
        return fail(c, "ends early");
    *out = *c->p++;
    return 0;
}

/* An unsigned LEB128 varint of at most ten bytes whose value fits 64 bits. */
static int get_varint(tcursor *c, uint64_t *out)
{
    const uint8_t *at = c->p;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b;
        if (get_byte(c, &b) != 0)
            return -1;
        if (shift == 63 && (b & 0x7e) != 0)
            return fail_at(c, at, "varint does not fit 64 bits");
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return 0;
        }
    }
    return fail_at(c, at, "varint longer than 10 bytes");
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int skip_bytes(tcursor *c, uint64_t n)
{
    if (n > (uint64_t)(c->end - c->p))
        return fail(c, "length beyond the end of the footer");
    c->p += n;
    return 0;
}

/*
 * The next field header of a struct: 1 with *type set and *id the field's id (a short-form
 * delta added to the previous id in *id, or a long-form zigzag i16), 0 at the struct's stop,
 * -1 when truncated or when the id leaves the i16 range.
 */
static int next_field(tcursor *c, int64_t *id, int *type)
{
    const uint8_t *at = c->p;
    uint8_t h;
    if (get_byte(c, &h) != 0)
        return -1;
    *type = h & 0x0f;
    if (*type == CT_STOP)
        return 0;
    int64_t next;
    if ((h >> 4) != 0) {
        next = *id + (h >> 4); /* *id is an i16 here (start 0 or a checked id): no overflow */
    } else {
        uint64_t v;
        if (get_varint(c, &v) != 0)
            return -1;
        next = unzigzag(v);
    }
    if (next < INT16_MIN || next > INT16_MAX)
        return fail_at(c, at, "field id outside the Thrift i16 range");
    *id = next;
    return 1;
}

static int skip_value(tcursor *c, int type, int depth);

static int skip_struct(tcursor *c, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(c, "nested too deep");
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        if (type == CT_TRUE || type == CT_FALSE)
            continue; /* a struct field's boolean lives in its header */
        if (skip_value(c, type, depth + 1) != 0)
            return -1;
    }
    return r;
}

static int skip_list(tcursor *c, int depth)
{
    uint8_t h;
    if (get_byte(c, &h) != 0)
        return -1;
    uint64_t n = h >> 4;
    if (n == 15 && get_varint(c, &n) != 0)
        return -1;
    int type = h & 0x0f;
    /* Every element takes at least one byte: a size beyond the rest is corrupt. */
    if (n > (uint64_t)(c->end - c->p))
        return fail(c, "list size beyond the end of the footer");
    for (uint64_t i = 0; i < n; i++) {
        if (type == CT_TRUE || type == CT_FALSE) {
            if (skip_bytes(c, 1) != 0) /* list booleans take one byte each */
                return -1;
        } else if (skip_value(c, type, depth + 1) != 0) {
            return -1;
        }
    }
    return 0;
}

static int skip_map(tcursor *c, int depth)
{
    uint64_t n;
    if (get_varint(c, &n) != 0)
        return -1;
    if (n == 0)
        return 0;
    uint8_t kv;
    if (get_byte(c, &kv) != 0)
        return -1;
    if (n > (uint64_t)(c->end - c->p))
        return fail(c, "map size beyond the end of the footer");
    for (uint64_t i = 0; i < n; i++) {
        if (skip_value(c, kv >> 4, depth + 1) != 0 || skip_value(c, kv & 0x0f, depth + 1) != 0)
            return -1;
    }
    return 0;
}

static int skip_value(tcursor *c, int type, int depth)
{
    uint64_t v;
    if (depth > MAX_DEPTH)
        return fail(c, "nested too deep");
    switch (type) {
    case CT_TRUE:
    case CT_FALSE:
    case CT_BYTE:
        return skip_bytes(c, 1);
    case CT_I16:
    case CT_I32:
    case CT_I64:
        return get_varint(c, &v);
    case CT_DOUBLE:
        return skip_bytes(c, 8);
    case CT_BINARY:
        return get_varint(c, &v) != 0 ? -1 : skip_bytes(c, v);
    case CT_LIST:
    case CT_SET:
        return skip_list(c, depth);
    case CT_MAP:
        return skip_map(c, depth);
    case CT_STRUCT:
        return skip_struct(c, depth);
    default:
        return fail(c, "unknown Thrift type");
    }
}

static int corrupt(const char *location, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                          "not a readable Parquet file: %s", what);
}

/* A malformed footer: `what` plus the first reason the walk recorded (else where it stopped),
 * with that offset into the serialised FileMetaData also in the error's `offset`. */
static int corrupt_at(const char *location, const tcursor *c, const char *what)
{
    size_t at = c->why != NULL ? c->why_at : (size_t)(c->p - c->start);
    int rc = icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                            "not a readable Parquet file: %s (FileMetaData byte %zu%s%s)", what,
                            at, c->why != NULL ? ": " : "", c->why != NULL ? c->why : "");
    icm__error_set_position(0, 0, (int64_t)at);
    return rc;
}

int icm__parquet_footer_num_rows(const uint8_t *footer, size_t len, const char *location,
                                 int64_t *out_num_rows)
{
    tcursor c = cursor(footer, len);
    int64_t field = 0;
    int type, r;
    while ((r = next_field(&c, &field, &type)) == 1) {
        if (field == 3) {
            uint64_t v;
            if (type != CT_I64 || get_varint(&c, &v) != 0)
                return corrupt_at(location, &c, "num_rows is not an i64");
            int64_t rows = unzigzag(v);
            if (rows < 0)
                return corrupt_at(location, &c, "negative num_rows");
            *out_num_rows = rows;
            return 0;
        }
        if (type == CT_TRUE || type == CT_FALSE)
            continue;
        if (skip_value(&c, type, 1) != 0)
            return corrupt_at(location, &c, "malformed FileMetaData in footer");
    }
    return corrupt_at(location, &c,
                      r == 0 ? "footer has no num_rows" : "malformed FileMetaData in footer");
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read exactly len bytes at offset; a short read means the object changed under us. */
static int read_exact(icm_fileio *io, const char *location, int64_t offset, void *buf,
                      size_t len)
{
    size_t got = 0;
    int rc = icm_fileio_read_range(&got, io, location, offset, buf, len);
    if (rc != 0)
        return rc;
    if (got != len)
        return corrupt(location, "file shorter than its size");
    return 0;
}

int icm__parquet_has_magic(icm_fileio *io, const char *location, int64_t size_bytes, bool *out)
{
    *out = false;
    uint8_t head[4], tail[4];
    if (size_bytes < 12)
        return 0;
    int rc = read_exact(io, location, 0, head, sizeof head);
    if (rc == 0)
        rc = read_exact(io, location, size_bytes - 4, tail, sizeof tail);
    if (rc == ICM_EINVALID) { /* (shorter than its size) */
        icm_error_clear();
        return 0;
    }
    if (rc != 0)
        return rc;
    /* (PARE: a Parquet file whose footer is encrypted) */
    *out = memcmp(head, tail, 4) == 0 &&
           (memcmp(head, "PAR1", 4) == 0 || memcmp(head, "PARE", 4) == 0);
    return 0;
}

/* Stat `location` and read its serialised FileMetaData into a new buffer (icm__free). */
static int read_footer_bytes(icm_fileio *io, const char *location, uint8_t **out,
                             size_t *out_len, int64_t *out_size_bytes)
{
    *out = NULL;
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, location);
    if (rc != 0)
        return rc;
    /* Smallest possible file: magic, empty footer length, magic. */
    if (info.size_bytes < 12)
        return corrupt(location, "too short (no PAR1 magic)");
    uint8_t head[4], tail[8];
    rc = read_exact(io, location, 0, head, sizeof head);
    if (rc == 0)
        rc = read_exact(io, location, info.size_bytes - 8, tail, sizeof tail);
    if (rc != 0)
        return rc;
    if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0)
        return corrupt(location, "missing PAR1 magic (encrypted footers, PARE, are not read)");
    size_t footer_len = le32(tail);
    if (footer_len == 0 || footer_len > ICM__PARQUET_MAX_FOOTER_BYTES ||
        (int64_t)footer_len > info.size_bytes - 12)
        return corrupt(location, "footer length out of range");
    uint8_t *footer = icm__malloc(footer_len);
    if (footer == NULL)
        return ICM_ENOMEM;
    rc = read_exact(io, location, info.size_bytes - 8 - (int64_t)footer_len, footer, footer_len);
    if (rc != 0) {
        icm__free(footer);
        return rc;
    }
    *out = footer;
    *out_len = footer_len;
    *out_size_bytes = info.size_bytes;
    return 0;
}

/* A decoder of a serialised FileMetaData into *out; it may take `*footer` (then NULL). */
typedef int (*footer_decoder)(uint8_t **footer, size_t len, const char *location, void **out);

/* Read `location`'s footer and decode it; *out_size_bytes is the object size. */
static int read_decoded(icm_fileio *io, const char *location, footer_decoder decode, void **out,
                        int64_t *out_size_bytes)
{
    *out = NULL;
    uint8_t *footer = NULL;
    size_t len = 0;
    int64_t size = 0;
    int rc = read_footer_bytes(io, location, &footer, &len, &size);
    if (rc == 0)
        rc = decode(&footer, len, location, out);
    icm__free(footer);
    if (rc == 0)
        *out_size_bytes = size;
    return rc;
}

static int decode_schema(uint8_t **footer, size_t len, const char *location, void **out)
{
    icm__parquet_schema *s = NULL;
    int rc = icm__parquet_footer_schema(*footer, len, location, &s);
    *out = s;
    return rc;
}

int icm__parquet_read_schema(icm_fileio *io, const char *location, icm__parquet_schema **out,
                             int64_t *out_size_bytes)
{
    void *decoded = NULL;
    int rc = read_decoded(io, location, decode_schema, &decoded, out_size_bytes);
    *out = decoded;
    return rc;
}

/* ---- schema decoding ------------------------------------------------------------------- */

/* Outcomes of the schema walkers below (mapped to ICM_* codes at the top). */
#define PARSE_CORRUPT (-1)
#define PARSE_NOMEM (-2)

/* Skip a field's value (a struct field's boolean has none: it lives in the header). */
static int skip_field(tcursor *c, int type, int depth)
{
    if (type == CT_TRUE || type == CT_FALSE)
        return 0;
    return skip_value(c, type, depth) == 0 ? 0 : PARSE_CORRUPT;
}

static int read_i32(tcursor *c, int type, int32_t *out)
{
    uint64_t v;
    if (type != CT_I32)
        return fail(c, "field is not an i32");
    if (get_varint(c, &v) != 0)
        return PARSE_CORRUPT;
    int64_t x = unzigzag(v);
    if (x < INT32_MIN || x > INT32_MAX)
        return fail(c, "i32 value out of range");
    *out = (int32_t)x;
    return 0;
}

/* An i32 the format never makes negative (lengths, counts, scale, precision, enums). */
static int read_natural(tcursor *c, int type, int32_t *out)
{
    int32_t v;
    if (read_i32(c, type, &v) != 0)
        return PARSE_CORRUPT;
    if (v < 0)
        return fail(c, "negative value where the format allows none");
    *out = v;
    return 0;
}

static int read_bool(int type, bool *out)
{
    if (type != CT_TRUE && type != CT_FALSE)
        return PARSE_CORRUPT;
    *out = type == CT_TRUE;
    return 0;
}

/* A name: binary without NUL bytes (we keep names as C strings). */
static int read_name(tcursor *c, int type, char **out)
{
    uint64_t n;
    if (type != CT_BINARY || *out != NULL)
        return fail(c, "name is not one binary field");
    if (get_varint(c, &n) != 0)
        return PARSE_CORRUPT;
    if (n > (uint64_t)(c->end - c->p))
        return fail(c, "name length beyond the end of the footer");
    if (memchr(c->p, 0, (size_t)n) != NULL)
        return fail(c, "name holds a NUL byte");
    *out = icm__strndup((const char *)c->p, (size_t)n);
    if (*out == NULL)
        return PARSE_NOMEM;
    c->p += n;
    return 0;
}

/* A union (TimeUnit): one member, an empty struct; *out is the member's field id. */
static int read_union_member(tcursor *c, int32_t *out, int depth)
{
    int64_t id = 0;
    int type, r, members = 0;
    while ((r = next_field(c, &id, &type)) == 1) {
        if (++members > 1 || type != CT_STRUCT || id <= 0 || skip_struct(c, depth + 1) != 0)
            return PARSE_CORRUPT;
        *out = (int32_t)id;
    }
    return r == 0 && members == 1 ? 0 : PARSE_CORRUPT;
}

/* DecimalType {1: scale, 2: precision}. */
static int read_decimal_type(tcursor *c, icm__parquet_logical *lt, int depth)
{
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        int rc = id == 1   ? read_natural(c, type, &lt->scale)
                 : id == 2 ? read_natural(c, type, &lt->precision)
                           : skip_field(c, type, depth + 1);
        if (rc != 0)
            return rc;
    }
    return r;
}

/* TimeType / TimestampType {1: isAdjustedToUTC, 2: unit (TimeUnit)}. */
static int read_time_type(tcursor *c, icm__parquet_logical *lt, int depth)
{
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        int rc;
        if (id == 1)
            rc = read_bool(type, &lt->adjusted_to_utc);
        else if (id == 2)
            rc = type == CT_STRUCT ? read_union_member(c, &lt->unit, depth + 1) : PARSE_CORRUPT;
        else
            rc = skip_field(c, type, depth + 1);
        if (rc != 0)
            return rc;
    }
    return r;
}

/* IntType {1: bitWidth (i8), 2: isSigned}. */
static int read_int_type(tcursor *c, icm__parquet_logical *lt, int depth)
{
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        int rc = 0;
        uint8_t b;
        if (id == 1) {
            if (type != CT_BYTE || get_byte(c, &b) != 0)
                return PARSE_CORRUPT;
            lt->bit_width = (int8_t)b;
        } else if (id == 2) {
            rc = read_bool(type, &lt->is_signed);
        } else {
            rc = skip_field(c, type, depth + 1);
        }
        if (rc != 0)
            return rc;
    }
    return r;
}

/* LogicalType: a union of (mostly empty) structs; the member's field id is the kind. */
static int read_logical_type(tcursor *c, icm__parquet_logical *lt, int depth)
{
    if (depth > MAX_DEPTH)
        return PARSE_CORRUPT;
    int64_t id = 0;
    int type, r, members = 0;
    while ((r = next_field(c, &id, &type)) == 1) {
        if (++members > 1 || type != CT_STRUCT || id <= 0)
            return PARSE_CORRUPT;
        lt->kind = (int32_t)id;
        int rc;
        switch (id) {
        case ICM__PQ_LT_DECIMAL:
            rc = read_decimal_type(c, lt, depth + 1);
            break;
        case ICM__PQ_LT_TIME:
        case ICM__PQ_LT_TIMESTAMP:
            rc = read_time_type(c, lt, depth + 1);
            break;
        case ICM__PQ_LT_INTEGER:
            rc = read_int_type(c, lt, depth + 1);
            break;
        default:
            rc = skip_struct(c, depth + 1) == 0 ? 0 : PARSE_CORRUPT;
        }
        if (rc != 0)
            return rc;
    }
    return r == 0 && members == 1 ? 0 : PARSE_CORRUPT;
}

static void element_init(icm__parquet_element *e)
{
    memset(e, 0, sizeof *e);
    e->type = e->type_length = e->repetition = e->num_children = -1;
    e->converted_type = e->scale = e->precision = -1;
    e->logical.scale = e->logical.precision = -1;
}

/* SchemaElement {1 type, 2 type_length, 3 repetition_type, 4 name, 5 num_children,
 * 6 converted_type, 7 scale, 8 precision, 9 field_id, 10 logicalType}. */
static int read_element(tcursor *c, icm__parquet_element *e)
{
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        int rc;
        switch (id) {
        case 1: rc = read_natural(c, type, &e->type); break;
        case 2: rc = read_natural(c, type, &e->type_length); break;
        case 3: rc = read_natural(c, type, &e->repetition); break;
        case 4: rc = read_name(c, type, &e->name); break;
        case 5: rc = read_natural(c, type, &e->num_children); break;
        case 6: rc = read_natural(c, type, &e->converted_type); break;
        case 7: rc = read_natural(c, type, &e->scale); break;
        case 8: rc = read_natural(c, type, &e->precision); break;
        case 9:
            rc = read_i32(c, type, &e->field_id);
            e->has_field_id = rc == 0;
            break;
        case 10:
            rc = type == CT_STRUCT ? read_logical_type(c, &e->logical, 3) : PARSE_CORRUPT;
            break;
        default: rc = skip_field(c, type, 3);
        }
        if (rc != 0)
            return rc;
    }
    return r == 0 && e->name != NULL ? 0 : PARSE_CORRUPT;
}

/* Check that elements[i] starts a well-formed subtree and record subtree sizes. The loop
 * bound (every child needs an element of its own) keeps the walk linear in `count`. */
static int check_subtree(icm__parquet_element *el, size_t count, size_t i, int depth)
{
    if (depth > ICM__PARQUET_MAX_SCHEMA_DEPTH)
        return PARSE_CORRUPT;
    icm__parquet_element *e = &el[i];
    if (e->repetition < ICM__PQ_REQUIRED || e->repetition > ICM__PQ_REPEATED)
        return PARSE_CORRUPT; /* every element but the root has a repetition */
    size_t n = 1;
    if (e->num_children > 0) {
        for (int32_t k = 0; k < e->num_children; k++) {
            if (count - i <= n || check_subtree(el, count, i + n, depth + 1) != 0)
                return PARSE_CORRUPT;
            n += el[i + n].subtree_size;
        }
    } else if (e->type < 0) {
        return PARSE_CORRUPT; /* a leaf without a physical type */
    } else {
        e->num_children = -1;
    }
    e->subtree_size = n;
    return 0;
}

/* The root is a group whatever it says (an empty file schema has no children); its children
 * must cover the rest of the list exactly. */
static int check_tree(icm__parquet_schema *s)
{
    icm__parquet_element *root = &s->elements[0];
    if (root->num_children < 0)
        root->num_children = 0;
    size_t n = 1;
    for (int32_t k = 0; k < root->num_children; k++) {
        if (n >= s->element_count || check_subtree(s->elements, s->element_count, n, 1) != 0)
            return PARSE_CORRUPT;
        n += s->elements[n].subtree_size;
    }
    root->subtree_size = n;
    return n == s->element_count ? 0 : PARSE_CORRUPT;
}

/* FileMetaData field 2: list<SchemaElement>, then the tree check. */
static int read_schema_list(tcursor *c, int type, icm__parquet_schema *s, const char *location)
{
    uint8_t h;
    uint64_t n;
    if (type != CT_LIST || get_byte(c, &h) != 0)
        return corrupt_at(location, c, "schema is not a list");
    n = h >> 4;
    if ((n == 15 && get_varint(c, &n) != 0) || (h & 0x0f) != CT_STRUCT)
        return corrupt_at(location, c, "schema is not a list of SchemaElement");
    /* Every element takes at least three bytes (name header, name length, stop). */
    if (n == 0 || n > (uint64_t)(c->end - c->p) / 3)
        return corrupt_at(location, c, "schema list size out of range");
    if (n > ICM__PARQUET_MAX_SCHEMA_ELEMENTS)
        return corrupt_at(location, c, "more schema elements than icemaint reads (100000)");
    s->elements = icm__calloc((size_t)n, sizeof *s->elements);
    if (s->elements == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        element_init(&s->elements[i]);
        s->element_count = i + 1; /* so the free below sees every name read so far */
        int rc = read_element(c, &s->elements[i]);
        if (rc == PARSE_NOMEM)
            return icm__error_oom();
        if (rc != 0)
            return corrupt_at(location, c, "malformed SchemaElement in footer");
    }
    if (check_tree(s) != 0)
        return corrupt(location, "schema elements do not form one tree (num_children, missing "
                                 "type or repetition, or nested too deep)");
    return 0;
}

int icm__parquet_footer_schema(const uint8_t *footer, size_t len, const char *location,
                               icm__parquet_schema **out)
{
    *out = NULL;
    icm__parquet_schema *s = icm__calloc(1, sizeof *s);
    if (s == NULL)
        return ICM_ENOMEM;
    s->num_rows = -1;
    tcursor c = cursor(footer, len);
    int64_t id = 0;
    int type, r = 0, rc = 0;
    while (rc == 0 && (r = next_field(&c, &id, &type)) == 1) {
        if (id == 2) {
            rc = s->elements == NULL ? read_schema_list(&c, type, s, location)
                                     : corrupt_at(location, &c, "schema appears twice in footer");
        } else if (id == 3) {
            uint64_t v;
            if (type != CT_I64 || get_varint(&c, &v) != 0)
                rc = corrupt_at(location, &c, "num_rows is not an i64");
            else if ((s->num_rows = unzigzag(v)) < 0)
                rc = corrupt_at(location, &c, "negative num_rows");
        } else if (skip_field(&c, type, 1) != 0) {
            rc = corrupt_at(location, &c, "malformed FileMetaData in footer");
        }
    }
    if (rc == 0 && r != 0)
        rc = corrupt_at(location, &c, "malformed FileMetaData in footer");
    if (rc == 0 && s->num_rows < 0)
        rc = corrupt(location, "footer has no num_rows");
    if (rc == 0 && s->elements == NULL)
        rc = corrupt(location, "footer has no schema");
    if (rc != 0) {
        icm__parquet_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void icm__parquet_schema_free(icm__parquet_schema *schema)
{
    if (schema == NULL)
        return;
    for (size_t i = 0; i < schema->element_count; i++)
        icm__free(schema->elements[i].name);
    icm__free(schema->elements);
    icm__free(schema);
}

/* ---- column chunk statistics ------------------------------------------------------------ */

/* A binary field's bytes, borrowed. */
static int read_binary(tcursor *c, int type, const uint8_t **out, size_t *len)
{
    uint64_t n;
    if (type != CT_BINARY)
        return fail(c, "statistic is not binary");
    if (get_varint(c, &n) != 0)
        return PARSE_CORRUPT;
    if (n > (uint64_t)(c->end - c->p))
        return fail(c, "statistic length beyond the end of the footer");
    *out = c->p;
    *len = (size_t)n;
    c->p += n;
    return 0;
}

/* Statistics {1: max, 2: min, 5: max_value, 6: min_value}; the deprecated pair only where
 * `legacy_ok` (its signed byte order is the type's own). */
static int read_statistics(tcursor *c, bool legacy_ok, icm__parquet_chunk_stats *out)
{
    icm__parquet_chunk_stats legacy = {0};
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        int rc;
        switch (id) {
        case 1:
            rc = read_binary(c, type, &legacy.max, &legacy.max_len);
            legacy.has_max = true;
            break;
        case 2:
            rc = read_binary(c, type, &legacy.min, &legacy.min_len);
            legacy.has_min = true;
            break;
        case 5:
            rc = read_binary(c, type, &out->max, &out->max_len);
            out->has_max = true;
            break;
        case 6:
            rc = read_binary(c, type, &out->min, &out->min_len);
            out->has_min = true;
            break;
        default: rc = skip_field(c, type, 6);
        }
        if (rc != 0)
            return PARSE_CORRUPT;
    }
    if (r != 0)
        return PARSE_CORRUPT;
    if (legacy_ok && !out->has_min && legacy.has_min) {
        out->min = legacy.min;
        out->min_len = legacy.min_len;
        out->has_min = true;
    }
    if (legacy_ok && !out->has_max && legacy.has_max) {
        out->max = legacy.max;
        out->max_len = legacy.max_len;
        out->has_max = true;
    }
    return 0;
}

/* ColumnMetaData {12: statistics}. */
static int read_column_meta(tcursor *c, bool legacy_ok, icm__parquet_chunk_stats *out)
{
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        int rc = id == 12 && type == CT_STRUCT ? read_statistics(c, legacy_ok, out)
                                                : skip_field(c, type, 5);
        if (rc != 0)
            return PARSE_CORRUPT;
    }
    return r == 0 ? 0 : PARSE_CORRUPT;
}

/* ColumnChunk {3: meta_data} (absent for an encrypted column: no statistics). */
static int read_column_chunk(tcursor *c, bool legacy_ok, icm__parquet_chunk_stats *out)
{
    int64_t id = 0;
    int type, r;
    while ((r = next_field(c, &id, &type)) == 1) {
        int rc = id == 3 && type == CT_STRUCT ? read_column_meta(c, legacy_ok, out)
                                               : skip_field(c, type, 4);
        if (rc != 0)
            return PARSE_CORRUPT;
    }
    return r == 0 ? 0 : PARSE_CORRUPT;
}

/* Whether the deprecated min/max of a leaf are in its own order: numbers and booleans. */
static bool legacy_order_ok(const icm__parquet_element *leaf)
{
    return leaf->type == ICM__PQ_BOOLEAN || leaf->type == ICM__PQ_INT32 ||
           leaf->type == ICM__PQ_INT64 || leaf->type == ICM__PQ_FLOAT ||
           leaf->type == ICM__PQ_DOUBLE;
}

/* RowGroup {1: columns}: exactly leaf_count chunks, into `row`. */
static int read_row_group(tcursor *c, icm__parquet_stats *s, icm__parquet_chunk_stats *row)
{
    int64_t id = 0;
    int type, r;
    bool columns = false;
    while ((r = next_field(c, &id, &type)) == 1) {
        if (id != 1 || type != CT_LIST) {
            if (skip_field(c, type, 3) != 0)
                return PARSE_CORRUPT;
            continue;
        }
        uint8_t h;
        uint64_t n;
        if (columns || get_byte(c, &h) != 0)
            return PARSE_CORRUPT;
        n = h >> 4;
        if ((n == 15 && get_varint(c, &n) != 0) || (h & 0x0f) != CT_STRUCT)
            return fail(c, "columns is not a list of ColumnChunk");
        if (n != s->leaf_count)
            return fail(c, "a row group's column count is not the schema's leaf count");
        for (size_t k = 0; k < s->leaf_count; k++) {
            const icm__parquet_element *leaf = &s->schema->elements[s->leaves[k]];
            if (read_column_chunk(c, legacy_order_ok(leaf), &row[k]) != 0)
                return PARSE_CORRUPT;
        }
        columns = true;
    }
    return r == 0 && columns ? 0 : fail(c, "a row group without columns");
}

/* FileMetaData field 4: list<RowGroup>. */
static int read_row_groups(tcursor *c, int type, icm__parquet_stats *s, const char *location)
{
    uint8_t h;
    uint64_t n;
    if (type != CT_LIST || get_byte(c, &h) != 0)
        return corrupt_at(location, c, "row_groups is not a list");
    n = h >> 4;
    if ((n == 15 && get_varint(c, &n) != 0) || (h & 0x0f) != CT_STRUCT)
        return corrupt_at(location, c, "row_groups is not a list of RowGroup");
    if (n > (uint64_t)(c->end - c->p))
        return corrupt_at(location, c, "row_groups size beyond the end of the footer");
    if (s->leaf_count > 0 && n > ICM__PARQUET_MAX_CHUNKS / s->leaf_count)
        return corrupt_at(location, c, "more row groups x columns than icemaint reads");
    if (n > 0 && s->leaf_count > 0) {
        s->chunks = icm__calloc((size_t)n * s->leaf_count, sizeof *s->chunks);
        if (s->chunks == NULL)
            return ICM_ENOMEM;
    }
    for (size_t g = 0; g < n; g++) {
        if (read_row_group(c, s, s->chunks != NULL ? &s->chunks[g * s->leaf_count] : NULL) != 0)
            return corrupt_at(location, c, "malformed RowGroup in footer");
    }
    s->row_group_count = (size_t)n;
    return 0;
}

/* icm__parquet_footer_stats on a footer it takes (*footer NULL then, even on failure). */
static int decode_stats(uint8_t **footer, size_t len, const char *location, void **out)
{
    *out = NULL;
    icm__parquet_stats *s = icm__calloc(1, sizeof *s);
    if (s == NULL)
        return ICM_ENOMEM;
    s->footer = *footer;
    *footer = NULL;
    int rc = icm__parquet_footer_schema(s->footer, len, location, &s->schema);
    for (size_t i = 1; rc == 0 && i < s->schema->element_count; i++)
        s->leaf_count += s->schema->elements[i].num_children < 0;
    if (rc == 0 && s->leaf_count > 0 &&
        (s->leaves = icm__reallocarray(NULL, s->leaf_count, sizeof *s->leaves)) == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 1, k = 0; rc == 0 && i < s->schema->element_count; i++)
        if (s->schema->elements[i].num_children < 0)
            s->leaves[k++] = i;
    tcursor c = cursor(s->footer, len);
    int64_t id = 0;
    int type, r = 0;
    bool seen = false;
    while (rc == 0 && (r = next_field(&c, &id, &type)) == 1) {
        if (id == 4 && !seen) {
            rc = read_row_groups(&c, type, s, location);
            seen = true;
        } else if (skip_field(&c, type, 1) != 0) {
            rc = corrupt_at(location, &c, "malformed FileMetaData in footer");
        }
    }
    if (rc == 0 && r != 0)
        rc = corrupt_at(location, &c, "malformed FileMetaData in footer");
    if (rc != 0) {
        icm__parquet_stats_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int icm__parquet_footer_stats(const uint8_t *footer, size_t len, const char *location,
                              icm__parquet_stats **out)
{
    *out = NULL;
    uint8_t *copy = len > 0 ? icm__malloc(len) : NULL;
    if (len > 0 && copy == NULL)
        return ICM_ENOMEM;
    if (len > 0)
        memcpy(copy, footer, len);
    void *decoded = NULL;
    int rc = decode_stats(&copy, len, location, &decoded);
    icm__free(copy); /* (NULL once taken) */
    *out = decoded;
    return rc;
}

int icm__parquet_read_stats(icm_fileio *io, const char *location, icm__parquet_stats **out,
                            int64_t *out_size_bytes)
{
    void *decoded = NULL;
    int rc = read_decoded(io, location, decode_stats, &decoded, out_size_bytes);
    *out = decoded;
    return rc;
}

void icm__parquet_stats_free(icm__parquet_stats *stats)
{
    if (stats == NULL)
        return;
    icm__parquet_schema_free(stats->schema);
    icm__free(stats->leaves);
    icm__free(stats->chunks);
    icm__free(stats->footer);
    icm__free(stats);
}
