/*
 * tests/unit/test_inventory.c: the S3 Inventory reader (maint/inventory.h).
 *
 * The manifest parser takes AWS's manifest.json shape (destinationBucket as an ARN,
 * creationTimestamp as a string of ms, MD5checksum) and refuses what is not one; a CSV row
 * gives the decoded key (`%XX` bytes incl. UTF-8, `+` a space, `%2B` a plus), size and time,
 * with quoted fields, missing optional columns, and versions that are no current object
 * skipped; the reader streams a local report's gzip data files and refuses, with one line
 * naming the data file, an MD5 or size mismatch and a truncated gzip stream.
 *
 * And what the sweep trusts a snapshot (an inventory report, a file list: both go through
 * orphans_inventory.c's row merge and orphans_nested.c's live folder check) for, on a
 * hand-written table in the in-memory store: its data rows as candidates, one per file, never
 * proof that another table or format is absent (adversary adv1, findings 1 and 6).
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "history.h"
#include "maint/inventory.h"
#include "test_orphans_common.h"
#include "testutil.h"

#define SCHEMA_FULL "Bucket, Key, Size, LastModifiedDate, ETag, StorageClass"

static char *manifest_json(const char *format, const char *schema, const char *files)
{
    return icmt_sprintf("{\"sourceBucket\": \"src-bucket\",\n"
                        " \"destinationBucket\": \"arn:aws:s3:::inv-bucket\",\n"
                        " \"version\": \"2016-11-30\",\n"
                        " \"creationTimestamp\": \"1764662400000\",\n"
                        " \"fileFormat\": \"%s\",\n"
                        " \"fileSchema\": \"%s\",\n"
                        " \"files\": [%s]}",
                        format, schema, files);
}

static void test_manifest_parses_the_aws_shape(void **state)
{
    (void)state;
    char *j = manifest_json("CSV", SCHEMA_FULL,
                            "{\"key\": \"p/src-bucket/cfg/data/a.csv.gz\", \"size\": 12, "
                            "\"MD5checksum\": \"0123456789ABCDEF0123456789abcdef\"}");
    icm__inventory_manifest m;
    icmt_ok(icm__inventory_manifest_parse(&m, "manifest.json", j, strlen(j)));
    assert_string_equal(m.source_bucket, "src-bucket");
    assert_string_equal(m.destination_bucket, "inv-bucket");
    assert_true(m.creation_ms == 1764662400000LL);
    assert_int_equal(m.format, ICM__INVENTORY_CSV);
    assert_int_equal(m.columns.count, 6);
    assert_int_equal(m.columns.bucket, 0);
    assert_int_equal(m.columns.key, 1);
    assert_int_equal(m.columns.size, 2);
    assert_int_equal(m.columns.last_modified, 3);
    assert_int_equal(m.columns.is_latest, -1);
    assert_int_equal(m.n_files, 1);
    assert_string_equal(m.files[0].key, "p/src-bucket/cfg/data/a.csv.gz");
    assert_true(m.files[0].size_bytes == 12);
    assert_string_equal(m.files[0].md5, "0123456789abcdef0123456789abcdef");
    icm__inventory_manifest_clear(&m);
    free(j);

    /* a bare destination bucket name and a numeric creationTimestamp are taken too */
    const char *bare = "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":"
                       "5,\"fileFormat\":\"Parquet\",\"fileSchema\":\"message s3.inventory {}\","
                       "\"files\":[]}";
    icmt_ok(icm__inventory_manifest_parse(&m, "m", bare, strlen(bare)));
    assert_string_equal(m.destination_bucket, "d");
    assert_int_equal(m.format, ICM__INVENTORY_PARQUET);
    assert_int_equal(m.n_files, 0);
    icm__inventory_manifest_clear(&m);
}

static void test_manifest_refuses_what_is_not_one(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[]",
        "{\"sourceBucket\":\"s\"}",
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"fileFormat\":\"CSV\","
        "\"fileSchema\":\"Bucket, Key\",\"files\":[]}", /* no creationTimestamp */
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"12x\","
        "\"fileFormat\":\"CSV\",\"fileSchema\":\"Bucket, Key\",\"files\":[]}",
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"1\","
        "\"fileFormat\":\"TSV\",\"fileSchema\":\"Key\",\"files\":[]}",
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"1\","
        "\"fileFormat\":\"CSV\",\"fileSchema\":\"Bucket, Size\",\"files\":[]}", /* no Key */
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"1\","
        "\"fileFormat\":\"CSV\",\"fileSchema\":\"Key, Key\",\"files\":[]}",
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"1\","
        "\"fileFormat\":\"CSV\",\"fileSchema\":\"Key\",\"files\":[{\"key\":\"k\","
        "\"MD5checksum\":\"abc\"}]}",
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"1\","
        "\"fileFormat\":\"CSV\",\"fileSchema\":\"Key\",\"files\":[{\"size\":3}]}",
        "{\"sourceBucket\":\"s/x\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"1\","
        "\"fileFormat\":\"CSV\",\"fileSchema\":\"Key\",\"files\":[]}",
        "{\"sourceBucket\":\"s\",\"destinationBucket\":\"d\",\"creationTimestamp\":\"1\","
        "\"fileFormat\":\"CSV\",\"fileSchema\":\"Key\",\"files\":{}}",
        "{\"sourceBucket\":\"s\",\"sourceBucket\":\"t\"}",
        "not json",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm__inventory_manifest m;
        assert_int_equal(icm__inventory_manifest_parse(&m, "manifest.json", bad[i],
                                                       strlen(bad[i])),
                         ICM_EINVALID);
        assert_null(m.files);
        assert_null(m.source_bucket);
        assert_non_null(strstr(icm_error_last()->location, "manifest.json"));
    }
}

