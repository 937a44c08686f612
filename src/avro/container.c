/*
 * avro/container.c: Avro object container files. The reader parses the header (magic `Obj\1`,
 * metadata map, sync marker) of a file held in memory and then hands out one decompressed block
 * at a time, checking each block's sync marker, so memory stays bounded by the largest block.
 * The writer builds a container in memory with a random sync marker and bounded blocks.
 *
 * Source: Avro 1.11 specification "Object Container Files".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "avro/avro.h"

typedef struct meta_entry {
    const char *key;
    size_t key_len;
    const char *value;
    size_t value_len;
} meta_entry;

struct icm__avro_reader {
    const uint8_t *data;
    size_t len;
    size_t pos;            /* file offset of the next block */
    char *location;
    uint8_t sync[16];
    icm__avro_codec codec;
    icm__avro_schema *schema;
    bool schema_cached;    /* schema belongs to a cache, not to this reader */
    meta_entry *meta;
    size_t n_meta;
    uint8_t *block;        /* decompression buffer, reused for every block */
    size_t block_cap;
    int64_t block_offset;  /* file offset of the current block's header */
    const icm__avro_inflated *inflated; /* blocks decompressed ahead (borrowed) or NULL */
    size_t next_inflated;  /* the first of them not used yet */
};

static int header_error(const icm__avro_reader *r, size_t at, const char *what)
{
    int rc = icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, r->location,
                            "not a valid Avro container: %s", what);
    icm__error_set_position(0, 0, (int64_t)at);
    return rc;
}

static int add_meta(icm__avro_reader *r, size_t *cap, const uint8_t *k, size_t kl,
                    const uint8_t *v, size_t vl)
{
    if (r->n_meta == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        meta_entry *m = icm__reallocarray(r->meta, c, sizeof *m);
        if (m == NULL)
            return ICM_ENOMEM;
        r->meta = m;
        *cap = c;
    }
    r->meta[r->n_meta++] = (meta_entry){(const char *)k, kl, (const char *)v, vl};
    return 0;
}

static int parse_meta(icm__avro_reader *r, icm__avro_cur *c)
{
    size_t cap = 0;
    for (;;) {
        int64_t count = 0, size = 0;
        int rc = icm__avro_read_block_count(c, &count, &size);
        if (rc < 0)
            return rc;
        if (count == 0)
            return 0;
        if (count > (int64_t)(c->end - c->p))
            return icm__avro_corrupt(c, "metadata count larger than the header");
        for (int64_t i = 0; i < count; i++) {
            const uint8_t *k = NULL, *v = NULL;
            size_t kl = 0, vl = 0;
            rc = icm__avro_read_bytes(c, &k, &kl);
            if (rc == 0)
                rc = icm__avro_read_bytes(c, &v, &vl);
            if (rc == 0)
                rc = add_meta(r, &cap, k, kl, v, vl);
            if (rc < 0)
                return rc;
        }
    }
}

static int parse_codec(icm__avro_reader *r)
{
    size_t n = 0;
    const char *v = icm__avro_reader_meta(r, "avro.codec", &n);
    static const struct {
        const char *name;
        icm__avro_codec codec;
    } codecs[] = {{"null", ICM__AVRO_CODEC_NULL},
                  {"deflate", ICM__AVRO_CODEC_DEFLATE},
                  {"snappy", ICM__AVRO_CODEC_SNAPPY},
                  {"zstandard", ICM__AVRO_CODEC_ZSTD},
                  {"zstd", ICM__AVRO_CODEC_ZSTD}};
    if (v == NULL || n == 0) {
        r->codec = ICM__AVRO_CODEC_NULL;
        return 0;
    }
    for (size_t i = 0; i < ICM__ARRAY_LEN(codecs); i++) {
        if (strlen(codecs[i].name) == n && memcmp(codecs[i].name, v, n) == 0) {
            r->codec = codecs[i].codec;
            return 0;
        }
    }
    char shown[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < sizeof shown; i++)
        shown[k++] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
    shown[k] = '\0';
    return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EUNSUPPORTED, r->location,
                          "unsupported Avro codec '%s' (supported: null, deflate, snappy, "
                          "zstandard)",
                          shown);
}

/* ---- schema cache ---- */

#define SCHEMA_CACHE_SLOTS 32

typedef struct cached_schema {
    char *text;
    size_t len;
    icm__avro_schema *schema;
} cached_schema;

