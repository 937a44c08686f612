/*
 * tests/unit/test_expire_nomem.c: snapshot expiry under allocation failure. Every allocation of
 * a real expiry up to its commit is failed in turn (the n-th, n = 0, 1, 2, ...), then every
 * 11th after it (each of those runs needs a fresh table), until an expiry succeeds. Each
 * failing run returns an error code (ICM_ENOMEM, or the commit layer's verdict when the failure
 * hit the commit) or, after the commit, reports the failure in its result; every file a snapshot of the table still reaches exists afterwards, and
 * under ASan nothing leaks. A failure after the commit leaves the table expired but files
 * behind, which is allowed (they are orphans); deleting a retained file is not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "testutil.h"

#define T0 INT64_C(1700000000000)
#define POST_COMMIT_STEP 11

static hist *build(icm_fileio **io)
{
    icmt_ok(icm_fileio_mem_new(io));
    hist *h = hist_new(*io, "/wh/t", 3, false, T0);
    hist_set_merge_append(h, true);
    int64_t s1 = hist_append(h, "main", "A", "B", NULL);
    hist_add_statistics(h, s1, "s1.stats", false);
    hist_position_delete(h, "main", "P", "A");
    hist_deletion_vectors(h, "main", "DV", "B", NULL);
    hist_delete(h, "main", "A", "P-deletes", NULL);
    hist_append(h, "main", "C", NULL);
    return h;
}

static void assert_reachable_exist(hist *h, icm_fileio *io)
{
    hist_sync(h);
    char **reach = hist_reachable(h, NULL, 0);
    for (size_t i = 0; reach[i] != NULL; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, io, reach[i]));
    }
    hist_strv_free(reach);
}

/* One real expiry with the n-th allocation failing. *injected: the n-th allocation happened. */
static int expire_failing(hist *h, long n, bool *injected, bool *committed)
{
    icm_table *t = hist_open_table(h);
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(h);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = hist_time(h);
    icm_expire_result *r = NULL;
    icmt_nomem_arm(n);
    int rc = icm_expire_snapshots(&r, t, &o);
    *injected = icmt_nomem_disarm() > n;
    *committed = r != NULL && r->committed;
    icm_expire_result_free(r);
    icm_table_free(t);
    return rc;
}

static bool table_changed(hist *h)
{
    icm_table *now = hist_open_table(h);
    bool changed = icm_table_metadata_snapshot_count(icm_table_get_metadata(now)) < 5;
    icm_table_free(now);
    return changed;
}

static void test_every_allocation_failure(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    hist *h = build(&io);
    size_t failures = 0, after_commit = 0;
    long n, step = 1;
    for (n = 0; n < 20000; n += step) {
        bool injected, committed;
        int rc = expire_failing(h, n, &injected, &committed);
        if (!injected) {
            icmt_ok(rc); /* every allocation succeeded: so must the expiry */
            assert_reachable_exist(h, io);
            break;
        }
        failures++;
        /* rc 0 despite the failure: after the commit a failed reload or delete is a problem in
         * the result (the expiry is done, files are left behind), and best-effort steps of the
         * commit path absorb some failures. Otherwise an error code, nothing else. */
        if (rc != 0 && rc != ICM_ENOMEM && rc != ICM_ECOMMIT_UNKNOWN && rc != ICM_ECOMMIT_FAILED)
            print_error("allocation %ld: %s %s: %s\n", n, icm_error_code_name(rc),
                        icm_error_last()->location, icm_error_last()->message);
        assert_true(rc == 0 || rc == ICM_ENOMEM || rc == ICM_ECOMMIT_UNKNOWN ||
                    rc == ICM_ECOMMIT_FAILED);
        assert_reachable_exist(h, io);
        if (committed || table_changed(h)) {
            /* Past the commit every run rebuilds the table: sample every POST_COMMIT_STEP-th
             * allocation there to keep the test quick. */
            step = POST_COMMIT_STEP;
            after_commit++;
            hist_free(h); /* start the next run from the unexpired table */
            icm_fileio_free(io);
            h = build(&io);
        }
    }
    print_message("%zu allocations failed in turn (%zu of them after the commit, every %d-th "
                  "there); a full expiry makes about %ld allocations\n",
                  failures, after_commit, POST_COMMIT_STEP, n);
    assert_true(n < 20000);
    assert_true(after_commit > 100); /* the post-commit path (reload, plan, deletes) was hit */
    hist_free(h);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
