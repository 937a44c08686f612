/*
 * maint/orphans.c: the orphan sweep's entry point (orphans.h): plan (orphans_plan.c), then,
 * unless it is a dry run, hand the orphans to the delete engine (delete_engine.h).
 *
 * This is the only file of the sweep that deletes (through the engine). Deletes go in batches;
 * before each the table is reloaded and orphans that a commit meanwhile references are dropped
 * (icemaint/maint.h, "The delete phase"; the re-check itself is planning code, orphans_plan.c).
 * Each orphan is checked
 * once more against the table's roots (table location, write.data.path, write.metadata.path)
 * right before its delete, so no planning bug can reach outside the table; a local one must also
 * lie where its name says, with no symbolic link below the table root on its way (link_guard.h),
 * and still be the file the listing saw: same size and mtime, still older than the cutoff (a
 * file replaced during the settle time is someone's new file). Orphan deletes are
 * not retried (as in Java): a file that could not be deleted is still an orphan and the next
 * sweep finds it again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "icemaint/catalog.h"
#include "maint/delete_engine.h"
#include "maint/lease_internal.h"
#include "maint/link_guard.h"
#include "maint/orphans_internal.h"
#include "maint/trash.h"
#include "util/location.h"

const char *icm_delete_outcome_name(icm_delete_outcome outcome)
{
    switch (outcome) {
    case ICM_DELETE_DELETED:
        return "deleted";
    case ICM_DELETE_ALREADY_GONE:
        return "already_gone";
    case ICM_DELETE_FAILED:
        break;
    }
    return "failed";
}

const char *icm_orphan_kind_name(icm_orphan_kind kind)
{
    switch (kind) {
    case ICM_ORPHAN_DATA:
        return "data";
    case ICM_ORPHAN_DELETE:
        return "delete";
    case ICM_ORPHAN_MANIFEST:
        return "manifest";
    case ICM_ORPHAN_MANIFEST_LIST:
        return "manifest_list";
    case ICM_ORPHAN_METADATA:
        return "metadata";
    case ICM_ORPHAN_CHECKSUM:
        return "checksum";
    case ICM_ORPHAN_OTHER:
        break;
    }
    return "other";
}

int icm_prefix_mismatch_parse(icm_prefix_mismatch *out, const char *text)
{
    static const char *const names[] = {"error", "ignore", "delete"};
    for (size_t i = 0; text != NULL && i < 3; i++) {
        if (strcasecmp(text, names[i]) == 0) {
            *out = (icm_prefix_mismatch)i;
            return 0;
        }
    }
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                          "unknown prefix-mismatch mode '%s' (use error, ignore or delete)",
                          text != NULL ? text : "(null)");
}

void icm_orphan_result_free(icm_orphan_result *result)
{
    if (result == NULL)
        return;
    for (size_t i = 0; i < result->orphan_count; i++) {
        icm__free(result->orphans[i].path);
        icm__free(result->orphans[i].error_message);
    }
    icm__free(result->orphans);
    for (size_t i = 0; i < result->warning_count; i++)
        icm__free(result->warnings[i]);
    icm__free(result->warnings);
    icm__free(result->location);
    icm__free(result);
}

/* ------------------------------------------------------------------------------------------ */
/* deleting                                                                                    */

/* The sweep's side of the delete engine (delete_engine.h): its orphans as engine items
 * (items[i].ref is i, the orphan's index, which stays put during the deletes: an orphan a
 * commit references again is marked dropped, its path freed, and taken out at the end). */
typedef struct sweeper {
    icm_table *t;
    icm__orphan_plan *plan;
    icm_orphan_result *r;
    const icm_orphan_options *o;
    icm_fileio *io;
    /* this batch's last checks (before_batch) */
    const char *roots[3];
    size_t n_roots;
    icm__link_guard guard;
    bool guarded;
} sweeper;

