/*
 * maint/orphans_catalog.c: the orphan sweep's guard for what the catalog itself keeps under a
 * table location (issue #16, class 2: a table whose location was the warehouse root had the
 * SQLite catalog database, which holds every table's pointer, swept as an orphan).
 *
 * Before the listing, icm__catalog_guard_check:
 *  - refuses a table location (or listing location) that is a relative path no --path-map
 *    rule rewrites (it would be listed below whatever the working directory is);
 *  - collects the files a catalog lives in: the SQLite database of the table's own catalog
 *    and the caller's `catalog_files` (the CLI's resolved `.pyiceberg.yaml` and configured
 *    SQLite database), each with its `-journal`, `-wal` and `-shm` where it is a database;
 *    each is remembered under its own name and, when a symbolic link puts it below the
 *    listing location, under the name the listing gives it. Those that exist below the
 *    listing location and are not carved out with `exclude_locations` are refused, all named
 *    in one message;
 *  - walks every other table the catalog's store holds a pointer for
 *    (icm__catalog_each_other_table: for a SQL catalog every row of its database, whatever
 *    the catalog_name, since a database shared by several catalogs holds all their tables) and
 *    refuses when one's metadata file, `location`, `write.data.path`, `write.metadata.path`,
 *    or Java's legacy `write.object-storage.path` / `write.folder-storage.path` lies at or
 *    below the listing location (not carved out): that table's files would be unreferenced
 *    here; and (no override) when the listing location lies at or below a folder that table
 *    writes into: those write paths and its `<location>/data` and `<location>/metadata` (not
 *    merely its location: a table at the warehouse root holds every other table's folder).
 *    Places are compared by name, by where they really are (maint/places.h: links and
 *    `..` resolved, each other table's places once per run) and, on local disk, by the
 *    identity of their folders (a bind mount shows one folder at two paths); a place whose
 *    real whereabouts cannot be told (a permission or I/O error, a link loop) refuses. The other SQLite
 *    databases among `catalog_files` (every catalog the caller's configuration names) are
 *    walked the same way, each once. This sees
 *    tables the metadata-file check of the planner cannot (their metadata elsewhere, or
 *    hidden, or excluded). A table whose metadata the strict reader rejects is read
 *    leniently for its places (spec/metadata_places.h); one whose metadata cannot be read
 *    even so (not JSON, an I/O error) refuses the sweep, since where its files go is unknown;
 *    so does one the catalog lists but will not load (a 403 for a principal that may list
 *    but not load it, a 5xx, a 404 while a fresh listing still names it: adversary round 20,
 *    H4); one whose metadata file is gone is judged by its pointer and default location.
 *    The table itself is skipped only by its identifier's parts and its table-uuid (H1).
 * During the listing, icm__catalog_guard_protects keeps every remembered name out of the
 * plan, whatever the overrides: it runs for would-be orphans only (never for referenced
 * files), comparing with a handful of names.
 *
 * Read-only, like the rest of the planner: pointer look-ups, metadata reads, stat and
 * resolve. Cost: a few stats, plus one pointer look-up, one metadata read and a resolve of
 * each of its (at most 8) places per other table of the catalog.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_internal.h"
#include "catalog/sql/store.h"
#include "maint/orphans_internal.h"
#include "maint/places.h"
#include "util/location.h"

typedef struct guard_ctx {
    icm__catalog_guard *g;
    icm_fileio *io;
    const icm_orphan_options *o;
    const char *list_root;
    char *real_root;        /* where list_root really is; NULL when unknown */
    icm__buf offending;     /* " --exclude-location <file>" for each catalog file found below
                               list_root (refused together, so one retry can name them all) */
    size_t n_offending;
    const char *same_pointer; /* a found database's table with this pointer is the swept one */
    const char *found_db;     /* the database the listing found (NULL: a configured one) */
    const icm__mounts *mounts; /* the mount table, read once (NULL: not read, or unreadable:
                                  places are compared by identity whatever the mounts) */
} guard_ctx;

static int remember(icm__catalog_guard *g, const char *name)
{
    char *copy = icm__strdup(name);
    char **grown = copy != NULL ? icm__reallocarray(g->names, g->n + 1, sizeof *grown) : NULL;
    if (grown == NULL) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    g->names = grown;
    g->names[g->n++] = copy;
    return 0;
}

/* The name the listing of list_root gives `file` when a link puts it there (new string), or
 * NULL. The file itself need not exist (a `-wal` comes and goes): its folder is resolved. */
