/*
 * tests/unit/test_health.c: the health report (icemaint/health.h) on tables the history helper
 * writes into the in-memory FileIO.
 *
 *  1. Statically: health.c references no FileIO call that deletes, creates or writes (nm on the
 *     library archive); its one path to the sweep is a dry run (checked in 2 by the files).
 *  2. Figures: snapshots and the oldest one's age against a fixed now; referenced files and
 *     bytes of the current snapshot and of all snapshots (each file once; the sizes the model's
 *     stored files have); manifests per snapshot and the small ones; unreferenced = exactly the
 *     planted orphans; the metadata documents stored; nothing in storage changed.
 *  3. Expiry records icemaint.last-expire-ms = its now in its commit, and health reports it.
 *  4. Options: init, versions, a negative bound, NULL arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "icemaint/health.h"
#include "icemaint/testing/fileio.h"
#include "testutil.h"

#define LOC "/wh/t"
#define T0 INT64_C(1700000000000)
#define DAY INT64_C(86400000)

/* ---- 1. nm ---- */

static void test_health_cannot_delete_or_write(void **state)
{
    (void)state;
    char *a = icmt_library_archive();
    static const char *const forbidden[] = {"icm_fileio_delete", "icm_fileio_create_new",
                                            "icm_fileio_write_replace",
                                            "icm_fileio_delete_existing",
                                            "icm_fileio_delete_batch", "icm__delete_run",
                                            "icm_table_commit", "icm_table_commit_changes", NULL};
    for (size_t s = 0; forbidden[s] != NULL; s++) {
        bool seen;
        bool refs = icmt_archive_member_references(a, "health.c.o", forbidden[s], &seen);
        assert_true(seen);
        if (refs)
            print_error("health.c references %s\n", forbidden[s]);
        assert_false(refs);
    }
    bool seen;
    assert_true(icmt_archive_member_references(a, "health.c.o", "icm_orphan_sweep", &seen));
    free(a);
}

/* ---- 2. figures ---- */

static int64_t size_of(icm_fileio *io, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, io, path));
    return info.size_bytes;
}

typedef struct listing {
    size_t n;
    int64_t bytes;
    size_t docs;              /* metadata documents */
    int64_t doc_bytes;
    size_t stale_docs;        /* ... that the metadata does not name */
    int64_t stale_doc_bytes;
    const icm_table_metadata *md;
} listing;

static bool named(const icm_table_metadata *md, const char *path)
{
    if (strcmp(icm_table_metadata_file(md), path) == 0)
        return true;
    for (size_t i = 0; i < icm_table_metadata_metadata_log_count(md); i++)
        if (strcmp(icm_table_metadata_metadata_log_at(md, i)->metadata_file, path) == 0)
            return true;
    return false;
}

static int on_listed(const icm_file_info *f, void *payload)
{
    listing *l = payload;
    l->n++;
    l->bytes += f->size_bytes;
    size_t n = strlen(f->location);
    if (n > 14 && strcmp(f->location + n - 14, ".metadata.json") == 0) {
        l->docs++;
        l->doc_bytes += f->size_bytes;
        if (l->md != NULL && !named(l->md, f->location)) {
            l->stale_docs++;
            l->stale_doc_bytes += f->size_bytes;
        }
    }
    return 0;
}

static listing list_all(icm_fileio *io, const icm_table_metadata *md)
{
    listing l = {0, 0, 0, 0, 0, 0, md};
    icmt_ok(icm_fileio_list(io, LOC, on_listed, &l));
    return l;
}

/* The sizes of the data files named, stored as the history wrote them. */
static int64_t data_bytes(hist *h, const char *const *names)
{
    int64_t sum = 0;
    for (size_t i = 0; names[i] != NULL; i++) {
        char *p = hist_data_path(h, names[i]);
        sum += size_of(hist_io(h), p);
        free(p);
    }
    return sum;
}

