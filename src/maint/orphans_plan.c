/*
 * maint/orphans_plan.c: everything the orphan sweep does before deleting (orphans.h): the safety
 * checks, the keep set R, streaming the listing (or a file list) past R, and the re-check after
 * a concurrent commit.
 *
 * Read-only by construction: the storage calls here are the table refresh, manifest reads (the
 * keep-set walk), the listing and reading metadata files to tell other tables apart. Nothing in
 * this file references a FileIO call that creates, writes or deletes, so a dry run (which stops
 * after this file) cannot delete anything; tests/unit/test_orphans_dryrun.c checks that with nm.
 *
 * Memory: R is hashes (keepset.h); each listed file is classified in the listing callback and
 * forgotten unless it is an orphan (the output) or an unreferenced `*.metadata.json` (its
 * table-uuid is checked after the listing, when no listing is in progress).
 *
 * Speed: the listing asks for names only (ICM_LIST_STAT_OPTIONAL), since most files are
 * referenced and decided by name; a file that would be a candidate is stat'ed in the callback
 * when the listing did not give its size and mtime. The listing runs ahead on a second thread
 * (io/list_ahead.h) while this one classifies what it has listed: the same files in the same
 * order, with a bounded number of names in flight.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

#include <jansson.h>

#include "icemaint/catalog.h"
#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/metadata.h"
#include "catalog/catalog_internal.h"
#include "io/list_ahead.h"
#include "maint/catalog_store.h"
#include "maint/orphans_internal.h"
#include "maint/places.h"
#include "maint/other_format.h"
#include "maint/site_checks.h"
#include "spec/metadata_internal.h"
#include "util/location.h"

#define MAX_CONFLICT_PAIRS 8
#define DEFAULT_MAX_SNAPSHOT_AGE_MS INT64_C(432000000)

struct icm__orphan_plan {
    icm_table *t;
    icm_fileio *io;
    const icm_orphan_options *o;
    icm_orphan_result *r;
    icm__orphan_keys keys;
    int64_t cutoff;
    char *roots[3];             /* table location, write.data.path, write.metadata.path */
    size_t n_roots;
    char *md_dirs[3];           /* <location>/metadata, write.metadata.path, current file's dir */
    size_t n_md_dirs;
    char *uuid;                 /* this table's table-uuid (NULL in old v1 tables) */
    char *list_root;            /* where candidates come from */
    char *list_root_path;       /* its collapsed path (icm__okeys_path_of) */
    char *real_list_root;       /* where list_root really is (icm_fileio_resolve); NULL: unknown
                                   or missing */
    bool real_list_root_done;   /* real_list_root (and root_displaced) was looked for */
    bool root_displaced[3];     /* roots[i], named apart from list_root, really lies in or
                                   around it (a link): its references are resolved one by one */
    size_t list_root_len;       /* icm__location_trim_len(list_root) */
    bool root_shortcut;         /* below_root() may take its shortcut */
    bool root_local;            /* list_root is a local form */
    bool root_hidden;           /* list_root itself is hidden below the table location */
    char **hidden_fields;       /* partition field names starting with '_' or '.' */
    size_t n_hidden_fields;
    size_t referenced_under_root; /* files of R below list_root */
    size_t file_list_outside;   /* file-list lines naming a file outside list_root */
    /* (The presence check keeps its state in R's marks: see check_presence.) */
    icm__pathset *metadata_docs;  /* R's keys (icm__okeys_last_key) of the metadata documents
                                     and version hints */
    size_t orphan_cap;
    icm__ptrvec unreferenced_md;  /* `*.metadata.json` files R does not name (char *) */
    icm__ptrvec unknown_files;    /* listed files not named like table files (char *): looked
                                     at for catalog stores (check_catalog_stores) */
    icm__catalog_guard guard;     /* the catalog's own files (orphans_catalog.c) */
    bool is_copy;                 /* a dry run of a copy's metadata (check_own_metadata) */
    icm_orphan_options own_options; /* the caller's, with exclusions' listing spellings added
                                       (add_exclusion_aliases); p->o points here then */
    const char **exclusions;      /* own_options.exclude_locations (borrowed and owned) */
    size_t n_exclusions_owned;    /* the owned ones: exclusions[caller's count..] */
    char *conflict_pairs[MAX_CONFLICT_PAIRS];
    size_t n_conflict_pairs;
    /* For the re-checks after the listing and between delete batches: the metadata file R was
     * last brought up to date with, and the lists and manifests R already accounts for. */
    char *md_location;
    icm__refs_seen seen;
};
typedef struct icm__orphan_plan plan;

/* ------------------------------------------------------------------------------------------ */
/* small helpers                                                                               */

/* True when some directory component of `loc` is exactly `dir`. */
static bool has_dir_component(const char *loc, const char *dir)
{
    size_t n = strlen(dir);
    const char *name = icm__basename(loc);
    for (const char *s = loc; s < name; s++) {
        if ((s == loc || s[-1] == '/') && strncmp(s, dir, n) == 0 && s[n] == '/')
            return true;
    }
    return false;
}

/* icemaint's own table lease or a takeover marker beside it (maint.h): hidden, so never a
 * candidate, and not a table file either, so not counted among the hidden ones. */
static bool is_lease_file(const char *name)
{
    size_t n = strlen(ICM_LEASE_FILE_NAME);
    return strncmp(name, ICM_LEASE_FILE_NAME, n) == 0 &&
           (name[n] == '\0' || strncmp(name + n, ".takeover-", 10) == 0);
}

static bool is_metadata_json(const char *name)
{
    return icm__str_ends_with(name, ".metadata.json") ||
           icm__str_ends_with(name, ".metadata.json.gz");
}

icm_orphan_kind icm__orphan_guess_kind(const char *loc)
{
    const char *name = icm__basename(loc);
    bool in_metadata = has_dir_component(loc, "metadata");
    if (is_metadata_json(name) || strcmp(name, "version-hint.text") == 0 ||
        strcmp(name, "version-hint.txt") == 0)
        return ICM_ORPHAN_METADATA;
    if (strncmp(name, "snap-", 5) == 0 && icm__str_ends_with(name, ".avro"))
        return ICM_ORPHAN_MANIFEST_LIST;
    if (in_metadata)
        return icm__str_ends_with(name, ".avro") ? ICM_ORPHAN_MANIFEST : ICM_ORPHAN_OTHER;
    if (icm__str_ends_with(name, ".puffin") || strstr(name, "delete") != NULL ||
        strstr(name, "-eq-") != NULL)
        return ICM_ORPHAN_DELETE;
    if (icm__str_ends_with(name, ".parquet") || icm__str_ends_with(name, ".orc") || icm__str_ends_with(name, ".avro") ||
        icm__str_ends_with(name, ".parq") || has_dir_component(loc, "data"))
        return ICM_ORPHAN_DATA;
    return ICM_ORPHAN_OTHER;
}

void icm__orphan_result_tally(icm_orphan_result *r, bool after_delete)
{
    memset(r->counts, 0, sizeof r->counts);
    memset(r->bytes, 0, sizeof r->bytes);
    r->total = 0;
    r->total_bytes = 0;
    r->deleted = r->failed = r->already_gone = r->kept = 0;
    for (size_t i = 0; i < r->orphan_count; i++) {
        const icm_orphan_file *f = &r->orphans[i];
        r->deleted += f->state == ICM_ORPHAN_DELETED;
        r->failed += f->state == ICM_ORPHAN_FAILED;
        r->already_gone += f->state == ICM_ORPHAN_ALREADY_GONE;
        r->kept += f->state == ICM_ORPHAN_KEPT;
        if (f->state != (after_delete ? ICM_ORPHAN_DELETED : ICM_ORPHAN_PLANNED))
            continue;
        r->counts[f->kind]++;
        r->bytes[f->kind] += f->size_bytes > 0 ? f->size_bytes : 0;
        r->total++;
        r->total_bytes += f->size_bytes > 0 ? f->size_bytes : 0;
    }
}

int icm__orphan_warn(icm_orphan_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = icm__vsprintf(fmt, ap);
    va_end(ap);
    char **grown = line != NULL ? icm__reallocarray(r->warnings, r->warning_count + 1,
                                                    sizeof *grown)
                                : NULL;
    if (grown == NULL) {
        icm__free(line);
        return ICM_ENOMEM;
    }
    r->warnings = grown;
    r->warnings[r->warning_count++] = line;
    return 0;
}

int icm__orphan_refuse(const char *location, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = icm__error_vset(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location, fmt, ap);
    va_end(ap);
    return rc;
}

bool icm__orphan_excluded(const icm_orphan_options *o, const char *loc)
{
    for (size_t i = 0; i < o->exclude_location_count; i++)
        if (icm__location_strip_prefix(loc, o->exclude_locations[i], NULL))
            return true;
    return false;
}

/* ------------------------------------------------------------------------------------------ */
/* checks on the metadata and options                                                          */

