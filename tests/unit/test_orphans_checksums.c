/*
 * tests/unit/test_orphans_checksums.c: the orphan sweep plans Hadoop's checksum companions
 * (`.NAME.crc`, icm_fileio_checksum_of) as entries of their own, on a copy
 * of an engine-written table (Impala, Hadoop layout) in a temporary folder:
 *  - a dry run lists the companion right after its orphan, kind "checksum", with its size;
 *    never the companion of a file the table references, nor a `.x.crc` that is not Hadoop's;
 *  - the companion of an orphan whose delete fails is not deleted (FAILED), the others are;
 *  - the local FileIO's delete takes nothing beside the file it is asked to delete.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_orphans_common.h"
#include "util/util.h"

#define FIXTURE "impala/testdata/data/iceberg_test/hadoop_catalog/ice/" \
                "iceberg_v2_equality_delete_schema_evolution"
#define LOC "/test-warehouse/iceberg_test/hadoop_catalog/ice/" \
            "iceberg_v2_equality_delete_schema_evolution"

static const char CRC[] = {'c', 'r', 'c', '\0', 0, 0, 2, 0, 1, 2, 3, 4};

typedef struct env {
    char *tmp;
    char *dir;          /* the table's copy */
    icm_fileio *fault;  /* fault(pathmap(local)): LOC -> dir */
    icm_table *t;
} env;

static char *at(const env *e, const char *rel)
{
    return icmt_sprintf("%s/%s", e->dir, rel);
}

static void put_file(const env *e, const char *rel, const void *data, size_t len)
{
    char *p = at(e, rel);
    icmt_write_file(p, data, len);
    free(p);
}

static bool exists(const env *e, const char *rel)
{
    char *p = at(e, rel);
    bool yes = icmt_file_exists(p);
    free(p);
    return yes;
}

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    e->tmp = icmt_mkdtemp();
    e->dir = icmt_sprintf("%s/t", e->tmp);
    char *cmd = icmt_sprintf("cp -r '%s/" FIXTURE "' '%s'", icmt_fixtures_dir(), e->dir);
    icmt_run r = icmt_shell(e->tmp, cmd);
    assert_int_equal(r.code, 0);
    icmt_run_free(&r);
    free(cmd);
    /* the fixture's own stray goes: the tests plant theirs */
    char *tmp_list = at(e, "metadata/snap-5816823095034839884-1-fb7a4022-ee0a-4540-87d8-"
                           "b8fa8e4c8596.avro_tmp");
    assert_int_equal(remove(tmp_list), 0);
    free(tmp_list);
    icm_fileio *local = NULL, *pm = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icm_path_map rule = {LOC, e->dir};
    icmt_ok(icm_fileio_pathmap_new(&pm, local, &rule, 1));
    icmt_ok(icm_fileio_fault_new(&e->fault, pm));
    icmt_ok(icm_table_open_dir(&e->t, e->fault, LOC));
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    icm_table_free(e->t);
    icm_fileio_free(e->fault);
    icmt_rmtree(e->tmp);
    free(e->tmp);
    free(e->dir);
    free(e);
    return 0;
}

static icm_orphan_result *sweep(env *e, bool dry_run)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.dry_run = dry_run;
    o.force = true; /* the copy's files are seconds old */
    o.has_older_than = true;
    o.older_than_ms = icm__now_ms() + DAY_MS;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, e->t, &o));
    return r;
}

/* A data file the table references (of the fixture's first partition). */
static char *referenced_data_file(const env *e)
{
    char *cmd = icmt_sprintf("ls '%s/data/d=2024-03-20' | grep -v '^\\.' | head -1", e->dir);
    icmt_run r = icmt_shell(e->tmp, cmd);
    free(cmd);
    assert_int_equal(r.code, 0);
    r.out[strcspn(r.out, "\n")] = '\0';
    char *rel = icmt_sprintf("data/d=2024-03-20/%s", r.out);
    icmt_run_free(&r);
    return rel;
}

