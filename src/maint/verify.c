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
 * On an object store a stat is a request (a HEAD: tens of milliseconds of waiting), and a
 * table has as many files as it has: one at a time, verifying the 95,000 files of a large
 * table took minutes. Such files are therefore queued, and stat'ed all at once (io/probe.h:
 * the S3 back end sends the HEADs from one thread, s3.check.max-in-flight at a time) when
 * PENDING_MAX are queued, when a file of the local disk comes (whose stat is cheap, so
 * it is judged at once, after those before it), and when the caller is done with a walk
 * (icm__verifier_flush). They are judged in the order they were reached either way, so issues
 * come in walk order and the counts are the ones a stat per file in turn gives.
 *
 * Read-only: the storage calls here are the walk's reads and stats.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "catalog/catalog_internal.h"
#include "icemaint/expire.h"
#include "io/fileio_internal.h"
#include "maint/verify.h"
#include "util/location.h"
#include "util/location_id.h"
#include "io/probe.h"
#include "util/util.h"

/* Object-store files queued and the stat each got (filled by the stats made at once). */
#define PENDING_MAX 1024

typedef struct pending {
    char *location;
    icm__file_kind kind;
    int64_t want;
    int64_t snapshot_id;
    icm__pathset_hash key;
    int rc;             /* the stat's code */
    int64_t size_bytes; /* rc 0: the size found */
    char *message;      /* rc other than ICM_ENOTFOUND: the stat's error message (or NULL) */
} pending;

struct icm__verifier {
    icm_fileio *io;
    pending queue[PENDING_MAX];
    icm__probe probes[PENDING_MAX]; /* the queue's stats, while they run */
    size_t n_queued;
    icm__verify_options o;     /* (borrowed strings and sets) */
    icm__verify_cb cb;
    void *payload;
    icm__pathset *fine;        /* o.verified (NULL: none, a file reached twice is stat'ed
                                  twice) */
    icm__pathset *flagged;     /* files reported since the last forget */
    char **root_keys;          /* the roots' location keys (o.root_count) */
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

/* Whether the verifier looks at this reached file outside the roots: a content file that
 * looks like a file about to be deleted. */
static bool looks_alike(const icm__verify_options *o, const icm__reached *f)
{
    return o->lookalikes != NULL && f->kind <= ICM__FILE_DELETION_VECTOR &&
           icm__verify_lookalike(o->lookalikes, f->location, f->size_bytes);
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

/* A reached file's stat, judged. */
static int judge(icm__verifier *v, const pending *f)
{
    icm__verify_issue issue = {ICM__VERIFY_MISSING, f->location, f->kind, f->want, -1,
                               f->snapshot_id, 0, ""};
    if (f->rc == ICM_ENOMEM)
        return ICM_ENOMEM;
    if (f->rc == ICM_EUNREACHABLE) /* a wrong endpoint, not this file's state: stop */
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EUNREACHABLE, f->location, "%s",
                              f->message != NULL ? f->message : "the store cannot be reached");
    if (f->rc == ICM_ENOTFOUND)
        return report(v, &issue, f->key);
    if (f->rc != 0) {
        issue.what = ICM__VERIFY_UNREADABLE;
        issue.code = f->rc;
        issue.message = f->message != NULL ? f->message : "";
        return report(v, &issue, f->key);
    }
    if (f->want >= 0 && f->size_bytes != f->want) {
        issue.what = ICM__VERIFY_SIZE;
        issue.actual_size_bytes = f->size_bytes;
        return report(v, &issue, f->key);
    }
    return v->fine != NULL ? icm__pathset_add_hash(v->fine, f->key, NULL) : 0;
}

/* Whether the file needs no stat: reported already (then not counted either), or found fine
 * before (counted). */
static bool judged_before(icm__verifier *v, icm__pathset_hash key)
{
    if (icm__pathset_contains_hash(v->flagged, key))
        return true;
    if (v->fine != NULL && icm__pathset_contains_hash(v->fine, key)) {
        v->counts.checked++;
        return true;
    }
    return false;
}

/* Stat one file into f (its code, size, and the error's message, copied: the thread's last
 * error is cleared). */
static void stat_one(icm_fileio *io, pending *f)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    f->rc = icm_fileio_stat(&info, io, f->location);
    f->size_bytes = f->rc == 0 ? info.size_bytes : -1;
    f->message = NULL;
    if (f->rc != 0 && f->rc != ICM_ENOTFOUND && f->rc != ICM_ENOMEM &&
        (f->message = icm__strdup(icm_error_last()->message)) == NULL)
        f->rc = ICM_ENOMEM;
    icm_error_clear();
}

