/*
 * test_fileio_resolving.c: the resolving FileIO and per-table FileIOs.
 *
 * Scheme selection: paths and `file:` go to the local back end; `mem` to an in-memory store;
 * `s3`, `s3a` and `s3n` to the built-in S3 back end (seen answering for all three, with the
 * network error of an endpoint where nothing listens); the other object-store schemes without
 * a registered back end fail with ICM_EUNSUPPORTED naming the missing back end ("no GCS back
 * end in this build"); unknown schemes fail too. A factory
 * registered for `s3`, `s3a` and `s3n` (an in-memory store that records the properties it was
 * built from) is built lazily, once per FileIO and shared by the three schemes; per-table
 * FileIOs made from one base carry each table's properties (the table's winning) to their own
 * back end, and two tables never share one. Delete batches are grouped by back end with a
 * result per item; listings with a range pass through. Unregistering restores the built-in
 * answer; a failing factory's error reaches the caller naming the location.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "testutil.h"
#include "util/util.h"

/* What the recording factory saw: one entry per back end built. */
typedef struct built_log {
    int n;
    icm_fileio *io[8];
    char *key_id[8]; /* s3.access-key-id, or "" */
    char *region[8]; /* s3.region, or "" */
    int fail_with;   /* non-zero: the factory fails with it */
} built_log;

static int recording_factory(icm_fileio **out, const icm_property *props, size_t n,
                             void *payload)
{
    built_log *log = payload;
    if (log->fail_with != 0)
        return icm__error_set(ICM_ERRCLASS_S3, log->fail_with, NULL, "bad credentials");
    int rc = icm_fileio_mem_new(out);
    if (rc != 0)
        return rc;
    assert_true(log->n < 8);
    const char *k = icm_fileio_property(props, n, "s3.access-key-id");
    const char *r = icm_fileio_property(props, n, "s3.region");
    log->io[log->n] = *out;
    log->key_id[log->n] = strdup(k != NULL ? k : "");
    log->region[log->n] = strdup(r != NULL ? r : "");
    log->n++;
    return 0;
}

static void log_clear(built_log *log)
{
    for (int i = 0; i < log->n; i++) {
        free(log->key_id[i]);
        free(log->region[i]);
    }
    memset(log, 0, sizeof *log);
}

static void put(icm_fileio *io, const char *loc, const char *text)
{
    icmt_ok(icm_fileio_create_new(io, loc, text, strlen(text)));
}

static char *get(icm_fileio *io, const char *loc)
{
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, loc));
    return data;
}

static void assert_unsupported(int rc, const char *in_message)
{
    assert_int_equal(rc, ICM_EUNSUPPORTED);
    if (strstr(icm_error_last()->message, in_message) == NULL)
        print_error("message \"%s\" lacks \"%s\"\n", icm_error_last()->message, in_message);
    assert_non_null(strstr(icm_error_last()->message, in_message));
}

/* The built-in S3 back end answers s3, s3a and s3n: built from the FileIO's properties (an
 * endpoint where nothing listens: port 1 of loopback), so each call fails with the network
 * error of its own request, naming its location, never "no back end". */
static void test_builtin_s3(void **state)
{
    (void)state;
    icm_property props[] = {{"s3.endpoint", "http://127.0.0.1:1"},
                            {"s3.access-key-id", "AKID"},
                            {"s3.secret-access-key", "secret"},
                            {"s3.retry.max-attempts", "1"}};
    icm_fileio *io;
    icmt_ok(icm_fileio_resolving_new(&io, props, 4));
    const char *locs[] = {"s3://b/k", "s3a://b/k", "S3N://b/k"};
    for (size_t i = 0; i < 3; i++) {
        char *s = NULL;
        size_t len = 0;
        assert_int_equal(icm_fileio_read(&s, &len, io, locs[i]), ICM_EUNREACHABLE);
        assert_string_equal(icm_error_last()->location, locs[i]);
    }
    /* nothing was sent: a create-new that never left is not an unknown outcome (the endpoint
     * is known unreachable by now: it fails at once, as not sent) */
    assert_int_equal(icm_fileio_create_new(io, "s3://b/k", "x", 1), ICM_EUNREACHABLE);
    icm_fileio_free(io);
}

