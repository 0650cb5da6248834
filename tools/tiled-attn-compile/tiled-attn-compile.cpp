//===- tiled-attn-compile.cpp - Build one kernel of the library -----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Generates an SDPA kernel from a configuration, applies a schedule, lowers
// it to PTX for one chip, assembles cubins with ptxas where it is installed,
// and records the kernel in the library's manifest.json:
//
//   tiled-attn-compile --head-dim=128 --dtype=bf16 --causal \
//       --schedule="block-m=64 block-n=64 exp2=1" --chip=sm_80 \
//       --cubin=sm_80,sm_90 --out-dir=build/kernels
//
// Everything in the PTX comes out of the compiler: tile IR, the schedule
// passes, tile-to-ptx.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Kernels/SdpaKernel.h"
#include "tiled_attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tiled_attn;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::opt<int64_t> headDim("head-dim", cl::desc("Head dimension"),
                                cl::init(64));
static cl::opt<std::string> dtype("dtype", cl::desc("f16 or bf16"),
                                  cl::init("f16"));
static cl::opt<bool> causal("causal", cl::desc("Causal (top-left) mask"),
                            cl::init(false));
static cl::opt<int64_t> blockM("block-m", cl::desc("BLOCK_M"), cl::init(64));
static cl::opt<int64_t> blockN("block-n", cl::desc("BLOCK_N"), cl::init(64));
static cl::opt<int64_t> warps("warps", cl::desc("Warps per CTA"), cl::init(4));
static cl::opt<bool>
    smemLhs("smem-lhs",
            cl::desc("Read Q from shared memory at every k-step instead of "
                     "holding it in registers"),
            cl::init(false));
static cl::opt<bool>
    stagedStores("staged-stores",
                 cl::desc("Write O through shared memory in 16-byte row "
                          "pieces (default on)"),
                 cl::init(true));
static cl::opt<bool> skipUnitRowScales(
    "skip-unit-row-scales",
    cl::desc("Skip the rescale of O in warps whose row maxima did not move"),
    cl::init(false));
static cl::opt<bool> mergeBarriers(
    "merge-barriers",
    cl::desc("Merge CTA barriers that no shared-memory access separates"),
    cl::init(false));
static cl::opt<int> indexBitwidth(
    "index-bitwidth",
    cl::desc("Index arithmetic, sizes and strides: 64, or 32 (ABI "
             "memref-descriptor-v1-index32)"),
    cl::init(64));
static cl::opt<std::string>
    schedule("schedule",
             cl::desc("Options of the tile-schedule pipeline, e.g. "
                      "\"exp2=1 mask-split=1\""),
             cl::init(""));
static cl::opt<std::string> chip("chip", cl::desc("PTX target chip"),
                                 cl::init("sm_80"));
static cl::list<std::string>
    cubins("cubin", cl::CommaSeparated,
           cl::desc("Chips to assemble cubins for with ptxas (skipped, with "
                    "a message, when ptxas is not installed)"));
static cl::opt<std::string> outDir("out-dir", cl::desc("Library folder"),
                                   cl::init("build/kernels"));
static cl::opt<std::string> ptxasPath("ptxas", cl::desc("ptxas to use"),
                                      cl::init(""));
static cl::opt<bool> keepIR("keep-ir",
                            cl::desc("Also write the tile IR and GPU IR"),
                            cl::init(false));

static int fail(const Twine &message) {
  llvm::errs() << "tiled-attn-compile: error: " << message << "\n";
  return 1;
}

