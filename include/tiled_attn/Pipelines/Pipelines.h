//===- Pipelines.h - Named pass pipelines -----------------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_PIPELINES_PIPELINES_H
#define TILED_ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace tiled_attn {

/// Every schedule knob of an SDPA kernel, as one option string:
///   tile-schedule{block-m=128 block-n=64 mask-split=1 exp2=1
///                 lazy-rescale=8 stages=2}
struct TileScheduleOptions
    : public mlir::PassPipelineOptions<TileScheduleOptions> {
  Option<int64_t> blockM{*this, "block-m",
                         llvm::cl::desc("BLOCK_M (0 keeps the kernel's)"),
                         llvm::cl::init(0)};
  Option<int64_t> blockN{*this, "block-n",
                         llvm::cl::desc("BLOCK_N (0 keeps the kernel's)"),
                         llvm::cl::init(0)};
  Option<bool> maskSplit{
      *this, "mask-split",
      llvm::cl::desc("Split K/V loops into unmasked and masked blocks and "
                     "skip the hidden causal ones (tile-mask-split)"),
      llvm::cl::init(false)};
  Option<bool> maskGuard{
      *this, "mask-guard",
      llvm::cl::desc("With mask-split: keep one loop and apply the masks "
                     "under a branch on the block index "
                     "(tile-mask-split{guard})"),
      llvm::cl::init(false)};
  Option<bool> maskedFirst{
      *this, "masked-first",
      llvm::cl::desc("With mask-split: run the masked blocks before the "
                     "unmasked loop, whose prefetches then need no bounds "
                     "checks (tile-mask-split{masked-first})"),
      llvm::cl::init(false)};
  Option<bool> inBoundsLoads{
      *this, "in-bounds-loads",
      llvm::cl::desc("With mask-split: the unmasked loop's K/V loads check "
                     "no bounds (tile-mask-split{in-bounds-loads})"),
      llvm::cl::init(true)};
  Option<bool> exp2{*this, "exp2",
                    llvm::cl::desc("exp2 with the scale folded into an FMA"),
                    llvm::cl::init(false)};
  Option<int64_t> lazyRescale{
      *this, "lazy-rescale",
      llvm::cl::desc("Lazy rescale threshold in log2 units (0: off)"),
      llvm::cl::init(0)};
  Option<bool> lazyRescaleGuard{
      *this, "lazy-rescale-guard",
      llvm::cl::desc("With lazy-rescale: skip the rescale CTA-wide in the IR "
                     "(tile-lazy-rescale{guard}); off leaves the skip to the "
                     "GPU lowering's per-warp vote"),
      llvm::cl::init(true)};
  Option<bool> heavyFirst{
      *this, "heavy-first",
      llvm::cl::desc("Causal kernels: the query blocks with the most work "
                     "get the first program ids (tile-heavy-first)"),
      llvm::cl::init(false)};
  Option<bool> heavyFirstAllMasks{
      *this, "heavy-first-all-masks",
      llvm::cl::desc("With heavy-first: kernels without a causal mask too, "
                     "their query blocks upwards with the heads innermost "
                     "(tile-heavy-first{all-masks})"),
      llvm::cl::init(false)};
  Option<int64_t> heavyFirstHeads{
      *this, "heavy-first-heads",
      llvm::cl::desc("With heavy-first: heads ordered together (0: all)"),
      llvm::cl::init(0)};
  Option<int64_t> stages{*this, "stages",
                         llvm::cl::desc("K/V blocks in flight (1: none)"),
                         llvm::cl::init(1)};
  Option<bool> refillAfterUse{
      *this, "refill-after-use",
      llvm::cl::desc("With stages > 1: issue each K/V refill right after the "
                     "last read of the block it replaces, so that it reuses "
                     "that block's shared buffer (see tile-prefetch)"),
      llvm::cl::init(false)};
  Option<int64_t> prefetchStreams{
      *this, "prefetch-streams",
      llvm::cl::desc("With stages > 1: pipeline only the first N block loads "
                     "(1: K only, FlashAttention-2's schedule; 0: all)"),
      llvm::cl::init(0)};
  Option<bool> deferPv{
      *this, "defer-pv",
      llvm::cl::desc("Run each block's P.V one iteration later, right after "
                     "the next block's Q.K^T, so that on wgmma the softmax "
                     "overlaps it (FlashAttention-3's intra-warpgroup "
                     "overlap, tile-defer-pv)"),
      llvm::cl::init(false)};
  Option<bool> blockLoads{
      *this, "block-loads",
      llvm::cl::desc("Read a tensor a function reads at every (query, key) "
                     "as a tile.load of the score's block, staged in shared "
                     "memory, instead of a gather in the scores' layout "
                     "(tile-vectorize-apply's block-loads)"),
      llvm::cl::init(false)};
  Option<bool> earlyGathers{
      *this, "early-gathers",
      llvm::cl::desc("Issue each loop's gathers (a score or mask function's "
                     "reads of a tensor at every query and key) before the "
                     "loop body's mmas, so that their loads overlap them "
                     "(tile-early-gathers)"),
      llvm::cl::init(false)};
  Option<bool> earlyMmas{
      *this, "early-mmas",
      llvm::cl::desc("Issue each loop body's products that need no other "
                     "product's result right after its first, so that on "
                     "wgmma they run while the warpgroup computes on the "
                     "first's result (tile-early-mmas)"),
      llvm::cl::init(false)};
  Option<bool> decompose{
      *this, "decompose",
      llvm::cl::desc("Decompose the online softmax at the end"),
      llvm::cl::init(true)};

  /// Every option's value checked, whichever passes the kernel will make
  /// act: an error naming the first bad option and what it takes.
  llvm::Error verify() const;
};

