/*
 * tests/tools/catalog_tool.c: drives libicemaint's SQL and filesystem catalogs from the Python
 * interop tests (tests/py/test_catalog_pyiceberg.py), so that PyIceberg and icemaint can take
 * turns on the same catalog database. Not a test by itself.
 *
 * Usage: catalog_tool --uri URI | --hadoop WAREHOUSE  [--name NAME] [--warehouse WH] COMMAND ...
 *   create-namespace NS
 *   create-table NS.TABLE SCHEMA_JSON [PARTITION_SPEC_JSON]   prints the metadata location
 *   register-table NS.TABLE METADATA_FILE [--force]
 *   drop-table NS.TABLE
 *   list-namespaces [PARENT] | list-tables NS                 one name per line
 *   load NS.TABLE            prints {metadata_location, table_uuid, format_version,
 *                            current_snapshot_id, snapshot_count, metadata_log, properties}
 *   set-property NS.TABLE KEY VALUE   commits; prints the new metadata location
 * Also: catalog_tool resolve-config [NAME]   prints {"name": ..., "properties": {...}} as
 *       icm_catalog_config_resolve finds them ($PYICEBERG_HOME, ~, cwd, PYICEBERG_* variables).
 * A missing SQLite database is created first (icm_catalog_sqlite_create), as the tests need.
 * Exit status: 0; 3 commit failed; 4 commit unknown; 1 other errors (message on stderr).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/errors.h"

static int fail(int rc)
{
    const icm_error *e = icm_error_last();
    fprintf(stderr, "catalog_tool: %s: %s: %s\n", icm_error_code_name(rc), e->location,
            e->message);
    return rc == ICM_ECOMMIT_FAILED ? 3 : rc == ICM_ECOMMIT_UNKNOWN ? 4 : 1;
}

static int print_name(const char *name, void *payload)
{
    (void)payload;
    printf("%s\n", name);
    return 0;
}

static int load(icm_catalog *cat, const char *ident)
{
    icm_table *t = NULL;
    int rc = icm_table_load(&t, cat, ident);
    if (rc != 0)
        return fail(rc);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    json_t *props = json_object(), *log = json_array();
    for (size_t i = 0; i < icm_table_metadata_property_count(md); i++) {
        const char *k, *v;
        icm_table_metadata_property_at(&k, &v, md, i);
        json_object_set_new(props, k, json_string(v));
    }
    for (size_t i = 0; i < icm_table_metadata_metadata_log_count(md); i++)
        json_array_append_new(
            log, json_string(icm_table_metadata_metadata_log_at(md, i)->metadata_file));
    int64_t current = -1;
    bool has_current = icm_table_metadata_current_snapshot_id(&current, md);
    json_t *doc = json_pack("{s:s, s:s?, s:i, s:o, s:I, s:o, s:o}", "metadata_location",
                            icm_table_get_metadata_location(t), "table_uuid",
                            icm_table_metadata_uuid(md), "format_version",
                            icm_table_metadata_format_version(md), "current_snapshot_id",
                            has_current ? json_integer(current) : json_null(), "snapshot_count",
                            (json_int_t)icm_table_metadata_snapshot_count(md), "metadata_log",
                            log, "properties", props);
    char *text = json_dumps(doc, JSON_SORT_KEYS);
    printf("%s\n", text);
    free(text);
    json_decref(doc);
    icm_table_free(t);
    return 0;
}

static int set_property(icm_catalog *cat, const char *ident, const char *key, const char *value)
{
    icm_table *t = NULL;
    icm_table_metadata *md = NULL;
    int rc = icm_table_load(&t, cat, ident);
    if (rc == 0)
        rc = icm_table_metadata_copy(&md, icm_table_get_metadata(t));
    if (rc == 0)
        rc = icm_table_metadata_set_property(md, key, value);
    if (rc == 0)
        rc = icm_table_commit(t, md);
    if (rc == 0)
        printf("%s\n", icm_table_get_metadata_location(t));
    int status = rc == 0 ? 0 : fail(rc);
    icm_table_metadata_free(md);
    icm_table_free(t);
    return status;
}

static int run(icm_catalog *cat, int argc, char **argv)
{
    const char *cmd = argv[0];
    char *loc = NULL;
    int rc;
    if (strcmp(cmd, "create-namespace") == 0 && argc == 2) {
        rc = icm_catalog_create_namespace(cat, argv[1]);
    } else if (strcmp(cmd, "create-table") == 0 && (argc == 3 || argc == 4)) {
        icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                      argv[2], argc == 4 ? argv[3] : NULL, NULL, NULL, 0};
        rc = icm_catalog_create_table(&loc, cat, argv[1], &o);
        if (rc == 0)
            printf("%s\n", loc);
        icm_free(loc);
    } else if (strcmp(cmd, "register-table") == 0 &&
               (argc == 3 || (argc == 4 && strcmp(argv[3], "--force") == 0))) {
        rc = icm_catalog_register_table_flags(cat, argv[1], argv[2],
                                              argc == 4 ? ICM_REGISTER_ALLOW_SHARED : 0);
    } else if (strcmp(cmd, "drop-table") == 0 && argc == 2) {
        rc = icm_catalog_drop_table(cat, argv[1]);
    } else if (strcmp(cmd, "list-namespaces") == 0 && argc <= 2) {
        rc = icm_catalog_list_namespaces(cat, argc == 2 ? argv[1] : NULL, print_name, NULL);
    } else if (strcmp(cmd, "list-tables") == 0 && argc == 2) {
        rc = icm_catalog_list_tables(cat, argv[1], print_name, NULL);
    } else if (strcmp(cmd, "load") == 0 && argc == 2) {
        return load(cat, argv[1]);
    } else if (strcmp(cmd, "set-property") == 0 && argc == 4) {
        return set_property(cat, argv[1], argv[2], argv[3]);
    } else {
        fprintf(stderr, "catalog_tool: bad command or argument count: %s\n", cmd);
        return 2;
    }
    return rc == 0 ? 0 : fail(rc);
}

static int resolve_config(const char *name)
{
    icm_catalog_config_options o = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    o.name = name;
    char *chosen = NULL;
    icm_property *props = NULL;
    size_t n = 0;
    int rc = icm_catalog_config_resolve(&chosen, &props, &n, &o);
    if (rc != 0)
        return fail(rc);
    json_t *obj = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(obj, props[i].key, json_string(props[i].value));
    json_t *doc = json_pack("{s:s, s:o}", "name", chosen, "properties", obj);
    char *text = json_dumps(doc, JSON_SORT_KEYS);
    printf("%s\n", text);
    free(text);
    json_decref(doc);
    icm_catalog_properties_free(props, n);
    icm_free(chosen);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "resolve-config") == 0)
        return resolve_config(argc >= 3 ? argv[2] : NULL);
    const char *uri = NULL, *hadoop = NULL, *name = "default", *warehouse = NULL;
    int i = 1;
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--uri") == 0)
            uri = argv[i + 1];
        else if (strcmp(argv[i], "--hadoop") == 0)
            hadoop = argv[i + 1];
        else if (strcmp(argv[i], "--name") == 0)
            name = argv[i + 1];
        else if (strcmp(argv[i], "--warehouse") == 0)
            warehouse = argv[i + 1];
        else
            break;
    }
    if (i >= argc || (uri == NULL) == (hadoop == NULL)) {
        fprintf(stderr, "usage: catalog_tool --uri URI | --hadoop WAREHOUSE [--name NAME] "
                        "[--warehouse WH] COMMAND ARGS...\n");
        return 2;
    }
    icm_fileio *io = NULL;
    icm_catalog *cat = NULL;
    int rc = icm_fileio_local_new(&io);
    /* The tests set up new catalogs through this tool: it creates a missing SQLite database
     * deliberately (icemaint's library and CLI never do). */
    bool sqlite_file = uri != NULL && strncmp(uri, "sqlite:", 7) == 0 &&
                       strstr(uri, ":memory:") == NULL;
    if (rc == 0 && sqlite_file)
        rc = icm_catalog_sqlite_create(uri);
    if (rc == 0)
        rc = uri != NULL ? icm_catalog_open_sql(&cat, name, uri, warehouse, io, NULL, 0)
                         : icm_catalog_open_hadoop(&cat, name, hadoop, io);
    int status = rc == 0 ? run(cat, argc - i, argv + i) : fail(rc);
    icm_catalog_free(cat);
    icm_fileio_free(io);
    return status;
}
