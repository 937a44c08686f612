/*
 * test_avro_skip_diff.c: differential test of compiled skip programs (null fast path, null
 * runs, word-level varint ends) against the generic icm__avro_skip, field by field, on
 * adversarial bytes: 200,000 random inputs of 0 to 80 bytes biased towards 0x00, 0x02 and
 * continuation bytes, over records whose fields mix optional values (null first and last),
 * plain longs and ints, strings, bytes, arrays and maps, and zero-size values (null, fixed(0),
 * empty and null-only records: no step of their own).
 * Each input is copied into a buffer of exactly its length (ASan sees any read past the end).
 * Whenever the generic skip succeeds, the program must succeed and stop at the same byte; when
 * the generic skip fails, the program must fail too, except where avro.h documents it to be
 * more lenient (a varint longer than 10 bytes in a run of plain varints); any other case is
 * printed and counted.
 */
#include <stdlib.h>
#include <string.h>

#include "avro/avro.h"
#include "testutil.h"
#include "util/util.h"

static const char *const TYPES[] = {
    "[\"null\",\"long\"]",
    "[\"null\",\"string\"]",
    "[\"long\",\"null\"]",
    "\"long\"",
    "\"int\"",
    "[\"null\",{\"type\":\"map\",\"values\":\"long\"}]",
    "[\"null\",\"bytes\"]",
    "\"string\"",
    "[\"null\",{\"type\":\"array\",\"items\":\"int\"}]",
    "[\"null\",\"int\"]",
    "{\"type\":\"array\",\"items\":\"long\"}",
};
#define NT (sizeof TYPES / sizeof TYPES[0])
/* Zero-size types after TYPES: null, and named ones (named per field: names are unique). */
#define NZ 4

static void field_type(char *out, size_t cap, uint32_t kind, int f)
{
    if (kind < NT)
        snprintf(out, cap, "%s", TYPES[kind]);
    else if (kind == NT)
        snprintf(out, cap, "\"null\"");
    else if (kind == NT + 1)
        snprintf(out, cap, "{\"type\":\"fixed\",\"name\":\"z%d\",\"size\":0}", f);
    else if (kind == NT + 2)
        snprintf(out, cap, "{\"type\":\"record\",\"name\":\"e%d\",\"fields\":[]}", f);
    else
        snprintf(out, cap,
                 "{\"type\":\"record\",\"name\":\"n%d\",\"fields\":[{\"name\":\"a\","
                 "\"type\":\"null\"}]}",
                 f);
}

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

static uint8_t random_byte(uint64_t *s)
{
    uint64_t r = next(s) % 100;
    if (r < 45)
        return 0x00;
    if (r < 65)
        return 0x02;
    if (r < 75)
        return (uint8_t)(next(s) % 16);
    if (r < 88)
        return (uint8_t)(0x80 | next(s) % 128);
    return (uint8_t)next(s);
}

static void test_skip_programs_match_generic(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    long disagreements = 0, lenient = 0, compared = 0;
    for (int schema_round = 0; schema_round < 200; schema_round++) {
        enum { NF = 14 };
        uint32_t kinds[NF];
        char schema[8192];
        size_t len = (size_t)snprintf(schema, sizeof schema,
                                      "{\"type\":\"record\",\"name\":\"r\",\"fields\":[");
        for (int f = 0; f < NF; f++) {
            kinds[f] = (uint32_t)(next(&seed) % (NT + NZ));
            /* bias towards runs of null-first optionals; the last schemas are all of them
             * (runs longer than a word) */
            if (schema_round >= 180 || next(&seed) % 3 == 0)
                kinds[f] = 0;
            char type[256];
            field_type(type, sizeof type, kinds[f], f);
            len += (size_t)snprintf(schema + len, sizeof schema - len,
                                    "{\"name\":\"f%d\",\"type\":%s},", f, type);
        }
        snprintf(schema + len - 1, sizeof schema - len + 1, "]}");
        icm__avro_schema *s = NULL;
        icmt_ok(icm__avro_schema_parse(&s, schema, strlen(schema), "x"));
        const icm__avro_node *root = icm__avro_node_at(s, s->root);
        /* two groups: fields [0, split) and [split, NF) */
        uint32_t split = (uint32_t)(1 + next(&seed) % (NF - 1));
        icm__avro_skip_step steps[NF];
        size_t n = 0;
        for (uint32_t f = 0; f < split; f++)
            icm__avro_skip_step_add(s, steps, &n, 0, icm__avro_field_at(s, root, f)->type);
        size_t first = n;
        for (uint32_t f = split; f < NF; f++)
            icm__avro_skip_step_add(s, steps, &n, first, icm__avro_field_at(s, root, f)->type);
        for (int k = 0; k < 1000; k++) {
            size_t blen = next(&seed) % 81;
            uint8_t *buf = malloc(blen ? blen : 1);
            assert_non_null(buf);
            for (size_t i = 0; i < blen; i++)
                buf[i] = random_byte(&seed);
            for (int g = 0; g < 2; g++) {
                uint32_t f0 = g == 0 ? 0 : split, f1 = g == 0 ? split : NF;
                icm__avro_cur a = {buf, buf + blen, buf, 0, true, "x"};
                int ra = 0;
                for (uint32_t f = f0; f < f1 && ra == 0; f++)
                    ra = icm__avro_skip(s, icm__avro_field_at(s, root, f)->type, &a);
                char generic_error[256] = "";
                if (ra != 0)
                    snprintf(generic_error, sizeof generic_error, "%s",
                             icm_error_last()->message);
                icm__avro_cur b = {buf, buf + blen, buf, 0, true, "x"};
                int rb = g == 0 ? icm__avro_skip_steps(s, steps, first, &b)
                                : icm__avro_skip_steps(s, steps + first, n - first, &b);
                compared++;
                if (ra == 0 && (rb != 0 || a.p != b.p)) {
                    if (disagreements < 10)
                        print_error("schema %d input %d group %d: generic ok at %td, program rc "
                                    "%d at %td\n",
                                    schema_round, k, g, a.p - buf, rb, b.p - buf);
                    disagreements++;
                } else if (ra != 0 && rb == 0 &&
                           strstr(generic_error, "longer than 10 bytes") == NULL) {
                    if (lenient < 10)
                        print_error("schema %d input %d group %d: generic rc %d, program ok at "
                                    "%td (%zu bytes)\n",
                                    schema_round, k, g, ra, b.p - buf, blen);
                    lenient++;
                }
                if (b.p > buf + blen)
                    disagreements += 1000;
            }
            free(buf);
        }
        icm__avro_schema_free(s);
    }
    print_message("%ld comparisons, %ld disagreements, %ld program-only successes\n", compared,
                  disagreements, lenient);
    assert_int_equal(disagreements, 0);
    assert_int_equal(lenient, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_programs_match_generic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
