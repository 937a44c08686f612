/*
 * puffin/footer.c: reading a Puffin file's footer (puffin.h).
 *
 * Bounds first, then JSON: the fixed tail says how long the payload is, which must fit between
 * the file's leading magic and the footer's own; the payload is parsed by the project's strict
 * reader (spec/json_parse.c: exact int64 integers, valid UTF-8, no duplicate key, bounded
 * depth), so hostile bytes give ICM_EINVALID, never a crash or a rounded offset.
 */
#include <stdlib.h>
#include <string.h>

#include "puffin/puffin.h"
#include "spec/metadata_internal.h"
#include "util/util.h"

static const uint8_t MAGIC[4] = {'P', 'F', 'A', '1'};

/* The footer's tail is read this far back at once: footers of a few blobs fit. */
#define FIRST_READ_BYTES ((size_t)64 << 10)

static int corrupt(const char *location, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                          "not a readable Puffin file: %s", what);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int icm__puffin_footer_size(const uint8_t tail[ICM__PUFFIN_TAIL_BYTES], int64_t file_size_bytes,
                            const char *location, size_t *out_bytes)
{
    *out_bytes = 0;
    if (memcmp(tail + 8, MAGIC, 4) != 0)
        return corrupt(location, "no PFA1 magic at its end");
    uint32_t flags = le32(tail + 4);
    if (flags & 1u)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, location,
                              "Puffin footer payload is compressed (not read)");
    if (flags != 0)
        return corrupt(location, "reserved footer flag bits are set");
    /* A 4-byte integer is signed (spec): a negative size is no size. */
    uint32_t payload = le32(tail);
    if (payload > INT32_MAX || payload > ICM__PUFFIN_MAX_PAYLOAD_BYTES)
        return corrupt(location, "footer payload size out of range");
    /* leading magic, footer magic, payload, tail */
    int64_t need = 4 + 4 + (int64_t)payload + ICM__PUFFIN_TAIL_BYTES;
    if (file_size_bytes < need)
        return corrupt(location, "footer payload size larger than the file");
    *out_bytes = (size_t)need - 4;
    return 0;
}

/* A property's value as a non-negative decimal integer (digits only), else -1. */
static int64_t decimal_or_minus_one(const json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    size_t n = s != NULL ? json_string_length(v) : 0;
    if (n == 0 || n > 18)
        return -1; /* (18 digits always fit an int64) */
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (s[i] - '0');
    }
    return x;
}

static int blob_error(const char *location, size_t i, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                          "not a readable Puffin file: footer blob %zu %s", i, what);
}

/* Blob i of the footer into *b; the blobs' region is [4, blobs_end). */
static int decode_blob(const json_t *o, size_t i, int64_t blobs_end, const char *location,
                       icm__puffin_blob *b)
{
    if (!json_is_object(o))
        return blob_error(location, i, "is not an object");
    const json_t *off = json_object_get(o, "offset"), *len = json_object_get(o, "length");
    if (!json_is_integer(off) || !json_is_integer(len))
        return blob_error(location, i, "has no integer offset and length");
    b->offset_bytes = json_integer_value(off);
    b->length_bytes = json_integer_value(len);
    if (b->offset_bytes < 4 || b->length_bytes < 0 || b->offset_bytes > blobs_end ||
        b->length_bytes > blobs_end - b->offset_bytes)
        return blob_error(location, i, "lies outside the file's blobs");
    b->cardinality = -1;
    const json_t *props = json_object_get(o, "properties");
    if (props == NULL || json_is_null(props))
        return 0;
    if (!json_is_object(props))
        return blob_error(location, i, "has properties that are not an object");
    b->cardinality = decimal_or_minus_one(json_object_get(props, "cardinality"));
    const json_t *ref = json_object_get(props, "referenced-data-file");
    if (json_is_string(ref)) {
        size_t n = json_string_length(ref);
        const char *s = json_string_value(ref);
        if (memchr(s, '\0', n) != NULL) /* (json_parse refuses U+0000; never trust that far) */
            return blob_error(location, i, "names a data file with a NUL byte");
        if ((b->referenced_data_file = icm__strndup(s, n)) == NULL)
            return ICM_ENOMEM;
    }
    return 0;
}

static int by_offset(const void *a, const void *b)
{
    const icm__puffin_blob *x = a, *y = b;
    int by = (x->offset_bytes > y->offset_bytes) - (x->offset_bytes < y->offset_bytes);
    return by != 0 ? by : (x->length_bytes > y->length_bytes) - (x->length_bytes < y->length_bytes);
}

