/*
 * maint/expire_verify.c: expiry's verification before it deletes (expire.h, "Verification";
 * issue #16 class 4): every file the retained snapshots reference inside the table's locations
 * must exist, with the size the metadata records where it records one, or nothing is deleted.
 *
 * What is at risk decides what is verified. Manifest lists and statistics files of expired
 * snapshots are named by the metadata JSON itself, which no damaged Avro file can rename, so a
 * plan of only those needs nothing. A manifest is named by manifest lists: when one is planned,
 * the retained manifest lists, manifests and statistics files are verified. A data or delete
 * file is named by manifests: when one is planned, every retained manifest is read and every
 * live file it names is verified too. Files outside the table location, write.data.path and
 * write.metadata.path are never deleted, so they are looked at only where one bears the name
 * or the recorded size of a data or delete file planned for deletion: a damaged entry that
 * moved a live file's path out of the places (one flipped bit in its prefix) leaves its name
 * as it was, and one whose whole path changed onto another file keeps its recorded size (a
 * size that differs from the outside file's would be the only trace, and a file of that size
 * may exist). Such a reference refuses nothing: the planned files it may stand for (same name
 * or same size) are kept, each reported (ICM_EXPIRE_PROBLEM_LIVE_CONTENT, a warning), and the
 * rest of the plan goes on. Inside the places, a retained entry may have been renamed onto
 * another file of its size, which passes its stat: a planned file whose own entry agrees with
 * such an entry (size, record count, format, bounds) and whose bytes are not those of the file
 * it names is its twin (verify.h, verify_twins.c), and kept the same way.
 *
 * How: a stat per retained file (verify.c). Listing the folders that hold candidates instead
 * would need the orphan sweep's name matching (a listing names files in its own form, the
 * metadata in the writer's); the measured costs of both are in docs/BENCHMARKS.md.
 *
 * Only reads storage (tests/unit/test_verify.c checks the object file with nm).
 */
#include <string.h>

#include "catalog/catalog_internal.h"
#include "maint/expire_internal.h"
#include "maint/verify.h"
#include "util/location.h"
#include "util/util.h"

/* The first missing files named in the refusal, and kept as problems. */
#define NAMED 10

typedef struct missing {
    icm_expire_result *r;
    size_t count;
    icm__buf names; /* "PATH (KIND, snapshot ID), ..." of the first NAMED */
    icm__verify_refs refs; /* the retained references outside that look like planned files */
    icm__verify_refs twins; /* those inside that record a planned file's size */
    icm__verify_table table; /* the metadata before the expiry, for the twins' schemas (the
                                 snapshot that added a retained file may be expired, and its
                                 schema removed: adversary round 21, D2) */
} missing;

static int on_issue(const icm__verify_issue *issue, void *payload)
{
    missing *m = payload;
    if (issue->what == ICM__VERIFY_LOOKALIKE) {
        icm__reached ref = {issue->location, issue->kind, issue->expected_size_bytes,
                            issue->snapshot_id, -1, ICM_FILE_FORMAT_OTHER, 0, INT64_MIN,
                            {NULL, 0}, {NULL, 0}, {0, 0}, NULL, 0, 0};
        return icm__verify_refs_add(&m->refs, &ref);
    }
    if (m->count++ >= NAMED)
        return 0;
    const char *kind = icm_expire_file_kind_name((icm_expire_file_kind)issue->kind);
    char *message;
    if (issue->what == ICM__VERIFY_MISSING)
        message = icm__sprintf("%s referenced by retained snapshot %lld is missing", kind,
                               (long long)issue->snapshot_id);
    else if (issue->what == ICM__VERIFY_SIZE)
        message = icm__sprintf("%s referenced by retained snapshot %lld is %lld bytes, but the "
                               "metadata records %lld",
                               kind, (long long)issue->snapshot_id,
                               (long long)issue->actual_size_bytes,
                               (long long)issue->expected_size_bytes);
    else
        message = icm__sprintf("%s referenced by retained snapshot %lld cannot be checked: %s",
                               kind, (long long)issue->snapshot_id, issue->message);
    if (message == NULL)
        return ICM_ENOMEM;
    int rc = icm__expire_add_problem(m->r, ICM_EXPIRE_PROBLEM_MISSING, issue->location,
                                     issue->what == ICM__VERIFY_MISSING ? ICM_ENOTFOUND
                                     : issue->what == ICM__VERIFY_SIZE  ? ICM_EINVALID
                                                                        : issue->code,
                                     message);
    icm__free(message);
    icm__verify_issue_name(&m->names, issue, m->count == 1);
    return rc;
}

static void drop_files(icm_expire_file **files, size_t *count)
{
    for (size_t i = 0; i < *count; i++)
        icm__free((*files)[i].path);
    *count = 0;
}

