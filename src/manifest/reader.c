/*
 * manifest/reader.c: the manifest reader. At open, the writer's Avro schema is compiled into a
 * per-field plan for manifest_entry and data_file (which output member each field feeds, or
 * skip when the caller's projection does not ask for it), matching fields by Iceberg field-id
 * with a name fallback; decoding then walks that plan straight into one reusable output struct,
 * skipping unwanted fields without materialising them. Inheritance of snapshot ids, sequence
 * numbers and v3 first row ids is applied per entry.
 *
 * Source: Iceberg spec "Manifests", "Sequence Number Inheritance", "First Row ID Inheritance".
 */

#include <string.h>
#include <xxhash.h>

#include "avro/skip_steps.h"
#include "manifest/manifest_internal.h"

enum me_slot {
    ME_SKIP = 0,
    ME_STATUS,
    ME_SNAPSHOT_ID,
    ME_SEQ,
    ME_FILE_SEQ,
    ME_DATA_FILE,
    /* data_file fields */
    DF_CONTENT,
    DF_PATH,
    DF_FORMAT,
    DF_PARTITION,
    DF_RECORD_COUNT,
    DF_FILE_SIZE,
    DF_COLUMN_SIZES,
    DF_VALUE_COUNTS,
    DF_NULL_COUNTS,
    DF_NAN_COUNTS,
    DF_LOWER,
    DF_UPPER,
    DF_KEY_METADATA,
    DF_SPLIT_OFFSETS,
    DF_EQUALITY_IDS,
    DF_SORT_ORDER_ID,
    DF_FIRST_ROW_ID,
    DF_REFERENCED,
    DF_CONTENT_OFFSET,
    DF_CONTENT_SIZE,
    ME_SLOT_COUNT
};

enum value_kind { K_NUM, K_STR, K_RAW, K_REC };

static const struct {
    int32_t id;
    const char *name;
    uint8_t slot;
    uint8_t kind;
    uint64_t need;      /* projection bit that asks for it; 0 = always */
    int8_t shape;       /* icm__shape for raw values, -1 none */
} ME_FIELDS[] = {
    {0, "status", ME_STATUS, K_NUM, 0, -1},
    {1, "snapshot_id", ME_SNAPSHOT_ID, K_NUM, ICM_MANIFEST_FIELD_SNAPSHOT_ID, -1},
    {3, "sequence_number", ME_SEQ, K_NUM, ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS, -1},
    {4, "file_sequence_number", ME_FILE_SEQ, K_NUM, ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS, -1},
    {2, "data_file", ME_DATA_FILE, K_REC, 0, -1},
}, DF_FIELDS[] = {
    {134, "content", DF_CONTENT, K_NUM, 0, -1},
    {100, "file_path", DF_PATH, K_STR, ICM_MANIFEST_FIELD_FILE_PATH, -1},
    {101, "file_format", DF_FORMAT, K_STR, ICM_MANIFEST_FIELD_FILE_FORMAT, -1},
    {102, "partition", DF_PARTITION, K_RAW, ICM_MANIFEST_FIELD_PARTITION, -1},
    {103, "record_count", DF_RECORD_COUNT, K_NUM, ICM_MANIFEST_FIELD_RECORD_COUNT, -1},
    {104, "file_size_in_bytes", DF_FILE_SIZE, K_NUM, ICM_MANIFEST_FIELD_FILE_SIZE, -1},
    {108, "column_sizes", DF_COLUMN_SIZES, K_RAW, ICM_MANIFEST_FIELD_METRICS,
     ICM__SHAPE_MAP_INT_LONG},
    {109, "value_counts", DF_VALUE_COUNTS, K_RAW, ICM_MANIFEST_FIELD_METRICS,
     ICM__SHAPE_MAP_INT_LONG},
    {110, "null_value_counts", DF_NULL_COUNTS, K_RAW, ICM_MANIFEST_FIELD_METRICS,
     ICM__SHAPE_MAP_INT_LONG},
    {137, "nan_value_counts", DF_NAN_COUNTS, K_RAW, ICM_MANIFEST_FIELD_METRICS,
     ICM__SHAPE_MAP_INT_LONG},
    {125, "lower_bounds", DF_LOWER, K_RAW, ICM_MANIFEST_FIELD_METRICS,
     ICM__SHAPE_MAP_INT_BYTES},
    {128, "upper_bounds", DF_UPPER, K_RAW, ICM_MANIFEST_FIELD_METRICS,
     ICM__SHAPE_MAP_INT_BYTES},
    {131, "key_metadata", DF_KEY_METADATA, K_RAW, ICM_MANIFEST_FIELD_KEY_METADATA,
     ICM__SHAPE_BYTES},
    {132, "split_offsets", DF_SPLIT_OFFSETS, K_RAW, ICM_MANIFEST_FIELD_SPLIT_OFFSETS,
     ICM__SHAPE_LIST_LONG},
    {135, "equality_ids", DF_EQUALITY_IDS, K_RAW, ICM_MANIFEST_FIELD_EQUALITY_IDS,
     ICM__SHAPE_LIST_INT},
    {140, "sort_order_id", DF_SORT_ORDER_ID, K_NUM, ICM_MANIFEST_FIELD_SORT_ORDER_ID, -1},
    {142, "first_row_id", DF_FIRST_ROW_ID, K_NUM, ICM_MANIFEST_FIELD_FIRST_ROW_ID, -1},
    {143, "referenced_data_file", DF_REFERENCED, K_STR,
     ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE, -1},
    {144, "content_offset", DF_CONTENT_OFFSET, K_NUM, ICM_MANIFEST_FIELD_CONTENT_OFFSET, -1},
    {145, "content_size_in_bytes", DF_CONTENT_SIZE, K_NUM, ICM_MANIFEST_FIELD_CONTENT_OFFSET,
     -1},
};

