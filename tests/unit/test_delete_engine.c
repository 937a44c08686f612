/*
 * tests/unit/test_delete_engine.c: the one delete engine (src/maint/delete_engine.h) on its
 * own: rank order, batches and their hooks, per-file outcomes and the on_delete contract
 * (once per file, calling thread, batch order, batch_end), retries only of retryable failures
 * (with backoff, within the attempt and time budget), the callback's stop, the pre-delete check
 * and the planned hook, chunking beyond ICM_FILEIO_DELETE_BATCH_MAX keys, the batch time
 * bound, and the same outcomes on several threads.
 *
 * Files live in the in-memory FileIO behind a small recording FileIO that logs every delete
 * (in order) and fails chosen locations a chosen number of times with a chosen code: through
 * `remove` (icm_fileio_delete_batch's one-by-one path, where the wrapper marks ICM_ENET and
 * ICM_ETIMEOUT retryable) or through its own batch slot (logging each request's size, marking
 * failures retryable as told). Each test asserts exactly which files exist afterwards.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"
#include "icemaint/sys/fileio.h"
#include "io/fileio_internal.h"
#include "maint/delete_engine.h"
#include "test_orphans_common.h"
#include "testutil.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* a FileIO that records deletes and fails chosen ones                                         */

#define MAX_RULES 8

typedef struct rule {
    const char *path;
    int times;   /* fail this many more deletes of path; -1 = always */
    int code;
    bool retryable; /* through the batch slot: how the back end marks it */
} rule;

typedef struct rec_io {
    icm_fileio base;
    icm_fileio *inner;
    pthread_mutex_t lock;
    char **log;   /* every delete asked for, in order */
    size_t n_log, cap;
    rule rules[MAX_RULES];
    size_t n_rules;
    size_t requests[16]; /* items per delete_batch call (the batch slot's table only) */
    size_t n_requests;
} rec_io;

static int r_read(icm_fileio *io, const char *l, char **o, size_t *n)
{
    return icm_fileio_read(o, n, ((rec_io *)io)->inner, l);
}
static int r_read_range(icm_fileio *io, const char *l, int64_t off, void *b, size_t n,
                        size_t *r)
{
    return icm_fileio_read_range(r, ((rec_io *)io)->inner, l, off, b, n);
}
static int r_create(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_create_new(((rec_io *)io)->inner, l, d, n);
}
static int r_write(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_write_replace(((rec_io *)io)->inner, l, d, n);
}
/* Log a delete of `l`; returns the injected failure's code (0: none), *retryable its mark. */
static int logged(rec_io *h, const char *l, bool *retryable)
{
    int fail = 0;
    pthread_mutex_lock(&h->lock);
    if (h->n_log == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->log = realloc(h->log, h->cap * sizeof *h->log);
    }
    h->log[h->n_log++] = strdup(l);
    for (size_t i = 0; i < h->n_rules; i++)
        if (strcmp(h->rules[i].path, l) == 0 && h->rules[i].times != 0) {
            if (h->rules[i].times > 0)
                h->rules[i].times--;
            fail = h->rules[i].code;
            *retryable = h->rules[i].retryable;
        }
    pthread_mutex_unlock(&h->lock);
    if (fail != 0)
        icm__error_set(ICM_ERRCLASS_IO, fail, l, "injected failure deleting %s", l);
    return fail;
}

static int r_remove(icm_fileio *io, const char *l)
{
    rec_io *h = (rec_io *)io;
    bool retryable = false;
    int fail = logged(h, l, &retryable);
    return fail != 0 ? fail : icm_fileio_delete(h->inner, l);
}

/* The batch slot (an object store's multi-object delete): logs the call's size, then each
 * item; injected failures carry the rule's retryable mark. */
static int r_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                          icm_fileio_delete_result *results)
{
    rec_io *h = (rec_io *)io;
    pthread_mutex_lock(&h->lock);
    if (h->n_requests < 16)
        h->requests[h->n_requests] = n;
    h->n_requests++;
    pthread_mutex_unlock(&h->lock);
    for (size_t i = 0; i < n; i++) {
        bool retryable = false;
        int fail = logged(h, locations[i], &retryable);
        if (fail != 0) {
            icm_fileio_delete_result_fail(&results[i], fail, retryable);
            continue;
        }
        bool existed = true;
        int rc = icm_fileio_delete_existing(&existed, h->inner, locations[i]);
        if (rc != 0) {
            icm_fileio_delete_result_fail(&results[i], rc, false);
            continue;
        }
        results[i].status = existed ? ICM_FILEIO_DELETED : ICM_FILEIO_ALREADY_GONE;
        results[i].code = 0;
        results[i].retryable = false;
        results[i].message[0] = '\0';
    }
    return 0;
}
static int r_stat(icm_fileio *io, const char *l, icm_file_info *o)
{
    return icm_fileio_stat(o, ((rec_io *)io)->inner, l);
}
static int r_list(icm_fileio *io, const char *p, unsigned flags, icm_list_cb cb, void *payload)
{
    return icm_fileio_list_flags(((rec_io *)io)->inner, p, flags, cb, payload);
}
static void r_free(icm_fileio *io)
{
    (void)io; /* the test owns it */
}

static const icm_fileio_methods REC_METHODS = {.version = ICM_FILEIO_METHODS_VERSION,
                                                .name = "record",
                                                .read = r_read,
                                                .read_range = r_read_range,
                                                .create_new = r_create,
                                                .write_replace = r_write,
                                                .remove = r_remove,
                                                .stat = r_stat,
                                                .free = r_free,
                                                .list_flags = r_list};

