/*
 * cli/json_out.c: the CLI's JSON writer. Documents are built with jansson, but every string
 * value is a byte string stored unchecked (icm_cli_json_str: a file name need not be UTF-8),
 * so jansson's own dump, which refuses such strings, is never used. This writer prints each
 * string with icm_escape_json (valid UTF-8 copied, bytes that are not UTF-8 as `\udcXY`,
 * README "Output"), keeps keys in insertion order and integers exact, and lays documents out as
 * jansson's JSON_INDENT(2) does, so documents of plain names keep their exact text.
 *
 * Writing cannot fail on any input; it fails only when the stream does (or, for a string
 * longer than the stack buffer, when memory runs out).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "icemaint/escape.h"

/* Write `len` bytes of `s` as a JSON string. Returns false when the stream or memory failed. */
static bool write_string(FILE *out, const char *s, size_t len)
{
    char stack[1024];
    size_t need = icm_escape_json(NULL, 0, s, len) + 1;
    char *text = need <= sizeof stack ? stack : malloc(need);
    if (text == NULL)
        return false;
    icm_escape_json(text, need, s, len);
    bool ok = fwrite(text, 1, need - 1, out) == need - 1;
    if (text != stack)
        free(text);
    return ok;
}

/* A line break and the indentation of `depth` when pretty, else the separator's blank. */
static bool write_break(FILE *out, bool pretty, int depth, bool blank)
{
    if (!pretty)
        return !blank || fputc(' ', out) != EOF;
    if (fputc('\n', out) == EOF)
        return false;
    for (int i = 0; i < depth; i++) {
        if (fputs("  ", out) == EOF)
            return false;
    }
    return true;
}

static bool write_value(FILE *out, json_t *v, bool pretty, int depth);

static bool write_object(FILE *out, json_t *v, bool pretty, int depth)
{
    if (json_object_size(v) == 0)
        return fputs("{}", out) != EOF;
    bool ok = fputc('{', out) != EOF;
    size_t n = 0;
    const char *key;
    json_t *child;
    json_object_foreach(v, key, child) {
        if (!ok)
            break;
        ok = (n++ == 0 || fputc(',', out) != EOF) && write_break(out, pretty, depth + 1, n > 1) &&
             write_string(out, key, strlen(key)) && fputs(": ", out) != EOF &&
             write_value(out, child, pretty, depth + 1);
    }
    return ok && write_break(out, pretty, depth, false) && fputc('}', out) != EOF;
}

static bool write_array(FILE *out, json_t *v, bool pretty, int depth)
{
    if (json_array_size(v) == 0)
        return fputs("[]", out) != EOF;
    bool ok = fputc('[', out) != EOF;
    size_t i;
    json_t *child;
    json_array_foreach(v, i, child) {
        if (!ok)
            break;
        ok = (i == 0 || fputc(',', out) != EOF) && write_break(out, pretty, depth + 1, i > 0) &&
             write_value(out, child, pretty, depth + 1);
    }
    return ok && write_break(out, pretty, depth, false) && fputc(']', out) != EOF;
}

static bool write_value(FILE *out, json_t *v, bool pretty, int depth)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return write_object(out, v, pretty, depth);
    case JSON_ARRAY:
        return write_array(out, v, pretty, depth);
    case JSON_STRING:
        return write_string(out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) > 0;
    case JSON_REAL:
        return fprintf(out, "%.17g", json_real_value(v)) > 0;
    case JSON_TRUE:
        return fputs("true", out) != EOF;
    case JSON_FALSE:
        return fputs("false", out) != EOF;
    case JSON_NULL:
        return fputs("null", out) != EOF;
    }
    return false;
}

bool icm_cli_json_write(FILE *out, const json_t *doc, bool pretty)
{
    /* jansson's iteration API takes non-const pointers but does not change the value */
    return write_value(out, (json_t *)(uintptr_t)doc, pretty, 0) && fputc('\n', out) != EOF;
}