static LogicalResult writeFile(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return failure();
  os << text;
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

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "tiled-attn-compile: build one SDPA kernel of "
                              "the kernel library\n");
  DialectRegistry registry;
  registerTiledAttnDialects(registry);
  registerTilePipelines();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  if (defaultPTXFeatures(chip).empty())
    return fail("unsupported chip '" + chip +
                "' (sm_80, sm_86, sm_89, sm_90, sm_90a, sm_120a, sm_121a)");
  SdpaKernelConfig config;
  config.headDim = headDim;
  config.blockM = blockM;
  config.blockN = blockN;
  config.causal = causal ? tile::CausalMode::TopLeft : tile::CausalMode::None;
  if (dtype == "f16")
    config.elementType = Float16Type::get(&ctx);
  else if (dtype == "bf16")
    config.elementType = BFloat16Type::get(&ctx);
  else
    return fail("dtype must be f16 or bf16, got '" + dtype + "'");
  std::string name =
      ("sdpa_fwd_" + chip + "_" + dtype + "_d" + Twine(int64_t(headDim)) + "_" +
       (causal ? "top_left" : "none") +
       (indexBitwidth == 32 ? "_index32" : ""))
          .str();

  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  if (failed(buildSdpaKernel(builder, module->getLoc(), config)))
    return 1;

  // The schedule, then tile-to-ptx, in two steps so that the lowered
  // kernel's launch facts can be read before it becomes a binary.
  PassManager schedulePm(&ctx);
  if (failed(
          parsePassPipeline("tile-schedule{" + schedule + "}", schedulePm)) ||
      failed(schedulePm.run(*module)))
    return fail("the schedule '" + schedule + "' failed");
  std::string tileIR;
  llvm::raw_string_ostream(tileIR) << *module;
  auto sdpa =
      cast<tile::SdpaAttr>((*module->getOps<func::FuncOp>().begin())
                               ->getAttr(tile::TileDialect::getSdpaAttrName()));

  TileToPTXOptions ptxOptions;
  if (indexBitwidth != 32 && indexBitwidth != 64)
    return fail("index-bitwidth must be 32 or 64, got " +
                std::to_string(int(indexBitwidth)));
  ptxOptions.chip = chip;
  ptxOptions.warps = warps;
  ptxOptions.smemLhs = smemLhs;
  ptxOptions.stagedStores = stagedStores;
  ptxOptions.skipUnitRowScales = skipUnitRowScales;
  ptxOptions.mergeBarriers = mergeBarriers;
  ptxOptions.indexBitwidth = indexBitwidth;
  PassManager gpuPm(&ctx), ptxPm(&ctx);
  buildTileToGPUPipeline(gpuPm, ptxOptions);
  buildGPUToPTXPipeline(ptxPm, ptxOptions);
  if (failed(gpuPm.run(*module)))
    return fail("lowering to the GPU level failed");
  int64_t sharedBytes = -1, threads = 32 * warps;
  std::string gpuIR;
  llvm::raw_string_ostream(gpuIR) << *module;
  module->walk([&](gpu::GPUFuncOp f) {
    if (auto b = f->getAttrOfType<IntegerAttr>(
            tilegpu::TileGPUDialect::getSharedBytesAttrName()))
      sharedBytes = b.getInt();
  });
  if (failed(ptxPm.run(*module)))
    return fail("lowering to PTX failed");
  std::string ptx;
  module->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      ptx = cast<gpu::ObjectAttr>(object).getObject().str();
  });
  if (ptx.empty() || sharedBytes < 0)
    return fail("no PTX came out of the pipeline");
  if (StringRef(ptx).contains(".extern .func"))
    return fail("the PTX calls functions it does not define: libdevice was "
                "not linked; set CUDA_HOME to a CUDA toolkit with "
                "nvvm/libdevice");

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail("cannot create '" + outDir + "': " + ec.message());
  SmallString<128> ptxFile(outDir);
  llvm::sys::path::append(ptxFile, name + ".ptx");
  if (failed(writeFile(ptxFile, ptx)))
    return fail("cannot write " + ptxFile);
  if (keepIR) {
    SmallString<128> irFile(outDir);
    llvm::sys::path::append(irFile, name + ".tile.mlir");
    (void)writeFile(irFile, tileIR);
    SmallString<128> gpuFile(outDir);
    llvm::sys::path::append(gpuFile, name + ".gpu.mlir");
    (void)writeFile(gpuFile, gpuIR);
  }

  json::Object entry{
      {"name", name},
      {"arch", chip},
      {"dtype", dtype},
      {"head_dim", int64_t(headDim)},
      {"causal", causal ? "top_left" : "none"},
      {"symbol", "sdpa_fwd"},
      {"ptx", (name + ".ptx")},
      {"block", json::Array{threads, 1, 1}},
      {"block_m", sdpa.getBlockM()},
      {"shared_bytes", sharedBytes},
      {"abi", indexBitwidth == 32 ? "memref-descriptor-v1-index32"
                                  : "memref-descriptor-v1"},
      {"num_params", 45},
      {"schedule",
       json::Object{{"block_m", sdpa.getBlockM()},
                    {"block_n", sdpa.getBlockN()},
                    {"warps", int64_t(warps)},
                    {"smem_lhs", bool(smemLhs)},
                    {"staged_stores", bool(stagedStores)},
                    {"skip_unit_row_scales", bool(skipUnitRowScales)},
                    {"merge_barriers", bool(mergeBarriers)},
                    {"stages", sdpa.getStages()},
                    {"refill_after_use", sdpa.getRefillAfterUse()},
                    {"mask_split", sdpa.getMaskSplit()},
                    {"exp2", sdpa.getExp2()},
                    {"rescale_threshold", sdpa.getRescaleThreshold()},
                    {"options", schedule.getValue()}}},
  };

  // Cubins and the ptxas resource report.
  std::string ptxas = ptxasPath;
  if (ptxas.empty()) {
    if (auto found = llvm::sys::findProgramByName("ptxas"))
      ptxas = *found;
    else if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
      ptxas = "/usr/local/cuda/bin/ptxas";
  }
  json::Object cubinFiles, reports;
  if (!cubins.empty() && ptxas.empty())
    llvm::errs() << "tiled-attn-compile: ptxas not found; no cubins, the "
                    "library ships PTX only\n";
  for (const std::string &arch : cubins) {
    if (ptxas.empty())
      break;
    std::string cubinName = name + "." + arch + ".cubin";
    SmallString<128> cubinFile(outDir);
    llvm::sys::path::append(cubinFile, cubinName);
    auto report = assemble(ptxas, ptxFile, arch, cubinFile);
    if (!report)
      return 1;
    cubinFiles[arch] = cubinName;
    reports[arch] = std::move(*report);
  }
  if (!cubinFiles.empty()) {
    entry["cubin"] = std::move(cubinFiles);
    entry["ptxas"] = std::move(reports);
  }

  // Merge into manifest.json, replacing an entry of the same name. Builds
  // of several kernels into one library may run at once: each holds an
  // exclusive lock on manifest.json.lock while it reads and rewrites.
  SmallString<128> manifestFile(outDir);
  llvm::sys::path::append(manifestFile, "manifest.json");
  std::error_code lockError;
  llvm::raw_fd_ostream lockFile((manifestFile + ".lock").str(), lockError,
                                llvm::sys::fs::OF_Append);
  if (lockError)
    return fail("cannot open " + manifestFile +
                ".lock: " + lockError.message());
  auto locker = lockFile.lock();
  if (!locker)
    return fail("cannot lock " + manifestFile +
                ".lock: " + llvm::toString(locker.takeError()));
  json::Object manifest{{"version", 1},
                        {"generator", "tiled-attn-compile"},
                        {"kernels", json::Array{}}};
  if (auto buffer = llvm::MemoryBuffer::getFile(manifestFile)) {
    auto parsed = json::parse((*buffer)->getBuffer());
    if (!parsed)
      return fail("malformed " + manifestFile + ": " +
                  llvm::toString(parsed.takeError()));
    if (auto *object = parsed->getAsObject())
      manifest = std::move(*object);
  }
  json::Array *kernels = manifest.getArray("kernels");
  if (!kernels)
    return fail(manifestFile + " has no 'kernels' array");
  json::Array updated;
  for (json::Value &k : *kernels)
    if (auto *o = k.getAsObject(); !o || o->getString("name") != name)
      updated.push_back(std::move(k));
  updated.push_back(std::move(entry));
  manifest["kernels"] = std::move(updated);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
  if (failed(writeFile(manifestFile, text)))
    return fail("cannot write " + manifestFile);
  llvm::outs() << name << ": " << ptxFile << " (" << threads << " threads, "
               << sharedBytes << " bytes of shared memory)\n";
  return 0;
}
