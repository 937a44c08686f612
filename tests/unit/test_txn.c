/*
 * tests/unit/test_txn.c: transactions on a SQL-catalog (SQLite) table whose store and FileIO
 * inject faults: snapshots and summaries, sequence numbers, v3 row lineage, deletes and
 * replaces, refs and rollback, add-files with the Parquet footer, data-file locations, and above
 * all the cleanup rule: after every outcome the test asserts exactly which files exist (owned
 * ones deleted or kept, caller-supplied ones always kept).
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/sql/store.h"
#include "icemaint/expire.h"
#include "parquet/parquet.h"
#include "test_txn_common.h"
#include "txn/txn_internal.h"

typedef struct tfx {
    char *dir;
    icm_fileio *io;        /* plain local FileIO (the other writer, test reads) */
    icm_fileio *fio;       /* fault-injecting FileIO of the handle under test */
    char *uri;
    icm__sql_store *fault; /* fault store inside cat (borrowed) */
    icm_catalog *cat;      /* handle under test */
    icm_catalog *other;    /* another writer */
    icm_table *t;
    char *tdir, *mdir, *cdir; /* table dir, its metadata dir, caller files dir */
} tfx;

static int tfx_setup(void **state)
{
    static unsigned counter;
    tfx *f = calloc(1, sizeof *f);
    f->dir = icmt_mkdtemp();
    f->uri = icmt_sprintf("sqlite:///%s/catalog.db", f->dir);
    icmt_ok(icm_catalog_sqlite_create(f->uri));
    f->tdir = icmt_sprintf("%s/ns/tbl", f->dir);
    f->mdir = icmt_sprintf("%s/ns/tbl/metadata", f->dir);
    f->cdir = icmt_sprintf("%s/caller", f->dir);
    char *name = icmt_sprintf("txn_%u", counter++);
    icmt_ok(icm_fileio_local_new(&f->io));
    icm_fileio *local2 = NULL;
    icmt_ok(icm_fileio_local_new(&local2));
    icmt_ok(icm_fileio_fault_new(&f->fio, local2));
    icm__sql_store *store = NULL;
    icmt_ok(icm__sql_store_open_uri(&store, f->uri));
    icmt_ok(icm__sql_store_fault_new(&f->fault, store));
    icmt_ok(icm__catalog_open_sql_store(&f->cat, name, f->fault, f->dir, f->fio, NULL, 0));
    icmt_ok(icm_catalog_open_sql(&f->other, name, f->uri, f->dir, f->io, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(f->cat, "ns"));
    /* Short retry waits keep the tests fast; the policy itself is the table's. */
    icm_property props[] = {{"commit.retry.min-wait-ms", "1"},
                            {"commit.retry.max-wait-ms", "4"}};
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  TXN_SCHEMA_JSON, NULL, NULL, props, 2};
    icmt_ok(icm_catalog_create_table(NULL, f->cat, "ns.tbl", &o));
    icmt_ok(icm_table_load(&f->t, f->cat, "ns.tbl"));
    char *cmd = icmt_sprintf("mkdir -p %s", f->cdir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(name);
    *state = f;
    return 0;
}

static int tfx_teardown(void **state)
{
    tfx *f = *state;
    icm_table_free(f->t);
    icm_catalog_free(f->cat);
    icm_catalog_free(f->other);
    icm_fileio_free(f->fio);
    icm_fileio_free(f->io);
    icmt_rmtree(f->dir);
    free(f->dir);
    free(f->uri);
    free(f->tdir);
    free(f->mdir);
    free(f->cdir);
    free(f);
    return 0;
}

/* A caller-written data file of `size` bytes in the caller directory. */
static char *caller_file(tfx *f, const char *name, size_t size)
{
    char *p = icmt_sprintf("%s/%s", f->cdir, name);
    char *buf = calloc(1, size ? size : 1);
    icmt_write_file(p, buf, size);
    free(buf);
    return p;
}

static const icm_snapshot *current(const icm_table *t)
{
    const icm_table_metadata *md = icm_table_get_metadata(t);
    int64_t id;
    assert_true(icm_table_metadata_current_snapshot_id(&id, md));
    return icm_table_metadata_snapshot_by_id(md, id);
}

static const char *summary(const icm_table *t, const icm_snapshot *s, const char *key)
{
    return icm_snapshot_summary_get(icm_table_get_metadata(t), s, key);
}

static void assert_summary(const icm_table *t, const icm_snapshot *s, const char *key,
                           const char *want)
{
    const char *got = summary(t, s, key);
    if (want == NULL) {
        if (got != NULL)
            fail_msg("summary %s = %s, expected absent", key, got);
        return;
    }
    if (got == NULL || strcmp(got, want) != 0)
        fail_msg("summary %s = %s, expected %s", key, got ? got : "(absent)", want);
}

static int64_t append_files(icm_table *t, const icm_data_file *files, size_t n)
{
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    for (size_t i = 0; i < n; i++)
        icmt_ok(icm_txn_append_file(txn, &files[i]));
    icmt_ok(icm_txn_commit(txn));
    int64_t id = 0;
    assert_true(icm_txn_snapshot_id(&id, txn));
    icm_txn_free(txn);
    return id;
}

/* ---- snapshots, summaries, sequence numbers ---- */

static void txn_append_builds_snapshots(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100), *b = caller_file(f, "b.parquet", 50);
    icm_data_file files[] = {make_df(a, 10, 100), make_df(b, 5, 50)};
    int64_t s1 = append_files(f->t, files, 2);
    const icm_snapshot *snap = current(f->t);
    assert_int_equal(snap->snapshot_id, s1);
    assert_true(s1 > 0);
    assert_false(snap->has_parent);
    assert_int_equal(snap->sequence_number, 1);
    assert_int_equal(icm_table_metadata_last_sequence_number(icm_table_get_metadata(f->t)), 1);
    assert_string_equal(snap->operation, "append");
    assert_summary(f->t, snap, "added-data-files", "2");
    assert_summary(f->t, snap, "added-records", "15");
    assert_summary(f->t, snap, "added-files-size", "150");
    assert_summary(f->t, snap, "changed-partition-count", "1");
    assert_summary(f->t, snap, "total-records", "15");
    assert_summary(f->t, snap, "total-data-files", "2");
    assert_summary(f->t, snap, "total-files-size", "150");
    assert_summary(f->t, snap, "total-delete-files", "0");
    assert_summary(f->t, snap, "total-position-deletes", "0");
    assert_summary(f->t, snap, "total-equality-deletes", "0");
    assert_summary(f->t, snap, "deleted-data-files", NULL);
    const icm_ref *main_ref = icm_table_metadata_ref_by_name(icm_table_get_metadata(f->t), "main");
    assert_non_null(main_ref);
    assert_false(main_ref->implicit);
    assert_int_equal(main_ref->snapshot_id, s1);

    mf_rows rows;
    read_list(f->io, snap->manifest_list, &rows);
    assert_int_equal(rows.n, 1);
    assert_int_equal(rows.rows[0].added, 2);
    assert_int_equal(rows.rows[0].sequence_number, 1);
    assert_int_equal(rows.rows[0].added_snapshot_id, s1);
    char *first_manifest = strdup(rows.rows[0].path);
    free_rows(&rows);
    /* create + ours metadata, one manifest, one list */
    assert_int_equal(count_files(f->mdir, NULL), 4);

    char *c = caller_file(f, "c.parquet", 70);
    icm_data_file more[] = {make_df(c, 7, 70)};
    int64_t s2 = append_files(f->t, more, 1);
    snap = current(f->t);
    assert_int_equal(snap->snapshot_id, s2);
    assert_true(snap->has_parent);
    assert_int_equal(snap->parent_snapshot_id, s1);
    assert_int_equal(snap->sequence_number, 2);
    assert_summary(f->t, snap, "added-data-files", "1");
    assert_summary(f->t, snap, "total-records", "22");
    assert_summary(f->t, snap, "total-data-files", "3");
    assert_summary(f->t, snap, "total-files-size", "220");
    read_list(f->io, snap->manifest_list, &rows);
    assert_int_equal(rows.n, 2);
    assert_int_equal(rows.rows[0].added, 1);        /* new manifest first */
    assert_int_equal(rows.rows[0].sequence_number, 2);
    assert_string_equal(rows.rows[1].path, first_manifest); /* carried over */
    assert_int_equal(rows.rows[1].sequence_number, 1);
    free_rows(&rows);
    assert_int_equal(icm_table_metadata_snapshot_log_count(icm_table_get_metadata(f->t)), 2);
    int checked = 0;
    assert_int_equal(missing_referenced_files(f->io, icm_table_get_metadata(f->t), &checked), 0);
    assert_true(checked >= 2 + 3 + 3);
    assert_true(icmt_file_exists(a) && icmt_file_exists(b) && icmt_file_exists(c));
    free(first_manifest);
    free(a);
    free(b);
    free(c);
}

