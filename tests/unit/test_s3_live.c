/*
 * tests/unit/test_s3_live.c: the S3 back end (src/io/s3/s3.c) against a real S3 server.
 *
 * The server is named by the environment (.ci/run starts one on loopback and exports them):
 * ICM_TEST_S3_ENDPOINT, ICM_TEST_S3_ACCESS_KEY, ICM_TEST_S3_SECRET_KEY, ICM_TEST_S3_BUCKET (an
 * existing bucket), ICM_TEST_S3_REGION (optional): a server that keeps keys as bytes, as S3
 * and moto do (not versitygw's posix back end, which stores a key as a file path and so cannot
 * hold `..` or keep `x/../b` apart from `b`); and, for the wrong-secret test, a server
 * that verifies signatures: ICM_TEST_S3V_ENDPOINT, _ACCESS_KEY, _SECRET_KEY, _BUCKET, _REGION.
 * Without them the tests are skipped with the reason, except under CI (env CI set), where that
 * is a failure. Each run works below its own prefix (run-<pid>-<time>/) and removes it.
 *
 * What is proven: every exact key (spaces, `+`, `%2F`, `//`, `./`, `../`, non-ASCII) reads,
 * stats, lists and deletes as exactly that key, and `a/../b` never touches `b`; create-new
 * refuses an existing object and leaves it as it was; ranged reads past the end read nothing;
 * a range listing starts after and stops before what it was told; a listing of more than one
 * page reports every object once, in key order, with its size; a 1,500-item delete batch
 * removes exactly its objects and counts missing ones as success; errors carry the HTTP status
 * and S3 code; several threads read at once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "icemaint/errors.h"
#include "icemaint/fileio.h"

typedef struct server {
    const char *endpoint, *access_key, *secret_key, *bucket, *region;
} server;

static server g_s3;
static char g_run[96]; /* s3://bucket/run-<pid>-<time> */

static bool server_from_env(server *s, const char *pfx)
{
    char name[64];
#define GET(field, suffix)                                                                     \
    snprintf(name, sizeof name, "%s_%s", pfx, suffix);                                         \
    s->field = getenv(name)
    GET(endpoint, "ENDPOINT");
    GET(access_key, "ACCESS_KEY");
    GET(secret_key, "SECRET_KEY");
    GET(bucket, "BUCKET");
    GET(region, "REGION");
#undef GET
    if (s->region == NULL || s->region[0] == '\0')
        s->region = "us-east-1";
    return s->endpoint != NULL && s->endpoint[0] != '\0' && s->access_key != NULL &&
           s->secret_key != NULL && s->bucket != NULL && s->bucket[0] != '\0';
}

static icm_fileio *open_s3(const server *s, const char *secret)
{
    icm_property props[] = {{"s3.endpoint", s->endpoint},
                            {"s3.access-key-id", s->access_key},
                            {"s3.secret-access-key", secret != NULL ? secret : s->secret_key},
                            {"s3.region", s->region},
                            {"s3.path-style-access", "true"}};
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_s3_new(&io, props, sizeof props / sizeof props[0]));
    return io;
}

static char *loc(const char *sub)
{
    return icmt_sprintf("%s/%s", g_run, sub);
}

static void put(icm_fileio *io, const char *sub, const char *content)
{
    char *l = loc(sub);
    icmt_ok(icm_fileio_write_replace(io, l, content, strlen(content)));
    free(l);
}

static void expect_content(icm_fileio *io, const char *sub, const char *content)
{
    char *l = loc(sub);
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, l));
    assert_int_equal(len, strlen(content));
    assert_memory_equal(data, content, len);
    icm_free(data);
    free(l);
}

static void expect_missing(icm_fileio *io, const char *sub)
{
    char *l = loc(sub);
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, io, l), ICM_ENOTFOUND);
    free(l);
}

typedef struct collected {
    char **locs;
    int64_t *sizes;
    int64_t *mtimes;
    size_t n, cap;
} collected;

