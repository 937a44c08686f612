/*
 * spec/schema.c: the Iceberg schema and type parser and walker (see schema.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spec/metadata_internal.h"
#include "spec/schema.h"
#include "util/util.h"

/* ---- primitive type strings -------------------------------------------------------------- */

/* Names without parameters, indexed by kind (NULL: takes parameters, or not primitive). */
static const char *const SIMPLE_NAMES[] = {
    [ICM__TYPE_BOOLEAN] = "boolean",
    [ICM__TYPE_INT] = "int",
    [ICM__TYPE_LONG] = "long",
    [ICM__TYPE_FLOAT] = "float",
    [ICM__TYPE_DOUBLE] = "double",
    [ICM__TYPE_DATE] = "date",
    [ICM__TYPE_TIME] = "time",
    [ICM__TYPE_TIMESTAMP] = "timestamp",
    [ICM__TYPE_TIMESTAMPTZ] = "timestamptz",
    [ICM__TYPE_TIMESTAMP_NS] = "timestamp_ns",
    [ICM__TYPE_TIMESTAMPTZ_NS] = "timestamptz_ns",
    [ICM__TYPE_STRING] = "string",
    [ICM__TYPE_UUID] = "uuid",
    [ICM__TYPE_BINARY] = "binary",
    [ICM__TYPE_UNKNOWN] = "unknown",
    [ICM__TYPE_VARIANT] = "variant",
    [ICM__TYPE_GEOMETRY] = "geometry",
    [ICM__TYPE_GEOGRAPHY] = "geography",
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static const char *skip_space(const char *s)
{
    while (is_space(*s))
        s++;
    return s;
}

/* White space, decimal digits (no sign) for a value up to INT32_MAX, white space. */
static const char *number(const char *s, int32_t *out)
{
    s = skip_space(s);
    if (*s < '0' || *s > '9')
        return NULL;
    int64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > INT32_MAX)
            return NULL;
    }
    *out = (int32_t)v;
    return skip_space(s);
}

/* `decimal(P, S)`: P digits of which S after the point; the spec allows P up to 38. */
static bool parse_decimal(const char *s, icm__prim *out)
{
    int32_t p, q;
    if (strncmp(s, "decimal(", 8) != 0 || (s = number(s + 8, &p)) == NULL || *s != ',' ||
        (s = number(s + 1, &q)) == NULL || strcmp(s, ")") != 0)
        return false;
    if (p < 1 || p > 38 || q > p)
        return false;
    *out = (icm__prim){ICM__TYPE_DECIMAL, p, q, 0};
    return true;
}

static bool parse_fixed(const char *s, icm__prim *out)
{
    int32_t l;
    if (strncmp(s, "fixed[", 6) != 0 || (s = number(s + 6, &l)) == NULL || strcmp(s, "]") != 0 ||
        l < 1)
        return false;
    *out = (icm__prim){ICM__TYPE_FIXED, 0, 0, l};
    return true;
}

icm__prim icm__prim_parse(const char *s)
{
    icm__prim out = {ICM__TYPE_OTHER, 0, 0, 0};
    for (size_t k = 0; k < ICM__ARRAY_LEN(SIMPLE_NAMES); k++) {
        if (SIMPLE_NAMES[k] != NULL && strcmp(s, SIMPLE_NAMES[k]) == 0) {
            out.kind = (icm__type_kind)k;
            return out;
        }
    }
    /* v3 geospatial types may name their CRS (and the geography's edge algorithm). */
    if (strncmp(s, "geometry(", 9) == 0 && s[strlen(s) - 1] == ')')
        out.kind = ICM__TYPE_GEOMETRY;
    else if (strncmp(s, "geography(", 10) == 0 && s[strlen(s) - 1] == ')')
        out.kind = ICM__TYPE_GEOGRAPHY;
    else if (!parse_decimal(s, &out))
        (void)parse_fixed(s, &out);
    return out;
}

const char *icm__prim_format(const icm__prim *p, char *buf, size_t size)
{
    if (p->kind == ICM__TYPE_DECIMAL)
        snprintf(buf, size, "decimal(%d, %d)", (int)p->precision, (int)p->scale);
    else if (p->kind == ICM__TYPE_FIXED)
        snprintf(buf, size, "fixed[%d]", (int)p->length);
    else if ((size_t)p->kind < ICM__ARRAY_LEN(SIMPLE_NAMES) && SIMPLE_NAMES[p->kind] != NULL)
        snprintf(buf, size, "%s", SIMPLE_NAMES[p->kind]);
    else
        snprintf(buf, size, "?");
    return buf;
}

