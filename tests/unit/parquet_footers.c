/*
 * tests/unit/parquet_footers.c: Parquet footers, files and entry bounds for tests
 * (parquet_footers.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "parquet_footers.h"

/* ---- a Thrift compact writer ---- */

typedef struct tbuf {
    uint8_t b[1024];
    size_t n;
    int16_t last[8]; /* the previous field id, per open struct */
    int depth;
} tbuf;

static void byte(tbuf *t, uint8_t v)
{
    assert_true(t->n < sizeof t->b);
    t->b[t->n++] = v;
}

static void varint(tbuf *t, uint64_t v)
{
    do {
        byte(t, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
    } while (v);
}

static uint64_t zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

enum { T_I32 = 5, T_I64 = 6, T_BINARY = 8, T_LIST = 9, T_STRUCT = 12 };

static void field(tbuf *t, int16_t id, int type)
{
    int16_t delta = (int16_t)(id - t->last[t->depth]);
    assert_true(delta > 0 && delta <= 15);
    byte(t, (uint8_t)(delta << 4 | type));
    t->last[t->depth] = id;
}

static void i32_field(tbuf *t, int16_t id, int32_t v)
{
    field(t, id, T_I32);
    varint(t, zz(v));
}

static void i64_field(tbuf *t, int16_t id, int64_t v)
{
    field(t, id, T_I64);
    varint(t, zz(v));
}

static void binary_field(tbuf *t, int16_t id, const void *v, size_t len)
{
    field(t, id, T_BINARY);
    varint(t, len);
    for (size_t i = 0; i < len; i++)
        byte(t, ((const uint8_t *)v)[i]);
}

static void begin(tbuf *t) /* a struct value (after its field header or list header) */
{
    t->last[++t->depth] = 0;
}

static void end(tbuf *t)
{
    byte(t, 0);
    t->depth--;
}

static void list_header(tbuf *t, int16_t id, size_t n, int elem)
{
    field(t, id, T_LIST);
    assert_true(n < 15);
    byte(t, (uint8_t)(n << 4 | elem));
}

/* ---- footers ---- */

const icmt_leaf ICMT_ID_AND_S[2] = {{"id", 2, -1, 1}, {"s", 6, 0, 2}};

size_t icmt_parquet_footer(uint8_t *out, const icmt_leaf *leaves, size_t n_leaves, int64_t rows,
                           size_t groups, const icmt_chunk *chunks)
{
    tbuf t;
    memset(&t, 0, sizeof t);
    list_header(&t, 2, 1 + n_leaves, T_STRUCT);
    begin(&t);
    binary_field(&t, 4, "root", 4);
    i32_field(&t, 5, (int32_t)n_leaves);
    end(&t);
    for (size_t k = 0; k < n_leaves; k++) {
        begin(&t);
        i32_field(&t, 1, leaves[k].type);
        i32_field(&t, 3, 1); /* OPTIONAL */
        binary_field(&t, 4, leaves[k].name, strlen(leaves[k].name));
        if (leaves[k].converted >= 0)
            i32_field(&t, 6, leaves[k].converted);
        if (leaves[k].field_id >= 0)
            i32_field(&t, 9, leaves[k].field_id);
        end(&t);
    }
    i64_field(&t, 3, rows);
    list_header(&t, 4, groups, T_STRUCT);
    for (size_t g = 0; g < groups; g++) {
        begin(&t);
        list_header(&t, 1, n_leaves, T_STRUCT);
        for (size_t k = 0; k < n_leaves; k++) {
            const icmt_chunk *c = &chunks[g * n_leaves + k];
            begin(&t);             /* ColumnChunk */
            field(&t, 3, T_STRUCT); /* meta_data */
            begin(&t);
            field(&t, 12, T_STRUCT); /* statistics */
            begin(&t);
            if (c->max != NULL)
                binary_field(&t, c->legacy ? 1 : 5, c->max, c->max_len);
            if (c->min != NULL)
                binary_field(&t, c->legacy ? 2 : 6, c->min, c->min_len);
            end(&t);
            end(&t);
            end(&t);
        }
        i64_field(&t, 3, rows);
        end(&t);
    }
    byte(&t, 0);
    memcpy(out, t.b, t.n);
    return t.n;
}

/* ---- entry bounds ---- */

static void avro_long(icmt_bounds *m, int64_t v)
{
    uint64_t z = zz(v);
    do {
        m->b[m->n++] = (uint8_t)((z & 0x7f) | (z > 0x7f ? 0x80 : 0));
        z >>= 7;
    } while (z);
}

icm_raw icmt_bounds_map(icmt_bounds *m, size_t n, const int32_t *keys,
                        const void *const *values, const size_t *lens)
{
    m->n = 0;
    if (n > 0) {
        avro_long(m, (int64_t)n);
        for (size_t i = 0; i < n; i++) {
            avro_long(m, keys[i]);
            avro_long(m, (int64_t)lens[i]);
            memcpy(m->b + m->n, values[i], lens[i]);
            m->n += lens[i];
        }
    }
    avro_long(m, 0);
    return (icm_raw){m->b, m->n};
}

const uint8_t *icmt_le64(int64_t v, uint8_t out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)v >> (8 * i));
    return out;
}

void icmt_parquet_file(uint8_t *out, size_t size, uint8_t fill, const uint8_t *footer,
                       size_t footer_len)
{
    assert_true(size >= footer_len + 12);
    memcpy(out, "PAR1", 4);
    memset(out + 4, fill, size - footer_len - 12);
    memcpy(out + size - footer_len - 8, footer, footer_len);
    for (int i = 0; i < 4; i++)
        out[size - 8 + (size_t)i] = (uint8_t)(footer_len >> (8 * i));
    memcpy(out + size - 4, "PAR1", 4);
}

void icmt_entry_bounds_of(icmt_entry_bounds *e, int64_t min_id, int64_t max_id,
                          const char *min_s, const char *max_s)
{
    static const int32_t keys[] = {1, 2};
    const void *lv[] = {icmt_le64(min_id, e->a), min_s}, *uv[] = {icmt_le64(max_id, e->b), max_s};
    size_t ll[] = {8, strlen(min_s)}, ul[] = {8, strlen(max_s)};
    e->lower = icmt_bounds_map(&e->lo, 2, keys, lv, ll);
    e->upper = icmt_bounds_map(&e->up, 2, keys, uv, ul);
}
