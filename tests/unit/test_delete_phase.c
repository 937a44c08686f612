/*
 * tests/unit/test_delete_phase.c: the delete phase both maintenance commands share
 * (icemaint/maint.h; data-loss classes "commits that land while a run deletes" and "overlapping
 * runs"): commits that land while a run deletes, files
 * already gone at delete time, the per-file outcome callback, a reload that fails mid-run, and
 * the table lease.
 *
 * Tables are built with the history builder (tests/unit/history.h) on the in-memory FileIO
 * behind a small hook FileIO that runs a test's function just before the Nth delete: a writer
 * committing between two delete batches (deterministically, where the field trials raced), or a
 * file vanishing before its turn. Each test asserts exactly which files exist afterwards, and
 * that every file every snapshot of the final table reaches (the history model, an oracle
 * independent of the code under test) still exists.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "history.h"
#include "icemaint/check.h"
#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/sys/fileio.h"
#include "test_orphans_common.h"
#include "util/util.h"

#define LOC "/w/t"

/* ------------------------------------------------------------------------------------------ */
/* a FileIO that runs a hook before the Nth delete                                             */

typedef struct hook_io {
    icm_fileio base;
    icm_fileio *inner;
    int hook_at;                 /* 1-based delete that runs the hook first; 0 = none */
    void (*hook)(const char *deleting, void *arg);
    void *arg;
    int deletes;
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
    if (++h->deletes == h->hook_at && h->hook != NULL)
        h->hook(l, h->arg);
    return icm_fileio_delete(h->inner, l);
}
static int h_stat(icm_fileio *io, const char *l, icm_file_info *o)
{
    return icm_fileio_stat(o, ((hook_io *)io)->inner, l);
}
static int h_list(icm_fileio *io, const char *p, unsigned flags, icm_list_cb cb, void *payload)
{
    return icm_fileio_list_flags(((hook_io *)io)->inner, p, flags, cb, payload);
}
static void h_free(icm_fileio *io)
{
    (void)io; /* the test owns both */
}

static const icm_fileio_methods HOOK_METHODS = {
    ICM_FILEIO_METHODS_VERSION, "hook", h_read, h_read_range, h_create, h_write, h_remove,
    h_stat, NULL, h_free, h_list, NULL, NULL, NULL, NULL, NULL};

/* ------------------------------------------------------------------------------------------ */
/* environment                                                                                 */

typedef struct env {
    icm_fileio *mem;    /* (a fault FileIO over the in-memory store in fault tests) */
    icm_fileio *store;  /* the in-memory store itself (its clock) */
    hook_io hio;
    hist *h;
    int64_t now, old;
} env;

static void env_init(env *e, bool fault)
{
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e->store));
    e->mem = e->store;
    if (fault)
        icmt_ok(icm_fileio_fault_new(&e->mem, e->store)); /* takes store; its clock is kept */
    icm_fileio_mem_set_time(e->store, e->old);
    memset(&e->hio, 0, sizeof e->hio);
    e->hio.base.methods = &HOOK_METHODS;
    e->hio.inner = e->mem;
    e->h = hist_new(&e->hio.base, LOC, 2, false, e->now - 20 * DAY_MS);
    icm_fileio_mem_set_time(e->store, e->old);
}

/* Before the run's delete number `at` (1-based), call hook(deleting, arg). */
static void hook_delete(env *e, int at, void (*hook)(const char *, void *), void *arg)
{
    e->hio.hook_at = at;
    e->hio.hook = hook;
    e->hio.arg = arg;
}

/* Plant data/S0.parquet .. data/S<n-1>.parquet, old enough to be orphans. */
static void plant_old_orphans(env *e, int n)
{
    for (int i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, LOC "/data/S%d.parquet", i);
        plant(e->store, path, e->old);
    }
}

static void env_free(env *e)
{
    hist_free(e->h);
    icm_fileio_free(e->mem);
}

/* Every file the model says some snapshot of the final table reaches still exists. */
static void assert_history_intact(env *e)
{
    hist_sync(e->h); /* the model follows the table (an expiry removed snapshots) */
    char **reach = hist_reachable(e->h, NULL, 0);
    for (size_t i = 0; reach[i] != NULL; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        if (icm_fileio_stat(&info, e->mem, reach[i]) != 0)
            print_error("reachable file %s is gone\n", reach[i]);
        icmt_ok(icm_fileio_stat(&info, e->mem, reach[i]));
    }
    hist_strv_free(reach);
}

