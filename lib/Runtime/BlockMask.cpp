//===- BlockMask.cpp - Block masks from mask functions, on the GPU --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_block_mask: the block mask kernel of a mask function (the manifest's
// "program": "block_mask", tile-generate-block-mask's) classifies the
// blocks of the function's mask. Every parameter of such a kernel is a
// captured input: the function's, then seq_q and seq_k (scalars) and
// block_kinds (the int8 output view), so the call checks the output's
// shape, adds those three to the caller's captures and packs them all by
// name. One program per (query block, head, batch entry) of block_kinds.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace tiled_attn;
using namespace tiled_attn::runtime;

namespace {

/// The library's block mask functions, for messages.
std::string blockMaskFunctions(const ta_library &library) {
  std::string names;
  for (const KernelEntry &k : library.manifest.blockMasks)
    if (names.find("'" + k.maskFunction + "'") == std::string::npos)
      names += (names.empty() ? "'" : ", '") + k.maskFunction + "'";
  return names.empty() ? std::string("none") : names;
}

Status checkBlockKinds(const ta_block_mask_args &args) {
  const ta_tensor &t = args.block_kinds;
  const int64_t blocks[2] = {(args.seq_q + kBlockMaskSize - 1) / kBlockMaskSize,
                             (args.seq_k + kBlockMaskSize - 1) /
                                 kBlockMaskSize};
  for (int d = 0; d < 2; ++d)
    if (t.sizes[d] < 1 || t.sizes[d] > kMaxGridYZ)
      return invalidArgument("block_kinds has ", d ? "head" : "batch", " size ",
                             t.sizes[d], "; it must be 1 to ", kMaxGridYZ,
                             " (one program per head and batch "
                             "entry)");
  for (int d = 0; d < 2; ++d)
    if (t.sizes[2 + d] != blocks[d])
      return invalidArgument(
          "block_kinds is [", t.sizes[0], ", ", t.sizes[1], ", ", t.sizes[2],
          ", ", t.sizes[3], "], but seq_q = ", args.seq_q,
          " and seq_k = ", args.seq_k, " need [B, H, ", blocks[0], ", ",
          blocks[1], "] (blocks of ", kBlockMaskSize, ")");
  if (blocks[0] > INT32_MAX)
    return invalidArgument("seq_q = ", args.seq_q, " needs ", blocks[0],
                           " programs along x, at most ", INT32_MAX);
  if (!t.data)
    return invalidArgument("block_kinds.data is null");
  return Status();
}

/// A block mask kernel of `function` that runs on the device.
Status selectBlockMask(const ta_library &library, const std::string &function,
                       int ccMajor, int ccMinor, int32_t &index) {
  const std::vector<KernelEntry> &kernels = library.manifest.blockMasks;
  for (int32_t i = 0; i < static_cast<int32_t>(kernels.size()); ++i)
    if (kernels[i].maskFunction == function &&
        kernels[i].arch.runsOn(ccMajor, ccMinor)) {
      index = i;
      return Status();
    }
  return Status::error(
      TA_ERROR_NO_KERNEL,
      concat("library ", library.manifest.root,
             " has no block mask kernel of mask function '", function,
             "' for a device of compute capability ", ccMajor, ".", ccMinor,
             " (its block mask functions: ", blockMaskFunctions(library), ")"));
}

} // namespace

Status tiled_attn::runtime::launchBlockMask(ta_library &library,
                                            const ta_block_mask_args *args,
                                            int device, void *stream) {
  if (!args)
    return invalidArgument("ta_block_mask: args is null");
  if (!args->mask_function || !*args->mask_function)
    return invalidArgument("mask_function is null or empty");
  if (args->num_captures < 0 || (args->num_captures > 0 && !args->captures))
    return invalidArgument("captures is null with num_captures = ",
                           args->num_captures);
  if (args->num_captures > TA_MAX_PARAMS)
    return invalidArgument("num_captures is ", args->num_captures,
                           ", more than any kernel takes");
  if (args->seq_q < 0 || args->seq_k < 0)
    return invalidArgument("seq_q and seq_k must be at least 0, got ",
                           args->seq_q, " and ", args->seq_k);
  if (args->seq_q == 0 || args->seq_k == 0)
    return Status(); // No block.
  if (args->seq_q > INT32_MAX || args->seq_k > INT32_MAX)
    return invalidArgument("seq_q and seq_k must be below 2^31, got ",
                           args->seq_q, " and ", args->seq_k);
  TA_RETURN_IF_ERROR(checkBlockKinds(*args));
  // The caller's captures, then the kernel's own three.
  ta_capture captures[TA_MAX_PARAMS + 3];
  for (int32_t i = 0; i < args->num_captures; ++i) {
    const char *name = args->captures[i].name;
    if (!name)
      return invalidArgument("captures[", i, "].name is null");
    for (const char *own : {"seq_q", "seq_k", "block_kinds"})
      if (std::string(name) == own)
        return invalidArgument("captured input '", name,
                               "' has the name of an argument of "
                               "ta_block_mask_args");
    captures[i] = args->captures[i];
  }
  int32_t count = args->num_captures;
  for (auto [name, value] :
       {std::pair{"seq_q", args->seq_q}, std::pair{"seq_k", args->seq_k}}) {
    ta_capture &c = captures[count++];
    c = ta_capture{};
    c.name = name;
    c.type = TA_CAPTURE_I32;
    c.scalar = static_cast<double>(value);
  }
  ta_capture &kinds = captures[count++];
  kinds = ta_capture{};
  kinds.name = "block_kinds";
  kinds.type = TA_CAPTURE_I8;
  kinds.rank = 4;
  kinds.data = args->block_kinds.data;
  for (int d = 0; d < 4; ++d) {
    kinds.sizes[d] = args->block_kinds.sizes[d];
    kinds.strides[d] = args->block_kinds.strides[d];
  }

  const Driver *driver = nullptr;
  TA_RETURN_IF_ERROR(library.driver(driver));
  const DeviceSlot *slot = nullptr;
  TA_RETURN_IF_ERROR(driver->device(device, slot));
  int32_t index = 0;
  TA_RETURN_IF_ERROR(selectBlockMask(library, args->mask_function,
                                     slot->ccMajor, slot->ccMinor, index));
  const KernelEntry &kernel = library.manifest.blockMasks[index];
  // (In the device's context: a TMA descriptor, were a captured view
  // copied so, is encoded in one.)
  ScopedContext context;
  TA_RETURN_IF_ERROR(context.enter(*driver, *slot));
  ta_launch_plan plan;
  TA_RETURN_IF_ERROR(packCapturedParams(kernel, captures, count, driver, plan));
  plan.kernel = index;
  plan.grid[0] = static_cast<uint32_t>(args->block_kinds.sizes[2]);
  plan.grid[1] = static_cast<uint32_t>(args->block_kinds.sizes[1]);
  plan.grid[2] = static_cast<uint32_t>(args->block_kinds.sizes[0]);
  CUfunction function = nullptr;
  TA_RETURN_IF_ERROR(library.blockMaskModules.get(*driver, context.context(),
                                                  kernel, index, slot->ccMajor,
                                                  slot->ccMinor, function));
  TA_RETURN_IF_ERROR(launchPlan(*driver, function, kernel, plan, stream));
  return context.exit();
}
