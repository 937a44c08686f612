/*
 * maint/reach_walk.c: the reachability walk (keepset.h): which manifest lists, manifests, live
 * entries and statistics files chosen snapshots reach, and the report of what could not be read.
 *
 * Invariant: the callback sees exactly what one thread reading every chosen list, and each new
 * manifest's live entries right after it, in metadata order, then the statistics, would hand it
 * (same files, kinds, sizes, snapshots, order). tests/unit/test_reach_walk.c checks, generated.
 *
 * Read-only by construction: the only storage calls here are manifest-list and manifest reads.
 *
 * Unreadable files. A walk never stops at a manifest list or manifest it cannot read; it records
 * the failure and goes on, so a caller sees every problem at once. What a failure means is the
 * caller's decision. Expiry's rule (expire_plan.c): a retained manifest list that cannot be read
 * hides which manifests and files it keeps, so no manifest, data file or delete file may be
 * deleted; a retained manifest that cannot be read hides which files it keeps, so no data or
 * delete file may be deleted.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "icemaint/manifest.h"
#include "maint/keepset.h"
#include "maint/list_row_guess.h"
#include "spec/metadata_internal.h"
#include "manifest/bulk_reader.h"
#include "util/location.h"
#include "util/location_id.h"
#include "util/strset.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* report                                                                                      */

void icm__reach_report_dispose(icm__reach_report *report)
{
    if (report == NULL)
        return;
    for (size_t i = 0; i < report->failure_count; i++) {
        icm__free(report->failures[i].location);
        icm__free(report->failures[i].message);
    }
    icm__free(report->failures);
    memset(report, 0, sizeof *report);
}

bool icm__reach_report_has_failure(const icm__reach_report *report, bool lists_only)
{
    for (size_t i = 0; i < report->failure_count; i++)
        if (!lists_only || report->failures[i].is_manifest_list)
            return true;
    return false;
}

