/*
 * table/retention.c: metadata retention after a commit (issue #16, data-loss class).
 *
 * Java's TableOperations (deleteRemovedMetadataFiles) deletes, when the new metadata has
 * `write.metadata.delete-after-commit.enabled=true`, the metadata file of every metadata-log
 * entry the commit pushed out of the log (`write.metadata.previous-versions-max`),
 * unconditionally. A log entry is only a name, though: a crafted or damaged entry can name a
 * live data file or another table's metadata, and a table registered at one of this table's
 * older metadata files (register-table: a "clone") has that file as its current one. Deleting
 * any of them loses data. So icemaint holds a higher bar: a file dropped from the log is
 * deleted only when ALL hold:
 *  1. it lies directly in one of this table's metadata folders (`<location>/metadata`,
 *     `write.metadata.path`, the new current metadata file's folder), its folder compared by
 *     where it really is (icm__places_same: symbolic links and `..` resolved), not by name;
 *  2. it is named like a metadata file (`*.metadata.json`, `*.metadata.json.gz`:
 *     icm__table_metadata_file_name);
 *  3. it parses as table metadata with this table's table-uuid (a file and a table both
 *     without one: only in `<location>/metadata`, the one folder no other table calls its own);
 *  4. it is neither the current metadata file nor a metadata-log entry of another table of the
 *     catalog (icm__catalog_each_other_table_of, the walk the sweep's guard and expiry's hold use:
 *     for a SQL catalog every table of its database, whatever the catalog_name); a catalog that
 *     cannot list its tables keeps the file; a table named by its directory has no catalog
 *     and no other table to ask;
 *  5. it is not named by the new metadata (its current file or its log).
 * Names are compared in 4 and 5 by name and by where they really are (icm_fileio_resolve), so
 * a link to the file, or a spelling through a linked folder or `..`, is the file.
 * A file failing a condition, or one that could not be checked (unreadable, a catalog or
 * storage error, out of memory), is kept and a warning says why; the commit stands either way
 * (it has landed: icm_table_commit calls this only then). A file already gone is no error.
 *
 * Cost: nothing unless an entry drops out of the log. Then each dropped file is resolved and
 * read (a few: those the commit pushed out), each name of the new metadata resolved, and,
 * only when a file is left to delete, the catalog is asked once: one pointer look-up and one
 * metadata read per other table, and a resolve of its pointer and each of its log entries.
 */
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "catalog/catalog_internal.h"
#include "maint/keepset.h"
#include "table/retention.h"
#include "util/location.h"
#include "util/util.h"

typedef struct dropped {
    const char *file; /* as the base's metadata-log names it (borrowed) */
    char *real;       /* where it really is (icm_fileio_resolve), once it passed 2 */
    bool own_folder;  /* it lies in <location>/metadata */
    bool gone;        /* already missing: nothing to do, nothing to say */
    bool kept;        /* a condition failed or could not be checked */
    char *why;        /* why it is kept (NULL when even that message could not be made) */
} dropped;

typedef struct ret_ctx {
    const icm__retention *r;
    dropped *d;
    size_t n;
} ret_ctx;

static bool live(const dropped *d)
{
    return !d->gone && !d->kept;
}

static size_t live_count(const ret_ctx *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += live(&c->d[i]);
    return n;
}

static void keep(dropped *d, const char *fmt, ...) ICM__PRINTF(2, 3);
static void keep(dropped *d, const char *fmt, ...)
{
    if (d->kept)
        return;
    d->kept = true;
    va_list ap;
    va_start(ap, fmt);
    d->why = icm__vsprintf(fmt, ap);
    va_end(ap);
}

/* keep() every file still going, with the same reason. */
static void keep_all(ret_ctx *c, const char *fmt, ...) ICM__PRINTF(2, 3);
static void keep_all(ret_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = icm__vsprintf(fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < c->n; i++)
        if (live(&c->d[i]))
            keep(&c->d[i], "%s", why != NULL ? why : "it could not be checked (out of memory)");
    icm__free(why);
}

