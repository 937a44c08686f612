/*
 * tests/unit/test_schema.c: the one Iceberg schema/type module (spec/schema.h) against the two
 * parsers and the walker it replaced, and against the spec's grammar.
 *
 *  - Every schema of every metadata file in the shared fixtures (read in place): the new
 *    parser accepts it; every primitive type string in it gets the same answer from the new
 *    parser as from both old ones; for every field id (and ids that are absent), the new
 *    struct-only lookup finds the same field as the manifest writer's old walker.
 *  - Generated type strings (names, numbers with signs, white space, overflow, junk): the new
 *    parser agrees with Java's grammar (Types.fromPrimitiveString, written here as POSIX
 *    regular expressions) on every one; where an old parser answered otherwise the difference
 *    is of a kind listed (now refused, now accepted, the writer's other error code; never
 *    other numbers), tallied, and `DIFFERENCES` pins examples of each with both old answers.
 *  - The walker: order, depth, skip and stop; field paths in parse errors.
 *
 * The OLD RULES below are frozen copies of the code as it was before the module (txn's
 * parse_table_prim, the manifest writer's avro_for_iceberg classification and
 * find_source_type). Do not "fix" them: they are what the new module is compared with.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/metadata.h"
#include "spec/metadata_internal.h"
#include "spec/schema.h"
#include "testutil.h"

/* ==== OLD RULES (frozen) ================================================================== */

/* txn/txn_addfiles_schema.c parse_table_prim, kinds in the order of the old enum (which is
 * the order of icm__type_kind's first 16). */
static const char *const OLD_PRIM_NAMES[] = {
    "boolean", "int",  "long",        "float",        "double",         "decimal",
    "date",    "time", "timestamp",   "timestamptz",  "timestamp_ns",   "timestamptz_ns",
    "string",  "uuid", "fixed",       "binary"};
enum { OLD_P_DECIMAL = 5, OLD_P_FIXED = 14 };

static bool old_txn_parse(const char *s, icm__prim *out)
{
    memset(out, 0, sizeof *out);
    for (size_t k = 0; k < 16; k++) {
        if (k != OLD_P_DECIMAL && k != OLD_P_FIXED && strcmp(s, OLD_PRIM_NAMES[k]) == 0) {
            out->kind = (icm__type_kind)k;
            return true;
        }
    }
    int a = 0, b = 0, used = 0;
    if (sscanf(s, "decimal(%d , %d)%n", &a, &b, &used) == 2 && s[used] == '\0' && a > 0 &&
        b >= 0 && b <= a) {
        *out = (icm__prim){ICM__TYPE_DECIMAL, a, b, 0};
        return true;
    }
    if (sscanf(s, "fixed[%d]%n", &a, &used) == 1 && s[used] == '\0' && a > 0) {
        *out = (icm__prim){ICM__TYPE_FIXED, 0, 0, a};
        return true;
    }
    return false;
}

/* manifest/writer.c avro_for_iceberg, as a classification: the type it wrote, or which error. */
typedef enum { W_OK, W_INVALID_DECIMAL, W_UNSUPPORTED } w_outcome;

static w_outcome old_writer_parse(const char *t, icm__prim *out)
{
    memset(out, 0, sizeof *out);
    static const struct { const char *name; icm__type_kind kind; } simple[] = {
        {"boolean", ICM__TYPE_BOOLEAN}, {"int", ICM__TYPE_INT}, {"long", ICM__TYPE_LONG},
        {"float", ICM__TYPE_FLOAT}, {"double", ICM__TYPE_DOUBLE}, {"string", ICM__TYPE_STRING},
        {"binary", ICM__TYPE_BINARY}, {"date", ICM__TYPE_DATE}, {"time", ICM__TYPE_TIME},
        {"timestamp", ICM__TYPE_TIMESTAMP}, {"timestamptz", ICM__TYPE_TIMESTAMPTZ},
        {"timestamp_ns", ICM__TYPE_TIMESTAMP_NS}, {"timestamptz_ns", ICM__TYPE_TIMESTAMPTZ_NS},
        {"uuid", ICM__TYPE_UUID}};
    for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++) {
        if (strcmp(t, simple[k].name) == 0) {
            out->kind = simple[k].kind;
            return W_OK;
        }
    }
    int p, s, l;
    if (sscanf(t, "fixed[%d]", &l) == 1 && l > 0) {
        *out = (icm__prim){ICM__TYPE_FIXED, 0, 0, l};
        return W_OK;
    }
    if (sscanf(t, "decimal(%d,%d)", &p, &s) == 2 || sscanf(t, "decimal(%d, %d)", &p, &s) == 2) {
        if (p < 1 || p > 38 || s < 0 || s > p)
            return W_INVALID_DECIMAL;
        *out = (icm__prim){ICM__TYPE_DECIMAL, p, s, 0};
        return W_OK;
    }
    return W_UNSUPPORTED;
}