struct icm_manifest_reader {
    icm__obj_iter it;
    const icm__avro_schema *schema;
    uint32_t root, df;   /* manifest_entry and data_file record nodes */
    bool df_optional;    /* data_file wrapped in a ["null", record] union */
    uint8_t *plan;       /* slot per field of root, then per field of data_file */
    uint8_t *df_plan;
    /* Runs of data_file fields nobody asked for are skipped by one compiled program each: for a
     * field starting a run, its steps are df_skips[df_run[i].first ..][.. steps] and the run
     * ends before field df_run[i].next (metrics maps, bounds and the like sit side by side). */
    icm__avro_skip_step *df_skips;
    struct df_run {
        uint32_t first, steps, next;
    } *df_run;
    /* The same for runs of skipped manifest_entry fields (snapshot id and sequence numbers
     * when not asked for). */
    icm__avro_skip_step *me_skips;
    struct df_run *me_run;
    uint64_t fields;
    int version;
    icm_manifest_content content;
    int32_t spec_id;
    int64_t partition_field; /* index of data_file.partition in the writer schema, -1 if none */
    /* The partition key's shape (icm__partition_key; 0: unknown, or the partition not asked
     * for) and the partition record's node. */
    uint64_t partition_shape;
    uint32_t partition_node;
    bool has_manifest;
    icm_manifest_file manifest; /* inheritance source (strings not kept) */
    int64_t next_row_id;
    icm_manifest_entry row;
    icm__strpool strings;
    icm__ptrvec headers;
    /* The view program (icm__manifest_reader_next_view): the entry's fields in byte order,
     * data_file's inlined, as reads of the few a view holds and runs of skips; NULL when the
     * projection asks for more than a view holds or data_file is optional (then views are
     * taken from the decoded entry). */
    struct view_op {
        uint8_t what;  /* VIEW_SKIP, VIEW_NUM, VIEW_STR or VIEW_RAW */
        uint8_t slot;  /* the me_slot read */
        uint32_t node; /* the value's type; for VIEW_SKIP the first step */
        uint32_t steps;
    } *view_ops;
    size_t n_view_ops;
    icm__avro_skip_step *view_skips;
};

enum { VIEW_SKIP, VIEW_NUM, VIEW_STR, VIEW_RAW };

/* What a view holds, besides status and content (always decoded); of the metrics only the
 * bounds (the others are skipped); of the partition its key (icm__partition_key). */
static const uint64_t VIEW_FIELDS =
    ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT | ICM_MANIFEST_FIELD_FILE_SIZE |
    ICM_MANIFEST_FIELD_SNAPSHOT_ID | ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS |
    ICM_MANIFEST_FIELD_RECORD_COUNT | ICM_MANIFEST_FIELD_METRICS | ICM_MANIFEST_FIELD_PARTITION |
    ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE | ICM_MANIFEST_FIELD_CONTENT_OFFSET;

/* The skip programs of the runs of skipped fields of record `rec_node` (plan: a slot per
 * field, ME_SKIP for skipped ones), see df_run. */
static int compile_runs(const icm__avro_schema *s, uint32_t rec_node, const uint8_t *plan,
                        icm__avro_skip_step **skips, struct df_run **runs)
{
    const icm__avro_node *rec = &s->nodes[rec_node];
    size_t nf = rec->n ? rec->n : 1;
    *skips = icm__calloc(nf, sizeof **skips);
    *runs = icm__calloc(nf, sizeof **runs);
    if (*skips == NULL || *runs == NULL)
        return ICM_ENOMEM;
    size_t n = 0;
    for (uint32_t i = 0; i < rec->n;) {
        if (plan[i] != ME_SKIP) {
            i++;
            continue;
        }
        uint32_t start = i;
        size_t first = n;
        for (; i < rec->n && plan[i] == ME_SKIP; i++)
            icm__avro_skip_step_add(s, *skips, &n, first, s->fields[rec->first + i].type);
        (*runs)[start] = (struct df_run){(uint32_t)first, (uint32_t)(n - first), i};
    }
    return 0;
}

static int me_compile_skips(icm_manifest_reader *r)
{
    int rc = compile_runs(r->schema, r->df, r->df_plan, &r->df_skips, &r->df_run);
    return rc != 0 ? rc : compile_runs(r->schema, r->root, r->plan, &r->me_skips, &r->me_run);
}

static int me_plan_record(icm_manifest_reader *r, uint32_t rec_node, bool data_file,
                          uint8_t *plan, const char *location, bool *seen)
{
    const icm__avro_schema *s = r->schema;
    const icm__avro_node *rec = &s->nodes[rec_node];
    size_t n = data_file ? ICM__ARRAY_LEN(DF_FIELDS) : ICM__ARRAY_LEN(ME_FIELDS);
    for (size_t k = 0; k < n; k++) {
        int32_t id = data_file ? DF_FIELDS[k].id : ME_FIELDS[k].id;
        const char *name = data_file ? DF_FIELDS[k].name : ME_FIELDS[k].name;
        uint8_t slot = data_file ? DF_FIELDS[k].slot : ME_FIELDS[k].slot;
        uint8_t kind = data_file ? DF_FIELDS[k].kind : ME_FIELDS[k].kind;
        uint64_t need = data_file ? DF_FIELDS[k].need : ME_FIELDS[k].need;
        int shape = data_file ? DF_FIELDS[k].shape : ME_FIELDS[k].shape;
        int i = icm__avro_record_find(s, rec_node, id, name);
        if (i < 0)
            continue;
        uint32_t t = s->fields[rec->first + (uint32_t)i].type;
        int nb;
        uint32_t inner = icm__avro_unwrap_optional(s, t, &nb);
        seen[slot] = true;
        if (kind == K_NUM && !icm__numeric_node(s, t))
            return icm__schema_error(location, "manifest field is not an int or long", name);
        if (kind == K_STR && !icm__string_node(s, t))
            return icm__schema_error(location, "manifest field is not a string", name);
        if (kind == K_REC && !icm__is_type(s, inner, ICM__AVRO_RECORD))
            return icm__schema_error(location, "manifest field is not a record", name);
        if (slot == DF_PARTITION) {
            if (!icm__is_type(s, inner, ICM__AVRO_RECORD))
                return icm__schema_error(location, "manifest field is not a record", name);
            r->partition_field = i;
        }
        if (need != 0 && !(r->fields & need))
            continue; /* not asked for: stays ME_SKIP */
        if (shape >= 0 && !icm__shape_ok(s, inner, (icm__shape)shape)) {
            /* Equality ids decide which rows a delete file removes: never drop them. */
            if (slot == DF_EQUALITY_IDS)
                return icm__schema_error(location, "unsupported Avro type for manifest field",
                                         name);
            continue; /* other metrics of an unexpected shape are optional: skipped */
        }
        plan[i] = slot;
    }
    return 0;
}