/* The last error's message, for a reason. */
static const char *last_message(void)
{
    const char *m = icm_error_last()->message;
    return m != NULL && m[0] != '\0' ? m : "unknown error";
}

/* ---- the files the commit pushed out of the log ---- */

static bool in_log(const icm_table_metadata *md, const char *file)
{
    size_t n = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; i < n; i++)
        if (strcmp(icm_table_metadata_metadata_log_at(md, i)->metadata_file, file) == 0)
            return true;
    return false;
}

static int collect_dropped(ret_ctx *c)
{
    const icm_table_metadata *base = c->r->base;
    size_t n = icm_table_metadata_metadata_log_count(base);
    c->d = n > 0 ? icm__calloc(n, sizeof *c->d) : NULL;
    if (n > 0 && c->d == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *file = icm_table_metadata_metadata_log_at(base, i)->metadata_file;
        bool twice = false;
        for (size_t k = 0; k < c->n && !twice; k++)
            twice = icm__location_equal(c->d[k].file, file);
        if (!twice && !in_log(c->r->committed, file))
            c->d[c->n++].file = file;
    }
    return 0;
}

/* ---- conditions 1 and 2: a metadata file directly in one of the table's metadata folders;
 * one already gone is left out here ---- */

static int check_place(const ret_ctx *c, dropped *d)
{
    const icm__retention *r = c->r;
    if (!icm__location_is_absolute(d->file)) {
        keep(d, "a relative name (an older icemaint recorded those) names a file relative to a "
                "working directory nobody knows now");
        return 0;
    }
    bool document = false;
    if (!icm__table_metadata_file_name(d->file, &document) || !document) {
        keep(d, "not named like a metadata file (*.metadata.json, *.metadata.json.gz)");
        return 0;
    }
    int rc = icm_fileio_resolve(&d->real, r->io, d->file);
    if (rc == ICM_ENOTFOUND) {
        d->gone = true; /* (its folder too, perhaps): nothing to delete, nothing to say */
        return 0;
    }
    if (rc != 0) {
        keep(d, "it could not be resolved (%s)", last_message());
        return rc == ICM_ENOMEM ? rc : 0;
    }
    const char *slash = strrchr(d->file, '/');
    char *folder = icm__strndup(d->file, (size_t)(slash - d->file));
    const char *location = icm_table_metadata_location(r->committed);
    char *own = location != NULL && location[0] != '\0' ? icm__location_join(location, "metadata")
                                                        : NULL;
    const char *cslash = strrchr(r->committed_location, '/');
    char *current = cslash != NULL ? icm__strndup(r->committed_location,
                                                  (size_t)(cslash - r->committed_location))
                                   : NULL;
    const char *mpath = icm_table_metadata_property(r->committed, "write.metadata.path");
    const char *folders[3] = {own, mpath != NULL && mpath[0] != '\0' ? mpath : NULL, current};
    rc = folder != NULL ? 0 : ICM_ENOMEM;
    bool same = false;
    for (size_t i = 0; rc == 0 && i < 3 && !same; i++) {
        if (folders[i] == NULL || (rc = icm__places_same(r->io, folder, folders[i], &same)) != 0)
            continue;
        d->own_folder = same && i == 0;
    }
    if (rc == ICM_ENOMEM)
        keep(d, "its folder could not be compared (out of memory)");
    else if (rc != 0)
        keep(d, "its folder could not be compared with the table's metadata folders (%s)",
             last_message());
    else if (!same)
        keep(d, "it does not lie directly in this table's metadata folders (<location>/metadata, "
                "write.metadata.path, the current metadata file's folder), compared where they "
                "really are");
    icm__free(folder);
    icm__free(own);
    icm__free(current);
    return rc == ICM_ENOMEM ? rc : 0;
}

/* ---- condition 3: this table's metadata ---- */

