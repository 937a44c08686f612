/*
 * test_fileio_versions.c: the FileIO wrappers check a back end's methods version.
 *
 * A back end whose `version` is below 1 or above ICM_FILEIO_METHODS_VERSION is refused by every
 * wrapper with ICM_EINVALID and a message naming the back end and its version, before any slot
 * is called (its slots are poisoned: a call would crash). A version-1 back end's later slots are
 * never read (poisoned too), and the wrappers give its defaults: resolve returns the location,
 * checksum_of finds no companion. The stable headers (fileio.h, sys/fileio.h) declare none of
 * the testing back ends; testing/fileio.h does, and says it is outside the stable ABI.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "testutil.h"

#define POISON(type) ((type)(uintptr_t)1)

typedef int (*read_fn)(icm_fileio *, const char *, char **, size_t *);
typedef int (*read_range_fn)(icm_fileio *, const char *, int64_t, void *, size_t, size_t *);
typedef int (*write_fn)(icm_fileio *, const char *, const void *, size_t);
typedef int (*remove_fn)(icm_fileio *, const char *);
typedef int (*stat_fn)(icm_fileio *, const char *, icm_file_info *);
typedef int (*list_fn)(icm_fileio *, const char *, icm_list_cb, void *);
typedef int (*list_flags_fn)(icm_fileio *, const char *, unsigned, icm_list_cb, void *);
typedef int (*resolve_fn)(icm_fileio *, const char *, char **);
typedef int (*checksum_fn)(icm_fileio *, const char *, char **, icm_file_info *);
typedef int (*batch_fn)(icm_fileio *, const char *const *, size_t, icm_fileio_delete_result *);
typedef int (*range_fn)(icm_fileio *, const char *, const icm_fileio_list_options *, icm_list_cb,
                        void *);

static int g_freed;

static void count_free(icm_fileio *io)
{
    (void)io;
    g_freed++;
}

/* Every slot but free poisoned: only the version decides whether a wrapper goes on. */
#define POISONED_METHODS(v, nm)                                                               \
    {                                                                                         \
        .version = (v), .name = (nm), .read = POISON(read_fn),                                \
        .read_range = POISON(read_range_fn), .create_new = POISON(write_fn),                  \
        .write_replace = POISON(write_fn), .remove = POISON(remove_fn),                       \
        .stat = POISON(stat_fn), .list = POISON(list_fn), .free = count_free,                 \
        .list_flags = POISON(list_flags_fn), .resolve = POISON(resolve_fn),                   \
        .checksum_of = POISON(checksum_fn), .delete_batch = POISON(batch_fn),                 \
        .list_range = POISON(range_fn)                                                        \
    }

static const icm_fileio_methods V0 = POISONED_METHODS(0, "zero");
static const icm_fileio_methods V_NEXT = POISONED_METHODS(ICM_FILEIO_METHODS_VERSION + 1,
                                                          "future");

static int never_cb(const icm_file_info *info, void *payload)
{
    (void)info;
    (void)payload;
    fail_msg("listing callback called for a refused back end");
    return 0;
}

/* The last error is ICM_EINVALID naming the back end and its version. */
static void assert_refused(int rc, const char *name, int version)
{
    assert_int_equal(rc, ICM_EINVALID);
    const icm_error *e = icm_error_last();
    assert_int_equal(e->code, ICM_EINVALID);
    assert_non_null(strstr(e->message, name));
    char want[64];
    snprintf(want, sizeof want, "methods version %d", version);
    assert_non_null(strstr(e->message, want));
}