/* An object store: keys go in batches. */
static int r_is_local(icm_fileio *io, const char *location)
{
    (void)io;
    (void)location;
    return 0;
}

/* The same with the batch slot. */
static const icm_fileio_methods REC_BATCH_METHODS = {.version = ICM_FILEIO_METHODS_VERSION,
                                                      .name = "record-batch",
                                                      .read = r_read,
                                                      .read_range = r_read_range,
                                                      .create_new = r_create,
                                                      .write_replace = r_write,
                                                      .remove = r_remove,
                                                      .stat = r_stat,
                                                      .free = r_free,
                                                      .list_flags = r_list,
                                                      .delete_batch = r_delete_batch,
                                                      .is_local = r_is_local};

static void rec_init(rec_io *h)
{
    memset(h, 0, sizeof *h);
    h->base.methods = &REC_METHODS;
    pthread_mutex_init(&h->lock, NULL);
    icmt_ok(icm_fileio_mem_new(&h->inner));
}

static void rec_fail(rec_io *h, const char *path, int times, int code)
{
    assert_true(h->n_rules < MAX_RULES);
    h->rules[h->n_rules++] = (rule){path, times, code, false};
}

/* Through the batch slot, marked retryable or not whatever the code. */
static void rec_fail_marked(rec_io *h, const char *path, int times, int code, bool retryable)
{
    assert_true(h->n_rules < MAX_RULES);
    h->rules[h->n_rules++] = (rule){path, times, code, retryable};
}

static size_t rec_count(rec_io *h, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < h->n_log; i++)
        n += strcmp(h->log[i], path) == 0;
    return n;
}

static void rec_free(rec_io *h)
{
    for (size_t i = 0; i < h->n_log; i++)
        free(h->log[i]);
    free(h->log);
    pthread_mutex_destroy(&h->lock);
    icm_fileio_free(h->inner);
}

static void put(rec_io *h, const char *path)
{
    icmt_ok(icm_fileio_write_replace(h->inner, path, "x", 1));
}

static bool exists(rec_io *h, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    bool yes = icm_fileio_stat(&info, h->inner, path) == 0;
    icm_error_clear();
    return yes;
}

/* ------------------------------------------------------------------------------------------ */
/* plans, hooks and the journal                                                                */

typedef struct plan {
    icm__delete_item *items;
    char **paths;
    size_t n;
} plan;

/* n files `<prefix>/f<i>` of the given ranks (ranks[i % n_ranks]), each created unless
 * `missing` names its index. */
static plan plan_new(rec_io *h, const char *prefix, size_t n, const icm__delete_rank *ranks,
                     size_t n_ranks, long missing)
{
    plan p = {calloc(n, sizeof *p.items), calloc(n, sizeof *p.paths), n};
    static const char *const names[] = {"data", "manifest", "manifest_list", "statistics",
                                        "checksum"};
    for (size_t i = 0; i < n; i++) {
        p.paths[i] = icmt_sprintf("%s/f%05zu", prefix, i);
        if ((long)i != missing)
            put(h, p.paths[i]);
        icm__delete_rank rank = ranks[i % n_ranks];
        p.items[i] = (icm__delete_item){.path = p.paths[i], .kind = names[rank],
                                        .size_bytes = 1, .rank = rank, .ref = i};
    }
    return p;
}

static void plan_free(plan *p)
{
    icm__delete_items_dispose(p->items, p->n);
    for (size_t i = 0; i < p->n; i++)
        free(p->paths[i]);
    free(p->paths);
    free(p->items);
}

typedef struct event {
    char *path;
    icm_delete_outcome outcome;
    int code;
    bool batch_end;
} event;

/* What the hooks and the callback saw. */
typedef struct watch {
    rec_io *io;
    pthread_t caller;
    event *ev;
    size_t n_ev, cap_ev;
    size_t stop_at;              /* on_delete returns -1 at this event (1-based); 0 = never */
    size_t batches;              /* before_batch calls */
    size_t gone_at_batch[16];    /* files of the plan gone when each before_batch ran */
    plan *p;
    long keep, fail, gone_check; /* check: this index KEPT / FAILED / GONE; -1 none */
    long drop;                   /* planned: false for this index from the 2nd batch on */
    int checks[4096];            /* check calls per index */
    pthread_mutex_t lock;
    size_t progress_calls;
    bool off_thread;             /* a hook or the callback ran on another thread */
} watch;

static void watch_init(watch *w, rec_io *io, plan *p)
{
    memset(w, 0, sizeof *w);
    w->io = io;
    w->p = p;
    w->caller = pthread_self();
    w->keep = w->fail = w->gone_check = w->drop = -1;
    pthread_mutex_init(&w->lock, NULL);
}

static void watch_free(watch *w)
{
    for (size_t i = 0; i < w->n_ev; i++)
        free(w->ev[i].path);
    free(w->ev);
    pthread_mutex_destroy(&w->lock);
}

static void on_caller(watch *w)
{
    if (!pthread_equal(pthread_self(), w->caller))
        w->off_thread = true;
}

static int on_delete(const icm_delete_event *e, void *payload)
{
    watch *w = payload;
    on_caller(w);
    if (w->n_ev == w->cap_ev) {
        w->cap_ev = w->cap_ev ? 2 * w->cap_ev : 64;
        w->ev = realloc(w->ev, w->cap_ev * sizeof *w->ev);
    }
    w->ev[w->n_ev++] = (event){strdup(e->path), e->outcome, e->error_code, e->batch_end};
    assert_int_equal(e->size_bytes, 1);
    if (e->outcome == ICM_DELETE_FAILED)
        assert_non_null(e->error_message);
    else
        assert_null(e->error_message);
    return w->n_ev == w->stop_at ? -1 : 0;
}

