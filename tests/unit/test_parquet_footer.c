/*
 * tests/unit/test_parquet_footer.c: the Parquet footer reader (src/parquet/footer.c) on crafted
 * Thrift compact input at the bounds of its decoded integers: field ids (Thrift i16s, a
 * short-form delta added to the previous id or a long-form zigzag varint), varints of ten bytes,
 * and the fuzzer's input that overflowed the id arithmetic. Both walkers
 * (num_rows only, and num_rows with the schema) must refuse out-of-range input as a format error
 * naming the file and the offset, and accept every in-range id.
 */
#include <string.h>

#include "testutil.h"

#include "icemaint/fileio.h"
#include "parquet/parquet.h"

/* The 39-byte input fuzz_parquet_footer found (fuzz/corpus/parquet_footer/
 * field-id-delta-overflow.bin): a long-form field id whose varint decodes to
 * 9223372036854775800, then a short-form delta of 13 added to it. */
static const uint8_t FUZZ_FIELD_ID_OVERFLOW[] = {
    0x29, 0x1c, 0x15, 0xb6, 0x08, 0x08, 0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x15, 0x08, 0x15, 0x00, 0x15, 0x02, 0x4c, 0x0c, 0x0a, 0xd1, 0xd1,
    0xd1, 0xd1, 0xd1, 0xd1, 0xd1, 0x00, 0x00, 0x00, 0x26, 0x41, 0x41, 0x08, 0x08};

/* A FileMetaData holding one unknown field before a valid schema (root + one required int64
 * column "a") and num_rows = 7; `head` is the unknown field's header bytes (and value). */
static size_t footer_with(const uint8_t *head, size_t head_len, uint8_t *out, size_t cap)
{
    /* After the unknown field the ids go on in long form: 2 (schema) and 3 (num_rows). */
    static const uint8_t rest[] = {
        0x09, 0x04,             /* field 2 (long form, zigzag 2 = 4): list */
        0x2c,                   /* 2 elements, struct */
        0x48, 0x04, 'r', 'o', 'o', 't', 0x15, 0x02, 0x00, /* name "root", num_children 1 */
        0x15, 0x04, 0x25, 0x00, 0x18, 0x01, 'a', 0x00, /* type INT64, REQUIRED, name "a" */
        0x06, 0x06,             /* field 3 (long form, zigzag 3 = 6): i64 */
        0x0e,                   /* num_rows 7 */
        0x00};
    assert_true(head_len + sizeof rest <= cap);
    memcpy(out, head, head_len);
    memcpy(out + head_len, rest, sizeof rest);
    return head_len + sizeof rest;
}

/* Both walkers refuse `footer` with ICM_EINVALID, naming `location`, `why` and byte `at`. */
static void assert_refused(const uint8_t *footer, size_t len, const char *why, int64_t at)
{
    int64_t rows = -1;
    assert_int_equal(icm__parquet_footer_num_rows(footer, len, "x.parquet", &rows), ICM_EINVALID);
    const icm_error *e = icm_error_last();
    assert_string_equal(e->location, "x.parquet");
    if (strstr(e->message, why) == NULL)
        fail_msg("num_rows walk: expected \"%s\" in \"%s\"", why, e->message);
    assert_int_equal(e->offset, at);
    icm__parquet_schema *s = NULL;
    assert_int_equal(icm__parquet_footer_schema(footer, len, "x.parquet", &s), ICM_EINVALID);
    assert_null(s);
    e = icm_error_last();
    assert_string_equal(e->location, "x.parquet");
    if (strstr(e->message, why) == NULL)
        fail_msg("schema walk: expected \"%s\" in \"%s\"", why, e->message);
    assert_int_equal(e->offset, at);
}

/* Both walkers decode `footer`: 7 rows, the two-element schema. */
static void assert_decoded(const uint8_t *footer, size_t len)
{
    int64_t rows = -1;
    icmt_ok(icm__parquet_footer_num_rows(footer, len, "x.parquet", &rows));
    assert_int_equal(rows, 7);
    icm__parquet_schema *s = NULL;
    icmt_ok(icm__parquet_footer_schema(footer, len, "x.parquet", &s));
    assert_int_equal(s->num_rows, 7);
    assert_int_equal(s->element_count, 2);
    assert_string_equal(s->elements[1].name, "a");
    icm__parquet_schema_free(s);
}

/* The fuzzer's input: the long-form id's varint has bits beyond 64 (its tenth byte is 0x15),
 * which the reader once truncated into id 9223372036854775800 and then added 13 to. */
static void thrift_field_id_overflow_input_is_a_format_error(void **state)
{
    (void)state;
    assert_refused(FUZZ_FIELD_ID_OVERFLOW, sizeof FUZZ_FIELD_ID_OVERFLOW,
                   "varint does not fit 64 bits", 6);
}

/* A long-form id whose varint fits 64 bits but not i16, and the same id inside a skipped
 * struct: refused where the header starts, never taken as (or wrapped into) another field. */