/* Record that `location` could not be read, with `message` (the read's last error). */
static int record_failure(icm__reach_report *report, const char *location, bool is_list, int code,
                          const char *message)
{
    icm__reach_failure *grown = icm__reallocarray(report->failures, report->failure_count + 1,
                                                  sizeof *grown);
    if (grown == NULL)
        return ICM_ENOMEM;
    report->failures = grown;
    icm__reach_failure *f = &grown[report->failure_count];
    f->location = icm__strdup(location);
    f->message = icm__strdup(message);
    f->is_manifest_list = is_list;
    f->code = code;
    if (f->location == NULL || f->message == NULL) {
        icm__free(f->location);
        icm__free(f->message);
        return ICM_ENOMEM;
    }
    report->failure_count++;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* walk                                                                                        */

/*
 * A walk runs in two passes. The first decodes the chosen snapshots' manifest lists on this
 * thread, while a second thread reads and inflates the next few lists ahead, and writes down,
 * in order, what the walk reaches and reads: a file reached, a manifest list that could not be
 * read, or "the entries of the next manifest to read". The second pass goes through those
 * notes in order and hands each reached file to the callback, while the manifests whose
 * entries are wanted are decoded ahead on a second thread (manifest/bulk_reader.h). The callback sees
 * exactly the files, in exactly the order, and the report gets exactly the failures, in the
 * order, that reading everything on one thread in a single pass gives. Files are read in a
 * fixed order: the lists in walk order, then the manifests in walk order.
 */
typedef enum note_kind {
    NOTE_REACHED,      /* location was reached as `kind` */
    NOTE_LIST_FAILURE, /* the manifest list `location` could not be read */
    NOTE_ENTRIES       /* the live entries of the next manifest in walk.to_read */
} note_kind;

typedef struct note {
    note_kind what;
    icm__file_kind kind;
    int code;           /* NOTE_LIST_FAILURE */
    int64_t size_bytes;
    int64_t snapshot_id;
    char *location;     /* NOTE_REACHED, NOTE_LIST_FAILURE */
    char *message;      /* NOTE_LIST_FAILURE */
} note;

/* A manifest, by its number in seen_keys (each spelling of its path maps to it: spelling[]):
 * the live entries (ADDED and EXISTING) by content (0 data, 1 deletes) that the first row
 * naming it counts, the row whose counts its own read checks (icm__manifest_check_list_row),
 * so a later row, in whatever spelling, cannot count otherwise; not counted for an embedded
 * v1 manifest or a row without both counts (what it holds is known once its entries are
 * read). Its index in to_read (SIZE_MAX: entries not read), and in to_count (SIZE_MAX: none),
 * the count-less manifests whose entries the walk does not read but a list's judgement needs
 * (read and counted only). `judged`: the last list (judge_list's count) that counted it, so a
 * list naming it twice counts it once. */
typedef struct manifest_facts {
    uint64_t live[2];
    bool counted;
    size_t to_read, to_count;
    size_t judged;
} manifest_facts;

/* A list with rows whose counts only the manifests' entries tell: the counted rows' sum, and
 * pending_manifests[first, first + n) the manifests of the others. */
typedef struct pending_list {
    const icm_snapshot *snapshot;
    uint64_t live[2];
    size_t first, n;
} pending_list;

/* A list's rows' manifests (numbers in seen_keys) as a change to the list walked before it
 * (so a long history of lists sharing most manifests costs what changes): members[first,
 * first + added) joined, members[first + added, first + added + removed) left. */
typedef struct list_members {
    const icm_snapshot *snapshot;
    size_t first, added, removed;
} list_members;

typedef struct walk {
    icm_fileio *io;
    const icm_table_metadata *md;
    const icm__reach_options *opts;
    icm__reach_cb cb;
    void *payload;
    icm__reach_report *report;
    /* Each unique manifest is handled once. A long history lists the same manifest in many
     * manifest lists, so the common case is one exact lookup of the path as written; only a
     * new spelling is normalised and looked up by its key (`file:/m` and `/m` are one
     * manifest). Both sets are exact: a hash collision can never skip a manifest. */
    icm__strset seen_written;
    icm__strset seen_keys;
    icm__row_order rows;                  /* guesses seen_written's answer from the list before */
    icm__manifest_bulk bulk;      /* the files' reader: one writer's schema is parsed once,
                                     not per file; the table's format version the fallback
                                     for files without a header */
    icm__manifest_refs *collect;  /* NULL, or where unique manifests are remembered */
    int64_t snapshot_id;          /* the snapshot being walked */
    int stop_rc;                  /* a callback's stop value or ENOMEM: ends the walk */
    note *notes;                  /* the first pass's notes, in walk order */
    size_t n_notes, notes_cap;
    icm__manifest_refs to_read;   /* manifests whose entries the second pass reads, in order */
    /* What the walk knows of each manifest, to judge each list against its snapshot's summary
     * (judge_list): by the path's number in seen_written, and by the manifest's in seen_keys. */
    size_t *spelling;             /* by seen_written number: the manifest's seen_keys number */
    size_t n_spellings, spellings_cap;
    size_t lists_judged;
    manifest_facts *manifests;
    size_t n_manifests, manifests_cap;
    uint64_t (*read_live)[2];     /* by to_read index: the live entries read, by content */
    bool *read_whole;             /* by to_read index: the manifest was read without failure */
    icm__manifest_refs to_count;  /* see manifest_facts */
    bool filtered;                /* entries decoded through a filter: their kinds unknown */
    struct twice_slot {
        uint64_t hash;
        size_t entry;             /* SIZE_MAX: empty */
    } *twice;                     /* named_twice's table, kept for the next manifest */
    size_t twice_cap;
    uint64_t (*count_live)[2];    /* by to_count index, as read_live */
    bool *count_whole;
    pending_list *pending;        /* lists judged once their manifests have been read */
    size_t n_pending, pending_cap;
    size_t *pending_manifests;    /* their count-less rows' manifests (numbers in seen_keys) */
    size_t n_pending_manifests, pending_manifests_cap;
    /* judge_snapshots: each walked list's manifests, and the hashes of the paths of every
     * manifest read whole (hash_span by to_read index; SIZE_MAX: not read whole). */
    bool judging;
    list_members *lists;
    size_t n_lists, lists_cap;
    size_t *members;
    size_t n_members, members_cap;
    size_t *prev, *cur;           /* the last list's rows' manifests (numbers), this one's */
    size_t n_prev, prev_cap, cur_cap;
    int32_t *delta;               /* by number: note_members's count (0 between calls) */
    size_t delta_cap;
    uint64_t *hashes;
    size_t n_hashes, hashes_cap;
    size_t (*hash_span)[2];       /* by to_read index: [first, end) of its hashes */
} walk;

/* Hand a reached file to the callback. */
static int deliver(walk *w, const char *location, icm__file_kind kind, int64_t size_bytes)
{
    icm__reached r = {location, kind, size_bytes, w->snapshot_id, -1, ICM_FILE_FORMAT_OTHER, 0,
                      INT64_MIN, {NULL, 0}, {NULL, 0}, {0, 0}, NULL, 0, 0};
    int rc = w->cb(&r, w->payload);
    if (rc != 0)
        w->stop_rc = rc;
    return rc;
}

/* The snapshot that added an entry's file: as written, else inherited (spec "Snapshot ID
 * Inheritance": a v1 snapshot's embedded manifests from that snapshot, others from the list's
 * added_snapshot_id); INT64_MIN when neither says. */
static int64_t entry_added_by(const icm__manifest_ref *r, const icm__ahead_entry *e)
{
    return e->has_snapshot_id            ? e->snapshot_id
           : r->embedded_v1              ? r->snapshot_id
           : r->mf.has_added_snapshot_id ? r->mf.added_snapshot_id
                                         : INT64_MIN;
}

/* Hand a live entry's file (of the manifest `r`) to the callback. */
static int deliver_entry(walk *w, const icm__manifest_ref *r, const char *locations,
                         const icm__ahead_entry *e)
{
    const char *location = locations + e->location_offset;
    bool blob = e->content_offset > 0 && e->content_size_in_bytes > 0;
    icm__reached f = {location, e->kind, e->size_bytes, w->snapshot_id,
                      e->record_count, e->file_format, e->bounds, entry_added_by(r, e),
                      {NULL, 0}, {NULL, 0}, e->partition, NULL,
                      blob ? e->content_offset : 0, blob ? e->content_size_in_bytes : 0};
    if (e->lower_bounds_len > 0 || e->upper_bounds_len > 0 || e->has_referenced_data_file) {
        /* (what was kept lies after the location's NUL: bounds, then the referenced file) */
        const uint8_t *kept = (const uint8_t *)location + strlen(location) + 1;
        f.lower_bounds = (icm_raw){kept, e->lower_bounds_len};
        f.upper_bounds = (icm_raw){kept + e->lower_bounds_len, e->upper_bounds_len};
        if (e->has_referenced_data_file)
            f.referenced_data_file =
                (const char *)kept + e->lower_bounds_len + e->upper_bounds_len;
    }
    int rc = w->cb(&f, w->payload);
    if (rc != 0)
        w->stop_rc = rc;
    return rc;
}

static note *add_note(walk *w, note_kind what)
{
    if (w->n_notes == w->notes_cap) {
        size_t cap = w->notes_cap ? w->notes_cap * 2 : 64;
        note *grown = icm__reallocarray(w->notes, cap, sizeof *grown);
        if (grown == NULL) {
            w->stop_rc = ICM_ENOMEM;
            return NULL;
        }
        w->notes = grown;
        w->notes_cap = cap;
    }
    note *n = &w->notes[w->n_notes++];
    memset(n, 0, sizeof *n);
    n->what = what;
    n->snapshot_id = w->snapshot_id;
    return n;
}

/* First pass: note a reached file for the second pass. */
static int emit(walk *w, const char *location, icm__file_kind kind, int64_t size_bytes)
{
    note *n = add_note(w, NOTE_REACHED);
    if (n == NULL || (n->location = icm__strdup(location)) == NULL) {
        w->stop_rc = ICM_ENOMEM;
        return ICM_ENOMEM;
    }
    n->kind = kind;
    n->size_bytes = size_bytes;
    return 0;
}

static void notes_dispose(walk *w)
{
    for (size_t i = 0; i < w->n_notes; i++) {
        icm__free(w->notes[i].location);
        icm__free(w->notes[i].message);
    }
    icm__free(w->notes);
    w->notes = NULL;
    w->n_notes = w->notes_cap = 0;
}

/* What a read's result means for the walk: a stop (already set) or ENOMEM ends it (returns
 * false, *rc the walk's result); 0 needs nothing; any other failure is to be recorded (returns
 * true). */
static bool read_failed(walk *w, int *rc)
{
    if (w->stop_rc != 0) {
        *rc = w->stop_rc;
        return false;
    }
    if (*rc == ICM_ENOMEM)
        w->stop_rc = *rc;
    return *rc != 0 && *rc != ICM_ENOMEM;
}

/* After a manifest read: record a failure with the calling thread's last error. */
static int settle_manifest(walk *w, int rc, const char *location)
{
    if (!read_failed(w, &rc))
        return rc;
    int rrc = record_failure(w->report, location, false, rc, icm_error_last()->message);
    if (rrc != 0)
        w->stop_rc = rrc;
    return rrc;
}

/* After a manifest-list read (first pass): note a failure, to be recorded in its place by the
 * second pass. */
static int settle_list(walk *w, int rc, const char *location)
{
    if (!read_failed(w, &rc))
        return rc;
    note *n = add_note(w, NOTE_LIST_FAILURE);
    if (n == NULL || (n->location = icm__strdup(location)) == NULL ||
        (n->message = icm__strdup(icm_error_last()->message)) == NULL) {
        w->stop_rc = ICM_ENOMEM;
        return ICM_ENOMEM;
    }
    n->code = rc;
    return 0;
}

/* Whether this manifest's entries are to be read. */
static int wants_entries(walk *w, const char *path, bool *out)
{
    *out = w->opts->read_entries;
    if (!*out || w->opts->skip_entries_of == NULL)
        return 0;
    bool skip;
    int rc = icm__pathset_contains(w->opts->skip_entries_of, path, &skip);
    if (rc != 0)
        return rc;
    *out = !skip;
    return 0;
}

/* Append a copy of a manifest's list entry (or, for an embedded v1 manifest, just its path),
 * without the raw spans that point into the reader's buffers. */
static int remember(walk *w, icm__manifest_refs *refs, const icm_manifest_file *mf,
                    const char *path)
{
    if (refs->len == refs->cap) {
        size_t cap = refs->cap ? refs->cap * 2 : 64;
        icm__manifest_ref *grown = icm__reallocarray(refs->items, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        refs->items = grown;
        refs->cap = cap;
    }
    icm__manifest_ref *r = &refs->items[refs->len];
    memset(r, 0, sizeof *r);
    if (mf != NULL)
        r->mf = *mf;
    r->mf.partitions = (icm_raw){NULL, 0};
    r->mf.key_metadata = (icm_raw){NULL, 0};
    char *copy = icm__strdup(path);
    if (copy == NULL)
        return ICM_ENOMEM;
    r->mf.manifest_path = copy;
    r->mf.manifest_path_len = strlen(copy);
    r->embedded_v1 = mf == NULL;
    r->snapshot_id = w->snapshot_id;
    refs->len++;
    return 0;
}

/* Room for one more of an array of `size` byte items, *cap of them allocated. */
static bool grow(void *items_p, size_t len, size_t *cap, size_t size)
{
    void **items = items_p;
    if (len < *cap)
        return true;
    size_t want = *cap ? *cap * 2 : 64;
    void *grown = icm__reallocarray(*items, want, size);
    if (grown == NULL)
        return false;
    *items = grown;
    *cap = want;
    return true;
}

/* A new spelling of manifest `number` (new to the walk when `first`: what its row counts, mf
 * NULL for an embedded v1 manifest). Spellings are numbered in the order seen_written first
 * holds them, so the new one is spelling[n_spellings]. */
static int note_spelling(walk *w, const icm_manifest_file *mf, size_t number, bool first)
{
    if (first) {
        if (!grow(&w->manifests, w->n_manifests, &w->manifests_cap, sizeof *w->manifests))
            return ICM_ENOMEM;
        manifest_facts *f = &w->manifests[w->n_manifests++];
        memset(f, 0, sizeof *f);
        f->to_read = f->to_count = SIZE_MAX;
        f->counted = mf != NULL && mf->has_added_files_count && mf->has_existing_files_count &&
                     mf->added_files_count >= 0 && mf->existing_files_count >= 0;
        if (f->counted)
            f->live[mf->content == ICM_MANIFEST_CONTENT_DELETES ? 1 : 0] =
                (uint64_t)mf->added_files_count + (uint64_t)mf->existing_files_count;
    }
    if (!grow(&w->spelling, w->n_spellings, &w->spellings_cap, sizeof *w->spelling))
        return ICM_ENOMEM;
    w->spelling[w->n_spellings++] = number;
    return 0;
}

/* Report a manifest once (mf NULL for an embedded v1 manifest) and, on its first sighting,
 * note that its entries are to be read when they are wanted. */
static int sight_manifest(walk *w, const icm_manifest_file *mf, const char *path,
                          int64_t size_bytes)
{
    bool first = false, new_spelling = false, read = false;
    size_t plen = strlen(path), off, id, number = 0;
    int rc = icm__strset_put(&w->seen_written, path, plen, &new_spelling, &off, &id);
    if (rc == 0)
        icm__rows_note(&w->rows, off, plen, id);
    if (rc == 0 && new_spelling) {
        char *key = NULL;
        rc = icm__location_key(path, &key);
        if (rc == 0)
            rc = icm__strset_add_numbered(&w->seen_keys, key, strlen(key), &first, &number);
        icm__free(key);
        if (rc == 0)
            rc = note_spelling(w, mf, number, first);
    }
    if (rc == 0 && first && w->collect != NULL)
        rc = remember(w, w->collect, mf, path);
    if (rc == 0 && first)
        rc = emit(w, path, ICM__FILE_MANIFEST, size_bytes);
    if (rc == 0 && first)
        rc = wants_entries(w, path, &read);
    if (rc == 0 && read) {
        w->manifests[number].to_read = w->to_read.len;
        rc = remember(w, &w->to_read, mf, path);
        if (rc == 0 && add_note(w, NOTE_ENTRIES) == NULL)
            rc = ICM_ENOMEM;
    }
    if (rc != 0)
        w->stop_rc = rc;
    return rc;
}

static int on_manifest_file(const icm_manifest_file *mf, void *payload)
{
    return sight_manifest(payload, mf, mf->manifest_path, mf->manifest_length);
}

/* A summary total as a count (a negative one counts as absent). */
static bool summary_total(const icm_table_metadata *md, const icm_snapshot *s, const char *key,
                          uint64_t *out)
{
    int64_t v;
    if (!icm__snapshot_summary_count(md, s, key, &v) || v < 0)
        return false;
    *out = (uint64_t)v;
    return true;
}

static const char *const TOTAL_KEYS[2] = {"total-data-files", "total-delete-files"};

/* Fewer live files than the summary's total: the list's failure (ICM_EINVALID, message set). */
static int judge_counts(const icm_table_metadata *md, const icm_snapshot *s,
                        const uint64_t live[2])
{
    static const char *const what[2] = {"data", "delete"};
    for (int k = 0; k < 2; k++) {
        uint64_t total;
        if (summary_total(md, s, TOTAL_KEYS[k], &total) && live[k] < total)
            return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, s->manifest_list,
                                  "the manifest list of snapshot %" PRId64 " counts %" PRIu64
                                  " live %s files in its manifests, but the snapshot's summary "
                                  "says %s %" PRIu64 " (the list cut short or altered): it "
                                  "cannot be trusted",
                                  s->snapshot_id, live[k], what[k], TOTAL_KEYS[k], total);
    }
    return 0;
}

/*
 * A manifest list against its snapshot's summary (`total-data-files`, `total-delete-files`:
 * the live files the snapshot holds). A list cut at an Avro block boundary is a valid list with
 * fewer rows; read as it is, the keep set would lose what the cut rows name (adversary rounds
 * 5b and 7). So every list read, ref head or not, is judged: the live entries of the manifests
 * its rows name, each manifest once however many rows name it in whatever spelling, as the
 * row that first named it counts them (its counts the manifest's own read checks:
 * icm__manifest_check_list_row; adversary round 8), must reach the totals. Fewer is a failed read of the list; more is left alone (a writer counting
 * differently cannot hide a file that way). Where a row lacks counts (v1 allows it) the
 * manifest's entries as read decide, so the list is judged after the second pass
 * (judge_pending), which also reads such manifests when the walk does not read entries (only
 * count-less lists pay for that); a summary without totals cannot be judged this way. Returns
 * 0, ICM_EINVALID with the message set, or ICM_ENOMEM.
 */
static int judge_list(walk *w, const icm_snapshot *s)
{
    uint64_t ignored;
    if (!summary_total(w->md, s, TOTAL_KEYS[0], &ignored) &&
        !summary_total(w->md, s, TOTAL_KEYS[1], &ignored))
        return 0;
    if (w->rows.lost)
        return icm__error_oom();
    uint64_t live[2] = {0, 0};
    size_t first = w->n_pending_manifests, list = ++w->lists_judged;
    for (size_t i = 0; i < w->rows.cur_len; i++) {
        size_t number = w->spelling[w->rows.cur[i].id];
        manifest_facts *mf = &w->manifests[number];
        if (mf->judged == list)
            continue; /* named twice (a row repeated, or another spelling): counted once */
        mf->judged = list;
        if (mf->counted) {
            live[0] += mf->live[0];
            live[1] += mf->live[1];
            continue;
        }
        if (!grow(&w->pending_manifests, w->n_pending_manifests, &w->pending_manifests_cap,
                  sizeof *w->pending_manifests))
            return icm__error_oom();
        w->pending_manifests[w->n_pending_manifests++] = number;
        if (mf->to_read == SIZE_MAX && mf->to_count == SIZE_MAX &&
            !w->opts->read_entries) {
            /* The path as this row spells it names the manifest as well as any other; read
             * as a v1 manifest (rows without counts are v1's; a v2 file says so itself). */
            char *path = icm__strndup(w->seen_written.arena + w->rows.cur[i].off,
                                      w->rows.cur[i].len);
            int rc = path != NULL ? remember(w, &w->to_count, NULL, path) : ICM_ENOMEM;
            icm__free(path);
            if (rc != 0)
                return icm__error_oom();
            mf->to_count = w->to_count.len - 1;
        }
    }
    if (first == w->n_pending_manifests)
        return judge_counts(w->md, s, live);
    if (!grow(&w->pending, w->n_pending, &w->pending_cap, sizeof *w->pending))
        return icm__error_oom();
    w->pending[w->n_pending++] =
        (pending_list){s, {live[0], live[1]}, first, w->n_pending_manifests - first};
    return 0;
}

/* After the second pass: the lists with count-less rows, with their manifests' entries as
 * read; a list one of whose manifests was not read whole is not judged (its failure, if any,
 * is the report's already). */
/* A manifest's live entries as decoded, by content, added to live; *whole: read without
 * failure. */
static void count_live(const icm__ahead_manifest *m, uint64_t live[2], bool *whole)
{
    for (size_t k = 0; k < m->count; k++)
        live[m->entries[k].kind == ICM__FILE_DATA ? 0 : 1]++;
    *whole = m->rc == 0;
}

/* The manifests of to_count, read and counted (nothing delivered, no failure recorded: a list
 * one of them cannot be read for is simply not judged). */
static int count_unread(walk *w)
{
    if (w->to_count.len == 0)
        return 0;
    w->count_live = icm__calloc(w->to_count.len, sizeof *w->count_live);
    w->count_whole = icm__calloc(w->to_count.len, sizeof *w->count_whole);
    if (w->count_live == NULL || w->count_whole == NULL)
        return ICM_ENOMEM;
    icm__manifest_ahead *ahead = NULL;
    int rc = icm__manifest_ahead_start(&ahead, &w->bulk, w->to_count.items, w->to_count.len,
                                       NULL, NULL);
    for (size_t i = 0; rc == 0 && i < w->to_count.len; i++) {
        const icm__ahead_manifest *m = icm__manifest_ahead_get(ahead, i);
        count_live(m, w->count_live[i], &w->count_whole[i]);
        if (m->rc == ICM_ENOMEM)
            rc = ICM_ENOMEM;
        icm__manifest_ahead_release(ahead, i);
    }
    icm__manifest_ahead_finish(ahead);
    icm_error_clear();
    return rc;
}

/* A manifest's live entries as read, by content; false when it was not read whole. */
static bool manifest_live(const walk *w, size_t number, uint64_t live[2])
{
    const manifest_facts *f = &w->manifests[number];
    if (f->to_read != SIZE_MAX && w->read_live != NULL && w->read_whole[f->to_read]) {
        live[0] += w->read_live[f->to_read][0];
        live[1] += w->read_live[f->to_read][1];
        return true;
    }
    if (f->to_count != SIZE_MAX && w->count_live != NULL && w->count_whole[f->to_count]) {
        live[0] += w->count_live[f->to_count][0];
        live[1] += w->count_live[f->to_count][1];
        return true;
    }
    return false;
}

static int judge_pending(walk *w)
{
    int rc = count_unread(w);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < w->n_pending; i++) {
        const pending_list *p = &w->pending[i];
        uint64_t live[2] = {p->live[0], p->live[1]};
        bool whole = true;
        for (size_t k = 0; whole && k < p->n; k++)
            whole = manifest_live(w, w->pending_manifests[p->first + k], live);
        rc = whole ? judge_counts(w->md, p->snapshot, live) : 0;
        if (rc != 0) {
            rc = record_failure(w->report, p->snapshot->manifest_list, true, rc,
                                icm_error_last()->message);
            icm_error_clear();
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* Room for `need` items of `size` bytes. */
static bool reserve(void *items_p, size_t *cap, size_t need, size_t size)
{
    while (*cap < need)
        if (!grow(items_p, *cap, cap, size))
            return false;
    return true;
}

/* A list (or a v1 snapshot's embedded manifests) read whole: its rows' manifests for
 * judge_snapshots, as a change to the last list noted: between the rows it shares with that
 * list's start and those it shares with its end (a new list is most often one new row before
 * or after the last list's rows), its rows joined and the last list's left. Counted as rows,
 * so a manifest named twice is there until both rows leave. Returns 0 or ICM_ENOMEM. */
static int note_members(walk *w, const icm_snapshot *s)
{
    if (!w->judging)
        return 0;
    if (w->rows.lost)
        return ICM_ENOMEM;
    size_t nc = w->rows.cur_len, np = w->n_prev, head = 0, tail = 0;
    if (!reserve(&w->cur, &w->cur_cap, nc, sizeof *w->cur))
        return ICM_ENOMEM;
    if (w->delta_cap < w->n_manifests) {
        size_t cap = w->n_manifests * 2;
        int32_t *d = icm__reallocarray(w->delta, cap, sizeof *d);
        if (d == NULL)
            return ICM_ENOMEM;
        memset(d + w->delta_cap, 0, (cap - w->delta_cap) * sizeof *d);
        w->delta = d;
        w->delta_cap = cap;
    }
    for (size_t i = 0; i < nc; i++)
        w->cur[i] = w->spelling[w->rows.cur[i].id];
    while (head < nc && head < np && w->cur[head] == w->prev[head])
        head++;
    while (tail < nc - head && tail < np - head &&
           w->cur[nc - 1 - tail] == w->prev[np - 1 - tail])
        tail++;
    size_t first = w->n_members, added = nc - head - tail, removed = np - head - tail;
    if (!reserve(&w->members, &w->members_cap, first + added + removed, sizeof *w->members) ||
        !grow(&w->lists, w->n_lists, &w->lists_cap, sizeof *w->lists))
        return ICM_ENOMEM;
    /* Between them, rows in another order are no change: what each manifest gains or loses
     * is counted (delta, zero again after) and only that is noted. */
    int32_t *delta = w->delta;
    for (size_t i = head; i < np - tail; i++)
        delta[w->prev[i]]--;
    for (size_t i = head; i < nc - tail; i++)
        delta[w->cur[i]]++;
    for (size_t i = head; i < nc - tail; i++)
        if (delta[w->cur[i]] > 0) {
            delta[w->cur[i]]--;
            w->members[w->n_members++] = w->cur[i];
        }
    added = w->n_members - first;
    for (size_t i = head; i < np - tail; i++)
        if (delta[w->prev[i]] < 0) {
            delta[w->prev[i]]++;
            w->members[w->n_members++] = w->prev[i];
        }
    removed = w->n_members - first - added;
    w->lists[w->n_lists++] = (list_members){s, first, added, removed};
    size_t *t = w->prev, tc = w->prev_cap; /* this list is the next one's last */
    w->prev = w->cur;
    w->prev_cap = w->cur_cap;
    w->n_prev = nc;
    w->cur = t;
    w->cur_cap = tc;
    return 0;
}

/* Row filter of the manifest-list reads: a path already handled in the same spelling needs no
 * decoding (on_manifest_file would ignore it). */
static bool seen_as_written(const uint8_t *path, size_t len, void *payload)
{
    walk *w = payload;
    if (icm__rows_guess(&w->rows, w->seen_written.arena, path, len))
        return true;
    size_t off, id;
    if (!icm__strset_lookup(&w->seen_written, path, len, &off, &id))
        return false;
    icm__rows_resync(&w->rows, off);
    icm__rows_note(&w->rows, off, len, id);
    return true;
}

/* Rows byte for byte those expected from the list before are claimed unread. */
static size_t seen_as_bytes(const uint8_t *row, size_t avail, size_t max_rows,
                            const void *schema, void *payload, size_t *rows)
{
    return icm__rows_guess_bytes(&((walk *)payload)->rows, row, avail, max_rows, schema, rows);
}

static void row_read(const uint8_t *row, size_t len, const void *schema, void *payload)
{
    icm__rows_note_bytes(&((walk *)payload)->rows, row, len, schema);
}

/* Manifest list i of the walk (read ahead by `lists`): its rows, in order. */
static int walk_manifest_list(walk *w, const icm_snapshot *s, icm__lists_ahead *lists, size_t i)
{
    const icm__ahead_list *l = icm__lists_ahead_get(lists, i);
    /* A list read whole has its size in hand (metadata records none for lists). */
    int rc = emit(w, s->manifest_list, ICM__FILE_MANIFEST_LIST,
                  l->rc == 0 && l->len <= INT64_MAX ? (int64_t)l->len : -1);
    if (rc != 0) {
        icm__lists_ahead_release(lists, i);
        return rc;
    }
    icm__list_row_filter f = {seen_as_written, seen_as_bytes, row_read, w};
    rc = l->rc;
    if (rc != 0) {
        icm__rows_begin_list(&w->rows, NULL);
        icm__lists_ahead_raise(lists, i);
    } else {
        /* The list's buffers stay with the walk until the next list has been compared with
         * its rows (icm__row_order). */
        icm__list_hold hold;
        icm__lists_ahead_take(lists, i, &hold);
        icm__rows_begin_list(&w->rows, &hold);
        rc = icm__manifest_bulk_read_list(&w->bulk, &w->rows.cur_raw.hold, s->manifest_list, &f,
                                          on_manifest_file, w);
        if (rc == 0)
            rc = note_members(w, s);
        if (rc == 0)
            rc = judge_list(w, s);
    }
    w->report->manifest_lists_read++;
    rc = settle_list(w, rc, s->manifest_list);
    icm__lists_ahead_release(lists, i);
    return rc;
}

/* v1 snapshots may list their manifests inline instead of in a manifest list. */
static int walk_embedded(walk *w, const icm_snapshot *s)
{
    icm__rows_begin_list(&w->rows, NULL);
    for (size_t k = 0; k < s->manifest_count; k++) {
        int rc = sight_manifest(w, NULL, s->manifests[k], -1);
        if (rc != 0)
            return rc;
    }
    int rc = note_members(w, s);
    if (rc != 0)
        w->stop_rc = rc;
    return rc;
}

/*
 * The first location a decoded manifest names as ADDED twice (NULL: none; deletion vectors,
 * which share their Puffin file's path, aside). A commit adds a file once (PyIceberg's
 * add_files and Java's appends since DataFileSet refuse or merge a repeat); two ADDED entries
 * with one path are a damaged entry (one character of a path turned into a sibling's name,
 * which the size check passes when the two are the same size) or a broken writer, and either
 * way the real file of the damaged entry would look unreferenced (adversary round 8, finding
 * 2). A file appended again by a later commit is left alone: the table then names it twice
 * by its own history (EXISTING beside ADDED, or twice EXISTING after a merge), which Java
 * allows. Returns 0 or ICM_ENOMEM.
 */
static int named_twice(walk *w, const icm__ahead_manifest *m, const char **dup)
{
    *dup = NULL;
    if (m->count < 2)
        return 0;
    size_t cap = 16;
    while (cap < m->count * 2)
        cap *= 2;
    if (cap > w->twice_cap) {
        struct twice_slot *grown = icm__reallocarray(w->twice, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        w->twice = grown;
        w->twice_cap = cap;
    }
    for (size_t i = 0; i < cap; i++)
        w->twice[i].entry = SIZE_MAX;
    for (size_t k = 0; k < m->count; k++) {
        if (m->entries[k].kind == ICM__FILE_DELETION_VECTOR || !m->entries[k].added)
            continue; /* (v3 writers put many vectors in one Puffin file: one path) */
        const char *loc = m->locations + m->entries[k].location_offset;
        uint64_t h = XXH3_64bits(loc, strlen(loc));
        for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
            struct twice_slot *t = &w->twice[i];
            if (t->entry == SIZE_MAX) {
                *t = (struct twice_slot){h, k};
                break;
            }
            if (t->hash == h &&
                strcmp(m->locations + m->entries[t->entry].location_offset, loc) == 0) {
                *dup = loc;
                return 0;
            }
        }
    }
    return 0;
}

/* ---- one snapshot's entries, judged together ---- */

/*
 * A snapshot names each file once. Its manifests may name a file twice only as the table's own
 * history does it: a file one commit deleted and a later commit (or the same one, describing
 * the same file) added again. What else names one file twice (paths compared as the keep sets
 * compare them: by location key) is damage: an entry whose path was turned (one character is
 * enough) into the name of another file the snapshot names, of the same size so that the
 * existence and size checks pass, and the real file of the damaged entry then looks
 * unreferenced, so that the sweep or the expiry would delete it (adversary rounds 8 to 10).
 * judge_snapshots looks, within each walked snapshot, at every file its manifests name more
 * than once (in one manifest or in several, live or DELETED; deletion vectors, which share
 * their Puffin file's path, aside) and finds the snapshot damaged when two of its entries
 *  - are live: a file live twice is either appended twice (Java's API allows it; PyIceberg's
 *    and Spark's add_files refuse it by default; a scan then returns its rows twice) or a
 *    damaged entry, and no description tells them apart (a rename onto a file with the same
 *    size, record count and bounds, or in a table keeping no bounds: adversary round 10), so
 *    both are refused, the message saying which it may be;
 *  - or one is live and was added before the commit that the other says deleted the file (a
 *    commit that deletes a file removes every live entry of it; added by a commit no longer
 *    known counts as before a known one).
 * What it costs: while the walk reads, a 64-bit hash per entry; after it, those hashes sorted
 * once to find the paths named more than once (a table whose manifests name every file once
 * stops there), then only the manifests naming such a path read again, described (who added
 * each entry, its sequence number, record count and bounds), and judged list by list. A hash
 * collision could only make two files look like one: that can refuse, never delete.
 */

/* One entry of a path named more than once, as judge_pair needs it. */
typedef struct sighting {
    uint64_t path;     /* the location's hash (never 0) */
    uint64_t facts;    /* digest of the recorded size and record count */
    uint64_t bounds;   /* icm__ahead_entry.bounds (0: none given) */
    int64_t by;        /* the commit that added it (deleted: that deleted it); INT64_MIN unknown */
    int64_t seq;       /* its file sequence number as written or inherited (deleted: its
                          manifest's); INT64_MIN unknown or v1 */
    size_t manifest;   /* to_read index */
    bool deleted;
} sighting;

/* The hash of a location's key (the keep sets' identity: `file:/t/f`, `/t/f`, `/t//f` and
 * `/t/./f` are one file). Returns 0 only for ICM_ENOMEM. */
static uint64_t path_hash(const char *location)
{
    /* The keep set's identity (pathset.h), so both agree on which spellings name one file. */
    icm__pathset_hash h;
    if (icm__pathset_location_hash(location, &h) != 0)
        return 0;
    return h.low != 0 ? h.low : 1;
}

/* A manifest read whole (to_read index i): the hashes of its entries' paths. */
static int hash_entries(walk *w, size_t i, const icm__ahead_manifest *m)
{
    if (!reserve(&w->hashes, &w->hashes_cap, w->n_hashes + m->count + m->deleted_count,
                 sizeof *w->hashes))
        return ICM_ENOMEM;
    w->hash_span[i][0] = w->n_hashes;
    for (int del = 0; del < 2; del++) {
        const icm__ahead_entry *es = del ? m->deleted : m->entries;
        size_t n = del ? m->deleted_count : m->count;
        for (size_t k = 0; k < n; k++) {
            if (es[k].kind == ICM__FILE_DELETION_VECTOR)
                continue; /* (many vectors share a path) */
            uint64_t h = path_hash(m->locations + es[k].location_offset);
            if (h == 0)
                return ICM_ENOMEM;
            w->hashes[w->n_hashes++] = h;
        }
    }
    w->hash_span[i][1] = w->n_hashes;
    return 0;
}

/* A set of hashes (never 0), with the path each names once it is known. */
typedef struct hash_names {
    struct hash_name {
        uint64_t hash; /* 0: empty */
        char *path;
    } *slots;
    size_t cap;
} hash_names;

static struct hash_name *hash_names_slot(const hash_names *t, uint64_t h)
{
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1))
        if (t->slots[i].hash == 0 || t->slots[i].hash == h)
            return &t->slots[i];
}

static bool hash_names_has(const hash_names *t, uint64_t h)
{
    return t->cap > 0 && hash_names_slot(t, h)->hash == h;
}

static void hash_names_dispose(hash_names *t)
{
    for (size_t i = 0; i < t->cap; i++)
        icm__free(t->slots[i].path);
    icm__free(t->slots);
    memset(t, 0, sizeof *t);
}

/* Sort in place by radix, most significant byte first (American flag sort: each byte's
 * buckets counted, the items cycled into them, then each bucket sorted by the next byte), so
 * that finding the repeated hashes needs no room beyond one copy of them (issue #21: a second
 * array of 64-bit items for a 90-million-entry table was 720 MB of the peak). */
static void radix_sort(uint64_t *v, size_t n, unsigned shift)
{
    if (n < 32) { /* (insertion sort for the small buckets) */
        for (size_t i = 1; i < n; i++) {
            uint64_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    size_t count[256] = {0}, next[256], end[256];
    for (size_t i = 0; i < n; i++)
        count[(v[i] >> shift) & 0xff]++;
    for (size_t b = 0, at = 0; b < 256; b++) {
        next[b] = at;
        at += count[b];
        end[b] = at;
    }
    for (size_t b = 0; b < 256; b++) {
        while (next[b] < end[b]) {
            uint64_t x = v[next[b]];
            size_t d = (x >> shift) & 0xff;
            while (d != b) { /* (x belongs to bucket d: put it there, take what it displaces) */
                uint64_t displaced = v[next[d]];
                v[next[d]++] = x;
                x = displaced;
                d = (x >> shift) & 0xff;
            }
            v[next[b]++] = x;
        }
    }
    for (size_t b = 0, at = 0; shift > 0 && b < 256; at += count[b], b++)
        if (count[b] > 1)
            radix_sort(v + at, count[b], shift - 8);
}

/* The hashes that occur more than once, into *out. Returns 0 or ICM_ENOMEM. */
static int find_repeated(const walk *w, hash_names *out)
{
    memset(out, 0, sizeof *out);
    uint64_t *v = icm__calloc(w->n_hashes ? w->n_hashes : 1, sizeof *v);
    int rc = v != NULL ? 0 : ICM_ENOMEM;
    size_t n = 0;
    if (rc == 0) {
        memcpy(v, w->hashes, w->n_hashes * sizeof *v);
        radix_sort(v, w->n_hashes, 56);
        for (size_t i = 1; i < w->n_hashes; i++)
            if (v[i] == v[i - 1] && (n == 0 || v[n - 1] != v[i]))
                v[n++] = v[i]; /* (the repeated ones, at the front: n <= i - 1) */
    }
    if (rc == 0 && n > 0) {
        out->cap = 16;
        while (out->cap < n * 2)
            out->cap *= 2;
        if ((out->slots = icm__calloc(out->cap, sizeof *out->slots)) == NULL)
            rc = ICM_ENOMEM;
        for (size_t i = 0; rc == 0 && i < n; i++)
            hash_names_slot(out, v[i])->hash = v[i];
    }
    icm__free(v);
    return rc;
}

/* When a sighting's commit was: v2, a DELETED entry's commit as the metadata records it (else
 * its manifest's sequence number), a live entry's file sequence number (else its commit's);
 * v1, the commit's timestamp. INT64_MIN: unknown (the commit expired, say). */
static int64_t when_of(const walk *w, const sighting *x)
{
    const icm_snapshot *s =
        x->by != INT64_MIN ? icm_table_metadata_snapshot_by_id(w->md, x->by) : NULL;
    if (icm_table_metadata_format_version(w->md) < 2)
        return s != NULL ? s->timestamp_ms : INT64_MIN;
    if (x->deleted && s != NULL)
        return s->sequence_number;
    return x->seq != INT64_MIN ? x->seq : s != NULL ? s->sequence_number : INT64_MIN;
}

/* Whether the snapshot `ancestor` is an ancestor of the snapshot `of` (its parents followed,
 * as many steps as the metadata has snapshots: a cycle ends there). */
static bool is_ancestor(const icm_table_metadata *md, int64_t ancestor, int64_t of)
{
    const icm_snapshot *s = icm_table_metadata_snapshot_by_id(md, of);
    for (size_t steps = icm_table_metadata_snapshot_count(md); s != NULL && s->has_parent &&
                                                              steps > 0;
         steps--) {
        if (s->parent_snapshot_id == ancestor)
            return true;
        s = icm_table_metadata_snapshot_by_id(md, s->parent_snapshot_id);
    }
    return false;
}

typedef enum verdict { ONE_FILE, ADDED_TWICE, LIVE_TWICE, TWO_FILES, DELETED_BEFORE } verdict;

static bool same_file(const sighting *a, const sighting *b)
{
    return a->facts == b->facts && (a->bounds == 0 || b->bounds == 0 || a->bounds == b->bounds);
}

static verdict judge_pair(const walk *w, const sighting *a, const sighting *b)
{
    if (a->deleted && b->deleted)
        return ONE_FILE;
    if (!a->deleted && !b->deleted)
        return a->by != INT64_MIN && a->by == b->by ? ADDED_TWICE
               : same_file(a, b)                    ? LIVE_TWICE
                                                    : TWO_FILES;
    const sighting *gone = a->deleted ? a : b, *live = a->deleted ? b : a;
    if (live->by != INT64_MIN && live->by == gone->by) /* added again by the deleting commit: */
        return same_file(live, gone) ? ONE_FILE : TWO_FILES; /* (a new file has a new path) */
    /* A live entry whose commit is no longer known (expired) while the deleting commit is
     * counts as older: expiry removes older snapshots first, and the one way it is not (a
     * commit adding the file again after the deletion expired while a ref keeps the deleting
     * one) can only refuse. */
    /* v1 orders commits by their timestamps, which writers' clocks may turn around (Java
     * accepts a minute of it): a commit descending from the deleting one came after it
     * whatever its timestamp says (adversary round 20, R1) */
    if (icm_table_metadata_format_version(w->md) < 2 && live->by != INT64_MIN &&
        gone->by != INT64_MIN && is_ancestor(w->md, gone->by, live->by))
        return ONE_FILE;
    int64_t added = when_of(w, live), deleted = when_of(w, gone);
    return deleted != INT64_MIN && (added == INT64_MIN || added < deleted) ? DELETED_BEFORE
                                                                          : ONE_FILE;
}

static int report_damage(walk *w, const hash_names *names, const list_members *l, verdict v,
                         const sighting *a, const sighting *b)
{
    const icm_snapshot *s = l->snapshot;
    if (v == DELETED_BEFORE && a->deleted) {
        const sighting *t = a;
        a = b;
        b = t;
    }
    const char *path = hash_names_slot(names, a->path)->path;
    const char *ma = w->to_read.items[a->manifest].mf.manifest_path;
    const char *mb = w->to_read.items[b->manifest].mf.manifest_path;
    const char *where = s->manifest_list != NULL ? s->manifest_list : ma;
    const char *and = a->manifest == b->manifest ? "" : " and ";
    static const char tail[] = "one entry may be another file's, damaged into this name, and "
                               "that file would look unreferenced: it cannot be trusted";
    if (v == ADDED_TWICE)
        icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, where,
                       "snapshot %" PRId64 " names %s as added twice by commit %" PRId64
                       " (in %s%s%s): %s",
                       s->snapshot_id, path, a->by, ma, and, *and ? mb : "", tail);
    else if (v == TWO_FILES)
        icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, where,
                       "snapshot %" PRId64 " names %s twice with a different size, record "
                       "count or bounds (in %s%s%s): %s",
                       s->snapshot_id, path, ma, and, *and ? mb : "", tail);
    else if (v == LIVE_TWICE)
        icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, where,
                       "snapshot %" PRId64 " names %s live twice (in %s%s%s): either one file "
                       "was appended twice, and a scan returns its rows twice (remove one of "
                       "its entries), or %s",
                       s->snapshot_id, path, ma, and, *and ? mb : "", tail);
    else
        icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, where,
                       "snapshot %" PRId64 " names %s live (in %s), added before commit %" PRId64
                       " deleted it (in %s): %s",
                       s->snapshot_id, path, ma, b->by, mb, tail);
    int rc = record_failure(w->report, where, s->manifest_list != NULL, ICM_EINVALID,
                            icm_error_last()->message);
    icm_error_clear();
    return rc;
}

