/*
 * tests/unit/test_avro.c: the Avro layer on its own: varint decoding (values and overflow),
 * schema compilation, skipping (incl. arrays with byte-size blocks), the object container
 * reader/writer round trip for each codec with several blocks, and clean errors for unknown
 * codecs, bad magic, wrong sync markers, snappy CRC mismatches and truncation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/avro.h"
#include "icemaint/manifest.h"
#include "testutil.h"

static icm__avro_cur cur_of(const uint8_t *p, size_t n)
{
    icm__avro_cur c = {p, p + n, p, 100, true, "mem://x.avro"};
    return c;
}

static void test_varint_values(void **state)
{
    (void)state;
    static const struct {
        uint8_t bytes[10];
        size_t n;
        int64_t v;
    } cases[] = {
        {{0x00}, 1, 0},
        {{0x01}, 1, -1},
        {{0x02}, 1, 1},
        {{0x7f}, 1, -64},
        {{0x80, 0x01}, 2, 64},
        {{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10, INT64_MAX},
        {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10, INT64_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Both the fast path (>= 10 bytes readable) and the slow path (exact length). */
        uint8_t padded[20] = {0};
        memcpy(padded, cases[i].bytes, cases[i].n);
        icm__avro_cur fast = cur_of(padded, sizeof padded);
        icm__avro_cur slow = cur_of(cases[i].bytes, cases[i].n);
        int64_t a = 12345, b = 12345;
        icmt_ok(icm__avro_read_long(&fast, &a));
        icmt_ok(icm__avro_read_long(&slow, &b));
        assert_int_equal(a, cases[i].v);
        assert_int_equal(b, cases[i].v);
        assert_ptr_equal(fast.p, padded + cases[i].n);
        assert_ptr_equal(slow.p, slow.end);
        /* The encoder produces the same bytes. */
        icm__buf buf = ICM__BUF_INIT;
        icmt_ok(icm__avro_put_long(&buf, cases[i].v));
        assert_int_equal(buf.len, cases[i].n);
        assert_memory_equal(buf.data, cases[i].bytes, cases[i].n);
        icm__buf_dispose(&buf);
    }
}

static void test_varint_errors(void **state)
{
    (void)state;
    /* 11 continuation bytes: longer than any 64-bit varint. */
    uint8_t longer[16];
    memset(longer, 0x80, sizeof longer);
    icm__avro_cur c = cur_of(longer, sizeof longer);
    int64_t v;
    assert_int_equal(icm__avro_read_long(&c, &v), ICM_EINVALID);
    /* 10th byte with more than bit 63. */
    uint8_t over[12] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0};
    c = cur_of(over, sizeof over);
    assert_int_equal(icm__avro_read_long(&c, &v), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "overflow"));
    /* Truncated in the middle: error names the location and the offset of the value. */
    uint8_t trunc[2] = {0x80, 0x80};
    c = cur_of(trunc, sizeof trunc);
    assert_int_equal(icm__avro_read_long(&c, &v), ICM_EINVALID);
    assert_string_equal(icm_error_last()->location, "mem://x.avro");
    assert_int_equal(icm_error_last()->offset, 100);
    /* An int out of 32-bit range. */
    uint8_t big[5] = {0x80, 0x80, 0x80, 0x80, 0x10}; /* zigzag 2^32 -> 2^31 */
    c = cur_of(big, sizeof big);
    int32_t i32;
    assert_int_equal(icm__avro_read_int(&c, &i32), ICM_EINVALID);
    /* A length longer than what is left. */
    uint8_t str[3] = {0x08, 'a', 'b'};
    c = cur_of(str, sizeof str);
    const uint8_t *d;
    size_t l;
    assert_int_equal(icm__avro_read_bytes(&c, &d, &l), ICM_EINVALID);
}

