// FIXED: two ways to read an input: through a texture object (which the emulator does not run,
// so `check` refuses that kernel with its line) and through a read-only plain pointer (which it
// runs). One kernel the emulator cannot run must not stop the file's others.
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: any grid covering n.

__global__ void scale_texture(float *out, cudaTextureObject_t in, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = factor * tex1Dfetch<float>(in, i);
    }
}

__global__ void scale_plain(float *out, const float *__restrict__ in, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = factor * __ldg(&in[i]);
    }
}