/* ---- the cleanup rule ---- */

typedef struct other_writer {
    tfx *f;
    icm_table *t;      /* handle on `other` */
    int rearm;         /* LOST_BEFORE again this many more times */
    bool commit;       /* commit a property change through `other` */
    int commits;
} other_writer;

static void other_hook(void *payload)
{
    other_writer *w = payload;
    if (w->commit) {
        icmt_ok(icm_table_refresh(w->t));
        icm_table_metadata *md = NULL;
        icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(w->t)));
        char v[16];
        snprintf(v, sizeof v, "%d", ++w->commits);
        icmt_ok(icm_table_metadata_set_property(md, "other", v));
        icmt_ok(icm_table_commit(w->t, md));
        icm_table_metadata_free(md);
    }
    if (w->rearm-- > 0)
        icm__sql_store_fault_arm(w->f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", other_hook,
                                 w);
}

static void txn_conflict_retries_and_cleans_superseded(void **state)
{
    tfx *f = *state;
    other_writer w = {f, NULL, 0, true, 0};
    icmt_ok(icm_table_load(&w.t, f->other, "ns.tbl"));
    char *a = caller_file(f, "a.parquet", 100);
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    char *owned = NULL;
    icmt_ok(icm_txn_new_data_file(&owned, txn, NULL, "parquet"));
    icmt_ok(icm_fileio_create_new(f->io, owned, "xxxx", 4));
    icm_data_file files[] = {make_df(a, 10, 100), make_df(owned, 3, 4)};
    icmt_ok(icm_txn_append_file(txn, &files[0]));
    icmt_ok(icm_txn_append_file(txn, &files[1]));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", other_hook, &w);
    icmt_ok(icm_txn_commit(txn));
    assert_int_equal(icm_txn_attempts(txn), 2);
    int64_t id;
    assert_true(icm_txn_snapshot_id(&id, txn));
    icm_txn_free(txn);
    /* The retry was applied on the other writer's metadata. */
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    assert_string_equal(icm_table_metadata_property(md, "other"), "1");
    const icm_snapshot *snap = current(f->t);
    assert_int_equal(snap->snapshot_id, id);
    assert_non_null(strstr(snap->manifest_list, "-2-")); /* the list of attempt 2 */
    /* Exactly: metadata create + other + ours; the reused manifest; the attempt-2 list (the
     * attempt-1 list was deleted after the commit was found again). */
    assert_int_equal(count_suffix(f->mdir, ".metadata.json"), 3);
    assert_int_equal(count_suffix(f->mdir, ".avro"), 2);
    assert_true(icmt_file_exists(a));
    assert_true(icmt_file_exists(owned)); /* committed: referenced */
    assert_int_equal(missing_referenced_files(f->io, md, NULL), 0);
    free(owned);
    free(a);
    icm_table_free(w.t);
}

static void txn_retries_exhausted_delete_every_owned_file(void **state)
{
    tfx *f = *state;
    other_writer w = {f, NULL, 4, false, 0}; /* 1 + 4 re-arms = 5 failures: all attempts */
    char *a = caller_file(f, "a.parquet", 100);
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    char *owned = NULL, *unused = NULL;
    icmt_ok(icm_txn_new_data_file(&owned, txn, NULL, "parquet"));
    icmt_ok(icm_txn_new_data_file(&unused, txn, NULL, "parquet"));
    icmt_ok(icm_fileio_create_new(f->io, owned, "xxxx", 4));
    icmt_ok(icm_fileio_create_new(f->io, unused, "yy", 2));
    icm_data_file files[] = {make_df(a, 10, 100), make_df(owned, 3, 4)};
    icmt_ok(icm_txn_append_file(txn, &files[0]));
    icmt_ok(icm_txn_append_file(txn, &files[1]));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", other_hook, &w);
    assert_int_equal(icm_txn_commit(txn), ICM_ECOMMIT_FAILED);
    assert_non_null(strstr(icm_error_last()->message, "after 5 attempts"));
    assert_int_equal(icm_txn_attempts(txn), 5);
    /* Nothing of ours is left: no manifest, no list of any attempt, no owned data file. */
    assert_int_equal(count_suffix(f->mdir, ".avro"), 0);
    assert_int_equal(count_suffix(f->mdir, ".metadata.json"), 1);
    assert_false(icmt_file_exists(owned));
    assert_false(icmt_file_exists(unused));
    assert_true(icmt_file_exists(a)); /* caller's: never deleted */
    assert_int_equal(icm_table_metadata_snapshot_count(icm_table_get_metadata(f->t)), 0);
    assert_int_equal(icm_txn_commit(txn), ICM_EINVALID); /* committed at most once */
    icm_txn_free(txn);
    assert_true(icmt_file_exists(a));
    free(owned);
    free(unused);
    free(a);
}

