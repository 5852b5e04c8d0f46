// FIXED: a box filter over a halo of RADIUS elements on each side. The host allocates
// n + 2 * RADIUS inputs and launches with in + RADIUS, so in[-RADIUS] … in[n - 1 + RADIUS] are
// all inside the allocation: check passes that pointer with --arg 'in:f32[LEN]+RADIUS=…'.
// Thread mapping: grid-stride; element i averages in[i - RADIUS .. i + RADIUS].
// Shared memory: none.
// Launch: any grid; out has n elements.
#define RADIUS 3

__global__ void box_filter(const float *in, float *out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float sum = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            sum += in[i + k];
        }
        out[i] = sum / (2 * RADIUS + 1);
    }
}