/* Nothing is deleted: the plan is emptied (the arrays stay allocated, empty). */
static void withhold_everything(icm_expire_result *r)
{
    drop_files(&r->deleted_files, &r->deleted_file_count);
    drop_files(&r->deleted_manifests, &r->deleted_manifest_count);
    drop_files(&r->deleted_statistics_files, &r->deleted_statistics_file_count);
    drop_files(&r->deleted_checksum_files, &r->deleted_checksum_file_count);
    icm__expire_result_tally(r);
}

static int refuse(missing *m, const char *table_location)
{
    if (m->count > NAMED)
        icm__buf_printf(&m->names, " and %zu more", m->count - NAMED);
    if (m->names.oom)
        return ICM_ENOMEM;
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, table_location,
                          "verification: %zu file%s the retained snapshots reference %s "
                          "missing, not the size the metadata records, or unreadable: %s; "
                          "nothing is deleted (a damaged manifest may name a "
                          "live file wrongly, so the real one would look unreferenced; "
                          "`icemaint check` lists every problem; --no-verify skips this check)",
                          m->count, m->count == 1 ? "" : "s", m->count == 1 ? "is" : "are",
                          m->names.data != NULL ? m->names.data : "");
}

/* Drop the checksum companion of a kept data or delete file (it goes only with its file). */
static int keep_companion(icm_expire_result *r, const char *path)
{
    bool oom;
    char *crc = icm__location_checksum_name(path, &oom);
    if (oom)
        return ICM_ENOMEM;
    size_t kept = 0;
    int rc = 0;
    for (size_t k = 0; k < r->deleted_checksum_file_count; k++) {
        icm_expire_file *f = &r->deleted_checksum_files[k];
        if (crc == NULL || strcmp(f->path, crc) != 0) {
            r->deleted_checksum_files[kept++] = *f;
            continue;
        }
        if (rc == 0)
            rc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_LIVE_CONTENT, f->path,
                                         ICM_EREFUSED,
                                         "not deleted: the file it is the checksum of is kept");
        icm__free(f->path);
    }
    r->deleted_checksum_file_count = kept;
    icm__free(crc);
    return rc;
}

/* What a planned file's own entries say of it (its variant k of n: each distinct description
 * among its expired entries), into *facts: NULL when unknown. A deletion vector's Puffin file
 * holds the vectors of many data files, each its own entry with its own record count,
 * partition and bounds, and the plan keeps one of them: only its format is said, and that
 * entry's blob, which the file's footer must list (verify_twins.c compares no more; adversary
 * round 15, F1: the partition of the entry kept told the retained entry of another vector in
 * the file apart, and the file went; F2: so did another record count). */
static const icm__verify_twin_facts *own_facts(const icm__expire_entry_facts *e,
                                               const icm_expire_file *f,
                                               icm__verify_twin_facts *facts)
{
    *facts = (icm__verify_twin_facts){-1, 0, ICM_FILE_FORMAT_OTHER, {0, 0}, ICM__VERIFY_NO_BLOB,
                                      INT64_MIN};
    if (f->kind == ICM_EXPIRE_FILE_DELETION_VECTOR) {
        facts->file_format = ICM_FILE_FORMAT_PUFFIN;
        if (e != NULL) /* (the blob of one of its entries: its footer must list it) */
            facts->own_blob = (struct icm__verify_own_blob){e->content_offset,
                                                            e->content_size_bytes,
                                                            e->record_count, e->referenced};
        return facts;
    }
    if (e == NULL)
        return NULL;
    *facts = (icm__verify_twin_facts){e->record_count, e->bounds,    e->file_format,
                                      e->partition,    ICM__VERIFY_NO_BLOB, e->added_snapshot_id};
    return facts;
}

/* Whether a retained reference may stand for the planned file `f` (then *msg says so): one
 * outside the places with its name or size (a lookalike), one inside whose entry agrees with
 * the file's and whose file is not it (a twin); judged against every description the file's
 * expired entries give (one damaged entry may be a copy of any of them: adversary round 18,
 * F1), and against the file's content where no description agrees (an entry of the file
 * added again with metrics none of them has: round 19, L2), kept when any says so. */