static void txn_zero_retries_fail_at_once(void **state)
{
    tfx *f = *state;
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(f->t)));
    icmt_ok(icm_table_metadata_set_property(md, "commit.retry.num-retries", "0"));
    icmt_ok(icm_table_commit(f->t, md));
    icm_table_metadata_free(md);
    other_writer w = {f, NULL, 0, false, 0};
    char *a = caller_file(f, "a.parquet", 10);
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icm_data_file df = make_df(a, 1, 10);
    icmt_ok(icm_txn_append_file(txn, &df));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", other_hook, &w);
    assert_int_equal(icm_txn_commit(txn), ICM_ECOMMIT_FAILED);
    assert_int_equal(icm_txn_attempts(txn), 1);
    assert_int_equal(count_suffix(f->mdir, ".avro"), 0); /* its manifest and its list */
    assert_true(icmt_file_exists(a));
    icm_txn_free(txn);
    free(a);
}

/* A caller's file inside an icemaint trash (`<trash>/<table-uuid>/files/` beside
 * `journal/<name>.jsonl`): icm_txn_append_file and icm_txn_replace_files queued it with no
 * trash check, and `trash expire` would delete a file the commit made live (adversary round 7,
 * finding 3: every entry point that takes a caller's file). Refused now, nothing queued; a
 * file beside it outside the trash is taken. */
static void test_data_loss_append_file_of_a_trashed_file(void **state)
{
    tfx *f = *state;
    const char *uuid = "0b5e6a2c-1d3f-4e5a-8b7c-9d0e1f2a3b4c";
    /* the trash's layout: <trash>/<uuid>/journal/<journal>, <trash>/<uuid>/files/data/<file> */
    const char *const folders[] = {"", "/journal", "/files", "/files/data"};
    icmt_mkdir_in(f->dir, "trash");
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        char *dir = icmt_sprintf("trash/%s%s", uuid, folders[i]);
        icmt_mkdir_in(f->dir, dir);
        free(dir);
    }
    char *rel = icmt_sprintf("trash/%s/journal/1-run-1.jsonl", uuid);
    icmt_file_in(f->dir, rel);
    free(rel);
    rel = icmt_sprintf("trash/%s/files/data/t.parquet", uuid);
    icmt_file_in(f->dir, rel);
    char *trashed = icmt_in(f->dir, rel);
    free(rel);
    char *a = caller_file(f, "a.parquet", 10);
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icm_data_file df = make_df(trashed, 1, 10);
    assert_int_equal(icm_txn_append_file(txn, &df), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "lies in the icemaint trash"));
    assert_string_equal(icm_error_last()->location, trashed);
    icm_data_file pair[] = {make_df(a, 1, 10), make_df(trashed, 1, 10)};
    const char *remove[] = {a};
    assert_int_equal(icm_txn_replace_files(txn, remove, 1, pair, 2), ICM_EREFUSED);
    icmt_ok(icm_txn_append_file(txn, &pair[0])); /* outside the trash: taken */
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    assert_summary(f->t, current(f->t), "added-data-files", "1");
    assert_summary(f->t, current(f->t), "total-data-files", "1");
    assert_true(icmt_file_exists(trashed) && icmt_file_exists(a));
    free(trashed);
    free(a);
}

static void txn_unknown_keeps_every_file(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100);
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    char *owned = NULL;
    icmt_ok(icm_txn_new_data_file(&owned, txn, NULL, "parquet"));
    icmt_ok(icm_fileio_create_new(f->io, owned, "xxxx", 4));
    icm_data_file files[] = {make_df(a, 10, 100), make_df(owned, 3, 4)};
    icmt_ok(icm_txn_append_file(txn, &files[0]));
    icmt_ok(icm_txn_append_file(txn, &files[1]));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_UNAPPLIED, "UPDATE", NULL, NULL);
    assert_int_equal(icm_txn_commit(txn), ICM_ECOMMIT_UNKNOWN);
    const char *msg = icm_error_last()->message;
    assert_non_null(strstr(msg, "no file of this transaction was deleted"));
    assert_non_null(strstr(msg, ".metadata.json")); /* names the file to check */
    assert_int_equal(icm_txn_attempts(txn), 1);
    icm_txn_free(txn); /* free after UNKNOWN deletes nothing either */
    assert_int_equal(count_suffix(f->mdir, ".metadata.json"), 2);
    assert_int_equal(count_suffix(f->mdir, ".avro"), 2);
    assert_true(icmt_file_exists(owned));
    assert_true(icmt_file_exists(a));
    free(owned);
    free(a);
}

static void txn_applied_then_lost_is_success(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100);
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icm_data_file df = make_df(a, 10, 100);
    icmt_ok(icm_txn_append_file(txn, &df));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_AFTER_APPLY, "UPDATE", NULL, NULL);
    icmt_ok(icm_txn_commit(txn));
    int64_t id;
    assert_true(icm_txn_snapshot_id(&id, txn));
    icm_txn_free(txn);
    icm_table *t2 = NULL;
    icmt_ok(icm_table_load(&t2, f->other, "ns.tbl"));
    assert_int_equal(current(t2)->snapshot_id, id);
    assert_int_equal(missing_referenced_files(f->io, icm_table_get_metadata(t2), NULL), 0);
    assert_int_equal(count_suffix(f->mdir, ".avro"), 2);
    icm_table_free(t2);
    free(a);
}

/* Data-loss class "delete after an unknown commit": an expiry whose commit answer is lost and
 * that reconciling then finds applied is reported committed, and still deletes nothing (the
 * expired snapshot's manifest list stays, an orphan now). */
static void expiry_reconciled_after_a_lost_answer_deletes_nothing(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100);
    char *b = caller_file(f, "b.parquet", 100);
    for (int i = 0; i < 2; i++) {
        icm_txn *txn = NULL;
        icmt_ok(icm_txn_new(&txn, f->t));
        icm_data_file df = make_df(i == 0 ? a : b, 10, 100);
        icmt_ok(icm_txn_append_file(txn, &df));
        icmt_ok(icm_txn_commit(txn));
        icm_txn_free(txn);
    }
    size_t lists = count_suffix(f->mdir, ".avro");
    assert_int_equal(lists, 4); /* two manifest lists, two manifests */
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_AFTER_APPLY, "UPDATE", NULL, NULL);
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.has_older_than = true;
    o.decide.older_than_ms = icm__now_ms() + 60000;
    o.decide.retain_last = 1;
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, f->t, &o));
    assert_true(r->committed);
    assert_true(r->commit_reconciled);
    assert_int_equal(r->expired_count, 1);
    assert_int_equal(r->total, 0);
    assert_int_equal(count_suffix(f->mdir, ".avro"), lists);
    /* the catalog has the expiry */
    icm_table *t2 = NULL;
    icmt_ok(icm_table_load(&t2, f->other, "ns.tbl"));
    assert_int_equal(icm_table_metadata_snapshot_count(icm_table_get_metadata(t2)), 1);
    icm_table_free(t2);
    icm_expire_result_free(r);
    free(a);
    free(b);
}