static int check_gc(const icm_table_metadata *md, const char *where)
{
    const char *gc = NULL;
    if (icm__gc_enabled(md, &gc))
        return 0;
    return icm__orphan_refuse(where, "Cannot delete orphan files: GC is disabled (deleting files may "
                         "corrupt other tables); table property gc.enabled='%s' (any value "
                         "but 'true' disables it, as in Java; set it to true only when no "
                         "other table shares these files)",
                  gc);
}

/*
 * The own-metadata check (icm_table_check_own_metadata): the metadata of a copied table folder
 * names the original's location, which the sweep would list with the copy's keep set. A real
 * sweep is refused; a dry run (it deletes nothing) gets a warning, since what it plans is the
 * original's files.
 */
static int check_own_metadata(plan *p)
{
    int rc = icm_table_check_own_metadata(p->t);
    if (rc != ICM_EREFUSED || !p->o->dry_run)
        return rc;
    p->is_copy = true;
    char *why = icm__strdup(icm_error_last()->message);
    icm_error_clear();
    rc = why != NULL ? icm__orphan_warn(p->r, "a real run would be refused: %s", why)
                     : ICM_ENOMEM;
    icm__free(why);
    return rc;
}

/* The cutoff, the 24-hour minimum and the retention warning. */
static int set_cutoff(plan *p, const icm_table_metadata *md, int64_t now)
{
    const icm_orphan_options *o = p->o;
    p->cutoff = o->has_older_than ? o->older_than_ms : now - ICM_ORPHAN_DEFAULT_OLDER_THAN_MS;
    p->r->older_than_ms = p->cutoff;
    int64_t window; /* now - cutoff; an absurd cutoff far in the past saturates */
    if (__builtin_sub_overflow(now, p->cutoff, &window))
        window = p->cutoff < 0 ? INT64_MAX : INT64_MIN;
    if (window < 0 && !o->force)
        return icm__orphan_refuse(NULL,
                      "cutoff is %.1f h in the future (after now): every file would count as "
                      "old enough, even one a commit in progress is writing; choose a cutoff at "
                      "least 24 h ago, or use --force (options.force) to accept",
                      -(double)window / 3600000.0);
    if (window < ICM_ORPHAN_MIN_AGE_MS && !o->force)
        return icm__orphan_refuse(NULL,
                      "cutoff is only %.1f h before now (minimum 24 h): files that young may "
                      "belong to a commit in progress; use --force (options.force) to accept",
                      (double)window / 3600000.0);
    if (window < 0)
        return icm__orphan_warn(p->r, "the cutoff is in the future (after now): every "
                                      "unreferenced file is a candidate, even one a commit in "
                                      "progress is writing (accepted with force)");
    const char *age = icm_table_metadata_property(md, "history.expire.max-snapshot-age-ms");
    int64_t max_age = DEFAULT_MAX_SNAPSHOT_AGE_MS;
    if (age != NULL) {
        char *end = NULL;
        long long v = strtoll(age, &end, 10);
        if (end != age && *end == '\0')
            max_age = (int64_t)v;
    }
    if (max_age <= window)
        return icm__orphan_warn(p->r,
                                "snapshot retention (history.expire.max-snapshot-age-ms = %lld "
                                "ms) is not longer than the file-retention window (%lld ms): "
                                "files of snapshots that expire sooner are swept by age alone",
                                (long long)max_age, (long long)window);
    return 0;
}

/* Copy the table's roots and metadata folders (the metadata object is replaced by refresh). */
static int set_roots(plan *p, const icm_table_metadata *md, const char *md_location)
{
    const char *roots[3];
    size_t n = icm__table_roots(md, roots);
    for (size_t i = 0; i < n; i++) {
        if ((p->roots[p->n_roots] = icm__strdup(roots[i])) == NULL)
            return ICM_ENOMEM;
        p->n_roots++;
    }
    /* Metadata folders: where version hints live and where old metadata files are ours. */
    int rc = icm__table_metadata_dirs(md, md_location, p->md_dirs, &p->n_md_dirs);
    if (rc != 0)
        return rc;
    const char *uuid = icm_table_metadata_uuid(md);
    if (uuid != NULL && (p->uuid = icm__strdup(uuid)) == NULL)
        return ICM_ENOMEM;
    return 0;
}

static bool inside_roots(const plan *p, const char *loc)
{
    for (size_t i = 0; i < p->n_roots; i++)
        if (icm__location_is_inside(loc, p->roots[i]))
            return true;
    return false;
}

/* A component that is hidden: starts with '_' or '.', unless it is `<field>=...` for a
 * partition field whose own name starts with '_' or '.' (Java's HiddenPathFilter). */
static bool hidden_component(const plan *p, const char *c, size_t n)
{
    if (n == 0 || (c[0] != '_' && c[0] != '.'))
        return false;
    for (size_t i = 0; i < p->n_hidden_fields; i++) {
        size_t m = strlen(p->hidden_fields[i]);
        if (m < n && memcmp(c, p->hidden_fields[i], m) == 0 && c[m] == '=')
            return false;
    }
    return true;
}

/* Whether any component of the relative path `rest` is hidden. */
static bool hidden_path(const plan *p, const char *rest)
{
    const char *s = rest;
    while (*s != '\0') {
        size_t n = strcspn(s, "/");
        if (hidden_component(p, s, n))
            return true;
        s += n;
        while (*s == '/')
            s++;
    }
    return false;
}

/* below_root()'s shortcut is exact only where icm__location_strip_prefix accepts a name made
 * of list_root's bytes, '/' and a plain segment (not for a URI without a bucket, say): try one. */
static int set_root_shortcut(plan *p)
{
    p->list_root_len = icm__location_trim_len(p->list_root);
    p->root_local = icm__location_local_part(p->list_root) != NULL;
    char *sample = icm__sprintf("%.*s/x", (int)p->list_root_len, p->list_root);
    if (sample == NULL)
        return ICM_ENOMEM;
    const char *rest;
    p->root_shortcut = icm__location_strip_prefix(sample, p->list_root, &rest) &&
                       strcmp(rest, "x") == 0;
    icm__free(sample);
    return 0;
}

/*
 * icm__location_strip_prefix(loc, list_root, rest), which runs for every listed and every
 * reached file. Usually `loc` is spelled like list_root (a listing gives names in the form of
 * its prefix; a table's files share its location's form): then it starts with list_root's
 * bytes and a '/', and the part below is the answer when it has no dot segment (no '.' at the
 * start of a segment). Local paths skip extra slashes there, as the general rule does; URIs
 * keep them. Anything else takes the general rule.
 */
static bool below_root(const plan *p, const char *loc, const char **rest)
{
    size_t n = p->list_root_len;
    if (p->root_shortcut && strncmp(loc, p->list_root, n) == 0 && loc[n] == '/') {
        const char *r = loc + n + 1;
        while (p->root_local && *r == '/')
            r++;
        if (r[0] != '.' && strstr(r, "/.") == NULL) {
            *rest = r;
            return true;
        }
    }
    return icm__location_strip_prefix(loc, p->list_root, rest);
}

/*
 * A symbolic link on the way can lead a listing location whose name is inside the table
 * somewhere else: out of it (`<table>/data/link -> /elsewhere`), or onto another of its own
 * folders (`<table>/lnk -> <table>/data`, or into a write.data.path elsewhere), where the
 * listing would name the table's live files by a path its metadata never uses, and take every
 * one for an orphan. The listing follows the location it is given, so where it really is must
 * be where the table root it is named under really is, plus the same path below: a link at
 * or above the root (the table folder reached through a link) is fine, one below it is not.
 */
static int check_resolved_root(plan *p, const char *want)
{
    char *real = NULL;
    int rc = icm_fileio_resolve(p->io, want, &real);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear(); /* nothing there: the listing finds nothing */
        return 0;
    }
    bool ok = false;
    for (size_t i = 0; rc == 0 && i < p->n_roots && !ok; i++) {
        const char *rest;
        if (!icm__location_strip_prefix(want, p->roots[i], &rest))
            continue;
        char *root = NULL, *expected = NULL;
        rc = icm_fileio_resolve(p->io, p->roots[i], &root);
        if (rc == ICM_ENOTFOUND) {
            icm_error_clear();
            rc = 0;
            continue;
        }
        if (rc == 0 && (expected = icm__location_join(root, rest)) == NULL)
            rc = ICM_ENOMEM;
        ok = rc == 0 && icm__location_equal(real, expected);
        icm__free(expected);
        icm__free(root);
    }
    if (rc == 0 && !ok)
        rc = icm__orphan_refuse(want, "listing location resolves to %s, through a symbolic link below the "
                          "table location, write.data.path or write.metadata.path: the listing "
                          "would not name the table's files as its metadata does (name the "
                          "folder the link leads to, if that is inside the table)", real);
    icm__free(real);
    return rc;
}

