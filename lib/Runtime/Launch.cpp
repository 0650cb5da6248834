//===- Launch.cpp - Planning and launching an attention call --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The launch path, once a kernel's module is loaded in the context:
// argument checks, the kernel's group in the selection index, the packed
// parameters in a plan on the stack, two driver calls to find the current
// context (cuCtxGetCurrent, cuCtxGetDevice), a lock-free module cache
// lookup, and cuLaunchKernel. No JSON, no strings, no heap: those are for
// the first launch in a context and for errors.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <algorithm>
#include <cstdio>

using namespace tiled_attn::runtime;

namespace {

/// The plan of an empty output: nothing to launch.
void emptyPlan(ta_launch_plan &plan) {
  plan.kernel = -1;
  for (int i = 0; i < 3; ++i)
    plan.grid[i] = plan.block[i] = 0;
  plan.shared_bytes = 0;
  plan.num_params = 0;
}

} // namespace

Status tiled_attn::runtime::launchPlan(const Driver &driver,
                                       CUfunction function,
                                       const KernelEntry &kernel,
                                       ta_launch_plan &plan, void *stream,
                                       bool asDependent) {
  void *params[TA_MAX_PARAMS];
  for (int32_t i = 0; i < plan.num_params; ++i)
    params[i] = plan.param_data + plan.param_offsets[i];
  const DriverApi &api = driver.api();
  const bool dependent =
      asDependent && kernel.waitsPriorGrids && api.launchKernelEx;
  CUresult result;
  if (dependent) {
    CUlaunchAttribute attribute = {};
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {};
    config.gridDimX = plan.grid[0];
    config.gridDimY = plan.grid[1];
    config.gridDimZ = plan.grid[2];
    config.blockDimX = plan.block[0];
    config.blockDimY = plan.block[1];
    config.blockDimZ = plan.block[2];
    config.sharedMemBytes = plan.shared_bytes;
    config.hStream = static_cast<CUstream>(stream);
    config.attrs = &attribute;
    config.numAttrs = 1;
    result = api.launchKernelEx(&config, function, params, nullptr);
  } else {
    result = api.launchKernel(function, plan.grid[0], plan.grid[1],
                              plan.grid[2], plan.block[0], plan.block[1],
                              plan.block[2], plan.shared_bytes,
                              static_cast<CUstream>(stream), params, nullptr);
  }
  if (__builtin_expect(result == CUDA_SUCCESS, 1))
    return Status();
  return driver.failure(
      result,
      concat(dependent ? "cuLaunchKernelEx(kernel " : "cuLaunchKernel(kernel ",
             kernel.name, ", grid (", plan.grid[0], ", ", plan.grid[1], ", ",
             plan.grid[2], "), block (", plan.block[0], ", ", plan.block[1],
             ", ", plan.block[2], "), shared_bytes ", plan.shared_bytes, ")"),
      "");
}

