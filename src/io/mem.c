/*
 * io/mem.c: the in-memory FileIO back end used by tests.
 *
 * Objects live in an array sorted by their identity key (icm__location_key, util/location_id.h),
 * so `/p`, `file:///p`, `//p` and `/q/../p` are one object, as on a file system without links,
 * while object-store keys stay exact bytes. A mutex guards the
 * array; it is never held while a listing callback runs, so callbacks may call back into the
 * store (delete what they see, for example). Listing resumes after the last key it reported,
 * which keeps it correct when the callback changes the store, like an object-store listing
 * that pages by start-after key; it lists in byte order of the listed locations and takes a
 * range (start_after, end_before) natively. mtime comes from a clock the test can set.
 */
#include <pthread.h>
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "icemaint/testing/fileio.h"
#include "util/location.h"
#include "util/util.h"

typedef struct mem_object {
    char *key;  /* identity key (icm__location_key) */
    char *data; /* len bytes plus a NUL, so reads can hand out a terminated copy cheaply */
    size_t len;
    int64_t mtime_ms;
} mem_object;

typedef struct mem_fileio {
    icm_fileio base;
    pthread_mutex_t lock;
    mem_object *objs; /* sorted by strcmp(key) */
    size_t n;
    size_t cap;
    int64_t clock_ms; /* -1: real clock */
} mem_fileio;

static const icm_fileio_methods mem_methods;

/* Index of the first object whose key is >= key. Caller holds the lock. */
static size_t lower_bound(const mem_fileio *m, const char *key)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->objs[mid].key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index of the object with exactly this key, or m->n. Caller holds the lock. */
static size_t find(const mem_fileio *m, const char *key)
{
    size_t i = lower_bound(m, key);
    return (i < m->n && strcmp(m->objs[i].key, key) == 0) ? i : m->n;
}

static int64_t now_ms(const mem_fileio *m)
{
    return m->clock_ms >= 0 ? m->clock_ms : icm__now_ms();
}

static int not_found(const char *location)
{
    return icm__error_set(ICM_ERRCLASS_IO, ICM_ENOTFOUND, location, "no such object");
}

/* NUL-terminated copy of data (len + 1 bytes). */
static char *copy_data(const void *data, size_t len)
{
    size_t size;
    if (icm__add_overflow(len, 1, &size)) {
        icm__error_oom();
        return NULL;
    }
    char *d = icm__malloc(size);
    if (d == NULL)
        return NULL;
    if (len > 0)
        memcpy(d, data, len);
    d[len] = '\0';
    return d;
}

static int mem_read(icm_fileio *io, const char *location, char **out, size_t *out_len)
{
    mem_fileio *m = (mem_fileio *)io;
    char *key;
    int rc = icm__location_key(location, &key);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, key);
    if (i == m->n) {
        rc = not_found(location);
    } else {
        *out = copy_data(m->objs[i].data, m->objs[i].len);
        *out_len = m->objs[i].len;
        rc = *out != NULL ? 0 : ICM_ENOMEM;
    }
    pthread_mutex_unlock(&m->lock);
    icm__free(key);
    return rc;
}

static int mem_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                          size_t len, size_t *out_read)
{
    mem_fileio *m = (mem_fileio *)io;
    char *key;
    int rc = icm__location_key(location, &key);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, key);
    if (i == m->n) {
        rc = not_found(location);
    } else {
        const mem_object *o = &m->objs[i];
        size_t got = 0;
        if ((uint64_t)offset < o->len) {
            size_t avail = o->len - (size_t)offset;
            got = len < avail ? len : avail;
            memcpy(buf, o->data + offset, got);
        }
        *out_read = got;
    }
    pthread_mutex_unlock(&m->lock);
    icm__free(key);
    return rc;
}

/* Insert a new object at index i, taking key and data. Caller holds the lock. */
static int insert_at(mem_fileio *m, size_t i, char *key, char *data, size_t len)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        mem_object *objs = icm__reallocarray(m->objs, cap, sizeof *objs);
        if (objs == NULL)
            return ICM_ENOMEM;
        m->objs = objs;
        m->cap = cap;
    }
    memmove(&m->objs[i + 1], &m->objs[i], (m->n - i) * sizeof *m->objs);
    m->objs[i] = (mem_object){key, data, len, now_ms(m)};
    m->n++;
    return 0;
}

static int mem_write(mem_fileio *m, const char *location, const void *data, size_t len,
                     bool replace)
{
    char *key = NULL;
    int rc = icm__location_key(location, &key);
    if (rc < 0)
        return rc;
    /* Copy before locking: the store changes all at once or not at all. */
    char *copy = copy_data(data, len);
    if (copy == NULL) {
        icm__free(key);
        return ICM_ENOMEM;
    }
    pthread_mutex_lock(&m->lock);
    size_t i = lower_bound(m, key);
    bool exists = i < m->n && strcmp(m->objs[i].key, key) == 0;
    if (exists && !replace) {
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EEXISTS, location,
                            "already exists; not overwritten");
    } else if (exists) {
        mem_object *o = &m->objs[i];
        icm__free(o->data);
        o->data = copy;
        o->len = len;
        o->mtime_ms = now_ms(m);
        copy = NULL;
    } else {
        rc = insert_at(m, i, key, copy, len);
        if (rc == 0)
            key = copy = NULL; /* taken by the store */
    }
    pthread_mutex_unlock(&m->lock);
    icm__free(copy);
    icm__free(key);
    return rc;
}

