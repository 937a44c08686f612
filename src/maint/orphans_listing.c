/*
 * maint/orphans_listing.c: the sweep's candidates: every listed file (or file-list line)
 * classified against R on the listing thread's batches, the few candidates stat'ed, and
 * folders another table format manages refused.
 *
 * Read-only by construction, as every planning file of the sweep (orphans_plan.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/metadata.h"
#include "catalog/catalog_internal.h"
#include "maint/catalog_store.h"
#include "maint/orphans_internal.h"
#include "maint/orphans_plan.h"
#include "maint/other_format.h"
#include "io/list_ahead.h"
#include "maint/site_checks.h"
#include "util/location.h"
#include "util/strset.h"

/* ------------------------------------------------------------------------------------------ */
/* candidates                                                                                  */

/* Remember "(referenced, listed)" for the message, as Java reports the differing part. */
static int record_conflict(plan *p, size_t origin)
{
    const icm__origin *ref = &p->keys.origins[origin];
    const char *scheme = p->keys.scheme.data, *authority = p->keys.authority.data;
    bool scheme_differs = strcmp(ref->scheme, scheme) != 0;
    char *pair = icm__sprintf("(%s, %s)", scheme_differs ? ref->scheme : ref->authority,
                              scheme_differs ? scheme : authority);
    if (pair == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < p->n_conflict_pairs; i++) {
        if (strcmp(p->conflict_pairs[i], pair) == 0) {
            icm__free(pair);
            return 0;
        }
    }
    if (p->n_conflict_pairs == MAX_CONFLICT_PAIRS) {
        icm__free(pair);
        return 0;
    }
    p->conflict_pairs[p->n_conflict_pairs++] = pair;
    return 0;
}