/* ---- schema JSON ------------------------------------------------------------------------- */

typedef struct parse_ctx {
    const char *what;
    icm__buf path; /* "a.b.element" of the field being parsed */
} parse_ctx;

static int invalid(parse_ctx *cx, const char *fmt, ...) ICM__PRINTF(2, 3);

static int invalid(parse_ctx *cx, const char *fmt, ...)
{
    if (cx->path.oom)
        return icm__error_oom();
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, cx->what, "schema field '%s': %s",
                          cx->path.len ? cx->path.data : "(root)", msg);
}

static int parse_type(parse_ctx *cx, json_t *json, int depth, icm__type *out);

static int get_int32(parse_ctx *cx, json_t *obj, const char *key, int32_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
        json_integer_value(v) > INT32_MAX)
        return invalid(cx, "'%s' is missing or not a 32-bit integer", key);
    *out = (int32_t)json_integer_value(v);
    return 0;
}

static int get_bool(parse_ctx *cx, json_t *obj, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_boolean(v))
        return invalid(cx, "'%s' is missing or not a boolean", key);
    *out = json_is_true(v);
    return 0;
}

/* One field: its id, required flag and type are under the given keys of `obj`. */
static int parse_field(parse_ctx *cx, json_t *obj, const char *name, const char *id_key,
                       const char *required_key, const char *type_key, int depth,
                       icm__schema_field *f)
{
    size_t mark = cx->path.len;
    if (mark != 0)
        icm__buf_putc(&cx->path, '.');
    icm__buf_puts(&cx->path, name);
    int rc = get_int32(cx, obj, id_key, &f->id);
    f->name = name;
    if (rc == 0 && required_key != NULL)
        rc = get_bool(cx, obj, required_key, &f->required);
    else if (required_key == NULL)
        f->required = true; /* a map key */
    icm__type *type = NULL;
    if (rc == 0) {
        type = icm__calloc(1, sizeof *type);
        rc = type != NULL ? parse_type(cx, json_object_get(obj, type_key), depth + 1, type)
                          : ICM_ENOMEM;
    }
    f->type = type;
    if (obj != NULL && strcmp(type_key, "type") == 0) {
        f->initial_default = json_object_get(obj, "initial-default");
        f->write_default = json_object_get(obj, "write-default");
    }
    cx->path.len = mark;
    if (cx->path.data != NULL)
        cx->path.data[mark] = '\0';
    return rc;
}

