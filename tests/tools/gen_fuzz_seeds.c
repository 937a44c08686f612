/*
 * tests/tools/gen_fuzz_seeds.c: writes the checked-in fuzz seeds with icemaint's own writer
 * (never fixture copies): small manifests for every format version x codec and manifest lists,
 * into fuzz/corpus/manifest/ and a subset into fuzz/corpus/avro_container/.
 *
 * Usage: gen_fuzz_seeds MANIFEST_DIR CONTAINER_DIR   (sync markers are random, so each run
 * produces different bytes with the same content).
 */
#include <stdio.h>
#include <string.h>

#include "icemaint/errors.h"
#include "icemaint/manifest.h"

static const char *const CODEC_NAMES[] = {"null", "deflate", "snappy", "zstd"};

static int save(const char *dir, const char *name, const char *data, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "cannot write %s\n", path);
        if (f)
            fclose(f);
        return 1;
    }
    return fclose(f) == 0 ? 0 : 1;
}

/* Four entries over a two-field partition (identity string, bucket); for v3 + deflate a
 * deletion-vector delete manifest. */
static int write_manifest(int v, int c, char **out, size_t *len, icm_manifest_file *sum)
{
    bool dv = v == 3 && c == 1;
    icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    o.format_version = v;
    o.codec = (icm_avro_codec)c;
    o.compression_level = -1;
    o.schema_json = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";
    o.schema_id = 0;
    o.partition_spec_json = "[{\"name\":\"s\",\"transform\":\"identity\",\"source-id\":2,"
                            "\"field-id\":1000},{\"name\":\"b\",\"transform\":\"bucket[4]\","
                            "\"source-id\":1,\"field-id\":1001}]";
    o.block_bytes = 200; /* several blocks even for four entries */
    o.content = (v >= 2 && c == 1) ? ICM_MANIFEST_CONTENT_DELETES : ICM_MANIFEST_CONTENT_DATA;
    icm_manifest_writer *w = NULL;
    int rc = icm_manifest_writer_new(&w, &o);
    for (int i = 0; rc == 0 && i < 4; i++) {
        icm_manifest_entry e;
        memset(&e, 0, sizeof e);
        char path[64];
        snprintf(path, sizeof path, "s3://b/t/data/f%d.parquet", i);
        /* partition: ["null", string] = "ab", ["null", int] = i */
        uint8_t part[6] = {2, 4, 'a', 'b', 2, (uint8_t)(2 * i)};
        e.status = (icm_entry_status)(i % 3);
        e.has_snapshot_id = v == 1 || i > 0;
        e.snapshot_id = 5 + i;
        e.has_sequence_number = i == 2;
        e.sequence_number = 3;
        e.data_file.content = o.content == ICM_MANIFEST_CONTENT_DELETES
                                  ? ICM_FILE_CONTENT_POSITION_DELETES
                                  : ICM_FILE_CONTENT_DATA;
        e.data_file.file_path = path;
        e.data_file.file_format_name = dv ? "PUFFIN" : "PARQUET";
        e.data_file.partition = (icm_raw){part, sizeof part};
        e.data_file.record_count = 10 * i;
        e.data_file.file_size_in_bytes = 1000 + i;
        e.data_file.split_offsets = (icm_raw){(const uint8_t *)"\x02\x08\x00", 3};
        if (dv) {
            e.data_file.has_content_offset = e.data_file.has_content_size_in_bytes = true;
            e.data_file.content_offset = 4;
            e.data_file.content_size_in_bytes = 30;
            e.data_file.referenced_data_file = "s3://b/t/data/x.parquet";
        }
        rc = icm_manifest_writer_add(w, &e);
    }
    if (rc == 0)
        rc = icm_manifest_writer_finish(out, len, sum, w);
    icm_manifest_writer_free(w);
    return rc;
}

static int write_list(int v, int c, icm_manifest_file *sum, char **out, size_t *len)
{
    icm_manifest_list_writer_options o = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    o.format_version = v;
    o.codec = (icm_avro_codec)c;
    o.compression_level = -1;
    o.snapshot_id = 9;
    o.sequence_number = 4;
    o.block_bytes = 100;
    icm_manifest_list_writer *w = NULL;
    int rc = icm_manifest_list_writer_new(&w, &o);
    sum->manifest_path = "s3://b/t/metadata/m.avro";
    sum->has_added_snapshot_id = true;
    sum->added_snapshot_id = 9;
    /* one field summary: contains_null false, contains_nan false, lower "a", upper null */
    sum->partitions = (icm_raw){(const uint8_t *)"\x02\x00\x02\x00\x02\x02\x61\x00\x00", 9};
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = icm_manifest_list_writer_add(w, sum);
    if (rc == 0)
        rc = icm_manifest_list_writer_finish(out, len, w);
    icm_manifest_list_writer_free(w);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_fuzz_seeds MANIFEST_DIR CONTAINER_DIR\n");
        return 2;
    }
    int bad = 0;
    for (int v = 1; v <= 3; v++) {
        for (int c = 0; c < 4; c++) {
            char *data = NULL, name[64];
            size_t len = 0;
            icm_manifest_file sum = ICM_MANIFEST_FILE_INIT;
            if (write_manifest(v, c, &data, &len, &sum) != 0) {
                fprintf(stderr, "manifest v%d: %s\n", v, icm_error_last()->message);
                return 1;
            }
            snprintf(name, sizeof name, "manifest-v%d-%s.avro", v, CODEC_NAMES[c]);
            bad |= save(argv[1], name, data, len);
            if (v == 2)
                bad |= save(argv[2], name, data, len);
            icm_free(data);
            if (write_list(v, c, &sum, &data, &len) != 0) {
                fprintf(stderr, "list v%d: %s\n", v, icm_error_last()->message);
                return 1;
            }
            snprintf(name, sizeof name, "list-v%d-%s.avro", v, CODEC_NAMES[c]);
            if (c == 0 || c == v % 4)
                bad |= save(argv[1], name, data, len);
            if (v == 3)
                bad |= save(argv[2], name, data, len);
            icm_free(data);
        }
    }
    return bad;
}
