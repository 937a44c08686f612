/*
 * tests/unit/test_manifest_views_random.c: manifest entry views (the compiled view program of
 * icm__manifest_reader_next_view) against the decoded entries of icm_manifest_reader_next, on
 * random manifest schemas and random entries:
 *  - schema shapes: manifest_entry and data_file fields in random order (status before or after
 *    data_file), status, content, path, format and size plain or optional (null first or last),
 *    content and format absent or present, zero-size fields (null, fixed(0), empty partition
 *    tuples), metrics maps, key metadata, referenced_data_file;
 *  - entries encoded from the schema with small numbers (statuses and contents in and out of
 *    range), format names, paths with and without a NUL byte, rare corrupt bytes, and every
 *    eighth file of random bytes;
 *  - for four projections (the view program's and the fallback's), step by step: the same
 *    return code and error message, and equal status, content, format, size and path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/avro.h"
#include "icemaint/manifest.h"
#include "manifest/manifest_internal.h"
#include "testutil.h"

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

static const char *pick(uint64_t *s, const char *const *options, size_t n)
{
    return options[next(s) % n];
}

static void shuffle(const char **a, size_t n, uint64_t *s)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = next(s) % i;
        const char *t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* A byte of a random (not schema-shaped) entry: zeros, small branch indexes and lengths, and
 * letters, so some of them decode. */
static uint8_t random_byte(uint64_t *s)
{
    uint64_t r = next(s) % 100;
    if (r < 30)
        return 0;
    if (r < 45)
        return 2;
    if (r < 55)
        return 4;
    if (r < 65)
        return (uint8_t)(next(s) % 8);
    if (r < 90)
        return (uint8_t)('a' + next(s) % 4);
    return (uint8_t)next(s);
}

static const char *const STRINGS[] = {"s3://b/d/x.parquet", "parquet", "PUFFIN", "avro", "ORC",
                                      "orcx", "", "a\0b", "/t/data/y.avro"};

/* One value of `node`, shaped by the schema (1 in 400 values is a random byte instead). */
static void encode(const icm__avro_schema *s, uint32_t node, icm__buf *b, uint64_t *seed,
                   int depth)
{
    const icm__avro_node *n = icm__avro_node_at(s, node);
    if (next(seed) % 400 == 0) {
        uint8_t c = (uint8_t)next(seed);
        icm__buf_put(b, &c, 1);
        return;
    }
    switch (n->type) {
    case ICM__AVRO_NULL:
        break;
    case ICM__AVRO_INT:
    case ICM__AVRO_LONG: {
        uint64_t r = next(seed) % 20;
        icm__avro_put_long(b, r < 16   ? (int64_t)(r % 3)
                              : r < 18 ? (int64_t)(next(seed) % 100000) - 3
                                       : -1);
        break;
    }
    case ICM__AVRO_STRING:
    case ICM__AVRO_BYTES: {
        size_t k = next(seed) % ICM__ARRAY_LEN(STRINGS);
        size_t len = k == 7 ? 3 : strlen(STRINGS[k]); /* "a\0b" whole */
        icm__avro_put_long(b, (int64_t)len);
        icm__buf_put(b, STRINGS[k], len);
        break;
    }
    case ICM__AVRO_FIXED:
        for (uint32_t i = 0; i < n->n; i++) {
            uint8_t c = (uint8_t)next(seed);
            icm__buf_put(b, &c, 1);
        }
        break;
    case ICM__AVRO_RECORD:
        for (uint32_t i = 0; i < n->n; i++)
            encode(s, icm__avro_field_at(s, n, i)->type, b, seed, depth + 1);
        break;
    case ICM__AVRO_ARRAY: {
        int count = depth > 6 ? 0 : (int)(next(seed) % 3);
        if (count > 0) {
            icm__avro_put_long(b, count);
            for (int i = 0; i < count; i++)
                encode(s, n->child, b, seed, depth + 1);
        }
        icm__avro_put_long(b, 0);
        break;
    }
    case ICM__AVRO_UNION: {
        uint32_t branch = (uint32_t)(next(seed) % n->n);
        icm__avro_put_long(b, branch);
        encode(s, s->branches[n->first + branch], b, seed, depth + 1);
        break;
    }
    default: /* (the schemas below use no other type) */
        fail();
    }
}

