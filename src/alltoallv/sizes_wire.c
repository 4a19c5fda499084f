/* Announced block sizes on the wire (sizes_wire.h): the encoder and decoder. */
#include "sizes_wire.h"
#include "alltoallv.h"

size_t tuna_sizes_encode(const uint64_t *sizes, size_t cnt, unsigned char *out)
{
    uint64_t max = 0;
    for (size_t k = 0; k < cnt; k++)
        max = sizes[k] > max ? sizes[k] : max;
    const unsigned w = max == 0 ? 0 : max <= UINT8_MAX ? 1 : max <= UINT16_MAX ? 2
                                    : max <= UINT32_MAX ? 4 : 8;
    /* In place, size k moves from bytes [8k, 8k+8) to [1+kw, 1+(k+1)w): below or on its own
     * word for w <= 4 (so lowest first overwrites only sizes already read), one byte up for
     * w = 8 (highest first, likewise). Each size is read whole before its bytes are written,
     * and the header, over size 0's first byte, last. */
    if (w == 8) {
        for (size_t k = cnt; k-- > 0;) {
            const uint64_t x = sizes[k];
            for (unsigned b = 0; b < 8; b++)
                out[1 + 8 * k + b] = (unsigned char)(x >> (8 * b));
        }
    } else {
        for (size_t k = 0; k < cnt && w; k++) {
            const uint64_t x = sizes[k];
            for (unsigned b = 0; b < w; b++)
                out[1 + (size_t)w * k + b] = (unsigned char)(x >> (8 * b));
        }
    }
    out[0] = (unsigned char)w;
    return 1 + (size_t)w * cnt;
}

int tuna_sizes_decode(const unsigned char *in, size_t len, size_t cnt, uint64_t *sizes,
                      const char *who)
{
    if (len < 1)
        return tuna_error_set(MPI_ERR_INTERN, "%s: empty metadata for %zu sizes", who, cnt);
    const unsigned w = in[0];
    if (w != 0 && w != 1 && w != 2 && w != 4 && w != 8)
        return tuna_error_set(MPI_ERR_INTERN, "%s: metadata with a size width of %u bytes",
                              who, w);
    if (w && (len - 1) / w < cnt)
        return tuna_error_set(MPI_ERR_INTERN,
                              "%s: %zu bytes of metadata for %zu sizes of %u bytes", who, len,
                              cnt, w);
    const unsigned char *p = in + 1;
    for (size_t k = 0; k < cnt; k++) {
        uint64_t v = 0;
        for (unsigned b = 0; b < w; b++)
            v |= (uint64_t)*p++ << (8 * b);
        sizes[k] = v;
    }
    return MPI_SUCCESS;
}
