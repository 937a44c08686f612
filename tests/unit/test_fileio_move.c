/*
 * test_fileio_move.c: icm__fileio_move on local disk (io/move.c), the move of --trash: it
 * renames, making the target's folders; it never replaces a file at the target (ICM_EEXISTS,
 * both files as they were); a missing source is ICM_ENOTFOUND with nothing made; through a
 * resolving FileIO the same; a back end that cannot move (in-memory) is ICM_EUNSUPPORTED with
 * nothing changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icemaint/testing/fileio.h"
#include "io/fileio_internal.h"
#include "testutil.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void assert_holds(const char *path, const char *text)
{
    char buf[64] = "";
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, text);
}

static void test_local_moves_never_replace(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char src[512], dst[512], other[512], missing[512];
    snprintf(src, sizeof src, "%s/a", dir);
    snprintf(dst, sizeof dst, "%s/trash/u/files/data/a", dir);
    snprintf(other, sizeof other, "%s/b", dir);
    snprintf(missing, sizeof missing, "%s/none", dir);
    put(src, "A");
    put(other, "B");
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_resolving_new(&io, NULL, 0));
    icmt_ok(icm__fileio_move(io, src, dst, 1));
    assert_int_equal(access(src, F_OK), -1);
    assert_holds(dst, "A");
    /* the target exists: nothing moves, nothing is replaced */
    assert_int_equal(icm__fileio_move(io, other, dst, 1), ICM_EEXISTS);
    assert_holds(dst, "A");
    assert_holds(other, "B");
    /* the source is gone: ICM_ENOTFOUND, no target made */
    char dst2[600];
    snprintf(dst2, sizeof dst2, "%s/trash/u/files/none", dir);
    assert_int_equal(icm__fileio_move(io, missing, dst2, -1), ICM_ENOTFOUND);
    assert_int_equal(access(dst2, F_OK), -1);
    /* file: URIs name the same files */
    char uri_src[600], uri_dst[600];
    snprintf(uri_src, sizeof uri_src, "file://%s", other);
    snprintf(uri_dst, sizeof uri_dst, "file://%s/back/b", dir);
    icmt_ok(icm__fileio_move(io, uri_src, uri_dst, 1));
    snprintf(dst2, sizeof dst2, "%s/back/b", dir);
    assert_holds(dst2, "B");
    bool same = false;
    icmt_ok(icm__fileio_same_store(&same, io, src, "s3://bucket/trash"));
    assert_false(same);
    icmt_ok(icm__fileio_same_store(&same, io, src, dst));
    assert_true(same);
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(dir);
}

/* A folder of the target that is a symbolic link (planted in the trash or the table
 * location) is not moved through, nor are folders made below it: ICM_EREFUSED, the source
 * where it was, nothing in the link's target. */
static void test_data_loss_move_makes_folders_through_a_link(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char src[512], outside[512], lnk[512], dst[600], made[600];
    snprintf(src, sizeof src, "%s/a", dir);
    snprintf(outside, sizeof outside, "%s/outside", dir);
    snprintf(lnk, sizeof lnk, "%s/t/data/lnk", dir);
    snprintf(dst, sizeof dst, "%s/t/data/lnk/p=1/a", dir);
    snprintf(made, sizeof made, "%s/outside/p=1", dir);
    put(src, "A");
    assert_int_equal(mkdir(outside, 0777), 0);
    snprintf(dst, sizeof dst, "%s/t", dir);
    assert_int_equal(mkdir(dst, 0777), 0);
    snprintf(dst, sizeof dst, "%s/t/data", dir);
    assert_int_equal(mkdir(dst, 0777), 0);
    assert_int_equal(symlink(outside, lnk), 0);
    snprintf(dst, sizeof dst, "%s/t/data/lnk/p=1/a", dir);
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    assert_int_equal(icm__fileio_move(io, src, dst, 1), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "symbolic link"));
    assert_holds(src, "A");
    assert_int_equal(access(made, F_OK), -1);
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(dir);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Pruning after a file left: the empty folders strictly below `stop` go, deepest first; a
 * folder still holding something stays and ends the walk; `stop` stays; a link on the way is
 * no folder (rmdir fails, nothing behind it is touched); a name with `..` prunes nothing. */
static void test_prune_removes_only_the_empty_folders_below_stop(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char p[700], q[700], stop[600], file[800];
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    snprintf(stop, sizeof stop, "%s/files", dir);
    icmt_mkdir_in(dir, "files");
    icmt_mkdir_in(dir, "files/a");
    icmt_mkdir_in(dir, "files/a/b");
    icmt_mkdir_in(dir, "files/a/b/c");
    snprintf(q, sizeof q, "%s/files/a/keep", dir);
    put(q, "K");
    snprintf(file, sizeof file, "%s/files/a/b/c/gone", dir);
    icm__fileio_prune_empty_folders(io, file, stop);
    snprintf(p, sizeof p, "%s/files/a/b", dir);
    assert_false(is_dir(p));          /* c and b were empty */
    snprintf(p, sizeof p, "%s/files/a", dir);
    assert_true(is_dir(p));           /* holds keep */
    assert_holds(q, "K");
    assert_true(is_dir(stop));

    /* stop itself stays even when empty */
    assert_int_equal(unlink(q), 0);
    snprintf(file, sizeof file, "%s/files/a/gone", dir);
    icm__fileio_prune_empty_folders(io, file, stop);
    assert_false(is_dir(p));
    assert_true(is_dir(stop));

    /* a link on the way: not followed, the folder it points at stays */
    char outside[600], lnk[600];
    snprintf(outside, sizeof outside, "%s/outside/empty", dir);
    icmt_mkdir_in(dir, "outside");
    icmt_mkdir_in(dir, "outside/empty");
    snprintf(lnk, sizeof lnk, "%s/files/lnk", dir);
    assert_int_equal(symlink(outside, lnk), 0);
    snprintf(file, sizeof file, "%s/files/lnk/gone", dir);
    icm__fileio_prune_empty_folders(io, file, stop);
    assert_true(is_dir(outside));

    /* `..`: nothing pruned, not even the empty folder the name walks through */
    snprintf(p, sizeof p, "%s/files/x", dir);
    icmt_mkdir_in(dir, "files/x");
    snprintf(file, sizeof file, "%s/files/x/../../outside/empty/gone", dir);
    icm__fileio_prune_empty_folders(io, file, stop);
    assert_true(is_dir(outside));
    assert_true(is_dir(p));

    /* outside stop: nothing */
    snprintf(file, sizeof file, "%s/outside/empty/gone", dir);
    icm__fileio_prune_empty_folders(io, file, stop);
    assert_true(is_dir(outside));
    icm_fileio_free(io);
    icmt_rmtree(dir);
    free(dir);
}

static void test_memory_back_end_cannot_move(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icmt_ok(icm_fileio_create_new(io, "mem://wh/t/a", "A", 1));
    assert_int_equal(icm__fileio_move(io, "mem://wh/t/a", "mem://trash/a", 1), ICM_EUNSUPPORTED);
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, io, "mem://wh/t/a"));
    assert_int_equal(icm_fileio_stat(&info, io, "mem://trash/a"), ICM_ENOTFOUND);
    bool same = true;
    icmt_ok(icm__fileio_same_store(&same, io, "mem://wh/t/a", "mem://trash"));
    assert_false(same);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_moves_never_replace),
        cmocka_unit_test(test_data_loss_move_makes_folders_through_a_link),
        cmocka_unit_test(test_prune_removes_only_the_empty_folders_below_stop),
        cmocka_unit_test(test_memory_back_end_cannot_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
