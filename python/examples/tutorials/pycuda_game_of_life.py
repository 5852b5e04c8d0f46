"""The Game of Life with PyCUDA: one generation per launch into a second board, then the boards
are swapped by copying the new one over the old with slices.

Expect: correct
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.gpuarray as gpuarray
from racetrack.pycuda.compiler import SourceModule

ker = SourceModule("""
#define _X  ( threadIdx.x + blockIdx.x * blockDim.x )
#define _Y  ( threadIdx.y + blockIdx.y * blockDim.y )
#define _WIDTH  ( blockDim.x * gridDim.x )
#define _HEIGHT ( blockDim.y * gridDim.y  )
#define _XM(x)  ( (x + _WIDTH) % _WIDTH )
#define _YM(y)  ( (y + _HEIGHT) % _HEIGHT )
#define _INDEX(x,y)  ( _XM(x)  + _YM(y) * _WIDTH )

__device__ int nbrs(int x, int y, int * in)
{
     return ( in[ _INDEX(x -1, y+1) ] + in[ _INDEX(x-1, y) ] + in[ _INDEX(x-1, y-1) ] \\
                   + in[ _INDEX(x, y+1)] + in[_INDEX(x, y - 1)] \\
                   + in[ _INDEX(x+1, y+1) ] + in[ _INDEX(x+1, y) ] + in[ _INDEX(x+1, y-1) ] );
}

__global__ void conway_ker(int * lattice_out, int * lattice  )
{
   int x = _X, y = _Y;
   int n = nbrs(x, y, lattice);
   if ( lattice[_INDEX(x,y)] == 1)
       lattice_out[_INDEX(x,y)] = (n == 2 || n == 3) ? 1 : 0;
   else
       lattice_out[_INDEX(x,y)] = (n == 3) ? 1 : 0;
}
""")
conway_ker = ker.get_function("conway_ker")


def life_numpy(board):
    alive = sum(np.roll(np.roll(board, dy, 0), dx, 1)
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy)
    return ((alive == 3) | ((board == 1) & (alive == 2))).astype(np.int32)


N = 32
lattice = np.int32(np.random.default_rng(17).choice([1, 0], N * N, p=[0.25, 0.75]).reshape(N, N))
lattice_gpu = gpuarray.to_gpu(lattice)
newLattice_gpu = gpuarray.empty_like(lattice_gpu)

expected = lattice
for generation in range(4):
    conway_ker(newLattice_gpu, lattice_gpu, grid=(N // 32, N // 32, 1), block=(32, 32, 1))
    lattice_gpu[:] = newLattice_gpu[:]
    expected = life_numpy(expected)

print("alive:", lattice_gpu.get().sum())
assert np.array_equal(lattice_gpu.get(), expected)