/* The manifests naming a repeated path, read again described: their entries of repeated paths
 * as sightings (in to_read order), *first/by manifest, and the paths' names. A manifest that
 * can no longer be read whole is the report's failure (as any read: nothing trusts it). */
typedef struct sightings {
    sighting *items;
    size_t n, cap;
    size_t *start;     /* by to_read index: items[start[t], start[t + 1]) */
} sightings;

static int read_sightings(walk *w, hash_names *names, sightings *out)
{
    size_t n_read = w->to_read.len;
    memset(out, 0, sizeof *out);
    out->start = icm__calloc(n_read + 1, sizeof *out->start);
    icm__manifest_ref *refs = icm__calloc(n_read ? n_read : 1, sizeof *refs);
    size_t *index = icm__calloc(n_read ? n_read : 1, sizeof *index), n_refs = 0;
    int rc = out->start != NULL && refs != NULL && index != NULL ? 0 : ICM_ENOMEM;
    for (size_t t = 0; rc == 0 && t < n_read; t++) {
        if (w->hash_span[t][1] == SIZE_MAX)
            continue;
        for (size_t k = w->hash_span[t][0]; k < w->hash_span[t][1]; k++)
            if (hash_names_has(names, w->hashes[k])) {
                refs[n_refs] = w->to_read.items[t]; /* (borrowed: a shallow copy) */
                index[n_refs++] = t;
                break;
            }
    }
    icm__manifest_ahead *ahead = NULL;
    if (rc == 0 && n_refs > 0)
        rc = icm__manifest_ahead_start_described(&ahead, &w->bulk, refs, n_refs);
    bool v2 = icm_table_metadata_format_version(w->md) >= 2;
    for (size_t j = 0; rc == 0 && j < n_refs; j++) {
        const icm__manifest_ref *r = &refs[j];
        const icm__ahead_manifest *m = icm__manifest_ahead_get(ahead, j);
        size_t t = index[j];
        if (m->rc != 0) {
            icm__manifest_ahead_raise(ahead, j);
            rc = settle_manifest(w, m->rc, r->mf.manifest_path);
        }
        for (int del = 0; rc == 0 && m->rc == 0 && del < 2; del++) {
            const icm__ahead_entry *es = del ? m->deleted : m->entries;
            size_t n = del ? m->deleted_count : m->count;
            for (size_t k = 0; rc == 0 && k < n; k++) {
                const icm__ahead_entry *e = &es[k];
                const char *loc = m->locations + e->location_offset;
                if (e->kind == ICM__FILE_DELETION_VECTOR)
                    continue;
                uint64_t h = path_hash(loc);
                if (h == 0)
                    rc = ICM_ENOMEM;
                if (rc != 0 || !hash_names_has(names, h))
                    continue;
                struct hash_name *name = hash_names_slot(names, h);
                if (name->path == NULL && (name->path = icm__strdup(loc)) == NULL)
                    rc = ICM_ENOMEM;
                if (rc == 0 && !grow(&out->items, out->n, &out->cap, sizeof *out->items))
                    rc = ICM_ENOMEM;
                if (rc != 0)
                    break;
                int64_t by = entry_added_by(r, e);
                int64_t seq = !v2 || r->embedded_v1                 ? INT64_MIN
                              : !del && e->has_file_sequence_number ? e->file_sequence_number
                              : (del || e->added)                   ? r->mf.sequence_number
                                                                    : INT64_MIN;
                int64_t facts[2] = {e->size_bytes, e->record_count};
                out->items[out->n++] = (sighting){
                    h, XXH3_64bits(facts, sizeof facts), e->bounds, by, seq, t, del == 1};
                out->start[t + 1]++;
            }
        }
        if (rc == ICM_ENOMEM)
            w->stop_rc = rc;
        icm__manifest_ahead_release(ahead, j);
    }
    icm__manifest_ahead_finish(ahead);
    for (size_t t = 0; rc == 0 && t < n_read; t++)
        out->start[t + 1] += out->start[t];
    icm__free(refs);
    icm__free(index);
    return rc;
}

