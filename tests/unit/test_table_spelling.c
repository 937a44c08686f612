/*
 * tests/unit/test_table_spelling.c: two data-loss classes in the library, where the rules live.
 *  - non-canonical spellings of a table: icm_location_canonical (working directory, `.`/`..` as the
 *    kernel resolves them, `file:` forms); icm_table_open_dir on a relative, dotted or linked
 *    spelling opens the table under one absolute name and its commits record only absolute
 *    metadata-log entries; a relative metadata-log entry an older icemaint wrote still keeps its
 *    file in the sweep; a relative warehouse, table location or registered file is recorded
 *    absolute;
 *  - files the catalog itself lives in: a sweep whose listing location holds its SQL catalog's
 *    SQLite database (or another catalog table) refuses, and never plans the database even when
 *    carved out.
 * Every table is built with the library in a temporary folder (local FileIO).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icemaint/catalog.h"
#include "icemaint/fileio.h"
#include "icemaint/metadata.h"
#include "icemaint/orphans.h"
#include "testutil.h"

#define SCHEMA_JSON                                                                          \
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["                                      \
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}"

#define TEN_DAYS_MS INT64_C(864000000)

static char *canonical(const char *loc)
{
    char *out = NULL;
    icmt_ok(icm_location_canonical(&out, loc));
    char *copy = strdup(out);
    icm_free(out);
    return copy;
}

/* ---- icm_location_canonical ---- */

static void canonical_spellings(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *real = realpath(dir, NULL);
    char *old_cwd = getcwd(NULL, 0);
    char *sub = icmt_sprintf("%s/a/b", real);
    char *mk = icmt_sprintf("mkdir -p '%s' '%s/t' && ln -s '%s' '%s/lnk'", sub, real, sub, real);
    assert_int_equal(system(mk), 0);
    assert_int_equal(chdir(real), 0);

    struct {
        const char *in, *want_rel; /* want: `real` + want_rel, or want_rel when absolute */
    } cases[] = {
        {"t", "/t"},
        {"./t", "/t"},
        {"t/", "/t"},
        {".//t/./", "/t"},
        {"a/../t", "/t"},
        {"file:t", "/t"},
        {"lnk/../x", "/a/x"},          /* `..` after a link: where the kernel goes */
        {"lnk/./y", "/lnk/y"},         /* a link without `..` keeps its spelling */
        {"/p//q/./r/", "/p/q/r"},
        {"file:/p", "/p"},
        {"file:///p", "/p"},
        {"file://localhost/p", "/p"},
        {"s3://b/k/../x", "s3://b/k/../x"}, /* an object-store key is its bytes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = canonical(cases[i].in);
        char *want = cases[i].want_rel[0] == '/' && cases[i].in[0] != '/' &&
                             strncmp(cases[i].in, "file:/", 6) != 0
                         ? icmt_sprintf("%s%s", real, cases[i].want_rel)
                         : icmt_sprintf("%s", cases[i].want_rel);
        if (strcmp(got, want) != 0)
            fail_msg("canonical(%s) = %s, want %s", cases[i].in, got, want);
        free(got);
        free(want);
    }
    char *out = NULL;
    assert_int_equal(icm_location_canonical(&out, "missing/../t"), ICM_ENOTFOUND);
    assert_null(out);
    assert_non_null(strstr(icm_error_last()->message, "'..'"));
    assert_int_equal(icm_location_canonical(&out, ""), ICM_EINVALID);

    assert_int_equal(chdir(old_cwd), 0);
    icmt_rmtree(dir);
    free(mk);
    free(sub);
    free(old_cwd);
    free(real);
    free(dir);
}

/* ---- tables ---- */

typedef struct tfx {
    char *dir;       /* realpath of the temporary folder */
    char *tdir;      /* <dir>/wh/db/t: a filesystem-layout table */
    icm_fileio *io;
} tfx;

static int tfx_setup(void **state)
{
    tfx *f = calloc(1, sizeof *f);
    char *tmp = icmt_mkdtemp();
    f->dir = realpath(tmp, NULL);
    free(tmp);
    f->tdir = icmt_sprintf("%s/wh/db/t", f->dir);
    icmt_ok(icm_fileio_local_new(&f->io));
    char *wh = icmt_sprintf("%s/wh", f->dir);
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_hadoop(&cat, "fs", wh, f->io));
    icmt_ok(icm_catalog_create_namespace(cat, "db"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "db.t", &o));
    icm_catalog_free(cat);
    free(wh);
    *state = f;
    return 0;
}

static int tfx_teardown(void **state)
{
    tfx *f = *state;
    icm_fileio_free(f->io);
    icmt_rmtree(f->dir);
    free(f->dir);
    free(f->tdir);
    free(f);
    return 0;
}

static void commit_property(icm_table *t, const char *key, const char *value)
{
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(md, key, value));
    icmt_ok(icm_table_commit(t, md));
    icm_table_metadata_free(md);
}