static int me_compile(icm_manifest_reader *r, const char *location)
{
    const icm__avro_schema *s = r->schema;
    int nb;
    /* The objects are the records themselves: a root union (even ["null", record]) would put a
     * branch index before each, which me_decode does not read. */
    r->root = s->root;
    const icm__avro_node *rec = &s->nodes[r->root];
    if (rec->type != ICM__AVRO_RECORD)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                              "not a manifest: Avro schema is not a record");
    int dfi = icm__avro_record_find(s, r->root, 2, "data_file");
    if (dfi < 0)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                              "not a manifest: no data_file field (2)");
    uint32_t dft = s->fields[rec->first + (uint32_t)dfi].type;
    r->df = icm__avro_unwrap_optional(s, dft, &nb);
    r->df_optional = nb >= 0;
    if (!icm__is_type(s, r->df, ICM__AVRO_RECORD))
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                              "not a manifest: data_file is not a record");
    r->plan = icm__calloc(rec->n ? rec->n : 1, 1);
    r->df_plan = icm__calloc(s->nodes[r->df].n ? s->nodes[r->df].n : 1, 1);
    if (r->plan == NULL || r->df_plan == NULL)
        return ICM_ENOMEM;
    bool seen[ME_SLOT_COUNT] = {false};
    r->partition_field = -1;
    int rc = me_plan_record(r, r->root, false, r->plan, location, seen);
    if (rc == 0)
        rc = me_plan_record(r, r->df, true, r->df_plan, location, seen);
    if (rc < 0)
        return rc;
    if (!seen[ME_STATUS] || !seen[DF_PATH])
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                              "not a manifest: no status (0) or file_path (100) field");
    if ((rc = me_compile_skips(r)) != 0)
        return rc;
    r->version = (seen[DF_FIRST_ROW_ID] || seen[DF_CONTENT_OFFSET] || seen[DF_CONTENT_SIZE])
                     ? 3
                 : (seen[DF_CONTENT] || seen[ME_SEQ] || seen[ME_FILE_SEQ]) ? 2
                                                                           : 1;
    return 0;
}

/* Append a skip of a value of `node` to the view program (ops has room for one more). */
static void view_skip(icm_manifest_reader *r, size_t *n_steps, uint32_t node)
{
    struct view_op *last = r->n_view_ops ? &r->view_ops[r->n_view_ops - 1] : NULL;
    if (last == NULL || last->what != VIEW_SKIP) {
        last = &r->view_ops[r->n_view_ops++];
        *last = (struct view_op){VIEW_SKIP, ME_SKIP, (uint32_t)*n_steps, 0};
    }
    icm__avro_skip_step_add(r->schema, r->view_skips, n_steps, last->node, node);
    last->steps = (uint32_t)(*n_steps - last->node);
}

/* The view program, when the projection and schema allow one (else none: 0 either way, or
 * ICM_ENOMEM). */
static int view_compile(icm_manifest_reader *r)
{
    if (r->df_optional || (r->fields & ~VIEW_FIELDS) != 0)
        return 0;
    const icm__avro_schema *s = r->schema;
    const icm__avro_node *rec = &s->nodes[r->root], *df = &s->nodes[r->df];
    size_t cap = (size_t)rec->n + df->n;
    r->view_ops = icm__calloc(cap, sizeof *r->view_ops);
    r->view_skips = icm__calloc(cap, sizeof *r->view_skips);
    if (r->view_ops == NULL || r->view_skips == NULL)
        return ICM_ENOMEM;
    size_t n_steps = 0;
    for (uint32_t i = 0; i < rec->n; i++) {
        uint32_t t = s->fields[rec->first + i].type;
        if (r->plan[i] == ME_SKIP) {
            view_skip(r, &n_steps, t);
            continue;
        }
        if (r->plan[i] != ME_DATA_FILE) { /* status, snapshot id, sequence numbers */
            r->view_ops[r->n_view_ops++] = (struct view_op){VIEW_NUM, r->plan[i], t, 0};
            continue;
        }
        for (uint32_t j = 0; j < df->n; j++) {
            uint32_t ft = s->fields[df->first + j].type;
            uint8_t slot = r->df_plan[j];
            uint8_t what = slot == DF_PATH || slot == DF_FORMAT || slot == DF_REFERENCED
                               ? VIEW_STR
                           : slot == DF_LOWER || slot == DF_UPPER || slot == DF_PARTITION
                               ? VIEW_RAW
                           : slot == DF_COLUMN_SIZES || slot == DF_VALUE_COUNTS ||
                                   slot == DF_NULL_COUNTS || slot == DF_NAN_COUNTS
                               ? VIEW_SKIP
                               : VIEW_NUM;
            if (slot == ME_SKIP || what == VIEW_SKIP)
                view_skip(r, &n_steps, ft);
            else
                r->view_ops[r->n_view_ops++] = (struct view_op){what, slot, ft, 0};
        }
    }
    return 0;
}

/* ---- partition keys (icm__partition_key) ---- */

/* How a partition field's values are compared: by value within a class, whichever of its
 * Avro types a writer chose (spec "Avro": int and long, float and double are promotions; a
 * decimal is fixed or bytes). */
enum pk_class { PK_NONE, PK_INTEGER, PK_REAL, PK_BOOLEAN, PK_STRING, PK_BINARY, PK_DECIMAL };

