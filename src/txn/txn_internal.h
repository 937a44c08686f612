/*
 * txn/txn_internal.h: what the files of the transaction module share: the queued operations,
 * the ledger of files the transaction owns, the transaction struct itself, and the internal
 * functions of each file (txn.c: queue and commit; txn_apply.c: applying operations to a base;
 * txn_snapshot.c: producing a snapshot; txn_md.c: JSON edits of table metadata;
 * txn_location.c: data-file locations). Not installed.
 */
#ifndef ICM_TXN_TXN_INTERNAL_H
#define ICM_TXN_TXN_INTERNAL_H

#include <jansson.h>

#include "icemaint/transaction.h"
#include "util/util.h"

typedef enum txn_op_kind {
    TXN_OP_SNAPSHOT = 0, /* appends / deletes / replace: one new snapshot */
    TXN_OP_PROPERTY,
    TXN_OP_SET_REF,
    TXN_OP_REMOVE_REF,
    TXN_OP_SET_CURRENT,
    TXN_OP_METADATA_FN
} txn_op_kind;

/* A data or delete file the transaction adds: a deep copy of the caller's description. */
typedef struct txn_add {
    icm_data_file df;      /* every string and raw span owned by this struct */
    bool check_duplicate;  /* add-files: refuse a path that is already live */
} txn_add;

/* A manifest of added files, written once and reused by later attempts while its header
 * inputs (format version, schema, spec, snapshot id) stay the same: its entries inherit
 * sequence numbers and row ids from the manifest list, so they do not depend on the base. */
typedef struct txn_cached_manifest {
    char *location;          /* NULL until written */
    icm_manifest_file mf;    /* counts from the writer; manifest_path = location */
    int format_version;
    int32_t schema_id, spec_id;
    int64_t snapshot_id;
} txn_cached_manifest;

typedef struct txn_snapshot_op {
    bool replace;            /* icm_txn_replace_files: operation "replace" */
    icm__ptrvec adds;        /* txn_add* */
    icm__ptrvec removes;     /* char* locations as given */
    bool has_snapshot_id;    /* chosen at the first apply, kept across attempts */
    int64_t snapshot_id;
    txn_cached_manifest data_manifest, delete_manifest;
} txn_snapshot_op;

typedef struct txn_op {
    txn_op_kind kind;
    char *key, *value;             /* PROPERTY (value NULL = remove) */
    char *name;                    /* SET_REF, REMOVE_REF */
    icm_ref_type ref_type;
    bool replace;                  /* SET_REF: replace an existing ref */
    bool has_snapshot_id;          /* SET_REF; SET_CURRENT always has one */
    int64_t snapshot_id;
    bool has_retention;
    icm_ref_retention retention;
    bool rollback;                 /* SET_CURRENT: must be an ancestor */
    icm_txn_metadata_fn fn;        /* METADATA_FN */
    void *payload;
    txn_snapshot_op *snap;         /* SNAPSHOT */
} txn_op;

/* A file the transaction wrote or handed out. `last_attempt` is the attempt whose metadata
 * referenced it last (0: never), so after success everything not used by the final attempt is
 * superseded. */
typedef struct txn_owned {
    char *location;
    int last_attempt;
} txn_owned;

typedef enum txn_state {
    TXN_OPEN = 0,
    TXN_COMMITTED,   /* success (or nothing to do) */
    TXN_FAILED,      /* failed; owned files deleted */
    TXN_UNKNOWN,     /* outcome unknown; owned files kept forever */
    TXN_ABORTED
} txn_state;

struct icm_txn {
    icm_table *table;
    icm__ptrvec ops;         /* txn_op* in queue order */
    icm__ptrvec owned;       /* txn_owned* */
    txn_state state;
    int attempt;             /* 1-based number of the attempt being applied/committed */
    bool apply_failed;       /* the latest attempt failed before anything was sent */
    char commit_uuid[37];    /* names this transaction's manifests and lists */
    unsigned manifest_counter;
    unsigned data_file_counter;
    int64_t *base_ids;       /* sorted snapshot ids of the table when the commit began */
    size_t n_base_ids;
    char *base_uuid;         /* its table-uuid (NULL: none) */
    bool sent;               /* a commit request was sent (icm_txn_commit) */
};

