/*
 * cli/cmd_health.c: `icemaint health TABLE | --all`: a table's storage and retention picture
 * (icm_table_health, icemaint/health.h) and thresholds on it that become the exit code, for
 * alerting on tables nobody maintains.
 *
 * Output: text (one block per table); --json one document for TABLE, or with --all one JSON
 * line per table and a {"summary": ...} line (as `maintain`); --metrics FILE the Prometheus
 * text format (icemaint_health_* families, labels namespace and table), written to FILE.tmp
 * and renamed over FILE once complete (node_exporter's textfile collector never reads half a
 * file).
 * Exit codes: 0 every table measured and within its thresholds; 6 some threshold breached
 * (each breach named: contract "`check` or `health` found problems"); 1 some table could not
 * be measured (with --all the others are still measured and reported; 1 wins over 6: a table
 * that cannot be measured may be anything); 2 usage.
 * Never deletes, writes (but --metrics) or commits: the listing is the sweep's dry run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog_ref.h"
#include "cli.h"
#include "icemaint/expire.h"
#include "icemaint/health.h"
#include "timeparse.h"

static const char health_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] health TABLE | --all [OPTIONS] [--json]\n"
    "\n"
    "Report a table's storage and retention picture, read-only: the snapshots\n"
    "retained and the oldest one's age; the metadata files (the current one, the\n"
    "metadata-log entries, and the metadata documents a listing finds in the\n"
    "metadata folders) and their bytes; the bytes of the data and delete files the\n"
    "current snapshot references, that all snapshots reference (each file once),\n"
    "and that lie unreferenced under the location (what a remove-orphan-files dry\n"
    "run with no age cutoff would find); manifests per snapshot and the share of\n"
    "the current snapshot's manifests that are small; and the last expiry (the\n"
    "table property icemaint.last-expire-ms, set by expire-snapshots). With\n"
    "--all, every table of the catalog; one failure does not stop the others.\n"
    "\n"
    "Thresholds (each breach is named in the output and makes the exit code 6):\n"
    "  --max-snapshot-age DURATION     the oldest snapshot is older\n"
    "  --max-snapshots N               more snapshots are retained\n"
    "  --max-metadata-files N          more metadata files (those listed in the\n"
    "                                  metadata folders; unlisted: log entries + 1)\n"
    "  --max-unreferenced-percent P    unreferenced bytes are more than P% of\n"
    "                                  unreferenced + referenced (all snapshots)\n"
    "                                  data and delete file bytes\n"
    "  --max-small-manifest-percent P  more than P% of the current snapshot's\n"
    "                                  manifests are small\n"
    "  --max-expiry-age DURATION       expiry is overdue: snapshots the table's\n"
    "                                  retention released more than DURATION ago\n"
    "                                  are still here, and no expiry was recorded\n"
    "                                  in that time (nothing to expire: no breach)\n"
    "An unknown figure (no listing, no manifests) breaches nothing.\n"
    "\n"
    "Options:\n"
    "  --all                       every table of the catalog (all namespaces)\n"
    "  --now TIME                  measure ages against TIME (default: now)\n"
    "  --small-manifest-bytes B    a manifest is small below B bytes (default:\n"
    "                              the table's commit.manifest.target-size-bytes,\n"
    "                              else 8388608, 8 MiB)\n"
    "  --no-listing                do not list the location (unreferenced\n"
    "                              figures unknown)\n"
    "  --metrics FILE              write the Prometheus text format to FILE\n"
    "                              (a temporary file beside it, renamed: for\n"
    "                              node_exporter's textfile collector); an existing\n"
    "                              FILE must be an earlier metrics file, and FILE\n"
    "                              may not lie inside a table's location (else\n"
    "                              refused, exit 5, and nothing written)\n"
    "  --json                      one JSON document; with --all one JSON line\n"
    "                              per table and a {\"summary\": ...} line\n"
    "  -h, --help                  print this help\n"
    "\n"
    "JSON (per table): table, namespace, table_id ([\"level\",...,\"name\"]: --all\n"
    "loads each table by these, never by its dotted name; null for a path),\n"
    "metadata_location, now_ms, snapshots\n"
    "{count, current_snapshot_id, oldest_timestamp_ms, oldest_age_ms},\n"
    "metadata_files {log_entries, listed, listed_bytes, current_bytes}, referenced\n"
    "{current, all_snapshots: {data_files, data_bytes, delete_files, delete_bytes,\n"
    "manifests, manifest_bytes}}, unreferenced {listed_files, files, bytes,\n"
    "percent, error}, manifests {current, per_snapshot_mean, per_snapshot_max,\n"
    "small_bound_bytes, small_current, small_percent}, expiry {last_expire_ms,\n"
    "last_expire_age_ms, snapshots_expired_before}, integrity {unreadable_files,\n"
    "first}, breaches [{threshold, value,\n"
    "limit, message}], healthy, exit_code; a table that could not be measured has\n"
    "error {message, code, exit_code} instead. Unknown values are null.\n"
    "\n"
    "A retained list or manifest the sweep and expiry would not trust always\n"
    "breaches (unreadable-metadata).\n"
    "\n"
    "Exit codes: 0 healthy; 6 a threshold was breached; 1 a table could not be\n"
    "measured (wins over 6); 2 usage.\n";

/* ---- arguments ---- */

enum { T_SNAPSHOT_AGE, T_SNAPSHOTS, T_METADATA_FILES, T_UNREFERENCED, T_SMALL_MANIFESTS,
       T_EXPIRY_AGE, T_COUNT,
       /* not an option: a list or manifest that cannot be trusted always breaches */
       T_UNREADABLE = T_COUNT, T_ALL };
static const char *const threshold_names[T_ALL] = {
    "max-snapshot-age",        "max-snapshots",              "max-metadata-files",
    "max-unreferenced-percent", "max-small-manifest-percent", "max-expiry-age",
    "unreadable-metadata"};

typedef struct health_args {
    const char *table;
    bool all;
    const char *now, *small_manifest_bytes, *metrics;
    bool no_listing;
    const char *limit_text[T_COUNT];
    bool has_limit[T_COUNT];
    double limit[T_COUNT];   /* durations and counts exact below 2^53 */
    int64_t now_ms;
    int64_t small_bytes;
} health_args;

