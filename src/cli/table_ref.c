/*
 * cli/table_ref.c: turn the TABLE argument into table metadata, and build the FileIO every
 * command uses: a resolving FileIO (local files, and S3 for s3/s3a/s3n locations) configured
 * by the catalog entry's properties, behind the --path-map rules.
 *
 * TABLE is one of (contract "Invocation"):
 *  - a metadata JSON file: read as is (read-only: commands that commit refuse it later);
 *  - a table directory in filesystem (Hadoop) layout, local or an object-store location such
 *    as `s3://bucket/t`: the current metadata file is found by icm_table_metadata_find_current
 *    through the FileIO (version-hint, else the highest version);
 *  - `ns.table` / `ns1.ns2.table`: a table in the configured catalog (catalog_ref.h), whose
 *    current metadata file the catalog names.
 * The argument itself also goes through the path map, so a user may name a table by its
 * original location (`s3://bucket/t`) and have it read from the local copy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog_ref.h"
#include "cli.h"
#include "icemaint/common.h"

/* The FileIO properties: those of the configured catalog entry (.pyiceberg.yaml and
 * PYICEBERG_CATALOG__<NAME>__* variables, as the catalog itself reads them), so that its
 * `s3.*` and `client.*` settings reach the S3 back end whatever form TABLE takes. With no
 * catalog configured the list is empty, and the back ends fall back on the AWS environment
 * and profile files, as the SDKs do. A configuration that cannot be read is an error: the
 * user named it (or it is where PyIceberg would read it), and guessing without it could reach
 * another endpoint with other credentials. */
static int fileio_properties(icm_cli *cli, char **name, icm_property **out, size_t *n)
{
    icm_catalog_config_options co = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    co.name = cli->catalog;
    co.config_file = cli->config;
    co.uri = cli->uri;
    co.warehouse = cli->warehouse;
    return icm_catalog_config_resolve(name, out, n, &co);
}

/* An `s3.` key no S3 client reads is ignored by every one of them: most likely a misspelling
 * (`s3.endpont`) whose setting silently does not apply, so the requests would go to AWS or
 * with other credentials. Warned once per key (the FileIO is built once per run). */
static void warn_unknown_properties(const icm_cli *cli, const char *catalog,
                                    const icm_property *props, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *closest = NULL;
        if (!icm_fileio_s3_property_unknown(&closest, props[i].key))
            continue;
        bool repeated = false;
        for (size_t j = 0; j < i && !repeated; j++)
            repeated = strcmp(props[j].key, props[i].key) == 0;
        if (repeated)
            continue;
        if (closest != NULL)
            icm_cli_warn(cli, "catalog '%s': unknown property %s (did you mean %s?)", catalog,
                         props[i].key, closest);
        else
            icm_cli_warn(cli, "catalog '%s': unknown property %s (no S3 client reads it)",
                         catalog, props[i].key);
    }
}

