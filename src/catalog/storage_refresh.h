/*
 * catalog/storage_refresh.h: the refresher of a table FileIO built from what its catalog vends
 * (internal; io/fileio_refresh.h says what a refresher is). Only REST catalogs vend
 * credentials that expire (icm__rest_load_storage_config); a public catalog slot for other
 * back ends can replace the check for one when a second kind needs it.
 */
#ifndef ICM_CATALOG_STORAGE_REFRESH_H
#define ICM_CATALOG_STORAGE_REFRESH_H

#include "icemaint/sys/catalog.h"
#include "io/fileio_refresh.h"

/*
 * A refresher that asks `cat` for the storage configuration of table `id` whose files lie under
 * `location` (copied): out->refresh is NULL when the catalog renews no credentials (not a
 * REST catalog) or `location` is NULL. `cat` is borrowed: it must outlive the
 * FileIO that holds the refresher (a table's FileIO lives no longer than the table, which
 * borrows its catalog already). Returns 0 or ICM_ENOMEM (*out then empty).
 */
int icm__catalog_storage_refresher(icm_catalog *cat, const icm_table_ident *id,
                                   const char *location, icm__fileio_refresher *out);

#endif /* ICM_CATALOG_STORAGE_REFRESH_H */
