/*
 * tests/unit/test_s3_faults.c: the S3 back end (src/io/s3/s3.c) against a scripted HTTP server
 * in this test: what it does when S3 throttles, fails, drops the connection, answers a 200 with
 * broken XML, complains of clock skew, or reports per-key errors in a DeleteObjects result.
 *
 * The server (a thread on a loopback port) reads each request whole, records its method,
 * target and a few headers, and answers what the test's script says for that request number:
 * a status with headers and body, or closing the connection without an answer after reading
 * the request (the request reached the server; its answer is lost). Each test asserts the
 * exact requests sent (a retry after SlowDown; a conditional PUT sent again only after an
 * attempt that may have written, and its 412 settled by the object's bytes) and the exact
 * outcome. The HTTP client under the back end (src/io/http.c) is checked against the same
 * server: the URL sent byte for byte, request_sent after a lost answer and not after a refused
 * connection, no query string in messages, headers found case-insensitively, a sink that is
 * too small an error.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "icemaint/sys/fileio.h"
#include "io/http.h"
#include "util/util.h"

#define MAX_REQ 64

typedef struct answer {
    int status;          /* 0: close the connection without answering */
    const char *headers; /* extra header lines, each ending in \r\n */
    const char *body;
} answer;

typedef struct recorded {
    char method[8];
    char target[512];
    char amz_date[32];
    char if_none_match[8];
    char range[64];
    char authorization[512];
    char *body;
} recorded;

typedef struct fake {
    int listen_fd;
    int port;
    pthread_t thread;
    pthread_mutex_t lock;
    answer script[MAX_REQ];
    size_t n_script;
    answer fallback;
    recorded req[MAX_REQ];
    size_t n_req;
    size_t n_conn; /* connections accepted */
    volatile int stop;
} fake;

static char *header_value(const char *head, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ')
                v++;
            size_t n = strcspn(v, "\r");
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return out;
        }
    }
    return NULL;
}

static void serve(fake *f, int fd)
{
    char buf[1 << 16];
    size_t have = 0;
    for (;;) {
        char *end = NULL;
        while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
            ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, 0);
            if (n <= 0)
                return;
            have += (size_t)n;
        }
        *end = '\0';
        char cl[32];
        size_t body_len = header_value(buf, "Content-Length", cl, sizeof cl) ? strtoul(cl, 0, 10)
                                                                             : 0;
        size_t head_len = (size_t)(end - buf) + 4;
        while (have < head_len + body_len) {
            ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, 0);
            if (n <= 0)
                return;
            have += (size_t)n;
        }
        pthread_mutex_lock(&f->lock);
        size_t i = f->n_req < MAX_REQ ? f->n_req++ : MAX_REQ - 1;
        recorded *r = &f->req[i];
        sscanf(buf, "%7s %511s", r->method, r->target);
        header_value(buf, "X-Amz-Date", r->amz_date, sizeof r->amz_date);
        header_value(buf, "If-None-Match", r->if_none_match, sizeof r->if_none_match);
        header_value(buf, "Range", r->range, sizeof r->range);
        header_value(buf, "Authorization", r->authorization, sizeof r->authorization);
        free(r->body);
        r->body = strndup(buf + head_len, body_len);
        answer a = i < f->n_script ? f->script[i] : f->fallback;
        pthread_mutex_unlock(&f->lock);
        memmove(buf, buf + head_len + body_len, have - head_len - body_len);
        have -= head_len + body_len;
        if (a.status == 0)
            return; /* the request arrived; its answer never will */
        const char *body = a.body != NULL ? a.body : "";
        char head[2048];
        int hl = snprintf(head, sizeof head,
                          "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nx-amz-request-id: REQ%zu\r\n"
                          "%s\r\n",
                          a.status, strcmp(r->method, "HEAD") == 0 ? 0 : strlen(body), i,
                          a.headers != NULL ? a.headers : "");
        if (strcmp(r->method, "HEAD") == 0 && a.body != NULL)
            hl = snprintf(head, sizeof head,
                          "HTTP/1.1 %d X\r\nx-amz-request-id: REQ%zu\r\n%s\r\n", a.status, i,
                          a.headers != NULL ? a.headers : "");
        if (send(fd, head, (size_t)hl, MSG_NOSIGNAL) < 0)
            return;
        if (strcmp(r->method, "HEAD") != 0 && send(fd, body, strlen(body), MSG_NOSIGNAL) < 0)
            return;
    }
}

