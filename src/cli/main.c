/*
 * cli/main.c: entry point of the icemaint command-line tool: global options, dispatch to the
 * sub-commands, error reporting and exit codes.
 *
 * Shape (docs: README "Usage", contract in ../shared/reference/cli-contract.md):
 *   icemaint [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]
 * Global options stop at the first argument that is not an option; that argument names the
 * command. `--json` is also accepted after the command, and `--help`/`-h` anywhere after it
 * prints that command's help.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog_ref.h"
#include "cli.h"
#include "cmd_txn.h"
#include "icemaint/common.h"

static const icm_cli_command *const commands[] = {
    &icm_cli_cmd_inspect,
    &icm_cli_cmd_snapshots,
    &icm_cli_cmd_manifests,
    &icm_cli_cmd_files,
    &icm_cli_cmd_expire_snapshots,
    &icm_cli_cmd_remove_orphan_files,
    &icm_cli_cmd_check,
    &icm_cli_cmd_apply,
    &icm_cli_cmd_health,
    &icm_cli_cmd_maintain,
    &icm_cli_cmd_trash,
    &icm_cli_cmd_list_namespaces,
    &icm_cli_cmd_list_tables,
    &icm_cli_cmd_register_table,
    &icm_cli_cmd_add_files,
    &icm_cli_cmd_delete_files,
    &icm_cli_cmd_set_properties,
    &icm_cli_cmd_create_branch,
    &icm_cli_cmd_create_tag,
    &icm_cli_cmd_remove_ref,
    &icm_cli_cmd_rollback,
};

static const char tool_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Keep Apache Iceberg tables healthy: inspect their metadata, snapshots, manifests and\n"
    "files, expire old snapshots and remove orphan files.\n"
    "\n"
    "TABLE is a metadata JSON file (read-only), a table directory in filesystem (Hadoop)\n"
    "layout (metadata/version-hint.text, metadata/vN.metadata.json), or a catalog table\n"
    "name ns.table (the catalog as PyIceberg finds it: --catalog, --config, .pyiceberg.yaml).\n"
    "Locations may be local paths or s3:// (s3a://, s3n://) URIs. S3 is configured by the\n"
    "catalog entry's FileIO properties (s3.endpoint, s3.region, s3.access-key-id,\n"
    "s3.secret-access-key, s3.session-token, client.*; also PYICEBERG_CATALOG__<NAME>__S3__*),\n"
    "else as the AWS SDKs are (AWS_* variables, AWS_PROFILE and ~/.aws files, web identity,\n"
    "container and instance credentials), also when no catalog is configured. Filesystem-\n"
    "layout tables on S3 are committed only where the store honours If-None-Match (probed).\n"
    "\n"
    "Global options:\n"
    "  --path-map FROM=TO  read, list and delete locations starting with FROM at TO instead\n"
    "                      (repeatable; the longest matching FROM wins, matched at a path\n"
    "                      segment boundary; metadata is never rewritten)\n"
    "  --json              print exactly one JSON document on stdout (also after COMMAND)\n"
    "  -v, --verbose       more detail; errors also name the error code and class\n"
    "  -q, --quiet         only errors on stderr (no warnings, no progress); the result\n"
    "                      on stdout is unchanged\n"
    "  --catalog NAME      catalog for ns.table names (default: default-catalog, else\n"
    "                      \"default\")\n"
    "  --config FILE       PyIceberg-style catalog configuration (default: the first\n"
    "                      .pyiceberg.yaml in $PYICEBERG_HOME, ~, the current directory)\n"
    "  --uri URI           catalog URI (sqlite:///file.db, postgresql://..., http(s)://\n"
    "                      for a REST catalog), overrides\n"
    "  --warehouse URI     catalog warehouse, overrides\n"
    "  --version           print the version and exit (with --json: a JSON document)\n"
    "  -h, --help          print this help and exit\n"
    "\n"
    "Commands:\n";

static const char tool_help_tail[] =
    "\n"
    "Run 'icemaint COMMAND --help' for a command's options.\n"
    "Exit codes: 0 ok, 1 error, 2 usage, 3 commit failed, 4 commit outcome unknown,\n"
    "5 refused by a safety check, 6 check found problems or health found a threshold\n"
    "breached.\n"
    "Output: file names are printed escaped (text: \\\\, \\n, \\t, \\xNN for other control\n"
    "characters and bytes that are not UTF-8; JSON: such bytes as \\udcXY, Python's\n"
    "surrogateescape). Warnings start with 'warning:'.\n";

/* ---- error reporting ---- */

/* The last error line printed (without "icemaint: "), and the library error code behind it
 * (NULL when the CLI itself found the problem): with --json, a command that fails before
 * printing its document prints {"error": ...} instead, so stdout always carries one. */
static char last_error[4096];
static const char *last_error_code;

