/*
 * maint/orphans_internal.h: what the files of the orphan sweep share (internal).
 *
 * The sweep is split so that a dry run cannot delete anything:
 *  - orphans_keys.c  path identity: splitting a location into scheme, authority and path, the
 *                    equal-schemes / equal-authorities maps, and the keep set R keyed by
 *                    (origin, path) (pure computation, no storage access);
 *  - orphans_plan.c  the safety checks, building R, streaming the listing or file list past
 *                    R, and the re-check after a concurrent commit (reads storage only),
 *                    split by step into orphans_names.c, orphans_refs.c, orphans_listing.c
 *                    and orphans_checks.c (orphans_plan.h);
 *  - orphans_catalog.c  the files the catalog itself lives in and the catalog's other
 *                    tables: refusals before the listing, names never planned (reads only);
 *  - orphans.c       the public entry point and the only file that deletes.
 * The planning files never reference a FileIO call that creates, writes or deletes; the dry-run test
 * checks their object files with nm.
 */
#ifndef ICM_MAINT_ORPHANS_INTERNAL_H
#define ICM_MAINT_ORPHANS_INTERNAL_H

#include "icemaint/orphans.h"
#include "maint/keepset.h"
#include "util/util.h"

/* ---- equal-schemes / equal-authorities maps ---- */

/* name → canonical name, both lower-case. Later entries win over earlier ones. */
typedef struct icm__equal_map {
    char **names;
    char **canon;
    size_t n;
} icm__equal_map;

/* Append the entries of `text` (`NAMES=CANONICAL[;...]`, NAMES comma-separated; NULL or ""
 * adds nothing). `what` names the option in messages. Returns 0, ICM_EINVALID, ICM_ENOMEM. */
int icm__equal_map_parse(icm__equal_map *m, const char *text, const char *what);
void icm__equal_map_dispose(icm__equal_map *m);

/* ---- the keep set keyed by origin and path ---- */

/* A referenced (scheme, authority) pair after mapping; lower-case. */
typedef struct icm__origin {
    char *scheme;
    char *authority;  /* "" = none: matches any authority of the same scheme */
} icm__origin;

/* How a listed location relates to R. */
typedef enum icm__okey_match {
    ICM__OKEY_NONE = 0,  /* no referenced file has this path: an orphan */
    ICM__OKEY_EXACT,     /* referenced (same scheme and authority, after mapping) */
    ICM__OKEY_CONFLICT   /* the path is referenced only under another scheme or authority */
} icm__okey_match;

/* Adds hashed but not yet inserted (icm__okeys_add_later): a short ring, so each key's slot is
 * fetched from memory while the next few keys are built. */
#define ICM__OKEYS_PENDING 16
typedef struct icm__okey_pending {
    icm__pathset_hash hash;
    unsigned tag;
} icm__okey_pending;

typedef struct icm__orphan_keys {
    icm__pathset *set;        /* hashes of (origin index, collapsed path) */
    icm__okey_pending pending[ICM__OKEYS_PENDING];
    size_t pending_first, pending_len;
    void (*on_new)(unsigned tag, icm__pathset_hash hash,
                   void *payload); /* a deferred add turned out new */
    void *on_new_payload;
    icm__equal_map schemes;
    icm__equal_map authorities;
    icm__origin *origins;     /* distinct referenced origins (few) */
    size_t n_origins;
    icm__buf key;             /* scratch: 4-byte origin index + path */
    icm__buf scheme;          /* scratch: canonical scheme of the location at hand */
    icm__buf authority;       /* scratch: canonical authority */
    icm__buf raw_origin;      /* "scheme\0authority" as written, of which the two above are
                                 the canonical form (empty: none yet) */
} icm__orphan_keys;

/* Set up with the maps (the default scheme map first, then the caller's). Returns 0,
 * ICM_EINVALID (a map), ICM_ENOMEM. */
int icm__okeys_init(icm__orphan_keys *k, const char *equal_schemes,
                    const char *equal_authorities);
void icm__okeys_dispose(icm__orphan_keys *k);

/* Add a referenced location; *added (may be NULL) tells whether it was new. Afterwards
 * icm__okeys_last_path() is its collapsed path. Deferred adds are inserted first. Returns 0 or
 * ICM_ENOMEM. */
int icm__okeys_add(icm__orphan_keys *k, const char *location, bool *added);

