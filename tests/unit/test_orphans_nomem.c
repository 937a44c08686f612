/*
 * tests/unit/test_orphans_nomem.c: the orphan sweep under allocation failure. Every allocation
 * of a real sweep is failed in turn (the n-th, for n = 0, 1, 2, ... until the sweep succeeds):
 * each failing run returns ICM_ENOMEM (or refuses, when a reader reports the failure as an
 * unreadable manifest list) before deleting anything, or (when only a delete's own bookkeeping
 * failed) reports that file as not deleted; no run deletes a referenced file; and under ASan
 * nothing leaks.
 */
#include "history.h"
#include "test_orphans_common.h"
#include "util/util.h"

static void assert_reachable_exist(hist *h, icm_fileio *mem)
{
    char **reach = hist_reachable(h, NULL, 0);
    for (size_t i = 0; reach[i] != NULL; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, mem, reach[i]));
    }
    hist_strv_free(reach);
}

static void test_every_allocation_failure(void **state)
{
    (void)state;
    int64_t now = icm__now_ms(), old = now - 10 * DAY_MS;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_fileio_mem_set_time(mem, old);
    hist *h = hist_new(mem, "/t", 2, false, now - 20 * DAY_MS);
    hist_append(h, "main", "A", "B", NULL);
    hist_position_delete(h, "main", "P", "A");
    static const char *const strays[] = {"/t/data/s1.parquet", "/t/metadata/snap-9-1-x.avro",
                                         NULL};
    for (size_t i = 0; strays[i] != NULL; i++)
        plant(mem, strays[i], old);
    icm_table *t = hist_open_table(h);

    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = now;
    int rc = -1;
    long n;
    size_t gone_total = 0;
    for (n = 0; n < 5000; n++) {
        icm_orphan_result *r = NULL;
        strv before = list_all(mem, "/t");
        icmt_nomem_arm(n);
        rc = icm_orphan_sweep(&r, t, &o);
        icmt_nomem_disarm();
        assert_reachable_exist(h, mem);
        if (rc != 0) {
            /* ENOMEM, or a refusal when a lower layer reported the failed allocation as an
             * unreadable manifest list (src/avro/schema.c turns jansson's OOM into "not valid
             * JSON"): either way nothing may be deleted. */
            if (rc != ICM_ENOMEM && rc != ICM_EREFUSED)
                print_error("allocation %ld: %s: %s\n", n, icm_error_last()->location,
                            icm_error_last()->message);
            assert_true(rc == ICM_ENOMEM || rc == ICM_EREFUSED);
            assert_null(r);
            strv after = list_all(mem, "/t"); /* nothing deleted */
            const char *none[] = {NULL};
            assert_survivors(&before, &after, none);
            strv_free(&after);
            strv_free(&before);
            continue;
        }
        strv_free(&before);
        /* success: every reported orphan is deleted or reported as failed */
        for (size_t i = 0; i < r->orphan_count; i++) {
            icm_file_info info = ICM_FILE_INFO_INIT;
            int src = icm_fileio_stat(&info, mem, r->orphans[i].path);
            if (r->orphans[i].state == ICM_ORPHAN_DELETED)
                assert_int_equal(src, ICM_ENOTFOUND);
            else
                assert_int_equal(r->orphans[i].state, ICM_ORPHAN_FAILED);
        }
        gone_total += r->deleted;
        bool all = r->failed == 0;
        icm_orphan_result_free(r);
        if (all)
            break;
    }
    assert_int_equal(rc, 0);
    assert_true(n > 20); /* allocations really failed before the sweep got through */
    assert_true(gone_total >= 2);
    for (size_t i = 0; strays[i] != NULL; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        assert_int_equal(icm_fileio_stat(&info, mem, strays[i]), ICM_ENOTFOUND);
    }
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