/* After the second pass: each walked snapshot's paths named more than once, judged. Returns 0
 * or ICM_ENOMEM (damage is the report's). */
static int judge_snapshots(walk *w)
{
    if (w->n_hashes < 2 || w->n_lists == 0)
        return 0;
    hash_names names;
    int rc = find_repeated(w, &names);
    if (rc != 0 || names.cap == 0) {
        hash_names_dispose(&names);
        return rc;
    }
    sightings sg;
    rc = read_sightings(w, &names, &sg);
    size_t n = sg.n, cap = 16;
    while (cap < n * 2)
        cap *= 2;
    size_t *next = icm__calloc(n ? n : 1, sizeof *next);
    struct slot {
        uint64_t path;
        size_t stamp, head;
    } *table = icm__calloc(cap, sizeof *table);
    /* The walked list's manifests holding sightings (its list_members applied in turn):
     * held[0, n_held), pos by manifest number (SIZE_MAX: not held); rows: the list's rows
     * naming each. */
    size_t n_numbers = w->n_manifests ? w->n_manifests : 1, n_held = 0;
    size_t *held = icm__calloc(n_numbers, sizeof *held), *pos = icm__calloc(n_numbers, sizeof *pos);
    size_t *rows = icm__calloc(n_numbers, sizeof *rows);
    if (rc == 0 && (next == NULL || table == NULL || held == NULL || pos == NULL || rows == NULL))
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n_numbers; i++)
        pos[i] = SIZE_MAX;
    for (size_t li = 0; rc == 0 && li < w->n_lists; li++) {
        const list_members *l = &w->lists[li];
        for (size_t j = l->first + l->added; j < l->first + l->added + l->removed; j++) {
            size_t number = w->members[j], at_pos = pos[number];
            if (--rows[number] > 0 || at_pos == SIZE_MAX)
                continue;
            held[at_pos] = held[--n_held];
            pos[held[at_pos]] = at_pos;
            pos[number] = SIZE_MAX;
        }
        for (size_t j = l->first; j < l->first + l->added; j++) {
            size_t number = w->members[j], t = w->manifests[number].to_read;
            if (rows[number]++ == 0 && t != SIZE_MAX && sg.start[t + 1] > sg.start[t]) {
                pos[number] = n_held;
                held[n_held++] = number;
            }
        }
        bool damaged = false;
        for (size_t j = 0; !damaged && rc == 0 && j < n_held; j++) {
            size_t t = w->manifests[held[j]].to_read;
            for (size_t q = sg.start[t]; !damaged && rc == 0 && q < sg.start[t + 1]; q++) {
                const sighting *x = &sg.items[q];
                struct slot *sl = NULL;
                for (size_t i = x->path & (cap - 1);; i = (i + 1) & (cap - 1)) {
                    sl = &table[i];
                    if (sl->stamp != li + 1) {
                        *sl = (struct slot){x->path, li + 1, SIZE_MAX};
                        break;
                    }
                    if (sl->path == x->path)
                        break;
                }
                for (size_t p = sl->head; p != SIZE_MAX; p = next[p]) {
                    verdict v = judge_pair(w, &sg.items[p], x);
                    if (v != ONE_FILE) {
                        rc = report_damage(w, &names, l, v, &sg.items[p], x);
                        damaged = true;
                        break;
                    }
                }
                next[q] = sl->head;
                sl->head = q;
            }
        }
    }
    icm__free(sg.items);
    icm__free(sg.start);
    icm__free(next);
    icm__free(table);
    icm__free(held);
    icm__free(pos);
    icm__free(rows);
    hash_names_dispose(&names);
    return rc;
}

