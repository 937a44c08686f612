/*
 * maint/check.c: the table integrity check (icemaint/check.h): the metadata file, then each
 * chosen snapshot walked on its own by the verification walk (verify.h) with sizes compared,
 * its problems collected into that snapshot's report.
 *
 * The snapshots share one set of files found fine, so a file many snapshots need is stat'ed
 * once; a file with a problem is stat'ed (and reported) again in each snapshot that needs it,
 * which is what a per-snapshot report says. Each snapshot's walk reads its own manifest list
 * and manifests: a check of every snapshot reads a manifest once per snapshot that lists it.
 *
 * Never deletes, writes or commits: the storage calls here are the walk's reads and stats
 * (tests/unit/test_check.c checks the object file with nm).
 */
#include <string.h>

#include "icemaint/check.h"
#include "maint/verify.h"
#include "util/util.h"

static const char *const KIND_NAMES[ICM_CHECK_FILE_KIND_COUNT] = {
    "data",     "position_deletes", "equality_deletes", "deletion_vector",      "manifest",
    "manifest_list", "statistics",  "partition_statistics", "metadata",
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

static void free_problems(icm_check_problem *problems, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        icm__free(problems[i].path);
        icm__free(problems[i].message);
    }
    icm__free(problems);
}

void icm_check_result_free(icm_check_result *r)
{
    if (r == NULL)
        return;
    free_problems(r->problems, r->problem_count);
    for (size_t i = 0; i < r->snapshot_count; i++)
        free_problems(r->snapshots[i].problems, r->snapshots[i].problem_count);
    icm__free(r->snapshots);
    icm__free(r->metadata_location);
    icm__free(r);
}

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
    }
    return icm__sprintf("%s file cannot be read: %s", kind, issue->message);
}

static const icm_check_problem_kind PROBLEM_OF[] = {
    [ICM__VERIFY_MISSING] = ICM_CHECK_MISSING,
    [ICM__VERIFY_SIZE] = ICM_CHECK_WRONG_SIZE,
    [ICM__VERIFY_UNREADABLE] = ICM_CHECK_UNREADABLE,
};

/* Append a problem to (*problems, *n). */
static int push_problem(icm_check_problem **problems, size_t *n, const icm__verify_issue *issue)
{
    icm_check_problem *grown = icm__reallocarray(*problems, *n + 1, sizeof *grown);
    if (grown == NULL)
        return ICM_ENOMEM;
    *problems = grown;
    icm_check_problem *p = &grown[*n];
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
    (*n)++;
    return 0;
}

/* The snapshot being checked, and the distinct files with a problem so far. */
typedef struct walk_ctx {
    icm_check_snapshot *s;
    icm__pathset *bad;
} walk_ctx;

static int on_issue(const icm__verify_issue *issue, void *payload)
{
    walk_ctx *w = payload;
    int rc = icm__pathset_add(w->bad, issue->location, NULL);
    return rc == 0 ? push_problem(&w->s->problems, &w->s->problem_count, issue) : rc;
}

/* The metadata file: it exists (nothing records its size). */
static int check_metadata_file(icm_fileio *io, icm_check_result *r)
{
    icm_file_info info;
    int rc = icm_fileio_stat(io, r->metadata_location, &info);
    if (rc == 0 || rc == ICM_ENOMEM)
        return rc;
    icm__verify_issue issue = {rc == ICM_ENOTFOUND ? ICM__VERIFY_MISSING : ICM__VERIFY_UNREADABLE,
                               r->metadata_location, (icm__file_kind)ICM_CHECK_FILE_METADATA,
                               -1, -1, 0, rc == ICM_ENOTFOUND ? 0 : rc,
                               icm_error_last()->message};
    rc = push_problem(&r->problems, &r->problem_count, &issue);
    icm_error_clear();
    return rc;
}

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
    if (o->snapshot_id_count == 0 && icm_table_metadata_current_snapshot_id(md, &current))
        (*ids)[(*n)++] = current;
    return 0;
}

static int check_snapshots(icm_fileio *io, const icm_table_metadata *md, const int64_t *ids,
                           size_t n, icm_check_result *r)
{
    icm__pathset *fine = NULL, *bad = NULL;
    int rc = icm__pathset_new(&fine, 0);
    if (rc == 0)
        rc = icm__pathset_new(&bad, 0);
    r->snapshots = rc == 0 ? icm__calloc(n ? n : 1, sizeof *r->snapshots) : NULL;
    if (rc == 0 && r->snapshots == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        walk_ctx w = {&r->snapshots[r->snapshot_count++], bad};
        w.s->snapshot_id = ids[i];
        icm__verify_options vo = {&ids[i], 1, true, true, NULL, 0, fine};
        icm__verify_counts counts;
        rc = icm__verify_walk(io, md, &vo, on_issue, &w, &counts);
        w.s->files_checked = counts.checked;
        r->total_problems += w.s->problem_count;
    }
    if (rc == 0)
        r->files_checked += icm__pathset_count(fine) + icm__pathset_count(bad);
    icm__pathset_free(fine);
    icm__pathset_free(bad);
    return rc;
}

int icm_check_table(icm_fileio *io, const icm_table_metadata *md,
                    const char *metadata_location, const icm_check_options *opts,
                    icm_check_result **out)
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
    icm_check_result *r = icm__calloc(1, sizeof *r);
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = r != NULL ? choose(md, o, &ids, &n) : ICM_ENOMEM;
    if (rc == 0 && metadata_location != NULL) {
        r->metadata_location = icm__strdup(metadata_location);
        rc = r->metadata_location != NULL ? check_metadata_file(io, r) : ICM_ENOMEM;
        r->files_checked = 1;
        r->total_problems = r->problem_count;
    }
    if (rc == 0)
        rc = check_snapshots(io, md, ids, n, r);
    icm__free(ids);
    if (rc != 0) {
        icm_check_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
