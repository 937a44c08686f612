/*
 * test_expire_nul_path.c: a manifest entry whose file_path holds a NUL byte. The Avro string
 * is `len` bytes, but every key in the library (icm__location_key, the path sets) is built from
 * the C string, which ends at the NUL. Had icm__location_key_tail looked at all `len` bytes, the
 * expiry's file-name pre-filter would judge a retained entry by a name that is not its key's,
 * drop it, and delete the candidate its key equals (a review finding, now a regression test).
 *
 *  - key_tail: "s3://b/t/data/A.parquet\0/data/Q.parquet" (41 bytes) has the key
 *    "s3://b/t/data/A.parquet"; key_tail must give "A.parquet" or decline.
 *  - expiry: A and B appended; an overwrite deletes both and adds Q, whose path in the
 *    manifest is patched to "<loc>/data/A.parquet\0/data/Q.parquet"; D appended. Expiring the
 *    first two snapshots must not delete A (the retained manifest's entry has A's key, as the
 *    unfiltered check sees it; or, if such a path is refused as corrupt, the retained manifest
 *    is unreadable and no data file is deleted, as the manifest reader does). Only A is
 *    asserted.
 */
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "testutil.h"
#include "util/location.h"
#include "util/util.h"

#define LOC "/wh/t"
#define T0 INT64_C(1700000000000)

static void test_key_tail_embedded_nul(void **state)
{
    (void)state;
    static const char loc[] = "s3://b/t/data/A.parquet\0/data/Q.parquet";
    size_t len = sizeof loc - 1;
    char *key = NULL;
    icmt_ok(icm__location_key(loc, &key));
    const char *slash = strrchr(key, '/');
    const char *seg = slash != NULL ? slash + 1 : key;
    assert_string_equal(seg, "A.parquet");
    const char *tail = NULL;
    size_t n = 0;
    if (icm__location_key_tail(loc, len, &tail, &n)) {
        if (n != strlen(seg) || memcmp(tail, seg, n) != 0)
            print_error("key_tail gave \"%.*s\", the key's last segment is \"%s\"\n", (int)n,
                        tail, seg);
        assert_int_equal(n, strlen(seg));
        assert_memory_equal(tail, seg, n);
    }
    icm_free(key);
}

/* ---- end to end ---- */

typedef struct found {
    char *paths[64];
    size_t n;
} found;

static int on_listed(const icm_file_info *f, void *payload)
{
    found *fd = payload;
    size_t len = strlen(f->location);
    if (fd->n < 64 && len > 5 && strcmp(f->location + len - 5, ".avro") == 0)
        fd->paths[fd->n++] = strdup(f->location);
    return 0;
}

/* Replace the byte after `marker` ('?') by NUL in every Avro file under `loc`; how many. */
static size_t patch_nul(icm_fileio *io, const char *marker)
{
    found fd = {{NULL}, 0};
    icmt_ok(icm_fileio_list(io, LOC, on_listed, &fd));
    size_t patched = 0;
    for (size_t i = 0; i < fd.n; i++) {
        char *data = NULL;
        size_t len = 0;
        icmt_ok(icm_fileio_read(&data, &len, io, fd.paths[i]));
        char *at = memmem(data, len, marker, strlen(marker));
        if (at != NULL) {
            at[strlen(marker) - 1] = '\0';
            icmt_ok(icm_fileio_write_replace(io, fd.paths[i], data, len));
            patched++;
        }
        icm_free(data);
        free(fd.paths[i]);
    }
    return patched;
}

static bool exists(icm_fileio *io, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, path);
    assert_true(rc == 0 || rc == ICM_ENOTFOUND);
    return rc == 0;
}

static void test_expire_keeps_file_named_before_nul(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, LOC, 2, false, T0);
    hist_append(h, "main", "A", "B", NULL);
    hist_set_data_location(h, LOC "/data/A.parquet?");
    const char *add[] = {"Q", NULL}, *del[] = {"A", "B", NULL};
    hist_overwrite(h, "main", add, del);
    hist_set_data_location(h, NULL);
    hist_append(h, "main", "D", NULL);
    assert_true(patch_nul(io, "data/A.parquet?") >= 1);

    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(h);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = hist_time(h) - 1000; /* the first two snapshots */
    icm_table *t = hist_open_table(h);
    icm_expire_result *r = NULL;
    icmt_ok(icm_expire_snapshots(&r, t, &o));
    assert_non_null(r);
    assert_int_equal(r->expired_count, 2);
    char *a = hist_data_path(h, "A");
    /* The retained manifest's entry is "<loc>/data/A.parquet" as a C string: A stays. */
    assert_true(exists(io, a));
    free(a);
    icm_expire_result_free(r);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_tail_embedded_nul),
        cmocka_unit_test(test_expire_keeps_file_named_before_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