static void *server_main(void *arg)
{
    fake *f = arg;
    while (!f->stop) {
        int fd = accept(f->listen_fd, NULL, NULL);
        if (fd < 0)
            break;
        f->n_conn++;
        serve(f, fd);
        close(fd);
    }
    return NULL;
}

static fake *fake_start(const answer *script, size_t n, answer fallback)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    pthread_mutex_init(&f->lock, NULL);
    memcpy(f->script, script, n * sizeof *script);
    f->n_script = n;
    f->fallback = fallback;
    f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(f->listen_fd, 16), 0);
    socklen_t al = sizeof a;
    getsockname(f->listen_fd, (struct sockaddr *)&a, &al);
    f->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&f->thread, NULL, server_main, f), 0);
    return f;
}

static void fake_stop(fake *f)
{
    f->stop = 1;
    shutdown(f->listen_fd, SHUT_RDWR);
    close(f->listen_fd);
    pthread_join(f->thread, NULL);
    for (size_t i = 0; i < MAX_REQ; i++)
        free(f->req[i].body);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static icm_fileio *open_s3(const fake *f, const char *attempts)
{
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", f->port);
    icm_property props[] = {{"s3.endpoint", endpoint},
                            {"s3.access-key-id", "AKID"},
                            {"s3.secret-access-key", "secret"},
                            {"s3.region", "us-east-1"},
                            {"s3.retry.max-attempts", attempts}};
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_s3_new(&io, props, 5));
    return io;
}

#define XML_ERROR(code) "<?xml version=\"1.0\"?><Error><Code>" code "</Code><Message>m</Message>" \
                        "<RequestId>RID-" code "</RequestId></Error>"
#define ETAG_HELLO "ETag: \"5d41402abc4b2a76b9719d911017c592\"\r\n" /* MD5 of "hello" */

/* ---- retries -------------------------------------------------------------------------------- */

static void test_slowdown_then_success(void **state)
{
    (void)state;
    answer s[] = {{503, NULL, XML_ERROR("SlowDown")},
                  {500, NULL, XML_ERROR("InternalError")},
                  {200, NULL, "hello"}};
    fake *f = fake_start(s, 3, (answer){404, NULL, XML_ERROR("NoSuchKey")});
    icm_fileio *io = open_s3(f, "5");
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, "s3://b/dir/k"));
    assert_int_equal(len, 5);
    assert_memory_equal(data, "hello", 5);
    icm_free(data);
    assert_int_equal(f->n_req, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(f->req[i].method, "GET");
        assert_string_equal(f->req[i].target, "/b/dir/k");
    }
    assert_int_equal(f->n_conn, 1); /* keep-alive: one connection for all three */
    icm_fileio_free(io);
    fake_stop(f);
}

static void test_attempts_run_out(void **state)
{
    (void)state;
    answer none[1] = {{0, NULL, NULL}};
    fake *f = fake_start(none, 0, (answer){503, NULL, XML_ERROR("SlowDown")});
    icm_fileio *io = open_s3(f, "3");
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, "s3://b/k");
    assert_int_equal(rc, ICM_EIO);
    assert_int_equal(f->n_req, 3);
    const icm_error *e = icm_error_last();
    assert_int_equal(e->http_status, 503);
    assert_string_equal(e->location, "s3://b/k");
    icm_fileio_free(io);
    fake_stop(f);
}

