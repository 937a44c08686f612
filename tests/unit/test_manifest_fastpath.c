/*
 * tests/unit/test_manifest_fastpath.c: the shortcuts of the expiry hot path give the same
 * answers as the plain readers:
 *  - a manifest-list read with a row filter returns exactly the unfiltered rows the filter does
 *    not claim, field for field, on every manifest list of the shared fixtures;
 *  - readers sharing an Avro schema cache decode every fixture list and manifest exactly as
 *    readers without one (more schemas than the cache holds included);
 *  - deflate blocks that inflate far beyond the first output guess (the buffer is grown and the
 *    block inflated again) and corrupt deflate data;
 *  - the exact string set (util/strset.h);
 *  - a list read whose filter claims runs of rows by their bytes (same_rows) delivers exactly
 *    the other rows, and row_end sees every row's bytes;
 *  - manifest entry views (the compiled view program) equal the decoded entries on every
 *    fixture manifest, for each projection a view serves and one it does not, partition keys
 *    included.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <sys/stat.h>

#include "avro/avro.h"
#include "icemaint/manifest.h"
#include "manifest/manifest_internal.h"
#include "testutil.h"
#include "util/strset.h"

/* ---- fixture files ---- */

typedef struct file_list {
    char **paths;
    size_t n, cap;
} file_list;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void collect(const char *dir, file_list *out)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char *child = icmt_sprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(child, &st) == 0 && S_ISDIR(st.st_mode)) {
            collect(child, out);
            free(child);
        } else if (ends_with(child, ".avro")) {
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 64;
                out->paths = realloc(out->paths, out->cap * sizeof *out->paths);
                assert_non_null(out->paths);
            }
            out->paths[out->n++] = child;
        } else {
            free(child);
        }
    }
    closedir(d);
}

static void file_list_free(file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
}

static file_list fixture_avro_files(void)
{
    file_list l = {NULL, 0, 0};
    collect(icmt_fixtures_dir(), &l);
    return l;
}

/* ---- one decoded row, as a comparable string ---- */

static char *row_text(const icm_manifest_file *m)
{
    /* Every member the reader fills, partition summaries and key metadata as hex. */
    size_t extra = 2 * (m->partitions.len + m->key_metadata.len) + 8;
    char *hex = calloc(1, extra);
    assert_non_null(hex);
    size_t k = 0;
    for (size_t i = 0; i < m->partitions.len; i++)
        k += (size_t)snprintf(hex + k, extra - k, "%02x", m->partitions.data[i]);
    hex[k++] = '|';
    for (size_t i = 0; i < m->key_metadata.len; i++)
        k += (size_t)snprintf(hex + k, extra - k, "%02x", m->key_metadata.data[i]);
    char *t = icmt_sprintf(
        "%.*s len=%lld spec=%d content=%d seq=%lld min=%lld snap=%d:%lld files=%d:%d,%d:%d,%d:%d "
        "rows=%d:%lld,%d:%lld,%d:%lld frid=%d:%lld p=%s",
        (int)m->manifest_path_len, m->manifest_path, (long long)m->manifest_length,
        m->partition_spec_id, (int)m->content, (long long)m->sequence_number,
        (long long)m->min_sequence_number, m->has_added_snapshot_id,
        (long long)m->added_snapshot_id, m->has_added_files_count, m->added_files_count,
        m->has_existing_files_count, m->existing_files_count, m->has_deleted_files_count,
        m->deleted_files_count, m->has_added_rows_count, (long long)m->added_rows_count,
        m->has_existing_rows_count, (long long)m->existing_rows_count,
        m->has_deleted_rows_count, (long long)m->deleted_rows_count, m->has_first_row_id,
        (long long)m->first_row_id, hex);
    free(hex);
    return t;
}

typedef struct rows {
    char **text;
    char **path; /* as written */
    size_t n, cap;
    int end_rc;
} rows;