static icm__delete_rank rank_of(icm_orphan_kind kind)
{
    switch (kind) {
    case ICM_ORPHAN_DATA:
    case ICM_ORPHAN_DELETE:
        return ICM__DELETE_RANK_CONTENT;
    case ICM_ORPHAN_MANIFEST:
        return ICM__DELETE_RANK_MANIFEST;
    case ICM_ORPHAN_MANIFEST_LIST:
        return ICM__DELETE_RANK_MANIFEST_LIST;
    case ICM_ORPHAN_METADATA:
    case ICM_ORPHAN_OTHER:
        return ICM__DELETE_RANK_METADATA;
    case ICM_ORPHAN_CHECKSUM:
        break;
    }
    return ICM__DELETE_RANK_COMPANION;
}

static bool inside_roots(const sweeper *s, const char *loc)
{
    for (size_t i = 0; i < s->n_roots; i++)
        if (icm__location_is_inside(loc, s->roots[i]))
            return true;
    return false;
}

/* A companion follows its file (orphans_plan.c) and goes only once that file is gone. */
static bool companion_free_to_go(const sweeper *s, const icm_orphan_file *f)
{
    return f != s->r->orphans &&
           (f[-1].state == ICM_ORPHAN_DELETED || f[-1].state == ICM_ORPHAN_ALREADY_GONE);
}

/* Is the file at f->path still the one the listing saw? ICM_ENOTFOUND when it is gone,
 * ICM_EREFUSED (last error says how) when it changed. A file list's sizes and mtimes come from
 * an inventory and may be spelled differently: there only the age is checked (a reviewed
 * plan's, options.exact_file_list, are storage's own: checked exactly). A checksum
 * companion is planned whatever its age (it goes with its file): only its size and mtime.
 * An inventory report's (options.inventory) are storage's own too: checked exactly. */
static int still_as_listed(const sweeper *s, const icm_orphan_file *f,
                           const icm__delete_item *item)
{
    icm_file_info now = ICM_FILE_INFO_INIT;
    int rc = icm__delete_item_stat(s->io, item, &now); /* (made ahead with its chunk's) */
    if (rc != 0)
        return rc;
    bool listed_exactly = s->o->file_list == NULL || s->o->exact_file_list;
    bool aged = f->kind != ICM_ORPHAN_CHECKSUM; /* a companion goes whatever its age */
    if (aged && (now.mtime_ms < 0 || now.mtime_ms >= s->r->older_than_ms))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                              "not deleted: changed since it was listed (now modified at %lld "
                              "ms, not older than the cutoff); kept", (long long)now.mtime_ms);
    /* An inventory report's LastModifiedDate has milliseconds, a HEAD's Last-Modified whole
     * seconds: the same object compares equal to the second (options.inventory). */
    int64_t unit = s->o->inventory != NULL ? 1000 : 1;
    if (listed_exactly && ((f->size_bytes >= 0 && now.size_bytes != f->size_bytes) ||
                           (f->mtime_ms >= 0 && now.mtime_ms / unit != f->mtime_ms / unit)))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                              "not deleted: changed since it was listed (size %lld -> %lld, "
                              "mtime %lld -> %lld ms); kept", (long long)f->size_bytes,
                              (long long)now.size_bytes, (long long)f->mtime_ms,
                              (long long)now.mtime_ms);
    return 0;
}

/* The last checks right before a delete (roots, links, unchanged). A file found gone is
 * ALREADY_GONE without a delete; one a check refuses on purpose (a link, a change, its file
 * kept) is KEPT, not a failure. Runs on the delete threads: reads only. */
