/*
 * tests/unit/test_expire_dryrun.c: a dry run cannot delete, and plans exactly what a real run
 * deletes.
 *
 *  - Structure: the planning objects (maint/: keepset.c, pathset.c, reach_walk.c,
 *    list_row_guess.c, table_files.c, expire_plan.c, expire_metadata.c, expire_alias.c;
 *    manifest/bulk_reader.c)
 *    reference no FileIO call that creates, writes or deletes, and no commit (checked with
 *    `nm -u` on the object files in the build tree; expire.c, which hands its plan to the
 *    delete engine, and delete_engine.c, which deletes, are the positive control).
 *  - Behaviour: a dry run through a fault-injecting FileIO performs zero write and delete
 *    operations, leaves the metadata unchanged, and its plan equals the set a real run then
 *    deletes (paths, kinds and sizes); an expiry that frees no data file reads only the
 *    manifest lists, each once.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "testutil.h"

#define T0 INT64_C(1700000000000)

static const char *const FORBIDDEN[] = {"icm_fileio_delete",        "icm_fileio_create_new",
                                        "icm_fileio_write_replace", "icm_table_commit",
                                        "icm_table_commit_changes", "icm__table_commit_retrying",
                                        "icm_fileio_delete_batch",  "icm__delete_run",
                                        NULL};

/* Undefined symbols of an object file, as one string ("" when nm fails: then the caller's
 * positive control fails). */
static char *undefined_symbols(const char *object)
{
    char *cmd = icmt_sprintf("nm -u '%s' 2>/dev/null", object);
    FILE *p = popen(cmd, "r");
    free(cmd);
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(1, cap);
    assert_non_null(out);
    size_t got;
    while ((got = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 == cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
    }
    out[len] = '\0';
    pclose(p);
    return out;
}

static bool references(const char *symbols, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(symbols, name); p != NULL; p = strstr(p + 1, name)) {
        bool start = p == symbols || p[-1] == ' ' || p[-1] == '\n';
        bool end = p[n] == '\n' || p[n] == '\0';
        if (start && end)
            return true;
    }
    return false;
}

static char *object_path(const char *src)
{
    char *cli = strdup(icmt_cli_path());
    char *path = icmt_sprintf("%s/CMakeFiles/icm_core.dir/src/%s.o", dirname(cli), src);
    free(cli);
    return path;
}

static void test_planning_objects_cannot_delete(void **state)
{
    (void)state;
    /* Positive control: the execution object does delete (through the delete engine, whose
     * object calls the FileIO's delete) and commit. */
    char *exec = object_path("maint/expire.c");
    char *syms = undefined_symbols(exec);
    assert_true(references(syms, "icm__delete_run"));
    /* (it commits through the one retry loop, table/commit.h) */
    assert_true(references(syms, "icm__table_commit_retrying"));
    free(syms);
    free(exec);
    exec = object_path("maint/delete_engine.c");
    syms = undefined_symbols(exec);
    assert_true(references(syms, "icm_fileio_delete_batch"));
    free(syms);
    free(exec);

    const char *planning[] = {"maint/keepset.c",        "maint/pathset.c",
                              "maint/reach_walk.c",     "maint/list_row_guess.c",
                              "maint/table_files.c",    "manifest/bulk_reader.c",
                              "maint/expire_plan.c",    "maint/expire_metadata.c",
                              "maint/expire_alias.c"};
    for (size_t i = 0; i < sizeof planning / sizeof planning[0]; i++) {
        char *obj = object_path(planning[i]);
        syms = undefined_symbols(obj);
        assert_true(strlen(syms) > 0); /* nm ran and found the object */
        for (size_t k = 0; FORBIDDEN[k] != NULL; k++) {
            if (references(syms, FORBIDDEN[k]))
                print_error("%s references %s\n", obj, FORBIDDEN[k]);
            assert_false(references(syms, FORBIDDEN[k]));
        }
        free(syms);
        free(obj);
    }
}

/* A history with every kind of candidate: data, position deletes, equality deletes, manifests,
 * lists, statistics, a staged snapshot and a branch. */
static hist *rich_history(icm_fileio *io, int fv)
{
    hist *h = hist_new(io, "/wh/t", fv, false, T0);
    hist_set_merge_append(h, true);
    int64_t s1 = hist_append(h, "main", "A", "B", NULL);
    hist_add_statistics(h, s1, "s1.stats", false);
    hist_position_delete(h, "main", "P", "A");
    hist_equality_delete(h, "main", "E");
    hist_append(h, NULL, "S", NULL);
    int64_t b = hist_append(h, "main", "C", NULL);
    hist_branch(h, "keep", b);
    hist_delete(h, "main", "A", "P-deletes", "E-eq", "C", NULL);
    if (fv >= 3)
        hist_deletion_vectors(h, "main", "DV", "B", NULL);
    int64_t last = hist_append(h, "main", "D", NULL);
    hist_add_statistics(h, last, "last.stats", true);
    return h;
}

