// Kernels that take a struct by value, as functors and small handles do: check passes them as
// {FIELD, FIELD, …}, laid out as C lays them out, with buffers for the pointer fields.
// Launch: saxpy, any grid covering n; locked_add, one thread per block takes the lock.
struct Saxpy {
    float a;
    const float *x;
    float *y;
    int n;
};

__global__ void saxpy(Saxpy f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < f.n) {
        f.y[i] = f.a * f.x[i] + f.y[i];
    }
}

struct Lock {
    int *mutex;
};

__global__ void locked_add(Lock lock, int *total)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(lock.mutex, 0, 1) != 0) {
        }
        __threadfence();
        *total += 1;
        __threadfence();
        atomicExch(lock.mutex, 0);
    }
}
