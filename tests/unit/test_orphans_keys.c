/*
 * tests/unit/test_orphans_keys.c: path identity of the orphan sweep (maint/orphans_keys.c):
 * how a listed location is matched against referenced ones
 * (docs/semantics.md#sweep-location-rules):
 * repeated slashes, authorities and schemes, local forms, exact object keys and the equal-map
 * syntax.
 */
#include <stdio.h>
#include <string.h>

#include "maint/orphans_internal.h"
#include "testutil.h"

/* Classify `listed` against a keep set holding `refs` (NULL-terminated). Both ways: the
 * one-step lookup, and (with one referenced origin) the probe the sweep's listing uses, which
 * must answer the same, conflicts with the same origin included. */
static icm__okey_match classify(const char *const *refs, const char *listed,
                                const char *schemes, const char *authorities)
{
    icm__orphan_keys k;
    icmt_ok(icm__okeys_init(&k, schemes, authorities));
    for (size_t i = 0; refs[i] != NULL; i++)
        icmt_ok(icm__okeys_add(&k, refs[i], NULL));
    icm__okey_match m;
    size_t origin = 99, probe_origin = 99;
    icmt_ok(icm__okeys_lookup(&k, listed, &m, &origin));
    icm__okey_probe pr;
    icmt_ok(icm__okeys_probe(&k, listed, &pr));
    assert_int_equal(pr.ready, k.n_origins == 1);
    if (pr.ready) {
        assert_int_equal(icm__okeys_probe_match(&k, &pr, &probe_origin), m);
        assert_int_equal(probe_origin, origin);
    }
    icm__okeys_dispose(&k);
    return m;
}

static icm__okey_match one(const char *ref, const char *listed)
{
    const char *refs[] = {ref, NULL};
    return classify(refs, listed, NULL, NULL);
}

/* Repeated slashes are collapsed on both sides. */
static void test_slashes_collapse(void **state)
{
    (void)state;
    assert_int_equal(one("file:///dir1/dir2/file1", "file:///dir1/////dir2///file1"),
                     ICM__OKEY_EXACT);
    assert_int_equal(one("s3://b/dir1/dir2/file1", "s3://b/dir1//dir2/file1"), ICM__OKEY_EXACT);
}

/* Local forms name one file. */
static void test_local_forms(void **state)
{
    (void)state;
    assert_int_equal(one("/t/data/a.parquet", "file:/t/data/a.parquet"), ICM__OKEY_EXACT);
    assert_int_equal(one("file:///t/data/a.parquet", "/t/data/a.parquet"), ICM__OKEY_EXACT);
    assert_int_equal(one("file://localhost/t/a", "//t/a"), ICM__OKEY_EXACT);
    assert_int_equal(one("/t/data/a.parquet", "/t/data/b.parquet"), ICM__OKEY_NONE);
    /* a sibling directory is a different path */
    assert_int_equal(one("/t/data/a", "/t_2/data/a"), ICM__OKEY_NONE);
}

/* A local file referenced through dot segments is the file the listing names plainly. */
static void test_local_dot_segments(void **state)
{
    (void)state;
    assert_int_equal(one("/t/./data/a.parquet", "/t/data/a.parquet"), ICM__OKEY_EXACT);
    assert_int_equal(one("file:///t/metadata/../data/a", "/t/data/a"), ICM__OKEY_EXACT);
    assert_int_equal(one("/t/data/../data_2/a", "/t/data/a"), ICM__OKEY_NONE);
}

/* Object keys are exact bytes: no decoding, no case folding, no dot segments. */
static void test_exact_object_keys(void **state)
{
    (void)state;
    assert_int_equal(one("s3://b/t/a%20b.parquet", "s3://b/t/a b.parquet"), ICM__OKEY_NONE);
    assert_int_equal(one("s3://b/t/A.parquet", "s3://b/t/a.parquet"), ICM__OKEY_NONE);
    assert_int_equal(one("s3://b/t/x/../a.parquet", "s3://b/t/a.parquet"), ICM__OKEY_NONE);
    assert_int_equal(one("s3://b/t/a%20b.parquet", "s3://b/t/a%20b.parquet"), ICM__OKEY_EXACT);
}

