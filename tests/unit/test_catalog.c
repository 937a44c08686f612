/*
 * tests/unit/test_catalog.c: the SQL catalog on SQLite: the shared commit suite
 * (test_catalog_common.h) plus schema detection (V0 / V1, views), init_catalog_tables, URIs and
 * identifiers.
 */
#include <sqlite3.h>

#include "test_catalog_common.h"

/* A new catalog database (opening a catalog never creates one). */
static char *sqlfx_uri(const char *dir)
{
    char *uri = icmt_sprintf("sqlite:///%s/catalog.db", dir); /* dir is absolute: sqlite://// */
    icmt_ok(icm_catalog_sqlite_create(uri));
    return uri;
}

/* Run SQL directly on a SQLite file, as Java or PyIceberg would have left it. */
static void sqlite_run(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        print_error("%s\n", err);
        fail();
    }
    sqlite3_close(db);
}

/* Java JdbcCatalog's default (V0) tables: no iceberg_type, nullable property columns. */
static const char JAVA_V0_DDL[] =
    "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace "
    "VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, "
    "table_name));"
    "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace "
    "VARCHAR(255) NOT NULL, property_key VARCHAR(255), property_value VARCHAR(1000), PRIMARY KEY "
    "(catalog_name, namespace, property_key));";

typedef struct plain {
    char *dir, *db, *uri;
    icm_fileio *io;
} plain;

static plain plain_new(void)
{
    plain p;
    p.dir = icmt_mkdtemp();
    p.db = icmt_sprintf("%s/c.db", p.dir);
    p.uri = icmt_sprintf("sqlite:///%s", p.db);
    icmt_ok(icm_catalog_sqlite_create(p.uri));
    icmt_ok(icm_fileio_local_new(&p.io));
    return p;
}

static void plain_free(plain *p)
{
    icm_fileio_free(p->io);
    icmt_rmtree(p->dir);
    free(p->dir);
    free(p->db);
    free(p->uri);
}

static int string_cb(const char *name, void *payload)
{
    char *buf = payload;
    strcat(buf, name);
    strcat(buf, ";");
    return 0;
}

