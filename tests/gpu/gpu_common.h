/* What the gpu tests share: the skip without a device (exit 77, CTest's SKIP_RETURN_CODE). */
#ifndef TUNA_GPU_COMMON_H
#define TUNA_GPU_COMMON_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define GPU_SKIP 77

static inline void gpu_require_device(const char *test)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("SKIP %s: no CUDA device (cudaGetDeviceCount: %s, %d devices)\n", test,
               e != cudaSuccess ? cudaGetErrorString(e) : "no error", n);
        exit(GPU_SKIP);
    }
}

#define GPU_CHECK(call)                                                                         \
    do {                                                                                        \
        cudaError_t gpu_e_ = (cudaError_t)(call);                                               \
        if (gpu_e_ != cudaSuccess) {                                                            \
            printf("FAILED: %s: %s (%s:%d)\n", #call, cudaGetErrorString(gpu_e_), __FILE__,     \
                   __LINE__);                                                                   \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

#endif
