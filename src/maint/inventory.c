/*
 * maint/inventory.c: the S3 Inventory reader: manifest.json (jansson), CSV rows, and the
 * streaming of gzip data files through zlib with their MD5 checked (OpenSSL). See inventory.h
 * for the format and what is checked.
 *
 * A data file is read in ranges (icm_fileio_read_range) of READ_CHUNK bytes, each hashed and
 * inflated into OUT_CHUNK bytes of text at a time; lines are cut from that text. Nothing holds
 * more than one range, one inflated chunk and one line.
 */
#include <ctype.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#include "icemaint/errors.h"
#include "maint/inventory.h"

#define READ_CHUNK (256u * 1024u)
#define OUT_CHUNK (256u * 1024u)
/* A row is a few fields and a key of at most 1,024 bytes, URL-encoded (3 bytes each at
 * most): anything far longer is not an inventory line. */
#define MAX_LINE (64u * 1024u)

/* ------------------------------------------------------------------------------------------ */
/* manifest.json                                                                               */

void icm__inventory_manifest_clear(icm__inventory_manifest *m)
{
    if (m == NULL)
        return;
    icm__free(m->source_bucket);
    icm__free(m->destination_bucket);
    for (size_t i = 0; i < m->n_files; i++)
        icm__free(m->files[i].key);
    icm__free(m->files);
    memset(m, 0, sizeof *m);
}

static int bad_manifest(const char *name, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, name,
                          "not an S3 Inventory manifest: %s", what);
}

/* A required string member, non-empty. */
static const char *string_member(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/* creationTimestamp: ms since the epoch, a string of digits (as S3 writes it) or a number. */
static bool parse_creation(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return *out > 0;
    }
    const char *s = json_string_value(v);
    if (s == NULL || s[0] == '\0' || strlen(s) > 15)
        return false;
    int64_t n = 0;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        n = n * 10 + (*c - '0');
    }
    *out = n;
    return n > 0;
}

/* fileSchema's names into column positions. Names compare case-insensitively. */
static bool parse_schema(const char *schema, icm__inventory_columns *c)
{
    *c = (icm__inventory_columns){-1, -1, -1, -1, -1, -1, 0};
    static const char *const names[] = {"Bucket", "Key", "Size", "LastModifiedDate",
                                        "IsLatest", "IsDeleteMarker"};
    int *slots[] = {&c->bucket, &c->key, &c->size, &c->last_modified, &c->is_latest,
                    &c->is_delete_marker};
    const char *p = schema;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *end = p + strcspn(p, ",");
        const char *last = end;
        while (last > p && (last[-1] == ' ' || last[-1] == '\t'))
            last--;
        size_t n = (size_t)(last - p);
        if (n == 0 || c->count >= 1024)
            return false;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            if (strlen(names[k]) == n && strncasecmp(names[k], p, n) == 0) {
                if (*slots[k] >= 0)
                    return false; /* a column twice */
                *slots[k] = (int)c->count;
            }
        }
        c->count++;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return c->key >= 0;
}

static bool parse_md5(const char *s, char out[33])
{
    if (strlen(s) != 32)
        return false;
    for (int i = 0; i < 32; i++) {
        if (!isxdigit((unsigned char)s[i]))
            return false;
        out[i] = (char)tolower((unsigned char)s[i]);
    }
    out[32] = '\0';
    return true;
}

static int parse_files(icm__inventory_manifest *m, const char *name, const json_t *files)
{
    size_t n = json_array_size(files);
    if (!json_is_array(files))
        return bad_manifest(name, "`files` is not an array");
    if (n > 0 && (m->files = icm__calloc(n, sizeof *m->files)) == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(files, i);
        const char *key = string_member(f, "key");
        if (key == NULL)
            return bad_manifest(name, "a `files` entry has no `key`");
        icm__inventory_data_file *d = &m->files[i];
        d->size_bytes = -1;
        const json_t *size = json_object_get(f, "size");
        if (size != NULL) {
            if (!json_is_integer(size) || json_integer_value(size) < 0)
                return bad_manifest(name, "a `files` entry's `size` is not a byte count");
            d->size_bytes = (int64_t)json_integer_value(size);
        }
        const json_t *md5 = json_object_get(f, "MD5checksum");
        if (md5 != NULL && (!json_is_string(md5) || !parse_md5(json_string_value(md5), d->md5)))
            return bad_manifest(name, "a `files` entry's `MD5checksum` is not 32 hex digits");
        if ((d->key = icm__strdup(key)) == NULL)
            return ICM_ENOMEM;
        m->n_files = i + 1;
    }
    return 0;
}

