/*
 * tests/unit/test_verify_twins.c: twins (maint/verify_twins.c, verify.h "twins").
 *
 * A data or delete file planned for deletion is the twin of a retained entry inside the table
 * when that entry records its size and agrees with the file's own entry (file format, bounds,
 * and record count where both know it), and one such entry names a file of other bytes.
 * Each case states which files are kept and asserts the message; the files are written into
 * the in-memory FileIO (behind the fault wrapper where reads must fail).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "icemaint/fileio.h"
#include "icemaint/testing/fileio.h"
#include "maint/verify.h"
#include "parquet_footers.h"
#include "testutil.h"

#define PARQUET ICM_FILE_FORMAT_PARQUET
#define ADDED_BY 7 /* the snapshot that added the entries' files */
#define SPEC_SHAPE 0x5eu /* the entries' partition key shape (icm__partition_key) */
#define TUPLE 0x70u      /* ... and values */
#define ANY_TUPLE {0, 0} /* a planned file's partition key not known */
/* the rest of a planned file's facts: no blob, the snapshot that added it not known */
#define NO_BLOB_NO_ADDER ICM__VERIFY_NO_BLOB, INT64_MIN

static void put(icm_fileio *io, const char *location, size_t size, char fill)
{
    char *b = malloc(size);
    assert_non_null(b);
    memset(b, fill, size);
    icmt_ok(icm_fileio_write_replace(io, location, b, size));
    free(b);
}

static icm__reached entry(const char *location, int64_t size, int64_t rows, uint64_t bounds)
{
    return (icm__reached){location, ICM__FILE_DATA, size, 42, rows, PARQUET, bounds, ADDED_BY,
                          {NULL, 0}, {NULL, 0}, {SPEC_SHAPE, TUPLE}, NULL, 0, 0};
}

/* The verdict for `location` (of `size` bytes, its own entries' n_facts descriptions)
 * against the entries, of the table `table` (NULL: its schemas unknown). */
static char *verdict_in(icm_fileio *io, icm__verify_table *table, const icm__reached *entries,
                        size_t n, const char *location, int64_t size,
                        const icm__verify_twin_facts *facts, size_t n_facts)
{
    icm__verify_refs twins = ICM__VERIFY_REFS_INIT;
    for (size_t i = 0; i < n; i++)
        icmt_ok(icm__verify_refs_add(&twins, &entries[i]));
    icmt_ok(icm__verify_refs_seal(&twins));
    char *why = NULL;
    icmt_ok(icm__verify_twin_of(&twins, io, table, "retained snapshot", location, size, facts,
                                n_facts, &why));
    icm__verify_refs_dispose(&twins);
    return why;
}

static char *verdicts(icm_fileio *io, const icm__reached *entries, size_t n, const char *location,
                      int64_t size, const icm__verify_twin_facts *facts, size_t n_facts)
{
    return verdict_in(io, NULL, entries, n, location, size, facts, n_facts);
}

/* ... with one description (NULL: unknown). */
static char *verdict(icm_fileio *io, const icm__reached *entries, size_t n, const char *location,
                     int64_t size, const icm__verify_twin_facts *facts)
{
    return verdicts(io, entries, n, location, size, facts, facts != NULL ? 1 : 0);
}

/* The entry agrees and the bytes differ: kept, the message naming the entry's file. Another
 * record count, other bounds, another format or another partition tuple: not its entry,
 * deleted. The same bytes, or
 * the file gone: deleted. Another size is never looked at. */
