/*
 * tests/unit/test_s3_pure.c: the parts of the S3 back end that need no server
 * (src/io/s3/s3_url.c, s3_xml.c, s3_retry.c): locations, URLs in both addressing styles with
 * strict encoding and a sorted query, the XML answers with the encodings that trip clients
 * (EncodingType=url with `+` for a space, raw keys from servers that ignore it, escaped
 * entities, broken 200s), S3's two time formats, the retry classes, the backoff bounds and
 * the AIMD in-flight limiter. Expected values are written out by hand from the S3 API
 * documentation and RFC 3986, never computed by the code under test.
 */
#include <pthread.h>
#include <string.h>

#include "testutil.h"

#include "icemaint/errors.h"
#include "io/s3/s3_internal.h"

/* ---- locations ------------------------------------------------------------------------------ */

static void test_location_parse(void **state)
{
    (void)state;
    icm__s3_location l;
    assert_int_equal(icm__s3_location_parse("s3://bkt/a/b c", &l), 0);
    assert_int_equal(l.bucket_len, 3);
    assert_memory_equal(l.bucket, "bkt", 3);
    assert_string_equal(l.key, "a/b c");
    assert_int_equal(l.base_len, strlen("s3://bkt/"));
    assert_int_equal(icm__s3_location_parse("S3A://b.x-y/k//", &l), 0);
    assert_memory_equal(l.bucket, "b.x-y", 5);
    assert_string_equal(l.key, "k//");
    assert_int_equal(icm__s3_location_parse("s3n://bkt", &l), 0);
    assert_int_equal(l.key_len, 0);
    assert_int_equal(icm__s3_location_parse("s3://bkt/", &l), 0);
    assert_int_equal(l.key_len, 0);
    assert_int_equal(icm__s3_location_parse("gs://b/k", &l), ICM_EUNSUPPORTED);
    assert_int_equal(icm__s3_location_parse("/local/path", &l), ICM_EUNSUPPORTED);
    assert_int_equal(icm__s3_location_parse("s3:///k", &l), ICM_EINVALID);
    assert_int_equal(icm__s3_location_parse("s3://b?x/k", &l), ICM_EINVALID);
    assert_int_equal(icm__s3_location_parse("s3://b@h/k", &l), ICM_EINVALID);
}

/* ---- URLs ----------------------------------------------------------------------------------- */

static void url_is(const char *endpoint, icm__s3_addressing a, const char *bucket,
                   const char *key, const icm__s3_param *p, size_t np, const char *want_url,
                   const char *want_host, const char *want_uri, const char *want_query)
{
    icm__s3_url u;
    assert_int_equal(icm__s3_url_build(&u, endpoint, a, bucket, strlen(bucket), key,
                                       strlen(key), p, np),
                     0);
    assert_string_equal(u.url, want_url);
    assert_string_equal(u.host, want_host);
    assert_string_equal(u.canonical_uri, want_uri);
    assert_string_equal(u.canonical_query, want_query);
    icm__s3_url_clear(&u);
}

static void test_url_path_style(void **state)
{
    (void)state;
    url_is("http://127.0.0.1:9000", ICM__S3_ADDRESSING_PATH, "bkt", "a b/+/%2F/x/../y/./z//é",
           NULL, 0,
           "http://127.0.0.1:9000/bkt/a%20b/%2B/%252F/x/../y/./z//%C3%A9", "127.0.0.1:9000",
           "/bkt/a%20b/%2B/%252F/x/../y/./z//%C3%A9", "");
    /* the bucket itself, and a default port left out as curl leaves it out of Host */
    url_is("https://s3.example.com:443", ICM__S3_ADDRESSING_PATH, "bkt", "", NULL, 0,
           "https://s3.example.com/bkt", "s3.example.com", "/bkt", "");
}

