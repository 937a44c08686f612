/*
 * tests/unit/test_manifest.c: manifest list and manifest read/write: round trips for every codec
 * x format version (exact equality of every field, raw partition bytes included), inheritance of
 * snapshot ids, sequence numbers and v3 first row ids, projections, copying real manifests with
 * their partition tuples, and writer validation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/avro.h"
#include "icemaint/manifest.h"
#include "testutil.h"

static const char TABLE_SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":3,\"name\":\"cat\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":4,\"name\":\"amt\",\"required\":false,\"type\":\"decimal(10,2)\"}]}";
static const char SPEC[] =
    "{\"spec-id\":1,\"fields\":["
    "{\"name\":\"ts_day\",\"transform\":\"day\",\"source-id\":2,\"field-id\":1000},"
    "{\"name\":\"cat_bucket\",\"transform\":\"bucket[16]\",\"source-id\":3,\"field-id\":1001},"
    "{\"name\":\"cat\",\"transform\":\"identity\",\"source-id\":3,\"field-id\":1002},"
    "{\"name\":\"amt_trunc\",\"transform\":\"truncate[10]\",\"source-id\":4,\"field-id\":1003}]}";

/* Everything one written entry owns, so it can be compared after reading. */
typedef struct sample {
    icm_manifest_entry e;
    char path[64], ref[64];
    uint8_t partition[32], metrics[16], bounds[16], ids[8], offsets[8];
} sample;

static size_t encode(uint8_t *out, void (*fill)(icm__buf *, int), int i)
{
    icm__buf b = ICM__BUF_INIT;
    fill(&b, i);
    size_t n = b.len;
    memcpy(out, b.data, n);
    icm__buf_dispose(&b);
    return n;
}

/* Partition tuple under the derived r102 schema: day, bucket, identity string, decimal(10,2)
 * as a 5-byte fixed. The identity field is null on odd rows. */
static void fill_partition(icm__buf *b, int i)
{
    icm__avro_put_long(b, 1);
    icm__avro_put_long(b, 19000 + i);
    icm__avro_put_long(b, 1);
    icm__avro_put_long(b, i % 16);
    if (i % 2) {
        icm__avro_put_long(b, 0);
    } else {
        icm__avro_put_long(b, 1);
        icm__avro_put_str(b, "books");
    }
    icm__avro_put_long(b, 1);
    icm__buf_put(b, "\x00\x00\x00\x03\xe8", 5);
}

static void fill_metrics(icm__buf *b, int i)
{
    icm__avro_put_long(b, 2);
    icm__avro_put_long(b, 1);
    icm__avro_put_long(b, 100 + i);
    icm__avro_put_long(b, 3);
    icm__avro_put_long(b, 7);
    icm__avro_put_long(b, 0);
}

static void fill_bounds(icm__buf *b, int i)
{
    icm__avro_put_long(b, 1);
    icm__avro_put_long(b, 3);
    icm__avro_put_bytes(b, i % 2 ? "a" : "zz", i % 2 ? 1 : 2);
    icm__avro_put_long(b, 0);
}

static void fill_ids(icm__buf *b, int i)
{
    icm__avro_put_long(b, 1);
    icm__avro_put_long(b, 1 + i % 3);
    icm__avro_put_long(b, 0);
}

static void fill_offsets(icm__buf *b, int i)
{
    icm__avro_put_long(b, 2);
    icm__avro_put_long(b, 4);
    icm__avro_put_long(b, 4096 + i);
    icm__avro_put_long(b, 0);
}

static icm_raw raw(const uint8_t *p, size_t n)
{
    icm_raw r = {p, n};
    return r;
}

/* Entry i of a manifest of format version v, exercising every field the version has. */
static void make_sample(sample *s, int v, int i)
{
    memset(s, 0, sizeof *s);
    icm_manifest_entry *e = &s->e;
    icm_data_file *d = &e->data_file;
    e->status = (icm_entry_status)(i % 3);
    e->has_snapshot_id = v == 1 || i % 4 != 1;
    e->snapshot_id = e->has_snapshot_id ? 1000 + i : 0;
    if (v >= 2) {
        e->has_sequence_number = i % 5 != 0;
        e->sequence_number = e->has_sequence_number ? 10 + i : 0;
        e->has_file_sequence_number = i % 7 != 0;
        e->file_sequence_number = e->has_file_sequence_number ? 20 + i : 0;
        d->content = (icm_file_content)(i % 3);
    }
    snprintf(s->path, sizeof s->path, "s3://bucket/t/data/part-%05d.parquet", i);
    d->file_path = s->path;
    d->file_path_len = strlen(s->path);
    /* Format names as writers spell them, in any ASCII case, and names that are none of them. */
    static const struct {
        const char *name;
        icm_file_format format;
    } formats[] = {{"PARQUET", ICM_FILE_FORMAT_PARQUET}, {"parquet", ICM_FILE_FORMAT_PARQUET},
                   {"Avro", ICM_FILE_FORMAT_AVRO},       {"ORC", ICM_FILE_FORMAT_ORC},
                   {"PUFFIN", ICM_FILE_FORMAT_PUFFIN},   {"PARQUETS", ICM_FILE_FORMAT_OTHER},
                   {"parque", ICM_FILE_FORMAT_OTHER},    {"orc\x7f", ICM_FILE_FORMAT_OTHER}};
    d->file_format = formats[i % 8].format;
    d->file_format_name = formats[i % 8].name;
    d->partition = raw(s->partition, encode(s->partition, fill_partition, i));
    d->record_count = 1000 + i;
    d->file_size_in_bytes = 123456 + i;
    if (i % 2 == 0) {
        d->column_sizes = raw(s->metrics, encode(s->metrics, fill_metrics, i));
        d->value_counts = d->column_sizes;
        d->lower_bounds = raw(s->bounds, encode(s->bounds, fill_bounds, i));
        d->upper_bounds = d->lower_bounds;
    } else {
        d->null_value_counts = raw(s->metrics, encode(s->metrics, fill_metrics, i));
        d->nan_value_counts = d->null_value_counts;
        d->key_metadata = raw((const uint8_t *)"\x06\x01\x02\x03", 4); /* encoded bytes */
    }
    d->split_offsets = raw(s->offsets, encode(s->offsets, fill_offsets, i));
    if (d->content == ICM_FILE_CONTENT_EQUALITY_DELETES)
        d->equality_ids = raw(s->ids, encode(s->ids, fill_ids, i));
    d->has_sort_order_id = i % 2 == 0;
    d->sort_order_id = d->has_sort_order_id ? i % 4 : 0;
    if (v >= 2 && d->content == ICM_FILE_CONTENT_POSITION_DELETES) {
        snprintf(s->ref, sizeof s->ref, "s3://bucket/t/data/part-%05d.parquet", i - 1);
        d->referenced_data_file = s->ref;
    }
    if (v >= 3) {
        if (d->content == ICM_FILE_CONTENT_POSITION_DELETES) {
            /* A deletion vector in a Puffin file. */
            d->file_format = ICM_FILE_FORMAT_PUFFIN;
            d->file_format_name = "puffin";
            d->has_content_offset = d->has_content_size_in_bytes = true;
            d->content_offset = 4 + i;
            d->content_size_in_bytes = 40 + i;
        }
        d->has_first_row_id = d->content == ICM_FILE_CONTENT_DATA && i % 2 == 0;
        d->first_row_id = d->has_first_row_id ? 5000 + 100 * i : 0;
    }
}

