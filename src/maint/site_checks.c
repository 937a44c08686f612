/*
 * maint/site_checks.c: the checks on a table's surroundings that the orphan sweep and expiry
 * make before deleting (site_checks.h). Read-only.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "icemaint/metadata.h"
#include "catalog/catalog_internal.h"
#include "maint/keepset.h"
#include "maint/other_format.h"
#include "maint/places.h"
#include "maint/site_checks.h"
#include "spec/metadata_places.h"
#include "spec/metadata_internal.h"
#include "util/location.h"

int icm__site_resolve(const icm__site *s, const char *location, char **out)
{
    *out = NULL;
    int rc = icm_fileio_resolve(s->io, location, out);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    return rc;
}

/* ---- a look at a metadata file ---- */

void icm__peeked_dispose(icm__peeked *m)
{
    icm__free(m->uuid);
    for (size_t i = 0; i < ICM__ARRAY_LEN(m->roots); i++)
        icm__free(m->roots[i]);
    memset(m, 0, sizeof *m);
    m->last_updated_ms = -1;
}

/* Append a copy of `file` (when not NULL) to `log`. */
static int push_copy(icm__ptrvec *v, const char *file)
{
    if (file == NULL)
        return 0;
    char *copy = icm__strdup(file);
    if (copy == NULL || icm__ptrvec_push(v, copy) != 0) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    return 0;
}

/* The location and the properties naming where a table writes (metadata_places.h). */
static const char *const root_names[] = ICM__MD_PLACES_ROOT_NAMES;

int icm__site_peek_once(const icm__site *s, const char *loc, icm__peeked *m, icm__ptrvec *log)
{
    icm__peeked_dispose(m);
    if (log != NULL)
        icm__ptrvec_dispose(log, icm__free);
    char *data = NULL;
    size_t len = 0;
    int rc = icm_fileio_read(s->io, loc, &data, &len);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        m->gone = true;
        return 0;
    }
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        icm_error_clear();
        return 0; /* unreadable: the caller decides */
    }
    icm_table_metadata *md = NULL;
    rc = icm_table_metadata_parse(&md, data, len, loc);
    if (rc == 0) {
        const char *u = icm_table_metadata_uuid(md);
        const char *r[ICM__ARRAY_LEN(m->roots)] = {icm_table_metadata_location(md)};
        for (size_t i = 1; i < ICM__ARRAY_LEN(root_names); i++)
            r[i] = icm_table_metadata_property(md, root_names[i]);
        m->readable = true;
        m->last_updated_ms = icm_table_metadata_last_updated_ms(md);
        if (u != NULL && (m->uuid = icm__strdup(u)) == NULL)
            rc = ICM_ENOMEM;
        for (size_t i = 0; rc == 0 && i < ICM__ARRAY_LEN(r); i++)
            if (r[i] != NULL && r[i][0] != '\0' && (m->roots[i] = icm__strdup(r[i])) == NULL)
                rc = ICM_ENOMEM;
        size_t n = log != NULL ? icm_table_metadata_metadata_log_count(md) : 0;
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = push_copy(log, icm_table_metadata_metadata_log_at(md, i)->metadata_file);
    } else if (rc != ICM_ENOMEM) {
        /* A placeholder or a file Java would reject still names its table and places. */
        icm_error_clear();
        icm__md_places mp;
        rc = icm__metadata_places_lenient(data, len, loc, &mp);
        if (rc == 0) {
            m->readable = true;
            m->uuid = mp.uuid;
            mp.uuid = NULL;
            for (size_t i = 0; i < ICM__ARRAY_LEN(m->roots); i++) {
                m->roots[i] = mp.roots[i];
                mp.roots[i] = NULL;
            }
            if (log != NULL) {
                *log = mp.log;
                mp.log = (icm__ptrvec)ICM__PTRVEC_INIT;
            }
        } else if (rc != ICM_ENOMEM) {
            icm_error_clear();
            rc = 0;
        }
        icm__md_places_dispose(&mp);
    }
    if (rc == ICM_ENOMEM) {
        icm__peeked_dispose(m);
        if (log != NULL)
            icm__ptrvec_dispose(log, icm__free);
    }
    icm_table_metadata_free(md);
    icm__free(data);
    return rc;
}

int icm__site_peek(const icm__site *s, const char *loc, icm__peeked *m, icm__ptrvec *log)
{
    int rc = icm__site_peek_once(s, loc, m, log);
    for (int attempt = 0; rc == 0 && !m->readable && !m->gone && attempt < 3; attempt++) {
        struct timespec pause = {0, 200000000L * (attempt + 1)};
        nanosleep(&pause, NULL);
        rc = icm__site_peek_once(s, loc, m, log);
    }
    return rc;
}

/* Directly inside one of this table's metadata folders (by name). */
static bool in_own_md_dir(const icm__site *s, const char *loc)
{
    for (size_t i = 0; i < s->n_md_dirs; i++) {
        const char *rest;
        if (icm__location_strip_prefix(loc, s->md_dirs[i], &rest) && strchr(rest, '/') == NULL)
            return true;
    }
    return false;
}

