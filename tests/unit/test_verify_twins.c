/*
 * tests/unit/test_verify_twins.c: twins (maint/verify_twins.c) and the size filter the sweep
 * builds them from (util/bloom.c).
 *
 * A file about to be deleted is the twin of a retained entry inside the table that records its
 * size when it can be that entry's file (its format's footer or magic, its Parquet row count)
 * and no such entry names a file of the same bytes. Each case below states which files are
 * kept and asserts the message; files are Parquet files reduced to what a footer needs (a
 * num_rows field), written into the in-memory FileIO.
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
#include "maint/verify.h"
#include "util/bloom.h"
#include "testutil.h"

/* A Parquet file of `size` bytes (at least 16) whose footer says `rows` (< 64) and whose body
 * is `fill`: "PAR1" <body> <FileMetaData {3: num_rows}> <length> "PAR1". */
static void put_parquet(icm_fileio *io, const char *location, size_t size, int rows, char fill)
{
    uint8_t footer[3] = {0x36, (uint8_t)(rows * 2), 0x00}; /* field 3, i64, zigzag; stop */
    assert_true(size >= 16 && rows < 64);
    uint8_t *b = malloc(size);
    assert_non_null(b);
    memcpy(b, "PAR1", 4);
    size_t body = size - 4 - sizeof footer - 8;
    memset(b + 4, fill, body);
    memcpy(b + 4 + body, footer, sizeof footer);
    uint8_t len[4] = {sizeof footer, 0, 0, 0};
    memcpy(b + size - 8, len, 4);
    memcpy(b + size - 4, "PAR1", 4);
    icmt_ok(icm_fileio_write_replace(io, location, b, size));
    free(b);
}

static void put_bytes(icm_fileio *io, const char *location, size_t size, char fill)
{
    char *b = malloc(size);
    assert_non_null(b);
    memset(b, fill, size);
    icmt_ok(icm_fileio_write_replace(io, location, b, size));
    free(b);
}

static icm__reached entry(const char *location, int64_t size, int64_t rows,
                          icm_file_format format)
{
    return (icm__reached){location, ICM__FILE_DATA, size, 42, rows, format};
}

/* The twin verdict for `location` (of `size` bytes) against the entries given. */
static char *verdict(icm_fileio *io, const icm__reached *entries, size_t n, const char *location,
                     int64_t size)
{
    icm__verify_refs twins = ICM__VERIFY_REFS_INIT;
    for (size_t i = 0; i < n; i++)
        icmt_ok(icm__verify_refs_add(&twins, &entries[i]));
    icmt_ok(icm__verify_refs_seal(&twins));
    char *why = NULL;
    icmt_ok(icm__verify_twin_of(&twins, io, "snapshot", location, size, &why));
    icm__verify_refs_dispose(&twins);
    return why;
}

/* A Parquet candidate with an entry's size and row count and other bytes than the entry's file
 * is kept; with another row count, or not Parquet, or the bytes of one such entry's file, or
 * gone, it is not; other sizes are never compared. */
static void test_parquet_twin(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    put_parquet(io, "/t/data/named.parquet", 100, 5, 'x');   /* what the entry names */
    put_parquet(io, "/t/data/live.parquet", 100, 5, 'y');    /* its twin */
    put_parquet(io, "/t/data/copy.parquet", 100, 5, 'x');    /* the same bytes */
    put_parquet(io, "/t/data/rows.parquet", 100, 6, 'y');    /* another row count */
    put_bytes(io, "/t/metadata/old.metadata.json", 100, '{'); /* not Parquet */
    put_parquet(io, "/t/data/bigger.parquet", 101, 5, 'y');
    icm__reached e = entry("/t/data/named.parquet", 100, 5, ICM_FILE_FORMAT_PARQUET);

    char *why = verdict(io, &e, 1, "/t/data/live.parquet", 100);
    assert_non_null(why);
    assert_non_null(strstr(why, "not deleted: snapshot 42 references /t/data/named.parquet, a "
                                "file of the table with this file's size (100 bytes) and row "
                                "count (5), whose bytes differ"));
    assert_non_null(strstr(why, "may still need this one; kept"));
    free(why);
    assert_null(verdict(io, &e, 1, "/t/data/copy.parquet", 100));
    assert_null(verdict(io, &e, 1, "/t/data/rows.parquet", 100));
    assert_null(verdict(io, &e, 1, "/t/metadata/old.metadata.json", 100));
    assert_null(verdict(io, &e, 1, "/t/data/bigger.parquet", 101));
    assert_null(verdict(io, &e, 1, "/t/data/gone.parquet", 100));
    /* an entry without a record count: the bytes decide */
    icm__reached uncounted = entry("/t/data/named.parquet", 100, -1, ICM_FILE_FORMAT_PARQUET);
    why = verdict(io, &uncounted, 1, "/t/data/rows.parquet", 100);
    assert_non_null(why);
    assert_null(strstr(why, "row count"));
    free(why);
    icm_fileio_free(io);
}

/* Several entries of one size: kept when it may be any one's file, unless one names a file of
 * its bytes (its content is still in the table); the message names the first it may be. */
static void test_several_entries_of_one_size(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    put_parquet(io, "/t/data/a.parquet", 64, 3, 'a');
    put_parquet(io, "/t/data/b.parquet", 64, 3, 'b');
    put_parquet(io, "/t/data/c.parquet", 64, 3, 'c');
    put_parquet(io, "/t/data/cand.parquet", 64, 3, 'c');
    put_parquet(io, "/t/data/other.parquet", 64, 3, 'z');
    icm__reached es[] = {entry("/t/data/a.parquet", 64, 3, ICM_FILE_FORMAT_PARQUET),
                         entry("/t/data/b.parquet", 64, 2, ICM_FILE_FORMAT_PARQUET),
                         entry("/t/data/c.parquet", 64, 3, ICM_FILE_FORMAT_PARQUET)};
    assert_null(verdict(io, es, 3, "/t/data/cand.parquet", 64));
    char *why = verdict(io, es, 3, "/t/data/other.parquet", 64);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/a.parquet,"));
    free(why);
    /* the entry naming the candidate itself is not its twin */
    assert_null(verdict(io, es, 1, "/t/data/a.parquet", 64));
    icm_fileio_free(io);
}