/* Every spelling of the table directory opens it under one absolute name, and commits through
 * it record absolute metadata-log entries (an older icemaint recorded `t/metadata/v1...`). */
static void open_dir_spellings_record_absolute_names(void **state)
{
    tfx *f = *state;
    char *old_cwd = getcwd(NULL, 0);
    char *ns_dir = icmt_sprintf("%s/wh/db", f->dir);
    char *mk = icmt_sprintf("mkdir '%s/sub' && ln -s '%s/wh' '%s/lnk'", ns_dir, f->dir, f->dir);
    assert_int_equal(system(mk), 0);
    assert_int_equal(chdir(ns_dir), 0);
    char *linked = icmt_sprintf("%s/lnk/db/t", f->dir);
    char *uri = icmt_sprintf("file://%s", f->tdir);
    const char *spellings[] = {"t", "./t", "sub/../t", "t//", linked, uri};
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        icm_table *t = NULL;
        icmt_ok(icm_table_open_dir(&t, f->io, spellings[i]));
        /* the metadata's own spelling of the folder (a link is followed to it) */
        assert_string_equal(icm_table_get_identifier(t), f->tdir);
        char key[16];
        snprintf(key, sizeof key, "k%zu", i);
        commit_property(t, key, spellings[i]);
        const char *now = icm_table_get_metadata_location(t);
        assert_int_equal(strncmp(now, f->tdir, strlen(f->tdir)), 0);
        const icm_table_metadata *md = icm_table_get_metadata(t);
        size_t n = icm_table_metadata_metadata_log_count(md);
        assert_int_equal(n, i + 1);
        for (size_t k = 0; k < n; k++) {
            const char *e = icm_table_metadata_metadata_log_at(md, k)->metadata_file;
            char *want = icmt_sprintf("%s/metadata/v%zu.metadata.json", f->tdir, k + 1);
            assert_string_equal(e, want);
            free(want);
        }
        icm_table_free(t);
    }
    assert_int_equal(chdir(old_cwd), 0);
    free(uri);
    free(linked);
    free(mk);
    free(ns_dir);
    free(old_cwd);
}

static void age_tree(const char *dir)
{
    char *cmd = icmt_sprintf("find '%s' -exec touch -h -d '10 days ago' {} +", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

static icm_orphan_result *sweep(icm_table *t, bool dry_run, const char *exclude, int want_rc)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.dry_run = dry_run;
    const char *ex[1] = {exclude};
    if (exclude != NULL) {
        o.exclude_locations = ex;
        o.exclude_location_count = 1;
    }
    icm_orphan_result *r = NULL;
    assert_int_equal(icm_orphan_sweep(&r, t, &o), want_rc);
    return r;
}

static bool planned(const icm_orphan_result *r, const char *suffix)
{
    for (size_t i = 0; i < r->orphan_count; i++) {
        size_t n = strlen(r->orphans[i].path), m = strlen(suffix);
        if (n >= m && strcmp(r->orphans[i].path + n - m, suffix) == 0)
            return true;
    }
    return false;
}

/* A metadata-log entry written relative by an older icemaint still keeps its file. */
static void relative_metadata_log_entry_keeps_its_file(void **state)
{
    tfx *f = *state;
    char *v1 = icmt_sprintf("%s/metadata/v1.metadata.json", f->tdir);
    char *text = icmt_read_file(v1, NULL);
    json_t *doc = icmt_json_parse(text);
    json_t *log = json_array();
    json_array_append_new(log, json_pack("{s:I,s:s}", "timestamp-ms", (json_int_t)1,
                                         "metadata-file", "t/metadata/v1.metadata.json"));
    json_object_set_new(doc, "metadata-log", log);
    char *v2_text = json_dumps(doc, JSON_COMPACT);
    char *v2 = icmt_sprintf("%s/metadata/v2.metadata.json", f->tdir);
    icmt_write_file(v2, v2_text, strlen(v2_text));
    char *hint = icmt_sprintf("%s/metadata/version-hint.text", f->tdir);
    icmt_write_file(hint, "2", 1);
    char *stray = icmt_sprintf("%s/data/stray.parquet", f->tdir);
    char *mk = icmt_sprintf("mkdir -p '%s/data'", f->tdir);
    assert_int_equal(system(mk), 0);
    icmt_write_file(stray, "x", 1);
    age_tree(f->dir);

    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, f->io, f->tdir));
    icm_orphan_result *r = sweep(t, false, NULL, 0);
    assert_int_equal(r->orphan_count, 1);
    assert_true(planned(r, "/data/stray.parquet"));
    assert_true(icmt_file_exists(v1));
    assert_false(icmt_file_exists(stray));
    icm_orphan_result_free(r);
    icm_table_free(t);
    free(mk);
    free(stray);
    free(hint);
    free(v2);
    free(v2_text);
    json_decref(doc);
    free(text);
    free(v1);
}