static const char SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"t\",\"namespace\":\"ns\",\"fields\":["
    "{\"name\":\"id\",\"type\":\"long\",\"field-id\":1},"
    "{\"name\":\"name\",\"type\":[\"null\",\"string\"],\"field-id\":2},"
    "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"},\"field-id\":3},"
    "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"double\"}},"
    "{\"name\":\"h\",\"type\":{\"type\":\"fixed\",\"name\":\"md5\",\"size\":4}},"
    "{\"name\":\"h2\",\"type\":\"ns.md5\"},"
    "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"k\",\"symbols\":[\"A\",\"B\"]}},"
    "{\"name\":\"flag\",\"type\":\"boolean\"},"
    "{\"name\":\"f\",\"type\":\"float\"}]}";

static void test_schema_compile(void **state)
{
    (void)state;
    icm__avro_schema *s = NULL;
    icmt_ok(icm__avro_schema_parse(&s, SCHEMA, strlen(SCHEMA), "x"));
    const icm__avro_node *root = icm__avro_node_at(s, s->root);
    assert_int_equal(root->type, ICM__AVRO_RECORD);
    assert_int_equal(root->n, 9);
    assert_string_equal(root->name, "ns.t");
    assert_int_equal(icm__avro_record_find(s, s->root, 2, NULL), 1);
    assert_int_equal(icm__avro_record_find(s, s->root, ICM__AVRO_NO_ID, "attrs"), 3);
    /* A schema with ids does not match an id-less lookup by a name that has an id. */
    assert_int_equal(icm__avro_record_find(s, s->root, 99, "name"), -1);
    int nb;
    uint32_t t = icm__avro_unwrap_optional(s, icm__avro_field_at(s, root, 1)->type, &nb);
    assert_int_equal(nb, 0);
    assert_int_equal(icm__avro_node_at(s, t)->type, ICM__AVRO_STRING);
    /* The named fixed is referenced, not copied. */
    assert_int_equal(icm__avro_field_at(s, root, 4)->type, icm__avro_field_at(s, root, 5)->type);
    icm__avro_schema_free(s);

    static const char *const bad[] = {"{", "{\"type\":\"record\",\"name\":\"x\"}",
                                      "\"nosuchtype\"", "[]", "{\"type\":\"fixed\",\"name\":\"f\"}",
                                      "[[\"int\"]]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(icm__avro_schema_parse(&s, bad[i], strlen(bad[i]), "bad.avro"),
                         ICM_EINVALID);
        assert_null(s);
        assert_string_equal(icm_error_last()->location, "bad.avro");
    }
}

/* Encode one record of SCHEMA. */
static void put_record(icm__buf *b, int64_t id, bool blocksize_array)
{
    icm__avro_put_long(b, id);
    if (id % 3 == 0) {
        icm__avro_put_long(b, 0);
    } else {
        char name[32];
        snprintf(name, sizeof name, "name-%lld", (long long)id);
        icm__avro_put_long(b, 1);
        icm__avro_put_str(b, name);
    }
    if (blocksize_array) {
        /* Negative count: block byte size follows (what readers may jump over). */
        icm__avro_put_long(b, -2);
        icm__avro_put_long(b, 4);
        icm__avro_put_str(b, "x");
        icm__avro_put_str(b, "y");
    } else {
        icm__avro_put_long(b, 1);
        icm__avro_put_str(b, "t");
    }
    icm__avro_put_long(b, 0);
    icm__avro_put_long(b, 1);
    icm__avro_put_str(b, "k");
    icm__avro_put_double(b, 1.5);
    icm__avro_put_long(b, 0);
    icm__buf_put(b, "abcd", 4);
    icm__buf_put(b, "efgh", 4);
    icm__avro_put_long(b, id % 2);
    icm__avro_put_bool(b, id % 2 == 0);
    icm__buf_put(b, "\0\0\x80\x3f", 4);
}

static char *write_file(icm__avro_codec codec, int n, size_t *len)
{
    icm__avro_writer *w = NULL;
    icmt_ok(icm__avro_writer_new(&w, SCHEMA, codec, -1, 256));
    icmt_ok(icm__avro_writer_meta(w, "user.key", "value"));
    for (int i = 0; i < n; i++) {
        put_record(icm__avro_writer_obj(w), i, i % 2 == 1);
        icmt_ok(icm__avro_writer_end_obj(w));
    }
    char *out = NULL;
    icmt_ok(icm__avro_writer_finish(w, &out, len));
    icm__avro_writer_free(w);
    return out;
}