static void assert_raw_equal(icm_raw a, icm_raw b)
{
    assert_true((a.data == NULL) == (b.data == NULL));
    assert_int_equal(a.len, b.len);
    if (a.len)
        assert_memory_equal(a.data, b.data, a.len);
}

static void assert_opt_equal(bool ha, int64_t a, bool hb, int64_t b)
{
    assert_int_equal(ha, hb);
    if (ha)
        assert_int_equal(a, b);
}

/* Compare a decoded entry with what was written (no inheritance context: values as written,
 * except v1, whose sequence numbers read as 0). */
static void assert_entry_equal(const icm_manifest_entry *want, const icm_manifest_entry *got,
                               int v)
{
    assert_int_equal(got->status, want->status);
    assert_opt_equal(got->has_snapshot_id, got->snapshot_id, want->has_snapshot_id,
                     want->snapshot_id);
    if (v == 1) {
        assert_opt_equal(got->has_sequence_number, got->sequence_number, true, 0);
        assert_opt_equal(got->has_file_sequence_number, got->file_sequence_number, true, 0);
    } else {
        assert_opt_equal(got->has_sequence_number, got->sequence_number,
                         want->has_sequence_number, want->sequence_number);
        assert_opt_equal(got->has_file_sequence_number, got->file_sequence_number,
                         want->has_file_sequence_number, want->file_sequence_number);
    }
    const icm_data_file *a = &want->data_file, *b = &got->data_file;
    assert_int_equal(b->content, a->content);
    assert_string_equal(b->file_path, a->file_path);
    assert_int_equal(b->file_path_len, a->file_path_len);
    assert_int_equal(b->file_format, a->file_format);
    assert_string_equal(b->file_format_name, a->file_format_name);
    assert_raw_equal(b->partition, a->partition);
    assert_int_equal(b->record_count, a->record_count);
    assert_int_equal(b->file_size_in_bytes, a->file_size_in_bytes);
    assert_raw_equal(b->column_sizes, a->column_sizes);
    assert_raw_equal(b->value_counts, a->value_counts);
    assert_raw_equal(b->null_value_counts, a->null_value_counts);
    assert_raw_equal(b->nan_value_counts, a->nan_value_counts);
    assert_raw_equal(b->lower_bounds, a->lower_bounds);
    assert_raw_equal(b->upper_bounds, a->upper_bounds);
    assert_raw_equal(b->key_metadata, a->key_metadata);
    assert_raw_equal(b->split_offsets, a->split_offsets);
    assert_raw_equal(b->equality_ids, a->equality_ids);
    assert_opt_equal(b->has_sort_order_id, b->sort_order_id, a->has_sort_order_id,
                     a->sort_order_id);
    assert_opt_equal(b->has_first_row_id, b->first_row_id, a->has_first_row_id,
                     a->first_row_id);
    if (a->referenced_data_file == NULL)
        assert_null(b->referenced_data_file);
    else
        assert_string_equal(b->referenced_data_file, a->referenced_data_file);
    assert_opt_equal(b->has_content_offset, b->content_offset, a->has_content_offset,
                     a->content_offset);
    assert_opt_equal(b->has_content_size_in_bytes, b->content_size_in_bytes,
                     a->has_content_size_in_bytes, a->content_size_in_bytes);
}

static icm_manifest_writer_options writer_opts(int v, icm_avro_codec codec)
{
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.format_version = v;
    o.codec = codec;
    o.compression_level = -1;
    o.content = ICM_MANIFEST_CONTENT_DATA;
    o.schema_json = TABLE_SCHEMA;
    o.schema_id = 0;
    o.partition_spec_json = SPEC;
    o.partition_spec_id = 1;
    o.block_bytes = 2048; /* several blocks */
    return o;
}

#define N_ENTRIES 240

static char *write_manifest(int v, icm_avro_codec codec, sample *samples, size_t *len,
                            icm_manifest_file *summary)
{
    icm_manifest_writer_options o = writer_opts(v, codec);
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &o));
    for (int i = 0; i < N_ENTRIES; i++) {
        make_sample(&samples[i], v, i);
        icmt_ok(icm_manifest_writer_add(w, &samples[i].e));
    }
    char *data = NULL;
    icmt_ok(icm_manifest_writer_finish(&data, len, summary, w));
    icm_manifest_writer_free(w);
    return data;
}

