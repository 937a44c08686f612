/*
 * txn/txn_addfiles_schema.c: does a Parquet file's schema fit the table's current schema?
 * (txn_addfiles_schema.h has the rule and where it comes from.)
 *
 * Two passes over the file schema (parquet/parquet.h gives it as a flattened, checked tree):
 *  1. every column must have an Iceberg reading (Iceberg spec, appendix "Parquet": physical
 *     type plus logical annotation -> Iceberg type; three-level LIST and MAP groups -> list and
 *     map; other groups -> struct), and we note whether every column carries a field id;
 *  2. the table schema (parsed once by spec/schema.h) is walked, each table column is looked up
 *     in the file (by name, and by id too when the file has them) and required-ness and type
 *     are compared.
 * Every refusal is one line naming the column path ("a.b.element") and what does not fit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spec/metadata_internal.h"
#include "spec/schema.h"
#include "txn/txn_addfiles_schema.h"
#include "util/util.h"

/* ---- Iceberg primitive types (spec/schema.h) ------------------------------------------ */

typedef icm__prim prim;

/* Table types this check knows how to compare with a Parquet column: every primitive of format
 * v1-v2 and the nanosecond timestamps (not unknown, variant, geometry, geography, or a
 * spelling spec/schema.h does not know). */
static bool checkable(const prim *p)
{
    return p->kind <= ICM__TYPE_BINARY;
}

/* Can a file column of type `file` be read as `table`? PyIceberg's schema.promote, except that
 * a decimal must keep its scale (PyIceberg compares the file's scale with itself). */
static bool promotes(const prim *file, const prim *table)
{
    if (file->kind == table->kind) {
        if (file->kind == ICM__TYPE_DECIMAL)
            return file->scale == table->scale && file->precision <= table->precision;
        return file->kind != ICM__TYPE_FIXED || file->length == table->length;
    }
    switch (file->kind) {
    case ICM__TYPE_INT:
        return table->kind == ICM__TYPE_LONG;
    case ICM__TYPE_FLOAT:
        return table->kind == ICM__TYPE_DOUBLE;
    case ICM__TYPE_STRING:
        return table->kind == ICM__TYPE_BINARY;
    case ICM__TYPE_BINARY:
        return table->kind == ICM__TYPE_STRING;
    case ICM__TYPE_FIXED:
        return table->kind == ICM__TYPE_UUID && file->length == 16;
    default:
        return false;
    }
}

/* The physical type PyIceberg expects for a table type when it reads the file's column
 * statistics (pyarrow.py _primitive_to_physical). */
static int32_t expected_physical(const prim *p)
{
    switch (p->kind) {
    case ICM__TYPE_BOOLEAN:
        return ICM__PQ_BOOLEAN;
    case ICM__TYPE_INT:
    case ICM__TYPE_DATE:
        return ICM__PQ_INT32;
    case ICM__TYPE_FLOAT:
        return ICM__PQ_FLOAT;
    case ICM__TYPE_DOUBLE:
        return ICM__PQ_DOUBLE;
    case ICM__TYPE_DECIMAL:
        return p->precision <= 9    ? ICM__PQ_INT32
               : p->precision <= 18 ? ICM__PQ_INT64
                                    : ICM__PQ_FIXED_LEN_BYTE_ARRAY;
    case ICM__TYPE_STRING:
    case ICM__TYPE_BINARY:
        return ICM__PQ_BYTE_ARRAY;
    case ICM__TYPE_UUID:
    case ICM__TYPE_FIXED:
        return ICM__PQ_FIXED_LEN_BYTE_ARRAY;
    default:
        return ICM__PQ_INT64; /* long, time, timestamps */
    }
}

/* PyIceberg's StatsAggregator refuses a physical type other than the expected one, except
 * INT32 for INT64, FLOAT for DOUBLE, and FIXED_LEN_BYTE_ARRAY for an integer-backed decimal. */
static bool physical_fits(int32_t have, const prim *table)
{
    int32_t want = expected_physical(table);
    return have == want || (have == ICM__PQ_INT32 && want == ICM__PQ_INT64) ||
           (have == ICM__PQ_FLOAT && want == ICM__PQ_DOUBLE) ||
           (have == ICM__PQ_FIXED_LEN_BYTE_ARRAY && table->kind == ICM__TYPE_DECIMAL &&
            (want == ICM__PQ_INT32 || want == ICM__PQ_INT64));
}

