/*
 * maint/orphans_inventory.c: an S3 Inventory report as the sweep's listing
 * (options.inventory; the report is read by maint/inventory.h).
 *
 * The report is a snapshot of the bucket at its creationTimestamp, so three rules make it safe
 * to delete from (docs/semantics.md, "Inventory input"):
 *  - it must list the table's bucket (sourceBucket) and be recent (max_inventory_age_ms,
 *    default 7 days): an old report names files long gone, and its cutoff logic grows stale;
 *  - a file written after the report is not in it, so it is never a candidate (kept), and the
 *    presence check asks storage about every referenced file the report lacks (a file list's
 *    rule: icm__orphans_check_presence) instead of refusing;
 *  - a file in it may have gone or changed since: the last check before each delete stats it
 *    (gone: ALREADY_GONE, not an error; another size or modification time, to the second:
 *    KEPT), as for a listing.
 * Every row is classified as a listed file (icm__orphans_take_listed) with the report's size
 * and time; a row without them (a report configured without Size or LastModifiedDate) is
 * stat'ed if it would be a candidate. The report is trusted for its data rows as candidates
 * only, never as proof that nothing else is there: the candidates' folders are looked at live
 * for other tables and formats (icm__orphans_check_snapshot_folders, orphans_nested.c).
 *
 * A key may have several rows (a duplicated row, a report without IsLatest listing versions):
 * each file is one candidate (icm__orphans_take_row, icm__orphans_merge_rows; a file list's
 * lines too). Rows that agree are one; rows that disagree (another size or modification time,
 * or one too recent to delete) say the snapshot does not know which file is there: the file is
 * kept, with a warning. The data files' checksums are checked as they end,
 * before anything is deleted (the plan is made whole first).
 *
 * A shard (options.shard_count >= 2, docs/SHARDS.md) classifies only the rows of its key range
 * (take_file passes the others by) and then reads the report again for the names of the rest
 * (icm__orphans_inventory_outside_range, icm__orphans_take_outside_name): another format's
 * folder refuses it and another table's or an unreadable `*.metadata.json` is judged, as in the
 * unsharded run; nothing else of those rows is kept, so memory still divides by N.
 *
 * Read-only by construction, as every planning file of the sweep (orphans_plan.h).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "icemaint/orphans.h"
#include "maint/inventory.h"
#include "maint/orphans_internal.h"
#include "maint/orphans_plan.h"
#include "util/strset.h"

/* ------------------------------------------------------------------------------------------ */
/* a snapshot's rows, one candidate per file                                                   */

int icm__orphans_take_row(plan *p, icm__strset *recent, const icm_file_info *info,
                          bool may_stat)
{
    icm_orphan_result *r = p->r;
    size_t too_recent = r->too_recent;
    int rc = icm__orphans_take_listed(p, info, may_stat);
    if (rc != 0 || r->too_recent == too_recent)
        return rc;
    return icm__orphans_remember_recent(p, recent, info->location);
}

int icm__orphans_remember_recent(plan *p, icm__strset *recent, const char *location)
{
    /* remembered (unreferenced files this young are few), and counted once */
    bool added;
    int rc = icm__strset_add(recent, location, strlen(location), &added);
    if (rc == 0 && !added)
        p->r->too_recent--;
    return rc;
}

static int cmp_orphan_path(const void *a, const void *b)
{
    return strcmp(((const icm_orphan_file *)a)->path, ((const icm_orphan_file *)b)->path);
}

int icm__orphans_merge_rows(plan *p, const icm__strset *recent, const char *source)
{
    icm_orphan_result *r = p->r;
    if (r->orphan_count > 1) /* (none: orphans may be NULL) */
        qsort(r->orphans, r->orphan_count, sizeof *r->orphans, cmp_orphan_path);
    size_t kept = 0, merged = 0;
    int rc = 0;
    for (size_t i = 0; i < r->orphan_count;) {
        icm_orphan_file *f = &r->orphans[i];
        size_t j = i + 1;
        bool differ = icm__strset_contains(recent, f->path, strlen(f->path));
        for (; j < r->orphan_count && strcmp(r->orphans[j].path, f->path) == 0; j++)
            differ = differ || r->orphans[j].size_bytes != f->size_bytes ||
                     r->orphans[j].mtime_ms != f->mtime_ms;
        if (rc == 0 && differ)
            rc = icm__orphan_warn(r,
                                  "%s: not deleted: %s lists it more than once with different "
                                  "sizes or modification times (or once too recent to delete), "
                                  "so which file is there is not known; kept",
                                  f->path, source);
        if (!differ)
            r->orphans[kept++] = r->orphans[i];
        else
            icm__free(f->path);
        for (size_t k = i + 1; k < j; k++)
            icm__free(r->orphans[k].path);
        merged += !differ && j - i > 1; /* files, not rows */
        i = j;
    }
    r->orphan_count = kept;
    if (rc == 0 && merged > 0)
        rc = icm__orphan_warn(r, "%s: %s lists %zu file%s more than once (same size and "
                              "modification time): each is one candidate",
                              p->list_root, source, merged, merged == 1 ? "" : "s");
    return rc;
}

/* The S3 bucket and scheme of the listing location; false when it is not in an S3 bucket. */
static bool s3_bucket_of(const char *root, char **scheme, char **bucket)
{
    *scheme = *bucket = NULL;
    const char *sep = strstr(root, "://");
    if (sep == NULL)
        return false;
    size_t n = (size_t)(sep - root);
    if (!((n == 2 && strncasecmp(root, "s3", 2) == 0) ||
          (n == 3 && (strncasecmp(root, "s3a", 3) == 0 || strncasecmp(root, "s3n", 3) == 0))))
        return false;
    const char *b = sep + 3;
    size_t blen = strcspn(b, "/");
    if (blen == 0)
        return false;
    *scheme = icm__strndup(root, n);
    *bucket = icm__strndup(b, blen);
    return true;
}

