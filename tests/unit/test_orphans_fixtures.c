/*
 * tests/unit/test_orphans_fixtures.c: dry runs of the orphan sweep on real engine-written tables
 * from ../shared/fixtures (read in place, remapped with the path-map FileIO as the fixtures
 * README describes), with a cutoff far in the future so every file is old enough.
 *
 * The expected orphans are hand-listed from an independent walk of each table (metadata JSON,
 * manifest lists and manifests decoded outside icemaint), and checked against the file tree:
 *  - impala iceberg_v2_equality_delete_schema_evolution: exactly the `*.avro_tmp` stray;
 *  - duckdb equality_deletes/mytable_partitioned: nothing (`.crc` side files are hidden);
 *  - duckdb equality_deletes/mytable: refused — v7 names manifest list
 *    snap-7342794868382145167-1-…avro, which is missing (a commit retry wrote -3-), so the keep
 *    set would be incomplete;
 *  - unitycatalog-uniform marksheet_uniform: refused, dry run too — `_delta_log/` beside the
 *    Iceberg metadata: Delta Lake manages the folder, and its log may name files the Iceberg
 *    metadata does not (other_format.h);
 *  - netflix temperatures (s3:// paths): nothing;
 *  - the PyIceberg warehouse where 8 tables share one folder: refused, naming another table.
 * And on every table of index.tsv (location remapped to its folder): a dry run either refuses or
 * reports no file that the table references (collected with jansson and the manifest reader).
 * Nothing is ever deleted (dry runs; the FileIO below also refuses every delete).
 */
#include <sys/stat.h>

#include <jansson.h>

#include "icemaint/manifest.h"

#include "test_orphans_common.h"
#include "util/location.h"
#include "util/util.h"

/* Local FileIO behind one path-map rule. */
static icm_fileio *mapped_io(const char *from, const char *to_rel)
{
    char *to = icmt_sprintf("%s/%s", icmt_fixtures_dir(), to_rel);
    icm_fileio *local = NULL, *pm = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icm_path_map rule = {from, to};
    icmt_ok(icm_fileio_pathmap_new(&pm, local, &rule, 1));
    free(to);
    return pm;
}

static bool fixtures_present(void)
{
    struct stat st;
    char *p = icmt_sprintf("%s/index.tsv", icmt_fixtures_dir());
    bool ok = stat(p, &st) == 0;
    free(p);
    return ok;
}

/* Dry run with every file old enough. */
static int dry_run(icm_table *t, icm_orphan_result **r)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.dry_run = true;
    o.force = true;
    o.has_older_than = true;
    o.older_than_ms = icm__now_ms() + 365 * DAY_MS;
    return icm_orphan_sweep(r, t, &o);
}

static void test_impala_avro_tmp(void **state)
{
    (void)state;
    if (!fixtures_present())
        icmt_skip_because("the fixtures' index %s/index.tsv is missing", icmt_fixtures_dir());
    icm_fileio *io = mapped_io("/test-warehouse/iceberg_test", "impala/testdata/data/iceberg_test");
    const char *loc =
        "/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_equality_delete_schema_evolution";
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, io, loc));
    icm_orphan_result *r = NULL;
    icmt_ok(dry_run(t, &r));
    const char *expected[] = {
        "/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_equality_delete_schema_evolution"
        "/metadata/snap-5816823095034839884-1-fb7a4022-ee0a-4540-87d8-b8fa8e4c8596.avro_tmp",
        NULL};
    assert_orphans(r, expected);
    assert_int_equal(r->counts[ICM_ORPHAN_OTHER], 1);
    /* 22 files: 7 data, 4 manifests, 3 lists, 6 metadata files, the hint, the stray */
    assert_int_equal(r->listed, 22);
    assert_int_equal(r->referenced_listed, 21);
    icm_orphan_result_free(r);
    icm_table_free(t);
    icm_fileio_free(io);
}

static void test_duckdb_equality_deletes(void **state)
{
    (void)state;
    if (!fixtures_present())
        icmt_skip_because("the fixtures' index %s/index.tsv is missing", icmt_fixtures_dir());
    icm_fileio *io = mapped_io("data/persistent/equality_deletes",
                               "duckdb-iceberg/data/persistent/equality_deletes");
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, io,
                               "data/persistent/equality_deletes/warehouse/mydb/"
                               "mytable_partitioned"));
    icm_orphan_result *r = NULL;
    icmt_ok(dry_run(t, &r));
    const char *none[] = {NULL};
    assert_orphans(r, none);
    /* 9 data/delete files, 5 manifests, 5 lists, 6 metadata files, the hint; 26 .crc */
    assert_int_equal(r->listed, 52);
    assert_int_equal(r->hidden, 26);
    assert_int_equal(r->referenced_listed, 26);
    icm_orphan_result_free(r);
    icm_table_free(t);

    /* mytable: a retained snapshot's manifest list is missing: refuse */
    icmt_ok(icm_table_open_dir(&t, io, "data/persistent/equality_deletes/warehouse/mydb/mytable"));
    assert_int_equal(dry_run(t, &r), ICM_EREFUSED);
    assert_null(r);
    assert_non_null(strstr(icm_error_last()->location,
                           "snap-7342794868382145167-1-34f7dec7-90c5-4cd5-b158-5782b73fc010.avro"));
    assert_non_null(strstr(icm_error_last()->message, "manifest list"));
    icm_table_free(t);
    icm_fileio_free(io);
}