static int check_content(const ret_ctx *c, dropped *d)
{
    const icm__retention *r = c->r;
    icm_table_metadata *md = NULL;
    int rc = icm_table_metadata_read(&md, r->io, d->file);
    if (rc == ICM_ENOTFOUND) {
        d->gone = true;
        return 0;
    }
    if (rc != 0) {
        keep(d, "it could not be read as table metadata (%s)", last_message());
        return rc == ICM_ENOMEM ? rc : 0;
    }
    const char *ours = icm_table_metadata_uuid(r->committed);
    const char *theirs = icm_table_metadata_uuid(md);
    if (ours == NULL && theirs == NULL) {
        if (!d->own_folder)
            keep(d, "neither it nor this table has a table-uuid, and it lies outside "
                    "<location>/metadata");
    } else if (ours == NULL || theirs == NULL || strcasecmp(ours, theirs) != 0) {
        keep(d, "its table-uuid %s is not this table's %s", theirs != NULL ? theirs : "(none)",
             ours != NULL ? ours : "(none)");
    }
    icm_table_metadata_free(md);
    return 0;
}

/* ---- conditions 4 and 5: named by the new metadata or by another table ---- */

/* Keep every file still going that `name` names, by name or where it really is; `whose` says
 * who names it. A name that cannot be resolved (but is not missing, or on a back end the
 * FileIO does not serve) keeps every file still going: it cannot be told apart. */
static int keep_named(ret_ctx *c, const char *name, const char *whose)
{
    if (name == NULL || name[0] == '\0')
        return 0;
    for (size_t i = 0; i < c->n; i++)
        if (live(&c->d[i]) && icm__location_equal(name, c->d[i].file))
            keep(&c->d[i], "it is %s", whose);
    if (live_count(c) == 0)
        return 0;
    char *real = NULL;
    int rc = icm_fileio_resolve(&real, c->r->io, name);
    if (rc == ICM_ENOTFOUND || rc == ICM_EUNSUPPORTED || rc == ICM_EINVALID) {
        icm_error_clear(); /* missing, or nowhere this FileIO reaches: not one of our files */
        return 0;
    }
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        keep_all(c, "whether it is %s (%s) could not be told: %s", whose, name, last_message());
        return 0;
    }
    for (size_t i = 0; i < c->n; i++)
        if (live(&c->d[i]) && icm__location_equal(real, c->d[i].real))
            keep(&c->d[i], "it is %s (%s names it through a link)", whose, name);
    icm_free(real);
    return 0;
}

static int check_new_metadata(ret_ctx *c)
{
    const icm_table_metadata *md = c->r->committed;
    int rc = keep_named(c, c->r->committed_location, "the table's new current metadata file");
    size_t n = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; rc == 0 && i < n && live_count(c) > 0; i++)
        rc = keep_named(c, icm_table_metadata_metadata_log_at(md, i)->metadata_file,
                        "in the new metadata-log");
    return rc;
}

static int check_other_table(const icm__other_table *o, void *payload)
{
    ret_ctx *c = payload;
    char *current = icm__sprintf("the current metadata file of table %s.%s (catalog '%s')",
                                 o->ns, o->name, o->catalog_name);
    char *logged = icm__sprintf("in the metadata-log of table %s.%s (catalog '%s')", o->ns,
                                o->name, o->catalog_name);
    int rc = current != NULL && logged != NULL ? keep_named(c, o->pointer, current) : ICM_ENOMEM;
    /* Metadata the strict reader rejects: its metadata-log as its JSON has it (o->log). */
    if (rc == 0 && o->md == NULL && !o->lenient && o->md_rc != ICM_ENOTFOUND)
        keep_all(c, "the metadata of table %s.%s (catalog '%s') could not be read (%s), so "
                    "whether its metadata-log names it could not be told",
                 o->ns, o->name, o->catalog_name,
                 o->unreadable != NULL ? o->unreadable : "unknown error");
    size_t n = o->md != NULL ? icm_table_metadata_metadata_log_count(o->md)
               : o->lenient  ? o->n_log
                             : 0;
    for (size_t i = 0; rc == 0 && i < n && live_count(c) > 0; i++)
        rc = keep_named(c,
                        o->md != NULL
                            ? icm_table_metadata_metadata_log_at(o->md, i)->metadata_file
                            : o->log[i],
                        logged);
    icm__free(current);
    icm__free(logged);
    if (rc == 0 && live_count(c) == 0)
        rc = ICM_EUSER; /* nothing left to ask about */
    return rc;
}

