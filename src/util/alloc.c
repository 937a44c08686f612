/*
 * util/alloc.c: allocation through the replaceable hooks of icm_allocator_set(), with checked
 * sizes. Every failure sets ICM_ENOMEM on the last error; none aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static icm_allocator g_alloc = {malloc, realloc, free};

void icm__set_allocator(const icm_allocator *allocator)
{
    if (allocator == NULL || allocator->malloc_fn == NULL || allocator->realloc_fn == NULL ||
        allocator->free_fn == NULL) {
        g_alloc.malloc_fn = malloc;
        g_alloc.realloc_fn = realloc;
        g_alloc.free_fn = free;
        return;
    }
    g_alloc = *allocator;
}

void *icm__malloc(size_t n)
{
    void *p = g_alloc.malloc_fn(n == 0 ? 1 : n);
    if (p == NULL)
        icm__error_oom();
    return p;
}

void *icm__calloc(size_t count, size_t size)
{
    size_t total;
    if (icm__mul_overflow(count, size, &total)) {
        icm__error_oom();
        return NULL;
    }
    /* With the default allocator, calloc: fresh pages from the system are zero already, so
     * big zeroed tables (path sets, hash tables) are not written twice, nor touched before
     * their first use. (All three hooks: calloc's memory must go back to libc's free.) */
    if (g_alloc.malloc_fn == malloc && g_alloc.realloc_fn == realloc && g_alloc.free_fn == free) {
        void *z = calloc(total == 0 ? 1 : total, 1);
        if (z == NULL)
            icm__error_oom();
        return z;
    }
    void *p = icm__malloc(total);
    if (p != NULL)
        memset(p, 0, total);
    return p;
}

void *icm__realloc(void *p, size_t n)
{
    void *q = g_alloc.realloc_fn(p, n == 0 ? 1 : n);
    if (q == NULL)
        icm__error_oom();
    return q;
}

void *icm__reallocarray(void *p, size_t count, size_t size)
{
    size_t total;
    if (icm__mul_overflow(count, size, &total)) {
        icm__error_oom();
        return NULL;
    }
    return icm__realloc(p, total);
}

void icm__free(void *p)
{
    if (p != NULL)
        g_alloc.free_fn(p);
}

char *icm__strndup(const char *s, size_t n)
{
    char *d = icm__malloc(n + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

bool icm__str_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

char *icm__strdup(const char *s)
{
    return icm__strndup(s, strlen(s));
}

char *icm__vsprintf(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "bad format string");
        return NULL;
    }
    char *s = icm__malloc((size_t)n + 1);
    if (s == NULL)
        return NULL;
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *icm__sprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = icm__vsprintf(fmt, ap);
    va_end(ap);
    return s;
}

const char *icm_version(void)
{
    return ICM_VERSION_STRING;
}

int icm_version_number(void)
{
    return ICM_VERSION_NUMBER;
}
