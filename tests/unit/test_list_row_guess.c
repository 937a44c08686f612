/*
 * tests/unit/test_list_row_guess.c: the list-row guesser (maint/list_row_guess.c) against the
 * plain set lookup it shortcuts, on generated sequences of manifest lists.
 *
 * The reference: a row of a manifest list was handled before exactly when its path is in the set
 * of paths seen so far. The guesser is driven as the walk drives it (reach_walk.c: same_rows at
 * a row's first byte, then the path guess, then the set with a resync, the delivered rows noted,
 * every row's bytes noted after it), and every row's answer must be the reference's. Lists are
 * generated from the one before as writers make them (new rows first, then the previous rows),
 * with rows dropped, swapped, duplicated and rewritten (same path, other bytes), lists under
 * another writer schema, lists without held bytes (read failures, v1 embedded manifests), and
 * rows cut into blocks of random sizes. On append-only histories the guesser must also be what
 * answers: no kept row falls back to the set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maint/list_row_guess.h"
#include "testutil.h"
#include "util/strset.h"
#include "util/util.h"

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

#define MAX_ROWS 64

/* One row: its manifest path and the version of its bytes (a rewritten row keeps its path). */
typedef struct row {
    unsigned id;
    unsigned version;
} row;

typedef struct list {
    row rows[MAX_ROWS];
    size_t n;
    int schema;     /* 0 or 1: which writer schema the rows' bytes are under */
    bool held;      /* the list's bytes are held (read ahead); else rows are noted by path only */
} list;

/* Two distinct writer schemas: the guesser only compares their addresses. */
static const int SCHEMA_A = 1, SCHEMA_B = 2;

static size_t path_of(const row *r, char *out, size_t cap)
{
    return (size_t)snprintf(out, cap, "s3://b/t/metadata/m-%u.avro", r->id);
}

/* A row's bytes: its path's length, the path and its version (bytes equal iff path and version
 * are: decoding is a function of the bytes). */
static size_t encode(const row *r, uint8_t *out)
{
    char path[64];
    size_t n = path_of(r, path, sizeof path);
    out[0] = (uint8_t)n;
    memcpy(out + 1, path, n);
    out[1 + n] = (uint8_t)r->version;
    return n + 2;
}

/* The next list from `prev`: new rows first, then prev's rows, with random edits. */
static void next_list(uint64_t *s, const list *prev, list *out, unsigned *next_id,
                      bool append_only)
{
    memset(out, 0, sizeof *out);
    size_t fresh = next(s) % 4;
    for (size_t i = 0; i < fresh && out->n < MAX_ROWS; i++)
        out->rows[out->n++] = (row){(*next_id)++, 0};
    for (size_t i = 0; i < prev->n && out->n < MAX_ROWS; i++) {
        if (!append_only && next(s) % 8 == 0)
            continue; /* dropped (a rewritten or expired manifest) */
        row r = prev->rows[i];
        if (!append_only && next(s) % 16 == 0)
            r.version++; /* same manifest, row bytes rewritten (new counts, say) */
        out->rows[out->n++] = r;
        if (!append_only && next(s) % 32 == 0 && out->n < MAX_ROWS)
            out->rows[out->n++] = r; /* listed twice */
    }
    if (!append_only && out->n > 1 && next(s) % 6 == 0) {
        size_t a = next(s) % out->n, b = next(s) % out->n;
        row t = out->rows[a];
        out->rows[a] = out->rows[b];
        out->rows[b] = t;
    }
    out->schema = append_only || next(s) % 10 != 0 ? 0 : 1;
    out->held = append_only || next(s) % 10 != 0;
}

typedef struct counts {
    size_t rows, claimed_by_bytes, claimed_by_path, claimed_by_set, delivered;
} counts;

