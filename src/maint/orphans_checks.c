/*
 * maint/orphans_checks.c: the sweep's checks after the listing (and the enclosing-table check
 * before it): conflicting schemes or authorities, other tables' metadata among the candidates,
 * catalog stores, the path form, and the presence check.
 *
 * Read-only by construction, as every planning file of the sweep (orphans_plan.h).
 */
#include <string.h>

#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/metadata.h"
#include "maint/catalog_store.h"
#include "maint/folder_names.h"
#include "maint/orphans_internal.h"
#include "maint/orphans_plan.h"
#include "maint/places.h"
#include "maint/site_checks.h"
#include "maint/verify.h"
#include "util/location.h"
#include "util/location_id.h"
#include "io/probe.h"

/* ------------------------------------------------------------------------------------------ */
/* checks after the listing                                                                    */

int icm__orphans_check_conflicts(plan *p)
{
    if (p->r->conflicts == 0 || p->o->prefix_mismatch != ICM_PREFIX_MISMATCH_ERROR)
        return 0;
    icm__buf pairs = ICM__BUF_INIT;
    for (size_t i = 0; i < p->n_conflict_pairs; i++)
        icm__buf_printf(&pairs, "%s%s", i ? ", " : "", p->conflict_pairs[i]);
    if (pairs.oom) {
        icm__buf_dispose(&pairs);
        return ICM_ENOMEM;
    }
    int rc = icm__orphan_refuse(p->list_root,
                    "Unable to determine whether certain files are orphan: %zu listed file%s "
                    "match referenced files only up to scheme or authority; use "
                    "--prefix-mismatch ignore (keep them) or delete, or declare the names equal "
                    "with --equal-schemes / --equal-authorities. Conflicting "
                    "authorities/schemes: [%s].",
                    p->r->conflicts, p->r->conflicts == 1 ? "" : "s",
                    pairs.data != NULL ? pairs.data : "");
    icm__buf_dispose(&pairs);
    return rc;
}

/* The table as the shared surroundings checks see it (site_checks.h). */
static icm__site site_of(const plan *p)
{
    return (icm__site){.t = p->t, .io = p->io, .uuid = p->uuid, .md_dirs = p->md_dirs,
                       .n_md_dirs = p->n_md_dirs, .md_location = p->md_mark.location, .run = "sweep",
                       .run_a = "a sweep", .refuse_foreign = true, .list_root = p->list_root,
                       .copy = p->is_copy};
}

/* Whether the unparseable metadata file `loc` was modified at or after the cutoff (or its
 * mtime is unknown): a crashed or running writer's file, which the sweep would never delete
 * (too recent), so it cannot be evidence of another table. *gone when it went away. */
static int written_since_cutoff(plan *p, const char *loc, bool *in_flight, bool *gone)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, p->io, loc);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        *gone = true;
        return 0;
    }
    if (rc != 0)
        return rc;
    *in_flight = info.mtime_ms < 0 || info.mtime_ms >= p->cutoff;
    return 0;
}

/*
 * Another table's metadata under the listing location refuses the sweep; an unparseable
 * `*.metadata.json` refuses too when it is older than the cutoff (one younger is a writer's
 * file in flight and is skipped, as it would be as a candidate). The same table's unreferenced
 * metadata, and what the table's metadata folders hold wherever they are, is then looked at
 * for a commit past our pointer (icm__newer_commits_check).
 */
