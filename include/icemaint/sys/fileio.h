/*
 * icemaint/sys/fileio.h: the FileIO back-end vtable, for authors of storage back ends (SQLite
 * VFS style: a back end embeds `struct icm_fileio` first in its own struct and points it at a
 * static icm_fileio_methods).
 *
 * Callers never call a slot directly: every storage call goes through the icm_fileio_*
 * wrappers of icemaint/fileio.h, which check arguments (so a back end can trust them: non-NULL
 * handle, non-empty location, non-NULL outputs, a non-negative offset, known flag bits), clear
 * outputs, read no slot beyond the back end's `version`, and name the location in any error the
 * back end left without one. A wrapper back end (fault injection, path mapping) passes calls to
 * what it wraps through those wrappers as well, never through the inner vtable.
 */
#ifndef ICEMAINT_SYS_FILEIO_H
#define ICEMAINT_SYS_FILEIO_H

#include "../fileio.h"

ICM_BEGIN_DECL

/**
 * Back-end vtable. New slots are only ever appended; `version` tells which exist.
 * Every method returns 0 or a negative icm code and sets the last error on failure.
 */
typedef struct icm_fileio_methods {
    int version; /**< ICM_FILEIO_METHODS_VERSION */
    const char *name;
    /** Read the whole object into a new buffer (free with icm_free); NUL-terminated beyond len.
     *  ICM_ENOTFOUND when missing. */
    int (*read)(icm_fileio *io, const char *location, char **out, size_t *out_len);
    /** Read up to len bytes at offset into buf; *out_read < len only at end of object. */
    int (*read_range)(icm_fileio *io, const char *location, int64_t offset, void *buf,
                      size_t len, size_t *out_read);
    /** Create a new object; ICM_EEXISTS (nothing written) if it exists. Atomic: readers see
     *  the whole content or no object. Parent folders are created as needed. */
    int (*create_new)(icm_fileio *io, const char *location, const void *data, size_t len);
    /** Create or replace an object, atomically for readers. */
    int (*write_replace)(icm_fileio *io, const char *location, const void *data, size_t len);
    /** Delete an object; an object already missing is success (a back end that can tell
     *  calls icm_fileio_note_missing() before returning, so icm_fileio_delete_existing()
     *  learns it; one that cannot tell does nothing). */
    int (*remove)(icm_fileio *io, const char *location);
    /** Size and mtime; ICM_ENOTFOUND when missing. out->location is set to `location`. `out`
     *  is always a whole icm_file_info of this library's size (the wrapper checks the caller's
     *  struct_size and copies what fits): write its fields, never struct_size. The same holds
     *  for `info` of checksum_of and for the `results` of delete_batch; an icm_file_info a
     *  back end hands to a listing callback is built with ICM_FILE_INFO_INIT. */
    int (*stat)(icm_fileio *io, const char *location, icm_file_info *out);
    /** Stream every object strictly below `prefix` at a path-segment boundary (recursive,
     *  files only; `/t` lists `/t/x`, never `/t_2/x`) to cb, without holding the listing in
     *  memory. A missing prefix lists nothing. Order is unspecified. Version 1 back ends must
     *  have it; from version 2 it may be NULL when `list_flags` is set. */
    int (*list)(icm_fileio *io, const char *prefix, icm_list_cb cb, void *payload);
    /** Release the back end. */
    void (*free)(icm_fileio *io);
    /* ---- version 2 ---- */
    /** `list` with ICM_LIST_* flags (only known bits reach it; the wrapper checks). A back end
     *  may ignore a flag that only permits (ICM_LIST_STAT_OPTIONAL); a wrapper passes the
     *  flags on to what it wraps. When set, the wrappers call it instead of `list`. */
    int (*list_flags)(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                      void *payload);
    /** The location with every symbolic link on its way resolved (new string, icm_free);
     *  ICM_ENOTFOUND when missing. NULL: the back end has no links (the wrapper returns a
     *  copy of the location). */
    int (*resolve)(icm_fileio *io, const char *location, char **out);
    /* ---- version 3 ---- */
    /** The checksum companion the storage keeps beside `location`, if there is one: *out a
     *  new string (icm_free) naming it in the form of `location`, *info its size and mtime
     *  (info->location borrowed from *out); *out NULL when there is none. Reads only. NULL
     *  slot: the back end keeps no companions. */
    int (*checksum_of)(icm_fileio *io, const char *location, char **out, icm_file_info *info);
    /* ---- version 4 ---- */
    /** Delete n (1 to ICM_FILEIO_DELETE_BATCH_MAX) objects, writing results[i] for
     *  locations[i] (every location non-empty; the wrapper has set every result to FAILED
     *  "no result" before the call). Return 0 once every result is written; a negative code
     *  when the call as a whole failed (the wrapper then marks every item FAILED with it,
     *  retryable for ICM_ENET and ICM_ETIMEOUT: deletes are idempotent). NULL: the wrapper
     *  calls `remove` per item. See icm_fileio_delete_result_fail() for filling a failure. */
    int (*delete_batch)(icm_fileio *io, const char *const *locations, size_t n,
                        icm_fileio_delete_result *results);
    /** `list_flags` with options: `opts` is never NULL, has the current options version and
     *  only known flag bits. A back end that can seek (an object store's start-after, a sorted
     *  store) starts after opts->start_after and may stop at opts->end_before; the wrapper drops
     *  whatever it reports outside the range anyway, so a back end may also ignore the range.
     *  When set, the wrappers call it for every listing (with or without a range). NULL: the
     *  wrapper lists through `list_flags`/`list` and applies the range itself. */
    int (*list_range)(icm_fileio *io, const char *prefix, const icm_fileio_list_options *opts,
                      icm_list_cb cb, void *payload);
    /* ---- version 5 ---- */
    /** Whether deleting `location` unlinks a file of this machine's file system: 1 yes, 0 no
     *  (an object-store key), a negative code when it cannot tell. The delete engine deletes a
     *  local file alone, right after its own re-checks (links, the sweep's re-stat), and sends
     *  object-store keys in batches after theirs. A wrapper asks what it wraps, with the name
     *  that one sees (a path map: the mapped name). NULL, or a negative answer: the careful
     *  answer, yes (a name of the local form is local whatever the back end says). */
    int (*is_local)(icm_fileio *io, const char *location);
} icm_fileio_methods;