/* Print "icemaint: [where: ]<message>[suffix]" on stderr, escaped onto one printable line
 * (icm_cli_line: `where` is often a file name), and remember it. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 0)))
#endif
static void report(const char *where, const char *suffix, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    const char *m = msg != NULL ? msg : "out of memory while reporting an error";
    bool has_where = where != NULL && *where;
    icm_cli_line(stderr, "icemaint: %s%s%s%s", has_where ? where : "", has_where ? ": " : "", m,
                 suffix);
    /* the JSON error gets a copy (cut at 4 KiB), written with the lossless escape */
    snprintf(last_error, sizeof last_error, "%s%s%s", has_where ? where : "",
             has_where ? ": " : "", m);
    free(msg);
    last_error_code = NULL;
}

int icm_cli_usage(const char *arg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(arg, " (see 'icemaint --help')", fmt, ap);
    va_end(ap);
    return ICM_EXIT_USAGE;
}

int icm_cli_error(const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(where, "", fmt, ap);
    va_end(ap);
    return ICM_EXIT_ERROR;
}

/* With --json and no document printed: {"error": {"message", "code", "exit_code"}}. */
static void print_json_error(int exit_code)
{
    bool ok = true;
    json_t *err = json_object(), *doc = json_object();
    if (err == NULL || doc == NULL)
        ok = false;
    icm_cli_json_set(err, "message", icm_cli_json_str(last_error), &ok);
    icm_cli_json_set(err, "exit_code", icm_cli_json_int(exit_code), &ok);
    if (last_error_code != NULL)
        icm_cli_json_set(err, "code", icm_cli_json_str(last_error_code), &ok);
    icm_cli_json_set(doc, "error", err, &ok);
    if (ok) /* else (no memory) stderr has said it all */
        (void)icm_cli_json_print(doc, true);
    else
        json_decref(doc);
}

int icm_cli_oom(void)
{
    return icm_cli_error(NULL, "out of memory");
}

/* Exit code for a library error code: the contract reserves 3-5 for commits and refusals. A
 * write to a table opened from a metadata file (which may not be its current one) is refused
 * like the safety checks are, and its message says what to do instead. */
static int exit_code_for(int rc)
{
    switch (rc) {
    case ICM_ECOMMIT_FAILED:
        return ICM_EXIT_COMMIT_FAILED;
    case ICM_ECOMMIT_UNKNOWN:
        return ICM_EXIT_COMMIT_UNKNOWN;
    case ICM_EREFUSED:
    case ICM_EREADONLY:
        return ICM_EXIT_REFUSED;
    default:
        return ICM_EXIT_ERROR;
    }
}

int icm_cli_fail(const icm_cli *cli, int rc)
{
    const icm_error *err = icm_error_last();
    char line[4096]; /* (a refusal names up to 10 files) */
    if (err->code == 0 || (*err->message == '\0' && *err->location == '\0'))
        snprintf(line, sizeof line, "%s", icm_error_code_name(rc));
    else
        icm_error_format(line, sizeof line, err);
    /* The library's message and location are printable already (errors.h: escaped as
     * icm_escape_text does), so the line is written as it is, never escaped twice. */
    snprintf(last_error, sizeof last_error, "%s", line);
    last_error_code = icm_error_code_name(rc);
    if (cli != NULL && cli->verbosity > 0)
        fprintf(stderr, "icemaint: %s [%s, class %s]\n", line, icm_error_code_name(rc),
                icm_error_class_name(err->klass));
    else
        fprintf(stderr, "icemaint: %s\n", line);
    return exit_code_for(rc);
}

/* ---- option helpers ---- */

int icm_cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        icm_cli_usage(name, "option needs a value");
        return -1;
    }
    /* `--plan-out --dry-run` must not make "--dry-run" a file name and run for real: a value
     * that looks like an option is refused (`--name=--value` still passes one on purpose). */
    if (strncmp(argv[*i + 1], "--", 2) == 0 && argv[*i + 1][2] != '\0') {
        icm_cli_usage(name, "option needs a value, not the option '%s' (write %s=VALUE for a "
                      "value that starts with '--')", argv[*i + 1], name);
        return -1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

int icm_cli_push_snapshot_id(int64_t **ids, size_t *n, const char *text)
{
    int64_t id;
    if (!icm_cli_parse_int64(text, &id))
        return icm_cli_usage(text, "--snapshot-id needs a snapshot id (an integer)");
    int64_t *grown = realloc(*ids, (*n + 1) * sizeof *grown);
    if (grown == NULL)
        return icm_cli_oom();
    *ids = grown;
    (*ids)[(*n)++] = id;
    return ICM_EXIT_OK;
}

bool icm_cli_parse_int64(const char *text, int64_t *out)
{
    /* strtoll alone would also take leading blanks and a '+' */
    if (text == NULL || !(isdigit((unsigned char)text[0]) || text[0] == '-'))
        return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
        return false;
    *out = (int64_t)v;
    return true;
}

int icm_cli_names_add(const char *name, void *payload)
{
    icm_cli_names *l = payload;
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **names = realloc(l->names, cap * sizeof *names);
        if (names == NULL) {
            l->oom = true;
            return ICM_ENOMEM;
        }
        l->names = names;
        l->cap = cap;
    }
    if ((l->names[l->len] = strdup(name)) == NULL) {
        l->oom = true;
        return ICM_ENOMEM;
    }
    l->len++;
    return 0;
}

