// The eager causal mask's broadcast add (scores + mask, fp16, the mask one [N, N] matrix for all
// heads) with the structure of PyTorch's non-contiguous elementwise path (written for this check,
// not PyTorch's code): TensorIterator sends an operand of stride 0 to the legacy loop of 128
// threads x 4 values, each value's offsets from a divider per dimension and its operands read and
// written through untyped byte pointers (aten/src/ATen/native/cuda/CUDALoops.cuh,
// gpu_kernel_impl_nocast). For comparison, the order of the contiguous path's policies: every
// value's operands loaded first, then the values stored. order.py prints each kernel's global loads
// and stores in program order: in the legacy loop every value's loads follow the store of the value
// before (one value per thread in flight, four round trips per thread).
#include <cuda_fp16.h>

struct Divider {  // n / d as (mulhi(n, m) + n) >> s: a fast division by a launch constant
  unsigned d, m, s;
  __device__ unsigned div(unsigned n) const { return (__umulhi(n, m) + n) >> s; }
};

struct Offsets {  // byte offsets of (out, a, b) for a linear index over two coalesced dimensions
  Divider size[2];
  unsigned stride[2][3];
  __device__ void get(unsigned i, unsigned (&o)[3]) const {
    o[0] = o[1] = o[2] = 0;
#pragma unroll
    for (int dim = 0; dim < 2; ++dim) {
      const unsigned q = size[dim].div(i), r = i - q * size[dim].d;
      i = q;
#pragma unroll
      for (int t = 0; t < 3; ++t) o[t] += r * stride[dim][t];
    }
  }
};

__global__ void broadcast_add_legacy(int n, Offsets calc, char* out, char* a, char* b) {
  int i = 512 * blockIdx.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (i < n) {
      unsigned o[3];
      calc.get(i, o);
      const float x = __half2float(*reinterpret_cast<const __half*>(a + o[1]));
      const float y = __half2float(*reinterpret_cast<const __half*>(b + o[2]));
      *reinterpret_cast<__half*>(out + o[0]) = __float2half(x + y);
      i += 128;
    }
  }
}

__global__ void broadcast_add_unrolled(int n, Offsets calc, char* out, char* a, char* b) {
  const int base = 512 * blockIdx.x + threadIdx.x;
  float x[4], y[4];
  unsigned o[4][3];
#pragma unroll
  for (int k = 0; k < 4; ++k) {  // every value's operands first, as the contiguous path's policies do
    const int i = base + 128 * k;
    if (i < n) {
      calc.get(i, o[k]);
      x[k] = __half2float(*reinterpret_cast<const __half*>(a + o[k][1]));
      y[k] = __half2float(*reinterpret_cast<const __half*>(b + o[k][2]));
    }
  }
#pragma unroll
  for (int k = 0; k < 4; ++k)
    if (base + 128 * k < n) *reinterpret_cast<__half*>(out + o[k][0]) = __float2half(x[k] + y[k]);
}
