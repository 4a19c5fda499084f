/* The shared Matrix Market reader (rules in mtx.h). */
#define _POSIX_C_SOURCE 200809L
#include "mtx.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BANNER "%%MatrixMarket"

int tuna_mtx_is_matrix_market(const char *text)
{
    return strncmp(text, BANNER, strlen(BANNER)) == 0;
}

typedef struct line_reader {
    FILE *f;
    const char *name;
    char *buf;
    size_t cap;
    long number;
} line_reader;

static int fail_at(const line_reader *lr, char *err, size_t errlen, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (lr->number > 0)
        snprintf(err, errlen, "%s:%ld: %s", lr->name, lr->number, what);
    else
        snprintf(err, errlen, "%s: %s", lr->name, what);
    return -1;
}

/* The next line without its end, or NULL at the end of the file. */
static char *next_line(line_reader *lr)
{
    ssize_t n = getline(&lr->buf, &lr->cap, lr->f);
    if (n < 0)
        return NULL;
    lr->number++;
    while (n > 0 && (lr->buf[n - 1] == '\n' || lr->buf[n - 1] == '\r'))
        lr->buf[--n] = '\0';
    return lr->buf;
}

/* The next line that is neither a comment nor blank, or NULL at the end of the file. */
static char *next_data_line(line_reader *lr)
{
    char *line;
    while ((line = next_line(lr)))
        if (line[0] != '%' && line[strspn(line, " \t")] != '\0')
            return line;
    return NULL;
}

/* An unsigned decimal integer token at *p (after blanks), advancing *p. */
static int read_count(char **p, uint64_t *out)
{
    char *s = *p + strspn(*p, " \t");
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || (*end && !isspace((unsigned char)*end)))
        return -1;
    *out = (uint64_t)v;
    *p = end;
    return 0;
}

static int rest_is_blank(const char *p)
{
    return p[strspn(p, " \t")] == '\0';
}

/* The index of word in the NULL-terminated names, ignoring case, or -1. */
static int word_index(const char *word, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcasecmp(word, names[i]) == 0)
            return i;
    return -1;
}

static int parse_banner(line_reader *lr, tuna_mtx_header *h, char *err, size_t errlen)
{
    char *line = next_line(lr);
    char object[32], format[32], field[32], sym[32], extra[2];
    if (!line || !tuna_mtx_is_matrix_market(line) ||
        sscanf(line + strlen(BANNER), "%31s %31s %31s %31s %1s", object, format, field, sym,
               extra) != 4)
        return fail_at(lr, err, errlen,
                       "not a Matrix Market file (\"%s matrix coordinate FIELD SYMMETRY\" "
                       "expected on line 1)",
                       BANNER);
    if (strcasecmp(object, "matrix") != 0)
        return fail_at(lr, err, errlen, "object '%s' not supported (matrix only)", object);
    if (strcasecmp(format, "coordinate") != 0)
        return fail_at(lr, err, errlen, "format '%s' not supported (coordinate only)", format);
    /* Same order as tuna_mtx_field / tuna_mtx_symmetry. */
    static const char *const fields[] = {"real", "integer", "pattern", NULL};
    static const char *const symmetries[] = {"general", "symmetric", "skew-symmetric", NULL};
    int f = word_index(field, fields), y = word_index(sym, symmetries);
    if (f < 0)
        return fail_at(lr, err, errlen, "field '%s' not supported (real, integer or pattern)",
                       field);
    if (y < 0)
        return fail_at(lr, err, errlen,
                       "symmetry '%s' not supported (general, symmetric or skew-symmetric)",
                       sym);
    h->field = (tuna_mtx_field)f;
    h->symmetry = (tuna_mtx_symmetry)y;
    return 0;
}