static void new_database_gets_v1(void **state)
{
    (void)state;
    plain p = plain_new();
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", p.uri, p.dir, p.io, NULL, 0));
    assert_true(icm__sql_catalog_is_v1(cat));
    assert_string_equal(icm_catalog_kind(cat), "sql");
    icmt_ok(icm_catalog_create_namespace(cat, "a"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "a.t", &o));
    icm_catalog_free(cat);
    /* The row carries iceberg_type = 'TABLE' as PyIceberg writes it. */
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(p.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT iceberg_type, previous_metadata_location FROM "
                                        "iceberg_tables WHERE catalog_name='c'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "TABLE");
    assert_int_equal(sqlite3_column_type(st, 1), SQLITE_NULL);
    sqlite3_finalize(st);
    sqlite3_close(db);
    plain_free(&p);
}

static void java_v0_database_is_used_as_v0(void **state)
{
    (void)state;
    plain p = plain_new();
    sqlite_run(p.db, JAVA_V0_DDL);
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", p.uri, p.dir, p.io, NULL, 0));
    assert_false(icm__sql_catalog_is_v1(cat));
    icmt_ok(icm_catalog_create_namespace(cat, "a"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "a.t", &o));
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "a.t"));
    icmt_ok(commit_change(t, "k", "v"));
    char *loc = NULL;
    icmt_ok(icm_catalog_load_table_location(&loc, cat, "a.t"));
    assert_string_equal(loc, icm_table_get_metadata_location(t));
    icm_free(loc);
    icm_table_free(t);
    icm_catalog_free(cat);
    /* Still V0: nothing was migrated. */
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(p.db, &db), SQLITE_OK);
    assert_int_not_equal(
        sqlite3_prepare_v2(db, "SELECT iceberg_type FROM iceberg_tables", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    plain_free(&p);
}

static void v1_views_are_not_tables(void **state)
{
    (void)state;
    plain p = plain_new();
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", p.uri, p.dir, p.io, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(cat, "a"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "a.t", &o));
    sqlite_run(p.db, "INSERT INTO iceberg_tables VALUES ('c','a','v','/x/v.metadata.json',NULL,"
                     "'VIEW'); INSERT INTO iceberg_tables VALUES ('c','a','legacy',"
                     "'/x/l.metadata.json',NULL,NULL); INSERT INTO iceberg_tables VALUES "
                     "('other','b','t','/x/o.metadata.json',NULL,'TABLE');");
    char names[256] = "";
    icmt_ok(icm_catalog_list_tables(cat, "a", string_cb, names));
    assert_string_equal(names, "legacy;t;"); /* NULL type reads as TABLE; the view is hidden */
    char *loc = NULL;
    assert_int_equal(icm_catalog_load_table_location(&loc, cat, "a.v"), ICM_ENOTFOUND);
    assert_string_equal(icm_error_last()->location, "a.v"); /* the whole name */
    assert_non_null(strstr(icm_error_last()->message, "does not exist in catalog"));
    icmt_ok(icm_catalog_load_table_location(&loc, cat, "a.legacy"));
    icm_free(loc);
    names[0] = '\0';
    icmt_ok(icm_catalog_list_namespaces(cat, NULL, string_cb, names));
    assert_string_equal(names, "a;"); /* the other catalog's namespace b is not ours */
    icm_catalog_free(cat);
    plain_free(&p);
}

static void nested_namespaces_list_one_level(void **state)
{
    (void)state;
    plain p = plain_new();
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", p.uri, p.dir, p.io, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(cat, "a.b"));
    icmt_ok(icm_catalog_create_namespace(cat, "a.c.d"));
    icmt_ok(icm_catalog_create_namespace(cat, "z"));
    char names[256] = "";
    icmt_ok(icm_catalog_list_namespaces(cat, NULL, string_cb, names));
    assert_string_equal(names, "a;z;");
    names[0] = '\0';
    icmt_ok(icm_catalog_list_namespaces(cat, "a", string_cb, names));
    assert_string_equal(names, "a.b;a.c;");
    assert_int_equal(icm_catalog_list_namespaces(cat, "q", string_cb, names), ICM_ENOTFOUND);
    bool exists = false;
    icmt_ok(icm_catalog_namespace_exists(&exists, cat, "a")); /* parent of a.b */
    assert_true(exists);
    icmt_ok(icm_catalog_namespace_exists(&exists, cat, "a.b.x"));
    assert_false(exists);
    icm_catalog_free(cat);
    plain_free(&p);
}

static void init_catalog_tables_false_requires_tables(void **state)
{
    (void)state;
    plain p = plain_new();
    icm_catalog *cat = NULL;
    icm_property no_init = {"init_catalog_tables", "false"};
    assert_int_equal(icm_catalog_open_sql(&cat, "c", p.uri, p.dir, p.io, &no_init, 1),
                     ICM_ENOTFOUND);
    assert_null(cat);
    plain_free(&p);
}

static void uris_and_identifiers(void **state)
{
    (void)state;
    icm__sql_store *s = NULL;
    assert_int_equal(icm__sql_store_open_uri(&s, "mysql://x/y"), ICM_EUNSUPPORTED);
    assert_int_equal(icm__sql_store_open_uri(&s, "mysql://user:secret@h/db"), ICM_EUNSUPPORTED);
    assert_string_equal(icm_error_last()->location, "mysql://user:***@h/db"); /* no password */
    assert_int_equal(icm__sql_store_open_uri(&s, "nothing"), ICM_EINVALID);
    icmt_ok(icm__sql_store_open_uri(&s, "sqlite:///:memory:"));
    s->methods->free(s);
    icmt_ok(icm__sql_store_open_uri(&s, "sqlite://"));
    s->methods->free(s);
    /* sqlite:///rel.db is relative to the working directory (SQLAlchemy's rule). Opening
     * never creates the database: a missing one is ENOTFOUND naming its absolute path, and
     * nothing is left behind; icm_catalog_sqlite_create is the explicit way. */
    char *dir = icmt_mkdtemp();
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(icm__sql_store_open_uri(&s, "sqlite:///rel.db"), ICM_ENOTFOUND);
    assert_null(s);
    char *want = icmt_sprintf("%s/rel.db", dir);
    assert_string_equal(icm_error_last()->location, want);
    assert_non_null(strstr(icm_error_last()->message, "no such catalog database"));
    free(want);
    assert_false(icmt_file_exists("rel.db"));
    assert_int_equal(icm_catalog_sqlite_create("postgresql://h/db"), ICM_EINVALID);
    icmt_ok(icm_catalog_sqlite_create("sqlite:///rel.db"));
    assert_true(icmt_file_exists("rel.db"));
    icmt_ok(icm__sql_store_open_uri(&s, "sqlite:///rel.db"));
    s->methods->free(s);
    icmt_ok(icm_catalog_sqlite_create("sqlite:///rel.db")); /* already there: left alone */
    assert_int_equal(chdir(cwd), 0);
    icmt_rmtree(dir);
    free(dir);

    plain p = plain_new();
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", p.uri, NULL, p.io, NULL, 0));
    char *loc = NULL;
    assert_int_equal(icm_catalog_load_table_location(&loc, cat, "tbl"), ICM_EINVALID);
    assert_int_equal(icm_catalog_load_table_location(&loc, cat, "a..tbl"), ICM_EINVALID);
    assert_int_equal(icm_catalog_load_table_location(&loc, cat, "a."), ICM_EINVALID);
    icmt_ok(icm_catalog_create_namespace(cat, "a"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    /* No warehouse and no location: refused before anything is written. */
    assert_int_equal(icm_catalog_create_table(NULL, cat, "a.t", &o), ICM_EINVALID);
    char *where = icmt_sprintf("%s/explicit", p.dir);
    icm_create_table_options o2 = {
        ICM_CREATE_TABLE_OPTIONS_VERSION,
        SCHEMA_JSON,
        "{\"spec-id\":0,\"fields\":[{\"name\":\"id_b\",\"transform\":\"bucket[4]\","
        "\"source-id\":1}]}",
        where, NULL, 0};
    icmt_ok(icm_catalog_create_table(&loc, cat, "a.t", &o2));
    char *prefix = icmt_sprintf("%s/metadata/00000-", where);
    assert_true(strncmp(loc, prefix, strlen(prefix)) == 0);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "a.t"));
    assert_int_equal(icm_table_metadata_spec_count(icm_table_get_metadata(t)), 1);
    char *fields = NULL;
    icmt_ok(icm_table_metadata_spec_fields_json(&fields, icm_table_get_metadata(t), 0));
    assert_non_null(strstr(fields, "1000")); /* field id assigned from 1000, as Java does */
    icm_free(fields);
    icm_table_free(t);
    icm_free(loc);
    free(prefix);
    free(where);
    icm_catalog_free(cat);
    plain_free(&p);
}

/* ---- a real engine-written table (fixtures, read in place) ---- */

#define FIXTURE_TABLE "duckdb-iceberg/data/iceberg/generated_spec2_0_001/pyspark_iceberg_table"

/* The fixture index's row for FIXTURE_TABLE: current metadata file, snapshot count, uuid. */
static void fixture_expectations(char **current, long *snapshots, char **uuid)
{
    char *path = icmt_sprintf("%s/index.tsv", icmt_fixtures_dir());
    char *text = icmt_read_file(path, NULL);
    assert_non_null(text);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *cols[32];
        int n = 0;
        for (char *c = line; n < 32; n++) {
            cols[n] = c;
            char *tab = strchr(c, '\t');
            if (tab == NULL) {
                n++;
                break;
            }
            *tab = '\0';
            c = tab + 1;
        }
        if (n > 22 && strcmp(cols[0], FIXTURE_TABLE) == 0) {
            *current = strdup(cols[7]);
            *snapshots = atol(cols[9]);
            *uuid = strdup(cols[n - 1]);
            free(text);
            free(path);
            return;
        }
    }
    fail_msg("fixture %s not in index.tsv", FIXTURE_TABLE);
}

