/*
 * tests/unit/test_built_without.c: a library built without an optional feature refuses what
 * needs it with ICM_EUNSUPPORTED naming the option, and never falls back silently:
 *  - ICM_WITH_POSTGRES=OFF: a postgresql:// (or postgres://) SQL catalog URI;
 *  - ICM_WITH_YAML=OFF: a .pyiceberg.yaml catalog configuration, named or found by the search
 *    (skipping it would pick another catalog than the one configured).
 * In a build with the feature the test of it is skipped, saying so (scripts/test.sh builds one
 * configuration with both off and runs this test there).
 */
#include <stdlib.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "testutil.h"

static void postgres_uri_refused(void **state)
{
    (void)state;
#ifdef ICM_WITH_POSTGRES
    icmt_skip_here("built with PostgreSQL (test_catalog_pg covers the store)");
#else
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    static const char *const uris[] = {"postgresql://user:secret@127.0.0.1:1/db",
                                       "postgres://127.0.0.1/db",
                                       "postgresql+psycopg2://user:secret@127.0.0.1/db"};
    for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
        icm_catalog *cat = NULL;
        assert_int_equal(icm_catalog_open_sql(&cat, "c", uris[i], "/tmp/wh", io, NULL, 0),
                         ICM_EUNSUPPORTED);
        assert_null(cat);
        const char *msg = icm_error_last()->message;
        assert_non_null(strstr(msg, "built without PostgreSQL (ICM_WITH_POSTGRES=OFF)"));
        assert_null(strstr(msg, "secret")); /* the password is never shown */
    }
    icm_fileio_free(io);
#endif
}

static void yaml_config_refused(void **state)
{
    (void)state;
#ifdef ICM_WITH_YAML
    icmt_skip_here("built with YAML (test_catalog_config covers reading it)");
#else
    char *dir = icmt_mkdtemp();
    char *file = icmt_sprintf("%s/.pyiceberg.yaml", dir);
    static const char yaml[] = "catalog:\n  default:\n    uri: sqlite:///x.db\n";
    icmt_write_file(file, yaml, sizeof yaml - 1);

    /* Named explicitly. */
    icm_catalog_config_options o = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    o.config_file = file;
    o.ignore_environment = true;
    char *name = NULL;
    icm_property *props = NULL;
    size_t n = 0;
    assert_int_equal(icm_catalog_config_resolve(&name, &props, &n, &o), ICM_EUNSUPPORTED);
    assert_null(props);
    assert_string_equal(icm_error_last()->location, file);
    assert_non_null(strstr(icm_error_last()->message,
                           "built without YAML support (ICM_WITH_YAML=OFF)"));

    /* Found by the search ($PYICEBERG_HOME first): refused too, not skipped. */
    icm_catalog_config_options s = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    assert_int_equal(setenv("PYICEBERG_HOME", dir, 1), 0);
    assert_int_equal(icm_catalog_config_resolve(&name, &props, &n, &s), ICM_EUNSUPPORTED);
    assert_string_equal(icm_error_last()->location, file);
    unsetenv("PYICEBERG_HOME");

    free(file);
    icmt_rmtree(dir);
    free(dir);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(postgres_uri_refused),
        cmocka_unit_test(yaml_config_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