/* Parse one row of `schema` into e (the key copied to `key`, up to 255 bytes). */
static int row(const char *schema, const char *text, icm__inventory_entry *e, bool *skip,
               char key[256], const char **why)
{
    char *j = manifest_json("CSV", schema, "");
    icm__inventory_manifest m;
    icmt_ok(icm__inventory_manifest_parse(&m, "m", j, strlen(j)));
    free(j);
    char *line = strdup(text);
    icm__buf kb = ICM__BUF_INIT;
    int rc = icm__inventory_csv_row(e, skip, &m, line, strlen(line), &kb, why);
    key[0] = '\0';
    if (rc == 0) {
        assert_int_equal(strlen(e->key), e->key_len);
        snprintf(key, 256, "%s", e->key);
    }
    icm__buf_dispose(&kb);
    free(line);
    icm__inventory_manifest_clear(&m);
    return rc;
}

static void test_csv_row_fields_and_key_decoding(void **state)
{
    (void)state;
    icm__inventory_entry e;
    bool skip;
    char key[256];
    const char *why;
    icmt_ok(row(SCHEMA_FULL,
                "\"src-bucket\",\"wh/t/data/a+b%2Bc%20d.parquet\",\"1234\","
                "\"2026-11-30T08:00:01.250Z\",\"\"\"etag\"\"\",\"STANDARD\"",
                &e, &skip, key, &why));
    assert_false(skip);
    assert_string_equal(key, "wh/t/data/a b+c d.parquet");
    assert_true(e.size_bytes == 1234);
    assert_true(e.mtime_ms == 1796025601250LL);

    /* UTF-8 percent-encoded, unquoted fields, lower-case hex */
    icmt_ok(row(SCHEMA_FULL, "src-bucket,wh/t/%C3%A9t%c3%a9/%E2%9C%93.avro,7,"
                             "2026-11-30T08:00:00Z,x,y",
                &e, &skip, key, &why));
    assert_string_equal(key, "wh/t/\xc3\xa9t\xc3\xa9/\xe2\x9c\x93.avro");
    assert_true(e.mtime_ms == 1796025600000LL);

    /* a comma inside a quoted field is data */
    icmt_ok(row("Key, Size", "\"a%2Cb,c\",\"5\"", &e, &skip, key, &why));
    assert_string_equal(key, "a,b,c");

    /* optional columns absent: size and time unknown */
    icmt_ok(row("Bucket, Key", "\"src-bucket\",\"k\"", &e, &skip, key, &why));
    assert_true(e.size_bytes == -1 && e.mtime_ms == -1);
    /* present but empty: unknown too */
    icmt_ok(row(SCHEMA_FULL, "\"src-bucket\",\"k\",\"\",\"\",\"\",\"\"", &e, &skip, key, &why));
    assert_true(e.size_bytes == -1 && e.mtime_ms == -1);
}

static void test_csv_row_skips_versions_that_are_no_current_object(void **state)
{
    (void)state;
    const char *schema = "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size";
    icm__inventory_entry e;
    bool skip;
    char key[256];
    const char *why;
    icmt_ok(row(schema, "\"src-bucket\",\"k\",\"v1\",\"true\",\"false\",\"3\"", &e, &skip, key,
                &why));
    assert_false(skip);
    icmt_ok(row(schema, "\"src-bucket\",\"k\",\"v0\",\"false\",\"false\",\"3\"", &e, &skip, key,
                &why));
    assert_true(skip);
    icmt_ok(row(schema, "\"src-bucket\",\"k\",\"v2\",\"true\",\"true\",\"\"", &e, &skip, key,
                &why));
    assert_true(skip);
}