static void txn_io_error_before_send_deletes_owned(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100);
    /* Fail the 2nd write (the manifest list), then the 3rd (the metadata file). */
    for (uint64_t nth = 2; nth <= 3; nth++) {
        icm_txn *txn = NULL;
        icmt_ok(icm_txn_new(&txn, f->t));
        char *owned = NULL;
        icmt_ok(icm_txn_new_data_file(&owned, txn, NULL, "parquet"));
        icmt_ok(icm_fileio_create_new(f->io, owned, "xxxx", 4));
        icm_data_file files[] = {make_df(a, 10, 100), make_df(owned, 3, 4)};
        icmt_ok(icm_txn_append_file(txn, &files[0]));
        icmt_ok(icm_txn_append_file(txn, &files[1]));
        icm_fileio_fault_fail_nth(f->fio, ICM_IO_WRITE, nth, ICM_EIO);
        assert_int_equal(icm_txn_commit(txn), ICM_EIO);
        icm_fileio_fault_fail_nth(f->fio, ICM_IO_WRITE, 0, 0);
        assert_int_equal(count_suffix(f->mdir, ".avro"), 0);
        assert_int_equal(count_suffix(f->mdir, ".metadata.json"), 1);
        assert_false(icmt_file_exists(owned));
        assert_true(icmt_file_exists(a));
        icm_txn_free(txn);
        free(owned);
    }
    assert_int_equal(icm_table_metadata_snapshot_count(icm_table_get_metadata(f->t)), 0);
    free(a);
}

static void txn_abort_and_free_delete_owned_only(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100);
    for (int use_abort = 0; use_abort <= 1; use_abort++) {
        icm_txn *txn = NULL;
        icmt_ok(icm_txn_new(&txn, f->t));
        char *owned = NULL;
        icmt_ok(icm_txn_new_data_file(&owned, txn, NULL, "parquet"));
        icmt_ok(icm_fileio_create_new(f->io, owned, "xxxx", 4));
        icm_data_file files[] = {make_df(a, 10, 100), make_df(owned, 3, 4)};
        icmt_ok(icm_txn_append_file(txn, &files[0]));
        icmt_ok(icm_txn_append_file(txn, &files[1]));
        if (use_abort) {
            icmt_ok(icm_txn_abort(txn));
            assert_false(icmt_file_exists(owned));
            assert_int_equal(icm_txn_commit(txn), ICM_EINVALID);
            assert_int_equal(icm_txn_append_file(txn, &files[0]), ICM_EINVALID);
        }
        icm_txn_free(txn);
        assert_false(icmt_file_exists(owned));
        assert_true(icmt_file_exists(a));
        free(owned);
    }
    assert_int_equal(count_files(f->mdir, NULL), 1);
    free(a);
}

static void txn_bad_input_is_refused(void **state)
{
    tfx *f = *state;
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icm_data_file df = make_df(NULL, 1, 1);
    assert_int_equal(icm_txn_append_file(txn, &df), ICM_EINVALID);
    df = make_df("/x.parquet", -1, 1);
    assert_int_equal(icm_txn_append_file(txn, &df), ICM_EINVALID);
    char *loc = NULL;
    assert_int_equal(icm_txn_new_data_file(&loc, txn, NULL, ""), ICM_EINVALID);
    assert_int_equal(icm_txn_set_property(txn, "", "v"), ICM_EINVALID);
    /* values Iceberg cannot read for the properties it types (icm_table_property_check) */
    assert_int_equal(icm_txn_set_property(txn, "history.expire.min-snapshots-to-keep", "abc"),
                     ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, "history.expire.min-snapshots-to-keep");
    assert_non_null(strstr(icm_error_last()->message, "not an integer"));
    assert_int_equal(icm_txn_set_property(txn, "history.expire.max-ref-age-ms", "-1"),
                     ICM_EINVALID);
    assert_int_equal(icm_txn_set_property(txn, "gc.enabled", "maybe"), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "not a boolean"));
    const char *closest = NULL;
    icmt_ok(icm_table_property_check(NULL, "gc.enabled", NULL)); /* a removal has no value */
    icmt_ok(icm_table_property_check(NULL, "history.expire.max-snapshot-age-ms", "-0"));
    icmt_ok(icm_table_property_check(NULL, "custom", "maybe"));
    icmt_ok(icm_table_property_check(&closest, "write.metadata.delete-after-comit.enabled",
                                     "true"));
    assert_string_equal(closest, "write.metadata.delete-after-commit.enabled");
    icmt_ok(icm_table_property_check(&closest, "owner", "x"));
    assert_null(closest);
    icmt_ok(icm_table_property_check(&closest, "gc.enabled", "TRUE"));
    assert_null(closest);
    assert_int_equal(icm_txn_remove_ref(txn, "main"), ICM_EINVALID);
    icm_ref_retention r = {0};
    r.has_min_snapshots_to_keep = true;
    r.min_snapshots_to_keep = 2;
    assert_int_equal(icm_txn_set_ref(txn, "t", ICM_REF_TAG, 0u, 0, &r), ICM_EINVALID);
    /* A flag this version does not know is refused, not ignored. */
    assert_int_equal(icm_txn_set_ref(txn, "b", ICM_REF_BRANCH, 0x4u, 0, NULL), ICM_EINVALID);
    assert_int_equal(icm_txn_set_ref(txn, "main", ICM_REF_TAG, 0u, 0, NULL),
                     ICM_EINVALID);
    /* Metadata is JSON: a ref name that is not UTF-8 is refused when queued, by name (the
     * commit reported it as out of memory). */
    assert_int_equal(icm_txn_set_ref(txn, "br\xff", ICM_REF_BRANCH, 0u, 0, NULL),
                     ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, "br\\xff");
    assert_non_null(strstr(icm_error_last()->message, "not valid UTF-8"));
    assert_int_equal(icm_txn_set_ref(txn, "tg\xc3", ICM_REF_TAG, 0u, 0, NULL),
                     ICM_EINVALID);
    /* Nothing was queued: the commit writes nothing. */
    icmt_ok(icm_txn_commit(txn));
    assert_int_equal(icm_txn_attempts(txn), 0);
    icm_txn_free(txn);
    assert_int_equal(count_files(f->mdir, NULL), 1);
    icm_table *st = NULL;
    icmt_ok(icm_table_open_static(&st, f->io, icm_table_get_metadata_location(f->t)));
    assert_int_equal(icm_txn_new(&txn, st), ICM_EREADONLY);
    icm_table_free(st);
}

