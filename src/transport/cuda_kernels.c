/*
 * Opening libtuna-cuda (cuda_kernels.h). It is looked for next to the libtuna that runs
 * (dladdr of this file's code), then by its name (LD_LIBRARY_PATH), unless TUNA_CUDA_KERNELS
 * names another file ("0": none). Opened RTLD_LOCAL: its symbols stay its own.
 */
#define _GNU_SOURCE
#include "cuda_kernels.h"

#include "../device/tuna_device.h" /* the kernels' type and op codes (no CUDA needed) */

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tuna_cuda_kernels kernels;
static bool kernels_ok;
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;

static void *open_next_to_libtuna(void)
{
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)&tuna_cuda_kernels_get, &info) || !info.dli_fname)
        return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return NULL;
    char path[PATH_MAX];
    const int n = snprintf(path, sizeof path, "%.*s/libtuna-cuda.so",
                           (int)(slash - info.dli_fname), info.dli_fname);
    return n > 0 && (size_t)n < sizeof path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
}

static void kernels_load(void)
{
    const char *env = getenv("TUNA_CUDA_KERNELS");
    void *h;
    if (env && *env)
        h = strcmp(env, "0") ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
    else if (!(h = open_next_to_libtuna()))
        h = dlopen("libtuna-cuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    void *p = dlsym(h, "tuna_dev_reduce");
    if (!p) {
        dlclose(h);
        return;
    }
    memcpy(&kernels.reduce, &p, sizeof p); /* ISO C: no object-to-function pointer cast */
    kernels_ok = true;
}

const tuna_cuda_kernels *tuna_cuda_kernels_get(void)
{
    pthread_once(&kernels_once, kernels_load);
    return kernels_ok ? &kernels : NULL;
}

/* The integer types by size and signedness. */
static int int_code(size_t size, bool is_signed)
{
    switch (size) {
    case 1: return is_signed ? TUNA_DEV_INT8 : TUNA_DEV_UINT8;
    case 2: return is_signed ? TUNA_DEV_INT16 : TUNA_DEV_UINT16;
    case 4: return is_signed ? TUNA_DEV_INT32 : TUNA_DEV_UINT32;
    case 8: return is_signed ? TUNA_DEV_INT64 : TUNA_DEV_UINT64;
    default: return -1;
    }
}

static int type_code(MPI_Datatype t)
{
    /* A chain of compares: Open MPI's handles are not constant expressions (no switch). */
    if (t == MPI_FLOAT)
        return TUNA_DEV_FLOAT;
    if (t == MPI_DOUBLE)
        return TUNA_DEV_DOUBLE;
    if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T)
        return TUNA_DEV_INT8;
    if (t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T || t == MPI_BYTE)
        return TUNA_DEV_UINT8;
    if (t == MPI_SHORT || t == MPI_INT16_T)
        return TUNA_DEV_INT16;
    if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T)
        return TUNA_DEV_UINT16;
    if (t == MPI_INT || t == MPI_INT32_T)
        return int_code(sizeof(int), true);
    if (t == MPI_UNSIGNED || t == MPI_UINT32_T)
        return int_code(sizeof(unsigned), false);
    if (t == MPI_LONG)
        return int_code(sizeof(long), true);
    if (t == MPI_UNSIGNED_LONG)
        return int_code(sizeof(unsigned long), false);
    if (t == MPI_LONG_LONG || t == MPI_LONG_LONG_INT || t == MPI_INT64_T)
        return TUNA_DEV_INT64;
    if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T)
        return TUNA_DEV_UINT64;
    if (t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT)
        return int_code(sizeof(MPI_Aint), true);
    return -1;
}

bool tuna_cuda_kernel_codes(MPI_Datatype type, MPI_Op op, int *dev_type, int *dev_op)
{
    const int t = type_code(type);
    int o = -1;
    if (op == MPI_SUM)
        o = TUNA_DEV_SUM;
    else if (op == MPI_PROD)
        o = TUNA_DEV_PROD;
    else if (op == MPI_MAX)
        o = TUNA_DEV_MAX;
    else if (op == MPI_MIN)
        o = TUNA_DEV_MIN;
    else if (op == MPI_LAND)
        o = TUNA_DEV_LAND;
    else if (op == MPI_LOR)
        o = TUNA_DEV_LOR;
    else if (op == MPI_LXOR)
        o = TUNA_DEV_LXOR;
    else if (op == MPI_BAND)
        o = TUNA_DEV_BAND;
    else if (op == MPI_BOR)
        o = TUNA_DEV_BOR;
    else if (op == MPI_BXOR)
        o = TUNA_DEV_BXOR;
    if (t < 0 || o < 0)
        return false;
    /* MPI's rule: logical and bitwise ops on integers (and bitwise on MPI_BYTE) only;
     * MPI_BYTE takes no arithmetic. */
    const bool floating = t == TUNA_DEV_FLOAT || t == TUNA_DEV_DOUBLE;
    if (floating && o >= TUNA_DEV_LAND)
        return false;
    if (type == MPI_BYTE && o < TUNA_DEV_BAND)
        return false;
    *dev_type = t;
    *dev_op = o;
    return true;
}