static void test_url_virtual_style(void **state)
{
    (void)state;
    url_is("https://s3.eu-west-1.amazonaws.com", ICM__S3_ADDRESSING_VIRTUAL, "bkt", "k=1&v",
           NULL, 0, "https://bkt.s3.eu-west-1.amazonaws.com/k%3D1%26v",
           "bkt.s3.eu-west-1.amazonaws.com", "/k%3D1%26v", "");
    /* a bucket with a dot cannot match the wildcard certificate: path style */
    url_is("https://s3.amazonaws.com", ICM__S3_ADDRESSING_VIRTUAL, "my.bucket", "k", NULL, 0,
           "https://s3.amazonaws.com/my.bucket/k", "s3.amazonaws.com", "/my.bucket/k", "");
    url_is("http://localhost:4566", ICM__S3_ADDRESSING_VIRTUAL, "bkt", "", NULL, 0,
           "http://bkt.localhost:4566/", "bkt.localhost:4566", "/", "");
}

static void test_url_query_sorted_and_strict(void **state)
{
    (void)state;
    icm__s3_param p[] = {{"prefix", "t x/data/"},
                         {"list-type", "2"},
                         {"start-after", "t x/data/a+b=c&d~"},
                         {"encoding-type", "url"},
                         {"continuation-token", "1/ab+=="}};
    url_is("http://h:1", ICM__S3_ADDRESSING_PATH, "b", "", p, 5,
           "http://h:1/b?continuation-token=1%2Fab%2B%3D%3D&encoding-type=url&list-type=2&"
           "prefix=t%20x%2Fdata%2F&start-after=t%20x%2Fdata%2Fa%2Bb%3Dc%26d~",
           "h:1", "/b",
           "continuation-token=1%2Fab%2B%3D%3D&encoding-type=url&list-type=2&"
           "prefix=t%20x%2Fdata%2F&start-after=t%20x%2Fdata%2Fa%2Bb%3Dc%26d~");
    /* a parameter without a value keeps its `=` (curl 7.88 would sign `delete`) */
    icm__s3_param d[] = {{"delete", ""}};
    url_is("http://h:1", ICM__S3_ADDRESSING_PATH, "b", "", d, 1, "http://h:1/b?delete=", "h:1",
           "/b", "delete=");
}