static bool parse_percent(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !(v >= 0 && v <= 100))
        return false;
    *out = v;
    return true;
}

static int parse_limit(health_args *a, int k)
{
    const char *text = a->limit_text[k];
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", threshold_names[k]);
    const char *why = NULL;
    int64_t n = 0;
    switch (k) {
    case T_SNAPSHOT_AGE:
    case T_EXPIRY_AGE:
        if (icm_cli_parse_duration(text, &n, &why) != 0)
            return icm_cli_usage(opt, "%s", why != NULL ? why : "not a duration");
        a->limit[k] = (double)n;
        break;
    case T_SNAPSHOTS:
    case T_METADATA_FILES:
        if (!icm_cli_parse_int64(text, &n) || n < 0)
            return icm_cli_usage(opt, "not a non-negative integer: %s", text);
        a->limit[k] = (double)n;
        break;
    default:
        if (!parse_percent(text, &a->limit[k]))
            return icm_cli_usage(opt, "not a percentage from 0 to 100: %s", text);
    }
    a->has_limit[k] = true;
    return ICM_EXIT_OK;
}

static int parse_args(int argc, char **argv, health_args *a)
{
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        if (!after_dashdash && strcmp(argv[i], "--all") == 0) {
            a->all = true;
            continue;
        }
        if (!after_dashdash && strcmp(argv[i], "--no-listing") == 0) {
            a->no_listing = true;
            continue;
        }
        int m = 0;
        char opt[64];
        for (int k = 0; !after_dashdash && m == 0 && k < T_COUNT; k++) {
            snprintf(opt, sizeof opt, "--%s", threshold_names[k]);
            m = icm_cli_opt_value(argc, argv, &i, opt, &a->limit_text[k]);
        }
        static const char *const names[] = {"--now", "--small-manifest-bytes", "--metrics"};
        const char **slots[] = {&a->now, &a->small_manifest_bytes, &a->metrics};
        for (size_t k = 0; !after_dashdash && m == 0 && k < 3; k++)
            m = icm_cli_opt_value(argc, argv, &i, names[k], slots[k]);
        if (m < 0)
            return ICM_EXIT_USAGE;
        if (m > 0)
            continue;
        int rc = icm_cli_take_table("health", argv, i, &after_dashdash, &a->table);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    if (a->all && a->table != NULL)
        return icm_cli_usage("--all", "cannot be combined with TABLE");
    if (!a->all && a->table == NULL)
        return icm_cli_need_table("health", a->table);
    if (a->metrics != NULL) { /* an existing FILE must be an earlier metrics file (out_file.c) */
        int rc = icm_cli_metrics_check_existing(a->metrics);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    for (int k = 0; k < T_COUNT; k++) {
        int rc = a->limit_text[k] != NULL ? parse_limit(a, k) : ICM_EXIT_OK;
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t real_now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    a->now_ms = real_now;
    const char *why = NULL;
    if (a->now != NULL && icm_cli_parse_time(a->now, real_now, &a->now_ms, &why) != 0)
        return icm_cli_usage("--now", "%s", why != NULL ? why : "not a time");
    if (a->small_manifest_bytes != NULL &&
        (!icm_cli_parse_int64(a->small_manifest_bytes, &a->small_bytes) || a->small_bytes <= 0))
        return icm_cli_usage("--small-manifest-bytes", "not a positive integer: %s",
                             a->small_manifest_bytes);
    return ICM_EXIT_OK;
}

/* ---- one table ---- */

typedef struct breach {
    int threshold;
    double value, limit;
    char message[1024];
} breach;

typedef struct table_health {
    char *name;                   /* as given, or ns.table */
    char *ns;                     /* NULL for a TABLE argument that is not a catalog name */
    char *table;                  /* the table's own name in ns (may hold dots); NULL with ns */
    icm_health_report *r;         /* NULL when it could not be measured */
    char *error;                  /* then: the one-line error, its code name and exit code */
    const char *error_code;
    int exit_code;
    breach breaches[T_ALL];
    size_t breach_count;
    /* with --max-expiry-age D: how many snapshots the table's retention had released already D
     * ago (an expiry decided at now - D would remove them) and are still here; 0 when expiry
     * is off (gc.enabled) or has had nothing to do that long; -1 unknown */
    int64_t overdue_snapshots;
} table_health;

/* "5d 2h", "3h 4m", "12m 5s", "7s" (whole seconds; ms below one second). */
static const char *format_age(int64_t ms, char *buf, size_t size)
{
    if (ms < 0) {
        snprintf(buf, size, "%" PRId64 "ms", ms);
        return buf;
    }
    int64_t s = ms / 1000, d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60;
    if (d > 0)
        snprintf(buf, size, "%" PRId64 "d %" PRId64 "h", d, h);
    else if (h > 0)
        snprintf(buf, size, "%" PRId64 "h %" PRId64 "m", h, m);
    else if (m > 0)
        snprintf(buf, size, "%" PRId64 "m %" PRId64 "s", m, s % 60);
    else if (s > 0)
        snprintf(buf, size, "%" PRId64 "s", s);
    else
        snprintf(buf, size, "%" PRId64 "ms", ms);
    return buf;
}

static size_t metadata_file_count(const icm_health_report *r)
{
    return r->metadata_files.bytes >= 0 ? r->metadata_files.count : r->metadata_log_count + 1;
}

static double small_percent(const icm_health_report *r)
{
    return r->current_manifests.count > 0
               ? 100.0 * (double)r->current_small_manifests / (double)r->current_manifests.count
               : -1;
}

static void add_breach(table_health *th, int k, double value, double limit, const char *fmt,
                       ...) ICM_CLI_PRINTF(5, 6);
static void add_breach(table_health *th, int k, double value, double limit, const char *fmt, ...)
{
    breach *b = &th->breaches[th->breach_count++];
    b->threshold = k;
    b->value = value;
    b->limit = limit;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->message, sizeof b->message, fmt, ap);
    va_end(ap);
}

/* Compare the report with the thresholds (the help text says what each means). An unknown
 * figure (no listing, no manifests) breaches nothing. */
static void judge(const health_args *a, table_health *th)
{
    const icm_health_report *r = th->r;
    char v[32], l[32];
    if (a->has_limit[T_SNAPSHOT_AGE] &&
        (double)r->oldest_snapshot_age_ms > a->limit[T_SNAPSHOT_AGE])
        add_breach(th, T_SNAPSHOT_AGE, (double)r->oldest_snapshot_age_ms,
                   a->limit[T_SNAPSHOT_AGE], "the oldest snapshot is %s old (limit %s)",
                   format_age(r->oldest_snapshot_age_ms, v, sizeof v),
                   format_age((int64_t)a->limit[T_SNAPSHOT_AGE], l, sizeof l));
    if (a->has_limit[T_SNAPSHOTS] && (double)r->snapshot_count > a->limit[T_SNAPSHOTS])
        add_breach(th, T_SNAPSHOTS, (double)r->snapshot_count, a->limit[T_SNAPSHOTS],
                   "%zu snapshots are retained (limit %.0f)", r->snapshot_count,
                   a->limit[T_SNAPSHOTS]);
    size_t md_files = metadata_file_count(r);
    if (a->has_limit[T_METADATA_FILES] && (double)md_files > a->limit[T_METADATA_FILES])
        add_breach(th, T_METADATA_FILES, (double)md_files, a->limit[T_METADATA_FILES],
                   "%zu metadata files (limit %.0f)", md_files, a->limit[T_METADATA_FILES]);
    if (a->has_limit[T_UNREFERENCED] && r->listed &&
        r->unreferenced_percent > a->limit[T_UNREFERENCED])
        add_breach(th, T_UNREFERENCED, r->unreferenced_percent, a->limit[T_UNREFERENCED],
                   "%.2f%% of the bytes are unreferenced: %" PRId64 " bytes in %zu files "
                   "(limit %g%%)",
                   r->unreferenced_percent, r->unreferenced.bytes, r->unreferenced.count,
                   a->limit[T_UNREFERENCED]);
    double sp = small_percent(r);
    if (a->has_limit[T_SMALL_MANIFESTS] && sp > a->limit[T_SMALL_MANIFESTS])
        add_breach(th, T_SMALL_MANIFESTS, sp, a->limit[T_SMALL_MANIFESTS],
                   "%.2f%% of the current snapshot's %zu manifests are below %" PRId64
                   " bytes (limit %g%%)",
                   sp, r->current_manifests.count, r->small_manifest_bytes,
                   a->limit[T_SMALL_MANIFESTS]);
    /* Expiry is overdue when its work has waited longer than the limit: snapshots released by
     * the table's own retention at least D ago are still here, and no expiry was recorded in
     * the last D. A table with nothing to expire needs no expiry, however long ago the last
     * one was (a scheduled `maintain` records none then: it commits nothing). */
    if (a->has_limit[T_EXPIRY_AGE] && th->overdue_snapshots > 0) {
        double limit = a->limit[T_EXPIRY_AGE];
        if (r->last_expire_age_ms >= 0 && (double)r->last_expire_age_ms > limit)
            add_breach(th, T_EXPIRY_AGE, (double)r->last_expire_age_ms, limit,
                       "the last expiry was %s ago (limit %s), and %" PRId64 " snapshots "
                       "released by the table's retention more than %s ago are still here",
                       format_age(r->last_expire_age_ms, v, sizeof v),
                       format_age((int64_t)limit, l, sizeof l), th->overdue_snapshots, l);
        else if (r->last_expire_age_ms < 0)
            add_breach(th, T_EXPIRY_AGE, (double)r->oldest_snapshot_age_ms, limit,
                       "no expiry recorded (%s), and %" PRId64 " snapshots released by the "
                       "table's retention more than %s ago are still here (the oldest is %s "
                       "old)",
                       ICM_LAST_EXPIRE_PROPERTY, th->overdue_snapshots,
                       format_age((int64_t)limit, l, sizeof l),
                       format_age(r->oldest_snapshot_age_ms, v, sizeof v));
    }
    if (r->unreadable_files > 0)
        add_breach(th, T_UNREADABLE, (double)r->unreadable_files, 0,
                   "%zu manifest list%s or manifest%s of retained snapshots cannot be "
                   "trusted (see integrity), so the sweep refuses and the expiry keeps what "
                   "they may name until they are repaired or restored",
                   r->unreadable_files, r->unreadable_files == 1 ? "" : "s",
                   r->unreadable_files == 1 ? "" : "s");
    th->exit_code = th->breach_count > 0 ? ICM_EXIT_PROBLEMS : ICM_EXIT_OK;
}

/* The files the configured catalog lives in (never unreferenced files: orphans.h). */
static int catalog_files(icm_cli *cli, char ***out, size_t *n)
{
    icm_catalog_config_options co = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    co.name = cli->catalog;
    co.config_file = cli->config;
    co.uri = cli->uri;
    co.warehouse = cli->warehouse;
    int rc = icm_catalog_config_own_files(out, n, &co);
    return rc == 0 ? ICM_EXIT_OK : icm_cli_fail(cli, rc);
}

/* Record a failure of th (the library's last error, already reported on stderr). */
static void record_error(table_health *th, int exit_code, int lrc)
{
    const icm_error *e = icm_error_last();
    char line[1024];
    if (lrc != 0 && e->code != 0)
        icm_error_format(line, sizeof line, e);
    else
        snprintf(line, sizeof line, "%s", lrc != 0 ? icm_error_code_name(lrc) : "failed");
    th->error = strdup(line);
    th->error_code = lrc != 0 ? icm_error_code_name(lrc) : NULL;
    th->exit_code = exit_code;
}

/* How many snapshots an expiry decided `limit_ms` ago, by the table's own retention
 * properties, would have removed (icm_expire_decide at now - limit): 0 when gc.enabled turns
 * expiry off, -1 (with a warning) when the properties cannot be read. */
static int64_t overdue_snapshots(icm_cli *cli, const table_health *th, icm_table *t,
                                 double limit_ms)
{
    if (limit_ms >= (double)th->r->now_ms)
        return 0; /* a decision before 1970 releases nothing */
    icm_expire_decide_options eo = ICM_EXPIRE_DECIDE_OPTIONS_INIT;
    eo.now_ms = th->r->now_ms - (int64_t)limit_ms;
    icm_expire_decision *d = NULL;
    int rc = icm_expire_decide(&d, icm_table_get_metadata(t), &eo);
    if (rc == ICM_EREFUSED)
        return 0; /* gc.enabled is off: expiry is not wanted */
    if (rc != 0) {
        char line[512];
        icm_error_format(line, sizeof line, icm_error_last());
        icm_cli_warn(cli, "%s: whether expiry is overdue is unknown: %s", th->name, line);
        return -1;
    }
    int64_t n = (int64_t)d->expired_count;
    icm_expire_decision_free(d);
    return n;
}

static void measure(icm_cli *cli, const health_args *a, const icm_health_options *o,
                    icm_table *t, table_health *th)
{
    int lrc = icm_table_health(&th->r, t, o);
    if (lrc != 0) {
        record_error(th, icm_cli_fail(cli, lrc), lrc);
        return;
    }
    th->overdue_snapshots = -1;
    if (a->has_limit[T_EXPIRY_AGE])
        th->overdue_snapshots = overdue_snapshots(cli, th, t, a->limit[T_EXPIRY_AGE]);
    judge(a, th);
    if (th->r->listing_error != NULL && !a->no_listing)
        icm_cli_warn(cli, "%s: no unreferenced figures: %s", th->name, th->r->listing_error);
}

/* ---- output ---- */

static json_t *num_or_null(int64_t v)
{
    return v >= 0 ? icm_cli_json_int(v) : json_null();
}

static json_t *real_or_null(double v)
{
    return v >= 0 ? json_real(v) : json_null();
}

static json_t *files_json(const icm_health_files *data, const icm_health_files *del,
                          const icm_health_files *man, bool *ok)
{
    json_t *o = json_object();
    icm_cli_json_set(o, "data_files", icm_cli_json_int((int64_t)data->count), ok);
    icm_cli_json_set(o, "data_bytes", icm_cli_json_int(data->bytes), ok);
    icm_cli_json_set(o, "delete_files", icm_cli_json_int((int64_t)del->count), ok);
    icm_cli_json_set(o, "delete_bytes", icm_cli_json_int(del->bytes), ok);
    icm_cli_json_set(o, "manifests", icm_cli_json_int((int64_t)man->count), ok);
    icm_cli_json_set(o, "manifest_bytes", icm_cli_json_int(man->bytes), ok);
    return o;
}

/* The namespace's levels (the catalog lists a nested namespace joined with dots, as maintain
 * splits it) in a new array of pointers into a new copy (*copy), *n of them; NULL on OOM. */
static const char **ns_levels(const char *ns, char **copy, size_t *n)
{
    *n = 0;
    *copy = strdup(ns);
    const char **levels = calloc(strlen(ns) + 1, sizeof *levels);
    if (*copy == NULL || levels == NULL) {
        free(*copy);
        *copy = NULL;
        free(levels);
        return NULL;
    }
    for (char *p = *copy;; p++) {
        levels[(*n)++] = p;
        p = strchr(p, '.');
        if (p == NULL)
            break;
        *p = '\0';
    }
    return levels;
}

/* ["level", ..., "table"] for a catalog table, else null. */
static json_t *table_id_json(const table_health *th, bool *ok)
{
    if (th->ns == NULL || th->table == NULL)
        return json_null();
    char *copy = NULL;
    size_t n = 0;
    const char **levels = ns_levels(th->ns, &copy, &n);
    json_t *id = levels != NULL ? json_array() : NULL;
    for (size_t k = 0; id != NULL && k < n; k++)
        if (json_array_append_new(id, json_string(levels[k])) != 0)
            *ok = false;
    if (id != NULL && json_array_append_new(id, json_string(th->table)) != 0)
        *ok = false;
    if (id == NULL)
        *ok = false;
    free(copy);
    free(levels);
    return id;
}

/* Load a table of --all by its namespace levels and its name: never by the dotted name, which
 * a dot in a level or in the name makes another table's (`a`.`b.t` and `a.b`.`t` are both
 * "a.b.t"). Returns the library's code. */
static int load_by_levels(icm_catalog *cat, const table_health *th, icm_table **t)
{
    char *copy = NULL;
    size_t n = 0;
    const char **levels = ns_levels(th->ns, &copy, &n);
    int lrc = levels != NULL ? icm_table_load_levels(t, cat, levels, n, th->table) : ICM_ENOMEM;
    free(copy);
    free(levels);
    return lrc;
}

static json_t *report_json(const table_health *th, bool *ok)
{
    json_t *doc = json_object();
    if (doc == NULL) {
        *ok = false;
        return NULL;
    }
    icm_cli_json_set(doc, "table", icm_cli_json_str(th->name), ok);
    icm_cli_json_set(doc, "namespace", icm_cli_json_str(th->ns), ok);
    icm_cli_json_set(doc, "table_id", table_id_json(th, ok), ok);
    const icm_health_report *r = th->r;
    if (r == NULL) {
        json_t *err = json_object();
        icm_cli_json_set(err, "message", icm_cli_json_str(th->error), ok);
        icm_cli_json_set(err, "code", icm_cli_json_str(th->error_code), ok);
        icm_cli_json_set(err, "exit_code", icm_cli_json_int(th->exit_code), ok);
        icm_cli_json_set(doc, "error", err, ok);
        icm_cli_json_set(doc, "exit_code", icm_cli_json_int(th->exit_code), ok);
        return doc;
    }
    icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(r->metadata_location), ok);
    icm_cli_json_set(doc, "now_ms", icm_cli_json_int(r->now_ms), ok);
    json_t *s = json_object();
    icm_cli_json_set(s, "count", icm_cli_json_int((int64_t)r->snapshot_count), ok);
    icm_cli_json_set(s, "current_snapshot_id",
                     r->has_current_snapshot ? icm_cli_json_int(r->current_snapshot_id)
                                             : json_null(),
                     ok);
    icm_cli_json_set(s, "oldest_timestamp_ms", num_or_null(r->oldest_snapshot_ms), ok);
    icm_cli_json_set(s, "oldest_age_ms",
                     r->oldest_snapshot_ms >= 0 ? icm_cli_json_int(r->oldest_snapshot_age_ms)
                                                : json_null(),
                     ok);
    icm_cli_json_set(doc, "snapshots", s, ok);
    json_t *m = json_object();
    bool listed_md = r->metadata_files.bytes >= 0;
    icm_cli_json_set(m, "log_entries", icm_cli_json_int((int64_t)r->metadata_log_count), ok);
    icm_cli_json_set(m, "listed",
                     listed_md ? icm_cli_json_int((int64_t)r->metadata_files.count) : json_null(),
                     ok);
    icm_cli_json_set(m, "listed_bytes", num_or_null(r->metadata_files.bytes), ok);
    icm_cli_json_set(m, "current_bytes", num_or_null(r->current_metadata_bytes), ok);
    icm_cli_json_set(doc, "metadata_files", m, ok);
    json_t *ref = json_object();
    icm_cli_json_set(ref, "current",
                     files_json(&r->current_data_files, &r->current_delete_files,
                                &r->current_manifests, ok),
                     ok);
    icm_cli_json_set(ref, "all_snapshots",
                     files_json(&r->retained_data_files, &r->retained_delete_files,
                                &r->retained_manifests, ok),
                     ok);
    icm_cli_json_set(doc, "referenced", ref, ok);
    json_t *u = json_object();
    icm_cli_json_set(u, "listed_files",
                     r->listed ? icm_cli_json_int((int64_t)r->listed_files) : json_null(), ok);
    icm_cli_json_set(u, "files",
                     r->listed ? icm_cli_json_int((int64_t)r->unreferenced.count) : json_null(),
                     ok);
    icm_cli_json_set(u, "bytes", r->listed ? icm_cli_json_int(r->unreferenced.bytes) : json_null(),
                     ok);
    icm_cli_json_set(u, "percent", real_or_null(r->unreferenced_percent), ok);
    icm_cli_json_set(u, "error", icm_cli_json_str(r->listing_error), ok);
    icm_cli_json_set(doc, "unreferenced", u, ok);
    json_t *mf = json_object();
    icm_cli_json_set(mf, "current", icm_cli_json_int((int64_t)r->current_manifests.count), ok);
    icm_cli_json_set(mf, "per_snapshot_mean", json_real(r->manifests_per_snapshot_mean), ok);
    icm_cli_json_set(mf, "per_snapshot_max",
                     icm_cli_json_int((int64_t)r->manifests_per_snapshot_max), ok);
    icm_cli_json_set(mf, "small_bound_bytes", icm_cli_json_int(r->small_manifest_bytes), ok);
    icm_cli_json_set(mf, "small_current", icm_cli_json_int((int64_t)r->current_small_manifests),
                     ok);
    icm_cli_json_set(mf, "small_percent", real_or_null(small_percent(r)), ok);
    icm_cli_json_set(doc, "manifests", mf, ok);
    json_t *e = json_object();
    icm_cli_json_set(e, "last_expire_ms", num_or_null(r->last_expire_ms), ok);
    icm_cli_json_set(e, "last_expire_age_ms",
                     r->last_expire_ms >= 0 ? icm_cli_json_int(r->last_expire_age_ms)
                                            : json_null(),
                     ok);
    icm_cli_json_set(e, "snapshots_expired_before", json_boolean(r->snapshots_expired_before),
                     ok);
    icm_cli_json_set(doc, "expiry", e, ok);
    json_t *in = json_object();
    icm_cli_json_set(in, "unreadable_files", icm_cli_json_int((int64_t)r->unreadable_files), ok);
    icm_cli_json_set(in, "first", icm_cli_json_str(r->unreadable_first), ok);
    icm_cli_json_set(doc, "integrity", in, ok);
    json_t *arr = json_array();
    for (size_t i = 0; i < th->breach_count; i++) {
        const breach *b = &th->breaches[i];
        json_t *bo = json_object();
        icm_cli_json_set(bo, "threshold", icm_cli_json_str(threshold_names[b->threshold]), ok);
        icm_cli_json_set(bo, "value", json_real(b->value), ok);
        icm_cli_json_set(bo, "limit", json_real(b->limit), ok);
        icm_cli_json_set(bo, "message", icm_cli_json_str(b->message), ok);
        icm_cli_json_push(arr, bo, ok);
    }
    icm_cli_json_set(doc, "breaches", arr, ok);
    icm_cli_json_set(doc, "healthy", json_boolean(th->breach_count == 0), ok);
    icm_cli_json_set(doc, "exit_code", icm_cli_json_int(th->exit_code), ok);
    return doc;
}