bool icm__site_same_table(const icm__site *s, const char *loc, const char *uuid)
{
    if (s->uuid != NULL && uuid != NULL)
        return strcasecmp(s->uuid, uuid) == 0;
    if (s->uuid == NULL && uuid != NULL)
        return false;
    return in_own_md_dir(s, loc);
}

/* ---- newer commits: a stale pointer ---- */

/*
 * A commit writes a new metadata file whose metadata-log names its base, the catalog's pointer
 * it read. So a same-table metadata file whose log names our pointer (a successor) was written
 * by a writer that took our pointer as its base. A single successor may be a crashed or
 * rejected writer's leftover that no catalog took (it is swept as an orphan). But a successor
 * that another same-table file's log names was itself some writer's base, that is, some
 * catalog's current pointer: the table went past ours through an accepted commit. So does a
 * successor a version hint names (a filesystem-layout table publishes a commit by its hint).
 *
 * Where such files are: in the table's metadata folders (the pointer's own folder, the
 * location's metadata/ and write.metadata.path), which are listed here whatever the run
 * lists, and, for the sweep, wherever the listing found unreferenced ones. Only files that may
 * be newer are read (on_md_file: numbered apart from the pointer, or modified no earlier than
 * it; files that fell off the metadata log long ago are never read again).
 *
 * Names are compared as places: equal locations, or the same file name in folders that
 * really are one (a table registered through a link names the pointer differently from the
 * writer's metadata-log).
 *
 * What cannot be seen: newer commits whose metadata lies outside every folder the pointer's
 * metadata knows (the newer commits moved write.metadata.path), and one commit past the
 * pointer with no version hint (indistinguishable from a rejected writer's leftover). The
 * README says so.
 */

/* A metadata file of this table looked at: successors keep their metadata-log, the others
 * only their name and time (their logs are read again only when needed). */
typedef struct successor {
    char *loc;
    int64_t last_updated_ms; /* -1: unknown */
    icm__ptrvec log;         /* the files its metadata-log names (char *) */
} successor;

static void successor_free(void *item)
{
    successor *s = item;
    if (s == NULL)
        return;
    icm__free(s->loc);
    icm__ptrvec_dispose(&s->log, icm__free);
    icm__free(s);
}

void icm__newer_commits_init(icm__newer_commits *nc, const icm__site *s)
{
    memset(nc, 0, sizeof *nc);
    nc->site = s;
    nc->succ = (icm__ptrvec)ICM__PTRVEC_INIT;
    nc->others = (icm__ptrvec)ICM__PTRVEC_INIT;
    nc->noted = (icm__ptrvec)ICM__PTRVEC_INIT;
}

void icm__newer_commits_dispose(icm__newer_commits *nc)
{
    icm__ptrvec_dispose(&nc->succ, successor_free);
    icm__ptrvec_dispose(&nc->others, successor_free);
    icm__ptrvec_dispose(&nc->noted, icm__free);
    icm__free(nc->real_pointer);
    icm__peeked_dispose(&nc->foreign);
    icm__free(nc->foreign_loc);
    memset(nc, 0, sizeof *nc);
}

/* Whether `a` and `b` name one file: equal locations, or one file name in one real folder. */
static int same_file(const icm__site *s, const char *a, const char *real_a, const char *b,
                     bool *out)
{
    *out = icm__location_equal(a, b);
    if (*out || strcmp(icm__basename(a), icm__basename(b)) != 0)
        return 0;
    char *own_real = NULL, *real_b = NULL;
    int rc = 0;
    if (real_a == NULL) {
        rc = icm__site_resolve(s, a, &own_real);
        real_a = own_real;
    }
    if (rc == 0 && real_a != NULL)
        rc = icm__site_resolve(s, b, &real_b);
    if (rc != 0 && rc != ICM_ENOMEM) {
        icm_error_clear(); /* cannot be resolved: judged by name */
        rc = 0;
    }
    *out = real_a != NULL && real_b != NULL && icm__location_equal(real_a, real_b);
    icm__free(own_real);
    icm__free(real_b);
    return rc;
}

static int log_names(const icm__site *s, const icm__ptrvec *log, const char *loc,
                     const char *real_loc, bool *out)
{
    *out = false;
    int rc = 0;
    for (size_t i = 0; i < log->len && rc == 0 && !*out; i++)
        rc = same_file(s, loc, real_loc, log->items[i], out);
    return rc;
}

static int real_pointer(icm__newer_commits *nc, const char **out)
{
    if (!nc->real_pointer_done) {
        nc->real_pointer_done = true;
        int rc = icm__site_resolve(nc->site, nc->site->md_location, &nc->real_pointer);
        if (rc == ICM_ENOMEM)
            return rc;
        if (rc != 0)
            icm_error_clear();
    }
    *out = nc->real_pointer;
    return 0;
}

static bool was_noted(const icm__newer_commits *nc, const char *loc)
{
    for (size_t i = 0; i < nc->noted.len; i++)
        if (icm__location_equal(nc->noted.items[i], loc))
            return true;
    return false;
}