static void fixture_table_static_dir_and_registered_commit(void **state)
{
    (void)state;
    char *current = NULL, *uuid = NULL;
    long snapshots = 0;
    fixture_expectations(&current, &snapshots, &uuid);
    char *dir = icmt_sprintf("%s/%s", icmt_fixtures_dir(), FIXTURE_TABLE);
    char *file = icmt_sprintf("%s/%s", dir, current);
    plain p = plain_new();

    icm_table *byd = NULL, *st = NULL;
    icmt_ok(icm_table_open_dir(&byd, p.io, dir));
    assert_string_equal(icm_table_get_metadata_location(byd), file);
    icmt_ok(icm_table_open_static(&st, p.io, file));
    assert_int_equal(icm_table_metadata_snapshot_count(icm_table_get_metadata(st)), snapshots);
    assert_string_equal(icm_table_metadata_uuid(icm_table_get_metadata(st)), uuid);
    icm_table_free(byd);

    /* Register the Spark-written file in a SQLite catalog and commit a change, writing the new
     * metadata file to a temp directory (write.metadata.path): the fixture stays untouched.
     * Its metadata names its location relatively (Spark's test layout), so the table is the
     * fixture's only through a path map from that location to the fixture folder (the
     * own-metadata check, icm_table_check_own_metadata). */
    icm_path_map rule = {icm_table_metadata_location(icm_table_get_metadata(st)), dir};
    icm_fileio *local = NULL, *mapped = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_pathmap_new(&mapped, local, &rule, 1));
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", p.uri, p.dir, mapped, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(cat, "spark"));
    icmt_ok(icm_catalog_register_table(cat, "spark.t", file));
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "spark.t"));
    char *md_dir = icmt_sprintf("%s/md", p.dir);
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(md, "write.metadata.path", md_dir));
    icmt_ok(icm_table_commit(t, md));
    icm_table_metadata_free(md);
    const char *now = icm_table_get_metadata_location(t);
    char *prefix = icmt_sprintf("%s/00000-", md_dir); /* v9.metadata.json carries no NNNNN */
    assert_true(strncmp(now, prefix, strlen(prefix)) == 0);
    icm_table *again = NULL;
    icmt_ok(icm_table_open_static(&again, p.io, now));
    const icm_table_metadata *a = icm_table_get_metadata(again);
    const icm_table_metadata *b = icm_table_get_metadata(st);
    assert_int_equal(icm_table_metadata_snapshot_count(a), snapshots);
    assert_string_equal(icm_table_metadata_uuid(a), uuid);
    int64_t ca = 0, cb = 0;
    assert_true(icm_table_metadata_current_snapshot_id(&ca, a));
    assert_true(icm_table_metadata_current_snapshot_id(&cb, b));
    assert_int_equal(ca, cb);
    size_t logs = icm_table_metadata_metadata_log_count(a);
    assert_int_equal(logs, icm_table_metadata_metadata_log_count(b) + 1);
    assert_string_equal(icm_table_metadata_metadata_log_at(a, logs - 1)->metadata_file, file);
    icm_table_free(again);
    icm_table_free(t);
    icm_table_free(st);
    icm_catalog_free(cat);
    icm_fileio_free(mapped);
    free(prefix);
    free(md_dir);
    plain_free(&p);
    free(file);
    free(dir);
    free(current);
    free(uuid);
}

