/*
 * fuzz/fuzz_schema.c: the Iceberg schema parser and walker (src/spec/schema.c) on arbitrary
 * bytes, as a schema or as a metadata document whose "schemas" (or v1 "schema") it parses.
 *
 * Whatever parses must hold together: every field has a type; a primitive keeps its spelling,
 * which parses again to the same type, and a known type's canonical spelling (prim_format)
 * parses back to it; a list has one field and a map two, the key required; the struct-only
 * lookup finds, for every field the walk reaches through structs alone, a field with its id;
 * a walk stopped at any field stops there. Whatever does not parse fails with ICM_EINVALID (or
 * ICM_ENOMEM) and hands nothing out. The input as one type string must also parse to a kind
 * whose canonical spelling round-trips. Seeds: the checked-in corpus plus every fixture
 * metadata file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "spec/metadata_internal.h"
#include "spec/schema.h"

const char *const icm_fuzz_seed_suffixes[] = {".metadata.json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_prim(const icm__prim *p, const char *text)
{
    icm__prim again = icm__prim_parse(text);
    if (memcmp(&again, p, sizeof again) != 0 || p->kind > ICM__TYPE_OTHER)
        abort();
    if (p->kind == ICM__TYPE_OTHER || p->kind == ICM__TYPE_GEOMETRY ||
        p->kind == ICM__TYPE_GEOGRAPHY)
        return; /* kept as written */
    char buf[64];
    icm__prim canonical = icm__prim_parse(icm__prim_format(p, buf, sizeof buf));
    if (memcmp(&canonical, p, sizeof canonical) != 0)
        abort();
    if ((p->kind == ICM__TYPE_DECIMAL &&
         (p->precision < 1 || p->precision > 38 || p->scale < 0 || p->scale > p->precision)) ||
        (p->kind == ICM__TYPE_FIXED && p->length < 1))
        abort();
}

typedef struct walk_state {
    const icm__schema *schema;
    size_t visited, stop_at;
} walk_state;

/* Checks each field; `struct_chain` is whether only structs lead to it. */
static void check_type(const icm__schema *s, const icm__type *t, bool struct_chain, int depth)
{
    if (depth > ICM__SCHEMA_MAX_DEPTH + 1)
        abort();
    if (t->kind == ICM__TYPE_LIST && t->nfields != 1)
        abort();
    if (t->kind == ICM__TYPE_MAP && (t->nfields != 2 || !t->fields[0].required))
        abort();
    if (t->kind <= ICM__TYPE_OTHER) {
        if (t->text == NULL || t->nfields != 0)
            abort();
        check_prim(&t->prim, t->text);
        return;
    }
    for (size_t i = 0; i < t->nfields; i++) {
        const icm__schema_field *f = &t->fields[i];
        if (f->type == NULL || f->name == NULL)
            abort();
        if (struct_chain) {
            const icm__schema_field *hit = icm__schema_find_struct_field(s, f->id);
            if (hit == NULL || hit->id != f->id)
                abort();
        }
        check_type(s, f->type, struct_chain && t->kind == ICM__TYPE_STRUCT &&
                                   f->type->kind == ICM__TYPE_STRUCT, depth + 1);
    }
}

static int count_visit(const icm__schema_field *f, int depth, void *payload)
{
    (void)f;
    (void)depth;
    walk_state *w = payload;
    return w->visited++ == w->stop_at ? ICM__WALK_STOP : ICM__WALK_CONTINUE;
}

static void check_schema(json_t *json)
{
    icm__schema *s = NULL;
    int rc = icm__schema_parse(json, "fuzz", &s);
    if (rc != 0) {
        if (s != NULL || (rc != ICM_EINVALID && rc != ICM_ENOMEM))
            abort();
        return;
    }
    if (s->root.kind != ICM__TYPE_STRUCT)
        abort();
    for (size_t i = 0; i < s->root.nfields; i++) {
        const icm__schema_field *f = &s->root.fields[i];
        if (icm__schema_find_struct_field(s, f->id) == NULL)
            abort();
    }
    check_type(s, &s->root, true, 0);
    walk_state all = {s, 0, SIZE_MAX};
    if (icm__schema_walk(s, count_visit, &all) != 0)
        abort();
    /* stopping at the k-th field visits exactly k + 1 */
    size_t k = all.visited / 2;
    walk_state part = {s, 0, k};
    if (icm__schema_walk(s, count_visit, &part) != 0 ||
        part.visited != (all.visited == 0 ? 0 : k + 1))
        abort();
    icm__schema_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the bytes as one type string */
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    icm__prim p = icm__prim_parse(text);
    if (strlen(text) == size)
        check_prim(&p, text);
    free(text);

    json_t *doc = NULL;
    if (icm__json_parse((const char *)data, size, "fuzz", &doc) != 0)
        return 0;
    json_t *schemas = json_object_get(doc, "schemas");
    if (json_is_array(schemas) || json_is_object(json_object_get(doc, "schema"))) {
        size_t i;
        json_t *one;
        json_array_foreach(schemas, i, one)
            check_schema(one);
        if (json_is_object(json_object_get(doc, "schema")))
            check_schema(json_object_get(doc, "schema"));
    } else {
        check_schema(doc);
    }
    json_decref(doc);
    return 0;
}
