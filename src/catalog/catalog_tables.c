/*
 * catalog/catalog_tables.c: every table of a catalog with where it lives, for the checks that
 * keep two tables from sharing files (issue #16): the orphan sweep refuses a location that
 * holds another catalog table (maint/orphans_catalog.c), and register-table refuses a metadata
 * file or table location another table of the catalog already uses (two tables sharing files
 * lose data at the first expiry of either).
 *
 * The walk collects every (namespace, table) pair first and only then asks for each pointer,
 * so no back-end query is open while another runs. Each table costs one pointer look-up, and
 * one metadata read when its location is wanted.
 */
#include <stdio.h>
#include <string.h>

#include "catalog/catalog_internal.h"
#include "catalog/sql/store.h"
#include "util/location.h"
#include "util/util.h"

typedef struct pair_list {
    icm__ptrvec ns;
    icm__ptrvec names;
    const char *current_ns; /* while listing one namespace's tables */
    icm_catalog *cat;
} pair_list;

static int push_pair(pair_list *l, const char *ns, const char *name)
{
    char *a = icm__strdup(ns), *b = icm__strdup(name);
    if (a == NULL || b == NULL || icm__ptrvec_push(&l->ns, a) != 0) {
        icm__free(a);
        icm__free(b);
        return ICM_ENOMEM;
    }
    if (icm__ptrvec_push(&l->names, b) != 0) {
        l->ns.len--;
        icm__free(a);
        icm__free(b);
        return ICM_ENOMEM;
    }
    return 0;
}

static int collect_table(const char *name, void *payload)
{
    pair_list *l = payload;
    return push_pair(l, l->current_ns, name);
}

static int collect_ns(const char *ns, void *payload)
{
    icm__ptrvec *v = payload;
    for (size_t i = 0; i < v->len; i++)
        if (strcmp(v->items[i], ns) == 0)
            return 0; /* back ends may repeat a namespace */
    char *copy = icm__strdup(ns);
    if (copy == NULL || icm__ptrvec_push(v, copy) != 0) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    return 0;
}

int icm__catalog_each_table(icm_catalog *cat, icm__catalog_table_cb cb, void *payload)
{
    if (cat->methods->list_all_namespaces == NULL || cat->methods->list_tables == NULL)
        return 0; /* a back end that cannot list has no other tables to tell of */
    icm__ptrvec all_ns = ICM__PTRVEC_INIT;
    pair_list l = {ICM__PTRVEC_INIT, ICM__PTRVEC_INIT, NULL, cat};
    int rc = cat->methods->list_all_namespaces(cat, collect_ns, &all_ns);
    for (size_t i = 0; rc == 0 && i < all_ns.len; i++) {
        l.current_ns = all_ns.items[i];
        rc = cat->methods->list_tables(cat, l.current_ns, collect_table, &l);
    }
    for (size_t i = 0; rc == 0 && i < l.ns.len; i++) {
        icm_table_ident id = {l.ns.items[i], l.names.items[i]};
        char *pointer = NULL;
        int lrc = cat->methods->load_table(cat, &id, &pointer);
        if (lrc == ICM_ENOMEM) {
            rc = lrc;
            break;
        }
        if (lrc != 0)
            icm_error_clear(); /* dropped meanwhile, or no metadata: the callback is told */
        rc = cb(id.ns, id.name, pointer, payload);
        icm__free(pointer);
    }
    icm__ptrvec_dispose(&all_ns, icm__free);
    icm__ptrvec_dispose(&l.ns, icm__free);
    icm__ptrvec_dispose(&l.names, icm__free);
    return rc;
}

/* ---- every other table a catalog's store knows of ---- */

typedef struct other_walk {
    icm_fileio *io;
    const char *catalog_name; /* of `self`; NULL = no table is skipped */
    const char *self;         /* "ns.name", skipped in catalog_name */
    icm__other_table_cb cb;
    void *payload;
} other_walk;

static bool is_self(const other_walk *w, const char *catalog_name, const char *ns,
                    const char *name)
{
    size_t nlen = strlen(ns);
    return w->self != NULL && w->catalog_name != NULL &&
           strcmp(catalog_name, w->catalog_name) == 0 && strncmp(w->self, ns, nlen) == 0 &&
           w->self[nlen] == '.' && strcmp(w->self + nlen + 1, name) == 0;
}

