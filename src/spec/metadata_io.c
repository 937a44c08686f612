/*
 * spec/metadata_io.c: table metadata bytes in and out: gzip and zstd inflation (detected by
 * magic), reading through an icm_fileio, and the JSON text writer used for new metadata files.
 *
 * The writer is ours rather than json_dumpb() because jansson prints every real with 17
 * significant digits (a schema default 0.34234 would be rewritten as 0.34233999999999998).
 * Ours prints the shortest text that reads back to the same double, keeps keys in document
 * order and integers exact, so a metadata file survives a rewrite with only formatting changes.
 * zlib and zstd allocate through icm__malloc, so allocation failures are reported as
 * ICM_ENOMEM like everywhere else.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDCtx_advanced: route zstd through our allocator */
#include <zstd.h>
#include <zstd_errors.h>

#include "icemaint/fileio.h"
#include "spec/metadata_internal.h"

/* ------------------------------------------------------------------------------------------ */
/* inflation                                                                                   */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return icm__calloc(items, size);
}

static void z_free(voidpf opaque, voidpf address)
{
    (void)opaque;
    icm__free(address);
}

static void *zstd_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return icm__malloc(size);
}

static void zstd_free(void *opaque, void *address)
{
    (void)opaque;
    icm__free(address);
}

/* Make room for at least one more output chunk, refusing to grow past the size limit. */
static int grow_output(icm__buf *out, const char *location, const char *codec)
{
    if (out->len >= ICM__METADATA_MAX_BYTES)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                              "%s metadata inflates to more than %zu bytes", codec,
                              (size_t)ICM__METADATA_MAX_BYTES);
    size_t chunk = out->cap > out->len + 1 ? out->cap - out->len - 1 : 0;
    if (chunk >= 4096)
        return 0;
    return icm__buf_grow(out, out->cap < 65536 ? 65536 : out->cap);
}

static int gunzip(const char *data, size_t len, const char *location, icm__buf *out)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    zs.zalloc = z_alloc;
    zs.zfree = z_free;
    int zrc = inflateInit2(&zs, 16 + MAX_WBITS); /* 16: gzip wrapper only */
    if (zrc != Z_OK)
        return zrc == Z_MEM_ERROR ? icm__error_oom()
                                  : icm__error_set(ICM_ERRCLASS_SPEC, ICM_ERROR, location,
                                                   "zlib inflateInit2 failed (%d)", zrc);
    zs.next_in = (Bytef *)(uintptr_t)data;
    int rc = 0;
    size_t left = len;
    for (;;) {
        if ((rc = grow_output(out, location, "gzip")) != 0)
            break;
        /* zlib counts in uInt: feed and drain in pieces of at most UINT_MAX bytes */
        uInt in_now = left > UINT_MAX ? UINT_MAX : (uInt)left;
        size_t room = out->cap - out->len - 1;
        uInt out_now = room > UINT_MAX ? UINT_MAX : (uInt)room;
        zs.avail_in = in_now;
        zs.next_out = (Bytef *)out->data + out->len;
        zs.avail_out = out_now;
        zrc = inflate(&zs, Z_NO_FLUSH);
        size_t consumed = in_now - zs.avail_in, produced = out_now - zs.avail_out;
        left -= consumed;
        out->len += produced;
        out->data[out->len] = '\0';
        if (zrc == Z_STREAM_END) {
            if (left == 0)
                break;
            /* concatenated gzip members (allowed by RFC 1952): start the next one */
            if (inflateReset(&zs) != Z_OK) {
                rc = icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                                    "corrupt gzip stream");
                break;
            }
            continue;
        }
        if (zrc == Z_MEM_ERROR) {
            rc = icm__error_oom();
            break;
        }
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            rc = icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                                "corrupt gzip stream: %s", zs.msg ? zs.msg : "inflate failed");
            break;
        }
        if ((left == 0 && zs.avail_out != 0) || (consumed == 0 && produced == 0)) {
            rc = icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                                "truncated gzip stream");
            break;
        }
    }
    inflateEnd(&zs);
    return rc;
}