static int push_orphan(plan *p, const icm_file_info *info)
{
    icm_orphan_result *r = p->r;
    if (r->orphan_count == p->orphan_cap) {
        size_t cap = p->orphan_cap ? p->orphan_cap * 2 : 64;
        icm_orphan_file *grown = icm__reallocarray(r->orphans, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        r->orphans = grown;
        p->orphan_cap = cap;
    }
    char *copy = icm__strdup(info->location);
    if (copy == NULL)
        return ICM_ENOMEM;
    r->orphans[r->orphan_count++] = (icm_orphan_file){
        copy, info->size_bytes, info->mtime_ms, icm__orphan_guess_kind(info->location),
        ICM_ORPHAN_PLANNED, 0, NULL};
    return 0;
}

/*
 * Size and mtime of a listed file that would be a candidate but came without them (the listing
 * asks for names only: ICM_LIST_STAT_OPTIONAL). Stat'ed now, after the listing saw it, so the
 * mtime is at least as fresh as a listing's own. *gone: deleted meanwhile (not a candidate).
 * Any other failure stops the sweep like a listing error: its age is unknown.
 */
static int stat_candidate(plan *p, const icm_file_info *listed, icm_file_info *out,
                          bool *gone)
{
    *gone = false;
    int rc = icm_fileio_stat(out, p->io, listed->location);
    /* Gone, or replaced by a directory meanwhile: no longer the file the listing saw (anything
     * in a new directory is younger than this sweep, so skipping it loses nothing). */
    if (rc == ICM_ENOTFOUND || (rc == ICM_EIO && icm_error_last()->os_errno == EISDIR)) {
        icm_error_clear();
        *gone = true;
        return 0;
    }
    return rc;
}

/* A referenced file the listing showed (the last lookup, or `probe` when ready, found it
 * EXACT): marked in R for the presence check. The slot was just read, so this costs nothing. */
static void mark_found(plan *p, const icm__okey_probe *probe)
{
    icm__pathset_hash h;
    if (probe != NULL && probe->ready) {
        h = probe->hash;
    } else {
        size_t len;
        const void *key = icm__okeys_last_key(&p->keys, &len);
        h = icm__pathset_hash_key(key, len);
    }
    (void)icm__pathset_mark_hash(p->keys.set, h, MARK_FOUND);
}

/* ---- folders another table format manages (other_format.h) ---- */

/* Before the listing: the table location, and every folder from the root the listing location
 * lies in down to it. One holding `_delta_log/` or `.hoodie/` refuses, dry runs too (the
 * listing never reads those hidden folders, and the other format's log may name files the
 * Iceberg metadata does not). Folders below the listing location show in it (take_file). */
int icm__orphans_check_other_formats(plan *p)
{
    const char *location = icm_table_metadata_location(icm_table_get_metadata(p->t));
    size_t i = 0;
    while (i < p->n_roots && !icm__location_strip_prefix(p->list_root, p->roots[i], NULL))
        i++;
    int rc = 0;
    if (location != NULL && (i == p->n_roots || !icm__location_equal(p->roots[i], location)))
        rc = icm__other_format_check_folder(p->io, location);
    if (rc == 0 && i < p->n_roots)
        rc = icm__other_format_check_down(p->io, p->roots[i], p->list_root);
    /* a listing inside a trash (a table's write.data.path moved into one): trashed files */
    if (rc == 0)
        rc = icm__other_format_check_trash_above(p->io, p->list_root);
    return rc;
}

/* The refusals' way past a folder below the listing location. */
static const char carve_out_hint[] = "(or carve that folder out with --exclude-location)";

/* A listed file (below the listing location: `rest`) inside another format's folder: that
 * folder's parent is the other format's table, refused unless it is carved out whole with
 * --exclude-location. A scan of the name; no I/O. */
static int check_listed_other_format(plan *p, const char *loc, const char *rest)
{
    size_t offset;
    icm__other_format f = icm__other_format_in_path(rest, &offset);
    if (f == ICM__OTHER_FORMAT_NONE)
        return 0;
    char *upto = icm__strndup(loc, (size_t)(rest - loc) + offset);
    char *folder = upto != NULL ? icm__strndup(upto, icm__location_trim_len(upto)) : NULL;
    int rc = folder == NULL ? ICM_ENOMEM : 0;
    if (rc == 0 && !icm__orphan_excluded(p->o, folder))
        rc = icm__other_format_refuse(f, folder, offset > 0 ? carve_out_hint : NULL);
    icm__free(folder);
    icm__free(upto);
    return rc;
}

/* Remember a metadata file R does not name (or a hidden one), for
 * icm__orphans_check_other_tables. */
static int push_unreferenced_md(plan *p, const char *location)
{
    char *copy = icm__strdup(location);
    if (copy == NULL || icm__ptrvec_push(&p->unreferenced_md, copy) != 0) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    return 0;
}

/* A shard's stray (orphans_plan.h: shard_strays): a copy of the listed file, and whether
 * it came from the listing (may_stat). */
typedef struct stray {
    icm_file_info info; /* location owned */
    bool may_stat;
} stray;

static int push_stray(plan *p, const icm_file_info *info, bool may_stat)
{
    stray *s = icm__calloc(1, sizeof *s);
    char *copy = s != NULL ? icm__strdup(info->location) : NULL;
    if (copy == NULL || icm__ptrvec_push(&p->shard_strays, s) != 0) {
        icm__free(copy);
        icm__free(s);
        return ICM_ENOMEM;
    }
    *s = (stray){*info, may_stat};
    s->info.location = copy;
    return 0;
}

static void free_stray(void *item)
{
    stray *s = item;
    icm__free((char *)s->info.location);
    icm__free(s);
}

void icm__orphans_free_strays(plan *p)
{
    icm__ptrvec_dispose(&p->shard_strays, free_stray);
}

static int take_file(plan *p, const icm_file_info *info, bool may_stat,
                     const icm__okey_probe *probe);

int icm__orphans_take_strays(plan *p)
{
    int rc = 0;
    /* A snapshot's rows of one file are one candidate (icm__orphans_merge_rows): a stray's
     * rows (all of them strays: one key, one range) are merged as the others were. */
    bool snapshot = !icm__orphans_listed(p) && p->shard_strays.len > 0;
    icm__strset recent = ICM__STRSET_INIT;
    p->taking_strays = true;
    for (size_t i = 0; rc == 0 && i < p->shard_strays.len; i++) {
        const stray *s = p->shard_strays.items[i];
        rc = snapshot ? icm__orphans_take_row(p, &recent, &s->info, s->may_stat)
                      : take_file(p, &s->info, s->may_stat, NULL);
    }
    p->taking_strays = false;
    if (rc == 0 && snapshot)
        rc = icm__orphans_merge_rows(p, &recent, p->o->inventory != NULL
                                                     ? "the inventory report"
                                                     : "the file list");
    icm__strset_dispose(&recent);
    icm__orphans_free_strays(p);
    return rc;
}

/*
 * One listed file (or file-list line): classify, keep only orphans. Referenced, excluded and
 * hidden files are decided on the name alone. `may_stat`: the file came from the listing, so a
 * size or mtime it lacks can be asked for; a file-list line without an mtime stays unknown
 * (too recent: kept).
 */
static int take_file(plan *p, const icm_file_info *info, bool may_stat,
                     const icm__okey_probe *probe)
{
    icm_orphan_result *r = p->r;
    const char *rest;
    /* Outside the listing location (file lists), or a `.`/`..` segment: never a candidate. */
    if (!icm__orphans_below_root(p, info->location, &rest) || rest[0] == '\0') {
        if (!may_stat)
            p->file_list_outside++;
        return 0;
    }
    if (icm__orphans_is_lease_file(icm__basename(rest)))
        return 0;
    int rc;
    if (p->sharded && !p->taking_strays) {
        /* A file belongs to the shard whose range holds its key as listed (the listing's
         * span: a file-list line outside it is another shard's). One whose keep-set key (the
         * collapsed path) lies in another range is compared with R only once R holds the
         * references of that key too (icm__orphans_take_strays). */
        if (!icm__orphans_in_shard_range(p, rest))
            return 0;
        bool in;
        if ((rc = icm__orphans_in_shard(p, info->location, &in)) != 0)
            return rc;
        if (!in)
            return push_stray(p, info, may_stat);
    }
    r->listed++;
    rc = check_listed_other_format(p, info->location, rest);
    if (rc != 0)
        return rc;
    if (!icm__named_like_a_table_file(info->location)) {
        /* looked at by icm__orphans_check_catalog_stores */
        char *copy = icm__strdup(info->location);
        if (copy == NULL || icm__ptrvec_push(&p->unknown_files, copy) != 0) {
            icm__free(copy);
            return ICM_ENOMEM;
        }
    }
    if (icm__orphan_excluded(p->o, info->location)) {
        r->excluded++;
        return 0;
    }
    if (p->root_hidden || icm__orphans_hidden_path(p, rest)) {
        r->hidden++;
        /* Never a candidate, but a hidden metadata file (a nested table whose
         * write.metadata.path is `_metadata`) is still looked at for another table. */
        return icm__orphans_is_metadata_json(icm__basename(info->location))
                   ? push_unreferenced_md(p, info->location)
                   : 0;
    }
    icm__okey_match m = ICM__OKEY_NONE;
    size_t origin = 0;
    bool is_doc = false;
    if (probe != NULL && probe->ready)
        m = icm__okeys_probe_match(&p->keys, probe, &origin);
    if (probe != NULL && probe->ready && m != ICM__OKEY_CONFLICT) {
        is_doc = m == ICM__OKEY_EXACT && p->metadata_docs != NULL &&
                 icm__pathset_contains_hash(p->metadata_docs, probe->hash);
    } else {
        /* No probe, or a conflict, whose message needs this file's own scheme and authority
         * in the key scratch: the one-step lookup. */
        if ((rc = icm__okeys_lookup(&p->keys, info->location, &m, &origin)) != 0)
            return rc;
        size_t len;
        const void *key = icm__okeys_last_key(&p->keys, &len);
        is_doc = m == ICM__OKEY_EXACT && p->metadata_docs != NULL &&
                 icm__pathset_contains_key(p->metadata_docs, key, len);
    }
    if (m == ICM__OKEY_EXACT) {
        r->referenced_listed++;
        if (!is_doc)
            mark_found(p, probe);
        return 0;
    }
    if (m == ICM__OKEY_CONFLICT) {
        r->conflicts++;
        if ((rc = record_conflict(p, origin)) != 0)
            return rc;
        if (p->o->prefix_mismatch != ICM_PREFIX_MISMATCH_DELETE)
            return 0;
    } else if (icm__orphans_is_metadata_json(icm__basename(info->location))) {
        if ((rc = push_unreferenced_md(p, info->location)) != 0)
            return rc;
    }
    icm_file_info known = *info;
    if (may_stat && (info->mtime_ms < 0 || info->size_bytes < 0)) {
        bool gone;
        if ((rc = stat_candidate(p, info, &known, &gone)) != 0)
            return rc;
        if (gone)
            return 0; /* still counted as listed: the listing did give it */
    }
    if (known.mtime_ms < 0 || known.mtime_ms >= p->cutoff) {
        r->too_recent++;
        return 0;
    }
    if (!icm__orphans_inside_roots(p, known.location))
        return 0; /* cannot happen below list_root; checked again before deleting */
    if (icm__catalog_guard_protects(&p->guard, known.location))
        return 0; /* a file the catalog lives in (issue #16, class 2) */
    return push_orphan(p, &known);
}

int icm__orphans_take_listed(plan *p, const icm_file_info *info, bool may_stat)
{
    return take_file(p, info, may_stat, NULL);
}

/* A batch of listed names (the listing's, or file-list lines: `may_stat` as take_file's): each
 * name's key is built and hashed PROBE_AHEAD names before it is classified, and its slot asked
 * for, so the keep set's memory has arrived by then (icm__okeys_probe; the answers are
 * icm__okeys_lookup's). */
#define PROBE_AHEAD 8

static int classify_batch(plan *p, const icm_file_info *files, size_t n, bool may_stat,
                          icm__strset *recent)
{
    icm__okey_probe probes[PROBE_AHEAD];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n && i < PROBE_AHEAD; i++)
        rc = icm__okeys_probe(&p->keys, files[i].location, &probes[i]);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        icm__okey_probe now = probes[i % PROBE_AHEAD];
        if (i + PROBE_AHEAD < n)
            rc = icm__okeys_probe(&p->keys, files[i + PROBE_AHEAD].location,
                                  &probes[i % PROBE_AHEAD]);
        size_t too_recent = p->r->too_recent;
        if (rc == 0)
            rc = take_file(p, &files[i], may_stat, &now);
        if (rc == 0 && recent != NULL && p->r->too_recent != too_recent)
            rc = icm__orphans_remember_recent(p, recent, files[i].location);
    }
    return rc;
}

