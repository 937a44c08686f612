/*
 * test_fileio_outcome_unknown.c: a create-new whose answer was lost (ICM_EOUTCOME_UNKNOWN) and
 * how every caller of icm_fileio_create_new treats it.
 *
 * The fault wrapper's injection: applied (the object is written, the caller hears
 * ICM_EOUTCOME_UNKNOWN) or not (nothing written); a rejection by fail_nth wins; only the nth
 * create counts. icm_fileio_holds settles it by content. Callers, each with both outcomes and
 * with a write that landed with bytes not ours (a "landing" back end writes someone else's bytes
 * and loses the answer):
 *  - filesystem catalog commit (the create of v<N+1> is the publish): landed with our bytes is
 *    a commit; absent is ICM_ECOMMIT_UNKNOWN (never FAILED: it may still land) and nothing is
 *    deleted;
 *  - SQL catalog commit (the metadata file is written before the pointer swap): the commit
 *    fails with nothing swapped, and the file, landed or not, is never deleted;
 *  - table lease: landed with our token is held; absent or someone else's is not held
 *    (ICM_EOUTCOME_UNKNOWN) and the file is left in place;
 *  - transaction manifest writes: the commit fails; a file read back with our bytes is cleaned
 *    with the transaction, one that is not proven ours is left in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/maint.h"
#include "icemaint/sys/fileio.h"
#include "test_txn_common.h"
#include "testutil.h"
#include "util/util.h"

/* ---- the injection ------------------------------------------------------------------------ */

static void test_fault_injection(void **state)
{
    (void)state;
    assert_string_equal(icm_error_code_name(ICM_EOUTCOME_UNKNOWN), "ICM_EOUTCOME_UNKNOWN");
    icm_fileio *mem, *io;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    icmt_ok(icm_fileio_create_new(io, "/t/first", "1", 1));
    icm_fileio_fault_create_outcome_unknown(io, 2, true); /* the second create from now */
    icmt_ok(icm_fileio_create_new(io, "/t/a", "a", 1));
    assert_int_equal(icm_fileio_create_new(io, "/t/b", "b", 1), ICM_EOUTCOME_UNKNOWN);
    assert_string_equal(icm_error_last()->location, "/t/b");
    assert_non_null(strstr(icm_error_last()->message, "was applied"));
    bool same = false;
    icmt_ok(icm_fileio_holds(&same, mem, "/t/b", "b", 1));
    assert_true(same); /* written */
    icmt_ok(icm_fileio_create_new(io, "/t/c", "c", 1)); /* once only */

    icm_fileio_fault_create_outcome_unknown(io, 1, false);
    assert_int_equal(icm_fileio_create_new(io, "/t/d", "d", 1), ICM_EOUTCOME_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "never reached"));
    icmt_ok(icm_fileio_holds(&same, mem, "/t/d", "d", 1));
    assert_false(same); /* not written */

    /* a rejection wins and uses the injection up */
    icm_fileio_fault_create_outcome_unknown(io, 1, true);
    icm_fileio_fault_fail_nth(io, ICM_IO_WRITE, 1, ICM_EAUTH);
    assert_int_equal(icm_fileio_create_new(io, "/t/e", "e", 1), ICM_EAUTH);
    icmt_ok(icm_fileio_create_new(io, "/t/f", "f", 1));
    icmt_ok(icm_fileio_holds(&same, mem, "/t/e", "e", 1));
    assert_false(same);
    /* write-replace is no create: it never takes the injection */
    icm_fileio_fault_create_outcome_unknown(io, 1, false);
    icmt_ok(icm_fileio_write_replace(io, "/t/g", "g", 1));
    assert_int_equal(icm_fileio_create_new(io, "/t/h", "h", 1), ICM_EOUTCOME_UNKNOWN);
    icm_fileio_free(io);
}

