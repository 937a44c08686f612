/*
 * maint/expire_plan.c: which files an expiry deletes, and the result object that reports it.
 *
 * Reachability, as Java's ReachableFileCleanup (reference semantics §1.4), never the incremental
 * shortcut: keep = everything every snapshot of the after-metadata reaches; candidates = what
 * the expired snapshots reach; plan = candidates - keep. This file only reads storage (manifest
 * lists, manifests, and a stat of manifest lists for their sizes): a dry run is exactly this
 * code, and it is given no way to delete.
 *
 * Conservative rules, each reported as a problem:
 *  - a retained manifest list cannot be read → which manifests (and files) it keeps is unknown:
 *    plan no manifest and no data or delete file (manifest lists and statistics files of
 *    expired snapshots are named by the metadata itself, so they can still go);
 *  - a retained manifest cannot be read → plan no data or delete file, nor any manifest when
 *    it is found out while the retained manifests are read for the candidates (one that
 *    disagrees with the row naming it may be the sign of a list that lies: a row cut, another
 *    row's counts raised to cover it);
 *  - an expired manifest list or manifest cannot be read → it is kept itself: it is the only
 *    record of the files it names (a later orphan sweep can deal with them);
 *  - a candidate outside the table location, write.data.path and write.metadata.path is never
 *    planned;
 *  - a manifest list, manifest or statistics file of an expired snapshot that a retained
 *    snapshot references in any other role is never planned (ICM_EXPIRE_PROBLEM_LIVE_CONTENT
 *    when that role is data or delete file; see step 3 of run_plan for when the retained
 *    manifests are read to tell).
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "maint/expire_internal.h"
#include "maint/other_format.h"
#include "maint/verify.h"
#include "util/location.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* result object                                                                               */

static const char *const KIND_NAMES[ICM_EXPIRE_FILE_KIND_COUNT] = {
    "data",     "position_deletes", "equality_deletes", "deletion_vector",
    "manifest", "manifest_list",    "statistics",       "partition_statistics",
    "checksum",
};

const char *icm_expire_file_kind_name(icm_expire_file_kind kind)
{
    return (unsigned)kind < ICM_EXPIRE_FILE_KIND_COUNT ? KIND_NAMES[kind] : "other";
}

int icm__expire_result_new(icm_expire_result **out)
{
    icm__expire_result_full *full = icm__calloc(1, sizeof *full);
    *out = full != NULL ? &full->pub : NULL;
    return full == NULL ? ICM_ENOMEM : 0;
}

static void free_files(icm_expire_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        icm__free(files[i].path);
    icm__free(files);
}

void icm_expire_result_free(icm_expire_result *r)
{
    if (r == NULL)
        return;
    icm__free(r->expired_ids);
    icm__free(r->retained_ids);
    for (size_t i = 0; i < r->removed_ref_count; i++)
        icm__free(r->removed_refs[i]);
    icm__free(r->removed_refs);
    free_files(r->deleted_files, r->deleted_file_count);
    free_files(r->deleted_manifests, r->deleted_manifest_count);
    free_files(r->deleted_statistics_files, r->deleted_statistics_file_count);
    free_files(r->deleted_checksum_files, r->deleted_checksum_file_count);
    for (size_t i = 0; i < r->problem_count; i++) {
        icm__free(r->problems[i].location);
        icm__free(r->problems[i].message);
    }
    icm__free(r->problems);
    icm__free(r->metadata_location);
    icm__free(r->kept);
    icm__free(icm__expire_result_full_of(r)->entry_facts);
    icm__free(r);
}

static int64_t *copy_ids(const int64_t *ids, size_t n)
{
    int64_t *c = icm__calloc(n ? n : 1, sizeof *c);
    if (c != NULL && n > 0)
        memcpy(c, ids, n * sizeof *c);
    return c;
}

int icm__expire_result_set_decision(icm_expire_result *r, icm_expire_decision *d)
{
    int64_t *expired = copy_ids(d->expired_ids, d->expired_count);
    int64_t *retained = copy_ids(d->retained_ids, d->retained_count);
    char **refs = icm__calloc(d->removed_ref_count ? d->removed_ref_count : 1, sizeof *refs);
    bool ok = expired != NULL && retained != NULL && refs != NULL;
    for (size_t i = 0; ok && i < d->removed_ref_count; i++)
        ok = (refs[i] = icm__strdup(d->removed_refs[i])) != NULL;
    if (!ok) {
        for (size_t i = 0; refs != NULL && i < d->removed_ref_count; i++)
            icm__free(refs[i]);
        icm__free(refs);
        icm__free(expired);
        icm__free(retained);
        return ICM_ENOMEM;
    }
    icm__free(r->expired_ids);
    icm__free(r->retained_ids);
    for (size_t i = 0; i < r->removed_ref_count; i++)
        icm__free(r->removed_refs[i]);
    icm__free(r->removed_refs);
    r->expired_ids = expired;
    r->expired_count = d->expired_count;
    r->retained_ids = retained;
    r->retained_count = d->retained_count;
    r->removed_refs = refs;
    r->removed_ref_count = d->removed_ref_count;
    r->now_ms = d->now_ms;
    r->older_than_ms = d->older_than_ms;
    r->retain_last = d->retain_last;
    icm__free(r->kept);
    r->kept = d->kept;
    d->kept = NULL;
    return 0;
}

int icm__expire_add_problem(icm_expire_result *r, icm_expire_problem_kind kind,
                            const char *location, int code, const char *message)
{
    icm_expire_problem *grown =
        icm__reallocarray(r->problems, r->problem_count + 1, sizeof *grown);
    if (grown == NULL)
        return ICM_ENOMEM;
    r->problems = grown;
    icm_expire_problem *p = &grown[r->problem_count];
    p->kind = kind;
    p->code = code;
    p->location = icm__strdup(location != NULL ? location : "");
    p->message = icm__strdup(message != NULL ? message : "");
    if (p->location == NULL || p->message == NULL) {
        icm__free(p->location);
        icm__free(p->message);
        return ICM_ENOMEM;
    }
    r->problem_count++;
    return 0;
}

/* Before the delete phase PLANNED files count ("to delete"), afterwards DELETED ones; already
 * gone, kept, failed and (after a stop) still planned ones do not. */
static void tally_files(icm_expire_result *r, const icm_expire_file *files, size_t n)
{
    icm_expire_file_state counted = r->delete_phase ? ICM_EXPIRE_FILE_DELETED
                                                    : ICM_EXPIRE_FILE_PLANNED;
    for (size_t i = 0; i < n; i++) {
        r->already_gone += files[i].state == ICM_EXPIRE_FILE_ALREADY_GONE;
        if (files[i].state != counted)
            continue;
        r->counts[files[i].kind]++;
        if (files[i].size_bytes > 0)
            r->bytes[files[i].kind] += files[i].size_bytes;
    }
}

