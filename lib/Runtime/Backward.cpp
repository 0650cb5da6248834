//===- Backward.cpp - The backward pass of an attention call --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_sdpa_backward: the forward call's arguments checked as ta_sdpa checks
// them (checkArgs, with the backward's views set: no packed GQA, no
// batching of a varlen call), the gradients' shapes, the workspace's two
// float32 views, and three kernels of the library's "sdpa_backward"
// entries chosen and launched in order on the stream:
//
//   preprocess   grid (ceil(S_q / block_m), H, B): delta = rowsum(dO * O)
//                and the dQ accumulator zeroed;
//   main         grid (ceil(S_k / block_n), H_kv, B): dK, dV of a key
//                block (summed over the group's query heads), dQ's part
//                added to the accumulator;
//   postprocess  grid (ceil(S_q / block_m), H, B): dq = scale * accumulator;
//   or, deterministic, dq: grid as postprocess's, dq of a query block
//                recomputed over its key blocks and written once.
//
// (With varlen, B is the number of sequences and S_q, S_k the longest.)
// The main and dq kernels are chosen as ta_sdpa chooses (candidateMasks):
// the mask asked for, the band's, then a "window" kernel (which takes the
// band as window_lo and window_hi, and computes any band); their softcap
// and varlen the call's. Preprocess and postprocess go by dtype, head dims
// and varlen. Each is of the highest arch that runs on the device.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>

using namespace tiled_attn;
using namespace tiled_attn::runtime;

namespace {

using Phase = KernelEntry::Phase;

/// The phases launched, in order: the last is dq in the deterministic mode.
Phase phaseOf(const ta_sdpa_backward_args &args, int p) {
  constexpr Phase kPhases[3] = {Phase::Preprocess, Phase::Main,
                                Phase::Postprocess};
  return p == 2 && args.deterministic ? Phase::Dq : kPhases[p];
}

/// The workspace's alignment, and its delta's padding.
constexpr uint64_t kWorkspaceAlign = 256;

/// The byte offsets of the workspace's two views and its size.
struct BackwardWorkspace {
  uint64_t deltaBytes = 0, accumOffset = 0, bytes = 0;
};

/// delta [B, H, S_q] then, 256-byte aligned, the accumulator [B, H, S_q,
/// D], both float32, of q's sizes (with varlen [1, H, total_q, D]); false
/// on overflow.
bool backwardWorkspace(const ta_tensor &q, BackwardWorkspace &out) {
  uint64_t rows = 0, delta = 0, accum = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(q.sizes[0]),
                             static_cast<uint64_t>(q.sizes[1]), &rows) ||
      __builtin_mul_overflow(rows, static_cast<uint64_t>(q.sizes[2]), &rows) ||
      __builtin_mul_overflow(rows, uint64_t(4), &delta) ||
      __builtin_mul_overflow(delta, static_cast<uint64_t>(q.sizes[3]), &accum))
    return false;
  out.deltaBytes = delta;
  out.accumOffset =
      (delta + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
  return !__builtin_add_overflow(out.accumOffset, accum, &out.bytes) &&
         out.accumOffset >= delta;
}

std::string sizesText(const ta_tensor &t) {
  return concat("[", t.sizes[0], ", ", t.sizes[1], ", ", t.sizes[2], ", ",
                t.sizes[3], "]");
}

/// `view` (`name`) has the sizes of `like` (`likeName`).
Status checkSameSizes(const char *name, const ta_tensor &view,
                      const char *likeName, const ta_tensor &like) {
  if (std::equal(view.sizes, view.sizes + 4, like.sizes))
    return Status();
  return invalidArgument(name, " has sizes ", sizesText(view), ", but ",
                         likeName, " has ", sizesText(like), ": ", name,
                         " must have ", likeName, "'s");
}

/// No negative sizes; a null address only for a view without elements.
Status checkGradientView(const char *name, const ta_tensor &t) {
  bool empty = false;
  for (int dim = 0; dim < 4; ++dim) {
    if (t.sizes[dim] < 0)
      return invalidArgument(name, " has a negative size along dimension ", dim,
                             ": ", t.sizes[dim]);
    empty |= t.sizes[dim] == 0;
  }
  if (!empty && t.data == 0)
    return invalidArgument(name, " has a null data pointer (", name, " ",
                           sizesText(t), ")");
  return Status();
}

