/*
 * maint/expire_decide.c: which snapshots expire (see include/icemaint/expire.h for the rules).
 *
 * Pure metadata computation: it reads an icm_table_metadata and returns ids; nothing here can
 * reach storage. Steps mirror Java's RemoveSnapshots.internalApply, plus the seed's rule that an
 * age-only expiry never leaves fewer than retain_last snapshots. Every step that keeps a
 * snapshot records why (keep_for), and the decision hands those reasons out with the ids, so a
 * report never has to guess them again.
 *
 * The history.expire.* properties are read as Java's PropertyUtil reads them (Long.parseLong,
 * Integer.parseInt), refusing, with the property named, what Java refuses and also negative
 * values (see expire.h).
 */
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

/* Why one snapshot is kept so far: bit k of `kinds` is reason k (icm_expire_keep_reason), and
 * ref[k] the index (metadata ref order) of the first ref that gave it, -1 for none. REF reasons
 * are not kept here: every retained ref's head gets one when the result is built. */
typedef struct why {
    uint8_t kinds;
    int32_t ref[ICM_EXPIRE_KEEP_REASON_COUNT];
} why;

typedef struct ctx {
    const icm_table_metadata *md;
    size_t n;
    id_index *by_id;      /* sorted by id */
    bool *retained;
    why *why;             /* reasons of the retained ones */
    bool *in_branch;      /* in the full ancestry of some retained branch */
    bool *tag_head;       /* head of a retained tag */
    bool *explicit_id;    /* named by the caller */
} ctx;

/* Keep snapshot i for `kind`, given by ref `ref` (-1: none); the first ref per kind is named. */
static void keep_for(ctx *c, size_t i, icm_expire_keep_reason kind, int32_t ref)
{
    why *w = &c->why[i];
    c->retained[i] = true;
    if ((w->kinds & (1u << kind)) == 0) {
        w->kinds = (uint8_t)(w->kinds | 1u << kind);
        w->ref[kind] = ref;
    }
}

const char *icm_expire_keep_reason_name(icm_expire_keep_reason reason)
{
    switch (reason) {
    case ICM_EXPIRE_KEEP_CURRENT: return "current";
    case ICM_EXPIRE_KEEP_REF: return "ref";
    case ICM_EXPIRE_KEEP_RETAIN_LAST: return "retain_last";
    case ICM_EXPIRE_KEEP_MIN_SNAPSHOTS_TO_KEEP: return "min_snapshots_to_keep";
    case ICM_EXPIRE_KEEP_NEWER_THAN_CUTOFF: return "newer_than_cutoff";
    case ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE: return "max_snapshot_age_ms";
    }
    return "other";
}

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

/* Java's Long.parseLong / Integer.parseInt on ASCII: an optional sign, then one or more digits,
 * nothing else, within [INT64_MIN, INT64_MAX]. False when Java would throw. */
static bool parse_java_integer(const char *text, int64_t *out)
{
    const char *p = text;
    bool negative = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (*p == '\0')
        return false;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = negative ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return true;
}

/* A history.expire.* property: `dflt` when absent; else a whole number in [0, max] as Java
 * parses it (max: INT64_MAX for Long.parseLong, INT32_MAX for Integer.parseInt). Negative
 * values, which Java would accept, are refused too (expire.h). */
static int retention_prop(const icm_table_metadata *md, const char *key, int64_t dflt,
                          int64_t max, int64_t *out)
{
    const char *v = icm_table_metadata_property(md, key);
    int64_t x = 0;
    if (v == NULL) {
        *out = dflt;
        return 0;
    }
    if (!parse_java_integer(v, &x) || x < 0 || x > max)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, icm_table_metadata_file(md),
                              "table property %s has an invalid value '%s' (expected a whole "
                              "number from 0 to %lld)",
                              key, v, (long long)max);
    *out = x;
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

/* Is ref r retained? main never ages out; a ref to a missing snapshot is dropped. A ref's age
 * that does not fit int64 (a timestamp near INT64_MIN) keeps it: Java's `now - timestamp`
 * wraps to a negative age there, which is within any max-ref-age-ms. */
