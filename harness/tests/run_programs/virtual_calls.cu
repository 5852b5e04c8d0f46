// FIXED: objects made on the device with new, used through virtual functions by a second kernel
// (calls through a vtable the compiler cannot resolve), then deleted by a third.
#include <cstdio>

struct Shape {
  __device__ virtual ~Shape() {}
  __device__ virtual int area() const = 0;
};

struct Square : Shape {
  int side;
  __device__ explicit Square(int s) : side(s) {}
  __device__ int area() const override { return side * side; }
};

struct Rectangle : Shape {
  int width, height;
  __device__ Rectangle(int w, int h) : width(w), height(h) {}
  __device__ int area() const override { return width * height; }
};

__global__ void make(Shape **shapes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) shapes[i] = i % 3 == 0 ? static_cast<Shape *>(new Square(i)) : new Rectangle(i, 2);
}

__global__ void measure(Shape *const *shapes, int *areas, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) areas[i] = shapes[i] ? shapes[i]->area() : -1;
}

__global__ void destroy(Shape **shapes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) delete shapes[i];
}

int main() {
  const int n = 100;
  Shape **shapes;
  int *areas, h_areas[n];
  cudaMalloc(&shapes, n * sizeof(Shape *));
  cudaMalloc(&areas, n * sizeof(int));
  make<<<2, 64>>>(shapes, n);
  measure<<<2, 64>>>(shapes, areas, n);
  destroy<<<2, 64>>>(shapes, n);
  cudaMemcpy(h_areas, areas, sizeof h_areas, cudaMemcpyDeviceToHost);
  int wrong = 0;
  long total = 0;
  for (int i = 0; i < n; i++) {
    wrong += h_areas[i] != (i % 3 == 0 ? i * i : 2 * i);
    total += h_areas[i];
  }
  printf("%d of %d areas wrong, total %ld\n", wrong, n, total);
  return wrong != 0;
}
