/*
 * Reductions on the device (tuna_device.h): inout[i] = in[i] op inout[i], every predefined
 * op on every C type of tuna_dev_type (logical and bitwise ops on the integer types only).
 * One thread per element, grid-stride; the element loads are the type's own (the buffers
 * may sit at any element-aligned offset).
 */
#include "copy_units.cuh"
#include "tuna_device.h"

#include <cstdint>
#include <cuda_runtime.h>
#include <type_traits>

namespace {

/* The arithmetic type of + and *: integers wrap (their unsigned type; signed overflow would
 * be undefined), floating types are themselves. */
template <typename T, bool = std::is_integral<T>::value> struct wrap {
    using type = T;
};
template <typename T> struct wrap<T, true> {
    using type = typename std::make_unsigned<T>::type;
};

template <typename T, int OP> struct op_of;
template <typename T> struct op_of<T, TUNA_DEV_SUM> {
    __device__ static T f(T a, T b)
    {
        using W = typename wrap<T>::type;
        return (T)(W)((W)a + (W)b);
    }
};
template <typename T> struct op_of<T, TUNA_DEV_PROD> {
    __device__ static T f(T a, T b)
    {
        using W = typename wrap<T>::type;
        return (T)(W)((W)a * (W)b);
    }
};
template <typename T> struct op_of<T, TUNA_DEV_MAX> {
    __device__ static T f(T a, T b) { return a > b ? a : b; }
};
template <typename T> struct op_of<T, TUNA_DEV_MIN> {
    __device__ static T f(T a, T b) { return a < b ? a : b; }
};
template <typename T> struct op_of<T, TUNA_DEV_LAND> {
    __device__ static T f(T a, T b) { return (T)((a != 0) && (b != 0)); }
};
template <typename T> struct op_of<T, TUNA_DEV_LOR> {
    __device__ static T f(T a, T b) { return (T)((a != 0) || (b != 0)); }
};
template <typename T> struct op_of<T, TUNA_DEV_LXOR> {
    __device__ static T f(T a, T b) { return (T)((a != 0) != (b != 0)); }
};
template <typename T> struct op_of<T, TUNA_DEV_BAND> {
    __device__ static T f(T a, T b) { return (T)(a & b); }
};
template <typename T> struct op_of<T, TUNA_DEV_BOR> {
    __device__ static T f(T a, T b) { return (T)(a | b); }
};
template <typename T> struct op_of<T, TUNA_DEV_BXOR> {
    __device__ static T f(T a, T b) { return (T)(a ^ b); }
};

template <typename T, int OP>
__global__ void reduce_kernel(T *inout, const T *in, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        inout[i] = op_of<T, OP>::f(in[i], inout[i]);
}

template <typename T, int OP>
int launch(void *inout, const void *in, size_t n, cudaStream_t s)
{
    reduce_kernel<T, OP><<<tuna_device::grid_for(n), 256, 0, s>>>(static_cast<T *>(inout),
                                                                  static_cast<const T *>(in), n);
    return (int)cudaGetLastError();
}

/* The arithmetic ops, every type. */
template <typename T>
int arithmetic(void *inout, const void *in, size_t n, tuna_dev_op op, cudaStream_t s)
{
    switch (op) {
    case TUNA_DEV_SUM: return launch<T, TUNA_DEV_SUM>(inout, in, n, s);
    case TUNA_DEV_PROD: return launch<T, TUNA_DEV_PROD>(inout, in, n, s);
    case TUNA_DEV_MAX: return launch<T, TUNA_DEV_MAX>(inout, in, n, s);
    case TUNA_DEV_MIN: return launch<T, TUNA_DEV_MIN>(inout, in, n, s);
    default: return (int)cudaErrorInvalidValue;
    }
}

/* Every op, the integer types. */
template <typename T>
int integer(void *inout, const void *in, size_t n, tuna_dev_op op, cudaStream_t s)
{
    switch (op) {
    case TUNA_DEV_LAND: return launch<T, TUNA_DEV_LAND>(inout, in, n, s);
    case TUNA_DEV_LOR: return launch<T, TUNA_DEV_LOR>(inout, in, n, s);
    case TUNA_DEV_LXOR: return launch<T, TUNA_DEV_LXOR>(inout, in, n, s);
    case TUNA_DEV_BAND: return launch<T, TUNA_DEV_BAND>(inout, in, n, s);
    case TUNA_DEV_BOR: return launch<T, TUNA_DEV_BOR>(inout, in, n, s);
    case TUNA_DEV_BXOR: return launch<T, TUNA_DEV_BXOR>(inout, in, n, s);
    default: return arithmetic<T>(inout, in, n, op, s);
    }
}

bool is_float(tuna_dev_type t)
{
    return t == TUNA_DEV_FLOAT || t == TUNA_DEV_DOUBLE;
}

} // namespace

extern "C" int tuna_dev_reduce_supported(tuna_dev_type type, tuna_dev_op op)
{
    if ((int)type < 0 || type >= TUNA_DEV_TYPE_COUNT || (int)op < 0 || op >= TUNA_DEV_OP_COUNT)
        return 0;
    return !is_float(type) || op <= TUNA_DEV_MIN;
}

extern "C" size_t tuna_dev_type_size(tuna_dev_type type)
{
    static const size_t size[TUNA_DEV_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return (int)type >= 0 && type < TUNA_DEV_TYPE_COUNT ? size[type] : 0;
}

extern "C" int tuna_dev_reduce(void *inout, const void *in, size_t count, tuna_dev_type type,
                               tuna_dev_op op, void *stream)
{
    if (!tuna_dev_reduce_supported(type, op))
        return (int)cudaErrorInvalidValue;
    if (count == 0)
        return 0;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (type) {
    case TUNA_DEV_INT8: return integer<int8_t>(inout, in, count, op, s);
    case TUNA_DEV_UINT8: return integer<uint8_t>(inout, in, count, op, s);
    case TUNA_DEV_INT16: return integer<int16_t>(inout, in, count, op, s);
    case TUNA_DEV_UINT16: return integer<uint16_t>(inout, in, count, op, s);
    case TUNA_DEV_INT32: return integer<int32_t>(inout, in, count, op, s);
    case TUNA_DEV_UINT32: return integer<uint32_t>(inout, in, count, op, s);
    case TUNA_DEV_INT64: return integer<int64_t>(inout, in, count, op, s);
    case TUNA_DEV_UINT64: return integer<uint64_t>(inout, in, count, op, s);
    case TUNA_DEV_FLOAT: return arithmetic<float>(inout, in, count, op, s);
    default: return arithmetic<double>(inout, in, count, op, s);
    }
}
