/*
 * avro/decode.c: the out-of-line parts of the binary decoder: error reporting with the byte
 * offset, the slow (near end of buffer) varint path, array/map block headers, and schema-driven
 * skipping of values nobody asked for.
 *
 * Source: Avro 1.11 specification "Binary Encoding". Every length and count is checked against
 * the bytes left, so corrupt input ends in ICM_EINVALID, never an over-read.
 */
#include "avro/avro.h"
#include "avro/skip_steps.h"

/* Nesting limit for skipping (recursive schemas could otherwise exhaust the C stack). */
#define MAX_VALUE_DEPTH 100

int icm__avro_corrupt(const icm__avro_cur *c, const char *what)
{
    int rc = icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, c->location,
                            "corrupt Avro data: %s", what);
    /* Inside a compressed block only the block's file offset is meaningful. */
    int64_t off = c->base_offset;
    if (c->offset_exact)
        off += (int64_t)(c->p - c->base);
    icm__error_set_position(0, 0, off);
    return rc;
}

int icm__avro_read_long_slow(icm__avro_cur *c, int64_t *out)
{
    const uint8_t *p = c->p;
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
        if (p >= c->end)
            return icm__avro_corrupt(c, "truncated varint");
        uint64_t b = *p++;
        if (shift == 63 && b > 1)
            return icm__avro_corrupt(c, "varint overflows 64 bits");
        v |= (b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
        shift += 7;
        if (shift > 63)
            return icm__avro_corrupt(c, "varint longer than 10 bytes");
    }
    c->p = p;
    *out = (int64_t)((v >> 1) ^ (~(v & 1) + 1));
    return 0;
}

int icm__avro_read_block_count(icm__avro_cur *c, int64_t *count, int64_t *size_bytes)
{
    int64_t n;
    int rc = icm__avro_read_long(c, &n);
    if (rc < 0)
        return rc;
    *size_bytes = -1;
    if (n < 0) {
        if (n == INT64_MIN)
            return icm__avro_corrupt(c, "block count out of range");
        n = -n;
        int64_t sz;
        rc = icm__avro_read_long(c, &sz);
        if (rc < 0)
            return rc;
        if (sz < 0 || (uint64_t)sz > (uint64_t)(c->end - c->p))
            return icm__avro_corrupt(c, "block byte size runs past the end of the block");
        *size_bytes = sz;
    }
    /* Every item takes at least one byte unless its type is empty; a count larger than the
     * bytes left is only legal for empty items and is checked by the caller's loop. */
    *count = n;
    return 0;
}

/* Skip a primitive (anything but record, array, map, union). */
static inline int skip_primitive(const icm__avro_node *n, icm__avro_cur *c)
{
    switch (n->type) {
    case ICM__AVRO_INT:
    case ICM__AVRO_LONG:
    case ICM__AVRO_ENUM:
        return icm__skip_varint(c);
    case ICM__AVRO_BYTES:
    case ICM__AVRO_STRING:
        return icm__skip_len_prefixed(c);
    case ICM__AVRO_NULL:
        return 0;
    case ICM__AVRO_BOOLEAN:
        return icm__avro_skip_n(c, 1);
    case ICM__AVRO_FLOAT:
        return icm__avro_skip_n(c, 4);
    case ICM__AVRO_DOUBLE:
        return icm__avro_skip_n(c, 8);
    case ICM__AVRO_FIXED:
        return icm__avro_skip_n(c, n->n);
    default:
        return icm__avro_corrupt(c, "not a primitive");
    }
}

static inline int skip_flat_record(const icm__avro_schema *s, const icm__avro_node *r,
                                   icm__avro_cur *c)
{
    const icm__avro_field *f = &s->fields[r->first];
    for (uint32_t i = 0; i < r->n; i++) {
        const icm__avro_node *t = &s->nodes[f[i].type];
        int rc;
        /* Metrics entries are {int, long} or {int, bytes}: test those first. */
        if (t->varints == 1)
            rc = icm__skip_varint(c);
        else if (t->type == ICM__AVRO_BYTES || t->type == ICM__AVRO_STRING)
            rc = icm__skip_len_prefixed(c);
        else
            rc = skip_primitive(t, c);
        if (ICM__UNLIKELY(rc < 0))
            return rc;
    }
    return 0;
}

/* Skip `count` consecutive varints by counting terminating bytes (high bit clear): one pass
 * over the bytes with no decoding, the hot loop of skipping Iceberg metrics maps. */
int icm__avro_skip_varints(icm__avro_cur *c, uint64_t count)
{
    return icm__skip_varint_run(c, count);
}

static int skip(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c, int depth);

