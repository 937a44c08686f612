/*
 * util/location_id.h: the one identity of a table-file location — which spellings name the same
 * object. The keep sets of expiry and of the orphan sweep, transactions, the in-memory FileIO
 * and the guards of util/location.h all parse a location here and compare what this writes.
 *
 * The rule (issue #17, section 3):
 *  - Local locations (`/p`, `file:/p`, `file:///p`, `file://localhost/p`, `//p`; scheme and
 *    `localhost` ASCII case-insensitive) are file system paths: repeated slashes collapse, a
 *    trailing slash goes (a lone "/" stays), `.` and `..` segments resolve lexically as the
 *    kernel resolves them for a path without symbolic links (links are icm_fileio_resolve's
 *    business, not the spelling's). A relative path (`data/x`, `file:rel`) keeps its leading
 *    `..` segments and never equals an absolute one: the working directory is not consulted.
 *  - Object-store locations (any other scheme, and `file://host/p` for another host) are
 *    `scheme:` + the exact bytes after it. The scheme is ASCII case-folded (RFC 3986 §3.1:
 *    schemes are case-insensitive); the authority and the key are exact bytes: no repeated
 *    slash collapsed (`t//x` and `t/x` are two S3 keys), no dot segment resolved (`..` is an
 *    ordinary key segment to S3, GCS and ADLS), no case folding.
 *  - No percent-decoding anywhere: the bytes are the identity. Iceberg records locations as the
 *    strings writers produced and the FileIOs send them as they are (S3FileIO and PyIceberg
 *    put `a%20b` in the request as the key `a%20b`), so `a%20b` and `a b` are two objects.
 *    Decoding would make two objects one: where equality picks a file to act on (a
 *    transaction's owned files, the in-memory FileIO) the wrong one could be deleted, and a
 *    guard reading `t/a%2F..%2F..%2Fx` as `t/a/../../x` would disagree with the store.
 *
 * Two refinements, each only ever coarser (more spellings equal), and asked for by name:
 *  - ICM__LOCATION_ID_S3_ALIASES: `s3a` and `s3n` are `s3` (Hadoop's S3A/S3N connectors and
 *    S3FileIO address the same bucket and key; Java's DeleteOrphanFiles equalSchemes default
 *    `s3a,s3n=s3`, mirrored by ICM_ORPHAN_DEFAULT_EQUAL_SCHEMES).
 *  - ICM__LOCATION_ID_HADOOP_SLASHES: in an object key, repeated slashes collapse and a trailing
 *    slash goes, as Hadoop's Path normalises a URI (Java's DeleteOrphanFiles compares Path
 *    forms: reference semantics #89). The orphan sweep keys with it: a reader going through
 *    Hadoop reads `t//x` at `t/x`, so either listed spelling must be kept.
 * A coarser identity in a keep set can only keep a file nobody references; never delete one
 * that is referenced. ICM__LOCATION_ID_DEFAULT (= S3_ALIASES: issue #17, "s3/s3a/s3n equal by
 * default") is what expiry's keep set, the transactions, the in-memory FileIO and the CLI
 * (public icm_location_identity) use: a retained snapshot naming `s3a://b/k` keeps the
 * `s3://b/k` a removed one names, since both are one object to every reader.
 * ICM__LOCATION_ID_KEEP is the rule without refinement (the differential tests compare it with
 * the rules it replaced).
 *
 * Relation to the guards (util/location.h): icm__location_strip_prefix / _equal answer "inside"
 * or "equal" only for spellings every reader agrees on (no dot segment below the place, scheme
 * spelled alike, where `s3`, `s3a` and `s3n` in lower case are alike: one store to every S3
 * client). They never answer true where the identities disagree: strip_prefix(p, dir)
 * implies icm__location_id_within(key(p), key(dir)). tests/unit/test_location_identity.c checks
 * that, and where the identity differs from the rules it replaced.
 *
 * Nothing here allocates except icm__location_key, icm_location_identity and
 * icm__location_id_equal's long-key path.
 */
#ifndef ICM_UTIL_LOCATION_ID_H
#define ICM_UTIL_LOCATION_ID_H

#include <stdbool.h>
#include <stddef.h>

/* Refinements of the identity (see above); combine with '|'. */
enum {
    ICM__LOCATION_ID_KEEP = 0,
    ICM__LOCATION_ID_S3_ALIASES = 1u << 0,
    ICM__LOCATION_ID_HADOOP_SLASHES = 1u << 1,
    /* the identity every user but the orphan sweep's keys uses (see above) */
    ICM__LOCATION_ID_DEFAULT = ICM__LOCATION_ID_S3_ALIASES,
};

/* A location split into its parts, pointers into the location. */
typedef struct icm__location_parts {
    const char *scheme;    /* local forms: "file" (a literal) */
    size_t scheme_len;
    const char *authority; /* bytes between "scheme://" and the next '/'; "" when none */
    size_t authority_len;
    bool has_authority;    /* "scheme://" (object stores; local forms: false) */
    const char *path;      /* local: the file system path as spelled; else the rest after the
                              authority (or after "scheme:" when there is no "//") */
    size_t path_len;
    bool local;            /* a path of this machine's file system */
} icm__location_parts;