/// From a scheduled, decomposed tile kernel to a gpu.binary holding PTX:
///   tile-to-ptx{chip=sm_80 warps=4}
struct TileToPTXOptions : public mlir::PassPipelineOptions<TileToPTXOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, "
                     "sm_100f, sm_120a or sm_121a"),
      llvm::cl::init("sm_80")};
  Option<std::string> family{
      *this, "family",
      llvm::cl::desc("Matrix-unit family: mma_sync, wgmma or tcgen05 "
                     "(default: the "
                     "chip's fastest that is lowered; see "
                     "tilegpu-attach-target)"),
      llvm::cl::init("")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX version as +ptxNN (default: the chip's, e.g. "
                     "+ptx80; at least that, at most +ptx90)"),
      llvm::cl::init("")};
  Option<int64_t> warps{*this, "warps",
                        llvm::cl::desc("Warps per CTA (they split BLOCK_M)"),
                        llvm::cl::init(4)};
  Option<bool> smemLhs{
      *this, "smem-lhs",
      llvm::cl::desc("Read Q from shared memory at every k-step instead of "
                     "holding it in registers (see tilegpu-assign-layouts)"),
      llvm::cl::init(false)};
  Option<bool> tma{
      *this, "tma",
      llvm::cl::desc("mma_sync family: load what the mma reads from shared "
                     "memory by TMA into 128-byte swizzled panels (see "
                     "tilegpu-assign-layouts; the wgmma family always does)"),
      llvm::cl::init(false)};
  Option<bool> stagedStores{
      *this, "staged-stores",
      llvm::cl::desc("Write the output through shared memory in 16-byte row "
                     "pieces (see convert-tile-to-tilegpu)"),
      llvm::cl::init(true)};
  Option<bool> tmaReduce{
      *this, "tma-reduce",
      llvm::cl::desc("wgmma: add an f32 accumulator into a kernel argument "
                     "(the backward's dQ part) by one TMA reduction from "
                     "shared memory instead of per-element atomics (see "
                     "convert-tile-to-tilegpu)"),
      llvm::cl::init(false)};
  Option<bool> uniformWarpgroup{
      *this, "uniform-warpgroup",
      llvm::cl::desc("wgmma: each product's warpgroup offsets and shared "
                     "descriptors from a warpgroup index broadcast by "
                     "shfl.sync where it is issued, which ptxas keeps in "
                     "uniform registers (see convert-tilegpu-to-nvvm)"),
      llvm::cl::init(false)};
  Option<bool> skipUnitRowScales{
      *this, "skip-unit-row-scales",
      llvm::cl::desc("Skip the rescale of O in warps whose row maxima did "
                     "not move (see convert-tilegpu-to-nvvm)"),
      llvm::cl::init(false)};
  Option<int64_t> exp2PolyEvery{
      *this, "exp2-poly-every",
      llvm::cl::desc("exp2 of every N-th register by a polynomial on the FMA "
                     "units, FlashAttention-4's emulation (0: none; see "
                     "convert-tilegpu-to-nvvm)"),
      llvm::cl::init(0)};
  Option<bool> warpSpecialize{
      *this, "warp-specialize",
      llvm::cl::desc("Hand the TMA refills to a producer warpgroup, paced "
                     "by empty mbarriers (see tilegpu-warp-specialize)"),
      llvm::cl::init(false)};
  Option<bool> pingpong{
      *this, "pingpong",
      llvm::cl::desc("Warpgroups take turns issuing their wgmma products "
                     "(see tilegpu-pingpong)"),
      llvm::cl::init(false)};
  Option<int64_t> ringSlots{
      *this, "ring-slots",
      llvm::cl::desc("With warp-specialize: slots per TMA ring (0: as the "
                     "pipelined loops need; see convert-tile-to-tilegpu)"),
      llvm::cl::init(0)};
  Option<int64_t> producerRegisters{
      *this, "producer-registers",
      llvm::cl::desc("With warp-specialize: the producer's register budget "
                     "per thread (0: the launch's)"),
      llvm::cl::init(0)};
  Option<int64_t> consumerRegisters{
      *this, "consumer-registers",
      llvm::cl::desc("With warp-specialize: the consumers' register budget "
                     "per thread (0: the launch's)"),
      llvm::cl::init(0)};
  Option<bool> pOverS{*this, "p-over-s",
                      llvm::cl::desc("tcgen05: P over the columns of S (see "
                                     "convert-tile-to-tilegpu)"),
                      llvm::cl::init(false)};
  Option<bool> mmaWarp{
      *this, "mma-warp",
      llvm::cl::desc("With warp-specialize, tcgen05: MMA warps, one per Q "
                     "tile, beside the producer's in its warpgroup, whose "
                     "first threads issue the products, handed over by "
                     "ready mbarriers (see convert-tile-to-tilegpu and "
                     "tilegpu-warp-specialize)"),
      llvm::cl::init(false)};
  Option<bool> correction{
      *this, "correction",
      llvm::cl::desc("With mma-warp, tcgen05: correction warps, a warpgroup "
                     "per Q tile, scale O in tensor memory with the row "
                     "factors the softmax hands them through shared memory "
                     "(see convert-tile-to-tilegpu and "
                     "tilegpu-warp-specialize)"),
      llvm::cl::init(false)};
  Option<int64_t> correctionRegisters{
      *this, "correction-registers",
      llvm::cl::desc("With correction: the correction warps' register "
                     "budget per thread (0: the launch's)"),
      llvm::cl::init(0)};
  Option<int64_t> simulateRoles{
      *this, "simulate-roles",
      llvm::cl::desc("tcgen05: run the GPU-level kernel's synchronization "
                     "on the host under this many random schedules of each "
                     "of its corner cases before lowering it, an error on "
                     "a deadlock or hazard (tilegpu-simulate-roles); 0: "
                     "off"),
      llvm::cl::init(0)};
  Option<bool> mergeBarriers{
      *this, "merge-barriers",
      llvm::cl::desc("Merge CTA barriers across waits, moving the waits "
                     "above the earlier barrier (see "
                     "tilegpu-merge-barriers{hoist-waits} and "
                     "convert-tile-to-tilegpu{merge-barriers})"),
      llvm::cl::init(false)};
  Option<bool> shareTransposes{
      *this, "share-transposes",
      llvm::cl::desc("One shared buffer for the transposes of one type "
                     "(convert-tile-to-tilegpu{share-transposes})"),
      llvm::cl::init(false)};
  Option<int> indexBitwidth{
      *this, "index-bitwidth",
      llvm::cl::desc("Bit width of index arithmetic and of the kernel's "
                     "size and stride parameters: 64, or 32 (every element "
                     "offset must then stay below 2^31)"),
      llvm::cl::init(64)};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("LLVM optimization level"),
                       llvm::cl::init(3)};

  /// Every option's value checked, whichever passes the kernel will make
  /// act: the chip and the family among the supported ones, the PTX
  /// version within what the chip needs and LLVM 22 emits, the sizes and
  /// budgets within their ranges. An error naming the first bad option and
  /// what it takes (with the list of chips where the chip is unknown).
  llvm::Error verify() const;
};

