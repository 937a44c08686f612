/*
 * maint/orphans_refs.c: the sweep's keep set R: everything the table's metadata references (the
 * reachability walk over every snapshot, the metadata documents, and the names the listing
 * gives referenced files reached through a link), and bringing R up to date with newer
 * metadata (the re-check); and the candidates that are a referenced file under another name.
 *
 * One file, two names: a symbolic link gives a local file more names, and R compares names.
 * The rule: for a local table, a listed file whose real path (every link resolved, as the
 * kernel resolves it) is the real path of a referenced file is kept. The survey of the roots
 * (link_survey.h, shared with expiry) decides the cost: with a link below a root ("link mode")
 * every referenced local file is resolved and R also holds the listing's name of its real path,
 * and every candidate is resolved; without one only references named outside the roots (or
 * with a dot segment: icm__orphans_below_root) are, and a plainly named file below a root is
 * its own real name. Object stores have no links: nothing is resolved there.
 *
 * Read-only by construction, as every planning file of the sweep (orphans_plan.h).
 */
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/metadata.h"
#include "maint/orphans_internal.h"
#include "maint/orphans_plan.h"
#include "maint/places.h"
#include "util/location.h"
#include "util/strset.h"

/* ------------------------------------------------------------------------------------------ */
/* the keep set R                                                                              */

static int add_ref(plan *p, const char *loc)
{
    bool added;
    int rc = icm__okeys_add(&p->keys, loc, &added);
    if (rc == 0 && added && icm__okeys_path_under(icm__okeys_last_path(&p->keys),
                                                  p->list_root_path))
        p->referenced_under_root++;
    return rc;
}

/* ENOTFOUND from icm_fileio_resolve means "nothing there": no error. */
static int resolve_or_null(plan *p, const char *location, char **out)
{
    int rc = icm_fileio_resolve(out, p->io, location);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    return rc;
}

/*
 * Once per sweep: where list_root really is, and which of the table's roots, named apart from
 * it, really lie in or around it through a link (write.data.path a link into the table folder
 * the sweep lists: the listing shows those files under the folder's name, the metadata under
 * the link's). A root named around the listing shares its names, so is never displaced.
 */
int icm__orphans_look_up_real_roots(plan *p)
{
    p->real_list_root_done = true;
    int rc = resolve_or_null(p, p->list_root, &p->real_list_root);
    for (size_t i = 0; rc == 0 && p->real_list_root != NULL && i < p->n_roots; i++) {
        if (icm__location_local_part(p->roots[i]) == NULL ||
            icm__location_strip_prefix(p->list_root, p->roots[i], NULL) ||
            icm__location_strip_prefix(p->roots[i], p->list_root, NULL))
            continue;
        char *real = NULL;
        rc = resolve_or_null(p, p->roots[i], &real);
        p->root_displaced[i] = real != NULL &&
                               (icm__location_strip_prefix(real, p->real_list_root, NULL) ||
                                icm__location_strip_prefix(p->real_list_root, real, NULL));
        icm__free(real);
    }
    return rc;
}

/* Whether `loc` is named below one of the table's roots that are not displaced: then its name
 * is the one the listing gives it, and it needs no alias. */
static bool named_like_the_listing(const plan *p, const char *loc)
{
    bool inside = false;
    for (size_t i = 0; i < p->n_roots; i++) {
        if (!icm__location_is_inside(loc, p->roots[i]))
            continue;
        if (p->root_displaced[i])
            return false;
        inside = true;
    }
    return inside;
}

/* Whether `location` names a file of this machine (a local name, or one the path map puts
 * there when it so maps a root; asked only then): only those can be reached through a symbolic
 * link. (Out of memory: assumed, and the resolve then says so.) */
static bool may_be_linked(const plan *p, const char *location)
{
    return icm__location_local_part(location) != NULL ||
           (p->survey.mapped && icm__link_survey_on_local_disk(p->io, location) != 0);
}

/* Link mode: a reference that could not be resolved (a permission error, a link loop) may be
 * any local file under another name: remember the first, whose presence keeps every local
 * candidate (icm__orphans_keep_second_names). */
