/*
 * io/list_ahead.h: a listing that runs ahead on a thread of its own (internal).
 *
 * icm__fileio_list_ahead_batches() gives exactly what icm_fileio_list_flags() gives: the same
 * files in the same order, handed to `cb` on the CALLING thread (a batch of consecutive files at
 * a time), and the same return value (0, the callback's non-zero value, or the listing's error
 * with its last-error details). The difference is only in time: the listing (readdir, or an object store's pages) runs on a second thread
 * while the calling thread handles the files already listed, so the two overlap.
 *
 * Memory is bounded and does not grow with the listing: at most LIST_AHEAD_BATCHES batches of
 * names are in flight (list_ahead.c). When the callback stops the listing (non-zero), the
 * listing thread stops at its next file and is joined before this returns; no callback runs
 * after the stop. When no thread can be started, the listing runs on the calling thread.
 *
 * The FileIO must allow calls from several threads (icemaint/fileio.h: every back end here
 * does); the listing itself is one FileIO call, as before.
 */
#ifndef ICM_IO_LIST_AHEAD_H
#define ICM_IO_LIST_AHEAD_H

#include "icemaint/fileio.h"

/* `cb` gets consecutive files in listing order (at most 4,096 at once; `files` borrowed for the
 * call), so it can look ahead within a batch. A non-zero return stops the listing and is
 * returned. Without a second thread the batches hold one file each. */
typedef int (*icm__list_batch_cb)(const icm_file_info *files, size_t n, void *payload);
int icm__fileio_list_ahead_batches(icm_fileio *io, const char *prefix, unsigned flags,
                                   icm__list_batch_cb cb, void *payload);

#endif /* ICM_IO_LIST_AHEAD_H */
