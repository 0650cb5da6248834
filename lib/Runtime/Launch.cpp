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
                                       ta_launch_plan &plan, void *stream) {
  void *params[TA_MAX_PARAMS];
  for (int32_t i = 0; i < plan.num_params; ++i)
    params[i] = plan.param_data + plan.param_offsets[i];
  CUresult result = driver.api().launchKernel(
      function, plan.grid[0], plan.grid[1], plan.grid[2], plan.block[0],
      plan.block[1], plan.block[2], plan.shared_bytes,
      static_cast<CUstream>(stream), params, nullptr);
  if (__builtin_expect(result == CUDA_SUCCESS, 1))
    return Status();
  return driver.failure(result,
                        concat("cuLaunchKernel(kernel ", kernel.name,
                               ", grid (", plan.grid[0], ", ", plan.grid[1],
                               ", ", plan.grid[2], "), block (", plan.block[0],
                               ", ", plan.block[1], ", ", plan.block[2],
                               "), shared_bytes ", plan.shared_bytes, ")"),
                        "");
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
