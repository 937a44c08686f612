/*
 * tests/unit/test_commit_catalog.c: a REST-shaped catalog back end written against the
 * version 2 vtable (icemaint/sys/catalog.h) and nothing else: it hands out metadata with the
 * location and the table's configuration, takes commits as requirements + updates (checking
 * the requirements against its own current state, applying the updates, writing the file, as
 * a REST server does), lists in pages, and records every request it receives. Through it:
 * expiry and a transaction send the expected requirements and updates; expiry whose ref moved
 * between plan and commit fails the requirement, retries, re-decides, and leaves exactly the
 * right files; the retry policy's num-retries and total-timeout; an unknown outcome is never
 * retried and never cleaned.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "icemaint/sys/catalog.h"
#include "icemaint/transaction.h"
#include "icemaint/update.h"
#include "test_txn_common.h"
#include "testutil.h"
#include "util/util.h" /* error and allocation helpers, as history.c's catalog uses */

#define T0 INT64_C(1700000000000)
#define LOC "/wh/t"

typedef enum rest_script {
    REST_NORMAL = 0,
    REST_FAIL_ALWAYS,
    REST_UNKNOWN,
    REST_APPLY_THEN_REFUSE /* applied, then answered 403 (a gateway that passed it on) */
} rest_script;

typedef struct rest_catalog {
    icm_catalog base;
    char *location;          /* current metadata file (the "server" state: plain libc) */
    icm_table_metadata *md;  /* current metadata */
    char **requests;         /* wire form of every commit received */
    size_t n_requests;
    rest_script script;
    void (*before_commit)(struct rest_catalog *rc, void *arg); /* a concurrent writer */
    void (*after_apply)(struct rest_catalog *rc, void *arg);   /* ... or one after it */
    void *arg;
    int page_calls;
} rest_catalog;

/* The table is ns.tbl, also served as level "we.ird" (one level holding a dot) + tbl. */
static bool is_table(const icm_table_ident *id)
{
    if (id->n_levels != 1 || strcmp(id->name, "tbl") != 0)
        return false;
    return (strcmp(id->levels[0], "ns") == 0 && strcmp(id->ns, "ns") == 0) ||
           strcmp(id->levels[0], "we.ird") == 0;
}

static int rest_load(icm_catalog *cat, const icm_table_ident *id, icm_catalog_table_info *out)
{
    rest_catalog *rc = (rest_catalog *)cat;
    if (id->n_levels == 1 && strcmp(id->levels[0], "ns") == 0 && strcmp(id->name, "more") == 0) {
        /* The other table the listing names: elsewhere, its metadata file never written (a
         * listed table that cannot be loaded would hold every file expiry plans). */
        memset(out, 0, sizeof *out);
        out->metadata_location = icm__strdup("/wh/more/metadata/00001-a.metadata.json");
        return out->metadata_location != NULL ? 0 : ICM_ENOMEM;
    }
    if (!is_table(id))
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ENOTFOUND, id->name, "no such table");
    memset(out, 0, sizeof *out);
    out->metadata_location = icm__strdup(rc->location);
    int err = icm_table_metadata_copy(&out->metadata, rc->md);
    out->config = icm__calloc(1, sizeof *out->config);
    assert_non_null(out->config);
    out->config[0].key = icm__strdup("s3.endpoint");
    out->config[0].value = icm__strdup("http://localhost:9000");
    out->n_config = 1;
    assert_int_equal(err, 0);
    return 0;
}

/* The server's side of a commit: check, apply, write the next file, move the pointer. */
static void server_apply(rest_catalog *rc, const icm_table_changes *changes, int *out_rc)
{
    *out_rc = icm_table_changes_check(changes, rc->md);
    if (*out_rc != 0)
        return;
    icm_table_metadata *next = NULL;
    *out_rc = icm_table_changes_apply(&next, changes, rc->md);
    if (*out_rc != 0)
        return;
    /* As Java's catalogs do: the base file joins the metadata-log. */
    *out_rc = icm_table_metadata_append_metadata_log(
        next, icm_table_metadata_last_updated_ms(rc->md), rc->location);
    if (*out_rc != 0) {
        icm_table_metadata_free(next);
        return;
    }
    char *file = NULL;
    *out_rc = icm_catalog_write_metadata_file(&file, rc->base.io, rc->location, next);
    if (*out_rc == 0) {
        free(rc->location);
        rc->location = strdup(file);
        icm_free(file);
        icm_table_metadata_free(rc->md);
        rc->md = NULL;
        icmt_ok(icm_table_metadata_read(&rc->md, rc->base.io, rc->location));
    }
    icm_table_metadata_free(next);
}