int icm__newer_commits_note(icm__newer_commits *nc, const char *loc, int64_t last_updated_ms,
                            icm__ptrvec *log)
{
    if (was_noted(nc, loc)) {
        icm__ptrvec_dispose(log, icm__free);
        return 0;
    }
    int rc = push_copy(&nc->noted, loc);
    const char *real = NULL;
    bool names_pointer = false;
    if (rc == 0)
        rc = real_pointer(nc, &real);
    if (rc == 0)
        rc = log_names(nc->site, log, nc->site->md_location, real, &names_pointer);
    successor *s = rc == 0 ? icm__calloc(1, sizeof *s) : NULL;
    if (rc == 0 && (s == NULL || (s->loc = icm__strdup(loc)) == NULL ||
                    icm__ptrvec_push(names_pointer ? &nc->succ : &nc->others, s) != 0)) {
        successor_free(s);
        rc = ICM_ENOMEM;
    } else if (rc == 0) {
        s->last_updated_ms = last_updated_ms;
        s->log = (icm__ptrvec)ICM__PTRVEC_INIT;
        if (names_pointer) {
            s->log = *log; /* handed over */
            *log = (icm__ptrvec)ICM__PTRVEC_INIT;
        }
    }
    icm__ptrvec_dispose(log, icm__free);
    return rc;
}