static int note_unresolved(plan *p, const char *location)
{
    icm_error_clear();
    if (p->unresolved_ref != NULL)
        return 0;
    return (p->unresolved_ref = icm__strdup(location)) != NULL ? 0 : ICM_ENOMEM;
}

/*
 * A referenced local file may be a file of the listing under another name, through a symbolic
 * link: named outside the listing location (the warehouse folder is a link, and the file was
 * added under its real path; or write.data.path is a link into the table folder), or, when a
 * link lies below the table's roots (link mode, link_survey.h), named through that link
 * (`data/lnk/f` with `data/lnk -> real`; `data/a.parquet -> b.parquet`; `d2/real/f` with
 * `d2 -> data`; `data/lnk/../f`). The listing shows it under the name of where it really is
 * (it never follows a link below the listed folder), which R does not hold, and it would be
 * taken for an orphan. Where it really is decides: if that lies below where the listing
 * location really is, R also gets the name the listing gives it (`expected`: marked for the
 * presence check, the listing must show it). Resolved (one realpath each): in link mode every
 * local reference, else only names outside the table's roots or in a displaced root; the
 * table's own names are then the listing's. *exists (may be NULL): the reference was resolved,
 * so it is a file (under whichever name the listing shows it).
 */
/* Whether this run's listing should show `location`: icm__orphans_listing_shows, and for a
 * shard, its key as listed lies in the shard's range (the presence check of a shard expects
 * only its own range's files). */
static bool expected_here(const plan *p, const char *location)
{
    const char *rest;
    return icm__orphans_listing_shows(p, location) &&
           (!p->sharded || (icm__orphans_below_root(p, location, &rest) &&
                            icm__orphans_in_shard_range(p, rest)));
}

static int add_listing_alias_of(plan *p, const char *location, bool expected, bool *exists)
{
    if (exists != NULL)
        *exists = false;
    if (!may_be_linked(p, location))
        return 0; /* object stores have no links */
    /* nor bind mounts: a name outside the listing may be a listed file through another mount
     * (orphans_mounts.c) */
    int rc = icm__orphans_note_ref_identity(p, location);
    if (rc == 0 && !p->real_list_root_done)
        rc = icm__orphans_look_up_real_roots(p);
    if (rc != 0 || p->real_list_root == NULL ||
        (!p->survey.links && named_like_the_listing(p, location)))
        return rc;
    char *real = NULL, *alias = NULL;
    const char *rel;
    rc = icm_fileio_resolve(&real, p->io, location);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear(); /* no file by that name: it aliases nothing */
        return 0;
    }
    if (rc != 0 && rc != ICM_ENOMEM && p->survey.links)
        return note_unresolved(p, location);
    if (rc == 0 && exists != NULL)
        *exists = true;
    if (rc == 0 && icm__location_strip_prefix(real, p->real_list_root, &rel) && rel[0] != '\0') {
        alias = icm__location_join(p->list_root, rel);
        rc = alias != NULL ? add_ref(p, alias) : ICM_ENOMEM;
        if (rc == 0 && expected && expected_here(p, alias)) {
            size_t len;
            const void *key = icm__okeys_last_key(&p->keys, &len);
            (void)icm__pathset_mark_hash(p->keys.set, icm__pathset_hash_key(key, len),
                                         MARK_EXPECTED);
        }
    }
    icm__free(alias);
    icm__free(real);
    return rc;
}

static int add_listing_alias(plan *p, const char *location)
{
    return add_listing_alias_of(p, location, false, NULL);
}

/* ---- shards (docs/semantics.md#sharded-sweep) ---- */

static int refuse_unreadable(const icm__reach_report *rep);

/* The shard key of `location`: its collapsed path (icm__okeys_path_of) relative to
 * list_root_path; *rel NULL when that path does not lie below it. *path owns the text. */
static int shard_key(const plan *p, const char *location, char **path, const char **rel)
{
    *rel = NULL;
    if ((*path = icm__okeys_path_of(location)) == NULL)
        return ICM_ENOMEM;
    if (!icm__okeys_path_under(*path, p->list_root_path))
        return 0;
    const char *r = *path + strlen(p->list_root_path);
    while (*r == '/')
        r++;
    *rel = r;
    return 0;
}