static void test_errors_carry_code_and_request_id(void **state)
{
    (void)state;
    answer s[] = {{403, NULL, XML_ERROR("SignatureDoesNotMatch")},
                  {404, NULL, "<Error><Code>NoSuchBucket</Code><BucketName>b</BucketName>"
                              "</Error>"}};
    fake *f = fake_start(s, 2, (answer){404, NULL, ""});
    icm_fileio *io = open_s3(f, "4");
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&data, &len, io, "s3://b/k"), ICM_EAUTH);
    const icm_error *e = icm_error_last();
    assert_int_equal(e->http_status, 403);
    assert_string_equal(e->remote_code, "SignatureDoesNotMatch");
    assert_non_null(strstr(e->message, "RID-SignatureDoesNotMatch"));
    assert_null(strstr(e->message, "secret"));
    assert_int_equal(f->n_req, 1); /* refused: not retried */
    assert_int_equal(icm_fileio_read(&data, &len, io, "s3://b/k"), ICM_ENOTFOUND);
    assert_string_equal(icm_error_last()->remote_code, "NoSuchBucket");
    assert_non_null(strstr(icm_error_last()->message, "bucket b"));
    assert_non_null(strstr(icm_error_last()->message, "REQ1")); /* x-amz-request-id */
    icm_fileio_free(io);
    fake_stop(f);
}

/* A 404 is "no such object" only when S3 says so (NoSuchKey, or a bodiless 404 to a HEAD): an
 * unknown user's 404 (versitygw's XAdminUserNotFound) is a refusal, and a GET's 404 without an
 * S3 error document is not an answer about the object at all. A DELETE answered so deleted
 * nothing and must not be counted as "already gone". */
static void test_404_is_missing_only_when_s3_says_so(void **state)
{
    (void)state;
    answer s[] = {{404, NULL, XML_ERROR("XAdminUserNotFound")},
                  {404, NULL, ""},
                  {404, NULL, XML_ERROR("XAdminUserNotFound")},
                  {404, NULL, XML_ERROR("NoSuchKey")},
                  {404, NULL, NULL}};
    fake *f = fake_start(s, 5, (answer){404, NULL, ""});
    icm_fileio *io = open_s3(f, "1");
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&data, &len, io, "s3://b/k"), ICM_EAUTH);
    assert_string_equal(icm_error_last()->remote_code, "XAdminUserNotFound");
    assert_int_equal(icm_fileio_read(&data, &len, io, "s3://b/k"), ICM_EIO);
    assert_non_null(strstr(icm_error_last()->message, "without an S3 error code"));
    bool existed = true;
    assert_int_equal(icm_fileio_delete_existing(&existed, io, "s3://b/k"), ICM_EAUTH);
    assert_int_equal(icm_fileio_delete_existing(&existed, io, "s3://b/k"), 0);
    assert_false(existed); /* NoSuchKey: it was not there */
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, io, "s3://b/k"), ICM_ENOTFOUND);
    icm_fileio_free(io);
    fake_stop(f);
}

typedef struct listed {
    char got[2][64];
    int64_t sizes[2], mtimes[2];
    int n;
} listed;

static int list_cb(const icm_file_info *info, void *p)
{
    listed *l = p;
    if (l->n < 2) {
        snprintf(l->got[l->n], sizeof l->got[0], "%s", info->location);
        l->sizes[l->n] = info->size_bytes;
        l->mtimes[l->n] = info->mtime_ms;
    }
    l->n++;
    return 0;
}

static void test_broken_listing_is_retried_never_empty(void **state)
{
    (void)state;
    answer s[] = {{200, NULL, "<ListBucketResult><IsTruncated>false</IsTruncated><Contents>"},
                  {200, NULL,
                   "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>t/a+b</Key>"
                   "<Size>3</Size><LastModified>2026-11-30T05:46:58.000Z</LastModified>"
                   "</Contents><NextContinuationToken>tok/+=</NextContinuationToken>"
                   "<EncodingType>url</EncodingType></ListBucketResult>"},
                  {200, NULL,
                   "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>t/c</Key>"
                   "<Size>1</Size></Contents></ListBucketResult>"}};
    fake *f = fake_start(s, 3, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "3");
    listed l = {0};
    icmt_ok(icm_fileio_list(io, "s3://b/t", list_cb, &l));
    assert_int_equal(l.n, 2);
    assert_string_equal(l.got[0], "s3://b/t/a b");
    assert_int_equal(l.sizes[0], 3);
    assert_int_equal(l.mtimes[0], INT64_C(1796017618000));
    assert_string_equal(l.got[1], "s3://b/t/c");
    assert_int_equal(l.mtimes[1], -1);
    assert_int_equal(f->n_req, 3);
    assert_string_equal(f->req[0].target, "/b?encoding-type=url&list-type=2&prefix=t%2F");
    assert_string_equal(f->req[1].target, "/b?encoding-type=url&list-type=2&prefix=t%2F");
    assert_string_equal(f->req[2].target, "/b?continuation-token=tok%2F%2B%3D&"
                                          "encoding-type=url&list-type=2&prefix=t%2F");
    icm_fileio_free(io);
    fake_stop(f);
}