static int mem_create_new(icm_fileio *io, const char *location, const void *data, size_t len)
{
    return mem_write((mem_fileio *)io, location, data, len, false);
}

static int mem_write_replace(icm_fileio *io, const char *location, const void *data,
                             size_t len)
{
    return mem_write((mem_fileio *)io, location, data, len, true);
}

static int mem_remove(icm_fileio *io, const char *location)
{
    mem_fileio *m = (mem_fileio *)io;
    char *key;
    int rc = icm__location_key(location, &key);
    if (rc < 0)
        return rc;
    mem_object gone = {NULL, NULL, 0, 0};
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, key);
    if (i < m->n) {
        gone = m->objs[i];
        memmove(&m->objs[i], &m->objs[i + 1], (m->n - i - 1) * sizeof *m->objs);
        m->n--;
    }
    pthread_mutex_unlock(&m->lock);
    if (gone.key == NULL)
        icm_fileio_note_missing();
    icm__free(gone.key);
    icm__free(gone.data);
    icm__free(key);
    return 0;
}

/* The whole batch under one lock, as one multi-object request: keys are identities and the
 * removed objects freed outside it. An item whose key cannot be made fails alone. */
static int mem_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                            icm_fileio_delete_result *results)
{
    mem_fileio *m = (mem_fileio *)io;
    char **keys = icm__calloc(n, sizeof *keys);
    mem_object *gone = icm__calloc(n, sizeof *gone);
    if (keys == NULL || gone == NULL) {
        icm__free(keys);
        icm__free(gone);
        return ICM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = icm__location_key(locations[i], &keys[i]);
        if (rc < 0)
            icm_fileio_delete_result_fail(&results[i], rc, false);
    }
    size_t n_gone = 0;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < n; i++) {
        if (keys[i] == NULL)
            continue;
        size_t j = find(m, keys[i]);
        icm_fileio_delete_result *r = &results[i];
        r->status = j < m->n ? ICM_FILEIO_DELETED : ICM_FILEIO_ALREADY_GONE;
        r->code = 0;
        r->retryable = false;
        r->message[0] = '\0';
        if (j < m->n) {
            gone[n_gone++] = m->objs[j];
            memmove(&m->objs[j], &m->objs[j + 1], (m->n - j - 1) * sizeof *m->objs);
            m->n--;
        }
    }
    pthread_mutex_unlock(&m->lock);
    for (size_t i = 0; i < n_gone; i++) {
        icm__free(gone[i].key);
        icm__free(gone[i].data);
    }
    for (size_t i = 0; i < n; i++)
        icm__free(keys[i]);
    icm__free(keys);
    icm__free(gone);
    return 0;
}

static int mem_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    mem_fileio *m = (mem_fileio *)io;
    char *key;
    int rc = icm__location_key(location, &key);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, key);
    if (i == m->n) {
        rc = not_found(location);
    } else {
        out->location = location;
        out->size_bytes = (int64_t)m->objs[i].len;
        out->mtime_ms = m->objs[i].mtime_ms;
    }
    pthread_mutex_unlock(&m->lock);
    icm__free(key);
    return rc;
}

/* Key prefix that every object strictly below `prefix` starts with: the prefix's identity key
 * without trailing slashes, plus one '/'. */
