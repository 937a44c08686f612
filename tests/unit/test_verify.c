/*
 * tests/unit/test_verify.c: verification before deleting (expire.h "Verification"; data-loss class
 * "corruption that becomes permanent") and the integrity check (icemaint/check.h), on tables
 * the history helper writes into the in-memory FileIO.
 *
 *  1. Statically: verify.c, expire_verify.c, check.c, verify_twins.c, verify_footer.c and
 *     orphans_twins.c reference no FileIO call that deletes, creates or writes (nm on the
 *     library archive), while verify.c does stat, verify_twins.c read and orphans_twins.c
 *     read footers (the check sees the symbols at all).
 *  2. Expiry: a retained data file that is missing (what a misnamed entry in a damaged
 *     manifest looks like) makes the expiry refuse after its commit and delete nothing, with
 *     the file and the snapshot named; a dry run reports the same; no_verify deletes as
 *     before; a version-1 options struct (which has no no_verify) verifies.
 *  3. check: a missing data file, a truncated manifest (wrong size, unreadable) and a statistics
 *     file of the wrong size are found in exactly the snapshots that need them; a clean table
 *     has none; an unknown snapshot id is an error.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history.h"
#include "icemaint/check.h"
#include "icemaint/expire.h"
#include "testutil.h"

#define LOC "/wh/t"
#define T0 INT64_C(1700000000000)

/* ---- 1. nm ---- */

static void test_verification_and_check_cannot_delete(void **state)
{
    (void)state;
    char *a = icmt_library_archive();
    static const char *const forbidden[] = {"icm_fileio_delete", "icm_fileio_create_new",
                                            "icm_fileio_write_replace",
                                            "icm_fileio_delete_existing",
                                            "icm_fileio_delete_batch", "icm__delete_run", NULL};
    static const char *const readers[] = {"/verify.c.o", "expire_verify.c.o", "/check.c.o",
                                          "verify_twins.c.o", "verify_footer.c.o",
                                          "orphans_twins.c.o", NULL};
    for (size_t m = 0; readers[m] != NULL; m++) {
        for (size_t s = 0; forbidden[s] != NULL; s++) {
            bool seen;
            bool refs = icmt_archive_member_references(a, readers[m] + (readers[m][0] == '/'), forbidden[s],
                                          &seen);
            assert_true(seen);
            if (refs)
                print_error("%s references %s\n", readers[m], forbidden[s]);
            assert_false(refs);
        }
    }
    bool seen;
    assert_true(icmt_archive_member_references(a, "verify.c.o", "icm_fileio_stat", &seen));
    assert_true(
        icmt_archive_member_references(a, "verify_twins.c.o", "icm_fileio_read_range", &seen));
    assert_true(icmt_archive_member_references(a, "orphans_twins.c.o",
                                               "icm__parquet_read_stats", &seen));
    assert_true(icmt_archive_member_references(a, "expire.c.o", "icm__delete_run", &seen));
    assert_true(
        icmt_archive_member_references(a, "delete_engine.c.o", "icm_fileio_delete_batch", &seen));
    free(a);
}

/* ---- 2. expiry ---- */

static bool exists(icm_fileio *io, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, path);
    assert_true(rc == 0 || rc == ICM_ENOTFOUND);
    return rc == 0;
}

/* S1 appends A, S2 deletes it, S3 appends B (merge append: S3's one manifest lists only B).
 * Expiring S1 and S2 plans A, its manifests and their lists; B (live in S3) is then lost from
 * storage. */
typedef struct scene {
    icm_fileio *mem, *fault;
    hist *h;
    int64_t s3;
    char *a, *b;
    char **before; /* every file the model's snapshots reach, before the expiry */
} scene;

static void scene_new(scene *sc)
{
    memset(sc, 0, sizeof *sc);
    icmt_ok(icm_fileio_mem_new(&sc->mem));
    icmt_ok(icm_fileio_fault_new(&sc->fault, sc->mem));
    sc->h = hist_new(sc->fault, LOC, 2, false, T0);
    hist_set_merge_append(sc->h, true);
    hist_append(sc->h, "main", "A", NULL);
    hist_delete(sc->h, "main", "A", NULL);
    sc->s3 = hist_append(sc->h, "main", "B", NULL);
    sc->a = hist_data_path(sc->h, "A");
    sc->b = hist_data_path(sc->h, "B");
    sc->before = hist_reachable(sc->h, NULL, 0);
}

