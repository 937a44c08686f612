/*
 * tests/unit/test_orphans.c: the orphan sweep end to end on tables built with the history
 * builder (tests/unit/history.h) on the in-memory FileIO, whose clock sets each file's mtime.
 *
 * Every test plants strays (old and young), runs icm_orphan_sweep and asserts exactly
 * which files are reported and which survive: survivors = everything listed before minus the
 * hand-listed old strays. The history model (hist_reachable) is an independent oracle that every
 * file of every snapshot is still there. The rules: docs/semantics.md#sweep-keep-set,
 * #sweep-cutoff, #sweep-location-rules and #sweep-refusals.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <jansson.h>

#include "history.h"
#include "icemaint/sys/fileio.h"
#include "util/util.h"
#include "test_orphans_common.h"

#define LOC "/w/t"

typedef struct env {
    icm_fileio *mem;
    hist *h;
    int64_t now;
    int64_t old;    /* mtime of files written "long ago" (10 days) */
    int64_t young;  /* mtime of files written an hour ago */
} env;

static void env_init(env *e, const char *loc, int format_version)
{
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    e->young = e->now - 3600 * 1000;
    icmt_ok(icm_fileio_mem_new(&e->mem));
    icm_fileio_mem_set_time(e->mem, e->old);
    e->h = hist_new(e->mem, loc, format_version, false, e->now - 20 * DAY_MS);
    icm_fileio_mem_set_time(e->mem, e->old);
}

static void env_free(env *e)
{
    hist_free(e->h);
    icm_fileio_free(e->mem);
}

static icm_orphan_options opts_at(const env *e)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e->now;
    return o;
}

/* Sweep through a fresh table handle; returns the code, *out the result (or NULL). */
static int sweep(env *e, const icm_orphan_options *o, icm_orphan_result **out)
{
    icm_table *t = hist_open_table(e->h);
    int rc = icm_orphan_sweep(out, t, o);
    icm_table_free(t);
    return rc;
}

/* Every file the model says some snapshot reaches still exists. */
static void assert_history_intact(env *e)
{
    char **reach = hist_reachable(e->h, NULL, 0);
    for (size_t i = 0; reach[i] != NULL; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        if (icm_fileio_stat(&info, e->mem, reach[i]) != 0)
            print_error("reachable file %s is gone\n", reach[i]);
        icmt_ok(icm_fileio_stat(&info, e->mem, reach[i]));
    }
    hist_strv_free(reach);
}

/* Metadata files the current metadata no longer names (neither current nor in its metadata-log):
 * orphans (docs/semantics.md#sweep-keep-set). Computed from the raw JSON with jansson,
 * independently of the code under test; appended to gone[] (*n updated, strings owned by *hold). */
static void add_fallen_metadata(env *e, const char **gone, size_t *n, strv *hold)
{
    icm_table *t = hist_open_table(e->h);
    const char *cur = icm_table_get_metadata_location(t);
    char *text = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&text, &len, e->mem, cur));
    json_t *doc = json_loadb(text, len, 0, NULL);
    assert_non_null(doc);
    strv named = {NULL, 0};
    strv_push(&named, cur);
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(doc, "metadata-log"), i, entry)
        strv_push(&named, json_string_value(json_object_get(entry, "metadata-file")));
    strv all = list_all(e->mem, LOC "/metadata");
    for (i = 0; i < all.n; i++) {
        if (strstr(all.v[i], ".metadata.json") != NULL && !strv_has(&named, all.v[i])) {
            strv_push(hold, all.v[i]);
            gone[(*n)++] = hold->v[hold->n - 1];
        }
    }
    gone[*n] = NULL;
    strv_free(&all);
    strv_free(&named);
    json_decref(doc);
    icm_free(text);
    icm_table_free(t);
}

static bool message_has(const char *needle)
{
    const char *m = icm_error_last()->message;
    if (strstr(m, needle) == NULL) {
        print_error("message '%s' lacks '%s'\n", m, needle);
        return false;
    }
    return true;
}

/* One stray in data/; the default cutoff protects it while it is young; a dry run
 * reports it and keeps it; a real run deletes it; the next run finds nothing. */
static void test_single_stray(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", "B", NULL);
    plant(e.mem, LOC "/data/stray.parquet", e.young);
    strv before = list_all(e.mem, LOC);

    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *none[] = {NULL};
    assert_orphans(r, none);
    assert_int_equal(r->too_recent, 1);
    assert_int_equal(r->older_than_ms, e.now - 3 * DAY_MS);
    icm_orphan_result_free(r);

    o.has_older_than = true;
    o.older_than_ms = e.now;
    o.force = true;
    o.dry_run = true;
    icmt_ok(sweep(&e, &o, &r));
    const char *stray[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, stray);
    assert_true(r->dry_run);
    assert_int_equal(r->counts[ICM_ORPHAN_DATA], 1);
    assert_int_equal(r->bytes[ICM_ORPHAN_DATA], 5);
    assert_int_equal(r->orphans[0].mtime_ms, e.young);
    assert_int_equal(r->listed, before.n);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    const char *kept[] = {NULL};
    assert_survivors(&before, &after, kept);
    strv_free(&after);

    o.dry_run = false;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, stray);
    assert_int_equal(r->deleted, 1);
    assert_int_equal(r->orphans[0].state, ICM_ORPHAN_DELETED);
    icm_orphan_result_free(r);
    after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, stray);
    strv_free(&after);

    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, none);
    icm_orphan_result_free(r);
    assert_history_intact(&e);
    strv_free(&before);
    env_free(&e);
}

