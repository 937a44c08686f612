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
 * are not a top-level column of the table's schema by name (PyIceberg's name mapping). The
 * leaves are indexed by field id once per file (icm__verify_footer_ids): a wide table costs
 * a search per bound (adversary round 14, F6).
 *
 * Only reads storage.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "maint/verify.h"
#include "manifest/bulk_reader.h"
#include "parquet/parquet.h"
#include "spec/metadata_internal.h"
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
                    const uint8_t *b, size_t blen, bool upper, bool promoted, int *out)
{
    /* (promoted: the entry's value may be of the promoted type, a long for an INT32 leaf or
     * a double for a FLOAT one, as a writer that adds a file under the promoted column
     * records it) */
    if (promoted && alen == 8 && (leaf->type == ICM__PQ_INT32 || leaf->type == ICM__PQ_FLOAT)) {
        if (blen != 4)
            return false;
        double x, y;
        if (leaf->type == ICM__PQ_INT32) {
            int64_t xi = le_signed(a, 8), yi = le_signed(b, 4);
            *out = (xi > yi) - (xi < yi);
            return true;
        }
        float fy;
        memcpy(&x, a, 8);
        memcpy(&fy, b, 4);
        y = fy;
        if (isnan(x) || isnan(y))
            return false;
        *out = (x > y) - (x < y);
        return true;
    }
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

/* The comparable leaves by field id: its own, else a top-level column's by name. */
struct icm__footer_ids {
    struct by_id {
        int32_t id;
        size_t leaf;
        bool comparable; /* (else only whether it states a value is asked) */
    } *items;
    size_t n;
    bool complete; /* every nested leaf has an id here: an id not found is a column the file
                    * lacks (a top-level one without is named as no field of the schema) */
};

static int by_id_order(const void *a, const void *b)
{
    const struct by_id *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

static int by_name_order(const void *a, const void *b)
{
    return strcmp((*(const icm__schema_field *const *)a)->name,
                  (*(const icm__schema_field *const *)b)->name);
}

/* icm__verify_footer_ids, or with names_only icm__verify_footer_names. */
static int index_leaves(const icm__parquet_stats *s, const struct icm__schema *schema,
                        bool names_only, icm__footer_ids **out)
{
    *out = icm__calloc(1, sizeof **out);
    icm__footer_ids *ix = *out;
    const icm__schema_field **fields = NULL;
    size_t n_fields = schema != NULL ? schema->root.nfields : 0;
    if (ix == NULL ||
        (s->leaf_count > 0 &&
         (ix->items = icm__reallocarray(NULL, s->leaf_count, sizeof *ix->items)) == NULL) ||
        (n_fields > 0 && (fields = icm__reallocarray(NULL, n_fields, sizeof *fields)) == NULL)) {
        icm__free(fields);
        icm__verify_footer_ids_free(ix);
        *out = NULL;
        return ICM_ENOMEM;
    }
    /* the schema's top-level primitive fields by name, for leaves without an id */
    for (size_t f = 0; f < n_fields; f++)
        fields[f] = &schema->root.fields[f];
    if (n_fields > 0)
        qsort(fields, n_fields, sizeof *fields, by_name_order);
    const icm__parquet_element *el = s->schema->elements;
    ix->complete = true;
    for (size_t k = 0; k < s->leaf_count; k++) {
        const icm__parquet_element *leaf = &el[s->leaves[k]];
        bool by_name = names_only || !leaf->has_field_id;
        int32_t id = by_name ? INT32_MIN : leaf->field_id;
        bool top_level = false; /* (a root child: its parent is element 0) */
        for (size_t i = 1; by_name && i <= s->leaves[k]; i += el[i].subtree_size)
            top_level = i == s->leaves[k];
        if (by_name && top_level && n_fields > 0) {
            icm__schema_field probe_field = {.name = leaf->name};
            const icm__schema_field *probe = &probe_field;
            const icm__schema_field *const *hit =
                bsearch(&probe, fields, n_fields, sizeof *fields, by_name_order);
            if (hit != NULL && (*hit)->type->kind <= ICM__TYPE_OTHER)
                id = (*hit)->id;
        }
        if (id != INT32_MIN)
            ix->items[ix->n++] = (struct by_id){id, k, comparable_leaf(leaf)};
        else if (!top_level)
            ix->complete = false; /* (a nested leaf matched by no name may be any field's) */
    }
    icm__free(fields);
    if (ix->n > 0)
        qsort(ix->items, ix->n, sizeof *ix->items, by_id_order);
    return 0;
}

int icm__verify_footer_ids(const icm__parquet_stats *s, const struct icm__schema *schema,
                           icm__footer_ids **out)
{
    return index_leaves(s, schema, false, out);
}

int icm__verify_footer_names(const icm__parquet_stats *s, const struct icm__schema *schema,
                             icm__footer_ids **out)
{
    return index_leaves(s, schema, true, out);
}

bool icm__verify_footer_ids_matter(const icm__parquet_stats *s)
{
    const icm__parquet_element *el = s->schema->elements;
    for (size_t k = 0; k < s->leaf_count; k++) {
        size_t at = s->leaves[k];
        if (!el[at].has_field_id || !comparable_leaf(&el[at]))
            continue;
        for (size_t i = 1; i <= at; i += el[i].subtree_size)
            if (i == at)
                return true;
    }
    return false;
}

int icm__verify_schemas_load(icm__verify_schemas *s, const icm_table_metadata *md)
{
    if (s->loaded)
        return 0;
    size_t n = icm_table_metadata_schema_count(md);
    if (n > 0 && (s->items = icm__calloc(n, sizeof *s->items)) == NULL)
        return ICM_ENOMEM;
    s->loaded = true;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *text = NULL;
        struct icm__verify_schema *slot = &s->items[s->n];
        slot->id = icm__table_metadata_schema_id_at(md, i);
        slot->schema = NULL;
        rc = icm_table_metadata_schema_json(&text, md, slot->id);
        if (rc == 0)
            rc = icm__schema_parse_text(text, strlen(text), "schema", &slot->schema);
        icm_free(text);
        if (rc == 0)
            s->n++;
        else if (rc != ICM_ENOMEM)
            rc = 0;
        icm_error_clear();
    }
    return rc;
}

const struct icm__verify_schema *icm__verify_schemas_of_adder(const icm__verify_schemas *s,
                                                               const icm_table_metadata *md,
                                                               int64_t added_snapshot_id)
{
    const icm_snapshot *adder = added_snapshot_id != INT64_MIN
                                    ? icm_table_metadata_snapshot_by_id(md, added_snapshot_id)
                                    : NULL;
    for (size_t i = 0; adder != NULL && adder->has_schema_id && i < s->n; i++)
        if (s->items[i].id == adder->schema_id)
            return &s->items[i];
    return NULL;
}

void icm__verify_schemas_dispose(icm__verify_schemas *s)
{
    for (size_t i = 0; i < s->n; i++)
        icm__schema_free(s->items[i].schema);
    icm__free(s->items);
    *s = (icm__verify_schemas)ICM__VERIFY_SCHEMAS_INIT;
}

bool icm__verify_footer_names_matter(const icm__parquet_stats *s)
{
    const icm__parquet_element *el = s->schema->elements;
    for (size_t k = 0; k < s->leaf_count; k++) {
        size_t at = s->leaves[k];
        if (el[at].has_field_id || !comparable_leaf(&el[at]))
            continue;
        for (size_t i = 1; i <= at; i += el[i].subtree_size)
            if (i == at)
                return true; /* (a root child: a top-level column, matched by name) */
    }
    return false;
}

void icm__verify_footer_ids_free(icm__footer_ids *ids)
{
    if (ids == NULL)
        return;
    icm__free(ids->items);
    icm__free(ids);
}

/* The first row group value of leaf k outside the entry's bound `bound` (a lower bound when
 * !upper): its row group, or SIZE_MAX. *compared counts the values compared; *stated: some
 * row group states that side's value (none does for a column null in every row or written
 * without statistics). */
static size_t outside(const icm__parquet_stats *s, size_t k, const uint8_t *bound, size_t len,
                      bool upper, bool promoted, size_t *compared, bool *stated)
{
    const icm__parquet_element *leaf = &s->schema->elements[s->leaves[k]];
    *stated = false;
    for (size_t g = 0; g < s->row_group_count; g++) {
        const icm__parquet_chunk_stats *c = &s->chunks[g * s->leaf_count + k];
        int cmp;
        if (upper ? !c->has_max : !c->has_min)
            continue;
        *stated = true;
        bool told = upper ? compare(leaf, bound, len, c->max, c->max_len, true, promoted, &cmp)
                          : compare(leaf, bound, len, c->min, c->min_len, false, promoted, &cmp);
        *compared += told;
        if (told && (upper ? cmp < 0 : cmp > 0))
            return g;
    }
    return SIZE_MAX;
}

/* Field ids from this one on are the spec's reserved metadata columns (_file, _pos, _row_id,
 * ...): an entry's bound for one needs no column of the file. */
#define RESERVED_FIELD_ID_MIN (INT32_MAX - 200)

/* Whether some row group states leaf k's max (upper) or min. */
static bool states_a_value(const icm__parquet_stats *s, size_t k, bool upper)
{
    for (size_t g = 0; g < s->row_group_count; g++) {
        const icm__parquet_chunk_stats *c = &s->chunks[g * s->leaf_count + k];
        if (upper ? c->has_max : c->has_min)
            return true;
    }
    return false;
}

/* One bounds map against the footer: false (and *why) at the first value outside it.
 * *unstated counts the bounds whose leaf states no value on that side. */
static void map_holds(const icm__parquet_stats *s, const icm__footer_ids *ix, icm_raw map,
                      bool upper, char *why, size_t why_size, bool *holds, size_t *compared,
                      size_t *unstated)
{
    *holds = true;
    icm__bounds_iter it;
    icm__bounds_iter_init(&it, map);
    int32_t key;
    const uint8_t *value;
    size_t len;
    while (*holds && icm__bounds_next(&it, &key, &value, &len)) {
        size_t lo = 0, hi = ix->n; /* the first leaf of this id */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ix->items[mid].id < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == ix->n || ix->items[lo].id != key) {
            /* (no column of that id: the file lacks it when every leaf was indexed, unless
             * the id is a reserved metadata column's) */
            if (ix->complete && key < RESERVED_FIELD_ID_MIN && (*unstated)++ == 0)
                snprintf(why, why_size, "it has no column of field %d, where the entry holds "
                         "a %s bound", (int)key, upper ? "upper" : "lower");
            continue;
        }
        bool stated = false;
        size_t g = SIZE_MAX;
        if (ix->items[lo].comparable)
            g = outside(s, ix->items[lo].leaf, value, len, upper, false, compared, &stated);
        else
            stated = states_a_value(s, ix->items[lo].leaf, upper);
        if (!stated && (*unstated)++ == 0)
            snprintf(why, why_size, "its column of field %d states no value (null in every "
                     "row, or no statistics) where the entry holds a %s bound", (int)key,
                     upper ? "upper" : "lower");
        if (g != SIZE_MAX) {
            snprintf(why, why_size, "row group %zu holds a value of field %d %s the entry's %s "
                     "bound", g, (int)key, upper ? "above" : "below", upper ? "upper" : "lower");
            *holds = false;
        }
    }
}

