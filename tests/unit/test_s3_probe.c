/*
 * tests/unit/test_s3_probe.c: many small requests at once (io/probe.h; the S3 back end's batch
 * on libcurl multi, src/io/s3/s3.c) against a keep-alive HTTP server of this test on loopback.
 *
 * The server is one thread polling every connection: it reads requests as they come, answers
 * each after DELAY_MS (a distant store in miniature), and counts what a batch must honour: the
 * requests it held unanswered at once (never more than s3.check.max-in-flight, and that many
 * reached), the connections opened (kept alive and reused: about one per request in flight, not
 * one per request), and each object's requests. Objects are `o/<i>`; what object i is depends on
 * i % 10 (below): there, gone (404), forbidden (403), throttled once (503 SlowDown), cut once
 * (the connection closed on the request), refused once for an expired token (400 ExpiredToken),
 * a SQLite database. Each test asserts every item's exact result, also against the per-item
 * calls (icm_fileio_stat, icm_fileio_read_range) on the same objects: the batch must give what
 * they give.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "icemaint/sys/fileio.h"
#include "io/probe.h"
#include "util/util.h"

#define MAX_CONNS 512
#define MAX_OBJECTS 4096
#define DELAY_MS 3

enum { KIND_OK, KIND_GONE, KIND_DENIED, KIND_SLOWDOWN, KIND_RESET, KIND_EXPIRED, KIND_SQLITE };

/* Every object throttled once (test_slowdown_lowers_the_limit). */
static atomic_int g_all_slowdown;

static int kind_of(int i)
{
    if (atomic_load(&g_all_slowdown))
        return KIND_SLOWDOWN;
    switch (i % 10) {
    case 3:
        return KIND_GONE;
    case 5:
        return KIND_DENIED;
    case 7:
        return KIND_SLOWDOWN;
    case 8:
        return KIND_RESET;
    case 9:
        return KIND_EXPIRED;
    case 1:
        return KIND_SQLITE;
    default:
        return KIND_OK;
    }
}

/* Object i's size: i bytes (a SQLite database: 4096). */
static int size_of(int i)
{
    return kind_of(i) == KIND_SQLITE ? 4096 : i;
}

typedef struct conn {
    int fd;
    char in[8192];
    size_t in_len;
    int64_t due_ms; /* an answer is pending (0: none) */
    char method[8];
    int object;     /* the pending request's object, -1: not one of ours */
    char range[64];
} conn;

typedef struct server {
    int fd, port;
    pthread_t thread;
    atomic_int stop;
    conn conns[MAX_CONNS];
    /* counters (read after stop) */
    int accepted, open, max_open, pending, max_pending, requests;
    int pending_retries, max_pending_retries; /* requests for an object asked before */
    int delay_ms; /* how long each answer is held */
    int per_object[MAX_OBJECTS];
} server;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drop(server *s, conn *c)
{
    if (c->due_ms != 0) {
        s->pending--;
        if (c->object >= 0 && s->per_object[c->object] > 1)
            s->pending_retries--;
    }
    close(c->fd);
    c->fd = -1;
    c->due_ms = 0;
    s->open--;
}

#define XML_ERR(code) "<?xml version=\"1.0\"?><Error><Code>" code "</Code><Message>m</Message>" \
                      "<RequestId>RID-" code "</RequestId></Error>"

