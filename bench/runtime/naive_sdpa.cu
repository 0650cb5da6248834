//===- naive_sdpa.cu - Naive kernels for checking the runtime on a GPU ----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Attention with one thread per query row and an online softmax, taking the
// parameter list that make_naive_library.py writes into the manifest (ABI
// tiled-attn-v2: base pointers, strides as i64, S_q and S_k as i32, the
// scale, a TMA descriptor of k by value). Slow and simple: it checks that
// the runtime's packing, contexts and launches are right on a real driver,
// independently of the compiler. sdpa_null does nothing, for timing the
// launch path.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
#include <cuda_fp16.h>

template <bool Causal>
__device__ void attend(const __half *q, const __half *k, const __half *v,
                       __half *o, long long qs0, long long qs1, long long qs2,
                       long long ks0, long long ks1, long long ks2,
                       long long vs0, long long vs1, long long vs2,
                       long long os0, long long os1, long long os2, int sq,
                       int sk, float scale) {
  constexpr int D = 64;
  int i = blockIdx.x * 64 + threadIdx.x;
  if (threadIdx.x >= 64 || i >= sq)
    return;
  long long b = blockIdx.z, h = blockIdx.y;
  const __half *qi = q + b * qs0 + h * qs1 + i * qs2;
  float qv[D], acc[D];
  for (int d = 0; d < D; ++d) {
    qv[d] = __half2float(qi[d]);
    acc[d] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  int keys = Causal ? min(i + 1, sk) : sk;
  for (int j = 0; j < keys; ++j) {
    const __half *kj = k + b * ks0 + h * ks1 + j * ks2;
    const __half *vj = v + b * vs0 + h * vs1 + j * vs2;
    float s = 0.f;
    for (int d = 0; d < D; ++d)
      s += qv[d] * __half2float(kj[d]);
    s *= scale;
    float mn = fmaxf(m, s), c = __expf(m - mn), p = __expf(s - mn);
    l = l * c + p;
    for (int d = 0; d < D; ++d)
      acc[d] = acc[d] * c + p * __half2float(vj[d]);
    m = mn;
  }
  __half *oi = o + b * os0 + h * os1 + i * os2;
  for (int d = 0; d < D; ++d)
    oi[d] = __float2half(acc[d] / l);
}

#define PARAMS                                                                 \
  const __half *q, const __half *k, const __half *v, __half *o, long long qs0, \
      long long qs1, long long qs2, long long ks0, long long ks1,              \
      long long ks2, long long vs0, long long vs1, long long vs2,              \
      long long os0, long long os1, long long os2, int sq, int sk,             \
      float scale, const __grid_constant__ CUtensorMap kmap
#define ARGS                                                                   \
  q, k, v, o, qs0, qs1, qs2, ks0, ks1, ks2, vs0, vs1, vs2, os0, os1, os2, sq,  \
      sk, scale

extern "C" __global__ void sdpa_fwd_none(PARAMS) { attend<false>(ARGS); }
extern "C" __global__ void sdpa_fwd_causal(PARAMS) { attend<true>(ARGS); }
extern "C" __global__ void sdpa_null(PARAMS) {}