/* The listing's callback, a batch of names at a time. */
int icm__orphans_on_listed(const icm_file_info *files, size_t n, void *payload)
{
    return classify_batch(payload, files, n, true, NULL);
}

/* Parse an optional integer field: "" or "-1" is unknown (-1). Plain digits (every line of an
 * inventory) are read here; anything else takes strtoll's reading, as it always did. */
static bool parse_field(const char *s, size_t n, int64_t *out)
{
    if (n == 0) {
        *out = -1;
        return true;
    }
    if (n <= 18) { /* 18 digits cannot overflow int64_t */
        int64_t v = 0;
        size_t i = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            v = v * 10 + (s[i++] - '0');
        if (i == n) {
            *out = v;
            return true;
        }
    }
    char tmp[32];
    if (n >= sizeof tmp)
        return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end = NULL;
    long long v = strtoll(tmp, &end, 10);
    if (end == tmp || *end != '\0' || v < -1)
        return false;
    *out = (int64_t)v;
    return true;
}

/* One `path<TAB>size<TAB>mtime_ms` line (without its newline, NUL-terminated at the path's
 * end on success) into *info (borrowing `line`). A blank line is *blank. A NUL byte is refused:
 * the path, a C string, would end there and name another file than the line does. */
static int parse_file_list_line(plan *p, char *line, size_t len, long lineno,
                                icm_file_info *info, bool *blank)
{
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    *blank = len == 0;
    if (len == 0)
        return 0;
    char *t1 = memchr(line, '\t', len);
    char *t2 = t1 != NULL ? memchr(t1 + 1, '\t', len - (size_t)(t1 + 1 - line)) : NULL;
    *info = (icm_file_info){sizeof(icm_file_info), line, -1, -1};
    if (t1 == NULL || t2 == NULL || t1 == line || memchr(t2 + 1, '\t', len - (size_t)(t2 + 1 - line)) ||
        memchr(line, '\0', len) != NULL ||
        !parse_field(t1 + 1, (size_t)(t2 - t1 - 1), &info->size_bytes) ||
        !parse_field(t2 + 1, len - (size_t)(t2 + 1 - line), &info->mtime_ms))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, p->o->file_list,
                              "line %ld: expected path<TAB>size<TAB>mtime_ms (integers; empty "
                              "or -1 = unknown)", lineno);
    *t1 = '\0';
    return 0;
}

