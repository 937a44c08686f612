/*
 * maint/check.c: the table integrity check (icemaint/check.h): the metadata file, then each
 * chosen snapshot with the verifier (verify.h), sizes compared, its problems collected into
 * that snapshot's report.
 *
 * Snapshots share most of their files, and a long history has thousands of snapshots, so
 * nothing is read or stat'ed once per snapshot that needs not be: each snapshot's own walk
 * reads only its manifest list (its list, manifests and statistics files are judged there),
 * and each manifest's live entries are read and verified the first time a snapshot lists it,
 * their problems kept with the manifest and handed to every later snapshot that lists it.
 * Files found fine are remembered (keys of location and expected size), so each is stat'ed
 * once; a file with a problem is stat'ed again where its snapshot's own files are judged.
 *
 * Problems are interned: one record per distinct (what, recorded size, path), and each
 * snapshot holds indices into them while the check runs (pointers once it is done), so a
 * table whose every file is missing costs a word per snapshot and file.
 *
 * Never deletes, writes or commits: the storage calls here are the walk's reads and stats
 * (tests/unit/test_verify.c checks the object file with nm).
 */
#include <stdlib.h>
#include <string.h>

#include "icemaint/check.h"
#include "catalog/catalog_internal.h"
#include "maint/verify.h"
#include "util/strset.h"
#include "util/util.h"

static const char *const KIND_NAMES[ICM_CHECK_FILE_KIND_COUNT] = {
    "data",          "position_deletes", "equality_deletes",     "deletion_vector", "manifest",
    "manifest_list", "statistics",       "partition_statistics", "metadata",
};

const char *icm_check_file_kind_name(icm_check_file_kind kind)
{
    return (unsigned)kind < ICM_CHECK_FILE_KIND_COUNT ? KIND_NAMES[kind] : "other";
}

const char *icm_check_problem_kind_name(icm_check_problem_kind problem)
{
    switch (problem) {
    case ICM_CHECK_MISSING:
        return "missing";
    case ICM_CHECK_WRONG_SIZE:
        return "wrong_size";
    case ICM_CHECK_UNREADABLE:
        return "unreadable";
    }
    return "other";
}

void icm_check_result_free(icm_check_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->problem_count; i++) {
        icm__free(r->problems[i].path);
        icm__free(r->problems[i].message);
    }
    icm__free(r->problems);
    for (size_t i = 0; i < r->snapshot_count; i++)
        icm__free((void *)r->snapshots[i].problems);
    icm__free(r->snapshots);
    icm__free(r->metadata_location);
    icm__free(r->own_metadata_warning);
    icm__free(r);
}

/* ------------------------------------------------------------------------------------------ */
/* interned problems                                                                           */

/* A growable array of problem indices. */
typedef struct index_vec {
    size_t *items;
    size_t len, cap;
} index_vec;

static int index_push(index_vec *v, size_t index)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        size_t *grown = icm__reallocarray(v->items, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        v->items = grown;
        v->cap = cap;
    }
    v->items[v->len++] = index;
    return 0;
}

/* The distinct problems, in the order found. A problem's key (what, recorded size, path) is in
 * `keys`; keys are added in record order, so their arena offsets (`offs`) rise with the index
 * and a key's record is found by binary search. */
typedef struct problem_table {
    icm_check_problem *items;
    size_t *offs;
    size_t *stamp;   /* per problem: 1 + the index of the snapshot that has it last */
    size_t len, cap;
    icm__strset keys;
    icm__buf key;    /* scratch */
} problem_table;

/* The one-line message of a problem. */
static char *describe(const icm__verify_issue *issue)
{
    const char *kind = icm_check_file_kind_name((icm_check_file_kind)issue->kind);
    switch (issue->what) {
    case ICM__VERIFY_MISSING:
        return icm__sprintf("%s file is missing", kind);
    case ICM__VERIFY_SIZE:
        return icm__sprintf("%s file has %lld bytes; the metadata records %lld", kind,
                            (long long)issue->actual_size_bytes,
                            (long long)issue->expected_size_bytes);
    case ICM__VERIFY_UNREADABLE:
        break;
    case ICM__VERIFY_LOOKALIKE: /* (check gives no lookalikes: never reported) */
        return icm__sprintf("%s file lies outside the table, named like a file about to be "
                            "deleted", kind);
    }
    return icm__sprintf("%s file cannot be read: %s", kind, issue->message);
}

