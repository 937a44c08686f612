/*
 * test_link_guard.c: the delete phases' last check (maint/link_guard.h) on real folders with
 * symbolic links: a root reached through a link passes; a folder below the root that is a link
 * (to a folder of the table itself, or out of it) is refused; a missing folder is "gone"; a
 * write.data.path that is itself a link is a root of its own; object-store locations pass; the
 * per-folder cache gives each file of a folder the folder's verdict; the planner's memo
 * (icm__link_guard_check_memo) gives the same answers and messages in any order, and a folder
 * swapped for a link after the memo judged it is still refused by the delete-time check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maint/link_guard.h"
#include "testutil.h"

typedef struct place {
    char *dir;     /* temp folder */
    char *root;    /* the table root as named: <dir>/wh/t, wh -> real (a linked warehouse) */
    icm_fileio *io;
} place;

/* A symbolic link at `rel` to `target_rel`, both below the temp folder (an absolute link). */
static void link_at(const place *p, const char *target_rel, const char *rel)
{
    char *target = icmt_in(p->dir, target_rel);
    icmt_symlink_in(p->dir, target, rel);
    free(target);
}

/* <dir>/real/t/{data/x, data/sub/y, data/alias -> real/t/data, data/out -> outside,
 * wdp -> elsewhere}, <dir>/wh -> <dir>/real, <dir>/outside/o, <dir>/elsewhere/z. */
static int setup(void **state)
{
    place *p = calloc(1, sizeof *p);
    p->dir = icmt_mkdtemp();
    icmt_mkdir_in(p->dir, "real");
    icmt_mkdir_in(p->dir, "real/t");
    icmt_mkdir_in(p->dir, "real/t/data");
    icmt_mkdir_in(p->dir, "real/t/data/sub");
    icmt_mkdir_in(p->dir, "outside");
    icmt_mkdir_in(p->dir, "elsewhere");
    icmt_file_in(p->dir, "real/t/data/x");
    icmt_file_in(p->dir, "real/t/data/sub/y");
    icmt_file_in(p->dir, "outside/o");
    icmt_file_in(p->dir, "elsewhere/z");
    link_at(p, "real/t/data", "real/t/data/alias");
    link_at(p, "outside", "real/t/data/out");
    link_at(p, "elsewhere", "real/t/wdp");
    link_at(p, "real", "wh");
    p->root = icmt_in(p->dir, "wh/t");
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
    free(p->root);
    free(p);
    return 0;
}

/* The guard's verdict on `rel` below the root (a fresh cache each time). */
static int verdict(const icm__link_guard *g, const place *p, const char *rel)
{
    icm__link_cache c = {0};
    char *loc = icmt_sprintf("%s/%s", p->root, rel);
    int rc = icm__link_guard_check(g, &c, loc);
    free(loc);
    icm__link_cache_dispose(&c);
    return rc;
}

static void test_links_below_root_are_refused(void **state)
{
    place *p = *state;
    const char *roots[] = {p->root};
    icm__link_guard g;
    assert_int_equal(icm__link_guard_init(&g, p->io, roots, 1), 0);
    assert_int_equal(verdict(&g, p, "data/x"), 0);          /* root through a link: fine */
    assert_int_equal(verdict(&g, p, "data/sub/y"), 0);
    assert_int_equal(verdict(&g, p, "data/alias/x"), ICM_EREFUSED); /* second name */
    assert_non_null(strstr(icm_error_last()->message, "symbolic link"));
    assert_int_equal(verdict(&g, p, "data/alias/sub/y"), ICM_EREFUSED);
    assert_int_equal(verdict(&g, p, "data/out/o"), ICM_EREFUSED);   /* out of the table */
    assert_int_equal(verdict(&g, p, "data/gone/x"), ICM_ENOTFOUND); /* folder missing */
    assert_int_equal(verdict(&g, p, "wdp/z"), ICM_EREFUSED);  /* not a root here */
    icm__link_guard_dispose(&g);
}