/* Planted strays in a history with overwrites, a staged (WAP) snapshot,
 * position and equality deletes and statistics files; strays in data/, partition folders,
 * nested junk folders, hidden files, a failed commit's leftovers (manifest list, manifest, data
 * file) old and young. Exactly the old visible strays go. */
static void test_history_with_strays(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", "B", NULL);
    const char *add[] = {"C", NULL}, *del[] = {"A", NULL};
    int64_t s2 = hist_overwrite(e.h, "main", add, del);
    hist_append(e.h, "main", "D", NULL);
    hist_append(e.h, NULL, "E", NULL); /* staged: no ref points at it */
    hist_position_delete(e.h, "main", "P", "B");
    int64_t s5 = hist_equality_delete(e.h, "main", "Q");
    hist_add_statistics(e.h, s5, "stats-5.puffin", false);
    hist_add_statistics(e.h, s2, "partition-stats-2.parquet", true);

    const char *old_strays[32] = {
        LOC "/data/s0.parquet",
        LOC "/data/c2_trunc=AA/s1.parquet",
        LOC "/data/c2_trunc=AA/c3=AAAA/s2.parquet",
        LOC "/data/invalid/invalid/s3.parquet",
        LOC "/metadata/snap-999-1-leftover.avro", /* a failed commit's manifest list */
        LOC "/metadata/leftover-m0.avro",         /* ... its manifest */
        LOC "/data/leftover-00001.parquet",       /* ... and its data file */
        NULL};
    for (size_t i = 0; old_strays[i] != NULL; i++)
        plant(e.mem, old_strays[i], e.old);
    const char *hidden[] = {LOC "/data/_SUCCESS", LOC "/data/.s0.parquet.crc",
                            LOC "/data/_temporary/0/x.parquet", LOC "/metadata/.v1.crc",
                            LOC "/.hive-staging/y.parquet", NULL};
    for (size_t i = 0; hidden[i] != NULL; i++)
        plant(e.mem, hidden[i], e.old);
    plant(e.mem, LOC "/data/young-writer.parquet", e.young);
    plant(e.mem, LOC "/metadata/snap-1000-1-young.avro", e.young);
    size_t n_strays = 7;
    strv fallen = {NULL, 0};
    add_fallen_metadata(&e, old_strays, &n_strays, &fallen);
    assert_true(fallen.n > 0);
    strv before = list_all(e.mem, LOC);

    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, old_strays);
    assert_int_equal(r->hidden, 5);
    assert_int_equal(r->too_recent, 2);
    assert_int_equal(r->deleted, n_strays);
    assert_int_equal(r->counts[ICM_ORPHAN_DATA], 5);
    assert_int_equal(r->counts[ICM_ORPHAN_MANIFEST_LIST], 1);
    assert_int_equal(r->counts[ICM_ORPHAN_MANIFEST], 1);
    assert_int_equal(r->counts[ICM_ORPHAN_METADATA], fallen.n);
    assert_int_equal(r->total, n_strays);
    assert_int_equal(r->conflicts, 0);
    assert_false(r->rechecked);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, old_strays);
    assert_history_intact(&e);
    strv_free(&after);
    strv_free(&before);
    strv_free(&fallen);
    env_free(&e);
}

/* v3 deletion vectors: the Puffin file is referenced; a stray Puffin file is not. */
static void test_deletion_vectors(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 3);
    hist_append(e.h, "main", "A", "B", NULL);
    hist_deletion_vectors(e.h, "main", "DV", "A", "B", NULL);
    plant(e.mem, LOC "/data/stray-dv.puffin", e.old);
    const char *gone[16] = {LOC "/data/stray-dv.puffin", NULL};
    size_t n_gone = 1;
    strv fallen = {NULL, 0};
    add_fallen_metadata(&e, gone, &n_gone, &fallen);
    strv before = list_all(e.mem, LOC);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, gone);
    assert_int_equal(r->counts[ICM_ORPHAN_DELETE], 1);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    assert_history_intact(&e);
    strv_free(&after);
    strv_free(&before);
    strv_free(&fallen);
    env_free(&e);
}

/* A FileIO wrapper for tests: forwards everything to the in-memory store, runs a hook before
 * the first listing (a writer committing while the sweep runs), and records delete
 * concurrency. */
typedef struct hook_io {
    icm_fileio base;
    icm_fileio *inner;
    void (*hook)(void *arg);
    void *arg;
    useconds_t delete_sleep_us;
    atomic_int in_flight;
    atomic_int max_in_flight;
    atomic_int deletes;
} hook_io;

static int h_read(icm_fileio *io, const char *l, char **o, size_t *n)
{
    return icm_fileio_read(o, n, ((hook_io *)io)->inner, l);
}
static int h_read_range(icm_fileio *io, const char *l, int64_t off, void *b, size_t n,
                        size_t *r)
{
    return icm_fileio_read_range(r, ((hook_io *)io)->inner, l, off, b, n);
}
static int h_create(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_create_new(((hook_io *)io)->inner, l, d, n);
}
static int h_write(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_write_replace(((hook_io *)io)->inner, l, d, n);
}
static int h_remove(icm_fileio *io, const char *l)
{
    hook_io *h = (hook_io *)io;
    int now = atomic_fetch_add(&h->in_flight, 1) + 1;
    int seen = atomic_load(&h->max_in_flight);
    while (now > seen && !atomic_compare_exchange_weak(&h->max_in_flight, &seen, now))
        ;
    if (h->delete_sleep_us > 0)
        usleep(h->delete_sleep_us);
    int rc = icm_fileio_delete(h->inner, l);
    atomic_fetch_add(&h->deletes, 1);
    atomic_fetch_sub(&h->in_flight, 1);
    return rc;
}
static int h_stat(icm_fileio *io, const char *l, icm_file_info *o)
{
    return icm_fileio_stat(o, ((hook_io *)io)->inner, l);
}
static int h_list(icm_fileio *io, const char *p, unsigned flags, icm_list_cb cb,
                  void *payload)
{
    hook_io *h = (hook_io *)io;
    if (h->hook != NULL) {
        void (*fn)(void *) = h->hook;
        h->hook = NULL;
        fn(h->arg);
    }
    return icm_fileio_list_flags(h->inner, p, flags, cb, payload);
}
static void h_free(icm_fileio *io)
{
    (void)io; /* the test owns both */
}

