/*
 * test_expire_decide.c: the expiry decision (which snapshots go), on metadata documents built
 * here (docs/semantics.md#expiry-snapshot-retention and #expiry-ref-retention): age and
 * retain_last, explicit ids, table properties, ref ages, tags and branches.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/expire.h"
#include "icemaint/metadata.h"
#include "testutil.h"

#define DAY INT64_C(86400000)
#define NOW INT64_C(1800000000000)

/* A small builder for v2 metadata documents. */
typedef struct tb {
    json_t *doc;
    json_t *snaps;
    json_t *refs;
    json_t *props;
    int64_t seq;
} tb;

static tb tb_new(void)
{
    tb t;
    t.doc = json_pack("{s:i, s:s, s:s, s:I, s:I, s:i, s:[{s:i, s:s, s:[]}], s:i, "
                      "s:[{s:i, s:[]}], s:i, s:[{s:i, s:[]}], s:i, s:i}",
                      "format-version", 2, "table-uuid", "9c12d441-03fe-4693-9a96-a0705ddf69c1",
                      "location", "/tmp/t", "last-sequence-number", (json_int_t)0,
                      "last-updated-ms", (json_int_t)NOW, "last-column-id", 0, "schemas",
                      "schema-id", 0, "type", "struct", "fields", "current-schema-id", 0,
                      "partition-specs", "spec-id", 0, "fields", "default-spec-id", 0,
                      "sort-orders", "order-id", 0, "fields", "default-sort-order-id", 0,
                      "last-partition-id", 999);
    assert_non_null(t.doc);
    t.snaps = json_array();
    t.refs = json_object();
    t.props = json_object();
    t.seq = 0;
    return t;
}

static void tb_snap(tb *t, int64_t id, int64_t parent, int64_t ts)
{
    json_t *s = json_pack("{s:I, s:I, s:I, s:s, s:{s:s}}", "snapshot-id", (json_int_t)id,
                          "sequence-number", (json_int_t)++t->seq, "timestamp-ms", (json_int_t)ts,
                          "manifest-list", "/tmp/t/metadata/snap.avro", "summary", "operation",
                          "append");
    if (parent != 0)
        json_object_set_new(s, "parent-snapshot-id", json_integer(parent));
    json_array_append_new(t->snaps, s);
}

static void tb_ref(tb *t, const char *name, const char *type, int64_t id, int64_t max_ref_age,
                   int64_t max_snap_age, int min_keep)
{
    json_t *r = json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)id, "type", type);
    if (max_ref_age)
        json_object_set_new(r, "max-ref-age-ms", json_integer(max_ref_age));
    if (max_snap_age)
        json_object_set_new(r, "max-snapshot-age-ms", json_integer(max_snap_age));
    if (min_keep)
        json_object_set_new(r, "min-snapshots-to-keep", json_integer(min_keep));
    json_object_set_new(t->refs, name, r);
}

static icm_table_metadata *tb_build(tb *t, int64_t current)
{
    json_object_set_new(t->doc, "snapshots", t->snaps);
    json_object_set_new(t->doc, "refs", t->refs);
    json_object_set_new(t->doc, "properties", t->props);
    json_object_set_new(t->doc, "last-sequence-number", json_integer(t->seq));
    json_object_set_new(t->doc, "current-snapshot-id", json_integer(current ? current : -1));
    char *text = json_dumps(t->doc, 0);
    json_decref(t->doc);
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_parse(&md, text, strlen(text), "test.metadata.json"));
    free(text);
    return md;
}

typedef struct expect {
    size_t n;
    int64_t ids[16];
} expect;

static void decide_ok(const icm_table_metadata *md, icm_expire_decide_options *o,
                      const int64_t *expired, size_t n_expired)
{
    icm_expire_decision *d = NULL;
    icmt_ok(icm_expire_decide(&d, md, o));
    if (d->expired_count != n_expired) {
        print_error("expired %zu snapshots, expected %zu\n", d->expired_count, n_expired);
        for (size_t i = 0; i < d->expired_count; i++)
            print_error("  expired %lld\n", (long long)d->expired_ids[i]);
        fail();
    }
    for (size_t i = 0; i < n_expired; i++)
        assert_int_equal(d->expired_ids[i], expired[i]);
    assert_int_equal(d->expired_count + d->retained_count, icm_table_metadata_snapshot_count(md));
    icm_expire_decision_free(d);
}

static icm_expire_decide_options opts_at(int64_t older_than, int32_t retain_last)
{
    icm_expire_decide_options o = ICM_EXPIRE_DECIDE_OPTIONS_INIT;
    o.now_ms = NOW;
    if (older_than != 0) {
        o.has_older_than = true;
        o.older_than_ms = older_than;
    }
    o.retain_last = retain_last;
    return o;
}

