/*
 * maint/list_row_guess.c: the list-row guesser of the reachability walk (list_row_guess.h):
 * which rows of a manifest list repeat the list read before it, told from the order and the
 * bytes of the previous list's rows instead of a set lookup or a decode.
 *
 * Invariant: a row the guesser claims is one the walk already handled (its path is in the walk's
 * set), so every row gets the answer the set alone gives; only the cost differs. Checked against
 * the set on generated list histories by tests/unit/test_list_row_guess.c.
 *
 * Pure computation over buffers the walk hands it: no storage access.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "maint/list_row_guess.h"
#include "util/util.h"

/* A new list begins: its rows are compared with the list just read, whose buffers are kept
 * until the next one begins; `hold` is the new list's (taken; NULL for none). */
void icm__rows_begin_list(icm__row_order *o, icm__list_hold *hold)
{
    icm__row_span *t = o->prev;
    size_t tcap = o->prev_cap;
    o->prev = o->cur;
    o->prev_cap = o->cur_cap;
    o->prev_len = o->cur_len;
    o->cur = t;
    o->cur_cap = tcap;
    o->cur_len = 0;
    o->next = 0;
    icm__list_hold_dispose(&o->prev_raw.hold);
    o->prev_raw = o->cur_raw;
    memset(&o->cur_raw, 0, sizeof o->cur_raw);
    if (hold != NULL) {
        o->cur_raw.hold = *hold;
        memset(hold, 0, sizeof *hold);
    }
    o->open = false;
    o->lost = false;
}

/* Room for `n` more spans in cur. */
static bool rows_reserve(icm__row_order *o, size_t n)
{
    if (n <= o->cur_cap - o->cur_len)
        return true;
    size_t cap = o->cur_cap ? o->cur_cap : 256;
    while (cap - o->cur_len < n)
        cap *= 2;
    icm__row_span *grown = icm__reallocarray(o->cur, cap, sizeof *grown);
    if (grown == NULL)
        return false;
    o->cur = grown;
    o->cur_cap = cap;
    return true;
}

void icm__rows_note(icm__row_order *o, size_t off, size_t len, size_t id)
{
    o->open = false;
    if (!rows_reserve(o, 1)) {
        o->lost = true; /* (the guess for the next list is lost, and cur is not whole) */
        return;
    }
    o->cur[o->cur_len++] = (icm__row_span){off, len, id, NULL, 0};
    o->open = true;
}

/* Whether [p, p + len) lies in the current list's held buffers. */
static bool rows_held(icm__row_order *o, const uint8_t *p, size_t len)
{
    return icm__list_hold_contains(&o->cur_raw.hold, p, len);
}

/* The bytes of the row just noted (a row claimed or delivered). */
void icm__rows_note_bytes(icm__row_order *o, const uint8_t *row, size_t len, const void *schema)
{
    if (!o->open)
        return;
    o->open = false;
    icm__row_bytes *rb = &o->cur_raw;
    if (schema == NULL || (rb->schema != NULL && rb->schema != schema))
        return; /* (one list has one schema; never compare bytes across two) */
    if (len == 0 || !rows_held(o, row, len))
        return;
    rb->schema = schema;
    o->cur[o->cur_len - 1].raw = row;
    o->cur[o->cur_len - 1].raw_len = len;
}

/* Whether the row is the previous list's next row, or the one after (a row removed). */
bool icm__rows_guess(icm__row_order *o, const char *arena, const uint8_t *path, size_t len)
{
    for (size_t k = o->next; k < o->next + 2 && k < o->prev_len; k++) {
        const icm__row_span *r = &o->prev[k];
        if (r->len == len && memcmp(arena + r->off, path, len) == 0) {
            o->next = k + 1;
            icm__rows_note(o, r->off, len, r->id);
            return true;
        }
    }
    return false;
}

/* A row claimed by the set, not by a guess: when it is one of the next few rows of the previous
 * list, the guesses go on from there. A list that dropped or moved more than one row before
 * its run of kept rows (a rewritten manifest and the one it replaced, say) is then guessed
 * again from its second row, instead of never. */
#define ROWS_RESYNC_WINDOW 64
void icm__rows_resync(icm__row_order *o, size_t off)
{
    size_t end = o->prev_len - o->next > ROWS_RESYNC_WINDOW ? o->next + ROWS_RESYNC_WINDOW
                                                              : o->prev_len;
    for (size_t k = o->next; k < end; k++) {
        if (o->prev[k].off == off) {
            o->next = k + 1;
            return;
        }
    }
}

/* How many bytes at `row` are rows byte for byte equal to the previous list's rows from the
 * one expected next (or the one after: a row removed), under the same writer schema; *rows
 * their number (at most max_rows, those left in the block). They are noted as this list's rows,
 * with their bytes where `row` lies in the list's held buffers. 0 when the first is not such a
 * row. */
size_t icm__rows_guess_bytes(icm__row_order *o, const uint8_t *row, size_t avail, size_t max_rows,
                               const void *schema, size_t *rows)
{
    *rows = 0;
    if (schema != o->prev_raw.schema)
        return 0;
    size_t k = o->next;
    for (; k < o->next + 2 && k < o->prev_len; k++) {
        const icm__row_span *r = &o->prev[k];
        if (r->raw_len > 0 && r->raw_len <= avail && memcmp(r->raw, row, r->raw_len) == 0)
            break;
    }
    if (k >= o->next + 2 || k >= o->prev_len)
        return 0;
    /* The rows after it, while they lie one after another (one block's rows do) and fit:
     * usually all of them are equal too (a list is the one before with new rows first), which
     * one comparison of the whole span tells; else row by row, up to the first that differs. */
    size_t first = k, bytes = o->prev[k].raw_len, span = bytes;
    for (k++; k < o->prev_len && k - first < max_rows; k++) {
        const icm__row_span *r = &o->prev[k];
        if (r->raw_len == 0 || r->raw != o->prev[k - 1].raw + o->prev[k - 1].raw_len ||
            r->raw_len > avail - span)
            break;
        span += r->raw_len;
    }
    size_t last = k; /* rows [first, last) lie one after another and fit */
    if (span > bytes && memcmp(o->prev[first + 1].raw, row + bytes, span - bytes) == 0) {
        bytes = span;
    } else {
        for (k = first + 1; k < last; k++) {
            const icm__row_span *r = &o->prev[k];
            if (memcmp(r->raw, row + bytes, r->raw_len) != 0)
                break;
            bytes += r->raw_len;
        }
    }
    size_t n = k - first;
    if (!rows_reserve(o, n))
        return 0; /* (the rows are read as they are without the guess) */
    icm__row_bytes *cur = &o->cur_raw;
    bool held = (cur->schema == NULL || cur->schema == schema) && rows_held(o, row, bytes);
    const uint8_t *at = row;
    for (size_t j = first; j < k; j++) {
        icm__row_span sp = o->prev[j];
        if (held) {
            sp.raw = at;
            at += sp.raw_len;
        } else {
            sp.raw = NULL;
            sp.raw_len = 0;
        }
        o->cur[o->cur_len++] = sp;
    }
    if (held)
        cur->schema = schema;
    o->open = false;
    o->next = k;
    *rows = n;
    return bytes;
}

void icm__rows_dispose(icm__row_order *o)
{
    icm__free(o->prev);
    icm__free(o->cur);
    icm__list_hold_dispose(&o->prev_raw.hold);
    icm__list_hold_dispose(&o->cur_raw.hold);
}
