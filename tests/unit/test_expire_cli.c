/*
 * tests/unit/test_expire_cli.c: `icemaint expire-snapshots` end to end through the built CLI
 * (contract: JSON shape, --plan-out, exit codes 2/5 and errors).
 *
 * Tables: a copy of the engine-written PySpark v2 fixture (paths relative to the repository
 * root, so the copy lives in a temp directory that the CLI runs in), and small tables written
 * with the history builder on the local FileIO. Nothing is copied into the repository.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <jansson.h>

#include "history.h"
#include "testutil.h"

#define SPEC2 "data/iceberg/generated_spec2_0_001/pyspark_iceberg_table"

typedef icmt_run run;
#define run_free icmt_run_free

/* Run the CLI in `dir` with a shell-quoted argument string. */
static run cli(const char *dir, const char *args)
{
    char *cmd = icmt_sprintf("cd '%s' && '%s' %s", dir, icmt_cli_path(), args);
    run r = icmt_shell(dir, cmd);
    free(cmd);
    return r;
}

static char *copy_spec2(void)
{
    char *dir = icmt_mkdtemp();
    char *cmd = icmt_sprintf("mkdir -p '%s/data/iceberg' && cp -r '%s/duckdb-iceberg/data/iceberg/"
                             "generated_spec2_0_001' '%s/data/iceberg/'",
                             dir, icmt_fixtures_dir(), dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    return dir;
}

static size_t planned_paths(json_t *doc, char ***out)
{
    const char *keys[] = {"deleted_files", "deleted_manifests", "deleted_statistics_files"};
    size_t n = 0;
    *out = NULL;
    for (size_t k = 0; k < 3; k++) {
        json_t *arr = json_object_get(doc, keys[k]);
        assert_true(json_is_array(arr));
        for (size_t i = 0; i < json_array_size(arr); i++) {
            json_t *f = json_array_get(arr, i);
            assert_true(json_is_string(json_object_get(f, "path")));
            assert_true(json_is_string(json_object_get(f, "kind")));
            assert_non_null(json_object_get(f, "size_bytes"));
            *out = realloc(*out, (n + 1) * sizeof **out);
            (*out)[n++] = strdup(json_string_value(json_object_get(f, "path")));
        }
    }
    return n;
}

static void free_paths(char **p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
    free(p);
}

static bool exists_in(const char *dir, const char *rel)
{
    char *p = icmt_sprintf("%s/%s", dir, rel);
    bool e = icmt_file_exists(p);
    free(p);
    return e;
}

static void test_dry_run_then_real(void **state)
{
    (void)state;
    char *dir = copy_spec2();
    run d = cli(dir, "expire-snapshots " SPEC2 " --retain-last 2 --older-than 1d --dry-run "
                     "--json --plan-out plan.json");
    assert_int_equal(d.code, 0);
    json_t *dry = icmt_json_parse(d.out);
    assert_true(json_is_true(json_object_get(dry, "dry_run")));
    assert_null(json_object_get(dry, "metadata_location"));
    assert_int_equal(json_array_size(json_object_get(dry, "expired")), 5);
    assert_int_equal(json_array_size(json_object_get(dry, "retained")), 2);
    char **planned;
    size_t n = planned_paths(dry, &planned);
    /* the engine-written history: 1 data file, 2 manifests and 5 manifest lists */
    assert_int_equal(n, 8);
    assert_int_equal(json_integer_value(json_object_get(dry, "total_deleted")), 8);
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(dry, "counts"), "manifest_list")),
                     5);
    for (size_t i = 0; i < n; i++)
        assert_true(exists_in(dir, planned[i])); /* a dry run deletes nothing */
    char *plan_path = icmt_sprintf("%s/plan.json", dir);
    size_t len;
    char *plan_text = icmt_read_file(plan_path, &len);
    json_t *plan = icmt_json_parse(plan_text);
    assert_true(json_equal(plan, dry));

    run r = cli(dir, "--json expire-snapshots " SPEC2 " --retain-last 2 --older-than 1d "
                     "--max-concurrent-deletes 3");
    assert_int_equal(r.code, 0);
    json_t *real = icmt_json_parse(r.out);
    assert_true(json_is_false(json_object_get(real, "dry_run")));
    assert_string_equal(json_string_value(json_object_get(real, "metadata_location")),
                        SPEC2 "/metadata/v10.metadata.json");
    char **deleted;
    size_t m = planned_paths(real, &deleted);
    assert_int_equal(m, n);
    for (size_t i = 0; i < m; i++) {
        assert_string_equal(deleted[i], planned[i]);
        assert_false(exists_in(dir, deleted[i]));
    }
    run s = cli(dir, "--json snapshots " SPEC2);
    assert_int_equal(s.code, 0);
    json_t *snaps = icmt_json_parse(s.out);
    assert_int_equal(json_array_size(json_object_get(snaps, "snapshots")), 2);

    /* Human output names the counts. */
    run again = cli(dir, "expire-snapshots " SPEC2 " --retain-last 2 --older-than 1d");
    assert_int_equal(again.code, 0);
    assert_non_null(strstr(again.out, "expired 0 snapshots"));

    json_decref(snaps);
    json_decref(real);
    json_decref(plan);
    json_decref(dry);
    free_paths(planned, n);
    free_paths(deleted, m);
    free(plan_text);
    free(plan_path);
    run_free(&d);
    run_free(&r);
    run_free(&s);
    run_free(&again);
    icmt_rmtree(dir);
    free(dir);
}