static void test_builtin_schemes(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_resolving_new(&io, NULL, 0));
    char *dir = icmt_mkdtemp();
    char *p = icmt_sprintf("%s/a/x", dir), *fp = icmt_sprintf("file://%s/a/y", dir);
    put(io, p, "local");
    put(io, fp, "file");
    char *text = icmt_read_file(p, NULL);
    assert_string_equal(text, "local");
    free(text);
    text = get(io, fp);
    assert_string_equal(text, "file");
    icm_free(text);

    put(io, "mem://bucket/k", "in memory");
    text = get(io, "mem://bucket/k");
    assert_string_equal(text, "in memory");
    icm_free(text);
    /* schemes compare case-insensitively: MEM goes to the same store, and there it names the
     * same object (the one location identity folds a scheme's case, RFC 3986 3.1) */
    icm_file_info st = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&st, io, "MEM://bucket/k"));
    assert_int_equal(st.size_bytes, (int64_t)strlen("in memory"));
    assert_int_equal(icm_fileio_create_new(io, "MEM://bucket/k", "upper", 5), ICM_EEXISTS);
    text = get(io, "MEM://bucket/k");
    assert_string_equal(text, "in memory");
    icm_free(text);

    char *s = NULL;
    size_t len = 0;
    assert_unsupported(icm_fileio_read(&s, &len, io, "gs://b/k"), "no GCS back end");
    assert_unsupported(icm_fileio_read(&s, &len, io, "abfss://c@a.dfs.core.windows.net/k"),
                       "no ADLS back end");
    assert_unsupported(icm_fileio_read(&s, &len, io, "abfs://c@a/k"), "no ADLS back end");
    assert_unsupported(icm_fileio_read(&s, &len, io, "wasbs://c@a/k"), "no Azure Blob back end");
    assert_unsupported(icm_fileio_read(&s, &len, io, "wasb://c@a/k"), "no Azure Blob back end");
    assert_unsupported(icm_fileio_read(&s, &len, io, "hdfs://nn/k"), "scheme hdfs");

    /* a batch over several back ends: a result per item */
    const char *locs[] = {p, "mem://bucket/k", "gs://b/k", "mem://bucket/none"};
    icm_fileio_delete_result r[4];
    ICM_FILEIO_DELETE_RESULTS_INIT(r, 4);
    icmt_ok(icm_fileio_delete_batch(r, io, locs, 4));
    assert_int_equal(r[0].status, ICM_FILEIO_DELETED);
    assert_int_equal(r[1].status, ICM_FILEIO_DELETED);
    assert_int_equal(r[2].status, ICM_FILEIO_DELETE_FAILED);
    assert_int_equal(r[2].code, ICM_EUNSUPPORTED);
    assert_non_null(strstr(r[2].message, "no GCS back end"));
    assert_int_equal(r[3].status, ICM_FILEIO_ALREADY_GONE);
    assert_false(icmt_file_exists(p));
    icm_file_info info = ICM_FILE_INFO_INIT;
    assert_int_equal(icm_fileio_stat(&info, io, "mem://bucket/k"), ICM_ENOTFOUND);
    /* single deletes pass the missing note on */
    bool existed = true;
    icmt_ok(icm_fileio_delete_existing(&existed, io, "mem://bucket/k"));
    assert_false(existed);
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(p), free(fp), free(dir);
}

static int count_cb(const icm_file_info *info, void *payload)
{
    (void)info;
    (*(int *)payload)++;
    return 0;
}

