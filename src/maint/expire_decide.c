/*
 * maint/expire_decide.c: which snapshots expire (see include/icemaint/expire.h for the rules).
 *
 * Pure metadata computation: it reads an icm_table_metadata and returns ids; nothing here can
 * reach storage. Steps mirror Java's RemoveSnapshots.internalApply, plus the seed's rule that an
 * age-only expiry never leaves fewer than retain_last snapshots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "icemaint/expire.h"
#include "maint/keepset.h"
#include "util/util.h"

#define PROP_MAX_SNAPSHOT_AGE "history.expire.max-snapshot-age-ms"
#define PROP_MIN_SNAPSHOTS "history.expire.min-snapshots-to-keep"
#define PROP_MAX_REF_AGE "history.expire.max-ref-age-ms"

/* id -> index lookup over the metadata's snapshots, built once per decision. */
typedef struct id_index {
    int64_t id;
    size_t idx;
} id_index;

typedef struct ctx {
    const icm_table_metadata *md;
    size_t n;
    id_index *by_id;      /* sorted by id */
    bool *retained;
    bool *in_branch;      /* in the full ancestry of some retained branch */
    bool *tag_head;       /* head of a retained tag */
    bool *explicit_id;    /* named by the caller */
} ctx;

static int cmp_id_index(const void *a, const void *b)
{
    int64_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
    return (x > y) - (x < y);
}

/* Index of the snapshot with this id, or SIZE_MAX. */
static size_t find(const ctx *c, int64_t id)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->by_id[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->by_id[lo].id == id ? c->by_id[lo].idx : SIZE_MAX;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b > 0 ? INT64_MIN : INT64_MAX;
    return r;
}

static int parse_long_prop(const icm_table_metadata *md, const char *key, int64_t dflt,
                           int64_t min_value, int64_t *out)
{
    const char *v = icm_table_metadata_property(md, key);
    if (v == NULL) {
        *out = dflt;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || x < min_value)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, icm_table_metadata_file(md),
                              "table property %s has an invalid value '%s'", key, v);
    *out = (int64_t)x;
    return 0;
}

static int check_gc_enabled(const icm_table_metadata *md)
{
    const char *v = NULL;
    if (icm__gc_enabled(md, &v))
        return 0;
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, icm_table_metadata_file(md),
                          "Cannot expire snapshots: GC is disabled (table property "
                          "gc.enabled='%s': any value but 'true' disables it, as in Java); "
                          "deleting files may corrupt other tables (set it to true only when "
                          "no other table shares these files)",
                          v);
}

/* Is ref r retained? main never ages out; a ref to a missing snapshot is dropped. */
static bool ref_retained(const ctx *c, const icm_ref *r, int64_t now_ms, int64_t dflt_max_ref_age)
{
    if (strcmp(r->name, "main") == 0)
        return true;
    size_t i = find(c, r->snapshot_id);
    if (i == SIZE_MAX)
        return false;
    const icm_snapshot *s = icm_table_metadata_snapshot_at(c->md, i);
    int64_t max_age = r->has_max_ref_age_ms ? r->max_ref_age_ms : dflt_max_ref_age;
    return sat_sub(now_ms, s->timestamp_ms) <= max_age;
}

/* Walk a retained branch's ancestry from its head: keep ancestors while fewer than min_keep are
 * kept or they are at/after the cutoff; stop at the first that fails both. Mark the whole
 * ancestry as "in a branch" (those are not unreferenced snapshots). Parent cycles in corrupt
 * metadata are cut by a step bound. */
static void walk_branch(ctx *c, size_t head, int64_t cutoff_ms, int64_t min_keep)
{
    int64_t kept = 0;
    bool keeping = true;
    size_t i = head;
    for (size_t steps = 0; i != SIZE_MAX && steps <= c->n; steps++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(c->md, i);
        c->in_branch[i] = true;
        if (keeping && (kept < min_keep || s->timestamp_ms >= cutoff_ms)) {
            c->retained[i] = true;
            kept++;
        } else {
            keeping = false;
        }
        i = s->has_parent ? find(c, s->parent_snapshot_id) : SIZE_MAX;
    }
}

