/*
 * maint/expire_foreign.c: expiry's hold on the files of other catalog tables (issue #16 round
 * 8: ns.b located inside ns.a's folder; ns.a added one of b's live data files with add-files,
 * then deleted those rows, and expiring ns.a deleted b's live file).
 *
 * After the plan, and only when it plans a file and the table has a catalog that lists
 * tables, the catalog is asked for every other table it holds a pointer for
 * (icm__catalog_each_other_table, the query the orphan sweep's guard uses: for a SQL catalog
 * every catalog_name of its database). A planned file is taken out of the plan and reported
 * (ICM_EXPIRE_PROBLEM_OTHER_TABLE, a warning) when it is another table's metadata file, or
 * lies under another table's location, write.data.path, write.metadata.path, Java's legacy
 * write.object-storage.path / write.folder-storage.path, or its `<location>/data` or
 * `<location>/metadata`, unless that folder strictly contains one of this table's own roots
 * that holds the file: a table at the warehouse root does not hold back the expiry of the
 * tables nested in it, while a table nested in this one (or sharing its folder, as a copy
 * registered in another catalog does, or whose data folder is this table's location) does.
 * Each comparison is made by name and by where both really are (maint/places.h: links and
 * `..` resolved; the other tables' places and this table's roots once per run, a planned
 * file's folder once per run of files in it): either one holds the file. When where one of
 * those places really is cannot be told (a permission or I/O error, a link loop), or a table the
 * catalog lists cannot be loaded (adversary round 20, H4: a 403 for a principal that may list
 * but not load it, a 5xx, a 404 while a fresh listing still names it), every planned file is
 * held: any of them may lie there. The table itself is passed over only by its identifier's
 * parts and its table-uuid (H1: namespace `a` with table `b.t` is not `a.b.t`).
 *
 * Tables no catalog lists (issue #16 adversarial round 2: a filesystem-layout table B nested
 * in A's folder, whose live file A added then deleted) are found on disk, as the sweep's
 * check_other_tables finds them: a planned file is held when one of its ancestor folders up
 * to one of this table's roots holding it (that root included: adversary round 16, F1) is a
 * table location, i.e. has a `metadata/` folder holding `version-hint.text`, `version-hint.txt` or a `*.metadata.json`
 * file, and that `metadata/` folder is not one of this table's own metadata folders. The files
 * are not read (any such folder is taken for another table: keeping a file is the safe side).
 * The `metadata/` folder is listed through the table's io, stopping at the first such file; one
 * that cannot be listed (other than for memory) holds its files too. Each distinct folder is
 * looked at once (a cached verdict), and only when something is planned.
 * On an object store (adversary round 15: such a table B on S3, opened and committed through
 * its version hint, lost its live file the same way) the same folders are looked at, by one
 * listing of `<folder>/metadata/` each; those listings are tens of milliseconds of waiting
 * apiece, so every distinct folder the plan needs is looked at first, 32 at a time
 * (util/parallel.h), and the files are then held from the verdicts. Relative locations are
 * not looked at (metadata never records one).
 *
 * Catalog files and hidden files: a data, delete or manifest file the plan names that is hidden
 * (its name starts with `.`) or is a catalog's own file (a SQLite database or journal by its
 * first 16 bytes, a `.pyiceberg.yaml`) is held too. Iceberg writers write neither; only a
 * damaged or crafted manifest (list) names one, and a catalog's database holds every table's
 * pointer. One 16-byte read per planned file not named like a table file (catalog_store.h).
 *
 * Read-only: pointer look-ups, one metadata read per other table, resolves, one listing per
 * folder.
 */
#include <string.h>

#include "catalog/catalog_internal.h"
#include "maint/catalog_store.h"
#include "maint/expire_internal.h"
#include "maint/keepset.h"
#include "maint/places.h"
#include "util/location.h"
#include "util/parallel.h"
#include "util/strset.h"
#include "util/util.h"

/* What another table holds: its pointer (a file) or one of its places (a folder), by name and
 * by where it really is (icm__place_real, once per run). */
typedef struct held {
    char *location;
    char *real; /* NULL: unknown (names are compared) */
    bool folder;
    char *owner; /* "table ns.name (catalog 'c') has it under its location L" and the like */
} held;

typedef struct holds {
    held *items;
    size_t len, cap;
    icm_fileio *io;
    char *unresolved; /* the first place of another table whose real whereabouts cannot be
                         told (for the message; every planned file is then held), or NULL */
} holds;