static void rows_push(rows *r, const icm_manifest_file *m)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->text = realloc(r->text, r->cap * sizeof *r->text);
        r->path = realloc(r->path, r->cap * sizeof *r->path);
        assert_true(r->text != NULL && r->path != NULL);
    }
    r->text[r->n] = row_text(m);
    r->path[r->n] = icmt_sprintf("%.*s", (int)m->manifest_path_len, m->manifest_path);
    r->n++;
}

static void rows_free(rows *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->text[i]);
        free(r->path[i]);
    }
    free(r->text);
    free(r->path);
}

/* The filter under test: claims paths whose byte sum is even, so about half the rows of a list
 * are skipped, in no particular pattern. */
static bool skip_even(const uint8_t *path, size_t len, void *payload)
{
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += path[i];
    ++*(size_t *)payload;
    return sum % 2 == 0;
}

static bool claimed(const char *path)
{
    size_t calls = 0;
    return skip_even((const uint8_t *)path, strlen(path), &calls);
}

/* Read a list whole; filter NULL = every row. Returns the reader's open code. */
static int read_rows(const char *path, const char *data, size_t len,
                     icm__avro_schema_cache *cache, icm__manifest_path_filter filter,
                     size_t *filter_calls, rows *out)
{
    icm_manifest_list_reader *r = NULL;
    int rc = icm__manifest_list_reader_open_cached(&r, data, len, path, NULL, cache);
    if (rc != 0)
        return rc;
    const icm_manifest_file *m;
    icm__list_row_filter f = {filter, NULL, NULL, filter_calls};
    while ((rc = filter ? icm__manifest_list_reader_next_filtered(r, &f, &m)
                        : icm_manifest_list_reader_next(&m, r)) == 0)
        rows_push(out, m);
    out->end_rc = rc;
    icm_manifest_list_reader_free(r);
    return 0;
}

static void test_filtered_rows_are_the_unclaimed_rows(void **state)
{
    (void)state;
    file_list files = fixture_avro_files();
    if (files.n == 0)
        icmt_skip_because("no Avro file below the fixtures folder %s", icmt_fixtures_dir());
    int lists = 0;
    size_t skipped = 0, kept = 0;
    for (size_t f = 0; f < files.n; f++) {
        size_t len;
        char *data = icmt_read_file(files.paths[f], &len);
        assert_non_null(data);
        rows all = {0}, some = {0};
        size_t calls = 0;
        if (read_rows(files.paths[f], data, len, NULL, NULL, NULL, &all) != 0) {
            free(data); /* not a manifest list */
            continue;
        }
        lists++;
        assert_int_equal(read_rows(files.paths[f], data, len, NULL, skip_even, &calls, &some),
                         0);
        /* A list that decodes whole decodes whole filtered, minus exactly the claimed rows. */
        if (all.end_rc == ICM_ITEROVER) {
            assert_int_equal(some.end_rc, ICM_ITEROVER);
            assert_int_equal(calls, all.n); /* asked once per row */
            size_t j = 0;
            for (size_t i = 0; i < all.n; i++) {
                if (claimed(all.path[i])) {
                    skipped++;
                    continue;
                }
                assert_true(j < some.n);
                assert_string_equal(some.text[j], all.text[i]);
                j++;
                kept++;
            }
            assert_int_equal(j, some.n);
        } else {
            assert_int_equal(all.end_rc, ICM_EINVALID); /* the encrypted list */
        }
        rows_free(&all);
        rows_free(&some);
        free(data);
    }
    print_message("%d manifest lists: %zu rows skipped, %zu decoded\n", lists, skipped, kept);
    assert_int_equal(lists, 227); /* as test_manifest_fixtures counts them */
    assert_true(skipped > 100 && kept > 100);
    file_list_free(&files);
}

