/*
 * tests/unit/test_catalog_config.c: PyIceberg-style catalog configuration: the YAML file
 * (search order $PYICEBERG_HOME, ~, cwd), PYICEBERG_* variables over the file, explicit values
 * over both (empty ones ignored), default-catalog, case-insensitive names, and opening the
 * catalog kind the properties describe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icemaint/catalog.h"
#include "testutil.h"

extern char **environ;

static void clear_pyiceberg_env(void)
{
    for (;;) {
        char *found = NULL;
        for (char **e = environ; *e != NULL; e++)
            if (strncasecmp(*e, "PYICEBERG_", 10) == 0) {
                found = strndup(*e, strcspn(*e, "="));
                break;
            }
        if (found == NULL)
            return;
        unsetenv(found);
        free(found);
    }
}

static const char YAML[] = "default-catalog: prod\n"
                           "catalog:\n"
                           "  prod:\n"
                           "    uri: sqlite:///file.db\n"
                           "    warehouse: /wh/file\n"
                           "    S3.Endpoint: http://minio:9000\n"
                           "  DEV:\n"
                           "    type: hadoop\n"
                           "    warehouse: /wh/dev\n";

static const char *get(const icm_property *p, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].key, key) == 0)
            return p[i].value;
    return NULL;
}

typedef struct resolved {
    char *name;
    icm_property *props;
    size_t n;
} resolved;

static resolved resolve(const icm_catalog_config_options *o)
{
    resolved r = {NULL, NULL, 0};
    icmt_ok(icm_catalog_config_resolve(&r.name, &r.props, &r.n, o));
    return r;
}

static void resolved_free(resolved *r)
{
    icm_free(r->name);
    icm_catalog_properties_free(r->props, r->n);
}

static char *write_yaml(const char *dir, const char *text)
{
    char *path = icmt_sprintf("%s/.pyiceberg.yaml", dir);
    icmt_write_file(path, text, strlen(text));
    return path;
}

static void file_env_explicit_precedence(void **state)
{
    (void)state;
    clear_pyiceberg_env();
    char *dir = icmt_mkdtemp();
    char *file = write_yaml(dir, YAML);
    icm_catalog_config_options o = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    o.config_file = file;
    o.ignore_environment = true;
    setenv("PYICEBERG_CATALOG__PROD__URI", "sqlite:///env.db", 1);

    resolved r = resolve(&o); /* file only */
    assert_string_equal(r.name, "prod");
    assert_string_equal(get(r.props, r.n, "uri"), "sqlite:///file.db");
    assert_string_equal(get(r.props, r.n, "s3.endpoint"), "http://minio:9000");
    assert_int_equal(r.n, 3);
    resolved_free(&r);

    o.ignore_environment = false; /* the environment overrides the file */
    setenv("PYICEBERG_CATALOG__PROD__S3_REGION", "eu-1", 1);
    setenv("PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID", "key", 1); /* 3rd part keeps "__" */
    r = resolve(&o);
    assert_string_equal(get(r.props, r.n, "uri"), "sqlite:///env.db");
    assert_string_equal(get(r.props, r.n, "s3-region"), "eu-1");
    assert_string_equal(get(r.props, r.n, "s3.access-key-id"), "key");
    assert_string_equal(get(r.props, r.n, "warehouse"), "/wh/file");
    resolved_free(&r);

    o.uri = "sqlite:///explicit.db"; /* explicit beats both; an empty value does not count */
    o.warehouse = "";
    r = resolve(&o);
    assert_string_equal(get(r.props, r.n, "uri"), "sqlite:///explicit.db");
    assert_string_equal(get(r.props, r.n, "warehouse"), "/wh/file");
    resolved_free(&r);

    o.uri = NULL; /* default-catalog from the environment; names match case-insensitively */
    setenv("PYICEBERG_DEFAULT_CATALOG", "dev", 1);
    r = resolve(&o);
    assert_string_equal(r.name, "dev");
    assert_string_equal(get(r.props, r.n, "type"), "hadoop");
    resolved_free(&r);

    o.name = "PROD"; /* explicit name; kept as given for the catalog_name column */
    r = resolve(&o);
    assert_string_equal(r.name, "PROD");
    assert_string_equal(get(r.props, r.n, "uri"), "sqlite:///env.db");
    resolved_free(&r);

    clear_pyiceberg_env();
    icmt_rmtree(dir);
    free(file);
    free(dir);
}

