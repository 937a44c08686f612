/*
 * tests/unit/test_catalog_common.h: the SQL catalog test suite shared by test_catalog.c (SQLite)
 * and test_catalog_pg.c (PostgreSQL): commit compare-and-swap, FAILED vs UNKNOWN with the
 * fault-injecting store, the reconcile rule, metadata retention, codecs, register/drop.
 * Each test gets a fresh warehouse directory and a catalog name of its own, so PostgreSQL runs
 * never see each other's rows.
 */
#ifndef ICM_TEST_CATALOG_COMMON_H
#define ICM_TEST_CATALOG_COMMON_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog/catalog_internal.h"
#include "catalog/sql/store.h"
#include "icemaint/catalog.h"
#include "icemaint/fileio.h"
#include "icemaint/metadata.h"
#include "testutil.h"

#define SCHEMA_JSON                                                                          \
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["                                      \
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"                        \
    "{\"id\":2,\"name\":\"data\",\"required\":false,\"type\":\"string\"}]}"

typedef struct sqlfx {
    char *dir;            /* warehouse (temp dir) */
    icm_fileio *io;
    char *uri;            /* catalog database */
    char *name;           /* catalog name, unique per test */
    icm__sql_store *fault;/* fault wrapper inside `cat` (borrowed) */
    icm_catalog *cat;     /* handle under test: store behind the fault wrapper */
    icm_catalog *other;   /* a second, independent handle: "another writer" */
    icm_table *t;         /* ns.tbl loaded through cat */
} sqlfx;

/* Set by the including file: returns a new URI for a fresh catalog database, or NULL to skip. */
static char *sqlfx_uri(const char *dir);

static int count_name_cb(const char *name, void *payload)
{
    (void)name;
    (*(int *)payload)++;
    return 0;
}

static int sqlfx_setup(void **state)
{
    static unsigned counter;
    sqlfx *f = calloc(1, sizeof *f);
    f->dir = icmt_mkdtemp();
    f->uri = sqlfx_uri(f->dir);
    if (f->uri == NULL) {
        icmt_rmtree(f->dir);
        free(f->dir);
        free(f);
        return -1;
    }
    f->name = icmt_sprintf("cat_%ld_%u", (long)getpid(), counter++);
    icmt_ok(icm_fileio_local_new(&f->io));
    icm__sql_store *store = NULL;
    icmt_ok(icm__sql_store_open_uri(&store, f->uri));
    icmt_ok(icm__sql_store_fault_new(&f->fault, store));
    icmt_ok(icm__catalog_open_sql_store(&f->cat, f->name, f->fault, f->dir, f->io, NULL, 0));
    icmt_ok(icm_catalog_open_sql(&f->other, f->name, f->uri, f->dir, f->io, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(f->cat, "ns"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, f->cat, "ns.tbl", &o));
    icmt_ok(icm_table_load(&f->t, f->cat, "ns.tbl"));
    *state = f;
    return 0;
}

static int sqlfx_teardown(void **state)
{
    sqlfx *f = *state;
    icm_table_free(f->t);
    /* Leave shared (PostgreSQL) databases clean: drop this catalog's rows. */
    icm__sql_store *store = NULL;
    if (icm__sql_store_open_uri(&store, f->uri) == 0) {
        const char *p[] = {f->name};
        int64_t ch;
        bool maybe;
        store->methods->exec(store, "DELETE FROM iceberg_tables WHERE catalog_name = ?", p, 1,
                             &ch, &maybe);
        store->methods->exec(store,
                             "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ?",
                             p, 1, &ch, &maybe);
        store->methods->free(store);
    }
    icm_catalog_free(f->cat);
    icm_catalog_free(f->other);
    icm_fileio_free(f->io);
    icmt_rmtree(f->dir);
    free(f->dir);
    free(f->uri);
    free(f->name);
    free(f);
    return 0;
}

/* Local path of a location written by the local FileIO (plain paths here). */
static int file_exists_at(const char *location)
{
    return icmt_file_exists(location);
}

static int count_metadata_files(const sqlfx *f)
{
    char *dir = icmt_sprintf("%s/ns/tbl/metadata", f->dir);
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    if (d != NULL)
        closedir(d);
    free(dir);
    return n;
}

/* A change to commit: the current metadata plus one property. */
static icm_table_metadata *changed(const icm_table *t, const char *key, const char *value)
{
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(md, key, value));
    return md;
}

static int commit_change(icm_table *t, const char *key, const char *value)
{
    icm_table_metadata *md = changed(t, key, value);
    int rc = icm_table_commit(t, md);
    icm_table_metadata_free(md);
    return rc;
}

static char *current_location(icm_catalog *cat)
{
    char *loc = NULL;
    icmt_ok(icm_catalog_load_table_location(&loc, cat, "ns.tbl"));
    char *copy = strdup(loc);
    icm_free(loc);
    return copy;
}

/* ---- tests ---- */

static void sql_create_load_list(void **state)
{
    sqlfx *f = *state;
    const char *loc = icm_table_get_metadata_location(f->t);
    char *prefix = icmt_sprintf("%s/ns/tbl/metadata/00000-", f->dir);
    assert_true(strncmp(loc, prefix, strlen(prefix)) == 0);
    assert_string_equal(loc + strlen(loc) - strlen(".metadata.json"), ".metadata.json");
    assert_int_equal(strlen(loc) - strlen(prefix) - strlen(".metadata.json"), 36); /* uuid */
    free(prefix);
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    assert_int_equal(icm_table_metadata_format_version(md), 2);
    char *want_location = icmt_sprintf("%s/ns/tbl", f->dir);
    assert_string_equal(icm_table_metadata_location(md), want_location);
    free(want_location);
    assert_int_equal(icm_table_metadata_snapshot_count(md), 0);

    int n = 0;
    icmt_ok(icm_catalog_list_namespaces(f->cat, NULL, count_name_cb, &n));
    assert_int_equal(n, 1);
    n = 0;
    icmt_ok(icm_catalog_list_tables(f->cat, "ns", count_name_cb, &n));
    assert_int_equal(n, 1);
    assert_int_equal(icm_catalog_list_tables(f->cat, "nope", count_name_cb, &n), ICM_ENOTFOUND);
    assert_int_equal(icm_catalog_create_namespace(f->cat, "ns"), ICM_EEXISTS);
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    assert_int_equal(icm_catalog_create_table(NULL, f->cat, "ns.tbl", &o), ICM_EEXISTS);
    assert_int_equal(count_metadata_files(f), 1); /* the refused create left no file */
    assert_int_equal(icm_catalog_create_table(NULL, f->cat, "missing.tbl", &o), ICM_ENOTFOUND);
    icm_table *t = NULL;
    assert_int_equal(icm_table_load(&t, f->cat, "ns.nope"), ICM_ENOTFOUND);
}

static void sql_commit_swaps_and_logs(void **state)
{
    sqlfx *f = *state;
    char *base = strdup(icm_table_get_metadata_location(f->t));
    int64_t base_updated = icm_table_metadata_last_updated_ms(icm_table_get_metadata(f->t));
    icmt_ok(commit_change(f->t, "k", "v1"));
    const char *now = icm_table_get_metadata_location(f->t);
    char *prefix = icmt_sprintf("%s/ns/tbl/metadata/00001-", f->dir);
    assert_true(strncmp(now, prefix, strlen(prefix)) == 0);
    free(prefix);
    char *cur = current_location(f->other);
    assert_string_equal(cur, now);
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    assert_string_equal(icm_table_metadata_file(md), now);
    assert_string_equal(icm_table_metadata_property(md, "k"), "v1");
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 1);
    const icm_metadata_log_entry *e = icm_table_metadata_metadata_log_at(md, 0);
    assert_string_equal(e->metadata_file, base);
    assert_int_equal(e->timestamp_ms, base_updated);
    assert_true(icm_table_metadata_last_updated_ms(md) >= base_updated);
    assert_true(file_exists_at(now));
    assert_int_equal(count_metadata_files(f), 2);
    free(cur);
    free(base);
}

