/*
 * catalog/storage_refresh.c: the refresher a table's FileIO renews vended credentials with
 * (storage_refresh.h): a closure over the catalog, a copy of the table's identifier and its
 * location, calling icm__rest_load_storage_config, which is thread-safe; the closure is
 * read-only after it is built, so the FileIO may call it from any thread.
 */
#include <string.h>

#include "catalog/catalog_internal.h"
#include "catalog/rest/rest_internal.h"
#include "catalog/storage_refresh.h"
#include "util/util.h"

typedef struct refresh_closure {
    icm_catalog *cat;
    icm__ident ident;
    char *location;
    char *what; /* "table ns.t of catalog 'name'" */
} refresh_closure;

static void closure_free(void *payload)
{
    refresh_closure *c = payload;
    if (c == NULL)
        return;
    icm__ident_dispose(&c->ident);
    icm__free(c->location);
    icm__free(c->what);
    icm__free(c);
}

static int closure_refresh(void *payload, icm_property **out, size_t *n_out)
{
    refresh_closure *c = payload;
    *out = NULL;
    *n_out = 0;
    return icm__rest_load_storage_config(c->cat, &c->ident.id, c->location, out, n_out);
}

int icm__catalog_storage_refresher(icm_catalog *cat, const icm_table_ident *id,
                                   const char *location, icm__fileio_refresher *out)
{
    memset(out, 0, sizeof *out);
    if (cat == NULL || location == NULL || !icm__catalog_is_rest(cat))
        return 0;
    refresh_closure *c = icm__calloc(1, sizeof *c);
    if (c == NULL)
        return icm__error_oom();
    c->cat = cat;
    int rc = icm__ident_make_levels(&c->ident, id->levels, id->n_levels, id->name);
    if (rc == 0) {
        c->location = icm__strdup(location);
        c->what = icm__sprintf("table %s.%s of catalog '%s'", c->ident.ns, c->ident.name,
                               cat->name != NULL ? cat->name : "");
        if (c->location == NULL || c->what == NULL)
            rc = icm__error_oom();
    }
    if (rc != 0) {
        closure_free(c);
        return rc;
    }
    *out = (icm__fileio_refresher){closure_refresh, closure_free, c, c->what};
    return 0;
}