static void test_holds(void **state)
{
    (void)state;
    icm_fileio *io;
    icmt_ok(icm_fileio_mem_new(&io));
    icmt_ok(icm_fileio_create_new(io, "s3://b/k", "abc", 3));
    bool same = false;
    icmt_ok(icm_fileio_holds(&same, io, "s3://b/k", "abc", 3));
    assert_true(same);
    icmt_ok(icm_fileio_holds(&same, io, "s3://b/k", "abd", 3));
    assert_false(same);
    icmt_ok(icm_fileio_holds(&same, io, "s3://b/k", "ab", 2));
    assert_false(same);
    same = true;
    icmt_ok(icm_fileio_holds(&same, io, "s3://b/none", "abc", 3));
    assert_false(same);
    assert_int_equal(icm_fileio_holds(NULL, io, "s3://b/k", "abc", 3), ICM_EINVALID);
    icm_fileio_free(io);
}

/* ---- a back end whose next create lands with someone else's bytes, answer lost --------------- */

typedef struct landing {
    icm_fileio base;
    icm_fileio *inner;
    const char *armed_suffix; /* the next create of a name ending so is taken over */
    char *landed;             /* where it happened */
} landing;

static int l_read(icm_fileio *io, const char *loc, char **out, size_t *len)
{
    return icm_fileio_read(out, len, ((landing *)io)->inner, loc);
}
static int l_read_range(icm_fileio *io, const char *loc, int64_t off, void *buf, size_t len,
                        size_t *got)
{
    return icm_fileio_read_range(got, ((landing *)io)->inner, loc, off, buf, len);
}
static int l_create(icm_fileio *io, const char *loc, const void *data, size_t len)
{
    landing *l = (landing *)io;
    size_t n = strlen(loc), k = l->armed_suffix != NULL ? strlen(l->armed_suffix) : 0;
    if (k == 0 || n < k || strcmp(loc + n - k, l->armed_suffix) != 0)
        return icm_fileio_create_new(l->inner, loc, data, len);
    l->armed_suffix = NULL;
    l->landed = strdup(loc);
    icmt_ok(icm_fileio_create_new(l->inner, loc, "someone else's bytes", 21));
    return icm__error_set(ICM_ERRCLASS_IO, ICM_EOUTCOME_UNKNOWN, loc, "answer lost");
}
static int l_write(icm_fileio *io, const char *loc, const void *data, size_t len)
{
    return icm_fileio_write_replace(((landing *)io)->inner, loc, data, len);
}
static int l_remove(icm_fileio *io, const char *loc)
{
    return icm_fileio_delete(((landing *)io)->inner, loc);
}
static int l_stat(icm_fileio *io, const char *loc, icm_file_info *out)
{
    return icm_fileio_stat(out, ((landing *)io)->inner, loc);
}
static int l_list(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb, void *p)
{
    return icm_fileio_list_flags(((landing *)io)->inner, prefix, flags, cb, p);
}
static void l_free(icm_fileio *io)
{
    (void)io;
}
static const icm_fileio_methods LANDING = {
    .version = ICM_FILEIO_METHODS_VERSION, .name = "landing", .read = l_read,
    .read_range = l_read_range, .create_new = l_create, .write_replace = l_write,
    .remove = l_remove, .stat = l_stat, .free = l_free, .list_flags = l_list};

/* ---- callers ------------------------------------------------------------------------------- */

typedef struct fx {
    char *dir, *tdir;
    icm_fileio *local;
} fx;

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = icmt_mkdtemp();
    f->tdir = icmt_sprintf("%s/db/t", f->dir);
    icmt_ok(icm_fileio_local_new(&f->local));
    create_fs_table(f->dir, f->local);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    icm_fileio_free(f->local);
    icmt_rmtree(f->dir);
    free(f->dir);
    free(f->tdir);
    free(f);
    return 0;
}

static int set_property(icm_table *t)
{
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(md, "k", "v"));
    int rc = icm_table_commit(t, md);
    icm_table_metadata_free(md);
    return rc;
}

