/*
 * cli/output.c: how the CLI prints: aligned text tables and printable lines for people, JSON
 * documents (built with jansson, written by json_out.c) for programs, and the time/number
 * formatting both share.
 *
 * Human output goes to stdout; with --json stdout carries exactly one JSON document, so
 * nothing else may be printed there. Every byte string printed as text goes through
 * icm_escape_text (a table cell, a line): a file name holding a newline or bytes that are not
 * UTF-8 stays on its row, and the row can be read back exactly (README "Output").
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "icemaint/escape.h"

char *icm_cli_escape_text(const char *s)
{
    size_t len = strlen(s);
    size_t need = icm_escape_text(NULL, 0, s, len) + 1;
    char *out = malloc(need);
    if (out != NULL)
        icm_escape_text(out, need, s, len);
    return out;
}

void icm_cli_vline(FILE *out, const char *fmt, va_list ap)
{
    char stack[2048];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(stack, sizeof stack, fmt, ap);
    char *raw = n >= 0 && (size_t)n >= sizeof stack ? malloc((size_t)n + 1) : stack;
    if (raw != stack && raw != NULL)
        vsnprintf(raw, (size_t)n + 1, fmt, again);
    va_end(again);
    if (n < 0 || raw == NULL) {
        /* no memory for a long line: its (printable) start is better than nothing */
        raw = stack;
    }
    char *text = icm_cli_escape_text(raw);
    fputs(text != NULL ? text : "(a line that could not be printed: out of memory)", out);
    fputc('\n', out);
    free(text);
    if (raw != stack)
        free(raw);
}

void icm_cli_line(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    icm_cli_vline(out, fmt, ap);
    va_end(ap);
}