static int rest_commit(icm_catalog *cat, const icm_table_ident *id, const char *base_location,
                       const icm_table_changes *changes, char **out_location)
{
    (void)base_location; /* a REST server judges by the requirements alone */
    rest_catalog *rc = (rest_catalog *)cat;
    *out_location = NULL;
    assert_true(is_table(id));
    char *json = NULL;
    icmt_ok(icm_table_changes_to_json(&json, NULL, changes));
    rc->requests = realloc(rc->requests, (rc->n_requests + 1) * sizeof *rc->requests);
    assert_non_null(rc->requests);
    rc->requests[rc->n_requests++] = strdup(json);
    icm_free(json);
    if (rc->before_commit != NULL) {
        void (*fn)(rest_catalog *, void *) = rc->before_commit;
        rc->before_commit = NULL;
        fn(rc, rc->arg);
    }
    if (rc->script == REST_FAIL_ALWAYS)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, "rest",
                              "scripted conflict");
    if (rc->script == REST_UNKNOWN)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, "rest",
                              "scripted lost response");
    int err = 0;
    server_apply(rc, changes, &err);
    if (err != 0)
        return err;
    if (rc->after_apply != NULL) {
        void (*fn)(rest_catalog *, void *) = rc->after_apply;
        rc->after_apply = NULL;
        fn(rc, rc->arg);
    }
    if (rc->script == REST_APPLY_THEN_REFUSE)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EAUTH, "rest", "scripted 403");
    *out_location = icm__strdup(rc->location);
    return 0;
}

/* Namespaces "ns" and "other", one per page; tables of "ns": "tbl" then "more". */
static int rest_list_namespaces(icm_catalog *cat, const char *const *parent, size_t n_parent,
                                const char *token, icm_name_cb cb, void *payload, char **next)
{
    rest_catalog *rc = (rest_catalog *)cat;
    (void)parent;
    rc->page_calls++;
    *next = NULL;
    if (n_parent > 0)
        return 0;
    if (token == NULL) {
        *next = icm__strdup("page-2");
        return cb("ns", payload);
    }
    assert_string_equal(token, "page-2");
    return cb("other", payload);
}

static int rest_list_tables(icm_catalog *cat, const char *const *ns, size_t n_ns,
                            const char *token, icm_name_cb cb, void *payload, char **next)
{
    rest_catalog *rc = (rest_catalog *)cat;
    rc->page_calls++;
    *next = NULL;
    if (n_ns != 1 || strcmp(ns[0], "ns") != 0)
        return 0;
    if (token == NULL) {
        *next = icm__strdup("t2");
        return cb("tbl", payload);
    }
    return cb("more", payload);
}

static void rest_free(icm_catalog *cat)
{
    rest_catalog *rc = (rest_catalog *)cat;
    for (size_t i = 0; i < rc->n_requests; i++)
        free(rc->requests[i]);
    free(rc->requests);
    free(rc->location);
    icm_table_metadata_free(rc->md);
    free(rc);
}

/* Only version 2 slots (and free): no pointer swap, no v1 load or listing. */
static const icm_catalog_methods REST_METHODS = {
    ICM_CATALOG_METHODS_VERSION,
    "rest-test",
    NULL, /* load_table */
    NULL, /* commit */
    NULL, /* create_table */
    NULL, /* register_table */
    NULL, /* drop_table */
    NULL, /* create_namespace */
    NULL, /* list_all_namespaces */
    NULL, /* list_tables */
    NULL, /* default_table_location */
    rest_free,
    rest_load,
    rest_commit,
    rest_list_namespaces,
    rest_list_tables,
};