/* ---- deletes and replaces ---- */

typedef struct entry_row {
    char path[512];
    int status;
    int64_t snapshot_id, sequence_number;
    bool has_first_row_id;
    int64_t first_row_id;
} entry_row;

typedef struct entry_rows {
    entry_row rows[16];
    int n;
} entry_rows;

static int collect_entry_cb(const icm_manifest_entry *e, void *payload)
{
    entry_rows *r = payload;
    assert_true(r->n < 16);
    entry_row *row = &r->rows[r->n++];
    snprintf(row->path, sizeof row->path, "%s", e->data_file.file_path);
    row->status = (int)e->status;
    row->snapshot_id = e->snapshot_id;
    row->sequence_number = e->sequence_number;
    row->has_first_row_id = e->data_file.has_first_row_id;
    row->first_row_id = e->data_file.first_row_id;
    return 0;
}

static int read_entries_cb(const icm_manifest_file *mf, void *payload)
{
    return icm_manifest_read(((void **)payload)[0], mf, NULL, collect_entry_cb,
                             ((void **)payload)[1]);
}

/* Every entry of every manifest of a snapshot, in list order. */
static void read_entries(icm_fileio *io, const icm_snapshot *s, entry_rows *out)
{
    memset(out, 0, sizeof *out);
    void *ctx[2] = {io, out};
    icmt_ok(icm_manifest_list_read(io, s->manifest_list, NULL, read_entries_cb, ctx));
}

static const entry_row *find_entry(const entry_rows *r, const char *path)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->rows[i].path, path) == 0)
            return &r->rows[i];
    return NULL;
}

static void txn_delete_and_replace_files(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100), *b = caller_file(f, "b.parquet", 50);
    char *c = caller_file(f, "c.parquet", 70), *d = caller_file(f, "d.parquet", 30);
    icm_data_file ab[] = {make_df(a, 10, 100), make_df(b, 5, 50)};
    int64_t s1 = append_files(f->t, ab, 2);
    icm_data_file cc[] = {make_df(c, 7, 70)};
    int64_t s2 = append_files(f->t, cc, 1);
    int files_before = count_files(f->mdir, NULL);

    /* A path that is not live: refused at commit, nothing left behind. */
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_delete_file(txn, "/nowhere/x.parquet"));
    assert_int_equal(icm_txn_commit(txn), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "not a live file"));
    icm_txn_free(txn);
    assert_int_equal(count_files(f->mdir, NULL), files_before);

    /* Delete a, named in its file: URI form. */
    icmt_ok(icm_txn_new(&txn, f->t));
    char *a_uri = icmt_sprintf("file://%s", a);
    icmt_ok(icm_txn_delete_file(txn, a_uri));
    icmt_ok(icm_txn_commit(txn));
    int64_t s3;
    assert_true(icm_txn_snapshot_id(&s3, txn));
    icm_txn_free(txn);
    const icm_snapshot *snap = current(f->t);
    assert_int_equal(snap->snapshot_id, s3);
    assert_int_equal(snap->parent_snapshot_id, s2);
    assert_string_equal(snap->operation, "delete");
    assert_summary(f->t, snap, "deleted-data-files", "1");
    assert_summary(f->t, snap, "deleted-records", "10");
    assert_summary(f->t, snap, "removed-files-size", "100");
    assert_summary(f->t, snap, "added-data-files", NULL);
    assert_summary(f->t, snap, "total-data-files", "2");
    assert_summary(f->t, snap, "total-records", "12");
    assert_summary(f->t, snap, "total-files-size", "120");
    mf_rows rows;
    read_list(f->io, snap->manifest_list, &rows);
    assert_int_equal(rows.n, 2);
    assert_int_equal(rows.rows[0].added_snapshot_id, s2); /* c's manifest, unchanged */
    assert_int_equal(rows.rows[1].added_snapshot_id, s3); /* S1's manifest, rewritten */
    assert_int_equal(rows.rows[1].existing, 1);
    assert_int_equal(rows.rows[1].deleted, 1);
    assert_int_equal(rows.rows[1].added, 0);
    assert_int_equal(rows.rows[1].sequence_number, 3);
    free_rows(&rows);
    entry_rows er;
    read_entries(f->io, snap, &er);
    assert_int_equal(er.n, 3);
    const entry_row *ea = find_entry(&er, a), *eb = find_entry(&er, b);
    assert_non_null(ea);
    assert_non_null(eb);
    assert_int_equal(ea->status, ICM_ENTRY_DELETED);
    assert_int_equal(ea->snapshot_id, s3);
    assert_int_equal(ea->sequence_number, 1);
    assert_int_equal(eb->status, ICM_ENTRY_EXISTING);
    assert_int_equal(eb->snapshot_id, s1);
    assert_int_equal(eb->sequence_number, 1);
    /* The old snapshots are untouched and all their files still exist. */
    assert_int_equal(missing_referenced_files(f->io, icm_table_get_metadata(f->t), NULL), 0);

    /* Deleting a again: it is no longer live. */
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_delete_file(txn, a));
    assert_int_equal(icm_txn_commit(txn), ICM_EINVALID);
    icm_txn_free(txn);

    /* Replace b and c by d: one "replace" snapshot. */
    icmt_ok(icm_txn_new(&txn, f->t));
    const char *remove[] = {b, c};
    icm_data_file add[] = {make_df(d, 12, 30)};
    icmt_ok(icm_txn_replace_files(txn, remove, 2, add, 1));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    snap = current(f->t);
    assert_string_equal(snap->operation, "replace");
    assert_summary(f->t, snap, "added-data-files", "1");
    assert_summary(f->t, snap, "deleted-data-files", "2");
    assert_summary(f->t, snap, "deleted-records", "12");
    assert_summary(f->t, snap, "total-data-files", "1");
    assert_summary(f->t, snap, "total-records", "12");
    assert_summary(f->t, snap, "total-files-size", "30");
    read_entries(f->io, snap, &er);
    assert_int_equal(er.n, 3);
    assert_int_equal(find_entry(&er, d)->status, ICM_ENTRY_ADDED);
    assert_int_equal(find_entry(&er, c)->status, ICM_ENTRY_DELETED);
    assert_int_equal(find_entry(&er, b)->status, ICM_ENTRY_DELETED);
    assert_null(find_entry(&er, a)); /* the rewrite drops deletes of earlier snapshots */
    assert_true(icmt_file_exists(a) && icmt_file_exists(c)); /* files stay for expiry */
    assert_int_equal(missing_referenced_files(f->io, icm_table_get_metadata(f->t), NULL), 0);
    free(a_uri);
    free(a);
    free(b);
    free(c);
    free(d);
}