static bool exists(env *e, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    bool yes = icm_fileio_stat(&info, e->mem, path) == 0;
    icm_error_clear();
    return yes;
}

/* A writer committing `name` (data/<name>.parquet, written anew with an old mtime, as an
 * add_files of a copied file with its mtime set back) while the run deletes. */
typedef struct writer {
    env *e;
    const char *name;        /* fixed name; or NULL: the first of `names` not being deleted */
    const char *names[3];
    bool committed;
} writer;

static void writer_commits(const char *deleting, void *arg)
{
    writer *w = arg;
    const char *name = w->name;
    for (size_t i = 0; name == NULL && i < 3 && w->names[i] != NULL; i++) {
        char *p = hist_data_path(w->e->h, w->names[i]);
        if (strcmp(p, deleting) != 0)
            name = w->names[i];
        free(p);
    }
    icm_fileio_mem_set_time(w->e->store, w->e->old);
    hist_append(w->e->h, "main", name, NULL);
    w->committed = true;
}

/* ------------------------------------------------------------------------------------------ */
/* the orphan sweep                                                                            */

static icm_orphan_options sweep_opts(const env *e, size_t batch)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e->now;
    o.delete_batch_size = batch;
    return o;
}

static int sweep(env *e, const icm_orphan_options *o, icm_orphan_result **out)
{
    icm_table *t = hist_open_table(e->h);
    int rc = icm_orphan_sweep(out, t, o);
    icm_table_free(t);
    return rc;
}

/* Commits that land while a run deletes: a writer adds an existing old file (an orphan
 * candidate) and commits between two delete batches: the reload before the next batch sees the
 * commit, and the file stays. */
static void test_commit_between_sweep_batches_keeps_newly_referenced_file(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    plant_old_orphans(&e, 3);
    strv before = list_all(e.mem, LOC);
    writer w = {&e, "S2", {NULL}, false};
    /* before the first delete: S0, S1 and S2 are all planned */
    hook_delete(&e, 1, writer_commits, &w);

    icm_orphan_options o = sweep_opts(&e, 1);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_true(w.committed);
    const char *gone[] = {LOC "/data/S0.parquet", LOC "/data/S1.parquet", NULL};
    assert_orphans(r, gone);
    assert_int_equal(r->deleted, 2);
    assert_int_equal(r->newly_referenced, 1);
    assert_true(r->rechecked);
    assert_false(r->delete_stopped);
    icm_orphan_result_free(r);

    assert_true(exists(&e, LOC "/data/S2.parquet"));
    /* exactly the two strays are gone: everything else listed before is still there (the
     * writer's commit only added files) */
    strv after = list_all(e.mem, LOC);
    for (size_t i = 0; i < before.n; i++) {
        bool stray = strcmp(before.v[i], gone[0]) == 0 || strcmp(before.v[i], gone[1]) == 0;
        if (strv_has(&after, before.v[i]) == stray)
            print_error("%s: %s\n", before.v[i], stray ? "survived" : "was deleted");
        assert_true(strv_has(&after, before.v[i]) != stray);
    }
    assert_history_intact(&e);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

/* A file removed by someone else between planning and its delete: already_gone, not deleted. */
static void vanish_other(const char *deleting, void *arg)
{
    env *e = arg;
    const char *other = strcmp(deleting, LOC "/data/S0.parquet") == 0 ? LOC "/data/S1.parquet"
                                                                        : LOC "/data/S0.parquet";
    icmt_ok(icm_fileio_delete(e->mem, other));
}

static void test_sweep_counts_file_gone_at_delete_time_as_already_gone(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    plant_old_orphans(&e, 2);
    hook_delete(&e, 1, vanish_other, &e);

    icm_orphan_options o = sweep_opts(&e, 0);
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(r->orphan_count, 2);
    assert_int_equal(r->deleted, 1);
    assert_int_equal(r->already_gone, 1);
    assert_int_equal(r->failed, 0);
    assert_int_equal(r->total, 1); /* counts and bytes are of deleted files only */
    assert_int_equal(r->counts[ICM_ORPHAN_DATA], 1);
    size_t gone_state = 0;
    for (size_t i = 0; i < r->orphan_count; i++)
        gone_state += r->orphans[i].state == ICM_ORPHAN_ALREADY_GONE;
    assert_int_equal(gone_state, 1);
    icm_orphan_result_free(r);
    assert_false(exists(&e, LOC "/data/S0.parquet"));
    assert_false(exists(&e, LOC "/data/S1.parquet"));
    assert_history_intact(&e);
    env_free(&e);
}

/* The outcome callback: one event per file, in order, batch_end on each batch's last. */
typedef struct journal {
    char paths[8][64];
    icm_delete_outcome outcomes[8];
    bool batch_end[8];
    int n;
    int stop_after;          /* return non-zero at this event (1-based); 0 = never */
} journal;

static int on_delete(const icm_delete_event *ev, void *payload)
{
    journal *j = payload;
    assert_true(j->n < 8);
    snprintf(j->paths[j->n], sizeof j->paths[j->n], "%s", ev->path);
    j->outcomes[j->n] = ev->outcome;
    j->batch_end[j->n] = ev->batch_end;
    assert_string_equal(ev->kind, "data");
    assert_int_equal(ev->size_bytes, 5);
    j->n++;
    return j->n == j->stop_after ? -1 : 0;
}

static void test_sweep_reports_each_file_per_batch(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    for (int i = 0; i < 3; i++) {
        char *p = icmt_sprintf(LOC "/data/S%d.parquet", i);
        plant(e.store, p, e.old);
        free(p);
    }
    journal j;
    memset(&j, 0, sizeof j);
    icm_orphan_options o = sweep_opts(&e, 2);
    o.on_delete = on_delete;
    o.on_delete_payload = &j;
    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, &o, &r));
    assert_int_equal(j.n, 3);
    for (int i = 0; i < 3; i++) {
        char want[64];
        snprintf(want, sizeof want, LOC "/data/S%d.parquet", i);
        assert_string_equal(j.paths[i], want);
        assert_int_equal(j.outcomes[i], ICM_DELETE_DELETED);
    }
    assert_false(j.batch_end[0]);
    assert_true(j.batch_end[1]);
    assert_true(j.batch_end[2]);
    icm_orphan_result_free(r);
    env_free(&e);
}