static int cmp_oldest_first(const icm_table_metadata *md, size_t a, size_t b)
{
    const icm_snapshot *x = icm_table_metadata_snapshot_at(md, a);
    const icm_snapshot *y = icm_table_metadata_snapshot_at(md, b);
    if (x->timestamp_ms != y->timestamp_ms)
        return x->timestamp_ms < y->timestamp_ms ? -1 : 1;
    if (x->sequence_number != y->sequence_number)
        return x->sequence_number < y->sequence_number ? -1 : 1;
    return (x->snapshot_id > y->snapshot_id) - (x->snapshot_id < y->snapshot_id);
}

/* Insertion-sort-free ordering: qsort needs the metadata, so sort indices with a small merge
 * sort that carries it explicitly. */
static void sort_indices(const icm_table_metadata *md, size_t *idx, size_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_indices(md, idx, tmp, h);
    sort_indices(md, idx + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_oldest_first(md, idx[i], idx[j]) <= 0 ? idx[i++] : idx[j++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static int refuse_referenced(const ctx *c, int64_t id, const bool *ref_kept)
{
    icm__buf names = ICM__BUF_INIT;
    size_t nrefs = icm_table_metadata_ref_count(c->md);
    for (size_t r = 0; r < nrefs; r++) {
        const icm_ref *ref = icm_table_metadata_ref_at(c->md, r);
        if (ref_kept[r] && ref->snapshot_id == id) {
            if (names.len)
                icm__buf_puts(&names, ", ");
            icm__buf_puts(&names, ref->name);
        }
    }
    int rc = names.oom ? ICM_ENOMEM
                       : icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED,
                                        icm_table_metadata_file(c->md),
                                        "Cannot expire %lld. Still referenced by refs: [%s]",
                                        (long long)id, names.data ? names.data : "");
    icm__buf_dispose(&names);
    return rc;
}

void icm_expire_decision_free(icm_expire_decision *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->removed_ref_count; i++)
        icm__free(d->removed_refs[i]);
    icm__free(d->removed_refs);
    icm__free(d->expired_ids);
    icm__free(d->retained_ids);
    icm__free(d);
}

/* Fill the output arrays from the flags. */
static int build_result(ctx *c, icm_expire_decision *d, const bool *ref_kept, size_t *order,
                        size_t *tmp)
{
    size_t n = c->n, ne = 0, nr = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->retained[i])
            nr++;
        else
            order[ne++] = i;
    }
    sort_indices(c->md, order, tmp, ne);
    d->expired_ids = icm__calloc(ne ? ne : 1, sizeof(int64_t));
    d->retained_ids = icm__calloc(nr ? nr : 1, sizeof(int64_t));
    size_t nrefs = icm_table_metadata_ref_count(c->md);
    d->removed_refs = icm__calloc(nrefs ? nrefs : 1, sizeof(char *));
    if (d->expired_ids == NULL || d->retained_ids == NULL || d->removed_refs == NULL)
        return ICM_ENOMEM;
    for (size_t k = 0; k < ne; k++)
        d->expired_ids[k] = icm_table_metadata_snapshot_at(c->md, order[k])->snapshot_id;
    d->expired_count = ne;
    for (size_t i = 0; i < n; i++)
        if (c->retained[i])
            d->retained_ids[d->retained_count++] =
                icm_table_metadata_snapshot_at(c->md, i)->snapshot_id;
    for (size_t r = 0; r < nrefs; r++) {
        const icm_ref *ref = icm_table_metadata_ref_at(c->md, r);
        size_t i = find(c, ref->snapshot_id);
        if (ref_kept[r] && i != SIZE_MAX && c->retained[i])
            continue;
        char *name = icm__strdup(ref->name);
        if (name == NULL)
            return ICM_ENOMEM;
        d->removed_refs[d->removed_ref_count++] = name;
    }
    return 0;
}