/* Three appends on main at NOW-3d, NOW-2d, NOW-1d. */
static icm_table_metadata *three_appends(void)
{
    tb t = tb_new();
    tb_snap(&t, 1, 0, NOW - 3 * DAY);
    tb_snap(&t, 2, 1, NOW - 2 * DAY);
    tb_snap(&t, 3, 2, NOW - 1 * DAY);
    tb_ref(&t, "main", "branch", 3, 0, 0, 0);
    return tb_build(&t, 3);
}

/* Expire after S2 removes S1. */
static void test_expire_older_than(void **state)
{
    (void)state;
    icm_table_metadata *md = three_appends();
    icm_expire_decide_options o = opts_at(NOW - 2 * DAY, 1);
    const int64_t want[] = {1};
    decide_ok(md, &o, want, 1);
    icm_table_metadata_free(md);
}

/* retain_last keeps the newest ancestors. */
static void test_retain_last(void **state)
{
    (void)state;
    icm_table_metadata *md = three_appends();
    icm_expire_decide_options o = opts_at(NOW, 2);
    const int64_t want[] = {1};
    decide_ok(md, &o, want, 1);
    o = opts_at(NOW, 3);
    decide_ok(md, &o, NULL, 0);
    o = opts_at(NOW, 1);
    const int64_t want2[] = {1, 2};
    decide_ok(md, &o, want2, 2);
    icm_table_metadata_free(md);
}

/* Explicit ids win over retain_last; and a snapshot at exactly the cutoff stays. */
static void test_explicit_and_boundary(void **state)
{
    (void)state;
    icm_table_metadata *md = three_appends();
    int64_t ids[] = {1};
    icm_expire_decide_options o = opts_at(NOW - 10 * DAY, 3);
    o.snapshot_ids = ids;
    o.snapshot_id_count = 1;
    const int64_t want[] = {1};
    decide_ok(md, &o, want, 1);
    o = opts_at(NOW - 2 * DAY, 1); /* S2 at exactly the cutoff */
    decide_ok(md, &o, want, 1);
    icm_table_metadata_free(md);
}

/* Refusals: retain_last below 1, explicit ids that are current or missing, gc.enabled not
 * "true". */
static void test_refusals(void **state)
{
    (void)state;
    icm_table_metadata *md = three_appends();
    icm_expire_decision *d = NULL;
    icm_expire_decide_options o = opts_at(NOW, -1);
    assert_int_equal(icm_expire_decide(&d, md, &o), ICM_EINVALID);
    int64_t cur[] = {3};
    o = opts_at(NOW, 1);
    o.snapshot_ids = cur;
    o.snapshot_id_count = 1;
    assert_int_equal(icm_expire_decide(&d, md, &o), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "Still referenced by refs: [main]"));
    int64_t missing[] = {42};
    o.snapshot_ids = missing;
    assert_int_equal(icm_expire_decide(&d, md, &o), ICM_ENOTFOUND);
    assert_null(d);
    int64_t *ids = NULL;
    size_t n = 0;
    assert_int_equal(icm_expire_choose(&ids, &n, md, NOW, 0), ICM_EINVALID);
    icmt_ok(icm_table_metadata_set_property(md, "gc.enabled", "false"));
    o = opts_at(NOW, 1);
    assert_int_equal(icm_expire_decide(&d, md, &o), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "GC is disabled"));
    /* Java's Boolean.parseBoolean: any value but a case-insensitive "true" disables GC */
    static const char *const disabled[] = {"false ", " false", "no", "0", "off", "", "yes"};
    for (size_t i = 0; i < sizeof disabled / sizeof *disabled; i++) {
        icmt_ok(icm_table_metadata_set_property(md, "gc.enabled", disabled[i]));
        assert_int_equal(icm_expire_decide(&d, md, &o), ICM_EREFUSED);
        assert_non_null(strstr(icm_error_last()->message, "GC is disabled"));
        assert_null(d);
    }
    icmt_ok(icm_table_metadata_set_property(md, "gc.enabled", "TRUE"));
    icmt_ok(icm_expire_decide(&d, md, &o));
    icm_expire_decision_free(d);
    icm_table_metadata_free(md);
}

