/*
 * cli/cmd_catalog.c: the catalog commands `list-namespaces [PARENT]`, `list-tables NS` and
 * `register-table NS.TABLE METADATA_FILE`, and the catalog access other commands use to
 * load `ns.table` (catalog_ref.h). The catalog comes from --catalog/--config/--uri/
 * --warehouse and PyIceberg's configuration (.pyiceberg.yaml, PYICEBERG_* variables).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog_ref.h"

int icm_cli_catalog_open(icm_cli *cli, icm_catalog **out)
{
    *out = NULL;
    icm_fileio *io = icm_cli_fileio(cli);
    if (io == NULL)
        return ICM_EXIT_ERROR;
    icm_catalog_config_options o = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    o.name = cli->catalog;
    o.config_file = cli->config;
    o.uri = cli->uri;
    o.warehouse = cli->warehouse;
    o.io = io;
    int rc = icm_catalog_open_config(out, &o);
    return rc == 0 ? ICM_EXIT_OK : icm_cli_fail(cli, rc);
}

int icm_cli_catalog_load_table(icm_cli *cli, const char *identifier, icm_catalog **out_cat,
                               icm_table **out_table)
{
    *out_table = NULL;
    int rc = icm_cli_catalog_open(cli, out_cat);
    if (rc != ICM_EXIT_OK)
        return rc;
    int lrc = icm_table_load(out_table, *out_cat, identifier);
    if (lrc != 0) {
        rc = icm_cli_fail(cli, lrc);
        icm_catalog_free(*out_cat);
        *out_cat = NULL;
    }
    return rc;
}

bool icm_cli_is_catalog_name(const char *ref)
{
    size_t n = strlen(ref);
    if (strchr(ref, '/') != NULL || strchr(ref, ':') != NULL || ref[0] == '.' ||
        strchr(ref, '.') == NULL || (n >= 5 && strcmp(ref + n - 5, ".json") == 0))
        return false;
    struct stat st;
    return stat(ref, &st) != 0;
}

/* Directory or file? Local paths are checked (after path mapping); a remote location is a
 * directory unless it names a .json file. */
static int is_table_dir(icm_cli *cli, icm_fileio *io, const char *ref, bool *out)
{
    char *mapped = NULL, *local = NULL;
    if (cli->n_path_maps > 0) {
        int rc = icm_fileio_pathmap_apply(&mapped, io, ref);
        if (rc != 0)
            return icm_cli_fail(cli, rc);
    }
    bool is_local = icm_location_local_path(&local, mapped != NULL ? mapped : ref);
    icm_free(mapped);
    if (!is_local) {
        if (local == NULL && icm_error_last()->code == ICM_ENOMEM)
            return icm_cli_fail(cli, ICM_ENOMEM);
        size_t n = strlen(ref);
        *out = !(n >= 5 && strcmp(ref + n - 5, ".json") == 0);
        return ICM_EXIT_OK;
    }
    struct stat st;
    int ok = stat(local, &st);
    icm_free(local);
    if (ok != 0)
        return icm_cli_error(ref, "no such table directory or metadata file");
    *out = S_ISDIR(st.st_mode);
    return ICM_EXIT_OK;
}

int icm_cli_table_load(icm_cli *cli, const char *ref, icm_catalog **out_cat,
                       icm_table **out_table)
{
    *out_cat = NULL;
    *out_table = NULL;
    if (ref == NULL || ref[0] == '\0')
        return icm_cli_usage(NULL, "TABLE is empty");
    if (icm_cli_is_catalog_name(ref))
        return icm_cli_catalog_load_table(cli, ref, out_cat, out_table);
    icm_fileio *io = icm_cli_fileio(cli);
    if (io == NULL)
        return ICM_EXIT_ERROR;
    char *orig = NULL;
    int rc = icm_cli_table_name(cli, ref, &orig);
    if (rc != ICM_EXIT_OK)
        return rc;
    bool dir = false;
    rc = is_table_dir(cli, io, orig, &dir);
    if (rc != ICM_EXIT_OK) {
        free(orig);
        return rc;
    }
    int lrc = dir ? icm_table_open_dir(out_table, io, orig)
                  : icm_table_open_static(out_table, io, orig);
    free(orig);
    return lrc == 0 ? ICM_EXIT_OK : icm_cli_fail(cli, lrc);
}

