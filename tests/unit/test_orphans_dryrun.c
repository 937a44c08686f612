/*
 * tests/unit/test_orphans_dryrun.c: a dry run of the orphan sweep cannot delete anything.
 *
 *  1. Statically: the planning translation units (orphans_plan.c and the files it is split
 *     into, orphans_names.c, orphans_refs.c, orphans_listing.c, orphans_checks.c; the keep
 *     set's files; orphans_keys.c and the listing thread, io/list_ahead.c) reference no FileIO
 *     call that deletes, creates or writes — checked with `nm` on the library archive — while
 *     orphans.c (the executor) hands its orphans to the delete engine and delete_engine.c
 *     calls icm_fileio_delete_batch, which proves the check sees the symbols at all.
 *  2. Dynamically: a dry run over a counting (fault-injecting) FileIO performs zero delete and
 *     zero write operations, and reports the old strays.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "history.h"
#include "test_orphans_common.h"
#include "util/util.h"

static void test_planning_code_cannot_delete(void **state)
{
    (void)state;
    char *a = icmt_library_archive();
    static const char *const forbidden[] = {"icm_fileio_delete", "icm_fileio_create_new",
                                            "icm_fileio_write_replace",
                                            "icm_fileio_delete_existing",
                                            "icm_fileio_delete_batch", "icm__delete_run", NULL};
    static const char *const planners[] = {"orphans_plan.c.o", "orphans_keys.c.o",
                                           "list_ahead.c.o", "keepset.c.o",
                                           "pathset.c.o", "reach_walk.c.o",
                                           "list_row_guess.c.o", "table_files.c.o",
                                           "orphans_names.c.o", "orphans_refs.c.o",
                                           "orphans_listing.c.o", "orphans_checks.c.o",
                                           "orphans_nested.c.o", "orphans_mounts.c.o",
                                           "mounts.c.o",
                                           "bulk_reader.c.o",
                                           "site_checks.c.o", "expire_site.c.o",
                                           "other_format.c.o", "orphans_inventory.c.o",
                                           "inventory.c.o", NULL};
    for (size_t m = 0; planners[m] != NULL; m++) {
        for (size_t s = 0; forbidden[s] != NULL; s++) {
            bool seen;
            bool refs = icmt_archive_member_references(a, planners[m], forbidden[s], &seen);
            assert_true(seen);
            if (refs)
                print_error("%s references %s\n", planners[m], forbidden[s]);
            assert_false(refs);
        }
    }
    /* the planner does read storage (the check is not vacuous): it lists through the listing
     * thread, which calls the FileIO */
    bool seen;
    assert_true(
        icmt_archive_member_references(a, "orphans_plan.c.o", "icm__fileio_list_ahead_span", &seen));
    assert_true(icmt_archive_member_references(a, "list_ahead.c.o", "icm_fileio_list_opts", &seen));
    /* and the executor is where deleting lives: it hands the orphans to the delete engine,
     * whose object calls the FileIO's delete */
    assert_true(icmt_archive_member_references(a, "orphans.c.o", "icm__delete_run", &seen));
    assert_true(
        icmt_archive_member_references(a, "delete_engine.c.o", "icm_fileio_delete_batch", &seen));
    free(a);
}

static void test_dry_run_performs_no_write(void **state)
{
    (void)state;
    int64_t now = icm__now_ms(), old = now - 10 * DAY_MS;
    icm_fileio *mem = NULL, *fault = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_fileio_mem_set_time(mem, old);
    icmt_ok(icm_fileio_fault_new(&fault, mem)); /* takes mem, but we keep using its clock */
    hist *h = hist_new(fault, "/t", 2, false, now - 20 * DAY_MS);
    hist_append(h, "main", "A", "B", NULL);
    plant(mem, "/t/data/stray.parquet", old);
    plant(mem, "/t/metadata/snap-1-1-leftover.avro", old);
    icm_fileio_fault_reset(fault);

    icm_table *t = hist_open_table(h);
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = now;
    o.dry_run = true;
    o.max_concurrent_deletes = 4;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    const char *expected[] = {"/t/data/stray.parquet", "/t/metadata/snap-1-1-leftover.avro",
                              NULL};
    assert_orphans(r, expected);
    assert_int_equal(r->deleted, 0);
    assert_int_equal(r->orphans[0].state, ICM_ORPHAN_PLANNED);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_DELETE), 0);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_WRITE), 0);
    assert_true(icm_fileio_fault_count(fault, ICM_IO_LIST) >= 1);
    icm_orphan_result_free(r);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(fault);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planning_code_cannot_delete),
        cmocka_unit_test(test_dry_run_performs_no_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