/* An empty referenced authority matches any authority. */
static void test_empty_authority_is_wildcard(void **state)
{
    (void)state;
    assert_int_equal(one("hdfs:///dir1/dir2/file1", "hdfs://servicename/dir1/dir2/file1"),
                     ICM__OKEY_EXACT);
    /* the other way round it is a conflict (kept in IGNORE mode by the caller) */
    assert_int_equal(one("hdfs://servicename/dir1/dir2/file1", "hdfs:///dir1/dir2/file1"),
                     ICM__OKEY_CONFLICT);
}

/* Different schemes conflict unless mapped equal. */
static void test_schemes(void **state)
{
    (void)state;
    const char *refs[] = {"scheme1://bucket1/dir1/dir2/file1", NULL};
    assert_int_equal(classify(refs, "scheme2://bucket1/dir1/dir2/file1", NULL, NULL),
                     ICM__OKEY_CONFLICT);
    assert_int_equal(classify(refs, "scheme2://bucket1/dir1/dir2/file1",
                              "scheme1,scheme2=scheme", NULL),
                     ICM__OKEY_EXACT);
    const char *f1[] = {"file1:///dir1/file", NULL};
    assert_int_equal(classify(f1, "file:///dir1/file", NULL, NULL), ICM__OKEY_CONFLICT);
    assert_int_equal(classify(f1, "file:///dir1/file", "file1=file", NULL), ICM__OKEY_EXACT);
    /* the default map is always there: s3a and s3n are s3 */
    assert_int_equal(one("s3a://b/t/x", "s3://b/t/x"), ICM__OKEY_EXACT);
    assert_int_equal(one("s3://b/t/x", "S3N://b/t/x"), ICM__OKEY_EXACT);
    /* user entries are merged with the default, not replacing it */
    const char *s3a[] = {"s3a://b/t/x", NULL};
    assert_int_equal(classify(s3a, "s3://b/t/x", "gs=gcs", NULL), ICM__OKEY_EXACT);
    /* no map pulls S3's spellings apart: they name one object (a live s3a:// file listed as
     * s3:// would otherwise be a mismatch, deleted under --prefix-mismatch delete) */
    assert_int_equal(classify(s3a, "s3://b/t/x", "s3a=other", NULL), ICM__OKEY_EXACT);
    assert_int_equal(classify(s3a, "s3://b/t/x", "s3a,s3n=s3a", NULL), ICM__OKEY_EXACT);
    assert_int_equal(classify(s3a, "s3://b/t/x", "s3=s3x", NULL), ICM__OKEY_EXACT);
    assert_int_equal(classify(s3a, "s3n://b/t/x", "s3a=s3a;s3n=s3n", NULL), ICM__OKEY_EXACT);
    /* a map sending them elsewhere takes all three along */
    assert_int_equal(classify(s3a, "gs://b/t/x", "s3a=gs", NULL), ICM__OKEY_EXACT);
    const char *gs[] = {"gs://b/t/x", NULL};
    assert_int_equal(classify(gs, "s3n://b/t/x", "gs=s3a", NULL), ICM__OKEY_EXACT);
    assert_int_equal(classify(gs, "s3n://b/t/x", NULL, NULL), ICM__OKEY_CONFLICT);
}

/* S3's spellings mapped to two different names cannot both hold: refused. */
static void test_s3_schemes_split_refused(void **state)
{
    (void)state;
    icm__orphan_keys k;
    assert_int_equal(icm__okeys_init(&k, "s3a=x;s3n=y", NULL), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "one object store"));
    assert_int_equal(icm__okeys_init(&k, "s3=x;s3a=y", NULL), ICM_EINVALID);
    icmt_ok(icm__okeys_init(&k, "s3a=x;s3n=x;s3=x", NULL));
    icm__okeys_dispose(&k);
    icmt_ok(icm__okeys_init(&k, "s3a=x;s3a=y", NULL)); /* one name: the later entry wins */
    icm__okeys_dispose(&k);
}

/* Different authorities conflict unless mapped equal. */
static void test_authorities(void **state)
{
    (void)state;
    const char *refs[] = {"hdfs://servicename1/dir1/dir2/file1", NULL};
    assert_int_equal(classify(refs, "hdfs://servicename2/dir1/dir2/file1", NULL, NULL),
                     ICM__OKEY_CONFLICT);
    assert_int_equal(classify(refs, "hdfs://servicename2/dir1/dir2/file1", NULL,
                              "servicename1,servicename2=servicename"),
                     ICM__OKEY_EXACT);
    /* a path nobody references is an orphan whatever its origin */
    assert_int_equal(classify(refs, "hdfs://servicename2/dir1/dir2/other", NULL, NULL),
                     ICM__OKEY_NONE);
}

