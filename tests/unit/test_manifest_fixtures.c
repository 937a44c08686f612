/*
 * tests/unit/test_manifest_fixtures.c: every .avro file under the shared fixtures decodes
 * completely as a manifest list or a manifest (chosen from its schema), except the files that
 * are not Iceberg metadata: Avro *data* files of tables, and the AES-GCM encrypted manifest
 * list named by the fixtures README. Those must fail cleanly with ICM_EINVALID naming the file.
 * Every list also reads the same through the walk's fast path (rows found ahead).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "avro/avro.h"
#include "icemaint/manifest.h"
#include "manifest/manifest_internal.h"
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

/* A filtered read: the paths offered to the filter, of which every other one is claimed
 * (skipped), and the rows handed on. */
typedef struct halves {
    char **offered, **kept;
    size_t n_offered, n_kept;
} halves;

static void push(char ***v, size_t *n, const char *s, size_t len)
{
    *v = realloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = strndup(s, len);
}

static bool claim_every_other(const uint8_t *path, size_t len, void *payload)
{
    halves *h = payload;
    push(&h->offered, &h->n_offered, (const char *)path, len);
    return h->n_offered % 2 == 0;
}

static int keep_path(const icm_manifest_file *mf, void *payload)
{
    halves *h = payload;
    push(&h->kept, &h->n_kept, mf->manifest_path, strlen(mf->manifest_path));
    return 0;
}

static void assert_same_strings(char *const *a, size_t na, char *const *b, size_t nb)
{
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        assert_string_equal(a[i], b[i]);
}

static void halves_free(halves *h)
{
    for (size_t i = 0; i < h->n_offered; i++)
        free(h->offered[i]);
    for (size_t i = 0; i < h->n_kept; i++)
        free(h->kept[i]);
    free(h->offered);
    free(h->kept);
}

/* The walk's fast path on a real list: rows found ahead (icm__manifest_list_scan, with and
 * without blocks inflated ahead) give a filtered read exactly the rows, and the result, of
 * reading each row itself. */
static void check_rows_ahead(const char *path, const char *data, size_t len, int rows_total)
{
    halves plain = {NULL, NULL, 0, 0};
    int want = icm__manifest_list_read_data(data, len, NULL, NULL, path, NULL, NULL,
                                            claim_every_other, keep_path, &plain);
    for (int inflate = 0; inflate < 2; inflate++) {
        icm__avro_inflated inflated = {NULL, 0};
        if (inflate)
            icm__avro_inflate_ahead(data, len, &inflated);
        icm__list_rows rows;
        icm__manifest_list_scan(data, len, inflate ? &inflated : NULL, path, NULL, NULL, &rows);
        assert_true(rows.n <= (size_t)rows_total);
        halves fast = {NULL, NULL, 0, 0};
        int got = icm__manifest_list_read_data(data, len, inflate ? &inflated : NULL, &rows, path,
                                               NULL, NULL, claim_every_other, keep_path, &fast);
        assert_int_equal(got, want);
        assert_same_strings(fast.offered, fast.n_offered, plain.offered, plain.n_offered);
        assert_same_strings(fast.kept, fast.n_kept, plain.kept, plain.n_kept);
        halves_free(&fast);
        icm__list_rows_dispose(&rows);
        icm__avro_inflated_dispose(&inflated);
    }
    halves_free(&plain);
}

static int decode_all(const char *path, const char *data, size_t len, tally *t)
{
    icm_manifest_list_reader *lr = NULL;
    int entries_before = t->entries;
    int rc = icm_manifest_list_reader_open(&lr, data, len, path, NULL);
    if (rc == 0) {
        const icm_manifest_file *m;
        while ((rc = icm_manifest_list_reader_next(lr, &m)) == 0) {
            assert_non_null(m->manifest_path);
            assert_true(m->manifest_path_len > 0);
            t->entries++;
        }
        icm_manifest_list_reader_free(lr);
        t->lists++;
        check_rows_ahead(path, data, len, t->entries - entries_before);
        return rc;
    }
    icm_manifest_reader *mr = NULL;
    rc = icm_manifest_reader_open(&mr, data, len, path, NULL);
    if (rc < 0)
        return rc;
    const icm_manifest_entry *e;
    while ((rc = icm_manifest_reader_next(mr, &e)) == 0) {
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
        skip();
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