static bool ref_retained(const ctx *c, const icm_ref *r, int64_t now_ms, int64_t dflt_max_ref_age)
{
    if (strcmp(r->name, "main") == 0)
        return true;
    size_t i = find(c, r->snapshot_id);
    if (i == SIZE_MAX)
        return false;
    const icm_snapshot *s = icm_table_metadata_snapshot_at(c->md, i);
    int64_t max_age = r->has_max_ref_age_ms ? r->max_ref_age_ms : dflt_max_ref_age;
    int64_t age;
    if (__builtin_sub_overflow(now_ms, s->timestamp_ms, &age))
        return true;
    return age <= max_age;
}

/* How a branch's ancestors are kept: its cutoff and minimum, and which reasons they give
 * (the branch's own settings, or the table-wide ones). */
typedef struct branch_rule {
    int64_t cutoff_ms;
    int64_t min_keep;
    icm_expire_keep_reason by_count; /* RETAIN_LAST or MIN_SNAPSHOTS_TO_KEEP */
    icm_expire_keep_reason by_age;   /* NEWER_THAN_CUTOFF or MAX_SNAPSHOT_AGE */
    int32_t ref;                     /* the branch's index in the metadata's refs, -1 none */
} branch_rule;

/* The rule of branch `ref` (index r): its own max-snapshot-age-ms / min-snapshots-to-keep
 * override the table-wide cutoff and minimum (Java: also on main). */
static branch_rule rule_of(const icm_ref *ref, int32_t r, int64_t now_ms, int64_t cutoff_ms,
                           int64_t min_keep)
{
    branch_rule b = {cutoff_ms, min_keep, ICM_EXPIRE_KEEP_RETAIN_LAST,
                     ICM_EXPIRE_KEEP_NEWER_THAN_CUTOFF, r};
    if (ref != NULL && ref->has_max_snapshot_age_ms) {
        b.cutoff_ms = sat_sub(now_ms, ref->max_snapshot_age_ms);
        b.by_age = ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE;
    }
    if (ref != NULL && ref->has_min_snapshots_to_keep) {
        b.min_keep = ref->min_snapshots_to_keep;
        b.by_count = ICM_EXPIRE_KEEP_MIN_SNAPSHOTS_TO_KEEP;
    }
    return b;
}

/* Walk a retained branch's ancestry from its head: keep ancestors while fewer than min_keep are
 * kept or they are at/after the cutoff (each test that holds is a reason); stop at the first
 * that fails both. Mark the whole ancestry as "in a branch" (those are not unreferenced
 * snapshots). Parent cycles in corrupt metadata are cut by a step bound. */