Status tiled_attn::runtime::planSplit(const ta_library &library,
                                      Problem &problem, int ccMajor,
                                      int ccMinor, int64_t smCount,
                                      SplitChoice &choice) {
  const ta_sdpa_args &args = *problem.args;
  choice = SplitChoice();
  if (args.num_splits == 1 || problem.empty || problem.asked.varlen ||
      problem.asked.sparse || problem.needed != KernelMask::None ||
      args.score_function || args.mask_function ||
      args.num_captures > (problem.asked.paged ? 1 : 0) || args.kernel ||
      library.manifest.splitMerges.empty())
    return Status();
  // A split kernel of the problem's dtype and head dims, if any (before
  // selectKernel, whose failure would build a message).
  if (std::none_of(library.groups.begin(), library.groups.end(),
                   [&](const SelectionGroup &g) {
                     return g.variant.split &&
                            g.variant.paged == problem.asked.paged &&
                            g.dtype == args.dtype &&
                            g.headDim == problem.headDim &&
                            g.headDimV == problem.headDimV;
                   }))
    return Status();
  int32_t splitIndex = -1;
  problem.asked.split = true;
  Status selected =
      selectKernel(library, problem, ccMajor, ccMinor, splitIndex);
  problem.asked.split = false;
  if (!selected.ok())
    return Status();
  const KernelEntry &kernel = library.manifest.kernels[splitIndex];
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t blockN = kernel.blockN > 0 ? kernel.blockN : 64;
  const int64_t keyBlocks = ceilDiv(problem.seqK, blockN);
  const int64_t tiles =
      ceilDiv(problem.seqQ, kernel.blockM) * problem.heads * problem.batch;
  int64_t splits = args.num_splits > 1
                       ? args.num_splits
                       : chooseNumSplits(tiles, keyBlocks, smCount);
  splits = std::min({splits, keyBlocks, kMaxGridYZ / problem.heads});
  if (splits <= 1)
    return Status();
  // The merge kernel of the output's dtype and D_v, of the highest arch
  // that runs on the device.
  const std::vector<KernelEntry> &merges = library.manifest.splitMerges;
  int32_t mergeIndex = -1;
  for (int32_t i = 0; i < static_cast<int32_t>(merges.size()); ++i) {
    const KernelEntry &m = merges[i];
    if (m.dtype == args.dtype && m.headDimV == problem.headDimV &&
        m.arch.runsOn(ccMajor, ccMinor) &&
        (mergeIndex < 0 ||
         m.arch.sortKey() > merges[mergeIndex].arch.sortKey()))
      mergeIndex = i;
  }
  if (mergeIndex < 0)
    return Status();
  if (!splitWorkspace(problem.batch, problem.heads, problem.seqQ,
                      problem.headDimV, splits, choice.workspace))
    return invalidArgument("split-KV's workspace for ", splits,
                           " chunks of q's ", problem.batch, " x ",
                           problem.heads, " x ", problem.seqQ,
                           " rows overflows a 64-bit byte count");
  choice.splitKernel = splitIndex;
  choice.mergeKernel = mergeIndex;
  choice.numSplits = splits;
  return Status();
}

namespace {

/// A split-KV call: the workspace's views, the split kernel into them, the
/// merge into o and lse; both launched on `stream` in the current context.
Status launchSplit(ta_library &library, Problem &problem,
                   const SplitChoice &split, const Driver &driver,
                   const DeviceSlot &slot, void *stream) {
  const ta_sdpa_args &args = *problem.args;
  if (args.workspace % 256) {
    char address[24];
    std::snprintf(address, sizeof(address), "%#llx",
                  static_cast<unsigned long long>(args.workspace));
    return invalidArgument("workspace must be 256-byte aligned, got ", address);
  }
  if (args.workspace_bytes < split.workspace.bytes)
    return invalidArgument(
        "workspace_bytes is ", args.workspace_bytes, ", but this call splits ",
        "its keys into ", split.numSplits, " chunks and needs ",
        split.workspace.bytes, " bytes (ta_sdpa_workspace_size)");
  const int64_t b = problem.batch, h = problem.heads * split.numSplits,
                r = problem.seqQ, dv = problem.headDimV;
  problem.numSplits = split.numSplits;
  problem.asked.split = true;
  problem.partial[0] =
      ta_tensor{args.workspace + split.workspace.partialOutputOffset,
                {b, h, r, dv},
                {h * r * dv, r * dv, dv, 1}};
  problem.partial[1] =
      ta_tensor{args.workspace + split.workspace.partialLseOffset,
                {b, h, r, 1},
                {h * r, r, 1, 1}};
  TA_RETURN_IF_ERROR(checkViewsApart(problem));
  // 32-bit kernels index the partial results too.
  problem.index32Ok &= b * h * r * dv < (int64_t(1) << 31);
  const KernelEntry &kernel = library.manifest.kernels[split.splitKernel];
  const KernelEntry &merge = library.manifest.splitMerges[split.mergeKernel];
  ScopedContext context;
  TA_RETURN_IF_ERROR(context.enter(driver, slot));
  ta_launch_plan plan;
  CUfunction function = nullptr;
  TA_RETURN_IF_ERROR(
      buildPlan(kernel, split.splitKernel, problem, &driver, plan));
  TA_RETURN_IF_ERROR(library.modules.get(driver, context.context(), kernel,
                                         split.splitKernel, slot.ccMajor,
                                         slot.ccMinor, function));
  TA_RETURN_IF_ERROR(launchPlan(driver, function, kernel, plan, stream));
  TA_RETURN_IF_ERROR(buildPlan(merge, split.mergeKernel, problem, &driver, plan,
                               /*takesCaptures=*/false));
  TA_RETURN_IF_ERROR(library.splitMergeModules.get(
      driver, context.context(), merge, split.mergeKernel, slot.ccMajor,
      slot.ccMinor, function));
  // As the split kernel's dependent: its launch hidden behind that grid.
  TA_RETURN_IF_ERROR(launchPlan(driver, function, merge, plan, stream,
                                /*asDependent=*/true));
  return context.exit();
}

} // namespace

