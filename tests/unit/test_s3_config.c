/*
 * test_s3_config.c: resolving the S3 back end's configuration (io/s3/s3_config.h) and reading
 * the AWS shared files (io/s3/aws_ini.h).
 *
 * Precedence: each source beats the next (property > environment > profile file > default)
 * for the region, the endpoint and the attempts; AWS_IGNORE_CONFIGURED_ENDPOINT_URLS drops the
 * AWS-configured endpoints but never `s3.endpoint`. Addressing follows PyIceberg (path style
 * for a custom endpoint unless s3.force-virtual-addressing) and Java's s3.path-style-access
 * either way. Every bad value is ICM_EINVALID naming its property, variable or file:line. The
 * INI reader: comments, white space, inline comments, continuation lines, the services
 * sub-block, [profile x] against [x], and malformed lines refused with file:line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_testenv.h"
#include "icemaint/fileio.h"
#include "io/s3/aws_ini.h"
#include "io/s3/s3_config.h"
#include "testutil.h"
#include "util/util.h"

#define P(k, v) {(k), (v)}

static icm__s3_config resolve_ok(const icm_property *props, size_t n)
{
    icm__s3_config cfg;
    icmt_ok(icm__s3_config_resolve(&cfg, props, n));
    return cfg;
}

/* Resolution fails with ICM_EINVALID, and *cfg holds nothing. */
static void resolve_invalid(const icm_property *props, size_t n)
{
    icm__s3_config cfg;
    memset(&cfg, 0x5a, sizeof cfg);
    assert_int_equal(icm__s3_config_resolve(&cfg, props, n), ICM_EINVALID);
    assert_null(cfg.endpoint);
    assert_null(cfg.region);
    assert_null(cfg.profile);
}

static void test_defaults(void **state)
{
    (void)state;
    icm__s3_config cfg = resolve_ok(NULL, 0);
    assert_string_equal(cfg.endpoint, "https://s3.us-east-1.amazonaws.com");
    assert_false(cfg.endpoint_is_custom);
    assert_string_equal(cfg.region, "us-east-1");
    assert_int_equal(cfg.addressing, ICM__S3_ADDRESSING_VIRTUAL);
    assert_string_equal(cfg.profile, "default");
    assert_false(cfg.anonymous);
    assert_int_equal(cfg.connect_timeout_ms, 10000);
    assert_int_equal(cfg.request_timeout_ms, 60000);
    assert_int_equal(cfg.max_attempts, 10);
    assert_int_equal(cfg.retry_total_ms, 120000);
    assert_int_equal(cfg.max_in_flight, 32);
    assert_int_equal(cfg.delete_batch_size, 1000);
    assert_null(cfg.ca_bundle);
    icm__s3_config_clear(&cfg);
}

static void expect_region(const icm_property *props, size_t n, const char *region)
{
    icm__s3_config cfg = resolve_ok(props, n);
    assert_string_equal(cfg.region, region);
    icm__s3_config_clear(&cfg);
}

static void test_region_precedence(void **state)
{
    awst_env *t = *state;
    char *f = awst_write(t, ".aws/config", "[default]\nregion = from-file\n");
    free(f);
    expect_region(NULL, 0, "from-file");
    setenv("AWS_DEFAULT_REGION", "default-env", 1);
    expect_region(NULL, 0, "default-env");
    setenv("AWS_REGION", "region-env", 1);
    expect_region(NULL, 0, "region-env");
    icm_property p1[] = {P("client.region", "client-prop")};
    expect_region(p1, 1, "client-prop");
    icm_property p2[] = {P("client.region", "client-prop"), P("s3.region", "s3-prop")};
    expect_region(p2, 2, "s3-prop");
    /* An empty property is absent, not "set to nothing". */
    icm_property p3[] = {P("s3.region", "")};
    expect_region(p3, 1, "region-env");
    /* The China partition's default endpoint. */
    icm_property p4[] = {P("s3.region", "cn-north-1")};
    icm__s3_config cfg = resolve_ok(p4, 1);
    assert_string_equal(cfg.endpoint, "https://s3.cn-north-1.amazonaws.com.cn");
    icm__s3_config_clear(&cfg);
    icm_property bad[] = {P("s3.region", "us east/1")};
    resolve_invalid(bad, 1);
    awst_msg_has("s3.region: \"us east/1\" is not a region name");
}