/* A store 20 minutes ahead: signed again with its clock. */
static void test_clock_skew_corrected(void **state)
{
    (void)state;
    time_t then = time(NULL) + 20 * 60;
    struct tm tm;
    gmtime_r(&then, &tm);
    char date[96], want[16];
    strftime(date, sizeof date, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
    strftime(want, sizeof want, "%Y%m%dT%H", &tm);
    answer s[] = {{403, date, XML_ERROR("RequestTimeTooSkewed")}, {200, NULL, "x"}};
    fake *f = fake_start(s, 2, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "3");
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, "s3://b/k"));
    icm_free(data);
    assert_int_equal(f->n_req, 2);
    /* signed again with the server's clock (within the seconds the test takes; the hour
     * changes between the two readings of the clock only at hh:59:59) */
    assert_memory_equal(f->req[1].amz_date, want, 11);
    icm_fileio_free(io);
    fake_stop(f);
}

/* Data-loss class "store clock behind": a store days off this machine's clock is not signed
 * for with its time (object ages, compared with the sweep's cutoff, would be off by days and
 * a file being written would look old): the request fails, naming the clock, and is not sent
 * again. */
static void test_clock_far_off_refused(void **state)
{
    (void)state;
    answer s[] = {{403, "Date: Wed, 12 Oct 2033 17:50:00 GMT\r\n",
                   XML_ERROR("RequestTimeTooSkewed")},
                  {200, NULL, "x"}};
    fake *f = fake_start(s, 2, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "3");
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&data, &len, io, "s3://b/k"), ICM_EAUTH);
    assert_non_null(strstr(icm_error_last()->message, "clock"));
    assert_string_equal(icm_error_last()->remote_code, "RequestTimeTooSkewed");
    assert_int_equal(f->n_req, 1);
    icm_fileio_free(io);
    fake_stop(f);
}

/* A store that cannot be reached (every connection refused) is a configuration error,
 * ICM_EUNREACHABLE: after its attempts the message names the object, the endpoint and curl's
 * reason, how often and how long it was tried; the next request to that endpoint fails at
 * once with the same message instead of going through its attempts again. */
static void test_unreachable_endpoint_named(void **state)
{
    (void)state;
    icm_property props[] = {{"s3.endpoint", "http://127.0.0.1:1"},
                            {"s3.access-key-id", "AKID"},
                            {"s3.secret-access-key", "secret"},
                            {"s3.region", "us-east-1"},
                            {"s3.retry.max-attempts", "3"}};
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_s3_new(&io, props, 5));
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, io, "s3://b/k"), ICM_EUNREACHABLE);
    const icm_error *e = icm_error_last();
    assert_string_equal(e->location, "s3://b/k");
    assert_non_null(strstr(e->message, "cannot reach the S3 endpoint http://127.0.0.1:1: "));
    assert_non_null(strstr(e->message, "onnect")); /* curl: "Couldn't connect to server" */
    assert_non_null(strstr(e->message, "(3 attempts over "));
    int64_t t0 = icm__now_ms();
    char *body = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&body, &len, io, "s3://b/other"), ICM_EUNREACHABLE);
    assert_true(icm__now_ms() - t0 < 50); /* no attempt, no backoff */
    e = icm_error_last();
    assert_string_equal(e->location, "s3://b/other");
    assert_non_null(strstr(e->message, "cannot reach the S3 endpoint http://127.0.0.1:1: "));
    icm_fileio_free(io);
}

/* A host name that does not resolve gets two attempts (a resolver may fail once), then is
 * ICM_EUNREACHABLE naming the endpoint: never the ten attempts and their backoff a store that
 * answered badly gets. */
