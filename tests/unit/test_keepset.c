/*
 * tests/unit/test_keepset.c: the compact path set and the reachability walk (maint/keepset.h).
 *
 *  - path set: local forms of one file are one key; other URIs are exact; growth keeps every
 *    key; memory stays within 32 bytes per path;
 *  - walk: exactly the files the history model says the chosen snapshots reach (lists,
 *    manifests, ADDED/EXISTING entries, statistics), never DELETED entries nor a deletion
 *    vector's referenced_data_file; each unique manifest read once however many snapshots
 *    share it (counted with the fault FileIO); unreadable lists and manifests reported with
 *    their error while the walk goes on; v1 embedded manifests;
 *  - the walk's shortcuts for list rows (a row byte for byte the one expected from the list
 *    before is passed unread; else by its path) give the single pass's answers when a kept
 *    manifest's row changes bytes between lists, when one list has another writer schema (v1),
 *    when a new manifest follows a row that matches, and when lists are cut into blocks of one
 *    or a few rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/avro.h"
#include "history.h"
#include "maint/keepset.h"
#include "testutil.h"

#define T0 INT64_C(1700000000000)

static bool has(const icm__pathset *s, const char *p)
{
    bool out;
    icmt_ok(icm__pathset_contains(s, p, &out));
    return out;
}

static void test_pathset_local_forms(void **state)
{
    (void)state;
    icm__pathset *s = NULL;
    icmt_ok(icm__pathset_new(&s, 0));
    bool added;
    icmt_ok(icm__pathset_add(s, "/wh/t/data/a.parquet", &added));
    assert_true(added);
    icmt_ok(icm__pathset_add(s, "file:///wh/t/data/a.parquet", &added));
    assert_false(added);
    icmt_ok(icm__pathset_add(s, "file:/wh//t/data/a.parquet", &added));
    assert_false(added);
    assert_true(has(s, "file://localhost/wh/t/data/a.parquet"));
    assert_false(has(s, "/wh/t/data/b.parquet"));
    assert_false(has(s, "s3://wh/t/data/a.parquet"));
    icmt_ok(icm__pathset_add(s, "s3://b/t/x", &added));
    assert_true(added);
    /* s3, s3a and s3n name one object (issue #17: equal by default; a keep set that told them
     * apart could delete a file a retained snapshot names through the other scheme) */
    assert_true(has(s, "s3a://b/t/x"));
    assert_true(has(s, "S3N://b/t/x"));
    assert_false(has(s, "s3://c/t/x")); /* authorities exact */
    assert_false(has(s, "s3://b/t//x"));
    assert_int_equal(icm__pathset_count(s), 2);
    icm__pathset_free(s);
}

static void test_pathset_growth_and_memory(void **state)
{
    (void)state;
    icm__pathset *s = NULL;
    icmt_ok(icm__pathset_new(&s, 0));
    enum { N = 100000 };
    char path[128];
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "s3://bucket/warehouse/db/table/data/part=%d/%08d.parquet",
                 i % 97, i);
        icmt_ok(icm__pathset_add(s, path, NULL));
    }
    assert_int_equal(icm__pathset_count(s), N);
    for (int i = 0; i < N; i += 7) {
        snprintf(path, sizeof path, "s3://bucket/warehouse/db/table/data/part=%d/%08d.parquet",
                 i % 97, i);
        assert_true(has(s, path));
        snprintf(path, sizeof path, "s3://bucket/warehouse/db/table/data/part=%d/%08d.parquet",
                 i % 97, i + N);
        assert_false(has(s, path));
    }
    size_t bytes = icm__pathset_memory_bytes(s);
    print_message("%d paths: %zu bytes (%.1f per path)\n", N, bytes, (double)bytes / N);
    assert_true(bytes <= ((size_t)N + 1) * 32 + 64);
    icm__pathset_free(s);
}

/* Reserving room: adding up to the reserved number grows nothing, and the table then holds at
 * most 21.4 bytes per path (load 3/4); reserving less than there is room for changes nothing. */