/* Several origins: the exact one wins over a conflicting one with the same path. */
static void test_several_origins(void **state)
{
    (void)state;
    const char *refs[] = {"s3://b1/t/x", "s3://b2/t/x", "gs://b3/t/y", NULL};
    assert_int_equal(classify(refs, "s3://b2/t/x", NULL, NULL), ICM__OKEY_EXACT);
    assert_int_equal(classify(refs, "s3://b1/t/x", NULL, NULL), ICM__OKEY_EXACT);
    assert_int_equal(classify(refs, "s3://b4/t/x", NULL, NULL), ICM__OKEY_CONFLICT);
    assert_int_equal(classify(refs, "s3://b3/t/y", NULL, NULL), ICM__OKEY_CONFLICT);
    assert_int_equal(classify(refs, "gs://b3/t/y", NULL, NULL), ICM__OKEY_EXACT);
}

static void test_equal_map_syntax(void **state)
{
    (void)state;
    icm__equal_map m = {0};
    icmt_ok(icm__equal_map_parse(&m, " a , B = c ; d=e;", "x"));
    assert_int_equal(m.n, 3);
    assert_string_equal(m.names[1], "b");
    assert_string_equal(m.canon[1], "c");
    icm__equal_map_dispose(&m);
    assert_int_equal(icm__equal_map_parse(&m, "a", "x"), ICM_EINVALID);
    icm__equal_map_dispose(&m);
    assert_int_equal(icm__equal_map_parse(&m, "=b", "x"), ICM_EINVALID);
    icm__equal_map_dispose(&m);
    assert_int_equal(icm__equal_map_parse(&m, "a,,b=c", "x"), ICM_EINVALID);
    icm__equal_map_dispose(&m);
    assert_int_equal(icm__equal_map_parse(&m, "a=b,c", "x"), ICM_EINVALID);
    icm__equal_map_dispose(&m);
}

static void test_path_under(void **state)
{
    (void)state;
    char *p = icm__okeys_path_of("s3://b/t//data/x");
    assert_string_equal(p, "/t/data/x");
    assert_true(icm__okeys_path_under(p, "/t"));
    assert_true(icm__okeys_path_under(p, "/"));
    assert_false(icm__okeys_path_under(p, "/t/dat"));
    assert_false(icm__okeys_path_under("/t_2/x", "/t"));
    icm_free(p);
    p = icm__okeys_path_of("file:///t/");
    assert_string_equal(p, "/t");
    icm_free(p);
    /* a local root is keyed as the references are: by the one identity, dot segments resolved
     * (icm__location_id_path_write) */
    p = icm__okeys_path_of("file:///w/a/../t/./data");
    assert_string_equal(p, "/w/t/data");
    assert_true(icm__okeys_path_under("/w/t/data/x", p));
    icm_free(p);
    /* an object key keeps its dot segments (`..` is an ordinary key segment there) */
    p = icm__okeys_path_of("s3://b/w/a/../t");
    assert_string_equal(p, "/w/a/../t");
    icm_free(p);
}

static void test_kind_guess(void **state)
{
    (void)state;
    assert_int_equal(icm__orphan_guess_kind("/t/data/a.parquet"), ICM_ORPHAN_DATA);
    assert_int_equal(icm__orphan_guess_kind("/t/data/p=1/000000_0"), ICM_ORPHAN_DATA);
    assert_int_equal(icm__orphan_guess_kind("/t/data/x-deletes.parquet"), ICM_ORPHAN_DELETE);
    assert_int_equal(icm__orphan_guess_kind("/t/data/dv.puffin"), ICM_ORPHAN_DELETE);
    assert_int_equal(icm__orphan_guess_kind("/t/metadata/snap-1-1-u.avro"),
                     ICM_ORPHAN_MANIFEST_LIST);
    assert_int_equal(icm__orphan_guess_kind("/t/metadata/u-m0.avro"), ICM_ORPHAN_MANIFEST);
    assert_int_equal(icm__orphan_guess_kind("/t/metadata/v3.metadata.json"),
                     ICM_ORPHAN_METADATA);
    assert_int_equal(icm__orphan_guess_kind("/t/metadata/00001-x.gz.metadata.json"),
                     ICM_ORPHAN_METADATA);
    assert_int_equal(icm__orphan_guess_kind("/t/metadata/s.stats"), ICM_ORPHAN_OTHER);
    assert_int_equal(icm__orphan_guess_kind("/t/README"), ICM_ORPHAN_OTHER);
    assert_string_equal(icm_orphan_kind_name(ICM_ORPHAN_MANIFEST_LIST), "manifest_list");
}