/* Stat the queue's n files at once (io/probe.h: HEADs, many in flight, on an object store),
 * each into its pending entry as stat_one does. Returns 0 or ICM_ENOMEM. */
static int stat_queued(icm__verifier *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v->probes[i] = (icm__probe){.location = v->queue[i].location};
    int rc = icm__fileio_probe_many(v->io, ICM__PROBE_STAT, v->probes, n);
    for (size_t i = 0; i < n; i++) {
        pending *f = &v->queue[i];
        icm__probe *pr = &v->probes[i];
        f->rc = rc == 0 ? pr->rc : rc;
        f->size_bytes = f->rc == 0 ? pr->info.size_bytes : -1;
        f->message = NULL;
        if (f->rc != 0 && f->rc != ICM_ENOTFOUND && f->rc != ICM_ENOMEM) {
            if (pr->error == NULL) { /* (saving it ran out of memory) */
                f->rc = ICM_ENOMEM;
                continue;
            }
            icm__error_restore(pr->error);
            pr->error = NULL;
            if ((f->message = icm__strdup(icm_error_last()->message)) == NULL)
                f->rc = ICM_ENOMEM;
        }
    }
    icm__probes_dispose(v->probes, n);
    icm_error_clear();
    return rc;
}

int icm__verifier_flush(icm__verifier *v)
{
    size_t n = v->n_queued;
    v->n_queued = 0;
    if (n == 0)
        return 0;
    (void)stat_queued(v, n); /* (a failure is every entry's ICM_ENOMEM, judged below) */
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        pending *f = &v->queue[i];
        /* In the order reached: a file reached twice is judged the second time by what its
         * first stat made of it (reported, or found fine), as one stat after another does. */
        if (rc == 0 && !judged_before(v, f->key)) {
            v->counts.checked++;
            rc = judge(v, f);
        }
        icm__free(f->location);
        icm__free(f->message);
    }
    return rc == ICM_ENOMEM ? icm__error_oom() : rc;
}

void icm__verify_issue_name(icm__buf *b, const icm__verify_issue *issue, bool first)
{
    icm__buf_printf(b, "%s%s (%s, snapshot %lld%s)", first ? "" : ", ", issue->location,
                    icm_expire_file_kind_name((icm_expire_file_kind)issue->kind),
                    (long long)issue->snapshot_id,
                    issue->what == ICM__VERIFY_SIZE        ? ", wrong size"
                    : issue->what == ICM__VERIFY_UNREADABLE ? ", cannot be checked"
                    : issue->what == ICM__VERIFY_LOOKALIKE
                        ? ", outside the table, with the name or size of a file about to be "
                          "deleted"
                        : "");
}

