/*
 * catalog/sql/store_sqlite.c: the SQL catalog store on SQLite (one connection per store,
 * autocommit statements, a busy timeout so concurrent writers queue instead of failing).
 *
 * The database file is opened, never created (no SQLITE_OPEN_CREATE): a mistyped catalog path
 * must fail, not leave an empty catalog behind that later commands silently use. Creating one
 * is the explicit icm_catalog_sqlite_create (icm__sql_store_create_sqlite).
 */
#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog/sql/store.h"
#include "util/util.h"

/* How long a writer waits for another's lock before SQLITE_BUSY (a proven non-application). */
#define SQLITE_BUSY_TIMEOUT_MS 30000

typedef struct sqlite_store {
    icm__sql_store base;
    sqlite3 *db;
    char *path;
} sqlite_store;

static int sqlite_error(sqlite_store *s, int code_rc, const char *what)
{
    int ext = sqlite3_extended_errcode(s->db);
    int code = ICM_EIO;
    if (ext == SQLITE_CONSTRAINT_PRIMARYKEY || ext == SQLITE_CONSTRAINT_UNIQUE)
        code = ICM_EEXISTS;
    else if ((code_rc & 0xff) == SQLITE_ERROR)
        code = ICM_EINVALID; /* SQL error: no such table, syntax */
    else if ((code_rc & 0xff) == SQLITE_NOMEM)
        code = ICM_ENOMEM;
    return icm__error_set(ICM_ERRCLASS_SQL, code, s->path, "sqlite %s: %s (%s)", what,
                          sqlite3_errmsg(s->db), sqlite3_errstr(code_rc));
}

/* Whether a failed step can have left the change in the database. A failing autocommit
 * statement is rolled back as a whole; only I/O trouble around the commit (journal removal,
 * fsync) or corruption leaves the outcome open. */
static bool step_error_maybe_applied(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CONSTRAINT:
    case SQLITE_READONLY:
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_ERROR:
    case SQLITE_MISUSE:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
        return false;
    default:
        return true;
    }
}

static int prepare(sqlite_store *s, const char *sql, const char *const *params, size_t n,
                   sqlite3_stmt **out)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, out, NULL);
    if (rc != SQLITE_OK)
        return sqlite_error(s, rc, "prepare");
    for (size_t i = 0; i < n; i++) {
        rc = params[i] != NULL
                 ? sqlite3_bind_text(*out, (int)i + 1, params[i], -1, SQLITE_TRANSIENT)
                 : sqlite3_bind_null(*out, (int)i + 1);
        if (rc != SQLITE_OK) {
            int e = sqlite_error(s, rc, "bind");
            sqlite3_finalize(*out);
            *out = NULL;
            return e;
        }
    }
    return 0;
}

static int sqlite_exec(icm__sql_store *base, const char *sql, const char *const *params,
                       size_t n, int64_t *out_changes, bool *out_maybe_applied)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3_stmt *st = NULL;
    *out_changes = 0;
    *out_maybe_applied = false;
    int rc = prepare(s, sql, params, n, &st);
    if (rc != 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (step != SQLITE_DONE) {
        *out_maybe_applied = step_error_maybe_applied(step);
        rc = sqlite_error(s, step, "statement");
    } else {
        *out_changes = sqlite3_changes64(s->db);
    }
    sqlite3_finalize(st);
    return rc;
}

static int sqlite_query(icm__sql_store *base, const char *sql, const char *const *params,
                        size_t n, icm__sql_row_cb cb, void *payload)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3_stmt *st = NULL;
    int rc = prepare(s, sql, params, n, &st);
    if (rc != 0)
        return rc;
    const char *vals[8];
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        int ncols = sqlite3_column_count(st);
        if (ncols > (int)ICM__ARRAY_LEN(vals))
            ncols = (int)ICM__ARRAY_LEN(vals);
        for (int i = 0; i < ncols; i++)
            vals[i] = (const char *)sqlite3_column_text(st, i);
        rc = cb((size_t)ncols, vals, payload);
        if (rc != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = sqlite_error(s, step, "query");
    sqlite3_finalize(st);
    return rc;
}

typedef struct column_probe {
    const char *column;
    bool any;
    bool found;
} column_probe;

static int probe_row(size_t ncols, const char *const *values, void *payload)
{
    column_probe *p = payload;
    p->any = true;
    /* PRAGMA table_info: cid, name, type, notnull, dflt_value, pk */
    if (ncols > 1 && values[1] != NULL && strcmp(values[1], p->column) == 0)
        p->found = true;
    return 0;
}

static int sqlite_probe_column(icm__sql_store *base, const char *table, const char *column,
                               bool *out_table_exists, bool *out_column_exists)
{
    column_probe p = {column, false, false};
    char *sql = icm__sprintf("PRAGMA table_info(\"%s\")", table);
    if (sql == NULL)
        return ICM_ENOMEM;
    int rc = sqlite_query(base, sql, NULL, 0, probe_row, &p);
    icm__free(sql);
    *out_table_exists = p.any;
    *out_column_exists = p.found;
    return rc;
}