static bool logical_is(const icm__avro_node *n, const char *name)
{
    return n->logical != NULL && strcmp(n->logical, name) == 0;
}

/* The class of a partition field's values and their non-null node (*value). */
static enum pk_class pk_class_of(const icm__avro_schema *s, uint32_t type, uint32_t *value)
{
    int null_branch;
    *value = icm__avro_unwrap_optional(s, type, &null_branch);
    const icm__avro_node *n = &s->nodes[*value];
    switch (n->type) {
    case ICM__AVRO_INT:
    case ICM__AVRO_LONG: return PK_INTEGER;
    case ICM__AVRO_FLOAT:
    case ICM__AVRO_DOUBLE: return PK_REAL;
    case ICM__AVRO_BOOLEAN: return PK_BOOLEAN;
    case ICM__AVRO_STRING: return PK_STRING;
    case ICM__AVRO_BYTES:
    case ICM__AVRO_FIXED: return logical_is(n, "decimal") ? PK_DECIMAL : PK_BINARY;
    default: return PK_NONE; /* (a union of more, a record, an array, a map, an enum) */
    }
}

/* A field's seed: its field id (else its position), so that equal values of two fields add
 * differently to the digest. */
static uint64_t pk_field_seed(const icm__avro_field *f, uint32_t i)
{
    int64_t id = f->field_id != ICM__AVRO_NO_ID ? f->field_id : -1 - (int64_t)i;
    return (uint64_t)id * 0x9E3779B97F4A7C15u;
}

static uint64_t pk_text_hash(const char *text)
{
    return text != NULL ? XXH3_64bits(text, strlen(text)) : 0;
}

/* The shape of r's partition keys: its spec id, and per field its seed, class, and what else
 * decides how the value reads (the logical type: a date's days and a timestamp's microseconds
 * are both integers; a plain fixed's size). 0 when unknown. Sets r->partition_node. */
static uint64_t partition_shape(icm_manifest_reader *r)
{
    if (r->partition_field < 0 || r->spec_id < 0)
        return 0;
    const icm__avro_schema *s = r->schema;
    uint32_t t = s->fields[s->nodes[r->df].first + (uint32_t)r->partition_field].type;
    int null_branch;
    uint32_t rec = icm__avro_unwrap_optional(s, t, &null_branch);
    const icm__avro_node *pn = &s->nodes[rec];
    if (pn->type != ICM__AVRO_RECORD)
        return 0;
    uint64_t h = XXH3_64bits(&r->spec_id, sizeof r->spec_id);
    for (uint32_t i = 0; i < pn->n; i++) {
        const icm__avro_field *f = &s->fields[pn->first + i];
        uint32_t value;
        enum pk_class k = pk_class_of(s, f->type, &value);
        if (k == PK_NONE)
            return 0;
        const icm__avro_node *vn = &s->nodes[value];
        uint64_t words[5] = {pk_field_seed(f, i), (uint64_t)k,
                             k == PK_DECIMAL ? 0 : pk_text_hash(vn->logical),
                             k == PK_BINARY ? (uint64_t)vn->type : 0,
                             k == PK_BINARY && vn->type == ICM__AVRO_FIXED ? vn->n : 0};
        h = XXH3_64bits_withSeed(words, sizeof words, h);
    }
    r->partition_node = rec;
    h &= ~UINT64_C(1); /* (the low bit says a value is null: icm__manifest_reader_partition_key) */
    return h != 0 ? h : 2;
}

/* A two's complement big-endian integer without the leading bytes that only repeat its sign
 * (zero bytes: zero). */
static void decimal_trim(const uint8_t **b, size_t *n)
{
    static const uint8_t zero = 0;
    while (*n > 1 && (((*b)[0] == 0x00 && !((*b)[1] & 0x80)) ||
                      ((*b)[0] == 0xFF && ((*b)[1] & 0x80)))) {
        (*b)++;
        (*n)--;
    }
    if (*n == 0) {
        *b = &zero;
        *n = 1;
    }
}

/* The digest of one field's value at c (the field's seed and class as partition_shape took
 * them). False when the bytes do not read (then the key is unknown). A float or double field's
 * value (or null) is read past and not compared: PyIceberg 0.12 writes a double partition value
 * it carries into a rewritten manifest rounded to float32, so one file's entries disagree
 * (adversary round 16, F1: data loss). */
static bool pk_value(const icm__avro_schema *s, const icm__avro_field *f, uint64_t seed,
                     icm__avro_cur *c, uint64_t *out, bool *null)
{
    uint32_t node = f->type, value;
    const icm__avro_node *n = &s->nodes[node];
    bool real = pk_class_of(s, node, &value) == PK_REAL;
    if (n->type == ICM__AVRO_UNION) {
        uint32_t b = 0;
        if (icm__avro_read_branch(c, n, &b) < 0)
            return false;
        node = s->branches[n->first + b];
        n = &s->nodes[node];
    }
    if (real) {
        size_t width = n->type == ICM__AVRO_FLOAT ? 4 : n->type == ICM__AVRO_DOUBLE ? 8 : 0;
        if ((size_t)(c->end - c->p) < width)
            return false;
        c->p += width;
        *out = XXH3_64bits_withSeed("", 0, seed ^ 0x7265616cu); /* ("real": any value) */
        return true;
    }
    const uint8_t *bytes = NULL;
    size_t len = 0;
    uint8_t word[8];
    int64_t i64 = 0;
    bool flag = false;
    switch (n->type) {
    case ICM__AVRO_NULL:
        *out = XXH3_64bits_withSeed("", 0, seed ^ 0x6e756c6cu); /* "null" apart from values */
        *null = true;
        return true;
    case ICM__AVRO_INT:
    case ICM__AVRO_LONG:
        if (icm__avro_read_long(c, &i64) < 0)
            return false;
        memcpy(word, &i64, sizeof word);
        break;
    case ICM__AVRO_BOOLEAN:
        if (icm__avro_read_bool(c, &flag) < 0)
            return false;
        memset(word, 0, sizeof word);
        word[0] = flag;
        break;
    case ICM__AVRO_STRING:
    case ICM__AVRO_BYTES:
        if (icm__avro_read_bytes(c, &bytes, &len) < 0)
            return false;
        break;
    case ICM__AVRO_FIXED:
        if ((size_t)(c->end - c->p) < n->n)
            return false;
        bytes = c->p;
        len = n->n;
        c->p += n->n;
        break;
    default: return false;
    }
    if (bytes == NULL) {
        bytes = word;
        len = sizeof word;
    } else if (logical_is(n, "decimal")) {
        decimal_trim(&bytes, &len);
    }
    *out = XXH3_64bits_withSeed(bytes, len, seed);
    return true;
}

