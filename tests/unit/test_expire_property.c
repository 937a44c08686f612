/*
 * tests/unit/test_expire_property.c: properties of snapshot expiry over randomized histories,
 * and crash safety at every I/O step.
 *
 * Histories (seeded, small, reproducible: the failing seed is printed) mix appends, deletes,
 * overwrites, re-added paths, position deletes, equality deletes, deletion vectors (v3),
 * staged snapshots, branches and their own commits, tags, rollbacks of main, statistics and
 * partition-statistics files, then expire with random options. The oracle is the history
 * model (history.c), not the keep-set code under test. Checked on every history:
 *  1. the three rules that always hold (docs/semantics.md#expiry-snapshot-retention): the
 *     current snapshot stays; every ref that stays points at a snapshot that stays, and refs
 *     without an age limit stay; without explicit ids at least min(retain_last, snapshots
 *     before) snapshots stay;
 *  2. every file a retained snapshot reaches exists afterwards;
 *  3. every file only expired snapshots reached is gone (per cleanup level: ALL everything,
 *     METADATA manifests, lists and statistics files, NONE nothing);
 *  4. a dry run first deletes nothing and plans exactly the set the real run deletes;
 *  5. on every 10th history a commit whose outcome is unknown deletes nothing.
 * Crash test: for a few histories, a fault FileIO crashes after N operations for N = 1, 2, ...
 * until an expiry completes; after every crash the table loads and every retained snapshot is
 * whole (its list, manifests and live files exist).
 *
 * ICM_PROPERTY_ITERATIONS overrides the number of histories (default 1000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/expire.h"
#include "testutil.h"

#define T0 INT64_C(1700000000000)

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    /* xorshift64*: small, seedable, good enough for test shapes */
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * UINT64_C(2685821657736338717);
}

static size_t pick(rng *r, size_t n)
{
    return n == 0 ? 0 : (size_t)(next(r) % n);
}

static const char *const NAMES[] = {"F0", "F1", "F2", "F3", "F4", "F5", "F6", "F7"};

/* A random snapshot id of the model, or -1. */
static int64_t any_snapshot(hist *h, rng *r)
{
    size_t n;
    int64_t *ids = hist_snapshot_ids(h, &n);
    int64_t id = n ? ids[pick(r, n)] : -1;
    free(ids);
    return id;
}

static void random_delete(hist *h, rng *r, const char *branch)
{
    int64_t head = hist_head(h, branch);
    if (head < 0)
        return;
    char **live = hist_live_names(h, head, pick(r, 2) == 0);
    size_t n = hist_strv_len(live);
    if (n > 0)
        hist_delete(h, branch, live[pick(r, n)], NULL);
    hist_strv_free(live);
}

/* A name not live at the head of `branch` (main for a staged snapshot), or NULL: a file live
 * twice in one snapshot is refused as damage (reach_walk.c judge_snapshots), so the model
 * appends a file again only after it was deleted. */
static const char *fresh_name(hist *h, rng *r, const char *branch, size_t skip)
{
    int64_t head = hist_head(h, branch != NULL ? branch : "main");
    char **live = head >= 0 ? hist_live_names(h, head, false) : NULL;
    const char *fresh[8];
    size_t n = 0;
    for (size_t i = 0; i < 8; i++) {
        bool is_live = false;
        for (size_t k = 0; live != NULL && live[k] != NULL; k++)
            is_live = is_live || strcmp(live[k], NAMES[i]) == 0;
        if (!is_live)
            fresh[n++] = NAMES[i];
    }
    hist_strv_free(live);
    return n > skip ? fresh[(pick(r, n - skip) + skip) % n] : NULL;
}

static void random_overwrite(hist *h, rng *r, const char *branch)
{
    int64_t head = hist_head(h, branch);
    char **live = head >= 0 ? hist_live_names(h, head, false) : NULL;
    size_t n = hist_strv_len(live);
    const char *del[] = {n > 0 ? live[pick(r, n)] : NULL, NULL};
    /* the deleted file written again, or one not live (see fresh_name) */
    const char *add[] = {del[0] != NULL && pick(r, 4) == 0 ? del[0] : fresh_name(h, r, branch, 0),
                         NULL};
    if (add[0] == NULL)
        add[0] = del[0];
    if (add[0] != NULL)
        hist_overwrite(h, branch, add, del);
    hist_strv_free(live);
}

