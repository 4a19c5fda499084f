/*
 * A stand-in for CUDA's driver (built as libcuda.so.1 in a test build directory): the one
 * driver entry tuna calls, cuPointerGetAttributes, answering from address ranges the test
 * program registers as device or managed memory (really host memory, so that the MPI
 * library's own call, which the test compares against, can move it). Memory type 0 and
 * "not managed" elsewhere, as the real driver answers for memory it does not know.
 * MOCK_CUDA_UNINITIALIZED=1: every query answers CUDA_ERROR_NOT_INITIALIZED (3).
 * Used by tests/test_memkind.c and tests/preload/device_buffers.c (docs/gpu.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

enum { MAX_RANGES = 64 };
static struct {
    uintptr_t lo, hi;
    int managed;
} ranges[MAX_RANGES];
static int nranges;
static long queries;

/* The test program's side (found with dlsym). */
void mock_cuda_register(const void *p, size_t n, int managed);
void mock_cuda_clear(void);
long mock_cuda_queries(void);

void mock_cuda_register(const void *p, size_t n, int managed)
{
    if (nranges < MAX_RANGES && n > 0) {
        ranges[nranges].lo = (uintptr_t)p;
        ranges[nranges].hi = (uintptr_t)p + n;
        ranges[nranges].managed = managed;
        nranges++;
    }
}

void mock_cuda_clear(void)
{
    nranges = 0;
}

long mock_cuda_queries(void)
{
    return queries;
}

/* CUresult cuPointerGetAttributes(unsigned, CUpointer_attribute *, void **, CUdeviceptr) */
int cuPointerGetAttributes(unsigned n, const int *attributes, void **data,
                           unsigned long long ptr);
int cuPointerGetAttributes(unsigned n, const int *attributes, void **data,
                           unsigned long long ptr)
{
    queries++;
    const char *u = getenv("MOCK_CUDA_UNINITIALIZED");
    if (u && *u == '1')
        return 3; /* CUDA_ERROR_NOT_INITIALIZED */
    int hit = -1;
    for (int i = 0; i < nranges; i++)
        if (ptr >= ranges[i].lo && ptr < ranges[i].hi)
            hit = i;
    for (unsigned k = 0; k < n; k++) {
        if (attributes[k] == 2) /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE: CUmemorytype */
            /* device: CU_MEMORYTYPE_DEVICE; managed: HOST, so that only IS_MANAGED tells */
            *(unsigned *)data[k] = hit < 0 ? 0u : ranges[hit].managed ? 1u : 2u;
        else if (attributes[k] == 8) /* CU_POINTER_ATTRIBUTE_IS_MANAGED: a bool */
            *(unsigned char *)data[k] = hit >= 0 && ranges[hit].managed;
    }
    return 0;
}
