/*
 * maint/delete_limits.c: the guard rails of issue #21 (`--max-delete N`, `--max-delete-bytes B`,
 * `--max-delete-percent P`). A run that would delete more than the operator expects is usually
 * a run that went wrong: a forgotten --path-map that makes every live file look unreferenced, a
 * cutoff typed in the wrong unit, a reviewed plan applied to the wrong table. The bounds are
 * checked on the whole plan before the first delete (expiry: before its commit as well), so a
 * refused run has deleted nothing; one file or byte or percent over a bound refuses, exactly at
 * it passes.
 */
#include <inttypes.h>
#include <stdint.h>

#include "icemaint/errors.h"
#include "icemaint/maint.h"
#include "util/util.h"

int icm_delete_limits_check(const icm_delete_limits *limits, const char *where, size_t files,
                            int64_t bytes, size_t considered)
{
    if (limits == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, where,
                              "icm_delete_limits_check: limits is NULL");
    if (limits->max_files >= 0 && (uint64_t)files > (uint64_t)limits->max_files)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, where,
                              "the plan deletes %zu files, more than --max-delete %" PRId64
                              "; nothing is deleted", files, limits->max_files);
    if (limits->max_bytes >= 0 && bytes > limits->max_bytes)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, where,
                              "the plan deletes %" PRId64 " bytes, more than --max-delete-bytes "
                              "%" PRId64 "; nothing is deleted", bytes, limits->max_bytes);
    /* files / considered > P / 100, without a division (a NaN bound is off): both sides are exact in a double for
     * any count below 2^53, so a plan exactly at the bound passes. */
    if (limits->max_percent >= 0 && considered > 0 &&
        (double)files * 100.0 > limits->max_percent * (double)considered)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, where,
                              "the plan deletes %zu of %zu files (%.2f%%), more than "
                              "--max-delete-percent %g; nothing is deleted", files, considered,
                              (double)files * 100.0 / (double)considered, limits->max_percent);
    return 0;
}

int64_t icm_delete_limits_add_bytes(int64_t sum, int64_t size_bytes)
{
    if (size_bytes <= 0)
        return sum;
    return sum > INT64_MAX - size_bytes ? INT64_MAX : sum + size_bytes;
}
