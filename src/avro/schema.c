/*
 * avro/schema.c: Avro schema JSON → compact compiled form (flat node/field/branch arrays), plus
 * lookups used to compile projections (field by Iceberg field-id or name, optional unwrapping),
 * the "flat record" marks that speed up skipping, and the JSON of a subtree as the writer wrote
 * it (for copying partition schemas).
 *
 * Source: Avro 1.11 specification "Schema Declaration"; Iceberg spec "Avro" appendix for
 * field-id / element-id / key-id / value-id attributes.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "avro/avro.h"
#include "spec/metadata_internal.h"

/* Deeper nesting than this is treated as malicious (protects the C stack). */
#define MAX_SCHEMA_DEPTH 64

typedef struct named {
    const char *full;   /* namespace.name */
    const char *json_name;
    uint32_t node;
} named;

typedef struct parser {
    icm__avro_schema *s;
    const char *location;
    named *names;
    size_t n_names, cap_names;
    icm__buf scratch;   /* full names are built here, then interned in `interned` */
    icm__ptrvec interned;
} parser;

static int bad(parser *ps, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, ps->location,
                          "invalid Avro schema: %s", what);
}

/* Reserve `count` consecutive slots at the end of a growable array (*items of *len used,
 * *cap allocated, `elem` bytes each); *first is the first new index. */
static int reserve(parser *ps, void **items, uint32_t *len, uint32_t *cap, size_t elem,
                   uint32_t count, const char *what, uint32_t *first)
{
    if (count > UINT32_MAX - *len)
        return bad(ps, what);
    uint32_t need = *len + count;
    if (need > *cap) {
        uint32_t c = *cap ? *cap : 16;
        while (c < need)
            c = c > UINT32_MAX / 2 ? need : c * 2;
        void *grown = icm__reallocarray(*items, c, elem);
        if (grown == NULL)
            return ICM_ENOMEM;
        *items = grown;
        *cap = c;
    }
    *first = *len;
    *len = need;
    return 0;
}

static int new_node(parser *ps, icm__avro_type type, uint32_t *out)
{
    icm__avro_schema *s = ps->s;
    void *items = s->nodes;
    int rc = reserve(ps, &items, &s->n_nodes, &s->cap_nodes, sizeof *s->nodes, 1,
                     "too many types", out);
    s->nodes = items;
    if (rc != 0)
        return rc;
    icm__avro_node *n = &s->nodes[*out];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->elem_id = ICM__AVRO_NO_ID;
    return 0;
}

static int reserve_fields(parser *ps, uint32_t count, uint32_t *first)
{
    icm__avro_schema *s = ps->s;
    void *items = s->fields;
    int rc = reserve(ps, &items, &s->n_fields, &s->cap_fields, sizeof *s->fields, count,
                     "too many fields", first);
    s->fields = items;
    return rc;
}

static int reserve_branches(parser *ps, uint32_t count, uint32_t *first)
{
    icm__avro_schema *s = ps->s;
    void *items = s->branches;
    int rc = reserve(ps, &items, &s->n_branches, &s->cap_branches, sizeof *s->branches, count,
                     "too many union branches", first);
    s->branches = items;
    return rc;
}

static const struct {
    const char *name;
    icm__avro_type type;
} PRIMITIVES[] = {
    {"null", ICM__AVRO_NULL},     {"boolean", ICM__AVRO_BOOLEAN}, {"int", ICM__AVRO_INT},
    {"long", ICM__AVRO_LONG},     {"float", ICM__AVRO_FLOAT},     {"double", ICM__AVRO_DOUBLE},
    {"bytes", ICM__AVRO_BYTES},   {"string", ICM__AVRO_STRING},
};

static int primitive_type(const char *name)
{
    for (size_t i = 0; i < ICM__ARRAY_LEN(PRIMITIVES); i++)
        if (strcmp(PRIMITIVES[i].name, name) == 0)
            return (int)PRIMITIVES[i].type;
    return -1;
}

