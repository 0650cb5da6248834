//===- BuildKernel.cpp - One kernel of the library to PTX and cubins ------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Everything in the PTX comes out of the compiler: the generator's tile IR,
// the tile-schedule passes, then tile-to-ptx in its two halves, so that the
// lowered kernel's launch facts can be read from the gpu.func before it
// becomes a binary.
//
//===----------------------------------------------------------------------===//

#include "BuildKernel.h"

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Kernels/BlockMaskKernel.h"
#include "tiled_attn/Kernels/SdpaBackwardKernel.h"
#include "tiled_attn/Kernels/SdpaKernel.h"
#include "tiled_attn/Kernels/SplitMergeKernel.h"
#include "tiled_attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <mutex>

using namespace mlir;
using namespace tiled_attn;
namespace json = llvm::json;

using Clock = std::chrono::steady_clock;

/// The manifest version written: 2 has the kernel ABI tiled-attn-v2, whose
/// parameters each entry lists under "params".
static constexpr int64_t kManifestVersion = 2;

static double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Seconds for the manifest, to the millisecond.
static double roundedSeconds(double seconds) {
  return std::round(seconds * 1000) / 1000;
}

static LogicalResult fail(const KernelSpec &kernel, const Twine &message) {
  llvm::errs() << "tiled-attn-compile: error: " << kernel.name << " ("
               << kernel.origin << "): " << message << "\n";
  return failure();
}

static LogicalResult writeFile(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return failure();
  os << text;
  return success();
}

static std::string libraryFile(StringRef outDir, const Twine &fileName) {
  SmallString<128> path(outDir);
  llvm::sys::path::append(path, fileName);
  return path.str().str();
}

std::string tiled_attn::findPtxas(StringRef given) {
  if (given == "none")
    return "";
  if (!given.empty())
    return given.str();
  if (auto found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  return "";
}

/// The output of `program args...` (stdout and stderr), or "" when it
/// cannot run.
static std::string outputOf(StringRef program, ArrayRef<StringRef> args) {
  SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("tiled-attn-compile", "txt", log))
    return "";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  int rc = llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects);
  auto buffer = llvm::MemoryBuffer::getFile(log);
  std::string text = rc == 0 && buffer ? (*buffer)->getBuffer().str() : "";
  llvm::sys::fs::remove(log);
  return text;
}

static std::string sha256Hex(ArrayRef<uint8_t> bytes) {
  return llvm::toHex(llvm::SHA256::hash(bytes), /*LowerCase=*/true);
}

std::string tiled_attn::toolchainId(StringRef executable, StringRef ptxas) {
  std::string id = "tiled-attn-compile ";
  if (auto buffer = llvm::MemoryBuffer::getFile(executable))
    id += sha256Hex(llvm::arrayRefFromStringRef((*buffer)->getBuffer()));
  else
    id += "(unreadable: " + executable.str() + ")";
  id += "; LLVM " LLVM_VERSION_STRING "; manifest " +
        std::to_string(kManifestVersion) + "; ";
  if (ptxas.empty())
    return id + "no ptxas";
  std::string version = outputOf(ptxas, {ptxas, "--version"});
  return id + (version.empty() ? "ptxas (no version)"
                               : StringRef(version).trim().str());
}

std::string tiled_attn::kernelInputsHash(const KernelSpec &kernel,
                                         StringRef toolchain) {
  std::string text = describeKernel(kernel) + "\n" + toolchain.str();
  return sha256Hex(llvm::arrayRefFromStringRef(text));
}

llvm::StringMap<json::Object>
tiled_attn::loadManifestEntries(StringRef outDir) {
  llvm::StringMap<json::Object> entries;
  auto buffer =
      llvm::MemoryBuffer::getFile(libraryFile(outDir, "manifest.json"));
  if (!buffer)
    return entries;
  llvm::Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return entries;
  }
  const json::Object *manifest = parsed->getAsObject();
  if (!manifest || manifest->getString("generator") != "tiled-attn-compile" ||
      manifest->getInteger("version") != kManifestVersion)
    return entries;
  if (const json::Array *kernels = manifest->getArray("kernels"))
    for (const json::Value &k : *kernels)
      if (const json::Object *o = k.getAsObject())
        if (std::optional<StringRef> name = o->getString("name"))
          entries[*name] = *o;
  return entries;
}

/// The files of a manifest entry in the library folder: its PTX and cubins
/// (plain file names; anything else is not this tool's).
static SmallVector<std::string> entryFiles(StringRef outDir,
                                           const json::Object &entry) {
  SmallVector<std::string> files;
  auto add = [&](std::optional<StringRef> name) {
    if (name && !name->empty() && !name->contains('/') &&
        *name != "manifest.json" && !name->starts_with("."))
      files.push_back(libraryFile(outDir, *name));
  };
  add(entry.getString("ptx"));
  if (const json::Object *cubins = entry.getObject("cubin"))
    for (const auto &cubin : *cubins)
      add(cubin.second.getAsString());
  return files;
}