static int listing_name(guard_ctx *c, const char *file, char **out)
{
    *out = NULL;
    const char *slash = strrchr(file, '/');
    if (c->real_root == NULL || slash == NULL || slash == file)
        return 0;
    char *dir = icm__strndup(file, (size_t)(slash - file)), *real_dir = NULL;
    if (dir == NULL)
        return ICM_ENOMEM;
    int rc = icm_fileio_resolve(&real_dir, c->io, dir);
    icm__free(dir);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        icm_error_clear(); /* no such folder: nothing of it is listed */
        return 0;
    }
    char *real = icm__location_join(real_dir, slash + 1);
    const char *rest;
    if (real == NULL)
        rc = ICM_ENOMEM;
    else if (icm__location_strip_prefix(real, c->real_root, &rest) && rest[0] != '\0')
        rc = (*out = icm__location_join(c->list_root, rest)) != NULL ? 0 : ICM_ENOMEM;
    icm__free(real);
    icm_free(real_dir);
    return rc;
}

/* Remember one file of the catalog; note it when it exists below the listing location. */
static int guard_file(guard_ctx *c, const char *file)
{
    if (icm__catalog_guard_protects(c->g, file))
        return 0; /* named twice (the configuration's and the catalog's database) */
    char *alias = NULL;
    int rc = remember(c->g, file);
    if (rc == 0)
        rc = listing_name(c, file, &alias);
    if (rc == 0 && alias != NULL)
        rc = remember(c->g, alias);
    const char *below = icm__location_strip_prefix(file, c->list_root, NULL) ? file : alias;
    if (rc == 0 && below != NULL && !icm__orphan_excluded(c->o, file) && !icm__orphan_excluded(c->o, below)) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        int src = icm_fileio_stat(&info, c->io, file);
        if (src == 0) {
            icm__buf_printf(&c->offending, " --exclude-location %s", below);
            c->n_offending++;
            rc = c->offending.oom ? ICM_ENOMEM : 0;
        } else if (src == ICM_ENOMEM) {
            rc = src;
        } else {
            icm_error_clear(); /* not there: nothing to protect from the listing */
        }
    }
    icm__free(alias);
    return rc;
}

/* Every catalog file found below the listing location, in one refusal. */
static int refuse_own_files(const guard_ctx *c)
{
    if (c->n_offending == 0)
        return 0;
    return icm__orphan_refuse(c->list_root,
                  "%zu file%s of the catalog itself (its SQLite database and journals, or its "
                  ".pyiceberg.yaml, which hold or name every table's pointer) lie%s under the "
                  "listing location; refusing to sweep a folder the catalog lives in (name the "
                  "table's own folders with --location, or carve the file%s out with%s)",
                  c->n_offending, c->n_offending == 1 ? "" : "s",
                  c->n_offending == 1 ? "s" : "", c->n_offending == 1 ? "" : "s",
                  c->offending.data);
}

/* A SQLite database and the files SQLite keeps beside it. */
static int guard_database(guard_ctx *c, const char *db)
{
    static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ICM__ARRAY_LEN(suffixes); i++) {
        char *f = icm__sprintf("%s%s", db, suffixes[i]);
        rc = f != NULL ? guard_file(c, f) : ICM_ENOMEM;
        icm__free(f);
    }
    return rc;
}

static int guard_own_files(guard_ctx *c, icm_table *t)
{
    const icm_orphan_options *o = c->o;
    int rc = 0;
    if (o->version >= 2)
        for (size_t i = 0; rc == 0 && i < o->catalog_file_count; i++)
            rc = o->catalog_files[i] != NULL ? guard_file(c, o->catalog_files[i]) : 0;
    if (rc != 0)
        return rc;
    icm_error_clear(); /* so that a NULL below is told apart from an allocation failure */
    char *db = icm__sql_catalog_database_file(icm_table_get_catalog(t));
    if (db == NULL)
        return icm_error_last()->code == ICM_ENOMEM ? ICM_ENOMEM : 0;
    rc = guard_database(c, db);
    icm_free(db);
    return rc;
}

/* ---- other tables of the catalog ---- */

/* The name the listing gives the place `p` when it lies at or below the listing location only
 * by where it really is (new string in *alias), or NULL. */
static int listing_alias(const guard_ctx *c, const icm__other_place *p, char **alias)
{
    *alias = NULL;
    const char *rest;
    if (p->real == NULL || c->real_root == NULL ||
        (!icm__location_strip_prefix(p->real, c->real_root, &rest) &&
         !icm__place_identity_below(p->real, c->real_root, &rest, c->mounts)))
        return 0;
    return (*alias = icm__location_join(c->list_root, rest)) != NULL ? 0 : ICM_ENOMEM;
}

