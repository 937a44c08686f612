/*
 * tests/unit/test_orphans_lazy_stat.c: the orphan sweep over real local files, where the
 * listing gives names only (ICM_LIST_STAT_OPTIONAL) and the sweep stats just the candidates.
 *
 * The table is built with the history builder on spy(fault(local)) (or through a path map:
 * metadata names `s3://...`, files in a temp directory). mtimes are set with utimensat. The
 * spy FileIO records every stat'ed location and the flags of every listing, can delete a file
 * just before its stat goes through (a file removed between listing and stat) or fail the stat
 * of one location. Metadata files the current metadata no longer names are unreferenced too
 * (young here: written now); they are found independently from the raw JSON. Proven:
 * the sweep lists with the flag; referenced files are never stat'ed (the stat'ed set is exactly
 * the unreferenced files, and a deleted orphan once more right before its delete); an old
 * orphan is deleted and reported with its real size and mtime, a young one survives; a file
 * gone before its stat (really gone, or reported gone by the fault FileIO while it still
 * exists) is neither an error nor deleted; another stat error fails the sweep with that code
 * and nothing deleted; file-list lines are stat'ed only when they give no size.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "history.h"
#include "icemaint/sys/fileio.h"
#include "test_orphans_common.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* the spy FileIO                                                                              */

typedef struct spy_io {
    icm_fileio base;
    icm_fileio *inner;      /* owned */
    strv stats;             /* every stat'ed location, in order */
    unsigned list_flags_or; /* flags of every listing, or'ed */
    size_t lists;           /* listings, but for those of a `metadata` folder: */
    size_t md_lists;        /* the sweep's look at the folders enclosing its location */
    size_t other_lists;     /* and of `_delta_log`/`.hoodie` (other_format.h) */
    const char *vanish;     /* deleted (through inner) right before its stat is passed on */
    const char *to_dir;     /* replaced by an empty directory (local path) before its stat */
    const char *fail;       /* its stat fails with fail_code, without reaching inner */
    int fail_code;
} spy_io;

static spy_io *spy_of(icm_fileio *io)
{
    return (spy_io *)io;
}

static int spy_read(icm_fileio *io, const char *l, char **o, size_t *n)
{
    return icm_fileio_read(o, n, spy_of(io)->inner, l);
}
static int spy_read_range(icm_fileio *io, const char *l, int64_t off, void *b, size_t n,
                          size_t *r)
{
    return icm_fileio_read_range(r, spy_of(io)->inner, l, off, b, n);
}
static int spy_create(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_create_new(spy_of(io)->inner, l, d, n);
}
static int spy_write(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_write_replace(spy_of(io)->inner, l, d, n);
}
static int spy_remove(icm_fileio *io, const char *l)
{
    return icm_fileio_delete(spy_of(io)->inner, l);
}
static int spy_stat(icm_fileio *io, const char *l, icm_file_info *o)
{
    spy_io *s = spy_of(io);
    strv_push(&s->stats, l);
    if (s->fail != NULL && strcmp(l, s->fail) == 0)
        return icm__error_set(ICM_ERRCLASS_IO, s->fail_code, l, "spy: injected stat failure");
    if (s->vanish != NULL && strcmp(l, s->vanish) == 0)
        icmt_ok(icm_fileio_delete(s->inner, l));
    if (s->to_dir != NULL && strcmp(l, s->to_dir) == 0) {
        icmt_ok(icm_fileio_delete(s->inner, l));
        assert_int_equal(mkdir(l, 0777), 0);
    }
    return icm_fileio_stat(o, s->inner, l);
}
static int spy_list(icm_fileio *io, const char *p, unsigned flags, icm_list_cb cb, void *payload)
{
    spy_io *s = spy_of(io);
    size_t n = strlen(p);
    if (n >= 9 && strcmp(p + n - 9, "/metadata") == 0)
        s->md_lists++;
    else if ((n >= 11 && strcmp(p + n - 11, "/_delta_log") == 0) ||
             (n >= 8 && strcmp(p + n - 8, "/.hoodie") == 0))
        s->other_lists++;
    else
        s->lists++;
    s->list_flags_or |= flags;
    return icm_fileio_list_flags(s->inner, p, flags, cb, payload);
}
static void spy_free(icm_fileio *io)
{
    spy_io *s = spy_of(io);
    icm_fileio_free(s->inner);
    strv_free(&s->stats);
    free(s);
}

