//===- Select.cpp - Choosing the kernel for a device ----------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Among the kernels of the problem's dtype, head dim and mask that run on
// the device (and, for a problem without lse, first among those that do
// not write the log-sum-exps: see below), the one of the highest arch wins; at
// equal arch a kernel of 32-bit index arithmetic wins (the library holds one
// only where it measured faster) unless some element offset reaches 2^31;
// further ties go to the one listed first. A kernel name restricts the choice
// to that entry. The library sorts each (dtype, mask, head dim) group once,
// when it opens, so a launch takes the first kernel of its group that fits.
//
// The mask is tried in order (candidateMasks): without a window, the mask
// asked for (the choice made before windows, which at some shapes differs
// from the band's: with S_q == S_k top-left and bottom-right causal are one
// band); the mask of the band the queries see (Window.h); and, unless that
// is no mask at all, a "window" kernel, which computes any band.
//
// The features (KernelVariant.def) a problem asks for: softcap (softcap >
// 0), lse (ta_sdpa_args.lse != 0), varlen (ta_sdpa_args.varlen) and sparse
// (any of a block mask's captured inputs given). A kernel of an Exact
// feature (softcap, varlen, sparse) runs the problems that ask for it and
// only those; one of an Output feature (lse) also the others, after the
// kernels without it (kernelFeaturesFit, kernelExtraOutputs). In detail:
//
// A problem with a softcap (softcap > 0) runs only on kernels compiled with
// it, and one without only on kernels without it: the two never mix. Since
// the compiler builds softcap kernels as "window" kernels, a softcap
// problem may run on one whatever its band, no mask included; the order
// above is kept, so a softcap kernel of the band's own mask, where the
// library has one, comes first.
//
// A problem that asks for the log-sum-exps (lse) runs only on "lse"
// kernels, which the library builds as "window" kernels too: it may run on
// one whatever its band. A problem that does not ask for them prefers, for
// each mask in turn, a kernel without them, then one with them (which is
// given a view of no rows and writes nothing).
//
// A variable-length batch (varlen) runs only on "varlen" kernels, and any
// other problem only on kernels without it; the order above applies, with
// the masks of its band per sequence (Window.h).
//
// A problem that gives a block mask runs only on "sparse" kernels, and any
// other only on kernels without it; among the kernels that fit, the one
// that takes exactly the captured inputs given wins (takesGivenCaptures).
//
// A problem that gives a block table (a paged KV cache) runs only on
// "paged" kernels whose block_n divides its page size, or whose one page
// size (smaller than a block, each block gathered from several pages) it
// is, and any other only on kernels without it.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace tiled_attn;
using namespace tiled_attn::runtime;