int icm__puffin_footer_decode(const uint8_t *footer, size_t len, int64_t file_size_bytes,
                              const char *location, icm__puffin_footer *out)
{
    *out = (icm__puffin_footer)ICM__PUFFIN_FOOTER_INIT;
    if (len < 4 + ICM__PUFFIN_TAIL_BYTES)
        return corrupt(location, "footer too short");
    size_t measured = 0;
    int rc = icm__puffin_footer_size(footer + len - ICM__PUFFIN_TAIL_BYTES, file_size_bytes,
                                     location, &measured);
    if (rc != 0)
        return rc;
    if (measured != len)
        return corrupt(location, "footer length differs from its payload size");
    if (memcmp(footer, MAGIC, 4) != 0)
        return corrupt(location, "no PFA1 magic where its footer starts");
    json_t *doc = NULL;
    rc = icm__json_parse((const char *)footer + 4, len - 4 - ICM__PUFFIN_TAIL_BYTES, location,
                         &doc);
    if (rc != 0)
        return rc;
    const json_t *blobs = json_is_object(doc) ? json_object_get(doc, "blobs") : NULL;
    if (!json_is_array(blobs)) {
        json_decref(doc);
        return corrupt(location, "footer payload is not a FileMetadata with a blobs list");
    }
    size_t n = json_array_size(blobs);
    int64_t blobs_end = file_size_bytes - (int64_t)len;
    if (n > 0 && (out->blobs = icm__calloc(n, sizeof *out->blobs)) == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = decode_blob(json_array_get(blobs, i), i, blobs_end, location, &out->blobs[i]);
        out->count = i + 1; /* (a blob half decoded is disposed with the rest) */
    }
    json_decref(doc);
    if (rc == 0 && out->count > 1)
        qsort(out->blobs, out->count, sizeof *out->blobs, by_offset);
    return rc;
}

/* Read `len` bytes at `offset` of `location`: all of them, or ICM_EINVALID. */
static int read_exact(icm_fileio *io, const char *location, int64_t offset, uint8_t *buf,
                      size_t len)
{
    size_t got = 0;
    int rc = icm_fileio_read_range(&got, io, location, offset, buf, len);
    if (rc == 0 && got != len)
        rc = corrupt(location, "file shorter than its size");
    return rc;
}

int icm__puffin_read_footer(icm_fileio *io, const char *location, int64_t file_size_bytes,
                            icm__puffin_footer *out)
{
    *out = (icm__puffin_footer)ICM__PUFFIN_FOOTER_INIT;
    if (file_size_bytes < 0) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        int rc = icm_fileio_stat(&info, io, location);
        if (rc != 0)
            return rc;
        file_size_bytes = info.size_bytes;
    }
    if (file_size_bytes < 4 + 4 + ICM__PUFFIN_TAIL_BYTES)
        return corrupt(location, "too short for a footer");
    size_t first = (uint64_t)file_size_bytes < FIRST_READ_BYTES ? (size_t)file_size_bytes
                                                                : FIRST_READ_BYTES;
    uint8_t *buf = icm__malloc(first);
    if (buf == NULL)
        return ICM_ENOMEM;
    size_t footer_len = 0;
    int rc = read_exact(io, location, file_size_bytes - (int64_t)first, buf, first);
    if (rc == 0)
        rc = icm__puffin_footer_size(buf + first - ICM__PUFFIN_TAIL_BYTES, file_size_bytes,
                                     location, &footer_len);
    if (rc == 0 && footer_len > first) {
        icm__free(buf);
        if ((buf = icm__malloc(footer_len)) == NULL)
            return ICM_ENOMEM;
        first = footer_len;
        rc = read_exact(io, location, file_size_bytes - (int64_t)footer_len, buf, footer_len);
    }
    if (rc == 0)
        rc = icm__puffin_footer_decode(buf + first - footer_len, footer_len, file_size_bytes,
                                       location, out);
    icm__free(buf);
    return rc;
}

const icm__puffin_blob *icm__puffin_footer_find(const icm__puffin_footer *f, int64_t offset_bytes)
{
    size_t lo = 0, hi = f->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->blobs[mid].offset_bytes < offset_bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->count && f->blobs[lo].offset_bytes == offset_bytes ? &f->blobs[lo] : NULL;
}

void icm__puffin_footer_dispose(icm__puffin_footer *f)
{
    for (size_t i = 0; i < f->count; i++)
        icm__free(f->blobs[i].referenced_data_file);
    icm__free(f->blobs);
    *f = (icm__puffin_footer)ICM__PUFFIN_FOOTER_INIT;
}