/// Whether the kernel's files in the library are those its spec and the
/// toolchain make now.
static bool isUpToDate(const KernelSpec &kernel, const BuildSettings &settings,
                       StringRef inputsHash) {
  if (settings.rebuild || settings.keepIR)
    return false;
  auto it = settings.previous.find(kernel.name);
  if (it == settings.previous.end() ||
      it->second.getString("inputs_hash") != inputsHash)
    return false;
  SmallVector<std::string> files = entryFiles(settings.outDir, it->second);
  return !files.empty() && llvm::all_of(files, [](const std::string &file) {
    return llvm::sys::fs::exists(file);
  });
}

namespace {
/// What the lowering leaves: the PTX and the facts the manifest records.
struct LoweredKernel {
  std::string ptx;
  int64_t sharedBytes = -1;
  /// Tensor-memory columns the kernel allocates (tcgen05; 0 otherwise).
  int64_t tensorMemoryColumns = 0;
  /// Threads per CTA: the lowering's warps, plus a producer's when the
  /// kernel is warp-specialized (the gpu.func's known block size).
  int64_t threads = 0;
  tile::SdpaAttr sdpa;
  /// The kernel's parameters, in order: the manifest's "params".
  json::Array params;
  /// The score and mask functions ("" without one) and the captured inputs
  /// they read: the manifest's "score_function", "mask_function" and
  /// "captures" (each {name, kind: view or scalar, dtype, rank}, and
  /// align_bytes for a view the kernel copies in blocks: 16, the data
  /// pointer's and the strides' alignment that 16-byte copies need).
  std::string scoreFunction, maskFunction;
  json::Array captures;
  /// Whether the kernel waits for the grid before it (griddepcontrol.wait,
  /// from tile.wait_prior_grids): the manifest's "waits_prior_grids".
  bool waitsPriorGrids = false;
  std::string tileIR, gpuIR;
  /// Wall-clock seconds from the generator's tile IR to the PTX string.
  double toPTXSeconds = 0;
};
} // namespace

/// The manifest's name of an LLVM parameter type, or "" for one the runtime
/// cannot pack.
static std::string paramTypeName(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return "ptr";
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
  if (type.isF32())
    return "f32";
  return "";
}

