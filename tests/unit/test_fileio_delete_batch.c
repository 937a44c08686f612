/*
 * test_fileio_delete_batch.c: icm_fileio_delete_batch and the back ends' delete_batch slots.
 *
 * Per-item outcomes on the local back end (deleted, already gone, a directory and an object-store
 * URI FAILED and not retryable, an empty or NULL location FAILED with ICM_EINVALID) and on the
 * in-memory one (natively: duplicates, already gone); 2,500 items so that the wrapper's chunks of
 * ICM_FILEIO_DELETE_BATCH_MAX are exercised (a counting back end sees calls of 1000, 1000, 500,
 * also when invalid items are mixed in); the fault wrapper counts each item as one delete, fails
 * exactly the injected items (retryable when armed so) and leaves them in place, and a crash
 * rejects every later item; a path map maps each item. Back-compat: a version-3 back end (and a
 * version-4 one with a NULL slot) deletes through `remove`, telling ALREADY_GONE by the missing
 * note. A whole-call failure marks every item of the chunk (retryable for ICM_ENET). Argument
 * errors and allocation failure: a non-zero return with every result FAILED with that code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "icemaint/sys/fileio.h"
#include "testutil.h"
#include "util/util.h"

#define MANY 2500

typedef icm_fileio_delete_result result;

static void assert_ok_status(const result *r, icm_fileio_delete_status want)
{
    if (r->status != want)
        print_error("status %d (code %d: %s), want %d\n", r->status, r->code, r->message, want);
    assert_int_equal(r->status, want);
    assert_int_equal(r->code, 0);
    assert_false(r->retryable);
    assert_string_equal(r->message, "");
}

static void assert_failed(const result *r, int code, bool retryable, const char *in_message)
{
    assert_int_equal(r->status, ICM_FILEIO_DELETE_FAILED);
    assert_int_equal(r->code, code);
    assert_int_equal(r->retryable, retryable);
    if (in_message != NULL && strstr(r->message, in_message) == NULL)
        print_error("message \"%s\" lacks \"%s\"\n", r->message, in_message);
    if (in_message != NULL)
        assert_non_null(strstr(r->message, in_message));
}

/* ---- local ---------------------------------------------------------------------------- */

static void test_local_per_item_outcomes(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *a = icmt_sprintf("%s/a", dir);
    char *gone = icmt_sprintf("%s/gone", dir);
    char *sub = icmt_sprintf("%s/sub", dir);
    char *b = icmt_sprintf("file://%s/b", dir);
    char *b_path = icmt_sprintf("%s/b", dir);
    icmt_write_file(a, "A", 1);
    icmt_write_file(b_path, "B", 1);
    assert_int_equal(mkdir(sub, 0777), 0);
    icm_fileio *io;
    icmt_ok(icm_fileio_local_new(&io));
    const char *locs[] = {a, gone, sub, "s3://bucket/k", "", NULL, b, a};
    result r[8];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 8);
    icmt_ok(icm_fileio_delete_batch(r, io, locs, 8));
    assert_ok_status(&r[0], ICM_FILEIO_DELETED);
    assert_ok_status(&r[1], ICM_FILEIO_ALREADY_GONE);
    assert_failed(&r[2], ICM_EIO, false, "is a directory");
    assert_non_null(strstr(r[2].message, sub));
    assert_failed(&r[3], ICM_EUNSUPPORTED, false, "s3://bucket/k");
    assert_failed(&r[4], ICM_EINVALID, false, "item 4 has an empty location");
    assert_failed(&r[5], ICM_EINVALID, false, "item 5 has an empty location");
    assert_ok_status(&r[6], ICM_FILEIO_DELETED);
    assert_ok_status(&r[7], ICM_FILEIO_ALREADY_GONE); /* `a` twice: deleted once */
    assert_false(icmt_file_exists(a));
    assert_false(icmt_file_exists(b_path));
    assert_true(icmt_file_exists(sub)); /* a directory is never removed */
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(a), free(gone), free(sub), free(b), free(b_path), free(dir);
}

