/*
 * catalog/sql/sql_catalog.c: the SQL catalog with the exact schema of Java's JdbcCatalog and
 * PyIceberg's SqlCatalog (`iceberg_tables`, `iceberg_namespace_properties`; V0 without and V1
 * with `iceberg_type`), every row keyed by catalog name. The commit is the single conditional
 * UPDATE of the JdbcCatalog: exactly one changed row is success, zero rows is a proven failure,
 * a statement whose result was lost is an unknown outcome.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog/catalog_internal.h"
#include "catalog/sql/store.h"
#include "io/fileio_internal.h"
#include "util/location.h"
#include "util/util.h"

typedef struct sql_catalog {
    icm_catalog base;
    icm__sql_store *store;
    char *warehouse; /* NULL when not configured */
    bool v1;         /* iceberg_tables has iceberg_type */
} sql_catalog;

/* PyIceberg's DDL (V1): property_key/value NOT NULL, iceberg_type present. */
static const char DDL_TABLES[] =
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))";
static const char DDL_NAMESPACES[] =
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL, "
    "PRIMARY KEY (catalog_name, namespace, property_key))";

/* Views share iceberg_tables in V1; table lookups must not see them (NULL reads as TABLE). */
#define TABLE_TYPE_FILTER " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"

static sql_catalog *as_sql(icm_catalog *cat)
{
    return (sql_catalog *)cat;
}

static int exec(sql_catalog *c, const char *sql, const char *const *params, size_t n,
                int64_t *changes, bool *maybe_applied)
{
    int64_t ch = 0;
    bool maybe = false;
    int rc = c->store->methods->exec(c->store, sql, params, n, &ch, &maybe);
    if (changes != NULL)
        *changes = ch;
    if (maybe_applied != NULL)
        *maybe_applied = maybe;
    return rc;
}

/* ---- load ---- */

typedef struct first_value {
    char *value;
    bool found;
    bool oom;
} first_value;

static int take_first(size_t ncols, const char *const *values, void *payload)
{
    first_value *f = payload;
    f->found = true;
    if (ncols > 0 && values[0] != NULL) {
        f->value = icm__strdup(values[0]);
        f->oom = f->value == NULL;
    }
    return 1; /* one row is enough */
}

/* ICM_ENOTFOUND naming the table by its whole name (the error's location is `ns.name`). */
static int not_found(const icm_catalog *cat, const icm_table_ident *id, const char *detail)
{
    char *name = icm__sprintf("%s.%s", id->ns, id->name);
    int rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ENOTFOUND, name != NULL ? name : id->name,
                            "table does not exist in catalog '%s'%s", cat->name, detail);
    icm__free(name);
    return rc;
}

static int sql_load_table(icm_catalog *cat, const icm_table_ident *id, char **out)
{
    sql_catalog *c = as_sql(cat);
    *out = NULL;
    const char *p[] = {cat->name, id->ns, id->name};
    first_value f = {NULL, false, false};
    int rc = c->store->methods->query(
        c->store,
        c->v1 ? "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
                "table_namespace = ? AND table_name = ?" TABLE_TYPE_FILTER
              : "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
                "table_namespace = ? AND table_name = ?",
        p, 3, take_first, &f);
    if (rc < 0) {
        icm__free(f.value);
        return rc;
    }
    if (f.oom)
        return ICM_ENOMEM;
    if (f.value == NULL)
        return not_found(cat, id, f.found ? " (row without metadata_location)" : "");
    *out = f.value;
    return 0;
}

/* ---- commit ---- */

/*
 * The name the row records for a new metadata file `*file` (written through the catalog's
 * FileIO, under the metadata's own names): the row keeps the form it had. Under a path map the
 * file really lies at the mapped name; a row that named where its file really is (a copy
 * registered under its own place, whose metadata names the original) must go on doing so, or
 * every reader without the map (PyIceberg, Java, a later run) would look for the new file at
 * the original's place. A row in the metadata's own names keeps them. Returns 0 or ICM_ENOMEM.
 */
static int row_form(icm_fileio *io, const char *base_location, char **file)
{
    if (icm__fileio_pathmap_inner(io) == NULL || base_location == NULL)
        return 0; /* no path map: names are places */
    char *base_mapped = NULL, *mapped = NULL;
    int rc = icm_fileio_pathmap_apply(&base_mapped, io, base_location);
    if (rc == 0 && strcmp(base_mapped, base_location) == 0) /* the row names places */
        rc = icm_fileio_pathmap_apply(&mapped, io, *file);
    if (rc == 0 && mapped != NULL) {
        icm__free(*file);
        *file = icm__strdup(mapped);
        rc = *file != NULL ? 0 : ICM_ENOMEM;
    }
    icm_free(mapped);
    icm_free(base_mapped);
    return rc;
}

