//===- Select.cpp - Choosing the kernel for a device ----------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The rules of the Python runtime's KernelLibrary.select: among the kernels
// of the problem's dtype, head dim and mask that run on the device, the one
// of the highest arch wins; at equal arch a kernel of 32-bit index
// arithmetic wins (the library holds one only where it measured faster)
// unless some element offset reaches 2^31; further ties go to the one
// listed first. A kernel name restricts the choice to that entry. The
// library sorts each (dtype, mask, head dim) group once, when it opens, so
// a launch takes the first kernel of its group that fits.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <algorithm>
#include <cstring>

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
  return concat(name, " (", archText, ", ", dtypeText, ", D=", headDim,
                ", causal=", maskText, ")");
}

namespace {

const char *maskName(ta_mask mask) {
  static const char *const names[] = {"none", "top_left", "bottom_right"};
  return names[mask];
}

Status noKernel(const ta_library &library, const Problem &problem, int ccMajor,
                int ccMinor) {
  const ta_sdpa_args &args = *problem.args;
  std::string wanted =
      concat("sm_", ccMajor, ccMinor, ", ",
             args.dtype == TA_DTYPE_F16 ? "f16" : "bf16",
             ", D=", problem.headDim, ", causal=", maskName(args.mask));
  if (args.kernel)
    wanted += concat(", name=", args.kernel);
  if (!problem.index32Ok)
    wanted += ", 64-bit indices (an element offset reaches 2**31)";
  if (problem.kvHeads != problem.heads)
    wanted += concat(", grouped KV heads (H_q=", problem.heads,
                     ", H_kv=", problem.kvHeads,
                     "; a library built before tiled-attn took them has no "
                     "such kernel: rebuild it)");
  std::string available;
  for (const KernelEntry &k : library.manifest.kernels)
    available += concat(available.empty() ? "available: " : "; ", k.describe());
  if (available.empty())
    available = "it holds no kernels";
  return Status::error(TA_ERROR_NO_KERNEL,
                       concat("no kernel in the library for ", wanted,
                              " (library ", library.manifest.root, ": ",
                              available, ")"));
}

bool fits(const KernelEntry &k, const Problem &problem, int ccMajor,
          int ccMinor) {
  const ta_sdpa_args &args = *problem.args;
  return k.dtype == args.dtype && k.mask == args.mask &&
         k.headDim == problem.headDim && k.arch.runsOn(ccMajor, ccMinor) &&
         (problem.index32Ok || k.indexBits == 64) &&
         (k.groupedKv || problem.kvHeads == problem.heads);
}

} // namespace

Status tiled_attn::runtime::selectKernel(const ta_library &library,
                                         const Problem &problem, int ccMajor,
                                         int ccMinor, int32_t &kernel) {
  const std::vector<KernelEntry> &kernels = library.manifest.kernels;
  const ta_sdpa_args &args = *problem.args;
  if (args.kernel) {
    auto named = library.byName.find(std::string_view(args.kernel));
    if (named != library.byName.end() &&
        fits(kernels[named->second], problem, ccMajor, ccMinor)) {
      kernel = named->second;
      return Status();
    }
    return noKernel(library, problem, ccMajor, ccMinor);
  }
  for (const SelectionGroup &group : library.groups) {
    if (group.dtype != args.dtype || group.mask != args.mask ||
        group.headDim != problem.headDim)
      continue;
    for (int32_t candidate : group.kernels)
      if (fits(kernels[candidate], problem, ccMajor, ccMinor)) {
        kernel = candidate;
        return Status();
      }
  }
  return noKernel(library, problem, ccMajor, ccMinor);
}