static void test_manifest_round_trip(void **state)
{
    (void)state;
    static sample samples[N_ENTRIES];
    const icm_avro_codec codecs[] = {ICM_AVRO_CODEC_NULL, ICM_AVRO_CODEC_DEFLATE,
                                     ICM_AVRO_CODEC_SNAPPY, ICM_AVRO_CODEC_ZSTD};
    for (int v = 1; v <= 3; v++) {
        for (size_t c = 0; c < 4; c++) {
            size_t len;
            icm_manifest_file summary = ICM_MANIFEST_FILE_INIT;
            char *data = write_manifest(v, codecs[c], samples, &len, &summary);
            icm_manifest_reader *r = NULL;
            icmt_ok(icm_manifest_reader_open(&r, data, len, "mem://m.avro", NULL));
            assert_int_equal(icm_manifest_reader_format_version(r), v);
            assert_int_equal(icm_manifest_reader_partition_spec_id(r), 1);
            assert_int_equal(icm_manifest_reader_content(r), ICM_MANIFEST_CONTENT_DATA);
            assert_string_equal(icm_manifest_reader_header(r, "schema"), TABLE_SCHEMA);
            assert_non_null(strstr(icm_manifest_reader_header(r, "partition-spec"),
                                   "\"bucket[16]\""));
            const icm_manifest_entry *e;
            int n = 0, rc;
            while ((rc = icm_manifest_reader_next(&e, r)) == 0) {
                assert_true(n < N_ENTRIES);
                assert_entry_equal(&samples[n].e, e, v);
                n++;
            }
            if (rc != ICM_ITEROVER)
                print_error("v%d codec %zu entry %d: %s\n", v, c, n, icm_error_last()->message);
            assert_int_equal(rc, ICM_ITEROVER);
            assert_int_equal(n, N_ENTRIES);
            icm_manifest_reader_free(r);
            /* 240 entries with statuses cycling EXISTING, ADDED, DELETED. */
            assert_int_equal(summary.added_files_count, 80);
            assert_int_equal(summary.existing_files_count, 80);
            assert_int_equal(summary.deleted_files_count, 80);
            assert_int_equal(summary.manifest_length, (int64_t)len);
            icm_free(data);
        }
    }
}

static void test_partition_schema_derived(void **state)
{
    (void)state;
    static sample samples[N_ENTRIES];
    size_t len;
    char *data = write_manifest(2, ICM_AVRO_CODEC_NULL, samples, &len, NULL);
    icm__avro_reader *a = NULL;
    icmt_ok(icm__avro_reader_open(&a, data, len, "m"));
    size_t n;
    const char *schema = icm__avro_reader_meta(a, "avro.schema", &n);
    char *s = strndup(schema, n);
    /* Spec "Partition Transforms" result types and Appendix A Avro types. */
    assert_non_null(strstr(s, "{\"name\":\"ts_day\",\"type\":[\"null\",{\"type\":\"int\","
                              "\"logicalType\":\"date\"}],\"default\":null,\"field-id\":1000}"));
    assert_non_null(strstr(s, "{\"name\":\"cat_bucket\",\"type\":[\"null\",\"int\"]"));
    assert_non_null(strstr(s, "{\"name\":\"cat\",\"type\":[\"null\",\"string\"]"));
    assert_non_null(strstr(s, "\"size\":5,\"logicalType\":\"decimal\",\"precision\":10,"
                              "\"scale\":2}"));
    free(s);
    icm__avro_reader_free(a);
    icm_free(data);
}

static void test_projection_skips(void **state)
{
    (void)state;
    static sample samples[N_ENTRIES];
    size_t len;
    char *data = write_manifest(3, ICM_AVRO_CODEC_DEFLATE, samples, &len, NULL);
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.fields = ICM_MANIFEST_FIELDS_EXPIRY;
    icm_manifest_reader *r = NULL;
    icmt_ok(icm_manifest_reader_open(&r, data, len, "m", &o));
    const icm_manifest_entry *e;
    int n = 0;
    while (icm_manifest_reader_next(&e, r) == 0) {
        const icm_manifest_entry *w = &samples[n].e;
        assert_string_equal(e->data_file.file_path, w->data_file.file_path);
        assert_int_equal(e->data_file.record_count, w->data_file.record_count);
        assert_int_equal(e->data_file.content, w->data_file.content);
        assert_opt_equal(e->data_file.has_content_offset, e->data_file.content_offset,
                         w->data_file.has_content_offset, w->data_file.content_offset);
        /* Not asked for: absent. */
        assert_null(e->data_file.partition.data);
        assert_null(e->data_file.column_sizes.data);
        assert_null(e->data_file.split_offsets.data);
        assert_false(e->data_file.has_first_row_id);
        n++;
    }
    assert_int_equal(n, N_ENTRIES);
    icm_manifest_reader_free(r);
    icm_free(data);
}

/* One entry with the given tracking fields, for inheritance tests. */
static void add_entry(icm_manifest_writer *w, icm_entry_status st, bool has_seq, int64_t seq,
                      icm_file_content content, int64_t rows, bool has_frid, int64_t frid)
{
    icm_manifest_entry e;
    memset(&e, 0, sizeof e);
    e.status = st;
    e.has_sequence_number = e.has_file_sequence_number = has_seq;
    e.sequence_number = e.file_sequence_number = seq;
    e.data_file.content = content;
    e.data_file.file_path = "f.parquet";
    e.data_file.file_format = ICM_FILE_FORMAT_PARQUET;
    e.data_file.record_count = rows;
    e.data_file.has_first_row_id = has_frid;
    e.data_file.first_row_id = frid;
    icmt_ok(icm_manifest_writer_add(w, &e));
}