static int set_list_root(plan *p, const char *table_location)
{
    const char *want = p->o->location != NULL ? p->o->location : table_location;
    bool ok = false;
    for (size_t i = 0; i < p->n_roots && !ok; i++)
        ok = icm__location_strip_prefix(want, p->roots[i], NULL);
    if (!ok)
        return icm__orphan_refuse(want, "listing location is not inside the table location, "
                            "write.data.path or write.metadata.path: files there are never "
                            "deleted (no override)");
    int rc = p->o->location != NULL ? check_resolved_root(p, want) : 0;
    if (rc != 0)
        return rc;
    if ((p->list_root = icm__strdup(want)) == NULL ||
        (p->r->location = icm__strdup(want)) == NULL ||
        (p->list_root_path = icm__okeys_path_of(want)) == NULL)
        return ICM_ENOMEM;
    const char *rest;
    if (icm__location_strip_prefix(want, table_location, &rest))
        p->root_hidden = hidden_path(p, rest);
    return set_root_shortcut(p);
}

/*
 * --exclude-location names a folder as the user spells it (a catalog's refusal names another
 * table's folder as that table spells it, perhaps through a link), while the listing names
 * files by the listing location's spelling. So an exclusion that really lies at or below where
 * the listing location really is also excludes its name in the listing's spelling: what the
 * catalog guard accepts as carved out is exactly what the listing skips. One resolve per
 * exclusion.
 */
static int look_up_real_roots(plan *p);

static int refuse_exclusion_outside(const plan *p, const char *exclusion)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, exclusion,
                          "--exclude-location lies outside the listing location %s (a "
                          "relative one is taken from the working directory), so it would "
                          "leave nothing alone; name a folder or file inside it",
                          p->list_root);
}

static int add_exclusion_aliases(plan *p)
{
    size_t n = p->o->exclude_location_count;
    int rc = n == 0 || p->real_list_root_done ? 0 : look_up_real_roots(p);
    if (rc == 0 && n > 0 && p->real_list_root == NULL) {
        /* (the listing location is not there: names are all there is to compare) */
        for (size_t i = 0; i < n && rc == 0; i++) {
            const char *e = p->o->exclude_locations[i];
            if (!icm__location_strip_prefix(e, p->list_root, NULL) &&
                !icm__location_strip_prefix(p->list_root, e, NULL))
                rc = refuse_exclusion_outside(p, e);
        }
        return rc;
    }
    if (rc != 0 || n == 0)
        return rc;
    if ((p->exclusions = icm__reallocarray(NULL, 2 * n, sizeof *p->exclusions)) == NULL)
        return ICM_ENOMEM;
    size_t k = n;
    memcpy(p->exclusions, p->o->exclude_locations, n * sizeof *p->exclusions);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *real = NULL, *alias = NULL;
        const char *rel;
        rc = icm__place_real(p->io, p->o->exclude_locations[i], &real);
        if (rc != 0 && rc != ICM_ENOMEM) {
            icm_error_clear(); /* a place that cannot be resolved: only its name excludes */
            rc = 0;
        }
        const char *e = p->o->exclude_locations[i];
        if (rc == 0 && !icm__location_strip_prefix(e, p->list_root, NULL) &&
            !icm__location_strip_prefix(p->list_root, e, NULL) &&
            !(real != NULL && (icm__location_strip_prefix(real, p->real_list_root, NULL) ||
                               icm__location_strip_prefix(p->real_list_root, real, NULL))))
            rc = refuse_exclusion_outside(p, e);
        if (rc == 0 && real != NULL && icm__location_strip_prefix(real, p->real_list_root, &rel)) {
            alias = rel[0] != '\0' ? icm__location_join(p->list_root, rel)
                                   : icm__strdup(p->list_root);
            if (alias == NULL)
                rc = ICM_ENOMEM;
            else if (!icm__location_equal(alias, p->o->exclude_locations[i])) {
                p->exclusions[k++] = alias;
                alias = NULL;
            }
        }
        icm__free(alias);
        icm__free(real);
    }
    p->n_exclusions_owned = k - n;
    p->own_options = *p->o;
    p->own_options.exclude_locations = p->exclusions;
    p->own_options.exclude_location_count = k;
    p->o = &p->own_options;
    return rc;
}

/* Partition field names that start with '_' or '.', from every spec (v2 `partition-specs`,
 * v1 `partition-spec`). The typed metadata view has no spec list, so the metadata's own JSON
 * document is read (borrowed; nothing is parsed again). */
static int push_field_names(plan *p, json_t *fields)
{
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        if (name == NULL || (name[0] != '_' && name[0] != '.'))
            continue;
        char **grown = icm__reallocarray(p->hidden_fields, p->n_hidden_fields + 1,
                                         sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        p->hidden_fields = grown;
        if ((grown[p->n_hidden_fields] = icm__strdup(name)) == NULL)
            return ICM_ENOMEM;
        p->n_hidden_fields++;
    }
    return 0;
}

static int set_hidden_fields(plan *p, const icm_table_metadata *md)
{
    json_t *doc = icm__table_metadata_json(md);
    size_t i;
    json_t *spec;
    int rc = 0;
    json_array_foreach(json_object_get(doc, "partition-specs"), i, spec)
    {
        if ((rc = push_field_names(p, json_object_get(spec, "fields"))) != 0)
            return rc;
    }
    return push_field_names(p, json_object_get(doc, "partition-spec"));
}

/* ------------------------------------------------------------------------------------------ */
/* the keep set R                                                                              */

static bool hidden_path(const plan *p, const char *rest);

static int add_ref(plan *p, const char *loc)
{
    bool added;
    int rc = icm__okeys_add(&p->keys, loc, &added);
    if (rc == 0 && added && icm__okeys_path_under(icm__okeys_last_path(&p->keys),
                                                  p->list_root_path))
        p->referenced_under_root++;
    return rc;
}

/* ENOTFOUND from icm_fileio_resolve means "nothing there": no error. */
static int resolve_or_null(plan *p, const char *location, char **out)
{
    int rc = icm_fileio_resolve(p->io, location, out);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    return rc;
}

/*
 * Once per sweep: where list_root really is, and which of the table's roots, named apart from
 * it, really lie in or around it through a link (write.data.path a link into the table folder
 * the sweep lists: the listing shows those files under the folder's name, the metadata under
 * the link's). A root named around the listing shares its names, so is never displaced.
 */
static int look_up_real_roots(plan *p)
{
    p->real_list_root_done = true;
    int rc = resolve_or_null(p, p->list_root, &p->real_list_root);
    for (size_t i = 0; rc == 0 && p->real_list_root != NULL && i < p->n_roots; i++) {
        if (icm__location_local_part(p->roots[i]) == NULL ||
            icm__location_strip_prefix(p->list_root, p->roots[i], NULL) ||
            icm__location_strip_prefix(p->roots[i], p->list_root, NULL))
            continue;
        char *real = NULL;
        rc = resolve_or_null(p, p->roots[i], &real);
        p->root_displaced[i] = real != NULL &&
                               (icm__location_strip_prefix(real, p->real_list_root, NULL) ||
                                icm__location_strip_prefix(p->real_list_root, real, NULL));
        icm__free(real);
    }
    return rc;
}

/* Whether `loc` is named below one of the table's roots that are not displaced: then its name
 * is the one the listing gives it, and it needs no alias. */
static bool named_like_the_listing(const plan *p, const char *loc)
{
    bool inside = false;
    for (size_t i = 0; i < p->n_roots; i++) {
        if (!icm__location_is_inside(loc, p->roots[i]))
            continue;
        if (p->root_displaced[i])
            return false;
        inside = true;
    }
    return inside;
}

/*
 * A referenced local file named outside the listing location may still be a file in it, through
 * a symbolic link (the warehouse folder is a link, and the file was added under its real path;
 * or write.data.path is a link into the table folder): the listing then shows it under the
 * listing location's name, which R does not hold, and it would be taken for an orphan. Where it
 * really is decides: if that lies below where the listing location really is, R also gets the
 * name the listing will give it. Only names outside the table's roots, or in a displaced root,
 * are resolved (one realpath each); the table's own names are the listing's.
 */
static int add_listing_alias(plan *p, const char *location)
{
    if (icm__location_local_part(location) == NULL)
        return 0; /* object stores have no links */
    int rc = p->real_list_root_done ? 0 : look_up_real_roots(p);
    if (rc != 0 || p->real_list_root == NULL || named_like_the_listing(p, location))
        return rc;
    char *real = NULL, *alias = NULL;
    const char *rel;
    rc = resolve_or_null(p, location, &real);
    if (rc == 0 && real != NULL && icm__location_strip_prefix(real, p->real_list_root, &rel) &&
        rel[0] != '\0') {
        alias = icm__location_join(p->list_root, rel);
        rc = alias != NULL ? add_ref(p, alias) : ICM_ENOMEM;
    }
    icm__free(alias);
    icm__free(real);
    return rc;
}

/* Tags of a reference added later (icm__okeys_add_later), for the counts kept when it turns
 * out new. */
#define REF_UNDER_ROOT 1u /* below list_root: counts in referenced_under_root */
#define REF_EXPECTED 2u   /* to be found by the listing: marked MARK_EXPECTED */

/* Marks of R's keys (icm__pathset_mark_hash), for the presence check (check_presence): files
 * the snapshots reach (not metadata documents, which old log entries may have lost
 * legitimately) below list_root and visible to the listing are expected; those the listing
 * showed are found. */