/* Answer c's pending request (or close it: the cut). */
static void answer(server *s, conn *c)
{
    int i = c->object;
    bool head = strcmp(c->method, "HEAD") == 0;
    int first = i >= 0 ? s->per_object[i] == 1 : 0;
    int kind = i >= 0 ? kind_of(i) : KIND_GONE;
    char out[1024];
    const char *body = "";
    int status = 200;
    char extra[256] = "";
    if (kind == KIND_RESET && first) {
        drop(s, c);
        return;
    }
    if (kind == KIND_GONE) {
        status = 404;
        body = head ? "" : XML_ERR("NoSuchKey");
    } else if (kind == KIND_DENIED) {
        status = 403;
        body = head ? "" : XML_ERR("AccessDenied");
    } else if (kind == KIND_SLOWDOWN && first) {
        status = 503;
        body = head ? "" : XML_ERR("SlowDown");
    } else if (kind == KIND_EXPIRED && first) {
        status = 400;
        body = head ? "" : XML_ERR("ExpiredToken");
    }
    char data[16];
    size_t data_len = 0;
    if (status == 200) {
        int size = size_of(i);
        if (head) {
            snprintf(extra, sizeof extra,
                     "Content-Length: %d\r\nLast-Modified: Wed, 12 Oct 2009 17:50:00 GMT\r\n",
                     size);
        } else if (size == 0) {
            status = 416;
        } else {
            status = 206;
            data_len = size < 16 ? (size_t)size : 16;
            if (kind == KIND_SQLITE)
                memcpy(data, "SQLite format 3", 16);
            else
                memset(data, 'x', data_len);
            snprintf(extra, sizeof extra, "Content-Range: bytes 0-%zu/%d\r\n", data_len - 1,
                     size);
        }
    }
    size_t blen = data_len > 0 ? data_len : strlen(body);
    int n = snprintf(out, sizeof out, "HTTP/1.1 %d X\r\n%s%sx-amz-request-id: RQ%d\r\n\r\n",
                     status, extra,
                     head && status == 200 ? "" : "", i);
    if (!(head && status == 200)) {
        /* every answer but a HEAD's 200 (which carries the object's length) says its own */
        n = snprintf(out, sizeof out,
                     "HTTP/1.1 %d X\r\n%sContent-Length: %zu\r\nx-amz-request-id: RQ%d\r\n\r\n",
                     status, extra, head ? (size_t)0 : blen, i);
        if (!head) {
            memcpy(out + n, data_len > 0 ? data : body, blen);
            n += (int)blen;
        }
    }
    c->due_ms = 0;
    s->pending--;
    if (c->object >= 0 && s->per_object[c->object] > 1)
        s->pending_retries--;
    if (write(c->fd, out, (size_t)n) != n)
        drop(s, c);
}

/* Take complete requests out of c->in (one at a time: a client sends the next only after the
 * answer). */
static void take_request(server *s, conn *c)
{
    char *end = strstr(c->in, "\r\n\r\n");
    if (end == NULL || c->due_ms != 0)
        return;
    char target[512] = "";
    sscanf(c->in, "%7s %511s", c->method, target);
    const char *o = strstr(target, "/o/");
    c->object = o != NULL ? atoi(o + 3) : -1;
    if (c->object >= MAX_OBJECTS)
        c->object = -1;
    size_t used = (size_t)(end + 4 - c->in);
    memmove(c->in, c->in + used, c->in_len - used + 1);
    c->in_len -= used;
    s->requests++;
    if (c->object >= 0 && ++s->per_object[c->object] > 1 &&
        ++s->pending_retries > s->max_pending_retries)
        s->max_pending_retries = s->pending_retries;
    c->due_ms = now_ms() + s->delay_ms;
    if (++s->pending > s->max_pending)
        s->max_pending = s->pending;
}

static void *serve(void *arg)
{
    server *s = arg;
    struct pollfd pfd[MAX_CONNS + 1];
    while (!atomic_load(&s->stop)) {
        int np = 0;
        pfd[np++] = (struct pollfd){s->fd, POLLIN, 0};
        int idx[MAX_CONNS + 1];
        int64_t next_due = now_ms() + 20;
        for (int k = 0; k < MAX_CONNS; k++) {
            conn *c = &s->conns[k];
            if (c->fd < 0)
                continue;
            if (c->due_ms != 0 && c->due_ms < next_due)
                next_due = c->due_ms;
            idx[np] = k;
            pfd[np++] = (struct pollfd){c->fd, POLLIN, 0};
        }
        int64_t wait = next_due - now_ms();
        poll(pfd, (nfds_t)np, wait > 0 ? (int)wait : 0);
        if (pfd[0].revents & POLLIN) {
            int fd = accept(s->fd, NULL, NULL);
            for (int k = 0; fd >= 0 && k < MAX_CONNS; k++)
                if (s->conns[k].fd < 0) {
                    s->conns[k] = (conn){.fd = fd};
                    s->accepted++;
                    if (++s->open > s->max_open)
                        s->max_open = s->open;
                    fd = -1;
                }
            if (fd >= 0)
                close(fd);
        }
        for (int p = 1; p < np; p++) {
            conn *c = &s->conns[idx[p]];
            if (c->fd < 0 || !(pfd[p].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = read(c->fd, c->in + c->in_len, sizeof c->in - 1 - c->in_len);
            if (r <= 0) {
                drop(s, c);
                continue;
            }
            c->in_len += (size_t)r;
            c->in[c->in_len] = '\0';
            take_request(s, c);
        }
        int64_t now = now_ms();
        for (int k = 0; k < MAX_CONNS; k++) {
            conn *c = &s->conns[k];
            if (c->fd >= 0 && c->due_ms != 0 && c->due_ms <= now) {
                answer(s, c);
                if (c->fd >= 0)
                    take_request(s, c);
            }
        }
    }
    for (int k = 0; k < MAX_CONNS; k++)
        if (s->conns[k].fd >= 0)
            close(s->conns[k].fd);
    return NULL;
}

static server *server_start(void)
{
    server *s = calloc(1, sizeof *s);
    s->delay_ms = DELAY_MS;
    for (int k = 0; k < MAX_CONNS; k++)
        s->conns[k].fd = -1;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->fd, 256), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
    return s;
}

static void server_stop(server *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->fd);
}