static void test_csv_row_refuses_malformed_lines(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "\"src-bucket\",\"k\",\"1\",\"2026-11-30T08:00:00.000Z\",\"e\"",          /* 5 fields */
        "\"src-bucket\",\"k\",\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\",\"x\"", /* 7 */
        "\"other\",\"k\",\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\"",  /* another bucket */
        "\"src-bucket\",\"k%2\",\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\"",
        "\"src-bucket\",\"k%zz\",\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\"",
        "\"src-bucket\",\"k%00x\",\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\"",
        "\"src-bucket\",\"\",\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\"",
        "\"src-bucket\",\"k\",\"-1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\"",
        "\"src-bucket\",\"k\",\"1\",\"2026-11-31T08:00:00.000Z\",\"e\",\"s\"",
        "\"src-bucket\",\"k\",\"1\",\"2026-11-30 08:00:00\",\"e\",\"s\"",
        "\"src-bucket\",\"k\"x,\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s\"",
        "\"src-bucket\",\"k,\"1\",\"2026-11-30T08:00:00.000Z\",\"e\",\"s",
        "src-bucket,k\"q,1,2026-11-30T08:00:00.000Z,e,s",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm__inventory_entry e;
        bool skip;
        char key[256];
        const char *why = NULL;
        assert_int_equal(row(SCHEMA_FULL, bad[i], &e, &skip, key, &why), ICM_EINVALID);
        assert_non_null(why);
    }
}

/* ---- the reader over a local copy of a destination bucket ---- */

static void md5_hex(const void *data, size_t len, char out[33])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    assert_int_equal(EVP_Digest(data, len, md, &n, EVP_md5(), NULL), 1);
    for (unsigned i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* gzip `text` into a new buffer (*len). */
static unsigned char *gzip(const char *text, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)strlen(text)) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

typedef struct report {
    char *root;     /* the copy of the destination bucket */
    char *manifest; /* <root>/p/src-bucket/cfg/2026-12-01T00-00Z/manifest.json */
} report;

/* Write a report of two data files; `damage` 1: a wrong MD5 in the manifest, 2: the second
 * data file cut short (its MD5 and size those of the cut file), 3: a wrong size. */
static report write_report(int damage)
{
    report r;
    r.root = icmt_mkdtemp();
    icmt_mkdir_in(r.root, "p");
    icmt_mkdir_in(r.root, "p/src-bucket");
    icmt_mkdir_in(r.root, "p/src-bucket/cfg");
    icmt_mkdir_in(r.root, "p/src-bucket/cfg/data");
    icmt_mkdir_in(r.root, "p/src-bucket/cfg/2026-12-01T00-00Z");
    const char *texts[2] = {
        "\"src-bucket\",\"wh/t/data/a.parquet\",\"10\",\"2026-11-30T08:00:00.000Z\"\n"
        "\"src-bucket\",\"wh/t/data/b%20c.parquet\",\"11\",\"2026-11-30T08:00:01.000Z\"\n",
        "\"src-bucket\",\"other/x\",\"12\",\"2026-11-30T08:00:02.000Z\"\r\n"
        "\"src-bucket\",\"wh/t/data/d%2Be.parquet\",\"13\",\"2026-11-30T08:00:03.000Z\""};
    char files[1024] = "";
    for (int i = 0; i < 2; i++) {
        size_t len;
        unsigned char *gz = gzip(texts[i], &len);
        if (damage == 2 && i == 1)
            len -= 12; /* the trailer and some of the stream */
        char md5[33];
        md5_hex(gz, len, md5);
        if (damage == 1 && i == 1)
            md5[0] = md5[0] == '0' ? '1' : '0';
        char *rel = icmt_sprintf("p/src-bucket/cfg/data/f%d.csv.gz", i);
        char *path = icmt_in(r.root, rel);
        icmt_write_file(path, gz, len);
        size_t n = strlen(files);
        snprintf(files + n, sizeof files - n,
                 "%s{\"key\": \"%s\", \"size\": %zu, \"MD5checksum\": \"%s\"}", i ? "," : "",
                 rel, damage == 3 && i == 1 ? len + 1 : len, md5);
        free(path);
        free(rel);
        free(gz);
    }
    char *j = manifest_json("CSV", "Bucket, Key, Size, LastModifiedDate", files);
    r.manifest = icmt_in(r.root, "p/src-bucket/cfg/2026-12-01T00-00Z/manifest.json");
    icmt_write_file(r.manifest, j, strlen(j));
    free(j);
    return r;
}

static void report_free(report *r)
{
    icmt_rmtree(r->root);
    free(r->root);
    free(r->manifest);
}

/* Read the whole report; the keys joined with '|' into keys. */
static int read_all(const report *r, char *keys, size_t cap, uint64_t *n)
{
    icm__inventory_reader *inv = NULL;
    keys[0] = '\0';
    *n = 0;
    int rc = icm__inventory_open(&inv, NULL, r->manifest);
    while (rc == 0) {
        icm__inventory_entry e;
        bool end;
        if ((rc = icm__inventory_next(inv, &e, &end)) != 0 || end)
            break;
        size_t used = strlen(keys);
        snprintf(keys + used, cap - used, "%s%s:%lld:%lld", used ? "|" : "", e.key,
                 (long long)e.size_bytes, (long long)e.mtime_ms);
        (*n)++;
    }
    if (inv != NULL)
        assert_true(rc != 0 || icm__inventory_rows(inv) == *n);
    icm__inventory_close(inv);
    return rc;
}

