/*
 * io/s3/s3_creds_parse.c: reading the answers of the credential endpoints (s3_config_internal.h):
 * the container and instance metadata JSON (jansson), STS's AssumeRoleWithWebIdentity XML
 * (expat), and their ISO-8601 expiry times.
 *
 * These bytes come from the network, so every field is checked (a string, not empty, no NUL or
 * line break that could end up in a signed header) and nothing of a secret is ever quoted in a
 * message: a malformed answer is named by its source and the field that is wrong.
 */
#include <ctype.h>
#include <expat.h>
#include <jansson.h>
#include <string.h>

#include "io/s3/s3_config_internal.h"
#include "io/s3/s3_internal.h"
#include "spec/metadata_internal.h"
#include "util/util.h"

/* Biggest answer parsed: STS's is about 2 KiB with a long session token. */
#define MAX_ANSWER_BYTES ((size_t)1 << 20)

bool icm__aws_parse_time(const char *s, int64_t *ms_out)
{
    /* One ISO 8601 reader for the whole back end: the listings' LastModified is the same form. */
    int64_t ms = icm__s3_parse_iso8601_ms(s);
    if (ms < 0)
        return false;
    *ms_out = ms;
    return true;
}

/* A credential field fit to be sent in a header: printable ASCII, not empty. */
static bool field_ok(const char *v, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
            return false;
    return true;
}

static int malformed(const char *what, const char *field)
{
    return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                          "%s: the answer has no valid %s (malformed credentials)", what, field);
}

static int fill(icm__aws_credentials *out, const char *what, const char *source, const char *key,
                size_t key_len, const char *secret, size_t secret_len, const char *token,
                size_t token_len, const char *expiration, bool token_required)
{
    memset(out, 0, sizeof *out);
    if (key == NULL || !field_ok(key, key_len))
        return malformed(what, "AccessKeyId");
    if (secret == NULL || !field_ok(secret, secret_len))
        return malformed(what, "SecretAccessKey");
    if (token != NULL ? !field_ok(token, token_len) : token_required)
        return malformed(what, token_required ? "SessionToken" : "Token");
    int64_t exp = 0;
    if (expiration != NULL && !icm__aws_parse_time(expiration, &exp))
        return malformed(what, "Expiration");
    out->access_key_id = icm__strndup(key, key_len);
    out->secret_access_key = icm__strndup(secret, secret_len);
    out->session_token = token != NULL ? icm__strndup(token, token_len) : NULL;
    out->expires_at_ms = exp;
    out->source = source;
    if (out->access_key_id == NULL || out->secret_access_key == NULL ||
        (token != NULL && out->session_token == NULL)) {
        icm__aws_credentials_clear(out);
        return icm__error_oom();
    }
    return 0;
}

static const char *json_str(json_t *obj, const char *key, size_t *len)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return NULL;
    *len = json_string_length(v);
    return json_string_value(v);
}

int icm__aws_creds_from_json(icm__aws_credentials *out, const char *body, size_t len,
                             const char *what, const char *source)
{
    memset(out, 0, sizeof *out);
    if (len > MAX_ANSWER_BYTES)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                              "%s: an answer of %zu bytes is too long for credentials", what,
                              len);
    /* The project's strict reader, not json_loadb(): jansson's loader crashes when an
     * allocation fails mid-document (spec/json_parse.c), and out of memory must stay
     * ICM_ENOMEM, not bad credentials. */
    json_t *doc = NULL;
    int prc = icm__json_parse(body, len, what, &doc);
    if (prc == ICM_ENOMEM)
        return prc;
    if (doc == NULL || !json_is_object(doc)) {
        json_decref(doc);
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                              "%s: the answer is not a JSON object", what);
    }
    size_t kl = 0, sl = 0, tl = 0, cl = 0, el = 0;
    const char *code = json_str(doc, "Code", &cl);
    int rc;
    if (code != NULL && strcmp(code, "Success") != 0) {
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                            "%s: the answer's Code is \"%.64s\", not Success", what, code);
        if (field_ok(code, cl) && cl < 64)
            icm__error_set_remote_code(code);
    } else {
        const char *key = json_str(doc, "AccessKeyId", &kl);
        const char *secret = json_str(doc, "SecretAccessKey", &sl);
        const char *token = json_str(doc, "Token", &tl);
        if (token == NULL && json_object_get(doc, "Token") != NULL)
            token = ""; /* present but not a string: malformed, not "no token" */
        const char *exp = json_str(doc, "Expiration", &el);
        /* Expiration is required: credentials from an endpoint are temporary, and without
         * it they would never be renewed. */
        if (exp == NULL || strlen(exp) != el)
            exp = "";
        rc = fill(out, what, source, key, kl, secret, sl, token, tl, exp, false);
    }
    json_decref(doc);
    return rc;
}

/* ---- STS XML ---- */

enum sts_field { F_NONE, F_KEY, F_SECRET, F_TOKEN, F_EXPIRATION, F_CODE, F_MESSAGE, F_COUNT };

typedef struct sts_parse {
    int depth;
    bool in_credentials; /* inside <Credentials> of the Result */
    bool in_error;       /* inside <Error> */
    bool is_error;       /* the root is <ErrorResponse> */
    bool root_ok;
    enum sts_field field;
    icm__buf text[F_COUNT];
    bool seen[F_COUNT];
    bool duplicate; /* a field appears twice: the answer is ambiguous, so it is refused */
    bool oom;
} sts_parse;