static void test_unresolvable_endpoint_fails_fast(void **state)
{
    (void)state;
    icm_property props[] = {{"s3.endpoint", "http://icm-no-such-host.invalid:9000"},
                            {"s3.access-key-id", "AKID"},
                            {"s3.secret-access-key", "secret"},
                            {"s3.region", "us-east-1"},
                            {"s3.retry.max-attempts", "10"}};
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_s3_new(&io, props, 5));
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, io, "s3://b/k"), ICM_EUNREACHABLE);
    const icm_error *e = icm_error_last();
    assert_non_null(
        strstr(e->message, "cannot reach the S3 endpoint http://icm-no-such-host.invalid:9000"));
    assert_non_null(strstr(e->message, "resolve"));
    assert_non_null(strstr(e->message, "(2 attempts over "));
    icm_fileio_free(io);
}

/* Data-loss class "applied write read as not sent": a create-new PUT (a filesystem-layout
 * commit, the lease) that fails for memory after the request went out may have written the
 * object: it must be ICM_EOUTCOME_UNKNOWN, never ICM_ENOMEM, which callers take for "nothing
 * written" (a transaction then deletes the files the published version names). Every
 * allocation of the call fails in turn, against a store that writes every PUT. */
static void test_create_new_out_of_memory_after_sending_is_unknown(void **state)
{
    (void)state;
    answer none[1] = {{0, NULL, NULL}};
    fake *f = fake_start(none, 0, (answer){200, "ETag: \"e\"\r\n", ""});
    icm_fileio *io = open_s3(f, "1");
    long n = 0;
    size_t unknown = 0;
    for (;; n++) {
        size_t before = f->n_req;
        icmt_nomem_arm(n);
        int rc = icm_fileio_create_new(io, "s3://b/k", "x", 1);
        bool injected = icmt_nomem_disarm() > n;
        bool sent = f->n_req > before;
        if (!injected) {
            icmt_ok(rc);
            break;
        }
        if (rc == ICM_ENOMEM)
            assert_false(sent); /* ENOMEM only when nothing reached the store */
        else if (rc == ICM_EOUTCOME_UNKNOWN)
            unknown++;
        else
            icmt_ok(rc);
    }
    assert_true(unknown > 0); /* (the answer's intake failed at least once) */
    icm_fileio_free(io);
    fake_stop(f);
}

static void test_bucket_in_another_region(void **state)
{
    (void)state;
    /* S3 says the bucket lives elsewhere: the request goes again signed for that region (the
     * conditional PUT too: S3 acted on nothing), and later requests start there */
    answer s[] = {{301, "x-amz-bucket-region: eu-west-1\r\n", XML_ERROR("PermanentRedirect")},
                  {200, NULL, ""},
                  {200, NULL, "x"}};
    fake *f = fake_start(s, 3, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "3");
    icmt_ok(icm_fileio_create_new(io, "s3://b/k", "x", 1));
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, "s3://b/k"));
    icm_free(data);
    assert_int_equal(f->n_req, 3);
    assert_non_null(strstr(f->req[0].authorization, "/us-east-1/s3/aws4_request"));
    assert_non_null(strstr(f->req[1].authorization, "/eu-west-1/s3/aws4_request"));
    assert_string_equal(f->req[1].method, "PUT");
    assert_non_null(strstr(f->req[2].authorization, "/eu-west-1/s3/aws4_request"));
    icm_fileio_free(io);
    fake_stop(f);
}

/* ---- reads ---------------------------------------------------------------------------------- */

static void test_range_checks(void **state)
{
    (void)state;
    answer s[] = {{206, "Content-Range: bytes 4-6/10\r\n", "456"},
                  {416, NULL, XML_ERROR("InvalidRange")},
                  {206, "Content-Range: bytes 0-2/10\r\n", "012"},
                  {200, NULL, "0123456789"}};
    fake *f = fake_start(s, 4, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "1");
    char buf[16];
    size_t got = 0;
    icmt_ok(icm_fileio_read_range(&got, io, "s3://b/k", 4, buf, 3));
    assert_int_equal(got, 3);
    assert_memory_equal(buf, "456", 3);
    assert_string_equal(f->req[0].range, "bytes=4-6");
    icmt_ok(icm_fileio_read_range(&got, io, "s3://b/k", 10, buf, 3));
    assert_int_equal(got, 0);
    /* another range than asked for, or the whole object for a range at 4: never wrong bytes */
    assert_int_equal(icm_fileio_read_range(&got, io, "s3://b/k", 4, buf, 3), ICM_EIO);
    assert_int_equal(icm_fileio_read_range(&got, io, "s3://b/k", 4, buf, 16), ICM_EIO);
    icm_fileio_free(io);
    fake_stop(f);
}

