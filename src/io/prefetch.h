/*
 * io/prefetch.h: whole objects fetched many at a time, ahead of the thread that decodes them
 * (internal).
 *
 * Planning reads a sequence of files known in advance (a table's manifest lists, then its
 * manifests) and decodes them in order. On local disk a read costs microseconds and the
 * decoding rings of manifest/bulk_reader.c overlap the two well; on an object store each read
 * is a request of tens of milliseconds, so reading one or two at a time leaves the planner
 * waiting on the network. A prefetcher keeps up to `in_flight` reads going at once, on worker
 * threads (the back end's own connection pool bounds the requests on the wire and shares its
 * connections), at most `window` objects beyond the lowest one not yet taken, so memory is
 * bounded by the window, never by the number of files. Reads go through the public FileIO
 * wrappers with the same results and errors as reading each file on the caller's thread.
 */
#ifndef ICM_IO_PREFETCH_H
#define ICM_IO_PREFETCH_H

#include <stddef.h>

#include "icemaint/fileio.h"

/* Reads at once for locations that are not local files, and objects held ahead at most. 32
 * in flight at ~20 ms a request reads ~1,600 objects a second, more than one core decodes
 * manifests of typical size; 64 held bounds memory at 64 manifests (8 MiB each at most in
 * common writers: 512 MiB in the worst case, a few MiB in the usual one). */
#define ICM__PREFETCH_IN_FLIGHT 32u
#define ICM__PREFETCH_WINDOW 64u

typedef struct icm__prefetch icm__prefetch;

/*
 * Start fetching locations[0..n) (borrowed until finish, as is io) with up to `in_flight`
 * reads at once and at most `window` (>= in_flight) objects fetched and not yet taken beyond
 * the lowest index not yet taken. Nothing is started (take() then reads on the caller's thread)
 * when in_flight < 2, n < 2, or no thread can be created. Returns 0 or ICM_ENOMEM.
 */
int icm__prefetch_start(icm__prefetch **out, icm_fileio *io, const char *const *locations,
                        size_t n, unsigned in_flight, unsigned window);

/* Whether to prefetch reads of `location` through io: not for local files (the decoding ring
 * already overlaps them; extra threads would only compete for the two cores). */
bool icm__prefetch_worthwhile(icm_fileio *io, const char *location);

/*
 * Object i (each taken once; in any order, though taking them roughly in order keeps the
 * window moving): waits until it is fetched, then hands its bytes to the caller (*data, icm_free;
 * NUL-terminated beyond *len, as icm_fileio_read). On failure returns the read's code and makes
 * its error details the calling thread's last error.
 */
int icm__prefetch_take(icm__prefetch *p, size_t i, char **data, size_t *len);

/* Stop (reads in progress finish first), join, free what was never taken. NULL is fine. */
void icm__prefetch_finish(icm__prefetch *p);

#endif /* ICM_IO_PREFETCH_H */