static void test_pathset_reserve(void **state)
{
    (void)state;
    icm__pathset *s = NULL;
    icmt_ok(icm__pathset_new(&s, 0));
    enum { N = 30000 };
    icmt_ok(icm__pathset_reserve(s, N));
    size_t reserved = icm__pathset_memory_bytes(s);
    char path[96];
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "/wh/t/data/%06d.parquet", i);
        icmt_ok(icm__pathset_add(s, path, NULL));
        assert_int_equal(icm__pathset_memory_bytes(s), reserved); /* never grew */
    }
    assert_int_equal(icm__pathset_count(s), N);
    assert_true(reserved <= (size_t)N * 64 / 3 + 64);
    icmt_ok(icm__pathset_reserve(s, N / 2));
    assert_int_equal(icm__pathset_memory_bytes(s), reserved);
    for (int i = 0; i < N; i += 97) {
        snprintf(path, sizeof path, "/wh/t/data/%06d.parquet", i);
        assert_true(has(s, path));
    }
    snprintf(path, sizeof path, "/wh/t/data/%06d.parquet", N);
    icmt_ok(icm__pathset_add(s, path, NULL)); /* one more than reserved: grows, still exact */
    assert_true(icm__pathset_memory_bytes(s) > reserved);
    assert_int_equal(icm__pathset_count(s), N + 1);
    /* Emptied: nothing is in it, its table is kept, and it takes paths again. */
    size_t grown = icm__pathset_memory_bytes(s);
    icm__pathset_clear(s);
    assert_int_equal(icm__pathset_count(s), 0);
    assert_int_equal(icm__pathset_memory_bytes(s), grown);
    for (int i = 0; i <= N; i += 97) {
        snprintf(path, sizeof path, "/wh/t/data/%06d.parquet", i);
        assert_false(has(s, path));
    }
    for (int i = 0; i < N; i += 2) {
        snprintf(path, sizeof path, "/wh/t/data/%06d.parquet", i);
        icmt_ok(icm__pathset_add(s, path, NULL));
    }
    assert_int_equal(icm__pathset_count(s), N / 2);
    assert_int_equal(icm__pathset_memory_bytes(s), grown);
    for (int i = 0; i < 200; i++) {
        snprintf(path, sizeof path, "/wh/t/data/%06d.parquet", i);
        assert_int_equal(has(s, path), i % 2 == 0);
    }
    icm__pathset_free(s);
}

/* ---- walk ---- */

typedef struct seen {
    char **paths;
    int *kinds;
    size_t n;
} seen;

static int on_reached(const icm__reached *f, void *payload)
{
    seen *s = payload;
    s->paths = realloc(s->paths, (s->n + 1) * sizeof *s->paths);
    s->kinds = realloc(s->kinds, (s->n + 1) * sizeof *s->kinds);
    s->paths[s->n] = strdup(f->location);
    s->kinds[s->n++] = (int)f->kind;
    return 0;
}

static void seen_free(seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->paths[i]);
    free(s->paths);
    free(s->kinds);
}

static bool seen_has(const seen *s, const char *p, int *kind)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->paths[i], p) == 0) {
            if (kind != NULL)
                *kind = s->kinds[i];
            return true;
        }
    return false;
}

/* The walk reaches exactly what the model says (each path once). */
static void assert_walk_matches_model(hist *h, icm_fileio *io, const int64_t *ids, size_t n)
{
    icm_table *t = hist_open_table(h);
    icm__reach_options o = {ids, n, true, NULL, true, NULL, false, NULL, NULL};
    seen s = {NULL, NULL, 0};
    icm__reach_report rep;
    icmt_ok(icm__reach_walk(io, icm_table_get_metadata(t), &o, on_reached, &s, &rep));
    assert_int_equal(rep.failure_count, 0);
    char **want = hist_reachable(h, ids, n);
    size_t distinct = 0;
    for (size_t i = 0; i < s.n; i++) {
        bool dup = false;
        for (size_t j = 0; j < i; j++)
            dup = dup || strcmp(s.paths[i], s.paths[j]) == 0;
        distinct += !dup;
        if (!hist_strv_has(want, s.paths[i]))
            print_error("unexpected: %s\n", s.paths[i]);
        assert_true(hist_strv_has(want, s.paths[i]));
    }
    for (size_t i = 0; want[i] != NULL; i++)
        assert_true(seen_has(&s, want[i], NULL));
    assert_int_equal(distinct, hist_strv_len(want));
    hist_strv_free(want);
    icm__reach_report_dispose(&rep);
    seen_free(&s);
    icm_table_free(t);
}

