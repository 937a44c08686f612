/*
 * manifest/list_reader.c: the manifest list reader. At open, the writer's Avro schema is
 * compiled into a per-field plan (which icm_manifest_file member each field feeds, or skip),
 * matching fields by Iceberg field-id with a name fallback (including v1's *_data_files_count
 * names); rows are then decoded straight into one reusable struct. Partition summaries written
 * in an older shape are re-encoded canonically so entries stay copyable.
 *
 * A caller that has already handled most manifests (a walk over thousands of manifest lists
 * that repeat the same manifests) can have rows skipped by path (next_filtered): the reader
 * reads the path, asks, and skips the rest of an unwanted row with a short skip program in
 * which a run of plain int/long fields is one step (varints counted, not decoded).
 *
 * Source: Iceberg spec "Manifest Lists", Appendix E (v1 defaults).
 */
#include "manifest/manifest_internal.h"

enum ml_slot {
    ML_SKIP = 0,
    ML_PATH,
    ML_LENGTH,
    ML_SPEC_ID,
    ML_CONTENT,
    ML_SEQ,
    ML_MIN_SEQ,
    ML_SNAPSHOT_ID,
    ML_ADDED_FILES,
    ML_EXISTING_FILES,
    ML_DELETED_FILES,
    ML_ADDED_ROWS,
    ML_EXISTING_ROWS,
    ML_DELETED_ROWS,
    ML_PARTITIONS,
    ML_KEY_METADATA,
    ML_FIRST_ROW_ID,
    ML_PARTITIONS_TRANSCODE, /* summaries in another shape: re-encoded canonically */
    ML_SLOT_COUNT
};

static const struct {
    int32_t id;
    const char *name;
    const char *alt; /* v1 Java names */
    uint8_t slot;
    bool numeric;
} ML_FIELDS[] = {
    {500, "manifest_path", NULL, ML_PATH, false},
    {501, "manifest_length", NULL, ML_LENGTH, true},
    {502, "partition_spec_id", NULL, ML_SPEC_ID, true},
    {517, "content", NULL, ML_CONTENT, true},
    {515, "sequence_number", NULL, ML_SEQ, true},
    {516, "min_sequence_number", NULL, ML_MIN_SEQ, true},
    {503, "added_snapshot_id", NULL, ML_SNAPSHOT_ID, true},
    {504, "added_files_count", "added_data_files_count", ML_ADDED_FILES, true},
    {505, "existing_files_count", "existing_data_files_count", ML_EXISTING_FILES, true},
    {506, "deleted_files_count", "deleted_data_files_count", ML_DELETED_FILES, true},
    {512, "added_rows_count", NULL, ML_ADDED_ROWS, true},
    {513, "existing_rows_count", NULL, ML_EXISTING_ROWS, true},
    {514, "deleted_rows_count", NULL, ML_DELETED_ROWS, true},
    {507, "partitions", NULL, ML_PARTITIONS, false},
    {519, "key_metadata", NULL, ML_KEY_METADATA, false},
    {520, "first_row_id", NULL, ML_FIRST_ROW_ID, true},
};

struct icm_manifest_list_reader {
    icm__obj_iter it;
    const icm__avro_schema *schema;
    uint32_t root;
    uint8_t *plan;      /* slot per writer field of the root record */
    uint32_t path_node; /* the manifest_path field's type */
    icm__avro_skip_step *skips; /* fields before manifest_path, then the fields after it */
    size_t n_before, n_after;
    int version;
    const void *schema_name; /* the schema when cached (icm__list_row_filter), else NULL */
    const uint8_t *row_bytes; /* the row next_filtered delivered last, and its length */
    size_t row_len;
    icm_manifest_file row;
    icm__strpool strings;
    icm__buf summaries;  /* canonical re-encoding of non-canonical partition summaries */
    icm__ptrvec headers; /* alternating key, value copies handed out by _header() */
};

/* Old writers omit contains_nan (518) or order fields differently; such summaries are decoded
 * by field id and re-encoded in the canonical shape so entries stay copyable. */