bool Arch::parse(const std::string &text, Arch &arch) {
  if (text.size() < 5 || text.compare(0, 3, "sm_") != 0)
    return false;
  size_t end = text.size();
  char suffix = 0;
  if (text.back() == 'a' || text.back() == 'f')
    suffix = text[--end];
  std::string digits = text.substr(3, end - 3);
  if (digits.size() < 2 || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  arch.major = std::stoi(digits.substr(0, digits.size() - 1));
  arch.minor = digits.back() - '0';
  arch.suffix = suffix;
  return true;
}

bool Arch::runsOn(int ccMajor, int ccMinor) const {
  if (suffix == 'a')
    return ccMajor == major && ccMinor == minor;
  if (suffix == 'f')
    return ccMajor == major && ccMinor >= minor;
  return ccMajor > major || (ccMajor == major && ccMinor >= minor);
}

int Arch::sortKey() const {
  int specificity = suffix == 'a' ? 2 : suffix == 'f' ? 1 : 0;
  return (major * 10 + minor) * 4 + specificity;
}

std::string Arch::str() const {
  std::string text = concat("sm_", major, minor);
  if (suffix)
    text += suffix;
  return text;
}

const std::string &KernelEntry::imageFor(int ccMajor, int ccMinor,
                                         bool &isCubin) const {
  const std::string *best = nullptr;
  for (const auto &[cubinArch, path] : cubins) {
    if (cubinArch.major != ccMajor || cubinArch.minor != ccMinor)
      continue;
    if (cubinArch.str() == archText) {
      best = &path;
      break;
    }
    if (!best)
      best = &path;
  }
  isCubin = best != nullptr;
  return best ? *best : ptxPath;
}

std::string KernelEntry::describe() const {
  // (A backward main kernel's lse is the forward's, read: not a feature.)
  KernelVariant features = variant;
  if (program == Program::SdpaBackward)
    features.lse = false;
  return concat(name, " (", archText, ", ", dtypeText,
                ", D=", headDimText(headDim, headDimV), ", causal=", maskText,
                kernelFeaturesText(features),
                phase == Phase::None ? "" : ", ", phaseName(phase), ")");
}

int tiled_attn::runtime::candidateMasks(const Problem &problem, KernelMask masks[3]) {
  const ta_sdpa_args &args = *problem.args;
  int count = 0;
  auto add = [&](KernelMask mask) {
    if (std::find(masks, masks + count, mask) == masks + count)
      masks[count++] = mask;
  };
  // (Packed GQA's rows are one query's: the mask asked for does not apply
  // to them, the band of every key does.)
  if (!args.window.enabled && !problem.packedGqa)
    add(static_cast<KernelMask>(args.mask));
  add(problem.needed);
  if (problem.needed != KernelMask::None || problem.asked.softcap ||
      problem.asked.lse)
    add(KernelMask::Window);
  return count;
}

namespace {

/// "causal=top_left", "causal=none, window_size=(4095, 0) bottom_right".
std::string maskText(const ta_sdpa_args &args) {
  std::string text =
      concat("causal=", kernelMaskName(static_cast<KernelMask>(args.mask)));
  const ta_window &window = args.window;
  if (!window.enabled)
    return text;
  text += concat(", window_size=(", window.left, ", ", window.right, ")");
  if (args.mask == TA_MASK_NONE)
    text += window.bottom_right ? " bottom_right" : " top_left";
  return text;
}

/// ", softcap=50" for a problem with a softcap, else "".
std::string softcapText(const Problem &problem) {
  if (!problem.asked.softcap)
    return "";
  char text[32];
  std::snprintf(text, sizeof(text), "%g",
                static_cast<double>(problem.args->softcap));
  return concat(", softcap=", text);
}

/// ", log-sum-exp" for a problem that asks for it, else "".
std::string lseText(const Problem &problem) {
  return problem.asked.lse ? ", log-sum-exp" : "";
}

/// ", varlen (num_seqs=4, max_seqlen_q=300, max_seqlen_k=300)" for a
/// variable-length batch, else "".
std::string varlenText(const Problem &problem) {
  if (!problem.asked.varlen)
    return "";
  return concat(", varlen (num_seqs=", problem.batch,
                ", max_seqlen_q=", problem.seqQ,
                ", max_seqlen_k=", problem.seqK, ")");
}

/// A library of more kernels than this is summarized in messages, not
/// listed.
constexpr size_t kMaxListedKernels = 16;

/// "sm_80, sm_90a": the archs of the library's kernels, lowest first.
std::string archsText(const ta_library &library) {
  std::vector<const Arch *> archs;
  for (const KernelEntry &k : library.manifest.kernels)
    if (std::none_of(archs.begin(), archs.end(), [&](const Arch *a) {
          return a->sortKey() == k.arch.sortKey();
        }))
      archs.push_back(&k.arch);
  std::sort(archs.begin(), archs.end(), [](const Arch *a, const Arch *b) {
    return a->sortKey() < b->sortKey();
  });
  std::string text;
  for (const Arch *arch : archs)
    text += concat(text.empty() ? "" : ", ", arch->str());
  return text;
}

/// What the library holds, for a message: its kernels, or for a large
/// library a summary; or, where none of its kernels runs on the device at
/// all, the archs it has.
std::string libraryText(const ta_library &library, int ccMajor, int ccMinor) {
  const std::vector<KernelEntry> &kernels = library.manifest.kernels;
  if (kernels.empty())
    return "it holds no kernels";
  if (std::none_of(kernels.begin(), kernels.end(), [&](const KernelEntry &k) {
        return k.arch.runsOn(ccMajor, ccMinor);
      }))
    return concat("none of its kernels runs on a device of compute "
                  "capability ",
                  ccMajor, ".", ccMinor, ": it has kernels for ",
                  archsText(library), " only");
  std::string text;
  if (kernels.size() <= kMaxListedKernels) {
    for (const KernelEntry &k : kernels)
      text += concat(text.empty() ? "available: " : "; ", k.describe());
    return text;
  }
  std::string dtypes, dims;
  for (const char *dtype : {"f16", "bf16"})
    if (std::any_of(kernels.begin(), kernels.end(),
                    [&](const KernelEntry &k) { return k.dtypeText == dtype; }))
      dtypes += concat(dtypes.empty() ? "" : ", ", dtype);
  for (auto [d, dv] : library.headDims)
    dims += concat(dims.empty() ? "" : ", ", headDimText(d, dv));
  return concat(kernels.size(), " kernels for ", archsText(library), "; ",
                dtypes, "; D=", dims, " (ta_library_kernel describes each)");
}

Status noKernel(const ta_library &library, const Problem &problem, int ccMajor,
                int ccMinor) {
  const ta_sdpa_args &args = *problem.args;
  std::string wanted =
      concat("sm_", ccMajor, ccMinor, ", ",
             args.dtype == TA_DTYPE_F16 ? "f16" : "bf16",
             ", D=", headDimText(problem.headDim, problem.headDimV), ", ",
             maskText(args), softcapText(problem), lseText(problem),
             varlenText(problem));
  if (args.score_function)
    wanted += concat(", score_function=", args.score_function);
  if (args.mask_function)
    wanted += concat(", mask_function=", args.mask_function);
  if (args.kernel)
    wanted += concat(", name=", args.kernel);
  if (problem.asked.paged)
    wanted += concat(", page_size=", problem.pageSize,
                     " (paged kernels whose block_n divides it, or of "
                     "that page size)");
  if (!problem.index32Ok)
    wanted += ", 64-bit indices (an element offset reaches 2**31)";
  if (problem.kvHeads != problem.heads)
    wanted += concat(", grouped KV heads (H_q=", problem.heads,
                     ", H_kv=", problem.kvHeads,
                     "; a library built before tiled-attn took them has no "
                     "such kernel: rebuild it)");
  std::string available = libraryText(library, ccMajor, ccMinor);
  // Which masks would do, where that is not just the one named above.
  KernelMask masks[3];
  int count = candidateMasks(problem, masks);
  std::string would;
  if (count > 1 || args.window.enabled || kernelFeatureBits(problem.asked)) {
    for (int i = 0; i < count; ++i) {
      const char *separator = i == 0 ? "" : i + 1 < count ? ", " : " or ";
      would += concat(separator, "causal=", kernelMaskName(masks[i]));
    }
    // ", with softcap and lse": the Exact features and the Output ones
    // asked for.
    std::string features;
    for (const KernelFeature &feature : kKernelFeatures)
      if (problem.asked.*feature.member)
        features +=
            concat(features.empty() ? ", with " : " and ", feature.name);
    would = concat("; a kernel of ", would, features,
                   features.empty() ? "" : ",", " would compute it");
  }
  return Status::error(TA_ERROR_NO_KERNEL,
                       concat("no kernel in the library for ", wanted,
                              " (library ", library.manifest.root, ": ",
                              available, ")", would));
}

/// Whether `k`, of one of the `masks`, computes `problem` on the device.
bool fits(const KernelEntry &k, const Problem &problem, const KernelMask *masks,
          int numMasks, int ccMajor, int ccMinor) {
  const ta_sdpa_args &args = *problem.args;
  return k.dtype == args.dtype &&
         std::find(masks, masks + numMasks, k.variant.mask) !=
             masks + numMasks &&
         k.headDim == problem.headDim && k.headDimV == problem.headDimV &&
         k.arch.runsOn(ccMajor, ccMinor) &&
         (problem.index32Ok || k.indexBits == 64) &&
         (k.groupedKv || problem.kvHeads == problem.heads) &&
         (!problem.asked.paged ||
          (k.pageSize ? problem.pageSize == k.pageSize
                      : problem.pageSize % k.blockN == 0)) &&
         kernelFeaturesFit(k.variant, problem.asked) &&
         k.scoreFunction == (args.score_function ? args.score_function : "") &&
         k.maskFunction == (args.mask_function ? args.mask_function : "");
}

/// Whether the caller gives `k` exactly the captured inputs it takes, by
/// name: among kernels of the same functions, the one that takes the given
/// inputs (a block-sparse kernel takes a block mask's four more).
bool takesGivenCaptures(const KernelEntry &k, const ta_sdpa_args &args) {
  if (args.num_captures != static_cast<int32_t>(k.captures.size()))
    return false;
  return std::all_of(k.captures.begin(), k.captures.end(),
                     [&](const KernelEntry::Capture &capture) {
                       for (int32_t i = 0; i < args.num_captures; ++i)
                         if (args.captures[i].name &&
                             capture.name == args.captures[i].name)
                           return true;
                       return false;
                     });
}

} // namespace

Status tiled_attn::runtime::selectKernel(const ta_library &library,
                                         const Problem &problem, int ccMajor,
                                         int ccMinor, int32_t &kernel) {
  const std::vector<KernelEntry> &kernels = library.manifest.kernels;
  const ta_sdpa_args &args = *problem.args;
  KernelMask masks[3];
  int numMasks = candidateMasks(problem, masks);
  if (args.kernel) {
    auto named = library.byName.find(std::string_view(args.kernel));
    if (named != library.byName.end() &&
        fits(kernels[named->second], problem, masks, numMasks, ccMajor,
             ccMinor)) {
      kernel = named->second;
      return Status();
    }
    return noKernel(library, problem, ccMajor, ccMinor);
  }
  // The kernels of the fewest outputs the call does not ask for first
  // (without lse, those that do not write it). The first kernel that fits
  // and takes the captured inputs given; else the first that fits, whose
  // parameters then name what is missing or extra.
  int32_t firstFit = -1;
  for (int m = 0; m < numMasks; ++m)
    for (int extra = 0; extra <= kNumKernelFeatures; ++extra)
      for (const SelectionGroup &group : library.groups) {
        if (group.dtype != args.dtype || group.variant.mask != masks[m] ||
            !kernelFeaturesFit(group.variant, problem.asked) ||
            kernelExtraOutputs(group.variant, problem.asked) != extra ||
            group.headDim != problem.headDim ||
            group.headDimV != problem.headDimV)
          continue;
        for (int32_t candidate : group.kernels) {
          if (!fits(kernels[candidate], problem, masks + m, 1, ccMajor,
                    ccMinor))
            continue;
          if (takesGivenCaptures(kernels[candidate], args)) {
            kernel = candidate;
            return Status();
          }
          if (firstFit < 0)
            firstFit = candidate;
        }
      }
  if (firstFit >= 0) {
    kernel = firstFit;
    return Status();
  }
  return noKernel(library, problem, ccMajor, ccMinor);
}