/* File-list lines as listed files, a batch at a time (ctx: the too-recent set of
 * icm__orphans_take_row: a file list is a snapshot, one candidate per file). */
static int take_file_list_batch(plan *p, const icm_file_info *files, size_t n, void *ctx)
{
    return classify_batch(p, files, n, false, ctx);
}

/*
 * Stream the file list through `on_batch` (an inventory may be huge: 100M lines are about 10
 * GB): read in blocks of FILE_LIST_BLOCK bytes, split into lines in place, and handed over
 * FILE_LIST_BATCH lines at a time, borrowed until on_batch returns (a batch never spans two
 * blocks: the line begun at a block's end is moved to the front before the next read). A line
 * longer than the block grows it. Lines before a malformed one are handed over first, so the
 * error is the same whatever the batch boundaries.
 */
#define FILE_LIST_BLOCK ((size_t)1 << 20)
#define FILE_LIST_BATCH 4096

typedef int (*file_list_batch_fn)(plan *p, const icm_file_info *files, size_t n, void *ctx);

static int read_file_list_lines(plan *p, file_list_batch_fn on_batch, void *ctx)
{
    FILE *f = fopen(p->o->file_list, "r");
    if (f == NULL)
        return icm__error_set_errno(ICM_ERRCLASS_OS, icm__errno_to_code(errno), errno,
                                    p->o->file_list, "cannot open the file list");
    size_t cap = FILE_LIST_BLOCK, have = 0;
    char *block = icm__malloc(cap);
    icm_file_info *batch = icm__reallocarray(NULL, FILE_LIST_BATCH, sizeof *batch);
    long lineno = 0;
    bool at_end = false;
    int rc = block != NULL && batch != NULL ? 0 : ICM_ENOMEM;
    while (rc == 0) {
        size_t got = fread(block + have, 1, cap - have, f);
        have += got;
        if (have < cap) {
            if (ferror(f)) {
                rc = icm__error_set(ICM_ERRCLASS_OS, ICM_EIO, p->o->file_list,
                                    "read error in the file list");
                break;
            }
            at_end = true; /* fread stops short only at the end or on an error */
        }
        size_t start = 0, n = 0;
        int line_rc = 0;
        while (line_rc == 0 && start < have) {
            char *line = block + start;
            char *nl = memchr(line, '\n', have - start);
            if (nl == NULL && !at_end)
                break; /* the rest of this line comes with the next read */
            size_t len = nl != NULL ? (size_t)(nl - line) : have - start;
            start += len + (nl != NULL);
            lineno++;
            bool blank = true;
            line_rc = parse_file_list_line(p, line, len, lineno, &batch[n], &blank);
            if (line_rc == 0 && !blank && ++n == FILE_LIST_BATCH) {
                line_rc = on_batch(p, batch, n, ctx);
                n = 0;
            }
        }
        if (n > 0 && (rc = on_batch(p, batch, n, ctx)) != 0)
            break;
        if ((rc = line_rc) != 0 || at_end)
            break;
        memmove(block, block + start, have - start);
        have -= start;
        if (have == cap) { /* one line fills the block: make room for the rest of it */
            char *grown = cap <= SIZE_MAX / 2 ? icm__realloc(block, cap * 2) : NULL;
            if (grown == NULL) {
                rc = ICM_ENOMEM;
                break;
            }
            block = grown;
            cap *= 2;
        }
    }
    icm__free(batch);
    icm__free(block);
    fclose(f);
    return rc;
}