/* Read every record back: decode id and name, skip the rest through the schema. */
static void read_back(const char *data, size_t len, int n, icm__avro_codec codec)
{
    icm__avro_reader *r = NULL;
    icmt_ok(icm__avro_reader_open(&r, data, len, "rt.avro"));
    assert_int_equal(icm__avro_reader_codec(r), codec);
    size_t ml;
    const char *mv = icm__avro_reader_meta(r, "user.key", &ml);
    assert_non_null(mv);
    assert_int_equal(ml, 5);
    assert_memory_equal(mv, "value", 5);
    const icm__avro_schema *s = icm__avro_reader_schema(r);
    const icm__avro_node *root = icm__avro_node_at(s, s->root);
    int seen = 0, blocks = 0, rc;
    icm__avro_cur c;
    int64_t count;
    while ((rc = icm__avro_reader_next_block(r, &c, &count)) == 0) {
        blocks++;
        for (int64_t k = 0; k < count; k++) {
            int64_t id;
            icmt_ok(icm__avro_read_long(&c, &id));
            assert_int_equal(id, seen);
            int64_t branch;
            icmt_ok(icm__avro_read_long(&c, &branch));
            if (seen % 3 == 0) {
                assert_int_equal(branch, 0);
            } else {
                const uint8_t *d;
                size_t l;
                char want[32];
                snprintf(want, sizeof want, "name-%d", seen);
                icmt_ok(icm__avro_read_bytes(&c, &d, &l));
                assert_int_equal(l, strlen(want));
                assert_memory_equal(d, want, l);
            }
            for (uint32_t f = 2; f < root->n; f++)
                icmt_ok(icm__avro_skip(s, icm__avro_field_at(s, root, f)->type, &c));
            seen++;
        }
        assert_ptr_equal(c.p, c.end);
    }
    assert_int_equal(rc, ICM_ITEROVER);
    assert_int_equal(seen, n);
    assert_true(blocks > 1); /* 256-byte blocks: the file has several */
    icm__avro_reader_free(r);
}

static void test_container_round_trip(void **state)
{
    (void)state;
    const icm__avro_codec codecs[] = {ICM__AVRO_CODEC_NULL, ICM__AVRO_CODEC_DEFLATE,
                                      ICM__AVRO_CODEC_SNAPPY, ICM__AVRO_CODEC_ZSTD};
    for (size_t i = 0; i < 4; i++) {
        size_t len;
        char *data = write_file(codecs[i], 200, &len);
        read_back(data, len, 200, codecs[i]);
        icm_free(data);
    }
}

/* Every block of a reader, decompressed, back to back; the reader's final code in *end_rc and
 * its last error's message in `message` (when it failed); block offsets in offsets[]. */
static char *all_blocks(const char *data, size_t len, const icm__avro_inflated *inflated,
                        size_t *out_len, int *end_rc, char message[256], int64_t offsets[64],
                        size_t *n_blocks)
{
    icm__avro_reader *r = NULL;
    icmt_ok(icm__avro_reader_open(&r, data, len, "ahead.avro"));
    if (inflated != NULL)
        icm__avro_reader_use_inflated(r, inflated);
    icm__buf all = {0};
    icm__avro_cur c;
    int64_t count;
    int rc;
    *n_blocks = 0;
    while ((rc = icm__avro_reader_next_block(r, &c, &count)) == 0) {
        assert_true(*n_blocks < 64);
        offsets[(*n_blocks)++] = icm__avro_reader_block_offset(r);
        icmt_ok(icm__buf_put(&all, c.p, (size_t)(c.end - c.p)));
    }
    *end_rc = rc;
    snprintf(message, 256, "%s", rc == ICM_ITEROVER ? "" : icm_error_last()->message);
    icm__avro_reader_free(r);
    *out_len = all.len;
    return all.data;
}

/* Blocks decompressed ahead give the reader exactly what it decompresses itself: every codec,
 * all blocks or only the first few (the reader does the rest), and a corrupt block stops the
 * ahead pass there while the reader reports the same error as without it. */