static int parse_struct(parse_ctx *cx, json_t *json, int depth, icm__type *out)
{
    json_t *fields = json_object_get(json, "fields");
    if (!json_is_array(fields))
        return invalid(cx, "a struct without a '%s' array", "fields");
    out->kind = ICM__TYPE_STRUCT;
    out->nfields = json_array_size(fields);
    if (out->nfields == 0)
        return 0;
    out->fields = icm__calloc(out->nfields, sizeof *out->fields);
    if (out->fields == NULL) {
        out->nfields = 0;
        return ICM_ENOMEM;
    }
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        if (name == NULL) {
            char where[32];
            snprintf(where, sizeof where, "fields[%zu]", i);
            return invalid(cx, "%s has no string 'name'", where);
        }
        int rc = parse_field(cx, f, name, "id", "required", "type", depth, &out->fields[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int parse_type(parse_ctx *cx, json_t *json, int depth, icm__type *out)
{
    if (depth > ICM__SCHEMA_MAX_DEPTH)
        return invalid(cx, "nested deeper than %d levels", ICM__SCHEMA_MAX_DEPTH);
    if (json_is_string(json)) {
        out->text = json_string_value(json);
        out->prim = icm__prim_parse(out->text);
        out->kind = out->prim.kind;
        return 0;
    }
    const char *kind = json_string_value(json_object_get(json, "type"));
    if (kind == NULL)
        return invalid(cx, "'%s' is neither a type string nor an object with a type", "type");
    if (strcmp(kind, "struct") == 0)
        return parse_struct(cx, json, depth, out);
    bool list = strcmp(kind, "list") == 0;
    if (!list && strcmp(kind, "map") != 0)
        return invalid(cx, "unknown nested type '%s'", kind);
    out->kind = list ? ICM__TYPE_LIST : ICM__TYPE_MAP;
    out->fields = icm__calloc(list ? 1 : 2, sizeof *out->fields);
    if (out->fields == NULL)
        return ICM_ENOMEM;
    out->nfields = list ? 1 : 2;
    if (list)
        return parse_field(cx, json, "element", "element-id", "element-required", "element",
                           depth, &out->fields[0]);
    int rc = parse_field(cx, json, "key", "key-id", NULL, "key", depth, &out->fields[0]);
    if (rc == 0)
        rc = parse_field(cx, json, "value", "value-id", "value-required", "value", depth,
                         &out->fields[1]);
    return rc;
}

static void type_dispose(const icm__type *t)
{
    for (size_t i = 0; i < t->nfields; i++) {
        if (t->fields[i].type != NULL) {
            type_dispose(t->fields[i].type);
            icm__free((void *)t->fields[i].type);
        }
    }
    icm__free(t->fields);
}

void icm__schema_free(icm__schema *schema)
{
    if (schema == NULL)
        return;
    type_dispose(&schema->root);
    json_decref(schema->json);
    icm__free(schema);
}

int icm__schema_parse(json_t *json, const char *what, icm__schema **out)
{
    *out = NULL;
    icm__schema *s = icm__calloc(1, sizeof *s);
    if (s == NULL)
        return ICM_ENOMEM;
    s->json = json_incref(json);
    parse_ctx cx = {what, ICM__BUF_INIT};
    int rc = 0;
    const char *kind = json_string_value(json_object_get(json, "type"));
    if (!json_is_object(json) || (kind != NULL && strcmp(kind, "struct") != 0))
        rc = invalid(&cx, "a schema must be a %s object", "struct");
    if (rc == 0)
        rc = parse_struct(&cx, json, 0, &s->root);
    json_t *id = json_object_get(json, "schema-id");
    if (rc == 0 && id != NULL && !json_is_null(id))
        rc = get_int32(&cx, json, "schema-id", &s->schema_id);
    icm__buf_dispose(&cx.path);
    if (rc != 0) {
        icm__schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int icm__schema_parse_text(const char *text, size_t len, const char *what, icm__schema **out)
{
    *out = NULL;
    json_t *json = NULL;
    int rc = icm__json_parse(text, len, what, &json);
    if (rc != 0)
        return rc;
    rc = icm__schema_parse(json, what, out);
    json_decref(json);
    return rc;
}

/* ---- walking ----------------------------------------------------------------------------- */

/* Returns 0 to go on, ICM__WALK_STOP, or a visitor's error. */
static int walk(const icm__type *t, int depth, icm__schema_visit_fn visit, void *payload)
{
    for (size_t i = 0; i < t->nfields; i++) {
        const icm__schema_field *f = &t->fields[i];
        int rc = visit(f, depth, payload);
        if (rc == ICM__WALK_CONTINUE)
            rc = walk(f->type, depth + 1, visit, payload);
        else if (rc == ICM__WALK_SKIP)
            rc = 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icm__schema_walk(const icm__schema *schema, icm__schema_visit_fn visit, void *payload)
{
    int rc = walk(&schema->root, 0, visit, payload);
    return rc == ICM__WALK_STOP ? 0 : rc;
}

typedef struct find_ctx {
    int32_t id;
    const icm__schema_field *hit;
} find_ctx;

static int find_visit(const icm__schema_field *f, int depth, void *payload)
{
    (void)depth;
    find_ctx *fc = payload;
    if (f->id == fc->id) {
        fc->hit = f;
        return ICM__WALK_STOP;
    }
    return f->type->kind == ICM__TYPE_STRUCT ? ICM__WALK_CONTINUE : ICM__WALK_SKIP;
}

const icm__schema_field *icm__schema_find_struct_field(const icm__schema *schema, int32_t id)
{
    find_ctx fc = {id, NULL};
    (void)icm__schema_walk(schema, find_visit, &fc);
    return fc.hit;
}
