/*
 * bench/bench_manifest_decode.c: manifest decode throughput. Generates a large v2 manifest with
 * icemaint's writer (realistic entries: ~90-byte paths, a two-field partition, metrics maps for
 * 8 columns, split offsets), writes it to a file (so bench/fastavro_decode.py can time fastavro
 * on the very same bytes), then times, best of R runs:
 *   floor   - decompress every block, no decoding (the codec's cost alone);
 *   expiry  - full decode with the expiry projection (ICM_MANIFEST_FIELDS_EXPIRY);
 *   all     - full decode of every field.
 * Times are process CPU seconds (single-threaded work; robust against a busy machine).
 *
 * Usage: bench_manifest_decode [--entries N] [--codec null|deflate|snappy|zstd]
 *                              [--out PATH] [--runs R] [--in PATH] [--only expiry]
 * --in times an existing file instead of generating one; --only expiry skips the other modes.
 * Results go to docs/BENCHMARKS.md ("Manifest decode"). Build with -DCMAKE_BUILD_TYPE=Release.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "avro/avro.h"
#include "icemaint/manifest.h"

#define COLUMNS 8

/* Process CPU time: the decoder is single-threaded, and on a shared machine wall time mostly
 * measures the other processes. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "%s failed: %d %s\n", what, rc, icm_error_last()->message);
    exit(1);
}

/* Encoded map<int, long> for COLUMNS columns. */
static size_t put_counts(uint8_t *out, int64_t base)
{
    icm__buf b = ICM__BUF_INIT;
    icm__avro_put_long(&b, COLUMNS);
    for (int c = 1; c <= COLUMNS; c++) {
        icm__avro_put_long(&b, c);
        icm__avro_put_long(&b, base + c * 37);
    }
    icm__avro_put_long(&b, 0);
    size_t n = b.len;
    memcpy(out, b.data, n);
    icm__buf_dispose(&b);
    return n;
}

/* Encoded map<int, bytes> bounds: 8-byte values for COLUMNS columns. */
static size_t put_bounds(uint8_t *out, int64_t base)
{
    icm__buf b = ICM__BUF_INIT;
    icm__avro_put_long(&b, COLUMNS);
    for (int c = 1; c <= COLUMNS; c++) {
        uint8_t v[8];
        for (int k = 0; k < 8; k++)
            v[k] = (uint8_t)((base >> (k * 3)) + c);
        icm__avro_put_long(&b, c);
        icm__avro_put_bytes(&b, v, 8);
    }
    icm__avro_put_long(&b, 0);
    size_t n = b.len;
    memcpy(out, b.data, n);
    icm__buf_dispose(&b);
    return n;
}

static char *generate(long n, icm_avro_codec codec, size_t *len)
{
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.format_version = 2;
    o.codec = codec;
    o.compression_level = -1;
    o.schema_json = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                    "{\"id\":2,\"name\":\"event_date\",\"required\":false,\"type\":\"date\"},"
                    "{\"id\":3,\"name\":\"region\",\"required\":false,\"type\":\"string\"}]}";
    o.partition_spec_json = "[{\"name\":\"event_date\",\"transform\":\"identity\","
                            "\"source-id\":2,\"field-id\":1000},{\"name\":\"region_bucket\","
                            "\"transform\":\"bucket[16]\",\"source-id\":3,\"field-id\":1001}]";
    icm_manifest_writer *w = NULL;
    int rc = icm_manifest_writer_new(&w, &o);
    if (rc < 0)
        die("writer", rc);
    uint8_t part[16], counts[128], nulls[128], lower[160], upper[160], splits[16];
    for (long i = 0; i < n; i++) {
        icm_manifest_entry e;
        memset(&e, 0, sizeof e);
        char path[160];
        snprintf(path, sizeof path,
                 "s3://warehouse-bucket/db/events/data/event_date=2024-%02ld-%02ld/"
                 "00%03ld-%ld-3f1c2a9e-7b4d-4e8a-9c1f-%012ld.parquet",
                 1 + i % 12, 1 + i % 28, i % 200, i % 7, i);
        icm__buf pb = ICM__BUF_INIT;
        icm__avro_put_long(&pb, 1);
        icm__avro_put_long(&pb, 19000 + i % 365);
        icm__avro_put_long(&pb, 1);
        icm__avro_put_long(&pb, i % 16);
        memcpy(part, pb.data, pb.len);
        e.data_file.partition.data = part;
        e.data_file.partition.len = pb.len;
        icm__buf_dispose(&pb);
        e.status = i % 10 == 0 ? ICM_ENTRY_DELETED : i % 3 ? ICM_ENTRY_EXISTING : ICM_ENTRY_ADDED;
        e.has_snapshot_id = true;
        e.snapshot_id = 5837462918273645000 + i / 1000;
        e.has_sequence_number = e.has_file_sequence_number = true;
        e.sequence_number = e.file_sequence_number = 1 + i / 1000;
        e.data_file.file_path = path;
        e.data_file.file_format = ICM_FILE_FORMAT_PARQUET;
        e.data_file.record_count = 100000 + i % 5000;
        e.data_file.file_size_in_bytes = 64 * 1024 * 1024 + i;
        e.data_file.column_sizes = (icm_raw){counts, put_counts(counts, i)};
        e.data_file.value_counts = (icm_raw){counts, e.data_file.column_sizes.len};
        e.data_file.null_value_counts = (icm_raw){nulls, put_counts(nulls, i % 100)};
        e.data_file.lower_bounds = (icm_raw){lower, put_bounds(lower, i)};
        e.data_file.upper_bounds = (icm_raw){upper, put_bounds(upper, i + 1000)};
        icm__buf sb = ICM__BUF_INIT;
        icm__avro_put_long(&sb, 1);
        icm__avro_put_long(&sb, 4);
        icm__avro_put_long(&sb, 0);
        memcpy(splits, sb.data, sb.len);
        e.data_file.split_offsets = (icm_raw){splits, sb.len};
        icm__buf_dispose(&sb);
        e.data_file.has_sort_order_id = true;
        rc = icm_manifest_writer_add(w, &e);
        if (rc < 0)
            die("add", rc);
    }
    char *out = NULL;
    rc = icm_manifest_writer_finish(&out, len, NULL, w);
    if (rc < 0)
        die("finish", rc);
    icm_manifest_writer_free(w);
    return out;
}

