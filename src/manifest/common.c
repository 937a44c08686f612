/*
 * manifest/common.c: pieces shared by the manifest list and manifest readers: the block
 * iterator, header parsing (format-version and friends), the shape checks that decide whether a
 * raw value can be copied verbatim into our own files, raw value capture, the per-row string
 * pool, and cached header copies.
 *
 * Source: Iceberg spec "Manifest Lists", "Manifests" (metadata keys), Appendix E.
 */
#include "manifest/manifest_internal.h"

int icm__obj_iter_next(icm__obj_iter *it)
{
    while (it->left == 0) {
        if (it->cur.p != it->cur.end && it->cur.base != NULL)
            return icm__avro_corrupt(&it->cur, "trailing bytes after the block's last object");
        int64_t count = 0;
        int rc = icm__avro_reader_next_block(it->avro, &it->cur, &count);
        if (rc < 0)
            return rc;
        it->left = count;
    }
    it->left--;
    return 0;
}

bool icm__parse_header_int(const char *v, size_t len, int64_t *out)
{
    if (v == NULL || len == 0 || len > 18)
        return false;
    int64_t x = 0;
    size_t i = 0;
    bool neg = false;
    if (v[0] == '-') {
        neg = true;
        i = 1;
        if (len == 1)
            return false;
    }
    for (; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        x = x * 10 + (v[i] - '0');
    }
    *out = neg ? -x : x;
    return true;
}

bool icm__is_type(const icm__avro_schema *s, uint32_t n, icm__avro_type t)
{
    return s->nodes[n].type == t;
}

/* int and long share one binary encoding (zigzag varint), so for copying raw values they are
 * interchangeable; PyIceberg, for one, writes equality_ids as array<long>. */
static bool is_varint(const icm__avro_schema *s, uint32_t n)
{
    return icm__is_type(s, n, ICM__AVRO_INT) || icm__is_type(s, n, ICM__AVRO_LONG);
}

/* ["null", T] exactly (the order our writer uses inside copied records). */
static bool is_null_first_opt(const icm__avro_schema *s, uint32_t n, icm__avro_type t)
{
    const icm__avro_node *u = &s->nodes[n];
    return u->type == ICM__AVRO_UNION && u->n == 2 &&
           icm__is_type(s, s->branches[u->first], ICM__AVRO_NULL) &&
           icm__is_type(s, s->branches[u->first + 1], t);
}

static bool kv_record(const icm__avro_schema *s, uint32_t arr, icm__avro_type v)
{
    if (!icm__is_type(s, arr, ICM__AVRO_ARRAY))
        return false;
    const icm__avro_node *r = &s->nodes[s->nodes[arr].child];
    if (r->type != ICM__AVRO_RECORD || r->n != 2)
        return false;
    uint32_t vt = s->fields[r->first + 1].type;
    return is_varint(s, s->fields[r->first].type) &&
           (v == ICM__AVRO_LONG ? is_varint(s, vt) : icm__is_type(s, vt, v));
}

bool icm__shape_ok(const icm__avro_schema *s, uint32_t node, icm__shape shape)
{
    const icm__avro_node *n = &s->nodes[node];
    switch (shape) {
    case ICM__SHAPE_MAP_INT_LONG:
        return kv_record(s, node, ICM__AVRO_LONG);
    case ICM__SHAPE_MAP_INT_BYTES:
        return kv_record(s, node, ICM__AVRO_BYTES);
    case ICM__SHAPE_BYTES:
        return n->type == ICM__AVRO_BYTES;
    case ICM__SHAPE_LIST_LONG:
    case ICM__SHAPE_LIST_INT:
        return n->type == ICM__AVRO_ARRAY && is_varint(s, n->child);
    case ICM__SHAPE_FIELD_SUMMARIES: {
        if (n->type != ICM__AVRO_ARRAY)
            return false;
        const icm__avro_node *r = &s->nodes[n->child];
        if (r->type != ICM__AVRO_RECORD || r->n != 4)
            return false;
        const icm__avro_field *f = &s->fields[r->first];
        return icm__is_type(s, f[0].type, ICM__AVRO_BOOLEAN) &&
               is_null_first_opt(s, f[1].type, ICM__AVRO_BOOLEAN) &&
               is_null_first_opt(s, f[2].type, ICM__AVRO_BYTES) &&
               is_null_first_opt(s, f[3].type, ICM__AVRO_BYTES) && f[0].field_id == 509 &&
               f[1].field_id == 518 && f[2].field_id == 510 && f[3].field_id == 511;
    }
    }
    return false;
}