#define MARK_EXPECTED ICM__PATHSET_MARK_A
#define MARK_FOUND ICM__PATHSET_MARK_B

static void on_new_ref(unsigned tag, icm__pathset_hash hash, void *payload)
{
    plan *p = payload;
    if (tag & REF_UNDER_ROOT)
        p->referenced_under_root++;
    if (tag & REF_EXPECTED)
        (void)icm__pathset_mark_hash(p->keys.set, hash, MARK_EXPECTED);
}

/* add_ref, deferred a few references so the keep set's memory is fetched meanwhile: the same
 * set and the same counts once flushed (add_table_refs). */
static int add_ref_later(plan *p, const char *loc, unsigned tag)
{
    icm__pathset_hash h;
    int rc = icm__okeys_hash(&p->keys, loc, &h);
    if (rc != 0)
        return rc;
    if (icm__okeys_path_under(icm__okeys_last_path(&p->keys), p->list_root_path))
        tag |= REF_UNDER_ROOT;
    return icm__okeys_add_later(&p->keys, h, tag);
}

/* Whether the listing of list_root should show this reached file (it lies below list_root,
 * and is neither hidden nor excluded). */
static bool listing_shows(const plan *p, const char *location)
{
    const char *rest;
    return below_root(p, location, &rest) && rest[0] != '\0' && !p->root_hidden &&
           !hidden_path(p, rest) && !icm__orphan_excluded(p->o, location);
}

static int on_reached(const icm__reached *f, void *payload)
{
    plan *p = payload;
    const char *rest;
    if (f->kind == ICM__FILE_MANIFEST || f->kind == ICM__FILE_MANIFEST_LIST) {
        int rc = icm__refs_seen_note(&p->seen, f);
        if (rc != 0)
            return rc;
    }
    if (!below_root(p, f->location, &rest)) {
        int rc = add_ref_later(p, f->location, 0);
        return rc == 0 ? add_listing_alias(p, f->location) : rc;
    }
    return add_ref_later(p, f->location, listing_shows(p, f->location) ? REF_EXPECTED : 0);
}

/* Most of the keep set is the entries the manifest lists announce: room for them up front saves
 * growing the table many times over (each growth a new table and a pass over the old). The
 * counts are the lists' claims, so the room is capped (a corrupt count costs at most about
 * 90 MB of address space), and a failed reservation only means growing as before. */
#define KEEP_SET_RESERVE_CAP ((size_t)1 << 22)

static void expect_refs(size_t live_entries, void *payload)
{
    plan *p = payload;
    size_t n = live_entries < KEEP_SET_RESERVE_CAP ? live_entries : KEEP_SET_RESERVE_CAP;
    /* + room for the metadata documents and aliases added after the walk */
    if (icm__pathset_reserve(p->keys.set, icm__pathset_count(p->keys.set) + n + 4096) != 0)
        icm_error_clear();
}

/* A metadata document or version hint of R (not part of the presence check). */
/* R's key of the location last added (icm__okeys_last_key) as a metadata document's. */
static int mark_last_as_doc(plan *p)
{
    int rc = p->metadata_docs == NULL ? icm__pathset_new(&p->metadata_docs, 0) : 0;
    size_t len;
    const void *key = icm__okeys_last_key(&p->keys, &len);
    return rc == 0 ? icm__pathset_add_key(p->metadata_docs, key, len, NULL) : rc;
}

static int add_doc_ref(const char *loc, void *payload)
{
    plan *p = payload;
    int rc = add_ref(p, loc);
    if (rc == 0)
        rc = mark_last_as_doc(p);
    /* Spelled through a link (issue #16, class 1): the listing's name is kept too (when one
     * was added, it is the last key). */
    if (rc == 0)
        rc = add_listing_alias(p, loc);
    return rc == 0 ? mark_last_as_doc(p) : rc;
}

static int refuse_unreadable(const icm__reach_report *rep)
{
    const icm__reach_failure *f = &rep->failures[0];
    return icm__orphan_refuse(f->location,
                  "cannot read this %s of a retained snapshot (%s); the keep set would be "
                  "incomplete, so nothing is deleted (%zu unreadable file%s; no override)",
                  f->is_manifest_list ? "manifest list" : "manifest", f->message,
                  rep->failure_count, rep->failure_count == 1 ? "" : "s");
}

/* Everything `md` references: the walk over every snapshot (lists, manifests, live entries,
 * statistics), the metadata file and its log, and the version hints. */