/* Table properties supply the defaults. */
static void test_table_property_defaults(void **state)
{
    (void)state;
    icm_table_metadata *md = three_appends();
    icmt_ok(icm_table_metadata_set_property(md, "history.expire.min-snapshots-to-keep", "3"));
    icm_expire_decide_options o = opts_at(NOW, 0);
    decide_ok(md, &o, NULL, 0);
    icmt_ok(icm_table_metadata_set_property(md, "history.expire.min-snapshots-to-keep", NULL));
    icmt_ok(icm_table_metadata_set_property(md, "history.expire.max-snapshot-age-ms", "1"));
    o = opts_at(0, 0);
    const int64_t want[] = {1, 2};
    decide_ok(md, &o, want, 2);
    /* default cutoff is 5 days: nothing here is that old */
    icmt_ok(icm_table_metadata_set_property(md, "history.expire.max-snapshot-age-ms", NULL));
    decide_ok(md, &o, NULL, 0);
    icmt_ok(icm_table_metadata_set_property(md, "history.expire.max-snapshot-age-ms", "x1"));
    icm_expire_decision *d = NULL;
    assert_int_equal(icm_expire_decide(&d, md, &o), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "history.expire.max-snapshot-age-ms"));
    icm_table_metadata_free(md);
}

/* Refs age out by max-ref-age-ms; main never does. */
static void test_ref_aging(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 1, 0, NOW - 3 * DAY);
    tb_snap(&t, 2, 1, NOW - 2 * DAY);
    tb_ref(&t, "main", "branch", 2, 1, 0, 0);
    tb_ref(&t, "old-tag", "tag", 1, DAY, 0, 0);
    tb_ref(&t, "b", "branch", 2, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 2);
    icm_expire_decide_options o = opts_at(NOW, 1);
    icm_expire_decision *d = NULL;
    icmt_ok(icm_expire_decide(&d, md, &o));
    assert_int_equal(d->expired_count, 1);
    assert_int_equal(d->expired_ids[0], 1);
    assert_int_equal(d->removed_ref_count, 1);
    assert_string_equal(d->removed_refs[0], "old-tag");
    icm_expire_decision_free(d);
    icm_table_metadata_free(md);
}

/* An explicit id that a retained ref names is refused. */
static void test_explicit_referenced(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 1, 0, NOW - 3 * DAY);
    tb_snap(&t, 2, 1, NOW - 2 * DAY);
    tb_ref(&t, "main", "branch", 2, 0, 0, 0);
    tb_ref(&t, "tag", "tag", 1, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 2);
    int64_t ids[] = {1};
    icm_expire_decide_options o = opts_at(NOW, 1);
    o.snapshot_ids = ids;
    o.snapshot_id_count = 1;
    icm_expire_decision *d = NULL;
    assert_int_equal(icm_expire_decide(&d, md, &o), ICM_EREFUSED);
    assert_string_equal(icm_error_last()->message, "Cannot expire 1. Still referenced by refs: [tag]");
    icm_table_metadata_free(md);
}

/* Unreferenced (staged) snapshots newer than the cutoff survive. */
static void test_unreferenced_newer_survives(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 1, 0, NOW - 3 * DAY);
    tb_snap(&t, 2, 1, NOW - 1 * DAY); /* staged: nothing points at it */
    tb_snap(&t, 3, 1, NOW - 1 * DAY + 5);
    tb_ref(&t, "main", "branch", 3, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 3);
    icm_expire_decide_options o = opts_at(NOW - 2 * DAY, 1);
    const int64_t want[] = {1};
    decide_ok(md, &o, want, 1);
    icm_table_metadata_free(md);
}

/* A tag protects only its own snapshot; a branch protects ancestors by its age. */
static void test_tag_vs_branch_ancestry(void **state)
{
    (void)state;
    for (int branch = 0; branch <= 1; branch++) {
        tb t = tb_new();
        tb_snap(&t, 1, 0, NOW - 3 * DAY);
        tb_snap(&t, 2, 1, NOW - 2 * DAY);
        tb_snap(&t, 3, 2, NOW - 1 * DAY);
        tb_ref(&t, "main", "branch", 1, 0, 0, 0);
        if (branch)
            tb_ref(&t, "b3", "branch", 3, 0, INT64_MAX, 0);
        else
            tb_ref(&t, "t3", "tag", 3, 0, 0, 0);
        icm_table_metadata *md = tb_build(&t, 1);
        icm_expire_decide_options o = opts_at(NOW - DAY - DAY / 2, 1);
        const int64_t want[] = {2};
        decide_ok(md, &o, want, branch ? 0 : 1);
        icm_table_metadata_free(md);
    }
}

/* Per-branch min-snapshots-to-keep and max-snapshot-age-ms override options. */
static void test_per_branch_overrides(void **state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        tb t = tb_new();
        tb_snap(&t, 1, 0, NOW - 3 * DAY);
        tb_snap(&t, 2, 1, NOW - 2 * DAY);
        tb_snap(&t, 3, 2, NOW - 1 * DAY); /* staged on top of main */
        tb_ref(&t, "main", "branch", 2, 0, 1, 1);
        tb_ref(&t, "b", "branch", 3, 0, 1, variant == 0 ? 3 : 1);
        icm_table_metadata *md = tb_build(&t, 2);
        icm_expire_decide_options o = opts_at(0, 0);
        const int64_t want[] = {1};
        decide_ok(md, &o, want, variant == 0 ? 0 : 1);
        icm_table_metadata_free(md);
    }
}