static void test_uniform_delta_log(void **state)
{
    (void)state;
    if (!fixtures_present())
        icmt_skip_because("the fixtures' index %s/index.tsv is missing", icmt_fixtures_dir());
    icm_fileio *io = mapped_io("file:/tmp/marksheet_uniform",
                               "unitycatalog-uniform/etc/data/external/unity/default/tables/"
                               "marksheet_uniform");
    icm_table *t = NULL;
    icmt_ok(icm_table_open_static(&t, io,
                                  "file:/tmp/marksheet_uniform/metadata/"
                                  "00002-5b7aa739-d074-4764-b49d-ad6c63419576.metadata.json"));
    icm_orphan_result *r = NULL;
    assert_int_equal(dry_run(t, &r), ICM_EREFUSED);
    assert_null(r);
    assert_string_equal(icm_error_last()->location, "file:/tmp/marksheet_uniform");
    assert_non_null(strstr(icm_error_last()->message, "_delta_log/"));
    assert_non_null(strstr(icm_error_last()->message, "VACUUM"));
    icm_table_free(t);
    icm_fileio_free(io);
}

static void test_netflix_s3(void **state)
{
    (void)state;
    if (!fixtures_present())
        icmt_skip_because("the fixtures' index %s/index.tsv is missing", icmt_fixtures_dir());
    const char *loc = "s3://nflx-secure-dataeng-prod-us-east-1/iceberg/warehouse/dpratap.db/"
                      "84cf6afa-e639-49a3-a294-bd124249ff74/temperatures";
    icm_fileio *io = mapped_io(loc, "netflix-temperatures/python/tests/warehouse/temperatures");
    char *md = icmt_sprintf("%s/metadata/00001-14139f1e-0653-489c-8d9a-d27e78c13fb9.metadata.json",
                            loc);
    icm_table *t = NULL;
    icmt_ok(icm_table_open_static(&t, io, md));
    icm_orphan_result *r = NULL;
    icmt_ok(dry_run(t, &r));
    const char *none[] = {NULL};
    assert_orphans(r, none);
    assert_int_equal(r->listed, 17);
    assert_int_equal(r->referenced_listed, 17);
    icm_orphan_result_free(r);
    icm_table_free(t);
    free(md);
    icm_fileio_free(io);
}

static void test_pyiceberg_shared_folder(void **state)
{
    (void)state;
    if (!fixtures_present())
        icmt_skip_because("the fixtures' index %s/index.tsv is missing", icmt_fixtures_dir());
    icm_fileio *io = mapped_io("file://./warehouse",
                               "iceberg-python-pr/pyiceberg-mixed-warehouse/warehouse");
    icm_table *t = NULL;
    icmt_ok(icm_table_open_static(&t, io,
                                  "file://./warehouse/test_ns.db/target/metadata/"
                                  "00002-4cec4fce-477d-420b-bce2-8a990caf9aa1.metadata.json"));
    icm_orphan_result *r = NULL;
    assert_int_equal(dry_run(t, &r), ICM_EREFUSED);
    assert_null(r);
    assert_non_null(strstr(icm_error_last()->message, "another table's metadata"));
    assert_non_null(strstr(icm_error_last()->location, "file://./warehouse/test_ns.db/target/"
                                                       "metadata/"));
    icm_table_free(t);
    icm_fileio_free(io);
}

/* ---- every fixture table: a dry run never reports a referenced file -------------------- */

/* The references of one table, collected independently of the sweep: the metadata JSON read
 * with jansson (metadata-log, manifest lists or v1 inline manifests, statistics) and the
 * manifests with the manifest reader (every entry that is not DELETED). Normalised forms. */
typedef struct refs {
    strv v;
    icm_fileio *io;
    bool incomplete; /* a manifest list or manifest could not be read */
} refs;

static void refs_add(refs *r, const char *loc)
{
    char *n = NULL;
    icmt_ok(icm__location_fs_path(loc, &n));
    strv_push(&r->v, n);
    icm_free(n);
}

static int on_ref_entry(const icm_manifest_entry *e, void *payload)
{
    if (e->status != ICM_ENTRY_DELETED)
        refs_add(payload, e->data_file.file_path);
    return 0;
}

static int on_ref_manifest(const icm_manifest_file *mf, void *payload)
{
    refs *r = payload;
    refs_add(r, mf->manifest_path);
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    if (icm_manifest_read(r->io, mf, &ro, on_ref_entry, r) != 0)
        r->incomplete = true;
    return 0;
}