/* The two maps against the footer (icm__verify_footer_agrees), counting as map_holds. */
static void agrees_counted(const icm__parquet_stats *s, const icm__footer_ids *ids,
                           int64_t record_count, icm_raw lower_bounds, icm_raw upper_bounds,
                           char *why, size_t why_size, bool *agrees, size_t *compared,
                           size_t *unstated)
{
    *agrees = false;
    *compared = 0;
    *unstated = 0;
    if (record_count >= 0 && s->schema->num_rows != record_count) {
        snprintf(why, why_size, "it has %lld rows, the entry records %lld",
                 (long long)s->schema->num_rows, (long long)record_count);
        return;
    }
    bool holds = true;
    /* (why: a value outside, which ends the look, else the first column that states none) */
    map_holds(s, ids, lower_bounds, false, why, why_size, &holds, compared, unstated);
    if (holds)
        map_holds(s, ids, upper_bounds, true, why, why_size, &holds, compared, unstated);
    *agrees = holds;
}

void icm__verify_footer_agrees(const icm__parquet_stats *s, const icm__footer_ids *ids,
                               int64_t record_count, icm_raw lower_bounds, icm_raw upper_bounds,
                               char *why, size_t why_size, bool *agrees)
{
    size_t compared, unstated;
    agrees_counted(s, ids, record_count, lower_bounds, upper_bounds, why, why_size, agrees,
                   &compared, &unstated);
}

