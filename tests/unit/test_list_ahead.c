/*
 * test_list_ahead.c: icm__fileio_list_ahead_batches (one file at a time through
 * icmt_list_ahead) gives what icm_fileio_list_flags gives.
 *
 * A scripted back end lists N files named f0..f{N-1} in that order, with sizes and mtimes that
 * encode the index, and can fail after K files with its own error. Checked: the same files in
 * the same order with the same size and mtime for N around the batch size (0, 1, 4095, 4096,
 * 4097, 20000); a callback that stops at file K (at and around batch boundaries) gets exactly
 * K+1 calls and its value back; a listing error after K files comes back with the listing
 * thread's error details after exactly K callbacks; a name longer than a whole batch of names
 * arrives whole; a listing that cannot start (fault FileIO) fails as the plain call does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "io/list_ahead.h"
#include "testutil.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* a scripted back end                                                                         */

typedef struct scripted {
    icm_fileio base;
    size_t files;        /* how many files the listing gives */
    size_t fail_after;   /* SIZE_MAX: never; else ICM_EIO after this many files */
    size_t long_at;      /* SIZE_MAX: none; else this file gets a name of long_len bytes */
    size_t long_len;
} scripted;

static char *name_of(const scripted *s, size_t i)
{
    if (i == s->long_at) {
        char *n = malloc(s->long_len + 1);
        assert_non_null(n);
        memset(n, 'x', s->long_len);
        memcpy(n, "/t/", 3);
        n[s->long_len] = '\0';
        return n;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "/t/d%zu/f%zu", i / 100, i);
    return strdup(buf);
}

static int scripted_list_flags(icm_fileio *io, const char *prefix, unsigned flags,
                               icm_list_cb cb, void *payload)
{
    (void)prefix;
    (void)flags;
    scripted *s = (scripted *)io;
    for (size_t i = 0; i < s->files; i++) {
        if (i == s->fail_after)
            return icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, "/t/broken",
                                  "scripted failure after %zu files", i);
        char *name = name_of(s, i);
        icm_file_info info = {sizeof(icm_file_info), name, (int64_t)i * 3, (int64_t)i * 7 + 1};
        int rc = cb(&info, payload);
        free(name);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void scripted_free(icm_fileio *io)
{
    (void)io; /* on the stack */
}

static const icm_fileio_methods SCRIPTED = {
    .version = 2, .name = "scripted", .list_flags = scripted_list_flags, .free = scripted_free};

static scripted make(size_t files)
{
    return (scripted){{&SCRIPTED}, files, SIZE_MAX, SIZE_MAX, 0};
}

/* ------------------------------------------------------------------------------------------ */
/* a recording callback                                                                        */

typedef struct record {
    const scripted *s;
    size_t calls;
    size_t stop_at;   /* SIZE_MAX: never; else return 42 on this call (0-based) */
    size_t mismatches;
} record;

static int record_cb(const icm_file_info *info, void *payload)
{
    record *r = payload;
    size_t i = r->calls++;
    char *want = name_of(r->s, i);
    if (strcmp(want, info->location) != 0 || info->size_bytes != (int64_t)i * 3 ||
        info->mtime_ms != (int64_t)i * 7 + 1) {
        if (r->mismatches++ < 5)
            print_error("file %zu: got %.60s %lld %lld\n", i, info->location,
                        (long long)info->size_bytes, (long long)info->mtime_ms);
    }
    free(want);
    return i == r->stop_at ? 42 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* tests                                                                                       */

static void test_same_files_same_order(void **state)
{
    (void)state;
    const size_t counts[] = {0, 1, 4095, 4096, 4097, 20000};
    for (size_t k = 0; k < ICM__ARRAY_LEN(counts); k++) {
        scripted s = make(counts[k]);
        record r = {&s, 0, SIZE_MAX, 0};
        assert_int_equal(icmt_list_ahead(&s.base, "/t", 0, record_cb, &r), 0);
        assert_int_equal(r.calls, counts[k]);
        assert_int_equal(r.mismatches, 0);
    }
}

static void test_callback_stop(void **state)
{
    (void)state;
    const size_t stops[] = {0, 1, 4095, 4096, 4097, 16383, 16384, 19999};
    for (size_t k = 0; k < ICM__ARRAY_LEN(stops); k++) {
        scripted s = make(20000);
        record r = {&s, 0, stops[k], 0};
        assert_int_equal(icmt_list_ahead(&s.base, "/t", 0, record_cb, &r), 42);
        assert_int_equal(r.calls, stops[k] + 1); /* nothing after the stop */
        assert_int_equal(r.mismatches, 0);
    }
}

static void test_listing_error_after_k(void **state)
{
    (void)state;
    const size_t fails[] = {0, 1, 4096, 12345};
    for (size_t k = 0; k < ICM__ARRAY_LEN(fails); k++) {
        scripted s = make(20000);
        s.fail_after = fails[k];
        record r = {&s, 0, SIZE_MAX, 0};
        icm_error_clear();
        assert_int_equal(icmt_list_ahead(&s.base, "/t", 0, record_cb, &r), ICM_EIO);
        assert_int_equal(r.calls, fails[k]); /* every file listed before the error */
        assert_int_equal(r.mismatches, 0);
        const icm_error *e = icm_error_last();
        assert_int_equal(e->code, ICM_EIO);
        assert_string_equal(e->location, "/t/broken");
        char want[64];
        snprintf(want, sizeof want, "scripted failure after %zu files", fails[k]);
        assert_string_equal(e->message, want);
    }
}

static void test_name_longer_than_a_batch(void **state)
{
    (void)state;
    scripted s = make(9000);
    s.long_at = 5000;
    s.long_len = 600 * 1024; /* the batches hold 256 KiB of names */
    record r = {&s, 0, SIZE_MAX, 0};
    assert_int_equal(icmt_list_ahead(&s.base, "/t", 0, record_cb, &r), 0);
    assert_int_equal(r.calls, 9000);
    assert_int_equal(r.mismatches, 0);
}

static int count_cb(const icm_file_info *info, void *payload)
{
    (void)info;
    (*(size_t *)payload)++;
    return 0;
}

static void test_listing_refused_up_front(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *fault = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_create_new(mem, "/t/a", "x", 1));
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    size_t n = 0;
    assert_int_equal(icmt_list_ahead(fault, "/t", ICM_LIST_STAT_OPTIONAL, count_cb, &n), 0);
    assert_int_equal(n, 1);
    icm_fileio_fault_fail_nth(fault, ICM_IO_LIST, 1, ICM_EIO);
    n = 0;
    assert_int_equal(icmt_list_ahead(fault, "/t", 0, count_cb, &n), ICM_EIO);
    assert_int_equal(n, 0);
    assert_int_equal(icm_error_last()->code, ICM_EIO);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_LIST), 2); /* one operation each */
    icm_fileio_free(fault);
}