/* A REST-shaped catalog serving the current table of `h`. */
static rest_catalog *rest_new(hist *h)
{
    rest_catalog *rc = calloc(1, sizeof *rc);
    assert_non_null(rc);
    icmt_ok(icm_catalog_init_base(&rc->base, &REST_METHODS, "rest", hist_io(h)));
    icm_table *t = hist_open_table(h);
    rc->location = strdup(icm_table_get_metadata_location(t));
    icmt_ok(icm_table_metadata_copy(&rc->md, icm_table_get_metadata(t)));
    icm_table_free(t);
    return rc;
}

/* The server changes its own state (another writer's commit). */
static void server_commit(rest_catalog *rc, icm_table_changes *c)
{
    int err = 0;
    server_apply(rc, c, &err);
    icmt_ok(err);
    icm_table_changes_free(c);
}

static icm_table_changes *changes_new(void)
{
    icm_table_changes *c = NULL;
    icmt_ok(icm_table_changes_new(&c));
    return c;
}

static void set_properties(rest_catalog *rc, const char *k1, const char *v1, const char *k2,
                           const char *v2)
{
    icm_table_changes *c = changes_new();
    icm_property p[] = {{k1, v1}, {k2, v2}};
    icmt_ok(icm_table_changes_set_properties(c, p, k2 != NULL ? 2 : 1));
    server_commit(rc, c);
}

static bool exists(icm_fileio *io, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, path);
    assert_true(rc == 0 || rc == ICM_ENOTFOUND);
    return rc == 0;
}

static hist *three_snapshots(icm_fileio **io, int64_t ids[3])
{
    icmt_ok(icm_fileio_mem_new(io));
    hist *h = hist_new(*io, LOC, 2, false, T0);
    ids[0] = hist_append(h, "main", "A", NULL);
    ids[1] = hist_append(h, "main", "B", NULL);
    ids[2] = hist_append(h, "main", "C", NULL);
    hist_branch(h, "b", ids[0]);
    return h;
}

/* ---- the vtable alone carries a table: load, configuration, listings ---- */

static void test_rest_shaped_back_end(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    int64_t s[3];
    hist *h = three_snapshots(&io, s);
    rest_catalog *rc = rest_new(h);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, &rc->base, "ns.tbl"));
    assert_string_equal(icm_table_get_metadata_location(t), rc->location);
    assert_int_equal(icm_table_metadata_snapshot_count(icm_table_get_metadata(t)), 3);
    icm_table *none = NULL;
    assert_int_equal(icm_table_load(&none, &rc->base, "ns.nope"), ICM_ENOTFOUND);
    assert_null(none);
    /* the legacy whole-document commit is refused: this catalog takes only changes */
    icm_table *t2 = NULL;
    icmt_ok(icm_table_load(&t2, &rc->base, "ns.tbl"));
    icm_table_metadata *edited = NULL;
    icmt_ok(icm_table_metadata_copy(&edited, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(edited, "k", "v"));
    assert_int_equal(icm_table_commit(t2, edited), ICM_EUNSUPPORTED);
    assert_int_equal(rc->n_requests, 0);
    icm_table_metadata_free(edited);
    icm_table_free(t2);
    /* by levels: a level holding a dot reaches the back end as one level */
    const char *weird[] = {"we.ird"};
    icmt_ok(icm_table_load_levels(&t2, &rc->base, weird, 1, "tbl"));
    assert_string_equal(icm_table_get_identifier(t2), "we.ird.tbl");
    icm_table_free(t2);
    assert_int_equal(icm_table_load(&t2, &rc->base, "we.ird.tbl"), ICM_ENOTFOUND); /* 2 levels */
    const char *empty[] = {""};
    assert_int_equal(icm_table_load_levels(&t2, &rc->base, empty, 1, "tbl"), ICM_EINVALID);

    icm_table_free(t);
    icm_catalog_free(&rc->base);
    hist_free(h);
    icm_fileio_free(io);
}

typedef struct names {
    char text[256];
} names;