static int find_named(const parser *ps, const char *name, const char *ns, uint32_t *out)
{
    /* Exact full name first, then namespace-qualified, then the short name. */
    for (size_t i = 0; i < ps->n_names; i++) {
        if (strcmp(ps->names[i].full, name) == 0) {
            *out = ps->names[i].node;
            return 0;
        }
    }
    if (ns != NULL && ns[0] != '\0') {
        size_t nl = strlen(ns);
        for (size_t i = 0; i < ps->n_names; i++) {
            const char *f = ps->names[i].full;
            if (strncmp(f, ns, nl) == 0 && f[nl] == '.' && strcmp(f + nl + 1, name) == 0) {
                *out = ps->names[i].node;
                return 0;
            }
        }
    }
    for (size_t i = 0; i < ps->n_names; i++) {
        if (strcmp(ps->names[i].json_name, name) == 0) {
            *out = ps->names[i].node;
            return 0;
        }
    }
    return -1;
}

/* Register a named type; the full name string is interned for the schema's lifetime. */
static int add_named(parser *ps, json_t *obj, uint32_t node, const char **ns_io)
{
    json_t *jn = json_object_get(obj, "name");
    if (!json_is_string(jn))
        return bad(ps, "named type without a name");
    const char *name = json_string_value(jn);
    json_t *jns = json_object_get(obj, "namespace");
    const char *ns = json_is_string(jns) ? json_string_value(jns) : *ns_io;
    if (strchr(name, '.') != NULL)
        ns = NULL;
    icm__buf_clear(&ps->scratch);
    if (ns != NULL && ns[0] != '\0') {
        icm__buf_puts(&ps->scratch, ns);
        icm__buf_putc(&ps->scratch, '.');
    }
    icm__buf_puts(&ps->scratch, name);
    if (ps->scratch.oom)
        return ICM_ENOMEM;
    char *full = icm__strdup(ps->scratch.data);
    if (full == NULL)
        return ICM_ENOMEM;
    if (icm__ptrvec_push(&ps->interned, full) < 0) {
        icm__free(full);
        return ICM_ENOMEM;
    }
    if (ps->n_names == ps->cap_names) {
        size_t cap = ps->cap_names ? ps->cap_names * 2 : 16;
        named *n = icm__reallocarray(ps->names, cap, sizeof *n);
        if (n == NULL)
            return ICM_ENOMEM;
        ps->names = n;
        ps->cap_names = cap;
    }
    ps->names[ps->n_names++] = (named){full, name, node};
    ps->s->nodes[node].name = full;
    if (jns != NULL && json_is_string(jns))
        *ns_io = json_string_value(jns);
    return 0;
}

static int32_t json_id(json_t *v)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i >= INT32_MIN + 1 && i <= INT32_MAX)
            return (int32_t)i;
    } else if (json_is_string(v)) {
        /* Some writers quote ids. */
        char *end;
        errno = 0;
        long i = strtol(json_string_value(v), &end, 10);
        if (errno == 0 && *end == '\0' && end != json_string_value(v) && i > INT32_MIN &&
            i <= INT32_MAX)
            return (int32_t)i;
    }
    return ICM__AVRO_NO_ID;
}

static int parse_type(parser *ps, json_t *j, const char *ns, int depth, uint32_t *out);

static int parse_record(parser *ps, json_t *obj, const char *ns, int depth, uint32_t *out)
{
    json_t *fields = json_object_get(obj, "fields");
    if (!json_is_array(fields))
        return bad(ps, "record without a fields array");
    uint32_t node = 0;
    int rc = new_node(ps, ICM__AVRO_RECORD, &node);
    if (rc < 0)
        return rc;
    /* Register before the fields so recursive references resolve. */
    rc = add_named(ps, obj, node, &ns);
    if (rc < 0)
        return rc;
    size_t nf = json_array_size(fields);
    if (nf > UINT32_MAX / 2)
        return bad(ps, "too many fields");
    uint32_t first = 0;
    rc = reserve_fields(ps, (uint32_t)nf, &first);
    if (rc < 0)
        return rc;
    ps->s->nodes[node].n = (uint32_t)nf;
    ps->s->nodes[node].first = first;
    for (size_t i = 0; i < nf; i++) {
        json_t *f = json_array_get(fields, i);
        json_t *fname = json_object_get(f, "name");
        if (!json_is_string(fname))
            return bad(ps, "record field without a name");
        uint32_t t = 0;
        rc = parse_type(ps, json_object_get(f, "type"), ns, depth + 1, &t);
        if (rc < 0)
            return rc;
        icm__avro_field *fd = &ps->s->fields[first + i];
        fd->name = json_string_value(fname);
        fd->field_id = json_id(json_object_get(f, "field-id"));
        fd->type = t;
    }
    *out = node;
    return 0;
}

