//===- FakeCudaDriver.cpp - The fake driver's entry points ----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Each entry point under the name cuda.h's #defines give it (cuCtxPushCurrent
// defines cuCtxPushCurrent_v2, cuMemAlloc cuMemAlloc_v2, ...), so that both
// the runtime's dlsym and a program compiled against cuda.h find it.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaState.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace fakecuda::detail;

namespace {

/// The sizes of `symbol`'s parameters as the image's ".entry" declares them;
/// false when the image has no such entry.
bool parseEntry(const std::string &image, const std::string &symbol,
                std::vector<unsigned> &sizes) {
  size_t at = image.find(".entry " + symbol + "(");
  if (at == std::string::npos)
    return false;
  size_t end = image.find(')', at);
  std::string params = image.substr(at, end - at);
  size_t pos = 0;
  while ((pos = params.find(".param", pos)) != std::string::npos) {
    size_t lineEnd = params.find_first_of(",\n", pos);
    std::string line = params.substr(pos, lineEnd - pos);
    pos = lineEnd == std::string::npos ? params.size() : lineEnd;
    size_t bracket = line.find('[');
    if (bracket != std::string::npos)
      sizes.push_back(std::strtoul(line.c_str() + bracket + 1, nullptr, 10));
    else if (line.find("64 ") != std::string::npos)
      sizes.push_back(8);
    else
      sizes.push_back(4);
  }
  return true;
}

const std::map<CUresult, std::pair<const char *, const char *>> kErrors = {
    {CUDA_SUCCESS, {"CUDA_SUCCESS", "no error"}},
    {CUDA_ERROR_INVALID_VALUE,
     {"CUDA_ERROR_INVALID_VALUE", "invalid argument"}},
    {CUDA_ERROR_OUT_OF_MEMORY, {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}},
    {CUDA_ERROR_NOT_INITIALIZED,
     {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"}},
    {CUDA_ERROR_NO_DEVICE,
     {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"}},
    {CUDA_ERROR_INVALID_DEVICE,
     {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"}},
    {CUDA_ERROR_INVALID_CONTEXT,
     {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"}},
    {CUDA_ERROR_INVALID_PTX,
     {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"}},
    {CUDA_ERROR_NOT_FOUND, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
    {CUDA_ERROR_INVALID_HANDLE,
     {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"}},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
     {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
      "too many resources requested for launch"}},
};

Context *asContext(CUcontext context) {
  return reinterpret_cast<Context *>(context);
}

} // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int flags) {
  FAKE_ENTRY("cuInit");
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().initCalls;
  state().initialized = true;
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **text) {
  auto it = kErrors.find(error);
  if (it == kErrors.end())
    return CUDA_ERROR_INVALID_VALUE;
  *text = it->second.first;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
  auto it = kErrors.find(error);
  if (it == kErrors.end())
    return CUDA_ERROR_INVALID_VALUE;
  *text = it->second.second;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  FAKE_ENTRY("cuDeviceGetCount");
  FAKE_NEEDS_INIT();
  std::lock_guard<std::mutex> lock(state().mutex);
  *count = static_cast<int>(state().devices.size());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  FAKE_ENTRY("cuDeviceGet");
  FAKE_NEEDS_INIT();
  std::lock_guard<std::mutex> lock(state().mutex);
  if (ordinal < 0 || ordinal >= static_cast<int>(state().devices.size()))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice device) {
  std::snprintf(name, length, "Fake CUDA device %d", device);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                      CUdevice device) {
  FAKE_ENTRY("cuDeviceGetAttribute");
  FAKE_NEEDS_INIT();
  std::lock_guard<std::mutex> lock(state().mutex);
  if (device < 0 || device >= static_cast<int>(state().devices.size()))
    return CUDA_ERROR_INVALID_DEVICE;
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = state().devices[device].first;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = state().devices[device].second;
  else if (attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    *value = state().smCount;
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  FAKE_ENTRY("cuDevicePrimaryCtxRetain");
  FAKE_NEEDS_INIT();
  *context = fakecuda::primaryContext(device);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *context) {
  FAKE_ENTRY("cuCtxGetCurrent");
  FAKE_NEEDS_INIT();
  *context = fakecuda::current();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
  FAKE_ENTRY("cuCtxSetCurrent");
  fakecuda::setCurrent(context);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) {
  FAKE_ENTRY("cuCtxGetDevice");
  CUcontext context = fakecuda::current();
  if (!context || asContext(context)->destroyed)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = asContext(context)->device;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) {
  FAKE_ENTRY("cuCtxPushCurrent");
  if (!context || asContext(context)->destroyed)
    return CUDA_ERROR_INVALID_CONTEXT;
  contextStack.push_back(context);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *context) {
  FAKE_ENTRY("cuCtxPopCurrent");
  if (contextStack.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (context)
    *context = contextStack.back();
  contextStack.pop_back();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned int numOptions,
                                    CUjit_option *options, void **values) {
  FAKE_ENTRY("cuModuleLoadDataEx");
  CUcontext context = fakecuda::current();
  if (!context)
    return CUDA_ERROR_INVALID_CONTEXT;
  std::string text(static_cast<const char *>(image));
  if (text.find("FAKE_JIT_ERROR") != std::string::npos) {
    char *log = nullptr;
    size_t size = 0;
    for (unsigned i = 0; i < numOptions; ++i) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        log = static_cast<char *>(values[i]);
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        size = reinterpret_cast<size_t>(values[i]);
    }
    if (log && size)
      std::snprintf(log, size, "ptxas fatal   : fake JIT error in line 1\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  auto *loaded = new Module{text, context};
  *module = reinterpret_cast<CUmodule>(loaded);
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().moduleLoads;
  ++state().loadsPerContext[context];
  state().lastImage = text;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  FAKE_ENTRY("cuModuleUnload");
  delete reinterpret_cast<Module *>(module);
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().moduleUnloads;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module,
                                     const char *name) {
  FAKE_ENTRY("cuModuleGetFunction");
  auto *loaded = reinterpret_cast<Module *>(module);
  auto *fn = new Function{name, {}};
  if (!parseEntry(loaded->image, name, fn->paramSizes)) {
    delete fn;
    return CUDA_ERROR_NOT_FOUND;
  }
  *function = reinterpret_cast<CUfunction>(fn);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function,
                                    CUfunction_attribute attribute, int value) {
  FAKE_ENTRY("cuFuncSetAttribute");
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().funcSetAttributeCalls;
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    state().maxDynamicShared = value;
  return CUDA_SUCCESS;
}

namespace {
/// Counts (and, recording, keeps) a launch of either entry point.
CUresult recordLaunch(CUfunction f, const unsigned (&dims)[6],
                      unsigned sharedBytes, CUstream stream, void **params,
                      bool programmatic) {
  if (!fakecuda::current())
    return CUDA_ERROR_INVALID_CONTEXT;
  auto *fn = reinterpret_cast<Function *>(f);
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.launches;
  if (!s.recording)
    return CUDA_SUCCESS;
  s.previousLaunch = std::move(s.lastLaunch);
  fakecuda::Launch &launch = s.lastLaunch;
  launch = fakecuda::Launch();
  launch.symbol = fn->symbol;
  launch.context = fakecuda::current();
  launch.programmatic = programmatic;
  for (int i = 0; i < 3; ++i) {
    launch.grid[i] = dims[i];
    launch.block[i] = dims[3 + i];
  }
  launch.sharedBytes = sharedBytes;
  launch.stream = stream;
  for (size_t i = 0; i < fn->paramSizes.size(); ++i) {
    auto *bytes = static_cast<const unsigned char *>(params[i]);
    launch.params.emplace_back(bytes, bytes + fn->paramSizes[i]);
    launch.paramAddresses.push_back(params[i]);
  }
  return CUDA_SUCCESS;
}
} // namespace

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridX,
                                unsigned int gridY, unsigned int gridZ,
                                unsigned int blockX, unsigned int blockY,
                                unsigned int blockZ, unsigned int sharedBytes,
                                CUstream stream, void **params, void **extra) {
  FAKE_ENTRY("cuLaunchKernel");
  return recordLaunch(f, {gridX, gridY, gridZ, blockX, blockY, blockZ},
                      sharedBytes, stream, params, /*programmatic=*/false);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                  void **params, void **extra) {
  FAKE_ENTRY("cuLaunchKernelEx");
  if (!config || (config->numAttrs && !config->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  bool programmatic = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute &a = config->attrs[i];
    if (a.id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      return CUDA_ERROR_NOT_SUPPORTED; // (the fake knows no other)
    programmatic = a.value.programmaticStreamSerializationAllowed != 0;
  }
  return recordLaunch(f,
                      {config->gridDimX, config->gridDimY, config->gridDimZ,
                       config->blockDimX, config->blockDimY, config->blockDimZ},
                      config->sharedMemBytes, config->hStream, params,
                      programmatic);
}

CUresult CUDAAPI cuTensorMapEncodeTiled(
    CUtensorMap *tensorMap, CUtensorMapDataType dataType, cuuint32_t rank,
    void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  FAKE_ENTRY("cuTensorMapEncodeTiled");
  // As the real driver (seen on an H100 with CUDA 13): it needs a context.
  if (!fakecuda::current())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (reinterpret_cast<uintptr_t>(tensorMap) % 64 || rank < 1 || rank > 5)
    return CUDA_ERROR_INVALID_VALUE;
  fakecuda::TensorMapCall call;
  call.context = fakecuda::current();
  call.dataType = dataType;
  call.rank = rank;
  call.globalAddress = globalAddress;
  call.tensorMap = tensorMap;
  for (unsigned i = 0; i < rank; ++i) {
    call.globalDim[i] = globalDim[i];
    call.boxDim[i] = boxDim[i];
    call.elementStrides[i] = elementStrides[i];
    if (i + 1 < rank)
      call.globalStrides[i] = globalStrides[i];
  }
  call.interleave = interleave;
  call.swizzle = swizzle;
  call.l2Promotion = l2Promotion;
  call.oobFill = oobFill;
  // A recognizable descriptor: the address, then the dims.
  std::memset(tensorMap, 0, sizeof(CUtensorMap));
  tensorMap->opaque[0] = reinterpret_cast<uintptr_t>(globalAddress);
  for (unsigned i = 0; i < rank; ++i)
    tensorMap->opaque[1 + i] = globalDim[i];
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().tensorMapCalls;
  state().lastTensorMap = call;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  FAKE_ENTRY("cuMemAlloc");
  // 256-byte aligned, as the driver's allocations are.
  void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
  std::free(reinterpret_cast<void *>(pointer));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr to, const void *from, size_t bytes) {
  FAKE_ENTRY("cuMemcpyHtoD");
  std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void *to, CUdeviceptr from, size_t bytes) {
  FAKE_ENTRY("cuMemcpyDtoH");
  std::memcpy(to, reinterpret_cast<const void *>(from), bytes);
  return CUDA_SUCCESS;
}

} // extern "C"
