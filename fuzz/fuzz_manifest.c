/*
 * fuzz/fuzz_manifest.c: the manifest list and manifest decoders on arbitrary bytes (lists also
 * through a schema cache with the expiry walk's row filter, which must agree row for row, and
 * then again with a filter that claims runs of rows it knows byte for byte), with every field,
 * with the expiry projection and with inheritance from a manifest list entry; the entry views
 * of the view projections must equal the entries; a manifest that decodes is also copied
 * through icm_manifest_writer_new_like() and read back, and the copy must hold the same number
 * of entries.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/manifest.h"
#include "manifest/bulk_reader.h"
#include "manifest/manifest_internal.h"

const char *const icm_fuzz_seed_suffixes[] = {".avro", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The row filter of the expiry walk's fast path: here it claims paths whose byte sum is even. */
static bool skip_even(const uint8_t *path, size_t len, void *payload)
{
    (void)payload;
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += path[i];
    return sum % 2 == 0;
}

/* Bytes kept by the checks below; the harness aborts when memory runs out. */
typedef struct byte_log {
    uint8_t *p;
    size_t len, cap;
} byte_log;

/* Append n bytes; their offset in the log. */
static size_t log_put(byte_log *b, const void *data, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (p == NULL)
            abort();
        b->p = p;
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    return b->len - n;
}

/* One row of a read, in order: its bytes (claimed or delivered through the row filter) and,
 * for a row the reader delivered, its path. */
typedef struct row_rec {
    size_t at, len;           /* in list_rows.bytes */
    size_t path_at, path_len; /* in list_rows.paths */
    bool delivered;
} row_rec;

typedef struct list_rows {
    byte_log bytes, paths;
    row_rec *v;
    size_t n, cap;
    const void *schema; /* the writer schema the filter was told, NULL when not cached */
} list_rows;

static void rows_add(list_rows *l, const uint8_t *row, size_t len, const char *path,
                     size_t path_len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        row_rec *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            abort();
        l->v = v;
        l->cap = cap;
    }
    row_rec *x = &l->v[l->n++];
    x->at = log_put(&l->bytes, row, len);
    x->len = len;
    x->delivered = path != NULL;
    x->path_at = log_put(&l->paths, path, path != NULL ? path_len : 0);
    x->path_len = path != NULL ? path_len : 0;
}

static void rows_free(list_rows *l)
{
    free(l->bytes.p);
    free(l->paths.p);
    free(l->v);
}

static bool row_has_path(const list_rows *l, size_t i, const char *path, size_t len)
{
    const row_rec *x = &l->v[i];
    return x->delivered && x->path_len == len && memcmp(l->paths.p + x->path_at, path, len) == 0;
}

static bool row_has_bytes(const list_rows *l, size_t i, const uint8_t *row, size_t len)
{
    const row_rec *x = &l->v[i];
    return x->len == len && memcmp(l->bytes.p + x->at, row, len) == 0;
}

/* The first pass's row_end: the library reports the rows seen_path claimed. */
static void record_claimed(const uint8_t *row, size_t len, const void *schema, void *payload)
{
    list_rows *l = payload;
    if (schema != l->schema)
        abort(); /* one reader, one writer schema */
    rows_add(l, row, len, NULL, 0);
}

/* The second pass: `seen` is the first pass's rows; `at` the index of the row the reader is
 * at, kept by every row claimed (by bytes or path) or delivered. */
typedef struct replay {
    const list_rows *seen;
    size_t at;
    unsigned long calls;
} replay;

/* At every odd-numbered call, claim min(2, max_rows) rows (or what is left of the first pass)
 * when the bytes here are those rows'. The row here is the first pass's row `at` (the same
 * bytes read the same way): its bytes must be there. */
