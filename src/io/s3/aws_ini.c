/*
 * io/s3/aws_ini.c: reading the AWS shared config and credentials files (see aws_ini.h for the
 * format). The rules follow the AWS SDKs' shared-files reference: comments, sub-blocks and
 * continuation lines as the Java and Rust SDKs parse them; anything else is an error naming the
 * line, because a profile read halfway could sign requests with another identity.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/s3/aws_ini.h"
#include "util/util.h"

/* No shared file is anywhere near this; a bigger one is a mistake, not a profile. */
#define AWS_INI_MAX_BYTES ((size_t)16 << 20)

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && is_blank(**s))
        (*s)++;
    while (*e > *s && is_blank((*e)[-1]))
        (*e)--;
}

/* End of a value: the first `#` or `;` that follows whitespace starts a comment. */
static const char *value_end(const char *s, const char *e)
{
    for (const char *p = s; p < e; p++)
        if ((*p == '#' || *p == ';') && p > s && is_blank(p[-1]))
            return p;
    return e;
}

static char *lower_dup(const char *s, size_t n)
{
    char *d = icm__strndup(s, n);
    for (char *p = d; p != NULL && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

void icm__aws_ini_clear(icm__aws_ini *ini)
{
    if (ini == NULL)
        return;
    for (size_t i = 0; i < ini->n_sections; i++) {
        icm__aws_ini_section *s = &ini->sections[i];
        for (size_t j = 0; j < s->n_entries; j++) {
            icm__free(s->entries[j].key);
            icm__free(s->entries[j].value);
            icm__free(s->entries[j].parent);
        }
        icm__free(s->entries);
        icm__free(s->name);
    }
    icm__free(ini->sections);
    icm__free(ini->path);
    memset(ini, 0, sizeof *ini);
}

/* The section called `name` (taken), reusing an existing one of that name. */
static icm__aws_ini_section *section_open(icm__aws_ini *ini, char *name, unsigned line)
{
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, name) == 0) {
            icm__free(name);
            return &ini->sections[i];
        }
    if (ini->n_sections == ini->cap_sections) {
        size_t cap = ini->cap_sections ? ini->cap_sections * 2 : 8;
        icm__aws_ini_section *n = icm__reallocarray(ini->sections, cap, sizeof *n);
        if (n == NULL) {
            icm__free(name);
            return NULL;
        }
        ini->sections = n;
        ini->cap_sections = cap;
    }
    icm__aws_ini_section *s = &ini->sections[ini->n_sections++];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->line = line;
    return s;
}

static int entry_add(icm__aws_ini_section *s, const char *key, size_t key_len, const char *value,
                     size_t value_len, const char *parent, unsigned line)
{
    if (s->n_entries == s->cap_entries) {
        size_t cap = s->cap_entries ? s->cap_entries * 2 : 8;
        icm__aws_ini_entry *n = icm__reallocarray(s->entries, cap, sizeof *n);
        if (n == NULL)
            return icm__error_oom();
        s->entries = n;
        s->cap_entries = cap;
    }
    icm__aws_ini_entry e = {lower_dup(key, key_len), icm__strndup(value, value_len),
                            parent != NULL ? icm__strdup(parent) : NULL, line};
    if (e.key == NULL || e.value == NULL || (parent != NULL && e.parent == NULL)) {
        icm__free(e.key);
        icm__free(e.value);
        icm__free(e.parent);
        return icm__error_oom();
    }
    s->entries[s->n_entries++] = e;
    return 0;
}

/* "profile   x" -> "profile x": the SDKs split the prefix word from the name on whitespace. */
static char *section_name(const char *s, const char *e)
{
    static const char *const prefixes[] = {"profile", "services", "sso-session"};
    for (size_t i = 0; i < ICM__ARRAY_LEN(prefixes); i++) {
        size_t n = strlen(prefixes[i]);
        if ((size_t)(e - s) > n && strncmp(s, prefixes[i], n) == 0 && is_blank(s[n])) {
            const char *r = s + n;
            while (r < e && is_blank(*r))
                r++;
            return icm__sprintf("%s %.*s", prefixes[i], (int)(e - r), r);
        }
    }
    return icm__strndup(s, (size_t)(e - s));
}

