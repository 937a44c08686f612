/*
 * cli/timeparse.c: parse durations, ISO-8601 instants, dates and epoch milliseconds typed on
 * the command line (see timeparse.h). No libc time functions: mktime/timegm depend on the
 * process's zone settings or are non-standard, and a cutoff for deleting files must not.
 */
#include <stdbool.h>
#include <stddef.h>

#include "timeparse.h"

#define MS_PER_SECOND INT64_C(1000)
#define MS_PER_MINUTE (60 * MS_PER_SECOND)
#define MS_PER_HOUR (60 * MS_PER_MINUTE)
#define MS_PER_DAY (24 * MS_PER_HOUR)
#define MS_PER_WEEK (7 * MS_PER_DAY)

static int reject(const char **why, const char *reason)
{
    if (why != NULL)
        *why = reason;
    return -1;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Read exactly `n` digits at *p into *out; advance *p. */
static bool fixed_digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit((*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* Read one or more digits as a non-negative int64; false on overflow or no digit. */
static bool digits_int64(const char **p, int64_t *out)
{
    const char *s = *p;
    int64_t v = 0;
    if (!is_digit(*s))
        return false;
    for (; is_digit(*s); s++) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
            return false;
    }
    *p = s;
    *out = v;
    return true;
}

/* The fraction digits at *p (after the point) as F / 10^*k with trailing zeros dropped;
 * false when none, or when more than 10 significant digits remain: no unit is a multiple of
 * more than 2^10 or 5^5, so such a fraction never comes to whole milliseconds. */
static bool fraction_digits(const char **p, int64_t *f, int *k, bool *too_fine)
{
    const char *s = *p, *last = NULL;
    for (; is_digit(*s); s++) {
        if (*s != '0')
            last = s;
    }
    if (s == *p)
        return false;
    *f = 0;
    *k = 0;
    *too_fine = last != NULL && last - *p >= 10;
    for (const char *d = *p; !*too_fine && last != NULL && d <= last; d++, (*k)++)
        *f = *f * 10 + (*d - '0');
    *p = s;
    return true;
}

int icm_cli_parse_duration(const char *text, int64_t *out_ms, const char **why)
{
    static const char *const shape =
        "a duration is a number followed by s, m, h, d or w (like 5d)";
    const char *p = text;
    int64_t n, f = 0;
    int k = 0;
    bool too_fine = false;
    if (text != NULL && text[0] == '-')
        return reject(why, "a duration cannot be negative");
    if (text != NULL && text[0] == '.')
        return reject(why, "a decimal duration needs a digit before the point (like 0.5s)");
    if (text == NULL || !digits_int64(&p, &n))
        return reject(why, shape);
    if (*p == '.') {
        p++;
        if (!fraction_digits(&p, &f, &k, &too_fine))
            return reject(why, "a decimal duration needs a digit after the point (like 1.5h)");
    }
    int64_t unit;
    switch (*p) {
    case 's': unit = MS_PER_SECOND; break;
    case 'm': unit = MS_PER_MINUTE; break;
    case 'h': unit = MS_PER_HOUR; break;
    case 'd': unit = MS_PER_DAY; break;
    case 'w': unit = MS_PER_WEEK; break;
    case '\0': return reject(why, "a duration needs a unit: s, m, h, d or w (like 36h)");
    default: return reject(why, shape);
    }
    if (p[1] != '\0')
        return reject(why, shape);
    /* f < 10^10 and unit <= 604,800,000 ms: f * unit fits in int64. */
    int64_t scale = 1, part = f * unit;
    for (int i = 0; i < k; i++)
        scale *= 10;
    if (too_fine || part % scale != 0)
        return reject(why, "a duration must come to whole milliseconds (0.001s is the finest)");
    int64_t ms;
    if (__builtin_mul_overflow(n, unit, &ms) || __builtin_add_overflow(ms, part / scale, &ms))
        return reject(why, "duration too large");
    *out_ms = ms;
    return 0;
}

static bool is_leap(int year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static int days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap(year) ? 29 : days[month - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date. Counts in 400-year eras (146097
 * days each) with March as the first month, so the leap day falls at the end of a year. */
static int64_t days_from_civil(int year, int month, int day)
{
    int64_t y = year - (month <= 2 ? 1 : 0);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t year_of_era = y - era * 400;                                /* [0, 399] */
    int64_t shifted_month = month > 2 ? month - 3 : month + 9;          /* March = 0 */
    int64_t day_of_year = (153 * shifted_month + 2) / 5 + day - 1;      /* [0, 365] */
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;                          /* 1970-03-01 shift */
}

/* `YYYY-MM-DD` at *p. */
static bool parse_date(const char **p, int64_t *days, const char **why)
{
    int year, month, day;
    const char *s = *p;
    if (!fixed_digits(&s, 4, &year) || *s++ != '-' || !fixed_digits(&s, 2, &month) ||
        *s++ != '-' || !fixed_digits(&s, 2, &day)) {
        reject(why, "expected a date like 2026-11-01");
        return false;
    }
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) {
        reject(why, "no such date");
        return false;
    }
    *days = days_from_civil(year, month, day);
    *p = s;
    return true;
}

/* `HH:MM[:SS[.fraction]]` at *p, as milliseconds into the day (fraction truncated to ms). */
static bool parse_clock(const char **p, int64_t *ms, const char **why)
{
    int hour, minute, second = 0, millis = 0;
    const char *s = *p;
    if (!fixed_digits(&s, 2, &hour) || *s++ != ':' || !fixed_digits(&s, 2, &minute)) {
        reject(why, "expected a time like 2026-11-01T00:00:00Z");
        return false;
    }
    if (*s == ':') {
        s++;
        if (!fixed_digits(&s, 2, &second)) {
            reject(why, "expected seconds as two digits");
            return false;
        }
        if (*s == '.' || *s == ',') {
            s++;
            int n = 0;
            for (; is_digit(*s); s++, n++) {
                if (n < 3)
                    millis = millis * 10 + (*s - '0');
            }
            if (n == 0 || n > 9) {
                reject(why, "expected 1 to 9 digits of fractional seconds");
                return false;
            }
            for (; n < 3; n++)
                millis *= 10;
        }
    }
    /* 24:00 and leap seconds are valid ISO-8601 but never needed for a cutoff; refusing them
     * keeps one spelling per instant. */
    if (hour > 23 || minute > 59 || second > 59) {
        reject(why, "hour, minute or second out of range");
        return false;
    }
    *ms = hour * MS_PER_HOUR + minute * MS_PER_MINUTE + second * MS_PER_SECOND + millis;
    *p = s;
    return true;
}

/* `Z`, `±HH:MM`, `±HHMM` or `±HH`, as the offset from UTC in ms (east positive). */
static bool parse_zone(const char **p, int64_t *offset_ms, const char **why)
{
    const char *s = *p;
    if (*s == 'Z' || *s == 'z') {
        *offset_ms = 0;
        *p = s + 1;
        return true;
    }
    if (*s != '+' && *s != '-') {
        reject(why, "an ISO-8601 time needs a zone: Z or an offset like +02:00");
        return false;
    }
    int sign = *s++ == '-' ? -1 : 1;
    int hours, minutes = 0;
    if (!fixed_digits(&s, 2, &hours)) {
        reject(why, "expected a zone offset like +02:00");
        return false;
    }
    if (*s == ':')
        s++;
    if (is_digit(*s) && !fixed_digits(&s, 2, &minutes)) {
        reject(why, "expected a zone offset like +02:00");
        return false;
    }
    if (hours > 23 || minutes > 59) {
        reject(why, "zone offset out of range");
        return false;
    }
    *offset_ms = sign * (hours * MS_PER_HOUR + minutes * MS_PER_MINUTE);
    *p = s;
    return true;
}

static int parse_iso(const char *text, int64_t *out_ms, const char **why)
{
    const char *p = text;
    int64_t days, clock_ms = 0, offset_ms = 0;
    if (!parse_date(&p, &days, why))
        return -1;
    if (*p == 'T' || *p == 't') {
        p++;
        if (!parse_clock(&p, &clock_ms, why) || !parse_zone(&p, &offset_ms, why))
            return -1;
    }
    if (*p != '\0')
        return reject(why, "unexpected text after the ISO-8601 time");
    /* |days| < 4e6 for 4-digit years, so this cannot overflow */
    *out_ms = days * MS_PER_DAY + clock_ms - offset_ms;
    return 0;
}

static bool all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++) {
        if (!is_digit(*s))
            return false;
    }
    return true;
}

int icm_cli_parse_time(const char *text, int64_t now_ms, int64_t *out_ms, const char **why)
{
    if (text == NULL || *text == '\0')
        return reject(why, "empty time value");
    if (all_digits(text)) {
        const char *p = text;
        int64_t ms;
        if (!digits_int64(&p, &ms))
            return reject(why, "epoch milliseconds too large");
        *out_ms = ms;
        return 0;
    }
    /* four digits and a dash start a date; anything else that starts with a digit is a
     * duration */
    if (is_digit(text[0]) && is_digit(text[1]) && is_digit(text[2]) && is_digit(text[3]) &&
        text[4] == '-')
        return parse_iso(text, out_ms, why);
    if (!is_digit(text[0]))
        return reject(why, "expected a duration (5d), an ISO-8601 time or epoch milliseconds");
    int64_t duration;
    if (icm_cli_parse_duration(text, &duration, why) != 0)
        return -1;
    if (__builtin_sub_overflow(now_ms, duration, out_ms))
        return reject(why, "duration too large");
    return 0;
}
