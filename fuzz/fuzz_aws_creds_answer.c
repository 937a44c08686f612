/*
 * fuzz/fuzz_aws_creds_answer.c: the parsers of what credential endpoints answer
 * (io/s3/s3_config_internal.h) on arbitrary bytes. The first byte picks the parser: 'X' STS's
 * AssumeRoleWithWebIdentity XML, 'J' the container / instance metadata JSON, anything else the
 * ISO-8601 expiry time (the whole input).
 *
 * Credentials returned have a key id and secret of printable ASCII (they go into signed
 * headers), a token likewise when present; a failure returns ICM_EAUTH or ICM_ENOMEM and leaves
 * nothing to free. A time that parses formats back to the same instant. Seeds: the checked-in
 * corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "icemaint/errors.h"
#include "io/s3/s3_config_internal.h"

const char *const icm_fuzz_seed_suffixes[] = {".aws-answer", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_printable(const char *s)
{
    if (s == NULL || *s == '\0')
        abort();
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] == 'X' || data[0] == 'J') {
        icm__aws_credentials c;
        const char *body = (const char *)data + 1;
        int rc = data[0] == 'X' ? icm__aws_creds_from_sts_xml(&c, body, size - 1, "f", "s")
                                : icm__aws_creds_from_json(&c, body, size - 1, "f", "s");
        if (rc != 0) {
            if ((rc != ICM_EAUTH && rc != ICM_ENOMEM) || c.access_key_id != NULL ||
                c.secret_access_key != NULL || c.session_token != NULL)
                abort();
            return 0;
        }
        check_printable(c.access_key_id);
        check_printable(c.secret_access_key);
        if (c.session_token != NULL)
            check_printable(c.session_token);
        if (data[0] == 'X' && (c.session_token == NULL || c.expires_at_ms == 0))
            abort();
        icm__aws_credentials_clear(&c);
        return 0;
    }
    char *s = malloc(size + 1);
    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    int64_t ms = 0;
    if (icm__aws_parse_time(s, &ms)) {
        /* The same instant written back parses to the same value. */
        time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
        struct tm tm;
        char buf[64];
        if (gmtime_r(&t, &tm) == NULL)
            abort();
        int64_t frac = ms - (int64_t)t * 1000;
        snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)frac);
        int64_t back = 0;
        if (!icm__aws_parse_time(buf, &back) || back != ms)
            abort();
    }
    free(s);
    return 0;
}