int icm__verifier_check(icm__verifier *v, const icm__reached *f)
{
    if (!inside_roots(&v->o, f->location)) {
        /* A spelling the guards do not call inside (`/t/./f`, `/t/x/../f`) but the keep set
         * takes for a file of the table is verified as one; a file outside that looks like a
         * file about to be deleted is a lookalike; any other file outside is not looked at. */
        bool outside;
        int rc = icm__verify_outside_keys(f->location, v->root_keys, v->o.root_count, &outside);
        if (rc != 0)
            return rc;
        bool alike = looks_alike(&v->o, f);
        if (!outside && alike) /* (a link before a `..` may lead out) */
            rc = icm__verify_really_outside(v->io, f->location, v->o.roots, v->o.root_count,
                                            &outside);
        if (rc == 0 && outside && alike) {
            icm__verify_issue issue = {ICM__VERIFY_LOOKALIKE, f->location, f->kind,
                                       f->size_bytes, -1, f->snapshot_id, 0, ""};
            /* Once per location and recorded size: two references to one outside path
             * may record two sizes, and each may stand for another file (adversary round
             * 13). (Apart from a stat's key: the tag.) */
            icm__pathset_hash key;
            if ((rc = check_key(f->location, f->size_bytes, &key)) == 0) {
                key.low ^= UINT64_C(0x6c6f6f6b616c696b);
                rc = report(v, &issue, key);
            }
        }
        /* Outside: not looked at further. Inside by key: stat'ed as a file of the table, by
         * its own spelling (as readers that follow links open it). */
        if (rc != 0 || outside)
            return rc;
    }
    /* A file of the table recording the size of a file about to be deleted: that one may be
     * its twin (verify_twins.c). (An empty file's twin has its bytes.) */
    int rc = 0;
    if (v->o.twins != NULL && f->kind <= ICM__FILE_DELETION_VECTOR && f->size_bytes > 0 &&
        icm__verify_lookalikes_has_size(v->o.lookalikes, f->size_bytes))
        rc = icm__verify_refs_add(v->o.twins, f);
    /* (location borrowed until queued) */
    pending p = {(char *)f->location, f->kind, expected_size(v, f), f->snapshot_id, {0, 0},
                 0, -1, NULL};
    if (rc == 0)
        rc = check_key(f->location, p.want, &p.key);
    if (rc != 0)
        return rc;
    if (!icm__fileio_deletes_locally(v->io, f->location)) {
        /* Queued (counted and judged when the queue is stat'ed, icm__verifier_flush), unless
         * an earlier verdict stands: the queue changes no verdict but its own files'. */
        if (judged_before(v, p.key))
            return 0;
        if ((p.location = icm__strdup(f->location)) == NULL)
            return ICM_ENOMEM;
        v->queue[v->n_queued++] = p;
        return v->n_queued == PENDING_MAX ? icm__verifier_flush(v) : 0;
    }
    rc = icm__verifier_flush(v); /* (the files reached before it first: the walk's order) */
    if (rc == 0 && !judged_before(v, p.key)) {
        v->counts.checked++;
        stat_one(v->io, &p);
        rc = judge(v, &p);
        icm__free(p.message);
    }
    return rc;
}

int icm__verifier_report_unreadable(icm__verifier *v, const icm__reach_report *rep)
{
    int rc = icm__verifier_flush(v);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < rep->failure_count; i++) {
        const icm__reach_failure *f = &rep->failures[i];
        if (f->code == ICM_EUNREACHABLE) /* a wrong endpoint, not this file's state: stop */
            return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EUNREACHABLE, f->location, "%s",
                                  f->message != NULL ? f->message
                                                     : "the store cannot be reached");
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
        rc = icm__pathset_location_hash(f->location, &key);
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
    int rc = icm__pathset_new(&v->flagged, 0);
    if (rc == 0 && opts->root_count > 0 &&
        (v->root_keys = icm__calloc(opts->root_count, sizeof *v->root_keys)) == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < opts->root_count; i++)
        rc = icm__location_key(opts->roots[i], &v->root_keys[i]);
    if (rc != 0) {
        icm__verifier_free(v);
        return ICM_ENOMEM;
    }
    *out = v;
    return 0;
}

void icm__verifier_free(icm__verifier *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->n_queued; i++)
        icm__free(v->queue[i].location); /* (a walk stopped early: never stat'ed) */
    icm__pathset_free(v->flagged);
    for (size_t i = 0; v->root_keys != NULL && i < v->o.root_count; i++)
        icm__free(v->root_keys[i]);
    icm__free(v->root_keys);
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