static void test_inheritance(void **state)
{
    (void)state;
    icm_manifest_writer_options o = writer_opts(3, ICM_AVRO_CODEC_NULL);
    o.partition_spec_json = "[]";
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &o));
    add_entry(w, ICM_ENTRY_ADDED, false, 0, ICM_FILE_CONTENT_DATA, 10, false, 0);
    add_entry(w, ICM_ENTRY_EXISTING, false, 0, ICM_FILE_CONTENT_DATA, 5, true, 42);
    add_entry(w, ICM_ENTRY_EXISTING, false, 0, ICM_FILE_CONTENT_DATA, 3, false, 0);
    add_entry(w, ICM_ENTRY_DELETED, true, 2, ICM_FILE_CONTENT_DATA, 8, false, 0);
    add_entry(w, ICM_ENTRY_ADDED, false, 0, ICM_FILE_CONTENT_POSITION_DELETES, 2, false, 0);
    char *data;
    size_t len;
    icmt_ok(icm_manifest_writer_finish(&data, &len, NULL, w));
    icm_manifest_writer_free(w);

    icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
    memset(&mf, 0, sizeof mf);
    mf.has_added_snapshot_id = true;
    mf.added_snapshot_id = 77;
    mf.sequence_number = 5;
    mf.has_first_row_id = true;
    mf.first_row_id = 1000;
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    ro.manifest = &mf;
    icm_manifest_reader *r = NULL;
    icmt_ok(icm_manifest_reader_open(&r, data, len, "m", &ro));
    const icm_manifest_entry *e;
    /* ADDED, all null: snapshot 77, sequence numbers 5, first row id 1000. */
    icmt_ok(icm_manifest_reader_next(&e, r));
    assert_opt_equal(e->has_snapshot_id, e->snapshot_id, true, 77);
    assert_opt_equal(e->has_sequence_number, e->sequence_number, true, 5);
    assert_opt_equal(e->has_file_sequence_number, e->file_sequence_number, true, 5);
    assert_opt_equal(e->data_file.has_first_row_id, e->data_file.first_row_id, true, 1000);
    /* EXISTING with explicit first row id: kept, and the running id does not advance. */
    icmt_ok(icm_manifest_reader_next(&e, r));
    assert_false(e->has_sequence_number);
    assert_opt_equal(e->data_file.has_first_row_id, e->data_file.first_row_id, true, 42);
    /* EXISTING, null: sequence number stays unknown; row id continues after 10 rows. */
    icmt_ok(icm_manifest_reader_next(&e, r));
    assert_false(e->has_sequence_number);
    assert_false(e->has_file_sequence_number);
    assert_opt_equal(e->has_snapshot_id, e->snapshot_id, true, 77);
    assert_opt_equal(e->data_file.has_first_row_id, e->data_file.first_row_id, true, 1010);
    /* DELETED: explicit sequence number kept; a null row id is inherited too (the spec
     * assigns every data file with a null first_row_id): 1000 + 10 + 3. */
    icmt_ok(icm_manifest_reader_next(&e, r));
    assert_opt_equal(e->has_sequence_number, e->sequence_number, true, 2);
    assert_opt_equal(e->data_file.has_first_row_id, e->data_file.first_row_id, true, 1013);
    /* Delete file: sequence numbers inherited, no row id. */
    icmt_ok(icm_manifest_reader_next(&e, r));
    assert_opt_equal(e->has_sequence_number, e->sequence_number, true, 5);
    assert_false(e->data_file.has_first_row_id);
    assert_int_equal(icm_manifest_reader_next(&e, r), ICM_ITEROVER);
    icm_manifest_reader_free(r);

    /* A v1 manifest list entry (sequence number 0): every null inherits 0. */
    mf.sequence_number = 0;
    mf.has_first_row_id = false;
    icmt_ok(icm_manifest_reader_open(&r, data, len, "m", &ro));
    icmt_ok(icm_manifest_reader_next(&e, r));
    icmt_ok(icm_manifest_reader_next(&e, r));
    icmt_ok(icm_manifest_reader_next(&e, r));
    assert_opt_equal(e->has_sequence_number, e->sequence_number, true, 0);
    assert_false(e->data_file.has_first_row_id);
    icm_manifest_reader_free(r);
    icm_free(data);
}

/* ---- manifest lists ---- */

static void fill_summaries(icm__buf *b, int i)
{
    icm__avro_put_long(b, 2);
    icm__avro_put_bool(b, i % 2 == 0);
    icm__avro_put_long(b, 1);
    icm__avro_put_bool(b, false);
    icm__avro_put_long(b, 1);
    icm__avro_put_bytes(b, "\x01\x00\x00\x00", 4);
    icm__avro_put_long(b, 0);
    icm__avro_put_bool(b, true);
    icm__avro_put_long(b, 0);
    icm__avro_put_long(b, 0);
    icm__avro_put_long(b, 1);
    icm__avro_put_bytes(b, "zz", 2);
    icm__avro_put_long(b, 0);
}

/* Replace the '~' of the one occurrence of `marker` in `data` (a null-codec container: the
 * bytes are as written) by a NUL. */
static void patch_marker(char *data, size_t len, const char *marker)
{
    char *p = memmem(data, len, marker, strlen(marker));
    assert_non_null(p);
    assert_null(memmem(p + 1, len - (size_t)(p + 1 - data), marker, strlen(marker)));
    *strchr(p, '~') = '\0';
}

/* A path with a NUL byte would name another file as a C string than the manifest does: the
 * entry (or list row) is corrupt, reported naming the file, and the rows before it read. */
static void test_nul_in_paths(void **state)
{
    (void)state;
    /* manifest: entry 1 of 3 */
    icm_manifest_writer_options o = writer_opts(2, ICM_AVRO_CODEC_NULL);
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &o));
    static sample samples[3];
    for (int i = 0; i < 3; i++) {
        make_sample(&samples[i], 2, i);
        if (i == 1) {
            snprintf(samples[i].path, sizeof samples[i].path, "s3://bucket/t/data/a~b.parquet");
            samples[i].e.data_file.file_path_len = strlen(samples[i].path);
        }
        icmt_ok(icm_manifest_writer_add(w, &samples[i].e));
    }
    char *data = NULL;
    size_t len = 0;
    icm_manifest_file summary = ICM_MANIFEST_FILE_INIT;
    icmt_ok(icm_manifest_writer_finish(&data, &len, &summary, w));
    icm_manifest_writer_free(w);
    patch_marker(data, len, "a~b.parquet");
    icm_manifest_reader *r = NULL;
    icmt_ok(icm_manifest_reader_open(&r, data, len, "mem://m.avro", NULL));
    const icm_manifest_entry *e;
    icmt_ok(icm_manifest_reader_next(&e, r));
    assert_int_equal(icm_manifest_reader_next(&e, r), ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, "mem://m.avro");
    assert_non_null(strstr(icm_error_last()->message, "file_path contains a NUL byte"));
    icm_manifest_reader_free(r);
    icm_free(data);

    /* manifest list: row 1 of 2 */
    icm_manifest_list_writer_options lo = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    lo.format_version = 2;
    lo.codec = ICM_AVRO_CODEC_NULL;
    lo.compression_level = -1;
    lo.snapshot_id = 1;
    lo.sequence_number = 1;
    icm_manifest_list_writer *lw = NULL;
    icmt_ok(icm_manifest_list_writer_new(&lw, &lo));
    const char *paths[] = {"s3://b/t/metadata/m0.avro", "s3://b/t/metadata/m~1.avro"};
    for (int i = 0; i < 2; i++) {
        icm_manifest_file m = ICM_MANIFEST_FILE_INIT;
        memset(&m, 0, sizeof m);
        m.manifest_path = paths[i];
        m.manifest_length = 100;
        m.sequence_number = 1;
        m.min_sequence_number = 1;
        m.has_added_snapshot_id = true;
        m.added_snapshot_id = 1;
        m.has_added_files_count = m.has_existing_files_count = m.has_deleted_files_count = true;
        m.has_added_rows_count = m.has_existing_rows_count = m.has_deleted_rows_count = true;
        icmt_ok(icm_manifest_list_writer_add(lw, &m));
    }
    icmt_ok(icm_manifest_list_writer_finish(&data, &len, lw));
    icm_manifest_list_writer_free(lw);
    patch_marker(data, len, "m~1.avro");
    icm_manifest_list_reader *lr = NULL;
    icmt_ok(icm_manifest_list_reader_open(&lr, data, len, "mem://snap.avro", NULL));
    const icm_manifest_file *mf;
    icmt_ok(icm_manifest_list_reader_next(&mf, lr));
    assert_string_equal(mf->manifest_path, paths[0]);
    assert_int_equal(icm_manifest_list_reader_next(&mf, lr), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "manifest_path contains a NUL byte"));
    icm_manifest_list_reader_free(lr);
    icm_free(data);
}