static void test_inflate_ahead(void **state)
{
    (void)state;
    const icm__avro_codec codecs[] = {ICM__AVRO_CODEC_NULL, ICM__AVRO_CODEC_DEFLATE,
                                      ICM__AVRO_CODEC_SNAPPY, ICM__AVRO_CODEC_ZSTD};
    int64_t offsets[64], offsets2[64];
    char msg[256], msg2[256];
    for (size_t i = 0; i < 4; i++) {
        size_t len, want_len, got_len, nb, nb2;
        int rc, rc2;
        char *data = write_file(codecs[i], 200, &len);
        char *want = all_blocks(data, len, NULL, &want_len, &rc, msg, offsets, &nb);
        assert_int_equal(rc, ICM_ITEROVER);
        assert_true(nb > 3);
        icm__avro_inflated x;
        icm__avro_inflate_ahead(data, len, &x);
        assert_int_equal(x.n, codecs[i] == ICM__AVRO_CODEC_NULL ? 0 : nb);
        for (size_t k = 0; k < x.n; k++)
            assert_int_equal(x.blocks[k].offset, offsets[k]);
        size_t full = x.n;
        for (size_t keep = full; keep + 1 > 0; keep = keep > 2 ? 2 : keep - 1) {
            x.n = keep; /* only the first `keep` were decompressed ahead */
            char *got = all_blocks(data, len, &x, &got_len, &rc2, msg2, offsets2, &nb2);
            assert_int_equal(rc2, ICM_ITEROVER);
            assert_int_equal(nb2, nb);
            assert_int_equal(got_len, want_len);
            assert_memory_equal(got, want, want_len);
            free(got);
            if (keep == 0)
                break;
        }
        x.n = full;
        icm__avro_inflated_dispose(&x);
        assert_int_equal(icm_error_last()->code, 0); /* the ahead pass leaves no error */
        free(want);

        if (codecs[i] == ICM__AVRO_CODEC_SNAPPY) {
            /* corrupt block 2's payload (its CRC no longer matches) */
            data[offsets[2] + 6] ^= 0x5a;
            char *a = all_blocks(data, len, NULL, &want_len, &rc, msg, offsets, &nb);
            icm__avro_inflate_ahead(data, len, &x);
            assert_int_equal(x.n, 2);
            char *b = all_blocks(data, len, &x, &got_len, &rc2, msg2, offsets2, &nb2);
            assert_int_not_equal(rc, ICM_ITEROVER);
            assert_int_equal(rc2, rc);
            assert_string_equal(msg2, msg);
            assert_int_equal(got_len, want_len);
            assert_memory_equal(b, a, want_len);
            icm__avro_inflated_dispose(&x);
            free(a);
            free(b);
        }
        icm_free(data);
    }
}

static void test_sync_markers_random(void **state)
{
    (void)state;
    uint8_t a[16], b[16];
    icmt_ok(icm__avro_random_sync(a));
    icmt_ok(icm__avro_random_sync(b));
    assert_memory_not_equal(a, b, 16);
}

/* Replace the codec name in a written header (same length keeps the file valid). */
static void patch(char *data, size_t len, const char *from, const char *to)
{
    char *p = memmem(data, len, from, strlen(from));
    assert_non_null(p);
    memcpy(p, to, strlen(to));
}

