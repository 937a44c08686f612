/*
 * util/ahead.h: jobs done ahead, in order, on a second thread (internal).
 *
 * Jobs 0..n-1 are started in order, at most `window` jobs ahead of the caller, who takes their
 * results in the same order: icm__ahead_get(i) returns once job i is done, and
 * icm__ahead_release(i) hands its slot back for job i + window. A worker thread does the jobs;
 * the caller, instead of waiting in get(i), does job i itself when the worker has not started
 * it, or else the next job not yet started (so both cores work when the caller has nothing else
 * to do). So two jobs may run at once, on different slots: a job must be safe to run
 * concurrently with another job of the same ring. Job i writes only to slot i % window, which
 * the caller reads only between get(i) and release(i): a slot is never used by both threads at
 * once. When no thread can be started (or n < 2), each job runs on the caller's thread inside
 * get(i): the same results, without the overlap. Since get() may run jobs on the calling
 * thread, it may change that thread's last error (jobs keep their failures in their slots).
 *
 * Users: manifest-list reading and manifest decoding in the keep-set walk
 * (manifest/bulk_reader.c). The sweep's callback-driven listing batches names in a ring of its
 * own (io/list_ahead.c).
 */
#ifndef ICM_UTIL_AHEAD_H
#define ICM_UTIL_AHEAD_H

#include <stddef.h>

typedef struct icm__ahead icm__ahead;

/* Do job i, writing its whole result into `slot`. */
typedef void (*icm__ahead_job)(void *ctx, size_t i, void *slot);

/* `slots`: window * slot_size bytes (borrowed; the caller owns what jobs leave in them).
 * Returns 0 or ICM_ENOMEM. */
int icm__ahead_start(icm__ahead **out, size_t n, size_t window, void *slots, size_t slot_size,
                     icm__ahead_job job, void *ctx);
/* Job i's slot once the job is done; i must be the job after the last released one. */
void *icm__ahead_get(icm__ahead *a, size_t i);
void icm__ahead_release(icm__ahead *a, size_t i);
/* Stop (a job being done is finished first), join, free. NULL is fine. */
void icm__ahead_finish(icm__ahead *a);

#endif /* ICM_UTIL_AHEAD_H */
