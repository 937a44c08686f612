/*
 * test_fileio.c: the FileIO contract, run against every back end (local in a temp dir,
 * in-memory with object-store and local-path names, fault wrapper over mem with nothing armed,
 * path-map over local), then back-end specific behaviour: local atomic writes and symlinks,
 * exact fault-injection semantics, path-map rules (longest match, segment boundary, listing
 * mapped back, a real fixture read through a mapping) and concurrent use from several threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icemaint/fileio.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* environments                                                                                */

typedef enum backend_kind {
    BE_LOCAL,
    BE_MEM_S3,
    BE_MEM_LOCAL,
    BE_FAULT_MEM,
    BE_PATHMAP_LOCAL,
    BE_COUNT
} backend_kind;

static const char *const backend_names[BE_COUNT] = {
    "contract/local", "contract/mem(s3 names)", "contract/mem(local names)",
    "contract/fault(mem)", "contract/pathmap(local)"};

typedef struct env {
    backend_kind kind;
    icm_fileio *io;
    icm_fileio *mem;  /* the in-memory store (borrowed; inside io for fault), or NULL */
    char *tmpdir;     /* local kinds */
    char *base;       /* location under which each test works, in io's namespace */
    char *real_base;  /* local kinds: the directory where base's files really are */
} env;

static backend_kind g_kinds[BE_COUNT] = {BE_LOCAL, BE_MEM_S3, BE_MEM_LOCAL, BE_FAULT_MEM,
                                         BE_PATHMAP_LOCAL};

static int setup_env(void **state)
{
    env *e = calloc(1, sizeof *e);
    e->kind = *(backend_kind *)*state;
    switch (e->kind) {
    case BE_LOCAL:
        e->tmpdir = icmt_mkdtemp();
        icmt_ok(icm_fileio_local_new(&e->io));
        e->base = strdup(e->tmpdir);
        e->real_base = strdup(e->tmpdir);
        break;
    case BE_MEM_S3:
    case BE_MEM_LOCAL:
        icmt_ok(icm_fileio_mem_new(&e->io));
        e->mem = e->io;
        e->base = strdup(e->kind == BE_MEM_S3 ? "s3://bucket/wh/t" : "/mem/wh/t");
        break;
    case BE_FAULT_MEM:
        icmt_ok(icm_fileio_mem_new(&e->mem));
        icmt_ok(icm_fileio_fault_new(&e->io, e->mem));
        e->base = strdup("s3://bucket/wh/t");
        break;
    case BE_PATHMAP_LOCAL: {
        e->tmpdir = icmt_mkdtemp();
        e->real_base = icmt_sprintf("%s/copy", e->tmpdir);
        e->base = strdup("s3://bucket/wh/t");
        icm_fileio *local;
        icmt_ok(icm_fileio_local_new(&local));
        icm_path_map rule = {e->base, e->real_base};
        icmt_ok(icm_fileio_pathmap_new(&e->io, local, &rule, 1));
        break;
    }
    default:
        fail();
    }
    *state = e;
    return 0;
}

static int teardown_env(void **state)
{
    env *e = *state;
    icm_fileio_free(e->io);
    if (e->tmpdir != NULL)
        icmt_rmtree(e->tmpdir);
    free(e->tmpdir);
    free(e->base);
    free(e->real_base);
    free(e);
    return 0;
}

/* Location of `rel` below the test's base (malloc'd). */
static char *L(const env *e, const char *rel)
{
    return icmt_sprintf("%s/%s", e->base, rel);
}

static bool has_local_names(const env *e)
{
    return e->kind == BE_LOCAL || e->kind == BE_MEM_LOCAL;
}

/* Create `rel` with the given content and an exact mtime, whatever the back end. */
static void put_with_mtime(const env *e, const char *rel, const void *data, size_t len,
                           int64_t mtime_ms)
{
    char *loc = L(e, rel);
    if (e->mem != NULL) {
        icm_fileio_mem_set_time(e->mem, mtime_ms);
        icmt_ok(icm_fileio_create_new(e->io, loc, data, len));
        icm_fileio_mem_set_time(e->mem, -1);
    } else {
        icmt_ok(icm_fileio_create_new(e->io, loc, data, len));
        char *real = icmt_sprintf("%s/%s", e->real_base, rel);
        struct timespec ts[2];
        ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime_ms / 1000);
        ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime_ms % 1000) * 1000000L;
        assert_int_equal(utimensat(AT_FDCWD, real, ts, 0), 0);
        free(real);
    }
    free(loc);
}

static void assert_content(icm_fileio *io, const char *loc, const char *want, size_t want_len)
{
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, loc));
    assert_int_equal(len, want_len);
    assert_memory_equal(data, want, want_len);
    assert_int_equal(data[len], '\0');
    icm_free(data);
}

/* ------------------------------------------------------------------------------------------ */
/* listing helpers                                                                             */

typedef struct seen_entry {
    char *location;
    int64_t size_bytes;
    int64_t mtime_ms; /* INT64_MIN: do not check */
    int seen;
} seen_entry;

typedef struct seen_set {
    seen_entry *items;
    size_t n;
    size_t unexpected;
    char first_unexpected[512];
    size_t calls;
} seen_set;

static void seen_add(seen_set *s, char *location_take, int64_t size, int64_t mtime_ms)
{
    s->items = realloc(s->items, (s->n + 1) * sizeof *s->items);
    s->items[s->n++] = (seen_entry){location_take, size, mtime_ms, 0};
}

static int seen_cb(const icm_file_info *info, void *payload)
{
    seen_set *s = payload;
    s->calls++;
    for (size_t i = 0; i < s->n; i++) {
        seen_entry *x = &s->items[i];
        if (strcmp(x->location, info->location) != 0)
            continue;
        x->seen++;
        if (x->size_bytes != info->size_bytes ||
            (x->mtime_ms != INT64_MIN && x->mtime_ms != info->mtime_ms)) {
            print_error("%s: size %lld mtime %lld, want %lld %lld\n", info->location,
                        (long long)info->size_bytes, (long long)info->mtime_ms,
                        (long long)x->size_bytes, (long long)x->mtime_ms);
            s->unexpected++;
        }
        return 0;
    }
    if (s->unexpected++ == 0)
        snprintf(s->first_unexpected, sizeof s->first_unexpected, "%s", info->location);
    return 0;
}

/* Every expected entry seen exactly once, nothing else. */
static void seen_check(const seen_set *s)
{
    if (s->unexpected != 0)
        print_error("unexpected entries: %zu, first: %s\n", s->unexpected, s->first_unexpected);
    assert_int_equal(s->unexpected, 0);
    for (size_t i = 0; i < s->n; i++) {
        if (s->items[i].seen != 1)
            print_error("%s seen %d times\n", s->items[i].location, s->items[i].seen);
        assert_int_equal(s->items[i].seen, 1);
    }
    assert_int_equal(s->calls, s->n);
}

static void seen_free(seen_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i].location);
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------------------------ */
/* the contract                                                                                */

static void test_create_new_refuses_overwrite(void **state)
{
    env *e = *state;
    char *loc = L(e, "a/b/new.txt");
    icmt_ok(icm_fileio_create_new(e->io, loc, "one", 3));
    icm_error_clear();
    assert_int_equal(icm_fileio_create_new(e->io, loc, "two!", 4), ICM_EEXISTS);
    assert_int_equal(icm_error_last()->code, ICM_EEXISTS);
    assert_non_null(strstr(icm_error_last()->location, "a/b/new.txt"));
    assert_content(e->io, loc, "one", 3);
    free(loc);
}

static void test_write_replace_replaces(void **state)
{
    env *e = *state;
    char *loc = L(e, "w/deep/er/file.json");
    icmt_ok(icm_fileio_write_replace(e->io, loc, "first", 5));
    assert_content(e->io, loc, "first", 5);
    icmt_ok(icm_fileio_write_replace(e->io, loc, "2nd", 3));
    assert_content(e->io, loc, "2nd", 3);
    assert_int_equal(icm_fileio_create_new(e->io, loc, "x", 1), ICM_EEXISTS);
    assert_content(e->io, loc, "2nd", 3);
    free(loc);
}