/* manifest/writer.c find_source_type. */
static json_t *old_find_source_type(json_t *fields, json_int_t id, int depth)
{
    if (!json_is_array(fields) || depth > 32)
        return NULL;
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        json_t *fid = json_object_get(f, "id");
        json_t *type = json_object_get(f, "type");
        if (json_is_integer(fid) && json_integer_value(fid) == id)
            return type;
        if (json_is_object(type)) {
            json_t *hit = old_find_source_type(json_object_get(type, "fields"), id, depth + 1);
            if (hit != NULL)
                return hit;
        }
    }
    return NULL;
}

/* ==== the new module's answers in the old rules' terms ==================================== */

/* What txn now accepts as a checkable table type (txn_addfiles_schema.c checkable()). */
static bool new_txn_parse(const char *s, icm__prim *out)
{
    *out = icm__prim_parse(s);
    return out->kind <= ICM__TYPE_BINARY;
}

/* What the writer now does (writer.c avro_for_iceberg). */
static w_outcome new_writer_parse(const char *s, icm__prim *out)
{
    *out = icm__prim_parse(s);
    if (out->kind <= ICM__TYPE_BINARY)
        return W_OK;
    if (out->kind == ICM__TYPE_OTHER && strncmp(s, "decimal(", 8) == 0)
        return W_INVALID_DECIMAL;
    return W_UNSUPPORTED;
}

static bool prim_equal(const icm__prim *a, const icm__prim *b)
{
    return a->kind == b->kind && a->precision == b->precision && a->scale == b->scale &&
           a->length == b->length;
}

/* ==== the spec's grammar (Java Types.fromPrimitiveString), as regular expressions ========= */

typedef struct grammar {
    regex_t decimal, fixed;
} grammar;

static void grammar_init(grammar *g)
{
    assert_int_equal(regcomp(&g->decimal,
                             "^decimal\\([[:space:]]*([0-9]+)[[:space:]]*,[[:space:]]*([0-9]+)"
                             "[[:space:]]*\\)$",
                             REG_EXTENDED),
                     0);
    assert_int_equal(regcomp(&g->fixed, "^fixed\\[[[:space:]]*([0-9]+)[[:space:]]*\\]$",
                             REG_EXTENDED),
                     0);
}

static void grammar_free(grammar *g)
{
    regfree(&g->decimal);
    regfree(&g->fixed);
}

/* A regex group as a number; -1 when it does not fit an int32. */
static long long group_number(const char *s, const regmatch_t *m)
{
    long long v = 0;
    for (regoff_t i = m->rm_so; i < m->rm_eo; i++) {
        v = v * 10 + (s[i] - '0');
        if (v > INT32_MAX)
            return -1;
    }
    return v;
}

/* The reference answer: the kind (and parameters) the spec's grammar gives, with the spec's
 * ranges (decimal precision 1..38, scale 0..precision; fixed length >= 1). */
