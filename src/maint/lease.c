/*
 * maint/lease.c: the table lease of a run that deletes (icemaint/maint.h, issue #16 class 6).
 *
 * The lease is `<table location>/metadata/.icemaint-lease` (the folder of the current metadata
 * file for a table whose location is relative), a JSON object
 * {owner, host, pid, start_ms, expires_ms, command, token} created with the FileIO's create-new
 * (local: a no-replace rename; object stores: a conditional write), so of two runs starting at
 * once exactly one creates it. The other reads it and is refused while it has not expired.
 *
 * A stale lease is taken over: one past its expiry (now >= expires_ms: its run died without
 * releasing it), or one whose holder ran on this host (the same hostname) under a pid that no
 * longer exists (kill(pid, 0) fails with ESRCH: it crashed, so waiting out the 10 minutes helps
 * nobody). A holder on another host, or whose pid is alive (or cannot be told: EPERM means it
 * exists), keeps its lease until it expires. (Hosts that share a hostname but not a pid
 * namespace, such as containers given the same name, would see each other's holders as dead:
 * give them distinct hostnames.) The takeover goes in three steps, each a
 * create-new or a check of the token, so two runs taking over the same stale lease cannot both
 * win: create-new the marker `.icemaint-lease.takeover-<stale token>` (only one run can), read
 * the lease again and delete it only if it still carries the stale token, then create-new our
 * own lease (which fails if a third run created one meanwhile: then we read that one and are
 * refused). The marker is removed afterwards; one left by a crash only names a token no lease
 * carries any more.
 *
 * Renewal and release check the token first, so a run never extends or removes a lease that is
 * not its own (after its own expired and another run took over, it learns so and stops).
 *
 * All of this rests on create-new letting exactly one of two writers win. Many S3-compatible
 * stores ignore `If-None-Match: *` and overwrite: there two runs would both "hold" the lease.
 * So on an object store the lease's folder is probed first (io/create_new_probe.c, three
 * requests), and a store that ignores create-new is refused with the override named.
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "icemaint/maint.h"
#include "io/fileio_internal.h"
#include "maint/lease_internal.h"
#include "spec/metadata_internal.h"
#include "util/location.h"
#include "util/util.h"

#define TAKEOVER_ROUNDS 4
/* At most this long (and a quarter of the lifetime) between reads of the lease by
 * icm__lease_keep. */
#define KEEP_CHECK_INTERVAL_MS 5000

struct icm_lease {
    icm_fileio *io;
    char *location;
    char *command;
    char token[33];      /* 128 random bits, hex */
    int64_t start_ms;
    int64_t expires_ms;
    int64_t ttl_ms;
    int64_t checked_ms;  /* when icm__lease_keep last found the lease ours (0: never) */
};

/* What a lease file says. Strings owned. */
typedef struct lease_doc {
    char *owner;
    char *host;
    char *command;
    char *token;
    long long pid;
    int64_t start_ms;
    int64_t expires_ms;
} lease_doc;

static void doc_dispose(lease_doc *d)
{
    icm__free(d->owner);
    icm__free(d->host);
    icm__free(d->command);
    icm__free(d->token);
    memset(d, 0, sizeof *d);
}

/* ------------------------------------------------------------------------------------------ */
/* content                                                                                     */

static void new_token(char out[33])
{
    unsigned char raw[16];
    ssize_t got = getrandom(raw, sizeof raw, 0);
    if (got != (ssize_t)sizeof raw) {
        /* no entropy source: time, pid and an address still tell two runs apart */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t a = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
        uint64_t b = (uint64_t)getpid() ^ (uint64_t)(uintptr_t)out;
        memcpy(raw, &a, 8);
        memcpy(raw + 8, &b, 8);
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static const char *owner_name(void)
{
    const char *user = getenv("USER");
    if (user != NULL && user[0] != '\0')
        return user;
    struct passwd *pw = getpwuid(geteuid());
    return pw != NULL && pw->pw_name != NULL ? pw->pw_name : "unknown";
}

/* This host's name, or "unknown". */
static void host_name(char *host, size_t n)
{
    if (gethostname(host, n) != 0)
        snprintf(host, n, "unknown");
    host[n - 1] = '\0';
}

/* The JSON text of our lease (new string, icm__free). NULL on allocation failure. */
static char *lease_text(const icm_lease *l)
{
    char host[256];
    host_name(host, sizeof host);
    json_t *doc = json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:s}", "owner", owner_name(),
                            "host", host, "pid", (json_int_t)getpid(), "start_ms",
                            (json_int_t)l->start_ms, "expires_ms", (json_int_t)l->expires_ms,
                            "command", l->command, "token", l->token);
    if (doc == NULL)
        return NULL;
    char *text = icm__json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    return text;
}