static int stood_for(missing *m, icm_fileio *io, const icm_expire_file *f, char **msg)
{
    *msg = NULL;
    /* (outside, any reference of its name or size: the file's expired entries need not
     * describe the damaged one, since a file deleted and then added again from its path has
     * a retained entry with the metrics of that commit, adversary round 18, F1) */
    int rc = m->refs.n > 0 ? icm__verify_refs_stood_for(&m->refs, "retained snapshot",
                                                        "the table's locations", f->path,
                                                        f->size_bytes, msg)
                           : 0;
    /* (most planned files have no twin of their size: no key to build, no facts to look up) */
    if (rc != 0 || *msg != NULL || !icm__verify_refs_have_size(&m->twins, f->size_bytes))
        return rc;
    const icm__expire_entry_facts *e = NULL;
    size_t n = icm__expire_entry_facts_of(m->r, f->path, &e);
    if (f->kind == ICM_EXPIRE_FILE_DELETION_VECTOR && n > 1)
        n = 1; /* (one entry's blob is enough for the footer's trust) */
    icm__verify_twin_facts one, *facts = n > 1 ? icm__reallocarray(NULL, n, sizeof *facts) : &one;
    if (facts == NULL)
        return ICM_ENOMEM;
    size_t known = 0;
    for (size_t k = 0; k < (n > 0 ? n : 1); k++)
        known += own_facts(n > 0 ? &e[k] : NULL, f, &facts[k]) != NULL;
    rc = icm__verify_twin_of(&m->twins, io, &m->table, "retained snapshot", f->path,
                             f->size_bytes, facts, known == (n > 0 ? n : 1) ? known : 0, msg);
    if (facts != &one)
        icm__free(facts);
    return rc;
}

/* Take out of the plan the data and delete files a retained reference may stand for. */
static int keep_stood_for(missing *m, icm_fileio *io)
{
    icm_expire_result *r = m->r;
    if (m->refs.n == 0 && m->twins.n == 0)
        return 0;
    size_t kept = 0;
    int rc = icm__verify_refs_seal(&m->refs);
    if (rc == 0)
        rc = icm__verify_refs_seal(&m->twins);
    for (size_t i = 0; i < r->deleted_file_count; i++) {
        icm_expire_file *f = &r->deleted_files[i];
        char *msg = NULL;
        if (rc == 0)
            rc = stood_for(m, io, f, &msg);
        if (msg == NULL) {
            r->deleted_files[kept++] = *f;
            continue;
        }
        rc = icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_LIVE_CONTENT, f->path, ICM_EREFUSED,
                                     msg);
        icm__free(msg);
        if (rc == 0)
            rc = keep_companion(r, f->path);
        icm__free(f->path);
    }
    r->deleted_file_count = kept;
    icm__expire_result_tally(r);
    return rc;
}

static bool plans_kind(const icm_expire_file *files, size_t n, icm_expire_file_kind kind)
{
    for (size_t i = 0; i < n; i++)
        if (files[i].kind == kind)
            return true;
    return false;
}

int icm__expire_verify(icm_fileio *io, const icm_table_metadata *before,
                       const icm_table_metadata *after, icm_expire_result *r)
{
    bool content = r->deleted_file_count > 0;
    if (!content && !plans_kind(r->deleted_manifests, r->deleted_manifest_count,
                                ICM_EXPIRE_FILE_MANIFEST))
        return 0; /* nothing a damaged Avro file could have misnamed is planned */
    const char *roots[3];
    /* Sizes too: the stat is made anyway, and a damaged entry renamed to another existing
     * file is told by its recorded size (the real file would look unreferenced). */
    icm__verify_options vo = {NULL, 0, content, true, roots, icm__table_roots(after, roots),
                              NULL, NULL, NULL};
    /* Outside the table's places, the data and delete files that look like a planned one: a
     * damaged entry may have moved a live file's path out of the places (adversary rounds 6,
     * 10 and 11). */
    icm__verify_lookalikes looks = ICM__VERIFY_LOOKALIKES_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && content && i < r->deleted_file_count; i++)
        rc = icm__verify_lookalikes_add(&looks, r->deleted_files[i].path,
                                        r->deleted_files[i].size_bytes);
    icm__verify_lookalikes_seal(&looks);
    vo.lookalikes = &looks;
    missing m = {r, 0, ICM__BUF_INIT, ICM__VERIFY_REFS_INIT, ICM__VERIFY_REFS_INIT,
                 {before, ICM__VERIFY_SCHEMAS_INIT}};
    vo.twins = content ? &m.twins : NULL;
    if (rc == 0)
        rc = icm__verify_walk(io, after, &vo, on_issue, &m, NULL);
    icm__verify_lookalikes_dispose(&looks);
    if (rc == 0 && m.names.oom)
        rc = ICM_ENOMEM;
    if (rc == 0 && m.count > 0) {
        r->missing_count = m.count;
        withhold_everything(r);
        rc = refuse(&m, icm_table_metadata_location(after));
    } else if (rc == 0) {
        rc = keep_stood_for(&m, io);
    }
    icm__buf_dispose(&m.names);
    icm__verify_refs_dispose(&m.refs);
    icm__verify_refs_dispose(&m.twins);
    icm__verify_schemas_dispose(&m.table.schemas);
    return rc;
}
