/*
 * avro/codec.c: block compression for Avro object container files: null, deflate (raw RFC 1951
 * stream, no zlib header), snappy (Avro framing: one raw snappy block followed by the 4-byte
 * big-endian CRC32 of the uncompressed data) and zstandard (one or more zstd frames).
 *
 * Deflate is inflated with libdeflate (whole-buffer, faster) and compressed with zlib.
 *
 * Source: Avro 1.11 specification "Required Codecs" / "Optional Codecs". Output of every
 * decompressor is capped at ICM__AVRO_MAX_BLOCK_BYTES (decompression bombs).
 */
#include <libdeflate.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "avro/avro.h"

const char *icm__avro_codec_name(icm__avro_codec codec)
{
    switch (codec) {
    case ICM__AVRO_CODEC_NULL:
        return "null";
    case ICM__AVRO_CODEC_DEFLATE:
        return "deflate";
    case ICM__AVRO_CODEC_SNAPPY:
        return "snappy";
    case ICM__AVRO_CODEC_ZSTD:
        return "zstandard";
    }
    return "unknown";
}

static int corrupt_block(const char *location, int64_t offset, const char *codec,
                         const char *what)
{
    int rc = icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, location,
                            "corrupt Avro %s block: %s", codec, what);
    icm__error_set_position(0, 0, offset);
    return rc;
}

/* Make *buf hold at least `need` bytes (+1 spare so callers may NUL-terminate). */
static int ensure(uint8_t **buf, size_t *cap, size_t need)
{
    if (need + 1 <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need + 1)
        c = c > SIZE_MAX / 2 ? need + 1 : c * 2;
    /* Doubling overshoots: a need within the block limit never gets a buffer past the limit
     * (+1 spare), so no decompressor is handed room for a block larger than the limit. */
    if (need <= ICM__AVRO_MAX_BLOCK_BYTES && c > ICM__AVRO_MAX_BLOCK_BYTES + 1)
        c = ICM__AVRO_MAX_BLOCK_BYTES + 1;
    uint8_t *n = icm__realloc(*buf, c);
    if (n == NULL)
        return ICM_ENOMEM;
    *buf = n;
    *cap = c;
    return 0;
}

static int too_big(const char *location, int64_t offset)
{
    int rc = icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, location,
                            "corrupt Avro block: decompressed block larger than the 1 GiB limit");
    icm__error_set_position(0, 0, offset);
    return rc;
}

/* Deflate blocks are inflated by libdeflate, which decompresses a whole buffer at once (about
 * twice zlib's speed; reading manifests is mostly inflating). Avro does not record a block's
 * decompressed size, so the output buffer is sized by a guess (the buffer's current size, at
 * least 8x the input) and grown 4x and retried when too small, up to the block limit. */
/* One decompressor per thread, kept for the thread's life (freed when it ends): allocating and
 * zeroing one per block cost about as much as inflating a small manifest. NULL when the
 * thread-local slot cannot be had; then each block allocates its own. */
static pthread_once_t g_decompressor_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_decompressor_key;
static bool g_decompressor_key_ok;

static void free_decompressor(void *d)
{
    libdeflate_free_decompressor(d);
}

static void make_decompressor_key(void)
{
    g_decompressor_key_ok = pthread_key_create(&g_decompressor_key, free_decompressor) == 0;
}

static struct libdeflate_decompressor *thread_decompressor(void)
{
    if (pthread_once(&g_decompressor_once, make_decompressor_key) != 0 || !g_decompressor_key_ok)
        return NULL;
    struct libdeflate_decompressor *d = pthread_getspecific(g_decompressor_key);
    if (d == NULL && (d = libdeflate_alloc_decompressor()) != NULL &&
        pthread_setspecific(g_decompressor_key, d) != 0) {
        libdeflate_free_decompressor(d);
        d = NULL;
    }
    return d;
}

/* Make *buf hold at least `need` bytes, dropping what it holds: a retry's room, where copying
 * the failed attempt's output (as realloc would) is wasted work. */
static int ensure_empty(uint8_t **buf, size_t *cap, size_t need)
{
    if (need + 1 <= *cap)
        return 0;
    icm__free(*buf);
    *cap = 0;
    /* Exactly the room asked for (need is within the block limit or one past it, never more):
     * rounding up to a power of two would only make more blocks big enough to be mapped, and
     * unmapped, one by one. */
    if ((*buf = icm__malloc(need + 1)) == NULL)
        return ICM_ENOMEM;
    *cap = need + 1;
    return 0;
}

/* libdeflate inflates a whole block into room it is given, and a block does not say how large
 * it inflates: room too small costs a second inflation of the block, most of the first one
 * wasted. So the room asked for is the last block's ratio on this thread (a table's blocks
 * inflate alike) with half again as much to spare, at least 12 times the input. Only the bytes
 * written are touched, so spare room costs address space, not memory; past 64 MiB the last
 * ratio no longer counts (one bomb-like block must not make every later block ask for a huge
 * buffer). */
#define INFLATE_GUESS_FREE_BYTES ((size_t)64 << 20)
static _Thread_local size_t g_inflate_ratio = 8;