static void test_twin_by_its_entry(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    put(io, "/t/data/named.parquet", 100, 'x'); /* what the damaged entry names */
    put(io, "/t/data/live.parquet", 100, 'y');  /* the file it stood for */
    put(io, "/t/data/copy.parquet", 100, 'x');  /* the same bytes as the named file */
    icm__reached e = entry("/t/data/named.parquet", 100, 5, 0xb0);
    const icm__verify_twin_facts same = {5, 0xb0, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER};

    char *why = verdict(io, &e, 1, "/t/data/live.parquet", 100, &same);
    assert_non_null(why);
    assert_non_null(strstr(why, "not deleted: retained snapshot 42 references "
                                "/t/data/named.parquet, a file of the table whose entry agrees "
                                "with this file's (100 bytes, 5 records, bounds, added by "
                                "snapshot 7), whose bytes "
                                "differ: a damaged manifest entry may have renamed this file's "
                                "reference onto that file"));
    assert_non_null(strstr(why, "so the table may still need this one; kept"));
    free(why);
    const icm__verify_twin_facts rows = {6, 0xb0, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER},
                                 bounds = {5, 0xb1, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER},
                                 orc = {5, 0xb0, ICM_FILE_FORMAT_ORC, ANY_TUPLE, NO_BLOB_NO_ADDER};
    assert_null(verdict(io, &e, 1, "/t/data/live.parquet", 100, &rows));
    assert_null(verdict(io, &e, 1, "/t/data/live.parquet", 100, &orc));
    /* other bounds: the entry may be the file's, added again with other metrics, only when
     * the file's content fits it (test_added_again_with_other_metrics); this one is no
     * Parquet file */
    assert_null(verdict(io, &e, 1, "/t/data/live.parquet", 100, &bounds));
    /* an entry added by another commit stands for it too (a file published from an audit
     * branch, or added again, has entries of two commits: adversary round 14, F1): the
     * adding snapshot is named, never compared */
    icm__reached other_commit = e;
    other_commit.added_snapshot_id = ADDED_BY + 1;
    why = verdict(io, &other_commit, 1, "/t/data/live.parquet", 100, &same);
    assert_non_null(why);
    assert_non_null(strstr(why, "(100 bytes, 5 records, bounds, added by snapshot 8)"));
    free(why);
    icm__reached unknown_entry = e;
    unknown_entry.added_snapshot_id = INT64_MIN;
    why = verdict(io, &unknown_entry, 1, "/t/data/live.parquet", 100, &same);
    assert_non_null(why);
    assert_non_null(strstr(why, "(100 bytes, 5 records, bounds), whose bytes differ"));
    free(why);
    assert_null(verdict(io, &e, 1, "/t/data/copy.parquet", 100, &same));
    assert_null(verdict(io, &e, 1, "/t/data/gone.parquet", 100, &same));
    assert_null(verdict(io, &e, 1, "/t/data/live.parquet", 101, &same));
    /* a record count one side does not know cannot tell them apart: kept; bounds on one
     * side only are two commits' metrics, judged by the content (no Parquet file here) */
    const icm__verify_twin_facts uncounted = {-1, 0xb0, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER},
                                 unbounded = {5, 0, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER};
    why = verdict(io, &e, 1, "/t/data/live.parquet", 100, &uncounted);
    assert_non_null(why);
    free(why);
    assert_null(verdict(io, &e, 1, "/t/data/live.parquet", 100, &unbounded));
    why = verdict(io, &e, 1, "/t/data/live.parquet", 100, NULL);
    assert_non_null(why);
    free(why);
    /* the partition tuple: another value of the same spec and type is another file's entry
     * (two files of one commit in two partitions: adversary round 14, F5); the same tuple
     * agrees; another shape (spec or type) or an unknown one cannot tell them apart */
    const icm__verify_twin_facts
        other_tuple = {5, 0xb0, PARQUET, {SPEC_SHAPE, TUPLE + 1}, NO_BLOB_NO_ADDER},
        same_tuple = {5, 0xb0, PARQUET, {SPEC_SHAPE, TUPLE}, NO_BLOB_NO_ADDER},
        other_spec = {5, 0xb0, PARQUET, {SPEC_SHAPE + 2, TUPLE + 1}, NO_BLOB_NO_ADDER};
    assert_null(verdict(io, &e, 1, "/t/data/live.parquet", 100, &other_tuple));
    const icm__verify_twin_facts *held[] = {&same_tuple, &other_spec};
    for (size_t k = 0; k < 2; k++) {
        why = verdict(io, &e, 1, "/t/data/live.parquet", 100, held[k]);
        assert_non_null(why);
        free(why);
    }
    icm__reached untold = e;
    untold.partition = (icm__partition_key){0, 0};
    why = verdict(io, &untold, 1, "/t/data/live.parquet", 100, &other_tuple);
    assert_non_null(why);
    free(why);
    /* a Puffin file: its entries each describe one deletion vector (their own count, bounds
     * and partition), so an entry of its size and format agrees whatever those say
     * (adversary round 15, F1, F2); a Parquet entry does not */
    put(io, "/t/data/dv.puffin", 100, 'p');
    icm__reached vector = e;
    vector.file_format = ICM_FILE_FORMAT_PUFFIN;
    const icm__verify_twin_facts puffin = {2, 0xc0, ICM_FILE_FORMAT_PUFFIN,
                                           {SPEC_SHAPE, TUPLE + 1}, NO_BLOB_NO_ADDER};
    why = verdict(io, &vector, 1, "/t/data/dv.puffin", 100, &puffin);
    assert_non_null(why);
    free(why);
    assert_null(verdict(io, &e, 1, "/t/data/dv.puffin", 100, &puffin));
    /* the entry naming the planned file itself is not its twin */
    icm__reached self = entry("/t/data/live.parquet", 100, 5, 0xb0);
    assert_null(verdict(io, &self, 1, "/t/data/live.parquet", 100, &same));
    icm_fileio_free(io);
}

/* Several entries of one size: only the agreeing ones count. Any of them naming a file of
 * other bytes keeps the file, even when another names a file of its bytes (adversary round
 * 13, F2: the first may be the damaged one); the first such is named. Deleted when every
 * agreeing entry names a file of its bytes. */
