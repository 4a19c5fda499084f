/*
 * What the staging transport's tests share (tests/test_staged.c, test_staged_collectives.c):
 * the stand-ins for CUDA's driver (mock_cuda.c, which says which buffers are device memory)
 * and runtime (mock_cudart.c, which keeps "device" buffers PROT_NONE outside its copies and
 * counts copies and pinned memory), loaded before MPI_Init as a CUDA application loads the
 * real ones; page-aligned buffers; and whether auto stages (as tuna decides it).
 * One test program includes it (its definitions are the program's own).
 */
#ifndef TUNA_TEST_STAGED_MOCKS_H
#define TUNA_TEST_STAGED_MOCKS_H

#define _GNU_SOURCE
#include <mpi.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* MPIX_Query_cuda_support (Open MPI) */
#endif
#endif

#include "tuna.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SENTINEL 0x5A
#define TAIL 64
#define ALIGN 256 /* the transport's rounding of a message in bounce memory */

static int me, P, failures;
static void (*drv_register)(const void *, size_t, int);
static void (*drv_clear)(void);
static void (*rt_device)(void *, size_t);
static void (*rt_release)(void);
static void (*rt_stats)(long[6]);

/* --driver PATH --runtime PATH: both loaded (RTLD_GLOBAL) and their test entries found;
 * 0, with a message naming `prog`, where not. */
static int mocks_load(int argc, char **argv, const char *prog)
{
    const char *driver = NULL, *runtime = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--driver"))
            driver = argv[++i];
        else if (!strcmp(argv[i], "--runtime"))
            runtime = argv[++i];
    }
    void *hd = driver ? dlopen(driver, RTLD_NOW | RTLD_GLOBAL) : NULL;
    void *hr = runtime ? dlopen(runtime, RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (!hd || !hr) {
        printf("usage: %s --driver libcuda.so.1 --runtime libcudart.so.13 (%s)\n", prog,
               dlerror());
        return 0;
    }
    *(void **)&drv_register = dlsym(hd, "mock_cuda_register");
    *(void **)&drv_clear = dlsym(hd, "mock_cuda_clear");
    *(void **)&rt_device = dlsym(hr, "mock_cudart_device");
    *(void **)&rt_release = dlsym(hr, "mock_cudart_release");
    *(void **)&rt_stats = dlsym(hr, "mock_cudart_stats");
    if (!drv_register || !drv_clear || !rt_device || !rt_release || !rt_stats) {
        printf("%s: the mocks lack their test entries\n", prog);
        return 0;
    }
    return 1;
}

static size_t page_round(size_t n)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

static void *map(size_t n)
{
    void *p = mmap(NULL, page_round(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    if (p == MAP_FAILED)
        MPI_Abort(MPI_COMM_WORLD, 3);
    return p;
}

/* A case's end: the stand-ins forget its "device" buffers (readable again), which are
 * unmapped, and its host copies freed. */
static void case_free(char *s, size_t sbytes, char *r, size_t rbytes, char *rs, char *rr)
{
    rt_release();
    drv_clear();
    munmap(s, page_round(sbytes));
    munmap(r, page_round(rbytes));
    free(rs);
    free(rr);
}

/* Whether auto should stage device buffers here: the MPI not CUDA-aware (TUNA_CUDA_AWARE,
 * else the MPI's own answer where its headers have the query, as tuna asks). */
static int auto_stages(void)
{
    const char *e = getenv("TUNA_CUDA_AWARE");
    if (e && (!strcmp(e, "0") || !strcmp(e, "1")))
        return *e == '0';
#if defined(OMPI_HAVE_MPI_EXT_CUDA) || defined(MPIX_GPU_SUPPORT_CUDA)
    return MPIX_Query_cuda_support() == 0;
#else
    return 0;
#endif
}

#endif /* TUNA_TEST_STAGED_MOCKS_H */
