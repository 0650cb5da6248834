//===- Library.h - An open kernel library -----------------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_library: the checked manifest, the indexes that make choosing a kernel
// a short scan, the driver (resolved on first need) and the modules loaded
// so far. And the steps of one attention call, from the C arguments to the
// packed launch: checkArgs, selectKernel, buildPlan.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_LIBRARY_H
#define TILED_ATTN_LIB_RUNTIME_LIBRARY_H

#include "Driver.h"
#include "Manifest.h"
#include "ModuleCache.h"
#include "Splits.h"

#include <atomic>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tiled_attn::runtime {

/// The kernels computing one (dtype, mask and features, head dims), best
/// first: by arch (sortKey) descending, a 32-bit-index kernel before a
/// 64-bit one, then in manifest order. The first that runs on the device
/// wins.
struct SelectionGroup {
  ta_dtype dtype;
  /// The mask and features (no functions).
  KernelVariant variant;
  int32_t headDim, headDimV;
  std::vector<int32_t> kernels;
};

/// The largest grid extent along y (heads) and z (batch, or sequences).
constexpr int64_t kMaxGridYZ = 65535;

/// The checked sizes of one attention call.
struct Problem {
  Problem() = default;
  /// Not copied: tensors[kLse], [kCuSeqlensQ] and [kCuSeqlensK] point into
  /// the problem itself.
  Problem(const Problem &) = delete;
  Problem &operator=(const Problem &) = delete;

  const ta_sdpa_args *args = nullptr;
  /// q, k, v, o, lse (lseTensor), cu_seqlens_q and cu_seqlens_k
  /// (cuSeqlens).
  const ta_tensor *tensors[kNumTensors] = {};
  /// The view an "lse" kernel writes: ta_sdpa_args.lse as [B, H, S_q]
  /// (contiguous), or with no rows (S_q = 0, null) when it is 0.
  ta_tensor lseTensor = {};
  /// The rank-1 views a "varlen" kernel reads: the varlen.cu_seqlens_q and
  /// cu_seqlens_k addresses, of num_seqs + 1 elements (sizes[0]; stride
  /// 1); without varlen, views of no elements.
  ta_tensor cuSeqlens[2] = {};
  /// The grid's extents: batch (z), heads (y), seqQ (x, in rows). With
  /// varlen, batch is num_seqs and seqQ and seqK the longest lengths
  /// (max_seqlen_q, max_seqlen_k).
  int64_t batch = 0, heads = 0, kvHeads = 0, seqQ = 0, seqK = 0, headDim = 0,
          headDimV = 0;
  uint32_t itemSize = 2;
  /// The output has no elements: nothing to launch.
  bool empty = false;
  /// Every element offset of every view is below 2^31.
  bool index32Ok = true;
  /// The diagonals each query sees (the mask and the window; Window.h;
  /// with varlen, relative to each sequence's top-left diagonal) and the
  /// mask of the kernels that compute them.
  Diagonals band;
  KernelMask needed = KernelMask::None;
  /// The band is aligned bottom-right (a varlen window kernel's
  /// window_align).
  bool bottomRight = false;
  /// The features the call asks for (KernelVariant.def): softcap (softcap >
  /// 0), lse (ta_sdpa_args.lse != 0), varlen (ta_sdpa_args.varlen), sparse
  /// (a block mask's captured inputs given), split (set by the launch when
  /// it splits the keys: planSplit). The mask is `needed`'s.
  KernelVariant asked;
  /// Packed GQA (Args.cpp, packGroupedQueries): q and o are the views in
  /// `packed`, heads is H_kv and seqQ the group's size; only kernels of no
  /// mask (or "window" ones, given the band of every key) run it.
  bool packedGqa = false;
  ta_tensor packed[2] = {};
  /// A varlen call of one query per sequence against paged caches, run as
  /// the batch it is (Args.cpp, batchOneQueryPerSequence): q and o are the
  /// views in `batched`, [num_seqs, H_q, 1, D], and asked.varlen is off.
  bool batchedVarlen = false;
  ta_tensor batched[2] = {};
  /// Split-KV: the chunks of the keys (1: no split), and the partial
  /// results in the workspace (o_partial, lse_partial; without a split,
  /// views of no elements).
  int64_t numSplits = 1;
  ta_tensor partial[2] = {};
  /// The rank-1 view a "seqused" kernel reads: ta_sdpa_args.seqused_k's
  /// batch (or num_seqs) lengths; without it, a view of no elements.
  ta_tensor seqUsed = {};
  /// A paged KV cache's page size (k's and v's dim 2; asked.paged); seqK is
  /// then the block table's pages' keys.
  int64_t pageSize = 0;
  /// A backward call's (Backward.cpp): its views d_o, dq, dk, dv, and the
  /// workspace's delta and dQ accumulator (TensorViews.def's kDo to
  /// kDqAccum); without it, views of no elements. checkArgs neither packs
  /// grouped queries nor batches a varlen call of one: the backward's
  /// kernels take the call as it is.
  bool isBackward = false;
  ta_tensor backward[6] = {};
};

} // namespace tiled_attn::runtime

struct ta_library {
  explicit ta_library(tiled_attn::runtime::Manifest manifest);

