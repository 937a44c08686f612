/*
 * parquet/parquet.h: the little of Apache Parquet that add-files needs: check that an object is
 * a Parquet file and read the row count from its footer (FileMetaData.num_rows).
 *
 * Layout (Parquet format spec, "File format"): "PAR1" <column chunks...> <FileMetaData>
 * <4-byte little-endian footer length> "PAR1". FileMetaData is a Thrift struct in the compact
 * protocol; field 3 is `num_rows` (i64). Only that field is decoded; everything else is skipped
 * with bounds checks, so a corrupt or hostile footer yields ICM_EINVALID, never a crash.
 * Not installed.
 */
#ifndef ICM_PARQUET_PARQUET_H
#define ICM_PARQUET_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "icemaint/fileio.h"

/* Largest footer we read: footers are small (kilobytes to a few MiB); refuse absurd lengths. */
#define ICM__PARQUET_MAX_FOOTER_BYTES ((size_t)64 << 20)

/*
 * Decode `num_rows` from a serialised FileMetaData (the footer bytes without length and magic).
 * `location` names the file in errors. Returns 0, ICM_EINVALID (malformed, num_rows missing or
 * negative).
 */
int icm__parquet_footer_num_rows(const uint8_t *footer, size_t len, const char *location,
                                 int64_t *out_num_rows);

/*
 * Stat `location` and read its footer through `io`: *out_size_bytes is the object size and
 * *out_num_rows the footer's row count. Returns 0; ICM_ENOTFOUND; ICM_EIO; ICM_ENOMEM;
 * ICM_EINVALID ("not a Parquet file": too short or missing "PAR1" magic at either end, footer
 * length out of range, malformed footer).
 */
int icm__parquet_read_num_rows(icm_fileio *io, const char *location, int64_t *out_num_rows,
                               int64_t *out_size_bytes);

#endif /* ICM_PARQUET_PARQUET_H */
