//===- Pipelines.cpp - Named pass pipelines -------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Pipelines/Pipelines.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"
#include "tiled_attn/Target/TargetInfo.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include <cstdlib>

using namespace mlir;
using namespace tiled_attn;

/// tile-prefetch with the schedule's stages, streams and refill-after-use;
/// nothing with stages = 1.
static void addPrefetch(OpPassManager &fpm,
                        const TileScheduleOptions &options) {
  if (options.stages == 1)
    return;
  tile::TilePrefetchPassOptions prefetch;
  prefetch.stages = options.stages;
  prefetch.streams = options.prefetchStreams;
  prefetch.refillAfterUse = options.refillAfterUse;
  fpm.addPass(tile::createTilePrefetchPass(prefetch));
}

void tiled_attn::buildTileSchedulePipeline(OpPassManager &pm,
                                           const TileScheduleOptions &options) {
  // Score and mask functions first: the schedule passes see tile ops only.
  tile::TileVectorizeApplyPassOptions vectorize;
  vectorize.blockLoads = options.blockLoads;
  pm.addPass(tile::createTileVectorizeApplyPass(vectorize));
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // Retiling understands only the generator's canonical form, so it comes
  // first; the mask split must see the unpipelined loop.
  if (options.blockM || options.blockN) {
    tile::TileRetilePassOptions retile;
    retile.blockM = options.blockM;
    retile.blockN = options.blockN;
    fpm.addPass(tile::createTileRetilePass(retile));
  }
  // A score function's row terms and the scale out of the scores.
  fpm.addPass(tile::createTileFoldScoreTermsPass());
  if (options.maskSplit) {
    tile::TileMaskSplitPassOptions split;
    split.inBoundsLoads = options.inBoundsLoads;
    split.guard = options.maskGuard;
    split.maskedFirst = options.maskedFirst;
    fpm.addPass(tile::createTileMaskSplitPass(split));
  }
  if (options.exp2)
    fpm.addPass(tile::createTileExp2Pass());
  if (options.lazyRescale) {
    tile::TileLazyRescalePassOptions lazy;
    lazy.threshold = options.lazyRescale;
    lazy.guard = options.lazyRescaleGuard;
    fpm.addPass(tile::createTileLazyRescalePass(lazy));
  }
  if (options.heavyFirst) {
    tile::TileHeavyFirstPassOptions heavy;
    heavy.headGroup = options.heavyFirstHeads;
    heavy.allMasks = options.heavyFirstAllMasks;
    fpm.addPass(tile::createTileHeavyFirstPass(heavy));
  }
  fpm.addPass(tile::createTileHoistInvariantsPass());
  addPrefetch(fpm, options);
  // After the prefetch, whose K/V iteration arguments the rotation carries
  // one block further.
  if (options.deferPv)
    fpm.addPass(tile::createTileDeferPvPass());
  if (options.earlyGathers)
    fpm.addPass(tile::createTileEarlyGathersPass());
  if (options.earlyMmas)
    fpm.addPass(tile::createTileEarlyMmasPass());
  if (options.decompose)
    fpm.addPass(tile::createTileDecomposeOnlineSoftmaxPass());
  fpm.addPass(createCSEPass());
}

void tiled_attn::buildTileBackwardSchedulePipeline(
    OpPassManager &pm, const TileScheduleOptions &options) {
  // Score and mask functions first (no block loads: the main kernel's
  // transposed blocks gather).
  pm.addPass(tile::createTileVectorizeApplyPass());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  if (options.exp2)
    fpm.addPass(tile::createTileExp2Pass());
  addPrefetch(fpm, options);
  if (options.earlyMmas)
    fpm.addPass(tile::createTileEarlyMmasPass());
}

namespace {
/// The first bad option of a pipeline's options.
class OptionCheck {
public:
  explicit OptionCheck(llvm::StringRef pipeline) : pipeline(pipeline) {}
  /// Records `message` about `option` unless an earlier one was.
  void fail(llvm::StringRef option, const llvm::Twine &message) {
    if (problem.empty())
      problem = (pipeline + ": " + option + " " + message).str();
  }
  /// `option` must be in [lo, hi].
  void range(llvm::StringRef option, int64_t value, int64_t lo, int64_t hi) {
    if (value < lo || value > hi)
      fail(option, "must be in [" + llvm::Twine(lo) + ", " + llvm::Twine(hi) +
                       "], got " + llvm::Twine(value));
  }
  llvm::Error result() const {
    if (problem.empty())
      return llvm::Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), problem);
  }

private:
  llvm::StringRef pipeline;
  std::string problem;
};

