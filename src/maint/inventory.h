/*
 * maint/inventory.h: an S3 Inventory report as a stream of objects (internal).
 *
 * An S3 Inventory report is a `manifest.json` in the destination bucket, at
 * `<prefix>/<source bucket>/<config ID>/<YYYY-MM-DDTHH-MMZ>/manifest.json`, naming its data files
 * (`<prefix>/<source bucket>/<config ID>/data/<uuid>.csv.gz`, each with its size and the MD5 of
 * its bytes). The manifest's fields used here: `sourceBucket` (the bucket listed),
 * `destinationBucket` (an ARN, `arn:aws:s3:::NAME`, or a bare name), `creationTimestamp` (ms
 * since the epoch, as a JSON string or number: when the scan began), `fileFormat` (`CSV`, `ORC`
 * or `Parquet`), `fileSchema` (for CSV the column names, comma-separated: `Bucket, Key, Size,
 * LastModifiedDate, ...`) and `files[]` (`key`, `size`, `MD5checksum`).
 *
 * A CSV data file is gzip; each line one object version, no header, every field usually quoted
 * (`"bucket","key","123","2026-11-30T08:00:00.000Z"`). The Key field is URL-encoded: `%XX` is a
 * byte of the UTF-8 name and `+` is a space (a `+` of the name is written `%2B`).
 * LastModifiedDate is ISO 8601 UTC with milliseconds. With all versions listed, rows with
 * IsLatest false or IsDeleteMarker true are no object one can read under the key now: skipped.
 *
 * ORC and Parquet reports are refused (ICM_EUNSUPPORTED): Debian 12 packages no Parquet or
 * ORC reader library for C (no libarrow-dev, libparquet-dev or liborc-dev in its archive).
 *
 * The reader is a plain row iterator (icm__inventory_next: key, size, mtime) so that a key
 * range filter can wrap it. Memory: the manifest plus one line and two 256 KiB buffers; a data
 * file is never held whole (100M-row reports stream). A data file whose MD5 or size differs
 * from the manifest's, or whose gzip stream is cut short, fails at its end, after its rows were
 * returned: the caller must act on rows only once the whole report was read (the sweep plans
 * first and deletes after).
 */
#ifndef ICM_MAINT_INVENTORY_H
#define ICM_MAINT_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/fileio.h"
#include "util/util.h"

typedef enum icm__inventory_format {
    ICM__INVENTORY_CSV = 0,
    ICM__INVENTORY_ORC = 1,
    ICM__INVENTORY_PARQUET = 2
} icm__inventory_format;

/* One data file the manifest names. */
typedef struct icm__inventory_data_file {
    char *key;           /* its key in the destination bucket */
    int64_t size_bytes;  /* -1: not given */
    char md5[33];        /* lower-case hex of the MD5 of its bytes; "" when not given */
} icm__inventory_data_file;

/* Column positions in a CSV row (from fileSchema); -1: the report has no such column. */
typedef struct icm__inventory_columns {
    int bucket, key, size, last_modified, is_latest, is_delete_marker;
    size_t count; /* columns per row */
} icm__inventory_columns;

typedef struct icm__inventory_manifest {
    char *source_bucket;
    char *destination_bucket;  /* the bucket name (an ARN's `arn:aws:s3:::` taken off) */
    int64_t creation_ms;       /* creationTimestamp */
    icm__inventory_format format;
    icm__inventory_columns columns; /* CSV only */
    icm__inventory_data_file *files;
    size_t n_files;
} icm__inventory_manifest;

/* Parse manifest.json (`json[0..len)`; `name` for messages). CSV needs a fileSchema with a Key
 * column; ORC and Parquet parse (their schema is not read) and are refused by
 * icm__inventory_open. @return 0; ICM_EINVALID (last error names `name` and the field);
 * ICM_ENOMEM. On failure *out holds nothing to free. */
int icm__inventory_manifest_parse(icm__inventory_manifest *out, const char *name,
                                  const char *json, size_t len);
void icm__inventory_manifest_clear(icm__inventory_manifest *m);

/* One object of the report. `key` is decoded, NUL-terminated and borrowed until the next call
 * (it may hold any byte but NUL). */
typedef struct icm__inventory_entry {
    const char *key;
    size_t key_len;
    int64_t size_bytes; /* -1: no Size column (or empty) */
    int64_t mtime_ms;   /* -1: no LastModifiedDate column (or empty) */
} icm__inventory_entry;

/*
 * One CSV line (without its line break; `line` is modified) into *out, its key decoded into
 * `key_buf`. *skip: a noncurrent version or delete marker (no entry). The Bucket column, when
 * present, must be `source_bucket`. @return 0; ICM_EINVALID with *why a static reason (no last
 * error set: the caller names file and line); ICM_ENOMEM.
 */
int icm__inventory_csv_row(icm__inventory_entry *out, bool *skip, const icm__inventory_manifest *m,
                           char *line, size_t len, icm__buf *key_buf, const char **why);

/* URL-decode `s[0..n)` (`%XX` a byte, `+` a space) into `out` (cleared first).
 * @return 0; ICM_EINVALID (a bad escape, or a NUL byte); ICM_ENOMEM. */
int icm__inventory_url_decode(icm__buf *out, const char *s, size_t n);

typedef struct icm__inventory_reader icm__inventory_reader;

/*
 * Open the report whose manifest is at `manifest_location`: an object-store URI read through
 * `io` (its data files are `<scheme>://<destinationBucket>/<key>`), or a local path read
 * directly (a copy of the destination bucket, e.g. by `aws s3 sync`: each data file is `key`
 * below the nearest folder above the manifest that holds it). Reads and checks the manifest
 * only. @return 0; ICM_ENOTFOUND, ICM_EIO, ... (reading it); ICM_EINVALID (malformed);
 * ICM_EUNSUPPORTED (ORC, Parquet); ICM_ENOMEM.
 */
int icm__inventory_open(icm__inventory_reader **out, icm_fileio *io,
                        const char *manifest_location);
const icm__inventory_manifest *icm__inventory_manifest_of(const icm__inventory_reader *r);

/*
 * The next object (*end: none left). Data files are read in the manifest's order, each one's
 * MD5 and size checked at its end. @return 0; ICM_EINVALID (a malformed line, a truncated or
 * corrupt gzip stream, an MD5 or size mismatch: the message names the data file); the read's
 * errors (ICM_ENOTFOUND: a data file is missing); ICM_ENOMEM. After an error, stop.
 */
int icm__inventory_next(icm__inventory_reader *r, icm__inventory_entry *out, bool *end);
/* Objects returned so far and data files read whole. */
uint64_t icm__inventory_rows(const icm__inventory_reader *r);
void icm__inventory_close(icm__inventory_reader *r);

#endif /* ICM_MAINT_INVENTORY_H */
