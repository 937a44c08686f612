/*
 * icemaint/check.h: table integrity check — does every file a snapshot needs exist, with the
 * size the metadata records? (`icemaint check`: the same verification expiry and the sweep do
 * before deleting, on its own.)
 *
 * For each chosen snapshot, the files it needs are the ones snapshot expiry and the orphan
 * sweep keep for it (the same reachability walk): its manifest list; every manifest the list
 * names (size: the list's manifest_length); every live (ADDED or EXISTING) data file, position
 * or equality delete file and deletion-vector Puffin file those manifests name (size: the
 * entry's file_size_in_bytes; a Puffin file holding many vectors is one file); and its
 * statistics and partition-statistics files (size: file_size_in_bytes in the table metadata).
 * The table's metadata file is checked once, for existence (nothing records its size).
 * Manifest lists have no recorded size: they are checked for existence. A manifest list or
 * manifest that exists but cannot be read is a problem too (its files cannot be checked).
 *
 * Files are looked up through the FileIO (so a path map applies: a file is looked for where
 * it really is) and reported by the location the metadata gives them. Each manifest's entries
 * are read once and each file found fine is stat'ed once however many snapshots need them; a
 * file with a problem is reported in every chosen snapshot that needs it.
 *
 * Never deletes, writes or commits: the implementation references no FileIO call that
 * creates, writes or deletes (tests/unit/test_verify.c checks the object file with nm).
 *
 * Rule's source: Iceberg table spec ("Manifest Lists": manifest_length; "Manifests":
 * file_size_in_bytes; "Table Statistics": file-size-in-bytes; "Deletion Vectors").
 */
#ifndef ICEMAINT_CHECK_H
#define ICEMAINT_CHECK_H

#include "common.h"
#include "fileio.h"
#include "metadata.h"

ICM_BEGIN_DECL

/** Kind of a checked file (the CLI contract's `kind` names). Values 0-7 are those of
 *  icm_expire_file_kind. */
typedef enum icm_check_file_kind {
    ICM_CHECK_FILE_DATA = 0,                 /**< "data" */
    ICM_CHECK_FILE_POSITION_DELETES = 1,     /**< "position_deletes" */
    ICM_CHECK_FILE_EQUALITY_DELETES = 2,     /**< "equality_deletes" */
    ICM_CHECK_FILE_DELETION_VECTOR = 3,      /**< "deletion_vector" (a Puffin file) */
    ICM_CHECK_FILE_MANIFEST = 4,             /**< "manifest" */
    ICM_CHECK_FILE_MANIFEST_LIST = 5,        /**< "manifest_list" */
    ICM_CHECK_FILE_STATISTICS = 6,           /**< "statistics" */
    ICM_CHECK_FILE_PARTITION_STATISTICS = 7, /**< "partition_statistics" */
    ICM_CHECK_FILE_METADATA = 8              /**< "metadata" (the table metadata file) */
} icm_check_file_kind;
#define ICM_CHECK_FILE_KIND_COUNT 9

/** The contract name of a kind; "other" when out of range. Static storage. */
ICM_EXTERN(const char *) icm_check_file_kind_name(icm_check_file_kind kind);

/** What is wrong with a file. */
typedef enum icm_check_problem_kind {
    ICM_CHECK_MISSING = 0,    /**< "missing": no such file */
    ICM_CHECK_WRONG_SIZE = 1, /**< "wrong_size": its size differs from the recorded one */
    ICM_CHECK_UNREADABLE = 2  /**< "unreadable": it could not be stat'ed, or (a manifest list
                                   or manifest) it exists but could not be read */
} icm_check_problem_kind;

/** "missing", "wrong_size", "unreadable"; "other" when out of range. Static storage. */
ICM_EXTERN(const char *) icm_check_problem_kind_name(icm_check_problem_kind problem);

