//===- Args.cpp - Checking the arguments of an attention call -------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks of the Python runtime's validation.py, on ta_sdpa_args: the
// shapes agree across q, k, v and o, the head dim is one the library has,
// the scale is a finite positive float32 and the softcap a finite float32
// >= 0 (0: off), the enums are known, the window's bounds are -1 or >= 0
// and its alignment the causal mask's, and every tensor with elements has a
// device address; the log-sum-exps' address (lse), when given, is 4-byte
// aligned. Each message names the argument and its value. The
// strides are checked later, against the chosen kernel's alignment
// (Params.cpp). Then the band of diagonals the queries see, and the mask
// of the kernels that compute it (Window.h).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>
#include <cstdio>

using namespace tiled_attn::runtime;

namespace {

/// "[2, 3, 77, 64]".
std::string shapeText(const ta_tensor &t) {
  return concat("[", t.sizes[0], ", ", t.sizes[1], ", ", t.sizes[2], ", ",
                t.sizes[3], "]");
}

Status checkEnums(const ta_sdpa_args &args) {
  if (args.dtype != TA_DTYPE_F16 && args.dtype != TA_DTYPE_BF16)
    return invalidArgument("dtype must be TA_DTYPE_F16 (0) or TA_DTYPE_BF16 ",
                           "(1), got ", static_cast<int>(args.dtype));
  if (args.mask != TA_MASK_NONE && args.mask != TA_MASK_CAUSAL_TOP_LEFT &&
      args.mask != TA_MASK_CAUSAL_BOTTOM_RIGHT)
    return invalidArgument(
        "mask must be TA_MASK_NONE (0), ", "TA_MASK_CAUSAL_TOP_LEFT (1) or ",
        "TA_MASK_CAUSAL_BOTTOM_RIGHT (2), got ", static_cast<int>(args.mask));
  return Status();
}

const char *maskEnumName(ta_mask mask) {
  static const char *const names[] = {"TA_MASK_NONE", "TA_MASK_CAUSAL_TOP_LEFT",
                                      "TA_MASK_CAUSAL_BOTTOM_RIGHT"};
  return names[mask];
}

/// A window's bounds are -1 (none) or >= 0; with a causal mask its
/// alignment is the mask's. A disabled window is not read.
Status checkWindow(const ta_sdpa_args &args) {
  const ta_window &window = args.window;
  if (!window.enabled)
    return Status();
  const char *const sides[2] = {"left", "right"};
  const int64_t bounds[2] = {window.left, window.right};
  for (int side = 0; side < 2; ++side)
    if (bounds[side] < -1)
      return invalidArgument("window.", sides[side], " must be -1 (no bound) ",
                             "or a number of keys >= 0, got ", bounds[side]);
  bool maskBottomRight = args.mask == TA_MASK_CAUSAL_BOTTOM_RIGHT;
  if (args.mask != TA_MASK_NONE &&
      maskBottomRight != (window.bottom_right != 0))
    return invalidArgument(
        "window.bottom_right is ", window.bottom_right, " but mask is ",
        maskEnumName(args.mask),
        ": with a causal mask the window is aligned as the mask is (set "
        "window.bottom_right to ",
        maskBottomRight ? 1 : 0, ")");
  return Status();
}

/// The band of diagonals the queries of `problem` see.
Diagonals bandOf(const ta_sdpa_args &args, const Problem &problem) {
  const ta_window &window = args.window;
  bool causal = args.mask != TA_MASK_NONE;
  bool bottomRight = causal ? args.mask == TA_MASK_CAUSAL_BOTTOM_RIGHT
                            : window.enabled && window.bottom_right;
  return visibleDiagonals(problem.seqQ, problem.seqK, causal, bottomRight,
                          window.enabled ? window.left : -1,
                          window.enabled ? window.right : -1);
}

/// No negative sizes; a null address only for a tensor without elements.
Status checkTensor(const char *name, const ta_tensor &t) {
  bool hasElements = true;
  for (int dim = 0; dim < 4; ++dim) {
    if (t.sizes[dim] < 0)
      return invalidArgument(name, " has a negative size along dimension ", dim,
                             ": ", t.sizes[dim], " (", name, " ", shapeText(t),
                             ")");
    hasElements &= t.sizes[dim] > 0;
  }
  if (hasElements && t.data == 0)
    return invalidArgument(name, " has a null data pointer (", name, " ",
                           shapeText(t), ")");
  return Status();
}

/// Batch and D agree across q, k, v; k and v have the same heads, whose
/// number divides q's (grouped KV heads), and the same S; o has q's shape;
/// S_k >= 1.
Status checkShapes(const ta_sdpa_args &args) {
  const ta_tensor &q = args.q;
  static const char *const what[4] = {"batch size", "head count",
                                      "sequence length", "head dim"};
  const ta_tensor *kv[2] = {&args.k, &args.v};
  for (int i = 0; i < 2; ++i) {
    const char *name = i == 0 ? "k" : "v";
    for (int dim : {0, 3})
      if (kv[i]->sizes[dim] != q.sizes[dim])
        return invalidArgument(name, " has ", what[dim], " ", kv[i]->sizes[dim],
                               " but q has ", q.sizes[dim], " (q ",
                               shapeText(q), ", ", name, " ", shapeText(*kv[i]),
                               ")");
  }
  // Grouped KV heads: each K/V head serves H_q / H_kv query heads.
  int64_t kvHeads = args.k.sizes[1];
  if (kvHeads != q.sizes[1] && (kvHeads < 1 || q.sizes[1] % kvHeads != 0))
    return invalidArgument("k has head count ", kvHeads, " but q has ",
                           q.sizes[1],
                           "; q's head count must be a multiple of "
                           "k's and v's (grouped KV heads) (q ",
                           shapeText(q), ", k ", shapeText(args.k), ")");
  if (args.v.sizes[1] != kvHeads)
    return invalidArgument("v has head count ", args.v.sizes[1], " but k has ",
                           kvHeads, " (k ", shapeText(args.k), ", v ",
                           shapeText(args.v), ")");
  if (args.v.sizes[2] != args.k.sizes[2])
    return invalidArgument("v has sequence length ", args.v.sizes[2],
                           " but k has ", args.k.sizes[2], " (k ",
                           shapeText(args.k), ", v ", shapeText(args.v), ")");
  for (int dim = 0; dim < 4; ++dim)
    if (args.o.sizes[dim] != q.sizes[dim])
      return invalidArgument("o has shape ", shapeText(args.o), " but q has ",
                             shapeText(q), "; the output must have q's shape");
  if (args.k.sizes[2] < 1)
    return invalidArgument("k has sequence length ", args.k.sizes[2],
                           "; tiled-attn needs at least one key");
  return Status();
}

Status checkHeadDim(const ta_library &library, int64_t headDim) {
  for (int32_t have : library.headDims)
    if (have == headDim)
      return Status();
  std::string have;
  for (int32_t d : library.headDims)
    have += concat(have.empty() ? "" : ", ", d);
  return invalidArgument("head dim D=", headDim,
                         " is not supported; the kernel library has head dims ",
                         have.empty() ? "none" : have);
}

Status checkScale(float scale) {
  if (std::isfinite(scale) && scale > 0.0f)
    return Status();
  char text[32];
  std::snprintf(text, sizeof(text), "%g", static_cast<double>(scale));
  return invalidArgument("scale must be a finite positive float32 value, got ",
                         text);
}

/// The largest element offset of `t`, sum of (size - 1) * |stride|,
/// saturated at INT64_MAX; 0 for a view without elements.
int64_t maxOffset(const ta_tensor &t) {
  for (int dim = 0; dim < 4; ++dim)
    if (t.sizes[dim] == 0)
      return 0;
  int64_t total = 0;
  for (int dim = 0; dim < 4; ++dim) {
    int64_t stride = t.strides[dim];
    uint64_t magnitude = stride < 0 ? 0 - static_cast<uint64_t>(stride)
                                    : static_cast<uint64_t>(stride);
    int64_t term = 0;
    if (magnitude > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_mul_overflow(t.sizes[dim] - 1,
                               static_cast<int64_t>(magnitude), &term) ||
        __builtin_add_overflow(total, term, &total))
      return INT64_MAX;
  }
  return total;
}

/// 0 (off) or a finite positive float: FlashAttention's softcap.
Status checkSoftcap(float softcap) {
  if (std::isfinite(softcap) && softcap >= 0.0f)
    return Status();
  char text[32];
  std::snprintf(text, sizeof(text), "%g", static_cast<double>(softcap));
  return invalidArgument("softcap must be a finite float32 value >= 0 (0: no ",
                         "soft-capping), got ", text);
}

/// The [B, H, S_q] float32 view an "lse" kernel writes: contiguous at
/// args.lse, or with no rows when args.lse is 0 (the kernel then writes
/// nothing).
Status lseView(const ta_sdpa_args &args, ta_tensor &view) {
  if (args.lse % alignof(float)) {
    char pointer[24];
    std::snprintf(pointer, sizeof(pointer), "%#llx",
                  static_cast<unsigned long long>(args.lse));
    return invalidArgument("lse (the rows' log-sum-exps, float32) must be ",
                           "4-byte aligned, got ", pointer);
  }
  const ta_tensor &q = args.q;
  int64_t rows = args.lse ? q.sizes[2] : 0, headStride = 0;
  // H * S_q, without overflow (the sizes are not checked against each
  // other yet); only a call that asks for the log-sum-exps needs it.
  if (args.lse && __builtin_mul_overflow(q.sizes[1], q.sizes[2], &headStride))
    return invalidArgument("lse: q's head count times its sequence length (",
                           q.sizes[1], " x ", q.sizes[2],
                           ") overflows a 64-bit element count");
  view = ta_tensor{args.lse,
                   {q.sizes[0], q.sizes[1], rows, 1},
                   {headStride, q.sizes[2], 1, 1}};
  return Status();
}

} // namespace

