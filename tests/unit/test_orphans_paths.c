/*
 * tests/unit/test_orphans_paths.c: the orphan sweep's path rules on hand-written tables (no
 * snapshots; the referenced paths are metadata-log entries, which may name any location):
 *  - hidden paths and the partition-field exception (docs/semantics.md#sweep-location-rules);
 *  - scheme and authority equivalences and the three prefix-mismatch modes;
 *  - folders another table format manages (`_delta_log/`, `.hoodie/`: other_format.h) in the
 *    table location, between it and --location, and in the listing or a file list.
 * Each test asserts exactly which files are reported and which survive.
 */
#include "test_orphans_common.h"
#include "util/util.h"

#define UUID "7b6c0a1e-0000-4000-8000-0000000000aa"

typedef struct penv {
    icm_fileio *mem;
    int64_t now, old;
} penv;

static void penv_init(penv *e)
{
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e->mem));
}

/* Partition fields `_c2_trunc` (spec 0) and `_c1` (spec 1, spec
 * evolution) make `_c2_trunc=` and `_c1=` folders visible; everything else starting with `_`
 * or `.` stays hidden; a nested walker layout gives exactly its 4 visible files; the
 * filesystem table's version-hint.text and metadata file survive. */
static void test_hidden_paths(void **state)
{
    (void)state;
    penv e;
    penv_init(&e);
    const char *specs =
        "{\"spec-id\":0,\"fields\":[{\"name\":\"_c2_trunc\",\"transform\":\"truncate[2]\","
        "\"source-id\":2,\"field-id\":1000}]},"
        "{\"spec-id\":1,\"fields\":[{\"name\":\"_c2_trunc\",\"transform\":\"truncate[2]\","
        "\"source-id\":2,\"field-id\":1000},{\"name\":\"_c1\",\"transform\":\"identity\","
        "\"source-id\":1,\"field-id\":1001}]}";
    char *json = raw_metadata(UUID, "/t", specs, 1001, "", "", e.old);
    icm_table *t = raw_table(e.mem, "/t", json, e.old);
    const char *visible[] = {
        "/t/data/_c2_trunc=AA/s1.parquet",
        "/t/data/_c2_trunc=AA/_c1=1/s2.parquet",
        "/t/file1",
        "/t/normal_dir/file2",
        "/t/normal_dir/dep1/file3",
        "/t/normal_dir_1/file4",
        NULL};
    const char *hidden[] = {
        "/t/data/_c2_trunc/s3.parquet",      /* no '=': hidden */
        "/t/data/_show_field=v/s4.parquet",  /* not a partition field */
        "/t/data/_c2_truncX=AA/s5.parquet",  /* a longer name is another field */
        "/t/hidden_dir/.hidden_file",
        "/t/hidden_dir/_partition/file3",
        "/t/_other_log/00000.json",          /* (a `_delta_log/` refuses: other_format.h) */
        "/t/metadata/.v1.metadata.json.crc",
        NULL};
    for (size_t i = 0; visible[i] != NULL; i++)
        plant(e.mem, visible[i], e.old);
    for (size_t i = 0; hidden[i] != NULL; i++)
        plant(e.mem, hidden[i], e.old);
    strv before = list_all(e.mem, "/t");

    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e.now;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    assert_orphans(r, visible);
    assert_int_equal(r->hidden, 7);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, "/t");
    assert_survivors(&before, &after, visible);
    assert_true(strv_has(&after, "/t/metadata/version-hint.text"));
    assert_true(strv_has(&after, "/t/metadata/v1.metadata.json"));
    strv_free(&after);

    /* a --location that is itself hidden below the table root lists nothing deletable */
    o.location = "/t/hidden_dir";
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    assert_int_equal(r->orphan_count, 0);
    assert_int_equal(r->hidden, 2);
    icm_orphan_result_free(r);

    strv_free(&before);
    icm_table_free(t);
    free(json);
    icm_fileio_free(e.mem);
}

/* A table at s3://b/t whose metadata-log names files under other schemes and authorities;
 * the listing (of s3://b/t) names them all s3://b/t/... */