/// The manifest's "params": each parameter of the lowered kernel (its
/// llvm.func, one per `#tilegpu.param` of the gpu.func it came from, in
/// order) with its kind, name, dimension and LLVM type.
static LogicalResult recordParams(const KernelSpec &kernel, ModuleOp module,
                                  ArrayRef<tilegpu::KernelParamAttr> params,
                                  json::Array &out) {
  SmallVector<LLVM::LLVMFuncOp> funcs;
  module->walk([&](LLVM::LLVMFuncOp f) {
    if (f->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
      funcs.push_back(f);
  });
  if (funcs.size() != 1)
    return fail(kernel,
                "expected one lowered kernel, found " + Twine(funcs.size()));
  ArrayRef<Type> types = funcs[0].getFunctionType().getParams();
  if (types.size() != params.size())
    return fail(kernel, "the lowered kernel has " + Twine(types.size()) +
                            " parameters but its gpu.func declared " +
                            Twine(params.size()) + " #tilegpu.param");
  for (auto [index, param, type] : llvm::enumerate(params, types)) {
    std::string typeName = paramTypeName(type);
    if (!param || typeName.empty())
      return fail(kernel, "kernel parameter #" + Twine(index) +
                              " has no #tilegpu.param or a type the "
                              "runtime cannot pack");
    json::Object entry{{"name", param.getName()},
                       {"kind", tilegpu::stringifyParamKind(param.getKind())},
                       {"type", typeName}};
    if (param.getDim() >= 0)
      entry["dim"] = param.getDim();
    // The runtime encodes a tensor map with the box and swizzle of its type
    // and passes its 128 bytes by value.
    if (auto map = dyn_cast_or_null<tilegpu::TensorMapType>(param.getMap())) {
      entry["type"] = "tensor_map";
      entry["box"] = json::Array{map.getRows(), map.getCols()};
      entry["swizzle"] = map.getSwizzle();
    }
    out.push_back(std::move(entry));
  }
  return success();
}

/// A split merge kernel's columns per program: the widest of 16, 8
/// dividing D_v (narrow, so that a decode step's few rows spread over more
/// programs: each program's time is the chunks' count of memory latencies).
static int64_t splitMergeColumns(int64_t headDimV) {
  int64_t columns = 16;
  while (columns > 8 && headDimV % columns)
    columns /= 2;
  return columns;
}

/// Generates the kernel and lowers it to PTX, timing the schedule, the GPU
/// lowering and the PTX pipeline (not the generator nor any IR printing).
static LogicalResult lowerToPTX(MLIRContext &ctx, const KernelSpec &kernel,
                                bool keepIR, LoweredKernel &out) {
  SdpaKernelConfig config;
  config.headDim = kernel.headDim;
  config.headDimV = kernel.headDimV;
  config.blockM = kernel.blockM;
  config.blockN = kernel.blockN;
  config.pageSize = kernel.pageSize;
  config.variant = kernel.variant;
  config.elementType = kernel.dtype == "bf16" ? Type(BFloat16Type::get(&ctx))
                                              : Type(Float16Type::get(&ctx));
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  // The score and mask functions, each from its file, into the kernel's
  // module; their results say which is which (the generator checks there
  // is at most one of each).
  for (const std::string &name : kernel.variant.functions) {
    std::string path = functionPath(kernel, name);
    OwningOpRef<ModuleOp> file = parseSourceFile<ModuleOp>(path, &ctx);
    if (!file)
      return fail(kernel, "cannot parse " + path);
    auto fn = file->lookupSymbol<func::FuncOp>(name);
    if (!fn || fn.getFunctionType().getNumResults() != 1)
      return fail(kernel,
                  path + " has no function @" + name + " with one result");
    bool isScore = fn.getFunctionType().getResult(0).isF32();
    // One spelling per kernel: the score function before the mask
    // function, as the manifest (and ta_kernel_info.variant) lists them.
    if (isScore && !out.maskFunction.empty())
      return fail(kernel, "variant " + kernelVariantName(kernel.variant) +
                              ": name the score function " + name +
                              " before the mask function " + out.maskFunction);
    (isScore ? out.scoreFunction : out.maskFunction) = name;
    builder.clone(*fn);
    // The backward's score function needs its gradient: the one its file
    // declares beside it, or one derived from its body.
    if (isScore && kernel.program == KernelProgram::SdpaBackward) {
      auto cloned = module->lookupSymbol<func::FuncOp>(name);
      if (auto declared = file->lookupSymbol<func::FuncOp>(name + "_grad"))
        builder.clone(*declared);
      else if (failed(tile::addScoreGradient(cloned)))
        return fail(kernel, "the score function " + name +
                                " has no gradient (declare @" + name +
                                "_grad beside it)");
      builder.setInsertionPointToEnd(module->getBody());
    }
  }
  const bool blockMask = kernel.program == KernelProgram::BlockMask;
  const bool merge = kernel.program == KernelProgram::SplitMerge;
  const bool backward = kernel.program == KernelProgram::SdpaBackward;
  SdpaBackwardKernelConfig backwardConfig;
  backwardConfig.headDim = kernel.headDim;
  backwardConfig.headDimV = kernel.headDimV;
  backwardConfig.elementType = config.elementType;
  backwardConfig.causal =
      kernel.variant.mask == KernelMask::TopLeft ? tile::CausalMode::TopLeft
      : kernel.variant.mask == KernelMask::BottomRight
          ? tile::CausalMode::BottomRight
      : kernel.variant.mask == KernelMask::Window ? tile::CausalMode::Window
                                                  : tile::CausalMode::None;
  backwardConfig.softcap = kernel.variant.softcap;
  backwardConfig.varlen = kernel.variant.varlen;
  backwardConfig.blockM = kernel.blockM;
  backwardConfig.blockN = kernel.blockN;
  backwardConfig.name = kSdpaBackwardSymbol;
  backwardConfig.functions = kernel.variant.functions;
  if (blockMask && out.maskFunction.empty())
    return fail(kernel, "a block mask kernel needs a mask function (an i1 "
                        "result), got " +
                            kernelVariantName(kernel.variant));
  SplitMergeKernelConfig mergeConfig;
  mergeConfig.headDimV = kernel.headDimV;
  mergeConfig.elementType = config.elementType;
  mergeConfig.blockM = kernel.blockM;
  mergeConfig.blockD = splitMergeColumns(kernel.headDimV);
  mergeConfig.name = kSplitMergeSymbol;
  FailureOr<func::FuncOp> built =
      blockMask  ? buildBlockMaskKernel(builder, module->getLoc(),
                                        {out.maskFunction, kBlockMaskSymbol})
      : merge    ? buildSplitMergeKernel(builder, module->getLoc(), mergeConfig)
      : backward ? buildSdpaBackwardKernel(builder, module->getLoc(),
                                           backwardConfig, kernel.backwardPhase)
                 : buildSdpaKernel(builder, module->getLoc(), config);
  if (failed(built))
    return fail(kernel, "the generator rejected the configuration");
  for (unsigned i = 0, e = built->getNumArguments(); i < e; ++i) {
    tile::ArgAttr role = tile::getArgAttr(*built, i);
    if (!role || role.getRole() != tile::ArgRole::Captured)
      continue;
    Type type = built->getArgument(i).getType();
    auto view = dyn_cast<tile::ViewType>(type);
    std::string dtype;
    llvm::raw_string_ostream(dtype) << (view ? view.getElementType() : type);
    // The function that declares it: the first whose arguments name it.
    std::string function;
    for (const std::string &name : {out.scoreFunction, out.maskFunction})
      if (auto fn = module->lookupSymbol<func::FuncOp>(name);
          fn && function.empty())
        for (unsigned a = 0, n = fn.getNumArguments(); a < n; ++a)
          if (tile::ArgAttr r = tile::getArgAttr(fn, a);
              r && r.getArgumentName() == role.getArgumentName())
            function = name;
    // A block-sparse kernel's block mask is no function's:
    // kBlockMaskFunction.
    if (function.empty() && config.variant.sparse &&
        llvm::is_contained(kBlockMaskArguments, role.getArgumentName()))
      function = kBlockMaskFunction;
    // A paged kernel's block table is its feature's: "paged".
    if (function.empty() && config.variant.paged &&
        role.getArgumentName() == kBlockTableArgument)
      function = "paged";
    out.captures.push_back(
        json::Object{{"name", role.getArgumentName()},
                     {"function", function},
                     {"kind", view ? "view" : "scalar"},
                     {"dtype", dtype},
                     {"rank", view ? view.getRank() : int64_t(0)}});
  }

  Clock::time_point start = Clock::now();
  // (A block mask or merge kernel has no schedule: it is lowered as built;
  // a backward kernel's is its loops' prefetch.)
  if (!blockMask && !merge) {
    PassManager schedulePm(&ctx);
    if (backward)
      buildTileBackwardSchedulePipeline(schedulePm, *kernel.scheduleOptions);
    else
      buildTileSchedulePipeline(schedulePm, *kernel.scheduleOptions);
    if (failed(schedulePm.run(*module)))
      return fail(kernel, "the schedule \"" + kernel.schedule + "\" failed");
  }
  out.toPTXSeconds += secondsSince(start);
  if (keepIR)
    llvm::raw_string_ostream(out.tileIR) << *module;
  // A captured view the schedule loads in blocks (tile-vectorize-apply's
  // block-loads) is copied 16 bytes at a time.
  built->walk([&](tile::LoadOp load) {
    auto arg = dyn_cast<BlockArgument>(load.getView());
    if (!arg || arg.getOwner() != &built->getBody().front())
      return;
    tile::ArgAttr role = tile::getArgAttr(*built, arg.getArgNumber());
    if (!role || role.getRole() != tile::ArgRole::Captured)
      return;
    for (json::Value &capture : out.captures)
      if (json::Object *o = capture.getAsObject();
          o && o->getString("name") == role.getArgumentName())
        (*o)["align_bytes"] = int64_t(16);
  });
  if (!blockMask && !merge && !backward)
    out.sdpa = cast<tile::SdpaAttr>(
        built->getOperation()->getAttr(tile::TileDialect::getSdpaAttrName()));

  start = Clock::now();
  PassManager gpuPm(&ctx), nvvmPm(&ctx), ptxPm(&ctx);
  buildTileToGPUPipeline(gpuPm, *kernel.loweringOptions);
  buildGPUToNVVMPipeline(nvvmPm, *kernel.loweringOptions);
  buildNVVMToPTXPipeline(ptxPm, *kernel.loweringOptions);
  if (failed(gpuPm.run(*module)))
    return fail(kernel, "lowering to the GPU level failed");
  SmallVector<tilegpu::KernelParamAttr> params;
  module->walk([&](gpu::GPUFuncOp f) {
    if (auto b = f->getAttrOfType<IntegerAttr>(
            tilegpu::TileGPUDialect::getSharedBytesAttrName()))
      out.sharedBytes = b.getInt();
    if (auto c = f->getAttrOfType<IntegerAttr>(
            tilegpu::TileGPUDialect::getTmemColumnsAttrName()))
      out.tensorMemoryColumns = c.getInt();
    if (std::optional<ArrayRef<int32_t>> block = f.getKnownBlockSize())
      out.threads = (*block)[0];
    for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i)
      params.push_back(f.getArgAttrOfType<tilegpu::KernelParamAttr>(
          i, tilegpu::TileGPUDialect::getParamAttrName()));
  });
  out.toPTXSeconds += secondsSince(start);
  if (keepIR)
    llvm::raw_string_ostream(out.gpuIR) << *module;

  start = Clock::now();
  if (failed(nvvmPm.run(*module)))
    return fail(kernel, "lowering to NVVM failed");
  if (failed(recordParams(kernel, *module, params, out.params)))
    return failure();
  module->walk([&](NVVM::GriddepcontrolOp op) {
    out.waitsPriorGrids |= op.getKind() == NVVM::GridDepActionKind::wait;
  });
  if (failed(ptxPm.run(*module)))
    return fail(kernel, "lowering to PTX failed");
  module->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      out.ptx = cast<gpu::ObjectAttr>(object).getObject().str();
  });
  out.toPTXSeconds += secondsSince(start);
  if (out.ptx.empty() || out.sharedBytes < 0 || out.threads <= 0)
    return fail(kernel, "no PTX came out of the pipeline");
  if (StringRef(out.ptx).contains(".extern .func"))
    return fail(kernel, "the PTX calls functions it does not define: "
                        "libdevice was not linked; set CUDA_HOME to a CUDA "
                        "toolkit with nvvm/libdevice");
  return success();
}