/* The same add in two steps, for the million references of a keep set: icm__okeys_hash builds
 * the location's key (icm__okeys_last_path() is then its collapsed path) and hashes it;
 * icm__okeys_add_later queues the hash, asks for its slot, and inserts the oldest queued one
 * when the queue is full. When a queued key turns out new, the function set with
 * icm__okeys_on_new is called with its `tag` and hash (to mark it, say). icm__okeys_flush
 * inserts the rest; every other call that reads or adds to the set flushes first. Return 0
 * or ICM_ENOMEM. */
int icm__okeys_hash(icm__orphan_keys *k, const char *location, icm__pathset_hash *out);
int icm__okeys_add_later(icm__orphan_keys *k, icm__pathset_hash hash, unsigned tag);
int icm__okeys_flush(icm__orphan_keys *k);
void icm__okeys_on_new(icm__orphan_keys *k,
                       void (*fn)(unsigned tag, icm__pathset_hash hash, void *payload),
                       void *payload);

/* icm__okeys_lookup in two steps, so a caller can ask for the slots of the next names early:
 * icm__okeys_probe builds a listed location's key and hash (and whether R's origin covers the
 * location's scheme and authority) and asks for its slot; icm__okeys_probe_match then answers
 * exactly as icm__okeys_lookup would. Only when R has exactly one origin (the usual case):
 * otherwise, and on ICM_ENOMEM, probe->ready is false and the caller uses icm__okeys_lookup.
 * Deferred adds are inserted first. Returns 0 or ICM_ENOMEM. */
typedef struct icm__okey_probe {
    bool ready;
    bool covers;
    icm__pathset_hash hash;
} icm__okey_probe;
int icm__okeys_probe(icm__orphan_keys *k, const char *location, icm__okey_probe *out);
icm__okey_match icm__okeys_probe_match(const icm__orphan_keys *k, const icm__okey_probe *probe,
                                       size_t *conflict_origin);

/* The collapsed path of the location last given to icm__okeys_add or _lookup (borrowed). */
const char *icm__okeys_last_path(const icm__orphan_keys *k);

/* R's key (origin index + collapsed path; borrowed, *len bytes) of the location last given to
 * icm__okeys_add, or last found EXACT by icm__okeys_lookup: the same file gives the same key. */
const void *icm__okeys_last_key(const icm__orphan_keys *k, size_t *len);

/* Classify a listed location. On CONFLICT, *conflict_origin (may be NULL) is the index of a
 * referenced origin that has the path. Returns 0 or ICM_ENOMEM. */
int icm__okeys_lookup(icm__orphan_keys *k, const char *location, icm__okey_match *out,
                      size_t *conflict_origin);

/* The canonical scheme and authority of `location` (borrowed from k's scratch buffers, valid
 * until the next call on k). Returns 0 or ICM_ENOMEM. */
int icm__okeys_origin_of(icm__orphan_keys *k, const char *location, const char **scheme,
                         const char **authority);

/* The collapsed path of `location` without scheme and authority (new string, icm__free): the
 * part R is joined on. NULL on allocation failure. */
char *icm__okeys_path_of(const char *location);

/* True when the collapsed path `path` is `dir` or lies below it at a segment boundary. */
bool icm__okeys_path_under(const char *path, const char *dir);

/* ---- the catalog's own files and other tables (orphans_catalog.c; issue #16, class 2) ---- */

typedef struct icm__catalog_guard {
    char **names;  /* files a catalog lives in, as named and as the listing names them */
    size_t n;
} icm__catalog_guard;

/* Before the listing of `list_root`: refuse (ICM_EREFUSED) a relative list_root, a file the
 * catalog lives in that exists below it, or another table of the table's catalog at or below
 * it (neither carved out by exclude_locations); remember the catalog's files in *g. Returns
 * 0, ICM_EREFUSED, ICM_ENOMEM or the catalog's listing codes. Zero-initialise *g. */
int icm__catalog_guard_check(icm__catalog_guard *g, icm_table *t, const icm_orphan_options *o,
                             const char *list_root);
/* A SQLite database the listing found at `db_location` (below list_root) that neither the
 * table's catalog nor the configuration names (those are walked before the listing): refuse
 * (ICM_EREFUSED) when one of its tables, other than one whose pointer is `current_pointer`
 * (the swept table), has its pointer or a root at or below list_root, not carved out by
 * exclude_locations. A database not on local disk is not opened (0). Returns 0,
 * ICM_EREFUSED, ICM_ENOMEM or the store's codes. */
int icm__catalog_guard_check_found_database(icm_table *t, const icm_orphan_options *o,
                                            const char *list_root, const char *db_location,
                                            const char *current_pointer);