static bool summaries_transcodable(const icm__avro_schema *s, uint32_t node)
{
    if (!icm__is_type(s, node, ICM__AVRO_ARRAY))
        return false;
    uint32_t item = s->nodes[node].child;
    return icm__is_type(s, item, ICM__AVRO_RECORD) &&
           icm__avro_record_find(s, item, 509, "contains_null") >= 0;
}

static int read_opt_bool(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c, int *out)
{
    const icm__avro_node *n = &s->nodes[node];
    *out = -1;
    if (n->type == ICM__AVRO_UNION) {
        uint32_t b = 0;
        int rc = icm__avro_read_branch(c, n, &b);
        if (rc < 0)
            return rc;
        node = s->branches[n->first + b];
        n = &s->nodes[node];
    }
    if (n->type == ICM__AVRO_NULL)
        return 0;
    if (n->type != ICM__AVRO_BOOLEAN)
        return icm__avro_skip(s, node, c);
    bool v = false;
    int rc = icm__avro_read_bool(c, &v);
    if (rc == 0)
        *out = v;
    return rc;
}

static void put_opt_bytes(icm__buf *b, const uint8_t *d, size_t l)
{
    icm__avro_put_long(b, d ? 1 : 0);
    if (d)
        icm__avro_put_bytes(b, d, l);
}

static int transcode_summary(const icm__avro_schema *s, uint32_t item, icm__avro_cur *c,
                             icm__buf *out)
{
    const icm__avro_node *rec = &s->nodes[item];
    int contains_null = 0, contains_nan = -1;
    const uint8_t *lo = NULL, *hi = NULL;
    size_t lo_len = 0, hi_len = 0;
    int rc = 0;
    for (uint32_t j = 0; j < rec->n && rc == 0; j++) {
        const icm__avro_field *f = &s->fields[rec->first + j];
        int id = f->field_id;
        if (id == ICM__AVRO_NO_ID)
            id = strcmp(f->name, "contains_null") == 0   ? 509
                 : strcmp(f->name, "contains_nan") == 0  ? 518
                 : strcmp(f->name, "lower_bound") == 0   ? 510
                 : strcmp(f->name, "upper_bound") == 0   ? 511
                                                         : -1;
        if (id == 509)
            rc = read_opt_bool(s, f->type, c, &contains_null);
        else if (id == 518)
            rc = read_opt_bool(s, f->type, c, &contains_nan);
        else if (id == 510 && icm__string_node(s, f->type))
            rc = icm__read_str(s, f->type, c, &lo, &lo_len);
        else if (id == 511 && icm__string_node(s, f->type))
            rc = icm__read_str(s, f->type, c, &hi, &hi_len);
        else
            rc = icm__avro_skip(s, f->type, c);
    }
    if (rc < 0)
        return rc;
    icm__avro_put_bool(out, contains_null == 1);
    icm__avro_put_long(out, contains_nan >= 0 ? 1 : 0);
    if (contains_nan >= 0)
        icm__avro_put_bool(out, contains_nan == 1);
    put_opt_bytes(out, lo, lo_len);
    put_opt_bytes(out, hi, hi_len);
    return out->oom ? ICM_ENOMEM : 0;
}

static int transcode_summaries(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c,
                               icm__buf *out, icm_raw *raw)
{
    const icm__avro_node *n = &s->nodes[node];
    if (n->type == ICM__AVRO_UNION) {
        uint32_t b = 0;
        int rc = icm__avro_read_branch(c, n, &b);
        if (rc < 0)
            return rc;
        node = s->branches[n->first + b];
        n = &s->nodes[node];
    }
    icm__buf_clear(out);
    if (n->type == ICM__AVRO_NULL) {
        *raw = (icm_raw){NULL, 0};
        return 0;
    }
    for (;;) {
        int64_t count = 0, size = 0;
        int rc = icm__avro_read_block_count(c, &count, &size);
        if (rc < 0)
            return rc;
        if (count > (int64_t)(c->end - c->p))
            return icm__avro_corrupt(c, "item count larger than the bytes left");
        icm__avro_put_long(out, count);
        if (count == 0)
            break;
        for (int64_t i = 0; i < count; i++) {
            rc = transcode_summary(s, n->child, c, out);
            if (rc < 0)
                return rc;
        }
    }
    if (out->oom)
        return ICM_ENOMEM;
    *raw = (icm_raw){(const uint8_t *)out->data, out->len};
    return 0;
}