/* ---- txn.c ---- */
/* Record `location` (copied) as owned and used by the current attempt. */
int icm__txn_own(icm_txn *txn, const char *location, bool used_now);
/* The ledger's spelling of `location` when the transaction owns it (as find_owned matches:
 * by location identity) and attempt `keep_attempt` does not use it (0: any), else NULL.
 * Borrowed from the ledger. */
const char *icm__txn_owned_location(icm_txn *txn, const char *location, int keep_attempt);
/* Take `location` out of the ledger again (no-op when not there): a write whose outcome is
 * unknown and that is not proven ours must never be deleted by the cleanup. */
void icm__txn_disown(icm_txn *txn, const char *location);
/* Mark an owned location as used by the current attempt; false when it is not owned. */
bool icm__txn_mark_used(icm_txn *txn, const char *location);
/* A failed validation of an operation against the base: ICM_EINVALID-like `code` on the first
 * attempt (bad input), ICM_ECOMMIT_FAILED on a retry (a concurrent commit made it impossible). */
int icm__txn_invalid(const icm_txn *txn, int code, const char *location, const char *fmt, ...)
    ICM__PRINTF(4, 5);

/* ---- txn_apply.c ---- */
/* Apply every queued operation to a copy of `base`: *out_changes, the attempt's requirements
 * and updates (Java's UpdateRequirements for the updates), and *out, base with them applied
 * (both new). Files written are owned. */
int icm__txn_apply(icm_txn *txn, const icm_table_metadata *base,
                   icm_table_changes **out_changes, icm_table_metadata **out);

/* ---- txn_snapshot.c ---- */
/* Produce the snapshot of `op` on top of `md`'s main branch and add it to `md` (edited) and
 * to the updates `c`. */
int icm__txn_apply_snapshot(icm_txn *txn, txn_snapshot_op *op, icm_table_changes *c,
                            icm_table_metadata *md);

/* ---- txn_md.c: updates, appended to `c` and applied to `md` (completely or not at all) ---- */
/* add-snapshot of `snapshot` (taken) and set-snapshot-ref of `main` to it (keeping main's
 * retention fields): snapshots, last-sequence-number (v2+), next-row-id (v3),
 * current-snapshot-id, snapshot-log. */
int icm__txn_md_add_snapshot(icm_table_changes *c, icm_table_metadata *md, json_t *snapshot_take);
/* set-snapshot-ref of `name` to `snapshot_id`. retention NULL keeps the ref's fields (none for
 * a new ref). A branch named main also moves current-snapshot-id and logs it. */
int icm__txn_md_set_ref(icm_table_changes *c, icm_table_metadata *md, const char *name,
                        icm_ref_type type, int64_t snapshot_id,
                        const icm_ref_retention *retention);
/* `schema.name-mapping.default` built from the current schema (new string, icm__free). */
int icm__txn_name_mapping_json(const icm_table_metadata *md, char **out);
/* Directory for new metadata files: `write.metadata.path` or `<location>/metadata` (new). */
char *icm__txn_metadata_dir(const icm_table_metadata *md);

/* ---- txn_location.c ---- */
/* MurmurHash3 x86 32-bit, seed 0 (Guava murmur3_32_fixed, Python mmh3.hash). */
uint32_t icm__murmur3_32(const void *data, size_t len);
/* Location of new data file `file_name` under the table's rules (see icm_txn_new_data_file). */
int icm__txn_data_location(const icm_table_metadata *md, const char *partition_path,
                           const char *file_name, char **out);

/* ---- txn_reach.c ---- */
/* The snapshot ids of `base`, sorted, for icm__txn_reached (*out: icm__free). 0 or ICM_ENOMEM. */
int icm__txn_base_ids(const icm_table_metadata *base, int64_t **out, size_t *n_out);
/* Reload the table and tell whether it reaches a file this transaction owns that attempt
 * `keep_attempt` does not use (0: any owned file): the snapshots the reload has and `base_ids`
 * (the table before the commit, sorted) had not, their manifest lists and manifests, and the
 * entries of the manifests they added when the transaction handed out data-file locations.
 * *out_hit = the owned location reached (borrowed from the ledger), or NULL.
 * @return 0 (the answer is in *out_hit); the codes of icm_table_refresh and of reading the
 *         lists and manifests (a file that is gone is passed over). The table holds the reload
 *         after a successful refresh. */
int icm__txn_reached(icm_txn *txn, const int64_t *base_ids, size_t n_base, int keep_attempt,
                     const char **out_hit);

#endif /* ICM_TXN_TXN_INTERNAL_H */