/* A copy of the table folder (its metadata names the original's location) fails the
 * own-metadata check: a commit and a real sweep are refused with nothing written, a dry sweep
 * warns; through a path map from the original location to the copy it is its own. */
static void copied_table_folder_is_not_its_own(void **state)
{
    tfx *f = *state;
    char *copy = icmt_sprintf("%s/backup-t", f->dir);
    char *stray = icmt_sprintf("%s/data/stray.parquet", copy);
    char *mk = icmt_sprintf("cp -a '%s' '%s' && mkdir -p '%s/data'", f->tdir, copy, copy);
    assert_int_equal(system(mk), 0);
    icmt_write_file(stray, "x", 1);
    age_tree(f->dir);
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, f->io, copy));
    assert_int_equal(icm_table_check_own_metadata(t), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "own-metadata check"));
    char *hint = icmt_sprintf("--path-map %s=%s", f->tdir, copy);
    assert_non_null(strstr(icm_error_last()->message, hint));
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(md, "k", "v"));
    assert_int_equal(icm_table_commit(t, md), ICM_EREFUSED);
    char *v2 = icmt_sprintf("%s/metadata/v2.metadata.json", copy);
    char *orig_v2 = icmt_sprintf("%s/metadata/v2.metadata.json", f->tdir);
    assert_false(icmt_file_exists(v2));
    assert_false(icmt_file_exists(orig_v2));
    icm_orphan_result *r = sweep(t, false, NULL, ICM_EREFUSED);
    assert_null(r);
    r = sweep(t, true, NULL, 0);
    assert_int_equal(r->warning_count, 1);
    assert_non_null(strstr(r->warnings[0], "a real run would be refused"));
    icm_orphan_result_free(r);
    assert_true(icmt_file_exists(stray));
    icm_table_free(t);

    icm_path_map rule = {f->tdir, copy};
    icm_fileio *local = NULL, *mapped = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_pathmap_new(&mapped, local, &rule, 1));
    icmt_ok(icm_table_open_dir(&t, mapped, copy));
    icmt_ok(icm_table_check_own_metadata(t));
    icmt_ok(icm_table_commit(t, md));
    assert_true(icmt_file_exists(v2));
    assert_false(icmt_file_exists(orig_v2));
    icm_table_free(t);
    icm_fileio_free(mapped);
    icm_table_metadata_free(md);
    free(orig_v2);
    free(v2);
    free(hint);
    free(mk);
    free(stray);
    free(copy);
}

