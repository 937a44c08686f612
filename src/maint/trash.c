/*
 * maint/trash.c: the trash (maint/trash.h, icemaint/trash.h): opening it for a run, moving a
 * batch of checked files into it, and restoring or expiring what it holds.
 *
 * Journal first. Before a batch moves, one JSON line per file says where it goes; on local
 * disk the lines are appended to the run's journal and fsync'ed, on an object store a new
 * journal object holds them (objects cannot be appended to). Only then do the files move, so
 * a trashed file without a record cannot exist; a record without its file is harmless
 * (restore and expire report it ABSENT).
 *
 * Names. A file keeps its path relative to the table location below T/<uuid>/files/; a name
 * already taken there (by an earlier trashing of the same name) gets `.trash-2`, `.trash-3`,
 * ...: the move itself never replaces (io/move.c), so even a name taken between the look and
 * the move only fails that file (retryable: its next attempt picks the next free name).
 *
 * Retries after a copy. A failed S3 move whose CopyObject went out may have left its copy
 * (the answer lost, the confirming HEAD failed). Its trash name is then pinned for the run
 * (`tried`): the next attempt moves to that same name with ICM__MOVE_RESUME (an object there
 * with the source's size and ETag is the copy: confirmed, then the source goes) instead of
 * picking the next free name, which would leave one more copy per attempt. Its journal record
 * was written by the first attempt. After ICM_TRASH_COPY_ATTEMPTS copies the file fails for
 * good, as it does when the pinned name holds another object.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/catalog_internal.h"
#include "icemaint/catalog.h"
#include "icemaint/escape.h"
#include "io/fileio_internal.h"
#include "maint/other_format.h"
#include "maint/trash.h"
#include "util/location.h"
#include "util/location_id.h"
#include "util/mounts.h"
#include "util/strset.h"
#include "util/util.h"

/* How many `.trash-N` names are tried before a file is given up on. */
#define MAX_SUFFIX 1000

struct icm__trash {
    icm_fileio *io;
    char *root;            /* the trash, canonical, without a trailing slash */
    char *files;           /* root/<uuid>/files */
    char *journal_dir;     /* root/<uuid>/journal */
    char *table_location;
    char *uuid;
    bool local;
    char run[37];
    pthread_mutex_t lock;  /* the journal */
    unsigned seq;          /* journal objects written (object stores) */
    char *journal;         /* local: the run's journal file's path once created */
    int journal_fd;        /* local: open for appending, or -1 */
    pthread_mutex_t tried_lock; /* tried, tries */
    icm__strset tried;     /* sources whose move sent a copy and failed (file comment) */
    struct tried_move {
        char *dest;        /* the pinned trash name */
        unsigned copies;   /* CopyObject requests sent for it */
    } *tries;              /* by the source's number in `tried` */
    size_t tries_cap;
};

void icm__trash_free(icm__trash *t)
{
    if (t == NULL)
        return;
    if (t->journal_fd >= 0)
        close(t->journal_fd);
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->tried_lock);
    for (size_t i = 0; i < icm__strset_count(&t->tried); i++)
        icm__free(t->tries[i].dest);
    icm__free(t->tries);
    icm__strset_dispose(&t->tried);
    icm__free(t->root);
    icm__free(t->files);
    icm__free(t->journal_dir);
    icm__free(t->table_location);
    icm__free(t->uuid);
    icm__free(t->journal);
    icm__free(t);
}

static int refuse(const char *uri, const char *fmt, ...) ICM__PRINTF(2, 3);
static int refuse(const char *uri, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = icm__error_vset(ICM_ERRCLASS_MAINT, ICM_EREFUSED, uri, fmt, ap);
    va_end(ap);
    return rc;
}

static int no_link_below(const char *base, const char *loc, const char *what);

/* Folders are compared by name, real path and identity (device and inode: the same folder seen
 * at two paths, a bind mount or a file system mounted twice, is one folder; adversary round 4,
 * finding 1): icm__local_nested, util/mounts.h. */

/*
 * Whether the trash and the table location lie one inside the other as the back end addresses
 * them: under the coarsest location identity (scheme case folded, `s3a`/`s3n` as `s3`, Hadoop's
 * slash rule, local spellings and dot segments resolved), or by the guards' stricter test.
 * This is a refusal, so the coarser answer is the safe one: `S3://b/t/trash` is inside
 * `s3://b/t` to the resolving FileIO even though the guards' scheme test tells the two apart.
 * Sets *out; 0 or ICM_ENOMEM.
 */
static int locations_nest(const char *a, const char *b, bool *out)
{
    *out = icm__location_strip_prefix(a, b, NULL) || icm__location_strip_prefix(b, a, NULL);
    if (*out)
        return 0;
    const unsigned flags = ICM__LOCATION_ID_DEFAULT | ICM__LOCATION_ID_HADOOP_SLASHES;
    char *ka = icm__malloc(strlen(a) + 1), *kb = icm__malloc(strlen(b) + 1);
    if (ka == NULL || kb == NULL) {
        icm__free(ka);
        icm__free(kb);
        return icm__error_oom();
    }
    size_t na = icm__location_id_write(a, flags, ka), nb = icm__location_id_write(b, flags, kb);
    *out = icm__location_id_within(ka, na, kb, nb) || icm__location_id_within(kb, nb, ka, na);
    icm__free(ka);
    icm__free(kb);
    return 0;
}

/* The local rules: the trash is an existing folder on the table location's file system. */
static int check_local(icm__trash *t)
{
    char *trash = NULL, *table = NULL;
    int rc = icm__location_fs_path(t->root, &trash);
    if (rc == 0)
        rc = icm__location_fs_path(t->table_location, &table);
    struct stat st_trash, st_table;
    if (rc == 0 && (stat(trash, &st_trash) != 0 || !S_ISDIR(st_trash.st_mode)))
        rc = refuse(t->root, "the trash %s is not an existing folder (create it first); "
                             "nothing is deleted",
                    trash);
    if (rc == 0 && icm__local_nested(trash, table))
        rc = refuse(t->root, "the trash and the table location %s lie one inside the other "
                             "(through a link); the sweep would take trashed files for "
                             "orphans; nothing is deleted",
                    t->table_location);
    if (rc == 0 && stat(table, &st_table) == 0 && st_table.st_dev != st_trash.st_dev)
        rc = refuse(t->root, "the trash is on another file system than the table location %s "
                             "(a move would be a copy); nothing is deleted",
                    t->table_location);
    icm__free(trash);
    icm__free(table);
    return rc;
}

/* Stops a listing at the first `<folder>/metadata/<name>.metadata.json[.gz]` directly below. */
typedef struct table_probe {
    const char *metadata; /* <folder>/metadata */
    char *found;
} table_probe;

static int find_metadata_json(const icm_file_info *info, void *payload)
{
    table_probe *p = payload;
    const char *rest = NULL;
    if (!icm__location_strip_prefix(info->location, p->metadata, &rest))
        return 0;
    while (*rest == '/')
        rest++;
    if (strchr(rest, '/') != NULL || (!icm__str_ends_with(rest, ".metadata.json") &&
                                      !icm__str_ends_with(rest, ".metadata.json.gz")))
        return 0;
    p->found = icm__strdup(info->location);
    return p->found != NULL ? ICM_EUSER : ICM_ENOMEM;
}

/*
 * A trash must not lie inside an Iceberg table's location (any table's, not only its own: that
 * table's orphan sweep would delete the trashed files at once, as a rename keeps their old
 * modification time). A table location is told by what it holds: the trash itself and each
 * folder above it up to the store's root is looked at for a `metadata/` folder with a
 * `*.metadata.json[.gz]` in it, along the trash's spelling and, on local disk, along its real
 * path (a link into a table's folder leads the spelling's walk past that table). A table whose
 * metadata lies elsewhere (`write.metadata.path`) has no such folder: only a catalog that
 * lists it tells (icm__trash_check_catalog). Returns 0, ICM_EREFUSED (naming the metadata
 * file), the listing's failure, ICM_ENOMEM.
 */
