/*
 * test_link_survey.c: the survey of a table's roots for symbolic links (maint/link_survey.h),
 * shared by expiry and the orphan sweep, on real folders: no link below the roots is plain
 * mode; a file link or a folder link at any depth below a root is link mode; a root reached
 * through a link alone is not (the listing follows the root); object-store roots make the
 * survey inactive; a root spelled as a URI keeps its file system path apart.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maint/link_survey.h"
#include "testutil.h"

typedef struct place {
    char *dir;  /* temp folder */
    icm_fileio *io;
} place;

/* <dir>/t/{data/a/b/c/f, metadata/}, <dir>/outside/ */
static int setup(void **state)
{
    place *p = calloc(1, sizeof *p);
    p->dir = icmt_mkdtemp();
    icmt_mkdir_in(p->dir, "t");
    icmt_mkdir_in(p->dir, "t/data");
    icmt_mkdir_in(p->dir, "t/data/a");
    icmt_mkdir_in(p->dir, "t/data/a/b");
    icmt_mkdir_in(p->dir, "t/data/a/b/c");
    icmt_mkdir_in(p->dir, "t/metadata");
    icmt_mkdir_in(p->dir, "outside");
    char *f = icmt_in(p->dir, "t/data/a/b/c/f");
    icmt_write_file(f, "x", 1);
    free(f);
    assert_int_equal(icm_fileio_local_new(&p->io), 0);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    place *p = *state;
    icm_fileio_free(p->io);
    icmt_rmtree(p->dir);
    free(p->dir);
    free(p);
    return 0;
}

/* Survey the one root `rel` (relative to the temp folder; `uri`: as a file:// URI). */
static icm__link_survey survey(const place *p, const char *rel, bool uri)
{
    char *path = icmt_in(p->dir, rel);
    char *root = uri ? icmt_sprintf("file://%s", path) : strdup(path);
    const char *roots[] = {root};
    icm__link_survey s;
    assert_int_equal(icm__link_survey_init(&s, p->io, roots, 1), 0);
    free(root);
    free(path);
    return s;
}

static void test_no_link_is_plain(void **state)
{
    place *p = *state;
    icm__link_survey s = survey(p, "t", false);
    assert_true(s.active);
    assert_false(s.links);
    assert_false(s.mapped);
    assert_int_equal(s.n_roots, 1);
    icm__link_survey_dispose(&s);
    /* a link beside the table, not below it, changes nothing */
    icmt_symlink_in(p->dir, "t/data", "outside/in");
    s = survey(p, "t", true);
    assert_true(s.active);
    assert_false(s.links);
    char *path = icmt_in(p->dir, "t");
    assert_string_equal(s.root_path[0], path); /* the URI's file system path */
    assert_int_equal(s.root_path_len[0], strlen(path));
    free(path);
    icm__link_survey_dispose(&s);
}

static void test_file_link_deep_below_is_link_mode(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "f", "t/data/a/b/c/g");
    icm__link_survey s = survey(p, "t", false);
    assert_true(s.links);
    icm__link_survey_dispose(&s);
    /* surveyed from a root below the link's folder's parent too */
    s = survey(p, "t/data/a", false);
    assert_true(s.links);
    icm__link_survey_dispose(&s);
    /* but not from a root beside it */
    s = survey(p, "t/metadata", false);
    assert_false(s.links);
    icm__link_survey_dispose(&s);
}

static void test_folder_link_higher_up_is_link_mode(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "data", "t/d2");
    icm__link_survey s = survey(p, "t", false);
    assert_true(s.links);
    icm__link_survey_dispose(&s);
    /* the roots below it do not see it */
    s = survey(p, "t/data", false);
    assert_false(s.links);
    icm__link_survey_dispose(&s);
}

static void test_root_reached_through_a_link_is_plain(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "../t", "outside/t2");
    icm__link_survey s = survey(p, "outside/t2", false);
    assert_true(s.active);
    assert_false(s.links);
    icm__link_survey_dispose(&s);
}

static void test_object_stores_are_inactive(void **state)
{
    place *p = *state;
    const char *roots[] = {"s3://bucket/t", "gs://b/t/data"};
    icm__link_survey s;
    assert_int_equal(icm__link_survey_init(&s, p->io, roots, 2), 0);
    assert_false(s.active);
    assert_false(s.links);
    assert_int_equal(s.n_roots, 0);
    icm__link_survey_dispose(&s);
    assert_int_equal(icm__link_survey_on_local_disk(p->io, "s3://bucket/t/f"), 0);
    assert_int_equal(icm__link_survey_on_local_disk(p->io, "file:///x/f"), 1);
    assert_int_equal(icm__link_survey_on_local_disk(p->io, "/x/f"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_link_is_plain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_link_deep_below_is_link_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folder_link_higher_up_is_link_mode, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_root_reached_through_a_link_is_plain, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_object_stores_are_inactive, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