static int join_name(const char *name, void *payload)
{
    names *n = payload;
    strncat(n->text, name, sizeof n->text - strlen(n->text) - 2);
    strcat(n->text, ",");
    return 0;
}

static void test_listings_follow_page_tokens(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    int64_t s[3];
    hist *h = three_snapshots(&io, s);
    rest_catalog *rc = rest_new(h);
    names n = {""};
    icmt_ok(icm_catalog_list_namespaces(&rc->base, NULL, join_name, &n));
    assert_string_equal(n.text, "ns,other,");
    n.text[0] = '\0';
    icmt_ok(icm_catalog_list_tables(&rc->base, "ns", join_name, &n));
    assert_string_equal(n.text, "more,tbl,"); /* sorted, both pages */
    assert_int_equal(icm_catalog_list_tables(&rc->base, "absent", join_name, &n),
                     ICM_ENOTFOUND);
    assert_true(rc->page_calls >= 4);
    icm_catalog_free(&rc->base);
    hist_free(h);
    icm_fileio_free(io);
}

/* ---- expiry through it ---- */

static icm_expire_options expire_all_older(hist *h)
{
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(h) + 100000;
    o.decide.has_older_than = true;
    o.decide.older_than_ms = o.decide.now_ms;
    o.decide.retain_last = 1;
    return o;
}

typedef struct move_ref {
    const char *ref;
    int64_t to;
} move_ref;

static void move_branch(rest_catalog *rc, void *arg)
{
    move_ref *m = arg;
    icm_table_changes *c = changes_new();
    icmt_ok(icm_table_changes_set_snapshot_ref(c, m->ref, ICM_REF_BRANCH, m->to, NULL));
    server_commit(rc, c);
}

static void test_expiry_ref_moved_between_plan_and_commit(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    int64_t s[3];
    hist *h = three_snapshots(&io, s);
    /* What each snapshot reaches, from the history's own model. */
    char **all = hist_reachable(h, NULL, 0);
    char **keep = hist_reachable(h, &s[2], 1);
    rest_catalog *rc = rest_new(h);
    set_properties(rc, "commit.retry.min-wait-ms", "0", NULL, NULL);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, &rc->base, "ns.tbl"));

    /* First decision: branch b holds S1, so only S2 goes. Between that and the commit,
     * another writer moves b to S3. */
    move_ref m = {"b", s[2]};
    rc->before_commit = move_branch;
    rc->arg = &m;
    icm_expire_options o = expire_all_older(h);
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_int_equal(r->commit_attempts, 2);
    assert_true(r->committed);
    /* The retry decided again: with b at S3, S1 and S2 both go. */
    assert_int_equal(r->expired_count, 2);
    assert_int_equal(rc->n_requests, 2);
    char *first = icmt_sprintf("{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"b\","
                               "\"snapshot-id\":%" PRId64 "}",
                               s[0]);
    char *second = icmt_sprintf("{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"b\","
                                "\"snapshot-id\":%" PRId64 "}",
                                s[2]);
    assert_non_null(strstr(rc->requests[0], first));
    assert_non_null(strstr(rc->requests[1], second));
    char *ids1 = icmt_sprintf("{\"action\":\"remove-snapshots\",\"snapshot-ids\":[%" PRId64 "]}",
                              s[1]);
    char *ids2 = icmt_sprintf("{\"action\":\"remove-snapshots\",\"snapshot-ids\":[%" PRId64
                              ",%" PRId64 "]}",
                              s[0], s[1]);
    assert_non_null(strstr(rc->requests[0], ids1));
    assert_non_null(strstr(rc->requests[1], ids2));
    /* the server's table: one snapshot left, b at S3 */
    assert_int_equal(icm_table_metadata_snapshot_count(rc->md), 1);
    assert_true(icm_table_metadata_ref_by_name(rc->md, "b")->snapshot_id == s[2]);
    /* the files: exactly what S3 reaches is left of what the history wrote */
    size_t deleted = 0;
    for (size_t i = 0; all[i] != NULL; i++) {
        bool kept = hist_strv_has(keep, all[i]);
        if (exists(io, all[i]) != kept)
            print_error("%s: %s\n", all[i], kept ? "deleted but reachable" : "left behind");
        assert_int_equal(exists(io, all[i]), kept);
        deleted += !kept;
    }
    assert_int_equal(deleted, 2); /* the manifest lists of S1 and S2 */
    free(first);
    free(second);
    free(ids1);
    free(ids2);
    icm_expire_result_free(r);
    hist_strv_free(all);
    hist_strv_free(keep);
    icm_table_free(t);
    icm_catalog_free(&rc->base);
    hist_free(h);
    icm_fileio_free(io);
}