static int walk_up_for_a_table(icm__trash *t, const char *start)
{
    char *folder = icm__strdup(start);
    if (folder == NULL)
        return icm__error_oom();
    const char *local = icm__location_local_part(folder);
    size_t floor = icm__location_root_end(folder);
    size_t len = icm__location_trim_len(folder);
    int rc = 0;
    for (bool more = true; rc == 0 && more;) {
        folder[len] = '\0';
        char *meta = icm__sprintf("%s/metadata", folder);
        if (meta == NULL) {
            rc = icm__error_oom();
            break;
        }
        table_probe p = {meta, NULL};
        char why[512];
        int st = icm_fileio_list(t->io, meta, find_metadata_json, &p);
        if (st == ICM_EUSER && p.found != NULL)
            rc = refuse(t->root, "the trash lies inside the Iceberg table location %s (it holds "
                                 "%s): that table's orphan sweep would delete the trashed "
                                 "files; use a trash outside every table location; nothing is "
                                 "deleted",
                        folder, p.found);
        else if (st == ICM_ENOTFOUND)
            icm_error_clear(); /* none */
        else if (st == ICM_EAUTH && snprintf(why, sizeof why, "%s",
                                             icm_error_last()->message) >= 0)
            /* cannot tell: the table's owner, whose sweep would delete the trashed files,
             * may well list it (adversary round 4, finding 2) */
            rc = refuse(t->root, "cannot tell whether the trash lies inside an Iceberg table "
                                 "location: %s cannot be listed (%s), and a table there would "
                                 "sweep the trashed files; use a trash whose every folder "
                                 "above can be listed; nothing is deleted",
                        meta, why);
        else if (st != 0)
            rc = st;
        icm__free(p.found);
        icm__free(meta);
        /* the folder above: up to the last '/' (locally never "/" itself) */
        size_t j = len;
        while (j > floor && folder[j - 1] != '/')
            j--;
        if (j <= floor || (local != NULL && j - 1 == floor)) {
            more = false;
        } else {
            len = j - 1;
            while (len > floor + 1 && folder[len - 1] == '/')
                len--;
        }
    }
    icm__free(folder);
    return rc;
}

/* The real path of a local location (new string), or NULL (not local, or not resolvable). */
static char *real_local(const char *loc)
{
    if (icm__location_local_part(loc) == NULL)
        return NULL;
    char *fs = NULL;
    if (icm__location_fs_path(loc, &fs) != 0)
        return NULL;
    char *real = realpath(fs, NULL);
    icm__free(fs);
    char *out = real != NULL ? icm__strdup(real) : NULL;
    free(real);
    return out;
}

static int refuse_inside_a_table(icm__trash *t)
{
    int rc = walk_up_for_a_table(t, t->root);
    char *real = rc == 0 ? real_local(t->root) : NULL;
    const char *spelled = real != NULL ? icm__location_local_part(t->root) : NULL;
    /* the real path's walk only where a link (or `..`, `//`) makes it another path */
    if (real != NULL && (spelled == NULL || strcmp(real, spelled) != 0))
        rc = walk_up_for_a_table(t, real);
    icm__free(real);
    return rc;
}

/*
 * Whether the trash and one root of a table (its location, write.data.path, ...) lie one inside
 * the other: by spelling (locations_nest) or, both local, once links are resolved. Sets *out;
 * 0 or ICM_ENOMEM.
 */
static int trash_nests_with(const icm__trash *t, const char *root, bool *out)
{
    int rc = locations_nest(t->root, root, out);
    if (rc != 0 || *out || icm__location_local_part(t->root) == NULL ||
        icm__location_local_part(root) == NULL)
        return rc;
    char *a = NULL, *b = NULL;
    rc = icm__location_fs_path(t->root, &a);
    if (rc == 0)
        rc = icm__location_fs_path(root, &b);
    if (rc == 0)
        *out = icm__local_nested(a, b);
    icm__free(a);
    icm__free(b);
    return rc;
}

typedef struct other_check {
    icm__trash *t;
    int rc;
} other_check;

static int check_other_location(const icm__other_table *o, void *payload)
{
    other_check *c = payload;
    for (size_t k = 0; k < ICM__OTHER_TABLE_N_ROOTS; k++) {
        if (o->roots[k] == NULL || o->roots[k][0] == '\0')
            continue;
        bool nested = false;
        int rc = trash_nests_with(c->t, o->roots[k], &nested);
        if (rc != 0)
            return rc;
        if (nested) {
            char *shown = icm__other_table_name(o);
            rc = refuse(c->t->root, "the trash and the location %s of the catalog's table %s "
                                    "lie one inside the other: that table's orphan sweep "
                                    "would delete the trashed files; nothing is deleted",
                        o->roots[k], shown != NULL ? shown : "(unnamed)");
            icm__free(shown);
            return rc;
        }
    }
    return 0;
}

/* The table's own roots: its location (icm__trash_open checked the spelling), and the
 * folders its properties send files to, which its sweep lists too (`--location`) and a
 * catalog's other tables could not tell. */
static int check_own_roots(icm__trash *t, const icm_table *table)
{
    static const char *const names[] = ICM__OTHER_TABLE_ROOT_NAMES;
    const icm_table_metadata *md = icm_table_get_metadata(table);
    if (md == NULL)
        return 0;
    for (size_t k = 0; k < ICM__OTHER_TABLE_N_ROOTS; k++) {
        const char *root = k == 0 ? icm_table_metadata_location(md)
                                  : icm_table_metadata_property(md, names[k]);
        if (root == NULL || root[0] == '\0')
            continue;
        bool nested = false;
        int rc = trash_nests_with(t, root, &nested);
        if (rc != 0)
            return rc;
        if (nested)
            return refuse(t->root, "the trash and the table's %s %s lie one inside the other "
                                   "(by name or through a link): a sweep of that folder would "
                                   "take the trashed files for orphans; nothing is deleted",
                          names[k], root);
    }
    return 0;
}

int icm__trash_check_catalog(icm__trash *trash, icm_table *table)
{
    if (trash == NULL || table == NULL)
        return 0;
    int rc = check_own_roots(trash, table);
    if (rc != 0 || icm_table_get_catalog(table) == NULL)
        return rc;
    other_check c = {trash, 0};
    return icm__catalog_each_other_table_of(table, check_other_location, &c);
}

/* Create and delete a probe object below the trash: it can be written. */
static int probe_writable(icm__trash *t)
{
    char *probe = icm__sprintf("%s/.icemaint-trash-probe-%s", t->journal_dir, t->run);
    if (probe == NULL)
        return icm__error_oom();
    int rc = icm_fileio_create_new(t->io, probe, "", 0);
    if (rc == 0)
        rc = icm_fileio_delete(t->io, probe);
    if (rc != 0 && rc != ICM_ENOMEM) {
        char why[512];
        snprintf(why, sizeof why, "%s", icm_error_last()->message);
        icm__error_set(ICM_ERRCLASS_MAINT, rc, t->root,
                       "the trash cannot be written (%s); nothing is deleted", why);
    }
    icm__free(probe);
    return rc;
}

int icm__trash_open(icm__trash **out, icm_fileio *io, const char *uri,
                    const char *table_location, const char *table_uuid, bool check_only)
{
    *out = NULL;
    if (io == NULL || uri == NULL || *uri == '\0' || table_location == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, uri, "trash: NULL argument");
    /* a UUID (the spec's table-uuid): a sweep tells a trash by it (other_format.h) */
    if (table_uuid == NULL || !icm__other_format_uuid_shaped(table_uuid, strlen(table_uuid)))
        return refuse(uri, "the table at %s has no table-uuid in the UUID form "
                           "(8-4-4-4-12 hex digits), which keeps tables apart in a trash and "
                           "marks it to every sweep; use no trash for it",
                      table_location);
    icm__trash *t = icm__calloc(1, sizeof *t);
    if (t == NULL)
        return icm__error_oom();
    t->journal_fd = -1;
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->tried_lock, NULL);
    icm__strset empty = ICM__STRSET_INIT;
    t->tried = empty;
    t->io = io;
    char *canon = NULL;
    int rc = icm__location_canonical_keep_form(uri, &canon);
    if (rc == 0) {
        t->root = icm__strndup(canon, icm__location_trim_len(canon));
        t->table_location = icm__strdup(table_location);
        t->uuid = icm__strdup(table_uuid);
        t->files = t->root != NULL ? icm__sprintf("%s/%s/files", t->root, table_uuid) : NULL;
        t->journal_dir =
            t->root != NULL ? icm__sprintf("%s/%s/journal", t->root, table_uuid) : NULL;
        if (t->root == NULL || t->table_location == NULL || t->uuid == NULL ||
            t->files == NULL || t->journal_dir == NULL)
            rc = icm__error_oom();
    }
    icm__free(canon);
    if (rc == 0)
        rc = icm__uuid4(t->run);
    bool nested = false;
    if (rc == 0)
        rc = locations_nest(t->root, table_location, &nested);
    if (rc == 0 && nested)
        rc = refuse(t->root, "the trash and the table location %s lie one inside the other: "
                             "the sweep would take trashed files for orphans; nothing is "
                             "deleted",
                    table_location);
    bool same = false;
    if (rc == 0)
        rc = icm__fileio_same_store(&same, io, table_location, t->root);
    if (rc == 0 && !same)
        rc = refuse(t->root, "the trash is not on the store of the table location %s (local "
                             "disk or S3 alike, where a move is a rename or a server-side "
                             "copy); nothing is deleted",
                    table_location);
    if (rc == 0) {
        t->local = icm__location_local_part(t->root) != NULL;
        if (t->local)
            rc = check_local(t);
    }
    if (rc == 0)
        rc = refuse_inside_a_table(t);
    if (rc == 0 && !check_only)
        rc = probe_writable(t);
    if (rc != 0) {
        icm__trash_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* How old a trash name's newest record must be before its absent file counts as gone (see
 * icm_trash_expire): longer than any batch of moves takes. */