/* Rule 3 (docs/semantics.md#expiry-snapshot-retention): an age-only expiry never leaves fewer
 * than retain_last snapshots, even when the current branch's ancestry is shorter (after a
 * rollback). Expired ids come oldest first. */
static void test_keep_last_after_rollback(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 10, 0, NOW - 5 * DAY);
    tb_snap(&t, 20, 10, NOW - 4 * DAY);
    tb_snap(&t, 30, 20, NOW - 3 * DAY);
    tb_snap(&t, 40, 30, NOW - 2 * DAY);
    tb_ref(&t, "main", "branch", 10, 0, 0, 0); /* rolled back to the first snapshot */
    icm_table_metadata *md = tb_build(&t, 10);
    icm_expire_decide_options o = opts_at(NOW, 3);
    const int64_t want[] = {20};
    decide_ok(md, &o, want, 1);
    int64_t *ids = NULL;
    size_t n = 0;
    icmt_ok(icm_expire_choose(&ids, &n, md, NOW, 1));
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 20);
    assert_int_equal(ids[1], 30);
    assert_int_equal(ids[2], 40);
    icm_free(ids);
    icm_table_metadata_free(md);
}

/* A table with no snapshots decides nothing. */
static void test_empty_table(void **state)
{
    (void)state;
    tb t = tb_new();
    icm_table_metadata *md = tb_build(&t, 0);
    icm_expire_decide_options o = opts_at(NOW, 1);
    decide_ok(md, &o, NULL, 0);
    icm_table_metadata_free(md);
}


/* ---- retention properties at their boundaries ---- */

/* Decide with `key` = `value` on `md`: the code, and on success the decision (else NULL). */
static int decide_with(icm_table_metadata *md, const char *key, const char *value,
                       const icm_expire_decide_options *o, icm_expire_decision **d)
{
    icmt_ok(icm_table_metadata_set_property(md, key, value));
    *d = NULL;
    int rc = icm_expire_decide(d, md, o);
    icmt_ok(icm_table_metadata_set_property(md, key, NULL));
    return rc;
}

/* Every value Java's Long.parseLong / Integer.parseInt refuses is refused, naming the property
 * and the value; so is a negative one (Java would take it: expire.h). */
static void refused_values(icm_table_metadata *md, const char *key, const char *const *values)
{
    icm_expire_decide_options o = opts_at(0, 0);
    for (size_t i = 0; values[i] != NULL; i++) {
        icm_expire_decision *d = NULL;
        if (decide_with(md, key, values[i], &o, &d) != ICM_EINVALID)
            fail_msg("%s = '%s' was not refused", key, values[i]);
        assert_null(d);
        const icm_error *e = icm_error_last();
        assert_string_equal(e->location, "test.metadata.json");
        char *want = icmt_sprintf("table property %s has an invalid value '%s'", key, values[i]);
        if (strstr(e->message, want) == NULL)
            fail_msg("%s = '%s': message \"%s\"", key, values[i], e->message);
        free(want);
    }
}

static const char *const MALFORMED_LONG[] = {
    "", " ", "x1", "1x", " 1", "1 ", "+", "-", "1.0", "1e3", "0x10", "--1", "-1",
    "-9223372036854775808", "9223372036854775808", "99999999999999999999", NULL};