/* ---- create-new ----------------------------------------------------------------------------- */

static void test_create_new_lost_answer_ours(void **state)
{
    (void)state;
    /* the PUT arrives and its answer is lost; the second PUT gets 412 for what the first
     * wrote, and HEAD shows our bytes' MD5: success */
    answer s[] = {{0, NULL, NULL},
                  {412, NULL, XML_ERROR("PreconditionFailed")},
                  {200, ETAG_HELLO "Content-Length: 5\r\n", ""}};
    fake *f = fake_start(s, 3, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "5");
    icmt_ok(icm_fileio_create_new(io, "s3://b/m.json", "hello", 5));
    assert_int_equal(f->n_req, 3);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(f->req[i].method, "PUT");
        assert_string_equal(f->req[i].if_none_match, "*");
        assert_string_equal(f->req[i].body, "hello");
    }
    assert_string_equal(f->req[2].method, "HEAD");
    icm_fileio_free(io);
    fake_stop(f);
}

static void test_create_new_lost_answer_missing_is_unknown(void **state)
{
    (void)state;
    /* every answer lost, then nothing there: it may still land */
    answer s[] = {{0, NULL, NULL}, {0, NULL, NULL}, {404, NULL, ""}};
    fake *f = fake_start(s, 3, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "2");
    assert_int_equal(icm_fileio_create_new(io, "s3://b/m.json", "hello", 5),
                     ICM_EOUTCOME_UNKNOWN);
    assert_int_equal(f->n_req, 3);
    assert_string_equal(f->req[0].method, "PUT");
    assert_string_equal(f->req[1].method, "PUT");
    assert_string_equal(f->req[2].method, "HEAD");
    icm_fileio_free(io);
    fake_stop(f);
}

static void test_create_new_412(void **state)
{
    (void)state;
    /* someone else's object (ETag and bytes differ): EEXISTS; ours byte for byte at the first
     * attempt: unknown (libcurl may have resent our PUT on a connection that closed) */
    answer s[] = {{412, NULL, XML_ERROR("PreconditionFailed")},
                  {200, "ETag: \"00000000000000000000000000000000\"\r\nContent-Length: 5\r\n", ""},
                  {200, NULL, "other"},
                  {412, NULL, XML_ERROR("PreconditionFailed")},
                  {200, ETAG_HELLO "Content-Length: 5\r\n", ""},
                  /* SlowDown, then 412 of another object: EEXISTS */
                  {503, NULL, XML_ERROR("SlowDown")},
                  {412, NULL, XML_ERROR("PreconditionFailed")},
                  {200, "ETag: \"00000000000000000000000000000000\"\r\nContent-Length: 9\r\n",
                   ""},
                  /* 500 (may have written), then 200: ours */
                  {500, NULL, XML_ERROR("InternalError")},
                  {200, NULL, ""},
                  /* 403: refused, nothing written, not sent again */
                  {403, NULL, XML_ERROR("AccessDenied")}};
    fake *f = fake_start(s, 11, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "5");
    assert_int_equal(icm_fileio_create_new(io, "s3://b/m.json", "hello", 5), ICM_EEXISTS);
    assert_int_equal(icm_error_last()->http_status, 412);
    assert_int_equal(f->n_req, 3);
    assert_string_equal(f->req[2].method, "GET"); /* an ETag that is not our MD5: bytes decide */
    assert_int_equal(icm_fileio_create_new(io, "s3://b/m.json", "hello", 5),
                     ICM_EOUTCOME_UNKNOWN);
    assert_int_equal(f->n_req, 5);
    assert_int_equal(icm_fileio_create_new(io, "s3://b/m.json", "hello", 5), ICM_EEXISTS);
    assert_int_equal(f->n_req, 8);
    icmt_ok(icm_fileio_create_new(io, "s3://b/m.json", "hello", 5));
    assert_int_equal(f->n_req, 10);
    assert_int_equal(icm_fileio_create_new(io, "s3://b/m.json", "hello", 5), ICM_EAUTH);
    assert_int_equal(f->n_req, 11);
    const char *methods[] = {"PUT", "HEAD", "GET", "PUT", "HEAD", "PUT",
                             "PUT", "HEAD", "PUT", "PUT", "PUT"};
    for (size_t i = 0; i < 11; i++)
        assert_string_equal(f->req[i].method, methods[i]);
    icm_fileio_free(io);
    fake_stop(f);
}

