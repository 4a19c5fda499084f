/*
 * A stand-in for CUDA's runtime (built as libcudart.so.13 in a test build directory): the
 * entries tuna's staging transport calls (src/transport/cuda_staged.c), on a machine
 * without a GPU. "Device" memory is host memory the test program registers here and that
 * stays PROT_NONE except inside this library's copies, so any host access by tuna faults.
 * Copies are counted by direction; pinned memory (malloc'd here) is counted, current and
 * peak. MOCK_CUDART_FAIL_D2D=1: device-to-device copies fail (cudaErrorInvalidValue).
 * Used by tests/test_staged.c (docs/gpu.md).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MAX_RANGES = 64, MAX_PINNED = 4096 };
static struct {
    uintptr_t lo, hi;
    int open;  /* left readable and writable: a CUDA-aware MPI's device memory */
    int owned; /* from cudaMalloc: tuna's own device memory, kept by mock_cudart_release */
} dev[MAX_RANGES];
static int ndev;
static struct {
    void *p;
    size_t n;
} pinned[MAX_PINNED];
static long copies[4]; /* to host, to device, device to device, host to host */
static size_t pinned_now, pinned_peak;
static long host_allocs;

/* The test program's side (found with dlsym). */
void mock_cudart_device(void *p, size_t n);
void mock_cudart_device_open(void *p, size_t n);
void mock_cudart_release(void);
void mock_cudart_stats(long out[6]);
void mock_cudart_reset_stats(void);

static int find(const void *p)
{
    for (int i = 0; i < ndev; i++)
        if ((uintptr_t)p >= dev[i].lo && (uintptr_t)p < dev[i].hi)
            return i;
    return -1;
}

static void protect(int i, int prot)
{
    if (i >= 0 && !dev[i].open && mprotect((void *)dev[i].lo, dev[i].hi - dev[i].lo, prot) != 0)
        abort();
}

/* p, n: page-aligned, n a multiple of the page size. */
void mock_cudart_device(void *p, size_t n)
{
    if (ndev == MAX_RANGES)
        abort();
    dev[ndev].lo = (uintptr_t)p;
    dev[ndev].hi = (uintptr_t)p + n;
    dev[ndev].open = dev[ndev].owned = 0;
    protect(ndev++, PROT_NONE);
}

/* Device memory the MPI may read and write (it is "CUDA-aware"): copies are still counted
 * by direction, but host accesses are not caught. */
void mock_cudart_device_open(void *p, size_t n)
{
    if (ndev == MAX_RANGES)
        abort();
    dev[ndev].lo = (uintptr_t)p;
    dev[ndev].hi = (uintptr_t)p + n;
    dev[ndev].owned = 0;
    dev[ndev++].open = 1;
}

/* Every range of the test's readable and writable again (for its own checks), and
 * forgotten; what tuna allocated with cudaMalloc stays device memory until cudaFree. */
void mock_cudart_release(void)
{
    int kept = 0;
    for (int i = 0; i < ndev; i++) {
        if (dev[i].owned)
            dev[kept++] = dev[i];
        else
            protect(i, PROT_READ | PROT_WRITE);
    }
    ndev = kept;
}

/* copies to host, to device, device to device; pinned bytes now, at the peak; pinned
 * allocations. */
void mock_cudart_stats(long out[6])
{
    out[0] = copies[0];
    out[1] = copies[1];
    out[2] = copies[2];
    out[3] = (long)pinned_now;
    out[4] = (long)pinned_peak;
    out[5] = host_allocs;
}

void mock_cudart_reset_stats(void)
{
    copies[0] = copies[1] = copies[2] = copies[3] = 0;
    pinned_peak = pinned_now;
}

typedef void *cudaStream_t;

int cudaGetDeviceCount(int *n);
int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t s);
int cudaStreamCreate(cudaStream_t *s);
int cudaStreamDestroy(cudaStream_t s);
int cudaStreamSynchronize(cudaStream_t s);
int cudaHostAlloc(void **p, size_t n, unsigned flags);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaFreeHost(void *p);
const char *cudaGetErrorString(int e);

int cudaGetDeviceCount(int *n)
{
    *n = 1;
    return 0;
}

/* cudaMemcpyDefault only (tuna's kind): the direction from the registered ranges. */
int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t s)
{
    (void)s;
    if (kind != 4)
        return 1; /* cudaErrorInvalidValue */
    const int d = find(dst), c = find(src);
    const char *fail = getenv("MOCK_CUDART_FAIL_D2D");
    if (d >= 0 && c >= 0 && fail && *fail == '1')
        return 1;
    if (n > 0 && ((d >= 0 && find((char *)dst + n - 1) != d) ||
                  (c >= 0 && find((const char *)src + n - 1) != c)))
        return 1; /* a region past its allocation */
    protect(d, PROT_READ | PROT_WRITE);
    protect(c, PROT_READ | PROT_WRITE);
    memmove(dst, src, n);
    protect(d, PROT_NONE);
    protect(c, PROT_NONE);
    copies[d >= 0 && c >= 0 ? 2 : d >= 0 ? 1 : c >= 0 ? 0 : 3]++;
    return 0;
}

int cudaStreamCreate(cudaStream_t *s)
{
    *s = malloc(1);
    return *s ? 0 : 2; /* cudaErrorMemoryAllocation */
}

int cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return 0;
}

int cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return 0;
}

int cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    (void)flags;
    int i = 0;
    while (i < MAX_PINNED && pinned[i].p)
        i++;
    if (i == MAX_PINNED || !(*p = malloc(n ? n : 1)))
        return 2;
    pinned[i].p = *p;
    pinned[i].n = n;
    pinned_now += n;
    pinned_peak = pinned_now > pinned_peak ? pinned_now : pinned_peak;
    host_allocs++;
    return 0;
}

int cudaFreeHost(void *p)
{
    for (int i = 0; i < MAX_PINNED; i++)
        if (pinned[i].p == p && p) {
            pinned_now -= pinned[i].n;
            pinned[i].p = NULL;
            free(p);
            return 0;
        }
    return 1;
}

const char *cudaGetErrorString(int e)
{
    return e == 0 ? "no error" : e == 2 ? "out of memory" : "invalid value";
}

/* Device memory of tuna's own (a transport's scratch): pages kept PROT_NONE like the test's
 * device buffers, counted as device memory by the copies. */
int cudaMalloc(void **p, size_t n)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = (n + pg - 1) / pg * pg;
    void *q = mmap(NULL, len ? len : pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED || ndev == MAX_RANGES)
        return 2; /* cudaErrorMemoryAllocation */
    dev[ndev].lo = (uintptr_t)q;
    dev[ndev].hi = (uintptr_t)q + (len ? len : pg);
    dev[ndev].open = 0;
    dev[ndev++].owned = 1;
    *p = q;
    return 0;
}

int cudaFree(void *p)
{
    if (!p)
        return 0;
    for (int i = 0; i < ndev; i++)
        if (dev[i].owned && dev[i].lo == (uintptr_t)p) {
            munmap(p, dev[i].hi - dev[i].lo);
            dev[i] = dev[--ndev];
            return 0;
        }
    return 1;
}
