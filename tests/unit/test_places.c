/*
 * test_places.c: where a place really is (maint/places.h) on real folders with symbolic links:
 * a place through a link and one with `..` resolve to the folder they name; a missing tail is
 * appended to where its longest existing prefix really is (its `..` by name); an object-store
 * location is compared by name (NULL, 0); a resolve that fails for another reason than "missing"
 * is an error (and icm__other_places_init records it as `unresolved`); another table's places
 * are its pointer, its roots (the legacy data paths too) and its default data/metadata folders.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maint/places.h"
#include "testutil.h"

typedef struct env {
    char *dir; /* <dir>/w/a/bdata, <dir>/l -> <dir>/w */
    icm_fileio *io;
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    e->dir = icmt_mkdtemp();
    const char *dirs[] = {"w", "w/a", "w/a/bdata"};
    for (size_t i = 0; i < 3; i++) {
        char *d = icmt_sprintf("%s/%s", e->dir, dirs[i]);
        assert_int_equal(mkdir(d, 0755), 0);
        free(d);
    }
    char *w = icmt_sprintf("%s/w", e->dir), *l = icmt_sprintf("%s/l", e->dir);
    assert_int_equal(symlink(w, l), 0);
    free(w);
    free(l);
    assert_int_equal(icm_fileio_local_new(&e->io), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    icm_fileio_free(e->io);
    icmt_rmtree(e->dir);
    free(e->dir);
    free(e);
    return 0;
}

/* icm__place_real of `spelled` (its '@' the temp folder) must be <dir>/`want` (NULL: none). */
static void expect_real(const env *e, const char *spelled, const char *want)
{
    const char *at = strchr(spelled, '@');
    char *loc = at != NULL ? icmt_sprintf("%.*s%s%s", (int)(at - spelled), spelled, e->dir, at + 1)
                           : icmt_sprintf("%s", spelled);
    char *real = NULL;
    assert_int_equal(icm__place_real(e->io, loc, &real), 0);
    if (want == NULL) {
        assert_null(real);
    } else {
        char *w = icmt_sprintf("%s/%s", e->dir, want), *rw = realpath(e->dir, NULL);
        char *expected = icmt_sprintf("%s%s", rw, w + strlen(e->dir));
        assert_non_null(real);
        assert_string_equal(real, expected);
        free(w);
        free(rw);
        free(expected);
    }
    free(loc);
    icm_free(real);
}

static void test_links_dots_and_missing_tails(void **state)
{
    env *e = *state;
    expect_real(e, "@/l/a/bdata", "w/a/bdata");
    expect_real(e, "file://@/l/a/bdata/", "w/a/bdata");
    expect_real(e, "@/w/a/x/../bdata", "w/a/bdata");      /* x missing: `..` by name */
    expect_real(e, "@/w/a/bdata/../bdata", "w/a/bdata");  /* all there: the kernel's `..` */
    expect_real(e, "@/l/a/new/deeper", "w/a/new/deeper"); /* missing tail below the link */
    expect_real(e, "@/l/a/x/../../a/y", "w/a/y");
    expect_real(e, "s3://bucket/w/a", NULL);                /* no such place on local disk */
    char *real = NULL;
    assert_int_equal(icm__place_real(e->io, "relative/a", &real), 0);
    assert_null(real);
}

static void test_within_by_name_or_identity(void **state)
{
    (void)state;
    assert_true(icm__place_within("/w/a/b", NULL, "/w/a", NULL, false, NULL));
    assert_true(icm__place_within("/w/a", NULL, "file:///w/a/", NULL, false, NULL));
    assert_false(icm__place_within("/w/a", NULL, "/w/a", NULL, true, NULL));
    assert_false(icm__place_within("/l/a/b", NULL, "/w/a", NULL, false, NULL));
    assert_true(icm__place_within("/l/a/b", "/w/a/b", "/w/a", "/w/a", false, NULL));
    assert_false(icm__place_within("/l/a/b", "/w/x/b", "/w/a", "/w/a", false, NULL));
    assert_false(icm__place_within("/w/a/x/../b", NULL, "/w/a/b", NULL, false, NULL));
}