static int parse_object(parser *ps, json_t *obj, const char *ns, int depth, uint32_t *out)
{
    json_t *jt = json_object_get(obj, "type");
    if (json_is_object(jt) || json_is_array(jt))
        return parse_type(ps, jt, ns, depth + 1, out); /* {"type": {...}} wrapper */
    if (!json_is_string(jt))
        return bad(ps, "type object without a type");
    const char *t = json_string_value(jt);
    json_t *lt = json_object_get(obj, "logicalType");
    const char *logical = json_is_string(lt) ? json_string_value(lt) : NULL;
    int prim = primitive_type(t);
    int rc;
    uint32_t node = 0;
    if (prim >= 0) {
        rc = new_node(ps, (icm__avro_type)prim, &node);
    } else if (strcmp(t, "record") == 0 || strcmp(t, "error") == 0) {
        rc = parse_record(ps, obj, ns, depth, &node);
    } else if (strcmp(t, "array") == 0) {
        uint32_t items = 0;
        rc = parse_type(ps, json_object_get(obj, "items"), ns, depth + 1, &items);
        if (rc == 0)
            rc = new_node(ps, ICM__AVRO_ARRAY, &node);
        if (rc == 0) {
            ps->s->nodes[node].child = items;
            ps->s->nodes[node].elem_id = json_id(json_object_get(obj, "element-id"));
        }
    } else if (strcmp(t, "map") == 0) {
        uint32_t values = 0;
        rc = parse_type(ps, json_object_get(obj, "values"), ns, depth + 1, &values);
        if (rc == 0)
            rc = new_node(ps, ICM__AVRO_MAP, &node);
        if (rc == 0) {
            ps->s->nodes[node].child = values;
            ps->s->nodes[node].elem_id = json_id(json_object_get(obj, "key-id"));
        }
    } else if (strcmp(t, "fixed") == 0) {
        json_t *size = json_object_get(obj, "size");
        if (!json_is_integer(size) || json_integer_value(size) < 0 ||
            json_integer_value(size) > INT32_MAX)
            return bad(ps, "fixed without a valid size");
        rc = new_node(ps, ICM__AVRO_FIXED, &node);
        if (rc == 0) {
            ps->s->nodes[node].n = (uint32_t)json_integer_value(size);
            rc = add_named(ps, obj, node, &ns);
        }
    } else if (strcmp(t, "enum") == 0) {
        json_t *sym = json_object_get(obj, "symbols");
        if (!json_is_array(sym) || json_array_size(sym) == 0 || json_array_size(sym) > INT32_MAX)
            return bad(ps, "enum without symbols");
        rc = new_node(ps, ICM__AVRO_ENUM, &node);
        if (rc == 0) {
            ps->s->nodes[node].n = (uint32_t)json_array_size(sym);
            rc = add_named(ps, obj, node, &ns);
        }
    } else {
        uint32_t ref = 0;
        if (find_named(ps, t, ns, &ref) == 0) {
            *out = ref;
            return 0;
        }
        return bad(ps, "unknown type name");
    }
    if (rc < 0)
        return rc;
    if (logical != NULL && ps->s->nodes[node].logical == NULL)
        ps->s->nodes[node].logical = logical;
    if (ps->s->nodes[node].json == NULL)
        ps->s->nodes[node].json = obj;
    *out = node;
    return 0;
}