static void test_container_errors(void **state)
{
    (void)state;
    size_t len;
    icm__avro_reader *r = NULL;
    /* Unknown codec: EUNSUPPORTED naming the codec and the file. */
    char *data = write_file(ICM__AVRO_CODEC_SNAPPY, 10, &len);
    patch(data, len, "snappy", "lzoxyz");
    assert_int_equal(icm__avro_reader_open(&r, data, len, "s3://b/m.avro"), ICM_EUNSUPPORTED);
    assert_null(r);
    assert_non_null(strstr(icm_error_last()->message, "lzoxyz"));
    assert_string_equal(icm_error_last()->location, "s3://b/m.avro");
    icm_free(data);

    /* Bad magic. */
    assert_int_equal(icm__avro_reader_open(&r, "PAR1xxxxxxxxxxxxxxxxxxx", 23, "f"), ICM_EINVALID);
    assert_int_equal(icm_error_last()->offset, 0);
    /* the stored message is escaped once (errors.h): byte 0x01 reads `\x01`, not `\\x01` */
    assert_string_equal(icm_error_last()->message,
                        "not a valid Avro container: missing the magic bytes Obj\\x01");

    /* Snappy CRC mismatch: flip the last CRC byte of the first block. */
    data = write_file(ICM__AVRO_CODEC_SNAPPY, 10, &len);
    icmt_ok(icm__avro_reader_open(&r, data, len, "f"));
    icm__avro_reader_free(r);
    data[len - 17] ^= 0x01; /* last block: CRC is right before the 16-byte sync */
    icmt_ok(icm__avro_reader_open(&r, data, len, "f"));
    icm__avro_cur c;
    int64_t count;
    int rc;
    while ((rc = icm__avro_reader_next_block(r, &c, &count)) == 0)
        ;
    assert_int_equal(rc, ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "CRC32"));
    icm__avro_reader_free(r);

    /* Wrong sync marker after a block. */
    data[len - 17] ^= 0x01;
    data[len - 1] ^= 0x55;
    icmt_ok(icm__avro_reader_open(&r, data, len, "f"));
    while ((rc = icm__avro_reader_next_block(r, &c, &count)) == 0)
        ;
    assert_int_equal(rc, ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "sync"));
    assert_true(icm_error_last()->offset > 0);
    icm__avro_reader_free(r);

    /* Truncation at every position: open or blocks fail with EINVALID, never crash. */
    /* A cut exactly at a block boundary is a valid shorter file (ITEROVER after fewer
     * blocks); anywhere else it is EINVALID. */
    data[len - 1] ^= 0x55;
    int boundaries = 0;
    for (size_t cut = 0; cut < len; cut++) {
        rc = icm__avro_reader_open(&r, data, cut, "f");
        if (rc == 0) {
            while ((rc = icm__avro_reader_next_block(r, &c, &count)) == 0)
                ;
            icm__avro_reader_free(r);
        }
        if (rc == ICM_ITEROVER)
            boundaries++;
        else
            assert_int_equal(rc, ICM_EINVALID);
    }
    assert_true(boundaries >= 1 && boundaries < 10);
    icm_free(data);
}

/* Counts are checked against the bytes left, except for items that take no bytes (which are
 * jumped over, so a huge count cannot make the decoder spin). */
static void test_skip_counts(void **state)
{
    (void)state;
    icm__avro_schema *s = NULL;
    const char *nulls = "{\"type\":\"array\",\"items\":\"null\"}";
    icmt_ok(icm__avro_schema_parse(&s, nulls, strlen(nulls), "x"));
    uint8_t huge[] = {0x80, 0x80, 0x80, 0x80, 0x10, 0x00}; /* 2^31 nulls, then end */
    icm__avro_cur c = cur_of(huge, sizeof huge);
    icmt_ok(icm__avro_skip(s, s->root, &c));
    assert_ptr_equal(c.p, c.end);
    icm__avro_schema_free(s);

    const char *ints = "{\"type\":\"array\",\"items\":\"int\"}";
    icmt_ok(icm__avro_schema_parse(&s, ints, strlen(ints), "x"));
    uint8_t many[] = {0x0a, 0x02, 0x04, 0x00}; /* 5 ints announced, 2 present */
    c = cur_of(many, sizeof many);
    assert_int_equal(icm__avro_skip(s, s->root, &c), ICM_EINVALID);
    /* A negative count with a byte size is one jump; a size past the end is an error. */
    uint8_t sized[] = {0x03, 0x04, 0x02, 0x04, 0x00};      /* -2 items, 2 bytes */
    c = cur_of(sized, sizeof sized);
    icmt_ok(icm__avro_skip(s, s->root, &c));
    assert_ptr_equal(c.p, c.end);
    uint8_t oversized[] = {0x03, 0x40, 0x02, 0x04, 0x00}; /* -2 items, 32 bytes */
    c = cur_of(oversized, sizeof oversized);
    assert_int_equal(icm__avro_skip(s, s->root, &c), ICM_EINVALID);
    icm__avro_schema_free(s);
}