static void random_deletes_file(hist *h, rng *r, const char *branch, int fv, int *counter)
{
    int64_t head = hist_head(h, branch);
    if (head < 0)
        return;
    char **live = hist_live_names(h, head, false);
    size_t n = hist_strv_len(live);
    char name[16];
    snprintf(name, sizeof name, "D%d", (*counter)++);
    if (n > 0) {
        const char *target = live[pick(r, n)];
        size_t kind = pick(r, fv >= 3 ? 3 : 2);
        if (kind == 0)
            hist_position_delete(h, branch, name, target);
        else if (kind == 1)
            hist_equality_delete(h, branch, name);
        else
            hist_deletion_vectors(h, branch, name, target, NULL);
    }
    hist_strv_free(live);
}

static void random_op(hist *h, rng *r, int fv, int *counter)
{
    const char *fresh;
    const char *branch = hist_head(h, "b") >= 0 && pick(r, 4) == 0 ? "b" : "main";
    int64_t id;
    char name[16];
    switch (pick(r, 16)) {
    case 0:
    case 1:
    case 2:
        if ((fresh = fresh_name(h, r, branch, 0)) != NULL)
            hist_append(h, branch, fresh, NULL);
        break;
    case 13: {
        /* several files in one manifest, so later deletes leave EXISTING entries; distinct
         * (a commit that adds one file twice is damage: the walk's named_twice) */
        hist_file add[3];
        size_t n = 0, want = 1 + pick(r, 3);
        for (size_t i = 0; i < want; i++) {
            const char *f = fresh_name(h, r, branch, 0);
            bool again = f == NULL;
            for (size_t k = 0; k < n && !again; k++)
                again = strcmp(add[k].name, f) == 0;
            if (!again)
                add[n++] = (hist_file){f, ICM_FILE_CONTENT_DATA, false, NULL};
        }
        if (pick(r, 3) == 0)
            hist_rewrite_manifests(h, branch);
        else
            if (n > 0)
                hist_commit_files(h, branch, "append", add, n, NULL);
        break;
    }
    case 3:
    case 14:
        random_delete(h, r, branch);
        break;
    case 4:
        random_overwrite(h, r, branch);
        break;
    case 5:
    case 15:
        random_deletes_file(h, r, branch, fv, counter);
        break;
    case 6:
        if ((fresh = fresh_name(h, r, NULL, 0)) != NULL)
            hist_append(h, NULL, fresh, NULL); /* staged */
        break;
    case 7:
        if (hist_head(h, "b") < 0 && (id = any_snapshot(h, r)) >= 0)
            hist_branch(h, "b", id);
        break;
    case 8:
        if ((id = any_snapshot(h, r)) >= 0) {
            snprintf(name, sizeof name, "t%d", (*counter)++);
            hist_tag(h, name, id);
            if (pick(r, 2) == 0)
                hist_ref_retention(h, name, (int64_t)pick(r, 5000) + 1, -1, -1);
        }
        break;
    case 9:
        if ((id = any_snapshot(h, r)) >= 0)
            hist_set_head(h, "main", id); /* rollback / reset */
        break;
    case 10:
        if ((id = any_snapshot(h, r)) >= 0) {
            snprintf(name, sizeof name, "st%d", (*counter)++);
            hist_add_statistics(h, id, name, pick(r, 2) == 0);
        }
        break;
    case 11:
        hist_set_merge_append(h, pick(r, 2) == 0);
        break;
    default:
        if (hist_head(h, "b") >= 0)
            hist_ref_retention(h, "b", pick(r, 2) ? -1 : (int64_t)pick(r, 5000) + 1, -1,
                               (int32_t)pick(r, 3) + 1);
        break;
    }
}