static const icm_fileio_methods HOOK_METHODS = {
    ICM_FILEIO_METHODS_VERSION, "hook", h_read, h_read_range, h_create, h_write, h_remove,
    h_stat, NULL, h_free, h_list, NULL, NULL, NULL, NULL, NULL};

static void hook_io_init(hook_io *h, icm_fileio *inner)
{
    memset(h, 0, sizeof *h);
    h->base.methods = &HOOK_METHODS;
    h->inner = inner;
}

/* 40 strays deleted on at most 4 threads at once, more than one of them busy. */
static void test_concurrent_deletes(void **state)
{
    (void)state;
    env e;
    e.now = icm__now_ms();
    e.old = e.now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e.mem));
    icm_fileio_mem_set_time(e.mem, e.old);
    hook_io hio;
    hook_io_init(&hio, e.mem);
    e.h = hist_new(&hio.base, LOC, 2, false, e.now - 20 * DAY_MS);
    hist_append(e.h, "main", "A", NULL);
    const char *gone[41];
    char *names[40];
    for (int i = 0; i < 40; i++) {
        names[i] = icmt_sprintf(LOC "/data/stray-%02d.parquet", i);
        plant(e.mem, names[i], e.old);
        gone[i] = names[i];
    }
    gone[40] = NULL;
    strv before = list_all(e.mem, LOC);
    hio.delete_sleep_us = 5000;

    icm_orphan_options o = opts_at(&e);
    o.max_concurrent_deletes = 4;
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, gone);
    assert_int_equal(r->deleted, 40);
    assert_int_equal(atomic_load(&hio.deletes), 40);
    assert_true(atomic_load(&hio.max_in_flight) <= 4);
    assert_true(atomic_load(&hio.max_in_flight) >= 2);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&before);
    for (int i = 0; i < 40; i++)
        free(names[i]);
    hist_free(e.h);
    icm_fileio_free(e.mem);
}

/* A writer commits while the sweep lists (after R was built). */
typedef struct writer {
    env *e;
    int64_t mtime;
    const char *name;
} writer;

static void writer_commits(void *arg)
{
    writer *w = arg;
    icm_fileio_mem_set_time(w->e->mem, w->mtime);
    hist_append(w->e->h, "main", w->name, NULL);
}

static void run_concurrent_writer(int64_t writer_age_ms, bool expect_recheck)
{
    env e;
    e.now = icm__now_ms();
    e.old = e.now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e.mem));
    icm_fileio_mem_set_time(e.mem, e.old);
    hook_io hio;
    hook_io_init(&hio, e.mem);
    e.h = hist_new(&hio.base, LOC, 2, false, e.now - 20 * DAY_MS);
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, LOC "/data/stray.parquet", e.old);
    writer w = {&e, e.now - writer_age_ms, "W"};
    hio.hook = writer_commits;
    hio.arg = &w;

    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_null(hio.hook); /* the writer did commit during the listing */
    const char *gone[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, gone);
    assert_int_equal(r->rechecked, expect_recheck);
    icm_orphan_result_free(r);
    /* everything the writer committed (its data file, manifest, list, metadata) is there */
    assert_history_intact(&e);
    char *w_path = hist_data_path(e.h, "W");
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e.mem, w_path));
    free(w_path);
    icm_table *t = hist_open_table(e.h);
    icmt_ok(icm_fileio_stat(&info, e.mem, icm_table_get_metadata_location(t)));
    icm_table_free(t);
    hist_free(e.h);
    icm_fileio_free(e.mem);
}

/* Its files are younger than the cutoff: never candidates. */
static void test_concurrent_writer_young(void **state)
{
    (void)state;
    run_concurrent_writer(60 * 1000, true);
}

/* Its files are older than the cutoff (a long job committing late): the re-check after the
 * listing sees the commit and protects them. */
static void test_concurrent_writer_old_files(void **state)
{
    (void)state;
    run_concurrent_writer(9 * DAY_MS, true);
}

/* write.data.path = the table root; a stray in a partition folder under the root. */
static void test_data_path_at_root(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_set_property(e.h, "write.data.path", LOC);
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, LOC "/c2_trunc=AA/c3=AAAA/stray.parquet", e.old);
    const char *gone[16] = {LOC "/c2_trunc=AA/c3=AAAA/stray.parquet", NULL};
    size_t n_gone = 1;
    strv fallen = {NULL, 0};
    add_fallen_metadata(&e, gone, &n_gone, &fallen);
    strv before = list_all(e.mem, LOC);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&fallen);
    strv_free(&before);
    env_free(&e);
}