static void test_figures(void **state)
{
    (void)state;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_fileio_mem_set_time(mem, T0); /* every file old */
    hist *h = hist_new(mem, LOC, 2, false, T0);
    hist_append(h, "main", "A", NULL);          /* 1 manifest */
    hist_append(h, "main", "B", NULL);          /* 2 */
    hist_append(h, "main", "C", NULL);          /* 3 */
    hist_delete(h, "main", "A", NULL);          /* A gone from the current snapshot */
    icmt_ok(icm_fileio_create_new(mem, LOC "/data/orphan-1.parquet", "12345", 5));
    icmt_ok(icm_fileio_create_new(mem, LOC "/metadata/stray.avro", "abc", 3));
    icmt_ok(icm_fileio_create_new(mem, LOC "/data/.hidden", "zzzzzzzzzz", 10)); /* skipped */
    listing before = list_all(mem, NULL);

    icm_table *t = hist_open_table(h);
    icm_health_options o;
    icmt_ok(icm_health_options_init(&o, ICM_HEALTH_OPTIONS_VERSION));
    o.now_ms = T0 + 10 * DAY;
    icm_health_report *r = NULL;
    icmt_ok(icm_table_health(&r, t, &o));
    /* (after: the sweep's dry run refreshed the table, which replaces its metadata) */
    const icm_table_metadata *md = icm_table_get_metadata(t);
    assert_string_equal(icm_table_metadata_file(md), icm_table_get_metadata_location(t));
    listing stored = list_all(mem, md);

    size_t nsnap = 0;
    int64_t *ids = hist_snapshot_ids(h, &nsnap);
    assert_int_equal(r->snapshot_count, 4);
    assert_int_equal(nsnap, 4);
    int64_t oldest = INT64_MAX;
    for (size_t i = 0; i < icm_table_metadata_snapshot_count(md); i++) {
        int64_t ts = icm_table_metadata_snapshot_at(md, i)->timestamp_ms;
        oldest = ts < oldest ? ts : oldest;
    }
    assert_int_equal(r->oldest_snapshot_ms, oldest);
    assert_int_equal(r->oldest_snapshot_age_ms, T0 + 10 * DAY - oldest);
    assert_true(r->has_current_snapshot);
    assert_int_equal(r->current_snapshot_id, hist_head(h, "main"));

    static const char *const current[] = {"B", "C", NULL};
    static const char *const all[] = {"A", "B", "C", NULL};
    assert_int_equal(r->current_data_files.count, 2);
    assert_int_equal(r->current_data_files.bytes, data_bytes(h, current));
    assert_int_equal(r->retained_data_files.count, 3);
    assert_int_equal(r->retained_data_files.bytes, data_bytes(h, all));
    assert_int_equal(r->current_delete_files.count + r->retained_delete_files.count, 0);

    /* manifests: every snapshot's list read; the current snapshot's lengths summed */
    size_t total = 0, max = 0;
    for (size_t i = 0; i < nsnap; i++) {
        char **files = hist_snapshot_files(h, ids[i], true);
        size_t n = 0;
        for (size_t k = 0; files[k] != NULL; k++)
            n += strstr(files[k], "/snap-") == NULL && strstr(files[k], ".avro") != NULL;
        total += n;
        max = n > max ? n : max;
        if (ids[i] == r->current_snapshot_id) {
            assert_int_equal(r->current_manifests.count, n);
            int64_t bytes = 0;
            for (size_t k = 0; files[k] != NULL; k++)
                if (strstr(files[k], "/snap-") == NULL && strstr(files[k], ".avro") != NULL)
                    bytes += size_of(mem, files[k]);
            assert_int_equal(r->current_manifests.bytes, bytes);
        }
        hist_strv_free(files);
    }
    assert_int_equal(r->manifests_per_snapshot_max, max);
    assert_true(r->manifests_per_snapshot_mean * (double)nsnap == (double)total);
    assert_int_equal(r->small_manifest_bytes, ICM_HEALTH_DEFAULT_SMALL_MANIFEST_BYTES);
    assert_int_equal(r->current_small_manifests, r->current_manifests.count);

    /* unreferenced: the two planted files and the metadata documents the metadata no longer
     * names (the history's catalog keeps no metadata-log); the hidden one is skipped */
    assert_true(r->listed);
    assert_null(r->listing_error);
    assert_true(stored.stale_docs > 0);
    assert_int_equal(r->unreferenced.count, 2 + stored.stale_docs);
    assert_int_equal(r->unreferenced.bytes, 8 + stored.stale_doc_bytes);
    assert_int_equal(r->listed_files, before.n);
    double unref = (double)(8 + stored.stale_doc_bytes);
    assert_true(r->unreferenced_percent == 100.0 * unref / (unref + (double)data_bytes(h, all)));

    /* metadata: the documents stored, named or not */
    assert_int_equal(r->metadata_log_count, icm_table_metadata_metadata_log_count(md));
    assert_int_equal(r->metadata_files.count, stored.docs);
    assert_int_equal(r->metadata_files.bytes, stored.doc_bytes);
    assert_int_equal(r->current_metadata_bytes,
                     size_of(mem, icm_table_get_metadata_location(t)));
    assert_int_equal(r->last_expire_ms, -1);
    assert_int_equal(r->last_expire_age_ms, -1);
    assert_false(r->snapshots_expired_before);

    /* read-only: the same files, the same bytes */
    listing after = list_all(mem, NULL);
    assert_int_equal(after.n, before.n);
    assert_int_equal(after.bytes, before.bytes);

    /* a bound: only manifests below it are small */
    icm_health_report *r2 = NULL;
    o.small_manifest_bytes = 1;
    o.no_listing = true;
    icmt_ok(icm_table_health(&r2, t, &o));
    assert_int_equal(r2->current_small_manifests, 0);
    assert_false(r2->listed);
    assert_int_equal(r2->unreferenced.bytes, -1);
    assert_true(r2->unreferenced_percent < 0);
    assert_int_equal(r2->metadata_files.bytes, -1);
    assert_int_equal(r2->retained_data_files.count, 3);
    icm_health_report_free(r2);

    icm_health_report_free(r);
    free(ids);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(mem);
}