static void scene_free(scene *sc)
{
    hist_strv_free(sc->before);
    free(sc->a);
    free(sc->b);
    hist_free(sc->h);
    icm_fileio_free(sc->fault);
}

static icm_expire_options expire_all_but_last(scene *sc)
{
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(sc->h);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = hist_time(sc->h);
    return o;
}

static void assert_refused_naming_b(scene *sc, const icm_expire_result *r)
{
    assert_int_equal(r->missing_count, 1);
    assert_int_equal(r->total, 0);
    assert_int_equal(r->deleted_file_count + r->deleted_manifest_count +
                         r->deleted_statistics_file_count + r->deleted_checksum_file_count,
                     0);
    size_t named = 0;
    for (size_t i = 0; i < r->problem_count; i++) {
        if (r->problems[i].kind != ICM_EXPIRE_PROBLEM_MISSING)
            continue;
        named++;
        assert_string_equal(r->problems[i].location, sc->b);
        char *snap = icmt_sprintf("snapshot %lld", (long long)sc->s3);
        assert_non_null(strstr(r->problems[i].message, snap));
        free(snap);
    }
    assert_int_equal(named, 1);
    const icm_error *e = icm_error_last();
    assert_int_equal(e->code, ICM_EREFUSED);
    assert_non_null(strstr(e->message, sc->b));
}

static void test_expiry_refuses_when_a_retained_file_is_missing(void **state)
{
    (void)state;
    for (int dry = 0; dry < 2; dry++) {
        scene sc;
        scene_new(&sc);
        icmt_ok(icm_fileio_delete(sc.mem, sc.b));
        icm_fileio_fault_reset(sc.fault);
        icm_expire_options o = expire_all_but_last(&sc);
        o.dry_run = dry == 1;
        icm_table *t = hist_open_table(sc.h);
        icm_expire_result *r = NULL;
        assert_int_equal(icm_expire_snapshots(&r, t, &o), ICM_EREFUSED);
        assert_non_null(r);
        assert_true(r->committed == (dry == 0)); /* the commit stands; the cleanup does not */
        assert_int_equal(r->expired_count, 2);
        assert_refused_naming_b(&sc, r);
        size_t deleted = 1; /* the plan cannot be deleted later either */
        assert_int_equal(icm_expire_delete_files(&deleted, sc.fault, r), ICM_EREFUSED);
        assert_int_equal(deleted, 0);
        assert_int_equal(icm_fileio_fault_count(sc.fault, ICM_IO_DELETE), 0);
        for (size_t i = 0; sc.before[i] != NULL; i++)
            assert_true(exists(sc.mem, sc.before[i]) || strcmp(sc.before[i], sc.b) == 0);
        icm_expire_result_free(r);
        icm_table_free(t);
        scene_free(&sc);
    }
}

static void test_expiry_no_verify_and_version_1_options(void **state)
{
    (void)state;
    /* no_verify: the old behaviour, A and the expired manifests go */
    scene sc;
    scene_new(&sc);
    icmt_ok(icm_fileio_delete(sc.mem, sc.b));
    icm_expire_options o = expire_all_but_last(&sc);
    o.no_verify = true;
    icm_table *t = hist_open_table(sc.h);
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_int_equal(r->missing_count, 0);
    assert_int_equal(r->counts[ICM_EXPIRE_FILE_DATA], 1);
    assert_false(exists(sc.mem, sc.a));
    icm_expire_result_free(r);
    icm_table_free(t);
    scene_free(&sc);

    /* a version 1 struct has no no_verify: whatever the byte there says, it verifies */
    scene_new(&sc);
    icmt_ok(icm_fileio_delete(sc.mem, sc.b));
    o = expire_all_but_last(&sc);
    o.version = 1;
    o.no_verify = true;
    t = hist_open_table(sc.h);
    assert_int_equal(icm_expire_snapshots(&r, t, &o), ICM_EREFUSED);
    assert_true(exists(sc.mem, sc.a));
    icm_expire_result_free(r);
    icm_table_free(t);
    scene_free(&sc);

    /* nothing missing: verification passes and the expiry deletes as planned */
    scene_new(&sc);
    o = expire_all_but_last(&sc);
    t = hist_open_table(sc.h);
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_int_equal(r->missing_count, 0);
    assert_false(exists(sc.mem, sc.a));
    assert_true(exists(sc.mem, sc.b));
    icm_expire_result_free(r);
    icm_table_free(t);
    scene_free(&sc);
}