/* Read one list as the walk does; every row's answer is checked against the set alone. */
static void read_list(icm__row_order *o, icm__strset *seen, const list *l, uint64_t *s,
                      counts *c)
{
    uint8_t *buf = icm__malloc(MAX_ROWS * 80 + 1);
    assert_non_null(buf);
    size_t offs[MAX_ROWS + 1], len = 0;
    for (size_t i = 0; i < l->n; i++) {
        offs[i] = len;
        len += encode(&l->rows[i], buf + len);
    }
    offs[l->n] = len;
    const void *schema = l->schema == 0 ? (const void *)&SCHEMA_A : (const void *)&SCHEMA_B;
    if (l->held) {
        icm__list_hold hold;
        memset(&hold, 0, sizeof hold);
        hold.data = (char *)buf;
        hold.len = len;
        icm__rows_begin_list(o, &hold);
    } else {
        icm__rows_begin_list(o, NULL);
    }
    size_t i = 0, block_end = 0;
    while (i < l->n) {
        if (i >= block_end)
            block_end = i + 1 + next(s) % 8; /* rows of a block: at most max_rows at once */
        if (block_end > l->n)
            block_end = l->n;
        char path[64];
        size_t plen = path_of(&l->rows[i], path, sizeof path);
        size_t off, id;
        bool before = icm__strset_lookup(seen, path, plen, &off, NULL); /* the reference */
        c->rows++;
        if (l->held) {
            size_t rows = 0;
            size_t bytes = icm__rows_guess_bytes(o, buf + offs[i], offs[block_end] - offs[i],
                                                 block_end - i, schema, &rows);
            if (bytes > 0) {
                /* every row claimed was handled before, and the span is exactly those rows */
                assert_true(rows >= 1 && i + rows <= block_end);
                assert_int_equal(bytes, offs[i + rows] - offs[i]);
                for (size_t k = i; k < i + rows; k++) {
                    size_t klen = path_of(&l->rows[k], path, sizeof path);
                    assert_true(icm__strset_contains(seen, path, klen));
                }
                c->claimed_by_bytes += rows;
                c->rows += rows - 1;
                i += rows;
                continue;
            }
        }
        bool claimed = icm__rows_guess(o, seen->arena, (const uint8_t *)path, plen);
        if (claimed) {
            c->claimed_by_path++;
        } else if (icm__strset_lookup(seen, path, plen, &off, &id)) {
            icm__rows_resync(o, off);
            icm__rows_note(o, off, plen, id);
            claimed = true;
            c->claimed_by_set++;
        } else {
            bool added;
            icmt_ok(icm__strset_put(seen, path, plen, &added, &off, &id));
            assert_true(added);
            icm__rows_note(o, off, plen, id);
            c->delivered++;
        }
        assert_int_equal(claimed, before);
        if (l->held)
            icm__rows_note_bytes(o, buf + offs[i], offs[i + 1] - offs[i], schema);
        i++;
    }
    /* cur is the whole list, in order, each row with its path's number in the set (the walk
     * sums what it knows of a list's manifests from these) */
    assert_false(o->lost);
    assert_int_equal(o->cur_len, l->n);
    for (size_t k = 0; k < l->n; k++) {
        char path[64];
        size_t plen = path_of(&l->rows[k], path, sizeof path), off, id;
        assert_true(icm__strset_lookup(seen, path, plen, &off, &id));
        assert_int_equal(o->cur[k].off, off);
        assert_int_equal(o->cur[k].len, plen);
        assert_int_equal(o->cur[k].id, id);
    }
    if (!l->held)
        icm__free(buf);
}

static counts run_history(uint64_t seed, size_t n_lists, bool append_only)
{
    uint64_t s = seed;
    icm__row_order o;
    memset(&o, 0, sizeof o);
    icm__strset seen = ICM__STRSET_INIT;
    list a, b;
    memset(&a, 0, sizeof a);
    unsigned next_id = 0;
    counts c = {0};
    list *prev = &a, *cur = &b;
    for (size_t k = 0; k < n_lists; k++) {
        next_list(&s, prev, cur, &next_id, append_only);
        read_list(&o, &seen, cur, &s, &c);
        list *t = prev;
        prev = cur;
        cur = t;
    }
    icm__rows_dispose(&o);
    icm__strset_dispose(&seen);
    return c;
}

static void test_random_histories_match_the_set(void **state)
{
    (void)state;
    counts all = {0};
    for (uint64_t seed = 1; seed <= 400; seed++) {
        counts c = run_history(seed, 40, false);
        all.rows += c.rows;
        all.claimed_by_bytes += c.claimed_by_bytes;
        all.claimed_by_path += c.claimed_by_path;
        all.claimed_by_set += c.claimed_by_set;
        all.delivered += c.delivered;
    }
    /* every path the generator made was delivered exactly once, the rest claimed */
    assert_int_equal(all.rows, all.claimed_by_bytes + all.claimed_by_path + all.claimed_by_set +
                                   all.delivered);
    /* the generated edits exercise every way a row is claimed (the test is not vacuous) */
    assert_true(all.claimed_by_bytes > 0);
    assert_true(all.claimed_by_path > 0);
    assert_true(all.claimed_by_set > 0);
}

static void test_append_only_history_is_all_guessed(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        counts c = run_history(seed, 60, true);
        /* every kept row is claimed by the guesser, none falls back to the set */
        assert_int_equal(c.claimed_by_set, 0);
        assert_true(c.claimed_by_bytes > 0);
        assert_int_equal(c.rows, c.claimed_by_bytes + c.claimed_by_path + c.delivered);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_histories_match_the_set),
        cmocka_unit_test(test_append_only_history_is_all_guessed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
