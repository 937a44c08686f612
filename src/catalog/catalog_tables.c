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
 *
 * Adversary round 20: the table itself is passed over only when it has the swept table's
 * identifier in parts (never joined with '.': namespace `a` with table `b.t` is not `a.b.t`)
 * and, for the sweep and expiry, its table-uuid (H1); a listed table whose pointer cannot be
 * had is handed over as one whose places cannot be told, unless a fresh listing proves it
 * dropped (H4): 403, 5xx, timeouts and a bare 404 are not proof of absence.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

typedef struct name_search {
    const char *name;
    bool found;
} name_search;

static int find_name(const char *name, void *payload)
{
    name_search *f = payload;
    f->found = f->found || strcmp(name, f->name) == 0;
    return 0;
}

/* Whether a fresh listing of id's namespace still names it (*out). */
static int still_listed(icm_catalog *cat, bool paged, const icm_table_ident *id, bool *out)
{
    name_search f = {id->name, false};
    int rc = paged ? icm__catalog_pages(cat, ICM__CATALOG_V2(cat, list_tables_page), id->levels,
                                        id->n_levels, find_name, &f)
                   : cat->methods->list_tables(cat, id->ns, find_name, &f);
    *out = f.found;
    return rc;
}

/*
 * A listed table whose pointer could not be had (load's code `lrc`, its error still set):
 * *why (new string) says so in one line, or *gone is set when the table is proven dropped
 * since it was listed. A table the catalog lists is a table: a 403 (a principal that may list
 * it but not load it: per-table access control), a 5xx, a timeout, an unreadable folder all
 * leave where its files lie unknown. Only a "not found" that a fresh listing of its
 * namespace confirms is proof of absence: a 404 alone is also how a catalog hides a table
 * from a principal that may not read it. Returns 0 or ICM_ENOMEM.
 */
static int why_unloaded(icm_catalog *cat, bool paged, const icm_table_ident *id, int lrc,
                        char **why, bool *gone)
{
    *why = NULL;
    *gone = false;
    char load[512];
    snprintf(load, sizeof load, "%s", icm_error_last()->message);
    icm_error_clear();
    if (lrc != ICM_ENOTFOUND) {
        *why = icm__sprintf("the catalog lists it, but loading it failed: %s", load);
        return *why != NULL ? 0 : icm__error_oom();
    }
    bool listed = true;
    int rc = still_listed(cat, paged, id, &listed);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        *why = icm__sprintf("the catalog lists it, but loading it failed (%s), and listing its "
                            "namespace again failed too (%s)",
                            load, icm_error_last()->message);
        icm_error_clear();
    } else if (listed) {
        *why = icm__sprintf("the catalog lists it, but loading it failed (%s); it is still "
                            "listed, so it was not dropped (a catalog may answer \"not found\" "
                            "for a table the principal may not read)",
                            load);
    } else {
        *gone = true; /* dropped between the listing and the load */
        return 0;
    }
    return *why != NULL ? 0 : icm__error_oom();
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
        char *pointer = NULL, *why = NULL;
        bool gone = false;
        rc = icm__catalog_load_location(cat, &ident->id, &pointer);
        if (rc != 0 && rc != ICM_ENOMEM)
            rc = why_unloaded(cat, paged, &ident->id, rc, &why, &gone);
        else if (rc == 0 && pointer == NULL &&
                 (why = icm__strdup("the catalog gives no metadata file for it")) == NULL)
            rc = icm__error_oom();
        if (rc == 0 && !gone)
            rc = cb(&ident->id, pointer, why, payload);
        icm__free(pointer);
        icm__free(why);
    }
    icm__ptrvec_dispose(&l.idents, free_ident);
    return rc;
}

/* ---- every other table a catalog's store knows of ---- */

/*
 * The table a walk of the other tables passes over: the table itself. It is recognised by its
 * identifier in parts (namespace levels and name, never joined: namespace `a` with table `b.t`
 * and namespace `a.b` with table `t` are both "a.b.t" joined, and are two tables; adversary
 * round 20, H1) and, when the walk knows them (`known`), by being the same table: a candidate
 * named like it must have its table-uuid (its metadata file when either has none). The parts
 * are the table's own (those it was opened by: icm_table_load_levels keeps a level holding a
 * dot whole); only a walk given nothing but a dotted identifier splits it at every dot, as
 * icm_table_load names a table. A candidate whose parts differ but whose joined name is the
 * same is the table itself only when both its table-uuid and its metadata file are the
 * table's (a registered copy shares the table-uuid, never the current metadata file). Anything
 * not recognised is another table: its files are kept.
 */