/* Two old strays and one young: exactly the two old ones. */
static void test_old_and_young(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, LOC "/data/old1.parquet", e.old);
    plant(e.mem, LOC "/data/old2.parquet", e.now - 3 * DAY_MS - 1);
    plant(e.mem, LOC "/data/young.parquet", e.now - 3 * DAY_MS); /* at the cutoff: not older */
    strv before = list_all(e.mem, LOC);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/old1.parquet", LOC "/data/old2.parquet", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

/* With previous-versions-max=1 the metadata files that fell out of the log are orphans;
 * the current one and the single log entry stay. Expected set from the file names (NNNNN-). */
static void test_metadata_fell_out_of_log(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_set_property(e.h, "write.metadata.previous-versions-max", "1");
    hist_append(e.h, "main", "A", NULL);
    hist_append(e.h, "main", "B", NULL);
    strv before = list_all(e.mem, LOC);
    strv md = {NULL, 0};
    for (size_t i = 0; i < before.n; i++)
        if (strstr(before.v[i], ".metadata.json") != NULL)
            strv_push(&md, before.v[i]);
    assert_true(md.n >= 4); /* sorted by version number */
    const char *gone[16];
    size_t n_gone = 0;
    for (size_t i = 0; i + 2 < md.n; i++)
        gone[n_gone++] = md.v[i];
    gone[n_gone] = NULL;
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, gone);
    assert_int_equal(r->counts[ICM_ORPHAN_METADATA], n_gone);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&md);
    strv_free(&before);
    env_free(&e);
}

/* An empty table; a --location below the table limits the listing; a second run finds 0. */
static void test_empty_table_and_location(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *none[] = {NULL};
    assert_orphans(r, none);
    icm_orphan_result_free(r);

    plant(e.mem, LOC "/data/stray.parquet", e.old);
    o.location = LOC "/metadata";
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, none);
    assert_string_equal(r->location, LOC "/metadata");
    icm_orphan_result_free(r);
    o.location = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, none);
    icm_orphan_result_free(r);
    env_free(&e);
}

/* gc.enabled=false and the other refusals that need no special table: nothing is deleted by any. */
static void test_refusals(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, LOC "/data/stray.parquet", e.old);
    strv before = list_all(e.mem, LOC);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;

    /* cutoff less than 24 h ago without force */
    o.has_older_than = true;
    o.older_than_ms = e.now - 3600 * 1000;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_null(r);
    assert_true(message_has("--force"));
    o.has_older_than = false;

    /* a listing location outside the table, also a sibling sharing the name prefix */
    o.location = "/w/t_2";
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_true(message_has("not inside the table location"));
    o.location = "/w";
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    o.location = NULL;

    /* a static table (a metadata file given directly): only a dry run */
    icm_table *cur = hist_open_table(e.h);
    icm_table *st = NULL;
    icmt_ok(icm_table_open_static(&st, e.mem, icm_table_get_metadata_location(cur)));
    icm_table_free(cur);
    assert_int_equal(icm_orphan_sweep(&r, st, &o), ICM_EREFUSED);
    assert_true(message_has("only a dry run"));
    o.dry_run = true;
    icmt_ok(icm_orphan_sweep(&r, st, &o));
    const char *gone[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    icm_table_free(st);
    o.dry_run = false;

    /* a retained manifest cannot be read: R would be incomplete */
    char **files = hist_snapshot_files(e.h, hist_head(e.h, "main"), true);
    char *manifest = NULL;
    for (size_t i = 0; files[i] != NULL; i++)
        if (strstr(files[i], "/snap-") == NULL)
            manifest = strdup(files[i]);
    hist_strv_free(files);
    assert_non_null(manifest);
    size_t len;
    char *saved = NULL;
    icmt_ok(icm_fileio_read(&saved, &len, e.mem, manifest));
    icmt_ok(icm_fileio_delete(e.mem, manifest));
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_true(message_has("cannot read this manifest"));
    assert_string_equal(icm_error_last()->location, manifest);
    icm_fileio_mem_set_time(e.mem, e.old);
    icmt_ok(icm_fileio_create_new(e.mem, manifest, saved, len));
    icm_free(saved);
    free(manifest);

    /* gc.enabled=false */
    hist_set_property(e.h, "gc.enabled", "false");
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_true(message_has("Cannot delete orphan files: GC is disabled"));

    /* nothing was deleted by any of them: the stray is still there */
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e.mem, LOC "/data/stray.parquet"));
    strv_free(&before);
    env_free(&e);
}

/* A cutoff less than 24 h ago is accepted with force; the retention warning. */
static void test_force_and_warning(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, LOC "/data/young.parquet", e.young);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(r->warning_count, 0); /* 5 days of snapshots > 3 days of files */
    icm_orphan_result_free(r);

    o.has_older_than = true;
    o.older_than_ms = e.now - 60 * 1000;
    o.force = true;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/young.parquet", NULL};
    assert_orphans(r, gone);
    /* a forced cutoff plus the settle time shorter than the commit retry budget (30 min
     * by default): a retrying writer's file may go (adversary round 11, finding 2) */
    assert_int_equal(r->warning_count, 1);
    assert_non_null(strstr(r->warnings[0], "commit.retry.total-timeout-ms"));
    icm_orphan_result_free(r);

    o.older_than_ms = e.now - 6 * DAY_MS; /* window 6 d >= 5 d of snapshot retention */
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(r->warning_count, 1);
    assert_non_null(strstr(r->warnings[0], "history.expire.max-snapshot-age-ms"));
    icm_orphan_result_free(r);
    env_free(&e);
}