static icm__prim reference(const grammar *g, const char *s)
{
    static const struct { const char *name; icm__type_kind kind; } simple[] = {
        {"boolean", ICM__TYPE_BOOLEAN}, {"int", ICM__TYPE_INT}, {"long", ICM__TYPE_LONG},
        {"float", ICM__TYPE_FLOAT}, {"double", ICM__TYPE_DOUBLE}, {"date", ICM__TYPE_DATE},
        {"time", ICM__TYPE_TIME}, {"timestamp", ICM__TYPE_TIMESTAMP},
        {"timestamptz", ICM__TYPE_TIMESTAMPTZ}, {"timestamp_ns", ICM__TYPE_TIMESTAMP_NS},
        {"timestamptz_ns", ICM__TYPE_TIMESTAMPTZ_NS}, {"string", ICM__TYPE_STRING},
        {"uuid", ICM__TYPE_UUID}, {"binary", ICM__TYPE_BINARY}, {"unknown", ICM__TYPE_UNKNOWN},
        {"variant", ICM__TYPE_VARIANT}, {"geometry", ICM__TYPE_GEOMETRY},
        {"geography", ICM__TYPE_GEOGRAPHY}};
    icm__prim out = {ICM__TYPE_OTHER, 0, 0, 0};
    for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++)
        if (strcmp(s, simple[k].name) == 0)
            out.kind = simple[k].kind;
    size_t n = strlen(s);
    if (strncmp(s, "geometry(", 9) == 0 && s[n - 1] == ')')
        out.kind = ICM__TYPE_GEOMETRY;
    if (strncmp(s, "geography(", 10) == 0 && s[n - 1] == ')')
        out.kind = ICM__TYPE_GEOGRAPHY;
    regmatch_t m[3];
    if (regexec(&g->decimal, s, 3, m, 0) == 0) {
        long long p = group_number(s, &m[1]), q = group_number(s, &m[2]);
        if (p >= 1 && p <= 38 && q >= 0 && q <= p)
            out = (icm__prim){ICM__TYPE_DECIMAL, (int32_t)p, (int32_t)q, 0};
    }
    if (regexec(&g->fixed, s, 2, m, 0) == 0) {
        long long l = group_number(s, &m[1]);
        if (l >= 1)
            out = (icm__prim){ICM__TYPE_FIXED, 0, 0, (int32_t)l};
    }
    return out;
}

/* ==== where the old parsers answered otherwise (each checked below) ======================= */

/* old_txn: did the old txn parser accept it; old_writer: the old writer's outcome. The new
 * answer is the grammar's (checked separately). These are examples of each kind of difference
 * (the generated strings are tallied by kind). Why each change is right:
 *  - a sign or digits beyond int32 are no Iceberg spelling (sscanf read them, overflow being
 *    undefined); the old txn accepted them, so add-files compared a file against a type no
 *    other reader would give the column; now refused ("cannot check table type").
 *  - precision above 38: the spec's maximum; old txn accepted it, the writer already refused.
 *  - trailing junk or a missing bracket: the old writer's sscanf stopped early and wrote a
 *    partition schema for a type the table does not have; now refused (invalid decimal /
 *    unsupported), as Java's parser refuses it.
 *  - white space where Java's grammar allows it but sscanf did not (after a number, before
 *    the comma for the writer): the same type, now read as such by both users. */
static const struct difference {
    const char *s;
    bool old_txn;
    w_outcome old_writer;
} DIFFERENCES[] = {
    {"decimal(+9,2)", true, W_OK},
    {"decimal(9,+2)", true, W_OK},
    {"decimal( +9 , 2)", true, W_UNSUPPORTED},
    {"fixed[+16]", true, W_OK},
    {"fixed[ +16]", true, W_OK},
    {"decimal(39,2)", true, W_INVALID_DECIMAL},
    {"decimal(2147483647,2)", true, W_INVALID_DECIMAL},
    {"decimal(9,2 )", false, W_OK},
    {"decimal(9 ,2)", true, W_UNSUPPORTED},
    {"decimal(9 , 2)", true, W_UNSUPPORTED},
    {"decimal( 9 , 2 )", false, W_UNSUPPORTED},
    {"fixed[16 ]", false, W_OK},
    {"fixed[ 16 ]", false, W_OK},
    {"decimal(9,2)x", false, W_OK},
    {"decimal(9,2", false, W_OK},
    {"decimal(9, 2", false, W_OK},
    {"decimal(9,2))", false, W_OK},
    {"fixed[16]x", false, W_OK},
    {"fixed[16", false, W_OK},
    {"fixed[16]]", false, W_OK},
    /* glibc's sscanf wraps 99999999999 to 1215752191: txn read decimal(1215752191, 2) */
    {"decimal(99999999999,2)", true, W_INVALID_DECIMAL},
    {"fixed[99999999999]", true, W_OK},
};