static icm__delete_verdict last_check(void *ctx, icm__link_cache *cache,
                                      const icm__delete_item *item, int *code)
{
    const sweeper *s = ctx;
    const icm_orphan_file *f = &s->r->orphans[item->ref];
    if (f->kind == ICM_ORPHAN_CHECKSUM && !companion_free_to_go(s, f)) {
        *code = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                               "not deleted: the file it is the checksum of was not deleted");
        return f != s->r->orphans && f[-1].state == ICM_ORPHAN_KEPT ? ICM__VERDICT_KEPT
                                                                    : ICM__VERDICT_FAILED;
    }
    if (!inside_roots(s, f->path)) {
        *code = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, f->path,
                               "not deleted: outside the table location, write.data.path and "
                               "write.metadata.path");
        return ICM__VERDICT_FAILED;
    }
    int rc = icm__link_guard_check(&s->guard, cache, f->path);
    if (rc == 0)
        rc = still_as_listed(s, f, item);
    *code = rc;
    return rc == 0                ? ICM__VERDICT_DELETE
           : rc == ICM_ENOTFOUND ? ICM__VERDICT_GONE
           : rc == ICM_EREFUSED  ? ICM__VERDICT_KEPT
                                 : ICM__VERDICT_FAILED;
}

/* Orphans a commit references again (R grown by the re-check) are dropped: their path is
 * freed (NULL marks them) and they are taken out at the end; a file's companion, right after
 * it, goes with it. Only orphans not yet acted on are looked at. Returns 0 or ICM_ENOMEM. */
static int drop_referenced(sweeper *s)
{
    icm_orphan_result *r = s->r;
    for (size_t i = 0; i < r->orphan_count; i++) {
        icm_orphan_file *f = &r->orphans[i];
        if (f->path == NULL || f->state != ICM_ORPHAN_PLANNED)
            continue;
        bool referenced;
        int rc = icm__orphans_referenced(s->plan, f->path, &referenced);
        if (rc != 0)
            return rc;
        if (!referenced)
            continue;
        bool file = f->kind != ICM_ORPHAN_CHECKSUM;
        icm__free(f->path);
        f->path = NULL;
        r->newly_referenced++;
        if (file && i + 1 < r->orphan_count && r->orphans[i + 1].kind == ICM_ORPHAN_CHECKSUM &&
            r->orphans[i + 1].path != NULL && r->orphans[i + 1].state == ICM_ORPHAN_PLANNED) {
            icm__free(r->orphans[++i].path);
            r->orphans[i].path = NULL;
        }
    }
    return 0;
}

/* Take the dropped orphans out of the result, keeping the order of the rest. */
static void take_out_dropped(icm_orphan_result *r)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->orphan_count; i++) {
        if (r->orphans[i].path != NULL)
            r->orphans[kept++] = r->orphans[i];
        else
            icm__free(r->orphans[i].error_message);
    }
    r->orphan_count = kept;
}

/* Before each batch: reload the table, and when a commit changed it, grow R and drop the
 * orphans it now references (icm__orphans_revalidate, orphans_plan.c); renew the lease; then
 * the checks' state for the reloaded table's roots. Returns 0 or what stops the deletes. */
static int before_batch(void *ctx)
{
    sweeper *s = ctx;
    char *was = icm__strdup(icm_table_get_metadata_location(s->t));
    if (was == NULL)
        return icm__error_set(ICM_ERRCLASS_NOMEM, ICM_ENOMEM, NULL, "out of memory");
    size_t referenced = s->r->referenced;
    /* From the end: R grows, nothing is dropped there; the orphans not yet acted on are
     * dropped here, wherever the engine's order has put them, whenever R may have grown (the
     * re-check counts R anew when it read newer metadata). */
    int rc = icm__orphans_revalidate(s->plan, s->r->orphan_count);
    if (rc == 0 && (s->r->referenced != referenced ||
                    strcmp(was, icm_table_get_metadata_location(s->t)) != 0))
        rc = drop_referenced(s);
    icm__free(was);
    if (rc == 0 && s->o->lease != NULL)
        rc = icm__lease_keep(s->o->lease);
    if (rc != 0)
        return rc;
    s->n_roots = icm__table_roots(icm_table_get_metadata(s->t), s->roots);
    s->guarded = true;
    if (icm__link_guard_init(&s->guard, s->io, s->roots, s->n_roots) != 0)
        return icm__error_set(ICM_ERRCLASS_NOMEM, ICM_ENOMEM, NULL, "out of memory");
    return 0;
}