  tiled_attn::runtime::Manifest manifest;
  /// The head dims (D, D_v) some kernel handles, sorted.
  std::vector<std::pair<int32_t, int32_t>> headDims;
  std::vector<tiled_attn::runtime::SelectionGroup> groups;
  std::unordered_map<std::string_view, int32_t> byName;
  /// Resolved on first need (see driver()).
  std::atomic<const tiled_attn::runtime::Driver *> loadedDriver{nullptr};
  tiled_attn::runtime::ModuleCache modules;
  /// The block mask kernels' (manifest.blockMasks).
  tiled_attn::runtime::ModuleCache blockMaskModules;
  /// The split merge kernels' (manifest.splitMerges).
  tiled_attn::runtime::ModuleCache splitMergeModules;
  /// The backward kernels' (manifest.backward).
  tiled_attn::runtime::ModuleCache backwardModules;

  /// The CUDA driver, loaded on the first call that needs it.
  tiled_attn::runtime::Status driver(const tiled_attn::runtime::Driver *&out);
};

namespace tiled_attn::runtime {

/// Checks `args` as ta_sdpa does before it chooses a kernel: pointers,
/// enums, shapes, head dim, scale, softcap, window, varlen; and finds the
/// band of diagonals the queries see and the mask of the kernels that
/// compute it.
Status checkArgs(const ta_library &library, const ta_sdpa_args *args,
                 Problem &problem);

/// checkArgs' check of the views' memory, again (after the split-KV
/// workspace's views are set): no output shares memory with another view.
Status checkViewsApart(const Problem &problem);

/// The kernel for `problem` on a device of capability `cc`, or
/// TA_ERROR_NO_KERNEL listing the library's kernels.
Status selectKernel(const ta_library &library, const Problem &problem,
                    int ccMajor, int ccMinor, int32_t &kernel);

/// The masks of the kernels that compute `problem`, best first: the mask
/// asked for (unless a window or packed GQA), the band's, then "window"
/// (which computes any band) where a mask bounds the band or the call has
/// a softcap or log-sum-exps (a backward call always reads them); returns
/// how many (Select.cpp's file comment).
int candidateMasks(const Problem &problem, KernelMask masks[3]);

/// Checks the strides against the kernel's needs and fills `plan`: grid,
/// block, shared bytes and the packed parameters. `driver` builds TMA
/// descriptors; it may be null for a kernel that takes none. The caller's
/// captured inputs must all be the kernel's, unless `takesCaptures` is
/// false (a split merge after a paged split kernel: the block table was
/// the split kernel's).
Status buildPlan(const KernelEntry &kernel, int32_t index,
                 const Problem &problem, const Driver *driver,
                 ta_launch_plan &plan, bool takesCaptures = true);

/// Split-KV's choice for a checked problem on a device of capability `cc`
/// with `smCount` SMs: the split kernel, the merge kernel, the chunks and
/// the workspace; numSplits 1 (and no kernels) where the call does not
/// split: no workspace asked for (ta_sdpa_args.num_splits 1), a problem the
/// split kernels do not compute (a mask that hides keys, varlen,
/// functions, a named kernel), no split or merge kernel in the library for
/// it, or the heuristic's choice (Splits.h).
struct SplitChoice {
  int32_t splitKernel = -1, mergeKernel = -1;
  int64_t numSplits = 1;
  SplitWorkspace workspace;
};
Status planSplit(const ta_library &library, Problem &problem, int ccMajor,
                 int ccMinor, int64_t smCount, SplitChoice &choice);

/// ta_sdpa_plan: what ta_sdpa would launch on a device of capability `cc`.
Status planLaunch(ta_library &library, const ta_sdpa_args *args, int ccMajor,
                  int ccMinor, ta_launch_plan &plan);

/// ta_sdpa_workspace_size: the bytes of split-KV's workspace for `args` on
/// `device` (0 when the call would not split).
Status workspaceSize(ta_library &library, const ta_sdpa_args *args, int device,
                     uint64_t &bytes);

/// ta_sdpa: checks, chooses, loads (once per context) and launches.
Status launch(ta_library &library, const ta_sdpa_args *args, int device,
              void *stream);

/// cuLaunchKernel of `plan` (its grid, block, shared bytes and packed
/// parameters) for `kernel`'s `function` on `stream`; a failure names the
/// kernel and the launch's shape. With `asDependent`, and when the kernel
/// waits for the grid before it (waitsPriorGrids) and the driver has
/// cuLaunchKernelEx, it is launched as that grid's dependent
/// (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): it may start
/// while the earlier grid runs, and waits in its griddepcontrol.wait.
Status launchPlan(const Driver &driver, CUfunction function,
                  const KernelEntry &kernel, ta_launch_plan &plan, void *stream,
                  bool asDependent = false);

/// Fills `plan`'s block, shared bytes and parameters of a kernel whose
/// every parameter is a captured input (a block mask kernel's), from
/// `captures` (`count` of them), each checked against the manifest (and
/// the TMA descriptors of captured views made with `driver`).
Status packCapturedParams(const KernelEntry &kernel, const ta_capture *captures,
                          int32_t count, const Driver *driver,
                          ta_launch_plan &plan);

/// ta_block_mask: checks, chooses a block mask kernel of the function,
/// loads it (once per context) and launches it.
Status launchBlockMask(ta_library &library, const ta_block_mask_args *args,
                       int device, void *stream);

/// ta_sdpa_backward_workspace_size, ta_sdpa_backward_plan and
/// ta_sdpa_backward (Backward.cpp).
Status backwardWorkspaceSize(ta_library &library,
                             const ta_sdpa_backward_args *args,
                             uint64_t &bytes);
Status planBackward(ta_library &library, const ta_sdpa_backward_args *args,
                    int ccMajor, int ccMinor, ta_launch_plan plans[3]);
Status launchBackward(ta_library &library, const ta_sdpa_backward_args *args,
                      int device, void *stream);

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_LIBRARY_H