/* How an old parser's answer differs from the new one (the new one being the grammar's). */
enum {
    D_NONE = 0,
    D_NOW_REFUSED = 1,  /* the old parser accepted a spelling outside the grammar or its ranges */
    D_NOW_ACCEPTED = 2, /* the old parser refused a spelling the grammar accepts */
    D_ERROR_CODE = 4,   /* both refuse; the writer now says "invalid decimal" (EINVALID) where
                           it said "not supported" (EUNSUPPORTED), or the other way round */
    D_OTHER_VALUE = 8   /* both accept with different parameters: must never happen */
};

static int classify(bool old_ok, const icm__prim *old_p, bool new_ok, const icm__prim *new_p)
{
    if (old_ok && new_ok)
        return prim_equal(old_p, new_p) ? D_NONE : D_OTHER_VALUE;
    if (old_ok != new_ok)
        return old_ok ? D_NOW_REFUSED : D_NOW_ACCEPTED;
    return D_NONE;
}

/* Compare all answers for one type string: the new parser must give the grammar's answer;
 * returns how each old parser differed (bits above; txn's shifted by 4). */
static int compare_type_string(const grammar *g, const char *s)
{
    icm__prim ref = reference(g, s), np = icm__prim_parse(s);
    if (!prim_equal(&ref, &np))
        print_error("'%s': grammar kind %d (%d,%d,%d), new %d (%d,%d,%d)\n", s, ref.kind,
                    ref.precision, ref.scale, ref.length, np.kind, np.precision, np.scale,
                    np.length);
    assert_true(prim_equal(&ref, &np));

    icm__prim ot, nt, ow, nw;
    bool old_t = old_txn_parse(s, &ot), new_t = new_txn_parse(s, &nt);
    w_outcome old_w = old_writer_parse(s, &ow), new_w = new_writer_parse(s, &nw);
    int dw = classify(old_w == W_OK, &ow, new_w == W_OK, &nw);
    if (dw == D_NONE && old_w != new_w)
        dw = D_ERROR_CODE;
    int dt = classify(old_t, &ot, new_t, &nt);
    if ((dw | dt) & D_OTHER_VALUE)
        print_error("'%s': an old parser read other numbers\n", s);
    assert_false((dw | dt) & D_OTHER_VALUE);
    return dw | dt << 4;
}

/* The listed examples: each differs, with exactly the old answers listed. */
static void check_listed_differences(const grammar *g)
{
    for (size_t i = 0; i < sizeof DIFFERENCES / sizeof DIFFERENCES[0]; i++) {
        const char *s = DIFFERENCES[i].s;
        icm__prim p;
        if (old_txn_parse(s, &p) != DIFFERENCES[i].old_txn ||
            old_writer_parse(s, &p) != DIFFERENCES[i].old_writer)
            print_error("'%s': old txn %d, old writer %d\n", s, old_txn_parse(s, &p),
                        old_writer_parse(s, &p));
        assert_int_not_equal(compare_type_string(g, s), D_NONE);
        assert_int_equal(old_txn_parse(s, &p), DIFFERENCES[i].old_txn);
        assert_int_equal(old_writer_parse(s, &p), DIFFERENCES[i].old_writer);
    }
}

/* ==== fixtures ============================================================================ */

typedef struct fixture_stats {
    const grammar *g;
    size_t files, schemas, fields, type_strings, lookups;
} fixture_stats;

static fixture_stats *g_stats;

static void collect_ids(json_t *type, json_int_t *max_id)
{
    if (!json_is_object(type))
        return;
    static const char *const ids[] = {"element-id", "key-id", "value-id"};
    for (size_t k = 0; k < 3; k++) {
        json_int_t v = json_integer_value(json_object_get(type, ids[k]));
        if (v > *max_id)
            *max_id = v;
    }
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(type, "fields"), i, f) {
        json_int_t v = json_integer_value(json_object_get(f, "id"));
        if (v > *max_id)
            *max_id = v;
        collect_ids(json_object_get(f, "type"), max_id);
    }
    static const char *const kids[] = {"element", "key", "value"};
    for (size_t k = 0; k < 3; k++)
        collect_ids(json_object_get(type, kids[k]), max_id);
}

static int count_field(const icm__schema_field *f, int depth, void *payload)
{
    (void)depth;
    fixture_stats *st = payload;
    st->fields++;
    if (f->type->text != NULL) {
        st->type_strings++;
        /* a real schema's types: no difference from either old parser */
        assert_int_equal(compare_type_string(st->g, f->type->text), D_NONE);
    }
    return ICM__WALK_CONTINUE;
}

