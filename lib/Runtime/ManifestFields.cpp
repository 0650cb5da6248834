//===- ManifestFields.cpp - Manifest fields and kernel parameters ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checked readers of manifest fields, and the "params" list: each
// parameter's kind, tensor, dim and type, and its offset in the packed
// buffer (natural alignment, manifest order; a TMA descriptor 64-byte
// aligned). A "window" kernel, and only it, takes the scalars window_lo and
// window_hi, and if it is also "varlen" window_align; a kernel of
// "softcap": true, and only it, takes the scalar softcap (f32); a kernel of
// "lse": true the view lse, and one of "varlen": true the views
// cu_seqlens_q and cu_seqlens_k, and only those.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

#include <algorithm>
#include <climits>
#include <string_view>

using namespace tiled_attn;
using namespace tiled_attn::runtime;

std::string tiled_attn::runtime::showJson(const Json &value) {
  std::string text = value.dump();
  if (text.size() > 80)
    text = text.substr(0, 77) + "...";
  return text;
}

bool tiled_attn::runtime::readInteger(const Json &value, int64_t minimum,
                                      int64_t maximum, int64_t &out) {
  if (value.is_number_unsigned()) {
    uint64_t number = value.get<uint64_t>();
    if (number > static_cast<uint64_t>(INT64_MAX))
      return false;
    out = static_cast<int64_t>(number);
  } else if (value.is_number_integer()) {
    out = value.get<int64_t>();
  } else {
    return false;
  }
  return out >= minimum && out <= maximum;
}

Status FieldReader::fail(const std::string &key, const std::string &expected,
                         const Json &value) const {
  return libraryError(where_, ": field '", field(key), "' must be ", expected,
                      ", got ", showJson(value));
}

Status FieldReader::missing(const std::string &key) const {
  return libraryError(where_, ": missing field '", field(key), "'");
}

