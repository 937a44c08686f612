/*
 * tests/unit/test_puffin_footer.c: a Puffin file's footer (puffin/puffin.h).
 *
 * Footers written as the spec lays them out (icmt_puffin) decode to their blobs, sorted by
 * offset, with the deletion-vector properties; every malformed footer is ICM_EINVALID (or
 * ICM_EUNSUPPORTED for a compressed payload) naming the file, read from storage or not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "icemaint/fileio.h"
#include "icemaint/testing/fileio.h"
#include "puffin/puffin.h"
#include "testutil.h"

#define LOC "/t/data/dv.puffin"

/* A Puffin file into buf: the magic, the six blob bytes "abcdef", the footer with `json` as its
 * payload. Returns its length. */
static size_t with_payload(uint8_t *buf, const char *json)
{
    size_t jn = strlen(json);
    memcpy(buf, "PFA1abcdefPFA1", 14);
    memcpy(buf + 14, json, jn);
    uint8_t tail[12] = {(uint8_t)jn, (uint8_t)(jn >> 8), 0, 0, 0, 0, 0, 0, 'P', 'F', 'A', '1'};
    memcpy(buf + 14 + jn, tail, 12);
    return 14 + jn + 12;
}

/* Decode a whole file's bytes as icm__puffin_read_footer would, from memory. */
static int decode_file(const uint8_t *file, size_t len, icm__puffin_footer *out)
{
    *out = (icm__puffin_footer)ICM__PUFFIN_FOOTER_INIT;
    if (len < ICM__PUFFIN_TAIL_BYTES)
        return ICM_EINVALID;
    size_t footer = 0;
    int rc = icm__puffin_footer_size(file + len - ICM__PUFFIN_TAIL_BYTES, (int64_t)len, LOC,
                                     &footer);
    if (rc == 0)
        rc = icm__puffin_footer_decode(file + len - footer, footer, (int64_t)len, LOC, out);
    return rc;
}

static void test_blobs_and_properties(void **state)
{
    (void)state;
    const icmt_puffin_blob blobs[] = {{"aaaaaaaaaaaa", 12, "s3://b/t/data/one.parquet", 3},
                                      {"bbbbbbbb", 8, NULL, -1},
                                      {"cccccccccccccccccccc", 20, "/t/data/three.parquet", 0}};
    size_t len = 0;
    char *file = icmt_puffin(blobs, 3, &len);
    icm__puffin_footer f;
    icmt_ok(decode_file((const uint8_t *)file, len, &f));
    assert_int_equal(f.count, 3);
    assert_int_equal(f.blobs[0].offset_bytes, 4);
    assert_int_equal(f.blobs[0].length_bytes, 12);
    assert_int_equal(f.blobs[0].cardinality, 3);
    assert_string_equal(f.blobs[0].referenced_data_file, "s3://b/t/data/one.parquet");
    assert_int_equal(f.blobs[1].offset_bytes, 16);
    assert_int_equal(f.blobs[1].length_bytes, 8);
    assert_int_equal(f.blobs[1].cardinality, -1);
    assert_null(f.blobs[1].referenced_data_file);
    assert_int_equal(f.blobs[2].offset_bytes, 24);
    assert_int_equal(f.blobs[2].cardinality, 0);
    assert_ptr_equal(icm__puffin_footer_find(&f, 16), &f.blobs[1]);
    assert_null(icm__puffin_footer_find(&f, 17));
    assert_null(icm__puffin_footer_find(&f, 100));
    icm__puffin_footer_dispose(&f);

    /* read through a FileIO: the size given, or stat'ed */
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icmt_ok(icm_fileio_write_replace(io, LOC, file, len));
    icmt_ok(icm__puffin_read_footer(io, LOC, (int64_t)len, &f));
    assert_int_equal(f.count, 3);
    icm__puffin_footer_dispose(&f);
    icmt_ok(icm__puffin_read_footer(io, LOC, -1, &f));
    assert_int_equal(f.count, 3);
    icm__puffin_footer_dispose(&f);
    assert_int_equal(icm__puffin_read_footer(io, "/t/data/gone.puffin", 100, &f), ICM_ENOTFOUND);
    /* a file shorter than the size its entry records */
    assert_int_equal(icm__puffin_read_footer(io, LOC, (int64_t)len + 5, &f), ICM_EINVALID);
    icm_fileio_free(io);
    free(file);

    /* no blob at all; a non-decimal cardinality is unknown */
    file = icmt_puffin(NULL, 0, &len);
    icmt_ok(decode_file((const uint8_t *)file, len, &f));
    assert_int_equal(f.count, 0);
    icm__puffin_footer_dispose(&f);
    free(file);
}