/* Every attempt is rejected: num-retries bounds the attempts, total-timeout-ms 0 allows one. */
static void test_retry_policy(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    int64_t s[3];
    hist *h = three_snapshots(&io, s);
    char **all = hist_reachable(h, NULL, 0);
    rest_catalog *rc = rest_new(h);
    set_properties(rc, "commit.retry.min-wait-ms", "0", "commit.retry.num-retries", "2");
    rc->script = REST_FAIL_ALWAYS;
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, &rc->base, "ns.tbl"));
    icm_expire_options o = expire_all_older(h);
    icm_expire_result *r = NULL;
    assert_int_equal(icm_expire_snapshots(&r, t, &o), ICM_ECOMMIT_FAILED);
    assert_int_equal(r->commit_attempts, 3); /* the first and two retries */
    assert_int_equal(rc->n_requests, 3);
    assert_false(r->committed);
    icm_expire_result_free(r);
    /* the caller's max_commit_retries caps the table's */
    o.max_commit_retries = 1;
    assert_int_equal(icm_expire_snapshots(&r, t, &o), ICM_ECOMMIT_FAILED);
    assert_int_equal(r->commit_attempts, 2);
    icm_expire_result_free(r);
    icm_table_free(t);

    rc->script = REST_NORMAL;
    set_properties(rc, "commit.retry.total-timeout-ms", "0", "commit.retry.num-retries", "10");
    rc->script = REST_FAIL_ALWAYS;
    size_t before = rc->n_requests;
    icmt_ok(icm_table_load(&t, &rc->base, "ns.tbl"));
    o = expire_all_older(h);
    assert_int_equal(icm_expire_snapshots(&r, t, &o), ICM_ECOMMIT_FAILED);
    assert_int_equal(r->commit_attempts, 1);
    assert_int_equal(rc->n_requests, before + 1);
    icm_expire_result_free(r);
    /* nothing was deleted by any of them */
    for (size_t i = 0; all[i] != NULL; i++)
        assert_true(exists(io, all[i]));
    hist_strv_free(all);
    icm_table_free(t);
    icm_catalog_free(&rc->base);
    hist_free(h);
    icm_fileio_free(io);
}

static size_t count_suffix_in(icm_fileio *io, const char *dir, const char *suffix);

/* An unknown outcome: one attempt, nothing deleted (expiry), no owned file deleted (txn). */
static void test_unknown_never_retried_never_cleaned(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    int64_t s[3];
    hist *h = three_snapshots(&io, s);
    char **all = hist_reachable(h, NULL, 0);
    rest_catalog *rc = rest_new(h);
    set_properties(rc, "commit.retry.min-wait-ms", "0", NULL, NULL);
    rc->script = REST_UNKNOWN;
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, &rc->base, "ns.tbl"));
    icm_expire_options o = expire_all_older(h);
    icm_expire_result *r = NULL;
    assert_int_equal(icm_expire_snapshots(&r, t, &o), ICM_ECOMMIT_UNKNOWN);
    assert_int_equal(r->commit_attempts, 1);
    assert_int_equal(rc->n_requests, 1);
    icm_expire_result_free(r);
    for (size_t i = 0; all[i] != NULL; i++)
        assert_true(exists(io, all[i]));

    /* a transaction appending a file: its manifest and manifest list stay */
    size_t avro_before = count_suffix_in(io, LOC "/metadata", ".avro");
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    icm_data_file df = make_df(LOC "/data/new.parquet", 1, 10);
    icmt_ok(icm_txn_append_file(txn, &df));
    assert_int_equal(icm_txn_commit(txn), ICM_ECOMMIT_UNKNOWN);
    assert_int_equal(icm_txn_attempts(txn), 1);
    assert_int_equal(rc->n_requests, 2);
    assert_int_equal(count_suffix_in(io, LOC "/metadata", ".avro"), avro_before + 2);
    icm_txn_free(txn);
    hist_strv_free(all);
    icm_table_free(t);
    icm_catalog_free(&rc->base);
    hist_free(h);
    icm_fileio_free(io);
}