static bool in_range(const plan *p, const char *rel)
{
    return !p->shard_empty && (p->shard_after == NULL || strcmp(rel, p->shard_after) > 0) &&
           (p->shard_upto == NULL || strcmp(rel, p->shard_upto) <= 0);
}

bool icm__orphans_in_shard_range(const plan *p, const char *rel)
{
    return !p->sharded || in_range(p, rel);
}

/* *under: the location's collapsed path lies below list_root's; *in: and in this range. */
static int shard_test(const plan *p, const char *location, bool *in, bool *under)
{
    char *path;
    const char *rel;
    int rc = shard_key(p, location, &path, &rel);
    *under = rel != NULL;
    *in = rel != NULL && in_range(p, rel);
    icm__free(path);
    return rc;
}

int icm__orphans_in_shard(const plan *p, const char *location, bool *in)
{
    *in = true;
    if (!p->sharded)
        return 0;
    bool under;
    return shard_test(p, location, in, &under);
}

static int sample_for_shard(const icm__reached *f, void *payload)
{
    plan *p = payload;
    const char *rest;
    if (!icm__orphans_below_root(p, f->location, &rest))
        return 0;
    char *path;
    const char *rel;
    int rc = shard_key(p, f->location, &path, &rel);
    if (rc == 0 && rel != NULL && rel[0] != '\0') {
        uint64_t h = icm__pathset_hash_key(rel, strlen(rel)).low;
        if (icm__cut_sample_wants(&p->cut_sample, h))
            rc = icm__cut_sample_offer(&p->cut_sample, h, rel);
    }
    icm__free(path);
    return rc;
}

typedef struct stray_refs {
    plan *p;
    icm__strset keys; /* the strays' relative keys */
} stray_refs;

static int add_stray_ref(const icm__reached *f, void *payload)
{
    stray_refs *s = payload;
    const char *rest;
    if (!icm__orphans_below_root(s->p, f->location, &rest))
        return 0;
    char *path;
    const char *rel;
    int rc = shard_key(s->p, f->location, &path, &rel);
    if (rc == 0 && rel != NULL && icm__strset_contains(&s->keys, rel, strlen(rel)))
        rc = add_ref(s->p, f->location);
    icm__free(path);
    return rc;
}

int icm__orphans_add_stray_refs(plan *p, const icm_table_metadata *md)
{
    if (p->shard_strays.len == 0)
        return 0;
    stray_refs s = {p, ICM__STRSET_INIT};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->shard_strays.len; i++) {
        const icm_file_info *f = p->shard_strays.items[i];
        char *path;
        const char *rel;
        rc = shard_key(p, f->location, &path, &rel);
        if (rc == 0 && rel != NULL)
            rc = icm__strset_add(&s.keys, rel, strlen(rel), NULL);
        icm__free(path);
    }
    icm__reach_options ro = {.read_entries = true, .statistics = true};
    icm__reach_report rep;
    if (rc == 0) {
        rc = icm__reach_walk(p->io, md, &ro, add_stray_ref, &s, &rep);
        if (rc == 0 && rep.failure_count > 0)
            rc = refuse_unreadable(&rep);
        icm__reach_report_dispose(&rep);
    }
    icm__strset_dispose(&s.keys);
    return rc;
}

int icm__orphans_set_shard_range(plan *p, const icm_table_metadata *md)
{
    /* The same walk as R's (every snapshot, entries, statistics), so every shard samples the
     * same set of keys; the metadata documents are left out (they are few and R keeps them
     * all). An unreadable manifest is refused by the walk that builds R right after. */
    icm__reach_options ro = {.read_entries = true, .statistics = true};
    icm__reach_report rep;
    int rc = icm__reach_walk(p->io, md, &ro, sample_for_shard, p, &rep);
    icm__reach_report_dispose(&rep);
    if (rc == 0)
        rc = icm__cut_sample_shard(&p->cut_sample, p->o->shard_index, p->o->shard_count,
                                   &p->shard_after, &p->shard_upto, &p->shard_empty);
    return rc;
}

