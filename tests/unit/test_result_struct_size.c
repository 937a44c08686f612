/*
 * test_result_struct_size.c: the size-prefixed result structs (docs/API.md rule 3, common.h).
 *
 * A struct the caller allocates and the library fills (icm_file_info for icm_fileio_stat and
 * icm_fileio_checksum_of, the icm_fileio_delete_result array of icm_fileio_delete_batch,
 * icm_manifest_file as icm_manifest_writer_finish's summary) starts with struct_size:
 *  - 0, a size below the type's _SIZE_MIN, and a size above the library's sizeof are refused
 *    with ICM_EINVALID and a message naming the struct and the sizes, and not one byte after
 *    struct_size is written (every byte is checked against a fill pattern); a refused delete
 *    batch deletes nothing, and a refused summary leaves the writer usable;
 *  - a caller built against an older, smaller struct (simulated by a struct of its own shape,
 *    the fields up to a cut, with a canary right after it) gets the fields it has filled, and
 *    nothing from the cut on is touched: for a delete batch the array is walked by the caller's
 *    element size, so every element's fields land where that caller's layout has them;
 *  - what the library hands out (listing callbacks, manifest list rows) has the library's
 *    struct_size, so ICM_STRUCT_HAS works on it.
 */
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/fileio.h"
#include "icemaint/manifest.h"
#include "icemaint/testing/fileio.h"
#include "testutil.h"

#define FILL 0xA5
#define CANARY 64

/* Room for a struct of up to `max` bytes and a canary after it, filled with FILL. */
typedef struct guarded {
    alignas(max_align_t) unsigned char bytes[2048];
} guarded;

static void guarded_fill(guarded *g, size_t struct_size)
{
    memset(g->bytes, FILL, sizeof g->bytes);
    memcpy(g->bytes, &struct_size, sizeof struct_size);
}

/* Whether every byte of g from `from` to `to` still holds the fill. */
static void assert_untouched(const guarded *g, size_t from, size_t to)
{
    assert_true(to <= sizeof g->bytes);
    for (size_t i = from; i < to; i++) {
        if (g->bytes[i] != FILL)
            print_error("byte %zu was written (0x%02x)\n", i, g->bytes[i]);
        assert_int_equal(g->bytes[i], FILL);
    }
}

static void assert_refused_naming(const char *type_name)
{
    const char *m = icm_error_last()->message;
    if (strstr(m, type_name) == NULL || strstr(m, "struct_size") == NULL)
        print_error("message \"%s\" does not name %s and struct_size\n", m, type_name);
    assert_non_null(strstr(m, type_name));
    assert_non_null(strstr(m, "struct_size"));
}

static icm_fileio *mem_with(const char *const *locations, size_t n)
{
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icm_fileio_mem_set_time(io, 1234);
    for (size_t i = 0; i < n; i++)
        icmt_ok(icm_fileio_create_new(io, locations[i], "12345", 5));
    return io;
}

/* ---- icm_file_info ---------------------------------------------------------------------- */

static void test_file_info_bad_sizes_refused_and_nothing_written(void **state)
{
    (void)state;
    static const char *loc = "s3://b/t/data/a.parquet";
    icm_fileio *io = mem_with(&loc, 1);
    const size_t bad[] = {0, 1, ICM_FILE_INFO_SIZE_MIN - 1, sizeof(icm_file_info) + 1,
                          sizeof(icm_file_info) + 8};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        guarded g;
        guarded_fill(&g, bad[i]);
        icm_file_info *info = (icm_file_info *)(void *)g.bytes;
        assert_int_equal(icm_fileio_stat(info, io, loc), ICM_EINVALID);
        assert_refused_naming("icm_file_info");
        assert_int_equal(info->struct_size, bad[i]);
        assert_untouched(&g, sizeof(size_t), sizeof(icm_file_info) + CANARY);

        guarded_fill(&g, bad[i]);
        char *companion = (char *)"not cleared";
        assert_int_equal(icm_fileio_checksum_of(&companion, info, io, loc), ICM_EINVALID);
        assert_null(companion);
        assert_refused_naming("icm_file_info");
        assert_untouched(&g, sizeof(size_t), sizeof(icm_file_info) + CANARY);
    }
    /* The sizes in the message: the one given and the bound it broke. */
    guarded g;
    guarded_fill(&g, 0);
    assert_int_equal(icm_fileio_stat((icm_file_info *)(void *)g.bytes, io, loc), ICM_EINVALID);
    char *want = icmt_sprintf("struct_size 0 is below the smallest this library accepts (%zu)",
                              (size_t)ICM_FILE_INFO_SIZE_MIN);
    assert_non_null(strstr(icm_error_last()->message, want));
    free(want);
    icm_fileio_free(io);
}