static void sql_unchanged_commit_is_noop(void **state)
{
    sqlfx *f = *state;
    char *base = strdup(icm_table_get_metadata_location(f->t));
    icm_table_metadata *same = NULL;
    icmt_ok(icm_table_metadata_copy(&same, icm_table_get_metadata(f->t)));
    uint64_t before = icm__sql_store_fault_statements(f->fault);
    icmt_ok(icm_table_commit(f->t, same));
    assert_int_equal(icm__sql_store_fault_statements(f->fault), before); /* no swap tried */
    assert_string_equal(icm_table_get_metadata_location(f->t), base);
    assert_int_equal(count_metadata_files(f), 1);
    icm_table_metadata_free(same);
    free(base);
}

static void sql_cas_conflict_fails_and_deletes(void **state)
{
    sqlfx *f = *state;
    icm_table *t2 = NULL;
    icmt_ok(icm_table_load(&t2, f->other, "ns.tbl"));
    icmt_ok(commit_change(t2, "writer", "two"));
    char *winner = strdup(icm_table_get_metadata_location(t2));
    assert_int_equal(commit_change(f->t, "writer", "one"), ICM_ECOMMIT_FAILED);
    assert_non_null(strstr(icm_error_last()->message, "no longer at base"));
    assert_int_equal(count_metadata_files(f), 2); /* base + winner: ours was deleted */
    char *cur = current_location(f->other);
    assert_string_equal(cur, winner);
    /* After a refresh the loser commits on top of the winner. */
    icmt_ok(icm_table_refresh(f->t));
    icmt_ok(commit_change(f->t, "writer", "one"));
    assert_int_equal(count_metadata_files(f), 3);
    free(cur);
    free(winner);
    icm_table_free(t2);
}