static icm_table *aliased_table(penv *e)
{
    const char *log =
        "{\"timestamp-ms\":1,\"metadata-file\":\"s3a://b/t/data/f-s3a.parquet\"},"
        "{\"timestamp-ms\":2,\"metadata-file\":\"s3n://b/t/data/f-s3n.parquet\"},"
        "{\"timestamp-ms\":3,\"metadata-file\":\"gs://b/t/data/f-gs.parquet\"},"
        "{\"timestamp-ms\":4,\"metadata-file\":\"s3://other/t/data/f-other.parquet\"},"
        "{\"timestamp-ms\":5,\"metadata-file\":\"s3://b/t/data/f-same.parquet\"}";
    char *json = raw_metadata(UUID, "s3://b/t", UNPARTITIONED, 999, "", log, e->old + 10);
    icm_table *t = raw_table(e->mem, "s3://b/t", json, e->old);
    free(json);
    static const char *const files[] = {
        "s3://b/t/data/f-s3a.parquet", "s3://b/t/data/f-s3n.parquet",
        "s3://b/t/data/f-gs.parquet",  "s3://b/t/data/f-other.parquet",
        "s3://b/t/data/f-same.parquet", "s3://b/t/data/stray.parquet", NULL};
    for (size_t i = 0; files[i] != NULL; i++)
        plant(e->mem, files[i], e->old);
    return t;
}

static bool message_has(const char *needle)
{
    const char *m = icm_error_last()->message;
    if (strstr(m, needle) == NULL) {
        print_error("message '%s' lacks '%s'\n", m, needle);
        return false;
    }
    return true;
}

static void test_prefix_mismatch_modes(void **state)
{
    (void)state;
    penv e;
    penv_init(&e);
    icm_table *t = aliased_table(&e);
    strv before = list_all(e.mem, "s3://b/t");
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e.now;
    o.dry_run = true;
    icm_orphan_result *r = NULL;

    /* ERROR (default): s3a/s3n are s3 by default; gs and the other bucket conflict */
    assert_int_equal(icm_orphan_sweep(&r, t, &o), ICM_EREFUSED);
    assert_null(r);
    assert_true(message_has("Unable to determine whether certain files are orphan"));
    assert_true(message_has("(gs, s3)"));
    assert_true(message_has("(other, b)"));
    assert_true(message_has("--prefix-mismatch"));

    /* IGNORE: conflicts are kept */
    o.prefix_mismatch = ICM_PREFIX_MISMATCH_IGNORE;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    const char *stray[] = {"s3://b/t/data/stray.parquet", NULL};
    assert_orphans(r, stray);
    assert_int_equal(r->conflicts, 2);
    icm_orphan_result_free(r);

    /* equivalences declared: no conflict at all, even in ERROR mode */
    o.prefix_mismatch = ICM_PREFIX_MISMATCH_ERROR;
    o.equal_schemes = "gs=s3";
    o.equal_authorities = "other,b=b";
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    assert_orphans(r, stray);
    assert_int_equal(r->conflicts, 0);
    icm_orphan_result_free(r);
    o.equal_schemes = o.equal_authorities = NULL;

    /* a malformed map */
    o.equal_schemes = "gs";
    assert_int_equal(icm_orphan_sweep(&r, t, &o), ICM_EINVALID);
    o.equal_schemes = NULL;

    /* DELETE: conflicts are orphans (a real run) */
    o.prefix_mismatch = ICM_PREFIX_MISMATCH_DELETE;
    o.dry_run = false;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    const char *gone[] = {"s3://b/t/data/stray.parquet", "s3://b/t/data/f-gs.parquet",
                          "s3://b/t/data/f-other.parquet", NULL};
    assert_orphans(r, gone);
    assert_int_equal(r->deleted, 3);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, "s3://b/t");
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&before);
    icm_table_free(t);
    icm_fileio_free(e.mem);
}

static void test_prefix_mismatch_parse(void **state)
{
    (void)state;
    icm_prefix_mismatch m;
    icmt_ok(icm_prefix_mismatch_parse(&m, "IGNORE"));
    assert_int_equal(m, ICM_PREFIX_MISMATCH_IGNORE);
    icmt_ok(icm_prefix_mismatch_parse(&m, "delete"));
    assert_int_equal(m, ICM_PREFIX_MISMATCH_DELETE);
    assert_int_equal(icm_prefix_mismatch_parse(&m, "none"), ICM_EINVALID);
}

