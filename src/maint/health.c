/*
 * maint/health.c: a table's storage and retention picture (icemaint/health.h).
 *
 * Three parts, each reusing what the maintenance code already decides rather than deciding it
 * again:
 *  1. unreferenced files: the orphan sweep itself as a dry run with no age cutoff, so what
 *     counts as unreferenced is exactly what a sweep would plan (its keep set, listing,
 *     hidden-path and exclusion rules, its refusals); it runs first because it refreshes the
 *     table, and the rest measures the metadata it was planned against;
 *  2. referenced bytes and manifests: every snapshot's manifest list once, each distinct
 *     manifest once (the current snapshot's first, so its own figures come from the same
 *     pass), each file counted once by its location's identity;
 *  3. the metadata folders' documents (icm__table_metadata_dirs, icm__table_metadata_file_name:
 *     the names the sweep's keep set and expiry's metadata cleanup use);
 *  4. integrity: the reachability walk the sweep and the expiry build their keep sets with
 *     (maint/reach_walk.c), so a list or manifest they would not trust is reported here too,
 *     even with no listing (a file cut at an Avro block boundary reads as valid Avro).
 *
 * Read-only: no FileIO call here creates, writes or deletes, and the sweep is a dry run.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/health.h"
#include "icemaint/manifest.h"
#include "icemaint/orphans.h"
#include "maint/keepset.h"
#include "util/location.h"
#include "util/strset.h"
#include "util/util.h"

void icm_health_report_free(icm_health_report *report)
{
    if (report == NULL)
        return;
    icm__free(report->metadata_location);
    icm__free(report->listing_error);
    icm__free(report->unreadable_first);
    icm__free(report);
}

/* ---- 1. unreferenced files: the sweep's dry run ---- */

static int measure_unreferenced(icm_health_report *r, icm_table *t, const icm_health_options *o)
{
    icm_orphan_options so = ICM_ORPHAN_OPTIONS_INIT;
    so.dry_run = true;
    /* No age cutoff: every unreferenced file modified before the listing began, however
     * recently (a writer's file not yet committed is unreferenced bytes too; health reports,
     * it never deletes). The clock's now, not the report's: a --now in the past must not hide
     * files, one in the future must not change what the sweep's checks see as in flight. */
    so.now_ms = icm__now_ms();
    so.has_older_than = true;
    so.older_than_ms = so.now_ms;
    so.force = true;
    so.catalog_files = o->catalog_files;
    so.catalog_file_count = o->catalog_file_count;
    icm_orphan_result *sr = NULL;
    int rc = icm_orphan_sweep(&sr, t, &so);
    if (rc != 0 && rc != ICM_ENOMEM) {
        /* A finding, not a failure: the sweep would refuse this table, or could not list it
         * (credentials, a store that cannot list); say why, and report the rest. */
        char line[1024];
        icm_error_format(line, sizeof line, icm_error_last());
        r->listing_error = icm__strdup(line);
        icm_orphan_result_free(sr);
        return r->listing_error != NULL ? 0 : icm__error_oom();
    }
    if (rc != 0) {
        icm_orphan_result_free(sr);
        return rc;
    }
    r->listed = true;
    r->listed_files = sr->listed;
    r->unreferenced.count = sr->total;
    r->unreferenced.bytes = sr->total_bytes;
    icm_orphan_result_free(sr);
    return 0;
}

/* ---- 2. referenced files and manifests ---- */

typedef struct walk {
    icm_health_report *r;
    icm_fileio *io;
    icm_manifest_read_options read_opts;
    icm__strset manifests_seen;  /* manifests' identities, over all snapshots */
    icm__strset files_seen;      /* files' identities, over all snapshots */
    icm__strset current_files;   /* files' identities, current snapshot */
    bool current;                /* walking the current snapshot */
    size_t manifests;            /* of the snapshot being walked */
} walk;

/* Add the identity of `location` to `set`: 1 new, 0 seen, or a negative code (ICM_ENOMEM). An
 * empty location has no identity and stands for itself. */