struct icm__avro_schema_cache {
    pthread_mutex_t mu; /* readers are opened on two threads at once (manifest/bulk_reader.c) */
    cached_schema items[SCHEMA_CACHE_SLOTS];
    size_t n;
};

int icm__avro_schema_cache_new(icm__avro_schema_cache **out)
{
    *out = icm__calloc(1, sizeof **out);
    if (*out == NULL)
        return ICM_ENOMEM;
    if (pthread_mutex_init(&(*out)->mu, NULL) != 0) {
        icm__free(*out);
        *out = NULL;
        return icm__error_oom();
    }
    return 0;
}

void icm__avro_schema_cache_free(icm__avro_schema_cache *cache)
{
    if (cache == NULL)
        return;
    for (size_t i = 0; i < cache->n; i++) {
        icm__free(cache->items[i].text);
        icm__avro_schema_free(cache->items[i].schema);
    }
    pthread_mutex_destroy(&cache->mu);
    icm__free(cache);
}

/* The reader's schema: from the cache when its text was seen before, else parsed (and added to
 * the cache while it has room). */
static int reader_schema(icm__avro_reader *r, const char *text, size_t len,
                         icm__avro_schema_cache *cache)
{
    if (cache == NULL)
        return icm__avro_schema_parse(&r->schema, text, len, r->location);
    /* Held while parsing too: a second thread wanting the same schema waits for it rather than
     * parse it again (a cached schema is never changed, only read, once it is in the cache). */
    pthread_mutex_lock(&cache->mu);
    for (size_t i = 0; i < cache->n; i++) {
        const cached_schema *c = &cache->items[i];
        if (c->len == len && memcmp(c->text, text, len) == 0) {
            r->schema = c->schema;
            r->schema_cached = true;
            pthread_mutex_unlock(&cache->mu);
            return 0;
        }
    }
    int rc = icm__avro_schema_parse(&r->schema, text, len, r->location);
    char *copy = rc < 0 || cache->n == SCHEMA_CACHE_SLOTS ? NULL : icm__malloc(len ? len : 1);
    if (copy != NULL) { /* (without one the reader still owns a good schema, just not cached) */
        memcpy(copy, text, len);
        cache->items[cache->n++] = (cached_schema){copy, len, r->schema};
        r->schema_cached = true;
    }
    pthread_mutex_unlock(&cache->mu);
    return rc;
}

int icm__avro_reader_open(icm__avro_reader **out, const void *data, size_t len,
                          const char *location)
{
    return icm__avro_reader_open_cached(out, data, len, location, NULL);
}

/* Magic, metadata map, sync marker and codec; r->data, r->len and r->location are set. */
static int open_header(icm__avro_reader *r)
{
    /* The message holds the raw byte 0x01: the library escapes every message once when it
     * stores it (errors.h), so it reads `Obj\x01`; a written-out `\\x01` was escaped twice. */
    if (r->len < 4 || memcmp(r->data, "Obj\x01", 4) != 0)
        return header_error(r, 0, "missing the magic bytes Obj\x01");
    icm__avro_cur c = {r->data + 4, r->data + r->len, r->data, 0, true, r->location};
    int rc = parse_meta(r, &c);
    if (rc == 0 && (size_t)(c.end - c.p) < 16)
        rc = header_error(r, (size_t)(c.p - r->data), "truncated before the sync marker");
    if (rc == 0) {
        memcpy(r->sync, c.p, 16);
        r->pos = (size_t)(c.p - r->data) + 16;
        rc = parse_codec(r);
    }
    return rc;
}

int icm__avro_reader_open_cached(icm__avro_reader **out, const void *data, size_t len,
                                 const char *location, icm__avro_schema_cache *cache)
{
    *out = NULL;
    icm__avro_reader *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return ICM_ENOMEM;
    r->data = data;
    r->len = len;
    r->location = icm__strdup(location ? location : "");
    int rc = r->location ? open_header(r) : ICM_ENOMEM;
    if (rc == 0) {
        size_t n = 0;
        const char *schema = icm__avro_reader_meta(r, "avro.schema", &n);
        if (schema == NULL)
            rc = header_error(r, 4, "no avro.schema in the header");
        else
            rc = reader_schema(r, schema, n, cache);
    }
    if (rc < 0) {
        icm__avro_reader_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void icm__avro_reader_free(icm__avro_reader *r)
{
    if (r == NULL)
        return;
    if (!r->schema_cached)
        icm__avro_schema_free(r->schema);
    icm__free(r->meta);
    icm__free(r->block);
    icm__free(r->location);
    icm__free(r);
}

const char *icm__avro_reader_meta(const icm__avro_reader *r, const char *key, size_t *len)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < r->n_meta; i++) {
        if (r->meta[i].key_len == kl && memcmp(r->meta[i].key, key, kl) == 0) {
            *len = r->meta[i].value_len;
            return r->meta[i].value;
        }
    }
    *len = 0;
    return NULL;
}