#define ICM__TRASH_ABSENT_SETTLE_MS (24 * 3600 * INT64_C(1000))

/* ------------------------------------------------------------------------------------------ */
/* moving a batch                                                                              */

static int put_json(icm__buf *b, const char *s)
{
    size_t len = strlen(s);
    if (icm__buf_grow(b, ICM_ESCAPE_JSON_MAX(len)) != 0)
        return ICM_ENOMEM;
    b->len += icm_escape_json(b->data + b->len, b->cap - b->len, s, len);
    return 0;
}

/* One journal line; `restored_at` >= 0 makes it the record of a restore (`event`). */
static int record_line(icm__buf *b, const char *uuid, const char *location,
                       const char *original, const char *dest, int64_t size, int64_t mtime,
                       int64_t trashed_at, int64_t restored_at)
{
    icm__buf_printf(b, "{\"version\":1,\"table_uuid\":");
    put_json(b, uuid);
    icm__buf_puts(b, ",\"table_location\":");
    put_json(b, location);
    icm__buf_puts(b, ",\"original\":");
    put_json(b, original);
    icm__buf_puts(b, ",\"trash\":");
    put_json(b, dest);
    icm__buf_printf(b, ",\"size_bytes\":%" PRId64 ",\"mtime_ms\":%" PRId64
                       ",\"trashed_at_ms\":%" PRId64,
                    size >= 0 ? size : -1, mtime >= 0 ? mtime : -1, trashed_at);
    if (restored_at >= 0)
        icm__buf_printf(b, ",\"event\":\"restored\",\"restored_at_ms\":%" PRId64,
                        restored_at);
    icm__buf_puts(b, "}\n");
    return b->oom ? icm__error_oom() : 0;
}

static int journal_line(icm__buf *b, const icm__trash *t, const char *original,
                        const char *dest, const icm_file_info *info, int64_t now)
{
    return record_line(b, t->uuid, t->table_location, original, dest, info->size_bytes,
                       info->mtime_ms, now, -1);
}

/* Append the lines to the journal, durably: locally to the run's file (created the first time
 * through the FileIO, which makes the folders and syncs them), else as a new object. */
