/*
 * cli/cmd_maintain.c: `icemaint maintain [NS ...] | --all`: for every table of the named
 * namespaces (nested ones included) or of the whole catalog, snapshot expiry by the table's own
 * properties, then the orphan sweep; one JSON line per table on stdout as each finishes, then a
 * summary line; optionally a Prometheus textfile (--metrics).
 *
 * Each step of each table runs as its own icemaint process: `expire-snapshots TABLE --json`
 * (no --older-than, no --retain-last: history.expire.* and the refs' own retention decide, as
 * they do for a single table), then `remove-orphan-files TABLE --json`. So maintain decides
 * nothing a single-table run would not decide the same way (the rules, the safety checks, the
 * lease, the guard rails and the journal are those commands' own), and a table that fails,
 * however it fails (a corrupt metadata file, a refusal, even a crash), cannot stop or disturb
 * the others: no state is shared but the catalog's. --parallel N runs N tables at once; the
 * parent only schedules (it is single-threaded and never touches a table's files).
 *
 * Before a table's steps the parent loads it once (a fresh handle per table): the metadata
 * location before, the retention properties for the report, and gc.enabled. A table whose
 * gc.enabled is not `true` is skipped with that reason (expiry and the sweep would both refuse
 * to delete; the library still checks it itself in each step). The sweep runs only after a
 * successful expiry: after a failed or unknown commit, the table is left for a human.
 * Exit code: the worst of the tables' (most urgent first: 4 commit outcome unknown, 1 error,
 * 5 refused, 3 commit conflict), 0 when every table was maintained or skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog_ref.h"
#include "cli.h"
#include "icemaint/expire.h"
#include "timeparse.h"

static const char maintain_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] maintain [NS ...] | --all [OPTIONS]\n"
    "\n"
    "Maintain every table of the namespaces NS (dotted; nested namespaces included) or, with\n"
    "--all, of the whole catalog: snapshot expiry by each table's own properties\n"
    "(history.expire.max-snapshot-age-ms, history.expire.min-snapshots-to-keep,\n"
    "history.expire.max-ref-age-ms and the refs' own retention: what expire-snapshots does\n"
    "without --older-than and --retain-last), then the orphan sweep (remove-orphan-files) with\n"
    "the cutoff of --older-than. Each step of each table is a separate icemaint process, so one\n"
    "table's failure never stops or disturbs the others. The sweep runs only after the table's\n"
    "expiry succeeded. A table whose gc.enabled is not true is skipped (nothing is expired or\n"
    "deleted) and its line says so. Each table is maintained once, in name order.\n"
    "\n"
    "Options:\n"
    "  --all                       every namespace of the catalog, recursively\n"
    "  --parallel N                maintain N tables at once (1..64; default 1)\n"
    "  --older-than TIME           the sweep's cutoff (default 3d; as remove-orphan-files),\n"
    "                              fixed once for every table\n"
    "  --force                     accept a sweep cutoff less than 24 hours ago\n"
    "  --settle DURATION           the sweep's settle time (as remove-orphan-files)\n"
    "  --dry-run                   decide and plan only: commit nothing, delete nothing\n"
    "  --max-delete, --max-delete-bytes N|B  bound each step of each table (refused, exit 5,\n"
    "                              before anything is deleted: as the single-table commands)\n"
    "  --max-delete-percent P      bound each table's sweep\n"
    "  --exclude-location URI      leave this folder alone (repeatable): passed to the\n"
    "                              sweep of each table whose location is at, above or\n"
    "                              below it; one that concerns no table is refused (exit 5)\n"
    "  --log-out DIR               journal each step in DIR/<ns>.<table>.<command>.jsonl\n"
    "                              (the folder must exist; `/`, `%`, `~` and a dot in the\n"
    "                              table's name %-escaped; a name too long for a file is cut\n"
    "                              and ends in ~HASH; the line's `journals` names the files)\n"
    "  --metrics FILE              write Prometheus text format to FILE at the end (a temporary\n"
    "                              file beside it, renamed: for node_exporter's textfile\n"
    "                              collector); an existing FILE must be an earlier metrics\n"
    "                              file (else refused, exit 5), and neither FILE nor the\n"
    "                              --log-out DIR may lie inside a table's location (checked\n"
    "                              for every table before the first is maintained)\n"
    "  -h, --help                  print this help\n"
    "\n"
    "Each step is given its table as --table-id [\"level\",...,\"name\"] (through the catalog\n"
    "only). Output: one JSON line per table on stdout as it finishes: table, namespace, table_id,\n"
    "metadata_location_before and _after, policy (the retention properties as set, the expiry\n"
    "cutoff and retain_last applied, the sweep cutoff), expire and sweep (counts and bytes by\n"
    "kind: deleted, or planned with --dry-run), duration_ms, outcome (ok, failed with an error\n"
    "{step, code, message, exit_code}, skipped with a reason); then {\"summary\": ...}.\n"
    "Each step's own errors and warnings go to stderr as they would for a single table,\n"
    "after a line \"icemaint maintain: NS.TABLE, STEP:\".\n"
    "\n"
    "Exit codes: the worst of the tables': 4 (a commit outcome unknown) before 1 (error)\n"
    "before 5 (refused) before 3 (commit conflict); 0 when every table was maintained or\n"
    "skipped; 1 or 2 also when the catalog cannot be listed or the command line is wrong.\n";

#define MAX_PARALLEL 64

typedef struct maintain_args {
    const char **namespaces;
    size_t n_namespaces;
    bool all, dry_run, force;
    int parallel;
    const char *older_than, *settle, *log_dir, *metrics;
    char **excludes; /* --exclude-location values, absolute (owned) */
    size_t n_excludes;
    icm_cli_limits_args limits;
    char older_than_ms[32]; /* the sweep cutoff, fixed once (default 3d): epoch ms as text */
} maintain_args;

/* Take one --exclude-location value, made absolute as remove-orphan-files makes it (a
 * relative local one names a place below the working directory). */
static int add_exclude(maintain_args *a, const char *value)
{
    if (value[0] == '\0')
        return icm_cli_usage(NULL, "--exclude-location is empty");
    char *canon = NULL;
    if (icm_location_canonical(&canon, value) != 0) {
        char line[1024];
        icm_error_format(line, sizeof line, icm_error_last());
        return icm_cli_error(value, "--exclude-location: %s", line);
    }
    char *own = strdup(canon);
    icm_free(canon);
    char **grown = own != NULL ? realloc(a->excludes, (a->n_excludes + 1) * sizeof *grown)
                               : NULL;
    if (grown == NULL) {
        free(own);
        return icm_cli_oom();
    }
    a->excludes = grown;
    a->excludes[a->n_excludes++] = own;
    return ICM_EXIT_OK;
}

static void excludes_free(maintain_args *a)
{
    for (size_t i = 0; i < a->n_excludes; i++)
        free(a->excludes[i]);
    free(a->excludes);
}

/* A location's identity without trailing slashes (`s3://b/t/` is the table `s3://b/t`), new
 * string or NULL. */
static char *bare_identity(const char *location)
{
    char *id = NULL;
    if (icm_location_identity(&id, location) != 0)
        return NULL;
    char *own = strdup(id);
    icm_free(id);
    if (own == NULL)
        return NULL;
    size_t n = strlen(own);
    while (n > 1 && own[n - 1] == '/' && own[n - 2] != '/' && own[n - 2] != ':')
        own[--n] = '\0';
    return own;
}

/* Whether the exclusion concerns the table whose location has the bare identity
 * `location_id`: it lies below that location, is it, or holds it (then the sweep leaves the
 * whole table alone). By spelling: check_outputs refuses, before any table is maintained, an
 * exclusion that concerns no table (one spelled through a link, say), rather than drop it. */