/* Takes p's name and real place. */
static int push_held(holds *h, const icm__other_table *t, const char *shown,
                     icm__other_place *p)
{
    if (h->len == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        held *grown = icm__reallocarray(h->items, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        h->items = grown;
        h->cap = cap;
    }
    bool moved = p->real != NULL && !icm__location_equal(p->real, p->name);
    if (p->unresolved != NULL && h->unresolved == NULL &&
        (h->unresolved = icm__sprintf("table %s (catalog '%s'): where its %s %s really "
                                      "is cannot be told (%s)",
                                      shown, t->catalog_name, p->what, p->name,
                                      p->unresolved)) == NULL)
        return ICM_ENOMEM;
    held e = {p->name, p->real, !p->file,
              icm__sprintf("table %s (catalog '%s') has it %s its %s %s%s%s", shown,
                           t->catalog_name, p->file ? "as" : "under", p->what, p->name,
                           moved ? ", really " : "", moved ? p->real : "")};
    p->name = p->real = NULL;
    if (e.owner == NULL) {
        icm__free(e.location);
        icm__free(e.real);
        return ICM_ENOMEM;
    }
    h->items[h->len++] = e;
    return 0;
}

static int collect_other(const icm__other_table *t, void *payload)
{
    holds *h = payload;
    char *shown = icm__other_table_name(t);
    if (shown == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    if (t->pointer == NULL) {
        /* Listed but not loaded (adversary round 20, H4): none of its places is known, so any
         * planned file may be its own; held as for a place that cannot be resolved. */
        if (h->unresolved == NULL &&
            (h->unresolved = icm__sprintf("table %s (catalog '%s'): %s; where its files lie "
                                          "cannot be told",
                                          shown, t->catalog_name, t->unreadable)) == NULL)
            rc = ICM_ENOMEM;
        icm__free(shown);
        return rc;
    }
    icm__other_places ps;
    rc = icm__other_places_init(&ps, h->io, t);
    for (size_t i = 0; rc == 0 && i < ps.n; i++)
        rc = push_held(h, t, shown, &ps.p[i]);
    icm__other_places_dispose(&ps); /* (what was pushed is the holds' now) */
    icm__free(shown);
    return rc;
}

static void holds_dispose(holds *h)
{
    for (size_t i = 0; i < h->len; i++) {
        icm__free(h->items[i].location);
        icm__free(h->items[i].real);
        icm__free(h->items[i].owner);
    }
    icm__free(h->items);
    icm__free(h->unresolved);
}

/* This table's roots, as named and where each really is. */
typedef struct own_roots {
    const char *name[3];
    char *real[3];
    size_t n;
} own_roots;

/* Whether the folder `other` strictly contains one of this table's roots holding `path`, by
 * name (real = false) or by where each really is. */
static bool encloses_own_root(const held *e, const char *path, const char *real_path,
                              const own_roots *own, bool real)
{
    const char *other = real ? e->real : e->location;
    if (real && (other == NULL || real_path == NULL))
        return false;
    for (size_t i = 0; i < own->n; i++) {
        const char *root = real ? own->real[i] : own->name[i];
        if (root != NULL && icm__location_is_inside(real ? real_path : path, root) &&
            icm__location_is_inside(root, other) && !icm__location_equal(root, other))
            return true;
    }
    return false;
}

/* The other table holding `path` (really at `real_path`, NULL: unknown), or NULL: its metadata
 * file, or a file below one of its places that does not strictly contain one of this table's
 * roots holding the file (a table at the warehouse root holds nothing of the tables in it),
 * by name or by where both really are. */
static const held *holder(const holds *h, const char *path, const char *real_path,
                          const own_roots *own)
{
    for (size_t i = 0; i < h->len; i++) {
        const held *e = &h->items[i];
        if (!e->folder) {
            if (icm__location_equal(path, e->location) ||
                (real_path != NULL && e->real != NULL && icm__location_equal(real_path, e->real)))
                return e;
            continue;
        }
        if ((icm__location_is_inside(path, e->location) &&
             !encloses_own_root(e, path, real_path, own, false)) ||
            (real_path != NULL && e->real != NULL && icm__location_is_inside(real_path, e->real) &&
             !encloses_own_root(e, path, real_path, own, true)))
            return e;
    }
    return NULL;
}

/* Who holds `path`: *why is set to a new message (not deleted: ...) or left NULL. Returns 0 or
 * ICM_ENOMEM. */
typedef int (*hold_fn)(void *ctx, const char *path, char **why);

/* Take the files held (hold_fn) out of one of the result's arrays, reporting each. */
static int hold_in(icm_expire_result *r, icm_expire_file *files, size_t *n, hold_fn fn,
                   void *ctx)
{
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < *n; i++) {
        char *msg = NULL;
        if (rc == 0 && files[i].state == ICM_EXPIRE_FILE_PLANNED)
            rc = fn(ctx, files[i].path, &msg);
        if (msg == NULL) {
            files[kept++] = files[i];
            continue;
        }
        rc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_OTHER_TABLE, files[i].path,
                                     ICM_EREFUSED, msg);
        icm__free(msg);
        icm__free(files[i].path);
    }
    *n = kept;
    return rc;
}

