/*
 * Tests for maint/list_cuts.c: the sample of referenced keys is a function of the set offered
 * (not of order or repetitions), stays bounded, and its cuts are strictly increasing quantiles
 * that split the keys into ranges of about equal size.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "maint/list_cuts.h"

static uint64_t mix(uint64_t x) /* splitmix64's finaliser: a well-mixed hash of the index */
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static void key_of(size_t i, char *buf, size_t cap)
{
    snprintf(buf, cap, "s3://b/t/data/%016llx.parquet", (unsigned long long)mix(i * 7 + 1));
}

static void offer(icm__cut_sample *s, size_t i)
{
    char key[64];
    key_of(i, key, sizeof key);
    assert_int_equal(icm__cut_sample_offer(s, mix(i), key), 0);
}

/* 100,000 keys offered forwards, and backwards with every key twice: the same cuts. */
static void test_same_set_same_cuts(void **state)
{
    (void)state;
    enum { N = 100000 };
    icm__cut_sample a = {0}, b = {0};
    for (size_t i = 0; i < N; i++)
        offer(&a, i);
    for (size_t i = N; i-- > 0;) {
        offer(&b, i);
        offer(&b, i);
    }
    assert_true(a.len < ICM__CUT_SAMPLE_MAX);
    assert_true(a.len >= ICM__CUT_SAMPLE_MAX / 4);
    char **ca = NULL, **cb = NULL;
    size_t na = 0, nb = 0;
    assert_int_equal(icm__cut_sample_cuts(&a, 16, &ca, &na), 0);
    assert_int_equal(icm__cut_sample_cuts(&b, 16, &cb, &nb), 0);
    assert_int_equal(na, 15);
    assert_int_equal(nb, na);
    for (size_t k = 0; k < na; k++) {
        assert_string_equal(ca[k], cb[k]);
        if (k > 0)
            assert_true(strcmp(ca[k - 1], ca[k]) < 0);
    }
    /* the ranges hold about N/16 keys each (within a factor of 2) */
    size_t counts[16] = {0};
    for (size_t i = 0; i < N; i++) {
        char key[64];
        key_of(i, key, sizeof key);
        size_t r = 0;
        while (r < na && strcmp(ca[r], key) < 0)
            r++;
        counts[r]++;
    }
    for (size_t r = 0; r < 16; r++) {
        assert_true(counts[r] > N / 32);
        assert_true(counts[r] < N / 8);
    }
    icm__cuts_free(ca, na);
    icm__cuts_free(cb, nb);
    icm__cut_sample_dispose(&a);
    icm__cut_sample_dispose(&b);
}

/* Too few keys to split: no cuts; a few: fewer ranges, two keys each at least. */
static void test_small_samples(void **state)
{
    (void)state;
    icm__cut_sample s = {0};
    char **c = NULL;
    size_t n = 99;
    assert_int_equal(icm__cut_sample_cuts(&s, 16, &c, &n), 0);
    assert_null(c);
    assert_int_equal(n, 0);
    for (size_t i = 0; i < 3; i++)
        offer(&s, i);
    assert_int_equal(icm__cut_sample_cuts(&s, 16, &c, &n), 0);
    assert_int_equal(n, 0);
    for (size_t i = 3; i < 10; i++)
        offer(&s, i);
    assert_int_equal(icm__cut_sample_cuts(&s, 16, &c, &n), 0);
    assert_int_equal(n, 4); /* 10 keys: 5 ranges of 2 */
    icm__cuts_free(c, n);
    assert_int_equal(icm__cut_sample_cuts(&s, 1, &c, &n), 0);
    assert_int_equal(n, 0);
    icm__cut_sample_dispose(&s);
}

/* Which shard's range holds `key` (exactly one must). */
static size_t owner(char *const *after, char *const *upto, const bool *empty, size_t count,
                    const char *key)
{
    size_t found = count, hits = 0;
    for (size_t i = 0; i < count; i++) {
        if (empty[i])
            continue;
        if ((after[i] == NULL || strcmp(key, after[i]) > 0) &&
            (upto[i] == NULL || strcmp(key, upto[i]) <= 0)) {
            found = i;
            hits++;
        }
    }
    assert_int_equal(hits, 1);
    return found;
}

/* The shard ranges (a sharded sweep): the same from the same set of keys offered in any order,
 * contiguous, every key in exactly one range, each range holding about keys / count of the
 * sample; with fewer keys than shards the last shards have no range, and every key still
 * has exactly one owner. */
static void check_shards(size_t n_keys, size_t count)
{
    icm__cut_sample a = {0}, b = {0};
    for (size_t i = 0; i < n_keys; i++)
        offer(&a, i);
    for (size_t i = n_keys; i-- > 0;)
        offer(&b, i);
    char **after = calloc(count, sizeof *after), **upto = calloc(count, sizeof *upto);
    bool *empty = calloc(count, sizeof *empty);
    size_t *per = calloc(count, sizeof *per);
    assert_non_null(after);
    assert_non_null(upto);
    assert_non_null(empty);
    assert_non_null(per);
    size_t idle = 0;
    for (size_t i = 0; i < count; i++) {
        char *a2 = NULL, *u2 = NULL;
        bool e2 = false;
        assert_int_equal(icm__cut_sample_shard(&a, i, count, &after[i], &upto[i], &empty[i]), 0);
        assert_int_equal(icm__cut_sample_shard(&b, i, count, &a2, &u2, &e2), 0);
        assert_int_equal(empty[i], e2);
        assert_true((after[i] == NULL) == (a2 == NULL) && (upto[i] == NULL) == (u2 == NULL));
        if (after[i] != NULL)
            assert_string_equal(after[i], a2);
        if (upto[i] != NULL)
            assert_string_equal(upto[i], u2);
        if (i > 0 && !empty[i]) /* contiguous: this range starts where the one before ends */
            assert_string_equal(after[i], upto[i - 1]);
        idle += empty[i];
        free(a2);
        free(u2);
    }
    size_t m = n_keys < count ? n_keys : count;
    assert_int_equal(idle, count - (m > 0 ? m : 1));
    for (size_t i = 0; i < n_keys; i++) {
        char key[64];
        key_of(i, key, sizeof key);
        per[owner(after, upto, empty, count, key)]++;
    }
    /* keys outside every sampled one still have one owner (the first and last ranges are
     * open) */
    (void)owner(after, upto, empty, count, "");
    (void)owner(after, upto, empty, count, "\x7f\x7f");
    if (n_keys <= ICM__CUT_SAMPLE_MAX / 2 && n_keys >= count) /* the sample is every key */
        for (size_t i = 0; i < count; i++)
            assert_true(per[i] >= n_keys / count && per[i] <= n_keys / count + 1);
    for (size_t i = 0; i < count; i++) {
        free(after[i]);
        free(upto[i]);
    }
    free(after);
    free(upto);
    free(empty);
    free(per);
    icm__cut_sample_dispose(&a);
    icm__cut_sample_dispose(&b);
}

static void test_shard_ranges(void **state)
{
    (void)state;
    check_shards(1000, 1);
    check_shards(1000, 2);
    check_shards(1000, 3);
    check_shards(1000, 7);
    check_shards(100000, 8);
    check_shards(5, 7);  /* fewer keys than shards: shards 5 and 6 idle */
    check_shards(0, 4);  /* nothing referenced: shard 0 takes everything */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_set_same_cuts),
        cmocka_unit_test(test_small_samples),
        cmocka_unit_test(test_shard_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