static int unzstd(const char *data, size_t len, const char *location, icm__buf *out)
{
    ZSTD_customMem mem = {zstd_alloc, zstd_free, NULL};
    ZSTD_DCtx *dctx = ZSTD_createDCtx_advanced(mem);
    if (dctx == NULL)
        return icm__error_oom();
    ZSTD_inBuffer in = {data, len, 0};
    size_t zrc = 1;
    int rc = 0;
    /* A zero return means a frame ended; the loop goes on while input remains, which also
     * decodes concatenated frames. Input exhausted mid-frame is a truncated file. */
    while (in.pos < in.size || zrc != 0) {
        if ((rc = grow_output(out, location, "zstd")) != 0)
            break;
        ZSTD_outBuffer o = {out->data + out->len, out->cap - out->len - 1, 0};
        size_t in_before = in.pos;
        zrc = ZSTD_decompressStream(dctx, &o, &in);
        if (ZSTD_isError(zrc)) {
            rc = ZSTD_getErrorCode(zrc) == ZSTD_error_memory_allocation
                     ? icm__error_oom()
                     : icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                                      "corrupt zstd stream: %s", ZSTD_getErrorName(zrc));
            break;
        }
        out->len += o.pos;
        out->data[out->len] = '\0';
        if (zrc != 0 && in.pos == in.size && in.pos == in_before && o.pos < o.size) {
            rc = icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                                "truncated zstd stream");
            break;
        }
    }
    ZSTD_freeDCtx(dctx);
    return rc;
}

int icm__metadata_inflate(const char *data, size_t len, const char *location, char **out,
                          size_t *out_len)
{
    static const unsigned char gzip_magic[2] = {0x1f, 0x8b};
    static const unsigned char zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
    *out = NULL;
    *out_len = 0;
    /* Neither magic can start a JSON text (0x1f is a control byte, 0x28 is '('), so sniffing
     * never mistakes plain metadata for a compressed stream. */
    bool gz = len >= 2 && memcmp(data, gzip_magic, 2) == 0;
    bool zs = len >= 4 && memcmp(data, zstd_magic, 4) == 0;
    if (!gz && !zs)
        return 0;
    icm__buf b = ICM__BUF_INIT;
    int rc = gz ? gunzip(data, len, location, &b) : unzstd(data, len, location, &b);
    if (rc != 0) {
        icm__buf_dispose(&b);
        return rc;
    }
    *out = icm__buf_detach(&b, out_len);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

/* ------------------------------------------------------------------------------------------ */
/* JSON writer                                                                                 */

static void write_indent(icm__buf *b, bool pretty, int depth)
{
    if (!pretty)
        return;
    icm__buf_putc(b, '\n');
    for (int i = 0; i < depth; i++)
        icm__buf_put(b, "  ", 2);
}

static void write_string(icm__buf *b, const char *s, size_t n)
{
    icm__buf_putc(b, '"');
    size_t run = 0; /* bytes that need no escaping are copied in runs */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = NULL;
        char hex[8];
        switch (ch) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default:
            if (ch < 0x20) {
                snprintf(hex, sizeof hex, "\\u%04x", ch);
                esc = hex;
            }
        }
        if (esc == NULL) {
            run++;
            continue;
        }
        icm__buf_put(b, s + i - run, run);
        run = 0;
        icm__buf_puts(b, esc);
    }
    icm__buf_put(b, s + n - run, run);
    icm__buf_putc(b, '"');
}

/* Shortest "%.{p}g" that reads back as the same double; always looks like a real (so "1.0"
 * stays a real and does not turn into the integer 1 on the next read). */
static void write_real(icm__buf *b, double d)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    bool looks_real = false;
    for (char *p = tmp; *p; p++) {
        if (*p == ',') /* a locale's decimal comma */
            *p = '.';
        if (*p == '.' || *p == 'e' || *p == 'E')
            looks_real = true;
    }
    icm__buf_puts(b, tmp);
    if (!looks_real)
        icm__buf_puts(b, ".0");
}