static void expect_endpoint(const icm_property *props, size_t n, const char *endpoint,
                            bool custom)
{
    icm__s3_config cfg = resolve_ok(props, n);
    assert_string_equal(cfg.endpoint, endpoint);
    assert_int_equal(cfg.endpoint_is_custom, custom);
    icm__s3_config_clear(&cfg);
}

static void test_endpoint_precedence(void **state)
{
    awst_env *t = *state;
    char *f = awst_write(t, ".aws/config",
                         "[profile p]\n"
                         "region = eu-west-1\n"
                         "endpoint_url = http://profile:1\n");
    free(f);
    setenv("AWS_PROFILE", "p", 1);
    expect_endpoint(NULL, 0, "http://profile:1", true);
    free(awst_write(t, ".aws/config",
                    "[profile p]\n"
                    "region = eu-west-1\n"
                    "endpoint_url = http://profile:1\n"
                    "services = local\n"
                    "[services local]\n"
                    "s3 =\n"
                    "  endpoint_url = http://services-s3:2\n"
                    "sts =\n"
                    "  endpoint_url = http://services-sts:3\n"));
    expect_endpoint(NULL, 0, "http://services-s3:2", true);
    setenv("AWS_ENDPOINT_URL", "http://global-env:3", 1);
    expect_endpoint(NULL, 0, "http://global-env:3", true);
    setenv("AWS_ENDPOINT_URL_S3", "http://s3-env:4/", 1);
    expect_endpoint(NULL, 0, "http://s3-env:4", true);
    icm_property p[] = {P("s3.endpoint", "https://prop.example:5")};
    expect_endpoint(p, 1, "https://prop.example:5", true);
    /* Ignoring the configured endpoints drops the environment's and the file's, never the
     * property. */
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
    expect_endpoint(NULL, 0, "https://s3.eu-west-1.amazonaws.com", false);
    expect_endpoint(p, 1, "https://prop.example:5", true);
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "maybe", 1);
    resolve_invalid(NULL, 0);
    awst_msg_has("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: \"maybe\" is not true or false");
    unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
    /* The profile can ask for it too. */
    unsetenv("AWS_ENDPOINT_URL_S3");
    unsetenv("AWS_ENDPOINT_URL");
    free(awst_write(t, ".aws/config",
                    "[profile p]\nendpoint_url = http://profile:1\n"
                    "ignore_configured_endpoint_urls = true\n"));
    expect_endpoint(NULL, 0, "https://s3.us-east-1.amazonaws.com", false);
}