static int journal_write(icm__trash *t, const icm__buf *lines, int64_t now)
{
    pthread_mutex_lock(&t->lock);
    int rc = 0;
    if (t->local && t->journal != NULL) {
        struct stat st;
        off_t start = fstat(t->journal_fd, &st) == 0 ? st.st_size : -1;
        size_t off = 0;
        while (rc == 0 && off < lines->len) {
            ssize_t w = write(t->journal_fd, lines->data + off, lines->len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                rc = icm__error_set_errno(ICM_ERRCLASS_IO, ICM_EIO, errno, t->journal,
                                          "cannot append to the trash journal");
            else
                off += (size_t)w;
        }
        if (rc == 0 && fdatasync(t->journal_fd) != 0)
            rc = icm__error_set_errno(ICM_ERRCLASS_IO, ICM_EIO, errno, t->journal,
                                      "cannot sync the trash journal");
        /* A write cut short (a full disk, a quota) left part of a line: it is cut back off,
         * and this journal takes no more lines either way, so a torn line can only be the
         * last of its journal (which a reader skips), never one the next batch's line runs
         * on from (adversary round 4, finding 4). */
        if (rc != 0) {
            if (start >= 0 && ftruncate(t->journal_fd, start) == 0)
                (void)fdatasync(t->journal_fd);
            close(t->journal_fd);
            t->journal_fd = -1;
            icm__free(t->journal);
            t->journal = NULL;
        }
        /* A `trash expire` may have removed this journal (every record in it old and gone):
         * lines appended to an unlinked file would be lost, so they go to a new journal. */
        if (rc == 0 && fstat(t->journal_fd, &st) == 0 && st.st_nlink == 0) {
            close(t->journal_fd);
            t->journal_fd = -1;
            icm__free(t->journal);
            t->journal = NULL;
        }
    }
    if (rc == 0 && !(t->local && t->journal != NULL)) {
        char *name = icm__sprintf("%s/%" PRId64 "-%s-%u.jsonl", t->journal_dir, now, t->run,
                                  t->seq++);
        rc = name == NULL ? icm__error_oom()
             : t->local   ? no_link_below(t->root, name, "the trash")
                          : 0;
        if (rc == 0)
            rc = icm_fileio_create_new(t->io, name, lines->data, lines->len);
        if (rc == 0 && t->local) {
            char *path = NULL;
            rc = icm__location_fs_path(name, &path);
            int fd = rc == 0 ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
            if (rc == 0 && fd < 0)
                rc = icm__error_set_errno(ICM_ERRCLASS_IO, ICM_EIO, errno, name,
                                          "cannot open the trash journal for appending");
            /* held while the run may append: `trash expire` removes no journal a run holds
             * (an advisory lock; waits out an expire holding it for its removal, then the
             * nlink check below sees the removal; without flock(2) that check alone) */
            if (rc == 0)
                while (flock(fd, LOCK_SH) != 0 && errno == EINTR)
                    ;
            /* removed between its creation and the open by an expire: its lines are lost
             * with it, so this batch's go to a new journal */
            struct stat st;
            if (rc == 0 && fstat(fd, &st) == 0 && st.st_nlink == 0)
                rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, name,
                                    "the trash journal was removed as it was written (a "
                                    "`trash expire` at once); nothing of this batch moved");
            if (rc == 0) {
                t->journal = path;
                t->journal_fd = fd;
            } else {
                if (fd >= 0)
                    close(fd);
                icm__free(path);
            }
        }
        icm__free(name);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* The first free name for `rest` below files/ (*dest new), or why none could be found. */
static int pick_dest(icm__trash *t, const char *rest, char **dest)
{
    *dest = NULL;
    for (unsigned k = 1; k <= MAX_SUFFIX; k++) {
        char *name = k == 1 ? icm__location_join(t->files, rest)
                            : icm__sprintf("%s/%s.trash-%u", t->files, rest, k);
        if (name == NULL)
            return icm__error_oom();
        icm_file_info info = ICM_FILE_INFO_INIT;
        int rc = icm_fileio_stat(&info, t->io, name);
        if (rc == ICM_ENOTFOUND) {
            icm_error_clear();
            *dest = name;
            return 0;
        }
        icm__free(name);
        /* Only a name that is taken moves on to the next one: a file there, or locally a
         * folder (EISDIR). Any other failure (on S3 an exhausted 5xx or timeout is EIO too)
         * fails this file now, with the store's error: trying the next name would repeat it
         * up to MAX_SUFFIX times, each with the full HTTP retries. */
        bool taken =
            rc == 0 || (rc == ICM_EIO && t->local && icm_error_last()->os_errno == EISDIR);
        if (!taken)
            return rc;
        icm_error_clear();
    }
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EEXISTS, rest,
                          "the trash holds %d files of this name already", MAX_SUFFIX);
}

/* The trash name pinned for `source` by an earlier attempt (*dest: new string, NULL when
 * none). 0 or ICM_ENOMEM. */
static int pinned_dest(icm__trash *t, const char *source, char **dest)
{
    *dest = NULL;
    int rc = 0;
    pthread_mutex_lock(&t->tried_lock);
    size_t len = strlen(source), k = 0;
    if (icm__strset_contains(&t->tried, source, len) &&
        icm__strset_add_numbered(&t->tried, source, len, NULL, &k) == 0 &&
        (*dest = icm__strdup(t->tries[k].dest)) == NULL)
        rc = icm__error_oom();
    pthread_mutex_unlock(&t->tried_lock);
    return rc;
}

/* Pin `dest` for `source` after a failed move that sent a copy (`sent`), or keep the pin of
 * a resumed one; *copies: the copies sent for it so far. 0, or ICM_ENOMEM (nothing pinned:
 * the caller fails the file for good, as an unpinned retry could copy again). */
static int pin_dest(icm__trash *t, const char *source, const char *dest, bool sent,
                    unsigned *copies)
{
    int rc = 0;
    pthread_mutex_lock(&t->tried_lock);
    size_t len = strlen(source), k = 0;
    bool known = icm__strset_contains(&t->tried, source, len), added = false;
    char *copy = NULL;
    if (!known && icm__strset_count(&t->tried) >= t->tries_cap) {
        size_t want = t->tries_cap > 0 ? t->tries_cap * 2 : 16;
        struct tried_move *grown = icm__reallocarray(t->tries, want, sizeof *grown);
        if (grown == NULL) {
            rc = icm__error_oom();
        } else {
            t->tries = grown;
            t->tries_cap = want;
        }
    }
    if (rc == 0 && !known && (copy = icm__strdup(dest)) == NULL)
        rc = icm__error_oom();
    if (rc == 0)
        rc = icm__strset_add_numbered(&t->tried, source, len, &added, &k);
    if (rc == 0 && added) {
        t->tries[k].dest = copy;
        t->tries[k].copies = 0;
        copy = NULL;
    }
    if (rc == 0) {
        t->tries[k].copies += sent ? 1u : 0u;
        *copies = t->tries[k].copies;
    }
    icm__free(copy);
    pthread_mutex_unlock(&t->tried_lock);
    return rc;
}

static bool retryable(int code)
{
    return code == ICM_ENET || code == ICM_ETIMEOUT || code == ICM_EEXISTS;
}

static void fail(icm_fileio_delete_result *r, int code)
{
    icm_fileio_delete_result_fail(r, code, retryable(code));
}

/*
 * Settle a failed move of `source` to `dest` that sent a copy (`sent`) or resumed a pinned one
 * (file comment): pin the name; fail the file for good once ICM_TRASH_COPY_ATTEMPTS copies
 * went out, when the pinned name holds another object (ICM_EEXISTS), or when the pin cannot be
 * kept (no memory); else fail it as usual (retryable or not by its code).
 */
static void move_failed_after_copy(icm__trash *t, const char *source, const char *dest,
                                   bool sent, int code, icm_fileio_delete_result *r)
{
    char why[512];
    snprintf(why, sizeof why, "%s", icm_error_last()->message);
    unsigned copies = 0;
    if (pin_dest(t, source, dest, sent, &copies) != 0) {
        icm__error_set(ICM_ERRCLASS_MAINT, code, source,
                       "not moved to the trash, and not retried: it stays where it was; "
                       "no memory to keep its trash name %s for a retry (%s)",
                       dest, why);
        icm_fileio_delete_result_fail(r, code, false);
    } else if (copies >= ICM_TRASH_COPY_ATTEMPTS) {
        icm__error_set(ICM_ERRCLASS_MAINT, code, source,
                       "not moved to the trash, and not retried: it stays where it was; "
                       "after %u copies to %s were not confirmed (that name may hold a "
                       "copy of it; the last: %s)",
                       copies, dest, why);
        icm_fileio_delete_result_fail(r, code, false);
    } else if (code == ICM_EEXISTS) {
        icm_fileio_delete_result_fail(r, code, false);
    } else {
        fail(r, code);
    }
}

void icm__trash_move_batch(icm__trash *t, const char *const *paths, size_t n,
                           icm_fileio_delete_result *results)
{
    char **dest = icm__calloc(n > 0 ? n : 1, sizeof *dest);
    int64_t *size = icm__calloc(n > 0 ? n : 1, sizeof *size);
    bool *resume = icm__calloc(n > 0 ? n : 1, sizeof *resume);
    icm__buf lines = ICM__BUF_INIT;
    int64_t now = icm__now_ms();
    size_t pending = 0;
    for (size_t i = 0; i < n; i++) {
        icm_fileio_delete_result *r = &results[i];
        memset(r, 0, sizeof *r);
        if (dest == NULL || size == NULL || resume == NULL) {
            icm__error_oom();
            fail(r, ICM_ENOMEM);
            continue;
        }
        const char *rest = NULL;
        if (!icm__location_strip_prefix(paths[i], t->table_location, &rest) || *rest == '\0') {
            icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, paths[i],
                           "not below the table location %s: not moved to the trash",
                           t->table_location);
            fail(r, ICM_EREFUSED);
            continue;
        }
        while (*rest == '/' && t->local)
            rest++;
        icm_file_info info = ICM_FILE_INFO_INIT;
        int rc = icm_fileio_stat(&info, t->io, paths[i]);
        if (rc == ICM_ENOTFOUND) {
            icm_error_clear();
            r->status = ICM_FILEIO_ALREADY_GONE;
            continue;
        }
        if (rc == 0)
            rc = pinned_dest(t, paths[i], &dest[i]);
        resume[i] = dest[i] != NULL; /* its record was written by the attempt that pinned it */
        if (rc == 0 && !resume[i])
            rc = pick_dest(t, rest, &dest[i]);
        if (rc == 0 && t->local)
            rc = no_link_below(t->root, dest[i], "the trash");
        if (rc == 0 && !resume[i])
            rc = journal_line(&lines, t, paths[i], dest[i], &info, now);
        if (rc != 0) {
            icm__free(dest[i]);
            dest[i] = NULL;
            fail(r, rc);
            continue;
        }
        size[i] = info.size_bytes;
        r->status = ICM_FILEIO_DELETE_FAILED; /* until it moved */
        pending++;
    }
    int rc = pending > 0 && lines.len > 0 ? journal_write(t, &lines, now) : 0;
    for (size_t i = 0; dest != NULL && resume != NULL && i < n; i++) {
        if (dest[i] == NULL)
            continue;
        icm_fileio_delete_result *r = &results[i];
        bool sent = false;
        int mv = rc != 0 && !resume[i]
                     ? rc
                     : icm__fileio_move_ex(t->io, paths[i], dest[i], size[i],
                                           resume[i] ? ICM__MOVE_RESUME : 0, &sent);
        if (mv == 0) {
            r->status = ICM_FILEIO_DELETED;
        } else if (mv == ICM_ENOTFOUND) {
            icm_error_clear();
            r->status = ICM_FILEIO_ALREADY_GONE;
        } else if (sent || resume[i]) {
            move_failed_after_copy(t, paths[i], dest[i], sent, mv, r);
        } else {
            fail(r, mv);
        }
        icm__free(dest[i]);
    }
    icm__buf_dispose(&lines);
    icm__free(dest);
    icm__free(size);
    icm__free(resume);
}

/* ------------------------------------------------------------------------------------------ */
/* restore and expire                                                                          */

/* The journals of a trash, read whole: every record, and which journal object it is in. */
typedef struct journals {
    char **names;           /* journal objects */
    int64_t *mtimes_ms;     /* names[k]'s last modification by the store's clock (-1: unknown) */
    size_t n_names, cap_names;
    icm__trash_record *recs;
    size_t n, cap;
    size_t *journal_of;     /* recs[i] is in names[journal_of[i]] */
    char **keys;            /* keys[i]: the identity of recs[i].trash (trash_key) */
    const char *root;
    int64_t root_len;
} journals;

static void journals_free(journals *j)
{
    for (size_t i = 0; i < j->n_names; i++)
        icm__free(j->names[i]);
    icm__free(j->names);
    icm__free(j->mtimes_ms);
    for (size_t i = 0; j->keys != NULL && i < j->n; i++)
        icm__free(j->keys[i]);
    icm__free(j->keys);
    icm__trash_records_free(j->recs, j->n);
    icm__free(j->journal_of);
}

/*
 * The identity a trashed file is grouped by: every spelling of one object in the trash is one
 * key (`/x/trash/...`, `file:///x/trash/...`, `//` runs, `s3a://` for `s3://`, scheme case),
 * under the coarsest identity (S3 aliases and Hadoop's slash rule too). Expire judges a file's
 * age by the newest record of its group, so a group split by a spelling would let an old
 * record delete a file trashed a moment ago at the same name; a coarser group can only keep a
 * file longer. New string in *out; 0 or ICM_ENOMEM.
 */
static int trash_key(const char *trash, char **out)
{
    *out = icm__malloc(strlen(trash) + 1);
    if (*out == NULL)
        return icm__error_oom();
    icm__location_id_write(trash, ICM__LOCATION_ID_DEFAULT | ICM__LOCATION_ID_HADOOP_SLASHES,
                           *out);
    return 0;
}