static int before_batch(void *ctx)
{
    watch *w = ctx;
    on_caller(w);
    size_t gone = 0;
    for (size_t i = 0; i < w->p->n; i++)
        gone += !exists(w->io, w->p->paths[i]);
    if (w->batches < 16)
        w->gone_at_batch[w->batches] = gone;
    w->batches++;
    return 0;
}

static bool planned(void *ctx, const icm__delete_item *item)
{
    watch *w = ctx;
    on_caller(w);
    return !(w->batches >= 2 && (long)item->ref == w->drop);
}

static icm__delete_verdict check(void *ctx, icm__link_cache *cache, const icm__delete_item *item,
                                 int *code)
{
    (void)cache;
    watch *w = ctx;
    pthread_mutex_lock(&w->lock);
    w->checks[item->ref]++;
    pthread_mutex_unlock(&w->lock);
    if ((long)item->ref == w->keep) {
        *code = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, item->path, "changed; kept");
        return ICM__VERDICT_KEPT;
    }
    if ((long)item->ref == w->fail) {
        *code = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, item->path, "outside");
        return ICM__VERDICT_FAILED;
    }
    if ((long)item->ref == w->gone_check)
        return ICM__VERDICT_GONE;
    return ICM__VERDICT_DELETE;
}

static void progress(void *ctx, size_t done, size_t total)
{
    watch *w = ctx;
    on_caller(w);
    assert_true(done <= total);
    w->progress_calls++;
}

static icm__delete_hooks hooks_of(watch *w)
{
    icm__delete_hooks h = {.ctx = w, .before_batch = before_batch, .planned = planned,
                           .check = check, .progress = progress};
    return h;
}

/* A policy without waits (tests never sleep unless they measure the backoff). */
static icm__delete_policy quick(watch *w, size_t batch_files, unsigned threads)
{
    icm__delete_policy p = ICM__DELETE_POLICY_INIT;
    p.batch_files = batch_files;
    p.batch_ms = INT64_C(60000);
    p.threads = threads;
    p.retry_min_wait_ms = 0;
    p.retry_max_wait_ms = 0;
    p.on_delete = on_delete;
    p.on_delete_payload = w;
    return p;
}

static int run(rec_io *h, plan *p, const icm__delete_policy *pol, watch *w,
               icm__delete_stats *st)
{
    icm__delete_hooks hooks = hooks_of(w);
    return icm__delete_run(&h->base, p->items, p->n, pol, &hooks, st);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------------------------ */
/* tests                                                                                       */

/* Files given in mixed order are deleted by rank (stable within a rank), all of them and
 * nothing else; every file is reported once, in that order; no batch spans two ranks. */
static void test_rank_order_and_exact_files(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    static const icm__delete_rank ranks[] = {
        ICM__DELETE_RANK_COMPANION, ICM__DELETE_RANK_MANIFEST_LIST, ICM__DELETE_RANK_METADATA,
        ICM__DELETE_RANK_MANIFEST, ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "/t/x", 10, ranks, 5, -1);
    put(&h, "/t/x/live");
    watch w;
    watch_init(&w, &h, &p);
    icm__delete_policy pol = quick(&w, 100, 1);
    icm__delete_stats st;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    /* f4, f9 content; f3, f8 manifests; f1, f6 lists; f2, f7 statistics; f0, f5 companions */
    static const int want[] = {4, 9, 3, 8, 1, 6, 2, 7, 0, 5};
    assert_int_equal(h.n_log, 10);
    assert_int_equal(w.n_ev, 10);
    for (size_t i = 0; i < 10; i++) {
        assert_string_equal(h.log[i], p.paths[want[i]]);
        assert_string_equal(w.ev[i].path, p.paths[want[i]]);
        assert_int_equal(w.ev[i].outcome, ICM_DELETE_DELETED);
        assert_int_equal(w.ev[i].batch_end, i % 2 == 1); /* one batch per rank */
        assert_false(exists(&h, p.paths[i]));
        assert_int_equal(p.items[i].state, ICM__DELETE_DELETED);
        assert_int_equal(p.items[i].attempts, 1);
    }
    assert_true(exists(&h, "/t/x/live"));
    assert_int_equal(st.deleted, 10);
    assert_int_equal(st.batches, 5);
    assert_int_equal(w.batches, 5);
    assert_int_equal(st.requests, 10); /* local files: one request each */
    assert_false(w.off_thread);
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* Batches of at most batch_files files; before_batch runs before each (and sees the earlier
 * batches done); batch_end marks each batch's last file; a missing file is ALREADY_GONE,
 * counted apart. */
static void test_batches_batch_end_and_already_gone(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "/t/b", 5, content, 1, 3);
    watch w;
    watch_init(&w, &h, &p);
    icm__delete_policy pol = quick(&w, 2, 1);
    icm__delete_stats st;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_int_equal(w.batches, 3);
    assert_int_equal(w.gone_at_batch[0], 1); /* f3 never existed */
    assert_int_equal(w.gone_at_batch[1], 3);
    assert_int_equal(w.gone_at_batch[2], 4);
    assert_int_equal(w.n_ev, 5);
    static const bool ends[] = {false, true, false, true, true};
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(w.ev[i].path, p.paths[i]);
        assert_int_equal(w.ev[i].batch_end, ends[i]);
        assert_int_equal(w.ev[i].outcome, i == 3 ? ICM_DELETE_ALREADY_GONE : ICM_DELETE_DELETED);
        assert_false(exists(&h, p.paths[i]));
    }
    assert_int_equal(p.items[3].state, ICM__DELETE_GONE);
    assert_int_equal(st.deleted, 4);
    assert_int_equal(st.gone, 1);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.batches, 3);
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* A retryable failure is tried again, its check made again first, after a backoff that grows;
 * it then succeeds. */
