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

/* The kernels' code of `t`, -1 where none. Tables built per call: the handles of some MPIs
 * are not constant expressions. */
static int type_code(MPI_Datatype t)
{
    const struct {
        MPI_Datatype t;
        int code;
    } table[] = {
        {MPI_FLOAT, TUNA_DEV_FLOAT},
        {MPI_DOUBLE, TUNA_DEV_DOUBLE},
        {MPI_SIGNED_CHAR, TUNA_DEV_INT8},
        {MPI_INT8_T, TUNA_DEV_INT8},
        {MPI_UNSIGNED_CHAR, TUNA_DEV_UINT8},
        {MPI_UINT8_T, TUNA_DEV_UINT8},
        {MPI_BYTE, TUNA_DEV_UINT8},
        {MPI_SHORT, int_code(sizeof(short), true)},
        {MPI_INT16_T, TUNA_DEV_INT16},
        {MPI_UNSIGNED_SHORT, int_code(sizeof(unsigned short), false)},
        {MPI_UINT16_T, TUNA_DEV_UINT16},
        {MPI_INT, int_code(sizeof(int), true)},
        {MPI_INT32_T, TUNA_DEV_INT32},
        {MPI_UNSIGNED, int_code(sizeof(unsigned), false)},
        {MPI_UINT32_T, TUNA_DEV_UINT32},
        {MPI_LONG, int_code(sizeof(long), true)},
        {MPI_UNSIGNED_LONG, int_code(sizeof(unsigned long), false)},
        {MPI_LONG_LONG, int_code(sizeof(long long), true)},
        {MPI_LONG_LONG_INT, int_code(sizeof(long long), true)},
        {MPI_INT64_T, TUNA_DEV_INT64},
        {MPI_UNSIGNED_LONG_LONG, int_code(sizeof(unsigned long long), false)},
        {MPI_UINT64_T, TUNA_DEV_UINT64},
        {MPI_AINT, int_code(sizeof(MPI_Aint), true)},
        {MPI_OFFSET, int_code(sizeof(MPI_Offset), true)},
        {MPI_COUNT, int_code(sizeof(MPI_Count), true)},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].t == t)
            return table[i].code;
    return -1;
}

bool tuna_cuda_kernel_codes(MPI_Datatype type, MPI_Op op, int *dev_type, int *dev_op)
{
    /* In tuna_dev_op's order (src/device/tuna_device.h). */
    const MPI_Op ops[TUNA_DEV_OP_COUNT] = {MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                                           MPI_LOR,  MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    const int t = type_code(type);
    int o = 0;
    while (o < TUNA_DEV_OP_COUNT && ops[o] != op)
        o++;
    if (t < 0 || o == TUNA_DEV_OP_COUNT)
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