static void test_spellings_and_other_roots(void **state)
{
    place *p = *state;
    char *wdp = icmt_sprintf("%s/wdp", p->root);
    char *file_root = icmt_sprintf("file://%s", p->root);
    const char *roots[] = {file_root, wdp, "s3://bucket/t"};
    icm__link_guard g;
    assert_int_equal(icm__link_guard_init(&g, p->io, roots, 3), 0);
    icm__link_cache c = {0};
    char *loc = icmt_sprintf("file:%s/data/x", p->root);
    assert_int_equal(icm__link_guard_check(&g, &c, loc), 0);
    free(loc);
    /* write.data.path is a root of its own: it may be reached through a link */
    loc = icmt_sprintf("%s/z", wdp);
    assert_int_equal(icm__link_guard_check(&g, &c, loc), 0);
    free(loc);
    assert_int_equal(icm__link_guard_check(&g, &c, "s3://bucket/t/data/alias/x"), 0);
    char *outside = icmt_in(p->dir, "outside/o");
    assert_int_equal(icm__link_guard_check(&g, &c, outside), ICM_EREFUSED);
    free(outside);
    icm__link_cache_dispose(&c);
    icm__link_guard_dispose(&g);
    free(file_root);
    free(wdp);
}

/* Files come in folder runs: the folder's verdict is reused, and a new folder is judged anew. */
static void test_cache_follows_folder_runs(void **state)
{
    place *p = *state;
    const char *roots[] = {p->root};
    icm__link_guard g;
    assert_int_equal(icm__link_guard_init(&g, p->io, roots, 1), 0);
    icm__link_cache c = {0};
    const char *rels[] = {"data/alias/a", "data/alias/b", "data/x", "data/y", "data/out/o",
                          "data/sub/y"};
    const int want[] = {ICM_EREFUSED, ICM_EREFUSED, 0, 0, ICM_EREFUSED, 0};
    for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
        char *loc = icmt_sprintf("%s/%s", p->root, rels[i]);
        assert_int_equal(icm__link_guard_check(&g, &c, loc), want[i]);
        free(loc);
    }
    icm__link_cache_dispose(&c);
    icm__link_guard_dispose(&g);
}

/* Files out of folder order through the memo: each answer and message is the one-folder
 * cache's (a fresh cache per file). */
static void test_memo_answers_as_the_check(void **state)
{
    place *p = *state;
    const char *roots[] = {p->root};
    icm__link_guard g;
    assert_int_equal(icm__link_guard_init(&g, p->io, roots, 1), 0);
    icm__link_memo m = {0};
    const char *rels[] = {"data/alias/a", "data/x", "data/out/o", "data/alias/b", "data/y",
                          "data/gone/x", "data/sub/y", "data/out/p", "data/gone/y", "wdp/z"};
    for (size_t round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
            char *loc = icmt_sprintf("%s/%s", p->root, rels[i]);
            int want = verdict(&g, p, rels[i]);
            char *want_msg = icmt_sprintf("%s", icm_error_last()->message);
            icm_error_clear();
            assert_int_equal(icm__link_guard_check_memo(&g, &m, loc), want);
            if (want != 0)
                assert_string_equal(icm_error_last()->message, want_msg);
            free(want_msg);
            free(loc);
        }
    }
    assert_int_equal(icm__strset_count(&m.dirs), 6); /* each folder judged once */
    icm__link_memo_dispose(&m);
    icm__link_guard_dispose(&g);
}

/* The memo is the plan's report: a folder swapped for a link after it judged the folder is
 * still refused by the check the delete phase makes right before the delete (a fresh
 * one-folder cache), which the memo never replaces. */
static void test_folder_swapped_after_planning_caught_at_delete(void **state)
{
    place *p = *state;
    const char *roots[] = {p->root};
    icm__link_guard g;
    assert_int_equal(icm__link_guard_init(&g, p->io, roots, 1), 0);
    icm__link_memo m = {0};
    char *loc = icmt_sprintf("%s/data/sub/y", p->root);
    assert_int_equal(icm__link_guard_check_memo(&g, &m, loc), 0);
    /* data/sub becomes a link to the folder outside the table */
    char *sub = icmt_in(p->dir, "real/t/data/sub");
    char *moved = icmt_in(p->dir, "real/t/data/sub-moved");
    assert_int_equal(rename(sub, moved), 0);
    link_at(p, "outside", "real/t/data/sub");
    assert_int_equal(verdict(&g, p, "data/sub/y"), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "symbolic link"));
    free(moved);
    free(sub);
    free(loc);
    icm__link_memo_dispose(&m);
    icm__link_guard_dispose(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_links_below_root_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spellings_and_other_roots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_follows_folder_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memo_answers_as_the_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folder_swapped_after_planning_caught_at_delete,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