void icm__verify_footer_agrees_as_named(const icm__parquet_stats *s, const icm__footer_ids *ids,
                                        int64_t record_count, icm_raw lower_bounds,
                                        icm_raw upper_bounds, bool some_compared, char *why,
                                        size_t why_size, bool *agrees)
{
    size_t compared, unstated;
    agrees_counted(s, ids, record_count, lower_bounds, upper_bounds, why, why_size, agrees,
                   &compared, &unstated);
    if (*agrees && unstated > 0)
        *agrees = false; /* (why: the first such column) */
    else if (*agrees && some_compared && compared == 0) {
        *agrees = false;
        snprintf(why, why_size, "none of its columns compares with the entry's bounds");
    }
}

int icm__verify_footer_fits_some_way(const icm__parquet_stats *s,
                                     const icm__verify_schemas *schemas, int64_t record_count,
                                     icm_raw lower_bounds, icm_raw upper_bounds, char *why,
                                     size_t why_size, bool *fits)
{
    *fits = false;
    size_t n = schemas != NULL ? schemas->n : 0;
    int rc = 0;
    for (size_t k = 0; !*fits && rc == 0 && k <= 2 * n; k++) {
        /* (k 0: by ids; then each schema by ids and names, and by names alone) */
        const icm__schema *schema = k == 0 ? NULL : schemas->items[(k - 1) / 2].schema;
        icm__footer_ids *ix = NULL;
        rc = k > 0 && (k - 1) % 2 == 1 ? icm__verify_footer_names(s, schema, &ix)
                                       : icm__verify_footer_ids(s, schema, &ix);
        if (rc == 0)
            icm__verify_footer_agrees_as_named(s, ix, record_count, lower_bounds, upper_bounds,
                                               true, why, why_size, fits);
        icm__verify_footer_ids_free(ix);
    }
    return rc;
}