static const icm_fileio_methods SPY_METHODS = {
    ICM_FILEIO_METHODS_VERSION, "spy", spy_read, spy_read_range, spy_create, spy_write,
    spy_remove, spy_stat, NULL, spy_free, spy_list, NULL, NULL, NULL, NULL, NULL};

static void spy_reset(spy_io *s)
{
    strv_free(&s->stats);
    s->list_flags_or = 0;
    s->lists = 0;
    s->md_lists = 0;
    s->other_lists = 0;
    s->vanish = NULL;
    s->to_dir = NULL;
    s->fail = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* environment                                                                                 */

typedef struct env {
    char *tmp;        /* temp directory; the files are in tmp/t */
    char *real;       /* tmp/t */
    char *loc;        /* table location as the metadata names it (real, or s3://... mapped) */
    spy_io *spy;      /* the table's FileIO: spy(fault(local | pathmap(local))) */
    icm_fileio *fault;
    hist *h;
    int64_t now;
    int64_t old;      /* 10 days ago */
    int64_t young;    /* an hour ago */
} env;

static void env_init(env *e, bool mapped)
{
    memset(e, 0, sizeof *e);
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    e->young = e->now - 3600 * 1000;
    e->tmp = icmt_mkdtemp();
    e->real = icmt_sprintf("%s/t", e->tmp);
    e->loc = mapped ? strdup("s3://bucket/wh/t") : strdup(e->real);
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    if (mapped) {
        icm_path_map rule = {e->loc, e->real};
        icm_fileio *pm = NULL;
        icmt_ok(icm_fileio_pathmap_new(&pm, io, &rule, 1));
        io = pm;
    }
    icmt_ok(icm_fileio_fault_new(&e->fault, io));
    e->spy = calloc(1, sizeof *e->spy);
    assert_non_null(e->spy);
    e->spy->base.methods = &SPY_METHODS;
    e->spy->inner = e->fault;
    e->h = hist_new(&e->spy->base, e->loc, 2, false, e->now - 20 * DAY_MS);
}

static void env_free(env *e)
{
    hist_free(e->h);
    icm_fileio_free(&e->spy->base);
    icmt_rmtree(e->tmp);
    free(e->tmp);
    free(e->real);
    free(e->loc);
}

/* A name under the table location, as the metadata names it (caller frees). */
static char *at(const env *e, const char *rel)
{
    return icmt_sprintf("%s/%s", e->loc, rel);
}

/* Write `content` at tmp/t/<rel> with plain libc and set its mtime. */
static void plant_file(const env *e, const char *rel, const char *content, int64_t mtime_ms)
{
    char *p = icmt_sprintf("%s/%s", e->real, rel);
    icmt_write_file(p, content, strlen(content));
    struct timespec ts[2] = {{mtime_ms / 1000, (mtime_ms % 1000) * 1000000},
                             {mtime_ms / 1000, (mtime_ms % 1000) * 1000000}};
    assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
    free(p);
}

static icm_orphan_options opts_at(const env *e)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e->now; /* default cutoff: 3 days before now */
    return o;
}

/* Sweep through a fresh table handle, with the spy and fault counters reset first. */
static int sweep(env *e, const icm_orphan_options *o, icm_orphan_result **out)
{
    icm_table *t = hist_open_table(e->h);
    spy_reset(e->spy);
    icm_fileio_fault_reset(e->fault);
    int rc = icm_orphan_sweep(out, t, o);
    icm_table_free(t);
    return rc;
}

/* The exact set of stat'ed locations (NULL-terminated), each once, but those of `again`
 * (NULL-terminated) twice: the delete phase stats an orphan once more right before its delete
 * (a file changed since the listing is kept). */
