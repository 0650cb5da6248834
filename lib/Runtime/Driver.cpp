//===- Driver.cpp - The CUDA driver, opened at run time -------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>

using namespace tiled_attn::runtime;

namespace {

/// The environment variable naming the libcuda to open (for tests).
constexpr const char *kLibcudaEnv = "TILED_ATTN_LIBCUDA";
constexpr const char *kLibcuda = "libcuda.so.1";

/// Names of the CUresults a driver that cannot describe itself (the
/// toolkit's stub library, a driver that failed to initialize) may return.
struct KnownError {
  CUresult code;
  const char *name;
  const char *description;
};
const KnownError kKnownErrors[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED",
     "driver shutting down"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
     "the loaded libcuda is the CUDA toolkit's stub library, not a real "
     "driver; install the NVIDIA driver or put its libcuda.so.1 on the "
     "library path"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
};

/// Resolves `name` into `slot`; an error naming the symbol if absent.
template <typename Fn>
Status resolve(void *handle, const std::string &path, const char *name,
               Fn &slot, bool optional = false) {
  slot = reinterpret_cast<Fn>(dlsym(handle, name));
  if (slot || optional)
    return Status();
  return driverError("the CUDA driver ", path, " lacks ", name,
                     "; it is too old or not a CUDA driver");
}

} // namespace

Status Driver::load(const std::string &path, bool fromEnv) {
  path_ = path;
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char *why = dlerror();
    return driverError("cannot load the CUDA driver (", path,
                       fromEnv ? ", from $TILED_ATTN_LIBCUDA" : "",
                       "): ", why ? why : "dlopen failed",
                       "; tiled-attn needs an NVIDIA GPU and its driver");
  }
  DriverApi &a = api_;
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuInit", a.init));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuGetErrorName", a.getErrorName));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuGetErrorString", a.getErrorString));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuDeviceGetCount", a.deviceGetCount));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuDeviceGet", a.deviceGet));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuDeviceGetAttribute", a.deviceGetAttribute));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuDevicePrimaryCtxRetain",
                             a.devicePrimaryCtxRetain));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuCtxGetCurrent", a.ctxGetCurrent));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuCtxGetDevice", a.ctxGetDevice));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuCtxPushCurrent_v2", a.ctxPushCurrent));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuCtxPopCurrent_v2", a.ctxPopCurrent));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuModuleLoadDataEx", a.moduleLoadDataEx));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuModuleGetFunction", a.moduleGetFunction));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuModuleUnload", a.moduleUnload));
  TA_RETURN_IF_ERROR(
      resolve(handle_, path, "cuFuncSetAttribute", a.funcSetAttribute));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuLaunchKernel", a.launchKernel));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuLaunchKernelEx",
                             a.launchKernelEx, /*optional=*/true));
  TA_RETURN_IF_ERROR(resolve(handle_, path, "cuTensorMapEncodeTiled",
                             a.tensorMapEncodeTiled, /*optional=*/true));

  TA_RETURN_IF_ERROR(check(a.init(0), "cuInit(0)"));
  TA_RETURN_IF_ERROR(
      check(a.deviceGetCount(&deviceCount_), "cuDeviceGetCount"));
  slots_ = std::make_unique<DeviceSlot[]>(deviceCount_ > 0 ? deviceCount_ : 1);
  return Status();
}

Status Driver::get(const Driver *&driver) {
  // Loaded drivers by path; never freed (see the file comment).
  static std::mutex *mutex = new std::mutex;
  static auto *loaded = new std::map<std::string, Driver *>;

  const char *env = std::getenv(kLibcudaEnv);
  bool fromEnv = env && *env;
  std::string path = fromEnv ? env : kLibcuda;

  std::lock_guard<std::mutex> lock(*mutex);
  auto it = loaded->find(path);
  if (it != loaded->end()) {
    driver = it->second;
    return Status();
  }
  std::unique_ptr<Driver> fresh(new Driver);
  Status status = fresh->load(path, fromEnv);
  if (!status.ok()) {
    // The handle stays open: dlclose of a half-used driver is not safe.
    return status;
  }
  driver = (*loaded)[path] = fresh.release();
  return Status();
}