/* A random manifest_entry schema (see the file comment). */
static void random_schema(uint64_t *seed, char *out, size_t cap)
{
    static const char *const STATUS[] = {"\"int\"", "[\"null\",\"int\"]", "[\"int\",\"null\"]",
                                         "\"long\""};
    static const char *const STR[] = {"\"string\"", "[\"null\",\"string\"]",
                                      "[\"string\",\"null\"]"};
    static const char *const NUM[] = {"\"long\"", "[\"null\",\"long\"]", "\"int\""};
    char path[128], format[128], content[128], size[128], status[128];
    const char *df[12];
    size_t nd = 0;
    snprintf(path, sizeof path, "{\"name\":\"file_path\",\"field-id\":100,\"type\":%s}",
             pick(seed, STR, 3));
    df[nd++] = path;
    if (next(seed) % 3 != 0) {
        snprintf(format, sizeof format, "{\"name\":\"file_format\",\"field-id\":101,\"type\":%s}",
                 pick(seed, STR, 3));
        df[nd++] = format;
    }
    if (next(seed) % 3 != 0) {
        snprintf(content, sizeof content, "{\"name\":\"content\",\"field-id\":134,\"type\":%s}",
                 pick(seed, STATUS, 4));
        df[nd++] = content;
    }
    snprintf(size, sizeof size,
             "{\"name\":\"file_size_in_bytes\",\"field-id\":104,\"type\":%s}", pick(seed, NUM, 3));
    df[nd++] = size;
    df[nd++] = next(seed) % 2
                   ? "{\"name\":\"partition\",\"field-id\":102,\"type\":{\"type\":\"record\","
                     "\"name\":\"r102\",\"fields\":[]}}"
                   : "{\"name\":\"partition\",\"field-id\":102,\"type\":{\"type\":\"record\","
                     "\"name\":\"r102\",\"fields\":[{\"name\":\"a\",\"field-id\":1000,"
                     "\"type\":[\"null\",\"int\"]}]}}";
    df[nd++] = "{\"name\":\"record_count\",\"field-id\":103,\"type\":\"long\"}";
    if (next(seed) % 2)
        df[nd++] = "{\"name\":\"column_sizes\",\"field-id\":108,\"type\":[\"null\",{\"type\":"
                   "\"array\",\"items\":{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":"
                   "[{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},{\"name\":\"value\","
                   "\"type\":\"long\",\"field-id\":118}]},\"logicalType\":\"map\"}]}";
    if (next(seed) % 2)
        df[nd++] = "{\"name\":\"key_metadata\",\"field-id\":131,\"type\":[\"null\",\"bytes\"]}";
    if (next(seed) % 2)
        df[nd++] = "{\"name\":\"referenced_data_file\",\"field-id\":143,\"type\":[\"null\","
                   "\"string\"]}";
    if (next(seed) % 2)
        df[nd++] = "{\"name\":\"zz\",\"field-id\":9001,\"type\":\"null\"}";
    if (next(seed) % 2)
        df[nd++] = "{\"name\":\"z0\",\"field-id\":9002,\"type\":{\"type\":\"fixed\",\"name\":"
                   "\"f0\",\"size\":0}}";
    shuffle(df, nd, seed);
    char data_file[4096];
    size_t len = (size_t)snprintf(data_file, sizeof data_file,
                                  "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":"
                                  "\"record\",\"name\":\"r2\",\"fields\":[");
    for (size_t i = 0; i < nd; i++)
        len += (size_t)snprintf(data_file + len, sizeof data_file - len, "%s%s", i ? "," : "",
                                df[i]);
    snprintf(data_file + len, sizeof data_file - len, "]}}");

    const char *me[6];
    size_t nm = 0;
    snprintf(status, sizeof status, "{\"name\":\"status\",\"field-id\":0,\"type\":%s}",
             pick(seed, STATUS, 4));
    me[nm++] = status;
    if (next(seed) % 2)
        me[nm++] = "{\"name\":\"snapshot_id\",\"field-id\":1,\"type\":[\"null\",\"long\"]}";
    if (next(seed) % 2)
        me[nm++] = "{\"name\":\"sequence_number\",\"field-id\":3,\"type\":[\"null\",\"long\"]}";
    if (next(seed) % 2)
        me[nm++] = "{\"name\":\"file_sequence_number\",\"field-id\":4,\"type\":[\"null\","
                   "\"long\"]}";
    if (next(seed) % 3 == 0)
        me[nm++] = "{\"name\":\"yy\",\"field-id\":9003,\"type\":\"null\"}";
    me[nm++] = data_file;
    shuffle(me, nm, seed);
    len = (size_t)snprintf(out, cap, "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[");
    for (size_t i = 0; i < nm; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "," : "", me[i]);
    snprintf(out + len, cap - len, "]}");
}

