/*
 * spec/hadoop.c: find the current metadata file of a table in filesystem ("Hadoop") layout,
 * the way Iceberg Java's HadoopTableOperations does, through the icm_fileio API only.
 *
 * Order of evidence:
 *  1. metadata/version-hint.text (or version-hint.txt, which Impala's test tables use), trimmed:
 *     - a number N names metadata/vN.metadata.json (or its gzip variants);
 *     - anything else is taken as a file stem ("00001-43fda1f4-...", "00003-multi-blob") naming
 *       metadata/<stem>.metadata.json; a stem that is not a plain file name is rejected, since
 *       a corrupt hint must never turn into a path outside metadata/;
 *     - an empty hint counts as no hint.
 *  2. Without a usable hint: the highest vN.metadata.json found by listing metadata/.
 *  3. From a numbered version, probe vN+1, vN+2, ... while they exist: a writer may have
 *     committed a new version and crashed before rewriting the hint (Java does the same).
 * A hint naming a file that does not exist is an error, as in Java: guessing another version
 * could make maintenance act on stale metadata.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "icemaint/fileio.h"
#include "spec/metadata_internal.h"

/* Suffixes of the numbered file names "v<N><suffix>" Java's Hadoop tables use, in the order
 * Java probes them. */
static const char *const k_numbered_suffixes[] = {".metadata.json", ".gz.metadata.json",
                                                  ".metadata.json.gz"};

typedef struct hadoop_ctx {
    icm_fileio *io;
    char *meta;  /* "<table>/metadata" */
} hadoop_ctx;

/* 0 and *exists; or an I/O error other than "not found". */
static int file_exists(hadoop_ctx *h, const char *location, bool *exists)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    int rc = icm_fileio_stat(&info, h->io, location);
    *exists = rc == 0;
    return rc == ICM_ENOTFOUND ? 0 : rc;
}

/* First existing "<meta>/<name>" among the numbered forms of version n; *out NULL if none. */
static int numbered_file(hadoop_ctx *h, int64_t n, char **out)
{
    *out = NULL;
    for (size_t i = 0; i < ICM__ARRAY_LEN(k_numbered_suffixes); i++) {
        char *loc = icm__sprintf("%s/v%" PRId64 "%s", h->meta, n, k_numbered_suffixes[i]);
        if (loc == NULL)
            return ICM_ENOMEM;
        bool exists;
        int rc = file_exists(h, loc, &exists);
        if (rc != 0 || exists) {
            if (rc == 0)
                *out = loc;
            else
                icm__free(loc);
            return rc;
        }
        icm__free(loc);
    }
    return 0;
}

/* Read the hint file (either name); *text NULL when there is none. */
static int read_hint(hadoop_ctx *h, char **text, char **hint_name)
{
    static const char *const names[] = {"version-hint.text", "version-hint.txt"};
    *text = NULL;
    for (size_t i = 0; i < ICM__ARRAY_LEN(names); i++) {
        char *loc = icm__sprintf("%s/%s", h->meta, names[i]);
        if (loc == NULL)
            return ICM_ENOMEM;
        size_t len;
        int rc = icm_fileio_read(text, &len, h->io, loc);
        if (rc == 0) {
            *hint_name = loc;
            return 0;
        }
        icm__free(loc);
        if (rc != ICM_ENOTFOUND)
            return rc;
    }
    return 0;
}

