/*
 * icemaint/testing/fileio.h: FileIO back ends for tests: an in-memory store and a
 * fault-injecting wrapper (SQLite's test VFS idea).
 *
 * NOT PART OF THE STABLE ABI. These functions may change or go between any two releases. They
 * are compiled into the library (ICM_TESTING_BACKENDS, on by default) because the library's own
 * tests, benchmarks, fuzzers and the CLI's hidden test options use them; a build configured
 * with -DICM_TESTING_BACKENDS=OFF leaves them out (and the resolving FileIO then has no `mem`
 * scheme). Applications should not call them.
 */
#ifndef ICEMAINT_TESTING_FILEIO_H
#define ICEMAINT_TESTING_FILEIO_H

#include "../fileio.h"

ICM_BEGIN_DECL

/** Operation kinds, used by the fault-injecting wrapper. */
typedef enum icm_io_op {
    ICM_IO_READ = 0,    /**< read whole object and read range */
    ICM_IO_WRITE,       /**< create-new and write-replace */
    ICM_IO_DELETE,
    ICM_IO_STAT,
    ICM_IO_LIST,        /**< each listing call (not each entry) */
    ICM_IO_OP_COUNT
} icm_io_op;

/** In-memory store for tests: objects keyed by normalised location; mtime from a clock that the
 *  test may set with icm_fileio_mem_set_time(). @return 0, ICM_ENOMEM. */
ICM_EXTERN(int) icm_fileio_mem_new(icm_fileio **out);
/** Set the in-memory store's clock (ms since epoch) used as mtime of later writes; -1 = real
 *  clock. */
ICM_EXTERN(void) icm_fileio_mem_set_time(icm_fileio *mem, int64_t now_ms);

/**
 * Fault injection: wraps `inner` (taken: freed with the wrapper, or at once on failure).
 * Every call is one counted operation of its icm_io_op kind (a listing is one operation; a
 * delete batch is one ICM_IO_DELETE operation per item, the items admitted in order and the
 * surviving ones passed on in one inner batch). An
 * operation is either passed on unchanged or rejected before reaching `inner`: a rejected
 * operation has no effect at all (a failed write leaves nothing, a failed delete deletes
 * nothing). Thread-safe: decisions and counters are taken under a mutex.
 * @return 0, ICM_EINVALID (NULL argument), ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_fileio_fault_new(icm_fileio **out, icm_fileio *inner_take);
/** Fail exactly the nth (1-based) operation of kind `op` counted after this call, once, with
 *  `code` (ICM_EIO if 0 or positive); nth 0 disarms. Replaces an earlier pending fault of that
 *  kind. No effect on a handle that is not a fault FileIO. */
ICM_EXTERN(void) icm_fileio_fault_fail_nth(icm_fileio *fault, icm_io_op op, uint64_t nth,
                                           int code);
/** Flags of icm_fileio_fault_fail_span(). ICM_FAULT_RETRYABLE: a delete-batch item rejected by
 *  this fault is reported retryable (icm_fileio_delete_result.retryable), as an object store
 *  reports a throttled or 5xx delete. */
#define ICM_FAULT_RETRYABLE 1u
/** Fail `count` operations of kind `op` in a row, from the nth (1-based) counted after this
 *  call, each with `code` (ICM_EIO if 0 or positive); nth 0 or count 0 disarms. Replaces an
 *  earlier pending fault of that kind; fail_nth(op, nth, code) is fail_span(op, nth, 1, code,
 *  0). @param flags 0 or ICM_FAULT_RETRYABLE. */
ICM_EXTERN(void) icm_fileio_fault_fail_span(icm_fileio *fault, icm_io_op op, uint64_t nth,
                                            uint64_t count, int code, unsigned flags);
/** fail_nth whose rejected delete-batch item is reported retryable (ICM_FAULT_RETRYABLE). */
ICM_EXTERN(void) icm_fileio_fault_fail_nth_retryable(icm_fileio *fault, icm_io_op op,
                                                     uint64_t nth, int code);
/** "Crash" after n more operations: the next n operations of any kind are passed on (they may
 *  still fail on their own or by fail_nth); every later one fails with ICM_EIO and has no
 *  effect, until icm_fileio_fault_reset(). A crash wins over a pending fail_nth. 0 disarms. */
ICM_EXTERN(void) icm_fileio_fault_crash_after(icm_fileio *fault, uint64_t n);
/** Make the nth (1-based) create-new counted after this call, once, end in
 *  ICM_EOUTCOME_UNKNOWN, as a conditional write whose answer was lost: with `applied` the inner
 *  create runs first (the object is written, unless it existed), without it the inner back end
 *  never sees it. The create is still one ICM_IO_WRITE operation, and a rejection by fail_nth
 *  or a crash wins (then nothing is written and the code is theirs). nth 0 disarms. */
ICM_EXTERN(void) icm_fileio_fault_create_outcome_unknown(icm_fileio *fault, uint64_t nth,
                                                         bool applied);
/** Operations of kind op seen so far (counted whether or not they failed or were rejected). */
ICM_EXTERN(uint64_t) icm_fileio_fault_count(const icm_fileio *fault, icm_io_op op);
/** Total operations of any kind seen so far. */
ICM_EXTERN(uint64_t) icm_fileio_fault_total(const icm_fileio *fault);
/** True once a crash has happened. */
ICM_EXTERN(bool) icm_fileio_fault_crashed(const icm_fileio *fault);
/** Clear counters, pending faults and the crash state. */
ICM_EXTERN(void) icm_fileio_fault_reset(icm_fileio *fault);

ICM_END_DECL

#endif /* ICEMAINT_TESTING_FILEIO_H */