typedef struct suffix_count {
    const char *suffix;
    size_t n;
} suffix_count;

static int count_one(const icm_file_info *f, void *payload)
{
    suffix_count *c = payload;
    size_t n = strlen(f->location), k = strlen(c->suffix);
    c->n += n >= k && strcmp(f->location + n - k, c->suffix) == 0;
    return 0;
}

static size_t count_suffix_in(icm_fileio *io, const char *dir, const char *suffix)
{
    suffix_count c = {suffix, 0};
    icmt_ok(icm_fileio_list(io, dir, count_one, &c));
    return c.n;
}

/* ---- a transaction's requirements and updates ---- */

static void test_transaction_sends_requirements_and_updates(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    int64_t s[3];
    hist *h = three_snapshots(&io, s);
    rest_catalog *rc = rest_new(h);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, &rc->base, "ns.tbl"));
    char *uuid = strdup(icm_table_metadata_uuid(icm_table_get_metadata(t)));

    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    icmt_ok(icm_txn_set_property(txn, "k", "v"));
    icmt_ok(icm_txn_set_ref(txn, "t1", ICM_REF_TAG, ICM_TXN_REF_SNAPSHOT_ID, s[0], NULL));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    char *want = icmt_sprintf(
        "{\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"%s\"},"
        "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"t1\",\"snapshot-id\":null}],"
        "\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"k\":\"v\"}},"
        "{\"action\":\"set-snapshot-ref\",\"ref-name\":\"t1\",\"snapshot-id\":%" PRId64 ","
        "\"type\":\"tag\"}]}",
        uuid, s[0]);
    free(uuid);
    assert_int_equal(rc->n_requests, 1);
    assert_string_equal(rc->requests[0], want);
    free(want);
    assert_string_equal(icm_table_metadata_property(rc->md, "k"), "v");

    /* an append: add-snapshot, then main moves to it; main must still be at S3 */
    icmt_ok(icm_txn_new(&txn, t));
    icm_data_file df = make_df(LOC "/data/new.parquet", 1, 10);
    icmt_ok(icm_txn_append_file(txn, &df));
    icmt_ok(icm_txn_commit(txn));
    int64_t sid = 0;
    assert_true(icm_txn_snapshot_id(&sid, txn));
    icm_txn_free(txn);
    icm_table_changes *c = NULL;
    icmt_ok(icm_table_changes_from_json(&c, rc->requests[1], strlen(rc->requests[1])));
    assert_int_equal(icm_table_changes_update_count(c), 2);
    assert_int_equal(icm_table_changes_update_kind(c, 0), ICM_UPDATE_ADD_SNAPSHOT);
    assert_int_equal(icm_table_changes_update_kind(c, 1), ICM_UPDATE_SET_SNAPSHOT_REF);
    assert_int_equal(icm_table_changes_requirement_count(c), 2);
    char *main_req = icmt_sprintf("{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\","
                                  "\"snapshot-id\":%" PRId64 "}",
                                  s[2]);
    assert_non_null(strstr(rc->requests[1], main_req));
    free(main_req);
    int64_t cur = 0;
    assert_true(icm_table_metadata_current_snapshot_id(&cur, rc->md));
    assert_true(cur == sid);
    /* the table handle moved to what the catalog has now */
    assert_string_equal(icm_table_get_metadata_location(t), rc->location);
    icm_table_changes_free(c);
    icm_table_free(t);
    icm_catalog_free(&rc->base);
    hist_free(h);
    icm_fileio_free(io);
}