static int collect(const icm_file_info *info, void *payload)
{
    collected *c = payload;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->locs = realloc(c->locs, c->cap * sizeof *c->locs);
        c->sizes = realloc(c->sizes, c->cap * sizeof *c->sizes);
        c->mtimes = realloc(c->mtimes, c->cap * sizeof *c->mtimes);
        assert_non_null(c->locs);
        assert_non_null(c->sizes);
        assert_non_null(c->mtimes);
    }
    c->locs[c->n] = strdup(info->location);
    c->sizes[c->n] = info->size_bytes;
    c->mtimes[c->n] = info->mtime_ms;
    c->n++;
    return 0;
}

static void collected_free(collected *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->locs[i]);
    free(c->locs);
    free(c->sizes);
    free(c->mtimes);
    memset(c, 0, sizeof *c);
}

/* Delete everything below the run's prefix (the end of each test). */
static void wipe(icm_fileio *io, const char *sub)
{
    char *prefix = loc(sub);
    collected c = {0};
    icmt_ok(icm_fileio_list(io, prefix, collect, &c));
    if (c.n > 0) {
        icm_fileio_delete_result *r = calloc(c.n, sizeof *r);
        assert_non_null(r);
        ICM_FILEIO_DELETE_RESULTS_INIT(r, c.n);
        icmt_ok(icm_fileio_delete_batch(r, io, (const char *const *)c.locs, c.n));
        for (size_t i = 0; i < c.n; i++)
            assert_int_not_equal(r[i].status, ICM_FILEIO_DELETE_FAILED);
        free(r);
    }
    collected_free(&c);
    free(prefix);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_create_new_refuses_existing(void **state)
{
    (void)state;
    icm_fileio *io = open_s3(&g_s3, NULL);
    char *l = loc("cn/v1.metadata.json");
    icmt_ok(icm_fileio_create_new(io, l, "first", 5));
    assert_int_equal(icm_fileio_create_new(io, l, "second!", 7), ICM_EEXISTS);
    assert_int_equal(icm_error_last()->http_status, 412);
    expect_content(io, "cn/v1.metadata.json", "first");
    bool same = false;
    icmt_ok(icm_fileio_holds(&same, io, l, "first", 5));
    assert_true(same);
    wipe(io, "cn");
    expect_missing(io, "cn/v1.metadata.json");
    free(l);
    icm_fileio_free(io);
}

/* Keys S3 keeps exactly and URL handling could turn into others. */
static const char *const TRICKY[] = {
    "a b.txt",       "plus+sign",      "pct%2Fslash", "double//slash", "./dot",
    "x/../b",        "caf\xc3\xa9/\xe6\x97\xa5", "eq=amp&q?h#", "tilde~*'()", "sp ace/+/%20",
    "trailing.",     "..",             "%",           "x/./y",         "semi;colon,comma"};

static void test_exact_keys(void **state)
{
    (void)state;
    icm_fileio *io = open_s3(&g_s3, NULL);
    /* `b` is what `x/../b` would become if anything normalised it */
    put(io, "keys/b", "B");
    put(io, "keys/y", "Y");
    size_t n = sizeof TRICKY / sizeof TRICKY[0];
    for (size_t i = 0; i < n; i++) {
        char *sub = icmt_sprintf("keys/%s", TRICKY[i]);
        put(io, sub, TRICKY[i]);
        free(sub);
    }
    expect_content(io, "keys/b", "B");
    expect_content(io, "keys/y", "Y");
    for (size_t i = 0; i < n; i++) {
        char *sub = icmt_sprintf("keys/%s", TRICKY[i]);
        expect_content(io, sub, TRICKY[i]);
        char *l = loc(sub);
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, io, l));
        assert_int_equal(info.size_bytes, (int64_t)strlen(TRICKY[i]));
        int64_t now = (int64_t)time(NULL) * 1000;
        assert_true(info.mtime_ms > now - 600000 && info.mtime_ms < now + 600000);
        free(l);
        free(sub);
    }
    /* the listing reports each key exactly, once, with its size */
    char *prefix = loc("keys");
    collected c = {0};
    icmt_ok(icm_fileio_list(io, prefix, collect, &c));
    assert_int_equal(c.n, n + 2);
    for (size_t i = 0; i < n + 2; i++) {
        const char *want = i < n ? TRICKY[i] : i == n ? "b" : "y";
        char *wl = icmt_sprintf("%s/%s", prefix, want);
        size_t hits = 0;
        for (size_t j = 0; j < c.n; j++)
            if (strcmp(c.locs[j], wl) == 0) {
                hits++;
                assert_int_equal(c.sizes[j], (int64_t)(i < n ? strlen(want) : 1));
                assert_true(c.mtimes[j] > 0);
            }
        if (hits != 1)
            print_error("key \"%s\" listed %zu times\n", want, hits);
        assert_int_equal(hits, 1);
        free(wl);
    }
    /* in byte order */
    for (size_t j = 1; j < c.n; j++)
        assert_true(strcmp(c.locs[j - 1], c.locs[j]) < 0);
    collected_free(&c);
    /* deleting the dot-segment keys deletes them, not what they would normalise to */
    char *dd = loc("keys/x/../b");
    char *ds = loc("keys/x/./y");
    icmt_ok(icm_fileio_delete(io, dd));
    icmt_ok(icm_fileio_delete(io, ds));
    expect_missing(io, "keys/x/../b");
    expect_missing(io, "keys/x/./y");
    expect_content(io, "keys/b", "B");
    expect_content(io, "keys/y", "Y");
    free(dd);
    free(ds);
    wipe(io, "keys");
    collected after = {0};
    icmt_ok(icm_fileio_list(io, prefix, collect, &after));
    assert_int_equal(after.n, 0);
    collected_free(&after);
    free(prefix);
    icm_fileio_free(io);
}