static void thrift_long_form_field_id_beyond_i16_is_refused(void **state)
{
    (void)state;
    uint8_t buf[64];
    /* Field 40000 (zigzag 80000 = varint 0x80 0xf1 0x04), type i32, value 1. */
    const uint8_t big[] = {0x05, 0x80, 0xf1, 0x04, 0x02};
    assert_refused(buf, footer_with(big, sizeof big, buf, sizeof buf),
                   "field id outside the Thrift i16 range", 0);
    /* Field -32769 (zigzag 65537 = varint 0x81 0x80 0x04), type i32. */
    const uint8_t small[] = {0x05, 0x81, 0x80, 0x04, 0x02};
    assert_refused(buf, footer_with(small, sizeof small, buf, sizeof buf),
                   "field id outside the Thrift i16 range", 0);
    /* Field 1 is a struct whose only field has id 2^62 (zigzag 2^63, nine 0x80 and 0x01). */
    const uint8_t nested[] = {0x1c, 0x05, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                              0x01, 0x02, 0x00};
    assert_refused(buf, footer_with(nested, sizeof nested, buf, sizeof buf),
                   "field id outside the Thrift i16 range", 1);
}

/* Short-form deltas added to id 32767 step out of i16: refused at that header. */
static void thrift_field_id_delta_past_i16_is_refused(void **state)
{
    (void)state;
    uint8_t buf[64];
    /* Field 32767 (zigzag 65534 = varint 0xfe 0xff 0x03) as a true boolean, then delta 1. */
    const uint8_t step[] = {0x01, 0xfe, 0xff, 0x03, 0x11};
    assert_refused(buf, footer_with(step, sizeof step, buf, sizeof buf),
                   "field id outside the Thrift i16 range", 4);
    /* The same inside a skipped struct, with the largest delta (15). */
    const uint8_t nested[] = {0x1c, 0x01, 0xfe, 0xff, 0x03, 0xf1, 0x00};
    assert_refused(buf, footer_with(nested, sizeof nested, buf, sizeof buf),
                   "field id outside the Thrift i16 range", 5);
}

/* Ids at the ends of the i16 range are valid (unknown fields, skipped); so is a delta that
 * lands exactly on 32767, and a ten-byte varint whose last byte holds the 64th bit. */
static void thrift_field_ids_at_i16_bounds_are_read(void **state)
{
    (void)state;
    uint8_t buf[64];
    const uint8_t top[] = {0x01, 0xfe, 0xff, 0x03};                      /* 32767 */
    assert_decoded(buf, footer_with(top, sizeof top, buf, sizeof buf));
    const uint8_t bottom[] = {0x01, 0xff, 0xff, 0x03, 0x11};             /* -32768, -32767 */
    assert_decoded(buf, footer_with(bottom, sizeof bottom, buf, sizeof buf));
    const uint8_t landing[] = {0x01, 0xe0, 0xff, 0x03, 0xf1};            /* 32752, 32767 */
    assert_decoded(buf, footer_with(landing, sizeof landing, buf, sizeof buf));
    /* Field 1 as an i64 of -2^63 (zigzag 2^64 - 1: nine 0xff then 0x01). */
    const uint8_t widest[] = {0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    assert_decoded(buf, footer_with(widest, sizeof widest, buf, sizeof buf));
}

/* A varint whose tenth byte carries bits beyond 64, or that runs past ten bytes: refused where
 * the varint starts (it was once silently truncated). */
static void thrift_varint_beyond_64_bits_is_refused(void **state)
{
    (void)state;
    uint8_t buf[64];
    const uint8_t wide[] = {0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03};
    assert_refused(buf, footer_with(wide, sizeof wide, buf, sizeof buf),
                   "varint does not fit 64 bits", 1);
    const uint8_t longer[] = {0x16, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                              0x00};
    assert_refused(buf, footer_with(longer, sizeof longer, buf, sizeof buf),
                   "varint longer than 10 bytes", 1);
}

/* Through the whole-file reader the error names the file the user handed in. */
static void malformed_footer_error_names_the_file(void **state)
{
    (void)state;
    uint8_t file[128];
    size_t n = 0;
    memcpy(file, "PAR1", 4);
    n = 4;
    memcpy(file + n, FUZZ_FIELD_ID_OVERFLOW, sizeof FUZZ_FIELD_ID_OVERFLOW);
    n += sizeof FUZZ_FIELD_ID_OVERFLOW;
    uint32_t flen = (uint32_t)sizeof FUZZ_FIELD_ID_OVERFLOW;
    for (int i = 0; i < 4; i++)
        file[n++] = (uint8_t)(flen >> (8 * i));
    memcpy(file + n, "PAR1", 4);
    n += 4;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icmt_ok(icm_fileio_create_new(io, "/in/part-0.parquet", file, n));
    icm__parquet_schema *s = NULL;
    int64_t size = -1;
    assert_int_equal(icm__parquet_read_schema(io, "/in/part-0.parquet", &s, &size), ICM_EINVALID);
    assert_null(s);
    char line[512];
    icm_error_format(line, sizeof line, icm_error_last());
    assert_string_equal(line, "/in/part-0.parquet: not a readable Parquet file: malformed "
                              "SchemaElement in footer (FileMetaData byte 6: varint does not "
                              "fit 64 bits)");
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thrift_field_id_overflow_input_is_a_format_error),
        cmocka_unit_test(thrift_long_form_field_id_beyond_i16_is_refused),
        cmocka_unit_test(thrift_field_id_delta_past_i16_is_refused),
        cmocka_unit_test(thrift_field_ids_at_i16_bounds_are_read),
        cmocka_unit_test(thrift_varint_beyond_64_bits_is_refused),
        cmocka_unit_test(malformed_footer_error_names_the_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
