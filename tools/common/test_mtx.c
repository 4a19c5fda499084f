/*
 * The shared Matrix Market reader (mtx.h): every rule it documents, on small texts and on
 * the two UF collection files in tests/data.   Usage: test_mtx [DATA_DIR]
 */
#define _POSIX_C_SOURCE 200809L
#include "mtx.h"
#include "unit_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the callbacks saw. */
typedef struct seen {
    tuna_mtx_header h;
    uint64_t row[16], col[16];
    double value[16];
    int n;         /* entries (all counted, the first 16 kept) */
    int fail_at;   /* on_entry fails on this entry (0: never) */
} seen;

static int on_header(const tuna_mtx_header *h, void *ctx, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    ((seen *)ctx)->h = *h;
    return 0;
}

static int on_entry(uint64_t row, uint64_t col, double value, void *ctx, char *err,
                    size_t errlen)
{
    seen *s = ctx;
    if (s->n < 16) {
        s->row[s->n] = row;
        s->col[s->n] = col;
        s->value[s->n] = value;
    }
    if (++s->n == s->fail_at) {
        snprintf(err, errlen, "caller says no");
        return -1;
    }
    return 0;
}

/* Read text; returns the reader's status, the message in err. */
static int read_text(const char *text, seen *s, char *err, size_t errlen)
{
    int fail_at = s->fail_at;
    memset(s, 0, sizeof *s);
    s->fail_at = fail_at;
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    tuna_mtx_reader r = {on_header, on_entry, s};
    err[0] = '\0';
    int rc = tuna_mtx_read(f, "t.mtx", &r, err, errlen);
    fclose(f);
    return rc;
}

static void expect_error(const char *text, const char *needle)
{
    seen s = {0};
    char err[512];
    int rc = read_text(text, &s, err, sizeof err);
    CHECK(rc != 0 && strstr(err, needle) && strncmp(err, "t.mtx", 5) == 0,
          "want an error naming the file and '%s', got rc %d '%s' for:\n%s", needle, rc, err,
          text);
}

static void rules(void)
{
    seen s = {0};
    char err[512];
    /* general real, 1-based indices, comments and blank lines anywhere, CRLF, upper case */
    CHECK(read_text("%%MatrixMarket MATRIX Coordinate REAL General\r\n% c\n\n3 4 2\r\n"
                    "% between\n1 4 2.5\n\n3 1 -1e3\n% trailing comment\n\n",
                    &s, err, sizeof err) == 0,
          "general: %s", err);
    CHECK(s.h.rows == 3 && s.h.cols == 4 && s.h.stored == 2 && s.h.field == TUNA_MTX_REAL &&
              s.h.symmetry == TUNA_MTX_GENERAL && s.n == 2 && s.row[0] == 0 && s.col[0] == 3 &&
              s.value[0] == 2.5 && s.row[1] == 2 && s.col[1] == 0 && s.value[1] == -1000,
          "general entries");
    /* pattern symmetric: every entry counts 1, off-diagonal ones mirrored, diagonal once */
    CHECK(read_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n", &s,
                    err, sizeof err) == 0 &&
              s.n == 3 && s.row[0] == 1 && s.col[0] == 0 && s.row[1] == 0 && s.col[1] == 1 &&
              s.row[2] == 2 && s.col[2] == 2 && s.value[0] == 1 && s.value[1] == 1,
          "pattern symmetric: %s, %d entries", err, s.n);
    /* skew-symmetric: the mirror has the opposite value */
    CHECK(read_text("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 7\n", &s,
                    err, sizeof err) == 0 &&
              s.n == 2 && s.value[0] == 7 && s.value[1] == -7 && s.row[1] == 0 && s.col[1] == 1,
          "skew-symmetric: %s", err);
    /* repeated entries are passed on as they come */
    CHECK(read_text("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 3\n1 1 4\n", &s,
                    err, sizeof err) == 0 &&
              s.n == 2,
          "repeats: %s", err);
    /* a callback's error is located */
    s.fail_at = 2;
    CHECK(read_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 3\n2 2 4\n", &s,
                    err, sizeof err) != 0 &&
              strstr(err, "t.mtx:4: caller says no"),
          "callback error: '%s'", err);

    expect_error("1 2 3\n", "not a Matrix Market file");
    expect_error("", "not a Matrix Market file");
    expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "coordinate only");
    expect_error("%%MatrixMarket vector coordinate real general\n2 2 0\n", "matrix only");
    expect_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
                 "field 'complex'");
    expect_error("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", "hermitian");
    expect_error("%%MatrixMarket matrix coordinate real general\n", "no size line");
    expect_error("%%MatrixMarket matrix coordinate real general\n0 2 0\n", "bad size line");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2\n", "bad size line");
    expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", "square");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", "1-based");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n", "t.mtx:3:");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n", "bad real value");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 -2 1\n", "bad entry");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 x\n", "bad real");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n", "bad real");
    expect_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 2.5\n",
                 "bad integer");
    expect_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 5\n",
                 "unexpected '5'");
    expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 5\n",
                 "diagonal");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 5\n",
                 "1 entries, the size line announces 2");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 5\n2 2 1\n",
                 "more entries");
}

/* The UF collection files the bench and tc tests use. */
static void collection_files(const char *dir)
{
    const struct {
        const char *name;
        uint64_t n, stored;
        int entries; /* with mirrored ones */
    } files[] = {{"bcsstk01.mtx", 48, 224, 2 * 224 - 48}, {"west0132.mtx", 132, 414, 414}};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char path[1024], err[512] = "";
        snprintf(path, sizeof path, "%s/%s", dir, files[k].name);
        FILE *f = fopen(path, "r");
        CHECK(f != NULL, "cannot open %s", path);
        if (!f)
            continue;
        seen s = {0};
        tuna_mtx_reader r = {on_header, on_entry, &s};
        CHECK(tuna_mtx_read(f, path, &r, err, sizeof err) == 0 && s.h.rows == files[k].n &&
                  s.h.cols == files[k].n && s.h.stored == files[k].stored &&
                  s.n == files[k].entries,
              "%s: '%s', %d entries", files[k].name, err, s.n);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    rules();
    collection_files(argc > 1 ? argv[1] : "tests/data");
    printf("test_mtx: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