static void test_walk_kinds_and_dv(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, "/wh/t", 3, false, T0);
    int64_t s1 = hist_append(h, "main", "A", "B", NULL);
    hist_deletion_vectors(h, "main", "DV", "A", "B", NULL);
    hist_position_delete(h, "main", "P", "B");
    hist_equality_delete(h, "main", "E");
    hist_add_statistics(h, s1, "s1.stats", false);
    int64_t last = hist_delete(h, "main", "A", NULL);
    hist_add_statistics(h, last, "p.stats", true);
    assert_walk_matches_model(h, io, NULL, 0);

    int64_t only[] = {last};
    icm_table *t = hist_open_table(h);
    icm__reach_options o = {only, 1, true, NULL, true, NULL, false, NULL, NULL};
    seen s = {NULL, NULL, 0};
    icm__reach_report rep;
    icmt_ok(icm__reach_walk(io, icm_table_get_metadata(t), &o, on_reached, &s, &rep));
    int kind = -1;
    char *a = hist_data_path(h, "A"), *b = hist_data_path(h, "B");
    assert_false(seen_has(&s, a, NULL)); /* DELETED in the last snapshot; the DV names it */
    assert_true(seen_has(&s, b, &kind));
    assert_int_equal(kind, ICM__FILE_DATA);
    assert_true(seen_has(&s, "/wh/t/data/DV.puffin", &kind));
    assert_int_equal(kind, ICM__FILE_DELETION_VECTOR);
    assert_true(seen_has(&s, "/wh/t/data/P-deletes.parquet", &kind));
    assert_int_equal(kind, ICM__FILE_POSITION_DELETES);
    assert_true(seen_has(&s, "/wh/t/data/E-eq.parquet", &kind));
    assert_int_equal(kind, ICM__FILE_EQUALITY_DELETES);
    assert_true(seen_has(&s, "/wh/t/metadata/p.stats", &kind));
    assert_int_equal(kind, ICM__FILE_PARTITION_STATISTICS);
    assert_false(seen_has(&s, "/wh/t/metadata/s1.stats", NULL)); /* S1's, not chosen */
    free(a);
    free(b);
    icm__reach_report_dispose(&rep);
    seen_free(&s);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

/* Twenty snapshots share most manifests: each unique manifest is read exactly once. */
static void test_each_manifest_read_once(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *fault = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    hist *h = hist_new(fault, "/wh/t", 2, false, T0);
    char name[8];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "F%d", i);
        hist_append(h, "main", name, NULL);
    }
    icm_table *t = hist_open_table(h);
    icm__pathset *keep = NULL;
    icmt_ok(icm__pathset_new(&keep, 0));
    icm__reach_options o = {NULL, 0, true, NULL, true, NULL, false, NULL, NULL};
    icm__reach_report rep;
    icm_fileio_fault_reset(fault);
    icmt_ok(icm__keepset_build(fault, icm_table_get_metadata(t), &o, keep, &rep));
    /* 20 lists + 20 unique manifests (snapshot k carries the k-1 earlier ones) */
    assert_int_equal(rep.manifest_lists_read, 20);
    assert_int_equal(rep.manifests_read, 20);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_READ), 40);
    assert_int_equal(icm__pathset_count(keep), 60); /* lists, manifests, data files */
    icm__reach_report_dispose(&rep);

    /* skip_entries_of: manifests reported, their entries not read. */
    icm_fileio_fault_reset(fault);
    icm__reach_options skip = {NULL, 0, true, keep, true, NULL, false, NULL, NULL};
    icm__pathset *again = NULL;
    icmt_ok(icm__pathset_new(&again, 0));
    icmt_ok(icm__keepset_build(fault, icm_table_get_metadata(t), &skip, again, &rep));
    assert_int_equal(rep.manifests_read, 0);
    assert_int_equal(icm__pathset_count(again), 40);
    icm__reach_report_dispose(&rep);
    icm__pathset_free(again);
    icm__pathset_free(keep);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(fault);
}