/* The icm_file_info of a caller built before mtime_ms existed. */
typedef struct old_file_info {
    size_t struct_size;
    const char *location;
    int64_t size_bytes;
} old_file_info;

static void test_file_info_older_caller_gets_its_fields_and_nothing_after(void **state)
{
    (void)state;
    static const char *loc = "s3://b/t/data/a.parquet";
    icm_fileio *io = mem_with(&loc, 1);

    guarded g;
    guarded_fill(&g, sizeof(old_file_info));
    old_file_info *old = (old_file_info *)(void *)g.bytes;
    icmt_ok(icm_fileio_stat((icm_file_info *)(void *)old, io, loc));
    assert_int_equal(old->struct_size, sizeof(old_file_info));
    assert_string_equal(old->location, loc);
    assert_int_equal(old->size_bytes, 5);
    assert_untouched(&g, sizeof(old_file_info), sizeof(old_file_info) + CANARY);

    /* A missing object: the fields that fit are cleared as documented, nothing after. */
    guarded_fill(&g, sizeof(old_file_info));
    assert_int_equal(icm_fileio_stat((icm_file_info *)(void *)old, io, "s3://b/t/none"),
                     ICM_ENOTFOUND);
    assert_string_equal(old->location, "s3://b/t/none");
    assert_untouched(&g, sizeof(old_file_info), sizeof(old_file_info) + CANARY);

    /* Only `location` fits. */
    guarded_fill(&g, ICM_FILE_INFO_SIZE_MIN);
    icmt_ok(icm_fileio_stat((icm_file_info *)(void *)g.bytes, io, loc));
    assert_string_equal(((icm_file_info *)(void *)g.bytes)->location, loc);
    assert_untouched(&g, ICM_FILE_INFO_SIZE_MIN, sizeof(icm_file_info) + CANARY);

    /* checksum_of: the in-memory store keeps no companions; what fits is "none". */
    guarded_fill(&g, sizeof(old_file_info));
    char *companion = NULL;
    icmt_ok(icm_fileio_checksum_of(&companion, (icm_file_info *)(void *)old, io, loc));
    assert_null(companion);
    assert_null(old->location);
    assert_int_equal(old->size_bytes, -1);
    assert_untouched(&g, sizeof(old_file_info), sizeof(old_file_info) + CANARY);

    /* The current size fills every field. */
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, io, loc));
    assert_int_equal(info.struct_size, sizeof(icm_file_info));
    assert_int_equal(info.size_bytes, 5);
    assert_int_equal(info.mtime_ms, 1234);
    icm_fileio_free(io);
}

static int check_listed_size(const icm_file_info *info, void *payload)
{
    size_t *n = payload;
    assert_int_equal(info->struct_size, sizeof(icm_file_info));
    assert_true(ICM_STRUCT_HAS(info, icm_file_info, mtime_ms));
    (*n)++;
    return 0;
}

static void test_listing_hands_out_the_library_size(void **state)
{
    (void)state;
    const char *locs[] = {"s3://b/t/a", "s3://b/t/b/c"};
    icm_fileio *mem = mem_with(locs, 2);
    size_t n = 0;
    icmt_ok(icm_fileio_list(mem, "s3://b/t", check_listed_size, &n));
    assert_int_equal(n, 2);
    icm_fileio_free(mem);

    char *dir = icmt_mkdtemp();
    char *a = icmt_sprintf("%s/a", dir);
    icmt_write_file(a, "x", 1);
    icm_fileio *local = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    for (unsigned flags = 0; flags <= ICM_LIST_STAT_OPTIONAL; flags += ICM_LIST_STAT_OPTIONAL) {
        n = 0;
        icmt_ok(icm_fileio_list_flags(local, dir, flags, check_listed_size, &n));
        assert_int_equal(n, 1);
    }
    icm_path_map rule = {"/mapped", dir};
    icm_fileio *pm = NULL;
    icmt_ok(icm_fileio_pathmap_new(&pm, local, &rule, 1));
    n = 0;
    icmt_ok(icm_fileio_list(pm, "/mapped", check_listed_size, &n));
    assert_int_equal(n, 1);
    icm_fileio_free(pm);
    icmt_rmtree(dir);
    free(a);
    free(dir);
}