static size_t inflate_guess(size_t in_len)
{
    size_t ratio = g_inflate_ratio < 8 ? 8 : g_inflate_ratio;
    ratio += ratio / 2;
    size_t floor_guess = in_len < ICM__AVRO_MAX_BLOCK_BYTES / 12 ? in_len * 12
                                                                : ICM__AVRO_MAX_BLOCK_BYTES;
    size_t guess = in_len < INFLATE_GUESS_FREE_BYTES / ratio ? in_len * ratio
                                                            : INFLATE_GUESS_FREE_BYTES;
    if (guess < floor_guess)
        guess = floor_guess;
    return guess < 4096 ? 4096 : guess;
}

static int inflate_block(const uint8_t *in, size_t in_len, uint8_t **buf, size_t *cap,
                         size_t *out_len, const char *location, int64_t offset)
{
    struct libdeflate_decompressor *kept = thread_decompressor();
    struct libdeflate_decompressor *d = kept != NULL ? kept : libdeflate_alloc_decompressor();
    if (d == NULL)
        return icm__error_oom();
    int rc = ensure_empty(buf, cap, inflate_guess(in_len));
    while (rc == 0) {
        size_t room = *cap - 1; /* ensure() keeps one spare byte */
        if (room > ICM__AVRO_MAX_BLOCK_BYTES)
            room = ICM__AVRO_MAX_BLOCK_BYTES; /* a larger caller buffer never lifts the limit */
        size_t produced = 0;
        enum libdeflate_result r =
            libdeflate_deflate_decompress_ex(d, in, in_len, *buf, room, NULL, &produced);
        if (r == LIBDEFLATE_SUCCESS) {
            *out_len = produced;
            if (in_len > 0)
                g_inflate_ratio = produced / in_len + 1;
            break;
        }
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE) {
            rc = corrupt_block(location, offset, "deflate", "invalid or truncated deflate data");
            break;
        }
        if (room >= ICM__AVRO_MAX_BLOCK_BYTES) {
            rc = too_big(location, offset);
            break;
        }
        size_t bigger = room < ICM__AVRO_MAX_BLOCK_BYTES / 4 ? room * 4 : ICM__AVRO_MAX_BLOCK_BYTES;
        rc = ensure_empty(buf, cap, bigger);
    }
    if (d != kept)
        libdeflate_free_decompressor(d);
    return rc;
}

static int unsnappy_block(const uint8_t *in, size_t in_len, uint8_t **buf, size_t *cap,
                          size_t *out_len, const char *location, int64_t offset)
{
    if (in_len < 4)
        return corrupt_block(location, offset, "snappy", "shorter than its CRC32");
    size_t n = 0;
    if (snappy_uncompressed_length((const char *)in, in_len - 4, &n) != SNAPPY_OK)
        return corrupt_block(location, offset, "snappy", "bad length header");
    if (n > ICM__AVRO_MAX_BLOCK_BYTES)
        return too_big(location, offset);
    int rc = ensure(buf, cap, n);
    if (rc < 0)
        return rc;
    size_t got = n;
    if (snappy_uncompress((const char *)in, in_len - 4, (char *)*buf, &got) != SNAPPY_OK ||
        got != n)
        return corrupt_block(location, offset, "snappy", "cannot uncompress");
    const uint8_t *c = in + in_len - 4;
    uint32_t want = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
    uint32_t have = (uint32_t)crc32(0L, Z_NULL, 0);
    /* crc32 takes uInt lengths: feed in pieces. */
    for (size_t done = 0; done < n;) {
        size_t step = n - done > UINT32_MAX ? UINT32_MAX : n - done;
        have = (uint32_t)crc32(have, *buf + done, (uInt)step);
        done += step;
    }
    if (have != want)
        return corrupt_block(location, offset, "snappy", "CRC32 mismatch");
    *out_len = n;
    return 0;
}

static int unzstd_block(const uint8_t *in, size_t in_len, uint8_t **buf, size_t *cap,
                        size_t *out_len, const char *location, int64_t offset)
{
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (dctx == NULL)
        return icm__error_oom();
    unsigned long long hint = ZSTD_getFrameContentSize(in, in_len);
    size_t guess = (hint != ZSTD_CONTENTSIZE_UNKNOWN && hint != ZSTD_CONTENTSIZE_ERROR &&
                    hint <= ICM__AVRO_MAX_BLOCK_BYTES)
                       ? (size_t)hint
                       : in_len * 4;
    int rc = ensure(buf, cap, guess < 4096 ? 4096 : guess);
    ZSTD_inBuffer ib = {in, in_len, 0};
    size_t produced = 0;
    size_t last = 0;
    while (rc == 0) {
        if (produced + 1 >= *cap) {
            if (*cap - 1 >= ICM__AVRO_MAX_BLOCK_BYTES) {
                rc = too_big(location, offset);
                break;
            }
            size_t more = *cap > ICM__AVRO_MAX_BLOCK_BYTES / 2 ? ICM__AVRO_MAX_BLOCK_BYTES
                                                              : *cap * 2;
            rc = ensure(buf, cap, more);
            if (rc < 0)
                break;
        }
        size_t room = *cap - 1 > ICM__AVRO_MAX_BLOCK_BYTES ? ICM__AVRO_MAX_BLOCK_BYTES : *cap - 1;
        ZSTD_outBuffer ob = {*buf, room, produced};
        last = ZSTD_decompressStream(dctx, &ob, &ib);
        produced = ob.pos;
        if (ZSTD_isError(last)) {
            rc = corrupt_block(location, offset, "zstandard", ZSTD_getErrorName(last));
            break;
        }
        if (ib.pos == ib.size && last == 0)
            break; /* every frame complete */
        if (ib.pos == ib.size && ob.pos < ob.size) {
            rc = corrupt_block(location, offset, "zstandard", "truncated frame");
            break;
        }
    }
    ZSTD_freeDCtx(dctx);
    if (rc == 0)
        *out_len = produced;
    return rc;
}

