/*
 * tests/unit/test_expire_fixtures.c: a dry-run expiry over every real table in the shared
 * fixtures (index.tsv), read in place through a path-map FileIO (the metadata's `location` →
 * the fixture folder, plus the README's extra prefixes).
 *
 * For each table: expire everything the rules allow (cutoff = now, retain_last 1) as a dry run.
 * It must succeed (or be refused for gc.enabled=false); it must report no unreadable manifest
 * list or manifest unless index.tsv lists missing references; and no planned file may be one
 * that a retained snapshot reaches. The retained set is computed here independently of the
 * keep-set code: a plain list of normalised paths from reading every retained snapshot's
 * manifest list and manifests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "icemaint/catalog.h"
#include "icemaint/expire.h"
#include "icemaint/manifest.h"
#include "testutil.h"
#include "util/location.h"
#include "util/util.h"

typedef struct row {
    char *cols[24];
    size_t n;
} row;

/* Split at tabs, keeping empty columns (strtok would merge them). */
static void split(char *line, row *r)
{
    r->n = 0;
    char *p = line;
    while (r->n < 24) {
        r->cols[r->n++] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL)
            break;
        *tab = '\0';
        p = tab + 1;
    }
}

/* ---- path-map rules for one fixture table ---- */

typedef struct rules {
    icm_path_map map[6];
    char *owned[12];
    size_t n, n_owned;
} rules;

static const char *own(rules *r, char *s)
{
    r->owned[r->n_owned++] = s;
    return s;
}

static void add_rule(rules *r, const char *from, char *to)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->map[i].from, from) == 0) {
            free(to);
            return;
        }
    r->map[r->n].from = own(r, strdup(from));
    r->map[r->n].to = own(r, to);
    r->n++;
}

static void build_rules(rules *r, const char *fixtures, const char *dir, const char *location)
{
    memset(r, 0, sizeof *r);
    if (strcmp(location, "None") != 0) {
        add_rule(r, location, icmt_sprintf("%s/%s", fixtures, dir));
        if (strncmp(location, "./", 2) == 0)
            add_rule(r, location + 2, icmt_sprintf("%s/%s", fixtures, dir));
    }
    if (strncmp(dir, "duckdb-iceberg/", 15) == 0)
        add_rule(r, "data", icmt_sprintf("%s/duckdb-iceberg/data", fixtures));
    if (strncmp(dir, "impala/", 7) == 0)
        add_rule(r, "/test-warehouse/iceberg_test",
                 icmt_sprintf("%s/impala/testdata/data/iceberg_test", fixtures));
}

static void free_rules(rules *r)
{
    for (size_t i = 0; i < r->n_owned; i++)
        free(r->owned[i]);
}

/* ---- the independent retained set: sorted normalised paths ---- */

typedef struct strs {
    char **v;
    size_t n;
} strs;

static int push_norm(strs *s, const char *path)
{
    char *norm = NULL;
    icmt_ok(icm__location_fs_path(path, &norm));
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = strdup(norm);
    icm__free(norm);
    return 0;
}

static int on_entry(const icm_manifest_entry *e, void *payload)
{
    return e->status == ICM_ENTRY_DELETED ? 0 : push_norm(payload, e->data_file.file_path);
}

typedef struct list_ctx {
    icm_fileio *io;
    strs *s;
} list_ctx;

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    list_ctx *c = payload;
    push_norm(c->s, mf->manifest_path);
    (void)icm_manifest_read(c->io, mf, NULL, on_entry, c->s);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void retained_set(icm_fileio *io, const icm_table_metadata *md,
                         const icm_expire_result *r, strs *s)
{
    list_ctx c = {io, s};
    for (size_t i = 0; i < r->retained_count; i++) {
        const icm_snapshot *snap = icm_table_metadata_snapshot_by_id(md, r->retained_ids[i]);
        assert_non_null(snap);
        if (snap->manifest_list != NULL) {
            push_norm(s, snap->manifest_list);
            (void)icm_manifest_list_read(io, snap->manifest_list, NULL, on_manifest, &c);
        }
        for (size_t k = 0; k < snap->manifest_count; k++) {
            push_norm(s, snap->manifests[k]);
            (void)icm_manifest_read_v1_embedded(io, snap->manifests[k], snap->snapshot_id, NULL,
                                                on_entry, s);
        }
    }
    for (size_t i = 0; i < icm_table_metadata_statistics_count(md); i++) {
        const icm_statistics_file *f = icm_table_metadata_statistics_at(md, i);
        for (size_t k = 0; k < r->retained_count; k++)
            if (f->snapshot_id == r->retained_ids[k])
                push_norm(s, f->path);
    }
    if (s->n > 0)
        qsort(s->v, s->n, sizeof *s->v, cmp_str);
    icm_error_clear();
}