/* The table's commit retry budget: commit.retry.total-timeout-ms plus one last
 * commit.retry.max-wait-ms and its 10% jitter (Java and PyIceberg check the budget before a
 * wait, not after it: adversary round 12). A forced cutoff that with the settle time (none
 * here) covers it gives no warning; a budget longer than 24 h is the minimum age without
 * force. */
static void test_commit_retry_budget(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_set_property(e.h, "commit.retry.total-timeout-ms", "90000");
    hist_set_property(e.h, "commit.retry.max-wait-ms", "10000"); /* budget 101 s */
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, LOC "/data/young.parquet", e.young);
    icm_orphan_options o = opts_at(&e);
    o.has_older_than = true;
    o.older_than_ms = e.now - 101 * 1000; /* a 101 s window covers it */
    o.force = true;
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    /* the young file, and the metadata files the property commits replaced */
    size_t young = 0;
    for (size_t i = 0; i < r->orphan_count; i++) {
        const char *path = r->orphans[i].path;
        young += strcmp(path, LOC "/data/young.parquet") == 0;
        assert_true(strcmp(path, LOC "/data/young.parquet") == 0 ||
                    strncmp(path, LOC "/metadata/0000", 14) == 0);
    }
    assert_int_equal(young, 1);
    assert_int_equal(r->warning_count, 0);
    icm_orphan_result_free(r);
    plant(e.mem, LOC "/data/young.parquet", e.young);
    o.older_than_ms = e.now - 100 * 1000; /* 100 s does not */
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/young.parquet", NULL};
    assert_orphans(r, gone);
    assert_int_equal(r->warning_count, 1);
    assert_non_null(strstr(r->warnings[0], "retry for 1.7 min (commit.retry.total-timeout-ms"));
    icm_orphan_result_free(r);
    env_free(&e);

    env_init(&e, LOC, 2);
    hist_set_property(e.h, "commit.retry.total-timeout-ms", "172800000");
    hist_append(e.h, "main", "A", NULL);
    o = opts_at(&e);
    o.has_older_than = true;
    o.older_than_ms = e.now - 36 * 3600 * 1000;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_null(r);
    assert_non_null(strstr(icm_error_last()->message, "minimum 48.0 h"));
    env_free(&e);
}

/* Adversary rounds 10 and 11: a retained snapshot references a data file outside the table
 * (`/w/elsewhere/data/Q.parquet`, 9 bytes). One damaged entry may have moved a live file's
 * reference there, so the orphans that bear its name or its size are KEPT (a message naming
 * the reference), dry run too; the other orphan goes. */
static void test_outside_reference_keeps_its_lookalikes(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_set_data_location(e.h, "/w/elsewhere");
    hist_append(e.h, "main", "Q", NULL);
    hist_set_data_location(e.h, NULL);
    hist_append(e.h, "main", "A", NULL);
    icm_fileio_mem_set_time(e.mem, e.old);
    icmt_ok(icm_fileio_write_replace(e.mem, LOC "/data/sized.parquet", "123456789", 9));
    plant(e.mem, LOC "/data/Q.parquet", e.old);     /* its name (5 bytes) */
    plant(e.mem, LOC "/data/stray.parquet", e.old); /* neither */
    static const char *const held[] = {LOC "/data/Q.parquet", LOC "/data/sized.parquet"};
    for (int dry = 1; dry >= 0; dry--) {
        icm_orphan_options o = opts_at(&e);
        o.dry_run = dry == 1;
        icm_orphan_result *r = NULL;
        icmt_ok(sweep(&e, &o, &r));
        /* (and the first metadata file, which the data location's commit left out of the
         * metadata log: an orphan too) */
        assert_int_equal(r->orphan_count, 4);
        size_t kept = 0;
        for (size_t i = 0; i < r->orphan_count; i++) {
            const icm_orphan_file *f = &r->orphans[i];
            bool is_held = strcmp(f->path, held[0]) == 0 || strcmp(f->path, held[1]) == 0;
            if (!is_held) {
                assert_true(strcmp(f->path, LOC "/data/stray.parquet") == 0 ||
                            strncmp(f->path, LOC "/metadata/00000-", 16) == 0);
                assert_int_equal(f->state, dry ? ICM_ORPHAN_PLANNED : ICM_ORPHAN_DELETED);
                continue;
            }
            kept++;
            assert_int_equal(f->state, ICM_ORPHAN_KEPT);
            assert_int_equal(f->error_code, ICM_EREFUSED);
            assert_non_null(strstr(f->error_message, "references /w/elsewhere/data/Q.parquet"));
            assert_non_null(strstr(f->error_message, strstr(f->path, "sized") != NULL
                                                         ? "with this file's size (9 bytes"
                                                         : "with this file's name"));
        }
        assert_int_equal(kept, 2);
        assert_int_equal(r->kept, 2);
        icm_orphan_result_free(r);
    }
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e.mem, held[0]));
    icmt_ok(icm_fileio_stat(&info, e.mem, held[1]));
    assert_int_equal(icm_fileio_stat(&info, e.mem, LOC "/data/stray.parquet"), ICM_ENOTFOUND);
    assert_history_intact(&e);
    env_free(&e);
}

/* Sibling tables `/w/t` and `/w/t_2`: sweeping one never touches the other. */
static void test_sibling_tables(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", NULL);
    hist *h2 = hist_new(e.mem, "/w/t_2", 2, false, e.now - 20 * DAY_MS);
    hist_append(h2, "main", "A", NULL);
    plant(e.mem, LOC "/data/stray.parquet", e.old);
    plant(e.mem, "/w/t_2/data/stray.parquet", e.old);
    plant(e.mem, "/w/t_2/metadata/leftover-m0.avro", e.old);
    strv before = list_all(e.mem, "/w");
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, "/w");
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&before);
    hist_free(h2);
    env_free(&e);
}