static void sql_lost_before_is_failed(void **state)
{
    sqlfx *f = *state;
    char *base = strdup(icm_table_get_metadata_location(f->t));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_BEFORE, "UPDATE", NULL, NULL);
    assert_int_equal(commit_change(f->t, "k", "v"), ICM_ECOMMIT_FAILED);
    assert_int_equal(count_metadata_files(f), 1);
    char *cur = current_location(f->other);
    assert_string_equal(cur, base);
    assert_string_equal(icm_table_get_metadata_location(f->t), base);
    free(cur);
    free(base);
}

static void sql_lost_after_apply_reconciles_to_success(void **state)
{
    sqlfx *f = *state;
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_AFTER_APPLY, "UPDATE", NULL, NULL);
    icmt_ok(commit_change(f->t, "k", "v"));
    char *cur = current_location(f->other);
    assert_string_equal(cur, icm_table_get_metadata_location(f->t));
    assert_string_equal(icm_table_metadata_property(icm_table_get_metadata(f->t), "k"), "v");
    assert_int_equal(count_metadata_files(f), 2);
    /* said so, and marked so a caller that deletes after commits deletes nothing */
    assert_true(icm_table_last_commit_reconciled(f->t));
    assert_int_equal(icm_table_commit_warning_count(f->t), 1);
    assert_non_null(strstr(icm_table_commit_warning(f->t, 0), "the commit's answer was lost"));
    free(cur);
}

static void sql_lost_unapplied_stays_unknown(void **state)
{
    sqlfx *f = *state;
    char *base = strdup(icm_table_get_metadata_location(f->t));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_UNAPPLIED, "UPDATE", NULL, NULL);
    assert_int_equal(commit_change(f->t, "k", "v"), ICM_ECOMMIT_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "was kept"));
    assert_false(icm_table_last_commit_reconciled(f->t));
    assert_int_equal(count_metadata_files(f), 2); /* kept: it may still become current */
    char *cur = current_location(f->other);
    assert_string_equal(cur, base);
    assert_string_equal(icm_table_get_metadata_location(f->t), base);
    free(cur);
    free(base);
}

