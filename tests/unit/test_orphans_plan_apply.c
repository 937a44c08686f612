/*
 * tests/unit/test_orphans_plan_apply.c: the sweep's reviewed-plan mode and guard rails
 * (icemaint/orphans.h options version 4: exact_file_list, limits), which `icemaint apply`
 * and `remove-orphan-files --max-delete*` stand on. On the in-memory FileIO with a model
 * history (history.h):
 *  - exact_file_list deletes a planned file only while it has exactly the planned size and
 *    mtime (an inventory's list checks only the age: the same changes are deleted there);
 *  - a list naming only orphans is not refused for naming no referenced file (an inventory's
 *    is), and no checksum companion the list does not name is planned;
 *  - a planned file in a folder another table's metadata marks as its location is kept;
 *  - the limits refuse a plan over any bound before anything is deleted (*out NULL), pass it
 *    at the bound, and only warn on a dry run; an older options struct (version 3) has none.
 */
#include <stddef.h>

#include "history.h"
#include "icemaint/sys/fileio.h"
#include "util/util.h"
#include "test_orphans_common.h"

#define LOC "/w/t"

typedef struct env {
    icm_fileio *mem;
    hist *h;
    int64_t now, old;
    char *dir, *list;
} env;

static void env_init(env *e)
{
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e->mem));
    icm_fileio_mem_set_time(e->mem, e->old);
    e->h = hist_new(e->mem, LOC, 2, false, e->now - 20 * DAY_MS);
    icm_fileio_mem_set_time(e->mem, e->old);
    hist_append(e->h, "main", "A", NULL);
    hist_append(e->h, "main", "B", NULL);
    e->dir = icmt_mkdtemp();
    e->list = icmt_sprintf("%s/plan.tsv", e->dir);
}

static void env_free(env *e)
{
    icmt_rmtree(e->dir);
    free(e->dir);
    free(e->list);
    hist_free(e->h);
    icm_fileio_free(e->mem);
}

/* A file list of `paths` (NULL-terminated) with their size and mtime as storage has them now. */
static void write_list(env *e, const char *const *paths)
{
    FILE *f = fopen(e->list, "w");
    assert_non_null(f);
    for (size_t i = 0; paths[i] != NULL; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, e->mem, paths[i]));
        fprintf(f, "%s\t%lld\t%lld\n", paths[i], (long long)info.size_bytes,
                (long long)info.mtime_ms);
    }
    fclose(f);
}

static icm_orphan_options opts(const env *e, bool exact)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e->now;
    o.file_list = e->list;
    o.exact_file_list = exact;
    return o;
}

static int sweep(env *e, const icm_orphan_options *o, icm_orphan_result **out)
{
    icm_table *t = hist_open_table(e->h);
    int rc = icm_orphan_sweep(out, t, o);
    icm_table_free(t);
    return rc;
}

static icm_orphan_state state_of(const icm_orphan_result *r, const char *path)
{
    for (size_t i = 0; i < r->orphan_count; i++)
        if (strcmp(r->orphans[i].path, path) == 0)
            return r->orphans[i].state;
    fail_msg("%s is not in the result", path);
    return ICM_ORPHAN_PLANNED;
}

static bool exists(env *e, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, e->mem, path);
    icm_error_clear();
    return rc == 0;
}

/* The same changes after the plan: exact mode keeps them (the last check compares storage
 * with the plan's size and mtime), an inventory's list deletes the one that is still old (it
 * checks only the age). */
static void run_changed(bool exact)
{
    env e;
    env_init(&e);
    const char *same = LOC "/data/same.parquet", *grown = LOC "/data/grown.parquet",
               *touched = LOC "/data/touched.parquet";
    plant(e.mem, same, e.old);
    plant(e.mem, grown, e.old);
    plant(e.mem, touched, e.old);
    const char *planned[] = {same, grown, touched, NULL};
    /* a plan names its orphans; an inventory every file (else it is refused as not one) */
    strv all = list_all(e.mem, LOC);
    const char **every = calloc(all.n + 1, sizeof *every);
    assert_non_null(every);
    for (size_t i = 0; i < all.n; i++)
        every[i] = all.v[i];
    write_list(&e, exact ? planned : every);
    free(every);
    strv_free(&all);
    icm_fileio_mem_set_time(e.mem, e.old);
    icmt_ok(icm_fileio_write_replace(e.mem, grown, "stray, longer", 13)); /* same mtime */
    plant(e.mem, touched, e.old + 1000);                                   /* same size */
    icm_orphan_options o = opts(&e, exact);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(state_of(r, same), ICM_ORPHAN_DELETED);
    assert_int_equal(state_of(r, grown), exact ? ICM_ORPHAN_KEPT : ICM_ORPHAN_DELETED);
    assert_int_equal(state_of(r, touched), exact ? ICM_ORPHAN_KEPT : ICM_ORPHAN_DELETED);
    assert_false(exists(&e, same));
    assert_int_equal(exists(&e, grown), exact);
    assert_int_equal(exists(&e, touched), exact);
    icm_orphan_result_free(r);
    env_free(&e);
}