static int ml_compile(icm_manifest_list_reader *r, const char *location)
{
    const icm__avro_schema *s = r->schema;
    /* The objects are the records themselves: a root union (even ["null", record]) would put a
     * branch index before each, which ml_decode does not read. */
    r->root = s->root;
    const icm__avro_node *rec = &s->nodes[r->root];
    if (rec->type != ICM__AVRO_RECORD)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                              "not a manifest list: Avro schema is not a record");
    r->plan = icm__calloc(rec->n ? rec->n : 1, 1);
    if (r->plan == NULL)
        return ICM_ENOMEM;
    bool seen[ML_SLOT_COUNT] = {false};
    for (size_t k = 0; k < ICM__ARRAY_LEN(ML_FIELDS); k++) {
        int i = icm__avro_record_find(s, r->root, ML_FIELDS[k].id, ML_FIELDS[k].name);
        if (i < 0 && ML_FIELDS[k].alt != NULL)
            i = icm__avro_record_find(s, r->root, ML_FIELDS[k].id, ML_FIELDS[k].alt);
        if (i < 0)
            continue;
        uint32_t t = s->fields[rec->first + (uint32_t)i].type;
        const char *name = ML_FIELDS[k].name;
        uint8_t slot = ML_FIELDS[k].slot;
        if (ML_FIELDS[k].numeric && !icm__numeric_node(s, t))
            return icm__schema_error(location, "manifest list field is not an int or long", name);
        if (slot == ML_PATH && !icm__string_node(s, t))
            return icm__schema_error(location, "manifest list field is not a string", name);
        int nbr;
        uint32_t inner = icm__avro_unwrap_optional(s, t, &nbr);
        if (slot == ML_PARTITIONS && !icm__shape_ok(s, inner, ICM__SHAPE_FIELD_SUMMARIES))
            slot = summaries_transcodable(s, inner) ? ML_PARTITIONS_TRANSCODE : ML_SKIP;
        if (slot == ML_KEY_METADATA && !icm__shape_ok(s, inner, ICM__SHAPE_BYTES))
            return icm__schema_error(location, "manifest list field is not bytes", name);
        r->plan[i] = slot;
        seen[ML_FIELDS[k].slot] = true;
    }
    if (!seen[ML_PATH])
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, location,
                              "not a manifest list: no manifest_path field (500)");
    r->version = seen[ML_FIRST_ROW_ID] ? 3 : (seen[ML_CONTENT] || seen[ML_SEQ]) ? 2 : 1;
    return 0;
}

/* The skip program of the fields before and after manifest_path (for next_filtered). */
static int ml_compile_skips(icm_manifest_list_reader *r)
{
    const icm__avro_schema *s = r->schema;
    const icm__avro_node *rec = &s->nodes[r->root];
    r->skips = icm__calloc(rec->n, sizeof *r->skips);
    if (r->skips == NULL)
        return ICM_ENOMEM;
    size_t n = 0;
    for (uint32_t i = 0; i < rec->n; i++) {
        uint32_t t = s->fields[rec->first + i].type;
        if (r->plan[i] != ML_PATH) {
            icm__avro_skip_step_add(s, r->skips, &n, r->n_before, t);
            continue;
        }
        r->path_node = t;
        r->n_before = n;
    }
    r->n_after = n - r->n_before;
    return 0;
}

int icm_manifest_list_reader_open(icm_manifest_list_reader **out, const void *data, size_t len,
                                  const char *location,
                                  const icm_manifest_list_read_options *opts)
{
    return icm__manifest_list_reader_open_cached(out, data, len, location, opts, NULL);
}