/* A container of 1-4 entries of `schema` (every eighth file random bytes instead). */
static char *random_manifest(const char *schema, int file, uint64_t *seed, size_t *len)
{
    icm__avro_writer *w = NULL;
    icmt_ok(icm__avro_writer_new(&w, schema, ICM__AVRO_CODEC_NULL, 0, 0));
    icm__avro_schema *s = NULL;
    icmt_ok(icm__avro_schema_parse(&s, schema, strlen(schema), "x"));
    int objects = 1 + (int)(next(seed) % 4);
    for (int o = 0; o < objects; o++) {
        icm__buf *b = icm__avro_writer_obj(w);
        if (file % 8 == 7) {
            size_t n = next(seed) % 24;
            for (size_t i = 0; i < n; i++) {
                uint8_t c = random_byte(seed);
                icm__buf_put(b, &c, 1);
            }
        } else {
            encode(s, s->root, b, seed, 0);
        }
        icmt_ok(icm__avro_writer_end_obj(w));
    }
    icm__avro_schema_free(s);
    char *data = NULL;
    icmt_ok(icm__avro_writer_finish(w, &data, len));
    icm__avro_writer_free(w);
    return data;
}

static void test_views_match_entries_on_random_schemas(void **state)
{
    (void)state;
    static const uint64_t PROJECTIONS[] = {
        ICM_MANIFEST_FIELD_FILE_PATH,
        ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |
            ICM_MANIFEST_FIELD_FILE_SIZE,
        ICM_MANIFEST_FIELD_FILE_FORMAT,
        ICM_MANIFEST_FIELD_FILE_SIZE | ICM_MANIFEST_FIELD_SNAPSHOT_ID, /* (no view program) */
    };
    uint64_t seed = 4242;
    long readers = 0, entries = 0, errors = 0, disagreements = 0;
    for (int round = 0; round < 300; round++) {
        char schema[16384];
        random_schema(&seed, schema, sizeof schema);
        for (int file = 0; file < 16; file++) {
            size_t len = 0;
            char *data = random_manifest(schema, file, &seed, &len);
            for (size_t p = 0; p < ICM__ARRAY_LEN(PROJECTIONS); p++) {
                icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
                ro.fields = PROJECTIONS[p];
                ro.format_version = 2;
                icm_manifest_reader *plain = NULL, *views = NULL;
                int a = icm_manifest_reader_open(&plain, data, len, "m", &ro);
                int b = icm_manifest_reader_open(&views, data, len, "m", &ro);
                assert_int_equal(a, b);
                if (a != 0)
                    continue;
                readers++;
                for (;;) {
                    const icm_manifest_entry *e = NULL;
                    int x = icm_manifest_reader_next(&e, plain);
                    char want[512] = "";
                    if (x < 0)
                        snprintf(want, sizeof want, "%s", icm_error_last()->message);
                    icm__entry_view v;
                    int y = icm__manifest_reader_next_view(views, &v);
                    char got[512] = "";
                    if (y < 0)
                        snprintf(got, sizeof got, "%s", icm_error_last()->message);
                    if (x != y || strcmp(want, got) != 0) {
                        print_error("round %d file %d projection %zu: %d '%s' vs view %d '%s'\n",
                                    round, file, p, x, want, y, got);
                        disagreements++;
                        break;
                    }
                    if (x != 0) {
                        errors += x != ICM_ITEROVER;
                        break;
                    }
                    entries++;
                    const icm_data_file *d = &e->data_file;
                    if (e->status != v.status || d->content != v.content ||
                        d->file_format != v.file_format ||
                        d->file_size_in_bytes != v.file_size_in_bytes ||
                        d->file_path_len != v.file_path_len ||
                        memcmp(d->file_path, v.file_path, v.file_path_len) != 0) {
                        print_error("round %d file %d projection %zu: values differ\n", round,
                                    file, p);
                        disagreements++;
                        break;
                    }
                }
                icm_manifest_reader_free(plain);
                icm_manifest_reader_free(views);
            }
            icm_free(data);
        }
    }
    print_message("%ld readers, %ld entries equal, %ld errors equal, %ld disagreements\n",
                  readers, entries, errors, disagreements);
    assert_int_equal(disagreements, 0);
    assert_true(entries > 1000 && errors > 1000); /* both sides of the comparison were seen */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_match_entries_on_random_schemas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
