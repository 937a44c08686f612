/*
 * table/retention.h: metadata retention after a commit (retention.c), for table.c. Internal.
 */
#ifndef ICM_TABLE_RETENTION_H
#define ICM_TABLE_RETENTION_H

#include "icemaint/catalog.h"
#include "util/util.h"

/* What a commit that succeeded hands to retention. All borrowed. */
typedef struct icm__retention {
    icm_fileio *io;
    icm_catalog *catalog;        /* the table's catalog; NULL for a directory table */
    icm_table *table;            /* the table itself, holding `committed` */
    const icm_table_metadata *base;      /* the metadata the commit replaced */
    const icm_table_metadata *committed; /* the new metadata, now current */
    const char *committed_location;      /* its file */
} icm__retention;

/*
 * Java's deleteRemovedMetadataFiles under the rule of retention.c: when `committed` has
 * write.metadata.delete-after-commit.enabled=true, delete the metadata files of base's log
 * entries the commit pushed out of the log that pass every condition; each one kept gets a
 * warning (a new string pushed onto `warnings`, icm__free). Call only once the commit is
 * known to have succeeded. Never fails: a failure to check keeps the file (the last error is
 * left as it was).
 */
void icm__retention_run(const icm__retention *r, icm__ptrvec *warnings);

#endif /* ICM_TABLE_RETENTION_H */