/* hold_in over every array of the plan, then the tally. */
static int hold_all(icm_expire_result *r, hold_fn fn, void *ctx)
{
    int rc = hold_in(r, r->deleted_files, &r->deleted_file_count, fn, ctx);
    if (rc == 0)
        rc = hold_in(r, r->deleted_manifests, &r->deleted_manifest_count, fn, ctx);
    if (rc == 0)
        rc = hold_in(r, r->deleted_statistics_files, &r->deleted_statistics_file_count, fn,
                     ctx);
    if (rc == 0)
        rc = hold_in(r, r->deleted_checksum_files, &r->deleted_checksum_file_count, fn, ctx);
    icm__expire_result_tally(r);
    return rc;
}

/* The catalog tables' hold: holds `h` with this table's roots, and where the last folder
 * looked at really is (files come in folder runs: one resolve per folder, not per file). */
typedef struct catalog_hold {
    const holds *h;
    const own_roots *own;
    icm_fileio *io;
    char *dir;      /* the last folder resolved (normalised) */
    char *real_dir; /* where it really is; NULL: unknown */
} catalog_hold;

/* Where the file `path` really is (new string in *out; NULL: unknown): its folder resolved
 * (cached), then its name. */
static int real_file(catalog_hold *c, const char *path, char **out)
{
    *out = NULL;
    const char *local = icm__location_local_part(path);
    if (local == NULL || local[0] != '/')
        return icm__place_real(c->io, path, out); /* an object store's: by its back end */
    char *dir = NULL;
    if (icm__location_fs_path(path, &dir) != 0)
        return ICM_ENOMEM;
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir || slash[1] == '\0') {
        icm__free(dir);
        return icm__place_real(c->io, path, out);
    }
    char *name = icm__strdup(slash + 1);
    *slash = '\0';
    int rc = name != NULL ? 0 : ICM_ENOMEM;
    if (rc == 0 && (c->dir == NULL || strcmp(c->dir, dir) != 0)) {
        icm__free(c->dir);
        icm__free(c->real_dir);
        c->dir = dir;
        c->real_dir = NULL;
        dir = NULL;
        rc = icm__place_real(c->io, c->dir, &c->real_dir);
    }
    if (rc == 0 && c->real_dir != NULL && (*out = icm__location_join(c->real_dir, name)) == NULL)
        rc = ICM_ENOMEM;
    icm__free(dir);
    icm__free(name);
    return rc;
}

static int catalog_holder(void *ctx, const char *path, char **why)
{
    catalog_hold *c = ctx;
    char *real = NULL;
    int rc = real_file(c, path, &real);
    if (rc != 0 && rc != ICM_ENOMEM) {
        /* Its folder cannot be resolved: compared by name (the delete phase's link guard keeps
         * a file whose folder it cannot resolve). */
        icm_error_clear();
        rc = 0;
    }
    const held *e = rc == 0 ? holder(c->h, path, real, c->own) : NULL;
    icm__free(real);
    if (rc != 0 || (e == NULL && c->h->unresolved == NULL))
        return rc;
    *why = e != NULL ? icm__sprintf("not deleted: another catalog table may use it (%s)", e->owner)
                     : icm__sprintf("not deleted: it may lie in a place of another catalog "
                                    "table (%s)",
                                    c->h->unresolved);
    return *why != NULL ? 0 : ICM_ENOMEM;
}

static size_t planned_count(const icm_expire_result *r)
{
    return r->deleted_file_count + r->deleted_manifest_count +
           r->deleted_statistics_file_count + r->deleted_checksum_file_count;
}

static bool lists_tables(const icm_catalog *cat)
{
    if (cat == NULL)
        return false;
    return strcmp(icm_catalog_kind(cat), "hadoop") != 0 || icm__hadoop_table_dir(cat) == NULL;
}