/* The public planning entry point verifies too: nothing planned, ICM_EREFUSED, problems. */
static void test_plan_files_verifies(void **state)
{
    (void)state;
    scene sc;
    scene_new(&sc);
    icm_table *t = hist_open_table(sc.h);
    icm_table_metadata *before = NULL;
    icmt_ok(icm_table_metadata_copy(&before, icm_table_get_metadata(t)));
    icm_expire_options o = expire_all_but_last(&sc);
    o.dry_run = true;
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o)); /* (the decision only) */
    icm_expire_result_free(r);
    icm_table_free(t);
    /* commit for real, then plan by hand against the table before */
    o.dry_run = false;
    o.no_verify = true;
    o.cleanup = ICM_EXPIRE_CLEANUP_NONE;
    t = hist_open_table(sc.h);
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    icm_expire_result_free(r);
    icmt_ok(icm_fileio_delete(sc.mem, sc.b));
    assert_int_equal(icm_expire_plan_files(&r, sc.mem, before,
                                           icm_table_get_metadata(t), ICM_EXPIRE_CLEANUP_ALL),
                     ICM_EREFUSED);
    assert_non_null(r);
    assert_refused_naming_b(&sc, r);
    size_t deleted = 1;
    assert_int_equal(icm_expire_delete_files(&deleted, sc.mem, r), ICM_EREFUSED);
    assert_int_equal(deleted, 0);
    assert_true(exists(sc.mem, sc.a));
    icm_expire_result_free(r);
    icm_table_metadata_free(before);
    icm_table_free(t);
    scene_free(&sc);
}

/* ---- 3. check ---- */

static const icm_check_snapshot *snap_of(const icm_check_result *r, int64_t id)
{
    for (size_t i = 0; i < r->snapshot_count; i++)
        if (r->snapshots[i].snapshot_id == id)
            return &r->snapshots[i];
    fail_msg("snapshot %lld not in the result", (long long)id);
    return NULL;
}

static bool has_problem(const icm_check_snapshot *s, const char *path,
                        icm_check_problem_kind problem, icm_check_file_kind kind)
{
    for (size_t i = 0; i < s->problem_count; i++)
        if (strcmp(s->problems[i]->path, path) == 0 && s->problems[i]->problem == problem &&
            s->problems[i]->kind == kind)
            return true;
    return false;
}

static icm_check_result *check(hist *h, icm_fileio *io, const icm_check_options *o)
{
    icm_table *t = hist_open_table(h);
    icm_check_result *r = NULL;
    icmt_ok(icm_check_table(&r, io, icm_table_get_metadata(t),
                            icm_table_get_metadata_location(t), o));
    icm_table_free(t);
    return r;
}