/// What the backward does not take of the forward's arguments.
Status checkForwardFields(const ta_sdpa_args &forward) {
  const char *refused =
      forward.kernel                                 ? "forward.kernel"
      : forward.seqused_k                            ? "forward.seqused_k"
      : forward.workspace || forward.workspace_bytes ? "forward.workspace"
                                                     : nullptr;
  if (refused)
    return invalidArgument(
        refused, " is set, but the backward pass takes none: it has no ",
        "named kernels, no KV-cache lengths yet, and its workspace is ",
        "ta_sdpa_backward_args.workspace");
  if (!forward.lse)
    return invalidArgument(
        "forward.lse is 0: the backward pass reads the forward's ",
        "log-sum-exps; run the forward with lse (ta_sdpa_args.lse) and pass ",
        "the same view here");
  return Status();
}

/// A function's name as a kernel's entry says it ("" for none).
std::string functionName(const char *name) { return name ? name : ""; }

/// Whether backward kernel `k` computes `problem`'s `phase` with a kernel of
/// `mask` (the main kernel's; any for the other phases) on capability cc.
/// The main and dq kernels are of the forward's score and mask functions
/// (none, or those named by forward.score_function and mask_function).
bool fits(const KernelEntry &k, const Problem &problem, Phase phase,
          KernelMask mask, int ccMajor, int ccMinor) {
  if (k.phase != phase || k.dtype != problem.args->dtype ||
      k.headDim != problem.headDim || k.headDimV != problem.headDimV ||
      k.variant.varlen != problem.asked.varlen ||
      !k.arch.runsOn(ccMajor, ccMinor) ||
      (k.indexBits == 32 && !problem.index32Ok))
    return false;
  return !KernelEntry::computesScores(phase) ||
         (k.variant.mask == mask && k.variant.softcap == problem.asked.softcap &&
          k.scoreFunction == functionName(problem.args->score_function) &&
          k.maskFunction == functionName(problem.args->mask_function));
}

/// TA_ERROR_NO_KERNEL: what the call needs and what the library holds.
Status noBackwardKernel(const ta_library &library, const Problem &problem,
                        Phase phase, int ccMajor, int ccMinor) {
  const ta_sdpa_args &args = *problem.args;
  std::string wanted =
      concat("sm_", ccMajor, ccMinor, ", ",
             args.dtype == TA_DTYPE_F16 ? "f16" : "bf16",
             ", D=", headDimText(problem.headDim, problem.headDimV));
  if (KernelEntry::computesScores(phase)) {
    KernelMask masks[3];
    int count = candidateMasks(problem, masks);
    wanted += ", causal=";
    for (int i = 0; i < count; ++i)
      wanted += concat(i ? " or " : "", kernelMaskName(masks[i]));
    if (problem.asked.softcap)
      wanted += ", softcap";
    for (auto [what, name] :
         {std::pair{"score function", args.score_function},
          std::pair{"mask function", args.mask_function}})
      if (name)
        wanted += concat(", ", what, " '", name, "'");
  }
  if (problem.asked.varlen)
    wanted += ", varlen";
  const std::vector<KernelEntry> &kernels = library.manifest.backward;
  std::string held;
  if (kernels.empty())
    held = "the library has no backward kernels (its manifest has no "
           "entries of program 'sdpa_backward'; rebuild it with "
           "kernels/library.json's backward configurations)";
  else if (kernels.size() <= 16)
    for (const KernelEntry &k : kernels)
      held += concat(held.empty() ? "available: " : "; ", k.describe());
  else {
    std::string dims;
    std::vector<std::pair<int32_t, int32_t>> seen;
    for (const KernelEntry &k : kernels)
      if (std::find(seen.begin(), seen.end(),
                    std::pair{k.headDim, k.headDimV}) == seen.end()) {
        seen.emplace_back(k.headDim, k.headDimV);
        dims += concat(dims.empty() ? "" : ", ",
                       headDimText(k.headDim, k.headDimV));
      }
    held = concat(kernels.size(), " backward kernels of D=", dims,
                  " (ta_library_backward_kernel describes each)");
  }
  return Status::error(TA_ERROR_NO_KERNEL,
                       concat("no backward ", phaseName(phase), " kernel for ",
                              wanted, "; ", held));
}

