/*
 * icemaint/escape.h: printing byte strings that may hold any byte.
 *
 * File names and locations are byte strings: a name listed under a table may hold a newline, a
 * tab or bytes that are not UTF-8. Two escapes make any of them printable, each lossless (the
 * exact bytes can be recovered) and each never failing:
 *
 *  - text (icm_escape_text), for reports, tables and error lines meant for people: a backslash
 *    becomes `\\`, a newline `\n`, a carriage return `\r`, a tab `\t`; every other control
 *    character (U+0000-U+001F, U+007F and the C1 controls U+0080-U+009F) and every byte that is
 *    not part of valid UTF-8 becomes `\xNN` (two lower-case hex digits, one per byte: a C1
 *    control is two `\xNN`, its UTF-8 bytes). Everything else, valid UTF-8 included, is copied.
 *    So one name is one line, and reading `\\`, `\n`, `\r`, `\t` and `\xNN` back gives the bytes.
 *
 *  - JSON (icm_escape_json), for --json documents, plan files and journals: a JSON string
 *    (quotes included) whose valid UTF-8 is copied, with `"` and `\` escaped, control characters
 *    written `\b`, `\f`, `\n`, `\r`, `\t` or `\u00XX`, and every byte 0xXY that is not part of
 *    valid UTF-8 written as the lone low surrogate `\udcXY` (U+DC80-U+DCFF). That is Python's
 *    "surrogateescape": `os.fsencode(json.loads(text))` gives the original bytes back, and
 *    `os.fsdecode(raw)` read by json.dumps gives the same string. Valid UTF-8 never holds a
 *    surrogate, so no valid text can be confused with an escaped byte.
 *
 * Valid UTF-8 is RFC 3629's: shortest form, no surrogates (U+D800-U+DFFF), at most U+10FFFF;
 * each byte of anything else (an overlong form, an encoded surrogate, a truncated sequence, a
 * stray continuation byte, 0xC0, 0xC1, 0xF5-0xFF) is escaped on its own, as Python's UTF-8
 * decoder with surrogateescape does.
 *
 * Both functions have snprintf's contract: they write at most buf_size bytes including a
 * terminating NUL (nothing when buf_size is 0, so a first call with NULL, 0 asks for the
 * length) and return the length of the whole escaped text. A truncated output ends before the
 * first escape or character that does not fit whole. They never allocate and cannot fail.
 */
#ifndef ICEMAINT_ESCAPE_H
#define ICEMAINT_ESCAPE_H

#include "common.h"

ICM_BEGIN_DECL

/** Bytes that always hold the text escape of `len` input bytes, NUL included. */
#define ICM_ESCAPE_TEXT_MAX(len) (4 * (size_t)(len) + 1)
/** Bytes that always hold the JSON escape of `len` input bytes, quotes and NUL included. */
#define ICM_ESCAPE_JSON_MAX(len) (6 * (size_t)(len) + 3)

/**
 * Escape `len` bytes of `bytes` (any bytes, NUL included) for text output (see above).
 * @param buf       output, NUL-terminated when buf_size > 0; may be NULL when buf_size is 0
 * @param buf_size  bytes available at buf, NUL included
 * @return the length of the whole escaped text (excluding the NUL): the output was complete
 *         when it is less than buf_size.
 */
ICM_EXTERN(size_t) icm_escape_text(char *buf, size_t buf_size, const char *bytes, size_t len);

/**
 * Write `len` bytes of `bytes` as one JSON string, quotes included, with invalid UTF-8 bytes
 * as `\udcXY` (see above).
 * @return as icm_escape_text().
 */
ICM_EXTERN(size_t) icm_escape_json(char *buf, size_t buf_size, const char *bytes, size_t len);

ICM_END_DECL

#endif /* ICEMAINT_ESCAPE_H */
