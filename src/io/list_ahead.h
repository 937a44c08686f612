/*
 * io/list_ahead.h: a listing that runs ahead on threads of its own (internal).
 *
 * icm__fileio_list_ahead_batches() gives exactly what icm_fileio_list_flags() gives: the same
 * files in the same order, handed to `cb` on the CALLING thread (a batch of consecutive files at
 * a time), and the same return value (0, the callback's non-zero value, or the listing's error
 * with its last-error details). The difference is only in time: the listing (readdir, or an
 * object store's pages) runs on a second thread while the calling thread handles the files
 * already listed, so the two overlap.
 *
 * icm__fileio_list_ahead_ranges() cuts the listing into contiguous key ranges at `cuts` and
 * lists them at once, one thread each: on an object store, where a listing is a chain of pages
 * each a round trip, N ranges list about N times as fast. The files are the same as one
 * listing's, each exactly once; the order within a range is the listing's, ranges interleave.
 *
 * Memory is bounded and does not grow with the listing: at most LIST_AHEAD_BATCHES batches of
 * names wait for the caller, plus one being filled per range (list_ahead.c). When the callback
 * stops the listing (non-zero), the listing threads stop at their next file and are joined
 * before this returns; no callback runs after the stop. When a range's listing fails, the other
 * ranges stop, the files already listed are still handed over, then the error is returned. When
 * the threads cannot be started, the whole listing runs on the calling thread.
 *
 * The FileIO must allow calls from several threads (icemaint/fileio.h: every back end here
 * does); each range is one FileIO listing call (icm_fileio_list_opts).
 */
#ifndef ICM_IO_LIST_AHEAD_H
#define ICM_IO_LIST_AHEAD_H

#include "icemaint/fileio.h"

/* `cb` gets consecutive files of one range in listing order (at most 4,096 at once; `files`
 * borrowed for the call), so it can look ahead within a batch. A non-zero return stops the
 * listing and is returned. Without a second thread the batches hold one file each. */
typedef int (*icm__list_batch_cb)(const icm_file_info *files, size_t n, void *payload);
int icm__fileio_list_ahead_batches(icm_fileio *io, const char *prefix, unsigned flags,
                                   icm__list_batch_cb cb, void *payload);

/* The listing cut at cuts[0..n_cuts) (full locations in the form of `prefix`, strictly
 * increasing in byte order; borrowed): range 0 holds the files up to and including cuts[0],
 * range k those after cuts[k-1] up to and including cuts[k], the last those after the last cut
 * (at most ICM__LIST_RANGES_MAX ranges). Returns as icm__fileio_list_ahead_batches, or
 * ICM_EINVALID when the cuts are not strictly increasing or too many. */
#define ICM__LIST_RANGES_MAX 64
int icm__fileio_list_ahead_ranges(icm_fileio *io, const char *prefix, unsigned flags,
                                  const char *const *cuts, size_t n_cuts,
                                  icm__list_batch_cb cb, void *payload);

/* icm__fileio_list_ahead_ranges within a span: only the files after `after` up to and
 * including `upto` (full locations in the form of `prefix`; NULL: no bound; borrowed), the
 * cuts strictly inside it (ICM_EINVALID otherwise). A sharded sweep lists its range so. */
int icm__fileio_list_ahead_span(icm_fileio *io, const char *prefix, unsigned flags,
                                const char *after, const char *upto, const char *const *cuts,
                                size_t n_cuts, icm__list_batch_cb cb, void *payload);
#endif /* ICM_IO_LIST_AHEAD_H */