/* ---- lookalikes ---- */

int icm__verify_lookalikes_add(icm__verify_lookalikes *l, const char *location,
                               int64_t size_bytes)
{
    const char *name = icm__basename(location);
    int rc = icm__strset_add(&l->names, name, strlen(name), NULL);
    if (rc != 0 || size_bytes < 0)
        return rc;
    if (l->size_count == l->size_cap) {
        size_t cap = l->size_cap ? 2 * l->size_cap : 64;
        int64_t *grown = icm__reallocarray(l->sizes, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        l->sizes = grown;
        l->size_cap = cap;
    }
    l->sizes[l->size_count++] = size_bytes;
    return 0;
}

static int by_size(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void icm__verify_lookalikes_seal(icm__verify_lookalikes *l)
{
    if (l->size_count == 0)
        return;
    qsort(l->sizes, l->size_count, sizeof *l->sizes, by_size);
    size_t n = 1;
    for (size_t i = 1; i < l->size_count; i++)
        if (l->sizes[i] != l->sizes[n - 1])
            l->sizes[n++] = l->sizes[i];
    l->size_count = n;
}

bool icm__verify_lookalikes_has_size(const icm__verify_lookalikes *l, int64_t size_bytes)
{
    return size_bytes >= 0 && l->size_count > 0 &&
           bsearch(&size_bytes, l->sizes, l->size_count, sizeof *l->sizes, by_size) != NULL;
}

bool icm__verify_lookalike(const icm__verify_lookalikes *l, const char *location,
                           int64_t size_bytes)
{
    const char *name = icm__basename(location);
    if (icm__strset_contains(&l->names, name, strlen(name)))
        return true;
    return icm__verify_lookalikes_has_size(l, size_bytes);
}

int icm__verify_refs_add(icm__verify_refs *r, const icm__reached *ref)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        icm__reached *grown = icm__reallocarray(r->items, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        r->items = grown;
        r->cap = cap;
    }
    icm__reached *item = &r->items[r->n];
    *item = *ref;
    item->lower_bounds = item->upper_bounds = (icm_raw){NULL, 0};
    item->referenced_data_file = NULL;
    /* (the bounds' bytes in one block, lower then upper) */
    size_t len = ref->lower_bounds.len + ref->upper_bounds.len;
    uint8_t *bounds = len > 0 ? icm__malloc(len) : NULL;
    item->location = icm__strdup(ref->location);
    if (ref->referenced_data_file != NULL)
        item->referenced_data_file = icm__strdup(ref->referenced_data_file);
    if (item->location == NULL || (len > 0 && bounds == NULL) ||
        (ref->referenced_data_file != NULL && item->referenced_data_file == NULL)) {
        icm__free((char *)item->location);
        icm__free((char *)item->referenced_data_file);
        icm__free(bounds);
        return ICM_ENOMEM;
    }
    if (ref->lower_bounds.len > 0)
        memcpy(bounds, ref->lower_bounds.data, ref->lower_bounds.len);
    if (ref->upper_bounds.len > 0)
        memcpy(bounds + ref->lower_bounds.len, ref->upper_bounds.data, ref->upper_bounds.len);
    item->lower_bounds = (icm_raw){bounds, ref->lower_bounds.len};
    item->upper_bounds = (icm_raw){bounds != NULL ? bounds + ref->lower_bounds.len : NULL,
                                   ref->upper_bounds.len};
    r->n++;
    return 0;
}

static int ref_by_name(const void *a, const void *b)
{
    return strcmp(icm__basename((*(const icm__reached *const *)a)->location),
                  icm__basename((*(const icm__reached *const *)b)->location));
}

static int ref_by_size(const void *a, const void *b)
{
    int64_t x = (*(const icm__reached *const *)a)->size_bytes;
    int64_t y = (*(const icm__reached *const *)b)->size_bytes;
    return (x > y) - (x < y);
}

/* By size, then by what else an entry says of its file (verify_twins.c takes each such
 * group at once). */
static int ref_by_facts(const void *a, const void *b)
{
    const icm__reached *x = *(const icm__reached *const *)a, *y = *(const icm__reached *const *)b;
    int by = ref_by_size(a, b);
    if (by == 0)
        by = (x->file_format > y->file_format) - (x->file_format < y->file_format);
    if (by == 0)
        by = (x->record_count > y->record_count) - (x->record_count < y->record_count);
    if (by == 0)
        by = (x->bounds > y->bounds) - (x->bounds < y->bounds);
    if (by == 0)
        by = (x->partition.shape > y->partition.shape) - (x->partition.shape < y->partition.shape);
    if (by == 0)
        by = (x->partition.values > y->partition.values) -
             (x->partition.values < y->partition.values);
    if (by == 0)
        by = (x->added_snapshot_id > y->added_snapshot_id) -
             (x->added_snapshot_id < y->added_snapshot_id);
    return by;
}

/* ... then location (messages name the same reference run after run). */
static int ref_by_size_then_facts(const void *a, const void *b)
{
    int by = ref_by_facts(a, b);
    return by != 0 ? by
                   : strcmp((*(const icm__reached *const *)a)->location,
                            (*(const icm__reached *const *)b)->location);
}

int icm__verify_refs_seal(icm__verify_refs *r)
{
    if (r->n == 0)
        return 0;
    r->by_name = icm__reallocarray(NULL, r->n, sizeof *r->by_name);
    r->by_size = icm__reallocarray(NULL, r->n, sizeof *r->by_size);
    r->group_end = icm__reallocarray(NULL, r->n, sizeof *r->group_end);
    if (r->by_name == NULL || r->by_size == NULL || r->group_end == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < r->n; i++)
        r->by_name[i] = r->by_size[i] = &r->items[i];
    qsort(r->by_name, r->n, sizeof *r->by_name, ref_by_name);
    qsort(r->by_size, r->n, sizeof *r->by_size, ref_by_size_then_facts);
    /* (from the last: each one's group ends where the next one's does, or right after it) */
    for (size_t i = r->n; i-- > 0;)
        r->group_end[i] = i + 1 < r->n && ref_by_facts(&r->by_size[i], &r->by_size[i + 1]) == 0
                              ? r->group_end[i + 1]
                              : i + 1;
    return 0;
}

int icm__verify_refs_stood_for(const icm__verify_refs *r, const char *snapshot_word,
                               const char *outside_of, const char *location,
                               int64_t size_bytes, char **why)
{
    *why = NULL;
    if (r->by_name == NULL)
        return 0; /* (none, or not sealed) */
    icm__reached probe = {location, ICM__FILE_DATA, size_bytes, 0, -1, ICM_FILE_FORMAT_OTHER, 0,
                          INT64_MIN, {NULL, 0}, {NULL, 0}, {0, 0}, NULL, 0, 0};
    const icm__reached *key = &probe;
    const icm__reached *const *hit =
        bsearch(&key, r->by_name, r->n, sizeof *r->by_name, ref_by_name);
    const char *by = "name";
    if (hit == NULL && size_bytes >= 0) {
        hit = bsearch(&key, r->by_size, r->n, sizeof *r->by_size, ref_by_size);
        by = "size";
    }
    if (hit == NULL)
        return 0;
    const icm__reached *ref = *hit;
    *why = icm__sprintf("not deleted: %s %lld references %s, outside %s, with this file's %s "
                        "(%lld bytes recorded): a damaged manifest entry may have moved this "
                        "file's reference there, so the table may still need it; kept",
                        snapshot_word, (long long)ref->snapshot_id, ref->location, outside_of,
                        by, (long long)ref->size_bytes);
    return *why != NULL ? 0 : ICM_ENOMEM;
}

int icm__verify_referenced_digest(const char *location, uint64_t *out)
{
    char *key = NULL;
    int rc = icm__location_key(location, &key);
    *out = rc == 0 ? XXH3_64bits(key, strlen(key)) : 0;
    *out += *out == 0; /* (0 is "unknown") */
    icm__free(key);
    return rc;
}

void icm__verify_refs_dispose(icm__verify_refs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        icm__free((char *)r->items[i].location);
        icm__free((char *)r->items[i].referenced_data_file);
        icm__free((void *)r->items[i].lower_bounds.data); /* (the block of both) */
    }
    icm__free(r->items);
    icm__free(r->by_name);
    icm__free(r->by_size);
    icm__free(r->group_end);
    *r = (icm__verify_refs)ICM__VERIFY_REFS_INIT;
}