static void test_usage_errors(void **state)
{
    (void)state;
    char *dir = copy_spec2();
    const char *bad[] = {
        "expire-snapshots",
        "expire-snapshots " SPEC2 " --retain-last 0",
        "expire-snapshots " SPEC2 " --cleanup some",
        "expire-snapshots " SPEC2 " --max-concurrent-deletes 0",
        "expire-snapshots " SPEC2 " --older-than yesterday",
        "expire-snapshots " SPEC2 " --snapshot-id x",
        "expire-snapshots " SPEC2 " --bogus",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run r = cli(dir, bad[i]);
        if (r.code != 2)
            print_error("%s: exit %d: %s\n", bad[i], r.code, r.err);
        assert_int_equal(r.code, 2);
        assert_non_null(strstr(r.err, "icemaint: "));
        run_free(&r);
    }
    /* The current snapshot cannot be expired by id: a safety refusal (exit 5, one line naming
     * it). */
    run r = cli(dir, "expire-snapshots " SPEC2 " --snapshot-id 4786266686210019019");
    assert_int_equal(r.code, 5);
    assert_non_null(strstr(r.err, "4786266686210019019"));
    run_free(&r);
    icmt_rmtree(dir);
    free(dir);
}

/* gc.enabled=false is refused with exit 5; a metadata file (static table) only dry-runs. */
static void test_refusals(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *loc = icmt_sprintf("%s/t", dir);
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    hist *h = hist_new(io, loc, 2, false, INT64_C(1700000000000));
    hist_append(h, "main", "A", NULL);
    hist_append(h, "main", "B", NULL);
    icm_table *t = hist_open_table(h);
    char *md = strdup(icm_table_get_metadata_location(t));
    icm_table_free(t);

    char *args = icmt_sprintf("expire-snapshots '%s' --older-than 1d", md);
    run r = cli(dir, args);
    assert_int_equal(r.code, 5); /* refused, as the orphan sweep refuses it */
    assert_non_null(strstr(r.err, "read-only"));
    run_free(&r);
    free(args);
    args = icmt_sprintf("--json expire-snapshots '%s' --older-than 1d --dry-run", md);
    r = cli(dir, args);
    assert_int_equal(r.code, 0);
    json_t *doc = icmt_json_parse(r.out);
    assert_int_equal(json_array_size(json_object_get(doc, "expired")), 1);
    json_decref(doc);
    run_free(&r);
    free(args);
    free(md);

    hist_set_property(h, "gc.enabled", "false");
    t = hist_open_table(h);
    md = strdup(icm_table_get_metadata_location(t));
    icm_table_free(t);
    args = icmt_sprintf("expire-snapshots '%s' --dry-run", md);
    r = cli(dir, args);
    assert_int_equal(r.code, 5);
    assert_non_null(strstr(r.err, "GC is disabled"));
    run_free(&r);
    free(args);
    free(md);
    hist_free(h);
    icm_fileio_free(io);
    free(loc);
    icmt_rmtree(dir);
    free(dir);
}