static size_t claim_known(const uint8_t *row, size_t avail, size_t max_rows, const void *schema,
                          void *payload, size_t *rows)
{
    replay *p = payload;
    const list_rows *l = p->seen;
    if (schema == NULL)
        abort(); /* only called under a cached schema */
    if (p->calls++ % 2 != 0 || p->at >= l->n || schema != l->schema)
        return 0;
    if (l->v[p->at].len > avail || !row_has_bytes(l, p->at, row, l->v[p->at].len))
        abort(); /* the row here is not the row the first pass had here */
    size_t want = max_rows < 2 ? max_rows : 2, k = 0, n = 0;
    for (; k < want && p->at + k < l->n; k++) {
        const row_rec *x = &l->v[p->at + k];
        if (x->len > avail - n || !row_has_bytes(l, p->at + k, row + n, x->len))
            break;
        n += x->len;
    }
    if (n == 0)
        return 0;
    p->at += k;
    *rows = k;
    return n;
}

/* The second pass's row_end: a row seen_path claimed must be the first pass's claimed row. */
static void replay_claimed(const uint8_t *row, size_t len, const void *schema, void *payload)
{
    replay *p = payload;
    const list_rows *l = p->seen;
    (void)schema;
    if (p->at >= l->n || l->v[p->at].delivered || !row_has_bytes(l, p->at, row, len))
        abort();
    p->at++;
}

/* Read as a manifest list, plainly and then through a schema cache with the row filter: when
 * the plain read decodes whole, the filtered read must too, delivering exactly the rows the
 * filter did not claim, in order. A second filtered read of the same bytes under the same
 * cache, whose filter also claims runs of rows by their bytes (recorded by the first), must
 * stop as the first did, every row it sees being the first read's row at that place. */
static void read_list(const uint8_t *data, size_t size)
{
    icm_manifest_list_reader *r = NULL;
    if (icm_manifest_list_reader_open(&r, data, size, "fuzz.avro", NULL) != 0)
        return;
    const icm_manifest_file *m;
    list_rows plain = {0};
    int rc;
    while ((rc = icm_manifest_list_reader_next(&m, r)) == 0)
        rows_add(&plain, NULL, 0, m->manifest_path, m->manifest_path_len);
    (void)icm_manifest_list_reader_header(r, "snapshot-id");
    icm_manifest_list_reader_free(r);

    icm__avro_schema_cache *cache = NULL;
    if (icm__avro_schema_cache_new(&cache) != 0)
        abort();
    r = NULL;
    if (icm__manifest_list_reader_open_cached(&r, data, size, "fuzz.avro", NULL, cache) != 0)
        abort(); /* it opened a moment ago */
    list_rows seen = {0};
    const uint8_t *row;
    size_t len;
    icm__manifest_list_reader_last_row(r, &row, &len, &seen.schema);
    icm__list_row_filter f = {skip_even, NULL, record_claimed, &seen};
    int frc;
    while ((frc = icm__manifest_list_reader_next_filtered(r, &f, &m)) == 0) {
        const void *schema;
        icm__manifest_list_reader_last_row(r, &row, &len, &schema);
        if (schema != seen.schema || m->manifest_path == NULL)
            abort();
        rows_add(&seen, row, len, m->manifest_path, m->manifest_path_len);
    }
    icm_manifest_list_reader_free(r);
    if (rc == ICM_ITEROVER) {
        if (frc != ICM_ITEROVER || seen.n != plain.n)
            abort();
        for (size_t i = 0; i < plain.n; i++) {
            const char *path = (const char *)plain.paths.p + plain.v[i].path_at;
            size_t n = plain.v[i].path_len;
            bool claimed = skip_even((const uint8_t *)path, n, NULL);
            if (claimed ? seen.v[i].delivered : !row_has_path(&seen, i, path, n))
                abort();
        }
    }

    r = NULL;
    if (icm__manifest_list_reader_open_cached(&r, data, size, "fuzz.avro", NULL, cache) != 0)
        abort();
    replay p = {&seen, 0, 0};
    icm__list_row_filter g = {skip_even, claim_known, replay_claimed, &p};
    int grc;
    while ((grc = icm__manifest_list_reader_next_filtered(r, &g, &m)) == 0) {
        const void *schema;
        icm__manifest_list_reader_last_row(r, &row, &len, &schema);
        if (p.at >= seen.n || !row_has_bytes(&seen, p.at, row, len) ||
            !row_has_path(&seen, p.at, m->manifest_path, m->manifest_path_len))
            abort();
        p.at++;
    }
    icm_manifest_list_reader_free(r);
    icm__avro_schema_cache_free(cache);
    if (grc != frc || p.at != seen.n)
        abort();
    rows_free(&seen);
    rows_free(&plain);
}