/* Tags of a reference added later (icm__okeys_add_later), for the counts kept when it turns
 * out new. */
#define REF_UNDER_ROOT 1u /* below list_root: counts in referenced_under_root */
#define REF_EXPECTED 2u   /* to be found by the listing: marked MARK_EXPECTED */

void icm__orphans_on_new_ref(unsigned tag, icm__pathset_hash hash, void *payload)
{
    plan *p = payload;
    if (tag & REF_UNDER_ROOT)
        p->referenced_under_root++;
    if (tag & REF_EXPECTED)
        (void)icm__pathset_mark_hash(p->keys.set, hash, MARK_EXPECTED);
}

/* add_ref, deferred a few references so the keep set's memory is fetched meanwhile: the same
 * set and the same counts once flushed (icm__orphans_add_table_refs). */
static int add_ref_later(plan *p, const char *loc, unsigned tag, icm__pathset_hash *hash)
{
    icm__pathset_hash h;
    int rc = icm__okeys_hash(&p->keys, loc, &h);
    if (rc != 0)
        return rc;
    if (hash != NULL)
        *hash = h;
    if (icm__okeys_path_under(icm__okeys_last_path(&p->keys), p->list_root_path))
        tag |= REF_UNDER_ROOT;
    return icm__okeys_add_later(&p->keys, h, tag);
}

/* Most of the keep set is the entries the manifest lists announce: room for them up front saves
 * growing the table many times over (each growth a new table beside the old and a pass over
 * it: 53 bytes per entry at that moment, against 21.4 in a table sized once). The counts are
 * the lists' claims, so the room is given in two steps: up to KEEP_SET_RESERVE_CAP entries at
 * once (a corrupt count costs at most about 90 MB), and the whole announced count once the
 * walk has added 1/KEEP_SET_CONFIRM_SHARE of it (confirm_refs): a corrupt count then costs
 * at most KEEP_SET_CONFIRM_SHARE times the room of the references really there, never
 * more. Until then the table grows by doubling as without a count. A failed reservation only
 * means growing as before. */
#define KEEP_SET_RESERVE_CAP ((size_t)1 << 22)
#define KEEP_SET_CONFIRM_SHARE 4
/* + room for what the walk adds besides the announced entries (a manifest list and its
 * manifests, statistics) and the metadata documents and aliases added after it: a table
 * reserved for exactly the announced entries is full at them, and the manifests' few thousand
 * more made it grow once more to twice the size (measured at 90M references: 2.9 GB instead of
 * 1.9, and 4.0 GB while both tables were alive). 1/32 of the count covers manifests of 32
 * entries or more; a table of smaller ones grows once, as without a count. */
#define KEEP_SET_RESERVE_SPARE(n) ((n) / 32 + 65536)

static void reserve_refs(plan *p, size_t n)
{
    if (icm__pathset_reserve(p->keys.set,
                             p->refs_reserve_base + n + KEEP_SET_RESERVE_SPARE(n)) != 0)
        icm_error_clear();
}

static void expect_refs(size_t live_entries, void *payload)
{
    plan *p = payload;
    p->refs_announced = live_entries;
    p->refs_confirmed = 0;
    p->refs_reserve_base = icm__pathset_count(p->keys.set);
    reserve_refs(p, live_entries < KEEP_SET_RESERVE_CAP ? live_entries : KEEP_SET_RESERVE_CAP);
}

/* One more reference of the walk added: the announced count's second step when it is due
 * (the walk has confirmed a share of it; it is past what the first step reserved). Not for a
 * shard that keeps only its range of the references (on_reached): the count announces them
 * all, so the set grows by doubling as without a count. */
static void confirm_refs(plan *p)
{
    if (p->sharded && !p->survey.links)
        return;
    size_t n = ++p->refs_confirmed;
    if (p->refs_announced > KEEP_SET_RESERVE_CAP &&
        n == p->refs_announced / KEEP_SET_CONFIRM_SHARE && n > 0)
        reserve_refs(p, p->refs_announced);
}