/* ---- deletes -------------------------------------------------------------------------------- */

static void test_delete_batch_per_key_errors(void **state)
{
    (void)state;
    /* the key XML cannot carry goes first, alone, as a DELETE; then one DeleteObjects */
    answer s[] = {{204, NULL, ""},
                  {200, NULL,
                   "<DeleteResult><Error><Key>t/a &amp; b</Key><Code>AccessDenied</Code>"
                   "<Message>Access Denied</Message></Error><Error><Key>t/c</Key>"
                   "<Code>SlowDown</Code><Message>Please reduce</Message></Error>"
                   "</DeleteResult>"}};
    fake *f = fake_start(s, 2, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "3");
    const char *locs[] = {"s3://b/t/a & b", "s3://b/t/c", "s3://b/t/d<'\">", "s3://b/t/ctl\x01",
                          "gs://b/x"};
    icm_fileio_delete_result r[5];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 5);
    icmt_ok(icm_fileio_delete_batch(r, io, locs, 5));
    assert_int_equal(r[0].status, ICM_FILEIO_DELETE_FAILED);
    assert_int_equal(r[0].code, ICM_EAUTH);
    assert_false(r[0].retryable);
    assert_non_null(strstr(r[0].message, "AccessDenied"));
    assert_int_equal(r[1].status, ICM_FILEIO_DELETE_FAILED);
    assert_true(r[1].retryable);
    assert_int_equal(r[2].status, ICM_FILEIO_DELETED);
    /* a key XML cannot carry went alone, as a DELETE */
    assert_int_equal(r[3].status, ICM_FILEIO_DELETED);
    assert_int_equal(r[4].status, ICM_FILEIO_DELETE_FAILED);
    assert_int_equal(r[4].code, ICM_EUNSUPPORTED);
    assert_int_equal(f->n_req, 2);
    assert_string_equal(f->req[0].method, "DELETE");
    assert_string_equal(f->req[0].target, "/b/t/ctl%01");
    assert_string_equal(f->req[1].method, "POST");
    assert_string_equal(f->req[1].target, "/b?delete=");
    const char *body = f->req[1].body;
    assert_non_null(strstr(body, "<Quiet>true</Quiet>"));
    assert_non_null(strstr(body, "<Key>t/a &amp; b</Key>"));
    assert_non_null(strstr(body, "<Key>t/d&lt;&apos;&quot;&gt;</Key>"));
    assert_null(strstr(body, "ctl"));
    icm_fileio_free(io);
    fake_stop(f);
}

static void test_delete_batch_whole_failure(void **state)
{
    (void)state;
    answer s[] = {{400, NULL, XML_ERROR("MalformedXML")},
                  {200, NULL, "<DeleteResult><Error><Key>x</Key>"},
                  {200, NULL, "<DeleteResult><Error><Key>x</Key>"}};
    fake *f = fake_start(s, 3, (answer){500, NULL, ""});
    icm_fileio *io = open_s3(f, "2");
    const char *locs[] = {"s3://b/x", "s3://b/y"};
    icm_fileio_delete_result r[2];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 2);
    icmt_ok(icm_fileio_delete_batch(r, io, locs, 2));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r[i].status, ICM_FILEIO_DELETE_FAILED);
        assert_false(r[i].retryable);
        assert_non_null(strstr(r[i].message, "MalformedXML"));
    }
    assert_int_equal(f->n_req, 1);
    /* a broken DeleteResult: nothing counts as deleted, and it may pass later; the request is
     * not sent again here (a delete is resent only by the delete engine, after its checks ran
     * again: data-loss class "delete resent without its check") */
    icmt_ok(icm_fileio_delete_batch(r, io, locs, 2));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r[i].status, ICM_FILEIO_DELETE_FAILED);
        assert_int_equal(r[i].code, ICM_EIO);
        assert_true(r[i].retryable);
    }
    assert_int_equal(f->n_req, 2);
    icm_fileio_free(io);
    fake_stop(f);
}