/* The other writer deletes `path` through its own transaction. */
typedef struct other_delete {
    icm_table *t;
    const char *path;
} other_delete;

static void other_deletes_hook(void *payload)
{
    other_delete *od = payload;
    icmt_ok(icm_table_refresh(od->t));
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, od->t));
    icmt_ok(icm_txn_delete_file(txn, od->path));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
}

static void txn_concurrent_delete_fails_validation(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100), *b = caller_file(f, "b.parquet", 50);
    icm_data_file ab[] = {make_df(a, 10, 100), make_df(b, 5, 50)};
    append_files(f->t, ab, 2);
    other_delete od = {NULL, a};
    icmt_ok(icm_table_load(&od.t, f->other, "ns.tbl"));
    int avro_before = count_suffix(f->mdir, ".avro");
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_delete_file(txn, a));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", other_deletes_hook,
                             &od);
    assert_int_equal(icm_txn_commit(txn), ICM_ECOMMIT_FAILED);
    assert_non_null(strstr(icm_error_last()->message, "after a concurrent commit"));
    assert_int_equal(icm_txn_attempts(txn), 2);
    icm_txn_free(txn);
    /* Ours (attempt 1: rewritten manifest + list) are gone; the other's two remain. */
    assert_int_equal(count_suffix(f->mdir, ".avro"), avro_before + 2);
    icmt_ok(icm_table_refresh(f->t));
    assert_int_equal(missing_referenced_files(f->io, icm_table_get_metadata(f->t), NULL), 0);
    assert_true(icmt_file_exists(a) && icmt_file_exists(b));
    icm_table_free(od.t);
    free(a);
    free(b);
}

static void txn_delete_retry_cleans_rewritten_manifests(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 100), *b = caller_file(f, "b.parquet", 50);
    icm_data_file ab[] = {make_df(a, 10, 100), make_df(b, 5, 50)};
    append_files(f->t, ab, 2);
    int avro_before = count_suffix(f->mdir, ".avro"); /* 2 */
    other_writer w = {f, NULL, 0, true, 0};
    icmt_ok(icm_table_load(&w.t, f->other, "ns.tbl"));
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_delete_file(txn, a));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", other_hook, &w);
    icmt_ok(icm_txn_commit(txn));
    assert_int_equal(icm_txn_attempts(txn), 2);
    icm_txn_free(txn);
    /* Attempt 2's rewritten manifest and list only; attempt 1's were deleted. */
    assert_int_equal(count_suffix(f->mdir, ".avro"), avro_before + 2);
    assert_int_equal(missing_referenced_files(f->io, icm_table_get_metadata(f->t), NULL), 0);
    icm_table_free(w.t);
    free(a);
    free(b);
}

/* ---- metadata updates ---- */

static void txn_properties_refs_rollback(void **state)
{
    tfx *f = *state;
    char *a = caller_file(f, "a.parquet", 10), *b = caller_file(f, "b.parquet", 10);
    icm_data_file fa[] = {make_df(a, 1, 10)}, fb[] = {make_df(b, 1, 10)};
    int64_t s1 = append_files(f->t, fa, 1);
    int64_t s2 = append_files(f->t, fb, 1);

    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_property(txn, "k", "v"));
    icmt_ok(icm_txn_set_property(txn, "gone", "x"));
    icmt_ok(icm_txn_set_property(txn, "gone", NULL));
    icm_ref_retention br = {true, 7 * 86400000LL, true, 2 * 86400000LL, true, 3};
    icmt_ok(icm_txn_set_ref(txn, "b1", ICM_REF_BRANCH, 0u, 0, &br));
    icm_ref_retention tr = {true, 86400000LL, false, 0, false, 0};
    icmt_ok(icm_txn_set_ref(txn, "t1", ICM_REF_TAG, ICM_TXN_REF_SNAPSHOT_ID, s1, &tr));
    icmt_ok(icm_txn_commit(txn));
    assert_false(icm_txn_snapshot_id(&(int64_t){0}, txn)); /* metadata only */
    icm_txn_free(txn);
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    assert_string_equal(icm_table_metadata_property(md, "k"), "v");
    assert_null(icm_table_metadata_property(md, "gone"));
    const icm_ref *r = icm_table_metadata_ref_by_name(md, "b1");
    assert_non_null(r);
    assert_int_equal(r->type, ICM_REF_BRANCH);
    assert_int_equal(r->snapshot_id, s2);
    assert_true(r->has_max_ref_age_ms && r->max_ref_age_ms == 7 * 86400000LL);
    assert_true(r->has_max_snapshot_age_ms && r->max_snapshot_age_ms == 2 * 86400000LL);
    assert_true(r->has_min_snapshots_to_keep && r->min_snapshots_to_keep == 3);
    r = icm_table_metadata_ref_by_name(md, "t1");
    assert_int_equal(r->type, ICM_REF_TAG);
    assert_int_equal(r->snapshot_id, s1);
    assert_false(r->has_max_snapshot_age_ms);
    assert_int_equal(icm_table_metadata_snapshot_count(md), 2);

    /* create on an existing name, remove a missing ref, unknown snapshot: refused */
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_ref(txn, "b1", ICM_REF_BRANCH, 0u, 0, NULL));
    assert_int_equal(icm_txn_commit(txn), ICM_EEXISTS);
    icm_txn_free(txn);
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_remove_ref(txn, "nope"));
    assert_int_equal(icm_txn_commit(txn), ICM_ENOTFOUND);
    icm_txn_free(txn);
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_ref(txn, "t2", ICM_REF_TAG, ICM_TXN_REF_SNAPSHOT_ID, 12345, NULL));
    assert_int_equal(icm_txn_commit(txn), ICM_ENOTFOUND);
    icm_txn_free(txn);
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_ref(txn, "t1", ICM_REF_BRANCH, ICM_TXN_REF_REPLACE | ICM_TXN_REF_SNAPSHOT_ID,
                            s2, NULL));
    assert_int_equal(icm_txn_commit(txn), ICM_EINVALID); /* t1 is a tag */
    icm_txn_free(txn);

    /* replace tag t1 to s2 keeping its retention; remove b1 */
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_ref(txn, "t1", ICM_REF_TAG, ICM_TXN_REF_REPLACE | ICM_TXN_REF_SNAPSHOT_ID,
                            s2, NULL));
    icmt_ok(icm_txn_remove_ref(txn, "b1"));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    md = icm_table_get_metadata(f->t);
    r = icm_table_metadata_ref_by_name(md, "t1");
    assert_int_equal(r->snapshot_id, s2);
    assert_true(r->has_max_ref_age_ms && r->max_ref_age_ms == 86400000LL);
    assert_null(icm_table_metadata_ref_by_name(md, "b1"));

    /* rollback to the ancestor s1 */
    size_t log_before = icm_table_metadata_snapshot_log_count(md);
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_current_snapshot(txn, s1, true));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    md = icm_table_get_metadata(f->t);
    assert_int_equal(current(f->t)->snapshot_id, s1);
    assert_int_equal(icm_table_metadata_ref_by_name(md, "main")->snapshot_id, s1);
    assert_int_equal(icm_table_metadata_snapshot_log_count(md), log_before + 1);
    assert_int_equal(icm_table_metadata_snapshot_log_at(md, log_before)->snapshot_id, s1);
    /* s2 is not an ancestor of s1: rollback refused, set-current allowed */
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_current_snapshot(txn, s2, true));
    assert_int_equal(icm_txn_commit(txn), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "not an ancestor"));
    icm_txn_free(txn);
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_current_snapshot(txn, s2, false));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    assert_int_equal(current(f->t)->snapshot_id, s2);
    /* replacing branch main moves the current snapshot */
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_set_ref(txn, "main", ICM_REF_BRANCH, ICM_TXN_REF_REPLACE | ICM_TXN_REF_SNAPSHOT_ID,
                            s1, NULL));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    assert_int_equal(current(f->t)->snapshot_id, s1);
    free(a);
    free(b);
}