static void walk_branch(ctx *c, size_t head, const branch_rule *b)
{
    int64_t kept = 0;
    bool keeping = true;
    size_t i = head;
    for (size_t steps = 0; i != SIZE_MAX && steps <= c->n; steps++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(c->md, i);
        c->in_branch[i] = true;
        bool by_count = kept < b->min_keep, by_age = s->timestamp_ms >= b->cutoff_ms;
        if (keeping && (by_count || by_age)) {
            if (by_count)
                keep_for(c, i, b->by_count, b->ref);
            if (by_age)
                keep_for(c, i, b->by_age, b->ref);
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
    icm__free(d->kept);
    icm__free(d);
}

/* Is ref r retained with its head retained (a REF reason of that head)? *head is its index. */
static bool ref_keeps_head(const ctx *c, const bool *ref_kept, size_t r, size_t *head)
{
    const icm_ref *ref = icm_table_metadata_ref_at(c->md, r);
    *head = find(c, ref->snapshot_id);
    return ref_kept[r] && *head != SIZE_MAX && c->retained[*head];
}

/* Append one reason to kept[k] (its reasons were reserved in `all`). */
static void add_reason(icm_expire_kept *kept, icm_expire_reason *all, icm_expire_keep_reason kind,
                       const char *ref)
{
    icm_expire_reason *slot = &all[(size_t)(kept->reasons - all) + kept->reason_count++];
    slot->kind = kind;
    slot->ref = ref;
}

/* Bytes of the kept block: nr entries, `reasons` reasons, then every ref name. Returns false on
 * overflow. */
static bool kept_block_size(const ctx *c, size_t nr, size_t reasons, size_t *out)
{
    size_t a, b, names = 0;
    for (size_t r = 0; r < icm_table_metadata_ref_count(c->md); r++)
        if (icm__add_overflow(names, strlen(icm_table_metadata_ref_at(c->md, r)->name) + 1,
                              &names))
            return false;
    return !icm__mul_overflow(nr, sizeof(icm_expire_kept), &a) &&
           !icm__mul_overflow(reasons, sizeof(icm_expire_reason), &b) &&
           !icm__add_overflow(a, b, &a) && !icm__add_overflow(a, names, out);
}

/*
 * d->kept: why each retained snapshot is kept, in retained_ids order, as one allocation: the
 * kept entries, then their reasons (CURRENT, one REF per retained ref at it in ref order, then
 * the other kinds), then the ref names the reasons point at. `at` is scratch for c->n indices.
 */
static int build_kept(const ctx *c, icm_expire_decision *d, const bool *ref_kept, size_t *at)
{
    size_t nrefs = icm_table_metadata_ref_count(c->md), total = 0, head, bytes;
    memset(at, 0, c->n * sizeof *at);
    for (size_t r = 0; r < nrefs; r++) {
        if (ref_keeps_head(c, ref_kept, r, &head)) {
            at[head]++;
            total++;
        }
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->retained[i])
            total += (size_t)__builtin_popcount(c->why[i].kinds);
    const char **name = icm__calloc(nrefs ? nrefs : 1, sizeof *name);
    char *block = NULL;
    if (kept_block_size(c, d->retained_count, total, &bytes))
        block = icm__malloc(bytes ? bytes : 1);
    if (name == NULL || block == NULL) {
        icm__free(name);
        icm__free(block);
        return icm__error_oom();
    }
    icm_expire_kept *kept = (icm_expire_kept *)(void *)block;
    icm_expire_reason *all =
        (icm_expire_reason *)(void *)(block + d->retained_count * sizeof *kept);
    char *text = (char *)(all + total);
    for (size_t r = 0; r < nrefs; r++) {
        const char *src = icm_table_metadata_ref_at(c->md, r)->name;
        size_t len = strlen(src) + 1;
        name[r] = memcpy(text, src, len);
        text += len;
    }
    /* Reserve each snapshot's reasons; `at` turns from REF counts into kept indices. */
    size_t next = 0, k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->retained[i])
            continue;
        kept[k].snapshot_id = icm_table_metadata_snapshot_at(c->md, i)->snapshot_id;
        kept[k].reasons = &all[next];
        kept[k].reason_count = 0;
        next += at[i] + (size_t)__builtin_popcount(c->why[i].kinds);
        at[i] = k++;
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->retained[i] && (c->why[i].kinds & 1u << ICM_EXPIRE_KEEP_CURRENT))
            add_reason(&kept[at[i]], all, ICM_EXPIRE_KEEP_CURRENT, NULL);
    for (size_t r = 0; r < nrefs; r++)
        if (ref_keeps_head(c, ref_kept, r, &head))
            add_reason(&kept[at[head]], all, ICM_EXPIRE_KEEP_REF, name[r]);
    for (size_t i = 0; i < c->n; i++) {
        for (int kind = ICM_EXPIRE_KEEP_RETAIN_LAST;
             c->retained[i] && kind < ICM_EXPIRE_KEEP_REASON_COUNT; kind++) {
            int32_t r = c->why[i].ref[kind];
            if (c->why[i].kinds & 1u << kind)
                add_reason(&kept[at[i]], all, (icm_expire_keep_reason)kind,
                           r >= 0 ? name[r] : NULL);
        }
    }
    icm__free(name);
    d->kept = kept;
    return 0;
}

/* Fill the output arrays from the flags (`order` and `tmp` are scratch for c->n indices). */
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
    return build_kept(c, d, ref_kept, order);
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
        keep_for(c, order[--nc], ICM_EXPIRE_KEEP_RETAIN_LAST, -1);
        kept++;
    }
}