static bool exclusion_applies(const char *exclude, const char *location_id)
{
    char *id = location_id != NULL ? bare_identity(exclude) : NULL;
    if (id == NULL)
        return false;
    size_t n = strlen(location_id), m = strlen(id);
    bool applies = (strncmp(id, location_id, n) == 0 && (id[n] == '/' || id[n] == '\0')) ||
                   (strncmp(location_id, id, m) == 0 && location_id[m] == '/');
    free(id);
    return applies;
}

typedef enum outcome { OUTCOME_OK = 0, OUTCOME_SKIPPED = 1, OUTCOME_FAILED = 2 } outcome;
static const char *const outcome_names[] = {"ok", "skipped", "failed"};

typedef enum step { STEP_LOAD = 0, STEP_EXPIRE = 1, STEP_SWEEP = 2 } step;
static const char *const step_names[] = {"load", "expire-snapshots", "remove-orphan-files"};

/* A growing byte buffer for a child's stdout or stderr. */
typedef struct buf {
    char *data;
    size_t len, cap;
    bool overflow; /* stdout: more than REPORT_MAX came; the rest was dropped */
} buf;

/* A step's report is of constant size (--counts-only) but for the expired snapshot ids: 16 MiB
 * is some 800,000 of them. A larger stdout is dropped and the step failed ("no report"): the
 * parent's memory stays bounded whatever a child prints. */
#define REPORT_MAX ((size_t)16 << 20)
/* A step's stderr is held (so that a table's messages stay together) up to this much; beyond,
 * its whole lines are passed on at once (one warning per kept file can be millions). */
#define STDERR_HOLD ((size_t)64 << 10)
/* The longest last error line kept for the table's line once its stderr was passed on. */
#define ERROR_LINE_MAX ((size_t)4 << 10)

/* One table's run. */
typedef struct job {
    char *ns;       /* namespace, dotted as the catalog lists it */
    char *table;    /* the table's own name (it may contain dots) */
    char *name;     /* ns.table, for people: two tables may share it (("ns","a.b"), ("ns.a","b")) */
    char *id;       /* --table-id for the steps: ["level",...,"table"], unambiguous */
    char *ns_split; /* ns with each '.' a '\0': the levels */
    const char **levels;
    size_t n_levels;
    char *journal[3]; /* the steps' --log-out files (expire, sweep), or NULL */
    char *md_before, *md_after;
    char *location_id; /* icm_location_identity of the table's location */
    char *prop_age, *prop_min, *prop_ref_age, *prop_gc; /* retention properties as set */
    step step;
    pid_t pid;      /* running step's process; 0 when none */
    int fd_out, fd_err;
    buf out, err;
    json_t *expire, *sweep; /* the steps' reports, until the table's line is written */
    /* what the summary and the metrics need of them, kept after the line */
    int64_t expired, expire_files, expire_bytes, sweep_files, sweep_bytes;
    bool reported;          /* its line was written */
    outcome outcome;
    int exit_code;
    char *reason;           /* skipped */
    char *err_code, *err_message;
    char *last_error; /* the last "icemaint: " line of the stderr already passed on */
    bool err_headed;  /* this step's stderr has been introduced by its table and step */
    bool ran[3];      /* the steps that were started (their journals exist only then) */
    int64_t started_ms, duration_ms;
} job;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *dup_or_null(const char *s, bool *ok)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *ok = false;
    return d;
}

/* How urgent a failing exit code is: the worst one is the run's exit code. A commit of
 * unknown outcome needs a human before anything else touches the table; an error left a table
 * unmaintained; a refusal is a safety check doing its job; a conflict clears by itself. */
static int severity(int code)
{
    switch (code) {
    case ICM_EXIT_OK:
        return 0;
    case ICM_EXIT_COMMIT_FAILED:
        return 1;
    case ICM_EXIT_REFUSED:
        return 2;
    case ICM_EXIT_COMMIT_UNKNOWN:
        return 4;
    default:
        return 3;
    }
}

static int worse(int a, int b)
{
    return severity(b) > severity(a) ? b : a;
}

/* ---- parsing ---- */

static int parse_args(int argc, char **argv, maintain_args *a)
{
    a->parallel = 1;
    a->namespaces = calloc((size_t)argc, sizeof *a->namespaces);
    if (a->namespaces == NULL)
        return icm_cli_oom();
    const char *parallel = NULL;
    bool dashdash = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!dashdash && arg[0] == '-' && arg[1] != '\0') {
            if (strcmp(arg, "--") == 0) {
                dashdash = true;
                continue;
            }
            if (strcmp(arg, "--all") == 0) {
                a->all = true;
                continue;
            }
            if (strcmp(arg, "--dry-run") == 0) {
                a->dry_run = true;
                continue;
            }
            if (strcmp(arg, "--force") == 0) {
                a->force = true;
                continue;
            }
            const char *exclude = NULL;
            int x = icm_cli_opt_value(argc, argv, &i, "--exclude-location", &exclude);
            if (x < 0)
                return ICM_EXIT_USAGE;
            if (x > 0) {
                int xrc = add_exclude(a, exclude);
                if (xrc != ICM_EXIT_OK)
                    return xrc;
                continue;
            }
            static const char *const names[] = {"--parallel", "--older-than", "--settle",
                                                "--log-out", "--metrics"};
            const char **slots[] = {&parallel, &a->older_than, &a->settle, &a->log_dir,
                                    &a->metrics};
            int m = 0;
            for (size_t k = 0; m == 0 && k < sizeof names / sizeof names[0]; k++)
                m = icm_cli_opt_value(argc, argv, &i, names[k], slots[k]);
            if (m == 0)
                m = icm_cli_limits_take(argc, argv, &i, &a->limits);
            if (m < 0)
                return ICM_EXIT_USAGE;
            if (m == 0)
                return icm_cli_usage(arg, "unknown option for 'maintain'");
            continue;
        }
        if (arg[0] == '\0')
            return icm_cli_usage(NULL, "NS is empty");
        a->namespaces[a->n_namespaces++] = arg;
    }
    if (a->all == (a->n_namespaces > 0))
        return icm_cli_usage("maintain", a->all ? "give NS or --all, not both"
                                                : "missing argument: NS ... or --all");
    if (parallel != NULL) {
        char *end = NULL;
        errno = 0;
        long n = strtol(parallel, &end, 10);
        if (errno != 0 || end == parallel || *end != '\0' || n < 1 || n > MAX_PARALLEL)
            return icm_cli_usage(parallel, "--parallel takes a whole number from 1 to %d",
                                 MAX_PARALLEL);
        a->parallel = (int)n;
    }
    icm_delete_limits limits;
    int rc = icm_cli_limits_build(&a->limits, &limits);
    if (rc != ICM_EXIT_OK)
        return rc;
    /* The sweep's cutoff, fixed once here (remove-orphan-files' own default, 3d, included)
     * and given to every table's sweep as an instant: every table uses the same one. */
    int64_t cutoff = 0;
    const char *older_than = a->older_than != NULL ? a->older_than : "3d";
    const char *why = NULL;
    if (icm_cli_parse_time(older_than, now_ms(), &cutoff, &why) != 0)
        return icm_cli_usage(older_than, "--older-than: %s", why ? why : "bad time");
    snprintf(a->older_than_ms, sizeof a->older_than_ms, "%" PRId64, cutoff);
    if (a->settle != NULL) {
        int64_t ms;
        if (icm_cli_parse_duration(a->settle, &ms, &why) != 0)
            return icm_cli_usage(a->settle, "--settle: %s", why ? why : "bad duration");
    }
    if (a->metrics != NULL) { /* found out now, not after every table was maintained */
        char *dir = icm_cli_dir_of(a->metrics);
        if (dir == NULL)
            return icm_cli_oom();
        int ok = access(dir, W_OK | X_OK);
        free(dir);
        if (ok != 0)
            return icm_cli_error(a->metrics, "--metrics: its folder is not writable (%s)",
                                 strerror(errno));
        if ((rc = icm_cli_metrics_check_existing(a->metrics)) != ICM_EXIT_OK)
            return rc;
    }
    if (a->log_dir != NULL) {
        struct stat st;
        if (stat(a->log_dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return icm_cli_error(a->log_dir, "--log-out: not an existing folder");
    }
    return ICM_EXIT_OK;
}

/* ---- the tables ---- */

typedef struct job_list {
    job *jobs;
    size_t len, cap;
    icm_catalog *cat;
    const char *ns; /* namespace being listed */
    bool oom;
} job_list;

static int add_table(const char *table, void *payload)
{
    job_list *l = payload;
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        job *jobs = realloc(l->jobs, cap * sizeof *jobs);
        if (jobs == NULL) {
            l->oom = true;
            return ICM_ENOMEM;
        }
        l->jobs = jobs;
        l->cap = cap;
    }
    job *j = &l->jobs[l->len];
    memset(j, 0, sizeof *j);
    j->fd_out = j->fd_err = -1;
    size_t n = strlen(l->ns) + 1 + strlen(table) + 1;
    j->ns = strdup(l->ns);
    j->name = malloc(n);
    if (j->ns == NULL || j->name == NULL) {
        free(j->ns);
        free(j->name);
        l->oom = true;
        return ICM_ENOMEM;
    }
    snprintf(j->name, n, "%s.%s", l->ns, table);
    l->len++; /* freed with the list from here */
    j->table = strdup(table);
    j->ns_split = strdup(l->ns);
    j->levels = calloc(strlen(l->ns) + 1, sizeof *j->levels);
    json_t *id = json_array();
    bool ok = j->table != NULL && j->ns_split != NULL && j->levels != NULL && id != NULL;
    /* the levels as the catalog's own listing splits a dotted namespace (list_tables) */
    for (char *p = j->ns_split; ok; p++) {
        j->levels[j->n_levels++] = p;
        p = strchr(p, '.');
        if (p == NULL)
            break;
        *p = '\0';
    }
    for (size_t k = 0; ok && k < j->n_levels; k++)
        ok = json_array_append_new(id, json_string(j->levels[k])) == 0;
    ok = ok && json_array_append_new(id, json_string(table)) == 0;
    j->id = ok ? json_dumps(id, JSON_COMPACT) : NULL;
    json_decref(id);
    if (j->id == NULL) {
        l->oom = true;
        return ICM_ENOMEM;
    }
    return 0;
}

