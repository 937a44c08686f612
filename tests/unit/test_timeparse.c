/*
 * tests/unit/test_timeparse.c: the CLI's time values (src/cli/timeparse.c): durations, ISO-8601
 * instants with zones, dates and epoch milliseconds, and the values that must be refused.
 *
 * The parser is part of the CLI executable, not of libicemaint, so this test compiles its
 * source directly. Expected instants come from libc's timegm() (an independent
 * implementation) or from well-known constants, never from the parser itself.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

#include "cli/timeparse.c"

#define NOW_MS INT64_C(1780000000000) /* 2026-05-28T20:26:40Z */

static int64_t timegm_ms(int year, int month, int day, int hour, int minute, int second)
{
    struct tm tm = {0};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    return (int64_t)timegm(&tm) * 1000;
}

static int64_t parse_ok(const char *text)
{
    int64_t ms = -12345;
    const char *why = NULL;
    int rc = icm_cli_parse_time(text, NOW_MS, &ms, &why);
    if (rc != 0)
        print_error("'%s' refused: %s\n", text, why);
    assert_int_equal(rc, 0);
    return ms;
}

static void parse_bad(const char *text)
{
    int64_t ms = -12345;
    const char *why = NULL;
    if (icm_cli_parse_time(text, NOW_MS, &ms, &why) == 0)
        print_error("'%s' accepted as %lld\n", text, (long long)ms);
    assert_int_equal(icm_cli_parse_time(text, NOW_MS, &ms, &why), -1);
    assert_non_null(why);
    assert_true(strlen(why) > 0);
    assert_int_equal(ms, -12345); /* nothing written on failure */
}

static void test_durations(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(icm_cli_parse_duration("90m", &ms, NULL), 0);
    assert_int_equal(ms, INT64_C(90) * 60 * 1000);
    assert_int_equal(icm_cli_parse_duration("36h", &ms, NULL), 0);
    assert_int_equal(ms, INT64_C(36) * 3600 * 1000);
    assert_int_equal(icm_cli_parse_duration("5d", &ms, NULL), 0);
    assert_int_equal(ms, INT64_C(5) * 86400 * 1000);
    assert_int_equal(icm_cli_parse_duration("2w", &ms, NULL), 0);
    assert_int_equal(ms, INT64_C(14) * 86400 * 1000);
    assert_int_equal(icm_cli_parse_duration("45s", &ms, NULL), 0);
    assert_int_equal(ms, 45000);
    assert_int_equal(icm_cli_parse_duration("0d", &ms, NULL), 0);
    assert_int_equal(ms, 0);

    /* "older than 5d" is a cutoff of now minus five days */
    assert_int_equal(parse_ok("5d"), NOW_MS - INT64_C(5) * 86400 * 1000);
    assert_int_equal(parse_ok("90m"), NOW_MS - INT64_C(90) * 60 * 1000);
    assert_int_equal(parse_ok("36h"), NOW_MS - INT64_C(36) * 3600 * 1000);
}

static void test_bad_durations(void **state)
{
    (void)state;
    int64_t ms;
    const char *why = NULL;
    const char *bad[] = {"", "d", "5", "5x", "5dd", "-5d", "5 d", " 5d", "5.5", "5.5.5h", "5D",
                         "99999999999999999999d", "9223372036854775807w"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (icm_cli_parse_duration(bad[i], &ms, &why) == 0)
            print_error("duration '%s' accepted\n", bad[i]);
        assert_int_equal(icm_cli_parse_duration(bad[i], &ms, &why), -1);
        assert_non_null(why);
    }
    /* a duration larger than "now" can be but does not overflow int64: before 1970 */
    assert_int_equal(parse_ok("100000d"), NOW_MS - INT64_C(100000) * 86400 * 1000);
    parse_bad("9223372036854775w");
}

