// saxpy_grid_stride (tests/corpus/saxpy_grid_stride.cu) in OpenCL C, for Oclgrind (see compare.sh).
__kernel void saxpy_grid_stride(float a, __global const float *x, __global float *y, unsigned int n)
{
    unsigned int stride = get_global_size(0);
    for (unsigned int i = get_global_id(0); i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}