/// The number NN of a "+ptxNN" feature string, or nullopt.
std::optional<int> ptxVersion(llvm::StringRef features) {
  int version = 0;
  if (!features.consume_front("+ptx") || features.getAsInteger(10, version))
    return std::nullopt;
  return version;
}

/// The newest PTX version LLVM 22's NVPTX backend emits (PTX ISA 9.0).
constexpr int kNewestPTX = 90;
} // namespace

llvm::Error TileScheduleOptions::verify() const {
  OptionCheck check("tile-schedule");
  for (auto [name, size] :
       {std::pair<llvm::StringRef, int64_t>{"block-m", blockM},
        {"block-n", blockN}})
    if (size != 0 && !tile::isBlockSize(size))
      check.fail(name, "must be 0 (the kernel's) or a multiple of 16 in "
                       "[16, 256], got " +
                           llvm::Twine(size));
  if (lazyRescale != 0)
    check.range("lazy-rescale", lazyRescale, 1, 16);
  check.range("heavy-first-heads", heavyFirstHeads, 0, INT32_MAX);
  check.range("stages", stages, 1, 4);
  check.range("prefetch-streams", prefetchStreams, 0, 4);
  return check.result();
}

llvm::Error TileToPTXOptions::verify() const {
  OptionCheck check("tile-to-ptx");
  std::optional<TargetInfo> info = TargetInfo::lookup(chip);
  if (!info)
    check.fail("chip", "'" + chip + "' is not a supported chip (" +
                           TargetInfo::knownChips() + ")");
  if (!family.empty() && !tilegpu::symbolizeFamily(family))
    check.fail("family",
               "must be mma_sync, wgmma or tcgen05, got '" + family + "'");
  if (info && !features.empty()) {
    int needed = ptxVersion(info->ptxFeatures).value_or(0);
    std::optional<int> version = ptxVersion(features);
    if (!version || *version < needed || *version > kNewestPTX)
      check.fail("features", "must be a PTX version +ptxNN from " +
                                 info->ptxFeatures + " (what " + chip +
                                 " needs) to +ptx" + llvm::Twine(kNewestPTX) +
                                 ", got '" + features + "'");
  }
  check.range("warps", warps, 1, 32);
  if (indexBitwidth != 32 && indexBitwidth != 64)
    check.fail("index-bitwidth",
               "must be 32 or 64, got " + llvm::Twine(int(indexBitwidth)));
  check.range("opt-level", optLevel, 0, 3);
  check.range("exp2-poly-every", exp2PolyEvery, 0, 1 << 20);
  check.range("ring-slots", ringSlots, 0, 8);
  check.range("simulate-roles", simulateRoles, 0, 1 << 20);
  for (auto [name, registers] : {std::pair<llvm::StringRef, int64_t>{
                                     "producer-registers", producerRegisters},
                                 {"consumer-registers", consumerRegisters},
                                 {"correction-registers", correctionRegisters}})
    if (registers != 0 && !tilegpu::isSetMaxNRegBudget(registers))
      check.fail(name, "must be 0 (the launch's) or a multiple of 8 in "
                       "[24, 256], got " +
                           llvm::Twine(registers));
  return check.result();
}

std::string tiled_attn::defaultPTXFeatures(llvm::StringRef chip) {
  std::optional<TargetInfo> info = TargetInfo::lookup(chip);
  return info ? info->ptxFeatures.str() : "";
}