/* Rule 3: an age-only expiry never leaves fewer than min_keep snapshots. Re-keep the newest
 * snapshots that age alone would remove. */
static void top_up(ctx *c, int64_t min_keep, size_t *order, size_t *tmp)
{
    size_t kept = 0, nc = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->retained[i])
            kept++;
        else if (!c->explicit_id[i])
            order[nc++] = i;
    }
    if ((int64_t)kept >= min_keep)
        return;
    sort_indices(c->md, order, tmp, nc);
    while ((int64_t)kept < min_keep && nc > 0) {
        c->retained[order[--nc]] = true;
        kept++;
    }
}

int icm_expire_decide(icm_expire_decision **out, const icm_table_metadata *md,
                      const icm_expire_decide_options *opts)
{
    *out = NULL;
    if (opts == NULL || opts->retain_last < 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, icm_table_metadata_file(md),
                              "Number of snapshots to retain must be at least 1, cannot be: %d",
                              opts ? (int)opts->retain_last : 0);
    int rc = check_gc_enabled(md);
    if (rc < 0)
        return rc;
    int64_t max_age, min_keep, max_ref_age;
    if ((rc = parse_long_prop(md, PROP_MAX_SNAPSHOT_AGE, ICM_DEFAULT_MAX_SNAPSHOT_AGE_MS, 0,
                              &max_age)) < 0 ||
        (rc = parse_long_prop(md, PROP_MIN_SNAPSHOTS, ICM_DEFAULT_MIN_SNAPSHOTS_TO_KEEP, 1,
                              &min_keep)) < 0 ||
        (rc = parse_long_prop(md, PROP_MAX_REF_AGE, ICM_DEFAULT_MAX_REF_AGE_MS, 0,
                              &max_ref_age)) < 0)
        return rc;
    if (opts->retain_last > 0)
        min_keep = opts->retain_last;
    int64_t now = opts->now_ms;
    int64_t cutoff = opts->has_older_than ? opts->older_than_ms : sat_sub(now, max_age);

    icm_expire_decision *d = icm__calloc(1, sizeof *d);
    ctx c = {md, icm_table_metadata_snapshot_count(md), NULL, NULL, NULL, NULL, NULL};
    size_t nrefs = icm_table_metadata_ref_count(md);
    size_t n1 = c.n ? c.n : 1;
    bool *ref_kept = icm__calloc(nrefs ? nrefs : 1, sizeof *ref_kept);
    size_t *order = icm__calloc(n1, sizeof *order);
    size_t *tmp = icm__calloc(n1, sizeof *tmp);
    c.by_id = icm__calloc(n1, sizeof *c.by_id);
    c.retained = icm__calloc(n1, sizeof(bool));
    c.in_branch = icm__calloc(n1, sizeof(bool));
    c.tag_head = icm__calloc(n1, sizeof(bool));
    c.explicit_id = icm__calloc(n1, sizeof(bool));
    if (d == NULL || ref_kept == NULL || order == NULL || tmp == NULL || c.by_id == NULL ||
        c.retained == NULL || c.in_branch == NULL || c.tag_head == NULL || c.explicit_id == NULL) {
        rc = ICM_ENOMEM;
        goto done;
    }
    d->now_ms = now;
    d->older_than_ms = cutoff;
    d->retain_last = (int32_t)min_keep;

    for (size_t i = 0; i < c.n; i++) {
        c.by_id[i].id = icm_table_metadata_snapshot_at(md, i)->snapshot_id;
        c.by_id[i].idx = i;
    }
    qsort(c.by_id, c.n, sizeof *c.by_id, cmp_id_index);

    /* Explicit ids must exist. */
    for (size_t k = 0; k < opts->snapshot_id_count; k++) {
        size_t i = find(&c, opts->snapshot_ids[k]);
        if (i == SIZE_MAX) {
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_ENOTFOUND, icm_table_metadata_file(md),
                                "Cannot expire %lld: no such snapshot in the table",
                                (long long)opts->snapshot_ids[k]);
            goto done;
        }
        c.explicit_id[i] = true;
    }

    /* Retained refs and their heads. */
    bool has_main = false;
    for (size_t r = 0; r < nrefs; r++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, r);
        ref_kept[r] = ref_retained(&c, ref, now, max_ref_age);
        if (strcmp(ref->name, "main") == 0)
            has_main = true;
    }
    for (size_t r = 0; r < nrefs; r++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, r);
        size_t i = find(&c, ref->snapshot_id);
        if (!ref_kept[r] || i == SIZE_MAX)
            continue;
        if (c.explicit_id[i]) {
            rc = refuse_referenced(&c, ref->snapshot_id, ref_kept);
            goto done;
        }
        c.retained[i] = true;
        if (ref->type == ICM_REF_TAG) {
            c.tag_head[i] = true;
            continue;
        }
        int64_t bcut = ref->has_max_snapshot_age_ms ? sat_sub(now, ref->max_snapshot_age_ms)
                                                    : cutoff;
        int64_t bmin = ref->has_min_snapshots_to_keep ? ref->min_snapshots_to_keep : min_keep;
        walk_branch(&c, i, bcut, bmin);
    }

    /* Rule 1: the current snapshot stays even when the refs do not name it `main`. */
    int64_t current;
    if (icm_table_metadata_current_snapshot_id(md, &current)) {
        size_t i = find(&c, current);
        if (i != SIZE_MAX) {
            if (c.explicit_id[i]) {
                rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED,
                                    icm_table_metadata_file(md),
                                    "Cannot expire %lld: it is the current snapshot",
                                    (long long)current);
                goto done;
            }
            if (!has_main)
                walk_branch(&c, i, cutoff, min_keep);
            c.retained[i] = true;
        }
    }

    /* Unreferenced snapshots: only the table-wide cutoff applies. */
    for (size_t i = 0; i < c.n; i++)
        if (!c.in_branch[i] && !c.tag_head[i] &&
            icm_table_metadata_snapshot_at(md, i)->timestamp_ms >= cutoff)
            c.retained[i] = true;

    for (size_t i = 0; i < c.n; i++)
        if (c.explicit_id[i])
            c.retained[i] = false;

    top_up(&c, min_keep, order, tmp);
    rc = build_result(&c, d, ref_kept, order, tmp);