/* Decode one file as a list or a manifest into text lines; with or without a cache. */
static void decode_text(const char *path, const char *data, size_t len,
                        icm__avro_schema_cache *cache, icm__buf *out)
{
    rows r = {0};
    if (read_rows(path, data, len, cache, NULL, NULL, &r) == 0) {
        for (size_t i = 0; i < r.n; i++)
            icm__buf_printf(out, "%s\n", r.text[i]);
        icm__buf_printf(out, "end %d\n", r.end_rc);
        rows_free(&r);
        return;
    }
    icm_manifest_reader *mr = NULL;
    int rc = icm__manifest_reader_open_cached(&mr, data, len, path, NULL, cache);
    icm__buf_printf(out, "open %d %s\n", rc, rc ? icm_error_last()->message : "");
    if (rc != 0)
        return;
    const icm_manifest_entry *e;
    while ((rc = icm_manifest_reader_next(&e, mr)) == 0)
        icm__buf_printf(out, "%d %lld %.*s %lld\n", (int)e->status,
                        (long long)e->sequence_number, (int)e->data_file.file_path_len,
                        e->data_file.file_path, (long long)e->data_file.record_count);
    icm__buf_printf(out, "end %d\n", rc);
    icm_manifest_reader_free(mr);
}

static void test_schema_cache_decodes_the_same(void **state)
{
    (void)state;
    file_list files = fixture_avro_files();
    if (files.n == 0)
        icmt_skip_because("no Avro file below the fixtures folder %s", icmt_fixtures_dir());
    icm__avro_schema_cache *cache = NULL;
    icmt_ok(icm__avro_schema_cache_new(&cache));
    /* Twice over every file: the second round takes every schema the cache kept from it. */
    for (int round = 0; round < 2; round++) {
        for (size_t f = 0; f < files.n; f++) {
            size_t len;
            char *data = icmt_read_file(files.paths[f], &len);
            assert_non_null(data);
            icm__buf plain = ICM__BUF_INIT, cached = ICM__BUF_INIT;
            decode_text(files.paths[f], data, len, NULL, &plain);
            decode_text(files.paths[f], data, len, cache, &cached);
            assert_false(plain.oom || cached.oom);
            assert_string_equal(cached.data, plain.data);
            icm__buf_dispose(&plain);
            icm__buf_dispose(&cached);
            free(data);
        }
    }
    icm__avro_schema_cache_free(cache);
    file_list_free(&files);
}

/* ---- deflate ---- */

/* A container of one deflate block whose objects are `n` copies of one long string. */
static char *compressible_container(size_t n, size_t *len)
{
    icm__avro_writer *w = NULL;
    icmt_ok(icm__avro_writer_new(&w, "\"string\"", ICM__AVRO_CODEC_DEFLATE, 6, SIZE_MAX / 2));
    char s[1000];
    memset(s, 'a', sizeof s - 1);
    s[sizeof s - 1] = '\0';
    for (size_t i = 0; i < n; i++) {
        icm__avro_put_str(icm__avro_writer_obj(w), s);
        icmt_ok(icm__avro_writer_end_obj(w));
    }
    char *out = NULL;
    icmt_ok(icm__avro_writer_finish(w, &out, len));
    icm__avro_writer_free(w);
    return out;
}

static void test_deflate_far_beyond_the_first_guess(void **state)
{
    (void)state;
    size_t len;
    char *data = compressible_container(20000, &len); /* ~20 MB of 'a' in a few KB */
    assert_true(len < 200000);
    icm__avro_reader *r = NULL;
    icmt_ok(icm__avro_reader_open(&r, data, len, "big.avro"));
    icm__avro_cur c;
    int64_t count = 0, total = 0;
    int rc;
    while ((rc = icm__avro_reader_next_block(r, &c, &count)) == 0) {
        for (int64_t i = 0; i < count; i++) {
            const uint8_t *s = NULL;
            size_t n = 0;
            icmt_ok(icm__avro_read_bytes(&c, &s, &n));
            assert_int_equal(n, 999);
            assert_int_equal(s[0], 'a');
            assert_int_equal(s[998], 'a');
        }
        assert_true(c.p == c.end);
        total += count;
    }
    assert_int_equal(rc, ICM_ITEROVER);
    assert_int_equal(total, 20000);
    icm__avro_reader_free(r);
    icm_free(data);
}

