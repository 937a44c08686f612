/*
 * tests/unit/parquet_footers.h: test support: Parquet footers (a FileMetaData in Thrift's
 * compact protocol) and whole Parquet files around them, and the Avro map<int, bytes> bytes of
 * a manifest entry's bounds, for tests that judge a file's footer against an entry
 * (test_verify_footer.c, test_verify_twins.c).
 *
 * A footer holds a schema (root and the given leaves), num_rows, and row groups whose column
 * chunks carry only their statistics (the reader skips every other field).
 */
#ifndef ICM_TEST_PARQUET_FOOTERS_H
#define ICM_TEST_PARQUET_FOOTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/manifest.h" /* icm_raw */

/* One column chunk's statistics (min or max NULL: not given). */
typedef struct icmt_chunk {
    const void *min, *max;
    size_t min_len, max_len;
    bool legacy; /* as the deprecated min/max (fields 2, 1) */
} icmt_chunk;

/* One leaf of the schema: its physical type, converted type (-1: none), field id (-1: none). */
typedef struct icmt_leaf {
    const char *name;
    int32_t type;
    int32_t converted;
    int32_t field_id;
} icmt_leaf;

/* `id` INT64 with field id 1, `s` UTF8 BYTE_ARRAY with field id 2. */
extern const icmt_leaf ICMT_ID_AND_S[2];

/* A FileMetaData of `leaves`, `rows` rows and `groups` row groups of chunks[g * n_leaves + k],
 * into out (room for ICMT_FOOTER_MAX bytes). Returns its length. */
#define ICMT_FOOTER_MAX 1024
size_t icmt_parquet_footer(uint8_t *out, const icmt_leaf *leaves, size_t n_leaves, int64_t rows,
                           size_t groups, const icmt_chunk *chunks);

/* A Parquet file of exactly `size` bytes into out: "PAR1", `fill` bytes, the footer, its
 * length and "PAR1" (size must leave room for them). */
void icmt_parquet_file(uint8_t *out, size_t size, uint8_t fill, const uint8_t *footer,
                       size_t footer_len);

/* A map<int, bytes> of an entry's bounds. */
typedef struct icmt_bounds {
    uint8_t b[256];
    size_t n;
} icmt_bounds;

/* `n` pairs of (keys[i], values[i] of lens[i] bytes), then the end block, into m. Returns
 * them (pointing into m). */
icm_raw icmt_bounds_map(icmt_bounds *m, size_t n, const int32_t *keys,
                        const void *const *values, const size_t *lens);

/* v as 8 little-endian bytes (Iceberg's single-value form of a long) into out; returns out. */
const uint8_t *icmt_le64(int64_t v, uint8_t out[8]);

/* The bounds of an entry of ICMT_ID_AND_S: id within [min_id, max_id], s within [min_s,
 * max_s]. */
typedef struct icmt_entry_bounds {
    icmt_bounds lo, up;
    icm_raw lower, upper;
    uint8_t a[8], b[8];
} icmt_entry_bounds;

void icmt_entry_bounds_of(icmt_entry_bounds *e, int64_t min_id, int64_t max_id,
                          const char *min_s, const char *max_s);

#endif /* ICM_TEST_PARQUET_FOOTERS_H */
