//===- Params.cpp - Grid, stride checks and parameter packing -------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// From a checked problem and the chosen kernel to the launch plan: the grid
// (ceil(S_q / block_m), H, B); with varlen (ceil(max_seqlen_q / block_m), H,
// num_seqs), the strides the kernel can take (a unit last
// dimension; a data pointer and every other stride of a dimension longer
// than 1 a multiple of the kernel's align_bytes), and the parameters packed
// as the manifest lists them: a window kernel's window_lo and window_hi are
// the problem's band of diagonals (Window.h) and a varlen one's
// window_align its alignment (1 bottom-right, else 0), a softcap kernel's
// softcap the argument's, the cu_seqlens views varlen's offsets. TMA
// descriptors are built by the driver (TensorMap.cpp).
//
//===----------------------------------------------------------------------===//

#include "Library.h"
#include "TensorMap.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

using namespace tiled_attn::runtime;

namespace {

Status checkGrid(const Problem &problem, const KernelEntry &kernel,
                 uint32_t grid[3]) {
  // A backward main kernel's programs are (key block, K/V head, batch
  // entry or sequence).
  const bool keyBlocks = kernel.phase == KernelEntry::Phase::Main;
  // A split kernel's programs along y are (head, chunk).
  const int64_t sizes[2] = {keyBlocks ? problem.kvHeads
                                      : problem.heads *
                                            (kernel.variant.split
                                                 ? problem.numSplits
                                                 : 1),
                            problem.batch};
  const char *what[2] = {"q has head count ", problem.asked.varlen
                                                  ? "varlen.num_seqs is "
                                                  : "q has batch size "};
  const char *row = problem.asked.varlen ? "sequence" : "batch entry";
  for (int i = 0; i < 2; ++i)
    if (sizes[i] > kMaxGridYZ)
      return invalidArgument(what[i], sizes[i],
                             "; tiled-attn launches one block row per head ",
                             "and ", row, ", at most ", kMaxGridYZ);
  const int64_t rows = keyBlocks ? problem.seqK : problem.seqQ;
  const int64_t block = keyBlocks ? kernel.blockN : kernel.blockM;
  int64_t blocks =
      (rows / block + (rows % block != 0 ? 1 : 0)) * kernel.programsPerRowBlock;
  if (blocks > INT32_MAX)
    return invalidArgument(
        problem.asked.varlen
            ? (keyBlocks ? "varlen.max_seqlen_k is " : "varlen.max_seqlen_q is ")
            : (keyBlocks ? "k has sequence length " : "q has sequence length "),
        rows, "; kernel ", kernel.name, keyBlocks ? " (block_n " : " (block_m ",
        block, ") would need ", blocks, " blocks along x, at most ", INT32_MAX);
  grid[0] = static_cast<uint32_t>(blocks);
  grid[1] = static_cast<uint32_t>(sizes[0]);
  grid[2] = static_cast<uint32_t>(problem.batch);
  return Status();
}

/// Whether a view's data pointer and the strides of its dimensions longer
/// than 1 but the last are multiples of `align` bytes (a power of two:
/// modulo 2^64 is exact).
bool alignedView(uint64_t data, const int64_t *sizes, const int64_t *strides,
                 int rank, uint64_t itemSize, uint64_t align) {
  if (data % align)
    return false;
  for (int dim = 0; dim + 1 < rank; ++dim)
    if (sizes[dim] > 1 &&
        (static_cast<uint64_t>(strides[dim]) * itemSize) % align)
      return false;
  return true;
}

/// Why `t` cannot be passed to `kernel` as it is; empty when it can.
std::string strideProblem(const ta_tensor &t, uint32_t itemSize,
                          uint64_t align) {
  if (t.strides[3] != 1)
    return concat("its last-dimension stride is ", t.strides[3], ", not 1");
  if (t.data % align) {
    char pointer[24];
    std::snprintf(pointer, sizeof(pointer), "%#llx",
                  static_cast<unsigned long long>(t.data));
    return concat("its data pointer ", pointer, " is not ", align,
                  "-byte aligned");
  }
  // Modulo 2^64 is exact here: `align` is a power of two.
  for (int dim = 0; dim < 3; ++dim)
    if (t.sizes[dim] > 1 &&
        (static_cast<uint64_t>(t.strides[dim]) * itemSize) % align)
      return concat("its stride along dimension ", dim, " (", t.strides[dim],
                    " elements) is not a multiple of ", align, " bytes");
  return "";
}

Status checkStrides(const Problem &problem, const KernelEntry &kernel) {
  uint64_t align = static_cast<uint64_t>(kernel.alignBytes);
  // q, k, v, o; and a backward kernel's d_o and gradients.
  static constexpr int kViews[] = {kQ, kK, kV, kO, kDo, kDq, kDk, kDv};
  const int count =
      kernel.program == KernelEntry::Program::SdpaBackward ? 8 : 4;
  for (int i = 0; i < count; ++i) {
    const int t = kViews[i];
    const ta_tensor &tensor = *problem.tensors[t];
    // The common case first, without building a message.
    if (tensor.strides[3] == 1 &&
        alignedView(tensor.data, tensor.sizes, tensor.strides, 4,
                    problem.itemSize, align))
      continue;
    const char *name = kTensorNames[t];
    return invalidArgument(
        name, " cannot be passed to kernel ", kernel.name,
        " as it is: ", strideProblem(tensor, problem.itemSize, align),
        " (the kernels need a last-dimension stride of 1, and a data pointer ",
        "and strides of the other dimensions longer than 1 that are ",
        "multiples of ", align, " bytes: copy ", name,
        " into a contiguous buffer first)");
  }
  return Status();
}

/// Stores sizes[dim] or strides[dim] of a view, `prefix` and `name` naming
/// it in messages ("q"; "the captured input slopes"), as an i32 or i64.
Status packIndex(const Param &param, size_t index, const KernelEntry &kernel,
                 const int64_t *sizes, const int64_t *strides,
                 const char *prefix, const char *name, unsigned char *out) {
  bool isSize = param.kind == ParamKind::Size;
  int64_t value = isSize ? sizes[param.dim] : strides[param.dim];
  if (param.type == ParamType::I64) {
    std::memcpy(out, &value, sizeof(value));
    return Status();
  }
  if (value < INT32_MIN || value > INT32_MAX) {
    // A dimension of size 1 is only ever indexed at 0: its stride is
    // unused, and one that does not fit is passed as 0.
    if (!isSize && sizes[param.dim] <= 1)
      value = 0;
    else
      return invalidArgument(prefix, name, "'s ", isSize ? "size" : "stride",
                             " along dimension ", static_cast<int>(param.dim),
                             " is ", value,
                             ", which does not fit the i32 parameter params[",
                             index, "] of kernel ", kernel.name);
  }
  int32_t narrow = static_cast<int32_t>(value);
  std::memcpy(out, &narrow, sizeof(narrow));
  return Status();
}

/// Stores the band's lo (window_lo) or hi (window_hi), or its alignment
/// (window_align: 1 bottom-right, else 0), as an i32 or i64.
Status packDiagonal(const Param &param, size_t index, const KernelEntry &kernel,
                    const Problem &problem, unsigned char *out) {
  bool isLo = param.kind == ParamKind::WindowLo;
  int64_t value = isLo ? problem.band.lo : problem.band.hi;
  if (param.kind == ParamKind::WindowAlign)
    value = problem.bottomRight ? 1 : 0;
  if (param.type == ParamType::I64) {
    std::memcpy(out, &value, sizeof(value));
    return Status();
  }
  if (value < INT32_MIN || value > INT32_MAX)
    return invalidArgument("the window's ",
                           isLo ? "window_lo (the lowest"
                                : "window_hi (the highest",
                           " diagonal j - i a query sees) is ", value,
                           ", which does not fit the i32 parameter params[",
                           index, "] of kernel ", kernel.name);
  int32_t narrow = static_cast<int32_t>(value);
  std::memcpy(out, &narrow, sizeof(narrow));
  return Status();
}

/// The caller's captured input of `kernel`'s capture `c` among `given`
/// (`count` of them), checked against the manifest's record of it.
Status findCapture(const KernelEntry &kernel, size_t c,
                   const ta_capture *captures, int32_t count,
                   const ta_capture *&out) {
  const KernelEntry::Capture &capture = kernel.captures[c];
  for (int32_t i = 0; i < count; ++i) {
    const ta_capture &given = captures[i];
    if (capture.name != given.name)
      continue;
    if (given.type != capture.type || given.rank != capture.rank)
      return invalidArgument(
          "captured input '", capture.name, "' is ",
          given.rank ? concat("a rank-", given.rank, " view of ")
                     : std::string("a scalar "),
          captureTypeName(given.type), ", but kernel ", kernel.name, " takes ",
          capture.rank ? concat("a rank-", capture.rank, " view of ")
                       : std::string("a scalar "),
          captureTypeName(capture.type));
    // A view the kernel copies in 16-byte blocks: its address and the
    // strides of its dimensions longer than 1 (the last is 1) aligned.
    uint64_t align = static_cast<uint64_t>(capture.alignBytes);
    uint64_t size = itemSize(given.type);
    if (align > 1 && given.rank > 0 &&
        !alignedView(given.data, given.sizes, given.strides, given.rank, size,
                     align))
      return invalidArgument(
          "captured input '", capture.name, "' cannot be passed to kernel ",
          kernel.name, " as it is: the kernel copies it in ", align,
          "-byte blocks, so its data pointer and the strides of its "
          "dimensions longer than 1 must be multiples of ",
          align,
          " bytes (pad its rows: for a [..., S_k] float32 view, to a "
          "multiple of ",
          align / size, " elements)");
    out = &given;
    return Status();
  }
  return invalidArgument("kernel ", kernel.name, " (score function '",
                         kernel.scoreFunction, "', mask function '",
                         kernel.maskFunction, "') takes the captured input '",
                         capture.name, "', which captures lacks");
}

/// Every captured input given is one the kernel takes.
Status checkNoExtraCaptures(const KernelEntry &kernel,
                            const ta_capture *captures, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    const char *name = captures[i].name;
    if (std::none_of(kernel.captures.begin(), kernel.captures.end(),
                     [&](const auto &c) { return c.name == name; }))
      return invalidArgument("captured input '", name, "' is not one kernel ",
                             kernel.name, " takes");
  }
  return Status();
}