/* A missing list and a corrupt manifest are reported; everything else is still reached. */
static void test_unreadable_reported(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, "/wh/t", 2, false, T0);
    int64_t s1 = hist_append(h, "main", "A", NULL);
    int64_t s2 = hist_append(h, "main", "B", NULL);
    hist_append(h, "main", "C", NULL);
    char **f1 = hist_snapshot_files(h, s1, true); /* list 1, manifest A */
    char **f2 = hist_snapshot_files(h, s2, true); /* list 2, manifest B, manifest A */
    icmt_ok(icm_fileio_delete(io, f2[0]));
    icmt_ok(icm_fileio_write_replace(io, f1[1], "not avro", 8));
    icm_table *t = hist_open_table(h);
    icm__pathset *keep = NULL;
    icmt_ok(icm__pathset_new(&keep, 0));
    icm__reach_options o = {NULL, 0, true, NULL, false, NULL, false, NULL, NULL};
    icm__reach_report rep;
    icmt_ok(icm__keepset_build(io, icm_table_get_metadata(t), &o, keep, &rep));
    assert_int_equal(rep.failure_count, 2);
    assert_true(icm__reach_report_has_failure(&rep, true));
    bool saw_list = false, saw_manifest = false;
    for (size_t i = 0; i < rep.failure_count; i++) {
        if (rep.failures[i].is_manifest_list) {
            saw_list = true;
            assert_string_equal(rep.failures[i].location, f2[0]);
            assert_int_equal(rep.failures[i].code, ICM_ENOTFOUND);
        } else {
            saw_manifest = true;
            assert_string_equal(rep.failures[i].location, f1[1]);
            assert_int_equal(rep.failures[i].code, ICM_EINVALID);
        }
        assert_true(strlen(rep.failures[i].message) > 0);
    }
    assert_true(saw_list && saw_manifest);
    char *c = hist_data_path(h, "C");
    assert_true(has(keep, c)); /* the walk went on */
    assert_true(has(keep, f2[0])); /* a list is kept by name even when unreadable */
    free(c);
    hist_strv_free(f1);
    hist_strv_free(f2);
    icm__reach_report_dispose(&rep);
    icm__pathset_free(keep);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

static void test_v1_embedded_and_branches(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, "/wh/t", 1, true, T0);
    int64_t s1 = hist_append(h, "main", "A", NULL);
    hist_branch(h, "b", s1);
    hist_append(h, "b", "B", NULL);
    hist_delete(h, "main", "A", NULL);
    assert_walk_matches_model(h, io, NULL, 0);
    int64_t one[] = {s1};
    assert_walk_matches_model(h, io, one, 1);
    hist_free(h);
    icm_fileio_free(io);
}

/* A walk that remembers its manifests, then their entries read later: the same live files as a
 * walk with entries, the lists read once. */
static void test_collect_then_entries(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *fault = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&fault, mem));
    hist *h = hist_new(fault, "/wh/t", 1, true, T0); /* v1 embedded manifests too */
    hist_append(h, "main", "A", "B", NULL);
    hist_delete(h, "main", "A", NULL);
    hist_append(h, "main", "C", NULL);
    icm_table *t = hist_open_table(h);
    icm__manifest_refs refs = {NULL, 0, 0};
    icm__reach_options o = {NULL, 0, false, NULL, false, NULL, false, NULL, NULL};
    seen names = {NULL, NULL, 0};
    icm__reach_report rep;
    icmt_ok(icm__reach_walk_collect(fault, icm_table_get_metadata(t), &o, &refs, on_reached,
                                    &names, &rep));
    assert_int_equal(rep.manifests_read, 0);
    assert_int_equal(refs.len, 3); /* m(A,B), m(A deleted, B existing), m(C) */
    icm__reach_report_dispose(&rep);
    seen live = {NULL, NULL, 0};
    icm_fileio_fault_reset(fault);
    icmt_ok(icm__reach_entries(fault, 1, &refs, on_reached, &live, &rep));
    assert_int_equal(rep.manifests_read, 3);
    assert_int_equal(icm_fileio_fault_count(fault, ICM_IO_READ), 3);
    /* A (live in the first manifest), B twice (ADDED, then EXISTING), C */
    assert_int_equal(live.n, 4);
    char *a = hist_data_path(h, "A"), *c = hist_data_path(h, "C");
    assert_true(seen_has(&live, a, NULL));
    assert_true(seen_has(&live, c, NULL));
    free(a);
    free(c);
    icm__reach_report_dispose(&rep);
    seen_free(&names);
    seen_free(&live);
    icm__manifest_refs_dispose(&refs);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(fault);
}

