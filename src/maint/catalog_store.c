/*
 * maint/catalog_store.c: telling a catalog's own files from a table's (catalog_store.h).
 * Read-only: one 16-byte read per file asked about.
 */
#include <string.h>

#include "catalog/catalog_internal.h"
#include "maint/catalog_store.h"
#include "util/util.h"

bool icm__named_like_a_table_file(const char *loc)
{
    /* One extension compare per listed file: the sweep asks this of every name it lists. */
    static const char *const exts[] = {".parquet", ".parq", ".orc", ".avro", ".puffin",
                                       ".stats", ".crc"};
    const char *name = icm__basename(loc);
    const char *dot = strrchr(name, '.');
    if (dot == NULL)
        return false;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (strcmp(dot, exts[i]) == 0)
            return true;
    if (strcmp(dot, ".json") == 0)
        return icm__str_ends_with(name, ".metadata.json");
    if (strcmp(dot, ".gz") == 0)
        return icm__str_ends_with(name, ".metadata.json.gz");
    return strcmp(name, "version-hint.text") == 0;
}

bool icm__sqlite_store_bytes(const unsigned char *b, size_t n)
{
    static const unsigned char db[16] = "SQLite format 3";
    static const unsigned char journal[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
    if (n >= sizeof db && memcmp(b, db, sizeof db) == 0)
        return true;
    if (n >= sizeof journal && memcmp(b, journal, sizeof journal) == 0)
        return true;
    return n >= 4 && b[0] == 0x37 && b[1] == 0x7f && b[2] == 0x06 && (b[3] & 0xfe) == 0x82;
}

int icm__catalog_file_kind(icm_fileio *io, const char *location, icm__catalog_file *out)
{
    *out = ICM__CATALOG_FILE_NONE;
    if (strcmp(icm__basename(location), ".pyiceberg.yaml") == 0) {
        *out = ICM__CATALOG_FILE_CONFIG;
        return 0;
    }
    unsigned char head[ICM__CATALOG_HEAD_BYTES];
    size_t got = 0;
    int rc = icm_fileio_read_range(&got, io, location, 0, head, sizeof head);
    return icm__catalog_file_kind_of_head(io, location, rc, head, got, out);
}

int icm__catalog_file_kind_of_head(icm_fileio *io, const char *location, int read_rc,
                                   const unsigned char *head, size_t got,
                                   icm__catalog_file *out)
{
    *out = ICM__CATALOG_FILE_NONE;
    if (strcmp(icm__basename(location), ".pyiceberg.yaml") == 0) {
        *out = ICM__CATALOG_FILE_CONFIG;
        return 0;
    }
    int rc = read_rc;
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        if (rc != ICM_ENOTFOUND)
            *out = ICM__CATALOG_FILE_UNREADABLE;
        icm_error_clear();
        return 0;
    }
    if (icm__sqlite_store_bytes(head, got)) {
        *out = got == ICM__CATALOG_HEAD_BYTES && memcmp(head, "SQLite format 3", 16) == 0
                   ? ICM__CATALOG_FILE_SQLITE_DATABASE
                   : ICM__CATALOG_FILE_SQLITE_JOURNAL;
        return 0;
    }
    /* A -shm has no header of its own: it is one when a SQLite database stands beside it
     * under the name without the suffix (a -wal or -journal too, when it is still empty). */
    static const char *const sides[] = {"-shm", "-wal", "-journal"};
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        if (!icm__str_ends_with(location, sides[i]))
            continue;
        char *db = icm__strndup(location, strlen(location) - strlen(sides[i]));
        if (db == NULL)
            return ICM_ENOMEM;
        icm__catalog_file beside;
        rc = icm__catalog_file_kind(io, db, &beside);
        icm__free(db);
        if (rc == 0 && beside == ICM__CATALOG_FILE_SQLITE_DATABASE)
            *out = ICM__CATALOG_FILE_SQLITE_JOURNAL;
        else if (rc == 0 && beside == ICM__CATALOG_FILE_UNREADABLE)
            *out = ICM__CATALOG_FILE_UNREADABLE;
        return rc;
    }
    return 0;
}