static void test_retryable_failure_retried_with_backoff(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "/t/r", 3, content, 1, -1);
    rec_fail(&h, p.paths[1], 2, ICM_ETIMEOUT);
    watch w;
    watch_init(&w, &h, &p);
    icm__delete_policy pol = quick(&w, 10, 1);
    pol.retry_min_wait_ms = 30;
    pol.retry_max_wait_ms = 60;
    icm__delete_stats st;
    int64_t t0 = now_ms();
    icmt_ok(run(&h, &p, &pol, &w, &st));
    int64_t took = now_ms() - t0;
    assert_true(took >= 30 + 60); /* two waits: 30 ms, then doubled to 60 ms */
    assert_true(took < 5000);
    assert_int_equal(rec_count(&h, p.paths[1]), 3);
    assert_int_equal(w.checks[1], 3);
    assert_int_equal(p.items[1].attempts, 3);
    assert_int_equal(p.items[1].state, ICM__DELETE_DELETED);
    assert_int_equal(st.retries, 2);
    assert_int_equal(st.deleted, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_false(exists(&h, p.paths[i]));
        assert_int_equal(w.ev[i].outcome, ICM_DELETE_DELETED);
    }
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* Data-loss class "retry outside the keep set's re-check": a file whose first delete failed
 * retryably and that joins the keep set during the backoff (a concurrent commit re-references
 * it; here the planned hook, which reflects the keep set that before_batch re-checks, says no
 * from the second batch on) is not sent again: it is dropped, exists afterwards, and is never
 * reported; the retry went through before_batch first. The others are deleted. Also through a
 * batch slot (object-store keys). */
static void test_retry_rechecks_the_keep_set(void **state)
{
    (void)state;
    for (int slot = 0; slot <= 1; slot++) {
        rec_io h;
        rec_init(&h);
        if (slot)
            h.base.methods = &REC_BATCH_METHODS;
        static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
        plan p = plan_new(&h, slot ? "s3://b/t/k" : "/t/k", 3, content, 1, -1);
        if (slot)
            rec_fail_marked(&h, p.paths[1], 1, ICM_EIO, true);
        else
            rec_fail(&h, p.paths[1], 1, ICM_ETIMEOUT);
        watch w;
        watch_init(&w, &h, &p);
        w.drop = 1; /* joins the keep set: planned says no from the 2nd batch on */
        icm__delete_policy pol = quick(&w, 10, 1);
        icm__delete_stats st;
        icmt_ok(run(&h, &p, &pol, &w, &st));
        assert_int_equal(w.batches, 2); /* the retry's batch re-checked the keep set */
        assert_int_equal(rec_count(&h, p.paths[1]), 1); /* never sent again */
        assert_int_equal(p.items[1].attempts, 1);
        assert_int_equal(p.items[1].state, ICM__DELETE_DROPPED);
        assert_int_equal(w.checks[1], 1);
        assert_true(exists(&h, p.paths[1]));
        assert_false(exists(&h, p.paths[0]) || exists(&h, p.paths[2]));
        assert_int_equal(st.dropped, 1);
        assert_int_equal(st.deleted, 2);
        assert_int_equal(w.n_ev, 2);
        for (size_t i = 0; i < w.n_ev; i++)
            assert_string_not_equal(w.ev[i].path, p.paths[1]);
        watch_free(&w);
        plan_free(&p);
        rec_free(&h);
    }
}

/* A failure the back end does not mark retryable is final at once; a retryable one that keeps
 * failing is FAILED once the attempts, or the time budget of the waits, are used up. */