static void after_batch(void *ctx)
{
    sweeper *s = ctx;
    if (s->guarded)
        icm__link_guard_dispose(&s->guard);
    s->guarded = false;
}

static bool planned(void *ctx, const icm__delete_item *item)
{
    const icm_orphan_file *f = &((sweeper *)ctx)->r->orphans[item->ref];
    return f->path != NULL && f->state == ICM_ORPHAN_PLANNED;
}

static void record(void *ctx, icm__delete_item *item)
{
    icm_orphan_file *f = &((sweeper *)ctx)->r->orphans[item->ref];
    switch (item->state) {
    case ICM__DELETE_DELETED:
        f->state = ICM_ORPHAN_DELETED;
        return;
    case ICM__DELETE_GONE:
        f->state = ICM_ORPHAN_ALREADY_GONE;
        return;
    case ICM__DELETE_KEPT:
        f->state = ICM_ORPHAN_KEPT;
        break;
    default:
        f->state = ICM_ORPHAN_FAILED;
        break;
    }
    f->error_code = item->code;
    f->error_message = item->message; /* taken (NULL on OOM is allowed) */
    item->message = NULL;
}

static void progress(void *ctx, size_t done, size_t total)
{
    const icm_orphan_options *o = ((sweeper *)ctx)->o;
    o->progress(done, total, o->progress_payload);
}

/*
 * The delete phase (icemaint/maint.h): after the settle time (options.settle_ms), the engine
 * deletes the orphans in its order, checksum companions last (each once its file's outcome is
 * known). Orphan deletes are not retried (as in Java): a file that could not be deleted is
 * still an orphan and the next sweep finds it again. Any failure of a reload, of newer
 * metadata or of the lease stops the deletes (nothing is guessed). Returns 0 or what stopped
 * them.
 */