static int parse_manifest_doc(icm__inventory_manifest *m, const char *name, const json_t *doc)
{
    if (!json_is_object(doc))
        return bad_manifest(name, "not a JSON object");
    const char *source = string_member(doc, "sourceBucket");
    const char *dest = string_member(doc, "destinationBucket");
    const char *format = string_member(doc, "fileFormat");
    if (source == NULL || dest == NULL || format == NULL)
        return bad_manifest(name, "`sourceBucket`, `destinationBucket` and `fileFormat` are "
                                  "required");
    if (!parse_creation(json_object_get(doc, "creationTimestamp"), &m->creation_ms))
        return bad_manifest(name, "`creationTimestamp` is not milliseconds since the epoch");
    if (strcasecmp(format, "CSV") == 0)
        m->format = ICM__INVENTORY_CSV;
    else if (strcasecmp(format, "ORC") == 0)
        m->format = ICM__INVENTORY_ORC;
    else if (strcasecmp(format, "Parquet") == 0)
        m->format = ICM__INVENTORY_PARQUET;
    else
        return bad_manifest(name, "`fileFormat` is not CSV, ORC or Parquet");
    if (m->format == ICM__INVENTORY_CSV) {
        const char *schema = string_member(doc, "fileSchema");
        if (schema == NULL || !parse_schema(schema, &m->columns))
            return bad_manifest(name, "`fileSchema` is not a list of column names with Key "
                                      "(each once)");
    }
    static const char arn[] = "arn:aws:s3:::";
    if (strncmp(dest, arn, sizeof arn - 1) == 0)
        dest += sizeof arn - 1;
    if (dest[0] == '\0' || strchr(dest, '/') != NULL || strchr(source, '/') != NULL)
        return bad_manifest(name, "`sourceBucket` or `destinationBucket` is not a bucket name");
    if ((m->source_bucket = icm__strdup(source)) == NULL ||
        (m->destination_bucket = icm__strdup(dest)) == NULL)
        return ICM_ENOMEM;
    return parse_files(m, name, json_object_get(doc, "files"));
}

int icm__inventory_manifest_parse(icm__inventory_manifest *out, const char *name,
                                  const char *json, size_t len)
{
    memset(out, 0, sizeof *out);
    json_error_t err;
    json_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL)
        return icm__error_set(ICM_ERRCLASS_JSON, ICM_EINVALID, name,
                              "not an S3 Inventory manifest: invalid JSON at line %d: %s",
                              err.line, err.text);
    int rc = parse_manifest_doc(out, name, doc);
    json_decref(doc);
    if (rc != 0)
        icm__inventory_manifest_clear(out);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* CSV rows                                                                                    */

int icm__inventory_url_decode(icm__buf *out, const char *s, size_t n)
{
    icm__buf_clear(out);
    if (icm__buf_put(out, s, n) != 0 || icm__buf_putc(out, '\0') != 0)
        return ICM_ENOMEM;
    out->len = n;
    if (!icm__url_form_decode(out->data, &out->len) || memchr(out->data, '\0', out->len) != NULL)
        return ICM_EINVALID; /* a bad escape, or a NUL no object key can hold */
    return 0;
}

/* One field starting at *pos of line[0..len): quoted ("" is a quote) or bare. Unquoted in
 * place; *start and *flen the value; *pos after the comma (or len + 1 at the end). */
static bool next_field(char *line, size_t len, size_t *pos, char **start, size_t *flen)
{
    size_t i = *pos;
    if (i < len && line[i] == '"') {
        size_t w = i, r = i + 1;
        *start = line + w;
        for (;;) {
            if (r >= len)
                return false; /* unterminated quote */
            if (line[r] == '"') {
                if (r + 1 < len && line[r + 1] == '"') {
                    line[w++] = '"';
                    r += 2;
                    continue;
                }
                r++;
                break;
            }
            line[w++] = line[r++];
        }
        *flen = w - i;
        if (r < len && line[r] != ',')
            return false; /* text after the closing quote */
        *pos = r + 1;
        return true;
    }
    size_t e = i;
    while (e < len && line[e] != ',') {
        if (line[e] == '"')
            return false;
        e++;
    }
    *start = line + i;
    *flen = e - i;
    *pos = e + 1;
    return true;
}