static void test_read_range(void **state)
{
    (void)state;
    icm_fileio *io = open_s3(&g_s3, NULL);
    put(io, "range/obj", "0123456789");
    char *l = loc("range/obj");
    char buf[16];
    size_t got = 99;
    icmt_ok(icm_fileio_read_range(&got, io, l, 2, buf, 3));
    assert_int_equal(got, 3);
    assert_memory_equal(buf, "234", 3);
    icmt_ok(icm_fileio_read_range(&got, io, l, 8, buf, 10));
    assert_int_equal(got, 2);
    assert_memory_equal(buf, "89", 2);
    icmt_ok(icm_fileio_read_range(&got, io, l, 10, buf, 5));
    assert_int_equal(got, 0);
    icmt_ok(icm_fileio_read_range(&got, io, l, 1000, buf, 5));
    assert_int_equal(got, 0);
    char *missing = loc("range/none");
    assert_int_equal(icm_fileio_read_range(&got, io, missing, 0, buf, 5), ICM_ENOTFOUND);
    assert_int_equal(icm_error_last()->http_status, 404);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&data, &len, io, missing), ICM_ENOTFOUND);
    assert_int_equal(icm_error_last()->http_status, 404);
    assert_string_equal(icm_error_last()->remote_code, "NoSuchKey");
    assert_non_null(strstr(icm_error_last()->location, "range/none"));
    wipe(io, "range");
    free(missing);
    free(l);
    icm_fileio_free(io);
}

static void test_list_range(void **state)
{
    (void)state;
    icm_fileio *io = open_s3(&g_s3, NULL);
    for (int i = 0; i < 10; i++) {
        char sub[32];
        snprintf(sub, sizeof sub, "lr/k%02d", i);
        put(io, sub, "x");
    }
    put(io, "lr-sibling/k05", "not under lr/");
    char *prefix = loc("lr");
    char *sa = loc("lr/k03");
    char *eb = loc("lr/k07");
    icm_fileio_list_options opts = ICM_FILEIO_LIST_OPTIONS_INIT;
    opts.start_after = sa;
    opts.end_before = eb;
    collected c = {0};
    icmt_ok(icm_fileio_list_opts(io, prefix, &opts, collect, &c));
    assert_int_equal(c.n, 3);
    for (int i = 0; i < 3; i++) {
        char *want = icmt_sprintf("%s/k%02d", prefix, i + 4);
        assert_string_equal(c.locs[i], want);
        free(want);
    }
    collected_free(&c);
    wipe(io, "lr");
    wipe(io, "lr-sibling");
    free(prefix);
    free(sa);
    free(eb);
    icm_fileio_free(io);
}