/* Whether `s` starts with a UUID in its text form (8-4-4-4-12 hex digits). */
static bool uuid_at(const char *s)
{
    for (size_t i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        char c = s[i];
        if (dash ? c != '-'
                 : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

/* How a metadata file's name is numbered, as the writers that number after it parse it:
 * `00012-<uuid>.metadata.json` (a catalog's: 'n'; PyIceberg takes the number only when a UUID
 * follows, Java whenever a dash does: a name numbered without a UUID is read as unnumbered,
 * the safe side), `v12.metadata.json`, `v12.gz.metadata.json`, `v12.metadata.json.gz` (a
 * filesystem table's: 'v'), with *version 12; 0 and *version -1 when it carries none. */
static char name_scheme(const char *loc, long long *version)
{
    const char *name = icm__basename(loc);
    char scheme = *name == 'v' ? 'v' : 'n';
    if (scheme == 'v')
        name++;
    *version = -1;
    if (*name < '0' || *name > '9')
        return 0;
    char *end = NULL;
    long long v = strtoll(name, &end, 10);
    if (end == NULL || v < 0)
        return 0;
    if (scheme == 'n' ? *end != '-' || !uuid_at(end + 1) || end[37] != '.' : *end != '.')
        return 0;
    *version = v;
    return scheme;
}

/* Seconds of slack for coarse modification times (some stores keep whole seconds). */
#define MTIME_SLACK_MS 2000

typedef struct scan {
    icm__newer_commits *nc;
    const char *dir;
    char pointer_scheme;      /* name_scheme of the pointer */
    long long pointer_version;
    int64_t pointer_mtime_ms; /* -1: unknown */
    bool pointer_mtime_done;  /* pointer_mtime_ms was looked up */
    icm__ptrvec files;        /* candidates found (char *) */
    icm__ptrvec maybe;        /* numbered at or below the pointer: read when modified no
                                 earlier than the pointer (char *) */
    icm__ptrvec hints;        /* version hints found (char *) */
} scan;

/*
 * Which metadata files of a folder may be newer than the pointer, so are read: one whose name
 * is numbered differently (a filesystem table's vN pointer registered in a catalog is followed
 * by 00000-<uuid>: writers number after a version they cannot parse from 0 again), or not at
 * all, or with a higher version; and one numbered at or below the pointer that the pointer's
 * metadata-log does not name and that was modified no earlier than the pointer (less
 * MTIME_SLACK_MS; numbers can lie, a file written after the pointer is what matters). The
 * pointer's past and files that fell off its metadata log long ago are never read.
 */
static int on_md_file(const icm_file_info *f, void *payload)
{
    scan *sc = payload;
    const char *rest;
    if (!icm__location_strip_prefix(f->location, sc->dir, &rest) || strchr(rest, '/') != NULL)
        return 0; /* (a sub-folder: not where a commit writes) */
    bool document;
    if (!icm__table_metadata_file_name(f->location, &document))
        return 0;
    if (!document)
        return push_copy(&sc->hints, f->location);
    if (icm__location_equal(f->location, sc->nc->site->md_location))
        return 0;
    long long v;
    char scheme = name_scheme(f->location, &v);
    bool numbered_below = scheme != 0 && scheme == sc->pointer_scheme && v <= sc->pointer_version;
    return push_copy(numbered_below ? &sc->maybe : &sc->files, f->location);
}

/* Whether the pointer's own metadata-log names `loc` (by name): a file of its past. */
static bool in_pointer_log(const icm__site *s, const char *loc)
{
    if (strcmp(icm_table_get_metadata_location(s->t), s->md_location) != 0)
        return false; /* (t moved on: its log is not the pointer's) */
    const icm_table_metadata *md = icm_table_get_metadata(s->t);
    size_t n = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; i < n; i++) {
        const char *f = icm_table_metadata_metadata_log_at(md, i)->metadata_file;
        if (f != NULL && icm__location_equal(f, loc))
            return true;
    }
    return false;
}

/* The pointer's modification time (once; -1 when unknown). */
static int pointer_mtime(const icm__site *s, scan *sc)
{
    if (sc->pointer_mtime_done)
        return 0;
    sc->pointer_mtime_done = true;
    icm_file_info info;
    int rc = icm_fileio_stat(s->io, s->md_location, &info);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0)
        icm_error_clear();
    sc->pointer_mtime_ms = rc == 0 ? info.mtime_ms : -1;
    return 0;
}

/* Move the files of sc->maybe that the pointer's metadata-log does not name and that were
 * modified no earlier than the pointer (or whose time is unknown) to sc->files. */
static int modified_since_pointer(const icm__site *s, scan *sc)
{
    for (size_t i = 0; i < sc->maybe.len; i++) {
        if (in_pointer_log(s, sc->maybe.items[i]) || was_noted(sc->nc, sc->maybe.items[i]))
            continue; /* the pointer's past, or read already (the sweep's listing) */
        int rc = pointer_mtime(s, sc);
        icm_file_info info;
        if (rc == 0)
            rc = sc->pointer_mtime_ms < 0 ? ICM_EIO
                                          : icm_fileio_stat(s->io, sc->maybe.items[i], &info);
        if (rc == ICM_ENOMEM)
            return rc;
        if (rc != 0)
            icm_error_clear(); /* (gone, or the time is unknown: read it) */
        if (rc == ICM_ENOTFOUND ||
            (rc == 0 && info.mtime_ms >= 0 &&
             info.mtime_ms < sc->pointer_mtime_ms - MTIME_SLACK_MS))
            continue;
        if (icm__ptrvec_push(&sc->files, sc->maybe.items[i]) != 0)
            return ICM_ENOMEM;
        sc->maybe.items[i] = NULL;
    }
    return 0;
}

/* Note one file: read it, keep it when it is this table's. */
static int note_file(icm__newer_commits *nc, const char *loc)
{
    if (was_noted(nc, loc))
        return 0;
    icm__peeked m = {0};
    icm__ptrvec log = ICM__PTRVEC_INIT;
    int rc = icm__site_peek_once(nc->site, loc, &m, &log);
    bool same = rc == 0 && m.readable && icm__site_same_table(nc->site, loc, m.uuid);
    if (same) {
        rc = icm__newer_commits_note(nc, loc, m.last_updated_ms, &log);
    } else if (rc == 0 && m.readable && nc->foreign_loc == NULL) {
        /* another table's metadata in this table's metadata folder (the first one) */
        if ((nc->foreign_loc = icm__strdup(loc)) == NULL)
            rc = ICM_ENOMEM;
        nc->foreign = m;
        memset(&m, 0, sizeof m);
    }
    icm__peeked_dispose(&m);
    icm__ptrvec_dispose(&log, icm__free);
    return rc;
}

/* The metadata file a version hint's text names in folder `dir` (Java's Hadoop tables write
 * the version number; some writers the file name): the first that exists, or NULL. */
static int hinted_file(const icm__site *s, const char *hint, const char *dir, char **out)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = icm_fileio_read(s->io, hint, &text, &len);
    if (rc != 0) {
        if (rc == ICM_ENOMEM)
            return rc;
        icm_error_clear();
        return 0;
    }
    size_t n = 0;
    while (n < len && text[n] != '\n' && text[n] != '\r' && text[n] != ' ' && text[n] != '\0')
        n++;
    char *name = NULL;
    bool digits = n > 0 && n < 19;
    for (size_t i = 0; i < n && digits; i++)
        digits = text[i] >= '0' && text[i] <= '9';
    static const char *const forms[] = {".metadata.json", ".gz.metadata.json",
                                        ".metadata.json.gz"};
    for (size_t i = 0; rc == 0 && *out == NULL && i < (digits ? ICM__ARRAY_LEN(forms) : 1); i++) {
        name = digits ? icm__sprintf("v%.*s%s", (int)n, text, forms[i])
                      : icm__sprintf("%.*s", (int)n, text);
        if (name == NULL) {
            rc = ICM_ENOMEM;
            break;
        }
        bool doc = false;
        if (name[0] != '\0' && strchr(name, '/') == NULL &&
            icm__table_metadata_file_name(name, &doc) && doc) {
            char *loc = icm__location_join(dir, name);
            icm_file_info info;
            if (loc == NULL)
                rc = ICM_ENOMEM;
            else if (icm_fileio_stat(s->io, loc, &info) == 0)
                *out = loc, loc = NULL;
            else
                icm_error_clear();
            icm__free(loc);
        }
        icm__free(name);
    }
    icm__free(text);
    return rc;
}

static const successor *find_successor(const icm__newer_commits *nc, const char *loc)
{
    for (size_t i = 0; i < nc->succ.len; i++) {
        const successor *s = nc->succ.items[i];
        if (icm__location_equal(s->loc, loc))
            return s;
    }
    return NULL;
}