static void test_delete(void **state)
{
    env *e = *state;
    char *missing = L(e, "no/such/dir/file");
    icmt_ok(icm_fileio_delete(e->io, missing));
    char *loc = L(e, "d/victim");
    icmt_ok(icm_fileio_create_new(e->io, loc, "v", 1));
    icmt_ok(icm_fileio_delete(e->io, loc));
    char *out = NULL;
    size_t len = 99;
    assert_int_equal(icm_fileio_read(&out, &len, e->io, loc), ICM_ENOTFOUND);
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, e->io, loc), ICM_ENOTFOUND);
    icmt_ok(icm_fileio_delete(e->io, loc)); /* already gone: still success */
    /* a deleted name can be created again */
    icmt_ok(icm_fileio_create_new(e->io, loc, "again", 5));
    assert_content(e->io, loc, "again", 5);
    free(loc);
    free(missing);
}

static void test_read_missing(void **state)
{
    env *e = *state;
    char *loc = L(e, "missing/file.avro");
    char *out = (char *)"stale";
    size_t len = 42;
    icm_error_clear();
    assert_int_equal(icm_fileio_read(&out, &len, e->io, loc), ICM_ENOTFOUND);
    assert_null(out);
    assert_int_equal(len, 0);
    assert_int_equal(icm_error_last()->code, ICM_ENOTFOUND);
    assert_non_null(strstr(icm_error_last()->location, "missing/file.avro"));
    char buf[4];
    size_t got = 7;
    assert_int_equal(icm_fileio_read_range(&got, e->io, loc, 0, buf, sizeof buf), ICM_ENOTFOUND);
    assert_int_equal(got, 0);
    free(loc);
}

static void test_read_whole(void **state)
{
    env *e = *state;
    unsigned char bin[256];
    for (size_t i = 0; i < sizeof bin; i++)
        bin[i] = (unsigned char)(255 - i); /* includes a NUL byte at the end */
    char *loc = L(e, "r/binary.bin");
    icmt_ok(icm_fileio_create_new(e->io, loc, bin, sizeof bin));
    assert_content(e->io, loc, (const char *)bin, sizeof bin);
    char *empty = L(e, "r/empty");
    icmt_ok(icm_fileio_create_new(e->io, empty, NULL, 0));
    char *out = NULL;
    size_t len = 5;
    icmt_ok(icm_fileio_read(&out, &len, e->io, empty));
    assert_non_null(out);
    assert_int_equal(len, 0);
    assert_int_equal(out[0], '\0');
    icm_free(out);
    free(empty);
    free(loc);
}

static void test_read_range(void **state)
{
    env *e = *state;
    char *loc = L(e, "rr/digits");
    icmt_ok(icm_fileio_create_new(e->io, loc, "0123456789", 10));
    char buf[8];
    size_t got = 0;
    icmt_ok(icm_fileio_read_range(&got, e->io, loc, 0, buf, 4));
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "0123", 4);
    icmt_ok(icm_fileio_read_range(&got, e->io, loc, 3, buf, 5));
    assert_int_equal(got, 5);
    assert_memory_equal(buf, "34567", 5);
    icmt_ok(icm_fileio_read_range(&got, e->io, loc, 8, buf, 4)); /* crosses the end */
    assert_int_equal(got, 2);
    assert_memory_equal(buf, "89", 2);
    got = 99;
    icmt_ok(icm_fileio_read_range(&got, e->io, loc, 10, buf, 4)); /* at the end */
    assert_int_equal(got, 0);
    got = 99;
    icmt_ok(icm_fileio_read_range(&got, e->io, loc, 1000, buf, 4)); /* after the end */
    assert_int_equal(got, 0);
    icmt_ok(icm_fileio_read_range(&got, e->io, loc, 2, buf, 0));
    assert_int_equal(got, 0);
    assert_int_equal(icm_fileio_read_range(&got, e->io, loc, -1, buf, 4), ICM_EINVALID);
    free(loc);
}

static void test_stat(void **state)
{
    env *e = *state;
    put_with_mtime(e, "s/ten", "0123456789", 10, 1600000000123);
    char *loc = L(e, "s/ten");
    icm_file_info info = {sizeof(icm_file_info), NULL, -5, -5};
    icmt_ok(icm_fileio_stat(&info, e->io, loc));
    assert_ptr_equal(info.location, loc);
    assert_int_equal(info.size_bytes, 10);
    assert_int_equal(info.mtime_ms, 1600000000123);
    free(loc);
}

enum { LIST_FILES = 200 };

static void test_list_streams_every_file_once(void **state)
{
    env *e = *state;
    seen_set s = {0};
    for (int i = 0; i < LIST_FILES; i++) {
        char *rel = icmt_sprintf("list/d%d/e%d/f%03d.parquet", i % 5, i % 3, i);
        if (i % 7 == 0) { /* some files right below the prefix and one level down */
            free(rel);
            rel = i % 2 ? icmt_sprintf("list/top%03d", i)
                        : icmt_sprintf("list/d%d/mid%03d", i % 5, i);
        }
        char data[LIST_FILES + 1];
        memset(data, 'x', sizeof data);
        int64_t mtime = 1700000000000 + (int64_t)i * 1001;
        put_with_mtime(e, rel, data, (size_t)i + 1, mtime);
        seen_add(&s, L(e, rel), i + 1, mtime);
        free(rel);
    }
    /* neighbours that share the prefix's bytes but not its segment */
    put_with_mtime(e, "list_2/x", "n", 1, 1);
    put_with_mtime(e, "listx", "n", 1, 1);
    char *prefix = L(e, "list");
    icmt_ok(icm_fileio_list(e->io, prefix, seen_cb, &s));
    seen_check(&s);
    /* a trailing slash on the prefix lists the same set */
    for (size_t i = 0; i < s.n; i++)
        s.items[i].seen = 0;
    s.calls = 0;
    char *slashed = icmt_sprintf("%s/", prefix);
    icmt_ok(icm_fileio_list(e->io, slashed, seen_cb, &s));
    seen_check(&s);
    free(slashed);
    free(prefix);
    seen_free(&s);
}

static void test_list_missing_prefix(void **state)
{
    env *e = *state;
    seen_set s = {0};
    char *prefix = L(e, "does/not/exist");
    icmt_ok(icm_fileio_list(e->io, prefix, seen_cb, &s));
    assert_int_equal(s.calls, 0);
    /* a prefix naming a file lists nothing: only objects strictly below a prefix are listed */
    put_with_mtime(e, "plain", "p", 1, 5);
    char *file = L(e, "plain");
    icmt_ok(icm_fileio_list(e->io, file, seen_cb, &s));
    assert_int_equal(s.calls, 0);
    free(file);
    free(prefix);
}

typedef struct stop_state {
    int calls;
    int stop_at;
    int value;
} stop_state;

static int stop_cb(const icm_file_info *info, void *payload)
{
    (void)info;
    stop_state *st = payload;
    return ++st->calls == st->stop_at ? st->value : 0;
}

static void test_list_callback_stops(void **state)
{
    env *e = *state;
    for (int i = 0; i < 5; i++) {
        char *rel = icmt_sprintf("stop/f%d", i);
        put_with_mtime(e, rel, "z", 1, 1);
        free(rel);
    }
    char *prefix = L(e, "stop");
    stop_state st = {0, 3, 7};
    assert_int_equal(icm_fileio_list(e->io, prefix, stop_cb, &st), 7);
    assert_int_equal(st.calls, 3);
    stop_state st2 = {0, 1, ICM_EUSER};
    assert_int_equal(icm_fileio_list(e->io, prefix, stop_cb, &st2), ICM_EUSER);
    assert_int_equal(st2.calls, 1);
    free(prefix);
}

/* `/p`, `file:/p`, `file:///p`, `file://localhost/p` and `//p` name one file; listing keeps the
 * prefix's form. Only for back ends whose names are local paths. */
