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
// aligned. A variable-length batch (varlen) has tensors of batch size 1,
// at least one sequence, the offsets' addresses (4-byte aligned) and
// longest lengths from 1 to the totals. Every view's bytes lie inside the
// 64-bit address space, and the outputs (o, lse) share none with the
// inputs (q, k, v, the offsets) nor with each other, and o's elements none
// among themselves. Each message names the argument and its value. The
// strides are checked later, against the chosen
// kernel's alignment (Params.cpp). Then the band of diagonals the queries
// see, and the mask of the kernels that compute it (Window.h; per
// sequence with varlen).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

using namespace tiled_attn;
using namespace tiled_attn::runtime;

namespace {

/// "[2, 3, 77, 64]".
std::string shapeText(const ta_tensor &t) {
  return concat("[", t.sizes[0], ", ", t.sizes[1], ", ", t.sizes[2], ", ",
                t.sizes[3], "]");
}

/// "[14784, 4928, 64, 1]".
std::string stridesText(const ta_tensor &t) {
  return concat("[", t.strides[0], ", ", t.strides[1], ", ", t.strides[2], ", ",
                t.strides[3], "]");
}

/// "0x500000002".
std::string pointerText(uint64_t address) {
  char text[24];
  std::snprintf(text, sizeof(text), "%#llx",
                static_cast<unsigned long long>(address));
  return text;
}

bool hasElements(const ta_tensor &t) {
  return t.sizes[0] > 0 && t.sizes[1] > 0 && t.sizes[2] > 0 && t.sizes[3] > 0;
}

/// The first and the last byte a view's elements occupy.
struct Span {
  uint64_t first = 0, last = 0;
};

/// The bytes of the elements of `t` (which has some, no negative sizes), of
/// `itemSize` bytes each; false when they leave the 64-bit address space:
/// a byte offset that does not fit an int64 (the kernels' index type), or an
/// address below 0 or past 2^64 - 1.
bool byteSpan(const ta_tensor &t, uint32_t itemSize, Span &span) {
  // The lowest and highest element offsets: the negative strides' terms
  // and the positive ones'.
  int64_t low = 0, high = 0;
  for (int dim = 0; dim < 4; ++dim) {
    int64_t term = 0;
    if (__builtin_mul_overflow(t.sizes[dim] - 1, t.strides[dim], &term) ||
        __builtin_add_overflow(term < 0 ? low : high, term,
                               term < 0 ? &low : &high))
      return false;
  }
  int64_t lowBytes = 0, highBytes = 0;
  if (__builtin_mul_overflow(low, int64_t(itemSize), &lowBytes) ||
      __builtin_mul_overflow(high, int64_t(itemSize), &highBytes) ||
      __builtin_add_overflow(highBytes, int64_t(itemSize) - 1, &highBytes))
    return false;
  uint64_t below = 0 - static_cast<uint64_t>(lowBytes);
  if (t.data < below ||
      __builtin_add_overflow(t.data, static_cast<uint64_t>(highBytes),
                             &span.last))
    return false;
  span.first = t.data - below;
  return true;
}

/// Whether two elements of `t` may share an address: sorted by the size of
/// their strides, the dimensions longer than 1 must each step past all the
/// offsets of the ones before (as every dense layout, transposed or padded,
/// does). A broadcast (a stride of 0) fails this; so would some exotic
/// interleaved layouts that do not overlap.
bool mayOverlapItself(const ta_tensor &t) {
  uint64_t steps[4];
  int64_t sizes[4];
  int count = 0;
  for (int dim = 0; dim < 4; ++dim) {
    if (t.sizes[dim] <= 1)
      continue;
    int64_t stride = t.strides[dim];
    uint64_t step = stride < 0 ? 0 - static_cast<uint64_t>(stride)
                               : static_cast<uint64_t>(stride);
    // Insertion sort by step.
    int at = count++;
    for (; at > 0 && steps[at - 1] > step; --at) {
      steps[at] = steps[at - 1];
      sizes[at] = sizes[at - 1];
    }
    steps[at] = step;
    sizes[at] = t.sizes[dim];
  }
  // The largest offset the dimensions so far reach (saturating).
  uint64_t reach = 0;
  for (int i = 0; i < count; ++i) {
    if (steps[i] <= reach)
      return true;
    uint64_t term = 0;
    if (__builtin_mul_overflow(steps[i], static_cast<uint64_t>(sizes[i] - 1),
                               &term) ||
        __builtin_add_overflow(reach, term, &reach))
      reach = UINT64_MAX;
  }
  return false;
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

/// The band of diagonals the queries of `problem` see, its alignment and
/// the mask of the kernels that compute it.
void findBand(const ta_sdpa_args &args, Problem &problem) {
  const ta_window &window = args.window;
  bool causal = args.mask != TA_MASK_NONE;
  problem.bottomRight = causal ? args.mask == TA_MASK_CAUSAL_BOTTOM_RIGHT
                               : window.enabled && window.bottom_right;
  int64_t left = window.enabled ? window.left : -1;
  int64_t right = window.enabled ? window.right : -1;
  if (!problem.asked.varlen) {
    problem.band = visibleDiagonals(problem.seqQ, problem.seqK, causal,
                                    problem.bottomRight, left, right);
    problem.needed = neededMask(problem.band, problem.seqQ, problem.seqK);
    return;
  }
  problem.band = varlenDiagonals(problem.seqQ, problem.seqK, causal,
                                 problem.bottomRight, left, right);
  problem.needed = neededVarlenMask(problem.band, problem.seqQ, problem.seqK,
                                    problem.bottomRight);
}

/// No negative sizes; a null address only for a tensor without elements.
Status checkTensor(const char *name, const ta_tensor &t) {
  for (int dim = 0; dim < 4; ++dim)
    if (t.sizes[dim] < 0)
      return invalidArgument(name, " has a negative size along dimension ", dim,
                             ": ", t.sizes[dim], " (", name, " ", shapeText(t),
                             ")");
  if (hasElements(t) && t.data == 0)
    return invalidArgument(name, " has a null data pointer (", name, " ",
                           shapeText(t), ")");
  return Status();
}

/// The bytes of each view with elements: inside the 64-bit address space,
/// and, for the outputs (o, and lse when asked for), shared with no other
/// view: the kernels read q, k, v and the sequences' offsets while other
/// programs write, and each element of the output is written once, so o's
/// elements must not overlap one another either.
Status checkMemory(const Problem &problem) {
  Span spans[kNumTensors];
  bool used[kNumTensors] = {};
  for (int t = 0; t < kNumTensors; ++t) {
    const ta_tensor &view = *problem.tensors[t];
    if (!hasElements(view))
      continue;
    // f32 log-sum-exps, partial results and the backward's workspace, i32
    // offsets; q, k, v, o and the gradients 16-bit.
    uint32_t size = kTensorBytes[t] ? kTensorBytes[t] : problem.itemSize;
    if (!byteSpan(view, size, spans[t]))
      return invalidArgument(
          kTensorNames[t], " ", shapeText(view), " with strides ",
          stridesText(view), " at ", pointerText(view.data),
          " does not fit the 64-bit address space: its byte offsets ",
          "overflow an int64 or its addresses pass 0 or 2^64");
    used[t] = true;
  }
  // What the call's kernels write: a backward call reads o and lse.
  auto written = [&](int t) {
    return kTensorWritten[t] && !(problem.isBackward && (t == kO || t == kLse));
  };
  for (int out : {kO, kDq, kDk, kDv}) {
    const ta_tensor &view = *problem.tensors[out];
    if (used[out] && written(out) && mayOverlapItself(view))
      return invalidArgument(
          kTensorNames[out], " ", shapeText(view), " with strides ",
          stridesText(view), " has elements that share an address; the ",
          "kernels write each element of ",
          out == kO ? "the output" : kTensorNames[out],
          " once: give it a layout whose elements do not overlap ",
          "(contiguous, for one)");
  }
  for (int out = 0; out < kNumTensors; ++out) {
    if (!used[out] || !written(out))
      continue;
    for (int t = 0; t < kNumTensors; ++t) {
      if (t == out || !used[t] || spans[t].last < spans[out].first ||
          spans[out].last < spans[t].first)
        continue;
      return invalidArgument(
          kTensorNames[out], " overlaps ", kTensorNames[t], " in memory (",
          kTensorNames[out], ": bytes ", pointerText(spans[out].first), " to ",
          pointerText(spans[out].last), ", ", kTensorNames[t], ": bytes ",
          pointerText(spans[t].first), " to ", pointerText(spans[t].last),
          "); the outputs (o, lse, and split-KV's workspace) must not ",
          "share memory with the inputs (q, k, v, the sequences' offsets) ",
          "nor with each other",
          problem.isBackward ? ", nor may the backward's (dq, dk, dv, its "
                               "workspace) with any view"
                             : "");
    }
  }
  return Status();
}

/// Batch and D agree across q, k, v; k and v have the same heads, whose
/// number divides q's (grouped KV heads), and the same S; o has q's shape;
/// S_k >= 1. With varlen, S is the total length of the packed sequences.
Status checkShapes(const ta_sdpa_args &args, bool paged) {
  const ta_tensor &q = args.q;
  static const char *const what[4] = {"batch size", "head count",
                                      "sequence length", "head dim"};
  const char *length = args.varlen.enabled ? "total length" : what[2];
  const ta_tensor *kv[2] = {&args.k, &args.v};
  for (int i = 0; i < 2; ++i) {
    const char *name = i == 0 ? "k" : "v";
    // V's head dim is its own (D_v, which O has); a paged cache's first
    // dimension is its pages.
    for (int dim : {0, 3})
      if ((i == 0 || dim == 0) && !(paged && dim == 0) &&
          kv[i]->sizes[dim] != q.sizes[dim])
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
  if (paged && args.v.sizes[0] != args.k.sizes[0])
    return invalidArgument("v has ", args.v.sizes[0], " pages but k has ",
                           args.k.sizes[0], " (k ", shapeText(args.k), ", v ",
                           shapeText(args.v), ")");
  if (paged && args.v.sizes[2] != args.k.sizes[2])
    return invalidArgument("v has page size ", args.v.sizes[2], " but k has ",
                           args.k.sizes[2], " (k ", shapeText(args.k), ", v ",
                           shapeText(args.v), ")");
  if (args.v.sizes[2] != args.k.sizes[2])
    return invalidArgument("v has ", length, " ", args.v.sizes[2],
                           " but k has ", args.k.sizes[2], " (k ",
                           shapeText(args.k), ", v ", shapeText(args.v), ")");
  for (int dim = 0; dim < 4; ++dim)
    if (args.o.sizes[dim] != (dim < 3 ? q.sizes : args.v.sizes)[dim])
      return invalidArgument("o has shape ", shapeText(args.o), " but q has ",
                             shapeText(q), " and v ", shapeText(args.v),
                             "; the output must have q's shape with v's head "
                             "dim");
  if (args.k.sizes[2] < 1)
    return invalidArgument("k has ", length, " ", args.k.sizes[2],
                           "; tiled-attn needs at least one key");
  return Status();
}

/// A paged KV cache (a "block_table" captured input given): k and v are
/// [num_pages, H_kv, page_size, D] pages, the table a rank-2 int32 view of
/// q's batch size rows (with varlen, num_seqs rows), and the entries'
/// lengths in seqused_k; no window. The keys are at most the table's pages'
/// (problem.seqK).
Status checkPaged(const ta_sdpa_args &args, Problem &problem) {
  const ta_capture *table = nullptr;
  for (int32_t i = 0; i < args.num_captures; ++i)
    if (args.captures[i].name &&
        std::string_view(args.captures[i].name) == kBlockTableArgument)
      table = &args.captures[i];
  if (table->type != TA_CAPTURE_I32 || table->rank != 2)
    return invalidArgument(kBlockTableArgument, " must be a rank-2 int32 view ",
                           "[B, max_pages] (TA_CAPTURE_I32), got type ",
                           static_cast<int>(table->type), " of rank ",
                           table->rank);
  // A row per batch entry, or with varlen per sequence.
  if (!args.varlen.enabled && table->sizes[0] != args.q.sizes[0])
    return invalidArgument(kBlockTableArgument, " has ", table->sizes[0],
                           " rows but q has batch size ", args.q.sizes[0]);
  if (args.varlen.enabled && table->sizes[0] != args.varlen.num_seqs)
    return invalidArgument(kBlockTableArgument, " has ", table->sizes[0],
                           " rows but varlen.num_seqs is ",
                           args.varlen.num_seqs);
  if (table->sizes[1] < 1)
    return invalidArgument(kBlockTableArgument, " has no columns (",
                           table->sizes[1], "); it lists each entry's pages");
  if (!args.seqused_k)
    return invalidArgument("a paged KV cache (", kBlockTableArgument,
                           ") needs seqused_k, each entry's filled length");
  if (args.window.enabled)
    return invalidArgument("a paged KV cache (", kBlockTableArgument,
                           ") takes no sliding window yet");
  problem.pageSize = args.k.sizes[2];
  if (table->sizes[1] > (int64_t(1) << 40) / problem.pageSize)
    return invalidArgument(kBlockTableArgument, " has ", table->sizes[1],
                           " pages of ", problem.pageSize,
                           " keys: more keys than 2^40");
  problem.seqK = table->sizes[1] * problem.pageSize;
  return Status();
}

/// A variable-length batch: q, k, v, o of batch size 1 (views of packed
/// tensors), at least one sequence, the offsets' addresses, and longest
/// lengths from 1 to the totals (a query total of 0 is an empty output).
/// The shapes are checked (checkShapes): k's total is >= 1.
Status checkVarlen(const ta_sdpa_args &args, bool paged) {
  const ta_varlen &varlen = args.varlen;
  const ta_tensor *tensors[4] = {&args.q, &args.k, &args.v, &args.o};
  for (int t = 0; t < 4; ++t)
    if (tensors[t]->sizes[0] != 1 && !(paged && (t == 1 || t == 2)))
      return invalidArgument(
          "with varlen, ", kTensorNames[t], " must be a [1, H, total, D] view ",
          "of the packed [total, H, D] sequences, got batch size ",
          tensors[t]->sizes[0], " (", kTensorNames[t], " ",
          shapeText(*tensors[t]), ")");
  if (varlen.num_seqs < 1)
    return invalidArgument("varlen.num_seqs must be >= 1, got ",
                           varlen.num_seqs);
  // Checked here as well as with the grid (Params.cpp), so that a count
  // past the grid is this error, whatever the library holds (and not, for
  // a count past 2^31, a call for 64-bit indices).
  if (varlen.num_seqs > kMaxGridYZ)
    return invalidArgument("varlen.num_seqs is ", varlen.num_seqs,
                           "; tiled-attn launches one block row per head and "
                           "sequence, at most ",
                           kMaxGridYZ);
  const char *const sides[2] = {"q", "k"};
  const uint64_t offsets[2] = {varlen.cu_seqlens_q, varlen.cu_seqlens_k};
  const int64_t longest[2] = {varlen.max_seqlen_q, varlen.max_seqlen_k};
  const int64_t totals[2] = {args.q.sizes[2], args.k.sizes[2]};
  // (A paged cache's keys are its pages': cu_seqlens_k and max_seqlen_k
  // are not read.)
  for (int side = 0; side < (paged ? 1 : 2); ++side) {
    if (offsets[side] == 0)
      return invalidArgument("varlen.cu_seqlens_", sides[side], " is null");
    if (offsets[side] % alignof(int32_t))
      return invalidArgument("varlen.cu_seqlens_", sides[side],
                             " (int32 offsets) must be 4-byte aligned, got ",
                             pointerText(offsets[side]));
    if (longest[side] < 1)
      return invalidArgument("varlen.max_seqlen_", sides[side],
                             " must be >= 1, got ", longest[side]);
    if (longest[side] > totals[side] && totals[side] > 0)
      return invalidArgument("varlen.max_seqlen_", sides[side], " is ",
                             longest[side], " but ", sides[side], " holds ",
                             totals[side], side == 0 ? " query rows" : " keys",
                             " in all (", sides[side], " ",
                             shapeText(side == 0 ? args.q : args.k),
                             "); no sequence is longer than the total");
  }
  return Status();
}

/// The rank-1 views of the sequences' offsets a varlen kernel reads (no
/// elements without varlen).
void cuSeqlensViews(const ta_varlen &varlen, ta_tensor views[2]) {
  if (!varlen.enabled)
    return;
  // num_seqs + 1 saturates: a count past the grid's is refused before a
  // kernel's parameters are packed (Params.cpp).
  int64_t size = varlen.num_seqs < INT64_MAX ? varlen.num_seqs + 1 : INT64_MAX;
  const uint64_t offsets[2] = {varlen.cu_seqlens_q, varlen.cu_seqlens_k};
  for (int side = 0; side < 2; ++side)
    views[side] = ta_tensor{offsets[side], {size, 1, 1, 1}, {1, 1, 1, 1}};
}

Status checkHeadDim(const ta_library &library, int64_t headDim,
                    int64_t headDimV) {
  for (auto [d, dv] : library.headDims)
    if (d == headDim && dv == headDimV)
      return Status();
  std::string have;
  for (auto [d, dv] : library.headDims)
    have += concat(have.empty() ? "" : ", ", headDimText(d, dv));
  return invalidArgument("head dim D=", headDimText(headDim, headDimV),
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
  if (args.lse % alignof(float))
    return invalidArgument("lse (the rows' log-sum-exps, float32) must be ",
                           "4-byte aligned, got ", pointerText(args.lse));
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

/// Whether the call gives, among its captured inputs, any argument the
/// feature adds (KernelVariant.def; a block mask's four for `sparse`): a
/// kernel with the feature then runs it, and its parameters name what is
/// missing.
bool givesCaptures(const ta_sdpa_args &args, bool KernelFeatures::*member) {
  if (!args.captures) // (checkCaptures refuses it)
    return false;
  for (const KernelFeature &feature : kKernelFeatures) {
    if (feature.member != member)
      continue;
    std::string_view names = feature.arguments;
    while (!names.empty()) {
      size_t end = std::min(names.find(' '), names.size());
      std::string_view name = names.substr(0, end);
      names.remove_prefix(std::min(end + 1, names.size()));
      for (int32_t i = 0; i < args.num_captures; ++i)
        if (args.captures[i].name && name == args.captures[i].name)
          return true;
    }
    return false;
  }
  return false;
}

} // namespace

/// Packed GQA: a call of one query row per head (decode) whose query heads
/// share K/V heads becomes, for the kernels, a call of H_kv heads of
/// G = H_q / H_kv rows each, the group's query heads: q [B, H_q, 1, D] is
/// read as [B, H_kv, G, D] (strides: batch's, G heads', a head's, 1), and o
/// and lse likewise, so that each K/V head is read once for its whole
/// group and a tile's rows hold G queries, not one. Only where every row is
/// the same query: no varlen, no score or mask function, no block mask (a
/// paged cache's block table is the only captured input it takes), and
/// a band that hides no key (no mask, or bottom-right causal, or a window
/// as wide as the keys); log-sum-exps whose heads are adjacent (the packed
/// rows of a kernel's lse view are; a varlen decode step's, [H_q, total_q],
/// are not); and not for a kernel named by the caller, which runs the call
/// as given.
static void packGroupedQueries(const ta_sdpa_args &args, Problem &problem) {
  const ta_tensor &q = *problem.tensors[kQ], &o = *problem.tensors[kO];
  const ta_tensor &lse = problem.lseTensor;
  if (problem.isBackward || problem.asked.varlen || problem.empty ||
      problem.seqQ != 1 ||
      (lse.sizes[2] && lse.sizes[1] > 1 && lse.strides[1] != 1) ||
      problem.kvHeads == 0 || problem.kvHeads == problem.heads ||
      problem.heads % problem.kvHeads != 0 ||
      problem.needed != KernelMask::None || args.score_function ||
      args.mask_function || args.num_captures > (problem.asked.paged ? 1 : 0) ||
      args.kernel)
    return;
  const int64_t group = problem.heads / problem.kvHeads;
  auto pack = [&](const ta_tensor &t, ta_tensor &packed) {
    packed = ta_tensor{
        t.data,
        {t.sizes[0], problem.kvHeads, group, t.sizes[3]},
        {t.strides[0], t.strides[1] * group, t.strides[1], t.strides[3]}};
  };
  pack(q, problem.packed[0]);
  pack(o, problem.packed[1]);
  problem.tensors[kQ] = &problem.packed[0];
  problem.tensors[kO] = &problem.packed[1];
  // lse [B, H_q, 1] (heads adjacent) is [B, H_kv, G]; without lse, no rows.
  ta_tensor &packedLse = problem.lseTensor;
  packedLse.sizes[1] = problem.kvHeads;
  packedLse.sizes[2] = packedLse.sizes[2] ? group : 0;
  packedLse.strides[1] = group;
  problem.heads = problem.kvHeads;
  problem.seqQ = group;
  problem.packedGqa = true;
  // Every packed row sees every key.
  problem.band = Diagonals{1 - group, problem.seqK - 1};
}

/// vLLM's decode step: a varlen call against paged caches whose every
/// sequence has one query (max_seqlen_q 1 and total_q num_seqs: under the
/// contract that max_seqlen_q bounds each length, every length is 1, so
/// cu_seqlens_q is 0, 1, ..., num_seqs) is the batch of num_seqs entries of
/// one query each: q and o [total_q, H_q, D] are [num_seqs, H_q, 1, D] (a
/// token's stride is the batch's), lse [H_q, total_q] is [num_seqs, H_q, 1],
/// and the kernels without varlen run it, split-KV included, and packed GQA
/// unless it asks for the log-sum-exps (whose heads are then total_q
/// apart). Causal masks are bottom-right by each sequence's length either
/// way (a single query sees every used key); top-left ones and functions
/// are left to the varlen kernels.
static void batchOneQueryPerSequence(const ta_sdpa_args &args,
                                     Problem &problem) {
  const ta_varlen &varlen = args.varlen;
  if (problem.isBackward || !problem.asked.varlen || !problem.asked.paged ||
      !args.seqused_k ||
      varlen.max_seqlen_q != 1 || args.q.sizes[2] != varlen.num_seqs ||
      (args.mask != TA_MASK_NONE && args.mask != TA_MASK_CAUSAL_BOTTOM_RIGHT) ||
      args.window.enabled || args.score_function || args.mask_function ||
      args.num_captures != 1 || args.kernel)
    return;
  auto batch = [&](const ta_tensor &t, ta_tensor &batched) {
    batched = ta_tensor{t.data,
                        {varlen.num_seqs, t.sizes[1], 1, t.sizes[3]},
                        {t.strides[2], t.strides[1], t.strides[2], 1}};
  };
  batch(args.q, problem.batched[0]);
  batch(args.o, problem.batched[1]);
  problem.tensors[kQ] = &problem.batched[0];
  problem.tensors[kO] = &problem.batched[1];
  ta_tensor &lse = problem.lseTensor;
  lse.sizes[0] = varlen.num_seqs;
  lse.sizes[2] = lse.sizes[2] ? 1 : 0;
  lse.strides[0] = 1;
  // No cu_seqlens for kernels without varlen.
  problem.cuSeqlens[0] = problem.cuSeqlens[1] = ta_tensor{};
  problem.asked.varlen = false;
  problem.batchedVarlen = true;
}

/// The captured inputs as given: named, distinct, of a known type, views
/// of rank 1-4 with sizes >= 0, a last stride of 1 and an address where
/// they hold elements, scalars of f32 or i32.
static Status checkCaptures(const ta_sdpa_args &args) {
  if (args.num_captures < 0 || (args.num_captures > 0 && !args.captures))
    return invalidArgument("num_captures is ", args.num_captures,
                           " with captures ", args.captures ? "given" : "null");
  for (int32_t i = 0; i < args.num_captures; ++i) {
    const ta_capture &c = args.captures[i];
    if (!c.name || !*c.name)
      return invalidArgument("captures[", i, "] has no name");
    for (int32_t j = 0; j < i; ++j)
      if (std::strcmp(args.captures[j].name, c.name) == 0)
        return invalidArgument("captured input '", c.name,
                               "' is given twice (captures[", j, "] and [", i,
                               "])");
    if (c.type < TA_CAPTURE_F32 || c.type > TA_CAPTURE_I8)
      return invalidArgument("captured input '", c.name, "' has type ",
                             static_cast<int>(c.type),
                             ", not a ta_capture_type");
    if (c.rank < 0 || c.rank > 4)
      return invalidArgument("captured input '", c.name, "' has rank ", c.rank,
                             "; a view has rank 1 to 4, a scalar 0");
    if (c.rank == 0) {
      if (c.type != TA_CAPTURE_F32 && c.type != TA_CAPTURE_I32)
        return invalidArgument("captured scalar '", c.name,
                               "' must be f32 or i32");
      continue;
    }
    bool empty = false;
    for (int32_t d = 0; d < c.rank; ++d) {
      if (c.sizes[d] < 0)
        return invalidArgument("captured input '", c.name, "' has size ",
                               c.sizes[d], " along dimension ", d);
      empty |= c.sizes[d] == 0;
    }
    if (c.strides[c.rank - 1] != 1 && c.sizes[c.rank - 1] > 1)
      return invalidArgument(
          "captured input '", c.name, "' has a last-dimension stride of ",
          c.strides[c.rank - 1], ", not 1: make it contiguous first");
    if (!empty && !c.data)
      return invalidArgument("captured input '", c.name,
                             "' has elements but a null data pointer");
  }
  return Status();
}

Status tiled_attn::runtime::checkViewsApart(const Problem &problem) {
  return checkMemory(problem);
}

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
  problem.tensors[kCuSeqlensQ] = &problem.cuSeqlens[0];
  problem.tensors[kCuSeqlensK] = &problem.cuSeqlens[1];
  problem.tensors[kOPartial] = &problem.partial[0];
  problem.tensors[kLsePartial] = &problem.partial[1];
  problem.tensors[kSeqUsedK] = &problem.seqUsed;
  // The backward's views: set by checkBackwardArgs before this, else views
  // of no elements.
  for (int t = kDo; t <= kDqAccum; ++t)
    problem.tensors[t] = &problem.backward[t - kDo];
  TA_RETURN_IF_ERROR(checkEnums(*args));
  for (int t = 0; t < 4; ++t)
    TA_RETURN_IF_ERROR(checkTensor(kTensorNames[t], *problem.tensors[t]));
  problem.asked.paged = givesCaptures(*args, &KernelVariant::paged);
  TA_RETURN_IF_ERROR(checkShapes(*args, problem.asked.paged));
  problem.asked.varlen = args->varlen.enabled != 0;
  if (problem.asked.varlen)
    TA_RETURN_IF_ERROR(checkVarlen(*args, problem.asked.paged));
  TA_RETURN_IF_ERROR(checkScale(args->scale));
  TA_RETURN_IF_ERROR(checkSoftcap(args->softcap));
  TA_RETURN_IF_ERROR(checkWindow(*args));
  TA_RETURN_IF_ERROR(checkCaptures(*args));
  TA_RETURN_IF_ERROR(checkHeadDim(library, args->q.sizes[3], args->v.sizes[3]));
  TA_RETURN_IF_ERROR(lseView(*args, problem.lseTensor));
  cuSeqlensViews(args->varlen, problem.cuSeqlens);
  if (args->seqused_k) {
    if (args->seqused_k % alignof(int32_t))
      return invalidArgument("seqused_k (int32 key lengths) must be 4-byte ",
                             "aligned, got ", pointerText(args->seqused_k));
    int64_t entries =
        args->varlen.enabled ? args->varlen.num_seqs : args->q.sizes[0];
    problem.seqUsed =
        ta_tensor{args->seqused_k, {entries, 1, 1, 1}, {1, 1, 1, 1}};
  }
  problem.itemSize = itemSize(args->dtype);
  TA_RETURN_IF_ERROR(checkMemory(problem));
  batchOneQueryPerSequence(*args, problem);
  const ta_varlen &varlen = args->varlen;
  const ta_tensor &q = *problem.tensors[kQ];
  problem.batch = problem.asked.varlen ? varlen.num_seqs : q.sizes[0];
  problem.heads = q.sizes[1];
  problem.kvHeads = args->k.sizes[1];
  problem.seqQ = problem.asked.varlen ? varlen.max_seqlen_q : q.sizes[2];
  problem.seqK = problem.asked.varlen ? varlen.max_seqlen_k : args->k.sizes[2];
  if (problem.asked.paged)
    TA_RETURN_IF_ERROR(checkPaged(*args, problem));
  problem.headDim = args->q.sizes[3];
  problem.headDimV = args->v.sizes[3];
  problem.empty = problem.batch == 0 || problem.heads == 0 ||
                  problem.seqQ == 0 || q.sizes[2] == 0;
  problem.index32Ok = true;
  for (const ta_tensor *t : problem.tensors)
    problem.index32Ok &= maxOffset(*t) < (int64_t(1) << 31);
  findBand(*args, problem);
  problem.asked.softcap = args->softcap > 0.0f;
  problem.asked.lse = args->lse != 0;
  problem.asked.sparse = givesCaptures(*args, &KernelVariant::sparse);
  // Per-entry key lengths: the kernels align a causal mask by each entry's
  // length, so the mask asked for is the one (the band on the longest
  // lengths says which rows see every key: none); no window.
  problem.asked.seqused = args->seqused_k != 0;
  if (problem.asked.seqused) {
    if (args->window.enabled)
      return invalidArgument("seqused_k with a sliding window is not ",
                             "supported (the kernels align causal masks by ",
                             "each entry's length, not windows)");
    if (problem.needed != KernelMask::None)
      problem.needed = static_cast<KernelMask>(args->mask);
  }
  if (args->num_splits < 0)
    return invalidArgument("num_splits is ", args->num_splits,
                           "; 0 lets the runtime choose, 1 is no split, more "
                           "asks for that many chunks of the keys");
  packGroupedQueries(*args, problem);
  return Status();
}