/* Whether `loc` is root/<one segment>/journal/<name>.jsonl. */
static bool is_journal(const journals *j, const char *loc)
{
    const char *rest = NULL;
    if (!icm__location_strip_prefix(loc, j->root, &rest))
        return false;
    while (*rest == '/')
        rest++;
    const char *slash = strchr(rest, '/');
    if (slash == NULL || slash == rest || strncmp(slash, "/journal/", 9) != 0)
        return false;
    const char *name = slash + 9;
    return *name != '\0' && *name != '.' && strchr(name, '/') == NULL &&
           icm__str_ends_with(name, ".jsonl");
}

static int collect_journal(const icm_file_info *info, void *payload)
{
    journals *j = payload;
    if (!is_journal(j, info->location))
        return 0;
    if (j->n_names == j->cap_names) {
        size_t want = j->cap_names > 0 ? j->cap_names * 2 : 16;
        char **grown = icm__reallocarray(j->names, want, sizeof *grown);
        if (grown == NULL)
            return icm__error_oom();
        j->names = grown;
        int64_t *mtimes = icm__reallocarray(j->mtimes_ms, want, sizeof *mtimes);
        if (mtimes == NULL)
            return icm__error_oom();
        j->mtimes_ms = mtimes;
        j->cap_names = want;
    }
    if ((j->names[j->n_names] = icm__strdup(info->location)) == NULL)
        return icm__error_oom();
    j->mtimes_ms[j->n_names] = info->mtime_ms;
    j->n_names++;
    return 0;
}

typedef struct named_journal {
    char *name;
    int64_t mtime_ms;
} named_journal;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const named_journal *)a)->name, ((const named_journal *)b)->name);
}

/* names (and their mtimes alike) in name order: the order records are read in */
static int sort_names(journals *j)
{
    named_journal *v = icm__calloc(j->n_names, sizeof *v);
    if (v == NULL)
        return icm__error_oom();
    for (size_t k = 0; k < j->n_names; k++)
        v[k] = (named_journal){j->names[k], j->mtimes_ms[k]};
    qsort(v, j->n_names, sizeof *v, by_name);
    for (size_t k = 0; k < j->n_names; k++) {
        j->names[k] = v[k].name;
        j->mtimes_ms[k] = v[k].mtime_ms;
    }
    icm__free(v);
    return 0;
}

static int journals_load(journals *j, icm_fileio *io, const char *root)
{
    memset(j, 0, sizeof *j);
    j->root = root;
    int rc = icm_fileio_list(io, root, collect_journal, j);
    if (rc == 0 && j->n_names > 1)
        rc = sort_names(j);
    for (size_t k = 0; rc == 0 && k < j->n_names; k++) {
        char *text = NULL;
        size_t len = 0;
        rc = icm_fileio_read(&text, &len, io, j->names[k]);
        if (rc == ICM_ENOTFOUND) { /* expired meanwhile */
            icm_error_clear();
            rc = 0;
            continue;
        }
        size_t before = j->n;
        if (rc == 0)
            rc = icm__trash_journal_parse(text, len, j->names[k], &j->recs, &j->n, &j->cap);
        icm__free(text);
        if (rc == 0 && j->n > before) {
            size_t *grown = icm__reallocarray(j->journal_of, j->cap, sizeof *grown);
            if (grown == NULL)
                rc = icm__error_oom();
            else
                j->journal_of = grown;
            for (size_t i = before; rc == 0 && i < j->n; i++)
                j->journal_of[i] = k;
        }
    }
    if (rc == 0 && (j->keys = icm__calloc(j->n > 0 ? j->n : 1, sizeof *j->keys)) == NULL)
        rc = icm__error_oom();
    for (size_t i = 0; rc == 0 && i < j->n; i++)
        rc = trash_key(j->recs[i].trash, &j->keys[i]);
    return rc;
}

typedef struct tally {
    icm_trash_counts *counts;
    const icm_trash_options *o;
    int first_failure;
    bool refused;
    const char *refused_why; /* the summary of a refusal; NULL: restore's */
} tally;

/* Count and report one outcome. Returns ICM_EUSER when on_file asks to stop. */
static int report(tally *t, const icm__trash_record *rec, icm_trash_outcome outcome, int code)
{
    t->counts->by_outcome[outcome]++;
    char message[512] = "";
    if (outcome == ICM_TRASH_FAILED || outcome == ICM_TRASH_REFUSED)
        snprintf(message, sizeof message, "%s", icm_error_last()->message);
    if (outcome == ICM_TRASH_FAILED && t->first_failure == 0)
        t->first_failure = code != 0 ? code : ICM_EIO;
    if (outcome == ICM_TRASH_REFUSED)
        t->refused = true;
    if (t->o->on_file == NULL)
        return 0;
    icm_trash_entry e = {rec->table_uuid, rec->table_location, rec->original, rec->trash,
                         rec->size_bytes, rec->mtime_ms, rec->trashed_at_ms};
    icm_trash_event ev = {&e, outcome, outcome >= ICM_TRASH_REFUSED ? code : 0,
                          outcome >= ICM_TRASH_REFUSED ? message : NULL};
    if (t->o->on_file(&ev, t->o->on_file_payload) != 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EUSER, rec->trash,
                              "the trash callback asked to stop after this file");
    return 0;
}

static int tally_result(const tally *t)
{
    if (t->first_failure != 0)
        return t->first_failure;
    if (t->refused)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, NULL, "%s",
                              t->refused_why != NULL
                                  ? t->refused_why
                                  : "some files were not restored: a file exists where they "
                                    "were (it is never replaced)");
    icm_error_clear();
    return 0;
}

static int check_args(const char *op, icm_trash_counts *out, icm_fileio *io, const char *trash,
                      const icm_trash_options *opts, icm_trash_options *o, char **root)
{
    *root = NULL;
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (io == NULL || trash == NULL || *trash == '\0')
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "%s: io and trash are required", op);
    if (opts != NULL && opts->version != ICM_TRASH_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_trash_options: unknown version %u (use "
                              "ICM_TRASH_OPTIONS_INIT or icm_trash_options_init)",
                              opts->version);
    icm_trash_options d = ICM_TRASH_OPTIONS_INIT;
    *o = opts != NULL ? *opts : d;
    if (o->path_count > 0 && o->paths == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "%s: paths is NULL but its count is %zu", op, o->path_count);
    char *canon = NULL;
    int rc = icm__location_canonical_keep_form(trash, &canon);
    if (rc != 0)
        return rc;
    *root = icm__strndup(canon, icm__location_trim_len(canon));
    icm__free(canon);
    return *root != NULL ? 0 : icm__error_oom();
}

/* Whether `loc`, spelled as given or made absolute, is `rec_loc` or holds it (`below`), or
 * equals it. */
static bool names(const char *given, const char *rec_loc, bool below)
{
    char *abs = NULL;
    bool hit = below ? icm__location_strip_prefix(rec_loc, given, NULL)
                     : icm__location_equal(given, rec_loc);
    if (!hit && icm__location_canonical_keep_form(given, &abs) == 0)
        hit = below ? icm__location_strip_prefix(rec_loc, abs, NULL)
                    : icm__location_equal(abs, rec_loc);
    icm__free(abs);
    icm_error_clear();
    return hit;
}

static bool selected(const icm__trash_record *rec, const icm_trash_options *o)
{
    if (o->table != NULL && !names(o->table, rec->table_location, false))
        return false;
    if (o->path_count == 0)
        return true;
    for (size_t i = 0; i < o->path_count; i++)
        if (o->paths[i] != NULL && names(o->paths[i], rec->original, true))
            return true;
    return false;
}

/*
 * Confinement in storage, not only in spelling (local disk; elsewhere there are no links):
 * every folder from `base` down to `loc` must be a real folder, not a symbolic link, and `loc`
 * itself no link either, or a rename, unlink or mkdir would follow it out of `base` (a link
 * planted in the trash, or in the table location, pointing at a table's data folder). Each
 * segment is lstat'ed; the walk stops at the first one that does not exist (nothing can be
 * followed through it; the operation then finds no file, or creates real folders). `what`
 * names the place in the message. Returns 0, ICM_EREFUSED (naming the link), ICM_ENOMEM.
 */