static void test_local_uri_forms_agree(void **state)
{
    env *e = *state;
    assert_true(has_local_names(e));
    const char *p = e->base; /* absolute path */
    char *plain = icmt_sprintf("%s/forms/a.txt", p);
    char *f1 = icmt_sprintf("file:%s/forms/a.txt", p);
    char *f3 = icmt_sprintf("file://%s/forms/a.txt", p);
    char *fl = icmt_sprintf("file://localhost%s/forms/a.txt", p);
    char *dbl = icmt_sprintf("/%s//forms//a.txt", p);
    icmt_ok(icm_fileio_create_new(e->io, f3, "form", 4));
    const char *all[] = {plain, f1, f3, fl, dbl};
    for (size_t i = 0; i < 5; i++) {
        assert_content(e->io, all[i], "form", 4);
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, e->io, all[i]));
        assert_int_equal(info.size_bytes, 4);
        assert_int_equal(icm_fileio_create_new(e->io, all[i], "no", 2), ICM_EEXISTS);
    }
    /* listing keeps the form of the prefix */
    char *prefixes[4] = {icmt_sprintf("%s/forms", p), icmt_sprintf("file:%s/forms/", p),
                         icmt_sprintf("file://%s/forms", p),
                         icmt_sprintf("file://localhost%s/forms", p)};
    char *wants[4] = {icmt_sprintf("%s/forms/a.txt", p), icmt_sprintf("file:%s/forms/a.txt", p),
                      icmt_sprintf("file://%s/forms/a.txt", p),
                      icmt_sprintf("file://localhost%s/forms/a.txt", p)};
    for (size_t i = 0; i < 4; i++) {
        seen_set s = {0};
        seen_add(&s, wants[i], 4, INT64_MIN);
        icmt_ok(icm_fileio_list(e->io, prefixes[i], seen_cb, &s));
        seen_check(&s);
        seen_free(&s);
        free(prefixes[i]);
    }
    icmt_ok(icm_fileio_delete(e->io, f1));
    char *out = NULL;
    size_t len;
    assert_int_equal(icm_fileio_read(&out, &len, e->io, plain), ICM_ENOTFOUND);
    free(plain);
    free(f1);
    free(f3);
    free(fl);
    free(dbl);
}

static void test_argument_checks(void **state)
{
    env *e = *state;
    char *out = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&out, &len, e->io, ""), ICM_EINVALID);
    assert_int_equal(icm_fileio_read(&out, &len, e->io, NULL), ICM_EINVALID);
    assert_int_equal(icm_fileio_read(&out, &len, NULL, "/x"), ICM_EINVALID);
    char *loc = L(e, "args/x");
    assert_int_equal(icm_fileio_read(NULL, &len, e->io, loc), ICM_EINVALID);
    assert_int_equal(icm_fileio_create_new(e->io, loc, NULL, 3), ICM_EINVALID);
    assert_int_equal(icm_fileio_write_replace(e->io, loc, NULL, 3), ICM_EINVALID);
    assert_int_equal(icm_fileio_list(e->io, loc, NULL, NULL), ICM_EINVALID);
    assert_int_equal(icm_fileio_stat(NULL, e->io, loc), ICM_EINVALID);
    /* nothing was created by the refused calls */
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, e->io, loc), ICM_ENOTFOUND);
    icm_fileio_free(NULL);
    free(loc);
}

#define CT(f) cmocka_unit_test_prestate_setup_teardown(f, setup_env, teardown_env, kind)

static int run_contract(backend_kind *kind)
{
    const struct CMUnitTest tests[] = {
        CT(test_create_new_refuses_overwrite),
        CT(test_write_replace_replaces),
        CT(test_delete),
        CT(test_read_missing),
        CT(test_read_whole),
        CT(test_read_range),
        CT(test_stat),
        CT(test_list_streams_every_file_once),
        CT(test_list_missing_prefix),
        CT(test_list_callback_stops),
        CT(test_argument_checks),
        CT(test_local_uri_forms_agree), /* last: only where names are local paths */
    };
    size_t n = sizeof tests / sizeof tests[0];
    if (*kind != BE_LOCAL && *kind != BE_MEM_LOCAL)
        n--;
    return _cmocka_run_group_tests(backend_names[*kind], tests, n, NULL, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* local back end                                                                              */

static backend_kind g_local = BE_LOCAL;

/* Names in a directory other than . and .. (malloc'd, newline-separated, sorted by readdir). */
static int count_dir_entries(const char *dir, const char *only_name)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        if (only_name != NULL && strcmp(ent->d_name, only_name) != 0)
            print_error("unexpected entry %s/%s\n", dir, ent->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static void test_local_writes_leave_no_temp_files(void **state)
{
    env *e = *state;
    char *loc = L(e, "atomic/x.json");
    icmt_ok(icm_fileio_create_new(e->io, loc, "1", 1));
    assert_int_equal(icm_fileio_create_new(e->io, loc, "2", 1), ICM_EEXISTS);
    icmt_ok(icm_fileio_write_replace(e->io, loc, "3", 1));
    char *dir = icmt_sprintf("%s/atomic", e->tmpdir);
    assert_int_equal(count_dir_entries(dir, "x.json"), 1);
    char *real = icmt_sprintf("%s/atomic/x.json", e->tmpdir);
    size_t len;
    char *content = icmt_read_file(real, &len);
    assert_string_equal(content, "3");
    /* written files get the usual permissions (umask applies), not a temp file's 0600 */
    struct stat st;
    assert_int_equal(stat(real, &st), 0);
    mode_t mask = umask(022);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    free(content);
    free(real);
    free(dir);
    free(loc);
}

/* Hadoop's checksum companions: icm_fileio_checksum_of reports `.name.crc` beside `name` only
 * when it is a regular file (not a link, not a folder) starting with Hadoop's "crc\0" header,
 * in the form of the location asked about (also when `name` itself is already gone); a delete
 * removes exactly the file named, never its companion (the planners plan companions as files
 * of their own, kind "checksum"). */
static void test_local_checksum_of_reports_hadoop_crc(void **state)
{
    env *e = *state;
    char *dir = icmt_sprintf("%s/crc", e->tmpdir);
    assert_int_equal(mkdir(dir, 0777), 0);
    static const char crc[] = {'c', 'r', 'c', '\0', 0, 0, 2, 0};
    const char *names[] = {"f.parquet",     ".f.parquet.crc", ".g.parquet.crc", "h.parquet",
                           "..hidden.crc",  ".hidden",        "k.parquet",      "l.parquet",
                           "elsewhere.crc", "d.parquet"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *p = icmt_sprintf("%s/%s", dir, names[i]);
        icmt_write_file(p, crc, sizeof crc);
        free(p);
    }
    char *k_crc = icmt_sprintf("%s/.k.parquet.crc", dir); /* a data file: PAR1, not crc\0 */
    icmt_write_file(k_crc, "PAR1", 4);
    char *l_crc = icmt_sprintf("%s/.l.parquet.crc", dir); /* a link to a checksum elsewhere */
    char *target = icmt_sprintf("%s/elsewhere.crc", dir);
    assert_int_equal(symlink(target, l_crc), 0);
    char *d_crc = icmt_sprintf("%s/.d.parquet.crc", dir); /* a folder */
    assert_int_equal(mkdir(d_crc, 0777), 0);
    /* g.parquet is already gone: its companion is still reported */
    const char *asked[] = {"f.parquet", "g.parquet", ".hidden", "k.parquet", "l.parquet",
                           "d.parquet", "h.parquet"};
    const char *companion[] = {".f.parquet.crc", ".g.parquet.crc", NULL, NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < sizeof asked / sizeof *asked; i++) {
        char *loc = icmt_sprintf(i == 0 ? "file://%s/%s" : "%s/%s", dir, asked[i]);
        char *got = NULL;
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_checksum_of(&got, &info, e->io, loc));
        if (companion[i] == NULL) {
            assert_null(got);
        } else {
            char *want = icmt_sprintf(i == 0 ? "file://%s/%s" : "%s/%s", dir, companion[i]);
            assert_non_null(got);
            assert_string_equal(got, want);
            assert_ptr_equal(info.location, got);
            assert_int_equal(info.size_bytes, (int64_t)sizeof crc);
            assert_true(info.mtime_ms > 0);
            free(want);
        }
        icm_free(got);
        free(loc);
    }
    /* through a path map the companion is named beside the original name; the fault wrapper
     * passes the call on (one stat-kind operation); the memory store has none */
    icm_path_map rule = {"s3://b/t", dir};
    icm_fileio *local = NULL, *pm = NULL, *fault = NULL, *mem = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_pathmap_new(&pm, local, &rule, 1));
    icmt_ok(icm_fileio_fault_new(&fault, pm));
    char *got = NULL;
    icmt_ok(icm_fileio_checksum_of(&got, NULL, fault, "s3://b/t/f.parquet"));
    assert_string_equal(got, "s3://b/t/.f.parquet.crc");
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_STAT), 1);
    icm_free(got);
    icmt_ok(icm_fileio_checksum_of(&got, NULL, fault, "s3://b/t/h.parquet"));
    assert_null(got);
    icm_fileio_free(fault);
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_create_new(mem, "s3://b/t/x", "1", 1));
    icmt_ok(icm_fileio_create_new(mem, "s3://b/t/.x.crc", "crc\0", 4));
    icmt_ok(icm_fileio_checksum_of(&got, NULL, mem, "s3://b/t/x"));
    assert_null(got);
    icm_fileio_free(mem);
    /* deleting f.parquet leaves its companion where it is */
    char *f = icmt_sprintf("%s/f.parquet", dir), *f_crc = icmt_sprintf("%s/.f.parquet.crc", dir);
    icmt_ok(icm_fileio_delete(e->io, f));
    assert_false(icmt_file_exists(f));
    assert_true(icmt_file_exists(f_crc));
    struct stat st;
    assert_int_equal(lstat(l_crc, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    free(f);
    free(f_crc);
    free(d_crc);
    free(target);
    free(l_crc);
    free(k_crc);
    free(dir);
}

/* icm_fileio_resolve: links resolved by the local back end, named back by a path map, the
 * location unchanged where there are no links; missing is ICM_ENOTFOUND. */
static void test_resolve(void **state)
{
    env *e = *state;
    char *real = icmt_sprintf("%s/real", e->tmpdir);
    char *link = icmt_sprintf("%s/link", e->tmpdir);
    assert_int_equal(mkdir(real, 0777), 0);
    char *f = icmt_sprintf("%s/f", real);
    icmt_write_file(f, "x", 1);
    assert_int_equal(symlink(real, link), 0);
    char *via_link = icmt_sprintf("file://%s//f", link);
    char *out = NULL;
    icmt_ok(icm_fileio_resolve(&out, e->io, via_link));
    char *expect = realpath(f, NULL); /* tmpdir itself may sit behind a link */
    assert_string_equal(out, expect);
    icm_free(out);
    char *missing = icmt_sprintf("%s/nope", link);
    assert_int_equal(icm_fileio_resolve(&out, e->io, missing), ICM_ENOTFOUND);
    assert_null(out);
    /* a path map: s3://b/t -> the link; the resolved target is named back through the map */
    char *real_dir = realpath(real, NULL);
    icm_path_map rule = {"s3://b/t", real_dir};
    icm_path_map via = {"s3://b/v", link};
    icm_path_map rules[] = {rule, via};
    icm_fileio *local = NULL, *pm = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_pathmap_new(&pm, local, rules, 2));
    icmt_ok(icm_fileio_resolve(&out, pm, "s3://b/v/f"));
    assert_string_equal(out, "s3://b/t/f");
    icm_free(out);
    icm_fileio_free(pm);
    /* no links in memory: unchanged */
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_create_new(mem, "s3://b/x/../y", "1", 1));
    icmt_ok(icm_fileio_resolve(&out, mem, "s3://b/x/../y"));
    assert_string_equal(out, "s3://b/x/../y");
    icm_free(out);
    icm_fileio_free(mem);
    free(real_dir);
    free(missing);
    free(expect);
    free(via_link);
    free(f);
    free(link);
    free(real);
}

