//===- Driver.h - The CUDA driver, opened at run time -----------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The runtime never links libcuda: it opens libcuda.so.1 (or the file that
// $TILED_ATTN_LIBCUDA names) with dlopen on first need and resolves each
// entry point by its exact versioned name, the name cuda.h's #defines
// select (cuCtxPushCurrent -> cuCtxPushCurrent_v2, ...). A program linked
// against the runtime thus starts on machines without a GPU and learns of
// the missing driver as a TA_ERROR_DRIVER.
//
// One Driver exists per libcuda path for the life of the process (never
// freed: nothing may call into libcuda from static destructors). It caches
// what does not change while the process runs: each device's handle and
// compute capability, and its primary context once retained.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_DRIVER_H
#define TILED_ATTN_LIB_RUNTIME_DRIVER_H

#include "Status.h"

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace tiled_attn::runtime {

/// The entry points the runtime calls. Each has the type cuda.h declares for
/// the name the runtime resolves.
struct DriverApi {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuGetErrorName) getErrorName = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuDeviceGetCount) deviceGetCount = nullptr;
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) devicePrimaryCtxRetain = nullptr;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent = nullptr;
  decltype(&::cuCtxGetDevice) ctxGetDevice = nullptr;
  decltype(&::cuCtxPushCurrent_v2) ctxPushCurrent = nullptr;
  decltype(&::cuCtxPopCurrent_v2) ctxPopCurrent = nullptr;
  decltype(&::cuModuleLoadDataEx) moduleLoadDataEx = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuLaunchKernel) launchKernel = nullptr;
  /// Null in drivers older than CUDA 11.8; needed only to launch a kernel
  /// as the dependent of the one before it (programmatic dependent launch).
  decltype(&::cuLaunchKernelEx) launchKernelEx = nullptr;
  /// Null in drivers older than CUDA 12.0; needed only by kernels that take
  /// a TMA descriptor.
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
};

/// What the runtime keeps of one device ordinal.
struct DeviceSlot {
  std::atomic<bool> ready{false};
  CUdevice device = 0;
  int ccMajor = 0;
  int ccMinor = 0;
  /// Its streaming multiprocessors (split-KV's heuristic).
  int smCount = 0;
  /// The device's primary context, retained on first need and kept.
  mutable std::atomic<CUcontext> primary{nullptr};
};

/// A loaded libcuda: its entry points, checked calls and per-device state.
class Driver {
public:
  /// The driver at $TILED_ATTN_LIBCUDA, else libcuda.so.1, loaded and
  /// initialized (cuInit(0)) on the first call for that path. A failure is
  /// not remembered: the next call tries again.
  static Status get(const Driver *&driver);

  const DriverApi &api() const { return api_; }
  /// The file name passed to dlopen.
  const std::string &path() const { return path_; }

  /// TA_OK when `result` is CUDA_SUCCESS, else a TA_ERROR_DRIVER naming
  /// `call`. Cheap on success.
  Status check(CUresult result, const char *call) const {
    if (__builtin_expect(result == CUDA_SUCCESS, 1))
      return Status();
    return failure(result, call, "");
  }

  /// The error for a failed `call`: "<call> failed: NAME (code):
  /// description", then `detail` on a line of its own if not empty.
  Status failure(CUresult result, const std::string &call,
                 const std::string &detail) const;

  /// "NAME (code): description" of a CUresult, as the driver words it.
  std::string errorText(CUresult result) const;

  /// Device `ordinal`'s handle and compute capability, queried once.
  Status device(int ordinal, const DeviceSlot *&slot) const;

  /// The primary context of `slot`'s device, retained once.
  Status primaryContext(const DeviceSlot &slot, CUcontext &context) const;

private:
  Driver() = default;
  Status load(const std::string &path, bool fromEnv);

  std::string path_;
  void *handle_ = nullptr;
  DriverApi api_;
  int deviceCount_ = 0;
  std::unique_ptr<DeviceSlot[]> slots_;
  mutable std::mutex mutex_;
};

/// Makes a context of a device current for the length of a call: the
/// calling thread's current context when it is on that device, else the
/// device's primary context, pushed on entry and popped on exit.
class ScopedContext {
public:
  ScopedContext() = default;
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  ~ScopedContext();

  /// Finds or pushes the context; `context()` is valid after success.
  Status enter(const Driver &driver, const DeviceSlot &slot);
  /// Makes sure some context is current, for driver calls that need one but
  /// no particular device (cuTensorMapEncodeTiled): the thread's current
  /// context, else device 0's primary context.
  Status enterAny(const Driver &driver);
  /// Pops what enter() pushed; reports a failed pop.
  Status exit();

  CUcontext context() const { return context_; }

private:
  const Driver *driver_ = nullptr;
  CUcontext context_ = nullptr;
  bool pushed_ = false;
};

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_DRIVER_H