static int bad_line(const char *path, unsigned line, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, path, "%s:%u: %s", path, line, what);
}

int icm__aws_ini_parse(icm__aws_ini *out, const char *path, const char *text, size_t len)
{
    memset(out, 0, sizeof *out);
    if (path == NULL)
        path = "";
    out->path = icm__strdup(path);
    if (out->path == NULL)
        return icm__error_oom();
    out->present = true;

    const char *p = text, *end = text + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    icm__aws_ini_section *sec = NULL;
    /* The last top-level property of `sec`: its index, and whether it opened a sub-block. */
    size_t last = SIZE_MAX;
    bool in_block = false;
    int rc = 0;
    for (unsigned line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        const char *s = p, *e = le;
        p = nl != NULL ? nl + 1 : end;
        if (e > s && e[-1] == '\r')
            e--;
        bool nul = false;
        for (const char *q = s; q < e && !nul; q++)
            nul = *q == '\0';
        if (nul) {
            rc = bad_line(path, line, "a NUL byte");
            goto fail;
        }
        bool indented = s < e && is_blank(*s);
        trim(&s, &e);
        if (s == e || *s == '#' || *s == ';')
            continue;
        if (!indented && *s == '[') {
            const char *close = memchr(s, ']', (size_t)(e - s));
            if (close == NULL) {
                rc = bad_line(path, line, "a section header without a closing ]");
                goto fail;
            }
            const char *after = close + 1;
            while (after < e && is_blank(*after))
                after++;
            if (after < e && *after != '#' && *after != ';') {
                rc = bad_line(path, line, "text after a section header's ]");
                goto fail;
            }
            const char *ns = s + 1, *ne = close;
            trim(&ns, &ne);
            if (ns == ne) {
                rc = bad_line(path, line, "an empty section name");
                goto fail;
            }
            char *name = section_name(ns, ne);
            if (name == NULL || (sec = section_open(out, name, line)) == NULL) {
                rc = icm__error_oom();
                goto fail;
            }
            last = SIZE_MAX;
            in_block = false;
            continue;
        }
        if (sec == NULL) {
            rc = bad_line(path, line, "a property before any [section]");
            goto fail;
        }
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (indented && last != SIZE_MAX && !in_block) {
            /* A continuation of the previous value. */
            icm__aws_ini_entry *prev = &sec->entries[last];
            const char *ve = value_end(s, e);
            trim(&s, &ve);
            char *v = icm__sprintf("%s\n%.*s", prev->value, (int)(ve - s), s);
            if (v == NULL) {
                rc = icm__error_oom();
                goto fail;
            }
            icm__free(prev->value);
            prev->value = v;
            continue;
        }
        if (eq == NULL) {
            rc = bad_line(path, line, "expected key = value");
            goto fail;
        }
        const char *ks = s, *ke = eq;
        trim(&ks, &ke);
        if (ks == ke) {
            rc = bad_line(path, line, "a property without a name");
            goto fail;
        }
        const char *vs = eq + 1, *ve = value_end(eq + 1, e);
        trim(&vs, &ve);
        if (indented && in_block) {
            rc = entry_add(sec, ks, (size_t)(ke - ks), vs, (size_t)(ve - vs),
                           sec->entries[last].key, line);
            if (rc != 0)
                goto fail;
            continue;
        }
        rc = entry_add(sec, ks, (size_t)(ke - ks), vs, (size_t)(ve - vs), NULL, line);
        if (rc != 0)
            goto fail;
        last = sec->n_entries - 1;
        in_block = vs == ve;
    }
    return 0;
fail:
    icm__aws_ini_clear(out);
    return rc;
}