static int sql_commit(icm_catalog *cat, const icm_table_ident *id, const char *base_location,
                      const icm_table_metadata *md, char **out_file)
{
    sql_catalog *c = as_sql(cat);
    *out_file = NULL;
    char *file = NULL;
    int rc = icm_catalog_write_metadata_file(&file, cat->io, base_location, md);
    if (rc == 0)
        rc = row_form(cat->io, base_location, &file);
    if (rc != 0) {
        icm__free(file);
        return rc;
    }
    *out_file = file;
    const char *p[] = {file, base_location, cat->name, id->ns, id->name, base_location};
    int64_t changes = 0;
    bool maybe_applied = false;
    /* The JdbcCatalog's compare-and-swap: one statement, conditional on the base location. */
    rc = exec(c,
              c->v1 ? "UPDATE iceberg_tables SET metadata_location = ?, "
                      "previous_metadata_location = ? WHERE catalog_name = ? AND "
                      "table_namespace = ? AND table_name = ? AND metadata_location = ?"
                      TABLE_TYPE_FILTER
                    : "UPDATE iceberg_tables SET metadata_location = ?, "
                      "previous_metadata_location = ? WHERE catalog_name = ? AND "
                      "table_namespace = ? AND table_name = ? AND metadata_location = ?",
              p, 6, &changes, &maybe_applied);
    if (rc != 0) {
        char reason[512]; /* the store's message, before it is replaced */
        snprintf(reason, sizeof reason, "%s", icm_error_last()->message);
        if (maybe_applied)
            return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, id->name,
                                  "swap of %s.%s to %s may have been applied: %s", id->ns,
                                  id->name, file, reason);
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, id->name,
                              "commit of %s.%s not applied (statement had no effect): %s",
                              id->ns, id->name, reason);
    }
    if (changes == 1)
        return 0;
    if (changes == 0)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, id->name,
                              "commit failed: table %s.%s is no longer at base %s (changed "
                              "concurrently or dropped; compare-and-swap matched no row)",
                              id->ns, id->name, base_location);
    /* The primary key makes this impossible; if it happens, nothing about it is certain. */
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, id->name,
                          "compare-and-swap changed %lld rows (expected 1)", (long long)changes);
}

/* ---- create / register / drop ---- */

static int insert_table(sql_catalog *c, const icm_table_ident *id, const char *location,
                        bool *maybe_applied)
{
    const char *p[] = {c->base.name, id->ns, id->name, location};
    int rc = exec(c,
                  c->v1 ? "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                          "metadata_location, previous_metadata_location, iceberg_type) "
                          "VALUES (?, ?, ?, ?, NULL, 'TABLE')"
                        : "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                          "metadata_location, previous_metadata_location) "
                          "VALUES (?, ?, ?, ?, NULL)",
                  p, 4, NULL, maybe_applied);
    if (rc == ICM_EEXISTS)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EEXISTS, id->name,
                              "table %s.%s already exists in catalog '%s'", id->ns, id->name,
                              c->base.name);
    return rc;
}

static int sql_create_table(icm_catalog *cat, const icm_table_ident *id,
                            const icm_table_metadata *md, char **out_location)
{
    sql_catalog *c = as_sql(cat);
    *out_location = NULL;
    char *file = NULL;
    bool maybe_applied = false;
    int rc = icm_catalog_write_metadata_file(&file, cat->io, NULL, md);
    if (rc != 0)
        return rc;
    rc = insert_table(c, id, file, &maybe_applied);
    if (rc != 0) {
        /* Keep the file when the row may exist and point at it. */
        if (!maybe_applied) {
            icm__error_saved *saved = icm__error_save();
            (void)icm_fileio_delete(cat->io, file);
            icm__error_restore(saved);
        }
        icm__free(file);
        return rc;
    }
    *out_location = file;
    return 0;
}

static int sql_register_table(icm_catalog *cat, const icm_table_ident *id, const char *location)
{
    return insert_table(as_sql(cat), id, location, NULL);
}