static int parse_union(parser *ps, json_t *arr, const char *ns, int depth, uint32_t *out)
{
    size_t nb = json_array_size(arr);
    if (nb == 0 || nb > 65536)
        return bad(ps, "union with no branches or too many branches");
    uint32_t tmp[64];
    uint32_t *types = tmp;
    if (nb > ICM__ARRAY_LEN(tmp)) {
        types = icm__reallocarray(NULL, nb, sizeof *types);
        if (types == NULL)
            return ICM_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < nb && rc == 0; i++) {
        json_t *b = json_array_get(arr, i);
        if (json_is_array(b))
            rc = bad(ps, "union directly inside a union");
        else
            rc = parse_type(ps, b, ns, depth + 1, &types[i]);
    }
    uint32_t node = 0, first = 0;
    if (rc == 0)
        rc = reserve_branches(ps, (uint32_t)nb, &first);
    if (rc == 0)
        rc = new_node(ps, ICM__AVRO_UNION, &node);
    if (rc == 0) {
        memcpy(&ps->s->branches[first], types, nb * sizeof *types);
        ps->s->nodes[node].json = arr;
        ps->s->nodes[node].n = (uint32_t)nb;
        ps->s->nodes[node].first = first;
        *out = node;
    }
    if (types != tmp)
        icm__free(types);
    return rc;
}

static int parse_type(parser *ps, json_t *j, const char *ns, int depth, uint32_t *out)
{
    if (depth > MAX_SCHEMA_DEPTH)
        return bad(ps, "nested too deeply");
    if (json_is_string(j)) {
        const char *t = json_string_value(j);
        int prim = primitive_type(t);
        if (prim >= 0) {
            int rc = new_node(ps, (icm__avro_type)prim, out);
            if (rc == 0)
                ps->s->nodes[*out].json = j;
            return rc;
        }
        if (find_named(ps, t, ns, out) == 0)
            return 0;
        return bad(ps, "unknown type name");
    }
    if (json_is_array(j))
        return parse_union(ps, j, ns, depth, out);
    if (json_is_object(j))
        return parse_object(ps, j, ns, depth, out);
    return bad(ps, "type is neither a name, a union nor an object");
}

static bool primitive_node(const icm__avro_node *n)
{
    return n->type <= ICM__AVRO_ENUM && n->type != ICM__AVRO_RECORD;
}

/* Records of primitives (metrics map entries, field summaries without unions) get a
 * non-recursive skip path: that is where a manifest decoder spends its time. */
static bool varint_node(const icm__avro_node *n)
{
    return n->type == ICM__AVRO_INT || n->type == ICM__AVRO_LONG || n->type == ICM__AVRO_ENUM;
}

/* Zero-size types need no bytes per value, so loops over them cannot be bounded by the input;
 * skipping knows to jump over them instead. Records are marked by a fixed point (a recursive
 * record always goes through a union, which takes a byte, so it is never zero-size). */
static void mark_zero_size(icm__avro_schema *s)
{
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        icm__avro_node *n = &s->nodes[i];
        n->zero_size = n->type == ICM__AVRO_NULL || (n->type == ICM__AVRO_FIXED && n->n == 0);
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < s->n_nodes; i++) {
            icm__avro_node *n = &s->nodes[i];
            if (n->type != ICM__AVRO_RECORD || n->zero_size)
                continue;
            bool zero = true;
            for (uint32_t f = 0; f < n->n && zero; f++)
                zero = s->nodes[s->fields[n->first + f].type].zero_size;
            if (zero) {
                n->zero_size = true;
                changed = true;
            }
        }
    }
}

static void mark_flat_records(icm__avro_schema *s)
{
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        icm__avro_node *n = &s->nodes[i];
        if (varint_node(n))
            n->varints = 1;
        if (n->type != ICM__AVRO_RECORD)
            continue;
        bool flat = true, all_varints = n->n > 0;
        for (uint32_t f = 0; f < n->n && flat; f++) {
            const icm__avro_node *t = &s->nodes[s->fields[n->first + f].type];
            flat = primitive_node(t);
            all_varints = all_varints && varint_node(t);
        }
        n->flat = flat;
        /* Maps of int to long (Iceberg metrics) are arrays of such records. */
        n->varints = flat && all_varints ? n->n : 0;
    }
}

static void free_interned(void *p)
{
    icm__free(p);
}

