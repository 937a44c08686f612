/*
 * table/commit.h: the one retry policy every commit of icemaint goes through (commit.c), for
 * snapshot expiry and transactions. Internal.
 *
 * Java's rule (TableProperties COMMIT_* and Tasks): a commit that is definitively rejected
 * (ICM_ECOMMIT_FAILED: the compare-and-swap lost, or a requirement no longer holds) is tried
 * again, after a wait of min(min-wait-ms * 2^(retry-1), max-wait-ms) plus up to 10% jitter,
 * at most num-retries times and while less than total-timeout-ms has passed. Each retry
 * refreshes the table and asks the caller again for its requirements and updates, decided on
 * the refreshed base. Nothing else is retried: ICM_ECOMMIT_UNKNOWN (the change may have
 * landed) ends the loop at once, as does any other error.
 */
#ifndef ICM_TABLE_COMMIT_H
#define ICM_TABLE_COMMIT_H

#include "icemaint/catalog.h"
#include "icemaint/update.h"

/* Java TableProperties commit.retry.* names and defaults. */
#define ICM__COMMIT_NUM_RETRIES "commit.retry.num-retries"
#define ICM__COMMIT_NUM_RETRIES_DEFAULT 4
#define ICM__COMMIT_MIN_WAIT_MS "commit.retry.min-wait-ms"
#define ICM__COMMIT_MIN_WAIT_MS_DEFAULT 100
#define ICM__COMMIT_MAX_WAIT_MS "commit.retry.max-wait-ms"
#define ICM__COMMIT_MAX_WAIT_MS_DEFAULT 60000 /* 1 minute */
#define ICM__COMMIT_TOTAL_TIMEOUT_MS "commit.retry.total-timeout-ms"
#define ICM__COMMIT_TOTAL_TIMEOUT_MS_DEFAULT 1800000 /* 30 minutes */

typedef struct icm__commit_policy {
    int64_t num_retries, min_wait_ms, max_wait_ms, total_timeout_ms;
} icm__commit_policy;

/* The policy of the table properties of `md`; a value that is not a non-negative integer
 * counts as absent (the default). */
void icm__commit_policy_read(const icm_table_metadata *md, icm__commit_policy *out);

/* The wait before retry number `retry` (1-based), jitter included. */
int64_t icm__commit_backoff_ms(const icm__commit_policy *p, int retry);

/*
 * The changes of one attempt, decided on icm_table_get_metadata(t) (refreshed before every
 * retry). Return 0 with *out NULL when there is nothing to commit (the loop ends with 0 and
 * nothing committed); *out is taken. Any error ends the loop with it.
 */
typedef int (*icm__commit_attempt_fn)(icm_table *t, icm_table_changes **out, void *payload);

typedef struct icm__commit_outcome {
    int attempts;        /* commits tried */
    bool committed;      /* the last one landed */
    bool refresh_failed; /* a conflict, then the refresh failed: the loop's code is its */
} icm__commit_outcome;

/*
 * Run `attempt` and icm_table_commit_changes under `policy`. Returns 0 (committed, or nothing
 * to commit: see out->committed), ICM_ECOMMIT_FAILED (retries or time used up; the last error
 * is the last rejection's), ICM_ECOMMIT_UNKNOWN, the refresh's code (out->refresh_failed), or
 * the code of `attempt` or of the commit.
 */
int icm__table_commit_retrying(icm_table *t, const icm__commit_policy *policy,
                               icm__commit_attempt_fn attempt, void *payload,
                               icm__commit_outcome *out);

/*
 * After a conflict (ICM_ECOMMIT_FAILED) and a refresh of `t`: whether the refreshed metadata
 * holds the own snapshot of `changes` (icm_table_changes_seen: ICM_CHANGES_SEEN_OURS), so the
 * commit applied although its answer said otherwise. Then `t` is marked as after a
 * reconciled commit (icm_table_last_commit_reconciled, a commit warning naming the conflict,
 * icm_table_last_commit_location the current metadata file) and true is returned.
 */
bool icm__table_conflict_applied(icm_table *t, const icm_table_changes *changes);

#endif /* ICM_TABLE_COMMIT_H */