typedef struct fn_state {
    int calls;
} fn_state;

static int set_marker(icm_table_metadata *md, void *payload)
{
    fn_state *s = payload;
    s->calls++;
    return icm_table_metadata_set_property(md, "marker", "set");
}

static void txn_metadata_hook_reapplied_on_retry(void **state)
{
    tfx *f = *state;
    other_writer w = {f, NULL, 0, true, 0};
    icmt_ok(icm_table_load(&w.t, f->other, "ns.tbl"));
    fn_state s = {0};
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_update_metadata(txn, set_marker, &s));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", other_hook, &w);
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    assert_int_equal(s.calls, 2);
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    assert_string_equal(icm_table_metadata_property(md, "marker"), "set");
    assert_string_equal(icm_table_metadata_property(md, "other"), "1");
    assert_int_equal(count_suffix(f->mdir, ".avro"), 0);
    icm_table_free(w.t);
}

/* ---- add-files and the Parquet footer ---- */

static void txn_add_parquet_files(void **state)
{
    tfx *f = *state;
    char *p = icmt_sprintf("%s/p1.parquet", f->cdir);
    write_parquet_stub(p, 42);
    char *big = icmt_sprintf("%s/p2.parquet", f->cdir);
    write_parquet_stub(big, 3000000000LL); /* needs a multi-byte varint */
    char *junk = caller_file(f, "junk.parquet", 64);
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    assert_int_equal(icm_txn_add_parquet_file(txn, junk), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "not a readable Parquet file"));
    assert_string_equal(icm_error_last()->location, junk);
    char *missing = icmt_sprintf("%s/none.parquet", f->cdir);
    assert_int_equal(icm_txn_add_parquet_file(txn, missing), ICM_ENOTFOUND);
    icmt_ok(icm_txn_add_parquet_file(txn, p));
    icmt_ok(icm_txn_add_parquet_file(txn, big));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    const icm_snapshot *snap = current(f->t);
    char want[32];
    snprintf(want, sizeof want, "%lld", 42LL + 3000000000LL);
    assert_summary(f->t, snap, "added-records", want);
    entry_rows er;
    read_entries(f->io, snap, &er);
    assert_int_equal(er.n, 2);
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    assert_string_equal(icm_table_metadata_property(md, "schema.name-mapping.default"),
                        "[{\"field-id\":1,\"names\":[\"id\"]},{\"field-id\":2,\"names\":[\"data\"]}]");
    /* adding the same file again is refused at commit; nothing of ours remains */
    int avro_before = count_suffix(f->mdir, ".avro");
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_add_parquet_file(txn, p));
    assert_int_equal(icm_txn_commit(txn), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "already a live file"));
    icm_txn_free(txn);
    assert_int_equal(count_suffix(f->mdir, ".avro"), avro_before);
    /* the same new file twice in one transaction is refused too */
    char *p3 = icmt_sprintf("%s/p3.parquet", f->cdir);
    write_parquet_stub(p3, 1);
    icmt_ok(icm_txn_new(&txn, f->t));
    icmt_ok(icm_txn_add_parquet_file(txn, p3));
    icmt_ok(icm_txn_add_parquet_file(txn, p3));
    assert_int_equal(icm_txn_commit(txn), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "twice"));
    icm_txn_free(txn);
    assert_int_equal(count_suffix(f->mdir, ".avro"), avro_before);
    assert_true(icmt_file_exists(p3));
    free(p3);
    assert_true(icmt_file_exists(p) && icmt_file_exists(big) && icmt_file_exists(junk));
    free(p);
    free(big);
    free(junk);
    free(missing);
}

static void parquet_footer_truncations_are_errors(void **state)
{
    (void)state;
    /* A FileMetaData with a nested list, a map-free struct and num_rows last. */
    const uint8_t footer[] = {0x15, 0x02, 0x19, 0x2C, 0x48, 0x01, 'a', 0x00, 0x48, 0x01, 'b',
                              0x00, 0x16, 0xF4, 0x03, 0x00};
    int64_t rows = -1;
    icmt_ok(icm__parquet_footer_num_rows(footer, sizeof footer, "f", &rows));
    assert_int_equal(rows, 250); /* varint 0xF4 0x03 = 500, zigzag-decoded 250 */
    /* Every cut before the end of the num_rows varint is an error, never a wrong count. */
    for (size_t n = 0; n < sizeof footer - 1; n++)
        assert_int_equal(icm__parquet_footer_num_rows(footer, n, "f", &rows), ICM_EINVALID);
    const uint8_t no_rows[] = {0x15, 0x02, 0x00};
    assert_int_equal(icm__parquet_footer_num_rows(no_rows, sizeof no_rows, "f", &rows),
                     ICM_EINVALID);
    const uint8_t wrong_type[] = {0x35, 0x02, 0x00}; /* field 3 as i32 */
    assert_int_equal(icm__parquet_footer_num_rows(wrong_type, sizeof wrong_type, "f", &rows),
                     ICM_EINVALID);
    uint8_t deep[300];
    for (size_t i = 0; i < sizeof deep; i++)
        deep[i] = 0x1C; /* struct in struct in ... */
    assert_int_equal(icm__parquet_footer_num_rows(deep, sizeof deep, "f", &rows), ICM_EINVALID);
}

/* ---- data file locations ---- */