/* A callback that cannot record (a journal that cannot be written) stops the deletes after its
 * batch: the files after it stay, PLANNED, and the call says why. */
static void test_sweep_stops_when_the_callback_cannot_record(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    for (int i = 0; i < 3; i++) {
        char *p = icmt_sprintf(LOC "/data/S%d.parquet", i);
        plant(e.store, p, e.old);
        free(p);
    }
    journal j;
    memset(&j, 0, sizeof j);
    j.stop_after = 1;
    icm_orphan_options o = sweep_opts(&e, 1);
    o.on_delete = on_delete;
    o.on_delete_payload = &j;
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EUSER);
    assert_non_null(r);
    assert_true(r->delete_stopped);
    assert_int_equal(r->deleted, 1);
    assert_int_equal(j.n, 1);
    assert_false(exists(&e, LOC "/data/S0.parquet"));
    assert_true(exists(&e, LOC "/data/S1.parquet"));
    assert_true(exists(&e, LOC "/data/S2.parquet"));
    assert_int_equal(r->orphans[1].state, ICM_ORPHAN_PLANNED);
    icm_orphan_result_free(r);
    env_free(&e);
}

/* A reload between batches that fails stops the deletes: nothing is guessed. (A writer
 * commits first: a reload reads the metadata file only when the pointer moved.) */
static void fail_next_read(const char *deleting, void *arg)
{
    (void)deleting;
    env *e = arg;
    hist_append(e->h, "main", "B", NULL);
    icm_fileio_fault_fail_nth(e->mem, ICM_IO_READ, 1, ICM_EIO);
}

static void test_sweep_stops_when_a_reload_fails(void **state)
{
    (void)state;
    env e;
    env_init(&e, true);
    hist_append(e.h, "main", "A", NULL);
    plant_old_orphans(&e, 2);
    hook_delete(&e, 1, fail_next_read, &e);
    icm_orphan_options o = sweep_opts(&e, 1);
    icm_orphan_result *r = NULL;
    assert_int_equal(sweep(&e, &o, &r), ICM_EIO);
    assert_non_null(r);
    assert_true(r->delete_stopped);
    assert_int_equal(r->deleted, 1);
    assert_false(exists(&e, LOC "/data/S0.parquet"));
    assert_true(exists(&e, LOC "/data/S1.parquet"));
    icm_orphan_result_free(r);
    assert_history_intact(&e);
    env_free(&e);
}