/* The batch form: the same files in the same order, in batches of at most 4,096; a stop in the
 * middle of the listing ends it with the callback's value and no batch after. */
typedef struct batches {
    record rec;
    size_t calls;
    size_t largest;
    size_t stop_at_call; /* SIZE_MAX: never */
} batches;

static int batch_cb(const icm_file_info *files, size_t n, void *payload)
{
    batches *b = payload;
    b->calls++;
    if (n > b->largest)
        b->largest = n;
    for (size_t i = 0; i < n; i++)
        (void)record_cb(&files[i], &b->rec);
    return b->calls - 1 == b->stop_at_call ? 42 : 0;
}

static void test_batches(void **state)
{
    (void)state;
    scripted s = make(20000);
    batches b = {{&s, 0, SIZE_MAX, 0}, 0, 0, SIZE_MAX};
    assert_int_equal(icm__fileio_list_ahead_batches(&s.base, "/t", 0, batch_cb, &b), 0);
    assert_int_equal(b.rec.calls, 20000);
    assert_int_equal(b.rec.mismatches, 0);
    assert_true(b.largest <= 4096);
    assert_true(b.calls >= 5); /* 20,000 names do not fit in fewer */

    scripted s2 = make(20000);
    batches stop = {{&s2, 0, SIZE_MAX, 0}, 0, 0, 1};
    assert_int_equal(icm__fileio_list_ahead_batches(&s2.base, "/t", 0, batch_cb, &stop), 42);
    assert_int_equal(stop.calls, 2);
    assert_true(stop.rec.calls <= 2 * 4096);
    assert_int_equal(stop.rec.mismatches, 0);
}

/* ---- ranges ---- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Which range a name falls in: the number of cuts sorting strictly before it. */
static size_t range_of(const char *name, char *const *cuts, size_t n_cuts)
{
    size_t k = 0;
    while (k < n_cuts && strcmp(cuts[k], name) < 0)
        k++;
    return k;
}