/* A table at a bucket root. */
static void test_bucket_root(void **state)
{
    (void)state;
    env e;
    env_init(&e, "s3://bucket", 2);
    hist_append(e.h, "main", "A", "B", NULL);
    plant(e.mem, "s3://bucket/data/stray.parquet", e.old);
    plant(e.mem, "s3://bucket/stray-at-root.txt", e.old);
    plant(e.mem, "s3://bucket2/data/other-bucket.parquet", e.old);
    strv before = list_all(e.mem, "s3://bucket");
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {"s3://bucket/data/stray.parquet", "s3://bucket/stray-at-root.txt",
                          NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, "s3://bucket");
    assert_survivors(&before, &after, gone);
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e.mem, "s3://bucket2/data/other-bucket.parquet"));
    assert_history_intact(&e);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

/* A table at the filesystem root. */
static void test_filesystem_root(void **state)
{
    (void)state;
    env e;
    env_init(&e, "/", 2);
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, "/data/stray.parquet", e.old);
    plant(e.mem, "/elsewhere/stray.bin", e.old);
    strv before = list_all(e.mem, "/");
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {"/data/stray.parquet", "/elsewhere/stray.bin", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, "/");
    assert_survivors(&before, &after, gone);
    assert_history_intact(&e);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

/* Another table's metadata under the listing location: refused, naming it; excluding its
 * folder carves it out. A different table-uuid in our own metadata folder is refused too. */
static void test_other_table(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", NULL);
    char *other = raw_metadata("0f0f0f0f-1111-2222-3333-444455556666", LOC "/nested",
                               UNPARTITIONED, 999, "", "", e.old);
    icmt_ok(icm_fileio_write_replace(e.mem, LOC "/nested/metadata/00000-x.metadata.json",
                                     other, strlen(other)));
    plant(e.mem, LOC "/nested/data/theirs.parquet", e.old);
    plant(e.mem, LOC "/data/stray.parquet", e.old);
    strv before = list_all(e.mem, LOC);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_true(message_has("another table's metadata"));
    assert_true(message_has("0f0f0f0f-1111-2222-3333-444455556666"));
    assert_true(message_has("--exclude-location"));
    strv after = list_all(e.mem, LOC);
    const char *none[] = {NULL};
    assert_survivors(&before, &after, none);
    strv_free(&after);

    const char *excl[] = {LOC "/nested"};
    o.exclude_locations = excl;
    o.exclude_location_count = 1;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, gone);
    assert_int_equal(r->excluded, 2);
    icm_orphan_result_free(r);
    after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);

    /* the PyIceberg "shared folder" shape: another table's file in our metadata folder */
    icmt_ok(icm_fileio_write_replace(e.mem, LOC "/metadata/00009-other.metadata.json", other,
                                     strlen(other)));
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_true(message_has("another table's metadata"));
    free(other);
    strv_free(&before);
    env_free(&e);
}

/* A file list instead of listing. */
static void test_file_list(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", NULL);
    plant(e.mem, LOC "/data/stray.parquet", e.young);
    plant(e.mem, LOC "/data/unknown-mtime.parquet", e.old);
    strv before = list_all(e.mem, LOC);
    char *dir = icmt_mkdtemp();
    char *list = icmt_sprintf("%s/inventory.tsv", dir);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    for (size_t i = 0; i < before.n; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, e.mem, before.v[i]));
        if (strstr(before.v[i], "unknown-mtime") != NULL)
            fprintf(f, "%s\t%lld\t\n", before.v[i], (long long)info.size_bytes);
        else
            fprintf(f, "%s\t%lld\t%lld\r\n", before.v[i], (long long)info.size_bytes,
                    (long long)info.mtime_ms);
    }
    fprintf(f, "/tmp/mock1\t1\t0\n"); /* outside the table: ignored */
    fclose(f);

    icm_orphan_options o = opts_at(&e);
    o.file_list = list;
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char *none[] = {NULL};
    assert_orphans(r, none);
    assert_int_equal(r->listed, before.n);
    assert_int_equal(r->warning_count, 1); /* the line outside the table, counted */
    assert_non_null(strstr(r->warnings[0], LOC ": 1 line of the file list names no file below"));
    icm_orphan_result_free(r);

    o.has_older_than = true;
    o.older_than_ms = e.now;
    o.force = true;
    o.dry_run = true;
    icmt_ok(sweep(&e, &o, &r));
    const char *gone[] = {LOC "/data/stray.parquet", NULL};
    assert_orphans(r, gone);
    icm_orphan_result_free(r);
    o.dry_run = false;
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, gone);
    assert_int_equal(r->deleted, 1);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);

    /* only files outside the table */
    f = fopen(list, "w");
    fprintf(f, "/tmp/mock1\t1\t0\n/tmp/mock2\t1\t0\n");
    fclose(f);
    icmt_ok(sweep(&e, &o, &r));
    assert_orphans(r, none);
    assert_int_equal(r->listed, 0);
    assert_int_equal(r->warning_count, 2); /* (the first: the forced cutoff's) */
    assert_non_null(strstr(r->warnings[0], "commit.retry.total-timeout-ms"));
    assert_non_null(strstr(r->warnings[1], LOC ": 2 lines of the file list name no file below"));
    icm_orphan_result_free(r);

    /* a malformed line */
    f = fopen(list, "w");
    fprintf(f, LOC "/data/x.parquet\t1\t0\n" LOC "/data/y.parquet 1 0\n");
    fclose(f);
    assert_int_equal(sweep(&e, &o, &r), ICM_EINVALID);
    assert_true(message_has("line 2"));
    /* a missing list */
    o.file_list = "/nonexistent/inventory.tsv";
    assert_int_equal(sweep(&e, &o, &r), ICM_ENOTFOUND);

    icmt_rmtree(dir);
    free(dir);
    free(list);
    strv_free(&before);
    env_free(&e);
}