/* Many entries of one size and row count: at most 16 files are compared; the candidate is
 * kept when those differ, the message counting the rest (one of them might have its bytes). */
static void test_comparisons_are_bounded(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    enum { N = 20 };
    icm__reached es[N];
    char *names[N];
    for (int i = 0; i < N; i++) {
        names[i] = icmt_sprintf("/t/data/f-%02d.parquet", i);
        put_parquet(io, names[i], 80, 4, (char)('a' + i));
        es[i] = entry(names[i], 80, 4, ICM_FILE_FORMAT_PARQUET);
    }
    put_parquet(io, "/t/data/cand.parquet", 80, 4, 'a' + N - 1); /* f-19's bytes */
    char *why = verdict(io, es, N, "/t/data/cand.parquet", 80);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/f-00.parquet,"));
    assert_non_null(strstr(why, "(as do 4 more files of the table, not compared)"));
    free(why);
    put_parquet(io, "/t/data/cand.parquet", 80, 4, 'a'); /* f-00's: the first compared */
    assert_null(verdict(io, es, N, "/t/data/cand.parquet", 80));
    for (int i = 0; i < N; i++)
        free(names[i]);
    icm_fileio_free(io);
}

/* Other formats: their magic bytes rule out files of another format; otherwise, and for an
 * unknown format, the bytes decide. A file that cannot be read is kept. */
static void test_other_formats_and_unreadable_files(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *io = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/named.avro", "Obj\x01-named", 10));
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/cand.avro", "Obj\x01-other", 10));
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/cand.orc", "ORC-othe-r", 10));
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/plain", "0123456789", 10));
    icm__reached avro = entry("/t/data/named.avro", 10, 2, ICM_FILE_FORMAT_AVRO);
    char *why = verdict(io, &avro, 1, "/t/data/cand.avro", 10);
    assert_non_null(why);
    assert_non_null(strstr(why, "whose bytes differ"));
    free(why);
    assert_null(verdict(io, &avro, 1, "/t/data/cand.orc", 10));
    icm__reached orc = entry("/t/data/named.avro", 10, 2, ICM_FILE_FORMAT_ORC);
    assert_null(verdict(io, &orc, 1, "/t/data/cand.avro", 10));
    icm__reached unknown = entry("/t/data/named.avro", 10, 2, ICM_FILE_FORMAT_OTHER);
    why = verdict(io, &unknown, 1, "/t/data/plain", 10);
    assert_non_null(why);
    free(why);
    /* every read fails: kept, and the message says the two could not be compared */
    icm_fileio_fault_fail_span(io, ICM_IO_READ, 1, 1000000, ICM_EIO, 0);
    why = verdict(io, &unknown, 1, "/t/data/plain", 10);
    assert_non_null(why);
    assert_non_null(strstr(why, "and the two could not be compared"));
    free(why);
    icm_fileio_free(io);
}

/* Files larger than a comparison block: a difference in the last block is found, and equal
 * files of several blocks are equal. */
static void test_blocks(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    size_t size = (3u << 20) + 17;
    put_parquet(io, "/t/data/named.parquet", size, 9, 'q');
    put_parquet(io, "/t/data/same.parquet", size, 9, 'q');
    char *b = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&b, &len, io, "/t/data/same.parquet"));
    b[size - 12] = 'Z'; /* (in the body, just before the footer) */
    icmt_ok(icm_fileio_write_replace(io, "/t/data/late.parquet", b, size));
    icm_free(b);
    icm__reached e = entry("/t/data/named.parquet", (int64_t)size, 9, ICM_FILE_FORMAT_PARQUET);
    assert_null(verdict(io, &e, 1, "/t/data/same.parquet", (int64_t)size));
    char *why = verdict(io, &e, 1, "/t/data/late.parquet", (int64_t)size);
    assert_non_null(why);
    free(why);
    icm_fileio_free(io);
}

/* The Bloom filter: everything added is held across growth; few of the rest pass. */
static void test_bloom(void **state)
{
    (void)state;
    icm__bloom b = ICM__BLOOM_INIT;
    assert_false(icm__bloom_may_hold(&b, icm__bloom_hash_u64(1)));
    icm__bloom_expect(&b, 100); /* (a small first part: it grows several times) */
    enum { N = 200000 };
    for (uint64_t i = 0; i < N; i++)
        icmt_ok(icm__bloom_add(&b, icm__bloom_hash_u64(i * 2)));
    assert_true(b.n_parts > 3);
    size_t passed = 0;
    for (uint64_t i = 0; i < N; i++) {
        assert_true(icm__bloom_may_hold(&b, icm__bloom_hash_u64(i * 2)));
        passed += icm__bloom_may_hold(&b, icm__bloom_hash_u64(i * 2 + 1));
    }
    assert_true(passed < N / 50); /* (0.5% for the first part, less for each next) */
    assert_true(icm__bloom_memory_bytes(&b) <= (size_t)N * 16);
    icm__bloom_dispose(&b);
    assert_int_equal(b.n_parts, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_twin),
        cmocka_unit_test(test_several_entries_of_one_size),
        cmocka_unit_test(test_comparisons_are_bounded),
        cmocka_unit_test(test_other_formats_and_unreadable_files),
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_bloom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
