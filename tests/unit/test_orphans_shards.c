/*
 * Tests for the sharded sweep (options shard_index / shard_count, docs/semantics.md
 * #sharded-sweep) on the in-memory FileIO: the N shards' plans together are exactly the
 * unsharded plan, no file in two shards, `listed` and `referenced_listed` add up, and the
 * presence check of a shard expects only its own range's files (also in link mode, where R
 * keeps every reference);
 * strays beside every referenced key and at both ends of the byte order; more shards than
 * referenced keys leave the last shards idle; an index not below the count is ICM_EINVALID.
 */
#include <stdio.h>

#include "history.h"
#include "test_orphans_common.h"
#include "util/util.h"

typedef struct fixture {
    icm_fileio *mem;
    hist *h;
    icm_table *t;
    int64_t now;
} fixture;

static void setup(fixture *f, size_t appends)
{
    f->now = icm__now_ms();
    int64_t old = f->now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&f->mem));
    icm_fileio_mem_set_time(f->mem, old);
    f->h = hist_new(f->mem, "/t", 2, false, f->now - 20 * DAY_MS);
    for (size_t i = 0; i < appends; i++) {
        char name[24];
        snprintf(name, sizeof name, "f%zu", i);
        hist_append(f->h, "main", name, NULL);
    }
    /* a stray just before and just after every file the table has now (the ranges are cut
     * at referenced keys), and at both ends of the byte order */
    strv all = list_all(f->mem, "/t");
    for (size_t i = 0; i < all.n; i++) {
        char *after = icm__sprintf("%s~", all.v[i]);
        char *before = icm__sprintf("%s", all.v[i]);
        assert_non_null(after);
        assert_non_null(before);
        before[strlen(before) - 1]--;
        char *before2 = icm__sprintf("%s~", before);
        assert_non_null(before2);
        plant(f->mem, after, old);
        plant(f->mem, before2, old);
        icm__free(after);
        icm__free(before);
        icm__free(before2);
    }
    strv_free(&all);
    plant(f->mem, "/t/!first.parquet", old);
    plant(f->mem, "/t/~last.parquet", old);
    plant(f->mem, "/t/data/\xc3\xbc-\xe6\xbc\xa2.parquet", old);
    f->t = hist_open_table(f->h);
}

static void teardown(fixture *f)
{
    icm_table_free(f->t);
    hist_free(f->h);
    icm_fileio_free(f->mem);
}

static icm_orphan_result *sweep(fixture *f, unsigned index, unsigned count)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = f->now;
    o.dry_run = true;
    o.shard_index = index;
    o.shard_count = count;
    icm_orphan_result *r = NULL;
    icmt_ok(icm_orphan_sweep(&r, f->t, &o));
    return r;
}

static void check_union(fixture *f, unsigned count, bool expect_idle)
{
    icm_orphan_result *whole = sweep(f, 0, 0);
    assert_true(whole->orphan_count > 10);
    strv want = {NULL, 0}, got = {NULL, 0};
    for (size_t i = 0; i < whole->orphan_count; i++)
        strv_push(&want, whole->orphans[i].path);
    size_t listed = 0, referenced_listed = 0, idle = 0;
    for (unsigned s = 0; s < count; s++) {
        icm_orphan_result *r = sweep(f, s, count);
        for (size_t i = 0; i < r->orphan_count; i++) {
            assert_false(strv_has(&got, r->orphans[i].path)); /* in one shard only */
            strv_push(&got, r->orphans[i].path);
        }
        listed += r->listed;
        referenced_listed += r->referenced_listed;
        /* (The in-memory FileIO cannot resolve names, which puts the sweep in link mode,
         * where R keeps every reference; on disk and S3 a shard keeps fewer: test_shards.py.) */
        assert_true(r->referenced <= whole->referenced);
        idle += r->listed == 0;
        icm_orphan_result_free(r);
    }
    qsort(want.v, want.n, sizeof *want.v, strv_cmp);
    qsort(got.v, got.n, sizeof *got.v, strv_cmp);
    assert_int_equal(got.n, want.n);
    for (size_t i = 0; i < want.n; i++)
        assert_string_equal(got.v[i], want.v[i]);
    assert_int_equal(listed, whole->listed);
    assert_int_equal(referenced_listed, whole->referenced_listed);
    if (expect_idle)
        assert_true(idle > 0);
    strv_free(&want);
    strv_free(&got);
    icm_orphan_result_free(whole);
}

static void test_union_is_one_run(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 6);
    for (unsigned n = 1; n <= 7; n++)
        check_union(&f, n, false);
    teardown(&f);
}

static void test_more_shards_than_keys(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 1); /* a manifest list, a manifest, a data file: three keys */
    check_union(&f, 9, true);
    teardown(&f);
}

static void test_index_not_below_count(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 1);
    const unsigned bad[][2] = {{3, 3}, {1, 1}, {1, 0}, {9, 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
        o.now_ms = f.now;
        o.dry_run = true;
        o.shard_index = bad[i][0];
        o.shard_count = bad[i][1];
        icm_orphan_result *r = NULL;
        assert_int_equal(icm_orphan_sweep(&r, f.t, &o), ICM_EINVALID);
        assert_null(r);
        assert_non_null(strstr(icm_error_last()->message, "0-based"));
    }
    teardown(&f);
}

/* Every allocation of a shard's sweep failed in turn: ICM_ENOMEM (or a refusal, when a reader
 * reports the failure as an unreadable file) and no result, until the run gets through with the
 * same plan as a run without failures; under ASan nothing leaks. */
static void test_every_allocation_failure(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 3);
    icm_orphan_result *want = sweep(&f, 1, 3);
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = f.now;
    o.dry_run = true;
    o.shard_index = 1;
    o.shard_count = 3;
    int rc = -1;
    long n;
    for (n = 0; n < 20000 && rc != 0; n++) {
        icm_orphan_result *r = NULL;
        icmt_nomem_arm(n);
        rc = icm_orphan_sweep(&r, f.t, &o);
        icmt_nomem_disarm();
        if (rc != 0) {
            assert_true(rc == ICM_ENOMEM || rc == ICM_EREFUSED);
            assert_null(r);
            continue;
        }
        assert_int_equal(r->orphan_count, want->orphan_count);
        for (size_t i = 0; i < r->orphan_count; i++)
            assert_string_equal(r->orphans[i].path, want->orphans[i].path);
        icm_orphan_result_free(r);
    }
    assert_int_equal(rc, 0);
    assert_true(n > 20);
    icm_orphan_result_free(want);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union_is_one_run),
        cmocka_unit_test(test_more_shards_than_keys),
        cmocka_unit_test(test_index_not_below_count),
        cmocka_unit_test(test_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