/// Runs ptxas -v on `ptx` for `arch`; returns the resource report as JSON.
static std::optional<json::Object> assemble(StringRef ptxas, StringRef ptx,
                                            StringRef arch, StringRef cubin) {
  SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("ptxas", "log", log);
  std::string archFlag = ("-arch=" + arch).str();
  SmallVector<StringRef> args = {ptxas, archFlag, "-v", "-O3",
                                 ptx,   "-o",     cubin};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string err;
  // A cubin left by an earlier build must not pass for this one's.
  llvm::sys::fs::remove(cubin);
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &err);
  auto buffer = llvm::MemoryBuffer::getFile(log);
  std::string text = buffer ? (*buffer)->getBuffer().str() : "";
  llvm::sys::fs::remove(log);
  if (rc != 0) {
    llvm::errs() << "tiled-attn-compile: ptxas -arch=" << arch
                 << " rejected the PTX:\n"
                 << text << err << "\n";
    return std::nullopt;
  }
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(cubin, size) || size == 0) {
    llvm::errs() << "tiled-attn-compile: " << ptxas << " -arch=" << arch
                 << " exited 0 but wrote no cubin at " << cubin
                 << " (is it CUDA's ptxas?)\n";
    return std::nullopt;
  }
  json::Object report;
  SmallVector<StringRef> m;
  if (llvm::Regex("Used ([0-9]+) registers").match(text, &m))
    report["registers"] = std::stoll(m[1].str());
  if (llvm::Regex("([0-9]+) bytes spill stores").match(text, &m))
    report["spill_store_bytes"] = std::stoll(m[1].str());
  if (llvm::Regex("([0-9]+) bytes spill loads").match(text, &m))
    report["spill_load_bytes"] = std::stoll(m[1].str());
  if (llvm::Regex("([0-9]+) bytes stack frame").match(text, &m))
    report["stack_frame_bytes"] = std::stoll(m[1].str());
  return report;
}

