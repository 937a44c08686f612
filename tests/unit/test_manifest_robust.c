/*
 * tests/unit/test_manifest_robust.c: hostile input and failing allocations. A sample of real
 * manifests and manifest lists is corrupted one byte at a time (every position flipped) and
 * truncated at every length; decoding must end in success or a clean ICM_EINVALID /
 * ICM_EUNSUPPORTED, never a crash or an over-read (run under ASan+UBSan). Then every allocation
 * of a full read (and of a write) is failed in turn: each must give ICM_ENOMEM and leak nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "icemaint/manifest.h"
#include "testutil.h"

static const char *const SAMPLE[] = {
    /* null codec manifest list and manifest (Impala-rewritten, no Iceberg header keys) */
    ("impala/testdata/data/iceberg_test/hadoop_catalog/hadoop_catalog_test/functional_parquet/"
     "hadoop_catalog_test/metadata/2c2fa00b-eb20-460a-835b-d69b32560e21-m0.avro"),
    "loose-avro/iceberg-go/testdata/duckdb_v3_manifest_list.avro",
    /* deflate (Spark) and snappy (CRC-checked) manifests */
    "loose-avro/iceberg-rust-old/crates/iceberg/testdata/partition_manifest_v2.avro",
    "loose-avro/iceberg-java-codecs/python/tests/avro/data/manifest_snappy.avro",
    "loose-avro/iceberg-rust-old/crates/iceberg/testdata/simple_manifest_list_v2.avro",
    /* zstandard: no engine-written sample exists, so our own v3 file from the fuzz seeds */
    "src:fuzz/corpus/manifest/manifest-v3-zstd.avro",
};

/* Decode a whole file as list, else manifest. Returns the final code. */
static int decode(const char *data, size_t len, int *rows)
{
    *rows = 0;
    icm_manifest_list_reader *lr = NULL;
    int rc = icm_manifest_list_reader_open(&lr, data, len, "x.avro", NULL);
    if (rc == 0) {
        const icm_manifest_file *m;
        while ((rc = icm_manifest_list_reader_next(&m, lr)) == 0)
            (*rows)++;
        icm_manifest_list_reader_free(lr);
        return rc;
    }
    if (rc == ICM_ENOMEM)
        return rc;
    icm_manifest_reader *mr = NULL;
    rc = icm_manifest_reader_open(&mr, data, len, "x.avro", NULL);
    if (rc < 0)
        return rc;
    const icm_manifest_entry *e;
    while ((rc = icm_manifest_reader_next(&e, mr)) == 0)
        (*rows)++;
    icm_manifest_reader_free(mr);
    return rc;
}

/* A fixture path, or "src:" + a path in the source tree. */
static char *load(const char *rel, size_t *len)
{
    char *path = strncmp(rel, "src:", 4) == 0 ? icmt_sprintf("%s/%s", ICM_SOURCE_DIR, rel + 4)
                                              : icmt_sprintf("%s/%s", icmt_fixtures_dir(), rel);
    char *data = icmt_read_file(path, len);
    free(path);
    return data;
}

static void assert_clean(int rc)
{
    if (rc != ICM_ITEROVER && rc != ICM_EINVALID && rc != ICM_EUNSUPPORTED)
        print_error("unexpected code %d: %s\n", rc, icm_error_last()->message);
    assert_true(rc == ICM_ITEROVER || rc == ICM_EINVALID || rc == ICM_EUNSUPPORTED);
}

static void test_corrupted_byte_sweep(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof SAMPLE / sizeof SAMPLE[0]; f++) {
        size_t len;
        char *orig = load(SAMPLE[f], &len);
        if (orig == NULL)
            icmt_skip_because("the sample %s is missing", SAMPLE[f]);
        int rows_ok;
        assert_int_equal(decode(orig, len, &rows_ok), ICM_ITEROVER);
        assert_true(rows_ok > 0);
        /* A private heap copy of exactly the right size, so ASan sees any over-read. */
        char *buf = malloc(len);
        int detected = 0;
        for (size_t pos = 0; pos < len; pos++) {
            memcpy(buf, orig, len);
            buf[pos] = (char)(buf[pos] ^ 0xff);
            int rows;
            int rc = decode(buf, len, &rows);
            assert_clean(rc);
            if (rc != ICM_ITEROVER)
                detected++;
        }
        /* Flipping sync markers, lengths, magic or compressed bytes must be caught. */
        assert_true(detected > 0);
        for (size_t cut = 0; cut < len; cut++) {
            char *t = malloc(cut ? cut : 1);
            memcpy(t, orig, cut);
            int rows;
            int rc = decode(t, cut, &rows);
            assert_clean(rc);
            /* A shorter file can only look valid when cut at a block boundary. */
            if (rc == ICM_ITEROVER)
                assert_true(rows <= rows_ok);
            free(t);
        }
        free(buf);
        free(orig);
    }
}