int icm__orphans_read_file_list(plan *p)
{
    /* a file list is a snapshot as an inventory is: one candidate per file */
    icm__strset recent = ICM__STRSET_INIT;
    int rc = read_file_list_lines(p, take_file_list_batch, &recent);
    if (rc == 0)
        rc = icm__orphans_merge_rows(p, &recent, "the file list");
    icm__strset_dispose(&recent);
    /* An inventory of a whole bucket names other tables' files too: say how many were left
     * out, so a path form that never matches (every line outside) does not go unnoticed. */
    if (rc == 0 && p->file_list_outside > 0)
        rc = icm__orphan_warn(p->r,
                              "%s: %zu line%s of the file list name%s no file below it (or a "
                              "path with a `.` or `..` segment); not part of this sweep",
                              p->list_root, p->file_list_outside,
                              p->file_list_outside == 1 ? "" : "s",
                              p->file_list_outside == 1 ? "s" : "");
    return rc;
}

/* ---- a reviewed plan's files: the only candidates (options.exact_file_list) ---- */

typedef struct planned_file {
    char *path;
    int64_t size_bytes, mtime_ms;
} planned_file;

typedef struct planned_files {
    planned_file *items;
    size_t len, cap;
} planned_files;

static int collect_planned_one(planned_files *v, const icm_file_info *info)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        planned_file *grown = icm__reallocarray(v->items, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        v->items = grown;
        v->cap = cap;
    }
    char *copy = icm__strdup(info->location);
    if (copy == NULL)
        return ICM_ENOMEM;
    v->items[v->len++] = (planned_file){copy, info->size_bytes, info->mtime_ms};
    return 0;
}

