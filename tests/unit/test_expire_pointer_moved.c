/*
 * tests/unit/test_expire_pointer_moved.c: newer commits past the pointer a run loaded are a
 * stale catalog only when the catalog still points there (maint/expire_site.c).
 *
 * A writer that commits twice after expiry loaded the table leaves, in the metadata folder, a
 * commit built on another commit past the loaded pointer: the shape of a stale catalog. The
 * catalog has moved on, so expiry reloads, looks again at the new pointer and goes on with the
 * reloaded table (expiring what it decides there, deleting exactly the files no retained
 * snapshot references). A pointer that stays behind its table is still refused (the Python
 * tests test_safety_stale_pointer.py cover those shapes).
 */
#include <stdlib.h>
#include <string.h>

#include "icemaint/expire.h"
#include "test_txn_common.h"

typedef struct fx {
    char *dir, *tdir;
    icm_fileio *io;
    icm_catalog *cat;
} fx;

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = icmt_mkdtemp();
    f->tdir = icmt_sprintf("%s/db/t", f->dir);
    icmt_ok(icm_fileio_local_new(&f->io));
    create_fs_table(f->dir, f->io);
    icmt_ok(icm_catalog_open_hadoop(&f->cat, "fs", f->dir, f->io));
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    icm_catalog_free(f->cat);
    icm_fileio_free(f->io);
    icmt_rmtree(f->dir);
    free(f->dir);
    free(f->tdir);
    free(f);
    return 0;
}

/* Commit one snapshot appending a new data file of its own; returns the file (free). */
static char *append_one(icm_table *t)
{
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    char *loc = NULL;
    icmt_ok(icm_txn_new_data_file(&loc, txn, NULL, "parquet"));
    /* the folder first (the stub is written with stdio) */
    icmt_ok(icm_fileio_create_new(icm_table_get_fileio(t), loc, "", 0));
    write_parquet_stub(loc, 1);
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, icm_table_get_fileio(t), loc));
    icm_data_file df = make_df(loc, 1, info.size_bytes);
    icmt_ok(icm_txn_append_file(txn, &df));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
    char *copy = strdup(loc);
    icm_free(loc);
    return copy;
}

static void set_property(icm_table *t, const char *key, const char *value)
{
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    icmt_ok(icm_txn_set_property(txn, key, value));
    icmt_ok(icm_txn_commit(txn));
    icm_txn_free(txn);
}

static void expiry_goes_on_when_a_writer_moved_the_pointer(void **state)
{
    fx *f = *state;
    icm_table *writer = NULL, *t = NULL;
    icmt_ok(icm_table_load(&writer, f->cat, "db.t"));
    char *first = append_one(writer);  /* snapshot 1: only it lists `first` */
    /* expiry's handle: loaded with snapshot 1 current */
    icmt_ok(icm_table_load(&t, f->cat, "db.t"));
    char *loaded = strdup(icm_table_get_metadata_location(t));
    /* the writer commits twice more: a commit built on a commit past `loaded` */
    char *second = append_one(writer); /* snapshot 2 replaces nothing: lists both files */
    set_property(writer, "written.by", "writer");
    const char *now_at = icm_table_get_metadata_location(writer);
    assert_string_not_equal(now_at, loaded);

    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.has_older_than = true;
    o.decide.older_than_ms = INT64_MAX;
    o.decide.retain_last = 1;
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    /* it went on with the reloaded table: the writer's commits are the base of its own */
    const icm_table_metadata *md = icm_table_get_metadata(t);
    assert_string_equal(icm_table_metadata_property(md, "written.by"), "writer");
    assert_int_equal(icm_table_metadata_snapshot_count(md), 1);
    /* snapshot 2 still lists both data files: nothing of theirs is deleted */
    assert_true(icmt_file_exists(first));
    assert_true(icmt_file_exists(second));
    assert_int_equal(missing_referenced_files(f->io, md, NULL), 0);
    icm_expire_result_free(r);
    free(loaded);
    free(first);
    free(second);
    icm_table_free(t);
    icm_table_free(writer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(expiry_goes_on_when_a_writer_moved_the_pointer,
                                        fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