/* A relative warehouse, table location or registered metadata file is recorded absolute. */
static void catalog_records_absolute_locations(void **state)
{
    tfx *f = *state;
    char *old_cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(f->dir), 0);
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_sqlite_create("sqlite:///rel.db"));
    icmt_ok(icm_catalog_open_sql(&cat, "c", "sqlite:///rel.db", "./wh2/", f->io, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(cat, "ns"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "ns.a", &o));
    icm_create_table_options o2 = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                   SCHEMA_JSON, NULL, "file:wh2/../b", NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "ns.b", &o2));
    char *want_a = icmt_sprintf("%s/wh2/ns/a", f->dir), *want_b = icmt_sprintf("%s/b", f->dir);
    const char *ids[] = {"ns.a", "ns.b"};
    const char *wants[] = {want_a, want_b};
    for (size_t i = 0; i < 2; i++) {
        icm_table *t = NULL;
        icmt_ok(icm_table_load(&t, cat, ids[i]));
        assert_string_equal(icm_table_metadata_location(icm_table_get_metadata(t)), wants[i]);
        icm_table_free(t);
    }
    /* a metadata file registered by a relative name: the pointer is absolute */
    char *pointer = NULL;
    icmt_ok(icm_catalog_load_table_location(&pointer, cat, "ns.b"));
    char *rel = icmt_sprintf(".%s", pointer + strlen(f->dir));
    icmt_ok(icm_catalog_drop_table(cat, "ns.b"));
    icmt_ok(icm_catalog_register_table(cat, "ns.b2", rel));
    char *again = NULL;
    icmt_ok(icm_catalog_load_table_location(&again, cat, "ns.b2"));
    assert_string_equal(again, pointer);
    icm_free(again);
    icm_free(pointer);
    free(rel);
    free(want_a);
    free(want_b);
    icm_catalog_free(cat);
    assert_int_equal(chdir(old_cwd), 0);
    free(old_cwd);
}

/* ---- files the catalog lives in: the SQLite catalog database under the table location ---- */

static void sqlite_database_under_table_location_is_refused_and_never_planned(void **state)
{
    tfx *f = *state;
    char *wh = icmt_sprintf("%s/sqlwh", f->dir);
    char *mk = icmt_sprintf("mkdir -p '%s'", wh);
    assert_int_equal(system(mk), 0);
    char *uri = icmt_sprintf("sqlite:///%s/catalog.db", wh);
    icmt_ok(icm_catalog_sqlite_create(uri));
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", uri, wh, f->io, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(cat, "ns"));
    /* at the warehouse root */
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, wh, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "ns.root", &o));
    icm_create_table_options o2 = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                   SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "ns.other", &o2));
    char *db = icmt_sprintf("%s/catalog.db", wh);
    char *stray = icmt_sprintf("%s/stray.parquet", wh);
    icmt_write_file(stray, "x", 1);
    age_tree(wh);

    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "ns.root"));
    icm_orphan_result *r = sweep(t, true, NULL, ICM_EREFUSED);
    assert_null(r);
    assert_non_null(strstr(icm_error_last()->message, "catalog"));
    /* carving the database out leaves ns.other's folder: still refused, naming it */
    r = sweep(t, true, db, ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "ns.other"));
    char *other = icmt_sprintf("%s/ns/other", wh);
    icm_orphan_options opts = ICM_ORPHAN_OPTIONS_INIT;
    const char *ex[2] = {db, other};
    opts.exclude_locations = ex;
    opts.exclude_location_count = 2;
    r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &opts));
    assert_int_equal(r->orphan_count, 1);
    assert_true(planned(r, "/stray.parquet"));
    assert_true(icmt_file_exists(db));
    assert_false(icmt_file_exists(stray));
    icm_orphan_result_free(r);
    /* a journal that appears after the check (here: only an inventory names it) is never
     * planned either: the catalog's files are kept by name */
    char *list = icmt_sprintf("%s/inventory.tsv", f->dir);
    char *lines = icmt_sprintf("%s\t10\t1000\n%s-journal\t10\t1000\n"
                               "%s/late.parquet\t10\t1000\n",
                               icm_table_get_metadata_location(t), db, wh);
    icmt_write_file(list, lines, strlen(lines));
    opts.file_list = list;
    opts.dry_run = true;
    r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &opts));
    assert_int_equal(r->orphan_count, 1);
    assert_true(planned(r, "/late.parquet"));
    icm_orphan_result_free(r);
    free(lines);
    free(list);
    icm_table_free(t);
    icm_catalog_free(cat);
    free(other);
    free(stray);
    free(db);
    free(uri);
    free(mk);
    free(wh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canonical_spellings),
        cmocka_unit_test_setup_teardown(open_dir_spellings_record_absolute_names, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(relative_metadata_log_entry_keeps_its_file, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(copied_table_folder_is_not_its_own, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(catalog_records_absolute_locations, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(
            sqlite_database_under_table_location_is_refused_and_never_planned, tfx_setup,
            tfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