/* ---- icm_fileio_delete_result ------------------------------------------------------------ */

static void test_delete_results_bad_sizes_refused_and_nothing_deleted(void **state)
{
    (void)state;
    const char *locs[] = {"s3://b/t/a", "s3://b/t/b"};
    icm_fileio *io = mem_with(locs, 2);
    const size_t bad[] = {0, ICM_FILEIO_DELETE_RESULT_SIZE_MIN - 1,
                          sizeof(icm_fileio_delete_result) + 8};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        guarded g;
        guarded_fill(&g, bad[i]);
        assert_int_equal(
            icm_fileio_delete_batch((icm_fileio_delete_result *)(void *)g.bytes, io, locs, 2),
            ICM_EINVALID);
        assert_refused_naming("icm_fileio_delete_result");
        assert_untouched(&g, sizeof(size_t), sizeof g.bytes);
    }
    /* Elements that disagree: item 1 says another size than item 0. */
    icm_fileio_delete_result r[2] = {ICM_FILEIO_DELETE_RESULT_INIT,
                                     ICM_FILEIO_DELETE_RESULT_INIT};
    r[1].struct_size = 0;
    r[0].code = r[1].code = 77;
    assert_int_equal(icm_fileio_delete_batch(r, io, locs, 2), ICM_EINVALID);
    assert_refused_naming("icm_fileio_delete_result");
    assert_non_null(strstr(icm_error_last()->message, "item 1"));
    assert_int_equal(r[0].code, 77);
    assert_int_equal(r[1].code, 77);
    /* Nothing was deleted by any refused call. */
    for (size_t i = 0; i < 2; i++) {
        bool same = false;
        icmt_ok(icm_fileio_holds(&same, io, locs[i], "12345", 5));
        assert_true(same);
    }
    icm_fileio_free(io);
}

/* The icm_fileio_delete_result of a caller built before `message` existed. */
typedef struct old_delete_result {
    size_t struct_size;
    icm_fileio_delete_status status;
    int code;
    bool retryable;
} old_delete_result;

static void test_delete_results_older_caller_array_walked_by_its_size(void **state)
{
    (void)state;
    const char *present[] = {"s3://b/t/a", "s3://b/t/c"};
    icm_fileio *io = mem_with(present, 2);
    const char *locs[] = {"s3://b/t/a", "s3://b/t/gone", "", "s3://b/t/c"};
    enum { N = 4 };
    guarded g;
    memset(g.bytes, FILL, sizeof g.bytes);
    old_delete_result *old = (old_delete_result *)(void *)g.bytes;
    for (size_t i = 0; i < N; i++)
        old[i].struct_size = sizeof(old_delete_result);
    icmt_ok(icm_fileio_delete_batch((icm_fileio_delete_result *)(void *)old, io, locs, N));
    assert_int_equal(old[0].status, ICM_FILEIO_DELETED);
    assert_int_equal(old[0].code, 0);
    assert_false(old[0].retryable);
    assert_int_equal(old[1].status, ICM_FILEIO_ALREADY_GONE);
    assert_int_equal(old[1].code, 0);
    assert_int_equal(old[2].status, ICM_FILEIO_DELETE_FAILED);
    assert_int_equal(old[2].code, ICM_EINVALID);
    assert_false(old[2].retryable);
    assert_int_equal(old[3].status, ICM_FILEIO_DELETED);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(old[i].struct_size, sizeof(old_delete_result));
    assert_untouched(&g, N * sizeof(old_delete_result), N * sizeof(old_delete_result) + CANARY);
    for (size_t i = 0; i < 2; i++) {
        bool same = true;
        icmt_ok(icm_fileio_holds(&same, io, present[i], "12345", 5));
        assert_false(same);
    }

    /* The current size, through the same path: every field. */
    icm_fileio_delete_result r[2];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 2);
    const char *two[] = {"s3://b/t/gone", ""};
    icmt_ok(icm_fileio_delete_batch(r, io, two, 2));
    assert_int_equal(r[0].status, ICM_FILEIO_ALREADY_GONE);
    assert_string_equal(r[0].message, "");
    assert_int_equal(r[1].status, ICM_FILEIO_DELETE_FAILED);
    assert_non_null(strstr(r[1].message, "empty location"));
    icm_fileio_free(io);
}

