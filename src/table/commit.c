/*
 * table/commit.c: the commit retry loop (table/commit.h).
 */
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "table/commit.h"
#include "util/util.h"

static int64_t property_int(const icm_table_metadata *md, const char *key, int64_t dflt)
{
    const char *v = icm_table_metadata_property(md, key);
    if (v == NULL)
        return dflt;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    return end != v && *end == '\0' && n >= 0 ? (int64_t)n : dflt;
}

void icm__commit_policy_read(const icm_table_metadata *md, icm__commit_policy *out)
{
    out->num_retries =
        property_int(md, ICM__COMMIT_NUM_RETRIES, ICM__COMMIT_NUM_RETRIES_DEFAULT);
    out->min_wait_ms =
        property_int(md, ICM__COMMIT_MIN_WAIT_MS, ICM__COMMIT_MIN_WAIT_MS_DEFAULT);
    out->max_wait_ms =
        property_int(md, ICM__COMMIT_MAX_WAIT_MS, ICM__COMMIT_MAX_WAIT_MS_DEFAULT);
    out->total_timeout_ms =
        property_int(md, ICM__COMMIT_TOTAL_TIMEOUT_MS, ICM__COMMIT_TOTAL_TIMEOUT_MS_DEFAULT);
}

/* Java Tasks: min(min_wait * 2^(retry-1), max_wait) plus up to 10% jitter. */
int64_t icm__commit_backoff_ms(const icm__commit_policy *p, int retry)
{
    int64_t d = p->min_wait_ms;
    for (int i = 1; i < retry && d < p->max_wait_ms; i++)
        d *= 2;
    if (d > p->max_wait_ms)
        d = p->max_wait_ms;
    uint32_t r = 0;
    if (d >= 10 && getrandom(&r, sizeof r, 0) == (ssize_t)sizeof r)
        d += (int64_t)(r % (uint32_t)(d / 10));
    return d;
}

int icm__table_commit_retrying(icm_table *t, const icm__commit_policy *policy,
                               icm__commit_attempt_fn attempt, void *payload,
                               icm__commit_outcome *out)
{
    out->attempts = 0;
    out->committed = false;
    out->refresh_failed = false;
    int64_t start = icm__now_ms();
    for (;;) {
        icm_table_changes *changes = NULL;
        int rc = attempt(t, &changes, payload);
        if (rc != 0 || changes == NULL)
            return rc;
        out->attempts++;
        rc = icm_table_commit_changes(t, changes);
        if (rc == 0)
            out->committed = true;
        /* Only a definitive rejection is retried; an unknown outcome never is. */
        if (rc != ICM_ECOMMIT_FAILED) {
            icm_table_changes_free(changes);
            return rc;
        }
        bool last = out->attempts > policy->num_retries ||
                    icm__now_ms() - start >= policy->total_timeout_ms;
        if (!last)
            icm__sleep_ms(icm__commit_backoff_ms(policy, out->attempts));
        /* The refreshed table may hold this attempt's own snapshot: a gateway in front of the
         * catalog passed the request on and answered with a conflict (adversary round 20, H3).
         * It then applied, and a retry would take its snapshot for another writer's and
         * its caller delete the files it wrote. Also looked for after the last attempt. */
        icm__error_saved *saved = icm__error_save();
        int refreshed = icm_table_refresh(t);
        bool applied = refreshed == 0 && icm__table_conflict_applied(t, changes);
        icm_table_changes_free(changes);
        if (applied) {
            icm__free(saved);
            out->committed = true;
            icm_error_clear();
            return 0;
        }
        if (refreshed != 0 && !last) {
            icm__free(saved); /* the refresh's error explains the end */
            out->refresh_failed = true;
            return refreshed;
        }
        icm__error_restore(saved);
        if (last)
            return rc;
    }
}
