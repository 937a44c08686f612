/*
 * maint/delete_engine.h: the one delete engine of the maintenance commands (internal; issue #17
 * section 4). Snapshot expiry (expire.c) and the orphan sweep (orphans.c) plan which files go;
 * they hand the plan to icm__delete_run, which runs the delete phase of icemaint/maint.h:
 *
 *  - order: by rank (below), stable within a rank; a batch never spans two ranks, so every
 *    file of a rank is settled before the first file of the next one is started;
 *  - batches: at most `batch_files` files and `batch_ms` of deleting each (no file is started
 *    after that time, the first always is); before every batch the caller's before_batch hook
 *    runs (the table reload, the keep set's growth, the lease), and files it no longer plans
 *    (its `planned` hook says so) are passed over, never deleted and never reported;
 *  - right before its delete request a file passes the caller's check hook: the link check,
 *    the sweep's re-stat; the hook may keep it, fail it, or find it gone;
 *  - deletes go through icm_fileio_delete_batch, on up to `threads` threads (the calling thread
 *    is one of them). A local file is deleted alone right after its own check (the local back
 *    end deletes one file per system call anyway, and the check stays right before the
 *    unlink); object-store keys go up to ICM_FILEIO_DELETE_BATCH_MAX per request, each request
 *    right after the checks of its keys;
 *  - a failure the back end marks retryable is tried again, after a wait growing from
 *    retry_min_wait_ms by doubling up to retry_max_wait_ms (plus up to 10% jitter), while
 *    fewer than retry_attempts attempts were made and the waits stay within
 *    retry_total_wait_ms; any other failure is final at once. A retry is made in a later
 *    batch of the same rank, so it passes before_batch, planned and check again exactly as
 *    the first attempt did: a file that joined the keep set during the wait is not re-sent;
 *  - outcomes: each file's (DELETED, ALREADY_GONE, FAILED, or KEPT by its check) is recorded
 *    through the caller's record hook and then, unless KEPT, reported to on_delete, on the
 *    calling thread, in batch order, after its batch ran, the last reported file of the batch
 *    with batch_end; a callback that returns non-zero stops the run after that batch
 *    (ICM_EUSER): no later file of the batch is reported and no further file is started.
 *
 * Ranks, and why that order is safe on a crash at any point. Every file of a plan is outside
 * the keep set of the committed (or, for the sweep, current) metadata: no retained snapshot
 * reaches it, so a run that stops after any prefix of the plan (crash, lost lease, failed
 * reload, callback) has removed nothing a reader of the table needs, whatever the order. The
 * order decides what such a stop leaves behind: files are deleted bottom-up along the
 * reference graph — data and delete files (named by manifests), then manifests (named by
 * manifest lists), then manifest lists (named by metadata files), then statistics and other
 * metadata files, checksum companions last (each only once its file is gone). So no file is
 * deleted while a file of the plan that names it still waits: what a stop leaves is closed
 * upward (a left manifest's list is left too), every leftover is still reached from a left
 * manifest list or metadata file of the plan, and the orphan sweep finds all of it as one
 * tree; never is a manifest list gone while manifests it names were still to be deleted, which
 * would strand them. A checksum companion left without its file, the reverse, cannot happen.
 *
 * Only executing files include this header (icm_fileio_delete_batch is a deleting call): the
 * planning files must not, and the dry-run tests check their object files.
 */
#ifndef ICM_MAINT_DELETE_ENGINE_H
#define ICM_MAINT_DELETE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/fileio.h"
#include "icemaint/maint.h"
#include "maint/link_guard.h"

/* The order of the delete phase, first to last (see the file comment). */
typedef enum icm__delete_rank {
    ICM__DELETE_RANK_CONTENT = 0,      /* data files, delete files, deletion vectors */
    ICM__DELETE_RANK_MANIFEST = 1,
    ICM__DELETE_RANK_MANIFEST_LIST = 2,
    ICM__DELETE_RANK_METADATA = 3,     /* statistics files; the sweep's metadata and other files */
    ICM__DELETE_RANK_COMPANION = 4     /* checksum companions (after every file they go with) */
} icm__delete_rank;
#define ICM__DELETE_RANK_COUNT 5

/* What happened to a file; PENDING until its batch ran. */
typedef enum icm__delete_state {
    ICM__DELETE_PENDING = 0,
    ICM__DELETE_DELETED,      /* it existed and was deleted */
    ICM__DELETE_GONE,         /* it did not exist when its turn came (not an error) */
    ICM__DELETE_FAILED,       /* code, message */
    ICM__DELETE_KEPT,         /* its check kept it on purpose (code, message); not reported */
    ICM__DELETE_DROPPED       /* no longer planned when its turn came; not acted on */
} icm__delete_state;

/* One file of a plan. The caller fills the first five fields; the engine the rest. */
typedef struct icm__delete_item {
    const char *path;         /* borrowed for the run */
    const char *kind;         /* the contract's kind name, for on_delete (borrowed) */
    int64_t size_bytes;       /* -1 when unknown */
    icm__delete_rank rank;
    size_t ref;               /* the caller's own handle (an index into its plan) */
    icm__delete_state state;
    int code;                 /* FAILED or KEPT: the icm code */
    char *message;            /* FAILED or KEPT: one line (owned; NULL when none or on OOM);
                                 a record hook may take it (set it NULL) */
    unsigned attempts;        /* delete requests made for it */
    /* While its check runs: the file's stat, made ahead with the rest of its object-store
     * chunk's when the hooks ask for it (check_stats; read it with icm__delete_item_stat);
     * else NULL. */
    struct icm__probe *stat_ahead;
} icm__delete_item;

