/*
 * io/fileio_internal.h: what the library's own callers of the FileIO wrappers may ask beyond
 * the public API (internal).
 */
#ifndef ICM_IO_FILEIO_INTERNAL_H
#define ICM_IO_FILEIO_INTERNAL_H

#include <stdbool.h>

/* Whether the last icm_fileio_delete on this thread found nothing to delete: the back end said
 * so with icm_fileio_note_missing (the source of icm_fileio_delete_existing). False when the
 * back end cannot tell. */
bool icm__fileio_delete_found_nothing(void);

#endif /* ICM_IO_FILEIO_INTERNAL_H */