void icm__avro_schema_free(icm__avro_schema *s)
{
    if (s == NULL)
        return;
    icm__free(s->nodes);
    icm__free(s->fields);
    icm__free(s->branches);
    json_decref((json_t *)s->json);
    /* Interned full names were stashed after the struct (see parse). */
    icm__ptrvec *v = (icm__ptrvec *)(s + 1);
    icm__ptrvec_dispose(v, free_interned);
    icm__free(s);
}

int icm__avro_schema_parse(icm__avro_schema **out, const char *json, size_t len,
                           const char *location)
{
    *out = NULL;
    /* Our strict reader, not json_loadb(): jansson's loader crashes when an allocation fails
     * mid-document (see spec/json_parse.c), and OOM must stay ICM_ENOMEM, not "invalid". */
    json_t *root = NULL;
    int prc = icm__json_parse(json, len, location, &root);
    if (prc < 0)
        return prc; /* "not valid JSON: ..." naming the file, or ICM_ENOMEM */
    /* The ptrvec of interned names lives right after the schema struct. */
    icm__avro_schema *s = icm__calloc(1, sizeof *s + sizeof(icm__ptrvec));
    if (s == NULL) {
        json_decref(root);
        return ICM_ENOMEM;
    }
    s->json = root;
    parser ps = {.s = s, .location = location, .scratch = ICM__BUF_INIT,
                 .interned = ICM__PTRVEC_INIT};
    int rc = parse_type(&ps, root, NULL, 0, &s->root);
    *(icm__ptrvec *)(s + 1) = ps.interned;
    if (rc == 0) {
        mark_flat_records(s);
        mark_zero_size(s);
    }
    icm__free(ps.names);
    icm__buf_dispose(&ps.scratch);
    if (rc < 0) {
        icm__avro_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int icm__avro_record_find(const icm__avro_schema *s, uint32_t rec, int32_t field_id,
                          const char *name)
{
    const icm__avro_node *r = &s->nodes[rec];
    if (r->type != ICM__AVRO_RECORD)
        return -1;
    bool any_ids = false;
    for (uint32_t i = 0; i < r->n; i++) {
        const icm__avro_field *f = &s->fields[r->first + i];
        if (f->field_id != ICM__AVRO_NO_ID)
            any_ids = true;
        if (field_id != ICM__AVRO_NO_ID && f->field_id == field_id)
            return (int)i;
    }
    /* Name fallback only for fields without ids (a schema with ids but not this one means the
     * field is absent, even if a differently numbered field shares the name). */
    if (name == NULL)
        return -1;
    for (uint32_t i = 0; i < r->n; i++) {
        const icm__avro_field *f = &s->fields[r->first + i];
        if ((!any_ids || f->field_id == ICM__AVRO_NO_ID) && strcmp(f->name, name) == 0)
            return (int)i;
    }
    return -1;
}

uint32_t icm__avro_unwrap_optional(const icm__avro_schema *s, uint32_t node, int *null_branch)
{
    const icm__avro_node *n = &s->nodes[node];
    *null_branch = -1;
    if (n->type != ICM__AVRO_UNION || n->n != 2)
        return node;
    uint32_t b0 = s->branches[n->first], b1 = s->branches[n->first + 1];
    if (s->nodes[b0].type == ICM__AVRO_NULL && s->nodes[b1].type != ICM__AVRO_NULL) {
        *null_branch = 0;
        return b1;
    }
    if (s->nodes[b1].type == ICM__AVRO_NULL && s->nodes[b0].type != ICM__AVRO_NULL) {
        *null_branch = 1;
        return b0;
    }
    return node;
}

/* ---- re-serialisation ---- */

int icm__avro_schema_to_json(const icm__avro_schema *s, uint32_t node, icm__buf *out)
{
    /* The definition's own JSON is dumped, so attributes the compiled form drops (decimal
     * precision/scale, docs, defaults) survive a copy exactly. */
    const json_t *j = (const json_t *)s->nodes[node].json;
    if (j == NULL)
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, NULL,
                              "schema node has no JSON definition");
    return icm__json_write(out, j, false);
}
