//===- Manifest.cpp - Reading and checking manifest.json ------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <sys/stat.h>

using namespace tiled_attn;
using namespace tiled_attn::runtime;

namespace {

bool isDirectory(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool isFile(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool isEmptyFile(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && info.st_size == 0;
}

/// The canonical absolute path of an existing file or folder, or "".
std::string realPath(const std::string &path) {
  char *resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved)
    return "";
  std::string result(resolved);
  std::free(resolved);
  return result;
}

/// How deep the manifest's JSON may nest.
constexpr int kMaxJsonDepth = 64;

std::string howToBuild() {
  return concat("build the kernels or set ", kKernelsEnv,
                " to a folder holding ", kManifestName);
}

/// The manifest's top-level object.
Status readJson(const Manifest &manifest, Json &data) {
  if (!isDirectory(manifest.root))
    return libraryError("no kernel library at ", manifest.root,
                        ": the folder does not exist; ", howToBuild());
  if (!isFile(manifest.path))
    return libraryError("no kernel library at ", manifest.root, ": ",
                        kManifestName, " is missing; ", howToBuild());
  std::ifstream file(manifest.path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file)
    return libraryError("cannot read ", manifest.path, ": ",
                        std::strerror(errno));
  // A manifest nests 6 levels deep (kernels, an entry, its params, one
  // parameter, its box). Much deeper JSON is refused while it is parsed:
  // the parser's ordered objects copy their values, by recursion, as they
  // grow, which a value nested a million levels deep would overflow the
  // stack with.
  struct TooDeep {};
  try {
    data = Json::parse(text.str(), [](int depth, Json::parse_event_t, Json &) {
      if (depth > kMaxJsonDepth)
        throw TooDeep();
      return true;
    });
  } catch (const TooDeep &) {
    return libraryError(manifest.path, " is not a manifest: its JSON nests ",
                        "more than ", kMaxJsonDepth, " levels deep");
  } catch (const Json::exception &error) {
    // "[json.exception.parse_error.101] parse error at line 3, ...".
    std::string what = error.what();
    size_t bracket = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
      what = what.substr(bracket + 2);
    return libraryError(manifest.path, " is not valid JSON: ", what);
  }
  if (!data.is_object())
    return libraryError(manifest.path, ": expected a JSON object at the top, ",
                        "got ", data.type_name());
  return Status();
}

Status readVersion(const Manifest &manifest, const Json &data) {
  auto version = data.find("version");
  int64_t number = 0;
  if (version != data.end() && readInteger(*version, 1, 1, number))
    return libraryError(
        manifest.path, ": manifest version 1 (kernel ABI ",
        "memref-descriptor-v1) is no longer supported; this runtime reads ",
        "version ", kManifestVersion, " (ABI ", kAbi,
        "): rebuild the kernel library with this version of ",
        "tiled-attn-compile (scripts/build_kernels.sh)");
  if (version == data.end() ||
      !readInteger(*version, kManifestVersion, kManifestVersion, number))
    return libraryError(manifest.path, ": unsupported manifest version ",
                        version == data.end() ? std::string("(missing)")
                                              : showJson(*version),
                        " (this runtime reads ", kManifestVersion, ")");
  return Status();
}

/// `root/fileName`, which must stay inside `root` and be a file.
Status libraryFile(const FieldReader &r, const std::string &key,
                   const std::string &fileName, const std::string &root,
                   const std::string &realRoot, std::string &path) {
  if (fileName.empty() || fileName[0] == '/')
    return r.fail(key, "a file name inside the library folder", fileName);
  path = root + "/" + fileName;
  std::string resolved = realPath(path);
  if (resolved.empty() || !isFile(resolved))
    return libraryError(r.where(), ": field '", r.field(key), "' names ",
                        fileName, ", which is missing from ", root);
  if (resolved.compare(0, realRoot.size() + 1, realRoot + "/") != 0)
    return r.fail(key, "a file name inside the library folder", fileName);
  // A damaged file is found when its module is loaded (ModuleCache.cpp);
  // an empty one costs nothing to find here.
  if (isEmptyFile(resolved))
    return libraryError(r.where(), ": field '", r.field(key), "' names ",
                        fileName, ", which is empty; rebuild the kernel ",
                        "library");
  return Status();
}

Status readArch(const FieldReader &r, const std::string &key,
                const std::string &text, Arch &arch) {
  if (!Arch::parse(text, arch))
    return r.fail(key, "an arch like 'sm_80' or 'sm_90a'", text);
  return Status();
}

Status readAbi(const FieldReader &r, KernelEntry &kernel) {
  std::string abi;
  TA_RETURN_IF_ERROR(r.string("abi", abi));
  if (abi.rfind("memref-descriptor-v1", 0) == 0)
    return libraryError(r.where(), ": kernel ABI ", abi,
                        " (manifest version 1) is no longer supported; this ",
                        "runtime launches ABI ", kAbi,
                        ": rebuild the kernel library with this version of ",
                        "tiled-attn-compile (scripts/build_kernels.sh)");
  if (abi != kAbi)
    return r.fail("abi", concat("'", kAbi, "'"), abi);
  const Json *indexBits = r.find("index_bits");
  if (!indexBits)
    return r.missing("index_bits");
  int64_t bits = 0;
  if (!readInteger(*indexBits, 32, 64, bits) || (bits != 32 && bits != 64))
    return r.fail("index_bits", "32 or 64", *indexBits);
  kernel.indexBits = static_cast<int32_t>(bits);
  return r.flag("grouped_kv", kernel.groupedKv);
}

/// "dtype": f16 or bf16.
Status readDtype(const FieldReader &r, KernelEntry &kernel) {
  int choice = 0;
  TA_RETURN_IF_ERROR(r.choice("dtype", {"f16", "bf16"}, choice));
  kernel.dtype = static_cast<ta_dtype>(choice);
  kernel.dtypeText = choice == 0 ? "f16" : "bf16";
  return Status();
}

/// "causal": the kernel's mask.
Status readMask(const FieldReader &r, KernelEntry &kernel) {
  int choice = 0;
  TA_RETURN_IF_ERROR(r.choice(
      "causal", {"none", "top_left", "bottom_right", "window"}, choice));
  kernel.variant.mask = static_cast<KernelMask>(choice);
  kernel.maskText = kernelMaskName(kernel.variant.mask);
  return Status();
}

/// "block" (the CTA's threads) and "shared_bytes": what every kernel's
/// launch needs.
Status readBlockAndSharedBytes(const FieldReader &r, KernelEntry &kernel) {
  const Json *block = r.find("block");
  if (!block)
    return r.missing("block");
  int64_t dims[3];
  bool good = block->is_array() && block->size() == 3;
  for (size_t i = 0; good && i < 3; ++i)
    good = readInteger((*block)[i], 1, kMaxThreadsPerBlock, dims[i]);
  if (!good)
    return r.fail("block", "a list of 3 positive integers", *block);
  if (dims[0] * dims[1] * dims[2] > kMaxThreadsPerBlock)
    return r.fail("block", concat("at most ", kMaxThreadsPerBlock, " threads"),
                  *block);
  for (int i = 0; i < 3; ++i)
    kernel.block[i] = static_cast<uint32_t>(dims[i]);
  int64_t value = 0;
  TA_RETURN_IF_ERROR(r.integer("shared_bytes", 0, INT32_MAX, value));
  kernel.sharedBytes = static_cast<int32_t>(value);
  return Status();
}

Status readLaunchShape(const FieldReader &r, KernelEntry &kernel) {
  TA_RETURN_IF_ERROR(readBlockAndSharedBytes(r, kernel));
  int64_t value = 0;
  TA_RETURN_IF_ERROR(r.integer("block_m", 1, INT32_MAX, value));
  kernel.blockM = static_cast<int32_t>(value);
  const int64_t defaultAlign = kDefaultAlignBytes;
  TA_RETURN_IF_ERROR(
      r.integer("align_bytes", 1, 1 << 30, value, &defaultAlign));
  if (value & (value - 1))
    return r.fail("align_bytes", "a power of two", value);
  kernel.alignBytes = static_cast<int32_t>(value);
  // A kernel that waits for the grid before it (griddepcontrol, sm_90 on)
  // may be launched as that grid's dependent.
  TA_RETURN_IF_ERROR(r.flag("waits_prior_grids", kernel.waitsPriorGrids));
  if (kernel.waitsPriorGrids && kernel.arch.major < 9)
    return r.fail("waits_prior_grids",
                  concat("false for ", kernel.archText,
                         " (grid dependency control is sm_90's and later's)"),
                  true);
  return Status();
}

/// Whether the tile-schedule options turn on heavy-first ("heavy-first",
/// or "heavy-first=V" with V neither 0 nor false).
bool heavyFirst(const std::string &options) {
  std::istringstream words(options);
  std::string word;
  const std::string key = "heavy-first";
  while (words >> word) {
    if (word == key)
      return true;
    if (word.compare(0, key.size() + 1, key + "=") == 0) {
      std::string value = word.substr(key.size() + 1);
      return value != "0" && value != "false";
    }
  }
  return false;
}

/// "schedule": {"block_n": 64, "page_size": 0, "options": "...", ...};
/// optional. A varlen
/// kernel is not heavy-first: heavy-first numbers the programs longest
/// first by their query block, which under varlen says nothing of a
/// program's length (each sequence has its own), and the runtime launches
/// varlen grids as (query block, head, sequence).
Status readSchedule(const FieldReader &r, KernelEntry &kernel) {
  const Json *schedule = r.find("schedule");
  if (!schedule)
    return Status();
  if (!schedule->is_object())
    return r.fail("schedule", "an object", *schedule);
  FieldReader s(*schedule, r.where(), "schedule.");
  const int64_t none = 0;
  int64_t blockN = 0;
  TA_RETURN_IF_ERROR(s.integer("block_n", 1, INT32_MAX, blockN, &none));
  kernel.blockN = static_cast<int32_t>(blockN);
  int64_t pageSize = 0;
  TA_RETURN_IF_ERROR(s.integer("page_size", 0, INT32_MAX, pageSize, &none));
  kernel.pageSize = static_cast<int32_t>(pageSize);
  if (pageSize &&
      (!kernel.variant.paged || blockN <= pageSize || blockN % pageSize != 0))
    return s.fail("page_size",
                  "0, or for a kernel of 'paged' true a page size smaller "
                  "than block_n that divides it",
                  Json(pageSize));
  if (const Json *options = s.find("options")) {
    if (!options->is_string())
      return s.fail("options", "a string", *options);
    kernel.schedule = options->get<std::string>();
  }
  if (kernel.variant.varlen && heavyFirst(kernel.schedule))
    return s.fail("options",
                  "a schedule without heavy-first for a kernel of 'varlen' "
                  "true (its programs go by query block, head and sequence)",
                  kernel.schedule);
  return Status();
}

/// "sparse" says whether the kernel takes a block mask's captured inputs
/// (kBlockMaskArguments, of the function kBlockMaskFunction): a library built
/// before the key existed has it absent, and the captures decide.
Status checkSparse(const FieldReader &r, KernelEntry &kernel) {
  int taken = 0;
  for (const char *name : kBlockMaskArguments)
    for (const KernelEntry::Capture &capture : kernel.captures)
      taken += capture.name == name && capture.function == kBlockMaskFunction;
  const bool takes = taken == static_cast<int>(std::size(kBlockMaskArguments));
  if (!r.find("sparse")) {
    kernel.variant.sparse = takes;
    return Status();
  }
  if (kernel.variant.sparse == takes)
    return Status();
  return r.fail("sparse",
                takes ? "true for a kernel that takes a block mask's four "
                        "captured inputs"
                      : "false for a kernel that takes no block mask (its "
                        "four captured inputs of function 'block_mask')",
                Json(kernel.variant.sparse));
}

/// "score_function" and "mask_function" (names, "" or absent for none)
/// and "captures" (absent: none): each {name, kind: view or scalar, dtype:
/// f32, i32, f16, bf16 or i8, rank: 1-4 for a view, 0 for a scalar,
/// align_bytes: a power of two, 1 when absent}, with distinct names.
Status readFunctions(const FieldReader &r, KernelEntry &kernel) {
  for (auto [key, out] : {std::pair{"score_function", &kernel.scoreFunction},
                          std::pair{"mask_function", &kernel.maskFunction}}) {
    const Json *value = r.find(key);
    if (value && !value->is_string())
      return r.fail(key, "a function's name or \"\"", *value);
    if (value)
      *out = value->get<std::string>();
    if (!out->empty())
      kernel.variant.functions.push_back(*out);
  }
  const Json *captures = r.find("captures");
  if (!captures)
    return Status();
  if (!captures->is_array())
    return r.fail("captures", "a list of captured inputs", *captures);
  for (size_t i = 0; i < captures->size(); ++i) {
    const Json &raw = (*captures)[i];
    if (!raw.is_object())
      return r.fail(concat("captures[", i, "]"), "an object", raw);
    FieldReader c(raw, r.where(), concat("captures[", i, "]."));
    KernelEntry::Capture capture;
    TA_RETURN_IF_ERROR(c.string("name", capture.name));
    TA_RETURN_IF_ERROR(c.string("function", capture.function));
    int kind = 0, dtype = 0;
    TA_RETURN_IF_ERROR(c.choice("kind", {"view", "scalar"}, kind));
    TA_RETURN_IF_ERROR(c.choice("dtype", captureTypeNames(), dtype));
    capture.type = static_cast<ta_capture_type>(dtype);
    int64_t rank = 0;
    TA_RETURN_IF_ERROR(kind == 0 ? c.integer("rank", 1, 4, rank)
                                 : c.integer("rank", 0, 0, rank));
    if (kind == 1 && dtype > 1)
      return r.fail(concat("captures[", i, "].dtype"),
                    "'f32' or 'i32' for a scalar", raw["dtype"]);
    capture.rank = static_cast<int32_t>(rank);
    int64_t align = 1;
    const int64_t noAlign = 1;
    TA_RETURN_IF_ERROR(c.integer("align_bytes", 1, 256, align, &noAlign));
    if (align & (align - 1))
      return r.fail(concat("captures[", i, "].align_bytes"), "a power of two",
                    raw["align_bytes"]);
    capture.alignBytes = static_cast<int32_t>(align);
    for (const KernelEntry::Capture &other : kernel.captures)
      if (other.name == capture.name)
        return r.fail(concat("captures[", i, "].name"),
                      "a name no other captured input has", raw["name"]);
    kernel.captures.push_back(std::move(capture));
  }
  return Status();
}

Status readImages(const FieldReader &r, const std::string &root,
                  const std::string &realRoot, KernelEntry &kernel) {
  std::string ptx;
  TA_RETURN_IF_ERROR(r.string("ptx", ptx));
  TA_RETURN_IF_ERROR(
      libraryFile(r, "ptx", ptx, root, realRoot, kernel.ptxPath));
  const Json *cubins = r.find("cubin");
  if (!cubins)
    return Status();
  if (!cubins->is_object())
    return r.fail("cubin", "an object mapping archs to file names", *cubins);
  for (const auto &[archText, file] : cubins->items()) {
    std::string key = "cubin." + archText;
    Arch arch;
    TA_RETURN_IF_ERROR(readArch(r, "cubin", archText, arch));
    if (!file.is_string() || file.get<std::string>().empty())
      return r.fail(key, "a file name", file);
    std::string path;
    TA_RETURN_IF_ERROR(
        libraryFile(r, key, file.get<std::string>(), root, realRoot, path));
    kernel.cubins.emplace_back(arch, std::move(path));
  }
  return Status();
}

/// The rest of a block mask kernel's entry (after its name and arch): what
/// it launches (abi, symbol, images, block, shared_bytes), its mask
/// function and captured inputs, and its parameters, which bind the
/// function's captured inputs, then seq_q and seq_k (i64 scalars) and
/// block_kinds (an i8 view of rank 4) as captured inputs of their own.
Status readBlockMaskEntry(const FieldReader &r, const Manifest &manifest,
                          const std::string &realRoot, KernelEntry &kernel) {
  kernel.program = KernelEntry::Program::BlockMask;
  TA_RETURN_IF_ERROR(readAbi(r, kernel));
  TA_RETURN_IF_ERROR(r.string("symbol", kernel.symbol));
  TA_RETURN_IF_ERROR(readImages(r, manifest.root, realRoot, kernel));
  TA_RETURN_IF_ERROR(readBlockAndSharedBytes(r, kernel));
  int64_t value = 0;
  TA_RETURN_IF_ERROR(
      r.integer("block_size", kBlockMaskSize, kBlockMaskSize, value));
  TA_RETURN_IF_ERROR(readFunctions(r, kernel));
  if (kernel.maskFunction.empty() || !kernel.scoreFunction.empty())
    return r.fail("mask_function", "the name of a mask function",
                  kernel.maskFunction);
  for (const char *name : {"seq_q", "seq_k", "block_kinds"}) {
    if (std::any_of(
            kernel.captures.begin(), kernel.captures.end(),
            [&](const KernelEntry::Capture &c) { return c.name == name; }))
      return r.fail("captures", concat("no captured input named '", name, "'"),
                    name);
    KernelEntry::Capture capture;
    capture.name = name;
    bool view = std::string(name) == "block_kinds";
    capture.type = view ? TA_CAPTURE_I8 : TA_CAPTURE_I32;
    capture.rank = view ? 4 : 0;
    kernel.captures.push_back(std::move(capture));
  }
  kernel.variantText = kernelVariantName(kernel.variant);
  return readParams(r, kernel);
}

/// The rest of a split merge kernel's entry (after its name and arch): what
/// it launches, the output's dtype and D_v, its rows per program (block_m),
/// and its parameters: the views o_partial, lse_partial, o and lse, and the
/// scalar num_splits.
Status readSplitMergeEntry(const FieldReader &r, const Manifest &manifest,
                           const std::string &realRoot, KernelEntry &kernel) {
  kernel.program = KernelEntry::Program::SplitMerge;
  TA_RETURN_IF_ERROR(readAbi(r, kernel));
  TA_RETURN_IF_ERROR(readDtype(r, kernel));
  int64_t headDimV = 0;
  TA_RETURN_IF_ERROR(r.integer("head_dim_v", 1, INT32_MAX, headDimV));
  kernel.headDim = kernel.headDimV = static_cast<int32_t>(headDimV);
  kernel.maskText = "none";
  TA_RETURN_IF_ERROR(r.string("symbol", kernel.symbol));
  TA_RETURN_IF_ERROR(readImages(r, manifest.root, realRoot, kernel));
  TA_RETURN_IF_ERROR(readLaunchShape(r, kernel));
  // Programs along x per block of rows (one per block of columns; absent
  // in a library built before it: 1).
  const int64_t one = 1;
  int64_t perRowBlock = 1;
  TA_RETURN_IF_ERROR(
      r.integer("programs_per_row_block", 1, 1 << 16, perRowBlock, &one));
  kernel.programsPerRowBlock = static_cast<int32_t>(perRowBlock);
  kernel.variantText = "split_merge";
  TA_RETURN_IF_ERROR(readParams(r, kernel));
  for (TensorId view : {kOPartial, kLsePartial, kO, kLse})
    if (std::none_of(kernel.params.begin(), kernel.params.end(),
                     [&](const Param &p) {
                       return p.tensor == view && p.kind == ParamKind::Base;
                     }))
      return libraryError(r.where(), ": a split merge kernel takes the view '",
                          kTensorNames[view], "', whose base field 'params' ",
                          "lacks");
  return Status();
}

/// The rest of a backward kernel's entry ("program": "sdpa_backward"; after
/// its name and arch): its phase, what it computes (dtype, head_dim and
/// head_dim_v, "varlen"; a main or dq kernel's "causal" and "softcap" too,
/// the other phases' none and false), what it launches (block_n: a main
/// program's keys), and its parameters, which take the views each phase
/// needs: preprocess o, do, delta, dq_accum; main q, k, v, do, lse, delta,
/// dq_accum, dk, dv and scale; postprocess dq_accum, dq and scale; dq q, k,
/// v, do, lse, delta, dq and scale (and with varlen the sequences'
/// offsets).
Status readBackwardEntry(const FieldReader &r, const Manifest &manifest,
                         const std::string &realRoot, KernelEntry &kernel) {
  kernel.program = KernelEntry::Program::SdpaBackward;
  TA_RETURN_IF_ERROR(readAbi(r, kernel));
  int choice = 0;
  TA_RETURN_IF_ERROR(r.choice(
      "phase",
      std::vector<const char *>(std::begin(kBackwardPhaseNames),
                                std::end(kBackwardPhaseNames)),
      choice));
  kernel.phase = static_cast<KernelEntry::Phase>(choice + 1);
  // The main and dq kernels compute the scores: they mask and cap.
  const bool scores = kernel.computesScores();
  TA_RETURN_IF_ERROR(readDtype(r, kernel));
  TA_RETURN_IF_ERROR(readMask(r, kernel));
  TA_RETURN_IF_ERROR(r.flag("softcap", kernel.variant.softcap));
  TA_RETURN_IF_ERROR(r.flag("varlen", kernel.variant.varlen));
  // The main and dq kernels of score and mask functions, and their
  // captured inputs (the parameters below may take them).
  if (scores)
    TA_RETURN_IF_ERROR(readFunctions(r, kernel));
  if (!scores && (kernel.variant.mask != KernelMask::None ||
                kernel.variant.softcap))
    return r.fail(kernel.variant.softcap ? "softcap" : "causal",
                  concat(kernel.variant.softcap ? "false" : "'none'",
                         " for a ", phaseName(kernel.phase),
                         " kernel (only the main and dq kernels mask or "
                         "cap)"),
                  kernel.variant.softcap ? Json(true) : Json(kernel.maskText));
  int64_t headDim = 0, headDimV = 0;
  TA_RETURN_IF_ERROR(r.integer("head_dim", 1, INT32_MAX, headDim));
  TA_RETURN_IF_ERROR(r.integer("head_dim_v", 1, INT32_MAX, headDimV, &headDim));
  kernel.headDim = static_cast<int32_t>(headDim);
  kernel.headDimV = static_cast<int32_t>(headDimV);
  TA_RETURN_IF_ERROR(r.string("symbol", kernel.symbol));
  TA_RETURN_IF_ERROR(readImages(r, manifest.root, realRoot, kernel));
  TA_RETURN_IF_ERROR(readLaunchShape(r, kernel));
  int64_t blockN = 0;
  TA_RETURN_IF_ERROR(r.integer("block_n", 1, INT32_MAX, blockN));
  kernel.blockN = static_cast<int32_t>(blockN);
  kernel.variantText = kernelVariantName(kernel.variant);
  // The main and dq kernels read the forward's log-sum-exps: the view of
  // the lse feature (ManifestFields.cpp's optional views), which the
  // others do not take.
  kernel.variant.lse = scores;
  TA_RETURN_IF_ERROR(readParams(r, kernel));
  static const std::vector<TensorId> kTakes[4] = {
      {kO, kDo, kDelta, kDqAccum},
      {kQ, kK, kV, kDo, kLse, kDelta, kDqAccum, kDk, kDv},
      {kDqAccum, kDq},
      {kQ, kK, kV, kDo, kLse, kDelta, kDq}};
  for (TensorId view : kTakes[static_cast<int>(kernel.phase) - 1])
    if (std::none_of(kernel.params.begin(), kernel.params.end(),
                     [&](const Param &p) {
                       return p.capture < 0 && p.tensor == view &&
                              p.kind == ParamKind::Base;
                     }))
      return libraryError(r.where(), ": a backward ", phaseName(kernel.phase),
                          " kernel takes the view '", kTensorNames[view],
                          "' (", kTensorContents[view],
                          "), whose base field 'params' lacks");
  return Status();
}

Status readEntry(const Json &raw, size_t index, const Manifest &manifest,
                 const std::string &realRoot, KernelEntry &kernel) {
  std::string where = concat(manifest.path, ": kernel #", index);
  if (!raw.is_object())
    return libraryError(where, ": expected an object, got ", showJson(raw));
  auto name = raw.find("name");
  if (name != raw.end() && name->is_string() &&
      !name->get_ref<const std::string &>().empty())
    where += concat(" (", name->get<std::string>(), ")");
  FieldReader r(raw, where);
  TA_RETURN_IF_ERROR(r.string("name", kernel.name));
  TA_RETURN_IF_ERROR(r.string("arch", kernel.archText));
  TA_RETURN_IF_ERROR(readArch(r, "arch", kernel.archText, kernel.arch));
  // No "program": an SDPA kernel (the manifests before block masks).
  std::string program = "sdpa";
  if (r.find("program"))
    TA_RETURN_IF_ERROR(r.string("program", program));
  if (program == "block_mask")
    return readBlockMaskEntry(r, manifest, realRoot, kernel);
  if (program == "split_merge")
    return readSplitMergeEntry(r, manifest, realRoot, kernel);
  if (program == "sdpa_backward")
    return readBackwardEntry(r, manifest, realRoot, kernel);
  if (program != "sdpa")
    return r.fail("program",
                  "'sdpa', 'block_mask', 'split_merge' or 'sdpa_backward'",
                  program);
  TA_RETURN_IF_ERROR(readAbi(r, kernel));
  TA_RETURN_IF_ERROR(readDtype(r, kernel));
  TA_RETURN_IF_ERROR(readMask(r, kernel));
  // One flag per feature of KernelVariant.def (absent: false).
  for (const KernelFeature &feature : kKernelFeatures)
    TA_RETURN_IF_ERROR(r.flag(feature.name, kernel.variant.*feature.member));
  int64_t headDim = 0;
  TA_RETURN_IF_ERROR(r.integer("head_dim", 1, INT32_MAX, headDim));
  kernel.headDim = static_cast<int32_t>(headDim);
  // V's and O's head dim: Q's where the entry does not say otherwise.
  int64_t headDimV = 0;
  TA_RETURN_IF_ERROR(r.integer("head_dim_v", 1, INT32_MAX, headDimV, &headDim));
  kernel.headDimV = static_cast<int32_t>(headDimV);
  TA_RETURN_IF_ERROR(r.string("symbol", kernel.symbol));
  TA_RETURN_IF_ERROR(readImages(r, manifest.root, realRoot, kernel));
  TA_RETURN_IF_ERROR(readLaunchShape(r, kernel));
  TA_RETURN_IF_ERROR(readSchedule(r, kernel));
  TA_RETURN_IF_ERROR(readFunctions(r, kernel));
  TA_RETURN_IF_ERROR(checkSparse(r, kernel));
  kernel.variantText = kernelVariantName(kernel.variant);
  return readParams(r, kernel);
}

} // namespace

Status tiled_attn::runtime::readManifest(const std::string &root,
                                         Manifest &manifest) {
  manifest.root = root;
  while (manifest.root.size() > 1 && manifest.root.back() == '/')
    manifest.root.pop_back();
  manifest.path = manifest.root + "/" + kManifestName;
  Json data;
  TA_RETURN_IF_ERROR(readJson(manifest, data));
  TA_RETURN_IF_ERROR(readVersion(manifest, data));
  auto generator = data.find("generator");
  if (generator != data.end() && generator->is_string())
    manifest.generator = generator->get<std::string>();
  auto kernels = data.find("kernels");
  if (kernels == data.end() || !kernels->is_array())
    return libraryError(manifest.path, ": field 'kernels' must be a list, got ",
                        kernels == data.end() ? std::string("nothing")
                                              : showJson(*kernels));
  std::string realRoot = realPath(manifest.root);
  std::set<std::string> names;
  for (size_t i = 0; i < kernels->size(); ++i) {
    KernelEntry kernel;
    TA_RETURN_IF_ERROR(readEntry((*kernels)[i], i, manifest, realRoot, kernel));
    if (!names.insert(kernel.name).second)
      return libraryError(manifest.path, ": kernel #", i, ": kernel name '",
                          kernel.name, "' appears twice");
    using Program = KernelEntry::Program;
    (kernel.program == Program::BlockMask      ? manifest.blockMasks
     : kernel.program == Program::SplitMerge   ? manifest.splitMerges
     : kernel.program == Program::SdpaBackward ? manifest.backward
                                               : manifest.kernels)
        .push_back(std::move(kernel));
  }
  return Status();
}
