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
#include "spec/metadata_places.h"
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
        icm__ident ident;
        char *pointer = NULL;
        int lrc = icm__ident_make(&ident, l.ns.items[i], l.names.items[i]);
        if (lrc == 0) {
            lrc = icm__catalog_load_location(cat, &ident.id, &pointer);
            icm__ident_dispose(&ident);
        }
        if (lrc == ICM_ENOMEM) {
            rc = lrc;
            break;
        }
        if (lrc != 0)
            icm_error_clear(); /* dropped meanwhile, or no metadata: the callback is told */
        rc = cb(l.ns.items[i], l.names.items[i], pointer, payload);
        icm__free(pointer);
    }
    icm__ptrvec_dispose(&all_ns, icm__free);
    icm__ptrvec_dispose(&l.ns, icm__free);
    icm__ptrvec_dispose(&l.names, icm__free);
    return rc;
}

/* ---- every other table a catalog's store knows of ---- */

typedef struct other_walk {
    icm_catalog *cat; /* asked for a table's metadata when it hands metadata out (REST) */
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

/* The folder above the `metadata/` folder `pointer` lies in (new string in *out): the table's
 * location in the default layout; NULL when the pointer lies in no folder named `metadata`. */
static int default_location(const char *pointer, char **out)
{
    *out = NULL;
    const char *slash = strrchr(pointer, '/');
    if (slash == NULL)
        return 0;
    const char *seg = slash;
    while (seg > pointer && seg[-1] != '/')
        seg--;
    if ((size_t)(slash - seg) != strlen("metadata") || memcmp(seg, "metadata", 8) != 0)
        return 0;
    const char *end = seg;
    while (end > pointer && end[-1] == '/')
        end--;
    if (end == pointer || end[-1] == ':')
        return 0; /* `metadata/` at a root or bucket: no folder above it */
    return (*out = icm__strndup(pointer, (size_t)(end - pointer))) != NULL ? 0 : ICM_ENOMEM;
}

/* Another table's metadata, read for its places (icm__other_table): strictly, else leniently,
 * else "unreadable" with a default location. Fills o (pointing into r); dispose r after. */
typedef struct other_read {
    icm_table_metadata *md;
    icm__md_places lenient;
    char *location; /* the default location of an unreadable table */
    char *why;      /* o->unreadable */
} other_read;

static void other_read_dispose(other_read *r)
{
    icm_table_metadata_free(r->md);
    icm__md_places_dispose(&r->lenient);
    icm__free(r->location);
    icm__free(r->why);
}

/*
 * The metadata a catalog hands out with a table's pointer (version 2 load_table_info: a REST
 * catalog's LoadTableResult), when it is of exactly that pointer: its files may be readable
 * only with the credentials the catalog vends per table, so reading the file through the
 * catalog's own FileIO could fail where the catalog's answer is at hand. *out NULL when the
 * catalog has no such method, hands out no metadata, or now names another pointer (then the
 * file is read as for any catalog).
 */
static int catalog_metadata(icm_catalog *cat, const icm__other_table *o,
                            icm_table_metadata **out)
{
    *out = NULL;
    if (cat == NULL || ICM__CATALOG_V2(cat, load_table_info) == NULL || o->ns == NULL)
        return 0;
    icm__ident ident;
    int rc = icm__ident_make(&ident, o->ns, o->name);
    if (rc != 0)
        return rc;
    icm_catalog_table_info info;
    rc = icm__catalog_load_info(cat, &ident.id, &info);
    icm__ident_dispose(&ident);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        icm_error_clear(); /* the file is read instead, and its failure told */
        return 0;
    }
    if (info.metadata != NULL && strcmp(info.metadata_location, o->pointer) == 0) {
        *out = info.metadata;
        info.metadata = NULL;
    }
    icm_catalog_table_info_dispose(&info);
    return 0;
}

