//===- LibrarySpec.cpp - The kernels of the library, as data --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "LibrarySpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace tiled_attn;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;
namespace json = llvm::json;

static Error specError(const Twine &where, const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 (where + ": " + message).str());
}

/// Parses `text` into `options`; on failure, the option parser's message
/// (it prints the ones about a bad value to stderr itself).
template <typename OptionsT>
static std::optional<std::string> parseOptions(StringRef text,
                                               OptionsT &options) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (succeeded(options.parseFromString(text, os)))
    return std::nullopt;
  StringRef problem = StringRef(message).trim();
  problem.consume_front("<Pass-Options-Parser>: ");
  if (problem.empty())
    return std::string("bad option value (see the message above)");
  return problem.str();
}

/// Every option of `options` with its value, in the options' own order.
template <typename OptionsT>
static std::string canonicalOptions(const OptionsT &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  options.print(os);
  return text;
}

StringRef tiled_attn::kernelProgramName(KernelProgram program) {
  switch (program) {
  case KernelProgram::BlockMask:
    return "block_mask";
  case KernelProgram::SplitMerge:
    return "split_merge";
  case KernelProgram::SdpaBackward:
    return "sdpa_backward";
  case KernelProgram::Sdpa:
    break;
  }
  return "sdpa";
}

std::string tiled_attn::functionPath(const KernelSpec &kernel,
                                     StringRef function) {
  llvm::SmallString<128> path(kernel.functionsDir);
  llvm::sys::path::append(path, function + ".mlir");
  return std::string(path);
}

std::string tiled_attn::describeKernel(const KernelSpec &kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (kernel.program == KernelProgram::SplitMerge)
    os << kernel.name << ": program=split_merge dtype=" << kernel.dtype
       << " head_dim_v=" << kernel.headDimV << " block_m=" << kernel.blockM
       << " lowering=" << canonicalOptions(*kernel.loweringOptions)
       << " cubins=" << llvm::join(kernel.cubins, ",");
  else if (kernel.program == KernelProgram::SdpaBackward)
    os << kernel.name << ": program=sdpa_backward phase="
       << sdpaBackwardPhaseName(kernel.backwardPhase)
       << " dtype=" << kernel.dtype << " head_dim=" << kernel.headDim
       << " head_dim_v=" << (kernel.headDimV ? kernel.headDimV : kernel.headDim)
       << " variant=" << kernelVariantName(kernel.variant)
       << " block_m=" << kernel.blockM << " block_n="
       << kernel.blockN
       // (Its loops' prefetch, where a configuration asks for one.)
       << (kernel.schedule.empty()
               ? std::string()
               : " schedule=" + canonicalOptions(*kernel.scheduleOptions))
       << " lowering=" << canonicalOptions(*kernel.loweringOptions)
       << " cubins=" << llvm::join(kernel.cubins, ",");
  else if (kernel.program == KernelProgram::BlockMask)
    os << kernel.name << ": program=block_mask"
       << " lowering=" << canonicalOptions(*kernel.loweringOptions)
       << " cubins=" << llvm::join(kernel.cubins, ",");
  else
    os << kernel.name << ": dtype=" << kernel.dtype
       << " head_dim=" << kernel.headDim
       << " head_dim_v=" << (kernel.headDimV ? kernel.headDimV : kernel.headDim)
       << " variant=" << kernelVariantName(kernel.variant)
       << " block_m=" << kernel.blockM << " block_n=" << kernel.blockN
       << (kernel.pageSize ? " page_size=" + std::to_string(kernel.pageSize)
                           : std::string())
       << " schedule=" << canonicalOptions(*kernel.scheduleOptions)
       << " lowering=" << canonicalOptions(*kernel.loweringOptions)
       << " cubins=" << llvm::join(kernel.cubins, ",");
  // A function's text is part of what the kernel is made from.
  for (const std::string &function : kernel.variant.functions) {
    auto file = llvm::MemoryBuffer::getFile(functionPath(kernel, function));
    os << " function=" << function << ":"
       << (file ? llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(
                                  (*file)->getBuffer())),
                              /*LowerCase=*/true)
                : std::string("unreadable"));
  }
  return text;
}

/// The chip of the kernel's PTX.
static StringRef kernelChip(const KernelSpec &kernel) {
  return kernel.loweringOptions->chip;
}

