/*
 * maint/expire_internal.h: what the files of snapshot expiry share (internal).
 *
 * The expiry is split so that a dry run cannot delete anything:
 *  - expire_plan.c      plans which files go (read-only: manifest reads and stats only);
 *  - expire_verify.c    checks that the files retained snapshots reference exist before
 *                       anything is deleted (read-only: manifest reads and stats);
 *  - expire_metadata.c  builds the new metadata as an in-memory edit (reads manifest lists
 *                       when clean_expired_metadata needs the partition specs in use);
 *  - expire.c           the only file that commits and deletes.
 * The first three never reference a FileIO call that creates, writes or deletes; the dry-run
 * test checks their object files with nm.
 */
#ifndef ICM_MAINT_EXPIRE_INTERNAL_H
#define ICM_MAINT_EXPIRE_INTERNAL_H

#include "icemaint/expire.h"
#include "maint/keepset.h"
#include "maint/link_survey.h"
#include "maint/md_mark.h"

/* A result and what only the library needs of it: the public struct first, so the result
 * pointer is the allocation (icm_expire_result_free frees it as is). */
/* What an expired snapshot's entry says of a data or delete file planned for deletion, besides
 * its size: verification tells by it whether a retained entry may stand for the file
 * (expire_verify.c, maint/verify.h "twins"). */
typedef struct icm__expire_entry_facts {
    icm__pathset_hash key;       /* icm__pathset_location_hash of its location */
    int64_t record_count;        /* -1: unknown */
    uint64_t bounds;             /* digest of its bounds (0: none given) */
    icm__partition_key partition; /* (shape 0: unknown) */
    icm_file_format file_format;
    /* a deletion vector's entry: where its blob lies in the Puffin file (0, 0: unknown) and
     * its data file (icm__verify_referenced_digest; 0: unknown) */
    int64_t content_offset, content_size_bytes;
    uint64_t referenced;
    int64_t added_snapshot_id; /* INT64_MIN: unknown */
} icm__expire_entry_facts;

typedef struct icm__expire_result_full {
    icm_expire_result pub;
    /* icm_expire_delete_files may act on this plan: its commit happened (or the caller of
     * icm_expire_plan_files says `after` is committed), and it is not a dry run's. */
    bool deletable;
    /* The planned data and delete files' entry facts, sorted by key (the last plan's; owned). */
    icm__expire_entry_facts *entry_facts;
    size_t entry_fact_count;
} icm__expire_result_full;

/* The entry facts of the planned file at `location`: how many (0: none known), the first at
 * *first and the others right after it (what each distinct description among its expired
 * entries says: a file added again with other metrics has two). */
size_t icm__expire_entry_facts_of(const icm_expire_result *r, const char *location,
                                  const icm__expire_entry_facts **first);

/* The private part of a result the library allocated (icm__expire_result_new). */
static inline icm__expire_result_full *icm__expire_result_full_of(icm_expire_result *r)
{
    return (icm__expire_result_full *)(void *)r;
}

/* New empty result (zeroed, older_than_ms and now_ms 0). Returns 0 or ICM_ENOMEM. */
int icm__expire_result_new(icm_expire_result **out);

/* Copy the decision's ids, removed refs, cutoff and retain_last into the result, and move its
 * kept reasons there (d->kept becomes NULL). Returns 0 or ICM_ENOMEM (then d is unchanged). */
int icm__expire_result_set_decision(icm_expire_result *r, icm_expire_decision *d);

/* Append a problem (location may be NULL). Returns 0 or ICM_ENOMEM. */
int icm__expire_add_problem(icm_expire_result *r, icm_expire_problem_kind kind,
                            const char *location, int code, const char *message);

/* Recompute counts, bytes and totals from the files' states: on a dry run (or before deleting)
 * PLANNED files count, afterwards DELETED ones. */
void icm__expire_result_tally(icm_expire_result *r);