static void test_exact_keeps_changed_files(void **state)
{
    (void)state;
    run_changed(true);
}

static void test_inventory_checks_only_age(void **state)
{
    (void)state;
    run_changed(false);
}

/* A list of orphans only: an inventory's is refused (names no referenced file), a plan's is
 * not; a Hadoop checksum companion the plan does not name stays. */
static void test_exact_list_names_only_orphans(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    const char *orphan = LOC "/data/o.parquet", *crc = LOC "/data/.o.parquet.crc";
    plant(e.mem, orphan, e.old);
    plant(e.mem, crc, e.old);
    const char *planned[] = {orphan, NULL};
    write_list(&e, planned);
    icm_orphan_options o = opts(&e, false);
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_null(r);
    assert_true(exists(&e, orphan));
    o = opts(&e, true);
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(r->orphan_count, 1);
    assert_int_equal(state_of(r, orphan), ICM_ORPHAN_DELETED);
    assert_false(exists(&e, orphan));
    assert_true(exists(&e, crc));
    icm_orphan_result_free(r);
    env_free(&e);
}

/* Another table's metadata folder beside planned files: apply lists the location as the sweep
 * does, so it refuses as the sweep does; nothing is deleted. */
static void test_exact_refuses_beside_a_nested_table(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    const char *taken = LOC "/data/nest/data/x.parquet", *free_ = LOC "/data/y.parquet";
    plant(e.mem, taken, e.old);
    plant(e.mem, free_, e.old);
    const char *planned[] = {taken, free_, NULL};
    write_list(&e, planned);
    plant(e.mem, LOC "/data/nest/metadata/v1.metadata.json", e.old);
    icm_orphan_options o = opts(&e, true);
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_null(r);
    assert_true(exists(&e, taken));
    assert_true(exists(&e, free_));
    env_free(&e);
}

static void test_limits(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    const char *a = LOC "/data/a.parquet", *b = LOC "/data/b.parquet", *c = LOC "/data/c.parquet";
    plant(e.mem, a, e.old);
    plant(e.mem, b, e.old);
    plant(e.mem, c, e.old);
    const char *planned[] = {a, b, c, NULL};
    write_list(&e, planned);
    icm_orphan_options o = opts(&e, true);
    icm_orphan_result *r = NULL;
    o.limits.max_files = 2;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_null(r);
    assert_non_null(strstr(icm_error_last()->message, "3 files, more than --max-delete 2"));
    assert_true(exists(&e, a) && exists(&e, b) && exists(&e, c));
    o.limits.max_files = -1;
    o.limits.max_bytes = 14; /* 3 x 5 bytes */
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    o.limits.max_bytes = -1;
    o.limits.max_percent = 1.0; /* of every file listed below the location (fewer than 300) */
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_true(exists(&e, a) && exists(&e, b) && exists(&e, c));
    /* a dry run is not refused: it warns */
    o.dry_run = true;
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(r->orphan_count, 3);
    assert_int_equal(r->warning_count, 1);
    assert_non_null(strstr(r->warnings[0], "a real run would be refused"));
    icm_orphan_result_free(r);
    /* at every bound at once: deleted */
    o.dry_run = false;
    o.limits.max_files = 3;
    o.limits.max_bytes = 15;
    o.limits.max_percent = 100.0;
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(r->deleted, 3);
    assert_false(exists(&e, a) || exists(&e, b) || exists(&e, c));
    icm_orphan_result_free(r);
    env_free(&e);
}

/* A version-3 options struct has neither limits nor the exact mode: its bytes past no_verify
 * are not read. */
static void test_version_3_struct(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    const char *a = LOC "/data/a.parquet";
    plant(e.mem, a, e.old);
    const char *planned[] = {a, NULL};
    write_list(&e, planned);
    icm_orphan_options o = opts(&e, true);
    o.version = 3;
    o.limits.max_files = 0;     /* would refuse if read */
    o.exact_file_list = true;   /* would skip the path-form check if read */
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED); /* the path-form check: not exact */
    assert_null(strstr(icm_error_last()->message, "--max-delete"));
    assert_true(exists(&e, a));
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_keeps_changed_files),
        cmocka_unit_test(test_inventory_checks_only_age),
        cmocka_unit_test(test_exact_list_names_only_orphans),
        cmocka_unit_test(test_exact_refuses_beside_a_nested_table),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_version_3_struct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
