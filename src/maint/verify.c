/*
 * maint/verify.c: the verifier and the verification walk (verify.h): every file some
 * snapshots reference, as the keep-set walk reaches it, stat'ed through the FileIO and
 * compared with what the metadata records.
 *
 * Files with an issue go into a set keyed by location and expected size, so each is reported
 * once until the caller forgets them (a walk: once per walk). Given a set of files found fine
 * (check.c: many snapshots share most files), a file found fine is stat'ed once however often
 * it is reached (a second reference recording another size is a second check); without one
 * (expiry: a walk reaches each unique manifest's entries once, so only a file listed by
 * several manifests comes twice) nothing is kept per fine file, which saves a set as large as
 * the table. Manifest lists and manifests the walk could not read are issues of their own,
 * unless they are missing (the stat reported that already).
 *
 * Read-only: the storage calls here are the walk's reads and stats.
 */
#include <string.h>

#include "maint/verify.h"
#include "util/location.h"
#include "util/util.h"

struct icm__verifier {
    icm_fileio *io;
    icm__verify_options o;     /* (borrowed strings and sets) */
    icm__verify_cb cb;
    void *payload;
    icm__pathset *fine;        /* o.verified (NULL: none, a file reached twice is stat'ed
                                  twice) */
    icm__pathset *flagged;     /* files reported since the last forget */
    icm__verify_counts counts;
};

static bool inside_roots(const icm__verify_options *o, const char *location)
{
    if (o->root_count == 0)
        return true;
    for (size_t i = 0; i < o->root_count; i++)
        if (icm__location_is_inside(location, o->roots[i]))
            return true;
    return false;
}

/* A manifest list's size is what the walk read (the metadata records none): never compared. */
static int64_t expected_size(const icm__verifier *v, const icm__reached *f)
{
    if (!v->o.sizes || f->kind == ICM__FILE_MANIFEST_LIST || f->size_bytes < 0)
        return -1;
    return f->size_bytes;
}

/* The key of a check: the location's key, mixed with the size it should have. */
static int check_key(const char *location, int64_t size, icm__pathset_hash *out)
{
    int rc = icm__pathset_location_hash(location, out);
    out->high ^= (uint64_t)size * UINT64_C(0x9E3779B97F4A7C15);
    return rc;
}

static int report(icm__verifier *v, const icm__verify_issue *issue, icm__pathset_hash key)
{
    bool added;
    int rc = icm__pathset_add_hash(v->flagged, key, &added);
    if (rc != 0 || !added)
        return rc;
    v->counts.issues++;
    return v->cb(issue, v->payload);
}

/* The stat of one reached file, judged. */
static int check_file(icm__verifier *v, const icm__reached *f, int64_t want,
                      icm__pathset_hash key)
{
    icm_file_info info;
    int rc = icm_fileio_stat(v->io, f->location, &info);
    icm__verify_issue issue = {ICM__VERIFY_MISSING, f->location, f->kind, want, -1,
                               f->snapshot_id, 0, ""};
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return report(v, &issue, key);
    }
    if (rc != 0) {
        issue.what = ICM__VERIFY_UNREADABLE;
        issue.code = rc;
        issue.message = icm_error_last()->message;
        rc = report(v, &issue, key);
        icm_error_clear();
        return rc;
    }
    if (want >= 0 && info.size_bytes != want) {
        issue.what = ICM__VERIFY_SIZE;
        issue.actual_size_bytes = info.size_bytes;
        return report(v, &issue, key);
    }
    return v->fine != NULL ? icm__pathset_add_hash(v->fine, key, NULL) : 0;
}

int icm__verifier_check(icm__verifier *v, const icm__reached *f)
{
    if (!inside_roots(&v->o, f->location))
        return 0;
    int64_t want = expected_size(v, f);
    icm__pathset_hash key;
    int rc = check_key(f->location, want, &key);
    if (rc != 0)
        return rc;
    if (icm__pathset_contains_hash(v->flagged, key))
        return 0; /* reported already */
    v->counts.checked++;
    if (v->fine != NULL && icm__pathset_contains_hash(v->fine, key))
        return 0;
    return check_file(v, f, want, key);
}

int icm__verifier_report_unreadable(icm__verifier *v, const icm__reach_report *rep)
{
    for (size_t i = 0; i < rep->failure_count; i++) {
        const icm__reach_failure *f = &rep->failures[i];
        if (f->code == ICM_ENOTFOUND || !inside_roots(&v->o, f->location))
            continue;
        icm__verify_issue issue = {ICM__VERIFY_UNREADABLE,
                                   f->location,
                                   f->is_manifest_list ? ICM__FILE_MANIFEST_LIST
                                                       : ICM__FILE_MANIFEST,
                                   -1,
                                   -1,
                                   0,
                                   f->code,
                                   f->message};
        icm__pathset_hash key;
        int rc = icm__pathset_location_hash(f->location, &key);
        key.low ^= UINT64_C(0x5bd1e995); /* (apart from the file's stat issue, if any) */
        if (rc == 0)
            rc = report(v, &issue, key);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icm__verifier_new(icm__verifier **out, icm_fileio *io, const icm__verify_options *opts,
                      icm__verify_cb cb, void *payload)
{
    *out = NULL;
    icm__verifier *v = icm__calloc(1, sizeof *v);
    if (v == NULL)
        return ICM_ENOMEM;
    v->io = io;
    v->o = *opts;
    v->cb = cb;
    v->payload = payload;
    v->fine = opts->verified;
    if (icm__pathset_new(&v->flagged, 0) != 0) {
        icm__free(v);
        return ICM_ENOMEM;
    }
    *out = v;
    return 0;
}

void icm__verifier_free(icm__verifier *v)
{
    if (v == NULL)
        return;
    icm__pathset_free(v->flagged);
    icm__free(v);
}

void icm__verifier_forget_issues(icm__verifier *v)
{
    icm__pathset_clear(v->flagged);
    memset(&v->counts, 0, sizeof v->counts);
}

icm__verify_counts icm__verifier_counts(const icm__verifier *v)
{
    return v->counts;
}

void icm__verifier_set_payload(icm__verifier *v, void *payload)
{
    v->payload = payload;
}

/* ---- the walk ---- */

static int on_reached(const icm__reached *f, void *payload)
{
    return icm__verifier_check(payload, f);
}

int icm__verify_walk(icm_fileio *io, const icm_table_metadata *md,
                     const icm__verify_options *opts, icm__verify_cb cb, void *payload,
                     icm__verify_counts *counts)
{
    icm__verifier *v = NULL;
    int rc = icm__verifier_new(&v, io, opts, cb, payload);
    icm__reach_options ro = {opts->snapshot_ids, opts->snapshot_id_count, opts->read_entries,
                             NULL, true, NULL};
    icm__reach_report rep;
    memset(&rep, 0, sizeof rep);
    if (rc == 0)
        rc = icm__reach_walk(io, md, &ro, on_reached, v, &rep);
    if (rc == 0)
        rc = icm__verifier_report_unreadable(v, &rep);
    icm__reach_report_dispose(&rep);
    if (counts != NULL)
        *counts = v != NULL ? v->counts : (icm__verify_counts){0, 0};
    icm__verifier_free(v);
    return rc;
}
