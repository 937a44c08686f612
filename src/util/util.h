/*
 * util/util.h: internal helpers shared by every module: allocation through the hooks, checked
 * size arithmetic, the last-error setters, a growable byte buffer and a growable pointer array.
 *
 * Not installed. Functions here are `icm__` (semi-private): shared across files, never exported.
 */
#ifndef ICM_UTIL_UTIL_H
#define ICM_UTIL_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/common.h"
#include "icemaint/errors.h"

#if defined(__GNUC__) || defined(__clang__)
#define ICM__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define ICM__UNUSED __attribute__((unused))
#define ICM__LIKELY(x) __builtin_expect(!!(x), 1)
#define ICM__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ICM__PRINTF(f, a)
#define ICM__UNUSED
#define ICM__LIKELY(x) (x)
#define ICM__UNLIKELY(x) (x)
#endif

#define ICM__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- allocation (through icm_allocator_set hooks); failures set ICM_ENOMEM ---- */
/* The hooks of this copy of util (icm_allocator_set, src/api/library_state.c, sets the
 * library's). NULL or an incomplete set restores malloc/realloc/free. */
void icm__set_allocator(const icm_allocator *allocator);
void *icm__malloc(size_t n);
void *icm__calloc(size_t count, size_t size);
void *icm__realloc(void *p, size_t n);
/* realloc to count*size with overflow check */
void *icm__reallocarray(void *p, size_t count, size_t size);
void icm__free(void *p);
char *icm__strdup(const char *s);
char *icm__strndup(const char *s, size_t n);
/* Whether `s` ends with `suffix`. */
bool icm__str_ends_with(const char *s, const char *suffix);
char *icm__sprintf(const char *fmt, ...) ICM__PRINTF(1, 2);
char *icm__vsprintf(const char *fmt, va_list ap) ICM__PRINTF(1, 0);

/* checked arithmetic: return false on overflow */
static inline bool icm__add_overflow(size_t a, size_t b, size_t *out)
{
    return __builtin_add_overflow(a, b, out);
}
static inline bool icm__mul_overflow(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* ---- last error ---- */
/* The calling thread's last error in this copy of util, and clearing it (icm_error_last and
 * icm_error_clear, src/api/library_state.c, are these on the library's copy). */
const icm_error *icm__error_last(void);
void icm__error_clear(void);
/* Set the thread's last error and return `code`, so callers write `return icm__error_set(...)`.
 * `location` may be NULL. The message is formatted into thread-local storage (no allocation). */
int icm__error_set(icm_error_class klass, int code, const char *location, const char *fmt, ...)
    ICM__PRINTF(4, 5);
int icm__error_vset(icm_error_class klass, int code, const char *location, const char *fmt,
                    va_list ap) ICM__PRINTF(4, 0);
/* Same, recording errno `err` and appending strerror(err) to the message. */
int icm__error_set_errno(icm_error_class klass, int code, int err, const char *location,
                         const char *fmt, ...) ICM__PRINTF(5, 6);
/* The check of a caller's size-prefixed struct (common.h, docs/API.md rule 3): 0 when
 * `struct_size` lies in [min, max] (max is the library's sizeof), else ICM_EINVALID naming
 * the struct (`type_name`), the sizes and the `_INIT` macro that sets it. */
int icm__struct_size_check(icm_error_class klass, const char *location, const char *type_name,
                           size_t struct_size, size_t min, size_t max, const char *init_macro);
/* ICM_ENOMEM with a fixed message. */
int icm__error_oom(void);
void icm__error_set_http_status(int status);
void icm__error_set_remote_code(const char *code);
void icm__error_set_position(int64_t line, int64_t column, int64_t offset);
/* Replace only the location of the current error (when a lower layer did not know it). */
void icm__error_set_location(const char *location);
/* Put `prefix` before the current error's message (cut at the end to fit); nothing else of
 * the error changes. */
void icm__error_prefix_message(const char *prefix);
/* Save and restore the last error around cleanup code that may itself fail. */
typedef struct icm__error_saved icm__error_saved;
icm__error_saved *icm__error_save(void);
void icm__error_restore(icm__error_saved *saved);
/* Map an errno from a failed system call to an icm code. */
int icm__errno_to_code(int err);

/* ---- growable byte buffer with a sticky OOM flag ---- */
typedef struct icm__buf {
    char *data;    /* NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    bool oom;
} icm__buf;
#define ICM__BUF_INIT {NULL, 0, 0, false}

int icm__buf_grow(icm__buf *b, size_t extra);
int icm__buf_put(icm__buf *b, const void *data, size_t len);
int icm__buf_puts(icm__buf *b, const char *s);
int icm__buf_putc(icm__buf *b, char c);
int icm__buf_printf(icm__buf *b, const char *fmt, ...) ICM__PRINTF(2, 3);
void icm__buf_clear(icm__buf *b);
void icm__buf_dispose(icm__buf *b);
/* Hand the buffer's memory to the caller (free with icm_free), leaving b empty. */
char *icm__buf_detach(icm__buf *b, size_t *len_out);

/* ---- growable array of pointers ---- */
typedef struct icm__ptrvec {
    void **items;
    size_t len;
    size_t cap;
} icm__ptrvec;
#define ICM__PTRVEC_INIT {NULL, 0, 0}

int icm__ptrvec_push(icm__ptrvec *v, void *item);
void icm__ptrvec_dispose(icm__ptrvec *v, void (*free_item)(void *));

/* ---- UTF-8 (escape.c) ---- */
/* Length of the valid UTF-8 character (RFC 3629: shortest form, no surrogates, at most
 * U+10FFFF) starting at p, of at most `avail` bytes, or 0 when none starts there. A
 * NUL-terminated string may pass any avail >= 4: the NUL is never a continuation byte. */
size_t icm__utf8_char_len(const unsigned char *p, size_t avail);
/* Whether the `len` bytes at s are valid UTF-8 throughout. */
bool icm__utf8_valid(const char *s, size_t len);

/* ---- form URL decoding (escape.c) ---- */
/* Decode application/x-www-form-urlencoded text in place (S3's encoding-type=url keys, S3
 * Inventory CSV keys): '+' is a space, %XX the byte XX (hex digits of either case). s[0..*len)
 * becomes the decoded bytes, NUL-terminated (s holds *len + 1 bytes), *len their count. False
 * (s then unspecified) on a '%' not followed by two hex digits. A decoded NUL is kept: the
 * caller decides whether its names may hold one. */
bool icm__url_form_decode(char *s, size_t *len);

/* ---- identifiers (uuid.c) ---- */
/* Random (version 4) UUID in canonical lower-case form; out needs 37 bytes. ICM_EIO when the
 * kernel gives no randomness. */
int icm__uuid4(char out[37]);

/* ---- time ---- */
/* Wall clock, ms since the Unix epoch (UTC). */
int64_t icm__now_ms(void);
/* Sleep `ms` milliseconds (restarted after a signal until they have passed); <= 0: no wait. */
void icm__sleep_ms(int64_t ms);

#endif /* ICM_UTIL_UTIL_H */
