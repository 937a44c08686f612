/*
 * parquet/footer.c: read a Parquet file's row count from its footer: magic checks, the footer
 * length, and a bounds-checked Thrift compact-protocol walk over FileMetaData that decodes field
 * 3 (`num_rows`, i64) and skips everything else.
 *
 * Thrift compact protocol (Apache Thrift, doc/specs/thrift-compact-protocol.md): a field header
 * is one byte, high nibble = field-id delta (0: a zigzag varint i16 id follows), low nibble =
 * type; type 0 ends a struct. Integers are zigzag varints, binary is a varint length plus bytes,
 * lists/sets put the size in the high nibble (15: a varint size follows) and the element type in
 * the low nibble, maps are a varint size plus one byte of key/value types.
 */
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

typedef struct tcursor {
    const uint8_t *p;
    const uint8_t *end;
} tcursor;

static int get_byte(tcursor *c, uint8_t *out)
{
    if (c->p >= c->end)
        return -1;
    *out = *c->p++;
    return 0;
}

static int get_varint(tcursor *c, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b;
        if (get_byte(c, &b) != 0)
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return 0;
        }
    }
    return -1; /* more than 10 bytes */
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int skip_bytes(tcursor *c, uint64_t n)
{
    if (n > (uint64_t)(c->end - c->p))
        return -1;
    c->p += n;
    return 0;
}

static int skip_value(tcursor *c, int type, int depth);

static int skip_struct(tcursor *c, int depth)
{
    if (depth > MAX_DEPTH)
        return -1;
    for (;;) {
        uint8_t h;
        if (get_byte(c, &h) != 0)
            return -1;
        int type = h & 0x0f;
        if (type == CT_STOP)
            return 0;
        uint64_t id;
        if ((h >> 4) == 0 && get_varint(c, &id) != 0)
            return -1;
        if (type == CT_TRUE || type == CT_FALSE)
            continue; /* a struct field's boolean lives in its header */
        if (skip_value(c, type, depth + 1) != 0)
            return -1;
    }
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
        return -1;
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
    if (get_byte(c, &kv) != 0 || n > (uint64_t)(c->end - c->p))
        return -1;
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
        return -1;
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
        return -1;
    }
}

static int corrupt(const char *location, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                          "not a readable Parquet file: %s", what);
}

int icm__parquet_footer_num_rows(const uint8_t *footer, size_t len, const char *location,
                                 int64_t *out_num_rows)
{
    tcursor c = {footer, footer + len};
    int64_t field = 0;
    for (;;) {
        uint8_t h;
        if (get_byte(&c, &h) != 0)
            return corrupt(location, "footer ends inside FileMetaData");
        int type = h & 0x0f;
        if (type == CT_STOP)
            return corrupt(location, "footer has no num_rows");
        if ((h >> 4) != 0) {
            field += h >> 4;
        } else {
            uint64_t id;
            if (get_varint(&c, &id) != 0)
                return corrupt(location, "truncated field id in footer");
            field = unzigzag(id);
        }
        if (field == 3) {
            uint64_t v;
            if (type != CT_I64 || get_varint(&c, &v) != 0)
                return corrupt(location, "num_rows is not an i64");
            int64_t rows = unzigzag(v);
            if (rows < 0)
                return corrupt(location, "negative num_rows");
            *out_num_rows = rows;
            return 0;
        }
        if (type == CT_TRUE || type == CT_FALSE)
            continue;
        if (skip_value(&c, type, 1) != 0)
            return corrupt(location, "malformed FileMetaData in footer");
    }
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
    int rc = icm_fileio_read_range(io, location, offset, buf, len, &got);
    if (rc != 0)
        return rc;
    if (got != len)
        return corrupt(location, "file shorter than its size");
    return 0;
}

int icm__parquet_read_num_rows(icm_fileio *io, const char *location, int64_t *out_num_rows,
                               int64_t *out_size_bytes)
{
    icm_file_info info;
    int rc = icm_fileio_stat(io, location, &info);
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
    if (rc == 0)
        rc = icm__parquet_footer_num_rows(footer, footer_len, location, out_num_rows);
    icm__free(footer);
    if (rc == 0)
        *out_size_bytes = info.size_bytes;
    return rc;
}
