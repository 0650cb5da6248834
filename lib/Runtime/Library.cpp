//===- Library.cpp - An open kernel library -------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <algorithm>
#include <set>

using namespace tiled_attn;
using namespace tiled_attn::runtime;

ta_library::ta_library(Manifest manifestIn)
    : manifest(std::move(manifestIn)), modules(manifest.kernels.size()),
      blockMaskModules(manifest.blockMasks.size()),
      splitMergeModules(manifest.splitMerges.size()),
      backwardModules(manifest.backward.size()) {
  std::set<std::pair<int32_t, int32_t>> dims;
  // The C API's view of each kernel's captured inputs, pointing into the
  // manifest's strings, which stay where they are from here on.
  auto info = [](const KernelEntry::Capture &capture) {
    return ta_capture_info{capture.name.c_str(), capture.function.c_str(),
                           capture.type, capture.rank, capture.alignBytes};
  };
  for (KernelEntry &k : manifest.kernels)
    for (const KernelEntry::Capture &capture : k.captures)
      k.captureInfos.push_back(info(capture));
  // A block mask kernel's: its function's captured inputs, not the three
  // the call adds (seq_q, seq_k, block_kinds, its last).
  for (KernelEntry &k : manifest.blockMasks)
    for (size_t c = 0; c + 3 < k.captures.size(); ++c)
      k.captureInfos.push_back(info(k.captures[c]));
  const std::vector<KernelEntry> &kernels = manifest.kernels;
  for (int32_t i = 0; i < static_cast<int32_t>(kernels.size()); ++i) {
    const KernelEntry &k = kernels[i];
    dims.insert({k.headDim, k.headDimV});
    byName.emplace(k.name, i);
    auto group = std::find_if(groups.begin(), groups.end(), [&](auto &g) {
      return g.dtype == k.dtype && g.variant.mask == k.variant.mask &&
             kernelFeatureBits(g.variant) == kernelFeatureBits(k.variant) &&
             g.headDim == k.headDim && g.headDimV == k.headDimV;
    });
    if (group == groups.end()) {
      KernelVariant variant = k.variant;
      variant.functions.clear();
      group = groups.insert(
          groups.end(),
          SelectionGroup{
              k.dtype, std::move(variant), k.headDim, k.headDimV, {}});
    }
    group->kernels.push_back(i);
  }
  headDims.assign(dims.begin(), dims.end());
  for (SelectionGroup &group : groups)
    std::stable_sort(group.kernels.begin(), group.kernels.end(),
                     [&](int32_t a, int32_t b) {
                       const KernelEntry &x = kernels[a], &y = kernels[b];
                       if (x.arch.sortKey() != y.arch.sortKey())
                         return x.arch.sortKey() > y.arch.sortKey();
                       return x.indexBits < y.indexBits;
                     });
}

Status ta_library::driver(const Driver *&out) {
  out = loadedDriver.load(std::memory_order_acquire);
  if (__builtin_expect(out != nullptr, 1))
    return Status();
  TA_RETURN_IF_ERROR(Driver::get(out));
  loadedDriver.store(out, std::memory_order_release);
  return Status();
}