/* Positional arguments of a catalog command: between min and max of them, no options. */
static int take_args(const char *cmd, int argc, char **argv, const char **args, int min,
                     int max, const char *what)
{
    int n = 0;
    bool dashdash = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!dashdash && strcmp(a, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (!dashdash && a[0] == '-' && a[1] != '\0')
            return icm_cli_usage(a, "unknown option for '%s'", cmd);
        if (n == max)
            return icm_cli_usage(a, "unexpected argument: '%s' takes %s", cmd, what);
        args[n++] = a;
    }
    if (n < min)
        return icm_cli_usage(cmd, "missing argument: '%s' takes %s", cmd, what);
    return ICM_EXIT_OK;
}

/* ---- list-namespaces / list-tables ---- */

static int print_names(const icm_cli *cli, const icm_cli_names *l, const char *key,
                       const char *ctx_key, const char *ctx_value)
{
    if (!cli->json) {
        for (size_t i = 0; i < l->len; i++)
            icm_cli_line(stdout, "%s", l->names[i]);
        return ICM_EXIT_OK;
    }
    bool ok = true;
    json_t *doc = json_object();
    json_t *arr = json_array();
    if (doc == NULL || arr == NULL)
        ok = false;
    for (size_t i = 0; arr != NULL && i < l->len; i++)
        icm_cli_json_push(arr, icm_cli_json_str(l->names[i]), &ok);
    if (ctx_key != NULL)
        icm_cli_json_set(doc, ctx_key, icm_cli_json_str(ctx_value), &ok);
    icm_cli_json_set(doc, key, arr, &ok);
    return icm_cli_json_print(doc, ok);
}

static int run_list(icm_cli *cli, const char *ns, bool tables)
{
    icm_catalog *cat = NULL;
    int rc = icm_cli_catalog_open(cli, &cat);
    if (rc != ICM_EXIT_OK)
        return rc;
    icm_cli_names l = {NULL, 0, 0, false};
    int lrc = tables ? icm_catalog_list_tables(cat, ns, icm_cli_names_add, &l)
                     : icm_catalog_list_namespaces(cat, ns, icm_cli_names_add, &l);
    if (l.oom)
        rc = icm_cli_oom();
    else if (lrc != 0)
        rc = icm_cli_fail(cli, lrc);
    else
        rc = print_names(cli, &l, tables ? "tables" : "namespaces",
                         tables ? "namespace" : (ns != NULL ? "parent" : NULL), ns);
    icm_cli_names_free(&l);
    icm_catalog_free(cat);
    return rc;
}

static int run_list_namespaces(icm_cli *cli, int argc, char **argv)
{
    const char *args[1] = {NULL};
    int rc = take_args("list-namespaces", argc, argv, args, 0, 1, "at most one PARENT");
    return rc != ICM_EXIT_OK ? rc : run_list(cli, args[0], false);
}

static int run_list_tables(icm_cli *cli, int argc, char **argv)
{
    const char *args[1] = {NULL};
    int rc = take_args("list-tables", argc, argv, args, 1, 1, "one NAMESPACE");
    return rc != ICM_EXIT_OK ? rc : run_list(cli, args[0], true);
}

/* ---- register-table ---- */

/* argv without its `--force` options (before `--`), into a new array; *force says whether one
 * was there. Returns NULL on allocation failure. */
static char **take_force(int argc, char **argv, int *out_argc, bool *force)
{
    char **kept = malloc(((size_t)argc + 1) * sizeof *kept);
    if (kept == NULL)
        return NULL;
    int n = 0;
    bool dashdash = false;
    *force = false;
    for (int i = 0; i < argc; i++) {
        dashdash = dashdash || strcmp(argv[i], "--") == 0;
        if (i > 0 && !dashdash && strcmp(argv[i], "--force") == 0)
            *force = true;
        else
            kept[n++] = argv[i];
    }
    kept[n] = NULL;
    *out_argc = n;
    return kept;
}