/* ---- the file side ---------------------------------------------------------------------- */

typedef enum shape_kind { S_PRIM, S_STRUCT, S_LIST, S_MAP } shape_kind;

/* What one Parquet field reads as: a primitive, a struct (children of the group), a list
 * (child[0] = the element) or a map (child[0] = key, child[1] = value). */
typedef struct shape {
    shape_kind kind;
    prim p;
    size_t child[2];
} shape;

typedef struct check_ctx {
    const icm__parquet_schema *file;
    const char *location;
    int format_version;
    bool by_id;
} check_ctx;

/* Refuse the file: "column '<path>' does not fit the table schema: <why>", the reason
 * printf-style (formatted whole, never cut to a fixed buffer). */
static int refuse(const check_ctx *cx, const char *path, const char *fmt, ...) ICM__PRINTF(3, 4);
static int refuse(const check_ctx *cx, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = icm__vsprintf(fmt, ap);
    va_end(ap);
    if (why == NULL)
        return icm__error_oom();
    int rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, cx->location,
                            "column '%s' does not fit the table schema: %s", path, why);
    icm__free(why);
    return rc;
}

static const icm__parquet_element *elem(const check_ctx *cx, size_t i)
{
    return &cx->file->elements[i];
}

/* Index of the k-th child of the group at i (children follow their group, each with its
 * subtree: loops over all children step from one to the next instead). */
static size_t child_at(const check_ctx *cx, size_t i, int32_t k)
{
    size_t c = i + 1;
    for (int32_t n = 0; n < k; n++)
        c += elem(cx, c)->subtree_size;
    return c;
}

static bool annotated(const icm__parquet_element *e, int32_t logical, int32_t converted)
{
    return e->logical.kind == logical || (e->logical.kind == ICM__PQ_LT_NONE &&
                                          converted >= 0 && e->converted_type == converted);
}

/* DECIMAL on any physical type: the logical type's parameters, else the legacy ones. Arrow
 * (and so PyIceberg) reads at most 38 digits as decimal128. */
static int decimal_of(const check_ctx *cx, const icm__parquet_element *e, const char *path,
                      prim *out)
{
    int32_t p = e->logical.kind == ICM__PQ_LT_DECIMAL ? e->logical.precision : e->precision;
    int32_t s = e->logical.kind == ICM__PQ_LT_DECIMAL ? e->logical.scale : e->scale;
    if (p < 1 || p > 38 || s < 0 || s > p)
        return refuse(cx, path, "decimal precision/scale outside 1..38 (or missing)");
    *out = (prim){ICM__TYPE_DECIMAL, p, s, 0};
    return 0;
}

/* INT32 / INT64 with an INTEGER annotation (logical or legacy): signed ints, and unsigned ones
 * that fit the Iceberg type. */
static int integer_of(const check_ctx *cx, const icm__parquet_element *e, const char *path,
                      bool is64, prim *out)
{
    int32_t bits = 0;
    bool is_signed = true;
    if (e->logical.kind == ICM__PQ_LT_INTEGER) {
        bits = e->logical.bit_width;
        is_signed = e->logical.is_signed;
    } else {
        static const int32_t widths[] = {8, 16, 32, 64};
        int32_t ct = e->converted_type;
        if (ct >= ICM__PQ_CT_UINT_8 && ct <= ICM__PQ_CT_UINT_64) {
            bits = widths[ct - ICM__PQ_CT_UINT_8];
            is_signed = false;
        } else {
            bits = widths[ct - ICM__PQ_CT_INT_8];
        }
    }
    bool fits = is64 ? bits == 64 : bits == 8 || bits == 16 || bits == 32;
    if (!fits)
        return refuse(cx, path, "integer annotation width does not match its physical type");
    if (!is_signed && bits >= 32)
        return refuse(cx, path, "unsigned 32/64-bit integers have values beyond Iceberg %s",
                      is64 ? "long" : "int");
    *out = (prim){is64 ? ICM__TYPE_LONG : ICM__TYPE_INT, 0, 0, 0};
    return 0;
}