static bool hex_token(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static char *dup_or_unknown(json_t *v)
{
    const char *s = json_string_value(v);
    return icm__strdup(s != NULL ? s : "unknown");
}

/* Parse a lease file's text. Returns 0, ICM_EINVALID (not a lease), ICM_ENOMEM. */
static int parse_doc(const char *location, const char *text, size_t len, lease_doc *out)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    int rc = icm__json_parse(text, len, location, &doc);
    if (rc == ICM_ENOMEM)
        return rc;
    json_t *token = json_object_get(doc, "token"), *expires = json_object_get(doc, "expires_ms");
    if (rc != 0 || !json_is_object(doc) || !hex_token(json_string_value(token)) ||
        !json_is_integer(expires)) {
        json_decref(doc);
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, location,
                              "not an icemaint table lease (expected a JSON object with token "
                              "and expires_ms); remove it if no icemaint run is active");
    }
    out->token = icm__strdup(json_string_value(token));
    out->owner = dup_or_unknown(json_object_get(doc, "owner"));
    out->host = dup_or_unknown(json_object_get(doc, "host"));
    out->command = dup_or_unknown(json_object_get(doc, "command"));
    out->pid = (long long)json_integer_value(json_object_get(doc, "pid"));
    out->start_ms = (int64_t)json_integer_value(json_object_get(doc, "start_ms"));
    out->expires_ms = (int64_t)json_integer_value(expires);
    json_decref(doc);
    if (out->token == NULL || out->owner == NULL || out->host == NULL || out->command == NULL) {
        doc_dispose(out);
        return ICM_ENOMEM;
    }
    return 0;
}

/* Read the lease file. *gone: it does not exist. Returns 0 or the read/parse code. */
static int read_doc(icm_fileio *io, const char *location, lease_doc *out, bool *gone)
{
    memset(out, 0, sizeof *out);
    *gone = false;
    char *text = NULL;
    size_t len = 0;
    int rc = icm_fileio_read(&text, &len, io, location);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        *gone = true;
        return 0;
    }
    if (rc == 0)
        rc = parse_doc(location, text, len, out);
    icm__free(text);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* acquiring                                                                                   */

static void format_ms(int64_t ms, char *buf, size_t n)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (gmtime_r(&secs, &tm) == NULL || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, n, "%lld ms", (long long)ms);
}

static int refuse_held(const char *location, const lease_doc *d)
{
    char since[40], until[40];
    format_ms(d->start_ms, since, sizeof since);
    format_ms(d->expires_ms, until, sizeof until);
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                          "another run holds this table's lease: %s on %s, pid %lld, %s since "
                          "%s (expires %s); refusing to run alongside it (wait for it; if it "
                          "is gone, remove this file, or override with --no-lock, which leaves "
                          "the file in place)",
                          d->owner, d->host, d->pid, d->command, since, until);
}

/* <table location>/metadata/ICM_LEASE_FILE_NAME into *out (icm__free): a place that does not
 * move when a commit moves write.metadata.path (issue #16 round 8: a run that took its lease
 * beside the current metadata file, and a second run after such a commit, held two leases).
 * A table whose metadata names its location relatively (some engines' test tables) keeps it
 * in the folder of its current metadata file. Returns 0, ICM_EINVALID (neither names a
 * folder), ICM_ENOMEM. */
