//===- ModuleCache.h - Loaded modules per context ---------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Each kernel's module is loaded once per CUDA context, on the first launch
// in that context, and unloaded when the library closes. Lookups are the
// launch path's, so they take no lock: each kernel has a few slots that
// are filled in order, under a mutex, and published with a release store
// of their context; a reader scans them with acquire loads. A kernel used
// in more contexts than it has slots spills into a map under a
// shared_mutex.
//
// A context is known by its handle: a context destroyed while the library
// is open, and another created at the same address, would find the first
// one's function. (PyTorch keeps its primary contexts for the life of the
// process.)
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_MODULECACHE_H
#define TILED_ATTN_LIB_RUNTIME_MODULECACHE_H

#include "Driver.h"
#include "Manifest.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

namespace tiled_attn::runtime {

class ModuleCache {
public:
  /// Slots per kernel before the spill map.
  static constexpr int kSlots = 4;

  explicit ModuleCache(size_t kernelCount)
      : kernels_(new KernelSlots[kernelCount]), kernelCount_(kernelCount) {}

  /// Kernel `kernel`'s function in `context`, or null when not loaded yet.
  /// Takes no lock unless the kernel spilled.
  CUfunction find(CUcontext context, int32_t kernel) const {
    const KernelSlots &k = kernels_[kernel];
    for (const Slot &slot : k.slots) {
      CUcontext owner = slot.context.load(std::memory_order_acquire);
      if (owner == context)
        return slot.function;
      if (!owner)
        return nullptr;
    }
    return findSpilled(context, kernel);
  }

  /// The function of `entry` (kernel number `kernel`) in `context`, which
  /// is current; loads its module (for a device of capability `cc`) on the
  /// first call per context.
  Status get(const Driver &driver, CUcontext context, const KernelEntry &entry,
             int32_t kernel, int ccMajor, int ccMinor, CUfunction &function) {
    function = find(context, kernel);
    if (__builtin_expect(function != nullptr, 1))
      return Status();
    return load(driver, context, entry, kernel, ccMajor, ccMinor, function);
  }

  /// Unloads every module, each in its context; ignores errors (of contexts
  /// already destroyed).
  void unloadAll(const Driver &driver);

private:
  struct Slot {
    std::atomic<CUcontext> context{nullptr};
    CUfunction function = nullptr;
    CUmodule module = nullptr;
  };
  struct KernelSlots {
    Slot slots[kSlots];
  };
  struct Loaded {
    CUfunction function;
    CUmodule module;
  };

  CUfunction findSpilled(CUcontext context, int32_t kernel) const;
  Status load(const Driver &driver, CUcontext context, const KernelEntry &entry,
              int32_t kernel, int ccMajor, int ccMinor, CUfunction &function);

  std::unique_ptr<KernelSlots[]> kernels_;
  size_t kernelCount_;
  /// Serializes loads (and so the writers of slots and spills).
  std::mutex loadMutex_;
  mutable std::shared_mutex spillMutex_;
  std::map<std::pair<CUcontext, int32_t>, Loaded> spilled_;
};

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_MODULECACHE_H