static hist *random_history(icm_fileio *io, uint64_t seed, int *fv_out)
{
    rng r = {seed * UINT64_C(0x9E3779B97F4A7C15) + 1};
    int fv = pick(&r, 2) == 0 ? 3 : 2;
    *fv_out = fv;
    hist *h = hist_new(io, "/wh/t", fv, false, T0);
    int counter = 0;
    hist_append(h, "main", NAMES[pick(&r, 8)], NULL);
    size_t ops = 3 + pick(&r, 8);
    for (size_t i = 0; i < ops; i++)
        random_op(h, &r, fv, &counter);
    return h;
}

/* Random expiry options. Explicit ids only name snapshots no ref points at (others would be
 * refused, which test_expire_decide covers). */
static icm_expire_options random_options(hist *h, rng *r, int64_t *explicit_id,
                                         icm_table *t)
{
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.decide.now_ms = hist_time(h) + (int64_t)pick(r, 6000);
    o.decide.has_older_than = true;
    o.decide.older_than_ms = T0 + (int64_t)pick(r, (size_t)(hist_time(h) - T0 + 2000));
    o.decide.retain_last = (int32_t)pick(r, 3) + 1;
    o.cleanup = (icm_expire_cleanup)pick(r, 3);
    o.max_concurrent_deletes = pick(r, 4) == 0 ? 3 : 1;
    const icm_table_metadata *md = icm_table_get_metadata(t);
    int64_t id = any_snapshot(h, r);
    bool referenced = false;
    for (size_t i = 0; i < icm_table_metadata_ref_count(md); i++)
        referenced = referenced || icm_table_metadata_ref_at(md, i)->snapshot_id == id;
    if (id >= 0 && !referenced && pick(r, 4) == 0) {
        *explicit_id = id;
        o.decide.snapshot_ids = explicit_id;
        o.decide.snapshot_id_count = 1;
    }
    return o;
}

static bool exists(icm_fileio *io, const char *path)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, io, path);
    assert_true(rc == 0 || rc == ICM_ENOTFOUND);
    return rc == 0;
}

static bool is_content_file(const char *path)
{
    return strstr(path, "/data/") != NULL;
}

typedef struct snapshot_refs {
    size_t count;
    int64_t current;
    bool has_current;
    char **names;        /* refs without an age limit, which must survive */
    int64_t *ids;
    size_t n;
} snapshot_refs;

static void capture(const icm_table_metadata *md, snapshot_refs *s)
{
    memset(s, 0, sizeof *s);
    s->count = icm_table_metadata_snapshot_count(md);
    s->has_current = icm_table_metadata_current_snapshot_id(&s->current, md);
    size_t n = icm_table_metadata_ref_count(md);
    s->names = calloc(n + 1, sizeof *s->names);
    s->ids = calloc(n + 1, sizeof *s->ids);
    for (size_t i = 0; i < n; i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, i);
        if (!ref->has_max_ref_age_ms) {
            s->names[s->n] = strdup(ref->name);
            s->ids[s->n++] = ref->snapshot_id;
        }
    }
}

static void release(snapshot_refs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->ids);
}

/* Rule checks on the committed metadata. */
static void check_rules(const snapshot_refs *before, const icm_table_metadata *after,
                        const icm_expire_options *o)
{
    if (before->has_current) {
        int64_t cur;
        assert_true(icm_table_metadata_current_snapshot_id(&cur, after));
        assert_true(cur == before->current);
        assert_non_null(icm_table_metadata_snapshot_by_id(after, cur));
    }
    for (size_t i = 0; i < icm_table_metadata_ref_count(after); i++)
        assert_non_null(icm_table_metadata_snapshot_by_id(
            after, icm_table_metadata_ref_at(after, i)->snapshot_id));
    for (size_t i = 0; i < before->n; i++) {
        const icm_ref *ref = icm_table_metadata_ref_by_name(after, before->names[i]);
        assert_non_null(ref);
        assert_true(ref->snapshot_id == before->ids[i]);
    }
    if (o->decide.snapshot_id_count == 0) {
        size_t want = before->count < (size_t)o->decide.retain_last ? before->count
                                                                     : (size_t)o->decide.retain_last;
        assert_true(icm_table_metadata_snapshot_count(after) >= want);
    }
}