typedef struct putter {
    icm_fileio *io;
    int from, to;
} putter;

static void *put_range(void *arg)
{
    putter *p = arg;
    for (int i = p->from; i < p->to; i++) {
        char sub[64];
        snprintf(sub, sizeof sub, "page/obj-%05d", i);
        char *l = loc(sub);
        if (icm_fileio_write_replace(p->io, l, sub, strlen(sub)) != 0)
            abort();
        free(l);
    }
    return NULL;
}

/* 1,100 objects: two pages of ListObjectsV2; then a 1,500-item batch (the 1,100 and 400 that
 * do not exist) deletes exactly them and leaves the object beside them. */
static void test_paged_listing_and_batch_delete(void **state)
{
    (void)state;
    icm_fileio *io = open_s3(&g_s3, NULL);
    enum { N = 1100, THREADS = 8 };
    pthread_t t[THREADS];
    putter p[THREADS];
    for (int i = 0; i < THREADS; i++) {
        p[i] = (putter){io, i * N / THREADS, (i + 1) * N / THREADS};
        assert_int_equal(pthread_create(&t[i], NULL, put_range, &p[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    put(io, "page-keep", "keep");
    char *prefix = loc("page");
    collected c = {0};
    icmt_ok(icm_fileio_list(io, prefix, collect, &c));
    assert_int_equal(c.n, N);
    for (size_t i = 0; i < c.n; i++) {
        char *want = icmt_sprintf("%s/obj-%05zu", prefix, i);
        assert_string_equal(c.locs[i], want);
        assert_int_equal(c.sizes[i], (int64_t)strlen(want) - (int64_t)strlen(g_run) - 1);
        free(want);
    }
    enum { M = 1500 };
    char **locs = calloc(M, sizeof *locs);
    for (size_t i = 0; i < M; i++)
        locs[i] = i < N ? strdup(c.locs[i]) : icmt_sprintf("%s/never-%05zu", prefix, i);
    icm_fileio_delete_result *r = calloc(M, sizeof *r);
    assert_non_null(r);
    ICM_FILEIO_DELETE_RESULTS_INIT(r, M);
    icmt_ok(icm_fileio_delete_batch(r, io, (const char *const *)locs, M));
    for (size_t i = 0; i < M; i++) {
        if (r[i].status == ICM_FILEIO_DELETE_FAILED)
            print_error("%s: %s\n", locs[i], r[i].message);
        assert_int_not_equal(r[i].status, ICM_FILEIO_DELETE_FAILED);
    }
    collected after = {0};
    icmt_ok(icm_fileio_list(io, prefix, collect, &after));
    assert_int_equal(after.n, 0);
    collected_free(&after);
    expect_content(io, "page-keep", "keep");
    /* a missing object is deleted successfully, one by one as well */
    icmt_ok(icm_fileio_delete(io, locs[0]));
    wipe(io, "page-keep");
    for (size_t i = 0; i < M; i++)
        free(locs[i]);
    free(locs);
    free(r);
    collected_free(&c);
    free(prefix);
    icm_fileio_free(io);
}

typedef struct reader {
    icm_fileio *io;
    const char *loc;
    int failures;
} reader;

static void *read_many(void *arg)
{
    reader *r = arg;
    for (int i = 0; i < 20; i++) {
        char buf[4];
        size_t got = 0;
        int64_t off = i % 7;
        int rc = icm_fileio_read_range(&got, r->io, r->loc, off, buf, 3);
        if (rc != 0 || got != 3 || buf[0] != (char)('a' + off)) {
            fprintf(stderr, "read_range at %lld: %d (%s), %zu bytes\n", (long long)off, rc,
                    rc != 0 ? icm_error_last()->message : "", got);
            r->failures++;
        }
    }
    return NULL;
}

static void test_concurrent_reads(void **state)
{
    (void)state;
    icm_fileio *io = open_s3(&g_s3, NULL);
    put(io, "conc/obj", "abcdefghij");
    char *l = loc("conc/obj");
    enum { THREADS = 8 };
    pthread_t t[THREADS];
    reader r[THREADS];
    for (int i = 0; i < THREADS; i++) {
        r[i] = (reader){io, l, 0};
        assert_int_equal(pthread_create(&t[i], NULL, read_many, &r[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].failures, 0);
    }
    wipe(io, "conc");
    free(l);
    icm_fileio_free(io);
}

/* The resolving FileIO builds the S3 back end for s3, s3a and s3n: one object, three names. */
static void test_resolving_schemes(void **state)
{
    (void)state;
    icm_property props[] = {{"s3.endpoint", g_s3.endpoint},
                            {"s3.access-key-id", g_s3.access_key},
                            {"s3.secret-access-key", g_s3.secret_key},
                            {"s3.region", g_s3.region},
                            {"s3.path-style-access", "true"}};
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_resolving_new(&io, props, sizeof props / sizeof props[0]));
    char *l = loc("resolve/obj");
    icmt_ok(icm_fileio_write_replace(io, l, "via s3", 6));
    const char *schemes[] = {"s3a", "s3n", "S3"};
    for (size_t i = 0; i < 3; i++) {
        char *other = icmt_sprintf("%s%s", schemes[i], strchr(l, ':'));
        char *data = NULL;
        size_t len = 0;
        icmt_ok(icm_fileio_read(&data, &len, io, other));
        assert_int_equal(len, 6);
        assert_memory_equal(data, "via s3", 6);
        icm_free(data);
        free(other);
    }
    icmt_ok(icm_fileio_delete(io, l));
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, io, l), ICM_ENOTFOUND);
    free(l);
    icm_fileio_free(io);
}

static void test_wrong_secret_refused(void **state)
{
    (void)state;
    server v;
    if (!server_from_env(&v, "ICM_TEST_S3V")) {
        icmt_skip_because("ICM_TEST_S3V_* is not set: the wrong-secret test needs a server that "
                          "verifies signatures (.ci/run starts one)");
    }
    icm_fileio *good = open_s3(&v, NULL);
    char *l = icmt_sprintf("s3://%s/wrong-secret-%d", v.bucket, (int)getpid());
    icmt_ok(icm_fileio_write_replace(good, l, "ok", 2));
    icm_fileio *bad = open_s3(&v, "not-the-secret-key-at-all");
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&data, &len, bad, l), ICM_EAUTH);
    assert_int_equal(icm_error_last()->http_status, 403);
    assert_string_equal(icm_error_last()->remote_code, "SignatureDoesNotMatch");
    /* the secret never appears in the message */
    assert_null(strstr(icm_error_last()->message, "not-the-secret"));
    assert_int_equal(icm_fileio_delete(bad, l), ICM_EAUTH);
    icmt_ok(icm_fileio_read(&data, &len, good, l));
    icm_free(data);
    icmt_ok(icm_fileio_delete(good, l));
    free(l);
    icm_fileio_free(bad);
    icm_fileio_free(good);
}

