/*
 * tests/unit/test_reach_walk.c: the reachability walk (maint/reach_walk.c) against a
 * straightforward single-threaded walk over the public readers, on generated histories.
 *
 * The reference reads, for each chosen snapshot in metadata order, its manifest list (or its
 * v1 embedded manifests) with icm_manifest_list_read, and each manifest the first time it is
 * named with icm_manifest_read / icm_manifest_read_v1_embedded, reporting the list, each new
 * manifest and right after it the manifest's live (ADDED, EXISTING) entries, then the chosen
 * snapshots' statistics files. The walk (two passes, lists and manifests read ahead on a second
 * thread, rows skipped by the list-row guesser) must hand its callback exactly that sequence:
 * the same locations, kinds, sizes and first-reaching snapshots, in the same order, and count
 * the same lists, manifests and entries read. Also checked: the walk without entries, a later
 * entries pass over the manifests it collected (icm__reach_entries), and the filtered entries
 * pass expiry uses (icm__reach_entries_filtered: only the paths the filter passes).
 *
 * Histories: format versions 1 (with and without embedded manifests), 2 and 3; fast and merge
 * appends to main, a branch and staged snapshots; deletes, overwrites, position and equality
 * deletes, deletion vectors, manifest rewrites and statistics files; the walk over every
 * snapshot and over random subsets (with ids that name no snapshot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "maint/keepset.h"
#include "testutil.h"
#include "util/strset.h"
#include "util/util.h"

#define T0 INT64_C(1700000000000)

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

/* ---- a sequence of reached files ---- */

typedef struct reached {
    char *location;
    icm__file_kind kind;
    int64_t size_bytes;
    int64_t snapshot_id;
} reached;

typedef struct seq {
    reached *items;
    size_t n, cap;
} seq;

static void seq_push(seq *q, const char *location, icm__file_kind kind, int64_t size,
                     int64_t snapshot_id)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->items = realloc(q->items, q->cap * sizeof *q->items);
        assert_non_null(q->items);
    }
    q->items[q->n++] = (reached){strdup(location), kind, size, snapshot_id};
}

static void seq_free(seq *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->items[i].location);
    free(q->items);
    memset(q, 0, sizeof *q);
}

/* How many of each kind the compared sequences held (the generator reaches every kind). */
static size_t kinds_seen[ICM__FILE_KIND_COUNT];

static void seq_assert_equal(const seq *got, const seq *want)
{
    for (size_t i = 0; i < want->n; i++)
        kinds_seen[want->items[i].kind]++;
    for (size_t i = 0; i < got->n && i < want->n; i++) {
        const reached *g = &got->items[i], *w = &want->items[i];
        if (strcmp(g->location, w->location) != 0 || g->kind != w->kind ||
            g->size_bytes != w->size_bytes || g->snapshot_id != w->snapshot_id)
            print_error("item %zu: got %s kind %d size %lld snapshot %lld, want %s kind %d "
                        "size %lld snapshot %lld\n",
                        i, g->location, (int)g->kind, (long long)g->size_bytes,
                        (long long)g->snapshot_id, w->location, (int)w->kind,
                        (long long)w->size_bytes, (long long)w->snapshot_id);
        assert_string_equal(g->location, w->location);
        assert_int_equal(g->kind, w->kind);
        assert_int_equal(g->size_bytes, w->size_bytes);
        assert_int_equal(g->snapshot_id, w->snapshot_id);
    }
    assert_int_equal(got->n, want->n);
}

static int on_reached(const icm__reached *f, void *payload)
{
    seq_push(payload, f->location, f->kind, f->size_bytes, f->snapshot_id);
    return 0;
}

/* ---- the reference walk ---- */

typedef struct counts {
    size_t lists, manifests, entries;
} counts;

typedef struct ref_walk {
    icm_fileio *io;
    int format_version;
    bool read_entries;
    icm__entry_filter filter; /* NULL: none */
    seq *out;
    seq *entries_only;        /* every live entry also here (NULL: not kept) */
    icm__strset seen;         /* manifest paths as written (the generator spells each one way) */
    counts n;
    int64_t snapshot_id;
} ref_walk;

static icm__file_kind kind_of(const icm_data_file *f)
{
    if (f->content == ICM_FILE_CONTENT_POSITION_DELETES)
        return f->file_format == ICM_FILE_FORMAT_PUFFIN ? ICM__FILE_DELETION_VECTOR
                                                        : ICM__FILE_POSITION_DELETES;
    if (f->content == ICM_FILE_CONTENT_EQUALITY_DELETES)
        return ICM__FILE_EQUALITY_DELETES;
    return ICM__FILE_DATA;
}

