/*
 * The copy unit of the permutation and pack kernels: the widest of 16, 8, 4, 2, 1 bytes that
 * divides every address and length involved, so that odd sizes and misaligned offsets stay
 * correct and aligned ones move 16 bytes per load.
 */
#ifndef TUNA_COPY_UNITS_CUH
#define TUNA_COPY_UNITS_CUH

#include <cstddef>
#include <cstdint>

namespace tuna_device {

struct alignas(16) unit16 {
    unsigned long long a, b;
};

inline size_t copy_unit(size_t bits)
{
    for (size_t u = 16; u > 1; u /= 2)
        if ((bits & (u - 1)) == 0)
            return u;
    return 1;
}

inline size_t addr(const void *p)
{
    return (size_t)(uintptr_t)p;
}

/* Threads per block and blocks for `n` work items (grid-stride loops cover the rest). */
inline unsigned grid_for(size_t n)
{
    const size_t threads = 256, most = 65535;
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > most ? most : b);
}

} // namespace tuna_device

#endif
