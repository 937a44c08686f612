/*
 * test_mounts.c: the mount table and file identity (util/mounts.h), which the orphan sweep
 * uses to refuse a mount inside its listing location and to keep a file the metadata names
 * through another mount of one folder (adversary round 6, finding 3): mountinfo lines with
 * escaped paths, the mount holding a path (the longest mount point, the one on top among
 * equals), a device mounted twice, an unreadable or malformed table; identity walks up a
 * path's folders (a link to a folder is that folder).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/mounts.h"
#include "util/util.h"
#include "testutil.h"

static const char TABLE[] =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "40 27 254:0 /srv/share /mnt/two\\040words rw,relatime - ext4 /dev/vda rw\n"
    "41 27 0:50 / /srv/lake rw - nfs4 host:/export rw\n"
    "42 41 0:50 / /srv/lake rw - nfs4 host:/export rw\n"
    "43 41 0:51 / /srv/lake/t/vol rw - tmpfs tmpfs rw\n";

static char *write_table(const char *dir, const char *text)
{
    char *f = icmt_in(dir, "mountinfo");
    icmt_write_file(f, text, strlen(text));
    return f;
}

static void test_mount_table(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *f = write_table(dir, TABLE);
    icm__mounts ms;
    assert_int_equal(icm__mounts_read(&ms, f), 0);
    assert_int_equal(ms.n, 6);
    assert_string_equal(ms.m[2].point, "/mnt/two words"); /* \040 decoded */
    assert_int_equal(ms.m[2].major, 254);
    assert_int_equal(ms.m[2].minor, 0);
    /* the longest mount point holds a path; among equals the later one (on top) */
    assert_int_equal(icm__mounts_holding(&ms, "/srv/lake/t/data/x"), 4);
    assert_int_equal(icm__mounts_holding(&ms, "/srv/lake/t/vol/f"), 5);
    assert_int_equal(icm__mounts_holding(&ms, "/srv/lake/t/volume"), 4); /* by segment */
    assert_int_equal(icm__mounts_holding(&ms, "/home/x"), 1);
    /* 254:0 is mounted at / and at "/mnt/two words"; 0:50 twice; 0:51 once */
    assert_true(icm__mounts_device_shared(&ms, 1));
    assert_true(icm__mounts_device_shared(&ms, 4));
    assert_false(icm__mounts_device_shared(&ms, 5));
    assert_false(icm__mounts_device_shared(&ms, 0));
    icm__mounts_dispose(&ms);
    free(f);
    icmt_rmtree(dir);
    free(dir);
}

static void test_mount_table_errors(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    icm__mounts ms;
    char *missing = icmt_in(dir, "none");
    assert_int_equal(icm__mounts_read(&ms, missing), ICM_EIO);
    assert_non_null(strstr(icm_error_last()->message, "cannot read the mount table"));
    assert_int_equal(ms.n, 0);
    char *f = write_table(dir, "22 27 0:21 / /proc rw - proc proc rw\n23 27 nodevice / /x rw\n");
    assert_int_equal(icm__mounts_read(&ms, f), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "line 2"));
    free(f);
    f = write_table(dir, "");
    assert_int_equal(icm__mounts_read(&ms, f), ICM_EIO); /* empty: no mount is no answer */
    free(f);
    free(missing);
    icmt_rmtree(dir);
    free(dir);
}

static char *fs_path(const icm__mounts *ms, size_t i, const char *real)
{
    char *out = (char *)"unset";
    assert_int_equal(icm__mounts_fs_path(&out, ms, i, real), 0);
    return out;
}

static char *spelling(const icm__mounts *ms, size_t j, const char *path)
{
    char *out = (char *)"unset";
    assert_int_equal(icm__mounts_spelling(&out, ms, j, path), 0);
    return out;
}

static void expect(char *got, const char *want)
{
    if (want == NULL) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    icm__free(got);
}

/* A place's path on its file system (the mount's ROOT below its point) and back through each
 * mount of the device: how add-files tells a trashed file reached through a bind mount of its
 * folder (adversary round 7, finding 3). */
static void test_paths_across_mounts(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *f = write_table(dir, TABLE);
    icm__mounts ms;
    assert_int_equal(icm__mounts_read(&ms, f), 0);
    assert_string_equal(ms.m[1].root, "/");
    assert_string_equal(ms.m[2].root, "/srv/share");
    assert_true(icm__mounts_same_device(&ms, 1, 2));
    assert_false(icm__mounts_same_device(&ms, 1, 3));
    /* "/mnt/two words" shows /srv/share of 254:0 */
    expect(fs_path(&ms, 2, "/mnt/two words/t/x.parquet"), "/srv/share/t/x.parquet");
    expect(fs_path(&ms, 2, "/mnt/two words"), "/srv/share");
    expect(fs_path(&ms, 2, "/mnt/two"), NULL); /* not below its point (by segment) */
    expect(fs_path(&ms, 1, "/srv/share/t"), "/srv/share/t");
    expect(fs_path(&ms, 1, "/"), "/");
    /* back: mount 1 (the whole file system at /) shows every place, mount 2 only its folder */
    expect(spelling(&ms, 1, "/srv/share/t/x.parquet"), "/srv/share/t/x.parquet");
    expect(spelling(&ms, 2, "/srv/share/t/x.parquet"), "/mnt/two words/t/x.parquet");
    expect(spelling(&ms, 2, "/srv/share"), "/mnt/two words");
    expect(spelling(&ms, 2, "/srv"), NULL);
    expect(spelling(&ms, 2, "/srv/shared/x"), NULL); /* by segment */
    expect(spelling(&ms, 1, "/"), "/");
    icm__mounts_dispose(&ms);
    /* a ROOT that is not a path (a namespace file) maps nowhere */
    free(f);
    f = write_table(dir, "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
                         "50 27 0:4 net:[4026532] /run/netns/x rw - nsfs nsfs rw\n");
    assert_int_equal(icm__mounts_read(&ms, f), 0);
    expect(fs_path(&ms, 1, "/run/netns/x"), NULL);
    expect(spelling(&ms, 1, "/"), NULL);
    icm__mounts_dispose(&ms);
    free(f);
    icmt_rmtree(dir);
    free(dir);
}

static void test_identity_above(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    icmt_mkdir_in(dir, "a");
    icmt_mkdir_in(dir, "a/b");
    icmt_mkdir_in(dir, "c");
    char *a = icmt_in(dir, "a"), *b = icmt_in(dir, "a/b"), *c = icmt_in(dir, "c");
    char *deep = icmt_in(dir, "a/b/not/yet"), *link = icmt_in(dir, "l");
    assert_int_equal(symlink(a, link), 0);
    const char *rest = NULL;
    assert_true(icm__identity_above(deep, a, &rest));
    assert_string_equal(rest, "b/not/yet");
    assert_true(icm__identity_above(b, link, &rest)); /* the link is the folder it leads to */
    assert_string_equal(rest, "b");
    assert_true(icm__identity_above(a, a, &rest));
    assert_string_equal(rest, "");
    assert_false(icm__identity_above(a, b, NULL));
    assert_false(icm__identity_above(c, a, NULL));
    assert_true(icm__local_nested(link, b));
    assert_false(icm__local_nested(a, c));
    free(a);
    free(b);
    free(c);
    free(deep);
    free(link);
    icmt_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mount_table),
        cmocka_unit_test(test_mount_table_errors),
        cmocka_unit_test(test_paths_across_mounts),
        cmocka_unit_test(test_identity_above),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