/* The reason a duration is refused for. */
static const char *duration_why(const char *text)
{
    int64_t ms = -12345;
    const char *why = NULL;
    if (icm_cli_parse_duration(text, &ms, &why) == 0)
        print_error("duration '%s' accepted as %lld\n", text, (long long)ms);
    assert_int_equal(icm_cli_parse_duration(text, &ms, &why), -1);
    assert_int_equal(ms, -12345); /* nothing written on failure */
    assert_non_null(why);
    return why;
}

/* A decimal duration is accepted when it is a whole number of milliseconds (`--settle 0.5s`
 * was refused as "needs a unit" although it has one); the reasons for the refused spellings
 * say what is wrong with them. */
static void test_decimal_durations(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(icm_cli_parse_duration("0.5s", &ms, NULL), 0);
    assert_int_equal(ms, 500);
    assert_int_equal(icm_cli_parse_duration("1.25m", &ms, NULL), 0);
    assert_int_equal(ms, 75000);
    assert_int_equal(icm_cli_parse_duration("5.5h", &ms, NULL), 0);
    assert_int_equal(ms, INT64_C(19800000));
    assert_int_equal(icm_cli_parse_duration("1.5d", &ms, NULL), 0);
    assert_int_equal(ms, INT64_C(36) * 3600 * 1000);
    assert_int_equal(icm_cli_parse_duration("0.001s", &ms, NULL), 0);
    assert_int_equal(ms, 1);
    assert_int_equal(icm_cli_parse_duration("2.500000000000000000000s", &ms, NULL), 0);
    assert_int_equal(ms, 2500);
    assert_int_equal(icm_cli_parse_duration("0.0000003125w", &ms, NULL), 0); /* 10 digits */
    assert_int_equal(ms, 189);
    assert_int_equal(icm_cli_parse_duration("0.0s", &ms, NULL), 0);
    assert_int_equal(ms, 0);
    /* the same parser serves --older-than */
    assert_int_equal(parse_ok("1.5d"), NOW_MS - INT64_C(36) * 3600 * 1000);

    assert_string_equal(duration_why("0.5"), "a duration needs a unit: s, m, h, d or w (like 36h)");
    assert_string_equal(duration_why("-1s"), "a duration cannot be negative");
    assert_string_equal(duration_why("1.s"),
                        "a decimal duration needs a digit after the point (like 1.5h)");
    assert_string_equal(duration_why(".5s"),
                        "a decimal duration needs a digit before the point (like 0.5s)");
    assert_string_equal(duration_why("0.0001s"),
                        "a duration must come to whole milliseconds (0.001s is the finest)");
    assert_string_equal(duration_why("0.00000000001w"),
                        "a duration must come to whole milliseconds (0.001s is the finest)");
    assert_string_equal(duration_why("1.5"), "a duration needs a unit: s, m, h, d or w (like 36h)");
    (void)duration_why("9223372036854775.5w"); /* too large */
    parse_bad("-1s");
    parse_bad(".5s");
    parse_bad("1.s");
}

static void test_iso_instants(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(parse_ok("2000-01-01T00:00:00Z"), INT64_C(946684800000));
    assert_int_equal(parse_ok("2026-11-01T00:00:00Z"), timegm_ms(2026, 11, 1, 0, 0, 0));
    assert_int_equal(parse_ok("2026-11-01T13:45:59Z"), timegm_ms(2026, 11, 1, 13, 45, 59));
    assert_int_equal(parse_ok("2026-11-01t13:45:59z"), timegm_ms(2026, 11, 1, 13, 45, 59));
    assert_int_equal(parse_ok("2026-11-01T13:45Z"), timegm_ms(2026, 11, 1, 13, 45, 0));
    /* fractions: truncated to milliseconds */
    assert_int_equal(parse_ok("2026-11-01T13:45:59.5Z"), timegm_ms(2026, 11, 1, 13, 45, 59) + 500);
    assert_int_equal(parse_ok("2026-11-01T13:45:59.123Z"),
                     timegm_ms(2026, 11, 1, 13, 45, 59) + 123);
    assert_int_equal(parse_ok("2026-11-01T13:45:59.123999999Z"),
                     timegm_ms(2026, 11, 1, 13, 45, 59) + 123);
    /* offsets: local time minus offset is UTC */
    assert_int_equal(parse_ok("2026-11-01T02:00:00+02:00"), timegm_ms(2026, 11, 1, 0, 0, 0));
    assert_int_equal(parse_ok("2026-11-01T02:00:00+0200"), timegm_ms(2026, 11, 1, 0, 0, 0));
    assert_int_equal(parse_ok("2026-11-01T02:00:00+02"), timegm_ms(2026, 11, 1, 0, 0, 0));
    assert_int_equal(parse_ok("2026-10-31T19:30:00-04:30"), timegm_ms(2026, 11, 1, 0, 0, 0));
    /* a date alone is midnight UTC */
    assert_int_equal(parse_ok("2026-11-01"), timegm_ms(2026, 11, 1, 0, 0, 0));
    assert_int_equal(parse_ok("1969-12-31"), -INT64_C(86400000));
}