/// The GPU-level kernel to gpu/nvgpu/nvvm code in a gpu.module.
static void addTileGPUToNVVM(OpPassManager &pm,
                             const TileToPTXOptions &options) {
  ConvertTileGPUToNVVMPassOptions nvvm;
  nvvm.skipUnitRowScales = options.skipUnitRowScales;
  nvvm.uniformWarpgroup = options.uniformWarpgroup;
  nvvm.exp2PolyEvery = options.exp2PolyEvery;
  pm.addPass(createConvertTileGPUToNVVMPass(nvvm));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tiled_attn::buildTileToGPUPipeline(OpPassManager &pm,
                                        const TileToPTXOptions &options) {
  tilegpu::TileGPUAttachTargetPassOptions target;
  target.chip = options.chip;
  target.family = options.family;
  pm.addPass(tilegpu::createTileGPUAttachTargetPass(target));
  // A kernel not scheduled first may still hold score and mask functions.
  pm.addPass(tile::createTileVectorizeApplyPass());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  TileGPUAssignLayoutsPassOptions layouts;
  layouts.warps = options.warps;
  layouts.smemLhs = options.smemLhs;
  layouts.tma = options.tma;
  fpm.addPass(createTileGPUAssignLayoutsPass(layouts));
  ConvertTileToTileGPUPassOptions shared;
  shared.stagedStores = options.stagedStores;
  shared.tmaReduce = options.tmaReduce;
  shared.mergeBarriers = options.mergeBarriers;
  shared.shareTransposes = options.shareTransposes;
  shared.emptyBarriers = options.warpSpecialize;
  shared.ringSlots = options.warpSpecialize ? options.ringSlots : 0;
  shared.mmaWarp = options.mmaWarp;
  shared.pOverS = options.pOverS;
  shared.correction = options.correction;
  fpm.addPass(createConvertTileToTileGPUPass(shared));
  tilegpu::TileGPUMergeBarriersPassOptions barriers;
  barriers.hoistWaits = options.mergeBarriers;
  fpm.addPass(tilegpu::createTileGPUMergeBarriersPass(barriers));
  fpm.addPass(tilegpu::createTileGPUResolveAsyncWaitsPass());
  fpm.addPass(tilegpu::createTileGPUAllocateMemoryPass());
  if (options.pingpong)
    fpm.addPass(tilegpu::createTileGPUPingPongPass());
  if (options.warpSpecialize) {
    tilegpu::TileGPUWarpSpecializePassOptions roles;
    roles.producerRegisters = options.producerRegisters;
    roles.consumerRegisters = options.consumerRegisters;
    roles.mmaWarp = options.mmaWarp;
    roles.correction = options.correction;
    roles.correctionRegisters = options.correctionRegisters;
    fpm.addPass(tilegpu::createTileGPUWarpSpecializePass(roles));
  }
  if (options.simulateRoles != 0) {
    tilegpu::TileGPUSimulateRolesPassOptions simulate;
    simulate.schedules = options.simulateRoles;
    simulate.quiet = true;
    fpm.addPass(tilegpu::createTileGPUSimulateRolesPass(simulate));
  }
  addTileGPUToNVVM(pm, options);
}

/// The serializer links libdevice (for exp2, fma ...) from the CUDA toolkit
/// it finds through CUDA_ROOT, CUDA_HOME or CUDA_PATH. Where none is set,
/// point CUDA_HOME at the usual install locations, so that the PTX does not
/// depend on the caller's environment.
static void findCudaToolkit() {
  if (!NVVM::getCUDAToolkitPath().empty())
    return;
  for (const char *dir :
       {"/usr/local/cuda", "/usr/lib/cuda", "/usr/lib/nvidia-cuda-toolkit"}) {
    SmallString<128> libdevice(dir);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice");
    if (llvm::sys::fs::is_directory(libdevice)) {
      ::setenv("CUDA_HOME", dir, /*overwrite=*/0);
      return;
    }
  }
}

/// Shared-memory pointers are 32 bits wide (NVPTX "short pointers"): every
/// ldmatrix and cp.async address then takes one register instead of two,
/// which keeps 128-row tiles at D=128 out of spills. The NVPTX backend reads
/// this from its command-line option when the serializer creates its target
/// machine.
static void useShortSharedPointers() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("nvptx-short-ptr");
  if (it != options.end())
    static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
}

void tiled_attn::initializeNVPTXToolchain() {
  findCudaToolkit();
  useShortSharedPointers();
}

void tiled_attn::buildGPUToNVVMPipeline(OpPassManager &pm,
                                        const TileToPTXOptions &options) {
  // Upstream's gpu-lower-to-nvvm-pipeline, pass by pass: its own
  // `index-bitwidth` reaches only some of its passes (nvgpu, func and arith
  // would still lower with 64-bit indices, and their values would meet the
  // kernel's 32-bit ones in casts that nothing reconciles), so each pass is
  // told the width here.
  // TileToPTXOptions::verify (which the registered pipelines and
  // tiled-attn-compile run first) keeps the width 32 or 64; the pass below
  // refuses any other with a diagnostic.
  unsigned width = options.indexBitwidth;
  ConvertNVGPUToNVVMWithIndexBitwidthPassOptions nvgpu;
  nvgpu.indexBitwidth = width;
  pm.addPass(createConvertNVGPUToNVVMWithIndexBitwidthPass(nvgpu));
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.indexBitwidth = width;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  std::optional<TargetInfo> info = TargetInfo::lookup(options.chip);
  target.chip = info ? info->nvvmChip().str() : std::string(options.chip);
  target.features = options.features.empty() ? defaultPTXFeatures(options.chip)
                                             : std::string(options.features);
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  ArithToLLVMConversionPassOptions arith;
  arith.indexBitwidth = width;
  pm.addPass(createArithToLLVMConversionPass(arith));
  ConvertIndexToLLVMPassOptions index;
  index.indexBitwidth = width;
  pm.addPass(createConvertIndexToLLVMPass(index));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertGpuOpsToNVVMOpsOptions gpuToNVVM;
  gpuToNVVM.indexBitwidth = width;
  // The kernel ABI: a rank-0 memref parameter (a view's base) is one
  // pointer, not a memref descriptor.
  gpuToNVVM.useBarePtrCallConv = true;
  OpPassManager &gpm = pm.nest<gpu::GPUModuleOp>();
  gpm.addPass(createConvertGpuOpsToNVVMOps(gpuToNVVM));
  gpm.addPass(createTileGPUTensorMapParamsPass());
  gpm.addPass(createCanonicalizerPass());
  gpm.addPass(createCSEPass());
  gpm.addPass(createReconcileUnrealizedCastsPass());
}