int icm__avro_decompress(icm__avro_codec codec, const uint8_t *in, size_t in_len, uint8_t **buf,
                         size_t *cap, size_t *out_len, const char *location, int64_t offset)
{
    /* A block with no bytes holds nothing, whatever the codec (writers emit such blocks for
     * zero objects; the caller checks the object count against the bytes). */
    if (in_len == 0 && codec != ICM__AVRO_CODEC_NULL) {
        *out_len = 0;
        return 0;
    }
    switch (codec) {
    case ICM__AVRO_CODEC_NULL:
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_ERROR, location,
                              "null codec blocks are decoded in place");
    case ICM__AVRO_CODEC_DEFLATE:
        return inflate_block(in, in_len, buf, cap, out_len, location, offset);
    case ICM__AVRO_CODEC_SNAPPY:
        return unsnappy_block(in, in_len, buf, cap, out_len, location, offset);
    case ICM__AVRO_CODEC_ZSTD:
        return unzstd_block(in, in_len, buf, cap, out_len, location, offset);
    }
    return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EUNSUPPORTED, location, "unknown codec");
}

static int deflate_block(int level, const uint8_t *in, size_t in_len, icm__buf *out)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level < 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, -15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return icm__error_oom();
    if (in_len > UINT32_MAX) {
        deflateEnd(&zs);
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EINVALID, NULL, "block too large");
    }
    size_t bound = deflateBound(&zs, (uLong)in_len);
    int rc = icm__buf_grow(out, bound);
    if (rc == 0) {
        zs.next_in = (Bytef *)(uintptr_t)in;
        zs.avail_in = (uInt)in_len;
        zs.next_out = (Bytef *)out->data + out->len;
        zs.avail_out = (uInt)bound;
        if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
            rc = icm__error_set(ICM_ERRCLASS_AVRO, ICM_ERROR, NULL, "deflate failed");
        else
            out->len += bound - zs.avail_out;
    }
    deflateEnd(&zs);
    return rc;
}

static int snappy_block(const uint8_t *in, size_t in_len, icm__buf *out)
{
    size_t bound = snappy_max_compressed_length(in_len);
    int rc = icm__buf_grow(out, bound + 4);
    if (rc < 0)
        return rc;
    size_t n = bound;
    if (snappy_compress((const char *)in, in_len, out->data + out->len, &n) != SNAPPY_OK)
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_ERROR, NULL, "snappy compression failed");
    out->len += n;
    uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < in_len;) {
        size_t step = in_len - done > UINT32_MAX ? UINT32_MAX : in_len - done;
        crc = (uint32_t)crc32(crc, in + done, (uInt)step);
        done += step;
    }
    uint8_t be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8),
                     (uint8_t)crc};
    return icm__buf_put(out, be, 4);
}

static int zstd_block(int level, const uint8_t *in, size_t in_len, icm__buf *out)
{
    size_t bound = ZSTD_compressBound(in_len);
    int rc = icm__buf_grow(out, bound);
    if (rc < 0)
        return rc;
    size_t n = ZSTD_compress(out->data + out->len, bound, in, in_len, level < 0 ? 3 : level);
    if (ZSTD_isError(n))
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_ERROR, NULL, "zstd compression failed: %s",
                              ZSTD_getErrorName(n));
    out->len += n;
    out->data[out->len] = '\0';
    return 0;
}

int icm__avro_compress(icm__avro_codec codec, int level, const uint8_t *in, size_t in_len,
                       icm__buf *out)
{
    int rc;
    switch (codec) {
    case ICM__AVRO_CODEC_NULL:
        return icm__buf_put(out, in, in_len);
    case ICM__AVRO_CODEC_DEFLATE:
        rc = deflate_block(level, in, in_len, out);
        break;
    case ICM__AVRO_CODEC_SNAPPY:
        return snappy_block(in, in_len, out);
    case ICM__AVRO_CODEC_ZSTD:
        return zstd_block(level, in, in_len, out);
    default:
        return icm__error_set(ICM_ERRCLASS_AVRO, ICM_EUNSUPPORTED, NULL, "unknown codec");
    }
    if (rc == 0 && out->data)
        out->data[out->len] = '\0';
    return rc;
}