/* Trim ASCII whitespace in place; returns the start. */
static char *trim(char *s)
{
    while (*s != '\0' && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Decimal version number within Java's int range; false if `s` is not one. */
static bool parse_version(const char *s, int64_t *out)
{
    int64_t v = 0;
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (*s - '0');
        if (v > INT32_MAX)
            return false;
    }
    *out = v;
    return true;
}

/* A stem is usable when it is one plain file name: no separators, no dot segments, printable. */
static bool plain_file_name(const char *s)
{
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;
    for (; *s != '\0'; s++)
        if (*s == '/' || *s == '\\' || (unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

/* A hint that is a file stem: "<meta>/<stem>.metadata.json" (or the .gz form). */
static int stem_file(hadoop_ctx *h, const char *hint_loc, const char *stem, char **out)
{
    static const char *const suffixes[] = {".metadata.json", ".gz.metadata.json"};
    size_t n = strlen(stem);
    bool full = n > 14 && strcmp(stem + n - 14, ".metadata.json") == 0;
    if (!plain_file_name(stem))
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_EINVALID, hint_loc,
                              "version hint \"%s\" is neither a number nor a file name", stem);
    for (size_t i = 0; i < (full ? 1 : ICM__ARRAY_LEN(suffixes)); i++) {
        char *loc = icm__sprintf("%s/%s%s", h->meta, stem, full ? "" : suffixes[i]);
        if (loc == NULL)
            return ICM_ENOMEM;
        bool exists;
        int rc = file_exists(h, loc, &exists);
        if (rc != 0 || exists) {
            *out = rc == 0 ? loc : NULL;
            if (rc != 0)
                icm__free(loc);
            return rc;
        }
        icm__free(loc);
    }
    return icm__error_set(ICM_ERRCLASS_SPEC, ICM_ENOTFOUND, hint_loc,
                          "version hint names %s.metadata.json, which does not exist", stem);
}

/* Listing callback: track the highest N of "v<N>.metadata.json" directly inside metadata/. */
typedef struct max_version {
    const char *prefix;
    size_t prefix_len;
    int64_t max;
} max_version;

static int max_version_cb(const icm_file_info *info, void *payload)
{
    max_version *mv = payload;
    const char *loc = info->location;
    if (strncmp(loc, mv->prefix, mv->prefix_len) != 0)
        return 0;
    const char *name = loc + mv->prefix_len;
    while (*name == '/')
        name++;
    if (strchr(name, '/') != NULL || name[0] != 'v')
        return 0;
    char digits[16];
    size_t nd = strspn(name + 1, "0123456789");
    if (nd == 0 || nd >= sizeof digits)
        return 0;
    const char *rest = name + 1 + nd;
    if (strcmp(rest, ".metadata.json") != 0 && strcmp(rest, ".gz.metadata.json") != 0 &&
        strcmp(rest, ".metadata.json.gz") != 0)
        return 0;
    memcpy(digits, name + 1, nd);
    digits[nd] = '\0';
    int64_t n;
    if (parse_version(digits, &n) && n > mv->max)
        mv->max = n;
    return 0;
}

static int highest_listed_version(hadoop_ctx *h, int64_t *out)
{
    max_version mv = {h->meta, strlen(h->meta), -1};
    int rc = icm_fileio_list(h->io, h->meta, max_version_cb, &mv);
    *out = mv.max;
    return rc;
}

/* From version n (whose file is *loc), move to the newest consecutive version that exists. */
static int probe_newer(hadoop_ctx *h, int64_t n, char **loc)
{
    while (n < INT32_MAX) {
        char *next = NULL;
        int rc = numbered_file(h, n + 1, &next);
        if (rc != 0)
            return rc;
        if (next == NULL)
            return 0;
        icm__free(*loc);
        *loc = next;
        n++;
    }
    return 0;
}

static int find_from_hint(hadoop_ctx *h, const char *hint_loc, char *hint, char **out,
                          bool *used)
{
    char *s = trim(hint);
    int64_t n;
    *used = *s != '\0';
    if (!*used)
        return 0;
    if (!parse_version(s, &n))
        return stem_file(h, hint_loc, s, out);
    int rc = numbered_file(h, n, out);
    if (rc == 0 && *out == NULL)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_ENOTFOUND, hint_loc,
                              "version hint names v%" PRId64 ".metadata.json, which does not "
                              "exist", n);
    if (rc == 0)
        rc = probe_newer(h, n, out);
    return rc;
}

static int find_by_listing(hadoop_ctx *h, const char *table_dir, char **out)
{
    int64_t n;
    int rc = highest_listed_version(h, &n);
    if (rc != 0)
        return rc;
    if (n < 0)
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_ENOTFOUND, table_dir,
                              "no table metadata: neither a version hint nor v<N>.metadata.json "
                              "in metadata/");
    rc = numbered_file(h, n, out);
    if (rc == 0 && *out == NULL) /* listed a moment ago, gone now: refuse to guess */
        return icm__error_set(ICM_ERRCLASS_SPEC, ICM_ENOTFOUND, table_dir,
                              "metadata/v%" PRId64 ".metadata.json disappeared while looking "
                              "for the current version", n);
    if (rc == 0)
        rc = probe_newer(h, n, out);
    return rc;
}

int icm_table_metadata_find_current(char **out_location, icm_fileio *io, const char *table_dir)
{
    if (io == NULL || table_dir == NULL || out_location == NULL)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, table_dir, "NULL argument");
    *out_location = NULL;
    size_t len = strlen(table_dir);
    /* drop trailing slashes, but never the ones of a root such as "/" or "file:///" */
    while (len > 1 && table_dir[len - 1] == '/' && table_dir[len - 2] != '/' &&
           table_dir[len - 2] != ':')
        len--;
    hadoop_ctx h = {io, icm__sprintf("%.*s/metadata", (int)len, table_dir)};
    if (h.meta == NULL)
        return ICM_ENOMEM;
    char *hint = NULL, *hint_loc = NULL, *found = NULL;
    bool used = false;
    int rc = read_hint(&h, &hint, &hint_loc);
    if (rc == 0 && hint != NULL)
        rc = find_from_hint(&h, hint_loc, hint, &found, &used);
    if (rc == 0 && !used)
        rc = find_by_listing(&h, table_dir, &found);
    icm_free(hint);
    icm__free(hint_loc);
    icm__free(h.meta);
    if (rc != 0) {
        icm__free(found);
        return rc;
    }
    *out_location = found;
    return 0;
}
