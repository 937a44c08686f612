/*
 * test_fileio_list_range.c: icm_fileio_list_opts with a range (start_after, end_before).
 *
 * Splitting a listing into shards at chosen locations (existing objects and names between them;
 * the lower shard ends before cut + 0x01, the upper starts after cut) lists every object exactly
 * once across the shards, each shard only objects strictly inside its range: on the in-memory back end (object-store keys and local `file:` forms), on the local
 * back end (readdir order: the wrapper applies the range), over the fault wrapper (one counted
 * listing per shard) and a path map (ranges in the original names), and for a version-3 back
 * end without the slot. The in-memory back end lists in byte order and seeks natively: its slot,
 * called directly, starts strictly after start_after and stops before end_before. Options are
 * checked (unknown version refused; NULL = defaults).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "icemaint/sys/fileio.h"
#include "testutil.h"

typedef struct seen {
    char **v;
    size_t n;
} seen;

static int collect(const icm_file_info *info, void *payload)
{
    seen *s = payload;
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    assert_non_null(s->v);
    s->v[s->n] = strdup(info->location);
    assert_non_null(s->v[s->n]);
    s->n++;
    return 0;
}

static void seen_free(seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static seen list_range(icm_fileio *io, const char *prefix, const char *after, const char *before)
{
    seen s = {NULL, 0};
    icm_fileio_list_options opts = ICM_FILEIO_LIST_OPTIONS_INIT;
    opts.start_after = after;
    opts.end_before = before;
    icmt_ok(icm_fileio_list_opts(io, prefix, &opts, collect, &s));
    return s;
}

/* The whole listing (sorted), then shards split at `cuts` (sorted, NULL-terminated): every
 * object in exactly one shard, each within its range; `ordered`: each shard comes sorted. */
static void check_shards(icm_fileio *io, const char *prefix, const char *const *cuts,
                         size_t want_total, bool ordered)
{
    seen all = list_range(io, prefix, NULL, NULL);
    assert_int_equal(all.n, want_total);
    qsort(all.v, all.n, sizeof *all.v, cmp_str);
    for (size_t i = 1; i < all.n; i++)
        assert_true(strcmp(all.v[i - 1], all.v[i]) < 0); /* no duplicates */
    int *hits = calloc(all.n, sizeof *hits);
    size_t n_cuts = 0;
    while (cuts[n_cuts] != NULL)
        n_cuts++;
    for (size_t k = 0; k <= n_cuts; k++) {
        /* split at cut c: the lower shard ends before c + 0x01 (the next string after c), the
         * upper one starts after c, so an object at c itself is in the lower one */
        const char *after = k == 0 ? NULL : cuts[k - 1];
        char *before = k == n_cuts ? NULL : icmt_sprintf("%s\x01", cuts[k]);
        seen sh = list_range(io, prefix, after, before);
        for (size_t i = 0; i < sh.n; i++) {
            if (after != NULL)
                assert_true(strcmp(sh.v[i], after) > 0);
            if (before != NULL)
                assert_true(strcmp(sh.v[i], before) < 0);
            if (ordered && i > 0)
                assert_true(strcmp(sh.v[i - 1], sh.v[i]) < 0);
            char **hit = bsearch(&sh.v[i], all.v, all.n, sizeof *all.v, cmp_str);
            assert_non_null(hit);
            hits[hit - all.v]++;
        }
        seen_free(&sh);
        free(before);
    }
    for (size_t i = 0; i < all.n; i++) {
        if (hits[i] != 1)
            print_error("%s listed %d times across the shards\n", all.v[i], hits[i]);
        assert_int_equal(hits[i], 1);
    }
    free(hits);
    seen_free(&all);
}

/* Names whose byte order differs from a path-wise order ('-' and '.' sort before '/'). */
static const char *const NAMES[] = {"a-b",     "a.b",     "a/b",          "a/c/d", "a0",
                                    "data/x1", "data/x2", "data/y",       "m",     "meta/v1.json",
                                    "meta/v2.json",       "z",            "zz/deep/er/file"};
#define N_NAMES (sizeof NAMES / sizeof NAMES[0])

static void fill(icm_fileio *io, const char *base)
{
    for (size_t i = 0; i < N_NAMES; i++) {
        char *loc = icmt_sprintf("%s/%s", base, NAMES[i]);
        icmt_ok(icm_fileio_create_new(io, loc, "x", 1));
        free(loc);
    }
}

