/*
 * tests/unit/test_delete_limits.c: the guard rails' check (icm_delete_limits_check,
 * include/icemaint/maint.h): a plan exactly at a bound passes, one file, byte or hundredth of a
 * percent over it is refused with ICM_EREFUSED and a message naming the bound and the plan's
 * number; negative bounds are off; a base of 0 files passes any percentage.
 */
#include <string.h>

#include "icemaint/errors.h"
#include "icemaint/maint.h"
#include "testutil.h"

static void test_no_limits_pass_anything(void **state)
{
    (void)state;
    icm_delete_limits none = ICM_DELETE_LIMITS_NONE;
    assert_int_equal(icm_delete_limits_check(&none, "t", 1000000, INT64_MAX, 1), 0);
}

static void test_files_bound_is_inclusive(void **state)
{
    (void)state;
    icm_delete_limits l = ICM_DELETE_LIMITS_NONE;
    l.max_files = 10;
    assert_int_equal(icm_delete_limits_check(&l, "t", 10, 0, 0), 0);
    assert_int_equal(icm_delete_limits_check(&l, "t", 11, 0, 0), ICM_EREFUSED);
    const char *msg = icm_error_last()->message;
    assert_non_null(strstr(msg, "11 files"));
    assert_non_null(strstr(msg, "--max-delete 10"));
    l.max_files = 0; /* --max-delete 0: nothing may be deleted */
    assert_int_equal(icm_delete_limits_check(&l, "t", 0, 0, 0), 0);
    assert_int_equal(icm_delete_limits_check(&l, "t", 1, 0, 0), ICM_EREFUSED);
}

static void test_bytes_bound_is_inclusive(void **state)
{
    (void)state;
    icm_delete_limits l = ICM_DELETE_LIMITS_NONE;
    l.max_bytes = 1024;
    assert_int_equal(icm_delete_limits_check(&l, "t", 3, 1024, 0), 0);
    assert_int_equal(icm_delete_limits_check(&l, "t", 3, 1025, 0), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "1025 bytes"));
    assert_non_null(strstr(icm_error_last()->message, "--max-delete-bytes 1024"));
}

static void test_percent_bound_is_exact(void **state)
{
    (void)state;
    icm_delete_limits l = ICM_DELETE_LIMITS_NONE;
    l.max_percent = 25.0;
    assert_int_equal(icm_delete_limits_check(&l, "t", 10, 0, 40), 0);       /* 25% */
    assert_int_equal(icm_delete_limits_check(&l, "t", 11, 0, 40), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "11 of 40 files"));
    l.max_percent = 33.33; /* 1 of 3 is 33.333...%: over */
    assert_int_equal(icm_delete_limits_check(&l, "t", 1, 0, 3), ICM_EREFUSED);
    l.max_percent = 0.0;
    assert_int_equal(icm_delete_limits_check(&l, "t", 0, 0, 3), 0);
    assert_int_equal(icm_delete_limits_check(&l, "t", 1, 0, 1000000), ICM_EREFUSED);
    /* nothing listed: no percentage to take */
    assert_int_equal(icm_delete_limits_check(&l, "t", 0, 0, 0), 0);
    l.max_percent = 100.0;
    assert_int_equal(icm_delete_limits_check(&l, "t", 7, 0, 7), 0);
}

static void test_first_bound_over_is_named(void **state)
{
    (void)state;
    icm_delete_limits l = {5, 100, 50.0};
    assert_int_equal(icm_delete_limits_check(&l, "t", 5, 100, 10), 0);
    assert_int_equal(icm_delete_limits_check(&l, "t", 5, 101, 10), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "--max-delete-bytes"));
    assert_int_equal(icm_delete_limits_check(&l, "t", 5, 100, 9), ICM_EREFUSED);
    assert_non_null(strstr(icm_error_last()->message, "--max-delete-percent"));
    assert_int_equal(icm_delete_limits_check(NULL, "t", 0, 0, 0), ICM_EINVALID);
}

static void test_byte_sum_saturates(void **state)
{
    (void)state;
    assert_int_equal(icm_delete_limits_add_bytes(5, 7), 12);
    assert_int_equal(icm_delete_limits_add_bytes(5, -1), 5); /* unknown size */
    assert_true(icm_delete_limits_add_bytes(INT64_MAX - 1, INT64_MAX) == INT64_MAX);
    icm_delete_limits l = ICM_DELETE_LIMITS_NONE;
    l.max_bytes = INT64_MAX - 1;
    int64_t sum = icm_delete_limits_add_bytes(icm_delete_limits_add_bytes(0, INT64_MAX), 1);
    assert_int_equal(icm_delete_limits_check(&l, "t", 2, sum, 0), ICM_EREFUSED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_limits_pass_anything),
        cmocka_unit_test(test_files_bound_is_inclusive),
        cmocka_unit_test(test_bytes_bound_is_inclusive),
        cmocka_unit_test(test_percent_bound_is_exact),
        cmocka_unit_test(test_first_bound_over_is_named),
        cmocka_unit_test(test_byte_sum_saturates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
