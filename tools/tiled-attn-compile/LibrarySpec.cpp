//===- LibrarySpec.cpp - The kernels of the library, as data --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "LibrarySpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
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

StringRef tiled_attn::kernelMaskName(const KernelSpec &kernel) {
  return kernel.window ? "window" : kernel.causal ? "top_left" : "none";
}

Error tiled_attn::finalizeKernelSpec(KernelSpec &kernel) {
  auto fail = [&](const Twine &message) {
    return specError(kernel.origin, message);
  };
  if (kernel.dtype != "f16" && kernel.dtype != "bf16")
    return fail("dtype must be f16 or bf16, got '" + kernel.dtype + "'");
  if (kernel.headDim < 1 || kernel.blockM < 1 || kernel.blockN < 1)
    return fail("head dim, block_m and block_n must be positive");
  if (kernel.headDimV < 0 || kernel.headDimV == kernel.headDim)
    return fail("head_dim_v must be positive and differ from the head dim (" +
                Twine(kernel.headDim) + "), or be left out; got " +
                Twine(kernel.headDimV));
  if (kernel.causal && kernel.window)
    return fail("a window kernel takes its band of diagonals at run time, "
                "causal masks of either alignment included; give causal or "
                "window, not both");

  kernel.scheduleOptions = std::make_unique<TileScheduleOptions>();
  if (auto problem = parseOptions(kernel.schedule, *kernel.scheduleOptions))
    return fail("schedule \"" + kernel.schedule + "\": " + *problem);
  kernel.loweringOptions = std::make_unique<TileToPTXOptions>();
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
       "_" + kernelMaskName(kernel) + (kernel.softcap ? "_softcap" : "") +
       (kernel.lse ? "_lse" : "") + (kernel.varlen ? "_varlen" : "") +
       (lowering.indexBitwidth == 32 ? "_index32" : ""))
          .str();
  return Error::success();
}

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

/// The kernels of one entry of the spec's "kernels" list, finalized.
static Expected<std::vector<KernelSpec>> expandEntry(const json::Value &value,
                                                     const std::string &where) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return specError(where, "expected an object, got " +
                                llvm::formatv("{0}", value).str());
  FieldReader fields(*object, where);
  fields.allowOnly({"dtypes", "head_dims", "head_dim_v", "causal", "window",
                    "softcap", "lse", "varlen", "block_m", "block_n",
                    "schedule", "lowering", "cubins", "why"});
  std::vector<std::string> dtypes = fields.strings("dtypes", true);
  std::vector<int64_t> headDims = fields.integers("head_dims");
  int64_t headDimV =
      object->get("head_dim_v") ? fields.integer("head_dim_v") : 0;
  bool causal = fields.boolean("causal");
  bool window = object->get("window") && fields.boolean("window");
  bool softcap = object->get("softcap") && fields.boolean("softcap");
  bool lse = object->get("lse") && fields.boolean("lse");
  bool varlen = object->get("varlen") && fields.boolean("varlen");
  int64_t blockM = fields.integer("block_m");
  int64_t blockN = fields.integer("block_n");
  std::string schedule = fields.string("schedule", false);
  std::string lowering = fields.string("lowering", true);
  std::vector<std::string> cubins = fields.strings("cubins", false);
  (void)fields.string("why", true);
  if (Error error = fields.takeError())
    return std::move(error);

  std::vector<KernelSpec> kernels;
  for (const std::string &dtype : dtypes) {
    for (int64_t headDim : headDims) {
      KernelSpec kernel;
      kernel.origin = where;
      kernel.dtype = dtype;
      kernel.headDim = headDim;
      kernel.headDimV = headDimV;
      kernel.causal = causal;
      kernel.window = window;
      kernel.softcap = softcap;
      kernel.lse = lse;
      kernel.varlen = varlen;
      kernel.blockM = blockM;
      kernel.blockN = blockN;
      kernel.schedule = schedule;
      kernel.lowering = lowering;
      kernel.cubins = cubins;
      if (Error error = finalizeKernelSpec(kernel))
        return std::move(error);
      // The spec is the library's record: it names the chip of every
      // kernel rather than relying on tile-to-ptx's default.
      if (!kernel.loweringOptions->chip.hasValue())
        return specError(where, "lowering \"" + lowering +
                                    "\" does not name the chip (chip=...)");
      kernels.push_back(std::move(kernel));
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
  FieldReader fields(*top, path.str());
  fields.allowOnly({"version", "about", "kernels"});
  int64_t version = fields.integer("version");
  if (Error error = fields.takeError())
    return std::move(error);
  if (version != 1)
    return specError(path, "unsupported version " + Twine(version) +
                               " (this tool reads version 1)");
  const json::Array *entries = top->getArray("kernels");
  if (!entries || entries->empty())
    return specError(path, "'kernels' must be a non-empty list of entries");

  std::vector<KernelSpec> kernels;
  llvm::StringMap<std::string> origins;
  for (auto [index, entry] : llvm::enumerate(*entries)) {
    std::string where = (path + ": kernels[" + Twine(index) + "]").str();
    Expected<std::vector<KernelSpec>> expanded = expandEntry(entry, where);
    if (!expanded)
      return expanded.takeError();
    for (KernelSpec &kernel : *expanded) {
      auto [it, inserted] = origins.try_emplace(kernel.name, where);
      if (!inserted)
        return specError(where, "kernel " + kernel.name + " is also given by " +
                                    it->second);
      kernels.push_back(std::move(kernel));
    }
  }
  return kernels;
}