static bool in_set(const strs *s, const char *path)
{
    char *norm = NULL;
    icmt_ok(icm__location_fs_path(path, &norm));
    bool found = s->n > 0 && bsearch(&norm, s->v, s->n, sizeof *s->v, cmp_str) != NULL;
    icm__free(norm);
    return found;
}

static void check_planned(const strs *keep, const icm_expire_file *f, size_t n, const char *t)
{
    for (size_t i = 0; i < n; i++) {
        if (in_set(keep, f[i].path))
            print_error("%s: plans to delete retained file %s\n", t, f[i].path);
        assert_false(in_set(keep, f[i].path));
    }
}

typedef struct tally {
    size_t tables, refused, expired, planned, unreadable, unloadable;
} tally;

static void dry_run_table(const char *fixtures, row *rw, tally *tl)
{
    const char *dir = rw->cols[0], *current = rw->cols[7], *location = rw->cols[20];
    const char *missing = rw->n > 21 ? rw->cols[21] : "{}";
    char *md_path = icmt_sprintf("%s/%s/%s", fixtures, dir, current);
    struct stat st;
    if (stat(md_path, &st) != 0) {
        free(md_path);
        return;
    }
    rules rl;
    build_rules(&rl, fixtures, dir, location);
    icm_fileio *local = NULL, *io = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_pathmap_new(&io, local, rl.map, rl.n));
    icm_table *t = NULL;
    int rc = icm_table_open_static(&t, io, md_path);
    if (rc != 0) {
        /* Metadata the parser rejects (the v0 placeholder without format-version, a v3 file
         * without next-row-id) is the metadata module's business: there is no table to
         * expire. Counted and named so a new rejection is visible. */
        print_message("not loadable, skipped: %s: %s\n", dir, icm_error_last()->message);
        tl->unloadable++;
        goto out;
    }
    tl->tables++;
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.dry_run = true;
    o.decide.retain_last = 1;
    o.decide.has_older_than = true;
    o.decide.older_than_ms = INT64_MAX;
    icm_expire_result *r = NULL;
    rc = icm_expire_snapshots(&r, t, &o);
    if (rc == ICM_EREFUSED) {
        tl->refused++;
        goto out;
    }
    if (rc != 0)
        print_error("%s: %s: %s\n", dir, icm_error_code_name(rc), icm_error_last()->message);
    assert_int_equal(rc, 0);
    strs keep = {NULL, 0};
    retained_set(io, icm_table_get_metadata(t), r, &keep);
    check_planned(&keep, r->deleted_files, r->deleted_file_count, dir);
    check_planned(&keep, r->deleted_manifests, r->deleted_manifest_count, dir);
    check_planned(&keep, r->deleted_statistics_files, r->deleted_statistics_file_count, dir);
    size_t unreadable = 0;
    for (size_t i = 0; i < r->problem_count; i++)
        if (r->problems[i].kind == ICM_EXPIRE_PROBLEM_UNREADABLE) {
            unreadable++;
            if (strcmp(missing, "{}") == 0)
                print_error("%s: unreadable %s: %s\n", dir, r->problems[i].location,
                            r->problems[i].message);
        }
    if (strcmp(missing, "{}") == 0)
        assert_int_equal(unreadable, 0);
    tl->expired += r->expired_count;
    tl->planned += r->total;
    tl->unreadable += unreadable;
    for (size_t i = 0; i < keep.n; i++)
        free(keep.v[i]);
    free(keep.v);
    icm_expire_result_free(r);
out:
    icm_table_free(t);
    icm_fileio_free(io);
    free_rules(&rl);
    free(md_path);
}

static void test_dry_run_every_fixture(void **state)
{
    (void)state;
    const char *fixtures = icmt_fixtures_dir();
    char *index = icmt_sprintf("%s/index.tsv", fixtures);
    FILE *f = fopen(index, "r");
    free(index);
    if (f == NULL)
        icmt_skip_because("the fixtures' index %s/index.tsv is missing", fixtures);
    char line[8192];
    tally tl = {0, 0, 0, 0, 0, 0};
    bool header = true;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (header) {
            header = false;
            continue;
        }
        row rw;
        split(line, &rw);
        if (rw.n < 21)
            continue;
        dry_run_table(fixtures, &rw, &tl);
    }
    fclose(f);
    print_message("%zu tables (%zu refused: gc disabled), %zu snapshots would expire, %zu files "
                  "planned, %zu unreadable (tables with missing references)\n",
                  tl.tables, tl.refused, tl.expired, tl.planned, tl.unreadable);
    assert_true(tl.tables >= 90);
    assert_true(tl.unloadable <= 3);
    assert_true(tl.planned > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dry_run_every_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