static int add_table_refs(plan *p, const icm_table_metadata *md, const char *md_location)
{
    icm__reach_options ro = {.read_entries = true, .statistics = true, /* every snapshot */
                             .expect_entries = expect_refs};
    icm__reach_report rep;
    int rc = icm__reach_walk(p->io, md, &ro, on_reached, p, &rep);
    if (rc == 0)
        rc = icm__okeys_flush(&p->keys);
    if (rc == 0 && rep.failure_count > 0)
        rc = refuse_unreadable(&rep);
    icm__reach_report_dispose(&rep);
    if (rc == 0)
        rc = icm__table_metadata_docs(md, md_location, add_doc_ref, p);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* candidates                                                                                  */

/* Remember "(referenced, listed)" for the message, as Java reports the differing part. */
static int record_conflict(plan *p, size_t origin)
{
    const icm__origin *ref = &p->keys.origins[origin];
    const char *scheme = p->keys.scheme.data, *authority = p->keys.authority.data;
    bool scheme_differs = strcmp(ref->scheme, scheme) != 0;
    char *pair = icm__sprintf("(%s, %s)", scheme_differs ? ref->scheme : ref->authority,
                              scheme_differs ? scheme : authority);
    if (pair == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < p->n_conflict_pairs; i++) {
        if (strcmp(p->conflict_pairs[i], pair) == 0) {
            icm__free(pair);
            return 0;
        }
    }
    if (p->n_conflict_pairs == MAX_CONFLICT_PAIRS) {
        icm__free(pair);
        return 0;
    }
    p->conflict_pairs[p->n_conflict_pairs++] = pair;
    return 0;
}

static int push_orphan(plan *p, const icm_file_info *info)
{
    icm_orphan_result *r = p->r;
    if (r->orphan_count == p->orphan_cap) {
        size_t cap = p->orphan_cap ? p->orphan_cap * 2 : 64;
        icm_orphan_file *grown = icm__reallocarray(r->orphans, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        r->orphans = grown;
        p->orphan_cap = cap;
    }
    char *copy = icm__strdup(info->location);
    if (copy == NULL)
        return ICM_ENOMEM;
    r->orphans[r->orphan_count++] = (icm_orphan_file){
        copy, info->size_bytes, info->mtime_ms, icm__orphan_guess_kind(info->location),
        ICM_ORPHAN_PLANNED, 0, NULL};
    return 0;
}

/*
 * Size and mtime of a listed file that would be a candidate but came without them (the listing
 * asks for names only: ICM_LIST_STAT_OPTIONAL). Stat'ed now, after the listing saw it, so the
 * mtime is at least as fresh as a listing's own. *gone: deleted meanwhile (not a candidate).
 * Any other failure stops the sweep like a listing error: its age is unknown.
 */
static int stat_candidate(plan *p, const icm_file_info *listed, icm_file_info *out,
                          bool *gone)
{
    *gone = false;
    int rc = icm_fileio_stat(p->io, listed->location, out);
    /* Gone, or replaced by a directory meanwhile: no longer the file the listing saw (anything
     * in a new directory is younger than this sweep, so skipping it loses nothing). */
    if (rc == ICM_ENOTFOUND || (rc == ICM_EIO && icm_error_last()->os_errno == EISDIR)) {
        icm_error_clear();
        *gone = true;
        return 0;
    }
    return rc;
}

/* A referenced file the listing showed (the last lookup, or `probe` when ready, found it
 * EXACT): marked in R for the presence check. The slot was just read, so this costs nothing. */
static void mark_found(plan *p, const icm__okey_probe *probe)
{
    icm__pathset_hash h;
    if (probe != NULL && probe->ready) {
        h = probe->hash;
    } else {
        size_t len;
        const void *key = icm__okeys_last_key(&p->keys, &len);
        h = icm__pathset_hash_key(key, len);
    }
    (void)icm__pathset_mark_hash(p->keys.set, h, MARK_FOUND);
}

/* ---- folders another table format manages (other_format.h) ---- */

/* Before the listing: the table location, and every folder from the root the listing location
 * lies in down to it. One holding `_delta_log/` or `.hoodie/` refuses, dry runs too (the
 * listing never reads those hidden folders, and the other format's log may name files the
 * Iceberg metadata does not). Folders below the listing location show in it (take_file). */
static int check_other_formats(plan *p)
{
    const char *location = icm_table_metadata_location(icm_table_get_metadata(p->t));
    size_t i = 0;
    while (i < p->n_roots && !icm__location_strip_prefix(p->list_root, p->roots[i], NULL))
        i++;
    int rc = 0;
    if (location != NULL && (i == p->n_roots || !icm__location_equal(p->roots[i], location)))
        rc = icm__other_format_check_folder(p->io, location);
    if (rc == 0 && i < p->n_roots)
        rc = icm__other_format_check_down(p->io, p->roots[i], p->list_root);
    return rc;
}

/* A listed file (below the listing location: `rest`) inside another format's folder: that
 * folder's parent is the other format's table, refused unless it is carved out whole with
 * --exclude-location. A scan of the name; no I/O. */
static int check_listed_other_format(plan *p, const char *loc, const char *rest)
{
    size_t offset;
    icm__other_format f = icm__other_format_in_path(rest, &offset);
    if (f == ICM__OTHER_FORMAT_NONE)
        return 0;
    char *upto = icm__strndup(loc, (size_t)(rest - loc) + offset);
    char *folder = upto != NULL ? icm__strndup(upto, icm__location_trim_len(upto)) : NULL;
    int rc = folder == NULL ? ICM_ENOMEM : 0;
    if (rc == 0 && !icm__orphan_excluded(p->o, folder))
        rc = icm__other_format_refuse(f, folder,
                                      offset > 0 ? "(or carve that folder out with "
                                                   "--exclude-location)"
                                                 : NULL);
    icm__free(folder);
    icm__free(upto);
    return rc;
}

/* Remember a metadata file R does not name (or a hidden one), for check_other_tables. */
static int push_unreferenced_md(plan *p, const char *location)
{
    char *copy = icm__strdup(location);
    if (copy == NULL || icm__ptrvec_push(&p->unreferenced_md, copy) != 0) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    return 0;
}

/*
 * One listed file (or file-list line): classify, keep only orphans. Referenced, excluded and
 * hidden files are decided on the name alone. `may_stat`: the file came from the listing, so a
 * size or mtime it lacks can be asked for; a file-list line without an mtime stays unknown
 * (too recent: kept).
 */
static int take_file(plan *p, const icm_file_info *info, bool may_stat,
                     const icm__okey_probe *probe)
{
    icm_orphan_result *r = p->r;
    const char *rest;
    /* Outside the listing location (file lists), or a `.`/`..` segment: never a candidate. */
    if (!below_root(p, info->location, &rest) || rest[0] == '\0') {
        if (!may_stat)
            p->file_list_outside++;
        return 0;
    }
    if (is_lease_file(icm__basename(rest)))
        return 0;
    r->listed++;
    int rc = check_listed_other_format(p, info->location, rest);
    if (rc != 0)
        return rc;
    if (!icm__named_like_a_table_file(info->location)) {
        char *copy = icm__strdup(info->location); /* looked at by check_catalog_stores */
        if (copy == NULL || icm__ptrvec_push(&p->unknown_files, copy) != 0) {
            icm__free(copy);
            return ICM_ENOMEM;
        }
    }
    if (icm__orphan_excluded(p->o, info->location)) {
        r->excluded++;
        return 0;
    }
    if (p->root_hidden || hidden_path(p, rest)) {
        r->hidden++;
        /* Never a candidate, but a hidden metadata file (a nested table whose
         * write.metadata.path is `_metadata`) is still looked at for another table. */
        return is_metadata_json(icm__basename(info->location))
                   ? push_unreferenced_md(p, info->location)
                   : 0;
    }
    icm__okey_match m = ICM__OKEY_NONE;
    size_t origin = 0;
    bool is_doc = false;
    if (probe != NULL && probe->ready)
        m = icm__okeys_probe_match(&p->keys, probe, &origin);
    if (probe != NULL && probe->ready && m != ICM__OKEY_CONFLICT) {
        is_doc = m == ICM__OKEY_EXACT && p->metadata_docs != NULL &&
                 icm__pathset_contains_hash(p->metadata_docs, probe->hash);
    } else {
        /* No probe, or a conflict, whose message needs this file's own scheme and authority
         * in the key scratch: the one-step lookup. */
        if ((rc = icm__okeys_lookup(&p->keys, info->location, &m, &origin)) != 0)
            return rc;
        size_t len;
        const void *key = icm__okeys_last_key(&p->keys, &len);
        is_doc = m == ICM__OKEY_EXACT && p->metadata_docs != NULL &&
                 icm__pathset_contains_key(p->metadata_docs, key, len);
    }
    if (m == ICM__OKEY_EXACT) {
        r->referenced_listed++;
        if (!is_doc)
            mark_found(p, probe);
        return 0;
    }
    if (m == ICM__OKEY_CONFLICT) {
        r->conflicts++;
        if ((rc = record_conflict(p, origin)) != 0)
            return rc;
        if (p->o->prefix_mismatch != ICM_PREFIX_MISMATCH_DELETE)
            return 0;
    } else if (is_metadata_json(icm__basename(info->location))) {
        if ((rc = push_unreferenced_md(p, info->location)) != 0)
            return rc;
    }
    icm_file_info known = *info;
    if (may_stat && (info->mtime_ms < 0 || info->size_bytes < 0)) {
        bool gone;
        if ((rc = stat_candidate(p, info, &known, &gone)) != 0)
            return rc;
        if (gone)
            return 0; /* still counted as listed: the listing did give it */
    }
    if (known.mtime_ms < 0 || known.mtime_ms >= p->cutoff) {
        r->too_recent++;
        return 0;
    }
    if (!inside_roots(p, known.location))
        return 0; /* cannot happen below list_root; checked again before deleting */
    if (icm__catalog_guard_protects(&p->guard, known.location))
        return 0; /* a file the catalog lives in (issue #16, class 2) */
    return push_orphan(p, &known);
}

/* The listing's callback, a batch of names at a time: each name's key is built and hashed
 * PROBE_AHEAD names before it is classified, and its slot asked for, so the keep set's memory
 * has arrived by then (icm__okeys_probe; the answers are icm__okeys_lookup's). */
#define PROBE_AHEAD 8

static int on_listed(const icm_file_info *files, size_t n, void *payload)
{
    plan *p = payload;
    icm__okey_probe probes[PROBE_AHEAD];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n && i < PROBE_AHEAD; i++)
        rc = icm__okeys_probe(&p->keys, files[i].location, &probes[i]);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        icm__okey_probe now = probes[i % PROBE_AHEAD];
        if (i + PROBE_AHEAD < n)
            rc = icm__okeys_probe(&p->keys, files[i + PROBE_AHEAD].location,
                                  &probes[i % PROBE_AHEAD]);
        if (rc == 0)
            rc = take_file(p, &files[i], true, &now);
    }
    return rc;
}

/* Parse an optional integer field: "" or "-1" is unknown (-1). */
static bool parse_field(const char *s, size_t n, int64_t *out)
{
    if (n == 0) {
        *out = -1;
        return true;
    }
    char tmp[32];
    if (n >= sizeof tmp)
        return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end = NULL;
    long long v = strtoll(tmp, &end, 10);
    if (end == tmp || *end != '\0' || v < -1)
        return false;
    *out = (int64_t)v;
    return true;
}

/* One `path<TAB>size<TAB>mtime_ms` line (without its newline). */
static int file_list_line(plan *p, char *line, size_t len, long lineno)
{
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    if (len == 0)
        return 0;
    char *t1 = memchr(line, '\t', len);
    char *t2 = t1 != NULL ? memchr(t1 + 1, '\t', len - (size_t)(t1 + 1 - line)) : NULL;
    icm_file_info info = {line, -1, -1};
    if (t1 == NULL || t2 == NULL || t1 == line || memchr(t2 + 1, '\t', len - (size_t)(t2 + 1 - line)) ||
        !parse_field(t1 + 1, (size_t)(t2 - t1 - 1), &info.size_bytes) ||
        !parse_field(t2 + 1, len - (size_t)(t2 + 1 - line), &info.mtime_ms))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, p->o->file_list,
                              "line %ld: expected path<TAB>size<TAB>mtime_ms (integers; empty "
                              "or -1 = unknown)", lineno);
    *t1 = '\0';
    return take_file(p, &info, false, NULL);
}

/* Stream a file list through take_file, line by line (an inventory may be huge). */
static int read_file_list(plan *p)
{
    FILE *f = fopen(p->o->file_list, "r");
    if (f == NULL)
        return icm__error_set_errno(ICM_ERRCLASS_OS, icm__errno_to_code(errno), errno,
                                    p->o->file_list, "cannot open the file list");
    icm__buf line = ICM__BUF_INIT;
    char chunk[4096];
    long lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(chunk, sizeof chunk, f) != NULL) {
        size_t n = strlen(chunk);
        bool eol = n > 0 && chunk[n - 1] == '\n';
        if (icm__buf_put(&line, chunk, eol ? n - 1 : n) != 0) {
            rc = ICM_ENOMEM;
            break;
        }
        if (!eol && !feof(f))
            continue;
        lineno++;
        if (line.len > 0)
            rc = file_list_line(p, line.data, line.len, lineno);
        icm__buf_clear(&line);
    }
    if (rc == 0 && line.len > 0)
        rc = file_list_line(p, line.data, line.len, ++lineno);
    if (rc == 0 && ferror(f))
        rc = icm__error_set(ICM_ERRCLASS_OS, ICM_EIO, p->o->file_list,
                            "read error in the file list");
    /* An inventory of a whole bucket names other tables' files too: say how many were left
     * out, so a path form that never matches (every line outside) does not go unnoticed. */
    if (rc == 0 && p->file_list_outside > 0)
        rc = icm__orphan_warn(p->r,
                              "%s: %zu line%s of the file list name%s no file below it (or a "
                              "path with a `.` or `..` segment); not part of this sweep",
                              p->list_root, p->file_list_outside,
                              p->file_list_outside == 1 ? "" : "s",
                              p->file_list_outside == 1 ? "s" : "");
    icm__buf_dispose(&line);
    fclose(f);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* checks after the listing                                                                    */