/* ---- icm_manifest_file as the writer's summary --------------------------------------------- */

#define SCHEMA                                                                               \
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"x\","           \
    "\"required\":false,\"type\":\"long\"}]}"

static icm_manifest_writer *writer_with_one_file(void)
{
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.format_version = 2;
    o.schema_json = SCHEMA;
    o.partition_spec_json = "[]";
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &o));
    icm_manifest_entry e;
    memset(&e, 0, sizeof e);
    e.status = ICM_ENTRY_ADDED;
    e.has_snapshot_id = true;
    e.snapshot_id = 7;
    e.data_file.file_path = "s3://b/t/data/f.parquet";
    e.data_file.file_format = ICM_FILE_FORMAT_PARQUET;
    e.data_file.record_count = 10;
    e.data_file.file_size_in_bytes = 100;
    icmt_ok(icm_manifest_writer_add(w, &e));
    return w;
}

static void test_manifest_summary_bad_sizes_refused_writer_still_usable(void **state)
{
    (void)state;
    const size_t bad[] = {0, ICM_MANIFEST_FILE_SIZE_MIN - 1, sizeof(icm_manifest_file) + 1};
    icm_manifest_writer *w = writer_with_one_file();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        guarded g;
        guarded_fill(&g, bad[i]);
        char *out = NULL;
        size_t out_len = 0;
        assert_int_equal(icm_manifest_writer_finish(&out, &out_len,
                                                    (icm_manifest_file *)(void *)g.bytes, w),
                         ICM_EINVALID);
        assert_null(out);
        assert_refused_naming("icm_manifest_file");
        assert_untouched(&g, sizeof(size_t), sizeof(icm_manifest_file) + CANARY);
    }
    /* Refused before finishing: the same writer still finishes, with its entry. */
    icm_manifest_file summary = ICM_MANIFEST_FILE_INIT;
    char *out = NULL;
    size_t out_len = 0;
    icmt_ok(icm_manifest_writer_finish(&out, &out_len, &summary, w));
    assert_int_equal(summary.struct_size, sizeof(icm_manifest_file));
    assert_int_equal(summary.manifest_length, (int64_t)out_len);
    assert_true(summary.has_added_files_count);
    assert_int_equal(summary.added_files_count, 1);
    assert_int_equal(summary.added_rows_count, 10);
    icm_free(out);
    icm_manifest_writer_free(w);
}

static void test_manifest_summary_older_caller_gets_its_fields_and_nothing_after(void **state)
{
    (void)state;
    /* A caller whose icm_manifest_file ended before the row counts (added_rows_count on). */
    const size_t cut = offsetof(icm_manifest_file, has_added_rows_count);
    icm_manifest_writer *w = writer_with_one_file();
    guarded g;
    guarded_fill(&g, cut);
    icm_manifest_file *old = (icm_manifest_file *)(void *)g.bytes;
    char *out = NULL;
    size_t out_len = 0;
    icmt_ok(icm_manifest_writer_finish(&out, &out_len, old, w));
    assert_int_equal(old->struct_size, cut);
    assert_null(old->manifest_path);
    assert_int_equal(old->manifest_length, (int64_t)out_len);
    assert_int_equal(old->content, ICM_MANIFEST_CONTENT_DATA);
    assert_int_equal(old->sequence_number, -1);
    assert_true(old->has_added_files_count);
    assert_int_equal(old->added_files_count, 1);
    assert_int_equal(old->deleted_files_count, 0);
    assert_untouched(&g, cut, sizeof(icm_manifest_file) + CANARY);
    icm_free(out);
    icm_manifest_writer_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_info_bad_sizes_refused_and_nothing_written),
        cmocka_unit_test(test_file_info_older_caller_gets_its_fields_and_nothing_after),
        cmocka_unit_test(test_listing_hands_out_the_library_size),
        cmocka_unit_test(test_delete_results_bad_sizes_refused_and_nothing_deleted),
        cmocka_unit_test(test_delete_results_older_caller_array_walked_by_its_size),
        cmocka_unit_test(test_manifest_summary_bad_sizes_refused_writer_still_usable),
        cmocka_unit_test(test_manifest_summary_older_caller_gets_its_fields_and_nothing_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