int icm__orphans_check_other_tables(plan *p)
{
    icm__site s = site_of(p);
    icm__newer_commits nc;
    icm__newer_commits_init(&nc, &s);
    icm__ptrvec log = ICM__PTRVEC_INIT;
    icm__peeked m = {0};
    int rc = 0;
    for (size_t i = 0; i < p->unreferenced_md.len && rc == 0; i++) {
        const char *loc = p->unreferenced_md.items[i];
        rc = icm__site_peek_once(&s, loc, &m, &log);
        bool in_flight = false;
        if (rc == 0 && !m.readable && !m.gone)
            rc = written_since_cutoff(p, loc, &in_flight, &m.gone);
        if (rc == 0 && in_flight)
            continue; /* a writer's fresh file: never a candidate, so it cannot block */
        if (rc == 0 && !m.readable && !m.gone)
            rc = icm__site_peek(&s, loc, &m, &log);
        if (rc != 0 || m.gone)
            continue;
        if (m.readable && icm__site_same_table(&s, loc, m.uuid)) {
            rc = icm__newer_commits_note(&nc, loc, &log);
            continue;
        }
        if (!m.readable)
            rc = icm__orphan_refuse(loc,
                        "cannot read this metadata file to tell whether another table lives "
                        "under %s, and it is older than the cutoff (not a write in progress); "
                        "nothing is deleted (remove or move it, or carve its folder out with "
                        "--exclude-location)", p->list_root);
        else
            rc = icm__orphan_refuse(loc,
                        "another table's metadata lives under %s: table-uuid %s (location %s), "
                        "this table is %s; refusing to sweep a folder shared with another table "
                        "(%s)",
                        p->list_root, m.uuid != NULL ? m.uuid : "(none)",
                        m.roots[0] != NULL ? m.roots[0] : "(none)",
                        p->uuid != NULL ? p->uuid : "(no uuid)",
                        m.roots[0] != NULL &&
                                icm__location_strip_prefix(p->list_root, m.roots[0], NULL)
                            ? "it has this table's place: a table dropped and created again "
                              "there? whether a catalog still holds the old one cannot be told; "
                              "if none does, move its metadata files out of the metadata folder"
                            : "carve that table's folder out with --exclude-location");
    }
    icm__peeked_dispose(&m);
    icm__ptrvec_dispose(&log, icm__free);
    /* The table's metadata folders are listed whatever the listing showed of them (it skips
     * hidden and excluded files, and may not reach them at all). */
    if (rc == 0)
        rc = icm__newer_commits_check(&nc);
    icm__newer_commits_dispose(&nc);
    return rc;
}

/* The folders enclosing the listing location as it is named, and as it really is when a link
 * leads elsewhere (a table location that is a link into another table's data folder). */
int icm__orphans_check_enclosing_tables(plan *p)
{
    int rc = p->real_list_root_done ? 0 : icm__orphans_look_up_real_roots(p);
    icm__site s = site_of(p);
    if (rc == 0)
        rc = icm__site_check_enclosing(&s, p->list_root, p->real_list_root,
                                       "the listing location");
    return rc;
}

/* ---- catalog stores among the candidates (issue #16, class 2) ---- */

/* Nothing Iceberg writes is a SQLite file, but a catalog's store is: a table whose location
 * holds its catalog's database (a warehouse-root table) would lose every table's pointer, and
 * the tables it points to their metadata, when no configuration names that database (the
 * catalog guard knows only configured ones). So every listed file not named like a table
 * file (whatever its folder, and also when too recent, hidden or excluded) is looked at (16
 * bytes read), and so is every candidate named like one (a database can be named
 * `x.parquet`; the candidates are few, the listed table-named files may be millions). A
 * database's tables are then asked for, as the guard asks the configured ones: one whose
 * pointer or roots lie here refuses. And a database, WAL or journal that is a candidate
 * refuses the sweep, naming them. A file that is gone is passed over (as a candidate it is
 * left to the delete phase: already gone). A candidate whose first bytes cannot be read
 * refuses the sweep too (adversary round 16, F2: the read failed, the delete would not have,
 * and a database went); a listed file that is no candidate is passed over then. */
#define STORES_NAMED 10
static bool is_orphan(const plan *p, const char *loc)
{
    for (size_t i = 0; i < p->r->orphan_count; i++)
        if (strcmp(p->r->orphans[i].path, loc) == 0)
            return true;
    return false;
}

/* The files the catalog-store look reads: the listed files not named like table files, then
 * the candidates named like them. */
typedef struct store_look {
    plan *p;
    size_t n_unknown;
    icm__catalog_file *kinds; /* NULL: not read ahead (each is read in the loop) */
    int *rcs;
} store_look;

static const char *store_look_at(const store_look *s, size_t i)
{
    const char *loc = i < s->n_unknown ? (const char *)s->p->unknown_files.items[i]
                                       : s->p->r->orphans[i - s->n_unknown].path;
    if (i >= s->n_unknown && !icm__named_like_a_table_file(loc))
        return NULL; /* looked at among the first */
    return loc;
}

/* Reads at once per window of the look: bounds the read-ahead's memory (a few hundred bytes
 * an item) however many files there are; each window keeps the store's in-flight limit busy
 * but for its last round trip. */
#define STORE_LOOK_WINDOW 4096

/* The kinds of files [first, first + m) of the look, their first bytes read all at once
 * (io/probe.h: on an object store a ranged GET each, many in flight). Returns 0 or
 * ICM_ENOMEM. */