/** 2: `list_flags` and `resolve` appended; 3: `checksum_of`; 4: `delete_batch`,
 *  `list_range`; 5: `is_local`. A back end may set `version` to an earlier value (then the
 *  later slots are not read); the wrappers refuse a back end whose `version` is below 1 or
 *  above this value (ICM_EINVALID: it was built against a newer header whose slots this
 *  library would not know how to call). */
#define ICM_FILEIO_METHODS_VERSION 5

/** Every back end's handle starts with this struct (embed it first). */
struct icm_fileio {
    const icm_fileio_methods *methods;
};

/** Called from `remove`, on the calling thread, when the object was already missing (see
 *  icm_fileio_delete_existing). */
ICM_EXTERN(void) icm_fileio_note_missing(void);

/** For `delete_batch`: mark `r` FAILED with `code` (negative), `retryable`, and the message of
 *  the calling thread's last error ("<location>: <message>", as icm_error_format, cut to fit). */
ICM_EXTERN(void) icm_fileio_delete_result_fail(icm_fileio_delete_result *r, int code,
                                               bool retryable);

/**
 * A back-end constructor for resolving FileIOs (icm_fileio_resolving_new): build a new back end
 * into *out from the resolving FileIO's properties (PyIceberg's names; borrowed for the call:
 * copy what you keep). Called at most once per resolving FileIO and constructor, the first time
 * a location of a scheme registered with it is used, under that FileIO's mutex.
 * @return 0; a negative icm code with the last error set (ICM_EINVALID for a bad property,
 *         ICM_EAUTH, ICM_ENOMEM, ...): the call that needed the back end fails with it.
 */
typedef int (*icm_fileio_factory)(icm_fileio **out, const icm_property *props, size_t n_props,
                                  void *payload);

/**
 * Register `factory` (with `payload`, passed to it) for the URI scheme `scheme` (without `:`;
 * case-insensitive; "file" for local paths too), process-wide: resolving FileIOs use it for
 * every back end they build from now on, in place of a built-in one (an S3 back end registers
 * itself for "s3", "s3a" and "s3n" with one factory and payload, so they share a back end).
 * Registering a scheme again replaces its factory; a NULL factory removes the registration
 * (the built-in one, if any, applies again). Back ends already built are not affected.
 * Thread-safe; at most 32 schemes.
 * @return 0, ICM_EINVALID (not a URI scheme, or too many).
 */
ICM_EXTERN(int) icm_fileio_register_scheme(const char *scheme, icm_fileio_factory factory,
                                           void *payload);

/** For factories: the value of property `key` (borrowed), the last one when it repeats; NULL
 *  when absent. */
ICM_EXTERN(const char *) icm_fileio_property(const icm_property *props, size_t n,
                                             const char *key);

ICM_END_DECL

#endif /* ICEMAINT_SYS_FILEIO_H */
