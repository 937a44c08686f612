/*
 * test_expire_nested_table.c: expiry keeps a planned file that lies in the folder of a table
 * nested in this one that no catalog lists (data-loss class "nested tables": a
 * filesystem-layout table B in A's folder, one of whose live files A added and then deleted).
 *
 * Table /wh/t appends A; then B at /wh/t/b/data/B.parquet (as if added from the nested table's
 * folder), deletes B, and appends C. Expiring every snapshot but the last plans B:
 *  - with /wh/t/b/metadata/version-hint.text present, B stays and is reported as
 *    ICM_EXPIRE_PROBLEM_OTHER_TABLE (the dry run says the same);
 *  - without it (the control), B is deleted as before.
 */
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "testutil.h"
#include "util/util.h"

#define LOC "/wh/t"
#define B_PATH LOC "/b/data/B.parquet"

static bool exists(icm_fileio *io, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, path);
    assert_true(rc == 0 || rc == ICM_ENOTFOUND);
    return rc == 0;
}

static bool reported_other_table(const icm_expire_result *r, const char *path)
{
    for (size_t i = 0; i < r->problem_count; i++)
        if (r->problems[i].kind == ICM_EXPIRE_PROBLEM_OTHER_TABLE &&
            r->problems[i].location != NULL && strcmp(r->problems[i].location, path) == 0)
            return true;
    return false;
}

static void run(bool nested_table, bool dry_run)
{
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, LOC, 2, false, INT64_C(1700000000000));
    hist_append(h, "main", "A", NULL);
    hist_set_data_location(h, LOC "/b");
    hist_append(h, "main", "B", NULL);
    hist_delete(h, "main", "B", NULL);
    hist_set_data_location(h, NULL);
    hist_append(h, "main", "C", NULL);
    if (nested_table)
        icmt_ok(icm_fileio_write_replace(io, LOC "/b/metadata/version-hint.text", "1", 1));
    assert_true(exists(io, B_PATH));

    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.dry_run = dry_run;
    o.decide.now_ms = hist_time(h);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = hist_time(h); /* all but the last (retain-last 1) */
    icm_table *t = hist_open_table(h);
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_non_null(r);
    assert_int_equal(r->expired_count, 3);
    assert_int_equal(reported_other_table(r, B_PATH), nested_table);
    assert_int_equal(exists(io, B_PATH), nested_table || dry_run);
    icm_expire_result_free(r);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

static void test_nested_table_file_is_kept(void **state)
{
    (void)state;
    run(true, false);
}

static void test_nested_table_file_is_reported_by_dry_run(void **state)
{
    (void)state;
    run(true, true);
}

static void test_control_plain_folder_file_is_deleted(void **state)
{
    (void)state;
    run(false, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_table_file_is_kept),
        cmocka_unit_test(test_nested_table_file_is_reported_by_dry_run),
        cmocka_unit_test(test_control_plain_folder_file_is_deleted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