static int store_kinds_ahead(store_look *s, size_t first, size_t m, icm__probe *probes,
                             unsigned char (*heads)[ICM__CATALOG_HEAD_BYTES])
{
    size_t k = 0;
    for (size_t i = first; i < first + m; i++) {
        const char *loc = store_look_at(s, i);
        s->kinds[i] = ICM__CATALOG_FILE_NONE;
        s->rcs[i] = 0;
        if (loc == NULL)
            continue;
        if (strcmp(icm__basename(loc), ".pyiceberg.yaml") == 0) {
            s->kinds[i] = ICM__CATALOG_FILE_CONFIG; /* (by its name: not read) */
            continue;
        }
        probes[k] = (icm__probe){.location = loc, .buf = heads[k], .len = ICM__CATALOG_HEAD_BYTES};
        k++;
    }
    int rc = icm__fileio_probe_many(s->p->io, ICM__PROBE_FIRST_BYTES, probes, k);
    k = 0;
    for (size_t i = first; i < first + m && rc == 0; i++) {
        const char *loc = store_look_at(s, i);
        if (loc == NULL || s->kinds[i] == ICM__CATALOG_FILE_CONFIG)
            continue;
        icm__probe *pr = &probes[k];
        /* (the read's own error is only cleared: a failed read is judged by its code) */
        s->rcs[i] = icm__catalog_file_kind_of_head(s->p->io, loc, pr->rc, heads[k],
                                                   pr->n_read, &s->kinds[i]);
        k++;
    }
    icm__probes_dispose(probes, k);
    return rc;
}

/* Every file of the look read ahead, window by window. Returns 0 or ICM_ENOMEM. */
static int store_look_ahead(store_look *s, size_t n)
{
    size_t w = n < STORE_LOOK_WINDOW ? n : STORE_LOOK_WINDOW;
    icm__probe *probes = icm__calloc(w, sizeof *probes);
    unsigned char (*heads)[ICM__CATALOG_HEAD_BYTES] = icm__calloc(w, sizeof *heads);
    int rc = probes != NULL && heads != NULL ? 0 : ICM_ENOMEM;
    for (size_t first = 0; first < n && rc == 0; first += w)
        rc = store_kinds_ahead(s, first, n - first < w ? n - first : w, probes, heads);
    icm__free(probes);
    icm__free(heads);
    return rc;
}