static void test_corrupt_deflate_block(void **state)
{
    (void)state;
    size_t len;
    char *data = compressible_container(100, &len);
    /* The block's compressed bytes end 16 bytes (the sync marker) before the end: cut the
     * stream short by moving the sync marker over its last bytes. */
    memmove(data + len - 16 - 8, data + len - 16, 16);
    icm__avro_reader *r = NULL;
    icmt_ok(icm__avro_reader_open(&r, data, len - 8, "cut.avro"));
    icm__avro_cur c;
    int64_t count;
    int rc = icm__avro_reader_next_block(r, &c, &count);
    assert_int_equal(rc, ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, "cut.avro");
    icm__avro_reader_free(r);
    icm_free(data);
}

/* A block with no objects and no bytes (some writers emit one) holds nothing, for every codec:
 * the file reads whole, as fastavro reads it. */
static void test_empty_compressed_block(void **state)
{
    (void)state;
    size_t len;
    char *data = compressible_container(10, &len);
    /* append a block: count 0, byte size 0, the file's sync marker (its last 16 bytes) */
    char *more = malloc(len + 18);
    assert_non_null(more);
    memcpy(more, data, len);
    more[len] = 0;
    more[len + 1] = 0;
    memcpy(more + len + 2, data + len - 16, 16);
    icm__avro_reader *r = NULL;
    icmt_ok(icm__avro_reader_open(&r, more, len + 18, "empty-block.avro"));
    icm__avro_cur c;
    int64_t count = 0, total = 0, blocks = 0;
    int rc;
    while ((rc = icm__avro_reader_next_block(r, &c, &count)) == 0) {
        total += count;
        blocks++;
    }
    assert_int_equal(rc, ICM_ITEROVER);
    assert_int_equal(blocks, 2);
    assert_int_equal(total, 10);
    icm__avro_reader_free(r);
    free(more);
    icm_free(data);
}

/* ---- strset ---- */

static void test_strset(void **state)
{
    (void)state;
    icm__strset s = ICM__STRSET_INIT;
    bool added;
    assert_false(icm__strset_contains(&s, "x", 1));
    icmt_ok(icm__strset_add(&s, "", 0, &added));
    assert_true(added);
    assert_true(icm__strset_contains(&s, "", 0));
    icmt_ok(icm__strset_add(&s, "a\0b", 3, &added));
    assert_true(added);
    assert_true(icm__strset_contains(&s, "a\0b", 3));
    assert_false(icm__strset_contains(&s, "a", 1));
    assert_false(icm__strset_contains(&s, "a\0c", 3));
    /* Growth: 10,000 strings, each found again, each added once. */
    for (int i = 0; i < 10000; i++) {
        char k[32];
        int n = snprintf(k, sizeof k, "s3://b/t/metadata/m-%d.avro", i);
        icmt_ok(icm__strset_add(&s, k, (size_t)n, &added));
        assert_true(added);
    }
    for (int i = 0; i < 10000; i++) {
        char k[32];
        int n = snprintf(k, sizeof k, "s3://b/t/metadata/m-%d.avro", i);
        assert_true(icm__strset_contains(&s, k, (size_t)n));
        icmt_ok(icm__strset_add(&s, k, (size_t)n, &added));
        assert_false(added);
        assert_false(icm__strset_contains(&s, k, (size_t)n - 1)); /* a prefix is another */
    }
    assert_int_equal(icm__strset_count(&s), 10002);
    icm__strset_dispose(&s);
    assert_int_equal(icm__strset_count(&s), 0);
    assert_false(icm__strset_contains(&s, "", 0));
}

/* ---- rows claimed by their bytes ---- */

typedef struct row_log {
    char **bytes; /* each row's bytes, as row_end saw them */
    size_t *len;
    size_t n, cap;
    size_t next;       /* second read: index of the row at hand */
    size_t calls;      /* same_rows calls */
    size_t claimed;    /* rows claimed by same_rows */
    bool *claimed_at;  /* per row index */
    rows delivered;
} row_log;