static void test_local_directory_is_not_a_file(void **state)
{
    env *e = *state;
    char *dir = icmt_sprintf("%s/adir", e->tmpdir);
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_equal(icm_fileio_delete(e->io, dir), ICM_EIO);
    assert_int_equal(icm_error_last()->os_errno, EISDIR);
    assert_string_equal(icm_error_last()->location, dir);
    assert_true(icmt_file_exists(dir));
    char *out = NULL;
    size_t len;
    assert_int_equal(icm_fileio_read(&out, &len, e->io, dir), ICM_EIO);
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, e->io, dir), ICM_EIO);
    assert_int_equal(icm_fileio_create_new(e->io, dir, "x", 1), ICM_EEXISTS);
    assert_true(icmt_file_exists(dir));
    free(dir);
}

static void test_local_symlinks(void **state)
{
    env *e = *state;
    char *t = icmt_sprintf("%s/t", e->tmpdir);
    char *outside = icmt_sprintf("%s/outside", e->tmpdir);
    assert_int_equal(mkdir(t, 0777), 0);
    assert_int_equal(mkdir(outside, 0777), 0);
    char *real = icmt_sprintf("%s/real.txt", t);
    char *secret = icmt_sprintf("%s/secret.txt", outside);
    icmt_write_file(real, "abc", 3);
    icmt_write_file(secret, "secret!", 7);
    char *link_dir = icmt_sprintf("%s/link_dir", t);
    char *link_file = icmt_sprintf("%s/link_file", t);
    char *dangling = icmt_sprintf("%s/dangling", t);
    char *nowhere = icmt_sprintf("%s/nowhere", e->tmpdir);
    assert_int_equal(symlink(outside, link_dir), 0);
    assert_int_equal(symlink(secret, link_file), 0);
    assert_int_equal(symlink(nowhere, dangling), 0);
    seen_set s = {0};
    seen_add(&s, strdup(real), 3, INT64_MIN);
    seen_add(&s, strdup(link_file), 7, INT64_MIN); /* a link to a file counts as that file */
    icmt_ok(icm_fileio_list(e->io, t, seen_cb, &s));
    seen_check(&s); /* link_dir/secret.txt and the dangling link are not listed */
    seen_free(&s);
    /* a symlinked prefix itself is followed */
    seen_add(&s, icmt_sprintf("%s/secret.txt", link_dir), 7, INT64_MIN);
    icmt_ok(icm_fileio_list(e->io, link_dir, seen_cb, &s));
    seen_check(&s);
    seen_free(&s);
    free(nowhere);
    free(dangling);
    free(link_file);
    free(link_dir);
    free(secret);
    free(real);
    free(outside);
    free(t);
}

static void test_local_rejects_object_store_uris(void **state)
{
    env *e = *state;
    char *out = NULL;
    size_t len;
    assert_int_equal(icm_fileio_read(&out, &len, e->io, "s3://bucket/k"), ICM_EUNSUPPORTED);
    assert_string_equal(icm_error_last()->location, "s3://bucket/k");
    assert_int_equal(icm_fileio_delete(e->io, "file://otherhost/p"), ICM_EUNSUPPORTED);
    assert_int_equal(icm_fileio_create_new(e->io, "gs://b/k", "x", 1), ICM_EUNSUPPORTED);
}

static void test_local_relative_paths(void **state)
{
    env *e = *state;
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(e->tmpdir), 0);
    int rc = icm_fileio_create_new(e->io, "rel/dir/a.txt", "rel", 3);
    seen_set s = {0};
    seen_add(&s, strdup("rel/dir/a.txt"), 3, INT64_MIN);
    int rc2 = icm_fileio_list(e->io, "rel", seen_cb, &s);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(rc2, 0);
    seen_check(&s);
    seen_free(&s);
    char *real = icmt_sprintf("%s/rel/dir/a.txt", e->tmpdir);
    assert_true(icmt_file_exists(real));
    free(real);
}

/* ------------------------------------------------------------------------------------------ */
/* fault wrapper                                                                               */

static backend_kind g_fault = BE_FAULT_MEM;

static bool inner_has(const env *e, const char *loc)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    return icm_fileio_stat(&info, e->mem, loc) == 0;
}

static void test_fault_nth_write_fails_once_without_effect(void **state)
{
    env *e = *state;
    icm_fileio_fault_fail_nth(e->io, ICM_IO_WRITE, 2, 0);
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/a", "a", 1));
    assert_int_equal(icm_fileio_create_new(e->io, "s3://b/t/b", "b", 1), ICM_EIO);
    assert_string_equal(icm_error_last()->location, "s3://b/t/b");
    assert_non_null(strstr(icm_error_last()->message, "injected"));
    assert_false(inner_has(e, "s3://b/t/b")); /* the failed write left nothing */
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/c", "c", 1));
    icmt_ok(icm_fileio_write_replace(e->io, "s3://b/t/b", "b", 1)); /* one-shot */
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_WRITE), 4);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_READ), 0);
    assert_int_equal(icm_fileio_fault_total(e->io), 4);
    assert_false(icm_fileio_fault_crashed(e->io));
}