static int on_reached(const icm__reached *f, void *payload)
{
    plan *p = payload;
    const char *rest;
    if (f->kind == ICM__FILE_MANIFEST || f->kind == ICM__FILE_MANIFEST_LIST) {
        int rc = icm__refs_seen_note(&p->seen, f);
        if (rc != 0)
            return rc;
    }
    if (!icm__orphans_below_root(p, f->location, &rest)) {
        if (f->kind <= ICM__FILE_DELETION_VECTOR)
            p->content_outside_root++;
        int rc = add_ref_later(p, f->location, 0, NULL);
        return rc == 0 ? add_listing_alias(p, f->location) : rc;
    }
    if (f->kind <= ICM__FILE_EQUALITY_DELETES && f->size_bytes > 0) {
        if (p->content_sizes == NULL &&
            (p->content_sizes = icm__calloc(ICM__ORPHANS_SIZE_BITS / 64, sizeof(uint64_t))) ==
                NULL)
            return ICM_ENOMEM;
        size_t bit = icm__orphans_size_bit(f->size_bytes);
        p->content_sizes[bit / 64] |= UINT64_C(1) << (bit % 64);
    }
    if (p->sharded && !p->survey.links) {
        /* Another shard's key: no listed file of this shard can name it (the same collapsed
         * path decides both sides, icm__orphans_in_shard), so R leaves it out. In link mode
         * a file has other names, possibly in this range: R keeps every reference then (and
         * expects in the listing only the names in this range: expected_here). */
        bool in, under;
        int rc = shard_test(p, f->location, &in, &under);
        /* A key spelled with `//` is listed (and so expected) by the shard whose range holds
         * its spelling, which may not be its keep-set key's: R keeps it there too, marked
         * expected, so the presence check of the shard that lists it names it when it is
         * missing (adversary round adv3, F3). More in R only keeps more. */
        if (rc != 0 || (under && !in && !expected_here(p, f->location)))
            return rc;
    }
    unsigned tag = expected_here(p, f->location) ? REF_EXPECTED : 0;
    if (p->survey.links) {
        /* Link mode: R gets the listing's name of where the file really is; a file that is
         * there is expected under that name (the listing never enters a linked folder), and
         * one that is not stays expected under its own, so the presence check names it. */
        bool exists;
        int rc = add_listing_alias_of(p, f->location, icm__orphans_listing_shows(p, f->location),
                                      &exists);
        if (rc != 0)
            return rc;
        if (exists)
            tag = 0;
    }
    icm__pathset_hash h;
    int rc = add_ref_later(p, f->location, tag, &h);
    if (rc == 0)
        confirm_refs(p);
    if (rc == 0 && p->sample_cuts && icm__cut_sample_wants(&p->cut_sample, h.low)) {
        /* In the form the listing reports (the list root's), so the cuts fall among its keys. */
        char *cut = icm__location_join(p->list_root, rest);
        rc = cut != NULL ? icm__cut_sample_offer(&p->cut_sample, h.low, cut) : ICM_ENOMEM;
        icm__free(cut);
    }
    return rc;
}

/* A metadata document or version hint of R (not part of the presence check). */
/* R's key of the location last added (icm__okeys_last_key) as a metadata document's. */
static int mark_last_as_doc(plan *p)
{
    int rc = p->metadata_docs == NULL ? icm__pathset_new(&p->metadata_docs, 0) : 0;
    size_t len;
    const void *key = icm__okeys_last_key(&p->keys, &len);
    return rc == 0 ? icm__pathset_add_key(p->metadata_docs, key, len, NULL) : rc;
}

static int add_doc_ref(const char *loc, void *payload)
{
    plan *p = payload;
    int rc = add_ref(p, loc);
    if (rc == 0)
        rc = mark_last_as_doc(p);
    /* Spelled through a link (issue #16, class 1): the listing's name is kept too (when one
     * was added, it is the last key). */
    if (rc == 0)
        rc = add_listing_alias(p, loc);
    return rc == 0 ? mark_last_as_doc(p) : rc;
}