static int no_link_below(const char *base, const char *loc, const char *what)
{
    const char *lb = icm__location_local_part(base), *ll = icm__location_local_part(loc);
    if (lb == NULL || ll == NULL)
        return 0;
    char *pb = NULL, *pl = NULL;
    int rc = icm__location_fs_path(lb, &pb);
    if (rc == 0)
        rc = icm__location_fs_path(ll, &pl);
    const char *rest = NULL;
    if (rc == 0 && !icm__location_strip_prefix(pl, pb, &rest))
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, loc, "not below %s; not acted on",
                            base);
    size_t at = rc == 0 ? (size_t)(rest - pl) : 0;
    while (rc == 0 && pl[at] != '\0') {
        while (pl[at] == '/')
            at++;
        size_t end = at;
        while (pl[end] != '\0' && pl[end] != '/')
            end++;
        if (end == at)
            break;
        if (end - at == 2 && pl[at] == '.' && pl[at + 1] == '.') {
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, loc,
                                "a '..' segment below %s; not acted on", base);
            break;
        }
        char saved = pl[end];
        pl[end] = '\0';
        struct stat st;
        bool there = lstat(pl, &st) == 0;
        if (there && S_ISLNK(st.st_mode))
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, loc,
                                "%s is a symbolic link inside %s (it could lead out of it); "
                                "nothing is moved or deleted through it",
                                pl, what);
        pl[end] = saved;
        if (!there || (saved != '\0' && !S_ISDIR(st.st_mode)))
            break;
        at = end;
    }
    icm__free(pb);
    icm__free(pl);
    return rc;
}

/*
 * A record is only acted on when it names a file of this trash and a place of its table: its
 * trash file below <root>/<its uuid>/files/ and its original below its table location. A
 * journal is plain text anyone with write access to the trash can edit; without this check a
 * forged line would make restore move a file anywhere, or expire delete any file the FileIO
 * reaches. A line's own table_location is forgeable too, so restore passes the location its
 * caller named (`table`, never taken from a journal): the original must lie below that.
 * Returns 0 or ICM_EREFUSED (the message names the record), ICM_ENOMEM.
 */
static int record_confined(const char *root, const char *table, const icm__trash_record *rec)
{
    if (strchr(rec->table_uuid, '/') != NULL || strcmp(rec->table_uuid, ".") == 0 ||
        strcmp(rec->table_uuid, "..") == 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, rec->trash,
                              "the journal record's table_uuid is not a folder name; not "
                              "acted on");
    char *files = icm__sprintf("%s/%s/files", root, rec->table_uuid);
    if (files == NULL)
        return icm__error_oom();
    const char *rest = NULL;
    bool in_trash = icm__location_strip_prefix(rec->trash, files, &rest) && *rest != '\0';
    icm__free(files);
    if (!in_trash)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, rec->trash,
                              "the journal record names a file outside this trash's "
                              "%s/files/; not acted on",
                              rec->table_uuid);
    if (!icm__location_is_inside(rec->original, rec->table_location))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, rec->original,
                              "the journal record's original is not below its table location "
                              "%s; not acted on",
                              rec->table_location);
    if (table != NULL && !names(table, rec->original, true))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, rec->original,
                              "the journal record's original is not below the table location "
                              "%s given; not acted on",
                              table);
    /* and in storage: no link on the way (nor the file itself) */
    int rc = no_link_below(root, rec->trash, "the trash");
    if (rc == 0 && table != NULL) {
        char *canon = NULL;
        rc = icm__location_canonical_keep_form(table, &canon);
        if (rc == 0)
            rc = no_link_below(canon, rec->original, "the table location");
        icm__free(canon);
    }
    return rc;
}

/*
 * Whether the file found at a record's trash path (`info`, stat'ed right before the delete)
 * is the one the record describes: its size, and on local disk (where the move kept it) its
 * modification time. Returns 0 or ICM_EREFUSED naming the file and both values.
 */
static int same_file(const icm__trash_record *rec, const icm_file_info *info)
{
    if (rec->size_bytes >= 0 && info->size_bytes >= 0 && info->size_bytes != rec->size_bytes)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, rec->trash,
                              "the file here has %" PRId64 " bytes, its record (trashed at "
                              "%" PRId64 " ms) says %" PRId64 ": another file, kept",
                              info->size_bytes, rec->trashed_at_ms, rec->size_bytes);
    if (icm__location_local_part(rec->trash) != NULL && rec->mtime_ms >= 0 &&
        info->mtime_ms >= 0 && info->mtime_ms != rec->mtime_ms)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, rec->trash,
                              "the file here was modified at %" PRId64 " ms, its record "
                              "(trashed at %" PRId64 " ms) says %" PRId64 ": another file, "
                              "kept",
                              info->mtime_ms, rec->trashed_at_ms, rec->mtime_ms);
    return 0;
}

/* By trash location (its identity key), newest first within one (qsort_r: `ctx` is the
 * journals). */
static int by_trash_then_newest(const void *a, const void *b, void *ctx)
{
    const journals *j = ctx;
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    const icm__trash_record *x = &j->recs[i], *y = &j->recs[k];
    int c = strcmp(j->keys[i], j->keys[k]);
    if (c != 0)
        return c;
    int64_t tx = icm__trash_record_ms(x), ty = icm__trash_record_ms(y);
    if (tx != ty)
        return tx > ty ? -1 : 1;
    if (x->restored != y->restored) /* a restore at the same ms: taken as the later event */
        return x->restored ? -1 : 1;
    return i < k ? -1 : i > k;
}

/* Newest first; equal times in journal order. */
static int by_newest(const void *a, const void *b, void *ctx)
{
    const icm__trash_record *recs = ctx;
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    int64_t ti = icm__trash_record_ms(&recs[i]), tk = icm__trash_record_ms(&recs[k]);
    if (ti != tk)
        return ti > tk ? -1 : 1;
    return i < k ? -1 : i > k;
}

/* The records as indexes into j->recs (new array, j->n of them), grouped by trash location
 * (identity, not spelling) with the newest record first in each group. NULL on OOM. */
static size_t *ordered(const journals *j)
{
    size_t *idx = icm__calloc(j->n > 0 ? j->n : 1, sizeof *idx);
    if (idx == NULL)
        return NULL;
    for (size_t i = 0; i < j->n; i++)
        idx[i] = i;
    qsort_r(idx, j->n, sizeof *idx, by_trash_then_newest, (void *)j);
    return idx;
}

/*
 * The journal records of a restore (`"event": "restored"`, restored_at_ms the time of each
 * move), written after the files moved back, RESTORE_BATCH to a journal object of their
 * table's (one object per restored file made a restore of many files as many objects for
 * every later expire to read). `run` names this restore, `seq` counts its objects. Expire
 * then takes each name as restored since its older record, and a file found there later is
 * not that record's. A crash before a batch is written leaves those names with their trashing
 * as the newest event: expire finds them ABSENT, or, if a later trashing took the name, that
 * trashing's newer record decides (so the cost is a report line, never a file).
 */
#define RESTORE_BATCH 1000

typedef struct restore_log {
    icm_fileio *io;
    const char *root;
    const char *run;
    unsigned seq;
    char *uuid;  /* of the lines held; NULL when none */
    icm__buf lines;
    size_t n;
} restore_log;

/* Write the lines held as one new journal object. Returns 0 or the write's failure (the
 * lines are dropped either way: their files are back). */
static int restore_log_flush(restore_log *l)
{
    if (l->n == 0)
        return 0;
    int64_t now = icm__now_ms();
    char *name = icm__sprintf("%s/%s/journal/%" PRId64 "-%s-%u.jsonl", l->root, l->uuid, now,
                              l->run, l->seq++);
    int rc = name == NULL ? icm__error_oom() : no_link_below(l->root, name, "the trash");
    if (rc == 0)
        rc = icm_fileio_create_new(l->io, name, l->lines.data, l->lines.len);
    icm__free(name);
    icm__free(l->uuid);
    l->uuid = NULL;
    icm__buf_dispose(&l->lines); /* empty again, ready for the next batch */
    l->n = 0;
    return rc;
}

/* Hold the restore of `rec` (moved back at `restored_at`); a batch full, or of another table,
 * is written first. Returns 0, the write's failure, or ICM_ENOMEM. */
static int restore_log_add(restore_log *l, const icm__trash_record *rec, int64_t restored_at)
{
    int rc = 0;
    if (l->n > 0 && strcmp(l->uuid, rec->table_uuid) != 0)
        rc = restore_log_flush(l);
    if (l->uuid == NULL && (l->uuid = icm__strdup(rec->table_uuid)) == NULL)
        return icm__error_oom();
    int add = record_line(&l->lines, rec->table_uuid, rec->table_location, rec->original,
                          rec->trash, rec->size_bytes, rec->mtime_ms, rec->trashed_at_ms,
                          restored_at);
    if (add != 0)
        return add;
    if (++l->n >= RESTORE_BATCH) {
        int f = restore_log_flush(l);
        rc = rc != 0 ? rc : f;
    }
    return rc;
}

static void restore_log_dispose(restore_log *l)
{
    icm__free(l->uuid);
    icm__buf_dispose(&l->lines);
}