/* The tables of `ns` (NULL: none, only its children) and of every namespace below it, depth
 * first, each namespace's tables in the catalog's (sorted) order. */
static int collect_tables(icm_cli *cli, job_list *jobs, const char *ns, int depth)
{
    if (depth > 64)
        return icm_cli_error(ns, "namespaces nest deeper than 64 levels");
    if (ns != NULL) {
        jobs->ns = ns;
        int lrc = icm_catalog_list_tables(jobs->cat, ns, add_table, jobs);
        if (jobs->oom)
            return icm_cli_oom();
        if (lrc != 0)
            return icm_cli_fail(cli, lrc);
    }
    icm_cli_names children = {NULL, 0, 0, false};
    int lrc = icm_catalog_list_namespaces(jobs->cat, ns, icm_cli_names_add, &children);
    int rc = ICM_EXIT_OK;
    if (children.oom)
        rc = icm_cli_oom();
    else if (lrc != 0)
        rc = icm_cli_fail(cli, lrc);
    for (size_t i = 0; rc == ICM_EXIT_OK && i < children.len; i++)
        rc = collect_tables(cli, jobs, children.names[i], depth + 1);
    icm_cli_names_free(&children);
    return rc;
}

/* By namespace, then table name: the key a table is known by in the catalog (its dotted
 * name is not one: ("ns","a.b") and ("ns.a","b") are both ns.a.b). */
static int job_cmp(const void *x, const void *y)
{
    const job *a = x, *b = y;
    int c = strcmp(a->ns, b->ns);
    return c != 0 ? c : strcmp(a->table, b->table);
}

static void job_free(job *j);

/* Sorted by name, each table once: NS arguments may overlap (`ns ns.sub`), and two runs on one
 * table at once would only have the second refused by the lease. */
static void jobs_unique(job_list *l)
{
    if (l->len == 0)
        return;
    qsort(l->jobs, l->len, sizeof *l->jobs, job_cmp);
    size_t kept = 1;
    for (size_t i = 1; i < l->len; i++) {
        if (job_cmp(&l->jobs[i], &l->jobs[kept - 1]) == 0)
            job_free(&l->jobs[i]);
        else
            l->jobs[kept++] = l->jobs[i];
    }
    l->len = kept;
}

static void job_free(job *j)
{
    free(j->ns);
    free(j->table);
    free(j->name);
    free(j->id);
    free(j->ns_split);
    free(j->levels);
    for (size_t k = 0; k < 3; k++)
        free(j->journal[k]);
    free(j->md_before);
    free(j->location_id);
    free(j->md_after);
    free(j->prop_age);
    free(j->prop_min);
    free(j->prop_ref_age);
    free(j->prop_gc);
    free(j->out.data);
    free(j->err.data);
    json_decref(j->expire);
    json_decref(j->sweep);
    free(j->reason);
    free(j->err_code);
    free(j->err_message);
    free(j->last_error);
}

/* ---- the steps' processes ---- */

typedef struct argv_buf {
    char **v;
    size_t len, cap;
    bool oom;
} argv_buf;