void tiled_attn::buildNVVMToPTXPipeline(OpPassManager &pm,
                                        const TileToPTXOptions &options) {
  // A family target: emitted for its chip, verified for another.
  std::optional<TargetInfo> info = TargetInfo::lookup(options.chip);
  if (info && !info->verifiedAs.empty()) {
    TileGPURetargetFamilyPassOptions family;
    family.chip = options.chip;
    family.features = options.features.empty()
                          ? defaultPTXFeatures(options.chip)
                          : std::string(options.features);
    family.verifiedAs = info->verifiedAs.str();
    pm.addNestedPass<gpu::GPUModuleOp>(createTileGPURetargetFamilyPass(family));
  }
  GpuToLLVMConversionPassOptions host;
  host.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(host));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void tiled_attn::buildGPUToPTXPipeline(OpPassManager &pm,
                                       const TileToPTXOptions &options) {
  buildGPUToNVVMPipeline(pm, options);
  buildNVVMToPTXPipeline(pm, options);
}

void tiled_attn::buildTileToPTXPipeline(OpPassManager &pm,
                                        const TileToPTXOptions &options) {
  buildTileToGPUPipeline(pm, options);
  buildGPUToPTXPipeline(pm, options);
}

void tiled_attn::registerTiledAttnDialects(DialectRegistry &registry) {
  // What the IR holds from tile IR to the gpu.binary; the passes' own
  // dependent dialects are added by the pass manager.
  registry
      .insert<tile::TileDialect, tilegpu::TileGPUDialect, affine::AffineDialect,
              arith::ArithDialect, cf::ControlFlowDialect, func::FuncDialect,
              gpu::GPUDialect, index::IndexDialect, LLVM::LLVMDialect,
              math::MathDialect, memref::MemRefDialect, nvgpu::NVGPUDialect,
              NVVM::NVVMDialect, scf::SCFDialect, tensor::TensorDialect,
              ub::UBDialect, vector::VectorDialect>();
  // The to-LLVM patterns that convert-gpu-to-nvvm takes from each dialect.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  // gpu-module-to-binary: the NVVM target and the LLVM IR translations.
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

/// Registers a pipeline whose options are checked (Options::verify)
/// before it is built: a bad value is the pass manager's parse error, a
/// diagnostic, never an abort in the middle of the pipeline.
template <typename Options>
static void registerVerifiedPipeline(
    StringRef arg, StringRef description,
    std::function<void(OpPassManager &, const Options &)> builder) {
  registerPassPipeline(
      arg, description,
      [builder](OpPassManager &pm, StringRef text,
                function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (llvm::Error error = options.verify())
          return errorHandler(llvm::toString(std::move(error)));
        builder(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

void tiled_attn::registerTilePipelines() {
  registerVerifiedPipeline<TileToPTXOptions>(
      "tile-to-ptx",
      "Lower a scheduled tile kernel to PTX through gpu, nvgpu, nvvm and "
      "llvm (mma.sync family; wgmma on sm_90a, tcgen05 on sm_100a/f)",
      buildTileToPTXPipeline);
  registerVerifiedPipeline<TileToPTXOptions>(
      "tilegpu-to-ptx",
      "Lower a GPU-level (tilegpu) kernel, with its layouts, buffers and "
      "offsets in the IR, to PTX: tile-to-ptx without the passes that "
      "choose them (for kernels written at the GPU level)",
      [](OpPassManager &pm, const TileToPTXOptions &options) {
        addTileGPUToNVVM(pm, options);
        buildGPUToPTXPipeline(pm, options);
      });
  registerVerifiedPipeline<TileScheduleOptions>(
      "tile-schedule",
      "Apply an SDPA schedule (block sizes, mask split, exp2, lazy "
      "rescale, K/V prefetch, deferred P.V) and decompose the online "
      "softmax",
      buildTileSchedulePipeline);
}