/* n locations `<base>/f<i>`; the strings are malloc'd. */
static char **make_names(const char *base, size_t n)
{
    char **v = calloc(n, sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = icmt_sprintf("%s/f%05zu", base, i);
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void test_local_many_items(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char **names = make_names(dir, MANY);
    for (size_t i = 0; i < MANY; i += 2) /* every other one exists */
        icmt_write_file(names[i], "x", 1);
    icm_fileio *io;
    icmt_ok(icm_fileio_local_new(&io));
    result *r = calloc(MANY, sizeof *r);
    assert_non_null(r);
    ICM_FILEIO_DELETE_RESULTS_INIT(r, MANY);
    icmt_ok(icm_fileio_delete_batch(r, io, (const char *const *)names, MANY));
    for (size_t i = 0; i < MANY; i++) {
        assert_ok_status(&r[i], i % 2 == 0 ? ICM_FILEIO_DELETED : ICM_FILEIO_ALREADY_GONE);
        assert_false(icmt_file_exists(names[i]));
    }
    icm_fileio_free(io);
    free(r);
    free_names(names, MANY);
    icmt_rmtree(dir);
    free(dir);
}

/* ---- in-memory ------------------------------------------------------------------------- */

static void put(icm_fileio *io, const char *loc)
{
    icmt_ok(icm_fileio_create_new(io, loc, "x", 1));
}

static bool exists(icm_fileio *io, const char *loc)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, loc);
    assert_true(rc == 0 || rc == ICM_ENOTFOUND);
    return rc == 0;
}

static void test_mem_per_item_outcomes(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    put(io, "/t/a");
    put(io, "s3://b/t/k");
    put(io, "/t/keep");
    /* `file:///t/a` names `/t/a`: the second spelling finds it gone */
    const char *locs[] = {"/t/a", "s3://b/t/k", "/t/none", "file:///t/a", ""};
    result r[5];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 5);
    icmt_ok(icm_fileio_delete_batch(r, io, locs, 5));
    assert_ok_status(&r[0], ICM_FILEIO_DELETED);
    assert_ok_status(&r[1], ICM_FILEIO_DELETED);
    assert_ok_status(&r[2], ICM_FILEIO_ALREADY_GONE);
    assert_ok_status(&r[3], ICM_FILEIO_ALREADY_GONE);
    assert_failed(&r[4], ICM_EINVALID, false, "empty location");
    assert_false(exists(io, "/t/a"));
    assert_false(exists(io, "s3://b/t/k"));
    assert_true(exists(io, "/t/keep"));
    icm_fileio_free(io);
}

static void test_mem_many_items(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    char **names = make_names("s3://bucket/t", MANY);
    for (size_t i = 0; i < MANY; i += 3)
        put(io, names[i]);
    put(io, "s3://bucket/t/other");
    result *r = calloc(MANY, sizeof *r);
    assert_non_null(r);
    ICM_FILEIO_DELETE_RESULTS_INIT(r, MANY);
    icmt_ok(icm_fileio_delete_batch(r, io, (const char *const *)names, MANY));
    for (size_t i = 0; i < MANY; i++) {
        assert_ok_status(&r[i], i % 3 == 0 ? ICM_FILEIO_DELETED : ICM_FILEIO_ALREADY_GONE);
        assert_false(exists(io, names[i]));
    }
    assert_true(exists(io, "s3://bucket/t/other"));
    free(r);
    free_names(names, MANY);
    icm_fileio_free(io);
}

/* ---- chunking, whole-call failures: a counting version-4 back end over mem ---------------- */

typedef struct counting {
    icm_fileio base;
    icm_fileio *inner;
    size_t calls;
    size_t sizes[8];
    int fail_with;       /* non-zero: the slot fails as a whole with this code */
    size_t removes;      /* calls of `remove` */
} counting;

static int c_batch(icm_fileio *io, const char *const *locs, size_t n, result *res)
{
    counting *c = (counting *)io;
    if (c->calls < 8)
        c->sizes[c->calls] = n;
    c->calls++;
    assert_true(n >= 1 && n <= ICM_FILEIO_DELETE_BATCH_MAX);
    for (size_t i = 0; i < n; i++)
        assert_true(locs[i] != NULL && locs[i][0] != '\0'); /* the wrapper passes only valid */
    if (c->fail_with != 0)
        return icm__error_set(ICM_ERRCLASS_S3, c->fail_with, NULL, "connection reset");
    return icm_fileio_delete_batch(res, c->inner, locs, n);
}

static int c_remove(icm_fileio *io, const char *location)
{
    counting *c = (counting *)io;
    c->removes++;
    /* passes the inner back end's missing note on, as every wrapper does */
    return icm_fileio_delete(c->inner, location);
}

