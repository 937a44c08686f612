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
 * lies under another table's location, write.data.path or write.metadata.path, unless that
 * folder strictly contains one of this table's own roots that holds the file: a table at the
 * warehouse root does not hold back the expiry of the tables nested in it, while a table
 * nested in this one (or sharing its folder, as a copy registered in another catalog does)
 * does.
 *
 * Read-only: pointer look-ups and one metadata read per other table.
 */
#include <string.h>

#include "catalog/catalog_internal.h"
#include "maint/expire_internal.h"
#include "util/location.h"
#include "util/util.h"

/* What another table holds: its pointer (a file) or one of its roots (a folder). */
typedef struct held {
    char *location;
    bool folder;
    char *owner; /* "table ns.name (catalog 'c')'s location" and the like, for the message */
} held;

typedef struct holds {
    held *items;
    size_t len, cap;
} holds;

static int push_held(holds *h, const icm__other_table *t, const char *loc, bool folder,
                     const char *what)
{
    if (h->len == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        held *grown = icm__reallocarray(h->items, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        h->items = grown;
        h->cap = cap;
    }
    held e = {icm__strdup(loc), folder,
              icm__sprintf("table %s.%s (catalog '%s') has it under its %s %s", t->ns, t->name,
                           t->catalog_name, what, loc)};
    if (e.location == NULL || e.owner == NULL) {
        icm__free(e.location);
        icm__free(e.owner);
        return ICM_ENOMEM;
    }
    h->items[h->len++] = e;
    return 0;
}

static int collect_other(const icm__other_table *t, void *payload)
{
    static const char *const what[] = ICM__OTHER_TABLE_ROOT_NAMES;
    int rc = push_held(payload, t, t->pointer, false, "metadata file");
    for (size_t i = 0; rc == 0 && i < ICM__ARRAY_LEN(what); i++)
        if (t->roots[i] != NULL && t->roots[i][0] != '\0')
            rc = push_held(payload, t, t->roots[i], true, what[i]);
    return rc;
}

static void holds_dispose(holds *h)
{
    for (size_t i = 0; i < h->len; i++) {
        icm__free(h->items[i].location);
        icm__free(h->items[i].owner);
    }
    icm__free(h->items);
}

/* Whether the folder `other` strictly contains one of this table's roots holding `path`. */
static bool encloses_own_root(const char *other, const char *path, const char *const *roots,
                              size_t n_roots)
{
    for (size_t i = 0; i < n_roots; i++)
        if (icm__location_is_inside(path, roots[i]) &&
            icm__location_is_inside(roots[i], other) && !icm__location_equal(roots[i], other))
            return true;
    return false;
}

/* The other table holding `path`, or NULL. */
static const held *holder(const holds *h, const char *path, const char *const *roots,
                          size_t n_roots)
{
    for (size_t i = 0; i < h->len; i++) {
        const held *e = &h->items[i];
        if (!e->folder ? icm__location_equal(path, e->location)
                       : icm__location_is_inside(path, e->location) &&
                             !encloses_own_root(e->location, path, roots, n_roots))
            return e;
    }
    return NULL;
}

/* Take the files other tables hold out of one of the result's arrays, reporting each. */
static int hold_in(icm_expire_result *r, icm_expire_file *files, size_t *n, const holds *h,
                   const char *const *roots, size_t n_roots)
{
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < *n; i++) {
        const held *e = rc == 0 && files[i].state == ICM_EXPIRE_FILE_PLANNED
                            ? holder(h, files[i].path, roots, n_roots)
                            : NULL;
        if (e == NULL) {
            files[kept++] = files[i];
            continue;
        }
        char *msg = icm__sprintf("not deleted: another catalog table may use it (%s)", e->owner);
        rc = msg != NULL ? icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_OTHER_TABLE,
                                                   files[i].path, ICM_EREFUSED, msg)
                         : ICM_ENOMEM;
        icm__free(msg);
        icm__free(files[i].path);
    }
    *n = kept;
    return rc;
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

int icm__expire_hold_other_tables(icm_table *t, const icm_table_metadata *md,
                                  icm_expire_result *r)
{
    icm_catalog *cat = icm_table_get_catalog(t);
    if (planned_count(r) == 0 || !lists_tables(cat))
        return 0;
    holds h = {NULL, 0, 0};
    int rc = icm__catalog_each_other_table(cat, icm_table_get_identifier(t), collect_other, &h);
    const char *roots[3];
    size_t n_roots = icm__table_roots(md, roots);
    if (rc == 0 && h.len > 0) {
        rc = hold_in(r, r->deleted_files, &r->deleted_file_count, &h, roots, n_roots);
        if (rc == 0)
            rc = hold_in(r, r->deleted_manifests, &r->deleted_manifest_count, &h, roots,
                         n_roots);
        if (rc == 0)
            rc = hold_in(r, r->deleted_statistics_files, &r->deleted_statistics_file_count, &h,
                         roots, n_roots);
        if (rc == 0)
            rc = hold_in(r, r->deleted_checksum_files, &r->deleted_checksum_file_count, &h,
                         roots, n_roots);
        icm__expire_result_tally(r);
    }
    holds_dispose(&h);
    return rc;
}
