/*
 * Unit test of the announced sizes' wire format (src/alltoallv/sizes_wire.c), which
 * twophase-bruck, TuNA and hierarchical TuNA share: the width is the narrowest of 0, 1, 2,
 * 4, 8 bytes that holds the largest size, the length is 1 + width * count, the sizes come
 * back exactly, also when encoded in place over their own words (twophase-bruck), and a bad
 * header or a message too short for its sizes gives MPI_ERR_INTERN with a message, reading
 * nothing past the length given (the buffers here end exactly there, for ASan).
 * No MPI communication: runs as a plain process.
 */
#include "sizes_wire.h"
#include "tuna_internal.h" /* tuna_error_clear: the first error recorded is kept */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* cnt sizes whose largest is exactly max (0: all zero). */
static void fill(uint64_t *v, size_t cnt, uint64_t max)
{
    /* Golden-ratio multiples spread the values (and their bytes) over [0, max). */
    for (size_t k = 0; k < cnt; k++)
        v[k] = max ? ((uint64_t)(k + 1) * 0x9E3779B97F4A7C15ULL) % max : 0;
    if (cnt)
        v[cnt / 2] = max;
}

static void roundtrip(size_t cnt, uint64_t max, unsigned width)
{
    uint64_t *v = malloc(sizeof(uint64_t) * (cnt + 1));
    uint64_t *back = malloc(sizeof(uint64_t) * (cnt + 1));
    unsigned char *wire = malloc(TUNA_SIZES_BYTES(cnt));
    /* In place: the words' allocation with TUNA_SIZES_BYTES(cnt) bytes of room. */
    uint64_t *inplace = malloc(TUNA_SIZES_BYTES(cnt) > 8 * cnt ? TUNA_SIZES_BYTES(cnt) : 8);
    fill(v, cnt, max);
    memcpy(inplace, v, sizeof(uint64_t) * cnt);
    size_t len = tuna_sizes_encode(v, cnt, wire);
    size_t len2 = tuna_sizes_encode(inplace, cnt, (unsigned char *)inplace);
    CHECK(len == 1 + (size_t)width * cnt, "cnt %zu max %llu: length %zu, expected %zu", cnt,
          (unsigned long long)max, len, 1 + (size_t)width * cnt);
    CHECK(wire[0] == width, "cnt %zu max %llu: width %u, expected %u", cnt,
          (unsigned long long)max, wire[0], width);
    CHECK(len2 == len && memcmp(wire, inplace, len) == 0,
          "cnt %zu max %llu: the in-place encoding differs", cnt, (unsigned long long)max);
    /* Decode from a buffer of exactly len bytes (ASan catches a read past it). */
    unsigned char *exact = malloc(len);
    memcpy(exact, wire, len);
    int rc = tuna_sizes_decode(exact, len, cnt, back, "test");
    CHECK(rc == MPI_SUCCESS && (cnt == 0 || memcmp(back, v, sizeof(uint64_t) * cnt) == 0),
          "cnt %zu max %llu: decoded sizes differ (rc %d)", cnt, (unsigned long long)max, rc);
    /* One byte short: refused, nothing read past it. */
    if (width && cnt) {
        rc = tuna_sizes_decode(exact, len - 1, cnt, back, "test");
        CHECK(rc == MPI_ERR_INTERN, "cnt %zu max %llu: short metadata gave %d", cnt,
              (unsigned long long)max, rc);
    }
    free(exact);
    free(inplace);
    free(wire);
    free(back);
    free(v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct {
        uint64_t max;
        unsigned width;
    } cases[] = {{0, 0},          {1, 1},          {255, 1},          {256, 2},
                 {65535, 2},      {65536, 4},      {UINT32_MAX, 4},   {(uint64_t)UINT32_MAX + 1, 8},
                 {UINT64_MAX, 8}};
    const size_t counts[] = {1, 2, 3, 7, 8, 9, 64, 513};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t n = 0; n < sizeof counts / sizeof counts[0]; n++)
            roundtrip(counts[n], cases[c].max, cases[c].width);
    roundtrip(0, 0, 0); /* no sizes: the header alone */

    /* Headers that are no width, and an empty message: MPI_ERR_INTERN with a message. */
    uint64_t out[4];
    for (unsigned w = 0; w < 256; w++) {
        if (w == 0 || w == 1 || w == 2 || w == 4 || w == 8)
            continue;
        unsigned char *bad = calloc(TUNA_SIZES_BYTES(4), 1);
        bad[0] = (unsigned char)w;
        tuna_error_clear();
        int rc = tuna_sizes_decode(bad, TUNA_SIZES_BYTES(4), 4, out, "test");
        CHECK(rc == MPI_ERR_INTERN, "width %u accepted (rc %d)", w, rc);
        if (w == 3) {
            const char *msg = tuna_error_string(rc);
            CHECK(msg && strstr(msg, "test: metadata with a size width of 3 bytes") != NULL,
                  "width 3: message '%s'", msg);
        }
        free(bad);
    }
    unsigned char none = 0;
    CHECK(tuna_sizes_decode(&none, 0, 4, out, "test") == MPI_ERR_INTERN,
          "empty metadata accepted");

    printf("%s: sizes wire format\n", failures ? "FAILED" : "PASSED");
    MPI_Finalize();
    return failures != 0;
}
