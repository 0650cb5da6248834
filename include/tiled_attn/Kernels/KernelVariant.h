//===- KernelVariant.h - What a kernel computes -----------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What a kernel computes, as the compiler and the runtime both name it: its
// mask, its features and its score and mask functions, from the one
// declaration in KernelVariant.def. Standard C++ only: the runtime, which
// has no LLVM, compiles KernelVariant.cpp too.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_KERNELS_KERNELVARIANT_H
#define TILED_ATTN_KERNELS_KERNELVARIANT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tiled_attn {

/// Which keys a query sees (KernelVariant.def's masks).
enum class KernelMask : uint8_t {
#define TILED_ATTN_KERNEL_MASK(enumerator, name) enumerator,
#include "tiled_attn/Kernels/KernelVariant.def"
};

inline constexpr const char *kKernelMaskNames[] = {
#define TILED_ATTN_KERNEL_MASK(enumerator, name) name,
#include "tiled_attn/Kernels/KernelVariant.def"
};

inline const char *kernelMaskName(KernelMask mask) {
  return kKernelMaskNames[static_cast<int>(mask)];
}

/// The mask of that name, if any.
std::optional<KernelMask> parseKernelMask(std::string_view name);

/// A kernel's features (KernelVariant.def), one flag each: what
/// `#tile.sdpa` carries as its `features`, and what a KernelVariant has
/// besides its mask and functions.
struct KernelFeatures {
#define TILED_ATTN_KERNEL_FEATURE(member, name, use, arguments, summary)       \
  bool member = false;
#include "tiled_attn/Kernels/KernelVariant.def"

  bool operator==(const KernelFeatures &other) const {
    bool same = true;
#define TILED_ATTN_KERNEL_FEATURE(member, name, use, arguments, summary)       \
  same &= member == other.member;
#include "tiled_attn/Kernels/KernelVariant.def"
    return same;
  }
  bool operator!=(const KernelFeatures &other) const {
    return !(*this == other);
  }
};

/// What a kernel computes: a mask, features (KernelVariant.def), and score
/// and mask functions by name (each the func.func of that name in the
/// library's functions/<name>.mlir; which is which, their results say).
struct KernelVariant : KernelFeatures {
  KernelMask mask = KernelMask::None;
  std::vector<std::string> functions;

  bool operator==(const KernelVariant &other) const;
  bool operator!=(const KernelVariant &other) const {
    return !(*this == other);
  }
};

/// How a call's wish for a feature meets the kernels that have it.
enum class FeatureUse : uint8_t {
  /// A kernel with it runs the calls that ask for it, and only those.
  Exact,
  /// An output: a kernel with it also runs the calls that do not ask for
  /// it, after the kernels without it.
  Output,
};

/// One feature of KernelVariant.def.
struct KernelFeature {
  /// The variant's suffix _<name> and the manifest's key.
  const char *name;
  bool KernelFeatures::*member;
  FeatureUse use;
  /// The kernel arguments it adds, space-separated, by the names the caller
  /// binds them by.
  const char *arguments;
  const char *summary;
};

inline constexpr KernelFeature kKernelFeatures[] = {
#define TILED_ATTN_KERNEL_FEATURE(member, name, use, arguments, summary)       \
  {name, &KernelVariant::member, FeatureUse::use, arguments, summary},
#include "tiled_attn/Kernels/KernelVariant.def"
};
inline constexpr int kNumKernelFeatures =
    sizeof(kKernelFeatures) / sizeof(kKernelFeatures[0]);

/// The block size of a block-sparse kernel's block mask, in queries and
/// keys (FlexAttention's default BLOCK_SIZE).
inline constexpr int64_t kBlockMaskSize = 128;

/// The function the manifest names as a block mask's captured inputs' (it is
/// no tile-dialect function's).
inline constexpr const char kBlockMaskFunction[] = "block_mask";

/// The PTX entry point of a block mask kernel (tile-generate-block-mask's,
/// the manifest's "program": "block_mask"), which classifies the
/// kBlockMaskSize blocks of a mask function's mask.
inline constexpr const char kBlockMaskSymbol[] = "block_mask";
/// The symbol of a split merge kernel (tile-generate-split-merge's, in the
/// library).
inline constexpr const char kSplitMergeSymbol[] = "split_merge";
/// The backward pass's main kernel's symbol (the others add _preprocess and
/// _postprocess: sdpaBackwardSymbol).
inline constexpr const char kSdpaBackwardSymbol[] = "sdpa_bwd";

/// The captured inputs of a block-sparse kernel (the `sparse` feature), in
/// argument order: the names the caller gives them by (FlexAttention's
/// BlockMask fields), as KernelVariant.def's `sparse` lists them
/// (test/Runtime/VariantTest.cpp compares).
inline constexpr const char *kBlockMaskArguments[] = {
    "kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices"};

/// The captured input that holds a `paged` kernel's block table (the page of
/// each batch entry's keys, vLLM's and FlashAttention's block_table), as
/// KernelVariant.def's `paged` names it (test/Runtime/VariantTest.cpp
/// compares).
inline constexpr const char *kBlockTableArgument = "block_table";

/// What parseKernelVariant reads, for messages and --help:
/// "<none|top_left|bottom_right|window>[_softcap]...[+function...]".
std::string kernelVariantGrammar();

/// The variant a name spells, or nothing if `name` is not one: the mask,
/// the features present in KernelVariant.def's order, then distinct
/// function names (C identifiers) after '+'.
std::optional<KernelVariant> parseKernelVariant(std::string_view name);

/// The name parseKernelVariant reads back: "window_softcap_lse+alibi".
std::string kernelVariantName(const KernelVariant &variant);

/// The features as bits: bit i for kKernelFeatures[i] (the order of
/// ta_kernel_info.features and of a variant's suffixes).
inline uint32_t kernelFeatureBits(const KernelFeatures &features) {
  uint32_t bits = 0;
  for (int i = 0; i < kNumKernelFeatures; ++i)
    if (features.*kKernelFeatures[i].member)
      bits |= uint32_t(1) << i;
  return bits;
}

/// ", softcap, lse": the features present, for messages.
std::string kernelFeaturesText(const KernelVariant &variant);

/// Whether a kernel of features `kernel` runs a call that asks for the
/// features of `asked` (each Exact feature equal; an Output feature the
/// call asks for, present). Masks and functions are not compared.
bool kernelFeaturesFit(const KernelVariant &kernel, const KernelVariant &asked);

/// The Output features `kernel` has and `asked` does not ask for: among
/// the kernels that fit, fewer is better.
int kernelExtraOutputs(const KernelVariant &kernel, const KernelVariant &asked);

} // namespace tiled_attn

#endif // TILED_ATTN_KERNELS_KERNELVARIANT_H