/// The manifest fields every kernel of a program other than SDPA has (a
/// block mask or split merge kernel, lowered to PTX, no cubins yet): name,
/// program, arch, symbol, image, launch shape, ABI and parameters.
static json::Object programEntry(const KernelSpec &kernel,
                                 const LoweredKernel &lowered,
                                 StringRef symbol) {
  const TileToPTXOptions &lowering = *kernel.loweringOptions;
  return json::Object{{"name", kernel.name},
                      {"program", kernelProgramName(kernel.program)},
                      {"arch", std::string(lowering.chip)},
                      {"symbol", symbol},
                      {"ptx", (kernel.name + ".ptx")},
                      {"block", json::Array{lowered.threads, 1, 1}},
                      {"shared_bytes", lowered.sharedBytes},
                      {"tensor_memory_columns", lowered.tensorMemoryColumns},
                      {"abi", "tiled-attn-v2"},
                      {"index_bits", int64_t(lowering.indexBitwidth)},
                      {"params", json::Array(lowered.params)},
                      {"lowering", kernel.lowering}};
}

/// Marks an entry whose kernel waits for the grid launched before it (the
/// runtime launches it as that grid's dependent); absent otherwise.
static json::Object withGridDependency(json::Object entry,
                                       const LoweredKernel &lowered) {
  if (lowered.waitsPriorGrids)
    entry["waits_prior_grids"] = true;
  return entry;
}

/// A block mask kernel's entry: its mask function and captured inputs and
/// its block size besides.
static json::Object blockMaskEntry(const KernelSpec &kernel,
                                   const LoweredKernel &lowered) {
  json::Object entry = programEntry(kernel, lowered, kBlockMaskSymbol);
  entry["mask_function"] = lowered.maskFunction;
  entry["captures"] = json::Array(lowered.captures);
  entry["block_size"] = kBlockMaskSize;
  return entry;
}

/// A split merge kernel's entry: the output's dtype and D_v and its rows
/// per program besides.
static json::Object splitMergeEntry(const KernelSpec &kernel,
                                    const LoweredKernel &lowered) {
  json::Object entry = programEntry(kernel, lowered, kSplitMergeSymbol);
  entry["dtype"] = kernel.dtype;
  entry["head_dim_v"] = kernel.headDimV;
  entry["block_m"] = kernel.blockM;
  // Its programs along x per block of rows: one per block of columns
  // (SplitMergeKernel.cpp).
  entry["programs_per_row_block"] =
      kernel.headDimV / splitMergeColumns(kernel.headDimV);
  return entry;
}

