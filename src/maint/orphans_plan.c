/*
 * maint/orphans_plan.c: everything the orphan sweep does before deleting (orphans.h): the entry
 * point and the order of the steps, the checks on the metadata and options before anything is
 * listed, the re-check after a concurrent commit, and the checksum companions. The other steps
 * are in orphans_refs.c (the keep set R), orphans_listing.c (the candidates),
 * orphans_checks.c (the checks after the listing) and orphans_names.c (the name filter).
 *
 * Read-only by construction: the storage calls here are the table refresh, manifest reads (the
 * keep-set walk), the listing and reading metadata files to tell other tables apart. Nothing in
 * these files references a FileIO call that creates, writes or deletes, so a dry run (which stops
 * after them) cannot delete anything; tests/unit/test_orphans_dryrun.c checks that with nm.
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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "icemaint/catalog.h"
#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/metadata.h"
#include "io/list_ahead.h"
#include "maint/folder_names.h"
#include "maint/orphans_internal.h"
#include "maint/orphans_plan.h"
#include "maint/places.h"
#include "maint/site_checks.h"
#include "spec/metadata_internal.h"
#include "util/location.h"

#define DEFAULT_MAX_SNAPSHOT_AGE_MS INT64_C(432000000)
/* commit.retry.total-timeout-ms when the table sets none: 30 min (Java's TableProperties and
 * PyIceberg's default). */
#define DEFAULT_COMMIT_RETRY_TOTAL_MS INT64_C(1800000)
/* commit.retry.max-wait-ms when the table sets none: 60 s (the same defaults). */
#define DEFAULT_COMMIT_RETRY_MAX_WAIT_MS INT64_C(60000)

/* ------------------------------------------------------------------------------------------ */
/* small helpers                                                                               */

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

int icm__orphans_take_out(plan *p, char **why, int rc)
{
    icm_orphan_result *r = p->r;
    if (why == NULL)
        return rc;
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++)
        if (why[i] != NULL)
            rc = icm__orphan_warn(r, "%s: not deleted: %s; kept", r->orphans[i].path, why[i]);
    size_t kept = 0;
    for (size_t i = 0; i < r->orphan_count; i++) {
        if (rc == 0 && why[i] != NULL)
            icm__free(r->orphans[i].path);
        else
            r->orphans[kept++] = r->orphans[i];
        icm__free(why[i]);
    }
    if (rc == 0)
        r->orphan_count = kept;
    icm__free(why);
    return rc;
}