/* The listing names files differently from the metadata (here: a percent-encoded inventory):
 * R has files under the location, none of them is found, so nothing is deleted. */
static void test_path_form_mismatch(void **state)
{
    (void)state;
    env e;
    env_init(&e, LOC, 2);
    hist_append(e.h, "main", "A", "B", NULL);
    strv before = list_all(e.mem, LOC);
    char *dir = icmt_mkdtemp();
    char *list = icmt_sprintf("%s/inventory.tsv", dir);
    FILE *f = fopen(list, "w");
    for (size_t i = 0; i < before.n; i++) {
        fputs(LOC, f);
        for (const char *c = before.v[i] + strlen(LOC); *c; c++)
            *c == '.' ? fputs("%2E", f) : fputc(*c, f);
        fprintf(f, "\t10\t%lld\n", (long long)e.old);
    }
    fclose(f);
    icm_orphan_options o = opts_at(&e);
    o.file_list = list;
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_true(message_has("--path-map"));
    strv after = list_all(e.mem, LOC);
    const char *none[] = {NULL};
    assert_survivors(&before, &after, none);
    strv_free(&after);
    icmt_rmtree(dir);
    free(dir);
    free(list);
    strv_free(&before);
    env_free(&e);
}

/* A pass-through FileIO that counts listings of one prefix with a range (icm_fileio_list_opts
 * with start_after or end_before): how a cut listing shows itself. */
typedef struct range_spy {
    icm_fileio base;
    icm_fileio *inner;
    const char *prefix;
    atomic_size_t ranged;
} range_spy;

static icm_fileio *rs_inner(icm_fileio *io)
{
    return ((range_spy *)io)->inner;
}
static int rs_read(icm_fileio *io, const char *l, char **o, size_t *n)
{
    return icm_fileio_read(o, n, rs_inner(io), l);
}
static int rs_read_range(icm_fileio *io, const char *l, int64_t off, void *b, size_t n,
                         size_t *r)
{
    return icm_fileio_read_range(r, rs_inner(io), l, off, b, n);
}
static int rs_create(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_create_new(rs_inner(io), l, d, n);
}
static int rs_write(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_write_replace(rs_inner(io), l, d, n);
}
static int rs_remove(icm_fileio *io, const char *l)
{
    return icm_fileio_delete(rs_inner(io), l);
}
static int rs_stat(icm_fileio *io, const char *l, icm_file_info *o)
{
    return icm_fileio_stat(o, rs_inner(io), l);
}
static int rs_list_flags(icm_fileio *io, const char *p, unsigned f, icm_list_cb cb, void *pl)
{
    return icm_fileio_list_flags(rs_inner(io), p, f, cb, pl);
}
static int rs_list_range(icm_fileio *io, const char *p, const icm_fileio_list_options *opts,
                         icm_list_cb cb, void *pl)
{
    range_spy *s = (range_spy *)io;
    if (strcmp(p, s->prefix) == 0 && (opts->start_after != NULL || opts->end_before != NULL))
        atomic_fetch_add(&s->ranged, 1);
    return icm_fileio_list_opts(s->inner, p, opts, cb, pl);
}
static int rs_is_local(icm_fileio *io, const char *l)
{
    (void)io;
    (void)l;
    return 0;
}
static void rs_free(icm_fileio *io)
{
    (void)io; /* on the test's stack; the inner one is freed by the test */
}
static const icm_fileio_methods RANGE_SPY = {
    ICM_FILEIO_METHODS_VERSION, "range-spy", rs_read, rs_read_range, rs_create, rs_write,
    rs_remove, rs_stat, NULL, rs_free, rs_list_flags, NULL, NULL, NULL, rs_list_range,
    rs_is_local};

/* An object-store table big enough to cut its listing into ranges (more than 2,000 referenced
 * files below its location): the listing is several range listings (each one FileIO listing
 * call), every file is still seen once (exactly the old strays are orphans, the young ones and
 * every referenced file survive, `listed` counts every file), and the orphans come in byte
 * order whatever order the ranges finished in. */
