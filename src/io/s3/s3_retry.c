/*
 * io/s3/s3_retry.c: which S3 answers are worth another attempt, how long to wait before it,
 * and how many requests to keep in flight while the store pushes back (see s3_internal.h).
 *
 * The classes follow botocore's "standard" retry mode (retries/standard.py): HTTP 500, 502,
 * 503, 504, RequestTimeout (which arrives as a 400), the throttling codes, and connections that
 * dropped. Waits are full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"):
 * uniform in [0, min(cap, base * 2^n)], so clients that failed together do not come back
 * together. Throttling also lowers the number of requests in flight (AIMD), because S3 answers
 * SlowDown while it scales a prefix, and hammering it with the same concurrency under backoff
 * is slower than backing off the concurrency itself.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "icemaint/errors.h"
#include "io/s3/s3_internal.h"

static const char *const THROTTLING[] = {
    "SlowDown", "Throttling", "ThrottlingException", "ThrottledException",
    "RequestThrottledException", "TooManyRequestsException", "RequestLimitExceeded",
    "BandwidthLimitExceeded", "ProvisionedThroughputExceededException",
    "TransactionInProgressException", "EC2ThrottledException", "PriorRequestNotComplete"};

static const char *const TRANSIENT[] = {"RequestTimeout", "RequestTimeoutException",
                                        "InternalError", "ServiceUnavailable"};

static bool in(const char *code, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(code, list[i]) == 0)
            return true;
    return false;
}

icm__s3_retry icm__s3_retry_classify(int status, const char *code, int transport)
{
    if (status == 0)
        return transport == ICM_ENET || transport == ICM_ETIMEOUT ? ICM__S3_RETRY_TRANSIENT
                                                                   : ICM__S3_NO_RETRY;
    if (code == NULL)
        code = "";
    if (in(code, THROTTLING, sizeof THROTTLING / sizeof THROTTLING[0]) || status == 429)
        return ICM__S3_RETRY_THROTTLED;
    if (strcmp(code, "ExpiredToken") == 0 || strcmp(code, "TokenRefreshRequired") == 0)
        return ICM__S3_RETRY_EXPIRED;
    if (strcmp(code, "RequestTimeTooSkewed") == 0)
        return ICM__S3_RETRY_SKEWED;
    if (in(code, TRANSIENT, sizeof TRANSIENT / sizeof TRANSIENT[0]))
        return ICM__S3_RETRY_TRANSIENT;
    if (status == 500 || status == 502 || status == 503 || status == 504)
        return ICM__S3_RETRY_TRANSIENT;
    return ICM__S3_NO_RETRY;
}

int64_t icm__s3_backoff_ms(unsigned retry, int64_t base_ms, int64_t cap_ms, uint64_t rand64)
{
    if (retry == 0 || base_ms <= 0 || cap_ms <= 0)
        return 0;
    int64_t ceiling = base_ms;
    for (unsigned i = 1; i < retry && ceiling < cap_ms; i++)
        ceiling *= 2;
    if (ceiling > cap_ms)
        ceiling = cap_ms;
    return (int64_t)(rand64 % (uint64_t)(ceiling + 1));
}

uint64_t icm__s3_random(void)
{
    /* splitmix64 over a shared counter seeded from the clock: cheap, thread-safe, and
     * different between processes that start together (for jitter, not for secrets) */
    static _Atomic uint64_t counter;
    static atomic_bool seeded;
    if (!atomic_load(&seeded)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t expected = 0;
        atomic_compare_exchange_strong(&counter, &expected,
                                       (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                                           (uint64_t)(uintptr_t)&ts);
        atomic_store(&seeded, true);
    }
    uint64_t z = atomic_fetch_add(&counter, UINT64_C(0x9E3779B97F4A7C15)) +
                 UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void icm__s3_limiter_init(icm__s3_limiter *l, unsigned max)
{
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    l->max = max > 0 ? max : 1;
    l->limit = l->max;
    l->in_flight = 0;
    l->successes = 0;
    l->generation = 0;
}

void icm__s3_limiter_destroy(icm__s3_limiter *l)
{
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
}

uint64_t icm__s3_limiter_acquire(icm__s3_limiter *l)
{
    pthread_mutex_lock(&l->lock);
    while (l->in_flight >= l->limit)
        pthread_cond_wait(&l->cond, &l->lock);
    l->in_flight++;
    uint64_t g = l->generation;
    pthread_mutex_unlock(&l->lock);
    return g;
}

bool icm__s3_limiter_try_acquire(icm__s3_limiter *l, uint64_t *generation)
{
    pthread_mutex_lock(&l->lock);
    bool got = l->in_flight < l->limit;
    if (got) {
        l->in_flight++;
        *generation = l->generation;
    }
    pthread_mutex_unlock(&l->lock);
    return got;
}

/* Caller holds the lock. */
static void lower(icm__s3_limiter *l, uint64_t generation)
{
    l->successes = 0;
    if (generation == l->generation) {
        l->limit = l->limit / 2 > 0 ? l->limit / 2 : 1;
        l->generation++;
    }
}

void icm__s3_limiter_throttled(icm__s3_limiter *l, uint64_t generation)
{
    pthread_mutex_lock(&l->lock);
    lower(l, generation);
    pthread_mutex_unlock(&l->lock);
}

void icm__s3_limiter_release(icm__s3_limiter *l, uint64_t generation, bool throttled)
{
    pthread_mutex_lock(&l->lock);
    l->in_flight--;
    if (throttled) {
        lower(l, generation);
    } else if (l->limit < l->max && ++l->successes >= l->limit) {
        l->limit++;
        l->successes = 0;
    }
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

unsigned icm__s3_limiter_limit(icm__s3_limiter *l)
{
    pthread_mutex_lock(&l->lock);
    unsigned v = l->limit;
    pthread_mutex_unlock(&l->lock);
    return v;
}
