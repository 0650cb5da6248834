//===- launch_overhead.cpp - Host time of ta_sdpa -------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Usage: launch_overhead <naive-library>   (make_naive_library.py)
//
// The host time per call of ta_sdpa against a bare cuLaunchKernel of the
// same (empty) kernel with the same parameters, on one stream with nothing
// else running: each the median of 7 runs of 20000 calls. Also ta_sdpa
// with no context current (the primary context pushed and popped per
// call), ta_sdpa_plan, and cuTensorMapEncodeTiled alone (the kernel takes
// one TMA descriptor, which ta_sdpa encodes on every call). Prints CSV.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Runtime/TiledAttn.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return;
  std::fprintf(stderr, "%s failed: %d\n", call, static_cast<int>(result));
  std::exit(1);
}

void check(ta_status status, const char *call) {
  if (status == TA_OK)
    return;
  std::fprintf(stderr, "%s failed: %s\n", call, ta_last_error());
  std::exit(1);
}

CUcontext primary;

/// Waits for the device, whatever context is current.
void synchronize() {
  check(cuCtxPushCurrent(primary), "cuCtxPushCurrent");
  check(cuCtxSynchronize(), "cuCtxSynchronize");
  CUcontext popped;
  check(cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
}

/// Microseconds per call of `body`: the median of 7 runs of `calls`.
template <typename Body> double perCall(int calls, Body body) {
  std::vector<double> runs;
  for (int run = 0; run < 7; ++run) {
    synchronize();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      body();
    auto stop = std::chrono::steady_clock::now();
    synchronize();
    runs.push_back(std::chrono::duration<double>(stop - start).count() / calls *
                   1e6);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <naive-library>\n", argv[0]);
    return 2;
  }
  ta_library *library;
  check(ta_library_open(argv[1], &library), "ta_library_open");
  check(cuInit(0), "cuInit");
  CUdevice device;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&primary, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(primary), "cuCtxSetCurrent");
  char name[256];
  check(cuDeviceGetName(name, sizeof(name), device), "cuDeviceGetName");
  int major, minor;
  check(cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute");
  check(cuDeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute");

  // D=128 selects the empty kernel.
  const int64_t B = 1, H = 1, S = 128, D = 128;
  ta_sdpa_args args = {};
  ta_tensor *tensors[4] = {&args.q, &args.k, &args.v, &args.o};
  for (ta_tensor *t : tensors) {
    CUdeviceptr data;
    check(cuMemAlloc(&data, B * H * S * D * 2), "cuMemAlloc");
    *t = ta_tensor{data, {B, H, S, D}, {H * S * D, S * D, D, 1}};
  }
  args.dtype = TA_DTYPE_F16;
  args.scale = 0.088f;
  check(ta_sdpa(library, &args, 0, nullptr), "ta_sdpa"); // Loads the module.
  ta_launch_plan plan;
  check(ta_sdpa_plan(library, &args, major, minor, &plan), "ta_sdpa_plan");
  ta_kernel_info info;
  check(ta_library_kernel(library, plan.kernel, &info), "ta_library_kernel");

  // The same kernel, loaded by hand, with the plan's parameters.
  std::ifstream file(std::string(argv[1]) + "/naive.sm_90.cubin",
                     std::ios::binary);
  std::stringstream image;
  image << file.rdbuf();
  CUmodule module;
  check(cuModuleLoadData(&module, image.str().data()), "cuModuleLoadData");
  CUfunction function;
  check(cuModuleGetFunction(&function, module, "sdpa_null"),
        "cuModuleGetFunction");
  void *params[TA_MAX_PARAMS];
  for (int i = 0; i < plan.num_params; ++i)
    params[i] = plan.param_data + plan.param_offsets[i];

  const int calls = 20000;
  double bare = perCall(calls, [&] {
    check(cuLaunchKernel(function, plan.grid[0], plan.grid[1], plan.grid[2],
                         plan.block[0], plan.block[1], plan.block[2],
                         plan.shared_bytes, nullptr, params, nullptr),
          "cuLaunchKernel");
  });
  double sdpa = perCall(
      calls, [&] { check(ta_sdpa(library, &args, 0, nullptr), "ta_sdpa"); });
  double planned = perCall(calls, [&] {
    check(ta_sdpa_plan(library, &args, major, minor, &plan), "ta_sdpa_plan");
  });
  alignas(64) CUtensorMap map;
  cuuint64_t dims[4] = {D, S, H, B};
  cuuint64_t strides[3] = {D * 2, S * D * 2, H * S * D * 2};
  cuuint32_t box[4] = {64, 64, 1, 1}, elementStrides[4] = {1, 1, 1, 1};
  double encode = perCall(calls, [&] {
    check(cuTensorMapEncodeTiled(
              &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
              reinterpret_cast<void *>(args.k.data), dims, strides, box,
              elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled");
  });
  check(cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
  double pushed = perCall(
      calls, [&] { check(ta_sdpa(library, &args, 0, nullptr), "ta_sdpa"); });

  std::printf("device,%s,sm_%d%d\nkernel,%s\n", name, major, minor, info.name);
  std::printf("measure,us_per_call\n");
  std::printf("cuLaunchKernel_bare,%.3f\n", bare);
  std::printf("ta_sdpa_context_current,%.3f\n", sdpa);
  std::printf("ta_sdpa_primary_pushed,%.3f\n", pushed);
  std::printf("ta_sdpa_plan_with_tma_encode,%.3f\n", planned);
  std::printf("cuTensorMapEncodeTiled_bare,%.3f\n", encode);
  std::printf("ta_sdpa_minus_bare,%.3f\n", sdpa - bare);
  ta_library_close(library);
  return 0;
}