static int check_conflicts(plan *p)
{
    if (p->r->conflicts == 0 || p->o->prefix_mismatch != ICM_PREFIX_MISMATCH_ERROR)
        return 0;
    icm__buf pairs = ICM__BUF_INIT;
    for (size_t i = 0; i < p->n_conflict_pairs; i++)
        icm__buf_printf(&pairs, "%s%s", i ? ", " : "", p->conflict_pairs[i]);
    if (pairs.oom) {
        icm__buf_dispose(&pairs);
        return ICM_ENOMEM;
    }
    int rc = icm__orphan_refuse(p->list_root,
                    "Unable to determine whether certain files are orphan: %zu listed file%s "
                    "match referenced files only up to scheme or authority; use "
                    "--prefix-mismatch ignore (keep them) or delete, or declare the names equal "
                    "with --equal-schemes / --equal-authorities. Conflicting "
                    "authorities/schemes: [%s].",
                    p->r->conflicts, p->r->conflicts == 1 ? "" : "s",
                    pairs.data != NULL ? pairs.data : "");
    icm__buf_dispose(&pairs);
    return rc;
}

/* The table as the shared surroundings checks see it (site_checks.h). */
static icm__site site_of(const plan *p)
{
    return (icm__site){.t = p->t, .io = p->io, .uuid = p->uuid, .md_dirs = p->md_dirs,
                       .n_md_dirs = p->n_md_dirs, .md_location = p->md_location, .run = "sweep",
                       .run_a = "a sweep", .refuse_foreign = true, .list_root = p->list_root,
                       .copy = p->is_copy};
}

/* Whether the unparseable metadata file `loc` was modified at or after the cutoff (or its
 * mtime is unknown): a crashed or running writer's file, which the sweep would never delete
 * (too recent), so it cannot be evidence of another table. *gone when it went away. */
static int written_since_cutoff(plan *p, const char *loc, bool *in_flight, bool *gone)
{
    icm_file_info info;
    int rc = icm_fileio_stat(p->io, loc, &info);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        *gone = true;
        return 0;
    }
    if (rc != 0)
        return rc;
    *in_flight = info.mtime_ms < 0 || info.mtime_ms >= p->cutoff;
    return 0;
}

/*
 * Another table's metadata under the listing location refuses the sweep; an unparseable
 * `*.metadata.json` refuses too when it is older than the cutoff (one younger is a writer's
 * file in flight and is skipped, as it would be as a candidate). The same table's unreferenced
 * metadata, and what the table's metadata folders hold wherever they are, is then looked at
 * for a commit past our pointer (icm__newer_commits_check).
 */
static int check_other_tables(plan *p)
{
    icm__site s = site_of(p);
    icm__newer_commits nc;
    icm__newer_commits_init(&nc, &s);
    icm__ptrvec log = ICM__PTRVEC_INIT;
    icm__peeked m = {0};
    int rc = 0;
    for (size_t i = 0; i < p->unreferenced_md.len && rc == 0; i++) {
        const char *loc = p->unreferenced_md.items[i];
        rc = icm__site_peek_once(&s, loc, &m, &log);
        bool in_flight = false;
        if (rc == 0 && !m.readable && !m.gone)
            rc = written_since_cutoff(p, loc, &in_flight, &m.gone);
        if (rc == 0 && in_flight)
            continue; /* a writer's fresh file: never a candidate, so it cannot block */
        if (rc == 0 && !m.readable && !m.gone)
            rc = icm__site_peek(&s, loc, &m, &log);
        if (rc != 0 || m.gone)
            continue;
        if (m.readable && icm__site_same_table(&s, loc, m.uuid)) {
            rc = icm__newer_commits_note(&nc, loc, &log);
            continue;
        }
        if (!m.readable)
            rc = icm__orphan_refuse(loc,
                        "cannot read this metadata file to tell whether another table lives "
                        "under %s, and it is older than the cutoff (not a write in progress); "
                        "nothing is deleted (remove or move it, or carve its folder out with "
                        "--exclude-location)", p->list_root);
        else
            rc = icm__orphan_refuse(loc,
                        "another table's metadata lives under %s: table-uuid %s (location %s), "
                        "this table is %s; refusing to sweep a folder shared with another table "
                        "(%s)",
                        p->list_root, m.uuid != NULL ? m.uuid : "(none)",
                        m.roots[0] != NULL ? m.roots[0] : "(none)",
                        p->uuid != NULL ? p->uuid : "(no uuid)",
                        m.roots[0] != NULL &&
                                icm__location_strip_prefix(p->list_root, m.roots[0], NULL)
                            ? "it has this table's place: a table dropped and created again "
                              "there? whether a catalog still holds the old one cannot be told; "
                              "if none does, move its metadata files out of the metadata folder"
                            : "carve that table's folder out with --exclude-location");
    }
    icm__peeked_dispose(&m);
    icm__ptrvec_dispose(&log, icm__free);
    /* The table's metadata folders are listed whatever the listing showed of them (it skips
     * hidden and excluded files, and may not reach them at all). */
    if (rc == 0)
        rc = icm__newer_commits_check(&nc);
    icm__newer_commits_dispose(&nc);
    return rc;
}

/* The folders enclosing the listing location as it is named, and as it really is when a link
 * leads elsewhere (a table location that is a link into another table's data folder). */
static int check_enclosing_tables(plan *p)
{
    int rc = p->real_list_root_done ? 0 : look_up_real_roots(p);
    icm__site s = site_of(p);
    if (rc == 0)
        rc = icm__site_check_enclosing(&s, p->list_root, p->real_list_root,
                                       "the listing location");
    return rc;
}

/* ---- catalog stores among the candidates (issue #16, class 2) ---- */

/* Nothing Iceberg writes is a SQLite file, but a catalog's store is: a table whose location
 * holds its catalog's database (a warehouse-root table) would lose every table's pointer, and
 * the tables it points to their metadata, when no configuration names that database (the
 * catalog guard knows only configured ones). So every listed file not named like a table
 * file (whatever its folder, and also when too recent, hidden or excluded) is looked at (16
 * bytes read), and so is every candidate named like one (a database can be named
 * `x.parquet`; the candidates are few, the listed table-named files may be millions). A
 * database's tables are then asked for, as the guard asks the configured ones: one whose
 * pointer or roots lie here refuses. And a database, WAL or journal that is a candidate
 * refuses the sweep, naming them. A file that is gone or unreadable is passed over (as a
 * candidate it is left to the delete phase: already gone, or failed). */
#define STORES_NAMED 10
static bool is_orphan(const plan *p, const char *loc)
{
    for (size_t i = 0; i < p->r->orphan_count; i++)
        if (strcmp(p->r->orphans[i].path, loc) == 0)
            return true;
    return false;
}

static int check_catalog_stores(plan *p)
{
    icm__buf named = ICM__BUF_INIT;
    size_t found = 0;
    int rc = 0;
    size_t n_unknown = p->unknown_files.len, n = n_unknown + p->r->orphan_count;
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* the listed files not named like table files, then the candidates named like them */
        const char *loc = i < n_unknown ? (const char *)p->unknown_files.items[i]
                                        : p->r->orphans[i - n_unknown].path;
        bool candidate = i >= n_unknown;
        if (candidate && !icm__named_like_a_table_file(loc))
            continue; /* looked at among the first */
        icm__catalog_file kind;
        rc = icm__catalog_file_kind(p->io, loc, &kind);
        if (rc != 0 || kind == ICM__CATALOG_FILE_NONE || kind == ICM__CATALOG_FILE_CONFIG)
            continue; /* (a .pyiceberg.yaml is hidden: never a candidate) */
        if (kind == ICM__CATALOG_FILE_SQLITE_DATABASE)
            rc = icm__catalog_guard_check_found_database(p->t, p->o, p->list_root, loc,
                                                         p->md_location);
        if (rc == 0 && (candidate || is_orphan(p, loc)) && found++ < STORES_NAMED)
            rc = icm__buf_printf(&named, "%s%s", found > 1 ? ", " : "", loc);
    }
    if (rc == 0 && found > 0)
        rc = icm__orphan_refuse(p->list_root,
                    "%zu file%s under it %s a SQLite database or its journal, the kind of file "
                    "a catalog keeps every table's pointer in (%s%s); the sweep never deletes "
                    "one and nothing is deleted: move %s out of the table location, or carve "
                    "%s out with --exclude-location",
                    found, found == 1 ? "" : "s", found == 1 ? "is" : "are", named.data,
                    found > STORES_NAMED ? ", ..." : "", found == 1 ? "it" : "them",
                    found == 1 ? "it" : "them");
    icm__buf_dispose(&named);
    return rc;
}