int icm__manifest_list_reader_open_cached(icm_manifest_list_reader **out, const void *data,
                                          size_t len, const char *location,
                                          const icm_manifest_list_read_options *opts,
                                          icm__avro_schema_cache *schemas)
{
    *out = NULL;
    int vrc = ICM__MANIFEST_OPTS_CHECK("icm_manifest_list_reader_open", opts,
                                       ICM_MANIFEST_LIST_READ_OPTIONS_VERSION);
    if (vrc < 0)
        return vrc;
    icm_manifest_list_reader *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return ICM_ENOMEM;
    int rc = icm__avro_reader_open_cached(&r->it.avro, data, len, location, schemas);
    int header = 0;
    if (rc == 0) {
        r->schema = icm__avro_reader_schema(r->it.avro);
        r->schema_name = icm__avro_reader_schema_is_cached(r->it.avro) ? r->schema : NULL;
        rc = icm__version_from_header(r->it.avro, &header);
    }
    if (rc == 0)
        rc = ml_compile(r, location);
    if (rc == 0)
        rc = ml_compile_skips(r);
    if (rc < 0) {
        icm_manifest_list_reader_free(r);
        return rc;
    }
    r->version = icm__decide_version(header, r->version, opts ? opts->format_version : 0);
    *out = r;
    return 0;
}

void icm__manifest_list_reader_use_inflated(icm_manifest_list_reader *r,
                                            const icm__avro_inflated *inflated)
{
    icm__avro_reader_use_inflated(r->it.avro, inflated);
}

static void ml_reset(icm_manifest_file *m)
{
    memset(m, 0, sizeof *m);
    m->struct_size = sizeof *m;
    m->manifest_length = -1;
    m->added_files_count = m->existing_files_count = m->deleted_files_count = -1;
    m->added_rows_count = m->existing_rows_count = m->deleted_rows_count = -1;
}

static int ml_decode(icm_manifest_list_reader *r)
{
    const icm__avro_schema *s = r->schema;
    const icm__avro_node *rec = &s->nodes[r->root];
    icm__avro_cur *c = &r->it.cur;
    icm_manifest_file *m = &r->row;
    ml_reset(m);
    const uint8_t *path = NULL;
    size_t path_len = 0;
    bool has_path = false, has_seq = false, has_min = false, has_content = false, has = false;
    int64_t v = 0;
    int rc = 0;
    for (uint32_t i = 0; i < rec->n && rc == 0; i++) {
        uint32_t t = s->fields[rec->first + i].type;
        switch (r->plan[i]) {
        case ML_SKIP:
            rc = icm__avro_skip(s, t, c);
            break;
        case ML_PATH:
            rc = icm__read_str(s, t, c, &path, &path_len);
            has_path = path != NULL;
            break;
        case ML_PARTITIONS:
            rc = icm__read_raw(s, t, c, &m->partitions);
            break;
        case ML_PARTITIONS_TRANSCODE:
            rc = transcode_summaries(s, t, c, &r->summaries, &m->partitions);
            break;
        case ML_KEY_METADATA:
            rc = icm__read_raw(s, t, c, &m->key_metadata);
            break;
        default:
            rc = icm__read_num(s, t, c, &v, &has);
            if (rc < 0 || !has)
                break;
            switch (r->plan[i]) {
            case ML_LENGTH: m->manifest_length = v; break;
            case ML_SPEC_ID: m->partition_spec_id = (int32_t)v; break;
            case ML_CONTENT: m->content = (icm_manifest_content)v; has_content = true; break;
            case ML_SEQ: m->sequence_number = v; has_seq = true; break;
            case ML_MIN_SEQ: m->min_sequence_number = v; has_min = true; break;
            case ML_SNAPSHOT_ID:
                m->added_snapshot_id = v;
                m->has_added_snapshot_id = true;
                break;
            case ML_ADDED_FILES:
                m->added_files_count = (int32_t)v;
                m->has_added_files_count = true;
                break;
            case ML_EXISTING_FILES:
                m->existing_files_count = (int32_t)v;
                m->has_existing_files_count = true;
                break;
            case ML_DELETED_FILES:
                m->deleted_files_count = (int32_t)v;
                m->has_deleted_files_count = true;
                break;
            case ML_ADDED_ROWS: m->added_rows_count = v; m->has_added_rows_count = true; break;
            case ML_EXISTING_ROWS:
                m->existing_rows_count = v;
                m->has_existing_rows_count = true;
                break;
            case ML_DELETED_ROWS:
                m->deleted_rows_count = v;
                m->has_deleted_rows_count = true;
                break;
            case ML_FIRST_ROW_ID: m->first_row_id = v; m->has_first_row_id = true; break;
            default: break;
            }
        }
    }
    if (rc < 0)
        return rc;
    if (!has_path)
        return icm__avro_corrupt(c, "manifest_path is null");
    /* Every later use of the path is a C string: one with a NUL byte would name another file. */
    if (memchr(path, '\0', path_len) != NULL)
        return icm__avro_corrupt(c, "manifest_path contains a NUL byte");
    if (has_content && (m->content < 0 || m->content > 1))
        return icm__avro_corrupt(c, "manifest content is not 0 (data) or 1 (deletes)");
    /* v1 (Appendix E): sequence numbers 0, content DATA. A v2+ list must carry them. */
    if (r->version >= 2 && (!has_seq || !has_min))
        return icm__avro_corrupt(c, "v2 manifest list entry without sequence numbers");
    rc = icm__strpool_reserve(&r->strings, path_len + 1);
    if (rc < 0)
        return rc;
    memcpy(r->strings.buf, path, path_len);
    r->strings.buf[path_len] = '\0';
    m->manifest_path = r->strings.buf;
    m->manifest_path_len = path_len;
    return 0;
}