/* ---- walk order: the two passes give what one pass over everything gives ---- */

/* The single-pass oracle, through the public readers: per snapshot its manifest list, then per
 * row a manifest seen for the first time, then that manifest's live entries. */
typedef struct oracle {
    icm_fileio *io;
    seen *out;
    seen manifests;
    size_t announced; /* ADDED + EXISTING counts of the manifests read */
} oracle;

static void seen_push(seen *s, const char *p, int kind)
{
    s->paths = realloc(s->paths, (s->n + 1) * sizeof *s->paths);
    s->kinds = realloc(s->kinds, (s->n + 1) * sizeof *s->kinds);
    s->paths[s->n] = strdup(p);
    s->kinds[s->n++] = kind;
}

static int oracle_entry(const icm_manifest_entry *e, void *payload)
{
    if (e->status != ICM_ENTRY_DELETED)
        seen_push(payload, e->data_file.file_path, ICM__FILE_DATA);
    return 0;
}

static int oracle_manifest(const icm_manifest_file *mf, void *payload)
{
    oracle *o = payload;
    if (seen_has(&o->manifests, mf->manifest_path, NULL))
        return 0;
    seen_push(&o->manifests, mf->manifest_path, ICM__FILE_MANIFEST);
    seen_push(o->out, mf->manifest_path, ICM__FILE_MANIFEST);
    o->announced += (size_t)mf->added_files_count + (size_t)mf->existing_files_count;
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    return icm_manifest_read(o->io, mf, &ro, oracle_entry, o->out);
}

static size_t single_pass(icm_fileio *io, const icm_table_metadata *md, seen *out)
{
    oracle o = {io, out, {NULL, NULL, 0}, 0};
    for (size_t i = 0; i < icm_table_metadata_snapshot_count(md); i++) {
        const icm_snapshot *snap = icm_table_metadata_snapshot_at(md, i);
        seen_push(out, snap->manifest_list, ICM__FILE_MANIFEST_LIST);
        icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
        icmt_ok(icm_manifest_list_read(io, snap->manifest_list, &lo, oracle_manifest, &o));
    }
    seen_free(&o.manifests);
    return o.announced;
}

typedef struct stopper {
    seen got;
    size_t stop_at;
    size_t expected_calls;  /* expect_entries calls */
    size_t expected_before; /* callbacks before that call */
    size_t expected_value;
} stopper;

static void expect_cb(size_t live_entries, void *payload)
{
    stopper *s = payload;
    s->expected_calls++;
    s->expected_before = s->got.n;
    s->expected_value = live_entries;
}

static int stop_after(const icm__reached *f, void *payload)
{
    stopper *s = payload;
    seen_push(&s->got, f->location, (int)f->kind);
    return s->got.n == s->stop_at + 1 ? 77 : 0;
}

/* A v2 table of twelve fast appends F0..F11 in a memory FileIO: 12 lists naming 1..12
 * manifests, far more manifests than the read-ahead window. */
static hist *twelve_appends(icm_fileio **io)
{
    icmt_ok(icm_fileio_mem_new(io));
    hist *h = hist_new(*io, "/wh/t", 2, false, T0);
    char name[16];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "F%d", i);
        hist_append(h, "main", name, NULL);
    }
    return h;
}

/* Twelve appends: 12 lists naming 1..12 manifests, far more manifests than the read-ahead
 * window. The walk's callbacks are exactly the single pass's, in order; a callback that stops
 * at call k gets exactly k+1 calls, the single pass's first k+1, and its value back; the
 * sizing hint comes once, first, with the entries the lists announce for the manifests read. */