const Json *FieldReader::find(const std::string &key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

Status FieldReader::string(const std::string &key, std::string &out) const {
  const Json *value = find(key);
  if (!value)
    return missing(key);
  if (!value->is_string() || value->get<std::string>().empty())
    return fail(key, "a non-empty string", *value);
  out = value->get<std::string>();
  return Status();
}

Status FieldReader::choice(const std::string &key,
                           const std::vector<const char *> &choices,
                           int &index) const {
  const Json *value = find(key);
  if (!value)
    return missing(key);
  index = 0;
  for (const char *choice : choices) {
    if (value->is_string() && value->get<std::string>() == choice)
      return Status();
    ++index;
  }
  std::string expected = "one of ";
  for (const char *choice : choices)
    expected += concat(choice == choices.front() ? "'" : ", '", choice, "'");
  return fail(key, expected, *value);
}

Status FieldReader::flag(const std::string &key, bool &out) const {
  out = false;
  const Json *value = find(key);
  if (!value)
    return Status();
  if (!value->is_boolean())
    return fail(key, "true or false", *value);
  out = value->get<bool>();
  return Status();
}

Status FieldReader::integer(const std::string &key, int64_t minimum,
                            int64_t maximum, int64_t &out,
                            const int64_t *fallback) const {
  const Json *value = find(key);
  if (!value) {
    if (!fallback)
      return missing(key);
    out = *fallback;
    return Status();
  }
  if (readInteger(*value, minimum, maximum, out))
    return Status();
  if (maximum == INT32_MAX || maximum == INT64_MAX)
    return fail(key, concat("an integer >= ", minimum), *value);
  return fail(key, concat("an integer from ", minimum, " to ", maximum),
              *value);
}

namespace {

constexpr const char *kKinds[] = {"base", "size", "stride", "scalar",
                                  "tensor_map"};

/// The byte size, and alignment, of a parameter of type `type`.
uint32_t paramSize(ParamType type) {
  switch (type) {
  case ParamType::Ptr:
  case ParamType::I64:
    return 8;
  case ParamType::I32:
  case ParamType::F32:
    return 4;
  case ParamType::TensorMap:
    return kTensorMapBytes;
  }
  return 0;
}

/// The name of a window scalar, or num_splits.
const char *scalarName(ParamKind kind) {
  return kind == ParamKind::WindowLo    ? "window_lo"
         : kind == ParamKind::WindowHi  ? "window_hi"
         : kind == ParamKind::NumSplits ? "num_splits"
                                        : "window_align";
}

/// The tensor the parameter names, or which scalar it is, or the captured
/// input.
Status readParamName(const FieldReader &p, const KernelEntry &kernel,
                     Param &param) {
  std::string name;
  TA_RETURN_IF_ERROR(p.string("name", name));
  for (size_t c = 0; c < kernel.captures.size(); ++c) {
    const KernelEntry::Capture &capture = kernel.captures[c];
    if (capture.name != name)
      continue;
    bool scalar = param.kind == ParamKind::Scale;
    // (A captured view read by blocks through TMA: [B|1, H|1, S_q, S_k].)
    bool map = param.kind == ParamKind::TensorMap;
    if (scalar != (capture.rank == 0) || (map && capture.rank != 4))
      return p.fail("kind",
                    capture.rank == 0 ? "'scalar' for a captured scalar"
                    : capture.rank == 4
                        ? "'base', 'size', 'stride' or 'tensor_map' for a "
                          "captured rank-4 view"
                        : "'base', 'size' or 'stride' for a captured view "
                          "of rank below 4",
                    Json(kKinds[static_cast<int>(param.kind)]));
    if (scalar)
      param.kind = ParamKind::CapturedScalar;
    param.capture = static_cast<int8_t>(c);
    return Status();
  }
  if (param.kind == ParamKind::Scale) {
    if (name == "window_lo")
      param.kind = ParamKind::WindowLo;
    else if (name == "window_hi")
      param.kind = ParamKind::WindowHi;
    else if (name == "window_align")
      param.kind = ParamKind::WindowAlign;
    else if (name == "softcap")
      param.kind = ParamKind::Softcap;
    else if (name == "num_splits")
      param.kind = ParamKind::NumSplits;
    else if (name != "scale")
      return p.fail("name",
                    "'scale', 'window_lo', 'window_hi', 'window_align', "
                    "'softcap' or 'num_splits' for kind 'scalar'",
                    name);
    return Status();
  }
  // A split merge kernel's views are its partial results and its outputs;
  // an SDPA kernel's are q, k, v, o and the optional ones; a backward
  // kernel's those of the call and of its gradients (TensorViews.def).
  const bool merge = kernel.program == KernelEntry::Program::SplitMerge;
  const bool backward = kernel.program == KernelEntry::Program::SdpaBackward;
  auto allowed = [&](uint8_t tensor) {
    if (merge)
      return tensor == kO || tensor == kLse || tensor == kOPartial ||
             tensor == kLsePartial;
    if (tensor == kOPartial || tensor == kLsePartial)
      return false;
    const bool ofBackward = tensor >= kDo && tensor <= kDqAccum;
    return backward ? ofBackward || tensor != kSeqUsedK : !ofBackward;
  };
  for (uint8_t tensor = 0; tensor < kNumTensors; ++tensor)
    if (name == kTensorNames[tensor] && allowed(tensor)) {
      param.tensor = tensor;
      return Status();
    }
  return p.fail("name",
                merge ? "one of 'o_partial', 'lse_partial', 'o', 'lse'"
                : backward
                    ? "one of 'q', 'k', 'v', 'o', 'lse', 'cu_seqlens_q', "
                      "'cu_seqlens_k', 'do', 'dq', 'dk', 'dv', 'delta', "
                      "'dq_accum'"
                    : "one of 'q', 'k', 'v', 'o', 'lse', 'cu_seqlens_q', "
                      "'cu_seqlens_k', 'seqused_k'",
                name);
}

Status readParamType(const FieldReader &p, Param &param) {
  std::string type;
  TA_RETURN_IF_ERROR(p.string("type", type));
  switch (param.kind) {
  case ParamKind::Base:
    param.type = ParamType::Ptr;
    return type == "ptr" ? Status()
                         : p.fail("type", "'ptr' for kind 'base'", type);
  case ParamKind::Size:
  case ParamKind::Stride:
    param.type = type == "i64" ? ParamType::I64 : ParamType::I32;
    if (type == "i32" || type == "i64")
      return Status();
    return p.fail("type",
                  concat("'i32' or 'i64' for kind '",
                         kKinds[static_cast<int>(param.kind)], "'"),
                  type);
  case ParamKind::Scale:
    param.type = ParamType::F32;
    return type == "f32" ? Status()
                         : p.fail("type", "'f32' for kind 'scalar'", type);
  case ParamKind::Softcap:
    param.type = ParamType::F32;
    return type == "f32" ? Status()
                         : p.fail("type", "'f32' for scalar 'softcap'", type);
  case ParamKind::CapturedScalar:
    param.type = type == "i32"   ? ParamType::I32
                 : type == "i64" ? ParamType::I64
                                 : ParamType::F32;
    return type == "f32" || type == "i32" || type == "i64"
               ? Status()
               : p.fail("type", "'f32', 'i32' or 'i64' for a captured scalar",
                        type);
  case ParamKind::TensorMap:
    param.type = ParamType::TensorMap;
    return type == "tensor_map"
               ? Status()
               : p.fail("type", "'tensor_map' for kind 'tensor_map'", type);
  case ParamKind::WindowLo:
  case ParamKind::WindowHi:
  case ParamKind::WindowAlign:
  case ParamKind::NumSplits:
    param.type = type == "i64" ? ParamType::I64 : ParamType::I32;
    if (type == "i32" || type == "i64")
      return Status();
    return p.fail(
        "type",
        concat("'i32' or 'i64' for scalar '", scalarName(param.kind), "'"),
        type);
  }
  return Status();
}

/// "box": [rows, cols] and "swizzle" of a TMA descriptor parameter.
Status readTensorMapBox(const FieldReader &p, const KernelEntry &kernel,
                        Param &param) {
  const Json *box = p.find("box");
  if (!box)
    return p.missing("box");
  int64_t rows = 0, cols = 0;
  if (!box->is_array() || box->size() != 2 ||
      !readInteger((*box)[0], 1, 256, rows) ||
      !readInteger((*box)[1], 1, 256, cols))
    return p.fail("box", "[rows, cols], each from 1 to 256", *box);
  const int64_t noSwizzle = 0;
  int64_t swizzle = 0;
  TA_RETURN_IF_ERROR(p.integer("swizzle", 0, 128, swizzle, &noSwizzle));
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return p.fail("swizzle", "0, 32, 64 or 128 (bytes)", swizzle);
  // A captured view's elements are its own type's, the backward's float32
  // workspace's (dq_accum) 4 bytes.
  const KernelEntry::Capture *capture =
      param.capture >= 0 ? &kernel.captures[param.capture] : nullptr;
  const bool f32 = !capture && kTensorBytes[param.tensor] == 4;
  int64_t rowBytes = cols * (capture ? itemSize(capture->type)
                             : f32   ? 4
                                     : itemSize(kernel.dtype));
  const std::string elements =
      capture
          ? concat(captureTypeName(capture->type), " elements of '",
                   capture->name, "'")
          : concat(f32 ? std::string("f32") : kernel.dtypeText, " elements");
  if (rowBytes % 16)
    return p.fail("box",
                  concat("a box whose rows are a multiple of 16 bytes (", cols,
                         " ", elements, " are ", rowBytes, " bytes)"),
                  *box);
  if (swizzle && rowBytes > swizzle)
    return p.fail("box",
                  concat("a box whose rows fit the ", swizzle,
                         "-byte swizzle (", cols, " ", elements, " are ",
                         rowBytes, " bytes)"),
                  *box);
  param.boxRows = static_cast<uint16_t>(rows);
  param.boxCols = static_cast<uint16_t>(cols);
  param.swizzle = static_cast<uint16_t>(swizzle);
  return Status();
}

Status readParam(const FieldReader &p, const KernelEntry &kernel,
                 Param &param) {
  int kind = 0;
  TA_RETURN_IF_ERROR(p.choice(
      "kind", {"base", "size", "stride", "scalar", "tensor_map"}, kind));
  param.kind = static_cast<ParamKind>(kind);
  TA_RETURN_IF_ERROR(readParamName(p, kernel, param));
  TA_RETURN_IF_ERROR(readParamType(p, param));
  if (param.kind == ParamKind::Size || param.kind == ParamKind::Stride) {
    int64_t dim = 0;
    int64_t rank = param.capture >= 0 ? kernel.captures[param.capture].rank : 4;
    TA_RETURN_IF_ERROR(p.integer("dim", 0, rank - 1, dim));
    param.dim = static_cast<uint8_t>(dim);
  }
  if (param.kind == ParamKind::TensorMap)
    TA_RETURN_IF_ERROR(readTensorMapBox(p, kernel, param));
  return Status();
}

/// A "window" kernel takes window_lo and window_hi, and a varlen one
/// window_align; no other kernel takes any of them.
Status checkWindowParams(const FieldReader &entry, const KernelEntry &kernel) {
  const bool window = kernel.variant.mask == KernelMask::Window;
  for (ParamKind kind :
       {ParamKind::WindowLo, ParamKind::WindowHi, ParamKind::WindowAlign}) {
    const char *name = scalarName(kind);
    const bool align = kind == ParamKind::WindowAlign;
    const bool takes = window && (!align || kernel.variant.varlen);
    auto param = std::find_if(kernel.params.begin(), kernel.params.end(),
                              [&](const Param &p) { return p.kind == kind; });
    if (takes && param == kernel.params.end())
      return libraryError(entry.where(), ": a kernel of 'causal' 'window' ",
                          align ? "and 'varlen' true " : "",
                          "takes the scalar '", name,
                          align ? "' (the alignment of its band per sequence)"
                                : "' (the band of diagonals it computes)",
                          ", which field 'params' lacks");
    if (!takes && param != kernel.params.end())
      return libraryError(entry.where(), ": field 'params[",
                          param - kernel.params.begin(), "]' is the scalar '",
                          name, "', which only a kernel of 'causal' 'window' ",
                          align ? "and 'varlen' true " : "",
                          "takes (this one is '", kernel.maskText, "'",
                          align && window ? ", not varlen)" : ")");
  }
  return Status();
}

/// A kernel of "softcap": true takes the scalar softcap; no other kernel
/// takes it.
Status checkSoftcapParam(const FieldReader &entry, const KernelEntry &kernel) {
  auto param =
      std::find_if(kernel.params.begin(), kernel.params.end(),
                   [](const Param &p) { return p.kind == ParamKind::Softcap; });
  if (kernel.variant.softcap && param == kernel.params.end())
    return libraryError(entry.where(), ": a kernel of 'softcap' true takes ",
                        "the scalar 'softcap' (the cap of its scores), which ",
                        "field 'params' lacks");
  if (!kernel.variant.softcap && param != kernel.params.end())
    return libraryError(entry.where(), ": field 'params[",
                        param - kernel.params.begin(),
                        "]' is the scalar 'softcap', which only a kernel of ",
                        "'softcap' true takes (this one's 'softcap' is ",
                        entry.find("softcap") ? "false" : "absent", ")");
  return Status();
}

/// A view only the kernels of one feature take: an argument of a feature
/// of KernelVariant.def that names a tensor of kTensorNames (the features'
/// other arguments are scalars or captured inputs, checked elsewhere).
struct OptionalView {
  TensorId tensor;
  const KernelFeature *feature;
};

/// The optional views, derived from KernelVariant.def's features and their
/// arguments (today: lse's lse, varlen's cu_seqlens_q and cu_seqlens_k,
/// seqused's seqused_k).
const std::vector<OptionalView> &optionalViews() {
  static const std::vector<OptionalView> views = [] {
    std::vector<OptionalView> found;
    for (const KernelFeature &feature : kKernelFeatures) {
      std::string_view arguments = feature.arguments;
      while (!arguments.empty()) {
        size_t end = arguments.find(' ');
        std::string_view argument = arguments.substr(0, end);
        for (uint8_t t = 0; t < kNumTensors; ++t)
          if (argument == kTensorNames[t])
            found.push_back({static_cast<TensorId>(t), &feature});
        arguments = end == std::string_view::npos ? std::string_view()
                                                  : arguments.substr(end + 1);
      }
    }
    return found;
  }();
  return views;
}

/// A kernel whose entry has its feature true takes the view (its base,
/// sizes and strides of dims below its rank, no tensor map); no other
/// kernel takes it.
Status checkOptionalView(const FieldReader &entry, const KernelEntry &kernel,
                         const OptionalView &view) {
  const char *name = kTensorNames[view.tensor];
  const char *flag = view.feature->name;
  const int rank = kTensorRanks[view.tensor];
  const bool takes = kernel.variant.*(view.feature->member);
  bool base = false;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const Param &param = kernel.params[i];
    bool ofView =
        param.tensor == view.tensor &&
        (param.kind == ParamKind::Base || param.kind == ParamKind::Size ||
         param.kind == ParamKind::Stride || param.kind == ParamKind::TensorMap);
    if (!ofView)
      continue;
    if (!takes)
      return libraryError(entry.where(), ": field 'params[", i,
                          "]' belongs to the view '", name,
                          "', which only a kernel of '", flag,
                          "' true takes (this one's '", flag, "' is ",
                          entry.find(flag) ? "false" : "absent", ")");
    if (param.kind == ParamKind::TensorMap ||
        (param.kind != ParamKind::Base && param.dim >= rank))
      return libraryError(
          entry.where(), ": field 'params[", i,
          "]' must be the base, a size or a stride of the rank-", rank,
          " view '", name, "' (",
          rank == 1 ? std::string("dim 0") : concat("dims 0-", rank - 1),
          ", no tensor map)");
    base |= param.kind == ParamKind::Base;
  }
  // (A backward preprocess or postprocess kernel takes what it reads of
  // them: cu_seqlens_q without cu_seqlens_k.)
  const bool backwardSide =
      kernel.program == KernelEntry::Program::SdpaBackward &&
      !kernel.computesScores();
  if (takes && !base && !backwardSide)
    return libraryError(entry.where(), ": a kernel of '", flag,
                        "' true takes the view '", name, "' (",
                        kTensorContents[view.tensor],
                        "), whose base field 'params' lacks");
  return Status();
}

/// The optional views of KernelVariant.def's features.
Status checkOptionalViews(const FieldReader &entry, const KernelEntry &kernel) {
  for (const OptionalView &view : optionalViews())
    TA_RETURN_IF_ERROR(checkOptionalView(entry, kernel, view));
  return Status();
}

} // namespace