static void assert_stats(const env *e, const char *const *expected, const char *const *again)
{
    const strv *s = &e->spy->stats;
    for (size_t i = 0; i < s->n; i++) {
        size_t k = 0;
        while (expected[k] != NULL && strcmp(expected[k], s->v[i]) != 0)
            k++;
        if (expected[k] == NULL)
            print_error("unexpected stat of %s\n", s->v[i]);
        assert_non_null(expected[k]);
    }
    size_t n = 0;
    for (; expected[n] != NULL; n++) {
        size_t times = 0, want = 1;
        for (size_t i = 0; i < s->n; i++)
            times += strcmp(s->v[i], expected[n]) == 0;
        for (size_t k = 0; again[k] != NULL; k++)
            want += strcmp(again[k], expected[n]) == 0;
        if (times != want)
            print_error("%s stat'ed %zu times\n", expected[n], times);
        assert_int_equal(times, want);
    }
    size_t n_again = 0;
    while (again[n_again] != NULL)
        n_again++;
    assert_int_equal(s->n, n + n_again);
}

static const icm_orphan_file *find_orphan(const icm_orphan_result *r, const char *path)
{
    for (size_t i = 0; i < r->orphan_count; i++)
        if (strcmp(r->orphans[i].path, path) == 0)
            return &r->orphans[i];
    return NULL;
}

/* Listed `*.metadata.json` files that the current metadata names neither as itself nor in its
 * metadata-log (from the raw JSON with jansson, not through the code under test). */
static strv fallen_metadata(env *e, const strv *listed)
{
    icm_table *t = hist_open_table(e->h);
    const char *cur = icm_table_get_metadata_location(t);
    char *text = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&text, &len, &e->spy->base, cur));
    json_t *doc = json_loadb(text, len, 0, NULL);
    assert_non_null(doc);
    strv named = {NULL, 0}, fallen = {NULL, 0};
    strv_push(&named, cur);
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(doc, "metadata-log"), i, entry)
        strv_push(&named, json_string_value(json_object_get(entry, "metadata-file")));
    for (i = 0; i < listed->n; i++)
        if (strstr(listed->v[i], ".metadata.json") != NULL && !strv_has(&named, listed->v[i]))
            strv_push(&fallen, listed->v[i]);
    json_decref(doc);
    icm_free(text);
    icm_table_free(t);
    strv_free(&named);
    return fallen;
}

/* `a` + `b` + NULL as a new array of borrowed strings (free() it). */
static const char **join(const char *const *a, const strv *b)
{
    size_t n = 0;
    while (a[n] != NULL)
        n++;
    const char **v = calloc(n + b->n + 1, sizeof *v);
    assert_non_null(v);
    memcpy(v, a, n * sizeof *v);
    for (size_t i = 0; i < b->n; i++)
        v[n + i] = b->v[i];
    return v;
}

/* ------------------------------------------------------------------------------------------ */
/* tests                                                                                       */

/* An old orphan is deleted (reported with its real size and mtime, from the stat), a young one
 * survives; only the unreferenced files are stat'ed, the referenced ones never; the listing had
 * the flag. */
static void run_old_and_young(bool mapped)
{
    env e;
    env_init(&e, mapped);
    hist_append(e.h, "main", "A", "B", NULL);
    hist_append(e.h, "main", "C", NULL);
    plant_file(&e, "data/old.parquet", "0123456789", e.old);
    plant_file(&e, "data/young.parquet", "xy", e.young);
    char *old = at(&e, "data/old.parquet"), *young = at(&e, "data/young.parquet");
    strv before = list_all(&e.spy->base, e.loc);
    strv fallen = fallen_metadata(&e, &before); /* young: written just now */

    icm_orphan_options o = opts_at(&e);
    o.dry_run = true;
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(e.spy->lists, 1);
    assert_int_equal(e.spy->list_flags_or, ICM_LIST_STAT_OPTIONAL);
    const char *gone[] = {old, NULL};
    assert_orphans(r, gone);
    const icm_orphan_file *f = find_orphan(r, old);
    assert_int_equal(f->size_bytes, 10);
    assert_int_equal(f->mtime_ms, e.old);
    assert_int_equal(r->total_bytes, 10);
    assert_int_equal(r->too_recent, 1 + fallen.n);
    assert_int_equal(r->listed, before.n);
    assert_int_equal(r->referenced_listed, before.n - 2 - fallen.n);
    const char *candidates[] = {old, young, NULL};
    const char **stated = join(candidates, &fallen);
    const char *none[] = {NULL};
    assert_stats(&e, stated, none);
    assert_int_equal(icm_fileio_fault_count(e.fault, ICM_IO_STAT), 2 + fallen.n);
    icm_orphan_result_free(r);

    o.dry_run = false;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, gone);
    assert_int_equal(r->deleted, 1);
    assert_int_equal(r->total_bytes, 10);
    assert_stats(&e, stated, gone);
    icm_orphan_result_free(r);
    strv after = list_all(&e.spy->base, e.loc);
    assert_survivors(&before, &after, gone);

    free(stated);
    strv_free(&after);
    strv_free(&fallen);
    strv_free(&before);
    free(old);
    free(young);
    env_free(&e);
}