/* Take out of r's plan (and report as ICM_EXPIRE_PROBLEM_OTHER_TABLE) every planned file that
 * another table of t's catalog may use: its metadata file, or a file under its location,
 * write.data.path or write.metadata.path (expire_foreign.c; `md` is the metadata the plan was
 * made against, for this table's own roots). The catalog is not asked when the table has no
 * catalog of many tables. Then every planned local file in a folder strictly below this table's
 * roots that is another table's location on disk (its metadata/ holds version-hint or
 * *.metadata.json files, and is not this table's metadata folder) is held the same way: one
 * opendir per distinct folder; object-store locations are not looked at. First of all, a
 * planned data, delete or manifest file that is hidden or a catalog's own file (SQLite
 * database or journal by content, .pyiceberg.yaml) is held. Nothing is done when nothing is
 * planned. Returns 0, the catalog's listing codes or ICM_ENOMEM. */
int icm__expire_hold_other_tables(icm_table *t, const icm_table_metadata *md,
                                  icm_expire_result *r);

/*
 * Plan the deletes of going from `before` to `after` into r (deleted_* arrays in state PLANNED,
 * withheld flags, problems, tally). `io` is only read. Nothing is planned for
 * ICM_EXPIRE_CLEANUP_NONE. `seen` (may be NULL): filled with the manifest lists and manifests
 * of `after`, which the plan accounts for (icm__expire_recheck reads only others).
 * `entry_facts`: also keep what the planned data and delete files' entries say of them
 * (icm__expire_entry_facts_of), for a verification to follow (the expired manifests' metrics
 * are decoded then). Returns 0 or ICM_ENOMEM.
 */
int icm__expire_plan(icm_fileio *io, const icm_table_metadata *before,
                     const icm_table_metadata *after, icm_expire_cleanup cleanup,
                     icm_expire_result *r, icm__refs_seen *seen, bool entry_facts);

/*
 * The delete phase's re-check (icemaint/maint.h; expire_recheck.c, read-only): reload the
 * table; when its metadata location differs from the one the plan (or the last re-check) was
 * made against, or the document there does (its last-updated-ms or snapshot count), every snapshot of the new metadata counts as retained: what it references that
 * `seen` does not account for is read (icm__reach_extend) and every PLANNED file of r it
 * references becomes KEPT (r->newly_referenced). On failure a problem is recorded (the caller
 * stops deleting). Returns 0; the codes of icm_table_refresh; the read error of a newly
 * referenced list or manifest; ICM_EREFUSED (GC disabled now: gc.enabled not true); ICM_ENOMEM.
 */
typedef struct icm__expire_recheck {
    icm_table *t;
    icm__md_mark mark;     /* the metadata the plan is up to date with (owned) */
    icm__refs_seen seen;   /* what the plan accounts for (owned) */
} icm__expire_recheck;
int icm__expire_recheck_run(icm__expire_recheck *c, icm_expire_result *r);
void icm__expire_recheck_dispose(icm__expire_recheck *c);

/*
 * Verification before deleting (expire_verify.c; expire.h "Verification"): when r plans a data
 * or delete file or a manifest, every file the snapshots of `after` reference inside its
 * table's locations must exist. When some are missing, r's plan is emptied, r->missing_count
 * set and the first 10 recorded as problems. `before` (the metadata the plan was made from)
 * says which schema each retained entry's metrics were computed under: the expiry may remove
 * the snapshot that added its file, and with clean_expired_metadata that schema. Returns 0;
 * ICM_EREFUSED (missing files; the message names them); ICM_ENOMEM.
 */
int icm__expire_verify(icm_fileio *io, const icm_table_metadata *before,
                       const icm_table_metadata *after, icm_expire_result *r);

/*
 * The commit of an expiry (expire_metadata.c): *out_changes, the requirements (the table and
 * every ref of `base` as the decision saw them) and updates (the decision's removed refs and
 * expired snapshots, their statistics; with `clean_expired_metadata` also the partition specs
 * and schemas no retained snapshot uses; set-properties ICM_LAST_EXPIRE_PROPERTY = now_ms when
 * snapshots or refs go), and *out, `base` with them applied. *changed tells
 * whether anything differs from base. Returns 0; ICM_ENOMEM; the codes of
 * icm_table_changes_apply.
 */
int icm__expire_changes(icm_fileio *io, const icm_table_metadata *base,
                        const icm_expire_decision *d, bool clean_expired_metadata, int64_t now_ms,
                        icm_table_changes **out_changes, icm_table_metadata **out,
                        bool *changed, size_t *removed_specs, size_t *removed_schemas);