int icm__orphan_refuse(const char *location, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = icm__error_vset(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location, fmt, ap);
    va_end(ap);
    return rc;
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

/* A table property holding milliseconds (a whole number), or `otherwise`. */
static int64_t table_property_ms(const icm_table_metadata *md, const char *key,
                                 int64_t otherwise)
{
    const char *text = icm_table_metadata_property(md, key);
    if (text == NULL)
        return otherwise;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    return end != text && *end == '\0' ? (int64_t)v : otherwise;
}

/* How long after writing its files a writer may still commit them: the table's
 * commit.retry.total-timeout-ms plus one last wait (commit.retry.max-wait-ms and its 10%
 * jitter), saturating. */
static int64_t commit_retry_budget_ms(const icm_table_metadata *md)
{
    int64_t total = table_property_ms(md, "commit.retry.total-timeout-ms",
                                      DEFAULT_COMMIT_RETRY_TOTAL_MS);
    int64_t wait = table_property_ms(md, "commit.retry.max-wait-ms",
                                     DEFAULT_COMMIT_RETRY_MAX_WAIT_MS);
    total = total > 0 ? total : 0;
    wait = wait > 0 ? wait : 0;
    int64_t budget;
    if (__builtin_add_overflow(total, wait, &budget) ||
        __builtin_add_overflow(budget, wait / 10 + (wait % 10 != 0), &budget))
        budget = INT64_MAX;
    return budget;
}

/* The cutoff, the minimum age (24 hours, or the table's commit retry budget when longer), the
 * warning when a forced cutoff is shorter than that budget, and the retention warning. */
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
    /* A writer's commit may retry for commit.retry.total-timeout-ms after it wrote its files
     * (Java and PyIceberg reuse them in every attempt), and both check that budget before a
     * wait, not after it: the last attempt may come a whole wait later, up to
     * commit.retry.max-wait-ms plus 10% jitter. A cutoff younger than that can take a file
     * its commit will still add, so it is the minimum too where it is longer. */
    int64_t retry_ms = commit_retry_budget_ms(md);
    int64_t min_age = retry_ms > ICM_ORPHAN_MIN_AGE_MS ? retry_ms : ICM_ORPHAN_MIN_AGE_MS;
    if (window < ICM_ORPHAN_MIN_AGE_MS && !o->force)
        return icm__orphan_refuse(NULL,
                      "cutoff is only %.1f h before now (minimum 24 h): files that young may "
                      "belong to a commit in progress; use --force (options.force) to accept",
                      (double)window / 3600000.0);
    if (window < min_age && !o->force)
        return icm__orphan_refuse(NULL,
                      "cutoff is only %.1f h before now (minimum %.1f h, the table's "
                      "commit.retry.total-timeout-ms and one last commit.retry.max-wait-ms): "
                      "files that young may belong to a commit in progress; use --force "
                      "(options.force) to accept",
                      (double)window / 3600000.0, (double)min_age / 3600000.0);
    if (window < 0)
        return icm__orphan_warn(p->r, "the cutoff is in the future (after now): every "
                                      "unreferenced file is a candidate, even one a commit in "
                                      "progress is writing (accepted with force)");
    int64_t guarded; /* how long a writer may take from writing a file to committing it */
    if (__builtin_add_overflow(window, o->settle_ms > 0 ? o->settle_ms : 0, &guarded))
        guarded = INT64_MAX;
    if (guarded < retry_ms && !o->dry_run) {
        int rc = icm__orphan_warn(p->r,
                      "the cutoff is only %.1f min before now (accepted with force): with the "
                      "settle time, a writer must commit a file within %.1f min of writing it, "
                      "but the table lets commits retry for %.1f min "
                      "(commit.retry.total-timeout-ms and one last commit.retry.max-wait-ms): a "
                      "file a retrying writer wrote before the listing and commits later is "
                      "deleted",
                      (double)window / 60000.0, (double)guarded / 60000.0,
                      (double)retry_ms / 60000.0);
        if (rc != 0)
            return rc;
    }
    int64_t max_age = table_property_ms(md, "history.expire.max-snapshot-age-ms",
                                        DEFAULT_MAX_SNAPSHOT_AGE_MS);
    if (max_age <= window)
        return icm__orphan_warn(p->r,
                                "snapshot retention (history.expire.max-snapshot-age-ms = %lld "
                                "ms) is not longer than the file-retention window (%.1f h): "
                                "files of snapshots that expire sooner are swept by age alone",
                                (long long)max_age, (double)window / 3600000.0);
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
    int rc = icm_fileio_resolve(&real, p->io, want);
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
        rc = icm_fileio_resolve(&root, p->io, p->roots[i]);
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
        p->root_hidden = icm__orphans_hidden_path(p, rest);
    return icm__orphans_set_root_shortcut(p);
}

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
    int rc = n == 0 || p->real_list_root_done ? 0 : icm__orphans_look_up_real_roots(p);
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

/* Reload the table; if a writer committed since R was last brought up to date, add what its
 * metadata references to R and drop the orphans from index `from` on that it covers, so nothing
 * committed during the sweep is deleted. */