static void collect_paths(const icm_expire_result *r, char ***out, size_t *n)
{
    const icm_expire_file *lists[3] = {r->deleted_files, r->deleted_manifests,
                                       r->deleted_statistics_files};
    size_t counts[3] = {r->deleted_file_count, r->deleted_manifest_count,
                        r->deleted_statistics_file_count};
    *n = 0;
    *out = calloc(r->total + 1, sizeof **out);
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < counts[k]; i++)
            if (lists[k][i].state != ICM_EXPIRE_FILE_FAILED)
                (*out)[(*n)++] = lists[k][i].path;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void assert_same_plan(const icm_expire_result *dry, const icm_expire_result *real)
{
    assert_int_equal(dry->total, real->total);
    char **a, **b;
    size_t na, nb;
    collect_paths(dry, &a, &na);
    collect_paths(real, &b, &nb);
    assert_int_equal(na, nb);
    if (na > 0) {
        qsort(a, na, sizeof *a, cmp_str);
        qsort(b, nb, sizeof *b, cmp_str);
    }
    for (size_t i = 0; i < na; i++)
        assert_string_equal(a[i], b[i]);
    free(a);
    free(b);
}

static void check_unknown_deletes_nothing(hist *h, const icm_expire_options *o)
{
    char **all = hist_reachable(h, NULL, 0);
    icm_table *t = hist_open_table(h);
    hist_script_next_commit(h, HIST_COMMIT_UNKNOWN_NOT_APPLIED);
    icm_expire_result *r = NULL;
    int rc = icm_expire_snapshots(&r, t, o);
    hist_script_next_commit(h, HIST_COMMIT_NORMAL);
    if (r != NULL && r->expired_count > 0) {
        assert_int_equal(rc, ICM_ECOMMIT_UNKNOWN);
        assert_int_equal(r->total, 0);
    }
    for (size_t i = 0; all[i] != NULL; i++)
        assert_true(exists(hist_io(h), all[i]));
    hist_strv_free(all);
    icm_expire_result_free(r);
    icm_table_free(t);
}

/* What the histories exercised, so a shape that silently stopped happening is noticed. */
static struct {
    size_t expired, deleted[ICM_EXPIRE_FILE_KIND_COUNT], explicit_ids, levels[3];
} seen;