/* Blobs listed out of order come back sorted; a footer longer than the first read (64 KiB) is
 * read whole by a second. */
static void test_order_and_long_footers(void **state)
{
    (void)state;
    enum { N = 600 };
    static icmt_puffin_blob blobs[N];
    static char names[N][160];
    for (size_t i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "/t/data/%03zu-%0120zu.parquet", i, i);
        blobs[i] = (icmt_puffin_blob){"0123456789", 10, names[i], (long long)i};
    }
    size_t len = 0;
    char *file = icmt_puffin(blobs, N, &len);
    assert_true(len > (70u << 10)); /* (the footer alone is over 64 KiB) */
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icmt_ok(icm_fileio_write_replace(io, LOC, file, len));
    icm__puffin_footer f;
    icmt_ok(icm__puffin_read_footer(io, LOC, (int64_t)len, &f));
    assert_int_equal(f.count, N);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(f.blobs[i].offset_bytes, 4 + 10 * (int64_t)i);
        assert_string_equal(f.blobs[i].referenced_data_file, names[i]);
    }
    icm__puffin_footer_dispose(&f);
    icm_fileio_free(io);
    free(file);

    /* two blobs listed in reverse order */
    const char *json = "{\"blobs\":[{\"type\":\"x\",\"offset\":9,\"length\":1},"
                       "{\"type\":\"x\",\"offset\":4,\"length\":5}]}";
    uint8_t buf[256];
    icmt_ok(decode_file(buf, with_payload(buf, json), &f));
    assert_int_equal(f.count, 2);
    assert_int_equal(f.blobs[0].offset_bytes, 4);
    assert_int_equal(f.blobs[1].offset_bytes, 9);
    icm__puffin_footer_dispose(&f);
}

/* One malformed footer: the payload `json` and the fixed tail's flags and size as given
 * (size -1: the payload's). */
static int decode_bad(const char *json, uint32_t flags, long long size, const char *first_magic,
                      int64_t *message_has_loc)
{
    size_t jn = strlen(json);
    uint8_t buf[1024];
    memcpy(buf, "PFA1abcdefghij", 14); /* the magic and 10 bytes of blobs */
    memcpy(buf + 10, first_magic, 4);
    memcpy(buf + 14, json, jn);
    uint32_t sz = size < 0 ? (uint32_t)jn : (uint32_t)size;
    uint8_t tail[12] = {(uint8_t)sz,    (uint8_t)(sz >> 8),    (uint8_t)(sz >> 16),
                        (uint8_t)(sz >> 24), (uint8_t)flags, (uint8_t)(flags >> 8),
                        0,              0,                     'P', 'F', 'A', '1'};
    memcpy(buf + 14 + jn, tail, 12);
    icm__puffin_footer f;
    int rc = decode_file(buf, 14 + jn + 12, &f);
    icm__puffin_footer_dispose(&f);
    *message_has_loc = strstr(icm_error_last()->location, LOC) != NULL;
    return rc;
}