static bool has_integer_annotation(const icm__parquet_element *e)
{
    return e->logical.kind == ICM__PQ_LT_INTEGER ||
           (e->logical.kind == ICM__PQ_LT_NONE && e->converted_type >= ICM__PQ_CT_UINT_8 &&
            e->converted_type <= ICM__PQ_CT_INT_64);
}

static int time_unit_type(const check_ctx *cx, const icm__parquet_element *e, const char *path,
                          prim *out)
{
    if (e->logical.kind != ICM__PQ_LT_TIMESTAMP)
        return refuse(cx, path, "legacy TIMESTAMP annotation without a logical type (time "
                                "zone semantics unclear)");
    switch (e->logical.unit) {
    case ICM__PQ_UNIT_MILLIS:
    case ICM__PQ_UNIT_MICROS:
        out->kind = e->logical.adjusted_to_utc ? ICM__TYPE_TIMESTAMPTZ : ICM__TYPE_TIMESTAMP;
        return 0;
    case ICM__PQ_UNIT_NANOS:
        if (cx->format_version < 3)
            return refuse(cx, path, "nanosecond timestamps need table format version 3");
        out->kind = e->logical.adjusted_to_utc ? ICM__TYPE_TIMESTAMPTZ_NS : ICM__TYPE_TIMESTAMP_NS;
        return 0;
    default:
        return refuse(cx, path, "TIMESTAMP annotation without a known unit");
    }
}

/* The Iceberg type of a Parquet leaf (spec appendix "Parquet", as pyarrow maps it). */
static int prim_of(const check_ctx *cx, size_t i, const char *path, prim *out)
{
    const icm__parquet_element *e = elem(cx, i);
    memset(out, 0, sizeof *out);
    bool plain = e->logical.kind == ICM__PQ_LT_NONE && e->converted_type < 0;
    if (annotated(e, ICM__PQ_LT_DECIMAL, ICM__PQ_CT_DECIMAL) &&
        (e->type == ICM__PQ_INT32 || e->type == ICM__PQ_INT64 ||
         e->type == ICM__PQ_BYTE_ARRAY || e->type == ICM__PQ_FIXED_LEN_BYTE_ARRAY))
        return decimal_of(cx, e, path, out);
    switch (e->type) {
    case ICM__PQ_BOOLEAN:
        if (plain) {
            out->kind = ICM__TYPE_BOOLEAN;
            return 0;
        }
        break;
    case ICM__PQ_INT32:
        if (plain) {
            out->kind = ICM__TYPE_INT;
            return 0;
        }
        if (has_integer_annotation(e))
            return integer_of(cx, e, path, false, out);
        if (annotated(e, ICM__PQ_LT_DATE, ICM__PQ_CT_DATE)) {
            out->kind = ICM__TYPE_DATE;
            return 0;
        }
        if (annotated(e, ICM__PQ_LT_TIME, ICM__PQ_CT_TIME_MILLIS))
            return refuse(cx, path, "millisecond TIME has no Iceberg type (time is in "
                                    "microseconds)");
        break;
    case ICM__PQ_INT64:
        if (plain) {
            out->kind = ICM__TYPE_LONG;
            return 0;
        }
        if (has_integer_annotation(e))
            return integer_of(cx, e, path, true, out);
        if (annotated(e, ICM__PQ_LT_TIMESTAMP, ICM__PQ_CT_TIMESTAMP_MILLIS) ||
            annotated(e, ICM__PQ_LT_TIMESTAMP, ICM__PQ_CT_TIMESTAMP_MICROS))
            return time_unit_type(cx, e, path, out);
        if (annotated(e, ICM__PQ_LT_TIME, ICM__PQ_CT_TIME_MICROS) &&
            (e->logical.kind != ICM__PQ_LT_TIME || e->logical.unit == ICM__PQ_UNIT_MICROS)) {
            out->kind = ICM__TYPE_TIME;
            return 0;
        }
        break;
    case ICM__PQ_INT96:
        return refuse(cx, path, "INT96 timestamps are not read as an Iceberg type");
    case ICM__PQ_FLOAT:
        if (plain) {
            out->kind = ICM__TYPE_FLOAT;
            return 0;
        }
        break;
    case ICM__PQ_DOUBLE:
        if (plain) {
            out->kind = ICM__TYPE_DOUBLE;
            return 0;
        }
        break;
    case ICM__PQ_BYTE_ARRAY:
        if (plain) {
            out->kind = ICM__TYPE_BINARY;
            return 0;
        }
        if (annotated(e, ICM__PQ_LT_STRING, ICM__PQ_CT_UTF8)) {
            out->kind = ICM__TYPE_STRING;
            return 0;
        }
        break;
    case ICM__PQ_FIXED_LEN_BYTE_ARRAY:
        if (e->type_length < 1)
            return refuse(cx, path, "FIXED_LEN_BYTE_ARRAY without a length");
        /* pyarrow reads UUID as fixed_size_binary(16), which promotes to uuid. */
        if (plain || (e->logical.kind == ICM__PQ_LT_UUID && e->type_length == 16)) {
            *out = (prim){ICM__TYPE_FIXED, 0, 0, e->type_length};
            return 0;
        }
        break;
    default:
        break;
    }
    return refuse(cx, path, "its Parquet type and annotation have no Iceberg type icemaint "
                            "can check");
}

