/*
 * The permutation of permuted recursive multiplying on the device: out block p = in block
 * src[p] (tuna_device.h). One thread per copy unit, grid-stride.
 */
#include "copy_units.cuh"
#include "tuna_device.h"

#include <cuda_runtime.h>

namespace {

template <typename U>
__global__ void permute_kernel(U *out, const U *in, size_t units_per_block, size_t total,
                               const int *src)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t p = i / units_per_block, off = i - p * units_per_block;
        out[i] = in[(size_t)src[p] * units_per_block + off];
    }
}

template <typename U>
int launch(void *out, const void *in, size_t block, int n, const int *src, cudaStream_t s)
{
    const size_t upb = block / sizeof(U), total = upb * (size_t)n;
    permute_kernel<U><<<tuna_device::grid_for(total), 256, 0, s>>>(
        static_cast<U *>(out), static_cast<const U *>(in), upb, total, src);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int tuna_dev_permute_blocks(void *out, const void *in, size_t block, int n,
                                       const int *src, void *stream)
{
    using namespace tuna_device;
    if (n <= 0 || block == 0)
        return 0;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (copy_unit(block | addr(out) | addr(in))) {
    case 16: return launch<unit16>(out, in, block, n, src, s);
    case 8: return launch<unsigned long long>(out, in, block, n, src, s);
    case 4: return launch<unsigned>(out, in, block, n, src, s);
    case 2: return launch<unsigned short>(out, in, block, n, src, s);
    default: return launch<unsigned char>(out, in, block, n, src, s);
    }
}