static void test_walk_order_and_stop_match_single_pass(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    hist *h = twelve_appends(&io);
    icm_table *t = hist_open_table(h);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    seen want = {NULL, NULL, 0};
    size_t announced = single_pass(io, md, &want);
    assert_int_equal(want.n, 12 + 12 + 12); /* lists, manifests, data files */
    assert_int_equal(announced, 12);

    icm__reach_options o = {NULL, 0, true, NULL, false, expect_cb, false, NULL, NULL};
    for (size_t stop = 0; stop <= want.n; stop++) { /* stop == want.n: never stops */
        stopper s = {{NULL, NULL, 0}, stop, 0, 0, 0};
        icm__reach_report rep;
        int rc = icm__reach_walk(io, md, &o, stop_after, &s, &rep);
        assert_int_equal(rc, stop < want.n ? 77 : 0);
        assert_int_equal(s.got.n, stop < want.n ? stop + 1 : want.n);
        /* the sizing hint: once, before any callback, the lists' announced live entries */
        assert_int_equal(s.expected_calls, 1);
        assert_int_equal(s.expected_before, 0);
        assert_int_equal(s.expected_value, announced);
        for (size_t i = 0; i < s.got.n; i++) {
            assert_string_equal(s.got.paths[i], want.paths[i]);
            assert_int_equal(s.got.kinds[i], want.kinds[i]);
        }
        icm__reach_report_dispose(&rep);
        seen_free(&s.got);
    }
    seen_free(&want);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

/* Failures land in the report in walk order: a manifest first read through snapshot 1 that is
 * broken comes before the missing manifest list of snapshot 3, although every list is read
 * before any manifest. */
static void test_failures_in_walk_order(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, "/wh/t", 2, false, T0);
    int64_t s1 = hist_append(h, "main", "A", NULL);
    hist_append(h, "main", "B", NULL);
    int64_t s3 = hist_append(h, "main", "C", NULL);
    hist_append(h, "main", "D", NULL);
    char **f1 = hist_snapshot_files(h, s1, true); /* list 1, manifest A */
    char **f3 = hist_snapshot_files(h, s3, true);
    icmt_ok(icm_fileio_write_replace(io, f1[1], "not avro", 8));
    icmt_ok(icm_fileio_delete(io, f3[0]));
    icm_table *t = hist_open_table(h);
    icm__reach_options o = {NULL, 0, true, NULL, false, NULL, false, NULL, NULL};
    seen got = {NULL, NULL, 0};
    icm__reach_report rep;
    icmt_ok(icm__reach_walk(io, icm_table_get_metadata(t), &o, on_reached, &got, &rep));
    assert_int_equal(rep.failure_count, 2);
    assert_false(rep.failures[0].is_manifest_list);
    assert_string_equal(rep.failures[0].location, f1[1]);
    assert_int_equal(rep.failures[0].code, ICM_EINVALID);
    assert_true(rep.failures[1].is_manifest_list);
    assert_string_equal(rep.failures[1].location, f3[0]);
    assert_int_equal(rep.failures[1].code, ICM_ENOTFOUND);
    /* each message is its own read's (decoded on the second thread, raised on this one) */
    assert_non_null(strstr(rep.failures[0].message, "not a valid Avro container"));
    icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
    assert_int_equal(icm_manifest_list_read(io, f3[0], &lo, oracle_manifest, NULL), ICM_ENOTFOUND);
    assert_string_equal(rep.failures[1].message, icm_error_last()->message);
    char *d = hist_data_path(h, "D");
    assert_true(seen_has(&got, d, NULL)); /* the walk went on */
    free(d);
    seen_free(&got);
    hist_strv_free(f1);
    hist_strv_free(f3);
    icm__reach_report_dispose(&rep);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

/* ---- list rows passed by their bytes ---- */

typedef struct list_copy {
    icm_manifest_file *rows;
    size_t n;
} list_copy;

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    if (p == NULL)
        return NULL; /* (absent stays absent) */
    uint8_t *c = malloc(n ? n : 1);
    assert_non_null(c);
    if (n > 0)
        memcpy(c, p, n);
    return c;
}

static int copy_row(const icm_manifest_file *mf, void *payload)
{
    list_copy *l = payload;
    l->rows = realloc(l->rows, (l->n + 1) * sizeof *l->rows);
    assert_non_null(l->rows);
    icm_manifest_file *c = &l->rows[l->n++];
    *c = *mf;
    c->manifest_path = strdup(mf->manifest_path);
    c->partitions.data = dup_bytes(mf->partitions.data, mf->partitions.len);
    c->key_metadata.data = dup_bytes(mf->key_metadata.data, mf->key_metadata.len);
    return 0;
}