static void test_fault_nth_counts_from_arming(void **state)
{
    env *e = *state;
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/r", "data", 4));
    char *out;
    size_t len;
    for (int i = 0; i < 3; i++) {
        icmt_ok(icm_fileio_read(&out, &len, e->io, "s3://b/t/r"));
        icm_free(out);
    }
    icm_fileio_fault_fail_nth(e->io, ICM_IO_READ, 2, ICM_ENOTFOUND);
    icmt_ok(icm_fileio_read(&out, &len, e->io, "s3://b/t/r")); /* read #4: 1st after arming */
    icm_free(out);
    char buf[4];
    size_t got;
    /* read_range is a READ too: read #5 is the 2nd after arming */
    assert_int_equal(icm_fileio_read_range(&got, e->io, "s3://b/t/r", 0, buf, 4),
                     ICM_ENOTFOUND);
    icmt_ok(icm_fileio_read(&out, &len, e->io, "s3://b/t/r"));
    icm_free(out);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_READ), 6);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_WRITE), 1);
    /* nth 0 disarms */
    icm_fileio_fault_fail_nth(e->io, ICM_IO_STAT, 1, 0);
    icm_fileio_fault_fail_nth(e->io, ICM_IO_STAT, 0, 0);
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e->io, "s3://b/t/r"));
}

static void test_fault_failed_delete_deletes_nothing(void **state)
{
    env *e = *state;
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/keep", "k", 1));
    icm_fileio_fault_fail_nth(e->io, ICM_IO_DELETE, 1, 0);
    assert_int_equal(icm_fileio_delete(e->io, "s3://b/t/keep"), ICM_EIO);
    assert_true(inner_has(e, "s3://b/t/keep"));
    icmt_ok(icm_fileio_delete(e->io, "s3://b/t/keep"));
    assert_false(inner_has(e, "s3://b/t/keep"));
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_DELETE), 2);
}

static void test_fault_crash_after(void **state)
{
    env *e = *state;
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/before", "x", 1)); /* op 1, not counted
                                                                         towards the crash */
    icm_fileio_fault_crash_after(e->io, 3);
    icm_fileio_fault_fail_nth(e->io, ICM_IO_DELETE, 1, ICM_ENOTFOUND); /* pending at crash */
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/a", "a", 1));
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/b", "b", 1));
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e->io, "s3://b/t/a"));
    assert_false(icm_fileio_fault_crashed(e->io));
    /* the 4th operation after arming and every later one fail with no effect */
    assert_int_equal(icm_fileio_create_new(e->io, "s3://b/t/c", "c", 1), ICM_EIO);
    assert_true(icm_fileio_fault_crashed(e->io));
    assert_false(inner_has(e, "s3://b/t/c"));
    assert_int_equal(icm_fileio_delete(e->io, "s3://b/t/a"), ICM_EIO); /* crash wins */
    assert_true(inner_has(e, "s3://b/t/a"));
    assert_int_equal(icm_fileio_write_replace(e->io, "s3://b/t/a", "zz", 2), ICM_EIO);
    char *out;
    size_t len;
    icmt_ok(icm_fileio_read(&out, &len, e->mem, "s3://b/t/a")); /* still the old content */
    assert_string_equal(out, "a");
    icm_free(out);
    assert_int_equal(icm_fileio_read(&out, &len, e->io, "s3://b/t/a"), ICM_EIO);
    seen_set s = {0};
    assert_int_equal(icm_fileio_list(e->io, "s3://b/t", seen_cb, &s), ICM_EIO);
    assert_int_equal(s.calls, 0);
    assert_int_equal(icm_fileio_stat(&info, e->io, "s3://b/t/a"), ICM_EIO);
    /* counters include the rejected operations */
    assert_int_equal(icm_fileio_fault_total(e->io), 10);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_WRITE), 5);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_STAT), 2);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_DELETE), 1);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_READ), 1);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_LIST), 1);
    /* reset clears everything */
    icm_fileio_fault_reset(e->io);
    assert_false(icm_fileio_fault_crashed(e->io));
    assert_int_equal(icm_fileio_fault_total(e->io), 0);
    icmt_ok(icm_fileio_delete(e->io, "s3://b/t/a")); /* the pending delete fault is gone */
    assert_false(inner_has(e, "s3://b/t/a"));
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_DELETE), 1);
}

static void test_fault_list_is_one_operation(void **state)
{
    env *e = *state;
    for (int i = 0; i < 10; i++) {
        char *loc = icmt_sprintf("s3://b/t/l/f%d", i);
        icmt_ok(icm_fileio_create_new(e->io, loc, "x", 1));
        free(loc);
    }
    stop_state st = {0, 0, 0};
    icmt_ok(icm_fileio_list(e->io, "s3://b/t/l", stop_cb, &st));
    assert_int_equal(st.calls, 10);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_LIST), 1);
    /* refused by the argument checks before reaching the wrapper: not counted */
    char *out;
    size_t len;
    assert_int_equal(icm_fileio_read(&out, &len, e->io, ""), ICM_EINVALID);
    assert_int_equal(icm_fileio_fault_count(e->io, ICM_IO_READ), 0);
    assert_int_equal(icm_fileio_fault_total(e->io), 11);
}

static void test_fault_calls_on_other_handles_are_ignored(void **state)
{
    env *e = *state;
    icm_fileio_fault_fail_nth(e->mem, ICM_IO_WRITE, 1, 0);
    icm_fileio_fault_crash_after(e->mem, 1);
    icmt_ok(icm_fileio_create_new(e->mem, "s3://b/t/m", "m", 1));
    icmt_ok(icm_fileio_create_new(e->mem, "s3://b/t/n", "n", 1));
    assert_int_equal(icm_fileio_fault_count(e->mem, ICM_IO_WRITE), 0);
    assert_int_equal(icm_fileio_fault_total(NULL), 0);
    assert_false(icm_fileio_fault_crashed(e->mem));
    icm_fileio_fault_reset(NULL);
    icm_fileio_fault_fail_nth(e->io, ICM_IO_OP_COUNT, 1, 0); /* bad kind: ignored */
    icmt_ok(icm_fileio_create_new(e->io, "s3://b/t/o", "o", 1));
}

/* ------------------------------------------------------------------------------------------ */
/* path-map wrapper                                                                            */

typedef struct pm_env {
    icm_fileio *io;
    char *tmp;
    char *copy, *special, *rel, *at;
} pm_env;

static int setup_pm(void **state)
{
    pm_env *p = calloc(1, sizeof *p);
    p->tmp = icmt_mkdtemp();
    p->copy = icmt_sprintf("%s/copy", p->tmp);
    p->special = icmt_sprintf("%s/special", p->tmp);
    p->rel = icmt_sprintf("%s/rel", p->tmp);
    p->at = icmt_sprintf("%s/at", p->tmp);
    icm_path_map rules[] = {
        {"s3://bucket/wh/t", p->copy},
        {"s3://bucket/wh/t/data/special/", p->special},
        {"data/persistent/x", p->rel},
        {"/a/t", p->at},
    };
    icm_fileio *local;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_pathmap_new(&p->io, local, rules, 4));
    *state = p;
    return 0;
}

static int teardown_pm(void **state)
{
    pm_env *p = *state;
    icm_fileio_free(p->io);
    icmt_rmtree(p->tmp);
    free(p->tmp);
    free(p->copy);
    free(p->special);
    free(p->rel);
    free(p->at);
    free(p);
    return 0;
}

static void assert_maps(const pm_env *p, const char *loc, const char *want)
{
    char *out = NULL;
    icmt_ok(icm_fileio_pathmap_apply(&out, p->io, loc));
    if (strcmp(out, want) != 0) {
        print_error("map(%s) = %s, want %s\n", loc, out, want);
        fail();
    }
    icm_free(out);
}