static int recheck(plan *p, size_t from)
{
    int rc = icm_table_refresh(p->t);
    if (rc != 0)
        return rc;
    const char *now_loc = icm_table_get_metadata_location(p->t);
    const icm_table_metadata *md = icm_table_get_metadata(p->t);
    if (icm__md_mark_same(&p->md_mark, now_loc, md))
        return 0;
    p->r->rechecked = true;
    if ((!p->o->dry_run && (rc = icm_table_check_own_metadata(p->t)) != 0) ||
        (rc = check_gc(md, now_loc)) != 0 ||
        (rc = icm__orphans_add_newer_refs(p, md, now_loc)) != 0)
        return rc;
    if ((rc = icm__md_mark_set(&p->md_mark, now_loc, md)) != 0)
        return rc;
    p->r->referenced = icm__pathset_count(p->keys.set);
    return icm__orphans_drop_referenced(p, from);
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
    icm_file_info info = ICM_FILE_INFO_INIT;
    char *crc = NULL;
    int rc = icm_fileio_checksum_of(&crc, &info, p->io, f->path);
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

/* Whether orphan i's checksum companion certainly is not there: its name is absent from its
 * folder, read once for the run of orphans in that folder (folder_names.h; a name present, or
 * a folder not read, is asked of storage by companion_of as before). */
static int companion_absent(icm__folder_names *names, const icm_orphan_result *r, size_t i,
                            size_t *run_end, bool *absent)
{
    *absent = false;
    const char *path = r->orphans[i].path;
    if (i >= *run_end) {
        *run_end = i + 1;
        while (*run_end < r->orphan_count &&
               icm__folder_names_same_folder(path, r->orphans[*run_end].path))
            (*run_end)++;
    }
    bool oom = false;
    char *crc = icm__location_checksum_name(path, &oom);
    if (crc == NULL)
        return oom ? ICM_ENOMEM : 0; /* no companion name: companion_of says so */
    icm__folder_answer a = ICM__NAME_UNKNOWN;
    int rc = icm__folder_names_same_folder(crc, path)
                 ? icm__folder_names_ask(names, crc, *run_end - i, &a)
                 : 0;
    icm__free(crc);
    *absent = a == ICM__NAME_ABSENT;
    return rc;
}

/* Plan each final orphan's checksum companion right after it (README "What the maintenance
 * commands touch"): the listing skips hidden names, so the companions are looked up here, one
 * check per orphan (never per listed file), or one read per folder of orphans where that is
 * the same answer (companion_absent). A kept file's companion is never looked at. */
static int add_checksum_companions(plan *p)
{
    icm_orphan_result *r = p->r;
    size_t n = r->orphan_count;
    if (n == 0)
        return 0;
    icm_orphan_file *all = icm__reallocarray(NULL, n, 2 * sizeof *all);
    if (all == NULL)
        return ICM_ENOMEM;
    icm__folder_names names;
    int rc = icm__folder_names_init(&names, p->io);
    size_t k = 0, run_end = 0;
    for (size_t i = 0; i < n; i++) {
        all[k++] = r->orphans[i];
        icm_orphan_file c;
        bool absent = false;
        if (rc == 0)
            rc = companion_absent(&names, r, i, &run_end, &absent);
        if (rc == 0 && !absent && (rc = companion_of(p, &r->orphans[i], &c)) == 0 &&
            c.path != NULL)
            all[k++] = c;
    }
    icm__folder_names_dispose(&names);
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
    icm__free(p->content_sizes);
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
    icm__link_survey_dispose(&p->survey);
    icm__free(p->unresolved_ref);
    icm__orphans_mounts_dispose(p);
    icm__md_mark_dispose(&p->md_mark);
    icm__refs_seen_dispose(&p->seen);
    icm__cut_sample_dispose(&p->cut_sample);
    icm__free(p->shard_after);
    icm__free(p->shard_upto);
    icm__orphans_free_strays(p);
}

static int cmp_orphan_path(const void *a, const void *b)
{
    return strcmp(((const icm_orphan_file *)a)->path, ((const icm_orphan_file *)b)->path);
}

/* List list_root and classify what is listed. On an object store the listing is cut into
 * ICM__SWEEP_LIST_RANGES ranges at quantiles of the referenced keys, listed at once; their
 * files then arrive interleaved, so the candidates are put in byte order (a single listing's
 * order there), and the plan is the same whatever the timing. */
static int list_candidates(plan *p)
{
    char **cuts = NULL;
    size_t n_cuts = 0;
    if (p->shard_empty) {
        icm__cut_sample_dispose(&p->cut_sample);
        return 0; /* a shard beyond the number of referenced keys (list_cuts.h): no range */
    }
    int rc = p->referenced_under_root < ICM__SWEEP_RANGES_MIN_REFERENCED || p->root_local
                 ? 0
                 : icm__cut_sample_cuts_between(&p->cut_sample, ICM__SWEEP_LIST_RANGES,
                                                p->shard_after, p->shard_upto, &cuts, &n_cuts);
    icm__cut_sample_dispose(&p->cut_sample); /* not needed any more */
    /* A shard's sample and range are relative to list_root (the keep set's collapsed form);
     * the listing's bounds are full locations in list_root's form. */
    char *after = NULL, *upto = NULL;
    if (rc == 0 && p->sharded) {
        for (size_t k = 0; rc == 0 && k < n_cuts; k++) {
            char *full = icm__location_join(p->list_root, cuts[k]);
            icm__free(cuts[k]);
            cuts[k] = full;
            rc = full != NULL ? 0 : ICM_ENOMEM;
        }
        if (rc == 0 && p->shard_after != NULL &&
            (after = icm__location_join(p->list_root, p->shard_after)) == NULL)
            rc = ICM_ENOMEM;
        if (rc == 0 && p->shard_upto != NULL &&
            (upto = icm__location_join(p->list_root, p->shard_upto)) == NULL)
            rc = ICM_ENOMEM;
    }
    if (rc == 0)
        rc = icm__fileio_list_ahead_span(p->io, p->list_root, ICM_LIST_STAT_OPTIONAL, after,
                                         upto, (const char *const *)cuts, n_cuts,
                                         icm__orphans_on_listed, p);
    icm__free(after);
    icm__free(upto);
    icm__cuts_free(cuts, n_cuts);
    if (rc == 0 && n_cuts > 0)
        qsort(p->r->orphans, p->r->orphan_count, sizeof *p->r->orphans, cmp_orphan_path);
    return rc;
}

static int run(plan *p, int64_t now)
{
    int rc = icm_table_refresh(p->t);
    if (rc != 0)
        return rc;
    const icm_table_metadata *md = icm_table_get_metadata(p->t);
    /* the plan's; brought up to date by recheck */
    if ((rc = icm__md_mark_set(&p->md_mark, icm_table_get_metadata_location(p->t), md)) != 0)
        return rc;
    const char *md_location = p->md_mark.location;
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
        rc = icm__orphans_check_other_formats(p);
    if (rc == 0)
        rc = add_exclusion_aliases(p);
    if (rc == 0)
        rc = icm__catalog_guard_check(&p->guard, p->t, p->o, p->list_root);
    if (rc == 0)
        rc = icm__orphans_check_enclosing_tables(p);
    /* A mount inside a local listing refuses; one of its file system elsewhere too makes the
     * walk keep the identity of references named outside it (orphans_mounts.c). */
    if (rc == 0)
        rc = icm__orphans_check_mounts(p, true);
    /* An object store's listing is a chain of pages: cut it into ranges listed at once. */
    p->sample_cuts = !p->root_local && icm__orphans_listed(p) && !p->sharded;
    /* Symbolic links below the roots give files second names (link_survey.h): the walk then
     * resolves every reference. One walk of the local roots' folders; nothing on object
     * stores. */
    if (rc == 0)
        rc = icm__link_survey_init(&p->survey, p->io, (const char *const *)p->roots, p->n_roots);
    /* A shard's range comes first: R then keeps only the range's references. */
    if (rc == 0 && p->sharded)
        rc = icm__orphans_set_shard_range(p, md);
    if (rc == 0)
        rc = icm__orphans_add_table_refs(p, md, md_location);
    if (rc == 0) {
        p->r->referenced = icm__pathset_count(p->keys.set);
        /* Names only: R is decided on names, and only the few candidates need a stat. */
        rc = icm__orphans_listed(p)      ? list_candidates(p)
             : p->o->inventory != NULL ? icm__orphans_read_inventory(p)
                                       : icm__orphans_read_file_list(p);
    }
    if (rc == 0 && p->sharded)
        rc = icm__orphans_add_stray_refs(p, md);
    if (rc == 0 && p->sharded)
        rc = icm__orphans_take_strays(p);
    /* Another table's metadata or another format's log in another shard's range would refuse
     * the unsharded run: every shard looks at the names of the whole location. */
    if (rc == 0 && p->sharded)
        rc = icm__orphans_scan_outside_range(p);
    if (rc == 0 && p->o->exact_file_list)
        rc = icm__orphans_keep_only_planned(p);
    if (rc == 0)
        rc = icm__orphans_keep_second_names(p);
    if (rc == 0)
        rc = icm__orphans_keep_same_files(p);
    /* (and no mount made inside the listing location meanwhile) */
    if (rc == 0)
        rc = icm__orphans_check_mounts(p, false);
    /* Where --location leads was checked before the keep set was built, which can take long:
     * check again now the listing is done, so a folder swapped for a link meanwhile is caught
     * before anything is deleted. (Deletes follow right after the plan.) */
    if (rc == 0 && p->o->location != NULL && icm__orphans_listed(p))
        rc = check_resolved_root(p, p->list_root);
    if (rc == 0)
        rc = icm__orphans_check_conflicts(p);
    if (rc == 0)
        rc = icm__orphans_check_other_tables(p);
    if (rc == 0)
        rc = icm__orphans_check_catalog_stores(p);
    if (rc == 0)
        rc = icm__orphans_check_path_form(p);
    /* A shard listed only its range, so another table's `*.metadata.json` or another
     * format's log outside it went unseen: each candidate's folders are looked at instead. */
    if (rc == 0 && p->sharded)
        rc = icm__orphans_check_shard_folders(p);
    /* An unsharded listing tells a trash by a journal name it passed, but it may have read a
     * trash's journal folder before a trash run wrote there: each candidate's UUID-named
     * folders are looked at live (the other modes look at every candidate's folders). */
    else if (rc == 0 && icm__orphans_listed(p))
        rc = icm__orphans_check_trash_folders(p);
    /* a reviewed plan: nor the metadata of a table made since */
    if (rc == 0 && (p->o->exact_file_list || (p->sharded && icm__orphans_listed(p))))
        rc = icm__orphans_hold_nested_tables(p);
    /* An inventory report or file list shows no absence: what its rows leave out, or what was
     * made since, is looked for live in the candidates' folders (a shard's too, as the
     * unsharded run's: a table found there refuses). */
    else if (rc == 0 && !icm__orphans_listed(p))
        rc = icm__orphans_check_snapshot_folders(p);
    if (rc == 0)
        rc = icm__orphans_check_presence(p, md);
    if (rc == 0)
        rc = icm__orphans_hold_lookalikes(p, md);
    if (rc == 0)
        rc = icm__orphans_hold_twins(p, md);
    if (rc == 0)
        rc = recheck(p, 0);
    /* A reviewed plan's apply deletes only what the plan names; a companion found in storage
     * is not named (the plan's own companions are hidden names, never candidates): left. */
    if (rc == 0 && !p->o->exact_file_list)
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
    return icm__orphans_plan_range(t, o, now_ms, NULL, plan_out, out);
}

int icm__orphans_plan_range(icm_table *t, const icm_orphan_options *o, int64_t now_ms,
                            icm__cross_range *cross, icm__orphan_plan **plan_out,
                            icm_orphan_result **out)
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
    p->sharded = o->shard_count >= 2;
    p->cross = p->sharded ? cross : NULL;
    r->dry_run = o->dry_run;
    r->now_ms = now_ms;
    p->r = r;
    int rc = icm__okeys_init(&p->keys, o->equal_schemes, o->equal_authorities);
    icm__okeys_on_new(&p->keys, icm__orphans_on_new_ref, p);
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