/* Every day from 1600 to 2400 (leap rules for 1700/1800/1900/2000/2100 included) agrees with
 * timegm. */
static void test_every_date_agrees_with_timegm(void **state)
{
    (void)state;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    char text[32];
    size_t checked = 0;
    for (int y = 1600; y <= 2400; y++) {
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for (int m = 1; m <= 12; m++) {
            int last = mdays[m - 1] + (m == 2 && leap ? 1 : 0);
            for (int d = 1; d <= last; d++) {
                snprintf(text, sizeof text, "%04d-%02d-%02dT23:59:58Z", y, m, d);
                int64_t ms = 0;
                assert_int_equal(icm_cli_parse_time(text, NOW_MS, &ms, NULL), 0);
                if (ms != timegm_ms(y, m, d, 23, 59, 58))
                    print_error("%s: %lld\n", text, (long long)ms);
                assert_int_equal(ms, timegm_ms(y, m, d, 23, 59, 58));
                checked++;
            }
            /* the day after the last one does not exist */
            snprintf(text, sizeof text, "%04d-%02d-%02d", y, m, last + 1);
            parse_bad(text);
        }
    }
    assert_int_equal(checked, 292560); /* 801 years of days: 801*365 + 195 leap days */
}

static void test_epoch_ms(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("0"), 0);
    assert_int_equal(parse_ok("1793491200000"), INT64_C(1793491200000));
    assert_int_equal(parse_ok("9223372036854775807"), INT64_MAX);
    parse_bad("9223372036854775808");
    parse_bad("-1");
}

static void test_refused(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "yesterday",
        "2026-11-01T00:00:00",       /* no zone: would depend on the machine */
        "2026-11-01T00:00",          /* no zone */
        "2026-11-01 00:00:00Z",      /* space instead of T */
        "2026-13-01T00:00:00Z",      /* month 13 */
        "2026-00-10",                /* month 0 */
        "2026-02-29",                /* not a leap year */
        "1900-02-29",                /* century, not a leap year */
        "2026-11-01T24:00:00Z",      /* 24:00 */
        "2026-11-01T23:60:00Z",
        "2026-11-01T23:59:60Z",      /* leap second */
        "2026-11-01T00:00:00.Z",     /* empty fraction */
        "2026-11-01T00:00:00.1234567890Z",
        "2026-11-01T00:00:00+24:00",
        "2026-11-01T00:00:00+02:60",
        "2026-11-01T00:00:00Zjunk",
        "2026-1-01",
        "26-11-01",
        "2026-11-01T1:00Z",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        parse_bad(bad[i]);
    /* leap days that exist */
    assert_int_equal(parse_ok("2024-02-29"), timegm_ms(2024, 2, 29, 0, 0, 0));
    assert_int_equal(parse_ok("2000-02-29"), timegm_ms(2000, 2, 29, 0, 0, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_bad_durations),
        cmocka_unit_test(test_decimal_durations),
        cmocka_unit_test(test_iso_instants),
        cmocka_unit_test(test_every_date_agrees_with_timegm),
        cmocka_unit_test(test_epoch_ms),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
