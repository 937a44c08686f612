/*
 * util/errors.c: the thread-local last error. Messages are formatted into fixed thread-local
 * buffers so that reporting an error (including out-of-memory) never allocates.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "icemaint/escape.h"
#include "util/util.h"

#define ICM__MSG_MAX 4096
#define ICM__LOC_MAX 2048
#define ICM__REMOTE_MAX 128

typedef struct icm__error_state {
    icm_error pub;
    char message[ICM__MSG_MAX];
    char location[ICM__LOC_MAX];
    char remote[ICM__REMOTE_MAX];
} icm__error_state;

struct icm__error_saved {
    icm__error_state state;
};

static _Thread_local icm__error_state g_err;
static _Thread_local bool g_err_init;

static void copy_trunc(char *dst, size_t cap, const char *src)
{
    if (src == NULL) {
        dst[0] = '\0';
        return;
    }
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void fix_pointers(icm__error_state *st)
{
    st->pub.message = st->message;
    st->pub.location = st->location;
    st->pub.remote_code = st->remote;
}

static void reset(void)
{
    memset(&g_err.pub, 0, sizeof g_err.pub);
    g_err.message[0] = g_err.location[0] = g_err.remote[0] = '\0';
    g_err.pub.offset = -1;
    fix_pointers(&g_err);
    g_err_init = true;
}

const icm_error *icm__error_last(void)
{
    if (!g_err_init)
        reset();
    return &g_err.pub;
}

void icm__error_clear(void)
{
    reset();
}

/* Store `src` printable and on one line: control characters, backslashes and bytes that are
 * not UTF-8 escaped as text (icm_escape_text), cut at a whole escape when it does not fit. */
static void store_escaped(char *dst, size_t cap, const char *src)
{
    if (src == NULL) {
        dst[0] = '\0';
        return;
    }
    (void)icm_escape_text(dst, cap, src, strlen(src));
}

int icm__error_vset(icm_error_class klass, int code, const char *location, const char *fmt,
                    va_list ap)
{
    reset();
    g_err.pub.code = code;
    g_err.pub.klass = klass;
    char raw[ICM__MSG_MAX];
    vsnprintf(raw, sizeof raw, fmt, ap);
    store_escaped(g_err.message, sizeof g_err.message, raw);
    store_escaped(g_err.location, sizeof g_err.location, location);
    return code;
}

int icm__error_set(icm_error_class klass, int code, const char *location, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    icm__error_vset(klass, code, location, fmt, ap);
    va_end(ap);
    return code;
}

int icm__error_set_errno(icm_error_class klass, int code, int err, const char *location,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    icm__error_vset(klass, code, location, fmt, ap);
    va_end(ap);
    g_err.pub.os_errno = err;
    size_t n = strlen(g_err.message);
    char ebuf[256];
    const char *etext = strerror_r(err, ebuf, sizeof ebuf);
    snprintf(g_err.message + n, sizeof g_err.message - n, ": %s", etext);
    return code;
}

int icm__error_oom(void)
{
    return icm__error_set(ICM_ERRCLASS_NOMEM, ICM_ENOMEM, NULL, "out of memory");
}

void icm__error_set_http_status(int status)
{
    icm__error_last();
    g_err.pub.http_status = status;
}

void icm__error_set_remote_code(const char *code)
{
    icm__error_last();
    copy_trunc(g_err.remote, sizeof g_err.remote, code);
}

void icm__error_set_position(int64_t line, int64_t column, int64_t offset)
{
    icm__error_last();
    g_err.pub.line = line;
    g_err.pub.column = column;
    g_err.pub.offset = offset;
}

void icm__error_set_location(const char *location)
{
    icm__error_last();
    store_escaped(g_err.location, sizeof g_err.location, location);
}

void icm__error_prefix_message(const char *prefix)
{
    icm__error_last();
    size_t plen = strlen(prefix), mlen = strlen(g_err.message);
    if (plen >= sizeof g_err.message)
        plen = sizeof g_err.message - 1;
    if (plen + mlen >= sizeof g_err.message)
        mlen = sizeof g_err.message - 1 - plen;
    memmove(g_err.message + plen, g_err.message, mlen);
    memcpy(g_err.message, prefix, plen);
    g_err.message[plen + mlen] = '\0';
}