static void test_failures_not_retryable_and_budget_exhausted(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "/t/f", 4, content, 1, -1);
    rec_fail(&h, p.paths[0], -1, ICM_EAUTH);    /* not retryable */
    rec_fail(&h, p.paths[1], -1, ICM_ENET);     /* retryable, always failing */
    watch w;
    watch_init(&w, &h, &p);
    icm__delete_policy pol = quick(&w, 10, 1);
    icm__delete_stats st;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_int_equal(rec_count(&h, p.paths[0]), 1);
    assert_int_equal(p.items[0].state, ICM__DELETE_FAILED);
    assert_int_equal(p.items[0].code, ICM_EAUTH);
    assert_non_null(strstr(p.items[0].message, "injected failure"));
    assert_int_equal(rec_count(&h, p.paths[1]), ICM_DELETE_RETRY_ATTEMPTS);
    assert_int_equal(p.items[1].state, ICM__DELETE_FAILED);
    assert_int_equal(p.items[1].code, ICM_ENET);
    assert_true(exists(&h, p.paths[0]) && exists(&h, p.paths[1]));
    assert_false(exists(&h, p.paths[2]) || exists(&h, p.paths[3]));
    /* the retried file is reported once its retries are settled: after the others */
    assert_int_equal(w.n_ev, 4);
    assert_string_equal(w.ev[0].path, p.paths[0]);
    assert_int_equal(w.ev[0].outcome, ICM_DELETE_FAILED);
    assert_int_equal(w.ev[0].code, ICM_EAUTH);
    assert_string_equal(w.ev[3].path, p.paths[1]);
    assert_int_equal(w.ev[3].outcome, ICM_DELETE_FAILED);
    assert_int_equal(w.ev[3].code, ICM_ENET);
    assert_int_equal(st.failed, 2);
    assert_int_equal(st.deleted, 2);
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);

    /* The time budget: waits of 40 ms then 80 ms, 100 ms allowed: the second retry is not
     * made. */
    rec_init(&h);
    p = plan_new(&h, "/t/g", 1, content, 1, -1);
    rec_fail(&h, p.paths[0], -1, ICM_ETIMEOUT);
    watch_init(&w, &h, &p);
    pol = quick(&w, 10, 1);
    pol.retry_attempts = 5;
    pol.retry_min_wait_ms = 40;
    pol.retry_max_wait_ms = 1000;
    pol.retry_total_wait_ms = 100;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_int_equal(rec_count(&h, p.paths[0]), 2);
    assert_int_equal(p.items[0].state, ICM__DELETE_FAILED);
    assert_int_equal(p.items[0].code, ICM_ETIMEOUT);
    assert_true(exists(&h, p.paths[0]));
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);

    /* No retries at all (the sweep's policy). */
    rec_init(&h);
    p = plan_new(&h, "/t/h", 1, content, 1, -1);
    rec_fail(&h, p.paths[0], 1, ICM_EIO);
    watch_init(&w, &h, &p);
    pol = quick(&w, 10, 1);
    pol.retry_attempts = 1;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_int_equal(rec_count(&h, p.paths[0]), 1);
    assert_int_equal(p.items[0].state, ICM__DELETE_FAILED);
    assert_true(exists(&h, p.paths[0]));
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* Through a batch slot the back end's mark decides, not the code: an ICM_EIO marked retryable
 * is retried (with only the failed key in the retry's request), an ICM_ETIMEOUT not marked is
 * final. */
static void test_retry_follows_the_back_ends_mark(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    h.base.methods = &REC_BATCH_METHODS;
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "s3://b/t/m", 4, content, 1, -1);
    rec_fail_marked(&h, p.paths[1], 1, ICM_EIO, true);
    rec_fail_marked(&h, p.paths[2], 1, ICM_ETIMEOUT, false);
    watch w;
    watch_init(&w, &h, &p);
    icm__delete_policy pol = quick(&w, 10, 1);
    icm__delete_stats st;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_int_equal(h.n_requests, 2);
    assert_int_equal(h.requests[0], 4);
    assert_int_equal(h.requests[1], 1);
    assert_int_equal(p.items[1].state, ICM__DELETE_DELETED);
    assert_int_equal(p.items[1].attempts, 2);
    assert_int_equal(p.items[2].state, ICM__DELETE_FAILED);
    assert_int_equal(p.items[2].code, ICM_ETIMEOUT);
    assert_int_equal(p.items[2].attempts, 1);
    assert_int_equal(w.checks[1], 2);
    assert_int_equal(w.checks[0], 1);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(exists(&h, p.paths[i]), i == 2);
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* The callback's non-zero return stops the run after its batch: the batch's files are all
 * handled (recorded), no later file of it is reported, nothing after it is deleted. */
static void test_callback_stop_ends_after_the_batch(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "/t/c", 7, content, 1, -1);
    watch w;
    watch_init(&w, &h, &p);
    w.stop_at = 2;
    icm__delete_policy pol = quick(&w, 3, 1);
    icm__delete_stats st;
    assert_int_equal(run(&h, &p, &pol, &w, &st), ICM_EUSER);
    assert_int_equal(icm_error_last()->code, ICM_EUSER);
    assert_int_equal(w.n_ev, 2);
    assert_int_equal(w.batches, 1);
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(exists(&h, p.paths[i]), i >= 3);
        assert_int_equal(p.items[i].state, i < 3 ? ICM__DELETE_DELETED : ICM__DELETE_PENDING);
    }
    assert_int_equal(h.n_log, 3);
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* The check right before the delete: KEPT stays and is not reported; FAILED stays and is
 * reported; GONE is ALREADY_GONE without a request. The planned hook (the keep set grown
 * between batches) drops a file: never deleted, never reported. */
static void test_check_and_planned_hooks_keep_files(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "/t/k", 6, content, 1, -1);
    watch w;
    watch_init(&w, &h, &p);
    w.keep = 1;
    w.fail = 2;
    w.gone_check = 0;
    w.drop = 4; /* in the second batch */
    icm__delete_policy pol = quick(&w, 3, 1);
    icm__delete_stats st;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_true(exists(&h, p.paths[0])); /* the check said gone: no request was made */
    assert_true(exists(&h, p.paths[1]));
    assert_true(exists(&h, p.paths[2]));
    assert_false(exists(&h, p.paths[3]));
    assert_true(exists(&h, p.paths[4]));
    assert_false(exists(&h, p.paths[5]));
    assert_int_equal(h.n_log, 2);
    assert_int_equal(p.items[0].state, ICM__DELETE_GONE);
    assert_int_equal(p.items[1].state, ICM__DELETE_KEPT);
    assert_int_equal(p.items[1].code, ICM_EREFUSED);
    assert_string_equal(p.items[1].message, "changed; kept");
    assert_int_equal(p.items[2].state, ICM__DELETE_FAILED);
    assert_int_equal(p.items[4].state, ICM__DELETE_DROPPED);
    assert_int_equal(w.checks[4], 0);
    /* events: f0 gone, f2 failed (the batch's last reported: f1 is kept), f3, f5 */
    assert_int_equal(w.n_ev, 4);
    assert_string_equal(w.ev[0].path, p.paths[0]);
    assert_int_equal(w.ev[0].outcome, ICM_DELETE_ALREADY_GONE);
    assert_string_equal(w.ev[1].path, p.paths[2]);
    assert_int_equal(w.ev[1].outcome, ICM_DELETE_FAILED);
    assert_int_equal(w.ev[1].code, ICM_EREFUSED);
    assert_true(w.ev[1].batch_end);
    assert_string_equal(w.ev[2].path, p.paths[3]);
    assert_false(w.ev[2].batch_end);
    assert_string_equal(w.ev[3].path, p.paths[5]);
    assert_true(w.ev[3].batch_end);
    assert_int_equal(st.kept, 1);
    assert_int_equal(st.dropped, 1);
    assert_int_equal(st.gone, 1);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.deleted, 2);
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* Object-store keys go up to ICM_FILEIO_DELETE_BATCH_MAX per request: 2500 keys in one batch
 * are three requests; local files one request each. Progress is reported from the calling
 * thread. */