static void collect_refs(refs *r, const char *md_location)
{
    char *text = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&text, &len, r->io, md_location));
    json_t *doc = json_loadb(text, len, 0, NULL);
    icm_free(text);
    if (doc == NULL) { /* compressed metadata: the sweep reads it; skip the table */
        r->incomplete = true;
        return;
    }
    refs_add(r, md_location);
    size_t i, k;
    json_t *x, *m;
    json_array_foreach(json_object_get(doc, "metadata-log"), i, x)
        refs_add(r, json_string_value(json_object_get(x, "metadata-file")));
    json_array_foreach(json_object_get(doc, "snapshots"), i, x)
    {
        const char *list = json_string_value(json_object_get(x, "manifest-list"));
        if (list != NULL) {
            refs_add(r, list);
            icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
            if (icm_manifest_list_read(r->io, list, &lo, on_ref_manifest, r) != 0)
                r->incomplete = true;
        }
        json_array_foreach(json_object_get(x, "manifests"), k, m)
        {
            refs_add(r, json_string_value(m));
            icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
            if (icm_manifest_read_v1_embedded(r->io, json_string_value(m),
                                              json_integer_value(json_object_get(
                                                  x, "snapshot-id")),
                                              &ro, on_ref_entry, r) != 0)
                r->incomplete = true;
        }
    }
    static const char *const stats[] = {"statistics", "partition-statistics"};
    for (size_t s = 0; s < 2; s++)
        json_array_foreach(json_object_get(doc, stats[s]), i, x)
            refs_add(r, json_string_value(json_object_get(x, "statistics-path")));
    json_decref(doc);
}

/* One index.tsv row: table_dir, current_metadata (relative), location_in_metadata. Returns
 * 1 when the sweep ran, 0 when it refused or could not open the table. */
static int sweep_fixture_row(const char *table_dir, const char *current, const char *location,
                             size_t *checked_orphans)
{
    icm_fileio *local = NULL, *io = NULL;
    char *to = icmt_sprintf("%s/%s", icmt_fixtures_dir(), table_dir);
    icmt_ok(icm_fileio_local_new(&local));
    icm_path_map rule = {location, to};
    int rc = icm_fileio_pathmap_new(&io, local, &rule, 1);
    free(to);
    if (rc != 0)
        return 0; /* an unusable prefix (e.g. "./x"): nothing to check */
    char *md = icmt_sprintf("%s/%s", location, current);
    icm_table *t = NULL;
    int ran = 0;
    if (icm_table_open_static(&t, io, md) == 0) {
        icm_orphan_result *r = NULL;
        rc = dry_run(t, &r);
        if (rc == 0) {
            refs ref = {{NULL, 0}, io, false};
            collect_refs(&ref, md);
            for (size_t i = 0; i < r->orphan_count; i++) {
                char *n = NULL;
                icmt_ok(icm__location_fs_path(r->orphans[i].path, &n));
                if (strv_has(&ref.v, n))
                    print_error("%s: referenced file reported as orphan: %s\n", table_dir, n);
                assert_false(strv_has(&ref.v, n));
                icm_free(n);
            }
            /* a sweep that ran must have read every manifest list and manifest */
            assert_false(ref.incomplete && r->orphan_count > 0 && strstr(md, ".gz.") == NULL);
            *checked_orphans += r->orphan_count;
            strv_free(&ref.v);
            icm_orphan_result_free(r);
            ran = 1;
        } else {
            assert_true(rc == ICM_EREFUSED || rc == ICM_ENOTFOUND || rc == ICM_EUNSUPPORTED ||
                        rc == ICM_EINVALID || rc == ICM_EIO);
        }
        icm_table_free(t);
    }
    free(md);
    icm_fileio_free(io);
    return ran;
}

static void test_every_fixture_table(void **state)
{
    (void)state;
    if (!fixtures_present())
        icmt_skip_because("the fixtures' index %s/index.tsv is missing", icmt_fixtures_dir());
    char *index = icmt_sprintf("%s/index.tsv", icmt_fixtures_dir());
    FILE *f = fopen(index, "r");
    assert_non_null(f);
    char line[8192];
    size_t rows = 0, ran = 0, orphans = 0;
    bool header = true;
    while (fgets(line, sizeof line, f) != NULL) {
        if (header) {
            header = false;
            continue;
        }
        line[strcspn(line, "\r\n")] = '\0';
        char *cols[32];
        size_t n = 0;
        for (char *c = line; n < 32;) {
            cols[n++] = c;
            char *tab = strchr(c, '\t');
            if (tab == NULL)
                break;
            *tab = '\0';
            c = tab + 1;
        }
        if (n < 21 || cols[20][0] == '\0')
            continue;
        rows++;
        ran += (size_t)sweep_fixture_row(cols[0], cols[7], cols[20], &orphans);
    }
    fclose(f);
    free(index);
    print_message("fixture tables: %zu rows, %zu swept (dry run), %zu orphans checked\n", rows,
                  ran, orphans);
    assert_true(rows >= 100);
    assert_true(ran >= 40); /* the property is not checked vacuously */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_impala_avro_tmp),
        cmocka_unit_test(test_duckdb_equality_deletes),
        cmocka_unit_test(test_uniform_delta_log),
        cmocka_unit_test(test_netflix_s3),
        cmocka_unit_test(test_pyiceberg_shared_folder),
        cmocka_unit_test(test_every_fixture_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