void icm_cli_names_free(icm_cli_names *l)
{
    for (size_t i = 0; i < l->len; i++)
        free(l->names[i]);
    free(l->names);
}

int icm_cli_take_table(const char *cmd, char **argv, int i, bool *after_dashdash,
                       const char **table)
{
    const char *a = argv[i];
    if (!*after_dashdash && strcmp(a, "--") == 0) {
        *after_dashdash = true;
        return ICM_EXIT_OK;
    }
    if (!*after_dashdash && a[0] == '-' && a[1] != '\0')
        return icm_cli_usage(a, "unknown option for '%s'", cmd);
    if (*table != NULL)
        return icm_cli_usage(a, "unexpected argument: '%s' takes one TABLE", cmd);
    *table = a;
    return ICM_EXIT_OK;
}

int icm_cli_need_table(const char *cmd, const char *table)
{
    if (table == NULL)
        return icm_cli_usage(cmd, "missing TABLE (ns.table, a table directory or a metadata JSON file)");
    return ICM_EXIT_OK;
}

int icm_cli_table_open_args(icm_cli *cli, const char *cmd, int argc, char **argv,
                            icm_cli_table *out)
{
    const char *table = NULL;
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        int rc = icm_cli_take_table(cmd, argv, i, &after_dashdash, &table);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    int rc = icm_cli_need_table(cmd, table);
    return rc == ICM_EXIT_OK ? icm_cli_table_open(cli, table, out) : rc;
}

/* ---- global options ---- */

static void cli_dispose(icm_cli *cli)
{
    for (size_t i = 0; i < cli->n_path_maps; i++) {
        free((char *)cli->path_maps[i].from);
        free((char *)cli->path_maps[i].to);
    }
    free(cli->path_maps);
    icm_fileio_free(cli->io);
}

/* --path-map FROM=TO: split at the first '=' (table roots rarely contain one; partition
 * directories like `country_id=` below them do not matter for a prefix). */
static int add_path_map(icm_cli *cli, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (eq == NULL)
        return icm_cli_usage(spec, "--path-map needs FROM=TO");
    if (eq == spec)
        return icm_cli_usage(spec, "--path-map FROM is empty");
    if (eq[1] == '\0')
        return icm_cli_usage(spec, "--path-map TO is empty");
    icm_path_map *grown = realloc(cli->path_maps, (cli->n_path_maps + 1) * sizeof *grown);
    if (grown == NULL)
        return icm_cli_oom();
    cli->path_maps = grown;
    char *from = strndup(spec, (size_t)(eq - spec));
    char *to = strdup(eq + 1);
    if (from == NULL || to == NULL) {
        free(from);
        free(to);
        return icm_cli_oom();
    }
    cli->path_maps[cli->n_path_maps].from = from;
    cli->path_maps[cli->n_path_maps].to = to;
    cli->n_path_maps++;
    return ICM_EXIT_OK;
}

static void print_tool_help(FILE *out)
{
    size_t width = 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        size_t len = strlen(commands[i]->name);
        width = len > width ? len : width;
    }
    fputs(tool_help, out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-*s  %s\n", (int)width, commands[i]->name, commands[i]->summary);
    fputs(tool_help_tail, out);
}

/* Outcome of global option parsing: run a command, or stop with an exit code. */
typedef struct global_result {
    int cmd_index;  /* argv index of the command; 0 = none */
    int exit_code;  /* >= 0: stop now with this code */
} global_result;

/* A global option that takes a value (`--name VALUE` or `--name=VALUE`) at argv[*i]. Returns
 * 1 when it was one (stored; *i advanced past the value), 0 when argv[*i] is something else, or
 * -1 after reporting an error with the exit code in *exit_code. */
static int global_value_option(icm_cli *cli, int argc, char **argv, int *i, int *exit_code)
{
    const struct {
        const char *name;
        const char **slot;
    } stored[] = {
        {"--catalog", &cli->catalog},
        {"--config", &cli->config},
        {"--uri", &cli->uri},
        {"--warehouse", &cli->warehouse},
    };
    *exit_code = ICM_EXIT_USAGE;
    for (size_t k = 0; k < sizeof stored / sizeof stored[0]; k++) {
        int m = icm_cli_opt_value(argc, argv, i, stored[k].name, stored[k].slot);
        if (m != 0)
            return m;
    }
    const char *spec = NULL;
    int m = icm_cli_opt_value(argc, argv, i, "--path-map", &spec);
    if (m <= 0)
        return m;
    *exit_code = add_path_map(cli, spec);
    return *exit_code == ICM_EXIT_OK ? 1 : -1;
}