/* An empty table at s3://b/t with the files `files` planted old. */
static icm_table *plain_table(penv *e, const char *const *files)
{
    char *json = raw_metadata(UUID, "s3://b/t", UNPARTITIONED, 999, "", "", e->old + 10);
    icm_table *t = raw_table(e->mem, "s3://b/t", json, e->old);
    free(json);
    for (size_t i = 0; files[i] != NULL; i++)
        plant(e->mem, files[i], e->old);
    return t;
}

static void assert_refused_at(icm_table *t, const icm_orphan_options *o, const char *where,
                              const char *what)
{
    icm_orphan_result *r = NULL;
    assert_int_equal(icm_orphan_sweep(&r, t, o), ICM_EREFUSED);
    assert_null(r);
    assert_string_equal(icm_error_last()->location, where);
    assert_true(message_has(what));
}

static void test_other_format_folders(void **state)
{
    (void)state;
    /* in the listing: refused naming the nested folder, dry run or not; carved out whole
     * with exclude_locations, the sweep goes on and leaves it be */
    penv e;
    penv_init(&e);
    const char *nested[] = {"s3://b/t/data/ext/_delta_log/00000000000000000000.json",
                            "s3://b/t/data/ext/part-0.parquet", "s3://b/t/data/stray.parquet",
                            NULL};
    icm_table *t = plain_table(&e, nested);
    strv before = list_all(e.mem, "s3://b/t");
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e.now;
    assert_refused_at(t, &o, "s3://b/t/data/ext", "--exclude-location");
    assert_true(message_has("_delta_log/"));
    o.dry_run = true;
    assert_refused_at(t, &o, "s3://b/t/data/ext", "VACUUM");
    o.dry_run = false;
    /* (excluding the log alone is no carve-out: the folder's data stays in the listing) */
    const char *log_only[] = {"s3://b/t/data/ext/_delta_log"};
    o.exclude_locations = log_only;
    o.exclude_location_count = 1;
    assert_refused_at(t, &o, "s3://b/t/data/ext", "_delta_log/");
    const char *ext[] = {"s3://b/t/data/ext"};
    o.exclude_locations = ext;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    const char *stray[] = {"s3://b/t/data/stray.parquet", NULL};
    assert_orphans(r, stray);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, "s3://b/t");
    assert_survivors(&before, &after, stray);
    strv_free(&after);
    strv_free(&before);

    /* the same through a file list (no listing at all) */
    char *dir = icmt_mkdtemp();
    char *list = icmt_sprintf("%s/inventory.tsv", dir);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    fprintf(f, "s3://b/t/data/ext/_delta_log/00000000000000000000.json\t1\t%lld\n",
            (long long)e.old);
    fclose(f);
    o = (icm_orphan_options)ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e.now;
    o.file_list = list;
    assert_refused_at(t, &o, "s3://b/t/data/ext", "_delta_log/");
    remove(list);
    remove(dir);
    free(list);
    free(dir);
    icm_table_free(t);
    icm_fileio_free(e.mem);

    /* in the table location: refused, no override (a Hudi timeline here) */
    penv_init(&e);
    const char *hudi[] = {"s3://b/t/.hoodie/hoodie.properties", "s3://b/t/data/stray.parquet",
                          NULL};
    t = plain_table(&e, hudi);
    o = (icm_orphan_options)ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e.now;
    o.dry_run = true;
    assert_refused_at(t, &o, "s3://b/t",
                      "Hudi's own cleaner must remove that format's files (no override)");
    icm_table_free(t);
    icm_fileio_free(e.mem);

    /* between the table location and --location */
    penv_init(&e);
    const char *between[] = {"s3://b/t/data/_delta_log/00000000000000000000.json",
                             "s3://b/t/data/sub/part-0.parquet", NULL};
    t = plain_table(&e, between);
    o = (icm_orphan_options)ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e.now;
    o.location = "s3://b/t/data/sub";
    assert_refused_at(t, &o, "s3://b/t/data", "_delta_log/");
    o.location = "s3://b/t/metadata"; /* a sibling folder: not in the Delta table */
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    icm_orphan_result_free(r);
    icm_table_free(t);
    icm_fileio_free(e.mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hidden_paths),
        cmocka_unit_test(test_prefix_mismatch_modes),
        cmocka_unit_test(test_prefix_mismatch_parse),
        cmocka_unit_test(test_other_format_folders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