Expected<std::vector<KernelSpec>>
tiled_attn::selectTargets(std::vector<KernelSpec> kernels,
                          llvm::ArrayRef<std::string> targets) {
  if (targets.empty() || llvm::is_contained(targets, "all"))
    return kernels;
  // A split merge kernel's "variant" is split_merge (it computes none).
  auto selects = [](StringRef target, const KernelSpec &kernel) {
    auto [chip, variant] = target.split(':');
    std::string name = kernel.program == KernelProgram::SplitMerge
                           ? std::string("split_merge")
                       : kernel.program == KernelProgram::SdpaBackward
                           ? std::string("sdpa_backward")
                           : kernelVariantName(kernel.variant);
    return kernelChip(kernel) == chip && (variant.empty() || name == variant);
  };
  for (StringRef target : targets)
    if (llvm::none_of(kernels, [&](const KernelSpec &kernel) {
          return selects(target, kernel);
        })) {
      llvm::SmallVector<StringRef> chips;
      for (const KernelSpec &kernel : kernels)
        if (!llvm::is_contained(chips, kernelChip(kernel)))
          chips.push_back(kernelChip(kernel));
      return llvm::createStringError(
          "target '" + target +
          "' selects no kernel (a target is all, a chip or chip:variant; the "
          "kernels' chips are " +
          llvm::join(chips, ", ") + " and a variant is " +
          kernelVariantGrammar() + ", split_merge or sdpa_backward)");
    }
  std::vector<KernelSpec> chosen;
  for (KernelSpec &kernel : kernels)
    if (llvm::any_of(targets, [&](const std::string &target) {
          return selects(target, kernel);
        }))
      chosen.push_back(std::move(kernel));
  return chosen;
}

/// A kernel lowered as built, with no schedule (a block mask or split merge
/// kernel's): default schedule options, its lowering parsed and verified,
/// its cubins' chip names checked.
static Error finalizeUnscheduledLowering(KernelSpec &kernel) {
  auto fail = [&](const Twine &message) {
    return specError(kernel.origin, message);
  };
  kernel.scheduleOptions = std::make_shared<TileScheduleOptions>();
  kernel.loweringOptions = std::make_shared<TileToPTXOptions>();
  if (auto problem = parseOptions(kernel.lowering, *kernel.loweringOptions))
    return fail("lowering \"" + kernel.lowering + "\": " + *problem);
  if (Error error = kernel.loweringOptions->verify())
    return fail("lowering \"" + kernel.lowering +
                "\": " + llvm::toString(std::move(error)));
  llvm::Regex chipName("^sm_[0-9]+[af]?$");
  for (const std::string &cubin : kernel.cubins)
    if (!chipName.match(cubin))
      return fail("cubin chip '" + cubin +
                  "' is not a chip name such as sm_80 or sm_120a");
  return Error::success();
}

/// A block mask kernel: its lowering and cubins, and its name,
/// block_mask_<chip>_<function>.
static Error finalizeBlockMaskSpec(KernelSpec &kernel) {
  auto fail = [&](const Twine &message) {
    return specError(kernel.origin, message);
  };
  if (kernel.variant.mask != KernelMask::None ||
      kernelFeaturesText(kernel.variant) != "" ||
      kernel.variant.functions.size() != 1)
    return fail("a block mask kernel is of one mask function, got " +
                kernelVariantName(kernel.variant));
  if (!kernel.schedule.empty())
    return fail("a block mask kernel takes no schedule, got \"" +
                kernel.schedule + "\"");
  if (Error error = finalizeUnscheduledLowering(kernel))
    return error;
  kernel.name = "block_mask_" + std::string(kernel.loweringOptions->chip) +
                "_" + kernel.variant.functions.front();
  return Error::success();
}

/// A split merge kernel: its dtype, D_v, rows per program, lowering and
/// cubins, and its name, split_merge_<chip>_<dtype>_dv<D_v>.
static Error finalizeSplitMergeSpec(KernelSpec &kernel) {
  auto fail = [&](const Twine &message) {
    return specError(kernel.origin, message);
  };
  if (kernel.dtype != "f16" && kernel.dtype != "bf16")
    return fail("dtype must be f16 or bf16, got '" + kernel.dtype + "'");
  if (kernel.headDimV < 8 || kernel.headDimV > 256 || kernel.headDimV % 8)
    return fail("a split merge kernel's head dim (D_v) is a multiple of 8 "
                "from 8 to 256, got " +
                Twine(kernel.headDimV));
  if (kernel.blockM < 16 || kernel.blockM > 256 || kernel.blockM % 16)
    return fail("a split merge kernel's block_m is a multiple of 16 from 16 "
                "to 256, got " +
                Twine(kernel.blockM));
  kernel.headDim = kernel.headDimV;
  if (Error error = finalizeUnscheduledLowering(kernel))
    return error;
  kernel.name = "split_merge_" + std::string(kernel.loweringOptions->chip) +
                "_" + kernel.dtype + "_dv" + std::to_string(kernel.headDimV);
  return Error::success();
}