/** One problem: a file and what is wrong with it. Strings are owned by the result. */
typedef struct icm_check_problem {
    icm_check_problem_kind problem;
    icm_check_file_kind kind;
    char *path;                   /**< the location as the metadata names it */
    int64_t expected_size_bytes;  /**< the recorded size; -1 when none is recorded */
    int64_t actual_size_bytes;    /**< the size found; -1 when missing or unknown */
    int code;                     /**< UNREADABLE: the icm error code; else 0 */
    char *message;                /**< one line saying what is wrong */
} icm_check_problem;

/** One checked snapshot. */
typedef struct icm_check_snapshot {
    int64_t snapshot_id;
    /** Files the snapshot needs: its manifest list, manifests and statistics files (each
     *  once), plus the live entries of its manifests (a file two of its manifests list counts
     *  twice). The metadata file is not counted: see icm_check_result. */
    size_t files_checked;
    /** Its problems, in walk order, each once: pointers into the result's `problems` (a
     *  problem many snapshots have is one record, so a table whose every file is missing
     *  costs a pointer per snapshot and file, not a copy). */
    const icm_check_problem *const *problems;
    size_t problem_count;
} icm_check_snapshot;

/** What a check found. Everything is owned by the result (icm_check_result_free). */
typedef struct icm_check_result {
    char *metadata_location;      /**< the metadata file checked (NULL when not given) */
    /** The metadata file's problem (it is missing or cannot be stat'ed), a pointer into
     *  `problems`; NULL when none. */
    const icm_check_problem *metadata_problem;
    /** Every distinct problem (file, what is wrong, recorded size), once. */
    icm_check_problem *problems;
    size_t problem_count;
    icm_check_snapshot *snapshots; /**< in the order asked for (--all: metadata order) */
    size_t snapshot_count;
    size_t files_checked;         /**< distinct files checked over all snapshots, the
                                       metadata file included */
    size_t total_problems;        /**< the metadata file's problem (0 or 1) plus every
                                       snapshot's problem_count: 0 means clean */
    /** Set (one line, owned by the result) when the metadata file does not lie in the table's
     *  own metadata folders or names places of another table (a copy's metadata names the
     *  original's location: icm_table_check_own_metadata's rule), so the files checked are
     *  where the metadata names them, perhaps the original's; NULL otherwise. Not a
     *  problem: total_problems does not count it. */
    char *own_metadata_warning;
} icm_check_result;

ICM_EXTERN(void) icm_check_result_free(icm_check_result *result);

/** Options of icm_check_table(). Initialise with ICM_CHECK_OPTIONS_INIT. */
typedef struct icm_check_options {
    unsigned int version;
    /** Every snapshot of the metadata (snapshot_ids is then ignored). */
    bool all;
    /** The snapshots to check (borrowed); none (NULL, 0) and !all = the current snapshot
     *  (no snapshot at all when the table has no current snapshot). */
    const int64_t *snapshot_ids;
    size_t snapshot_id_count;
} icm_check_options;

#define ICM_CHECK_OPTIONS_VERSION 1
#define ICM_CHECK_OPTIONS_INIT {ICM_CHECK_OPTIONS_VERSION, false, NULL, 0}

/** Set `opts` to the defaults of `version` (as ICM_CHECK_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_check_options_init(icm_check_options *opts, unsigned version);

/**
 * Check that the files the chosen snapshots need exist with their recorded sizes (see the
 * file comment). Problems are findings, not errors: the call returns 0 with them in *out.
 *
 * @param[out] out          new result (icm_check_result_free); NULL on failure
 * @param io                the table's FileIO (only read and stat'ed)
 * @param md                the table metadata (borrowed, not changed)
 * @param metadata_location the metadata file md was read from, checked for existence; NULL =
 *                          not checked
 * @param opts              NULL = the current snapshot
 * @return 0; ICM_ENOTFOUND (a snapshot id that is not in the metadata; the message names it);
 *         ICM_EINVALID (NULL io, md or out, or an unknown options version); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_check_table(icm_check_result **out, icm_fileio *io,
                                const icm_table_metadata *md, const char *metadata_location,
                                const icm_check_options *opts);

ICM_END_DECL

#endif /* ICEMAINT_CHECK_H */