static void test_endpoint_validation(void **state)
{
    (void)state;
    static const struct {
        const char *value, *want;
    } good[] = {
        {"HTTP://Host:9000/", "http://Host:9000"},
        {"https://s3.example.com", "https://s3.example.com"},
        {"http://127.0.0.1:65535", "http://127.0.0.1:65535"},
        {"http://[::1]:9000", "http://[::1]:9000"},
        {"http://[fd00:ec2::254]", "http://[fd00:ec2::254]"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        icm_property p[] = {P("s3.endpoint", good[i].value)};
        expect_endpoint(p, 1, good[i].want, true);
    }
    static const struct {
        const char *value, *why;
    } bad[] = {
        {"ftp://host", "the scheme must be http:// or https://"},
        {"host:9000", "the scheme must be http:// or https://"},
        {"http://", "no host"},
        {"http://:9000", "no host"},
        {"http://host/bucket", "an endpoint has no path, query or fragment"},
        {"http://host//", "an endpoint has no path, query or fragment"},
        {"http://host?x=1", "an endpoint has no path, query or fragment"},
        {"http://host:0", "the port must be a number from 1 to 65535"},
        {"http://host:65536", "the port must be a number from 1 to 65535"},
        {"http://host:", "the port must be a number from 1 to 65535"},
        {"http://host:9x", "a character that is not allowed in a host name"},
        {"http://ho st", "a character that is not allowed in a host name"},
        {"http://[::1", "an IPv6 host needs [address]"},
        {"http://[zz]", "a character that is not in an IPv6 address"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm_property p[] = {P("s3.endpoint", bad[i].value)};
        resolve_invalid(p, 1);
        char *want = icmt_sprintf("s3.endpoint: \"%s\" is not http(s)://host[:port]: %s",
                                  bad[i].value, bad[i].why);
        assert_string_equal(icm_error_last()->message, want);
        free(want);
    }
    /* User information may hold a password: refused without quoting the value. */
    icm_property p[] = {P("s3.endpoint", "http://user:hunter2@host")};
    resolve_invalid(p, 1);
    awst_msg_has("s3.endpoint: an endpoint is http(s)://host[:port], without user information");
    awst_msg_lacks("hunter2");
    setenv("AWS_ENDPOINT_URL_S3", "s3.example.com", 1);
    resolve_invalid(NULL, 0);
    awst_msg_has("AWS_ENDPOINT_URL_S3: \"s3.example.com\" is not http(s)://host[:port]");
}

static icm__s3_addressing addressing_of(const icm_property *props, size_t n)
{
    icm__s3_config cfg = resolve_ok(props, n);
    icm__s3_addressing a = cfg.addressing;
    icm__s3_config_clear(&cfg);
    return a;
}

static void test_addressing(void **state)
{
    awst_env *t = *state;
    const icm__s3_addressing V = ICM__S3_ADDRESSING_VIRTUAL, PA = ICM__S3_ADDRESSING_PATH;
    assert_int_equal(addressing_of(NULL, 0), V);
    icm_property ep[] = {P("s3.endpoint", "http://minio:9000")};
    assert_int_equal(addressing_of(ep, 1), PA); /* PyIceberg: custom endpoint, path style */
    icm_property fv[] = {P("s3.endpoint", "http://minio:9000"),
                         P("s3.force-virtual-addressing", "true")};
    assert_int_equal(addressing_of(fv, 2), V);
    icm_property fvf[] = {P("s3.endpoint", "http://minio:9000"),
                          P("s3.force-virtual-addressing", "False")};
    assert_int_equal(addressing_of(fvf, 2), PA);
    icm_property psa[] = {P("s3.path-style-access", "true")};
    assert_int_equal(addressing_of(psa, 1), PA); /* Java: path style on AWS too */
    icm_property psf[] = {P("s3.endpoint", "http://minio:9000"),
                          P("s3.path-style-access", "false")};
    assert_int_equal(addressing_of(psf, 2), V); /* Java: said outright */
    icm_property both[] = {P("s3.path-style-access", "true"),
                           P("s3.force-virtual-addressing", "true")};
    resolve_invalid(both, 2);
    awst_msg_has("s3.path-style-access and s3.force-virtual-addressing are both true");
    icm_property badb[] = {P("s3.path-style-access", "yes")};
    resolve_invalid(badb, 1);
    assert_string_equal(icm_error_last()->message,
                        "s3.path-style-access: \"yes\" is not true or false");

    /* The profile's addressing_style: the services block first, then the profile's own s3
     * block; properties beat both. */
    free(awst_write(t, ".aws/config",
                    "[default]\n"
                    "s3 =\n"
                    "    addressing_style = virtual\n"
                    "endpoint_url = http://minio:9000\n"));
    assert_int_equal(addressing_of(NULL, 0), V);
    free(awst_write(t, ".aws/config",
                    "[default]\n"
                    "s3 =\n"
                    "    addressing_style = virtual\n"
                    "services = x\n"
                    "[services x]\n"
                    "s3 =\n"
                    "  addressing_style = path\n"));
    assert_int_equal(addressing_of(NULL, 0), PA);
    assert_int_equal(addressing_of(fv, 2), V);
    free(awst_write(t, ".aws/config",
                    "[default]\n"
                    "s3 =\n"
                    "    addressing_style = sideways\n"));
    resolve_invalid(NULL, 0);
    char *want = icmt_sprintf("%s/.aws/config:3 (s3.addressing_style): \"sideways\" is not "
                              "path, virtual or auto",
                              t->dir);
    assert_string_equal(icm_error_last()->message, want);
    free(want);
}

static void test_numbers(void **state)
{
    awst_env *t = *state;
    icm_property p[] = {P("s3.connect-timeout", "2.5"),     P("s3.request-timeout", "120"),
                        P("s3.retry.max-attempts", "3"),    P("s3.retry.total-timeout-ms", "5000"),
                        P("s3.max-in-flight", "64"),        P("s3.delete.batch-size", "250"),
                        P("s3.anonymous", "TRUE")};
    icm__s3_config cfg = resolve_ok(p, sizeof p / sizeof p[0]);
    assert_int_equal(cfg.connect_timeout_ms, 2500);
    assert_int_equal(cfg.request_timeout_ms, 120000);
    assert_int_equal(cfg.max_attempts, 3);
    assert_int_equal(cfg.retry_total_ms, 5000);
    assert_int_equal(cfg.max_in_flight, 64);
    assert_int_equal(cfg.delete_batch_size, 250);
    assert_true(cfg.anonymous);
    icm__s3_config_clear(&cfg);

    /* Attempts: property > AWS_MAX_ATTEMPTS > profile max_attempts. */
    free(awst_write(t, ".aws/config", "[default]\nmax_attempts = 4\n"));
    icm__s3_config c2 = resolve_ok(NULL, 0);
    assert_int_equal(c2.max_attempts, 4);
    icm__s3_config_clear(&c2);
    setenv("AWS_MAX_ATTEMPTS", "5", 1);
    c2 = resolve_ok(NULL, 0);
    assert_int_equal(c2.max_attempts, 5);
    icm__s3_config_clear(&c2);
    icm_property pa[] = {P("s3.retry.max-attempts", "6")};
    c2 = resolve_ok(pa, 1);
    assert_int_equal(c2.max_attempts, 6);
    icm__s3_config_clear(&c2);
    setenv("AWS_MAX_ATTEMPTS", "0", 1);
    resolve_invalid(NULL, 0);
    assert_string_equal(icm_error_last()->message,
                        "AWS_MAX_ATTEMPTS: \"0\" is not a whole number from 1 to 100");
    unsetenv("AWS_MAX_ATTEMPTS");

    static const struct {
        const char *key, *value, *msg;
    } bad[] = {
        {"s3.connect-timeout", "0", "s3.connect-timeout: \"0\" is not a number of seconds above "
                                    "0 and at most 86400"},
        {"s3.connect-timeout", "-1", "s3.connect-timeout: \"-1\" is not a number of seconds "
                                     "above 0 and at most 86400"},
        {"s3.request-timeout", "nan", "s3.request-timeout: \"nan\" is not a number of seconds "
                                      "above 0 and at most 86400"},
        {"s3.request-timeout", "5s", "s3.request-timeout: \"5s\" is not a number of seconds "
                                     "above 0 and at most 86400"},
        {"s3.request-timeout", "1e9", "s3.request-timeout: \"1e9\" is not a number of seconds "
                                      "above 0 and at most 86400"},
        {"s3.delete.batch-size", "0", "s3.delete.batch-size: \"0\" is not a whole number from 1 "
                                      "to 1000"},
        {"s3.delete.batch-size", "1001", "s3.delete.batch-size: \"1001\" is not a whole number "
                                         "from 1 to 1000"},
        {"s3.max-in-flight", "3.5", "s3.max-in-flight: \"3.5\" is not a whole number from 1 to "
                                    "1024"},
        {"s3.retry.total-timeout-ms", " 5", "s3.retry.total-timeout-ms: \" 5\" is not a whole "
                                            "number from 1 to 86400000"},
        {"s3.anonymous", "1", "s3.anonymous: \"1\" is not true or false"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm_property b[] = {P(bad[i].key, bad[i].value)};
        resolve_invalid(b, 1);
        assert_string_equal(icm_error_last()->message, bad[i].msg);
    }
}

static void test_profile_selection(void **state)
{
    awst_env *t = *state;
    free(awst_write(t, ".aws/config",
                    "# the machine's profiles\n"
                    "[default]\n"
                    "region = default-region\n"
                    "endpoint_url = http://default:1\n"
                    "[profile env]\n"
                    "region = env-region\n"
                    "[profile client]\n"
                    "region = client-region\n"
                    "[profile s3]\n"
                    "region = s3-region\n"
                    "[plain]\n" /* not a profile in the config file */
                    "region = plain-region\n"));
    icm__s3_config cfg = resolve_ok(NULL, 0);
    assert_string_equal(cfg.profile, "default");
    assert_string_equal(cfg.region, "default-region");
    icm__s3_config_clear(&cfg);
    setenv("AWS_PROFILE", "env", 1);
    cfg = resolve_ok(NULL, 0);
    assert_string_equal(cfg.profile, "env");
    assert_string_equal(cfg.region, "env-region");
    /* [default] does not fill in a named profile. */
    assert_string_equal(cfg.endpoint, "https://s3.env-region.amazonaws.com");
    assert_false(cfg.endpoint_is_custom);
    icm__s3_config_clear(&cfg);
    icm_property pc[] = {P("client.profile-name", "client")};
    cfg = resolve_ok(pc, 1);
    assert_string_equal(cfg.profile, "client");
    assert_string_equal(cfg.region, "client-region");
    icm__s3_config_clear(&cfg);
    icm_property ps[] = {P("client.profile-name", "client"), P("s3.profile-name", "s3")};
    cfg = resolve_ok(ps, 2);
    assert_string_equal(cfg.profile, "s3");
    assert_string_equal(cfg.region, "s3-region");
    icm__s3_config_clear(&cfg);
    /* [plain] is not profile "plain" in the config file; an unknown profile gets defaults. */
    icm_property pp[] = {P("s3.profile-name", "plain")};
    cfg = resolve_ok(pp, 1);
    assert_string_equal(cfg.region, "us-east-1");
    icm__s3_config_clear(&cfg);
}

static void test_config_file_errors(void **state)
{
    awst_env *t = *state;
    /* A config file named explicitly must exist; the default one may be missing. */
    char *missing = awst_path(t, "nope/config");
    setenv("AWS_CONFIG_FILE", missing, 1);
    resolve_invalid(NULL, 0);
    char *want = icmt_sprintf("%s: cannot open the file AWS_CONFIG_FILE names", missing);
    awst_msg_has(want);
    free(want);
    free(missing);
    unsetenv("AWS_CONFIG_FILE");
    icm__s3_config cfg = resolve_ok(NULL, 0);
    icm__s3_config_clear(&cfg);
    /* AWS_CONFIG_FILE is read instead of ~/.aws/config. */
    char *alt = awst_write(t, "alt-config", "[default]\nregion = alt\n");
    free(awst_write(t, ".aws/config", "[default]\nregion = home\n"));
    setenv("AWS_CONFIG_FILE", alt, 1);
    expect_region(NULL, 0, "alt");
    unsetenv("AWS_CONFIG_FILE");
    expect_region(NULL, 0, "home");
    free(alt);

    free(awst_write(t, ".aws/config", "[default]\nservices = gone\n"));
    resolve_invalid(NULL, 0);
    want = icmt_sprintf("%s/.aws/config:2: services = gone names no [services gone] section",
                        t->dir);
    assert_string_equal(icm_error_last()->message, want);
    free(want);

    free(awst_write(t, ".aws/config", "[default]\nregion = x\n[profile y\n"));
    resolve_invalid(NULL, 0);
    want = icmt_sprintf("%s/.aws/config:3: a section header without a closing ]", t->dir);
    assert_string_equal(icm_error_last()->message, want);
    free(want);
}

static void test_ca_bundle(void **state)
{
    awst_env *t = *state;
    char *pem = awst_write(t, "ca.pem", "-----BEGIN CERTIFICATE-----\n");
    setenv("AWS_CA_BUNDLE", pem, 1);
    icm__s3_config cfg = resolve_ok(NULL, 0);
    assert_string_equal(cfg.ca_bundle, pem);
    icm__s3_config_clear(&cfg);
    icm_property p[] = {P("s3.ssl.ca-bundle", "/nonexistent/ca.pem")};
    resolve_invalid(p, 1);
    awst_msg_has("s3.ssl.ca-bundle: the CA bundle /nonexistent/ca.pem cannot be read");
    free(pem);
}

/* ---- the INI reader ---- */

static icm__aws_ini parse_ok(const char *text)
{
    icm__aws_ini ini;
    icmt_ok(icm__aws_ini_parse(&ini, "f", text, strlen(text)));
    return ini;
}

static const char *value_of(const icm__aws_ini *ini, const char *section, const char *parent,
                            const char *key)
{
    const icm__aws_ini_entry *e = icm__aws_ini_get(icm__aws_ini_find(ini, section), parent, key);
    return e != NULL ? e->value : NULL;
}

static void test_ini_syntax(void **state)
{
    (void)state;
    icm__aws_ini ini = parse_ok("\xEF\xBB\xBF"
                                "# comment\n"
                                "; another\n"
                                "[ default ]   # trailing comment\n"
                                "Region=us-west-2\n"
                                "  # an indented comment line\n"
                                "output = json ; inline comment\n"
                                "key = a#b;c\n"
                                "empty =\n"
                                "\n"
                                "[profile    spaced]\r\n"
                                "region = r1\r\n"
                                "region = r2\r\n"
                                "s3 =\n"
                                "  addressing_style = path\n"
                                "\tendpoint_url = http://x:1 # c\n"
                                "role_arn = arn:aws:iam::1:role/a\n"
                                "  continued\n"
                                "[services  svc]\n"
                                "s3 =\n"
                                "  endpoint_url = http://svc:2\n"
                                "[default]\n"
                                "more = yes\n");
    assert_string_equal(value_of(&ini, "default", NULL, "region"), "us-west-2");
    assert_string_equal(value_of(&ini, "default", NULL, "REGION"), "us-west-2");
    assert_string_equal(value_of(&ini, "default", NULL, "output"), "json");
    assert_string_equal(value_of(&ini, "default", NULL, "key"), "a#b;c");
    assert_string_equal(value_of(&ini, "default", NULL, "empty"), "");
    assert_string_equal(value_of(&ini, "default", NULL, "more"), "yes"); /* merged */
    assert_string_equal(value_of(&ini, "profile spaced", NULL, "region"), "r2"); /* last wins */
    assert_string_equal(value_of(&ini, "profile spaced", "s3", "addressing_style"), "path");
    assert_string_equal(value_of(&ini, "profile spaced", "s3", "endpoint_url"), "http://x:1");
    assert_null(value_of(&ini, "profile spaced", NULL, "addressing_style"));
    assert_string_equal(value_of(&ini, "profile spaced", NULL, "role_arn"),
                        "arn:aws:iam::1:role/a\ncontinued");
    assert_string_equal(value_of(&ini, "services svc", "s3", "endpoint_url"), "http://svc:2");
    assert_int_equal(icm__aws_ini_find(&ini, "default")->line, 3);
    assert_int_equal(icm__aws_ini_get(icm__aws_ini_find(&ini, "profile spaced"), "s3",
                                      "endpoint_url")->line, 15);
    /* [default] and [profile default] both name the default profile in the config file. */
    assert_ptr_equal(icm__aws_ini_config_profile(&ini, "default"),
                     icm__aws_ini_find(&ini, "default"));
    assert_ptr_equal(icm__aws_ini_config_profile(&ini, "spaced"),
                     icm__aws_ini_find(&ini, "profile spaced"));
    assert_null(icm__aws_ini_config_profile(&ini, "svc"));
    icm__aws_ini_clear(&ini);

    ini = parse_ok("[default]\nregion = a\n[profile default]\nregion = b\n");
    assert_string_equal(icm__aws_ini_get(icm__aws_ini_config_profile(&ini, "default"), NULL,
                                         "region")->value, "b");
    icm__aws_ini_clear(&ini);
    ini = parse_ok("");
    assert_int_equal(ini.n_sections, 0);
    icm__aws_ini_clear(&ini);
}

static void test_ini_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"region = x\n", "f:1: a property before any [section]"},
        {"[a]\nx = 1\n[b\n", "f:3: a section header without a closing ]"},
        {"[a] junk\n", "f:1: text after a section header's ]"},
        {"[ ]\n", "f:1: an empty section name"},
        {"[a]\n\njust words\n", "f:3: expected key = value"},
        {"[a]\n = 1\n", "f:2: a property without a name"},
        {"[a]\ns3 =\n  no equals here\n", "f:3: expected key = value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm__aws_ini ini;
        assert_int_equal(icm__aws_ini_parse(&ini, "f", bad[i].text, strlen(bad[i].text)),
                         ICM_EINVALID);
        assert_string_equal(icm_error_last()->message, bad[i].msg);
        assert_null(ini.sections);
    }
    icm__aws_ini ini;
    static const char nul[] = "[a]\nx = 1\0\n";
    assert_int_equal(icm__aws_ini_parse(&ini, "f", nul, sizeof nul - 1), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message, "f:2: a NUL byte");
}

static void test_ini_nomem(void **state)
{
    (void)state;
    static const char text[] = "[default]\nregion = a\ns3 =\n  addressing_style = path\n"
                               "[profile b]\nx = 1\n  y\n";
    for (long i = 0;; i++) {
        icm__aws_ini ini;
        icmt_nomem_arm(i);
        int rc = icm__aws_ini_parse(&ini, "f", text, sizeof text - 1);
        long n = icmt_nomem_disarm();
        if (rc == 0) {
            assert_string_equal(value_of(&ini, "profile b", NULL, "x"), "1\ny");
            icm__aws_ini_clear(&ini);
            assert_true(i >= n);
            break;
        }
        assert_int_equal(rc, ICM_ENOMEM);
        assert_null(ini.sections);
    }
}

/* s3.* keys no S3 client reads are told apart from every name one reads, with the name meant. */
static void test_unknown_property_names(void **state)
{
    (void)state;
    static const char *const known[] = {
        /* read here */
        "s3.endpoint", "s3.region", "s3.access-key-id", "s3.secret-access-key",
        "s3.session-token", "s3.profile-name", "s3.path-style-access",
        "s3.force-virtual-addressing", "s3.connect-timeout", "s3.request-timeout",
        "s3.anonymous", "s3.delete.batch-size", "s3.retry.max-attempts",
        "s3.retry.total-timeout-ms", "s3.max-in-flight", "s3.ssl.ca-bundle",
        "s3.session-token-expires-at-ms", "s3.role-arn", "s3.remote-signing-enabled",
        "s3.signer",
        /* Java's S3FileIOProperties */
        "s3.sse.type", "s3.sse.key", "s3.sse.md5", "s3.multipart.part-size-bytes",
        "s3.multipart.threshold", "s3.multipart.num-threads", "s3.read.num-threads",
        "s3.staging-dir", "s3.acl", "s3.checksum-enabled", "s3.delete-enabled",
        "s3.delete.num-threads", "s3.acceleration-enabled", "s3.dualstack-enabled",
        "s3.cross-region-access-enabled", "s3.preload-client-enabled",
        "s3.use-arn-region-enabled", "s3.write.table-tag-enabled",
        "s3.write.namespace-tag-enabled", "s3.write.storage-class", "s3.crt.enabled",
        "s3.crt.max-concurrency", "s3.access-grants.enabled",
        "s3.access-grants.fallback-to-iam", "s3.analytics-accelerator.enabled",
        "s3.retry.num-retries", "s3.retry.min-wait-ms", "s3.retry.max-wait-ms",
        "s3.directory-bucket.list-prefix-as-directory", "s3.client-factory-impl",
        "s3.chunked-encoding-enabled",
        "s3.write.tags.team", "s3.delete.tags.gone", "s3.access-points.my-bucket",
        "s3.analytics-accelerator.logicalio.prefetching.mode",
        /* PyIceberg's */
        "s3.proxy-uri", "s3.resolve-region", "s3.signer.uri", "s3.signer.endpoint",
        "s3.role-session-name", "s3.retry-strategy-impl", "s3.sse-kms-key-id",
        "s3.server-side-encryption",
        /* not s3.* at all */
        "client.region", "uri", "warehouse", "header.X-Y", "S3.ENDPOINT", "",
    };
    for (size_t i = 0; i < ICM__ARRAY_LEN(known); i++) {
        const char *closest = "unset";
        if (icm_fileio_s3_property_unknown(&closest, known[i]) || closest != NULL) {
            print_error("\"%s\" was taken for an unknown key\n", known[i]);
            fail();
        }
    }
    assert_false(icm_fileio_s3_property_unknown(NULL, NULL));
    static const char *const typos[][2] = {
        {"s3.endpont", "s3.endpoint"},
        {"s3.acess-key-id", "s3.access-key-id"},
        {"s3.secret-acces-key", "s3.secret-access-key"},
        {"s3.regoin", "s3.region"},
        {"s3.path-style-acess", "s3.path-style-access"},
        {"s3.sesion-token", "s3.session-token"},
        {"s3.endpoint-url", NULL}, /* 4 insertions: too far to guess */
        {"s3.bucket", NULL},
        {"s3.write.tags.", NULL},  /* a family's prefix alone names nothing */
        {"s3.", NULL},
        {"s3.x", NULL},
    };
    for (size_t i = 0; i < ICM__ARRAY_LEN(typos); i++) {
        const char *closest = "unset";
        bool unknown = icm_fileio_s3_property_unknown(&closest, typos[i][0]);
        if (!unknown || (typos[i][1] == NULL ? closest != NULL
                                             : closest == NULL ||
                                                   strcmp(closest, typos[i][1]) != 0)) {
            print_error("\"%s\": unknown %d, closest %s (want %s)\n", typos[i][0], unknown,
                        closest != NULL ? closest : "(none)",
                        typos[i][1] != NULL ? typos[i][1] : "(none)");
            fail();
        }
    }
    assert_true(icm_fileio_s3_property_unknown(NULL, "s3.endpont"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_region_precedence, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_endpoint_precedence, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_endpoint_validation, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_addressing, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_numbers, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_profile_selection, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_config_file_errors, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_ca_bundle, awst_setup, awst_teardown),
        cmocka_unit_test(test_unknown_property_names),
        cmocka_unit_test(test_ini_syntax),
        cmocka_unit_test(test_ini_errors),
        cmocka_unit_test(test_ini_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
