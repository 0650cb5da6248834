//===- Manifest.h - The kernel library's manifest ---------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A kernel library is a folder holding manifest.json and the PTX and cubin
// files it names. The manifest (version 2) lists the kernels; each entry
// gives what the kernel computes (dtype, head dim, mask: "causal" is none,
// top_left, bottom_right or window; "softcap": true for logit
// soft-capping, "lse": true for the rows' log-sum-exps, "varlen": true for
// variable-length batches, each optional), where it runs (arch), how to
// launch it
// (block, block_m, dynamic shared bytes) and its parameter list in ABI
// "tiled-attn-v2":
//
//   {"name": "q", "kind": "base", "type": "ptr"}         q's device address
//   {"name": "q", "kind": "size", "dim": 2, "type": "i32"}   sizes[2] of q
//   {"name": "q", "kind": "stride", "dim": 0, "type": "i64"} strides[0] of q
//   {"name": "scale", "kind": "scalar", "type": "f32"}   the softmax scale
//   {"name": "window_lo", "kind": "scalar", "type": "i32"}   the band of
//   {"name": "window_hi", "kind": "scalar", "type": "i32"}   diagonals
//   {"name": "softcap", "kind": "scalar", "type": "f32"} the logit softcap
//   {"name": "window_align", "kind": "scalar", "type": "i32"}  0 or 1
//   {"name": "cu_seqlens_q", "kind": "base", "type": "ptr"}   sequence
//   {"name": "cu_seqlens_q", "kind": "size", "dim": 0, "type": "i32"} offsets
//   {"name": "k", "kind": "tensor_map", "type": "tensor_map",
//    "box": [rows, cols], "swizzle": 128}               a TMA descriptor of k
//
// window_lo and window_hi (i32 or i64, the kernel's index width) are the
// band lo <= j - i <= hi of Window.h; a "window" kernel takes both, and no
// other kernel takes either. softcap (f32) is ta_sdpa_args.softcap, the c
// of the scores' soft-capping c * tanh(s / c); a kernel whose entry says
// "softcap": true takes it, and no other kernel does. A kernel of
// "varlen": true takes the rank-1 int32 views cu_seqlens_q and cu_seqlens_k
// (base, size 0 = num_seqs + 1; ta_varlen), and, if it is a "window" one,
// the scalar window_align (i32 or i64: 1 when the band is aligned
// bottom-right, else 0); no other kernel takes any of them, and a varlen
// kernel is not heavy-first (its grid's z is the sequence).
//
// Reading checks everything that can be checked without a GPU, so that a
// bad library fails at ta_library_open with the manifest path, the kernel
// and the field, not at the first launch. The parameters' offsets in the
// launch buffer are computed here once.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_MANIFEST_H
#define TILED_ATTN_LIB_RUNTIME_MANIFEST_H

#include "Status.h"
#include "Window.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tiled_attn::runtime {

/// The environment variable naming the default kernel library folder.
constexpr const char *kKernelsEnv = "TILED_ATTN_KERNELS";
constexpr const char *kManifestName = "manifest.json";
constexpr int kManifestVersion = 2;
constexpr const char *kAbi = "tiled-attn-v2";
/// Alignment a kernel needs of base pointers and non-unit strides unless its
/// entry says otherwise: one 16-byte vector load or store.
constexpr int kDefaultAlignBytes = 16;
constexpr int kMaxThreadsPerBlock = 1024;

/// A target such as sm_80, sm_90a (arch-specific) or sm_100f (family).
struct Arch {
  int major = 0;
  int minor = 0;
  /// 0 for plain code, 'a' or 'f'.
  char suffix = 0;

  /// Parses sm_<major><minor>[a|f]; false on anything else.
  static bool parse(const std::string &text, Arch &arch);

  /// Whether code for this arch runs on a device of capability `cc`: plain
  /// code (PTX the driver JIT-compiles) on any later device, arch-specific
  /// code on its own capability only, family code on the same major and an
  /// equal or later minor.
  bool runsOn(int ccMajor, int ccMinor) const;

  /// Orders by capability, then by how specific the code is (a > f > plain).
  int sortKey() const;

  std::string str() const;
};

/// The tensors a parameter may name, in ta_sdpa_args order, each with its
/// name, its view's rank and what it holds (for messages): TensorViews.def.
enum TensorId : uint8_t {
#define TILED_ATTN_TENSOR_VIEW(id, name, rank, bytes, written, contents) id,
#include "TensorViews.def"
};
constexpr int kNumTensors = 0
#define TILED_ATTN_TENSOR_VIEW(id, name, rank, bytes, written, contents) +1
#include "TensorViews.def"
    ;