/* history.expire.max-snapshot-age-ms (Java: Long.parseLong; cutoff = now - value). */
static void max_snapshot_age_property_at_its_boundaries(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 1, 0, NOW - 3 * DAY);
    tb_snap(&t, 2, 1, NOW - 2);
    tb_snap(&t, 3, 2, NOW - 1); /* exactly at the cutoff of an age of 1 ms */
    tb_ref(&t, "main", "branch", 3, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 3);
    const char *key = "history.expire.max-snapshot-age-ms";
    icm_expire_decide_options o = opts_at(0, 0);
    icm_expire_decision *d = NULL;
    /* 0: the cutoff is now; only min-snapshots-to-keep (1) keeps the head */
    icmt_ok(decide_with(md, key, "0", &o, &d));
    assert_int_equal(d->older_than_ms, NOW);
    assert_int_equal(d->expired_count, 2);
    icm_expire_decision_free(d);
    /* 1: the head at now - 1 is at the cutoff (kept: >=), its parent at now - 2 is not */
    icmt_ok(decide_with(md, key, "1", &o, &d));
    assert_int_equal(d->older_than_ms, NOW - 1);
    assert_int_equal(d->expired_count, 2);
    icm_expire_decision_free(d);
    icmt_ok(decide_with(md, key, "2", &o, &d));
    assert_int_equal(d->expired_count, 1);
    assert_int_equal(d->expired_ids[0], 1);
    icm_expire_decision_free(d);
    /* Java's sign and leading zeros */
    icmt_ok(decide_with(md, key, "+0002", &o, &d));
    assert_int_equal(d->older_than_ms, NOW - 2);
    icm_expire_decision_free(d);
    icmt_ok(decide_with(md, key, "-0", &o, &d));
    assert_int_equal(d->older_than_ms, NOW);
    icm_expire_decision_free(d);
    /* the largest: now - INT64_MAX, no overflow, nothing is that old */
    icmt_ok(decide_with(md, key, "9223372036854775807", &o, &d));
    assert_int_equal(d->older_than_ms, NOW - INT64_MAX);
    assert_int_equal(d->expired_count, 0);
    icm_expire_decision_free(d);
    refused_values(md, key, MALFORMED_LONG);
    icm_table_metadata_free(md);
}

/* history.expire.min-snapshots-to-keep (Java: Integer.parseInt, so 0 is valid and a value past
 * INT32_MAX is refused). */
static void min_snapshots_property_at_its_boundaries(void **state)
{
    (void)state;
    /* main's head is older than the cutoff and its parent newer (clock skew): with a minimum of
     * 0 Java's walk stops at the head, so the parent goes; with 1 the head counts, the parent
     * is kept by age. */
    tb t = tb_new();
    tb_snap(&t, 1, 0, NOW - 3 * DAY);
    tb_snap(&t, 2, 1, NOW - 1 * DAY);
    tb_snap(&t, 3, 2, NOW - 2 * DAY);
    tb_ref(&t, "main", "branch", 3, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 3);
    const char *key = "history.expire.min-snapshots-to-keep";
    icm_expire_decide_options o = opts_at(NOW - DAY - DAY / 2, 0);
    icm_expire_decision *d = NULL;
    icmt_ok(decide_with(md, key, "0", &o, &d));
    assert_int_equal(d->retain_last, 0);
    assert_int_equal(d->expired_count, 2);
    assert_int_equal(d->expired_ids[0], 1);
    assert_int_equal(d->expired_ids[1], 2);
    icm_expire_decision_free(d);
    icmt_ok(decide_with(md, key, "1", &o, &d));
    assert_int_equal(d->retain_last, 1);
    assert_int_equal(d->expired_count, 1);
    assert_int_equal(d->expired_ids[0], 1);
    icm_expire_decision_free(d);
    icmt_ok(decide_with(md, key, "2147483647", &o, &d));
    assert_int_equal(d->retain_last, INT32_MAX);
    assert_int_equal(d->expired_count, 0);
    icm_expire_decision_free(d);
    /* the retain_last option overrides the property, as Java's retainLast does */
    icm_expire_decide_options o2 = opts_at(NOW - DAY - DAY / 2, 1);
    icmt_ok(decide_with(md, key, "0", &o2, &d));
    assert_int_equal(d->retain_last, 1);
    assert_int_equal(d->expired_count, 1);
    icm_expire_decision_free(d);
    static const char *const malformed_int[] = {
        "", "x", " 0", "0 ", "1.5", "-1", "-2147483648", "2147483648", "4294967297",
        "9223372036854775807", "9223372036854775808", NULL};
    refused_values(md, key, malformed_int);
    icm_table_metadata_free(md);
}

/* history.expire.max-ref-age-ms (Java: Long.parseLong; a ref goes when now - its snapshot's
 * timestamp > the value; main never goes). */
static void max_ref_age_property_at_its_boundaries(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 1, 0, NOW - 3 * DAY);
    tb_snap(&t, 2, 1, NOW - 1);
    tb_snap(&t, 3, 2, NOW);
    tb_ref(&t, "main", "branch", 1, 0, 0, 0);
    tb_ref(&t, "young", "tag", 2, 0, 0, 0);
    tb_ref(&t, "now", "branch", 3, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 1);
    const char *key = "history.expire.max-ref-age-ms";
    icm_expire_decide_options o = opts_at(NOW - 10 * DAY, 1);
    icm_expire_decision *d = NULL;
    /* 0: every ref but main and the one at exactly now goes */
    icmt_ok(decide_with(md, key, "0", &o, &d));
    assert_int_equal(d->removed_ref_count, 1);
    assert_string_equal(d->removed_refs[0], "young");
    icm_expire_decision_free(d);
    /* 1: the tag at now - 1 is exactly 1 ms old: kept (age <= max) */
    icmt_ok(decide_with(md, key, "1", &o, &d));
    assert_int_equal(d->removed_ref_count, 0);
    icm_expire_decision_free(d);
    icmt_ok(decide_with(md, key, "9223372036854775807", &o, &d));
    assert_int_equal(d->removed_ref_count, 0);
    icm_expire_decision_free(d);
    refused_values(md, key, MALFORMED_LONG);
    icm_table_metadata_free(md);
}