/* Count entries; -1 when decoding failed. */
static long read_manifest(const void *data, size_t size, uint64_t fields,
                          const icm_manifest_file *mf)
{
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.fields = fields;
    o.manifest = mf;
    icm_manifest_reader *r = NULL;
    if (icm_manifest_reader_open(&r, data, size, "fuzz.avro", &o) != 0)
        return -1;
    const icm_manifest_entry *e;
    long n = 0;
    int rc;
    while ((rc = icm_manifest_reader_next(&e, r)) == 0)
        n++;
    icm_manifest_reader_free(r);
    return rc == ICM_ITEROVER ? n : -1;
}

static bool raw_equal(icm_raw a, icm_raw b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

/* A view must hold what the entry of the same projection holds; its snapshot id and file
 * sequence number as written, which the entry's are too without a list row to inherit from
 * (`as_written`; v1 entries aside, which have sequence number 0 by the spec). */
static bool view_is_entry(const icm__entry_view *v, const icm_manifest_entry *e,
                          bool as_written)
{
    const icm_data_file *d = &e->data_file;
    bool ids = !as_written ||
               (v->has_snapshot_id == e->has_snapshot_id &&
                (!v->has_snapshot_id || v->snapshot_id == e->snapshot_id) &&
                v->has_file_sequence_number == e->has_file_sequence_number &&
                (!v->has_file_sequence_number ||
                 v->file_sequence_number == e->file_sequence_number));
    return v->status == e->status && v->content == d->content &&
           v->file_format == d->file_format && v->file_size_in_bytes == d->file_size_in_bytes &&
           v->file_path_len == d->file_path_len &&
           (v->file_path_len == 0 || memcmp(v->file_path, d->file_path, v->file_path_len) == 0) &&
           v->record_count == d->record_count && raw_equal(v->lower_bounds, d->lower_bounds) &&
           raw_equal(v->upper_bounds, d->upper_bounds) && ids &&
           (v->referenced_data_file == NULL) == (d->referenced_data_file == NULL) &&
           (v->referenced_data_file == NULL ||
            (v->referenced_data_file_len == strlen(d->referenced_data_file) &&
             memcmp(v->referenced_data_file, d->referenced_data_file,
                    v->referenced_data_file_len) == 0)) &&
           v->content_offset == (d->has_content_offset ? d->content_offset : -1) &&
           v->content_size_in_bytes ==
               (d->has_content_size_in_bytes ? d->content_size_in_bytes : -1);
}

/* The view's partition key is the one the entry's tuple gives (reader.c). */
static bool key_is_entrys(const icm__entry_view *v, const icm_manifest_entry *e,
                          const icm_manifest_reader *r)
{
    icm__partition_key k = icm__manifest_reader_partition_key(r, e->data_file.partition);
    return v->partition.shape == k.shape && v->partition.values == k.values;
}

/* Read with `fields` as views and, by a second reader, as entries: both stop with the same code
 * after the same entries, each view equal to its entry. */
static void check_views(const uint8_t *data, size_t size, uint64_t fields,
                        const icm_manifest_file *mf)
{
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.fields = fields;
    o.manifest = mf;
    icm_manifest_reader *rv = NULL, *re = NULL;
    int vrc = icm_manifest_reader_open(&rv, data, size, "fuzz.avro", &o);
    int erc = icm_manifest_reader_open(&re, data, size, "fuzz.avro", &o);
    if (vrc != erc)
        abort();
    while (vrc == 0 && erc == 0) {
        icm__entry_view v;
        const icm_manifest_entry *e;
        vrc = icm__manifest_reader_next_view(rv, &v);
        erc = icm_manifest_reader_next(&e, re);
        bool as_written = mf == NULL && icm_manifest_reader_format_version(re) >= 2;
        if (vrc != erc || (vrc == 0 && !view_is_entry(&v, e, as_written)))
            abort();
        if (vrc == 0 && !key_is_entrys(&v, e, re))
            abort();
        /* the bounds digest parses the maps' bytes (bulk_reader.c): any bytes, the same
         * digest each time, 0 only with no pair */
        if (vrc == 0 && icm__bounds_digest(v.lower_bounds, v.upper_bounds) !=
                            icm__bounds_digest(v.lower_bounds, v.upper_bounds))
            abort();
        if (vrc == 0 && v.lower_bounds.len == 0 && v.upper_bounds.len == 0 &&
            icm__bounds_digest(v.lower_bounds, v.upper_bounds) != 0)
            abort();
    }
    icm_manifest_reader_free(rv);
    icm_manifest_reader_free(re);
}

static void copy_manifest(const uint8_t *data, size_t size, long entries)
{
    icm_manifest_reader *r = NULL;
    if (icm_manifest_reader_open(&r, data, size, "fuzz.avro", NULL) != 0)
        abort(); /* it opened a moment ago */
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.codec = ICM_AVRO_CODEC_NULL;
    o.compression_level = -1;
    icm_manifest_writer *w = NULL;
    int rc = icm_manifest_writer_new_like(&w, r, &o);
    const icm_manifest_entry *e;
    long added = 0;
    while (rc == 0 && (rc = icm_manifest_reader_next(&e, r)) == 0) {
        /* The writer refuses some decodable entries (e.g. v1 without snapshot id). */
        if (icm_manifest_writer_add(w, e) == 0)
            added++;
    }
    char *out = NULL;
    size_t out_len = 0;
    if (rc == ICM_ITEROVER && icm_manifest_writer_finish(&out, &out_len, NULL, w) == 0) {
        long again = read_manifest(out, out_len, 0, NULL);
        if (again != added || added > entries)
            abort(); /* a copy must read back whole */
    }
    icm_free(out);
    icm_manifest_writer_free(w);
    icm_manifest_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0) /* the input itself as two bounds maps */
        (void)icm__bounds_digest((icm_raw){data, size / 2},
                                 (icm_raw){data + size / 2, size - size / 2});
    read_list(data, size);
    long n = read_manifest(data, size, 0, NULL);
    icm_manifest_file mf = {0};
    mf.has_added_snapshot_id = true;
    mf.added_snapshot_id = 42;
    mf.sequence_number = 7;
    mf.has_first_row_id = true;
    mf.first_row_id = 100;
    (void)read_manifest(data, size, ICM_MANIFEST_FIELDS_EXPIRY, &mf);
    static const uint64_t view_fields[] = {
        ICM_MANIFEST_FIELD_FILE_PATH,
        ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |
            ICM_MANIFEST_FIELD_FILE_SIZE,
        /* the walk's described reads (bulk_reader.c) */
        ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |
            ICM_MANIFEST_FIELD_FILE_SIZE | ICM_MANIFEST_FIELD_SNAPSHOT_ID |
            ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS | ICM_MANIFEST_FIELD_RECORD_COUNT |
            ICM_MANIFEST_FIELD_METRICS | ICM_MANIFEST_FIELD_PARTITION |
            ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE | ICM_MANIFEST_FIELD_CONTENT_OFFSET,
    };
    for (size_t i = 0; i < sizeof view_fields / sizeof view_fields[0]; i++) {
        check_views(data, size, view_fields[i], NULL);
        check_views(data, size, view_fields[i], &mf);
    }
    if (n >= 0)
        copy_manifest(data, size, n);
    return 0;
}