int icm__orphans_check_catalog_stores(plan *p)
{
    icm__buf named = ICM__BUF_INIT;
    size_t found = 0;
    int rc = 0;
    size_t n_unknown = p->unknown_files.len, n = n_unknown + p->r->orphan_count;
    store_look look = {p, n_unknown, NULL, NULL};
    if (!p->root_local && n > 1) {
        /* One request each: read them many at a time, then judge them in order as below. */
        look.kinds = icm__calloc(n, sizeof *look.kinds);
        look.rcs = icm__calloc(n, sizeof *look.rcs);
        if (look.kinds == NULL || look.rcs == NULL) {
            icm__free(look.kinds);
            icm__free(look.rcs);
            return ICM_ENOMEM;
        }
        if (store_look_ahead(&look, n) != 0) {
            icm__free(look.kinds);
            icm__free(look.rcs);
            return icm__error_oom();
        }
    }
    icm__buf unread = ICM__BUF_INIT; /* candidates whose first bytes could not be read */
    size_t n_unread = 0;
    /* On local disk a candidate whose name its folder does not hold is not there (its read
     * would find nothing, and nothing is what a file gone means here): one read of the folder
     * for its run of candidates instead of an open each (folder_names.h). */
    icm__folder_names names;
    bool by_folder = look.kinds == NULL && icm__folder_names_init(&names, p->io) == 0;
    size_t run_end = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *loc = store_look_at(&look, i);
        if (loc == NULL)
            continue;
        bool candidate = i >= n_unknown;
        icm__catalog_file kind;
        icm__folder_answer there = ICM__NAME_UNKNOWN;
        if (by_folder && candidate) {
            if (i >= run_end) {
                run_end = i + 1;
                while (run_end < n && icm__folder_names_same_folder(
                                          loc, p->r->orphans[run_end - n_unknown].path))
                    run_end++;
            }
            rc = icm__folder_names_ask(&names, loc, run_end - i, &there);
            if (rc != 0)
                break;
        }
        if (there == ICM__NAME_ABSENT) {
            kind = ICM__CATALOG_FILE_NONE;
        } else if (look.kinds != NULL) {
            kind = look.kinds[i];
            rc = look.rcs[i] == ICM_ENOMEM ? icm__error_oom() : look.rcs[i];
        } else {
            rc = icm__catalog_file_kind(p->io, loc, &kind);
        }
        if (rc != 0 || kind == ICM__CATALOG_FILE_NONE || kind == ICM__CATALOG_FILE_CONFIG)
            continue; /* (a .pyiceberg.yaml is hidden: never a candidate) */
        if (kind == ICM__CATALOG_FILE_UNREADABLE) {
            /* It may be a database: never deleted untold (only a candidate matters here). */
            if ((candidate || is_orphan(p, loc)) && n_unread++ < STORES_NAMED)
                rc = icm__buf_printf(&unread, "%s%s", n_unread > 1 ? ", " : "", loc);
            continue;
        }
        if (kind == ICM__CATALOG_FILE_SQLITE_DATABASE)
            rc = icm__catalog_guard_check_found_database(p->t, p->o, p->list_root, loc,
                                                         p->md_mark.location);
        if (rc == 0 && (candidate || is_orphan(p, loc)) && found++ < STORES_NAMED)
            rc = icm__buf_printf(&named, "%s%s", found > 1 ? ", " : "", loc);
    }
    if (by_folder)
        icm__folder_names_dispose(&names);
    icm__free(look.kinds);
    icm__free(look.rcs);
    if (rc == 0 && found > 0)
        rc = icm__orphan_refuse(p->list_root,
                    "%zu file%s under it %s a SQLite database or its journal, the kind of file "
                    "a catalog keeps every table's pointer in (%s%s); the sweep never deletes "
                    "one and nothing is deleted: move %s out of the table location, or carve "
                    "%s out with --exclude-location",
                    found, found == 1 ? "" : "s", found == 1 ? "is" : "are", named.data,
                    found > STORES_NAMED ? ", ..." : "", found == 1 ? "it" : "them",
                    found == 1 ? "it" : "them");
    if (rc == 0 && n_unread > 0)
        rc = icm__orphan_refuse(p->list_root,
                    "the first bytes of %zu candidate%s could not be read (%s%s), so the sweep "
                    "cannot tell that %s not a SQLite database, the kind of file a catalog "
                    "keeps every table's pointer in; nothing is deleted: try again, or carve "
                    "%s out with --exclude-location",
                    n_unread, n_unread == 1 ? "" : "s", unread.data,
                    n_unread > STORES_NAMED ? ", ..." : "", n_unread == 1 ? "it is" : "they are",
                    n_unread == 1 ? "it" : "them");
    icm__buf_dispose(&named);
    icm__buf_dispose(&unread);
    return rc;
}

/* ---- the presence check (verification: issue #16 class 4, and the listing refusal) ---- */

/* The first missing files, for the message, and how many there are. */
#define MISSING_NAMED 10

typedef struct missing_files {
    plan *p;
    size_t count;
    char *named[MISSING_NAMED]; /* "PATH (KIND, snapshot ID)" */
    size_t n_named;
} missing_files;

/* A file of a file list's sweep that the list does not name may be newer than the inventory:
 * it is missing only when storage says so too. */
static int still_missing(plan *p, const char *location, bool *missing)
{
    *missing = true;
    if (icm__orphans_listed(p))
        return 0; /* a listing is what storage shows: no second opinion */
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, p->io, location);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    *missing = rc != 0; /* (any other failure: not shown to exist) */
    if (rc != 0 && rc != ICM_ENOMEM)
        icm_error_clear();
    return rc == ICM_ENOMEM ? rc : 0;
}

/* Walk callback: a reached file that the listing should have shown and did not. Each is
 * counted once (marked found once named), with the snapshot through which the walk reached
 * it first. */
static int on_reached_again(const icm__reached *f, void *payload)
{
    missing_files *m = payload;
    plan *p = m->p;
    if (!icm__orphans_listing_shows(p, f->location))
        return 0;
    icm__pathset_hash h;
    int rc = icm__okeys_hash(&p->keys, f->location, &h);
    if (rc != 0)
        return rc;
    if ((icm__pathset_marks_hash(p->keys.set, h) & (MARK_EXPECTED | MARK_FOUND)) !=
        MARK_EXPECTED)
        return 0;
    (void)icm__pathset_mark_hash(p->keys.set, h, MARK_FOUND);
    bool missing;
    if ((rc = still_missing(p, f->location, &missing)) != 0 || !missing)
        return rc;
    m->count++;
    if (m->n_named == MISSING_NAMED)
        return 0;
    char *line = icm__sprintf("%s (%s, snapshot %lld)", f->location,
                              icm_expire_file_kind_name((icm_expire_file_kind)f->kind),
                              (long long)f->snapshot_id);
    if (line == NULL)
        return ICM_ENOMEM;
    m->named[m->n_named++] = line;
    return 0;
}