static int collect_planned(plan *p, const icm_file_info *files, size_t n, void *ctx)
{
    (void)p;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = collect_planned_one(ctx, &files[i]);
    return rc;
}

static int cmp_planned(const void *a, const void *b)
{
    return strcmp(((const planned_file *)a)->path, ((const planned_file *)b)->path);
}

/*
 * Apply a reviewed plan on top of an ordinary listing: the location was listed as a sweep
 * lists it, so every check that looks at what lies there (other tables' metadata however
 * placed, other formats' logs, catalog stores, the presence of every referenced file) ran on
 * storage as it is now, not on the plan's names alone (adversary round 22, F1/F2: a Delta log
 * or another table's metadata beside planned files went unseen when only the plan was read).
 * Then every candidate the plan does not name, or names without a size and time, stops being
 * one (it stays), and the others carry the plan's size and modification time: the check right
 * before each delete compares storage with those, so a file changed since the plan was made
 * is kept ("changed since it was listed"). A planned file the listing does not show as a
 * candidate (referenced again, too recent, gone) was never one here.
 */
int icm__orphans_keep_only_planned(plan *p)
{
    planned_files v = {NULL, 0, 0};
    int rc = read_file_list_lines(p, collect_planned, &v);
    if (rc == 0 && v.len > 1) /* (none in this range: no array at all) */
        qsort(v.items, v.len, sizeof *v.items, cmp_planned);
    icm_orphan_result *r = p->r;
    size_t kept = 0;
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++) {
        icm_orphan_file *f = &r->orphans[i];
        planned_file key = {f->path, 0, 0};
        const planned_file *m = v.len > 0 ? bsearch(&key, v.items, v.len, sizeof *v.items,
                                                    cmp_planned)
                                          : NULL;
        if (m != NULL && m->size_bytes >= 0 && m->mtime_ms >= 0) {
            f->size_bytes = m->size_bytes;
            f->mtime_ms = m->mtime_ms;
            r->orphans[kept++] = *f;
            continue;
        }
        icm__free(f->path);
        icm__free(f->error_message);
    }
    if (rc == 0)
        r->orphan_count = kept;
    for (size_t i = 0; i < v.len; i++)
        icm__free(v.items[i].path);
    icm__free(v.items);
    return rc;
}

