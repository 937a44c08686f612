/*
 * maint/manifest_ahead.h: decode manifests ahead on a second thread, use them in order on the
 * calling thread (internal; the reachability walk's engine, keepset.c).
 *
 * A sequence of manifests known in advance (icm__manifest_ref: path, list entry, v1 embedded or
 * not) is decoded in order by one decoding thread, at most MANIFEST_AHEAD_WINDOW manifests ahead
 * of the caller. The caller takes manifest 0, 1, 2, ... in order (icm__manifest_ahead_get),
 * gets its live entries (ADDED and EXISTING: a DELETED entry protects nothing) as the
 * keep-set walk reports them, and hands each back (icm__manifest_ahead_release) before taking
 * the next. The manifests are read in the same order, by one thread, as a single-threaded walk
 * would read them, so fault-injection counts stay deterministic.
 *
 * Memory: at most MANIFEST_AHEAD_WINDOW decoded manifests (their live entries' paths) at once,
 * whatever the number of manifests. When no thread can be started, each manifest is decoded
 * on the calling thread when it is taken: the same results, without the overlap.
 *
 * Read-only: the only storage calls are manifest reads.
 */
#ifndef ICM_MAINT_MANIFEST_AHEAD_H
#define ICM_MAINT_MANIFEST_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "avro/avro.h"
#include "maint/keepset.h"

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
 * Start decoding refs[0..n) (borrowed, as is `schemas`, which only the decoding thread uses
 * until icm__manifest_ahead_finish). `format_version`: the table's, for manifests without one
 * in their header (v1 embedded manifests always read as v1). Returns 0 or ICM_ENOMEM.
 */
int icm__manifest_ahead_start(icm__manifest_ahead **out, icm_fileio *io, int format_version,
                              icm__avro_schema_cache *schemas, const icm__manifest_ref *refs,
                              size_t n);

/*
 * Manifest i: the one after the last released (waits until it is decoded). Borrowed until
 * icm__manifest_ahead_release(a, i).
 */
const icm__ahead_manifest *icm__manifest_ahead_get(icm__manifest_ahead *a, size_t i);
/* When manifest i (taken, not yet released) has rc != 0: make its failure's details the calling
 * thread's last error (after the caller's own calls, which may have changed it meanwhile). */
void icm__manifest_ahead_raise(icm__manifest_ahead *a, size_t i);
void icm__manifest_ahead_release(icm__manifest_ahead *a, size_t i);

/* Stop decoding (a manifest being decoded is finished first), join and free. NULL is fine. */
void icm__manifest_ahead_finish(icm__manifest_ahead *a);

#endif /* ICM_MAINT_MANIFEST_AHEAD_H */