/* One entry line into zero-based (i, j) and its value. */
static int parse_entry(line_reader *lr, char *line, const tuna_mtx_header *h, uint64_t *i,
                       uint64_t *j, double *v, char *err, size_t errlen)
{
    char *p = line;
    if (read_count(&p, i) || read_count(&p, j))
        return fail_at(lr, err, errlen, "bad entry '%.60s' (\"ROW COLUMN%s\" expected)", line,
                       h->field == TUNA_MTX_PATTERN ? "" : " VALUE");
    if (*i < 1 || *i > h->rows || *j < 1 || *j > h->cols)
        return fail_at(lr, err, errlen,
                       "entry (%" PRIu64 ", %" PRIu64 ") outside the %" PRIu64 " x %" PRIu64
                       " matrix (indices are 1-based)",
                       *i, *j, h->rows, h->cols);
    *v = 1.0;
    if (h->field != TUNA_MTX_PATTERN) {
        char *s = p + strspn(p, " \t"), *end;
        errno = 0;
        if (h->field == TUNA_MTX_INTEGER) {
            long long x = strtoll(s, &end, 10);
            *v = (double)x;
        } else
            *v = strtod(s, &end);
        if (end == s || errno || !isfinite(*v) || (*end && !isspace((unsigned char)*end)))
            return fail_at(lr, err, errlen, "bad %s value in '%.60s'",
                           h->field == TUNA_MTX_INTEGER ? "integer" : "real", line);
        p = end;
    }
    if (!rest_is_blank(p))
        return fail_at(lr, err, errlen, "unexpected '%.20s' after the entry", p + strspn(p, " \t"));
    if (h->symmetry == TUNA_MTX_SKEW_SYMMETRIC && *i == *j)
        return fail_at(lr, err, errlen, "diagonal entry in a skew-symmetric matrix");
    (*i)--;
    (*j)--;
    return 0;
}

/* A callback's failure, located at the current line. */
static int callback_failed(const line_reader *lr, char *err, size_t errlen)
{
    char what[512];
    snprintf(what, sizeof what, "%s", err);
    return fail_at(lr, err, errlen, "%s", what);
}

static int read_all(line_reader *lr, const tuna_mtx_reader *r, char *err, size_t errlen)
{
    tuna_mtx_header h;
    if (parse_banner(lr, &h, err, errlen))
        return -1;
    char *line = next_data_line(lr);
    if (!line)
        return fail_at(lr, err, errlen, "no size line \"ROWS COLUMNS ENTRIES\"");
    char *p = line;
    if (read_count(&p, &h.rows) || read_count(&p, &h.cols) || read_count(&p, &h.stored) ||
        !rest_is_blank(p) || h.rows < 1 || h.cols < 1)
        return fail_at(lr, err, errlen,
                       "bad size line '%.60s' (\"ROWS COLUMNS ENTRIES\", ROWS and COLUMNS >= 1)",
                       line);
    if (h.symmetry != TUNA_MTX_GENERAL && h.rows != h.cols)
        return fail_at(lr, err, errlen, "a %s matrix must be square, not %" PRIu64 " x %" PRIu64,
                       h.symmetry == TUNA_MTX_SYMMETRIC ? "symmetric" : "skew-symmetric",
                       h.rows, h.cols);
    if (r->on_header && r->on_header(&h, r->ctx, err, errlen))
        return callback_failed(lr, err, errlen);
    for (uint64_t k = 0; k < h.stored; k++) {
        if (!(line = next_data_line(lr)))
            return fail_at(lr, err, errlen,
                           "%" PRIu64 " entries, the size line announces %" PRIu64, k, h.stored);
        uint64_t i = 0, j = 0;
        double v = 0;
        if (parse_entry(lr, line, &h, &i, &j, &v, err, errlen))
            return -1;
        if (r->on_entry(i, j, v, r->ctx, err, errlen))
            return callback_failed(lr, err, errlen);
        if (h.symmetry != TUNA_MTX_GENERAL && i != j &&
            r->on_entry(j, i, h.symmetry == TUNA_MTX_SKEW_SYMMETRIC ? -v : v, r->ctx, err,
                        errlen))
            return callback_failed(lr, err, errlen);
    }
    if (next_data_line(lr))
        return fail_at(lr, err, errlen, "more entries than the %" PRIu64 " the size line "
                       "announces", h.stored);
    if (ferror(lr->f))
        return fail_at(lr, err, errlen, "read error");
    return 0;
}

int tuna_mtx_read(FILE *f, const char *name, const tuna_mtx_reader *r, char *err,
                  size_t errlen)
{
    line_reader lr = {f, name, NULL, 0, 0};
    int rc = read_all(&lr, r, err, errlen);
    free(lr.buf);
    return rc;
}