/* A ref whose age does not fit int64 is retained, as Java (whose subtraction wraps) retains
 * it; an overflowing age once saturated and dropped the ref, and its snapshot with it. */
static void ref_age_overflow_keeps_the_ref(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 1, 0, INT64_MIN + 5);
    tb_snap(&t, 2, 1, NOW - DAY);
    tb_ref(&t, "main", "branch", 2, 0, 0, 0);
    tb_ref(&t, "ancient", "tag", 1, DAY, 0, 0);
    icm_table_metadata *md = tb_build(&t, 2);
    icm_expire_decide_options o = opts_at(NOW, 1);
    decide_ok(md, &o, NULL, 0);
    icm_table_metadata_free(md);
}

/* The per-ref fields at 1 and at their largest values; 0, negative and beyond the type are
 * refused when the metadata is read, naming the ref and the field (Java's SnapshotRef builder
 * and JsonUtil.getIntOrNull / getLongOrNull throw). */
static void per_ref_retention_at_its_boundaries(void **state)
{
    (void)state;
    /* main 1 <- 2 <- 3 (now - 3d .. now - 1d), with the cutoff after all of them */
    for (int variant = 0; variant < 4; variant++) {
        tb t = tb_new();
        tb_snap(&t, 1, 0, NOW - 3 * DAY);
        tb_snap(&t, 2, 1, NOW - 2 * DAY);
        tb_snap(&t, 3, 2, NOW - 1 * DAY);
        tb_snap(&t, 4, 0, NOW - 4 * DAY);
        if (variant == 0)
            tb_ref(&t, "main", "branch", 3, 0, INT64_MAX, 0); /* keeps every ancestor */
        else if (variant == 1)
            tb_ref(&t, "main", "branch", 3, 0, 0, INT32_MAX); /* keeps every ancestor */
        else if (variant == 2)
            tb_ref(&t, "main", "branch", 3, 0, 1, 1); /* keeps the head only */
        else
            tb_ref(&t, "main", "branch", 3, 0, 0, 0);
        tb_ref(&t, "t", "tag", 4, variant == 3 ? 1 : INT64_MAX, 0, 0);
        icm_table_metadata *md = tb_build(&t, 3);
        icm_expire_decide_options o = opts_at(NOW, 1);
        icm_expire_decision *d = NULL;
        icmt_ok(icm_expire_decide(&d, md, &o));
        size_t want_expired[] = {0, 0, 2, 3};
        assert_int_equal(d->expired_count, want_expired[variant]);
        assert_int_equal(d->removed_ref_count, variant == 3 ? 1 : 0);
        icm_expire_decision_free(d);
        icm_table_metadata_free(md);
    }
    static const struct {
        const char *ref;
        const char *want;
    } bad[] = {
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"max-ref-age-ms\":0}", "max-ref-age-ms"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"max-snapshot-age-ms\":0}",
         "max-snapshot-age-ms"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"min-snapshots-to-keep\":0}",
         "min-snapshots-to-keep"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"max-ref-age-ms\":-1}", "max-ref-age-ms"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"min-snapshots-to-keep\":2147483648}",
         "min-snapshots-to-keep"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"max-ref-age-ms\":9223372036854775808}",
         "max-ref-age-ms"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"max-snapshot-age-ms\":9223372036854775808}",
         "max-snapshot-age-ms"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"max-snapshot-age-ms\":\"5\"}",
         "max-snapshot-age-ms"},
        {"{\"snapshot-id\":1,\"type\":\"branch\",\"min-snapshots-to-keep\":1.0}",
         "min-snapshots-to-keep"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb t = tb_new();
        tb_snap(&t, 1, 0, NOW - DAY);
        /* the ref's text is spliced in as written (jansson cannot hold every integer here) */
        json_object_set_new(t.doc, "snapshots", t.snaps);
        json_object_set_new(t.doc, "current-snapshot-id", json_integer(1));
        json_object_set_new(t.doc, "last-sequence-number", json_integer(t.seq));
        char *base = json_dumps(t.doc, 0);
        char *text = icmt_sprintf("%.*s,\"refs\":{\"main\":%s}}", (int)(strlen(base) - 1), base,
                                  bad[i].ref);
        free(base);
        json_decref(t.doc);
        json_decref(t.refs);
        json_decref(t.props);
        icm_table_metadata *md = NULL;
        assert_int_equal(icm_table_metadata_parse(&md, text, strlen(text), "test.metadata.json"),
                         ICM_EINVALID);
        const icm_error *e = icm_error_last();
        assert_string_equal(e->location, "test.metadata.json");
        if (strstr(e->message, bad[i].want) == NULL)
            fail_msg("%s: message \"%s\" does not name %s", bad[i].ref, e->message, bad[i].want);
        free(text);
    }
}