/// A backward kernel: its dtype, head dims, variant (a mask, with or
/// without _softcap) and blocks, its lowering and cubins, and its name,
/// sdpa_bwd_<chip>_<dtype>_d<D>[v<D_v>] followed by _<variant> for the main
/// kernel, _<variant>_dq for the dq kernel and by _preprocess or
/// _postprocess (no variant: they do not depend on it) for the others.
static Error finalizeSdpaBackwardSpec(KernelSpec &kernel) {
  auto fail = [&](const Twine &message) {
    return specError(kernel.origin, message);
  };
  if (kernel.dtype != "f16" && kernel.dtype != "bf16")
    return fail("dtype must be f16 or bf16, got '" + kernel.dtype + "'");
  KernelVariant plain = kernel.variant;
  plain.softcap = plain.varlen = false;
  plain.functions.clear();
  if (kernelFeaturesText(plain) != "")
    return fail("a backward kernel's variant is a mask (none, top_left, "
                "bottom_right, window) with or without _softcap and _varlen, "
                "and score and mask functions after '+', got " +
                kernelVariantName(kernel.variant));
  if (Error error = finalizeUnscheduledLowering(kernel))
    return error;
  // The backward's schedule is exp2, its loops' software pipelining and
  // the order of their products (the other schedule passes transform the
  // forward's online softmax).
  for (StringRef option : llvm::split(StringRef(kernel.schedule), ' ')) {
    StringRef key = option.split('=').first;
    if (!key.empty() && !llvm::is_contained(kTileBackwardScheduleOptions, key))
      return fail(
          "a backward kernel's schedule takes " +
          llvm::join(llvm::ArrayRef(kTileBackwardScheduleOptions), ", ") +
          " (exp2, its loops' prefetch and products), got '" + key + "' in \"" + kernel.schedule +
          "\"");
  }
  if (auto problem = parseOptions(kernel.schedule, *kernel.scheduleOptions))
    return fail("schedule \"" + kernel.schedule + "\": " + *problem);
  if (Error error = kernel.scheduleOptions->verify())
    return fail("schedule \"" + kernel.schedule +
                "\": " + llvm::toString(std::move(error)));
  std::string dims = "d" + std::to_string(kernel.headDim);
  if (kernel.headDimV && kernel.headDimV != kernel.headDim)
    dims += "v" + std::to_string(kernel.headDimV);
  // (none+alibi: ..._none_alibi, as the forward's.)
  std::string variant =
      llvm::join(llvm::split(kernelVariantName(kernel.variant), '+'), "_");
  std::string suffix =
      kernel.backwardPhase == SdpaBackwardPhase::Main ? variant
      : kernel.backwardPhase == SdpaBackwardPhase::Dq
          ? variant + "_dq"
          : (kernel.variant.varlen ? "varlen_" : "") +
                sdpaBackwardPhaseName(kernel.backwardPhase).str();
  kernel.name = "sdpa_bwd_" + std::string(kernel.loweringOptions->chip) + "_" +
                kernel.dtype + "_" + dims + "_" + suffix;
  return Error::success();
}

Error tiled_attn::finalizeKernelSpec(KernelSpec &kernel) {
  if (kernel.program == KernelProgram::SdpaBackward)
    return finalizeSdpaBackwardSpec(kernel);
  if (kernel.program == KernelProgram::BlockMask)
    return finalizeBlockMaskSpec(kernel);
  if (kernel.program == KernelProgram::SplitMerge)
    return finalizeSplitMergeSpec(kernel);
  auto fail = [&](const Twine &message) {
    return specError(kernel.origin, message);
  };
  if (kernel.dtype != "f16" && kernel.dtype != "bf16")
    return fail("dtype must be f16 or bf16, got '" + kernel.dtype + "'");
  if (kernel.headDim < 1 || kernel.blockM < 1 || kernel.blockN < 1)
    return fail("head dim, block_m and block_n must be positive");
  if (kernel.pageSize &&
      (!kernel.variant.paged || kernel.pageSize < 8 || kernel.pageSize % 8 ||
       kernel.pageSize >= kernel.blockN || kernel.blockN % kernel.pageSize))
    return fail("page_size " + Twine(kernel.pageSize) +
                " needs a paged variant and a multiple of 8 that divides "
                "block_n (" +
                Twine(kernel.blockN) + ") and is smaller");
  if (kernel.headDimV < 0 || kernel.headDimV == kernel.headDim)
    return fail("head_dim_v must be positive and differ from the head dim (" +
                Twine(kernel.headDim) + "), or be left out; got " +
                Twine(kernel.headDimV));

  if (kernel.variant.sparse &&
      (kernel.variant.mask != KernelMask::None || kernel.variant.varlen))
    return fail("variant " + kernelVariantName(kernel.variant) +
                ": a block-sparse kernel takes no causal or window mask (its "
                "mask function and block mask say which keys each query "
                "sees) and no varlen");

  kernel.scheduleOptions = std::make_shared<TileScheduleOptions>();
  if (auto problem = parseOptions(kernel.schedule, *kernel.scheduleOptions))
    return fail("schedule \"" + kernel.schedule + "\": " + *problem);
  kernel.loweringOptions = std::make_shared<TileToPTXOptions>();
  if (auto problem = parseOptions(kernel.lowering, *kernel.loweringOptions))
    return fail("lowering \"" + kernel.lowering + "\": " + *problem);
  if (Error error = kernel.scheduleOptions->verify())
    return fail("schedule \"" + kernel.schedule +
                "\": " + llvm::toString(std::move(error)));
  if (Error error = kernel.loweringOptions->verify())
    return fail("lowering \"" + kernel.lowering +
                "\": " + llvm::toString(std::move(error)));
  const TileToPTXOptions &lowering = *kernel.loweringOptions;
  llvm::Regex chipName("^sm_[0-9]+[af]?$");
  for (const std::string &cubin : kernel.cubins)
    if (!chipName.match(cubin))
      return fail("cubin chip '" + cubin +
                  "' is not a chip name such as sm_80 or sm_120a");

  kernel.name =
      ("sdpa_fwd_" + lowering.chip + "_" + kernel.dtype + "_d" +
       Twine(kernel.headDim) +
       (kernel.headDimV ? "v" + std::to_string(kernel.headDimV)
                        : std::string()) +
       "_" +
       llvm::join(llvm::split(kernelVariantName(kernel.variant), '+'), "_") +
       (lowering.indexBitwidth == 32 ? "_index32" : "") +
       // A paged kernel takes the page sizes its block_n divides (or its
       // one page size, smaller than a block): the library may hold
       // several.
       (kernel.variant.paged ? "_bn" + std::to_string(kernel.blockN)
                             : std::string()) +
       (kernel.pageSize ? "_p" + std::to_string(kernel.pageSize)
                        : std::string()))
          .str();
  return Error::success();
}