static int skip_items(const icm__avro_schema *s, uint32_t item, bool is_map, icm__avro_cur *c,
                      int depth)
{
    const icm__avro_node *it = &s->nodes[item];
    bool prim = it->type <= ICM__AVRO_ENUM && it->type != ICM__AVRO_RECORD;
    bool flat = it->type == ICM__AVRO_RECORD && it->flat;
    for (;;) {
        int64_t count = 0, size = 0;
        int rc = icm__avro_read_block_count(c, &count, &size);
        if (rc < 0)
            return rc;
        if (count == 0)
            return 0;
        if (size >= 0) {
            /* The writer told us the block's byte size: one jump. */
            c->p += size;
            continue;
        }
        if (!is_map && it->zero_size)
            continue; /* nothing to read, whatever the count */
        if (count > (int64_t)(c->end - c->p))
            return icm__avro_corrupt(c, "item count larger than the bytes left");
        if (!is_map && it->varints > 0) {
            /* count <= bytes left here (each varint takes a byte), so no overflow. */
            rc = icm__avro_skip_varints(c, (uint64_t)count * it->varints);
            if (rc < 0)
                return rc;
            continue;
        }
        for (int64_t i = 0; i < count; i++) {
            if (is_map) {
                rc = icm__skip_len_prefixed(c);
                if (rc < 0)
                    return rc;
            }
            if (prim)
                rc = skip_primitive(it, c);
            else if (flat)
                rc = skip_flat_record(s, it, c);
            else
                rc = skip(s, item, c, depth + 1);
            if (rc < 0)
                return rc;
        }
    }
}

static int skip(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c, int depth)
{
    if (depth > MAX_VALUE_DEPTH)
        return icm__avro_corrupt(c, "values nested too deeply");
    const icm__avro_node *n = &s->nodes[node];
    int rc;
    switch (n->type) {
    case ICM__AVRO_RECORD:
        if (n->flat)
            return skip_flat_record(s, n, c);
        for (uint32_t i = 0; i < n->n; i++) {
            rc = skip(s, s->fields[n->first + i].type, c, depth + 1);
            if (rc < 0)
                return rc;
        }
        return 0;
    case ICM__AVRO_ARRAY:
        return skip_items(s, n->child, false, c, depth);
    case ICM__AVRO_MAP:
        return skip_items(s, n->child, true, c, depth);
    case ICM__AVRO_UNION: {
        uint32_t b = 0;
        rc = icm__avro_read_branch(c, n, &b);
        if (rc < 0)
            return rc;
        return skip(s, s->branches[n->first + b], c, depth + 1);
    }
    default:
        return skip_primitive(n, c);
    }
}

int icm__avro_skip(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c)
{
    return skip(s, node, c, 0);
}

void icm__avro_skip_step_add(const icm__avro_schema *s, icm__avro_skip_step *steps, size_t *n,
                             size_t from, uint32_t node)
{
    const icm__avro_node *t = &s->nodes[node];
    if (t->zero_size)
        return; /* (nothing to skip: an unpartitioned table's empty partition tuple) */
    bool plain = t->varints > 0 && t->type != ICM__AVRO_UNION;
    if (plain && *n > from && steps[*n - 1].varints > 0) {
        steps[*n - 1].varints += t->varints;
        return;
    }
    int null_branch;
    uint32_t inner = icm__avro_unwrap_optional(s, node, &null_branch);
    bool null_first = !plain && null_branch == 0;
    steps[*n] = (icm__avro_skip_step){plain ? t->varints : 0, inner, null_branch, null_first};
    /* The group's optional values just before this one reach one further. */
    for (size_t k = *n; null_first && k > from && steps[k - 1].null_run > 0; k--)
        steps[k - 1].null_run++;
    (*n)++;
}

int icm__avro_skip_steps(const icm__avro_schema *s, const icm__avro_skip_step *steps, size_t n,
                         icm__avro_cur *c)
{
    return icm__avro_run_skip_steps(s, steps, n, c);
}

int icm__avro_skip_nested(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c)
{
    return skip(s, node, c, 1);
}

int icm__avro_read_number(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c,
                          int64_t *out, bool *is_null)
{
    const icm__avro_node *n = &s->nodes[node];
    *is_null = false;
    if (n->type == ICM__AVRO_UNION) {
        uint32_t b = 0;
        int rc = icm__avro_read_branch(c, n, &b);
        if (rc < 0)
            return rc;
        n = &s->nodes[s->branches[n->first + b]];
    }
    switch (n->type) {
    case ICM__AVRO_NULL:
        *is_null = true;
        *out = 0;
        return 0;
    case ICM__AVRO_INT:
    case ICM__AVRO_LONG:
        return icm__avro_read_long(c, out);
    default:
        return icm__avro_corrupt(c, "expected an int or long");
    }
}