/* ---- tables no catalog lists: found on disk ---- */

typedef struct nested_hold {
    icm_fileio *io;
    char *roots[3]; /* this table's local roots, normalised (NULL: not local) */
    size_t n_roots;
    char *own_md[3]; /* this table's metadata folders, normalised */
    size_t n_own_md;
    icm__strset looked; /* folders whose verdict is known */
    icm__strset tables; /* of those, the ones that are (or may be) another table's location */
} nested_hold;

static bool is_own_metadata(const nested_hold *n, const char *md_dir)
{
    for (size_t i = 0; i < n->n_own_md; i++)
        if (n->own_md[i] != NULL && icm__location_equal(md_dir, n->own_md[i]))
            return true;
    return false;
}

/* Whether the folder `md_dir` (listed through the table's io, stopping at the first hit) holds
 * version-hint.text/.txt or a *.metadata.json file. A listing that fails for another reason
 * than memory counts as "yes": keeping a file is the safe side. Returns 0 or ICM_ENOMEM. */
static int holds_table_metadata(icm_fileio *io, const char *md_dir, bool *table)
{
    icm__table_md_found found;
    int rc = icm__find_table_metadata(io, md_dir, false, &found);
    *table = rc != 0 || found.any;
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0)
        icm_error_clear();
    return 0;
}

/* Whether the folder dir[0..len) is another table's location; each folder is looked at once. */
static int folder_is_table(nested_hold *n, const char *dir, size_t len, bool *table)
{
    *table = false;
    if (icm__strset_contains(&n->looked, dir, len)) {
        *table = icm__strset_contains(&n->tables, dir, len);
        return 0;
    }
    char *md_dir = icm__sprintf("%.*s/metadata", (int)len, dir);
    if (md_dir == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    if (!is_own_metadata(n, md_dir))
        rc = holds_table_metadata(n->io, md_dir, table);
    icm__free(md_dir);
    if (rc == 0)
        rc = icm__strset_add(&n->looked, dir, len, NULL);
    if (rc == 0 && *table)
        rc = icm__strset_add(&n->tables, dir, len, NULL);
    return rc;
}

/* Shorten key[0..*len) to its parent folder; false when that lies above the root (root_len
 * bytes long), the walk's end. The root itself is looked at too: a table may lie exactly at
 * this table's write.data.path (adversary round 16, F1); at this table's location, its
 * metadata folder is this table's own and is passed over. */
static bool parent_folder(const char *key, size_t *len, size_t root_len)
{
    size_t l = *len;
    while (l > 0 && key[l - 1] != '/')
        l--;
    if (l > 0)
        l--; /* drop the slash: key[0..l) is the parent folder */
    if (l < root_len)
        return false;
    *len = l;
    return true;
}

static int nested_holder(void *ctx, const char *path, char **why)
{
    nested_hold *n = ctx;
    if (!icm__location_is_absolute(path))
        return 0; /* a relative location: not looked at */
    char *key = NULL;
    int rc = icm__location_key(path, &key);
    for (size_t i = 0; rc == 0 && *why == NULL && i < n->n_roots; i++) {
        const char *root = n->roots[i];
        if (root == NULL || !icm__location_is_inside(key, root))
            continue;
        /* Each ancestor folder of the file strictly below the root, nearest first. */
        size_t root_len = strlen(root), len = strlen(key);
        while (rc == 0 && *why == NULL && parent_folder(key, &len, root_len)) {
            bool table;
            rc = folder_is_table(n, key, len, &table);
            if (rc == 0 && table && (*why = icm__sprintf(
                                         "not deleted: another table may use it (the folder "
                                         "%.*s, at or inside this table's root %s, has a "
                                         "metadata folder with table metadata that is not "
                                         "this table's)",
                                         (int)len, key, root)) == NULL)
                rc = ICM_ENOMEM;
        }
    }
    icm__free(key);
    return rc;
}

/* ---- the object-store folders, looked at many at a time before the files are held ---- */

/* Listings at once on an object store. */
#define FOLDER_LOOK_THREADS 32

typedef struct folder_looks {
    icm_fileio *io;
    icm__ptrvec md_dirs; /* "<folder>/metadata" of each folder not yet looked at */
    bool *table;
    int *rcs;
    icm__strset queued; /* the folders in md_dirs */
} folder_looks;

static void look_folder(void *ctx, size_t i)
{
    folder_looks *f = ctx;
    f->rcs[i] = holds_table_metadata(f->io, f->md_dirs.items[i], &f->table[i]);
}

/* Queue every folder the nested hold will ask about for the object-store file `path`. */
static int queue_folders(nested_hold *n, folder_looks *f, const char *path)
{
    const char *local = icm__location_local_part(path);
    if (local != NULL || !icm__location_is_absolute(path))
        return 0; /* local disk: each folder's listing is cheap, looked at in turn */
    char *key = NULL;
    int rc = icm__location_key(path, &key);
    for (size_t i = 0; rc == 0 && i < n->n_roots; i++) {
        const char *root = n->roots[i];
        if (root == NULL || !icm__location_is_inside(key, root))
            continue;
        size_t root_len = strlen(root), len = strlen(key);
        while (rc == 0 && parent_folder(key, &len, root_len)) {
            if (icm__strset_contains(&n->looked, key, len) ||
                icm__strset_contains(&f->queued, key, len))
                continue;
            char *md_dir = icm__sprintf("%.*s/metadata", (int)len, key);
            if (md_dir == NULL) {
                rc = ICM_ENOMEM;
            } else if (is_own_metadata(n, md_dir)) {
                icm__free(md_dir);
                rc = icm__strset_add(&n->looked, key, len, NULL);
            } else if ((rc = icm__ptrvec_push(&f->md_dirs, md_dir)) != 0) {
                icm__free(md_dir);
            } else {
                rc = icm__strset_add(&f->queued, key, len, NULL);
            }
        }
    }
    icm__free(key);
    return rc;
}

static int queue_in(nested_hold *n, folder_looks *f, const icm_expire_file *files, size_t count)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < count; i++)
        if (files[i].state == ICM_EXPIRE_FILE_PLANNED)
            rc = queue_folders(n, f, files[i].path);
    return rc;
}