namespace {
/// What a version-2 spec's top level gives every configuration: the
/// dtypes (unless a configuration names its own) and the named variant
/// lists that a configuration's "variants" splices in as "@NAME".
struct SpecDefaults {
  std::vector<std::string> dtypes;
  llvm::StringMap<std::vector<std::string>> variantLists;
};
} // namespace

namespace {
/// Typed access to the keys of one JSON object; the first problem, naming
/// the object and the key, is kept for takeError.
class FieldReader {
public:
  FieldReader(const json::Object &object, std::string where)
      : object(object), where(std::move(where)) {}

  /// Fails on any key not in `known`.
  void allowOnly(llvm::ArrayRef<StringRef> known) {
    for (const auto &entry : object)
      if (!llvm::is_contained(known, StringRef(entry.first)))
        fail("unknown key '" + entry.first.str() +
             "' (known: " + llvm::join(known, ", ") + ")");
  }

  bool has(StringRef key) const { return object.get(key) != nullptr; }

  std::string string(StringRef key, bool nonEmpty) {
    if (const json::Value *value = get(key)) {
      std::optional<StringRef> s = value->getAsString();
      if (s && (!nonEmpty || !s->trim().empty()))
        return s->str();
      mistyped(key, nonEmpty ? "a non-empty string" : "a string", *value);
    }
    return "";
  }

  int64_t integer(StringRef key) {
    if (const json::Value *value = get(key)) {
      if (std::optional<int64_t> i = value->getAsInteger())
        return *i;
      mistyped(key, "an integer", *value);
    }
    return 0;
  }

  bool boolean(StringRef key) {
    if (const json::Value *value = get(key)) {
      if (std::optional<bool> b = value->getAsBoolean())
        return *b;
      mistyped(key, "true or false", *value);
    }
    return false;
  }

  std::vector<std::string> strings(StringRef key, bool nonEmpty) {
    std::vector<std::string> result;
    if (const json::Array *array = list(key, nonEmpty, "strings")) {
      for (const json::Value &item : *array) {
        std::optional<StringRef> s = item.getAsString();
        if (!s) {
          mistyped(key, "a list of strings", *object.get(key));
          break;
        }
        result.push_back(s->str());
      }
    }
    return result;
  }

  /// A non-empty list of variants, where an item "@NAME" stands for the
  /// spec's variant list NAME (its top-level "variant_lists"), spliced in.
  std::vector<std::string>
  variants(StringRef key,
           const llvm::StringMap<std::vector<std::string>> &lists) {
    std::vector<std::string> result;
    for (std::string &item : strings(key, /*nonEmpty=*/true)) {
      if (!StringRef(item).starts_with("@")) {
        result.push_back(std::move(item));
        continue;
      }
      auto it = lists.find(StringRef(item).drop_front());
      if (it == lists.end()) {
        std::vector<std::string> known;
        for (const auto &entry : lists)
          known.push_back(entry.first().str());
        llvm::sort(known);
        fail("'" + key + "' names the variant list '" + item +
             "', which the spec's 'variant_lists' does not hold (it holds: " +
             (known.empty() ? std::string("none") : llvm::join(known, ", ")) +
             ")");
        break;
      }
      llvm::append_range(result, it->second);
    }
    return result;
  }

  std::vector<int64_t> integers(StringRef key) {
    std::vector<int64_t> result;
    if (const json::Array *array = list(key, /*nonEmpty=*/true, "integers")) {
      for (const json::Value &item : *array) {
        std::optional<int64_t> i = item.getAsInteger();
        if (!i) {
          mistyped(key, "a non-empty list of integers", *object.get(key));
          break;
        }
        result.push_back(*i);
      }
    }
    return result;
  }

  /// A non-empty list of head dims, each D or [D, D_v]; D_v is 0 where
  /// it is D.
  std::vector<std::pair<int64_t, int64_t>> headDims(StringRef key) {
    std::vector<std::pair<int64_t, int64_t>> result;
    const json::Array *array = list(key, /*nonEmpty=*/true, "head dims");
    for (const json::Value &item : array ? *array : json::Array()) {
      std::optional<int64_t> d = item.getAsInteger(), dv = 0;
      if (const json::Array *pair = item.getAsArray()) {
        if (pair->size() == 2) {
          d = (*pair)[0].getAsInteger();
          dv = (*pair)[1].getAsInteger();
        }
      }
      if (!d || !dv) {
        mistyped(key, "a non-empty list of head dims, each D or [D, D_v]",
                 *object.get(key));
        break;
      }
      result.push_back({*d, *dv});
    }
    return result;
  }