void icm_cli_warn(const icm_cli *cli, const char *fmt, ...)
{
    if (cli != NULL && cli->verbosity < 0)
        return; /* -q: only errors on stderr */
    char stack[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(stack, sizeof stack, fmt, ap);
    va_end(ap);
    char *text = stack;
    if (n >= 0 && (size_t)n >= sizeof stack && (text = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    icm_cli_line(stderr, "warning: %s", text != NULL ? text : stack);
    if (text != stack)
        free(text);
}

void icm_cli_commit_warnings(const icm_cli *cli, const icm_table *t)
{
    size_t n = icm_table_commit_warning_count(t);
    for (size_t i = 0; i < n; i++)
        icm_cli_warn(cli, "%s", icm_table_commit_warning(t, i));
}

void icm_cli_file_line(const icm_cli *cli, bool warning, const char *location,
                       const char *message, const char *suffix)
{
    if (warning && cli != NULL && cli->verbosity < 0)
        return;
    char *loc = icm_cli_escape_text(location != NULL ? location : "");
    fprintf(stderr, "%s%s: %s%s\n", warning ? "warning: " : "icemaint: ",
            loc != NULL ? loc : "(a file whose name could not be printed: out of memory)",
            message != NULL ? message : "", suffix != NULL ? suffix : "");
    free(loc);
}

bool icm_cli_stdout_ok(void)
{
    return fflush(stdout) == 0 && !ferror(stdout);
}

int icm_cli_report_lost(size_t deleted, const char *what, const char *why)
{
    if (deleted == 0)
        return icm_cli_error(NULL, "the report could not be printed (%s); nothing was deleted",
                             why);
    return icm_cli_error(NULL, "the report could not be printed (%s), but the run went "
                               "through: %zu %s%s deleted",
                         why, deleted, what, deleted == 1 ? " was" : "s were");
}

struct icm_cli_grid {
    size_t ncols;
    char **cells;   /* row-major; row 0 holds the headers */
    size_t nrows;   /* including the header row */
    size_t cap_rows;
};

icm_cli_grid *icm_cli_grid_new(size_t ncols, const char *const *headers)
{
    icm_cli_grid *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->ncols = ncols;
    if (!icm_cli_grid_add(g, headers)) {
        icm_cli_grid_free(g);
        return NULL;
    }
    return g;
}

bool icm_cli_grid_add(icm_cli_grid *g, const char *const *cells)
{
    if (g->nrows == g->cap_rows) {
        size_t cap = g->cap_rows ? g->cap_rows * 2 : 16;
        char **grown = realloc(g->cells, cap * g->ncols * sizeof *grown);
        if (grown == NULL)
            return false;
        g->cells = grown;
        g->cap_rows = cap;
    }
    char **row = g->cells + g->nrows * g->ncols;
    for (size_t c = 0; c < g->ncols; c++) {
        row[c] = icm_cli_escape_text(cells[c] != NULL ? cells[c] : "-");
        if (row[c] == NULL) {
            while (c > 0)
                free(row[--c]);
            return false;
        }
    }
    g->nrows++;
    return true;
}

bool icm_cli_grid_set(icm_cli_grid *g, size_t row, size_t col, const char *text)
{
    char *copy = icm_cli_escape_text(text != NULL ? text : "-");
    if (copy == NULL)
        return false;
    char **cell = &g->cells[(row + 1) * g->ncols + col];
    free(*cell);
    *cell = copy;
    return true;
}

void icm_cli_grid_print(const icm_cli_grid *g, FILE *out)
{
    size_t *width = calloc(g->ncols, sizeof *width);
    if (width == NULL)
        return;
    for (size_t r = 0; r < g->nrows; r++) {
        for (size_t c = 0; c < g->ncols; c++) {
            size_t len = strlen(g->cells[r * g->ncols + c]);
            if (len > width[c])
                width[c] = len;
        }
    }
    /* trailing columns with no value in any row (say, REFERENCED_DATA_FILE in a table
     * without deletion vectors) are left out, header included */
    size_t ncols = 1;
    for (size_t r = 1; r < g->nrows; r++) {
        for (size_t c = ncols; c < g->ncols; c++) {
            if (g->cells[r * g->ncols + c][0] != '\0')
                ncols = c + 1;
        }
    }
    if (g->nrows == 1)
        ncols = g->ncols;
    for (size_t r = 0; r < g->nrows; r++) {
        char **row = g->cells + r * g->ncols;
        /* no padding after the last non-empty cell: lines carry no trailing blanks and long
         * locations stay copy-pastable */
        size_t last = ncols - 1;
        while (last > 0 && row[last][0] == '\0')
            last--;
        for (size_t c = 0; c < last; c++)
            fprintf(out, "%-*s  ", (int)width[c], row[c]);
        fprintf(out, "%s\n", row[last]);
    }
    free(width);
}

void icm_cli_grid_free(icm_cli_grid *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->nrows * g->ncols; i++)
        free(g->cells[i]);
    free(g->cells);
    free(g);
}

/* `width` decimal digits of v (0 <= v < 10^width) at p; returns p past them. */
static char *put_digits(char *p, unsigned v, int width)
{
    for (int k = width - 1; k >= 0; k--) {
        p[k] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + width;
}

const char *icm_cli_format_time(int64_t ms, char *buf, size_t buf_size)
{
    /* floor division so times before 1970 keep a positive millisecond part */
    int64_t secs = ms / 1000;
    int64_t frac = ms % 1000;
    if (frac < 0) {
        frac += 1000;
        secs -= 1;
    }
    time_t t = (time_t)secs;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL) {
        snprintf(buf, buf_size, "%" PRId64 "ms", ms);
        return buf;
    }
    int year = tm.tm_year + 1900;
    if (year < 0 || year > 9999 || buf_size < sizeof "YYYY-MM-DDTHH:MM:SS.mmmZ") {
        snprintf(buf, buf_size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)frac);
        return buf;
    }
    /* The same text without printf: a sweep's report formats one a row, millions of rows. */
    char *p = put_digits(buf, (unsigned)year, 4);
    *p++ = '-';
    p = put_digits(p, (unsigned)tm.tm_mon + 1, 2);
    *p++ = '-';
    p = put_digits(p, (unsigned)tm.tm_mday, 2);
    *p++ = 'T';
    p = put_digits(p, (unsigned)tm.tm_hour, 2);
    *p++ = ':';
    p = put_digits(p, (unsigned)tm.tm_min, 2);
    *p++ = ':';
    p = put_digits(p, (unsigned)tm.tm_sec, 2);
    *p++ = '.';
    p = put_digits(p, (unsigned)frac, 3);
    *p++ = 'Z';
    *p = '\0';
    return buf;
}

const char *icm_cli_format_int64(int64_t v, char *buf, size_t buf_size)
{
    /* the digits backwards into a scratch, then out: printf-free, one a report row */
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        tmp[n++] = '-';
    if (buf_size <= n) {
        snprintf(buf, buf_size, "%" PRId64, v);
        return buf;
    }
    for (size_t k = 0; k < n; k++)
        buf[k] = tmp[n - 1 - k];
    buf[n] = '\0';
    return buf;
}

const char *icm_cli_format_double(double v, char *buf, size_t buf_size)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, buf_size, "%.*g", digits, v);
        if (isnan(v) || strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

void icm_cli_json_set(json_t *obj, const char *key, json_t *value_new, bool *ok)
{
    if (value_new == NULL || json_object_set_new(obj, key, value_new) != 0)
        *ok = false;
}

json_t *icm_cli_json_str(const char *s)
{
    /* unchecked: a byte string, written with the lossless escape by icm_cli_json_write */
    return s != NULL ? json_stringn_nocheck(s, strlen(s)) : json_null();
}

json_t *icm_cli_json_int(int64_t v)
{
    /* json_int_t is long long: every Iceberg id and size (Java long) fits exactly */
    return json_integer((json_int_t)v);
}

void icm_cli_json_push(json_t *arr, json_t *value_new, bool *ok)
{
    if (value_new == NULL || json_array_append_new(arr, value_new) != 0)
        *ok = false;
}

int icm_cli_json_failed(void)
{
    /* strings are stored unchecked (icm_cli_json_str), so only memory can run out */
    return icm_cli_error(NULL, "cannot build the JSON output: out of memory");
}

static bool json_printed;

bool icm_cli_json_printed(void)
{
    return json_printed;
}

bool icm_cli_json_emit(json_t *doc)
{
    bool written = icm_cli_json_write(stdout, doc, true);
    json_printed = true;
    json_decref(doc);
    return written;
}

void icm_cli_json_mark_printed(void)
{
    json_printed = true;
}

int icm_cli_json_print(json_t *doc, bool ok)
{
    if (doc == NULL || !ok) {
        json_decref(doc);
        return icm_cli_json_failed();
    }
    if (!icm_cli_json_emit(doc))
        return icm_cli_error("stdout", "cannot write the JSON document");
    return ICM_EXIT_OK;
}