static int delete_all(icm_table *t, icm__orphan_plan *plan, icm_orphan_result *r,
                      const icm_orphan_options *o, icm__trash *trash)
{
    icm__sleep_ms(o->settle_ms);
    sweeper s = {.t = t, .plan = plan, .r = r, .o = o, .io = icm_table_get_fileio(t)};
    size_t n = r->orphan_count;
    icm__delete_item *items = icm__calloc(n, sizeof *items);
    if (items == NULL)
        return icm__error_set(ICM_ERRCLASS_NOMEM, ICM_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        items[i] = (icm__delete_item){.path = r->orphans[i].path,
                                      .kind = icm_orphan_kind_name(r->orphans[i].kind),
                                      .size_bytes = r->orphans[i].size_bytes,
                                      .rank = rank_of(r->orphans[i].kind),
                                      .ref = i};
    icm__delete_policy policy = ICM__DELETE_POLICY_INIT;
    policy.batch_files = o->delete_batch_size;
    policy.threads = o->max_concurrent_deletes;
    policy.on_delete = o->on_delete;
    policy.on_delete_payload = o->on_delete_payload;
    policy.trash = trash;
    icm__delete_hooks hooks = {
        .ctx = &s, .before_batch = before_batch, .after_batch = after_batch,
        .planned = planned, .check = last_check, .check_stats = true, .record = record,
        .progress = o->progress != NULL ? progress : NULL,
        .stop_message = "the delete callback asked to stop after this file; the orphans after "
                        "it were not deleted"};
    int rc = icm__delete_run(s.io, items, n, &policy, &hooks, NULL);
    icm__delete_items_dispose(items, n);
    icm__free(items);
    take_out_dropped(r);
    r->delete_stopped = rc != 0;
    if (rc == 0 && o->progress != NULL)
        o->progress(r->orphan_count, r->orphan_count, o->progress_payload);
    return rc;
}

/* A dry run reports what the real run would keep: the orphans the link check (link_guard.h)
 * refuses now become KEPT, with its message. (The real run checks again right before each
 * delete; what changes meanwhile, and the changed-file check, only it can see.) Reads only.
 * Returns 0 or ICM_ENOMEM. */
static int mark_kept_by_links(icm_table *t, icm_orphan_result *r)
{
    const char *roots[3];
    size_t n_roots = icm__table_roots(icm_table_get_metadata(t), roots);
    icm__link_guard guard;
    icm__link_memo memo = {0}; /* one resolve per folder for the whole report */
    int rc = icm__link_guard_init(&guard, icm_table_get_fileio(t), roots, n_roots);
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++) {
        icm_orphan_file *f = &r->orphans[i];
        if (f->state == ICM_ORPHAN_KEPT) /* (the plan kept it: a lookalike reference) */
            continue;
        bool file_kept = f->kind == ICM_ORPHAN_CHECKSUM && i > 0 &&
                         r->orphans[i - 1].state == ICM_ORPHAN_KEPT;
        int check = file_kept ? ICM_EREFUSED : icm__link_guard_check_memo(&guard, &memo, f->path);
        if (check == ICM_ENOMEM)
            rc = ICM_ENOMEM;
        if (check != ICM_EREFUSED)
            continue;
        f->state = ICM_ORPHAN_KEPT;
        f->error_code = ICM_EREFUSED;
        f->error_message = icm__strdup(file_kept ? "not deleted: the file it is the checksum "
                                                   "of is kept"
                                                 : icm_error_last()->message);
    }
    icm__link_memo_dispose(&memo);
    icm__link_guard_dispose(&guard);
    icm_error_clear();
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* entry                                                                                       */

/* The guard rails (icemaint/maint.h) on the whole plan, before the first delete: a real run
 * over a bound is refused (ICM_EREFUSED, nothing deleted); a dry run says so in a warning, so
 * the plan under review shows what the real run would do. */
static int check_limits(const icm_orphan_options *o, icm_orphan_result *r)
{
    int64_t bytes = 0;
    size_t unknown = 0;
    for (size_t i = 0; i < r->orphan_count; i++) {
        bytes = icm_delete_limits_add_bytes(bytes, r->orphans[i].size_bytes);
        unknown += r->orphans[i].size_bytes < 0;
    }
    int rc = icm_delete_limits_check(&o->limits, r->location, r->orphan_count, bytes, r->listed);
    /* A byte bound cannot be kept over files whose size nobody knows (a file list with an
     * empty size column): counting them as 0 let any amount through (adversary round 22, F3). */
    if (rc == 0 && o->limits.max_bytes >= 0 && unknown > 0)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, r->location,
                            "--max-delete-bytes %" PRId64 " cannot be checked: %zu of the %zu "
                            "planned file%s %s no known size (the file list gives none); "
                            "nothing is deleted",
                            o->limits.max_bytes, unknown, r->orphan_count,
                            r->orphan_count == 1 ? "" : "s", unknown == 1 ? "has" : "have");
    if (rc != ICM_EREFUSED || !o->dry_run)
        return rc;
    rc = icm__orphan_warn(r, "a real run would be refused: %s", icm_error_last()->message);
    icm_error_clear();
    return rc;
}

/* The caller's options as this version knows them: fields an older struct lacks take their
 * defaults (version 1 ends before on_delete, version 2 before no_verify, version 3 before
 * limits, version 4 before inventory, version 5 before shard_index, version 6 before trash). */
static icm_orphan_options normalized(const icm_orphan_options *opts)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    if (opts == NULL)
        return o;
    if (opts->version >= ICM_ORPHAN_OPTIONS_VERSION)
        return *opts;
    memcpy(&o, opts,
           opts->version >= 6   ? offsetof(icm_orphan_options, trash)
           : opts->version >= 5 ? offsetof(icm_orphan_options, shard_index)
           : opts->version >= 4 ? offsetof(icm_orphan_options, inventory)
           : opts->version >= 3 ? offsetof(icm_orphan_options, limits)
           : opts->version >= 2 ? offsetof(icm_orphan_options, no_verify)
                                : offsetof(icm_orphan_options, on_delete));
    return o;
}