static void test_several_entries_of_one_size(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    put(io, "/t/data/a.parquet", 64, 'a');
    put(io, "/t/data/b.parquet", 64, 'b');
    put(io, "/t/data/c.parquet", 64, 'c');
    put(io, "/t/data/cand.parquet", 64, 'c');
    put(io, "/t/data/other.parquet", 64, 'z');
    put(io, "/t/data/b-bytes.parquet", 64, 'b');
    icm__reached es[] = {entry("/t/data/c.parquet", 64, 3, 7), entry("/t/data/b.parquet", 64, 2, 7),
                         entry("/t/data/a.parquet", 64, 3, 7)};
    const icm__verify_twin_facts f = {3, 7, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER};
    /* c has its bytes, a does not: kept, naming a */
    char *why = verdict(io, es, 3, "/t/data/cand.parquet", 64, &f);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/a.parquet,"));
    assert_non_null(strstr(why, "whose bytes differ"));
    free(why);
    /* a's entry names a file of its bytes too: deleted */
    icm__reached copies[] = {es[0], es[1], entry("/t/data/cand-copy.parquet", 64, 3, 7)};
    put(io, "/t/data/cand-copy.parquet", 64, 'c');
    assert_null(verdict(io, copies, 3, "/t/data/cand.parquet", 64, &f));
    why = verdict(io, es, 3, "/t/data/other.parquet", 64, &f);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/a.parquet,"));
    free(why);
    /* b's bytes, but b's entry does not agree (2 records): a and c differ, so kept */
    why = verdict(io, es, 3, "/t/data/b-bytes.parquet", 64, &f);
    assert_non_null(why);
    free(why);
    icm_fileio_free(io);
}

/* A Parquet file of `size` bytes at `location` holding ids [lo, hi] and strings [s_lo, s_hi]
 * in `rows` rows (its footer's statistics), the rest `fill`. */
static void put_parquet(icm_fileio *io, const char *location, size_t size, char fill,
                        int64_t rows, int64_t lo, int64_t hi, const char *s_lo, const char *s_hi)
{
    uint8_t a[8], b[8], fb[ICMT_FOOTER_MAX], file[512];
    icmt_chunk rg[] = {{icmt_le64(lo, a), icmt_le64(hi, b), 8, 8, false},
                       {s_lo, s_hi, strlen(s_lo), strlen(s_hi), false}};
    size_t len = icmt_parquet_footer(fb, ICMT_ID_AND_S, 2, rows, 1, rg);
    assert_true(size <= sizeof file);
    icmt_parquet_file(file, size, (uint8_t)fill, fb, len);
    icmt_ok(icm_fileio_write_replace(io, location, file, size));
}

/* A file deleted and added again from its path by another commit has an entry with that
 * commit's metrics (none, counts, truncate(N), full), which none of its expired entries has
 * (adversary round 19, L2: that entry damaged onto a file of its size let it go). An entry
 * that agrees on format, record count and partition and whose bounds the file's own footer
 * fits stands for it (kept when the file it names has other bytes); one whose bounds the file
 * does not fit, or of another count or partition, does not. */