static int visit_other(const char *catalog_name, const char *ns, const char *name,
                       const char *pointer, void *payload)
{
    other_walk *w = payload;
    if (pointer == NULL || is_self(w, catalog_name, ns, name))
        return 0; /* no metadata: no files; or the table itself */
    icm__other_table o = {catalog_name, ns, name, pointer, {NULL}, NULL, 0};
    icm_table_metadata *md = NULL;
    int rc = icm_table_metadata_read(&md, w->io, pointer);
    if (rc == ICM_ENOMEM)
        return rc;
    o.md = md;
    o.md_rc = rc;
    if (rc != 0) {
        icm_error_clear(); /* unreadable: judged by its pointer alone */
    } else {
        static const char *const names[] = ICM__OTHER_TABLE_ROOT_NAMES;
        o.roots[0] = icm_table_metadata_location(md);
        for (size_t i = 1; i < ICM__OTHER_TABLE_N_ROOTS; i++)
            o.roots[i] = icm_table_metadata_property(md, names[i]);
    }
    rc = w->cb(&o, w->payload);
    icm_table_metadata_free(md);
    return rc;
}

static int visit_own_name(const char *ns, const char *name, const char *pointer, void *payload)
{
    other_walk *w = payload;
    return visit_other(w->catalog_name, ns, name, pointer, payload);
}

int icm__catalog_each_other_table(icm_catalog *cat, const char *self, icm__other_table_cb cb,
                                  void *payload)
{
    other_walk w = {cat->io, icm_catalog_name(cat), self, cb, payload};
    if (strcmp(cat->methods->kind, "sql") == 0)
        return icm__sql_catalog_each_pointer(cat, visit_other, &w);
    return icm__catalog_each_table(cat, visit_own_name, &w);
}

/* Whether `path` is a local file that starts with SQLite's header (not a journal, a WAL, a
 * YAML file, or missing: opening those as a database would create or misread them). */
static bool is_sqlite_database(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    bool ok = fread(head, 1, sizeof head, f) == sizeof head &&
              memcmp(head, magic, sizeof magic) == 0;
    fclose(f);
    return ok;
}

int icm__database_each_table(icm_fileio *io, const char *db, icm__other_table_cb cb,
                             void *payload)
{
    if (!is_sqlite_database(db))
        return 0;
    icm__sql_store *store = NULL;
    int rc = icm__sql_store_open_sqlite_readonly(&store, db);
    bool tables = false, unused = false;
    if (rc == 0)
        rc = store->methods->probe_column(store, "iceberg_tables", "metadata_location", &tables,
                                          &unused);
    other_walk w = {io, NULL, NULL, cb, payload};
    if (rc == 0 && tables)
        rc = icm__sql_store_each_pointer(store, visit_other, &w);
    if (store != NULL)
        store->methods->free(store);
    return rc;
}

/* ---- register-table: one table per metadata file and location ---- */

typedef struct share_check {
    icm_fileio *io;
    const char *metadata_location;
    const char *location; /* of the metadata being registered */
} share_check;

static int refuse_shared(const char *ns, const char *name, const char *what, const char *loc)
{
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EREFUSED, loc,
                          "table %s.%s of this catalog already uses this %s: two tables sharing "
                          "files lose data at the first snapshot expiry or orphan sweep of "
                          "either (use --force to register it anyway)",
                          ns, name, what);
}

static int check_one(const char *ns, const char *name, const char *pointer, void *payload)
{
    share_check *c = payload;
    if (pointer == NULL)
        return 0; /* a table without metadata uses no files */
    if (icm__location_equal(pointer, c->metadata_location))
        return refuse_shared(ns, name, "metadata file", c->metadata_location);
    icm_table_metadata *md = NULL;
    int rc = icm_table_metadata_read(&md, c->io, pointer);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        icm_error_clear(); /* unreadable: its location cannot be told; its pointer differs */
        return 0;
    }
    const char *loc = icm_table_metadata_location(md);
    rc = loc != NULL && c->location != NULL && icm__location_equal(loc, c->location)
             ? refuse_shared(ns, name, "table location", c->location)
             : 0;
    icm_table_metadata_free(md);
    return rc;
}

int icm__catalog_check_unshared(icm_catalog *cat, const char *metadata_location,
                                const icm_table_metadata *md)
{
    share_check c = {cat->io, metadata_location, icm_table_metadata_location(md)};
    return icm__catalog_each_table(cat, check_one, &c);
}