static void test_mem_shards_object_store(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    fill(io, "s3://b/t");
    icmt_ok(icm_fileio_create_new(io, "s3://b/t_2/x", "x", 1)); /* not below the prefix */
    icmt_ok(icm_fileio_create_new(io, "s3://b/s", "x", 1));
    const char *cuts[] = {"s3://b/t/a-b",   /* an object */
                          "s3://b/t/a/b0",  /* between objects */
                          "s3://b/t/data/", /* a "folder" */
                          "s3://b/t/m",     "s3://b/t/zz", NULL};
    check_shards(io, "s3://b/t", cuts, N_NAMES, true);
    /* and the full listing itself is in byte order */
    seen all = list_range(io, "s3://b/t", NULL, NULL);
    for (size_t i = 1; i < all.n; i++)
        assert_true(strcmp(all.v[i - 1], all.v[i]) < 0);
    seen_free(&all);
    /* bounds outside the prefix's locations: all or nothing */
    seen s = list_range(io, "s3://b/t", "s3://a", "s3://c");
    assert_int_equal(s.n, N_NAMES);
    seen_free(&s);
    s = list_range(io, "s3://b/t", "s3://b/t0", NULL);
    assert_int_equal(s.n, 0);
    seen_free(&s);
    s = list_range(io, "s3://b/t", "s3://b/t/m", "s3://b/t/m"); /* empty range */
    assert_int_equal(s.n, 0);
    seen_free(&s);
    /* both bounds strict: an object at either bound is not listed */
    s = list_range(io, "s3://b/t", "s3://b/t/data/x1", "s3://b/t/m");
    assert_int_equal(s.n, 2);
    assert_string_equal(s.v[0], "s3://b/t/data/x2");
    assert_string_equal(s.v[1], "s3://b/t/data/y");
    seen_free(&s);
    icm_fileio_free(io);
}

static void test_mem_shards_local_forms(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    fill(io, "/w/t");
    /* listed in the prefix's form: cuts in that form */
    const char *cuts[] = {"file:///w/t/a.b", "file:///w/t/data/x2", "file:///w/t/n", NULL};
    check_shards(io, "file:///w/t", cuts, N_NAMES, true);
    const char *plain[] = {"/w/t/a", "/w/t/meta/", NULL};
    check_shards(io, "/w/t", plain, N_NAMES, true);
    icm_fileio_free(io);
}

/* The slot itself, without the wrapper's check: it seeks and stops. */
static void test_mem_seeks_natively(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    fill(io, "s3://b/t");
    fill(io, "/w/t");
    const icm_fileio_methods *m = io->methods;
    assert_true(m->version >= 4);
    assert_non_null(m->list_range);
    icm_fileio_list_options o = ICM_FILEIO_LIST_OPTIONS_INIT;
    o.start_after = "s3://b/t/data/x1";
    o.end_before = "s3://b/t/meta/v2.json";
    seen s = {NULL, 0};
    icmt_ok(m->list_range(io, "s3://b/t", &o, collect, &s));
    assert_int_equal(s.n, 4);
    assert_string_equal(s.v[0], "s3://b/t/data/x2");
    assert_string_equal(s.v[1], "s3://b/t/data/y");
    assert_string_equal(s.v[2], "s3://b/t/m");
    assert_string_equal(s.v[3], "s3://b/t/meta/v1.json");
    seen_free(&s);
    o.start_after = "file:///w/t/z";
    o.end_before = NULL;
    icmt_ok(m->list_range(io, "file:///w/t", &o, collect, &s));
    assert_int_equal(s.n, 1);
    assert_string_equal(s.v[0], "file:///w/t/zz/deep/er/file");
    seen_free(&s);
    icm_fileio_free(io);
}

static void test_local_shards(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *t = icmt_sprintf("%s/t", dir);
    icm_fileio *io;
    icmt_ok(icm_fileio_local_new(&io));
    fill(io, t);
    char *other = icmt_sprintf("%s/t_2/x", dir);
    icmt_ok(icm_fileio_create_new(io, other, "x", 1)); /* beside the prefix: never listed */
    char *c1 = icmt_sprintf("%s/a-b", t), *c2 = icmt_sprintf("%s/data/", t),
         *c3 = icmt_sprintf("%s/meta/v1.json", t), *c4 = icmt_sprintf("%s/zz", t);
    const char *cuts[] = {c1, c2, c3, c4, NULL};
    check_shards(io, t, cuts, N_NAMES, false);
    char *ft = icmt_sprintf("file://%s", t);
    char *f1 = icmt_sprintf("file://%s/data/x1", t);
    const char *fcuts[] = {f1, NULL};
    check_shards(io, ft, fcuts, N_NAMES, false);
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(c1), free(c2), free(c3), free(c4), free(f1), free(ft), free(other), free(t), free(dir);
}