static int lease_location(const icm_table *t, char **out)
{
    const char *loc = icm_table_metadata_location(icm_table_get_metadata(t));
    if (loc != NULL && icm__location_is_absolute(loc)) {
        size_t n = strlen(loc);
        while (n > 1 && loc[n - 1] == '/')
            n--;
        *out = icm__sprintf("%.*s/metadata/%s", (int)n, loc, ICM_LEASE_FILE_NAME);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    const char *md = icm_table_get_metadata_location(t);
    const char *slash = md != NULL ? strrchr(md, '/') : NULL;
    if (slash == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, md,
                              "the table's metadata location names no folder for its lease");
    *out = icm__sprintf("%.*s/%s", (int)(slash - md), md, ICM_LEASE_FILE_NAME);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

/* Whether the lease's holder is known to be gone: it ran on this host under a pid that no
 * process has now. Anything else (another host, an unknown host, a live or unknowable pid)
 * is not known, and the lease stands until it expires. */
static bool holder_dead(const lease_doc *d)
{
    char host[256];
    host_name(host, sizeof host);
    if (strcmp(host, "unknown") == 0 || strcmp(d->host, host) != 0 || d->pid <= 0 ||
        d->pid != (long long)(pid_t)d->pid)
        return false;
    return kill((pid_t)d->pid, 0) != 0 && errno == ESRCH;
}

/* `rc` of a create-new of `loc` with `data`, settled: a lost answer (ICM_EOUTCOME_UNKNOWN)
 * whose write is there with our bytes (they name this run's token) is 0, as if answered;
 * otherwise `rc` stands, and a file that may have landed is left in place (it may be another
 * run's, or ours still on its way: never deleted on a guess; a lease expires). */
static int settle_create(icm_lease *l, const char *loc, const char *data, int rc)
{
    if (rc != ICM_EOUTCOME_UNKNOWN)
        return rc;
    char why[256];
    snprintf(why, sizeof why, "%s", icm_error_last()->message);
    bool ours = false;
    if (icm_fileio_holds(&ours, l->io, loc, data, strlen(data)) == 0 && ours) {
        icm_error_clear();
        return 0;
    }
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EOUTCOME_UNKNOWN, loc,
                          "creating it had an unknown outcome (%s) and it does not hold this "
                          "run's token: the lease is not held; the file is left in place",
                          why);
}

/*
 * The lease holds `stale` (expired, or its holder dead): replace it with ours, unless another
 * run is doing so. Sets
 * *won when ours is in place; otherwise the caller looks again. Returns 0, ICM_EREFUSED
 * (another run is taking it over), or an I/O code.
 */
static int take_over(icm_lease *l, const lease_doc *stale, const char *text, bool *won)
{
    *won = false;
    char *marker = icm__sprintf("%s.takeover-%s", l->location, stale->token);
    if (marker == NULL)
        return ICM_ENOMEM;
    int rc = settle_create(l, marker, l->token,
                           icm_fileio_create_new(l->io, marker, l->token, strlen(l->token)));
    if (rc != 0) {
        icm__free(marker);
        /* another run holds the marker (or we cannot tell): never remove a marker not ours */
        return rc == ICM_EEXISTS ? refuse_held(l->location, stale) : rc;
    }
    lease_doc now;
    bool gone = false;
    rc = read_doc(l->io, l->location, &now, &gone);
    bool same = rc == 0 && !gone && strcmp(now.token, stale->token) == 0;
    if (rc == 0 && !gone)
        doc_dispose(&now);
    if (same)
        rc = icm_fileio_delete(l->io, l->location);
    if (rc == 0 && (same || gone)) {
        rc = settle_create(l, l->location, text,
                           icm_fileio_create_new(l->io, l->location, text, strlen(text)));
        *won = rc == 0;
        if (rc == ICM_EEXISTS) {
            icm_error_clear();
            rc = 0; /* a third run was quicker: look at its lease */
        }
    }
    icm__error_saved *saved = rc != 0 ? icm__error_save() : NULL;
    (void)icm_fileio_delete(l->io, marker); /* best effort: a stale marker names a dead token */
    icm_error_clear();
    icm__error_restore(saved);
    icm__free(marker);
    return rc;
}

/* One round: create our lease, or learn who holds it (refused) or that it is stale (taken
 * over). *done when the lease is ours. */
static int try_acquire(icm_lease *l, const char *text, int64_t now_ms, bool *done)
{
    *done = false;
    int rc = settle_create(l, l->location, text,
                           icm_fileio_create_new(l->io, l->location, text, strlen(text)));
    if (rc == 0) {
        *done = true;
        return 0;
    }
    if (rc != ICM_EEXISTS)
        return rc;
    icm_error_clear();
    lease_doc held;
    bool gone;
    if ((rc = read_doc(l->io, l->location, &held, &gone)) != 0 || gone)
        return rc; /* released meanwhile: try again */
    if (now_ms < held.expires_ms && !holder_dead(&held))
        rc = refuse_held(l->location, &held);
    else
        rc = take_over(l, &held, text, done);
    doc_dispose(&held);
    return rc;
}

/* On an object store, prove that it honours create-new in the lease's folder (file comment). */
static int require_create_new(icm_lease *l)
{
    if (icm__fileio_deletes_locally(l->io, l->location))
        return 0;
    char *dir = icm__strdup(l->location);
    if (dir == NULL)
        return ICM_ENOMEM;
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    bool honoured = false;
    const char *step = NULL;
    int rc = icm__fileio_create_new_honoured(l->io, dir, &honoured, &step);
    if (rc == 0 && !honoured) {
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, l->location,
                            "cannot take the table lease: this store ignores create-new "
                            "(If-None-Match: *), so two runs could both hold it; make sure no "
                            "other maintenance run works on this table and use --no-lock");
    } else if (rc != 0 && rc != ICM_ENOMEM && step != NULL) {
        char why[400];
        snprintf(why, sizeof why, "%s", icm_error_last()->message);
        rc = icm__error_set(ICM_ERRCLASS_MAINT, rc, l->location,
                            "cannot take the table lease: checking that the store honours "
                            "create-new (%s) failed: %s",
                            step, why);
    }
    icm__free(dir);
    return rc;
}