/* Runs of varints (array<long>, map<int,long> entries) are skipped by counting terminator
 * bytes a word at a time: values of every width, in blocks, must land exactly on the next
 * value, and a truncated run must be an error at any cut. */
static void test_skip_varint_runs(void **state)
{
    (void)state;
    const char *schema = "{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                         "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":{"
                         "\"type\":\"record\",\"name\":\"kv\",\"fields\":["
                         "{\"name\":\"key\",\"type\":\"int\"},"
                         "{\"name\":\"value\",\"type\":\"long\"}]}}},"
                         "{\"name\":\"tail\",\"type\":\"string\"}]}";
    icm__avro_schema *s = NULL;
    icmt_ok(icm__avro_schema_parse(&s, schema, strlen(schema), "x"));
    icm__buf b = ICM__BUF_INIT;
    for (int block = 0; block < 3; block++) {
        icm__avro_put_long(&b, 37);
        for (int i = 0; i < 37; i++) {
            icm__avro_put_long(&b, i);
            /* 1- to 10-byte encodings */
            int64_t v = i % 10 == 9 ? INT64_MIN : ((int64_t)1 << (7 * (i % 10))) - 1;
            icm__avro_put_long(&b, v);
        }
    }
    icm__avro_put_long(&b, 0);
    size_t body = b.len;
    icm__avro_put_str(&b, "end");
    icm__avro_cur c = cur_of((const uint8_t *)b.data, b.len);
    const icm__avro_node *root = icm__avro_node_at(s, s->root);
    icmt_ok(icm__avro_skip(s, icm__avro_field_at(s, root, 0)->type, &c));
    assert_ptr_equal(c.p, (const uint8_t *)b.data + body);
    const uint8_t *d;
    size_t l;
    icmt_ok(icm__avro_read_bytes(&c, &d, &l));
    assert_int_equal(l, 3);
    assert_memory_equal(d, "end", 3);
    for (size_t cut = 0; cut < body; cut++) {
        uint8_t *t = malloc(cut ? cut : 1);
        memcpy(t, b.data, cut);
        c = cur_of(t, cut);
        assert_int_equal(icm__avro_skip(s, icm__avro_field_at(s, root, 0)->type, &c),
                         ICM_EINVALID);
        free(t);
    }
    icm__buf_dispose(&b);
    icm__avro_schema_free(s);
}

/* icm__avro_skip_varints over 1 to 24 varints of random widths, followed by more bytes or by
 * the end of the buffer: it stops exactly after the last one, and a run cut short is an error. */
static void test_skip_varints_counts(void **state)
{
    (void)state;
    uint64_t seed = 7;
    for (int round = 0; round < 2000; round++) {
        icm__buf b = ICM__BUF_INIT;
        uint64_t count = 1 + (uint64_t)round % 24;
        for (uint64_t i = 0; i < count; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            int width = 1 + (int)((seed >> 33) % 10); /* bytes of the encoding */
            int64_t v = width == 10 ? INT64_MIN : ((int64_t)1 << (7 * width - 1)) - 1;
            icm__avro_put_long(&b, v);
        }
        size_t body = b.len;
        bool padded = round % 2 == 0;
        if (padded)
            icm__avro_put_str(&b, "0123456789abcdef");
        icm__avro_cur c = cur_of((const uint8_t *)b.data, b.len);
        icmt_ok(icm__avro_skip_varints(&c, count));
        assert_ptr_equal(c.p, (const uint8_t *)b.data + body);
        c = cur_of((const uint8_t *)b.data, body - 1);
        assert_int_equal(icm__avro_skip_varints(&c, count), ICM_EINVALID);
        icm__buf_dispose(&b);
    }
}

/* Field k of the record in test_skip_steps_groups, kind k % 6. */
static const char *const STEP_FIELD_TYPES[] = {
    "[\"null\",\"long\"]", "[\"null\",\"string\"]", "[\"long\",\"null\"]", "\"long\"",
    "[\"null\",{\"type\":\"array\",\"items\":\"long\"}]", "[\"null\",\"int\"]"};

