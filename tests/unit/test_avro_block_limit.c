/*
 * tests/unit/test_avro_block_limit.c: a compressed Avro block may decompress to at most
 * ICM__AVRO_MAX_BLOCK_BYTES (1 GiB), whatever the codec, and the output buffer never grows past
 * that limit (+1 spare byte).
 *
 * Found by adversarial testing: the output buffer grows by doubling, and one doubling past the
 * limit handed libdeflate (and zstd) room for 2 GiB (zstd: 4 GiB), so a deflate bomb of
 * 1.5 GiB decoded "successfully" after allocating 2 GiB. Each test decompresses a stream of
 * zeros just over the limit (and, for deflate, exactly at it): they need about 1 GiB of memory
 * and a few seconds each.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "avro/avro.h"
#include "testutil.h"

#define MIB ((size_t)1 << 20)

/* Raw deflate (no zlib header, as Avro writes it) of `n_mib` MiB of zeros. */
static uint8_t *deflate_zeros(size_t n_mib, size_t *len)
{
    uint8_t *zeros = calloc(1, MIB);
    size_t cap = n_mib * 16384 + 4096; /* zeros deflate far better than 64:1 */
    uint8_t *out = malloc(cap);
    assert_non_null(zeros);
    assert_non_null(out);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    for (size_t i = 0; i < n_mib; i++) {
        zs.next_in = zeros;
        zs.avail_in = (uInt)MIB;
        assert_int_equal(deflate(&zs, i + 1 == n_mib ? Z_FINISH : Z_NO_FLUSH),
                         i + 1 == n_mib ? Z_STREAM_END : Z_OK);
        assert_int_equal(zs.avail_in, 0);
    }
    *len = cap - zs.avail_out;
    deflateEnd(&zs);
    free(zeros);
    return out;
}

/* One zstd frame of `n_mib` MiB of zeros written as a stream (no content size in the header,
 * like a streaming writer's). */
static uint8_t *zstd_zeros(size_t n_mib, size_t *len)
{
    uint8_t *zeros = calloc(1, MIB);
    size_t cap = n_mib * 100 + 4096;
    uint8_t *out = malloc(cap);
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    assert_non_null(zeros);
    assert_non_null(out);
    assert_non_null(cctx);
    ZSTD_outBuffer ob = {out, cap, 0};
    for (size_t i = 0; i < n_mib; i++) {
        ZSTD_inBuffer ib = {zeros, MIB, 0};
        ZSTD_EndDirective end = i + 1 == n_mib ? ZSTD_e_end : ZSTD_e_continue;
        size_t left;
        do {
            left = ZSTD_compressStream2(cctx, &ob, &ib, end);
            assert_false(ZSTD_isError(left));
        } while (ib.pos < ib.size || (end == ZSTD_e_end && left != 0));
    }
    assert_int_equal(ZSTD_getFrameContentSize(out, ob.pos), ZSTD_CONTENTSIZE_UNKNOWN);
    *len = ob.pos;
    ZSTD_freeCCtx(cctx);
    free(zeros);
    return out;
}

static void expect_too_big(icm__avro_codec codec, const uint8_t *in, size_t in_len)
{
    uint8_t *buf = NULL;
    size_t cap = 0, out_len = 0;
    int rc = icm__avro_decompress(codec, in, in_len, &buf, &cap, &out_len, "bomb.avro", 7);
    assert_int_equal(rc, ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "larger than the 1 GiB limit"));
    assert_string_equal(icm_error_last()->location, "bomb.avro");
    assert_true(cap <= ICM__AVRO_MAX_BLOCK_BYTES + 1);
    icm_free(buf);
}

static void test_deflate_just_over_the_limit_is_refused(void **state)
{
    (void)state;
    size_t len;
    uint8_t *in = deflate_zeros(ICM__AVRO_MAX_BLOCK_BYTES / MIB + 1, &len);
    expect_too_big(ICM__AVRO_CODEC_DEFLATE, in, len);
    free(in);
}

static void test_deflate_exactly_at_the_limit_decodes(void **state)
{
    (void)state;
    size_t len;
    uint8_t *in = deflate_zeros(ICM__AVRO_MAX_BLOCK_BYTES / MIB, &len);
    uint8_t *buf = NULL;
    size_t cap = 0, out_len = 0;
    icmt_ok(icm__avro_decompress(ICM__AVRO_CODEC_DEFLATE, in, len, &buf, &cap, &out_len,
                                 "limit.avro", 0));
    assert_int_equal(out_len, ICM__AVRO_MAX_BLOCK_BYTES);
    assert_true(cap <= ICM__AVRO_MAX_BLOCK_BYTES + 1);
    assert_int_equal(buf[0], 0);
    assert_int_equal(buf[out_len - 1], 0);
    icm_free(buf);
    free(in);
}

static void test_zstd_just_over_the_limit_is_refused(void **state)
{
    (void)state;
    size_t len;
    uint8_t *in = zstd_zeros(ICM__AVRO_MAX_BLOCK_BYTES / MIB + 1, &len);
    expect_too_big(ICM__AVRO_CODEC_ZSTD, in, len);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deflate_just_over_the_limit_is_refused),
        cmocka_unit_test(test_deflate_exactly_at_the_limit_decodes),
        cmocka_unit_test(test_zstd_just_over_the_limit_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