void icm__expire_result_tally(icm_expire_result *r)
{
    memset(r->counts, 0, sizeof r->counts);
    memset(r->bytes, 0, sizeof r->bytes);
    r->already_gone = 0;
    tally_files(r, r->deleted_files, r->deleted_file_count);
    tally_files(r, r->deleted_manifests, r->deleted_manifest_count);
    tally_files(r, r->deleted_statistics_files, r->deleted_statistics_file_count);
    tally_files(r, r->deleted_checksum_files, r->deleted_checksum_file_count);
    r->total = 0;
    r->total_bytes = 0;
    for (size_t k = 0; k < ICM_EXPIRE_FILE_KIND_COUNT; k++) {
        r->total += r->counts[k];
        r->total_bytes += r->bytes[k];
    }
}

/* ------------------------------------------------------------------------------------------ */
/* planning                                                                                    */

/* What later steps need to know of a content candidate, found out when the walk delivers it
 * (its path is then in cache; fifty thousand scattered paths read again later are not). */
typedef struct content_facts {
    icm__pathset_hash key; /* hash of its location key (icm__pathset_location_hash) */
    uint64_t name;         /* hash of its key's last segment (name_hash) */
    /* what its entry says besides the size (icm__expire_entry_facts) */
    int64_t record_count;
    uint64_t bounds;
    icm__partition_key partition;
    icm_file_format file_format;
    int64_t content_offset, content_size_bytes; /* a deletion vector's blob (0, 0: unknown) */
    uint64_t referenced;   /* ... and its data file (icm__verify_referenced_digest; 0: unknown) */
    int64_t added_snapshot_id; /* INT64_MIN: unknown */
    bool inside;           /* inside the table's locations (inside_table) */
} content_facts;

/* A file no entry describes here (a checksum file, a list, a manifest): inside, nothing
 * known. */
#define UNKNOWN_FACTS                                                                          \
    ((content_facts){.record_count = -1,                                                       \
                     .file_format = ICM_FILE_FORMAT_OTHER,                                      \
                     .added_snapshot_id = INT64_MIN,                                            \
                     .inside = true})

/* A growable array of planned files. */
typedef struct file_vec {
    icm_expire_file *items;
    content_facts *facts; /* content files only, one per item */
    size_t len, cap;
} file_vec;

/* The manifest lists, manifests and statistics files of the plan that may be live data or
 * delete files (see gate_candidates): their facts, and where each is (vec k, item i). */
typedef struct gated_vec {
    content_facts *facts;
    uint8_t *k;
    size_t *i;
    size_t len, cap;
} gated_vec;

typedef struct plan {
    icm_expire_result *r;
    const icm__pathset *keep;
    icm__pathset *seen;        /* candidates already planned or refused */
    const char *roots[3];      /* table location, write.data.path, write.metadata.path */
    size_t root_count;
    bool withhold_content, withhold_manifests;
    size_t content_outside;    /* content candidates outside the table's locations */
    file_vec vec[3];           /* content files, manifests and lists, statistics files */
    file_vec checksums;        /* checksum companions of the planned files (with facts) */
    gated_vec gated;           /* non-content candidates to look up among retained entries */
    icm__expire_alias alias;   /* second names through symbolic links (expire_alias.c) */
    bool entry_facts;          /* keep the content candidates' entry facts (described walk) */
    /* With entry_facts: what later entries of a candidate say when it differs from its first
     * (a file added again after a delete, with other metrics: adversary round 18, F1); the
     * keys of the (candidate, facts) pairs met, and those pairs past each first. */
    icm__pathset *facts_seen;
    content_facts *variants;
    size_t variant_count, variant_cap;
} plan;

/* Room for `cap` items (and their facts when the vector keeps them). */
static int vec_reserve(file_vec *v, size_t cap, bool facts)
{
    if (cap <= v->cap)
        return 0;
    icm_expire_file *grown = icm__reallocarray(v->items, cap, sizeof *grown);
    if (grown == NULL)
        return ICM_ENOMEM;
    v->items = grown;
    if (facts) {
        content_facts *f = icm__reallocarray(v->facts, cap, sizeof *f);
        if (f == NULL)
            return ICM_ENOMEM; /* (items grew: harmless, cap stays) */
        v->facts = f;
    }
    v->cap = cap;
    return 0;
}

static int vec_push(file_vec *v, const char *path, icm__file_kind kind, int64_t size_bytes,
                    const content_facts *facts)
{
    if (v->len == v->cap && vec_reserve(v, v->cap ? v->cap * 2 : 16, facts != NULL) != 0)
        return ICM_ENOMEM;
    char *copy = icm__strdup(path);
    if (copy == NULL)
        return ICM_ENOMEM;
    if (facts != NULL)
        v->facts[v->len] = *facts;
    v->items[v->len++] = (icm_expire_file){copy, (icm_expire_file_kind)kind, size_bytes,
                                           ICM_EXPIRE_FILE_PLANNED};
    return 0;
}

static size_t vec_of(icm__file_kind kind)
{
    if (kind <= ICM__FILE_DELETION_VECTOR)
        return 0;
    return kind <= ICM__FILE_MANIFEST_LIST ? 1 : 2;
}

static bool inside_table(const plan *p, const char *path)
{
    for (size_t i = 0; i < p->root_count; i++)
        if (icm__location_is_inside(path, p->roots[i]))
            return true;
    return false;
}

static bool withheld(const plan *p, icm__file_kind kind)
{
    if (kind <= ICM__FILE_DELETION_VECTOR)
        return p->withhold_content;
    return kind == ICM__FILE_MANIFEST && p->withhold_manifests;
}

static bool is_content(icm__file_kind kind)
{
    return kind <= ICM__FILE_DELETION_VECTOR;
}

/* The hash of the last segment of `location`'s key (the name filter's unit): told from the
 * location when it can be, else from the key itself (icm__location_key_tail never gives
 * another answer than the key). Returns 0 or ICM_ENOMEM. */
static int name_hash(const char *location, uint64_t *out)
{
    const char *name;
    size_t n;
    if (icm__location_key_tail(location, strlen(location), &name, &n)) {
        *out = XXH3_64bits(name, n);
        return 0;
    }
    char *key = NULL;
    if (icm__location_key(location, &key) != 0)
        return ICM_ENOMEM;
    const char *slash = strrchr(key, '/');
    name = slash != NULL ? slash + 1 : key;
    *out = XXH3_64bits(name, strlen(name));
    icm__free(key);
    return 0;
}

static int refuse_outside(plan *p, const char *location)
{
    return icm__expire_add_problem(p->r, ICM_EXPIRE_PROBLEM_OUTSIDE_TABLE, location, ICM_EREFUSED,
                                   "not deleted: outside the table location, write.data.path "
                                   "and write.metadata.path");
}