typedef struct other_commit {
    sqlfx *f;
    bool on_top; /* reload first (sees ours) instead of committing from the old base */
    icm_table *from_base;
    char *location;
} other_commit;

static void other_writer_commits(void *payload)
{
    other_commit *oc = payload;
    icm_table *t = oc->from_base;
    if (oc->on_top)
        icmt_ok(icm_table_refresh(t));
    icmt_ok(commit_change(t, "other", "yes"));
    oc->location = strdup(icm_table_get_metadata_location(t));
}

static void sql_unknown_then_other_lineage_is_failed(void **state)
{
    sqlfx *f = *state;
    other_commit oc = {f, false, NULL, NULL};
    icmt_ok(icm_table_load(&oc.from_base, f->other, "ns.tbl"));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_UNAPPLIED, "UPDATE",
                             other_writer_commits, &oc);
    assert_int_equal(commit_change(f->t, "k", "v"), ICM_ECOMMIT_FAILED);
    assert_non_null(strstr(icm_error_last()->message, "another commit replaced base"));
    assert_int_equal(count_metadata_files(f), 2); /* base + the other's; ours deleted */
    char *cur = current_location(f->other);
    assert_string_equal(cur, oc.location);
    free(cur);
    free(oc.location);
    icm_table_free(oc.from_base);
}

static void sql_unknown_then_ours_in_log_is_success(void **state)
{
    sqlfx *f = *state;
    other_commit oc = {f, true, NULL, NULL};
    icmt_ok(icm_table_load(&oc.from_base, f->other, "ns.tbl"));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_AFTER_APPLY, "UPDATE",
                             other_writer_commits, &oc);
    icmt_ok(commit_change(f->t, "k", "v"));
    /* The table moved on to the other writer's file, whose log holds ours. */
    assert_string_equal(icm_table_get_metadata_location(f->t), oc.location);
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    assert_string_equal(icm_table_metadata_property(md, "k"), "v");
    assert_string_equal(icm_table_metadata_property(md, "other"), "yes");
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 2);
    assert_int_equal(count_metadata_files(f), 3);
    free(oc.location);
    icm_table_free(oc.from_base);
}

/* The other writer commits twice with previous-versions-max=1: our base drops out of the log,
 * so nothing proves that ours cannot still apply → UNKNOWN, file kept. */
static void other_writer_commits_twice_trimming(void *payload)
{
    other_commit *oc = payload;
    icm_table_metadata *md = changed(oc->from_base, "write.metadata.previous-versions-max", "1");
    icmt_ok(icm_table_commit(oc->from_base, md));
    icm_table_metadata_free(md);
    icmt_ok(commit_change(oc->from_base, "other", "again"));
}

static void sql_unknown_with_base_trimmed_stays_unknown(void **state)
{
    sqlfx *f = *state;
    other_commit oc = {f, false, NULL, NULL};
    icmt_ok(icm_table_load(&oc.from_base, f->other, "ns.tbl"));
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_UNAPPLIED, "UPDATE",
                             other_writer_commits_twice_trimming, &oc);
    assert_int_equal(commit_change(f->t, "k", "v"), ICM_ECOMMIT_UNKNOWN);
    assert_int_equal(count_metadata_files(f), 4); /* base, two of the other's, ours kept */
    icm_table_free(oc.from_base);
}

/* The table disappears while the outcome is open: reloading proves nothing → UNKNOWN. */
static void drop_the_table(void *payload)
{
    sqlfx *f = payload;
    icmt_ok(icm_catalog_drop_table(f->other, "ns.tbl"));
}

static void sql_unknown_with_table_gone_stays_unknown(void **state)
{
    sqlfx *f = *state;
    icm__sql_store_fault_arm(f->fault, ICM__SQL_FAULT_LOST_UNAPPLIED, "UPDATE", drop_the_table, f);
    assert_int_equal(commit_change(f->t, "k", "v"), ICM_ECOMMIT_UNKNOWN);
    assert_int_equal(count_metadata_files(f), 2);
}