/* Whether the place `p` (of another table) lies at or below the listing location, by name or
 * by where both really are, and is not carved out (by its name, or by the name the listing
 * gives it). */
static int holds(const guard_ctx *c, const icm__other_place *p, bool *out)
{
    *out = false;
    if (!icm__place_within(p->name, p->real, c->list_root, c->real_root, false, c->mounts))
        return 0;
    char *alias = NULL;
    int rc = listing_alias(c, p, &alias);
    if (rc == 0)
        *out = !icm__orphan_excluded(c->o, p->name) &&
               (alias == NULL || !icm__orphan_excluded(c->o, alias));
    icm__free(alias);
    return rc;
}

/* " (really R)" when `p` is somewhere else than its name says, for messages. */
static const char *really(const icm__other_place *p, char *buf, size_t size)
{
    buf[0] = '\0';
    if (p->real != NULL && !icm__location_equal(p->real, p->name))
        snprintf(buf, size, " (really %s)", p->real);
    return buf;
}

static int refuse_table(const guard_ctx *c, const icm__other_table *t, const char *shown,
                        const icm__other_place *p)
{
    char buf[1100];
    return icm__orphan_refuse(p->name,
                  "catalog table %s (catalog '%s'%s%s) has its %s %s%s here, under the "
                  "listing location %s; refusing to sweep a folder shared with another table, "
                  "whose files this table does not reference (carve that table's folders out "
                  "with --exclude-location)",
                  shown, t->catalog_name, c->found_db != NULL ? ", in the database " : "",
                  c->found_db != NULL ? c->found_db : "", p->what, p->name,
                  really(p, buf, sizeof buf), c->list_root);
}

static int refuse_inside(const guard_ctx *c, const icm__other_table *t, const char *shown,
                         const icm__other_place *p)
{
    char buf[1100];
    return icm__orphan_refuse(c->list_root,
                  "the listing location lies at or below the %s %s%s of catalog table %s "
                  "(catalog '%s'%s%s), a folder that table writes its files into; refusing to "
                  "sweep it: that table's files there are not referenced by this table; "
                  "nothing is deleted (no override)",
                  p->what, p->name, really(p, buf, sizeof buf), shown, t->catalog_name,
                  c->found_db != NULL ? ", in the database " : "",
                  c->found_db != NULL ? c->found_db : "");
}

static int refuse_unresolved(const guard_ctx *c, const icm__other_table *t, const char *shown,
                             const icm__other_place *p)
{
    return icm__orphan_refuse(p->name,
                  "cannot tell where the %s of catalog table %s (catalog '%s'%s%s) really "
                  "is (%s), so whether it leads into the listing location %s; refusing to "
                  "sweep; nothing is deleted (repair that table's metadata, or drop it from "
                  "the catalog, and sweep again)",
                  p->what, shown, t->catalog_name,
                  c->found_db != NULL ? ", in the database " : "",
                  c->found_db != NULL ? c->found_db : "", p->unresolved, c->list_root);
}

/* A table the catalog lists but could not load (adversary round 20, H4: a principal that may
 * list a table but not load it, per-table access control): its files may lie anywhere,
 * the listing location included. */
static int refuse_unloaded(const guard_ctx *c, const icm__other_table *t, const char *shown)
{
    return icm__orphan_refuse(c->list_root,
                  "catalog table %s (catalog '%s'): %s; where its files lie cannot be told, "
                  "so whether the listing location %s holds some; refusing to sweep; nothing "
                  "is deleted (sweep with credentials that may load every table of the "
                  "catalog, or repair or drop that table)",
                  shown, t->catalog_name, t->unreadable, c->list_root);
}

/* Refuse when one of another table's places lies at or below the listing location, or when
 * the listing location lies at or below a folder that table writes into (by name or by where
 * each really is: a name may go through a link or `..`). Not merely below its location: a
 * table at the warehouse root holds every other table's folder, but writes only into its
 * data/ and metadata/ folders and its write paths. */