/* Where `location` is on this machine's disk (*out, new string; a path map applied), or *out
 * NULL when it is not a local file. Returns 0 or ICM_ENOMEM. */
int icm__orphans_local_file(icm_fileio *io, const char *location, char **out);
/* Whether a would-be orphan is one of the catalog's files (never planned). */
bool icm__catalog_guard_protects(const icm__catalog_guard *g, const char *location);
void icm__catalog_guard_dispose(icm__catalog_guard *g);

/* ---- options ---- */

/* options.no_verify, which exists from ICM_ORPHAN_OPTIONS_VERSION 3 on. */
static inline bool icm__orphan_option_no_verify(const icm_orphan_options *o)
{
    return o->version >= 3 && o->no_verify;
}

/* ---- planning ---- */

/*
 * Everything up to the deletes: refresh the table, run the safety checks, build R, stream the
 * candidates past it, re-check after a concurrent commit. On success *out holds the orphans in
 * state PLANNED (tallied) and, when plan_out is not NULL, *plan_out the plan's state (R and what
 * it accounts for) for icm__orphans_revalidate; free it with icm__orphan_plan_free after *out's
 * deletes. `now_ms` is the operation's fixed "now". Reads storage only.
 * Returns 0 or the codes of icm_orphan_sweep().
 */
typedef struct icm__orphan_plan icm__orphan_plan;
int icm__orphans_plan(icm_table *t, const icm_orphan_options *o, int64_t now_ms,
                      icm__orphan_plan **plan_out, icm_orphan_result **out);

/* A sharded sweep's view of the other ranges (orphans.c, check_other_ranges): the presence
 * check refuses the unsharded run when a referenced file is missing anywhere and there is an
 * orphan anywhere, which a range alone cannot see. A range planned for its verdict only
 * (verdict_only) does not refuse over missing references when it has no orphan itself: it
 * keeps the refusal's message in *missing (icm__free) for the sweep, which refuses when any
 * range has an orphan. The own range's plan checks presence when it has orphans or
 * orphans_elsewhere (another range has). Internal: never a public option. */
typedef struct icm__cross_range {
    bool verdict_only;
    bool orphans_elsewhere;
    char *missing;
} icm__cross_range;
/* icm__orphans_plan with that view (cross may be NULL: a plan of its own). */
int icm__orphans_plan_range(icm_table *t, const icm_orphan_options *o, int64_t now_ms,
                            icm__cross_range *cross, icm__orphan_plan **plan_out,
                            icm_orphan_result **out);
void icm__orphan_plan_free(icm__orphan_plan *p);

/*
 * The re-check between delete batches: reload the table; when its metadata changed since R was
 * last brought up to date, add what the new metadata references to R (reading only manifest
 * lists and manifests not read yet) and drop every orphan from index `from` on that R now
 * references (result->orphan_count shrinks; result->newly_referenced counts them). Reads
 * storage only. Returns 0; the codes of icm_table_refresh; ICM_EREFUSED (gc.enabled is not true
 * now); the read error of a newly referenced list or manifest; ICM_ENOMEM.
 */
int icm__orphans_revalidate(icm__orphan_plan *p, size_t from);

/* Whether R, as the last re-check left it, references `location` (referenced, or referenced
 * under another scheme or authority unless prefix_mismatch is DELETE, or the same local file
 * by device and inode through another mount: orphans_mounts.c): the rule by which
 * icm__orphans_revalidate drops an orphan. Read-only. Returns 0 or ICM_ENOMEM. */
int icm__orphans_referenced(icm__orphan_plan *p, const char *location, bool *referenced);

/* Guess an orphan's kind from its location. */
icm_orphan_kind icm__orphan_guess_kind(const char *location);

/* Recompute counts, bytes and totals: PLANNED files count on a dry run (deleted = false),
 * DELETED ones afterwards (ALREADY_GONE ones are counted apart in already_gone). */
void icm__orphan_result_tally(icm_orphan_result *r, bool after_delete);

/* Append a warning line. Returns 0 or ICM_ENOMEM. */
int icm__orphan_warn(icm_orphan_result *r, const char *fmt, ...) ICM__PRINTF(2, 3);

/* The sweep's refusal: ICM_EREFUSED with the message, naming `location`. */
int icm__orphan_refuse(const char *location, const char *fmt, ...) ICM__PRINTF(2, 3);

/* Whether `loc` lies at or below one of o's exclude_locations. */
bool icm__orphan_excluded(const icm_orphan_options *o, const char *loc);

#endif /* ICM_MAINT_ORPHANS_INTERNAL_H */
