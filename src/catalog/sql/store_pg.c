/*
 * catalog/sql/store_pg.c: the SQL catalog store on PostgreSQL through libpq. Statements run in
 * autocommit; '?' placeholders become $1..$n. The part that matters: after a failed statement,
 * say honestly whether it can have been applied (see classify_failure).
 */
#include "catalog/sql/store.h"
#include "util/util.h"

#ifndef ICM_WITH_POSTGRES
/* Built with ICM_WITH_POSTGRES=OFF: a postgresql:// catalog is refused. The conninfo may hold
 * a password, so it is not named. */
int icm__sql_store_open_pg(icm__sql_store **out, const char *conninfo)
{
    (void)conninfo;
    *out = NULL;
    return icm__error_set(ICM_ERRCLASS_SQL, ICM_EUNSUPPORTED, NULL,
                          "PostgreSQL catalogs are not available: icemaint was built without "
                          "PostgreSQL (ICM_WITH_POSTGRES=OFF)");
}
#else
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

typedef struct pg_store {
    icm__sql_store base;
    PGconn *conn;
    char *where; /* host:port/db for messages (never the password) */
} pg_store;

/* '?' → '$n'. Our statements contain no string literal with '?'. */
static char *convert_placeholders(const char *sql)
{
    icm__buf b = ICM__BUF_INIT;
    int n = 0;
    for (const char *p = sql; *p; p++) {
        if (*p == '?')
            icm__buf_printf(&b, "$%d", ++n);
        else
            icm__buf_putc(&b, *p);
    }
    if (b.oom || b.data == NULL) {
        icm__buf_dispose(&b);
        icm__error_oom();
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

/* SQLSTATE classes after which the statement is known to have been rolled back as a whole. */
static bool sqlstate_not_applied(const char *state)
{
    static const char *const classes[] = {"22", "23", "25", "28", "40", "42", "0A", "P0"};
    if (state == NULL || strlen(state) != 5)
        return false;
    if (strcmp(state, "57014") == 0) /* query_canceled: rolled back */
        return true;
    for (size_t i = 0; i < ICM__ARRAY_LEN(classes); i++)
        if (strncmp(state, classes[i], 2) == 0)
            return true;
    return false;
}

static int classify_failure(pg_store *s, PGresult *res, bool *out_maybe_applied)
{
    const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    bool conn_bad = PQstatus(s->conn) != CONNECTION_OK;
    /* A lost connection (or a server error class like 57P/58/XX) after sending leaves the
     * outcome open; a statement the server rejected is rolled back as a whole. */
    *out_maybe_applied = conn_bad || !sqlstate_not_applied(state);
    int code = ICM_ERROR;
    if (conn_bad || state == NULL || strncmp(state, "08", 2) == 0)
        code = ICM_ENET;
    else if (strcmp(state, "23505") == 0)
        code = ICM_EEXISTS;
    else if (strncmp(state, "28", 2) == 0)
        code = ICM_EAUTH;
    else if (strcmp(state, "42P01") == 0 || strcmp(state, "42703") == 0)
        code = ICM_EINVALID;
    const char *msg = res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(s->conn);
    icm__error_set(ICM_ERRCLASS_SQL, code, s->where, "postgresql: %s",
                   msg != NULL && msg[0] ? msg : "statement failed");
    if (state != NULL)
        icm__error_set_remote_code(state);
    return code;
}

static int run(pg_store *s, const char *sql, const char *const *params, size_t n,
               PGresult **out_res, bool *out_maybe_applied)
{
    *out_res = NULL;
    *out_maybe_applied = false;
    if (PQstatus(s->conn) != CONNECTION_OK) {
        PQreset(s->conn);
        if (PQstatus(s->conn) != CONNECTION_OK)
            return icm__error_set(ICM_ERRCLASS_SQL, ICM_ENET, s->where,
                                  "postgresql connection lost (statement not sent): %s",
                                  PQerrorMessage(s->conn));
    }
    char *pgsql = convert_placeholders(sql);
    if (pgsql == NULL)
        return ICM_ENOMEM;
    PGresult *res = PQexecParams(s->conn, pgsql, (int)n, NULL, params, NULL, NULL, 0);
    icm__free(pgsql);
    ExecStatusType st = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        int rc = classify_failure(s, res, out_maybe_applied);
        PQclear(res);
        return rc;
    }
    *out_res = res;
    return 0;
}

static int pg_exec(icm__sql_store *base, const char *sql, const char *const *params, size_t n,
                   int64_t *out_changes, bool *out_maybe_applied)
{
    pg_store *s = (pg_store *)base;
    PGresult *res = NULL;
    *out_changes = 0;
    int rc = run(s, sql, params, n, &res, out_maybe_applied);
    if (rc != 0)
        return rc;
    const char *tuples = PQcmdTuples(res);
    *out_changes = tuples != NULL && tuples[0] ? strtoll(tuples, NULL, 10) : 0;
    PQclear(res);
    return 0;
}

static int pg_query(icm__sql_store *base, const char *sql, const char *const *params, size_t n,
                    icm__sql_row_cb cb, void *payload)
{
    pg_store *s = (pg_store *)base;
    PGresult *res = NULL;
    bool maybe = false;
    int rc = run(s, sql, params, n, &res, &maybe);
    if (rc != 0)
        return rc;
    const char *vals[8];
    int ncols = PQnfields(res);
    if (ncols > (int)ICM__ARRAY_LEN(vals))
        ncols = (int)ICM__ARRAY_LEN(vals);
    for (int r = 0; r < PQntuples(res) && rc == 0; r++) {
        for (int c = 0; c < ncols; c++)
            vals[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
        rc = cb((size_t)ncols, vals, payload);
    }
    PQclear(res);
    return rc;
}

static int count_row(size_t ncols, const char *const *values, void *payload)
{
    (void)ncols;
    (void)values;
    (*(int *)payload)++;
    return 0;
}

static int pg_probe_column(icm__sql_store *base, const char *table, const char *column,
                           bool *out_table_exists, bool *out_column_exists)
{
    int tables = 0, columns = 0;
    const char *tp[] = {table};
    const char *cp[] = {table, column};
    int rc = pg_query(base,
                      "SELECT 1 FROM information_schema.tables WHERE table_schema = "
                      "current_schema() AND table_name = ?",
                      tp, 1, count_row, &tables);
    if (rc == 0)
        rc = pg_query(base,
                      "SELECT 1 FROM information_schema.columns WHERE table_schema = "
                      "current_schema() AND table_name = ? AND column_name = ?",
                      cp, 2, count_row, &columns);
    *out_table_exists = tables > 0;
    *out_column_exists = columns > 0;
    return rc;
}

static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static void pg_free(icm__sql_store *base)
{
    pg_store *s = (pg_store *)base;
    PQfinish(s->conn);
    icm__free(s->where);
    icm__free(s);
}

static const icm__sql_store_methods pg_methods = {
    "postgresql", pg_exec, pg_query, pg_probe_column, pg_free,
};

int icm__sql_store_open_pg(icm__sql_store **out, const char *conninfo)
{
    *out = NULL;
    pg_store *s = icm__calloc(1, sizeof *s);
    if (s == NULL)
        return ICM_ENOMEM;
    s->base.methods = &pg_methods;
    /* Bounded waits: a server that vanished silently must surface as a connection error (an
     * unknown commit outcome) within about a minute, not hang forever. Values in the URI or
     * connection string win: libpq lets later entries override earlier ones. */
    const char *const keys[] = {"connect_timeout", "keepalives", "keepalives_idle",
                                "keepalives_interval", "keepalives_count", "dbname", NULL};
    const char *const values[] = {"10", "1", "30", "10", "3", conninfo, NULL};
    s->conn = PQconnectdbParams(keys, values, 1);
    if (s->conn == NULL) {
        icm__free(s);
        return icm__error_oom();
    }
    s->where = icm__sprintf("postgresql://%s:%s/%s", PQhost(s->conn) ? PQhost(s->conn) : "",
                            PQport(s->conn) ? PQport(s->conn) : "",
                            PQdb(s->conn) ? PQdb(s->conn) : "");
    if (s->where == NULL) {
        pg_free(&s->base);
        return ICM_ENOMEM;
    }
    if (PQstatus(s->conn) != CONNECTION_OK) {
        const char *msg = PQerrorMessage(s->conn);
        int code = strstr(msg, "authentication") != NULL || strstr(msg, "password") != NULL
                       ? ICM_EAUTH
                       : ICM_ENET;
        int e = icm__error_set(ICM_ERRCLASS_SQL, code, s->where, "cannot connect to PostgreSQL: %s",
                               msg);
        pg_free(&s->base);
        return e;
    }
    /* Our own notices (CREATE TABLE IF NOT EXISTS) must not reach the user's stderr. */
    PQsetNoticeProcessor(s->conn, quiet_notice, NULL);
    *out = &s->base;
    return 0;
}
#endif /* ICM_WITH_POSTGRES */