/* Forget the counts (between phases; the server thread must be idle: no batch running). */
static void server_reset_counts(server *s)
{
    s->accepted = s->max_open = s->max_pending = s->requests = 0;
    memset(s->per_object, 0, sizeof s->per_object);
}

static icm_fileio *open_s3(const server *s, const char *in_flight, bool resolving)
{
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", s->port);
    icm_property props[] = {{"s3.endpoint", endpoint},
                            {"s3.access-key-id", "AKID"},
                            {"s3.secret-access-key", "secret"},
                            {"s3.region", "us-east-1"},
                            {"s3.path-style-access", "true"},
                            {"s3.retry.max-attempts", "4"},
                            {"s3.check.max-in-flight", in_flight}};
    icm_fileio *io = NULL;
    if (resolving)
        icmt_ok(icm_fileio_resolving_new(&io, props, 7));
    else
        icmt_ok(icm_fileio_s3_new(&io, props, 7));
    return io;
}

static char *location_of(int i)
{
    return icm__sprintf("s3://bkt/o/%d", i);
}

/* The result each object must have, for a stat (HEAD) and for its first 16 bytes. */
static void expect_item(const icm__probe *p, int i, icm__probe_kind kind)
{
    int kind_i = kind_of(i);
    if (kind_i == KIND_GONE) {
        assert_int_equal(p->rc, ICM_ENOTFOUND);
        assert_null(p->error);
        return;
    }
    if (kind_i == KIND_DENIED) {
        assert_int_equal(p->rc, ICM_EAUTH);
        assert_non_null(p->error);
        icm__error_saved *e = p->error;
        icm__error_restore(e);
        const icm_error *err = icm_error_last();
        assert_int_equal(err->http_status, 403);
        assert_string_equal(err->location, p->location);
        if (kind == ICM__PROBE_FIRST_BYTES) {
            assert_string_equal(err->remote_code, "AccessDenied");
            assert_non_null(strstr(err->message, "request id RID-AccessDenied"));
        }
        icm_error_clear();
        ((icm__probe *)p)->error = NULL; /* (restored: freed) */
        return;
    }
    if (kind_i == KIND_EXPIRED && kind == ICM__PROBE_STAT) {
        /* A HEAD's answer has no body, so no code says the token expired: a 400 is a failure
         * (as for the per-item stat), not retried. */
        assert_int_equal(p->rc, ICM_EIO);
        icm__error_restore(p->error);
        assert_int_equal(icm_error_last()->http_status, 400);
        icm_error_clear();
        ((icm__probe *)p)->error = NULL;
        return;
    }
    if (p->rc != 0)
        fail_msg("%s: %d", p->location, p->rc);
    if (kind == ICM__PROBE_STAT) {
        assert_int_equal(p->info.size_bytes, size_of(i));
        assert_int_equal(p->info.mtime_ms, INT64_C(1255369800000));
        assert_string_equal(p->info.location, p->location);
    } else {
        size_t want = size_of(i) < 16 ? (size_t)size_of(i) : 16;
        assert_int_equal(p->n_read, want);
        if (kind_i == KIND_SQLITE)
            assert_memory_equal(p->buf, "SQLite format 3", 16);
    }
}