static void print_text(const table_health *th)
{
    const icm_health_report *r = th->r;
    if (r == NULL) {
        icm_cli_line(stdout, "%s: could not be measured: %s", th->name,
                     th->error != NULL ? th->error : "?");
        return;
    }
    char t1[40], t2[40];
    icm_cli_line(stdout, "%s (%s)", th->name, r->metadata_location);
    if (r->oldest_snapshot_ms >= 0)
        printf("  snapshots: %zu retained, the oldest from %s (%s old)\n", r->snapshot_count,
               icm_cli_format_time(r->oldest_snapshot_ms, t1, sizeof t1),
               format_age(r->oldest_snapshot_age_ms, t2, sizeof t2));
    else
        printf("  snapshots: none\n");
    if (r->metadata_files.bytes >= 0)
        printf("  metadata files: %zu listed, %" PRId64 " bytes (the current one and %zu "
               "metadata-log entries named)\n",
               r->metadata_files.count, r->metadata_files.bytes, r->metadata_log_count);
    else
        printf("  metadata files: the current one and %zu metadata-log entries (not listed)\n",
               r->metadata_log_count);
    printf("  referenced by the current snapshot: %zu data files %" PRId64 " bytes, %zu delete "
           "files %" PRId64 " bytes\n",
           r->current_data_files.count, r->current_data_files.bytes,
           r->current_delete_files.count, r->current_delete_files.bytes);
    printf("  referenced by all snapshots: %zu data files %" PRId64 " bytes, %zu delete files "
           "%" PRId64 " bytes, %zu manifests %" PRId64 " bytes\n",
           r->retained_data_files.count, r->retained_data_files.bytes,
           r->retained_delete_files.count, r->retained_delete_files.bytes,
           r->retained_manifests.count, r->retained_manifests.bytes);
    if (r->listed)
        printf("  unreferenced: %zu file%s, %" PRId64 " bytes (%.2f%%) of %zu file%s listed\n",
               r->unreferenced.count, r->unreferenced.count == 1 ? "" : "s",
               r->unreferenced.bytes, r->unreferenced_percent, r->listed_files,
               r->listed_files == 1 ? "" : "s");
    else
        icm_cli_line(stdout, "  unreferenced: unknown (%s)",
                     r->listing_error != NULL ? r->listing_error : "not listed");
    double sp = small_percent(r);
    printf("  manifests: %zu in the current snapshot, %zu small (< %" PRId64 " bytes%s%.2f%%); "
           "per snapshot mean %.2f, max %zu\n",
           r->current_manifests.count, r->current_small_manifests, r->small_manifest_bytes,
           sp >= 0 ? ": " : "", sp >= 0 ? sp : 0.0, r->manifests_per_snapshot_mean,
           r->manifests_per_snapshot_max);
    if (r->last_expire_ms >= 0)
        printf("  last expiry: %s (%s ago)\n",
               icm_cli_format_time(r->last_expire_ms, t1, sizeof t1),
               format_age(r->last_expire_age_ms, t2, sizeof t2));
    else
        printf("  last expiry: none recorded (%s)%s\n", ICM_LAST_EXPIRE_PROPERTY,
               r->snapshots_expired_before ? "; snapshots were expired before" : "");
    if (r->unreadable_files == 0)
        printf("  integrity: every manifest list and manifest of the retained snapshots reads "
               "whole\n");
    else
        icm_cli_line(stdout, "  integrity: %zu cannot be trusted; the first: %s",
                     r->unreadable_files, r->unreadable_first);
    for (size_t i = 0; i < th->breach_count; i++)
        icm_cli_line(stdout, "  UNHEALTHY %s: %s", threshold_names[th->breaches[i].threshold],
               th->breaches[i].message);
    printf("  %s\n", th->breach_count == 0 ? "healthy" : "unhealthy");
}