Status tiled_attn::runtime::checkArgs(const ta_library &library,
                                      const ta_sdpa_args *args,
                                      Problem &problem) {
  if (!args)
    return invalidArgument("args is null");
  problem.args = args;
  problem.tensors[kQ] = &args->q;
  problem.tensors[kK] = &args->k;
  problem.tensors[kV] = &args->v;
  problem.tensors[kO] = &args->o;
  problem.tensors[kLse] = &problem.lseTensor;
  TA_RETURN_IF_ERROR(checkEnums(*args));
  for (int t = 0; t < 4; ++t)
    TA_RETURN_IF_ERROR(checkTensor(kTensorNames[t], *problem.tensors[t]));
  TA_RETURN_IF_ERROR(checkShapes(*args));
  TA_RETURN_IF_ERROR(checkScale(args->scale));
  TA_RETURN_IF_ERROR(checkSoftcap(args->softcap));
  TA_RETURN_IF_ERROR(checkWindow(*args));
  TA_RETURN_IF_ERROR(checkHeadDim(library, args->q.sizes[3]));
  TA_RETURN_IF_ERROR(lseView(*args, problem.lseTensor));
  problem.batch = args->q.sizes[0];
  problem.heads = args->q.sizes[1];
  problem.kvHeads = args->k.sizes[1];
  problem.seqQ = args->q.sizes[2];
  problem.seqK = args->k.sizes[2];
  problem.headDim = args->q.sizes[3];
  problem.itemSize = itemSize(args->dtype);
  problem.empty = problem.batch == 0 || problem.heads == 0 || problem.seqQ == 0;
  problem.index32Ok = true;
  for (const ta_tensor *t : problem.tensors)
    problem.index32Ok &= maxOffset(*t) < (int64_t(1) << 31);
  problem.band = bandOf(*args, problem);
  problem.needed = neededMask(problem.band, problem.seqQ, problem.seqK);
  problem.softcap = args->softcap > 0.0f;
  problem.lse = args->lse != 0;
  return Status();
}