/* ---- allocation failures: every failing allocation leaves the table as it was ---- */

static long g_alloc_countdown = -1; /* fail when it reaches 0; -1 = never */

static void *failing_malloc(size_t n)
{
    if (g_alloc_countdown >= 0 && g_alloc_countdown-- == 0)
        return NULL;
    return malloc(n);
}

static void *failing_realloc(void *p, size_t n)
{
    if (g_alloc_countdown >= 0 && g_alloc_countdown-- == 0)
        return NULL;
    return realloc(p, n);
}

static void commit_survives_every_allocation_failure(void **state)
{
    sqlfx *f = *state;
    const icm_allocator hooks = {failing_malloc, failing_realloc, free};
    char *base = strdup(icm_table_get_metadata_location(f->t));
    icm_table_metadata *md = changed(f->t, "k", "v");
    int rc = -1;
    long n;
    icm_allocator_hook_json(); /* jansson's allocations fail too */
    for (n = 0; n < 2000 && rc != 0; n++) {
        icm_allocator_set(&hooks);
        g_alloc_countdown = n;
        rc = icm_table_commit(f->t, md);
        g_alloc_countdown = -1;
        icm_allocator_set(NULL);
        if (rc == 0)
            break;
        /* Nothing applied and nothing left behind: the pointer and the files are as before. */
        assert_true(rc == ICM_ENOMEM || rc == ICM_ECOMMIT_FAILED);
        char *cur = current_location(f->other);
        assert_string_equal(cur, base);
        free(cur);
        assert_string_equal(icm_table_get_metadata_location(f->t), base);
        assert_int_equal(count_metadata_files(f), 1);
    }
    assert_int_equal(rc, 0);
    assert_true(n > 5); /* the loop really failed allocations before succeeding */
    char *cur = current_location(f->other);
    assert_string_equal(cur, icm_table_get_metadata_location(f->t));
    free(cur);
    icm_table_metadata_free(md);
    free(base);
}

