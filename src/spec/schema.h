/*
 * spec/schema.h: Iceberg schemas and types (internal). One parser for the type strings and the
 * schema JSON, and one walker; everything that reads a table schema goes through them.
 *
 * Source: Iceberg spec "Schemas and Data Types" (primitive types, nested types, field ids,
 * required, initial-default / write-default) and Appendix C "JSON serialization" (a primitive
 * type is a string; struct, list and map are objects). Type strings follow Java's
 * Types.fromPrimitiveString: the names in lower case, `decimal(P, S)` and `fixed[L]` with any
 * white space around the numbers, which are decimal digits only.
 *
 * Not installed.
 */
#ifndef ICM_SPEC_SCHEMA_H
#define ICM_SPEC_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* BOOLEAN .. BINARY are the types with one fixed Parquet and Avro form (users may test
 * `kind <= ICM__TYPE_BINARY`); the v3 types without one follow, then OTHER, then the nested
 * types. */
typedef enum icm__type_kind {
    ICM__TYPE_BOOLEAN,
    ICM__TYPE_INT,
    ICM__TYPE_LONG,
    ICM__TYPE_FLOAT,
    ICM__TYPE_DOUBLE,
    ICM__TYPE_DECIMAL, /* precision 1..38, scale 0..precision */
    ICM__TYPE_DATE,
    ICM__TYPE_TIME,
    ICM__TYPE_TIMESTAMP,
    ICM__TYPE_TIMESTAMPTZ,
    ICM__TYPE_TIMESTAMP_NS,
    ICM__TYPE_TIMESTAMPTZ_NS,
    ICM__TYPE_STRING,
    ICM__TYPE_UUID,
    ICM__TYPE_FIXED,   /* length >= 1 */
    ICM__TYPE_BINARY,
    ICM__TYPE_UNKNOWN, /* v3 `unknown` (always null) */
    ICM__TYPE_VARIANT, /* v3 */
    ICM__TYPE_GEOMETRY,  /* v3, `geometry` or `geometry(...)`: parameters kept in the text */
    ICM__TYPE_GEOGRAPHY, /* v3, `geography` or `geography(...)` */
    /* A primitive spelling none of the above: a future type, a misspelling, or a decimal /
     * fixed whose numbers are malformed or out of range. Kept (text) so the schema still
     * parses; each user decides what it means for it. */
    ICM__TYPE_OTHER,
    ICM__TYPE_STRUCT,
    ICM__TYPE_LIST,
    ICM__TYPE_MAP
} icm__type_kind;

/* A primitive type. */
typedef struct icm__prim {
    icm__type_kind kind; /* ICM__TYPE_BOOLEAN .. ICM__TYPE_OTHER */
    int32_t precision;   /* decimal */
    int32_t scale;       /* decimal */
    int32_t length;      /* fixed */
} icm__prim;

typedef struct icm__type icm__type;

/* A field: a struct field, or a list's element (name "element"), a map's key ("key") or value
 * ("value"), whose id, required flag and type the nested type carries. */
typedef struct icm__schema_field {
    int32_t id;
    const char *name;     /* in the schema's JSON (valid as long as the schema) */
    bool required;        /* a map key always */
    const icm__type *type;
    json_t *initial_default; /* borrowed from the schema's JSON; NULL when absent */
    json_t *write_default;
} icm__schema_field;

struct icm__type {
    icm__type_kind kind;
    icm__prim prim;              /* kind <= ICM__TYPE_OTHER */
    const char *text;            /* primitive: the type string as written */
    icm__schema_field *fields;   /* struct: its fields; list: [element]; map: [key, value] */
    size_t nfields;
};

/* A parsed schema: its root struct, its id, and the JSON it was parsed from. */
typedef struct icm__schema {
    icm__type root;   /* ICM__TYPE_STRUCT */
    int32_t schema_id; /* 0 when the JSON has none (Java's default for v1) */
    json_t *json;      /* one reference, held */
} icm__schema;

/* Deepest nesting parse accepts (struct in list in map ... counts each level). */
#define ICM__SCHEMA_MAX_DEPTH 64

/* Parse a primitive type string (see the top of this file). Never fails: a string that is no
 * known spelling gives ICM__TYPE_OTHER. */
icm__prim icm__prim_parse(const char *s);

/* The spec's spelling of a primitive type into buf ("decimal(9, 2)", "fixed[16]", "long");
 * ICM__TYPE_OTHER as "?". Returns buf. */
const char *icm__prim_format(const icm__prim *p, char *buf, size_t size);

/* Parse a schema (a struct object with "fields"; "schema-id" optional) into *out (free with
 * icm__schema_free). Every field needs an integer "id", a string "name", a boolean "required"
 * and a "type"; a list "element-id", "element-required" and "element"; a map "key-id", "key",
 * "value-id", "value-required" and "value" (spec Appendix C). Takes its own reference to
 * `schema`. `what` names the schema in errors ("current schema", a file name); may be NULL.
 * Returns 0; ICM_EINVALID (one line: the field path and what is wrong); ICM_ENOMEM. */
int icm__schema_parse(json_t *schema, const char *what, icm__schema **out);
/* icm__schema_parse on JSON text (not NUL-terminated). */
int icm__schema_parse_text(const char *text, size_t len, const char *what, icm__schema **out);
void icm__schema_free(icm__schema *schema);

/* What a visitor returns: go on into the field's type, skip what is inside it, or stop the
 * walk (icm__schema_walk then returns 0). A negative value stops it and is returned. */
enum { ICM__WALK_CONTINUE = 0, ICM__WALK_SKIP = 1, ICM__WALK_STOP = 2 };
typedef int (*icm__schema_visit_fn)(const icm__schema_field *field, int depth, void *payload);

/* Visit every field of the schema, depth first in the JSON's order: each struct field, list
 * element, map key and map value, before what its type holds. depth is 0 for the root's
 * fields. */
int icm__schema_walk(const icm__schema *schema, icm__schema_visit_fn visit, void *payload);

/* The field with `id` that is reachable from the root through struct fields alone (not inside
 * a list or map), or NULL. A partition or sort source column must be such a field (spec
 * "Partitioning": a source column ... "cannot be contained in a map or list"). The first in
 * walk order when ids repeat. */
const icm__schema_field *icm__schema_find_struct_field(const icm__schema *schema, int32_t id);

#endif /* ICM_SPEC_SCHEMA_H */