static void test_reader_streams_a_local_report(void **state)
{
    (void)state;
    report r = write_report(0);
    char keys[1024];
    uint64_t n;
    icmt_ok(read_all(&r, keys, sizeof keys, &n));
    assert_true(n == 4);
    assert_string_equal(keys, "wh/t/data/a.parquet:10:1796025600000|"
                              "wh/t/data/b c.parquet:11:1796025601000|"
                              "other/x:12:1796025602000|"
                              "wh/t/data/d+e.parquet:13:1796025603000");
    report_free(&r);
}

static void test_reader_refuses_a_wrong_md5(void **state)
{
    (void)state;
    report r = write_report(1);
    char keys[1024];
    uint64_t n;
    assert_int_equal(read_all(&r, keys, sizeof keys, &n), ICM_EINVALID);
    const char *msg = icm_error_last()->message;
    assert_non_null(strstr(icm_error_last()->location, "f1.csv.gz"));
    assert_non_null(strstr(msg, "MD5"));
    assert_null(strchr(msg, '\n'));
    report_free(&r);
}

static void test_reader_refuses_a_truncated_gzip(void **state)
{
    (void)state;
    report r = write_report(2);
    char keys[1024];
    uint64_t n;
    assert_int_equal(read_all(&r, keys, sizeof keys, &n), ICM_EINVALID);
    const char *msg = icm_error_last()->message;
    assert_non_null(strstr(icm_error_last()->location, "f1.csv.gz"));
    assert_non_null(strstr(msg, "truncated"));
    assert_null(strchr(msg, '\n'));
    report_free(&r);
}

static void test_reader_refuses_a_wrong_size(void **state)
{
    (void)state;
    report r = write_report(3);
    char keys[1024];
    uint64_t n;
    assert_int_equal(read_all(&r, keys, sizeof keys, &n), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->location, "f1.csv.gz"));
    report_free(&r);
}

/* One data file of `rows` rows (~2.4 MB of text for 30,000: many output chunks from a read
 * chunk, a row across each chunk's end) written as two concatenated gzip members. */
static void test_reader_streams_many_rows_and_gzip_members(void **state)
{
    (void)state;
    const int rows = 30000;
    char *text[2];
    for (int part = 0; part < 2; part++) {
        size_t cap = (size_t)rows * 100, used = 0;
        text[part] = malloc(cap);
        text[part][0] = '\0';
        for (int i = part * rows / 2; i < (part + 1) * rows / 2; i++)
            used += (size_t)snprintf(text[part] + used, cap - used,
                                     "\"src-bucket\",\"wh/t/data/part-%06d.parquet\",\"%d\","
                                     "\"2026-11-30T08:00:00.000Z\"\n", i, i);
    }
    size_t l0, l1;
    unsigned char *g0 = gzip(text[0], &l0), *g1 = gzip(text[1], &l1);
    unsigned char *both = malloc(l0 + l1);
    memcpy(both, g0, l0);
    memcpy(both + l0, g1, l1);
    char md5[33];
    md5_hex(both, l0 + l1, md5);
    char *dir = icmt_mkdtemp();
    char *data = icmt_in(dir, "big.csv.gz");
    icmt_write_file(data, both, l0 + l1);
    char *files = icmt_sprintf("{\"key\": \"big.csv.gz\", \"size\": %zu, \"MD5checksum\": "
                               "\"%s\"}", l0 + l1, md5);
    char *j = manifest_json("CSV", "Bucket, Key, Size, LastModifiedDate", files);
    char *manifest = icmt_in(dir, "manifest.json");
    icmt_write_file(manifest, j, strlen(j));
    icm__inventory_reader *inv = NULL;
    icmt_ok(icm__inventory_open(&inv, NULL, manifest));
    int n = 0;
    for (;;) {
        icm__inventory_entry e;
        bool end;
        icmt_ok(icm__inventory_next(inv, &e, &end));
        if (end)
            break;
        char want[64];
        snprintf(want, sizeof want, "wh/t/data/part-%06d.parquet", n);
        assert_string_equal(e.key, want);
        assert_true(e.size_bytes == n);
        n++;
    }
    assert_int_equal(n, rows);
    assert_true(icm__inventory_rows(inv) == (uint64_t)rows);
    icm__inventory_close(inv);
    icmt_rmtree(dir);
    free(manifest);
    free(j);
    free(files);
    free(data);
    free(dir);
    free(both);
    free(g0);
    free(g1);
    free(text[0]);
    free(text[1]);
}

static void test_reader_refuses_parquet_and_orc(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *path = icmt_in(dir, "manifest.json");
    const char *formats[] = {"Parquet", "ORC"};
    for (int i = 0; i < 2; i++) {
        char *j = manifest_json(formats[i], "message s3.inventory { }", "");
        icmt_write_file(path, j, strlen(j));
        free(j);
        icm__inventory_reader *inv = NULL;
        assert_int_equal(icm__inventory_open(&inv, NULL, path), ICM_EUNSUPPORTED);
        assert_null(inv);
        assert_non_null(strstr(icm_error_last()->message, formats[i]));
        assert_non_null(strstr(icm_error_last()->message, "CSV"));
    }
    /* a missing manifest is ENOTFOUND */
    icm__inventory_reader *inv = NULL;
    char *absent = icmt_in(dir, "absent.json");
    assert_int_equal(icm__inventory_open(&inv, NULL, absent), ICM_ENOTFOUND);
    free(absent);
    free(path);
    icmt_rmtree(dir);
    free(dir);
}

