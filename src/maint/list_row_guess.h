/*
 * maint/list_row_guess.h: the list-row guesser of the reachability walk (internal).
 *
 * The walk reads the manifest lists of many snapshots, and most rows of a list repeat the list
 * before it. The guesser remembers the previous list's rows (as spans of the walk's set of
 * manifest paths, and where their bytes lie) and tells, per row, whether it is the one
 * expected next: then the walk skips it without a set lookup or even a decode. A guess only
 * ever claims a row the walk has already handled (see list_row_guess.c).
 */
#ifndef ICM_MAINT_LIST_ROW_GUESS_H
#define ICM_MAINT_LIST_ROW_GUESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manifest/bulk_reader.h"

/*
 * The previous manifest list's rows, in order, as spans of the seen_written arena. Writers list
 * a snapshot's new manifests first and then the previous list's manifests in their order
 * (Java's FastAppend and MergeAppend do), so a row is usually the one after the last row
 * matched: one byte comparison with it, no hashing, tells that the row was seen (a match is a
 * member of the set by construction). Anything else falls back to the set lookup, so a list in
 * any order gives the same answers. Without memory for the spans there is simply no guess.
 *
 * Each span also keeps where its row's bytes are, when the list's writer schema is a cached one
 * and the bytes lie in the list's own buffers (its file bytes and the blocks inflated ahead:
 * icm__list_hold), which are kept until the list after it has been compared with them. Writers
 * copy a kept manifest's row unchanged from list to list, so the expected row is usually byte
 * for byte the one before: under the same schema it is the same row (Avro decoding is a
 * function of the bytes read), so it is claimed with one comparison of its bytes and skipped
 * without decoding any of it. Nothing is copied: a row in a block the reader inflated itself
 * (past the read-ahead budget) simply has no bytes to compare with.
 */
typedef struct icm__row_span {
    size_t off, len;    /* the path in the seen_written arena */
    size_t id;          /* the path's number in the walk's set (what the walk knows of it) */
    const uint8_t *raw; /* the row's bytes in the list's held buffers; NULL = none */
    size_t raw_len;
} icm__row_span;

/* A list's buffers, owned, with the writer schema of its rows' bytes. */
typedef struct icm__row_bytes {
    icm__list_hold hold;
    const void *schema; /* the list's writer schema (icm__list_row_filter), NULL = unknown */
} icm__row_bytes;

typedef struct icm__row_order {
    icm__row_span *prev, *cur;
    size_t prev_len, prev_cap, cur_len, cur_cap;
    size_t next;                    /* index into prev of the row expected next */
    icm__row_bytes prev_raw, cur_raw;    /* the buffers holding each list's rows */
    bool open;                      /* cur's last span awaits its row's bytes */
    bool lost;                      /* a row of cur could not be noted (no memory) */
} icm__row_order;

/* A new list begins: its rows are compared with the list just read, whose buffers are kept
 * until the next one begins; `hold` is the new list's (taken; NULL for none). */
void icm__rows_begin_list(icm__row_order *o, icm__list_hold *hold);
/* Note a row of the current list: its path is [off, off + len) of the walk's arena, `id` its
 * number in the walk's set. cur then holds every row of the list, in order, each with its id
 * (a caller may sum what it knows of them); without memory for a row `lost` is set and only
 * the guess for the next list is lost. */
void icm__rows_note(icm__row_order *o, size_t off, size_t len, size_t id);
/* The bytes of the row just noted (a row claimed or delivered), under writer schema `schema`. */
void icm__rows_note_bytes(icm__row_order *o, const uint8_t *row, size_t len,
                          const void *schema);
/* Whether the row with path [path, path + len) is the previous list's next row, or the one
 * after (a row removed); `arena` holds the spans' paths. A true answer notes the row. */
bool icm__rows_guess(icm__row_order *o, const char *arena, const uint8_t *path, size_t len);
/* A row claimed by the set (its path at `off`), not by a guess: the guesses go on after it
 * when it is one of the next few rows of the previous list. */
void icm__rows_resync(icm__row_order *o, size_t off);
/* How many bytes at `row` (`avail` of them) are rows byte for byte equal to the previous list's
 * rows from the one expected next, under the same writer schema; *rows their number (at most
 * max_rows). They are noted as this list's rows. 0 when the first is not such a row. */
size_t icm__rows_guess_bytes(icm__row_order *o, const uint8_t *row, size_t avail,
                             size_t max_rows, const void *schema, size_t *rows);
void icm__rows_dispose(icm__row_order *o);

#endif /* ICM_MAINT_LIST_ROW_GUESS_H */