/// The library's kernel of `phase` for `problem`: of the best mask first,
/// then the highest arch.
Status selectBackward(const ta_library &library, const Problem &problem,
                      Phase phase, int ccMajor, int ccMinor, int32_t &index) {
  KernelMask masks[3] = {KernelMask::None};
  int count =
      KernelEntry::computesScores(phase) ? candidateMasks(problem, masks) : 1;
  const std::vector<KernelEntry> &kernels = library.manifest.backward;
  for (int m = 0; m < count; ++m) {
    index = -1;
    for (int32_t i = 0; i < static_cast<int32_t>(kernels.size()); ++i)
      if (fits(kernels[i], problem, phase, masks[m], ccMajor, ccMinor) &&
          (index < 0 ||
           kernels[i].arch.sortKey() > kernels[index].arch.sortKey()))
        index = i;
    if (index >= 0)
      return Status();
  }
  return noBackwardKernel(library, problem, phase, ccMajor, ccMinor);
}

/// The checked call: the forward's arguments (checkArgs), the gradients'
/// sizes and memory, and the workspace's size (its views are set by
/// setWorkspace).
Status checkBackwardArgs(const ta_library &library,
                         const ta_sdpa_backward_args *args, Problem &problem,
                         BackwardWorkspace &workspace) {
  if (!args)
    return invalidArgument("args is null");
  const ta_sdpa_args &forward = args->forward;
  TA_RETURN_IF_ERROR(checkForwardFields(forward));
  const std::pair<const char *, const ta_tensor *> grads[4] = {
      {"d_o", &args->d_o},
      {"dq", &args->dq},
      {"dk", &args->dk},
      {"dv", &args->dv}};
  for (auto [name, view] : grads)
    TA_RETURN_IF_ERROR(checkGradientView(name, *view));
  // The sizes first: a view of the wrong shape is named as that, before
  // checkArgs looks at the bytes it spans.
  TA_RETURN_IF_ERROR(checkSameSizes("d_o", args->d_o, "o", forward.o));
  TA_RETURN_IF_ERROR(checkSameSizes("dq", args->dq, "q", forward.q));
  TA_RETURN_IF_ERROR(checkSameSizes("dk", args->dk, "k", forward.k));
  TA_RETURN_IF_ERROR(checkSameSizes("dv", args->dv, "v", forward.v));
  problem.isBackward = true;
  problem.backward[kDo - kDo] = args->d_o;
  problem.backward[kDq - kDo] = args->dq;
  problem.backward[kDk - kDo] = args->dk;
  problem.backward[kDv - kDo] = args->dv;
  TA_RETURN_IF_ERROR(checkArgs(library, &forward, problem));
  if (!backwardWorkspace(forward.q, workspace))
    return invalidArgument("the backward's workspace for q ",
                           sizesText(forward.q),
                           " overflows a 64-bit byte count");
  return Status();
}

/// The workspace's views (delta, the accumulator) at args->workspace,
/// checked: aligned, large enough, apart from every other view.
Status setWorkspace(const ta_sdpa_backward_args &args,
                    const BackwardWorkspace &workspace, Problem &problem) {
  if (workspace.bytes == 0)
    return Status();
  if (!args.workspace || args.workspace % kWorkspaceAlign) {
    char address[24];
    std::snprintf(address, sizeof(address), "%#llx",
                  static_cast<unsigned long long>(args.workspace));
    return invalidArgument("workspace must be a ", kWorkspaceAlign,
                           "-byte aligned device address, got ", address);
  }
  if (args.workspace_bytes < workspace.bytes)
    return invalidArgument("workspace_bytes is ", args.workspace_bytes,
                           ", but this call needs ", workspace.bytes,
                           " bytes (ta_sdpa_backward_workspace_size)");
  const ta_tensor &q = args.forward.q;
  const int64_t b = q.sizes[0], h = q.sizes[1], s = q.sizes[2], d = q.sizes[3];
  problem.backward[kDelta - kDo] =
      ta_tensor{args.workspace, {b, h, s, 1}, {h * s, s, 1, 1}};
  problem.backward[kDqAccum - kDo] =
      ta_tensor{args.workspace + workspace.accumOffset,
                {b, h, s, d},
                {h * s * d, s * d, d, 1}};
  return checkViewsApart(problem);
}

/// Which phases run: none without keys' gradients to write (no batch or
/// heads), the main kernel alone without query rows.
void phasesToRun(const Problem &problem, bool run[3]) {
  const bool keys = problem.batch > 0 && problem.kvHeads > 0 &&
                    problem.seqK > 0 && problem.headDim > 0;
  run[1] = keys;
  run[0] = run[2] = keys && !problem.empty;
}

void emptyPlan(ta_launch_plan &plan) {
  std::memset(&plan, 0, offsetof(ta_launch_plan, param_offsets));
  plan.kernel = -1;
}