/* A v2 metadata document (new string) with one snapshot for each kind of reason: main
 * 1 <- 2 <- 3 (current), branch audit 2 <- 4 with its own min-snapshots-to-keep 2, tags v1
 * and "v<newline>2" at 1, and 5 and 6 in no branch; times are offsets from
 * 2026-01-01T00:00:00Z. */
static char *reasons_metadata(void)
{
    static const int64_t snaps[][3] = { /* id, parent (0: none), time offset in ms */
        {1, 0, 0},                    /* tag v1 */
        {2, 1, 86400000},             /* main's parent; audit's too */
        {3, 2, 3 * 86400000},         /* main, current */
        {4, 2, 2 * 86400000},         /* audit (own min-snapshots-to-keep 2), at the cutoff */
        {5, 1, 2 * 86400000 + 43200000}, /* in no branch, newer than the cutoff */
        {6, 0, -86400000}};           /* in no branch, older: expires */
    char *list = strdup("");
    for (size_t i = 0; i < sizeof snaps / sizeof snaps[0]; i++) {
        char parent[64] = "";
        if (snaps[i][1] != 0)
            snprintf(parent, sizeof parent, "\"parent-snapshot-id\":%lld,",
                     (long long)snaps[i][1]);
        char *next = icmt_sprintf(
            "%s%s{\"snapshot-id\":%lld,%s\"sequence-number\":%zu,\"timestamp-ms\":%lld,"
            "\"manifest-list\":\"/nonexistent/snap-%lld.avro\",\"summary\":{\"operation\":"
            "\"append\"}}",
            list, i ? "," : "", (long long)snaps[i][0], parent, i + 1,
            (long long)(INT64_C(1767225600000) + snaps[i][2]), (long long)snaps[i][0]);
        free(list);
        list = next;
    }
    char *md = icmt_sprintf(
        "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
        "\"location\":\"/nonexistent\",\"last-sequence-number\":6,\"last-updated-ms\":"
        "1767225600000,\"last-column-id\":0,\"current-schema-id\":0,\"schemas\":[{\"type\":"
        "\"struct\",\"schema-id\":0,\"fields\":[]}],\"default-spec-id\":0,\"partition-specs\":"
        "[{\"spec-id\":0,\"fields\":[]}],\"last-partition-id\":999,\"default-sort-order-id\":0,"
        "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{},"
        "\"current-snapshot-id\":3,\"snapshots\":[%s],\"refs\":{"
        "\"main\":{\"snapshot-id\":3,\"type\":\"branch\"},"
        "\"audit\":{\"snapshot-id\":4,\"type\":\"branch\",\"min-snapshots-to-keep\":2},"
        "\"v1\":{\"snapshot-id\":1,\"type\":\"tag\"},"
        "\"v\\n2\":{\"snapshot-id\":1,\"type\":\"tag\"}}}",
        list);
    free(list);
    return md;
}

/* The report states the cutoff (ISO-8601 and ms) and retain-last applied, and why each kept
 * snapshot is kept; --json carries the same (cutoff_ms, retain_last, retained_reasons). */
