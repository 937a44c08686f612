/*
 * txn/txn_addfiles_schema.h: the check add-files makes before registering a Parquet file: does
 * the file's schema fit the table's current schema? Not installed.
 */
#ifndef ICM_TXN_TXN_ADDFILES_SCHEMA_H
#define ICM_TXN_TXN_ADDFILES_SCHEMA_H

#include "icemaint/metadata.h"
#include "parquet/parquet.h"

/*
 * Decide whether a Parquet file whose footer schema is `file` may be added to a table whose
 * metadata is `md`, by PyIceberg 0.12's add_files rule (pyiceberg/io/pyarrow.py
 * parquet_file_to_data_file: `_check_pyarrow_schema_compatible`, then
 * `data_file_statistics_from_parquet_metadata`; pyiceberg/schema.py `_check_schema_compatible`
 * and `promote`):
 *  - columns are matched by name within each struct (PyIceberg maps names to ids through the
 *    current schema when the file lacks ids, and looks up every column's statistics by its name
 *    path either way), so a file column the table lacks is refused; when every column (list
 *    elements, map keys and values included) has a Parquet field id, the matched column's id
 *    must also be the table's;
 *  - every required table column must be present and required in the file; an optional one
 *    may be missing;
 *  - a file type must equal the table type or promote to it: int -> long, float -> double,
 *    string <-> binary, decimal(P,S) -> decimal(P',S) with P <= P', fixed[16] -> uuid; and the
 *    physical type must be the one PyIceberg's statistics reader expects for the table type
 *    (INT32 for INT64, FLOAT for DOUBLE, FIXED_LEN_BYTE_ARRAY for any decimal also pass).
 * Stricter than PyIceberg where a reader could not read the file soundly (each refused with
 * its own message): unsigned 32/64-bit integers, INT96, legacy-only TIMESTAMP annotations,
 * annotations without a checked Iceberg reading (JSON, ENUM, FLOAT16, ...), list/map layouts
 * other than the standard three-level ones, list/map ids that differ from the table's, and
 * the name rule also for files without row groups (where PyIceberg reads no statistics).
 * `location` names the file in the error. Returns 0; ICM_EINVALID (one line: the column path
 * and why it does not fit); ICM_ENOMEM.
 */
int icm__txn_check_parquet_schema(const icm_table_metadata *md, const icm__parquet_schema *file,
                                  const char *location);

#endif /* ICM_TXN_TXN_ADDFILES_SCHEMA_H */
