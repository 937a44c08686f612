/*
 * tests/unit/test_cli_format.c: the CLI's number formats (src/cli/output.c, compiled in here).
 * A Prometheus sample is written with the fewest digits that read back as the same double:
 * `2.131`, not the `%.17g` noise `2.1309999999999998`, and never a value that reads back as
 * another number.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_shortest_that_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