/* ---- why each retained snapshot is kept ---- */

typedef struct want_reason {
    icm_expire_keep_reason kind;
    const char *ref;
} want_reason;

/* kept[k] is snapshot `id` with exactly the reasons `want` (n of them), in order. */
static void assert_kept(const icm_expire_decision *d, int64_t id, const want_reason *want,
                        size_t n)
{
    for (size_t k = 0; k < d->retained_count; k++) {
        if (d->kept[k].snapshot_id != id)
            continue;
        assert_int_equal(d->retained_ids[k], id);
        const icm_expire_kept *kept = &d->kept[k];
        bool same = kept->reason_count == n;
        for (size_t i = 0; same && i < n; i++)
            same = kept->reasons[i].kind == want[i].kind &&
                   (want[i].ref == NULL ? kept->reasons[i].ref == NULL
                                        : kept->reasons[i].ref != NULL &&
                                              strcmp(kept->reasons[i].ref, want[i].ref) == 0);
        if (!same) {
            print_error("snapshot %lld kept for:\n", (long long)id);
            for (size_t i = 0; i < kept->reason_count; i++)
                print_error("  %s %s\n", icm_expire_keep_reason_name(kept->reasons[i].kind),
                            kept->reasons[i].ref ? kept->reasons[i].ref : "-");
            fail();
        }
        return;
    }
    fail_msg("snapshot %lld is not retained", (long long)id);
}

/*
 * Every kind of reason on one table (cutoff now - 5d, retain_last 2):
 *   main:  10 <- 1 <- 2 <- 3 <- 4 (current)      tag v1 -> 1
 *   audit: 2 <- 6 (own min-snapshots-to-keep 2)   dev: 3 <- 7 (own max-snapshot-age-ms 9d)
 *   5 (child of 3, rolled back) and 8 (child of 1): in no branch.
 */
static void expiry_reasons_name_why_each_snapshot_is_kept(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 10, 0, NOW - 30 * DAY);
    tb_snap(&t, 1, 10, NOW - 10 * DAY);
    tb_snap(&t, 8, 1, NOW - 20 * DAY);
    tb_snap(&t, 2, 1, NOW - 9 * DAY);
    tb_snap(&t, 3, 2, NOW - 8 * DAY);
    tb_snap(&t, 6, 2, NOW - 7 * DAY);
    tb_snap(&t, 7, 3, NOW - 6 * DAY);
    tb_snap(&t, 5, 3, NOW - 2 * DAY);
    tb_snap(&t, 4, 3, NOW - 1 * DAY);
    tb_ref(&t, "main", "branch", 4, 0, 0, 0);
    tb_ref(&t, "audit", "branch", 6, 0, 0, 2);
    tb_ref(&t, "dev", "branch", 7, 0, 9 * DAY, 0);
    tb_ref(&t, "v1", "tag", 1, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 4);
    icm_expire_decide_options o = opts_at(NOW - 5 * DAY, 2);
    icm_expire_decision *d = NULL;
    icmt_ok(icm_expire_decide(&d, md, &o));
    assert_int_equal(d->expired_count, 2);
    assert_int_equal(d->expired_ids[0], 10);
    assert_int_equal(d->expired_ids[1], 8);
    assert_int_equal(d->retained_count, 7);
    assert_int_equal(d->retain_last, 2);
    assert_int_equal(d->older_than_ms, NOW - 5 * DAY);
    const want_reason r4[] = {{ICM_EXPIRE_KEEP_CURRENT, NULL},
                              {ICM_EXPIRE_KEEP_REF, "main"},
                              {ICM_EXPIRE_KEEP_RETAIN_LAST, "main"},
                              {ICM_EXPIRE_KEEP_NEWER_THAN_CUTOFF, "main"}};
    assert_kept(d, 4, r4, 4);
    const want_reason r3[] = {{ICM_EXPIRE_KEEP_RETAIN_LAST, "main"},
                              {ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE, "dev"}};
    assert_kept(d, 3, r3, 2);
    /* at exactly dev's cutoff (now - 9d): kept (>=) */
    const want_reason r2[] = {{ICM_EXPIRE_KEEP_MIN_SNAPSHOTS_TO_KEEP, "audit"},
                              {ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE, "dev"}};
    assert_kept(d, 2, r2, 2);
    const want_reason r6[] = {{ICM_EXPIRE_KEEP_REF, "audit"},
                              {ICM_EXPIRE_KEEP_MIN_SNAPSHOTS_TO_KEEP, "audit"}};
    assert_kept(d, 6, r6, 2);
    const want_reason r7[] = {{ICM_EXPIRE_KEEP_REF, "dev"},
                              {ICM_EXPIRE_KEEP_RETAIN_LAST, "dev"},
                              {ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE, "dev"}};
    assert_kept(d, 7, r7, 3);
    const want_reason r1[] = {{ICM_EXPIRE_KEEP_REF, "v1"}};
    assert_kept(d, 1, r1, 1);
    const want_reason r5[] = {{ICM_EXPIRE_KEEP_NEWER_THAN_CUTOFF, NULL}};
    assert_kept(d, 5, r5, 1);
    icm_expire_decision_free(d);
    icm_table_metadata_free(md);
}