static void test_registered_factory_per_table(void **state)
{
    (void)state;
    built_log log = {0};
    icmt_ok(icm_fileio_register_scheme("s3", recording_factory, &log));
    icmt_ok(icm_fileio_register_scheme("S3A", recording_factory, &log));
    icmt_ok(icm_fileio_register_scheme("s3n", recording_factory, &log));

    icm_property base_props[] = {{"s3.region", "us-east-1"}, {"s3.endpoint", "http://minio"}};
    icm_fileio *base;
    icmt_ok(icm_fileio_resolving_new(&base, base_props, 2));
    assert_int_equal(log.n, 0); /* built lazily */

    icm_property t1_props[] = {{"s3.access-key-id", "AK1"}};
    icm_property t2_props[] = {{"s3.access-key-id", "AK2"}, {"s3.region", "eu-west-1"}};
    icm_fileio *t1, *t2;
    icmt_ok(icm_fileio_for_table(&t1, base, t1_props, 1));
    icmt_ok(icm_fileio_for_table(&t2, base, t2_props, 2));
    icm_fileio_free(base); /* the tables' FileIOs do not need it any more */
    assert_int_equal(log.n, 0);

    put(t1, "s3://b/t1/x", "one");
    assert_int_equal(log.n, 1);
    assert_string_equal(log.key_id[0], "AK1");
    assert_string_equal(log.region[0], "us-east-1"); /* from the base */
    put(t2, "s3://b/t2/y", "two");
    assert_int_equal(log.n, 2);
    assert_string_equal(log.key_id[1], "AK2");
    assert_string_equal(log.region[1], "eu-west-1"); /* the table's value wins */
    assert_ptr_not_equal(log.io[0], log.io[1]);

    /* s3a and s3n share t1's back end: no new build, the same store (which spellings name one
     * object is the location identity's business: s3a and s3n are s3 there) */
    put(t1, "s3a://b/t1/a", "via s3a");
    put(t1, "s3n://b/t1/n", "via s3n");
    assert_int_equal(log.n, 2);
    char *text = NULL;
    size_t text_len = 0;
    icmt_ok(icm_fileio_read(&text, &text_len, log.io[0], "s3a://b/t1/a"));
    assert_string_equal(text, "via s3a");
    icm_free(text);
    icmt_ok(icm_fileio_read(&text, &text_len, log.io[0], "s3n://b/t1/n"));
    assert_string_equal(text, "via s3n");
    icm_free(text);
    put(t1, "s3://b/t1/z", "three");
    /* each table's objects are in its own back end */
    char *s = NULL;
    size_t len = 0;
    assert_int_equal(icm_fileio_read(&s, &len, t1, "s3://b/t2/y"), ICM_ENOTFOUND);
    assert_int_equal(icm_fileio_read(&s, &len, t2, "s3://b/t1/x"), ICM_ENOTFOUND);

    /* listing with a range goes through to the back end */
    int n = 0;
    icm_fileio_list_options o = ICM_FILEIO_LIST_OPTIONS_INIT;
    o.start_after = "s3://b/t1/x";
    icmt_ok(icm_fileio_list_opts(t1, "s3://b/t1", &o, count_cb, &n));
    assert_int_equal(n, 1); /* z only */
    n = 0;
    icmt_ok(icm_fileio_list(t1, "s3://b/t1", count_cb, &n));
    assert_int_equal(n, 4); /* a and n (written through s3a and s3n: the same bucket), x, z */

    /* unregistered: later FileIOs answer as built without it; built back ends stay */
    icmt_ok(icm_fileio_register_scheme("s3", NULL, NULL));
    put(t2, "s3a://b/t2/w", "four"); /* s3a is still registered: t2's back end */
    assert_int_equal(log.n, 2);
    icmt_ok(icm_fileio_read(&text, &text_len, log.io[1], "s3a://b/t2/w"));
    assert_string_equal(text, "four");
    icm_free(text);
    /* ... the built-in S3 back end for s3 again (its request fails: nothing listens there) */
    icm_property t3_props[] = {{"s3.endpoint", "http://127.0.0.1:1"},
                               {"s3.access-key-id", "AKID"},
                               {"s3.secret-access-key", "secret"},
                               {"s3.retry.max-attempts", "1"}};
    icm_fileio *t3;
    icmt_ok(icm_fileio_resolving_new(&t3, t3_props, 4));
    assert_int_equal(icm_fileio_read(&s, &len, t3, "s3://b/t1/x"), ICM_EUNREACHABLE);
    assert_int_equal(log.n, 2);
    icm_fileio_free(t3);
    icmt_ok(icm_fileio_register_scheme("s3a", NULL, NULL));
    icmt_ok(icm_fileio_register_scheme("s3n", NULL, NULL));
    icm_fileio_free(t1);
    icm_fileio_free(t2);
    log_clear(&log);
}