static int read_other(icm_catalog *cat, icm_fileio *io, icm__other_table *o, other_read *r)
{
    static const char *const names[] = ICM__OTHER_TABLE_ROOT_NAMES;
    _Static_assert(ICM__MD_PLACES_N_ROOTS == ICM__OTHER_TABLE_N_ROOTS,
                   "icm__md_places.roots are icm__other_table.roots");
    memset(r, 0, sizeof *r);
    char *data = NULL;
    size_t len = 0;
    int rc = catalog_metadata(cat, o, &r->md);
    if (rc != 0)
        return rc;
    bool read = r->md != NULL;
    if (!read) {
        rc = icm_fileio_read(io, o->pointer, &data, &len);
        read = rc == 0;
        if (read)
            rc = icm_table_metadata_parse(&r->md, data, len, o->pointer);
    }
    o->md = r->md;
    o->md_rc = rc;
    if (rc == 0) {
        o->roots[0] = icm_table_metadata_location(r->md);
        for (size_t i = 1; i < ICM__OTHER_TABLE_N_ROOTS; i++)
            o->roots[i] = icm_table_metadata_property(r->md, names[i]);
        icm_free(data);
        return 0;
    }
    if (rc == ICM_ENOMEM) {
        icm_free(data);
        return rc;
    }
    const char *fault = "could not be read";
    char strict[512];
    snprintf(strict, sizeof strict, "%s", icm_error_last()->message);
    icm_error_clear();
    int lrc = rc;
    if (read) {
        /* Read, but not as table metadata: what its JSON says of its places. */
        lrc = icm__metadata_places_lenient(data, len, o->pointer, &r->lenient);
        if (lrc == 0 && r->lenient.roots[0] == NULL) {
            lrc = ICM_EINVALID;
            fault = "names no table location";
        } else if (lrc != 0 && lrc != ICM_ENOMEM) {
            fault = "is not table metadata even read leniently";
            snprintf(strict, sizeof strict, "%s", icm_error_last()->message);
            icm_error_clear();
        }
    }
    icm_free(data);
    if (lrc == ICM_ENOMEM)
        return lrc;
    if (lrc == 0) {
        o->lenient = true;
        for (size_t i = 0; i < ICM__OTHER_TABLE_N_ROOTS; i++)
            o->roots[i] = r->lenient.roots[i];
        o->log = (const char *const *)r->lenient.log.items;
        o->n_log = r->lenient.log.len;
        return 0;
    }
    if ((rc = default_location(o->pointer, &r->location)) != 0)
        return rc;
    o->roots[0] = r->location;
    const char *local = icm__location_local_part(o->pointer);
    bool relative = local != NULL && local[0] != '/';
    if (!read && relative) {
        /* A row written as typed names its file from some writer's working directory: that
         * table may well exist elsewhere, so where its files lie cannot be told. */
        fault = "is named relative to a working directory, and there is no such file here";
    } else if (!read && (o->md_rc == ICM_ENOTFOUND || o->md_rc == ICM_EUNSUPPORTED)) {
        return 0; /* no such file (no reader can read that table), or on a back end this
                     FileIO does not serve (nor delete from): judged by its pointer */
    }
    r->why = icm__sprintf("its metadata file %s %s: %s", o->pointer, fault, strict);
    o->unreadable = r->why;
    return r->why != NULL ? 0 : ICM_ENOMEM;
}

static int visit_other(const char *catalog_name, const char *ns, const char *name,
                       const char *pointer, void *payload)
{
    other_walk *w = payload;
    if (pointer == NULL || is_self(w, catalog_name, ns, name))
        return 0; /* no metadata: no files; or the table itself */
    icm__other_table o = {catalog_name, ns, name, pointer, {NULL}, NULL, 0, false, NULL, 0, NULL};
    other_read r;
    /* (the catalog is asked only of its own tables, not another catalog_name's rows) */
    bool own = w->catalog_name != NULL && strcmp(catalog_name, w->catalog_name) == 0;
    int rc = read_other(own ? w->cat : NULL, w->io, &o, &r);
    if (rc == 0)
        rc = w->cb(&o, w->payload);
    other_read_dispose(&r);
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
    other_walk w = {cat, cat->io, icm_catalog_name(cat), self, cb, payload};
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
    other_walk w = {NULL, io, NULL, NULL, cb, payload};
    if (rc == 0 && tables)
        rc = icm__sql_store_each_pointer(store, visit_other, &w);
    if (store != NULL)
        store->methods->free(store);
    return rc;
}

/* ---- register-table: one table per metadata file and location ---- */

typedef struct share_check {
    icm_catalog *cat;
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
    icm__other_table o = {NULL, ns, name, pointer, {NULL}, NULL, 0, false, NULL, 0, NULL};
    other_read r;
    int rc = read_other(c->cat, c->io, &o, &r);
    /* Its location as its metadata names it (leniently read when the strict reader rejects
     * it); unreadable: its location cannot be told, and its pointer differs. */
    const char *loc = rc == 0 && (o.md != NULL || o.lenient) ? o.roots[0] : NULL;
    if (rc == 0 && loc != NULL && c->location != NULL && icm__location_equal(loc, c->location))
        rc = refuse_shared(ns, name, "table location", c->location);
    other_read_dispose(&r);
    return rc;
}

int icm__catalog_check_unshared(icm_catalog *cat, const char *metadata_location,
                                const icm_table_metadata *md)
{
    share_check c = {cat, cat->io, metadata_location, icm_table_metadata_location(md)};
    return icm__catalog_each_table(cat, check_one, &c);
}
