/*
 * maint/verify_footer.c: does a Parquet file's footer agree with a manifest entry (verify.h,
 * "footers")?
 *
 * An entry records its file's row count and, per column (by field id), a lower and an upper
 * bound (spec "Manifests": lower_bounds, upper_bounds, as "Binary single-value serialization").
 * The footer records num_rows and each row group's min and max per leaf column. A file agrees
 * with an entry when the counts are equal and no row group holds a value outside the entry's
 * bounds, for every column both sides describe in one comparable form. Only what can be
 * compared without doubt is: a mismatch is a finding (a hold), so any form that might be read
 * two ways is passed over.
 *
 * Compared, by the leaf's physical type (the entry's value must have the same width):
 * BOOLEAN (one byte), INT32 and INT64 (signed little-endian: Iceberg int, long, date, time and
 * timestamp in micros), FLOAT and DOUBLE (NaN passed over), BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
 * (unsigned bytes: strings, binary, fixed). Both sides may truncate byte arrays (Iceberg to 16
 * characters, the upper bound then incremented; Parquet writers likewise): lower bounds are
 * compared over their common length (prefixes of the true minimum), upper bounds longer than 15
 * bytes over one byte less (an incremented last byte). Passed over: decimals (Iceberg writes
 * big-endian bytes), INT96, unsigned integers, FLOAT16, UUID (Java's order differs), time and
 * timestamp in millis or nanos (the entry may hold micros), and leaves without a field id that
 * are not a top-level column of the table's schema by name (PyIceberg's name mapping).
 *
 * Only reads storage.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "maint/verify.h"
#include "manifest/bulk_reader.h"
#include "parquet/parquet.h"
#include "spec/schema.h"
#include "util/util.h"

/* Whether a leaf's values compare as their plain encoding does with Iceberg's. */
static bool comparable_leaf(const icm__parquet_element *e)
{
    const icm__parquet_logical *lt = &e->logical;
    if (e->converted_type == ICM__PQ_CT_DECIMAL || lt->kind == ICM__PQ_LT_DECIMAL ||
        lt->kind == ICM__PQ_LT_UUID || lt->kind == ICM__PQ_LT_FLOAT16 ||
        lt->kind == ICM__PQ_LT_UNKNOWN || lt->kind >= 16)
        return false;
    if ((lt->kind == ICM__PQ_LT_INTEGER && !lt->is_signed) ||
        (e->converted_type >= ICM__PQ_CT_UINT_8 && e->converted_type <= ICM__PQ_CT_UINT_64))
        return false;
    if ((lt->kind == ICM__PQ_LT_TIME || lt->kind == ICM__PQ_LT_TIMESTAMP) &&
        lt->unit != ICM__PQ_UNIT_MICROS)
        return false;
    if (e->converted_type == ICM__PQ_CT_TIME_MILLIS ||
        e->converted_type == ICM__PQ_CT_TIMESTAMP_MILLIS)
        return false;
    return e->type != ICM__PQ_INT96;
}

static int64_t le_signed(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    if (n < 8 && (v >> (8 * n - 1)) & 1)
        v |= ~UINT64_C(0) << (8 * n); /* sign-extend */
    return (int64_t)v;
}

/* Compare a (the entry's bound) with b (a footer value) of one leaf: -1, 0, 1 into *out, or
 * false when they are not comparable. `upper`: the pair are upper bounds (see the top). */
static bool compare(const icm__parquet_element *leaf, const uint8_t *a, size_t alen,
                    const uint8_t *b, size_t blen, bool upper, int *out)
{
    switch (leaf->type) {
    case ICM__PQ_BOOLEAN:
        if (alen != 1 || blen != 1)
            return false;
        *out = (a[0] != 0) - (b[0] != 0);
        return true;
    case ICM__PQ_INT32:
    case ICM__PQ_INT64: {
        size_t w = leaf->type == ICM__PQ_INT32 ? 4 : 8;
        if (alen != w || blen != w)
            return false;
        int64_t x = le_signed(a, w), y = le_signed(b, w);
        *out = (x > y) - (x < y);
        return true;
    }
    case ICM__PQ_FLOAT:
    case ICM__PQ_DOUBLE: {
        size_t w = leaf->type == ICM__PQ_FLOAT ? 4 : 8;
        if (alen != w || blen != w)
            return false;
        double x, y;
        if (w == 4) {
            float fx, fy;
            memcpy(&fx, a, 4);
            memcpy(&fy, b, 4);
            x = fx;
            y = fy;
        } else {
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
        }
        if (isnan(x) || isnan(y))
            return false;
        *out = (x > y) - (x < y);
        return true;
    }
    case ICM__PQ_BYTE_ARRAY:
    case ICM__PQ_FIXED_LEN_BYTE_ARRAY: {
        size_t n = alen < blen ? alen : blen;
        if (upper && (alen >= 16 || blen >= 16))
            n = n > 0 ? n - 1 : 0;
        int c = n > 0 ? memcmp(a, b, n) : 0;
        *out = (c > 0) - (c < 0);
        return true;
    }
    default:
        return false;
    }
}