static void test_dry_run_plans_the_companion_right_after_its_orphan(void **state)
{
    env *e = *state;
    char *live = referenced_data_file(e);
    char *live_crc = icmt_sprintf("data/d=2024-03-20/.%s.crc", strrchr(live, '/') + 1);
    put_file(e, live_crc, CRC, sizeof CRC);                      /* its file is kept */
    put_file(e, "data/d=2024-03-20/stray.parquet", "stray", 5);
    put_file(e, "data/d=2024-03-20/.stray.parquet.crc", CRC, sizeof CRC);
    put_file(e, "metadata/lost.avro", "lost", 4);
    put_file(e, "metadata/.lost.avro.crc", "PAR1 data", 9);      /* not Hadoop's */
    icm_orphan_result *r = sweep(e, true);
    assert_int_equal(r->orphan_count, 3);
    size_t k = 0;
    for (; k < r->orphan_count; k++)
        if (r->orphans[k].kind == ICM_ORPHAN_CHECKSUM)
            break;
    assert_true(k > 0 && k < r->orphan_count);
    assert_string_equal(r->orphans[k].path, LOC "/data/d=2024-03-20/.stray.parquet.crc");
    assert_string_equal(r->orphans[k - 1].path, LOC "/data/d=2024-03-20/stray.parquet");
    assert_int_equal(r->orphans[k].size_bytes, (int64_t)sizeof CRC);
    assert_int_equal(r->orphans[k].state, ICM_ORPHAN_PLANNED);
    assert_string_equal(icm_orphan_kind_name(ICM_ORPHAN_CHECKSUM), "checksum");
    assert_int_equal(r->counts[ICM_ORPHAN_CHECKSUM], 1);
    assert_int_equal(r->bytes[ICM_ORPHAN_CHECKSUM], (int64_t)sizeof CRC);
    assert_int_equal(r->total, 3);
    icm_orphan_result_free(r);
    assert_true(exists(e, "data/d=2024-03-20/.stray.parquet.crc") && exists(e, live_crc));
    free(live_crc);
    free(live);
}

static void test_companion_stays_when_its_files_delete_fails(void **state)
{
    env *e = *state;
    put_file(e, "data/d=2024-03-21/a.parquet", "stray", 5);
    put_file(e, "data/d=2024-03-21/.a.parquet.crc", CRC, sizeof CRC);
    icm_fileio_fault_fail_nth(e->fault, ICM_IO_DELETE, 1, ICM_EIO); /* a.parquet's delete */
    icm_orphan_result *r = sweep(e, false);
    assert_int_equal(r->orphan_count, 2);
    assert_int_equal(r->orphans[0].state, ICM_ORPHAN_FAILED);
    assert_int_equal(r->orphans[1].kind, ICM_ORPHAN_CHECKSUM);
    assert_int_equal(r->orphans[1].state, ICM_ORPHAN_FAILED);
    assert_non_null(strstr(r->orphans[1].error_message, "checksum of was not deleted"));
    assert_int_equal(r->failed, 2);
    assert_int_equal(r->deleted, 0);
    icm_orphan_result_free(r);
    assert_true(exists(e, "data/d=2024-03-21/a.parquet"));
    assert_true(exists(e, "data/d=2024-03-21/.a.parquet.crc"));
    /* the next sweep deletes both, the file first */
    icm_fileio_fault_reset(e->fault);
    r = sweep(e, false);
    assert_int_equal(r->orphan_count, 2);
    assert_int_equal(r->deleted, 2);
    assert_int_equal(r->counts[ICM_ORPHAN_CHECKSUM], 1);
    icm_orphan_result_free(r);
    assert_false(exists(e, "data/d=2024-03-21/a.parquet"));
    assert_false(exists(e, "data/d=2024-03-21/.a.parquet.crc"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dry_run_plans_the_companion_right_after_its_orphan,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_companion_stays_when_its_files_delete_fails, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
