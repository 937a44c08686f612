/*
 * test_expire_alias.c: expiry's second-name rule (maint/expire_alias.c, expire_internal.h) on
 * real folders: a planned file whose real path is a retained reference's real path is kept
 * (through a folder link inside the table, a file link, `..` after a link, a link outside the
 * table); a file no retained reference reaches is not; which references the survey makes it
 * resolve (all of them with a link below a root, else only those not plainly below one); a
 * reference that cannot be resolved keeps every local candidate, a missing one none; object
 * stores are left alone.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maint/expire_internal.h"
#include "testutil.h"

typedef struct place {
    char *dir;  /* temp folder */
    char *root; /* the table location: <dir>/t */
    icm_fileio *io;
} place;

/* <dir>/t/{data/real/{f,g}, data/real/sub/, data/h, metadata/}, <dir>/outside/ */
static int setup(void **state)
{
    place *p = calloc(1, sizeof *p);
    p->dir = icmt_mkdtemp();
    icmt_mkdir_in(p->dir, "t");
    icmt_mkdir_in(p->dir, "t/data");
    icmt_mkdir_in(p->dir, "t/data/real");
    icmt_mkdir_in(p->dir, "t/data/real/sub");
    icmt_mkdir_in(p->dir, "t/metadata");
    icmt_mkdir_in(p->dir, "outside");
    icmt_file_in(p->dir, "t/data/real/f");
    icmt_file_in(p->dir, "t/data/real/g");
    icmt_file_in(p->dir, "t/data/h");
    p->root = icmt_in(p->dir, "t");
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

static bool wants(const icm__expire_alias *a, const char *loc)
{
    return icm__expire_alias_wants(a, loc, strlen(loc));
}

static void note(icm__expire_alias *a, const place *p, const char *rel)
{
    char *loc = icmt_in(p->dir, rel);
    assert_int_equal(icm__expire_alias_note(a, loc), 0);
    free(loc);
}

/* Check the planned files `rels` (relative to the temp folder; "s3:" ones as they are) and
 * compare kept[] with `want`; returns the result (problems) for the caller to look at. */
static icm_expire_result *check(icm__expire_alias *a, const place *p, const char *const *rels,
                                const bool *want, size_t n)
{
    icm_expire_result *r = NULL;
    assert_int_equal(icm__expire_result_new(&r), 0);
    icm_expire_file *files = calloc(n, sizeof *files);
    bool *kept = calloc(n, sizeof *kept);
    for (size_t i = 0; i < n; i++)
        files[i].path = strncmp(rels[i], "s3:", 3) == 0 ? strdup(rels[i]) : icmt_in(p->dir, rels[i]);
    assert_int_equal(icm__expire_alias_check(a, files, n, kept, r), 0);
    for (size_t i = 0; i < n; i++) {
        if (kept[i] != want[i])
            print_error("%s: kept %d, want %d\n", files[i].path, kept[i], want[i]);
        assert_int_equal(kept[i], want[i]);
        free(files[i].path);
    }
    free(files);
    free(kept);
    return r;
}

/* No link in the table: only references not plainly below the root are resolved, and one
 * outside the table that leads into it through a link keeps the file it leads to. */
static void test_no_link_in_table_resolves_only_other_names(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "../t/data/real", "outside/in");
    const char *roots[] = {p->root, "s3://bucket/elsewhere"};
    icm__expire_alias a;
    assert_int_equal(icm__expire_alias_init(&a, p->io, roots, 2), 0);
    assert_true(a.active);
    assert_false(a.links);
    char *plain = icmt_in(p->dir, "t/data/real/f"), *file_uri = icmt_sprintf("file://%s", plain);
    char *dots = icmt_in(p->dir, "t/data/real/./f"), *up = icmt_in(p->dir, "t/data/../../outside/in/f");
    char *out = icmt_in(p->dir, "outside/in/f"), *up_name = icmt_in(p->dir, "t/data/..");
    assert_false(wants(&a, plain));
    assert_false(wants(&a, dots));             /* `.` leads nowhere else */
    assert_true(wants(&a, up));                /* `..` may leave the table */
    assert_true(wants(&a, up_name));
    assert_true(wants(&a, out));               /* outside the table */
    assert_true(wants(&a, file_uri));          /* another spelling: resolved to be sure */
    assert_false(wants(&a, "s3://bucket/elsewhere/x"));
    assert_false(wants(&a, "s3://other/x"));   /* object stores have no links */

    /* nothing noted: nothing resolved, nothing kept */
    const char *rels[] = {"t/data/real/f", "t/data/real/g"};
    const bool none[] = {false, false};
    icm_expire_result_free(check(&a, p, rels, none, 2));

    note(&a, p, "t/data/real/f"); /* plainly below: not noted */
    assert_int_equal(a.n_noted, 0);
    note(&a, p, "outside/in/f");
    note(&a, p, "outside/in/f"); /* once */
    assert_int_equal(a.n_noted, 1);
    const char *cands[] = {"t/data/real/f", "t/data/real/g", "s3://bucket/elsewhere/f"};
    const bool want[] = {true, false, false};
    icm_expire_result *r = check(&a, p, cands, want, 3);
    assert_int_equal(r->problem_count, 1);
    assert_int_equal(r->problems[0].kind, ICM_EXPIRE_PROBLEM_THROUGH_LINK);
    assert_string_equal(r->problems[0].location, plain);
    assert_non_null(strstr(r->problems[0].message, out)); /* names the other name */
    icm_expire_result_free(r);
    icm__expire_alias_dispose(&a);
    free(plain);
    free(file_uri);
    free(dots);
    free(up);
    free(out);
    free(up_name);
}