/* ---- the presence check (verification: issue #16 class 4, and the listing refusal) ---- */

/* The first missing files, for the message, and how many there are. */
#define MISSING_NAMED 10

typedef struct missing_files {
    plan *p;
    size_t count;
    char *named[MISSING_NAMED]; /* "PATH (KIND, snapshot ID)" */
    size_t n_named;
} missing_files;

/* A file of a file list's sweep that the list does not name may be newer than the inventory:
 * it is missing only when storage says so too. */
static int still_missing(plan *p, const char *location, bool *missing)
{
    *missing = true;
    if (p->o->file_list == NULL)
        return 0; /* a listing is what storage shows: no second opinion */
    icm_file_info info;
    int rc = icm_fileio_stat(p->io, location, &info);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    *missing = rc != 0; /* (any other failure: not shown to exist) */
    if (rc != 0 && rc != ICM_ENOMEM)
        icm_error_clear();
    return rc == ICM_ENOMEM ? rc : 0;
}

/* Walk callback: a reached file that the listing should have shown and did not. Each is
 * counted once (marked found once named), with the snapshot through which the walk reached
 * it first. */
static int on_reached_again(const icm__reached *f, void *payload)
{
    missing_files *m = payload;
    plan *p = m->p;
    if (!listing_shows(p, f->location))
        return 0;
    icm__pathset_hash h;
    int rc = icm__okeys_hash(&p->keys, f->location, &h);
    if (rc != 0)
        return rc;
    if ((icm__pathset_marks_hash(p->keys.set, h) & (MARK_EXPECTED | MARK_FOUND)) !=
        MARK_EXPECTED)
        return 0;
    (void)icm__pathset_mark_hash(p->keys.set, h, MARK_FOUND);
    bool missing;
    if ((rc = still_missing(p, f->location, &missing)) != 0 || !missing)
        return rc;
    m->count++;
    if (m->n_named == MISSING_NAMED)
        return 0;
    char *line = icm__sprintf("%s (%s, snapshot %lld)", f->location,
                              icm_expire_file_kind_name((icm_expire_file_kind)f->kind),
                              (long long)f->snapshot_id);
    if (line == NULL)
        return ICM_ENOMEM;
    m->named[m->n_named++] = line;
    return 0;
}

static int refuse_missing(plan *p, const missing_files *m)
{
    icm__buf names = ICM__BUF_INIT;
    for (size_t i = 0; i < m->n_named; i++)
        icm__buf_printf(&names, "%s%s", i ? ", " : "", m->named[i]);
    if (m->count > m->n_named)
        icm__buf_printf(&names, " and %zu more", m->count - m->n_named);
    if (names.oom) {
        icm__buf_dispose(&names);
        return ICM_ENOMEM;
    }
    const char *where = p->o->file_list != NULL ? "neither in the file list nor in storage"
                                                : "not in the listing";
    int rc = icm__orphan_refuse(p->list_root,
                    "%zu file%s the table's snapshots reference here %s %s%s%s; nothing is "
                    "deleted (a damaged manifest may name a live file wrongly, or the "
                    "listing does not name files as the metadata does: check --path-map and "
                    "--location; `icemaint check` lists what is missing; --no-verify skips "
                    "this check)",
                    m->count, m->count == 1 ? "" : "s", m->count == 1 ? "is" : "are", where,
                    names.len > 0 ? ": " : "", names.len > 0 ? names.data : "");
    icm__buf_dispose(&names);
    return rc;
}

/*
 * Every file the snapshots reach below the listed location (visible to the listing) must have
 * been listed, or, for a file list, be in it or in storage: otherwise a damaged manifest may
 * name a live file wrongly (so the real one looks like an orphan), or the listing does not name
 * files as the metadata does. R's marks say how many were not listed (one pass over R); only
 * then are the snapshots walked again to name them (the first MISSING_NAMED, each with a
 * snapshot that references it). Checked when something would be deleted (there are orphans),
 * dry run included; options.no_verify turns it off.
 */
static int check_presence(plan *p, const icm_table_metadata *md)
{
    if (p->r->orphan_count == 0 || icm__orphan_option_no_verify(p->o))
        return 0;
    size_t unlisted = icm__pathset_count_marks(p->keys.set, MARK_EXPECTED | MARK_FOUND,
                                               MARK_EXPECTED);
    if (unlisted == 0)
        return 0;
    missing_files m;
    memset(&m, 0, sizeof m);
    m.p = p;
    icm__reach_options ro = {.read_entries = true, .statistics = true};
    icm__reach_report rep;
    int rc = icm__reach_walk(p->io, md, &ro, on_reached_again, &m, &rep);
    icm__reach_report_dispose(&rep);
    if (rc == 0 && m.count == 0 && p->o->file_list == NULL)
        m.count = unlisted; /* (the walk could not name them: say how many) */
    if (rc == 0 && m.count > 0)
        rc = refuse_missing(p, &m);
    for (size_t i = 0; i < m.n_named; i++)
        icm__free(m.named[i]);
    return rc;
}

static int check_path_form(plan *p)
{
    const icm_orphan_result *r = p->r;
    if (p->referenced_under_root == 0 || r->referenced_listed > 0 || r->orphan_count == 0)
        return 0;
    return icm__orphan_refuse(p->list_root,
                  "none of the %zu files the metadata references here was found in the "
                  "listing, so the listing names files differently from the metadata (check "
                  "--path-map, --equal-schemes, --equal-authorities); nothing is deleted",
                  p->referenced_under_root);
}

/* A reference of newer metadata (icm__reach_extend): into R, with its listing alias. */
static int add_newer_ref(const char *loc, void *payload)
{
    plan *p = payload;
    int rc = add_ref(p, loc);
    return rc == 0 ? add_listing_alias(p, loc) : rc;
}

static int refuse_unreadable_newer(const icm__reach_report *rep)
{
    const icm__reach_failure *f = &rep->failures[0];
    return icm__error_set(ICM_ERRCLASS_MAINT, f->code != 0 ? f->code : ICM_EIO, f->location,
                          "cannot read this %s, which a commit during the sweep added (%s); "
                          "what the table references now is unknown, so no further file is "
                          "deleted", f->is_manifest_list ? "manifest list" : "manifest",
                          f->message);
}

/* Everything newer metadata `md` (at `md_location`) references that R lacks, reading only the
 * manifest lists and manifests R does not account for yet. */
static int add_newer_refs(plan *p, const icm_table_metadata *md, const char *md_location)
{
    icm__reach_report rep;
    int rc = icm__reach_extend(p->io, md, md_location, &p->seen, add_newer_ref, p, &rep);
    if (rc == 0)
        rc = icm__okeys_flush(&p->keys);
    if (rc == 0 && rep.failure_count > 0)
        rc = refuse_unreadable_newer(&rep);
    icm__reach_report_dispose(&rep);
    return rc;
}

int icm__orphans_referenced(icm__orphan_plan *p, const char *location, bool *referenced)
{
    icm__okey_match m = ICM__OKEY_NONE;
    int rc = icm__okeys_lookup(&p->keys, location, &m, NULL);
    *referenced = rc == 0 && (m == ICM__OKEY_EXACT ||
                              (m == ICM__OKEY_CONFLICT &&
                               p->o->prefix_mismatch != ICM_PREFIX_MISMATCH_DELETE));
    return rc;
}

/* Drop the orphans from index `from` on that R now references. */
static int drop_referenced(plan *p, size_t from)
{
    icm_orphan_result *r = p->r;
    size_t kept = from;
    for (size_t i = from; i < r->orphan_count; i++) {
        bool now_referenced;
        int rc = icm__orphans_referenced(p, r->orphans[i].path, &now_referenced);
        if (rc != 0) {
            /* keep the list whole: the rest stays (planned, not deleted) */
            memmove(&r->orphans[kept], &r->orphans[i], (r->orphan_count - i) * sizeof *r->orphans);
            r->orphan_count = kept + (r->orphan_count - i);
            return rc;
        }
        if (now_referenced) {
            bool file = r->orphans[i].kind != ICM_ORPHAN_CHECKSUM;
            icm__free(r->orphans[i].path);
            r->newly_referenced++;
            /* a kept file's checksum companion (the entry right after it) stays with it */
            if (file && i + 1 < r->orphan_count && r->orphans[i + 1].kind == ICM_ORPHAN_CHECKSUM)
                icm__free(r->orphans[++i].path);
        } else {
            r->orphans[kept++] = r->orphans[i];
        }
    }
    r->orphan_count = kept;
    return 0;
}

/* Reload the table; if a writer committed since R was last brought up to date, add what its
 * metadata references to R and drop the orphans from index `from` on that it covers, so nothing
 * committed during the sweep is deleted. */