/* n objects through a batch of `in_flight`: every result exact, the limit honoured and
 * reached, connections reused, each failed-once object asked exactly twice. */
static void run_batch(icm__probe_kind kind, bool resolving)
{
    enum { N = 600 };
    server *s = server_start();
    icm_fileio *io = open_s3(s, "16", resolving);
    icm__probe *items = calloc(N, sizeof *items);
    char (*bufs)[16] = calloc(N, 16);
    for (int i = 0; i < N; i++) {
        items[i].location = location_of(i);
        items[i].buf = bufs[i];
        items[i].len = 16;
    }
    icmt_ok(icm__fileio_probe_many(io, kind, items, N));
    for (int i = 0; i < N; i++)
        expect_item(&items[i], i, kind);
    server_stop(s);
    /* 16 in flight at most, and many at once (how close to 16 depends on the machine's load:
     * the server holds each answer 3 ms, a busy 2-core box may not fill the window) */
    if (s->max_pending > 16 || s->max_pending < 4)
        fail_msg("%d requests in flight at most, want 4..16", s->max_pending);
    /* one request per object, a second for each object that failed once */
    for (int i = 0; i < N; i++) {
        int k = kind_of(i);
        int want = k == KIND_SLOWDOWN || k == KIND_RESET ||
                           (k == KIND_EXPIRED && kind == ICM__PROBE_FIRST_BYTES)
                       ? 2
                       : 1;
        if (s->per_object[i] != want)
            fail_msg("object %d (kind %d): %d requests, want %d", i, k, s->per_object[i], want);
    }
    /* kept alive: a connection per request in flight, and one more for each cut connection
     * (60 of them), not one per request (780) */
    if (s->accepted > 16 + N / 10 + 8)
        fail_msg("%d connections for %d requests", s->accepted, s->requests);
    icm__probes_dispose(items, N);
    for (int i = 0; i < N; i++)
        icm__free((char *)items[i].location);
    free(items);
    free(bufs);
    icm_fileio_free(io);
    free(s);
}

static void test_stat_batch(void **state)
{
    (void)state;
    run_batch(ICM__PROBE_STAT, false);
}

static void test_first_bytes_batch(void **state)
{
    (void)state;
    run_batch(ICM__PROBE_FIRST_BYTES, false);
}

static void test_batch_through_resolving(void **state)
{
    (void)state;
    run_batch(ICM__PROBE_STAT, true);
}

/* The batch gives what the per-item calls give, code for code and byte for byte. */
static void test_same_as_per_item(void **state)
{
    (void)state;
    enum { N = 60 };
    for (int pass = 0; pass < 2; pass++) {
        icm__probe_kind kind = pass == 0 ? ICM__PROBE_STAT : ICM__PROBE_FIRST_BYTES;
        server *s = server_start();
        icm_fileio *io = open_s3(s, "8", false);
        icm__probe items[N];
        char bufs[N][16], one[16];
        memset(items, 0, sizeof items);
        for (int i = 0; i < N; i++) {
            items[i].location = location_of(i);
            items[i].buf = bufs[i];
            items[i].len = 16;
        }
        icmt_ok(icm__fileio_probe_many(io, kind, items, N));
        server_reset_counts(s); /* (the once-failing objects answer at once from here) */
        for (int i = 0; i < N; i++) {
            icm_file_info info = ICM_FILE_INFO_INIT;
            size_t got = 0;
            int rc = kind == ICM__PROBE_STAT
                         ? icm_fileio_stat(&info, io, items[i].location)
                         : icm_fileio_read_range(&got, io, items[i].location, 0, one, 16);
            assert_int_equal(items[i].rc, rc);
            if (rc == 0 && kind == ICM__PROBE_STAT) {
                assert_int_equal(items[i].info.size_bytes, info.size_bytes);
                assert_int_equal(items[i].info.mtime_ms, info.mtime_ms);
            } else if (rc == 0) {
                assert_int_equal(items[i].n_read, got);
                assert_memory_equal(bufs[i], one, got);
            } else if (rc != ICM_ENOTFOUND) {
                char msg[512];
                snprintf(msg, sizeof msg, "%s", icm_error_last()->message);
                int status = icm_error_last()->http_status;
                icm__error_restore(items[i].error);
                items[i].error = NULL;
                assert_string_equal(icm_error_last()->message, msg);
                assert_int_equal(icm_error_last()->http_status, status);
            }
        }
        server_stop(s);
        icm__probes_dispose(items, N);
        for (int i = 0; i < N; i++)
            icm__free((char *)items[i].location);
        icm_fileio_free(io);
        free(s);
    }
}