icm__partition_key icm__manifest_reader_partition_key(const icm_manifest_reader *r, icm_raw raw)
{
    icm__partition_key key = {0, 0};
    if (r->partition_shape == 0)
        return key;
    const icm__avro_schema *s = r->schema;
    const icm__avro_node *pn = &s->nodes[r->partition_node];
    icm__avro_cur c = {raw.data, raw.data + raw.len, raw.data, 0, false, ""};
    uint64_t sum = raw.data == NULL ? 0x6e756c6cu : 0;
    bool null = false;
    for (uint32_t i = 0; raw.data != NULL && i < pn->n; i++) {
        const icm__avro_field *f = &s->fields[pn->first + i];
        uint64_t h;
        if (!pk_value(s, f, pk_field_seed(f, i), &c, &h, &null)) {
            icm_error_clear(); /* (the bytes were read as the schema says: not expected) */
            return key;
        }
        sum += h;
    }
    key.shape = r->partition_shape | (null ? 1 : 0);
    key.values = sum;
    return key;
}

int icm_manifest_reader_open(icm_manifest_reader **out, const void *data, size_t len,
                             const char *location, const icm_manifest_read_options *opts)
{
    return icm__manifest_reader_open_cached(out, data, len, location, opts, NULL);
}

int icm__manifest_reader_open_cached(icm_manifest_reader **out, const void *data, size_t len,
                                     const char *location, const icm_manifest_read_options *opts,
                                     icm__avro_schema_cache *schemas)
{
    *out = NULL;
    int vrc = ICM__MANIFEST_OPTS_CHECK("icm_manifest_reader_open", opts,
                                       ICM_MANIFEST_READ_OPTIONS_VERSION);
    if (vrc < 0)
        return vrc;
    icm_manifest_reader *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return ICM_ENOMEM;
    r->fields = (opts && opts->fields) ? opts->fields : ICM_MANIFEST_FIELD_ALL;
    /* Row id inheritance sums record counts, so asking for row ids implies the counts. */
    if (r->fields & ICM_MANIFEST_FIELD_FIRST_ROW_ID)
        r->fields |= ICM_MANIFEST_FIELD_RECORD_COUNT;
    int rc = icm__avro_reader_open_cached(&r->it.avro, data, len, location, schemas);
    int header = 0;
    if (rc == 0) {
        r->schema = icm__avro_reader_schema(r->it.avro);
        rc = icm__version_from_header(r->it.avro, &header);
    }
    if (rc == 0)
        rc = me_compile(r, location);
    if (rc == 0)
        rc = view_compile(r);
    if (rc < 0) {
        icm_manifest_reader_free(r);
        return rc;
    }
    r->version = icm__decide_version(header, r->version, opts ? opts->format_version : 0);
    size_t n = 0;
    const char *v = icm__avro_reader_meta(r->it.avro, "content", &n);
    r->content = (v != NULL && n == 7 && memcmp(v, "deletes", 7) == 0)
                     ? ICM_MANIFEST_CONTENT_DELETES
                     : ICM_MANIFEST_CONTENT_DATA;
    int64_t x = 0;
    v = icm__avro_reader_meta(r->it.avro, "partition-spec-id", &n);
    r->spec_id = (icm__parse_header_int(v, n, &x) && x >= 0 && x <= INT32_MAX) ? (int32_t)x : -1;
    if (r->fields & ICM_MANIFEST_FIELD_PARTITION)
        r->partition_shape = partition_shape(r);
    if (opts && opts->manifest) {
        r->has_manifest = true;
        r->manifest = *opts->manifest;
        r->manifest.manifest_path = NULL;
        r->manifest.partitions = (icm_raw){NULL, 0};
        r->manifest.key_metadata = (icm_raw){NULL, 0};
        r->next_row_id = r->manifest.first_row_id;
    }
    *out = r;
    return 0;
}

/* ASCII case-insensitive equality with a lower-case name of the same length (this runs once
 * per manifest entry: no locale-aware library call). */
static bool format_is(const uint8_t *s, const char *lower, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (uint8_t)(c + ('a' - 'A'));
        if (c != (uint8_t)lower[i])
            return false;
    }
    return true;
}

static icm_file_format parse_format(const uint8_t *s, size_t n)
{
    switch (n) {
    case 7:
        return format_is(s, "parquet", 7) ? ICM_FILE_FORMAT_PARQUET : ICM_FILE_FORMAT_OTHER;
    case 4:
        return format_is(s, "avro", 4) ? ICM_FILE_FORMAT_AVRO : ICM_FILE_FORMAT_OTHER;
    case 3:
        return format_is(s, "orc", 3) ? ICM_FILE_FORMAT_ORC : ICM_FILE_FORMAT_OTHER;
    case 6:
        return format_is(s, "puffin", 6) ? ICM_FILE_FORMAT_PUFFIN : ICM_FILE_FORMAT_OTHER;
    default:
        return ICM_FILE_FORMAT_OTHER;
    }
}

/* Strings of the current row before they are copied into the string pool. */
typedef struct row_strings {
    const uint8_t *path, *format, *ref;
    size_t path_len, format_len, ref_len;
} row_strings;

