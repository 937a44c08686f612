/*
 * maint/orphans_plan.h: the orphan sweep's plan, shared by its planning files (internal).
 *
 * The planning is split by step; all of them work on one plan (struct icm__orphan_plan):
 *  - orphans_plan.c     the entry point (icm__orphans_plan) and the order of the steps, the
 *                       checks on the metadata and options, the re-check after a concurrent
 *                       commit (icm__orphans_revalidate), the checksum companions;
 *  - orphans_names.c    the name filter: what a location's name alone says;
 *  - orphans_refs.c     the keep set R: what the metadata references, and newer metadata's,
 *                       with second names through symbolic links (link_survey.h);
 *  - orphans_listing.c  the candidates: the listing (or file list) classified against R;
 *  - orphans_checks.c   the checks after the listing (and the enclosing-table check);
 *  - orphans_mounts.c   one folder at two paths: a mount inside a local listing refuses,
 *                       and a candidate that is a referenced file through another mount
 *                       (same device and inode) is kept;
 *  - orphans_nested.c   a reviewed plan's candidates in another table's folder, and a
 *                       snapshot's (inventory report's, file list's) candidates' folders
 *                       looked at live;
 *  - orphans_inventory.c  an S3 Inventory report as the listing, and a snapshot's rows merged
 *                       per key.
 * None of them references a FileIO call that creates, writes or deletes (a dry run stops after
 * them); tests/unit/test_orphans_dryrun.c checks their object files with nm.
 */
#ifndef ICM_MAINT_ORPHANS_PLAN_H
#define ICM_MAINT_ORPHANS_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/orphans.h"
#include "maint/keepset.h"
#include "maint/link_survey.h"
#include "maint/list_cuts.h"
#include "maint/md_mark.h"
#include "maint/orphans_internal.h"
#include "util/strset.h"
#include "util/util.h"

#define MAX_CONFLICT_PAIRS 8
/* Key ranges an object-store listing is cut into, each listed by a thread of its own: at
 * 20-50 ms a page of 1,000 keys, 16 streams list 300,000-800,000 keys a second, about what
 * one core classifies; more would only queue behind the classifier. */
#define ICM__SWEEP_LIST_RANGES 16
/* Below this many referenced files under the listed root the listing is not cut: a few pages
 * gain nothing from threads (each range costs a request at least), and a table that small
 * usually lists in one or two pages. */
#define ICM__SWEEP_RANGES_MIN_REFERENCED 2000