icm_fileio *icm_cli_fileio(icm_cli *cli)
{
    if (cli->io != NULL)
        return cli->io;
    icm_property *props = NULL;
    size_t n_props = 0;
    char *name = NULL;
    int rc = fileio_properties(cli, &name, &props, &n_props);
    icm_fileio *base = NULL;
    if (rc == 0) {
        warn_unknown_properties(cli, name != NULL ? name : "", props, n_props);
        rc = icm_fileio_resolving_new(&base, props, n_props);
    }
    icm_free(name);
    icm_catalog_properties_free(props, n_props);
    if (rc != 0) {
        icm_cli_fail(cli, rc);
        return NULL;
    }
    if (cli->n_path_maps == 0) {
        cli->io = base;
        return cli->io;
    }
    icm_fileio *mapped = NULL;
    rc = icm_fileio_pathmap_new(&mapped, base, cli->path_maps, cli->n_path_maps);
    if (rc != 0) {
        /* pathmap_new has freed `base`: it takes it on failure too */
        icm_cli_fail(cli, rc);
        return NULL;
    }
    cli->io = mapped;
    return cli->io;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A bare dotted name that is not a path: `db.events`, `a.b.c`. Existing local paths win, so
 * a file called `t.json` or a directory `my.table` in the working directory still works. */
static bool looks_like_catalog_name(const char *ref)
{
    if (strchr(ref, '/') != NULL || strchr(ref, ':') != NULL || ref[0] == '.')
        return false;
    if (ends_with(ref, ".json") || strchr(ref, '.') == NULL)
        return false;
    struct stat st;
    return stat(ref, &st) != 0;
}

typedef enum ref_kind { REF_MISSING, REF_FILE, REF_DIR, REF_REMOTE } ref_kind;

/* Where does `ref` point on local disk (after path mapping)? Remote URIs cannot be checked
 * here; they are classified by name later. */
static int classify(icm_cli *cli, icm_fileio *io, const char *ref, ref_kind *kind)
{
    *kind = REF_MISSING;
    char *mapped = NULL;
    if (cli->n_path_maps > 0) {
        int rc = icm_fileio_pathmap_apply(&mapped, io, ref);
        if (rc != 0)
            return icm_cli_fail(cli, rc);
    }
    char *local = NULL;
    bool is_local = icm_location_local_path(&local, mapped != NULL ? mapped : ref);
    icm_free(mapped);
    if (!is_local) {
        if (local == NULL && icm_error_last()->code == ICM_ENOMEM)
            return icm_cli_fail(cli, ICM_ENOMEM);
        *kind = REF_REMOTE;
        return ICM_EXIT_OK;
    }
    struct stat st;
    int err = stat(local, &st) != 0 ? errno : 0;
    icm_free(local);
    if (err == 0) {
        *kind = S_ISDIR(st.st_mode) ? REF_DIR : REF_FILE;
        return ICM_EXIT_OK;
    }
    /* Missing is the usual answer; any other reason (a name longer than the OS allows, no
     * permission, a loop of links) is what the user must fix, so it is the message. */
    if (err == ENOENT || err == ENOTDIR)
        return ICM_EXIT_OK;
    return icm_cli_error(ref, "cannot use this table path: %s", strerror(err));
}

/* The metadata file TABLE stands for (malloc'd into *out), for a path (a catalog table is
 * opened through its catalog: open_catalog_table). Returns an exit code. */
static int resolve_metadata_location(icm_cli *cli, icm_fileio *io, const char *ref, char **out)
{
    *out = NULL;
    ref_kind kind = REF_MISSING;
    int rc = classify(cli, io, ref, &kind);
    if (rc != ICM_EXIT_OK)
        return rc;
    if (kind == REF_MISSING)
        return icm_cli_error(ref, "no such table directory or metadata file");
    if (kind == REF_FILE || (kind == REF_REMOTE && ends_with(ref, ".json"))) {
        *out = strdup(ref);
        return *out != NULL ? ICM_EXIT_OK : icm_cli_oom();
    }
    char *found = NULL;
    rc = icm_table_metadata_find_current(&found, io, ref);
    if (rc != 0)
        return icm_cli_fail(cli, rc);
    *out = strdup(found);
    icm_free(found);
    return *out != NULL ? ICM_EXIT_OK : icm_cli_oom();
}

int icm_cli_original_name(icm_cli *cli, const char *ref, char **out)
{
    *out = NULL;
    if (cli->n_path_maps == 0 || looks_like_catalog_name(ref)) {
        *out = strdup(ref);
        return *out != NULL ? ICM_EXIT_OK : icm_cli_oom();
    }
    icm_fileio *io = icm_cli_fileio(cli);
    if (io == NULL)
        return ICM_EXIT_ERROR;
    char *orig = NULL;
    int rc = icm_fileio_pathmap_unapply(&orig, io, ref);
    if (rc != 0)
        return icm_cli_fail(cli, rc);
    *out = strdup(orig);
    icm_free(orig);
    return *out != NULL ? ICM_EXIT_OK : icm_cli_oom();
}

int icm_cli_table_name(icm_cli *cli, const char *ref, char **out)
{
    *out = NULL;
    if (looks_like_catalog_name(ref))
        return icm_cli_original_name(cli, ref, out);
    /* A name at or below a --path-map TO as typed is the metadata's own name after the map
     * (a relative TO matches a relative TABLE) and is kept as such. */
    int rc = icm_cli_original_name(cli, ref, out);
    if (rc != ICM_EXIT_OK || strcmp(*out, ref) != 0)
        return rc;
    free(*out);
    *out = NULL;
    /* Absolute and canonical once, before anything is read or recorded under this name
     * (issue #16, class 1: a relative table path was planned against the wrong roots). A name
     * that differs from its canonical form only by a `file:` prefix or repeated slashes keeps
     * the form it was given in (reports show it as given; every comparison folds those). */
    char *canon = NULL, *plain = NULL;
    if ((rc = icm_location_canonical(&canon, ref)) != 0)
        return icm_cli_fail(cli, rc);
    bool same = icm_location_local_path(&plain, ref) && strcmp(plain, canon) == 0;
    icm_free(plain);
    rc = icm_cli_original_name(cli, same ? ref : canon, out);
    icm_free(canon);
    return rc;
}

/* A catalog table through its catalog (icm_table_load): the metadata the catalog gives, and
 * the table's own FileIO, which for a REST catalog carries the credentials it vends for this
 * table (the CLI's FileIO has none). */
static int open_catalog_table(icm_cli *cli, const char *ref, icm_cli_table *out)
{
    int rc = icm_cli_catalog_load_table(cli, ref, &out->catalog, &out->table);
    if (rc != ICM_EXIT_OK)
        return rc;
    const char *loc = icm_table_get_metadata_location(out->table);
    if (cli->verbosity > 0)
        icm_cli_line(stderr, "icemaint: reading table metadata %s", loc);
    int lrc = icm_table_metadata_copy(&out->md, icm_table_get_metadata(out->table));
    if (lrc != 0) {
        icm_cli_table_close(out);
        return icm_cli_fail(cli, lrc);
    }
    out->metadata_location = strdup(loc);
    out->io = icm_table_get_fileio(out->table);
    if (out->metadata_location == NULL) {
        icm_cli_table_close(out);
        return icm_cli_oom();
    }
    return ICM_EXIT_OK;
}

int icm_cli_table_open(icm_cli *cli, const char *ref, icm_cli_table *out)
{
    memset(out, 0, sizeof *out);
    if (ref == NULL || *ref == '\0')
        return icm_cli_usage(NULL, "TABLE is empty");
    icm_fileio *io = icm_cli_fileio(cli);
    if (io == NULL)
        return ICM_EXIT_ERROR;
    if (looks_like_catalog_name(ref))
        return open_catalog_table(cli, ref, out);
    out->io = io;
    char *orig = NULL;
    int rc = icm_cli_table_name(cli, ref, &orig);
    if (rc != ICM_EXIT_OK)
        return rc;
    char *location = NULL;
    rc = resolve_metadata_location(cli, io, orig, &location);
    free(orig);
    if (rc != ICM_EXIT_OK)
        return rc;
    if (cli->verbosity > 0)
        icm_cli_line(stderr, "icemaint: reading table metadata %s", location);
    rc = icm_table_metadata_read(&out->md, io, location);
    if (rc != 0) {
        free(location);
        out->md = NULL;
        return icm_cli_fail(cli, rc);
    }
    out->metadata_location = location;
    return ICM_EXIT_OK;
}

void icm_cli_table_close(icm_cli_table *t)
{
    icm_table_metadata_free(t->md);
    free(t->metadata_location);
    icm_table_free(t->table);
    icm_catalog_free(t->catalog);
    memset(t, 0, sizeof *t);
}

int icm_cli_pick_snapshot(const icm_cli_table *t, const char *id_text, const icm_snapshot **out)
{
    int64_t id;
    *out = NULL;
    if (id_text != NULL) {
        if (!icm_cli_parse_int64(id_text, &id))
            return icm_cli_usage(id_text, "--snapshot-id needs a snapshot id (an integer)");
        *out = icm_table_metadata_snapshot_by_id(t->md, id);
        if (*out == NULL)
            return icm_cli_error(t->metadata_location, "no snapshot with id %s", id_text);
        return ICM_EXIT_OK;
    }
    if (!icm_table_metadata_current_snapshot_id(&id, t->md))
        return ICM_EXIT_OK;
    *out = icm_table_metadata_snapshot_by_id(t->md, id);
    if (*out == NULL) {
        char text[24];
        return icm_cli_error(t->metadata_location,
                             "current-snapshot-id %s names no snapshot in the metadata",
                             icm_cli_format_int64(id, text, sizeof text));
    }
    return ICM_EXIT_OK;
}

/* --table-id ID: a JSON array of strings, the namespace levels then the table name. Unlike
 * TABLE it is never a path and never re-split at dots, so a table named `a.b`, a namespace
 * holding `/` or `:`, or a folder in the working directory spelled like the name cannot turn
 * it into another table (maintain's children are given their table this way). */
int icm_cli_table_load_id(icm_cli *cli, const char *id, icm_catalog **out_cat,
                          icm_table **out_table)
{
    *out_cat = NULL;
    *out_table = NULL;
    json_error_t jerr;
    json_t *doc = json_loads(id, JSON_REJECT_DUPLICATES, &jerr);
    size_t n = json_array_size(doc);
    bool ok = json_is_array(doc) && n >= 2;
    for (size_t i = 0; ok && i < n; i++) {
        const char *s = json_string_value(json_array_get(doc, i));
        ok = s != NULL && s[0] != '\0' && strlen(s) == json_string_length(json_array_get(doc, i));
    }
    if (!ok) {
        json_decref(doc);
        return icm_cli_usage(id, "--table-id needs a JSON array of the namespace levels and "
                                 "the table name, each a non-empty string: [\"ns\",\"t\"]");
    }
    const char **levels = calloc(n - 1, sizeof *levels);
    if (levels == NULL) {
        json_decref(doc);
        return icm_cli_oom();
    }
    for (size_t i = 0; i + 1 < n; i++)
        levels[i] = json_string_value(json_array_get(doc, i));
    int rc = icm_cli_catalog_open(cli, out_cat);
    if (rc == ICM_EXIT_OK) {
        int lrc = icm_table_load_levels(out_table, *out_cat, levels, n - 1,
                                        json_string_value(json_array_get(doc, n - 1)));
        if (lrc != 0) {
            rc = icm_cli_fail(cli, lrc);
            icm_catalog_free(*out_cat);
            *out_cat = NULL;
        }
    }
    free(levels);
    json_decref(doc);
    return rc;
}
