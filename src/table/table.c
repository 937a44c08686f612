/*
 * table/table.c: the icm_table handle (catalog table, table directory, or static metadata file)
 * and icm_table_commit, the single commit path of icemaint: prepare the metadata (metadata-log,
 * last-updated-ms), let the catalog write and swap, then act on exactly what is known:
 * success → adopt and apply metadata retention; proven failure → delete our file; unknown →
 * keep our file and reconcile by reloading (Java's commit status check).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/catalog_internal.h"
#include "catalog/storage_refresh.h"
#include "io/fileio_internal.h"
#include "spec/metadata_internal.h"
#include "table/commit.h"
#include "table/retention.h"
#include "util/location.h"
#include "util/util.h"

/* Java TableProperties.METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT */
#define PREVIOUS_VERSIONS_MAX_DEFAULT 100

struct icm_table {
    icm_catalog *catalog;        /* NULL for static tables */
    icm_catalog *owned_catalog;  /* the single-table filesystem catalog of open_dir */
    icm__ident ident;            /* identifier parts; "" and no levels for directory tables */
    char *identifier;
    icm_fileio *io;              /* the catalog's, or owned_io */
    icm_fileio *owned_io;        /* built from the catalog's table configuration (REST) */
    char *io_config;             /* that configuration as text, to tell when it changes */
    icm__ptrvec retired_ios;     /* earlier owned_io: callers may still hold them; freed with
                                    the table */
    char *metadata_location;
    icm_table_metadata *md;
    bool read_only;
    icm__ptrvec warnings;        /* of the last commit (metadata retention), strings */
    bool reconciled;             /* the last commit's answer was lost; reloading found it */
    char *committed;             /* the metadata file the last commit made current (NULL: none) */
};

static void free_warning(void *w)
{
    icm__free(w);
}

static void free_fileio(void *io)
{
    icm_fileio_free(io);
}

/* Forget the warnings and the reconciliation of an earlier commit. */
static void clear_warnings(icm_table *t)
{
    icm__ptrvec_dispose(&t->warnings, free_warning);
    t->reconciled = false;
    icm__free(t->committed);
    t->committed = NULL;
}

/* Record the metadata file a commit made current (a failed copy only loses the record). */
static void note_committed(icm_table *t, const char *location)
{
    icm__free(t->committed);
    t->committed = location != NULL ? icm__strdup(location) : NULL;
}

const char *icm_table_last_commit_location(const icm_table *t)
{
    return t != NULL ? t->committed : NULL;
}

bool icm_table_last_commit_reconciled(const icm_table *t)
{
    return t != NULL && t->reconciled;
}

size_t icm_table_commit_warning_count(const icm_table *t)
{
    return t != NULL ? t->warnings.len : 0;
}

const char *icm_table_commit_warning(const icm_table *t, size_t i)
{
    return t != NULL && i < t->warnings.len ? t->warnings.items[i] : NULL;
}

void icm_table_free(icm_table *t)
{
    if (t == NULL)
        return;
    icm_table_metadata_free(t->md);
    clear_warnings(t);
    icm__free(t->metadata_location);
    icm__free(t->identifier);
    icm__ident_dispose(&t->ident);
    icm_catalog_free(t->owned_catalog);
    icm_fileio_free(t->owned_io);
    icm__ptrvec_dispose(&t->retired_ios, free_fileio);
    icm__free(t->io_config);
    icm__free(t);
}

const icm_table_metadata *icm_table_get_metadata(const icm_table *t)
{
    return t->md;
}

const char *icm_table_get_metadata_location(const icm_table *t)
{
    return t->metadata_location;
}

const char *icm_table_get_identifier(const icm_table *t)
{
    return t->identifier;
}

const icm_table_ident *icm__table_ident(const icm_table *t)
{
    return t->ident.id.name != NULL && t->ident.id.name[0] != '\0' ? &t->ident.id : NULL;
}

icm_fileio *icm_table_get_fileio(const icm_table *t)
{
    return t->io;
}

icm_catalog *icm_table_get_catalog(const icm_table *t)
{
    return t->read_only ? NULL : t->catalog;
}

bool icm_table_is_read_only(const icm_table *t)
{
    return t->read_only;
}

int icm_table_check_own_metadata(const icm_table *t)
{
    if (t == NULL || t->md == NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL, "NULL table");
    const char *dir = t->owned_catalog != NULL ? t->identifier : NULL;
    return icm__table_check_own(t->io, t->md, t->metadata_location, dir, t->identifier, false);
}

/* Replace the table's state; takes `location` and `md`. */
static void table_set_state(icm_table *t, char *location, icm_table_metadata *md)
{
    icm__free(t->metadata_location);
    icm_table_metadata_free(t->md);
    t->metadata_location = location;
    t->md = md;
}