static const icm_check_problem_kind PROBLEM_OF[] = {
    [ICM__VERIFY_MISSING] = ICM_CHECK_MISSING,
    [ICM__VERIFY_SIZE] = ICM_CHECK_WRONG_SIZE,
    [ICM__VERIFY_UNREADABLE] = ICM_CHECK_UNREADABLE,
    [ICM__VERIFY_LOOKALIKE] = ICM_CHECK_UNREADABLE,
};

static int table_grow(problem_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    icm_check_problem *items = icm__reallocarray(t->items, cap, sizeof *items);
    if (items != NULL)
        t->items = items;
    size_t *offs = items != NULL ? icm__reallocarray(t->offs, cap, sizeof *offs) : NULL;
    if (offs != NULL)
        t->offs = offs;
    size_t *stamp = offs != NULL ? icm__reallocarray(t->stamp, cap, sizeof *stamp) : NULL;
    if (stamp == NULL)
        return ICM_ENOMEM; /* (what grew stays: cap does not) */
    t->stamp = stamp;
    t->cap = cap;
    return 0;
}

static int cmp_off(const void *key, const void *elem)
{
    size_t a = *(const size_t *)key, b = *(const size_t *)elem;
    return (a > b) - (a < b);
}

/* The index of `issue`'s problem, recorded on first sight. */
static int intern(problem_table *t, const icm__verify_issue *issue, size_t *index)
{
    icm__buf_clear(&t->key);
    icm__buf_putc(&t->key, (char)issue->what);
    icm__buf_put(&t->key, &issue->expected_size_bytes, sizeof issue->expected_size_bytes);
    icm__buf_puts(&t->key, issue->location);
    if (t->key.oom)
        return ICM_ENOMEM;
    bool added;
    size_t off;
    int rc = icm__strset_put(&t->keys, t->key.data, t->key.len, &added, &off, NULL);
    if (rc != 0)
        return rc;
    if (!added) {
        const size_t *at = bsearch(&off, t->offs, t->len, sizeof *t->offs, cmp_off);
        if (at == NULL)
            return ICM_ENOMEM; /* (its record failed to be made: the check failed then) */
        *index = (size_t)(at - t->offs);
        return 0;
    }
    if (t->len == t->cap && (rc = table_grow(t)) != 0)
        return rc;
    icm_check_problem *p = &t->items[t->len];
    p->problem = PROBLEM_OF[issue->what];
    p->kind = (icm_check_file_kind)issue->kind;
    p->expected_size_bytes = issue->expected_size_bytes;
    p->actual_size_bytes = issue->actual_size_bytes;
    p->code = issue->code;
    p->path = icm__strdup(issue->location);
    p->message = describe(issue);
    if (p->path == NULL || p->message == NULL) {
        icm__free(p->path);
        icm__free(p->message);
        return ICM_ENOMEM;
    }
    t->offs[t->len] = off;
    t->stamp[t->len] = 0;
    *index = t->len++;
    return 0;
}

static void table_dispose(problem_table *t)
{
    for (size_t i = 0; i < t->len; i++) {
        icm__free(t->items[i].path);
        icm__free(t->items[i].message);
    }
    icm__free(t->items);
    icm__free(t->offs);
    icm__free(t->stamp);
    icm__strset_dispose(&t->keys);
    icm__buf_dispose(&t->key);
}

/* ------------------------------------------------------------------------------------------ */
/* the walk                                                                                    */

/* One unique manifest whose live entries were read and verified: read once, however many
 * snapshots list it. */
typedef struct manifest_rec {
    size_t off;           /* its path's offset in check_ctx.manifests (records are in that
                             order, so sorted by it) */
    size_t entries;       /* live entries */
    size_t first, count;  /* its entries' problems: check_ctx.entry_problems[first..+count) */
} manifest_rec;

typedef struct check_ctx {
    icm_fileio *io;
    const icm_table_metadata *md;
    icm__verifier *v;
    icm__pathset *fine;         /* files found fine (keys of location and size) */
    icm__pathset *bad;          /* files with a problem (locations) */
    problem_table problems;
    icm__strset manifests;      /* manifests whose entries were read */
    manifest_rec *recs;
    size_t n_recs, cap_recs;
    index_vec entry_problems;   /* the manifests' entry problems (manifest_rec.first, count) */
    size_t entries_seen;        /* live entries of the manifest being read */
    index_vec *snap;            /* the snapshot's problems; NULL while a manifest's entries
                                   are read (they go to entry_problems) */
    size_t snap_stamp;          /* 1 + the index of the snapshot being checked */
} check_ctx;

/* A problem into the snapshot being checked, once. */
static int give_snapshot(check_ctx *c, size_t index)
{
    if (c->problems.stamp[index] == c->snap_stamp)
        return 0;
    c->problems.stamp[index] = c->snap_stamp;
    return index_push(c->snap, index);
}