static int refuse_missing(plan *p, const missing_files *m)
{
    icm__buf names = ICM__BUF_INIT;
    for (size_t i = 0; i < m->n_named; i++)
        icm__buf_printf(&names, "%s%s", i ? ", " : "", m->named[i]);
    if (m->count > m->n_named)
        icm__buf_printf(&names, " and %zu more", m->count - m->n_named);
    if (names.oom) {
        icm__buf_dispose(&names);
        return ICM_ENOMEM;
    }
    const char *where = !icm__orphans_listed(p) ? "neither in the file list nor in storage"
                                                : "not in the listing";
    int rc = icm__orphan_refuse(p->list_root,
                    "%zu file%s the table's snapshots reference here %s %s%s%s; nothing is "
                    "deleted (a damaged manifest may name a live file wrongly, or the "
                    "listing does not name files as the metadata does: check --path-map and "
                    "--location; `icemaint check` lists what is missing; --no-verify skips "
                    "this check)",
                    m->count, m->count == 1 ? "" : "s", m->count == 1 ? "is" : "are", where,
                    names.len > 0 ? ": " : "", names.len > 0 ? names.data : "");
    icm__buf_dispose(&names);
    return rc;
}

/*
 * Every file the snapshots reach below the listed location (visible to the listing) must have
 * been listed, or, for a file list, be in it or in storage: otherwise a damaged manifest may
 * name a live file wrongly (so the real one looks like an orphan), or the listing does not name
 * files as the metadata does. R's marks say how many were not listed (one pass over R); only
 * then are the snapshots walked again to name them (the first MISSING_NAMED, each with a
 * snapshot that references it). Checked when something would be deleted (there are orphans),
 * dry run included; options.no_verify turns it off.
 */
int icm__orphans_check_presence(plan *p, const icm_table_metadata *md)
{
    /* A shard: an orphan in another range counts too, and a range planned for its verdict
     * checks whatever its own orphans (icm__cross_range). */
    bool others = p->cross != NULL && (p->cross->verdict_only || p->cross->orphans_elsewhere);
    if ((p->r->orphan_count == 0 && !others) || icm__orphan_option_no_verify(p->o))
        return 0;
    size_t unlisted = icm__pathset_count_marks(p->keys.set, MARK_EXPECTED | MARK_FOUND,
                                               MARK_EXPECTED);
    if (unlisted == 0)
        return 0;
    missing_files m;
    memset(&m, 0, sizeof m);
    m.p = p;
    icm__reach_options ro = {.read_entries = true, .statistics = true};
    icm__reach_report rep;
    int rc = icm__reach_walk(p->io, md, &ro, on_reached_again, &m, &rep);
    icm__reach_report_dispose(&rep);
    if (rc == 0 && m.count == 0 && icm__orphans_listed(p))
        m.count = unlisted; /* (the walk could not name them: say how many) */
    if (rc == 0 && m.count > 0)
        rc = refuse_missing(p, &m);
    /* A verdict-only range without orphans of its own hands the refusal to the sweep, which
     * refuses only when some range has an orphan (as the unsharded run). */
    if (rc == ICM_EREFUSED && p->r->orphan_count == 0 && p->cross != NULL &&
        p->cross->verdict_only) {
        if (p->cross->missing == NULL)
            p->cross->missing = icm__strdup(icm_error_last()->message);
        rc = p->cross->missing != NULL ? 0 : ICM_ENOMEM;
        icm_error_clear();
    }
    for (size_t i = 0; i < m.n_named; i++)
        icm__free(m.named[i]);
    return rc;
}

/* ---- references outside the listing that look like an orphan (verification) ---- */

typedef struct outside_looks {
    plan *p;
    icm__verify_lookalikes looks; /* the orphans' names and sizes */
    char *root_key;               /* list_root's location key */
    icm__verify_refs refs;        /* the references that look like an orphan */
} outside_looks;