static int sql_drop_table(icm_catalog *cat, const icm_table_ident *id)
{
    sql_catalog *c = as_sql(cat);
    const char *p[] = {cat->name, id->ns, id->name};
    int64_t changes = 0;
    int rc = exec(c,
                  c->v1 ? "DELETE FROM iceberg_tables WHERE catalog_name = ? AND "
                          "table_namespace = ? AND table_name = ?" TABLE_TYPE_FILTER
                        : "DELETE FROM iceberg_tables WHERE catalog_name = ? AND "
                          "table_namespace = ? AND table_name = ?",
                  p, 3, &changes, NULL);
    if (rc != 0)
        return rc;
    if (changes == 0)
        return not_found(cat, id, "");
    return 0;
}

/* ---- namespaces and listings ---- */

static int sql_create_namespace(icm_catalog *cat, const char *ns)
{
    const char *p[] = {cat->name, ns};
    int rc = exec(as_sql(cat),
                  "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
                  "property_key, property_value) VALUES (?, ?, 'exists', 'true')",
                  p, 2, NULL, NULL);
    if (rc == ICM_EEXISTS)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EEXISTS, ns,
                              "namespace already exists in catalog '%s'", cat->name);
    return rc;
}

typedef struct name_forward {
    icm_name_cb cb;
    void *payload;
} name_forward;

static int forward_name(size_t ncols, const char *const *values, void *payload)
{
    name_forward *f = payload;
    if (ncols == 0 || values[0] == NULL)
        return 0;
    return f->cb(values[0], f->payload);
}

static int sql_list_all_namespaces(icm_catalog *cat, icm_name_cb cb, void *payload)
{
    sql_catalog *c = as_sql(cat);
    const char *p[] = {cat->name, cat->name};
    name_forward f = {cb, payload};
    return c->store->methods->query(
        c->store,
        "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ? UNION "
        "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?",
        p, 2, forward_name, &f);
}

static int sql_list_tables(icm_catalog *cat, const char *ns, icm_name_cb cb, void *payload)
{
    sql_catalog *c = as_sql(cat);
    const char *p[] = {cat->name, ns};
    name_forward f = {cb, payload};
    return c->store->methods->query(
        c->store,
        c->v1 ? "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND "
                "table_namespace = ?" TABLE_TYPE_FILTER
              : "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND "
                "table_namespace = ?",
        p, 2, forward_name, &f);
}