/* An entry's status and a data file's content: 0, 1 or 2 (spec "Manifests"), in both decoders. */
static inline int status_of(const icm__avro_cur *c, int64_t v, icm_entry_status *out)
{
    if (ICM__UNLIKELY(v < 0 || v > 2))
        return icm__avro_corrupt(c, "entry status is not 0, 1 or 2");
    *out = (icm_entry_status)v;
    return 0;
}

static inline int content_of(const icm__avro_cur *c, int64_t v, icm_file_content *out)
{
    if (ICM__UNLIKELY(v < 0 || v > 2))
        return icm__avro_corrupt(c, "data_file content is not 0, 1 or 2");
    *out = (icm_file_content)v;
    return 0;
}

static int me_decode_data_file(icm_manifest_reader *r, icm__avro_cur *c, row_strings *rs)
{
    const icm__avro_schema *s = r->schema;
    const icm__avro_node *rec = &s->nodes[r->df];
    icm_data_file *d = &r->row.data_file;
    int64_t v = 0;
    bool has = false;
    int rc = 0;
    for (uint32_t i = 0; i < rec->n && rc == 0; i++) {
        uint32_t t = s->fields[rec->first + i].type;
        uint8_t slot = r->df_plan[i];
        switch (slot) {
        case ME_SKIP: { /* a whole run of skipped fields; the loop goes on after it */
            const struct df_run *run = &r->df_run[i];
            rc = icm__avro_skip_steps(s, r->df_skips + run->first, run->steps, c);
            i = run->next - 1;
            break;
        }
        case DF_PATH: rc = icm__read_str(s, t, c, &rs->path, &rs->path_len); break;
        case DF_FORMAT: rc = icm__read_str(s, t, c, &rs->format, &rs->format_len); break;
        case DF_REFERENCED: rc = icm__read_str(s, t, c, &rs->ref, &rs->ref_len); break;
        case DF_PARTITION: rc = icm__read_raw(s, t, c, &d->partition); break;
        case DF_COLUMN_SIZES: rc = icm__read_raw(s, t, c, &d->column_sizes); break;
        case DF_VALUE_COUNTS: rc = icm__read_raw(s, t, c, &d->value_counts); break;
        case DF_NULL_COUNTS: rc = icm__read_raw(s, t, c, &d->null_value_counts); break;
        case DF_NAN_COUNTS: rc = icm__read_raw(s, t, c, &d->nan_value_counts); break;
        case DF_LOWER: rc = icm__read_raw(s, t, c, &d->lower_bounds); break;
        case DF_UPPER: rc = icm__read_raw(s, t, c, &d->upper_bounds); break;
        case DF_KEY_METADATA: rc = icm__read_raw(s, t, c, &d->key_metadata); break;
        case DF_SPLIT_OFFSETS: rc = icm__read_raw(s, t, c, &d->split_offsets); break;
        case DF_EQUALITY_IDS: rc = icm__read_raw(s, t, c, &d->equality_ids); break;
        default:
            rc = icm__read_num(s, t, c, &v, &has);
            if (rc < 0 || !has)
                break;
            switch (slot) {
            case DF_CONTENT:
                if ((rc = content_of(c, v, &d->content)) < 0)
                    return rc;
                break;
            case DF_RECORD_COUNT: d->record_count = v; break;
            case DF_FILE_SIZE: d->file_size_in_bytes = v; break;
            case DF_SORT_ORDER_ID:
                d->sort_order_id = (int32_t)v;
                d->has_sort_order_id = true;
                break;
            case DF_FIRST_ROW_ID: d->first_row_id = v; d->has_first_row_id = true; break;
            case DF_CONTENT_OFFSET: d->content_offset = v; d->has_content_offset = true; break;
            case DF_CONTENT_SIZE:
                d->content_size_in_bytes = v;
                d->has_content_size_in_bytes = true;
                break;
            default: break;
            }
        }
    }
    return rc;
}

static int me_copy_strings(icm_manifest_reader *r, const row_strings *rs)
{
    icm_data_file *d = &r->row.data_file;
    size_t need = rs->path_len + rs->format_len + rs->ref_len + 3;
    int rc = icm__strpool_reserve(&r->strings, need);
    if (rc < 0)
        return rc;
    char *p = r->strings.buf;
    memcpy(p, rs->path, rs->path_len);
    p[rs->path_len] = '\0';
    d->file_path = p;
    d->file_path_len = rs->path_len;
    p += rs->path_len + 1;
    if (rs->format != NULL) {
        memcpy(p, rs->format, rs->format_len);
        p[rs->format_len] = '\0';
        d->file_format_name = p;
        p += rs->format_len + 1;
    }
    if (rs->ref != NULL) {
        memcpy(p, rs->ref, rs->ref_len);
        p[rs->ref_len] = '\0';
        d->referenced_data_file = p;
    }
    return 0;
}

/* Spec "Sequence Number Inheritance" and "First Row ID Inheritance". */
static void me_inherit(icm_manifest_reader *r, bool seq_null, bool file_seq_null)
{
    icm_manifest_entry *e = &r->row;
    if (r->version == 1 && !r->has_manifest) {
        /* v1 data files have sequence number 0 whatever the context. */
        if (seq_null) {
            e->sequence_number = 0;
            e->has_sequence_number = true;
        }
        if (file_seq_null) {
            e->file_sequence_number = 0;
            e->has_file_sequence_number = true;
        }
        return;
    }
    if (!r->has_manifest)
        return;
    const icm_manifest_file *m = &r->manifest;
    if (!e->has_snapshot_id && m->has_added_snapshot_id &&
        (r->fields & ICM_MANIFEST_FIELD_SNAPSHOT_ID)) {
        e->snapshot_id = m->added_snapshot_id;
        e->has_snapshot_id = true;
    }
    bool inherit_seq = e->status == ICM_ENTRY_ADDED || m->sequence_number == 0;
    if (inherit_seq && (r->fields & ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS)) {
        if (seq_null) {
            e->sequence_number = m->sequence_number;
            e->has_sequence_number = true;
        }
        if (file_seq_null) {
            e->file_sequence_number = m->sequence_number;
            e->has_file_sequence_number = true;
        }
    }
    icm_data_file *d = &e->data_file;
    if (m->has_first_row_id && d->content == ICM_FILE_CONTENT_DATA && !d->has_first_row_id) {
        /* Every data file without an id, whatever its status, takes the manifest's first row id
         * plus the record counts of the earlier such files (spec "First Row ID Inheritance"). */
        if (r->fields & ICM_MANIFEST_FIELD_FIRST_ROW_ID) {
            d->first_row_id = r->next_row_id;
            d->has_first_row_id = true;
        }
        r->next_row_id += d->record_count;
    }
}