/* `--version`, as text or, when --json is given too (before or after it: a global option's
 * value may stand between them), as {"name": "icemaint", "version": "..."}. */
static int print_version(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        json = json || strcmp(argv[i], "--json") == 0;
    if (!json) {
        printf("icemaint %s\n", icm_version());
        return ICM_EXIT_OK;
    }
    json_t *doc = json_object();
    bool ok = doc != NULL;
    icm_cli_json_set(doc, "name", icm_cli_json_str("icemaint"), &ok);
    icm_cli_json_set(doc, "version", icm_cli_json_str(icm_version()), &ok);
    return icm_cli_json_print(doc, ok);
}

static global_result parse_global(icm_cli *cli, int argc, char **argv)
{
    global_result r = {0, -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == '\0') {
            r.cmd_index = i;
            return r;
        }
        if (strcmp(a, "--") == 0) {
            r.cmd_index = i + 1 < argc ? i + 1 : 0;
            if (r.cmd_index == 0)
                r.exit_code = icm_cli_usage(NULL, "no command given");
            return r;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_tool_help(stdout);
            r.exit_code = ICM_EXIT_OK;
            return r;
        }
        if (strcmp(a, "--version") == 0) {
            r.exit_code = print_version(argc, argv);
            return r;
        }
        if (strcmp(a, "--json") == 0) {
            cli->json = true;
            continue;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            cli->verbosity = cli->verbosity < 0 ? 1 : cli->verbosity + 1;
            continue;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            cli->verbosity = -1;
            continue;
        }
        int code = ICM_EXIT_OK;
        int m = global_value_option(cli, argc, argv, &i, &code);
        if (m <= 0) {
            r.exit_code = m < 0 ? code : icm_cli_usage(a, "unknown global option");
            return r;
        }
    }
    r.exit_code = icm_cli_usage(NULL, "no command given");
    return r;
}

static const icm_cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    }
    return NULL;
}

/* Run `cmd` with its arguments: `--help` anywhere prints its help; `--json` is taken out so
 * every command accepts it after the command name. Arguments after `--` are passed as is. */
static int run_command(icm_cli *cli, const icm_cli_command *cmd, int argc, char **argv)
{
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (args == NULL)
        return icm_cli_oom();
    int n = 0;
    bool after_dashdash = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && !after_dashdash) {
            if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                fputs(cmd->help, stdout);
                free(args);
                return ICM_EXIT_OK;
            }
            if (strcmp(a, "--json") == 0) {
                cli->json = true;
                continue;
            }
            if (strcmp(a, "--") == 0)
                after_dashdash = true;
        }
        args[n++] = argv[i];
    }
    int rc = cmd->run(cli, n, args);
    free(args);
    return rc;
}

static bool stdout_was_closed;

bool icm_cli_stdout_closed(void)
{
    return stdout_was_closed;
}

/* A standard descriptor the caller closed (`>&-`) would be the next file this process opens
 * (a journal, a catalog database, a metadata file being written), and the report would be
 * written into it. Put /dev/null there first, and remember that stdout was closed. */
static void guard_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        if (fd == 1)
            stdout_was_closed = true;
        int nul = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (nul >= 0 && nul != fd) {
            dup2(nul, fd);
            close(nul);
        }
    }
}

int main(int argc, char **argv)
{
    guard_standard_fds();
    icm_cli cli = {0};
    global_result g = parse_global(&cli, argc, argv);
    int rc;
    if (g.exit_code >= 0) {
        rc = g.exit_code;
    } else {
        const icm_cli_command *cmd = find_command(argv[g.cmd_index]);
        if (cmd == NULL) {
            /* `--json` may follow the command: an unknown one still gets its JSON error. */
            for (int i = g.cmd_index + 1; i < argc && !cli.json; i++)
                cli.json = strcmp(argv[i], "--json") == 0;
            rc = icm_cli_usage(argv[g.cmd_index], "unknown command");
        } else
            rc = run_command(&cli, cmd, argc - g.cmd_index, argv + g.cmd_index);
    }
    if (cli.json && rc != ICM_EXIT_OK && !icm_cli_json_printed() && last_error[0] != '\0')
        print_json_error(rc);
    cli_dispose(&cli);
    if (fflush(stdout) != 0 && rc == ICM_EXIT_OK)
        rc = icm_cli_error("stdout", "write failed: %s", strerror(errno));
    return rc;
}