static void test_added_again_with_other_metrics(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *io = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    /* the planned file (ids 1..2) and the file the damaged entry names (ids 5..6) */
    put_parquet(io, "/t/data/live.parquet", 300, 'y', 2, 1, 2, "apple", "pear");
    put_parquet(io, "/t/data/named.parquet", 300, 'x', 2, 5, 6, "kiwi", "plum");
    /* the planned file's own (expired) entry: truncate bounds, digest 0xf1 */
    const icm__verify_twin_facts own = {2, 0xf1, PARQUET, {SPEC_SHAPE, TUPLE},
                                        NO_BLOB_NO_ADDER};
    icmt_entry_bounds of_live, of_named;
    icmt_entry_bounds_of(&of_live, 1, 2, "apple", "pear");
    icmt_entry_bounds_of(&of_named, 5, 6, "kiwi", "plum");

    /* added again under metrics none: the count alone, which the file fits: kept */
    icm__reached none = entry("/t/data/named.parquet", 300, 2, 0);
    char *why = verdict(io, &none, 1, "/t/data/live.parquet", 300, &own);
    assert_non_null(why);
    assert_non_null(strstr(why, "not deleted: retained snapshot 42 references "
                                "/t/data/named.parquet, a file of the table whose entry "
                                "describes this file's content, though unlike this file's own "
                                "entries (the file may have been added again from its path "
                                "with other metrics) (300 bytes, 2 records, added by snapshot "
                                "7), whose bytes differ: a damaged manifest entry may have "
                                "renamed this file's reference onto that file"));
    free(why);
    /* ... under full metrics, bounds of this file's values: kept */
    icm__reached full = entry("/t/data/named.parquet", 300, 2, 0xf2);
    full.lower_bounds = of_live.lower;
    full.upper_bounds = of_live.upper;
    why = verdict(io, &full, 1, "/t/data/live.parquet", 300, &own);
    assert_non_null(why);
    assert_non_null(strstr(why, "(300 bytes, 2 records, bounds, added by snapshot 7), whose "
                                "bytes differ"));
    free(why);
    /* the healthy entry of the named file: its bounds leave this file's values out: deleted */
    icm__reached healthy = entry("/t/data/named.parquet", 300, 2, 0xf3);
    healthy.lower_bounds = of_named.lower;
    healthy.upper_bounds = of_named.upper;
    assert_null(verdict(io, &healthy, 1, "/t/data/live.parquet", 300, &own));
    /* ... unless one of the file's own entries describes it so (two descriptions: agreed) */
    const icm__verify_twin_facts both[] = {own, {2, 0xf3, PARQUET, {SPEC_SHAPE, TUPLE},
                                                 NO_BLOB_NO_ADDER}};
    why = verdicts(io, &healthy, 1, "/t/data/live.parquet", 300, both, 2);
    assert_non_null(why);
    assert_non_null(strstr(why, "whose entry agrees with this file's (300 bytes"));
    free(why);
    /* what the metrics do not change tells them apart: another record count (the footer is
     * then not read); and a file that is no Parquet file (no magic) is not what a Parquet
     * entry of other metrics describes */
    icm__reached three = entry("/t/data/named.parquet", 300, 3, 0);
    assert_null(verdict(io, &three, 1, "/t/data/live.parquet", 300, &own));
    put(io, "/t/data/garbage.parquet", 300, 'g');
    assert_null(verdict(io, &none, 1, "/t/data/garbage.parquet", 300, &own));
    /* a Parquet file the reader refuses (past one of its limits, or a footer it cannot
     * decode: its magic is there) cannot be judged: kept (adversary round 20, D3) */
    uint8_t odd[300];
    icmt_parquet_file(odd, sizeof odd, 'q', (const uint8_t *)"\xff\xff\xff\xff", 4);
    icmt_ok(icm_fileio_write_replace(io, "/t/data/odd.parquet", odd, sizeof odd));
    why = verdict(io, &none, 1, "/t/data/odd.parquet", 300, &own);
    assert_non_null(why);
    assert_non_null(strstr(why, "describes this file's content"));
    free(why);
    /* another partition tuple of the spec tells them apart (two files of one commit in two
     * partitions: adversary round 14, F5); one with a null value does not: a writer that adds
     * a file infers it from the metrics (PyIceberg's add_files records null under metrics
     * none: adversary round 20, D2) */
    icm__reached elsewhere = none;
    elsewhere.partition.values = TUPLE + 1;
    assert_null(verdict(io, &elsewhere, 1, "/t/data/live.parquet", 300, &own));
    elsewhere.partition.shape = SPEC_SHAPE | 1;
    why = verdict(io, &elsewhere, 1, "/t/data/live.parquet", 300, &own);
    assert_non_null(why);
    free(why);
    /* ... on either side (the file's own tuple holds a null: adversary round 21, D1) */
    icm__verify_twin_facts own_null = own;
    own_null.partition = (icm__partition_key){SPEC_SHAPE | 1, TUPLE + 7};
    why = verdict(io, &elsewhere, 1, "/t/data/live.parquet", 300, &own_null);
    assert_non_null(why);
    free(why);
    /* an entry of the commit that added the file's own is another file's (one commit adds a
     * path once): two files of one commit, one null-partitioned (round 21, H1) */
    icm__verify_twin_facts own_by_7 = own_null;
    own_by_7.added_snapshot_id = ADDED_BY;
    assert_null(verdict(io, &elsewhere, 1, "/t/data/live.parquet", 300, &own_by_7));
    assert_null(verdict(io, &none, 1, "/t/data/live.parquet", 300, &own_by_7));
    /* a footer's row count against the entry's: the file holds 2 rows, an entry of 2 whose
     * file's own description says 3 is the file's only if the content says 2 */
    put_parquet(io, "/t/data/three-rows.parquet", 300, 'y', 3, 1, 2, "apple", "pear");
    assert_null(verdict(io, &none, 1, "/t/data/three-rows.parquet", 300,
                        &(icm__verify_twin_facts){-1, 0xf1, PARQUET, {SPEC_SHAPE, TUPLE},
                                                  NO_BLOB_NO_ADDER}));
    /* a file of another format cannot be read for its content: kept */
    icm__reached orc_entry = none;
    orc_entry.file_format = ICM_FILE_FORMAT_ORC;
    const icm__verify_twin_facts orc = {2, 0xf1, ICM_FILE_FORMAT_ORC, {SPEC_SHAPE, TUPLE},
                                        NO_BLOB_NO_ADDER};
    why = verdict(io, &orc_entry, 1, "/t/data/live.parquet", 300, &orc);
    assert_non_null(why);
    free(why);
    /* a footer that cannot be read (here: the stat fails) counts against deleting: kept */
    icm_fileio_fault_fail_span(io, ICM_IO_STAT, 1, 1, ICM_EIO, 0);
    why = verdict(io, &none, 1, "/t/data/live.parquet", 300, &own);
    assert_non_null(why);
    assert_non_null(strstr(why, "describes this file's content"));
    free(why);
    /* the same bytes at the named path: deleted; the file gone: deleted */
    put_parquet(io, "/t/data/copy.parquet", 300, 'y', 2, 1, 2, "apple", "pear");
    icm__reached copy = none;
    copy.location = "/t/data/copy.parquet";
    assert_null(verdict(io, &copy, 1, "/t/data/live.parquet", 300, &own));
    assert_null(verdict(io, &none, 1, "/t/data/gone.parquet", 300, &own));
    icm_fileio_free(io);
}