static int run_register_table(icm_cli *cli, int argc, char **argv)
{
    const char *args[2] = {NULL, NULL};
    bool force = false;
    int nargs = 0;
    char **rest = take_force(argc, argv, &nargs, &force);
    if (rest == NULL)
        return icm_cli_oom();
    int rc = take_args("register-table", nargs, rest, args, 2, 2, "NS.TABLE METADATA_FILE");
    free(rest);
    if (rc != ICM_EXIT_OK)
        return rc;
    icm_catalog *cat = NULL;
    rc = icm_cli_catalog_open(cli, &cat);
    if (rc != ICM_EXIT_OK)
        return rc;
    unsigned flags = force ? ICM_REGISTER_ALLOW_SHARED | ICM_REGISTER_ALLOW_FOREIGN : 0;
    int lrc = icm_catalog_register_table_flags(cat, args[0], args[1], flags);
    if (lrc != 0) {
        rc = icm_cli_fail(cli, lrc);
    } else if (cli->json) {
        bool ok = true;
        json_t *doc = json_object();
        ok = doc != NULL;
        icm_cli_json_set(doc, "table", icm_cli_json_str(args[0]), &ok);
        icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(args[1]), &ok);
        icm_cli_json_set(doc, "catalog", icm_cli_json_str(icm_catalog_name(cat)), &ok);
        rc = icm_cli_json_print(doc, ok);
    } else { /* the result goes to stdout whatever -q says (-q: only errors on stderr) */
        icm_cli_line(stdout, "registered %s -> %s", args[0], args[1]);
    }
    icm_catalog_free(cat);
    return rc;
}

#define CATALOG_HELP_TAIL                                                                    \
    "\n"                                                                                     \
    "The catalog is chosen as PyIceberg chooses it: --catalog NAME (else `default-catalog`,\n" \
    "else \"default\") looked up in --config FILE or the first .pyiceberg.yaml found in\n"    \
    "$PYICEBERG_HOME, ~ and the current directory; PYICEBERG_CATALOG__<NAME>__<KEY>\n"        \
    "variables override the file, --uri and --warehouse override both. Supported: SQL\n"      \
    "catalogs (uri sqlite:///file.db, postgresql://user@host:port/db) and `type: hadoop`\n"   \
    "filesystem catalogs over a warehouse directory.\n"                                       \
    "\n"                                                                                     \
    "Options:\n"                                                                             \
    "  --json      one JSON document on stdout\n"                                            \
    "  -h, --help  print this help\n"

static const char list_namespaces_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] list-namespaces [PARENT] [--json]\n"
    "\n"
    "List the catalog's namespaces, one per line, sorted: the top-level ones, or the direct\n"
    "children of PARENT (dotted, e.g. `a.b`). JSON: {\"parent\": ..., \"namespaces\": [...]}.\n"
    CATALOG_HELP_TAIL;

static const char list_tables_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] list-tables NAMESPACE [--json]\n"
    "\n"
    "List the tables of NAMESPACE, one name per line, sorted.\n"
    "JSON: {\"namespace\": ..., \"tables\": [...]}.\n" CATALOG_HELP_TAIL;

static const char register_table_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] register-table NS.TABLE METADATA_FILE [--force] [--json]\n"
    "\n"
    "Record an existing table metadata file as table NS.TABLE in the catalog (the file is\n"
    "read and checked first; nothing is copied or rewritten; a relative path is recorded\n"
    "absolute). The namespace must exist. Fails when the table name is taken. Not supported\n"
    "by filesystem catalogs.\n"
    "\n"
    "Refused (exit code 5) when a table of the catalog already has METADATA_FILE as its\n"
    "current metadata, or the same table location: two tables sharing files lose data at the\n"
    "first snapshot expiry or orphan sweep of either; and when METADATA_FILE does not lie in\n"
    "its own table location's metadata folder or write.metadata.path (a copied table folder,\n"
    "whose metadata still names the original: maintaining it would delete the original's\n"
    "files). --force registers it anyway. A METADATA_FILE inside an icemaint trash\n"
    "(<trash>/<table-uuid>/files/, beside its journal/) is refused even then: `trash expire`\n"
    "deletes it; restore it first (`icemaint trash restore`).\n"
    CATALOG_HELP_TAIL;

const icm_cli_command icm_cli_cmd_list_namespaces = {
    "list-namespaces", "list the catalog's namespaces", list_namespaces_help,
    run_list_namespaces,
};

const icm_cli_command icm_cli_cmd_list_tables = {
    "list-tables", "list the tables of a namespace", list_tables_help, run_list_tables,
};

const icm_cli_command icm_cli_cmd_register_table = {
    "register-table", "register a metadata file as a catalog table", register_table_help,
    run_register_table,
};