static int check_report(plan *p, const icm__inventory_manifest *m, const char *bucket)
{
    const icm_orphan_options *o = p->o;
    if (strcmp(m->source_bucket, bucket) != 0)
        return icm__orphan_refuse(o->inventory,
                                  "the inventory report lists bucket %s, but %s is in bucket "
                                  "%s; nothing is deleted", m->source_bucket, p->list_root,
                                  bucket);
    int64_t now = o->now_ms != 0 ? o->now_ms : icm__now_ms();
    int64_t max_age = o->max_inventory_age_ms > 0 ? o->max_inventory_age_ms
                                                  : ICM_ORPHAN_DEFAULT_MAX_INVENTORY_AGE_MS;
    if (now - m->creation_ms > max_age)
        return icm__orphan_refuse(o->inventory,
                                  "the inventory report was made %lld h ago (creationTimestamp "
                                  "%lld), more than the %lld h allowed (--max-inventory-age); "
                                  "nothing is deleted",
                                  (long long)((now - m->creation_ms) / 3600000),
                                  (long long)m->creation_ms, (long long)(max_age / 3600000));
    /* A report from the future means a clock is wrong: its age says nothing. */
    if (m->creation_ms > now + 10 * 60 * 1000)
        return icm__orphan_refuse(o->inventory,
                                  "the inventory report's creationTimestamp %lld is in the "
                                  "future (a clock is wrong); nothing is deleted",
                                  (long long)m->creation_ms);
    return 0;
}

/* Every object of the report, as a listed file; *outside counts those not below list_root.
 * `names_only` (a shard's second reading: icm__orphans_inventory_outside_range): each row
 * outside the shard's range goes to icm__orphans_take_outside_name, which keeps only what the
 * guards need; nothing is classified and nothing counted. */
static int take_rows(plan *p, icm__inventory_reader *inv, const char *scheme,
                     const char *bucket, bool names_only, size_t *outside)
{
    icm__strset recent = ICM__STRSET_INIT;
    /* `scheme://bucket/` once; each row's key replaces the previous one after it */
    icm__buf loc = ICM__BUF_INIT;
    icm__buf_printf(&loc, "%s://%s/", scheme, bucket);
    size_t prefix_len = loc.len;
    int rc = loc.oom ? ICM_ENOMEM : 0;
    while (rc == 0) {
        icm__inventory_entry e;
        bool end;
        if ((rc = icm__inventory_next(inv, &e, &end)) != 0 || end)
            break;
        loc.len = prefix_len;
        if (icm__buf_put(&loc, e.key, e.key_len) != 0) {
            rc = ICM_ENOMEM;
            break;
        }
        const char *rest;
        if (!icm__orphans_below_root(p, loc.data, &rest) || rest[0] == '\0') {
            (*outside)++;
            continue;
        }
        icm_file_info info = {sizeof(icm_file_info), loc.data, e.size_bytes, e.mtime_ms};
        rc = names_only ? icm__orphans_take_outside_name(p, &info)
                        : icm__orphans_take_row(p, &recent, &info, true);
    }
    icm__buf_dispose(&loc);
    if (rc == 0 && !names_only)
        rc = icm__orphans_merge_rows(p, &recent, "the inventory report");
    icm__strset_dispose(&recent);
    return rc;
}

/* Open the report and check it against the table (bucket, age); *inv NULL on error. */
static int open_report(plan *p, icm__inventory_reader **inv, char **scheme, char **bucket)
{
    *inv = NULL;
    if (!s3_bucket_of(p->list_root, scheme, bucket))
        return icm__orphan_refuse(p->o->inventory,
                                  "an S3 Inventory report lists an S3 bucket, and %s is not in "
                                  "one; nothing is deleted", p->list_root);
    int rc = *scheme == NULL || *bucket == NULL ? ICM_ENOMEM : 0;
    if (rc == 0)
        rc = icm__inventory_open(inv, p->io, p->o->inventory);
    if (rc == 0)
        rc = check_report(p, icm__inventory_manifest_of(*inv), *bucket);
    return rc;
}

/* The report, read (again, names_only: a shard's second reading) through take_rows. */
static int read_report(plan *p, bool names_only)
{
    char *scheme = NULL, *bucket = NULL;
    icm__inventory_reader *inv = NULL;
    int rc = open_report(p, &inv, &scheme, &bucket);
    size_t outside = 0;
    if (rc == 0)
        rc = take_rows(p, inv, scheme, bucket, names_only, &outside);
    if (rc == 0 && outside > 0 && !names_only)
        rc = icm__orphan_warn(p->r,
                              "%s: %zu object%s of the inventory report lie%s outside it (or "
                              "have a `.` or `..` segment); not part of this sweep",
                              p->list_root, outside, outside == 1 ? "" : "s",
                              outside == 1 ? "s" : "");
    icm__inventory_close(inv);
    icm__free(scheme);
    icm__free(bucket);
    return rc;
}

int icm__orphans_read_inventory(plan *p)
{
    return read_report(p, false);
}

int icm__orphans_inventory_outside_range(plan *p)
{
    /* The same report read again (its manifest and data files checked again as they are
     * read): the rows of the shard's range were classified by icm__orphans_read_inventory. */
    return read_report(p, true);
}
