/*
 * test_trash_journal.c: the trash journal reader (maint/trash_journal.c) reads exactly what
 * the writer writes — every field, `\udcXY` escapes back to the raw bytes they stand for,
 * surrogate pairs to UTF-8, members of a later version skipped — and refuses, naming the line,
 * anything that is not a whole record (a missing member, a member twice, another version, a
 * fraction, a lone surrogate, an escaped NUL), keeping the records before it.
 */
#include <string.h>

#include "maint/trash.h"
#include "testutil.h"

static int parse(const char *text, icm__trash_record **recs, size_t *n)
{
    size_t cap = 0;
    *recs = NULL;
    *n = 0;
    return icm__trash_journal_parse(text, strlen(text), "j.jsonl", recs, n, &cap);
}

#define REC(orig, extra)                                                                    \
    "{\"version\":1,\"table_uuid\":\"u-1\",\"table_location\":\"/t\",\"original\":\"" orig \
    "\",\"trash\":\"/x/u-1/files/a\",\"size_bytes\":12,\"mtime_ms\":-1,"                    \
    "\"trashed_at_ms\":1790000000000" extra "}"

static void test_reads_every_field_and_the_escapes(void **state)
{
    (void)state;
    icm__trash_record *r;
    size_t n;
    icmt_ok(parse("\n  " REC("/t/a\\udcff\\u00e9\\ud83d\\ude00\\n", ",\"later\":\"x\",\"n\":-3")
                  "\r\n" REC("/t/b", "") "\n",
                  &r, &n));
    assert_int_equal(n, 2);
    assert_string_equal(r[0].table_uuid, "u-1");
    assert_string_equal(r[0].table_location, "/t");
    assert_string_equal(r[0].original, "/t/a\xff\xc3\xa9\xf0\x9f\x98\x80\n");
    assert_string_equal(r[0].trash, "/x/u-1/files/a");
    assert_int_equal(r[0].size_bytes, 12);
    assert_int_equal(r[0].mtime_ms, -1);
    assert_int_equal(r[0].trashed_at_ms, INT64_C(1790000000000));
    assert_string_equal(r[1].original, "/t/b");
    icm__trash_records_free(r, n);
}

static void test_refuses_what_is_no_record(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"version\":2,\"table_uuid\":\"u\"}",
        "{\"version\":1,\"table_uuid\":\"u-1\",\"table_location\":\"/t\",\"original\":\"/t/a\","
        "\"trash\":\"/x\",\"size_bytes\":1,\"mtime_ms\":1}", /* no trashed_at_ms */
        REC("/t/a", ",\"size_bytes\":3"),                    /* a member twice */
        REC("/t/\\udc00", ""),                               /* lone low surrogate < 0x80 */
        REC("/t/\\ud83d", ""),                               /* lone high surrogate */
        REC("/t/\\u0000", ""),                               /* escaped NUL */
        REC("", ""),                                         /* empty string */
        REC("/t/a", ",\"x\":1.5"),                           /* a fraction */
        REC("/t/a", "") " trailing",
        "[1]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm__trash_record *r;
        size_t n;
        char text[1024];
        snprintf(text, sizeof text, "%s\n%s\n", REC("/t/ok", ""), bad[i]);
        assert_int_equal(parse(text, &r, &n), ICM_EINVALID);
        assert_int_equal(n, 1); /* the good line before is kept */
        assert_non_null(strstr(icm_error_last()->message, "line 2"));
        assert_string_equal(icm_error_last()->location, "j.jsonl");
        icm__trash_records_free(r, n);
    }
}

/* A restore's record (`event`, `restored_at_ms`) reads as one; a record without `event` (every
 * journal before it) is a trashing; an unknown event, or a restore without its time, is
 * refused (never guessed: expire decides by a name's newest event). */
static void test_reads_restore_records(void **state)
{
    (void)state;
    icm__trash_record *r;
    size_t n;
    icmt_ok(parse(REC("/t/a", "") "\n"
                  REC("/t/a", ",\"event\":\"restored\",\"restored_at_ms\":1790000000500")
                  "\n" REC("/t/a", ",\"event\":\"trashed\""),
                  &r, &n));
    assert_int_equal(n, 3);
    assert_false(r[0].restored);
    assert_int_equal(r[0].restored_at_ms, -1);
    assert_int_equal(icm__trash_record_ms(&r[0]), 1790000000000);
    assert_true(r[1].restored);
    assert_int_equal(r[1].restored_at_ms, 1790000000500);
    assert_int_equal(icm__trash_record_ms(&r[1]), 1790000000500);
    assert_false(r[2].restored);
    icm__trash_records_free(r, n);
    static const char *const bad[] = {
        REC("/t/a", ",\"event\":\"moved\""),
        REC("/t/a", ",\"event\":\"restored\""),
        REC("/t/a", ",\"restored_at_ms\":5"),
        REC("/t/a", ",\"event\":\"restored\",\"restored_at_ms\":-5"),
        REC("/t/a", ",\"event\":\"restored\",\"event\":\"restored\",\"restored_at_ms\":5"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(bad[i], &r, &n), ICM_EINVALID);
        assert_int_equal(n, 0);
        icm__trash_records_free(r, n);
    }
}

/* A journal whose last line was cut short (a crash or a full disk in the middle of a write:
 * no newline, no closing brace) reads up to it: that record's file never moved, and one torn
 * line must not make the whole trash unusable (adversary round 3, F6). A whole last line that
 * is no record, or a torn line with lines after it, is still refused. */
static void test_skips_a_torn_last_line(void **state)
{
    (void)state;
    icm__trash_record *r;
    size_t n;
    const char *whole = REC("/t/a", "") "\n";
    char text[1024];
    static const size_t cuts[] = {1, 20, 60, 150};
    const char *next = REC("/t/b", "");
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(text, sizeof text, "%s%.*s", whole, (int)cuts[i], next);
        icmt_ok(parse(text, &r, &n));
        assert_int_equal(n, 1);
        assert_string_equal(r[0].original, "/t/a");
        icm__trash_records_free(r, n);
    }
    snprintf(text, sizeof text, "%s%.*s\n%s", whole, 40, next, whole);
    assert_int_equal(parse(text, &r, &n), ICM_EINVALID); /* torn, then more: not a crash */
    icm__trash_records_free(r, n);
    snprintf(text, sizeof text, "%s%s", whole, REC("/t/b", ",\"event\":\"moved\""));
    assert_int_equal(parse(text, &r, &n), ICM_EINVALID); /* whole, no newline, no record */
    icm__trash_records_free(r, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_every_field_and_the_escapes),
        cmocka_unit_test(test_refuses_what_is_no_record),
        cmocka_unit_test(test_reads_restore_records),
        cmocka_unit_test(test_skips_a_torn_last_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
