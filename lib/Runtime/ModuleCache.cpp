//===- ModuleCache.cpp - Loaded modules per context -----------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "ModuleCache.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

using namespace tiled_attn::runtime;

namespace {

/// Dynamic shared memory a kernel gets without opting in.
constexpr int kDefaultDynamicSharedLimit = 48 * 1024;
/// The size of the buffer for the JIT compiler's error log.
constexpr size_t kJitLogBytes = 16 * 1024;

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Why `image`, the bytes of a cubin or of PTX, is not one; empty when it
/// may be. A cubin is an ELF file (or a fat binary); PTX is text, which the
/// driver reads up to the first NUL byte. So a damaged or truncated file is
/// a library error naming it, not whatever the driver makes of it.
std::string imageProblem(const std::string &image, bool isCubin) {
  if (image.empty())
    return "it is empty";
  if (isCubin) {
    static const char elf[] = {'\x7f', 'E', 'L', 'F'};
    static const char fatbin[] = {'\x50', '\xed', '\x55', '\xba'};
    if (image.compare(0, 4, elf, 4) != 0 && image.compare(0, 4, fatbin, 4) != 0)
      return "it is not a cubin: it does not start with an ELF header";
    return "";
  }
  size_t nul = image.find('\0');
  if (nul != std::string::npos)
    return concat("it is not PTX text: it holds a NUL byte at offset ", nul);
  return "";
}

/// The bytes of `path`, NUL-terminated (PTX is text the driver reads up to
/// the NUL; a cubin does not mind one more byte), checked to be a cubin or
/// PTX as `isCubin` says.
Status readImage(const std::string &path, bool isCubin,
                 std::vector<char> &image) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  if (!file)
    return libraryError("cannot read kernel file ", path, ": ",
                        std::strerror(errno));
  std::string text = bytes.str();
  std::string problem = imageProblem(text, isCubin);
  if (!problem.empty())
    return libraryError("kernel file ", path, " is damaged: ", problem,
                        "; rebuild the kernel library");
  image.assign(text.begin(), text.end());
  image.push_back('\0');
  return Status();
}

/// Loads `entry`'s image for a device of capability `cc` into the current
/// context; a PTX failure carries the JIT compiler's error log.
Status loadModule(const Driver &driver, const KernelEntry &entry, int ccMajor,
                  int ccMinor, CUmodule &module) {
  bool isCubin = false;
  const std::string &path = entry.imageFor(ccMajor, ccMinor, isCubin);
  std::vector<char> image;
  TA_RETURN_IF_ERROR(readImage(path, isCubin, image));
  std::vector<char> log(kJitLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(kJitLogBytes)};
  CUresult result =
      driver.api().moduleLoadDataEx(&module, image.data(), 2, options, values);
  if (result == CUDA_SUCCESS)
    return Status();
  log.back() = '\0';
  std::string detail = log.data();
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' '))
    detail.pop_back();
  return driver.failure(result,
                        concat("cuModuleLoadDataEx(", baseName(path), ", ",
                               isCubin ? "cubin" : "ptx", ")"),
                        detail.empty() ? "" : "JIT log: " + detail);
}

/// The kernel function of `module`, allowed its dynamic shared memory.
Status getFunction(const Driver &driver, const KernelEntry &entry,
                   CUmodule module, CUfunction &function) {
  const DriverApi &api = driver.api();
  CUresult result =
      api.moduleGetFunction(&function, module, entry.symbol.c_str());
  if (result != CUDA_SUCCESS)
    return driver.failure(result,
                          concat("cuModuleGetFunction('", entry.symbol,
                                 "' in kernel ", entry.name, ")"),
                          "");
  if (entry.sharedBytes <= kDefaultDynamicSharedLimit)
    return Status();
  result = api.funcSetAttribute(function,
                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                entry.sharedBytes);
  if (result != CUDA_SUCCESS)
    return driver.failure(
        result,
        concat("cuFuncSetAttribute(kernel ", entry.name,
               ", MAX_DYNAMIC_SHARED_SIZE_BYTES=", entry.sharedBytes, ")"),
        "");
  return Status();
}

} // namespace

CUfunction ModuleCache::findSpilled(CUcontext context, int32_t kernel) const {
  std::shared_lock<std::shared_mutex> lock(spillMutex_);
  auto it = spilled_.find({context, kernel});
  return it == spilled_.end() ? nullptr : it->second.function;
}

Status ModuleCache::load(const Driver &driver, CUcontext context,
                         const KernelEntry &entry, int32_t kernel, int ccMajor,
                         int ccMinor, CUfunction &function) {
  std::lock_guard<std::mutex> lock(loadMutex_);
  function = find(context, kernel);
  if (function)
    return Status();
  CUmodule module = nullptr;
  TA_RETURN_IF_ERROR(loadModule(driver, entry, ccMajor, ccMinor, module));
  Status status = getFunction(driver, entry, module, function);
  if (!status.ok()) {
    (void)driver.api().moduleUnload(module);
    return status;
  }
  for (Slot &slot : kernels_[kernel].slots) {
    if (slot.context.load(std::memory_order_relaxed))
      continue;
    slot.function = function;
    slot.module = module;
    slot.context.store(context, std::memory_order_release);
    return Status();
  }
  std::unique_lock<std::shared_mutex> spillLock(spillMutex_);
  spilled_[{context, kernel}] = Loaded{function, module};
  return Status();
}

void ModuleCache::unloadAll(const Driver &driver) {
  std::lock_guard<std::mutex> lock(loadMutex_);
  const DriverApi &api = driver.api();
  auto unload = [&](CUcontext context, CUmodule module) {
    if (api.ctxPushCurrent(context) != CUDA_SUCCESS)
      return; // The context is gone, and its modules with it.
    (void)api.moduleUnload(module);
    CUcontext popped;
    (void)api.ctxPopCurrent(&popped);
  };
  for (size_t k = 0; k < kernelCount_; ++k)
    for (Slot &slot : kernels_[k].slots) {
      CUcontext context = slot.context.load(std::memory_order_relaxed);
      if (!context)
        break;
      unload(context, slot.module);
      slot.context.store(nullptr, std::memory_order_relaxed);
    }
  std::unique_lock<std::shared_mutex> spillLock(spillMutex_);
  for (const auto &[key, loaded] : spilled_)
    unload(key.first, loaded.module);
  spilled_.clear();
}
