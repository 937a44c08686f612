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
    int rc = icm_fileio_resolve(out, s->io, location);
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
    int rc = icm_fileio_read(&data, &len, s->io, loc);
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

/* ---- newer commits: a stale pointer, a forked history ---- */

/*
 * A commit writes a new metadata file whose metadata-log ends with its base, the catalog's
 * pointer it read. So the files of one table form a tree by their bases, and a catalog's
 * pointer is the tip of one branch; a file some other file took as its base was some catalog's
 * pointer once (an accepted commit), while a file nothing took (a crashed or rejected writer's
 * leftover) may never have been.
 *
 *  - Stale pointer: a successor (a file whose metadata-log names our pointer) that was
 *    accepted, or that a version hint names (a filesystem-layout table publishes a commit by
 *    its hint): the table went past our pointer.
 *  - Forked history: an accepted file (or one a hint names) that is neither our pointer's
 *    ancestor nor its descendant: the history split below our pointer (a catalog restored
 *    from a backup that committed again, one metadata file registered in two catalogs), and
 *    the other branch is live somewhere. Either side's run would delete the other's files.
 *    Our pointer's ancestry is its metadata-log, then followed base by base beyond it (through
 *    the files looked at; one read per file not looked at) when some file needs judging.
 *
 * Where such files are: in the table's metadata folders (the pointer's own folder, the
 * location's metadata/ and write.metadata.path), which are listed here whatever the run lists,
 * and, for the sweep, wherever the listing found unreferenced ones. Every metadata file there
 * but the pointer and those its metadata-log names is read: a branch's numbers count its own
 * commits, not time, so no number tells an old ancestor from a short branch; and neither do
 * timestamps or modification times (writers' clocks differ, last-updated-ms does not only
 * grow, copies keep or lose times). The cost is a read per such file: few in a table that is
 * swept (the sweep deletes the ones that fell off the metadata-log) or deletes old metadata
 * after commit (docs/BENCHMARKS.md).
 *
 * Names are compared as places: equal locations, or the same file name in folders that really
 * are one (a table registered through a link names the pointer differently from the writer's
 * metadata-log).
 *
 * What cannot be seen: newer commits whose metadata lies outside every folder the pointer's
 * metadata knows (the newer commits moved write.metadata.path), and a single commit past the
 * pointer, or on another branch, that nothing took as its base and no hint names
 * (indistinguishable from a rejected writer's leftover). The README says so.
 */

/* A metadata file of this table looked at. */
typedef struct noted {
    char *loc;
    char *base;          /* the last entry of its metadata-log (the file it was committed on);
                            NULL when its log is empty */
    bool names_pointer;  /* its metadata-log names our pointer: a successor */
} noted;

static void noted_free(void *item)
{
    noted *n = item;
    if (n == NULL)
        return;
    icm__free(n->loc);
    icm__free(n->base);
    icm__free(n);
}

void icm__newer_commits_init(icm__newer_commits *nc, const icm__site *s)
{
    memset(nc, 0, sizeof *nc);
    nc->site = s;
    nc->files = (icm__ptrvec)ICM__PTRVEC_INIT;
    nc->hinted = (icm__ptrvec)ICM__PTRVEC_INIT;
}