/* Second pass, one manifest: its live entries to the callback, then its read failure, if any,
 * to the report (as a single pass reports them: entries decoded before the failure first). */
static int deliver_entries(walk *w, icm__manifest_ahead *ahead, size_t i)
{
    const icm__manifest_ref *r = &w->to_read.items[i];
    const icm__ahead_manifest *m = icm__manifest_ahead_get(ahead, i);
    w->snapshot_id = r->snapshot_id;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < m->count; k++)
        rc = deliver_entry(w, r, m->locations, &m->entries[k]);
    const char *dup = NULL;
    if (rc == 0 && m->rc == 0 && w->judging)
        rc = hash_entries(w, i, m);
    else if (rc == 0 && m->rc == 0 && !w->filtered) /* (a filter's: deletion vectors too) */
        rc = named_twice(w, m, &dup);
    if (rc == 0 && dup != NULL) {
        icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, r->mf.manifest_path,
                       "the manifest names %s as added twice (two entries of one commit with "
                       "one path: one may be another file's entry damaged into this name, and "
                       "that file would look unreferenced): its entries cannot be trusted",
                       dup);
        rc = record_failure(w->report, r->mf.manifest_path, false, ICM_EINVALID,
                            icm_error_last()->message);
        icm_error_clear();
    }
    if (rc == ICM_ENOMEM)
        w->stop_rc = rc;
    w->report->entries_read += m->entries_read;
    w->report->manifests_read++;
    if (w->read_live != NULL) /* what judge_pending needs */
        count_live(m, w->read_live[i], &w->read_whole[i]);
    if (rc == 0 && m->rc != 0)
        icm__manifest_ahead_raise(ahead, i);
    if (rc == 0)
        rc = settle_manifest(w, m->rc, r->mf.manifest_path);
    icm__manifest_ahead_release(ahead, i);
    return rc;
}