/* ---- allocation failures ---- */

static long g_fail_at; /* 1-based allocation to fail; 0 = never */
static long g_count;

static void *fail_malloc(size_t n)
{
    if (g_fail_at && ++g_count == g_fail_at)
        return NULL;
    return malloc(n);
}

static void *fail_realloc(void *p, size_t n)
{
    if (g_fail_at && ++g_count == g_fail_at)
        return NULL;
    return realloc(p, n);
}

static const icm_allocator FAILING = {fail_malloc, fail_realloc, free};

static int write_copy(const char *data, size_t len)
{
    icm_manifest_reader *r = NULL;
    int rc = icm_manifest_reader_open(&r, data, len, "m.avro", NULL);
    if (rc < 0)
        return rc;
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.codec = ICM_AVRO_CODEC_DEFLATE;
    o.compression_level = -1;
    icm_manifest_writer *w = NULL;
    rc = icm_manifest_writer_new_like(&w, r, &o);
    const icm_manifest_entry *e;
    while (rc == 0 && (rc = icm_manifest_reader_next(&e, r)) == 0)
        rc = icm_manifest_writer_add(w, e);
    char *out = NULL;
    size_t out_len;
    if (rc == ICM_ITEROVER)
        rc = icm_manifest_writer_finish(&out, &out_len, NULL, w);
    icm_free(out);
    icm_manifest_writer_free(w);
    icm_manifest_reader_free(r);
    return rc;
}

/* Copy every entry of a manifest list into a new v3 list (zstd). */
static int write_list_copy(const char *data, size_t len)
{
    icm_manifest_list_reader *r = NULL;
    int rc = icm_manifest_list_reader_open(&r, data, len, "l.avro", NULL);
    if (rc < 0)
        return rc;
    icm_manifest_list_writer_options o = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    o.format_version = 3;
    o.codec = ICM_AVRO_CODEC_ZSTD;
    o.compression_level = -1;
    icm_manifest_list_writer *w = NULL;
    rc = icm_manifest_list_writer_new(&w, &o);
    const icm_manifest_file *m;
    while (rc == 0 && (rc = icm_manifest_list_reader_next(&m, r)) == 0)
        rc = icm_manifest_list_writer_add(w, m);
    char *out = NULL;
    size_t out_len;
    if (rc == ICM_ITEROVER)
        rc = icm_manifest_list_writer_finish(&out, &out_len, w);
    icm_free(out);
    icm_manifest_list_writer_free(w);
    icm_manifest_list_reader_free(r);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    size_t len, llen;
    char *data = load("impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors/"
                      "metadata/e9787b6c-e745-4040-b78f-e4012aa178ab-m0.avro", &len);
    char *list = load(SAMPLE[1], &llen);
    if (data == NULL || list == NULL) {
        free(data);
        free(list);
        icmt_skip_because("the fixture Avro files this test reads (%s) are missing", SAMPLE[1]);
    }
    int rows;
    assert_int_equal(decode(data, len, &rows), ICM_ITEROVER);
    icm_allocator_set(&FAILING);
    long failures = 0;
    for (int which = 0; which < 4; which++) {
        for (g_fail_at = 1;; g_fail_at++) {
            g_count = 0;
            int rc = which == 0   ? decode(data, len, &rows)
                     : which == 1 ? decode(list, llen, &rows)
                     : which == 2 ? write_copy(data, len)
                                  : write_list_copy(list, llen);
            if (g_count < g_fail_at) {
                /* nothing left to fail: the call succeeded */
                assert_int_equal(rc, which >= 2 ? 0 : ICM_ITEROVER);
                break;
            }
            if (rc != ICM_ENOMEM)
                print_error("case %d, allocation %ld: %s: %s\n", which, (long)g_fail_at,
                            icm_error_code_name(rc), icm_error_last()->message);
            assert_int_equal(rc, ICM_ENOMEM);
            assert_int_equal(icm_error_last()->code, ICM_ENOMEM);
            failures++;
        }
    }
    g_fail_at = 0;
    icm_allocator_set(NULL);
    assert_true(failures > 20);
    free(data);
    free(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corrupted_byte_sweep),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