/* Metadata retention under every allocation failure after the swap: the commit
 * stands, and the file it drops from the log, another table's current metadata file, is never
 * deleted, whatever check ran out of memory. Each round registers a clone at the file the
 * next commit drops (and drops the previous clone, so every round asks the same catalog). */
static void retention_survives_every_allocation_failure(void **state)
{
    sqlfx *f = *state;
    const icm_allocator hooks = {failing_malloc, failing_realloc, free};
    icm_table_metadata *md = changed(f->t, "write.metadata.delete-after-commit.enabled", "true");
    icmt_ok(icm_table_metadata_set_property(md, "write.metadata.previous-versions-max", "1"));
    icmt_ok(icm_table_commit(f->t, md));
    icm_table_metadata_free(md);
    char *clone = NULL, *drop = NULL;
    long n, successes = 0;
    for (n = 0; n < 20000; n++) {
        const icm_table_metadata *cur = icm_table_get_metadata(f->t);
        assert_int_equal(icm_table_metadata_metadata_log_count(cur), 1);
        const char *next = icm_table_metadata_metadata_log_at(cur, 0)->metadata_file;
        if (drop == NULL || strcmp(drop, next) != 0) {
            if (clone != NULL)
                icmt_ok(icm_catalog_drop_table(f->other, clone));
            free(clone);
            free(drop);
            clone = icmt_sprintf("ns.c%ld", n);
            drop = strdup(next);
            icmt_ok(icm_catalog_register_table_flags(f->other, clone, drop,
                                                     ICM_REGISTER_ALLOW_SHARED));
        }
        char v[32];
        snprintf(v, sizeof v, "%ld", n);
        md = changed(f->t, "n", v);
        icm_allocator_hook_json(); /* jansson's allocations fail too */
        icm_allocator_set(&hooks);
        g_alloc_countdown = n;
        int rc = icm_table_commit(f->t, md);
        bool hit = g_alloc_countdown < 0;
        g_alloc_countdown = -1;
        icm_allocator_set(NULL);
        icm_table_metadata_free(md);
        assert_true(rc == 0 || rc == ICM_ENOMEM || rc == ICM_ECOMMIT_FAILED);
        assert_true(file_exists_at(drop));
        if (rc == 0)
            successes++;
        else
            icmt_ok(icm_table_refresh(f->t));
        if (!hit)
            break;
    }
    assert_true(n < 20000);    /* a round without a failure ended the loop */
    assert_true(successes > 5); /* failures landed after the swap, in retention too */
    free(clone);
    free(drop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SQL_SUITE_TESTS,
        cmocka_unit_test(new_database_gets_v1),
        cmocka_unit_test(java_v0_database_is_used_as_v0),
        cmocka_unit_test(v1_views_are_not_tables),
        cmocka_unit_test(nested_namespaces_list_one_level),
        cmocka_unit_test(init_catalog_tables_false_requires_tables),
        cmocka_unit_test(uris_and_identifiers),
        cmocka_unit_test(fixture_table_static_dir_and_registered_commit),
        cmocka_unit_test_setup_teardown(commit_survives_every_allocation_failure, sqlfx_setup,
                                        sqlfx_teardown),
        cmocka_unit_test_setup_teardown(retention_survives_every_allocation_failure, sqlfx_setup,
                                        sqlfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
