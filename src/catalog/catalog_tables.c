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

/* The tables found, each as its identifier (icm__ident *), before any pointer is asked for. */
typedef struct table_list {
    icm__ptrvec idents;
    const char *const *levels; /* while listing one namespace's tables: its levels */
    size_t n_levels;
    icm_catalog *cat;
} table_list;

static void free_ident(void *p)
{
    icm__ident_dispose(p);
    icm__free(p);
}

static int push_ident(table_list *l, const char *const *levels, size_t n, const char *dotted,
                      const char *name)
{
    icm__ident *id = icm__calloc(1, sizeof *id);
    if (id == NULL)
        return ICM_ENOMEM;
    int rc = dotted != NULL ? icm__ident_make(id, dotted, name)
                            : icm__ident_make_levels(id, levels, n, name);
    if (rc == 0 && icm__ptrvec_push(&l->idents, id) != 0)
        rc = icm__error_oom();
    if (rc != 0) {
        icm__ident_dispose(id);
        icm__free(id);
    }
    return rc;
}

static int collect_table_of_levels(const char *name, void *payload)
{
    table_list *l = payload;
    return push_ident(l, l->levels, l->n_levels, NULL, name);
}

/* The namespace (dotted) whose tables are being listed by a back end without levels. */
typedef struct dotted_list {
    table_list *l;
    const char *ns;
} dotted_list;

static int collect_table_of_dotted(const char *name, void *payload)
{
    dotted_list *d = payload;
    return push_ident(d->l, NULL, 0, d->ns, name);
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

/* Deeper than any catalog nests namespaces; a back end that never ends is refused. */
#define WALK_MAX_DEPTH 64

/* The tables of namespace `levels` (n of them; 0: the top level has none) and of every
 * namespace below it, by the version 2 paged listings. */
static int walk_levels(table_list *l, const char **levels, size_t n)
{
    icm_catalog *cat = l->cat;
    int rc = 0;
    if (n > 0) {
        l->levels = levels;
        l->n_levels = n;
        rc = icm__catalog_pages(cat, ICM__CATALOG_V2(cat, list_tables_page), levels, n,
                                collect_table_of_levels, l);
    }
    if (rc != 0)
        return rc;
    if (n >= WALK_MAX_DEPTH)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, cat->name,
                              "namespaces nested deeper than %d levels", WALK_MAX_DEPTH);
    icm__ptrvec children = ICM__PTRVEC_INIT;
    rc = icm__catalog_pages(cat, ICM__CATALOG_V2(cat, list_namespaces_page), levels, n,
                            collect_ns, &children);
    for (size_t i = 0; rc == 0 && i < children.len; i++) {
        levels[n] = children.items[i];
        rc = walk_levels(l, levels, n + 1);
    }
    icm__ptrvec_dispose(&children, icm__free);
    return rc;
}

int icm__catalog_each_table(icm_catalog *cat, icm__catalog_table_cb cb, void *payload)
{
    bool paged = ICM__CATALOG_V2(cat, list_namespaces_page) != NULL &&
                 ICM__CATALOG_V2(cat, list_tables_page) != NULL;
    if (!paged && (cat->methods->list_all_namespaces == NULL || cat->methods->list_tables == NULL))
        return 0; /* a back end that cannot list has no other tables to tell of */
    table_list l = {ICM__PTRVEC_INIT, NULL, 0, cat};
    int rc = 0;
    if (paged) {
        const char *levels[WALK_MAX_DEPTH] = {NULL};
        rc = walk_levels(&l, levels, 0);
    } else {
        icm__ptrvec all_ns = ICM__PTRVEC_INIT;
        rc = cat->methods->list_all_namespaces(cat, collect_ns, &all_ns);
        for (size_t i = 0; rc == 0 && i < all_ns.len; i++) {
            dotted_list d = {&l, all_ns.items[i]};
            rc = cat->methods->list_tables(cat, all_ns.items[i], collect_table_of_dotted, &d);
        }
        icm__ptrvec_dispose(&all_ns, icm__free);
    }
    for (size_t i = 0; rc == 0 && i < l.idents.len; i++) {
        const icm__ident *ident = l.idents.items[i];
        char *pointer = NULL;
        int lrc = icm__catalog_load_location(cat, &ident->id, &pointer);
        if (lrc == ICM_ENOMEM) {
            rc = lrc;
            break;
        }
        if (lrc != 0)
            icm_error_clear(); /* dropped meanwhile, or no metadata: the callback is told */
        rc = cb(&ident->id, pointer, payload);
        icm__free(pointer);
    }
    icm__ptrvec_dispose(&l.idents, free_ident);
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
    icm__ident ident = {0};
    int rc = o->id != NULL ? 0 : icm__ident_make(&ident, o->ns, o->name);
    if (rc != 0)
        return rc;
    icm_catalog_table_info info;
    rc = icm__catalog_load_info(cat, o->id != NULL ? o->id : &ident.id, &info);
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
        rc = icm_fileio_read(&data, &len, io, o->pointer);
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
    icm__other_table o = {catalog_name, ns, name, NULL, pointer, {NULL}, NULL, 0, false, NULL, 0,
                          NULL};
    other_read r;
    /* (the catalog is asked only of its own tables, not another catalog_name's rows) */
    bool own = w->catalog_name != NULL && strcmp(catalog_name, w->catalog_name) == 0;
    int rc = read_other(own ? w->cat : NULL, w->io, &o, &r);
    if (rc == 0)
        rc = w->cb(&o, w->payload);
    other_read_dispose(&r);
    return rc;
}

/* Whether `id` (as the catalog listed it) is the swept table `self`, whose identifier is
 * dotted: its levels are the dot-separated parts (a table whose levels hold a dot cannot be
 * named so, and is never taken for it). */
static bool is_self_levels(const other_walk *w, const icm_table_ident *id)
{
    if (w->self == NULL)
        return false;
    const char *p = w->self;
    for (size_t i = 0; i < id->n_levels; i++) {
        size_t n = strlen(id->levels[i]);
        if (strchr(id->levels[i], '.') != NULL || strncmp(p, id->levels[i], n) != 0 ||
            p[n] != '.')
            return false;
        p += n + 1;
    }
    return id->n_levels > 0 && strcmp(p, id->name) == 0;
}

static int visit_own_name(const icm_table_ident *id, const char *pointer, void *payload)
{
    other_walk *w = payload;
    if (pointer == NULL || is_self_levels(w, id))
        return 0; /* no metadata: no files; or the table itself */
    icm__other_table o = {w->catalog_name, id->ns, id->name, id, pointer, {NULL}, NULL, 0,
                          false, NULL, 0, NULL};
    other_read r;
    int rc = read_other(w->cat, w->io, &o, &r);
    if (rc == 0)
        rc = w->cb(&o, w->payload);
    other_read_dispose(&r);
    return rc;
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

static int check_one(const icm_table_ident *id, const char *pointer, void *payload)
{
    share_check *c = payload;
    const char *ns = id->ns, *name = id->name;
    if (pointer == NULL)
        return 0; /* a table without metadata uses no files */
    if (icm__location_equal(pointer, c->metadata_location))
        return refuse_shared(ns, name, "metadata file", c->metadata_location);
    icm__other_table o = {NULL, ns, name, id, pointer, {NULL}, NULL, 0, false, NULL, 0, NULL};
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