/* Whether `cat` can tell its other tables (a SQL database, or a back end that lists). */
static bool lists_tables(const icm_catalog *cat)
{
    if (strcmp(icm_catalog_kind(cat), "sql") == 0)
        return true;
    return cat->methods->list_all_namespaces != NULL && cat->methods->list_tables != NULL;
}

static int check_other_tables(ret_ctx *c)
{
    icm_catalog *cat = c->r->catalog;
    if (cat == NULL)
        return 0; /* a table named by its directory: no catalog, no other table */
    if (!lists_tables(cat)) {
        keep_all(c, "the catalog cannot list its tables, so whether another table uses it "
                    "could not be told");
        return 0;
    }
    int rc = icm__catalog_each_other_table_of(c->r->table, check_other_table, c);
    if (rc == ICM_EUSER)
        return 0;
    if (rc != 0 && rc != ICM_ENOMEM)
        keep_all(c, "asking the catalog for its other tables failed (%s)", last_message());
    return rc == ICM_ENOMEM ? rc : 0;
}

/* ---- entry ---- */

static void warn(icm__ptrvec *warnings, const char *fmt, ...) ICM__PRINTF(2, 3);
static void warn(icm__ptrvec *warnings, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *w = icm__vsprintf(fmt, ap);
    va_end(ap);
    if (w != NULL && icm__ptrvec_push(warnings, w) != 0)
        icm__free(w);
}

static bool delete_after_commit(const icm_table_metadata *md)
{
    const char *v = icm_table_metadata_property(md, "write.metadata.delete-after-commit.enabled");
    return v != NULL && strcasecmp(v, "true") == 0;
}

void icm__retention_run(const icm__retention *r, icm__ptrvec *warnings)
{
    if (r->base == NULL || !delete_after_commit(r->committed))
        return;
    icm__error_saved *saved = icm__error_save();
    ret_ctx c = {r, NULL, 0};
    int rc = collect_dropped(&c);
    for (size_t i = 0; rc == 0 && i < c.n; i++)
        rc = check_place(&c, &c.d[i]);
    for (size_t i = 0; rc == 0 && i < c.n; i++)
        if (live(&c.d[i]))
            rc = check_content(&c, &c.d[i]);
    if (rc == 0 && live_count(&c) > 0)
        rc = check_new_metadata(&c);
    if (rc == 0 && live_count(&c) > 0)
        rc = check_other_tables(&c);
    if (rc != 0)
        keep_all(&c, "it could not be checked (%s)", rc == ICM_ENOMEM ? "out of memory"
                                                                     : last_message());
    if (rc != 0 && c.d == NULL)
        warn(warnings, "the metadata files that fell out of the metadata-log were not deleted: "
                       "out of memory");
    for (size_t i = 0; i < c.n; i++) {
        dropped *d = &c.d[i];
        if (d->kept) {
            warn(warnings, "%s fell out of the metadata-log but was not deleted: %s", d->file,
                 d->why != NULL ? d->why : "out of memory");
        } else if (!d->gone && icm_fileio_delete(r->io, d->file) != 0) {
            warn(warnings, "%s fell out of the metadata-log; deleting it failed: %s", d->file,
                 last_message());
        }
        icm__free(d->why);
        icm_free(d->real);
    }
    icm__free(c.d);
    icm__error_restore(saved);
}