/* Rule 3's top-up is named retain_last without a branch; two refs at one head are both named;
 * a minimum of 0 keeps the head for its refs alone. */
static void expiry_reasons_of_top_up_and_shared_heads(void **state)
{
    (void)state;
    tb t = tb_new();
    tb_snap(&t, 10, 0, NOW - 5 * DAY);
    tb_snap(&t, 20, 10, NOW - 4 * DAY);
    tb_snap(&t, 30, 20, NOW - 3 * DAY);
    tb_ref(&t, "main", "branch", 10, 0, 0, 0); /* rolled back to the first snapshot */
    tb_ref(&t, "keep", "tag", 10, 0, 0, 0);
    icm_table_metadata *md = tb_build(&t, 10);
    icm_expire_decide_options o = opts_at(NOW, 2);
    icm_expire_decision *d = NULL;
    icmt_ok(icm_expire_decide(&d, md, &o));
    assert_int_equal(d->expired_count, 1);
    assert_int_equal(d->expired_ids[0], 20);
    const want_reason r10[] = {{ICM_EXPIRE_KEEP_CURRENT, NULL},
                               {ICM_EXPIRE_KEEP_REF, "main"},
                               {ICM_EXPIRE_KEEP_REF, "keep"},
                               {ICM_EXPIRE_KEEP_RETAIN_LAST, "main"}};
    assert_kept(d, 10, r10, 4);
    const want_reason r30[] = {{ICM_EXPIRE_KEEP_RETAIN_LAST, NULL}};
    assert_kept(d, 30, r30, 1);
    icm_expire_decision_free(d);
    icmt_ok(icm_table_metadata_set_property(md, "history.expire.min-snapshots-to-keep", "0"));
    o = opts_at(NOW, 0);
    icmt_ok(icm_expire_decide(&d, md, &o));
    assert_int_equal(d->expired_count, 2);
    const want_reason r10b[] = {{ICM_EXPIRE_KEEP_CURRENT, NULL},
                                {ICM_EXPIRE_KEEP_REF, "main"},
                                {ICM_EXPIRE_KEEP_REF, "keep"}};
    assert_kept(d, 10, r10b, 3);
    icm_expire_decision_free(d);
    assert_string_equal(icm_expire_keep_reason_name(ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE),
                        "max_snapshot_age_ms");
    assert_string_equal(icm_expire_keep_reason_name((icm_expire_keep_reason)99), "other");
    icm_table_metadata_free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expire_older_than),
        cmocka_unit_test(test_retain_last),
        cmocka_unit_test(test_explicit_and_boundary),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_table_property_defaults),
        cmocka_unit_test(test_ref_aging),
        cmocka_unit_test(test_explicit_referenced),
        cmocka_unit_test(test_unreferenced_newer_survives),
        cmocka_unit_test(test_tag_vs_branch_ancestry),
        cmocka_unit_test(test_per_branch_overrides),
        cmocka_unit_test(test_keep_last_after_rollback),
        cmocka_unit_test(test_empty_table),
        cmocka_unit_test(max_snapshot_age_property_at_its_boundaries),
        cmocka_unit_test(min_snapshots_property_at_its_boundaries),
        cmocka_unit_test(max_ref_age_property_at_its_boundaries),
        cmocka_unit_test(ref_age_overflow_keeps_the_ref),
        cmocka_unit_test(per_ref_retention_at_its_boundaries),
        cmocka_unit_test(expiry_reasons_name_why_each_snapshot_is_kept),
        cmocka_unit_test(expiry_reasons_of_top_up_and_shared_heads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