char *icm__avro_reader_meta_dup(const icm__avro_reader *r, const char *key, int *rc)
{
    size_t n = 0;
    const char *v = icm__avro_reader_meta(r, key, &n);
    *rc = 0;
    if (v == NULL)
        return NULL;
    char *s = icm__strndup(v, n);
    if (s == NULL)
        *rc = ICM_ENOMEM;
    return s;
}

const icm__avro_schema *icm__avro_reader_schema(const icm__avro_reader *r)
{
    return r->schema;
}

bool icm__avro_reader_schema_is_cached(const icm__avro_reader *r)
{
    return r->schema_cached;
}

icm__avro_codec icm__avro_reader_codec(const icm__avro_reader *r)
{
    return r->codec;
}

const char *icm__avro_reader_location(const icm__avro_reader *r)
{
    return r->location;
}

int64_t icm__avro_reader_block_offset(const icm__avro_reader *r)
{
    return r->block_offset;
}

/* Parse the next block's header and sync marker; in and in_len span its (compressed) data. */
static int next_raw_block(icm__avro_reader *r, const uint8_t **in, size_t *in_len,
                          int64_t *count)
{
    if (r->pos >= r->len)
        return ICM_ITEROVER;
    r->block_offset = (int64_t)r->pos;
    icm__avro_cur c = {r->data + r->pos, r->data + r->len, r->data, 0, true, r->location};
    int64_t n = 0, size = 0;
    int rc = icm__avro_read_long(&c, &n);
    if (rc == 0)
        rc = icm__avro_read_long(&c, &size);
    if (rc < 0)
        return rc;
    if (n < 0)
        return icm__avro_corrupt(&c, "negative block object count");
    if (size < 0 || (uint64_t)size > (uint64_t)(c.end - c.p) ||
        (size_t)(c.end - c.p) - (size_t)size < 16)
        return icm__avro_corrupt(&c, "block size runs past the end of the file");
    *in = c.p;
    *in_len = (size_t)size;
    const uint8_t *sync = c.p + size;
    if (memcmp(sync, r->sync, 16) != 0) {
        c.p = sync;
        return icm__avro_corrupt(&c, "block sync marker does not match the header");
    }
    r->pos = (size_t)(sync + 16 - r->data);
    *count = n;
    return 0;
}

int icm__avro_reader_next_block(icm__avro_reader *r, icm__avro_cur *cur, int64_t *count)
{
    const uint8_t *in = NULL;
    size_t in_len = 0;
    int rc = next_raw_block(r, &in, &in_len, count);
    if (rc < 0)
        return rc;
    int64_t data_off = (int64_t)(in - r->data);
    static const uint8_t empty[1]; /* an empty block has no buffer: never NULL + 0 */
    if (r->codec == ICM__AVRO_CODEC_NULL) {
        *cur = (icm__avro_cur){in, in + in_len, in, data_off, true, r->location};
    } else if (r->inflated != NULL && r->next_inflated < r->inflated->n &&
               r->inflated->blocks[r->next_inflated].offset == r->block_offset) {
        const icm__avro_block *b = &r->inflated->blocks[r->next_inflated++];
        const uint8_t *p = b->data != NULL ? b->data : empty;
        *cur = (icm__avro_cur){p, p + b->len, p, r->block_offset, false, r->location};
    } else {
        size_t out_len = 0;
        rc = icm__avro_decompress(r->codec, in, in_len, &r->block, &r->block_cap, &out_len,
                                  r->location, r->block_offset);
        if (rc < 0)
            return rc;
        const uint8_t *p = r->block != NULL ? r->block : empty;
        *cur = (icm__avro_cur){p, p + out_len, p, r->block_offset, false, r->location};
    }
    /* Every object takes a byte unless the schema's values are all empty. */
    if (*count > (int64_t)(cur->end - cur->p) && !r->schema->nodes[r->schema->root].zero_size) {
        cur->p = cur->base;
        return icm__avro_corrupt(cur, "block object count larger than the block");
    }
    return 0;
}