static void log_row(const uint8_t *row, size_t len, const void *schema, void *payload)
{
    (void)schema;
    row_log *l = payload;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->bytes = realloc(l->bytes, l->cap * sizeof *l->bytes);
        l->len = realloc(l->len, l->cap * sizeof *l->len);
        assert_true(l->bytes != NULL && l->len != NULL);
    }
    l->bytes[l->n] = malloc(len ? len : 1);
    assert_non_null(l->bytes[l->n]);
    memcpy(l->bytes[l->n], row, len);
    l->len[l->n++] = len;
}

static bool claim_all(const uint8_t *path, size_t len, void *payload)
{
    (void)path, (void)len, (void)payload;
    return true;
}

static bool claim_none(const uint8_t *path, size_t len, void *payload)
{
    (void)path, (void)len, (void)payload;
    return false;
}

/* Every other call claims up to 3 rows (never more than max_rows), each checked to be the
 * logged row at that index: the bytes at `row` must be those rows, one after another. */
static size_t claim_runs(const uint8_t *row, size_t avail, size_t max_rows, const void *schema,
                         void *payload, size_t *n_rows)
{
    (void)schema;
    row_log *l = payload;
    *n_rows = 0;
    if (l->calls++ % 2 == 1)
        return 0;
    size_t bytes = 0, k = 0;
    while (k < 3 && k < max_rows && l->next + k < l->n) {
        size_t n = l->len[l->next + k];
        if (n > avail - bytes || memcmp(row + bytes, l->bytes[l->next + k], n) != 0)
            break;
        bytes += n;
        k++;
    }
    assert_true(k > 0); /* (the row at hand is always the logged one) */
    for (size_t i = 0; i < k; i++)
        l->claimed_at[l->next + i] = true;
    l->next += k;
    l->claimed += k;
    *n_rows = k;
    return bytes;
}

static void count_delivered(const uint8_t *row, size_t len, const void *schema, void *payload)
{
    (void)row, (void)len, (void)schema;
    ((row_log *)payload)->next++;
}

static int keep_row(const icm_manifest_file *m, void *payload)
{
    rows_push(&((row_log *)payload)->delivered, m);
    return 0;
}

static int ignore_row(const icm_manifest_file *m, void *payload)
{
    (void)m, (void)payload;
    return 0;
}

static void test_rows_claimed_by_bytes(void **state)
{
    (void)state;
    file_list files = fixture_avro_files();
    if (files.n == 0)
        icmt_skip_because("no Avro file below the fixtures folder %s", icmt_fixtures_dir());
    icm__avro_schema_cache *cache = NULL;
    icmt_ok(icm__avro_schema_cache_new(&cache));
    int lists = 0;
    size_t claimed = 0;
    for (size_t f = 0; f < files.n; f++) {
        size_t len;
        char *data = icmt_read_file(files.paths[f], &len);
        assert_non_null(data);
        rows all = {0};
        if (read_rows(files.paths[f], data, len, NULL, NULL, NULL, &all) != 0 ||
            all.end_rc != ICM_ITEROVER) {
            rows_free(&all);
            free(data); /* not a manifest list, or not a whole one */
            continue;
        }
        lists++;
        /* First read: every row claimed by its path, each one's bytes logged. */
        row_log l = {0};
        icm__list_row_filter log = {claim_all, NULL, log_row, &l};
        icmt_ok(icm__manifest_list_read_data(data, len, NULL, files.paths[f], NULL, cache, &log,
                                             ignore_row, &l));
        assert_int_equal(l.n, all.n);
        l.claimed_at = calloc(l.n + 1, sizeof *l.claimed_at);
        assert_non_null(l.claimed_at);
        /* Second read: runs claimed by their bytes, the rest delivered whole and equal to the
         * plain read's rows at the same places. */
        icm__list_row_filter runs = {claim_none, claim_runs, count_delivered, &l};
        icmt_ok(icm__manifest_list_read_data(data, len, NULL, files.paths[f], NULL, cache,
                                             &runs, keep_row, &l));
        assert_int_equal(l.next, all.n);
        assert_int_equal(l.claimed + l.delivered.n, all.n);
        if (all.n > 0)
            assert_true(l.claimed > 0);
        claimed += l.claimed;
        /* The rows delivered are exactly the plain read's rows that were not claimed. */
        size_t j = 0;
        for (size_t i = 0; i < all.n; i++)
            if (!l.claimed_at[i])
                assert_string_equal(l.delivered.text[j++], all.text[i]);
        assert_int_equal(j, l.delivered.n);
        for (size_t i = 0; i < l.n; i++)
            free(l.bytes[i]);
        free(l.claimed_at);
        free(l.bytes);
        free(l.len);
        rows_free(&l.delivered);
        rows_free(&all);
        free(data);
    }
    assert_true(lists > 0);
    assert_true(claimed > 0);
    icm__avro_schema_cache_free(cache);
    file_list_free(&files);
}