/// The PTX version each supported chip needs; empty for an unknown chip.
std::string defaultPTXFeatures(llvm::StringRef chip);

/// The GPU level, one small pass at a time: tilegpu-attach-target ->
/// tilegpu-assign-layouts -> convert-tile-to-tilegpu ->
/// tilegpu-merge-barriers -> tilegpu-resolve-async-waits ->
/// tilegpu-allocate-memory -> [tilegpu-pingpong] -> [tilegpu-warp-specialize]
/// -> convert-tilegpu-to-nvvm -> canonicalize, cse.
void buildTileToGPUPipeline(mlir::OpPassManager &pm,
                            const TileToPTXOptions &options);
/// Upstream's gpu-lower-to-nvvm-pipeline up to the NVVM/LLVM dialects in
/// the gpu.module, with the target attached: every pass told the index
/// width, kernels lowered with the bare-pointer calling convention (the
/// kernel ABI: one parameter per `#tilegpu.param`).
void buildGPUToNVVMPipeline(mlir::OpPassManager &pm,
                            const TileToPTXOptions &options);
/// gpu-module-to-binary (format isa: PTX) and the host-side clean-up; for
/// a family target (sm_100f), tilegpu-retarget-family first.
void buildNVVMToPTXPipeline(mlir::OpPassManager &pm,
                            const TileToPTXOptions &options);
