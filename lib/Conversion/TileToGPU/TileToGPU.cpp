//===- TileToGPU.cpp - The convert-tile-to-gpu pass -----------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileToGPU/TileToGPU.h"
#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

namespace tiled_attn {
#define GEN_PASS_DEF_CONVERTTILETOGPUPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

namespace {

/// The warps of a kernel's layouts; fails when a tile has none.
FailureOr<int64_t> kernelWarps(func::FuncOp func) {
  int64_t warps = 0;
  WalkResult walk = func.walk([&](Operation *op) {
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        continue;
      auto layout = dyn_cast_or_null<LayoutAttr>(tensor.getEncoding());
      if (!layout) {
        op->emitError() << "convert-tile-to-gpu: " << tensor
                        << " has no layout; run tile-assign-layouts first";
        return WalkResult::interrupt();
      }
      warps = layout.getWarps();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (warps == 0)
    return func.emitError() << "convert-tile-to-gpu: '" << func.getName()
                            << "' has no tiles; nothing tells its launch "
                               "shape";
  if (func.getNumResults() != 0)
    return func.emitError() << "convert-tile-to-gpu: a kernel returns "
                               "nothing, '"
                            << func.getName() << "' returns "
                            << func.getNumResults() << " values";
  return warps;
}

/// Whether `type` is a tile that lives in shared memory.
bool isSharedTile(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto layout =
      tensor ? dyn_cast_or_null<LayoutAttr>(tensor.getEncoding()) : nullptr;
  return layout && layout.getKind() == LayoutKind::Shared;
}

/// Gives each load its shared buffer (bytes from the start of dynamic shared
/// memory) and returns the total. Loads of the same view and block shape
/// form a stream with a ring of `stages` buffers; block b of the stream goes
/// to buffer b mod stages, which keeps the blocks a pipelined loop has in
/// flight apart. Loads of a stream in different blocks (the loops of a
/// mask split) run one after the other and share the ring; each load waits
/// for the CTA before it overwrites a buffer.
int64_t assignSharedBuffers(func::FuncOp func, int64_t stages) {
  struct Stream {
    Value view;
    SmallVector<int64_t> shape;
    int64_t offset;
    SmallVector<Block *> users;
  };
  SmallVector<Stream> streams;
  int64_t total = 0;
  // The views a loop streams blocks of (K and V). Their shared loads form
  // rings, and may repeat in a block when a loop is pipelined (prologue and
  // steady state); a load of any other view (Q) is alone.
  llvm::SmallPtrSet<Value, 4> streamed;
  func.walk([&](LoadOp load) {
    if (load->getParentOfType<scf::ForOp>())
      streamed.insert(load.getView());
  });
  func.walk([&](LoadOp load) {
    SmallVector<int64_t> block = load.getBlockShape();
    bool ring =
        isSharedTile(load.getType()) && streamed.contains(load.getView());
    Stream *shared = nullptr;
    for (Stream &stream : streams)
      if (stream.view == load.getView() && stream.shape == block &&
          (ring || !llvm::is_contained(stream.users, load->getBlock())))
        shared = &stream;
    int64_t bytes = llvm::alignTo(
        getSharedBufferType(block[0], block[1], load.getType().getElementType())
                .getNumElements() *
            load.getType().getElementTypeBitWidth() / 8,
        128);
    if (!shared) {
      streams.push_back({load.getView(), block, total, {}});
      shared = &streams.back();
      total += bytes * (ring ? stages : 1);
    }
    shared->users.push_back(load->getBlock());
    Builder b(func.getContext());
    load->setAttr("tile.smem_offset", b.getIndexAttr(shared->offset));
    if (ring)
      load->setAttr("tile.smem_ring", b.getDenseI64ArrayAttr({stages, bytes}));
  });
  return total;
}

/// Gives each store of a 16-bit accumulator tile a staging buffer in shared
/// memory (see StoreToGPU), and returns the bytes it needs. The buffer starts
/// at offset 0, over the loads' buffers (`loadBytes` of them), unless a tile
/// that lives in shared memory is still read after the store; then it goes
/// after them.
int64_t assignStagingBuffers(func::FuncOp func, int64_t loadBytes) {
  int64_t total = 0;
  auto isShared = [](Value v) { return isSharedTile(v.getType()); };
  func.walk([&](StoreOp store) {
    auto type = cast<RankedTensorType>(store.getValue().getType());
    if (!canStageStore(type))
      return;
    bool sharedLive = false;
    Block *block = store->getBlock();
    func.walk([&](Operation *op) {
      Operation *user = block->findAncestorOpInBlock(*op);
      if (user && store->isBeforeInBlock(user) &&
          llvm::any_of(op->getOperands(), isShared))
        sharedLive = true;
    });
    int64_t offset = sharedLive ? loadBytes : 0;
    int64_t bytes = getSharedBufferType(type.getDimSize(0), type.getDimSize(1),
                                        type.getElementType())
                        .getNumElements() *
                    2;
    store->setAttr("tile.smem_offset",
                   Builder(func.getContext()).getIndexAttr(offset));
    total = std::max(total, offset + bytes);
  });
  return total;
}

/// For an mma whose shared operand a pipelined loop carries, the number of
/// cp.async groups that may stay in flight when it reads the operand: the
/// loads of its block issued after it, the blocks in between, and the loads
/// of this iteration issued before the mma.
void annotatePipelinedWaits(func::FuncOp func, int64_t stages) {
  func.walk([&](MmaOp mma) {
    auto arg = dyn_cast<BlockArgument>(mma.getRhs());
    auto loop =
        arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : nullptr;
    if (!loop || mma->getBlock() != loop.getBody())
      return;
    // The shared loads of one iteration, in issue order.
    SmallVector<LoadOp> issued;
    for (LoadOp load : loop.getBody()->getOps<LoadOp>())
      if (load->hasAttr("tile.smem_ring"))
        issued.push_back(load);
    // This operand's stream: the load whose block the loop yields into the
    // oldest slot of this operand's chain.
    Value yielded = loop.getYieldedValues()[arg.getArgNumber() - 1];
    while (auto chained = dyn_cast<BlockArgument>(yielded))
      yielded = loop.getYieldedValues()[chained.getArgNumber() - 1];
    auto it = llvm::find_if(issued,
                            [&](LoadOp l) { return l.getResult() == yielded; });
    if (it == issued.end())
      return;
    int64_t perIteration = issued.size();
    int64_t position = it - issued.begin();
    int64_t before = llvm::count_if(
        issued, [&](LoadOp l) { return l->isBeforeInBlock(mma); });
    int64_t inFlight =
        (perIteration - 1 - position) + (stages - 2) * perIteration + before;
    mma->setAttr("tile.wait_groups",
                 Builder(func.getContext()).getI64IntegerAttr(inFlight));
  });
}

/// A pipelined loop whose blocks in flight nothing takes over (the results
/// that carry shared tiles are unused) ends with their copies still in
/// flight. When a load follows, which may reuse those buffers, every thread
/// first waits for its copies (each thread copies the same pieces of a
/// stream's buffer in every load).
void drainUnusedPrefetches(func::FuncOp func) {
  func.walk([&](scf::ForOp loop) {
    bool inFlight = llvm::any_of(loop.getResults(), [&](OpResult r) {
      return isSharedTile(r.getType()) && r.use_empty();
    });
    if (!inFlight)
      return;
    bool loadFollows = false;
    for (Operation *op = loop->getNextNode(); op && !loadFollows;
         op = op->getNextNode())
      loadFollows = op->walk([](LoadOp) {
                        return WalkResult::interrupt();
                      }).wasInterrupted();
    if (!loadFollows)
      return;
    OpBuilder b(loop->getContext());
    b.setInsertionPointAfter(loop);
    NVVM::CpAsyncWaitGroupOp::create(b, loop.getLoc(), 0);
  });
}

struct ReturnToGPU final : OpConversionPattern<func::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(func::ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op);
    return success();
  }
};

struct ConvertTileToGPUPass final
    : tiled_attn::impl::ConvertTileToGPUPassBase<ConvertTileToGPUPass> {
  using Base::Base;
  void runOnOperation() override;
};

void ConvertTileToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  TileToGPUTypeConverter converter;
  SmallVector<func::FuncOp> kernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      kernels.push_back(func);
  if (kernels.empty())
    return;

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "tiled_attn");
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());

  for (func::FuncOp func : kernels) {
    FailureOr<int64_t> warps = kernelWarps(func);
    if (failed(warps))
      return signalPassFailure();
    // A stream keeps `stages` blocks in shared memory; one fewer when each
    // refill comes after the last read of the block it replaces and may take
    // its buffer.
    int64_t stages = 1, slots = 1;
    if (auto sdpa =
            func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName())) {
      stages = sdpa.getStages();
      slots = stages - (sdpa.getRefillAfterUse() ? 1 : 0);
    }
    int64_t sharedBytes = assignSharedBuffers(func, slots);
    if (stagedStores)
      sharedBytes =
          std::max(sharedBytes, assignStagingBuffers(func, sharedBytes));
    annotatePipelinedWaits(func, stages);
    drainUnusedPrefetches(func);

    SmallVector<Type> inputs;
    if (failed(converter.convertTypes(func.getArgumentTypes(), inputs)))
      return signalPassFailure();
    b.setInsertionPointToEnd(gpuModule.getBody());
    auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                         b.getFunctionType(inputs, {}));
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    kernel.setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({static_cast<int32_t>(32 * *warps), 1, 1}));
    kernel->setAttr(TileDialect::getSharedBytesAttrName(),
                    b.getI64IntegerAttr(sharedBytes));
    if (Attribute sdpa = func->getAttr(TileDialect::getSdpaAttrName()))
      kernel->setAttr(TileDialect::getSdpaAttrName(), sdpa);

    // Move the body over and retype its arguments (views become memrefs).
    kernel.getBody().front().erase();
    kernel.getBody().takeBody(func.getBody());
    for (auto [arg, type] : llvm::zip_equal(kernel.getArguments(), inputs))
      arg.setType(type);
    func.erase();
  }

  RewritePatternSet patterns(ctx);
  populateTileMemoryToGPUPatterns(converter, patterns);
  populateTileMmaToGPUPatterns(converter, patterns);
  populateTileReduceToGPUPatterns(converter, patterns);
  populateTileElementwiseToGPUPatterns(converter, patterns, skipUnitRowScales);
  patterns.add<ReturnToGPU>(converter, ctx);
  ConversionTarget target(*ctx);
  target.addIllegalDialect<TileDialect>();
  target.addIllegalOp<func::ReturnOp>();
  target.addLegalOp<gpu::GPUModuleOp, gpu::GPUFuncOp>();
  target.markUnknownOpDynamicallyLegal(
      [&](Operation *op) { return converter.isLegal(op); });
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
    return signalPassFailure();
  // The shared buffer offsets served the conversion only.
  gpuModule.walk([](Operation *op) {
    op->removeAttr("tile.smem_offset");
    op->removeAttr("tile.smem_ring");
  });

  // The mma.sync operands are 2-D vectors (vector<4x2xf16>); lower the shape
  // casts to and from the 1-D register vectors into element moves, which
  // the LLVM lowering of the vector dialect handles.
  RewritePatternSet castPatterns(ctx);
  vector::populateVectorShapeCastLoweringPatterns(castPatterns);
  vector::populateVectorInsertExtractStridedSliceTransforms(castPatterns);
  if (failed(applyPatternsGreedily(gpuModule, std::move(castPatterns))))
    return signalPassFailure();
}

} // namespace