/* List and map groups: the standard three-level layouts with the standard names
 * (`<list>.list.element`, `<map>.key_value.key` / `.value`, Parquet LogicalTypes.md). PyIceberg
 * finds column statistics by those name paths and fails on others; legacy two-level layouts are
 * resolved differently by different readers. Both are refused. */
static int list_shape(const check_ctx *cx, size_t i, const char *path, shape *out)
{
    const icm__parquet_element *m = elem(cx, i + 1);
    if (elem(cx, i)->num_children != 1 || m->repetition != ICM__PQ_REPEATED ||
        m->num_children != 1 || strcmp(m->name, "list") != 0 ||
        strcmp(elem(cx, i + 2)->name, "element") != 0)
        return refuse(cx, path, "LIST group is not in the standard three-level layout "
                                "(repeated group 'list' with one field 'element')");
    out->kind = S_LIST;
    out->child[0] = i + 2;
    return 0;
}

static int map_shape(const check_ctx *cx, size_t i, const char *path, shape *out)
{
    const icm__parquet_element *m = elem(cx, i + 1);
    if (elem(cx, i)->num_children != 1 || m->repetition != ICM__PQ_REPEATED ||
        m->num_children != 2 || strcmp(m->name, "key_value") != 0)
        return refuse(cx, path, "MAP group is not in the standard three-level layout "
                                "(repeated group 'key_value' with fields 'key' and 'value')");
    out->kind = S_MAP;
    out->child[0] = i + 2;
    out->child[1] = child_at(cx, i + 1, 1);
    if (strcmp(elem(cx, out->child[0])->name, "key") != 0 ||
        strcmp(elem(cx, out->child[1])->name, "value") != 0)
        return refuse(cx, path, "MAP fields are not named 'key' and 'value'");
    if (elem(cx, out->child[0])->repetition != ICM__PQ_REQUIRED)
        return refuse(cx, path, "map keys must be required");
    return 0;
}

/* What the field at i reads as. A repeated field is only accepted as the middle level of a
 * list or map, never as a field of its own. */
static int shape_of(const check_ctx *cx, size_t i, const char *path, shape *out)
{
    const icm__parquet_element *e = elem(cx, i);
    memset(out, 0, sizeof *out);
    if (e->repetition == ICM__PQ_REPEATED)
        return refuse(cx, path, "repeated field outside a LIST or MAP group (legacy layout)");
    if (e->num_children < 0) {
        out->kind = S_PRIM;
        return prim_of(cx, i, path, &out->p);
    }
    if (annotated(e, ICM__PQ_LT_LIST, ICM__PQ_CT_LIST))
        return list_shape(cx, i, path, out);
    if (annotated(e, ICM__PQ_LT_MAP, ICM__PQ_CT_MAP) ||
        (e->logical.kind == ICM__PQ_LT_NONE && e->converted_type == ICM__PQ_CT_MAP_KEY_VALUE))
        return map_shape(cx, i, path, out);
    if (e->logical.kind != ICM__PQ_LT_NONE || e->converted_type >= 0)
        return refuse(cx, path, "group with an annotation icemaint cannot check");
    out->kind = S_STRUCT;
    return 0;
}

static char *child_path(const char *path, const char *name)
{
    return path[0] == '\0' ? icm__strdup(name) : icm__sprintf("%s.%s", path, name);
}