static int check_places(guard_ctx *c, const icm__other_table *t, const char *shown)
{
    icm__other_places ps;
    int rc = icm__other_places_init(&ps, c->io, t);
    if (rc != 0)
        return rc;
    /* The listing inside what it writes first: that has no override. */
    for (size_t i = 0; rc == 0 && i < ps.n; i++) {
        const icm__other_place *p = &ps.p[i];
        if (p->written &&
            icm__place_within(c->list_root, c->real_root, p->name, p->real, false, c->mounts))
            rc = refuse_inside(c, t, shown, p);
    }
    bool held = false;
    for (size_t i = 0; rc == 0 && i < ps.n; i++) {
        const icm__other_place *p = &ps.p[i];
        if ((rc = holds(c, p, &held)) == 0 && held)
            rc = refuse_table(c, t, shown, p);
    }
    /* A place whose real whereabouts cannot be told may lead into the listing: refused. */
    for (size_t i = 0; rc == 0 && i < ps.n; i++)
        if (ps.p[i].unresolved != NULL)
            rc = refuse_unresolved(c, t, shown, &ps.p[i]);
    icm__other_places_dispose(&ps);
    return rc;
}

static int check_other_table(const icm__other_table *t, void *payload)
{
    char *shown = icm__other_table_name(t);
    if (shown == NULL)
        return ICM_ENOMEM;
    int rc = t->pointer == NULL ? refuse_unloaded(payload, t, shown)
                                : check_places(payload, t, shown);
    icm__free(shown);
    return rc;
}

/* Only a catalog of many tables can be asked: SQL, or a filesystem catalog over a warehouse
 * (not the single-table one behind a table directory). */
static bool lists_tables(const icm_catalog *cat)
{
    if (cat == NULL)
        return false;
    if (strcmp(icm_catalog_kind(cat), "hadoop") == 0)
        return icm__hadoop_table_dir(cat) == NULL;
    return true;
}

/* Whether `real` was seen; else remember it (taken). */
static int seen_before(icm__ptrvec *seen, char *real, bool *out)
{
    *out = false;
    for (size_t i = 0; i < seen->len; i++)
        if (strcmp(seen->items[i], real) == 0) {
            *out = true;
            free(real);
            return 0;
        }
    if (icm__ptrvec_push(seen, real) != 0) {
        free(real);
        return ICM_ENOMEM;
    }
    return 0;
}

static void free_real(void *p)
{
    free(p);
}

/* The tables of every other SQLite database the caller's configuration names (the databases
 * among `catalog_files`, i.e. of every catalog of its .pyiceberg.yaml): each database is
 * walked once, the table's own (already walked) not again, whatever its spelling. */
static int check_configured_databases(guard_ctx *c, icm_catalog *cat)
{
    if (c->o->version < 2 || c->o->catalog_file_count == 0)
        return 0;
    icm__ptrvec seen = ICM__PTRVEC_INIT;
    bool dup = false;
    int rc = 0;
    icm_error_clear();
    char *own = icm__sql_catalog_database_file(cat);
    if (own == NULL && icm_error_last()->code == ICM_ENOMEM)
        return ICM_ENOMEM;
    char *own_real = own != NULL ? realpath(own, NULL) : NULL;
    icm_free(own);
    if (own_real != NULL)
        rc = seen_before(&seen, own_real, &dup);
    for (size_t i = 0; rc == 0 && i < c->o->catalog_file_count; i++) {
        const char *f = c->o->catalog_files[i];
        char *real = f != NULL ? realpath(f, NULL) : NULL;
        if (real == NULL)
            continue; /* not there: no database to ask */
        rc = seen_before(&seen, real, &dup);
        if (rc == 0 && !dup)
            rc = icm__database_each_table(c->io, f, check_other_table, c);
    }
    icm__ptrvec_dispose(&seen, free_real);
    return rc;
}

/* ---- a database the listing found ---- */

/* A table of a database no configuration names: the swept table itself when its pointer is
 * the swept table's current metadata file. */
static int check_found_table(const icm__other_table *t, void *payload)
{
    guard_ctx *c = payload;
    if (c->same_pointer != NULL && t->pointer != NULL &&
        icm__location_equal(t->pointer, c->same_pointer))
        return 0;
    return check_other_table(t, payload);
}

int icm__orphans_local_file(icm_fileio *io, const char *location, char **out)
{
    *out = NULL;
    char *mapped = NULL;
    int rc = icm_fileio_pathmap_apply(&mapped, io, location);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0)
        icm_error_clear(); /* not a path map: the name is where the file is */
    const char *name = mapped != NULL ? mapped : location;
    if (icm__location_local_part(name) != NULL)
        rc = icm__location_fs_path(name, out);
    else
        rc = 0;
    icm_free(mapped);
    return rc;
}

/* Whether the database at local `path` is one check_configured_databases walks already (the
 * table's own catalog's or one the configuration names). */
