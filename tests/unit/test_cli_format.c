/*
 * tests/unit/test_cli_format.c: the CLI's number formats (src/cli/output.c, compiled in here).
 * A Prometheus sample is written with the fewest digits that read back as the same double:
 * `2.131`, not the `%.17g` noise `2.1309999999999998`, and never a value that reads back as
 * another number. Times and integers are written without printf (a sweep's report formats
 * millions); they must read exactly as printf's text, at the edges too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json_out.c"
#include "cli/output.c"
#include "testutil.h"

/* main.c's error reporter, which output.c's JSON helpers call; not reached here */
int icm_cli_error(const char *where, const char *fmt, ...)
{
    (void)where;
    (void)fmt;
    return 1;
}

static void test_double_shortest_that_reads_back(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(icm_cli_format_double(2.131, buf, sizeof buf), "2.131");
    assert_string_equal(icm_cli_format_double(0.1 + 0.2, buf, sizeof buf),
                        "0.30000000000000004");
    assert_string_equal(icm_cli_format_double(0.0, buf, sizeof buf), "0");
    assert_string_equal(icm_cli_format_double(-1.5, buf, sizeof buf), "-1.5");
    assert_string_equal(icm_cli_format_double(1795600000000.0, buf, sizeof buf), "1795600000000");
    assert_string_equal(icm_cli_format_double(9007199254740993.0, buf, sizeof buf),
                        "9007199254740992");
    assert_string_equal(icm_cli_format_double(1e300, buf, sizeof buf), "1e+300");
    assert_string_equal(icm_cli_format_double(NAN, buf, sizeof buf), "nan");
    assert_string_equal(icm_cli_format_double(-INFINITY, buf, sizeof buf), "-inf");
    /* every value of a sweep of awkward ones reads back exactly */
    double v = 1.0 / 3.0;
    for (int i = 0; i < 2000; i++, v *= 1.0173) {
        icm_cli_format_double(v, buf, sizeof buf);
        assert_true(strtod(buf, NULL) == v);
        assert_true(strlen(buf) <= 24);
    }
}

/* printf's reading of a time, the text icm_cli_format_time had before it wrote digits itself */
static void printf_time(int64_t ms, char *buf, size_t size)
{
    int64_t secs = ms / 1000, frac = ms % 1000;
    if (frac < 0) {
        frac += 1000;
        secs -= 1;
    }
    time_t t = (time_t)secs;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL)
        snprintf(buf, size, "%" PRId64 "ms", ms);
    else
        snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)frac);
}

static void test_time_and_int_as_printf_writes_them(void **state)
{
    (void)state;
    char got[64], want[64];
    const int64_t times[] = {0,          1,           -1,          999,           -999,
                             1000,       -1001,       INT64_C(1796288610403),
                             INT64_C(253402300799999), /* 9999-12-31T23:59:59.999Z */
                             INT64_C(253402300800000), /* year 10000: printf's path */
                             INT64_C(-62167219200000), /* year 0 */
                             INT64_C(-62167219200001), /* year -1 */
                             INT64_MAX,  INT64_MIN};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        printf_time(times[i], want, sizeof want);
        assert_string_equal(icm_cli_format_time(times[i], got, sizeof got), want);
    }
    assert_string_equal(icm_cli_format_time(INT64_C(1700000000042), got, sizeof got),
                        "2023-11-14T22:13:20.042Z");
    assert_string_equal(icm_cli_format_time(-1, got, sizeof got), "1969-12-31T23:59:59.999Z");
    /* a buffer too small for the text: printf's truncation */
    assert_string_equal(icm_cli_format_time(INT64_C(1700000000042), got, 11), "2023-11-14");
    const int64_t ints[] = {0, 7, -7, 10, 1000, -1000, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        snprintf(want, sizeof want, "%" PRId64, ints[i]);
        assert_string_equal(icm_cli_format_int64(ints[i], got, sizeof got), want);
    }
    assert_string_equal(icm_cli_format_int64(123456, got, 4), "123");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_shortest_that_reads_back),
        cmocka_unit_test(test_time_and_int_as_printf_writes_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