static int c_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    return icm_fileio_stat(out, ((counting *)io)->inner, location);
}

static void c_free(icm_fileio *io)
{
    (void)io;
}

static const icm_fileio_methods COUNTING_V4 = {.version = 4, .name = "counting",
                                               .remove = c_remove, .stat = c_stat,
                                               .free = c_free, .delete_batch = c_batch};
/* Version 3 ends before delete_batch: poisoned, it must never be read. */
static const icm_fileio_methods COUNTING_V3 = {
    .version = 3, .name = "counting-v3", .remove = c_remove, .stat = c_stat, .free = c_free,
    .delete_batch = (int (*)(icm_fileio *, const char *const *, size_t, result *))(uintptr_t)1};
static const icm_fileio_methods COUNTING_V4_NO_SLOT = {
    .version = 4, .name = "counting-noslot", .remove = c_remove, .stat = c_stat,
    .free = c_free};

static void test_chunks_of_batch_max(void **state)
{
    (void)state;
    counting c = {{&COUNTING_V4}, NULL, 0, {0}, 0, 0};
    icmt_ok(icm_fileio_mem_new(&c.inner));
    char **names = make_names("/w/t", MANY);
    for (size_t i = 0; i < MANY; i++)
        put(c.inner, names[i]);
    result *r = calloc(MANY, sizeof *r);
    assert_non_null(r);
    ICM_FILEIO_DELETE_RESULTS_INIT(r, MANY);
    icmt_ok(icm_fileio_delete_batch(r, &c.base, (const char *const *)names, MANY));
    assert_int_equal(c.calls, 3);
    assert_int_equal(c.sizes[0], 1000);
    assert_int_equal(c.sizes[1], 1000);
    assert_int_equal(c.sizes[2], 500);
    assert_int_equal(c.removes, 0);
    for (size_t i = 0; i < MANY; i++)
        assert_ok_status(&r[i], ICM_FILEIO_DELETED);

    /* invalid items mixed in: they are FAILED in place and the valid ones still go in chunks
     * of at most 1000, each item's result at its own index */
    for (size_t i = 0; i < MANY; i++)
        if (i % 5 != 0)
            put(c.inner, names[i]);
    const char **mixed = calloc(MANY, sizeof *mixed);
    for (size_t i = 0; i < MANY; i++)
        mixed[i] = i % 5 == 0 ? (i % 10 == 0 ? "" : NULL) : names[i];
    c.calls = 0;
    icmt_ok(icm_fileio_delete_batch(r, &c.base, mixed, MANY));
    assert_int_equal(c.calls, 2); /* 2000 valid items */
    assert_int_equal(c.sizes[0], 1000);
    assert_int_equal(c.sizes[1], 1000);
    for (size_t i = 0; i < MANY; i++) {
        if (i % 5 == 0)
            assert_failed(&r[i], ICM_EINVALID, false, "empty location");
        else
            assert_ok_status(&r[i], ICM_FILEIO_DELETED);
    }
    free(mixed);
    free(r);
    free_names(names, MANY);
    icm_fileio_free(c.inner);
}

static void test_whole_call_failure_marks_every_item(void **state)
{
    (void)state;
    counting c = {{&COUNTING_V4}, NULL, 0, {0}, ICM_ENET, 0};
    icmt_ok(icm_fileio_mem_new(&c.inner));
    put(c.inner, "s3://b/x");
    const char *locs[] = {"s3://b/x", "s3://b/y"};
    result r[2];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 2);
    icmt_ok(icm_fileio_delete_batch(r, &c.base, locs, 2));
    assert_failed(&r[0], ICM_ENET, true, "s3://b/x: connection reset");
    assert_failed(&r[1], ICM_ENET, true, "s3://b/y: connection reset");
    assert_true(exists(c.inner, "s3://b/x"));
    c.fail_with = ICM_EAUTH; /* not retryable */
    icmt_ok(icm_fileio_delete_batch(r, &c.base, locs, 2));
    assert_failed(&r[0], ICM_EAUTH, false, "connection reset");
    icm_fileio_free(c.inner);
}

/* ---- back-compat: no slot -------------------------------------------------------------- */

