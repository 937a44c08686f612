/*
 * spec/metadata.c: the table metadata object of include/icemaint/metadata.h: parsing a document
 * into it (through metadata_parse.c, which validates and builds the typed views), copying,
 * replacing its document, and freeing; and the jansson allocation hooks.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "spec/metadata_internal.h"

/* ------------------------------------------------------------------------------------------ */
/* jansson allocation hooks                                                                    */

static void *json_malloc_hook(size_t n)
{
    return icm__malloc(n);
}

static void json_free_hook(void *p)
{
    icm__free(p);
}

static void install_json_hooks(void)
{
    json_set_alloc_funcs(json_malloc_hook, json_free_hook);
}

void icm__json_hook_allocator(void)
{
    /* Process-wide (jansson keeps one pair of functions for every user in the process), so
     * only on the application's explicit request: icm_allocator_hook_json(). The hooks call
     * icm__malloc at allocation time, so installing them once is enough even when the
     * application swaps allocators later with icm_allocator_set(). */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_json_hooks);
}

char *icm__json_dumps(const json_t *doc, size_t flags)
{
    /* jansson's text comes from whichever functions it has (its default malloc, or ours after
     * icm_allocator_hook_json): copy it into library memory and free it with jansson's own
     * free function, so callers free the copy with icm__free either way. */
    char *text = json_dumps(doc, flags);
    if (text == NULL) {
        icm__error_oom();
        return NULL;
    }
    char *copy = icm__strdup(text);
    json_free_t jfree = NULL;
    json_get_alloc_funcs(NULL, &jfree);
    jfree(text);
    return copy;
}

/* ------------------------------------------------------------------------------------------ */
/* object lifecycle                                                                            */

int icm__table_metadata_wrap(icm_table_metadata **out, json_t *doc_take, const char *file)
{
    *out = NULL;
    icm_table_metadata *md = icm__calloc(1, sizeof *md);
    if (md == NULL) {
        json_decref(doc_take);
        return ICM_ENOMEM;
    }
    if (file != NULL && (md->file = icm__strdup(file)) == NULL) {
        icm__free(md);
        json_decref(doc_take);
        return ICM_ENOMEM;
    }
    int rc = icm__md_views_build(&md->v, doc_take, file);
    if (rc != 0) {
        icm__free(md->file);
        icm__free(md);
        json_decref(doc_take);
        return rc;
    }
    md->doc = doc_take;
    *out = md;
    return 0;
}

int icm__table_metadata_replace_doc(icm_table_metadata *md, json_t *doc_take)
{
    icm__md_views fresh;
    int rc = icm__md_views_build(&fresh, doc_take, md->file);
    if (rc != 0) {
        json_decref(doc_take);
        return rc;
    }
    icm__md_views_dispose(&md->v);
    json_decref(md->doc);
    md->doc = doc_take;
    md->v = fresh;
    md->has_text_digest = false; /* no longer the text it was parsed from */
    return 0;
}

int icm__table_metadata_digest(const icm_table_metadata *md, uint64_t *out)
{
    if (md->has_text_digest) {
        *out = md->text_digest;
        return 0;
    }
    char *text = icm__json_dumps(md->doc, JSON_COMPACT);
    if (text == NULL)
        return ICM_ENOMEM;
    *out = XXH3_64bits(text, strlen(text));
    icm__free(text);
    return 0;
}

json_t *icm__table_metadata_json(const icm_table_metadata *md)
{
    return md ? md->doc : NULL;
}

int icm_table_metadata_parse(icm_table_metadata **out, const char *json, size_t len,
                             const char *location)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, location, "out is NULL");
    *out = NULL;
    if (json == NULL && len > 0)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, location, "json is NULL");

    char *inflated = NULL;
    size_t inflated_len = 0;
    int rc = icm__metadata_inflate(json, len, location, &inflated, &inflated_len);
    if (rc != 0)
        return rc;
    json_t *doc = NULL;
    const char *text = inflated ? inflated : (json ? json : "");
    size_t text_len = inflated ? inflated_len : len;
    rc = icm__json_parse(text, text_len, location, &doc);
    uint64_t digest = rc == 0 ? XXH3_64bits(text, text_len) : 0;
    icm__free(inflated);
    if (rc != 0)
        return rc;
    rc = icm__table_metadata_wrap(out, doc, location);
    if (rc == 0) {
        (*out)->has_text_digest = true;
        (*out)->text_digest = digest;
    }
    return rc;
}

int icm_table_metadata_copy(icm_table_metadata **out, const icm_table_metadata *md)
{
    if (out == NULL || md == NULL)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "NULL argument");
    *out = NULL;
    json_t *doc = json_deep_copy(md->doc);
    if (doc == NULL)
        return icm__error_oom();
    return icm__table_metadata_wrap(out, doc, md->file);
}

void icm_table_metadata_free(icm_table_metadata *md)
{
    if (md == NULL)
        return;
    icm__md_views_dispose(&md->v);
    json_decref(md->doc);
    icm__free(md->file);
    icm__free(md);
}