static void check_schema(json_t *schema, const char *file)
{
    fixture_stats *st = g_stats;
    icm__schema *s = NULL;
    int rc = icm__schema_parse(schema, file, &s);
    if (rc != 0)
        print_error("%s: %s\n", file, icm_error_last()->message);
    assert_int_equal(rc, 0);
    st->schemas++;
    icmt_ok(icm__schema_walk(s, count_field, st));
    json_int_t max_id = 0;
    collect_ids(schema, &max_id);
    for (json_int_t id = -1; id <= max_id + 2; id++) {
        json_t *old = old_find_source_type(json_object_get(schema, "fields"), id, 0);
        const icm__schema_field *nf = icm__schema_find_struct_field(s, (int32_t)id);
        st->lookups++;
        assert_int_equal(old != NULL, nf != NULL);
        if (old == NULL)
            continue;
        assert_int_equal(nf->id, id);
        if (json_is_string(old))
            assert_ptr_equal(json_string_value(old), nf->type->text); /* the same field */
        else
            assert_null(nf->type->text);
    }
    icm__schema_free(s);
}

static int visit_file(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || n < 14 || strcmp(path + n - 14, ".metadata.json") != 0)
        return 0;
    size_t len = 0;
    char *bytes = icmt_read_file(path, &len);
    assert_non_null(bytes);
    json_t *doc = NULL;
    icm_table_metadata *md = NULL;
    if (icm_table_metadata_parse(&md, bytes, len, path) == 0)
        doc = json_incref(icm__table_metadata_json(md));
    else if (icm__json_parse(bytes, len, path, &doc) != 0)
        doc = NULL; /* neither metadata nor JSON: no schema to read */
    free(bytes);
    if (doc != NULL) {
        g_stats->files++;
        size_t i;
        json_t *schema;
        json_array_foreach(json_object_get(doc, "schemas"), i, schema)
            check_schema(schema, path);
        if (json_is_object(json_object_get(doc, "schema")))
            check_schema(json_object_get(doc, "schema"), path);
    }
    json_decref(doc);
    icm_table_metadata_free(md);
    return 0;
}

static void test_fixture_schemas(void **state)
{
    (void)state;
    grammar g;
    grammar_init(&g);
    fixture_stats st = {&g, 0, 0, 0, 0, 0};
    g_stats = &st;
    assert_int_equal(nftw(icmt_fixtures_dir(), visit_file, 16, FTW_PHYS), 0);
    printf("fixtures: %zu metadata files, %zu schemas, %zu fields, %zu type strings, "
           "%zu id lookups\n", st.files, st.schemas, st.fields, st.type_strings, st.lookups);
    /* the fixtures hold hundreds of metadata files; each counts */
    assert_true(st.files >= 300);
    assert_true(st.schemas >= st.files);
    assert_true(st.type_strings > 1000);
    grammar_free(&g);
}

/* ==== generated type strings ============================================================== */

static void count(size_t tally[8], int d)
{
    for (int bit = 0; bit < 8; bit++)
        if (d & 1 << bit)
            tally[bit]++;
}