/* ---- --metrics FILE (Prometheus text exposition format 0.0.4) ---- */

/* A label value: printable first (icm_escape_text), then the format's escapes. */
static void put_label(FILE *f, const char *key, const char *value, bool first)
{
    char *text = icm_cli_escape_text(value != NULL ? value : "");
    fprintf(f, "%s%s=\"", first ? "" : ",", key);
    for (const char *c = text != NULL ? text : "?"; *c; c++) {
        if (*c == '\\' || *c == '"')
            fputc('\\', f);
        fputc(*c, f);
    }
    fputc('"', f);
    free(text);
}

static void put_sample(FILE *f, const char *name, const table_health *th, const char *label,
                       const char *label_value, double value)
{
    fprintf(f, "%s{", name);
    put_label(f, "namespace", th->ns != NULL ? th->ns : "", true);
    put_label(f, "table", th->name, false);
    if (label != NULL)
        put_label(f, label, label_value, false);
    char num[32];
    fprintf(f, "} %s\n", icm_cli_format_double(value, num, sizeof num));
}

static void put_family(FILE *f, const char *name, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* The value of family `k` for a measured table; false when unknown (no sample). */
enum { M_UP, M_HEALTHY, M_SNAPSHOTS, M_OLDEST_AGE, M_MD_FILES, M_MD_BYTES, M_REF_BYTES,
       M_REF_FILES, M_UNREF_BYTES, M_UNREF_FILES, M_UNREF_PCT, M_MANIFESTS, M_MANIFESTS_MEAN,
       M_MANIFESTS_MAX, M_SMALL_PCT, M_EXPIRE_AGE, M_BREACHED, M_COUNT };

static const char *const metric_names[M_COUNT][2] = {
    {"icemaint_health_up", "1 when the table could be measured, else 0"},
    {"icemaint_health_healthy", "1 when no threshold is breached, else 0"},
    {"icemaint_health_snapshots", "snapshots retained in the metadata"},
    {"icemaint_health_oldest_snapshot_age_seconds", "age of the oldest snapshot"},
    {"icemaint_health_metadata_files", "metadata documents listed in the metadata folders"},
    {"icemaint_health_metadata_bytes", "bytes of the metadata documents listed"},
    {"icemaint_health_referenced_bytes",
     "bytes of the data and delete files referenced (scope: current snapshot or all snapshots, "
     "each file once)"},
    {"icemaint_health_referenced_files", "data and delete files referenced (scope as above)"},
    {"icemaint_health_unreferenced_bytes",
     "bytes of files under the location no snapshot or metadata file references"},
    {"icemaint_health_unreferenced_files",
     "files under the location no snapshot or metadata file references"},
    {"icemaint_health_unreferenced_percent",
     "unreferenced bytes as a percentage of unreferenced and referenced data and delete bytes"},
    {"icemaint_health_manifests", "manifests of the current snapshot"},
    {"icemaint_health_manifests_per_snapshot_mean", "mean manifests per retained snapshot"},
    {"icemaint_health_manifests_per_snapshot_max", "most manifests of a retained snapshot"},
    {"icemaint_health_small_manifests_percent",
     "percentage of the current snapshot's manifests below the small bound"},
    {"icemaint_health_last_expire_age_seconds",
     "age of the last expiry icemaint recorded (icemaint.last-expire-ms)"},
    {"icemaint_health_threshold_breached", "1 for each threshold the table breaches"},
};

static void put_family_samples(FILE *f, int k, const table_health *ths, size_t n)
{
    put_family(f, metric_names[k][0], metric_names[k][1]);
    const char *name = metric_names[k][0];
    for (size_t i = 0; i < n; i++) {
        const table_health *th = &ths[i];
        const icm_health_report *r = th->r;
        if (k == M_UP) {
            put_sample(f, name, th, NULL, NULL, r != NULL);
            continue;
        }
        if (r == NULL)
            continue;
        switch (k) {
        case M_HEALTHY:
            put_sample(f, name, th, NULL, NULL, th->breach_count == 0);
            break;
        case M_SNAPSHOTS:
            put_sample(f, name, th, NULL, NULL, (double)r->snapshot_count);
            break;
        case M_OLDEST_AGE:
            if (r->oldest_snapshot_ms >= 0)
                put_sample(f, name, th, NULL, NULL, (double)r->oldest_snapshot_age_ms / 1000.0);
            break;
        case M_MD_FILES:
            put_sample(f, name, th, NULL, NULL, (double)metadata_file_count(r));
            break;
        case M_MD_BYTES:
            if (r->metadata_files.bytes >= 0)
                put_sample(f, name, th, NULL, NULL, (double)r->metadata_files.bytes);
            break;
        case M_REF_BYTES:
        case M_REF_FILES: {
            bool bytes = k == M_REF_BYTES;
            const icm_health_files *c[2] = {&r->current_data_files, &r->current_delete_files};
            const icm_health_files *a[2] = {&r->retained_data_files, &r->retained_delete_files};
            double cv = bytes ? (double)(c[0]->bytes + c[1]->bytes)
                              : (double)(c[0]->count + c[1]->count);
            double av = bytes ? (double)(a[0]->bytes + a[1]->bytes)
                              : (double)(a[0]->count + a[1]->count);
            put_sample(f, name, th, "scope", "current", cv);
            put_sample(f, name, th, "scope", "all_snapshots", av);
            break;
        }
        case M_UNREF_BYTES:
            if (r->listed)
                put_sample(f, name, th, NULL, NULL, (double)r->unreferenced.bytes);
            break;
        case M_UNREF_FILES:
            if (r->listed)
                put_sample(f, name, th, NULL, NULL, (double)r->unreferenced.count);
            break;
        case M_UNREF_PCT:
            if (r->listed)
                put_sample(f, name, th, NULL, NULL, r->unreferenced_percent);
            break;
        case M_MANIFESTS:
            put_sample(f, name, th, NULL, NULL, (double)r->current_manifests.count);
            break;
        case M_MANIFESTS_MEAN:
            put_sample(f, name, th, NULL, NULL, r->manifests_per_snapshot_mean);
            break;
        case M_MANIFESTS_MAX:
            put_sample(f, name, th, NULL, NULL, (double)r->manifests_per_snapshot_max);
            break;
        case M_SMALL_PCT:
            if (small_percent(r) >= 0)
                put_sample(f, name, th, NULL, NULL, small_percent(r));
            break;
        case M_EXPIRE_AGE:
            if (r->last_expire_ms >= 0)
                put_sample(f, name, th, NULL, NULL, (double)r->last_expire_age_ms / 1000.0);
            break;
        case M_BREACHED:
            for (size_t b = 0; b < th->breach_count; b++)
                put_sample(f, name, th, "threshold",
                           threshold_names[th->breaches[b].threshold], 1);
            break;
        default:
            break;
        }
    }
}

static int write_metrics(const char *path, const table_health *ths, size_t n, int64_t now_ms,
                         int exit_code)
{
    char *tmp = NULL;
    int rc = ICM_EXIT_OK;
    FILE *f = icm_cli_metrics_create(path, &tmp, &rc);
    if (f == NULL)
        return rc;
    for (int k = 0; k < M_COUNT; k++)
        put_family_samples(f, k, ths, n);
    put_family(f, "icemaint_health_exit_code", "the exit code of the last health run");
    fprintf(f, "icemaint_health_exit_code %d\n", exit_code);
    put_family(f, "icemaint_health_last_run_timestamp_seconds",
               "when the last health run measured (its now)");
    fprintf(f, "icemaint_health_last_run_timestamp_seconds %.3f\n", (double)now_ms / 1000.0);
    return icm_cli_metrics_publish(f, tmp, path);
}

/* ---- the tables ---- */

typedef struct table_list {
    table_health *v;
    size_t len, cap;
    const char *ns;
    bool oom;
} table_list;

static table_health *push_table(table_list *l, const char *ns, const char *name,
                                const char *table)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        table_health *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    table_health *th = &l->v[l->len];
    memset(th, 0, sizeof *th);
    th->name = strdup(name);
    th->ns = ns != NULL ? strdup(ns) : NULL;
    th->table = table != NULL ? strdup(table) : NULL;
    if (th->name == NULL || (ns != NULL && th->ns == NULL) ||
        (table != NULL && th->table == NULL)) {
        free(th->name);
        free(th->ns);
        free(th->table);
        return NULL;
    }
    l->len++;
    return th;
}

