/*
 * tests/unit/test_manifest_io.c: reading through an icm_fileio: a snapshot's manifest list and
 * its manifests with inheritance from the list entries, a v1 snapshot's embedded manifests, a
 * callback stopping the walk, and missing files / read faults passed up unchanged; a manifest
 * judged against its list row (icm__manifest_check_list_row): the counts by status decide where
 * the row has all three, the length where it has not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/fileio.h"
#include "icemaint/manifest.h"
#include "manifest/manifest_internal.h"
#include "testutil.h"

/* Write a v2 manifest with `n` ADDED entries whose snapshot id and sequence numbers are null
 * (to be inherited), plus one EXISTING entry with explicit values. */
static void put_manifest(icm_fileio *io, const char *location, int n)
{
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.format_version = 2;
    o.codec = ICM_AVRO_CODEC_DEFLATE;
    o.compression_level = -1;
    o.schema_json = "{\"type\":\"struct\",\"fields\":[]}";
    o.schema_id = 0;
    o.partition_spec_json = "[]";
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &o));
    for (int i = 0; i <= n; i++) {
        icm_manifest_entry e;
        memset(&e, 0, sizeof e);
        char path[64];
        snprintf(path, sizeof path, "%s-file-%d.parquet", location, i);
        e.status = i < n ? ICM_ENTRY_ADDED : ICM_ENTRY_EXISTING;
        if (i == n) {
            e.has_snapshot_id = e.has_sequence_number = e.has_file_sequence_number = true;
            e.snapshot_id = 1;
            e.sequence_number = e.file_sequence_number = 1;
        }
        e.data_file.file_path = path;
        e.data_file.file_format = ICM_FILE_FORMAT_PARQUET;
        e.data_file.record_count = 10;
        e.data_file.file_size_in_bytes = 100;
        icmt_ok(icm_manifest_writer_add(w, &e));
    }
    char *data;
    size_t len;
    icmt_ok(icm_manifest_writer_finish(&data, &len, NULL, w));
    icmt_ok(icm_fileio_create_new(io, location, data, len));
    icm_free(data);
    icm_manifest_writer_free(w);
}

static void put_list(icm_fileio *io)
{
    icm_manifest_list_writer_options o = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    o.format_version = 2;
    o.codec = ICM_AVRO_CODEC_ZSTD;
    o.compression_level = -1;
    o.snapshot_id = 3;
    o.sequence_number = 3;
    icm_manifest_list_writer *w = NULL;
    icmt_ok(icm_manifest_list_writer_new(&w, &o));
    const char *paths[] = {"mem://t/metadata/a.avro", "mem://t/metadata/b.avro"};
    for (int i = 0; i < 2; i++) {
        icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
        memset(&mf, 0, sizeof mf);
        mf.manifest_path = paths[i];
        mf.manifest_length = 1;
        mf.has_added_snapshot_id = true;
        mf.added_snapshot_id = 2 + i;        /* a: snapshot 2, b: snapshot 3 */
        mf.sequence_number = i == 0 ? 2 : -1; /* b: this snapshot's sequence number */
        mf.min_sequence_number = 1;
        mf.has_added_files_count = mf.has_existing_files_count = true;
        mf.has_deleted_files_count = mf.has_added_rows_count = true;
        mf.has_existing_rows_count = mf.has_deleted_rows_count = true;
        mf.added_files_count = 2 + i;
        mf.existing_files_count = 1;
        mf.added_rows_count = 10 * (2 + i);
        mf.existing_rows_count = 10;
        icmt_ok(icm_manifest_list_writer_add(w, &mf));
    }
    char *data;
    size_t len;
    icmt_ok(icm_manifest_list_writer_finish(&data, &len, w));
    icmt_ok(icm_fileio_create_new(io, "mem://t/metadata/snap-3.avro", data, len));
    icm_free(data);
    icm_manifest_list_writer_free(w);
}

typedef struct walk {
    icm_fileio *io;
    int files, added, stop_after;
    int64_t snapshot_sum, seq_sum;
} walk;

static int on_entry(const icm_manifest_entry *e, void *payload)
{
    walk *w = payload;
    w->files++;
    if (e->status == ICM_ENTRY_ADDED) {
        w->added++;
        assert_true(e->has_snapshot_id && e->has_sequence_number);
        w->snapshot_sum += e->snapshot_id;
        w->seq_sum += e->sequence_number;
    }
    return w->stop_after && w->files == w->stop_after ? ICM_EUSER : 0;
}

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    walk *w = payload;
    return icm_manifest_read(w->io, mf, NULL, on_entry, w);
}