static void check_through_remove(const icm_fileio_methods *m)
{
    counting c = {{m}, NULL, 0, {0}, 0, 0};
    icmt_ok(icm_fileio_mem_new(&c.inner));
    put(c.inner, "/t/a");
    put(c.inner, "/t/b");
    const char *locs[] = {"/t/a", "/t/gone", "", "/t/b"};
    result r[4];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 4);
    icmt_ok(icm_fileio_delete_batch(r, &c.base, locs, 4));
    assert_int_equal(c.calls, 0);
    assert_int_equal(c.removes, 3); /* the empty item reaches no back end */
    assert_ok_status(&r[0], ICM_FILEIO_DELETED);
    assert_ok_status(&r[1], ICM_FILEIO_ALREADY_GONE);
    assert_failed(&r[2], ICM_EINVALID, false, "empty location");
    assert_ok_status(&r[3], ICM_FILEIO_DELETED);
    assert_false(exists(c.inner, "/t/a"));
    assert_false(exists(c.inner, "/t/b"));
    icm_fileio_free(c.inner);
}

static void test_version3_backend_deletes_through_remove(void **state)
{
    (void)state;
    check_through_remove(&COUNTING_V3);
    check_through_remove(&COUNTING_V4_NO_SLOT);
}

/* ---- fault wrapper --------------------------------------------------------------------- */

static void test_fault_items(void **state)
{
    (void)state;
    icm_fileio *mem, *io;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    char **names = make_names("s3://b/t", MANY);
    for (size_t i = 0; i < MANY; i++)
        if (i != 7)
            put(mem, names[i]);
    icm_fileio_fault_fail_span(io, ICM_IO_DELETE, 3, 2, ICM_EAUTH, 0); /* items 2 and 3 */
    result *r = calloc(MANY, sizeof *r);
    assert_non_null(r);
    ICM_FILEIO_DELETE_RESULTS_INIT(r, MANY);
    icmt_ok(icm_fileio_delete_batch(r, io, (const char *const *)names, MANY));
    assert_int_equal(icm_fileio_fault_count(io, ICM_IO_DELETE), MANY);
    for (size_t i = 0; i < MANY; i++) {
        if (i == 2 || i == 3) {
            assert_failed(&r[i], ICM_EAUTH, false, "injected fault: delete");
            assert_non_null(strstr(r[i].message, names[i]));
            assert_true(exists(mem, names[i])); /* a rejected item has no effect */
        } else {
            assert_ok_status(&r[i], i == 7 ? ICM_FILEIO_ALREADY_GONE : ICM_FILEIO_DELETED);
            assert_false(exists(mem, names[i]));
        }
    }

    /* retryable: the item is FAILED and retryable; sending it again deletes it */
    icm_fileio_fault_reset(io);
    icm_fileio_fault_fail_nth_retryable(io, ICM_IO_DELETE, 2, ICM_ETIMEOUT);
    const char *two[] = {names[2], names[3]};
    icmt_ok(icm_fileio_delete_batch(r, io, two, 2));
    assert_ok_status(&r[0], ICM_FILEIO_DELETED);
    assert_failed(&r[1], ICM_ETIMEOUT, true, "(retryable)");
    assert_true(exists(mem, names[3]));
    icmt_ok(icm_fileio_delete_batch(r, io, two + 1, 1));
    assert_ok_status(&r[0], ICM_FILEIO_DELETED);
    assert_false(exists(mem, names[3]));
    free(r);
    free_names(names, MANY);
    icm_fileio_free(io);
}

static void test_fault_crash_mid_batch(void **state)
{
    (void)state;
    icm_fileio *mem, *io;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    char **names = make_names("/w/t", 10);
    for (size_t i = 0; i < 10; i++)
        put(mem, names[i]);
    icm_fileio_fault_reset(io);
    icm_fileio_fault_crash_after(io, 4);
    result r[10];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 10);
    icmt_ok(icm_fileio_delete_batch(r, io, (const char *const *)names, 10));
    assert_true(icm_fileio_fault_crashed(io));
    assert_int_equal(icm_fileio_fault_count(io, ICM_IO_DELETE), 10);
    for (size_t i = 0; i < 10; i++) {
        if (i < 4) {
            assert_ok_status(&r[i], ICM_FILEIO_DELETED);
            assert_false(exists(mem, names[i]));
        } else {
            assert_failed(&r[i], ICM_EIO, false, "injected crash");
            assert_true(exists(mem, names[i]));
        }
    }
    free_names(names, 10);
    icm_fileio_free(io);
}