static int add_table(const char *table, void *payload)
{
    table_list *l = payload;
    size_t n = strlen(l->ns) + 1 + strlen(table) + 1;
    char *name = malloc(n);
    if (name != NULL)
        snprintf(name, n, "%s.%s", l->ns, table);
    bool ok = name != NULL && push_table(l, l->ns, name, table) != NULL;
    free(name);
    if (!ok) {
        l->oom = true;
        return ICM_ENOMEM;
    }
    return 0;
}

/* The tables of `ns` (NULL: the catalog's root, which holds none) and of every namespace
 * below it, depth first, in the catalog's order. */
static int collect_tables(icm_cli *cli, icm_catalog *cat, table_list *tl, const char *ns,
                          int depth)
{
    if (depth > 64)
        return icm_cli_error(ns, "namespaces nest deeper than 64 levels");
    if (ns != NULL) {
        tl->ns = ns;
        int lrc = icm_catalog_list_tables(cat, ns, add_table, tl);
        if (tl->oom)
            return icm_cli_oom();
        if (lrc != 0)
            return icm_cli_fail(cli, lrc);
    }
    icm_cli_names children = {NULL, 0, 0, false};
    int lrc = icm_catalog_list_namespaces(cat, ns, icm_cli_names_add, &children);
    int rc = children.oom ? icm_cli_oom() : lrc != 0 ? icm_cli_fail(cli, lrc) : ICM_EXIT_OK;
    for (size_t i = 0; rc == ICM_EXIT_OK && i < children.len; i++)
        rc = collect_tables(cli, cat, tl, children.names[i], depth + 1);
    icm_cli_names_free(&children);
    return rc;
}