  Error takeError() {
    return problem ? specError(where, *problem) : Error::success();
  }

private:
  const json::Value *get(StringRef key) {
    const json::Value *value = object.get(key);
    if (!value)
      fail("missing key '" + key + "'");
    return value;
  }

  const json::Array *list(StringRef key, bool nonEmpty, StringRef what) {
    const json::Value *value = get(key);
    if (!value)
      return nullptr;
    const json::Array *array = value->getAsArray();
    if (!array || (nonEmpty && array->empty())) {
      mistyped(key, (nonEmpty ? "a non-empty list of " : "a list of ") + what,
               *value);
      return nullptr;
    }
    return array;
  }

  void mistyped(StringRef key, const Twine &expected,
                const json::Value &value) {
    fail("'" + key + "' must be " + expected + ", got " +
         llvm::formatv("{0}", value).str());
  }

  void fail(const Twine &message) {
    if (!problem)
      problem = message.str();
  }

  const json::Object &object;
  std::string where;
  std::optional<std::string> problem;
};
} // namespace

/// Finalizes a kernel of the spec, which must name its chip.
static Error finalizeSpecKernel(KernelSpec &kernel) {
  if (Error error = finalizeKernelSpec(kernel))
    return error;
  // The spec is the library's record: it names the chip of every kernel
  // rather than relying on tile-to-ptx's default.
  if (!kernel.loweringOptions->chip.hasValue())
    return specError(kernel.origin, "lowering \"" + kernel.lowering +
                                        "\" does not name the chip (chip=...)");
  return Error::success();
}

/// The kernel of `base`'s configuration and variant of `dtype` and head
/// dims (`headDim`, `headDimV`), finalized.
static Expected<KernelSpec> specKernel(const KernelSpec &base,
                                       const std::string &dtype,
                                       int64_t headDim, int64_t headDimV) {
  KernelSpec kernel = base;
  kernel.dtype = dtype;
  kernel.headDim = headDim;
  kernel.headDimV = headDimV;
  if (Error error = finalizeSpecKernel(kernel))
    return std::move(error);
  return kernel;
}

/// The kernels of one entry of a version-1 spec's "kernels" list: one per
/// dtype and head dim, of the entry's mask and flags, finalized.
static Expected<std::vector<KernelSpec>> expandEntry(const json::Value &value,
                                                     const std::string &where) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return specError(where, "expected an object, got " +
                                llvm::formatv("{0}", value).str());
  FieldReader fields(*object, where);
  llvm::SmallVector<StringRef> known = {
      "dtypes",  "head_dims", "head_dim_v", "causal", "window", "block_m",
      "block_n", "schedule",  "lowering",   "cubins", "why"};
  for (const KernelFeature &feature : kKernelFeatures)
    known.push_back(feature.name);
  fields.allowOnly(known);
  KernelSpec base;
  base.origin = where;
  std::vector<std::string> dtypes = fields.strings("dtypes", true);
  std::vector<int64_t> headDims = fields.integers("head_dims");
  base.headDimV = object->get("head_dim_v") ? fields.integer("head_dim_v") : 0;
  bool causal = fields.boolean("causal");
  bool window = object->get("window") && fields.boolean("window");
  if (causal && window)
    return specError(where, "a window kernel takes its band of diagonals at "
                            "run time, causal masks of either alignment "
                            "included; give causal or window, not both");
  base.variant.mask = window   ? KernelMask::Window
                      : causal ? KernelMask::TopLeft
                               : KernelMask::None;
  for (const KernelFeature &feature : kKernelFeatures)
    base.variant.*feature.member =
        object->get(feature.name) && fields.boolean(feature.name);
  base.blockM = fields.integer("block_m");
  base.blockN = fields.integer("block_n");
  base.schedule = fields.string("schedule", false);
  base.lowering = fields.string("lowering", true);
  base.cubins = fields.strings("cubins", false);
  (void)fields.string("why", true);
  if (Error error = fields.takeError())
    return std::move(error);

  std::vector<KernelSpec> kernels;
  for (const std::string &dtype : dtypes) {
    for (int64_t headDim : headDims) {
      Expected<KernelSpec> kernel =
          specKernel(base, dtype, headDim, base.headDimV);
      if (!kernel)
        return kernel.takeError();
      kernels.push_back(std::move(*kernel));
    }
  }
  return kernels;
}

/// Checks a configuration's name (lower-case letters, digits and dashes, one
/// configuration each) and records it.
static Error checkConfigurationName(const std::string &name,
                                    const std::string &where,
                                    llvm::StringMap<std::string> &names) {
  if (!llvm::Regex("^[a-z0-9][a-z0-9-]*$").match(name))
    return specError(where, "configuration name '" + name +
                                "' must be lower-case letters, digits and "
                                "dashes");
  auto [previous, inserted] = names.try_emplace(name, where);
  if (!inserted)
    return specError(where, "configuration '" + name +
                                "' is also the name of " + previous->second);
  return Error::success();
}