static void sql_static_table_refuses_commit(void **state)
{
    sqlfx *f = *state;
    icm_table *st = NULL;
    icmt_ok(icm_table_open_static(&st, f->io, icm_table_get_metadata_location(f->t)));
    assert_true(icm_table_is_read_only(st));
    assert_null(icm_table_get_catalog(st));
    assert_int_equal(commit_change(st, "k", "v"), ICM_EREADONLY);
    assert_non_null(strstr(icm_error_last()->message, "read-only"));
    assert_int_equal(count_metadata_files(f), 1);
    icm_table_free(st);
}

/* With delete-after-commit and previous-versions-max=2, each commit deletes exactly the file
 * that fell out of the log, and nothing else. */
static void sql_previous_versions_max_deletes_dropped_files(void **state)
{
    sqlfx *f = *state;
    char *files[7] = {0};
    files[0] = strdup(icm_table_get_metadata_location(f->t));
    icm_table_metadata *md = changed(f->t, "write.metadata.delete-after-commit.enabled", "true");
    icmt_ok(icm_table_metadata_set_property(md, "write.metadata.previous-versions-max", "2"));
    icmt_ok(icm_table_commit(f->t, md));
    icm_table_metadata_free(md);
    files[1] = strdup(icm_table_get_metadata_location(f->t));
    for (int i = 2; i < 7; i++) {
        char v[8];
        snprintf(v, sizeof v, "%d", i);
        icmt_ok(commit_change(f->t, "n", v));
        files[i] = strdup(icm_table_get_metadata_location(f->t));
        const icm_table_metadata *cur = icm_table_get_metadata(f->t);
        assert_int_equal(icm_table_metadata_metadata_log_count(cur), 2);
        assert_string_equal(icm_table_metadata_metadata_log_at(cur, 0)->metadata_file,
                            files[i - 2]);
        assert_string_equal(icm_table_metadata_metadata_log_at(cur, 1)->metadata_file,
                            files[i - 1]);
        for (int k = 0; k <= i; k++)
            assert_int_equal(file_exists_at(files[k]), k >= i - 2);
    }
    assert_int_equal(count_metadata_files(f), 3);
    for (int i = 0; i < 7; i++)
        free(files[i]);
}

/* The commit's warning that names `file` (NULL when none does). */
static const char *warning_naming(const icm_table *t, const char *file)
{
    for (size_t i = 0; i < icm_table_commit_warning_count(t); i++)
        if (strstr(icm_table_commit_warning(t, i), file) != NULL)
            return icm_table_commit_warning(t, i);
    return NULL;
}

/* A table registered at one of ns.tbl's older metadata files (a clone) keeps it, and the file
 * in its metadata-log: retention deletes only ns.tbl's own old files and warns for the rest
 * (docs/semantics.md#transaction-cleanup). */
static void sql_retention_keeps_another_tables_metadata(void **state)
{
    sqlfx *f = *state;
    char *files[5] = {0};
    files[0] = strdup(icm_table_get_metadata_location(f->t));
    icmt_ok(commit_change(f->t, "k", "1"));
    files[1] = strdup(icm_table_get_metadata_location(f->t));
    icmt_ok(icm_catalog_register_table_flags(f->other, "ns.clone", files[1],
                                             ICM_REGISTER_ALLOW_SHARED));
    icm_table_metadata *md = changed(f->t, "write.metadata.delete-after-commit.enabled", "true");
    icmt_ok(icm_table_metadata_set_property(md, "write.metadata.previous-versions-max", "1"));
    icmt_ok(icm_table_commit(f->t, md)); /* drops files[0]: in the clone's log */
    icm_table_metadata_free(md);
    files[2] = strdup(icm_table_get_metadata_location(f->t));
    assert_int_equal(icm_table_commit_warning_count(f->t), 1);
    const char *w = warning_naming(f->t, files[0]);
    assert_non_null(w);
    assert_non_null(strstr(w, "metadata-log of table ns.clone"));
    icmt_ok(commit_change(f->t, "k", "2")); /* drops files[1]: the clone's current file */
    files[3] = strdup(icm_table_get_metadata_location(f->t));
    assert_int_equal(icm_table_commit_warning_count(f->t), 1);
    w = warning_naming(f->t, files[1]);
    assert_non_null(w);
    assert_non_null(strstr(w, "current metadata file of table ns.clone"));
    icmt_ok(commit_change(f->t, "k", "3")); /* drops files[2]: ns.tbl's own, deleted */
    files[4] = strdup(icm_table_get_metadata_location(f->t));
    assert_int_equal(icm_table_commit_warning_count(f->t), 0);
    assert_null(icm_table_commit_warning(f->t, 0));
    for (int k = 0; k < 5; k++)
        assert_int_equal(file_exists_at(files[k]), k != 2);
    icm_table *clone = NULL;
    icmt_ok(icm_table_load(&clone, f->other, "ns.clone"));
    assert_string_equal(icm_table_get_metadata_location(clone), files[1]);
    icm_table_free(clone);
    for (int k = 0; k < 5; k++)
        free(files[k]);
}

