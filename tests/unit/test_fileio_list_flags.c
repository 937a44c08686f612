/*
 * test_fileio_list_flags.c: icm_fileio_list_flags and ICM_LIST_STAT_OPTIONAL.
 *
 * The local back end with the flag: regular files come with size and mtime -1 (no stat each),
 * directories are descended (nested, empty), symlinks to files keep their target's real size
 * and mtime, dangling links, symlinked directories and FIFOs are skipped exactly as without the
 * flag, a missing prefix lists nothing; the set of names is the same with and without it. The
 * wrappers pass the flag through (fault: still one counted operation, injected failures still
 * apply; path map: names mapped back, -1 kept); the in-memory store reports real values anyway;
 * a version-1 back end (no list_flags slot) is still listed; unknown bits are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icemaint/sys/fileio.h"
#include "testutil.h"

/* A known mtime (2020-09-13T12:26:40.123Z) set with utimensat, in ms. */
#define KNOWN_MTIME_MS INT64_C(1600000000123)

/* ------------------------------------------------------------------------------------------ */
/* expected entries                                                                            */

typedef struct want {
    char *location;
    int64_t size_bytes;
    int64_t mtime_ms;
    int seen;
} want;

typedef struct wants {
    want *v;
    size_t n;
    size_t unexpected;
    size_t calls;
} wants;

static void want_add(wants *w, char *location_take, int64_t size, int64_t mtime_ms)
{
    w->v = realloc(w->v, (w->n + 1) * sizeof *w->v);
    assert_non_null(w->v);
    w->v[w->n++] = (want){location_take, size, mtime_ms, 0};
}

/* Listing callback: each entry must be wanted, with exactly the wanted size and mtime. */
static int want_cb(const icm_file_info *info, void *payload)
{
    wants *w = payload;
    w->calls++;
    for (size_t i = 0; i < w->n; i++) {
        want *x = &w->v[i];
        if (strcmp(x->location, info->location) != 0)
            continue;
        x->seen++;
        if (x->size_bytes != info->size_bytes || x->mtime_ms != info->mtime_ms) {
            print_error("%s: size %lld mtime %lld, want %lld %lld\n", info->location,
                        (long long)info->size_bytes, (long long)info->mtime_ms,
                        (long long)x->size_bytes, (long long)x->mtime_ms);
            w->unexpected++;
        }
        return 0;
    }
    print_error("unexpected entry %s\n", info->location);
    w->unexpected++;
    return 0;
}

/* Every wanted entry seen once, nothing else; then forget them. */
static void want_check_and_clear(wants *w)
{
    assert_int_equal(w->unexpected, 0);
    for (size_t i = 0; i < w->n; i++) {
        if (w->v[i].seen != 1)
            print_error("%s seen %d times\n", w->v[i].location, w->v[i].seen);
        assert_int_equal(w->v[i].seen, 1);
        free(w->v[i].location);
    }
    assert_int_equal(w->calls, w->n);
    free(w->v);
    memset(w, 0, sizeof *w);
}

/* ------------------------------------------------------------------------------------------ */
/* a local tree                                                                                */

typedef struct tree {
    char *tmp;      /* the temp directory */
    char *t;        /* tmp/t: the listed prefix */
    char *outside;  /* tmp/outside: symlink targets */
} tree;