static void test_object_store_keys_are_chunked(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    h.base.methods = &REC_BATCH_METHODS;
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "s3://bucket/t/data", 2500, content, 1, -1);
    put(&h, "s3://bucket/t/data/live");
    watch w;
    watch_init(&w, &h, &p);
    icm__delete_policy pol = quick(&w, 5000, 1);
    icm__delete_stats st;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_int_equal(st.batches, 1);
    assert_int_equal(st.requests, 3);
    assert_int_equal(h.n_requests, 3);
    assert_int_equal(h.requests[0], 1000);
    assert_int_equal(h.requests[1], 1000);
    assert_int_equal(h.requests[2], 500);
    assert_int_equal(st.deleted, 2500);
    assert_int_equal(h.n_log, 2500);
    for (size_t i = 0; i < p.n; i++) {
        assert_false(exists(&h, p.paths[i]));
        assert_string_equal(h.log[i], p.paths[i]);
    }
    assert_true(exists(&h, "s3://bucket/t/data/live"));
    assert_int_equal(w.n_ev, 2500);
    assert_true(w.ev[2499].batch_end);
    assert_true(w.progress_calls >= 2); /* at 1000 and 2000 */
    assert_false(w.off_thread);
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* An object-store chunk's checks (the sweep's re-stat: a request each) run many at a time,
 * every one of them after the previous chunk's request and before its own: each file is
 * checked exactly once, the check of file i sees i / 1000 requests made, and two checks were
 * in flight at once (the first check waits, up to 10 s, for a second to arrive). */
typedef struct chunk_watch {
    rec_io *io;
    pthread_mutex_t lock;
    pthread_cond_t arrived;
    int in_flight, max_in_flight;
    int checks[2500];
    size_t requests_seen[2500];
} chunk_watch;

static icm__delete_verdict check_in_chunk(void *ctx, icm__link_cache *cache,
                                          const icm__delete_item *item, int *code)
{
    (void)cache;
    (void)code;
    chunk_watch *c = ctx;
    pthread_mutex_lock(&c->lock);
    c->checks[item->ref]++;
    c->requests_seen[item->ref] = c->io->n_requests;
    if (++c->in_flight > c->max_in_flight)
        c->max_in_flight = c->in_flight;
    pthread_cond_broadcast(&c->arrived);
    if (item->ref == 0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        while (c->max_in_flight < 2 &&
               pthread_cond_timedwait(&c->arrived, &c->lock, &until) == 0)
            ;
    }
    c->in_flight--;
    pthread_mutex_unlock(&c->lock);
    return ICM__VERDICT_DELETE;
}

static void test_a_chunks_checks_run_at_once_before_its_request(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    h.base.methods = &REC_BATCH_METHODS;
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "s3://bucket/t/data", 2500, content, 1, -1);
    chunk_watch c = {.io = &h};
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.arrived, NULL);
    icm__delete_hooks hooks = {.ctx = &c, .check = check_in_chunk};
    icm__delete_policy pol = ICM__DELETE_POLICY_INIT;
    pol.batch_files = 5000;
    pol.batch_ms = INT64_C(60000);
    pol.threads = 1;
    icm__delete_stats st;
    icmt_ok(icm__delete_run(&h.base, p.items, p.n, &pol, &hooks, &st));
    assert_int_equal(st.requests, 3);
    assert_int_equal(h.requests[0], 1000);
    assert_int_equal(h.requests[1], 1000);
    assert_int_equal(h.requests[2], 500);
    assert_int_equal(st.deleted, 2500);
    for (size_t i = 0; i < p.n; i++) {
        assert_int_equal(c.checks[i], 1);
        assert_int_equal(c.requests_seen[i], i / 1000);
        assert_false(exists(&h, p.paths[i]));
    }
    assert_true(c.max_in_flight >= 2);
    pthread_cond_destroy(&c.arrived);
    pthread_mutex_destroy(&c.lock);
    plan_free(&p);
    rec_free(&h);
}

/* A name of an object store that a path map maps onto local disk (`--path-map s3://b/t=/copy`,
 * the documented way to maintain a copy) is a local file: deleted alone, right after its own
 * check, never batched with other files whose checks ran before it (the sweep's re-stat must
 * be right before each unlink; a file written at an orphan's name after a batched check was
 * deleted). */
static int count_checks(void *ctx, icm__delete_rank rank)
{
    (void)ctx;
    (void)rank;
    return 0;
}

static icm__delete_verdict check_counted(void *ctx, icm__link_cache *cache,
                                         const icm__delete_item *item, int *code)
{
    (void)cache;
    (void)code;
    (void)item;
    (*(size_t *)ctx)++;
    return ICM__VERDICT_DELETE;
}

/* Delete n files named `s3://bucket/t/data/<stem><i>.parquet` through `io`, which keeps them
 * below `dir`: each must be deleted alone, right after its own check. */
