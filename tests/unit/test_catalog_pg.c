/*
 * tests/unit/test_catalog_pg.c: the SQL catalog on a real PostgreSQL server (libpq): the shared
 * commit suite of test_catalog_common.h, plus V0 detection in a schema of its own.
 *
 * The server's DSN comes from ICM_PG_DSN (scripts/start-postgres.sh prints it). Without it the
 * tests are skipped with a message, except under CI (env CI set), where that is a failure.
 */
#include "test_catalog_common.h"

static char *sqlfx_uri(const char *dir)
{
    (void)dir;
    const char *dsn = getenv("ICM_PG_DSN");
    return dsn != NULL && dsn[0] != '\0' ? strdup(dsn) : NULL;
}

/* Run ';'-separated statements one by one (libpq's extended protocol takes one at a time). */
static void pg_exec_ok(icm__sql_store *s, const char *sql)
{
    char *copy = strdup(sql), *save = NULL;
    for (char *stmt = strtok_r(copy, ";", &save); stmt != NULL; stmt = strtok_r(NULL, ";", &save)) {
        int64_t ch = 0;
        bool maybe = false;
        icmt_ok(s->methods->exec(s, stmt, NULL, 0, &ch, &maybe));
    }
    free(copy);
}

/* A Java-created (V0) catalog in its own schema: used as V0, commits work. */
static void pg_v0_schema_detected(void **state)
{
    (void)state;
    const char *dsn = getenv("ICM_PG_DSN");
    char *schema = icmt_sprintf("icm_v0_%ld", (long)getpid());
    icm__sql_store *admin = NULL;
    icmt_ok(icm__sql_store_open_pg(&admin, dsn));
    char *sql = icmt_sprintf("DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s; "
                             "CREATE TABLE %s.iceberg_tables (catalog_name VARCHAR(255) NOT NULL,"
                             " table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT "
                             "NULL, metadata_location VARCHAR(1000), previous_metadata_location "
                             "VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, "
                             "table_name)); CREATE TABLE %s.iceberg_namespace_properties "
                             "(catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT "
                             "NULL, property_key VARCHAR(255), property_value VARCHAR(1000), "
                             "PRIMARY KEY (catalog_name, namespace, property_key))",
                             schema, schema, schema, schema);
    pg_exec_ok(admin, sql);
    free(sql);
    char *uri = icmt_sprintf("%s%soptions=-csearch_path%%3D%s", dsn,
                             strchr(dsn, '?') != NULL ? "&" : "?", schema);
    char *dir = icmt_mkdtemp();
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "java", uri, dir, io, NULL, 0));
    assert_false(icm__sql_catalog_is_v1(cat));
    icmt_ok(icm_catalog_create_namespace(cat, "a"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "a.t", &o));
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "a.t"));
    icmt_ok(commit_change(t, "k", "v"));
    icm_table_free(t);
    icm_catalog_free(cat);
    sql = icmt_sprintf("DROP SCHEMA %s CASCADE", schema);
    pg_exec_ok(admin, sql);
    free(sql);
    admin->methods->free(admin);
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(dir);
    free(uri);
    free(schema);
}

static void pg_connection_refused_is_net_error(void **state)
{
    (void)state;
    icm__sql_store *s = NULL;
    /* Port 1 on loopback: nothing listens there. */
    assert_int_equal(
        icm__sql_store_open_uri(&s, "postgresql+psycopg2://u:secret@127.0.0.1:1/db"), ICM_ENET);
    assert_null(s);
    assert_string_equal(icm_error_last()->location, "postgresql://127.0.0.1:1/db");
    assert_null(strstr(icm_error_last()->message, "secret"));
}

static void pg_not_configured(void **state)
{
    (void)state;
    icmt_skip_here("ICM_PG_DSN is not set: no PostgreSQL server for the catalog tests (start "
                   "one with scripts/start-postgres.sh)");
}

int main(void)
{
    const char *dsn = getenv("ICM_PG_DSN");
    if (dsn == NULL || dsn[0] == '\0') {
        const char *ci = getenv("CI");
        if (ci != NULL && ci[0] != '\0') {
            fprintf(stderr, "test_catalog_pg: ICM_PG_DSN is not set under CI; start the server "
                            "with scripts/start-postgres.sh and export its DSN\n");
            return 1;
        }
        const struct CMUnitTest none[] = {cmocka_unit_test(pg_not_configured)};
        return cmocka_run_group_tests(none, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        SQL_SUITE_TESTS,
        cmocka_unit_test(pg_v0_schema_detected),
        cmocka_unit_test(pg_connection_refused_is_net_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