/* ---- what the sweep trusts a snapshot for ---- */

#define T_UUID "7b6c0a1e-0000-4000-8000-0000000000ab"

typedef struct snap {
    icm_fileio *mem;
    icm_table *t;
    int64_t now, old;
    char *dir, *list;
} snap;

static void snap_init(snap *e)
{
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e->mem));
    char *json = raw_metadata(T_UUID, "s3://b/t", UNPARTITIONED, 999, "", "", e->old);
    e->t = raw_table(e->mem, "s3://b/t", json, e->old);
    free(json);
    e->dir = icmt_mkdtemp();
    e->list = icmt_sprintf("%s/files.tsv", e->dir);
}

static void snap_free(snap *e)
{
    icm_table_free(e->t);
    icm_fileio_free(e->mem);
    icmt_rmtree(e->dir);
    free(e->dir);
    free(e->list);
}

/* Write the file list: the table's own metadata and each of `paths` as storage shows it now,
 * then `extra` verbatim. */
static void write_list(const snap *e, const char *const *paths, const char *extra)
{
    FILE *f = fopen(e->list, "w");
    assert_non_null(f);
    static const char *const own[] = {"s3://b/t/metadata/v1.metadata.json",
                                      "s3://b/t/metadata/version-hint.text"};
    for (size_t i = 0; i < 2; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, e->mem, own[i]));
        fprintf(f, "%s\t%lld\t%lld\n", own[i], (long long)info.size_bytes,
                (long long)info.mtime_ms);
    }
    for (size_t i = 0; paths[i] != NULL; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, e->mem, paths[i]));
        fprintf(f, "%s\t%lld\t%lld\n", paths[i], (long long)info.size_bytes,
                (long long)info.mtime_ms);
    }
    fputs(extra, f);
    fclose(f);
}

static int snap_sweep(snap *e, bool dry_run, icm_orphan_result **r)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e->now;
    o.file_list = e->list;
    o.dry_run = dry_run;
    *r = NULL;
    return icm_orphan_sweep(r, e->t, &o);
}

static bool has_warning(const icm_orphan_result *r, const char *a, const char *b)
{
    for (size_t i = 0; i < r->warning_count; i++)
        if (strstr(r->warnings[i], a) != NULL && strstr(r->warnings[i], b) != NULL)
            return true;
    return false;
}

static bool exists(const snap *e, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, e->mem, path);
    if (rc != 0)
        icm_error_clear();
    return rc == 0;
}

/* Data loss: a snapshot that does not show another table's metadata (made since, or its rows
 * left out), a version hint, or another format's log, is not trusted for their absence: the
 * candidates' folders are looked at in storage and the sweep refuses as a listing would. */
static void test_data_loss_snapshot_hides_a_nested_table_or_format(void **state)
{
    (void)state;
    snap e;
    snap_init(&e);
    const char *old = "s3://b/t/sub/data/old.parquet";
    const char *stray = "s3://b/t/data/stray.parquet";
    plant(e.mem, old, e.old);
    plant(e.mem, stray, e.old);
    const char *rows[] = {old, stray, NULL};
    write_list(&e, rows, "");
    icm_orphan_result *r = NULL;
    icmt_ok(snap_sweep(&e, true, &r)); /* control: nothing else there, both are candidates */
    assert_int_equal(r->orphan_count, 2);
    icm_orphan_result_free(r);

    /* another table at s3://b/t/sub, its metadata not in the list */
    char *other = raw_metadata("7b6c0a1e-0000-4000-8000-0000000000cd", "s3://b/t/sub",
                               UNPARTITIONED, 999, "", "", e.old);
    icm_fileio_mem_set_time(e.mem, e.old);
    icmt_ok(icm_fileio_write_replace(e.mem, "s3://b/t/sub/metadata/v1.metadata.json", other,
                                     strlen(other)));
    free(other);
    assert_int_equal(snap_sweep(&e, false, &r), ICM_EREFUSED);
    assert_null(r);
    assert_non_null(strstr(icm_error_last()->message, "another table's metadata"));
    assert_true(exists(&e, old) && exists(&e, stray));

    /* only a version hint there: which table cannot be told, refused */
    icmt_ok(icm_fileio_delete(e.mem, "s3://b/t/sub/metadata/v1.metadata.json"));
    plant(e.mem, "s3://b/t/sub/metadata/version-hint.text", e.old);
    assert_int_equal(snap_sweep(&e, false, &r), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "version hint"));
    assert_true(exists(&e, old) && exists(&e, stray));
    icmt_ok(icm_fileio_delete(e.mem, "s3://b/t/sub/metadata/version-hint.text"));

    /* a Delta log, then a Hudi timeline, in a candidate's folder */
    static const char *const markers[] = {"s3://b/t/sub/data/_delta_log/0.json",
                                          "s3://b/t/sub/.hoodie/hoodie.properties", NULL};
    for (size_t i = 0; markers[i] != NULL; i++) {
        plant(e.mem, markers[i], e.old);
        assert_int_equal(snap_sweep(&e, false, &r), ICM_EREFUSED);
        assert_non_null(strstr(icm_error_last()->message, i == 0 ? "_delta_log" : ".hoodie"));
        assert_true(exists(&e, old) && exists(&e, stray));
        icmt_ok(icm_fileio_delete(e.mem, markers[i]));
    }

    /* nothing else there any more: both go */
    icmt_ok(snap_sweep(&e, false, &r));
    assert_int_equal(r->deleted, 2);
    icm_orphan_result_free(r);
    assert_false(exists(&e, old) || exists(&e, stray));
    snap_free(&e);
}

