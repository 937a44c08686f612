/*
 * tests/unit/aws_testenv.h: an AWS environment of the test's own for the S3 configuration and
 * credential tests. Setup saves and removes every AWS_* variable, and points HOME at a new
 * empty directory (so no ~/.aws of the machine is read); teardown removes the directory and
 * puts the environment back exactly as it was. Header-only: each test binary includes it once.
 */
#ifndef ICM_TESTS_AWS_TESTENV_H
#define ICM_TESTS_AWS_TESTENV_H

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

extern char **environ;

typedef struct awst_env {
    char **saved; /* "NAME=value" of every AWS_* variable at setup */
    size_t n_saved;
    char *home;   /* HOME at setup, or NULL */
    char *dir;    /* the test's HOME */
} awst_env;

static void awst_unset_aws(void)
{
    for (;;) {
        char *name = NULL;
        for (char **e = environ; *e != NULL; e++)
            if (strncmp(*e, "AWS_", 4) == 0) {
                name = strndup(*e, strcspn(*e, "="));
                break;
            }
        if (name == NULL)
            return;
        unsetenv(name);
        free(name);
    }
}

static int awst_setup(void **state)
{
    awst_env *t = calloc(1, sizeof *t);
    for (char **e = environ; *e != NULL; e++)
        if (strncmp(*e, "AWS_", 4) == 0) {
            t->saved = realloc(t->saved, (t->n_saved + 1) * sizeof *t->saved);
            t->saved[t->n_saved++] = strdup(*e);
        }
    awst_unset_aws();
    const char *home = getenv("HOME");
    t->home = home != NULL ? strdup(home) : NULL;
    t->dir = icmt_mkdtemp();
    setenv("HOME", t->dir, 1);
    *state = t;
    return 0;
}

static int awst_teardown(void **state)
{
    awst_env *t = *state;
    awst_unset_aws();
    for (size_t i = 0; i < t->n_saved; i++) {
        char *eq = strchr(t->saved[i], '=');
        *eq = '\0';
        setenv(t->saved[i], eq + 1, 1);
        free(t->saved[i]);
    }
    free(t->saved);
    if (t->home != NULL)
        setenv("HOME", t->home, 1);
    else
        unsetenv("HOME");
    free(t->home);
    icmt_rmtree(t->dir);
    free(t->dir);
    free(t);
    return 0;
}

/* Path `rel` under the test's HOME (malloc'd). */
static inline char *awst_path(const awst_env *t, const char *rel)
{
    return icmt_sprintf("%s/%s", t->dir, rel);
}

/* Write `text` to `rel` under the test's HOME, making ~/.aws when needed; returns the path
 * (malloc'd). */
static inline char *awst_write(const awst_env *t, const char *rel, const char *text)
{
    char *aws = icmt_sprintf("%s/.aws", t->dir);
    mkdir(aws, 0700);
    free(aws);
    char *p = awst_path(t, rel);
    icmt_write_file(p, text, strlen(text));
    return p;
}

/* The last error's message contains `needle` (printing both when it does not). */
#define awst_msg_has(needle)                                                                \
    do {                                                                                    \
        const char *m_ = icm_error_last()->message;                                         \
        if (strstr(m_, (needle)) == NULL) {                                                 \
            print_error("message \"%s\" lacks \"%s\"\n", m_, (needle));                     \
            fail();                                                                         \
        }                                                                                   \
    } while (0)

#define awst_msg_lacks(needle)                                                              \
    do {                                                                                    \
        const char *m_ = icm_error_last()->message;                                         \
        if (strstr(m_, (needle)) != NULL) {                                                 \
            print_error("message \"%s\" has \"%s\"\n", m_, (needle));                       \
            fail();                                                                         \
        }                                                                                   \
    } while (0)

#endif /* ICM_TESTS_AWS_TESTENV_H */