/* What every decoded entry must have, whatever the projection (me_decode and view_decode): a
 * status, a path when one was asked for, and no NUL byte in it (every later use of a path is a
 * C string, for keys, sets and file names: one with a NUL byte would name another file than the
 * manifest does). The test is inline, the error out of line (this runs once per entry). */
static int entry_error(const icm_manifest_reader *r, const icm__avro_cur *c, bool has_status,
                       const uint8_t *path)
{
    if (!has_status)
        return icm__avro_corrupt(c, "entry status is null");
    if ((r->fields & ICM_MANIFEST_FIELD_FILE_PATH) && path == NULL)
        return icm__avro_corrupt(c, "data_file file_path is null");
    return icm__avro_corrupt(c, "data_file file_path contains a NUL byte");
}

static inline int check_entry(const icm_manifest_reader *r, const icm__avro_cur *c,
                              bool has_status, const uint8_t *path, size_t path_len)
{
    bool ok = has_status &&
              (path != NULL ? memchr(path, '\0', path_len) == NULL
                            : !(r->fields & ICM_MANIFEST_FIELD_FILE_PATH));
    return ICM__LIKELY(ok) ? 0 : entry_error(r, c, has_status, path);
}

static int me_decode(icm_manifest_reader *r)
{
    const icm__avro_schema *s = r->schema;
    const icm__avro_node *rec = &s->nodes[r->root];
    icm__avro_cur *c = &r->it.cur;
    icm_manifest_entry *e = &r->row;
    memset(e, 0, sizeof *e);
    e->data_file.record_count = -1;
    e->data_file.file_size_in_bytes = -1;
    row_strings rs = {NULL, NULL, NULL, 0, 0, 0};
    bool has_status = false, seq_null = true, file_seq_null = true, has = false;
    int64_t v = 0;
    int rc = 0;
    for (uint32_t i = 0; i < rec->n && rc == 0; i++) {
        uint32_t t = s->fields[rec->first + i].type;
        switch (r->plan[i]) {
        case ME_SKIP: { /* a whole run of skipped fields; the loop goes on after it */
            const struct df_run *run = &r->me_run[i];
            rc = icm__avro_skip_steps(s, r->me_skips + run->first, run->steps, c);
            i = run->next - 1;
            break;
        }
        case ME_DATA_FILE:
            if (r->df_optional) {
                uint32_t b = 0;
                rc = icm__avro_read_branch(c, &s->nodes[t], &b);
                if (rc == 0 && s->nodes[s->branches[s->nodes[t].first + b]].type ==
                                   ICM__AVRO_NULL)
                    return icm__avro_corrupt(c, "data_file is null");
            }
            if (rc == 0)
                rc = me_decode_data_file(r, c, &rs);
            break;
        default:
            rc = icm__read_num(s, t, c, &v, &has);
            if (rc < 0 || !has)
                break;
            switch (r->plan[i]) {
            case ME_STATUS:
                if ((rc = status_of(c, v, &e->status)) < 0)
                    return rc;
                has_status = true;
                break;
            case ME_SNAPSHOT_ID: e->snapshot_id = v; e->has_snapshot_id = true; break;
            case ME_SEQ:
                e->sequence_number = v;
                e->has_sequence_number = true;
                seq_null = false;
                break;
            case ME_FILE_SEQ:
                e->file_sequence_number = v;
                e->has_file_sequence_number = true;
                file_seq_null = false;
                break;
            default: break;
            }
        }
    }
    if (rc < 0)
        return rc;
    rc = check_entry(r, c, has_status, rs.path, rs.path_len);
    if (rc < 0)
        return rc;
    if (rs.ref != NULL && memchr(rs.ref, '\0', rs.ref_len) != NULL)
        return icm__avro_corrupt(c, "data_file referenced_data_file contains a NUL byte");
    if (!(r->fields & ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS))
        seq_null = file_seq_null = false;
    if (rs.format != NULL)
        e->data_file.file_format = parse_format(rs.format, rs.format_len);
    if (rs.path == NULL)
        rs.path = (const uint8_t *)"";
    rc = me_copy_strings(r, &rs);
    if (rc < 0)
        return rc;
    me_inherit(r, seq_null, file_seq_null);
    return 0;
}

int icm_manifest_reader_next(const icm_manifest_entry **out, icm_manifest_reader *r)
{
    *out = NULL;
    int rc = icm__obj_iter_next(&r->it);
    if (rc == 0)
        rc = me_decode(r);
    if (rc == 0)
        *out = &r->row;
    return rc;
}

/* The view program's decoding of one entry: what me_decode checks of these fields, nothing
 * copied. */