/* A null-codec container of one block holding `obj` (one object) under schema `schema`. */
static icm__buf container_of(const char *schema, const icm__buf *obj)
{
    static const char sync[16] = "0123456789abcdef";
    icm__buf b = ICM__BUF_INIT;
    icmt_ok(icm__buf_put(&b, "Obj\x01", 4));
    icmt_ok(icm__avro_put_long(&b, 2));
    icmt_ok(icm__avro_put_str(&b, "avro.schema"));
    icmt_ok(icm__avro_put_str(&b, schema));
    icmt_ok(icm__avro_put_str(&b, "avro.codec"));
    icmt_ok(icm__avro_put_str(&b, "null"));
    icmt_ok(icm__avro_put_long(&b, 0));
    icmt_ok(icm__buf_put(&b, sync, 16));
    icmt_ok(icm__avro_put_long(&b, 1));
    icmt_ok(icm__avro_put_long(&b, (int64_t)obj->len));
    icmt_ok(icm__buf_put(&b, obj->data, obj->len));
    icmt_ok(icm__buf_put(&b, sync, 16));
    return b;
}

/* A file whose root schema is ["null", record] holds a branch index before each record: it is
 * no manifest (list), and is refused as such rather than read with every field shifted (the
 * branch byte 0x02 read as the status, the status as the path's length). */
static void test_root_union_refused(void **state)
{
    (void)state;
    const char *manifest = "[\"null\",{\"type\":\"record\",\"name\":\"manifest_entry\","
                           "\"fields\":[{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
                           "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\","
                           "\"name\":\"r2\",\"fields\":[{\"name\":\"file_path\",\"type\":\"string\","
                           "\"field-id\":100}]}}]}]";
    icm__buf obj = ICM__BUF_INIT;
    icmt_ok(icm__avro_put_long(&obj, 1)); /* branch: the record */
    icmt_ok(icm__avro_put_long(&obj, 2)); /* status DELETED */
    icmt_ok(icm__avro_put_str(&obj, "x"));
    icm__buf file = container_of(manifest, &obj);
    icm_manifest_reader *r = NULL;
    assert_int_equal(icm_manifest_reader_open(&r, file.data, file.len, "mem://u.avro", NULL),
                     ICM_EINVALID);
    assert_null(r);
    assert_string_equal(icm_error_last()->message, "not a manifest: Avro schema is not a record");
    icm__buf_dispose(&file);

    const char *list = "[\"null\",{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
                       "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500}]}]";
    file = container_of(list, &obj);
    icm_manifest_list_reader *lr = NULL;
    assert_int_equal(icm_manifest_list_reader_open(&lr, file.data, file.len, "mem://u.avro", NULL),
                     ICM_EINVALID);
    assert_null(lr);
    assert_string_equal(icm_error_last()->message,
                        "not a manifest list: Avro schema is not a record");
    icm__buf_dispose(&file);
    icm__buf_dispose(&obj);
}