static int refuse_unreadable(const icm__reach_report *rep)
{
    const icm__reach_failure *f = &rep->failures[0];
    return icm__orphan_refuse(f->location,
                  "cannot read this %s of a retained snapshot (%s); the keep set would be "
                  "incomplete, so nothing is deleted (%zu unreadable file%s; no override)",
                  f->is_manifest_list ? "manifest list" : "manifest", f->message,
                  rep->failure_count, rep->failure_count == 1 ? "" : "s");
}

/* Everything `md` references: the walk over every snapshot (lists, manifests, live entries,
 * statistics), the metadata file and its log, and the version hints. */
int icm__orphans_add_table_refs(plan *p, const icm_table_metadata *md, const char *md_location)
{
    icm__reach_options ro = {.read_entries = true, .statistics = true, /* every snapshot */
                             .expect_entries = expect_refs};
    icm__reach_report rep;
    int rc = icm__reach_walk(p->io, md, &ro, on_reached, p, &rep);
    if (rc == 0)
        rc = icm__okeys_flush(&p->keys);
    if (rc == 0 && rep.failure_count > 0)
        rc = refuse_unreadable(&rep);
    icm__reach_report_dispose(&rep);
    if (rc == 0)
        rc = icm__table_metadata_docs(md, md_location, add_doc_ref, p);
    return rc;
}

/* A reference of newer metadata (icm__reach_extend): into R, with its listing alias. */
static int add_newer_ref(const char *loc, void *payload)
{
    plan *p = payload;
    int rc = add_ref(p, loc);
    return rc == 0 ? add_listing_alias(p, loc) : rc;
}

static int refuse_unreadable_newer(const icm__reach_report *rep)
{
    const icm__reach_failure *f = &rep->failures[0];
    return icm__error_set(ICM_ERRCLASS_MAINT, f->code != 0 ? f->code : ICM_EIO, f->location,
                          "cannot read this %s, which a commit during the sweep added (%s); "
                          "what the table references now is unknown, so no further file is "
                          "deleted", f->is_manifest_list ? "manifest list" : "manifest",
                          f->message);
}

/* Everything newer metadata `md` (at `md_location`) references that R lacks, reading only the
 * manifest lists and manifests R does not account for yet. */
int icm__orphans_add_newer_refs(plan *p, const icm_table_metadata *md, const char *md_location)
{
    icm__reach_report rep;
    int rc = icm__reach_extend(p->io, md, md_location, &p->seen, add_newer_ref, p, &rep);
    if (rc == 0)
        rc = icm__okeys_flush(&p->keys);
    if (rc == 0 && rep.failure_count > 0)
        rc = refuse_unreadable_newer(&rep);
    icm__reach_report_dispose(&rep);
    return rc;
}

int icm__orphans_referenced(icm__orphan_plan *p, const char *location, bool *referenced)
{
    icm__okey_match m = ICM__OKEY_NONE;
    int rc = icm__okeys_lookup(&p->keys, location, &m, NULL);
    *referenced = rc == 0 && (m == ICM__OKEY_EXACT ||
                              (m == ICM__OKEY_CONFLICT &&
                               p->o->prefix_mismatch != ICM_PREFIX_MISMATCH_DELETE));
    if (rc == 0 && !*referenced) {
        /* a referenced file under another mount's path (orphans_mounts.c) */
        char *why = NULL;
        rc = icm__orphans_same_file_why(p, location, &why);
        *referenced = why != NULL;
        icm__free(why);
    }
    return rc;
}