static int scan_field(const check_ctx *cx, size_t i, const char *path, bool *all_ids);

/* Pass 1 over the children of the group at i (the root or a struct). */
static int scan_group(const check_ctx *cx, size_t i, const char *path, bool *all_ids)
{
    int rc = 0;
    size_t c = i + 1;
    for (int32_t k = 0, n = elem(cx, i)->num_children; rc == 0 && k < n;
         k++, c += elem(cx, c)->subtree_size) {
        char *p = child_path(path, elem(cx, c)->name);
        rc = p != NULL ? scan_field(cx, c, p, all_ids) : icm__error_oom();
        icm__free(p);
    }
    return rc;
}

/* Pass 1: every field has an Iceberg reading; note whether every field has an id. */
static int scan_field(const check_ctx *cx, size_t i, const char *path, bool *all_ids)
{
    shape sh;
    int rc = shape_of(cx, i, path, &sh);
    if (rc != 0)
        return rc;
    if (!elem(cx, i)->has_field_id)
        *all_ids = false;
    if (sh.kind == S_STRUCT)
        return scan_group(cx, i, path, all_ids);
    static const char *const part[] = {"element", "key", "value"};
    int parts = sh.kind == S_LIST ? 1 : sh.kind == S_MAP ? 2 : 0;
    for (int k = 0; rc == 0 && k < parts; k++) {
        char *p = child_path(path, part[sh.kind == S_MAP ? k + 1 : 0]);
        rc = p != NULL ? scan_field(cx, sh.child[k], p, all_ids) : icm__error_oom();
        icm__free(p);
    }
    return rc;
}

/* ---- pass 2: the table schema against the file ----------------------------------------- */

#define NO_FIELD ((size_t)-1)

static int check_field(const check_ctx *cx, const icm__schema_field *field, size_t file_i,
                       const char *path);

/* The file child of group g that a table field matches: by name (PyIceberg attributes the
 * file's column statistics by the column's name path, so a renamed column fails there even
 * when its field id matches); with field ids, the id must then be the table's too. */
static int find_child(const check_ctx *cx, size_t g, const icm__schema_field *field,
                      const char *path, size_t *out)
{
    *out = NO_FIELD;
    size_t c = g + 1;
    for (int32_t k = 0, n = elem(cx, g)->num_children; k < n;
         k++, c += elem(cx, c)->subtree_size) {
        if (strcmp(elem(cx, c)->name, field->name) != 0)
            continue;
        if (*out != NO_FIELD)
            return refuse(cx, path, "two file columns have its name");
        *out = c;
    }
    if (*out == NO_FIELD || !cx->by_id || elem(cx, *out)->field_id == field->id)
        return 0;
    return refuse(cx, path, "its field id is %d in the file, %d in the table",
                  (int)elem(cx, *out)->field_id, (int)field->id);
}

/* A file column must have a table column of the same name in the same struct: without field
 * ids PyIceberg's name mapping (derived from the current schema) has no entry for it, and with
 * ids its statistics lookup by name path fails. */
static int check_no_extra(const check_ctx *cx, size_t g, const icm__type *table,
                          const char *path)
{
    size_t c = g + 1;
    for (int32_t k = 0, n = elem(cx, g)->num_children; k < n;
         k++, c += elem(cx, c)->subtree_size) {
        const char *name = elem(cx, c)->name;
        bool found = false;
        for (size_t j = 0; !found && j < table->nfields; j++)
            found = strcmp(table->fields[j].name, name) == 0;
        if (!found) {
            char *p = child_path(path, name);
            int rc = p != NULL ? icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, cx->location,
                                                "column '%s' is not in the table schema (add "
                                                "it to the table first)", p)
                               : icm__error_oom();
            icm__free(p);
            return rc;
        }
    }
    return 0;
}

/* A table struct against the file group g. */
static int check_struct(const check_ctx *cx, const icm__type *table, size_t g, const char *path)
{
    int rc = check_no_extra(cx, g, table, path);
    for (size_t j = 0; rc == 0 && j < table->nfields; j++) {
        const icm__schema_field *f = &table->fields[j];
        char *p = child_path(path, f->name);
        if (p == NULL)
            return icm__error_oom();
        size_t c;
        rc = find_child(cx, g, f, p, &c);
        if (rc == 0)
            rc = check_field(cx, f, c, p);
        icm__free(p);
    }
    return rc;
}