/* Capture the encoded bytes of a (nullable) value, without its union index. */
int icm__read_raw(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c, icm_raw *out)
{
    const icm__avro_node *n = &s->nodes[node];
    uint32_t t = node;
    if (n->type == ICM__AVRO_UNION) {
        uint32_t b = 0;
        int rc = icm__avro_read_branch(c, n, &b);
        if (rc < 0)
            return rc;
        t = s->branches[n->first + b];
    }
    if (s->nodes[t].type == ICM__AVRO_NULL) {
        out->data = NULL;
        out->len = 0;
        return 0;
    }
    const uint8_t *start = c->p;
    int rc = icm__avro_skip(s, t, c);
    if (rc < 0)
        return rc;
    out->data = start;
    out->len = (size_t)(c->p - start);
    return 0;
}

/* Numbers must be int/long (optionally nullable); strings string/bytes. */
bool icm__numeric_node(const icm__avro_schema *s, uint32_t node)
{
    int nb;
    uint32_t t = icm__avro_unwrap_optional(s, node, &nb);
    return icm__is_type(s, t, ICM__AVRO_INT) || icm__is_type(s, t, ICM__AVRO_LONG);
}

bool icm__string_node(const icm__avro_schema *s, uint32_t node)
{
    int nb;
    uint32_t t = icm__avro_unwrap_optional(s, node, &nb);
    return icm__is_type(s, t, ICM__AVRO_STRING) || icm__is_type(s, t, ICM__AVRO_BYTES);
}

int icm__schema_error(const char *location, const char *what, const char *field)
{
    return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, location, "%s: field %s", what,
                          field);
}

int icm__strpool_reserve(icm__strpool *p, size_t need)
{
    if (need <= p->cap)
        return 0;
    size_t c = p->cap ? p->cap : 256;
    while (c < need)
        c *= 2;
    char *n = icm__realloc(p->buf, c);
    if (n == NULL)
        return ICM_ENOMEM;
    p->buf = n;
    p->cap = c;
    return 0;
}

int icm__version_from_header(icm__avro_reader *a, int *out)
{
    size_t n = 0;
    const char *v = icm__avro_reader_meta(a, "format-version", &n);
    int64_t x = 0;
    *out = 0;
    if (!icm__parse_header_int(v, n, &x))
        return 0; /* absent or "" (seen in the wild): decide from the schema */
    if (x < 1 || x > 3)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EUNSUPPORTED, icm__avro_reader_location(a),
                              "unsupported format-version %lld in the Avro header",
                              (long long)x);
    *out = (int)x;
    return 0;
}

int icm__decide_version(int header, int inferred, int table)
{
    if (header > 0)
        return header;
    /* v3 added only optional fields, so a v2-looking schema may be a v3 file. */
    if (inferred == 2 && table == 3)
        return 3;
    return inferred;
}

int icm__header_copy(icm__ptrvec *cache, icm__avro_reader *a, const char *key,
                       const char **out)
{
    *out = NULL;
    for (size_t i = 0; i + 1 < cache->len; i += 2) {
        if (strcmp(cache->items[i], key) == 0) {
            *out = cache->items[i + 1];
            return 0;
        }
    }
    int rc;
    char *v = icm__avro_reader_meta_dup(a, key, &rc);
    if (v == NULL)
        return rc;
    char *k = icm__strdup(key);
    if (k == NULL || icm__ptrvec_push(cache, k) < 0) {
        icm__free(k);
        icm__free(v);
        return ICM_ENOMEM;
    }
    if (icm__ptrvec_push(cache, v) < 0) {
        cache->len--;
        icm__free(k);
        icm__free(v);
        return ICM_ENOMEM;
    }
    *out = v;
    return 0;
}