/* A link below the root: every local reference is resolved; folder links, `..` after a link,
 * a folder link higher up and a file link each keep the file they reach, and only it. */
static void test_links_in_table_resolve_every_reference(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "real", "t/data/lnk");          /* data/lnk/f is data/real/f */
    icmt_symlink_in(p->dir, "real/sub", "t/data/down");     /* data/down/../g is data/real/g */
    icmt_symlink_in(p->dir, "data", "t/d2");                /* t/d2/h is data/h */
    icm__expire_alias a;
    const char *roots[] = {p->root};
    assert_int_equal(icm__expire_alias_init(&a, p->io, roots, 1), 0);
    assert_true(a.links);
    char *plain = icmt_in(p->dir, "t/data/real/f");
    assert_true(wants(&a, plain));
    assert_false(wants(&a, "s3://bucket/t/x"));
    free(plain);

    const char *rels[] = {"t/data/real/f", "t/data/real/g", "t/data/h"};
    const bool none[] = {false, false, false};
    note(&a, p, "t/metadata/absent.avro"); /* missing: aliases nothing */
    icm_expire_result_free(check(&a, p, rels, none, 3));

    note(&a, p, "t/data/lnk/f");
    const bool f_only[] = {true, false, false};
    icm_expire_result_free(check(&a, p, rels, f_only, 3));
    note(&a, p, "t/data/down/../g");
    note(&a, p, "t/d2/h");
    const bool all[] = {true, true, true};
    icm_expire_result *r = check(&a, p, rels, all, 3);
    assert_int_equal(r->problem_count, 3);
    icm_expire_result_free(r);
    icm__expire_alias_dispose(&a);

    /* the mirror: the planned name goes through the link, the retained one is direct */
    assert_int_equal(icm__expire_alias_init(&a, p->io, roots, 1), 0);
    note(&a, p, "t/data/real/f");
    const char *mirror[] = {"t/data/lnk/f", "t/data/lnk/g"};
    const bool first[] = {true, false};
    icm_expire_result_free(check(&a, p, mirror, first, 2));
    icm__expire_alias_dispose(&a);
}

static void test_file_link_keeps_its_target(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "real/g", "t/data/a"); /* data/a reads data/real/g */
    icm__expire_alias a;
    const char *roots[] = {p->root};
    assert_int_equal(icm__expire_alias_init(&a, p->io, roots, 1), 0);
    assert_true(a.links);
    note(&a, p, "t/data/a");
    const char *rels[] = {"t/data/real/f", "t/data/real/g"};
    const bool want[] = {false, true};
    icm_expire_result_free(check(&a, p, rels, want, 2));
    icm__expire_alias_dispose(&a);
}

/* A reference whose real path cannot be told (a link loop) may be any file: every local
 * candidate stays; object-store ones are not looked at. */
static void test_unresolvable_reference_keeps_every_local_candidate(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "loop", "t/data/loop");
    icm__expire_alias a;
    const char *roots[] = {p->root};
    assert_int_equal(icm__expire_alias_init(&a, p->io, roots, 1), 0);
    note(&a, p, "t/data/loop/x");
    const char *rels[] = {"t/data/real/f", "t/data/h", "s3://bucket/t/x"};
    const bool want[] = {true, true, false};
    icm_expire_result *r = check(&a, p, rels, want, 3);
    assert_int_equal(r->problem_count, 2);
    assert_non_null(strstr(r->problems[0].message, "cannot be told"));
    icm_expire_result_free(r);
    icm__expire_alias_dispose(&a);
}

/* The survey: a missing root holds no link; a root reached through a link is fine alone, and
 * with a root nested in it alike by name and by where it is; but two local roots whose names
 * do not nest as the places do (one reached through a link) make every reference resolved.
 * Object stores only: inactive. */
static void test_survey_of_roots(void **state)
{
    place *p = *state;
    icmt_symlink_in(p->dir, "t", "wh");
    char *linked = icmt_in(p->dir, "wh"), *missing = icmt_in(p->dir, "nothing-here"), *data = icmt_in(p->dir, "t/data");
    icm__expire_alias a;
    const char *one[] = {linked};
    assert_int_equal(icm__expire_alias_init(&a, p->io, one, 1), 0);
    assert_true(a.active);
    assert_false(a.links);
    icm__expire_alias_dispose(&a);
    const char *gone[] = {missing};
    assert_int_equal(icm__expire_alias_init(&a, p->io, gone, 1), 0);
    assert_false(a.links);
    icm__expire_alias_dispose(&a);
    const char *two[] = {linked, data};
    assert_int_equal(icm__expire_alias_init(&a, p->io, two, 2), 0);
    assert_true(a.links);
    icm__expire_alias_dispose(&a);
    /* nested alike by name and where they are: names below either say where a file is */
    char *linked_data = icmt_in(p->dir, "wh/data");
    const char *nested[] = {linked, linked_data};
    assert_int_equal(icm__expire_alias_init(&a, p->io, nested, 2), 0);
    assert_false(a.links);
    icm__expire_alias_dispose(&a);
    free(linked_data);
    const char *stores[] = {"s3://bucket/t", "gs://b/t"};
    assert_int_equal(icm__expire_alias_init(&a, p->io, stores, 2), 0);
    assert_false(a.active);
    assert_false(wants(&a, "/any/local/path"));
    const char *rels[] = {"t/data/real/f"};
    const bool none[] = {false};
    icm_expire_result_free(check(&a, p, rels, none, 1));
    icm__expire_alias_dispose(&a);
    free(linked);
    free(missing);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_link_in_table_resolves_only_other_names, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_links_in_table_resolve_every_reference, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_file_link_keeps_its_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unresolvable_reference_keeps_every_local_candidate,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_survey_of_roots, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