void icm__newer_commits_dispose(icm__newer_commits *nc)
{
    icm__ptrvec_dispose(&nc->files, noted_free);
    icm__ptrvec_dispose(&nc->hinted, icm__free);
    icm__free(nc->real_pointer);
    icm__peeked_dispose(&nc->foreign);
    icm__free(nc->foreign_loc);
    icm__free(nc->unreadable_loc);
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

/* Whether some name of `names` is the file `loc`. */
static int names_file(const icm__site *s, char *const *names, size_t n, const char *loc,
                      const char *real_loc, bool *out)
{
    *out = false;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0 && !*out; i++)
        if (names[i] != NULL)
            rc = same_file(s, loc, real_loc, names[i], out);
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

static const noted *find_noted(const icm__newer_commits *nc, const char *loc)
{
    for (size_t i = 0; i < nc->files.len; i++) {
        const noted *n = nc->files.items[i];
        if (icm__location_equal(n->loc, loc))
            return n;
    }
    return NULL;
}

int icm__newer_commits_note(icm__newer_commits *nc, const char *loc, icm__ptrvec *log)
{
    int rc = 0;
    const char *real = NULL;
    bool pointer = false, names_pointer = false;
    if (find_noted(nc, loc) == NULL) {
        rc = real_pointer(nc, &real);
        if (rc == 0)
            rc = same_file(nc->site, nc->site->md_location, real, loc, &pointer);
        if (rc == 0 && !pointer)
            rc = names_file(nc->site, (char *const *)log->items, log->len,
                            nc->site->md_location, real, &names_pointer);
    }
    if (rc == 0 && !pointer && find_noted(nc, loc) == NULL) {
        noted *n = icm__calloc(1, sizeof *n);
        const char *base = log->len > 0 ? log->items[log->len - 1] : NULL;
        if (n == NULL || (n->loc = icm__strdup(loc)) == NULL ||
            (base != NULL && (n->base = icm__strdup(base)) == NULL) ||
            icm__ptrvec_push(&nc->files, n) != 0) {
            noted_free(n);
            rc = ICM_ENOMEM;
        } else {
            n->names_pointer = names_pointer;
        }
    }
    icm__ptrvec_dispose(log, icm__free);
    return rc;
}

/* Our pointer's metadata-log (copies), extended by extend_ancestry. */
typedef struct history {
    icm__ptrvec log;
} history;

static int pointer_history(const icm__site *s, history *h)
{
    h->log = (icm__ptrvec)ICM__PTRVEC_INIT;
    int rc = 0;
    if (strcmp(icm_table_get_metadata_location(s->t), s->md_location) == 0) {
        const icm_table_metadata *md = icm_table_get_metadata(s->t);
        size_t n = icm_table_metadata_metadata_log_count(md);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = push_copy(&h->log, icm_table_metadata_metadata_log_at(md, i)->metadata_file);
    } else {
        icm__peeked m = {0};
        rc = icm__site_peek_once(s, s->md_location, &m, &h->log);
        icm__peeked_dispose(&m);
    }
    return rc;
}

/* Whether the file `loc` is in our pointer's metadata-log (by name; cheap). */
static bool in_log_by_name(const history *h, const char *loc)
{
    for (size_t i = 0; i < h->log.len; i++)
        if (icm__location_equal(h->log.items[i], loc))
            return true;
    return false;
}

typedef struct scan {
    icm__newer_commits *nc;
    const char *dir;
    const history *h;
    icm__ptrvec files; /* metadata files to read (char *) */
    icm__ptrvec hints; /* version hints found (char *) */
} scan;

/* Listing callback: the metadata files of a metadata folder other than the pointer and the
 * files its metadata-log names, and the version hints. */
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
    if (icm__location_equal(f->location, sc->nc->site->md_location) ||
        in_log_by_name(sc->h, f->location))
        return 0;
    return push_copy(&sc->files, f->location);
}

/* Whether another table's place meets the sweep's listing location (at, below or around it). */
static bool meets_listing(const icm__site *s, const icm__peeked *m)
{
    if (s->list_root == NULL)
        return false;
    for (size_t i = 0; i < ICM__ARRAY_LEN(m->roots); i++) {
        const char *r = m->roots[i];
        if (r != NULL && (icm__location_strip_prefix(r, s->list_root, NULL) ||
                          icm__location_strip_prefix(s->list_root, r, NULL)))
            return true;
    }
    return false;
}

/* A metadata file that cannot be read and was modified this recently is a writer's file in
 * flight (a commit in progress, not yet anyone's base). */
#define IN_FLIGHT_MS INT64_C(600000)

/* Read one file: note it when it is this table's; remember the first other table's file whose
 * places meet the sweep's listing location. */