static void sql_retention_without_delete_keeps_files(void **state)
{
    sqlfx *f = *state;
    icm_table_metadata *md = changed(f->t, "write.metadata.previous-versions-max", "1");
    icmt_ok(icm_table_commit(f->t, md));
    icm_table_metadata_free(md);
    for (int i = 0; i < 3; i++)
        icmt_ok(commit_change(f->t, "n", i == 0 ? "a" : i == 1 ? "b" : "c"));
    assert_int_equal(icm_table_metadata_metadata_log_count(icm_table_get_metadata(f->t)), 1);
    assert_int_equal(count_metadata_files(f), 5); /* untracked files stay for orphan removal */
}

static void sql_gzip_and_metadata_path(void **state)
{
    sqlfx *f = *state;
    icm_table_metadata *md = changed(f->t, "write.metadata.compression-codec", "gzip");
    icmt_ok(icm_table_commit(f->t, md));
    icm_table_metadata_free(md);
    const char *loc = icm_table_get_metadata_location(f->t);
    char *gz_prefix = icmt_sprintf("%s/ns/tbl/metadata/00001-", f->dir);
    assert_true(strncmp(loc, gz_prefix, strlen(gz_prefix)) == 0);
    free(gz_prefix);
    assert_string_equal(loc + strlen(loc) - strlen(".gz.metadata.json"), ".gz.metadata.json");
    size_t len = 0;
    char *raw = icmt_read_file(loc, &len);
    assert_true(len > 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b);
    free(raw);
    icm_table *again = NULL;
    icmt_ok(icm_table_load(&again, f->other, "ns.tbl"));
    assert_string_equal(icm_table_metadata_property(icm_table_get_metadata(again),
                                                    "write.metadata.compression-codec"),
                        "gzip");
    icm_table_free(again);

    char *custom = icmt_sprintf("%s/custom-md", f->dir);
    md = changed(f->t, "write.metadata.compression-codec", "none");
    icmt_ok(icm_table_metadata_set_property(md, "write.metadata.path", custom));
    icmt_ok(icm_table_commit(f->t, md));
    icm_table_metadata_free(md);
    loc = icm_table_get_metadata_location(f->t);
    char *prefix = icmt_sprintf("%s/00002-", custom);
    assert_true(strncmp(loc, prefix, strlen(prefix)) == 0);
    assert_true(file_exists_at(loc));
    free(prefix);
    free(custom);

    md = changed(f->t, "write.metadata.compression-codec", "lz4");
    assert_int_equal(icm_table_commit(f->t, md), ICM_EINVALID);
    icm_table_metadata_free(md);
}