static void test_check_finds_exactly_the_damaged_files(void **state)
{
    (void)state;
    icm_fileio *mem;
    icmt_ok(icm_fileio_mem_new(&mem));
    hist *h = hist_new(mem, LOC, 2, false, T0);
    int64_t s1 = hist_append(h, "main", "A", NULL);
    int64_t s2 = hist_append(h, "main", "B", NULL);
    int64_t s3 = hist_append(h, "main", "C", NULL);
    icm_check_options all = ICM_CHECK_OPTIONS_INIT;
    all.all = true;
    icm_check_result *r = check(h, mem, &all);
    assert_int_equal(r->total_problems, 0);
    assert_int_equal(r->snapshot_count, 3);
    /* S3 needs its list, three manifests (fast append) and three data files */
    assert_int_equal(snap_of(r, s3)->files_checked, 7);
    assert_int_equal(snap_of(r, s1)->files_checked, 3);
    /* distinct: the metadata file, 3 lists, 3 manifests, 3 data files */
    assert_int_equal(r->files_checked, 10);
    icm_check_result_free(r);

    /* A is lost; S2's own manifest is cut short */
    char *a = hist_data_path(h, "A");
    icmt_ok(icm_fileio_delete(mem, a));
    char **f2 = hist_snapshot_files(h, s2, true);
    char *m2 = NULL;
    for (size_t i = 1; f2[i] != NULL && m2 == NULL; i++) {
        char **f1 = hist_snapshot_files(h, s1, true);
        if (!hist_strv_has(f1, f2[i]))
            m2 = f2[i];
        hist_strv_free(f1);
    }
    assert_non_null(m2);
    char *bytes = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&bytes, &len, mem, m2));
    icmt_ok(icm_fileio_write_replace(mem, m2, bytes, len - 10));
    icm_free(bytes);

    r = check(h, mem, &all);
    assert_int_equal(snap_of(r, s1)->problem_count, 1);
    assert_true(has_problem(snap_of(r, s1), a, ICM_CHECK_MISSING, ICM_CHECK_FILE_DATA));
    for (int k = 0; k < 2; k++) {
        const icm_check_snapshot *s = snap_of(r, k == 0 ? s2 : s3);
        assert_int_equal(s->problem_count, 3);
        assert_true(has_problem(s, a, ICM_CHECK_MISSING, ICM_CHECK_FILE_DATA));
        assert_true(has_problem(s, m2, ICM_CHECK_WRONG_SIZE, ICM_CHECK_FILE_MANIFEST));
        assert_true(has_problem(s, m2, ICM_CHECK_UNREADABLE, ICM_CHECK_FILE_MANIFEST));
        for (size_t i = 0; i < s->problem_count; i++) {
            if (s->problems[i]->problem != ICM_CHECK_WRONG_SIZE)
                continue;
            assert_int_equal(s->problems[i]->actual_size_bytes, (int64_t)len - 10);
            assert_int_equal(s->problems[i]->expected_size_bytes, (int64_t)len);
        }
    }
    assert_int_equal(r->total_problems, 7);
    /* three distinct problems, one record each, shared by the snapshots that have them */
    assert_int_equal(r->problem_count, 3);
    assert_null(r->metadata_problem);
    for (size_t i = 0; i < r->snapshot_count; i++)
        for (size_t k = 0; k < r->snapshots[i].problem_count; k++)
            assert_true(r->snapshots[i].problems[k] >= r->problems &&
                        r->snapshots[i].problems[k] < r->problems + r->problem_count);
    icm_check_result_free(r);

    /* default: the current snapshot only; an unknown id is an error */
    r = check(h, mem, NULL);
    assert_int_equal(r->snapshot_count, 1);
    assert_true(r->snapshots[0].snapshot_id == s3);
    icm_check_result_free(r);
    int64_t nope = 424242;
    icm_check_options one = ICM_CHECK_OPTIONS_INIT;
    one.snapshot_ids = &nope;
    one.snapshot_id_count = 1;
    icm_table *t = hist_open_table(h);
    assert_int_equal(icm_check_table(&r, mem, icm_table_get_metadata(t), NULL, &one),
                     ICM_ENOTFOUND);
    assert_null(r);
    icm_table_free(t);
    hist_strv_free(f2);
    free(a);
    hist_free(h);
    icm_fileio_free(mem);
}

/* A store that cannot be reached (ICM_EUNREACHABLE: a wrong endpoint) is no file's state: the
 * verifier (check's, and expiry's and the sweep's verification) stops with that error instead
 * of reporting files unreadable (exit 6 in the CLI), whether the stats or the reads of
 * manifest lists meet it. */
static void test_unreachable_store_stops_the_verifier(void **state)
{
    (void)state;
    icm_check_options all = ICM_CHECK_OPTIONS_INIT;
    all.all = true;
    for (int op = 0; op < 2; op++) {
        scene sc;
        scene_new(&sc);
        icm_table *t = hist_open_table(sc.h);
        icm_fileio_fault_fail_span(sc.fault, op == 0 ? ICM_IO_STAT : ICM_IO_READ, 1, 1000000,
                                   ICM_EUNREACHABLE, 0);
        icm_check_result *r = NULL;
        assert_int_equal(icm_check_table(&r, sc.fault, icm_table_get_metadata(t),
                                         icm_table_get_metadata_location(t), &all),
                         ICM_EUNREACHABLE);
        assert_null(r);
        icm_table_free(t);
        scene_free(&sc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verification_and_check_cannot_delete),
        cmocka_unit_test(test_expiry_refuses_when_a_retained_file_is_missing),
        cmocka_unit_test(test_expiry_no_verify_and_version_1_options),
        cmocka_unit_test(test_plan_files_verifies),
        cmocka_unit_test(test_check_finds_exactly_the_damaged_files),
        cmocka_unit_test(test_unreachable_store_stops_the_verifier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
