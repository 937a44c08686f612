/*
 * tests/unit/test_cli_json_out.c: the CLI's JSON writer (src/cli/json_out.c, compiled in here):
 * documents of valid names come out exactly as jansson's JSON_INDENT(2) (pretty) and default
 * (one line) layouts print them, so switching writers changed no output; strings stored
 * unchecked with bytes that are not UTF-8 come out with the lossless `\udcXY` escape instead of
 * failing; a failing stream is reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json_out.c"
#include "testutil.h"

/* What icm_cli_json_write prints for `doc`, as a malloc'd string. */
static char *written(const json_t *doc, bool pretty)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_true(icm_cli_json_write(f, doc, pretty));
    assert_int_equal(fclose(f), 0);
    return buf;
}

static json_t *sample(void)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "dry_run", json_false());
    json_object_set_new(doc, "orphans", json_array());
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string("s3://b/t/data/x=1/caf\xc3\xa9 \"q\".parquet"));
    json_object_set_new(o, "size_bytes", json_integer(INT64_C(9007199254740993)));
    json_object_set_new(o, "error", json_null());
    json_object_set_new(o, "ok", json_true());
    json_object_set_new(o, "ids", json_pack("[I, I, I]", (json_int_t)-1, (json_int_t)0,
                                            (json_int_t)INT64_MAX));
    json_array_append_new(json_object_get(doc, "orphans"), o);
    json_object_set_new(doc, "counts", json_object());
    json_object_set_new(doc, "z-last", json_string("ctl\x01\n\t"));
    return doc;
}

static void test_layout_is_janssons(void **state)
{
    (void)state;
    json_t *doc = sample();
    for (int pretty = 0; pretty <= 1; pretty++) {
        char *ours = written(doc, pretty);
        char *theirs = json_dumps(doc, pretty ? JSON_INDENT(2) : 0);
        size_t n = strlen(theirs);
        assert_int_equal(strlen(ours), n + 1); /* and a newline */
        assert_memory_equal(ours, theirs, n);
        assert_int_equal(ours[n], '\n');
        if (!pretty)
            assert_ptr_equal(strchr(ours, '\n'), ours + n); /* one line */
        free(theirs);
        free(ours);
    }
    json_decref(doc);
}

static void test_bytes_that_are_not_utf8_are_escaped(void **state)
{
    (void)state;
    json_t *doc = json_object();
    const char name[] = "/t/data/bad\xff\xfe\nx.parquet";
    json_object_set_new(doc, "path", json_stringn_nocheck(name, sizeof name - 1));
    char *ours = written(doc, false);
    assert_string_equal(ours, "{\"path\": \"/t/data/bad\\udcff\\udcfe\\nx.parquet\"}\n");
    free(ours);
    /* jansson itself refuses to write it: the reason the CLI has its own writer */
    assert_null(json_dumps(doc, 0));
    json_decref(doc);
}

static void test_a_failing_stream_is_reported(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "w");
    assert_non_null(full);
    setvbuf(full, NULL, _IONBF, 0);
    json_t *doc = sample();
    assert_false(icm_cli_json_write(full, doc, true));
    json_decref(doc);
    fclose(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_is_janssons),
        cmocka_unit_test(test_bytes_that_are_not_utf8_are_escaped),
        cmocka_unit_test(test_a_failing_stream_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