/* PyIceberg: the namespace's `location` property, else `<warehouse>/<ns>/<table>`. */
static int sql_default_table_location(icm_catalog *cat, const icm_table_ident *id, char **out)
{
    sql_catalog *c = as_sql(cat);
    *out = NULL;
    const char *p[] = {cat->name, id->ns};
    first_value f = {NULL, false, false};
    int rc = c->store->methods->query(c->store,
                                      "SELECT property_value FROM iceberg_namespace_properties "
                                      "WHERE catalog_name = ? AND namespace = ? AND "
                                      "property_key = 'location'",
                                      p, 2, take_first, &f);
    if (rc < 0) {
        icm__free(f.value);
        return rc;
    }
    if (f.oom)
        return ICM_ENOMEM;
    if (f.value != NULL && f.value[0] != '\0') {
        *out = icm__location_join(f.value, id->name);
        icm__free(f.value);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    icm__free(f.value);
    if (c->warehouse == NULL || c->warehouse[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, id->name,
                              "no table location given and catalog '%s' has no warehouse",
                              cat->name);
    char *ns_dir = icm__location_join(c->warehouse, id->ns);
    *out = ns_dir != NULL ? icm__location_join(ns_dir, id->name) : NULL;
    icm__free(ns_dir);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

static void sql_free(icm_catalog *cat)
{
    sql_catalog *c = as_sql(cat);
    if (c->store != NULL)
        c->store->methods->free(c->store);
    icm__free(c->warehouse);
    icm__free(c);
}

static const icm_catalog_methods sql_methods = {
    ICM_CATALOG_METHODS_VERSION,
    "sql",
    sql_load_table,
    sql_commit,
    sql_create_table,
    sql_register_table,
    sql_drop_table,
    sql_create_namespace,
    sql_list_all_namespaces,
    sql_list_tables,
    sql_default_table_location,
    sql_free,
    /* version 2: a pointer-swap back end. The generic layer checks requirements, applies
     * updates and calls `commit` to swap (icm_table_commit_changes); listings and loads go
     * through the version 1 slots. */
    NULL,
    NULL,
    NULL,
    NULL,
};

/* ---- opening ---- */

static const char *property(const icm_property *props, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (props[i].key != NULL && strcmp(props[i].key, key) == 0)
            return props[i].value;
    return NULL;
}

/* Create missing tables (V1, as PyIceberg does for new catalogs), then detect V0/V1. An
 * existing V0 database is used as V0 and never migrated. */
static int init_schema(sql_catalog *c, bool create)
{
    int ddl_rc = 0;
    if (create) {
        ddl_rc = exec(c, DDL_TABLES, NULL, 0, NULL, NULL);
        if (ddl_rc == 0)
            ddl_rc = exec(c, DDL_NAMESPACES, NULL, 0, NULL, NULL);
    }
    /* A DDL error is only fatal when the tables are still missing: two processes creating
     * them at once on PostgreSQL can fail with a duplicate-type error although both exist. */
    icm__error_saved *saved = ddl_rc != 0 ? icm__error_save() : NULL;
    bool tables = false, type_column = false, ns_table = false, unused = false;
    int rc = c->store->methods->probe_column(c->store, "iceberg_tables", "iceberg_type", &tables,
                                             &type_column);
    if (rc == 0)
        rc = c->store->methods->probe_column(c->store, "iceberg_namespace_properties",
                                             "namespace", &ns_table, &unused);
    if (ddl_rc != 0 && (rc != 0 || !tables || !ns_table)) {
        icm__error_restore(saved);
        return ddl_rc;
    }
    icm__error_restore(saved); /* NULL-safe; frees the saved copy */
    if (rc != 0)
        return rc;
    if (!tables || !ns_table)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ENOTFOUND, c->base.name,
                              "catalog tables iceberg_tables / iceberg_namespace_properties are "
                              "missing and init_catalog_tables is false");
    c->v1 = type_column;
    return 0;
}

int icm__catalog_open_sql_store(icm_catalog **out, const char *name, icm__sql_store *store_take,
                                const char *warehouse, icm_fileio *io,
                                const icm_property *properties, size_t n_properties)
{
    *out = NULL;
    sql_catalog *c = icm__calloc(1, sizeof *c);
    if (c == NULL) {
        store_take->methods->free(store_take);
        return ICM_ENOMEM;
    }
    c->store = store_take;
    int rc = icm_catalog_init_base(&c->base, &sql_methods, name, io);
    if (rc == 0 && warehouse != NULL && warehouse[0] != '\0') {
        /* Absolute once, here: new tables' locations are recorded below it (issue #16). */
        char *canon = NULL;
        rc = icm__location_canonical_keep_form(warehouse, &canon);
        if (rc == 0) {
            size_t n = strlen(canon);
            while (n > 1 && canon[n - 1] == '/')
                n--;
            c->warehouse = icm__strndup(canon, n);
            rc = c->warehouse != NULL ? 0 : ICM_ENOMEM;
        }
        icm__free(canon);
    }
    if (rc == 0) {
        const char *init = property(properties, n_properties, "init_catalog_tables");
        rc = init_schema(c, init == NULL || strcasecmp(init, "false") != 0);
    }
    if (rc != 0) {
        icm_catalog_free(&c->base);
        return rc;
    }
    *out = &c->base;
    return 0;
}

/* ---- every pointer the database holds ---- */

/* The rows of iceberg_tables, four strings each (catalog_name, namespace, name, pointer; the
 * pointer may be NULL), collected before any callback runs so no query is open meanwhile. */
typedef struct pointer_rows {
    icm__ptrvec cells;
    bool oom;
} pointer_rows;

static int collect_pointer_row(size_t ncols, const char *const *values, void *payload)
{
    pointer_rows *r = payload;
    for (size_t i = 0; i < 4; i++) {
        char *copy = NULL;
        if (i < ncols && values[i] != NULL && (copy = icm__strdup(values[i])) == NULL)
            r->oom = true;
        if (!r->oom && icm__ptrvec_push(&r->cells, copy) != 0) {
            icm__free(copy);
            r->oom = true;
        }
        if (r->oom)
            return 1;
    }
    return 0;
}

int icm__sql_store_each_pointer(icm__sql_store *store, icm__sql_pointer_cb cb, void *payload)
{
    /* Views (V1 iceberg_type = 'VIEW') too: their metadata files are pointers as well. */
    pointer_rows r = {ICM__PTRVEC_INIT, false};
    int rc = store->methods->query(store,
                                   "SELECT catalog_name, table_namespace, table_name, "
                                   "metadata_location FROM iceberg_tables",
                                   NULL, 0, collect_pointer_row, &r);
    if (rc >= 0 && r.oom)
        rc = ICM_ENOMEM;
    if (rc > 0)
        rc = 0;
    for (size_t i = 0; rc == 0 && i + 4 <= r.cells.len; i += 4) {
        char *const *row = (char *const *)&r.cells.items[i];
        if (row[0] != NULL && row[1] != NULL && row[2] != NULL)
            rc = cb(row[0], row[1], row[2], row[3], payload);
    }
    icm__ptrvec_dispose(&r.cells, icm__free);
    return rc;
}

int icm__sql_catalog_each_pointer(const icm_catalog *cat, icm__sql_pointer_cb cb, void *payload)
{
    return icm__sql_store_each_pointer(((const sql_catalog *)cat)->store, cb, payload);
}

bool icm__sql_catalog_is_v1(const icm_catalog *cat)
{
    return strcmp(cat->methods->kind, "sql") == 0 && ((const sql_catalog *)cat)->v1;
}

char *icm__sql_catalog_database_file(const icm_catalog *cat)
{
    if (cat == NULL || strcmp(cat->methods->kind, "sql") != 0)
        return NULL;
    return icm__sql_store_sqlite_file(((const sql_catalog *)cat)->store);
}

int icm_catalog_open_sql(icm_catalog **out, const char *name, const char *uri,
                         const char *warehouse, icm_fileio *io, const icm_property *properties,
                         size_t n_properties)
{
    *out = NULL;
    icm__sql_store *store = NULL;
    int rc = icm__sql_store_open_uri(&store, uri);
    if (rc != 0)
        return rc;
    return icm__catalog_open_sql_store(out, name, store, warehouse, io, properties,
                                       n_properties);
}

int icm_catalog_sqlite_create(const char *uri)
{
    char *path = NULL;
    int rc = icm__sqlite_path_from_uri(uri, &path);
    if (rc == 0 && path == NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, uri,
                              "not a SQLite database file URI (sqlite:///file.db)");
    if (rc == 0)
        rc = icm__sql_store_create_sqlite(path);
    icm__free(path);
    return rc;
}

/* ---- URIs ---- */

/* sqlite:///rel.db → "rel.db", sqlite:////abs.db → "/abs.db", sqlite:// or sqlite:///:memory:
 * → ":memory:" (SQLAlchemy's rules); a query string is dropped. */
static int sqlite_path_from_uri(const char *rest, char **out)
{
    size_t n = strcspn(rest, "?");
    if (n == 0 || (n == 1 && rest[0] == '/')) {
        *out = icm__strdup(":memory:");
    } else if (rest[0] != '/') {
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, rest,
                              "SQLite URI must look like sqlite:///relative.db or "
                              "sqlite:////absolute.db");
    } else {
        *out = icm__strndup(rest + 1, n - 1);
    }
    return *out != NULL ? 0 : ICM_ENOMEM;
}

int icm__sqlite_path_from_uri(const char *uri, char **out)
{
    *out = NULL;
    const char *colon = uri != NULL ? strstr(uri, "://") : NULL;
    if (colon == NULL || strcspn(uri, "+:") != 6 || strncmp(uri, "sqlite", 6) != 0)
        return 0;
    int rc = sqlite_path_from_uri(colon + 3, out);
    if (rc == 0 && strcmp(*out, ":memory:") == 0) {
        icm__free(*out);
        *out = NULL;
    }
    return rc;
}

int icm__sql_store_open_uri(icm__sql_store **out, const char *uri)
{
    *out = NULL;
    if (uri == NULL || uri[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL,
                              "SQL catalog needs a uri (sqlite:///file.db or postgresql://...)");
    const char *colon = strstr(uri, "://");
    if (colon == NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL,
                              "catalog uri has no scheme (sqlite:///file.db, postgresql://...)");
    size_t scheme_len = strcspn(uri, "+:"); /* drop a SQLAlchemy driver: postgresql+psycopg2 */
    if (scheme_len == 6 && strncmp(uri, "sqlite", 6) == 0) {
        char *path = NULL;
        int rc = sqlite_path_from_uri(colon + 3, &path);
        if (rc != 0)
            return rc;
        rc = icm__sql_store_open_sqlite(out, path);
        icm__free(path);
        return rc;
    }
    if ((scheme_len == 10 && strncmp(uri, "postgresql", 10) == 0) ||
        (scheme_len == 8 && strncmp(uri, "postgres", 8) == 0)) {
        char *conninfo = icm__sprintf("postgresql://%s", colon + 3);
        if (conninfo == NULL)
            return ICM_ENOMEM;
        int rc = icm__sql_store_open_pg(out, conninfo);
        icm__free(conninfo);
        return rc;
    }
    char shown[512];
    icm__redact_uri(uri, shown, sizeof shown);
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, shown,
                          "SQL catalog supports sqlite and postgresql URIs only");
}