/// A backward kernel's entry: its phase, dtype, head dims, mask and blocks
/// besides.
static json::Object sdpaBackwardEntry(const KernelSpec &kernel,
                                      const LoweredKernel &lowered) {
  json::Object entry = programEntry(kernel, lowered, kSdpaBackwardSymbol);
  // (Strings, not StringRefs: a json::Value keeps a StringRef's pointer.)
  entry["symbol"] =
      sdpaBackwardSymbol(kSdpaBackwardSymbol, kernel.backwardPhase);
  entry["phase"] = sdpaBackwardPhaseName(kernel.backwardPhase).str();
  entry["dtype"] = kernel.dtype;
  entry["head_dim"] = kernel.headDim;
  entry["head_dim_v"] = kernel.headDimV ? kernel.headDimV : kernel.headDim;
  entry["variant"] = kernelVariantName(kernel.variant);
  entry["causal"] = kernelMaskName(kernel.variant.mask);
  entry["softcap"] = bool(kernel.variant.softcap);
  entry["varlen"] = bool(kernel.variant.varlen);
  entry["block_m"] = kernel.blockM;
  entry["block_n"] = kernel.blockN;
  // The main and dq kernels of score and mask functions: which, and their
  // captured inputs (as a forward kernel's entry says them).
  if (!kernel.variant.functions.empty()) {
    entry["score_function"] = lowered.scoreFunction;
    entry["mask_function"] = lowered.maskFunction;
    entry["captures"] = json::Array(lowered.captures);
  }
  return entry;
}

/// The manifest entry of a kernel lowered to PTX (no cubins yet).
static json::Object manifestEntry(const KernelSpec &kernel,
                                  const LoweredKernel &lowered) {
  if (kernel.program == KernelProgram::SdpaBackward)
    return sdpaBackwardEntry(kernel, lowered);
  if (kernel.program == KernelProgram::BlockMask)
    return withGridDependency(blockMaskEntry(kernel, lowered), lowered);
  if (kernel.program == KernelProgram::SplitMerge)
    return withGridDependency(splitMergeEntry(kernel, lowered), lowered);
  const TileToPTXOptions &lowering = *kernel.loweringOptions;
  tile::SdpaAttr sdpa = lowered.sdpa;
  int64_t threads = lowered.threads;
  json::Object entry{
      {"name", kernel.name},
      {"arch", std::string(lowering.chip)},
      {"dtype", kernel.dtype},
      {"head_dim", kernel.headDim},
      {"head_dim_v", sdpa.getValueHeadDim()},
      {"causal", kernelMaskName(kernel.variant.mask)},
      {"score_function", lowered.scoreFunction},
      {"mask_function", lowered.maskFunction},
      {"captures", json::Array(lowered.captures)},
      {"symbol", "sdpa_fwd"},
      {"ptx", (kernel.name + ".ptx")},
      {"block", json::Array{threads, 1, 1}},
      {"block_m", sdpa.getBlockM()},
      {"shared_bytes", lowered.sharedBytes},
      {"tensor_memory_columns", lowered.tensorMemoryColumns},
      {"abi", "tiled-attn-v2"},
      {"index_bits", int64_t(lowering.indexBitwidth)},
      // The generated kernels read K/V head h / (H_q / H_kv).
      {"grouped_kv", true},
      {"params", json::Array(lowered.params)},
      {"schedule",
       json::Object{
           {"block_m", sdpa.getBlockM()},
           {"block_n", sdpa.getBlockN()},
           {"page_size", kernel.pageSize},
           {"warps", int64_t(lowering.warps)},
           {"smem_lhs", bool(lowering.smemLhs)},
           {"tma", bool(lowering.tma)},
           {"staged_stores", bool(lowering.stagedStores)},
           {"skip_unit_row_scales", bool(lowering.skipUnitRowScales)},
           {"exp2_poly_every", int64_t(lowering.exp2PolyEvery)},
           {"merge_barriers", bool(lowering.mergeBarriers)},
           {"warp_specialize", bool(lowering.warpSpecialize)},
           {"pingpong", bool(lowering.pingpong)},
           {"ring_slots", int64_t(lowering.ringSlots)},
           {"producer_registers", int64_t(lowering.producerRegisters)},
           {"consumer_registers", int64_t(lowering.consumerRegisters)},
           {"correction", bool(lowering.correction)},
           {"correction_registers", int64_t(lowering.correctionRegisters)},
           {"mma_warp", bool(lowering.mmaWarp)},
           {"p_over_s", bool(lowering.pOverS)},
           {"simulate_roles", int64_t(lowering.simulateRoles)},
           {"stages", sdpa.getStages()},
           {"refill_after_use", sdpa.getRefillAfterUse()},
           {"mask_split", sdpa.getMaskSplit()},
           {"exp2", sdpa.getExp2()},
           {"rescale_threshold", sdpa.getRescaleThreshold()},
           {"defer_pv", sdpa.getDeferPv()},
           {"options", kernel.schedule},
           {"lowering", kernel.lowering}}},
  };
  // One key per feature of KernelVariant.def.
  for (const KernelFeature &feature : kKernelFeatures)
    entry[feature.name] = kernel.variant.*feature.member;
  return withGridDependency(std::move(entry), lowered);
}