typedef struct self_table {
    const icm_table_ident *id; /* its parts: &parsed.id, or the table's own */
    icm__ident parsed;         /* split from a dotted identifier (owned) */
    const char *uuid;    /* its table-uuid; NULL: it has none */
    const char *pointer; /* its current metadata file */
    bool known;          /* uuid and pointer given; else the name alone decides */
} self_table;

typedef struct other_walk {
    icm_catalog *cat; /* asked for a table's metadata when it hands metadata out (REST) */
    icm_fileio *io;
    const char *catalog_name; /* of `self`; NULL = no table is skipped */
    const self_table *self;   /* skipped in catalog_name; NULL = none */
    icm__other_table_cb cb;
    void *payload;
} other_walk;

/* How a candidate's name compares with the table itself's. */
typedef enum name_match {
    NAME_OTHER,  /* another name */
    NAME_JOINED, /* the same only joined with '.': other parts (or parts that cannot be told) */
    NAME_SAME    /* the same parts */
} name_match;

static char joined_at(const char *ns, size_t ns_len, const char *name, size_t i)
{
    return i < ns_len ? ns[i] : i == ns_len ? '.' : name[i - ns_len - 1];
}

/* Whether ns + "." + name is the same text for a and b (compared in place). */
static bool joined_equal(const char *ns_a, const char *name_a, const char *ns_b,
                         const char *name_b)
{
    size_t la = strlen(ns_a), lb = strlen(ns_b), n = la + 1 + strlen(name_a);
    if (n != lb + 1 + strlen(name_b))
        return false;
    for (size_t i = 0; i < n; i++)
        if (joined_at(ns_a, la, name_a, i) != joined_at(ns_b, lb, name_b, i))
            return false;
    return true;
}

/* A table a catalog listed by its levels (`id`, id->ns being them joined). */
static name_match match_levels(const self_table *self, const icm_table_ident *id)
{
    const icm_table_ident *me = self->id;
    bool same = id->n_levels == me->n_levels && strcmp(id->name, me->name) == 0;
    for (size_t i = 0; same && i < id->n_levels; i++)
        same = strcmp(id->levels[i], me->levels[i]) == 0;
    if (same)
        return NAME_SAME;
    return joined_equal(id->ns, id->name, me->ns, me->name) ? NAME_JOINED : NAME_OTHER;
}

/* A SQL catalog's row: its table_namespace is the levels joined with '.', and (catalog_name,
 * table_namespace, table_name) is the row's key, so the same namespace text and name are the
 * same table of that catalog; levels holding a dot cannot be told apart there. */
static name_match match_row(const self_table *self, const char *ns, const char *name)
{
    const icm_table_ident *me = self->id;
    if (strcmp(ns, me->ns) == 0 && strcmp(name, me->name) == 0)
        return NAME_SAME;
    return joined_equal(ns, name, me->ns, me->name) ? NAME_JOINED : NAME_OTHER;
}

/* Whether the candidate `o`, named like the table itself (`m`), is it: by name alone when the
 * walk knows nothing else; else by its table-uuid (its metadata file when either has none),
 * and by both when only the joined name is the same. */