static bool parse_count(const char *s, size_t n, int64_t *out)
{
    if (n == 0) {
        *out = -1;
        return true;
    }
    if (n > 18)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static bool fixed_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* `YYYY-MM-DDTHH:MM:SS[.fff]Z` (UTC) into ms since the epoch; "" is unknown (-1). */
static bool parse_instant(const char *s, size_t n, int64_t *out)
{
    *out = -1;
    if (n == 0)
        return true;
    int y, mo, d, h, mi, se, ms = 0;
    if (n < 20 || !fixed_digits(s, 4, &y) || s[4] != '-' || !fixed_digits(s + 5, 2, &mo) ||
        s[7] != '-' || !fixed_digits(s + 8, 2, &d) || s[10] != 'T' ||
        !fixed_digits(s + 11, 2, &h) || s[13] != ':' || !fixed_digits(s + 14, 2, &mi) ||
        s[16] != ':' || !fixed_digits(s + 17, 2, &se) || s[n - 1] != 'Z')
        return false;
    size_t i = 19;
    if (s[i] == '.') {
        int scale = 100;
        for (i++; i < n - 1; i++, scale /= 10) {
            if (s[i] < '0' || s[i] > '9')
                return false;
            ms += (s[i] - '0') * scale; /* digits past the third add 0 */
        }
    }
    if (i != n - 1 || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
        se > 60)
        return false;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || tm.tm_mday != d)
        return false;
    *out = (int64_t)t * 1000 + ms;
    return true;
}

static bool is_true(const char *s, size_t n)
{
    return n == 4 && strncasecmp(s, "true", 4) == 0;
}

static bool is_bool(const char *s, size_t n)
{
    return is_true(s, n) || (n == 5 && strncasecmp(s, "false", 5) == 0);
}