/* A check's verdict on one file, right before its delete request. */
typedef enum icm__delete_verdict {
    ICM__VERDICT_DELETE = 0,  /* go on and delete it */
    ICM__VERDICT_GONE,        /* it is gone already: ALREADY_GONE, no request */
    ICM__VERDICT_KEPT,        /* keep it, not an error: *code, last error's message */
    ICM__VERDICT_FAILED       /* do not delete it, an error: *code, last error's message */
} icm__delete_verdict;

/*
 * The planner's side of the run. Every hook but `check` runs on the calling thread; `check`
 * runs on the worker threads at once (it may only read shared state, and the `cache` it gets
 * is its thread's own). NULL hooks do nothing (check: always DELETE; planned: always true).
 */
typedef struct icm__delete_hooks {
    void *ctx;
    /* Once when the run reaches `rank` (in order; also for ranks without files), before its
     * first batch. Non-zero stops the run with that code. */
    int (*enter_rank)(void *ctx, icm__delete_rank rank);
    /* Before every batch, and only when some file is still to be deleted: reload the table,
     * grow the keep set, renew the lease, make the checks' state for the batch. Non-zero stops
     * the run with that code (the hook records why). */
    int (*before_batch)(void *ctx);
    /* After every before_batch call, whatever it returned (also when the run stops there):
     * dispose of what before_batch made. */
    void (*after_batch)(void *ctx);
    /* Is the file still to be deleted? false: DROPPED (the caller records why). */
    bool (*planned)(void *ctx, const icm__delete_item *item);
    icm__delete_verdict (*check)(void *ctx, icm__link_cache *cache,
                                 const icm__delete_item *item, int *code);
    /* check stats each file (with icm__delete_item_stat): the engine then stats the files of
     * an object-store chunk all at once right before their checks (io/probe.h: HEADs, many in
     * flight, from one thread), instead of one request per check. */
    bool check_stats;
    /* Each file of a batch that ran, in batch order, whatever the run does next. */
    void (*record)(void *ctx, icm__delete_item *item);
    /* Then, while the run goes on, the caller's accounting of it (a problem entry, say):
     * non-zero stops the run with that code after this batch (no later file is reported). */
    int (*account)(void *ctx, const icm__delete_item *item);
    /* Progress, about once per 1000 files handled and never from another thread. */
    void (*progress)(void *ctx, size_t done, size_t total);
    /* Message of the ICM_EUSER a callback's stop returns ("...; the files after it were not
     * deleted"); NULL: a generic one. */
    const char *stop_message;
} icm__delete_hooks;

/* How a run goes. ICM__DELETE_POLICY_INIT gives the delete phase's defaults (icemaint/maint.h:
 * ICM_DELETE_BATCH_MS, ICM_DELETE_RETRY_*). */
typedef struct icm__delete_policy {
    size_t batch_files;          /* files per batch; 0 = ICM_DELETE_BATCH_FILES */
    int64_t batch_ms;            /* no file is started this long after its batch began */
    unsigned threads;            /* 0 or 1 = the calling thread only; at most 64 are used */
    unsigned retry_attempts;     /* 0 or 1 = no retry */
    int64_t retry_min_wait_ms;
    int64_t retry_max_wait_ms;
    int64_t retry_total_wait_ms; /* the waits between a rank's retry passes, together */
    icm_delete_cb on_delete;     /* NULL = none */
    void *on_delete_payload;
    /* Move into this trash instead of deleting (maint/trash.h): each request of a chunk, right
     * after its checks, is icm__trash_move_batch in place of icm_fileio_delete_batch, with the
     * same outcomes, so every check, hook, retry and report is the same; NULL = delete. */
    struct icm__trash *trash;
} icm__delete_policy;

#define ICM__DELETE_POLICY_INIT                                                              \
    {0, ICM_DELETE_BATCH_MS, 1, ICM_DELETE_RETRY_ATTEMPTS, ICM_DELETE_RETRY_MIN_WAIT_MS,     \
     ICM_DELETE_RETRY_MAX_WAIT_MS, ICM_DELETE_RETRY_TOTAL_WAIT_MS, NULL, NULL, NULL}

/* What a run did (for callers' counts and tests). */
typedef struct icm__delete_stats {
    size_t deleted, gone, failed, kept, dropped;
    size_t batches;              /* batches run */
    size_t requests;             /* icm_fileio_delete_batch calls */
    size_t retries;              /* files due for another attempt (each time) */
} icm__delete_stats;

/*
 * Run the delete phase over items[0, n) (see the file comment). Items stay where they are
 * (the engine keeps its own order); their state, code, message and attempts are set as files
 * are handled, and files not reached stay PENDING. `stats` may be NULL.
 * Returns 0 when every file was handled; otherwise what stopped the run: a hook's code,
 * ICM_EUSER (on_delete asked to stop; the last error says so) or ICM_ENOMEM.
 */
int icm__delete_run(icm_fileio *io, icm__delete_item *items, size_t n,
                    const icm__delete_policy *policy, const icm__delete_hooks *hooks,
                    icm__delete_stats *stats);

/* Free the messages items still own. */
void icm__delete_items_dispose(icm__delete_item *items, size_t n);

/* In a check hook: the stat of item->path, as icm_fileio_stat(io, item->path, out) gives it
 * (code, *out, the last error), from the stat made ahead of the check when there is one (it is
 * used up: call this once per check). */
int icm__delete_item_stat(icm_fileio *io, const icm__delete_item *item, icm_file_info *out);

#endif /* ICM_MAINT_DELETE_ENGINE_H */