static void search_order_home_then_home_dir_then_cwd(void **state)
{
    (void)state;
    clear_pyiceberg_env();
    char *phome = icmt_mkdtemp(), *home = icmt_mkdtemp(), *cwd = icmt_mkdtemp();
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char old_cwd[4096];
    assert_non_null(getcwd(old_cwd, sizeof old_cwd));
    free(write_yaml(phome, "catalog:\n  default:\n    uri: sqlite:///phome.db\n"));
    free(write_yaml(home, "catalog:\n  default:\n    uri: sqlite:///home.db\n"));
    free(write_yaml(cwd, "catalog:\n  default:\n    uri: sqlite:///cwd.db\n"));
    assert_int_equal(chdir(cwd), 0);
    setenv("HOME", home, 1);
    setenv("PYICEBERG_HOME", phome, 1);
    icm_catalog_config_options o = ICM_CATALOG_CONFIG_OPTIONS_INIT;

    resolved r = resolve(&o);
    assert_string_equal(r.name, "default");
    assert_string_equal(get(r.props, r.n, "uri"), "sqlite:///phome.db");
    resolved_free(&r);
    unsetenv("PYICEBERG_HOME");
    r = resolve(&o);
    assert_string_equal(get(r.props, r.n, "uri"), "sqlite:///home.db");
    resolved_free(&r);
    setenv("HOME", phome, 1);
    char *gone = icmt_sprintf("%s/.pyiceberg.yaml", phome);
    unlink(gone);
    free(gone);
    r = resolve(&o);
    assert_string_equal(get(r.props, r.n, "uri"), "sqlite:///cwd.db");
    resolved_free(&r);

    assert_int_equal(chdir(old_cwd), 0);
    if (old_home != NULL)
        setenv("HOME", old_home, 1);
    free(old_home);
    icmt_rmtree(phome);
    icmt_rmtree(home);
    icmt_rmtree(cwd);
    free(phome);
    free(home);
    free(cwd);
}

static void bad_files(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *file = write_yaml(dir, "catalog:\n  prod:\n    uri: [unclosed\n");
    icm_catalog_config_options o = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    o.config_file = file;
    o.ignore_environment = true;
    char *name = NULL;
    icm_property *props = NULL;
    size_t n = 0;
    assert_int_equal(icm_catalog_config_resolve(&name, &props, &n, &o), ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, file);
    assert_non_null(strstr(icm_error_last()->message, "line"));
    char *missing = icmt_sprintf("%s/none.yaml", dir);
    o.config_file = missing;
    assert_int_equal(icm_catalog_config_resolve(&name, &props, &n, &o), ICM_ENOTFOUND);
    free(missing);
    icmt_rmtree(dir);
    free(file);
    free(dir);
}

static void open_config_picks_kind(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *yaml = icmt_sprintf("catalog:\n"
                              "  lite:\n    uri: sqlite:///%s/c.db\n    warehouse: %s/wh\n"
                              "  fs:\n    type: hadoop\n    warehouse: %s/fswh\n"
                              "  rest:\n    uri: http://127.0.0.1:1\n"
                              "  glue:\n    type: glue\n",
                              dir, dir, dir);
    char *file = write_yaml(dir, yaml);
    icm_catalog_config_options o = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    o.config_file = file;
    o.ignore_environment = true;
    icm_catalog *cat = NULL;

    o.name = "lite";
    char *db = icmt_sprintf("%s/c.db", dir);
    assert_int_equal(icm_catalog_open_config(&cat, &o), ICM_ENOTFOUND); /* never created */
    assert_false(icmt_file_exists(db));
    char *lite = icmt_sprintf("sqlite:///%s", db);
    icmt_ok(icm_catalog_sqlite_create(lite));
    free(lite);
    icmt_ok(icm_catalog_open_config(&cat, &o));
    assert_string_equal(icm_catalog_kind(cat), "sql");
    assert_string_equal(icm_catalog_name(cat), "lite");
    assert_non_null(icm_catalog_fileio(cat)); /* a local FileIO the catalog owns */
    icmt_ok(icm_catalog_create_namespace(cat, "ns"));
    icm_catalog_free(cat);
    free(db);

    o.name = "fs";
    icmt_ok(icm_catalog_open_config(&cat, &o));
    assert_string_equal(icm_catalog_kind(cat), "hadoop");
    icm_catalog_free(cat);

    o.name = "rest"; /* a REST catalog: GET /v1/config first, refused on port 1 */
    assert_int_equal(icm_catalog_open_config(&cat, &o), ICM_ENET);
    o.name = "glue";
    assert_int_equal(icm_catalog_open_config(&cat, &o), ICM_EUNSUPPORTED);
    o.name = "nothing";
    assert_int_equal(icm_catalog_open_config(&cat, &o), ICM_ENOTFOUND);
    assert_non_null(strstr(icm_error_last()->message, "PYICEBERG_CATALOG__NOTHING__URI"));
    /* the file that was read, and lacks the entry, is named */
    assert_string_equal(icm_error_last()->location, file);
    assert_non_null(strstr(icm_error_last()->message, "in this file"));
    char *uri = icmt_sprintf("sqlite:///%s/other.db", dir); /* --uri alone is enough */
    icmt_ok(icm_catalog_sqlite_create(uri));
    o.uri = uri;
    icmt_ok(icm_catalog_open_config(&cat, &o));
    assert_string_equal(icm_catalog_kind(cat), "sql");
    icm_catalog_free(cat);
    free(uri);

    icmt_rmtree(dir);
    free(yaml);
    free(file);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(file_env_explicit_precedence),
        cmocka_unit_test(search_order_home_then_home_dir_then_cwd),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(open_config_picks_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