int icm__inventory_csv_row(icm__inventory_entry *out, bool *skip, const icm__inventory_manifest *m,
                           char *line, size_t len, icm__buf *key_buf, const char **why)
{
    const icm__inventory_columns *c = &m->columns;
    *out = (icm__inventory_entry){NULL, 0, -1, -1};
    *skip = false;
    *why = NULL;
    size_t pos = 0, col = 0;
    bool latest = true, marker = false;
    const char *key = NULL;
    size_t key_len = 0;
    while (pos <= len) {
        char *f;
        size_t n;
        if (!next_field(line, len, &pos, &f, &n)) {
            *why = "malformed CSV (a quote out of place)";
            return ICM_EINVALID;
        }
        int at = (int)col++;
        if (col > c->count)
            break;
        if (at == c->bucket && (strlen(m->source_bucket) != n ||
                                memcmp(f, m->source_bucket, n) != 0)) {
            *why = "the Bucket column is not the manifest's sourceBucket";
            return ICM_EINVALID;
        }
        if (at == c->key) {
            key = f;
            key_len = n;
        }
        if (at == c->size && !parse_count(f, n, &out->size_bytes)) {
            *why = "Size is not a byte count";
            return ICM_EINVALID;
        }
        if (at == c->last_modified && !parse_instant(f, n, &out->mtime_ms)) {
            *why = "LastModifiedDate is not an ISO 8601 UTC instant";
            return ICM_EINVALID;
        }
        if ((at == c->is_latest || at == c->is_delete_marker) && n > 0 && !is_bool(f, n)) {
            *why = "IsLatest or IsDeleteMarker is not true or false";
            return ICM_EINVALID;
        }
        if (at == c->is_latest && n > 0)
            latest = is_true(f, n);
        if (at == c->is_delete_marker)
            marker = is_true(f, n);
    }
    if (col != c->count) {
        *why = "the number of fields is not fileSchema's";
        return ICM_EINVALID;
    }
    if (key_len == 0) {
        *why = "the Key field is empty";
        return ICM_EINVALID;
    }
    int rc = icm__inventory_url_decode(key_buf, key, key_len);
    if (rc != 0) {
        *why = rc == ICM_EINVALID ? "the Key field is not URL-encoded (a bad %XX, or %00)" : NULL;
        return rc;
    }
    out->key = key_buf->data;
    out->key_len = key_buf->len;
    *skip = !latest || marker;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the reader                                                                                  */

struct icm__inventory_reader {
    icm_fileio *io;        /* reads the data files: the caller's or own_io */
    icm_fileio *own_io;    /* a local manifest's */
    char *manifest_location;
    char *local_root;      /* a local manifest: its folder (data files are looked for above) */
    char *scheme;          /* an object-store manifest: its scheme (`s3`) */
    icm__inventory_manifest m;
    /* the data file being read */
    size_t next_file;      /* index of the next data file to open */
    bool open;
    char *location;
    int64_t size, offset;
    EVP_MD_CTX *md5;
    z_stream z;
    bool z_ready, member_done;
    bool z_pending;        /* the last inflate filled its output: more may wait in zlib */
    unsigned char *in, *out;
    size_t out_len, out_pos;
    long lineno;
    icm__buf line, key;
    uint64_t rows;
};

const icm__inventory_manifest *icm__inventory_manifest_of(const icm__inventory_reader *r)
{
    return &r->m;
}

uint64_t icm__inventory_rows(const icm__inventory_reader *r)
{
    return r->rows;
}

static void close_file(icm__inventory_reader *r)
{
    if (r->z_ready)
        inflateEnd(&r->z);
    r->z_ready = false;
    EVP_MD_CTX_free(r->md5);
    r->md5 = NULL;
    icm__free(r->location);
    r->location = NULL;
    r->open = false;
}

void icm__inventory_close(icm__inventory_reader *r)
{
    if (r == NULL)
        return;
    close_file(r);
    icm__inventory_manifest_clear(&r->m);
    icm_fileio_free(r->own_io);
    icm__free(r->manifest_location);
    icm__free(r->local_root);
    icm__free(r->scheme);
    icm__free(r->in);
    icm__free(r->out);
    icm__buf_dispose(&r->line);
    icm__buf_dispose(&r->key);
    icm__free(r);
}

/* A local manifest's data file: `key` below the manifest's folder or the nearest one above
 * holding it (a copy of the destination bucket keeps the keys' folders). */
static int local_data_file(icm__inventory_reader *r, const char *key, char **out)
{
    char *dir = icm__strdup(r->local_root);
    if (dir == NULL)
        return ICM_ENOMEM;
    for (;;) {
        char *path = icm__sprintf("%s/%s", dir, key);
        if (path == NULL) {
            icm__free(dir);
            return ICM_ENOMEM;
        }
        icm_file_info info = ICM_FILE_INFO_INIT;
        int rc = icm_fileio_stat(&info, r->io, path);
        if (rc == 0) {
            icm__free(dir);
            *out = path;
            return 0;
        }
        icm__free(path);
        char *slash = strrchr(dir, '/');
        if (rc != ICM_ENOTFOUND || slash == NULL || slash == dir) {
            icm__free(dir);
            if (rc != ICM_ENOTFOUND)
                return rc;
            icm_error_clear();
            return icm__error_set(ICM_ERRCLASS_MAINT, ICM_ENOTFOUND, r->manifest_location,
                                  "inventory data file %s is in no folder above the manifest",
                                  key);
        }
        *slash = '\0';
    }
}

static int open_file(icm__inventory_reader *r)
{
    const icm__inventory_data_file *d = &r->m.files[r->next_file++];
    int rc = r->local_root != NULL
                 ? local_data_file(r, d->key, &r->location)
                 : ((r->location = icm__sprintf("%s://%s/%s", r->scheme,
                                                r->m.destination_bucket, d->key)) == NULL
                        ? ICM_ENOMEM
                        : 0);
    if (rc != 0)
        return rc;
    icm_file_info info = ICM_FILE_INFO_INIT;
    if ((rc = icm_fileio_stat(&info, r->io, r->location)) != 0)
        return rc;
    if (d->size_bytes >= 0 && info.size_bytes != d->size_bytes)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, r->location,
                              "inventory data file is %lld bytes, the manifest says %lld",
                              (long long)info.size_bytes, (long long)d->size_bytes);
    r->size = info.size_bytes;
    r->offset = 0;
    r->lineno = 0;
    r->out_len = r->out_pos = 0;
    r->member_done = false;
    r->z_pending = false;
    memset(&r->z, 0, sizeof r->z);
    /* 15 + 32: a zlib or gzip header, detected */
    if (inflateInit2(&r->z, 15 + 32) != Z_OK)
        return icm__error_oom();
    r->z_ready = true;
    r->open = true;
    if ((r->md5 = EVP_MD_CTX_new()) == NULL || EVP_DigestInit_ex(r->md5, EVP_md5(), NULL) != 1)
        return icm__error_oom();
    return 0;
}

