/*
 * maint/catalog_store.h: telling a catalog's own files from a table's (issue #16, class 2),
 * for the orphan sweep and expiry (internal).
 */
#ifndef ICM_MAINT_CATALOG_STORE_H
#define ICM_MAINT_CATALOG_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "icemaint/fileio.h"

/* Whether `loc` is named as the files Iceberg writers write are (by extension: `.parquet`,
 * `.parq`, `.orc`, `.avro`, `.puffin`, `.stats`, `*.metadata.json[.gz]`,
 * `version-hint.text`), or as the Hadoop `.crc` companions beside them. */
bool icm__named_like_a_table_file(const char *loc);

/* Whether the first `n` bytes of a file are those of a SQLite database, its write-ahead log or
 * its rollback journal (sqlite.org/fileformat2.html: "SQLite format 3\0"; WAL magic 0x377f0682
 * or 0x377f0683, big-endian; journal magic d9 d5 05 f9 20 a1 63 d7). */
bool icm__sqlite_store_bytes(const unsigned char *b, size_t n);

typedef enum icm__catalog_file {
    ICM__CATALOG_FILE_NONE = 0,
    ICM__CATALOG_FILE_SQLITE_DATABASE, /* "SQLite format 3\0" */
    ICM__CATALOG_FILE_SQLITE_JOURNAL,  /* its WAL, rollback journal or -shm (by its header,
                                          or a `-shm`/`-wal`/`-journal` name beside one) */
    ICM__CATALOG_FILE_CONFIG,          /* a .pyiceberg.yaml (by name) */
    ICM__CATALOG_FILE_UNREADABLE       /* its first bytes could not be read (other than for
                                          being gone): it may be any of these, so it is
                                          treated as one (adversary round 16, F2) */
} icm__catalog_file;

/* Whether the file at `location` is one a catalog keeps, and which (its first 16 bytes read,
 * unless its name says .pyiceberg.yaml; for a name ending -shm/-wal/-journal with no SQLite
 * header, also those of the file without the suffix). A file that is gone is none; one whose
 * read fails otherwise (permissions, a store's errors after its retries) is UNREADABLE, never
 * none: a delete may still succeed where the read failed. Returns 0 or ICM_ENOMEM. */
int icm__catalog_file_kind(icm_fileio *io, const char *location, icm__catalog_file *out);

/* The bytes icm__catalog_file_kind reads at the start of a file. */
#define ICM__CATALOG_HEAD_BYTES 16

/* icm__catalog_file_kind once the first bytes were read by the caller (many at a time, say):
 * read_rc and head[0, got) are what icm_fileio_read_range(io, location, 0, head,
 * ICM__CATALOG_HEAD_BYTES) gave (the thread's last error then its error). Reads only what
 * icm__catalog_file_kind would read after that (a -shm's database beside it). Returns 0 or
 * ICM_ENOMEM. */
int icm__catalog_file_kind_of_head(icm_fileio *io, const char *location, int read_rc,
                                   const unsigned char *head, size_t got,
                                   icm__catalog_file *out);

#endif /* ICM_MAINT_CATALOG_STORE_H */