/* A list element or map key/value (`part` is the field) against file field i. By id, it must
 * carry the table's id for it. */
static int check_part(const check_ctx *cx, const icm__schema_field *part, size_t i,
                      const char *path)
{
    char *p = child_path(path, part->name);
    if (p == NULL)
        return icm__error_oom();
    int rc = 0;
    if (cx->by_id && elem(cx, i)->field_id != part->id)
        rc = refuse(cx, p, "its field id differs from the table's");
    if (rc == 0)
        rc = check_field(cx, part, i, p);
    icm__free(p);
    return rc;
}

static int check_nested(const check_ctx *cx, const icm__type *type, size_t file_i,
                        const shape *sh, const char *path)
{
    static const char *const shape_names[] = {"a primitive", "a struct", "a list", "a map"};
    if (type->kind == ICM__TYPE_STRUCT && sh->kind == S_STRUCT)
        return check_struct(cx, type, file_i, path);
    if (type->kind == ICM__TYPE_LIST && sh->kind == S_LIST)
        return check_part(cx, &type->fields[0], sh->child[0], path);
    if (type->kind == ICM__TYPE_MAP && sh->kind == S_MAP) {
        int rc = check_part(cx, &type->fields[0], sh->child[0], path);
        if (rc == 0)
            rc = check_part(cx, &type->fields[1], sh->child[1], path);
        return rc;
    }
    const char *kind = type->kind == ICM__TYPE_STRUCT ? "struct"
                       : type->kind == ICM__TYPE_LIST ? "list"
                                                       : "map";
    return refuse(cx, path, "it is %s in the file, a %s in the table", shape_names[sh->kind],
                  kind);
}

/* One table field (its type and required flag) against file field file_i (NO_FIELD: absent). */
static int check_field(const check_ctx *cx, const icm__schema_field *field, size_t file_i,
                       const char *path)
{
    if (file_i == NO_FIELD)
        return field->required ? refuse(cx, path, "it is required in the table and missing "
                                                   "from the file")
                               : 0;
    if (field->required && elem(cx, file_i)->repetition != ICM__PQ_REQUIRED)
        return refuse(cx, path, "it is required in the table and optional in the file");
    shape sh;
    int rc = shape_of(cx, file_i, path, &sh);
    if (rc != 0)
        return rc;
    const icm__type *type = field->type;
    if (type->text == NULL)
        return check_nested(cx, type, file_i, &sh, path);
    const prim *want = &type->prim;
    if (!checkable(want))
        return refuse(cx, path, "icemaint cannot check table type %s", type->text);
    char have_s[40], want_s[40];
    if (sh.kind != S_PRIM)
        return refuse(cx, path, "it is nested in the file, the table type is %s",
                      icm__prim_format(want, want_s, sizeof want_s));
    if (promotes(&sh.p, want)) {
        if (physical_fits(elem(cx, file_i)->type, want))
            return 0;
        return refuse(cx, path, "its Parquet physical type is not the one add-files expects "
                                "for table type %s",
                      icm__prim_format(want, want_s, sizeof want_s));
    }
    return refuse(cx, path, "type %s in the file cannot be read as %s",
                  icm__prim_format(&sh.p, have_s, sizeof have_s),
                  icm__prim_format(want, want_s, sizeof want_s));
}

int icm__txn_check_parquet_schema(const icm_table_metadata *md, const icm__parquet_schema *file,
                                  const char *location)
{
    check_ctx cx = {file, location, icm_table_metadata_format_version(md), false};
    bool all_ids = true;
    int rc = scan_group(&cx, 0, "", &all_ids);
    if (rc != 0)
        return rc;
    /* PyIceberg trusts the file's ids only when every field has one (pyarrow.py _HasIds). */
    cx.by_id = all_ids;
    char *text = NULL;
    rc = icm_table_metadata_schema_json(&text, md, icm_table_metadata_current_schema_id(md));
    if (rc != 0)
        return rc;
    icm__schema *schema = NULL;
    rc = icm__schema_parse_text(text, strlen(text), "current schema", &schema);
    icm_free(text);
    if (rc == 0)
        rc = check_struct(&cx, &schema->root, 0, "");
    icm__schema_free(schema);
    return rc;
}
