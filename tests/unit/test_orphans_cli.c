/*
 * tests/unit/test_orphans_cli.c: `icemaint remove-orphan-files` end to end through the built CLI
 * (contract: option names, JSON shape, --plan-out, exit codes 0/2/5).
 *
 * Table: a temp-directory copy of the Impala-written fixture
 * iceberg_v2_equality_delete_schema_evolution (its metadata names /test-warehouse/...; the CLI
 * reaches the copy through --path-map), which holds one real stray (`*.avro_tmp`), plus strays
 * planted with `touch -d`. Nothing is copied into the repository.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <jansson.h>

#include "testutil.h"

#define TW "/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_equality_delete_schema_evolution"
#define TMP_STRAY "metadata/snap-5816823095034839884-1-fb7a4022-ee0a-4540-87d8-b8fa8e4c8596.avro_tmp"

typedef icmt_run run;
#define run_free icmt_run_free

/* Run the CLI with --path-map TW=<dir>/t and a shell-quoted argument string. */
static run cli(const char *dir, const char *args)
{
    char *cmd = icmt_sprintf("'%s' --path-map '" TW "=%s/t' %s", icmt_cli_path(), dir, args);
    run r = icmt_shell(dir, cmd);
    free(cmd);
    return r;
}

static void expect(const run *r, int code)
{
    if (r->code != code)
        print_error("exit %d (wanted %d)\nstdout: %s\nstderr: %s\n", r->code, code, r->out,
                    r->err);
    assert_int_equal(r->code, code);
}

/* A copy of the fixture table at <dir>/t, mtimes preserved, plus two strays 10 days old and
 * one written now. */
static char *make_table(void)
{
    char *dir = icmt_mkdtemp();
    char *cmd = icmt_sprintf(
        "cp -a '%s/impala/testdata/data/iceberg_test/hadoop_catalog/ice/"
        "iceberg_v2_equality_delete_schema_evolution' '%s/t' && "
        "touch -d '10 days ago' '%s/t/data/old-stray.parquet' '%s/t/data/d=2024-03-20/x.parquet'"
        " && touch -d '10 days ago' '%s/t/" TMP_STRAY "' && touch '%s/t/data/new-stray.parquet'",
        icmt_fixtures_dir(), dir, dir, dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    return dir;
}

static bool has_orphan(json_t *doc, const char *path)
{
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "orphans"), i, o)
    {
        if (strcmp(json_string_value(json_object_get(o, "path")), path) == 0)
            return true;
    }
    return false;
}

static bool exists(const char *dir, const char *rel)
{
    char *p = icmt_sprintf("%s/t/%s", dir, rel);
    bool ok = icmt_file_exists(p);
    free(p);
    return ok;
}

static void test_dry_run_then_real(void **state)
{
    (void)state;
    char *dir = make_table();
    run r = cli(dir, "remove-orphan-files " TW " --dry-run --json");
    expect(&r, 0);
    json_t *doc = icmt_json_parse(r.out);
    assert_int_equal(json_array_size(json_object_get(doc, "orphans")), 3);
    assert_true(has_orphan(doc, TW "/data/old-stray.parquet"));
    assert_true(has_orphan(doc, TW "/data/d=2024-03-20/x.parquet"));
    assert_true(has_orphan(doc, TW "/" TMP_STRAY));
    assert_true(json_is_true(json_object_get(doc, "dry_run")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "counts"), "data")),
                     2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "counts"), "other")),
                     1);
    assert_int_equal(json_integer_value(json_object_get(doc, "listed")), 25);
    assert_int_equal(json_integer_value(json_object_get(doc, "referenced_listed")), 21);
    assert_non_null(json_object_get(doc, "referenced"));
    assert_non_null(json_object_get(doc, "older_than_ms"));
    json_t *first = json_array_get(json_object_get(doc, "orphans"), 0);
    assert_non_null(json_object_get(first, "size_bytes"));
    assert_non_null(json_object_get(first, "mtime_ms"));
    assert_non_null(json_object_get(first, "kind"));
    json_decref(doc);
    run_free(&r);
    assert_true(exists(dir, "data/old-stray.parquet"));

    /* the real run, with the plan written to a file */
    char *plan = icmt_sprintf("%s/plan.json", dir);
    char *args = icmt_sprintf("remove-orphan-files " TW " --plan-out '%s' "
                              "--max-concurrent-deletes 2",
                              plan);
    r = cli(dir, args);
    expect(&r, 0);
    assert_non_null(strstr(r.out, "deleted 3 orphan files"));
    run_free(&r);
    size_t len;
    char *text = icmt_read_file(plan, &len);
    assert_non_null(text);
    doc = icmt_json_parse(text);
    assert_int_equal(json_integer_value(json_object_get(doc, "deleted")), 3);
    assert_true(json_is_false(json_object_get(doc, "dry_run")));
    json_decref(doc);
    free(text);
    assert_false(exists(dir, "data/old-stray.parquet"));
    assert_false(exists(dir, "data/d=2024-03-20/x.parquet"));
    assert_false(exists(dir, TMP_STRAY));
    assert_true(exists(dir, "data/new-stray.parquet"));
    assert_true(exists(dir, "metadata/v6.metadata.json"));
    assert_true(exists(dir, "metadata/version-hint.text"));
    assert_true(exists(dir, "data/d=2024-03-20/3645a3085845c344-9698e59400000000_1309071497_"
                            "data.0.parq"));

    /* nothing is left: the next run deletes nothing */
    r = cli(dir, "remove-orphan-files " TW " --json");
    expect(&r, 0);
    doc = icmt_json_parse(r.out);
    assert_int_equal(json_array_size(json_object_get(doc, "orphans")), 0);
    json_decref(doc);
    run_free(&r);
    free(args);
    free(plan);
    icmt_rmtree(dir);
    free(dir);
}