static double time_floor(const char *data, size_t len, size_t *decoded)
{
    double t0 = now_s();
    icm__avro_reader *r = NULL;
    int rc = icm__avro_reader_open(&r, data, len, "bench.avro");
    if (rc < 0)
        die("open", rc);
    size_t total = 0, n;
    int64_t count;
    while ((rc = icm__avro_reader_block_floor(r, &n, &count)) == 0)
        total += n;
    if (rc != ICM_ITEROVER)
        die("floor", rc);
    icm__avro_reader_free(r);
    *decoded = total;
    return now_s() - t0;
}

static double time_decode(const char *data, size_t len, uint64_t fields, long *entries,
                          uint64_t *checksum)
{
    double t0 = now_s();
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.fields = fields;
    icm_manifest_reader *r = NULL;
    int rc = icm_manifest_reader_open(&r, data, len, "bench.avro", &o);
    if (rc < 0)
        die("open", rc);
    const icm_manifest_entry *e;
    long n = 0;
    uint64_t sum = 0;
    while ((rc = icm_manifest_reader_next(&e, r)) == 0) {
        /* Touch what expiry uses, so nothing is optimised away. */
        sum += (uint64_t)e->data_file.record_count + e->data_file.file_path_len +
               (uint64_t)e->status + (uint64_t)e->snapshot_id;
        n++;
    }
    if (rc != ICM_ITEROVER)
        die("decode", rc);
    icm_manifest_reader_free(r);
    *entries = n;
    *checksum = sum;
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    long n = 1000000;
    int runs = 5;
    const char *out_path = "/tmp/icm_bench_manifest.avro";
    const char *codec_name = "deflate";
    const char *in_path = NULL;
    bool only_expiry = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--entries") == 0)
            n = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--codec") == 0)
            codec_name = argv[i + 1];
        else if (strcmp(argv[i], "--out") == 0)
            out_path = argv[i + 1];
        else if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--in") == 0)
            in_path = argv[i + 1];
        else if (strcmp(argv[i], "--only") == 0)
            only_expiry = strcmp(argv[i + 1], "expiry") == 0;
    }
    icm_avro_codec codec;
    int rc = icm_avro_codec_from_property(&codec, codec_name);
    if (rc < 0)
        die("codec", rc);
    size_t len;
    char *data;
    if (in_path != NULL) {
        FILE *f = fopen(in_path, "rb");
        if (f == NULL) {
            fprintf(stderr, "cannot read %s\n", in_path);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        data = malloc(len);
        if (data == NULL || fread(data, 1, len, f) != len)
            return 1;
        fclose(f);
        printf("file %s: %.1f MB\n", in_path, (double)len / 1e6);
    } else {
        double g0 = now_s();
        data = generate(n, codec, &len);
        double gen = now_s() - g0;
        FILE *f = fopen(out_path, "wb");
        if (f == NULL || fwrite(data, 1, len, f) != len) {
            fprintf(stderr, "cannot write %s\n", out_path);
            return 1;
        }
        fclose(f);
        printf("file %s: %ld entries, codec %s, %.1f MB (written in %.2f s)\n", out_path, n,
               codec_name, (double)len / 1e6, gen);
    }

    double floor_best = 1e9, exp_best = 1e9, all_best = 1e9;
    size_t decoded = 0;
    long entries = 0;
    uint64_t sum = 0;
    for (int r = 0; r < runs; r++) {
        double t;
        if (!only_expiry) {
            t = time_floor(data, len, &decoded);
            floor_best = t < floor_best ? t : floor_best;
        }
        t = time_decode(data, len, ICM_MANIFEST_FIELDS_EXPIRY, &entries, &sum);
        exp_best = t < exp_best ? t : exp_best;
        if (!only_expiry) {
            t = time_decode(data, len, ICM_MANIFEST_FIELD_ALL, &entries, &sum);
            all_best = t < all_best ? t : all_best;
        }
    }
    double mb = (double)len / 1e6, dmb = (double)decoded / 1e6;
    printf("decompressed block bytes: %.1f MB\n", dmb);
    printf("%-8s %9s %14s %12s %14s\n", "mode", "seconds", "entries/s", "file MB/s",
           "decoded MB/s");
    printf("%-8s %9.3f %14s %12.1f %14.1f\n", "floor", floor_best, "-", mb / floor_best,
           dmb / floor_best);
    printf("%-8s %9.3f %14.0f %12.1f %14.1f\n", "expiry", exp_best, (double)entries / exp_best,
           mb / exp_best, dmb / exp_best);
    printf("%-8s %9.3f %14.0f %12.1f %14.1f\n", "all", all_best, (double)entries / all_best,
           mb / all_best, dmb / all_best);
    printf("expiry / floor = %.2fx   (checksum %llu)\n", exp_best / floor_best,
           (unsigned long long)sum);
    if (in_path != NULL)
        free(data);
    else
        icm_free(data);
    return 0;
}
