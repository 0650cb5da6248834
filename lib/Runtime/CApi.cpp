//===- CApi.cpp - The C functions of the runtime --------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The C API of TiledAttn.h over the C++ of this folder. Nothing thrown
// crosses it: each function turns a failed Status (or an exception, such as
// std::bad_alloc) into its ta_status and the thread's last error message.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cstdlib>
#include <exception>
#include <new>

using namespace tiled_attn;
using namespace tiled_attn::runtime;

namespace {

/// The message ta_last_error() returns; kept until the next failure.
thread_local std::string lastError;

ta_status record(const Status &status) {
  lastError = status.message();
  return status.code();
}

/// Runs `body` (returning a Status), catching what it throws.
template <typename Body> ta_status guarded(const char *function, Body body) {
  try {
    Status status = body();
    if (__builtin_expect(status.ok(), 1))
      return TA_OK;
    return record(status);
  } catch (const std::bad_alloc &) {
    lastError = concat(function, ": out of host memory");
  } catch (const std::exception &error) {
    lastError = concat(function, ": internal error: ", error.what());
  } catch (...) {
    lastError = concat(function, ": internal error");
  }
  return TA_ERROR_LIBRARY;
}

Status openLibrary(const char *dir, ta_library **library) {
  if (!library)
    return invalidArgument("ta_library_open: library is null");
  *library = nullptr;
  std::string root = dir ? dir : "";
  if (root.empty()) {
    const char *env = std::getenv(kKernelsEnv);
    if (!env || !*env)
      return libraryError("no kernel library given: the folder is null or "
                          "empty and $",
                          kKernelsEnv, " is not set");
    root = env;
  }
  Manifest manifest;
  TA_RETURN_IF_ERROR(readManifest(root, manifest));
  *library = new ta_library(std::move(manifest));
  return Status();
}

/// A block mask kernel's ta_kernel_info: its name, arch, launch shape, mask
/// function and that function's captured inputs; the SDPA fields empty.
Status describeBlockMask(const ta_library *library, int32_t index,
                         ta_kernel_info *info) {
  if (!library || !info)
    return invalidArgument(
        "ta_library_block_mask: ", library ? "info" : "library", " is null");
  int32_t count = static_cast<int32_t>(library->manifest.blockMasks.size());
  if (index < 0 || index >= count)
    return invalidArgument("block mask kernel index ", index,
                           " is out of range: the library holds ", count);
  const KernelEntry &k = library->manifest.blockMasks[index];
  *info = ta_kernel_info{};
  info->name = k.name.c_str();
  info->arch = k.archText.c_str();
  info->dtype = info->mask = info->schedule = info->score_function = "";
  info->threads = static_cast<int32_t>(k.block[0] * k.block[1] * k.block[2]);
  info->shared_bytes = k.sharedBytes;
  info->index_bits = k.indexBits;
  info->num_params = static_cast<int32_t>(k.params.size());
  info->mask_function = k.maskFunction.c_str();
  info->num_captures = static_cast<int32_t>(k.captureInfos.size());
  info->captures = k.captureInfos.data();
  info->variant = k.variantText.c_str();
  info->phase = "";
  return Status();
}

/// An SDPA kernel's ta_kernel_info: the library's forward kernel `index`,
/// or with `function` (the C function's name) its backward one.
Status describeKernel(const ta_library *library, int32_t index,
                      ta_kernel_info *info, const char *function = nullptr) {
  const bool backward = function != nullptr;
  if (!function)
    function = "ta_library_kernel";
  if (!library || !info)
    return invalidArgument(function, ": ", library ? "info" : "library",
                           " is null");
  const std::vector<KernelEntry> &kernels =
      backward ? library->manifest.backward : library->manifest.kernels;
  int32_t count = static_cast<int32_t>(kernels.size());
  if (index < 0 || index >= count)
    return invalidArgument(backward ? "backward kernel index " : "kernel index ",
                           index, " is out of range: the library holds ",
                           count, " kernel", count == 1 ? "" : "s");
  const KernelEntry &k = kernels[index];
  info->name = k.name.c_str();
  info->arch = k.archText.c_str();
  info->dtype = k.dtypeText.c_str();
  info->mask = k.maskText.c_str();
  info->schedule = k.schedule.c_str();
  info->head_dim = k.headDim;
  info->head_dim_v = k.headDimV;
  info->block_m = k.blockM;
  info->block_n = k.blockN;
  info->threads = static_cast<int32_t>(k.block[0] * k.block[1] * k.block[2]);
  info->shared_bytes = k.sharedBytes;
  info->index_bits = k.indexBits;
  info->align_bytes = k.alignBytes;
  info->num_params = static_cast<int32_t>(k.params.size());
  info->softcap = k.variant.softcap ? 1 : 0;
  // (A backward main kernel reads the forward's lse; it writes none.)
  info->lse = k.variant.lse && !backward ? 1 : 0;
  info->varlen = k.variant.varlen ? 1 : 0;
  info->score_function = k.scoreFunction.c_str();
  info->mask_function = k.maskFunction.c_str();
  info->num_captures = static_cast<int32_t>(k.captureInfos.size());
  info->captures = k.captureInfos.data();
  info->variant = k.variantText.c_str();
  KernelVariant features = k.variant;
  features.lse = info->lse != 0;
  info->features = kernelFeatureBits(features);
  info->page_size = k.pageSize;
  info->phase = phaseName(k.phase);
  return Status();
}

} // namespace