/* ---- a shard's candidates in another format's folder ---- */

int icm__orphans_check_shard_folders(plan *p)
{
    icm__strset looked = ICM__STRSET_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->r->orphan_count; i++) {
        const char *loc = p->r->orphans[i].path, *rest;
        if (!icm__orphans_below_root(p, loc, &rest))
            continue; /* never a candidate (take_file) */
        /* Every folder from just below list_root (checked before the listing) down to the
         * candidate's own; each once, and the first already looked at ends the walk up. */
        for (const char *slash = strrchr(rest, '/'); rc == 0 && slash != NULL;) {
            size_t len = (size_t)(slash - loc);
            bool added = false;
            if ((rc = icm__strset_add(&looked, loc, len, &added)) != 0 || !added)
                break;
            char *folder = icm__strndup(loc, len);
            if (folder == NULL)
                rc = ICM_ENOMEM;
            else if (!icm__orphan_excluded(p->o, folder))
                rc = icm__other_format_check_folder(p->io, folder);
            icm__free(folder);
            while (slash > rest && *--slash != '/')
                ;
            if (slash == rest)
                slash = NULL;
        }
    }
    icm__strset_dispose(&looked);
    return rc;
}

/* ---- an unsharded listing's candidates in a trash it read before a journal was written ---- */

int icm__orphans_check_trash_folders(plan *p)
{
    if (p->r->orphan_count == 0)
        return 0;
    /* list_root and the folders above it (checked before the listing too) */
    int rc = icm__other_format_check_trash_above(p->io, p->list_root);
    icm__strset looked = ICM__STRSET_INIT;
    for (size_t i = 0; rc == 0 && i < p->r->orphan_count; i++) {
        const char *loc = p->r->orphans[i].path, *rest;
        if (!icm__orphans_below_root(p, loc, &rest))
            continue; /* never a candidate (take_file) */
        /* each folder below list_root on the way to the candidate that is named like a UUID
         * (the file's own name is not a folder) */
        for (const char *s = rest, *slash; rc == 0 && (slash = strchr(s, '/')) != NULL;
             s = slash + 1) {
            if (!icm__other_format_uuid_shaped(s, (size_t)(slash - s)))
                continue;
            size_t len = (size_t)(slash - loc);
            bool added = false;
            if ((rc = icm__strset_add(&looked, loc, len, &added)) != 0 || !added)
                continue;
            char *folder = icm__strndup(loc, len);
            char *trash = folder != NULL ? icm__strndup(loc, (size_t)(s - loc)) : NULL;
            if (trash != NULL)
                trash[icm__location_trim_len(trash)] = '\0';
            if (trash == NULL)
                rc = ICM_ENOMEM;
            else if (!icm__orphan_excluded(p->o, trash))
                rc = icm__other_format_check_trash_folder(p->io, folder,
                                                          s > rest ? carve_out_hint : NULL);
            icm__free(trash);
            icm__free(folder);
        }
    }
    icm__strset_dispose(&looked);
    return rc;
}

/* ---- the rest of the location, as a shard sees it: names only ---- */

/* Whether `loc` lies directly in one of the table's metadata folders: those are listed and
 * looked at by icm__newer_commits_check in every run, sharded or not (another table's or an
 * unreadable file there refuses), so a shard need not read the table's own history again. */