static void write_value(icm__buf *b, json_t *v, bool pretty, int depth)
{
    const char *key;
    json_t *child;
    size_t i, n;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        if (json_object_size(v) == 0) {
            icm__buf_puts(b, "{}");
            break;
        }
        icm__buf_putc(b, '{');
        n = 0;
        json_object_foreach(v, key, child) {
            if (n++ > 0)
                icm__buf_putc(b, ',');
            write_indent(b, pretty, depth + 1);
            write_string(b, key, strlen(key));
            icm__buf_puts(b, pretty ? ": " : ":");
            write_value(b, child, pretty, depth + 1);
        }
        write_indent(b, pretty, depth);
        icm__buf_putc(b, '}');
        break;
    case JSON_ARRAY:
        if (json_array_size(v) == 0) {
            icm__buf_puts(b, "[]");
            break;
        }
        icm__buf_putc(b, '[');
        json_array_foreach(v, i, child) {
            if (i > 0)
                icm__buf_putc(b, ',');
            write_indent(b, pretty, depth + 1);
            write_value(b, child, pretty, depth + 1);
        }
        write_indent(b, pretty, depth);
        icm__buf_putc(b, ']');
        break;
    case JSON_STRING:
        write_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        icm__buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        write_real(b, json_real_value(v));
        break;
    case JSON_TRUE: icm__buf_puts(b, "true"); break;
    case JSON_FALSE: icm__buf_puts(b, "false"); break;
    case JSON_NULL: icm__buf_puts(b, "null"); break;
    }
}

int icm__json_write(icm__buf *buf, const json_t *value, bool pretty)
{
    /* jansson's iteration API takes non-const pointers but does not modify the value. */
    write_value(buf, (json_t *)(uintptr_t)value, pretty, 0);
    return buf->oom ? ICM_ENOMEM : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* public read / write                                                                         */

int icm_table_metadata_read(icm_table_metadata **out, icm_fileio *io, const char *location)
{
    if (out == NULL || io == NULL || location == NULL)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, location, "NULL argument");
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    int rc = icm_fileio_read(&data, &len, io, location);
    if (rc != 0)
        return rc;
    rc = icm_table_metadata_parse(out, data, len, location);
    icm_free(data);
    return rc;
}

int icm_table_metadata_to_json(char **out, size_t *out_len, const icm_table_metadata *md)
{
    if (md == NULL || out == NULL)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "NULL argument");
    *out = NULL;
    icm__buf b = ICM__BUF_INIT;
    int rc = icm__json_write(&b, icm__table_metadata_json(md), true);
    if (rc == 0)
        rc = icm__buf_putc(&b, '\n');
    if (rc != 0) {
        icm__buf_dispose(&b);
        return ICM_ENOMEM;
    }
    size_t len = 0;
    *out = icm__buf_detach(&b, &len);
    if (*out == NULL)
        return ICM_ENOMEM;
    if (out_len != NULL)
        *out_len = len;
    return 0;
}

int icm_table_metadata_to_json_gzip(char **out, size_t *out_len, const icm_table_metadata *md)
{
    char *text = NULL;
    size_t text_len = 0;
    int rc = icm_table_metadata_to_json(&text, &text_len, md);
    if (rc != 0)
        return rc;
    *out = NULL;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    zs.zalloc = z_alloc;
    zs.zfree = z_free;
    /* 16 + MAX_WBITS: gzip wrapper, as Java's GZIPOutputStream writes */
    int zrc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                           Z_DEFAULT_STRATEGY);
    if (zrc != Z_OK) {
        icm__free(text);
        return zrc == Z_MEM_ERROR ? icm__error_oom()
                                  : icm__error_set(ICM_ERRCLASS_SPEC, ICM_ERROR, NULL,
                                                   "zlib deflateInit2 failed (%d)", zrc);
    }
    if (text_len > UINT_MAX) {
        deflateEnd(&zs);
        icm__free(text);
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, NULL,
                              "metadata JSON of %zu bytes is too large to gzip", text_len);
    }
    uLong bound = deflateBound(&zs, (uLong)text_len);
    char *gz = icm__malloc(bound);
    if (gz == NULL) {
        deflateEnd(&zs);
        icm__free(text);
        return ICM_ENOMEM;
    }
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)text_len;
    zs.next_out = (Bytef *)gz;
    zs.avail_out = (uInt)bound;
    zrc = deflate(&zs, Z_FINISH);
    size_t gz_len = (size_t)zs.total_out;
    deflateEnd(&zs);
    icm__free(text);
    if (zrc != Z_STREAM_END) {
        icm__free(gz);
        return zrc == Z_MEM_ERROR ? icm__error_oom()
                                  : icm__error_set(ICM_ERRCLASS_SPEC, ICM_ERROR, NULL,
                                                   "zlib deflate failed (%d)", zrc);
    }
    *out = gz;
    if (out_len != NULL)
        *out_len = gz_len;
    return 0;
}
