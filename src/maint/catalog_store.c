/*
 * maint/catalog_store.c: telling a catalog's own files from a table's (catalog_store.h).
 * Read-only: one 16-byte read per file asked about.
 */
#include <string.h>

#include "maint/catalog_store.h"
#include "util/util.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static const char *base_name(const char *loc)
{
    const char *slash = strrchr(loc, '/');
    return slash != NULL ? slash + 1 : loc;
}

bool icm__named_like_a_table_file(const char *loc)
{
    static const char *const exts[] = {".parquet", ".parq", ".orc", ".avro", ".puffin",
                                       ".stats", ".metadata.json", ".metadata.json.gz", ".crc"};
    const char *name = base_name(loc);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (ends_with(name, exts[i]))
            return true;
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

int icm__is_catalog_file(icm_fileio *io, const char *location, bool *out)
{
    *out = strcmp(base_name(location), ".pyiceberg.yaml") == 0;
    if (*out)
        return 0;
    unsigned char head[16];
    size_t got = 0;
    int rc = icm_fileio_read_range(io, location, 0, head, sizeof head, &got);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        icm_error_clear();
        return 0;
    }
    *out = icm__sqlite_store_bytes(head, got);
    return 0;
}