icm__error_saved *icm__error_save(void)
{
    /* Plain malloc would bypass the hooks; the hook may fail, in which case the error is simply
     * not restored (cleanup code then may overwrite it). */
    icm__error_saved *s = icm__malloc(sizeof *s);
    if (s != NULL) {
        icm__error_last();
        s->state = g_err;
    }
    return s;
}

void icm__error_restore(icm__error_saved *saved)
{
    if (saved == NULL)
        return;
    g_err = saved->state;
    fix_pointers(&g_err);
    g_err_init = true;
    icm__free(saved);
}

int icm__errno_to_code(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
        return ICM_ENOTFOUND;
    case EEXIST:
        return ICM_EEXISTS;
    case ENOMEM:
        return ICM_ENOMEM;
    case EACCES:
    case EPERM:
        return ICM_EAUTH;
    case EROFS:
        return ICM_EREADONLY;
    case ETIMEDOUT:
        return ICM_ETIMEOUT;
    case EINVAL:
    case ENAMETOOLONG:
        return ICM_EINVALID;
    default:
        return ICM_EIO;
    }
}

const char *icm_error_code_name(int code)
{
    switch (code) {
    case ICM_OK: return "ICM_OK";
    case ICM_ERROR: return "ICM_ERROR";
    case ICM_ENOTFOUND: return "ICM_ENOTFOUND";
    case ICM_EEXISTS: return "ICM_EEXISTS";
    case ICM_EINVALID: return "ICM_EINVALID";
    case ICM_EUNSUPPORTED: return "ICM_EUNSUPPORTED";
    case ICM_ENOMEM: return "ICM_ENOMEM";
    case ICM_EIO: return "ICM_EIO";
    case ICM_ENET: return "ICM_ENET";
    case ICM_ETIMEOUT: return "ICM_ETIMEOUT";
    case ICM_EAUTH: return "ICM_EAUTH";
    case ICM_ECOMMIT_FAILED: return "ICM_ECOMMIT_FAILED";
    case ICM_ECOMMIT_UNKNOWN: return "ICM_ECOMMIT_UNKNOWN";
    case ICM_ECANCELLED: return "ICM_ECANCELLED";
    case ICM_EUSER: return "ICM_EUSER";
    case ICM_EREFUSED: return "ICM_EREFUSED";
    case ICM_EREADONLY: return "ICM_EREADONLY";
    case ICM_EOUTCOME_UNKNOWN: return "ICM_EOUTCOME_UNKNOWN";
    case ICM_EUNREACHABLE: return "ICM_EUNREACHABLE";
    case ICM_ITEROVER: return "ICM_ITEROVER";
    default: return "ICM_UNKNOWN";
    }
}

const char *icm_error_class_name(icm_error_class klass)
{
    static const char *const names[] = {"none", "nomem", "os",   "io",   "json",
                                        "avro", "spec",  "catalog", "sql", "txn",
                                        "http", "s3",    "rest", "cli",  "maint"};
    if ((size_t)klass >= ICM__ARRAY_LEN(names))
        return "unknown";
    return names[klass];
}

size_t icm_error_format(char *buf, size_t buf_size, const icm_error *err)
{
    int n;
    if (err->location != NULL && err->location[0] != '\0')
        n = snprintf(buf, buf_size, "%s: %s", err->location, err->message);
    else
        n = snprintf(buf, buf_size, "%s", err->message);
    if (n < 0)
        return 0;
    size_t len = (size_t)n;
    if (err->http_status != 0) {
        size_t off = len < buf_size ? len : buf_size;
        int m = snprintf(buf + off, buf_size - off, " (HTTP %d)", err->http_status);
        if (m > 0)
            len += (size_t)m;
    }
    return len;
}

int icm__struct_size_check(icm_error_class klass, const char *location, const char *type_name,
                           size_t struct_size, size_t min, size_t max, const char *init_macro)
{
    if (struct_size < min)
        return icm__error_set(klass, ICM_EINVALID, location,
                              "%s: struct_size %zu is below the smallest this library accepts "
                              "(%zu); initialise it with %s",
                              type_name, struct_size, min, init_macro);
    if (struct_size > max)
        return icm__error_set(klass, ICM_EINVALID, location,
                              "%s: struct_size %zu is larger than this library's %zu (the caller "
                              "was built against a newer header)",
                              type_name, struct_size, max);
    return 0;
}
