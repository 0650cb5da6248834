//===- FakeCuda.h - A fake CUDA driver for the runtime's tests --*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// libfakecuda.so implements the driver entry points the runtime (and the
// C++ example) call, on the host, and records what they were asked: module
// loads per context, the last launch with a copy of each parameter's bytes,
// the arguments of cuTensorMapEncodeTiled. A test opens it through
// $TILED_ATTN_LIBCUDA, or as libcuda.so.1 through LD_LIBRARY_PATH, and
// controls it with the functions below.
//
// Like the real driver, a launch knows the sizes of its parameters from the
// module: the fake reads them from the image, which is PTX-like text:
//
//   .entry sdpa_fwd(
//     .param .u64 p0,            8 bytes (.u64 .s64 .b64 .f64)
//     .param .u32 p1,            4 bytes (.u32 .s32 .b32 .f32)
//     .param .align 64 .b8 p2[128]   128 bytes
//   )
//
// An image holding FAKE_JIT_ERROR fails to load with CUDA_ERROR_INVALID_PTX
// and a JIT log.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TEST_RUNTIME_FAKECUDA_H
#define TILED_ATTN_TEST_RUNTIME_FAKECUDA_H

#include <cuda.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fakecuda {

struct Launch {
  std::string symbol;
  CUcontext context = nullptr;
  unsigned grid[3] = {}, block[3] = {};
  unsigned sharedBytes = 0;
  CUstream stream = nullptr;
  /// Each parameter's bytes, as many as the module declares.
  std::vector<std::vector<unsigned char>> params;
  /// The addresses cuLaunchKernel was given.
  std::vector<const void *> paramAddresses;
  /// Launched by cuLaunchKernelEx as the dependent of the grid before it
  /// (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION).
  bool programmatic = false;
};

struct TensorMapCall {
  /// The context current during the call.
  CUcontext context = nullptr;
  CUtensorMapDataType dataType{};
  unsigned rank = 0;
  const void *globalAddress = nullptr;
  const void *tensorMap = nullptr;
  uint64_t globalDim[5] = {}, globalStrides[4] = {};
  unsigned boxDim[5] = {}, elementStrides[5] = {};
  CUtensorMapInterleave interleave{};
  CUtensorMapSwizzle swizzle{};
  CUtensorMapL2promotion l2Promotion{};
  CUtensorMapFloatOOBfill oobFill{};
};

/// Sets the devices' compute capabilities; before the first cuInit only.
void setDevices(const std::vector<std::pair<int, int>> &capabilities);
/// Clears the counters, the records and the injected errors.
void reset();
/// Makes every later call of `call` (e.g. "cuModuleLoadDataEx") return
/// `result`; CUDA_SUCCESS clears it.
void fail(const std::string &call, CUresult result);
/// Whether launches record their parameters (a copy per launch).
void setRecording(bool on);

/// A new context on `device`, not current anywhere.
CUcontext createContext(int device);
/// Destroys it: pushing it fails with CUDA_ERROR_INVALID_CONTEXT.
void destroyContext(CUcontext context);
/// Replaces the top of the calling thread's context stack (cuCtxSetCurrent).
void setCurrent(CUcontext context);
CUcontext current();
/// The primary context of `device` (created on first need).
CUcontext primaryContext(int device);

int initCalls();
int moduleLoads();
/// The image of the last module loaded.
std::string lastModuleImage();
int moduleLoads(CUcontext context);
int moduleUnloads();
int launches();
/// The last value cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) was
/// given, and how often it was called.
int maxDynamicShared();
int funcSetAttributeCalls();
Launch lastLaunch();
/// The launch before the last (a split-KV call's split kernel).
Launch previousLaunch();
/// The SM count every device reports (132 after reset()).
void setSmCount(int count);
int tensorMapCalls();
TensorMapCall lastTensorMap();

} // namespace fakecuda

/// The last launch's grid, and the bytes of its parameter `index` copied to
/// `out` if they fit `capacity`: their size, or -1 past the last parameter.
/// For callers without C++ (the Python tests, through ctypes).
extern "C" {
void fakecuda_last_launch_grid(unsigned grid[3]);
int fakecuda_last_launch_param(int index, void *out, int capacity);
}

#endif // TILED_ATTN_TEST_RUNTIME_FAKECUDA_H
