/*
 * puffin/puffin.h: the footer of a Puffin file, the blobs it lists (internal).
 *
 * Layout (Iceberg format/puffin-spec.md, "File structure", "Footer structure"):
 *   Magic Blob1 ... BlobN Footer, Footer = Magic FooterPayload FooterPayloadSize Flags Magic,
 * Magic the four bytes "PFA1", FooterPayloadSize and Flags 4-byte little-endian integers (flag
 * bit 0 of byte 0: the payload is LZ4-compressed), FooterPayload UTF-8 JSON, a FileMetadata
 * object: {"blobs": [BlobMetadata...], "properties": {...}}. A BlobMetadata gives `type`,
 * `offset` and `length` (bytes, as stored), and optional `properties` whose values are strings;
 * a deletion vector's blob (`deletion-vector-v1`) has `referenced-data-file` (the data file's
 * location as table metadata writes it) and `cardinality` (deleted rows, decimal digits).
 *
 * Expiry's twin check reads a planned deletion vector file's footer to learn whether a retained
 * entry may describe one of its blobs (maint/verify_twins.c). What is read is checked: both
 * magics, the payload inside the file, the JSON strict (spec/json_parse.c), every blob's offset
 * and length integers with the blob lying between the leading magic and the footer. A
 * compressed payload is not read (ICM_EUNSUPPORTED: no writer compresses it and the codec is
 * not linked). Only reads storage. Not installed.
 */
#ifndef ICM_PUFFIN_PUFFIN_H
#define ICM_PUFFIN_PUFFIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/fileio.h"

/* The footer's fixed tail: FooterPayloadSize, Flags, Magic. */
#define ICM__PUFFIN_TAIL_BYTES 12
/* Largest footer payload read: a footer lists a few hundred bytes per blob; refuse absurd
 * sizes before allocating. */
#define ICM__PUFFIN_MAX_PAYLOAD_BYTES ((size_t)64 << 20)

typedef struct icm__puffin_blob {
    int64_t offset_bytes, length_bytes; /* where the blob's bytes lie in the file */
    /* `cardinality` property: -1 when absent or not a non-negative decimal integer */
    int64_t cardinality;
    /* `referenced-data-file` property (owned); NULL when absent or not a string */
    char *referenced_data_file;
} icm__puffin_blob;

/* A footer's blobs, sorted by offset (then length). */
typedef struct icm__puffin_footer {
    icm__puffin_blob *blobs;
    size_t count;
} icm__puffin_footer;

#define ICM__PUFFIN_FOOTER_INIT {NULL, 0}

/*
 * From a file's last ICM__PUFFIN_TAIL_BYTES bytes (`tail`) and its size, how many bytes its
 * footer takes at its end (leading magic to trailing magic). `location` names the file in
 * errors. Returns 0; ICM_EINVALID (no trailing magic, a payload size that does not fit the file
 * or is over ICM__PUFFIN_MAX_PAYLOAD_BYTES, reserved flag bits set); ICM_EUNSUPPORTED (a
 * compressed payload).
 */
int icm__puffin_footer_size(const uint8_t tail[ICM__PUFFIN_TAIL_BYTES], int64_t file_size_bytes,
                            const char *location, size_t *out_bytes);

/*
 * Decode the footer `footer` (its `len` bytes, as icm__puffin_footer_size measured them, the last
 * bytes of a file of `file_size_bytes`) into *out (cleared first; the caller disposes it, also
 * on failure). Returns 0; ICM_EINVALID (a magic missing, the payload not JSON or not a
 * FileMetadata, a blob without integer offset and length or lying outside the blobs' region:
 * the message names the blob); ICM_EUNSUPPORTED (compressed); ICM_ENOMEM.
 */
int icm__puffin_footer_decode(const uint8_t *footer, size_t len, int64_t file_size_bytes,
                              const char *location, icm__puffin_footer *out);

/*
 * Read the footer of the Puffin file `location`, `file_size_bytes` long (its size as the caller
 * knows it; -1: stat'ed), through `io`: one ranged read of its last bytes, a second when the
 * footer is longer. Returns as icm__puffin_footer_decode, and the FileIO's errors
 * (ICM_ENOTFOUND: no such file); ICM_EINVALID also when the file is shorter than its size.
 */
int icm__puffin_read_footer(icm_fileio *io, const char *location, int64_t file_size_bytes,
                            icm__puffin_footer *out);

/* The first blob at `offset_bytes` (NULL when none); more with the same offset follow it. */
const icm__puffin_blob *icm__puffin_footer_find(const icm__puffin_footer *f, int64_t offset_bytes);

void icm__puffin_footer_dispose(icm__puffin_footer *f);

#endif /* ICM_PUFFIN_PUFFIN_H */