static void table_list_free(table_list *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free(l->v[i].name);
        free(l->v[i].ns);
        free(l->v[i].table);
        free(l->v[i].error);
        icm_health_report_free(l->v[i].r);
    }
    free(l->v);
}

/* 1 wins over 6 (a table that cannot be measured may be anything), 6 over 0. */
static int worse(int a, int b)
{
    if (a == ICM_EXIT_OK)
        return b;
    if (b == ICM_EXIT_OK || a == b)
        return a;
    return a == ICM_EXIT_PROBLEMS ? b : b == ICM_EXIT_PROBLEMS ? a : a < b ? a : b;
}

static int print_one(icm_cli *cli, const table_health *th, bool all)
{
    if (!cli->json) {
        print_text(th);
        return ICM_EXIT_OK;
    }
    bool ok = true;
    json_t *doc = report_json(th, &ok);
    if (!all)
        return icm_cli_json_print(doc, ok);
    icm_cli_json_mark_printed();
    bool written = ok && icm_cli_json_write(stdout, doc, false);
    json_decref(doc);
    if (written)
        return ICM_EXIT_OK;
    return ok ? icm_cli_error("stdout", "cannot write") : icm_cli_json_failed();
}

static int print_summary(icm_cli *cli, const table_list *tl, int rc)
{
    size_t healthy = 0, unhealthy = 0, failed = 0;
    for (size_t i = 0; i < tl->len; i++) {
        if (tl->v[i].r == NULL)
            failed++;
        else if (tl->v[i].breach_count > 0)
            unhealthy++;
        else
            healthy++;
    }
    if (!cli->json) {
        printf("%zu tables: %zu healthy, %zu unhealthy, %zu not measured\n", tl->len, healthy,
               unhealthy, failed);
        return ICM_EXIT_OK;
    }
    bool ok = true;
    json_t *doc = json_object(), *sum = json_object();
    icm_cli_json_set(sum, "tables", icm_cli_json_int((int64_t)tl->len), &ok);
    icm_cli_json_set(sum, "healthy", icm_cli_json_int((int64_t)healthy), &ok);
    icm_cli_json_set(sum, "unhealthy", icm_cli_json_int((int64_t)unhealthy), &ok);
    icm_cli_json_set(sum, "failed", icm_cli_json_int((int64_t)failed), &ok);
    icm_cli_json_set(sum, "exit_code", icm_cli_json_int(rc), &ok);
    icm_cli_json_set(doc, "summary", sum, &ok);
    icm_cli_json_mark_printed();
    bool written = ok && doc != NULL && icm_cli_json_write(stdout, doc, false);
    json_decref(doc);
    if (written)
        return ICM_EXIT_OK;
    return ok ? icm_cli_error("stdout", "cannot write") : icm_cli_json_failed();
}

