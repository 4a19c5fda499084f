/*
 * Bandwidth of tuna's device kernels at 64 MiB against the device's own copy
 * (cudaMemcpy device to device): the permutation (64 blocks of 1 MiB, the slots of permuted
 * recursive multiplying with k = 2), a reduction (float sum: two reads, one write per
 * element), pack (4 KiB blocks at an 8 KiB stride). Bandwidth counts the bytes read and
 * written; each kernel's is also given as a fraction of the copy's. Best of 20 runs.
 *
 *   bench_device_kernels [--json FILE] [--check]
 * --check: exit 1 when a kernel is under 80% of the copy (the target of docs/gpu.md).
 * Label gpu: exit 77 (skipped) without a CUDA device.
 */
#include "gpu_common.h"
#include "index_maps.h"
#include "tuna_device.h"

#include <string.h>

#define BYTES (64u << 20)
#define RUNS 20

typedef int (*kernel_fn)(void *arg);
typedef struct {
    void *a, *b;
    int *src;
} bufs;

static int run_copy(void *arg)
{
    bufs *x = arg;
    return (int)cudaMemcpyAsync(x->b, x->a, BYTES, cudaMemcpyDeviceToDevice, 0);
}
static int run_permute(void *arg)
{
    bufs *x = arg;
    return tuna_dev_permute_blocks(x->b, x->a, BYTES / 64, 64, x->src, NULL);
}
static int run_reduce(void *arg)
{
    bufs *x = arg;
    return tuna_dev_reduce(x->b, x->a, BYTES / sizeof(float), TUNA_DEV_FLOAT, TUNA_DEV_SUM, NULL);
}
static int run_pack(void *arg)
{
    bufs *x = arg;
    return tuna_dev_pack(x->b, x->a, BYTES / 2 / 4096, 4096, 8192, NULL);
}

/* Best time of RUNS runs, seconds. */
static double best(kernel_fn f, bufs *x)
{
    cudaEvent_t t0, t1;
    GPU_CHECK(cudaEventCreate(&t0));
    GPU_CHECK(cudaEventCreate(&t1));
    GPU_CHECK(f(x)); /* warm-up */
    double b = 1e30;
    for (int i = 0; i < RUNS; i++) {
        GPU_CHECK(cudaEventRecord(t0, 0));
        GPU_CHECK(f(x));
        GPU_CHECK(cudaEventRecord(t1, 0));
        GPU_CHECK(cudaEventSynchronize(t1));
        float ms = 0;
        GPU_CHECK(cudaEventElapsedTime(&ms, t0, t1));
        if (ms / 1e3 < b)
            b = ms / 1e3;
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return b;
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    int check = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (!strcmp(argv[i], "--check"))
            check = 1;
    }
    gpu_require_device("device_kernels_bandwidth");
    struct cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, 0));
    bufs x;
    GPU_CHECK(cudaMalloc(&x.a, BYTES));
    GPU_CHECK(cudaMalloc(&x.b, BYTES));
    GPU_CHECK(cudaMemset(x.a, 1, BYTES));
    GPU_CHECK(cudaMemset(x.b, 0, BYTES));
    int poff[65], src[64];
    tuna_map_permuted_offsets(2, 6, 64, 1, 0, poff);
    for (int r = 0; r < 64; r++)
        src[r] = tuna_map_permuted_slot(2, 6, 1, 0, poff, r);
    GPU_CHECK(cudaMalloc((void **)&x.src, sizeof src));
    GPU_CHECK(cudaMemcpy(x.src, src, sizeof src, cudaMemcpyHostToDevice));

    /* bytes read + written by each */
    const struct {
        const char *name;
        kernel_fn f;
        double moved;
    } k[] = {{"copy (cudaMemcpy D2D)", run_copy, 2.0 * BYTES},
             {"permute", run_permute, 2.0 * BYTES},
             {"reduce (float sum)", run_reduce, 3.0 * BYTES},
             {"pack", run_pack, 2.0 * (BYTES / 2)}};
    const int nk = (int)(sizeof k / sizeof *k);
    double gbs[4];
    int below = 0;
    printf("%s: 64 MiB, best of %d\n", prop.name, RUNS);
    for (int i = 0; i < nk; i++) {
        gbs[i] = k[i].moved / best(k[i].f, &x) / 1e9;
        const double frac = gbs[i] / gbs[0];
        if (i > 0 && frac < 0.8)
            below++;
        printf("  %-24s %8.1f GB/s  %5.1f%% of the copy\n", k[i].name, gbs[i], 100 * frac);
    }
    if (json) {
        FILE *f = fopen(json, "w");
        if (f) {
            fprintf(f, "{\"device\": \"%s\", \"bytes\": %u, \"runs\": %d", prop.name, BYTES, RUNS);
            for (int i = 0; i < nk; i++)
                fprintf(f, ", \"%s\": %.3f", i == 0 ? "copy_gbs" : i == 1 ? "permute_gbs"
                                                   : i == 2 ? "reduce_gbs" : "pack_gbs", gbs[i]);
            fprintf(f, "}\n");
            fclose(f);
        }
    }
    cudaFree(x.a);
    cudaFree(x.b);
    cudaFree(x.src);
    return check && below ? 1 : 0;
}
