/*
 * util/location.h: the guards on table-file locations ("inside", "equal"), and joining.
 * Parsing and the identity of a location ("same object") are util/location_id.h's; these build
 * on its parser.
 *
 * These functions guard "never delete outside the table location", so their rules are strict and
 * conservative. Two families of locations exist:
 *  - local: `/p`, `file:/p`, `file:///p`, `file://localhost/p` (scheme and host ASCII
 *    case-insensitive), `file:rel` and scheme-less relative paths (`data/x`). They are compared
 *    by path segments, so repeated slashes and trailing slashes do not matter (`//p` == `/p`).
 *    An absolute path never matches a relative one (the working directory is not consulted).
 *  - URIs (anything with another scheme, or a `file://` URI naming another host such as
 *    `file://data/x`): compared as exact byte strings, apart from trailing slashes of a prefix
 *    and S3's schemes: `s3://b/k`, `s3a://b/k` and `s3n://b/k` are one object (every S3 client,
 *    Hadoop's S3A/S3N and Java's S3FileIO alike, reads one bucket and key under each), so an
 *    `s3a://` file of an `s3://` table is inside it. No percent-decoding, no case folding.
 * Neither family resolves dot segments. Instead, a location whose part below a prefix contains
 * a `.` or `..` segment is never "inside" that prefix: `/t/../x` resolves outside `/t` on a
 * filesystem (and an HTTP client may collapse it too), so refusing is the only safe answer.
 *
 * The guards answer "inside" or "equal" only where every reader agrees, so they are never true
 * where the identity (util/location_id.h) says otherwise: strip_prefix(p, dir) implies the
 * identity of p is within the identity of dir, and equal(a, b) that each is within the other
 * (tests/unit/test_location_identity.c). The identity is the coarser relation the keep sets use
 * (a coarser keep set keeps more); the guards the stricter one deletes are checked against (a
 * stricter guard refuses more).
 *
 * None of these functions allocate except _fs_path and _join.
 */
#ifndef ICM_UTIL_LOCATION_H
#define ICM_UTIL_LOCATION_H

#include <stdbool.h>
#include <stddef.h>

#include "util/location_id.h"

/*
 * If `loc` is a local location, return a pointer into `loc` at its filesystem path (not
 * normalised: `file:////p` gives "//p"); otherwise (URI, empty path, NULL) return NULL.
 */
const char *icm__location_local_part(const char *loc);

/*
 * The file system path to hand the kernel for a local location: repeated slashes collapsed,
 * trailing slash dropped (except for "/"), dot segments left as they are — the kernel resolves
 * them through the links, which a spelling cannot know. A URI is copied unchanged. This is a
 * spelling for system calls, not an identity: to decide whether two locations are one object
 * use util/location_id.h. Returns 0 or ICM_ENOMEM. `*out` is new (icm__free).
 */
int icm__location_fs_path(const char *loc, char **out);

/*
 * True when `p` names `dir` itself or a location below it, at a path-segment boundary
 * (`/t/x` is below `/t` and `/t/`; `/t_2/x` is not). `dir` may be a filesystem root `/` or a
 * bucket root `s3://b`. A URI `dir` must have a non-empty authority (`s3://` alone matches
 * nothing). On true, `*rest` (if not NULL) points into `p` at the part below `dir`: "" when `p`
 * names `dir`; for local locations without leading slashes; for URIs after exactly one '/'
 * (so `s3://b/t//x` below `s3://b/t` gives "/x", keeping the exact key). False when that part
 * contains a `.` or `..` segment.
 */
bool icm__location_strip_prefix(const char *p, const char *dir, const char **rest);

/* True when `p` lies strictly below `dir` (strip_prefix with a non-empty rest). */
bool icm__location_is_inside(const char *p, const char *dir);

/* True when `loc` names one place whatever the working directory: an absolute local path
 * (`/p`, `file:/p`, `file:///p`, `file://localhost/p`) or a URI. False for a relative local
 * path (`data/x`, `./x`, `file:rel`), "" and NULL. Metadata never records a location for which
 * this is false (issue #16, class 1). */
bool icm__location_is_absolute(const char *loc);

/* Whether metadata may record `loc` for a table at `table_location`: when it is absolute, or
 * when the table's own location is relative (some engines' test tables) and `loc` is it or
 * lies below it. icemaint never introduces a relative name (issue #16, class 1). */
bool icm__location_recordable(const char *loc, const char *table_location);

/* icm_location_canonical (util/location_abs.c) for a location that needs it (relative, or
 * with a `.` or `..` segment); any other is copied as it is spelled (`file:///wh` stays, so a
 * configured warehouse keeps the form its tables' metadata uses). *out is new (icm__free).
 * Returns 0 or the codes of icm_location_canonical. */
int icm__location_canonical_keep_form(const char *location, char **out);

/* True when `a` and `b` name the same location under the rules above. */
bool icm__location_equal(const char *a, const char *b);

/*
 * Length of `loc` without trailing slashes, but never cutting into a local root (`/`,
 * `file:///`) or a URI's `scheme://` part. Used to append below a location in its own form.
 */
size_t icm__location_trim_len(const char *loc);

/* Where the store's root ends in `loc`: the offset of a local path's leading '/', of the '/'
 * after `scheme://authority`, or strlen(loc) when there is none (the root alone). A walk up
 * the folders of `loc` stops there. */
size_t icm__location_root_end(const char *loc);

/*
 * New string naming `rel` below `base`, keeping `base`'s form: base's trailing slashes are
 * dropped (see icm__location_trim_len), then "/" and `rel` unchanged are appended. An empty
 * `rel` gives the trimmed base. Returns NULL on allocation failure (ICM_ENOMEM is set).
 */
char *icm__location_join(const char *base, const char *rel);

/*
 * The name Hadoop's checksummed file systems give the checksum of `loc`: `dir/.name.crc` for
 * `dir/name`, in the form of `loc` (new string, icm__free). NULL when `loc` ends in '/' or its
 * name starts with '.' (Hadoop names no checksum after a hidden file), or on allocation
 * failure (then *oom is set).
 */
char *icm__location_checksum_name(const char *loc, bool *oom);

#endif /* ICM_UTIL_LOCATION_H */