/* The live entries the manifest lists announce for these manifests (0 where not given). */
static size_t announced_entries(const icm__manifest_refs *refs)
{
    size_t n = 0;
    for (size_t i = 0; i < refs->len; i++) {
        const icm_manifest_file *mf = &refs->items[i].mf;
        if (mf->has_added_files_count && mf->added_files_count > 0)
            n += (size_t)mf->added_files_count;
        if (mf->has_existing_files_count && mf->existing_files_count > 0)
            n += (size_t)mf->existing_files_count;
        if (n > ((size_t)1 << 40) / 2)
            break; /* (two int32 counts per manifest never overflow from here) */
    }
    return n;
}

/* Second pass: the notes in order, with the manifests decoded ahead. */
static int deliver_notes(walk *w)
{
    icm__manifest_ahead *ahead = NULL;
    int rc = 0;
    if (w->n_pending > 0) {
        size_t n = w->to_read.len ? w->to_read.len : 1;
        w->read_live = icm__calloc(n, sizeof *w->read_live);
        w->read_whole = icm__calloc(n, sizeof *w->read_whole);
        if (w->read_live == NULL || w->read_whole == NULL)
            rc = ICM_ENOMEM;
    }
    if (rc == 0 && w->judging) {
        w->hash_span = icm__calloc(w->to_read.len ? w->to_read.len : 1, sizeof *w->hash_span);
        if (w->hash_span == NULL)
            rc = ICM_ENOMEM;
        for (size_t i = 0; rc == 0 && i < w->to_read.len; i++)
            w->hash_span[i][0] = w->hash_span[i][1] = SIZE_MAX;
    }
    if (rc == 0 && w->opts->keep_bounds != NULL)
        rc = icm__manifest_ahead_start_bounded(&ahead, &w->bulk, w->to_read.items,
                                               w->to_read.len, w->opts->keep_bounds,
                                               w->opts->keep_bounds_ctx);
    else if (rc == 0 && w->opts->described)
        rc = icm__manifest_ahead_start_described(&ahead, &w->bulk, w->to_read.items,
                                                 w->to_read.len);
    else if (rc == 0)
        rc = icm__manifest_ahead_start(&ahead, &w->bulk, w->to_read.items, w->to_read.len, NULL,
                                       NULL);
    size_t next = 0;
    for (size_t i = 0; rc == 0 && i < w->n_notes; i++) {
        const note *n = &w->notes[i];
        w->snapshot_id = n->snapshot_id;
        switch (n->what) {
        case NOTE_REACHED:
            rc = deliver(w, n->location, n->kind, n->size_bytes);
            break;
        case NOTE_LIST_FAILURE:
            rc = record_failure(w->report, n->location, true, n->code, n->message);
            break;
        case NOTE_ENTRIES:
            rc = deliver_entries(w, ahead, next++);
            break;
        }
    }
    icm__manifest_ahead_finish(ahead);
    return rc;
}