static void one_history(uint64_t seed)
{
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    int fv;
    hist *h = random_history(io, seed, &fv);
    rng r = {seed + 7};
    icm_table *t = hist_open_table(h);
    int64_t explicit_id = -1;
    icm_expire_options o = random_options(h, &r, &explicit_id, t);
    snapshot_refs before;
    capture(icm_table_get_metadata(t), &before);
    if (seed % 10 == 0)
        check_unknown_deletes_nothing(h, &o);

    icm_expire_options dry_opts = o;
    dry_opts.dry_run = true;
    icm_expire_result *dry = NULL, *res = NULL;
    icmt_ok(icm_expire_snapshots(&dry, t, &dry_opts));
    icmt_ok(icm_expire_snapshots(&res, t, &o));
    assert_same_plan(dry, res);
    check_rules(&before, icm_table_get_metadata(t), &o);

    /* Oracle: what only the expired snapshots reached, from the model before it forgets them. */
    char **gone = hist_reachable(h, res->expired_ids, res->expired_count);
    hist_sync(h);
    char **live = hist_reachable(h, NULL, 0);
    for (size_t i = 0; live[i] != NULL; i++) {
        if (!exists(io, live[i]))
            print_error("seed %llu: retained file missing: %s\n", (unsigned long long)seed,
                        live[i]);
        assert_true(exists(io, live[i]));
    }
    for (size_t i = 0; gone[i] != NULL; i++) {
        if (hist_strv_has(live, gone[i]))
            continue;
        bool should_go = o.cleanup == ICM_EXPIRE_CLEANUP_ALL ||
                         (o.cleanup == ICM_EXPIRE_CLEANUP_METADATA && !is_content_file(gone[i]));
        if (exists(io, gone[i]) == should_go)
            print_error("seed %llu: %s should %s\n", (unsigned long long)seed, gone[i],
                        should_go ? "be gone" : "exist");
        assert_true(exists(io, gone[i]) != should_go);
    }
    assert_int_equal(res->problem_count, 0);
    seen.expired += res->expired_count;
    for (size_t k = 0; k < ICM_EXPIRE_FILE_KIND_COUNT; k++)
        seen.deleted[k] += res->counts[k];
    seen.explicit_ids += o.decide.snapshot_id_count;
    seen.levels[o.cleanup]++;
    hist_strv_free(gone);
    hist_strv_free(live);
    release(&before);
    icm_expire_result_free(dry);
    icm_expire_result_free(res);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

static void test_random_histories(void **state)
{
    (void)state;
    const char *env = getenv("ICM_PROPERTY_ITERATIONS");
    unsigned long n = env != NULL ? strtoul(env, NULL, 10) : 1000;
    for (unsigned long seed = 1; seed <= n; seed++)
        one_history(seed);
    print_message("%lu randomized histories: %zu snapshots expired (%zu by id); deleted:", n,
                  seen.expired, seen.explicit_ids);
    for (size_t k = 0; k < ICM_EXPIRE_FILE_KIND_COUNT; k++)
        print_message(" %s %zu", icm_expire_file_kind_name((icm_expire_file_kind)k),
                      seen.deleted[k]);
    print_message("\n");
    if (n >= 1000) {
        /* Every kind of file must actually have been deleted somewhere. */
        for (size_t k = 0; k < ICM_EXPIRE_FILE_KIND_COUNT; k++)
            if (k != ICM_EXPIRE_FILE_CHECKSUM) /* the in-memory store keeps no companions */
                assert_true(seen.deleted[k] > 0);
        assert_true(seen.explicit_ids > 0);
        for (size_t l = 0; l < 3; l++)
            assert_true(seen.levels[l] > 100);
    }
}

/* ---- crash at every I/O step ---- */

/* After a crash: the table loads and every snapshot it has is whole. */
static void check_whole(hist *h, icm_fileio *fault, unsigned long n)
{
    icm_fileio_fault_reset(fault);
    icm_table *t = hist_open_table(h);
    hist_sync(h);
    char **live = hist_reachable(h, NULL, 0);
    for (size_t i = 0; live[i] != NULL; i++) {
        if (!exists(fault, live[i]))
            print_error("crash after %lu: retained file missing: %s\n", n, live[i]);
        assert_true(exists(fault, live[i]));
    }
    hist_strv_free(live);
    icm_table_free(t);
}

static void crash_history(uint64_t seed, size_t *steps)
{
    for (unsigned long n = 1;; n++) {
        icm_fileio *mem = NULL, *fault = NULL;
        icmt_ok(icm_fileio_mem_new(&mem));
        icmt_ok(icm_fileio_fault_new(&fault, mem));
        int fv;
        hist *h = random_history(fault, seed, &fv);
        icm_table *t = hist_open_table(h);
        icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
        o.decide.now_ms = hist_time(h);
        o.decide.has_older_than = true;
        o.decide.older_than_ms = hist_time(h) - 1500;
        icm_fileio_fault_reset(fault);
        icm_fileio_fault_crash_after(fault, n);
        icm_expire_result *r = NULL;
        int rc = icm_expire_snapshots(&r, t, &o);
        bool crashed = icm_fileio_fault_crashed(fault);
        icm_expire_result_free(r);
        icm_table_free(t);
        check_whole(h, fault, n);
        hist_free(h);
        icm_fileio_free(fault);
        if (!crashed) {
            icmt_ok(rc);
            *steps += n - 1;
            return;
        }
    }
}

static void test_crash_at_every_step(void **state)
{
    (void)state;
    size_t steps = 0;
    for (uint64_t seed = 1; seed <= 6; seed++)
        crash_history(seed, &steps);
    print_message("%zu crash points checked\n", steps);
    assert_true(steps > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_histories),
        cmocka_unit_test(test_crash_at_every_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