static void test_other_table_places(void **state)
{
    env *e = *state;
    char *loc = icmt_sprintf("file://%s/l/t", e->dir);
    char *fsp = icmt_sprintf("%s/l/a/bdata", e->dir);
    icm__other_table t = {"c", "ns", "t", NULL, "file:///nowhere/t/metadata/v1.metadata.json",
                          {loc, NULL, NULL, NULL, fsp}, NULL, 0, false, NULL, 0, NULL};
    icm__other_places ps;
    assert_int_equal(icm__other_places_init(&ps, e->io, &t), 0);
    /* pointer, location, write.folder-storage.path, data/, metadata/ */
    assert_int_equal(ps.n, 5);
    assert_true(ps.p[0].file && !ps.p[0].written);
    assert_true(!ps.p[1].file && !ps.p[1].written);
    assert_string_equal(ps.p[2].what, "write.folder-storage.path");
    assert_true(ps.p[2].written);
    char *real_w = realpath(e->dir, NULL);
    char *want = icmt_sprintf("%s/w/a/bdata", real_w);
    assert_string_equal(ps.p[2].real, want);
    free(want);
    want = icmt_sprintf("%s/w/t/data", real_w);
    assert_true(ps.p[3].written);
    assert_string_equal(ps.p[3].real, want);
    free(want);
    for (size_t i = 0; i < ps.n; i++)
        assert_null(ps.p[i].unresolved);
    icm__other_places_dispose(&ps);
    free(real_w);
    free(loc);
    free(fsp);
}

/* A resolve that fails (not "missing") cannot tell where a place is: an error, recorded. */
static void test_resolve_failure_is_not_a_place(void **state)
{
    env *e = *state;
    icm_fileio *fault = NULL, *inner = NULL;
    assert_int_equal(icm_fileio_local_new(&inner), 0);
    assert_int_equal(icm_fileio_fault_new(&fault, inner), 0);
    char *loc = icmt_sprintf("%s/l/a/bdata", e->dir), *real = NULL;
    icm_fileio_fault_fail_nth(fault, ICM_IO_STAT, 1, ICM_EIO);
    assert_int_equal(icm__place_real(fault, loc, &real), ICM_EIO);
    assert_null(real);
    icm_error_clear();
    icm__other_table t = {"c", "ns", "t", NULL, NULL, {loc, NULL, NULL, NULL, NULL}, NULL, 0,
                          false, NULL, 0, NULL};
    icm__other_places ps;
    icm_fileio_fault_fail_nth(fault, ICM_IO_STAT, 1, ICM_EIO);
    assert_int_equal(icm__other_places_init(&ps, fault, &t), 0);
    assert_int_equal(ps.n, 3);
    assert_non_null(ps.p[0].unresolved);
    assert_null(ps.p[0].real);
    assert_null(ps.p[1].unresolved);
    icm__other_places_dispose(&ps);
    icm_fileio_free(fault);
    free(loc);
}

/* A table whose metadata could not be read: one more place, "data", that cannot be told
 * (its location when known, else its metadata file). */
static void test_unreadable_table_is_a_place_that_cannot_be_told(void **state)
{
    env *e = *state;
    char *loc = icmt_sprintf("%s/w/t", e->dir);
    const char *why = "its metadata file /x/metadata/v1.metadata.json is not table metadata";
    icm__other_table t = {"c", "ns", "t", NULL, "/x/metadata/v1.metadata.json",
                          {loc, NULL, NULL, NULL, NULL}, NULL, ICM_EINVALID, false, NULL, 0, why};
    icm__other_places ps;
    assert_int_equal(icm__other_places_init(&ps, e->io, &t), 0);
    /* pointer, location, data/, metadata/, and the place that cannot be told */
    assert_int_equal(ps.n, 5);
    assert_string_equal(ps.p[4].what, "data");
    assert_string_equal(ps.p[4].name, loc);
    assert_false(ps.p[4].file);
    assert_string_equal(ps.p[4].unresolved, why);
    for (size_t i = 0; i < 4; i++)
        assert_null(ps.p[i].unresolved);
    icm__other_places_dispose(&ps);
    t.roots[0] = NULL;
    assert_int_equal(icm__other_places_init(&ps, e->io, &t), 0);
    assert_int_equal(ps.n, 2);
    assert_string_equal(ps.p[1].name, t.pointer);
    assert_true(ps.p[1].file);
    assert_string_equal(ps.p[1].unresolved, why);
    icm__other_places_dispose(&ps);
    free(loc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_links_dots_and_missing_tails, setup, teardown),
        cmocka_unit_test(test_within_by_name_or_identity),
        cmocka_unit_test_setup_teardown(test_other_table_places, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_failure_is_not_a_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_table_is_a_place_that_cannot_be_told,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
