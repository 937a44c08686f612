/*
 * util/buf.c: growable byte buffer (sticky OOM flag, always NUL-terminated) and pointer array.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

int icm__buf_grow(icm__buf *b, size_t extra)
{
    if (b->oom)
        return ICM_ENOMEM;
    size_t need;
    if (icm__add_overflow(b->len, extra, &need) || icm__add_overflow(need, 1, &need)) {
        b->oom = true;
        return icm__error_oom();
    }
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *d = icm__realloc(b->data, cap);
    if (d == NULL) {
        b->oom = true;
        return ICM_ENOMEM;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

int icm__buf_put(icm__buf *b, const void *data, size_t len)
{
    int rc = icm__buf_grow(b, len);
    if (rc < 0)
        return rc;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int icm__buf_puts(icm__buf *b, const char *s)
{
    return icm__buf_put(b, s, strlen(s));
}

int icm__buf_putc(icm__buf *b, char c)
{
    return icm__buf_put(b, &c, 1);
}

int icm__buf_printf(icm__buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    int rc = 0;
    if (n < 0) {
        rc = icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "bad format string");
    } else if ((rc = icm__buf_grow(b, (size_t)n)) == 0) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
    }
    va_end(ap);
    return rc;
}

void icm__buf_clear(icm__buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void icm__buf_dispose(icm__buf *b)
{
    icm__free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

char *icm__buf_detach(icm__buf *b, size_t *len_out)
{
    char *d = b->data;
    if (d == NULL) {
        d = icm__malloc(1);
        if (d == NULL)
            return NULL;
        d[0] = '\0';
    }
    if (len_out)
        *len_out = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

int icm__ptrvec_push(icm__ptrvec *v, void *item)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        void **items = icm__reallocarray(v->items, cap, sizeof *items);
        if (items == NULL)
            return ICM_ENOMEM;
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = item;
    return 0;
}

void icm__ptrvec_dispose(icm__ptrvec *v, void (*free_item)(void *))
{
    if (free_item)
        for (size_t i = 0; i < v->len; i++)
            free_item(v->items[i]);
    icm__free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}

int64_t icm__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void icm__sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}