/* ------------------------------------------------------------------------------------------ */
/* snapshot expiry                                                                             */

/* Expire every snapshot older than a day before the env's clock; `batch` files per delete batch
 * (0 = the default). */
static icm_expire_options expire_opts(const env *e, size_t batch)
{
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = e->now;
    o.decide.has_older_than = true;
    o.decide.older_than_ms = e->now - DAY_MS;
    o.delete_batch_size = batch;
    return o;
}

static int expire(env *e, icm_expire_options *o, icm_expire_result **out)
{
    icm_table *t = hist_open_table(e->h);
    int rc = icm_expire_snapshots(out, t, o);
    icm_table_free(t);
    return rc;
}

static const icm_expire_file *find_file(const icm_expire_result *r, const char *path)
{
    for (size_t i = 0; i < r->deleted_file_count; i++)
        if (strcmp(r->deleted_files[i].path, path) == 0)
            return &r->deleted_files[i];
    for (size_t i = 0; i < r->deleted_manifest_count; i++)
        if (strcmp(r->deleted_manifests[i].path, path) == 0)
            return &r->deleted_manifests[i];
    return NULL;
}

/* The same for expiry: a commit after ours re-references a file the expiry planned to delete
 * (as a rollback or cherry-pick can); the reload before the next batch keeps it. */
static void test_commit_between_expiry_batches_keeps_rereferenced_file(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_set_time(e.h, e.now - 9 * DAY_MS);
    hist_append(e.h, "main", "A", "B", NULL);
    hist_set_time(e.h, e.now - 8 * DAY_MS);
    const char *ab[] = {"A", "B", NULL}, *c[] = {"C", NULL};
    hist_overwrite(e.h, "main", c, ab);
    char *a = hist_data_path(e.h, "A"), *b = hist_data_path(e.h, "B");
    writer w = {&e, NULL, {"A", "B", NULL}, false};
    /* the first delete is A or B; the writer re-adds the other */
    hook_delete(&e, 1, writer_commits, &w);

    icm_expire_options o = expire_opts(&e, 1);
    icm_expire_result *r = NULL;
    icmt_ok(expire(&e, &o, &r));
    assert_true(w.committed);
    assert_int_equal(r->expired_count, 1);
    const icm_expire_file *fa = find_file(r, a), *fb = find_file(r, b);
    assert_non_null(fa);
    assert_non_null(fb);
    /* one of them was deleted first; the other became KEPT */
    assert_true((fa->state == ICM_EXPIRE_FILE_DELETED && fb->state == ICM_EXPIRE_FILE_KEPT) ||
                (fb->state == ICM_EXPIRE_FILE_DELETED && fa->state == ICM_EXPIRE_FILE_KEPT));
    assert_int_equal(r->newly_referenced, 1);
    assert_false(r->delete_stopped);
    const char *kept = fa->state == ICM_EXPIRE_FILE_KEPT ? a : b;
    const char *deleted = fa->state == ICM_EXPIRE_FILE_KEPT ? b : a;
    assert_true(exists(&e, kept));
    assert_false(exists(&e, deleted));
    assert_int_equal(r->counts[ICM_EXPIRE_FILE_DATA], 1);
    icm_expire_result_free(r);
    assert_history_intact(&e);
    free(a);
    free(b);
    env_free(&e);
}

/* Data-loss class "metadata rewritten in place" (before: a fingerprint of a
 * few fields): between two delete batches the current metadata file is rewritten under
 * its own name, keeping last-updated-ms and the snapshot count, with the current snapshot now
 * naming the expired snapshot's manifest list. The re-check compares the document's content,
 * so the list (and what it reaches) is read again and kept. */
typedef struct rewriter {
    env *e;
    const char *list; /* the manifest list to name */
    bool done;
} rewriter;