/* A location that is no S3 object is that item's failure, the others go on; a local file
 * goes through the per-item call. */
static void test_bad_and_mixed_locations(void **state)
{
    (void)state;
    server *s = server_start();
    icm_fileio *io = open_s3(s, "4", true);
    char dir[] = "/tmp/icm-probe-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *local = icm__sprintf("%s/f", dir);
    FILE *f = fopen(local, "w");
    fputs("abc", f);
    fclose(f);
    char *o0 = location_of(2), *o1 = location_of(3);
    icm__probe items[4];
    memset(items, 0, sizeof items);
    items[0].location = o0;
    items[1].location = "s3://bkt";  /* a bucket, not an object */
    items[2].location = local;
    items[3].location = o1;
    icmt_ok(icm__fileio_probe_many(io, ICM__PROBE_STAT, items, 4));
    server_stop(s);
    assert_int_equal(items[0].rc, 0);
    assert_int_equal(items[0].info.size_bytes, 2);
    assert_int_equal(items[1].rc, ICM_EINVALID);
    assert_non_null(items[1].error);
    assert_int_equal(items[2].rc, 0);
    assert_int_equal(items[2].info.size_bytes, 3);
    assert_int_equal(items[3].rc, ICM_ENOTFOUND);
    assert_int_equal(s->requests, 2);
    icm__probes_dispose(items, 4);
    unlink(local);
    rmdir(dir);
    icm__free(local);
    icm__free(o0);
    icm__free(o1);
    icm_fileio_free(io);
    free(s);
}

/* SlowDown lowers the batch's requests in flight (AIMD, as the back end's limiter): 16 sent at
 * once are all throttled; the limit halves once for them (they were all sent under the same
 * limit), so their retries go at most 8 at a time, 9 once 8 of them succeeded in a row. Each
 * answer is held 250 ms, longer than the backoff before a first retry (at most 100 ms), so
 * without the lowering all 16 retries would be in flight together. Ranged GETs: a HEAD's 503
 * has no body to say SlowDown, so it is retried as any 503, without lowering the limit. */
static void test_slowdown_lowers_the_limit(void **state)
{
    (void)state;
    enum { N = 16 };
    atomic_store(&g_all_slowdown, 1);
    server *s = server_start();
    s->delay_ms = 250; /* (before any request: the server thread reads it at each) */
    icm_fileio *io = open_s3(s, "16", false);
    icm__probe items[N];
    char bufs[N][16];
    memset(items, 0, sizeof items);
    for (int i = 0; i < N; i++) {
        items[i].location = location_of(i);
        items[i].buf = bufs[i];
        items[i].len = 16;
    }
    icmt_ok(icm__fileio_probe_many(io, ICM__PROBE_FIRST_BYTES, items, N));
    server_stop(s);
    atomic_store(&g_all_slowdown, 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(items[i].rc, 0);
        assert_int_equal(s->per_object[i], 2);
    }
    if (s->max_pending > 16 || s->max_pending < 4)
        fail_msg("%d requests in flight at most, want 4..16", s->max_pending);
    assert_true(s->max_pending_retries >= 1);
    if (s->max_pending_retries > 9)
        fail_msg("%d retries in flight at once after SlowDown, want at most 9",
                 s->max_pending_retries);
    for (int i = 0; i < N; i++)
        icm__free((char *)items[i].location);
    icm_fileio_free(io);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stat_batch),
        cmocka_unit_test(test_first_bytes_batch),
        cmocka_unit_test(test_batch_through_resolving),
        cmocka_unit_test(test_same_as_per_item),
        cmocka_unit_test(test_bad_and_mixed_locations),
        cmocka_unit_test(test_slowdown_lowers_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