static int refuse_stale(const icm__newer_commits *nc, const char *newer, const char *why)
{
    const icm__site *s = nc->site;
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, newer,
                          "newer metadata of this same table: %s, so the table was committed "
                          "past this catalog's pointer %s, which looks stale (a copied or "
                          "restored catalog, or a table registered at an older file?); %s "
                          "from it would delete the newer commits' metadata, manifests and "
                          "data, so nothing is deleted (no override: run through the catalog "
                          "that holds the newest pointer)",
                          why, s->md_location, s->run_a);
}

/* Some successor that `log` (of `loc`) names, other than `loc` itself. */
static int named_successor(icm__newer_commits *nc, const icm__ptrvec *log, const char *loc,
                           const successor **out)
{
    *out = NULL;
    int rc = 0;
    for (size_t i = 0; i < nc->succ.len && rc == 0 && *out == NULL; i++) {
        const successor *s = nc->succ.items[i];
        bool named = false;
        if (!icm__location_equal(s->loc, loc))
            rc = log_names(nc->site, log, s->loc, NULL, &named);
        if (named)
            *out = s;
    }
    return rc;
}

/* Where the pointer's known history starts (the oldest timestamp of its metadata-log, or its
 * own last-updated-ms when the log is empty) and its metadata-log (copies), from the table's
 * metadata when it is the pointer's; *since -1 when unknown. */
static int pointer_history(const icm__site *s, int64_t *since, icm__ptrvec *log)
{
    *since = -1;
    if (strcmp(icm_table_get_metadata_location(s->t), s->md_location) != 0)
        return 0;
    const icm_table_metadata *md = icm_table_get_metadata(s->t);
    *since = icm_table_metadata_last_updated_ms(md);
    size_t n = icm_table_metadata_metadata_log_count(md);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const icm_metadata_log_entry *e = icm_table_metadata_metadata_log_at(md, i);
        if (e->timestamp_ms > 0 && e->timestamp_ms < *since)
            *since = e->timestamp_ms;
        rc = push_copy(log, e->metadata_file);
    }
    return rc;
}

/*
 * A forked history: the table's history may have split (a catalog restored from a backup that
 * committed again, or one metadata file registered in two catalogs that both commit), so no
 * file's metadata-log names the pointer. A same-table file written within the pointer's known
 * history or after it (a last-updated-ms past the oldest entry of the pointer's metadata-log)
 * that the pointer's metadata-log does not name, and that another same-table file's
 * metadata-log (or a version hint) names, was some catalog's pointer: a commit this pointer
 * does not know was accepted, and its files are live there. Whichever history is the live one,
 * either side's run would delete the other's files. Files older than the pointer's known
 * history (fallen off its metadata-log) are not judged. `forked` gets the candidates
 * (borrowed names).
 */
static int after_the_pointer(icm__newer_commits *nc, icm__ptrvec *forked)
{
    int64_t since;
    icm__ptrvec plog = ICM__PTRVEC_INIT;
    int rc = pointer_history(nc->site, &since, &plog);
    const icm__ptrvec *sets[2] = {&nc->succ, &nc->others};
    for (size_t k = 0; k < 2 && rc == 0 && since > 0; k++)
        for (size_t i = 0; i < sets[k]->len && rc == 0; i++) {
            const successor *f = sets[k]->items[i];
            bool past = false;
            if (f->last_updated_ms <= since)
                continue;
            const char *real = NULL;
            rc = real_pointer(nc, &real);
            if (rc == 0)
                rc = same_file(nc->site, nc->site->md_location, real, f->loc, &past);
            if (rc == 0 && !past)
                rc = log_names(nc->site, &plog, f->loc, NULL, &past);
            if (rc == 0 && !past && icm__ptrvec_push(forked, f->loc) != 0)
                rc = ICM_ENOMEM;
        }
    icm__ptrvec_dispose(&plog, icm__free);
    return rc;
}

/* Some name of `names` (other than `self`) that `log` names. */
static int log_names_one_of(const icm__site *s, const icm__ptrvec *log, const icm__ptrvec *names,
                            const char *self, const char **out)
{
    *out = NULL;
    int rc = 0;
    for (size_t i = 0; i < names->len && rc == 0 && *out == NULL; i++) {
        bool named = false;
        if (!icm__location_equal(names->items[i], self))
            rc = log_names(s, log, names->items[i], NULL, &named);
        if (named)
            *out = names->items[i];
    }
    return rc;
}

static int refuse_forked(const icm__newer_commits *nc, const char *file, const char *by)
{
    const icm__site *s = nc->site;
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, file,
                          "metadata of this same table that is not in the history of this "
                          "catalog's pointer %s (written since that history began, and not in "
                          "its metadata-log) was some catalog's pointer (%s names it): the "
                          "table's history forked (a restored or copied catalog, or one "
                          "metadata file registered in two catalogs?), and %s from this "
                          "pointer would delete the other history's metadata, manifests and "
                          "data, so nothing is deleted (no override: if the other history is "
                          "abandoned, move its metadata files out of the metadata folder)",
                          s->md_location, by, s->run_a);
}