int icm_expire_decide(icm_expire_decision **out, const icm_table_metadata *md,
                      const icm_expire_decide_options *opts)
{
    *out = NULL;
    if (opts != NULL && opts->version != ICM_EXPIRE_DECIDE_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, icm_table_metadata_file(md),
                              "icm_expire_decide_options: unknown version %u (use "
                              "ICM_EXPIRE_DECIDE_OPTIONS_INIT)",
                              opts->version);
    if (opts == NULL || opts->retain_last < 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, icm_table_metadata_file(md),
                              "Number of snapshots to retain must be at least 1, cannot be: %d",
                              opts ? (int)opts->retain_last : 0);
    int rc = check_gc_enabled(md);
    if (rc < 0)
        return rc;
    int64_t max_age, min_keep, max_ref_age;
    if ((rc = retention_prop(md, PROP_MAX_SNAPSHOT_AGE, ICM_DEFAULT_MAX_SNAPSHOT_AGE_MS,
                             INT64_MAX, &max_age)) < 0 ||
        (rc = retention_prop(md, PROP_MIN_SNAPSHOTS, ICM_DEFAULT_MIN_SNAPSHOTS_TO_KEEP,
                             INT32_MAX, &min_keep)) < 0 ||
        (rc = retention_prop(md, PROP_MAX_REF_AGE, ICM_DEFAULT_MAX_REF_AGE_MS, INT64_MAX,
                             &max_ref_age)) < 0)
        return rc;
    if (opts->retain_last > 0)
        min_keep = opts->retain_last;
    int64_t now = opts->now_ms;
    int64_t cutoff = opts->has_older_than ? opts->older_than_ms : sat_sub(now, max_age);

    icm_expire_decision *d = icm__calloc(1, sizeof *d);
    ctx c = {md, icm_table_metadata_snapshot_count(md), NULL, NULL, NULL, NULL, NULL, NULL};
    size_t nrefs = icm_table_metadata_ref_count(md);
    size_t n1 = c.n ? c.n : 1;
    bool *ref_kept = icm__calloc(nrefs ? nrefs : 1, sizeof *ref_kept);
    size_t *order = icm__calloc(n1, sizeof *order);
    size_t *tmp = icm__calloc(n1, sizeof *tmp);
    c.by_id = icm__calloc(n1, sizeof *c.by_id);
    c.retained = icm__calloc(n1, sizeof(bool));
    c.why = icm__calloc(n1, sizeof *c.why);
    c.in_branch = icm__calloc(n1, sizeof(bool));
    c.tag_head = icm__calloc(n1, sizeof(bool));
    c.explicit_id = icm__calloc(n1, sizeof(bool));
    if (d == NULL || ref_kept == NULL || order == NULL || tmp == NULL || c.by_id == NULL ||
        c.retained == NULL || c.why == NULL || c.in_branch == NULL || c.tag_head == NULL ||
        c.explicit_id == NULL) {
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
        c.retained[i] = true; /* its REF reason is added with the result */
        if (ref->type == ICM_REF_TAG) {
            c.tag_head[i] = true;
            continue;
        }
        branch_rule b = rule_of(ref, (int32_t)r, now, cutoff, min_keep);
        walk_branch(&c, i, &b);
    }

    /* Rule 1: the current snapshot stays even when the refs do not name it `main`. */
    int64_t current;
    if (icm_table_metadata_current_snapshot_id(&current, md)) {
        size_t i = find(&c, current);
        if (i != SIZE_MAX) {
            if (c.explicit_id[i]) {
                rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED,
                                    icm_table_metadata_file(md),
                                    "Cannot expire %lld: it is the current snapshot",
                                    (long long)current);
                goto done;
            }
            if (!has_main) {
                branch_rule b = rule_of(NULL, -1, now, cutoff, min_keep);
                walk_branch(&c, i, &b);
            }
            keep_for(&c, i, ICM_EXPIRE_KEEP_CURRENT, -1);
        }
    }

    /* Unreferenced snapshots: only the table-wide cutoff applies. */
    for (size_t i = 0; i < c.n; i++)
        if (!c.in_branch[i] && !c.tag_head[i] &&
            icm_table_metadata_snapshot_at(md, i)->timestamp_ms >= cutoff)
            keep_for(&c, i, ICM_EXPIRE_KEEP_NEWER_THAN_CUTOFF, -1);

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
    icm__free(c.why);
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

int icm_expire_choose(int64_t **out_ids, size_t *out_count, const icm_table_metadata *md,
                      int64_t older_than_ms, int32_t keep_last)
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