/* expat with namespaces: "uri\x01local"; the local name is what matters. */
static const char *local_name(const char *name)
{
    const char *sep = strrchr(name, '\x01');
    return sep != NULL ? sep + 1 : name;
}

static void XMLCALL sts_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    sts_parse *st = ud;
    const char *n = local_name(name);
    st->depth++;
    st->field = F_NONE;
    if (st->depth == 1) {
        st->root_ok = strcmp(n, "AssumeRoleWithWebIdentityResponse") == 0 ||
                      strcmp(n, "ErrorResponse") == 0;
        st->is_error = strcmp(n, "ErrorResponse") == 0;
        return;
    }
    if (!st->is_error && st->depth == 3 && strcmp(n, "Credentials") == 0)
        st->in_credentials = true;
    else if (st->is_error && st->depth == 2 && strcmp(n, "Error") == 0)
        st->in_error = true;
    else if (st->in_credentials && st->depth == 4) {
        if (strcmp(n, "AccessKeyId") == 0)
            st->field = F_KEY;
        else if (strcmp(n, "SecretAccessKey") == 0)
            st->field = F_SECRET;
        else if (strcmp(n, "SessionToken") == 0)
            st->field = F_TOKEN;
        else if (strcmp(n, "Expiration") == 0)
            st->field = F_EXPIRATION;
    } else if (st->in_error && st->depth == 3) {
        if (strcmp(n, "Code") == 0)
            st->field = F_CODE;
        else if (strcmp(n, "Message") == 0)
            st->field = F_MESSAGE;
    }
    if (st->field != F_NONE) {
        if (st->seen[st->field])
            st->duplicate = true;
        st->seen[st->field] = true;
        icm__buf_clear(&st->text[st->field]);
    }
}

static void XMLCALL sts_end(void *ud, const XML_Char *name)
{
    sts_parse *st = ud;
    const char *n = local_name(name);
    if (st->depth == 3 && strcmp(n, "Credentials") == 0)
        st->in_credentials = false;
    if (st->depth == 2 && strcmp(n, "Error") == 0)
        st->in_error = false;
    st->field = F_NONE;
    st->depth--;
}

static void XMLCALL sts_text(void *ud, const XML_Char *s, int len)
{
    sts_parse *st = ud;
    if (st->field == F_NONE || len <= 0)
        return;
    if (st->text[st->field].len + (size_t)len > MAX_ANSWER_BYTES ||
        icm__buf_put(&st->text[st->field], s, (size_t)len) != 0)
        st->oom = true;
}

/* The text of a field, trimmed of the white space pretty-printed XML puts around it. */
static const char *sts_value(sts_parse *st, enum sts_field f, size_t *len)
{
    icm__buf *b = &st->text[f];
    if (!st->seen[f] || b->data == NULL)
        return NULL;
    const char *s = b->data, *e = b->data + b->len;
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    *len = (size_t)(e - s);
    b->data[e - b->data] = '\0';
    return s;
}

int icm__aws_creds_from_sts_xml(icm__aws_credentials *out, const char *body, size_t len,
                                const char *what, const char *source)
{
    memset(out, 0, sizeof *out);
    if (len > MAX_ANSWER_BYTES || len > (size_t)INT32_MAX)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                              "%s: an answer of %zu bytes is too long for credentials", what,
                              len);
    XML_Parser xp = XML_ParserCreateNS(NULL, '\x01');
    if (xp == NULL)
        return icm__error_oom();
    sts_parse st;
    memset(&st, 0, sizeof st);
    XML_SetUserData(xp, &st);
    XML_SetElementHandler(xp, sts_start, sts_end);
    XML_SetCharacterDataHandler(xp, sts_text);
    enum XML_Status xs = XML_Parse(xp, body, (int)len, 1);
    XML_ParserFree(xp);
    int rc;
    if (st.oom) {
        rc = icm__error_oom();
    } else if (xs != XML_STATUS_OK || !st.root_ok || st.duplicate) {
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                            "%s: the answer is not an AssumeRoleWithWebIdentity response", what);
    } else if (st.is_error) {
        size_t cl = 0, ml = 0;
        const char *code = sts_value(&st, F_CODE, &cl);
        const char *msg = sts_value(&st, F_MESSAGE, &ml);
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL, "%s refused: %.64s: %.300s", what,
                            code != NULL ? code : "(no code)", msg != NULL ? msg : "");
        if (code != NULL && field_ok(code, cl) && cl < 64)
            icm__error_set_remote_code(code);
    } else {
        size_t kl = 0, sl = 0, tl = 0, el = 0;
        const char *key = sts_value(&st, F_KEY, &kl);
        const char *secret = sts_value(&st, F_SECRET, &sl);
        const char *token = sts_value(&st, F_TOKEN, &tl);
        const char *exp = sts_value(&st, F_EXPIRATION, &el);
        rc = fill(out, what, source, key, kl, secret, sl, token, tl, exp != NULL ? exp : "",
                  true);
    }
    for (int i = 0; i < F_COUNT; i++)
        icm__buf_dispose(&st.text[i]);
    return rc;
}
