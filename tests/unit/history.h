/*
 * tests/unit/history.h: test support — build Iceberg table histories on any FileIO (normally
 * the in-memory one) through a scripted catalog, for the expiry and keep-set tests.
 *
 * A history keeps its own model of the table (snapshots, manifests with their entries, refs,
 * snapshot-log, statistics, schemas, specs, properties). Every operation writes real files with
 * the library's manifest writers (data files get small placeholder contents), renders the whole
 * metadata JSON from the model and commits it through icm_table_commit, so tests exercise the
 * real commit path. Before each operation the model is re-synchronised with the table, so an
 * expiry in between (which removes snapshots, refs, statistics, specs and schemas) is taken into
 * account.
 *
 * The model is the tests' oracle: hist_reachable() lists what snapshots reach computed from the
 * model alone (not from the keep-set code under test).
 *
 * Operations abort the test (cmocka fail) on any library error; they return the new snapshot id.
 * File names are short names ("A") that become `<location>/data/A.parquet` etc.
 */
#ifndef ICM_TEST_HISTORY_H
#define ICM_TEST_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/catalog.h"
#include "icemaint/fileio.h"
#include "icemaint/manifest.h"

typedef struct hist hist;

/* Outcome the scripted catalog gives to the next commit (then it reverts to NORMAL). */
typedef enum hist_commit_script {
    HIST_COMMIT_NORMAL = 0,
    HIST_COMMIT_FAILED,            /* nothing swapped, ICM_ECOMMIT_FAILED */
    HIST_COMMIT_UNKNOWN_APPLIED,   /* swapped, but reported unknown; reconciling cannot load */
    HIST_COMMIT_UNKNOWN_NOT_APPLIED /* not swapped, reported unknown */
} hist_commit_script;

/* New table at `location` on `io` (borrowed) with format version 1, 2 or 3. v1_embedded: v1
 * snapshots carry `manifests` instead of a manifest list. Time starts at start_ms. */
hist *hist_new(icm_fileio *io, const char *location, int format_version, bool v1_embedded,
               int64_t start_ms);
void hist_free(hist *h);

/* A fresh table handle loaded through the scripted catalog (caller frees). */
icm_table *hist_open_table(hist *h);
icm_fileio *hist_io(hist *h);
const char *hist_location(hist *h);

/* The timestamp of the next snapshot (each snapshot then advances the clock by 1000 ms). */
void hist_set_time(hist *h, int64_t ms);
int64_t hist_time(const hist *h);

/* Location helpers: `<location>/data/<name>.parquet`, `-deletes.parquet`, `.puffin`. */
char *hist_data_path(hist *h, const char *name);
/* Spell `<location>` differently in the paths of data and delete files added from now on
 * (another spelling of the table location, such as `file://` + location); NULL: the location. */
void hist_set_data_location(hist *h, const char *location);

/* ---- snapshot-producing operations. `branch` NULL = a staged snapshot (parent: main's head,
 *      no ref moves). File lists are NULL-terminated short names. ---- */
int64_t hist_append(hist *h, const char *branch, ...);                /* names, NULL */
int64_t hist_delete(hist *h, const char *branch, ...);                /* names, NULL */
/* add: NULL-terminated array; del: NULL-terminated array */
int64_t hist_overwrite(hist *h, const char *branch, const char *const *add,
                       const char *const *del);
/* A position-delete file `<name>-deletes.parquet` for data file `data_name`. */
int64_t hist_position_delete(hist *h, const char *branch, const char *name,
                             const char *data_name);
/* An equality-delete file `<name>-eq.parquet`. */
int64_t hist_equality_delete(hist *h, const char *branch, const char *name);
/* v3: one Puffin file `<name>.puffin` holding deletion vectors for the data files (NULL
 * terminated); one DV entry per data file. */
int64_t hist_deletion_vectors(hist *h, const char *branch, const char *name, ...);
/* A file to add: short name, content, Puffin (deletion vector), and for position deletes and
 * DVs the short name of the data file they apply to. */
typedef struct hist_file {
    const char *name;
    icm_file_content content;
    bool puffin;
    const char *referenced_name;
} hist_file;
/* The general producer: add files, mark files (by short name: "A" for A.parquet, "P-deletes"
 * for P-deletes.parquet, "X" for X.puffin) DELETED in rewritten manifests. */
int64_t hist_commit_files(hist *h, const char *branch, const char *operation,
                          const hist_file *add, size_t n_add, const char *const *del);
/* Java's default append (MergeAppend) drops carried manifests without live entries, like
 * every delete/overwrite here; the default (false) is FastAppend, which keeps them. */
void hist_set_merge_append(hist *h, bool merge);
/* Replace every data manifest of the branch head with one manifest holding all live data files
 * as EXISTING (RewriteManifests). */
int64_t hist_rewrite_manifests(hist *h, const char *branch);

/* ---- refs and other metadata changes (each commits) ---- */
void hist_branch(hist *h, const char *name, int64_t snapshot_id);
void hist_tag(hist *h, const char *name, int64_t snapshot_id);
/* Retention of a ref; pass -1 to leave a value unset. */
void hist_ref_retention(hist *h, const char *name, int64_t max_ref_age_ms,
                        int64_t max_snapshot_age_ms, int32_t min_snapshots_to_keep);
/* Move a branch head (rollback / reset / cherry-pick fast-forward). For main this also moves
 * current-snapshot-id and adds a snapshot-log entry. */
void hist_set_head(hist *h, const char *branch, int64_t snapshot_id);
void hist_set_property(hist *h, const char *key, const char *value);
/* Write `location` as the metadata's table location from now on (files stay where they are). */
void hist_set_table_location(hist *h, const char *location);
/* Add a statistics (or partition-statistics) file at `<location>/metadata/<name>` for a
 * snapshot (the file is written). Returns its location (owned by the history). */
const char *hist_add_statistics(hist *h, int64_t snapshot_id, const char *name,
                                bool partition_statistics);
/* New schema (becomes current) / new unpartitioned spec (becomes default); return the id. */
int32_t hist_add_schema(hist *h);
int32_t hist_add_spec(hist *h);

/* ---- commit scripting ---- */
void hist_script_next_commit(hist *h, hist_commit_script script);
/* Run fn(h, arg) inside the next catalog commit, before its compare-and-swap: a concurrent
 * writer. */
void hist_before_next_commit(hist *h, void (*fn)(hist *h, void *arg), void *arg);

/* ---- the model as oracle ---- */
int64_t hist_head(hist *h, const char *branch);
/* Every file the given snapshots reach (lists, manifests, live entries, their statistics),
 * as a sorted, de-duplicated, NULL-terminated array of locations (free with hist_strv_free).
 * ids NULL = every snapshot in the model. */
char **hist_reachable(hist *h, const int64_t *ids, size_t n);
/* Ids of every snapshot in the model (sorted), count in *n (free with free()). */
int64_t *hist_snapshot_ids(hist *h, size_t *n);
/* The manifest list and manifests of one snapshot (NULL-terminated, hist_strv_free). */
char **hist_snapshot_files(hist *h, int64_t snapshot_id, bool manifests);
/* Re-read the table and drop what it no longer has (done automatically before operations). */
void hist_sync(hist *h);

/* Short names of the live data files (and with_delete_files also delete files: "X-deletes",
 * "X-eq", Puffin "X") of a snapshot (hist_strv_free). */
char **hist_live_names(hist *h, int64_t snapshot_id, bool with_delete_files);

void hist_strv_free(char **v);
size_t hist_strv_len(char *const *v);
bool hist_strv_has(char *const *v, const char *s);

#endif /* ICM_TEST_HISTORY_H */