/* ---- 3. the expiry's record ---- */

static void test_expiry_records_its_time(void **state)
{
    (void)state;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_fileio_mem_set_time(mem, T0);
    hist *h = hist_new(mem, LOC, 2, false, T0);
    hist_append(h, "main", "A", NULL);
    hist_append(h, "main", "B", NULL);
    hist_append(h, "main", "C", NULL);
    icm_table *t = hist_open_table(h);
    const int64_t now = T0 + 7 * DAY;
    icm_expire_options eo = ICM_EXPIRE_OPTIONS_INIT;
    eo.decide.now_ms = now;
    eo.decide.has_older_than = true;
    eo.decide.older_than_ms = now;
    eo.decide.retain_last = 1;
    icm_expire_result *er = NULL;
    icmt_ok(icm_expire_snapshots(&er, t, &eo));
    assert_int_equal(er->expired_count, 2);
    icm_expire_result_free(er);

    icm_table *fresh = hist_open_table(h);
    char want[24];
    snprintf(want, sizeof want, "%lld", (long long)now);
    assert_string_equal(
        icm_table_metadata_property(icm_table_get_metadata(fresh), ICM_LAST_EXPIRE_PROPERTY),
        want);
    icm_health_options o = ICM_HEALTH_OPTIONS_INIT;
    o.now_ms = now + 3600000;
    icm_health_report *r = NULL;
    icmt_ok(icm_table_health(&r, fresh, &o));
    assert_int_equal(r->last_expire_ms, now);
    assert_int_equal(r->last_expire_age_ms, 3600000);
    assert_true(r->snapshots_expired_before);
    assert_int_equal(r->snapshot_count, 1);
    icm_health_report_free(r);
    icm_table_free(fresh);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(mem);
}

/* ---- 4. options ---- */

static void test_options(void **state)
{
    (void)state;
    icm_health_options o;
    memset(&o, 0xAB, sizeof o);
    icmt_ok(icm_health_options_init(&o, ICM_HEALTH_OPTIONS_VERSION));
    icm_health_options want = ICM_HEALTH_OPTIONS_INIT;
    assert_int_equal(o.version, want.version);
    assert_int_equal(o.now_ms, 0);
    assert_int_equal(o.small_manifest_bytes, 0);
    assert_false(o.no_listing);
    assert_null(o.catalog_files);
    assert_int_equal(icm_health_options_init(&o, 0), ICM_EINVALID);
    assert_int_equal(icm_health_options_init(&o, ICM_HEALTH_OPTIONS_VERSION + 1), ICM_EINVALID);
    assert_int_equal(icm_health_options_init(NULL, ICM_HEALTH_OPTIONS_VERSION), ICM_EINVALID);

    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    hist *h = hist_new(mem, LOC, 2, false, T0);
    hist_append(h, "main", "A", NULL);
    icm_table *t = hist_open_table(h);
    icm_health_report *r = (icm_health_report *)&o; /* must be cleared on failure */
    assert_int_equal(icm_table_health(&r, NULL, NULL), ICM_EINVALID);
    assert_null(r);
    assert_int_equal(icm_table_health(NULL, t, NULL), ICM_EINVALID);
    icm_health_options bad = ICM_HEALTH_OPTIONS_INIT;
    bad.version = 0;
    assert_int_equal(icm_table_health(&r, t, &bad), ICM_EINVALID);
    bad.version = ICM_HEALTH_OPTIONS_VERSION;
    bad.small_manifest_bytes = -1;
    assert_int_equal(icm_table_health(&r, t, &bad), ICM_EINVALID);
    assert_null(r);
    /* defaults (NULL options) work */
    icmt_ok(icm_table_health(&r, t, NULL));
    assert_int_equal(r->snapshot_count, 1);
    icm_health_report_free(r);
    icm_health_report_free(NULL);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_cannot_delete_or_write),
        cmocka_unit_test(test_figures),
        cmocka_unit_test(test_expiry_records_its_time),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