typedef struct entry {
    char *path;
    int kind;
    int64_t size;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

static entry *entries_of(const icm_expire_result *r, size_t *n)
{
    const icm_expire_file *lists[3] = {r->deleted_files, r->deleted_manifests,
                                       r->deleted_statistics_files};
    size_t counts[3] = {r->deleted_file_count, r->deleted_manifest_count,
                        r->deleted_statistics_file_count};
    entry *e = calloc(r->total + 1, sizeof *e);
    assert_non_null(e);
    *n = 0;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < counts[k]; i++) {
            assert_true(*n < r->total);
            e[*n] = (entry){lists[k][i].path, lists[k][i].kind, lists[k][i].size_bytes};
            (*n)++;
        }
    qsort(e, *n, sizeof *e, cmp_entry);
    return e;
}

static void dry_equals_real(int fv, icm_expire_cleanup cleanup)
{
    icm_fileio *mem = NULL, *fault = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    hist *h = rich_history(fault, fv);
    icm_table *t = hist_open_table(h);
    char *before = strdup(icm_table_get_metadata_location(t));

    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(h);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = hist_time(h) - 1000;
    o.cleanup = cleanup;
    o.dry_run = true;
    icm_fileio_fault_reset(fault);
    icm_expire_result *dry = NULL;
    icmt_ok(icm_expire_snapshots(&dry, t, &o));
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_WRITE), 0);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_DELETE), 0);
    /* Planning reads manifests; with cleanup none it has nothing to read. */
    assert_true((icm_fileio_fault_count(fault, ICM_IO_READ) > 0) ==
                (cleanup != ICM_EXPIRE_CLEANUP_NONE));
    assert_true(dry->dry_run);
    assert_false(dry->committed);
    assert_null(dry->metadata_location);
    size_t deleted = 1;
    assert_int_equal(icm_expire_delete_files(&deleted, fault, dry), ICM_EREFUSED);
    assert_int_equal(deleted, 0);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_DELETE), 0);
    icmt_ok(icm_table_refresh(t));
    assert_string_equal(icm_table_get_metadata_location(t), before);
    if (cleanup != ICM_EXPIRE_CLEANUP_NONE)
        assert_true(dry->total > 0);
    /* Each planned manifest list and manifest has its size on storage (a list's is the bytes
     * the walk read, a manifest's its list row's length). */
    for (size_t i = 0; i < dry->deleted_manifest_count; i++) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        icmt_ok(icm_fileio_stat(&info, mem, dry->deleted_manifests[i].path));
        assert_true(dry->deleted_manifests[i].size_bytes == info.size_bytes);
    }

    o.dry_run = false;
    icm_expire_result *real = NULL;
    icmt_ok(icm_expire_snapshots(&real, t, &o));
    assert_true(real->committed);
    assert_int_equal(real->total, dry->total);
    assert_int_equal(real->expired_count, dry->expired_count);
    for (size_t i = 0; i < dry->expired_count; i++)
        assert_true(real->expired_ids[i] == dry->expired_ids[i]);
    size_t nd, nr;
    entry *ed = entries_of(dry, &nd), *er = entries_of(real, &nr);
    assert_int_equal(nd, nr);
    for (size_t i = 0; i < nd; i++) {
        assert_string_equal(ed[i].path, er[i].path);
        assert_int_equal(ed[i].kind, er[i].kind);
        assert_true(ed[i].size == er[i].size);
    }
    for (size_t k = 0; k < ICM_EXPIRE_FILE_KIND_COUNT; k++) {
        assert_int_equal(dry->counts[k], real->counts[k]);
        assert_true(dry->bytes[k] == real->bytes[k]);
    }
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_DELETE) >= real->total, true);
    free(ed);
    free(er);
    free(before);
    icm_expire_result_free(dry);
    icm_expire_result_free(real);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(fault);
}

static void test_dry_run_equals_real_run(void **state)
{
    (void)state;
    dry_equals_real(2, ICM_EXPIRE_CLEANUP_ALL);
    dry_equals_real(3, ICM_EXPIRE_CLEANUP_ALL);
    dry_equals_real(2, ICM_EXPIRE_CLEANUP_METADATA);
    dry_equals_real(2, ICM_EXPIRE_CLEANUP_NONE);
}

/* An expiry that frees no data file opens no manifest at all: each manifest list is read once
 * and that is every read (Java's reachable cleanup stops the same way). */
static void test_append_only_reads_lists_only(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *fault = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    hist *h = hist_new(fault, "/wh/t", 2, false, T0);
    char name[8];
    int64_t cutoff = 0;
    for (int i = 0; i < 10; i++) {
        if (i == 5)
            cutoff = hist_time(h);
        snprintf(name, sizeof name, "F%d", i);
        hist_append(h, "main", name, NULL);
    }
    icm_table *t = hist_open_table(h);
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(h);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = cutoff;
    o.dry_run = true;
    icm_fileio_fault_reset(fault);
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_int_equal(r->expired_count, 5);
    assert_int_equal(r->total, 5); /* the expired manifest lists; every manifest is shared */
    /* The 10 manifest lists; and the 10 older metadata files (the table's creation and 9
     * appends), which the history leaves out of the pointer's (empty) metadata-log: the
     * stale-pointer check (expire_site.c) reads every metadata file of the folder that the
     * pointer's metadata-log does not name. */
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_READ), 10 + 10);
    icm_expire_result_free(r);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(fault);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planning_objects_cannot_delete),
        cmocka_unit_test(test_dry_run_equals_real_run),
        cmocka_unit_test(test_append_only_reads_lists_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
