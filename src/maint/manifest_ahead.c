/*
 * maint/manifest_ahead.c: manifests decoded ahead on a second thread (see manifest_ahead.h).
 *
 * A ring of MANIFEST_AHEAD_WINDOW slots: manifest i is decoded into slot i % WINDOW. The
 * decoding thread starts manifest i only once the caller has released manifest i - WINDOW, and
 * the caller reads slot i only once `decoded` is past i; both counters move under the mutex, so
 * a slot is written by one thread and read by the other, never both at once.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "maint/manifest_ahead.h"
#include "manifest/manifest_internal.h"
#include "util/util.h"

#define MANIFEST_AHEAD_WINDOW 4

typedef struct slot {
    icm__ahead_manifest pub;
    char *locations;
    size_t locations_len;
    size_t locations_cap;
    icm__ahead_entry *entries;
    size_t entries_cap;
    icm__error_saved *err; /* the decoding thread's last error when pub.rc != 0 */
} slot;

struct icm__manifest_ahead {
    icm_fileio *io;
    int format_version;
    icm__avro_schema_cache *schemas;
    const icm__manifest_ref *refs;
    size_t n;
    slot slots[MANIFEST_AHEAD_WINDOW];
    bool threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t decoded;  /* manifests [0, decoded) are decoded */
    size_t released; /* manifests [0, released) were handed back */
    bool stop;
};

static const uint64_t ENTRY_FIELDS =
    ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT | ICM_MANIFEST_FIELD_FILE_SIZE;

/* The kind of a live manifest entry. A position-delete file in Puffin format is a deletion
 * vector (spec v3 "Deletion Vectors"). */
static icm__file_kind entry_kind(const icm_data_file *f)
{
    switch (f->content) {
    case ICM_FILE_CONTENT_POSITION_DELETES:
        return f->file_format == ICM_FILE_FORMAT_PUFFIN ? ICM__FILE_DELETION_VECTOR
                                                        : ICM__FILE_POSITION_DELETES;
    case ICM_FILE_CONTENT_EQUALITY_DELETES:
        return ICM__FILE_EQUALITY_DELETES;
    default:
        return ICM__FILE_DATA;
    }
}

static int grow(void **items, size_t *cap, size_t need, size_t size)
{
    size_t want = *cap ? *cap : 64;
    while (want < need)
        if (icm__mul_overflow(want, 2, &want))
            return icm__error_oom();
    void *grown = icm__reallocarray(*items, want, size);
    if (grown == NULL)
        return ICM_ENOMEM;
    *items = grown;
    *cap = want;
    return 0;
}

/* Decoding callback: keep the live entries. A DELETED entry protects nothing; for deletion
 * vectors the vector's own file is file_path (referenced_data_file is not a reached file). */
static int on_entry(const icm_manifest_entry *e, void *payload)
{
    slot *s = payload;
    s->pub.entries_read++;
    if (e->status == ICM_ENTRY_DELETED)
        return 0;
    const char *path = e->data_file.file_path;
    size_t len = strlen(path) + 1;
    int rc = 0;
    if (s->locations_cap - s->locations_len < len)
        rc = grow((void **)&s->locations, &s->locations_cap, s->locations_len + len, 1);
    if (rc == 0 && s->pub.count == s->entries_cap)
        rc = grow((void **)&s->entries, &s->entries_cap, s->pub.count + 1, sizeof *s->entries);
    if (rc != 0)
        return rc;
    memcpy(s->locations + s->locations_len, path, len);
    s->entries[s->pub.count++] = (icm__ahead_entry){s->locations_len,
                                                    e->data_file.file_size_in_bytes,
                                                    entry_kind(&e->data_file)};
    s->locations_len += len;
    return 0;
}

