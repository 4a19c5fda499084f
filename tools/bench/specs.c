/* Sweep specifications (see specs.h). */
#define _POSIX_C_SOURCE 200809L
#include "specs.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void long_list_free(long_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int long_list_add(long_list *l, long x)
{
    int pos = 0;
    while (pos < l->n && l->v[pos] < x)
        pos++;
    if (pos < l->n && l->v[pos] == x)
        return 0;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        long *nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = cap;
    }
    memmove(l->v + pos + 1, l->v + pos, (size_t)(l->n - pos) * sizeof *l->v);
    l->v[pos] = x;
    l->n++;
    return 0;
}

long spec_ceil_sqrt(long P)
{
    long r = 0;
    while (r * r < P)
        r++;
    return r;
}

/* One number: digits with an optional K/M/G suffix, or P / sqrtP when P > 0. */
static int number(const char *tok, int P, long *out)
{
    if (P > 0 && strcmp(tok, "P") == 0) {
        *out = P;
        return 0;
    }
    if (P > 0 && strcmp(tok, "sqrtP") == 0) {
        *out = spec_ceil_sqrt(P);
        return 0;
    }
    if (!(*tok >= '0' && *tok <= '9'))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(tok, &end, 10);
    if (errno)
        return -1;
    long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1L << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1L << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1L << 30, end++;
    if (*end != '\0' || v > LONG_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

/* Expand one comma-separated item (number or range) into out. */
static int item(const char *text, const char *tok, int P, long_list *out, char *err,
                size_t errlen)
{
    char buf[128];
    if (strlen(tok) >= sizeof buf)
        return fail(err, errlen, "item '%s' too long in '%s'", tok, text);
    strcpy(buf, tok);
    char *c1 = strchr(buf, ':');
    if (!c1) {
        long v;
        if (number(buf, P, &v) != 0)
            return fail(err, errlen, "malformed value '%s' in '%s'", tok, text);
        return long_list_add(out, v) ? fail(err, errlen, "out of memory") : 0;
    }
    *c1 = '\0';
    char *c2 = strchr(c1 + 1, ':');
    if (c2)
        *c2 = '\0';
    long a, b;
    if (number(buf, P, &a) != 0 || number(c1 + 1, P, &b) != 0)
        return fail(err, errlen, "malformed range '%s' in '%s' (A:B, A:B:xF or A:B:+D)", tok,
                    text);
    if (a > b)
        return fail(err, errlen, "empty range '%s' in '%s' (start above end)", tok, text);
    int geometric = 0;
    long step = 1;
    if (c2) {
        char *s = c2 + 1;
        if (*s == 'x' || *s == '*')
            geometric = 1, s++;
        else if (*s == '+')
            s++;
        if (number(s, 0, &step) != 0 || step < (geometric ? 2 : 1))
            return fail(err, errlen, "bad step '%s' in '%s' (xF with F >= 2, or +D with D >= 1)",
                        c2 + 1, text);
        if (geometric && a < 1)
            return fail(err, errlen, "geometric range '%s' in '%s' must start at >= 1", tok,
                        text);
    }
    if (!geometric && (b - a) / step > 100000)
        return fail(err, errlen, "range '%s' in '%s' has too many values", tok, text);
    for (long v = a; v <= b;) {
        if (long_list_add(out, v))
            return fail(err, errlen, "out of memory");
        if (geometric) {
            if (v > LONG_MAX / step)
                break;
            v *= step;
        } else {
            if (v > LONG_MAX - step)
                break;
            v += step;
        }
    }
    return 0;
}

static int items(const char *text, int P, long_list *out, char *err, size_t errlen)
{
    if (!text || !*text)
        return fail(err, errlen, "empty list");
    char *copy = strdup(text);
    if (!copy)
        return fail(err, errlen, "out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save))
        rc = item(text, tok, P, out, err, errlen);
    free(copy);
    if (rc == 0 && out->n == 0)
        rc = fail(err, errlen, "empty list '%s'", text);
    return rc;
}

int spec_sizes(const char *text, long_list *out, char *err, size_t errlen)
{
    return items(text, 0, out, err, errlen);
}

int spec_params(const char *text, long lo, long hi, long cap, long defval, int P,
                long_list *out, char *err, size_t errlen)
{
    if (hi < lo)
        hi = lo; /* e.g. radix in [2, P] at P = 1: the library clamps per call */
    long_list raw = {0};
    int rc = 0, oom = 0;
    if (text && strcmp(text, "default") == 0)
        oom = long_list_add(&raw, defval);
    else if (text && strcmp(text, "all") == 0) {
        if (hi - lo > 100000)
            rc = fail(err, errlen, "'all' would give %ld values", hi - lo + 1);
        for (long v = lo; rc == 0 && !oom && v <= hi; v++)
            oom = long_list_add(&raw, v);
    } else if (text && strcmp(text, "powers") == 0) {
        oom = long_list_add(&raw, lo) || long_list_add(&raw, hi);
        for (long v = 1; !oom && v < hi && v <= LONG_MAX / 2; v *= 2)
            if (v > lo)
                oom = long_list_add(&raw, v);
    } else
        rc = items(text, P, &raw, err, errlen);
    if (oom)
        rc = fail(err, errlen, "out of memory");
    if (rc != 0) {
        long_list_free(&raw);
        return -1;
    }
    for (int i = 0; i < raw.n && rc == 0; i++) {
        if (raw.v[i] < lo || raw.v[i] > cap) {
            rc = fail(err, errlen, "value %ld out of range [%ld, %ld]", raw.v[i], lo, cap);
            break;
        }
        long v = raw.v[i] > hi ? hi : raw.v[i];
        if (long_list_add(out, v))
            rc = fail(err, errlen, "out of memory");
    }
    long_list_free(&raw);
    return rc;
}