/* Compiled skip programs over two groups of 12 fields (optional values with null first or
 * last, plain longs, optional arrays), with a marker string after each group: 400 rows with
 * random nulls (long runs of nulls included) land exactly on each marker, and every cut short
 * of a group's end is an error. */
static void test_skip_steps_groups(void **state)
{
    (void)state;
    enum { PER_GROUP = 12, ROWS = 400 };
    char schema[4096];
    size_t len = (size_t)snprintf(schema, sizeof schema,
                                  "{\"type\":\"record\",\"name\":\"r\",\"fields\":[");
    for (int f = 0; f < 2 * PER_GROUP; f++)
        len += (size_t)snprintf(schema + len, sizeof schema - len,
                                "{\"name\":\"f%d\",\"type\":%s},", f, STEP_FIELD_TYPES[f % 6]);
    snprintf(schema + len - 1, sizeof schema - len + 1, "]}");
    icm__avro_schema *s = NULL;
    icmt_ok(icm__avro_schema_parse(&s, schema, strlen(schema), "x"));
    const icm__avro_node *root = icm__avro_node_at(s, s->root);
    icm__avro_skip_step steps[2 * PER_GROUP];
    size_t n = 0;
    for (int f = 0; f < PER_GROUP; f++)
        icm__avro_skip_step_add(s, steps, &n, 0, icm__avro_field_at(s, root, (uint32_t)f)->type);
    size_t first = n;
    for (int f = PER_GROUP; f < 2 * PER_GROUP; f++)
        icm__avro_skip_step_add(s, steps, &n, first,
                                icm__avro_field_at(s, root, (uint32_t)f)->type);
    uint64_t seed = 42;
    for (int row = 0; row < ROWS; row++) {
        icm__buf b = ICM__BUF_INIT;
        size_t group_end[2];
        for (int g = 0; g < 2; g++) {
            for (int f = g * PER_GROUP; f < (g + 1) * PER_GROUP; f++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                /* rows 0..99 mostly null, so long runs of nulls occur */
                bool null = row < 100 ? (seed >> 40) % 8 != 0 : (seed >> 40) % 2 == 0;
                int64_t v = (int64_t)((seed >> 24) & 0xFFFFFFFFu) - ((int64_t)1 << 31);
                switch (f % 6) {
                case 0:
                case 5:
                    icm__avro_put_long(&b, null ? 0 : 1);
                    if (!null)
                        icm__avro_put_long(&b, v);
                    break;
                case 1:
                    icm__avro_put_long(&b, null ? 0 : 1);
                    if (!null)
                        icm__avro_put_str(&b, "value");
                    break;
                case 2:
                    icm__avro_put_long(&b, null ? 1 : 0);
                    if (!null)
                        icm__avro_put_long(&b, v);
                    break;
                case 3:
                    icm__avro_put_long(&b, v);
                    break;
                case 4:
                    icm__avro_put_long(&b, null ? 0 : 1);
                    if (!null) {
                        icm__avro_put_long(&b, 2);
                        icm__avro_put_long(&b, v);
                        icm__avro_put_long(&b, 0);
                        icm__avro_put_long(&b, 0);
                    }
                    break;
                }
            }
            group_end[g] = b.len;
            icm__avro_put_str(&b, g == 0 ? "MID" : "END");
        }
        const uint8_t *d;
        size_t l;
        icm__avro_cur c = cur_of((const uint8_t *)b.data, b.len);
        icmt_ok(icm__avro_skip_steps(s, steps, first, &c));
        assert_ptr_equal(c.p, (const uint8_t *)b.data + group_end[0]);
        icmt_ok(icm__avro_read_bytes(&c, &d, &l));
        assert_memory_equal(d, "MID", 3);
        icmt_ok(icm__avro_skip_steps(s, steps + first, n - first, &c));
        assert_ptr_equal(c.p, (const uint8_t *)b.data + group_end[1]);
        icmt_ok(icm__avro_read_bytes(&c, &d, &l));
        assert_memory_equal(d, "END", 3);
        for (size_t cut = 0; cut < group_end[0]; cut++) {
            c = cur_of((const uint8_t *)b.data, cut);
            assert_int_equal(icm__avro_skip_steps(s, steps, first, &c), ICM_EINVALID);
        }
        icm__buf_dispose(&b);
    }
    icm__avro_schema_free(s);
}