static void test_pathmap_apply(void **state)
{
    pm_env *p = *state;
    char *w;
    w = icmt_sprintf("%s/metadata/v1.json", p->copy);
    assert_maps(p, "s3://bucket/wh/t/metadata/v1.json", w);
    free(w);
    assert_maps(p, "s3://bucket/wh/t", p->copy);
    assert_maps(p, "s3://bucket/wh/t/", p->copy);
    w = icmt_sprintf("%s/f.parquet", p->special); /* longest FROM wins */
    assert_maps(p, "s3://bucket/wh/t/data/special/f.parquet", w);
    free(w);
    w = icmt_sprintf("%s/data/specialty/f", p->copy); /* segment boundary */
    assert_maps(p, "s3://bucket/wh/t/data/specialty/f", w);
    free(w);
    assert_maps(p, "s3://bucket/wh/t_2/x", "s3://bucket/wh/t_2/x");
    /* s3a:// and s3n:// name the objects s3:// names: a copy's file spelled so is the copy's,
     * never read or deleted in the original's bucket */
    w = icmt_sprintf("%s/x", p->copy);
    assert_maps(p, "s3a://bucket/wh/t/x", w);
    assert_maps(p, "s3n://bucket/wh/t/x", w);
    free(w);
    assert_maps(p, "S3A://bucket/wh/t/x", "S3A://bucket/wh/t/x"); /* (not a writer's spelling) */
    assert_maps(p, "gs://bucket/wh/t/x", "gs://bucket/wh/t/x");
    assert_maps(p, "s3://bucket/wh/t/../x", "s3://bucket/wh/t/../x");
    w = icmt_sprintf("%s/metadata/m.avro", p->rel);
    assert_maps(p, "data/persistent/x/metadata/m.avro", w);
    free(w);
    assert_maps(p, "/data/persistent/x/m.avro", "/data/persistent/x/m.avro");
    assert_maps(p, "/a/t_2/x", "/a/t_2/x");
    w = icmt_sprintf("%s/x", p->at);
    assert_maps(p, "/a/t/x", w);
    assert_maps(p, "file:///a/t/x", w);
    assert_maps(p, "//a//t/x", w);
    free(w);
}

/* unapply is the inverse of apply for names at or below a TO; other names pass unchanged. */
static void assert_unmaps(pm_env *p, const char *loc, const char *want)
{
    char *out = NULL;
    icmt_ok(icm_fileio_pathmap_unapply(&out, p->io, loc));
    assert_string_equal(out, want);
    char *back = NULL;
    icmt_ok(icm_fileio_pathmap_apply(&back, p->io, out));
    char *norm_loc = NULL, *norm_back = NULL;
    assert_true(icm_location_local_path(&norm_loc, loc) ==
                icm_location_local_path(&norm_back, back));
    if (norm_loc != NULL)
        assert_string_equal(norm_loc, norm_back);
    icm_free(norm_loc);
    icm_free(norm_back);
    icm_free(back);
    icm_free(out);
}

static void test_pathmap_unapply(void **state)
{
    pm_env *p = *state;
    char *w = icmt_sprintf("%s/metadata/v1.json", p->copy);
    assert_unmaps(p, w, "s3://bucket/wh/t/metadata/v1.json");
    free(w);
    w = icmt_sprintf("%s/f.parquet", p->special); /* longest TO wins */
    assert_unmaps(p, w, "s3://bucket/wh/t/data/special/f.parquet");
    free(w);
    w = icmt_sprintf("%s/m.avro", p->rel);
    assert_unmaps(p, w, "data/persistent/x/m.avro");
    free(w);
    w = icmt_sprintf("%s_2/x", p->copy); /* segment boundary: a sibling is not mapped */
    char *out = NULL;
    icmt_ok(icm_fileio_pathmap_unapply(&out, p->io, w));
    assert_string_equal(out, w);
    icm_free(out);
    free(w);
    icmt_ok(icm_fileio_pathmap_unapply(&out, p->io, "s3://elsewhere/k"));
    assert_string_equal(out, "s3://elsewhere/k");
    icm_free(out);
}

static void write_real(const char *dir, const char *rel, const char *content)
{
    char *path = icmt_sprintf("%s/%s", dir, rel);
    /* mkdir -p with plain libc, independent of the code under test */
    for (char *s = path + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(path, 0777);
            *s = '/';
        }
    icmt_write_file(path, content, strlen(content));
    free(path);
}

static void test_pathmap_read_stat_delete_write(void **state)
{
    pm_env *p = *state;
    write_real(p->copy, "metadata/v1.json", "{\"v\":1}");
    assert_content(p->io, "s3://bucket/wh/t/metadata/v1.json", "{\"v\":1}", 7);
    icm_file_info info = ICM_FILE_INFO_INIT;
    const char *loc = "s3://bucket/wh/t/metadata/v1.json";
    icmt_ok(icm_fileio_stat(&info, p->io, loc));
    assert_ptr_equal(info.location, loc);
    assert_int_equal(info.size_bytes, 7);
    icmt_ok(icm_fileio_delete(p->io, loc));
    char *real = icmt_sprintf("%s/metadata/v1.json", p->copy);
    assert_false(icmt_file_exists(real));
    free(real);
    icmt_ok(icm_fileio_create_new(p->io, "s3://bucket/wh/t/new/f", "nf", 2));
    real = icmt_sprintf("%s/new/f", p->copy);
    assert_true(icmt_file_exists(real));
    free(real);
    /* unmapped names go to the inner back end unchanged: /a/t_2 is not below /a/t */
    write_real(p->at, "x", "at");
    assert_content(p->io, "/a/t/x", "at", 2);
    char *out;
    size_t len;
    assert_int_equal(icm_fileio_read(&out, &len, p->io, "/a/t_2/x"), ICM_ENOTFOUND);
    assert_string_equal(icm_error_last()->location, "/a/t_2/x");
}

static void test_pathmap_list_maps_back(void **state)
{
    pm_env *p = *state;
    write_real(p->copy, "metadata/v1.json", "12345");
    write_real(p->copy, "data/a.parquet", "aa");
    write_real(p->copy, "data/special/SHADOWED", "hidden by the longer rule");
    write_real(p->special, "s1.parquet", "s1");
    write_real(p->special, "sub/s2.parquet", "s22");
    write_real(p->tmp, "copy_2/not-below", "n"); /* sibling of the TO dir */
    const char *prefixes[] = {"s3://bucket/wh/t", "s3://bucket/wh/t/", "s3://bucket/wh/t/data",
                              "s3://bucket/wh/t/data/special"};
    for (size_t i = 0; i < 4; i++) {
        seen_set s = {0};
        if (i < 2)
            seen_add(&s, strdup("s3://bucket/wh/t/metadata/v1.json"), 5, INT64_MIN);
        if (i < 3)
            seen_add(&s, strdup("s3://bucket/wh/t/data/a.parquet"), 2, INT64_MIN);
        seen_add(&s, strdup("s3://bucket/wh/t/data/special/s1.parquet"), 2, INT64_MIN);
        seen_add(&s, strdup("s3://bucket/wh/t/data/special/sub/s2.parquet"), 3, INT64_MIN);
        icmt_ok(icm_fileio_list(p->io, prefixes[i], seen_cb, &s));
        seen_check(&s);
        seen_free(&s);
    }
}

static void test_pathmap_list_above_from(void **state)
{
    pm_env *p = *state;
    /* "/a" exists nowhere here; the files of rule /a/t -> at are listed under /a/t */
    write_real(p->at, "m/x", "xx");
    write_real(p->at, "y", "y");
    seen_set s = {0};
    seen_add(&s, strdup("/a/t/m/x"), 2, INT64_MIN);
    seen_add(&s, strdup("/a/t/y"), 1, INT64_MIN);
    icmt_ok(icm_fileio_list(p->io, "/a", seen_cb, &s));
    seen_check(&s);
    seen_free(&s);
    /* in the prefix's own form */
    seen_add(&s, strdup("file:///a/t/m/x"), 2, INT64_MIN);
    seen_add(&s, strdup("file:///a/t/y"), 1, INT64_MIN);
    icmt_ok(icm_fileio_list(p->io, "file:///a/", seen_cb, &s));
    seen_check(&s);
    seen_free(&s);
}