/* ---- entry views ---- */

static size_t keyed_views; /* views with a known partition key (views_text) */
static size_t placed_views; /* views of a deletion vector's blob (data file and offset) */

static void views_text(const char *path, const char *data, size_t len, uint64_t fields,
                       bool views, icm__buf *out)
{
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.fields = fields;
    icm_manifest_reader *r = NULL;
    int rc = icm_manifest_reader_open(&r, data, len, path, &o);
    if (rc != 0) {
        icm__buf_printf(out, "open %d\n", rc);
        return;
    }
    for (;;) {
        icm__entry_view v;
        if (views) {
            rc = icm__manifest_reader_next_view(r, &v);
        } else {
            const icm_manifest_entry *e;
            rc = icm_manifest_reader_next(&e, r);
            if (rc == 0)
                v = (icm__entry_view){
                    .status = e->status,
                    .content = e->data_file.content,
                    .file_format = e->data_file.file_format,
                    .file_path = e->data_file.file_path,
                    .file_path_len = e->data_file.file_path_len,
                    .file_size_in_bytes = e->data_file.file_size_in_bytes,
                    .has_snapshot_id = e->has_snapshot_id,
                    .has_file_sequence_number = e->has_file_sequence_number,
                    .snapshot_id = e->snapshot_id,
                    .file_sequence_number = e->file_sequence_number,
                    .record_count = e->data_file.record_count,
                    .lower_bounds = e->data_file.lower_bounds,
                    .upper_bounds = e->data_file.upper_bounds,
                    .partition = icm__manifest_reader_partition_key(r, e->data_file.partition),
                    .referenced_data_file = e->data_file.referenced_data_file,
                    .referenced_data_file_len = e->data_file.referenced_data_file != NULL
                                                    ? strlen(e->data_file.referenced_data_file)
                                                    : 0,
                    .content_offset = e->data_file.has_content_offset
                                          ? e->data_file.content_offset
                                          : -1,
                    .content_size_in_bytes = e->data_file.has_content_size_in_bytes
                                                 ? e->data_file.content_size_in_bytes
                                                 : -1};
        }
        if (rc != 0)
            break;
        keyed_views += views && v.partition.shape != 0;
        placed_views += views && v.content_offset >= 0 && v.referenced_data_file != NULL;
        /* (no manifest list row: the whole decode inherits nothing either, but gives v1
         * entries their file sequence number 0, spec Appendix E; a view holds what is written) */
        if (icm_manifest_reader_format_version(r) < 2)
            v.has_file_sequence_number = false, v.file_sequence_number = 0;
        icm__buf_printf(out,
                        "%d %d %d %lld [%.*s] %d:%lld %d:%lld %lld %zu:%016llx %zu:%016llx "
                        "%016llx:%016llx [%.*s] %lld %lld\n",
                        (int)v.status, (int)v.content, (int)v.file_format,
                        (long long)v.file_size_in_bytes, (int)v.file_path_len, v.file_path,
                        (int)v.has_snapshot_id, (long long)v.snapshot_id,
                        (int)v.has_file_sequence_number, (long long)v.file_sequence_number,
                        (long long)v.record_count, v.lower_bounds.len,
                        (unsigned long long)XXH3_64bits(v.lower_bounds.data, v.lower_bounds.len),
                        v.upper_bounds.len,
                        (unsigned long long)XXH3_64bits(v.upper_bounds.data,
                                                        v.upper_bounds.len),
                        (unsigned long long)v.partition.shape,
                        (unsigned long long)v.partition.values,
                        (int)v.referenced_data_file_len,
                        v.referenced_data_file != NULL ? v.referenced_data_file : "",
                        (long long)v.content_offset, (long long)v.content_size_in_bytes);
    }
    icm__buf_printf(out, "end %d\n", rc);
    icm_manifest_reader_free(r);
}