static void test_listing_cut_into_ranges(void **state)
{
    (void)state;
    enum { FILES = 2600, PER_COMMIT = 650 };
    const char *loc = "mem://bucket/wh/t";
    env e;
    e.now = icm__now_ms();
    e.old = e.now - 10 * DAY_MS;
    e.young = e.now - 3600 * 1000;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    range_spy spy = {{&RANGE_SPY}, mem, loc, 0};
    e.mem = &spy.base;
    icm_fileio_mem_set_time(mem, e.old);
    e.h = hist_new(&spy.base, loc, 2, false, e.now - 20 * DAY_MS);
    char names[FILES][16];
    hist_file add[PER_COMMIT];
    for (size_t c = 0; c < FILES / PER_COMMIT; c++) {
        for (size_t i = 0; i < PER_COMMIT; i++) {
            size_t k = c * PER_COMMIT + i;
            /* spread over the key space as hashes would be */
            snprintf(names[k], sizeof names[k], "%04zx-%zu", (k * 40503u) % 65536, k);
            add[i] = (hist_file){names[k], ICM_FILE_CONTENT_DATA, false, NULL};
        }
        hist_commit_files(e.h, "main", "append", add, PER_COMMIT, NULL);
    }
    /* strays among the live files: old ones go, young ones stay */
    strv strays = {NULL, 0};
    for (size_t k = 0; k < 300; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/data/%04zx-stray-%zu.parquet", loc,
                 (k * 7919u) % 65536, k);
        plant(mem, path, k % 5 == 0 ? e.young : e.old);
        if (k % 5 != 0)
            strv_push(&strays, path);
    }
    strv before = list_all(mem, loc);

    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    const char **gone = calloc(strays.n + 64, sizeof *gone);
    size_t n_gone = 0;
    for (size_t k = 0; k < strays.n; k++)
        gone[n_gone++] = strays.v[k];
    gone[n_gone] = NULL;
    strv hold = {NULL, 0};
    {
        /* metadata files fallen out of the log are orphans too (written long ago here) */
        icm_table *t = hist_open_table(e.h);
        const char *cur = icm_table_get_metadata_location(t);
        char *text = NULL;
        size_t len = 0;
        icmt_ok(icm_fileio_read(&text, &len, mem, cur));
        json_t *doc = json_loadb(text, len, 0, NULL);
        strv named = {NULL, 0};
        strv_push(&named, cur);
        size_t i;
        json_t *entry;
        json_array_foreach(json_object_get(doc, "metadata-log"), i, entry)
            strv_push(&named, json_string_value(json_object_get(entry, "metadata-file")));
        for (i = 0; i < before.n; i++)
            if (strstr(before.v[i], ".metadata.json") != NULL && !strv_has(&named, before.v[i]))
                strv_push(&hold, before.v[i]);
        for (i = 0; i < hold.n; i++)
            gone[n_gone++] = hold.v[i];
        gone[n_gone] = NULL;
        strv_free(&named);
        json_decref(doc);
        icm_free(text);
        icm_table_free(t);
    }
    assert_orphans(r, gone);
    assert_int_equal(r->listed, before.n);
    assert_int_equal(r->deleted, n_gone);
    for (size_t i = 1; i < r->orphan_count; i++)
        assert_true(strcmp(r->orphans[i - 1].path, r->orphans[i].path) < 0);
    /* the table's listing was cut: ranged listings of its location, at most 16 */
    assert_true(atomic_load(&spy.ranged) >= 8);
    assert_true(atomic_load(&spy.ranged) <= 16);
    icm_orphan_result_free(r);
    strv after = list_all(mem, loc);
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    assert_history_intact(&e);
    free(gone);
    strv_free(&hold);
    strv_free(&strays);
    strv_free(&before);
    hist_free(e.h);
    icm_fileio_free(mem);
}

/* On an object store the first bytes of the candidates are read many at a time: a SQLite
 * database named like a data file among many orphans still refuses the sweep, naming it, and
 * nothing is deleted. */
static void test_catalog_store_among_object_store_candidates(void **state)
{
    (void)state;
    const char *loc = "mem://bucket/wh/t2";
    env e;
    e.now = icm__now_ms();
    e.old = e.now - 10 * DAY_MS;
    e.young = e.now - 3600 * 1000;
    icmt_ok(icm_fileio_mem_new(&e.mem));
    icm_fileio_mem_set_time(e.mem, e.old);
    e.h = hist_new(e.mem, loc, 2, false, e.now - 20 * DAY_MS);
    hist_append(e.h, "main", "A", "B", NULL);
    char path[128];
    for (int k = 0; k < 200; k++) {
        snprintf(path, sizeof path, "%s/data/stray-%03d.parquet", loc, k);
        plant(e.mem, path, e.old);
    }
    const char db[] = "SQLite format 3\0 and the rest of a catalog database";
    snprintf(path, sizeof path, "%s/data/stray-137.parquet", loc);
    icmt_ok(icm_fileio_write_replace(e.mem, path, db, sizeof db));
    strv before = list_all(e.mem, loc);
    icm_orphan_options o = opts_at(&e);
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "stray-137.parquet"));
    assert_non_null(strstr(icm_error_last()->message, "SQLite"));
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, loc);
    const char *none[] = {NULL};
    assert_survivors(&before, &after, none);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listing_cut_into_ranges),
        cmocka_unit_test(test_catalog_store_among_object_store_candidates),
        cmocka_unit_test(test_single_stray),
        cmocka_unit_test(test_history_with_strays),
        cmocka_unit_test(test_deletion_vectors),
        cmocka_unit_test(test_concurrent_deletes),
        cmocka_unit_test(test_concurrent_writer_young),
        cmocka_unit_test(test_concurrent_writer_old_files),
        cmocka_unit_test(test_data_path_at_root),
        cmocka_unit_test(test_old_and_young),
        cmocka_unit_test(test_metadata_fell_out_of_log),
        cmocka_unit_test(test_empty_table_and_location),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_force_and_warning),
        cmocka_unit_test(test_commit_retry_budget),
        cmocka_unit_test(test_outside_reference_keeps_its_lookalikes),
        cmocka_unit_test(test_sibling_tables),
        cmocka_unit_test(test_bucket_root),
        cmocka_unit_test(test_filesystem_root),
        cmocka_unit_test(test_other_table),
        cmocka_unit_test(test_file_list),
        cmocka_unit_test(test_path_form_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