static int on_entry(const icm_manifest_entry *e, void *payload)
{
    ref_walk *r = payload;
    r->n.entries++;
    if (e->status == ICM_ENTRY_DELETED)
        return 0;
    const icm_data_file *f = &e->data_file;
    if (r->filter != NULL && !r->filter(f->file_path, f->file_path_len, NULL))
        return 0;
    icm__file_kind kind = r->filter != NULL ? ICM__FILE_DATA : kind_of(f);
    int64_t size = r->filter != NULL ? -1 : f->file_size_in_bytes;
    seq_push(r->out, f->file_path, kind, size, r->snapshot_id);
    return 0;
}

/* A manifest named by a list row (mf) or embedded in a v1 snapshot (mf NULL). */
static void ref_manifest(ref_walk *r, const icm_manifest_file *mf, const char *path)
{
    bool added;
    icmt_ok(icm__strset_add(&r->seen, path, strlen(path), &added));
    if (!added)
        return;
    seq_push(r->out, path, ICM__FILE_MANIFEST, mf != NULL ? mf->manifest_length : -1,
             r->snapshot_id);
    if (!r->read_entries)
        return;
    r->n.manifests++;
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    ro.format_version = mf != NULL ? r->format_version : 1;
    if (mf != NULL)
        icmt_ok(icm_manifest_read(r->io, mf, &ro, on_entry, r));
    else
        icmt_ok(icm_manifest_read_v1_embedded(r->io, path, r->snapshot_id, &ro, on_entry, r));
}

static int on_list_row(const icm_manifest_file *mf, void *payload)
{
    ref_manifest(payload, mf, mf->manifest_path);
    return 0;
}