static bool is_self(const self_table *self, name_match m, const icm__other_table *o)
{
    if (m == NAME_OTHER)
        return false;
    if (!self->known)
        return m == NAME_SAME;
    const char *uuid = o->md != NULL ? icm_table_metadata_uuid(o->md) : NULL;
    bool uuids = uuid != NULL && self->uuid != NULL;
    bool by_uuid = uuids && strcasecmp(uuid, self->uuid) == 0;
    bool by_pointer = o->pointer != NULL && self->pointer != NULL &&
                      icm__location_equal(o->pointer, self->pointer);
    if (m == NAME_JOINED)
        return by_uuid && by_pointer;
    return uuids ? by_uuid : by_pointer;
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

/* One part of a name for messages: between backquotes when it holds a dot. */
static void put_part(icm__buf *b, const char *part)
{
    (void)icm__buf_printf(b, strchr(part, '.') != NULL ? "`%s`" : "%s", part);
}

char *icm__other_table_name(const icm__other_table *t)
{
    icm__buf b = ICM__BUF_INIT;
    if (t->id != NULL) {
        for (size_t i = 0; i < t->id->n_levels; i++) {
            put_part(&b, t->id->levels[i]);
            (void)icm__buf_putc(&b, '.');
        }
    } else {
        /* a SQL row's namespace: the levels joined, which cannot be told apart */
        (void)icm__buf_printf(&b, "%s.", t->ns);
    }
    put_part(&b, t->name);
    (void)icm__buf_putc(&b, '\0');
    if (b.oom) {
        icm__buf_dispose(&b);
        icm__error_oom();
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

/* Read `o` and hand it to the walk's callback, unless it is the table itself (`m`). */
static int visit(other_walk *w, icm_catalog *cat, name_match m, icm__other_table *o)
{
    other_read r;
    int rc = read_other(cat, w->io, o, &r);
    if (rc == 0 && !(w->self != NULL && is_self(w->self, m, o)))
        rc = w->cb(o, w->payload);
    other_read_dispose(&r);
    return rc;
}

static int visit_other(const char *catalog_name, const char *ns, const char *name,
                       const char *pointer, void *payload)
{
    other_walk *w = payload;
    if (pointer == NULL)
        return 0; /* a row without a metadata file: no reader can load that table */
    /* (the catalog is asked only of its own tables, not another catalog_name's rows) */
    bool own = w->catalog_name != NULL && strcmp(catalog_name, w->catalog_name) == 0;
    name_match m = own && w->self != NULL ? match_row(w->self, ns, name) : NAME_OTHER;
    if (m == NAME_SAME && !w->self->known)
        return 0; /* the table itself, by name */
    icm__other_table o = {catalog_name, ns, name, NULL, pointer, {NULL}, NULL, 0, false, NULL, 0,
                          NULL};
    return visit(w, own ? w->cat : NULL, m, &o);
}

static int visit_own_name(const icm_table_ident *id, const char *pointer, const char *why,
                          void *payload)
{
    other_walk *w = payload;
    name_match m = w->self != NULL ? match_levels(w->self, id) : NAME_OTHER;
    if (m == NAME_SAME && !w->self->known)
        return 0; /* the table itself, by name */
    icm__other_table o = {w->catalog_name, id->ns, id->name, id, pointer, {NULL}, NULL, 0,
                          false, NULL, 0, NULL};
    if (pointer == NULL) {
        /* Listed, but not loaded: where its files lie cannot be told (nor whether it is the
         * table itself). */
        o.md_rc = ICM_ERROR;
        o.unreadable = why != NULL ? why : "the catalog could not load it";
        return w->cb(&o, w->payload);
    }
    return visit(w, w->cat, m, &o);
}

static int walk_others(icm_catalog *cat, const self_table *self, icm__other_table_cb cb,
                       void *payload)
{
    other_walk w = {cat, cat->io, icm_catalog_name(cat), self, cb, payload};
    if (strcmp(cat->methods->kind, "sql") == 0)
        return icm__sql_catalog_each_pointer(cat, visit_other, &w);
    return icm__catalog_each_table(cat, visit_own_name, &w);
}

/* The table itself named by `identifier` (split at its dots); *named false when it names no
 * table (then none is skipped). Returns 0 or ICM_ENOMEM. */
static int self_named(self_table *s, const char *identifier, bool *named)
{
    *named = false;
    if (identifier == NULL)
        return 0;
    int rc = icm__ident_parse_levels(identifier, &s->parsed);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0)
        icm_error_clear(); /* not NAMESPACE.TABLE: no catalog table is it */
    s->id = &s->parsed.id;
    *named = rc == 0;
    return 0;
}

int icm__catalog_each_other_table(icm_catalog *cat, const char *self, icm__other_table_cb cb,
                                  void *payload)
{
    self_table s = {NULL, {0}, NULL, NULL, false};
    bool named = false;
    int rc = self_named(&s, self, &named);
    if (rc == 0)
        rc = walk_others(cat, named ? &s : NULL, cb, payload);
    icm__ident_dispose(&s.parsed);
    return rc;
}

int icm__catalog_each_other_table_of(icm_table *t, icm__other_table_cb cb, void *payload)
{
    const icm_table_metadata *md = icm_table_get_metadata(t);
    self_table s = {icm__table_ident(t), {0}, md != NULL ? icm_table_metadata_uuid(md) : NULL,
                    icm_table_get_metadata_location(t), true};
    bool named = s.id != NULL;
    int rc = named ? 0 : self_named(&s, icm_table_get_identifier(t), &named);
    if (rc == 0)
        rc = walk_others(icm_table_get_catalog(t), named ? &s : NULL, cb, payload);
    icm__ident_dispose(&s.parsed);
    return rc;
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

static int check_one(const icm_table_ident *id, const char *pointer, const char *why,
                     void *payload)
{
    share_check *c = payload;
    const char *ns = id->ns, *name = id->name;
    (void)why;
    if (pointer == NULL)
        return 0; /* not loaded: its places cannot be told, as for unreadable metadata below */
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