static void test_factory_failure_and_arguments(void **state)
{
    (void)state;
    built_log log = {0};
    log.fail_with = ICM_EAUTH;
    icmt_ok(icm_fileio_register_scheme("gs", recording_factory, &log));
    icm_fileio *io;
    icmt_ok(icm_fileio_resolving_new(&io, NULL, 0));
    assert_int_equal(icm_fileio_create_new(io, "gs://b/k", "x", 1), ICM_EAUTH);
    assert_string_equal(icm_error_last()->message, "bad credentials");
    assert_string_equal(icm_error_last()->location, "gs://b/k");
    log.fail_with = 0; /* not cached: the next call builds it */
    put(io, "gs://b/k", "x");
    assert_int_equal(log.n, 1);
    icmt_ok(icm_fileio_register_scheme("gs", NULL, NULL));
    icm_fileio_free(io);
    log_clear(&log);

    assert_int_equal(icm_fileio_register_scheme("", recording_factory, NULL), ICM_EINVALID);
    assert_int_equal(icm_fileio_register_scheme("1x", recording_factory, NULL), ICM_EINVALID);
    assert_int_equal(icm_fileio_register_scheme("s3:", recording_factory, NULL), ICM_EINVALID);
    assert_int_equal(icm_fileio_register_scheme(NULL, recording_factory, NULL), ICM_EINVALID);
    icm_fileio *mem;
    icmt_ok(icm_fileio_mem_new(&mem));
    assert_int_equal(icm_fileio_for_table(&io, mem, NULL, 0), ICM_EINVALID);
    assert_null(io);
    icm_fileio_free(mem);
    icm_property bad[] = {{"", "v"}};
    assert_int_equal(icm_fileio_resolving_new(&io, bad, 1), ICM_EINVALID);
    assert_int_equal(icm_fileio_resolving_new(&io, NULL, 1), ICM_EINVALID);
    /* repeated keys: the later wins */
    icm_property twice[] = {{"s3.region", "a"}, {"s3.region", "b"}};
    assert_string_equal(icm_fileio_property(twice, 2, "s3.region"), "b");
    assert_null(icm_fileio_property(twice, 2, "s3.endpoint"));
}

static void test_out_of_memory(void **state)
{
    (void)state;
    icm_property props[] = {{"s3.region", "r"}};
    for (long n = 0;; n++) {
        icm_fileio *io = NULL;
        icmt_nomem_arm(n);
        int rc = icm_fileio_resolving_new(&io, props, 1);
        if (rc == 0)
            rc = icm_fileio_create_new(io, "mem://b/k", "x", 1);
        bool injected = icmt_nomem_disarm() > n;
        if (!injected) {
            assert_int_equal(rc, 0);
            icm_fileio_free(io);
            break;
        }
        assert_int_equal(rc, ICM_ENOMEM);
        icm_fileio_free(io);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_schemes),
        cmocka_unit_test(test_builtin_s3),
        cmocka_unit_test(test_registered_factory_per_table),
        cmocka_unit_test(test_factory_failure_and_arguments),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