int icm_manifest_list_reader_next(const icm_manifest_file **out, icm_manifest_list_reader *r)
{
    *out = NULL;
    int rc = icm__obj_iter_next(&r->it);
    if (rc == 0)
        rc = ml_decode(r);
    if (rc == 0)
        *out = &r->row;
    return rc;
}

int icm__manifest_list_reader_next_filtered(icm_manifest_list_reader *r,
                                            const icm__list_row_filter *f,
                                            const icm_manifest_file **out)
{
    *out = NULL;
    const void *schema = r->schema_name;
    for (;;) {
        int rc = icm__obj_iter_next(&r->it);
        if (rc < 0)
            return rc;
        const uint8_t *row = r->it.cur.p;
        if (f->same_rows != NULL && schema != NULL) {
            size_t rows = 0, max_rows = (size_t)r->it.left + 1;
            size_t n = f->same_rows(row, (size_t)(r->it.cur.end - row), max_rows, schema,
                                    f->payload, &rows);
            if (n > 0) { /* (1 <= rows <= max_rows, the filter's contract) */
                r->it.cur.p += n;
                r->it.left -= (int64_t)(rows - 1);
                continue;
            }
        }
        const uint8_t *path = NULL;
        size_t len = 0;
        rc = icm__avro_skip_steps(r->schema, r->skips, r->n_before, &r->it.cur);
        if (rc == 0)
            rc = icm__read_str(r->schema, r->path_node, &r->it.cur, &path, &len);
        if (rc < 0)
            return rc;
        if (path != NULL && f->seen_path(path, len, f->payload)) {
            rc = icm__avro_skip_steps(r->schema, r->skips + r->n_before, r->n_after,
                                      &r->it.cur);
            if (rc < 0)
                return rc;
            if (f->row_end != NULL)
                f->row_end(row, (size_t)(r->it.cur.p - row), schema, f->payload);
            continue;
        }
        r->it.cur.p = row; /* wanted (or a null path, which ml_decode reports): decode it all */
        rc = ml_decode(r);
        if (rc < 0)
            return rc;
        r->row_bytes = row;
        r->row_len = (size_t)(r->it.cur.p - row);
        *out = &r->row;
        return 0;
    }
}

void icm__manifest_list_reader_last_row(const icm_manifest_list_reader *r, const uint8_t **row,
                                        size_t *len, const void **schema)
{
    *row = r->row_bytes;
    *len = r->row_len;
    *schema = r->schema_name;
}

int icm_manifest_list_reader_format_version(const icm_manifest_list_reader *r)
{
    return r->version;
}

/* Copy of a header value cached in the reader; *out NULL when absent. */

const char *icm_manifest_list_reader_header(icm_manifest_list_reader *r, const char *key)
{
    const char *v;
    icm__header_copy(&r->headers, r->it.avro, key, &v);
    return v;
}

void icm_manifest_list_reader_free(icm_manifest_list_reader *r)
{
    if (r == NULL)
        return;
    icm__avro_reader_free(r->it.avro);
    icm__free(r->plan);
    icm__free(r->skips);
    icm__free(r->strings.buf);
    icm__buf_dispose(&r->summaries);
    icm__ptrvec_dispose(&r->headers, icm__free);
    icm__free(r);
}