static int note_file(icm__newer_commits *nc, const char *loc)
{
    if (find_noted(nc, loc) != NULL)
        return 0;
    icm__peeked m = {0};
    icm__ptrvec log = ICM__PTRVEC_INIT;
    int rc = icm__site_peek(nc->site, loc, &m, &log);
    bool same = rc == 0 && m.readable && icm__site_same_table(nc->site, loc, m.uuid);
    if (rc == 0 && !m.readable && !m.gone && nc->unreadable_loc == NULL) {
        /* It may be a branch's link that nothing else shows; unless a writer is still writing
         * it (modified in the last IN_FLIGHT_MS), the run cannot tell and is refused. */
        icm_file_info info = ICM_FILE_INFO_INIT;
        int src = icm_fileio_stat(&info, nc->site->io, loc);
        if (src == ICM_ENOMEM)
            rc = src;
        else if (src != 0)
            icm_error_clear();
        bool in_flight = src == 0 && (info.mtime_ms < 0 ||
                                      info.mtime_ms >= icm__now_ms() - IN_FLIGHT_MS);
        if (rc == 0 && src == 0 && !in_flight && (nc->unreadable_loc = icm__strdup(loc)) == NULL)
            rc = ICM_ENOMEM;
    }
    if (same) {
        rc = icm__newer_commits_note(nc, loc, &log);
    } else if (rc == 0 && m.readable && nc->foreign_loc == NULL && meets_listing(nc->site, &m)) {
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
 * the version number; some writers the file name; surrounding white space is ignored): the
 * first that exists, or NULL. */
static int hinted_file(const icm__site *s, const char *hint, const char *dir, char **out)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = icm_fileio_read(&text, &len, s->io, hint);
    if (rc != 0) {
        if (rc == ICM_ENOMEM)
            return rc;
        icm_error_clear();
        return 0;
    }
    size_t from = 0;
    while (from < len && (text[from] == ' ' || text[from] == '\t' || text[from] == '\n' ||
                          text[from] == '\r'))
        from++;
    size_t n = 0;
    while (from + n < len && text[from + n] != '\n' && text[from + n] != '\r' &&
           text[from + n] != ' ' && text[from + n] != '\t' && text[from + n] != '\0')
        n++;
    const char *word = text + from;
    bool digits = n > 0 && n < 19;
    for (size_t i = 0; i < n && digits; i++)
        digits = word[i] >= '0' && word[i] <= '9';
    static const char *const forms[] = {".metadata.json", ".gz.metadata.json",
                                        ".metadata.json.gz"};
    for (size_t i = 0; rc == 0 && *out == NULL && i < (digits ? ICM__ARRAY_LEN(forms) : 1); i++) {
        char *name = digits ? icm__sprintf("v%.*s%s", (int)n, word, forms[i])
                            : icm__sprintf("%.*s", (int)n, word);
        if (name == NULL) {
            rc = ICM_ENOMEM;
            break;
        }
        if (name[0] != '\0' && strchr(name, '/') == NULL) {
            char *loc = icm__location_join(dir, name);
            icm_file_info info = ICM_FILE_INFO_INIT;
            if (loc == NULL) {
                rc = ICM_ENOMEM;
            } else if (icm_fileio_stat(&info, s->io, loc) == 0) {
                *out = loc;
                loc = NULL;
            } else {
                icm_error_clear();
            }
            icm__free(loc);
        }
        icm__free(name);
    }
    icm__free(text);
    return rc;
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

static int refuse_forked(const icm__newer_commits *nc, const char *file, const char *by)
{
    const icm__site *s = nc->site;
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, file,
                          "metadata of this same table outside the history of this catalog's "
                          "pointer %s (neither its ancestor nor its descendant) was some "
                          "catalog's pointer (%s): the table's history forked (a restored or "
                          "copied catalog, or one metadata file registered in two catalogs?), "
                          "and %s from this pointer would delete the other branch's metadata, "
                          "manifests and data, so nothing is deleted (no override: if the "
                          "other branch is abandoned, move its metadata files out of the "
                          "metadata folder)",
                          s->md_location, by, s->run_a);
}