static void test_snapshot_walk(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    put_manifest(io, "mem://t/metadata/a.avro", 2);
    put_manifest(io, "mem://t/metadata/b.avro", 3);
    put_list(io);
    walk w = {io, 0, 0, 0, 0, 0};
    icmt_ok(icm_manifest_list_read(io, "mem://t/metadata/snap-3.avro", NULL, on_manifest, &w));
    assert_int_equal(w.files, 7);
    assert_int_equal(w.added, 5);
    /* a's two ADDED entries inherit snapshot 2 / seq 2; b's three inherit snapshot 3 / seq 3. */
    assert_int_equal(w.snapshot_sum, 2 * 2 + 3 * 3);
    assert_int_equal(w.seq_sum, 2 * 2 + 3 * 3);

    /* A callback's non-zero value stops the walk and comes back unchanged. */
    walk s = {io, 0, 0, 4, 0, 0};
    assert_int_equal(icm_manifest_list_read(io, "mem://t/metadata/snap-3.avro", NULL,
                                            on_manifest, &s),
                     ICM_EUSER);
    assert_int_equal(s.files, 4);

    /* v1 embedded manifests: the snapshot's id is inherited, sequence numbers are 0. */
    walk v1 = {io, 0, 0, 0, 0, 0};
    icmt_ok(icm_manifest_read_v1_embedded(io, "mem://t/metadata/b.avro", 42, NULL, on_entry,
                                          &v1));
    assert_int_equal(v1.added, 3);
    assert_int_equal(v1.snapshot_sum, 3 * 42);
    assert_int_equal(v1.seq_sum, 0);

    /* Missing files: ICM_ENOTFOUND from the FileIO, passed up. */
    assert_int_equal(icm_manifest_list_read(io, "mem://t/metadata/nope.avro", NULL, on_manifest,
                                            &w),
                     ICM_ENOTFOUND);
    icm_fileio_free(io);
}

static void test_read_fault_passed_up(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *io = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    put_manifest(mem, "mem://t/metadata/a.avro", 2);
    put_manifest(mem, "mem://t/metadata/b.avro", 3);
    put_list(mem);
    icmt_ok(icm_fileio_fault_new(&io, mem));
    icm_fileio_fault_fail_nth(io, ICM_IO_READ, 2, ICM_EIO); /* the first manifest */
    walk w = {io, 0, 0, 0, 0, 0};
    assert_int_equal(icm_manifest_list_read(io, "mem://t/metadata/snap-3.avro", NULL,
                                            on_manifest, &w),
                     ICM_EIO);
    assert_int_equal(w.files, 0);
    icm_fileio_free(io);
}

static void test_manifest_judged_against_its_list_row(void **state)
{
    (void)state;
    icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
    mf.manifest_path = "mem://t/metadata/m.avro";
    mf.manifest_length = 1000;
    mf.has_added_files_count = mf.has_existing_files_count = mf.has_deleted_files_count = true;
    mf.added_files_count = 1;
    mf.existing_files_count = 2;
    mf.deleted_files_count = 0;
    const size_t agree[3] = {2, 1, 0}; /* EXISTING, ADDED, DELETED */
    const size_t cut[3] = {0, 1, 0};
    const size_t flipped[3] = {1, 1, 1};
    /* counts decide: another length (a rewritten manifest's paths) is fine */
    assert_int_equal(icm__manifest_check_list_row(&mf, 1000, agree), 0);
    assert_int_equal(icm__manifest_check_list_row(&mf, 1234, agree), 0);
    assert_int_equal(icm__manifest_check_list_row(&mf, 1000, cut), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "holds 1 added, 0 existing and 0 deleted"));
    assert_int_equal(icm__manifest_check_list_row(&mf, 1000, flipped), ICM_EINVALID);
    /* a count missing (v1 may omit them): the length decides */
    mf.has_deleted_files_count = false;
    assert_int_equal(icm__manifest_check_list_row(&mf, 1000, cut), 0);
    assert_int_equal(icm__manifest_check_list_row(&mf, 999, agree), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "manifest_length 1000"));
    /* neither (an unknown length): nothing to judge by */
    mf.manifest_length = -1;
    assert_int_equal(icm__manifest_check_list_row(&mf, 5, cut), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_walk),
        cmocka_unit_test(test_read_fault_passed_up),
        cmocka_unit_test(test_manifest_judged_against_its_list_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
