/*
 * fuzz/fuzz_metadata_places.c: the lenient reading of another table's places
 * (icm__metadata_places_lenient, src/spec/metadata_places.h) on arbitrary bytes (plain, gzip
 * or zstd), and the lenient JSON reader under it.
 *
 * It returns 0, ICM_EINVALID or ICM_ENOMEM, never crashes, and its result is always disposable.
 * Differential: when the strict reader (icm_table_metadata_parse) accepts the bytes, the
 * lenient reading agrees with it on the table-uuid, the location and each write path (a
 * disagreement would let the catalog guard compare another table's places wrongly).
 * Seeds: the checked-in corpus plus every fixture named *.metadata.json or *.json.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "icemaint/errors.h"
#include "icemaint/metadata.h"
#include "spec/metadata_places.h"

const char *const icm_fuzz_seed_suffixes[] = {".metadata.json", ".json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Both NULL (or empty), or equal. */
static bool same(const char *strict, const char *lenient)
{
    if (strict == NULL || strict[0] == '\0')
        return lenient == NULL;
    return lenient != NULL && strcmp(strict, lenient) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm__md_places p;
    int rc = icm__metadata_places_lenient((const char *)data, size, "fuzz", &p);
    if (rc != 0 && rc != ICM_EINVALID && rc != ICM_ENOMEM)
        abort();
    icm_error_clear();
    /* (an invalid byte reads as U+FFFD, three bytes: a string is at most 3 x the input) */
    for (size_t i = 0; rc == 0 && i < p.log.len; i++)
        if (p.log.items[i] == NULL || strlen(p.log.items[i]) > 3 * size)
            abort();
    icm_table_metadata *md = NULL;
    if (icm_table_metadata_parse(&md, (const char *)data, size, "fuzz") == 0) {
        static const char *const names[] = ICM__MD_PLACES_ROOT_NAMES;
        if (rc != 0)
            abort(); /* strict accepts what lenient refuses */
        const char *uuid = icm_table_metadata_uuid(md);
        if ((uuid == NULL) != (p.uuid == NULL) || (uuid != NULL && strcmp(uuid, p.uuid) != 0))
            abort();
        if (!same(icm_table_metadata_location(md), p.roots[0]))
            abort();
        for (size_t i = 1; i < ICM__MD_PLACES_N_ROOTS; i++)
            if (!same(icm_table_metadata_property(md, names[i]), p.roots[i]))
                abort();
        icm_table_metadata_free(md);
    }
    icm_error_clear();
    icm__md_places_dispose(&p);
    return 0;
}