/* One same-table file's log (`log`, of `loc`) against the successors (a stale pointer) and the
 * files written after the pointer outside its history (a fork). */
static int judge_log(icm__newer_commits *nc, const icm__ptrvec *log, const char *loc,
                     const icm__ptrvec *forked)
{
    const successor *base = NULL;
    int rc = named_successor(nc, log, loc, &base);
    if (rc == 0 && base != NULL) {
        char *why = icm__sprintf("its metadata-log names %s, whose metadata-log names the "
                                 "pointer", base->loc);
        rc = why != NULL ? refuse_stale(nc, loc, why) : ICM_ENOMEM;
        icm__free(why);
        return rc;
    }
    const char *fork = NULL;
    if (rc == 0)
        rc = log_names_one_of(nc->site, log, forked, loc, &fork);
    if (rc == 0 && fork != NULL) {
        char *by = icm__sprintf("the metadata-log of %s", loc);
        rc = by != NULL ? refuse_forked(nc, fork, by) : ICM_ENOMEM;
        icm__free(by);
    }
    return rc;
}

static int decide(icm__newer_commits *nc, const icm__ptrvec *hinted)
{
    icm__ptrvec forked = ICM__PTRVEC_INIT;
    int rc = after_the_pointer(nc, &forked);
    if (rc != 0 || (nc->succ.len == 0 && forked.len == 0)) {
        icm__ptrvec_dispose(&forked, NULL);
        return rc;
    }
    for (size_t i = 0; i < hinted->len && rc == 0; i++) {
        const successor *s = find_successor(nc, hinted->items[i]);
        if (s != NULL)
            rc = refuse_stale(nc, s->loc,
                              "a version hint names it, and its metadata-log names the pointer");
    }
    const char *hinted_fork = NULL;
    if (rc == 0)
        rc = log_names_one_of(nc->site, &forked, hinted, "", &hinted_fork);
    if (rc == 0 && hinted_fork != NULL)
        rc = refuse_forked(nc, hinted_fork, "a version hint");
    for (size_t i = 0; i < nc->succ.len && rc == 0; i++) {
        const successor *s = nc->succ.items[i];
        rc = judge_log(nc, &s->log, s->loc, &forked);
    }
    /* The others' logs are read again (an older same-table file's log may have been trimmed
     * past the pointer, or name a commit of another history). */
    icm__peeked m = {0};
    icm__ptrvec log = ICM__PTRVEC_INIT;
    for (size_t i = 0; i < nc->others.len && rc == 0; i++) {
        const char *loc = ((const successor *)nc->others.items[i])->loc;
        rc = icm__site_peek_once(nc->site, loc, &m, &log);
        if (rc == 0 && m.readable && icm__site_same_table(nc->site, loc, m.uuid))
            rc = judge_log(nc, &log, loc, &forked);
    }
    icm__peeked_dispose(&m);
    icm__ptrvec_dispose(&log, icm__free);
    icm__ptrvec_dispose(&forked, NULL);
    return rc;
}

/* Whether metadata folder `i` is one listed before it (by name or where it really is). */
static int seen_folder(const icm__site *s, char **reals, size_t i, bool *out)
{
    *out = false;
    int rc = icm__site_resolve(s, s->md_dirs[i], &reals[i]);
    if (rc != 0 && rc != ICM_ENOMEM) {
        icm_error_clear();
        rc = 0;
    }
    for (size_t j = 0; j < i && rc == 0 && !*out; j++)
        *out = icm__location_equal(s->md_dirs[i], s->md_dirs[j]) ||
               (reals[i] != NULL && reals[j] != NULL && icm__location_equal(reals[i], reals[j]));
    return rc;
}