static int on_issue(const icm__verify_issue *issue, void *payload)
{
    check_ctx *c = payload;
    size_t index;
    int rc = icm__pathset_add(c->bad, issue->location, NULL);
    if (rc == 0)
        rc = intern(&c->problems, issue, &index);
    if (rc != 0)
        return rc;
    return c->snap != NULL ? give_snapshot(c, index) : index_push(&c->entry_problems, index);
}

static int on_file(const icm__reached *f, void *payload)
{
    check_ctx *c = payload;
    return icm__verifier_check(c->v, f);
}

static int on_entry(const icm__reached *f, void *payload)
{
    check_ctx *c = payload;
    c->entries_seen++;
    return icm__verifier_check(c->v, f);
}

static int cmp_rec_off(const void *key, const void *elem)
{
    size_t a = *(const size_t *)key, b = ((const manifest_rec *)elem)->off;
    return (a > b) - (a < b);
}

static const manifest_rec *find_rec(const check_ctx *c, const char *path)
{
    size_t off;
    if (!icm__strset_lookup(&c->manifests, path, strlen(path), &off, NULL))
        return NULL;
    return bsearch(&off, c->recs, c->n_recs, sizeof *c->recs, cmp_rec_off);
}

/* Read one manifest's live entries and verify them (the manifest itself was judged with its
 * snapshot's files). *out: its record. */