/// Both of the above.
void buildGPUToPTXPipeline(mlir::OpPassManager &pm,
                           const TileToPTXOptions &options);
/// Both of the above.
void buildTileToPTXPipeline(mlir::OpPassManager &pm,
                            const TileToPTXOptions &options);

/// vectorize apply -> retile -> fold score terms -> mask split -> exp2 ->
/// lazy rescale -> heavy-first -> hoist -> prefetch -> defer P.V -> early
/// gathers -> decompose, then CSE: vectorize apply, fold score terms and
/// hoist always, each other step only where its knob asks for it.
void buildTileSchedulePipeline(mlir::OpPassManager &pm,
                               const TileScheduleOptions &options);

/// The tile-schedule options the backward pass's schedule reads (and a
/// backward configuration of the library spec may set): exp2, its loops'
/// prefetch and the order of their products.
inline constexpr llvm::StringLiteral kTileBackwardScheduleOptions[] = {
    "exp2", "stages", "refill-after-use", "prefetch-streams", "early-mmas"};

/// The backward pass's schedule (tile-generate-sdpa-backward's kernels):
/// tile-exp2 with exp2 (the probabilities' exp(scale s - lse) as one FMA
/// and an exp2), tile-prefetch with kTileBackwardScheduleOptions (the loops
/// over query blocks stream Q and dO, the dq kernel's K and V; nothing with
/// stages = 1), then tile-early-mmas with early-mmas. The other steps
/// transform the forward's online softmax.
void buildTileBackwardSchedulePipeline(mlir::OpPassManager &pm,
                                       const TileScheduleOptions &options);

/// The process-wide set-up for lowering to PTX, done once by a tool's main
/// before it builds a pipeline: CUDA_HOME (where libdevice is) when the
/// environment names no toolkit, and the NVPTX backend's 32-bit shared
/// pointers (a global LLVM option).
void initializeNVPTXToolchain();

/// Everything a tool needs to parse tile IR and take it to PTX: our
/// dialects, the upstream dialects and interfaces the pipelines load, the
/// LLVM IR translations and the NVVM target.
void registerTiledAttnDialects(mlir::DialectRegistry &registry);

/// Registers `tile-schedule` and `tile-to-ptx` with the pass registry.
void registerTilePipelines();

} // namespace tiled_attn

#endif // TILED_ATTN_PIPELINES_PIPELINES_H