static int view_decode(icm_manifest_reader *r, icm__entry_view *v)
{
    const icm__avro_schema *s = r->schema;
    icm__avro_cur *c = &r->it.cur;
    *v = (icm__entry_view){.status = ICM_ENTRY_EXISTING,
                           .content = ICM_FILE_CONTENT_DATA,
                           .file_format = ICM_FILE_FORMAT_OTHER,
                           .file_size_in_bytes = -1,
                           .record_count = -1,
                           .content_offset = -1,
                           .content_size_in_bytes = -1};
    const uint8_t *path = NULL, *format = NULL, *ref = NULL;
    size_t path_len = 0, format_len = 0, ref_len = 0;
    icm_raw partition = {NULL, 0};
    bool has_status = false;
    int rc = 0;
    for (size_t k = 0; k < r->n_view_ops && rc == 0; k++) {
        const struct view_op *op = &r->view_ops[k];
        if (op->what == VIEW_SKIP) {
            rc = icm__avro_run_skip_steps(s, r->view_skips + op->node, op->steps, c);
            continue;
        }
        if (op->what == VIEW_RAW) {
            rc = icm__read_raw(s, op->node, c,
                               op->slot == DF_LOWER   ? &v->lower_bounds
                               : op->slot == DF_UPPER ? &v->upper_bounds
                                                      : &partition);
            continue;
        }
        if (op->what == VIEW_STR) {
            if (op->slot == DF_PATH)
                rc = icm__read_str(s, op->node, c, &path, &path_len);
            else if (op->slot == DF_REFERENCED)
                rc = icm__read_str(s, op->node, c, &ref, &ref_len);
            else
                rc = icm__read_str(s, op->node, c, &format, &format_len);
            continue;
        }
        int64_t x = 0;
        bool has = false;
        rc = icm__read_num(s, op->node, c, &x, &has);
        if (rc < 0 || !has)
            continue;
        switch (op->slot) {
        case ME_STATUS:
            if ((rc = status_of(c, x, &v->status)) < 0)
                return rc;
            has_status = true;
            break;
        case DF_CONTENT:
            if ((rc = content_of(c, x, &v->content)) < 0)
                return rc;
            break;
        case DF_FILE_SIZE: v->file_size_in_bytes = x; break;
        case DF_RECORD_COUNT: v->record_count = x; break;
        case DF_CONTENT_OFFSET: v->content_offset = x; break;
        case DF_CONTENT_SIZE: v->content_size_in_bytes = x; break;
        case ME_SNAPSHOT_ID:
            v->snapshot_id = x;
            v->has_snapshot_id = true;
            break;
        case ME_FILE_SEQ:
            v->file_sequence_number = x;
            v->has_file_sequence_number = true;
            break;
        default: break; /* (the data sequence number: not held) */
        }
    }
    if (rc < 0)
        return rc;
    rc = check_entry(r, c, has_status, path, path_len);
    if (rc < 0)
        return rc;
    if (ref != NULL && memchr(ref, '\0', ref_len) != NULL)
        return icm__avro_corrupt(c, "data_file referenced_data_file contains a NUL byte");
    v->referenced_data_file = (const char *)ref;
    v->referenced_data_file_len = ref_len;
    if (format != NULL)
        v->file_format = parse_format(format, format_len);
    v->file_path = path != NULL ? (const char *)path : "";
    v->file_path_len = path_len;
    v->partition = icm__manifest_reader_partition_key(r, partition);
    return 0;
}

int icm__manifest_reader_next_view(icm_manifest_reader *r, icm__entry_view *out)
{
    int rc = icm__obj_iter_next(&r->it);
    if (rc == 0 && r->view_ops != NULL)
        return view_decode(r, out);
    if (rc == 0)
        rc = me_decode(r);
    if (rc < 0)
        return rc;
    const icm_manifest_entry *e = &r->row;
    const icm_data_file *d = &e->data_file;
    *out = (icm__entry_view){.status = e->status,
                             .content = d->content,
                             .file_format = d->file_format,
                             .file_path = d->file_path,
                             .file_path_len = d->file_path_len,
                             .file_size_in_bytes = d->file_size_in_bytes,
                             .has_snapshot_id = e->has_snapshot_id,
                             .has_file_sequence_number = e->has_file_sequence_number,
                             .snapshot_id = e->snapshot_id,
                             .file_sequence_number = e->file_sequence_number,
                             .record_count = d->record_count,
                             .lower_bounds = d->lower_bounds,
                             .upper_bounds = d->upper_bounds,
                             .partition = icm__manifest_reader_partition_key(r, d->partition),
                             .referenced_data_file = d->referenced_data_file,
                             .referenced_data_file_len = d->referenced_data_file != NULL
                                                             ? strlen(d->referenced_data_file)
                                                             : 0,
                             .content_offset = d->has_content_offset ? d->content_offset : -1,
                             .content_size_in_bytes = d->has_content_size_in_bytes
                                                          ? d->content_size_in_bytes
                                                          : -1};
    return 0;
}

int icm_manifest_reader_format_version(const icm_manifest_reader *r)
{
    return r->version;
}

icm_manifest_content icm_manifest_reader_content(const icm_manifest_reader *r)
{
    return r->content;
}

int32_t icm_manifest_reader_partition_spec_id(const icm_manifest_reader *r)
{
    return r->spec_id;
}

const char *icm_manifest_reader_header(icm_manifest_reader *r, const char *key)
{
    const char *v;
    icm__header_copy(&r->headers, r->it.avro, key, &v);
    return v;
}

int icm__manifest_reader_header(icm_manifest_reader *r, const char *key, const char **out)
{
    return icm__header_copy(&r->headers, r->it.avro, key, out);
}

void icm_manifest_reader_free(icm_manifest_reader *r)
{
    if (r == NULL)
        return;
    icm__avro_reader_free(r->it.avro);
    icm__free(r->plan);
    icm__free(r->df_plan);
    icm__free(r->df_skips);
    icm__free(r->df_run);
    icm__free(r->me_skips);
    icm__free(r->me_run);
    icm__free(r->view_ops);
    icm__free(r->view_skips);
    icm__free(r->strings.buf);
    icm__ptrvec_dispose(&r->headers, icm__free);
    icm__free(r);
}

const icm__avro_schema *icm__manifest_reader_schema(const icm_manifest_reader *r,
                                                    uint32_t *partition_node)
{
    if (r->partition_field < 0)
        return NULL;
    const icm__avro_schema *s = r->schema;
    uint32_t t = s->fields[s->nodes[r->df].first + (uint32_t)r->partition_field].type;
    int nb;
    *partition_node = icm__avro_unwrap_optional(s, t, &nb);
    return s;
}
