/*
 * io/fault.c: a FileIO wrapper that injects failures, for crash-point and error-path tests
 * (SQLite's test VFS / faultsim idea).
 *
 * Exact semantics (tests rely on them):
 *  - Every call that reaches the wrapper is one operation of its kind (icm_io_op) and is
 *    counted, whatever its outcome. A listing is one operation, however many entries it has.
 *  - An operation is either passed to the inner back end unchanged, or rejected: then it fails
 *    with the injected code, the inner back end never sees it, and so it has no effect at all
 *    (a rejected write leaves nothing behind, a rejected delete deletes nothing).
 *  - fail_nth(op, n, code) rejects exactly the n-th operation of kind `op` counted after the
 *    call, once; later operations pass again. A new fail_nth for the same kind replaces it.
 *    fail_span(op, n, count, code, flags) rejects `count` operations from the n-th on;
 *    ICM_FAULT_RETRYABLE marks the rejected deletes of a batch retryable.
 *  - create_outcome_unknown(n, applied) ends the n-th create-new in ICM_EOUTCOME_UNKNOWN, after
 *    passing it on (applied) or not: a conditional write whose answer was lost.
 *  - A delete batch is one ICM_IO_DELETE operation per item, admitted in item order: rejected
 *    items are FAILED (and not deleted), the rest go to the inner back end in one batch.
 *  - crash_after(n) lets exactly n more operations (of any kind) through and rejects every
 *    later one with ICM_EIO until icm_fileio_fault_reset(), as if the process had died there.
 *    A crash wins over a pending fail_nth.
 * Decisions are taken under a mutex, so concurrent callers see one consistent numbering.
 */
#include <pthread.h>

#include "icemaint/sys/fileio.h"
#include "io/fileio_internal.h"
#include "icemaint/testing/fileio.h"
#include "util/util.h"

typedef struct fault_fileio {
    icm_fileio base;
    icm_fileio *inner;
    pthread_mutex_t lock; /* mutable so the const getters can lock */
    uint64_t count[ICM_IO_OP_COUNT];
    uint64_t fail_at[ICM_IO_OP_COUNT];   /* first value of count[op] to reject; 0 = none */
    uint64_t fail_left[ICM_IO_OP_COUNT]; /* how many from fail_at on are still to reject */
    int fail_code[ICM_IO_OP_COUNT];
    bool fail_retryable[ICM_IO_OP_COUNT];
    uint64_t creates;         /* create-new calls seen */
    uint64_t unknown_at;      /* value of creates whose answer is "lost"; 0 = none */
    bool unknown_applied;     /* ... after the inner create ran */
    uint64_t total;
    uint64_t crash_at; /* first value of total to reject; 0 = no crash armed */
    bool crashed;
} fault_fileio;

static const icm_fileio_methods fault_methods;

static const char *const op_names[ICM_IO_OP_COUNT] = {"read", "write", "delete", "stat",
                                                      "list"};

/* Count one operation and decide whether to reject it: returns 0 to pass it on, or the
 * negative code it fails with (the last error is set, naming the location); *retryable tells
 * whether an injected failure was armed as retryable. */
static int admit_ex(fault_fileio *f, icm_io_op op, const char *location, bool *retryable)
{
    pthread_mutex_lock(&f->lock);
    uint64_t n = ++f->count[op];
    uint64_t total = ++f->total;
    int code = 0;
    *retryable = false;
    if (f->crash_at != 0 && total >= f->crash_at)
        f->crashed = true;
    bool crashed = f->crashed;
    if (crashed) {
        code = ICM_EIO;
    } else if (f->fail_left[op] > 0 && n >= f->fail_at[op]) {
        code = f->fail_code[op];
        *retryable = f->fail_retryable[op];
        if (--f->fail_left[op] == 0)
            f->fail_at[op] = 0;
    }
    pthread_mutex_unlock(&f->lock);
    if (code == 0)
        return 0;
    if (crashed)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, location,
                              "injected crash: %s #%llu (operation %llu overall) refused",
                              op_names[op], (unsigned long long)n, (unsigned long long)total);
    return icm__error_set(ICM_ERRCLASS_IO, code, location, "injected fault: %s #%llu failed%s",
                          op_names[op], (unsigned long long)n,
                          *retryable ? " (retryable)" : "");
}

static int admit(fault_fileio *f, icm_io_op op, const char *location)
{
    bool retryable;
    return admit_ex(f, op, location, &retryable);
}

static int fault_read(icm_fileio *io, const char *location, char **out, size_t *out_len)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_READ, location);
    return rc < 0 ? rc : icm_fileio_read(out, out_len, f->inner, location);
}

static int fault_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                            size_t len, size_t *out_read)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_READ, location);
    return rc < 0 ? rc : icm_fileio_read_range(out_read, f->inner, location, offset, buf, len);
}