/* A data or delete file referenced outside the listing with the name or the recorded size of
 * an orphan: whether it exists or not, one damaged entry may have moved a live file's
 * reference there (its folder's name changed onto another table's file of that name and size,
 * or its whole path onto any file of that size), so the real one looks unreferenced here. */
static int on_reached_outside(const icm__reached *f, void *payload)
{
    outside_looks *o = payload;
    const char *rest;
    if (f->kind > ICM__FILE_DELETION_VECTOR || icm__orphans_below_root(o->p, f->location, &rest) ||
        !icm__verify_lookalike(&o->looks, f->location, f->size_bytes))
        return 0;
    bool outside;
    int rc = icm__verify_outside_keys(f->location, &o->root_key, 1, &outside);
    if (rc == 0 && !outside) { /* in by key; a link before a `..` may still lead out */
        const char *root = o->p->list_root;
        rc = icm__verify_really_outside(o->p->io, f->location, &root, 1, &outside);
    }
    return rc != 0 || !outside ? rc : icm__verify_refs_add(&o->refs, f);
}

/* Keep every orphan a lookalike reference may stand for (KEPT, the message naming it). */
static int hold_stood_for(outside_looks *o)
{
    icm_orphan_result *r = o->p->r;
    int rc = icm__verify_refs_seal(&o->refs);
    for (size_t i = 0; rc == 0 && o->refs.n > 0 && i < r->orphan_count; i++) {
        icm_orphan_file *orphan = &r->orphans[i];
        char *why = NULL;
        if (orphan->state != ICM_ORPHAN_PLANNED)
            continue;
        rc = icm__verify_refs_stood_for(&o->refs, "snapshot", "the listed location",
                                        orphan->path, orphan->size_bytes, &why);
        if (why == NULL)
            continue;
        orphan->state = ICM_ORPHAN_KEPT;
        orphan->error_code = ICM_EREFUSED;
        orphan->error_message = why;
    }
    return rc;
}

int icm__orphans_hold_lookalikes(plan *p, const icm_table_metadata *md)
{
    if (p->r->orphan_count == 0 || p->content_outside_root == 0 ||
        icm__orphan_option_no_verify(p->o))
        return 0;
    outside_looks o = {p, ICM__VERIFY_LOOKALIKES_INIT, NULL, ICM__VERIFY_REFS_INIT};
    int rc = icm__location_key(p->list_root, &o.root_key);
    for (size_t i = 0; rc == 0 && i < p->r->orphan_count; i++)
        rc = icm__verify_lookalikes_add(&o.looks, p->r->orphans[i].path,
                                        p->r->orphans[i].size_bytes);
    icm__verify_lookalikes_seal(&o.looks);
    icm__reach_options ro = {.read_entries = true};
    icm__reach_report rep;
    if (rc == 0) {
        rc = icm__reach_walk(p->io, md, &ro, on_reached_outside, &o, &rep);
        icm__reach_report_dispose(&rep);
    }
    if (rc == 0)
        rc = hold_stood_for(&o);
    icm__verify_lookalikes_dispose(&o.looks);
    icm__verify_refs_dispose(&o.refs);
    icm__free(o.root_key);
    return rc;
}

int icm__orphans_check_path_form(plan *p)
{
    const icm_orphan_result *r = p->r;
    if (p->referenced_under_root == 0 || r->referenced_listed > 0 || r->orphan_count == 0)
        return 0;
    /* A shard's R is its range's references and the table's metadata files; its listing of
     * the rest of the location (names only) found some of them there: the names agree. If
     * not, none of R's was found anywhere, and the unsharded run (R a superset) refuses too. */
    if (p->sharded && p->outside_referenced_listed > 0)
        return 0;
    if (p->sharded)
        return icm__orphan_refuse(p->list_root,
                  "shard %u/%u: none of the %zu files of its keep set below the location (its "
                  "range's references and the table's metadata files) was found in the "
                  "listing of the location, so the listing names files differently from the "
                  "metadata (check --path-map, --equal-schemes, --equal-authorities); nothing "
                  "is deleted", p->o->shard_index, p->o->shard_count, p->referenced_under_root);
    return icm__orphan_refuse(p->list_root,
                  "none of the %zu files the metadata references here was found in the "
                  "listing, so the listing names files differently from the metadata (check "
                  "--path-map, --equal-schemes, --equal-authorities); nothing is deleted",
                  p->referenced_under_root);
}