Status tiled_attn::runtime::readParams(const FieldReader &entry,
                                       KernelEntry &kernel) {
  const Json *params = entry.find("params");
  if (!params)
    return entry.missing("params");
  if (!params->is_array())
    return entry.fail("params", "a list of parameters", *params);
  if (params->size() > TA_MAX_PARAMS)
    return libraryError(entry.where(), ": field 'params' must hold at most ",
                        TA_MAX_PARAMS, " parameters, got ", params->size());
  uint32_t offset = 0;
  for (size_t i = 0; i < params->size(); ++i) {
    const Json &raw = (*params)[i];
    std::string prefix = concat("params[", i, "].");
    if (!raw.is_object())
      return entry.fail(concat("params[", i, "]"), "an object", raw);
    Param param;
    TA_RETURN_IF_ERROR(
        readParam(FieldReader(raw, entry.where(), prefix), kernel, param));
    param.size = paramSize(param.type);
    uint32_t align =
        param.type == ParamType::TensorMap ? kTensorMapAlign : param.size;
    param.offset = (offset + align - 1) / align * align;
    offset = param.offset + param.size;
    if (offset > TA_MAX_PARAM_BYTES)
      return libraryError(entry.where(), ": field 'params' must pack into ",
                          TA_MAX_PARAM_BYTES, " bytes, but params[", i,
                          "] ends at byte ", offset);
    kernel.hasTensorMap |= param.type == ParamType::TensorMap;
    kernel.params.push_back(param);
  }
  kernel.paramBytes = offset;
  // Every captured input reaches the kernel: its base, or its scalar.
  for (size_t c = 0; c < kernel.captures.size(); ++c)
    if (std::none_of(kernel.params.begin(), kernel.params.end(),
                     [&](const Param &param) {
                       return param.capture == static_cast<int8_t>(c) &&
                              (param.kind == ParamKind::Base ||
                               param.kind == ParamKind::CapturedScalar);
                     }))
      return libraryError(entry.where(), ": the captured input '",
                          kernel.captures[c].name,
                          "' has no parameter in field 'params'");
  // A split merge kernel's views and scalar: readSplitMergeEntry's.
  const bool merge = kernel.program == KernelEntry::Program::SplitMerge;
  const bool takesSplits = merge || kernel.variant.split;
  auto splits = std::find_if(
      kernel.params.begin(), kernel.params.end(),
      [](const Param &p) { return p.kind == ParamKind::NumSplits; });
  if (takesSplits != (splits != kernel.params.end()))
    return libraryError(
        entry.where(),
        takesSplits ? ": a split-KV kernel ('split': true) or a split merge "
                      "kernel takes the scalar 'num_splits', which field "
                      "'params' lacks"
                    : concat(": field 'params[", splits - kernel.params.begin(),
                             "]' is the scalar 'num_splits', which only a "
                             "split-KV kernel ('split': true) or a split "
                             "merge kernel takes"));
  if (merge)
    return Status();
  TA_RETURN_IF_ERROR(checkWindowParams(entry, kernel));
  TA_RETURN_IF_ERROR(checkOptionalViews(entry, kernel));
  TA_RETURN_IF_ERROR(checkSoftcapParam(entry, kernel));
  // A split-KV kernel's o and lse are the partial results (Manifest.h).
  if (kernel.variant.split) {
    if (!kernel.variant.lse)
      return libraryError(entry.where(), ": a split-KV kernel ('split': "
                                         "true) writes log-sum-exps: 'lse' "
                                         "must be true");
    for (Param &param : kernel.params) {
      // The partial results are f32, which the tensor maps (of the call's
      // dtype) do not describe.
      if (param.capture < 0 && param.tensor == kO &&
          param.kind == ParamKind::TensorMap)
        return libraryError(entry.where(), ": a split-KV kernel writes its "
                                           "f32 partial output without a "
                                           "tensor map of 'o'");
      if (param.capture < 0 && (param.tensor == kO || param.tensor == kLse) &&
          (param.kind == ParamKind::Base || param.kind == ParamKind::Size ||
           param.kind == ParamKind::Stride ||
           param.kind == ParamKind::TensorMap))
        param.tensor = param.tensor == kO ? kOPartial : kLsePartial;
    }
  }
  return Status();
}