int icm__avro_reader_block_floor(icm__avro_reader *r, size_t *decoded_len, int64_t *count)
{
    icm__avro_cur c;
    int rc = icm__avro_reader_next_block(r, &c, count);
    if (rc == 0)
        *decoded_len = (size_t)(c.end - c.p);
    return rc;
}

/* ---- blocks decompressed ahead ---- */

void icm__avro_inflate_ahead(const void *data, size_t len, icm__avro_inflated *out)
{
    memset(out, 0, sizeof *out);
    char nowhere[] = "";
    icm__avro_reader r;
    memset(&r, 0, sizeof r);
    r.data = data;
    r.len = len;
    r.location = nowhere;
    size_t cap = 0, held = 0;
    if (open_header(&r) == 0 && r.codec != ICM__AVRO_CODEC_NULL) {
        /* Files wait decompressed until their reader takes them, several at a time: past the
         * budget the reader decompresses the rest itself, so what waits does not grow with the
         * file. */
        while (held < ICM__AVRO_INFLATE_AHEAD_BYTES) {
            const uint8_t *in = NULL;
            size_t in_len = 0, buf_cap = 0, out_len = 0;
            int64_t count = 0;
            if (next_raw_block(&r, &in, &in_len, &count) != 0)
                break;
            if (out->n == cap) {
                size_t c = cap ? cap * 2 : 8;
                icm__avro_block *grown = icm__reallocarray(out->blocks, c, sizeof *grown);
                if (grown == NULL)
                    break;
                out->blocks = grown;
                cap = c;
            }
            uint8_t *buf = NULL;
            if (icm__avro_decompress(r.codec, in, in_len, &buf, &buf_cap, &out_len, nowhere,
                                     r.block_offset) != 0) {
                icm__free(buf);
                break;
            }
            /* Inflating asks for generous room (codec.c); what waits keeps only what it holds,
             * so the budget counts memory, not room never written. */
            if (buf_cap - out_len > buf_cap / 4) {
                uint8_t *fit = icm__realloc(buf, out_len + 1);
                if (fit != NULL) {
                    buf = fit;
                    buf_cap = out_len + 1;
                }
            }
            out->blocks[out->n++] = (icm__avro_block){r.block_offset, buf, out_len};
            held += buf_cap;
        }
    }
    icm__free(r.meta);
    icm_error_clear(); /* whatever stopped it is the reader's to report, with its own words */
}

void icm__avro_inflated_dispose(icm__avro_inflated *x)
{
    if (x == NULL)
        return;
    for (size_t i = 0; i < x->n; i++)
        icm__free(x->blocks[i].data);
    icm__free(x->blocks);
    memset(x, 0, sizeof *x);
}

void icm__avro_reader_use_inflated(icm__avro_reader *r, const icm__avro_inflated *inflated)
{
    r->inflated = inflated;
    r->next_inflated = 0;
}

/* ---- encoding ---- */

int icm__avro_put_long(icm__buf *b, int64_t v)
{
    uint8_t tmp[10];
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (z >= 0x80) {
        tmp[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    tmp[n++] = (uint8_t)z;
    return icm__buf_put(b, tmp, n);
}

int icm__avro_put_bytes(icm__buf *b, const void *data, size_t len)
{
    if (len > INT64_MAX)
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, NULL, "value too long");
    int rc = icm__avro_put_long(b, (int64_t)len);
    if (rc == 0)
        rc = icm__buf_put(b, data, len);
    return rc;
}

int icm__avro_put_str(icm__buf *b, const char *s)
{
    return icm__avro_put_bytes(b, s, strlen(s));
}

int icm__avro_put_double(icm__buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(u >> (8 * i));
    return icm__buf_put(b, le, 8);
}

int icm__avro_put_bool(icm__buf *b, bool v)
{
    return icm__buf_putc(b, v ? 1 : 0);
}

/* ---- writer ---- */

struct icm__avro_writer {
    icm__buf out;    /* the file so far */
    icm__buf obj;    /* uncompressed objects of the open block */
    icm__buf comp;   /* compressed block scratch */
    int64_t count;   /* objects in the open block */
    size_t block_bytes;
    icm__avro_codec codec;
    int level;
    uint8_t sync[16];
    char *schema;
    icm__ptrvec meta; /* alternating key, value (owned) */
    bool header_done;
};

int icm__avro_random_sync(uint8_t sync[16])
{
    size_t got = 0;
    while (got < 16) {
        ssize_t n = getrandom(sync + got, 16 - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got == 16)
        return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, errno, "/dev/urandom",
                                    "cannot open");
    got = 0;
    while (got < 16) {
        ssize_t n = read(fd, sync + got, 16 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = errno;
            close(fd);
            return icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, e, "/dev/urandom",
                                        "cannot read");
        }
        got += (size_t)n;
    }
    close(fd);
    return 0;
}

