/*
 * test_trash_journal_removed.c: a run's trash journal removed under it (by a `trash expire`
 * that found every record in it old and its files gone) must not swallow the records the run
 * appends later: a batch moved after the removal has its record in a journal that exists
 * (maint/trash.c journal_write), so restore finds it and expire can remove it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icemaint/fileio.h"
#include "maint/trash.h"
#include "testutil.h"

/* the table-uuid (a trash takes only a UUID) */
#define UUID "0c6f05a0-7d1b-4d7e-9a49-3f2c4e5b6a71"

static void put(const char *path)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("x", f);
    fclose(f);
}

/* The journals below `dir`: how many, and whether one of them holds `needle`. */
static size_t journals_holding(const char *dir, const char *needle, bool *found)
{
    *found = false;
    size_t n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 6, ".jsonl") != 0)
            continue;
        n++;
        char path[1024], text[4096] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[got] = '\0';
        if (strstr(text, needle) != NULL)
            *found = true;
    }
    closedir(d);
    return n;
}

static void test_data_loss_journal_removed_under_a_running_sweep(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char table[512], data[512], trash[512], jdir[600], a[600], b[600], ta[700], tb[700];
    snprintf(table, sizeof table, "%s/t", dir);
    snprintf(data, sizeof data, "%s/t/data", dir);
    snprintf(trash, sizeof trash, "%s/trash", dir);
    snprintf(jdir, sizeof jdir, "%s/" UUID "/journal", trash);
    snprintf(a, sizeof a, "%s/a.parquet", data);
    snprintf(b, sizeof b, "%s/b.parquet", data);
    snprintf(ta, sizeof ta, "%s/" UUID "/files/data/a.parquet", trash);
    snprintf(tb, sizeof tb, "%s/" UUID "/files/data/b.parquet", trash);
    assert_int_equal(mkdir(table, 0777), 0);
    assert_int_equal(mkdir(data, 0777), 0);
    assert_int_equal(mkdir(trash, 0777), 0);
    put(a);
    put(b);
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    icm__trash *t = NULL;
    icmt_ok(icm__trash_open(&t, io, trash, table, UUID, false));

    const char *first[] = {a};
    icm_fileio_delete_result r1[1];
    icm__trash_move_batch(t, first, 1, r1);
    assert_int_equal(r1[0].status, ICM_FILEIO_DELETED);
    bool found = false;
    assert_int_equal(journals_holding(jdir, "a.parquet", &found), 1);
    assert_true(found);
    /* an expire removes that journal (its record old, its file "gone" as it saw it) */
    DIR *d = opendir(jdir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", jdir, e->d_name);
            assert_int_equal(unlink(path), 0);
        }
    closedir(d);

    const char *second[] = {b};
    icm_fileio_delete_result r2[1];
    icm__trash_move_batch(t, second, 1, r2);
    assert_int_equal(r2[0].status, ICM_FILEIO_DELETED);
    /* b moved, and its record is in a journal that exists */
    assert_int_equal(access(b, F_OK), -1);
    assert_int_equal(access(tb, F_OK), 0);
    assert_int_equal(access(ta, F_OK), 0);
    assert_int_equal(journals_holding(jdir, "b.parquet", &found), 1);
    assert_true(found);

    icm__trash_free(t);
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_loss_journal_removed_under_a_running_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