struct icm__orphan_plan {
    icm_table *t;
    icm_fileio *io;
    const icm_orphan_options *o;
    icm_orphan_result *r;
    icm__orphan_keys keys;
    size_t refs_announced;      /* entries the manifest lists announce (orphans_refs.c) */
    size_t refs_confirmed;      /* references of the walk added to R so far */
    size_t refs_reserve_base;   /* R's count when the announcement came */
    int64_t cutoff;
    char *roots[3];             /* table location, write.data.path, write.metadata.path */
    size_t n_roots;
    char *md_dirs[3];           /* <location>/metadata, write.metadata.path, current file's dir */
    size_t n_md_dirs;
    char *uuid;                 /* this table's table-uuid (NULL in old v1 tables) */
    char *list_root;            /* where candidates come from */
    char *list_root_path;       /* its collapsed path (icm__okeys_path_of) */
    char *real_list_root;       /* where list_root really is (icm_fileio_resolve); NULL: unknown
                                   or missing */
    bool real_list_root_done;   /* real_list_root (and root_displaced) was looked for */
    bool root_displaced[3];     /* roots[i], named apart from list_root, really lies in or
                                   around it (a link): its references are resolved one by one */
    icm__link_survey survey;    /* symbolic links below the roots (link_survey.h); in link
                                   mode (survey.links) every local reference is resolved */
    char *unresolved_ref;       /* link mode: the first local reference that could not be
                                   resolved (not missing): where it is, is unknown, so every
                                   local candidate is kept (icm__orphans_keep_second_names) */
    /* One folder at two paths (a bind mount, one NFS export or volume mounted twice;
     * orphans_mounts.c): a local listing has no mount point inside it (refused otherwise),
     * and when its file system is mounted at another place too (by_identity), each local file
     * the metadata names outside the listing is stat'ed once and its identity kept in ref_ids
     * (16-byte icm__file_id keys; NULL: none): a candidate with one of them is that file under
     * the other mount's path, and is kept. */
    bool by_identity;
    icm__pathset *ref_ids;
    icm__pathset *ids_asked;      /* the references stat'ed so far (each once) */
    char *unidentified_ref;       /* the first that could be resolved but not stat'ed: every
                                     local candidate may be it, and is kept */
    size_t list_root_len;       /* icm__location_trim_len(list_root) */
    bool root_shortcut;         /* icm__orphans_below_root() may take its shortcut */
    bool root_local;            /* list_root is a local form */
    bool root_hidden;           /* list_root itself is hidden below the table location */
    char **hidden_fields;       /* partition field names starting with '_' or '.' */
    size_t n_hidden_fields;
    size_t referenced_under_root; /* files of R below list_root */
    size_t content_outside_root;  /* data and delete files the snapshots reach outside
                                     list_root (icm__orphans_hold_lookalikes) */
    /* The sizes the data and delete file entries below list_root record, hashed into
     * ICM__ORPHANS_SIZE_BITS bits (NULL: none seen): orphans_twins.c walks the entries again
     * only when a planned orphan's size may be among them. */
    uint64_t *content_sizes;
    size_t file_list_outside;   /* file-list lines naming a file outside list_root */
    /* (The presence check keeps its state in R's marks: see icm__orphans_check_presence.) */
    icm__pathset *metadata_docs;  /* R's keys (icm__okeys_last_key) of the metadata documents
                                     and version hints */
    size_t orphan_cap;
    icm__ptrvec unreferenced_md;  /* `*.metadata.json` files R does not name (char *) */
    icm__ptrvec unknown_files;    /* listed files not named like table files (char *): looked
                                     at for catalog stores (icm__orphans_check_catalog_stores) */
    icm__catalog_guard guard;     /* the catalog's own files (orphans_catalog.c) */
    bool is_copy;                 /* a dry run of a copy's metadata (check_own_metadata) */
    icm_orphan_options own_options; /* the caller's, with exclusions' listing spellings added
                                       (add_exclusion_aliases); p->o points here then */
    const char **exclusions;      /* own_options.exclude_locations (borrowed and owned) */
    size_t n_exclusions_owned;    /* the owned ones: exclusions[caller's count..] */
    char *conflict_pairs[MAX_CONFLICT_PAIRS];
    size_t n_conflict_pairs;
    /* For the re-checks after the listing and between delete batches: the metadata file R was
     * last brought up to date with, and the lists and manifests R already accounts for. */
    icm__md_mark md_mark;
    icm__refs_seen seen;
    /* An object-store listing is cut into ranges listed at once, at quantiles of a sample of
     * the references it will show (maint/list_cuts.h). */
    bool sample_cuts;
    icm__cut_sample cut_sample;
    /* A sharded sweep (options shard_count >= 2; docs/semantics.md#sharded-sweep): the range
     * of keys this shard owns, as paths relative to list_root_path in the keep set's collapsed
     * form: shard_after < K <= shard_upto (NULL: no bound); shard_empty: none at all. The
     * cut sample then holds such relative keys too. */
    bool sharded;
    icm__cross_range *cross; /* the other ranges' view (orphans_internal.h); NULL: none */
    bool shard_empty;
    char *shard_after;
    char *shard_upto;
    /* Listed files of this shard's span whose keep-set key falls in another shard's range
     * (repeated slashes: `data//x` is listed here, keyed `data/x`): classified after the
     * listing, once R holds every reference with their keys (icm__orphans_take_strays). */
    icm__ptrvec shard_strays;
    /* Names outside the shard's range that R holds (icm__orphans_scan_outside_range): with
     * the range's referenced_listed, evidence that the listing names files as the metadata
     * does, whatever the range (icm__orphans_check_path_form). */
    size_t outside_referenced_listed;
    bool taking_strays;
};
typedef struct icm__orphan_plan plan;

/* Whether the candidates come from listing storage (a sweep, or a reviewed plan's apply, which
 * lists too and then keeps only the plan's files), not from a file list's lines or an
 * inventory report's rows. */
