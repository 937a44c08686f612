/*
 * util/parallel.h: a loop whose iterations run on several threads at once (internal).
 *
 * For checks that are one storage request each (the first bytes of a candidate, a stat) on an
 * object store, where a request is tens of milliseconds of waiting: run one at a time they
 * take as long as the requests added up; run N at a time, about 1/N of it. The iterations are
 * independent: fn(ctx, i) writes only its own results (slot i of the caller's arrays), reads
 * only what no iteration changes, and keeps its own failure (its thread's last error is not
 * the caller's).
 */
#ifndef ICM_UTIL_PARALLEL_H
#define ICM_UTIL_PARALLEL_H

#include <stddef.h>

/* Run fn(ctx, i) for every i in [0, n), on up to `threads` threads (the calling thread is one
 * of them), each taking the next index not yet taken; returns when all n are done. With
 * threads < 2, n < 2, or no thread to be had, they run in order on the calling thread. */
void icm__parallel_for(size_t n, unsigned threads, void (*fn)(void *ctx, size_t i), void *ctx);

#endif /* ICM_UTIL_PARALLEL_H */