constexpr const char *kTensorNames[kNumTensors] = {
#define TILED_ATTN_TENSOR_VIEW(id, name, rank, bytes, written, contents) name,
#include "TensorViews.def"
};
constexpr int kTensorRanks[kNumTensors] = {
#define TILED_ATTN_TENSOR_VIEW(id, name, rank, bytes, written, contents) rank,
#include "TensorViews.def"
};
constexpr const char *kTensorContents[kNumTensors] = {
#define TILED_ATTN_TENSOR_VIEW(id, name, rank, bytes, written, contents) contents,
#include "TensorViews.def"
};
/// Bytes per element (0: the call's dtype's) and whether a kernel writes it.
constexpr int kTensorBytes[kNumTensors] = {
#define TILED_ATTN_TENSOR_VIEW(id, name, rank, bytes, written, contents) bytes,
#include "TensorViews.def"
};
constexpr bool kTensorWritten[kNumTensors] = {
#define TILED_ATTN_TENSOR_VIEW(id, name, rank, bytes, written, contents)       \
  written != 0,
#include "TensorViews.def"
};

/// The kinds of parameter; a "scalar" is Scale, WindowLo, WindowHi,
/// WindowAlign or Softcap, by its name.
enum class ParamKind : uint8_t {
  Base,
  Size,
  Stride,
  Scale,
  TensorMap,
  WindowLo,
  WindowHi,
  WindowAlign,
  Softcap,
  /// A captured scalar of a score or mask function (Param::capture).
  CapturedScalar,
  /// The number of chunks of split-KV (a split kernel's and a merge's).
  NumSplits
};
enum class ParamType : uint8_t { Ptr, I32, I64, F32, TensorMap };

/// The byte size of a CUtensorMap and the alignment the driver needs of it.
constexpr uint32_t kTensorMapBytes = 128;
constexpr uint32_t kTensorMapAlign = 64;

/// One kernel parameter, with its place in the packed parameter buffer.
struct Param {
  ParamKind kind = ParamKind::Base;
  ParamType type = ParamType::Ptr;
  uint8_t tensor = 0; ///< A TensorId (not used by scalars).
  /// The captured input (KernelEntry::captures) this parameter is of, or
  /// -1: then `tensor` says which view.
  int8_t capture = -1;
  uint8_t dim = 0;                   ///< For Size and Stride.
  uint16_t boxRows = 0, boxCols = 0; ///< For TensorMap.
  uint16_t swizzle = 0;              ///< For TensorMap: 0, 32, 64 or 128.
  uint32_t offset = 0;
  uint32_t size = 0;
};

/// "128", or "192 (D_v=128)" for a V and O head dim of their own.
inline std::string headDimText(int64_t headDim, int64_t headDimV) {
  return headDimV == headDim ? concat(headDim)
                             : concat(headDim, " (D_v=", headDimV, ")");
}

/// One kernel of the library, as its manifest entry describes it.
struct KernelEntry {
  /// The manifest's "program": an SDPA kernel, or the block mask kernel of
  /// a mask function (every parameter of which is a captured input: the
  /// function's, then seq_q and seq_k, then the block_kinds view), or the
  /// merge of split-KV's partial results ("split_merge": o_partial,
  /// lse_partial, num_splits, o, lse), or one of the backward pass's
  /// kernels ("sdpa_backward", of a `phase`).
  enum class Program : uint8_t { Sdpa, BlockMask, SplitMerge, SdpaBackward };
  Program program = Program::Sdpa;
  /// A backward kernel's phase (ta_sdpa_backward_args): preprocess (delta
  /// and the dQ accumulator zeroed), main (dK, dV, dQ's additions; its
  /// mask and features are the variant's), postprocess (dq) or dq (the
  /// deterministic mode's dq, recomputed per query block; masked as the
  /// main kernel). The order of kBackwardPhaseNames.
  enum class Phase : uint8_t { None, Preprocess, Main, Postprocess, Dq };
  Phase phase = Phase::None;
  /// Whether this backward kernel computes the scores (main or dq): it
  /// masks and caps as its variant says and reads q, k, v, lse and both
  /// sequences' offsets.
  bool computesScores() const { return computesScores(phase); }
  static bool computesScores(Phase phase) {
    return phase == Phase::Main || phase == Phase::Dq;
  }
  std::string name, archText, dtypeText, maskText, symbol, schedule;
  /// kernelVariantName(variant), for ta_kernel_info.variant.
  std::string variantText;
  Arch arch;
  ta_dtype dtype = TA_DTYPE_F16;
  /// Its mask and features (the entry's "causal" and one flag per feature
  /// of KernelVariant.def): a kernel of an Exact feature runs the problems
  /// that ask for it, and only those; one of an Output feature (lse) the
  /// others too (with a view of no rows). Its functions are below.
  KernelVariant variant;
  /// Q's and K's head dim, and V's and O's ("head_dim_v", the same when
  /// absent).
  int32_t headDim = 0, headDimV = 0, blockM = 0, blockN = 0, sharedBytes = 0;
  /// A paged kernel's one page size when smaller than blockN (its key
  /// blocks gathered from several pages), else 0: pages of any multiple of
  /// blockN.
  int32_t pageSize = 0;
  /// Programs along x per block of block_m rows (a split merge kernel's,
  /// one per block of columns); 1 for every other kernel.
  int32_t programsPerRowBlock = 1;
  /// Whether the kernel waits for the grid launched before it on its
  /// stream ("waits_prior_grids": tile.wait_prior_grids), so that it may be
  /// launched as that grid's dependent (a split merge after its split
  /// kernel: programmatic dependent launch).
  bool waitsPriorGrids = false;
  int32_t indexBits = 64, alignBytes = kDefaultAlignBytes;
  /// Whether the kernel reads K/V head h / (H_q / H_kv) for query head h
  /// (grouped KV heads); a library built before it has not.
  bool groupedKv = false;
  /// The score and mask functions ("" without one) and the captured inputs
  /// they read, which the caller gives by name (ta_capture).
  std::string scoreFunction, maskFunction;
  struct Capture {
    std::string name, function;
    ta_capture_type type = TA_CAPTURE_F32;
    int32_t rank = 0; ///< 0: a scalar.
    /// What the view's data pointer and strides (but the last, of 1) must
    /// be multiples of, in bytes: 16 where the kernel copies it in 16-byte
    /// blocks (block loads), else 1.
    int32_t alignBytes = 1;
  };
  std::vector<Capture> captures;
  /// `captures` as the C API shows them (pointing into `captures`).
  std::vector<ta_capture_info> captureInfos;
  uint32_t block[3] = {1, 1, 1};
  /// Paths of the image files: the PTX, and cubins by arch (manifest order).
  std::string ptxPath;
  std::vector<std::pair<Arch, std::string>> cubins;
  std::vector<Param> params;
  /// The packed parameters' extent in bytes.
  uint32_t paramBytes = 0;
  /// Whether a parameter is a TMA descriptor (built by the driver).
  bool hasTensorMap = false;