/* A file with field ids added again by a writer that maps its statistics by the table's
 * column names (PyIceberg's add_files) after two columns swapped names: its entry's bounds of
 * field 1 are those of the column now named as field 1, the file's field 2 (adversary round
 * 20, D1). By its own ids the file does not fit that entry; by its names under the adding
 * snapshot's schema it does: kept. Without the adding snapshot, each of the table's schemas
 * is tried. */
static void test_added_again_by_names(void **state)
{
    (void)state;
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    /* the planned file: a (id 1) holds 1..2, b (id 2) 1001..1002 */
    static const icmt_leaf ab[] = {{"a", 2, -1, 1}, {"b", 2, -1, 2}};
    uint8_t v[4][8], fb[ICMT_FOOTER_MAX], file[300];
    icmt_chunk rg[] = {{icmt_le64(1, v[0]), icmt_le64(2, v[1]), 8, 8, false},
                       {icmt_le64(1001, v[2]), icmt_le64(1002, v[3]), 8, 8, false}};
    icmt_parquet_file(file, sizeof file, 'y', fb, icmt_parquet_footer(fb, ab, 2, 2, 1, rg));
    icmt_ok(icm_fileio_write_replace(io, "/t/data/live.parquet", file, sizeof file));
    put(io, "/t/data/named.parquet", 300, 'x'); /* (no Parquet file, until below) */
    /* the re-add's entry, written after the swap (schema 1: field 1 is b, field 2 is a) */
    static const int32_t keys[] = {1, 2};
    uint8_t w[4][8];
    const void *lo[] = {icmt_le64(1001, w[0]), icmt_le64(1, w[1])},
               *hi[] = {icmt_le64(1002, w[2]), icmt_le64(2, w[3])};
    const size_t lens[] = {8, 8};
    icmt_bounds lower, upper;
    icm__reached readd = entry("/t/data/named.parquet", 300, 2, 0xe1);
    readd.lower_bounds = icmt_bounds_map(&lower, 2, keys, lo, lens);
    readd.upper_bounds = icmt_bounds_map(&upper, 2, keys, hi, lens);
    const icm__verify_twin_facts own = {2, 0xe0, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER};
    /* without the table's schemas (the adding one gone: adversary round 22, D1), its row
     * count describes it: kept while the file the entry names fits the entry in no way (here
     * no Parquet file), deleted once it does (a healthy entry of that file) */
    char *held = verdict(io, &readd, 1, "/t/data/live.parquet", 300, &own);
    assert_non_null(held);
    free(held);
    uint8_t u[4][8];
    icmt_chunk named_rg[] = {{icmt_le64(1001, u[0]), icmt_le64(1002, u[1]), 8, 8, false},
                             {icmt_le64(1, u[2]), icmt_le64(2, u[3]), 8, 8, false}};
    /* a Parquet file of 2 rows whose columns share no id with the entry's bounds fits it on
     * its row count alone, which says nothing: kept (adversary round 23, D1) */
    static const icmt_leaf other_ids[] = {{"x", 2, -1, 7}, {"y", 2, -1, 8}};
    icmt_parquet_file(file, sizeof file, 'x', fb,
                      icmt_parquet_footer(fb, other_ids, 2, 2, 1, named_rg));
    icmt_ok(icm_fileio_write_replace(io, "/t/data/named.parquet", file, sizeof file));
    held = verdict(io, &readd, 1, "/t/data/live.parquet", 300, &own);
    assert_non_null(held);
    free(held);
    icmt_parquet_file(file, sizeof file, 'x', fb, icmt_parquet_footer(fb, ab, 2, 2, 1, named_rg));
    icmt_ok(icm_fileio_write_replace(io, "/t/data/named.parquet", file, sizeof file));
    assert_null(verdict(io, &readd, 1, "/t/data/live.parquet", 300, &own));
    static const char json[] =
        "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
        "\"location\":\"/t\",\"last-sequence-number\":1,\"last-updated-ms\":1,"
        "\"last-column-id\":2,\"current-schema-id\":1,\"schemas\":["
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"a\",\"required\":false,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"b\",\"required\":false,\"type\":\"long\"}]},"
        "{\"type\":\"struct\",\"schema-id\":1,\"fields\":["
        "{\"id\":1,\"name\":\"b\",\"required\":false,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"a\",\"required\":false,\"type\":\"long\"}]}],"
        "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"last-partition-id\":999,\"default-sort-order-id\":0,"
        "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{},"
        "\"current-snapshot-id\":7,\"refs\":{\"main\":{\"snapshot-id\":7,\"type\":\"branch\"}},"
        "\"snapshots\":[{\"snapshot-id\":7,\"sequence-number\":1,\"timestamp-ms\":1,"
        "\"manifest-list\":\"/t/metadata/snap-7.avro\",%s"
        "\"summary\":{\"operation\":\"append\"}}],\"snapshot-log\":[],\"metadata-log\":[]}";
    /* the named file fitting the entry by its ids from here on: the adding snapshot (7)
     * under schema 1, the swapped one: kept; under schema 0, the names say what the ids do:
     * deleted; the adding snapshot without a schema id: each of the table's schemas, kept */
    static const char *const schema_of_7[] = {"\"schema-id\":1,", "\"schema-id\":0,", ""};
    for (size_t k = 0; k < 3; k++) {
        char *text = icmt_sprintf(json, schema_of_7[k]);
        icm_table_metadata *md = NULL;
        icmt_ok(icm_table_metadata_parse(&md, text, strlen(text), "test.metadata.json"));
        icm__verify_table table = {md, ICM__VERIFY_SCHEMAS_INIT};
        char *why = verdict_in(io, &table, &readd, 1, "/t/data/live.parquet", 300, &own, 1);
        if (k == 1) {
            assert_null(why);
        } else {
            assert_non_null(why);
            assert_non_null(strstr(why, "describes this file's content"));
        }
        free(why);
        icm__verify_schemas_dispose(&table.schemas);
        icm_table_metadata_free(md);
        free(text);
    }
    icm_fileio_free(io);
}

