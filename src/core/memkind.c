/*
 * Memory kinds: CUDA's driver asked, where the process has loaded it, what a buffer is
 * (memkind.h; docs/gpu.md). The driver is found with dlopen(RTLD_NOLOAD), which never loads
 * it; its cuPointerGetAttributes never initialises CUDA either (an uninitialised driver
 * answers CUDA_ERROR_NOT_INITIALIZED: no device pointer can exist yet, so host).
 */
#define _GNU_SOURCE /* RTLD_NOLOAD, dlinfo, RTLD_DI_LINKMAP */
#include "memkind.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* The driver's types and values used here (CUDA's cuda.h, which tuna does not need). */
enum {
    CU_OK = 0,
    CU_ERROR_NOT_INITIALIZED = 3,
    CU_ERROR_DEINITIALIZED = 4,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_MEMORYTYPE_HOST = 1,
};
typedef int (*cu_pointer_get_attributes_fn)(unsigned n, int *attributes, void **data,
                                            unsigned long long ptr);

atomic_bool tuna_memkind_driver;
struct link_map *_Atomic tuna_memkind_tail;

static cu_pointer_get_attributes_fn _Atomic get_attributes;
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;

/* dl_iterate_phdr's last object: the end of the list of loaded objects. */
static int last_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(const char **)data = info->dlpi_name;
    return 0;
}

/* Look for the driver; where it is not loaded, pin the last loaded object and watch it. */
static void scan(void)
{
    pthread_mutex_lock(&scan_lock);
    if (atomic_load_explicit(&tuna_memkind_driver, memory_order_acquire)) {
        pthread_mutex_unlock(&scan_lock);
        return;
    }
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda) {
        void *fn = dlsym(cuda, "cuPointerGetAttributes");
        if (fn) { /* the handle stays open: the driver was the application's anyway */
            cu_pointer_get_attributes_fn f;
            memcpy(&f, &fn, sizeof f); /* ISO C has no object-to-function pointer cast */
            atomic_store_explicit(&get_attributes, f, memory_order_release);
            atomic_store_explicit(&tuna_memkind_driver, true, memory_order_release);
            pthread_mutex_unlock(&scan_lock);
            return;
        }
        dlclose(cuda);
    }
    /* Objects are appended to the list as they load; the last one, pinned so that its link
     * map lives on, gains a successor when anything loads after it. */
    const char *name = NULL;
    dl_iterate_phdr(last_object, &name);
    struct link_map *tail = NULL;
    void *h = name && *name ? dlopen(name, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (h && dlinfo(h, RTLD_DI_LINKMAP, &tail) != 0)
        tail = NULL;
    struct link_map *old = atomic_load_explicit(&tuna_memkind_tail, memory_order_acquire);
    if (h && (!tail || tail == old))
        dlclose(h); /* pinned already (or not usable) */
    atomic_store_explicit(&tuna_memkind_tail, tail, memory_order_release);
    pthread_mutex_unlock(&scan_lock);
}

/* One buffer's kind. A failed query other than "not initialised" is answered conservatively:
 * not host memory. */
static unsigned kind_of(cu_pointer_get_attributes_fn f, const void *buf)
{
    if (!buf || buf == MPI_IN_PLACE)
        return 0;
    int attr[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
    unsigned type = 0, managed = 0;
    void *data[2] = {&type, &managed};
    const int rc = f(2, attr, data, (unsigned long long)(uintptr_t)buf);
    if (rc == CU_ERROR_NOT_INITIALIZED || rc == CU_ERROR_DEINITIALIZED)
        return TUNA_MEMORY_HOST;
    if (rc != CU_OK || managed || (type != 0 && type != CU_MEMORYTYPE_HOST))
        return TUNA_MEMORY_DEVICE;
    return TUNA_MEMORY_HOST; /* 0: memory CUDA does not know (malloc'd), or pinned host */
}

unsigned tuna_memory_kinds_query(const void *sendbuf, const void *recvbuf)
{
    if (!atomic_load_explicit(&tuna_memkind_driver, memory_order_acquire)) {
        scan();
        if (!atomic_load_explicit(&tuna_memkind_driver, memory_order_acquire))
            return TUNA_MEMORY_HOST;
    }
    cu_pointer_get_attributes_fn f = atomic_load_explicit(&get_attributes, memory_order_acquire);
    const unsigned k = kind_of(f, sendbuf) | kind_of(f, recvbuf);
    return k ? k : TUNA_MEMORY_HOST;
}

const char *tuna_memory_reason(unsigned kinds)
{
    return (kinds & TUNA_MEMORY_HOST)
               ? "host and device buffers in one call: the algorithm asked for does not serve "
                 "device memory (docs/gpu.md)"
               : "device buffers: the algorithm asked for does not serve device memory "
                 "(docs/gpu.md)";
}