static bool chosen(const int64_t *ids, size_t n, int64_t id)
{
    if (ids == NULL)
        return true;
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

static counts reference(icm_fileio *io, const icm_table_metadata *md, const int64_t *ids,
                        size_t n_ids, bool read_entries, bool statistics, seq *out)
{
    ref_walk r = {io, icm_table_metadata_format_version(md), read_entries, NULL, out, NULL,
                  ICM__STRSET_INIT, {0, 0, 0}, 0};
    for (size_t i = 0; i < icm_table_metadata_snapshot_count(md); i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (!chosen(ids, n_ids, s->snapshot_id))
            continue;
        r.snapshot_id = s->snapshot_id;
        if (s->manifest_list == NULL) {
            for (size_t k = 0; k < s->manifest_count; k++)
                ref_manifest(&r, NULL, s->manifests[k]);
            continue;
        }
        char *data = NULL;
        size_t len = 0;
        icmt_ok(icm_fileio_read(&data, &len, io, s->manifest_list) < 0 ? -1 : 0);
        icm_free(data);
        seq_push(out, s->manifest_list, ICM__FILE_MANIFEST_LIST, (int64_t)len, s->snapshot_id);
        r.n.lists++;
        icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
        lo.format_version = r.format_version;
        icmt_ok(icm_manifest_list_read(io, s->manifest_list, &lo, on_list_row, &r));
    }
    for (size_t i = 0; statistics && i < icm_table_metadata_statistics_count(md); i++) {
        const icm_statistics_file *f = icm_table_metadata_statistics_at(md, i);
        if (chosen(ids, n_ids, f->snapshot_id))
            seq_push(out, f->path,
                     f->partition_statistics ? ICM__FILE_PARTITION_STATISTICS
                                             : ICM__FILE_STATISTICS,
                     f->file_size_in_bytes, f->snapshot_id);
    }
    icm__strset_dispose(&r.seen);
    return r.n;
}

/* The entries part of a reference sequence: what follows each manifest, up to the next list,
 * manifest or statistics file. */
static void entries_of(const seq *all, seq *out)
{
    for (size_t i = 0; i < all->n; i++) {
        const reached *f = &all->items[i];
        if (f->kind <= ICM__FILE_DELETION_VECTOR)
            seq_push(out, f->location, f->kind, f->size_bytes, f->snapshot_id);
    }
}

/* ---- generated histories ---- */

static char *name(unsigned i)
{
    char buf[32];
    snprintf(buf, sizeof buf, "f%u", i);
    return strdup(buf);
}

/* A random live data file of the branch head ("" when none). */
static char *pick_live(hist *h, uint64_t *s, const char *branch)
{
    int64_t head = hist_head(h, branch);
    if (head < 0)
        return NULL;
    char **live = hist_live_names(h, head, false);
    size_t n = hist_strv_len(live);
    char *out = n > 0 ? strdup(live[next(s) % n]) : NULL;
    hist_strv_free(live);
    return out;
}

static hist *generate(icm_fileio *io, uint64_t seed)
{
    uint64_t s = seed;
    int fv = 1 + (int)(seed % 3);
    hist *h = hist_new(io, "/wh/t", fv, fv == 1 && next(&s) % 2 == 0, T0);
    hist_set_merge_append(h, next(&s) % 3 == 0);
    unsigned id = 0;
    bool have_branch = false;
    size_t ops = 4 + next(&s) % 14;
    for (size_t op = 0; op < ops; op++) {
        const char *branch = have_branch && next(&s) % 4 == 0 ? "b" : "main";
        if (op > 0 && next(&s) % 10 == 0)
            branch = NULL; /* staged */
        unsigned what = (unsigned)(next(&s) % 10);
        char *victim = what >= 3 && branch != NULL ? pick_live(h, &s, branch) : NULL;
        if (what < 3 || victim == NULL) {
            char *a = name(id++), *b = name(id++);
            hist_append(h, branch, a, next(&s) % 2 ? b : NULL, NULL);
            free(a);
            free(b);
        } else if (what == 3) {
            hist_delete(h, branch, victim, NULL);
        } else if (what == 4) {
            char *a = name(id++);
            const char *add[] = {a, NULL}, *del[] = {victim, NULL};
            hist_overwrite(h, branch, add, del);
            free(a);
        } else if (what == 5 && fv >= 2) {
            char *p = name(id++);
            hist_position_delete(h, branch, p, victim);
            free(p);
        } else if (what == 6 && fv >= 2) {
            char *e = name(id++);
            hist_equality_delete(h, branch, e);
            free(e);
        } else if (what == 7 && fv >= 3) {
            char *d = name(id++);
            hist_deletion_vectors(h, branch, d, victim, NULL);
            free(d);
        } else if (what == 8) {
            hist_rewrite_manifests(h, branch);
        } else {
            int64_t head = hist_head(h, "main");
            char *st = name(id++);
            hist_add_statistics(h, head, st, next(&s) % 2 == 0);
            free(st);
            if (!have_branch) {
                hist_branch(h, "b", head);
                have_branch = true;
            }
        }
        free(victim);
    }
    return h;
}

/* Keep the paths whose file name's number is even (a test of the bytes given, in place). */
static bool even_names(const char *location, size_t len, const void *ctx)
{
    (void)ctx;
    size_t i = len;
    while (i > 0 && location[i - 1] != 'f')
        i--;
    return i < len && location[i] >= '0' && location[i] <= '9' &&
           (location[i] - '0') % 2 == 0;
}

static void check_history(uint64_t seed)
{
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = generate(io, seed);
    icm_table *t = hist_open_table(h);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    uint64_t s = seed * 31 + 7;

    size_t n_all = icm_table_metadata_snapshot_count(md);
    int64_t ids[64];
    size_t n_ids = 0;
    bool subset = next(&s) % 2 == 0;
    for (size_t i = 0; subset && i < n_all && n_ids < 62; i++)
        if (next(&s) % 2 == 0)
            ids[n_ids++] = icm_table_metadata_snapshot_at(md, i)->snapshot_id;
    if (subset)
        ids[n_ids++] = INT64_C(4242424242); /* names no snapshot */
    const int64_t *chosen_ids = subset ? ids : NULL;

    for (int pass = 0; pass < 2; pass++) {
        bool read_entries = pass == 0, statistics = next(&s) % 4 != 0;
        seq want = {0}, got = {0};
        counts n = reference(io, md, chosen_ids, n_ids, read_entries, statistics, &want);
        icm__reach_options o = {.snapshot_ids = chosen_ids,
                                .snapshot_id_count = subset ? n_ids : 0,
                                .read_entries = read_entries,
                                .statistics = statistics};
        icm__reach_report rep;
        icm__manifest_refs refs = {0};
        icmt_ok(icm__reach_walk_collect(io, md, &o, &refs, on_reached, &got, &rep));
        seq_assert_equal(&got, &want);
        assert_int_equal(rep.failure_count, 0);
        assert_int_equal(rep.manifest_lists_read, n.lists);
        assert_int_equal(rep.manifests_read, n.manifests);
        assert_int_equal(rep.entries_read, n.entries);
        icm__reach_report_dispose(&rep);

        if (!read_entries) {
            /* the manifests it collected, read later: the entries a walk with them gives */
            seq full = {0}, want_entries = {0}, got_entries = {0};
            counts nf = reference(io, md, chosen_ids, n_ids, true, false, &full);
            entries_of(&full, &want_entries);
            icmt_ok(icm__reach_entries(io, icm_table_metadata_format_version(md), &refs,
                                       on_reached, &got_entries, &rep));
            seq_assert_equal(&got_entries, &want_entries);
            assert_int_equal(rep.manifests_read, nf.manifests);
            assert_int_equal(rep.entries_read, nf.entries);
            icm__reach_report_dispose(&rep);

            /* and filtered, as expiry reads them: the paths the filter passes, nothing else */
            seq filtered = {0}, want_filtered = {0};
            ref_walk r = {io, icm_table_metadata_format_version(md), true, even_names,
                          &want_filtered, NULL, ICM__STRSET_INIT, {0, 0, 0}, 0};
            for (size_t i = 0; i < refs.len; i++) {
                r.snapshot_id = refs.items[i].snapshot_id;
                ref_manifest(&r, refs.items[i].embedded_v1 ? NULL : &refs.items[i].mf,
                             refs.items[i].mf.manifest_path);
            }
            icm__strset_dispose(&r.seen);
            seq only_entries = {0};
            entries_of(&want_filtered, &only_entries);
            icmt_ok(icm__reach_entries_filtered(io, icm_table_metadata_format_version(md),
                                                &refs, even_names, NULL, on_reached, &filtered,
                                                &rep));
            seq_assert_equal(&filtered, &only_entries);
            assert_int_equal(rep.entries_read, nf.entries);
            icm__reach_report_dispose(&rep);
            seq_free(&full);
            seq_free(&want_entries);
            seq_free(&got_entries);
            seq_free(&filtered);
            seq_free(&want_filtered);
            seq_free(&only_entries);
        }
        icm__manifest_refs_dispose(&refs);
        seq_free(&want);
        seq_free(&got);
    }
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

static void test_walk_matches_reference(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 120; seed++)
        check_history(seed);
    for (int k = 0; k < ICM__FILE_KIND_COUNT; k++) {
        if (kinds_seen[k] == 0)
            print_error("no file of kind %d was compared\n", k);
        assert_true(kinds_seen[k] > 0);
    }
}

/* keep_bounds: the entries of the sizes it chooses hand over their bounds' bytes (as the
 * manifest holds them: the history writes one pair, 8 bytes drawn from the name, for field 1),
 * every other entry none; and the choice is asked from the decoding threads with the
 * context given. Files hold their file name (`x.parquet`: 9 bytes, `xx.parquet`: 10). */
typedef struct bounds_seen {
    size_t with, without;
    bool wrong;
} bounds_seen;

static bool of_size(int64_t size_bytes, const void *ctx)
{
    return size_bytes == *(const int64_t *)ctx;
}

static int on_bounded(const icm__reached *f, void *payload)
{
    bounds_seen *b = payload;
    if (f->kind != ICM__FILE_DATA)
        return 0;
    if (f->size_bytes != 10) {
        b->without++;
        b->wrong |= f->lower_bounds.len != 0 || f->upper_bounds.len != 0;
        return 0;
    }
    b->with++;
    /* the history's map: a block of 1, key 1 (zigzag 2), 8 bytes (zigzag 16), the end */
    b->wrong |= f->lower_bounds.len != 12 || f->upper_bounds.len != 12 ||
                memcmp(f->lower_bounds.data, "\x02\x02\x10", 3) != 0 ||
                f->lower_bounds.data[11] != 0 ||
                memcmp(f->lower_bounds.data, f->upper_bounds.data, 12) != 0 || f->bounds == 0;
    return 0;
}

static void test_keep_bounds(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, "/wh/t", 2, false, T0);
    for (int i = 0; i < 12; i++) { /* more manifests than the read-ahead window */
        char a[8], b[8];
        snprintf(a, sizeof a, "%c", 'a' + i);
        snprintf(b, sizeof b, "%c%c", 'a' + i, 'a' + i);
        hist_append(h, "main", a, b, NULL);
    }
    icm_table *t = hist_open_table(h);
    int64_t size = 10;
    icm__reach_options o = {NULL, 0, true, NULL, false, NULL, false, of_size, &size};
    bounds_seen seen = {0, 0, false};
    icm__reach_report rep;
    icmt_ok(icm__reach_walk(io, icm_table_get_metadata(t), &o, on_bounded, &seen, &rep));
    icm__reach_report_dispose(&rep);
    assert_false(seen.wrong);
    assert_true(seen.with >= 12 && seen.without >= 12);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

static int on_nothing(const icm__reached *f, void *payload)
{
    (void)f;
    (void)payload;
    return 0;
}

/* A table of COMMITS appends of FILES data files each ("f-C-IIIII"), then, when `again` is
 * not NULL, that file appended once more; the walk's report over every snapshot into *rep. */
enum { COMMITS = 3, FILES = 6000 };

static void walk_many(const char *again, icm__reach_report *rep)
{
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, "/wh/t", 2, false, T0);
    char **names = calloc(FILES, sizeof *names);
    hist_file *add = calloc(FILES, sizeof *add);
    assert_non_null(names);
    assert_non_null(add);
    for (size_t c = 0; c < COMMITS; c++) {
        for (size_t i = 0; i < FILES; i++) {
            free(names[i]);
            names[i] = icmt_sprintf("f-%zu-%05zu", c, i);
            add[i] = (hist_file){names[i], ICM_FILE_CONTENT_DATA, false, NULL};
        }
        hist_commit_files(h, "main", "append", add, FILES, NULL);
    }
    if (again != NULL)
        hist_append(h, "main", again, NULL);
    icm__reach_options o = {NULL, 0, true, NULL, false, NULL, false, NULL, NULL};
    icm_table *t = hist_open_table(h);
    icmt_ok(icm__reach_walk(io, icm_table_get_metadata(t), &o, on_nothing, NULL, rep));
    icm_table_free(t);
    for (size_t i = 0; i < FILES; i++)
        free(names[i]);
    free(names);
    free(add);
    hist_free(h);
    icm_fileio_free(io);
}