/* Whether `f` was accepted: some noted file was committed on it (its base), or a version hint
 * names it. *by says which (borrowed; NULL for a hint). */
/* File names (the last component) of a set of files, sorted: a name not in it names none of
 * them (same_file needs equal names), so most look-ups end in a binary search instead of a
 * walk over every file. Borrowed strings. */
typedef struct name_index {
    const char **names;
    size_t n;
} name_index;

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Index the names of `items` (char *, NULL skipped). Returns 0 or ICM_ENOMEM. */
static int index_names(name_index *ix, void *const *items, size_t n)
{
    icm__free(ix->names);
    ix->n = 0;
    ix->names = icm__reallocarray(NULL, n + 1, sizeof *ix->names);
    if (ix->names == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (items[i] != NULL)
            ix->names[ix->n++] = icm__basename(items[i]);
    qsort(ix->names, ix->n, sizeof *ix->names, compare_names);
    return 0;
}

static bool index_has(const name_index *ix, const char *loc)
{
    const char *name = icm__basename(loc);
    return bsearch(&name, ix->names, ix->n, sizeof *ix->names, compare_names) != NULL;
}

/* `bases`: the names of the noted files' bases and of the hinted files (index_names). */
static int accepted(icm__newer_commits *nc, const name_index *bases, const noted *f, bool *out,
                    const char **by)
{
    *out = false;
    *by = NULL;
    if (!index_has(bases, f->loc))
        return 0;
    int rc = 0;
    for (size_t i = 0; i < nc->files.len && rc == 0 && !*out; i++) {
        const noted *g = nc->files.items[i];
        if (g != f && g->base != NULL)
            rc = same_file(nc->site, f->loc, NULL, g->base, out);
        if (*out)
            *by = g->loc;
    }
    if (rc == 0 && !*out)
        rc = names_file(nc->site, (char *const *)nc->hinted.items, nc->hinted.len, f->loc, NULL,
                        out);
    return rc;
}

/* Whether `f` descends from our pointer: a successor, or committed on one of our descendants
 * (followed base by base through the noted files). */
static int descends(icm__newer_commits *nc, const noted *f, bool *out)
{
    *out = false;
    int rc = 0;
    for (size_t step = 0; f != NULL && step <= nc->files.len && rc == 0 && !*out; step++) {
        if (f->names_pointer) {
            *out = true;
            break;
        }
        const noted *next = NULL;
        for (size_t i = 0; f->base != NULL && i < nc->files.len && rc == 0 && next == NULL; i++) {
            bool same = false;
            const noted *g = nc->files.items[i];
            rc = same_file(nc->site, g->loc, NULL, f->base, &same);
            if (same)
                next = g;
        }
        f = next;
    }
    return rc;
}

/* Our pointer's ancestors beyond its metadata-log: from its oldest entry, base by base (the
 * noted files' bases known, others read: write.metadata.path may have moved through folders
 * no longer listed), until a file has no base, cannot be read, or comes round again (a crafted
 * cycle); at most `limit` steps. Appended to h->log. */
static int extend_ancestry(icm__newer_commits *nc, history *h, size_t limit)
{
    const char *at = h->log.len > 0 ? h->log.items[0] : nc->site->md_location;
    char *cur = icm__strdup(at);
    int rc = cur != NULL ? 0 : ICM_ENOMEM;
    for (size_t step = 0; rc == 0 && cur != NULL && step < limit; step++) {
        const noted *n = find_noted(nc, cur);
        char *base = NULL;
        if (n != NULL) {
            base = n->base != NULL ? icm__strdup(n->base) : NULL;
            if (n->base != NULL && base == NULL)
                rc = ICM_ENOMEM;
        } else {
            icm__peeked m = {0};
            icm__ptrvec log = ICM__PTRVEC_INIT;
            rc = icm__site_peek_once(nc->site, cur, &m, &log);
            if (rc == 0 && log.len > 0) {
                base = log.items[log.len - 1];
                log.items[log.len - 1] = NULL;
            }
            icm__peeked_dispose(&m);
            icm__ptrvec_dispose(&log, icm__free);
        }
        icm__free(cur);
        cur = base;
        if (cur != NULL && in_log_by_name(h, cur))
            break; /* (round again: a crafted cycle) */
        if (rc == 0 && cur != NULL && push_copy(&h->log, cur) != 0)
            rc = ICM_ENOMEM;
    }
    icm__free(cur);
    return rc;
}

static int decide(icm__newer_commits *nc, history *h)
{
    name_index bases = {NULL, 0}, past = {NULL, 0};
    icm__ptrvec named = ICM__PTRVEC_INIT; /* the noted files' bases and the hinted files */
    int rc = 0;
    for (size_t i = 0; i < nc->files.len && rc == 0; i++)
        if (icm__ptrvec_push(&named, ((noted *)nc->files.items[i])->base) != 0)
            rc = ICM_ENOMEM;
    for (size_t i = 0; i < nc->hinted.len && rc == 0; i++)
        if (icm__ptrvec_push(&named, nc->hinted.items[i]) != 0)
            rc = ICM_ENOMEM;
    if (rc == 0)
        rc = index_names(&bases, named.items, named.len);
    icm__ptrvec_dispose(&named, NULL);
    /* a stale pointer: an accepted successor, or one a hint names */
    for (size_t i = 0; i < nc->files.len && rc == 0; i++) {
        const noted *f = nc->files.items[i];
        bool ok = false;
        const char *by = NULL;
        if (!f->names_pointer || (rc = accepted(nc, &bases, f, &ok, &by)) != 0 || !ok)
            continue;
        char *why = by != NULL ? icm__sprintf("%s was committed on it, and its metadata-log "
                                              "names the pointer", by)
                               : icm__strdup("a version hint names it, and its metadata-log "
                                             "names the pointer");
        rc = why != NULL ? refuse_stale(nc, f->loc, why) : ICM_ENOMEM;
        icm__free(why);
    }
    /* a fork: an accepted file neither before nor after the pointer */
    bool extended = false;
    for (size_t i = 0; i < nc->files.len && rc == 0; i++) {
        const noted *f = nc->files.items[i];
        bool ok = false, after = false, before = false;
        const char *by = NULL;
        if (in_log_by_name(h, f->loc))
            continue;
        if ((rc = accepted(nc, &bases, f, &ok, &by)) != 0 || !ok)
            continue;
        if ((rc = descends(nc, f, &after)) != 0 || after)
            continue;
        if (!extended) {
            extended = true;
            rc = extend_ancestry(nc, h, SIZE_MAX);
            if (rc == 0)
                rc = index_names(&past, h->log.items, h->log.len);
        }
        if (rc == 0 && index_has(&past, f->loc))
            rc = names_file(nc->site, (char *const *)h->log.items, h->log.len, f->loc, NULL,
                            &before);
        if (rc != 0 || before)
            continue;
        char *why = by != NULL ? icm__sprintf("%s was committed on it", by)
                               : icm__strdup("a version hint names it");
        rc = why != NULL ? refuse_forked(nc, f->loc, why) : ICM_ENOMEM;
        icm__free(why);
    }
    icm__free(bases.names);
    icm__free(past.names);
    return rc;
}

/* Whether folder `dirs[i]` is one listed before it (by name or where it really is). */
static int seen_folder(const icm__site *s, char *const *dirs, char **reals, size_t i, bool *out)
{
    *out = false;
    int rc = icm__site_resolve(s, dirs[i], &reals[i]);
    if (rc != 0 && rc != ICM_ENOMEM) {
        icm_error_clear();
        rc = 0;
    }
    for (size_t j = 0; j < i && rc == 0 && !*out; j++)
        *out = icm__location_equal(dirs[i], dirs[j]) ||
               (reals[i] != NULL && reals[j] != NULL && icm__location_equal(reals[i], reals[j]));
    return rc;
}

/* The folders to look in: the table's metadata folders, and the folder of every file the
 * pointer's metadata-log names (write.metadata.path may have moved: a branch may have gone on
 * in a folder the table wrote to before). New strings appended to *dirs. */
static int folders_to_scan(const icm__site *s, const history *h, icm__ptrvec *dirs)
{
    int rc = 0;
    for (size_t i = 0; i < s->n_md_dirs && rc == 0; i++)
        rc = push_copy(dirs, s->md_dirs[i]);
    for (size_t i = 0; i < h->log.len && rc == 0; i++) {
        const char *f = h->log.items[i];
        const char *name = icm__basename(f);
        if (name == f)
            continue;
        char *dir = icm__sprintf("%.*s", (int)(name - f - 1), f);
        bool known = dir == NULL;
        for (size_t k = 0; dir != NULL && k < dirs->len && !known; k++)
            known = icm__location_equal(dirs->items[k], dir);
        if (dir == NULL)
            rc = ICM_ENOMEM;
        else if (!known && icm__ptrvec_push(dirs, dir) == 0)
            dir = NULL;
        else if (!known)
            rc = ICM_ENOMEM;
        icm__free(dir);
    }
    return rc;
}

/* List metadata folder `dir`: note what may be later than the pointer's history, and the
 * files the version hints there name. */
static int scan_folder(icm__newer_commits *nc, const history *h, const char *dir)
{
    const icm__site *s = nc->site;
    scan sc = {nc, dir, h, ICM__PTRVEC_INIT, ICM__PTRVEC_INIT};
    int rc = icm_fileio_list_flags(s->io, dir, ICM_LIST_STAT_OPTIONAL, on_md_file, &sc);
    if (rc == ICM_EUNSUPPORTED) {
        icm_error_clear(); /* a folder the io cannot reach: it cannot delete there */
        rc = 0;
    }
    for (size_t k = 0; k < sc.files.len && rc == 0; k++)
        rc = note_file(nc, sc.files.items[k]);
    for (size_t k = 0; k < sc.hints.len && rc == 0; k++) {
        char *file = NULL;
        rc = hinted_file(s, sc.hints.items[k], dir, &file);
        if (rc == 0 && file != NULL && !icm__location_equal(file, s->md_location))
            rc = note_file(nc, file);
        if (rc == 0 && file != NULL && icm__ptrvec_push(&nc->hinted, file) == 0)
            file = NULL;
        else if (rc == 0 && file != NULL)
            rc = ICM_ENOMEM;
        icm__free(file);
    }
    icm__ptrvec_dispose(&sc.files, icm__free);
    icm__ptrvec_dispose(&sc.hints, icm__free);
    return rc;
}

int icm__newer_commits_check(icm__newer_commits *nc)
{
    const icm__site *s = nc->site;
    if (s->copy)
        return 0;
    history h;
    icm__ptrvec dirs = ICM__PTRVEC_INIT;
    char **reals = NULL;
    int rc = pointer_history(s, &h);
    if (rc == 0)
        rc = folders_to_scan(s, &h, &dirs);
    if (rc == 0 && (reals = icm__calloc(dirs.len + 1, sizeof *reals)) == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; i < dirs.len && rc == 0; i++) {
        bool seen = false;
        rc = seen_folder(s, (char *const *)dirs.items, reals, i, &seen);
        if (rc == 0 && !seen)
            rc = scan_folder(nc, &h, dirs.items[i]);
    }
    if (rc == 0 && nc->unreadable_loc != NULL)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, nc->unreadable_loc,
                            "cannot read this metadata file of the table's metadata folders "
                            "(damaged, or not metadata), and it is not a write in progress: "
                            "whether it links a live branch of the table's history cannot be "
                            "told, so nothing is deleted (no override: repair it, or move it "
                            "away if it is a crashed writer's leftover)");
    if (rc == 0)
        rc = decide(nc, &h);
    if (rc == 0 && s->refuse_foreign && nc->foreign_loc != NULL)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, nc->foreign_loc,
                            "another table's metadata lies in this table's metadata folder: "
                            "table-uuid %s (location %s), this table is %s; a table at the "
                            "same place (one dropped and created again, or registered in "
                            "another catalog) writes where the sweep lists, and %s would "
                            "delete its files, so nothing is deleted (no override: if that "
                            "table is gone, move its metadata files out of the folder)",
                            nc->foreign.uuid != NULL ? nc->foreign.uuid : "(none)",
                            nc->foreign.roots[0] != NULL ? nc->foreign.roots[0] : "(none)",
                            s->uuid != NULL ? s->uuid : "(no uuid)", s->run_a);
    for (size_t i = 0; reals != NULL && i < dirs.len; i++)
        icm__free(reals[i]);
    icm__free(reals);
    icm__ptrvec_dispose(&dirs, icm__free);
    icm__ptrvec_dispose(&h.log, icm__free);
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
    *out = icm__place_within(place, real_place, folder, real, false, NULL);
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