typedef struct seen {
    unsigned char *count; /* per file index */
    size_t total;
    size_t calls;
    size_t mixed;         /* batches holding files of two ranges */
    char *const *cuts;
    size_t n_cuts;
    size_t stop_at_call;  /* SIZE_MAX: never */
} seen;

static int seen_cb(const icm_file_info *files, size_t n, void *payload)
{
    seen *v = payload;
    v->calls++;
    size_t first = range_of(files[0].location, v->cuts, v->n_cuts);
    for (size_t i = 0; i < n; i++) {
        const char *f = strrchr(files[i].location, 'f');
        size_t idx = (size_t)strtoull(f + 1, NULL, 10);
        assert_int_equal(files[i].size_bytes, (int64_t)idx * 3);
        v->count[idx]++;
        v->total++;
        if (range_of(files[i].location, v->cuts, v->n_cuts) != first)
            v->mixed++;
    }
    return v->calls - 1 == v->stop_at_call ? 42 : 0;
}

/* Cut at file names (each must come once, in the range it ends) and at names of no file: every
 * file exactly once, each batch from one range; a failing range's error comes back with its
 * details; a stop ends every range; cuts out of order are refused before anything is listed. */
static void test_ranges(void **state)
{
    (void)state;
    enum { N = 20000 };
    scripted s = make(N);
    char *cuts[8];
    size_t n_cuts = 0;
    const size_t at[] = {17, 4096, 9999, 15000};
    for (size_t k = 0; k < ICM__ARRAY_LEN(at); k++)
        cuts[n_cuts++] = name_of(&s, at[k]);
    cuts[n_cuts++] = strdup("/t/d5/");   /* a folder: names no file */
    cuts[n_cuts++] = strdup("/t/d150");  /* between files */
    cuts[n_cuts++] = strdup("/t/d99/f9999~"); /* after the last of d99 */
    qsort(cuts, n_cuts, sizeof *cuts, cmp_str);

    seen v = {calloc(N, 1), 0, 0, 0, cuts, n_cuts, SIZE_MAX};
    assert_int_equal(icm__fileio_list_ahead_ranges(&s.base, "/t", 0, (const char *const *)cuts,
                                                   n_cuts, seen_cb, &v),
                     0);
    assert_int_equal(v.total, N);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(v.count[i], 1);
    assert_int_equal(v.mixed, 0);
    assert_true(v.calls >= n_cuts + 1); /* every range had files */

    /* every range's listing fails after 12,345 files: the error, with its details */
    scripted f = make(N);
    f.fail_after = 12345;
    memset(v.count, 0, N);
    v.total = v.calls = 0;
    icm_error_clear();
    assert_int_equal(icm__fileio_list_ahead_ranges(&f.base, "/t", 0, (const char *const *)cuts,
                                                   n_cuts, seen_cb, &v),
                     ICM_EIO);
    assert_true(v.total <= 12345);
    assert_string_equal(icm_error_last()->location, "/t/broken");
    assert_string_equal(icm_error_last()->message, "scripted failure after 12345 files");

    /* the callback stops at its second batch: 42, and no batch after */
    memset(v.count, 0, N);
    v.total = v.calls = 0;
    v.stop_at_call = 1;
    assert_int_equal(icm__fileio_list_ahead_ranges(&s.base, "/t", 0, (const char *const *)cuts,
                                                   n_cuts, seen_cb, &v),
                     42);
    assert_int_equal(v.calls, 2);

    /* cuts out of order: refused, nothing listed */
    char *swapped = cuts[0];
    cuts[0] = cuts[1];
    cuts[1] = swapped;
    v.calls = 0;
    assert_int_equal(icm__fileio_list_ahead_ranges(&s.base, "/t", 0, (const char *const *)cuts,
                                                   n_cuts, seen_cb, &v),
                     ICM_EINVALID);
    assert_int_equal(v.calls, 0);
    for (size_t k = 0; k < n_cuts; k++)
        free(cuts[k]);
    free(v.count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_files_same_order),
        cmocka_unit_test(test_callback_stop),
        cmocka_unit_test(test_listing_error_after_k),
        cmocka_unit_test(test_name_longer_than_a_batch),
        cmocka_unit_test(test_listing_refused_up_front),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