Status tiled_attn::runtime::workspaceSize(ta_library &library,
                                          const ta_sdpa_args *args, int device,
                                          uint64_t &bytes) {
  bytes = 0;
  Problem problem;
  TA_RETURN_IF_ERROR(checkArgs(library, args, problem));
  if (problem.empty)
    return Status();
  const Driver *driver = nullptr;
  TA_RETURN_IF_ERROR(library.driver(driver));
  const DeviceSlot *slot = nullptr;
  TA_RETURN_IF_ERROR(driver->device(device, slot));
  SplitChoice split;
  TA_RETURN_IF_ERROR(planSplit(library, problem, slot->ccMajor, slot->ccMinor,
                               slot->smCount, split));
  if (split.numSplits > 1)
    bytes = split.workspace.bytes;
  return Status();
}

Status tiled_attn::runtime::planLaunch(ta_library &library,
                                       const ta_sdpa_args *args, int ccMajor,
                                       int ccMinor, ta_launch_plan &plan) {
  if (ccMajor < 1 || ccMinor < 0 || ccMinor > 9)
    return invalidArgument("compute capability ", ccMajor, ".", ccMinor,
                           " is not one of a CUDA device");
  Problem problem;
  TA_RETURN_IF_ERROR(checkArgs(library, args, problem));
  if (problem.empty) {
    emptyPlan(plan);
    return Status();
  }
  int32_t index = 0;
  TA_RETURN_IF_ERROR(selectKernel(library, problem, ccMajor, ccMinor, index));
  const KernelEntry &kernel = library.manifest.kernels[index];
  if (!kernel.hasTensorMap)
    return buildPlan(kernel, index, problem, nullptr, plan);
  // The driver encodes TMA descriptors in a context, of any device.
  const Driver *driver = nullptr;
  TA_RETURN_IF_ERROR(library.driver(driver));
  ScopedContext context;
  TA_RETURN_IF_ERROR(context.enterAny(*driver));
  TA_RETURN_IF_ERROR(buildPlan(kernel, index, problem, driver, plan));
  return context.exit();
}

Status tiled_attn::runtime::launch(ta_library &library,
                                   const ta_sdpa_args *args, int device,
                                   void *stream) {
  Problem problem;
  TA_RETURN_IF_ERROR(checkArgs(library, args, problem));
  if (problem.empty)
    return Status();
  const Driver *driver = nullptr;
  TA_RETURN_IF_ERROR(library.driver(driver));
  const DeviceSlot *slot = nullptr;
  TA_RETURN_IF_ERROR(driver->device(device, slot));
  if (args->workspace) {
    SplitChoice split;
    TA_RETURN_IF_ERROR(planSplit(library, problem, slot->ccMajor, slot->ccMinor,
                                 slot->smCount, split));
    if (split.numSplits > 1)
      return launchSplit(library, problem, split, *driver, *slot, stream);
  }
  int32_t index = 0;
  TA_RETURN_IF_ERROR(
      selectKernel(library, problem, slot->ccMajor, slot->ccMinor, index));
  const KernelEntry &kernel = library.manifest.kernels[index];
  // The context first: encoding a TMA descriptor needs one.
  ScopedContext context;
  TA_RETURN_IF_ERROR(context.enter(*driver, *slot));
  // Left uninitialized: buildPlan writes what the launch reads.
  ta_launch_plan plan;
  TA_RETURN_IF_ERROR(buildPlan(kernel, index, problem, driver, plan));
  CUfunction function = nullptr;
  TA_RETURN_IF_ERROR(library.modules.get(*driver, context.context(), kernel,
                                         index, slot->ccMajor, slot->ccMinor,
                                         function));
  TA_RETURN_IF_ERROR(launchPlan(*driver, function, kernel, plan, stream));
  return context.exit();
}