/* Before expiry commits (dry runs too): refuse (ICM_EREFUSED) when the table's metadata
 * folders show it was committed past the pointer t was loaded from and the catalog still
 * points there after a reload (a stale catalog pointer; a pointer that moved meanwhile is
 * looked at again, and t then holds the reloaded table, whose own-metadata check runs when
 * own_check), or one of its roots lies inside a folder another table writes into
 * (expire_site.c, site_checks.h). Returns 0, ICM_EREFUSED, the listing codes, the codes of
 * icm_table_refresh, ICM_ENOMEM. */
int icm__expire_check_site(icm_table *t, bool own_check);

/*
 * Second names (expire_alias.c): a symbolic link gives a local file more names than one, so a
 * planned file may be one a retained snapshot reaches under another name (`data/lnk/f` with
 * `data/lnk -> real` is `data/real/f`). A planned local file whose real path is the real path
 * of a retained local reference is kept (ICM_EXPIRE_PROBLEM_THROUGH_LINK, a warning).
 * Which retained references are resolved: all of them when a symbolic link lies below a local
 * root of the table (a survey walks the roots once, not following links: link_survey.h),
 * else only those not plainly named below a root (outside the table, or with a dot segment);
 * see the file comment.
 * Use: init with the table's roots (of the metadata the plan keeps), note every retained
 * reference (icm__expire_alias_wants is the thread-safe, allocation-free test a decoding thread
 * may use to pass one on), then check the planned files. Object-store roots make it inactive.
 */
#define ICM__EXPIRE_ALIAS_MAX_ROOTS ICM__LINK_SURVEY_MAX_ROOTS

typedef struct icm__expire_alias {
    icm_fileio *io;
    bool active;                               /* some root is local */
    bool links;                                /* resolve every retained local reference */
    bool mapped;                               /* a path map puts an object-store root on disk */
    size_t n_roots;
    char *root[ICM__EXPIRE_ALIAS_MAX_ROOTS];      /* a local root as spelled */
    char *root_path[ICM__EXPIRE_ALIAS_MAX_ROOTS]; /* its file system path */
    size_t root_len[ICM__EXPIRE_ALIAS_MAX_ROOTS];  /* (without trailing slashes) */
    size_t root_path_len[ICM__EXPIRE_ALIAS_MAX_ROOTS];
    char **noted;                              /* the retained references to resolve */
    size_t n_noted, cap_noted;
    icm__pathset *noted_set;                   /* (each once) */
} icm__expire_alias;

/* Survey the roots (`roots`: icm__table_roots). Returns 0 or ICM_ENOMEM (then a is disposed). A
 * root that cannot be resolved or walked makes every reference resolved (a->links). */
int icm__expire_alias_init(icm__expire_alias *a, icm_fileio *io, const char *const *roots,
                           size_t n_roots);
void icm__expire_alias_dispose(icm__expire_alias *a);
/* Must the retained reference `location` (`len` bytes, not NUL-terminated) be resolved? */
bool icm__expire_alias_wants(const icm__expire_alias *a, const char *location, size_t len);
/* The same, told where the last segment of `location` starts (a pointer into it, as
 * icm__location_key_tail gives it; NULL: not known), which spares a search. */
bool icm__expire_alias_wants_named(const icm__expire_alias *a, const char *location, size_t len,
                                   const char *name);
/* Remember a retained reference (nothing when it need not be resolved). 0 or ICM_ENOMEM. */
int icm__expire_alias_note(icm__expire_alias *a, const char *location);
/* kept[i]: whether files[i] (a PLANNED file; others, and a NULL path, are skipped) is kept
 * because a noted
 * reference is the same file (or a noted one cannot be resolved); each kept one is reported
 * in r. Resolves the noted references and, when there are any, the local planned files.
 * Returns 0 or ICM_ENOMEM. */
int icm__expire_alias_check(icm__expire_alias *a, const icm_expire_file *files, size_t n,
                            bool *kept, icm_expire_result *r);

#endif /* ICM_MAINT_EXPIRE_INTERNAL_H */