static void test_pathmap_invalid_rules(void **state)
{
    (void)state;
    const icm_path_map bad[][2] = {
        {{"", "/x"}, {"/b", "/y"}},
        {{"/a", ""}, {"/b", "/y"}},
        {{NULL, "/x"}, {"/b", "/y"}},
        {{"s3://", "/x"}, {"/b", "/y"}},
        {{"/a/t", "/x"}, {"file:///a/t/", "/y"}},
        {{"s3://b/t", "/x"}, {"s3://b/t/", "/y"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm_fileio *local, *pm = (icm_fileio *)&pm;
        icmt_ok(icm_fileio_local_new(&local));
        /* the inner back end is taken even on failure (ASan reports a leak otherwise) */
        assert_int_equal(icm_fileio_pathmap_new(&pm, local, bad[i], 2), ICM_EINVALID);
        assert_null(pm);
    }
    icm_fileio *mem;
    icmt_ok(icm_fileio_mem_new(&mem));
    char *out = (char *)"x";
    assert_int_equal(icm_fileio_pathmap_apply(&out, mem, "/a"), ICM_EINVALID);
    assert_null(out);
    icm_fileio_free(mem);
    /* no rules at all is a valid pass-through */
    icm_fileio *local, *pm;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_pathmap_new(&pm, local, NULL, 0));
    icmt_ok(icm_fileio_pathmap_apply(&out, pm, "s3://b/k"));
    assert_string_equal(out, "s3://b/k");
    icm_free(out);
    icm_fileio_free(pm);
}

/* Paths collected by nftw, independent of the code under test. */
static seen_set *g_walk_set;
static const char *g_walk_root;
static const char *g_walk_from;

static int walk_collect(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag == FTW_F && S_ISREG(sb->st_mode)) {
        const char *rel = path + strlen(g_walk_root);
        seen_add(g_walk_set, icmt_sprintf("%s%s", g_walk_from, rel), sb->st_size,
                   (int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000);
    }
    return 0;
}

/* A real fixture whose metadata names its files `file://data/persistent/...` (a malformed URI
 * whose "host" is `data`): mapped to its folder, it reads and lists under the metadata's names. */
static void test_pathmap_real_fixture(void **state)
{
    (void)state;
    const char *from = "file://data/persistent/map_stats/default.db/map_stats";
    char *to = icmt_sprintf("%s/duckdb-iceberg/data/persistent/map_stats/default.db/map_stats",
                            icmt_fixtures_dir());
    if (!icmt_file_exists(to))
        icmt_skip_because("the fixture %s is missing", to);
    icm_fileio *local, *pm;
    icmt_ok(icm_fileio_local_new(&local));
    icm_path_map rule = {from, to};
    icmt_ok(icm_fileio_pathmap_new(&pm, local, &rule, 1));
    seen_set s = {0};
    g_walk_set = &s;
    g_walk_root = to;
    g_walk_from = from;
    assert_int_equal(nftw(to, walk_collect, 16, FTW_PHYS), 0);
    assert_true(s.n >= 5);
    icmt_ok(icm_fileio_list(pm, from, seen_cb, &s));
    seen_check(&s);
    seen_free(&s);
    char *meta = icmt_sprintf(
        "%s/metadata/00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json", from);
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, pm, meta));
    assert_non_null(strstr(data, "\"location\": \"file://data/persistent/map_stats/default.db/"
                                 "map_stats\""));
    icm_free(data);
    free(meta);
    icm_fileio_free(pm);
    free(to);
}

/* ------------------------------------------------------------------------------------------ */
/* concurrency                                                                                 */

enum { N_THREADS = 4, N_FILES = 25 };

typedef struct worker {
    icm_fileio *io;
    const char *base;
    int id;
    int errors;
    int won[N_FILES];
} worker;

/* Create files of its own, read each back, delete the odd ones. */
static void *own_files_worker(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < N_FILES; i++) {
        char loc[512], want[64];
        snprintf(loc, sizeof loc, "%s/own/t%d/f%d", w->base, w->id, i);
        int n = snprintf(want, sizeof want, "thread %d file %d", w->id, i);
        if (icm_fileio_create_new(w->io, loc, want, (size_t)n) != 0)
            w->errors++;
        char *got = NULL;
        size_t len = 0;
        if (icm_fileio_read(&got, &len, w->io, loc) != 0 || len != (size_t)n ||
            memcmp(got, want, len) != 0)
            w->errors++;
        icm_free(got);
        if (i % 2 == 1 && icm_fileio_delete(w->io, loc) != 0)
            w->errors++;
    }
    return NULL;
}

/* Everyone races to create the same names: create-new must let exactly one win each. */
static void *race_worker(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < N_FILES; i++) {
        char loc[512], content[32];
        snprintf(loc, sizeof loc, "%s/race/f%d", w->base, i);
        int n = snprintf(content, sizeof content, "winner %d", w->id);
        int rc = icm_fileio_create_new(w->io, loc, content, (size_t)n);
        if (rc == 0)
            w->won[i] = 1;
        else if (rc != ICM_EEXISTS)
            w->errors++;
    }
    return NULL;
}