/// Merges `entry` into <outDir>/manifest.json, replacing an entry of the
/// same name. Builds into one library may run at once: each holds an
/// exclusive lock on manifest.json.lock while it reads and rewrites.
/// Serializes this process's threads around manifest.json (the file lock
/// below serializes processes) and around their lines of output.
static std::mutex manifestMutex, outputMutex;

/// Writes `manifest` to `manifestFile` as recordInManifest and
/// orderManifest leave it: indented JSON and a final newline.
static LogicalResult writeManifest(StringRef manifestFile,
                                   json::Object manifest) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
  return writeFile(manifestFile, text);
}

static LogicalResult recordInManifest(const KernelSpec &kernel,
                                      StringRef outDir, json::Object entry) {
  std::lock_guard<std::mutex> guard(manifestMutex);
  std::string manifestFile = libraryFile(outDir, "manifest.json");
  std::error_code lockError;
  llvm::raw_fd_ostream lockFile(manifestFile + ".lock", lockError,
                                llvm::sys::fs::OF_Append);
  if (lockError)
    return fail(kernel, "cannot open " + manifestFile +
                            ".lock: " + lockError.message());
  auto locker = lockFile.lock();
  if (!locker)
    return fail(kernel, "cannot lock " + manifestFile +
                            ".lock: " + llvm::toString(locker.takeError()));
  json::Object manifest{{"version", kManifestVersion},
                        {"generator", "tiled-attn-compile"},
                        {"kernels", json::Array{}}};
  if (auto buffer = llvm::MemoryBuffer::getFile(manifestFile)) {
    auto parsed = json::parse((*buffer)->getBuffer());
    if (!parsed)
      return fail(kernel, "malformed " + manifestFile + ": " +
                              llvm::toString(parsed.takeError()));
    // Only a manifest this tool wrote is merged into or replaced; any other
    // JSON there is someone else's file.
    auto *object = parsed->getAsObject();
    if (!object || object->getString("generator") != "tiled-attn-compile")
      return fail(kernel, manifestFile +
                              " is not a manifest tiled-attn-compile wrote "
                              "(a JSON object with \"generator\": "
                              "\"tiled-attn-compile\"); remove it or build "
                              "into another --out-dir");
    // Entries of an older manifest version describe kernels of another
    // ABI: the library is rebuilt from scratch rather than mixed.
    if (object->getInteger("version") == kManifestVersion)
      manifest = std::move(*object);
  }
  json::Array *kernels = manifest.getArray("kernels");
  if (!kernels)
    return fail(kernel, manifestFile + " has no 'kernels' array");
  json::Array updated;
  for (json::Value &k : *kernels)
    if (auto *o = k.getAsObject(); !o || o->getString("name") != kernel.name)
      updated.push_back(std::move(k));
  updated.push_back(std::move(entry));
  manifest["kernels"] = std::move(updated);
  if (failed(writeManifest(manifestFile, std::move(manifest))))
    return fail(kernel, "cannot write " + manifestFile);
  return success();
}

/// Prints one line of the build's progress.
static void report(StringRef line) {
  std::lock_guard<std::mutex> guard(outputMutex);
  llvm::outs() << line << "\n";
  llvm::outs().flush();
}

static LogicalResult buildChangedKernel(const DialectRegistry &registry,
                                        const KernelSpec &kernel,
                                        const BuildSettings &settings,
                                        StringRef inputsHash);

BuildOutcome tiled_attn::buildKernel(const DialectRegistry &registry,
                                     const KernelSpec &kernel,
                                     const BuildSettings &settings) {
  std::string inputsHash = kernelInputsHash(kernel, settings.toolchain);
  if (isUpToDate(kernel, settings, inputsHash)) {
    report(kernel.name + ": up to date");
    return BuildOutcome::UpToDate;
  }
  return succeeded(buildChangedKernel(registry, kernel, settings, inputsHash))
             ? BuildOutcome::Built
             : BuildOutcome::Failed;
}