std::string Driver::errorText(CUresult result) const {
  const char *name = nullptr;
  const char *description = nullptr;
  if (api_.getErrorName && api_.getErrorName(result, &name) == CUDA_SUCCESS &&
      name) {
    if (api_.getErrorString(result, &description) != CUDA_SUCCESS)
      description = nullptr;
    return concat(name, " (", static_cast<int>(result),
                  "): ", description ? description : "");
  }
  for (const KnownError &known : kKnownErrors)
    if (known.code == result)
      return concat(known.name, " (", static_cast<int>(result),
                    "): ", known.description);
  return concat("unknown CUDA error ", static_cast<int>(result));
}

Status Driver::failure(CUresult result, const std::string &call,
                       const std::string &detail) const {
  std::string message = concat(call, " failed: ", errorText(result));
  if (result == CUDA_ERROR_STUB_LIBRARY)
    message += concat(" (", path_, ")");
  if (!detail.empty())
    message += "\n" + detail;
  return Status::error(TA_ERROR_DRIVER, std::move(message));
}

Status Driver::device(int ordinal, const DeviceSlot *&slot) const {
  if (ordinal < 0 || ordinal >= deviceCount_)
    return invalidArgument("device ", ordinal, " does not exist: the CUDA ",
                           "driver sees ", deviceCount_, " device",
                           deviceCount_ == 1 ? "" : "s");
  DeviceSlot &s = slots_[ordinal];
  slot = &s;
  if (__builtin_expect(s.ready.load(std::memory_order_acquire), 1))
    return Status();

  std::lock_guard<std::mutex> lock(mutex_);
  if (s.ready.load(std::memory_order_relaxed))
    return Status();
  CUdevice device;
  TA_RETURN_IF_ERROR(check(api_.deviceGet(&device, ordinal), "cuDeviceGet"));
  int major = 0, minor = 0;
  TA_RETURN_IF_ERROR(
      check(api_.deviceGetAttribute(
                &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)"));
  TA_RETURN_IF_ERROR(
      check(api_.deviceGetAttribute(
                &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)"));
  int sms = 0;
  TA_RETURN_IF_ERROR(
      check(api_.deviceGetAttribute(
                &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
            "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"));
  s.device = device;
  s.smCount = sms;
  s.ccMajor = major;
  s.ccMinor = minor;
  s.ready.store(true, std::memory_order_release);
  return Status();
}

Status Driver::primaryContext(const DeviceSlot &slot,
                              CUcontext &context) const {
  context = slot.primary.load(std::memory_order_acquire);
  if (__builtin_expect(context != nullptr, 1))
    return Status();

  std::lock_guard<std::mutex> lock(mutex_);
  context = slot.primary.load(std::memory_order_relaxed);
  if (context)
    return Status();
  TA_RETURN_IF_ERROR(check(api_.devicePrimaryCtxRetain(&context, slot.device),
                           "cuDevicePrimaryCtxRetain"));
  slot.primary.store(context, std::memory_order_release);
  return Status();
}

ScopedContext::~ScopedContext() {
  if (pushed_) {
    CUcontext popped;
    (void)driver_->api().ctxPopCurrent(&popped);
  }
}

Status ScopedContext::enter(const Driver &driver, const DeviceSlot &slot) {
  driver_ = &driver;
  const DriverApi &api = driver.api();
  TA_RETURN_IF_ERROR(
      driver.check(api.ctxGetCurrent(&context_), "cuCtxGetCurrent"));
  if (context_) {
    CUdevice device;
    TA_RETURN_IF_ERROR(
        driver.check(api.ctxGetDevice(&device), "cuCtxGetDevice"));
    if (device == slot.device)
      return Status();
  }
  TA_RETURN_IF_ERROR(driver.primaryContext(slot, context_));
  TA_RETURN_IF_ERROR(
      driver.check(api.ctxPushCurrent(context_), "cuCtxPushCurrent"));
  pushed_ = true;
  return Status();
}

Status ScopedContext::enterAny(const Driver &driver) {
  driver_ = &driver;
  TA_RETURN_IF_ERROR(
      driver.check(driver.api().ctxGetCurrent(&context_), "cuCtxGetCurrent"));
  if (context_)
    return Status();
  const DeviceSlot *slot = nullptr;
  TA_RETURN_IF_ERROR(driver.device(0, slot));
  return enter(driver, *slot);
}

Status ScopedContext::exit() {
  if (!pushed_)
    return Status();
  pushed_ = false;
  CUcontext popped;
  return driver_->check(driver_->api().ctxPopCurrent(&popped),
                        "cuCtxPopCurrent");
}