static void expect_deleted_alone(icm_fileio *io, const char *dir, const char *stem)
{
    enum { N = 4 };
    char *names[N], *real[N];
    icm__delete_item items[N];
    memset(items, 0, sizeof items);
    for (size_t i = 0; i < N; i++) {
        names[i] = icmt_sprintf("s3://bucket/t/data/%s%zu.parquet", stem, i);
        real[i] = icmt_sprintf("%s/data/%s%zu.parquet", dir, stem, i);
        icmt_ok(icm_fileio_create_new(io, names[i], "x", 1));
        assert_true(icmt_file_exists(real[i]));
        items[i] = (icm__delete_item){.path = names[i], .kind = "data", .size_bytes = 1,
                                      .rank = ICM__DELETE_RANK_CONTENT, .ref = i};
    }
    assert_true(icm__fileio_deletes_locally(io, names[0]));
    size_t checks = 0;
    icm__delete_hooks h = {.ctx = &checks, .enter_rank = count_checks, .check = check_counted};
    icm__delete_policy pol = ICM__DELETE_POLICY_INIT;
    icm__delete_stats st;
    icmt_ok(icm__delete_run(io, items, N, &pol, &h, &st));
    assert_int_equal(checks, N);
    assert_int_equal(st.deleted, N);
    assert_int_equal(st.requests, N); /* one request per file, each right after its check */
    for (size_t i = 0; i < N; i++) {
        assert_false(icmt_file_exists(real[i]));
        free(names[i]);
        free(real[i]);
    }
    icm__delete_items_dispose(items, N);
}

static void test_mapped_object_store_names_deleted_alone(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    icm_fileio *local = NULL, *io = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    icm_path_map map_rule = {"s3://bucket/t", dir};
    icmt_ok(icm_fileio_pathmap_new(&io, local, &map_rule, 1));
    expect_deleted_alone(io, dir, "f");
    /* (a name no rule maps reaches the local back end as it is: whatever it deletes is an
     * unlink, so local too) */
    assert_true(icm__fileio_deletes_locally(io, "s3://other/t/data/f0.parquet"));
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(dir);
}

/* The same through a resolving FileIO whose `s3` back end is such a path map (a library user's
 * registration): the resolving FileIO asks the back end it picks, so those files are local too
 * (any wrapper the walk could not see through batched them). A back end
 * that cannot tell (no is_local slot) gets the careful answer. */
static int local_map_factory(icm_fileio **out, const icm_property *props, size_t n,
                             void *payload)
{
    (void)props;
    (void)n;
    icm_fileio *local = NULL;
    int rc = icm_fileio_local_new(&local);
    icm_path_map map_rule = {"s3://bucket/t", payload};
    return rc == 0 ? icm_fileio_pathmap_new(out, local, &map_rule, 1) : rc;
}

static void test_resolved_local_names_deleted_alone(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    icmt_ok(icm_fileio_register_scheme("s3", local_map_factory, dir));
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_resolving_new(&io, NULL, 0));
    expect_deleted_alone(io, dir, "g");
    icm_fileio_free(io);
    icmt_ok(icm_fileio_register_scheme("s3", NULL, NULL));
    /* a back end without the slot, whatever it wraps: careful */
    rec_io h2;
    rec_init(&h2);
    assert_true(icm__fileio_deletes_locally(&h2.base, "s3://bucket/t/data/x"));
    h2.base.methods = &REC_BATCH_METHODS; /* says: an object store */
    assert_false(icm__fileio_deletes_locally(&h2.base, "s3://bucket/t/data/x"));
    assert_true(icm__fileio_deletes_locally(&h2.base, "/t/data/x")); /* a local name */
    /* a version-4 back end has no is_local slot: never read (careful), whatever lies there */
    icm_fileio_methods v4 = REC_BATCH_METHODS;
    v4.version = 4;
    h2.base.methods = &v4;
    assert_true(icm__fileio_deletes_locally(&h2.base, "s3://bucket/t/data/x"));
    rec_free(&h2);
    icmt_rmtree(dir);
    free(dir);
}

/* The batch's time bound: no file is started once it is up, the first always is. */
static void test_batch_time_bound(void **state)
{
    (void)state;
    rec_io h;
    rec_init(&h);
    static const icm__delete_rank content[] = {ICM__DELETE_RANK_CONTENT};
    plan p = plan_new(&h, "/t/tm", 3, content, 1, -1);
    watch w;
    watch_init(&w, &h, &p);
    icm__delete_policy pol = quick(&w, 10, 1);
    pol.batch_ms = -1; /* up before it starts */
    icm__delete_stats st;
    icmt_ok(run(&h, &p, &pol, &w, &st));
    assert_int_equal(st.batches, 3);
    assert_int_equal(w.batches, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(w.ev[i].batch_end);
        assert_false(exists(&h, p.paths[i]));
    }
    watch_free(&w);
    plan_free(&p);
    rec_free(&h);
}