static void set_mtime(const char *path, int64_t mtime_ms)
{
    struct timespec ts[2] = {{mtime_ms / 1000, (mtime_ms % 1000) * 1000000},
                             {mtime_ms / 1000, (mtime_ms % 1000) * 1000000}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void put(const tree *tr, const char *rel, const char *content)
{
    char *p = icmt_sprintf("%s/%s", tr->tmp, rel);
    icmt_write_file(p, content, strlen(content));
    free(p);
}

static void make_dir(const tree *tr, const char *rel)
{
    char *p = icmt_sprintf("%s/%s", tr->tmp, rel);
    assert_int_equal(mkdir(p, 0777), 0);
    free(p);
}

static void make_link(const tree *tr, const char *target_rel, const char *rel)
{
    char *target = icmt_sprintf("%s/%s", tr->tmp, target_rel);
    char *p = icmt_sprintf("%s/%s", tr->tmp, rel);
    assert_int_equal(symlink(target, p), 0);
    free(p);
    free(target);
}

/*
 * tmp/t/a.parquet ("abc"), t/d1/b ("hello"), t/d1/d2/d3/c (""), t/empty/, t/fifo (a FIFO),
 * t/link_file -> outside/secret.txt ("secret!", mtime KNOWN_MTIME_MS), t/link_dir -> outside/,
 * t/dangling -> tmp/nowhere.
 */
static int setup_tree(void **state)
{
    tree *tr = calloc(1, sizeof *tr);
    tr->tmp = icmt_mkdtemp();
    tr->t = icmt_sprintf("%s/t", tr->tmp);
    tr->outside = icmt_sprintf("%s/outside", tr->tmp);
    make_dir(tr, "t");
    make_dir(tr, "outside");
    make_dir(tr, "t/d1");
    make_dir(tr, "t/d1/d2");
    make_dir(tr, "t/d1/d2/d3");
    make_dir(tr, "t/empty");
    put(tr, "t/a.parquet", "abc");
    put(tr, "t/d1/b", "hello");
    put(tr, "t/d1/d2/d3/c", "");
    put(tr, "outside/secret.txt", "secret!");
    char *secret = icmt_sprintf("%s/secret.txt", tr->outside);
    set_mtime(secret, KNOWN_MTIME_MS);
    free(secret);
    char *fifo = icmt_sprintf("%s/fifo", tr->t);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    free(fifo);
    make_link(tr, "outside/secret.txt", "t/link_file");
    make_link(tr, "outside", "t/link_dir");
    make_link(tr, "nowhere", "t/dangling");
    *state = tr;
    return 0;
}

static int teardown_tree(void **state)
{
    tree *tr = *state;
    icmt_rmtree(tr->tmp);
    free(tr->tmp);
    free(tr->t);
    free(tr->outside);
    free(tr);
    return 0;
}

/* What listing `prefix` (tr->t in another form, or a name mapped onto it) must give: the three
 * regular files, with size and mtime -1 when `unknown`, else their real size and the mtime
 * pin_mtimes() gave them; and the link to a file with its target's real size and mtime (the
 * FIFO, the dangling link and the linked directory are never listed). */
static void want_tree(wants *w, const char *prefix, bool unknown)
{
    static const char *const files[] = {"a.parquet", "d1/b", "d1/d2/d3/c"};
    static const int64_t sizes[] = {3, 5, 0};
    for (size_t i = 0; i < 3; i++)
        want_add(w, icmt_sprintf("%s/%s", prefix, files[i]), unknown ? -1 : sizes[i],
                 unknown ? -1 : KNOWN_MTIME_MS);
    want_add(w, icmt_sprintf("%s/link_file", prefix), 7, KNOWN_MTIME_MS);
}

/* Without the flag the regular files' real mtimes are checked too: give them the known one. */
static void pin_mtimes(const tree *tr)
{
    static const char *const files[] = {"a.parquet", "d1/b", "d1/d2/d3/c"};
    for (size_t i = 0; i < 3; i++) {
        char *p = icmt_sprintf("%s/%s", tr->t, files[i]);
        set_mtime(p, KNOWN_MTIME_MS);
        free(p);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the local back end                                                                          */

static void test_local_flag_skips_stat_of_regular_files(void **state)
{
    tree *tr = *state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    wants w = {0};
    want_tree(&w, tr->t, true);
    icmt_ok(icm_fileio_list_flags(io, tr->t, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);

    /* without the flag: the same names, every one with its real size and mtime */
    pin_mtimes(tr);
    want_tree(&w, tr->t, false);
    icmt_ok(icm_fileio_list_flags(io, tr->t, 0, want_cb, &w));
    want_check_and_clear(&w);
    want_tree(&w, tr->t, false);
    icmt_ok(icm_fileio_list(io, tr->t, want_cb, &w));
    want_check_and_clear(&w);
    icm_fileio_free(io);
}

/* The `file:` form of the prefix is kept, a trailing slash lists the same, and a symlinked
 * prefix is followed (its files are regular: -1). */
static void test_local_flag_prefix_forms(void **state)
{
    tree *tr = *state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    char *uri = icmt_sprintf("file://%s", tr->t);
    wants w = {0};
    want_tree(&w, uri, true);
    icmt_ok(icm_fileio_list_flags(io, uri, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    char *slashed = icmt_sprintf("%s/", tr->t);
    want_tree(&w, tr->t, true);
    icmt_ok(icm_fileio_list_flags(io, slashed, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    char *link_dir = icmt_sprintf("%s/link_dir", tr->t);
    want_add(&w, icmt_sprintf("%s/secret.txt", link_dir), -1, -1);
    icmt_ok(icm_fileio_list_flags(io, link_dir, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    free(link_dir);
    free(slashed);
    free(uri);
    icm_fileio_free(io);
}

static void test_local_flag_missing_prefix_and_file_prefix(void **state)
{
    tree *tr = *state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    wants w = {0};
    char *missing = icmt_sprintf("%s/no/such/dir", tr->tmp);
    icmt_ok(icm_fileio_list_flags(io, missing, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    char *file = icmt_sprintf("%s/a.parquet", tr->t); /* only objects strictly below */
    icmt_ok(icm_fileio_list_flags(io, file, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    char *empty = icmt_sprintf("%s/empty", tr->t);
    icmt_ok(icm_fileio_list_flags(io, empty, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w); /* no calls at all */
    free(empty);
    free(file);
    free(missing);
    icm_fileio_free(io);
}

static int stop_at_2(const icm_file_info *info, void *payload)
{
    (void)info;
    int *n = payload;
    return ++*n == 2 ? 42 : 0;
}

static void test_local_flag_callback_stops(void **state)
{
    tree *tr = *state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    int n = 0;
    assert_int_equal(icm_fileio_list_flags(io, tr->t, ICM_LIST_STAT_OPTIONAL, stop_at_2, &n),
                     42);
    assert_int_equal(n, 2);
    icm_fileio_free(io);
}

static void test_unknown_flags_refused(void **state)
{
    tree *tr = *state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    wants w = {0};
    assert_int_equal(icm_fileio_list_flags(io, tr->t, 2u, want_cb, &w), ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, tr->t);
    assert_int_equal(icm_fileio_list_flags(io, tr->t, ICM_LIST_STAT_OPTIONAL | 0x80000000u,
                                           want_cb, &w),
                     ICM_EINVALID);
    assert_int_equal(icm_fileio_list_flags(NULL, tr->t, 0, want_cb, &w), ICM_EINVALID);
    assert_int_equal(icm_fileio_list_flags(io, "", 0, want_cb, &w), ICM_EINVALID);
    assert_int_equal(icm_fileio_list_flags(io, tr->t, 0, NULL, NULL), ICM_EINVALID);
    want_check_and_clear(&w); /* the callback never ran */
    icm_fileio_free(io);
}

/* ------------------------------------------------------------------------------------------ */
/* wrappers and other back ends                                                                */

static void test_fault_passes_flag_through(void **state)
{
    tree *tr = *state;
    icm_fileio *local = NULL, *fault = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_fault_new(&fault, local));
    wants w = {0};
    want_tree(&w, tr->t, true);
    icmt_ok(icm_fileio_list_flags(fault, tr->t, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_LIST), 1);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_STAT), 0);
    /* an injected failure still rejects the listing before anything is listed */
    icm_fileio_fault_fail_nth(fault, ICM_IO_LIST, 1, ICM_EAUTH);
    assert_int_equal(icm_fileio_list_flags(fault, tr->t, ICM_LIST_STAT_OPTIONAL, want_cb, &w),
                     ICM_EAUTH);
    want_check_and_clear(&w);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_LIST), 2);
    /* and without the flag the sizes are back */
    pin_mtimes(tr);
    want_tree(&w, tr->t, false);
    icmt_ok(icm_fileio_list_flags(fault, tr->t, 0, want_cb, &w));
    want_check_and_clear(&w);
    icm_fileio_free(fault);
}

static void test_pathmap_passes_flag_through(void **state)
{
    tree *tr = *state;
    icm_fileio *local = NULL, *pm = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icm_path_map rule = {"s3://bucket/wh/t", tr->t};
    icmt_ok(icm_fileio_pathmap_new(&pm, local, &rule, 1));
    wants w = {0};
    want_tree(&w, "s3://bucket/wh/t", true);
    icmt_ok(icm_fileio_list_flags(pm, "s3://bucket/wh/t", ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    /* a prefix above the rule's FROM: the second pass gets the flag too */
    icm_path_map deeper = {"/virtual/wh/t", tr->t};
    icm_fileio *local2 = NULL, *pm2 = NULL;
    icmt_ok(icm_fileio_local_new(&local2));
    icmt_ok(icm_fileio_pathmap_new(&pm2, local2, &deeper, 1));
    want_tree(&w, "/virtual/wh/t", true);
    icmt_ok(icm_fileio_list_flags(pm2, "/virtual", ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    /* stat through the map gives what the listing left out */
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, pm, "s3://bucket/wh/t/d1/b"));
    assert_int_equal(info.size_bytes, 5);
    assert_string_equal(info.location, "s3://bucket/wh/t/d1/b");
    icm_fileio_free(pm2);
    icm_fileio_free(pm);
}

static void test_mem_reports_real_values_with_flag(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *fault = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_fileio_mem_set_time(mem, KNOWN_MTIME_MS);
    icmt_ok(icm_fileio_write_replace(mem, "s3://b/t/x", "12345", 5));
    icmt_ok(icm_fileio_write_replace(mem, "s3://b/t/d/y", "1", 1));
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    wants w = {0};
    want_add(&w, strdup("s3://b/t/x"), 5, KNOWN_MTIME_MS);
    want_add(&w, strdup("s3://b/t/d/y"), 1, KNOWN_MTIME_MS);
    icmt_ok(icm_fileio_list_flags(fault, "s3://b/t", ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    icm_fileio_free(fault);
}

/* ---- a version-1 back end: only `list`, which ignores nothing because it has no flags ---- */

typedef struct v1_io {
    icm_fileio base;
    icm_fileio *inner;
    int list_calls;
} v1_io;

static int v1_list(icm_fileio *io, const char *prefix, icm_list_cb cb, void *payload)
{
    v1_io *v = (v1_io *)io;
    v->list_calls++;
    return icm_fileio_list(v->inner, prefix, cb, payload);
}

static void v1_free(icm_fileio *io)
{
    (void)io; /* owned by the test */
}

/* A version-1 table ends before list_flags; that slot must never be read. Poison it so a
 * wrapper that looked would crash. */
static const icm_fileio_methods V1_METHODS = {
    1, "v1", NULL, NULL, NULL, NULL, NULL, NULL, v1_list, v1_free,
    (int (*)(icm_fileio *, const char *, unsigned, icm_list_cb, void *))(uintptr_t)1,
    (int (*)(icm_fileio *, const char *, char **))(uintptr_t)1,
    (int (*)(icm_fileio *, const char *, char **, icm_file_info *))(uintptr_t)1,
    (int (*)(icm_fileio *, const char *const *, size_t, icm_fileio_delete_result *))(uintptr_t)1,
    (int (*)(icm_fileio *, const char *, const icm_fileio_list_options *, icm_list_cb,
             void *))(uintptr_t)1, NULL};

static const icm_fileio_methods NO_LIST_METHODS = {
    ICM_FILEIO_METHODS_VERSION, "nolist", NULL, NULL, NULL, NULL, NULL, NULL, NULL, v1_free,
    NULL, NULL, NULL, NULL, NULL, NULL};

static void test_version1_backend_still_lists(void **state)
{
    tree *tr = *state;
    v1_io v = {{&V1_METHODS}, NULL, 0};
    icmt_ok(icm_fileio_local_new(&v.inner));
    pin_mtimes(tr);
    wants w = {0};
    want_tree(&w, tr->t, false); /* the flag only permits: real values are fine */
    icmt_ok(icm_fileio_list_flags(&v.base, tr->t, ICM_LIST_STAT_OPTIONAL, want_cb, &w));
    want_check_and_clear(&w);
    assert_int_equal(v.list_calls, 1);
    icm_fileio_free(v.inner);

    icm_fileio none = {&NO_LIST_METHODS};
    assert_int_equal(icm_fileio_list_flags(&none, tr->t, 0, want_cb, &w), ICM_EUNSUPPORTED);
    assert_non_null(strstr(icm_error_last()->message, "nolist"));
    want_check_and_clear(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_tree, teardown_tree)
        T(test_local_flag_skips_stat_of_regular_files),
        T(test_local_flag_prefix_forms),
        T(test_local_flag_missing_prefix_and_file_prefix),
        T(test_local_flag_callback_stops),
        T(test_unknown_flags_refused),
        T(test_fault_passes_flag_through),
        T(test_pathmap_passes_flag_through),
        cmocka_unit_test(test_mem_reports_real_values_with_flag),
        T(test_version1_backend_still_lists),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