static void test_manifest_list_round_trip(void **state)
{
    (void)state;
    const icm_avro_codec codecs[] = {ICM_AVRO_CODEC_NULL, ICM_AVRO_CODEC_DEFLATE,
                                     ICM_AVRO_CODEC_SNAPPY, ICM_AVRO_CODEC_ZSTD};
    enum { N = 50 };
    static uint8_t sums[N][64];
    static char paths[N][64];
    static icm_manifest_file in[N];
    for (int v = 1; v <= 3; v++) {
        for (size_t c = 0; c < 4; c++) {
            icm_manifest_list_writer_options o = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
            o.format_version = v;
            o.codec = codecs[c];
            o.compression_level = -1;
            o.snapshot_id = 9001;
            o.has_parent_snapshot_id = c % 2 == 0;
            o.parent_snapshot_id = 9000;
            o.sequence_number = 12;
            o.first_row_id = 500;
            o.block_bytes = 512;
            icm_manifest_list_writer *w = NULL;
            icmt_ok(icm_manifest_list_writer_new(&w, &o));
            int64_t expect_next = 500;
            for (int i = 0; i < N; i++) {
                icm_manifest_file *m = &in[i];
                memset(m, 0, sizeof *m);
                snprintf(paths[i], sizeof paths[i], "s3://b/t/metadata/m%d.avro", i);
                m->manifest_path = paths[i];
                m->manifest_length = 4000 + i;
                m->partition_spec_id = i % 3;
                m->content = v >= 2 ? (icm_manifest_content)(i % 2) : ICM_MANIFEST_CONTENT_DATA;
                m->sequence_number = v >= 2 && i % 4 == 0 ? -1 : (v >= 2 ? i : 0);
                m->min_sequence_number = v >= 2 && i % 4 == 0 ? -1 : (v >= 2 ? i / 2 : 0);
                m->has_added_snapshot_id = true;
                m->added_snapshot_id = 8000 + i;
                m->has_added_files_count = m->has_existing_files_count = true;
                m->has_deleted_files_count = m->has_added_rows_count = true;
                m->has_existing_rows_count = m->has_deleted_rows_count = true;
                m->added_files_count = i;
                m->existing_files_count = 2 * i;
                m->deleted_files_count = 1;
                m->added_rows_count = 10 * i;
                m->existing_rows_count = 7;
                m->deleted_rows_count = 3;
                if (i % 3 != 2)
                    m->partitions = raw(sums[i], encode(sums[i], fill_summaries, i));
                if (i % 5 == 0)
                    m->key_metadata = raw((const uint8_t *)"\x06key", 4);
                m->has_first_row_id = v >= 3 && i % 6 == 1;
                m->first_row_id = m->has_first_row_id ? 77 : 0;
                if (v >= 3 && m->content == ICM_MANIFEST_CONTENT_DATA && !m->has_first_row_id)
                    expect_next += m->added_rows_count + m->existing_rows_count;
                icmt_ok(icm_manifest_list_writer_add(w, m));
            }
            if (v >= 3)
                assert_int_equal(icm_manifest_list_writer_next_row_id(w), expect_next);
            char *data;
            size_t len;
            icmt_ok(icm_manifest_list_writer_finish(&data, &len, w));
            icm_manifest_list_writer_free(w);

            icm_manifest_list_reader *r = NULL;
            icmt_ok(icm_manifest_list_reader_open(&r, data, len, "l", NULL));
            assert_int_equal(icm_manifest_list_reader_format_version(r), v);
            assert_string_equal(icm_manifest_list_reader_header(r, "snapshot-id"), "9001");
            assert_string_equal(icm_manifest_list_reader_header(r, "parent-snapshot-id"),
                                c % 2 == 0 ? "9000" : "null");
            if (v >= 2)
                assert_string_equal(icm_manifest_list_reader_header(r, "sequence-number"),
                                    "12");
            const icm_manifest_file *m;
            int64_t next = 500;
            for (int i = 0; i < N; i++) {
                icmt_ok(icm_manifest_list_reader_next(&m, r));
                const icm_manifest_file *x = &in[i];
                assert_string_equal(m->manifest_path, x->manifest_path);
                assert_int_equal(m->manifest_length, x->manifest_length);
                assert_int_equal(m->partition_spec_id, x->partition_spec_id);
                assert_int_equal(m->content, x->content);
                assert_int_equal(m->sequence_number, x->sequence_number < 0 ? 12
                                                                            : x->sequence_number);
                assert_int_equal(m->min_sequence_number,
                                 x->min_sequence_number < 0 ? 12 : x->min_sequence_number);
                assert_opt_equal(m->has_added_snapshot_id, m->added_snapshot_id, true,
                                 x->added_snapshot_id);
                assert_opt_equal(m->has_added_files_count, m->added_files_count, true, i);
                assert_opt_equal(m->has_existing_files_count, m->existing_files_count, true,
                                 2 * i);
                assert_opt_equal(m->has_deleted_files_count, m->deleted_files_count, true, 1);
                assert_opt_equal(m->has_added_rows_count, m->added_rows_count, true, 10 * i);
                assert_opt_equal(m->has_existing_rows_count, m->existing_rows_count, true, 7);
                assert_opt_equal(m->has_deleted_rows_count, m->deleted_rows_count, true, 3);
                assert_raw_equal(m->partitions, x->partitions);
                assert_raw_equal(m->key_metadata, x->key_metadata);
                if (v < 3 || x->content == ICM_MANIFEST_CONTENT_DELETES) {
                    /* Delete manifests never carry a first_row_id, even when given one. */
                    assert_false(m->has_first_row_id);
                } else if (x->has_first_row_id) {
                    assert_opt_equal(m->has_first_row_id, m->first_row_id, true, 77);
                } else {
                    /* Spec "First Row ID Assignment": consecutive ranges of added+existing. */
                    assert_opt_equal(m->has_first_row_id, m->first_row_id, true, next);
                    next += x->added_rows_count + x->existing_rows_count;
                }
            }
            assert_int_equal(icm_manifest_list_reader_next(&m, r), ICM_ITEROVER);
            icm_manifest_list_reader_free(r);
            icm_free(data);
        }
    }
}

static void test_writer_validation(void **state)
{
    (void)state;
    /* A v2 list entry without counts: refused (null means "non-zero" to readers). */
    icm_manifest_list_writer_options lo = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    lo.format_version = 2;
    icm_manifest_list_writer *lw = NULL;
    icmt_ok(icm_manifest_list_writer_new(&lw, &lo));
    icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
    memset(&mf, 0, sizeof mf);
    mf.manifest_path = "m.avro";
    mf.has_added_snapshot_id = true;
    assert_int_equal(icm_manifest_list_writer_add(lw, &mf), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "counts"));
    icm_manifest_list_writer_free(lw);

    icm_manifest_writer_options o = writer_opts(1, ICM_AVRO_CODEC_NULL);
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &o));
    icm_manifest_entry e;
    memset(&e, 0, sizeof e);
    e.data_file.file_path = "x";
    assert_int_equal(icm_manifest_writer_add(w, &e), ICM_EINVALID); /* v1: snapshot_id */
    e.has_snapshot_id = true;
    e.data_file.content = ICM_FILE_CONTENT_POSITION_DELETES;
    assert_int_equal(icm_manifest_writer_add(w, &e), ICM_EINVALID); /* v1: data only */
    icm_manifest_writer_free(w);

    o = writer_opts(2, ICM_AVRO_CODEC_NULL);
    icmt_ok(icm_manifest_writer_new(&w, &o));
    /* Raw values must encode exactly one value of the written schema's type. */
    e.data_file.content = ICM_FILE_CONTENT_DATA;
    e.data_file.partition = raw((const uint8_t *)"\x02", 1); /* truncated tuple */
    assert_int_equal(icm_manifest_writer_add(w, &e), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "partition"));
    uint8_t part[32];
    e.data_file.partition = raw(part, encode(part, fill_partition, 0));
    e.data_file.lower_bounds = raw((const uint8_t *)"\x02\x02\x7f", 3); /* bytes past end */
    assert_int_equal(icm_manifest_writer_add(w, &e), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "lower_bounds"));
    e.data_file.lower_bounds = raw(NULL, 0);
    icmt_ok(icm_manifest_writer_add(w, &e));
    e.data_file.content = ICM_FILE_CONTENT_EQUALITY_DELETES;
    assert_int_equal(icm_manifest_writer_add(w, &e), ICM_EINVALID); /* no equality_ids */
    e.data_file.content = ICM_FILE_CONTENT_POSITION_DELETES;
    e.data_file.has_content_offset = true;
    assert_int_equal(icm_manifest_writer_add(w, &e), ICM_EINVALID); /* DV fields need v3 */
    icm_manifest_writer_free(w);

    o = writer_opts(4, ICM_AVRO_CODEC_NULL);
    assert_int_equal(icm_manifest_writer_new(&w, &o), ICM_EUNSUPPORTED);
    o = writer_opts(2, ICM_AVRO_CODEC_NULL);
    o.partition_spec_json = "[{\"name\":\"x\",\"transform\":\"zorder\",\"source-id\":1}]";
    assert_int_equal(icm_manifest_writer_new(&w, &o), ICM_EUNSUPPORTED);
    o.partition_spec_json = "[{\"name\":\"x\",\"transform\":\"identity\",\"source-id\":99}]";
    assert_int_equal(icm_manifest_writer_new(&w, &o), ICM_EINVALID);
    assert_null(w);
    o.partition_spec_json = "[]";
    o.partition_avro_schema_json = "{\"type\":\"record\",\"name\":\"r102\"}";
    assert_int_equal(icm_manifest_writer_new(&w, &o), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message,
                           "invalid partition Avro schema: invalid Avro schema: record without"));
    assert_null(w);
}