/* ---- path map ---------------------------------------------------------------------------- */

static void test_pathmap_maps_each_item(void **state)
{
    (void)state;
    icm_fileio *mem, *io;
    icmt_ok(icm_fileio_mem_new(&mem));
    put(mem, "/real/t/a");
    put(mem, "/other/b");
    icm_path_map rule = {"s3://b/t", "/real/t"};
    icmt_ok(icm_fileio_pathmap_new(&io, mem, &rule, 1));
    const char *locs[] = {"s3://b/t/a", "s3://b/t/none", "/other/b"};
    result r[3];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 3);
    icmt_ok(icm_fileio_delete_batch(r, io, locs, 3));
    assert_ok_status(&r[0], ICM_FILEIO_DELETED);
    assert_ok_status(&r[1], ICM_FILEIO_ALREADY_GONE);
    assert_ok_status(&r[2], ICM_FILEIO_DELETED);
    assert_false(exists(mem, "/real/t/a"));
    assert_false(exists(mem, "/other/b"));
    icm_fileio_free(io);
}

/* ---- could not run at all ------------------------------------------------------------------ */

static void test_arguments(void **state)
{
    (void)state;
    const char *locs[] = {"/t/a", "/t/b"};
    result r[2];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 2);
    assert_int_equal(icm_fileio_delete_batch(r, NULL, locs, 2), ICM_EINVALID);
    assert_failed(&r[0], ICM_EINVALID, false, NULL);
    assert_failed(&r[1], ICM_EINVALID, false, NULL);
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    assert_int_equal(icm_fileio_delete_batch(r, io, NULL, 2), ICM_EINVALID);
    assert_failed(&r[1], ICM_EINVALID, false, "NULL locations or results");
    assert_int_equal(icm_fileio_delete_batch(NULL, io, locs, 2), ICM_EINVALID);
    icmt_ok(icm_fileio_delete_batch(NULL, io, NULL, 0)); /* nothing to do */
    icm_fileio_free(io);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    icm_fileio *mem, *io;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    const char *locs[] = {"/t/a", "", "/t/b"};
    result r[3];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 3);
    /* every allocation of the call failed in turn: either it ran (0, each item a result, the
     * objects gone) or it did not run at all (ICM_ENOMEM, every result FAILED, nothing gone) */
    for (long n = 0;; n++) {
        put(mem, "/t/a");
        put(mem, "/t/b");
        icm_fileio_fault_reset(io);
        icmt_nomem_arm(n);
        int rc = icm_fileio_delete_batch(r, io, locs, 3);
        bool injected = icmt_nomem_disarm() > n;
        if (rc == ICM_ENOMEM) {
            assert_true(injected);
            for (int i = 0; i < 3; i++)
                assert_failed(&r[i], ICM_ENOMEM, false, NULL);
            assert_true(exists(mem, "/t/a"));
            assert_true(exists(mem, "/t/b"));
            assert_int_equal(icm_fileio_fault_count(io, ICM_IO_DELETE), 0);
        } else {
            assert_int_equal(rc, 0);
            assert_failed(&r[1], ICM_EINVALID, false, NULL);
            for (int i = 0; i < 3; i += 2) {
                if (r[i].status == ICM_FILEIO_DELETE_FAILED) { /* the back end's own room */
                    assert_true(injected);
                    assert_int_equal(r[i].code, ICM_ENOMEM);
                    assert_true(exists(mem, locs[i]));
                } else {
                    assert_ok_status(&r[i], ICM_FILEIO_DELETED);
                    assert_false(exists(mem, locs[i]));
                }
            }
            if (!injected)
                break;
        }
        const char *both[] = {"/t/a", "/t/b"};
        icmt_ok(icm_fileio_delete_batch(r, mem, both, 2));
    }
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_per_item_outcomes),
        cmocka_unit_test(test_local_many_items),
        cmocka_unit_test(test_mem_per_item_outcomes),
        cmocka_unit_test(test_mem_many_items),
        cmocka_unit_test(test_chunks_of_batch_max),
        cmocka_unit_test(test_whole_call_failure_marks_every_item),
        cmocka_unit_test(test_version3_backend_deletes_through_remove),
        cmocka_unit_test(test_fault_items),
        cmocka_unit_test(test_fault_crash_mid_batch),
        cmocka_unit_test(test_pathmap_maps_each_item),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
