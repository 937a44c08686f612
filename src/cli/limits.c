/*
 * cli/limits.c: the guard-rail options of the commands that delete (issue #21):
 * `--max-delete N`, `--max-delete-bytes B`, `--max-delete-percent P`, parsed into the library's
 * icm_delete_limits (icemaint/maint.h, which checks them on the whole plan before the first
 * delete).
 *
 * Sizes are written as Spark's size strings are (JavaUtils.byteStringAs, what a Java/Spark
 * user types into spark.* settings): a whole number with an optional binary unit, b, k/kb/kib,
 * m/mb/mib, g/gb/gib, t/tb/tib, p/pb/pib in any case, so `10G` is 10 x 1024^3 bytes. A value
 * that overflows 64 bits is a usage error, never wrapped.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int icm_cli_limits_take(int argc, char **argv, int *i, icm_cli_limits_args *a)
{
    int m = icm_cli_opt_value(argc, argv, i, "--max-delete", &a->files);
    if (m == 0)
        m = icm_cli_opt_value(argc, argv, i, "--max-delete-bytes", &a->bytes);
    if (m == 0)
        m = icm_cli_opt_value(argc, argv, i, "--max-delete-percent", &a->percent);
    if (m == 0)
        m = icm_cli_opt_value(argc, argv, i, "--trash", &a->trash);
    return m;
}

/* A whole number of bytes with an optional binary unit (see the file comment). */
static bool parse_bytes(const char *text, int64_t *out)
{
    static const char *const units[][3] = {{"k", "kb", "kib"}, {"m", "mb", "mib"},
                                           {"g", "gb", "gib"}, {"t", "tb", "tib"},
                                           {"p", "pb", "pib"}};
    if (!isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || v > (unsigned long long)INT64_MAX)
        return false;
    int shift = 0;
    if (*end != '\0' && strcasecmp(end, "b") != 0) {
        for (size_t u = 0; shift == 0 && u < sizeof units / sizeof units[0]; u++)
            for (size_t k = 0; k < 3; k++)
                if (strcasecmp(end, units[u][k]) == 0)
                    shift = 10 * (int)(u + 1);
        if (shift == 0)
            return false;
    }
    if (shift > 0 && v > ((unsigned long long)INT64_MAX >> shift))
        return false;
    *out = (int64_t)(v << shift);
    return true;
}

/* A percentage: a decimal number from 0 to 100. */
static bool parse_percent(const char *text, double *out)
{
    if (!isdigit((unsigned char)text[0]) && text[0] != '.')
        return false;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0.0 && v <= 100.0))
        return false;
    *out = v;
    return true;
}

int icm_cli_limits_build(const icm_cli_limits_args *a, icm_delete_limits *out)
{
    icm_delete_limits none = ICM_DELETE_LIMITS_NONE;
    *out = none;
    if (a->files != NULL && (!icm_cli_parse_int64(a->files, &out->max_files) ||
                             out->max_files < 0))
        return icm_cli_usage(a->files, "--max-delete: expected a whole number of files (0 or "
                                       "more)");
    if (a->bytes != NULL && !parse_bytes(a->bytes, &out->max_bytes))
        return icm_cli_usage(a->bytes, "--max-delete-bytes: expected a whole number of bytes, "
                                       "optionally with a binary unit (k, m, g, t, p: 10g = 10 "
                                       "x 1024^3)");
    if (a->percent != NULL && !parse_percent(a->percent, &out->max_percent))
        return icm_cli_usage(a->percent, "--max-delete-percent: expected a percentage from 0 "
                                         "to 100");
    return ICM_EXIT_OK;
}

bool icm_cli_limits_set(const icm_delete_limits *l)
{
    return l->max_files >= 0 || l->max_bytes >= 0 || l->max_percent >= 0;
}
