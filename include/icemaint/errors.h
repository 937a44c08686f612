/*
 * icemaint/errors.h: pinned error codes and the thread-local last error.
 *
 * Every public function that can fail returns 0 or one of the negative codes below; the code's
 * numeric value never changes between releases (values above -100 are reserved). Details of the
 * most recent failure on the calling thread are in icm_error_last().
 */
#ifndef ICEMAINT_ERRORS_H
#define ICEMAINT_ERRORS_H

#include "common.h"

ICM_BEGIN_DECL

typedef enum icm_error_code {
    ICM_OK = 0,
    ICM_ERROR = -1,             /**< generic failure not covered below */
    ICM_ENOTFOUND = -2,         /**< file, table, snapshot or key does not exist */
    ICM_EEXISTS = -3,           /**< create-new target already exists */
    ICM_EINVALID = -4,          /**< bad input: malformed metadata, manifest, argument */
    ICM_EUNSUPPORTED = -5,      /**< format version, codec or feature not supported */
    ICM_ENOMEM = -6,            /**< allocation failed; nothing was leaked or half-written */
    ICM_EIO = -7,               /**< I/O error from a storage back end */
    ICM_ENET = -8,              /**< network failure */
    ICM_ETIMEOUT = -9,          /**< operation timed out */
    ICM_EAUTH = -10,            /**< authentication or authorisation refused */
    ICM_ECOMMIT_FAILED = -11,   /**< commit definitively NOT applied (CAS lost, validation) */
    ICM_ECOMMIT_UNKNOWN = -12,  /**< commit outcome unknown: never delete files after this */
    ICM_ECANCELLED = -13,       /**< cancelled by the caller */
    ICM_EUSER = -14,            /**< a caller's callback asked to stop */
    ICM_EREFUSED = -15,         /**< refused by a safety check (the message names it) */
    ICM_EREADONLY = -16,        /**< write or commit on a read-only table or handle */
    ICM_EOUTCOME_UNKNOWN = -17, /**< a conditional write (create-new) was sent and its answer
                                     lost: the object may or may not exist now; never assume
                                     either, and never delete it unless proven ours */
    ICM_EUNREACHABLE = -18,     /**< a store or server could not be reached at all: its host
                                     name does not resolve, or every connection was refused
                                     (a wrong endpoint, a configuration error); nothing was
                                     sent, and it says nothing about the file asked for */
    ICM_ITEROVER = -31          /**< iterator end; not an error */
} icm_error_code;

/** Which layer an error came from. */
typedef enum icm_error_class {
    ICM_ERRCLASS_NONE = 0,
    ICM_ERRCLASS_NOMEM,
    ICM_ERRCLASS_OS,
    ICM_ERRCLASS_IO,
    ICM_ERRCLASS_JSON,
    ICM_ERRCLASS_AVRO,
    ICM_ERRCLASS_SPEC,
    ICM_ERRCLASS_CATALOG,
    ICM_ERRCLASS_SQL,
    ICM_ERRCLASS_TXN,
    ICM_ERRCLASS_HTTP,
    ICM_ERRCLASS_S3,
    ICM_ERRCLASS_REST,
    ICM_ERRCLASS_CLI,
    ICM_ERRCLASS_MAINT
} icm_error_class;

/** The details of the last failure on this thread. All strings are NUL-terminated, never NULL.
 *  `message` and `location` are printable text on one line: a file name's control characters,
 *  backslashes and bytes that are not UTF-8 are escaped as icm_escape_text() does
 *  (icemaint/escape.h), so "a\nb" names the file whose name holds a newline. */
typedef struct icm_error {
    int code;                 /**< icm_error_code (negative) */
    icm_error_class klass;    /**< layer */
    const char *message;      /**< one line, no trailing newline; "" if none */
    const char *location;     /**< file/object URI or endpoint involved; "" if none */
    int http_status;          /**< HTTP status, 0 if none */
    int os_errno;             /**< errno of the failing system call, 0 if none */
    const char *remote_code;  /**< REST error type, S3 <Code> or SQLSTATE; "" if none */
    int64_t line;             /**< 1-based line of a parse error, 0 if none */
    int64_t column;           /**< 1-based column of a parse error, 0 if none */
    int64_t offset;           /**< byte offset of a parse/decode error, -1 if none */
} icm_error;

/**
 * The last error on the calling thread. Never NULL; owned by the library; valid until the next
 * library call on this thread. After success the content is unspecified (check return codes).
 */
ICM_EXTERN(const icm_error *) icm_error_last(void);

/** Reset the calling thread's last error to "no error". */
ICM_EXTERN(void) icm_error_clear(void);

/** Stable name of a code ("ICM_ENOTFOUND"); "ICM_UNKNOWN" for unknown values. Static storage. */
ICM_EXTERN(const char *) icm_error_code_name(int code);

/** Stable lower-case name of a class ("io", "json", "avro", ...). Static storage. */
ICM_EXTERN(const char *) icm_error_class_name(icm_error_class klass);

/**
 * Render an error on one line: "<location>: <message>" plus " (errno N: text)" or
 * " (HTTP N)" where set. Writes at most buf_size bytes including the NUL.
 * @return the length the full line would have (snprintf semantics).
 */
ICM_EXTERN(size_t) icm_error_format(char *buf, size_t buf_size, const icm_error *err);

ICM_END_DECL

#endif /* ICEMAINT_ERRORS_H */