/* The field id of each leaf (INT32_MIN: none): its own, else a top-level column's by name. */
static int leaf_ids(const icm__parquet_stats *s, const struct icm__schema *schema, int32_t *ids)
{
    const icm__parquet_element *el = s->schema->elements;
    for (size_t k = 0; k < s->leaf_count; k++) {
        const icm__parquet_element *leaf = &el[s->leaves[k]];
        ids[k] = leaf->has_field_id ? leaf->field_id : INT32_MIN;
    }
    if (schema == NULL)
        return 0;
    /* top-level leaves without an id, by name */
    for (size_t i = 1, k = 0; i < s->schema->element_count; i += el[i].subtree_size) {
        while (k < s->leaf_count && s->leaves[k] < i)
            k++;
        if (k == s->leaf_count || s->leaves[k] != i || el[i].has_field_id)
            continue;
        for (size_t f = 0; f < schema->root.nfields; f++) {
            const icm__schema_field *field = &schema->root.fields[f];
            if (field->type->kind <= ICM__TYPE_OTHER && strcmp(field->name, el[i].name) == 0) {
                ids[k] = field->id;
                break;
            }
        }
    }
    return 0;
}

/* The first row group value of leaf k outside the entry's bound `bound` (a lower bound when
 * !upper): its row group, or SIZE_MAX. */
static size_t outside(const icm__parquet_stats *s, size_t k, const uint8_t *bound, size_t len,
                      bool upper)
{
    const icm__parquet_element *leaf = &s->schema->elements[s->leaves[k]];
    for (size_t g = 0; g < s->row_group_count; g++) {
        const icm__parquet_chunk_stats *c = &s->chunks[g * s->leaf_count + k];
        int cmp;
        if (upper ? !c->has_max : !c->has_min)
            continue;
        if (upper ? compare(leaf, bound, len, c->max, c->max_len, true, &cmp) && cmp < 0
                  : compare(leaf, bound, len, c->min, c->min_len, false, &cmp) && cmp > 0)
            return g;
    }
    return SIZE_MAX;
}

/* One bounds map against the footer: false (and *why) at the first value outside it. */
static int map_holds(const icm__parquet_stats *s, const int32_t *ids, icm_raw map, bool upper,
                     char *why, size_t why_size, bool *holds)
{
    *holds = true;
    icm__bounds_iter it;
    icm__bounds_iter_init(&it, map);
    int32_t key;
    const uint8_t *value;
    size_t len;
    while (*holds && icm__bounds_next(&it, &key, &value, &len)) {
        for (size_t k = 0; k < s->leaf_count; k++) {
            if (ids[k] != key || !comparable_leaf(&s->schema->elements[s->leaves[k]]))
                continue;
            size_t g = outside(s, k, value, len, upper);
            if (g != SIZE_MAX) {
                snprintf(why, why_size, "row group %zu holds a value of field %d %s the entry's "
                         "%s bound", g, (int)key, upper ? "above" : "below",
                         upper ? "upper" : "lower");
                *holds = false;
            }
            break;
        }
    }
    return 0;
}

int icm__verify_footer_agrees(const icm__parquet_stats *s, const struct icm__schema *schema,
                              int64_t record_count, icm_raw lower_bounds, icm_raw upper_bounds,
                              char *why, size_t why_size, bool *agrees)
{
    *agrees = false;
    if (record_count >= 0 && s->schema->num_rows != record_count) {
        snprintf(why, why_size, "it has %lld rows, the entry records %lld",
                 (long long)s->schema->num_rows, (long long)record_count);
        return 0;
    }
    int32_t *ids = s->leaf_count > 0 ? icm__reallocarray(NULL, s->leaf_count, sizeof *ids) : NULL;
    if (s->leaf_count > 0 && ids == NULL)
        return ICM_ENOMEM;
    bool holds = true;
    int rc = leaf_ids(s, schema, ids);
    if (rc == 0)
        rc = map_holds(s, ids, lower_bounds, false, why, why_size, &holds);
    if (rc == 0 && holds)
        rc = map_holds(s, ids, upper_bounds, true, why, why_size, &holds);
    icm__free(ids);
    *agrees = rc == 0 && holds;
    return rc;
}