static void rewrite_current_in_place(const char *deleting, void *arg)
{
    (void)deleting;
    rewriter *w = arg;
    icm_table *t = hist_open_table(w->e->h);
    char *loc = strdup(icm_table_get_metadata_location(t));
    icm_table_free(t);
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, hist_io(w->e->h), loc));
    json_t *doc = icmt_json_parse(data);
    icm_free(data);
    json_t *snaps = json_object_get(doc, "snapshots");
    assert_int_equal(json_array_size(snaps), 1);
    json_object_set_new(json_array_get(snaps, 0), "manifest-list", json_string(w->list));
    char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    icmt_ok(icm_fileio_write_replace(hist_io(w->e->h), loc, text, strlen(text)));
    free(text);
    json_decref(doc);
    free(loc);
    w->done = true;
}

static void test_metadata_rewritten_in_place_same_fields_is_read_again(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_set_time(e.h, e.now - 9 * DAY_MS);
    int64_t s1 = hist_append(e.h, "main", "A", "B", NULL);
    hist_set_time(e.h, e.now - 8 * DAY_MS);
    const char *ab[] = {"A", "B", NULL}, *c[] = {"C", NULL};
    hist_overwrite(e.h, "main", c, ab);
    icm_table *t = hist_open_table(e.h);
    char *list = strdup(
        icm_table_metadata_snapshot_by_id(icm_table_get_metadata(t), s1)->manifest_list);
    icm_table_free(t);
    rewriter w = {&e, list, false};
    hook_delete(&e, 1, rewrite_current_in_place, &w);

    icm_expire_options o = expire_opts(&e, 1);
    icm_expire_result *r = NULL;
    icmt_ok(expire(&e, &o, &r));
    assert_true(w.done);
    assert_int_equal(r->expired_count, 1);
    const icm_expire_file *fl = find_file(r, list);
    assert_non_null(fl);
    assert_int_equal(fl->state, ICM_EXPIRE_FILE_KEPT);
    assert_true(exists(&e, list));
    assert_true(r->newly_referenced >= 1);
    /* what the rewritten current snapshot reaches is there (its list, its manifest, the
     * second data file), but the data file deleted before the rewrite landed */
    const icm_expire_file *first = NULL;
    for (size_t i = 0; i < r->deleted_file_count; i++)
        if (r->deleted_files[i].state == ICM_EXPIRE_FILE_DELETED)
            first = &r->deleted_files[i];
    assert_non_null(first);
    assert_int_equal(r->counts[ICM_EXPIRE_FILE_DATA], 1);
    t = hist_open_table(e.h);
    icm_check_result *cr = NULL;
    icmt_ok(icm_check_table(&cr, icm_table_get_fileio(t),
                            icm_table_get_metadata(t), icm_table_get_metadata_location(t), NULL));
    assert_int_equal(cr->problem_count, 1);
    assert_string_equal(cr->problems[0].path, first->path);
    icm_check_result_free(cr);
    icm_table_free(t);
    icm_expire_result_free(r);
    free(list);
    env_free(&e);
}

static void test_expiry_counts_file_gone_at_delete_time_as_already_gone(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_set_time(e.h, e.now - 9 * DAY_MS);
    hist_append(e.h, "main", "S0", "S1", NULL);
    hist_set_time(e.h, e.now - 8 * DAY_MS);
    const char *del[] = {"S0", "S1", NULL}, *add[] = {"C", NULL};
    hist_overwrite(e.h, "main", add, del);
    hook_delete(&e, 1, vanish_other, &e);
    icm_expire_options o = expire_opts(&e, 0);
    icm_expire_result *r = NULL;
    icmt_ok(expire(&e, &o, &r));
    assert_int_equal(r->already_gone, 1);
    assert_int_equal(r->counts[ICM_EXPIRE_FILE_DATA], 1);
    size_t gone = 0;
    for (size_t i = 0; i < r->deleted_file_count; i++)
        gone += r->deleted_files[i].state == ICM_EXPIRE_FILE_ALREADY_GONE;
    assert_int_equal(gone, 1);
    icm_expire_result_free(r);
    assert_history_intact(&e);
    env_free(&e);
}

/* ------------------------------------------------------------------------------------------ */
/* the lease                                                                                   */

/* <table location>/metadata/.icemaint-lease (maint/lease.c). */
static char *lease_path(env *e)
{
    icm_table *t = hist_open_table(e->h);
    const char *loc = icm_table_metadata_location(icm_table_get_metadata(t));
    char *p = icmt_sprintf("%s/metadata/%s", loc, ICM_LEASE_FILE_NAME);
    icm_table_free(t);
    return p;
}