int icm__newer_commits_check(icm__newer_commits *nc)
{
    const icm__site *s = nc->site;
    if (s->copy)
        return 0;
    char *reals[8] = {NULL};
    icm__ptrvec hinted = ICM__PTRVEC_INIT;
    long long pointer_version;
    char pointer_scheme = name_scheme(s->md_location, &pointer_version);
    int rc = 0;
    size_t n_dirs = s->n_md_dirs < ICM__ARRAY_LEN(reals) ? s->n_md_dirs : ICM__ARRAY_LEN(reals);
    for (size_t i = 0; i < n_dirs && rc == 0; i++) {
        bool seen = false;
        rc = seen_folder(s, reals, i, &seen);
        if (rc != 0 || seen)
            continue;
        scan sc = {nc, s->md_dirs[i], pointer_scheme, pointer_version, -1, false,
                   ICM__PTRVEC_INIT, ICM__PTRVEC_INIT, ICM__PTRVEC_INIT};
        rc = icm_fileio_list_flags(s->io, s->md_dirs[i], ICM_LIST_STAT_OPTIONAL, on_md_file, &sc);
        if (rc == ICM_EUNSUPPORTED) {
            icm_error_clear(); /* a folder the io cannot reach: it cannot delete there */
            rc = 0;
        }
        if (rc == 0)
            rc = modified_since_pointer(s, &sc);
        for (size_t k = 0; k < sc.files.len && rc == 0; k++)
            rc = note_file(nc, sc.files.items[k]);
        for (size_t k = 0; k < sc.hints.len && rc == 0; k++) {
            char *file = NULL;
            rc = hinted_file(s, sc.hints.items[k], s->md_dirs[i], &file);
            if (rc == 0 && file != NULL && !icm__location_equal(file, s->md_location))
                rc = note_file(nc, file);
            if (rc == 0 && file != NULL && icm__ptrvec_push(&hinted, file) == 0)
                file = NULL;
            else if (rc == 0 && file != NULL)
                rc = ICM_ENOMEM;
            icm__free(file);
        }
        icm__ptrvec_dispose(&sc.files, icm__free);
        icm__ptrvec_dispose(&sc.maybe, icm__free);
        icm__ptrvec_dispose(&sc.hints, icm__free);
    }
    if (rc == 0)
        rc = decide(nc, &hinted);
    if (rc == 0 && s->refuse_foreign && nc->foreign_loc != NULL)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, nc->foreign_loc,
                            "another table's metadata lies in this table's metadata folder, "
                            "written no earlier than this catalog's pointer %s: table-uuid %s "
                            "(location %s), this table is %s; a table at the same place (one "
                            "dropped and created again, or registered in another catalog) "
                            "writes into these folders, and %s would delete its files, so "
                            "nothing is deleted (no override)",
                            s->md_location,
                            nc->foreign.uuid != NULL ? nc->foreign.uuid : "(none)",
                            nc->foreign.roots[0] != NULL ? nc->foreign.roots[0] : "(none)",
                            s->uuid != NULL ? s->uuid : "(no uuid)", s->run_a);
    for (size_t i = 0; i < ICM__ARRAY_LEN(reals); i++)
        icm__free(reals[i]);
    icm__ptrvec_dispose(&hinted, icm__free);
    return rc;
}

/* ---- tables that enclose a place the run deletes in ---- */

/*
 * A place a run deletes in can lie inside another table without that table's metadata being
 * anywhere the run looks: table A's location or write.data.path set to B/data, B a
 * filesystem-layout table (B/metadata is a sibling, and no catalog lists B) or a catalog table.
 * Every one of B's data files there is then unreferenced by A: the sweep would take them for
 * orphans, and expiry would delete one A once added and then removed. So the place and each
 * folder enclosing it, up to the filesystem root or the bucket, are looked at: a folder whose
 * `metadata/` folder holds a version hint or a `*.metadata.json` file (one stopping listing
 * through the table's io, so a path map applies) is a table, and the run is refused when
 * another table writes there: its metadata's table-uuid differs (or one of the two has none)
 * and the place is at or below one of the folders it writes into (inside_written_folders), or
 * its metadata cannot be read (a hint without a metadata file, an unreadable or vanished file,
 * a folder that cannot be listed). The table's own location and its own metadata folders are
 * passed over. No override: no exclusion can carve the place out of the table that holds it.
 */

/* Whether `place` is at or below `folder`, by name or where `folder` really is (its name may
 * go through a link or `..`; `real_place` is where the place really is, NULL when unknown). */
static int at_or_below(const icm__site *s, const char *place, const char *real_place,
                       const char *folder, bool *out)
{
    *out = icm__location_strip_prefix(place, folder, NULL);
    if (*out || real_place == NULL)
        return 0;
    char *real = NULL;
    int rc = icm__place_real(s->io, folder, &real);
    if (rc != 0 && rc != ICM_ENOMEM) {
        icm_error_clear(); /* a place the io cannot resolve: judged by its name */
        rc = 0;
    }
    *out = icm__place_within(place, real_place, folder, real, false);
    icm__free(real);
    return rc;
}

/* Whether the place is, or lies below, a folder the table of metadata `m` (found in the folder
 * `dir`) writes its files into: its write paths (legacy ones included), and its `data/` and
 * `metadata/` folders (below `dir` and below the location `m` names; files written before a
 * write path was set lie there). A table nested elsewhere in an enclosing table's folder (a
 * table at the warehouse root holds every other table's folder) is not inside what that table
 * writes. */
static int inside_written_folders(const icm__site *s, const char *place, const char *real_place,
                                  const char *dir, const icm__peeked *m, bool *out)
{
    *out = false;
    int rc = 0;
    for (size_t k = 1; k < ICM__ARRAY_LEN(m->roots) && rc == 0 && !*out; k++)
        if (m->roots[k] != NULL)
            rc = at_or_below(s, place, real_place, m->roots[k], out);
    const char *bases[2] = {dir, m->roots[0]};
    static const char *const subdirs[2] = {"data", "metadata"};
    for (size_t b = 0; b < 2 && rc == 0 && !*out; b++)
        for (size_t k = 0; k < 2 && rc == 0 && !*out && bases[b] != NULL; k++) {
            char *folder = icm__location_join(bases[b], subdirs[k]);
            if (folder == NULL)
                return ICM_ENOMEM;
            rc = at_or_below(s, place, real_place, folder, out);
            icm__free(folder);
        }
    return rc;
}