static int list_key_prefix(const char *prefix, char **out)
{
    char *norm;
    int rc = icm__location_key(prefix, &norm);
    if (rc < 0)
        return rc;
    size_t n = icm__location_trim_len(norm);
    *out = (n > 0 && norm[n - 1] == '/') ? icm__strndup(norm, n)
                                         : icm__sprintf("%.*s/", (int)n, norm);
    icm__free(norm);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

/* Copy of the first object after `after` (or from `kp` when after is NULL) whose key starts
 * with kp; *key NULL when there is none. */
static int next_below(mem_fileio *m, const char *kp, const char *after, char **key,
                      icm_file_info *info)
{
    *key = NULL;
    int rc = 0;
    size_t kplen = strlen(kp);
    pthread_mutex_lock(&m->lock);
    size_t i = lower_bound(m, after != NULL ? after : kp);
    if (i < m->n && after != NULL && strcmp(m->objs[i].key, after) == 0)
        i++;
    if (i < m->n && strncmp(m->objs[i].key, kp, kplen) == 0) {
        *key = icm__strdup(m->objs[i].key);
        info->size_bytes = (int64_t)m->objs[i].len;
        info->mtime_ms = m->objs[i].mtime_ms;
        if (*key == NULL)
            rc = ICM_ENOMEM;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* The location an object of key `key` is listed under: local objects in the prefix's form
 * (`file:///x/...` for a `file:///x` prefix), object-store keys as they are. A new string, or
 * `key` itself (*fresh false). */
static char *listed_location(const char *prefix, bool local, const char *kp, const char *key,
                             bool *fresh)
{
    *fresh = local;
    return local ? icm__location_join(prefix, key + strlen(kp)) : (char *)(uintptr_t)key;
}

/* Where to resume a listing that starts after `start_after`: its key when listing that key
 * gives back exactly `start_after` (a location in the prefix's form, below it), so skipping
 * every key up to it skips exactly the locations up to it; NULL otherwise (then the listing
 * starts at the prefix and the wrapper's range check skips what comes before). */
static int seek_key(const char *prefix, bool local, const char *kp, const char *start_after,
                    char **out)
{
    *out = NULL;
    if (start_after == NULL)
        return 0;
    char *key = NULL;
    int rc = icm__location_key(start_after, &key);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc < 0) { /* a start point that names no object: no seek, nothing wrong */
        icm_error_clear();
        return 0;
    }
    if (strncmp(key, kp, strlen(kp)) == 0) {
        bool fresh;
        char *loc = listed_location(prefix, local, kp, key, &fresh);
        if (loc == NULL) {
            rc = ICM_ENOMEM;
        } else if (strcmp(loc, start_after) == 0) {
            *out = key;
            key = NULL;
        }
        if (fresh)
            icm__free(loc);
    }
    icm__free(key);
    return rc;
}

/* Objects come in byte order of their locations (keys are sorted, and a listing's locations
 * are one fixed string plus the key's part below the prefix), so a range is a seek and a stop,
 * as an object store's start-after listing. Size and mtime come with every object here, so
 * ICM_LIST_STAT_OPTIONAL changes nothing. */
static int mem_list_range(icm_fileio *io, const char *prefix, const icm_fileio_list_options *opts,
                          icm_list_cb cb, void *payload)
{
    mem_fileio *m = (mem_fileio *)io;
    char *kp;
    int rc = list_key_prefix(prefix, &kp);
    if (rc < 0)
        return rc;
    bool local = icm__location_local_part(prefix) != NULL;
    char *last = NULL;
    rc = seek_key(prefix, local, kp, opts->start_after, &last);
    while (rc == 0) {
        char *key;
        icm_file_info info = {sizeof(icm_file_info), NULL, 0, -1};
        rc = next_below(m, kp, last, &key, &info);
        icm__free(last);
        last = key;
        if (rc < 0 || key == NULL)
            break;
        bool fresh;
        char *loc = listed_location(prefix, local, kp, key, &fresh);
        if (loc == NULL) {
            rc = ICM_ENOMEM;
            break;
        }
        info.location = loc;
        if (opts->end_before != NULL && strcmp(loc, opts->end_before) >= 0) {
            if (fresh)
                icm__free(loc);
            break; /* every later object sorts after this one */
        }
        rc = cb(&info, payload);
        if (fresh)
            icm__free(loc);
    }
    icm__free(last);
    icm__free(kp);
    return rc;
}

static int mem_list(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                    void *payload)
{
    icm_fileio_list_options opts = ICM_FILEIO_LIST_OPTIONS_INIT;
    opts.flags = flags;
    return mem_list_range(io, prefix, &opts, cb, payload);
}

static void mem_free(icm_fileio *io)
{
    mem_fileio *m = (mem_fileio *)io;
    for (size_t i = 0; i < m->n; i++) {
        icm__free(m->objs[i].key);
        icm__free(m->objs[i].data);
    }
    icm__free(m->objs);
    pthread_mutex_destroy(&m->lock);
    icm__free(m);
}

/* Objects in memory are keys of a store, deleted in batches as an object store's (a name of
 * the local form is told local before this is asked). */
static int mem_is_local(icm_fileio *io, const char *location)
{
    (void)io;
    (void)location;
    return 0;
}

static const icm_fileio_methods mem_methods = {
    ICM_FILEIO_METHODS_VERSION,
    "mem",
    mem_read,
    mem_read_range,
    mem_create_new,
    mem_write_replace,
    mem_remove,
    mem_stat,
    NULL, /* list: list_flags instead */
    mem_free,
    mem_list,
    NULL, /* resolve: no links */
    NULL, /* checksum_of: no companions */
    mem_delete_batch,
    mem_list_range,
    mem_is_local,
};

int icm_fileio_mem_new(icm_fileio **out)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "NULL output");
    mem_fileio *m = icm__calloc(1, sizeof *m);
    *out = NULL;
    if (m == NULL)
        return ICM_ENOMEM;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        icm__free(m);
        return icm__error_set(ICM_ERRCLASS_OS, ICM_ERROR, NULL, "cannot create mutex");
    }
    m->base.methods = &mem_methods;
    m->clock_ms = -1;
    *out = &m->base;
    return 0;
}

void icm_fileio_mem_set_time(icm_fileio *mem, int64_t now)
{
    if (mem == NULL || mem->methods != &mem_methods)
        return;
    mem_fileio *m = (mem_fileio *)mem;
    pthread_mutex_lock(&m->lock);
    m->clock_ms = now < 0 ? -1 : now;
    pthread_mutex_unlock(&m->lock);
}