static void txn_data_locations(void **state)
{
    tfx *f = *state;
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, f->t));
    char *loc = NULL;
    icmt_ok(icm_txn_new_data_file(&loc, txn, NULL, "parquet"));
    char *prefix = icmt_sprintf("%s/data/00000-0-", f->tdir);
    assert_true(strncmp(loc, prefix, strlen(prefix)) == 0);
    assert_string_equal(loc + strlen(loc) - strlen("-00001.parquet"), "-00001.parquet");
    icm_free(loc);
    icmt_ok(icm_txn_new_data_file(&loc, txn, "day=2024-01-01", "parquet"));
    free(prefix);
    prefix = icmt_sprintf("%s/data/day=2024-01-01/00000-0-", f->tdir);
    assert_true(strncmp(loc, prefix, strlen(prefix)) == 0);
    icm_free(loc);
    free(prefix);
    icm_txn_free(txn);

    /* Object storage: expected directories from PyIceberg's mmh3-based provider. */
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(f->t)));
    icmt_ok(icm_table_metadata_set_property(md, "write.data.path", "s3://bucket/base/"));
    icmt_ok(icm__txn_data_location(md, NULL, "a", &loc));
    assert_string_equal(loc, "s3://bucket/base/a");
    icm__free(loc);
    icmt_ok(icm_table_metadata_set_property(md, "write.object-storage.enabled", "true"));
    icmt_ok(icm__txn_data_location(md, NULL, "a", &loc));
    assert_string_equal(loc, "s3://bucket/base/0101/0110/1001/10110010/a");
    icm__free(loc);
    icmt_ok(icm__txn_data_location(md, NULL, "test.parquet", &loc));
    assert_string_equal(loc, "s3://bucket/base/0110/1010/0011/11101000/test.parquet");
    icm__free(loc);
    icmt_ok(icm__txn_data_location(md, "day=2024-01-01", "f.parquet", &loc));
    assert_string_equal(loc, "s3://bucket/base/1001/1100/1001/00001110/day=2024-01-01/f.parquet");
    icm__free(loc);
    icmt_ok(icm_table_metadata_set_property(md, "write.object-storage.partitioned-paths",
                                            "false"));
    icmt_ok(icm__txn_data_location(md, "day=2024-01-01", "a", &loc));
    assert_string_equal(loc, "s3://bucket/base/0101/0110/1001/10110010-a");
    icm__free(loc);
    assert_int_equal(icm__murmur3_32("a", 1), 1009084850u);
    assert_int_equal(icm__murmur3_32("test.parquet", 12), (uint32_t)-1334402072);
    icm_table_metadata_free(md);
}

/* ---- v3 row lineage ---- */

static char *register_v3_table(tfx *f)
{
    const char *loc = icm_table_get_metadata_location(f->t);
    size_t len = 0;
    char *text = icmt_read_file(loc, &len);
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, 0, &jerr);
    assert_non_null(doc);
    json_object_set_new(doc, "format-version", json_integer(3));
    json_object_set_new(doc, "next-row-id", json_integer(0));
    char *out = json_dumps(doc, JSON_COMPACT);
    char *v3loc = icmt_sprintf("%s/00001-00000000-0000-0000-0000-000000000003.metadata.json",
                               f->mdir);
    icmt_write_file(v3loc, out, strlen(out));
    free(out);
    json_decref(doc);
    free(text);
    /* (another version of ns.t's metadata, at its location: registered as a shared table) */
    icmt_ok(icm_catalog_register_table_flags(f->cat, "ns.t3", v3loc, ICM_REGISTER_ALLOW_SHARED));
    return v3loc;
}

static void txn_v3_row_lineage(void **state)
{
    tfx *f = *state;
    char *v3loc = register_v3_table(f);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, f->cat, "ns.t3"));
    assert_int_equal(icm_table_metadata_format_version(icm_table_get_metadata(t)), 3);
    char *a = caller_file(f, "a.parquet", 100), *b = caller_file(f, "b.parquet", 50);
    char *c = caller_file(f, "c.parquet", 70);
    icm_data_file ab[] = {make_df(a, 10, 100), make_df(b, 5, 50)};
    append_files(t, ab, 2);
    const icm_snapshot *s = current(t);
    int64_t next = -1;
    assert_true(s->has_first_row_id && s->first_row_id == 0);
    assert_true(s->has_added_rows && s->added_rows == 15);
    assert_true(icm_table_metadata_next_row_id(&next, icm_table_get_metadata(t)));
    assert_int_equal(next, 15);
    icm_data_file cc[] = {make_df(c, 7, 70)};
    append_files(t, cc, 1);
    s = current(t);
    assert_int_equal(s->first_row_id, 15);
    assert_int_equal(s->added_rows, 7);
    assert_true(icm_table_metadata_next_row_id(&next, icm_table_get_metadata(t)));
    assert_int_equal(next, 22);
    mf_rows rows;
    read_list(f->io, s->manifest_list, &rows);
    assert_int_equal(rows.n, 2);
    assert_true(rows.rows[0].has_first_row_id && rows.rows[0].first_row_id == 15);
    assert_true(rows.rows[1].has_first_row_id && rows.rows[1].first_row_id == 0);
    free_rows(&rows);
    entry_rows er;
    read_entries(f->io, s, &er);
    assert_int_equal(find_entry(&er, c)->first_row_id, 15);
    assert_int_equal(find_entry(&er, a)->first_row_id, 0);
    assert_int_equal(find_entry(&er, b)->first_row_id, 10);

    /* Deleting b rewrites S1's manifest: a keeps its row ids; the rewritten manifest gets a
     * fresh first_row_id range covering its existing rows (as Java's list writer assigns). */
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    icmt_ok(icm_txn_delete_file(txn, b));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    s = current(t);
    assert_int_equal(s->first_row_id, 22);
    assert_int_equal(s->added_rows, 10);
    read_entries(f->io, s, &er);
    assert_true(find_entry(&er, a)->has_first_row_id);
    assert_int_equal(find_entry(&er, a)->first_row_id, 0);
    assert_int_equal(find_entry(&er, c)->first_row_id, 15);
    assert_int_equal(missing_referenced_files(f->io, icm_table_get_metadata(t), NULL), 0);
    icm_table_free(t);
    free(v3loc);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(txn_append_builds_snapshots, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_conflict_retries_and_cleans_superseded, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_retries_exhausted_delete_every_owned_file,
                                        tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_zero_retries_fail_at_once, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_unknown_keeps_every_file, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(expiry_reconciled_after_a_lost_answer_deletes_nothing,
                                        tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_applied_then_lost_is_success, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_io_error_before_send_deletes_owned, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_abort_and_free_delete_owned_only, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_bad_input_is_refused, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_delete_and_replace_files, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_concurrent_delete_fails_validation, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_delete_retry_cleans_rewritten_manifests, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_properties_refs_rollback, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_metadata_hook_reapplied_on_retry, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_add_parquet_files, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(test_data_loss_append_file_of_a_trashed_file, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test(parquet_footer_truncations_are_errors),
        cmocka_unit_test_setup_teardown(txn_data_locations, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(txn_v3_row_lineage, tfx_setup, tfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