static void check_every_wrapper_refuses(const icm_fileio_methods *m)
{
    icm_fileio io = {m};
    char *s = (char *)"sentinel";
    size_t len = 7;
    assert_refused(icm_fileio_read(&s, &len, &io, "/x"), m->name, m->version);
    assert_null(s);
    assert_int_equal(len, 0);
    char buf[4];
    size_t got = 9;
    assert_refused(icm_fileio_read_range(&got, &io, "/x", 0, buf, sizeof buf), m->name,
                   m->version);
    assert_int_equal(got, 0);
    assert_refused(icm_fileio_create_new(&io, "/x", "a", 1), m->name, m->version);
    assert_refused(icm_fileio_write_replace(&io, "/x", "a", 1), m->name, m->version);
    assert_refused(icm_fileio_delete(&io, "/x"), m->name, m->version);
    bool existed = false;
    assert_refused(icm_fileio_delete_existing(&existed, &io, "/x"), m->name, m->version);
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_refused(icm_fileio_stat(&info, &io, "/x"), m->name, m->version);
    assert_refused(icm_fileio_list(&io, "/x", never_cb, NULL), m->name, m->version);
    assert_refused(icm_fileio_list_flags(&io, "/x", ICM_LIST_STAT_OPTIONAL, never_cb, NULL),
                   m->name, m->version);
    assert_refused(icm_fileio_list_opts(&io, "/x", NULL, never_cb, NULL), m->name, m->version);
    s = (char *)"sentinel";
    assert_refused(icm_fileio_resolve(&s, &io, "/x"), m->name, m->version);
    assert_null(s);
    s = (char *)"sentinel";
    assert_refused(icm_fileio_checksum_of(&s, &info, &io, "/x"), m->name, m->version);
    assert_null(s);
    const char *locs[] = {"/x"};
    icm_fileio_delete_result r = ICM_FILEIO_DELETE_RESULT_INIT;
    assert_refused(icm_fileio_delete_batch(&r, &io, locs, 1), m->name, m->version);
    assert_int_equal(r.status, ICM_FILEIO_DELETE_FAILED);
    assert_int_equal(r.code, ICM_EINVALID);
    /* free is a version-1 slot: a back end is released whatever its version, so nothing leaks */
    g_freed = 0;
    icm_fileio_free(&io);
    assert_int_equal(g_freed, 1);
}

static void test_version_zero_refused(void **state)
{
    (void)state;
    check_every_wrapper_refuses(&V0);
}

static void test_version_above_known_refused(void **state)
{
    (void)state;
    check_every_wrapper_refuses(&V_NEXT);
}

/* A version-1 back end: stat passes to its slot; resolve and checksum_of never read theirs. */
static int v1_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    (void)io;
    out->location = location;
    out->size_bytes = 42;
    out->mtime_ms = 7;
    return 0;
}

static const icm_fileio_methods V1 = {
    .version = 1, .name = "v1", .read = POISON(read_fn), .read_range = POISON(read_range_fn),
    .create_new = POISON(write_fn), .write_replace = POISON(write_fn),
    .remove = POISON(remove_fn), .stat = v1_stat, .list = POISON(list_fn), .free = count_free,
    .list_flags = POISON(list_flags_fn), .resolve = POISON(resolve_fn),
    .checksum_of = POISON(checksum_fn), .delete_batch = POISON(batch_fn),
    .list_range = POISON(range_fn)};

static void test_version1_later_slots_not_read(void **state)
{
    (void)state;
    icm_fileio io = {&V1};
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, &io, "/x"));
    assert_int_equal(info.size_bytes, 42);
    assert_int_equal(info.mtime_ms, 7);
    char *s = NULL;
    icmt_ok(icm_fileio_resolve(&s, &io, "/a/b"));
    assert_string_equal(s, "/a/b");
    icm_free(s);
    s = (char *)"sentinel";
    icmt_ok(icm_fileio_checksum_of(&s, &info, &io, "/a/b"));
    assert_null(s);
    assert_int_equal(info.size_bytes, -1);
}

/* The text of a header under include/icemaint (malloc'd). */
static char *header(const char *name)
{
    char *path = icmt_sprintf("%s/include/icemaint/%s", ICM_SOURCE_DIR, name);
    char *text = icmt_read_file(path, NULL);
    assert_non_null(text);
    free(path);
    return text;
}

static void test_testing_backends_outside_stable_headers(void **state)
{
    (void)state;
    static const char *const testing_names[] = {"icm_fileio_mem_new", "icm_fileio_fault_new",
                                                "icm_fileio_fault_fail_nth", "icm_io_op"};
    static const char *const stable[] = {"fileio.h", "sys/fileio.h"};
    for (size_t h = 0; h < 2; h++) {
        char *text = header(stable[h]);
        for (size_t i = 0; i < 4; i++)
            if (strstr(text, testing_names[i]) != NULL)
                fail_msg("%s declares %s", stable[h], testing_names[i]);
        free(text);
    }
    char *text = header("testing/fileio.h");
    for (size_t i = 0; i < 4; i++)
        assert_non_null(strstr(text, testing_names[i]));
    assert_non_null(strstr(text, "NOT PART OF THE STABLE ABI"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_zero_refused),
        cmocka_unit_test(test_version_above_known_refused),
        cmocka_unit_test(test_version1_later_slots_not_read),
        cmocka_unit_test(test_testing_backends_outside_stable_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