/* The snapshot judgement finds a path named twice among many entries (its hashes sorted by
 * radix, most significant byte first, buckets of more than 31 sorted again by the next byte:
 * 18,000 entries take two levels) wherever the two entries sort, and a healthy table of as
 * many entries has none. */
static void test_repeated_path_among_many_entries(void **state)
{
    (void)state;
    icm__reach_report rep;
    walk_many(NULL, &rep);
    assert_int_equal(rep.failure_count, 0);
    assert_int_equal(rep.entries_read, COMMITS * FILES);
    icm__reach_report_dispose(&rep);
    /* one file of the first commit, or of the last, appended again */
    static const char *const again[] = {"f-0-04321", "f-2-00017", "f-1-05999"};
    for (size_t k = 0; k < 3; k++) {
        walk_many(again[k], &rep);
        char *needle = icmt_sprintf("names /wh/t/data/%s.parquet live twice", again[k]);
        assert_true(rep.failure_count > 0);
        for (size_t i = 0; i < rep.failure_count; i++)
            if (strstr(rep.failures[i].message, needle) == NULL)
                fail_msg("%s: %s", again[k], rep.failures[i].message);
        free(needle);
        icm__reach_report_dispose(&rep);
    }
}

/* Format v1 orders commits by their timestamps. A file deleted and then added again by a
 * commit whose clock runs behind (Java accepts a minute of it) has a live entry that looks
 * added before the commit that deleted it, beside that commit's DELETED entry: the re-add
 * descends from the deletion, so it came after it, and the table is healthy (adversary round
 * 20, R1: the sweep refused it). */
static void test_v1_clock_behind_after_a_delete(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    hist *h = hist_new(io, "/wh/t", 1, false, T0);
    hist_append(h, "main", "F", "G", NULL);
    hist_delete(h, "main", "F", NULL); /* (its manifest: F DELETED, G EXISTING) */
    hist_set_time(h, hist_time(h) - 5000);
    hist_append(h, "main", "F", NULL);
    icm__reach_options o = {NULL, 0, true, NULL, false, NULL, false, NULL, NULL};
    icm__reach_report rep;
    icm_table *t = hist_open_table(h);
    icmt_ok(icm__reach_walk(io, icm_table_get_metadata(t), &o, on_nothing, NULL, &rep));
    assert_int_equal(rep.failure_count, 0);
    icm__reach_report_dispose(&rep);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_matches_reference),
        cmocka_unit_test(test_keep_bounds),
        cmocka_unit_test(test_repeated_path_among_many_entries),
        cmocka_unit_test(test_v1_clock_behind_after_a_delete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