static inline bool icm__orphans_listed(const plan *p)
{
    return (p->o->file_list == NULL && p->o->inventory == NULL) || p->o->exact_file_list;
}

/* Marks of R's keys (icm__pathset_mark_hash), for the presence check
 * (icm__orphans_check_presence): files the snapshots reach (not metadata documents, which old log entries may have lost
 * legitimately) below list_root and visible to the listing are expected; those the listing
 * showed are found. */
#define MARK_EXPECTED ICM__PATHSET_MARK_A
#define MARK_FOUND ICM__PATHSET_MARK_B

/* The candidates `why` gives a reason for (an array of orphan_count reasons or NULLs, taken
 * and freed; NULL itself: nothing) are taken out of the plan, a `warning:` line each naming
 * the reason ("FILE: not deleted: WHY; kept"), when `rc` is 0 (else the plan is left
 * unchanged). Returns rc, or ICM_ENOMEM (orphans_plan.c). */
int icm__orphans_take_out(plan *p, char **why, int rc);

/* ---- the name filter (orphans_names.c) ---- */

bool icm__orphans_is_lease_file(const char *name);
bool icm__orphans_is_metadata_json(const char *name);
bool icm__orphans_inside_roots(const plan *p, const char *loc);
bool icm__orphans_hidden_path(const plan *p, const char *rest);
int icm__orphans_set_root_shortcut(plan *p);
bool icm__orphans_below_root(const plan *p, const char *loc, const char **rest);
bool icm__orphans_listing_shows(const plan *p, const char *location);

/* ---- the keep set R (orphans_refs.c) ---- */

int icm__orphans_look_up_real_roots(plan *p);
/* A sharded sweep, before R is built: one walk of what `md` references that only samples the
 * keys below list_root, and this shard's range from the sample (list_cuts.h). Returns 0,
 * ICM_ENOMEM, or the walk's codes (an unreadable manifest is left to the walk that builds R,
 * which refuses it). */
int icm__orphans_set_shard_range(plan *p, const icm_table_metadata *md);
/* Whether `location` (below list_root) lies in this shard's range (always, unsharded). Its
 * key is the keep set's collapsed path, so a reference and the listed file it names always
 * agree. *in is false for a location whose collapsed path is not below list_root's. Returns
 * 0 or ICM_ENOMEM. */
int icm__orphans_in_shard(const plan *p, const char *location, bool *in);
/* Whether the relative key `rel` lies in this shard's range (always, unsharded). */
bool icm__orphans_in_shard_range(const plan *p, const char *rel);
/* After the listing: add to R every reference of `md` whose key is a stray's
 * (shard_strays), reading the metadata again; nothing when there are none. Returns 0,
 * ICM_ENOMEM or the walk's codes. */
int icm__orphans_add_stray_refs(plan *p, const icm_table_metadata *md);
void icm__orphans_on_new_ref(unsigned tag, icm__pathset_hash hash, void *payload);
int icm__orphans_add_table_refs(plan *p, const icm_table_metadata *md, const char *md_location);
int icm__orphans_add_newer_refs(plan *p, const icm_table_metadata *md, const char *md_location);
int icm__orphans_drop_referenced(plan *p, size_t from);
/* After the listing, in link mode: take out of the plan (with a warning) every candidate that
 * is a referenced file under another name, or may be. Returns 0 or ICM_ENOMEM. */
int icm__orphans_keep_second_names(plan *p);

/* ---- one folder at two paths: mounts (orphans_mounts.c) ---- */

/* A local sweep (list_root on this machine's disk): refuse (ICM_EREFUSED, naming each) a mount
 * point strictly inside the listing location, unless excluded or hidden; refuse when the mount
 * table cannot be read. `before_walk`: also decide by_identity (the file system of the
 * listing is mounted at another place too). Nothing for other stores. Returns 0,
 * ICM_EREFUSED, ICM_ENOMEM. */
int icm__orphans_check_mounts(plan *p, bool before_walk);
/* by_identity: a referenced `location` not below list_root by name, on local disk: stat'ed
 * (once per location) and its identity kept. Returns 0 or ICM_ENOMEM. */
int icm__orphans_note_ref_identity(plan *p, const char *location);
/* Why the candidate `location` is (or may be) a referenced file under another mount's path
 * (*why, new string; NULL: it is not). Returns 0 or ICM_ENOMEM. */