typedef struct doc_listing {
    const char *md_dir;
    icm__ptrvec *docs;
} doc_listing;

/* Listing callback: the metadata documents directly in the folder. */
static int on_enclosing_doc(const icm_file_info *f, void *payload)
{
    doc_listing *dl = payload;
    const char *rest;
    bool document = false;
    if (!icm__location_strip_prefix(f->location, dl->md_dir, &rest) || strchr(rest, '/') != NULL ||
        !icm__table_metadata_file_name(f->location, &document) || !document)
        return 0;
    return push_copy(dl->docs, f->location);
}

/* The verdict on one metadata file `doc` of the enclosing folder `dir`'s `metadata/`: unreadable
 * (what its table writes is unknown), or another table that writes where the place is, refuses;
 * this table's own metadata (a copy's, in a folder of its own) and a file gone meanwhile never
 * do. */
static int judge_enclosing_doc(const icm__site *s, const char *place, const char *real_place,
                               const char *what, const char *dir, const char *doc)
{
    icm__peeked m = {0};
    int rc = icm__site_peek(s, doc, &m, NULL);
    bool other = rc == 0 && !m.readable && !m.gone;
    if (rc == 0 && m.readable && !icm__site_same_table(s, doc, m.uuid))
        rc = inside_written_folders(s, place, real_place, dir, &m, &other);
    char *why = NULL;
    if (other && !m.readable)
        why = icm__sprintf("its metadata file %s cannot be read to tell whether it is this "
                           "table", doc);
    else if (other)
        why = icm__sprintf("its metadata file %s has table-uuid %s and location %s, this "
                           "table is %s", doc,
                           m.uuid != NULL ? m.uuid : "(none)",
                           m.roots[0] != NULL ? m.roots[0] : "(none)",
                           s->uuid != NULL ? s->uuid : "(no uuid)");
    if (other)
        rc = why != NULL ? refuse_enclosing(s, doc, what, place, dir, why) : ICM_ENOMEM;
    icm__free(why);
    icm__peeked_dispose(&m);
    return rc;
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
    /* Every metadata file there is judged, not the first listed: the table's older files may
     * name none of the folders its newer ones write into. */
    icm__ptrvec docs = ICM__PTRVEC_INIT;
    doc_listing dl = {md_dir, &docs};
    rc = icm_fileio_list_flags(s->io, md_dir, ICM_LIST_STAT_OPTIONAL, on_enclosing_doc, &dl);
    if (rc != 0 && rc != ICM_ENOMEM) {
        icm_error_clear(); /* (listed once already: judge the file found then) */
        rc = push_copy(&docs, found.document);
    }
    for (size_t i = 0; i < docs.len && rc == 0; i++)
        rc = judge_enclosing_doc(s, place, real_place, what, dir, docs.items[i]);
    icm__ptrvec_dispose(&docs, icm__free);
    icm__free(md_dir);
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
