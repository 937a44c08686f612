/*
 * catalog/sql/store.h: the small row-store interface the SQL catalog runs on (after
 * iceberg-cpp's CatalogStore): parameterised statements with text parameters and '?'
 * placeholders, and a precise statement of what is known after a failed statement. Back ends:
 * SQLite (store_sqlite.c), PostgreSQL through libpq (store_pg.c) and a fault-injecting wrapper
 * for tests (store_fault.c). Not installed.
 */
#ifndef ICM_CATALOG_SQL_STORE_H
#define ICM_CATALOG_SQL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/catalog.h"

typedef struct icm__sql_store icm__sql_store;

/* One result row: `values[i]` is NULL for SQL NULL. Return non-zero to stop. */
typedef int (*icm__sql_row_cb)(size_t ncols, const char *const *values, void *payload);

typedef struct icm__sql_store_methods {
    const char *name; /* "sqlite", "postgresql", "fault" */
    /*
     * Run one statement (autocommit). On success *out_changes = rows changed (0 for DDL).
     * On failure return a negative code and set *out_maybe_applied: false only when the
     * statement provably had no effect (never sent, or rejected as a whole by the server:
     * constraint, syntax, rollback); true when it may have been applied (connection lost after
     * sending, I/O error during commit). Unique-key violations return ICM_EEXISTS.
     */
    int (*exec)(icm__sql_store *s, const char *sql, const char *const *params, size_t n_params,
                int64_t *out_changes, bool *out_maybe_applied);
    /* Run a query and call cb for each row. */
    int (*query)(icm__sql_store *s, const char *sql, const char *const *params, size_t n_params,
                 icm__sql_row_cb cb, void *payload);
    /* Whether `table` exists and whether it has `column` (identifiers are plain, lower-case). */
    int (*probe_column)(icm__sql_store *s, const char *table, const char *column,
                        bool *out_table_exists, bool *out_column_exists);
    void (*free)(icm__sql_store *s);
} icm__sql_store_methods;

struct icm__sql_store {
    const icm__sql_store_methods *methods;
};

/* SQLite database file, which must exist (":memory:" for a private in-memory one): opening a
 * catalog never creates its database, so a mistyped path is ICM_ENOTFOUND naming the absolute
 * path, not a new empty catalog. */
int icm__sql_store_open_sqlite(icm__sql_store **out, const char *path);
/* The same, read-only (SQLITE_OPEN_READONLY): for looking into a database that is not the
 * catalog's own (the sweep's guard). Such a connection never writes it, and never checkpoints
 * or removes its -wal and -shm when it closes. */
int icm__sql_store_open_sqlite_readonly(icm__sql_store **out, const char *path);
/* Create the SQLite database file `path` when it is missing (icm_catalog_sqlite_create). */
int icm__sql_store_create_sqlite(const char *path);
/* PostgreSQL through libpq; `conninfo` is a libpq connection string or postgresql:// URI. */
int icm__sql_store_open_pg(icm__sql_store **out, const char *conninfo);
/* By SQLAlchemy-style URI: sqlite:///rel, sqlite:////abs, sqlite:///:memory:,
 * postgresql[+driver]://... */
int icm__sql_store_open_uri(icm__sql_store **out, const char *uri);

/* The database file of a `sqlite://` URI as SQLite opens it (relative to the working directory
 * when the URI is `sqlite:///rel.db`); *out is NULL for another URI or an in-memory database.
 * Returns 0, ICM_EINVALID (a malformed sqlite URI) or ICM_ENOMEM. */
int icm__sqlite_path_from_uri(const char *uri, char **out);

/* The database file a SQL catalog on SQLite uses (absolute; new string), or NULL for another
 * store, an in-memory database, or a catalog that is not SQL. NULL also on allocation
 * failure (then ICM_ENOMEM is the last error). */
char *icm__sql_catalog_database_file(const icm_catalog *cat);

/* The database file of a SQLite store (absolute, new string); NULL for another store or an
 * in-memory database. */
char *icm__sql_store_sqlite_file(const icm__sql_store *s);

/* One row of iceberg_tables: its catalog_name, namespace, table name and metadata_location
 * (NULL when the row has none), borrowed for the call. Return 0 to go on. */
typedef int (*icm__sql_pointer_cb)(const char *catalog_name, const char *ns, const char *name,
                                   const char *pointer, void *payload);

/* Call cb for every row of the store's iceberg_tables, whatever its catalog_name (tables and,
 * in a V1 schema, views): every pointer the database holds, for the checks that keep a
 * maintenance run off another table's files (issue #16). Rows are read first, then cb runs.
 * Returns 0, the store's query codes, ICM_ENOMEM or cb's non-zero value. */
int icm__sql_store_each_pointer(icm__sql_store *store, icm__sql_pointer_cb cb, void *payload);
/* The same over the store of a SQL catalog (`cat` must be one: kind "sql"). */
int icm__sql_catalog_each_pointer(const icm_catalog *cat, icm__sql_pointer_cb cb,
                                  void *payload);

/* ---- fault injection (tests) ---- */
typedef enum icm__sql_fault {
    ICM__SQL_FAULT_NONE = 0,
    ICM__SQL_FAULT_LOST_BEFORE,       /* connection lost before the statement was sent */
    ICM__SQL_FAULT_LOST_AFTER_APPLY,  /* statement applied, then the connection was lost */
    ICM__SQL_FAULT_LOST_UNAPPLIED     /* sent, lost in flight, never applied (result lost) */
} icm__sql_fault;

/* Wrap `inner` (taken). The armed fault hits the next statement starting with `prefix`
 * (e.g. "UPDATE"); `hook`, when set, runs at that moment (before the inner statement for
 * LOST_UNAPPLIED / LOST_BEFORE, after it for LOST_AFTER_APPLY): tests use it to commit through
 * another handle "while the connection is down". */
int icm__sql_store_fault_new(icm__sql_store **out, icm__sql_store *inner_take);
void icm__sql_store_fault_arm(icm__sql_store *fault, icm__sql_fault kind, const char *prefix,
                              void (*hook)(void *payload), void *payload);
/* Number of statements (exec + query) that reached the wrapper. */
uint64_t icm__sql_store_fault_statements(const icm__sql_store *fault);

/* Open a SQL catalog on an already opened store (taken, also on failure). */
int icm__catalog_open_sql_store(icm_catalog **out, const char *name, icm__sql_store *store_take,
                                const char *warehouse, icm_fileio *io,
                                const icm_property *properties, size_t n_properties);
/* Whether the catalog detected (or created) the V1 schema (column iceberg_type). */
bool icm__sql_catalog_is_v1(const icm_catalog *cat);

#endif