static void test_usage_and_refusals(void **state)
{
    (void)state;
    char *dir = make_table();
    run r = cli(dir, "remove-orphan-files " TW " --max-concurrent-deletes 0");
    expect(&r, 2);
    assert_non_null(strstr(r.err, "max_concurrent_deletes should have value > 0"));
    run_free(&r);
    r = cli(dir, "remove-orphan-files " TW " --prefix-mismatch none");
    expect(&r, 2);
    run_free(&r);
    r = cli(dir, "remove-orphan-files " TW " --older-than yesterday");
    expect(&r, 2);
    run_free(&r);
    r = cli(dir, "remove-orphan-files " TW " --equal-schemes s3a");
    expect(&r, 1);
    run_free(&r);

    /* a cutoff less than 24 h ago: refused (5) unless --force */
    r = cli(dir, "remove-orphan-files " TW " --older-than 1h --dry-run");
    expect(&r, 5);
    assert_non_null(strstr(r.err, "--force"));
    run_free(&r);
    r = cli(dir, "remove-orphan-files " TW " --older-than 1h --dry-run --force --json");
    expect(&r, 0);
    json_t *doc = icmt_json_parse(r.out);
    assert_int_equal(json_array_size(json_object_get(doc, "orphans")), 3);
    json_decref(doc);
    run_free(&r);

    /* a location outside the table */
    r = cli(dir, "remove-orphan-files " TW " --location /test-warehouse --dry-run");
    expect(&r, 5);
    run_free(&r);
    assert_true(exists(dir, "data/old-stray.parquet"));
    icmt_rmtree(dir);
    free(dir);
}

/* --exclude-location (repeatable), --equal-schemes (repeatable) and --file-list reach the
 * library. */
static void test_exclude_and_file_list(void **state)
{
    (void)state;
    char *dir = make_table();
    run r = cli(dir, "remove-orphan-files " TW " --dry-run --json --exclude-location " TW
                     "/data/d=2024-03-20 --exclude-location " TW "/metadata "
                     "--equal-schemes 'gs=s3' --equal-schemes 'wasb=abfs'");
    expect(&r, 0);
    json_t *doc = icmt_json_parse(r.out);
    assert_int_equal(json_array_size(json_object_get(doc, "orphans")), 1);
    assert_true(has_orphan(doc, TW "/data/old-stray.parquet"));
    json_decref(doc);
    run_free(&r);

    /* an inventory naming none of the table's files is refused as a path-form mismatch */
    char *list = icmt_sprintf("%s/inventory.tsv", dir);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    fprintf(f, TW "/data/old-stray.parquet\t5\t1000\n" TW "/data/listed-only.parquet\t7\t1000\n");
    fclose(f);
    char *args = icmt_sprintf("remove-orphan-files " TW " --dry-run --json --file-list '%s'",
                              list);
    r = cli(dir, args);
    expect(&r, 5);
    assert_non_null(strstr(r.err, "none of the 22 files"));
    run_free(&r);
    /* with a referenced file in it, the two unreferenced lines are the orphans */
    f = fopen(list, "a");
    fprintf(f, TW "/metadata/v6.metadata.json\t1\t1000\n");
    fclose(f);
    r = cli(dir, args);
    expect(&r, 0);
    doc = icmt_json_parse(r.out);
    assert_int_equal(json_array_size(json_object_get(doc, "orphans")), 2);
    assert_true(has_orphan(doc, TW "/data/listed-only.parquet"));
    assert_true(has_orphan(doc, TW "/data/old-stray.parquet"));
    assert_int_equal(json_integer_value(json_object_get(doc, "listed")), 3);
    json_decref(doc);
    run_free(&r);
    free(args);
    /* an empty inventory, and a --location with nothing below it (a typo): nothing to do, but
     * a warning says so */
    f = fopen(list, "w");
    fclose(f);
    args = icmt_sprintf("remove-orphan-files " TW " --dry-run --file-list '%s'", list);
    r = cli(dir, args);
    expect(&r, 0);
    assert_non_null(strstr(r.err, "warning: " TW ": the file list gave no files below it"));
    run_free(&r);
    free(args);
    r = cli(dir, "remove-orphan-files " TW " --dry-run --location " TW "/dta");
    expect(&r, 0);
    assert_non_null(strstr(r.err, "warning: " TW "/dta: the listing gave no files below it"));
    run_free(&r);
    free(list);
    icmt_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dry_run_then_real),
        cmocka_unit_test(test_usage_and_refusals),
        cmocka_unit_test(test_exclude_and_file_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