static void test_hadoop_commit(void **state)
{
    fx *f = *state;
    char *v2 = icmt_sprintf("%s/metadata/v2.metadata.json", f->tdir);
    icm_fileio *local, *fio;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_fault_new(&fio, local));
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, fio, f->tdir));

    /* not applied: the commit's outcome is unknown (the write may still land), nothing goes */
    icm_fileio_fault_create_outcome_unknown(fio, 1, false);
    uint64_t deletes = icm_fileio_fault_count(fio, ICM_IO_DELETE);
    assert_int_equal(set_property(t), ICM_ECOMMIT_UNKNOWN);
    assert_false(icmt_file_exists(v2));
    assert_int_equal(icm_fileio_fault_count(fio, ICM_IO_DELETE), deletes);
    icm_table_free(t);

    /* applied: read back with our bytes, it is our commit */
    icmt_ok(icm_table_open_dir(&t, fio, f->tdir));
    icm_fileio_fault_create_outcome_unknown(fio, 1, true);
    icmt_ok(set_property(t));
    assert_string_equal(icm_table_get_metadata_location(t), v2);
    icm_table *check = NULL;
    icmt_ok(icm_table_open_dir(&check, f->local, f->tdir));
    assert_string_equal(icm_table_get_metadata_location(check), v2);
    assert_string_equal(icm_table_metadata_property(icm_table_get_metadata(check), "k"), "v");
    icm_table_free(check);
    icm_table_free(t);
    icm_fileio_free(fio);
    free(v2);
}

static void test_sql_commit_metadata_write(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *uri = icmt_sprintf("sqlite:///%s/c.db", dir);
    icmt_ok(icm_catalog_sqlite_create(uri));
    icm_fileio *local, *fio;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_fault_new(&fio, local));
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_sql(&cat, "c", uri, dir, fio, NULL, 0));
    icmt_ok(icm_catalog_create_namespace(cat, "db"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  TXN_SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, cat, "db.t", &o));
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "db.t"));
    char *first = strdup(icm_table_get_metadata_location(t));
    char *mdir = icmt_sprintf("%s/db/t/metadata", dir);
    int files = count_suffix(mdir, ".metadata.json");
    assert_int_equal(files, 1);

    /* the metadata file comes before the pointer swap: a lost answer fails the commit with
     * nothing swapped, and the file (landed or not) is never deleted */
    uint64_t deletes = icm_fileio_fault_count(fio, ICM_IO_DELETE);
    icm_fileio_fault_create_outcome_unknown(fio, 1, true);
    assert_int_equal(set_property(t), ICM_EOUTCOME_UNKNOWN);
    icm_fileio_fault_create_outcome_unknown(fio, 1, false);
    assert_int_equal(set_property(t), ICM_EOUTCOME_UNKNOWN);
    assert_int_equal(icm_fileio_fault_count(fio, ICM_IO_DELETE), deletes);
    assert_int_equal(count_suffix(mdir, ".metadata.json"), 2); /* the one that landed stays */
    icm_table *check = NULL;
    icmt_ok(icm_table_load(&check, cat, "db.t"));
    assert_string_equal(icm_table_get_metadata_location(check), first);
    icm_table_free(check);
    icmt_ok(set_property(t)); /* and the next commit goes through */
    assert_string_not_equal(icm_table_get_metadata_location(t), first);
    icm_table_free(t);
    icm_catalog_free(cat);
    icm_fileio_free(fio);
    icmt_rmtree(dir);
    free(mdir), free(first), free(uri), free(dir);
}