static void test_codec_property(void **state)
{
    (void)state;
    icm_avro_codec c;
    icmt_ok(icm_avro_codec_from_property(&c, NULL));
    assert_int_equal(c, ICM_AVRO_CODEC_DEFLATE);
    icmt_ok(icm_avro_codec_from_property(&c, "gzip"));
    assert_int_equal(c, ICM_AVRO_CODEC_DEFLATE);
    icmt_ok(icm_avro_codec_from_property(&c, "ZSTD"));
    assert_int_equal(c, ICM_AVRO_CODEC_ZSTD);
    icmt_ok(icm_avro_codec_from_property(&c, "snappy"));
    assert_int_equal(c, ICM_AVRO_CODEC_SNAPPY);
    icmt_ok(icm_avro_codec_from_property(&c, "uncompressed"));
    assert_int_equal(c, ICM_AVRO_CODEC_NULL);
    assert_int_equal(icm_avro_codec_from_property(&c, "lz4"), ICM_EUNSUPPORTED);
    assert_non_null(strstr(icm_error_last()->message, "lz4"));
}

/* Deflate blocks of very different ratios, one after another on one thread, into one reused
 * buffer and into fresh ones: each inflates to exactly its bytes, whatever room the block
 * before suggested (the room is sized from the last ratio; a block that needs more is
 * inflated again in more room). */
static void test_inflate_ratio_swings(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 4095, 4096, 70000, 300000, 1 << 20, 3 << 20};
    uint32_t x = 12345;
    uint8_t *reused = NULL;
    size_t reused_cap = 0;
    for (int round = 0; round < 60; round++) {
        size_t n = sizes[(size_t)round * 7 % (sizeof sizes / sizeof sizes[0])];
        int kind = round % 3; /* 0: random bytes (~1:1), 1: zeros (~1000:1), 2: text (~10:1) */
        uint8_t *plain = malloc(n + 1);
        assert_non_null(plain);
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            plain[i] = kind == 0   ? (uint8_t)(x >> 24)
                       : kind == 1 ? 0
                                   : (uint8_t)"icemaint"[(x >> 28) & 7];
        }
        icm__buf z = ICM__BUF_INIT;
        icmt_ok(icm__avro_compress(ICM__AVRO_CODEC_DEFLATE, 6, plain, n, &z));
        size_t out_len = SIZE_MAX;
        icmt_ok(icm__avro_decompress(ICM__AVRO_CODEC_DEFLATE, (const uint8_t *)z.data, z.len,
                                     &reused, &reused_cap, &out_len, "mem://r.avro", 4));
        assert_int_equal(out_len, n);
        assert_true(reused_cap > n);
        if (n > 0)
            assert_memory_equal(reused, plain, n);
        uint8_t *fresh = NULL;
        size_t fresh_cap = 0;
        out_len = SIZE_MAX;
        icmt_ok(icm__avro_decompress(ICM__AVRO_CODEC_DEFLATE, (const uint8_t *)z.data, z.len,
                                     &fresh, &fresh_cap, &out_len, "mem://f.avro", 4));
        assert_int_equal(out_len, n);
        if (n > 0)
            assert_memory_equal(fresh, plain, n);
        icm__free(fresh);
        icm__buf_dispose(&z);
        free(plain);
    }
    icm__free(reused);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint_values),     cmocka_unit_test(test_varint_errors),
        cmocka_unit_test(test_schema_compile),
        cmocka_unit_test(test_container_round_trip),
        cmocka_unit_test(test_inflate_ahead),
        cmocka_unit_test(test_sync_markers_random), cmocka_unit_test(test_container_errors),
        cmocka_unit_test(test_codec_property),      cmocka_unit_test(test_skip_counts),
        cmocka_unit_test(test_skip_varint_runs),
        cmocka_unit_test(test_skip_steps_groups),
        cmocka_unit_test(test_skip_varints_counts),
        cmocka_unit_test(test_inflate_ratio_swings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