  /// The image to load on a device of capability `cc`: a cubin built for
  /// exactly that capability (the entry's own arch first), else the PTX.
  /// `isCubin` says which.
  const std::string &imageFor(int ccMajor, int ccMinor, bool &isCubin) const;

  /// "name (arch, dtype, D=64, causal=none)", with its features (",
  /// softcap, lse") before the parenthesis closes, for messages.
  std::string describe() const;
};

/// The checked contents of a kernel library folder.
struct Manifest {
  std::string root;
  std::string path;
  std::string generator;
  std::vector<KernelEntry> kernels;
  /// The block mask kernels ("program": "block_mask"), apart: no SDPA call
  /// selects them.
  std::vector<KernelEntry> blockMasks;
  /// The split merge kernels ("program": "split_merge"), apart too: a
  /// split-KV call runs one after its split kernel (of its dtype and D_v).
  std::vector<KernelEntry> splitMerges;
  /// The backward kernels ("program": "sdpa_backward"), apart: only
  /// ta_sdpa_backward selects them, three per call.
  std::vector<KernelEntry> backward;
};

/// The manifest's names of the backward's phases (KernelEntry::Phase, from
/// Preprocess on), and ta_kernel_info.phase's.
constexpr const char *kBackwardPhaseNames[] = {"preprocess", "main",
                                               "postprocess", "dq"};
inline const char *phaseName(KernelEntry::Phase phase) {
  return phase == KernelEntry::Phase::None
             ? ""
             : kBackwardPhaseNames[static_cast<int>(phase) - 1];
}

/// Reads and checks `<root>/manifest.json` and the files it names. Every
/// failure is a TA_ERROR_LIBRARY naming the manifest, the kernel and the
/// field.
Status readManifest(const std::string &root, Manifest &manifest);

/// Bytes per element of a ta_dtype (both are 16-bit floats).
inline uint32_t itemSize(ta_dtype /*dtype*/) { return 2; }

/// The captured input types' names, as the manifest spells them, in
/// ta_capture_type's order (the reader's "dtype" choices).
inline const std::vector<const char *> &captureTypeNames() {
  static const std::vector<const char *> kNames = {"f32", "i32", "f16", "bf16",
                                                   "i8"};
  return kNames;
}

/// A captured input type's name, as the manifest spells it.
inline const char *captureTypeName(ta_capture_type type) {
  return type >= TA_CAPTURE_F32 && type <= TA_CAPTURE_I8
             ? captureTypeNames()[type]
             : "an unknown type";
}

/// Bytes per element of a captured input's type.
inline uint32_t itemSize(ta_capture_type type) {
  switch (type) {
  case TA_CAPTURE_I8:
    return 1;
  case TA_CAPTURE_F16:
  case TA_CAPTURE_BF16:
    return 2;
  default:
    return 4;
  }
}

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_MANIFEST_H