/* Many agreeing entries: at most 16 files are compared; one left uncompared keeps the file
 * whatever the others hold, so past 16 none is read (a table of many equal files would read
 * 16 whole files for each planned one): kept, the message naming the first and counting the
 * rest, unless the file is gone. Sixteen or fewer are compared: kept when one differs, deleted
 * when all have its bytes. A file several entries name counts once. */
static void test_comparisons_are_bounded(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *io = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    enum { N = 20 };
    icm__reached es[N + 1];
    char *names[N];
    for (int i = 0; i < N; i++) {
        names[i] = icmt_sprintf("/t/data/f-%02d.parquet", i);
        put(io, names[i], 80, 'a');
        es[i] = entry(names[i], 80, 4, 9);
    }
    const icm__verify_twin_facts f = {4, 9, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER};
    put(io, "/t/data/cand.parquet", 80, 'a'); /* every one's bytes */
    uint64_t reads = icm_fileio_fault_count(io, ICM_IO_READ);
    char *why = verdict(io, es, N, "/t/data/cand.parquet", 80, &f);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/f-00.parquet, a file of the table whose "
                                "entry agrees with this file's (80 bytes, 4 records, bounds, "
                                "added by snapshot 7), "
                                "not compared (too many files of that size): a damaged"));
    free(why);
    assert_int_equal(icm_fileio_fault_count(io, ICM_IO_READ), reads); /* none read */
    assert_null(verdict(io, es, N, "/t/data/gone.parquet", 80, &f));
    /* 17 entries, two of one file: 16 files, all of its bytes: compared, deleted */
    es[16] = es[15];
    assert_null(verdict(io, es, 17, "/t/data/cand.parquet", 80, &f));
    es[16] = entry(names[16], 80, 4, 9);
    assert_null(verdict(io, es, 16, "/t/data/cand.parquet", 80, &f));
    why = verdict(io, es, 17, "/t/data/cand.parquet", 80, &f);
    assert_non_null(why);
    assert_non_null(strstr(why, "not compared (too many files of that size)"));
    free(why);
    /* sixteen, one of other bytes: kept, naming it */
    put(io, names[9], 80, 'z');
    why = verdict(io, es, 16, "/t/data/cand.parquet", 80, &f);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/f-09.parquet,"));
    assert_non_null(strstr(why, "whose bytes differ"));
    free(why);
    for (int i = 0; i < N; i++)
        free(names[i]);
    icm_fileio_free(io);
}

/* Files larger than a comparison block: a difference in the last block is found; a file that
 * cannot be read is kept, the message saying so. */
static void test_blocks_and_unreadable_files(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *io = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    size_t size = (3u << 20) + 17;
    put(mem, "/t/data/named.parquet", size, 'q');
    put(mem, "/t/data/same.parquet", size, 'q');
    char *b = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&b, &len, mem, "/t/data/same.parquet"));
    b[size - 1] = 'Z';
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/late.parquet", b, size));
    icm_free(b);
    icm__reached e = entry("/t/data/named.parquet", (int64_t)size, 9, 1);
    const icm__verify_twin_facts f = {9, 1, PARQUET, ANY_TUPLE, NO_BLOB_NO_ADDER};
    assert_null(verdict(io, &e, 1, "/t/data/same.parquet", (int64_t)size, &f));
    char *why = verdict(io, &e, 1, "/t/data/late.parquet", (int64_t)size, &f);
    assert_non_null(why);
    assert_non_null(strstr(why, "whose bytes differ"));
    free(why);
    icm_fileio_fault_fail_span(io, ICM_IO_READ, 1, 1000000, ICM_EIO, 0);
    why = verdict(io, &e, 1, "/t/data/same.parquet", (int64_t)size, &f);
    assert_non_null(why);
    assert_non_null(strstr(why, "and the two could not be compared"));
    free(why);
    icm_fileio_free(io);
}