static int recheck(plan *p, size_t from)
{
    int rc = icm_table_refresh(p->t);
    if (rc != 0)
        return rc;
    const char *now_loc = icm_table_get_metadata_location(p->t);
    if (strcmp(now_loc, p->md_location) == 0)
        return 0;
    const icm_table_metadata *md = icm_table_get_metadata(p->t);
    p->r->rechecked = true;
    if ((!p->o->dry_run && (rc = icm_table_check_own_metadata(p->t)) != 0) ||
        (rc = check_gc(md, now_loc)) != 0 || (rc = add_newer_refs(p, md, now_loc)) != 0)
        return rc;
    char *copy = icm__strdup(now_loc);
    if (copy == NULL)
        return ICM_ENOMEM;
    icm__free(p->md_location);
    p->md_location = copy;
    p->r->referenced = icm__pathset_count(p->keys.set);
    return drop_referenced(p, from);
}

int icm__orphans_revalidate(icm__orphan_plan *p, size_t from)
{
    return recheck(p, from);
}

/* ------------------------------------------------------------------------------------------ */
/* checksum companions                                                                         */

/* The checksum companion of orphan `f` (icm_fileio_checksum_of), as an orphan entry of kind
 * CHECKSUM in *out, or out->path NULL when there is none or it must stay: R references it (in
 * any form), or it lies under an excluded location. */
static int companion_of(plan *p, const icm_orphan_file *f, icm_orphan_file *out)
{
    memset(out, 0, sizeof *out);
    icm_file_info info;
    char *crc = NULL;
    int rc = icm_fileio_checksum_of(p->io, f->path, &crc, &info);
    if (rc != 0 || crc == NULL)
        return rc;
    icm__okey_match m = ICM__OKEY_NONE;
    rc = icm__okeys_lookup(&p->keys, crc, &m, NULL);
    if (rc != 0 || m != ICM__OKEY_NONE || icm__orphan_excluded(p->o, crc)) {
        icm__free(crc);
        return rc;
    }
    *out = (icm_orphan_file){crc, info.size_bytes, info.mtime_ms, ICM_ORPHAN_CHECKSUM,
                             ICM_ORPHAN_PLANNED, 0, NULL};
    return 0;
}

/* Plan each final orphan's checksum companion right after it (README "What the maintenance
 * commands touch"): the listing skips hidden names, so the companions are looked up here, one
 * check per orphan (never per listed file). A kept file's companion is never looked at. */
static int add_checksum_companions(plan *p)
{
    icm_orphan_result *r = p->r;
    size_t n = r->orphan_count;
    if (n == 0)
        return 0;
    icm_orphan_file *all = icm__reallocarray(NULL, n, 2 * sizeof *all);
    if (all == NULL)
        return ICM_ENOMEM;
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        all[k++] = r->orphans[i];
        icm_orphan_file c;
        if (rc == 0 && (rc = companion_of(p, &r->orphans[i], &c)) == 0 && c.path != NULL)
            all[k++] = c;
    }
    /* On failure the orphans stay as they were (the companions found are dropped). */
    if (rc != 0) {
        for (size_t i = 0; i < k; i++)
            if (all[i].kind == ICM_ORPHAN_CHECKSUM)
                icm__free(all[i].path);
        icm__free(all);
        return rc;
    }
    icm__free(r->orphans);
    r->orphans = all;
    r->orphan_count = k;
    p->orphan_cap = 2 * n;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* entry                                                                                       */

static void plan_dispose(plan *p)
{
    icm__okeys_dispose(&p->keys);
    icm__catalog_guard_dispose(&p->guard);
    if (p->exclusions != NULL) {
        size_t n = p->own_options.exclude_location_count;
        for (size_t i = n - p->n_exclusions_owned; i < n; i++)
            icm__free((char *)p->exclusions[i]);
        icm__free(p->exclusions);
    }
    icm__pathset_free(p->metadata_docs);
    for (size_t i = 0; i < p->n_roots; i++)
        icm__free(p->roots[i]);
    for (size_t i = 0; i < p->n_md_dirs; i++)
        icm__free(p->md_dirs[i]);
    for (size_t i = 0; i < p->n_hidden_fields; i++)
        icm__free(p->hidden_fields[i]);
    icm__free(p->hidden_fields);
    for (size_t i = 0; i < p->n_conflict_pairs; i++)
        icm__free(p->conflict_pairs[i]);
    icm__ptrvec_dispose(&p->unreferenced_md, icm__free);
    icm__ptrvec_dispose(&p->unknown_files, icm__free);
    icm__free(p->uuid);
    icm__free(p->list_root);
    icm__free(p->list_root_path);
    icm__free(p->real_list_root);
    icm__free(p->md_location);
    icm__refs_seen_dispose(&p->seen);
}

static int run(plan *p, int64_t now)
{
    int rc = icm_table_refresh(p->t);
    if (rc != 0)
        return rc;
    const icm_table_metadata *md = icm_table_get_metadata(p->t);
    char *md_location = icm__strdup(icm_table_get_metadata_location(p->t));
    if (md_location == NULL)
        return ICM_ENOMEM;
    p->md_location = md_location; /* the plan's; brought up to date by recheck */
    if (icm_table_is_read_only(p->t) && !p->o->dry_run)
        rc = icm__orphan_refuse(md_location, "the table was opened from a metadata file, which may not be "
                                 "its current metadata: only a dry run is allowed (open it "
                                 "through its catalog or table directory)");
    if (rc == 0)
        rc = check_own_metadata(p);
    if (rc == 0)
        rc = check_gc(md, md_location);
    if (rc == 0)
        rc = set_cutoff(p, md, now);
    if (rc == 0)
        rc = set_roots(p, md, md_location);
    if (rc == 0)
        rc = set_hidden_fields(p, md);
    if (rc == 0)
        rc = set_list_root(p, icm_table_metadata_location(md));
    if (rc == 0)
        rc = check_other_formats(p);
    if (rc == 0)
        rc = add_exclusion_aliases(p);
    if (rc == 0)
        rc = icm__catalog_guard_check(&p->guard, p->t, p->o, p->list_root);
    if (rc == 0)
        rc = check_enclosing_tables(p);
    if (rc == 0)
        rc = add_table_refs(p, md, md_location);
    if (rc == 0) {
        p->r->referenced = icm__pathset_count(p->keys.set);
        /* Names only: R is decided on names, and only the few candidates need a stat. */
        rc = p->o->file_list != NULL
                 ? read_file_list(p)
                 : icm__fileio_list_ahead_batches(p->io, p->list_root,
                                                  ICM_LIST_STAT_OPTIONAL, on_listed, p);
    }
    /* Where --location leads was checked before the keep set was built, which can take long:
     * check again now the listing is done, so a folder swapped for a link meanwhile is caught
     * before anything is deleted. (Deletes follow right after the plan.) */
    if (rc == 0 && p->o->location != NULL && p->o->file_list == NULL)
        rc = check_resolved_root(p, p->list_root);
    if (rc == 0)
        rc = check_conflicts(p);
    if (rc == 0)
        rc = check_other_tables(p);
    if (rc == 0)
        rc = check_catalog_stores(p);
    if (rc == 0)
        rc = check_path_form(p);
    if (rc == 0)
        rc = check_presence(p, md);
    if (rc == 0)
        rc = recheck(p, 0);
    if (rc == 0)
        rc = add_checksum_companions(p);
    p->r->keep_set_bytes = icm__pathset_memory_bytes(p->keys.set);
    return rc;
}

void icm__orphan_plan_free(icm__orphan_plan *p)
{
    if (p == NULL)
        return;
    plan_dispose(p);
    icm__free(p);
}

int icm__orphans_plan(icm_table *t, const icm_orphan_options *o, int64_t now_ms,
                      icm__orphan_plan **plan_out, icm_orphan_result **out)
{
    *out = NULL;
    if (plan_out != NULL)
        *plan_out = NULL;
    plan *p = icm__calloc(1, sizeof *p);
    icm_orphan_result *r = icm__calloc(1, sizeof *r);
    if (p == NULL || r == NULL) {
        icm__free(p);
        icm__free(r);
        return ICM_ENOMEM;
    }
    p->t = t;
    p->io = icm_table_get_fileio(t);
    p->o = o;
    r->dry_run = o->dry_run;
    r->now_ms = now_ms;
    p->r = r;
    int rc = icm__okeys_init(&p->keys, o->equal_schemes, o->equal_authorities);
    icm__okeys_on_new(&p->keys, on_new_ref, p);
    if (rc == 0)
        rc = icm__refs_seen_init(&p->seen);
    if (rc == 0)
        rc = run(p, now_ms);
    if (rc != 0 || plan_out == NULL) {
        icm__orphan_plan_free(p);
        p = NULL;
    }
    if (rc != 0) {
        icm_orphan_result_free(r);
        return rc;
    }
    icm__orphan_result_tally(r, false);
    if (plan_out != NULL)
        *plan_out = p;
    *out = r;
    return 0;
}