static void sqlite_free(icm__sql_store *base)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3_close_v2(s->db);
    icm__free(s->path);
    icm__free(s);
}

static const icm__sql_store_methods sqlite_methods = {
    "sqlite", sqlite_exec, sqlite_query, sqlite_probe_column, sqlite_free,
};

static bool in_memory(const char *path)
{
    return path[0] == '\0' || strcmp(path, ":memory:") == 0;
}

/* ICM_ENOTFOUND, naming the absolute path, when the database file `path` does not exist. */
static int missing_database(const char *path)
{
    struct stat st;
    if (in_memory(path) || stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
        return 0; /* other trouble: SQLite's own message says what */
    char *shown = NULL;
    if (icm_location_canonical(&shown, path) != 0)
        icm_error_clear(); /* the path as given then */
    int rc = icm__error_set(ICM_ERRCLASS_SQL, ICM_ENOTFOUND, shown != NULL ? shown : path,
                            "no such catalog database (icemaint never creates one: check the "
                            "catalog uri, or create the catalog with PyIceberg first)");
    icm_free(shown);
    return rc;
}

int icm__sql_store_create_sqlite(const char *path)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    int out = 0;
    if (rc != SQLITE_OK)
        out = icm__error_set(ICM_ERRCLASS_SQL, ICM_EIO, path, "cannot create SQLite database: %s",
                             db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    else if ((rc = sqlite3_exec(db, "PRAGMA user_version", NULL, NULL, NULL)) != SQLITE_OK)
        out = icm__error_set(ICM_ERRCLASS_SQL, ICM_EIO, path, "cannot create SQLite database: %s",
                             sqlite3_errmsg(db));
    sqlite3_close_v2(db);
    return out;
}

/* Open the database file `path` as SQLite's `name` (the path, or a URI for it). */
static int open_sqlite(icm__sql_store **out, const char *path, const char *name, int flags)
{
    *out = NULL;
    sqlite_store *s = icm__calloc(1, sizeof *s);
    if (s == NULL)
        return ICM_ENOMEM;
    s->base.methods = &sqlite_methods;
    s->path = icm__strdup(path);
    if (s->path == NULL) {
        icm__free(s);
        return ICM_ENOMEM;
    }
    int rc = missing_database(path);
    if (rc != 0) {
        icm__free(s->path);
        icm__free(s);
        return rc;
    }
    rc = sqlite3_open_v2(name, &s->db, flags, NULL);
    if (rc != SQLITE_OK) {
        int e = icm__error_set(ICM_ERRCLASS_SQL, ICM_EIO, path, "cannot open SQLite database: %s",
                               s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        sqlite_free(&s->base);
        return e;
    }
    sqlite3_busy_timeout(s->db, SQLITE_BUSY_TIMEOUT_MS);
    *out = &s->base;
    return 0;
}

int icm__sql_store_open_sqlite(icm__sql_store **out, const char *path)
{
    return open_sqlite(out, path, path, SQLITE_OPEN_READWRITE);
}

/* `file:PATH?immutable=1` (new string): SQLite's URI form, with the characters URIs give a
 * meaning to percent-encoded (sqlite.org/uri.html). */
static char *immutable_uri(const char *path)
{
    icm__buf b = ICM__BUF_INIT;
    icm__buf_puts(&b, "file:");
    for (const char *c = path; *c != '\0'; c++) {
        if (*c == '%' || *c == '?' || *c == '#')
            icm__buf_printf(&b, "%%%02X", (unsigned char)*c);
        else
            icm__buf_putc(&b, *c);
    }
    icm__buf_puts(&b, "?immutable=1");
    if (b.oom) {
        icm__buf_dispose(&b);
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

int icm__sql_store_open_sqlite_readonly(icm__sql_store **out, const char *path)
{
    /* A read-only connection to a WAL database still creates its -wal and -shm when they are
     * missing. Without a -wal, every committed row is in the database file itself, so it is
     * read as immutable (no lock, no side files); with one, the files are there to share. */
    char *wal = icm__sprintf("%s-wal", path);
    if (wal == NULL)
        return ICM_ENOMEM;
    struct stat st;
    bool has_wal = stat(wal, &st) == 0;
    icm__free(wal);
    if (has_wal)
        return open_sqlite(out, path, path, SQLITE_OPEN_READONLY);
    char *uri = immutable_uri(path);
    if (uri == NULL)
        return ICM_ENOMEM;
    int rc = open_sqlite(out, path, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
    icm__free(uri);
    return rc;
}

char *icm__sql_store_sqlite_file(const icm__sql_store *base)
{
    if (base == NULL || base->methods != &sqlite_methods)
        return NULL;
    const sqlite_store *s = (const sqlite_store *)base;
    const char *file = sqlite3_db_filename(s->db, "main"); /* absolute; "" in memory */
    if (file == NULL || file[0] == '\0')
        return NULL;
    char *canon = NULL;
    return icm_location_canonical(&canon, file) == 0 ? canon : NULL;
}