/* Drop the orphans from index `from` on that R now references. */
int icm__orphans_drop_referenced(plan *p, size_t from)
{
    icm_orphan_result *r = p->r;
    size_t kept = from;
    for (size_t i = from; i < r->orphan_count; i++) {
        bool now_referenced;
        int rc = icm__orphans_referenced(p, r->orphans[i].path, &now_referenced);
        if (rc != 0) {
            /* keep the list whole: the rest stays (planned, not deleted) */
            memmove(&r->orphans[kept], &r->orphans[i], (r->orphan_count - i) * sizeof *r->orphans);
            r->orphan_count = kept + (r->orphan_count - i);
            return rc;
        }
        if (now_referenced) {
            bool file = r->orphans[i].kind != ICM_ORPHAN_CHECKSUM;
            icm__free(r->orphans[i].path);
            r->newly_referenced++;
            /* a kept file's checksum companion (the entry right after it) stays with it */
            if (file && i + 1 < r->orphan_count && r->orphans[i + 1].kind == ICM_ORPHAN_CHECKSUM)
                icm__free(r->orphans[++i].path);
        } else {
            r->orphans[kept++] = r->orphans[i];
        }
    }
    r->orphan_count = kept;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* candidates that are a referenced file under another name                                   */

/* Whether two names of the same form lie in the same folder by name. */
static bool same_folder(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    return sa != NULL && sb != NULL && sa - a == sb - b && memcmp(a, b, (size_t)(sa - a)) == 0;
}

/* Why the candidate `location` is a referenced file under another name, or may be (*why, a new
 * string; NULL: it is not). Link mode only. Returns 0 or ICM_ENOMEM. */
static int second_name_of(plan *p, const char *location, char **why)
{
    *why = NULL;
    if (p->unresolved_ref != NULL) {
        *why = icm__sprintf("where %s, which the table references, really is cannot be told, "
                            "so it may be this file under another name (through a symbolic "
                            "link)", p->unresolved_ref);
        return *why != NULL ? 0 : ICM_ENOMEM;
    }
    char *real = NULL, *alias = NULL;
    int rc = icm_fileio_resolve(&real, p->io, location);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear(); /* gone (or a dangling link): deleting it deletes no file */
        return 0;
    }
    if (rc != 0 && rc != ICM_ENOMEM) {
        *why = icm__sprintf("where it really is cannot be told (%s), so the table may "
                            "reference it under another name", icm_error_last()->message);
        icm_error_clear();
        return *why != NULL ? 0 : ICM_ENOMEM;
    }
    const char *rel;
    if (rc == 0 && icm__location_strip_prefix(real, p->real_list_root, &rel) && rel[0] != '\0' &&
        (alias = icm__location_join(p->list_root, rel)) == NULL)
        rc = ICM_ENOMEM;
    /* The listing's name of where it really is (what R holds for a reference through a link),
     * and the real path itself (a reference named there, outside the listing). */
    bool referenced = false;
    if (rc == 0 && alias != NULL && !same_folder(alias, location)) {
        /* Its folder is reached through a link: the link guard keeps it (and says so). */
        icm__free(alias);
        icm__free(real);
        return 0;
    }
    if (rc == 0 && alias != NULL && !icm__location_equal(alias, location))
        rc = icm__orphans_referenced(p, alias, &referenced);
    if (rc == 0 && !referenced)
        rc = icm__orphans_referenced(p, real, &referenced);
    if (rc == 0 && referenced &&
        (*why = icm__sprintf("the table references this file under another name (through a "
                             "symbolic link: it is %s)", alias != NULL ? alias : real)) == NULL)
        rc = ICM_ENOMEM;
    icm__free(alias);
    icm__free(real);
    return rc;
}

/*
 * Link mode (a symbolic link below the table's roots): a candidate whose real path is the real
 * path of a referenced file (a link to it, or a name in a linked folder) is that file, and is
 * taken out of the plan with a warning, as is every local candidate when a reference could
 * not be resolved (where it is, is unknown). R holds the listing's name of every referenced
 * file's real path, so one realpath per candidate tells. The dry run's plan is the same.
 * Nothing is done outside link mode. Returns 0 or ICM_ENOMEM (then the plan is unchanged).
 */
int icm__orphans_keep_second_names(plan *p)
{
    icm_orphan_result *r = p->r;
    if (!p->survey.links || r->orphan_count == 0)
        return 0;
    int rc = p->real_list_root_done ? 0 : icm__orphans_look_up_real_roots(p);
    if (rc != 0 || p->real_list_root == NULL)
        return rc; /* (the listing location is not there: it listed nothing) */
    char **why = icm__calloc(r->orphan_count, sizeof *why);
    if (why == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++)
        if (may_be_linked(p, r->orphans[i].path))
            rc = second_name_of(p, r->orphans[i].path, &why[i]);
    return icm__orphans_take_out(p, why, rc);
}