/* ---- a refusal after the commit applied, its snapshot gone, its data file still reached ---- */

typedef struct rewrite {
    icm_fileio *io;
    int64_t own;       /* the transaction's snapshot, as the server applied it */
    int64_t next;      /* the other writer's snapshot */
} rewrite;

typedef struct copy_entries {
    icm_fileio *io;
    icm_manifest_list_writer *list;
    int64_t own, next;
} copy_entries;

/* Each manifest of the own snapshot: its entries copied into a new manifest the other writer
 * adds (a manifest rewrite); the others carried over as they are. */
static int copy_manifest(const icm_manifest_file *mf, void *payload)
{
    copy_entries *c = payload;
    if (!mf->has_added_snapshot_id || mf->added_snapshot_id != c->own)
        return icm_manifest_list_writer_add(c->list, mf);
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, c->io, mf->manifest_path));
    icm_manifest_reader *rd = NULL;
    icmt_ok(icm_manifest_reader_open(&rd, data, len, mf->manifest_path, NULL));
    icm_manifest_writer *w = NULL;
    icm_manifest_writer_options wo = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    wo.format_version = 2;
    wo.compression_level = -1;
    icmt_ok(icm_manifest_writer_new_like(&w, rd, &wo));
    const icm_manifest_entry *e = NULL;
    while (icm_manifest_reader_next(&e, rd) == 0) {
        icm_manifest_entry copy = *e;
        copy.status = ICM_ENTRY_EXISTING;
        icmt_ok(icm_manifest_writer_add(w, &copy));
    }
    char *out = NULL;
    size_t out_len = 0;
    icm_manifest_file summary = ICM_MANIFEST_FILE_INIT;
    icmt_ok(icm_manifest_writer_finish(&out, &out_len, &summary, w));
    summary.manifest_path = LOC "/metadata/rewritten-m0.avro";
    summary.manifest_path_len = strlen(summary.manifest_path);
    summary.has_added_snapshot_id = true;
    summary.added_snapshot_id = c->next;
    icmt_ok(icm_fileio_create_new(c->io, summary.manifest_path, out, out_len));
    icmt_ok(icm_manifest_list_writer_add(c->list, &summary));
    icm_free(out);
    icm_manifest_writer_free(w);
    icm_manifest_reader_free(rd);
    icm_free(data);
    return 0;
}

/* Another writer, right after the commit applied: a snapshot on top of it whose manifest
 * carries the transaction's entries under a new name, then the transaction's snapshot
 * expired. No snapshot names it now, none has it as parent; its data file is live. */
static void rewrite_and_expire(rest_catalog *rc, void *arg)
{
    rewrite *rw = arg;
    assert_true(icm_table_metadata_current_snapshot_id(&rw->own, rc->md));
    const icm_snapshot *own = icm_table_metadata_snapshot_by_id(rc->md, rw->own);
    rw->next = rw->own + 1;
    icm_manifest_list_writer_options lo = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    lo.format_version = 2;
    lo.compression_level = -1;
    lo.snapshot_id = rw->next;
    lo.has_parent_snapshot_id = true;
    lo.parent_snapshot_id = rw->own;
    lo.sequence_number = icm_table_metadata_last_sequence_number(rc->md) + 1;
    copy_entries c = {rw->io, NULL, rw->own, rw->next};
    icmt_ok(icm_manifest_list_writer_new(&c.list, &lo));
    icmt_ok(icm_manifest_list_read(rw->io, own->manifest_list, NULL, copy_manifest, &c));
    char *out = NULL;
    size_t out_len = 0;
    icmt_ok(icm_manifest_list_writer_finish(&out, &out_len, c.list));
    icm_manifest_list_writer_free(c.list);
    /* The rewrite (parent: the own snapshot), then an append on top carrying the same
     * manifests (parent: the rewrite), then both older ones expired. */
    const char *lists[2] = {LOC "/metadata/snap-other-1.avro", LOC "/metadata/snap-other-2.avro"};
    int64_t ids[2] = {rw->next, rw->next + 1};
    int64_t parents[2] = {rw->own, rw->next};
    int64_t ts = own->timestamp_ms;
    for (int i = 0; i < 2; i++) {
        icmt_ok(icm_fileio_create_new(rw->io, lists[i], out, out_len));
        char *snap = icmt_sprintf(
            "{\"snapshot-id\":%" PRId64 ",\"parent-snapshot-id\":%" PRId64
            ",\"sequence-number\":%" PRId64 ",\"timestamp-ms\":%" PRId64
            ",\"manifest-list\":\"%s\",\"summary\":{\"operation\":\"replace\"},"
            "\"schema-id\":0}",
            ids[i], parents[i], lo.sequence_number + i, ts + 1 + i, lists[i]);
        icm_table_changes *ch = changes_new();
        icmt_ok(icm_table_changes_add_snapshot(ch, snap));
        icmt_ok(icm_table_changes_set_snapshot_ref(ch, "main", ICM_REF_BRANCH, ids[i], NULL));
        server_commit(rc, ch);
        free(snap);
    }
    icm_free(out);
    int64_t gone[2] = {rw->own, rw->next};
    icm_table_changes *ch = changes_new();
    icmt_ok(icm_table_changes_remove_snapshots(ch, gone, 2));
    server_commit(rc, ch);
    rw->next = ids[1];
}