static int add_identity(icm__strset *set, const char *location)
{
    char *id = NULL;
    int rc = icm_location_identity(&id, location);
    if (rc == ICM_ENOMEM)
        return rc;
    const char *key = rc == 0 ? id : location;
    bool added = false;
    rc = icm__strset_add(set, key, strlen(key), &added);
    icm_free(id);
    return rc != 0 ? icm__error_oom() : added;
}

static void count_file(icm_health_files *f, int64_t size)
{
    f->count++;
    if (size > 0)
        f->bytes += size;
}

static int on_entry(const icm_manifest_entry *e, void *payload)
{
    walk *w = payload;
    if (e->status == ICM_ENTRY_DELETED)
        return 0; /* removed in this manifest's snapshot: not live */
    const icm_data_file *f = &e->data_file;
    bool data = f->content == ICM_FILE_CONTENT_DATA;
    int64_t size = f->file_size_in_bytes;
    int added;
    if (w->current) {
        if ((added = add_identity(&w->current_files, f->file_path)) < 0)
            return added;
        if (added)
            count_file(data ? &w->r->current_data_files : &w->r->current_delete_files, size);
    }
    if ((added = add_identity(&w->files_seen, f->file_path)) < 0)
        return added;
    if (added)
        count_file(data ? &w->r->retained_data_files : &w->r->retained_delete_files, size);
    return 0;
}

static void count_manifest(walk *w, int64_t length)
{
    w->manifests++;
    if (!w->current)
        return;
    count_file(&w->r->current_manifests, length);
    if (length >= 0 && length < w->r->small_manifest_bytes)
        w->r->current_small_manifests++;
}

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    walk *w = payload;
    count_manifest(w, mf->manifest_length);
    int added = add_identity(&w->manifests_seen, mf->manifest_path);
    if (added <= 0)
        return added;
    count_file(&w->r->retained_manifests, mf->manifest_length);
    return icm_manifest_read(w->io, mf, &w->read_opts, on_entry, w);
}

