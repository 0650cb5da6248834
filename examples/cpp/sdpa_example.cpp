//===- sdpa_example.cpp - Attention through the tiled-attn runtime --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Usage: sdpa_example <kernel-dir> [device]
//
// Runs fp16 attention on a small awkward problem (B=2, H=3, S_q=77,
// S_k=131, D=64: lengths that are no multiple of a tile), without and with
// the causal mask, through ta_sdpa, and compares each output with a float64
// reference on the host. Prints the relative L2 error of each and exits
// non-zero if one is above 1e-2, or on any error.
//
// The CUDA driver API allocates and copies the tensors; the runtime finds
// the context this program made current and launches on the default
// stream.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Runtime/TiledAttn.h"

#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr int64_t B = 2, H = 3, Sq = 77, Sk = 131, D = 64;
constexpr double kTolerance = 1e-2;

/// Exits with the driver's name for `result` unless it is CUDA_SUCCESS.
void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = result == CUDA_ERROR_STUB_LIBRARY
               ? "CUDA_ERROR_STUB_LIBRARY (this libcuda is the CUDA "
                 "toolkit's stub, not a driver)"
               : "unknown error";
  std::fflush(stdout);
  std::fprintf(stderr, "sdpa_example: %s failed: %s (%d)\n", call, name,
               static_cast<int>(result));
  std::exit(1);
}

/// Exits with ta_last_error() unless `status` is TA_OK.
void check(ta_status status, const char *call) {
  if (status == TA_OK)
    return;
  std::fflush(stdout);
  std::fprintf(stderr, "sdpa_example: %s failed (status %d): %s\n", call,
               static_cast<int>(status), ta_last_error());
  std::exit(1);
}

/// IEEE binary16 from float, rounding to nearest even.
uint16_t toHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent >= 31)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (exponent <= 0) {
    if (exponent < -10)
      return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; // May carry into the exponent, which is right.
  return static_cast<uint16_t>(sign | half);
}

double fromHalf(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(mantissa + 1024, exponent - 25);
  return (h & 0x8000) ? -value : value;
}

/// softmax(scale * Q K^T + mask) V in float64, for contiguous [B,H,S,D].
std::vector<double> reference(const std::vector<uint16_t> &q,
                              const std::vector<uint16_t> &k,
                              const std::vector<uint16_t> &v, bool causal,
                              double scale) {
  std::vector<double> out(B * H * Sq * D, 0.0), scores(Sk);
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < Sq; ++i) {
      // Top-left alignment: query i sees keys j <= i.
      int64_t keys = causal ? std::min<int64_t>(i + 1, Sk) : Sk;
      double maximum = -INFINITY, total = 0.0;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0.0;
        for (int64_t d = 0; d < D; ++d)
          dot += fromHalf(q[(bh * Sq + i) * D + d]) *
                 fromHalf(k[(bh * Sk + j) * D + d]);
        scores[j] = dot * scale;
        maximum = std::max(maximum, scores[j]);
      }
      for (int64_t j = 0; j < keys; ++j)
        total += scores[j] = std::exp(scores[j] - maximum);
      for (int64_t j = 0; j < keys; ++j)
        for (int64_t d = 0; d < D; ++d)
          out[(bh * Sq + i) * D + d] +=
              scores[j] / total * fromHalf(v[(bh * Sk + j) * D + d]);
    }
  return out;
}

/// A contiguous [B, H, S, D] view at `data`.
ta_tensor view(CUdeviceptr data, int64_t s) {
  ta_tensor t;
  t.data = data;
  const int64_t sizes[4] = {B, H, s, D};
  const int64_t strides[4] = {H * s * D, s * D, D, 1};
  std::memcpy(t.sizes, sizes, sizeof(sizes));
  std::memcpy(t.strides, strides, sizeof(strides));
  return t;
}

CUdeviceptr upload(const std::vector<uint16_t> &host) {
  CUdeviceptr device;
  check(cuMemAlloc(&device, host.size() * 2), "cuMemAlloc");
  check(cuMemcpyHtoD(device, host.data(), host.size() * 2), "cuMemcpyHtoD");
  return device;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s <kernel-dir> [device]\n", argv[0]);
    return 2;
  }
  int ordinal = argc == 3 ? std::atoi(argv[2]) : 0;
  ta_library *library = nullptr;
  check(ta_library_open(argv[1], &library), "ta_library_open");
  std::printf("kernel library %s: %d kernels\n", ta_library_path(library),
              ta_library_kernel_count(library));

  check(cuInit(0), "cuInit");
  CUdevice device;
  check(cuDeviceGet(&device, ordinal), "cuDeviceGet");
  CUcontext context;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  int major = 0, minor = 0;
  check(cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute");
  check(cuDeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute");

  std::mt19937 random(2026);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> q(B * H * Sq * D), k(B * H * Sk * D), v(k.size());
  for (auto *tensor : {&q, &k, &v})
    for (uint16_t &x : *tensor)
      x = toHalf(normal(random));
  // The output starts as NaN, so that what the kernel does not write shows.
  std::vector<uint16_t> o(q.size(), 0x7e00);
  CUdeviceptr dq = upload(q), dk = upload(k), dv = upload(v), dout = upload(o);

  bool passed = true;
  for (bool causal : {false, true}) {
    ta_sdpa_args args = {};
    args.q = view(dq, Sq);
    args.k = view(dk, Sk);
    args.v = view(dv, Sk);
    args.o = view(dout, Sq);
    args.dtype = TA_DTYPE_F16;
    args.mask = causal ? TA_MASK_CAUSAL_TOP_LEFT : TA_MASK_NONE;
    args.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
    ta_launch_plan plan;
    check(ta_sdpa_plan(library, &args, major, minor, &plan), "ta_sdpa_plan");
    ta_kernel_info info;
    check(ta_library_kernel(library, plan.kernel, &info), "ta_library_kernel");
    std::printf("causal=%d: kernel %s, grid (%u, %u, %u), block %u\n",
                causal ? 1 : 0, info.name, plan.grid[0], plan.grid[1],
                plan.grid[2], plan.block[0]);
    check(ta_sdpa(library, &args, ordinal, nullptr), "ta_sdpa");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    check(cuMemcpyDtoH(o.data(), dout, o.size() * 2), "cuMemcpyDtoH");

    std::vector<double> want = reference(q, k, v, causal, args.scale);
    double error = 0.0, norm = 0.0;
    for (size_t i = 0; i < o.size(); ++i) {
      double diff = fromHalf(o[i]) - want[i];
      error += diff * diff;
      norm += want[i] * want[i];
    }
    double relative = std::sqrt(error / norm);
    bool ok = relative <= kTolerance; // False for NaN.
    std::printf("causal=%d: relative L2 error %.3e (limit %.0e): %s\n",
                causal ? 1 : 0, relative, kTolerance, ok ? "ok" : "FAILED");
    passed &= ok;
  }
  for (CUdeviceptr pointer : {dq, dk, dv, dout})
    check(cuMemFree(pointer), "cuMemFree");
  ta_library_close(library);
  return passed ? 0 : 1;
}