int icm_lease_acquire(icm_lease **out, icm_table *t, const icm_lease_options *opts)
{
    if (out != NULL)
        *out = NULL;
    if (out == NULL || t == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_lease_acquire: table and out are required");
    if (opts != NULL && opts->version != ICM_LEASE_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL,
                              "icm_lease_options: unknown version %u (use ICM_LEASE_OPTIONS_INIT)",
                              opts->version);
    icm_lease_options defaults = ICM_LEASE_OPTIONS_INIT;
    const icm_lease_options *o = opts != NULL ? opts : &defaults;
    if (icm_table_is_read_only(t))
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREADONLY, icm_table_get_identifier(t),
                              "a table opened from a metadata file cannot be leased (it is "
                              "read-only)");
    icm_lease *l = icm__calloc(1, sizeof *l);
    if (l == NULL)
        return ICM_ENOMEM;
    l->io = icm_table_get_fileio(t);
    l->ttl_ms = o->ttl_ms > 0 ? o->ttl_ms : ICM_LEASE_DEFAULT_TTL_MS;
    l->start_ms = o->now_ms != 0 ? o->now_ms : icm__now_ms();
    l->expires_ms = l->start_ms + l->ttl_ms;
    new_token(l->token);
    char *text = NULL;
    int rc = lease_location(t, &l->location);
    if (rc == 0 && (l->command = icm__strdup(o->command != NULL ? o->command : "icemaint")) == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0 && (text = lease_text(l)) == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0)
        rc = require_create_new(l);
    bool done = false;
    for (int round = 0; rc == 0 && !done && round < TAKEOVER_ROUNDS; round++)
        rc = try_acquire(l, text, l->start_ms, &done);
    if (rc == 0 && !done)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, l->location,
                            "the table's lease changed hands %d times while we tried to take "
                            "it; another run is starting (override with --no-lock)",
                            TAKEOVER_ROUNDS);
    icm__free(text);
    if (rc != 0) {
        icm_lease_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* renewing and releasing                                                                      */

/* Whether the lease file still carries our token (*gone: it is not there). */
static int still_ours(icm_lease *l, bool *ours, bool *gone)
{
    lease_doc d;
    *ours = false;
    int rc = read_doc(l->io, l->location, &d, gone);
    if (rc == 0 && !*gone) {
        *ours = strcmp(d.token, l->token) == 0;
        doc_dispose(&d);
    }
    return rc;
}

int icm_lease_renew(icm_lease *l, int64_t now_ms)
{
    if (l == NULL)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, NULL, "icm_lease_renew: NULL");
    int64_t now = now_ms != 0 ? now_ms : icm__now_ms();
    bool ours, gone;
    int rc = still_ours(l, &ours, &gone);
    if (rc != 0)
        return rc;
    if (!ours)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, l->location,
                              "this run's table lease is %s (it expired and another run may "
                              "have taken over): stopping before deleting anything more",
                              gone ? "gone" : "held by another run now");
    if (now < l->expires_ms - l->ttl_ms / 2)
        return 0;
    int64_t old = l->expires_ms;
    l->expires_ms = now + l->ttl_ms;
    char *text = lease_text(l);
    rc = text != NULL ? icm_fileio_write_replace(l->io, l->location, text, strlen(text))
                      : ICM_ENOMEM;
    icm__free(text);
    if (rc != 0)
        l->expires_ms = old;
    return rc;
}

int icm_lease_release(icm_lease *l)
{
    if (l == NULL)
        return 0;
    bool ours, gone;
    int rc = still_ours(l, &ours, &gone);
    if (rc == 0 && ours)
        rc = icm_fileio_delete(l->io, l->location);
    return rc;
}

const char *icm_lease_location(const icm_lease *l)
{
    return l != NULL ? l->location : NULL;
}

void icm_lease_free(icm_lease *l)
{
    if (l == NULL)
        return;
    icm__free(l->location);
    icm__free(l->command);
    icm__free(l);
}

int icm__lease_keep(icm_lease *l)
{
    /* A takeover needs the lease expired (or its holder dead on this host: not us, running).
     * A check that found it ours left it valid for at least half its lifetime, so for a
     * quarter of it nobody else can hold it: reading it again before every delete batch (a
     * request each on an object store) proves nothing new. */
    int64_t now = icm__now_ms();
    int64_t interval = l->ttl_ms / 4 < KEEP_CHECK_INTERVAL_MS ? l->ttl_ms / 4
                                                             : KEEP_CHECK_INTERVAL_MS;
    if (l->checked_ms != 0 && now - l->checked_ms < interval &&
        now < l->expires_ms - l->ttl_ms / 2)
        return 0;
    int rc = icm_lease_renew(l, now);
    if (rc == 0)
        l->checked_ms = now;
    return rc;
}