/* The facts of a content file's entry (`f`, its location's hash `h`), noted when they differ
 * from those of every entry of that file met before: `first` when it is the file's first
 * entry (its facts go with the candidate), else a variant kept beside them. A deletion
 * vector's entries each describe another blob: the first one says enough (its footer must
 * list it). Returns 0 or ICM_ENOMEM. */
static int note_variant(plan *p, icm__pathset_hash h, const icm__reached *f, bool first)
{
    if (!p->entry_facts || f->kind == ICM__FILE_DELETION_VECTOR)
        return 0;
    if (p->facts_seen == NULL) {
        int rc = icm__pathset_new(&p->facts_seen, 0);
        if (rc != 0)
            return rc;
    }
    uint64_t words[5] = {(uint64_t)f->record_count, f->bounds, (uint64_t)f->file_format,
                         f->partition.shape, f->partition.values};
    icm__pathset_hash key = h;
    key.low ^= XXH3_64bits(words, sizeof words);
    key.high ^= UINT64_C(0x666163747320); /* (apart from the candidates' own keys) */
    bool added = false;
    int rc = icm__pathset_add_hash(p->facts_seen, key, &added);
    if (rc != 0 || !added || first)
        return rc;
    if (p->variant_count == p->variant_cap) {
        size_t cap = p->variant_cap ? 2 * p->variant_cap : 16;
        content_facts *grown = icm__reallocarray(p->variants, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        p->variants = grown;
        p->variant_cap = cap;
    }
    p->variants[p->variant_count++] = (content_facts){.key = h,
                                                      .record_count = f->record_count,
                                                      .bounds = f->bounds,
                                                      .partition = f->partition,
                                                      .file_format = f->file_format,
                                                      .added_snapshot_id = f->added_snapshot_id,
                                                      .inside = true};
    return 0;
}

/* A file an expired snapshot reaches. Lists, manifests and statistics files are decided here
 * (the keep set already names every one the retained snapshots reference); data and delete
 * files are collected and decided once the retained manifests' entries are known. */
static int on_candidate(const icm__reached *f, void *payload)
{
    plan *p = payload;
    if (withheld(p, f->kind))
        return 0;
    bool added;
    /* The keep set is checked for every kind: a file a retained snapshot reaches in any role
     * (list, manifest, statistics, metadata document) stays even when a manifest of an expired
     * snapshot names it as a data file. */
    icm__pathset_hash h;
    int rc = icm__pathset_location_hash(f->location, &h);
    if (rc != 0 || icm__pathset_contains_hash(p->keep, h))
        return rc;
    if ((rc = icm__pathset_add_hash(p->seen, h, &added)) != 0)
        return rc;
    if (!added) /* one live file may sit in several expired manifests */
        return is_content(f->kind) ? note_variant(p, h, f, false) : 0;
    if (is_content(f->kind) && (rc = note_variant(p, h, f, true)) != 0)
        return rc;
    if (!is_content(f->kind)) {
        if (!inside_table(p, f->location))
            return refuse_outside(p, f->location);
        return vec_push(&p->vec[vec_of(f->kind)], f->location, f->kind, f->size_bytes, NULL);
    }
    content_facts facts = {.key = h,
                           .record_count = f->record_count,
                           .bounds = f->bounds,
                           .partition = f->partition,
                           .file_format = f->file_format,
                           .content_offset = f->content_offset,
                           .content_size_bytes = f->content_size_bytes,
                           .added_snapshot_id = f->added_snapshot_id,
                           .inside = inside_table(p, f->location)};
    p->content_outside += !facts.inside;
    if ((rc = name_hash(f->location, &facts.name)) != 0)
        return rc;
    if (f->kind == ICM__FILE_DELETION_VECTOR && f->referenced_data_file != NULL &&
        (rc = icm__verify_referenced_digest(f->referenced_data_file, &facts.referenced)) != 0)
        return rc;
    return vec_push(&p->vec[0], f->location, f->kind, f->size_bytes, &facts);
}

/* The lists' own count of the live entries the expired walk will deliver: the candidate set and
 * the content files' vector are sized once for them instead of growing step by step (each
 * step a new table, touched afresh). Only a hint: capped (a list may claim anything; 2^22
 * entries is a 64 MiB set at most), and a failed reservation only means growing as before. */
#define CANDIDATE_RESERVE_CAP ((size_t)1 << 22)

static void expect_candidates(size_t live_entries, void *payload)
{
    plan *p = payload;
    size_t n = live_entries < CANDIDATE_RESERVE_CAP ? live_entries : CANDIDATE_RESERVE_CAP;
    /* + the lists and manifests themselves, delivered too */
    if (icm__pathset_reserve(p->seen, icm__pathset_count(p->seen) + n + 4096) != 0)
        icm_error_clear();
    if (vec_reserve(&p->vec[0], n, true) != 0)
        icm_error_clear();
}

static int by_key(const void *a, const void *b)
{
    const icm__pathset_hash *x = &((const icm__expire_entry_facts *)a)->key;
    const icm__pathset_hash *y = &((const icm__expire_entry_facts *)b)->key;
    if (x->high != y->high)
        return x->high < y->high ? -1 : 1;
    return (x->low > y->low) - (x->low < y->low);
}

static icm__expire_entry_facts entry_facts_of(const content_facts *c)
{
    return (icm__expire_entry_facts){c->key,         c->record_count,   c->bounds,
                                     c->partition,   c->file_format,    c->content_offset,
                                     c->content_size_bytes, c->referenced, c->added_snapshot_id};
}

/* The content candidates' entry facts, into the result (sorted by key, a candidate's variants
 * beside its first) for the verification: the candidates of the expired walk, a superset of
 * what is planned in the end. */
static int keep_entry_facts(plan *p)
{
    icm__expire_result_full *full = icm__expire_result_full_of(p->r);
    icm__free(full->entry_facts);
    full->entry_facts = NULL;
    full->entry_fact_count = 0;
    const file_vec *v = &p->vec[0];
    if (v->len == 0 || !p->entry_facts)
        return 0;
    size_t n = v->len + p->variant_count;
    icm__expire_entry_facts *f = icm__reallocarray(NULL, n, sizeof *f);
    if (f == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < v->len; i++)
        f[i] = entry_facts_of(&v->facts[i]);
    for (size_t i = 0; i < p->variant_count; i++)
        f[v->len + i] = entry_facts_of(&p->variants[i]);
    qsort(f, n, sizeof *f, by_key);
    full->entry_facts = f;
    full->entry_fact_count = n;
    return 0;
}

size_t icm__expire_entry_facts_of(const icm_expire_result *r, const char *location,
                                  const icm__expire_entry_facts **first)
{
    const icm__expire_result_full *full = (const icm__expire_result_full *)(const void *)r;
    *first = NULL;
    icm__expire_entry_facts probe;
    memset(&probe, 0, sizeof probe);
    if (full->entry_fact_count == 0 || icm__pathset_location_hash(location, &probe.key) != 0) {
        icm_error_clear(); /* (out of memory: unknown, which only keeps more) */
        return 0;
    }
    size_t lo = 0, hi = full->entry_fact_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_key(&full->entry_facts[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < full->entry_fact_count && by_key(&full->entry_facts[end], &probe) == 0)
        end++;
    *first = end > lo ? &full->entry_facts[lo] : NULL;
    return end - lo;
}

static int report_problems(icm_expire_result *r, const icm__reach_report *rep)
{
    for (size_t i = 0; i < rep->failure_count; i++) {
        const icm__reach_failure *f = &rep->failures[i];
        int rc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_UNREADABLE, f->location, f->code,
                                         f->message);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A retained snapshot that references `location`: as its manifest list, or (refs) as the
 * snapshot that first reached the manifest; -1 when none is found. */
static int64_t retained_snapshot_of(const icm_table_metadata *after,
                                    const icm__manifest_refs *refs, const char *location)
{
    size_t ns = icm_table_metadata_snapshot_count(after);
    for (size_t i = 0; refs == NULL && i < ns; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(after, i);
        if (s->manifest_list != NULL && strcmp(s->manifest_list, location) == 0)
            return s->snapshot_id;
    }
    for (size_t i = 0; refs != NULL && i < refs->len; i++)
        if (strcmp(refs->items[i].mf.manifest_path, location) == 0)
            return refs->items[i].snapshot_id;
    return -1;
}

/* A retained manifest list (refs NULL) or manifest that could not be read is an error of the
 * run (README: it holds back the deletes that could depend on it, exit 1): its problem names a
 * retained snapshot that references it and what is held back (for a manifest: `held`, NULL =
 * data and delete files), and the first is withheld_by. */
static int report_retained_problems(plan *p, const icm__reach_report *rep,
                                    const icm_table_metadata *after,
                                    const icm__manifest_refs *refs, const char *held)
{
    for (size_t i = 0; i < rep->failure_count; i++) {
        const icm__reach_failure *f = &rep->failures[i];
        bool list = refs == NULL;
        int64_t id = retained_snapshot_of(after, refs, f->location);
        char *snap = id != -1 ? icm__sprintf("retained snapshot %lld", (long long)id)
                              : icm__strdup("a retained snapshot");
        char *message =
            snap == NULL ? NULL
                         : icm__sprintf("%s of %s cannot be read: %s; no %s is deleted",
                                        list ? "manifest list" : "manifest", snap, f->message,
                                        list || held == NULL ? "manifest, data or delete file"
                                                             : held);
        icm__free(snap);
        if (message == NULL)
            return ICM_ENOMEM;
        int rc = icm__expire_add_problem(p->r, ICM_EXPIRE_PROBLEM_UNREADABLE, f->location,
                                         f->code, message);
        icm__free(message);
        if (rc != 0)
            return rc;
        if (p->r->withheld_by == 0)
            p->r->withheld_by = p->r->problem_count;
    }
    return 0;
}

/* Expired manifest lists and manifests that could not be read stay (see the file comment). */
static int drop_unreadable(plan *p, const icm__reach_report *rep)
{
    if (rep->failure_count == 0)
        return 0;
    icm__pathset *failed = NULL;
    int rc = icm__pathset_new(&failed, rep->failure_count);
    for (size_t i = 0; rc == 0 && i < rep->failure_count; i++)
        rc = icm__pathset_add(failed, rep->failures[i].location, NULL);
    file_vec *v = &p->vec[1];
    size_t kept = 0;
    for (size_t i = 0; rc == 0 && i < v->len; i++) {
        bool bad;
        if ((rc = icm__pathset_contains(failed, v->items[i].path, &bad)) != 0)
            break;
        if (bad)
            icm__free(v->items[i].path);
        else
            v->items[kept++] = v->items[i];
    }
    if (rc == 0)
        v->len = kept;
    icm__pathset_free(failed);
    return rc;
}

/* No manifest goes after all (withhold_manifests set once they were planned): those planned
 * are dropped; the expired snapshots' own manifest lists, which only the metadata names, stay
 * planned. */
static void drop_planned_manifests(plan *p)
{
    file_vec *v = &p->vec[1];
    size_t kept = 0;
    for (size_t i = 0; i < v->len; i++) {
        if (v->items[i].kind == ICM_EXPIRE_FILE_MANIFEST)
            icm__free(v->items[i].path);
        else
            v->items[kept++] = v->items[i];
    }
    v->len = kept;
}

/* Manifest lists carry no length in the metadata; the walk gives the size of each list it read
 * whole. Any other planned file without a size is stat'ed for the byte counts; one that is
 * already gone keeps size -1 (deleting it is then a no-op). */
static void size_unknown_files(icm_fileio *io, file_vec *v)
{
    for (size_t i = 0; i < v->len; i++) {
        if (v->items[i].size_bytes >= 0)
            continue;
        icm_file_info info = ICM_FILE_INFO_INIT;
        if (icm_fileio_stat(&info, io, v->items[i].path) == 0)
            v->items[i].size_bytes = info.size_bytes;
    }
    icm_error_clear();
}


/* Ids of snapshots of `before` missing from `after`. */
static int expired_between(const icm_table_metadata *before, const icm_table_metadata *after,
                           int64_t **out, size_t *n)
{
    size_t nb = icm_table_metadata_snapshot_count(before);
    *n = 0;
    *out = icm__calloc(nb ? nb : 1, sizeof **out);
    if (*out == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < nb; i++) {
        int64_t id = icm_table_metadata_snapshot_at(before, i)->snapshot_id;
        if (icm_table_metadata_snapshot_by_id(after, id) == NULL)
            (*out)[(*n)++] = id;
    }
    return 0;
}

typedef struct keep_sink {
    icm__pathset *keep;
    icm__refs_seen *seen;     /* NULL, or what the delete phase's re-check may take as known */
    icm__expire_alias *alias; /* retained references that may be second names */
} keep_sink;

/* A retained list or manifest is "seen" for the re-check (icm__reach_extend): every candidate a
 * retained manifest lists as live is dropped by step 3, so its entries need no second read. */
static int add_to_keep(const icm__reached *f, void *payload)
{
    keep_sink *k = payload;
    int rc = icm__pathset_add(k->keep, f->location, NULL);
    if (rc == 0)
        rc = icm__expire_alias_note(k->alias, f->location);
    return rc == 0 && k->seen != NULL ? icm__refs_seen_note(k->seen, f) : rc;
}

/* Step 1, the keep set by name: the manifest lists, manifests and statistics files of every
 * snapshot of `after` (plus every statistics entry it still has). Its manifests are remembered
 * in *refs for step 3, so no manifest list is read twice. */
static int build_keep(icm_fileio *io, const icm_table_metadata *after, keep_sink *sink,
                      icm__manifest_refs *refs, icm__reach_report *rep)
{
    icm__reach_options ko = {NULL, 0, false, NULL, false, NULL, false, NULL, NULL};
    int rc = icm__reach_walk_collect(io, after, &ko, refs, add_to_keep, sink, rep);
    size_t ns = icm_table_metadata_statistics_count(after);
    for (size_t i = 0; rc == 0 && i < ns; i++) {
        const char *path = icm_table_metadata_statistics_at(after, i)->path;
        rc = icm__pathset_add(sink->keep, path, NULL);
        if (rc == 0)
            rc = icm__expire_alias_note(sink->alias, path);
    }
    return rc;
}

/* The table's own metadata documents are never deleted by expiry, whatever role an expired
 * manifest gives them (icm__table_metadata_docs), nor under another name. */
static int keep_doc(const char *location, void *payload)
{
    keep_sink *k = payload;
    int rc = icm__pathset_add(k->keep, location, NULL);
    return rc == 0 ? icm__expire_alias_note(k->alias, location) : rc;
}

/* Step 3: which collected data and delete files a retained manifest still lists as live. */
typedef struct still_live {
    const icm__pathset *candidates;
    size_t candidate_count;
    icm__pathset *live;
    icm__expire_alias *alias; /* retained references that may be second names */
} still_live;

static int on_retained_entry(const icm__reached *f, void *payload)
{
    still_live *s = payload;
    bool cand, added;
    int rc = icm__expire_alias_note(s->alias, f->location);
    if (rc == 0)
        rc = icm__pathset_contains(s->candidates, f->location, &cand);
    if (rc != 0 || !cand)
        return rc;
    if ((rc = icm__pathset_add(s->live, f->location, &added)) != 0)
        return rc;
    /* Every candidate is accounted for: the remaining manifests cannot change the answer. */
    return icm__pathset_count(s->live) == s->candidate_count ? ICM_EUSER : 0;
}

/* The file names (last key segments) of the candidates, as a Bloom filter: a retained entry
 * whose name is none of them cannot be a candidate, which the decoding threads tell without
 * building its key (almost every retained entry of a large table). 16 bits per name, two set
 * per name: about 1.4% of other names pass, and each only costs the full check. Small enough
 * to stay in a core's cache, where a set of the names' 128-bit hashes would not. */
typedef struct name_filter {
    uint64_t *bits;
    uint64_t mask;                  /* bit count - 1 (a power of two) */
    const icm__expire_alias *alias; /* passes every entry it wants resolved */
} name_filter;

static void name_bits(const name_filter *f, uint64_t h, uint64_t *b1, uint64_t *b2)
{
    *b1 = h & f->mask;
    *b2 = (h >> 32 | h << 32) & f->mask;
}

static int name_filter_new(name_filter *f, size_t names)
{
    uint64_t nbits = 1024;
    while (nbits < (uint64_t)names * 16 && nbits < ((uint64_t)1 << 40))
        nbits *= 2;
    f->mask = nbits - 1;
    f->bits = icm__calloc((size_t)(nbits / 64), sizeof *f->bits);
    return f->bits != NULL ? 0 : ICM_ENOMEM;
}

static void name_filter_add(name_filter *f, uint64_t name)
{
    uint64_t b1, b2;
    name_bits(f, name, &b1, &b2);
    f->bits[b1 / 64] |= (uint64_t)1 << (b1 % 64);
    f->bits[b2 / 64] |= (uint64_t)1 << (b2 % 64);
}

static bool may_be_candidate(const char *location, size_t len, const void *filter)
{
    const name_filter *f = filter;
    const char *name;
    size_t n;
    /* (no NUL byte among the len: see icm__entry_filter) */
    if (!icm__location_key_tail_checked(location, len, &name, &n))
        return true;
    uint64_t b1, b2;
    name_bits(f, XXH3_64bits(name, n), &b1, &b2);
    return ((f->bits[b1 / 64] >> (b1 % 64) & 1) && (f->bits[b2 / 64] >> (b2 % 64) & 1)) ||
           icm__expire_alias_wants_named(f->alias, location, len, name);
}

/* The candidates: `n[0]` facts in `facts[0]`, then `n[1]` in `facts[1]` (content files and
 * the gated lists, manifests and statistics files, looked up in one read). `cand`: an empty
 * set for the candidates (the caller's, emptied and filled here). */
static int find_still_live(icm_fileio *io, int format_version, const icm__manifest_refs *refs,
                           const content_facts *const facts[2], const size_t n[2],
                           icm__pathset *cand, icm__pathset *live, icm__expire_alias *alias,
                           icm__reach_report *rep)
{
    memset(rep, 0, sizeof *rep);
    name_filter names = {NULL, 0, alias};
    int rc = icm__pathset_reserve(cand, n[0] + n[1]);
    if (rc == 0)
        rc = name_filter_new(&names, n[0] + n[1]);
    for (size_t a = 0; a < 2; a++) {
        for (size_t i = 0; rc == 0 && i < n[a]; i++) {
            rc = icm__pathset_add_hash(cand, facts[a][i].key, NULL);
            if (rc == 0)
                name_filter_add(&names, facts[a][i].name);
        }
    }
    if (rc == 0) {
        still_live s = {cand, icm__pathset_count(cand), live, alias};
        rc = icm__reach_entries_filtered(io, format_version, refs, may_be_candidate, &names,
                                         on_retained_entry, &s, rep);
        if (rc == ICM_EUSER)
            rc = 0;
    }
    icm__free(names.bits);
    return rc;
}

/* Step 4: drop the content files still live (or all of them when withheld) and refuse those
 * outside the table. */
static int settle_content(plan *p, const icm__pathset *live)
{
    file_vec *v = &p->vec[0];
    if (!p->withhold_content && icm__pathset_count(live) == 0 && p->content_outside == 0)
        return 0; /* every candidate stays planned: no need to read them all again */
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < v->len; i++) {
        bool drop = p->withhold_content;
        if (!drop && rc == 0)
            drop = icm__pathset_contains_hash(live, v->facts[i].key);
        if (!drop && rc == 0 && !v->facts[i].inside) {
            rc = refuse_outside(p, v->items[i].path);
            drop = true;
        }
        if (drop || rc != 0) {
            icm__free(v->items[i].path);
        } else {
            v->facts[kept] = v->facts[i];
            v->items[kept++] = v->items[i];
        }
    }
    v->len = kept;
    return rc;
}

/* Step 5: the checksum companions of the files planned in steps 1-4 (one
 * icm_fileio_checksum_of per planned file: on local disk one open() of a name that is usually
 * absent). A companion is planned unless the keep set names it, and, when there are any, the
 * retained manifests are read once more for entries naming one (an `.x.crc` a writer added as a
 * data file stays). `seen` is reused as the candidate set. */
static int find_companions(plan *p, icm_fileio *io)
{
    for (size_t k = 0; k < 3; k++) {
        for (size_t i = 0; i < p->vec[k].len; i++) {
            icm_file_info info = ICM_FILE_INFO_INIT;
            char *crc = NULL;
            int rc = icm_fileio_checksum_of(&crc, &info, io, p->vec[k].items[i].path);
            content_facts facts = UNKNOWN_FACTS;
            if (rc == 0 && crc != NULL && (rc = icm__pathset_location_hash(crc, &facts.key)) == 0 &&
                !icm__pathset_contains_hash(p->keep, facts.key) &&
                (rc = name_hash(crc, &facts.name)) == 0 &&
                (rc = vec_push(&p->checksums, crc, ICM__FILE_DATA, info.size_bytes, &facts)) == 0)
                p->checksums.items[p->checksums.len - 1].kind = ICM_EXPIRE_FILE_CHECKSUM;
            icm__free(crc);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static int settle_companions(plan *p, icm_fileio *io, int format_version,
                             const icm__manifest_refs *refs)
{
    int rc = find_companions(p, io);
    if (rc != 0 || p->checksums.len == 0)
        return rc;
    icm__pathset *live = NULL;
    icm__reach_report rep;
    memset(&rep, 0, sizeof rep);
    icm__pathset_clear(p->seen);
    rc = icm__pathset_new(&live, 0);
    const content_facts *const facts[2] = {p->checksums.facts, NULL};
    const size_t n[2] = {p->checksums.len, 0};
    if (rc == 0)
        rc = find_still_live(io, format_version, refs, facts, n, p->seen, live, &p->alias, &rep);
    /* A retained manifest that cannot be read may name any of them: keep them all. */
    bool keep_all = rc == 0 && rep.failure_count > 0;
    icm__reach_report_dispose(&rep);
    file_vec *v = &p->checksums;
    size_t kept = 0;
    for (size_t i = 0; rc == 0 && i < v->len; i++) {
        if (keep_all || icm__pathset_contains_hash(live, v->facts[i].key)) {
            icm__free(v->items[i].path);
        } else {
            v->facts[kept] = v->facts[i];
            v->items[kept++] = v->items[i];
        }
    }
    if (rc == 0)
        v->len = kept;
    icm__pathset_free(live);
    return rc;
}

/* Step 6: take out of `v` the planned files a retained snapshot references under another name
 * (expire_alias.c; each reported there). */
static int settle_second_names(plan *p, file_vec *v)
{
    if (v->len == 0 || p->alias.n_noted == 0)
        return 0;
    bool *kept = icm__calloc(v->len, sizeof *kept);
    if (kept == NULL)
        return icm__error_oom();
    int rc = icm__expire_alias_check(&p->alias, v->items, v->len, kept, p->r);
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < v->len; i++) {
        if (kept[i]) {
            icm__free(v->items[i].path);
            continue;
        }
        if (v->facts != NULL)
            v->facts[n] = v->facts[i];
        v->items[n++] = v->items[i];
    }
    if (rc == 0)
        v->len = n;
    icm__free(kept);
    return rc;
}

static void move_vec(file_vec *v, icm_expire_file **items, size_t *count)
{
    *items = v->items;
    *count = v->len;
    icm__free(v->facts);
    memset(v, 0, sizeof *v);
}

/* ---- lists, manifests and statistics files that may be live data or delete files ---- */

/* The folders a manifest list, manifest or statistics file may lie directly in without being
 * looked up among the retained manifests' entries: the table's metadata folders
 * (icm__table_metadata_dirs, of `before` and of `after`) that no data folder overlaps. The
 * data folders are every place a writer puts data and delete files, by either metadata:
 * `<location>/data`, write.data.path and Java's legacy write.object-storage.path and
 * write.folder-storage.path. Writers put lists, manifests and statistics files directly in the
 * metadata folder and never a data file there, so in the common case nothing is looked up. */
#define MAX_QUIET_DIRS 6

typedef struct quiet_dirs {
    char *dir[MAX_QUIET_DIRS];
    size_t n;
} quiet_dirs;

static void quiet_dirs_dispose(quiet_dirs *q)
{
    for (size_t i = 0; i < q->n; i++)
        icm__free(q->dir[i]);
    q->n = 0;
}

/* Whether `a` and `b` are one folder or one lies below the other, by their keys (local `.`
 * and `..` segments resolved: `/t/metadata/../metadata` is `/t/metadata`). */
static bool overlap(const char *a, const char *b, bool *oom)
{
    char *ka = NULL, *kb = NULL;
    if (icm__location_key(a, &ka) != 0 || icm__location_key(b, &kb) != 0) {
        icm__free(ka);
        *oom = true;
        return true;
    }
    bool hit = icm__location_strip_prefix(ka, kb, NULL) || icm__location_strip_prefix(kb, ka, NULL);
    icm__free(ka);
    icm__free(kb);
    return hit;
}

static bool overlaps_data(const icm_table_metadata *const mds[2], const char *dir, bool *oom)
{
    static const char *const props[] = {"write.data.path", "write.object-storage.path",
                                        "write.folder-storage.path"};
    for (size_t m = 0; m < 2; m++) {
        const char *loc = icm_table_metadata_location(mds[m]);
        if (loc == NULL || loc[0] == '\0')
            return true; /* where its data goes cannot be told */
        char *data = icm__location_join(loc, "data");
        if (data == NULL) {
            *oom = true;
            return true;
        }
        bool hit = overlap(data, dir, oom);
        icm__free(data);
        for (size_t i = 0; !hit && i < sizeof props / sizeof *props; i++) {
            const char *v = icm_table_metadata_property(mds[m], props[i]);
            hit = v != NULL && v[0] != '\0' && overlap(v, dir, oom);
        }
        if (hit)
            return true;
    }
    return false;
}

static int quiet_dirs_init(quiet_dirs *q, const icm_table_metadata *before,
                           const icm_table_metadata *after)
{
    const icm_table_metadata *const mds[2] = {before, after};
    q->n = 0;
    for (size_t m = 0; m < 2; m++) {
        char *dirs[3];
        size_t n = 0;
        if (icm__table_metadata_dirs(mds[m], icm_table_metadata_file(mds[m]), dirs, &n) != 0) {
            quiet_dirs_dispose(q);
            return ICM_ENOMEM;
        }
        bool oom = false;
        for (size_t i = 0; i < n; i++) {
            if (!oom && !overlaps_data(mds, dirs[i], &oom) && q->n < MAX_QUIET_DIRS)
                q->dir[q->n++] = dirs[i];
            else
                icm__free(dirs[i]);
        }
        if (oom) {
            quiet_dirs_dispose(q);
            return ICM_ENOMEM;
        }
    }
    return 0;
}

/* Whether `location` lies directly in one of the quiet folders (a `.` or `..` segment, or a
 * deeper folder, is not). */
static bool in_quiet_dir(const quiet_dirs *q, const char *location)
{
    for (size_t i = 0; i < q->n; i++) {
        const char *rest;
        if (icm__location_strip_prefix(location, q->dir[i], &rest) && rest[0] != '\0' &&
            strchr(rest, '/') == NULL)
            return true;
    }
    return false;
}

static int gated_push(gated_vec *g, uint8_t k, size_t i, const content_facts *f)
{
    if (g->len == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        content_facts *facts = icm__reallocarray(g->facts, cap, sizeof *facts);
        if (facts == NULL)
            return ICM_ENOMEM;
        g->facts = facts;
        uint8_t *ks = icm__reallocarray(g->k, cap, sizeof *ks);
        if (ks == NULL)
            return ICM_ENOMEM;
        g->k = ks;
        size_t *is = icm__reallocarray(g->i, cap, sizeof *is);
        if (is == NULL)
            return ICM_ENOMEM;
        g->i = is;
        g->cap = cap;
    }
    g->facts[g->len] = *f;
    g->k[g->len] = k;
    g->i[g->len++] = i;
    return 0;
}

static void gated_dispose(gated_vec *g)
{
    icm__free(g->facts);
    icm__free(g->k);
    icm__free(g->i);
    memset(g, 0, sizeof *g);
}

/* Step 2b: the planned lists, manifests and statistics files that are not directly in a quiet
 * folder join p->gated: a retained snapshot may reference one of them as a data or delete file
 * (a damaged or crafted path), which the keep set by name cannot tell. */
static int gate_candidates(plan *p, const icm_table_metadata *before,
                           const icm_table_metadata *after)
{
    quiet_dirs q;
    int rc = quiet_dirs_init(&q, before, after);
    for (uint8_t k = 1; rc == 0 && k < 3; k++) {
        for (size_t i = 0; rc == 0 && i < p->vec[k].len; i++) {
            const char *loc = p->vec[k].items[i].path;
            if (in_quiet_dir(&q, loc))
                continue;
            content_facts f = UNKNOWN_FACTS;
            rc = icm__pathset_location_hash(loc, &f.key);
            if (rc == 0)
                rc = name_hash(loc, &f.name);
            if (rc == 0)
                rc = gated_push(&p->gated, k, i, &f);
        }
    }
    quiet_dirs_dispose(&q);
    return rc;
}

/* Step 4b: take out of the plan the gated files a retained manifest lists as live (`live`), or
 * all of them when the retained manifests could not all be read (`unknown`: its text), each
 * reported (ICM_EXPIRE_PROBLEM_LIVE_CONTENT, a warning). */
static int settle_gated(plan *p, const icm__pathset *live, const char *unknown)
{
    gated_vec *g = &p->gated;
    if (g->len == 0)
        return 0;
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < g->len; j++) {
        bool is_live = icm__pathset_contains_hash(live, g->facts[j].key);
        if (unknown == NULL && !is_live)
            continue;
        icm_expire_file *f = &p->vec[g->k[j]].items[g->i[j]];
        const char *kind = icm_expire_file_kind_name(f->kind);
        char *msg = is_live ? icm__sprintf("not deleted: planned as the %s of an expired "
                                           "snapshot, but a retained snapshot references it as a "
                                           "data or delete file (damaged or crafted metadata)",
                                           kind)
                            : icm__sprintf("not deleted: the %s of an expired snapshot lies "
                                           "where a data file may (not directly in a metadata "
                                           "folder apart from the data folders), and a retained "
                                           "snapshot may reference it as one: %s",
                                           kind, unknown);
        rc = msg == NULL ? ICM_ENOMEM
                         : icm__expire_add_problem(p->r, ICM_EXPIRE_PROBLEM_LIVE_CONTENT,
                                                   f->path, ICM_EREFUSED, msg);
        icm__free(msg);
        icm__free(f->path);
        f->path = NULL; /* taken out below */
    }
    for (size_t k = 1; k < 3; k++) {
        file_vec *v = &p->vec[k];
        size_t kept = 0;
        for (size_t i = 0; i < v->len; i++)
            if (v->items[i].path != NULL)
                v->items[kept++] = v->items[i];
        v->len = kept;
    }
    return rc;
}

/*
 * The plan, in Java's order (ReachableFileCleanup), so an expiry that frees no data file never
 * opens a retained manifest:
 *  1. keep set by name (lists, manifests, statistics files of every retained snapshot, and the
 *     table's metadata documents): no candidate of any kind that it names is planned;
 *  2. walk the expired snapshots: their lists, manifests not in the keep set, and the live
 *     entries of those manifests (the only data and delete files that can become unreachable);
 *     2b. gate: the planned lists, manifests and statistics files that do not lie directly in
 *     a metadata folder of the table that no data folder overlaps (gate_candidates) may be live
 *     data or delete files (a damaged or crafted path), which step 1 cannot tell;
 *  3. if any data or delete file was collected, or step 2b gated a file: read the retained
 *     manifests' entries until each of them is either found live or every manifest was read;
 *  4. keep what step 3 found live (and every gated file when a retained manifest list or
 *     manifest could not be read: any of them may be live).
 * So a file expiry deletes is never one the retained snapshots reference in any role, with one
 * assumption for the common case: a retained data or delete file does not lie directly in a
 * metadata folder no data folder overlaps (writers never put one there).
 */
static int run_plan(plan *p, icm_fileio *io, const icm_table_metadata *before,
                    const icm_table_metadata *after, icm_expire_cleanup cleanup,
                    icm__refs_seen *seen)
{
    icm__reach_report rep;
    icm__manifest_refs refs = {NULL, 0, 0};
    int64_t *expired = NULL;
    size_t n_expired = 0;
    icm__pathset *keep = NULL, *live = NULL;
    int rc = expired_between(before, after, &expired, &n_expired);
    if (rc == 0)
        rc = icm__pathset_new(&keep, 0);
    if (rc == 0)
        rc = icm__pathset_new(&live, 0);
    if (rc == 0)
        rc = icm__pathset_new(&p->seen, 0);
    if (rc != 0)
        goto done;

    keep_sink sink = {keep, seen, &p->alias};
    rc = build_keep(io, after, &sink, &refs, &rep);
    if (rc == 0)
        rc = icm__table_metadata_docs(before, NULL, keep_doc, &sink);
    if (rc == 0)
        rc = icm__table_metadata_docs(after, NULL, keep_doc, &sink);
    if (rc == 0)
        rc = report_retained_problems(p, &rep, after, NULL, NULL);
    p->withhold_manifests = icm__reach_report_has_failure(&rep, true);
    p->withhold_content = cleanup != ICM_EXPIRE_CLEANUP_ALL || p->withhold_manifests;
    icm__reach_report_dispose(&rep);
    if (rc != 0)
        goto done;

    p->keep = keep;
    /* (described: each content candidate's entry facts, for the verification) */
    icm__reach_options co = {expired, n_expired, !p->withhold_content, keep, true,
                             expect_candidates, p->entry_facts, NULL, NULL};
    rc = icm__reach_walk(io, before, &co, on_candidate, p, &rep);
    /* (an expired manifest or list that cannot be read may hold the only description of a
     * planned file that a damaged retained entry agrees with: then no description is kept and
     * every retained file of a planned file's size may stand for it; adversary round 19, L3) */
    if (rep.failure_count > 0)
        p->entry_facts = false;
    if (rc == 0)
        rc = keep_entry_facts(p);
    if (rc == 0)
        rc = report_problems(p->r, &rep);
    if (rc == 0)
        rc = drop_unreadable(p, &rep);
    icm__reach_report_dispose(&rep);

    if (rc == 0)
        rc = gate_candidates(p, before, after);
    bool check_content = p->vec[0].len > 0 && !p->withhold_content;
    bool check_gated = p->gated.len > 0 && !p->withhold_manifests;
    const char *unknown = p->withhold_manifests
                              ? "a retained manifest list cannot be read" : NULL;
    if (rc == 0 && (check_content || check_gated)) {
        /* The expired walk is over: its set of candidates seen becomes the set of content
         * and gated candidates (each of those is in it, so its table is large enough, and its
         * memory is in use already). */
        icm__pathset_clear(p->seen);
        const content_facts *const facts[2] = {p->vec[0].facts, p->gated.facts};
        const size_t n[2] = {check_content ? p->vec[0].len : 0, p->gated.len};
        rc = find_still_live(io, icm_table_metadata_format_version(after), &refs, facts, n,
                             p->seen, live, &p->alias, &rep);
        if (rc == 0)
            rc = report_retained_problems(
                p, &rep, after, &refs,
                check_content ? NULL
                              : "manifest list, manifest or statistics file that may be a data "
                                "or delete file");
        /* A retained manifest that cannot be read may list any of them; and one that
         * disagrees with the row naming it may be the sign of a list that lies (a row cut,
         * another's counts raised to cover it: adversary round 8, finding 4), so no manifest
         * goes either. */
        if (check_content)
            p->withhold_content = p->withhold_content || rep.failure_count > 0;
        if (rep.failure_count > 0) {
            unknown = "a retained manifest cannot be read";
            p->withhold_manifests = true;
            drop_planned_manifests(p);
        }
        icm__reach_report_dispose(&rep);
    }
    if (rc == 0)
        rc = settle_content(p, live);
    if (rc == 0)
        rc = settle_gated(p, live, unknown);
    /* Before the companions, so a file kept as a second name keeps its companion unplanned. */
    for (size_t k = 0; rc == 0 && k < 3; k++)
        rc = settle_second_names(p, &p->vec[k]);
    /* The retained manifests must all be known to tell whether one names a companion. */
    if (rc == 0 && !p->withhold_manifests)
        rc = settle_companions(p, io, icm_table_metadata_format_version(after), &refs);
    if (rc == 0)
        rc = settle_second_names(p, &p->checksums);
    p->r->withheld_manifests = p->withhold_manifests;
    p->r->withheld_content_files = cleanup == ICM_EXPIRE_CLEANUP_ALL && p->withhold_content;
done:
    icm__manifest_refs_dispose(&refs);
    icm__pathset_free(live);
    icm__pathset_free(keep);
    icm__free(expired);
    return rc;
}

int icm__expire_plan(icm_fileio *io, const icm_table_metadata *before,
                     const icm_table_metadata *after, icm_expire_cleanup cleanup,
                     icm_expire_result *r, icm__refs_seen *seen, bool entry_facts)
{
    r->cleanup = cleanup;
    if (cleanup == ICM_EXPIRE_CLEANUP_NONE || icm_table_metadata_snapshot_count(before) == 0) {
        icm__expire_result_tally(r);
        return 0;
    }
    plan p;
    memset(&p, 0, sizeof p);
    p.r = r;
    p.entry_facts = entry_facts;
    p.root_count = icm__table_roots(after, p.roots);
    int rc = icm__expire_alias_init(&p.alias, io, p.roots, p.root_count);
    if (rc == 0)
        rc = run_plan(&p, io, before, after, cleanup, seen);
    icm__expire_alias_dispose(&p.alias);
    icm__pathset_free(p.seen);
    icm__pathset_free(p.facts_seen);
    icm__free(p.variants);
    gated_dispose(&p.gated);
    if (rc != 0) {
        for (size_t k = 0; k < 3; k++) {
            free_files(p.vec[k].items, p.vec[k].len);
            icm__free(p.vec[k].facts);
        }
        free_files(p.checksums.items, p.checksums.len);
        icm__free(p.checksums.facts);
        return rc;
    }
    size_unknown_files(io, &p.vec[1]);
    move_vec(&p.vec[0], &r->deleted_files, &r->deleted_file_count);
    move_vec(&p.vec[1], &r->deleted_manifests, &r->deleted_manifest_count);
    move_vec(&p.vec[2], &r->deleted_statistics_files, &r->deleted_statistics_file_count);
    move_vec(&p.checksums, &r->deleted_checksum_files, &r->deleted_checksum_file_count);
    icm__expire_result_tally(r);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* public planning entry point for callers who commit themselves                               */

int icm_expire_plan_files(icm_expire_result **out, icm_fileio *io,
                          const icm_table_metadata *before, const icm_table_metadata *after,
                          icm_expire_cleanup cleanup)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL, "NULL argument");
    *out = NULL;
    if (io == NULL || before == NULL || after == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL, "NULL argument");
    /* a folder another table format manages: nothing to delete (as icm_expire_snapshots) */
    int rc = cleanup != ICM_EXPIRE_CLEANUP_NONE ? icm__other_format_check_roots(io, after) : 0;
    if (rc != 0)
        return rc;
    icm_expire_result *r = NULL;
    rc = icm__expire_result_new(&r);
    if (rc != 0)
        return rc;
    int64_t *expired = NULL;
    size_t n = 0;
    rc = expired_between(before, after, &expired, &n);
    if (rc == 0) {
        r->expired_ids = expired;
        r->expired_count = n;
        size_t na = icm_table_metadata_snapshot_count(after);
        r->retained_ids = icm__calloc(na ? na : 1, sizeof(int64_t));
        rc = r->retained_ids == NULL ? ICM_ENOMEM : 0;
        for (size_t i = 0; rc == 0 && i < na; i++)
            r->retained_ids[r->retained_count++] =
                icm_table_metadata_snapshot_at(after, i)->snapshot_id;
    }
    if (rc == 0)
        rc = icm__expire_plan(io, before, after, cleanup, r, NULL, true);
    if (rc == 0)
        rc = icm__expire_verify(io, before, after, r);
    if (rc == ICM_EREFUSED) {
        *out = r; /* nothing planned; the problems name the missing files */
        return rc;
    }
    if (rc != 0) {
        icm_expire_result_free(r);
        return rc;
    }
    icm__expire_result_full_of(r)->deletable = true; /* the caller says `after` is committed */
    *out = r;
    return 0;
}