/* A sharded run's failure from planning on names its shard ("shard I/N: ..."): each shard is
 * its own run, and a refusal that does not say which one leaves N logs to search. */
static int shard_named(const icm_orphan_options *o, int rc)
{
    if (rc != 0 && rc != ICM_ENOMEM && o->shard_count > 1) {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "shard %u/%u: ", o->shard_index, o->shard_count);
        if (strncmp(icm_error_last()->message, prefix, strlen(prefix)) != 0)
            icm__error_prefix_message(prefix);
    }
    return rc;
}

/*
 * A shard refuses whenever the unsharded run refuses (docs/SHARDS.md, "Every range's
 * checks"): the checks that refuse the whole run look at what they find in one range (the
 * presence check's missing reference, a catalog's database found among the candidates, a
 * name referenced only under another bucket), while what they protect may lie in another
 * range. So before shard I plans its own range it plans every other range r of the same run,
 * one at a time, keeping nothing but the verdict (no plan state; each result freed before the
 * next), as the run of shard r/N would (same options, same "now"): a refusal there refuses
 * this shard, naming shard r; another failure fails it with that failure's code. The
 * presence check refuses the unsharded run when a reference is missing anywhere and an
 * orphan exists anywhere: a range without orphans hands its refusal back (cross->missing,
 * with the range in *missing_range), and this shard refuses when any range has an orphan
 * (cross->orphans_elsewhere here, or its own plan's after it). Memory stays that of one
 * range; the planning work is N ranges' (docs/SHARDS.md, "Limits"). The plans here are the
 * planning step alone (icm__orphans_plan_range never calls back into the sweep), so they
 * cannot recurse. A deleting shard's lease is kept between them. Returns 0, ICM_EREFUSED,
 * ICM_ENOMEM or the other range's failure code.
 */
static int check_other_ranges(icm_table *t, const icm_orphan_options *o, int64_t now,
                              icm__cross_range *cross, unsigned int *missing_range)
{
    for (unsigned int range = 0; o->shard_count >= 2 && range < o->shard_count; range++) {
        if (range == o->shard_index)
            continue;
        icm_orphan_options other = *o;
        other.shard_index = range;
        icm_orphan_result *verdict = NULL;
        bool had_missing = cross->missing != NULL;
        cross->verdict_only = true;
        int rc = icm__orphans_plan_range(t, &other, now, cross, NULL, &verdict);
        cross->verdict_only = false;
        if (rc == 0 && verdict->orphan_count > 0)
            cross->orphans_elsewhere = true;
        icm_orphan_result_free(verdict);
        if (!had_missing && cross->missing != NULL)
            *missing_range = range;
        if (rc == ICM_ENOMEM)
            return rc;
        if (rc != 0) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "shard %u/%u of the same run %s: ", range,
                     o->shard_count, rc == ICM_EREFUSED ? "refuses" : "fails");
            icm__error_prefix_message(prefix);
            return rc;
        }
        if (!o->dry_run && o->lease != NULL && (rc = icm__lease_keep(o->lease)) != 0)
            return rc;
    }
    return 0;
}

/* Another range's missing references refuse this shard once an orphan exists anywhere. */
static int refuse_missing_elsewhere(const icm_orphan_options *o, icm_table *t,
                                    const icm__cross_range *cross, unsigned int range)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED,
                          icm_table_metadata_location(icm_table_get_metadata(t)),
                          "shard %u/%u of the same run refuses: %s", range, o->shard_count,
                          cross->missing);
}