static void test_url_bad_endpoint(void **state)
{
    (void)state;
    icm__s3_url u;
    const char *bad[] = {"ftp://h", "h:9000", "http://", "http://h/path", "http://u@h"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(icm__s3_url_build(&u, bad[i], ICM__S3_ADDRESSING_PATH, "b", 1, "k", 1,
                                           NULL, 0),
                         ICM_EINVALID);
}

/* ---- ListBucketResult ----------------------------------------------------------------------- */

#define LIST_HEAD                                                                              \
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "                           \
    "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>"

static void test_list_url_encoded(void **state)
{
    (void)state;
    /* AWS: a space as `+`, a literal `+` as %2B, `/` as is; the ETag entity-escaped */
    static const char xml[] =
        LIST_HEAD "<Prefix>t%2F</Prefix><KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys>"
        "<IsTruncated>true</IsTruncated>"
        "<Contents><Key>t/a+b%2Bc</Key><LastModified>2026-11-30T05:46:58.123Z</LastModified>"
        "<ETag>&quot;abc&quot;</ETag><Size>42</Size><StorageClass>STANDARD</StorageClass>"
        "</Contents>"
        "<Contents><Key>t/%C3%A9/%252F/x/../y</Key><Size>0</Size>"
        "<LastModified>2026-01-01T00:00:00Z</LastModified><Owner><ID>o</ID></Owner>"
        "</Contents>"
        "<Contents><Key>t/amp%26lt%3C</Key><Size>9223372036854775807</Size></Contents>"
        "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"
        "<EncodingType>url</EncodingType></ListBucketResult>";
    icm__s3_list_page p;
    assert_int_equal(icm__s3_list_parse(xml, strlen(xml), &p), 0);
    assert_true(p.is_truncated);
    assert_true(p.url_encoded);
    assert_string_equal(p.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
    assert_int_equal(p.n_entries, 3);
    assert_string_equal(p.entries[0].key, "t/a b+c");
    assert_int_equal(p.entries[0].size_bytes, 42);
    assert_int_equal(p.entries[0].mtime_ms, INT64_C(1796017618123));
    assert_string_equal(p.entries[1].key, "t/\xc3\xa9/%2F/x/../y");
    assert_int_equal(p.entries[1].size_bytes, 0);
    assert_int_equal(p.entries[1].mtime_ms, INT64_C(1767225600000));
    assert_string_equal(p.entries[2].key, "t/amp&lt<");
    assert_int_equal(p.entries[2].size_bytes, INT64_MAX);
    assert_int_equal(p.entries[2].mtime_ms, -1);
    icm__s3_list_page_clear(&p);
}

static void test_list_raw_keys_not_decoded(void **state)
{
    (void)state;
    /* a server that ignores encoding-type: `+` and `%2F` are the key's own bytes */
    static const char xml[] =
        LIST_HEAD "<IsTruncated>false</IsTruncated>"
        "<Contents><Key>t/a+b%2Fc &amp; d</Key><Size>1</Size>"
        "<LastModified>2026-11-30T05:46:58.000Z</LastModified></Contents>"
        "</ListBucketResult>";
    icm__s3_list_page p;
    assert_int_equal(icm__s3_list_parse(xml, strlen(xml), &p), 0);
    assert_false(p.is_truncated);
    assert_false(p.url_encoded);
    assert_null(p.next_token);
    assert_int_equal(p.n_entries, 1);
    assert_string_equal(p.entries[0].key, "t/a+b%2Fc & d");
    icm__s3_list_page_clear(&p);
    /* versitygw 1.8 ignores encoding-type and echoes an empty EncodingType: raw keys */
    static const char vgw[] = LIST_HEAD "<IsTruncated>false</IsTruncated><Contents>"
                                        "<Key>t/a+b%2F</Key><Size>1</Size></Contents>"
                                        "<EncodingType></EncodingType></ListBucketResult>";
    assert_int_equal(icm__s3_list_parse(vgw, strlen(vgw), &p), 0);
    assert_false(p.url_encoded);
    assert_string_equal(p.entries[0].key, "t/a+b%2F");
    icm__s3_list_page_clear(&p);
    /* an empty page */
    static const char empty[] = LIST_HEAD "<KeyCount>0</KeyCount><IsTruncated>false"
                                          "</IsTruncated></ListBucketResult>";
    assert_int_equal(icm__s3_list_parse(empty, strlen(empty), &p), 0);
    assert_int_equal(p.n_entries, 0);
    icm__s3_list_page_clear(&p);
}

static void test_list_broken_is_an_error(void **state)
{
    (void)state;
    const char *bad[] = {
        "",                                                  /* a 200 with nothing */
        LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>a</Key>", /* cut short */
        LIST_HEAD "<Contents><Key>a</Key></Contents></ListBucketResult>", /* no IsTruncated */
        LIST_HEAD "<IsTruncated>true</IsTruncated></ListBucketResult>",   /* no token */
        LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Size>1</Size></Contents>"
                  "</ListBucketResult>", /* no Key */
        LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>a%2</Key></Contents>"
                  "<EncodingType>url</EncodingType></ListBucketResult>", /* broken escape */
        LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>a%00b</Key></Contents>"
                  "<EncodingType>url</EncodingType></ListBucketResult>", /* NUL in a key */
        LIST_HEAD "<IsTruncated>false</IsTruncated><EncodingType>base64</EncodingType>"
                  "</ListBucketResult>",
        "<Error><Code>InternalError</Code></Error>", /* another document */
        "<html><body>proxy error</body></html>",
        LIST_HEAD "<IsTruncated>maybe</IsTruncated></ListBucketResult>",
        LIST_HEAD "<IsTruncated>false</IsTruncated><Contents><Key>a</Key><Key>b</Key>"
                  "</Contents></ListBucketResult>", /* two keys in one entry */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm__s3_list_page p;
        int rc = icm__s3_list_parse(bad[i], strlen(bad[i]), &p);
        if (rc != ICM_EIO)
            print_error("case %zu: %d\n", i, rc);
        assert_int_equal(rc, ICM_EIO);
        assert_int_equal(p.n_entries, 0);
        assert_null(p.entries);
    }
}

/* ---- DeleteResult and Error ----------------------------------------------------------------- */

static void test_delete_result(void **state)
{
    (void)state;
    static const char xml[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult "
        "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Deleted><Key>ok</Key></Deleted>"
        "<Error><Key>a &amp; b</Key><Code>AccessDenied</Code><Message>Access Denied</Message>"
        "</Error>"
        "<Error><Key>x&#13;y</Key><Code>SlowDown</Code></Error>"
        "</DeleteResult>";
    icm__s3_delete_result r;
    assert_int_equal(icm__s3_delete_parse(xml, strlen(xml), &r), 0);
    assert_int_equal(r.n_deleted, 1);
    assert_int_equal(r.n_errors, 2);
    assert_string_equal(r.errors[0].key, "a & b");
    assert_string_equal(r.errors[0].code, "AccessDenied");
    assert_string_equal(r.errors[0].message, "Access Denied");
    assert_string_equal(r.errors[1].key, "x\ry");
    assert_string_equal(r.errors[1].code, "SlowDown");
    assert_null(r.errors[1].message);
    icm__s3_delete_result_clear(&r);
    const char *bad[] = {"", "<DeleteResult><Error><Key>k</Key></Error></DeleteResult>",
                         "<ListBucketResult/>", "<DeleteResult>"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(icm__s3_delete_parse(bad[i], strlen(bad[i]), &r), ICM_EIO);
}

static void test_error_document(void **state)
{
    (void)state;
    static const char xml[] = "<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code>"
                              "<Message>The specified bucket\ndoes not exist</Message>"
                              "<BucketName>b</BucketName><RequestId>4442587FB7D0A2F9</RequestId>"
                              "<HostId>h</HostId></Error>";
    icm__s3_error_doc e;
    icm_error_clear();
    icm__s3_error_parse(xml, strlen(xml), &e);
    assert_string_equal(e.code, "NoSuchBucket");
    assert_string_equal(e.message, "The specified bucket does not exist");
    assert_string_equal(e.request_id, "4442587FB7D0A2F9");
    assert_string_equal(e.bucket, "b");
    /* not an error document: empty fields, and the caller's last error untouched */
    icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, "/x", "before");
    icm__s3_error_parse("<html>", 6, &e);
    assert_string_equal(e.code, "");
    assert_string_equal(icm_error_last()->message, "before");
}

/* ---- escaping, decoding, times -------------------------------------------------------------- */

static void test_xml_escape_and_sendable(void **state)
{
    (void)state;
    icm__buf b = ICM__BUF_INIT;
    assert_int_equal(icm__s3_xml_escape(&b, "a&b<c>d\"e'f\tg\nh\ri é", 21), 0);
    assert_string_equal(b.data, "a&amp;b&lt;c&gt;d&quot;e&apos;f&#9;g&#10;h&#13;i é");
    icm__buf_dispose(&b);
    assert_true(icm__s3_xml_sendable("a\tb\nc\rd", 7));
    assert_false(icm__s3_xml_sendable("a\x01" "b", 3));
    assert_false(icm__s3_xml_sendable("\x1f", 1));
    assert_false(icm__s3_xml_sendable("\xc3", 1)); /* not UTF-8 */
    assert_true(icm__s3_xml_sendable("\xe6\x97\xa5", 3));
}

static void test_url_decode(void **state)
{
    (void)state;
    char s[] = "a+b%2Bc%2fd%20e%C3%A9";
    size_t len = strlen(s);
    assert_true(icm__url_form_decode(s, &len));
    assert_string_equal(s, "a b+c/d e\xc3\xa9");
    assert_int_equal(len, strlen("a b+c/d e\xc3\xa9"));
    const char *bad[] = {"%", "%2", "a%G0", "%%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[8];
        strcpy(buf, bad[i]);
        len = strlen(buf);
        assert_false(icm__url_form_decode(buf, &len));
    }
}

static void test_times(void **state)
{
    (void)state;
    assert_int_equal(icm__s3_parse_iso8601_ms("2026-11-30T05:46:58.000Z"),
                     INT64_C(1796017618000));
    assert_int_equal(icm__s3_parse_iso8601_ms("2026-11-30T05:46:58Z"), INT64_C(1796017618000));
    assert_int_equal(icm__s3_parse_iso8601_ms("2026-11-30T05:46:58.5Z"),
                     INT64_C(1796017618500));
    assert_int_equal(icm__s3_parse_iso8601_ms("2024-02-29T23:59:59.999999Z"),
                     INT64_C(1709251199999));
    assert_int_equal(icm__s3_parse_http_date_ms("Wed, 12 Oct 2009 17:50:00 GMT"),
                     INT64_C(1255369800000));
    const char *bad_iso[] = {"", "2026-11-30", "2026-11-30T05:46:58", "2026-13-01T00:00:00Z",
                             "2026-02-30T00:00:00Z", "2026-11-30T05:46:58.Z",
                             "2026-11-30T05:46:58+01:00", "1969-12-31T23:59:59Z"};
    for (size_t i = 0; i < sizeof bad_iso / sizeof bad_iso[0]; i++)
        assert_int_equal(icm__s3_parse_iso8601_ms(bad_iso[i]), -1);
    const char *bad_http[] = {"", "Wed, 12 Oct 2009 17:50:00 UTC", "Wed, 12 Foo 2009 17:50:00 GMT",
                              "Wednesday, 12-Oct-09 17:50:00 GMT", "Wed, 31 Apr 2009 17:50:00 GMT"};
    for (size_t i = 0; i < sizeof bad_http / sizeof bad_http[0]; i++)
        assert_int_equal(icm__s3_parse_http_date_ms(bad_http[i]), -1);
}

/* ---- retries -------------------------------------------------------------------------------- */

static void test_retry_classes(void **state)
{
    (void)state;
    assert_int_equal(icm__s3_retry_classify(0, "", ICM_ENET), ICM__S3_RETRY_TRANSIENT);
    assert_int_equal(icm__s3_retry_classify(0, "", ICM_ETIMEOUT), ICM__S3_RETRY_TRANSIENT);
    assert_int_equal(icm__s3_retry_classify(0, "", ICM_ENOMEM), ICM__S3_NO_RETRY);
    assert_int_equal(icm__s3_retry_classify(500, "InternalError", 0), ICM__S3_RETRY_TRANSIENT);
    assert_int_equal(icm__s3_retry_classify(502, "", 0), ICM__S3_RETRY_TRANSIENT);
    assert_int_equal(icm__s3_retry_classify(504, "", 0), ICM__S3_RETRY_TRANSIENT);
    assert_int_equal(icm__s3_retry_classify(503, "", 0), ICM__S3_RETRY_TRANSIENT);
    assert_int_equal(icm__s3_retry_classify(503, "SlowDown", 0), ICM__S3_RETRY_THROTTLED);
    assert_int_equal(icm__s3_retry_classify(400, "RequestTimeout", 0), ICM__S3_RETRY_TRANSIENT);
    assert_int_equal(icm__s3_retry_classify(400, "Throttling", 0), ICM__S3_RETRY_THROTTLED);
    assert_int_equal(icm__s3_retry_classify(429, "", 0), ICM__S3_RETRY_THROTTLED);
    assert_int_equal(icm__s3_retry_classify(400, "ExpiredToken", 0), ICM__S3_RETRY_EXPIRED);
    assert_int_equal(icm__s3_retry_classify(403, "RequestTimeTooSkewed", 0),
                     ICM__S3_RETRY_SKEWED);
    assert_int_equal(icm__s3_retry_classify(403, "AccessDenied", 0), ICM__S3_NO_RETRY);
    assert_int_equal(icm__s3_retry_classify(403, "SignatureDoesNotMatch", 0), ICM__S3_NO_RETRY);
    assert_int_equal(icm__s3_retry_classify(404, "NoSuchKey", 0), ICM__S3_NO_RETRY);
    assert_int_equal(icm__s3_retry_classify(412, "PreconditionFailed", 0), ICM__S3_NO_RETRY);
    assert_int_equal(icm__s3_retry_classify(400, "MalformedXML", 0), ICM__S3_NO_RETRY);
    assert_int_equal(icm__s3_retry_classify(501, "NotImplemented", 0), ICM__S3_NO_RETRY);
}

static void test_backoff_bounds(void **state)
{
    (void)state;
    /* the ceiling doubles from the base and stops at the cap; the wait is uniform in
     * [0, ceiling]: random 0 gives 0, the largest random gives at most the ceiling */
    const int64_t ceil_of[] = {100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000, 20000};
    for (unsigned r = 1; r <= 10; r++) {
        int64_t c = ceil_of[r - 1];
        assert_int_equal(icm__s3_backoff_ms(r, 100, 20000, 0), 0);
        assert_int_equal(icm__s3_backoff_ms(r, 100, 20000, (uint64_t)c), c);
        assert_int_equal(icm__s3_backoff_ms(r, 100, 20000, (uint64_t)c + 1), 0);
        assert_true(icm__s3_backoff_ms(r, 100, 20000, UINT64_MAX) <= c);
    }
    assert_int_equal(icm__s3_backoff_ms(200, 100, 20000, 20000), 20000);
    assert_int_equal(icm__s3_backoff_ms(0, 100, 20000, 5), 0);
    /* spread: many draws cover the range, none outside */
    int64_t lo = INT64_MAX, hi = -1;
    for (int i = 0; i < 10000; i++) {
        int64_t w = icm__s3_backoff_ms(4, 100, 20000, icm__s3_random());
        lo = w < lo ? w : lo;
        hi = w > hi ? w : hi;
    }
    assert_true(lo >= 0 && lo < 40);
    assert_true(hi <= 800 && hi > 760);
}

static void test_limiter_aimd(void **state)
{
    (void)state;
    icm__s3_limiter l;
    icm__s3_limiter_init(&l, 32);
    assert_int_equal(icm__s3_limiter_limit(&l), 32);
    /* 32 requests in flight of one generation all see SlowDown: the limit halves once */
    uint64_t g[32];
    for (int i = 0; i < 32; i++)
        g[i] = icm__s3_limiter_acquire(&l);
    for (int i = 0; i < 32; i++)
        icm__s3_limiter_release(&l, g[i], true);
    assert_int_equal(icm__s3_limiter_limit(&l), 16);
    /* sustained SlowDown: each new generation halves again, never below 1 */
    for (int i = 0; i < 10; i++) {
        uint64_t gen = icm__s3_limiter_acquire(&l);
        icm__s3_limiter_release(&l, gen, true);
    }
    assert_int_equal(icm__s3_limiter_limit(&l), 1);
    /* additive increase: `limit` successes in a row add one */
    uint64_t gen = icm__s3_limiter_acquire(&l);
    icm__s3_limiter_release(&l, gen, false);
    assert_int_equal(icm__s3_limiter_limit(&l), 2);
    for (int i = 0; i < 2; i++) {
        gen = icm__s3_limiter_acquire(&l);
        icm__s3_limiter_release(&l, gen, false);
    }
    assert_int_equal(icm__s3_limiter_limit(&l), 3);
    for (int i = 0; i < 10000; i++) {
        gen = icm__s3_limiter_acquire(&l);
        icm__s3_limiter_release(&l, gen, false);
    }
    assert_int_equal(icm__s3_limiter_limit(&l), 32);
    /* throttled after giving the slot back (per-key SlowDown in a DeleteObjects result):
     * halves once per generation too */
    uint64_t g1 = icm__s3_limiter_acquire(&l), g2 = icm__s3_limiter_acquire(&l);
    icm__s3_limiter_release(&l, g1, false);
    icm__s3_limiter_release(&l, g2, false);
    icm__s3_limiter_throttled(&l, g1);
    icm__s3_limiter_throttled(&l, g2);
    assert_int_equal(icm__s3_limiter_limit(&l), 16);
    icm__s3_limiter_destroy(&l);
}

typedef struct lim_arg {
    icm__s3_limiter *l;
    int *in_flight, *max_seen;
    pthread_mutex_t *m;
} lim_arg;

static void *lim_worker(void *p)
{
    lim_arg *a = p;
    for (int i = 0; i < 200; i++) {
        uint64_t g = icm__s3_limiter_acquire(a->l);
        pthread_mutex_lock(a->m);
        (*a->in_flight)++;
        if (*a->in_flight > *a->max_seen)
            *a->max_seen = *a->in_flight;
        pthread_mutex_unlock(a->m);
        pthread_mutex_lock(a->m);
        (*a->in_flight)--;
        pthread_mutex_unlock(a->m);
        icm__s3_limiter_release(a->l, g, false);
    }
    return NULL;
}

static void test_limiter_bounds_concurrency(void **state)
{
    (void)state;
    icm__s3_limiter l;
    icm__s3_limiter_init(&l, 3);
    int in_flight = 0, max_seen = 0;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    lim_arg a = {&l, &in_flight, &max_seen, &m};
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, lim_worker, &a), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    assert_true(max_seen >= 1 && max_seen <= 3);
    icm__s3_limiter_destroy(&l);
}

/* Every allocation of the parsers and the URL builder may fail: the call then returns
 * ICM_ENOMEM with nothing leaked (the ASan build checks), never a half-parsed page or a
 * "broken document" that a caller would retry as if S3 had sent it. */
static void test_out_of_memory(void **state)
{
    (void)state;
    static const char list[] =
        LIST_HEAD "<IsTruncated>true</IsTruncated><Contents><Key>t/a+b</Key><Size>1</Size>"
        "</Contents><Contents><Key>t/c</Key></Contents><NextContinuationToken>x"
        "</NextContinuationToken><EncodingType>url</EncodingType></ListBucketResult>";
    static const char del[] = "<DeleteResult><Error><Key>k</Key><Code>SlowDown</Code>"
                              "<Message>m</Message></Error></DeleteResult>";
    icm__s3_param q[] = {{"prefix", "a b/"}, {"list-type", "2"}};
    for (int which = 0; which < 3; which++) {
        bool done = false;
        for (long n = 0; !done && n < 10000; n++) {
            icm__s3_list_page p;
            icm__s3_delete_result r;
            icm__s3_url u;
            int rc;
            icmt_nomem_arm(n);
            if (which == 0)
                rc = icm__s3_list_parse(list, strlen(list), &p);
            else if (which == 1)
                rc = icm__s3_delete_parse(del, strlen(del), &r);
            else
                rc = icm__s3_url_build(&u, "http://h:1", ICM__S3_ADDRESSING_PATH, "b", 1, "k k",
                                       3, q, 2);
            long counted = icmt_nomem_disarm();
            if (rc == ICM_ENOMEM) {
                assert_true(counted > n);
                continue;
            }
            assert_int_equal(rc, 0);
            done = true;
            if (which == 0) {
                assert_int_equal(p.n_entries, 2);
                assert_string_equal(p.entries[0].key, "t/a b");
                icm__s3_list_page_clear(&p);
            } else if (which == 1) {
                assert_int_equal(r.n_errors, 1);
                icm__s3_delete_result_clear(&r);
            } else {
                assert_string_equal(u.url, "http://h:1/b/k%20k?list-type=2&prefix=a%20b%2F");
                icm__s3_url_clear(&u);
            }
        }
        assert_true(done);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_location_parse),
        cmocka_unit_test(test_url_path_style),
        cmocka_unit_test(test_url_virtual_style),
        cmocka_unit_test(test_url_query_sorted_and_strict),
        cmocka_unit_test(test_url_bad_endpoint),
        cmocka_unit_test(test_list_url_encoded),
        cmocka_unit_test(test_list_raw_keys_not_decoded),
        cmocka_unit_test(test_list_broken_is_an_error),
        cmocka_unit_test(test_delete_result),
        cmocka_unit_test(test_error_document),
        cmocka_unit_test(test_xml_escape_and_sendable),
        cmocka_unit_test(test_url_decode),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_retry_classes),
        cmocka_unit_test(test_backoff_bounds),
        cmocka_unit_test(test_limiter_aimd),
        cmocka_unit_test(test_limiter_bounds_concurrency),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