/* Look at every object-store folder the plan's files need, FOLDER_LOOK_THREADS at a time,
 * and record the verdicts where folder_is_table finds them. */
static int look_ahead(nested_hold *n, const icm_expire_result *r)
{
    folder_looks f = {n->io, ICM__PTRVEC_INIT, NULL, NULL, ICM__STRSET_INIT};
    size_t count = 0;
    int rc = queue_in(n, &f, r->deleted_files, r->deleted_file_count);
    if (rc == 0)
        rc = queue_in(n, &f, r->deleted_manifests, r->deleted_manifest_count);
    if (rc == 0)
        rc = queue_in(n, &f, r->deleted_statistics_files, r->deleted_statistics_file_count);
    if (rc == 0)
        rc = queue_in(n, &f, r->deleted_checksum_files, r->deleted_checksum_file_count);
    if (rc == 0 && (count = f.md_dirs.len) > 0) {
        f.table = icm__calloc(count, sizeof *f.table);
        f.rcs = icm__calloc(count, sizeof *f.rcs);
        if (f.table == NULL || f.rcs == NULL)
            rc = ICM_ENOMEM;
        else
            icm__parallel_for(count, FOLDER_LOOK_THREADS, look_folder, &f);
    }
    for (size_t i = 0; rc == 0 && i < count; i++) {
        if (f.rcs[i] != 0) {
            rc = icm__error_oom(); /* (holds_table_metadata's only failure) */
            break;
        }
        /* The folder is the metadata folder's name without its "/metadata". */
        const char *md_dir = f.md_dirs.items[i];
        size_t len = strlen(md_dir) - strlen("/metadata");
        rc = icm__strset_add(&n->looked, md_dir, len, NULL);
        if (rc == 0 && f.table[i])
            rc = icm__strset_add(&n->tables, md_dir, len, NULL);
    }
    icm__ptrvec_dispose(&f.md_dirs, icm__free);
    icm__free(f.table);
    icm__free(f.rcs);
    icm__strset_dispose(&f.queued);
    return rc;
}

/* Local roots and metadata folders, normalised. */
static int nested_init(nested_hold *n, icm_fileio *io, const icm_table_metadata *md)
{
    memset(n, 0, sizeof *n);
    n->io = io;
    const char *roots[3];
    n->n_roots = icm__table_roots(md, roots);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n->n_roots; i++)
        if (icm__location_is_absolute(roots[i]))
            rc = icm__location_key(roots[i], &n->roots[i]);
    char *dirs[3];
    size_t n_dirs = 0;
    if (rc == 0)
        rc = icm__table_metadata_dirs(md, NULL, dirs, &n_dirs);
    for (size_t i = 0; i < n_dirs; i++) {
        if (rc == 0 && icm__location_is_absolute(dirs[i]))
            rc = icm__location_key(dirs[i], &n->own_md[n->n_own_md++]);
        icm__free(dirs[i]);
    }
    return rc;
}

