/*
 * tests/unit/test_expire_checksums.c: expiry plans the storage's checksum companions
 * (icm_fileio_checksum_of) of the files it deletes as files of their own,
 * on histories in memory behind a FileIO whose checksum_of names a chosen companion:
 *  - a planned file's companion is planned (kind "checksum", its size), listed in
 *    deleted_checksum_files, deleted after every other file, and only with its file;
 *  - a companion a retained snapshot still references (here a live data file, in any role)
 *    is never planned; nor is a kept file's companion ever asked for;
 *  - a companion whose file's delete failed is not deleted;
 *  - a retained manifest that cannot be read holds back every companion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "icemaint/sys/fileio.h"
#include "testutil.h"
#include "util/util.h"

#define T0 INT64_C(1700000000000)
#define LOC "/wh/t"

/* ---- a FileIO over memory whose companions are given by a table of (file, companion) ---- */

typedef struct pair {
    const char *file;      /* location suffix below LOC */
    const char *companion; /* location suffix of its companion */
} pair;

typedef struct companion_io {
    icm_fileio base;
    icm_fileio *inner;
    const pair *pairs;
    size_t n_pairs;
    char *deleted[64];     /* every delete, in order */
    size_t n_deleted;
    const char *fail;      /* a location suffix whose delete fails, or NULL */
    size_t asked;          /* checksum_of calls */
} companion_io;

static icm_fileio *inner_of(icm_fileio *io)
{
    return ((companion_io *)io)->inner;
}

static int c_read(icm_fileio *io, const char *l, char **out, size_t *len)
{
    return icm_fileio_read(out, len, inner_of(io), l);
}

static int c_read_range(icm_fileio *io, const char *l, int64_t off, void *buf, size_t len,
                        size_t *got)
{
    return icm_fileio_read_range(got, inner_of(io), l, off, buf, len);
}

static int c_create_new(icm_fileio *io, const char *l, const void *d, size_t len)
{
    return icm_fileio_create_new(inner_of(io), l, d, len);
}

