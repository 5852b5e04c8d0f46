// FIXED: what a program may ask of its streams and its device: flags and priorities as
// created (a priority out of the device's range is clamped to it), the stream's device, cache
// and shared-memory configuration, and a channel description. Printed the same on a GPU.
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err = (call);                                                     \
        if (err != cudaSuccess) {                                                     \
            printf("%s failed: %s\n", #call, cudaGetErrorName(err));                  \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main() {
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    printf("priorities from %d (least) to %d (greatest)\n", least, greatest);

    const int asked[] = {0, -1, greatest, greatest - 5, least + 3};
    for (int p : asked) {
        cudaStream_t s;
        CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, p));
        unsigned int flags = 99;
        int priority = 99, device = 99;
        CHECK(cudaStreamGetFlags(s, &flags));
        CHECK(cudaStreamGetPriority(s, &priority));
        CHECK(cudaStreamGetDevice(s, &device));
        printf("asked %d: flags %u, priority %d, device %d\n", p, flags, priority, device);
        CHECK(cudaStreamDestroy(s));
    }

    cudaStream_t plain, other;
    CHECK(cudaStreamCreate(&plain));
    CHECK(cudaStreamCreate(&other));
    unsigned int flags = 99;
    int priority = 99;
    CHECK(cudaStreamGetFlags(plain, &flags));
    CHECK(cudaStreamGetPriority(plain, &priority));
    printf("cudaStreamCreate: flags %u, priority %d\n", flags, priority);
    unsigned long long plain_id = 0, other_id = 0;
    CHECK(cudaStreamGetId(plain, &plain_id));
    CHECK(cudaStreamGetId(other, &other_id));
    printf("two streams, two ids: %s\n", plain_id != other_id ? "yes" : "no");

    cudaFuncCache cache;
    CHECK(cudaDeviceGetCacheConfig(&cache));
    printf("cache config %d\n", (int)cache);
    CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    CHECK(cudaDeviceGetCacheConfig(&cache));
    printf("cache config after PreferShared: %d\n", (int)cache);

    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float4>();
    printf("float4 channels: %d %d %d %d, kind %d\n", desc.x, desc.y, desc.z, desc.w, (int)desc.f);
    desc = cudaCreateChannelDesc<uchar2>();
    printf("uchar2 channels: %d %d %d %d, kind %d\n", desc.x, desc.y, desc.z, desc.w, (int)desc.f);

    CHECK(cudaStreamDestroy(plain));
    CHECK(cudaStreamDestroy(other));
    return 0;
}