static bool configured_database(icm_table *t, const icm_orphan_options *o, const char *real)
{
    bool seen = false;
    char *own = icm__sql_catalog_database_file(icm_table_get_catalog(t));
    char *own_real = own != NULL ? realpath(own, NULL) : NULL;
    seen = own_real != NULL && strcmp(own_real, real) == 0;
    free(own_real);
    icm_free(own);
    icm_error_clear();
    for (size_t i = 0; !seen && o->version >= 2 && i < o->catalog_file_count; i++) {
        char *f = o->catalog_files[i] != NULL ? realpath(o->catalog_files[i], NULL) : NULL;
        seen = f != NULL && strcmp(f, real) == 0;
        free(f);
    }
    return seen;
}

int icm__catalog_guard_check_found_database(icm_table *t, const icm_orphan_options *o,
                                            const char *list_root, const char *db_location,
                                            const char *current_pointer)
{
    guard_ctx c = {NULL, icm_table_get_fileio(t), o, list_root, NULL,
                   ICM__BUF_INIT, 0, current_pointer, db_location, NULL};
    char *path = NULL;
    int rc = icm__orphans_local_file(c.io, db_location, &path);
    if (rc != 0 || path == NULL)
        return rc;
    char *real = realpath(path, NULL);
    if (real != NULL && !configured_database(t, o, real)) {
        rc = icm__place_real(c.io, list_root, &c.real_root);
        if (rc != 0 && rc != ICM_ENOMEM) {
            icm_error_clear(); /* cannot be told: names are compared */
            rc = 0;
        }
        if (rc == 0)
            rc = icm__database_each_table(c.io, real, check_found_table, &c);
    }
    free(real);
    icm__free(path);
    icm__free(c.real_root);
    return rc;
}

/* ---- entry ---- */

/* Whether the table's FileIO is a path map with a rule for `loc` (then a relative name is the
 * metadata's own, read where the map puts it, not below the working directory). */
static bool named_by_path_map(icm_table *t, const char *loc)
{
    char *mapped = NULL;
    bool by_map = icm_fileio_pathmap_apply(&mapped, icm_table_get_fileio(t), loc) == 0 &&
                  strcmp(mapped, loc) != 0;
    icm_free(mapped);
    icm_error_clear();
    return by_map;
}

int icm__catalog_guard_check(icm__catalog_guard *g, icm_table *t, const icm_orphan_options *o,
                             const char *list_root)
{
    if (!icm__location_is_absolute(list_root) && !named_by_path_map(t, list_root))
        return icm__orphan_refuse(list_root, "the table location is a relative path, so what it names "
                                 "depends on the working directory; refusing to sweep (map it "
                                 "to where the table is with --path-map)");
    /* Other tables' places are compared by identity only where a file system is mounted
     * twice (the mount table read once here; unreadable: always). */
    icm__mounts mounts = {NULL, 0};
    bool have_mounts = icm__mounts_read(&mounts, NULL) == 0;
    icm_error_clear();
    guard_ctx c = {g, icm_table_get_fileio(t), o, list_root, NULL,
                   ICM__BUF_INIT, 0, NULL, NULL, have_mounts ? &mounts : NULL};
    /* Where the listing really is (a missing tail: below where its existing part is). */
    int rc = icm__place_real(c.io, list_root, &c.real_root);
    if (rc != 0 && rc != ICM_ENOMEM) {
        icm_error_clear(); /* cannot be told (the listing will say why): names are compared */
        rc = 0;
    }
    if (rc == 0)
        rc = guard_own_files(&c, t);
    if (rc == 0)
        rc = refuse_own_files(&c);
    icm_catalog *cat = icm_table_get_catalog(t);
    if (rc == 0 && lists_tables(cat))
        rc = icm__catalog_each_other_table_of(t, check_other_table, &c);
    if (rc == 0 && lists_tables(cat))
        rc = check_configured_databases(&c, cat);
    icm_free(c.real_root);
    icm__buf_dispose(&c.offending);
    icm__mounts_dispose(&mounts);
    return rc;
}

bool icm__catalog_guard_protects(const icm__catalog_guard *g, const char *location)
{
    for (size_t i = 0; i < g->n; i++)
        if (icm__location_equal(location, g->names[i]))
            return true;
    return false;
}

void icm__catalog_guard_dispose(icm__catalog_guard *g)
{
    for (size_t i = 0; i < g->n; i++)
        icm__free(g->names[i]);
    icm__free(g->names);
    g->names = NULL;
    g->n = 0;
}