static int fault_create_new(icm_fileio *io, const char *location, const void *data, size_t len)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_WRITE, location);
    pthread_mutex_lock(&f->lock);
    uint64_t n = ++f->creates;
    bool hit = f->unknown_at != 0 && n == f->unknown_at;
    bool lost = hit && rc == 0; /* a rejection wins, and uses the injection up */
    bool applied = f->unknown_applied;
    if (hit)
        f->unknown_at = 0;
    pthread_mutex_unlock(&f->lock);
    if (rc < 0)
        return rc;
    if (!lost)
        return icm_fileio_create_new(f->inner, location, data, len);
    if (applied)
        (void)icm_fileio_create_new(f->inner, location, data, len); /* its answer is "lost" */
    return icm__error_set(ICM_ERRCLASS_IO, ICM_EOUTCOME_UNKNOWN, location,
                          "injected lost answer: create #%llu %s; outcome unknown",
                          (unsigned long long)n,
                          applied ? "was applied" : "never reached the store");
}

static int fault_write_replace(icm_fileio *io, const char *location, const void *data,
                               size_t len)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_WRITE, location);
    return rc < 0 ? rc : icm_fileio_write_replace(f->inner, location, data, len);
}

static int fault_remove(icm_fileio *io, const char *location)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_DELETE, location);
    return rc < 0 ? rc : icm_fileio_delete(f->inner, location);
}

static int fault_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_STAT, location);
    return rc < 0 ? rc : icm_fileio_stat(out, f->inner, location);
}

static int fault_list(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                      void *payload)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_LIST, prefix);
    return rc < 0 ? rc : icm_fileio_list_flags(f->inner, prefix, flags, cb, payload);
}

static int fault_list_range(icm_fileio *io, const char *prefix,
                            const icm_fileio_list_options *opts, icm_list_cb cb, void *payload)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_LIST, prefix);
    return rc < 0 ? rc : icm_fileio_list_opts(f->inner, prefix, opts, cb, payload);
}

static int fault_resolve(icm_fileio *io, const char *location, char **out)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_STAT, location);
    return rc < 0 ? rc : icm_fileio_resolve(out, f->inner, location);
}

static int fault_checksum_of(icm_fileio *io, const char *location, char **out,
                             icm_file_info *info)
{
    fault_fileio *f = (fault_fileio *)io;
    int rc = admit(f, ICM_IO_STAT, location);
    return rc < 0 ? rc : icm_fileio_checksum_of(out, info, f->inner, location);
}

/* Each item is one admitted delete; the survivors go on in one inner batch. The room to
 * gather them is taken before any item is counted, so a failed allocation changes nothing. */
static int fault_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                              icm_fileio_delete_result *results)
{
    fault_fileio *f = (fault_fileio *)io;
    const char **pass = icm__calloc(n, sizeof *pass);
    size_t *pass_idx = icm__calloc(n, sizeof *pass_idx);
    icm_fileio_delete_result *pass_res = icm__calloc(n, sizeof *pass_res);
    int rc = pass != NULL && pass_idx != NULL && pass_res != NULL ? 0 : ICM_ENOMEM;
    if (pass_res != NULL)
        ICM_FILEIO_DELETE_RESULTS_INIT(pass_res, n);
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        bool retryable;
        int arc = admit_ex(f, ICM_IO_DELETE, locations[i], &retryable);
        if (arc < 0) {
            icm_fileio_delete_result_fail(&results[i], arc, retryable);
            continue;
        }
        pass[k] = locations[i];
        pass_idx[k++] = i;
    }
    if (rc == 0 && k > 0) {
        /* 0, or a whole-batch failure with every pass_res FAILED: either way each has one */
        (void)icm_fileio_delete_batch(pass_res, f->inner, pass, k);
        for (size_t j = 0; j < k; j++)
            results[pass_idx[j]] = pass_res[j];
    }
    icm__free(pass);
    icm__free(pass_idx);
    icm__free(pass_res);
    return rc;
}

static void fault_free(icm_fileio *io)
{
    fault_fileio *f = (fault_fileio *)io;
    icm_fileio_free(f->inner);
    pthread_mutex_destroy(&f->lock);
    icm__free(f);
}

static int fault_is_local(icm_fileio *io, const char *location)
{
    return icm__fileio_deletes_locally(((fault_fileio *)io)->inner, location);
}

static const icm_fileio_methods fault_methods = {
    ICM_FILEIO_METHODS_VERSION,
    "fault",
    fault_read,
    fault_read_range,
    fault_create_new,
    fault_write_replace,
    fault_remove,
    fault_stat,
    NULL, /* list: list_flags instead */
    fault_free,
    fault_list,
    fault_resolve,
    fault_checksum_of,
    fault_delete_batch,
    fault_list_range,
    fault_is_local,
};