static void test_second_run_is_refused_naming_the_holder(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    icm_table *t = hist_open_table(e.h);
    icm_lease_options lo = ICM_LEASE_OPTIONS_INIT;
    lo.command = "remove-orphan-files";
    icm_lease *first = NULL, *second = NULL;
    icmt_ok(icm_lease_acquire(&first, t, &lo));
    char *path = lease_path(&e);
    assert_string_equal(icm_lease_location(first), path);
    assert_true(exists(&e, path));

    assert_int_equal(icm_lease_acquire(&second, t, &lo), ICM_EREFUSED);
    assert_null(second);
    const char *m = icm_error_last()->message;
    char pid[32];
    snprintf(pid, sizeof pid, "pid %lld", (long long)getpid());
    assert_non_null(strstr(m, pid));
    assert_non_null(strstr(m, "remove-orphan-files"));
    assert_non_null(strstr(m, "--no-lock"));

    /* a sweep of this table never touches the lease (a hidden name) */
    plant(e.store, LOC "/data/S0.parquet", e.old);
    icm_orphan_options o = sweep_opts(&e, 0);
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    assert_int_equal(r->deleted, 1);
    icm_orphan_result_free(r);
    assert_true(exists(&e, path));

    icmt_ok(icm_lease_release(first));
    assert_false(exists(&e, path));
    icmt_ok(icm_lease_acquire(&second, t, &lo));
    icmt_ok(icm_lease_release(second));
    icm_lease_free(second);
    icm_lease_free(first);
    free(path);
    icm_table_free(t);
    env_free(&e);
}

static void write_lease_of(env *e, const char *path, const char *token, int64_t expires_ms,
                           const char *host, long long pid)
{
    char *text = icmt_sprintf("{\"owner\":\"ghost\",\"host\":\"%s\",\"pid\":%lld,"
                              "\"start_ms\":%lld,\"expires_ms\":%lld,\"command\":"
                              "\"remove-orphan-files\",\"token\":\"%s\"}",
                              host, pid, (long long)(expires_ms - 600000),
                              (long long)expires_ms, token);
    icmt_ok(icm_fileio_write_replace(e->mem, path, text, strlen(text)));
    free(text);
}

static void write_lease(env *e, const char *path, const char *token, int64_t expires_ms)
{
    write_lease_of(e, path, token, expires_ms, "elsewhere", 4242);
}

/* A pid no process has now: a child that exited and was reaped (0 if it was reused at once). */
static pid_t dead_pid(void)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    return kill(child, 0) != 0 && errno == ESRCH ? child : 0;
}

/* A crashed run's lease (this host, its pid gone) is stale at once, before it expires; a live
 * pid on this host, or a pid on another host, keeps it until it expires. */
static void test_lease_of_a_dead_pid_on_this_host_is_taken_over(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    icm_table *t = hist_open_table(e.h);
    char *path = lease_path(&e);
    char host[256];
    assert_int_equal(gethostname(host, sizeof host), 0);
    host[sizeof host - 1] = '\0';
    pid_t dead = dead_pid();
    if (dead == 0) {
        icmt_skip_here("no pid certainly unused on this host was found");
    }
    icm_lease_options lo = ICM_LEASE_OPTIONS_INIT;
    icm_lease *l = NULL;

    write_lease_of(&e, path, "a1", e.now + 600000, host, (long long)getpid());
    assert_int_equal(icm_lease_acquire(&l, t, &lo), ICM_EREFUSED);
    write_lease_of(&e, path, "a2", e.now + 600000, "elsewhere", (long long)dead);
    assert_int_equal(icm_lease_acquire(&l, t, &lo), ICM_EREFUSED);

    write_lease_of(&e, path, "a3", e.now + 600000, host, (long long)dead);
    icmt_ok(icm_lease_acquire(&l, t, &lo));
    char *text = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&text, &len, e.mem, path));
    assert_null(strstr(text, "\"a3\""));
    icm_free(text);
    char *marker = icmt_sprintf("%s.takeover-a3", path);
    assert_false(exists(&e, marker));
    icmt_ok(icm_lease_release(l));
    assert_false(exists(&e, path));
    icm_lease_free(l);
    free(marker);
    free(path);
    icm_table_free(t);
    env_free(&e);
}

