/*
 * catalog/sql/store_fault.c: a store wrapper for tests that loses the connection at a chosen
 * statement: before sending it, after it was applied, or in flight without applying it. This
 * is how the tests prove that a commit tells "failed" from "unknown" and reconciles correctly.
 */
#include <stdio.h>
#include <string.h>

#include "catalog/sql/store.h"
#include "util/util.h"

typedef struct fault_store {
    icm__sql_store base;
    icm__sql_store *inner;
    icm__sql_fault armed;
    char prefix[32];
    void (*hook)(void *payload);
    void *payload;
    uint64_t statements;
} fault_store;

static bool hits(fault_store *s, const char *sql)
{
    return s->armed != ICM__SQL_FAULT_NONE && strncmp(sql, s->prefix, strlen(s->prefix)) == 0;
}

static void run_hook(fault_store *s)
{
    if (s->hook != NULL)
        s->hook(s->payload);
}

static int lost(bool maybe_applied, bool *out_maybe_applied)
{
    *out_maybe_applied = maybe_applied;
    return icm__error_set(ICM_ERRCLASS_SQL, ICM_ENET, "fault-store",
                          maybe_applied ? "connection lost after the statement was sent (injected)"
                                        : "connection lost before the statement was sent "
                                          "(injected)");
}

static int fault_exec(icm__sql_store *base, const char *sql, const char *const *params,
                      size_t n, int64_t *out_changes, bool *out_maybe_applied)
{
    fault_store *s = (fault_store *)base;
    s->statements++;
    *out_changes = 0;
    *out_maybe_applied = false;
    if (!hits(s, sql))
        return s->inner->methods->exec(s->inner, sql, params, n, out_changes, out_maybe_applied);
    icm__sql_fault kind = s->armed;
    s->armed = ICM__SQL_FAULT_NONE; /* one shot */
    if (kind == ICM__SQL_FAULT_LOST_AFTER_APPLY) {
        int64_t changes = 0;
        bool maybe = false;
        int rc = s->inner->methods->exec(s->inner, sql, params, n, &changes, &maybe);
        if (rc != 0) {
            *out_maybe_applied = maybe;
            return rc;
        }
        run_hook(s);
        return lost(true, out_maybe_applied);
    }
    run_hook(s);
    return lost(kind == ICM__SQL_FAULT_LOST_UNAPPLIED, out_maybe_applied);
}

static int fault_query(icm__sql_store *base, const char *sql, const char *const *params,
                       size_t n, icm__sql_row_cb cb, void *payload)
{
    fault_store *s = (fault_store *)base;
    s->statements++;
    return s->inner->methods->query(s->inner, sql, params, n, cb, payload);
}

static int fault_probe(icm__sql_store *base, const char *table, const char *column,
                       bool *out_table_exists, bool *out_column_exists)
{
    fault_store *s = (fault_store *)base;
    return s->inner->methods->probe_column(s->inner, table, column, out_table_exists,
                                           out_column_exists);
}

static void fault_free(icm__sql_store *base)
{
    fault_store *s = (fault_store *)base;
    s->inner->methods->free(s->inner);
    icm__free(s);
}

static const icm__sql_store_methods fault_methods = {
    "fault", fault_exec, fault_query, fault_probe, fault_free,
};

int icm__sql_store_fault_new(icm__sql_store **out, icm__sql_store *inner_take)
{
    *out = NULL;
    fault_store *s = icm__calloc(1, sizeof *s);
    if (s == NULL) {
        inner_take->methods->free(inner_take);
        return ICM_ENOMEM;
    }
    s->base.methods = &fault_methods;
    s->inner = inner_take;
    *out = &s->base;
    return 0;
}

void icm__sql_store_fault_arm(icm__sql_store *fault, icm__sql_fault kind, const char *prefix,
                              void (*hook)(void *payload), void *payload)
{
    fault_store *s = (fault_store *)fault;
    s->armed = kind;
    snprintf(s->prefix, sizeof s->prefix, "%s", prefix != NULL ? prefix : "");
    s->hook = hook;
    s->payload = payload;
}

uint64_t icm__sql_store_fault_statements(const icm__sql_store *fault)
{
    return ((const fault_store *)fault)->statements;
}
