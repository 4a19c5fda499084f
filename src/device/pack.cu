/*
 * Pack and unpack of strided blocks on the device (tuna_device.h): nblocks blocks of
 * blocklen bytes, stride bytes apart, to and from one contiguous range. One thread per copy
 * unit, grid-stride.
 */
#include "copy_units.cuh"
#include "tuna_device.h"

#include <cuda_runtime.h>

namespace {

/* unpack false: out[b][o] (contiguous) = in[b * stride + o]; true: the reverse. */
template <typename U, bool unpack>
__global__ void strided_kernel(U *out, const U *in, size_t units_per_block, size_t stride_units,
                               size_t total)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t b = i / units_per_block, o = i - b * units_per_block;
        if (unpack)
            out[b * stride_units + o] = in[i];
        else
            out[i] = in[b * stride_units + o];
    }
}

template <typename U, bool unpack>
int launch(void *out, const void *in, size_t nblocks, size_t blocklen, size_t stride,
           cudaStream_t s)
{
    const size_t upb = blocklen / sizeof(U), total = upb * nblocks;
    strided_kernel<U, unpack><<<tuna_device::grid_for(total), 256, 0, s>>>(
        static_cast<U *>(out), static_cast<const U *>(in), upb, stride / sizeof(U), total);
    return (int)cudaGetLastError();
}

template <bool unpack>
int strided(void *out, const void *in, size_t nblocks, size_t blocklen, size_t stride,
            void *stream)
{
    using namespace tuna_device;
    if (nblocks == 0 || blocklen == 0)
        return 0;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (copy_unit(blocklen | stride | addr(out) | addr(in))) {
    case 16: return launch<unit16, unpack>(out, in, nblocks, blocklen, stride, s);
    case 8: return launch<unsigned long long, unpack>(out, in, nblocks, blocklen, stride, s);
    case 4: return launch<unsigned, unpack>(out, in, nblocks, blocklen, stride, s);
    case 2: return launch<unsigned short, unpack>(out, in, nblocks, blocklen, stride, s);
    default: return launch<unsigned char, unpack>(out, in, nblocks, blocklen, stride, s);
    }
}

} // namespace

extern "C" int tuna_dev_pack(void *out, const void *in, size_t nblocks, size_t blocklen,
                             size_t stride, void *stream)
{
    return strided<false>(out, in, nblocks, blocklen, stride, stream);
}

extern "C" int tuna_dev_unpack(void *out, const void *in, size_t nblocks, size_t blocklen,
                               size_t stride, void *stream)
{
    return strided<true>(out, in, nblocks, blocklen, stride, stream);
}