static int refuse_enclosing(const icm__site *s, const char *where, const char *what,
                            const char *place, const char *dir, const char *why)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, where,
                          "%s %s lies inside another table (the folder %s is a table: %s); "
                          "the %s would delete that table's files; nothing is deleted (no "
                          "override)",
                          what, place, dir, why, s->run);
}

/* The verdict on one enclosing folder `dir`: another Iceberg table, or a folder another table
 * format manages (a Delta Lake log or Hudi timeline in it: that format's files lie below, and
 * its own cleaner removes them; other_format.h). */
static int check_enclosing_folder(const icm__site *s, const char *place, const char *real_place,
                                  const char *what, const char *dir)
{
    int frc = icm__other_format_check_folder(s->io, dir);
    if (frc != 0)
        return frc;
    const char *location = icm_table_metadata_location(icm_table_get_metadata(s->t));
    if (location != NULL && icm__location_equal(dir, location))
        return 0; /* this table's own location */
    char *md_dir = icm__location_join(dir, "metadata");
    if (md_dir == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < s->n_md_dirs; i++)
        if (icm__location_equal(md_dir, s->md_dirs[i])) {
            icm__free(md_dir);
            return 0; /* this table's own metadata folder */
        }
    icm__table_md_found found;
    int rc = icm__find_table_metadata(s->io, md_dir, true, &found);
    if (rc == ICM_EUNSUPPORTED) {
        /* A folder the table's io cannot reach (a path map that maps only the table's part
         * of a bucket): neither can its listing nor its deletes. */
        icm_error_clear();
        icm__free(md_dir);
        return 0;
    }
    if (rc != 0) {
        if (rc == ICM_ENOMEM) {
            icm__free(md_dir);
            return rc;
        }
        char *why = icm__sprintf("cannot list %s to tell whether it holds table metadata: %s",
                                 md_dir, icm_error_last()->message);
        icm_error_clear();
        rc = why != NULL ? refuse_enclosing(s, md_dir, what, place, dir, why) : ICM_ENOMEM;
        icm__free(why);
        icm__free(md_dir);
        return rc;
    }
    if (!found.any) {
        icm__free(md_dir);
        return 0;
    }
    if (found.document == NULL) {
        rc = refuse_enclosing(s, md_dir, what, place, dir,
                              "its metadata folder has a version hint but no metadata file");
        icm__free(md_dir);
        return rc;
    }
    const char *doc = found.document;
    icm__peeked m = {0};
    rc = icm__site_peek(s, doc, &m, NULL);
    /* Unreadable: what it writes is unknown. Another table: only what it writes into. This
     * table's own metadata (a copy's, in a folder of its own): never. */
    bool other = rc == 0 && !m.readable;
    if (rc == 0 && m.readable && !icm__site_same_table(s, doc, m.uuid))
        rc = inside_written_folders(s, place, real_place, dir, &m, &other);
    char *why = NULL;
    if (other && !m.readable)
        why = icm__sprintf("its metadata file %s %s", doc,
                           m.gone ? "went away while being looked at"
                                  : "cannot be read to tell whether it is this table");
    else if (other)
        why = icm__sprintf("that metadata file has table-uuid %s and location %s, this "
                           "table is %s",
                           m.uuid != NULL ? m.uuid : "(none)",
                           m.roots[0] != NULL ? m.roots[0] : "(none)",
                           s->uuid != NULL ? s->uuid : "(no uuid)");
    if (other)
        rc = why != NULL ? refuse_enclosing(s, doc, what, place, dir, why) : ICM_ENOMEM;
    icm__free(why);
    icm__free(md_dir);
    icm__peeked_dispose(&m);
    icm__free(found.document);
    return rc;
}

/* `walk` and each folder enclosing it, nearest first. */
static int check_enclosing_of(const icm__site *s, const char *place, const char *real_place,
                              const char *what, const char *walk)
{
    size_t floor = icm__place_floor(walk);
    if (floor == 0)
        return 0;
    int rc = 0;
    for (size_t len = icm__location_trim_len(walk); rc == 0;) {
        char *dir = icm__sprintf("%.*s", (int)len, walk);
        if (dir == NULL)
            return ICM_ENOMEM;
        rc = check_enclosing_folder(s, place, real_place, what, dir);
        icm__free(dir);
        if (len <= floor)
            break;
        while (len > floor && walk[len - 1] != '/')
            len--;
        while (len > floor && walk[len - 1] == '/')
            len--;
    }
    return rc;
}

int icm__site_check_enclosing(const icm__site *s, const char *place, const char *real_place,
                              const char *what)
{
    int rc = check_enclosing_of(s, place, real_place, what, place);
    if (rc == 0 && real_place != NULL && !icm__location_equal(real_place, place))
        rc = check_enclosing_of(s, place, real_place, what, real_place);
    return rc;
}