static void test_report_states_rules_and_reasons(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *path = icmt_sprintf("%s/v1.metadata.json", dir);
    char *md = reasons_metadata();
    icmt_write_file(path, md, strlen(md));
    free(md);
    /* the cutoff is 2026-01-03T00:00:00Z */
    char *args = icmt_sprintf("expire-snapshots '%s' --dry-run --cleanup none --older-than "
                              "1767398400000 --retain-last 1", path);
    run r = cli(dir, args);
    assert_int_equal(r.code, 0);
    const char *want =
        "cutoff 2026-01-03T00:00:00.000Z (1767398400000 ms), retain-last 1\n"
        "would expire 1 snapshot: 6\n"
        "kept 5 snapshots: 1, 2, 3, 4, 5\n"
        "  1: ref v1, ref v\\n2\n" /* a name's control characters escaped */
        "  2: min-snapshots-to-keep of branch audit\n"
        "  3: current, ref main, retain-last (branch main), newer than the cutoff\n"
        "  4: ref audit, min-snapshots-to-keep of branch audit, newer than the cutoff\n"
        "  5: newer than the cutoff\n";
    if (strncmp(r.out, want, strlen(want)) != 0)
        fail_msg("report:\n%s\nexpected it to start with:\n%s", r.out, want);
    run_free(&r);
    free(args);
    args = icmt_sprintf("--json expire-snapshots '%s' --dry-run --cleanup none --older-than "
                        "1767398400000 --retain-last 1", path);
    r = cli(dir, args);
    assert_int_equal(r.code, 0);
    json_t *doc = icmt_json_parse(r.out);
    assert_int_equal(json_integer_value(json_object_get(doc, "cutoff_ms")), 1767398400000);
    assert_int_equal(json_integer_value(json_object_get(doc, "retain_last")), 1);
    json_t *reasons = json_object_get(doc, "retained_reasons");
    json_t *want_json = icmt_json_parse(
        "[{\"snapshot_id\":1,\"reasons\":[{\"reason\":\"ref\",\"ref\":\"v1\"},"
        "{\"reason\":\"ref\",\"ref\":\"v\\n2\"}]},"
        "{\"snapshot_id\":2,\"reasons\":[{\"reason\":\"min_snapshots_to_keep\","
        "\"ref\":\"audit\"}]},"
        "{\"snapshot_id\":3,\"reasons\":[{\"reason\":\"current\"},{\"reason\":\"ref\","
        "\"ref\":\"main\"},{\"reason\":\"retain_last\",\"ref\":\"main\"},"
        "{\"reason\":\"newer_than_cutoff\",\"ref\":\"main\"}]},"
        "{\"snapshot_id\":4,\"reasons\":[{\"reason\":\"ref\",\"ref\":\"audit\"},"
        "{\"reason\":\"min_snapshots_to_keep\",\"ref\":\"audit\"},"
        "{\"reason\":\"newer_than_cutoff\",\"ref\":\"audit\"}]},"
        "{\"snapshot_id\":5,\"reasons\":[{\"reason\":\"newer_than_cutoff\"}]}]");
    if (!json_equal(reasons, want_json)) {
        char *got = json_dumps(reasons, 0);
        print_error("retained_reasons: %s\n", got);
        free(got);
        fail();
    }
    json_t *retained = json_object_get(doc, "retained");
    assert_int_equal(json_array_size(retained), 5);
    assert_int_equal(json_integer_value(json_array_get(retained, 0)), 1);
    json_decref(want_json);
    json_decref(doc);
    run_free(&r);
    free(args);
    /* a malformed retention property is an error (exit 1) naming the file and the property */
    md = reasons_metadata();
    char *bad = icmt_sprintf("%.*s{\"history.expire.min-snapshots-to-keep\":\" 2\"}%s",
                             (int)(strstr(md, "{},") - md), md, strstr(md, "{},") + 2);
    icmt_write_file(path, bad, strlen(bad));
    free(bad);
    free(md);
    args = icmt_sprintf("expire-snapshots '%s' --dry-run --cleanup none", path);
    r = cli(dir, args);
    assert_int_equal(r.code, 1);
    char *line = icmt_sprintf("icemaint: %s: table property history.expire.min-snapshots-to-keep "
                              "has an invalid value ' 2'", path);
    if (strncmp(r.err, line, strlen(line)) != 0)
        fail_msg("stderr: %s", r.err);
    free(line);
    run_free(&r);
    free(args);
    free(path);
    icmt_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dry_run_then_real),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_report_states_rules_and_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