/* The live looks at many candidates' folders run at once (orphans_nested.c), yet refuse as a
 * look at one folder after another did: the first folder, in the order the candidates name
 * them, that holds another format's log, a lone version hint or another table's metadata is
 * the refusal, whatever the others hold; with every folder clean all candidates go. */
static void test_snapshot_folders_looked_at_once_refuse_in_order(void **state)
{
    (void)state;
    snap e;
    snap_init(&e);
    enum { N = 300 };
    char *paths[N + 1];
    for (int i = 0; i < N; i++) {
        paths[i] = icmt_sprintf("s3://b/t/data/p=%03d/f.parquet", i);
        plant(e.mem, paths[i], e.old);
    }
    paths[N] = NULL;
    write_list(&e, (const char *const *)paths, "");
    static const char *const delta = "s3://b/t/data/p=040/_delta_log/0.json";
    static const char *const hint = "s3://b/t/data/p=150/metadata/version-hint.text";
    char *other = raw_metadata("7b6c0a1e-0000-4000-8000-0000000000ce", "s3://b/t/data/p=299",
                               UNPARTITIONED, 999, "", "", e.old);
    icm_fileio_mem_set_time(e.mem, e.old);
    icmt_ok(icm_fileio_write_replace(e.mem, "s3://b/t/data/p=299/metadata/v1.metadata.json",
                                     other, strlen(other)));
    free(other);
    plant(e.mem, delta, e.old);
    plant(e.mem, hint, e.old);
    icm_orphan_result *r = NULL;
    for (int round = 0; round < 3; round++) {
        assert_int_equal(snap_sweep(&e, false, &r), ICM_EREFUSED);
        assert_null(r);
        const char *msg = icm_error_last()->message;
        if (round == 0) {
            assert_non_null(strstr(msg, "_delta_log"));
            assert_non_null(strstr(icm_error_last()->location, "p=040"));
            icmt_ok(icm_fileio_delete(e.mem, delta));
        } else if (round == 1) {
            assert_non_null(strstr(msg, "version hint"));
            assert_non_null(strstr(icm_error_last()->location, "p=150"));
            icmt_ok(icm_fileio_delete(e.mem, hint));
        } else {
            assert_non_null(strstr(msg, "another table's metadata"));
            icmt_ok(icm_fileio_delete(e.mem, "s3://b/t/data/p=299/metadata/v1.metadata.json"));
        }
        for (int i = 0; i < N; i++)
            assert_true(exists(&e, paths[i]));
    }
    icmt_ok(snap_sweep(&e, false, &r));
    assert_int_equal(r->deleted, N);
    icm_orphan_result_free(r);
    for (int i = 0; i < N; i++) {
        assert_false(exists(&e, paths[i]));
        free(paths[i]);
    }
    snap_free(&e);
}

/* Wrong result: a file a snapshot lists more than once is one candidate; rows that disagree
 * (size, modification time, or one too recent) keep the file, with a warning naming it. */