static void test_old_deleted_young_kept_local(void **state)
{
    (void)state;
    run_old_and_young(false);
}

static void test_old_deleted_young_kept_through_path_map(void **state)
{
    (void)state;
    run_old_and_young(true);
}

/* What happens to data/changing.parquet (an old orphan) between the listing and its stat. */
typedef enum { GONE, BECOMES_DIRECTORY } surprise;

/*
 * An old orphan data/old.parquet and data/changing.parquet, which is deleted (GONE) or replaced
 * by an empty directory (BECOMES_DIRECTORY) right before its stat: no error; only old.parquet
 * is reported and deleted; changing.parquet is no longer a file the listing saw.
 */
static void run_surprise_before_stat(surprise what)
{
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    plant_file(&e, "data/old.parquet", "x", e.old);
    plant_file(&e, "data/changing.parquet", "y", e.old);
    char *old = at(&e, "data/old.parquet"), *changing = at(&e, "data/changing.parquet");
    strv before = list_all(&e.spy->base, e.loc);
    strv fallen = fallen_metadata(&e, &before);

    icm_orphan_options o = opts_at(&e);
    icm_table *t = hist_open_table(e.h);
    spy_reset(e.spy);
    icm_fileio_fault_reset(e.fault);
    if (what == GONE)
        e.spy->vanish = changing;
    else
        e.spy->to_dir = changing;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    icm_table_free(t);
    const char *gone[] = {old, NULL};
    assert_orphans(r, gone);
    assert_int_equal(r->deleted, 1);
    assert_int_equal(r->failed, 0);
    assert_int_equal(r->too_recent, fallen.n);
    assert_int_equal(r->listed, before.n); /* the listing did give it */
    /* the spy's own delete of the changing file, then the sweep's of the old orphan */
    assert_int_equal(icm_fileio_fault_count(e.fault, ICM_IO_DELETE), 2);
    icm_orphan_result_free(r);
    if (what == BECOMES_DIRECTORY) {
        struct stat st;
        assert_int_equal(stat(changing, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
    }
    strv after = list_all(&e.spy->base, e.loc);
    const char *expected_gone[] = {old, changing, NULL}; /* neither is a file any more */
    assert_survivors(&before, &after, expected_gone);

    strv_free(&after);
    strv_free(&fallen);
    strv_free(&before);
    free(old);
    free(changing);
    env_free(&e);
}

static void test_file_gone_before_stat(void **state)
{
    (void)state;
    run_surprise_before_stat(GONE);
}

static void test_file_replaced_by_directory_before_stat(void **state)
{
    (void)state;
    run_surprise_before_stat(BECOMES_DIRECTORY);
}

/* The FileIO says "not found" for a candidate that still exists: not a candidate, so a real
 * run leaves it alone (and the sweep succeeds). */
static void test_reported_gone_is_not_deleted(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    plant_file(&e, "data/old.parquet", "x", e.old);
    char *old = at(&e, "data/old.parquet");
    strv before = list_all(&e.spy->base, e.loc);
    icm_orphan_options o = opts_at(&e);
    icm_table *t = hist_open_table(e.h);
    spy_reset(e.spy);
    icm_fileio_fault_reset(e.fault);
    e.spy->fail = old;
    e.spy->fail_code = ICM_ENOTFOUND;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    icm_table_free(t);
    const char *none[] = {NULL};
    assert_orphans(r, none);
    assert_true(strv_has(&e.spy->stats, old));
    assert_int_equal(icm_fileio_fault_count(e.fault, ICM_IO_DELETE), 0);
    icm_orphan_result_free(r);
    strv after = list_all(&e.spy->base, e.loc);
    assert_survivors(&before, &after, none);
    strv_free(&after);
    strv_free(&before);
    free(old);
    env_free(&e);
}

/* Any other stat failure stops the sweep with that code, before anything is deleted. */
static void test_stat_error_fails_sweep(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    plant_file(&e, "data/old1.parquet", "x", e.old);
    plant_file(&e, "data/old2.parquet", "y", e.old);
    char *old2 = at(&e, "data/old2.parquet");
    strv before = list_all(&e.spy->base, e.loc);
    icm_orphan_options o = opts_at(&e);
    icm_table *t = hist_open_table(e.h);
    spy_reset(e.spy);
    icm_fileio_fault_reset(e.fault);
    e.spy->fail = old2;
    e.spy->fail_code = ICM_EAUTH;
    icm_orphan_result *r = NULL;
    assert_int_equal(icm_orphan_sweep(&r, t, &o), ICM_EAUTH);
    assert_null(r);
    assert_string_equal(icm_error_last()->location, old2);
    icm_table_free(t);
    assert_int_equal(icm_fileio_fault_count(e.fault, ICM_IO_DELETE), 0);
    strv after = list_all(&e.spy->base, e.loc);
    const char *none[] = {NULL};
    assert_survivors(&before, &after, none);
    strv_free(&after);
    strv_free(&before);
    free(old2);
    env_free(&e);
}

/* File-list lines keep their rule: an unknown mtime is too recent, and nothing is stat'ed. */
static void test_file_list_lines_stated_only_without_a_size(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    plant_file(&e, "data/old.parquet", "0123", e.old);
    plant_file(&e, "data/no-mtime.parquet", "x", e.old);
    plant_file(&e, "data/no-size.parquet", "xyz", e.old);
    char *old = at(&e, "data/old.parquet"), *no_mtime = at(&e, "data/no-mtime.parquet");
    char *no_size = at(&e, "data/no-size.parquet");
    strv before = list_all(&e.spy->base, e.loc);
    strv fallen = fallen_metadata(&e, &before); /* old by the file list's word */
    char *list = icmt_sprintf("%s/inventory.tsv", e.tmp);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    for (size_t i = 0; i < before.n; i++) {
        if (strcmp(before.v[i], no_mtime) == 0)
            fprintf(f, "%s\t1\t\n", before.v[i]);
        else if (strcmp(before.v[i], no_size) == 0)
            fprintf(f, "%s\t-1\t%lld\n", before.v[i], (long long)e.old);
        else
            fprintf(f, "%s\t4\t%lld\n", before.v[i], (long long)e.old);
    }
    fclose(f);
    icm_orphan_options o = opts_at(&e);
    o.file_list = list;
    o.dry_run = true;
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *planted[] = {old, no_size, NULL};
    const char **expected = join(planted, &fallen);
    assert_orphans(r, expected);
    free(expected);
    assert_int_equal(find_orphan(r, no_size)->size_bytes, -1); /* as the line says */
    assert_int_equal(r->too_recent, 1);
    /* A row with a size is never stat'ed; the row without one is, once: the check for
     * entries damaged onto another file compares orphans by size (adversary round 14, F4). */
    const char *looked_up[] = {no_size, NULL}, *none[] = {NULL};
    assert_stats(&e, looked_up, none);
    assert_int_equal(e.spy->lists, 0);
    icm_orphan_result_free(r);
    free(list);
    free(old);
    free(no_mtime);
    free(no_size);
    strv_free(&fallen);
    strv_free(&before);
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_old_deleted_young_kept_local),
        cmocka_unit_test(test_old_deleted_young_kept_through_path_map),
        cmocka_unit_test(test_file_gone_before_stat),
        cmocka_unit_test(test_file_replaced_by_directory_before_stat),
        cmocka_unit_test(test_reported_gone_is_not_deleted),
        cmocka_unit_test(test_stat_error_fails_sweep),
        cmocka_unit_test(test_file_list_lines_stated_only_without_a_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