/// Stores captured input `c`'s part that `param` (params[i]) is: its base,
/// a size or stride, its scalar value, or the TMA descriptor of its blocks.
Status packCapture(const KernelEntry &kernel, const Param &param, size_t i,
                   const ta_capture &c, const Driver *driver,
                   unsigned char *out) {
  if (param.kind == ParamKind::TensorMap) {
    return encodeCaptureTensorMap(driver, kernel, param, c, out);
  } else if (param.kind == ParamKind::Base) {
    std::memcpy(out, &c.data, sizeof(c.data));
  } else if (param.kind == ParamKind::CapturedScalar) {
    if (param.type == ParamType::F32) {
      float value = static_cast<float>(c.scalar);
      std::memcpy(out, &value, sizeof(value));
    } else if (param.type == ParamType::I64) {
      int64_t value = static_cast<int64_t>(c.scalar);
      std::memcpy(out, &value, sizeof(value));
    } else {
      int32_t value = static_cast<int32_t>(c.scalar);
      std::memcpy(out, &value, sizeof(value));
    }
  } else {
    return packIndex(param, i, kernel, c.sizes, c.strides,
                     "the captured input ", c.name, out);
  }
  return Status();
}

} // namespace

Status tiled_attn::runtime::packCapturedParams(const KernelEntry &kernel,
                                               const ta_capture *captures,
                                               int32_t count,
                                               const Driver *driver,
                                               ta_launch_plan &plan) {
  TA_RETURN_IF_ERROR(checkNoExtraCaptures(kernel, captures, count));
  for (int i = 0; i < 3; ++i)
    plan.block[i] = kernel.block[i];
  plan.shared_bytes = static_cast<uint32_t>(kernel.sharedBytes);
  plan.num_params = static_cast<int32_t>(kernel.params.size());
  std::memset(plan.param_data, 0, kernel.paramBytes);
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const Param &param = kernel.params[i];
    plan.param_offsets[i] = param.offset;
    plan.param_sizes[i] = param.size;
    if (param.capture < 0)
      return libraryError("kernel ", kernel.name, ": params[", i,
                          "] is no captured input's");
    const ta_capture *c = nullptr;
    TA_RETURN_IF_ERROR(findCapture(kernel, param.capture, captures, count, c));
    TA_RETURN_IF_ERROR(packCapture(kernel, param, i, *c, driver,
                                   plan.param_data + param.offset));
  }
  return Status();
}