static void nested_dispose(nested_hold *n)
{
    for (size_t i = 0; i < 3; i++) {
        icm__free(n->roots[i]);
        icm__free(n->own_md[i]);
    }
    icm__strset_dispose(&n->looked);
    icm__strset_dispose(&n->tables);
}

static int hold_catalog_tables(icm_table *t, const icm_table_metadata *md,
                               icm_expire_result *r)
{
    icm_catalog *cat = icm_table_get_catalog(t);
    if (!lists_tables(cat))
        return 0;
    icm_fileio *io = icm_table_get_fileio(t);
    holds h = {NULL, 0, 0, io, NULL};
    int rc = icm__catalog_each_other_table_of(t, collect_other, &h);
    own_roots own = {{NULL}, {NULL}, 0};
    if (rc == 0 && h.len > 0) {
        own.n = icm__table_roots(md, own.name);
        for (size_t i = 0; rc == 0 && i < own.n; i++)
            if ((rc = icm__place_real(io, own.name[i], &own.real[i])) != ICM_ENOMEM && rc != 0) {
                icm_error_clear(); /* unknown: compared by name (which holds more, not less) */
                rc = 0;
            }
    }
    if (rc == 0 && (h.len > 0 || h.unresolved != NULL)) {
        catalog_hold c = {&h, &own, io, NULL, NULL};
        rc = hold_all(r, catalog_holder, &c);
        icm__free(c.dir);
        icm__free(c.real_dir);
    }
    for (size_t i = 0; i < own.n; i++)
        icm__free(own.real[i]);
    holds_dispose(&h);
    return rc;
}

/* Holds a hidden file or a catalog's own file (see the top). */
static int catalog_file_holder(void *ctx, const char *path, char **why)
{
    const char *name = icm__basename(path);
    icm__catalog_file kind = ICM__CATALOG_FILE_NONE;
    if (name[0] != '.' && !icm__named_like_a_table_file(path)) {
        int rc = icm__catalog_file_kind(ctx, path, &kind);
        if (rc != 0)
            return rc;
    }
    if (name[0] != '.' && kind == ICM__CATALOG_FILE_NONE)
        return 0;
    if (kind == ICM__CATALOG_FILE_UNREADABLE) {
        *why = icm__strdup("not deleted: its first bytes could not be read to tell that it is "
                           "not a catalog's SQLite database, which no Iceberg writer writes");
        return *why != NULL ? 0 : ICM_ENOMEM;
    }
    *why = icm__sprintf("not deleted: it is %s, which no Iceberg writer writes; the manifest "
                        "naming it is damaged or crafted",
                        kind == ICM__CATALOG_FILE_SQLITE_DATABASE  ? "a SQLite database (a "
                                                                     "catalog's?)"
                        : kind == ICM__CATALOG_FILE_SQLITE_JOURNAL ? "a SQLite journal"
                        : kind == ICM__CATALOG_FILE_CONFIG         ? "a catalog configuration"
                                                                   : "a hidden file");
    return *why != NULL ? 0 : ICM_ENOMEM;
}

/* The files manifests and manifest lists name (what a damaged Avro file can misname). */
static int hold_catalog_files(icm_fileio *io, icm_expire_result *r)
{
    int rc = hold_in(r, r->deleted_files, &r->deleted_file_count, catalog_file_holder, io);
    if (rc == 0)
        rc = hold_in(r, r->deleted_manifests, &r->deleted_manifest_count, catalog_file_holder,
                     io);
    icm__expire_result_tally(r);
    return rc;
}

int icm__expire_hold_other_tables(icm_table *t, const icm_table_metadata *md,
                                  icm_expire_result *r)
{
    if (planned_count(r) == 0)
        return 0;
    int rc = hold_catalog_files(icm_table_get_fileio(t), r);
    if (rc == 0 && planned_count(r) > 0)
        rc = hold_catalog_tables(t, md, r);
    if (rc != 0 || planned_count(r) == 0)
        return rc;
    nested_hold n;
    rc = nested_init(&n, icm_table_get_fileio(t), md);
    if (rc == 0)
        rc = look_ahead(&n, r);
    if (rc == 0)
        rc = hold_all(r, nested_holder, &n);
    nested_dispose(&n);
    return rc;
}