static void run_workers(icm_fileio *io, const char *base, void *(*fn)(void *), worker *ws)
{
    pthread_t th[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        ws[t] = (worker){io, base, t, 0, {0}};
        assert_int_equal(pthread_create(&th[t], NULL, fn, &ws[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < N_THREADS; t++)
        assert_int_equal(ws[t].errors, 0);
}

static void check_concurrent(icm_fileio *io, const char *base)
{
    worker ws[N_THREADS];
    run_workers(io, base, own_files_worker, ws);
    seen_set s = {0};
    for (int t = 0; t < N_THREADS; t++)
        for (int i = 0; i < N_FILES; i += 2)
            seen_add(&s, icmt_sprintf("%s/own/t%d/f%d", base, t, i),
                       (int64_t)strlen("thread 0 file ") + (i >= 10 ? 2 : 1), INT64_MIN);
    char *prefix = icmt_sprintf("%s/own", base);
    icmt_ok(icm_fileio_list(io, prefix, seen_cb, &s));
    seen_check(&s);
    seen_free(&s);
    free(prefix);

    run_workers(io, base, race_worker, ws);
    for (int i = 0; i < N_FILES; i++) {
        int winners = 0, who = -1;
        for (int t = 0; t < N_THREADS; t++)
            if (ws[t].won[i]) {
                winners++;
                who = t;
            }
        assert_int_equal(winners, 1);
        char loc[512], want[32];
        snprintf(loc, sizeof loc, "%s/race/f%d", base, i);
        int n = snprintf(want, sizeof want, "winner %d", who);
        assert_content(io, loc, want, (size_t)n);
    }
}

static void test_concurrent_mem(void **state)
{
    (void)state;
    icm_fileio *mem;
    icmt_ok(icm_fileio_mem_new(&mem));
    check_concurrent(mem, "s3://bucket/conc");
    icm_fileio_free(mem);
}

static void test_concurrent_local(void **state)
{
    (void)state;
    char *tmp = icmt_mkdtemp();
    icm_fileio *local;
    icmt_ok(icm_fileio_local_new(&local));
    check_concurrent(local, tmp);
    /* no temp file was left behind by the losers of the race */
    char *race = icmt_sprintf("%s/race", tmp);
    assert_int_equal(count_dir_entries(race, NULL), N_FILES);
    free(race);
    icm_fileio_free(local);
    icmt_rmtree(tmp);
    free(tmp);
}

static void *stat_worker(void *arg)
{
    worker *w = arg;
    icm_file_info info = ICM_FILE_INFO_INIT;
    for (int i = 0; i < 200; i++)
        if (icm_fileio_stat(&info, w->io, "s3://b/x") != ICM_ENOTFOUND)
            w->errors++;
    return NULL;
}

static void test_concurrent_fault_counters(void **state)
{
    (void)state;
    icm_fileio *mem, *fault;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    worker ws[N_THREADS];
    run_workers(fault, NULL, stat_worker, ws);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_STAT), N_THREADS * 200);
    assert_int_equal(icm_fileio_fault_total(fault), N_THREADS * 200);
    icm_fileio_free(fault);
}

/* ------------------------------------------------------------------------------------------ */
/* allocation failure: every call fails cleanly with ICM_ENOMEM, has no effect, leaks nothing  */

static long g_alloc_countdown; /* fail the allocation that brings it to 0; <0: never */

static bool alloc_should_fail(void)
{
    return g_alloc_countdown >= 0 && g_alloc_countdown-- == 0;
}
static void *chaos_malloc(size_t n)
{
    return alloc_should_fail() ? NULL : malloc(n);
}
static void *chaos_realloc(void *p, size_t n)
{
    return alloc_should_fail() ? NULL : realloc(p, n);
}

static void fail_alloc_after(long n)
{
    static const icm_allocator a = {chaos_malloc, chaos_realloc, free};
    g_alloc_countdown = n;
    icm_allocator_set(&a);
}

static void alloc_normal(void)
{
    icm_allocator_set(NULL);
    g_alloc_countdown = -1;
}

typedef enum chaos_op { C_CREATE, C_READ, C_STAT, C_LIST, C_REPLACE, C_DELETE } chaos_op;

static int count_cb(const icm_file_info *info, void *payload)
{
    (void)info;
    ++*(int *)payload;
    return 0;
}

static int run_op(icm_fileio *io, chaos_op op, const char *loc, const char *prefix)
{
    char *out = NULL;
    size_t len;
    icm_file_info info = ICM_FILE_INFO_INIT;
    int n = 0, rc = ICM_ERROR;
    switch (op) {
    case C_CREATE: rc = icm_fileio_create_new(io, loc, "new", 3); break;
    case C_READ: rc = icm_fileio_read(&out, &len, io, loc); break;
    case C_STAT: rc = icm_fileio_stat(&info, io, loc); break;
    case C_LIST: rc = icm_fileio_list(io, prefix, count_cb, &n); break;
    case C_REPLACE: rc = icm_fileio_write_replace(io, loc, "replaced", 8); break;
    case C_DELETE: rc = icm_fileio_delete(io, loc); break;
    }
    icm_free(out);
    return rc;
}

/* Fail allocation 0, 1, 2, ... of one operation until it succeeds; every failure must be
 * ICM_ENOMEM and leave the object as it was. */
static void chaos_one(icm_fileio *io, chaos_op op, const char *loc, const char *prefix)
{
    for (long n = 0;; n++) {
        icm_file_info before = ICM_FILE_INFO_INIT;
        bool existed = icm_fileio_stat(&before, io, loc) == 0;
        fail_alloc_after(n);
        int rc = run_op(io, op, loc, prefix);
        alloc_normal();
        if (rc == 0)
            return;
        if (rc != ICM_ENOMEM)
            print_error("op %d, allocation %ld: rc %d (%s)\n", op, n, rc,
                        icm_error_last()->message);
        assert_int_equal(rc, ICM_ENOMEM);
        icm_file_info after = ICM_FILE_INFO_INIT;
        assert_int_equal(icm_fileio_stat(&after, io, loc) == 0, existed);
        if (existed && op == C_REPLACE)
            assert_int_equal(after.size_bytes, before.size_bytes);
        assert_true(n < 1000);
    }
}

static void chaos_all(icm_fileio *io, const char *base)
{
    char *loc = icmt_sprintf("%s/chaos/dir/f.txt", base);
    char *prefix = icmt_sprintf("%s/chaos", base);
    const chaos_op ops[] = {C_CREATE, C_READ, C_STAT, C_LIST, C_REPLACE, C_DELETE};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        chaos_one(io, ops[i], loc, prefix);
    free(prefix);
    free(loc);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    char *tmp = icmt_mkdtemp();
    icm_fileio *io;
    icmt_ok(icm_fileio_local_new(&io));
    chaos_all(io, tmp);
    icm_fileio_free(io);

    icmt_ok(icm_fileio_mem_new(&io));
    chaos_all(io, "s3://b/t");
    chaos_all(io, "file:///mem");
    icm_fileio_free(io);

    icm_fileio *inner;
    icmt_ok(icm_fileio_mem_new(&inner));
    icmt_ok(icm_fileio_fault_new(&io, inner));
    chaos_all(io, "s3://b/t");
    icm_fileio_free(io);

    icmt_ok(icm_fileio_local_new(&inner));
    char *other = icmt_sprintf("%s/other", tmp);
    char *virt = icmt_sprintf("%s/virtual", tmp);
    icm_path_map rules[] = {{"s3://b/t", tmp}, {"s3://b/t/chaos/dir", other}, {"/virtual/t", virt}};
    icmt_ok(icm_fileio_pathmap_new(&io, inner, rules, 3));
    chaos_all(io, "s3://b/t");
    chaos_all(io, "/virtual/t");
    /* listing above a rule's FROM (two passes) */
    icmt_ok(icm_fileio_create_new(io, "/virtual/t/x/y", "y", 1));
    chaos_one(io, C_LIST, "/virtual/t/x/y", "/virtual");
    icm_fileio_free(io);

    /* constructors: ICM_ENOMEM, the taken inner back end freed (ASan checks the leak) */
    for (long n = 0; n < 8; n++) {
        icm_fileio *a = NULL, *b = NULL;
        icmt_ok(icm_fileio_mem_new(&a));
        fail_alloc_after(n);
        int rc1 = icm_fileio_fault_new(&b, a);
        alloc_normal();
        icm_fileio_free(b);
        icmt_ok(icm_fileio_local_new(&a));
        fail_alloc_after(n);
        int rc2 = icm_fileio_pathmap_new(&b, a, rules, 3);
        alloc_normal();
        icm_fileio_free(b);
        assert_true(rc1 == 0 || rc1 == ICM_ENOMEM);
        assert_true(rc2 == 0 || rc2 == ICM_ENOMEM);
        fail_alloc_after(n);
        rc1 = icm_fileio_mem_new(&a);
        alloc_normal();
        icm_fileio_free(a);
        assert_true(rc1 == 0 || rc1 == ICM_ENOMEM);
    }
    free(other);
    free(virt);
    icmt_rmtree(tmp);
    free(tmp);
}

int main(void)
{
    int failed = 0;
    for (int k = 0; k < BE_COUNT; k++)
        failed += run_contract(&g_kinds[k]);

    const struct CMUnitTest local_tests[] = {
        cmocka_unit_test_prestate_setup_teardown(test_local_writes_leave_no_temp_files,
                                                 setup_env, teardown_env, &g_local),
        cmocka_unit_test_prestate_setup_teardown(test_local_directory_is_not_a_file, setup_env,
                                                 teardown_env, &g_local),
        cmocka_unit_test_prestate_setup_teardown(test_local_checksum_of_reports_hadoop_crc,
                                                 setup_env,
                                                 teardown_env, &g_local),
        cmocka_unit_test_prestate_setup_teardown(test_resolve, setup_env, teardown_env,
                                                 &g_local),
        cmocka_unit_test_prestate_setup_teardown(test_local_symlinks, setup_env, teardown_env,
                                                 &g_local),
        cmocka_unit_test_prestate_setup_teardown(test_local_rejects_object_store_uris,
                                                 setup_env, teardown_env, &g_local),
        cmocka_unit_test_prestate_setup_teardown(test_local_relative_paths, setup_env,
                                                 teardown_env, &g_local),
    };
    failed += cmocka_run_group_tests_name("local", local_tests, NULL, NULL);

    const struct CMUnitTest fault_tests[] = {
        cmocka_unit_test_prestate_setup_teardown(test_fault_nth_write_fails_once_without_effect,
                                                 setup_env, teardown_env, &g_fault),
        cmocka_unit_test_prestate_setup_teardown(test_fault_nth_counts_from_arming, setup_env,
                                                 teardown_env, &g_fault),
        cmocka_unit_test_prestate_setup_teardown(test_fault_failed_delete_deletes_nothing,
                                                 setup_env, teardown_env, &g_fault),
        cmocka_unit_test_prestate_setup_teardown(test_fault_crash_after, setup_env,
                                                 teardown_env, &g_fault),
        cmocka_unit_test_prestate_setup_teardown(test_fault_list_is_one_operation, setup_env,
                                                 teardown_env, &g_fault),
        cmocka_unit_test_prestate_setup_teardown(test_fault_calls_on_other_handles_are_ignored,
                                                 setup_env, teardown_env, &g_fault),
    };
    failed += cmocka_run_group_tests_name("fault", fault_tests, NULL, NULL);

    const struct CMUnitTest pathmap_tests[] = {
        cmocka_unit_test_setup_teardown(test_pathmap_apply, setup_pm, teardown_pm),
        cmocka_unit_test_setup_teardown(test_pathmap_unapply, setup_pm, teardown_pm),
        cmocka_unit_test_setup_teardown(test_pathmap_read_stat_delete_write, setup_pm,
                                        teardown_pm),
        cmocka_unit_test_setup_teardown(test_pathmap_list_maps_back, setup_pm, teardown_pm),
        cmocka_unit_test_setup_teardown(test_pathmap_list_above_from, setup_pm, teardown_pm),
        cmocka_unit_test(test_pathmap_invalid_rules),
        cmocka_unit_test(test_pathmap_real_fixture),
    };
    failed += cmocka_run_group_tests_name("pathmap", pathmap_tests, NULL, NULL);

    const struct CMUnitTest concurrency_tests[] = {
        cmocka_unit_test(test_concurrent_mem),
        cmocka_unit_test(test_concurrent_local),
        cmocka_unit_test(test_concurrent_fault_counters),
    };
    failed += cmocka_run_group_tests_name("concurrency", concurrency_tests, NULL, NULL);

    const struct CMUnitTest oom_tests[] = {
        cmocka_unit_test(test_out_of_memory),
    };
    failed += cmocka_run_group_tests_name("out of memory", oom_tests, NULL, NULL);
    return failed == 0 ? 0 : 1;
}