/* How a list is written again: rows moved or changed, and padded. */
typedef struct list_edit {
    long bump;         /* this row (-1 = none) one added row more: same manifest, other bytes */
    bool swap;         /* the first two rows swapped (the new manifest second) */
    size_t rotate;     /* the first `rotate` rows moved to the end, in their order */
    size_t pad_bytes;  /* every row given key metadata of this many bytes (0 = as it was) */
} list_edit;

static const list_edit NO_EDIT = {-1, false, 0, 0};

/* Write snapshot `s`'s manifest list again: format `fv`, deflate, blocks of `block_bytes`
 * (0 = one), edited as `e` says. */
static void rewrite_list_edited(icm_fileio *io, const icm_snapshot *s, int fv,
                                size_t block_bytes, list_edit e)
{
    list_copy l = {NULL, 0};
    icm_manifest_list_read_options ro = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
    icmt_ok(icm_manifest_list_read(io, s->manifest_list, &ro, copy_row, &l));
    if (e.swap && l.n >= 2) {
        icm_manifest_file first = l.rows[0];
        l.rows[0] = l.rows[1];
        l.rows[1] = first;
    }
    for (size_t r = 0; r < e.rotate && l.n > 0; r++) {
        icm_manifest_file first = l.rows[0];
        memmove(l.rows, l.rows + 1, (l.n - 1) * sizeof *l.rows);
        l.rows[l.n - 1] = first;
    }
    if (e.pad_bytes > 0) {
        /* raw values are encoded Avro: a bytes value of pad_bytes bytes */
        uint8_t *zeros = calloc(1, e.pad_bytes);
        icm__buf enc = ICM__BUF_INIT;
        assert_non_null(zeros);
        icmt_ok(icm__avro_put_bytes(&enc, zeros, e.pad_bytes));
        for (size_t k = 0; k < l.n; k++) {
            free((uint8_t *)l.rows[k].key_metadata.data);
            l.rows[k].key_metadata = (icm_raw){dup_bytes((const uint8_t *)enc.data, enc.len),
                                               enc.len};
        }
        icm__buf_dispose(&enc);
        free(zeros);
    }
    icm_manifest_list_writer_options lo = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    lo.format_version = fv;
    lo.codec = ICM_AVRO_CODEC_DEFLATE;
    lo.compression_level = -1;
    lo.snapshot_id = s->snapshot_id;
    lo.has_parent_snapshot_id = s->has_parent;
    lo.parent_snapshot_id = s->parent_snapshot_id;
    lo.sequence_number = s->sequence_number;
    lo.block_bytes = block_bytes;
    icm_manifest_list_writer *w = NULL;
    icmt_ok(icm_manifest_list_writer_new(&w, &lo));
    for (size_t k = 0; k < l.n; k++) {
        if ((long)k == e.bump)
            l.rows[k].added_rows_count++;
        icmt_ok(icm_manifest_list_writer_add(w, &l.rows[k]));
    }
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_manifest_list_writer_finish(&data, &len, w));
    icm_manifest_list_writer_free(w);
    icmt_ok(icm_fileio_write_replace(io, s->manifest_list, data, len));
    icm_free(data);
    for (size_t k = 0; k < l.n; k++) {
        free((char *)l.rows[k].manifest_path);
        free((uint8_t *)l.rows[k].partitions.data);
        free((uint8_t *)l.rows[k].key_metadata.data);
    }
    free(l.rows);
}

static void rewrite_list(icm_fileio *io, const icm_snapshot *s, int fv, size_t block_bytes,
                         long bump, bool swap)
{
    list_edit e = NO_EDIT;
    e.bump = bump;
    e.swap = swap;
    rewrite_list_edited(io, s, fv, block_bytes, e);
}