static void test_generated_type_strings(void **state)
{
    (void)state;
    grammar g;
    grammar_init(&g);
    static const char *const names[] = {
        "boolean", "int", "long", "float", "double", "date", "time", "timestamp",
        "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "unknown",
        "variant", "geometry", "geography", "geometry(srid:4326)",
        "geography(srid:4326, spherical)", "geometry(", "Long", "LONG", "long ", " long",
        "decimal", "fixed", "", "struct", "list", "map", "int32", "timestamp_tz"};
    size_t n = 0, tally[8] = {0}; /* writer: refused, accepted, error code; txn: refused,
                                     accepted */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++, n++)
        count(tally, compare_type_string(&g, names[i]));
    /* decimal and fixed with every number, separator and ending combination below */
    static const char *const nums[] = {"0",  "1",  "2",   "9",          "16",          "38",
                                       "39", "09", "+9",  " 9",         "9 ",          " +9",
                                       "-1", "",   "2147483647",        "2147483648",
                                       "99999999999",     "1.5",        "0x10"};
    static const char *const seps[] = {",", ", ", " ,", " , ", ",  ", ";"};
    static const char *const ends[] = {")", " )", "", "))", ")x", ") "};
    char s[128];
    for (size_t a = 0; a < sizeof nums / sizeof nums[0]; a++) {
        for (size_t b = 0; b < sizeof nums / sizeof nums[0]; b++) {
            for (size_t c = 0; c < sizeof seps / sizeof seps[0]; c++) {
                for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++, n++) {
                    snprintf(s, sizeof s, "decimal(%s%s%s%s", nums[a], seps[c], nums[b], ends[e]);
                    count(tally, compare_type_string(&g, s));
                }
            }
        }
        static const char *const fends[] = {"]", " ]", "", "]]", "]x", "] "};
        for (size_t e = 0; e < sizeof fends / sizeof fends[0]; e++, n++) {
            snprintf(s, sizeof s, "fixed[%s%s", nums[a], fends[e]);
            count(tally, compare_type_string(&g, s));
        }
    }
    check_listed_differences(&g);
    printf("generated: %zu type strings; old writer: %zu now refused, %zu now accepted, %zu "
           "other error code; old txn: %zu now refused, %zu now accepted\n",
           n, tally[0], tally[1], tally[2], tally[4], tally[5]);
    assert_true(n > 2000);
    /* the old parsers were not the grammar: each kind of difference occurs */
    assert_true(tally[0] > 0 && tally[1] > 0 && tally[2] > 0 && tally[4] > 0 && tally[5] > 0);
    /* ... and none on the spellings Java and PyIceberg write (checked on the fixtures above
     * and here on the canonical forms) */
    static const char *const canonical[] = {"decimal(9, 2)", "decimal(38, 0)", "decimal(1,1)",
                                            "decimal(38,38)", "fixed[1]", "fixed[16]",
                                            "decimal(36, 23)", "fixed[2147483647]"};
    for (size_t i = 0; i < sizeof canonical / sizeof canonical[0]; i++)
        assert_int_equal(compare_type_string(&g, canonical[i]), D_NONE);
    grammar_free(&g);
}

/* ==== parse errors and the walker ========================================================= */

static icm__schema *parse(const char *text)
{
    icm__schema *s = NULL;
    icmt_ok(icm__schema_parse_text(text, strlen(text), "test schema", &s));
    return s;
}

static void expect_invalid(const char *text, const char *message)
{
    icm__schema *s = NULL;
    assert_int_equal(icm__schema_parse_text(text, strlen(text), "test schema", &s),
                     ICM_EINVALID);
    assert_null(s);
    if (strcmp(icm_error_last()->message, message) != 0)
        print_error("got: %s\n", icm_error_last()->message);
    assert_string_equal(icm_error_last()->message, message);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_invalid("[]", "schema field '(root)': a schema must be a struct object");
    expect_invalid("{\"type\":\"struct\"}", "schema field '(root)': a struct without a 'fields' array");
    expect_invalid("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"type\":\"int\"}]}",
                   "schema field 'a': 'required' is missing or not a boolean");
    expect_invalid("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
                   "\"type\":{\"type\":\"list\",\"element-id\":2,\"element\":\"int\"}}]}",
                   "schema field 'a.element': 'element-required' is missing or not a boolean");
    expect_invalid("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"m\",\"required\":true,"
                   "\"type\":{\"type\":\"map\",\"key-id\":2,\"key\":\"int\",\"value-id\":3,"
                   "\"value-required\":false,\"value\":{\"type\":\"set\"}}}]}",
                   "schema field 'm.value': unknown nested type 'set'");
    expect_invalid("{\"type\":\"struct\",\"fields\":[{\"id\":4294967296,\"name\":\"a\","
                   "\"required\":true,\"type\":\"int\"}]}",
                   "schema field 'a': 'id' is missing or not a 32-bit integer");
    expect_invalid("{\"type\":\"struct\",\"fields\":[{\"id\":1}]}",
                   "schema field '(root)': fields[0] has no string 'name'");
    /* nesting: 64 levels parse, 65 do not */
    for (int levels = 64; levels <= 65; levels++) {
        char *text = strdup("\"int\"");
        for (int i = 0; i < levels - 1; i++) {
            char *t = icmt_sprintf("{\"type\":\"list\",\"element-id\":%d,"
                                   "\"element-required\":true,\"element\":%s}", i + 2, text);
            free(text);
            text = t;
        }
        char *doc = icmt_sprintf("{\"type\":\"struct\",\"schema-id\":7,\"fields\":[{\"id\":1,"
                                 "\"name\":\"a\",\"required\":true,\"type\":%s}]}", text);
        icm__schema *s = NULL;
        int rc = icm__schema_parse_text(doc, strlen(doc), "deep", &s);
        assert_int_equal(rc, levels == 64 ? 0 : ICM_EINVALID);
        if (s != NULL)
            assert_int_equal(s->schema_id, 7);
        icm__schema_free(s);
        free(doc);
        free(text);
    }
}