static void test_malformed_footers(void **state)
{
    (void)state;
    const char *ok = "{\"blobs\":[{\"type\":\"x\",\"offset\":4,\"length\":6}]}";
    int64_t named = 0;
    assert_int_equal(decode_bad(ok, 0, -1, "PFA1", &named), 0);
    struct {
        const char *json;
        uint32_t flags;
        long long size;
        const char *magic;
        int want;
        const char *says;
    } cases[] = {
        {ok, 1, -1, "PFA1", ICM_EUNSUPPORTED, "compressed"},
        {ok, 2, -1, "PFA1", ICM_EINVALID, "reserved footer flag"},
        {ok, 0x100, -1, "PFA1", ICM_EINVALID, "reserved footer flag"},
        {ok, 0, -1, "PFA2", ICM_EINVALID, "no PFA1 magic where its footer starts"},
        {ok, 0, 5000, "PFA1", ICM_EINVALID, "larger than the file"},
        {ok, 0, 0x80000000LL, "PFA1", ICM_EINVALID, "out of range"},
        {ok, 0, 3, "PFA1", ICM_EINVALID, ""}, /* (a payload cut short) */
        {"{\"blobs\":[", 0, -1, "PFA1", ICM_EINVALID, "not valid JSON"},
        {"[]", 0, -1, "PFA1", ICM_EINVALID, "blobs list"},
        {"{\"blobs\":{}}", 0, -1, "PFA1", ICM_EINVALID, "blobs list"},
        {"{\"blobs\":[1]}", 0, -1, "PFA1", ICM_EINVALID, "blob 0 is not an object"},
        {"{\"blobs\":[{\"offset\":4}]}", 0, -1, "PFA1", ICM_EINVALID,
         "no integer offset and length"},
        {"{\"blobs\":[{\"offset\":4,\"length\":1.5}]}", 0, -1, "PFA1", ICM_EINVALID,
         "no integer offset and length"},
        {"{\"blobs\":[{\"offset\":4,\"length\":7}]}", 0, -1, "PFA1", ICM_EINVALID,
         "lies outside"},
        {"{\"blobs\":[{\"offset\":0,\"length\":1}]}", 0, -1, "PFA1", ICM_EINVALID,
         "lies outside"},
        {"{\"blobs\":[{\"offset\":4,\"length\":-1}]}", 0, -1, "PFA1", ICM_EINVALID,
         "lies outside"},
        {"{\"blobs\":[{\"offset\":9223372036854775807,\"length\":9223372036854775807}]}", 0,
         -1, "PFA1", ICM_EINVALID, "lies outside"},
        {"{\"blobs\":[{\"offset\":4,\"length\":1,\"properties\":[]}]}", 0, -1, "PFA1",
         ICM_EINVALID, "properties that are not an object"},
        {"{\"blobs\":[{\"offset\":4,\"offset\":5,\"length\":1}]}", 0, -1, "PFA1", ICM_EINVALID,
         "duplicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = decode_bad(cases[i].json, cases[i].flags, cases[i].size, cases[i].magic, &named);
        if (rc != cases[i].want || strstr(icm_error_last()->message, cases[i].says) == NULL ||
            !named)
            fail_msg("case %zu: %d %s: %s", i, rc, icm_error_last()->location,
                     icm_error_last()->message);
    }
    /* properties that are not strings: unknown, not an error */
    icm__puffin_footer f;
    const char *odd = "{\"blobs\":[{\"offset\":4,\"length\":6,\"properties\":"
                      "{\"cardinality\":7,\"referenced-data-file\":5}}]}";
    uint8_t buf[256];
    icmt_ok(decode_file(buf, with_payload(buf, odd), &f));
    assert_int_equal(f.blobs[0].cardinality, -1);
    assert_null(f.blobs[0].referenced_data_file);
    icm__puffin_footer_dispose(&f);
    /* no trailing magic; too short for a footer */
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icmt_ok(icm_fileio_write_replace(io, LOC, "PFA1 not a footer at all....", 28));
    assert_int_equal(icm__puffin_read_footer(io, LOC, 28, &f), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "no PFA1 magic at its end"));
    icmt_ok(icm_fileio_write_replace(io, LOC, "PFA1PFA1", 8));
    assert_int_equal(icm__puffin_read_footer(io, LOC, 8, &f), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "too short for a footer"));
    icm_fileio_free(io);
}

/* Puffin files other projects wrote (../shared/fixtures): their footers' blobs, as their
 * writers laid them out. */
