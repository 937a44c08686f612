/*
 * tests/unit/test_verify_queue.c: the verifier's queue (maint/verify.c). Object-store files are
 * stat'ed many at a time in queues of up to 1024; the verdicts must be exactly those of one
 * stat per file in turn: every problem reported once, in the order the files were reached,
 * across queue boundaries and around local files (judged at once, after the queued files
 * before them); a file reached twice judged by its first stat; the counts as in turn; and a
 * file found fine in an earlier walk (the `verified` set) not stat'ed again.
 *
 * The store is the in-memory FileIO (its `s3://` names are object-store keys, its `/...`
 * names local files) behind the fault wrapper, which counts the stats.
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
#include "maint/pathset.h"
#include "maint/verify.h"

#define N_FILES 2600 /* more than two queues */
#define SIZE 7

typedef struct seen {
    char **locations;
    icm__verify_what *what;
    size_t n, cap;
} seen;

static int on_issue(const icm__verify_issue *issue, void *payload)
{
    seen *s = payload;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->locations = realloc(s->locations, s->cap * sizeof *s->locations);
        s->what = realloc(s->what, s->cap * sizeof *s->what);
        assert_non_null(s->locations);
        assert_non_null(s->what);
    }
    s->locations[s->n] = strdup(issue->location);
    s->what[s->n++] = issue->what;
    return 0;
}

static void seen_free(seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->locations[i]);
    free(s->locations);
    free(s->what);
    memset(s, 0, sizeof *s);
}

/* File i's name: every 100th is a local file, the rest object-store keys. */
static void name_of(size_t i, char *buf, size_t size)
{
    if (i % 100 == 50)
        snprintf(buf, size, "/wh/t/data/local-%05zu.parquet", i);
    else
        snprintf(buf, size, "s3://b/wh/t/data/f-%05zu.parquet", i);
}

/* What file i is like: missing (i % 97 == 3), the wrong size (i % 89 == 5), else fine. */
static icm__verify_what trouble(size_t i, bool *fine)
{
    *fine = false;
    if (i % 97 == 3)
        return ICM__VERIFY_MISSING;
    if (i % 89 == 5)
        return ICM__VERIFY_SIZE;
    *fine = true;
    return ICM__VERIFY_MISSING;
}

static icm_fileio *store_new(icm_fileio **mem_out)
{
    icm_fileio *mem = NULL, *io = NULL;
    assert_int_equal(icm_fileio_mem_new(&mem), 0);
    char name[96];
    for (size_t i = 0; i < N_FILES; i++) {
        bool fine;
        icm__verify_what w = trouble(i, &fine);
        name_of(i, name, sizeof name);
        if (!fine && w == ICM__VERIFY_MISSING)
            continue;
        size_t len = fine ? SIZE : SIZE + 1;
        assert_int_equal(icm_fileio_write_replace(mem, name, "abcdefgh", len), 0);
    }
    *mem_out = mem;
    assert_int_equal(icm_fileio_fault_new(&io, mem), 0);
    return io;
}

/* Reach every file in order; then file 3 (missing) and file 0 (fine) again. */
static void walk(icm__verifier *v)
{
    char name[96];
    for (size_t i = 0; i < N_FILES; i++) {
        name_of(i, name, sizeof name);
        icm__reached f = {name, ICM__FILE_DATA, SIZE, 1, -1, ICM_FILE_FORMAT_OTHER, 0, INT64_MIN,
                          {NULL, 0}, {NULL, 0}, {0, 0}, NULL, 0, 0};
        assert_int_equal(icm__verifier_check(v, &f), 0);
    }
    const size_t again[] = {3, 0};
    for (size_t k = 0; k < 2; k++) {
        name_of(again[k], name, sizeof name);
        icm__reached f = {name, ICM__FILE_DATA, SIZE, 1, -1, ICM_FILE_FORMAT_OTHER, 0, INT64_MIN,
                          {NULL, 0}, {NULL, 0}, {0, 0}, NULL, 0, 0};
        assert_int_equal(icm__verifier_check(v, &f), 0);
    }
    assert_int_equal(icm__verifier_flush(v), 0);
}

static void test_queued_stats_judge_as_in_turn(void **state)
{
    (void)state;
    icm_fileio *mem = NULL;
    icm_fileio *io = store_new(&mem);
    icm__pathset *verified = NULL;
    assert_int_equal(icm__pathset_new(&verified, 0), 0);
    const char *roots[] = {"s3://b/wh/t", "/wh/t"};
    icm__verify_options vo = {NULL, 0, true, true, roots, 2, verified, NULL, NULL};
    seen s = {0};
    icm__verifier *v = NULL;
    assert_int_equal(icm__verifier_new(&v, io, &vo, on_issue, &s), 0);
    walk(v);

    /* Every problem once, in file order (the repeated missing file 3 is not reported again). */
    size_t want = 0, bad = 0;
    char name[96];
    for (size_t i = 0; i < N_FILES; i++) {
        bool fine;
        icm__verify_what w = trouble(i, &fine);
        if (fine)
            continue;
        bad++;
        name_of(i, name, sizeof name);
        assert_true(want < s.n);
        assert_string_equal(s.locations[want], name);
        assert_int_equal(s.what[want], w);
        want++;
    }
    assert_int_equal(s.n, bad);
    /* Counts as in turn: each file once, plus file 0 again (found fine: counted, not
     * stat'ed); the second reach of the reported file 3 is not counted. */
    icm__verify_counts c = icm__verifier_counts(v);
    assert_int_equal(c.checked, N_FILES + 1);
    assert_int_equal(c.issues, bad);
    assert_int_equal(icm_fileio_fault_count(io, ICM_IO_STAT), N_FILES);

    /* A second walk with the same `verified` set stats only the files with a problem. */
    icm__verifier_forget_issues(v);
    seen_free(&s);
    walk(v);
    assert_int_equal(s.n, bad);
    assert_int_equal(icm_fileio_fault_count(io, ICM_IO_STAT), N_FILES + bad);

    icm__verifier_free(v);
    seen_free(&s);
    icm__pathset_free(verified);
    icm_fileio_free(io);
}

/* A walk that stops with files still queued frees them (ASan: no leak), and nothing of them
 * is reported. */
static void test_unflushed_queue_is_freed(void **state)
{
    (void)state;
    icm_fileio *mem = NULL;
    icm_fileio *io = store_new(&mem);
    const char *roots[] = {"s3://b/wh/t"};
    icm__verify_options vo = {NULL, 0, true, true, roots, 1, NULL, NULL, NULL};
    seen s = {0};
    icm__verifier *v = NULL;
    assert_int_equal(icm__verifier_new(&v, io, &vo, on_issue, &s), 0);
    char name[96];
    for (size_t i = 0; i < 10; i++) {
        name_of(i, name, sizeof name);
        icm__reached f = {name, ICM__FILE_DATA, SIZE, 1, -1, ICM_FILE_FORMAT_OTHER, 0, INT64_MIN,
                          {NULL, 0}, {NULL, 0}, {0, 0}, NULL, 0, 0};
        assert_int_equal(icm__verifier_check(v, &f), 0);
    }
    assert_int_equal(s.n, 0);
    assert_int_equal(icm_fileio_fault_count(io, ICM_IO_STAT), 0);
    icm__verifier_free(v);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_stats_judge_as_in_turn),
        cmocka_unit_test(test_unflushed_queue_is_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