/*
 * Split the `len` bytes at `loc` (no NUL among them; nothing past them is read). False for an
 * empty location and for `file:` forms with nothing to name (`file:`, `file://host` without a
 * path): those are neither local nor an object. Scheme-less locations are local.
 */
bool icm__location_split(const char *loc, size_t len, icm__location_parts *out);

/* The file system path of a local location (pointer into `loc`, not normalised: `file:////p`
 * gives "//p"); NULL for an object-store location, an empty one, or NULL. `len` as above. */
const char *icm__location_local_part_n(const char *loc, size_t len);

/*
 * The identity key of the C string `loc` under `flags` into `out`, which must hold
 * strlen(loc) + 1 bytes (a key is never longer than its location); returns the key's length.
 * Local: the normalised path ("/t/d/f"); object store: "scheme:" + the rest ("s3://b/t/f").
 * Equal keys (memcmp) ⇔ the same object.
 */
size_t icm__location_id_write(const char *loc, unsigned flags, char *out);

/* When the key under `flags` is a run of loc's own bytes, that run (true, *key into loc); false
 * when it has to be written. Lets the hot paths hash a key without copying it. */
bool icm__location_id_span(const char *loc, unsigned flags, const char **key, size_t *key_len);

/* Whether the `n` bytes at `scheme` (no ':') spell one of S3's schemes, `s3`, `s3a` or `s3n`
 * (ASCII case-insensitive): the spellings ICM__LOCATION_ID_S3_ALIASES folds into `s3`, and the
 * orphan sweep's scheme keys fold always (orphans_keys.c). */
bool icm__location_scheme_is_s3(const char *scheme, size_t n);

/* Only the path part of the key of split location `p` (for local locations that is the whole
 * key) into `out` (p->path_len + 1 bytes); returns its length. `p` is the split of a C string
 * (its path ends at the NUL). The orphan sweep keys a path
 * and its (scheme, authority) origin apart, so a path can match up to its origin. */
size_t icm__location_id_path_write(const icm__location_parts *p, unsigned flags, char *out);

/* Whether `a` and `b` are the same object under `flags`. Returns 0 or ICM_ENOMEM (only for
 * keys longer than 511 bytes); *out is false for NULL or empty locations. */
int icm__location_id_equal(const char *a, const char *b, unsigned flags, bool *out);

/* Whether the key `key` (`n` bytes) names the key `dir` itself or lies below it at a '/'
 * boundary (keys as icm__location_id_write gives them; `dir` may end in '/' and may be a root:
 * "/", "s3://b", or "", the key of `.`, which holds every relative key). A relative key is
 * never within an absolute one or the reverse; `s3://` (no bucket) holds nothing. */
bool icm__location_id_within(const char *key, size_t n, const char *dir, size_t dn);

/* icm__location_id_write with ICM__LOCATION_ID_DEFAULT: the keep sets' key. New string (icm__free)
 * in *out; returns 0 or ICM_ENOMEM. */
int icm__location_key(const char *loc, char **out);
/* icm__location_id_write(loc, ICM__LOCATION_ID_DEFAULT, out). */
size_t icm__location_key_write(const char *loc, char *out);
/* icm__location_id_span(loc, ICM__LOCATION_ID_DEFAULT, ...). */
bool icm__location_key_span(const char *loc, const char **key, size_t *key_len);

/*
 * The last segment of the key of `loc` (the bytes after its last '/'; the same under every
 * flag), found without building the key: `loc` has `len` bytes (as the key, it ends at a NUL
 * byte among them); on true *tail points into `loc`. False when it cannot be told from `loc`
 * alone (no '/', a trailing slash, a "." or ".." last segment), never a wrong answer: two
 * locations with one key have the same tail or at least one gives false. Lets a caller rule a
 * location out of a small set of keys by its file name.
 */
bool icm__location_key_tail(const char *loc, size_t len, const char **tail, size_t *tail_len);
/* icm__location_key_tail for a `loc` whose `len` bytes hold no NUL byte (the caller checked:
 * manifest readers refuse such paths), without looking for one; `loc` need not be a C string
 * (no byte past `len` is read). */
bool icm__location_key_tail_checked(const char *loc, size_t len, const char **tail,
                                    size_t *tail_len);

/* Collapse repeated slashes and drop a trailing slash (a lone "/" stays): the C string `in` of
 * `n` bytes into `out` (n + 1 bytes). Returns the new length. */
size_t icm__path_collapse_n(const char *in, size_t n, char *out);
/* icm__path_collapse_n of the C string `in`. */
size_t icm__path_collapse(const char *in, char *out);

/*
 * Resolve "." and ".." segments of a '/'-separated path in place, lexically (no filesystem
 * access): "." segments go, ".." removes the segment before it; at the root of an absolute path
 * ".." is dropped, in a relative path with nothing left to remove it stays. Repeated slashes
 * collapse. Returns the new length.
 */
size_t icm__path_resolve_dots(char *path);
/* icm__path_resolve_dots, skipped (cheaply) when no segment starts with '.'; `len` is
 * strlen(path), returned as it is then. */
size_t icm__path_resolve_dots_if_any(char *path, size_t len);

#endif /* ICM_UTIL_LOCATION_ID_H */