/* ---- real manifests ---- */

static char *fixture(const char *rel, size_t *len)
{
    char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(), rel);
    char *data = icmt_read_file(path, len);
    if (data == NULL)
        icmt_skip_because("the fixture %s is missing", path);
    free(path);
    return data;
}

/* Copy every entry of a real partitioned manifest into a new one made "like" it, for each codec
 * and its own format version, and check that every field, raw partition tuple included, reads
 * back identical. */
static void copy_and_compare(const char *rel)
{
    size_t len;
    char *data = fixture(rel, &len);
    const icm_avro_codec codecs[] = {ICM_AVRO_CODEC_NULL, ICM_AVRO_CODEC_DEFLATE,
                                     ICM_AVRO_CODEC_SNAPPY, ICM_AVRO_CODEC_ZSTD};
    for (size_t c = 0; c < 4; c++) {
        icm_manifest_reader *src = NULL, *again = NULL, *copy = NULL;
        icmt_ok(icm_manifest_reader_open(&src, data, len, rel, NULL));
        icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
        o.codec = codecs[c];
        o.compression_level = -1;
        icm_manifest_writer *w = NULL;
        icmt_ok(icm_manifest_writer_new_like(&w, src, &o));
        const icm_manifest_entry *e;
        int n = 0, rc;
        while ((rc = icm_manifest_reader_next(&e, src)) == 0) {
            icmt_ok(icm_manifest_writer_add(w, e));
            n++;
        }
        assert_int_equal(rc, ICM_ITEROVER);
        assert_true(n > 0);
        char *out;
        size_t out_len;
        icmt_ok(icm_manifest_writer_finish(&out, &out_len, NULL, w));
        icm_manifest_writer_free(w);

        icmt_ok(icm_manifest_reader_open(&again, data, len, rel, NULL));
        icmt_ok(icm_manifest_reader_open(&copy, out, out_len, "copy", NULL));
        assert_int_equal(icm_manifest_reader_format_version(copy),
                         icm_manifest_reader_format_version(again));
        assert_int_equal(icm_manifest_reader_partition_spec_id(copy),
                         icm_manifest_reader_partition_spec_id(again));
        const icm_manifest_entry *a, *b;
        int m = 0;
        while ((rc = icm_manifest_reader_next(&a, again)) == 0) {
            icmt_ok(icm_manifest_reader_next(&b, copy));
            assert_entry_equal(a, b, icm_manifest_reader_format_version(again));
            m++;
        }
        assert_int_equal(m, n);
        assert_int_equal(icm_manifest_reader_next(&b, copy), ICM_ITEROVER);
        icm_manifest_reader_free(src);
        icm_manifest_reader_free(again);
        icm_manifest_reader_free(copy);
        icm_free(out);
    }
    free(data);
}

static void test_copy_real_manifests(void **state)
{
    (void)state;
    /* Spark v1 (deflate), Hive v2 with a 17-byte partition, a DuckDB decimal partition,
     * a PyIceberg v2 manifest and the Spark v3 deletion-vector manifest. */
    copy_and_compare("loose-avro/iceberg-cpp/test/resources/"
                     "2ddf1bc9-830b-4015-aced-c060df36f150-m0.avro");
    copy_and_compare("impala/testdata/data/iceberg_test/hadoop_catalog/hadoop_catalog_test/"
                     "functional_parquet/hadoop_catalog_test/metadata/"
                     "2c2fa00b-eb20-460a-835b-d69b32560e21-m0.avro");
    copy_and_compare("duckdb-iceberg/data/persistent/partition_decimal_hugeint/metadata/"
                     "b4dfc09f-c94f-4d63-8ce3-f7d030bd44cb-m0.avro");
    copy_and_compare("loose-avro/iceberg-rust-old/crates/iceberg/testdata/"
                     "partition_manifest_v2.avro");
}

