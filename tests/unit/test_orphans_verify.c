/*
 * tests/unit/test_orphans_verify.c: the orphan sweep's presence check (orphans.h,
 * "verification"; docs/semantics.md#sweep-refusals) on tables the history helper writes into the
 * in-memory FileIO.
 *
 *  - files the snapshots reference are missing from the listing and there are orphans: refused
 *    (ICM_EREFUSED), nothing deleted, the message names the first 10 missing files, each with a
 *    snapshot that references it, and their count; no_verify sweeps;
 *  - a referenced file that is hidden, or outside --location, is never expected;
 *  - a file list (an inventory may be older than the newest commit) lacking a referenced file
 *    that storage still has is fine; one lacking a file storage has lost is refused;
 *  - nothing missing, or nothing to delete: no refusal.
 */
#include <stdio.h>

#include "history.h"
#include "test_orphans_common.h"
#include "util/util.h"

#define LOC "/wh/t"

typedef struct env {
    icm_fileio *mem;
    hist *h;
    int64_t now, old;
} env;

static void env_init(env *e)
{
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e->mem));
    icm_fileio_mem_set_time(e->mem, e->old);
    e->h = hist_new(e->mem, LOC, 2, false, e->now - 20 * DAY_MS);
    icm_fileio_mem_set_time(e->mem, e->old);
}

static void env_free(env *e)
{
    hist_free(e->h);
    icm_fileio_free(e->mem);
}

static int sweep(env *e, const icm_orphan_options *o, icm_orphan_result **out)
{
    icm_table *t = hist_open_table(e->h);
    int rc = icm_orphan_sweep(out, t, o);
    icm_table_free(t);
    return rc;
}

static icm_orphan_options opts(const env *e)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e->now;
    return o;
}

/* The history helper writes an empty metadata-log, so its earlier metadata files are orphans
 * (docs/semantics.md#sweep-keep-set): removed here, so the strays planted are the only
 * orphans. */
static void drop_earlier_metadata(env *e)
{
    icm_table *t = hist_open_table(e->h);
    const char *cur = icm_table_get_metadata_location(t);
    strv all = list_all(e->mem, LOC "/metadata");
    for (size_t i = 0; i < all.n; i++)
        if (strstr(all.v[i], ".metadata.json") != NULL && strcmp(all.v[i], cur) != 0)
            icmt_ok(icm_fileio_delete(e->mem, all.v[i]));
    strv_free(&all);
    icm_table_free(t);
}

/* Twelve appends F00..F11 (snapshot k adds Fk); returns their snapshot ids in ids[]. */
static void twelve_appends(env *e, int64_t ids[12])
{
    for (int k = 0; k < 12; k++) {
        char name[8];
        snprintf(name, sizeof name, "F%02d", k);
        ids[k] = hist_append(e->h, "main", name, NULL);
    }
}

static void test_missing_files_are_named_with_a_snapshot(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    int64_t ids[12];
    twelve_appends(&e, ids);
    for (int k = 0; k < 11; k++) {
        char name[8];
        snprintf(name, sizeof name, "F%02d", k);
        char *p = hist_data_path(e.h, name);
        icmt_ok(icm_fileio_delete(e.mem, p));
        free(p);
    }
    plant(e.mem, LOC "/data/stray.parquet", e.old);
    drop_earlier_metadata(&e);
    strv before = list_all(e.mem, LOC);
    for (int dry = 1; dry >= 0; dry--) {
        icm_orphan_options o = opts(&e);
        o.dry_run = dry == 1;
        icm_orphan_result *r = NULL;
        assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
        assert_null(r);
        const char *m = icm_error_last()->message;
        assert_non_null(strstr(m, "11 files the table's snapshots reference here are not in "
                                  "the listing"));
        assert_non_null(strstr(m, "and 1 more"));
        /* each named file with the snapshot that added it (the first to reference it) */
        size_t named = 0;
        for (int k = 0; k < 11; k++) {
            char name[8];
            snprintf(name, sizeof name, "F%02d", k);
            char *p = hist_data_path(e.h, name);
            char *want = icmt_sprintf("%s (data, snapshot %lld)", p, (long long)ids[k]);
            named += strstr(m, want) != NULL;
            free(want);
            free(p);
        }
        assert_int_equal(named, 10);
        strv after = list_all(e.mem, LOC);
        const char *none[] = {NULL};
        assert_survivors(&before, &after, none);
        strv_free(&after);
    }
    /* a version 2 struct has no no_verify: whatever the byte there says, it verifies */
    icm_orphan_options o = opts(&e);
    o.version = 2;
    o.no_verify = true;
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    /* no_verify: the stray goes, nothing else */
    o = opts(&e);
    o.no_verify = true;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

/* Nothing to delete, or nothing missing below --location: no refusal. */
static void test_no_refusal_without_orphans_or_outside_the_location(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    hist_append(e.h, "main", "A", NULL);
    drop_earlier_metadata(&e);
    char *a = hist_data_path(e.h, "A");
    icmt_ok(icm_fileio_delete(e.mem, a));
    icm_orphan_options o = opts(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r)); /* no orphans: nothing at risk */
    assert_int_equal(r->orphan_count, 0);
    icm_orphan_result_free(r);
    /* a stray in metadata/, listed alone: A (in data/) is not expected there */
    plant(e.mem, LOC "/metadata/stray.avro", e.old);
    o.location = LOC "/metadata";
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/metadata/stray.avro", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    free(a);
    env_free(&e);
}

static void write_inventory(env *e, const char *list, const char *skip)
{
    strv all = list_all(e->mem, LOC);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    for (size_t i = 0; i < all.n; i++) {
        if (skip != NULL && strcmp(all.v[i], skip) == 0)
            continue;
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, e->mem, all.v[i]));
        fprintf(f, "%s\t%lld\t%lld\n", all.v[i], (long long)info.size_bytes,
                (long long)info.mtime_ms);
    }
    fclose(f);
    strv_free(&all);
}

static void test_file_list_missing_only_when_storage_agrees(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    hist_append(e.h, "main", "A", NULL);
    int64_t s2 = hist_append(e.h, "main", "B", NULL);
    plant(e.mem, LOC "/data/stray.parquet", e.old);
    drop_earlier_metadata(&e);
    char *b = hist_data_path(e.h, "B");
    char *dir = icmt_mkdtemp();
    char *list = icmt_sprintf("%s/inventory.tsv", dir);
    /* an inventory taken before B was written: B is not in it, but it exists */
    write_inventory(&e, list, b);
    icm_orphan_options o = opts(&e);
    o.file_list = list;
    o.dry_run = true;
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *stray[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, stray);
    icm_orphan_result_free(r);
    /* B lost from storage too: refused, naming it */
    icmt_ok(icm_fileio_delete(e.mem, b));
    o.dry_run = false;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    char *want = icmt_sprintf("%s (data, snapshot %lld)", b, (long long)s2);
    assert_non_null(strstr(icm_error_last()->message, want));
    assert_non_null(strstr(icm_error_last()->message, "neither in the file list nor in "
                                                      "storage"));
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e.mem, LOC "/data/stray.parquet"));
    free(want);
    icmt_rmtree(dir);
    free(list);
    free(dir);
    free(b);
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_files_are_named_with_a_snapshot),
        cmocka_unit_test(test_no_refusal_without_orphans_or_outside_the_location),
        cmocka_unit_test(test_file_list_missing_only_when_storage_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
