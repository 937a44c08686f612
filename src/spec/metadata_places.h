/*
 * spec/metadata_places.h: where a metadata file says its table's files go, read leniently
 * (internal). For another table's metadata that the strict reader (icm_table_metadata_parse)
 * rejects but other tools read: a ref to a snapshot no longer there, a property value that is
 * not a string, a duplicate key, NaN. Its places still matter: its files must not be taken
 * for this table's orphans.
 */
#ifndef ICM_SPEC_METADATA_PLACES_H
#define ICM_SPEC_METADATA_PLACES_H

#include <stddef.h>

#include "util/util.h"

#define ICM__MD_PLACES_N_ROOTS 5

/* The names of icm__md_places.roots: the location, then the properties naming where the table
 * writes (write.data.path, write.metadata.path, and Java's legacy data paths
 * write.object-storage.path and write.folder-storage.path, which its LocationProviders still
 * honour). The order of icm__other_table.roots and of icm__peeked.roots. */
#define ICM__MD_PLACES_ROOT_NAMES                                                              \
    {"location", "write.data.path", "write.metadata.path", "write.object-storage.path",        \
     "write.folder-storage.path"}

typedef struct icm__md_places {
    char *uuid;                          /* table-uuid; NULL when none */
    char *roots[ICM__MD_PLACES_N_ROOTS]; /* ICM__MD_PLACES_ROOT_NAMES; NULL when unset, empty
                                            or not a string */
    icm__ptrvec log;                     /* (char *) the metadata-file of each metadata-log
                                            entry that names one */
} icm__md_places;

/*
 * What the metadata file content `data` (`len` bytes, gzip or zstd inflated first) says of
 * where its table's files go, from its JSON alone: strict JSON first, else lenient JSON
 * (icm__json_parse_lenient). Nothing of the metadata is validated beyond that. When duplicate
 * keys make the readers disagree (first or last wins) on the uuid or a root, that is an error
 * (which one a reader takes cannot be told); the metadata-logs of both readings are taken.
 * `location` names the file in messages. *out is zeroed first; dispose it whatever the result.
 * Returns 0; ICM_EINVALID (not JSON even leniently, not a JSON object, a corrupt compressed
 * stream, or disagreeing duplicates: the last error says why, in one line); ICM_ENOMEM.
 */
int icm__metadata_places_lenient(const char *data, size_t len, const char *location,
                                 icm__md_places *out);

void icm__md_places_dispose(icm__md_places *p);

#endif /* ICM_SPEC_METADATA_PLACES_H */