static void test_fixture_files(void **state)
{
    (void)state;
    static const struct {
        const char *rel;
        size_t count;
        int64_t second_offset, second_length, first_cardinality;
        const char *first_ref_ends;
    } files[] = {
        {"duckdb-iceberg/data/persistent/multi_blob_deletion_vectors/warehouse/default/"
         "multi_blob_deletion_vectors/data/multiple-deletion-vectors.puffin",
         2, 46, 44, 1, "/data/00000-0-aeff6b64-fd21-4e4d-9808-356eb50b96a5.parquet"},
        {"puffin/iceberg-go/puffin/testdata/deletion-vector-v1.puffin", 1, -1, -1, 5,
         "data/test.parquet"},
        {"puffin/iceberg-go/table/dv/testdata/deletes/multi-blob-dv.puffin", 2, 50, 44, 3,
         "s3://warehouse/db/table/data/file-001.parquet"},
        {"impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors/data/"
         "00000-9-08e88179-85b6-4635-8b34-94b49abc87d9-00001-deletes.puffin",
         2, 46, 42, 1, "/data/00003-3-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet"},
        /* Java's samples: statistics blobs (no properties), one file's blobs zstd-compressed
         * (the footer is not) */
        {"puffin/java-main/core/src/test/resources/org/apache/iceberg/puffin/v1/"
         "sample-metric-data-uncompressed.bin",
         2, 13, 83, -1, NULL},
        {"puffin/java-main/core/src/test/resources/org/apache/iceberg/puffin/v1/"
         "sample-metric-data-compressed-zstd.bin",
         2, 26, 77, -1, NULL},
        {"puffin/java-main/core/src/test/resources/org/apache/iceberg/puffin/v1/"
         "empty-puffin-uncompressed.bin",
         0, -1, -1, -1, NULL},
    };
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        icmt_need_fixture(files[i].rel);
        char *path = icmt_sprintf("%s/%s", icmt_fixtures_dir(), files[i].rel);
        icm__puffin_footer f;
        icmt_ok(icm__puffin_read_footer(io, path, -1, &f));
        assert_int_equal(f.count, files[i].count);
        if (f.count > 0) {
            assert_int_equal(f.blobs[0].offset_bytes, 4);
            assert_int_equal(f.blobs[0].cardinality, files[i].first_cardinality);
            const char *ref = f.blobs[0].referenced_data_file, *want = files[i].first_ref_ends;
            if (want == NULL)
                assert_null(ref);
            else
                assert_true(ref != NULL && strlen(ref) >= strlen(want) &&
                            strcmp(ref + strlen(ref) - strlen(want), want) == 0);
        }
        if (f.count > 1) {
            assert_int_equal(f.blobs[1].offset_bytes, files[i].second_offset);
            assert_int_equal(f.blobs[1].length_bytes, files[i].second_length);
        }
        icm__puffin_footer_dispose(&f);
        free(path);
    }
    icm_fileio_free(io);
}

/* Out of memory at each allocation: ICM_ENOMEM, nothing leaked (ASan checks). */
static void test_out_of_memory(void **state)
{
    (void)state;
    const icmt_puffin_blob blobs[] = {{"aaaa", 4, "/t/data/a.parquet", 1},
                                      {"bbbb", 4, "/t/data/b.parquet", 2}};
    size_t len = 0;
    char *file = icmt_puffin(blobs, 2, &len);
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icmt_ok(icm_fileio_write_replace(io, LOC, file, len));
    int rc = ICM_ENOMEM;
    for (long at = 0; rc == ICM_ENOMEM && at < 1000; at++) {
        icm__puffin_footer f;
        icmt_nomem_arm(at);
        rc = icm__puffin_read_footer(io, LOC, (int64_t)len, &f);
        icmt_nomem_disarm();
        assert_true(rc == 0 || rc == ICM_ENOMEM);
        if (rc == 0)
            assert_int_equal(f.count, 2);
        icm__puffin_footer_dispose(&f);
    }
    assert_int_equal(rc, 0);
    icm_fileio_free(io);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blobs_and_properties),
        cmocka_unit_test(test_order_and_long_footers),
        cmocka_unit_test(test_malformed_footers),
        cmocka_unit_test(test_fixture_files),
        cmocka_unit_test(test_out_of_memory),
    };
    return icmt__exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