/* ---- wrappers and back-compat ----------------------------------------------------------- */

typedef struct v3_io {
    icm_fileio base;
    icm_fileio *inner;
} v3_io;

static int v3_list(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                   void *payload)
{
    return icm_fileio_list_flags(((v3_io *)io)->inner, prefix, flags, cb, payload);
}

static void v3_free(icm_fileio *io)
{
    (void)io;
}

/* Version 3 ends before list_range: poisoned, never read. */
static const icm_fileio_methods V3 = {
    .version = 3, .name = "v3", .list_flags = v3_list, .free = v3_free,
    .list_range = (int (*)(icm_fileio *, const char *, const icm_fileio_list_options *,
                           icm_list_cb, void *))(uintptr_t)1};

static void test_version3_backend_range_applied_by_wrapper(void **state)
{
    (void)state;
    v3_io v = {{&V3}, NULL};
    icmt_ok(icm_fileio_mem_new(&v.inner));
    fill(v.inner, "s3://b/t");
    const char *cuts[] = {"s3://b/t/a/b", "s3://b/t/data/y", NULL};
    check_shards(&v.base, "s3://b/t", cuts, N_NAMES, true);
    icm_fileio_free(v.inner);
}

static void test_fault_and_pathmap_pass_range(void **state)
{
    (void)state;
    icm_fileio *mem, *fault, *pm;
    icmt_ok(icm_fileio_mem_new(&mem));
    fill(mem, "/real/t");
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    icm_path_map rule = {"s3://b/t", "/real/t"};
    icmt_ok(icm_fileio_pathmap_new(&pm, fault, &rule, 1));
    const char *cuts[] = {"s3://b/t/a.b", "s3://b/t/m", NULL};
    icm_fileio_fault_reset(fault);
    check_shards(pm, "s3://b/t", cuts, N_NAMES, true);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_LIST), 1 + 3); /* whole + 3 shards */
    /* an injected listing failure still fails a ranged listing */
    icm_fileio_fault_fail_nth(fault, ICM_IO_LIST, 1, ICM_ENET);
    icm_fileio_list_options o = ICM_FILEIO_LIST_OPTIONS_INIT;
    o.start_after = "s3://b/t/m";
    seen s = {NULL, 0};
    assert_int_equal(icm_fileio_list_opts(pm, "s3://b/t", &o, collect, &s), ICM_ENET);
    assert_int_equal(s.n, 0);
    icm_fileio_free(pm);
}

static void test_options_checked(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    fill(io, "s3://b/t");
    seen s = {NULL, 0};
    icmt_ok(icm_fileio_list_opts(io, "s3://b/t", NULL, collect, &s));
    assert_int_equal(s.n, N_NAMES);
    seen_free(&s);
    icm_fileio_list_options o;
    memset(&o, 0xff, sizeof o);
    icmt_ok(icm_fileio_list_options_init(&o, ICM_FILEIO_LIST_OPTIONS_VERSION));
    assert_int_equal(o.version, ICM_FILEIO_LIST_OPTIONS_VERSION);
    assert_int_equal(o.flags, 0);
    assert_null(o.start_after);
    assert_null(o.end_before);
    assert_int_equal(icm_fileio_list_options_init(&o, 2), ICM_EINVALID);
    o.version = 2;
    assert_int_equal(icm_fileio_list_opts(io, "s3://b/t", &o, collect, &s), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "options version 2"));
    o.version = 1;
    o.flags = 0x80;
    assert_int_equal(icm_fileio_list_opts(io, "s3://b/t", &o, collect, &s), ICM_EINVALID);
    assert_int_equal(s.n, 0);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mem_shards_object_store),
        cmocka_unit_test(test_mem_shards_local_forms),
        cmocka_unit_test(test_mem_seeks_natively),
        cmocka_unit_test(test_local_shards),
        cmocka_unit_test(test_version3_backend_range_applied_by_wrapper),
        cmocka_unit_test(test_fault_and_pathmap_pass_range),
        cmocka_unit_test(test_options_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
