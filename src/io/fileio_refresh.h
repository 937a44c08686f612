/*
 * io/fileio_refresh.h: storage credentials that the FileIO's builder renews (internal).
 *
 * A REST catalog vends short-lived storage credentials with each table it loads
 * (`s3.session-token-expires-at-ms`: 15 minutes to an hour is usual), and an expiry or sweep of
 * a large table runs longer. Whoever builds a table's FileIO from such a configuration hands it
 * a refresher: the S3 back end's credential provider calls it, through its refresh-before-expiry
 * machinery (io/s3/s3_creds.c), when the credentials are due, and takes the new ones from the
 * properties it returns. The refresher is called from whichever thread needs credentials (S3
 * requests run on many), one call at a time per back end, with no lock of the FileIO held.
 */
#ifndef ICM_IO_FILEIO_REFRESH_H
#define ICM_IO_FILEIO_REFRESH_H

#include <stddef.h>

#include "icemaint/fileio.h"

typedef struct icm__fileio_refresher {
    /* Fresh storage properties (PyIceberg's names: `s3.access-key-id`, `s3.secret-access-key`,
     * `s3.session-token`, `s3.session-token-expires-at-ms`, ...) into *out / *n_out, keys and
     * values owned by the caller (free them with icm__fileio_props_free). Returns 0 or a
     * negative code with the last error set; the message names the table and the catalog
     * and never carries a secret. */
    int (*refresh)(void *payload, icm_property **out, size_t *n_out);
    /* Releases the payload; called once, when the FileIO that holds the refresher is freed
     * (NULL: nothing to release). */
    void (*free_payload)(void *payload);
    void *payload;
    /* What the credentials are for, for messages: "table db.t of REST catalog 'prod'
     * (https://...)"; owned by the payload, so it lives as long as the refresher. */
    const char *what;
} icm__fileio_refresher;

/* Free `n` properties whose keys and values were allocated with icm__ functions. */
void icm__fileio_props_free(icm_property *props, size_t n);

/*
 * icm_fileio_for_table() whose S3 back end renews its credentials through `refresher` when
 * the table's properties carry them (`s3.access-key-id`...): the resolving FileIO owns the
 * refresher from here on, also when this fails (its payload is then released at once). A
 * back end registered with icm_fileio_register_scheme gets the properties only. Returns what
 * icm_fileio_for_table returns.
 */
int icm__fileio_for_table_refreshing(icm_fileio **out, const icm_fileio *base,
                                     const icm_property *table_props, size_t n_table_props,
                                     const icm__fileio_refresher *refresher);

/* icm_fileio_s3_new() with a refresher (borrowed: it must outlive the back end; NULL: none). */
int icm__fileio_s3_new_refreshing(icm_fileio **out, const icm_property *props, size_t n_props,
                                  const icm__fileio_refresher *refresher);

#endif /* ICM_IO_FILEIO_REFRESH_H */