static void decode(icm__manifest_ahead *a, size_t i)
{
    slot *s = &a->slots[i % MANIFEST_AHEAD_WINDOW];
    s->pub.count = 0;
    s->pub.entries_read = 0;
    s->locations_len = 0;
    const icm__manifest_ref *r = &a->refs[i];
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    ro.fields = ENTRY_FIELDS;
    ro.format_version = r->embedded_v1 ? 1 : a->format_version;
    int rc = r->embedded_v1
                 ? icm__manifest_read_v1_embedded_cached(a->io, r->mf.manifest_path,
                                                         r->snapshot_id, &ro, a->schemas,
                                                         on_entry, s)
                 : icm__manifest_read_cached(a->io, &r->mf, &ro, a->schemas, on_entry, s);
    s->pub.rc = rc;
    s->pub.locations = s->locations != NULL ? s->locations : "";
    s->pub.entries = s->entries;
    if (rc != 0)
        s->err = icm__error_save(); /* NULL when even that fails: see raise() */
}

static void *decode_thread(void *arg)
{
    icm__manifest_ahead *a = arg;
    for (size_t i = 0; i < a->n; i++) {
        pthread_mutex_lock(&a->mu);
        while (!a->stop && i >= a->released + MANIFEST_AHEAD_WINDOW)
            pthread_cond_wait(&a->cv, &a->mu);
        bool stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop)
            break;
        decode(a, i);
        pthread_mutex_lock(&a->mu);
        a->decoded = i + 1;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
    }
    return NULL;
}

int icm__manifest_ahead_start(icm__manifest_ahead **out, icm_fileio *io, int format_version,
                              icm__avro_schema_cache *schemas, const icm__manifest_ref *refs,
                              size_t n)
{
    *out = NULL;
    icm__manifest_ahead *a = icm__calloc(1, sizeof *a);
    if (a == NULL)
        return ICM_ENOMEM;
    a->io = io;
    a->format_version = format_version;
    a->schemas = schemas;
    a->refs = refs;
    a->n = n;
    /* One manifest gains nothing from a second thread. */
    if (n >= 2 && pthread_mutex_init(&a->mu, NULL) == 0) {
        if (pthread_cond_init(&a->cv, NULL) == 0) {
            a->threaded = true;
            if (pthread_create(&a->thread, NULL, decode_thread, a) != 0) {
                a->threaded = false; /* decode on the calling thread instead */
                pthread_cond_destroy(&a->cv);
            }
        }
        if (!a->threaded)
            pthread_mutex_destroy(&a->mu);
    }
    *out = a;
    return 0;
}

const icm__ahead_manifest *icm__manifest_ahead_get(icm__manifest_ahead *a, size_t i)
{
    if (!a->threaded) {
        decode(a, i);
    } else {
        pthread_mutex_lock(&a->mu);
        while (a->decoded <= i)
            pthread_cond_wait(&a->cv, &a->mu);
        pthread_mutex_unlock(&a->mu);
    }
    return &a->slots[i % MANIFEST_AHEAD_WINDOW].pub;
}

void icm__manifest_ahead_raise(icm__manifest_ahead *a, size_t i)
{
    slot *s = &a->slots[i % MANIFEST_AHEAD_WINDOW];
    if (s->pub.rc == 0)
        return;
    if (s->err != NULL) {
        icm__error_restore(s->err);
        s->err = NULL;
    } else {
        icm__error_set(ICM_ERRCLASS_AVRO, s->pub.rc, a->refs[i].mf.manifest_path,
                       "cannot read this manifest");
    }
}

void icm__manifest_ahead_release(icm__manifest_ahead *a, size_t i)
{
    slot *s = &a->slots[i % MANIFEST_AHEAD_WINDOW];
    icm__free(s->err);
    s->err = NULL;
    if (!a->threaded) {
        a->released = i + 1;
        return;
    }
    pthread_mutex_lock(&a->mu);
    a->released = i + 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

void icm__manifest_ahead_finish(icm__manifest_ahead *a)
{
    if (a == NULL)
        return;
    if (a->threaded) {
        pthread_mutex_lock(&a->mu);
        a->stop = true;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
    }
    for (size_t k = 0; k < MANIFEST_AHEAD_WINDOW; k++) {
        icm__free(a->slots[k].locations);
        icm__free(a->slots[k].entries);
        icm__free(a->slots[k].err);
    }
    icm__free(a);
}