static void test_wrong_result_snapshot_rows_are_one_candidate_per_file(void **state)
{
    (void)state;
    snap e;
    snap_init(&e);
    const char *dup = "s3://b/t/data/dup.parquet";
    const char *resized = "s3://b/t/data/resized.parquet";
    const char *retimed = "s3://b/t/data/retimed.parquet";
    const char *young = "s3://b/t/data/young-row.parquet";
    const char *files[] = {dup, resized, retimed, young, NULL};
    for (size_t i = 0; files[i] != NULL; i++)
        plant(e.mem, files[i], e.old);
    char *extra = icmt_sprintf("%s\t5\t%lld\n%s\t5\t%lld\n"   /* dup twice more */
                               "%s\t6\t%lld\n"                /* resized: another size */
                               "%s\t5\t%lld\n"                /* retimed: another time */
                               "%s\t5\t\n",                   /* young-row: age unknown */
                               dup, (long long)e.old, dup, (long long)e.old, resized,
                               (long long)e.old, retimed, (long long)e.old - 1000, young);
    write_list(&e, files, extra);
    free(extra);
    icm_orphan_result *r = NULL;
    icmt_ok(snap_sweep(&e, false, &r));
    assert_int_equal(r->orphan_count, 1);
    assert_string_equal(r->orphans[0].path, dup);
    assert_int_equal(r->total, 1);
    assert_int_equal(r->total_bytes, 5);
    assert_int_equal(r->deleted, 1);
    assert_int_equal(r->too_recent, 1);
    assert_true(has_warning(r, resized, "more than once with different sizes"));
    assert_true(has_warning(r, retimed, "more than once with different sizes"));
    assert_true(has_warning(r, young, "too recent"));
    assert_true(has_warning(r, "1 file more than once", "one candidate"));
    icm_orphan_result_free(r);
    assert_false(exists(&e, dup));
    assert_true(exists(&e, resized) && exists(&e, retimed) && exists(&e, young));
    snap_free(&e);
}

/* ---- a sharded sweep of a report (docs/SHARDS.md) ---- */

/* One CSV row: `key` in bucket `b`, its size and time (URL-encoding left out: plain keys). */
static char *csv_row(const char *key, int64_t size, int64_t mtime_ms)
{
    time_t secs = (time_t)(mtime_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    return icmt_sprintf("\"b\",\"%s\",\"%lld\",\"%s.%03dZ\"\n", key, (long long)size, stamp,
                        (int)(mtime_ms % 1000));
}

/* A report (one data file) of every object below s3://b/t in `mem` as storage shows it now,
 * then `extra` rows, made at `created_ms`, in a temporary copy of a destination bucket. */
static report write_report_of(icm_fileio *mem, int64_t created_ms, const char *extra)
{
    report r;
    r.root = icmt_mkdtemp();
    icmt_mkdir_in(r.root, "p");
    icmt_mkdir_in(r.root, "p/b");
    icmt_mkdir_in(r.root, "p/b/cfg");
    icmt_mkdir_in(r.root, "p/b/cfg/data");
    icmt_mkdir_in(r.root, "p/b/cfg/2026-12-01T00-00Z");
    strv all = list_all(mem, "s3://b/t");
    char *text = icmt_sprintf("%s", "");
    for (size_t i = 0; i < all.n; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, mem, all.v[i]));
        char *row = csv_row(all.v[i] + strlen("s3://b/"), info.size_bytes, info.mtime_ms);
        char *grown = icmt_sprintf("%s%s", text, row);
        free(row);
        free(text);
        text = grown;
    }
    strv_free(&all);
    char *grown = icmt_sprintf("%s%s", text, extra);
    free(text);
    size_t len;
    unsigned char *gz = gzip(grown, &len);
    free(grown);
    char md5[33];
    md5_hex(gz, len, md5);
    char *path = icmt_in(r.root, "p/b/cfg/data/f0.csv.gz");
    icmt_write_file(path, gz, len);
    free(path);
    free(gz);
    char *j = icmt_sprintf("{\"sourceBucket\": \"b\", \"destinationBucket\": "
                           "\"arn:aws:s3:::inv\", \"version\": \"2016-11-30\", "
                           "\"creationTimestamp\": \"%lld\", \"fileFormat\": \"CSV\", "
                           "\"fileSchema\": \"Bucket, Key, Size, LastModifiedDate\", "
                           "\"files\": [{\"key\": \"p/b/cfg/data/f0.csv.gz\", \"size\": %zu, "
                           "\"MD5checksum\": \"%s\"}]}",
                           (long long)created_ms, len, md5);
    r.manifest = icmt_in(r.root, "p/b/cfg/2026-12-01T00-00Z/manifest.json");
    icmt_write_file(r.manifest, j, strlen(j));
    free(j);
    return r;
}

static icm_orphan_result *sweep_report(icm_table *t, const report *r, int64_t now,
                                       unsigned index, unsigned count)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = now;
    o.dry_run = true;
    o.inventory = r->manifest;
    o.shard_index = index;
    o.shard_count = count;
    icm_orphan_result *res = NULL;
    icmt_ok(icm_orphan_sweep(&res, t, &o));
    return res;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* N shards of a report plan together exactly the unsharded run's plan, no path twice, their
 * `listed` adding up: strays just before and after every referenced key, a row listed twice
 * (one candidate), a `//` key listed twice with different sizes (kept with a warning, also
 * by the shard that classifies it once R holds its references: a stray). Then every
 * allocation of a shard's sweep fails in turn: ICM_ENOMEM (or a refusal) and no result,
 * until the run gets through with the same plan; under ASan nothing leaks. */