/* ---- the HTTP client itself (src/io/http.c) ------------------------------------------------ */

static void test_http_client(void **state)
{
    (void)state;
    answer s[] = {{0, NULL, NULL},
                  {200, "X-Multi:  a b \r\nx-amz-request-id2: no\r\n", "0123456789"},
                  {200, NULL, "0123456789"}};
    fake *f = fake_start(s, 3, (answer){500, NULL, ""});
    icm__http *h = NULL;
    icm__http_options o = {0, 0, 2, NULL, true, NULL, NULL};
    icmt_ok(icm__http_new(&h, &o));
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/b/a/../k?X-Amz-Signature=SECRET", f->port);
    icm__http_request req = {"PUT", url, NULL, 0, "body", 4, NULL, 0, 0, false};
    icm__http_response resp;
    /* the request arrived and the connection closed: sent, and the message has no query */
    assert_int_equal(icm__http_send(h, &req, &resp), ICM_ENET);
    assert_true(resp.request_sent);
    assert_null(strstr(icm_error_last()->message, "SECRET"));
    assert_null(strstr(icm_error_last()->location, "SECRET"));
    icm__http_response_clear(&resp);
    /* sent byte for byte: the dot segment stays */
    assert_string_equal(f->req[0].target, "/b/a/../k?X-Amz-Signature=SECRET");
    assert_string_equal(f->req[0].body, "body");
    /* headers: case-insensitive, trimmed; a name that is a prefix of another is not it */
    icm__http_request get = {"GET", url, NULL, 0, NULL, 0, NULL, 0, 0, false};
    icmt_ok(icm__http_send(h, &get, &resp));
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.body_len, 10);
    assert_string_equal(resp.body, "0123456789");
    char *v = NULL;
    icmt_ok(icm__http_response_header(&resp, "x-multi", &v));
    assert_string_equal(v, "a b");
    icm_free(v);
    icmt_ok(icm__http_response_header(&resp, "X-Amz-Request-Id", &v));
    assert_string_equal(v, "REQ1");
    icm_free(v);
    icmt_ok(icm__http_response_header(&resp, "absent", &v));
    assert_null(v);
    icm__http_response_clear(&resp);
    /* a body longer than the sink is an error, never a silent partial copy */
    char small[4];
    icm__http_request sunk = {"GET", url, NULL, 0, NULL, 0, small, sizeof small, 0, false};
    assert_int_equal(icm__http_send(h, &sunk, &resp), ICM_EIO);
    icm__http_response_clear(&resp);
    icm__http_free(h);
    fake_stop(f);
    /* nothing listens: nothing was sent */
    icmt_ok(icm__http_new(&h, &o));
    icm__http_request refused = {"PUT", "http://127.0.0.1:1/b/k", NULL, 0, "x", 1, NULL, 0, 0, false};
    assert_int_equal(icm__http_send(h, &refused, &resp), ICM_ENET);
    assert_false(resp.request_sent);
    icm__http_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slowdown_then_success),
        cmocka_unit_test(test_attempts_run_out),
        cmocka_unit_test(test_errors_carry_code_and_request_id),
        cmocka_unit_test(test_404_is_missing_only_when_s3_says_so),
        cmocka_unit_test(test_broken_listing_is_retried_never_empty),
        cmocka_unit_test(test_clock_skew_corrected),
        cmocka_unit_test(test_clock_far_off_refused),
        cmocka_unit_test(test_unreachable_endpoint_named),
        cmocka_unit_test(test_unresolvable_endpoint_fails_fast),
        cmocka_unit_test(test_create_new_out_of_memory_after_sending_is_unknown),
        cmocka_unit_test(test_bucket_in_another_region),
        cmocka_unit_test(test_range_checks),
        cmocka_unit_test(test_create_new_lost_answer_ours),
        cmocka_unit_test(test_create_new_lost_answer_missing_is_unknown),
        cmocka_unit_test(test_create_new_412),
        cmocka_unit_test(test_delete_batch_per_key_errors),
        cmocka_unit_test(test_delete_batch_whole_failure),
        cmocka_unit_test(test_http_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