int icm__orphans_same_file_why(plan *p, const char *location, char **why);
/* Take out of the plan (a warning each) every candidate icm__orphans_same_file_why names.
 * Returns 0 or ICM_ENOMEM (then the plan is unchanged). */
int icm__orphans_keep_same_files(plan *p);
void icm__orphans_mounts_dispose(plan *p);

/* ---- the candidates (orphans_listing.c) ---- */

int icm__orphans_check_other_formats(plan *p);
int icm__orphans_on_listed(const icm_file_info *files, size_t n, void *payload);
int icm__orphans_read_file_list(plan *p);
/* One listed file (a listing's, a file list's or an inventory report's): classified, kept as
 * a candidate if it is one. `may_stat`: a size or mtime it lacks may be asked of storage
 * (a file list's line stays unknown: too recent). */
int icm__orphans_take_listed(plan *p, const icm_file_info *info, bool may_stat);

/* ---- an S3 Inventory report instead of a listing (orphans_inventory.c) ---- */

/* options.inventory: check the report against the table (source bucket, age) and classify
 * every object of it below the listing location as a listed file. */
int icm__orphans_read_inventory(plan *p);
/* A sharded sweep of options.inventory (icm__orphans_scan_outside_range): the report read
 * again, checked as icm__orphans_read_inventory checks it, and each row outside the shard's
 * range given to icm__orphans_take_outside_name. Returns 0, ICM_EREFUSED, ICM_ENOMEM or the
 * report's errors. */
int icm__orphans_inventory_outside_range(plan *p);
/* Classify the shard's strays (after icm__orphans_add_stray_refs) as listed files (a
 * snapshot's rows of one file merged into one candidate, icm__orphans_merge_rows); frees
 * them. Returns as the listing callback. */
int icm__orphans_take_strays(plan *p);
/* Free the strays (plan disposal). */
void icm__orphans_free_strays(plan *p);

/* A snapshot's row (an inventory report's, a file list's line), classified by
 * icm__orphans_take_listed; one too recent to delete is remembered in `recent` (counted once
 * per file) for icm__orphans_merge_rows. Returns 0 or what the classification returns. */
int icm__orphans_take_row(plan *p, icm__strset *recent, const icm_file_info *info,
                          bool may_stat);
/* The bookkeeping of icm__orphans_take_row for a row just classified as too recent (for a
 * caller that classified it itself, a batch at a time): `location` is remembered in `recent`,
 * and counted once. Returns 0 or ICM_ENOMEM. */
int icm__orphans_remember_recent(plan *p, icm__strset *recent, const char *location);
/* After a snapshot's rows: one candidate per file. Candidates of one location whose rows agree
 * are merged (a warning counts them); rows that disagree (size or modification time), or a
 * candidate with a row in `recent`, keep the file (not a candidate; a warning each, naming
 * `source`). Candidates end in byte order. Returns 0 or ICM_ENOMEM. */
int icm__orphans_merge_rows(plan *p, const icm__strset *recent, const char *source);
/* options.exact_file_list, after an ordinary listing: only the candidates the file list (a
 * reviewed plan) names with the same size and mtime stay candidates. */
int icm__orphans_keep_only_planned(plan *p);
/* A sharded sweep, after its listing: refuse (ICM_EREFUSED) when a folder holding a candidate,
 * below list_root, holds another format's log (other_format.h) and is not excluded: the
 * shard's listing may not have shown the log, which an unsharded listing refuses. One look
 * per distinct folder. Returns 0, ICM_EREFUSED, ICM_ENOMEM or a listing's error. */
int icm__orphans_check_shard_folders(plan *p);
/* An unsharded listing's sweep (dry runs too), after its listing: refuse (ICM_EREFUSED, as
 * the listing refuses a trash journal's name, other_format.h) when a folder named like a UUID
 * on a candidate's path below list_root, or list_root or a folder above it, is a trash's table
 * folder (holding a journal) and the trash is not excluded. A listing is no snapshot: it may
 * have read `<uuid>/journal/` empty before a trash run wrote a journal there and moved a file
 * into `<uuid>/files/`, which it then read (adversary round 5, finding 2); a journal is written
 * before its file moves, so it shows now. One stopping listing per distinct such folder, none
 * where no candidate has one. Returns 0, ICM_EREFUSED, ICM_ENOMEM or a listing's error. */
