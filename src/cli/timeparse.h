/*
 * cli/timeparse.h: the time values users type on the command line (contract "Time values"):
 * a duration back from now (`90m`, `36h`, `5d`), an ISO-8601 instant with a zone
 * (`2026-11-01T00:00:00Z`, `2026-11-01T02:00:00+02:00`), a date (`2026-11-01`, midnight UTC),
 * or epoch milliseconds (`1793491200000`).
 *
 * Used by expire-snapshots (--older-than) and remove-orphan-files; pure functions, no I/O.
 */
#ifndef ICM_CLI_TIMEPARSE_H
#define ICM_CLI_TIMEPARSE_H

#include <stdint.h>

/**
 * Parse a duration: a number followed by one unit, `s`, `m` (minutes), `h`, `d` or `w`. The
 * number is decimal digits with an optional fraction (`0.5s`, `1.25m`: digits on both sides of
 * the point), accepted only when it comes to a whole number of milliseconds (exact, no
 * rounding); `.5s`, `1.s`, `-1s` and `0.0001s` are refused.
 * @param[out] out_ms  the duration in milliseconds (>= 0)
 * @param[out] why     on failure, a static one-line reason (may be NULL)
 * @return 0, or -1 on a malformed value or int64 overflow.
 */
int icm_cli_parse_duration(const char *text, int64_t *out_ms, const char **why);

/**
 * Parse a point in time. A duration means `now_ms - duration` ("older than 5d" is a cutoff of
 * now minus five days); an ISO-8601 date-time must carry `Z` or an offset, because a local
 * time would move the cutoff by the machine's zone; a bare date is midnight UTC; all digits is
 * epoch milliseconds.
 * @param[out] out_ms  epoch milliseconds, UTC
 * @param[out] why     on failure, a static one-line reason (may be NULL)
 * @return 0, or -1.
 */
int icm_cli_parse_time(const char *text, int64_t now_ms, int64_t *out_ms, const char **why);

#endif /* ICM_CLI_TIMEPARSE_H */