static void test_fixture_quirks(void **state)
{
    (void)state;
    size_t len;
    /* DuckDB v3 list: no header keys at all, v3 from the schema; the delete manifest carries
     * first_row_id 100 (fixtures README). */
    char *data = fixture("loose-avro/iceberg-go/testdata/duckdb_v3_manifest_list.avro", &len);
    icm_manifest_list_reader *r = NULL;
    icmt_ok(icm_manifest_list_reader_open(&r, data, len, "d", NULL));
    assert_int_equal(icm_manifest_list_reader_format_version(r), 3);
    assert_null(icm_manifest_list_reader_header(r, "format-version"));
    const icm_manifest_file *m;
    bool saw = false;
    while (icm_manifest_list_reader_next(&m, r) == 0)
        if (m->content == ICM_MANIFEST_CONTENT_DELETES && m->has_first_row_id &&
            m->first_row_id == 100)
            saw = true;
    assert_true(saw);
    icm_manifest_list_reader_free(r);
    free(data);

    /* format-version "" in the header: decided from the schema (v2 fields present). */
    data = fixture("loose-avro/iceberg-rust-old/crates/iceberg/testdata/"
                   "simple_manifest_list_v2.avro", &len);
    icmt_ok(icm_manifest_list_reader_open(&r, data, len, "s", NULL));
    assert_string_equal(icm_manifest_list_reader_header(r, "format-version"), "");
    assert_int_equal(icm_manifest_list_reader_format_version(r), 2);
    icm_manifest_list_reader_free(r);
    /* The table's version decides between v2 and v3 when the schema cannot. */
    icm_manifest_list_read_options lo = {.version = ICM_MANIFEST_LIST_READ_OPTIONS_VERSION,
                                         .format_version = 3};
    icmt_ok(icm_manifest_list_reader_open(&r, data, len, "s", &lo));
    assert_int_equal(icm_manifest_list_reader_format_version(r), 3);
    icm_manifest_list_reader_free(r);
    free(data);

    /* The same Spark manifest under the null, deflate and snappy codecs decodes identically. */
    const char *names[] = {"manifest_null.avro", "manifest_deflate.avro", "manifest_snappy.avro"};
    char *paths[3][8];
    int counts[3] = {0};
    for (int k = 0; k < 3; k++) {
        char *rel = icmt_sprintf("loose-avro/iceberg-java-codecs/python/tests/avro/data/%s",
                                 names[k]);
        data = fixture(rel, &len);
        icm_manifest_reader *mr = NULL;
        icmt_ok(icm_manifest_reader_open(&mr, data, len, rel, NULL));
        const icm_manifest_entry *e;
        int rc;
        while ((rc = icm_manifest_reader_next(&e, mr)) == 0) {
            assert_true(counts[k] < 8);
            paths[k][counts[k]++] = strdup(e->data_file.file_path);
        }
        assert_int_equal(rc, ICM_ITEROVER);
        icm_manifest_reader_free(mr);
        free(data);
        free(rel);
    }
    assert_true(counts[0] > 0);
    for (int k = 1; k < 3; k++) {
        assert_int_equal(counts[k], counts[0]);
        for (int i = 0; i < counts[0]; i++)
            assert_string_equal(paths[k][i], paths[0][i]);
    }
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < counts[k]; i++)
            free(paths[k][i]);

    /* The encrypted manifest list is not an Avro container. */
    data = fixture("loose-avro/iceberg-rust/crates/iceberg/testdata/manifests_lists/"
                   "manifest-list-v3-encrypted.avro", &len);
    assert_int_equal(icm_manifest_list_reader_open(&r, data, len, "enc.avro", NULL),
                     ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, "enc.avro");
    assert_int_equal(icm_error_last()->offset, 0);
    free(data);

    /* Impala's stray .avro_tmp leftover is JSON, not Avro: a clean error too. */
    data = fixture("impala/testdata/data/iceberg_test/hadoop_catalog/ice/"
                   "iceberg_v2_equality_delete_schema_evolution/metadata/"
                   "snap-5816823095034839884-1-fb7a4022-ee0a-4540-87d8-b8fa8e4c8596.avro_tmp",
                   &len);
    icm_manifest_reader *mr = NULL;
    assert_int_equal(icm_manifest_reader_open(&mr, data, len, "tmp", NULL), ICM_EINVALID);
    assert_null(mr);
    assert_non_null(strstr(icm_error_last()->message, "magic"));
    free(data);
}

/* An old Spark list whose field summaries lack contains_nan (518): the reader re-encodes them in
 * the canonical shape, which the list writer accepts (it validates raw bytes against its own
 * schema) and which decodes to the original values: two fields, no nulls, bounds as written. */
static void test_old_field_summaries_copyable(void **state)
{
    (void)state;
    size_t len;
    char *data = fixture("impala/testdata/data/iceberg_test/hadoop_catalog/hadoop_catalog_test/"
                         "functional_parquet/hadoop_catalog_test/metadata/"
                         "snap-7412008513947276465-1-2c2fa00b-eb20-460a-835b-d69b32560e21.avro",
                         &len);
    icm_manifest_list_reader *r = NULL;
    icmt_ok(icm_manifest_list_reader_open(&r, data, len, "old", NULL));
    const icm_manifest_file *m;
    icmt_ok(icm_manifest_list_reader_next(&m, r));
    /* Canonical: count 2; {false, [null], ["bytes" 4], ["bytes" 4]}; {false, [null], "click",
     * "view"}; end. */
    static const uint8_t want[] = {0x04, 0x00, 0x00, 0x02, 0x08, 0x18, 0xb0, 0x06, 0x00, 0x02,
                                   0x08, 0x1a, 0xb0, 0x06, 0x00, 0x00, 0x00, 0x02, 0x0a, 'c',
                                   'l',  'i',  'c',  'k',  0x02, 0x08, 'v',  'i',  'e',  'w',
                                   0x00};
    assert_int_equal(m->partitions.len, sizeof want);
    assert_memory_equal(m->partitions.data, want, sizeof want);
    icm_manifest_list_writer_options o = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    o.format_version = 1;
    icm_manifest_list_writer *w = NULL;
    icmt_ok(icm_manifest_list_writer_new(&w, &o));
    icmt_ok(icm_manifest_list_writer_add(w, m));
    icm_manifest_list_writer_free(w);
    icm_manifest_list_reader_free(r);
    free(data);
}

/* A header format-version beyond 3 is refused, naming the version; the schema cannot
 * overrule an explicit header. */
static void test_unsupported_format_version(void **state)
{
    (void)state;
    static sample samples[N_ENTRIES];
    size_t len;
    char *data = write_manifest(2, ICM_AVRO_CODEC_NULL, samples, &len, NULL);
    /* The header value follows its key: "format-version" then the length-prefixed "2". */
    char *p = memmem(data, len, "format-version\x02\x32", 16);
    assert_non_null(p);
    p[15] = '7';
    icm_manifest_reader *r = NULL;
    assert_int_equal(icm_manifest_reader_open(&r, data, len, "m7.avro", NULL), ICM_EUNSUPPORTED);
    assert_non_null(strstr(icm_error_last()->message, "format-version 7"));
    assert_string_equal(icm_error_last()->location, "m7.avro");
    icm_free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_round_trip),
        cmocka_unit_test(test_partition_schema_derived),
        cmocka_unit_test(test_projection_skips),
        cmocka_unit_test(test_inheritance),
        cmocka_unit_test(test_manifest_list_round_trip),
        cmocka_unit_test(test_nul_in_paths),
        cmocka_unit_test(test_root_union_refused),
        cmocka_unit_test(test_writer_validation),
        cmocka_unit_test(test_copy_real_manifests),
        cmocka_unit_test(test_fixture_quirks),
        cmocka_unit_test(test_unsupported_format_version),
        cmocka_unit_test(test_old_field_summaries_copyable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