static int read_manifest(check_ctx *c, const icm__manifest_ref *ref, const manifest_rec **out)
{
    if (c->n_recs == c->cap_recs) {
        size_t cap = c->cap_recs ? c->cap_recs * 2 : 64;
        manifest_rec *grown = icm__reallocarray(c->recs, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        c->recs = grown;
        c->cap_recs = cap;
    }
    index_vec *snap = c->snap;
    c->snap = NULL;
    c->entries_seen = 0;
    icm__verifier_forget_issues(c->v); /* (a file two manifests list is in both records) */
    manifest_rec rec = {0, 0, c->entry_problems.len, 0};
    icm__manifest_refs one = {(icm__manifest_ref *)ref, 1, 1}; /* (borrowed: not disposed) */
    icm__reach_report rep;
    int rc = icm__reach_entries(c->io, icm_table_metadata_format_version(c->md), &one, on_entry,
                                c, &rep);
    if (rc == 0)
        rc = icm__verifier_report_unreadable(c->v, &rep);
    icm__reach_report_dispose(&rep);
    c->snap = snap;
    const char *path = ref->mf.manifest_path;
    if (rc == 0)
        rc = icm__strset_put(&c->manifests, path, strlen(path), NULL, &rec.off, NULL);
    if (rc != 0)
        return rc;
    rec.entries = c->entries_seen;
    rec.count = c->entry_problems.len - rec.first;
    c->recs[c->n_recs] = rec;
    *out = &c->recs[c->n_recs++];
    return 0;
}

/*
 * One snapshot: its manifest list, manifests and statistics files (stat'ed unless found fine
 * before), then the live entries of each of its manifests, read the first time a snapshot
 * lists the manifest and remembered with their problems.
 */
static int check_snapshot(check_ctx *c, int64_t id, size_t *files_checked)
{
    icm__verifier_forget_issues(c->v);
    icm__reach_options ro = {&id, 1, false, NULL, true, NULL, false, NULL, NULL};
    icm__manifest_refs refs = {NULL, 0, 0};
    icm__reach_report rep;
    int rc = icm__reach_walk_collect(c->io, c->md, &ro, &refs, on_file, c, &rep);
    if (rc == 0)
        rc = icm__verifier_report_unreadable(c->v, &rep);
    icm__reach_report_dispose(&rep);
    *files_checked = icm__verifier_counts(c->v).checked;
    for (size_t i = 0; rc == 0 && i < refs.len; i++) {
        const manifest_rec *rec = find_rec(c, refs.items[i].mf.manifest_path);
        if (rec == NULL)
            rc = read_manifest(c, &refs.items[i], &rec);
        if (rc != 0)
            break;
        *files_checked += rec->entries;
        for (size_t k = rec->first; rc == 0 && k < rec->first + rec->count; k++)
            rc = give_snapshot(c, c->entry_problems.items[k]);
    }
    icm__manifest_refs_dispose(&refs);
    return rc;
}

/* The metadata file: it exists (nothing records its size). */
static int check_metadata_file(check_ctx *c, const char *location, size_t *problem)
{
    *problem = SIZE_MAX;
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, c->io, location);
    if (rc == 0 || rc == ICM_ENOMEM || rc == ICM_EUNREACHABLE) /* (a wrong endpoint: stop) */
        return rc;
    icm__verify_issue issue = {rc == ICM_ENOTFOUND ? ICM__VERIFY_MISSING : ICM__VERIFY_UNREADABLE,
                               location, (icm__file_kind)ICM_CHECK_FILE_METADATA, -1, -1, 0,
                               rc == ICM_ENOTFOUND ? 0 : rc, icm_error_last()->message};
    rc = intern(&c->problems, &issue, problem);
    icm_error_clear();
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* entry                                                                                       */

/* Which snapshots: every one, the named ones (each must exist), or the current one. */
static int choose(const icm_table_metadata *md, const icm_check_options *o, int64_t **ids,
                  size_t *n)
{
    size_t total = icm_table_metadata_snapshot_count(md);
    size_t cap = o->all ? total : o->snapshot_id_count > 0 ? o->snapshot_id_count : 1;
    *n = 0;
    *ids = icm__calloc(cap ? cap : 1, sizeof **ids);
    if (*ids == NULL)
        return ICM_ENOMEM;
    if (o->all) {
        for (size_t i = 0; i < total; i++)
            (*ids)[(*n)++] = icm_table_metadata_snapshot_at(md, i)->snapshot_id;
        return 0;
    }
    for (size_t i = 0; i < o->snapshot_id_count; i++) {
        if (icm_table_metadata_snapshot_by_id(md, o->snapshot_ids[i]) == NULL)
            return icm__error_set(ICM_ERRCLASS_MAINT, ICM_ENOTFOUND, icm_table_metadata_file(md),
                                  "no snapshot %lld in this metadata",
                                  (long long)o->snapshot_ids[i]);
        (*ids)[(*n)++] = o->snapshot_ids[i];
    }
    int64_t current;
    if (o->snapshot_id_count == 0 && icm_table_metadata_current_snapshot_id(&current, md))
        (*ids)[(*n)++] = current;
    return 0;
}

/* The snapshots' problem indices become pointers into the result's problems (taken from
 * the table: the records no longer move). */
static int settle(check_ctx *c, index_vec *snaps, icm_check_result *r, size_t metadata_problem)
{
    for (size_t i = 0; i < r->snapshot_count; i++) {
        index_vec *v = &snaps[i];
        const icm_check_problem **ptrs = icm__calloc(v->len ? v->len : 1, sizeof *ptrs);
        if (ptrs == NULL)
            return ICM_ENOMEM;
        for (size_t k = 0; k < v->len; k++)
            ptrs[k] = &c->problems.items[v->items[k]];
        r->snapshots[i].problems = ptrs;
        r->snapshots[i].problem_count = v->len;
        r->total_problems += v->len;
        icm__free(v->items);
        memset(v, 0, sizeof *v);
    }
    r->problems = c->problems.items;
    r->problem_count = c->problems.len;
    c->problems.items = NULL;
    c->problems.len = 0;
    if (metadata_problem != SIZE_MAX) {
        r->metadata_problem = &r->problems[metadata_problem];
        r->total_problems++;
    }
    return 0;
}

static int reached_nothing(const icm__reached *f, void *payload)
{
    (void)f;
    (void)payload;
    return 0;
}

/*
 * The snapshots' manifests judged together (reach_walk.c, judge_snapshots: a path named twice
 * where the table's history cannot explain it, a damaged entry's trace): one more walk, which
 * reads the chosen snapshots' entries; a manifest list it finds damaged is a problem of its
 * snapshot (every other failure of that walk was found above, snapshot by snapshot).
 */
static int judge_entries(check_ctx *c, const int64_t *ids, size_t n, index_vec *snaps)
{
    icm__reach_options ro = {ids, n, true, NULL, false, NULL, false, NULL, NULL};
    icm__reach_report rep;
    int rc = icm__reach_walk(c->io, c->md, &ro, reached_nothing, NULL, &rep);
    for (size_t k = 0; rc == 0 && k < rep.failure_count; k++) {
        const icm__reach_failure *f = &rep.failures[k];
        for (size_t i = 0; rc == 0 && f->is_manifest_list && i < n; i++) {
            const icm_snapshot *s = icm_table_metadata_snapshot_by_id(c->md, ids[i]);
            if (s == NULL || s->manifest_list == NULL || strcmp(s->manifest_list, f->location))
                continue;
            icm__verify_issue issue = {ICM__VERIFY_UNREADABLE, f->location,
                                       ICM__FILE_MANIFEST_LIST, -1, -1, ids[i], f->code,
                                       f->message};
            size_t index;
            bool known = false;
            rc = intern(&c->problems, &issue, &index);
            for (size_t j = 0; rc == 0 && j < snaps[i].len; j++)
                known = known || snaps[i].items[j] == index;
            if (rc == 0 && !known)
                rc = index_push(&snaps[i], index);
        }
    }
    icm__reach_report_dispose(&rep);
    return rc;
}

static int run_check(check_ctx *c, const char *metadata_location, const int64_t *ids, size_t n,
                     icm_check_result *r)
{
    size_t metadata_problem = SIZE_MAX;
    index_vec *snaps = icm__calloc(n ? n : 1, sizeof *snaps);
    r->snapshots = icm__calloc(n ? n : 1, sizeof *r->snapshots);
    int rc = snaps != NULL && r->snapshots != NULL ? 0 : ICM_ENOMEM;
    icm__verify_options vo = {NULL, 0, true, true, NULL, 0, c->fine, NULL, NULL};
    if (rc == 0)
        rc = icm__verifier_new(&c->v, c->io, &vo, on_issue, c);
    if (rc == 0 && metadata_location != NULL) {
        rc = check_metadata_file(c, metadata_location, &metadata_problem);
        r->files_checked = 1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        r->snapshots[r->snapshot_count++].snapshot_id = ids[i];
        c->snap = &snaps[i];
        c->snap_stamp = i + 1;
        rc = check_snapshot(c, ids[i], &r->snapshots[i].files_checked);
    }
    if (rc == 0 && n > 0)
        rc = judge_entries(c, ids, n, snaps);
    if (rc == 0) {
        r->files_checked += icm__pathset_count(c->fine) + icm__pathset_count(c->bad);
        rc = settle(c, snaps, r, metadata_problem);
    }
    for (size_t i = 0; snaps != NULL && i < n; i++)
        icm__free(snaps[i].items);
    icm__free(snaps);
    return rc;
}

/* A copy's metadata (cp -a of a table folder) names the original's location: checking it
 * checks the original's files, and a clean report would say nothing of the copy. The
 * own-metadata rule (icm__table_check_own) tells; its refusal becomes the result's warning. */
static int note_own_metadata(icm_fileio *io, const icm_table_metadata *md, const char *md_location,
                             icm_check_result *r)
{
    int rc = icm__table_check_own(io, md, md_location, NULL, md_location, false);
    if (rc == 0 || rc == ICM_ENOMEM)
        return rc;
    if (rc == ICM_EREFUSED &&
        (r->own_metadata_warning = icm__sprintf("the files checked are where this metadata "
                                                "names them, not necessarily the copy's: %s",
                                                icm_error_last()->message)) == NULL) {
        icm_error_clear();
        return ICM_ENOMEM;
    }
    icm_error_clear(); /* (could not tell: the check goes on) */
    return 0;
}

int icm_check_table(icm_check_result **out, icm_fileio *io,
                    const icm_table_metadata *md, const char *metadata_location,
                    const icm_check_options *opts)
{
    if (out != NULL)
        *out = NULL;
    icm_check_options defaults = ICM_CHECK_OPTIONS_INIT;
    const icm_check_options *o = opts != NULL ? opts : &defaults;
    if (io == NULL || md == NULL || out == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_check_table: io, md and out are required");
    if (o->version != ICM_CHECK_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_check_options: unknown version (use ICM_CHECK_OPTIONS_INIT)");
    check_ctx c;
    memset(&c, 0, sizeof c);
    c.io = io;
    c.md = md;
    icm_check_result *r = icm__calloc(1, sizeof *r);
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = r != NULL ? choose(md, o, &ids, &n) : ICM_ENOMEM;
    if (rc == 0 && metadata_location != NULL &&
        (r->metadata_location = icm__strdup(metadata_location)) == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0 && metadata_location != NULL)
        rc = note_own_metadata(io, md, metadata_location, r);
    if (rc == 0)
        rc = icm__pathset_new(&c.fine, 0);
    if (rc == 0)
        rc = icm__pathset_new(&c.bad, 0);
    if (rc == 0)
        rc = run_check(&c, metadata_location, ids, n, r);
    icm__verifier_free(c.v);
    icm__pathset_free(c.fine);
    icm__pathset_free(c.bad);
    table_dispose(&c.problems);
    icm__strset_dispose(&c.manifests);
    icm__free(c.recs);
    icm__free(c.entry_problems.items);
    icm__free(ids);
    if (rc != 0) {
        icm_check_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
