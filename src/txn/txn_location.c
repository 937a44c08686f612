/*
 * txn/txn_location.c: where a transaction puts new data files, following Java's
 * LocationProviders and PyIceberg's table/locations.py:
 *  - data directory: `write.data.path` (trailing slashes dropped) or `<location>/data`;
 *  - plain layout: `<data>/<partition path>/<file>` (no partition: `<data>/<file>`);
 *  - object-storage layout (`write.object-storage.enabled=true`): the low 20 bits of
 *    murmur3_32 over the file name (prefixed by the partition path when
 *    `write.object-storage.partitioned-paths` is true, the default), as a zero-padded binary
 *    string split 4/4/4/8 into directories, go between the data directory and the name:
 *    `<data>/0101/0110/1001/10110010/<partition path>/<file>`; with partitioned paths off the
 *    hash is joined to the name with '-' and no partition path is used.
 */
#include <string.h>
#include <strings.h>

#include "txn/txn_internal.h"
#include "util/location.h"

static uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

uint32_t icm__murmur3_32(const void *data, size_t len)
{
    const uint8_t *p = data;
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = 0;
    size_t nblocks = len / 4;
    for (size_t i = 0; i < nblocks; i++) {
        uint32_t k = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                     (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    const uint8_t *tail = p + nblocks * 4;
    uint32_t k = 0;
    switch (len & 3) {
    case 3:
        k ^= (uint32_t)tail[2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)tail[1] << 8;
        /* fall through */
    case 1:
        k ^= tail[0];
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        break;
    default:
        break;
    }
    h ^= (uint32_t)len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

static bool property_bool(const icm_table_metadata *md, const char *key, bool dflt)
{
    const char *v = icm_table_metadata_property(md, key);
    if (v == NULL)
        return dflt;
    return strcasecmp(v, "true") == 0;
}

/* "bbbb/bbbb/bbbb/bbbbbbbb" from the low 20 bits of the hash of `name` (24 bytes + NUL). */
static void hash_dirs(const char *name, char out[24])
{
    uint32_t h = icm__murmur3_32(name, strlen(name)) & 0xFFFFFu;
    size_t o = 0;
    for (int bit = 19; bit >= 0; bit--) {
        out[o++] = (h >> bit) & 1u ? '1' : '0';
        if (bit == 16 || bit == 12 || bit == 8)
            out[o++] = '/';
    }
    out[o] = '\0';
}

static char *data_dir(const icm_table_metadata *md)
{
    const char *p = icm_table_metadata_property(md, "write.data.path");
    if (p != NULL && *p != '\0')
        return icm__strndup(p, icm__location_trim_len(p));
    return icm__location_join(icm_table_metadata_location(md), "data");
}

int icm__txn_data_location(const icm_table_metadata *md, const char *partition_path,
                           const char *file_name, char **out)
{
    *out = NULL;
    bool has_part = partition_path != NULL && *partition_path != '\0';
    char *dir = data_dir(md);
    if (dir == NULL)
        return ICM_ENOMEM;
    if (!icm__location_recordable(dir, icm_table_metadata_location(md))) { /* issue #16 */
        int rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, dir,
                                "new data files would be written and recorded below this "
                                "relative location (the table's location or write.data.path); "
                                "metadata never records a relative location");
        icm__free(dir);
        return rc;
    }
    char *rel;
    if (!property_bool(md, "write.object-storage.enabled", false)) {
        rel = has_part ? icm__sprintf("%s/%s", partition_path, file_name)
                       : icm__strdup(file_name);
    } else if (property_bool(md, "write.object-storage.partitioned-paths", true)) {
        char *named = has_part ? icm__sprintf("%s/%s", partition_path, file_name)
                               : icm__strdup(file_name);
        char dirs[24];
        if (named != NULL)
            hash_dirs(named, dirs);
        rel = named != NULL ? icm__sprintf("%s/%s", dirs, named) : NULL;
        icm__free(named);
    } else {
        char dirs[24];
        hash_dirs(file_name, dirs);
        rel = icm__sprintf("%s-%s", dirs, file_name);
    }
    char *loc = rel != NULL ? icm__location_join(dir, rel) : NULL;
    icm__free(rel);
    icm__free(dir);
    if (loc == NULL)
        return ICM_ENOMEM;
    *out = loc;
    return 0;
}