static int corrupt(const icm__inventory_reader *r, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, r->location,
                          "inventory data file %s; nothing is deleted", what);
}

/* At a data file's end: the gzip stream ended where the bytes did, and the MD5 matches. */
static int finish_file(icm__inventory_reader *r)
{
    if (!r->member_done)
        return corrupt(r, "is truncated (its gzip stream ends early)");
    const icm__inventory_data_file *d = &r->m.files[r->next_file - 1];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (EVP_DigestFinal_ex(r->md5, md, &n) != 1 || n != 16)
        return icm__error_oom();
    char hex[33];
    for (unsigned i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    if (d->md5[0] != '\0' && strcmp(hex, d->md5) != 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, r->location,
                              "inventory data file has MD5 %s, the manifest says %s; nothing "
                              "is deleted", hex, d->md5);
    close_file(r);
    return 0;
}

/* Inflate more text into r->out (out_len > 0), or *eof at the file's end. */
static int fill(icm__inventory_reader *r, bool *eof)
{
    *eof = false;
    r->out_len = r->out_pos = 0;
    for (;;) {
        /* A full output chunk may leave output inside zlib with no input left: inflate
         * again before reading on (or calling the file done). */
        if (r->z.avail_in == 0 && !r->z_pending) {
            if (r->offset >= r->size) {
                *eof = true;
                return 0;
            }
            size_t want = (size_t)(r->size - r->offset < (int64_t)READ_CHUNK
                                       ? r->size - r->offset
                                       : (int64_t)READ_CHUNK);
            size_t got = 0;
            int rc = icm_fileio_read_range(&got, r->io, r->location, r->offset, r->in, want);
            if (rc != 0)
                return rc;
            if (got == 0)
                return corrupt(r, "ended before the size it was stat'ed at");
            if (EVP_DigestUpdate(r->md5, r->in, got) != 1)
                return icm__error_oom();
            r->offset += (int64_t)got;
            r->z.next_in = r->in;
            r->z.avail_in = (uInt)got;
        }
        if (r->member_done && r->z.avail_in > 0) {
            /* another gzip member follows (concatenated gzip is one stream of text) */
            if (inflateReset(&r->z) != Z_OK)
                return corrupt(r, "is not gzip");
            r->member_done = false;
        }
        r->z.next_out = r->out;
        r->z.avail_out = OUT_CHUNK;
        int zrc = inflate(&r->z, Z_NO_FLUSH);
        if (zrc == Z_MEM_ERROR)
            return icm__error_oom();
        if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
            return corrupt(r, "is corrupt (not a valid gzip stream)");
        if (zrc == Z_STREAM_END)
            r->member_done = true;
        r->z_pending = r->z.avail_out == 0 && zrc != Z_STREAM_END;
        r->out_len = OUT_CHUNK - r->z.avail_out;
        if (r->out_len > 0)
            return 0;
    }
}

/* The next line of the open file into r->line (*got false: the file is done). */
static int next_line(icm__inventory_reader *r, bool *got)
{
    icm__buf_clear(&r->line);
    *got = false;
    for (;;) {
        if (r->out_pos == r->out_len) {
            bool eof;
            int rc = fill(r, &eof);
            if (rc != 0)
                return rc;
            if (eof) {
                /* (before the last line is taken: a cut stream cuts it too) */
                if (!r->member_done)
                    return corrupt(r, "is truncated (its gzip stream ends early)");
                *got = r->line.len > 0; /* a last line without its line break */
                if (*got)
                    r->lineno++;
                return 0;
            }
        }
        const unsigned char *start = r->out + r->out_pos;
        size_t avail = r->out_len - r->out_pos;
        const unsigned char *nl = memchr(start, '\n', avail);
        size_t take = nl != NULL ? (size_t)(nl - start) : avail;
        if (r->line.len + take > MAX_LINE)
            return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, r->location,
                                  "inventory data file line %ld is longer than %u bytes: not "
                                  "an inventory", r->lineno + 1, MAX_LINE);
        if (icm__buf_put(&r->line, start, take) != 0)
            return ICM_ENOMEM;
        r->out_pos += take + (nl != NULL);
        if (nl != NULL) {
            r->lineno++;
            *got = true;
            return 0;
        }
    }
}