/* A retained Puffin entry naming another file of the planned Puffin file's size stands for it
 * only when the planned file's footer lists the blob the entry names (offset, length, data
 * file by location identity, cardinality), and the footer is trusted to say so only when it
 * lists the blob of the file's own entry; then the files are compared (adversary round 15,
 * F3: a DV replaced by one of its size was kept; round 17, F1: a sibling holding the same
 * vector bytes at that place is another file; F2: a footer that disagrees with its own entry
 * says nothing). */
static void test_deletion_vector_blobs(void **state)
{
    (void)state;
    icm_fileio *mem = NULL, *io = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icmt_ok(icm_fileio_fault_new(&io, mem));
    /* the planned file: the vectors of two data files (3 and 5 rows); the retained file of its
     * size: a later vector of the first (4 rows) beside the same vector of the second */
    const icmt_puffin_blob planned[] = {{"vector-A-three", 14, "/t/data/a.parquet", 3},
                                        {"vector-B-five!", 14, "/t/data/b.parquet", 5}};
    const icmt_puffin_blob retained[] = {{"vector-A-four!", 14, "/t/data/a.parquet", 4},
                                         {"vector-B-five!", 14, "/t/data/b.parquet", 5}};
    size_t len = 0, rlen = 0;
    char *p = icmt_puffin(planned, 2, &len), *r = icmt_puffin(retained, 2, &rlen);
    assert_int_equal(len, rlen);
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/old.puffin", p, len));
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/new.puffin", r, rlen));
    int64_t size = (int64_t)len;
    /* the planned file's own (expired) entry: A's vector, 3 rows at 4 */
    uint64_t a_file = 0;
    icmt_ok(icm__verify_referenced_digest("/t/data/a.parquet", &a_file));
    const icm__verify_twin_facts dv = {-1, 0, ICM_FILE_FORMAT_PUFFIN, ANY_TUPLE,
                                       {4, 14, 3, a_file}, INT64_MIN};
    icm__reached a = entry("/t/data/new.puffin", size, 4, 0);
    a.file_format = ICM_FILE_FORMAT_PUFFIN;
    a.referenced_data_file = "/t/data/a.parquet";
    a.content_offset = 4;
    a.content_size_bytes = 14;
    /* the healthy table: the entry of A's later vector (4 rows) names no blob of the planned
     * file (its blob there has 3): deleted */
    assert_null(verdict(io, &a, 1, "/t/data/old.puffin", size, &dv));
    /* B's entry names a blob the planned file lists too (the same vector, at the same place):
     * the files are compared, and differ: kept */
    icm__reached b = a;
    b.referenced_data_file = "/t/data/b.parquet";
    b.record_count = 5;
    b.content_offset = 18;
    char *why = verdict(io, &b, 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    assert_non_null(strstr(why, ") and names a blob this file holds (14 bytes at 18), whose "
                                "bytes differ: a damaged manifest entry may have renamed"));
    free(why);
    /* A's entry damaged: it says 3 rows, as the planned file's blob (one field of it changed
     * is its path, onto the retained file): kept, the blob named */
    icm__reached damaged = a;
    damaged.record_count = 3;
    why = verdict(io, &damaged, 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/new.puffin, a file of the table whose entry "
                                "agrees with this file's ("));
    assert_non_null(strstr(why, ") and names a blob this file holds (14 bytes at 4), whose "
                                "bytes differ"));
    free(why);
    /* the blob's data file told by location identity: another spelling of it is it; another
     * file is not; an entry or blob that does not say cannot be told apart */
    icm__reached spelled = damaged;
    spelled.referenced_data_file = "file:///t/data/./a.parquet";
    why = verdict(io, &spelled, 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    free(why);
    icm__reached other_file = damaged;
    other_file.referenced_data_file = "/t/data/c.parquet";
    assert_null(verdict(io, &other_file, 1, "/t/data/old.puffin", size, &dv));
    icm__reached unsaid = damaged;
    unsaid.referenced_data_file = NULL;
    unsaid.record_count = -1;
    why = verdict(io, &unsaid, 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    free(why);
    /* past 16 other Puffin files of its size naming no blob of it, the damaged entry is
     * still judged (their count says nothing: the footer passes over them) */
    enum { MANY = 20 };
    icm__reached others[MANY + 1];
    char *other_names[MANY];
    for (int i = 0; i < MANY; i++) {
        other_names[i] = icmt_sprintf("/t/data/other-%02d.puffin", i);
        icmt_ok(icm_fileio_write_replace(mem, other_names[i], r, rlen));
        others[i] = a;
        others[i].location = other_names[i];
        others[i].record_count = 2; /* (sorted before the damaged one; no blob of it) */
    }
    others[MANY] = damaged;
    why = verdict(io, others, MANY + 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    assert_non_null(strstr(why, "references /t/data/new.puffin,"));
    free(why);
    for (int i = 0; i < MANY; i++)
        free(other_names[i]);
    /* another offset or length: no blob of the planned file */
    icm__reached moved = damaged;
    moved.content_offset = 5;
    assert_null(verdict(io, &moved, 1, "/t/data/old.puffin", size, &dv));
    moved = damaged;
    moved.content_size_bytes = 13;
    assert_null(verdict(io, &moved, 1, "/t/data/old.puffin", size, &dv));
    /* a footer that does not list the blob of the file's own entry (another data file,
     * cardinality, place; or the own entry's blob unknown) says nothing: every Puffin entry
     * of its size stands for the file, A's later vector too */
    struct icm__verify_own_blob untrusted[] = {{4, 14, 3, a_file + 1}, {4, 14, 2, a_file},
                                               {5, 14, 3, a_file}, {0, 0, -1, 0}};
    for (size_t k = 0; k < sizeof untrusted / sizeof untrusted[0]; k++) {
        icm__verify_twin_facts doubted = dv;
        doubted.own_blob = untrusted[k];
        why = verdict(io, &a, 1, "/t/data/old.puffin", size, &doubted);
        assert_non_null(why);
        assert_non_null(strstr(why, "), whose bytes differ"));
        free(why);
    }
    /* an entry without a blob's place (not a v3 deletion vector's): the files are compared,
     * and these differ */
    icm__reached placeless = a;
    placeless.content_offset = placeless.content_size_bytes = 0;
    why = verdict(io, &placeless, 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    assert_non_null(strstr(why, "), whose bytes differ"));
    free(why);
    /* a planned file whose footer cannot be read is kept; one gone is not */
    char *bad = malloc(len);
    memcpy(bad, p, len);
    bad[len - 1] = 'X';
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/bad.puffin", bad, len));
    why = verdict(io, &damaged, 1, "/t/data/bad.puffin", size, &dv);
    assert_non_null(why);
    assert_non_null(strstr(why, "and this file's Puffin footer cannot be read"));
    free(why);
    assert_null(verdict(io, &damaged, 1, "/t/data/gone.puffin", size, &dv));
    /* a read that fails: kept */
    icm_fileio_fault_fail_span(io, ICM_IO_READ, 1, 1000000, ICM_EIO, 0);
    why = verdict(io, &damaged, 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    assert_non_null(strstr(why, "and this file's Puffin footer cannot be read"));
    free(why);
    icm_fileio_fault_reset(io);
    /* a sibling holding the same vector bytes where the entry says, for another data file:
     * another file, kept (round 17, F1); a byte-identical copy: deleted */
    const icmt_puffin_blob sibling[] = {{"vector-A-three", 14, "/t/data/a.parquet", 3},
                                        {"vector-C-five!", 14, "/t/data/c.parquet", 5}};
    char *c = icmt_puffin(sibling, 2, &rlen);
    assert_int_equal(rlen, len);
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/new.puffin", c, rlen));
    why = verdict(io, &damaged, 1, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    free(why);
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/new.puffin", p, len));
    assert_null(verdict(io, &damaged, 1, "/t/data/old.puffin", size, &dv));
    /* every blob of one retained file naming it: that file compared once (not past the 16
     * compared for one planned file) */
    icmt_ok(icm_fileio_write_replace(mem, "/t/data/new.puffin", r, rlen));
    icm__reached many[20];
    for (size_t k = 0; k < 20; k++) {
        many[k] = b;
        many[k].added_snapshot_id = (int64_t)k; /* (20 groups, one file) */
    }
    why = verdict(io, many, 20, "/t/data/old.puffin", size, &dv);
    assert_non_null(why);
    assert_null(strstr(why, "not compared"));
    free(why);
    free(bad);
    free(c);
    free(p);
    free(r);
    icm_fileio_free(io);
}

/* The size check expiry asks before looking a planned file's entry up. */
static void test_have_size(void **state)
{
    (void)state;
    icm__verify_refs twins = ICM__VERIFY_REFS_INIT;
    assert_false(icm__verify_refs_have_size(&twins, 10)); /* (not sealed, empty) */
    icm__reached es[] = {entry("/t/a", 10, 1, 1), entry("/t/b", 30, 1, 1), entry("/t/c", 20, 1, 1)};
    for (size_t i = 0; i < 3; i++)
        icmt_ok(icm__verify_refs_add(&twins, &es[i]));
    icmt_ok(icm__verify_refs_seal(&twins));
    assert_true(icm__verify_refs_have_size(&twins, 10));
    assert_true(icm__verify_refs_have_size(&twins, 20));
    assert_true(icm__verify_refs_have_size(&twins, 30));
    assert_false(icm__verify_refs_have_size(&twins, 9));
    assert_false(icm__verify_refs_have_size(&twins, 15));
    assert_false(icm__verify_refs_have_size(&twins, 31));
    icm__verify_refs_dispose(&twins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twin_by_its_entry),
        cmocka_unit_test(test_added_again_with_other_metrics),
        cmocka_unit_test(test_added_again_by_names),
        cmocka_unit_test(test_several_entries_of_one_size),
        cmocka_unit_test(test_comparisons_are_bounded),
        cmocka_unit_test(test_blocks_and_unreadable_files),
        cmocka_unit_test(test_deletion_vector_blobs),
        cmocka_unit_test(test_have_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
