/*
 * fuzz/fuzz_manifest.c: the manifest list and manifest decoders on arbitrary bytes (lists also
 * through a schema cache with the expiry walk's row filter, which must agree), with every
 * field, with the expiry projection and with inheritance from a manifest list entry; a manifest
 * that decodes is also copied through icm_manifest_writer_new_like() and read back, and the copy
 * must hold the same number of entries.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "icemaint/manifest.h"
#include "manifest/manifest_internal.h"

const char *const icm_fuzz_seed_suffixes[] = {".avro", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The row filter of the expiry walk's fast path: here it claims paths whose byte sum is even. */
static bool skip_even(const uint8_t *path, size_t len, void *payload)
{
    (void)payload;
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += path[i];
    return sum % 2 == 0;
}

/* Read as a manifest list, plainly and then through a schema cache with the row filter: when
 * the plain read decodes whole, the filtered read must too, returning exactly the rows the
 * filter did not claim. */
static void read_list(const uint8_t *data, size_t size)
{
    icm_manifest_list_reader *r = NULL;
    if (icm_manifest_list_reader_open(&r, data, size, "fuzz.avro", NULL) != 0)
        return;
    const icm_manifest_file *m;
    long unclaimed = 0;
    int rc;
    while ((rc = icm_manifest_list_reader_next(r, &m)) == 0) {
        unclaimed += !skip_even((const uint8_t *)m->manifest_path, m->manifest_path_len, NULL);
    }
    (void)icm_manifest_list_reader_header(r, "snapshot-id");
    icm_manifest_list_reader_free(r);

    icm__avro_schema_cache *cache = NULL;
    if (icm__avro_schema_cache_new(&cache) != 0)
        abort();
    r = NULL;
    if (icm__manifest_list_reader_open_cached(&r, data, size, "fuzz.avro", NULL, cache) != 0)
        abort(); /* it opened a moment ago */
    long got = 0;
    int frc;
    icm__list_row_filter f = {skip_even, NULL, NULL, NULL};
    while ((frc = icm__manifest_list_reader_next_filtered(r, &f, &m)) == 0)
        got++;
    icm_manifest_list_reader_free(r);
    icm__avro_schema_cache_free(cache);
    if (rc == ICM_ITEROVER && (frc != ICM_ITEROVER || got != unclaimed))
        abort();
}

/* Count entries; -1 when decoding failed. */
static long read_manifest(const void *data, size_t size, uint64_t fields,
                          const icm_manifest_file *mf)
{
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.fields = fields;
    o.manifest = mf;
    icm_manifest_reader *r = NULL;
    if (icm_manifest_reader_open(&r, data, size, "fuzz.avro", &o) != 0)
        return -1;
    const icm_manifest_entry *e;
    long n = 0;
    int rc;
    while ((rc = icm_manifest_reader_next(r, &e)) == 0)
        n++;
    icm_manifest_reader_free(r);
    return rc == ICM_ITEROVER ? n : -1;
}

static void copy_manifest(const uint8_t *data, size_t size, long entries)
{
    icm_manifest_reader *r = NULL;
    if (icm_manifest_reader_open(&r, data, size, "fuzz.avro", NULL) != 0)
        abort(); /* it opened a moment ago */
    icm_manifest_writer_options o = {0};
    o.codec = ICM_AVRO_CODEC_NULL;
    o.compression_level = -1;
    icm_manifest_writer *w = NULL;
    int rc = icm_manifest_writer_new_like(&w, r, &o);
    const icm_manifest_entry *e;
    long added = 0;
    while (rc == 0 && (rc = icm_manifest_reader_next(r, &e)) == 0) {
        /* The writer refuses some decodable entries (e.g. v1 without snapshot id). */
        if (icm_manifest_writer_add(w, e) == 0)
            added++;
    }
    char *out = NULL;
    size_t out_len = 0;
    if (rc == ICM_ITEROVER && icm_manifest_writer_finish(w, &out, &out_len, NULL) == 0) {
        long again = read_manifest(out, out_len, 0, NULL);
        if (again != added || added > entries)
            abort(); /* a copy must read back whole */
    }
    icm_free(out);
    icm_manifest_writer_free(w);
    icm_manifest_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_list(data, size);
    long n = read_manifest(data, size, 0, NULL);
    icm_manifest_file mf = {0};
    mf.has_added_snapshot_id = true;
    mf.added_snapshot_id = 42;
    mf.sequence_number = 7;
    mf.has_first_row_id = true;
    mf.first_row_id = 100;
    (void)read_manifest(data, size, ICM_MANIFEST_FIELDS_EXPIRY, &mf);
    if (n >= 0)
        copy_manifest(data, size, n);
    return 0;
}