static void test_refusal_keeps_a_data_file_a_rewritten_manifest_carries(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    int64_t s[3];
    hist *h = three_snapshots(&io, s);
    rest_catalog *rc = rest_new(h);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, &rc->base, "ns.tbl"));
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    char *loc = NULL;
    icmt_ok(icm_txn_new_data_file(&loc, txn, NULL, "parquet"));
    icmt_ok(icm_fileio_create_new(io, loc, "PAR1", 4));
    icm_data_file df = make_df(loc, 1, 4);
    icmt_ok(icm_txn_append_file(txn, &df));

    rewrite rw = {io, 0, 0};
    rc->script = REST_APPLY_THEN_REFUSE;
    rc->after_apply = rewrite_and_expire;
    rc->arg = &rw;
    assert_int_equal(icm_txn_commit(txn), ICM_ECOMMIT_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "a file this transaction wrote"));
    assert_non_null(strstr(icm_error_last()->message, loc));
    /* the server: the own snapshot gone, the other writer's current, the data file live */
    assert_null(icm_table_metadata_snapshot_by_id(rc->md, rw.own));
    int64_t cur = 0;
    assert_true(icm_table_metadata_current_snapshot_id(&cur, rc->md));
    assert_true(cur == rw.next);
    assert_true(exists(io, loc));
    icm_txn_free(txn); /* a failed or unknown transaction deletes nothing when freed */
    assert_true(exists(io, loc));

    /* A conflict that did not apply (409, retries used up): every owned file goes. */
    rc->script = REST_FAIL_ALWAYS;
    icmt_ok(icm_table_refresh(t));
    icmt_ok(icm_txn_new(&txn, t));
    char *loc2 = NULL;
    icmt_ok(icm_txn_new_data_file(&loc2, txn, NULL, "parquet"));
    icmt_ok(icm_fileio_create_new(io, loc2, "PAR1", 4));
    df = make_df(loc2, 1, 4);
    icmt_ok(icm_txn_append_file(txn, &df));
    assert_int_equal(icm_txn_commit(txn), ICM_ECOMMIT_FAILED);
    assert_false(exists(io, loc2));
    icm_txn_free(txn);
    icm_free(loc);
    icm_free(loc2);
    icm_table_free(t);
    icm_catalog_free(&rc->base);
    hist_free(h);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_shaped_back_end),
        cmocka_unit_test(test_listings_follow_page_tokens),
        cmocka_unit_test(test_expiry_ref_moved_between_plan_and_commit),
        cmocka_unit_test(test_retry_policy),
        cmocka_unit_test(test_unknown_never_retried_never_cleaned),
        cmocka_unit_test(test_transaction_sends_requirements_and_updates),
        cmocka_unit_test(test_refusal_keeps_a_data_file_a_rewritten_manifest_carries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