int icm__avro_writer_new(icm__avro_writer **out, const char *schema_json, icm__avro_codec codec,
                         int level, size_t block_bytes)
{
    *out = NULL;
    icm__avro_writer *w = icm__calloc(1, sizeof *w);
    if (w == NULL)
        return ICM_ENOMEM;
    w->codec = codec;
    w->level = level;
    w->block_bytes = block_bytes ? block_bytes : (size_t)1 << 20;
    w->schema = icm__strdup(schema_json);
    int rc = w->schema ? icm__avro_random_sync(w->sync) : ICM_ENOMEM;
    if (rc < 0) {
        icm__avro_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void icm__avro_writer_free(icm__avro_writer *w)
{
    if (w == NULL)
        return;
    icm__buf_dispose(&w->out);
    icm__buf_dispose(&w->obj);
    icm__buf_dispose(&w->comp);
    icm__free(w->schema);
    icm__ptrvec_dispose(&w->meta, icm__free);
    icm__free(w);
}

int icm__avro_writer_meta(icm__avro_writer *w, const char *key, const char *value)
{
    if (w->header_done)
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_ERROR, NULL,
                              "Avro metadata added after the first object");
    char *k = icm__strdup(key);
    char *v = icm__strdup(value);
    if (k == NULL || v == NULL) {
        icm__free(k);
        icm__free(v);
        return ICM_ENOMEM;
    }
    if (icm__ptrvec_push(&w->meta, k) < 0) {
        icm__free(k);
        icm__free(v);
        return ICM_ENOMEM;
    }
    if (icm__ptrvec_push(&w->meta, v) < 0) {
        icm__free(v);
        return ICM_ENOMEM; /* k stays in the vector and is freed with the writer */
    }
    return 0;
}

static int write_header(icm__avro_writer *w)
{
    if (w->header_done)
        return 0;
    icm__buf *b = &w->out;
    size_t pairs = w->meta.len / 2;
    icm__buf_put(b, "Obj\x01", 4);
    icm__avro_put_long(b, (int64_t)pairs + 2);
    icm__avro_put_str(b, "avro.schema");
    icm__avro_put_str(b, w->schema);
    icm__avro_put_str(b, "avro.codec");
    icm__avro_put_str(b, icm__avro_codec_name(w->codec));
    for (size_t i = 0; i < pairs; i++) {
        icm__avro_put_str(b, w->meta.items[2 * i]);
        icm__avro_put_str(b, w->meta.items[2 * i + 1]);
    }
    icm__avro_put_long(b, 0);
    icm__buf_put(b, w->sync, 16);
    if (b->oom)
        return ICM_ENOMEM;
    w->header_done = true;
    return 0;
}

static int flush_block(icm__avro_writer *w)
{
    int rc = write_header(w);
    if (rc < 0 || w->count == 0)
        return rc;
    icm__buf_clear(&w->comp);
    rc = icm__avro_compress(w->codec, w->level, (const uint8_t *)w->obj.data, w->obj.len,
                            &w->comp);
    if (rc < 0)
        return rc;
    icm__avro_put_long(&w->out, w->count);
    icm__avro_put_long(&w->out, (int64_t)w->comp.len);
    icm__buf_put(&w->out, w->comp.data, w->comp.len);
    icm__buf_put(&w->out, w->sync, 16);
    if (w->out.oom)
        return ICM_ENOMEM;
    icm__buf_clear(&w->obj);
    w->count = 0;
    return 0;
}

icm__buf *icm__avro_writer_obj(icm__avro_writer *w)
{
    return &w->obj;
}

int icm__avro_writer_end_obj(icm__avro_writer *w)
{
    if (w->obj.oom)
        return ICM_ENOMEM;
    w->count++;
    if (w->obj.len >= w->block_bytes)
        return flush_block(w);
    return 0;
}

int icm__avro_writer_finish(icm__avro_writer *w, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    int rc = flush_block(w);
    if (rc < 0)
        return rc;
    *out = icm__buf_detach(&w->out, out_len);
    if (*out == NULL)
        return icm__error_oom();
    return 0;
}