static void sql_register_and_drop(void **state)
{
    sqlfx *f = *state;
    const char *loc = icm_table_get_metadata_location(f->t);
    /* ns.t uses this metadata file: a second table on it is refused unless allowed */
    assert_int_equal(icm_catalog_register_table(f->cat, "ns.copy", loc), ICM_EREFUSED);
    const unsigned shared = ICM_REGISTER_ALLOW_SHARED;
    icmt_ok(icm_catalog_register_table_flags(f->cat, "ns.copy", loc, shared));
    assert_int_equal(icm_catalog_register_table_flags(f->cat, "ns.copy", loc, shared),
                     ICM_EEXISTS);
    assert_int_equal(icm_catalog_register_table(f->cat, "nope.copy", loc), ICM_ENOTFOUND);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, f->other, "ns.copy"));
    assert_string_equal(icm_table_get_metadata_location(t), loc);
    assert_string_equal(icm_table_get_identifier(t), "ns.copy");
    icm_table_free(t);
    icmt_ok(icm_catalog_drop_table(f->cat, "ns.copy"));
    assert_int_equal(icm_catalog_drop_table(f->cat, "ns.copy"), ICM_ENOTFOUND);
    assert_int_equal(icm_table_load(&t, f->other, "ns.copy"), ICM_ENOTFOUND);
    assert_true(file_exists_at(loc)); /* no purge */
}

/* ---- every pointer of the database ---- */

typedef struct seen_tables {
    const char *names[2]; /* the catalog names this test owns */
    int count;
    char *last; /* "catalog:ns.name" of the last table of ours seen */
    bool located;
} seen_tables;

static int note_other_table(const icm__other_table *t, void *payload)
{
    seen_tables *s = payload;
    if (strcmp(t->catalog_name, s->names[0]) != 0 && strcmp(t->catalog_name, s->names[1]) != 0)
        return 0; /* a PostgreSQL database shared with other runs */
    s->count++;
    free(s->last);
    s->last = icmt_sprintf("%s:%s.%s", t->catalog_name, t->ns, t->name);
    s->located = t->roots[0] != NULL;
    return 0;
}

static void sql_other_tables_span_every_catalog_name(void **state)
{
    sqlfx *f = *state;
    char *name_b = icmt_sprintf("%s_b", f->name);
    icm_catalog *b = NULL;
    icmt_ok(icm_catalog_open_sql(&b, name_b, f->uri, f->dir, f->io, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(b, "ns"));
    char *loc = icmt_sprintf("%s/b/ns/tbl", f->dir);
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, loc, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, b, "ns.tbl", &o));
    /* the same identifier in another catalog_name of the database is another table */
    seen_tables s = {{f->name, name_b}, 0, NULL, false};
    icmt_ok(icm__catalog_each_other_table(f->cat, "ns.tbl", note_other_table, &s));
    assert_int_equal(s.count, 1);
    char *want = icmt_sprintf("%s:ns.tbl", name_b);
    assert_string_equal(s.last, want);
    assert_true(s.located);
    /* and from b's side, f's table */
    s.count = 0;
    icmt_ok(icm__catalog_each_other_table(b, "ns.tbl", note_other_table, &s));
    assert_int_equal(s.count, 1);
    free(want);
    want = icmt_sprintf("%s:ns.tbl", f->name);
    assert_string_equal(s.last, want);
    icmt_ok(icm_catalog_drop_table(b, "ns.tbl"));
    const char *p[] = {name_b};
    int64_t ch;
    bool maybe;
    icm__sql_store *store = NULL;
    icmt_ok(icm__sql_store_open_uri(&store, f->uri));
    store->methods->exec(store, "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ?",
                         p, 1, &ch, &maybe);
    store->methods->free(store);
    icm_catalog_free(b);
    free(s.last);
    free(want);
    free(loc);
    free(name_b);
}

/* ---- processes racing through one catalog database ---- */

#define SQL_RACERS 4
#define SQL_COMMITS 3

