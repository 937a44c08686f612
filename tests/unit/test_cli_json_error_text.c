/*
 * tests/unit/test_cli_json_error_text.c: with --json, a failing command prints exactly one JSON
 * document on stdout even when its error message is not valid UTF-8: a file name that is not
 * UTF-8, or a message cut to the CLI's line buffer inside a multi-byte character. Bytes that are
 * not UTF-8 are written with the lossless escape (README "Output": byte 0xXY as `\udcXY`,
 * Python's surrogateescape); stderr has the line escaped as text (`\xNN`).
 *
 * Found by adversarial testing: both cases printed nothing on stdout (jansson refuses strings
 * that are not UTF-8).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* `text` with every lone-surrogate escape `\udcXY` (an escaped byte) replaced by `\u003f`
 * ('?'), which jansson accepts (it refuses lone surrogates, as strict parsers do). */
static char *surrogates_to_question_marks(const char *text)
{
    char *copy = strdup(text);
    for (char *p = copy; (p = strstr(p, "\\udc")) != NULL; p += 6)
        memcpy(p, "\\u003f", 6);
    return copy;
}

/* The {"error": {...}} document of `cmdline`'s stdout; its message is returned (malloc'd), with
 * every escaped byte as '?'. The raw stdout is in *raw_out when not NULL (malloc'd). */
static char *json_error_message(const char *cmdline, int want_exit, char **raw_out)
{
    char *tmp = icmt_mkdtemp();
    icmt_run r = icmt_shell(tmp, cmdline);
    if (r.code != want_exit)
        print_error("exit %d\n--- stdout:\n%s\n--- stderr:\n%s\n", r.code, r.out, r.err);
    assert_int_equal(r.code, want_exit);
    json_error_t jerr;
    char *plain = surrogates_to_question_marks(r.out);
    json_t *doc = json_loads(plain, 0, &jerr);
    free(plain);
    if (raw_out != NULL)
        *raw_out = strdup(r.out);
    if (doc == NULL)
        print_error("stdout is not one JSON document (%s):\n%s\n", jerr.text, r.out);
    assert_non_null(doc);
    assert_int_equal(json_object_size(doc), 1);
    json_t *e = json_object_get(doc, "error");
    assert_int_equal(json_integer_value(json_object_get(e, "exit_code")), want_exit);
    const char *msg = json_string_value(json_object_get(e, "message"));
    assert_non_null(msg);
    char *copy = strdup(msg);
    json_decref(doc);
    icmt_run_free(&r);
    icmt_rmtree(tmp);
    free(tmp);
    return copy;
}

static void test_file_name_that_is_not_utf8(void **state)
{
    (void)state;
    char *cmd = icmt_sprintf("'%s' --json inspect \"$(printf '/nonexistent/a\\377\\376b')\"",
                             icmt_cli_path());
    char *raw = NULL;
    char *msg = json_error_message(cmd, 1, &raw);
    assert_non_null(strstr(msg, "/nonexistent/a??b: "));
    assert_non_null(strstr(raw, "/nonexistent/a\\udcff\\udcfeb: ")); /* lossless */
    assert_non_null(strstr(msg, "no such table"));
    free(raw);
    free(msg);
    free(cmd);
}

static void test_message_cut_inside_a_character(void **state)
{
    (void)state;
    /* A path of 2,100 two-byte characters after an odd-length prefix: the library keeps at
     * most 2,047 bytes of a location and the CLI at most 4,095 of a line, and whichever byte
     * they cut at, the document must parse. */
    for (int prefix = 1; prefix <= 2; prefix++) {
        char path[4400] = "/nonexistent/";
        strcat(path, prefix == 1 ? "x" : "xy");
        for (int i = 0; i < 2100; i++)
            strcat(path, "\xc3\xa9");
        char *cmd = icmt_sprintf("'%s' --json inspect '%s'", icmt_cli_path(), path);
        char *msg = json_error_message(cmd, 1, NULL);
        assert_true(strncmp(msg, path, 20) == 0);
        free(msg);
        free(cmd);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_name_that_is_not_utf8),
        cmocka_unit_test(test_message_cut_inside_a_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
