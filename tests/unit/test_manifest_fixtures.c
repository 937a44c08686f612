/*
 * tests/unit/test_manifest_fixtures.c: every .avro file under the shared fixtures decodes
 * completely as a manifest list or a manifest (chosen from its schema), except the files that
 * are not Iceberg metadata: Avro *data* files of tables, and the AES-GCM encrypted manifest
 * list named by the fixtures README. Those must fail cleanly with ICM_EINVALID naming the file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "icemaint/manifest.h"
#include "testutil.h"

typedef struct tally {
    int lists, manifests, rejected, entries;
} tally;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Files that are known not to be Iceberg metadata: table data files written in Avro (they sit
 * in a data/ folder) and the encrypted manifest list. */
static bool expected_not_metadata(const char *path)
{
    return strstr(path, "/data/0000") != NULL ||
           ends_with(path, "manifest-list-v3-encrypted.avro");
}

static int decode_all(const char *path, const char *data, size_t len, tally *t)
{
    icm_manifest_list_reader *lr = NULL;
    int rc = icm_manifest_list_reader_open(&lr, data, len, path, NULL);
    if (rc == 0) {
        const icm_manifest_file *m;
        while ((rc = icm_manifest_list_reader_next(&m, lr)) == 0) {
            assert_non_null(m->manifest_path);
            assert_true(m->manifest_path_len > 0);
            t->entries++;
        }
        icm_manifest_list_reader_free(lr);
        t->lists++;
        return rc;
    }
    icm_manifest_reader *mr = NULL;
    rc = icm_manifest_reader_open(&mr, data, len, path, NULL);
    if (rc < 0)
        return rc;
    const icm_manifest_entry *e;
    while ((rc = icm_manifest_reader_next(&e, mr)) == 0) {
        assert_true(e->data_file.file_path_len > 0);
        assert_true(e->status <= ICM_ENTRY_DELETED);
        t->entries++;
    }
    icm_manifest_reader_free(mr);
    t->manifests++;
    return rc;
}

static void visit(const char *path, tally *t)
{
    size_t len;
    char *data = icmt_read_file(path, &len);
    assert_non_null(data);
    int rc = decode_all(path, data, len, t);
    if (expected_not_metadata(path)) {
        if (rc != ICM_EINVALID)
            print_error("%s: expected ICM_EINVALID, got %d\n", path, rc);
        assert_int_equal(rc, ICM_EINVALID);
        assert_string_equal(icm_error_last()->location, path);
        t->rejected++;
    } else {
        if (rc != ICM_ITEROVER)
            print_error("%s: %s\n", path, icm_error_last()->message);
        assert_int_equal(rc, ICM_ITEROVER);
    }
    free(data);
}

static void walk(const char *dir, tally *t)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue; /* also skips Hadoop .crc side files */
        char *child = icmt_sprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(child, &st) == 0 && S_ISDIR(st.st_mode))
            walk(child, t);
        else if (ends_with(child, ".avro"))
            visit(child, t);
        free(child);
    }
    closedir(d);
}

static void test_every_fixture_avro_decodes(void **state)
{
    (void)state;
    struct stat st;
    if (stat(icmt_fixtures_dir(), &st) != 0)
        icmt_skip_because("the fixtures folder %s is missing", icmt_fixtures_dir());
    tally t = {0, 0, 0, 0};
    walk(icmt_fixtures_dir(), &t);
    print_message("lists %d, manifests %d, rejected %d, entries %d\n", t.lists, t.manifests,
                  t.rejected, t.entries);
    /* 486 .avro files: 3 are not metadata (two Avro data files, one encrypted list); the
     * list/manifest split is the one fastavro's schemas give (tests/py/test_avro_fastavro.py). */
    assert_int_equal(t.rejected, 3);
    assert_int_equal(t.lists, 227);
    assert_int_equal(t.manifests, 256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture_avro_decodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