/// The end of reading a configuration, the same for every program: its
/// "lowering" and "cubins" into `base`, the first error of its fields, its
/// name checked (`checkConfigurationName`), and `base`'s origin and
/// configuration set from the name.
static Error finishConfiguration(
    FieldReader &fields, const std::string &name, const std::string &where,
    llvm::StringMap<std::string> &configurationNames, KernelSpec &base) {
  base.lowering = fields.string("lowering", true);
  base.cubins = fields.strings("cubins", false);
  // "spills": why its kernels may spill (a spec's kernel that spills is
  // refused otherwise).
  if (fields.has("spills"))
    base.acceptedSpills = fields.string("spills", true);
  if (Error error = fields.takeError())
    return error;
  if (Error error = checkConfigurationName(name, where, configurationNames))
    return error;
  base.origin = where + " ('" + name + "')";
  base.configuration = name;
  return Error::success();
}

/// The kernels of a configuration of block mask kernels ("program":
/// "block_mask"): one per mask function, each lowered as `lowering` says.
static Expected<std::vector<KernelSpec>>
expandBlockMasks(const json::Object &object, const std::string &where,
                 llvm::StringMap<std::string> &configurationNames) {
  FieldReader fields(object, where);
  fields.allowOnly(
      {"name", "program", "functions", "lowering", "cubins", "spills"});
  std::string name = fields.string("name", true);
  std::string program = fields.string("program", true);
  std::vector<std::string> functions = fields.strings("functions", true);
  KernelSpec base;
  base.program = KernelProgram::BlockMask;
  base.lowering = fields.string("lowering", true);
  base.cubins = fields.strings("cubins", false);
  if (fields.has("spills"))
    base.acceptedSpills = fields.string("spills", true);
  if (Error error = fields.takeError())
    return std::move(error);
  if (program != "block_mask")
    return specError(where, "program must be block_mask (or left out for "
                            "SDPA kernels), got '" +
                                program + "'");
  if (Error error = checkConfigurationName(name, where, configurationNames))
    return std::move(error);
  base.origin = where + " ('" + name + "')";
  base.configuration = name;
  std::vector<KernelSpec> kernels;
  for (const std::string &function : functions) {
    KernelSpec kernel = base;
    kernel.variant.functions = {function};
    if (Error error = finalizeSpecKernel(kernel))
      return std::move(error);
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

/// The kernels of a configuration of split merge kernels ("program":
/// "split_merge"): one per dtype and D_v ("head_dims_v"), each of block_m
/// rows per program, lowered as `lowering` says.
static Expected<std::vector<KernelSpec>>
expandSplitMerges(const json::Object &object, const std::string &where,
                  const SpecDefaults &specDefaults,
                  llvm::StringMap<std::string> &configurationNames) {
  FieldReader fields(object, where);
  fields.allowOnly({"name", "program", "dtypes", "head_dims_v", "block_m",
                    "lowering", "cubins", "spills"});
  std::string name = fields.string("name", true);
  std::vector<std::string> dtypes = object.get("dtypes")
                                        ? fields.strings("dtypes", true)
                                        : specDefaults.dtypes;
  std::vector<std::pair<int64_t, int64_t>> headDims =
      fields.headDims("head_dims_v");
  KernelSpec base;
  base.program = KernelProgram::SplitMerge;
  base.blockM = fields.integer("block_m");
  if (Error error =
          finishConfiguration(fields, name, where, configurationNames, base))
    return std::move(error);
  std::vector<KernelSpec> kernels;
  for (auto [headDim, headDimV] : headDims)
    for (const std::string &dtype : dtypes) {
      if (headDimV != 0)
        return specError(base.origin, "head_dims_v lists single head dims "
                                      "(D_v), got a pair");
      KernelSpec kernel = base;
      kernel.dtype = dtype;
      kernel.headDimV = headDim;
      if (Error error = finalizeSpecKernel(kernel))
        return std::move(error);
      kernels.push_back(std::move(kernel));
    }
  return kernels;
}

/// The kernels of a configuration of the backward pass ("program":
/// "sdpa_backward"): per dtype and head dims, a preprocess and a
/// postprocess kernel (and their varlen forms where a variant is varlen),
/// and a main kernel per variant (a mask with or without _softcap and
/// _varlen), then with "deterministic" a dq kernel per variant, each of
/// block_m query rows and block_n keys, lowered as `lowering` says; with
/// "phases", only the kernels of those phases (another configuration makes
/// the others: a main kernel on two warpgroups beside preprocess and
/// postprocess kernels of one).
static Expected<std::vector<KernelSpec>>
expandSdpaBackward(const json::Object &object, const std::string &where,
                   const SpecDefaults &specDefaults,
                   llvm::StringMap<std::string> &configurationNames) {
  FieldReader fields(object, where);
  fields.allowOnly({"name", "program", "dtypes", "head_dims", "variants",
                    "deterministic", "phases", "block_m", "block_n", "schedule",
                    "lowering", "cubins", "spills"});
  std::string name = fields.string("name", true);
  std::vector<std::string> dtypes = object.get("dtypes")
                                        ? fields.strings("dtypes", true)
                                        : specDefaults.dtypes;
  std::vector<std::pair<int64_t, int64_t>> headDims =
      fields.headDims("head_dims");
  std::vector<std::string> variants =
      fields.variants("variants", specDefaults.variantLists);
  // "deterministic": a dq kernel per variant too (the deterministic mode's).
  const bool deterministic =
      object.get("deterministic") && fields.boolean("deterministic");
  // "phases": the phases whose kernels it makes (default: every one).
  static constexpr SdpaBackwardPhase kPhases[] = {
      SdpaBackwardPhase::Preprocess, SdpaBackwardPhase::Postprocess,
      SdpaBackwardPhase::Main, SdpaBackwardPhase::Dq};
  llvm::SmallVector<SdpaBackwardPhase, 4> phases(std::begin(kPhases),
                                                 std::end(kPhases));
  if (object.get("phases")) {
    phases.clear();
    for (const std::string &text : fields.strings("phases", true)) {
      const SdpaBackwardPhase *known =
          llvm::find_if(kPhases, [&](SdpaBackwardPhase p) {
            return sdpaBackwardPhaseName(p) == text;
          });
      if (known == std::end(kPhases) || llvm::is_contained(phases, *known))
        return specError(where, "'phases' lists each of preprocess, "
                                "postprocess, main and dq at most once, got '" +
                                    text + "'");
      phases.push_back(*known);
    }
    if (llvm::is_contained(phases, SdpaBackwardPhase::Dq) && !deterministic)
      return specError(where, "'phases' lists dq, which only a "
                              "\"deterministic\" configuration makes");
  }
  auto makes = [&](SdpaBackwardPhase phase) {
    return llvm::is_contained(phases, phase);
  };
  KernelSpec base;
  base.program = KernelProgram::SdpaBackward;
  base.blockM = fields.integer("block_m");
  base.blockN = fields.integer("block_n");
  // (Optional: no schedule, loops as built.)
  if (object.get("schedule"))
    base.schedule = fields.string("schedule", false);
  if (Error error =
          finishConfiguration(fields, name, where, configurationNames, base))
    return std::move(error);
  std::vector<KernelSpec> kernels;
  auto add = [&](KernelSpec kernel) -> Error {
    if (Error error = finalizeSpecKernel(kernel))
      return error;
    kernels.push_back(std::move(kernel));
    return Error::success();
  };
  for (auto [headDim, headDimV] : headDims)
    for (const std::string &dtype : dtypes) {
      KernelSpec kernel = base;
      kernel.dtype = dtype;
      kernel.headDim = headDim;
      kernel.headDimV = headDimV;
      // The preprocess and postprocess of the packed layout too where a
      // variant is varlen (they read cu_seqlens_q).
      std::vector<KernelVariant> parsedVariants;
      bool packed = false, padded = false;
      for (const std::string &variant : variants) {
        std::optional<KernelVariant> parsed = parseKernelVariant(variant);
        if (!parsed)
          return specError(base.origin, "variant '" + variant + "' is not " +
                                            kernelVariantGrammar());
        (parsed->varlen ? packed : padded) = true;
        parsedVariants.push_back(*parsed);
      }
      for (bool varlen : {false, true}) {
        if (!(varlen ? packed : padded))
          continue;
        for (SdpaBackwardPhase phase :
             {SdpaBackwardPhase::Preprocess, SdpaBackwardPhase::Postprocess}) {
          if (!makes(phase))
            continue;
          kernel.variant = KernelVariant();
          kernel.variant.varlen = varlen;
          kernel.backwardPhase = phase;
          if (Error error = add(kernel))
            return std::move(error);
        }
      }
      for (SdpaBackwardPhase phase :
           {SdpaBackwardPhase::Main, SdpaBackwardPhase::Dq}) {
        if ((phase == SdpaBackwardPhase::Dq && !deterministic) || !makes(phase))
          continue;
        for (const KernelVariant &variant : parsedVariants) {
          kernel.variant = variant;
          kernel.backwardPhase = phase;
          if (Error error = add(kernel))
            return std::move(error);
        }
      }
    }
  return kernels;
}

/// The kernels of one configuration of a version-2 spec: one per head dim,
/// variant and dtype, in that order, finalized.
static Expected<std::vector<KernelSpec>>
expandConfiguration(const json::Value &value, const std::string &where,
                    const SpecDefaults &specDefaults,
                    llvm::StringMap<std::string> &configurationNames) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return specError(where, "expected an object, got " +
                                llvm::formatv("{0}", value).str());
  if (auto program = object->getString("program");
      program && *program == "split_merge")
    return expandSplitMerges(*object, where, specDefaults, configurationNames);
  if (auto program = object->getString("program");
      program && *program == "sdpa_backward")
    return expandSdpaBackward(*object, where, specDefaults, configurationNames);
  if (object->get("program"))
    return expandBlockMasks(*object, where, configurationNames);
  FieldReader fields(*object, where);
  fields.allowOnly({"name", "dtypes", "head_dims", "variants", "block_m",
                    "block_n", "page_size", "schedule", "lowering", "cubins",
                    "spills"});
  std::string name = fields.string("name", true);
  std::vector<std::string> dtypes = object->get("dtypes")
                                        ? fields.strings("dtypes", true)
                                        : specDefaults.dtypes;
  std::vector<std::pair<int64_t, int64_t>> headDims =
      fields.headDims("head_dims");
  std::vector<std::string> variants =
      fields.variants("variants", specDefaults.variantLists);
  KernelSpec base;
  base.blockM = fields.integer("block_m");
  base.blockN = fields.integer("block_n");
  base.pageSize = object->get("page_size") ? fields.integer("page_size") : 0;
  base.schedule = fields.string("schedule", false);
  if (Error error =
          finishConfiguration(fields, name, where, configurationNames, base))
    return std::move(error);

  std::vector<KernelSpec> kernels;
  for (auto [headDim, headDimV] : headDims) {
    for (const std::string &variant : variants) {
      std::optional<KernelVariant> parsed = parseKernelVariant(variant);
      if (!parsed)
        return specError(base.origin, "variant '" + variant + "' is not " +
                                          kernelVariantGrammar());
      base.variant = std::move(*parsed);
      for (const std::string &dtype : dtypes) {
        Expected<KernelSpec> kernel =
            specKernel(base, dtype, headDim, headDimV);
        if (!kernel)
          return kernel.takeError();
        kernels.push_back(std::move(*kernel));
      }
    }
  }
  return kernels;
}

Expected<std::vector<KernelSpec>> tiled_attn::readLibrarySpec(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return specError(path, "cannot read it: " + buffer.getError().message());
  Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed)
    return specError(path,
                     "not valid JSON: " + llvm::toString(parsed.takeError()));
  const json::Object *top = parsed->getAsObject();
  if (!top)
    return specError(path, "expected a JSON object at the top");
  int64_t version = top->getInteger("version").value_or(0);
  if (top->get("version") && version != 1 && version != 2)
    return specError(path, "unsupported version " +
                               llvm::formatv("{0}", *top->get("version")) +
                               " (this tool reads versions 1 and 2)");
  FieldReader fields(*top, path.str());
  if (version == 2)
    fields.allowOnly(
        {"version", "about", "dtypes", "variant_lists", "configurations"});
  else
    fields.allowOnly({"version", "about", "kernels"});
  (void)fields.integer("version");
  SpecDefaults defaults;
  if (version == 2)
    defaults.dtypes = fields.strings("dtypes", true);
  if (Error error = fields.takeError())
    return std::move(error);
  // "variant_lists": named lists of variants, each a non-empty list of
  // variants (not of other lists' names).
  if (const json::Value *lists =
          version == 2 ? top->get("variant_lists") : nullptr) {
    const json::Object *object = lists->getAsObject();
    if (!object)
      return specError(path, "'variant_lists' must be an object of named "
                             "lists of variants, got " +
                                 llvm::formatv("{0}", *lists).str());
    FieldReader listFields(*object, (path + ": variant_lists").str());
    for (const auto &entry : *object) {
      std::vector<std::string> variants =
          listFields.strings(entry.first, /*nonEmpty=*/true);
      if (Error error = listFields.takeError())
        return std::move(error);
      for (const std::string &variant : variants)
        if (StringRef(variant).starts_with("@"))
          return specError(path, "variant_lists: '" + entry.first.str() +
                                     "' names another list ('" + variant +
                                     "'); a list holds variants only");
      defaults.variantLists[entry.first] = std::move(variants);
    }
  }
  StringRef listKey = version == 2 ? "configurations" : "kernels";
  const json::Array *entries = top->getArray(listKey);
  if (!entries || entries->empty())
    return specError(path, "'" + listKey + "' must be a non-empty list");

  std::vector<KernelSpec> kernels;
  llvm::StringMap<std::string> origins, configurationNames;
  for (auto [index, entry] : llvm::enumerate(*entries)) {
    std::string where =
        (path + ": " + listKey + "[" + Twine(index) + "]").str();
    Expected<std::vector<KernelSpec>> expanded =
        version == 2
            ? expandConfiguration(entry, where, defaults, configurationNames)
            : expandEntry(entry, where);
    if (!expanded)
      return expanded.takeError();
    // The functions' files live in `functions/` next to the spec.
    llvm::SmallString<128> functionsDir = llvm::sys::path::parent_path(path);
    llvm::sys::path::append(functionsDir, "functions");
    for (KernelSpec &kernel : *expanded) {
      kernel.functionsDir = std::string(functionsDir);
      for (const std::string &function : kernel.variant.functions)
        if (!llvm::sys::fs::exists(functionPath(kernel, function)))
          return specError(kernel.origin, "function '" + function +
                                              "' has no file " +
                                              functionPath(kernel, function));
      auto [it, inserted] = origins.try_emplace(kernel.name, kernel.origin);
      if (!inserted)
        return specError(kernel.origin, "kernel " + kernel.name +
                                            " is also given by " + it->second);
      kernels.push_back(std::move(kernel));
    }
  }
  return kernels;
}
