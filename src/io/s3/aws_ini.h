/*
 * io/s3/aws_ini.h: the AWS shared config and credentials files (~/.aws/config,
 * ~/.aws/credentials) as the AWS SDKs read them (internal).
 *
 * The format is INI with the SDKs' rules: `[section]` headers; `key = value` properties (keys
 * compared without regard to case); whole-line comments starting with `#` or `;`, and a `#` or
 * `;` preceded by whitespace ending a value; a property with an empty value followed by
 * indented `key = value` lines is a sub-block (`s3 =` then `  addressing_style = path`); any
 * other indented line continues the previous value. A section that appears twice is one section
 * (the later value of a key wins). Malformed lines are errors naming file:line, never skipped:
 * a half-read profile could silently send requests with another identity.
 */
#ifndef ICM_IO_S3_AWS_INI_H
#define ICM_IO_S3_AWS_INI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct icm__aws_ini_entry {
    char *key;     /* lower-case */
    char *value;   /* trimmed, comment removed; "" for a sub-block's parent */
    char *parent;  /* NULL, or the (lower-case) key of the sub-block this entry sits in */
    unsigned line; /* 1-based */
} icm__aws_ini_entry;

typedef struct icm__aws_ini_section {
    char *name; /* between the brackets, trimmed, a prefix word's whitespace as one space:
                   "default", "profile prod", "services local" */
    unsigned line;
    icm__aws_ini_entry *entries;
    size_t n_entries, cap_entries;
} icm__aws_ini_section;

typedef struct icm__aws_ini {
    char *path; /* for messages; "" when parsed from memory without a name */
    bool present; /* the file existed */
    icm__aws_ini_section *sections;
    size_t n_sections, cap_sections;
} icm__aws_ini;

/* Parse `len` bytes of `text` (need not be NUL-terminated) into *out, naming `path` in
 * errors. Returns 0; ICM_EINVALID "<path>:<line>: what is wrong"; ICM_ENOMEM. On failure *out
 * holds nothing to free. */
int icm__aws_ini_parse(icm__aws_ini *out, const char *path, const char *text, size_t len);

/* Read and parse the file at `path`. A file that does not exist is an empty *out (present
 * false) unless `required`, when it is ICM_EINVALID naming the file and `named_by` (the
 * variable that named it). Unreadable files are ICM_EINVALID too. */
int icm__aws_ini_load(icm__aws_ini *out, const char *path, bool required, const char *named_by);

void icm__aws_ini_clear(icm__aws_ini *ini);

/* The section named exactly `name`, or NULL. */
const icm__aws_ini_section *icm__aws_ini_find(const icm__aws_ini *ini, const char *name);

/* The value (the last one) of `key` in `s`, inside sub-block `parent` (NULL: top level); NULL
 * when absent. */
const icm__aws_ini_entry *icm__aws_ini_get(const icm__aws_ini_section *s, const char *parent,
                                           const char *key);

/* The config file's section for profile `profile`: "profile <name>"; for "default", that
 * ([profile default]) when present, else [default]. NULL when absent. */
const icm__aws_ini_section *icm__aws_ini_config_profile(const icm__aws_ini *config,
                                                        const char *profile);

/* The paths of the shared files: AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE, else
 * $HOME/.aws/config and $HOME/.aws/credentials (new strings, icm__free). *explicit_out tells
 * whether the variable named it. Returns 0 or ICM_ENOMEM; *out NULL when there is neither the
 * variable nor a home directory. */
int icm__aws_config_path(char **out, bool *explicit_out);
int icm__aws_credentials_path(char **out, bool *explicit_out);

#endif /* ICM_IO_S3_AWS_INI_H */