static void test_views_are_the_entries(void **state)
{
    (void)state;
    file_list files = fixture_avro_files();
    if (files.n == 0)
        icmt_skip_because("no Avro file below the fixtures folder %s", icmt_fixtures_dir());
    const uint64_t projections[] = {
        ICM_MANIFEST_FIELD_FILE_PATH,
        ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |
            ICM_MANIFEST_FIELD_FILE_SIZE,
        ICM_MANIFEST_FIELD_FILE_FORMAT, /* (no path: views of "") */
        /* what the walk's judgement of a snapshot reads (bulk_reader.c) */
        ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |
            ICM_MANIFEST_FIELD_FILE_SIZE | ICM_MANIFEST_FIELD_SNAPSHOT_ID |
            ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS | ICM_MANIFEST_FIELD_RECORD_COUNT |
            ICM_MANIFEST_FIELD_METRICS | ICM_MANIFEST_FIELD_PARTITION |
            ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE | ICM_MANIFEST_FIELD_CONTENT_OFFSET,
        ICM_MANIFEST_FIELD_RECORD_COUNT | ICM_MANIFEST_FIELD_METRICS,
        ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE, /* (a deletion vector's place alone) */
        ICM_MANIFEST_FIELD_ALL,         /* (more than a view holds: decoded, then viewed) */
    };
    int manifests = 0;
    for (size_t f = 0; f < files.n; f++) {
        size_t len;
        char *data = icmt_read_file(files.paths[f], &len);
        assert_non_null(data);
        icm_manifest_reader *probe = NULL;
        if (icm_manifest_reader_open(&probe, data, len, files.paths[f], NULL) != 0) {
            free(data); /* not a manifest */
            continue;
        }
        icm_manifest_reader_free(probe);
        manifests++;
        for (size_t k = 0; k < ICM__ARRAY_LEN(projections); k++) {
            icm__buf want = ICM__BUF_INIT, got = ICM__BUF_INIT;
            views_text(files.paths[f], data, len, projections[k], false, &want);
            views_text(files.paths[f], data, len, projections[k], true, &got);
            assert_false(want.oom || got.oom);
            assert_string_equal(got.data, want.data);
            icm__buf_dispose(&want);
            icm__buf_dispose(&got);
        }
        free(data);
    }
    assert_true(manifests > 0);
    assert_true(keyed_views > 0); /* (partition keys were compared too) */
    assert_true(placed_views > 0); /* (so were deletion vectors' data files and places) */
    file_list_free(&files);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filtered_rows_are_the_unclaimed_rows),
        cmocka_unit_test(test_schema_cache_decodes_the_same),
        cmocka_unit_test(test_deflate_far_beyond_the_first_guess),
        cmocka_unit_test(test_corrupt_deflate_block),
        cmocka_unit_test(test_empty_compressed_block),
        cmocka_unit_test(test_strset),
        cmocka_unit_test(test_rows_claimed_by_bytes),
        cmocka_unit_test(test_views_are_the_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