Status tiled_attn::runtime::buildPlan(const KernelEntry &kernel, int32_t index,
                                      const Problem &problem,
                                      const Driver *driver,
                                      ta_launch_plan &plan,
                                      bool takesCaptures) {
  TA_RETURN_IF_ERROR(checkGrid(problem, kernel, plan.grid));
  TA_RETURN_IF_ERROR(checkStrides(problem, kernel));
  plan.kernel = index;
  for (int i = 0; i < 3; ++i)
    plan.block[i] = kernel.block[i];
  plan.shared_bytes = static_cast<uint32_t>(kernel.sharedBytes);
  plan.num_params = static_cast<int32_t>(kernel.params.size());
  std::memset(plan.param_data, 0, kernel.paramBytes);
  if (takesCaptures)
    TA_RETURN_IF_ERROR(checkNoExtraCaptures(kernel, problem.args->captures,
                                            problem.args->num_captures));
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const Param &param = kernel.params[i];
    plan.param_offsets[i] = param.offset;
    plan.param_sizes[i] = param.size;
    unsigned char *out = plan.param_data + param.offset;
    if (param.capture >= 0) {
      const ta_capture *c = nullptr;
      TA_RETURN_IF_ERROR(findCapture(kernel, param.capture,
                                     problem.args->captures,
                                     problem.args->num_captures, c));
      TA_RETURN_IF_ERROR(packCapture(kernel, param, i, *c, driver, out));
      continue;
    }
    const ta_tensor &t = *problem.tensors[param.tensor];
    switch (param.kind) {
    case ParamKind::Base:
      std::memcpy(out, &t.data, sizeof(t.data));
      break;
    case ParamKind::Size:
    case ParamKind::Stride:
      TA_RETURN_IF_ERROR(packIndex(param, i, kernel, t.sizes, t.strides, "",
                                   kTensorNames[param.tensor], out));
      break;
    case ParamKind::Scale:
      std::memcpy(out, &problem.args->scale, sizeof(float));
      break;
    case ParamKind::Softcap:
      std::memcpy(out, &problem.args->softcap, sizeof(float));
      break;
    case ParamKind::TensorMap:
      TA_RETURN_IF_ERROR(
          encodeTensorMap(driver, kernel, param, t, problem.args->dtype, out));
      break;
    case ParamKind::WindowLo:
    case ParamKind::WindowHi:
    case ParamKind::WindowAlign:
      TA_RETURN_IF_ERROR(packDiagonal(param, i, kernel, problem, out));
      break;
    case ParamKind::CapturedScalar: // packed above
      break;
    case ParamKind::NumSplits:
      if (param.type == ParamType::I64) {
        std::memcpy(out, &problem.numSplits, sizeof(int64_t));
      } else {
        int32_t narrow = static_cast<int32_t>(problem.numSplits);
        std::memcpy(out, &narrow, sizeof(narrow));
      }
      break;
    }
  }
  return Status();
}