/* ---- under any mapping (icm__verify_footer_fits_any_mapping) ---- */

/* Beyond these the mapping is not searched (the row count alone then describes the file). */
#define MAPPING_IDS_MAX 256
#define MAPPING_LEAVES_MAX 1024
#define MAPPING_CHECKS_MAX (UINT64_C(1) << 22)

typedef struct {
    int32_t id;
    const uint8_t *lower, *upper;
    size_t lower_len, upper_len;
} mapped_bound;

static int mapped_bound_order(const void *a, const void *b)
{
    int32_t x = ((const mapped_bound *)a)->id, y = ((const mapped_bound *)b)->id;
    return (x > y) - (x < y);
}

/* Gather the two maps' ids (reserved ones left out) into *out (new), one slot per id. */
static int gather_bounds(icm_raw lower, icm_raw upper, mapped_bound **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t n = 0, cap = 0;
    mapped_bound *b = NULL;
    for (int side = 0; side < 2; side++) {
        icm__bounds_iter it;
        icm__bounds_iter_init(&it, side == 0 ? lower : upper);
        int32_t key;
        const uint8_t *value;
        size_t len;
        while (icm__bounds_next(&it, &key, &value, &len)) {
            if (key >= RESERVED_FIELD_ID_MIN)
                continue;
            size_t at = 0;
            while (at < n && b[at].id != key)
                at++;
            if (at == n) {
                if (n == MAPPING_IDS_MAX + 1)
                    break; /* (too many: the caller gives up) */
                if (n == cap) {
                    size_t grown = cap == 0 ? 16 : 2 * cap;
                    mapped_bound *more = icm__reallocarray(b, grown, sizeof *b);
                    if (more == NULL) {
                        icm__free(b);
                        return ICM_ENOMEM;
                    }
                    b = more;
                    cap = grown;
                }
                b[n++] = (mapped_bound){.id = key};
            }
            if (side == 0) {
                b[at].lower = value;
                b[at].lower_len = len;
            } else {
                b[at].upper = value;
                b[at].upper_len = len;
            }
        }
    }
    if (n > 1)
        qsort(b, n, sizeof *b, mapped_bound_order);
    *out = b;
    *n_out = n;
    return 0;
}

/* Whether an entry's value of `len` bytes (NULL: none) can be a bound of a column stored as
 * `leaf`, by Iceberg's single-value serialization of each type the leaf may store: boolean
 * 1 byte; int and date 4 on INT32, and long 8 (a column promoted from int); long, time and
 * timestamps 8 on INT64, and timestamps 8 on INT96; float 4 and double 8 on FLOAT (promoted),
 * double 8 on DOUBLE; a decimal's unscaled value 1 to 16 on any leaf annotated DECIMAL;
 * strings, binary, fixed and UUIDs any length on byte arrays. */