/* The twelve-append table's walk reaches exactly what a single pass reaches, in order. */
static void walk_matches_single_pass(icm_fileio *io, const icm_table_metadata *md)
{
    seen want = {NULL, NULL, 0};
    (void)single_pass(io, md, &want);
    assert_int_equal(want.n, 12 + 12 + 12);
    icm__reach_options o = {NULL, 0, true, NULL, false, NULL, false, NULL, NULL};
    seen got = {NULL, NULL, 0};
    icm__reach_report rep;
    icmt_ok(icm__reach_walk(io, md, &o, on_reached, &got, &rep));
    assert_int_equal(rep.failure_count, 0);
    assert_int_equal(got.n, want.n);
    for (size_t i = 0; i < got.n; i++) {
        assert_string_equal(got.paths[i], want.paths[i]);
        assert_int_equal(got.kinds[i], want.kinds[i]);
    }
    icm__reach_report_dispose(&rep);
    seen_free(&got);
    seen_free(&want);
}

static void test_rows_passed_by_bytes_match_single_pass(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    hist *h = twelve_appends(&io);
    icm_table *t = hist_open_table(h);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    assert_int_equal(icm_table_metadata_snapshot_count(md), 12);
    /* List 4 [M4 M3 M2 M1]: M2's row other bytes than in lists 3 and 5 (same path). */
    rewrite_list(io, icm_table_metadata_snapshot_at(md, 3), 2, 0, 2, false);
    /* List 6: a v1 list (another writer schema) between two v2 lists. */
    rewrite_list(io, icm_table_metadata_snapshot_at(md, 5), 1, 0, -1, false);
    /* List 8 [M7 M8 M6 ..]: its first row is list 7's first, the new manifest comes second. */
    rewrite_list(io, icm_table_metadata_snapshot_at(md, 7), 2, 0, -1, true);
    /* Lists 9 and 10: one row per block, then a few rows per block. */
    rewrite_list(io, icm_table_metadata_snapshot_at(md, 8), 2, 1, -1, false);
    rewrite_list(io, icm_table_metadata_snapshot_at(md, 9), 2, 200, -1, false);
    /* List 11: rows in the previous order but the block boundaries of list 10 elsewhere. */
    rewrite_list(io, icm_table_metadata_snapshot_at(md, 10), 2, 120, -1, false);

    walk_matches_single_pass(io, md);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

/* Rows the read-ahead did not inflate (past ICM__AVRO_INFLATE_AHEAD_BYTES: the reader inflates
 * those blocks itself, into a buffer the walk does not keep) have no bytes to be compared with,
 * and rows two places further than expected are found again: the walk still reaches exactly
 * what a single pass reaches. Lists 6 to 9 (6 to 9 rows) each hold 2 MiB of key metadata per
 * row, one row per block, so from the fifth row on their rows lie past the 8 MiB read-ahead
 * budget and lists 7 to 9 are compared with such rows; list 10 moves its first two rows to the
 * end, list 11 its first three. */
static void test_rows_past_read_ahead_and_moved_match_single_pass(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    hist *h = twelve_appends(&io);
    icm_table *t = hist_open_table(h);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    list_edit big = NO_EDIT;
    big.pad_bytes = (size_t)2 << 20;
    for (size_t k = 5; k < 9; k++)
        rewrite_list_edited(io, icm_table_metadata_snapshot_at(md, k), 2, 1, big);
    list_edit moved = NO_EDIT;
    moved.rotate = 2;
    rewrite_list_edited(io, icm_table_metadata_snapshot_at(md, 9), 2, 0, moved);
    moved.rotate = 3;
    rewrite_list_edited(io, icm_table_metadata_snapshot_at(md, 10), 2, 0, moved);

    walk_matches_single_pass(io, md);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pathset_local_forms),
        cmocka_unit_test(test_pathset_growth_and_memory),
        cmocka_unit_test(test_pathset_reserve),
        cmocka_unit_test(test_walk_kinds_and_dv),
        cmocka_unit_test(test_each_manifest_read_once),
        cmocka_unit_test(test_unreadable_reported),
        cmocka_unit_test(test_v1_embedded_and_branches),
        cmocka_unit_test(test_collect_then_entries),
        cmocka_unit_test(test_walk_order_and_stop_match_single_pass),
        cmocka_unit_test(test_failures_in_walk_order),
        cmocka_unit_test(test_rows_passed_by_bytes_match_single_pass),
        cmocka_unit_test(test_rows_past_read_ahead_and_moved_match_single_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