done:
    icm__free(ref_kept);
    icm__free(order);
    icm__free(tmp);
    icm__free(c.by_id);
    icm__free(c.retained);
    icm__free(c.in_branch);
    icm__free(c.tag_head);
    icm__free(c.explicit_id);
    if (rc < 0) {
        icm_expire_decision_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

int icm_choose_expired(const icm_table_metadata *md, int64_t older_than_ms, int32_t keep_last,
                       int64_t **out_ids, size_t *out_count)
{
    *out_ids = NULL;
    *out_count = 0;
    if (keep_last < 1)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, icm_table_metadata_file(md),
                              "Number of snapshots to retain must be at least 1, cannot be: %d",
                              (int)keep_last);
    icm_expire_decide_options opts = ICM_EXPIRE_DECIDE_OPTIONS_INIT;
    opts.now_ms = icm__now_ms();
    opts.has_older_than = true;
    opts.older_than_ms = older_than_ms;
    opts.retain_last = keep_last;
    icm_expire_decision *d = NULL;
    int rc = icm_expire_decide(&d, md, &opts);
    if (rc < 0)
        return rc;
    if (d->expired_count > 0) {
        *out_ids = d->expired_ids;
        *out_count = d->expired_count;
        d->expired_ids = NULL;
    }
    icm_expire_decision_free(d);
    return 0;
}