static int sql_racer(const char *uri, const char *dir, const char *name, int id)
{
    icm_fileio *io = NULL;
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    if (icm_fileio_local_new(&io) != 0 ||
        icm_catalog_open_sql(&cat, name, uri, dir, io, NULL, 0) != 0 ||
        icm_table_load(&t, cat, "ns.tbl") != 0)
        return 2;
    for (int i = 0; i < SQL_COMMITS; i++) {
        char key[32];
        snprintf(key, sizeof key, "racer-%d-%d", id, i);
        for (int attempt = 0;; attempt++) {
            int rc = commit_change(t, key, "done");
            if (rc == 0)
                break;
            if (rc != ICM_ECOMMIT_FAILED || attempt > 1000 || icm_table_refresh(t) != 0)
                return 3;
        }
    }
    icm_table_free(t);
    icm_catalog_free(cat);
    icm_fileio_free(io);
    return 0;
}

static void sql_racing_processes_lose_nothing(void **state)
{
    sqlfx *f = *state;
    pid_t pids[SQL_RACERS];
    for (int r = 0; r < SQL_RACERS; r++) {
        pids[r] = fork();
        assert_true(pids[r] >= 0);
        if (pids[r] == 0)
            _exit(sql_racer(f->uri, f->dir, f->name, r));
    }
    for (int r = 0; r < SQL_RACERS; r++) {
        int status = 0;
        assert_int_equal(waitpid(pids[r], &status, 0), pids[r]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    icmt_ok(icm_table_refresh(f->t));
    const icm_table_metadata *md = icm_table_get_metadata(f->t);
    for (int r = 0; r < SQL_RACERS; r++)
        for (int i = 0; i < SQL_COMMITS; i++) {
            char key[32];
            snprintf(key, sizeof key, "racer-%d-%d", r, i);
            assert_non_null(icm_table_metadata_property(md, key));
        }
    /* One linear history, and every losing attempt deleted its file: exactly the first file,
     * one per successful commit, nothing else. */
    assert_int_equal(icm_table_metadata_metadata_log_count(md), SQL_RACERS * SQL_COMMITS);
    assert_int_equal(count_metadata_files(f), 1 + SQL_RACERS * SQL_COMMITS);
}

#define SQL_SUITE_TESTS                                                                      \
    cmocka_unit_test_setup_teardown(sql_create_load_list, sqlfx_setup, sqlfx_teardown),      \
        cmocka_unit_test_setup_teardown(sql_commit_swaps_and_logs, sqlfx_setup,               \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_unchanged_commit_is_noop, sqlfx_setup,            \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_cas_conflict_fails_and_deletes, sqlfx_setup,      \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_lost_before_is_failed, sqlfx_setup,               \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_lost_after_apply_reconciles_to_success,           \
                                        sqlfx_setup, sqlfx_teardown),                         \
        cmocka_unit_test_setup_teardown(sql_lost_unapplied_stays_unknown, sqlfx_setup,        \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_unknown_then_other_lineage_is_failed, sqlfx_setup, \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_unknown_then_ours_in_log_is_success, sqlfx_setup,  \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_unknown_with_base_trimmed_stays_unknown,          \
                                        sqlfx_setup, sqlfx_teardown),                         \
        cmocka_unit_test_setup_teardown(sql_unknown_with_table_gone_stays_unknown, sqlfx_setup, \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_static_table_refuses_commit, sqlfx_setup,         \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_previous_versions_max_deletes_dropped_files,      \
                                        sqlfx_setup, sqlfx_teardown),                         \
        cmocka_unit_test_setup_teardown(sql_retention_without_delete_keeps_files, sqlfx_setup, \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_retention_keeps_another_tables_metadata,          \
                                        sqlfx_setup, sqlfx_teardown),                         \
        cmocka_unit_test_setup_teardown(sql_gzip_and_metadata_path, sqlfx_setup,              \
                                        sqlfx_teardown),                                      \
        cmocka_unit_test_setup_teardown(sql_register_and_drop, sqlfx_setup, sqlfx_teardown),   \
        cmocka_unit_test_setup_teardown(sql_other_tables_span_every_catalog_name, sqlfx_setup, \
                                        sqlfx_teardown),                                       \
        cmocka_unit_test_setup_teardown(sql_racing_processes_lose_nothing, sqlfx_setup,       \
                                        sqlfx_teardown)

#endif