int icm__verify_outside_keys(const char *location, char *const *root_keys, size_t n,
                            bool *outside)
{
    *outside = true;
    char *key = NULL;
    int rc = icm__location_key(location, &key);
    for (size_t i = 0; rc == 0 && *outside && i < n; i++)
        *outside = !icm__location_id_within(key, strlen(key), root_keys[i],
                                            strlen(root_keys[i]));
    icm__free(key);
    return rc;
}

int icm__verify_really_outside(icm_fileio *io, const char *location,
                               const char *const *roots, size_t n, bool *outside)
{
    *outside = false;
    char *real = NULL;
    int rc = icm_fileio_resolve(&real, io, location);
    if (rc != 0) { /* missing, or not resolvable: the stat says so */
        if (rc != ICM_ENOMEM)
            icm_error_clear();
        return rc == ICM_ENOMEM ? rc : 0;
    }
    /* (compared by location key: a back end without links gives the spelling back) */
    char *key = NULL;
    rc = icm__location_key(real, &key);
    icm_free(real);
    *outside = true;
    for (size_t i = 0; rc == 0 && *outside && i < n; i++) {
        char *real_root = NULL, *root_key = NULL;
        int got = icm_fileio_resolve(&real_root, io, roots[i]);
        if (got == ICM_ENOMEM)
            rc = got;
        else if (got != 0)
            icm_error_clear(); /* (a root not there: compared as written) */
        if (rc == 0 && (rc = icm__location_key(got == 0 ? real_root : roots[i], &root_key)) == 0)
            *outside = !icm__location_id_within(key, strlen(key), root_key, strlen(root_key));
        icm_free(real_root);
        icm__free(root_key);
    }
    icm__free(key);
    return rc;
}