static void test_stale_lease_is_taken_over_once(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    icm_table *t = hist_open_table(e.h);
    char *path = lease_path(&e);
    icm_lease_options lo = ICM_LEASE_OPTIONS_INIT;
    icm_lease *l = NULL;

    /* held and not expired: refused, naming the holder */
    write_lease(&e, path, "abc1", e.now + 60000);
    assert_int_equal(icm_lease_acquire(&l, t, &lo), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "ghost on elsewhere, pid 4242"));

    /* another run is already taking over this stale lease (its marker exists): refused */
    write_lease(&e, path, "abc2", e.now - 1);
    char *marker = icmt_sprintf("%s.takeover-abc2", path);
    icmt_ok(icm_fileio_write_replace(e.mem, marker, "x", 1));
    assert_int_equal(icm_lease_acquire(&l, t, &lo), ICM_EREFUSED);
    icmt_ok(icm_fileio_delete(e.mem, marker));

    /* stale and nobody else taking over: ours now, and the marker is gone again */
    icmt_ok(icm_lease_acquire(&l, t, &lo));
    assert_false(exists(&e, marker));
    char *text = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&text, &len, e.mem, path));
    assert_null(strstr(text, "abc2"));
    assert_non_null(strstr(text, "\"expires_ms\""));
    icm_free(text);

    /* it expires and another run takes it over: renewing learns so and refuses */
    write_lease(&e, path, "def3", e.now + 60000);
    assert_int_equal(icm_lease_renew(l, 0), ICM_EREFUSED);
    icmt_ok(icm_lease_release(l)); /* not ours: left alone */
    assert_true(exists(&e, path));
    icm_lease_free(l);
    free(marker);
    free(path);
    icm_table_free(t);
    env_free(&e);
}

/* A lease taken over by another run stops the deletes before the next batch. (Another run
 * can take it only once it expired: the run's lease lives a millisecond here, so every
 * batch checks it; with a long lifetime icm__lease_keep may skip the read for a few seconds
 * after a check that found it ours, since nobody can take it within that time.) */
static void steal_lease(const char *deleting, void *arg)
{
    (void)deleting;
    env *e = arg;
    char *path = lease_path(e);
    write_lease(e, path, "beef", e->now + 600000);
    free(path);
}

static void test_sweep_stops_when_its_lease_is_lost(void **state)
{
    (void)state;
    env e;
    env_init(&e, false);
    hist_append(e.h, "main", "A", NULL);
    plant_old_orphans(&e, 2);
    icm_table *t = hist_open_table(e.h);
    icm_lease *l = NULL;
    icm_lease_options lo = ICM_LEASE_OPTIONS_INIT;
    lo.ttl_ms = 1;
    icmt_ok(icm_lease_acquire(&l, t, &lo));
    hook_delete(&e, 1, steal_lease, &e);
    icm_orphan_options o = sweep_opts(&e, 1);
    o.lease = l;
    icm_orphan_result *r = NULL;
    assert_int_equal(icm_orphan_sweep(&r, t, &o), ICM_EREFUSED);
    assert_true(r->delete_stopped);
    assert_int_equal(r->deleted, 1);
    assert_true(exists(&e, LOC "/data/S1.parquet"));
    icm_orphan_result_free(r);
    icm_lease_free(l);
    icm_table_free(t);
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_between_sweep_batches_keeps_newly_referenced_file),
        cmocka_unit_test(test_sweep_counts_file_gone_at_delete_time_as_already_gone),
        cmocka_unit_test(test_sweep_reports_each_file_per_batch),
        cmocka_unit_test(test_sweep_stops_when_the_callback_cannot_record),
        cmocka_unit_test(test_sweep_stops_when_a_reload_fails),
        cmocka_unit_test(test_commit_between_expiry_batches_keeps_rereferenced_file),
        cmocka_unit_test(test_expiry_counts_file_gone_at_delete_time_as_already_gone),
        cmocka_unit_test(test_metadata_rewritten_in_place_same_fields_is_read_again),
        cmocka_unit_test(test_second_run_is_refused_naming_the_holder),
        cmocka_unit_test(test_stale_lease_is_taken_over_once),
        cmocka_unit_test(test_lease_of_a_dead_pid_on_this_host_is_taken_over),
        cmocka_unit_test(test_sweep_stops_when_its_lease_is_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