static int in_own_metadata_folder(const plan *p, const char *loc, bool *in)
{
    *in = false;
    const char *name = icm__basename(loc);
    if (name == loc)
        return 0;
    char *dir = icm__strndup(loc, (size_t)(name - loc - 1));
    if (dir == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < p->n_md_dirs && !*in; i++)
        *in = p->md_dirs[i] != NULL && icm__location_equal(dir, p->md_dirs[i]);
    icm__free(dir);
    return 0;
}

/* One name outside the shard's range: what the unsharded listing would refuse over by the
 * name (another format's folder) or look into (a `*.metadata.json`, gzip'd or not). */
int icm__orphans_take_outside_name(plan *p, const icm_file_info *info)
{
    const char *rest;
    if (!icm__orphans_below_root(p, info->location, &rest) || rest[0] == '\0' ||
        icm__orphans_in_shard_range(p, rest))
        return 0; /* the shard's own listing took it */
    int rc = check_listed_other_format(p, info->location, rest);
    if (rc != 0 || icm__orphan_excluded(p->o, info->location))
        return rc;
    bool hidden = p->root_hidden || icm__orphans_hidden_path(p, rest);
    if (!hidden) {
        /* A name R holds exactly (the table's metadata files are in every shard's R): the
         * listing names files as the metadata does (icm__orphans_check_path_form), and the
         * file is the table's own. Counted as take_file counts referenced_listed. */
        icm__okey_match m = ICM__OKEY_NONE;
        size_t origin = 0;
        if ((rc = icm__okeys_lookup(&p->keys, info->location, &m, &origin)) != 0)
            return rc;
        if (m == ICM__OKEY_EXACT) {
            p->outside_referenced_listed++;
            return 0;
        }
    }
    if (!icm__orphans_is_metadata_json(icm__basename(rest)))
        return 0;
    bool own = false;
    if ((rc = in_own_metadata_folder(p, info->location, &own)) != 0 || own)
        return rc;
    /* R holds only the range's references (and the table's metadata files), so whether the
     * table references this file is not known here: it is looked at as if it did not. The
     * table's own metadata is told apart by its table-uuid (noted, never refused); only
     * another table's, or one that cannot be read and is older than the cutoff, refuses, as
     * in the unsharded run. */
    return push_unreferenced_md(p, info->location);
}

static int on_outside_listed(const icm_file_info *files, size_t n, void *payload)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = icm__orphans_take_outside_name(payload, &files[i]);
    return rc;
}

static int take_outside_lines(plan *p, const icm_file_info *files, size_t n, void *ctx)
{
    (void)ctx;
    return on_outside_listed(files, n, p);
}

int icm__orphans_scan_outside_range(plan *p)
{
    /* A file list's lines or an inventory report's rows outside the range, read again. */
    if (!icm__orphans_listed(p))
        return p->o->inventory == NULL ? read_file_list_lines(p, take_outside_lines, NULL)
                                       : icm__orphans_inventory_outside_range(p);
    char *after = NULL, *upto = NULL;
    int rc = 0;
    if (!p->shard_empty) {
        if (p->shard_after != NULL &&
            (upto = icm__location_join(p->list_root, p->shard_after)) == NULL)
            rc = ICM_ENOMEM;
        if (rc == 0 && p->shard_upto != NULL &&
            (after = icm__location_join(p->list_root, p->shard_upto)) == NULL)
            rc = ICM_ENOMEM;
    }
    /* Before the range (up to and including shard_after), then after it; an empty range: the
     * whole location at once. A range open at both ends leaves nothing outside it. */
    if (rc == 0 && (p->shard_empty || upto != NULL))
        rc = icm__fileio_list_ahead_span(p->io, p->list_root, ICM_LIST_STAT_OPTIONAL, NULL,
                                         upto, NULL, 0, on_outside_listed, p);
    if (rc == 0 && !p->shard_empty && after != NULL)
        rc = icm__fileio_list_ahead_span(p->io, p->list_root, ICM_LIST_STAT_OPTIONAL, after,
                                         NULL, NULL, 0, on_outside_listed, p);
    icm__free(after);
    icm__free(upto);
    return rc;
}