int icm__orphans_check_trash_folders(plan *p);
/* A sharded sweep, after its listing: the rest of the location (or of the file list, or of
 * the inventory report) is read for names only, so every shard refuses over what the
 * unsharded run refuses over by a name anywhere under the location, whatever the range
 * (docs/SHARDS.md, "What every shard lists"): another format's folder, and every
 * `*.metadata.json` (gzip'd or not) outside the table's metadata folders, which goes to
 * unreferenced_md for icm__orphans_check_other_tables (another table's, or an unreadable one
 * older than the cutoff, refuses). Nothing else is kept. Returns 0, ICM_EREFUSED,
 * ICM_ENOMEM, or the listing's (the file list's, the report's) error. */
int icm__orphans_scan_outside_range(plan *p);
/* One name (listed, a file-list line or a report row) for icm__orphans_scan_outside_range:
 * nothing when below list_root it lies in the shard's range; else another format's folder
 * refuses, and a `*.metadata.json` outside the table's metadata folders is kept in
 * unreferenced_md; nothing else is kept. Returns 0, ICM_EREFUSED or ICM_ENOMEM. */
int icm__orphans_take_outside_name(plan *p, const icm_file_info *info);

/* ---- the checks after the listing (orphans_checks.c) ---- */

int icm__orphans_check_conflicts(plan *p);
int icm__orphans_check_other_tables(plan *p);
int icm__orphans_check_enclosing_tables(plan *p);
int icm__orphans_check_catalog_stores(plan *p);
int icm__orphans_check_path_form(plan *p);
int icm__orphans_check_presence(plan *p, const icm_table_metadata *md);
/* A data or delete file the snapshots reach outside list_root bearing an orphan's name or
 * size (verify.h, lookalikes) may be a live file's entry damaged out of the listing
 * (adversary rounds 6, 10 and 11): each orphan it may stand for is KEPT (error_code
 * ICM_EREFUSED, a message naming the reference), the rest go on. Returns 0 or ICM_ENOMEM. */
int icm__orphans_hold_lookalikes(plan *p, const icm_table_metadata *md);
/* A planned orphan of the size a retained entry inside the listed location records, when the
 * file that entry names has another size, or (Parquet) when the entry describes the orphan's
 * footer (row count and value ranges) and not that file's: a damaged entry may have renamed
 * the orphan's reference onto that file (adversary round 12, F2, the sweep's side;
 * orphans_twins.c). Each such orphan is KEPT (error_code ICM_EREFUSED, a message
 * naming the entry's file). Returns 0 or ICM_ENOMEM. */
int icm__orphans_hold_twins(plan *p, const icm_table_metadata *md);
#define ICM__ORPHANS_SIZE_BITS ((size_t)1 << 23)
/* The bit of content_sizes for a size. */
static inline size_t icm__orphans_size_bit(int64_t size_bytes)
{
    return (size_t)(((uint64_t)size_bytes * UINT64_C(0x9E3779B97F4A7C15)) >> 41);
}

/* ---- a reviewed plan's candidates in another table's folder (orphans_nested.c) ---- */

/* options.exact_file_list: take out of the plan (a warning each) every candidate in a folder,
 * at or below the table root holding it, that another table's metadata folder marks as that
 * table's location. Returns 0 or ICM_ENOMEM. */
int icm__orphans_hold_nested_tables(plan *p);

/* options.inventory or options.file_list (not a reviewed plan's): the folders of every
 * candidate, at or below the table root holding it, looked at live, since the snapshot proves
 * no absence: a `_delta_log/` or `.hoodie/` in one refuses (ICM_EREFUSED, other_format.h); a
 * table metadata document in one's `metadata/` is judged as a listed one
 * (icm__orphans_check_other_tables: another table's refuses); metadata there without a document
 * refuses. Returns 0, ICM_EREFUSED, ICM_ENOMEM or a listing's error. */
int icm__orphans_check_snapshot_folders(plan *p);

#endif /* ICM_MAINT_ORPHANS_PLAN_H */