static int run_health(icm_cli *cli, int argc, char **argv)
{
    health_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc != ICM_EXIT_OK)
        return rc;
    char **own = NULL;
    size_t n_own = 0;
    rc = catalog_files(cli, &own, &n_own);
    if (rc != ICM_EXIT_OK)
        return rc;
    icm_health_options o = ICM_HEALTH_OPTIONS_INIT;
    o.now_ms = a.now_ms;
    o.small_manifest_bytes = a.small_bytes;
    o.no_listing = a.no_listing;
    o.catalog_files = (const char *const *)own;
    o.catalog_file_count = n_own;
    table_list tl = {NULL, 0, 0, NULL, false};
    icm_catalog *cat = NULL;
    int metrics_rc = ICM_EXIT_OK; /* FILE inside a table's location: refused, not written */
    if (a.all) {
        rc = icm_cli_catalog_open(cli, &cat);
        if (rc == ICM_EXIT_OK)
            rc = collect_tables(cli, cat, &tl, NULL, 0);
        for (size_t i = 0; rc == ICM_EXIT_OK && i < tl.len; i++) {
            table_health *th = &tl.v[i];
            icm_table *t = NULL;
            int lrc = load_by_levels(cat, th, &t);
            if (lrc != 0)
                record_error(th, icm_cli_fail(cli, lrc), lrc);
            else
                measure(cli, &a, &o, t, th);
            if (lrc == 0 && a.metrics != NULL && metrics_rc == ICM_EXIT_OK)
                metrics_rc = icm_cli_out_file_check_table("--metrics", a.metrics, false, t);
            icm_table_free(t);
            int prc = print_one(cli, th, true);
            if (prc != ICM_EXIT_OK)
                rc = prc;
        }
    } else {
        icm_table *t = NULL;
        table_health *th = push_table(&tl, NULL, a.table, NULL);
        rc = th == NULL ? icm_cli_oom() : icm_cli_table_load(cli, a.table, &cat, &t);
        if (th != NULL && rc != ICM_EXIT_OK) {
            /* reported already; the metrics still say the table is down */
            record_error(th, rc, icm_error_last()->code);
            rc = ICM_EXIT_OK;
        } else if (rc == ICM_EXIT_OK) {
            const char *dot = strrchr(a.table, '.');
            if (icm_cli_is_catalog_name(a.table) && dot != NULL &&
                (th->ns = malloc((size_t)(dot - a.table) + 1)) != NULL) {
                snprintf(th->ns, (size_t)(dot - a.table) + 1, "%s", a.table);
                if ((th->table = strdup(dot + 1)) == NULL) {
                    free(th->ns); /* (no memory: reported without its namespace) */
                    th->ns = NULL;
                }
            }
            measure(cli, &a, &o, t, th);
            if (a.metrics != NULL)
                metrics_rc = icm_cli_out_file_check_table("--metrics", a.metrics, false, t);
            /* a failure is on stderr already (and, with --json, main's error document) */
            if (th->r != NULL)
                rc = print_one(cli, th, false);
        }
        icm_table_free(t);
    }
    int worst = ICM_EXIT_OK;
    for (size_t i = 0; i < tl.len; i++)
        worst = worse(worst, tl.v[i].exit_code);
    if (rc == ICM_EXIT_OK && a.all)
        rc = print_summary(cli, &tl, worst);
    if (rc == ICM_EXIT_OK)
        rc = metrics_rc;
    if (rc == ICM_EXIT_OK && a.metrics != NULL)
        rc = write_metrics(a.metrics, tl.v, tl.len, a.now_ms, worst);
    if (rc == ICM_EXIT_OK)
        rc = worst;
    table_list_free(&tl);
    icm_catalog_free(cat);
    icm_catalog_own_files_free(own, n_own);
    return rc;
}

const icm_cli_command icm_cli_cmd_health = {
    "health",
    "storage and retention picture; thresholds become the exit code",
    health_help,
    run_health,
};