static void not_configured(void **state)
{
    (void)state;
    icmt_skip_here("ICM_TEST_S3_ENDPOINT/_ACCESS_KEY/_SECRET_KEY/_BUCKET are not set: no S3 "
                   "server (.ci/run starts one and exports them)");
}

int main(void)
{
    if (!server_from_env(&g_s3, "ICM_TEST_S3")) {
        const char *ci = getenv("CI");
        if (ci != NULL && ci[0] != '\0') {
            fprintf(stderr, "test_s3_live: ICM_TEST_S3_* is not set under CI; .ci/run starts "
                            "an S3 server and exports its endpoint, keys and bucket\n");
            return 1;
        }
        const struct CMUnitTest none[] = {cmocka_unit_test(not_configured)};
        return cmocka_run_group_tests(none, NULL, NULL);
    }
    snprintf(g_run, sizeof g_run, "s3://%s/run-%d-%lld", g_s3.bucket, (int)getpid(),
             (long long)time(NULL));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_new_refuses_existing),
        cmocka_unit_test(test_exact_keys),
        cmocka_unit_test(test_read_range),
        cmocka_unit_test(test_list_range),
        cmocka_unit_test(test_paged_listing_and_batch_delete),
        cmocka_unit_test(test_concurrent_reads),
        cmocka_unit_test(test_resolving_schemes),
        cmocka_unit_test(test_wrong_secret_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
