//===- LibrarySpec.h - The kernels of the library, as data ------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A kernel of the library is what it computes (the generator's
// configuration), how (the option strings of the `tile-schedule` and
// `tile-to-ptx` pipelines) and the chips to assemble cubins for. The
// library's spec, kernels/library.json, is a matrix of named configurations,
// each built for each of its head dims, variants and dtypes:
//
//   {"version": 2, "about": "...", "dtypes": ["f16", "bf16"],
//    "configurations": [
//      {"name": "sm80-d128-heavy-first", "head_dims": [128, [192, 128]],
//       "variants": ["top_left", "window_lse", "window_softcap_lse"],
//       "block_m": 128, "block_n": 64,
//       "schedule": "exp2=1 mask-split=1 heavy-first=1",
//       "lowering": "chip=sm_80 warps=4 smem-lhs=1",
//       "cubins": ["sm_80", "sm_90"]}]}
//
// A head dim is D or [D, D_v] (V and O of another head dim); a variant is
// KernelVariant.def's <mask>[_feature...][+function...] (a `window` kernel
// takes the band of diagonals each query sees at run time, see #tile.sdpa); a
// configuration may name its own "dtypes". Version 1, a list of "kernels"
// each of one mask with its flags, is still read. The lowering names the
// chip of the PTX; a kernel's name follows from its configuration and
// lowering: sdpa_fwd_<chip>_<dtype>_d<D>[v<D_v>]_<variant>[_index32].
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TOOLS_TILED_ATTN_COMPILE_LIBRARYSPEC_H
#define TILED_ATTN_TOOLS_TILED_ATTN_COMPILE_LIBRARYSPEC_H

#include "tiled_attn/Kernels/KernelVariant.h"
#include "tiled_attn/Pipelines/Pipelines.h"

#include "llvm/Support/Error.h"

#include "tiled_attn/Kernels/SdpaBackwardKernel.h"

#include <memory>
#include <string>
#include <vector>

namespace tiled_attn {

/// One kernel of the library.
/// What a kernel of the library is: an SDPA forward kernel
/// (tile-generate-sdpa's), or the block mask kernel of a mask function
/// (tile-generate-block-mask's), or the merge of split-KV's partial results
/// for one output dtype and D_v (tile-generate-split-merge's): the
/// manifest's "program".
/// Or a kernel of the SDPA backward pass (tile-generate-sdpa-backward's):
/// its preprocess, main or postprocess kernel.
enum class KernelProgram { Sdpa, BlockMask, SplitMerge, SdpaBackward };

/// The manifest's name of `program`: "sdpa", "block_mask", "split_merge" or
/// "sdpa_backward".
llvm::StringRef kernelProgramName(KernelProgram program);

struct KernelSpec {
  KernelProgram program = KernelProgram::Sdpa;
  /// A backward kernel's phase (its mask is variant.mask).
  SdpaBackwardPhase backwardPhase = SdpaBackwardPhase::Main;
  /// Where it was described, for messages: "kernels/library.json:
  /// configuration 'sm80-d64'" or "the command line".
  std::string origin;
  /// The spec's configuration it comes from; empty for the command line.
  std::string configuration;
  /// Why the configuration's kernels are accepted though ptxas reports
  /// spill stores (its "spills"); empty: a kernel of a spec that spills is
  /// refused (the command line's are not checked).
  std::string acceptedSpills;
  /// sdpa_fwd_<chip>_<dtype>_d<D>[v<D_v>]_<variant, '+' as '_'>[_index32],
  /// set by finalizeKernelSpec.
  std::string name;
  /// The generator's configuration.
  std::string dtype = "f16";
  int64_t headDim = 64;
  /// The head dim of V and O where it differs from headDim; 0 is headDim.
  int64_t headDimV = 0;
  /// What it computes (KernelVariant.def): its mask, features and score
  /// and mask functions, each function the one of that name in
  /// `functionsDir`/<name>.mlir (a variant names them after '+':
  /// none+alibi, top_left+document; at most one of each kind).
  KernelVariant variant;
  /// Where the functions' files are: the `functions` folder next to the
  /// spec (kernels/functions for the library's).
  std::string functionsDir;
  int64_t blockM = 64;
  int64_t blockN = 64;
  /// A paged kernel's one page size, smaller than blockN (its key blocks
  /// gathered from blockN / pageSize pages), or 0: any multiple of blockN.
  int64_t pageSize = 0;
  /// Options of tile-schedule and of tile-to-ptx, as written.
  std::string schedule;
  std::string lowering;
  /// Chips to assemble cubins for from the PTX.
  std::vector<std::string> cubins;
  /// `schedule` and `lowering`, parsed by finalizeKernelSpec (shared, so
  /// that a spec's kernels are copies of their configuration's).
  std::shared_ptr<TileScheduleOptions> scheduleOptions;
  std::shared_ptr<TileToPTXOptions> loweringOptions;
};

/// Parses the option strings of `kernel`, checks its configuration, chip,
/// index width and cubin chips, and names it. The error names
/// `kernel.origin` and the problem.
llvm::Error finalizeKernelSpec(KernelSpec &kernel);

/// One line that holds everything the kernel's PTX, cubins and manifest
/// entry are made from: its name, what it computes, its blocks, its
/// schedule and lowering as the options they parse to (every option, in a
/// fixed order, so that two spellings of one schedule read the same) and
/// its cubin chips. Two kernels of equal descriptions compile to the same
/// files; tiled-attn-compile --describe prints it, and a kernel's inputs
/// hash is taken over it.
std::string describeKernel(const KernelSpec &kernel);

/// The file of one of the kernel's functions: <functionsDir>/<name>.mlir.
std::string functionPath(const KernelSpec &kernel, llvm::StringRef function);

/// Keeps the kernels that `targets` select: each target is a chip (every
/// kernel whose PTX is for it), a chip and a variant ("sm_100a:top_left"),
/// or "all". The error names a target that selects no kernel.
llvm::Expected<std::vector<KernelSpec>>
selectTargets(std::vector<KernelSpec> kernels,
              llvm::ArrayRef<std::string> targets);

/// Reads a library spec and expands its entries into finalized kernels.
/// The error names the file, the entry and the problem: malformed JSON, an
/// unknown or missing key, a value of the wrong type, a bad option string,
/// an unsupported chip, two entries giving one kernel.
llvm::Expected<std::vector<KernelSpec>> readLibrarySpec(llvm::StringRef path);

} // namespace tiled_attn

#endif // TILED_ATTN_TOOLS_TILED_ATTN_COMPILE_LIBRARYSPEC_H