/* The table's configuration as one text ("k=v\n" each), to tell a change. */
static char *config_text(const icm_property *config, size_t n)
{
    icm__buf b = ICM__BUF_INIT;
    for (size_t i = 0; i < n; i++)
        icm__buf_printf(&b, "%s=%s\n", config[i].key, config[i].value);
    if (b.oom || b.data == NULL) {
        icm__buf_dispose(&b);
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

/* `base` overlaid by a table's configuration (icm_fileio_for_table; vended credentials renewed
 * through `refresher`, which the new FileIO owns, also on failure), through a path map in
 * front of it (the CLI's --path-map: the new FileIO gets the same rules); *out NULL when
 * `base` is neither a resolving FileIO nor a path map over one. */
static int table_fileio(icm_fileio *base, const icm_property *config, size_t n,
                        const icm__fileio_refresher *refresher, icm_fileio **out)
{
    *out = NULL;
    icm_fileio *inner = icm__fileio_pathmap_inner(base);
    size_t n_rules = icm__fileio_pathmap_n_rules(base);
    int rc = icm__fileio_for_table_refreshing(out, inner != NULL ? inner : base, config, n,
                                              refresher);
    if (rc == ICM_EINVALID && !icm__fileio_is_resolving(inner != NULL ? inner : base)) {
        icm_error_clear();
        return 0;
    }
    if (rc != 0 || inner == NULL)
        return rc;
    icm_path_map *rules = icm__calloc(n_rules ? n_rules : 1, sizeof *rules);
    if (rules == NULL) {
        icm_fileio_free(*out);
        *out = NULL;
        return ICM_ENOMEM;
    }
    for (size_t i = 0; i < n_rules; i++)
        icm__fileio_pathmap_rule(base, i, &rules[i].from, &rules[i].to);
    icm_fileio *mapped = NULL;
    rc = icm_fileio_pathmap_new(&mapped, *out, rules, n_rules); /* takes *out, also on failure */
    icm__free(rules);
    *out = rc == 0 ? mapped : NULL;
    return rc;
}

/*
 * The catalog's configuration for this table (a REST catalog's LoadTableResult `config` and
 * chosen `storage-credentials`: the vended credentials, endpoint, region...) becomes the
 * table's FileIO: the catalog's properties overlaid by it (icm_fileio_for_table), so data and
 * metadata files are read and deleted with the credentials the catalog vends for exactly this
 * table. A new configuration at a reload (credentials renewed) gives a new FileIO; the earlier
 * one stays alive until the table is freed, because a running operation may hold it
 * (icm_table_get_fileio); so that operation's credentials do not run out either, the FileIO
 * renews them itself through the catalog (catalog/storage_refresh.h, for the files under
 * `location`, the table location) when they are due. A catalog FileIO that is not a
 * resolving one (nor a path map over one) cannot be overlaid: the table then uses the
 * catalog's FileIO as it is.
 */
static int adopt_table_config(icm_table *t, const icm_property *config, size_t n,
                              const char *location)
{
    if (n == 0)
        return 0;
    char *text = config_text(config, n);
    if (text == NULL)
        return ICM_ENOMEM;
    if (t->io_config != NULL && strcmp(text, t->io_config) == 0) {
        icm__free(text);
        return 0;
    }
    icm_fileio *io = NULL;
    icm__fileio_refresher refresher;
    int rc = icm__catalog_storage_refresher(t->catalog, &t->ident.id, location, &refresher);
    if (rc == 0)
        rc = table_fileio(t->catalog->io, config, n, &refresher, &io);
    if (rc == 0 && io == NULL) { /* not a resolving FileIO: it stays as it is */
        icm__free(text);
        return 0;
    }
    if (rc == 0 && t->owned_io != NULL && icm__ptrvec_push(&t->retired_ios, t->owned_io) != 0)
        rc = ICM_ENOMEM;
    if (rc != 0) {
        icm_fileio_free(io);
        icm__free(text);
        return rc;
    }
    t->owned_io = io;
    t->io = io;
    icm__free(t->io_config);
    t->io_config = text;
    return 0;
}

/* Current location from the catalog and its parsed metadata (both new): the metadata the
 * catalog handed over with the location (a REST catalog's LoadTableResult), else the file. */
static int load_current(icm_table *t, char **out_loc, icm_table_metadata **out_md)
{
    *out_loc = NULL;
    *out_md = NULL;
    icm_catalog_table_info info;
    int rc = icm__catalog_load_info(t->catalog, &t->ident.id, &info);
    if (rc != 0)
        return rc;
    rc = adopt_table_config(t, info.config, info.n_config,
                            info.metadata != NULL ? icm_table_metadata_location(info.metadata)
                                                  : NULL);
    if (rc != 0) {
        icm_catalog_table_info_dispose(&info);
        return rc;
    }
    if (info.metadata != NULL) {
        *out_md = info.metadata;
        info.metadata = NULL;
    } else {
        /* Read again even when the pointer names the file the table holds: a file rewritten
         * in place under the same name (a writer that copies over its version file) must not
         * leave the delete phase's re-check on stale metadata (adversary round 17, F3). */
        rc = icm_table_metadata_read(out_md, t->io, info.metadata_location);
    }
    if (rc == 0) {
        *out_loc = info.metadata_location;
        info.metadata_location = NULL;
    }
    icm_catalog_table_info_dispose(&info);
    return rc;
}

static icm_table *table_new(icm_fileio *io, const char *identifier)
{
    icm_table *t = icm__calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->io = io;
    t->identifier = icm__strdup(identifier);
    if (t->identifier == NULL) {
        icm__free(t);
        return NULL;
    }
    return t;
}

int icm_table_load(icm_table **out, icm_catalog *cat, const char *identifier)
{
    *out = NULL;
    icm_table *t = table_new(cat->io, identifier);
    if (t == NULL)
        return ICM_ENOMEM;
    t->catalog = cat;
    int rc = icm__ident_parse_levels(identifier, &t->ident);
    if (rc == 0)
        rc = icm_table_refresh(t);
    if (rc != 0) {
        icm_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int icm_table_load_levels(icm_table **out, icm_catalog *cat, const char *const *ns_levels,
                          size_t n_levels, const char *name)
{
    *out = NULL;
    if (cat == NULL || name == NULL || name[0] == '\0' || n_levels == 0 || ns_levels == NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, name,
                              "a table identifier needs a name and at least one namespace level");
    for (size_t i = 0; i < n_levels; i++)
        if (ns_levels[i] == NULL || ns_levels[i][0] == '\0')
            return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, name,
                                  "namespace level %zu is empty", i);
    icm__ident ident;
    int rc = icm__ident_make_levels(&ident, ns_levels, n_levels, name);
    if (rc != 0)
        return rc;
    char *text = icm__sprintf("%s.%s", ident.ns, name);
    icm_table *t = text != NULL ? table_new(cat->io, text) : NULL;
    icm__free(text);
    if (t == NULL) {
        icm__ident_dispose(&ident);
        return ICM_ENOMEM;
    }
    t->catalog = cat;
    t->ident = ident; /* (its views point at the strings it owns, not into the struct) */
    rc = icm_table_refresh(t);
    if (rc != 0) {
        icm_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* ---- opening: one canonical spelling (issue #16, class 1) ---- */

/*
 * The name a table is opened under, once: a location a path map of `io` rewrites is already
 * the metadata's own name for it (`s3://b/t`, or the relative names some engines' test tables
 * use) and stays as it is; any other is made absolute and canonical (icm_location_canonical).
 */
static int opening_name(icm_fileio *io, const char *given, char **out)
{
    char *mapped = NULL;
    if (icm_fileio_pathmap_apply(&mapped, io, given) == 0) {
        bool by_map = strcmp(mapped, given) != 0;
        icm_free(mapped);
        if (by_map)
            return (*out = icm__strdup(given)) != NULL ? 0 : ICM_ENOMEM;
    }
    icm_error_clear(); /* not a path map */
    return icm_location_canonical(out, given);
}

/*
 * `md_spelling` when it names, through whatever links, the place `given` names but is spelled
 * differently: the metadata's own spelling then wins, so that what icemaint records (new
 * metadata files, metadata-log entries) and what the orphan sweep keeps are named as the
 * listing of the table location names them. (So icemaint never introduces a relative name:
 * one is used only where the metadata itself names its location relatively, as some engines'
 * test tables do, and where that name leads to the same folder.) *out is NULL when the
 * spellings agree, differ in place, or either cannot be resolved (then `given`, already
 * canonical, stays).
 */
static int metadata_spelling(icm_fileio *io, const char *given, const char *md_spelling,
                             char **out)
{
    *out = NULL;
    if (md_spelling == NULL || md_spelling[0] == '\0' ||
        icm__location_local_part(md_spelling) == NULL)
        return 0;
    size_t n = icm__location_trim_len(md_spelling);
    if (strlen(given) == n && strncmp(given, md_spelling, n) == 0)
        return 0; /* spelled alike already */
    if (icm__location_equal(given, md_spelling)) { /* `/t` and `file:///t`: no look needed */
        *out = icm__strndup(md_spelling, n);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    char *real_given = NULL, *real_md = NULL;
    int rc = icm_fileio_resolve(&real_given, io, given);
    if (rc == 0)
        rc = icm_fileio_resolve(&real_md, io, md_spelling);
    if (rc == 0 && icm__location_equal(real_given, real_md))
        rc = (*out = icm__strndup(md_spelling, n)) != NULL ? 0 : ICM_ENOMEM;
    icm_free(real_given);
    icm_free(real_md);
    if (rc == ICM_ENOMEM)
        return rc;
    icm_error_clear(); /* unresolvable: keep the canonical spelling given */
    return 0;
}

/* The metadata file's name under the metadata's own spelling of its folder
 * (`<location>/metadata/<name>`), when that is the same folder (see metadata_spelling). */
static int static_respell(icm_table *t)
{
    const char *loc = icm_table_metadata_location(t->md);
    const char *slash = strrchr(t->identifier, '/');
    if (loc == NULL || slash == NULL)
        return 0;
    char *dir = icm__strndup(t->identifier, (size_t)(slash - t->identifier));
    char *md_dir = icm__location_join(loc, "metadata");
    char *same = NULL;
    int rc = dir != NULL && md_dir != NULL ? metadata_spelling(t->io, dir, md_dir, &same)
                                           : ICM_ENOMEM;
    char *name = same != NULL ? icm__location_join(same, slash + 1) : NULL;
    if (same != NULL && name == NULL)
        rc = ICM_ENOMEM;
    if (name != NULL) {
        icm__free(t->identifier);
        t->identifier = name;
        rc = icm_table_refresh(t);
    }
    icm__free(same);
    icm__free(md_dir);
    icm__free(dir);
    return rc;
}

int icm_table_open_static(icm_table **out, icm_fileio *io, const char *metadata_location)
{
    *out = NULL;
    if (metadata_location == NULL || metadata_location[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL, "empty metadata file");
    char *canon = NULL;
    int rc = opening_name(io, metadata_location, &canon);
    if (rc != 0)
        return rc;
    icm_table *t = table_new(io, canon);
    icm__free(canon);
    if (t == NULL)
        return ICM_ENOMEM;
    t->read_only = true;
    rc = icm_table_refresh(t);
    if (rc == 0)
        rc = static_respell(t);
    if (rc != 0) {
        icm_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Open (or reopen) the single-table filesystem catalog on `dir` and read the table. */
static int dir_open_catalog(icm_table *t, const char *dir)
{
    icm_catalog_free(t->owned_catalog);
    t->owned_catalog = t->catalog = NULL;
    int rc = icm__hadoop_open_table_dir(&t->owned_catalog, t->io, dir);
    if (rc == 0) {
        t->catalog = t->owned_catalog;
        rc = icm_table_refresh(t);
    }
    return rc;
}

/* A table directory named apart from the metadata's `location` but the same folder is
 * reopened under `location`, so commits write and record the metadata's spelling. */
static int dir_respell(icm_table *t)
{
    char *same = NULL;
    int rc = metadata_spelling(t->io, t->identifier, icm_table_metadata_location(t->md), &same);
    if (rc != 0 || same == NULL)
        return rc;
    icm__free(t->identifier);
    t->identifier = same;
    return dir_open_catalog(t, same);
}

int icm_table_open_dir(icm_table **out, icm_fileio *io, const char *table_dir)
{
    *out = NULL;
    char *canon = NULL;
    if (table_dir == NULL || table_dir[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL, "empty table directory");
    int rc = opening_name(io, table_dir, &canon);
    if (rc != 0)
        return rc;
    icm_table *t = table_new(io, canon);
    icm__free(canon);
    if (t == NULL)
        return ICM_ENOMEM;
    rc = icm__ident_make(&t->ident, "", "");
    if (rc == 0)
        rc = dir_open_catalog(t, t->identifier);
    if (rc == 0)
        rc = dir_respell(t);
    if (rc != 0) {
        icm_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int icm_table_refresh(icm_table *t)
{
    char *loc = NULL;
    icm_table_metadata *md = NULL;
    int rc;
    if (t->read_only) {
        loc = icm__strdup(t->identifier);
        if (loc == NULL)
            return ICM_ENOMEM;
        rc = icm_table_metadata_read(&md, t->io, loc);
        if (rc != 0)
            icm__free(loc);
    } else {
        rc = load_current(t, &loc, &md);
    }
    if (rc == 0)
        table_set_state(t, loc, md);
    return rc;
}

/* ---- commit ---- */

static size_t previous_versions_max(const icm_table_metadata *md)
{
    const char *v = icm_table_metadata_property(md, "write.metadata.previous-versions-max");
    if (v == NULL)
        return PREVIOUS_VERSIONS_MAX_DEFAULT;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0')
        return PREVIOUS_VERSIONS_MAX_DEFAULT;
    return n < 1 ? 1 : (size_t)n; /* Java keeps at least one previous file */
}

/* The copy that is written: base appended to metadata-log (Java records the base's
 * last-updated-ms with it), log trimmed to previous-versions-max, last-updated-ms = now. */
static int prepare_metadata(const icm_table *t, const icm_table_metadata *new_md,
                            icm_table_metadata **out)
{
    icm_table_metadata *md = NULL;
    int rc = icm_table_metadata_copy(&md, new_md);
    if (rc == 0)
        rc = icm_table_metadata_append_metadata_log(
            md, icm_table_metadata_last_updated_ms(t->md), t->metadata_location);
    if (rc == 0)
        rc = icm_table_metadata_trim_metadata_log(md, previous_versions_max(md));
    if (rc == 0) {
        /* Never move last-updated-ms backwards, even with a skewed clock. */
        int64_t now = icm__now_ms();
        int64_t base = icm_table_metadata_last_updated_ms(t->md);
        rc = icm_table_metadata_set_last_updated_ms(md, now > base ? now : base);
    }
    if (rc != 0) {
        icm_table_metadata_free(md);
        return rc;
    }
    *out = md;
    return 0;
}

/* Delete a file we wrote without disturbing the error that explains why. */
static void delete_keeping_error(icm_fileio *io, const char *location)
{
    icm__error_saved *saved = icm__error_save();
    (void)icm_fileio_delete(io, location);
    icm__error_restore(saved);
}

/* Make `prepared` (written at `file`) the table's state. The metadata is re-parsed from its
 * serialised form so that icm_table_metadata_file() names the new file. */
static void adopt_committed(icm_table *t, char *file, icm_table_metadata *prepared)
{
    char *json = NULL;
    size_t len = 0;
    icm_table_metadata *md = NULL;
    if (icm_table_metadata_to_json(&json, &len, prepared) == 0 &&
        icm_table_metadata_parse(&md, json, len, file) == 0) {
        icm_table_metadata_free(prepared);
        prepared = md;
    }
    icm_free(json);
    table_set_state(t, file, prepared);
}

static bool log_contains(const icm_table_metadata *md, const char *file)
{
    size_t n = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; i < n; i++)
        if (strcmp(icm_table_metadata_metadata_log_at(md, i)->metadata_file, file) == 0)
            return true;
    return false;
}

/* Java's deleteRemovedMetadataFiles, under retention.c's rule (only this table's own old
 * metadata files go; the others are kept with a warning). Called only once the commit is known
 * to have landed: `t` holds the committed metadata, `base` the one it replaced. */
static void delete_removed_metadata_files(icm_table *t, const icm_table_metadata *base)
{
    icm__retention r = {t->io, t->owned_catalog != NULL ? NULL : t->catalog, t,
                        base, t->md, t->metadata_location};
    icm__retention_run(&r, &t->warnings);
}

typedef enum reconcile_result {
    RECONCILED_OURS,     /* our file is current or in the current lineage */
    RECONCILED_NOT_OURS, /* another file followed our base: ours can never apply */
    RECONCILE_OPEN       /* nothing proven either way */
} reconcile_result;

/*
 * Java's commit status check, made stricter where it would guess. Reload the pointer:
 *  - it names our file, or our file is in its metadata-log → ours applied;
 *  - its lineage (metadata-log + current) holds our base followed by a different file → the one
 *    swap from our base went to someone else, so ours can never apply;
 *  - anything else (pointer still at base, base trimmed out of the log, reload failed) → open.
 * On RECONCILED_OURS the table state is updated (to our file, or the newer current one).
 */
static reconcile_result reconcile(icm_table *t, const char *base_loc, char *ours,
                                  icm_table_metadata **prepared)
{
    char *loc = NULL;
    icm_table_metadata *md = NULL;
    if (icm__catalog_load_location(t->catalog, &t->ident.id, &loc) != 0)
        return RECONCILE_OPEN;
    if (strcmp(loc, ours) == 0) {
        icm__free(loc);
        return RECONCILED_OURS;
    }
    if (icm_table_metadata_read(&md, t->io, loc) != 0) {
        icm__free(loc);
        return RECONCILE_OPEN;
    }
    reconcile_result res = RECONCILE_OPEN;
    size_t n = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; i < n && res == RECONCILE_OPEN; i++) {
        const char *file = icm_table_metadata_metadata_log_at(md, i)->metadata_file;
        if (strcmp(file, ours) == 0) {
            res = RECONCILED_OURS;
        } else if (strcmp(file, base_loc) == 0) {
            const char *next =
                i + 1 < n ? icm_table_metadata_metadata_log_at(md, i + 1)->metadata_file : loc;
            if (strcmp(next, ours) != 0 && !log_contains(md, ours))
                res = RECONCILED_NOT_OURS;
        }
    }
    if (res == RECONCILED_OURS) {
        /* Someone committed on top of ours: the table moves to that newer state. */
        icm_table_metadata_free(*prepared);
        *prepared = NULL;
        table_set_state(t, loc, md);
        return res;
    }
    icm__free(loc);
    icm_table_metadata_free(md);
    return res;
}

/* Copy of the current last-error message (the back end's reason), for composed messages. */
static char *error_message_copy(void)
{
    return icm__strdup(icm_error_last()->message);
}

static int finish_unknown(icm_table *t, char *ours, icm_table_metadata *prepared,
                          icm_table_metadata *base_md)
{
    char *reason = error_message_copy();
    char *base_loc = icm__strdup(t->metadata_location);
    if (base_loc == NULL) {
        icm__free(reason);
        icm__free(ours);
        icm_table_metadata_free(prepared);
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, t->identifier,
                              "commit outcome unknown (out of memory while reconciling)");
    }
    reconcile_result res = reconcile(t, base_loc, ours, &prepared);
    int rc;
    if (res == RECONCILED_OURS) {
        if (prepared != NULL) {
            adopt_committed(t, ours, prepared);
            ours = NULL;
            prepared = NULL;
            delete_removed_metadata_files(t, base_md);
        }
        t->reconciled = true;
        note_committed(t, t->metadata_location);
        char *w = icm__sprintf("the commit's answer was lost (%s); reloading the table shows "
                               "it applied (%s)",
                               reason != NULL ? reason : "outcome unknown",
                               t->metadata_location);
        if (w == NULL || icm__ptrvec_push(&t->warnings, w) != 0)
            icm__free(w); /* the warning is lost, never the outcome */
        icm_error_clear();
        rc = 0;
    } else if (res == RECONCILED_NOT_OURS) {
        (void)icm_fileio_delete(t->io, ours);
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, t->identifier,
                            "commit failed: another commit replaced base %s (after: %s); "
                            "our metadata file %s was deleted",
                            base_loc, reason != NULL ? reason : "", ours);
    } else {
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, t->identifier,
                            "commit outcome unknown: %s; reloading the table did not settle it; "
                            "metadata file %s was kept (do not delete files of this commit)",
                            reason != NULL ? reason : "", ours);
    }
    icm__free(reason);
    icm__free(base_loc);
    icm__free(ours);
    icm_table_metadata_free(prepared);
    return rc;
}

/* Whether two metadata objects serialise to the same document. */
static int same_document(const icm_table_metadata *a, const icm_table_metadata *b, bool *out)
{
    char *ja = NULL, *jb = NULL;
    size_t la = 0, lb = 0;
    *out = false;
    int rc = icm_table_metadata_to_json(&ja, &la, a);
    if (rc == 0)
        rc = icm_table_metadata_to_json(&jb, &lb, b);
    if (rc == 0)
        *out = la == lb && memcmp(ja, jb, la) == 0;
    icm_free(ja);
    icm_free(jb);
    return rc;
}

/* Metadata never records a relative location (issue #16, class 1): the base file goes into
 * metadata-log, so it must be absolute (local) or a URI, unless the metadata itself names the
 * table location relatively and the file below it (that table's own convention). Tables are
 * opened canonical, so this only refuses a catalog that hands out a relative pointer.
 * (Transactions refuse to write new files below a relative location themselves, on the same
 * terms.) */
static int check_recorded_locations(const icm_table *t)
{
    if (icm__location_recordable(t->metadata_location, icm_table_metadata_location(t->md)))
        return 0;
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, t->metadata_location,
                          "commit refused: this location is relative, and metadata never "
                          "records a relative location (it would name another file from "
                          "another working directory); open the table by an absolute path");
}

int icm_table_commit(icm_table *t, const icm_table_metadata *new_md)
{
    if (t->read_only)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EREADONLY, t->identifier,
                              "commit refused: the table was opened from a metadata file "
                              "(static, read-only); open it through a catalog or its table "
                              "directory to change it");
    clear_warnings(t);
    /* A copy's metadata names the original's location: a commit would record (and retention
     * delete) the original's files. */
    int rc = icm_table_check_own_metadata(t);
    if (rc != 0)
        return rc;
    bool same = false;
    rc = same_document(t->md, new_md, &same);
    if (rc != 0 || same)
        return rc; /* Java: committing unchanged metadata is a no-op (no new file) */
    if ((rc = check_recorded_locations(t)) != 0)
        return rc;
    icm_table_metadata *prepared = NULL;
    char *ours = NULL;
    rc = prepare_metadata(t, new_md, &prepared);
    if (rc != 0)
        return rc;
    if (t->catalog->methods->commit == NULL) {
        icm_table_metadata_free(prepared);
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, t->identifier,
                              "commit refused: catalog '%s' takes commits only as "
                              "requirements and updates (icm_table_commit_changes)",
                              t->catalog->name);
    }
    rc = t->catalog->methods->commit(t->catalog, &t->ident.id, t->metadata_location, prepared,
                                     &ours);
    if (rc == 0) {
        /* Keep the base's log for retention: adopting replaces t->md. */
        icm_table_metadata *base_md = t->md;
        t->md = NULL;
        adopt_committed(t, ours, prepared);
        note_committed(t, t->metadata_location);
        delete_removed_metadata_files(t, base_md);
        icm_table_metadata_free(base_md);
        icm_error_clear();
        return 0;
    }
    if (rc == ICM_ECOMMIT_UNKNOWN && ours != NULL) {
        icm_table_metadata *base_md = NULL;
        if (icm_table_metadata_copy(&base_md, t->md) != 0)
            base_md = NULL;
        /* Without the copy (out of memory) retention deletes are skipped, never guessed. */
        rc = finish_unknown(t, ours, prepared, base_md);
        icm_table_metadata_free(base_md);
        return rc;
    }
    /* Proven failure, or an error before anything was swapped: our file can go. */
    if (ours != NULL)
        delete_keeping_error(t->io, ours);
    icm__free(ours);
    icm_table_metadata_free(prepared);
    return rc;
}

/* Reloads after a lost answer, and the waits before them: the catalog that just failed may
 * need a moment, and a request still on its way may land meanwhile. */
static const int64_t reconcile_wait_ms[] = {0, 250, 1000};

/*
 * Look for the changes in the table as the catalog has it now: reload at the waits of
 * reconcile_wait_ms until a reload shows their effect (icm_table_changes_seen) in a successor
 * of the base (the same uuid, the base current or in its metadata-log: a stale answer from a
 * lagging replica, or another table under the name, may show the effect without the change,
 * adversary round 18, F4; the change's own snapshot counts in any reload of the table).
 * Shown: `t` moves to that reload, marked reconciled, with a warning "<why>: reloading the
 * table shows ..."; returns true. *loaded counts the reloads that succeeded and follow the
 * base (those alone can tell the change is not there).
 */
static bool find_change(icm_table *t, const icm_table_changes *changes, const char *why,
                        int *loaded)
{
    const char *uuid = icm_table_metadata_uuid(t->md);
    const char *base = t->metadata_location; /* both stay t's until a reload is taken */
    *loaded = 0;
    for (size_t i = 0; i < ICM__ARRAY_LEN(reconcile_wait_ms); i++) {
        icm__sleep_ms(reconcile_wait_ms[i]);
        char *now = NULL;
        icm_table_metadata *md = NULL;
        if (load_current(t, &now, &md) != 0)
            continue;
        icm_changes_seen seen = ICM_CHANGES_NOT_SEEN;
        bool same = icm__same_table_uuid(uuid, icm_table_metadata_uuid(md));
        bool follows = icm_table_metadata_follows(md, now, base);
        if (same && icm_table_changes_seen(&seen, changes, md) != 0)
            seen = ICM_CHANGES_NOT_SEEN;
        /* Our own snapshot proves the commit in any reload of the table, also one whose
         * metadata-log no longer reaches the base (trimmed: adversary round 19, G1); effects
         * count only in a successor of the base. Only a successor tells that it is not there:
         * *loaded counts those. */
        if (follows && same)
            (*loaded)++;
        if (seen == ICM_CHANGES_SEEN_OURS || (seen == ICM_CHANGES_SEEN && follows)) {
            char *w = icm__sprintf("%s; reloading the table shows %s (%s)", why,
                                   seen == ICM_CHANGES_SEEN_OURS ? "it applied"
                                                                 : "the change in place",
                                   now);
            if (w == NULL || icm__ptrvec_push(&t->warnings, w) != 0)
                icm__free(w); /* the warning is lost, never the outcome */
            table_set_state(t, now, md);
            t->reconciled = true;
            note_committed(t, t->metadata_location);
            icm_error_clear();
            return true;
        }
        icm__free(now);
        icm_table_metadata_free(md);
    }
    return false;
}

/*
 * A catalog's commit answered ICM_ECOMMIT_UNKNOWN: look for the change (find_change). Shown →
 * 0 (icm_table_last_commit_reconciled(): expiry then deletes nothing, the evidence may be
 * another writer's). Not shown → ICM_ECOMMIT_UNKNOWN still: a request still on its way may
 * apply it later, so nothing of the commit is ever taken for rejected here.
 */
static int reconcile_changes(icm_table *t, const icm_table_changes *changes)
{
    char *reason = error_message_copy();
    char *why = icm__sprintf("the commit's answer was lost (%s)",
                             reason != NULL ? reason : "outcome unknown");
    int loaded = 0;
    int rc = 0;
    if (!find_change(t, changes, why != NULL ? why : "the commit's answer was lost", &loaded))
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, t->identifier,
                            "commit outcome unknown: %s; %s (a request still on its way may "
                            "apply it later; nothing of this commit was deleted)",
                            reason != NULL ? reason : "",
                            loaded == 0 ? "reloading the table failed too (or gave metadata "
                                          "that does not follow the commit's base)"
                                        : "reloading the table does not show the change");
    icm__free(why);
    icm__free(reason);
    return rc;
}

/*
 * The catalog refused the commit (400, 401/403/419, 404 to the first copy: Java's cleanable
 * failures), so a transaction would delete its own files. A gateway in front of the catalog
 * may have passed the request on before refusing it (adversary round 18, F3): look for the
 * change first. Shown → 0, reconciled. Not one reload succeeded → ICM_ECOMMIT_UNKNOWN (whether
 * it applied cannot be told; nothing is deleted). Reloads that do not show it → the refusal.
 */
static int verify_refusal(icm_table *t, const icm_table_changes *changes, int refused)
{
    icm__error_saved *saved = icm__error_save();
    char *reason = icm__strdup(icm_error_last()->message);
    char *why = icm__sprintf("the catalog refused the commit (%s)",
                             reason != NULL ? reason : "refused");
    int loaded = 0;
    int rc = refused;
    if (find_change(t, changes, why != NULL ? why : "the catalog refused the commit", &loaded)) {
        rc = 0;
    } else if (loaded == 0) {
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, t->identifier,
                            "commit outcome unknown: the catalog refused it (%s), but reloading "
                            "the table failed (or gave metadata that does not follow the "
                            "commit's base), so whether a gateway passed it on cannot be told "
                            "(nothing of this commit was deleted)",
                            reason != NULL ? reason : "");
    } else {
        icm__error_restore(saved);
        saved = NULL;
    }
    icm__free(saved);
    icm__free(why);
    icm__free(reason);
    return rc;
}

bool icm__table_conflict_applied(icm_table *t, const icm_table_changes *changes)
{
    icm_changes_seen seen = ICM_CHANGES_NOT_SEEN;
    if (icm_table_changes_seen(&seen, changes, t->md) != 0 || seen != ICM_CHANGES_SEEN_OURS)
        return false;
    const char *why = icm_error_last()->message;
    char *w = icm__sprintf("the catalog answered the commit with a conflict (%s), but the table "
                           "reloaded for a retry holds the commit's own snapshot: it applied "
                           "(%s)",
                           why[0] != '\0' ? why : "commit failed", t->metadata_location);
    if (w == NULL || icm__ptrvec_push(&t->warnings, w) != 0)
        icm__free(w); /* the warning is lost, never the outcome */
    t->reconciled = true;
    note_committed(t, t->metadata_location);
    return true;
}

/* A catalog that takes requirements and updates itself (REST): it checks, applies and records
 * everything; nothing of this commit was written here, so nothing is ever deleted here. */
static int commit_through_catalog(icm_table *t, const icm_table_changes *changes)
{
    clear_warnings(t);
    int rc = icm_table_check_own_metadata(t);
    if (rc != 0)
        return rc;
    char *loc = NULL;
    rc = ICM__CATALOG_V2(t->catalog, commit_changes)(t->catalog, &t->ident.id,
                                                      t->metadata_location, changes, &loc);
    if (rc == ICM_ECOMMIT_UNKNOWN) {
        icm__free(loc);
        return reconcile_changes(t, changes);
    }
    if (rc == ICM_EAUTH || rc == ICM_EINVALID || rc == ICM_ENOTFOUND) {
        icm__free(loc);
        return verify_refusal(t, changes, rc);
    }
    if (rc != 0) {
        icm__free(loc);
        return rc;
    }
    /* Committed: `loc` is the metadata file the catalog made current. The table moves to what
     * the catalog has now when that follows it (the same table, `loc` current or in its
     * metadata-log); a stale answer or another table under the name is never taken for the
     * committed state (adversary round 18, F2). A failed or unfitting reload must not turn a
     * commit that landed into an error (a caller would clean up after it): the handle then
     * keeps its state, and callers that delete after a commit check what they reload against
     * icm_table_last_commit_location(). */
    note_committed(t, loc);
    char *now = NULL;
    icm_table_metadata *md = NULL;
    const char *uuid = icm_table_metadata_uuid(t->md);
    if (load_current(t, &now, &md) == 0 &&
        icm__same_table_uuid(uuid, icm_table_metadata_uuid(md)) &&
        icm_table_metadata_follows(md, now, loc)) {
        table_set_state(t, now, md);
    } else {
        icm__free(now);
        icm_table_metadata_free(md);
    }
    icm__free(loc);
    icm_error_clear();
    return 0;
}

int icm_table_commit_changes(icm_table *t, const icm_table_changes *changes)
{
    if (t == NULL || changes == NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL, "NULL argument");
    if (t->read_only)
        return icm_table_commit(t, t->md); /* the read-only refusal, worded once */
    if (ICM__CATALOG_V2(t->catalog, commit_changes) != NULL)
        return commit_through_catalog(t, changes);
    /* The one pointer-swap commit (SQL, filesystem): the requirements are checked against the
     * base the swap starts from (a failed one is a conflict, as a REST catalog answers it),
     * the updates applied to it, and the result committed with metadata-log,
     * last-updated-ms, compare-and-swap, reconciliation and retention (icm_table_commit). */
    int rc = icm_table_changes_check(changes, t->md);
    if (rc != 0) {
        char *why = icm__strdup(icm_error_last()->message);
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, t->identifier,
                            "commit failed: %s", why != NULL ? why : "a requirement failed");
        icm__free(why);
        return rc;
    }
    icm_table_metadata *new_md = NULL;
    rc = icm_table_changes_apply(&new_md, changes, t->md);
    if (rc == 0)
        rc = icm_table_commit(t, new_md);
    icm_table_metadata_free(new_md);
    return rc;
}