/* ---- deferred adds (icm__okeys_add_later) ---- */

typedef struct news {
    unsigned tags[4096];
    size_t n;
} news;

static void record_new(unsigned tag, icm__pathset_hash hash, void *payload)
{
    (void)hash;
    news *w = payload;
    assert_true(w->n < 4096);
    w->tags[w->n++] = tag;
}

static void add_later(icm__orphan_keys *k, const char *loc, unsigned tag)
{
    icm__pathset_hash h;
    icmt_ok(icm__okeys_hash(k, loc, &h));
    icmt_ok(icm__okeys_add_later(k, h, tag));
}

/* Deferred adds give the same set and report each new key once, with the tag of its first
 * add, in add order: duplicates close together (both still queued) and far apart (the first
 * long inserted), a spelling of the same file (`file:/t/x` and `/t/x`), and lookups and
 * immediate adds that come while keys are queued (they insert the queue first). */
static void test_deferred_adds(void **state)
{
    (void)state;
    icm__orphan_keys k;
    icmt_ok(icm__okeys_init(&k, NULL, NULL));
    news w = {{0}, 0};
    icm__okeys_on_new(&k, record_new, &w);
    char loc[64];
    for (unsigned i = 0; i < 1000; i++) {
        snprintf(loc, sizeof loc, "/t/data/f%u.parquet", i);
        add_later(&k, loc, i);
        if (i % 7 == 0)
            add_later(&k, loc, 100000 + i); /* again at once: still queued */
        if (i >= 40 && i % 5 == 0) {
            snprintf(loc, sizeof loc, "file:/t/data/f%u.parquet", i - 40); /* long inserted */
            add_later(&k, loc, 200000 + i);
        }
    }
    assert_true(w.n < 1000); /* the last ones are still queued */
    /* a lookup inserts the queue first */
    icm__okey_match m;
    icmt_ok(icm__okeys_lookup(&k, "/t/data/f999.parquet", &m, NULL));
    assert_int_equal(m, ICM__OKEY_EXACT);
    assert_int_equal(w.n, 1000);
    for (unsigned i = 0; i < 1000; i++)
        assert_int_equal(w.tags[i], i);
    assert_int_equal(icm__pathset_count(k.set), 1000);
    /* an immediate add of a queued key: the queued one is the new one */
    add_later(&k, "/t/data/late.parquet", 7777);
    bool added = true;
    icmt_ok(icm__okeys_add(&k, "/t/data/late.parquet", &added));
    assert_false(added);
    assert_int_equal(w.n, 1001);
    assert_int_equal(w.tags[1000], 7777);
    icmt_ok(icm__okeys_flush(&k));
    assert_int_equal(w.n, 1001);
    icmt_ok(icm__okeys_lookup(&k, "/t/data/f1000.parquet", &m, NULL));
    assert_int_equal(m, ICM__OKEY_NONE);
    icm__okeys_dispose(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slashes_collapse),
        cmocka_unit_test(test_local_forms),
        cmocka_unit_test(test_exact_object_keys),
        cmocka_unit_test(test_local_dot_segments),
        cmocka_unit_test(test_empty_authority_is_wildcard),
        cmocka_unit_test(test_schemes),
        cmocka_unit_test(test_s3_schemes_split_refused),
        cmocka_unit_test(test_authorities),
        cmocka_unit_test(test_several_origins),
        cmocka_unit_test(test_equal_map_syntax),
        cmocka_unit_test(test_path_under),
        cmocka_unit_test(test_kind_guess),
        cmocka_unit_test(test_deferred_adds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