/* The folders below <root>/<uuid>/files/ that held only the record's file, once it left the
 * trash (restored or expired): removed on local disk, so the trash does not fill with empty
 * folders (icm__fileio_prune_empty_folders: best effort, rmdir only). */
static void prune_trash_folders(icm_fileio *io, const char *root, const icm__trash_record *rec)
{
    char *files = icm__sprintf("%s/%s/files", root, rec->table_uuid);
    if (files != NULL)
        icm__fileio_prune_empty_folders(io, rec->trash, files);
    icm__free(files);
}

/*
 * One trash name, as restore takes it: its records are idx[first, end) of ordered() (one trash
 * location, the newest first), and `key` is the record that orders it among the other names
 * (its newest selected trashing, else its newest selected record).
 */
typedef struct restore_name {
    size_t first, end;
    size_t key;
} restore_name;

static int by_newest_name(const void *a, const void *b, void *ctx)
{
    return by_newest(&((const restore_name *)a)->key, &((const restore_name *)b)->key, ctx);
}

/*
 * What restore does with one trash name. Only the records `selected` by the table and paths
 * count. The file at the name is stat'ed once (through the newest selected record that passes
 * record_confined), and the record restored is the newest selected trashing (not a restore
 * event) that describes that file (same_file: its size, on local disk its mtime). So neither
 * a restore event stamped later than a trashing made since (a writer's clock ahead, a batch
 * stamped at its start), nor the record of a move that failed (its file went to a
 * `.trash-N` name) and is newer than the record of the file that took the name, hides or
 * stands for the file there. *act true: restore record *pick. Else report *pick with
 * *outcome: ABSENT (no file at the name: a restore event hides it then), REFUSED (a file
 * no selected trashing describes: never moved), FAILED (no selected record confined, or the
 * stat failed). Returns 0 or the outcome's code (its message set); ICM_ENOMEM.
 */
static int restore_pick(icm_fileio *io, const char *root, const icm_trash_options *o,
                        const journals *j, const size_t *idx, const restore_name *nm,
                        size_t *pick, bool *act, icm_trash_outcome *outcome)
{
    size_t stated = SIZE_MAX, unconfined = SIZE_MAX, unlike = SIZE_MAX;
    icm_file_info info = ICM_FILE_INFO_INIT;
    *act = false;
    *pick = nm->key;
    for (size_t i = nm->first; i < nm->end; i++) {
        const icm__trash_record *rec = &j->recs[idx[i]];
        if (!selected(rec, o))
            continue;
        int st = record_confined(root, o->table, rec);
        if (st == ICM_ENOMEM)
            return st;
        if (st != 0) {
            unconfined = unconfined == SIZE_MAX ? idx[i] : unconfined;
            continue;
        }
        if (stated == SIZE_MAX) {
            stated = *pick = idx[i];
            st = icm_fileio_stat(&info, io, rec->trash);
            if (st != 0) {
                *outcome = st == ICM_ENOTFOUND ? ICM_TRASH_ABSENT : ICM_TRASH_FAILED;
                return st;
            }
        }
        if (rec->restored)
            continue;
        if (same_file(rec, &info) == 0) {
            *pick = idx[i];
            *act = true;
            return 0;
        }
        unlike = unlike == SIZE_MAX ? idx[i] : unlike;
    }
    *outcome = stated == SIZE_MAX ? ICM_TRASH_FAILED : ICM_TRASH_REFUSED;
    if (stated == SIZE_MAX) { /* again, for its message */
        *pick = unconfined;
        return record_confined(root, o->table, &j->recs[unconfined]);
    }
    *pick = unlike != SIZE_MAX ? unlike : stated;
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, j->recs[*pick].trash,
                          "%s: the file at this trash name is not the one any record of this "
                          "table describes (its size or modification time differs); it stays "
                          "in the trash",
                          j->recs[*pick].trash);
}

int icm_trash_restore(icm_trash_counts *out, icm_fileio *io, const char *trash,
                      const icm_trash_options *opts)
{
    icm_trash_counts counts = {{0}, 0};
    icm_trash_options o;
    char *root = NULL;
    int rc = check_args("icm_trash_restore", out, io, trash, opts, &o, &root);
    if (rc == 0 && (o.table == NULL || strchr(o.table, '/') == NULL))
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, trash,
                            "icm_trash_restore: table must be the table location (files are "
                            "only put back below a location the caller names: a journal "
                            "line, its table_location too, is plain text anyone with write "
                            "access to the trash can forge)");
    journals j;
    memset(&j, 0, sizeof j);
    if (rc == 0)
        rc = journals_load(&j, io, root);
    size_t m = rc == 0 ? j.n : 0;
    size_t *idx = rc == 0 ? ordered(&j) : NULL;
    restore_name *nm = rc == 0 ? icm__calloc(m > 0 ? m : 1, sizeof *nm) : NULL;
    if (rc == 0 && (idx == NULL || nm == NULL))
        rc = icm__error_oom();
    /* the names holding a selected record, ordered by it: the newest trashing first when two
     * names hold copies of one original (the older is then REFUSED: a file exists there) */
    size_t matched = 0;
    for (size_t k = 0, end; rc == 0 && k < m; k = end) {
        size_t key = SIZE_MAX;
        for (end = k; end < m && strcmp(j.keys[idx[end]], j.keys[idx[k]]) == 0; end++)
            if (selected(&j.recs[idx[end]], &o) &&
                (key == SIZE_MAX || (j.recs[key].restored && !j.recs[idx[end]].restored)))
                key = idx[end];
        if (key != SIZE_MAX)
            nm[matched++] = (restore_name){k, end, key};
    }
    if (rc == 0 && matched > 1)
        qsort_r(nm, matched, sizeof *nm, by_newest_name, j.recs);
    tally t = {&counts, &o, 0, false, NULL};
    char run[37];
    restore_log log = {io, root, run, 0, NULL, ICM__BUF_INIT, 0};
    if (rc == 0)
        rc = icm__uuid4(run);
    for (size_t g = 0; rc == 0 && g < matched; g++) {
        size_t pick = nm[g].key;
        bool act = false;
        icm_trash_outcome outcome = ICM_TRASH_FAILED;
        int st = restore_pick(io, root, &o, &j, idx, &nm[g], &pick, &act, &outcome);
        const icm__trash_record *rec = &j.recs[pick];
        icm_file_info info = ICM_FILE_INFO_INIT;
        if (!act) {
            if (outcome == ICM_TRASH_REFUSED)
                t.refused_why = "some files were not restored: a file exists where they were "
                                "(it is never replaced), or the file at their trash name is "
                                "not the one their record describes";
        } else if ((st = icm_fileio_stat(&info, io, rec->original)) == 0) {
            st = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EEXISTS, rec->original,
                                "a file exists here; the trashed one (%s) stays in the trash",
                                rec->trash);
            outcome = ICM_TRASH_REFUSED;
        } else if (st != ICM_ENOTFOUND) {
            outcome = ICM_TRASH_FAILED;
        } else if (o.dry_run) {
            outcome = ICM_TRASH_WOULD;
        } else {
            st = icm__fileio_move(io, rec->trash, rec->original, rec->size_bytes);
            int64_t moved_at = icm__now_ms();
            if (st == 0)
                prune_trash_folders(io, root, rec);
            outcome = st == 0               ? ICM_TRASH_RESTORED
                      : st == ICM_EEXISTS   ? ICM_TRASH_REFUSED
                      : st == ICM_ENOTFOUND ? ICM_TRASH_ABSENT
                                            : ICM_TRASH_FAILED;
            int jr = st == 0 ? restore_log_add(&log, rec, moved_at) : 0;
            if (jr == ICM_ENOMEM)
                st = ICM_ENOMEM;
            else if (jr != 0 && t.first_failure == 0)
                t.first_failure = jr; /* restored, but records are not written */
        }
        if (st == ICM_ENOMEM)
            rc = ICM_ENOMEM;
        else
            rc = report(&t, rec, outcome, st);
    }
    /* the last batch, also after a failure or a stop (its files are back), keeping that
     * failure's message */
    if (log.n > 0) {
        icm__error_saved *saved = rc != 0 ? icm__error_save() : NULL;
        int jr = restore_log_flush(&log);
        if (rc != 0)
            icm__error_restore(saved);
        else if (jr == ICM_ENOMEM)
            rc = ICM_ENOMEM;
        else if (jr != 0 && t.first_failure == 0)
            t.first_failure = jr;
    }
    restore_log_dispose(&log);
    if (rc == 0 && matched == 0)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_ENOTFOUND, trash,
                            "no trashed file of the table location %s%s in this trash; "
                            "nothing restored",
                            o.table, o.path_count > 0 ? " below the --path given" : "");
    if (rc == 0)
        rc = tally_result(&t);
    icm__free(nm);
    icm__free(idx);
    journals_free(&j);
    icm__free(root);
    if (out != NULL)
        *out = counts;
    return rc;
}