int icm_orphan_sweep(icm_orphan_result **out, icm_table *t,
                     const icm_orphan_options *opts)
{
    if (out != NULL)
        *out = NULL;
    if (t == NULL || out == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_orphan_sweep: table and out are required");
    if (opts != NULL && (opts->version < 1 || opts->version > ICM_ORPHAN_OPTIONS_VERSION))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_orphan_options: unknown version %u (use "
                              "ICM_ORPHAN_OPTIONS_INIT or icm_orphan_options_init)",
                              opts->version);
    icm_orphan_options norm = normalized(opts);
    const icm_orphan_options *o = &norm;
    if ((unsigned)o->prefix_mismatch > ICM_PREFIX_MISMATCH_DELETE)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "prefix_mismatch must be error, ignore or delete");
    if (o->exclude_location_count > 0 && o->exclude_locations == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "exclude_locations is NULL but its count is %zu",
                              o->exclude_location_count);
    if (o->inventory != NULL && (o->file_list != NULL || o->exact_file_list))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, o->inventory,
                              "an inventory report and a file list are two listings: give one");
    if (o->max_inventory_age_ms < 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "max_inventory_age_ms is negative");
    if (o->shard_index >= (o->shard_count > 1 ? o->shard_count : 1))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "shard %u of %u: the index must be below the count (0-based)",
                              o->shard_index, o->shard_count);
    int64_t now = o->now_ms != 0 ? o->now_ms : icm__now_ms();

    /* The trash's rules before anything else: a trash that breaks one refuses the run before
     * the listing, and a dry run sees the refusal its real run would get. */
    icm__trash *trash = NULL;
    if (o->trash != NULL) {
        const icm_table_metadata *md = icm_table_get_metadata(t);
        int trc = icm__trash_open(&trash, icm_table_get_fileio(t), o->trash,
                                  icm_table_metadata_location(md), icm_table_metadata_uuid(md),
                                  o->dry_run);
        if (trc == 0 && (trc = icm__trash_check_catalog(trash, t)) != 0)
            icm__trash_free(trash);
        if (trc != 0)
            return trc;
    }
    /* Every other range's checks first, so nothing of this range is planned (nor held in
     * memory beside them) when another range refuses. */
    icm__cross_range cross = {0};
    unsigned int missing_range = 0;
    int rc = check_other_ranges(t, o, now, &cross, &missing_range);
    if (rc == 0 && cross.missing != NULL && cross.orphans_elsewhere)
        rc = refuse_missing_elsewhere(o, t, &cross, missing_range);
    icm_orphan_result *r = NULL;
    icm__orphan_plan *plan = NULL;
    if (rc == 0)
        rc = icm__orphans_plan_range(t, o, now, &cross, o->dry_run ? NULL : &plan, &r);
    if (rc == 0 && cross.missing != NULL && r->orphan_count > 0) {
        rc = refuse_missing_elsewhere(o, t, &cross, missing_range);
        icm__orphan_plan_free(plan);
        icm_orphan_result_free(r);
    }
    icm__free(cross.missing);
    if (rc != 0) {
        icm__trash_free(trash);
        return shard_named(o, rc);
    }
    if (r->orphan_count > 0 && (rc = check_limits(o, r)) != 0) {
        /* refused (nothing deleted, as for any refusal before the deletes), or out of memory */
        icm__trash_free(trash);
        icm__orphan_plan_free(plan);
        icm_orphan_result_free(r);
        return shard_named(o, rc);
    }
    if (!o->dry_run && r->orphan_count > 0) {
        rc = delete_all(t, plan, r, o, trash);
        icm__orphan_result_tally(r, true);
    } else if (r->orphan_count > 0) {
        rc = mark_kept_by_links(t, r);
        icm__orphan_result_tally(r, false);
    }
    icm__trash_free(trash);
    icm__orphan_plan_free(plan);
    if (rc == ICM_ENOMEM) {
        icm_orphan_result_free(r);
        return rc;
    }
    *out = r;
    return shard_named(o, rc);
}
