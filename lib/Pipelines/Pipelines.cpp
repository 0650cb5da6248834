//===- Pipelines.cpp - Named pass pipelines -------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Pipelines/Pipelines.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
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
#include "llvm/ADT/StringSwitch.h"
#include <cstdlib>

using namespace mlir;
using namespace tiled_attn;

void tiled_attn::buildTileSchedulePipeline(OpPassManager &pm,
                                           const TileScheduleOptions &options) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // Retiling understands only the generator's canonical form, so it comes
  // first; the mask split must see the unpipelined loop.
  if (options.blockM || options.blockN)
    fpm.addPass(tile::createTileRetilePass(
        {/*blockM=*/options.blockM, /*blockN=*/options.blockN}));
  if (options.maskSplit)
    fpm.addPass(tile::createTileMaskSplitPass(
        {options.inBoundsLoads, options.maskGuard, options.maskedFirst}));
  if (options.exp2)
    fpm.addPass(tile::createTileExp2Pass());
  if (options.lazyRescale)
    fpm.addPass(tile::createTileLazyRescalePass(
        {options.lazyRescale, options.lazyRescaleGuard}));
  if (options.heavyFirst)
    fpm.addPass(tile::createTileHeavyFirstPass({options.heavyFirstHeads}));
  fpm.addPass(tile::createTileHoistInvariantsPass());
  if (options.stages != 1)
    fpm.addPass(tile::createTilePrefetchPass(
        {options.stages, options.prefetchStreams, options.refillAfterUse}));
  if (options.decompose)
    fpm.addPass(tile::createTileDecomposeOnlineSoftmaxPass());
  fpm.addPass(createCSEPass());
}

std::string tiled_attn::defaultPTXFeatures(llvm::StringRef chip) {
  return llvm::StringSwitch<std::string>(chip)
      .Cases({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}, "+ptx80")
      .Case("sm_100a", "+ptx86")
      .Case("sm_120a", "+ptx87")
      .Case("sm_121a", "+ptx88")
      .Default("");
}

void tiled_attn::buildTileToGPUPipeline(OpPassManager &pm,
                                        const TileToPTXOptions &options) {
  pm.addPass(tilegpu::createTileGPUAttachTargetPass({options.chip, ""}));
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(createTileGPUAssignLayoutsPass({options.warps, options.smemLhs}));
  fpm.addPass(createConvertTileToTileGPUPass({options.stagedStores}));
  fpm.addPass(
      tilegpu::createTileGPUMergeBarriersPass({options.mergeBarriers}));
  fpm.addPass(tilegpu::createTileGPUResolveAsyncWaitsPass());
  fpm.addPass(tilegpu::createTileGPUAllocateMemoryPass());
  pm.addPass(createConvertTileGPUToNVVMPass({options.skipUnitRowScales}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
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

/// Upstream's gpu-lower-to-nvvm-pipeline with every index 32 bits wide. Its
/// own `index-bitwidth` reaches only some of its passes: nvgpu ops, func and
/// arith would still lower with 64-bit indices, and their memref descriptors
/// would meet the kernel's 32-bit ones in casts that nothing reconciles. The
/// same passes, in upstream's order, each told the width.
static void
buildIndex32LowerToNVVMPipeline(OpPassManager &pm,
                                const gpu::GPUToNVVMPipelineOptions &nvvm,
                                int optLevel) {
  static bool registered = [] {
    registerConversionPasses();
    registerGPUPasses();
    memref::registerMemRefPasses();
    registerCanonicalizerPass();
    registerCSEPass();
    return true;
  }();
  (void)registered;
  pm.addPass(createConvertNVGPUToNVVMWithIndexBitwidthPass({32}));
  std::string w = "{index-bitwidth=32}";
  std::string pipeline =
      "gpu-kernel-outlining,convert-vector-to-scf,convert-scf-to-cf,"
      "convert-nvvm-to-llvm,convert-func-to-llvm" +
      w + ",expand-strided-metadata,nvvm-attach-target{O=" +
      std::to_string(optLevel) + " chip=" + nvvm.cubinChip +
      " features=" + nvvm.cubinFeatures +
      "},lower-affine,convert-arith-to-llvm" + w + ",convert-index-to-llvm" +
      w + ",canonicalize,cse,gpu.module(convert-gpu-to-nvvm" + w +
      "),gpu.module(canonicalize),gpu.module(cse),"
      "gpu.module(reconcile-unrealized-casts),gpu-to-llvm,"
      "gpu-module-to-binary{format=isa},convert-math-to-llvm,canonicalize,"
      "cse,reconcile-unrealized-casts";
  if (failed(parsePassPipeline(pipeline, pm)))
    llvm::report_fatal_error("tile-to-ptx: bad index-bitwidth=32 pipeline");
}

void tiled_attn::buildGPUToPTXPipeline(OpPassManager &pm,
                                       const TileToPTXOptions &options) {
  findCudaToolkit();
  useShortSharedPointers();
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features.empty()
                           ? defaultPTXFeatures(options.chip)
                           : std::string(options.features);
  nvvm.cubinFormat = "isa";
  nvvm.optLevel = options.optLevel;
  if (options.indexBitwidth != 32 && options.indexBitwidth != 64)
    llvm::report_fatal_error("tile-to-ptx: index-bitwidth must be 32 or 64");
  if (options.indexBitwidth == 32) {
    buildIndex32LowerToNVVMPipeline(pm, nvvm, options.optLevel);
    return;
  }
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void tiled_attn::buildTileToPTXPipeline(OpPassManager &pm,
                                        const TileToPTXOptions &options) {
  buildTileToGPUPipeline(pm, options);
  buildGPUToPTXPipeline(pm, options);
}

void tiled_attn::registerTiledAttnDialects(DialectRegistry &registry) {
  registry.insert<tile::TileDialect, tilegpu::TileGPUDialect>();
  // The NVVM lowering loads many upstream dialects as it goes, and each
  // brings its conversion interfaces: register them all (no passes).
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void tiled_attn::registerTilePipelines() {
  PassPipelineRegistration<TileToPTXOptions>(
      "tile-to-ptx",
      "Lower a scheduled tile kernel to PTX through gpu, nvgpu, nvvm and "
      "llvm (mma.sync family)",
      buildTileToPTXPipeline);
  PassPipelineRegistration<TileScheduleOptions>(
      "tile-schedule",
      "Apply an SDPA schedule (block sizes, mask split, exp2, lazy "
      "rescale, K/V prefetch) and decompose the online softmax",
      buildTileSchedulePipeline);
}