void icm__verify_lookalikes_dispose(icm__verify_lookalikes *l)
{
    icm__strset_dispose(&l->names);
    icm__free(l->sizes);
    *l = (icm__verify_lookalikes)ICM__VERIFY_LOOKALIKES_INIT;
}

/* ---- the walk ---- */

static int on_reached(const icm__reached *f, void *payload)
{
    return icm__verifier_check(payload, f);
}

/* The entries whose bounds' bytes the twins keep: those of a planned file's size. */
static bool twin_bounds(int64_t size_bytes, const void *ctx)
{
    return icm__verify_lookalikes_has_size(ctx, size_bytes);
}

int icm__verify_walk(icm_fileio *io, const icm_table_metadata *md,
                     const icm__verify_options *opts, icm__verify_cb cb, void *payload,
                     icm__verify_counts *counts)
{
    icm__verifier *v = NULL;
    int rc = icm__verifier_new(&v, io, opts, cb, payload);
    bool twins = opts->twins != NULL && opts->lookalikes != NULL;
    icm__reach_options ro = {opts->snapshot_ids,       opts->snapshot_id_count,
                             opts->read_entries,       NULL,
                             true,                     NULL,
                             opts->twins != NULL,      twins ? twin_bounds : NULL,
                             twins ? opts->lookalikes : NULL};
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