static void push(argv_buf *a, const char *s)
{
    if (a->oom)
        return;
    if (a->len + 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        char **v = realloc(a->v, cap * sizeof *v);
        if (v == NULL) {
            a->oom = true;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    if ((a->v[a->len] = strdup(s)) == NULL) {
        a->oom = true;
        return;
    }
    a->v[++a->len] = NULL;
}

static void argv_free(argv_buf *a)
{
    for (size_t i = 0; i < a->len; i++)
        free(a->v[i]);
    free(a->v);
}

/* `text` into b with `%`, `/`, `~` and each byte of `also` %-escaped. */
static size_t put_escaped(char *b, const char *text, const char *also)
{
    size_t k = 0;
    for (const char *c = text; *c; c++) {
        if (*c == '/' || *c == '%' || *c == '~' || strchr(also, *c) != NULL) {
            snprintf(b + k, 4, "%%%02X", (unsigned char)*c);
            k += 3;
        } else {
            b[k++] = *c;
        }
    }
    b[k] = '\0';
    return k;
}

/* The longest `.<command>.jsonl` suffix, and the room left for the table in a file name. */
#define JOURNAL_SUFFIX_MAX (sizeof ".remove-orphan-files.jsonl" - 1)
#define JOURNAL_HASH_LEN 17 /* "~" and 16 hex digits */
#define JOURNAL_NAME_MAX 255 /* NAME_MAX of the common file systems */

/* DIR/<table>.<command>.jsonl, the table as one file-name segment that no other table has:
 * the namespace with `%`, `/` and `~` %-escaped, a dot, then the table name with `.` escaped
 * too (so the last plain dot separates them: ("ns","a.b") is ns.a%2Eb, ("ns.a","b") ns.a.b).
 * A segment too long for a file name (NAME_MAX) is cut and ends in `~` and the FNV-1a hash
 * of the whole segment (a plain segment never holds `~`, so the two forms cannot meet). */
static char *journal_path(const char *dir, const job *j, const char *command)
{
    size_t seg_cap = 3 * (strlen(j->ns) + strlen(j->table)) + 2;
    char *seg = malloc(seg_cap);
    if (seg == NULL)
        return NULL;
    size_t k = put_escaped(seg, j->ns, "");
    seg[k++] = '.';
    k += put_escaped(seg + k, j->table, ".");
    size_t room = JOURNAL_NAME_MAX - JOURNAL_SUFFIX_MAX;
    if (k > room) {
        uint64_t h = 14695981039346656037ULL;
        for (size_t i = 0; i < k; i++)
            h = (h ^ (unsigned char)seg[i]) * 1099511628211ULL;
        k = room - JOURNAL_HASH_LEN;
        while (k > 0 && ((unsigned char)seg[k] & 0xC0) == 0x80)
            k--; /* not inside a UTF-8 sequence */
        snprintf(seg + k, seg_cap - k, "~%016" PRIx64, h);
    }
    size_t n = strlen(dir) + strlen(seg) + strlen(command) + 16;
    char *p = malloc(n);
    if (p != NULL)
        snprintf(p, n, "%s/%s.%s.jsonl", dir, seg, command);
    free(seg);
    return p;
}

/* The command line of a step: the global options this run was given, then the command. */
static bool step_argv(const icm_cli *cli, const maintain_args *a, const job *j, step s,
                      argv_buf *out)
{
    push(out, "icemaint");
    for (int v = cli->verbosity; v > 0; v--)
        push(out, "-v");
    if (cli->verbosity < 0)
        push(out, "-q");
    const char *const globals[][2] = {{"--catalog", cli->catalog},
                                      {"--config", cli->config},
                                      {"--uri", cli->uri},
                                      {"--warehouse", cli->warehouse}};
    for (size_t k = 0; k < 4; k++) {
        if (globals[k][1] != NULL) {
            push(out, globals[k][0]);
            push(out, globals[k][1]);
        }
    }
    for (size_t k = 0; k < cli->n_path_maps; k++) {
        size_t n = strlen(cli->path_maps[k].from) + strlen(cli->path_maps[k].to) + 2;
        char *spec = malloc(n);
        if (spec == NULL)
            return false;
        snprintf(spec, n, "%s=%s", cli->path_maps[k].from, cli->path_maps[k].to);
        push(out, "--path-map");
        push(out, spec);
        free(spec);
    }
    push(out, step_names[s]);
    push(out, "--json");
    push(out, "--counts-only"); /* a report of constant size, whatever the table's file count */
    if (a->dry_run)
        push(out, "--dry-run");
    if (a->limits.files != NULL) {
        push(out, "--max-delete");
        push(out, a->limits.files);
    }
    if (a->limits.bytes != NULL) {
        push(out, "--max-delete-bytes");
        push(out, a->limits.bytes);
    }
    if (s == STEP_SWEEP) {
        if (a->limits.percent != NULL) {
            push(out, "--max-delete-percent");
            push(out, a->limits.percent);
        }
        push(out, "--older-than");
        push(out, a->older_than_ms);
        if (a->settle != NULL) {
            push(out, "--settle");
            push(out, a->settle);
        }
        if (a->force)
            push(out, "--force");
        /* the exclusions inside this table's location (any other would be refused by its
         * sweep as leaving nothing of it alone, or as outside it) */
        for (size_t k = 0; k < a->n_excludes; k++)
            if (exclusion_applies(a->excludes[k], j->location_id)) {
                push(out, "--exclude-location");
                push(out, a->excludes[k]);
            }
    }
    if (j->journal[s] != NULL) {
        push(out, "--log-out");
        push(out, j->journal[s]);
    }
    /* by its levels and name, through the catalog only: the dotted name would be re-read as
     * a TABLE argument (a folder of that name in the working directory, a namespace with
     * `/` or `:`, a name with dots would each make it another table) */
    push(out, "--table-id");
    push(out, j->id);
    return !out->oom;
}

/* Start step `s` of `j`: a child process with stdout and stderr on pipes. Returns false (with
 * j's error set) when it could not be started. */
static bool step_start(const icm_cli *cli, const maintain_args *a, const char *exe, job *j,
                       step s)
{
    j->step = s;
    j->ran[s] = true;
    j->err_headed = false;
    j->out.len = j->err.len = 0;
    j->out.overflow = j->err.overflow = false;
    free(j->last_error);
    j->last_error = NULL;
    argv_buf av = {NULL, 0, 0, false};
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    const char *why = NULL;
    if (!step_argv(cli, a, j, s, &av))
        why = "out of memory";
    else if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        why = strerror(errno);
    pid_t pid = -1;
    if (why == NULL) {
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid == 0) { /* only async-signal-safe calls until exec */
            if (dup2(out[1], STDOUT_FILENO) < 0 || dup2(err[1], STDERR_FILENO) < 0)
                _exit(127);
            execv(exe, av.v);
            _exit(127);
        }
        if (pid < 0)
            why = strerror(errno);
    }
    argv_free(&av);
    if (out[1] >= 0)
        close(out[1]);
    if (err[1] >= 0)
        close(err[1]);
    if (why != NULL) {
        if (out[0] >= 0)
            close(out[0]);
        if (err[0] >= 0)
            close(err[0]);
        j->outcome = OUTCOME_FAILED;
        j->exit_code = ICM_EXIT_ERROR;
        j->err_code = strdup("ICM_EIO");
        size_t n = strlen(why) + 64;
        j->err_message = malloc(n);
        if (j->err_message != NULL)
            snprintf(j->err_message, n, "cannot start %s: %s", step_names[s], why);
        return false;
    }
    j->pid = pid;
    j->fd_out = out[0];
    j->fd_err = err[0];
    return true;
}

/* Read what is there on fd into b (at most `max` bytes held: the rest is dropped and
 * b->overflow set); false at end of file (or a read error). */
static bool drain(int fd, buf *b, size_t max, bool *oom)
{
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0)
        return false;
    if (b->len + (size_t)n > max) {
        b->overflow = true;
        return true; /* keep reading (and dropping), so the child can finish */
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (d == NULL) {
            *oom = true;
            return true; /* keep reading (and dropping), so the child can finish */
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, chunk, (size_t)n);
    b->len += (size_t)n;
    b->data[b->len] = '\0';
    return true;
}

static const char error_prefix[] = "icemaint: ";

/* Pass on `n` bytes of the step's stderr, after a line naming the table and the step the first
 * time (with --parallel, steps of several tables write in turns; their own messages name a
 * file or a key, not the catalog's name of the table). */
static void pass_stderr(job *j, const char *data, size_t n)
{
    if (!j->err_headed) {
        char *name = icm_cli_escape_text(j->name);
        fprintf(stderr, "icemaint maintain: %s, %s:\n", name != NULL ? name : "(table)",
                step_names[j->step]);
        free(name);
        j->err_headed = true;
    }
    fwrite(data, 1, n, stderr);
}

/* The step's stderr held more than STDERR_HOLD: pass its whole lines on now, remembering the
 * last error line among them (the table's line quotes it when the step fails). */
static void spill_stderr(job *j)
{
    buf *b = &j->err;
    if (b->len <= STDERR_HOLD)
        return;
    char *end = memrchr(b->data, '\n', b->len);
    size_t n = end != NULL ? (size_t)(end - b->data) + 1 : b->len;
    if (b->len - n > STDERR_HOLD / 2) { /* a huge line: cut it rather than hold it */
        n = b->len;
        end = NULL;
    }
    for (const char *p = b->data; p < b->data + n;) {
        const char *nl = memchr(p, '\n', (size_t)(b->data + n - p));
        size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(b->data + n - p);
        if (len >= sizeof error_prefix - 1 &&
            strncmp(p, error_prefix, sizeof error_prefix - 1) == 0) {
            size_t keep = len - (sizeof error_prefix - 1);
            char *line = strndup(p + sizeof error_prefix - 1,
                                 keep < ERROR_LINE_MAX ? keep : ERROR_LINE_MAX);
            if (line != NULL) {
                free(j->last_error);
                j->last_error = line;
            }
        }
        p += len + 1;
    }
    pass_stderr(j, b->data, n);
    if (end == NULL)
        fputc('\n', stderr);
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

/* The report a step printed. A name that is not UTF-8 is written `\udcXY` (README "Output"),
 * which jansson refuses; the counts are what is read here, so each such escape is read as
 * U+FFFD (names are never taken from these reports: the metadata locations come from the
 * catalog). */
static json_t *parse_report(buf *b)
{
    if (b->data == NULL)
        return NULL;
    size_t bs = 0; /* backslashes just before */
    for (size_t i = 0; i + 6 <= b->len; i++) {
        char c = b->data[i];
        if (c == '\\' && bs % 2 == 0 && b->data[i + 1] == 'u' &&
            strncasecmp(b->data + i + 2, "dc", 2) == 0)
            memcpy(b->data + i + 2, "fffd", 4);
        bs = c == '\\' ? bs + 1 : 0;
    }
    return json_loadb(b->data, b->len, 0, NULL);
}

/* The step's last error line on stderr ("icemaint: <message>"), without the prefix, as a new
 * string; NULL when it printed none. */
static char *last_error_line(const buf *err, const char *spilled)
{
    static const char prefix[] = "icemaint: ";
    const char *found = NULL;
    for (const char *p = err->data; p != NULL && p < err->data + err->len;) {
        if (strncmp(p, prefix, sizeof prefix - 1) == 0)
            found = p + sizeof prefix - 1;
        const char *nl = memchr(p, '\n', (size_t)(err->data + err->len - p));
        p = nl != NULL ? nl + 1 : NULL;
    }
    if (found == NULL)
        return spilled != NULL ? strdup(spilled) : NULL;
    const char *nl = memchr(found, '\n', (size_t)(err->data + err->len - found));
    return strndup(found, nl != NULL ? (size_t)(nl - found) : strlen(found));
}

/* A step ended with status `status`: record it. Returns true when the table is finished. */
static bool step_done(job *j, int status)
{
    json_t *doc = j->out.overflow ? NULL : parse_report(&j->out);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : ICM_EXIT_ERROR;
    bool report = json_is_object(doc) && json_object_get(doc, "error") == NULL;
    if (report) { /* kept when the step failed after it acted too: what it deleted is said */
        if (j->step == STEP_EXPIRE)
            j->expire = doc;
        else
            j->sweep = doc;
        if (code == ICM_EXIT_OK)
            return j->step == STEP_SWEEP;
    }
    j->outcome = OUTCOME_FAILED;
    j->exit_code = code == ICM_EXIT_OK ? ICM_EXIT_ERROR : code;
    json_t *err = report ? NULL : json_object_get(doc, "error");
    const char *msg = json_string_value(json_object_get(err, "message"));
    const char *ecode = json_string_value(json_object_get(err, "code"));
    j->err_message = msg != NULL ? strdup(msg) : last_error_line(&j->err, j->last_error);
    j->err_code = ecode != NULL ? strdup(ecode) : NULL;
    if (j->err_message == NULL && j->out.overflow) {
        char text[128];
        snprintf(text, sizeof text, "%s printed a report over %zu MiB: not read",
                 step_names[j->step], REPORT_MAX >> 20);
        j->err_message = strdup(text);
    }
    if (j->err_message == NULL) {
        char text[128];
        if (WIFSIGNALED(status))
            snprintf(text, sizeof text, "%s ended by signal %d", step_names[j->step],
                     WTERMSIG(status));
        else
            snprintf(text, sizeof text, "%s exited with %d without a report",
                     step_names[j->step], code);
        j->err_message = strdup(text);
    }
    if (!report)
        json_decref(doc);
    return true;
}

/* ---- the table's line ---- */

static int64_t member_int(json_t *report, const char *key)
{
    return json_integer_value(json_object_get(report, key));
}

static json_t *str_or_null(const char *s)
{
    return icm_cli_json_str(s);
}

static json_t *copy_member(json_t *report, const char *key)
{
    json_t *v = json_object_get(report, key);
    return v != NULL ? json_deep_copy(v) : json_null();
}

/* The part of a step's report the line carries. */
static json_t *step_json(json_t *report, bool expire, bool *ok)
{
    if (report == NULL)
        return json_null();
    json_t *o = json_object();
    if (o == NULL) {
        *ok = false;
        return NULL;
    }
    if (expire) {
        json_t *ids = json_object_get(report, "expired");
        icm_cli_json_set(o, "expired_snapshots",
                         icm_cli_json_int((int64_t)json_array_size(ids)), ok);
        icm_cli_json_set(o, "expired", copy_member(report, "expired"), ok);
        icm_cli_json_set(o, "removed_refs", copy_member(report, "removed_refs"), ok);
    }
    icm_cli_json_set(o, "counts", copy_member(report, "counts"), ok);
    icm_cli_json_set(o, "bytes", copy_member(report, "bytes"), ok);
    icm_cli_json_set(o, "total", copy_member(report, expire ? "total_deleted" : "total"), ok);
    icm_cli_json_set(o, "total_bytes", copy_member(report, "total_bytes"), ok);
    icm_cli_json_set(o, "already_gone", copy_member(report, "already_gone"), ok);
    if (!expire)
        icm_cli_json_set(o, "listed", copy_member(report, "listed"), ok);
    return o;
}

static json_t *job_json(const job *j, bool dry_run, bool *ok)
{
    json_t *doc = json_object(), *policy = json_object(), *props = json_object();
    if (doc == NULL || policy == NULL || props == NULL) {
        json_decref(doc);
        json_decref(policy);
        json_decref(props);
        *ok = false;
        return NULL;
    }
    icm_cli_json_set(doc, "table", icm_cli_json_str(j->name), ok);
    icm_cli_json_set(doc, "namespace", icm_cli_json_str(j->ns), ok);
    icm_cli_json_set(doc, "table_id", json_loads(j->id, 0, NULL), ok);
    if (j->journal[STEP_EXPIRE] != NULL && (j->ran[STEP_EXPIRE] || j->ran[STEP_SWEEP])) {
        /* only the steps that ran: a skipped table, or a sweep after a failed expiry, writes
         * no journal */
        json_t *journals = json_object();
        if (journals == NULL)
            *ok = false;
        for (step s = STEP_EXPIRE; s <= STEP_SWEEP; s++)
            if (j->ran[s])
                icm_cli_json_set(journals, step_names[s], icm_cli_json_str(j->journal[s]), ok);
        icm_cli_json_set(doc, "journals", journals, ok);
    }
    icm_cli_json_set(doc, "outcome", icm_cli_json_str(outcome_names[j->outcome]), ok);
    icm_cli_json_set(doc, "exit_code", icm_cli_json_int(j->exit_code), ok);
    icm_cli_json_set(doc, "dry_run", json_boolean(dry_run), ok);
    icm_cli_json_set(doc, "metadata_location_before", str_or_null(j->md_before), ok);
    icm_cli_json_set(doc, "metadata_location_after", str_or_null(j->md_after), ok);
    icm_cli_json_set(props, "history.expire.max-snapshot-age-ms", str_or_null(j->prop_age), ok);
    icm_cli_json_set(props, "history.expire.min-snapshots-to-keep", str_or_null(j->prop_min),
                     ok);
    icm_cli_json_set(props, "history.expire.max-ref-age-ms", str_or_null(j->prop_ref_age), ok);
    icm_cli_json_set(props, "gc.enabled", str_or_null(j->prop_gc), ok);
    icm_cli_json_set(policy, "properties", props, ok);
    json_t *cut = j->expire != NULL ? copy_member(j->expire, "older_than_ms") : json_null();
    icm_cli_json_set(policy, "expire_older_than_ms", cut, ok);
    json_t *keep = j->expire != NULL ? copy_member(j->expire, "retain_last") : json_null();
    icm_cli_json_set(policy, "retain_last", keep, ok);
    json_t *sweep_cut = j->sweep != NULL ? copy_member(j->sweep, "older_than_ms") : json_null();
    icm_cli_json_set(policy, "sweep_older_than_ms", sweep_cut, ok);
    icm_cli_json_set(doc, "policy", policy, ok);
    icm_cli_json_set(doc, "expire", step_json(j->expire, true, ok), ok);
    icm_cli_json_set(doc, "sweep", step_json(j->sweep, false, ok), ok);
    icm_cli_json_set(doc, "duration_ms", icm_cli_json_int(j->duration_ms), ok);
    if (j->outcome == OUTCOME_SKIPPED)
        icm_cli_json_set(doc, "reason", icm_cli_json_str(j->reason), ok);
    if (j->outcome == OUTCOME_FAILED) {
        json_t *err = json_object();
        if (err == NULL)
            *ok = false;
        icm_cli_json_set(err, "step", icm_cli_json_str(step_names[j->step]), ok);
        icm_cli_json_set(err, "code", str_or_null(j->err_code), ok);
        icm_cli_json_set(err, "message", str_or_null(j->err_message), ok);
        icm_cli_json_set(err, "exit_code", icm_cli_json_int(j->exit_code), ok);
        icm_cli_json_set(doc, "error", err, ok);
    }
    return doc;
}

/* The table is finished: write its line, keep the numbers the summary and the metrics need,
 * and let go of the reports (a run over many tables holds one table's reports at a time per
 * slot, not every table's). Returns false when the line could not be written. */
static bool job_finish(job *j, bool dry_run)
{
    bool ok = true;
    json_t *line = job_json(j, dry_run, &ok);
    bool written = ok && icm_cli_json_write(stdout, line, false) && fflush(stdout) == 0;
    json_decref(line);
    j->reported = true;
    j->expired = (int64_t)json_array_size(json_object_get(j->expire, "expired"));
    j->expire_files = member_int(j->expire, "total_deleted");
    j->expire_bytes = member_int(j->expire, "total_bytes");
    j->sweep_files = member_int(j->sweep, "total");
    j->sweep_bytes = member_int(j->sweep, "total_bytes");
    json_decref(j->expire);
    json_decref(j->sweep);
    j->expire = j->sweep = NULL;
    free(j->out.data);
    free(j->err.data);
    memset(&j->out, 0, sizeof j->out);
    memset(&j->err, 0, sizeof j->err);
    return written;
}

/* ---- metrics (Prometheus text exposition format) ---- */

/* A label value, which the format wants as UTF-8 with `\\`, `\"` and `\n` escaped. Made
 * printable first (icm_escape_text: a backslash is `\\`, a newline `\n`, and every other
 * control character or byte that is not UTF-8 `\xNN` or `\t`, `\r`); its `\\` and `\n` are
 * the format's own escapes already, its other escapes are written as text (the backslash
 * escaped), so the value reads back as the name, or as its printable form where the name has
 * bytes the format cannot carry. */
static void put_label(FILE *f, const char *key, const char *value, bool first)
{
    char *text = icm_cli_escape_text(value != NULL ? value : "");
    fprintf(f, "%s%s=\"", first ? "" : ",", key);
    for (const char *c = text != NULL ? text : "(out of memory)"; *c; c++) {
        if (*c == '"') {
            fputs("\\\"", f);
        } else if (*c == '\\' && (c[1] == '\\' || c[1] == 'n')) {
            fputc(*c++, f);
            fputc(*c, f);
        } else if (*c == '\\') {
            fputs("\\\\", f);
        } else {
            fputc(*c, f);
        }
    }
    fputc('"', f);
    free(text);
}

static void put_family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_table_sample(FILE *f, const char *name, const job *j, const char *step_label,
                             const char *state, double value)
{
    if (!j->reported) /* the run stopped before it (the catalog could not be listed) */
        return;
    fprintf(f, "%s{", name);
    put_label(f, "namespace", j->ns, true);
    put_label(f, "table", j->name, false);
    put_label(f, "outcome", outcome_names[j->outcome], false);
    if (step_label != NULL)
        put_label(f, "step", step_label, false);
    if (state != NULL)
        put_label(f, "state", state, false);
    char num[32];
    fprintf(f, "} %s\n", icm_cli_format_double(value, num, sizeof num));
}

static int write_metrics(const char *path, const job *jobs, size_t n, bool dry_run,
                         int64_t finished_ms, int exit_code)
{
    char *tmp = NULL;
    int rc = ICM_EXIT_OK;
    FILE *f = icm_cli_metrics_create(path, &tmp, &rc);
    if (f == NULL)
        return rc;
    const char *state = dry_run ? "planned" : "deleted";
    put_family(f, "icemaint_maintain_table_success", "gauge",
               "1 when the table was maintained or skipped, 0 when it failed");
    for (size_t i = 0; i < n; i++)
        put_table_sample(f, "icemaint_maintain_table_success", &jobs[i], NULL, NULL,
                         jobs[i].outcome == OUTCOME_FAILED ? 0 : 1);
    put_family(f, "icemaint_maintain_table_exit_code", "gauge",
               "the exit code of the table's maintenance (README \"Exit codes\")");
    for (size_t i = 0; i < n; i++)
        put_table_sample(f, "icemaint_maintain_table_exit_code", &jobs[i], NULL, NULL,
                         jobs[i].exit_code);
    put_family(f, "icemaint_maintain_table_duration_seconds", "gauge",
               "wall time of the table's maintenance");
    for (size_t i = 0; i < n; i++)
        put_table_sample(f, "icemaint_maintain_table_duration_seconds", &jobs[i], NULL, NULL,
                         (double)jobs[i].duration_ms / 1000.0);
    put_family(f, "icemaint_maintain_expired_snapshots", "gauge",
               "snapshots the table's expiry removed (or would remove, state planned)");
    for (size_t i = 0; i < n; i++)
        put_table_sample(f, "icemaint_maintain_expired_snapshots", &jobs[i], NULL, state,
                         (double)jobs[i].expired);
    put_family(f, "icemaint_maintain_files", "gauge",
               "files the step deleted (state deleted) or would delete (state planned)");
    for (size_t i = 0; i < n; i++) {
        put_table_sample(f, "icemaint_maintain_files", &jobs[i], "expire-snapshots", state,
                         (double)jobs[i].expire_files);
        put_table_sample(f, "icemaint_maintain_files", &jobs[i], "remove-orphan-files", state,
                         (double)jobs[i].sweep_files);
    }
    put_family(f, "icemaint_maintain_bytes", "gauge",
               "bytes of the files the step deleted or would delete (known sizes)");
    for (size_t i = 0; i < n; i++) {
        put_table_sample(f, "icemaint_maintain_bytes", &jobs[i], "expire-snapshots", state,
                         (double)jobs[i].expire_bytes);
        put_table_sample(f, "icemaint_maintain_bytes", &jobs[i], "remove-orphan-files", state,
                         (double)jobs[i].sweep_bytes);
    }
    size_t count[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        count[jobs[i].outcome] += jobs[i].reported;
    put_family(f, "icemaint_maintain_tables", "gauge", "tables of the last run by outcome");
    for (int o = 0; o < 3; o++) {
        fputs("icemaint_maintain_tables{", f);
        put_label(f, "outcome", outcome_names[o], true);
        fprintf(f, "} %zu\n", count[o]);
    }
    put_family(f, "icemaint_maintain_exit_code", "gauge", "the exit code of the last run");
    fprintf(f, "icemaint_maintain_exit_code %d\n", exit_code);
    put_family(f, "icemaint_maintain_last_run_timestamp_seconds", "gauge",
               "when the last run finished (seconds since the epoch)");
    fprintf(f, "icemaint_maintain_last_run_timestamp_seconds %.3f\n",
            (double)finished_ms / 1000.0);
    return icm_cli_metrics_publish(f, tmp, path);
}

/* ---- the run ---- */

/* Neither --metrics FILE nor the --log-out DIR may lie inside a table's location (out_file.c):
 * that table's sweep would take the journals for orphans, and FILE could become one of its
 * files. Every table is checked before the first is maintained. A table that cannot be loaded
 * now is not checked: it fails at its own turn (its load) and nothing of it is touched. */
static int check_outputs(const maintain_args *a, const job_list *jobs)
{
    const char *log_dir = a->dry_run ? NULL : a->log_dir; /* no journals in a dry run */
    int rc = ICM_EXIT_OK;
    bool *used = a->n_excludes > 0 ? calloc(a->n_excludes, sizeof *used) : NULL;
    if (a->n_excludes > 0 && used == NULL)
        return icm_cli_oom();
    for (size_t i = 0; rc == ICM_EXIT_OK && i < jobs->len; i++) {
        if (a->metrics == NULL && log_dir == NULL && a->n_excludes == 0)
            break;
        const job *j = &jobs->jobs[i];
        icm_table *t = NULL;
        if (icm_table_load_levels(&t, jobs->cat, j->levels, j->n_levels, j->table) != 0) {
            icm_error_clear();
            continue;
        }
        if (a->metrics != NULL)
            rc = icm_cli_out_file_check_table("--metrics", a->metrics, false, t);
        if (rc == ICM_EXIT_OK && log_dir != NULL)
            rc = icm_cli_out_file_check_table("--log-out", log_dir, true, t);
        if (a->n_excludes > 0) {
            char *id = bare_identity(icm_table_metadata_location(icm_table_get_metadata(t)));
            if (id == NULL && rc == ICM_EXIT_OK)
                rc = icm_cli_oom();
            for (size_t k = 0; id != NULL && k < a->n_excludes; k++)
                used[k] = used[k] || exclusion_applies(a->excludes[k], id);
            free(id);
        }
        icm_table_free(t);
    }
    /* An exclusion no table's location holds (by its spelling) would be dropped, and the files
     * the user meant to keep swept: refused before any table is maintained. */
    for (size_t k = 0; rc == ICM_EXIT_OK && k < a->n_excludes; k++)
        if (!used[k]) {
            (void)icm_cli_error(a->excludes[k],
                                "--exclude-location: no table of this run has its location "
                                "at, below or above it as the catalog spells the locations "
                                "(a path through a symbolic link, or a table that could not "
                                "be loaded?): nothing maintained");
            rc = ICM_EXIT_REFUSED;
        }
    free(used);
    return rc;
}

/* Load the table (a fresh handle) for its line: the metadata location, the retention
 * properties, gc.enabled. Returns false when the table is finished already (failed or
 * skipped). */
static bool job_prepare(icm_cli *cli, const maintain_args *a, icm_catalog *cat, job *j)
{
    icm_table *t = NULL;
    j->step = STEP_LOAD;
    bool ok = true;
    if (a->log_dir != NULL && !a->dry_run) {
        j->journal[STEP_EXPIRE] = journal_path(a->log_dir, j, step_names[STEP_EXPIRE]);
        j->journal[STEP_SWEEP] = journal_path(a->log_dir, j, step_names[STEP_SWEEP]);
        ok = j->journal[STEP_EXPIRE] != NULL && j->journal[STEP_SWEEP] != NULL;
    }
    int lrc = ok ? icm_table_load_levels(&t, cat, j->levels, j->n_levels, j->table)
                 : ICM_ENOMEM;
    if (lrc != 0) {
        char line[4096];
        const icm_error *e = icm_error_last();
        icm_error_format(line, sizeof line, e);
        icm_cli_file_line(cli, false, j->name, line, "");
        j->outcome = OUTCOME_FAILED;
        j->exit_code = lrc == ICM_EREFUSED ? ICM_EXIT_REFUSED : ICM_EXIT_ERROR;
        j->err_code = dup_or_null(icm_error_code_name(lrc), &ok);
        j->err_message = dup_or_null(line, &ok);
        return false;
    }
    const icm_table_metadata *md = icm_table_get_metadata(t);
    j->md_before = dup_or_null(icm_table_get_metadata_location(t), &ok);
    if (a->n_excludes > 0 &&
        (j->location_id = bare_identity(icm_table_metadata_location(md))) == NULL)
        ok = false;
    static const char *const keys[] = {
        "history.expire.max-snapshot-age-ms", "history.expire.min-snapshots-to-keep",
        "history.expire.max-ref-age-ms", "gc.enabled"};
    char **props[] = {&j->prop_age, &j->prop_min, &j->prop_ref_age, &j->prop_gc};
    for (size_t k = 0; k < 4; k++)
        *props[k] = dup_or_null(icm_table_metadata_property(md, keys[k]), &ok);
    icm_table_free(t);
    if (!ok) { /* the table is not run without its line's facts */
        j->outcome = OUTCOME_FAILED;
        j->exit_code = ICM_EXIT_ERROR;
        j->err_code = strdup(icm_error_code_name(ICM_ENOMEM));
        j->err_message = strdup("out of memory");
        return false;
    }
    if (j->prop_gc != NULL && strcasecmp(j->prop_gc, "true") != 0) {
        /* As Java reads it (Boolean.parseBoolean): anything but "true" disables it; the steps
         * would refuse (exit 5), and a disabled table is a choice, not a failure. */
        j->outcome = OUTCOME_SKIPPED;
        size_t n = strlen(j->prop_gc) + 96;
        j->reason = malloc(n);
        if (j->reason != NULL)
            snprintf(j->reason, n, "gc.enabled='%s': no snapshot expired, no file deleted",
                     j->prop_gc);
        j->md_after = dup_or_null(j->md_before, &ok);
        return false;
    }
    return true;
}

/* The current metadata location after the steps, from the catalog (not from a step's report):
 * after a commit of unknown outcome too, where it says whether the commit applied. */
static void job_after(icm_catalog *cat, job *j, bool dry_run)
{
    bool ok = true;
    if (dry_run) {
        j->md_after = dup_or_null(j->md_before, &ok);
        return;
    }
    icm_table *t = NULL;
    if (icm_table_load_levels(&t, cat, j->levels, j->n_levels, j->table) == 0)
        j->md_after = dup_or_null(icm_table_get_metadata_location(t), &ok);
    icm_table_free(t);
}

static int run_maintain(icm_cli *cli, int argc, char **argv)
{
    maintain_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc != ICM_EXIT_OK) {
        free(a.namespaces);
        excludes_free(&a);
        return rc;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        free(a.namespaces);
        excludes_free(&a);
        return icm_cli_error("/proc/self/exe", "cannot find the icemaint executable (%s)",
                             strerror(errno));
    }
    exe[n] = '\0';
    job_list jobs = {NULL, 0, 0, NULL, NULL, false};
    bool metrics_ok = true;
    rc = icm_cli_catalog_open(cli, &jobs.cat);
    if (rc == ICM_EXIT_OK && a.all)
        rc = collect_tables(cli, &jobs, NULL, 0);
    for (size_t i = 0; rc == ICM_EXIT_OK && i < a.n_namespaces; i++)
        rc = collect_tables(cli, &jobs, a.namespaces[i], 0);
    free(a.namespaces);
    if (rc != ICM_EXIT_OK)
        goto done;
    jobs_unique(&jobs);
    if ((rc = check_outputs(&a, &jobs)) != ICM_EXIT_OK) {
        metrics_ok = false; /* FILE inside a table: not written at all */
        goto done;
    }

    icm_cli_json_mark_printed(); /* JSON lines from here: no error document after them */
    int64_t started = mono_ms();
    size_t next = 0, running = 0, finished = 0;
    int worst = ICM_EXIT_OK;
    bool stdout_ok = true;
    job **slots = calloc((size_t)a.parallel, sizeof *slots);
    struct pollfd *pfd = calloc((size_t)a.parallel * 2, sizeof *pfd);
    if (slots == NULL || pfd == NULL) {
        free(slots);
        free(pfd);
        rc = icm_cli_oom();
        goto done;
    }
    while (finished < jobs.len) {
        /* fill the free slots; a table that ends before any step (load failed, skipped) is
         * reported at once */
        for (int s = 0; s < a.parallel && next < jobs.len; s++) {
            if (slots[s] != NULL)
                continue;
            job *j = &jobs.jobs[next++];
            j->started_ms = mono_ms();
            if (job_prepare(cli, &a, jobs.cat, j) && step_start(cli, &a, exe, j, STEP_EXPIRE)) {
                slots[s] = j;
                running++;
                continue;
            }
            j->duration_ms = mono_ms() - j->started_ms;
            worst = worse(worst, j->exit_code);
            stdout_ok = job_finish(j, a.dry_run) && stdout_ok;
            finished++;
            s--; /* the slot is still free */
        }
        if (running == 0)
            continue;
        size_t np = 0;
        for (int s = 0; s < a.parallel; s++) {
            job *j = slots[s];
            if (j == NULL)
                continue;
            pfd[np++] = (struct pollfd){.fd = j->fd_out, .events = POLLIN};
            pfd[np++] = (struct pollfd){.fd = j->fd_err, .events = POLLIN};
        }
        if (poll(pfd, (nfds_t)np, -1) < 0) {
            /* EINTR, or ENOMEM for the moment: the children go on either way, so try again
             * (after a pause in the second case) rather than leave tables unreported */
            if (errno != EINTR)
                nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
            continue;
        }
        np = 0;
        for (int s = 0; s < a.parallel; s++) {
            job *j = slots[s];
            if (j == NULL)
                continue;
            bool oom = false;
            struct pollfd *po = &pfd[np++], *pe = &pfd[np++];
            if (j->fd_out >= 0 && po->revents != 0 &&
                !drain(j->fd_out, &j->out, REPORT_MAX, &oom)) {
                close(j->fd_out);
                j->fd_out = -1;
            }
            if (j->fd_err >= 0 && pe->revents != 0 &&
                !drain(j->fd_err, &j->err, STDERR_HOLD + 65536, &oom)) {
                close(j->fd_err);
                j->fd_err = -1;
            }
            spill_stderr(j);
            if (j->fd_out >= 0 || j->fd_err >= 0)
                continue;
            /* both pipes closed: the step has ended (or is about to) */
            int status = 0;
            while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
                ;
            j->pid = 0;
            if (j->err.len > 0) { /* its errors and warnings, whole lines, already printable */
                pass_stderr(j, j->err.data, j->err.len);
                if (j->err.data[j->err.len - 1] != '\n')
                    fputc('\n', stderr);
            }
            bool table_done = step_done(j, status);
            if (!table_done && step_start(cli, &a, exe, j, STEP_SWEEP))
                continue;
            job_after(jobs.cat, j, a.dry_run);
            j->duration_ms = mono_ms() - j->started_ms;
            worst = worse(worst, j->exit_code);
            stdout_ok = job_finish(j, a.dry_run) && stdout_ok;
            slots[s] = NULL;
            running--;
            finished++;
        }
    }
    free(slots);
    free(pfd);

    /* the summary */
    size_t count[3] = {0, 0, 0};
    int64_t files = 0, bytes = 0, expired = 0;
    for (size_t i = 0; i < jobs.len; i++) {
        job *j = &jobs.jobs[i];
        count[j->outcome]++;
        expired += j->expired;
        files += j->expire_files + j->sweep_files;
        bytes += j->expire_bytes + j->sweep_bytes;
    }
    if (rc == ICM_EXIT_OK)
        rc = worst;
    bool ok = true;
    json_t *sum = json_object(), *doc = json_object();
    if (sum == NULL || doc == NULL)
        ok = false;
    icm_cli_json_set(sum, "tables", icm_cli_json_int((int64_t)jobs.len), &ok);
    for (int o = 0; o < 3; o++)
        icm_cli_json_set(sum, outcome_names[o], icm_cli_json_int((int64_t)count[o]), &ok);
    icm_cli_json_set(sum, "dry_run", json_boolean(a.dry_run), &ok);
    icm_cli_json_set(sum, "expired_snapshots", icm_cli_json_int(expired), &ok);
    icm_cli_json_set(sum, a.dry_run ? "planned_files" : "deleted_files", icm_cli_json_int(files),
                     &ok);
    icm_cli_json_set(sum, a.dry_run ? "planned_bytes" : "deleted_bytes", icm_cli_json_int(bytes),
                     &ok);
    icm_cli_json_set(sum, "parallel", icm_cli_json_int(a.parallel), &ok);
    icm_cli_json_set(sum, "duration_ms", icm_cli_json_int(mono_ms() - started), &ok);
    icm_cli_json_set(sum, "exit_code", icm_cli_json_int(rc), &ok);
    icm_cli_json_set(doc, "summary", sum, &ok);
    stdout_ok = (ok ? icm_cli_json_write(stdout, doc, false) : false) && stdout_ok;
    json_decref(doc);
    if (!stdout_ok || !icm_cli_stdout_ok())
        rc = worse(rc, icm_cli_report_lost((size_t)files, "file",
                                           "cannot write the JSON lines to stdout"));

done:
    /* also when the catalog could not be listed: an alert on the exit code sees that too */
    if (a.metrics != NULL && metrics_ok)
        rc = worse(rc, write_metrics(a.metrics, jobs.jobs, jobs.len, a.dry_run, now_ms(), rc));
    for (size_t i = 0; i < jobs.len; i++)
        job_free(&jobs.jobs[i]);
    free(jobs.jobs);
    icm_catalog_free(jobs.cat);
    excludes_free(&a);
    return rc;
}

const icm_cli_command icm_cli_cmd_maintain = {
    "maintain", "expire snapshots and sweep orphans of every table of a catalog", maintain_help,
    run_maintain,
};