static void test_lease(void **state)
{
    fx *f = *state;
    icm_fileio *local, *fio;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_fault_new(&fio, local));
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, fio, f->tdir));
    icm_lease *l = NULL;
    icmt_ok(icm_lease_acquire(&l, t, NULL));
    char *where = strdup(icm_lease_location(l));
    icmt_ok(icm_lease_release(l));
    icm_lease_free(l);
    assert_false(icmt_file_exists(where));

    /* not applied: not held, nothing there, nothing deleted */
    icm_fileio_fault_create_outcome_unknown(fio, 1, false);
    uint64_t deletes = icm_fileio_fault_count(fio, ICM_IO_DELETE);
    assert_int_equal(icm_lease_acquire(&l, t, NULL), ICM_EOUTCOME_UNKNOWN);
    assert_null(l);
    assert_non_null(strstr(icm_error_last()->message, "not held"));
    assert_false(icmt_file_exists(where));
    assert_int_equal(icm_fileio_fault_count(fio, ICM_IO_DELETE), deletes);

    /* applied: the file holds our token, so the lease is ours */
    icm_fileio_fault_create_outcome_unknown(fio, 1, true);
    icmt_ok(icm_lease_acquire(&l, t, NULL));
    assert_true(icmt_file_exists(where));
    icmt_ok(icm_lease_release(l));
    icm_lease_free(l);
    assert_false(icmt_file_exists(where));
    icm_table_free(t);
    icm_fileio_free(fio);

    /* landed with someone else's bytes: not held, and their file is left alone */
    landing lb = {{&LANDING}, f->local, "", NULL};
    const char *slash = strrchr(where, '/');
    lb.armed_suffix = slash;
    icmt_ok(icm_table_open_dir(&t, &lb.base, f->tdir));
    assert_int_equal(icm_lease_acquire(&l, t, NULL), ICM_EOUTCOME_UNKNOWN);
    assert_non_null(lb.landed);
    assert_string_equal(lb.landed, where);
    size_t len = 0;
    char *text = icmt_read_file(where, &len);
    assert_non_null(text);
    assert_int_equal(len, 21);
    assert_memory_equal(text, "someone else's bytes", 21);
    free(text);
    icm_table_free(t);
    free(lb.landed);
    free(where);
}

/* Files in the table's metadata folder ending in `suffix`. */
static int count_metadata(const fx *f, const char *suffix)
{
    char *m = icmt_sprintf("%s/metadata", f->tdir);
    int n = count_suffix(m, suffix);
    free(m);
    return n;
}

static void test_txn_manifest(void **state)
{
    fx *f = *state;
    char *data = icmt_sprintf("%s/caller/x.parquet", f->dir);
    icmt_ok(icm_fileio_write_replace(f->local, data, "data", 4));
    int avro_before = count_metadata(f, ".avro");

    /* landed with bytes not ours: the commit fails and that file stays */
    landing lb = {{&LANDING}, f->local, ".avro", NULL};
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, &lb.base, f->tdir));
    icm_txn *txn = NULL;
    icmt_ok(icm_txn_new(&txn, t));
    icm_data_file d = make_df(data, 1, 4);
    icmt_ok(icm_txn_append_file(txn, &d));
    int rc = icm_txn_commit(txn);
    assert_int_equal(rc, ICM_EOUTCOME_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "not proven ours"));
    icm_txn_free(txn);
    icm_table_free(t);
    assert_non_null(lb.landed);
    assert_true(icmt_file_exists(lb.landed));
    assert_int_equal(count_metadata(f, ".avro"), avro_before + 1);
    free(lb.landed);

    /* landed with our bytes (the fault wrapper applies it): cleaned with the transaction */
    icm_fileio *local, *fio;
    icmt_ok(icm_fileio_local_new(&local));
    icmt_ok(icm_fileio_fault_new(&fio, local));
    icmt_ok(icm_table_open_dir(&t, fio, f->tdir));
    icmt_ok(icm_txn_new(&txn, t));
    icmt_ok(icm_txn_append_file(txn, &d));
    icm_fileio_fault_create_outcome_unknown(fio, 1, true);
    assert_int_equal(icm_txn_commit(txn), ICM_EOUTCOME_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "holds our bytes"));
    icm_txn_free(txn);
    icm_table_free(t);
    icm_fileio_free(fio);
    assert_int_equal(count_metadata(f, ".avro"), avro_before + 1); /* ours went, theirs stays */
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_injection),
        cmocka_unit_test(test_holds),
        cmocka_unit_test_setup_teardown(test_hadoop_commit, fx_setup, fx_teardown),
        cmocka_unit_test(test_sql_commit_metadata_write),
        cmocka_unit_test_setup_teardown(test_lease, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_txn_manifest, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