/* A local journal locked exclusively for its removal: the open descriptor (close it after the
 * unlink), -2 when a run holds it (it may append yet: not removed), -1 when no lock can be
 * taken or it is not local (removed as before: the run's own nlink check writes anew). */
static int lock_idle_journal(const char *name)
{
    char *path = NULL;
    if (icm__location_local_part(name) == NULL || icm__location_fs_path(name, &path) != 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    icm__free(path);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        close(fd);
        return err == EWOULDBLOCK ? -2 : -1;
    }
    return fd;
}

int icm_trash_expire(icm_trash_counts *out, icm_fileio *io, const char *trash,
                     const icm_trash_options *opts)
{
    icm_trash_counts counts = {{0}, 0};
    icm_trash_options o;
    char *root = NULL;
    int rc = check_args("icm_trash_expire", out, io, trash, opts, &o, &root);
    if (rc == 0 && o.older_than_ms < 0)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, trash,
                            "icm_trash_expire: older_than_ms must be 0 or more");
    journals j;
    memset(&j, 0, sizeof j);
    if (rc == 0)
        rc = journals_load(&j, io, root);
    int64_t now = o.now_ms != 0 ? o.now_ms : icm__now_ms();
    int64_t cutoff = now - o.older_than_ms;
    size_t m = rc == 0 ? j.n : 0;
    size_t *idx = rc == 0 ? ordered(&j) : NULL;
    /* per record: whether its trash location is old (by its newest record) and its file gone
     * after the run; per journal object: whether every record of it is */
    bool *done = rc == 0 ? icm__calloc(j.n > 0 ? j.n : 1, sizeof *done) : NULL;
    bool *keep_journal = rc == 0 ? icm__calloc(j.n_names > 0 ? j.n_names : 1, 1) : NULL;
    bool *has_records = rc == 0 ? icm__calloc(j.n_names > 0 ? j.n_names : 1, 1) : NULL;
    if (rc == 0 && (idx == NULL || done == NULL || keep_journal == NULL || has_records == NULL))
        rc = icm__error_oom();
    tally t = {&counts, &o, 0, false,
               "some trashed files were kept: the file there is not the one its record "
               "describes (named on stderr)"};
    for (size_t k = 0, end; rc == 0 && k < m; k = end) {
        /* one trash location: records idx[k, end), the newest first */
        const icm__trash_record *rec = &j.recs[idx[k]];
        for (end = k + 1; end < m && strcmp(j.keys[idx[end]], j.keys[idx[k]]) == 0; end++)
            ;
        /* Only the name's newest event counts: a restore since (or at once with) its newest
         * trash record leaves nothing this trash recorded there, and a file there now is
         * another's (trashed again, by a record this run may not have read). */
        bool old = icm__trash_record_ms(rec) <= cutoff;
        /* The window is judged by the store's clock too: every journal holding a record of
         * the name was last written (its mtime or Last-Modified) before the cutoff. A record's
         * own time is its writer's clock; one running days behind would otherwise shorten the
         * undo window by as much. The journal is written before its batch moves and no
         * earlier than its first record, so this only ever keeps a file longer. */
        for (size_t i = k; old && i < end; i++) {
            int64_t written = j.mtimes_ms[j.journal_of[idx[i]]];
            old = written >= 0 && written <= cutoff;
        }
        /* An absent file is taken as gone (its records may go) only once its newest record is
         * a day old: a sweep writes a batch's records before it moves the batch, and the
         * files still on their way must not lose their records (adversary round 3, F3). And
         * every journal holding a record of it must be as old by the store's clock (its
         * last modification): a record's own time is its writer's clock, which may run
         * behind (adversary round 4). */
        int64_t settle_cutoff = now - ICM__TRASH_ABSENT_SETTLE_MS;
        bool settled = icm__trash_record_ms(rec) <= settle_cutoff;
        for (size_t i = k; settled && i < end; i++) {
            int64_t written = j.mtimes_ms[j.journal_of[idx[i]]];
            settled = written >= 0 && written <= settle_cutoff;
        }
        bool is_gone = rec->restored;
        if (old && rec->restored) {
            /* A file at a name whose newest record is a restore was trashed again by a run
             * whose record is older by its clock (another host's, or a batch stamped at its
             * start): its records stay (adversary round 3, F4). */
            icm_file_info info = ICM_FILE_INFO_INIT;
            int st = record_confined(root, NULL, rec);
            if (st == 0)
                st = icm_fileio_stat(&info, io, rec->trash);
            if (st == ICM_ENOMEM)
                rc = ICM_ENOMEM;
            else if (st != ICM_ENOTFOUND)
                is_gone = false; /* there, or cannot be told: kept */
            icm_error_clear();
        }
        if (old && !rec->restored) {
            icm_file_info info = ICM_FILE_INFO_INIT;
            int st = record_confined(root, NULL, rec);
            if (st == 0)
                st = icm_fileio_stat(&info, io, rec->trash);
            icm_trash_outcome outcome;
            if (st == ICM_EREFUSED) {
                outcome = ICM_TRASH_FAILED;
            } else if (st == ICM_ENOTFOUND) {
                outcome = ICM_TRASH_ABSENT;
                is_gone = settled;
            } else if (st != 0) {
                outcome = ICM_TRASH_FAILED;
            } else if ((st = same_file(rec, &info)) != 0) {
                outcome = st == ICM_EREFUSED ? ICM_TRASH_REFUSED : ICM_TRASH_FAILED;
            } else if (o.dry_run) {
                outcome = ICM_TRASH_WOULD;
                is_gone = true; /* would be: so would its journal, below */
            } else {
                st = icm_fileio_delete(io, rec->trash);
                if (st == 0)
                    prune_trash_folders(io, root, rec);
                outcome = st == 0 ? ICM_TRASH_EXPIRED : ICM_TRASH_FAILED;
                is_gone = st == 0;
            }
            rc = st == ICM_ENOMEM ? ICM_ENOMEM : report(&t, rec, outcome, st);
        }
        for (size_t i = k; i < end; i++)
            done[idx[i]] = old && is_gone;
    }
    /* journal objects whose every record is old and gone go too, when the object itself is
     * that old: a run still appending to one has written it since (and records newer than any
     * window); such a run also starts a new journal when it finds its own removed */
    for (size_t i = 0; rc == 0 && i < j.n; i++) {
        has_records[j.journal_of[i]] = true;
        if (!done[i])
            keep_journal[j.journal_of[i]] = true;
    }
    for (size_t k = 0; rc == 0 && k < j.n_names; k++) {
        if (!has_records[k] || keep_journal[k])
            continue;
        icm_file_info info = ICM_FILE_INFO_INIT;
        int st = no_link_below(root, j.names[k], "the trash");
        if (st == 0)
            st = icm_fileio_stat(&info, io, j.names[k]);
        if (st == ICM_ENOTFOUND) {
            icm_error_clear();
            continue;
        }
        if (st == 0 && info.mtime_ms > cutoff)
            continue;
        if (st == 0 && o.dry_run) { /* would be removed (a run holding it could still keep it) */
            counts.journals_removed++;
            continue;
        }
        /* a run still holding its journal (flock, local disk) may append to it yet: kept */
        int held = -1;
        if (st == 0 && (held = lock_idle_journal(j.names[k])) == -2)
            continue;
        if (st == 0)
            st = icm_fileio_delete(io, j.names[k]);
        if (held >= 0)
            close(held);
        if (st == 0)
            counts.journals_removed++;
        else if (t.first_failure == 0)
            t.first_failure = st;
    }
    if (rc == 0)
        rc = tally_result(&t);
    icm__free(idx);
    icm__free(done);
    icm__free(keep_journal);
    icm__free(has_records);
    journals_free(&j);
    icm__free(root);
    if (out != NULL)
        *out = counts;
    return rc;
}

const char *icm_trash_outcome_name(icm_trash_outcome outcome)
{
    static const char *const names[] = {"restored", "expired", "would", "absent", "refused",
                                        "failed"};
    return (unsigned)outcome < ICM__ARRAY_LEN(names) ? names[outcome] : "unknown";
}

int icm_trash_options_init(icm_trash_options *opts, unsigned version)
{
    if (opts == NULL || version != ICM_TRASH_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_trash_options_init: NULL options or unknown version %u",
                              version);
    icm_trash_options d = ICM_TRASH_OPTIONS_INIT;
    *opts = d;
    return 0;
}