static bool form_fits(const icm__parquet_element *leaf, const uint8_t *value, size_t len)
{
    if (value == NULL)
        return true;
    if (leaf->converted_type == ICM__PQ_CT_DECIMAL || leaf->logical.kind == ICM__PQ_LT_DECIMAL)
        return len >= 1 && len <= 16;
    switch (leaf->type) {
    case ICM__PQ_BOOLEAN:
        return len == 1;
    case ICM__PQ_INT32:
    case ICM__PQ_FLOAT:
        return len == 4 || len == 8;
    case ICM__PQ_INT64:
    case ICM__PQ_INT96:
    case ICM__PQ_DOUBLE:
        return len == 8;
    default:
        return true;
    }
}

/* Kuhn's augmenting path from bound i: whether it finds a leaf (leaf_of[i]). */
static bool augment(size_t i, size_t n_leaves, const uint8_t *possible, size_t *bound_of,
                    size_t *leaf_of, uint8_t *seen)
{
    for (size_t k = 0; k < n_leaves; k++) {
        if (!possible[i * n_leaves + k] || seen[k])
            continue;
        seen[k] = 1;
        if (bound_of[k] == SIZE_MAX ||
            augment(bound_of[k], n_leaves, possible, bound_of, leaf_of, seen)) {
            bound_of[k] = i;
            leaf_of[i] = k;
            return true;
        }
    }
    return false;
}

int icm__verify_footer_fits_any_mapping(const icm__parquet_stats *s, int64_t record_count,
                                        icm_raw lower_bounds, icm_raw upper_bounds, bool *fits)
{
    *fits = false;
    if (record_count >= 0 && s->schema->num_rows != record_count)
        return 0;
    mapped_bound *b = NULL;
    size_t n = 0, leaves = s->leaf_count;
    int rc = gather_bounds(lower_bounds, upper_bounds, &b, &n);
    if (rc != 0)
        return rc;
    uint64_t checks = (uint64_t)n * leaves * (s->row_group_count > 0 ? s->row_group_count : 1);
    if (n == 0 || n > MAPPING_IDS_MAX || leaves > MAPPING_LEAVES_MAX ||
        checks > MAPPING_CHECKS_MAX) {
        /* (nothing to map, or too much to search: the row count says all that is said) */
        icm__free(b);
        *fits = true;
        return 0;
    }
    if (n > leaves) { /* (each bound is some column's: too few columns) */
        icm__free(b);
        return 0;
    }
    uint8_t *possible = icm__calloc(n * leaves, 1), *seen = icm__calloc(leaves, 1);
    size_t *bound_of = icm__reallocarray(NULL, leaves, sizeof *bound_of),
           *leaf_of = icm__reallocarray(NULL, n, sizeof *leaf_of);
    if (possible == NULL || seen == NULL || bound_of == NULL || leaf_of == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++)
        for (size_t k = 0; k < leaves; k++) {
            /* (a leaf whose form does not compare may be any bound's) */
            const icm__parquet_element *leaf = &s->schema->elements[s->leaves[k]];
            size_t compared = 0;
            bool stated;
            possible[i * leaves + k] =
                form_fits(leaf, b[i].lower, b[i].lower_len) &&
                form_fits(leaf, b[i].upper, b[i].upper_len) &&
                (!comparable_leaf(leaf) ||
                 ((b[i].lower == NULL || outside(s, k, b[i].lower, b[i].lower_len, false, true,
                                                 &compared, &stated) == SIZE_MAX) &&
                  (b[i].upper == NULL || outside(s, k, b[i].upper, b[i].upper_len, true, true,
                                                 &compared, &stated) == SIZE_MAX)));
        }
    bool all = rc == 0;
    for (size_t k = 0; all && k < leaves; k++)
        bound_of[k] = SIZE_MAX;
    for (size_t i = 0; all && i < n; i++) {
        memset(seen, 0, leaves);
        all = augment(i, leaves, possible, bound_of, leaf_of, seen);
    }
    *fits = rc == 0 && all;
    icm__free(possible);
    icm__free(seen);
    icm__free(bound_of);
    icm__free(leaf_of);
    icm__free(b);
    return rc;
}