int icm__inventory_next(icm__inventory_reader *r, icm__inventory_entry *out, bool *end)
{
    *end = false;
    for (;;) {
        int rc;
        if (!r->open) {
            if (r->next_file == r->m.n_files) {
                *end = true;
                return 0;
            }
            if ((rc = open_file(r)) != 0)
                return rc;
        }
        bool got;
        if ((rc = next_line(r, &got)) != 0)
            return rc;
        if (!got) {
            if ((rc = finish_file(r)) != 0)
                return rc;
            continue;
        }
        size_t len = r->line.len;
        if (len > 0 && r->line.data[len - 1] == '\r')
            len--;
        if (len == 0)
            continue;
        bool skip;
        const char *why;
        rc = icm__inventory_csv_row(out, &skip, &r->m, r->line.data, len, &r->key, &why);
        if (rc == ICM_EINVALID)
            return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, r->location,
                                  "inventory data file line %ld: %s", r->lineno, why);
        if (rc != 0)
            return rc;
        if (skip)
            continue;
        r->rows++;
        return 0;
    }
}

/* The manifest's folder (local) or scheme (object store); the data files' io. */
static int place_manifest(icm__inventory_reader *r, icm_fileio *io, const char *location,
                          icm_fileio **reader)
{
    char *path = NULL;
    icm_error_clear(); /* (false with an ENOMEM last error is an allocation failure) */
    if (icm_location_local_path(&path, location)) {
        int rc = icm_fileio_local_new(&r->own_io);
        if (rc != 0) {
            icm__free(path);
            return rc;
        }
        char *slash = strrchr(path, '/');
        r->local_root = slash == NULL ? icm__strdup(".")
                        : slash == path ? icm__strdup("/")
                                        : icm__strndup(path, (size_t)(slash - path));
        icm_free(path);
        r->io = r->own_io;
        *reader = r->own_io;
        return r->local_root == NULL ? ICM_ENOMEM : 0;
    }
    if (path == NULL && icm_error_last()->code == ICM_ENOMEM)
        return ICM_ENOMEM;
    const char *sep = strstr(location, "://");
    if (sep == NULL || sep == location)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, location,
                              "an inventory manifest is a local path or an object-store URI");
    if ((r->scheme = icm__strndup(location, (size_t)(sep - location))) == NULL)
        return ICM_ENOMEM;
    r->io = io;
    *reader = io;
    return 0;
}

int icm__inventory_open(icm__inventory_reader **out, icm_fileio *io,
                        const char *manifest_location)
{
    *out = NULL;
    icm__inventory_reader *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return ICM_ENOMEM;
    r->line = (icm__buf)ICM__BUF_INIT;
    r->key = (icm__buf)ICM__BUF_INIT;
    icm_fileio *reader = NULL;
    char *json = NULL;
    size_t len = 0;
    int rc = (r->manifest_location = icm__strdup(manifest_location)) == NULL ? ICM_ENOMEM : 0;
    if (rc == 0)
        rc = place_manifest(r, io, manifest_location, &reader);
    if (rc == 0)
        rc = icm_fileio_read(&json, &len, reader, manifest_location);
    if (rc == 0)
        rc = icm__inventory_manifest_parse(&r->m, manifest_location, json, len);
    icm_free(json);
    if (rc == 0 && r->m.format != ICM__INVENTORY_CSV)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EUNSUPPORTED, manifest_location,
                            "%s S3 Inventory reports are not read yet (no Parquet or ORC "
                            "reader library is packaged for Debian): configure the report as "
                            "CSV",
                            r->m.format == ICM__INVENTORY_ORC ? "ORC" : "Parquet");
    if (rc == 0 && ((r->in = icm__malloc(READ_CHUNK)) == NULL ||
                    (r->out = icm__malloc(OUT_CHUNK)) == NULL))
        rc = ICM_ENOMEM;
    if (rc != 0) {
        icm__inventory_close(r);
        return rc;
    }
    *out = r;
    return 0;
}