int icm__aws_ini_load(icm__aws_ini *out, const char *path, bool required, const char *named_by)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (!required && (err == ENOENT || err == ENOTDIR)) {
            out->path = icm__strdup(path);
            return out->path != NULL ? 0 : icm__error_oom();
        }
        if (named_by != NULL && required)
            return icm__error_set_errno(ICM_ERRCLASS_S3, ICM_EINVALID, err, path,
                                        "%s: cannot open the file %s names", path, named_by);
        return icm__error_set_errno(ICM_ERRCLASS_S3, ICM_EINVALID, err, path,
                                    "%s: cannot open", path);
    }
    icm__buf b = ICM__BUF_INIT;
    int rc = 0;
    for (;;) {
        if (icm__buf_grow(&b, 65536) != 0) {
            rc = icm__error_oom();
            break;
        }
        ssize_t n = read(fd, b.data + b.len, b.cap - b.len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = icm__error_set_errno(ICM_ERRCLASS_S3, ICM_EINVALID, errno, path,
                                      "%s: cannot read", path);
            break;
        }
        if (n == 0)
            break;
        b.len += (size_t)n;
        if (b.len > AWS_INI_MAX_BYTES) {
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, path,
                                "%s: larger than %zu bytes: not an AWS shared file", path,
                                AWS_INI_MAX_BYTES);
            break;
        }
    }
    close(fd);
    if (rc == 0)
        rc = icm__aws_ini_parse(out, path, b.data != NULL ? b.data : "", b.len);
    icm__buf_dispose(&b);
    return rc;
}

const icm__aws_ini_section *icm__aws_ini_find(const icm__aws_ini *ini, const char *name)
{
    for (size_t i = 0; ini != NULL && i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, name) == 0)
            return &ini->sections[i];
    return NULL;
}

const icm__aws_ini_entry *icm__aws_ini_get(const icm__aws_ini_section *s, const char *parent,
                                           const char *key)
{
    const icm__aws_ini_entry *found = NULL;
    for (size_t i = 0; s != NULL && i < s->n_entries; i++) {
        const icm__aws_ini_entry *e = &s->entries[i];
        if ((parent == NULL) != (e->parent == NULL))
            continue;
        if (parent != NULL && strcasecmp(parent, e->parent) != 0)
            continue;
        if (strcasecmp(e->key, key) == 0)
            found = e;
    }
    return found;
}

const icm__aws_ini_section *icm__aws_ini_config_profile(const icm__aws_ini *config,
                                                        const char *profile)
{
    if (profile == NULL)
        return NULL;
    const icm__aws_ini_section *named = NULL;
    for (size_t i = 0; config != NULL && i < config->n_sections; i++) {
        const char *n = config->sections[i].name;
        if (strncmp(n, "profile ", 8) == 0 && strcmp(n + 8, profile) == 0)
            named = &config->sections[i];
    }
    if (named != NULL || strcmp(profile, "default") != 0)
        return named;
    return icm__aws_ini_find(config, "default");
}

static int shared_path(char **out, bool *explicit_out, const char *var, const char *file)
{
    *out = NULL;
    *explicit_out = false;
    const char *v = getenv(var);
    if (v != NULL && *v != '\0') {
        *explicit_out = true;
        /* The SDKs expand a leading ~ in these variables too. */
        if (v[0] == '~' && v[1] == '/') {
            const char *home = getenv("HOME");
            if (home != NULL && *home != '\0') {
                *out = icm__sprintf("%s%s", home, v + 1);
                return *out != NULL ? 0 : icm__error_oom();
            }
        }
        *out = icm__strdup(v);
        return *out != NULL ? 0 : icm__error_oom();
    }
    const char *home = getenv("HOME");
    char buf[4096];
    struct passwd pw, *res = NULL;
    if ((home == NULL || *home == '\0') &&
        getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res != NULL)
        home = res->pw_dir;
    if (home == NULL || *home == '\0')
        return 0;
    *out = icm__sprintf("%s/.aws/%s", home, file);
    return *out != NULL ? 0 : icm__error_oom();
}

int icm__aws_config_path(char **out, bool *explicit_out)
{
    return shared_path(out, explicit_out, "AWS_CONFIG_FILE", "config");
}

int icm__aws_credentials_path(char **out, bool *explicit_out)
{
    return shared_path(out, explicit_out, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
}