typedef struct visit_log {
    char text[512];
    int32_t skip_id, stop_id;
} visit_log;

static int log_visit(const icm__schema_field *f, int depth, void *payload)
{
    visit_log *log = payload;
    size_t n = strlen(log->text);
    snprintf(log->text + n, sizeof log->text - n, "%s%d:%s@%d%s", n ? " " : "", (int)f->id,
             f->name, depth, f->required ? "!" : "");
    if (f->id == log->stop_id)
        return ICM__WALK_STOP;
    return f->id == log->skip_id ? ICM__WALK_SKIP : ICM__WALK_CONTINUE;
}

static int fail_visit(const icm__schema_field *f, int depth, void *payload)
{
    (void)depth;
    (void)payload;
    return f->id == 3 ? ICM_EUSER : ICM__WALK_CONTINUE;
}

static void test_walk(void **state)
{
    (void)state;
    icm__schema *s = parse(
        "{\"type\":\"struct\",\"schema-id\":3,\"fields\":["
        "{\"id\":1,\"name\":\"a\",\"required\":true,\"type\":\"decimal(9, 2)\","
        "\"initial-default\":\"1.50\"},"
        "{\"id\":2,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":3,\"element-required\":true,\"element\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":4,\"name\":\"x\",\"required\":false,\"type\":\"fixed[16]\"}]}}},"
        "{\"id\":5,\"name\":\"m\",\"required\":true,\"type\":{\"type\":\"map\",\"key-id\":6,"
        "\"key\":\"string\",\"value-id\":7,\"value-required\":false,\"value\":\"variant\"}},"
        "{\"id\":8,\"name\":\"s\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":9,\"name\":\"t\",\"required\":true,\"type\":\"timestamptz_ns\"}]}}]}");
    assert_int_equal(s->schema_id, 3);
    assert_int_equal(s->root.nfields, 4);
    const icm__schema_field *a = &s->root.fields[0];
    assert_int_equal(a->type->kind, ICM__TYPE_DECIMAL);
    assert_int_equal(a->type->prim.precision, 9);
    assert_int_equal(a->type->prim.scale, 2);
    assert_string_equal(json_string_value(a->initial_default), "1.50");
    assert_null(a->write_default);
    visit_log log = {"", -1, -1};
    icmt_ok(icm__schema_walk(s, log_visit, &log));
    assert_string_equal(log.text, "1:a@0! 2:l@0 3:element@1! 4:x@2 5:m@0! 6:key@1! 7:value@1 "
                                  "8:s@0 9:t@1!");
    log = (visit_log){"", 2, 6};
    icmt_ok(icm__schema_walk(s, log_visit, &log));
    assert_string_equal(log.text, "1:a@0! 2:l@0 5:m@0! 6:key@1!");
    assert_int_equal(icm__schema_walk(s, fail_visit, NULL), ICM_EUSER);
    /* struct-only lookup: through s, not into the list or the map */
    assert_int_equal(icm__schema_find_struct_field(s, 9)->type->kind, ICM__TYPE_TIMESTAMPTZ_NS);
    assert_int_equal(icm__schema_find_struct_field(s, 2)->type->kind, ICM__TYPE_LIST);
    assert_null(icm__schema_find_struct_field(s, 4));
    assert_null(icm__schema_find_struct_field(s, 6));
    assert_null(icm__schema_find_struct_field(s, 10));
    char buf[40];
    assert_string_equal(icm__prim_format(&a->type->prim, buf, sizeof buf), "decimal(9, 2)");
    assert_string_equal(
        icm__prim_format(&icm__schema_find_struct_field(s, 9)->type->prim, buf, sizeof buf),
        "timestamptz_ns");
    icm__schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_schemas),
        cmocka_unit_test(test_generated_type_strings),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
