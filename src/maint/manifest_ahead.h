/*
 * maint/manifest_ahead.h: manifest lists and manifests read ahead on a second thread, used in
 * order on the calling thread (internal; the reachability walk's engine, reach_walk.c).
 *
 * Both work on a sequence known in advance, in order, at most a few files ahead of the caller
 * (util/ahead.h), so memory does not grow with the number of files. Files are started in the
 * caller's order, by the helper thread or, when it would otherwise wait, by the caller itself,
 * so two may be read at once. The caller takes file 0, 1, 2, ... in order (get), and hands
 * each back (release) before taking the next. When no thread can be started, each file is read
 * on the calling thread when it is taken: the same results, without the overlap.
 *
 *  - Manifest lists (icm__lists_ahead): each list's bytes, with its Avro blocks decompressed
 *    ahead (icm__avro_inflate_ahead); the caller decodes the rows itself, since which rows it
 *    needs depends on the lists before.
 *  - Manifests (icm__manifest_ahead): each manifest's live entries (ADDED and EXISTING: a
 *    DELETED entry protects nothing), as the keep-set walk reports them.
 *
 * Read-only: the only storage calls are reads.
 */
#ifndef ICM_MAINT_MANIFEST_AHEAD_H
#define ICM_MAINT_MANIFEST_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "avro/avro.h"
#include "maint/keepset.h"

/* Files done ahead at most (tests read these). With a few, the helper sat idle whenever the
 * caller took long over one file (it had filled the window); 16 measured 3-8% faster than 8
 * lists and 4 manifests, for a few MiB more held at once (a list's blocks inflated ahead are
 * capped by ICM__AVRO_INFLATE_AHEAD_BYTES). */
#define ICM__LISTS_AHEAD_WINDOW 16
#define ICM__MANIFESTS_AHEAD_WINDOW 16

/* ---- manifest lists ---- */

/* A manifest list read ahead: its bytes, or why they could not be read. */
typedef struct icm__ahead_list {
    const char *data;
    size_t len;
    const icm__avro_inflated *inflated; /* blocks decompressed ahead (maybe not all) */
    int rc;                             /* 0, or the read's error code */
} icm__ahead_list;

typedef struct icm__lists_ahead icm__lists_ahead;

/* Start reading locations[0..n) (borrowed). Returns 0 or ICM_ENOMEM. */
int icm__lists_ahead_start(icm__lists_ahead **out, icm_fileio *io, const char *const *locations,
                           size_t n);
/* List i: the one after the last released (waits for it). Borrowed until release(a, i). */
const icm__ahead_list *icm__lists_ahead_get(icm__lists_ahead *a, size_t i);
/* When list i (taken, not released) has rc != 0: make its read's error details the calling
 * thread's last error. */
void icm__lists_ahead_raise(icm__lists_ahead *a, size_t i);
void icm__lists_ahead_release(icm__lists_ahead *a, size_t i);

/* A list's buffers, taken from the ring: its bytes and the blocks inflated ahead (owned). */
typedef struct icm__list_hold {
    char *data;
    size_t len;
    icm__avro_inflated inflated;
    size_t last_block; /* where the last contains() found its bytes (a hint) */
} icm__list_hold;
/* Take list i's buffers (taken, not released, rc == 0): *out owns them from now on, and they
 * stay where they are, so pointers into them stay valid; release(a, i) is still due. */
void icm__lists_ahead_take(icm__lists_ahead *a, size_t i, icm__list_hold *out);
/* Whether [p, p + len) lies within the held bytes or one held block. */
bool icm__list_hold_contains(icm__list_hold *h, const uint8_t *p, size_t len);
/* Free what is held (the hold is then empty). NULL is fine. */
void icm__list_hold_dispose(icm__list_hold *h);
/* Stop, join, free. NULL is fine. */
void icm__lists_ahead_finish(icm__lists_ahead *a);

/* ---- manifests ---- */

/* One live entry of a decoded manifest. */
typedef struct icm__ahead_entry {
    size_t location_offset;  /* into icm__ahead_manifest.locations (NUL-terminated) */
    int64_t size_bytes;
    icm__file_kind kind;
} icm__ahead_entry;

/* A decoded manifest: its live entries in manifest order, up to the first read error. */
typedef struct icm__ahead_manifest {
    const char *locations;
    const icm__ahead_entry *entries;
    size_t count;
    size_t entries_read; /* entries decoded, every status */
    int rc;              /* 0, or why the manifest could not be read (whole or in part) */
} icm__ahead_manifest;

typedef struct icm__manifest_ahead icm__manifest_ahead;

/*
 * Start decoding refs[0..n) (borrowed, as are `schemas`, used by the decoding threads until
 * icm__manifest_ahead_finish, and `filter_ctx`). `format_version`: the table's, for manifests
 * without one in their header (v1 embedded manifests always read as v1). `filter` (NULL: none)
 * decides which live entries are kept (icm__entry_filter); with a filter only locations are
 * decoded: every entry has kind ICM__FILE_DATA and size -1. Returns 0 or ICM_ENOMEM.
 */
int icm__manifest_ahead_start(icm__manifest_ahead **out, icm_fileio *io, int format_version,
                              icm__avro_schema_cache *schemas, const icm__manifest_ref *refs,
                              size_t n, icm__entry_filter filter, const void *filter_ctx);
/* Manifest i: the one after the last released (waits until it is decoded). Borrowed until
 * icm__manifest_ahead_release(a, i). */
const icm__ahead_manifest *icm__manifest_ahead_get(icm__manifest_ahead *a, size_t i);
/* When manifest i (taken, not yet released) has rc != 0: make its failure's details the calling
 * thread's last error (after the caller's own calls, which may have changed it meanwhile). */
void icm__manifest_ahead_raise(icm__manifest_ahead *a, size_t i);
void icm__manifest_ahead_release(icm__manifest_ahead *a, size_t i);
/* Stop decoding (a manifest being decoded is finished first), join and free. NULL is fine. */
void icm__manifest_ahead_finish(icm__manifest_ahead *a);

#endif /* ICM_MAINT_MANIFEST_AHEAD_H */