extern "C" {

TA_API int ta_api_version(void) { return TA_API_VERSION; }

TA_API const char *ta_last_error(void) { return lastError.c_str(); }

TA_API const char *ta_kernel_feature(int32_t index) {
  return index >= 0 && index < tiled_attn::kNumKernelFeatures
             ? tiled_attn::kKernelFeatures[index].name
             : nullptr;
}

TA_API ta_status ta_library_open(const char *dir, ta_library **library) {
  return guarded("ta_library_open", [&] { return openLibrary(dir, library); });
}

TA_API void ta_library_close(ta_library *library) {
  if (!library)
    return;
  try {
    if (const Driver *driver = library->loadedDriver.load()) {
      library->modules.unloadAll(*driver);
      library->blockMaskModules.unloadAll(*driver);
      library->splitMergeModules.unloadAll(*driver);
      library->backwardModules.unloadAll(*driver);
    }
  } catch (...) {
    // Best effort: the library is freed regardless.
  }
  delete library;
}

TA_API const char *ta_library_path(const ta_library *library) {
  return library ? library->manifest.root.c_str() : nullptr;
}

TA_API int32_t ta_library_kernel_count(const ta_library *library) {
  return library ? static_cast<int32_t>(library->manifest.kernels.size()) : 0;
}

TA_API ta_status ta_library_kernel(const ta_library *library, int32_t index,
                                   ta_kernel_info *info) {
  return guarded("ta_library_kernel",
                 [&] { return describeKernel(library, index, info); });
}

TA_API int32_t ta_library_block_mask_count(const ta_library *library) {
  return library ? static_cast<int32_t>(library->manifest.blockMasks.size())
                 : 0;
}

TA_API ta_status ta_library_block_mask(const ta_library *library, int32_t index,
                                       ta_kernel_info *info) {
  return guarded("ta_library_block_mask",
                 [&] { return describeBlockMask(library, index, info); });
}

TA_API ta_status ta_sdpa_plan(ta_library *library, const ta_sdpa_args *args,
                              int32_t cc_major, int32_t cc_minor,
                              ta_launch_plan *plan) {
  return guarded("ta_sdpa_plan", [&] {
    if (!library || !plan)
      return invalidArgument("ta_sdpa_plan: ", library ? "plan" : "library",
                             " is null");
    return planLaunch(*library, args, cc_major, cc_minor, *plan);
  });
}

TA_API ta_status ta_sdpa_workspace_size(ta_library *library,
                                        const ta_sdpa_args *args, int device,
                                        uint64_t *bytes) {
  return guarded("ta_sdpa_workspace_size", [&] {
    if (!library || !bytes)
      return invalidArgument("ta_sdpa_workspace_size: ",
                             library ? "bytes" : "library", " is null");
    return workspaceSize(*library, args, device, *bytes);
  });
}

TA_API ta_status ta_sdpa(ta_library *library, const ta_sdpa_args *args,
                         int32_t device, void *stream) {
  return guarded("ta_sdpa", [&] {
    if (__builtin_expect(!library, 0))
      return invalidArgument("ta_sdpa: library is null");
    return launch(*library, args, device, stream);
  });
}

TA_API ta_status ta_block_mask(ta_library *library,
                               const ta_block_mask_args *args, int32_t device,
                               void *stream) {
  return guarded("ta_block_mask", [&] {
    if (!library)
      return invalidArgument("ta_block_mask: library is null");
    return launchBlockMask(*library, args, device, stream);
  });
}

TA_API int32_t ta_library_backward_count(const ta_library *library) {
  return library ? static_cast<int32_t>(library->manifest.backward.size()) : 0;
}

TA_API ta_status ta_library_backward_kernel(const ta_library *library,
                                            int32_t index,
                                            ta_kernel_info *info) {
  return guarded("ta_library_backward_kernel", [&] {
    return describeKernel(library, index, info, "ta_library_backward_kernel");
  });
}

TA_API ta_status ta_sdpa_backward_workspace_size(
    ta_library *library, const ta_sdpa_backward_args *args, uint64_t *bytes) {
  return guarded("ta_sdpa_backward_workspace_size", [&] {
    if (!library || !bytes)
      return invalidArgument("ta_sdpa_backward_workspace_size: ",
                             library ? "bytes" : "library", " is null");
    return backwardWorkspaceSize(*library, args, *bytes);
  });
}

TA_API ta_status ta_sdpa_backward_plan(ta_library *library,
                                       const ta_sdpa_backward_args *args,
                                       int32_t cc_major, int32_t cc_minor,
                                       ta_launch_plan plans[3]) {
  return guarded("ta_sdpa_backward_plan", [&] {
    if (!library || !plans)
      return invalidArgument("ta_sdpa_backward_plan: ",
                             library ? "plans" : "library", " is null");
    return planBackward(*library, args, cc_major, cc_minor, plans);
  });
}

TA_API ta_status ta_sdpa_backward(ta_library *library,
                                  const ta_sdpa_backward_args *args,
                                  int32_t device, void *stream) {
  return guarded("ta_sdpa_backward", [&] {
    if (!library)
      return invalidArgument("ta_sdpa_backward: library is null");
    return launchBackward(*library, args, device, stream);
  });
}

} // extern "C"