static void test_sharded_report_is_one_run(void **state)
{
    (void)state;
    int64_t now = icm__now_ms(), old = now - 10 * DAY_MS;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_fileio_mem_set_time(mem, old);
    hist *h = hist_new(mem, "s3://b/t", 2, false, now - 20 * DAY_MS);
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "f%d", i);
        hist_append(h, "main", name, NULL);
    }
    strv all = list_all(mem, "s3://b/t");
    for (size_t i = 0; i < all.n; i++) {
        char *after = icmt_sprintf("%s~", all.v[i]);
        plant(mem, after, old);
        free(after);
    }
    strv_free(&all);
    plant(mem, "s3://b/t/data//zz.parquet", old);
    plant(mem, "s3://b/t/!first.parquet", old);
    icm_table *t = hist_open_table(h);
    icm_file_info twice = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&twice, mem, "s3://b/t/!first.parquet"));
    char *dup = csv_row("t/!first.parquet", twice.size_bytes, twice.mtime_ms);
    char *differ = csv_row("t/data//zz.parquet", twice.size_bytes + 1, twice.mtime_ms);
    char *extra = icmt_sprintf("%s%s", dup, differ);
    report r = write_report_of(mem, now - 3600 * 1000, extra);
    free(dup);
    free(differ);
    free(extra);

    icm_orphan_result *whole = sweep_report(t, &r, now, 0, 0);
    assert_true(whole->orphan_count > 6);
    for (size_t i = 0; i < whole->orphan_count; i++)
        assert_null(strstr(whole->orphans[i].path, "zz.parquet"));
    assert_true(has_warning(whole, "//zz.parquet", "different sizes"));
    /* 9 referenced keys (3 data files, manifests, manifest lists): with 9 shards each range
     * ends at one, so `data//zz.parquet` (listed before data/f0.parquet) is keyed
     * `data/zz.parquet` in another range: a stray of shard 0; 12 leaves shards idle. */
    static const unsigned counts[] = {2, 9, 12};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        unsigned count = counts[c];
        char **paths = calloc(whole->orphan_count + 1, sizeof *paths);
        size_t n = 0;
        int64_t listed = 0;
        bool warned = false;
        for (unsigned i = 0; i < count; i++) {
            icm_orphan_result *part = sweep_report(t, &r, now, i, count);
            for (size_t k = 0; k < part->orphan_count; k++) {
                assert_true(n < whole->orphan_count); /* no more than the whole plan */
                paths[n++] = strdup(part->orphans[k].path);
            }
            listed += (int64_t)part->listed;
            warned = warned || has_warning(part, "//zz.parquet", "different sizes");
            icm_orphan_result_free(part);
        }
        assert_int_equal(n, whole->orphan_count);
        qsort(paths, n, sizeof *paths, cmp_str);
        for (size_t k = 0; k < n; k++) {
            assert_string_equal(paths[k], whole->orphans[k].path);
            free(paths[k]);
        }
        free(paths);
        assert_int_equal(listed, (int64_t)whole->listed);
        assert_true(warned);
    }

    icm_orphan_result *want = sweep_report(t, &r, now, 0, 9);
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = now;
    o.dry_run = true;
    o.inventory = r.manifest;
    o.shard_index = 0;
    o.shard_count = 9;
    int rc = -1;
    long tries;
    for (tries = 0; tries < 50000 && rc != 0; tries++) {
        icm_orphan_result *res = NULL;
        icmt_nomem_arm(tries);
        rc = icm_orphan_sweep(&res, t, &o);
        icmt_nomem_disarm();
        if (rc != 0) {
            assert_true(rc == ICM_ENOMEM || rc == ICM_EREFUSED);
            assert_null(res);
            continue;
        }
        assert_int_equal(res->orphan_count, want->orphan_count);
        for (size_t i = 0; i < res->orphan_count; i++)
            assert_string_equal(res->orphans[i].path, want->orphans[i].path);
        icm_orphan_result_free(res);
    }
    assert_int_equal(rc, 0);
    assert_true(tries > 20);
    icm_orphan_result_free(want);
    icm_orphan_result_free(whole);
    report_free(&r);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_parses_the_aws_shape),
        cmocka_unit_test(test_manifest_refuses_what_is_not_one),
        cmocka_unit_test(test_csv_row_fields_and_key_decoding),
        cmocka_unit_test(test_csv_row_skips_versions_that_are_no_current_object),
        cmocka_unit_test(test_csv_row_refuses_malformed_lines),
        cmocka_unit_test(test_reader_streams_a_local_report),
        cmocka_unit_test(test_reader_refuses_a_wrong_md5),
        cmocka_unit_test(test_reader_refuses_a_truncated_gzip),
        cmocka_unit_test(test_reader_refuses_a_wrong_size),
        cmocka_unit_test(test_reader_streams_many_rows_and_gzip_members),
        cmocka_unit_test(test_reader_refuses_parquet_and_orc),
        cmocka_unit_test(test_data_loss_snapshot_hides_a_nested_table_or_format),
        cmocka_unit_test(test_snapshot_folders_looked_at_once_refuse_in_order),
        cmocka_unit_test(test_wrong_result_snapshot_rows_are_one_candidate_per_file),
        cmocka_unit_test(test_sharded_report_is_one_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