static int c_write_replace(icm_fileio *io, const char *l, const void *d, size_t len)
{
    return icm_fileio_write_replace(inner_of(io), l, d, len);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int c_remove(icm_fileio *io, const char *l)
{
    companion_io *c = (companion_io *)io;
    if (c->fail != NULL && ends_with(l, c->fail))
        return ICM_EIO;
    if (c->n_deleted < 64)
        c->deleted[c->n_deleted++] = strdup(l);
    return icm_fileio_delete(c->inner, l);
}

static int c_stat(icm_fileio *io, const char *l, icm_file_info *out)
{
    return icm_fileio_stat(out, inner_of(io), l);
}

static int c_list(icm_fileio *io, const char *p, unsigned flags, icm_list_cb cb, void *payload)
{
    return icm_fileio_list_flags(inner_of(io), p, flags, cb, payload);
}

static void c_free(icm_fileio *io)
{
    (void)io; /* owned by the test */
}

static int c_checksum_of(icm_fileio *io, const char *l, char **out, icm_file_info *info)
{
    companion_io *c = (companion_io *)io;
    c->asked++;
    for (size_t i = 0; i < c->n_pairs; i++) {
        if (!ends_with(l, c->pairs[i].file))
            continue;
        char *crc = icmt_sprintf(LOC "/%s", c->pairs[i].companion);
        if (icm_fileio_stat(info, c->inner, crc) != 0) { /* not there: none */
            icm_error_clear();
            free(crc);
            return 0;
        }
        *out = icm__strdup(crc);
        free(crc);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    return 0;
}

static const icm_fileio_methods COMPANION_METHODS = {
    ICM_FILEIO_METHODS_VERSION, "companions", c_read, c_read_range, c_create_new,
    c_write_replace, c_remove, c_stat, NULL, c_free, c_list, NULL, c_checksum_of, NULL,
    NULL, NULL,
};

static void plant(companion_io *c, const char *suffix, const char *content)
{
    char *l = icmt_sprintf(LOC "/%s", suffix);
    icmt_ok(icm_fileio_write_replace(c->inner, l, content, strlen(content)));
    free(l);
}

static bool present(companion_io *c, const char *suffix)
{
    char *l = icmt_sprintf(LOC "/%s", suffix);
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, c->inner, l);
    icm_error_clear();
    free(l);
    return rc == 0;
}

static icm_expire_options before_now(hist *h, bool dry_run)
{
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(h);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = hist_time(h);
    o.dry_run = dry_run;
    return o;
}

/* Appends A, B, C, then deletes A and C: expiring the three appends plans A and C (and the
 * appends' manifest lists); B stays live. */
static hist *three_appends_then_delete(companion_io *c)
{
    hist *h = hist_new(&c->base, LOC, 2, false, T0);
    hist_append(h, "main", "A", NULL);
    hist_append(h, "main", "B", NULL);
    hist_append(h, "main", "C", NULL);
    hist_delete(h, "main", "A", "C", NULL);
    return h;
}

static const icm_expire_file *find(const icm_expire_file *files, size_t n, const char *suffix)
{
    for (size_t i = 0; i < n; i++)
        if (ends_with(files[i].path, suffix))
            return &files[i];
    return NULL;
}

static void companion_io_init(companion_io *c, const pair *pairs, size_t n)
{
    memset(c, 0, sizeof *c);
    c->base.methods = &COMPANION_METHODS;
    c->pairs = pairs;
    c->n_pairs = n;
    icmt_ok(icm_fileio_mem_new(&c->inner));
}

static void companion_io_dispose(companion_io *c)
{
    for (size_t i = 0; i < c->n_deleted; i++)
        free(c->deleted[i]);
    icm_fileio_free(c->inner);
}

/* A's companion is a file of its own; C's "companion" is B, which the retained snapshot
 * still lists as a live data file: planned, never. */
static void test_companions_planned_but_never_a_referenced_file(void **state)
{
    (void)state;
    static const pair pairs[] = {{"/data/A.parquet", "data/.A.parquet.crc"},
                                 {"/data/C.parquet", "data/B.parquet"},
                                 {"/data/B.parquet", "data/.B.parquet.crc"}};
    companion_io c;
    companion_io_init(&c, pairs, 3);
    hist *h = three_appends_then_delete(&c);
    plant(&c, "data/.A.parquet.crc", "crc of A");
    plant(&c, "data/.B.parquet.crc", "crc of B");
    icm_table *t = hist_open_table(h);

    icm_expire_options o = before_now(h, true);
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_non_null(find(r->deleted_files, r->deleted_file_count, "/data/A.parquet"));
    assert_non_null(find(r->deleted_files, r->deleted_file_count, "/data/C.parquet"));
    assert_null(find(r->deleted_files, r->deleted_file_count, "/data/B.parquet"));
    assert_int_equal(r->deleted_checksum_file_count, 1);
    const icm_expire_file *crc = &r->deleted_checksum_files[0];
    assert_string_equal(crc->path, LOC "/data/.A.parquet.crc");
    assert_int_equal(crc->kind, ICM_EXPIRE_FILE_CHECKSUM);
    assert_int_equal(crc->size_bytes, (int64_t)strlen("crc of A"));
    assert_int_equal(r->counts[ICM_EXPIRE_FILE_CHECKSUM], 1);
    assert_string_equal(icm_expire_file_kind_name(ICM_EXPIRE_FILE_CHECKSUM), "checksum");
    icm_expire_result_free(r);
    assert_int_equal(c.n_deleted, 0); /* a dry run */

    o = before_now(h, false);
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_int_equal(r->deleted_checksum_file_count, 1);
    assert_int_equal(r->deleted_checksum_files[0].state, ICM_EXPIRE_FILE_DELETED);
    /* the companion went last, after its file; B and its companion stay */
    assert_true(c.n_deleted >= 3);
    assert_true(ends_with(c.deleted[c.n_deleted - 1], "/data/.A.parquet.crc"));
    assert_false(present(&c, "data/A.parquet") || present(&c, "data/.A.parquet.crc"));
    assert_true(present(&c, "data/B.parquet") && present(&c, "data/.B.parquet.crc"));
    icm_expire_result_free(r);
    icm_table_free(t);
    hist_free(h);
    companion_io_dispose(&c);
}

/* The companion of a file whose delete failed stays. */
static void test_companion_stays_when_its_files_delete_fails(void **state)
{
    (void)state;
    static const pair pairs[] = {{"/data/A.parquet", "data/.A.parquet.crc"},
                                 {"/data/C.parquet", "data/.C.parquet.crc"}};
    companion_io c;
    companion_io_init(&c, pairs, 2);
    hist *h = three_appends_then_delete(&c);
    plant(&c, "data/.A.parquet.crc", "crc of A");
    plant(&c, "data/.C.parquet.crc", "crc of C");
    c.fail = "/data/C.parquet";
    icm_table *t = hist_open_table(h);
    icm_expire_options o = before_now(h, false);
    o.max_commit_retries = 0;
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    const icm_expire_file *a = find(r->deleted_checksum_files, r->deleted_checksum_file_count,
                                    "/data/.A.parquet.crc");
    const icm_expire_file *cc = find(r->deleted_checksum_files, r->deleted_checksum_file_count,
                                     "/data/.C.parquet.crc");
    assert_non_null(a);
    assert_non_null(cc);
    assert_int_equal(a->state, ICM_EXPIRE_FILE_DELETED);
    assert_int_equal(cc->state, ICM_EXPIRE_FILE_FAILED);
    assert_false(present(&c, "data/.A.parquet.crc"));
    assert_true(present(&c, "data/C.parquet") && present(&c, "data/.C.parquet.crc"));
    bool said = false;
    for (size_t i = 0; i < r->problem_count; i++)
        said = said || (ends_with(r->problems[i].location, "/data/.C.parquet.crc") &&
                        strstr(r->problems[i].message, "could not be deleted") != NULL);
    assert_true(said);
    icm_expire_result_free(r);
    icm_table_free(t);
    hist_free(h);
    companion_io_dispose(&c);
}

/* Nothing expires by age here but what the decision says; a kept file's companion is never
 * looked up: only planned files are asked about. */
static void test_only_planned_files_are_asked_about(void **state)
{
    (void)state;
    companion_io c;
    companion_io_init(&c, NULL, 0);
    hist *h = three_appends_then_delete(&c);
    icm_table *t = hist_open_table(h);
    icm_expire_options o = before_now(h, true);
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    size_t planned = r->deleted_file_count + r->deleted_manifest_count +
                     r->deleted_statistics_file_count;
    assert_true(planned >= 5); /* A, C, three manifest lists */
    assert_int_equal(c.asked, planned);
    assert_int_equal(r->deleted_checksum_file_count, 0);
    icm_expire_result_free(r);
    icm_table_free(t);
    hist_free(h);
    companion_io_dispose(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_companions_planned_but_never_a_referenced_file),
        cmocka_unit_test(test_companion_stays_when_its_files_delete_fails),
        cmocka_unit_test(test_only_planned_files_are_asked_about),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