/* A sorted copy of the chosen ids makes `chosen` cheap for large explicit sets. */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool chosen_sorted(const int64_t *ids, size_t n, int64_t id)
{
    return ids == NULL || bsearch(&id, ids, n, sizeof *ids, cmp_i64) != NULL;
}

static int walk_statistics(walk *w)
{
    size_t n = icm_table_metadata_statistics_count(w->md);
    for (size_t i = 0; i < n; i++) {
        const icm_statistics_file *f = icm_table_metadata_statistics_at(w->md, i);
        if (!chosen_sorted(w->opts->snapshot_ids, w->opts->snapshot_id_count, f->snapshot_id))
            continue;
        w->snapshot_id = f->snapshot_id;
        int rc = deliver(w, f->path,
                         f->partition_statistics ? ICM__FILE_PARTITION_STATISTICS
                                                 : ICM__FILE_STATISTICS,
                         f->file_size_in_bytes);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icm__reach_walk(icm_fileio *io, const icm_table_metadata *md, const icm__reach_options *opts,
                    icm__reach_cb cb, void *payload, icm__reach_report *report)
{
    return icm__reach_walk_collect(io, md, opts, NULL, cb, payload, report);
}

int icm__reach_walk_collect(icm_fileio *io, const icm_table_metadata *md,
                            const icm__reach_options *opts, icm__manifest_refs *collect,
                            icm__reach_cb cb, void *payload, icm__reach_report *report)
{
    memset(report, 0, sizeof *report);
    int64_t *ids = NULL;
    icm__reach_options local = *opts;
    if (opts->snapshot_ids != NULL) {
        ids = icm__calloc(opts->snapshot_id_count ? opts->snapshot_id_count : 1, sizeof *ids);
        if (ids == NULL)
            return ICM_ENOMEM;
        memcpy(ids, opts->snapshot_ids, opts->snapshot_id_count * sizeof *ids);
        qsort(ids, opts->snapshot_id_count, sizeof *ids, cmp_i64);
        local.snapshot_ids = ids;
    }
    walk w;
    memset(&w, 0, sizeof w);
    w.io = io;
    w.md = md;
    w.opts = &local;
    w.cb = cb;
    w.payload = payload;
    w.report = report;
    w.collect = collect;
    w.judging = local.read_entries;
    int rc = icm__manifest_bulk_init(&w.bulk, io, icm_table_metadata_format_version(md));
    /* The chosen snapshots' manifest lists, in walk order, are read ahead. */
    size_t n = icm_table_metadata_snapshot_count(md), n_lists = 0;
    const char **lists = rc == 0 ? icm__calloc(n ? n : 1, sizeof *lists) : NULL;
    if (rc == 0 && lists == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (s->manifest_list != NULL && chosen_sorted(ids, local.snapshot_id_count, s->snapshot_id))
            lists[n_lists++] = s->manifest_list;
    }
    icm__lists_ahead *ahead = NULL;
    if (rc == 0)
        rc = icm__lists_ahead_start(&ahead, &w.bulk, lists, n_lists);
    for (size_t i = 0, k = 0; rc == 0 && i < n; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (!chosen_sorted(ids, local.snapshot_id_count, s->snapshot_id))
            continue;
        w.snapshot_id = s->snapshot_id;
        rc = s->manifest_list != NULL ? walk_manifest_list(&w, s, ahead, k++)
                                      : walk_embedded(&w, s);
    }
    icm__lists_ahead_finish(ahead);
    icm__free(lists);
    if (rc == 0 && local.expect_entries != NULL)
        local.expect_entries(announced_entries(&w.to_read), payload);
    if (rc == 0)
        rc = deliver_notes(&w);
    if (rc == 0)
        rc = judge_pending(&w);
    if (rc == 0)
        rc = judge_snapshots(&w);
    if (rc == 0 && local.statistics)
        rc = walk_statistics(&w);
    notes_dispose(&w);
    icm__free(w.spelling);
    icm__free(w.manifests);
    icm__free(w.read_live);
    icm__free(w.read_whole);
    icm__manifest_refs_dispose(&w.to_count);
    icm__free(w.twice);
    icm__free(w.count_live);
    icm__free(w.count_whole);
    icm__free(w.pending);
    icm__free(w.pending_manifests);
    icm__free(w.lists);
    icm__free(w.members);
    icm__free(w.prev);
    icm__free(w.cur);
    icm__free(w.delta);
    icm__free(w.hashes);
    icm__free(w.hash_span);
    icm__manifest_refs_dispose(&w.to_read);
    icm__strset_dispose(&w.seen_written);
    icm__strset_dispose(&w.seen_keys);
    icm__rows_dispose(&w.rows);
    icm__manifest_bulk_dispose(&w.bulk);
    icm__free(ids);
    return rc;
}

int icm__reach_entries(icm_fileio *io, int format_version, const icm__manifest_refs *refs,
                       icm__reach_cb cb, void *payload, icm__reach_report *report)
{
    return icm__reach_entries_filtered(io, format_version, refs, NULL, NULL, cb, payload,
                                       report);
}

int icm__reach_entries_filtered(icm_fileio *io, int format_version,
                                const icm__manifest_refs *refs, icm__entry_filter filter,
                                const void *filter_ctx, icm__reach_cb cb, void *payload,
                                icm__reach_report *report)
{
    memset(report, 0, sizeof *report);
    icm__reach_options none = {NULL, 0, true, NULL, false, NULL, false, NULL, NULL};
    walk w;
    memset(&w, 0, sizeof w);
    w.io = io;
    w.opts = &none;
    w.cb = cb;
    w.payload = payload;
    w.report = report;
    w.to_read = *refs; /* borrowed: never disposed here */
    w.filtered = filter != NULL;
    icm__manifest_ahead *ahead = NULL;
    int rc = icm__manifest_bulk_init(&w.bulk, io, format_version);
    if (rc == 0)
        rc = icm__manifest_ahead_start(&ahead, &w.bulk, refs->items, refs->len, filter,
                                       filter_ctx);
    for (size_t i = 0; rc == 0 && i < refs->len; i++)
        rc = deliver_entries(&w, ahead, i);
    icm__manifest_ahead_finish(ahead);
    icm__free(w.twice);
    icm__manifest_bulk_dispose(&w.bulk);
    return rc;
}