static int walk_snapshot(walk *w, int format_version, const icm_snapshot *snap)
{
    w->manifests = 0;
    if (snap->manifest_list != NULL) {
        icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
        lo.format_version = format_version;
        return icm_manifest_list_read(w->io, snap->manifest_list, &lo, on_manifest, w);
    }
    for (size_t i = 0; i < snap->manifest_count; i++) {
        count_manifest(w, -1); /* v1 embedded: no recorded length, never small */
        int added = add_identity(&w->manifests_seen, snap->manifests[i]);
        if (added < 0)
            return added;
        if (added == 0)
            continue;
        count_file(&w->r->retained_manifests, -1);
        int rc = icm_manifest_read_v1_embedded(w->io, snap->manifests[i], snap->snapshot_id,
                                               &w->read_opts, on_entry, w);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int measure_referenced(icm_health_report *r, icm_fileio *io, const icm_table_metadata *md)
{
    walk w;
    memset(&w, 0, sizeof w);
    w.r = r;
    w.io = io;
    w.read_opts = (icm_manifest_read_options)ICM_MANIFEST_READ_OPTIONS_INIT;
    w.read_opts.fields = ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_SIZE |
                         ICM_MANIFEST_FIELD_FILE_FORMAT;
    int fv = icm_table_metadata_format_version(md);
    w.read_opts.format_version = fv;
    size_t n = icm_table_metadata_snapshot_count(md);
    const icm_snapshot *cur = r->has_current_snapshot
                                  ? icm_table_metadata_snapshot_by_id(md, r->current_snapshot_id)
                                  : NULL;
    size_t total = 0;
    int rc = 0;
    if (cur != NULL) { /* first, so its manifests are read in its own pass */
        w.current = true;
        rc = walk_snapshot(&w, fv, cur);
        w.current = false;
        total += w.manifests;
        r->manifests_per_snapshot_max = w.manifests;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (s == cur)
            continue;
        rc = walk_snapshot(&w, fv, s);
        total += w.manifests;
        if (w.manifests > r->manifests_per_snapshot_max)
            r->manifests_per_snapshot_max = w.manifests;
    }
    if (rc == 0 && n > 0)
        r->manifests_per_snapshot_mean = (double)total / (double)n;
    icm__strset_dispose(&w.manifests_seen);
    icm__strset_dispose(&w.files_seen);
    icm__strset_dispose(&w.current_files);
    return rc;
}

/* ---- 3. metadata documents in the metadata folders ---- */

typedef struct md_count {
    icm_health_report *r;
    const char *dir;
    const char *current;         /* identity of the current metadata file */
    icm__strset seen;            /* identities, across the (overlapping) folders */
} md_count;

static int on_md_file(const icm_file_info *f, void *payload)
{
    md_count *c = payload;
    const char *rest;
    /* directly in the folder: deeper down is another table's (a namespace named `metadata`) */
    if (!icm__location_strip_prefix(f->location, c->dir, &rest) || strchr(rest, '/') != NULL)
        return 0;
    bool document = false;
    if (!icm__table_metadata_file_name(f->location, &document) || !document)
        return 0;
    char *id = NULL;
    int rc = icm_location_identity(&id, f->location);
    if (rc != 0)
        return rc == ICM_ENOMEM ? rc : 0;
    bool added = false;
    rc = icm__strset_add(&c->seen, id, strlen(id), &added) != 0 ? icm__error_oom() : 0;
    if (rc == 0 && added) {
        count_file(&c->r->metadata_files, f->size_bytes);
        if (c->current != NULL && strcmp(id, c->current) == 0)
            c->r->current_metadata_bytes = f->size_bytes;
    }
    icm_free(id);
    return rc;
}

static int measure_metadata_files(icm_health_report *r, icm_fileio *io,
                                  const icm_table_metadata *md)
{
    char *dirs[3];
    size_t ndirs = 0;
    int rc = icm__table_metadata_dirs(md, r->metadata_location, dirs, &ndirs);
    if (rc != 0)
        return rc;
    md_count c;
    memset(&c, 0, sizeof c);
    c.r = r;
    char *current = NULL;
    if (r->metadata_location != NULL &&
        (rc = icm_location_identity(&current, r->metadata_location)) == ICM_ENOMEM) {
        for (size_t i = 0; i < ndirs; i++)
            icm__free(dirs[i]);
        return rc;
    }
    rc = 0;
    c.current = current;
    r->metadata_files.bytes = 0;
    for (size_t i = 0; rc == 0 && i < ndirs; i++) {
        c.dir = dirs[i];
        rc = icm_fileio_list(io, dirs[i], on_md_file, &c);
        if (rc == ICM_ENOTFOUND)
            rc = 0; /* a folder that does not exist holds nothing */
    }
    for (size_t i = 0; i < ndirs; i++)
        icm__free(dirs[i]);
    icm_free(current);
    icm__strset_dispose(&c.seen);
    return rc;
}

/* ---- 4. integrity ---- */

static int reached_nothing(const icm__reached *f, void *payload)
{
    (void)f;
    (void)payload;
    return 0;
}

static int measure_integrity(icm_health_report *r, icm_fileio *io, const icm_table_metadata *md)
{
    icm__reach_options ro = {.read_entries = true};
    icm__reach_report rep;
    int rc = icm__reach_walk(io, md, &ro, reached_nothing, NULL, &rep);
    if (rc == 0 && rep.failure_count > 0) {
        r->unreadable_files = rep.failure_count;
        const icm__reach_failure *f = &rep.failures[0];
        r->unreadable_first = icm__sprintf("%s: %s", f->location, f->message);
        if (r->unreadable_first == NULL)
            rc = icm__error_oom();
    }
    icm__reach_report_dispose(&rep);
    return rc;
}

/* ---- the report ---- */

/* The table's commit.manifest.target-size-bytes when a positive integer, else the default. */
static int64_t small_manifest_bound(const icm_table_metadata *md, int64_t asked)
{
    if (asked > 0)
        return asked;
    const char *v = icm_table_metadata_property(md, ICM_MANIFEST_TARGET_SIZE_PROPERTY);
    if (v != NULL && *v >= '0' && *v <= '9') {
        char *end = NULL;
        long long n = strtoll(v, &end, 10);
        if (*end == '\0' && n > 0)
            return (int64_t)n;
    }
    return ICM_HEALTH_DEFAULT_SMALL_MANIFEST_BYTES;
}

/* ICM_LAST_EXPIRE_PROPERTY as a non-negative integer, else -1. */
static int64_t last_expire(const icm_table_metadata *md)
{
    const char *v = icm_table_metadata_property(md, ICM_LAST_EXPIRE_PROPERTY);
    if (v == NULL || *v < '0' || *v > '9')
        return -1;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    return *end == '\0' && n >= 0 && n < INT64_MAX ? (int64_t)n : -1;
}

static void measure_snapshots(icm_health_report *r, const icm_table_metadata *md)
{
    size_t n = icm_table_metadata_snapshot_count(md);
    r->snapshot_count = n;
    r->has_current_snapshot = icm_table_metadata_current_snapshot_id(&r->current_snapshot_id, md);
    r->oldest_snapshot_ms = -1;
    r->oldest_snapshot_age_ms = -1;
    for (size_t i = 0; i < n; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (r->oldest_snapshot_ms < 0 || s->timestamp_ms < r->oldest_snapshot_ms)
            r->oldest_snapshot_ms = s->timestamp_ms;
        if (s->has_parent && icm_table_metadata_snapshot_by_id(md, s->parent_snapshot_id) == NULL)
            r->snapshots_expired_before = true;
    }
    if (r->oldest_snapshot_ms >= 0)
        r->oldest_snapshot_age_ms = r->now_ms - r->oldest_snapshot_ms;
    r->metadata_log_count = icm_table_metadata_metadata_log_count(md);
    r->last_expire_ms = last_expire(md);
    r->last_expire_age_ms = r->last_expire_ms >= 0 ? r->now_ms - r->last_expire_ms : -1;
}

static void percentages(icm_health_report *r)
{
    r->unreferenced_percent = -1;
    if (!r->listed)
        return;
    double unref = (double)r->unreferenced.bytes;
    double all = unref + (double)r->retained_data_files.bytes +
                 (double)r->retained_delete_files.bytes;
    r->unreferenced_percent = all > 0 ? 100.0 * unref / all : 0;
}

int icm_table_health(icm_health_report **out, icm_table *t, const icm_health_options *opts)
{
    icm_health_options defaults = ICM_HEALTH_OPTIONS_INIT;
    const icm_health_options *o = opts != NULL ? opts : &defaults;
    if (out != NULL)
        *out = NULL;
    if (out == NULL || t == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_table_health: out and t are required");
    if (o->version < 1 || o->version > ICM_HEALTH_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_health_options: unknown version %u (use "
                              "ICM_HEALTH_OPTIONS_INIT)",
                              o->version);
    if (o->small_manifest_bytes < 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_health_options: small_manifest_bytes is negative");
    icm_health_report *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return icm__error_oom();
    r->now_ms = o->now_ms != 0 ? o->now_ms : icm__now_ms();
    r->current_metadata_bytes = -1;
    r->metadata_files.bytes = -1;
    r->unreferenced.bytes = -1;
    int rc = o->no_listing ? 0 : measure_unreferenced(r, t, o);
    if (!r->listed)
        r->unreferenced.bytes = -1;
    const icm_table_metadata *md = icm_table_get_metadata(t);
    const char *loc = icm_table_get_metadata_location(t);
    if (rc == 0 && loc != NULL && (r->metadata_location = icm__strdup(loc)) == NULL)
        rc = icm__error_oom();
    if (rc == 0) {
        measure_snapshots(r, md);
        r->small_manifest_bytes = small_manifest_bound(md, o->small_manifest_bytes);
        rc = measure_referenced(r, icm_table_get_fileio(t), md);
    }
    if (rc == 0 && !o->no_listing)
        rc = measure_metadata_files(r, icm_table_get_fileio(t), md);
    if (rc == 0)
        rc = measure_integrity(r, icm_table_get_fileio(t), md);
    if (rc != 0) {
        icm_health_report_free(r);
        return rc;
    }
    percentages(r);
    *out = r;
    return 0;
}