int icm_fileio_fault_new(icm_fileio **out, icm_fileio *inner_take)
{
    if (out == NULL || inner_take == NULL) {
        icm_fileio_free(inner_take);
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                              "fault FileIO: NULL output or inner back end");
    }
    *out = NULL;
    fault_fileio *f = icm__calloc(1, sizeof *f);
    if (f == NULL) {
        icm_fileio_free(inner_take);
        return ICM_ENOMEM;
    }
    if (pthread_mutex_init(&f->lock, NULL) != 0) {
        icm__free(f);
        icm_fileio_free(inner_take);
        return icm__error_set(ICM_ERRCLASS_OS, ICM_ERROR, NULL, "cannot create mutex");
    }
    f->base.methods = &fault_methods;
    f->inner = inner_take;
    *out = &f->base;
    return 0;
}

/* The wrapper behind a handle, or NULL when it is not a fault FileIO. */
static fault_fileio *as_fault(const icm_fileio *io)
{
    return (io != NULL && io->methods == &fault_methods) ? (fault_fileio *)(uintptr_t)io : NULL;
}

void icm_fileio_fault_fail_span(icm_fileio *fault, icm_io_op op, uint64_t nth, uint64_t count,
                                int code, unsigned flags)
{
    fault_fileio *f = as_fault(fault);
    if (f == NULL || (unsigned)op >= ICM_IO_OP_COUNT)
        return;
    pthread_mutex_lock(&f->lock);
    bool off = nth == 0 || count == 0;
    f->fail_at[op] = off ? 0 : f->count[op] + nth;
    f->fail_left[op] = off ? 0 : count;
    f->fail_code[op] = code < 0 ? code : ICM_EIO;
    f->fail_retryable[op] = (flags & ICM_FAULT_RETRYABLE) != 0;
    pthread_mutex_unlock(&f->lock);
}

void icm_fileio_fault_fail_nth(icm_fileio *fault, icm_io_op op, uint64_t nth, int code)
{
    icm_fileio_fault_fail_span(fault, op, nth, 1, code, 0);
}

void icm_fileio_fault_fail_nth_retryable(icm_fileio *fault, icm_io_op op, uint64_t nth,
                                         int code)
{
    icm_fileio_fault_fail_span(fault, op, nth, 1, code, ICM_FAULT_RETRYABLE);
}

void icm_fileio_fault_crash_after(icm_fileio *fault, uint64_t n)
{
    fault_fileio *f = as_fault(fault);
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->lock);
    f->crash_at = n == 0 ? 0 : f->total + n + 1;
    pthread_mutex_unlock(&f->lock);
}

void icm_fileio_fault_create_outcome_unknown(icm_fileio *fault, uint64_t nth, bool applied)
{
    fault_fileio *f = as_fault(fault);
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->lock);
    f->unknown_at = nth == 0 ? 0 : f->creates + nth;
    f->unknown_applied = applied;
    pthread_mutex_unlock(&f->lock);
}

uint64_t icm_fileio_fault_count(const icm_fileio *fault, icm_io_op op)
{
    fault_fileio *f = as_fault(fault);
    if (f == NULL || (unsigned)op >= ICM_IO_OP_COUNT)
        return 0;
    pthread_mutex_lock(&f->lock);
    uint64_t n = f->count[op];
    pthread_mutex_unlock(&f->lock);
    return n;
}

uint64_t icm_fileio_fault_total(const icm_fileio *fault)
{
    fault_fileio *f = as_fault(fault);
    if (f == NULL)
        return 0;
    pthread_mutex_lock(&f->lock);
    uint64_t n = f->total;
    pthread_mutex_unlock(&f->lock);
    return n;
}

bool icm_fileio_fault_crashed(const icm_fileio *fault)
{
    fault_fileio *f = as_fault(fault);
    if (f == NULL)
        return false;
    pthread_mutex_lock(&f->lock);
    bool crashed = f->crashed;
    pthread_mutex_unlock(&f->lock);
    return crashed;
}

void icm_fileio_fault_reset(icm_fileio *fault)
{
    fault_fileio *f = as_fault(fault);
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->lock);
    for (int op = 0; op < ICM_IO_OP_COUNT; op++) {
        f->count[op] = 0;
        f->fail_at[op] = 0;
        f->fail_left[op] = 0;
        f->fail_code[op] = 0;
        f->fail_retryable[op] = false;
    }
    f->creates = 0;
    f->unknown_at = 0;
    f->unknown_applied = false;
    f->total = 0;
    f->crash_at = 0;
    f->crashed = false;
    pthread_mutex_unlock(&f->lock);
}