/* Eight threads give the same outcomes, the same events in the same order, as one. */
static void test_concurrency_same_outcomes(void **state)
{
    (void)state;
    static const icm__delete_rank ranks[] = {ICM__DELETE_RANK_CONTENT, ICM__DELETE_RANK_MANIFEST,
                                             ICM__DELETE_RANK_MANIFEST_LIST};
    event *seen[2] = {NULL, NULL};
    size_t n_seen[2] = {0, 0};
    icm__delete_state states[2][1200];
    for (int pass = 0; pass < 2; pass++) {
        for (const char *prefix = "/t/p"; prefix != NULL;
             prefix = strcmp(prefix, "/t/p") == 0 ? "s3://b/t/p" : NULL) {
            rec_io h;
            rec_init(&h);
            plan p = plan_new(&h, prefix, 600, ranks, 3, 17);
            rec_fail(&h, p.paths[5], -1, ICM_EAUTH);
            rec_fail(&h, p.paths[42], 2, ICM_ETIMEOUT);
            watch w;
            watch_init(&w, &h, &p);
            w.keep = 100;
            w.fail = 200;
            icm__delete_policy pol = quick(&w, 250, pass == 0 ? 1 : 8);
            icm__delete_stats st;
            icmt_ok(run(&h, &p, &pol, &w, &st));
            assert_false(w.off_thread);
            assert_int_equal(st.deleted, 600 - 4);
            size_t off = prefix[0] == '/' ? 0 : 600;
            for (size_t i = 0; i < p.n; i++) {
                states[pass][off + i] = p.items[i].state;
                bool stays = i == 5 || i == 100 || i == 200;
                assert_int_equal(exists(&h, p.paths[i]), stays);
            }
            assert_int_equal(p.items[42].state, ICM__DELETE_DELETED);
            seen[pass] = realloc(seen[pass], (n_seen[pass] + w.n_ev) * sizeof *seen[pass]);
            for (size_t i = 0; i < w.n_ev; i++) {
                seen[pass][n_seen[pass]++] = w.ev[i];
                w.ev[i].path = NULL; /* moved */
            }
            watch_free(&w);
            plan_free(&p);
            rec_free(&h);
        }
    }
    assert_memory_equal(states[0], states[1], sizeof states[0]);
    assert_int_equal(n_seen[0], n_seen[1]);
    for (size_t i = 0; i < n_seen[0]; i++) {
        assert_string_equal(seen[0][i].path, seen[1][i].path);
        assert_int_equal(seen[0][i].outcome, seen[1][i].outcome);
        assert_int_equal(seen[0][i].code, seen[1][i].code);
        assert_int_equal(seen[0][i].batch_end, seen[1][i].batch_end);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n_seen[pass]; i++)
            free(seen[pass][i].path);
        free(seen[pass]);
    }
}

/* Through the sweep: orphans are deleted by kind (data, manifest, manifest list, metadata and
 * other files), whatever the listing order, and the result keeps listing order. */
typedef struct kinds {
    char kind[8][16];
    char path[8][64];
    int n;
} kinds;

static int note_kind(const icm_delete_event *ev, void *payload)
{
    kinds *k = payload;
    assert_true(k->n < 8);
    snprintf(k->kind[k->n], sizeof k->kind[k->n], "%s", ev->kind);
    snprintf(k->path[k->n], sizeof k->path[k->n], "%s", ev->path);
    assert_int_equal(ev->outcome, ICM_DELETE_DELETED);
    k->n++;
    return 0;
}

static void test_sweep_deletes_orphans_by_kind(void **state)
{
    (void)state;
    int64_t now = icm__now_ms(), old = now - 10 * DAY_MS;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    hist *h = hist_new(mem, "/k", 2, false, now - 20 * DAY_MS);
    hist_append(h, "main", "A", NULL);
    static const char *const strays[] = {"/k/metadata/snap-99-1-lost.avro", "/k/metadata/lost-m0.avro",
                                         "/k/data/lost.parquet", "/k/metadata/notes.txt",
                                         "/k/data/zz.bin"};
    for (size_t i = 0; i < 5; i++)
        plant(mem, strays[i], old);
    icm_table *t = hist_open_table(h);
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = now;
    o.max_concurrent_deletes = 3;
    kinds k;
    memset(&k, 0, sizeof k);
    o.on_delete = note_kind;
    o.on_delete_payload = &k;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, t, &o));
    assert_int_equal(r->orphan_count, 5);
    assert_int_equal(r->deleted, 5);
    assert_int_equal(k.n, 5);
    /* by rank: data files, manifest, manifest list, then the other file */
    static const char *const rank_of_kind[] = {"data", "manifest", "manifest_list", "metadata"};
    int last = 0;
    for (int i = 0; i < k.n; i++) {
        int rank = 3;
        for (int j = 0; j < 3; j++)
            if (strcmp(k.kind[i], rank_of_kind[j]) == 0)
                rank = j;
        assert_true(rank >= last);
        last = rank;
        assert_true(k.path[i][0] == '/');
    }
    assert_string_equal(k.kind[0], "data");
    assert_string_equal(k.kind[1], "data");
    assert_string_equal(k.kind[2], "manifest");
    assert_string_equal(k.kind[3], "manifest_list");
    assert_string_equal(k.kind[4], "other");
    for (size_t i = 0; i < 5; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        assert_int_equal(icm_fileio_stat(&info, mem, strays[i]), ICM_ENOTFOUND);
    }
    for (size_t i = 0; i < r->orphan_count; i++)
        assert_int_equal(r->orphans[i].state, ICM_ORPHAN_DELETED);
    icm_orphan_result_free(r);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_order_and_exact_files),
        cmocka_unit_test(test_batches_batch_end_and_already_gone),
        cmocka_unit_test(test_retryable_failure_retried_with_backoff),
        cmocka_unit_test(test_retry_rechecks_the_keep_set),
        cmocka_unit_test(test_failures_not_retryable_and_budget_exhausted),
        cmocka_unit_test(test_retry_follows_the_back_ends_mark),
        cmocka_unit_test(test_callback_stop_ends_after_the_batch),
        cmocka_unit_test(test_check_and_planned_hooks_keep_files),
        cmocka_unit_test(test_object_store_keys_are_chunked),
        cmocka_unit_test(test_a_chunks_checks_run_at_once_before_its_request),
        cmocka_unit_test(test_mapped_object_store_names_deleted_alone),
        cmocka_unit_test(test_resolved_local_names_deleted_alone),
        cmocka_unit_test(test_batch_time_bound),
        cmocka_unit_test(test_concurrency_same_outcomes),
        cmocka_unit_test(test_sweep_deletes_orphans_by_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