/// The checked call's three plans on capability cc (kernel -1 for a phase
/// that does not run). A kernel that takes TMA descriptors needs `driver`
/// and a current context; with `anyContext` and no driver, the first such
/// kernel loads the driver and enters a context of any device there (the
/// plan-only call's way, as ta_sdpa_plan's), so that a call that chooses
/// none needs no driver.
Status planPhases(ta_library &library, const ta_sdpa_backward_args *args,
                  int ccMajor, int ccMinor, const Driver *driver,
                  Problem &problem, ta_launch_plan plans[3],
                  ScopedContext *anyContext = nullptr) {
  BackwardWorkspace workspace;
  TA_RETURN_IF_ERROR(checkBackwardArgs(library, args, problem, workspace));
  bool run[3];
  phasesToRun(problem, run);
  if (run[0])
    TA_RETURN_IF_ERROR(setWorkspace(*args, workspace, problem));
  for (int p = 0; p < 3; ++p) {
    if (!run[p]) {
      emptyPlan(plans[p]);
      continue;
    }
    int32_t index = -1;
    TA_RETURN_IF_ERROR(selectBackward(library, problem, phaseOf(*args, p),
                                      ccMajor, ccMinor, index));
    const KernelEntry &kernel = library.manifest.backward[index];
    if (kernel.hasTensorMap && !driver && anyContext) {
      TA_RETURN_IF_ERROR(library.driver(driver));
      TA_RETURN_IF_ERROR(anyContext->enterAny(*driver));
    }
    // (The main and dq kernels take the functions' captured inputs: every
    // one given must be one they take.)
    TA_RETURN_IF_ERROR(
        buildPlan(kernel, index, problem, driver, plans[p],
                  /*takesCaptures=*/KernelEntry::computesScores(
                      phaseOf(*args, p))));
  }
  return Status();
}

} // namespace

Status tiled_attn::runtime::backwardWorkspaceSize(
    ta_library &library, const ta_sdpa_backward_args *args, uint64_t &bytes) {
  bytes = 0;
  Problem problem;
  BackwardWorkspace workspace;
  TA_RETURN_IF_ERROR(checkBackwardArgs(library, args, problem, workspace));
  bool run[3];
  phasesToRun(problem, run);
  if (run[0])
    bytes = workspace.bytes;
  return Status();
}

Status tiled_attn::runtime::planBackward(ta_library &library,
                                         const ta_sdpa_backward_args *args,
                                         int ccMajor, int ccMinor,
                                         ta_launch_plan plans[3]) {
  if (ccMajor < 1 || ccMinor < 0 || ccMinor > 9)
    return invalidArgument("compute capability ", ccMajor, ".", ccMinor,
                           " is not one of a CUDA device");
  Problem problem;
  ScopedContext context;
  TA_RETURN_IF_ERROR(planPhases(library, args, ccMajor, ccMinor, nullptr,
                                problem, plans, &context));
  return context.exit();
}

Status tiled_attn::runtime::launchBackward(ta_library &library,
                                           const ta_sdpa_backward_args *args,
                                           int device, void *stream) {
  const Driver *driver = nullptr;
  TA_RETURN_IF_ERROR(library.driver(driver));
  const DeviceSlot *slot = nullptr;
  TA_RETURN_IF_ERROR(driver->device(device, slot));
  // Every kernel chosen and planned before the first launch: a call that
  // fails launches nothing. (In the device's context: the planning of a
  // kernel that takes TMA descriptors encodes them, which needs one.)
  ScopedContext context;
  TA_RETURN_IF_ERROR(context.enter(*driver, *slot));
  Problem problem;
  ta_launch_plan plans[3];
  TA_RETURN_IF_ERROR(planPhases(library, args, slot->ccMajor, slot->ccMinor,
                                driver, problem, plans));
  if (plans[1].kernel < 0)
    return context.exit();
  CUfunction functions[3] = {};
  for (int p = 0; p < 3; ++p)
    if (plans[p].kernel >= 0)
      TA_RETURN_IF_ERROR(library.backwardModules.get(
          *driver, context.context(),
          library.manifest.backward[plans[p].kernel], plans[p].kernel,
          slot->ccMajor, slot->ccMinor, functions[p]));
  for (int p = 0; p < 3; ++p)
    if (plans[p].kernel >= 0)
      TA_RETURN_IF_ERROR(launchPlan(*driver, functions[p],
                                    library.manifest.backward[plans[p].kernel],
                                    plans[p], stream));
  return context.exit();
}