/// buildKernel for a kernel that is not up to date.
static LogicalResult buildChangedKernel(const DialectRegistry &registry,
                                        const KernelSpec &kernel,
                                        const BuildSettings &settings,
                                        StringRef inputsHash) {
  MLIRContext ctx(registry, settings.concurrent
                                ? MLIRContext::Threading::DISABLED
                                : MLIRContext::Threading::ENABLED);
  ctx.loadAllAvailableDialects();
  LoweredKernel lowered;
  if (failed(lowerToPTX(ctx, kernel, settings.keepIR, lowered)))
    return failure();

  StringRef outDir = settings.outDir;
  // The files of the kernel's previous build go: a cubin of a chip it no
  // longer has must not stay behind its new entry.
  if (auto it = settings.previous.find(kernel.name);
      it != settings.previous.end())
    for (const std::string &file : entryFiles(outDir, it->second))
      llvm::sys::fs::remove(file);
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail(kernel, "cannot create '" + outDir + "': " + ec.message());
  std::string ptxFile = libraryFile(outDir, kernel.name + ".ptx");
  if (failed(writeFile(ptxFile, lowered.ptx)))
    return fail(kernel, "cannot write " + ptxFile);
  if (settings.keepIR) {
    (void)writeFile(libraryFile(outDir, kernel.name + ".tile.mlir"),
                    lowered.tileIR);
    (void)writeFile(libraryFile(outDir, kernel.name + ".gpu.mlir"),
                    lowered.gpuIR);
  }
  json::Object entry = manifestEntry(kernel, lowered);

  // Cubins, the ptxas resource report and the time of each ptxas run.
  json::Object cubinFiles, reports, toCubinSeconds;
  double cubinSeconds = 0;
  for (const std::string &arch : kernel.cubins) {
    if (settings.ptxas.empty())
      break;
    std::string cubinName = kernel.name + "." + arch + ".cubin";
    Clock::time_point start = Clock::now();
    auto report =
        assemble(settings.ptxas, ptxFile, arch, libraryFile(outDir, cubinName));
    if (!report)
      return failure();
    double seconds = secondsSince(start);
    cubinSeconds += seconds;
    toCubinSeconds[arch] = roundedSeconds(seconds);
    cubinFiles[arch] = cubinName;
    reports[arch] = std::move(*report);
  }
  // A spec's kernel does not spill unless its configuration says why
  // ("spills"): the library's rule, checked on ptxas's report.
  if (!kernel.configuration.empty() && kernel.acceptedSpills.empty())
    for (const auto &[arch, report] : reports) {
      int64_t bytes =
          report.getAsObject()->getInteger("spill_store_bytes").value_or(0);
      if (bytes > 0)
        return fail(kernel,
                    "ptxas -arch=" + arch.str() + " spills " +
                        std::to_string(bytes) +
                        " bytes of registers (spill stores), and the "
                        "configuration does not say why it accepts that: "
                        "change its tiles or lowering, or give it \"spills\": "
                        "\"<why>\" (kernels/README.md)");
    }
  if (!cubinFiles.empty()) {
    entry["cubin"] = std::move(cubinFiles);
    entry["ptxas"] = std::move(reports);
  }
  entry["inputs_hash"] = inputsHash;
  entry["compile_seconds"] =
      json::Object{{"to_ptx", roundedSeconds(lowered.toPTXSeconds)},
                   {"to_cubin", std::move(toCubinSeconds)}};
  if (failed(recordInManifest(kernel, outDir, std::move(entry))))
    return failure();

  std::string line;
  llvm::raw_string_ostream os(line);
  os << kernel.name << ": " << ptxFile << " (" << lowered.threads
     << " threads, " << lowered.sharedBytes << " bytes of shared memory), "
     << llvm::formatv("{0:f1}", lowered.toPTXSeconds) << " s to PTX";
  if (!kernel.cubins.empty() && !settings.ptxas.empty())
    os << llvm::formatv(", {0:f1} s to cubins", cubinSeconds);
  report(line);
  return success();
}

LogicalResult tiled_attn::orderManifest(StringRef outDir,
                                        ArrayRef<std::string> names, bool prune,
                                        size_t &pruned) {
  pruned = 0;
  std::lock_guard<std::mutex> guard(manifestMutex);
  std::string manifestFile = libraryFile(outDir, "manifest.json");
  auto buffer = llvm::MemoryBuffer::getFile(manifestFile);
  if (!buffer)
    return success(); // Nothing was built.
  auto parsed = json::parse((*buffer)->getBuffer());
  json::Object *manifest = parsed ? parsed->getAsObject() : nullptr;
  json::Array *kernels = manifest ? manifest->getArray("kernels") : nullptr;
  if (!kernels) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    llvm::errs() << "tiled-attn-compile: cannot reorder " << manifestFile
                 << ": not a manifest\n";
    return failure();
  }
  // Kernels of earlier runs that this one did not build come first, in
  // their order, then this run's in the order of `names`.
  auto rank = [&](const json::Value &k) -> size_t {
    const json::Object *o = k.getAsObject();
    std::optional<StringRef> name = o ? o->getString("name") : std::nullopt;
    auto *it = name ? llvm::find(names, *name) : names.end();
    return it == names.end() ? 0 : 1 + (it - names.begin());
  };
  std::vector<json::Value> ordered(kernels->begin(), kernels->end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const json::Value &a, const json::Value &b) {
                     return rank(a) < rank(b);
                   });
  json::Array sorted;
  for (json::Value &k : ordered) {
    if (prune && rank(k) == 0) {
      if (const json::Object *o = k.getAsObject())
        for (const std::string &file : entryFiles(outDir, *o))
          llvm::sys::fs::remove(file);
      ++pruned;
      continue;
    }
    sorted.push_back(std::move(k));
  }
  (*manifest)["kernels"] = std::move(sorted);
  if (failed(writeManifest(manifestFile, std::move(*manifest)))) {
    llvm::errs() << "tiled-attn-compile: cannot write " << manifestFile << "\n";
    return failure();
  }
  return success();
}
