/*
 * tests/unit/test_strset_numbered.c: the string set's numbering (util/strset.h
 * icm__strset_add_numbered), which `icemaint files` uses to find a file's row: strings are
 * numbered 0, 1, 2, ... in the order they were first added, a string added again gets its first
 * number back (across the table growing), and the plain add/put/lookup calls count in the same
 * sequence.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "util/strset.h"

static void test_numbers_follow_first_insertion(void **state)
{
    (void)state;
    icm__strset s = ICM__STRSET_INIT;
    bool added = false;
    size_t number = 99;
    /* the empty string and strings with NUL bytes are strings like any other */
    icmt_ok(icm__strset_add_numbered(&s, "", 0, &added, &number));
    assert_true(added);
    assert_int_equal(number, 0);
    icmt_ok(icm__strset_add_numbered(&s, "a\0b", 3, &added, &number));
    assert_true(added);
    assert_int_equal(number, 1);
    icmt_ok(icm__strset_add(&s, "plain", 5, &added)); /* numbered too */
    assert_true(added);
    /* enough strings to grow the table many times (64 slots first) */
    char k[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(k, sizeof k, "s3://b/data/%d.parquet", i);
        icmt_ok(icm__strset_add_numbered(&s, k, (size_t)n, &added, &number));
        assert_true(added);
        assert_int_equal(number, (size_t)i + 3);
    }
    for (int i = 4999; i >= 0; i--) {
        int n = snprintf(k, sizeof k, "s3://b/data/%d.parquet", i);
        number = 99;
        icmt_ok(icm__strset_add_numbered(&s, k, (size_t)n, &added, &number));
        assert_false(added);
        assert_int_equal(number, (size_t)i + 3);
    }
    icmt_ok(icm__strset_add_numbered(&s, "plain", 5, &added, &number));
    assert_false(added);
    assert_int_equal(number, 2);
    icmt_ok(icm__strset_add_numbered(&s, "", 0, &added, &number));
    assert_false(added);
    assert_int_equal(number, 0);
    icmt_ok(icm__strset_add_numbered(&s, "a\0b", 3, &added, NULL)); /* number may be NULL */
    assert_false(added);
    assert_int_equal(icm__strset_count(&s), 5003);
    icm__strset_dispose(&s);
    /* a disposed set numbers from 0 again */
    icmt_ok(icm__strset_add_numbered(&s, "x", 1, &added, &number));
    assert_true(added);
    assert_int_equal(number, 0);
    icm__strset_dispose(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_follow_first_insertion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
